//! `--probe`'s results (issue 20) as text and JSON, in each mode's own
//! words (issue 36): spin mode reports **gaps** (the histogram of the
//! gaps above the threshold, their count, the time lost, the available
//! share, the largest gaps with their time), wakeup mode reports
//! **latencies** (min, p50, p99, p99.9, max, their histogram, the latest
//! wake-ups); both then what disturbed the CPU. The JSON fields of each
//! mode are pinrun(1) PROBE's list (`man/probe.roff`), which a test holds
//! to the output.

use super::plan::{COUNTER_GAP_MAX_NS, unattributed_ns};
use super::read::MAX_TRACE_EVENTS;
use crate::noise::{
    Bucket, CpuNoise, NoiseKind, ProbeMode, ProbeRun, Source, TimedGap, TracedGap, TracedSource,
};
use crate::words::{cpus_phrase, duration_approx as d};
use serde_json::{Value, json};
use std::fmt::Write;

/// How many sources the text names per CPU (every one with `-v`).
const SOURCES_SHOWN: usize = 6;
/// How many of the largest gaps the text lines up in time (every one with
/// `-v`).
const TIMED_SHOWN: usize = 3;

/// `c`'s largest gaps lined up in time (issue 36), `None` without a sampler.
fn timed<'a>(run: &'a ProbeRun, c: &CpuNoise) -> Option<&'a [TimedGap]> {
    let t = run.timed.as_ref().ok()?;
    Some(t.gaps.get(&c.cpu).map_or(&[][..], Vec::as_slice))
}

/// The first `shown` of `items` (all of them when `verbose`) joined by
/// "; ", then `; N more (-v)` when some were cut.
fn cut_list(items: impl ExactSizeIterator<Item = String>, shown: usize, verbose: bool) -> String {
    let n = items.len();
    let shown = if verbose { n } else { shown };
    let words = items.take(shown).collect::<Vec<_>>().join("; ");
    if n > shown {
        format!("{words}; {} more (-v)", n - shown)
    } else {
        words
    }
}

/// `c`'s largest gaps with the osnoise tracer's events (`--probe-tracer`),
/// `None` without the tracer.
fn traced<'a>(run: &'a ProbeRun, c: &CpuNoise) -> Option<&'a [TracedGap]> {
    let t = run.traced.as_ref()?.as_ref().ok()?;
    Some(t.gaps.get(&c.cpu).map_or(&[][..], Vec::as_slice))
}

/// An osnoise source in words, as the tracer names it (`DESC:VECTOR`,
/// `NAME:VECTOR`, `COMM:PID`): `thread hog:4242 4.90ms`,
/// `IRQ local_timer:236 3.10us ×2`, `NMI 1.00us`.
pub fn traced_words(t: &TracedSource) -> String {
    let what = match t.kind {
        NoiseKind::Irq => format!("IRQ {}:{}", t.name, t.id),
        NoiseKind::Softirq => format!("softirq {}:{}", t.name, t.id),
        NoiseKind::Thread => format!("thread {}:{}", t.name, t.id),
        NoiseKind::Nmi => "NMI".to_string(),
    };
    let times = if t.count > 1 {
        format!(" ×{}", t.count)
    } else {
        String::new()
    };
    format!("{what} {}{times}", d(t.ns))
}

/// `n` in digits grouped by three with spaces (`1 000 000`), as the
/// probe's text writes its limits.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(d);
    }
    out
}

/// The lines of `--probe-tracer`: once, the tracer's instance and event
/// counts or why it did not run; per CPU, its largest gaps with the
/// source the tracer saw take most of each (`no event`: noise the kernel
/// did not see, such as SMIs or a hypervisor).
fn traced_lines(run: &ProbeRun, what: &str, verbose: bool, s: &mut String) {
    match &run.traced {
        None => {}
        Some(Err(e)) => {
            let _ = writeln!(
                s,
                "  osnoise tracer: not used: {e}; attribution in time from the sampler only"
            );
        }
        Some(Ok(t)) => {
            let not_kept = match t.not_kept {
                0 => String::new(),
                n => format!(
                    ", {n} not kept: over the {} limit",
                    grouped(MAX_TRACE_EVENTS as u64)
                ),
            };
            let _ = writeln!(
                s,
                "  osnoise tracer: {} events on the probed CPUs, {} overwritten{not_kept} (instance {}, removed)",
                t.events, t.overrun, t.instance
            );
            for c in &run.cpus {
                let gaps = traced(run, c).unwrap_or(&[]);
                if gaps.is_empty() {
                    continue;
                }
                let words = gaps.iter().map(|g| {
                    let named = g.named.as_ref().map_or("no event".into(), traced_words);
                    format!("{} at +{}: {named}", d(g.ns), d(g.at_ns))
                });
                let _ = writeln!(
                    s,
                    "  CPU {} largest {what} by osnoise: {}",
                    c.cpu,
                    cut_list(words, TIMED_SHOWN, verbose)
                );
            }
        }
    }
}

