#!/usr/bin/env bash
# Scaling: read + plan + check on synthetic machine dumps (1 to 4096 CPUs,
# 1 to 16 nodes, 100 to 10 000 IRQs, SMT on/off) and on the largest real
# dumps, timed as whole processes in ONE hyperfine run, plus the in-process
# planner benchmark (examples/plan_bench.rs). Usage:
#   bench/scale.sh [PINRUN] [PLAN_BENCH] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
T=${CARGO_TARGET_DIR:-target}/$(rustc -vV | sed -n "s/^host: //p")
PINRUN=${1:-$T/release/pinrun}
PLAN_BENCH=${2:-$T/release/examples/plan_bench}
OUT=${3:-bench/out}
# The synthetic dumps (~5 GB) are generated once and reused; the stamp
# includes the generator's hash, so a changed generator regenerates them.
SR=${SYSROOTS:-$OUT/sysroots}
GEN_HASH=$(sha256sum bench/gen_sysroot.py | cut -c1-12)
mkdir -p "$SR"
# name cpus nodes irqs smt
TREES="
c1-n1-i100-nosmt 1 1 100 off
c64-n4-i1000-smt 64 4 1000 on
c64-n4-i1000-nosmt 64 4 1000 off
c512-n4-i1000-smt 512 4 1000 on
c512-n16-i1000-nosmt 512 16 1000 off
c4096-n1-i1000-smt 4096 1 1000 on
c4096-n4-i1000-smt 4096 4 1000 on
c4096-n16-i100-smt 4096 16 100 on
c4096-n16-i1000-smt 4096 16 1000 on
c4096-n16-i10000-smt 4096 16 10000 on
c4096-n16-i10000-nosmt 4096 16 10000 off
"
while read -r name cpus nodes irqs smt; do
  [ -n "$name" ] || continue
  stamp="$SR/$name/.params"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$cpus $nodes $irqs $smt $GEN_HASH" ]; then
    rm -rf "${SR:?}/$name"
    python3 bench/gen_sysroot.py --cpus "$cpus" --nodes "$nodes" --irqs "$irqs" --smt "$smt" "$SR/$name"
    echo "$cpus $nodes $irqs $smt $GEN_HASH" >"$stamp"
  fi
done <<<"$TREES"
REAL="util-linux-historical/ia64-512cpus nto/bare-metal-master.internal"
# The real dumps: $PINRUN_FIXTURES/<source>/<machine>, else unpacked from
# the repository's archives (tests/data/machines) into $OUT/machines.
if [ -n "${PINRUN_FIXTURES:-}" ]; then
  FIX=$PINRUN_FIXTURES
else
  FIX=$OUT/machines
  for r in $REAL; do
    rm -rf "${FIX:?}/$r"
    mkdir -p "$FIX/${r%/*}"
    tar -xzf "tests/data/machines/$r.tar.gz" -C "$FIX/${r%/*}"
  done
fi
# The biggest tree as an old kernel (or a dump) shows it: the same files,
# without /sys/kernel/irq, so IRQs come from the 451 MB /proc/interrupts.
OLD=$SR/c4096-n16-i10000-smt-procirq
rm -rf "$OLD"
mkdir -p "$OLD/sys"
ln -s ../c4096-n16-i10000-smt/proc "$OLD/proc"
ln -s ../../c4096-n16-i10000-smt/sys/devices "$OLD/sys/devices"

# One hyperfine run: every tree, --dry-run --cores 1; the biggest tree also
# with the scoped placements --node 0 --cores 1 and --cpus 1.
args=()
while read -r name _; do
  [ -n "$name" ] || continue
  args+=(-n "$name --cores 1" "$PINRUN --sysroot $SR/$name --dry-run --cores 1")
done <<<"$TREES"
BIG=$SR/c4096-n16-i10000-smt
args+=(-n "c4096-n16-i10000-smt --node 0 --cores 1" "$PINRUN --sysroot $BIG --dry-run --node 0 --cores 1")
args+=(-n "c4096-n16-i10000-smt --cpus 1" "$PINRUN --sysroot $BIG --dry-run --cpus 1")
args+=(-n "c4096-n16-i10000-smt --cpus 3000" "$PINRUN --sysroot $BIG --dry-run --cpus 3000")
args+=(-n "c4096-n16-i10000-smt-procirq --cpus 1" "$PINRUN --sysroot $OLD --dry-run --cpus 1")
for r in $REAL; do
  args+=(-n "$r --cores 1" "$PINRUN --sysroot $FIX/$r --dry-run --cores 1")
  args+=(-n "$r --cpus 1" "$PINRUN --sysroot $FIX/$r --dry-run --cpus 1")
