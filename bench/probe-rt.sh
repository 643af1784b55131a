#!/usr/bin/env bash
# pinrun's probe against rt-tests on the same CPU, in one interleaved run
# (issue 36, BENCHMARKS.md "Probe against oslat and cyclictest"): for each
# condition (idle, loaded) and each of R repeats, pinrun's spin probe and
# oslat, then pinrun's wakeup probe and cyclictest, D seconds each, the two
# tools of a pair one right after the other and in alternating order, so
# that both see the same load. Prints every run, then the ratios
# pinrun / peer of the worst gap and the gaps over 1 us per second (spin,
# SCHED_OTHER, against oslat) and of the wake-up p99 and max (SCHED_FIFO 90
# pinned to the CPU, against cyclictest -p 90; both hold
# /dev/cpu_dma_latency at 0 during the run: cyclictest's default, pinrun's
# --probe-dma-latency 0).
#
# Like with like (BENCHMARKS.md, "Why the wake-up maxima differed"):
# - cyclictest's main thread is kept off the measured CPU
#   (--mainaffinity), as pinrun keeps its own (sampler, watchdog): with -a,
#   rt-tests 2.x pins the main thread to the measured CPU too.
# - The wake-up max is compared from a third run of each repeat, pinrun and
#   cyclictest at once on the CPU: the largest latencies are rare stalls
#   (a few per run, of 0.1-3 ms on a shared VM), and two runs one after the
#   other see different stalls; at once, both see the same ones, each
#   shortened by where its own 1 ms deadline fell in it (less than one
#   interval). The p99 is compared from the runs one after the other (at
#   once, each tool's wake-ups delay the other's by microseconds).
# - cyclictest's histogram is in whole microseconds (bucket k holds the
#   latencies in [k, k+1) us); pinrun's p99 (ns, the top of a 1/64-wide
#   bucket) is floored to whole microseconds before the ratio.
# - Gaps per second of the probe thread's run time, beside gaps per second
#   of wall time (BENCHMARKS.md, "Why the loaded gap rates differed"):
#   under the load the probe thread shares the CPU with the busy loop and
#   dd, and the share each run gets (0.1-0.4 of the CPU on a shared host)
#   sets its gaps per wall second; per second of run time the two tools
#   agree. A poller on the other CPUs reads the probe thread's
#   /proc/PID/task/TID/schedstat (run ns) every 20 ms during each spin run
#   (pinrun-probe$CPU; oslat's measuring thread, the last one pinned to
#   the CPU), and /proc/interrupts' column of the CPU around it.
#
# Needs root (SCHED_FIFO, /dev/cpu_dma_latency) and rt-tests, which CI does
# not install: apt-get install -y rt-tests (Debian, Ubuntu; oslat from 1.10).
#
#   CPU=1 D=5 R=3 PINRUN=target/x86_64-unknown-linux-gnu/release/pinrun bench/probe-rt.sh
#   (CONDS=idle: the idle condition only; the default is "idle loaded")
#
# "loaded": a SCHED_OTHER busy loop pinned to the CPU and a loop of 4 KiB
# O_DIRECT reads (a device interrupt per read) of a BLOCKS_MB file (default
# 64 MiB); nothing on the host is reconfigured, and both are ended on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
PINRUN=${PINRUN:-target/$(rustc -vV | sed -n "s/^host: //p")/release/pinrun}
CPU=${CPU:-1}
# The other CPUs, for cyclictest's main thread (pinrun keeps its own threads off the probed CPU).
OTHERS=$(python3 -c "import os; print(','.join(str(c) for c in sorted(os.sched_getaffinity(0)) if c != $CPU))")
D=${D:-5}
R=${R:-3}
for tool in oslat cyclictest; do
    command -v "$tool" >/dev/null || {
        echo "bench/probe-rt.sh: $tool not found; apt-get install -y rt-tests" >&2
        exit 1
    }
done
. bench/probe-lib.sh
bench_files ""
blocks_write

load_on() {
    taskset -c "$CPU" sh -c 'while :; do :; done' &
    read_loop
    sleep 1
}