/// The part of `c`'s time lost that neither the tasks' run time and steal
/// time over the probe nor the gaps lined up with RT throttling explain,
/// ns ([`unattributed_ns`]).
fn unexplained(run: &ProbeRun, c: &CpuNoise, sources: &[Source]) -> u64 {
    let throttled: u64 = timed(run, c)
        .unwrap_or(&[])
        .iter()
        .filter(|g| matches!(g.likely_source, Some(Source::RtThrottling { .. })))
        .map(|g| g.ns)
        .sum();
    unattributed_ns(sources, c.lost_ns).saturating_sub(throttled)
}

/// Why lost time is unattributed: with a sampler, nothing it saw (a task
/// or steal time) explains it; without one no task was watched at all
/// (pinrun(1) PROBE: "without a sampler, no task is named"), which the
/// line says rather than "no task seen", with how to get one.
fn unattributed_why(run: &ProbeRun) -> String {
    match &run.timed {
        Err(e) if !e.is_empty() => format!(
            "no task was watched ({e}: probe fewer CPUs to have tasks named) and no steal time explains it"
        ),
        _ => "no task or steal time seen explains it: preemption by short-lived tasks, interrupts, SMIs, or a hypervisor that reports no steal time".to_string(),
    }
}

/// The line of `c`'s largest gaps in time: each with its likely cause in
/// the window around it, `nothing seen` when the window shows no change
/// that explains it, `not sampled` when no sample was read on one side.
fn timed_line(run: &ProbeRun, c: &CpuNoise, what: &str, verbose: bool, s: &mut String) {
    match (&run.timed, timed(run, c)) {
        (Err(e), _) if !e.is_empty() => {
            let _ = writeln!(s, "  CPU {} {what} in time: not sampled ({e})", c.cpu);
        }
        (Ok(t), Some(gaps)) if !gaps.is_empty() => {
            let words = gaps.iter().map(|g| {
                let cause = match (&g.likely_source, g.window_ns) {
                    (_, None) => "not sampled".to_string(),
                    (Some(l), Some(_)) => l.words(),
                    (None, Some(_)) => "nothing seen".to_string(),
                };
                format!("{} at +{}: {cause}", d(g.ns), d(g.at_ns))
            });
            let _ = writeln!(
                s,
                "  CPU {} {what} in time (sampled every {}, {} of the sampler's CPU time): {}",
                c.cpu,
                d(t.period_ns),
                d(t.cpu_ns),
                cut_list(words, TIMED_SHOWN, verbose)
            );
        }
        _ => {}
    }
}

/// A bucket of the histogram in words: `<1us`, `2-4us`, `512us-1.02ms`,
/// `>=67.1s`.
fn bucket_words(b: &Bucket) -> String {
    let edge = |ns: u64| {
        if ns < 1_000_000 {
            format!("{}us", ns / 1000)
        } else {
            d(ns)
        }
    };
    match (b.from_ns, b.to_ns) {
        (0, Some(to)) => format!("<{}", edge(to)),
        (from, None) => format!(">={}", edge(from)),
        (from, Some(to)) if to < 1_000_000 => format!("{}-{}us", from / 1000, to / 1000),
        (from, Some(to)) => format!("{}-{}", edge(from), edge(to)),
    }
}

/// The header line: mode, duration, CPUs, scheduling, clock, threshold,
/// interval (wakeup), and `/dev/cpu_dma_latency` when it was asked for.
fn header(run: &ProbeRun) -> String {
    let r = &run.request;
    let cpus: crate::cpuset::CpuSet = run.cpus.iter().map(|c| c.cpu).collect();
    let interval = match r.mode {
        ProbeMode::Wakeup => format!(", interval {}", d(r.interval_ns)),
        ProbeMode::Spin => String::new(),
    };
    let dma = match &run.dma_latency {
        None => String::new(),
        Some(q) => match &q.held {
            Ok(limit) => format!(
                ", /dev/cpu_dma_latency held at {}us (system-wide limit {limit}us)",
                q.us
            ),
            Err(e) => format!(", /dev/cpu_dma_latency NOT held at {}us ({e})", q.us),
        },
    };
    format!(
        "probe: {} for {} on {}, {}, clock {}, threshold {}{interval}{dma}\n",
        r.mode.name(),
        d(r.duration_ns),
        cpus_phrase(&cpus),
        run.sched,
        run.clock.name(),
        d(r.threshold_ns),
    )
}