done
hyperfine -N --warmup 3 --min-runs "${MIN_RUNS:-10}" --export-json "$OUT/scale.json" "${args[@]}" >"$OUT/scale.log"

# Files opened (strace) and the in-process planner, per row.
opens() { strace -f -e trace=openat -o "$OUT/strace.tmp" "$@" >/dev/null 2>&1; grep -c 'openat(' "$OUT/strace.tmp"; }
{
  echo "| dump | options | CPUs | nodes | IRQs | SMT | mean (ms) | min (ms) | files opened | in-process read (ms) | plan+check (µs) |"
  echo "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"
  row() { # label dump options cpus nodes irqs smt
    local label=$1 dump=$2 opts=$3
    local m
    m=$(jq -r --arg c "$label" '.results[] | select(.command == $c) | "\(.mean*1000*100|round/100) | \(.min*1000*100|round/100)"' "$OUT/scale.json")
    local o; o=$(opens "$PINRUN" --sysroot "$dump" --dry-run $opts)
    local pb; pb=$("$PLAN_BENCH" "$dump" "${PLAN_ITERS:-200}" $opts)
    local pc rd
    pc=$(awk '{printf "%.1f", $2/1000}' <<<"$pb")
    rd=$(awk '{printf "%.2f", $5/1e6}' <<<"$pb")
    echo "| ${dump##*/} | \`$opts\` | $4 | $5 | $6 | $7 | $m | $o | $rd | $pc |"
  }
  while read -r name cpus nodes irqs smt; do
    [ -n "$name" ] || continue
    row "$name --cores 1" "$SR/$name" "--cores 1" "$cpus" "$nodes" "$irqs" "$smt"
  done <<<"$TREES"
  row "c4096-n16-i10000-smt --node 0 --cores 1" "$BIG" "--node 0 --cores 1" 4096 16 10000 on
  row "c4096-n16-i10000-smt --cpus 1" "$BIG" "--cpus 1" 4096 16 10000 on
  row "c4096-n16-i10000-smt --cpus 3000" "$BIG" "--cpus 3000" 4096 16 10000 on
  row "c4096-n16-i10000-smt-procirq --cpus 1" "$OLD" "--cpus 1" 4096 16 10000 on
  for r in $REAL; do
    d=$FIX/$r
    ncpu=$(ls "$d/sys/devices/system/cpu" | grep -c '^cpu[0-9]')
    nnode=$(ls "$d/sys/devices/system/node" 2>/dev/null | grep -c '^node[0-9]' || true)
    nirq=$( (grep -cE '^ *[0-9]+:' "$d/proc/interrupts" 2>/dev/null) || echo 0)
    row "$r --cores 1" "$d" "--cores 1" "$ncpu" "$nnode" "$nirq" "(dump)"
    row "$r --cpus 1" "$d" "--cpus 1" "$ncpu" "$nnode" "$nirq" "(dump)"
  done
} | tee "$OUT/scale-table.md"
rm -f "$OUT/strace.tmp"
# The floor: one small file through pinrun's reader (examples/read_cost.rs).
READ_COST=$(dirname "$PLAN_BENCH")/read_cost
if [ -x "$READ_COST" ]; then
  "$READ_COST" 20000 "$BIG" proc/irq/1/effective_affinity_list | tee "$OUT/read-cost.txt"
fi
# With PINRUN_BEFORE (an earlier build), the biggest dump by both builds in
# one more hyperfine run.
if [ -n "${PINRUN_BEFORE:-}" ] && [ -x "$PINRUN_BEFORE" ]; then
  hyperfine -N --warmup 2 --min-runs "${MIN_RUNS:-10}" --export-json "$OUT/before-scale.json" \
    -n "before --cpus 1" "$PINRUN_BEFORE --sysroot $BIG --dry-run --cpus 1" \
    -n "now --cpus 1" "$PINRUN --sysroot $BIG --dry-run --cpus 1" \
    -n "before --cores 1" "$PINRUN_BEFORE --sysroot $BIG --dry-run --cores 1" \
    -n "now --cores 1" "$PINRUN --sysroot $BIG --dry-run --cores 1" >"$OUT/before-scale.log"
  jq -r '"| c4096-n16-i10000-smt | mean (ms) | min (ms) |", "|---|---:|---:|",
    (.results[] | "| \(.command) | \(.mean*1000*10|round/10) | \(.min*1000*10|round/10) |")' \
    "$OUT/before-scale.json" | tee "$OUT/before-scale.md"
fi
