#!/usr/bin/env bash
# Writes link/hot-functions.txt: the functions pinrun executes in its usual
# runs, as the linker names them (mangled), one per line, sorted. build.rs
# hands the file to LLD (--symbol-ordering-file), which lays these out first
# in .text (issue 17, BENCHMARKS.md "Round 6"). Rerun after a change that
# adds or renames much of what a launch runs, a toolchain update (the
# standard library's names carry the compiler's hashes) or a dependency
# update (a crate's version or features change its names' hashes); a stale
# file only costs speed: names the build lacks are skipped.
#
# Needs valgrind (callgrind). The runs: launches (profiled up to their
# execve(2): --dump-before), dry runs, --check, --show, --json, and a dump's
# --check and dry run.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "hot-functions: needs valgrind" >&2; exit 1; }
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/$(rustc -vV | sed -n 's/^host: //p')/release/pinrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dump=tests/data/machines/hwloc/32amd64-4s2n4c-cgroup2.tar.gz
# sed -n 1p, not head -1: it reads the whole list (sort is not killed by
# SIGPIPE, exit 141 under pipefail).
[ -f "$dump" ] || dump=$(find tests/data/machines -name '*.tar.gz' ! -name '_*' | sort | sed -n 1p)
runs=(
  "--cpus 1 --quiet -- true"
  "--cpus 0 -- true"
  "--node 0 --cores 1 --fifo 10 --membind -- true"
  "--cpus 1 --dry-run -- true"
  "--node 0 --cores 1 --fifo 10 --membind --dry-run -- true"
  "--node 0 --cores 1 --dry-run --json -- true"
  "--check"
  "--check --cpus 0"
  "--show"
  "--sysroot $dump --check"
  "--sysroot $dump --node 0 --cores 2 --dry-run -- true"
)
i=0
for r in "${runs[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086 # each run is a list of words
  valgrind -q --tool=callgrind --demangle=no --dump-before=execve \
    --callgrind-out-file="$tmp/cg.$i" \
    "$bin" $r >/dev/null 2>&1 || true
done
mkdir -p link
cat "$tmp"/cg.* |
  sed -nE 's/^c?fn=\([0-9]+\) (.*)$/\1/p' |
  sed -E "s/'[0-9]+$//" |
  grep -vE '^(0x[0-9a-f]+|\(below main\))$' |
  LC_ALL=C sort -u >link/hot-functions.txt
echo "hot-functions: $(wc -l <link/hot-functions.txt) functions from ${#runs[@]} runs" >&2