/// The table: spin mode's gaps, wakeup mode's latencies.
fn table(run: &ProbeRun, s: &mut String) {
    match run.request.mode {
        ProbeMode::Spin => {
            let _ = writeln!(
                s,
                "{:>5} {:>12} {:>8} {:>8} {:>8} {:>9}",
                "CPU", "reads", "gaps", "max", "lost", "avail%"
            );
            for c in &run.cpus {
                let _ = writeln!(
                    s,
                    "{:>5} {:>12} {:>8} {:>8} {:>8} {:>9.3}",
                    c.cpu,
                    c.samples,
                    c.above_threshold,
                    d(c.max_ns),
                    d(c.lost_ns),
                    c.available_pct()
                );
            }
        }
        ProbeMode::Wakeup => {
            let _ = writeln!(
                s,
                "{:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6}",
                "CPU", "wakeups", "min", "p50", "p99", "p99.9", "max", "over"
            );
            for c in &run.cpus {
                let l = c.latency.unwrap_or_default();
                let _ = writeln!(
                    s,
                    "{:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6}",
                    c.cpu,
                    c.samples,
                    d(l.min_ns),
                    d(l.p50_ns),
                    d(l.p99_ns),
                    d(l.p999_ns),
                    d(c.max_ns),
                    c.above_threshold,
                );
            }
        }
    }
}

/// The probe as text: a header line, one table row per CPU, then per CPU
/// its histogram, its largest gaps (latest wake-ups) and its sources (the
/// first [`SOURCES_SHOWN`], all with `verbose`).
pub fn probe_text(run: &ProbeRun, verbose: bool) -> String {
    let r = &run.request;
    let mut s = header(run);
    table(run, &mut s);
    let (what, one) = match r.mode {
        ProbeMode::Spin => ("gaps", "gap"),
        ProbeMode::Wakeup => ("latencies", "latency"),
    };
    for c in &run.cpus {
        if !c.histogram.is_empty() {
            let b: Vec<String> = c
                .histogram
                .iter()
                .map(|b| format!("{} ×{}", bucket_words(b), b.count))
                .collect();
            let _ = writeln!(s, "  CPU {} {what} by length: {}", c.cpu, b.join(", "));
        }
        if !c.top.is_empty() {
            let gaps: Vec<String> = c
                .top
                .iter()
                .map(|g| format!("{} at +{}", d(g.ns), d(g.at_ns)))
                .collect();
            let _ = writeln!(s, "  CPU {} largest {what}: {}", c.cpu, gaps.join(", "));
            timed_line(run, c, &format!("largest {what}"), verbose, &mut s);
        }
        let sources = run.sources.get(&c.cpu).map_or(&[][..], Vec::as_slice);
        let _ = writeln!(
            s,
            "  CPU {} sources: {}",
            c.cpu,
            if sources.is_empty() {
                "none seen".to_string()
            } else {
                cut_list(sources.iter().map(|x| x.words()), SOURCES_SHOWN, verbose)
            }
        );
        if let Some(l) = likely(run, c) {
            let _ = writeln!(
                s,
                "  CPU {} worst {} {}: likely {}",
                c.cpu,
                one,
                d(c.max_ns),
                l.words()
            );
        }
        let unexplained = unexplained(run, c, sources);
        if r.mode == ProbeMode::Spin && unexplained >= COUNTER_GAP_MAX_NS {
            let _ = writeln!(
                s,
                "  CPU {} unattributed: {} of {} lost — {}",
                c.cpu,
                d(unexplained),
                d(c.lost_ns),
                unattributed_why(run)
            );
        }
    }
    traced_lines(run, what, verbose, &mut s);
    if let Some(e) = &run.mlock_error {
        let _ = writeln!(s, "  memory not locked during the probe ({e})");
    }
    s
}

/// The likely source of `c`'s worst gap or latency, when it is above the
/// threshold: the gate's answer ([`crate::probe::plan::worst_likely`]).
fn likely(run: &ProbeRun, c: &CpuNoise) -> Option<crate::noise::Source> {
    crate::probe::plan::worst_likely(run, c)
}

