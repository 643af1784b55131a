#!/usr/bin/env bash
# --thread-map: time from a thread's creation (it names itself at once) to
# the moment it sees itself pinned, for both watcher mechanisms (perf events;
# polling, PINRUN_THREAD_WATCH=poll), idle and with every CPU of the plan
# busy (issue 22). Usage: bench/threads.sh [PINRUN] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
PINRUN=${1:-${CARGO_TARGET_DIR:-target}/$(rustc -vV | sed -n "s/^host: //p")/release/pinrun}
N=${2:-400}
[ -x "$PINRUN" ] || { echo "threads.sh: no pinrun at $PINRUN (cargo build --release)" >&2; exit 1; }
bin=$(mktemp -d)/thread_pin_latency
gcc -O2 -pthread bench/thread_pin_latency.c -o "$bin"
run() {
  for w in perf poll; do
    echo -n "$1 $w: "
    PINRUN_THREAD_WATCH=$w "$PINRUN" --cpus 0-1 --thread-map 'b*=@0' -- "$bin" "$N"
  done
}
run idle
hogs=()
for c in 0 1; do taskset -c "$c" sh -c 'while :; do :; done' & hogs+=($!); done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
run loaded
