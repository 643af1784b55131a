#!/usr/bin/env bash
# The numbers the README gives about building and testing, measured on this
# machine from a fresh clone of HEAD (issue 37: README numbers come from a
# script, not from memory): the build of the tests, then `cargo test`, each
# in seconds, with the load average before each. Prints one line per number;
# paste them into README.md "Install and test" when they change. Takes as
# long as it measures (8-15 minutes on a 2-CPU machine); changes nothing
# outside a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-local "$PWD" "$tmp/pinrun"
cd "$tmp/pinrun"
export CARGO_TARGET_DIR="$tmp/target"
load() { cut -d' ' -f1 /proc/loadavg; }
l=$(load); s=$(date +%s)
cargo test --no-run -q >/dev/null 2>&1
echo "build of the tests: $(($(date +%s) - s)) s (load $l, $(nproc) CPUs)"
l=$(load); s=$(date +%s)
cargo test -q >/dev/null 2>&1
echo "cargo test after the build: $(($(date +%s) - s)) s (load $l, $(nproc) CPUs)"
echo "machine dumps: $(find tests/data/machines -name '*.tar.gz' ! -name '_*' | wc -l) machines in $(find tests/data/machines -name '*.tar.gz' | wc -l) archives"