/// One CPU's JSON object in its mode's fields (pinrun(1) PROBE).
fn cpu_json(run: &ProbeRun, c: &CpuNoise) -> Value {
    let sources = run.sources.get(&c.cpu).map_or(&[][..], Vec::as_slice);
    match c.mode {
        ProbeMode::Spin => json!({
            "cpu": c.cpu,
            "duration_ns": c.duration_ns,
            "reads": c.samples,
            "max_ns": c.max_ns,
            "gaps": c.above_threshold,
            "lost_ns": c.lost_ns,
            "available_pct": c.available_pct(),
            "housekeeping_ns": c.housekeeping_ns,
            "histogram": c.histogram,
            "top_gaps": c.top,
            "sources": sources,
            "likely_source": likely(run, c),
            "unattributed_ns": unexplained(run, c, sources),
            "timed_gaps": timed(run, c),
            "traced_gaps": traced(run, c),
        }),
        ProbeMode::Wakeup => {
            let l = c.latency.unwrap_or_default();
            json!({
                "cpu": c.cpu,
                "duration_ns": c.duration_ns,
                "wakeups": c.samples,
                "min_ns": l.min_ns,
                "p50_ns": l.p50_ns,
                "p99_ns": l.p99_ns,
                "p999_ns": l.p999_ns,
                "max_ns": c.max_ns,
                "over_threshold": c.above_threshold,
                "histogram": c.histogram,
                "top_latencies": c.top,
                "sources": sources,
                "likely_source": likely(run, c),
                "timed_latencies": timed(run, c),
                "traced_latencies": traced(run, c),
            })
        }
    }
}

/// `--probe-tracer`'s object (pinrun(1) PROBE), null without it.
fn tracer_json(run: &ProbeRun) -> Value {
    let Some(t) = &run.traced else {
        return Value::Null;
    };
    let ok = t.as_ref().ok();
    json!({
        "name": run.request.tracer.map_or("osnoise", |t| t.name()),
        "instance": ok.map(|t| &t.instance),
        "events": ok.map(|t| t.events),
        "overrun": ok.map(|t| t.overrun),
        "not_kept": ok.map(|t| t.not_kept),
        "error": t.as_ref().err(),
    })
}

