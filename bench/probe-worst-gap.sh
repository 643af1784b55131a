#!/usr/bin/env bash
# The spin probe's worst gap against oslat's, over many repeats (issue 36,
# BENCHMARKS.md "Many repeats of the worst gap"): a worst gap is the largest
# of a few rare stalls per run, so a handful of repeats cannot tell two
# tools apart. For each of R repeats, pinrun's spin probe (SCHED_OTHER),
# `oslat -c CPU` and, when PINRUN2 is set, a second pinrun build (run with
# the environment PINRUN2_ENV, e.g. a build with one change), D seconds
# each on CPU, in an order that rotates every repeat. Prints each tool's
# worst gaps sorted, their median, how many fell in the two-tick mode
# (above MODE us; the loaded condition's busy loop holds the CPU for one
# tick or two), the ratio of the medians, the median of the per-repeat
# ratios and the rank count (pairs in which pinrun's is the larger; half
# of them is no difference).
#
#   LOAD=1 R=15 D=5 CPU=1 PINRUN=target/x86_64-unknown-linux-gnu/release/pinrun bench/probe-worst-gap.sh
#
# LOAD=1: the loaded condition of bench/probe-rt.sh (a SCHED_OTHER busy loop
# pinned to the CPU and a loop of 4 KiB O_DIRECT reads of a BLOCKS_MB file,
# default 64 MiB), ended on exit.
# Needs root and rt-tests (apt-get install -y rt-tests).
set -euo pipefail
die() { echo "bench/probe-worst-gap.sh: $*" >&2; exit 2; }
# A relative PINRUN or PINRUN2 names a file from where the script was run.
for v in PINRUN PINRUN2; do
    if [ -n "${!v:-}" ] && [ -e "${!v}" ]; then
        printf -v "$v" '%s' "$(realpath "${!v}")"
    fi
done
cd "$(dirname "$0")/.."
PINRUN=${PINRUN:-target/$(rustc -vV | sed -n "s/^host: //p")/release/pinrun}
CPU=${CPU:-1}
D=${D:-5}
R=${R:-15}
MODE=${MODE:-6500}
# Every value checked before the first run: a bad one made each run fail
# unseen (their errors go to /dev/null) and ended, after R repeats, in a
# Python traceback.
[[ $R =~ ^[1-9][0-9]*$ ]] || die "R=$R: the number of repeats, a whole number from 1"
[[ $D =~ ^[1-9][0-9]*$ ]] || die "D=$D: each run's seconds, a whole number from 1"
[[ $MODE =~ ^[0-9]+([.][0-9]+)?$ ]] || die "MODE=$MODE: microseconds, a number"
[[ $CPU =~ ^[0-9]+$ ]] && taskset -c "$CPU" true 2>/dev/null ||
    die "CPU=$CPU: not a CPU this script may run on ($(taskset -pc $$ | sed 's/.*: //'))"
[ -x "$PINRUN" ] && [ -f "$PINRUN" ] || die "PINRUN=$PINRUN: no such executable (cargo build --release)"
[ -z "${PINRUN2:-}" ] || { [ -x "$PINRUN2" ] && [ -f "$PINRUN2" ]; } || die "PINRUN2=$PINRUN2: no such executable"
command -v oslat >/dev/null || {
    echo "bench/probe-worst-gap.sh: oslat not found; apt-get install -y rt-tests" >&2
    exit 1
}
. bench/probe-lib.sh
bench_files ""
if [ "${LOAD:-0}" = 1 ]; then
    blocks_write
    taskset -c "$CPU" sh -c 'while :; do :; done' &
    read_loop
    sleep 1
fi
tools="pinrun oslat${PINRUN2:+ pinrun2}"
# Each tool in the background and waited for: the traps above run at once
# (not after the run) and the EXIT trap's kill reaches it.
run() {
    case $1 in
    pinrun) "$PINRUN" --json --probe="${D}s" --cpus "$CPU" >"$2" 2>"$2.err" & ;;
    pinrun2) env ${PINRUN2_ENV:-} "$PINRUN2" --json --probe="${D}s" --cpus "$CPU" >"$2" 2>"$2.err" & ;;
    oslat) oslat -q -c "$CPU" -D "$D" --json="$2" >/dev/null 2>"$2.err" & ;;
    esac
    wait $! || true
}
for r in $(seq 1 "$R"); do
    set -- $tools
    # Rotate: repeat r starts with tool r mod n.
    for _ in $(seq 1 $((r % $#))); do set -- "$@" "$1"; shift; done
    for t in "$@"; do run "$t" "$out/$r.$t"; done
    echo "# repeat $r: load $(cut -d' ' -f1-3 /proc/loadavg)"
done
python3 - "$out" "$R" "$MODE" $tools <<'SUMMARY'
import json, statistics, sys
out, R, mode, tools = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]

def worst(path, tool):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return None
    if tool == "oslat":
        return float(next(iter(d["thread"].values()))["max"])
    return d["probe"]["cpus"][0]["max_ns"] / 1000

got = {t: [worst(f"{out}/{r}.{t}", t) for r in range(1, R + 1)] for t in tools}
keep = [i for i in range(R) if all(got[t][i] is not None for t in tools)]
for t in tools:
    failed = [r for r in range(1, R + 1) if got[t][r - 1] is None]
    if failed:
        try:
            err = open(f"{out}/{failed[0]}.{t}.err").read().strip().splitlines()[-1:]
        except OSError:
            err = []
        print(f"{t}: no result in {len(failed)} of {R} repeats; repeat {failed[0]}: {err[0] if err else 'no message'}",
              file=sys.stderr)
if not keep:
    sys.exit("bench/probe-worst-gap.sh: no repeat in which every tool gave a result")
for t in tools:
    v = sorted(got[t][i] for i in keep)
    print(f"{t}: worst gaps, us: {', '.join(f'{x:.0f}' for x in v)}")
    print(f"{t}: median {statistics.median(v):.0f} us, above {mode:.0f} us in {sum(x > mode for x in v)} of {len(v)}")
o = [got["oslat"][i] for i in keep]
for t in [t for t in tools if t != "oslat"]:
    p = [got[t][i] for i in keep]
    per = statistics.median(a / b for a, b in zip(p, o))
    rank = sum(a > b for a in p for b in o)
    print(f"{t} / oslat: ratio of the medians {statistics.median(p) / statistics.median(o):.2f}, "
          f"median of the per-repeat ratios {per:.2f}, {t}'s the larger in {rank} of {len(p) * len(o)} pairs")
SUMMARY
