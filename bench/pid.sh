#!/usr/bin/env bash
# --pid on a process of N threads (issue 33 item 12: the time grew with the
# square of the thread count): `pinrun --pid P --cpus C` against
# `taskset -a -p -c C P` on the same process, alternating C between the
# first and last online CPU, median of 5 runs each, for N = 1000, 5000 and
# 10000 threads. Usage: bench/pid.sh [PINRUN]
set -euo pipefail
cd "$(dirname "$0")/.."
PINRUN=${1:-${CARGO_TARGET_DIR:-target}/$(rustc -vV | sed -n "s/^host: //p")/release/pinrun}
[ -x "$PINRUN" ] || { echo "pid.sh: no pinrun at $PINRUN (cargo build --release)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
pids=()
gcc -O2 -pthread bench/pid_threads.c -o "$tmp/pid_threads"
first=$(cut -d, -f1 /sys/devices/system/cpu/online | cut -d- -f1)
last=$(tr ',' '\n' < /sys/devices/system/cpu/online | tail -1 | sed 's/.*-//')
ms() { # median ms of 5 runs of "$@" with the CPU alternating
  for i in 1 2 3 4 5; do
    c=$([ $((i % 2)) = 0 ] && echo "$first" || echo "$last")
    s=$(date +%s%N); "$@" "$c" >/dev/null 2>&1 || echo "pid.sh: failed: $*" >&2; e=$(date +%s%N)
    echo $(((e - s) / 1000000))
  done | sort -n | sed -n 3p
}
pin() { "$PINRUN" --quiet --pid "$P" --cpus "$1"; }
tas() { taskset -a -p -c "$1" "$P"; }
printf '%8s %12s %12s %8s\n' threads pinrun_ms taskset_ms ratio
for n in 1000 5000 10000; do
  "$tmp/pid_threads" "$n" > "$tmp/out" & P=$!; pids+=("$P")
  while ! grep -q ready "$tmp/out" 2>/dev/null; do sleep 0.1; done
  a=$(ms pin); b=$(ms tas)
  printf '%8s %12s %12s %8s\n' "$n" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b ? a / b : 0) }')"
  kill "$P"; wait "$P" 2>/dev/null || true
done
