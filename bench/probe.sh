#!/usr/bin/env bash
# The --probe effect table (issue 20, BENCHMARKS.md "Noise probe"): pinrun's
# probe beside oslat (spin) and cyclictest (wakeup) on the same CPU, with the
# same policy, one after the other in one run, under the same background
# load. Needs root (oslat, cyclictest -p, SCHED_FIFO), rt-tests and
# stress-ng (apt-get install -y rt-tests stress-ng). Prints a Markdown table.
#
#   CPU=1 D=3 PINRUN=target/x86_64-unknown-linux-gnu/release/pinrun bench/probe.sh
#
# The load: stress-ng --cpu 1 on the other CPUs (SCHED_OTHER) and a loop of
# O_DIRECT reads (a device interrupt per read, on whichever CPU the disk's
# IRQ targets); nothing on the host is reconfigured.
set -euo pipefail
cd "$(dirname "$0")/.."
PINRUN=${PINRUN:-target/$(rustc -vV | sed -n "s/^host: //p")/release/pinrun}
CPU=${CPU:-1}
D=${D:-3}
. bench/probe-lib.sh
# The blocks file in target/ (removed on exit, as the rest).
bench_files target/probe-bench.blocks
others=$(python3 -c "
import sys
on=open('/sys/devices/system/cpu/online').read().strip()
cpus=set()
for p in on.split(','):
    a,_,b=p.partition('-'); cpus.update(range(int(a),int(b or a)+1))
print(','.join(str(c) for c in sorted(cpus-{$CPU})))")
blocks_write

load_on() {
    stress-ng --quiet --cpu 1 --taskset "$others" --timeout 600 &
    read_loop
    sleep 1
}

row() { # name pinrun-args... ; then the peer command in PEER
    local name=$1
    shift
    nice -n 0 "$PINRUN" --json "$@" >"$out/$name.pinrun.json" 2>/dev/null || true
    if [ -n "${PEER:-}" ]; then
        eval "$PEER --json=$out/$name.peer.json" >/dev/null 2>&1 || true
    fi
}

# Idle and a SCHED_OTHER hog pinned to the CPU (no other load).
PEER="oslat -q -c $CPU -D $D" row idle --probe="${D}s" --cpus "$CPU"
taskset -c "$CPU" sh -c 'while :; do :; done' &
sleep 0.5
PEER="oslat -q -c $CPU -D $D" row hog --probe="${D}s" --cpus "$CPU"
load_off

# Under load: unpinned SCHED_OTHER, pinned SCHED_FIFO 90.
load_on
PEER="cyclictest -q -m -t1 -i 1000 -h 2000 -D $D" \
    row wakeup-unpinned-other --probe="${D}s" --probe-mode wakeup
PEER="cyclictest -q -m -t1 -a $CPU -p 90 -i 1000 -h 2000 -D $D" \
    row wakeup-cpu-fifo90 --probe="${D}s" --probe-mode wakeup --cpus "$CPU" --fifo 90
PEER="oslat -q -c $CPU -D $D" row spin-cpu-other --probe="${D}s" --cpus "$CPU"
PEER="oslat -q -c $CPU -f 90 -D $D" row spin-cpu-fifo90 --probe="${D}s" --cpus "$CPU" --fifo 90
load_off

python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]

def pct(hist, q):
    items = sorted((int(k), v) for k, v in hist.items())
    n = sum(v for _, v in items)
    rank, seen = max(1, -(-int(q * n * 1000) // 1000)), 0
    for k, v in items:
        seen += v
        if seen >= rank:
            return k
    return items[-1][0] if items else None

def us(ns):
    return f"{ns / 1000:.3f}"

print("| run | tool | CPU | samples | p50 µs | p99 µs | max µs | over threshold | avail % | likely source of the worst gap |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name in ["idle", "hog", "wakeup-unpinned-other", "wakeup-cpu-fifo90", "spin-cpu-other", "spin-cpu-fifo90"]:
    p = os.path.join(out, f"{name}.pinrun.json")
    try:
        probe = json.load(open(p))["probe"]
    except Exception as e:
        print(f"| {name} | pinrun | - | failed: {e} | | | | | | |")
        probe = None
    if probe:
        for c in probe["cpus"]:
            src = c.get("likely_source") or {}
            what = {"task": lambda s: f"task {s['comm']} ({s['runtime_ns']/1e6:.0f} ms)",
                    "irq": lambda s: f"IRQ {s['irq']} {s['name']} ×{s['count']}",
                    "interrupt": lambda s: f"{s['label']} ×{s['count']}",
                    "softirq": lambda s: f"softirq {s['name']} ×{s['count']}",
                    "rt-throttling": lambda s: f"RT throttling ({s['runtime_us']} of {s['period_us']} µs)"}.get(src.get("kind"), lambda s: "-")(src)
            # Issue 36: spin mode reports gaps (no per-read percentile: it
            # would measure the loop), wakeup mode latencies (no time lost).
            if probe["mode"] == "spin":
                print(f"| {name} | pinrun ({probe['mode']}, {probe['sched']}) | {c['cpu']} | {c['reads']} | - | - | {us(c['max_ns'])} | {c['gaps']} | {c['available_pct']:.2f} | {what} |")
            else:
                print(f"| {name} | pinrun ({probe['mode']}, {probe['sched']}) | {c['cpu']} | {c['wakeups']} | {us(c['p50_ns'])} | {us(c['p99_ns'])} | {us(c['max_ns'])} | {c['over_threshold']} | | {what} |")
    q = os.path.join(out, f"{name}.peer.json")
    if os.path.exists(q):
        d = json.load(open(q))
        tool = os.path.basename(d.get("cmdline:", "peer").split()[0])
        for t in d["thread"].values():
            h = t.get("histogram", {})
            n = sum(h.values())
            print(f"| {name} | {tool} | {t.get('cpu', '-')} | {t.get('cycles', n)} | {pct(h, 0.5)} | {pct(h, 0.99)} | {t['max']} | | | |")
EOF