# ran FILE COMMAND...: runs COMMAND while a poller on the other CPUs keeps,
# in FILE, the run time (schedstat, ns) of each thread of pinrun or oslat
# pinned to the CPU alone (first line: the interrupts on the CPU before,
# last line: after).
ran() {
    local f=$1; shift
    irqs >"$f"
    taskset -c "$OTHERS" python3 - "$CPU" "$f.poll" <<'POLL' &
import os, sys, time
cpu, out = sys.argv[1], sys.argv[2]
seen = {}
while not os.path.exists(out + ".stop"):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/comm").read().strip() not in ("pinrun", "oslat"):
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                d = f"/proc/{pid}/task/{tid}"
                st = open(d + "/status").read()
                if f"Cpus_allowed_list:\t{cpu}\n" not in st:
                    continue
                comm = open(d + "/comm").read().strip()
                if comm not in ("oslat", f"pinrun-probe{cpu}"):
                    continue
                run = int(open(d + "/schedstat").read().split()[0])
                seen.setdefault(tid, [time.monotonic(), 0])[1] = run
        except (OSError, ValueError):
            pass
    time.sleep(0.02)
# The measuring thread: the last one seen first (oslat's pre-heat thread comes before it).
last = max(seen.values(), default=[0, 0])
open(out, "w").write(f"{last[1]}\n")
POLL
    local poller=$!
    "$@"
    touch "$f.poll.stop"; wait $poller
    cat "$f.poll" >>"$f"; irqs >>"$f"
}
# All interrupts on the CPU so far (/proc/interrupts, its column).
irqs() { awk -v c="$CPU" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "CPU" c) col = i + 1; next }
    $col ~ /^[0-9]+$/ { n += $col } END { print n + 0 }' /proc/interrupts; }
spin_pinrun() { ran "$1.ran" "$PINRUN" --json --probe="${D}s" --cpus "$CPU" >"$1" 2>/dev/null || true; }
spin_oslat() { ran "$1.ran" oslat -q -c "$CPU" -D "$D" --json="$1" >/dev/null 2>&1 || true; }
wake_pinrun() {
    "$PINRUN" --json --probe="${D}s" --probe-mode wakeup --probe-dma-latency=0 \
        --cpus "$CPU" --fifo 90 >"$1" 2>/dev/null || true
}
wake_cyclictest() {
    cyclictest -q -m -t1 -a "$CPU" ${OTHERS:+--mainaffinity="$OTHERS"} -p 90 -i 1000 -h 20000 \
        -D "$D" --json="$1" >/dev/null 2>&1 || true
}
# Both at once on the CPU, for the wake-up max.
wake_both() {
    wake_cyclictest "$1.peer" &
    wake_pinrun "$1.pinrun"
    wait $!
}

for cond in ${CONDS:-idle loaded}; do
    [ "$cond" = loaded ] && load_on
    for r in $(seq 1 "$R"); do
        echo "# $cond $r: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load"
        if [ $((r % 2)) = 1 ]; then
            spin_pinrun "$out/$cond.$r.spin.pinrun"; spin_oslat "$out/$cond.$r.spin.peer"
            wake_cyclictest "$out/$cond.$r.wake.peer"; wake_pinrun "$out/$cond.$r.wake.pinrun"
        else
            spin_oslat "$out/$cond.$r.spin.peer"; spin_pinrun "$out/$cond.$r.spin.pinrun"
            wake_pinrun "$out/$cond.$r.wake.pinrun"; wake_cyclictest "$out/$cond.$r.wake.peer"
        fi
        wake_both "$out/$cond.$r.both"
    done
    [ "$cond" = loaded ] && load_off
done

python3 - "$out" "$R" "$D" <<'EOF'
import json, os, statistics, sys
out, R, D = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None

def ran(p, pre):
    """The probe thread's run time (s) over its measurement and the
    interrupts on the CPU per second of wall time, from a .ran file;
    pinrun's thread also ran its pre-heat (pre s): its run time is
    scaled to the measurement's share of the thread's life."""
    try:
        before, run_ns, after = (int(x) for x in open(p).read().split())
    except (OSError, ValueError):
        return None, None
    return run_ns / 1e9 * D / (D + pre), (after - before) / D

def peer_hist(d):
    t = next(iter(d["thread"].values()))
    return {int(k): v for k, v in t.get("histogram", {}).items()}, t

