#!/usr/bin/env bash
# Launch overhead: pinrun against taskset and the numactl+chrt+taskset chain,
# measured side by side in ONE hyperfine run (issue 8). Needs root for
# SCHED_FIFO. Usage: bench/launch.sh [PINRUN] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
PINRUN=${1:-${CARGO_TARGET_DIR:-target}/$(rustc -vV | sed -n "s/^host: //p")/release/pinrun}
OUT=${2:-bench/out}
mkdir -p "$OUT"
[ -x "$PINRUN" ] || { echo "launch.sh: no pinrun at $PINRUN (cargo build --release)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "launch.sh: apt-get install hyperfine" >&2; exit 1; }
# The chain: as much of numactl/chrt/taskset as this machine has.
chain="taskset -c 1 /bin/true"
command -v chrt >/dev/null && chain="chrt -f 10 $chain"
command -v numactl >/dev/null && chain="numactl -N 0 -m 0 $chain"
# Optionally the same two pinrun rows for a static build (PINRUN_STATIC).
static=()
if [ -n "${PINRUN_STATIC:-}" ] && [ -x "$PINRUN_STATIC" ]; then
  static=(-n 'pinrun --cpus (static)' "$PINRUN_STATIC --cpus 1 -- /bin/true"
          -n 'pinrun full (static)' "$PINRUN_STATIC --node 0 --cores 1 --fifo 10 --membind -- /bin/true")
fi
# Optionally an earlier build (PINRUN_BEFORE, e.g. the commit before this
# work) in the same run, for before/after ratios.
before=()
if [ -n "${PINRUN_BEFORE:-}" ] && [ -x "$PINRUN_BEFORE" ]; then
  before=(-n 'pinrun --cpus (before)' "$PINRUN_BEFORE --cpus 1 -- /bin/true"
          -n 'pinrun full (before)' "$PINRUN_BEFORE --node 0 --cores 1 --fifo 10 --membind -- /bin/true")
fi
hyperfine -N --warmup "${WARMUP:-100}" --runs "${RUNS:-2000}" \
  --export-json "$OUT/launch.json" --export-markdown "$OUT/launch.md" \
  -n true '/bin/true' \
  -n taskset 'taskset -c 1 /bin/true' \
  -n chain "$chain" \
  -n 'pinrun --version' "$PINRUN --version" \
  -n 'pinrun --cpus --quiet' "$PINRUN --cpus 1 --quiet -- /bin/true" \
  -n 'pinrun --cpus' "$PINRUN --cpus 1 -- /bin/true" \
  -n 'pinrun full' "$PINRUN --node 0 --cores 1 --fifo 10 --membind -- /bin/true" \
  "${static[@]}" "${before[@]}" >"$OUT/launch.log"
# Means and ratios to taskset and to the chain.
jq -r '
  (.results | map({key: .command, value: .mean}) | from_entries) as $m
  | (.results | map({key: .command, value: .median}) | from_entries) as $md
  | (.results | map({key: .command, value: .min}) | from_entries) as $mn
  | (.results | map({key: .command, value: (.user + .system)}) | from_entries) as $cpu
  | "| command | mean (µs) | ± σ (µs) | median (µs) | min (µs) | CPU user+sys (µs) | mean / taskset | mean / chain | median / taskset | min / taskset | min / chain | CPU / taskset |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    (.results[] | "| \(.command) | \(.mean*1e6|floor) | \(.stddev*1e6|floor) | \(.median*1e6|floor) | \(.min*1e6|floor) | \((.user+.system)*1e6|floor) | \((.mean/$m.taskset*100|round)/100) | \((.mean/$m.chain*100|round)/100) | \((.median/$md.taskset*100|round)/100) | \((.min/$mn.taskset*100|round)/100) | \((.min/$mn.chain*100|round)/100) | \(((.user+.system)/$cpu.taskset*100|round)/100) |")
' "$OUT/launch.json" | tee "$OUT/launch-table.md"
echo "chain = $chain" | tee -a "$OUT/launch-table.md"
# Where the time goes: syscalls and files opened per launch (strace -f,
# the exec'd /bin/true included), and page faults (perf, when it works).
if command -v strace >/dev/null; then
  {
    echo
    echo "| command | syscalls | files opened | page faults |"
    echo "|---|---:|---:|---:|"
    counts() { # label command...
      local label=$1; shift
      local sc op pf
      sc=$(strace -f -c -o "$OUT/strace.tmp" "$@" >/dev/null 2>&1; awk '/ total$/ {print $4}' "$OUT/strace.tmp")
      op=$(strace -f -e trace=openat -o "$OUT/strace.tmp" "$@" >/dev/null 2>&1; grep -c 'openat(' "$OUT/strace.tmp")
      pf=$(perf stat -x, -e page-faults "$@" 2>&1 >/dev/null | awk -F, '/page-faults/ {print $1}' || true)
      echo "| $label | $sc | $op | ${pf:--} |"
    }
    counts true /bin/true
    counts taskset taskset -c 1 /bin/true
    # shellcheck disable=SC2086
    counts chain $chain
    counts 'pinrun --version' "$PINRUN" --version
    counts 'pinrun --cpus --quiet' "$PINRUN" --cpus 1 --quiet -- /bin/true
    counts 'pinrun --cpus' "$PINRUN" --cpus 1 -- /bin/true
    counts 'pinrun full' "$PINRUN" --node 0 --cores 1 --fifo 10 --membind -- /bin/true
    if [ ${#static[@]} -gt 0 ]; then
      counts 'pinrun --cpus (static)' "$PINRUN_STATIC" --cpus 1 -- /bin/true
      counts 'pinrun full (static)' "$PINRUN_STATIC" --node 0 --cores 1 --fifo 10 --membind -- /bin/true
    fi
    if [ ${#before[@]} -gt 0 ]; then
      counts 'pinrun --cpus (before)' "$PINRUN_BEFORE" --cpus 1 -- /bin/true
      counts 'pinrun full (before)' "$PINRUN_BEFORE" --node 0 --cores 1 --fifo 10 --membind -- /bin/true
    fi
    rm -f "$OUT/strace.tmp"
  } | tee -a "$OUT/launch-table.md"
fi