/// The probe as JSON, in its mode's fields: pinrun(1) PROBE lists them
/// (`man/probe.roff`, "JSON"), and `tests::json_fields_are_the_documented_ones`
/// holds the two to each other.
pub fn probe_json(run: &ProbeRun) -> Value {
    let r = &run.request;
    let cpus: Vec<Value> = run.cpus.iter().map(|c| cpu_json(run, c)).collect();
    let dma = run.dma_latency.as_ref().map(|q| {
        json!({
            "us": q.us,
            "held": q.held.is_ok(),
            "limit_us": q.held.as_ref().ok(),
            "error": q.held.as_ref().err(),
        })
    });
    let mut v = json!({
        "mode": r.mode.name(),
        "duration_ns": r.duration_ns,
        "threshold_ns": r.threshold_ns,
        "gate_max_ns": r.gate_max_ns,
        "clock": run.clock.name(),
        "sched": run.sched,
        "mlock_error": run.mlock_error,
        "dma_latency": dma,
        "sample_period_ns": run.timed.as_ref().ok().map(|t| t.period_ns),
        "samples": run.timed.as_ref().ok().map(|t| t.samples),
        "sampler_cpu_ns": run.timed.as_ref().ok().map(|t| t.cpu_ns),
        "sampler_error": run.timed.as_ref().err(),
        "tracer": tracer_json(run),
        "cpus": cpus,
    });
    if r.mode == ProbeMode::Wakeup {
        v["interval_ns"] = json!(r.interval_ns);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::{DmaLatency, ProbeClock, ProbeRequest, Series, Source, Timed, Traced};
    use std::collections::{BTreeMap, BTreeSet};

    fn run() -> ProbeRun {
        let mut s = Series::new(1000, 1.0);
        s.samples = 2;
        s.max = 40_000;
        s.gap(40_000, 120);
        ProbeRun {
            request: ProbeRequest::default(),
            clock: ProbeClock::MonotonicRaw,
            sched: "SCHED_OTHER nice 0".into(),
            cpus: vec![s.summarize(1, ProbeMode::Spin, 1.0, 100, 1_000_000_000)],
            sources: [(
                1,
                vec![Source::Irq {
                    irq: 24,
                    name: "nvme0q1".into(),
                    count: 3,
                    managed: None,
                    pending: false,
                }],
            )]
            .into_iter()
            .collect(),
            mlock_error: None,
            rt_throttle: None,
            rt_priority: None,
            dma_latency: None,
            timed: Ok(Timed {
                period_ns: 2_000_000,
                samples: 500,
                cpu_ns: 1_500_000,
                gaps: [(
                    1,
                    vec![TimedGap {
                        ns: 40_000,
                        at_ns: 20,
                        window_ns: Some(4_100_000),
                        sources: vec![irq24(1)],
                        likely_source: Some(irq24(1)),
                    }],
                )]
                .into_iter()
                .collect(),
            }),
            traced: Some(Ok(Traced {
                tracer: "osnoise".into(),
                instance: "/sys/kernel/tracing/instances/pinrun-42".into(),
                events: 17,
                overrun: 0,
                not_kept: 0,
                gaps: [(1, vec![traced_gap(40_000, 20)])].into_iter().collect(),
            })),
        }
    }

    /// A gap of `ns` at `at_ns` that IRQ 24 took 39 µs of in 2 events.
    fn traced_gap(ns: u64, at_ns: u64) -> TracedGap {
        let irq = TracedSource {
            kind: NoiseKind::Irq,
            id: 24,
            name: "nvme0q1".into(),
            count: 2,
            ns: 39_000,
        };
        TracedGap {
            ns,
            at_ns,
            sources: vec![irq.clone()],
            named: Some(irq),
        }
    }

    fn irq24(count: u64) -> Source {
        Source::Irq {
            irq: 24,
            name: "nvme0q1".into(),
            count,
            managed: None,
            pending: false,
        }
    }

    /// A wakeup run: 1000 wake-ups of 5 us and one of 150 us.
    fn wakeup_run() -> ProbeRun {
        let mut r = run();
        r.request.mode = ProbeMode::Wakeup;
        r.request.threshold_ns = 100_000;
        r.request.gate_max_ns = Some(500_000);
        r.clock = ProbeClock::Monotonic;
        let mut s = Series::new(100_000, 1.0);
        for i in 0..1000 {
            s.record(5_000, i * 1_000_000);
        }
        s.record(150_000, 1_000_000_000);
        r.cpus = vec![s.summarize(1, ProbeMode::Wakeup, 1.0, 0, 1_001_000_000)];
        r
    }

    #[test]
    fn text_names_the_worst_gap_and_its_source() {
        let t = probe_text(&run(), false);
        assert!(t.starts_with("probe: spin for 1.00s on CPU 1, SCHED_OTHER nice 0, clock CLOCK_MONOTONIC_RAW, threshold 1.00us\n"), "{t}");
        assert!(t.contains("  CPU 1 gaps by length: 32-64us ×1\n"), "{t}");
        assert!(t.contains("  CPU 1 largest gaps: 40.0us at +20ns\n"), "{t}");
        // The worst gap's own window (IRQ 24 once), as its line in time
        // says; not the probe's totals (×3): one answer (plan::worst_likely).
        assert!(
            t.contains("  CPU 1 worst gap 40.0us: likely IRQ 24 (nvme0q1) ×1\n"),
            "{t}"
        );
        // No per-read percentile in spin mode.
        assert!(!t.contains("p50") && !t.contains("p99"), "{t}");
    }

    /// Wakeup mode speaks of latencies, with their percentiles, and of no
    /// time lost.
    #[test]
    fn wakeup_text_speaks_of_latencies() {
        let t = probe_text(&wakeup_run(), false);
        for want in [
            "  CPU  wakeups      min      p50      p99    p99.9      max   over\n",
            // p50 to p99.9: the upper bound of 5000's bucket, 4992-5055.
            "    1     1001   5.00us   5.05us   5.05us   5.05us    150us      1\n",
            "  CPU 1 latencies by length: 4-8us ×1000, 128-256us ×1\n",
            "  CPU 1 largest latencies: 150us at +1.00s\n",
            "  CPU 1 worst latency 150us: likely IRQ 24 (nvme0q1) ×3\n",
        ] {
            assert!(t.contains(want), "{want:?} in:\n{t}");
        }
        for unwanted in ["gap", "lost", "avail"] {
            assert!(!t.contains(unwanted), "{unwanted:?} in:\n{t}");
        }
    }

    #[test]
    fn json_has_every_field() {
        let v = probe_json(&run());
        let c = &v["cpus"][0];
        assert_eq!(c["cpu"], 1);
        assert_eq!(c["reads"], 2);
        assert_eq!(c["gaps"], 1);
        assert_eq!(c["max_ns"], 40_000);
        assert_eq!(c["lost_ns"], 40_000);
        assert_eq!(c["top_gaps"][0]["at_ns"], 20);
        assert_eq!(
            c["histogram"],
            json!([{"from_ns": 32_000, "to_ns": 64_000, "count": 1}])
        );
        assert_eq!(c["likely_source"]["kind"], "irq");
        assert_eq!(c["likely_source"]["irq"], 24);
        // Interrupts are counted, not timed: the 40 us are unexplained.
        assert_eq!(c["unattributed_ns"], 40_000);
        assert_eq!(v["mode"], "spin");
        assert_eq!(v["gate_max_ns"], Value::Null);
        assert_eq!(v["dma_latency"], Value::Null);
        let w = probe_json(&wakeup_run());
        assert_eq!(w["gate_max_ns"], 500_000);
        assert_eq!(w["interval_ns"], 1_000_000);
        let c = &w["cpus"][0];
        assert_eq!(
            (c["wakeups"].as_u64(), c["p50_ns"].as_u64()),
            (Some(1001), Some(5055))
        );
        assert_eq!(c["top_latencies"][0]["ns"], 150_000);
    }

    /// The fields of pinrun(1) PROBE's JSON list (`man/probe.roff`, its
    /// `.\" json: GROUP [MODE]` markers), by group and mode.
    fn documented() -> BTreeMap<(String, String), BTreeSet<String>> {
        let mut out: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
        let mut group: Option<(String, String)> = None;
        let mut lines = crate::manual::PROBE_SECTION.lines();
        while let Some(line) = lines.next() {
            if let Some(g) = line.strip_prefix(".\\\" json: ") {
                let mut w = g.split_whitespace();
                group = match (w.next(), w.next()) {
                    (Some("end"), _) => None,
                    (Some(g), mode) => Some((g.into(), mode.unwrap_or("").into())),
                    (None, _) => None,
                };
            } else if line == ".TP"
                && let Some(g) = &group
                && let Some(names) = lines.next().and_then(|l| l.strip_prefix(".B "))
            {
                let set = out.entry(g.clone()).or_default();
                set.extend(names.split(", ").map(str::to_string));
            }
        }
        out
    }

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    /// Every field pinrun(1) documents for a mode is in that mode's JSON,
    /// and no other: the top level, each CPU, a histogram bucket and
    /// `dma_latency`, in both modes.
    #[test]
    fn json_fields_are_the_documented_ones() {
        let doc = documented();
        let fields = |g: &str, mode: &str| -> BTreeSet<String> {
            let mut s = doc
                .get(&(g.into(), String::new()))
                .cloned()
                .unwrap_or_default();
            s.extend(
                doc.get(&(g.into(), mode.into()))
                    .cloned()
                    .unwrap_or_default(),
            );
            s
        };
        assert!(fields("cpu", "spin").contains("available_pct"), "{doc:?}");
        for (mode, mut r) in [("spin", run()), ("wakeup", wakeup_run())] {
            r.dma_latency = Some(DmaLatency { us: 0, held: Ok(0) });
            let v = probe_json(&r);
            assert_eq!(keys(&v), fields("probe", mode), "{mode}");
            assert_eq!(keys(&v["cpus"][0]), fields("cpu", mode), "{mode}");
            assert_eq!(keys(&v["cpus"][0]["histogram"][0]), fields("bucket", ""));
            let timed = if mode == "spin" {
                "timed_gaps"
            } else {
                "timed_latencies"
            };
            assert_eq!(keys(&v["cpus"][0][timed][0]), fields("timed", ""), "{mode}");
            assert_eq!(keys(&v["dma_latency"]), fields("dma_latency", ""));
            assert_eq!(keys(&v["tracer"]), fields("tracer", ""));
            let traced = if mode == "spin" {
                "traced_gaps"
            } else {
                "traced_latencies"
            };
            let g = &v["cpus"][0][traced][0];
            assert_eq!(keys(g), fields("traced", ""), "{mode}");
            assert_eq!(keys(&g["sources"][0]), fields("traced_source", ""));
        }
        // The two modes' words are their own.
        assert!(!fields("cpu", "wakeup").contains("lost_ns"));
        assert!(!fields("cpu", "wakeup").contains("top_gaps"));
        assert!(!fields("cpu", "spin").contains("p99_ns"));
    }

    /// `--probe-dma-latency`: the header says whether it was held.
    #[test]
    fn dma_latency_is_reported() {
        let mut r = run();
        r.dma_latency = Some(DmaLatency { us: 0, held: Ok(0) });
        assert!(probe_text(&r, false).lines().next().unwrap().ends_with(
            ", threshold 1.00us, /dev/cpu_dma_latency held at 0us (system-wide limit 0us)"
        ));
        r.dma_latency = Some(DmaLatency {
            us: 10,
            held: Err("/dev/cpu_dma_latency: permission denied".into()),
        });
        assert!(probe_text(&r, false).contains(
            ", /dev/cpu_dma_latency NOT held at 10us (/dev/cpu_dma_latency: permission denied)\n"
        ));
        let v = probe_json(&r);
        assert_eq!(v["dma_latency"]["held"], false);
        assert_eq!(v["dma_latency"]["limit_us"], Value::Null);
    }

    /// A 93 ms loss that a 2.6 ms task does not explain: no likely source
    /// for the 90 ms gap (not the IRQ), and an unattributed line with the
    /// remainder; steal time, when the hypervisor reports it, is named.
    #[test]
    fn unexplained_time_is_said() {
        let mut r = run();
        let mut s = Series::new(1000, 1.0);
        s.max = 90_000_000;
        s.gap(90_000_000, 20);
        s.gap(3_000_000, 90_000_020);
        r.cpus = vec![s.summarize(1, ProbeMode::Spin, 1.0, 0, 1_000_000_000)];
        r.sources.get_mut(&1).unwrap().insert(
            0,
            Source::Task {
                pid: 7,
                tid: 7,
                comm: "cc1".into(),
                runtime_ns: 2_600_000,
                rt_priority: 0,
                kernel: None,
            },
        );
        let t = probe_text(&r, false);
        assert!(!t.contains("likely"), "{t}");
        assert!(
            t.contains("  CPU 1 unattributed: 90.4ms of 93.0ms lost — "),
            "{t}"
        );
        assert_eq!(probe_json(&r)["cpus"][0]["unattributed_ns"], 90_400_000);
        // Without a sampler no task was watched: the line says so, not
        // that no task seen explains it (`pinrun --probe --cpus 0-1` on a
        // 2-CPU host said "no task or steal time seen explains it").
        let sampled = r.timed.clone();
        r.timed = Err("no housekeeping CPU outside the probed ones to sample from".into());
        let t = probe_text(&r, false);
        assert!(
            t.contains("  CPU 1 unattributed: 90.4ms of 93.0ms lost — no task was watched (no housekeeping CPU outside the probed ones to sample from: probe fewer CPUs to have tasks named) and no steal time explains it\n"),
            "{t}"
        );
        assert!(!t.contains("seen explains"), "{t}");
        r.timed = sampled;
        r.sources
            .get_mut(&1)
            .unwrap()
            .insert(0, Source::Steal { ns: 91_000_000 });
        let t = probe_text(&r, false);
        assert!(
            t.contains("  CPU 1 worst gap 90.0ms: likely steal time 91.0ms (the hypervisor ran something else)\n"),
            "{t}"
        );
        assert!(!t.contains("unattributed"), "{t}");
    }

    /// Attribution in time: the largest gaps with the likely cause in
    /// their window; without a sampler, why; a gap lined up with RT
    /// throttling is not unattributed time.
    #[test]
    fn gaps_in_time_are_said() {
        let mut r = run();
        let t = probe_text(&r, false);
        assert!(
            t.contains("  CPU 1 largest gaps in time (sampled every 2.00ms, 1.50ms of the sampler's CPU time): 40.0us at +20ns: IRQ 24 (nvme0q1) ×1\n"),
            "{t}"
        );
        let v = probe_json(&r);
        assert_eq!(v["sample_period_ns"], 2_000_000);
        assert_eq!(v["sampler_cpu_ns"], 1_500_000);
        assert_eq!(v["cpus"][0]["timed_gaps"][0]["window_ns"], 4_100_000);
        assert_eq!(v["cpus"][0]["timed_gaps"][0]["likely_source"]["irq"], 24);
        r.timed = Err("no housekeeping CPU outside the probed ones to sample from".into());
        let t = probe_text(&r, false);
        assert!(
            t.contains("  CPU 1 largest gaps in time: not sampled (no housekeeping CPU outside the probed ones to sample from)\n"),
            "{t}"
        );
        let v = probe_json(&r);
        assert_eq!(v["cpus"][0]["timed_gaps"], Value::Null);
        assert_eq!(v["sample_period_ns"], Value::Null);
        assert_eq!(v["sampler_cpu_ns"], Value::Null);
        // A 50 ms gap RT throttling explains (950 ms of 1 s): lost, but
        // not unattributed.
        let mut s = Series::new(1000, 1.0);
        s.max = 50_000_000;
        s.gap(50_000_000, 20);
        r.cpus = vec![s.summarize(1, ProbeMode::Spin, 1.0, 0, 1_000_000_000)];
        let throttling = Source::RtThrottling {
            runtime_us: 950_000,
            period_us: 1_000_000,
        };
        r.timed = Ok(Timed {
            period_ns: 2_000_000,
            samples: 500,
            cpu_ns: 1_500_000,
            gaps: [(
                1,
                vec![TimedGap {
                    ns: 50_000_000,
                    at_ns: 0,
                    window_ns: Some(54_000_000),
                    sources: vec![throttling.clone()],
                    likely_source: Some(throttling),
                }],
            )]
            .into_iter()
            .collect(),
        });
        let v = probe_json(&r);
        assert_eq!(v["cpus"][0]["lost_ns"], 50_000_000);
        assert_eq!(v["cpus"][0]["unattributed_ns"], 0);
        assert!(!probe_text(&r, false).contains("unattributed"));
    }

    /// The kernel's overwritten events and the events pinrun read past
    /// its bound (`MAX_TRACE_EVENTS`) are said apart, in the text and the
    /// JSON (`overrun`, `not_kept`: pinrun(1) PROBE).
    #[test]
    fn overwritten_and_not_kept_are_said_apart() {
        let mut r = run();
        if let Some(Ok(t)) = &mut r.traced {
            t.overrun = 7;
            t.not_kept = 3;
        }
        let text = probe_text(&r, false);
        assert!(
            text.contains("  osnoise tracer: 17 events on the probed CPUs, 7 overwritten, 3 not kept: over the 1 000 000 limit (instance /sys/kernel/tracing/instances/pinrun-42, removed)\n"),
            "{text}"
        );
        let v = probe_json(&r);
        assert_eq!(v["tracer"]["overrun"], 7);
        assert_eq!(v["tracer"]["not_kept"], 3);
        assert_eq!(grouped(1_000_000), "1 000 000");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1 000");
    }

    /// `--probe-tracer`: the text names the source that took most of each
    /// gap as the tracer names it, and the JSON carries the instance and
    /// counts; when the tracer could not run, one line says why and the
    /// per-CPU fields are null; without it, `tracer` is null.
    #[test]
    fn tracer_is_reported_or_says_why_not() {
        let mut r = run();
        let text = probe_text(&r, false);
        assert!(
            text.contains("  osnoise tracer: 17 events on the probed CPUs, 0 overwritten (instance /sys/kernel/tracing/instances/pinrun-42, removed)\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  CPU 1 largest gaps by osnoise: 40.0us at +20ns: IRQ nvme0q1:24 39.0us ×2\n"
            ),
            "{text}"
        );
        let v = probe_json(&r);
        assert_eq!(v["tracer"]["name"], "osnoise");
        assert_eq!(v["tracer"]["events"], 17);
        assert_eq!(v["cpus"][0]["traced_gaps"][0]["named"]["id"], 24);
        assert_eq!(v["cpus"][0]["traced_gaps"][0]["named"]["kind"], "irq");
        let why = "this kernel has no osnoise tracer (available_tracers: blk function nop; it needs CONFIG_OSNOISE_TRACER)";
        r.traced = Some(Err(why.into()));
        let text = probe_text(&r, false);
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("osnoise")).collect();
        assert_eq!(
            lines,
            [format!(
                "  osnoise tracer: not used: {why}; attribution in time from the sampler only"
            )]
        );
        let v = probe_json(&r);
        assert_eq!(v["tracer"]["error"], why);
        assert_eq!(v["tracer"]["instance"], Value::Null);
        assert_eq!(v["cpus"][0]["traced_gaps"], Value::Null);
        r.traced = None;
        assert!(!probe_text(&r, false).contains("osnoise"));
        assert_eq!(probe_json(&r)["tracer"], Value::Null);
    }
}
