#!/usr/bin/env bash
# Issue 15: memory and time of `--show --json` and `--check` at 2048, 4096
# and 8192 CPUs (peak RSS from /usr/bin/time), and the hostile inputs of
# the issue (a 64 KB cpulist, an empty cpu4294967295 directory, a 100 MB
# /proc/interrupts). Usage:
#   bench/hostile.sh [PINRUN] [BEFORE_PINRUN] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
T=${CARGO_TARGET_DIR:-target}/$(rustc -vV | sed -n "s/^host: //p")
NEW=${1:-$T/release/pinrun}
OLD=${2:-}
OUT=${3:-bench/out/hostile}
mkdir -p "$OUT"
for n in 2048 4096 8192; do
  [ -d "$OUT/c$n" ] || python3 bench/gen_sysroot.py --cpus "$n" --nodes 4 --irqs 100 --smt on "$OUT/c$n"
done
measure() { # label binary args...
  local label=$1 bin=$2; shift 2
  /usr/bin/time -f "%M %e" -o "$OUT/time.txt" "$bin" "$@" >"$OUT/out.txt" 2>/dev/null || true
  read -r rss secs < <(tail -1 "$OUT/time.txt")
  printf '%-8s %-44s %10s KB %7s s %11s B\n' "$label" "$*" "$rss" "$secs" "$(wc -c <"$OUT/out.txt")"
}
for bin in "$OLD" "$NEW"; do
  [ -n "$bin" ] || continue
  label=$([ "$bin" = "$NEW" ] && echo now || echo before)
  for n in 2048 4096 8192; do
    for args in "--show --json" "--check" "--check --node 0 --cores 2"; do
      # shellcheck disable=SC2086
      measure "$label" "$bin" --sysroot "$OUT/c$n" $args
    done
  done
  rm -rf "$OUT/damaged"
  if [ -n "${PINRUN_FIXTURES:-}" ]; then
    cp -r "$PINRUN_FIXTURES/util-linux/ppc64-POWER7" "$OUT/damaged"
  else
    tar -xzf tests/data/machines/util-linux/ppc64-POWER7.tar.gz -C "$OUT" && mv "$OUT/ppc64-POWER7" "$OUT/damaged"
  fi
  mkdir "$OUT/damaged/sys/devices/system/cpu/cpu4294967295"
  measure "$label" "$bin" --sysroot "$OUT/damaged" --dry-run --cores 1
  python3 - "$OUT/damaged/proc/interrupts" <<'PY'
import sys
cols = 16
with open(sys.argv[1], "w") as f:
    f.write(" ".join(f"CPU{i}" for i in range(cols)) + "\n")
    row, n, i = " ".join(["1"] * cols), 0, 0
    while n < 100 << 20:
        line = f" {i}: {row} PCI-MSI x\n"
        f.write(line); n += len(line); i += 1
PY
  measure "$label" timeout 150 "$bin" --sysroot "$OUT/damaged" --check --cores 1
done
cargo run -q --release --example parse_cost -- 3