def pct(h, q):
    n = sum(h.values())
    rank, seen = max(1, -(-int(q * n * 1000) // 1000)), 0
    for k in sorted(h):
        seen += h[k]
        if seen >= rank:
            return k
    return None

print(open(os.path.join(out, "load")).read(), end="")
rows, runrows, ratios, each = [], [], {}, {}

def keep(cond, what, mine, peer):
    """Each tool's own figure per repeat, for the ratio of the medians."""
    m = each.setdefault((cond, what), ([], []))
    m[0].append(mine)
    m[1].append(peer)

for cond in ["idle", "loaded"]:
    for r in range(1, R + 1):
        base = os.path.join(out, f"{cond}.{r}")
        p, o = load(base + ".spin.pinrun"), load(base + ".spin.peer")
        if p and o:
            c = p["probe"]["cpus"][0]
            h, t = peer_hist(o)
            # oslat's bucket k holds the gaps in (k-1, k] us: above 1 us is k >= 2.
            og = sum(v for k, v in h.items() if k >= 2)
            pw, ow = c["max_ns"] / 1000, float(t["max"])
            pg, ogs = c["gaps"] / (c["duration_ns"] / 1e9), og / float(t.get("duration", 1) or 1)
            (pr, pi), (orr, oi) = ran(base + ".spin.pinrun.ran", 0.1), ran(base + ".spin.peer.ran", 0.0)
            if pr and orr:
                # Per second of the probe thread's run time: like with like.
                prg, org = c["gaps"] / pr, og / orr
                runrows.append(f"| {cond} | {r} | {pr:.2f} s / {orr:.2f} s | {prg:.0f} / {org:.0f} | {pi:.0f} / {oi:.0f} |")
                ratios.setdefault((cond, "gaps >1us per s of run time"), []).append(prg / org if org else float("nan"))
            rows.append(f"| {cond} | {r} | spin | worst gap {pw:.0f} us / {ow:.0f} us | gaps >1us/s {pg:.0f} / {ogs:.0f} |")
            ratios.setdefault((cond, "worst gap"), []).append(pw / ow if ow else float("nan"))
            keep(cond, "worst gap, us", pw, ow)
            ratios.setdefault((cond, "gaps >1us per s"), []).append(pg / ogs if ogs else float("nan"))
        p, o = load(base + ".wake.pinrun"), load(base + ".wake.peer")
        if p and o:
            c = p["probe"]["cpus"][0]
            h, t = peer_hist(o)
            # Whole microseconds, as cyclictest's bucket k = [k, k+1) us.
            p99, pmax = c["p99_ns"] // 1000, c["max_ns"] / 1000
            o99, omax = pct(h, 0.99), float(t["max"])
            rows.append(f"| {cond} | {r} | wakeup | p99 {p99} us / {o99} us | max {pmax:.0f} us / {omax:.0f} us |")
            ratios.setdefault((cond, "wake-up p99"), []).append(p99 / o99 if o99 else float("nan"))
            if o99:
                keep(cond, "wake-up p99, us", p99, o99)
            ratios.setdefault((cond, "wake-up max, one after the other"), []).append(pmax / omax if omax else float("nan"))
        p, o = load(base + ".both.pinrun"), load(base + ".both.peer")
        if p and o:
            c = p["probe"]["cpus"][0]
            _, t = peer_hist(o)
            pmax, omax = c["max_ns"] / 1000, float(t["max"])
            rows.append(f"| {cond} | {r} | wakeup, at once | | max {pmax:.0f} us / {omax:.0f} us |")
            ratios.setdefault((cond, "wake-up max, at once"), []).append(pmax / omax if omax else float("nan"))
print("| condition | repeat | mode | pinrun / peer | pinrun / peer |")
print("|---|---|---|---|---|")
print("\n".join(rows))
print()
print("| condition | repeat | spin: probe thread ran, pinrun / oslat | gaps >1us per s of run | interrupts on the CPU per s |")
print("|---|---|---|---|---|")
print("\n".join(runrows))
print()
print("| condition | figure | ratios pinrun / peer (each repeat) | median |")
print("|---|---|---|---|")
for (cond, what), v in ratios.items():
    print(f"| {cond} | {what} | {', '.join(f'{x:.2f}' for x in v)} | {statistics.median(v):.2f} |")
print()
# A worst gap is the largest of a few rare stalls in each run: two runs
# one after the other meet different stalls, so the ratio of one repeat
# is of two independent maxima. The median of each tool's own figures
# over the repeats compares the two distributions instead.
print("| condition | figure | pinrun, median of the repeats | peer, median | ratio of the medians |")
print("|---|---|---|---|---|")
for (cond, what), (mine, peer) in each.items():
    a, b = statistics.median(mine), statistics.median(peer)
    print(f"| {cond} | {what} | {a:.0f} | {b:.0f} | {a / b if b else float('nan'):.2f} |")
EOF
