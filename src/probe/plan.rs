//! Refusals of `--probe` (issue 20), decided before anything runs: which
//! CPUs the probe measures, and whether a spinning real-time probe could
//! lock a CPU up.

pub mod attribute;
pub mod charge;

pub use attribute::{
    COUNTER_GAP_MAX_NS, attribute, likely_source, mark_managed, mark_pending, unattributed_ns,
};

use super::{Layout, Readings, Sample, Sampled};
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::noise::{
    CpuNoise, KernelThread, NoiseEvent, NoiseKind, ProbeClock, ProbeMode, ProbeRequest, ProbeRun,
    Snapshot, Source, Timed, TimedGap, TracedGap, TracedSource,
};
use crate::plan::Plan;
use crate::system::SystemState;
use crate::system::noise::ClockFacts;
use crate::words::{cpus_phrase, duration_approx};
use std::collections::BTreeMap;

/// The CPUs the probe measures: the plan's CPUs, or, when the launch
/// keeps its affinity, the task's CPUs
/// ([`crate::plan::placement::task_cpus`]). One probe thread runs on each.
pub fn probed_cpus(sys: &SystemState, plan: &Plan) -> CpuSet {
    crate::plan::placement::command_cpus(sys, plan)
}

/// The spin mode's clock: the TSC only when its rate is invariant
/// (`constant_tsc` and `nonstop_tsc` in `/proc/cpuinfo`'s flags) and the
/// kernel itself trusts it (`current_clocksource` is `tsc`: the kernel
/// demotes a TSC that drifts between CPUs or stops in idle states);
/// else `CLOCK_MONOTONIC_RAW`.
pub fn spin_clock(facts: &ClockFacts) -> ProbeClock {
    let has = |f: &str| facts.cpuinfo_flags.split_whitespace().any(|w| w == f);
    if has("constant_tsc") && has("nonstop_tsc") && facts.clocksource.trim() == "tsc" {
        ProbeClock::Tsc
    } else {
        ProbeClock::MonotonicRaw
    }
}

/// Refuses a spinning SCHED_FIFO/SCHED_RR probe on any CPU that is not
/// isolated while RT throttling is off (`kernel.sched_rt_runtime_us` =
/// -1, `sched-rt(7)`): for the whole probe nothing of lower priority could
/// run there, kernel threads (RCU, kworkers) included. The wakeup mode
/// sleeps between samples and is never refused; SCHED_DEADLINE is bounded
/// by its own runtime.
pub fn refuse_unsafe(sys: &SystemState, plan: &Plan, req: &ProbeRequest) -> Result<()> {
    let Some(policy) = plan.sched.policy.filter(|p| p.is_rt()) else {
        return Ok(());
    };
    if req.mode != ProbeMode::Spin || sys.process.rt_runtime_us != Some(-1) {
        return Ok(());
    }
    let shared = probed_cpus(sys, plan).difference(&sys.isolated);
    if shared.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::ProbeUnsafe,
        format!(
            "--probe: a spinning {} probe on {} (not isolated) with RT throttling off (kernel.sched_rt_runtime_us = -1) would keep every other task and kernel thread off {} for {}",
            policy.kernel_name(),
            cpus_phrase(&shared),
            if shared.len() == 1 { "it" } else { "them" },
            duration_approx(req.duration_ns),
        ),
    )
    .hint("probe an isolated CPU (--isolated), use --probe-mode wakeup (it sleeps between samples), or turn RT throttling back on: sysctl kernel.sched_rt_runtime_us=950000"))
}

/// RT throttling's runtime and period (µs) for a spinning probe under
/// SCHED_FIFO/SCHED_RR when throttling is on (`kernel.sched_rt_runtime_us`
/// below `sched_rt_period_us`); `None` otherwise (a wake-up probe sleeps
/// and is not throttled).
pub fn rt_throttle(sys: &SystemState, plan: &Plan, req: &ProbeRequest) -> Option<(i64, i64)> {
    plan.sched.policy.filter(|p| p.is_rt())?;
    if req.mode != ProbeMode::Spin {
        return None;
    }
    let (runtime, period) = (sys.process.rt_runtime_us?, sys.process.rt_period_us?);
    (0..period).contains(&runtime).then_some((runtime, period))
}

/// The likely source of `c`'s worst gap (spin) or latest wake-up
/// (wakeup), one answer for the report's line, its JSON and the
/// `--probe-max` gate: the worst gap's own window when the sampler lined
/// it up ([`line_up`]: what ran then, `None` when nothing seen explains
/// it), else, without a sample on either side or without a sampler, the
/// totals over the probe ([`likely_source`]); `None` at or below the
/// threshold. The totals alone once blamed a task that ran elsewhere in
/// the probe while the worst gap's window showed nothing.
pub fn worst_likely(run: &ProbeRun, c: &CpuNoise) -> Option<Source> {
    if c.max_ns <= run.request.threshold_ns {
        return None;
    }
    let lined = run
        .timed
        .as_ref()
        .ok()
        .and_then(|t| t.gaps.get(&c.cpu))
        .and_then(|gaps| gaps.iter().find(|g| g.ns == c.max_ns))
        .filter(|g| g.window_ns.is_some());
    match lined {
        Some(g) => g.likely_source.clone(),
        None => likely_source(
            run.sources.get(&c.cpu).map_or(&[][..], Vec::as_slice),
            c.max_ns,
            run.rt_throttle,
            run.rt_priority,
        ),
    }
}

/// What a fix in `--probe-max`'s hint may name on this host, so that it
/// never names what the kernel would ignore and names a real destination.
#[derive(Debug, Clone, Default)]
pub struct FixHost {
    /// Whether this kernel has nohz_full support (`CONFIG_NO_HZ_FULL`):
    /// the tick's fix names `nohz_full=` only then.
    pub nohz_full_built: bool,
    /// The housekeeping CPUs outside the probed ones (allowed, neither
    /// isolated nor nohz_full): where a task or an IRQ moved off a probed
    /// CPU goes; `None` when there is none (the hint then says `LIST`).
    pub housekeeping: Option<CpuSet>,
}

/// `--probe-max`: refuses (exit 125) when a probed CPU's worst gap (spin)
/// or latest wake-up (wakeup) exceeds `max_ns`, naming the CPU, the gap or
/// latency and its most likely source ([`worst_likely`]) with the fix for
/// that kind of source on this host ([`fix_for`], [`FixHost`]).
pub fn gate(run: &ProbeRun, max_ns: u64, host: &FixHost) -> Result<()> {
    let Some(worst) = run
        .cpus
        .iter()
        .filter(|c| c.max_ns > max_ns)
        .max_by_key(|c| c.max_ns)
    else {
        return Ok(());
    };
    let cpu = worst.cpu;
    let (why, hint) = match worst_likely(run, worst) {
        Some(s) => (format!("likely source: {}", s.words()), fix_for(&s, cpu, host)),
        None if worst.mode == ProbeMode::Wakeup => (
            "unattributed: no task, steal time or interrupt seen explains it: preemption by short-lived tasks, a non-preemptible kernel section (see the preempt-model finding), SMIs, or a hypervisor that reports no steal time".to_string(),
            format!("see pinrun --probe -v for every source on CPU {cpu}; check the BIOS's power and SMI settings, or on a virtual machine the host's load"),
        ),
        None => (
            format!(
                "unattributed: no task, steal time or throttling seen explains it ({} of {} lost unexplained): preemption by short-lived tasks, SMIs, or a hypervisor that reports no steal time",
                duration_approx(unattributed_ns(
                    run.sources.get(&cpu).map_or(&[][..], Vec::as_slice),
                    worst.lost_ns
                )),
                duration_approx(worst.lost_ns)
            ),
            format!("see pinrun --probe -v for every source on CPU {cpu}; check the BIOS's power and SMI settings, or on a virtual machine the host's load"),
        ),
    };
    let what = match worst.mode {
        ProbeMode::Spin => "worst gap",
        ProbeMode::Wakeup => "latest wake-up",
    };
    Err(Error::new(
        ErrorCode::ProbeOverMax,
        format!(
            "--probe-max {}: CPU {cpu}: {what} {} at +{}; {why}",
            duration_approx(max_ns),
            duration_approx(worst.max_ns),
            duration_approx(worst.top.first().map_or(0, |g| g.at_ns)),
        ),
    )
    .hint(hint))
}

/// The fix for `source` on `cpu`, by its kind: a user task moves with
/// `pinrun --pid` to the host's housekeeping CPUs, a device IRQ is steered
/// there (both named: [`FixHost::housekeeping`]); a kernel thread never
/// moves (`pinrun --pid` refuses it), so its hint names what moves it
/// ([`kernel_thread_fix`]). The tick's fix is `nohz_full=` only on a
/// kernel built with it; elsewhere a kernel that has it.
fn fix_for(source: &Source, cpu: u32, host: &FixHost) -> String {
    let nohz_full_built = host.nohz_full_built;
    let to = host
        .housekeeping
        .as_ref()
        .map_or_else(|| "LIST".to_string(), CpuSet::to_list);
    match source {
        Source::RtThrottling { .. } => format!("a real-time task that never sleeps is stopped by RT throttling: give it an isolated CPU (--isolated) where kernel.sched_rt_runtime_us=-1 is safe, or let it sleep (--probe-mode wakeup shows what an event-driven program sees on CPU {cpu})"),
        Source::Task {
            pid,
            comm,
            kernel: Some(k),
            ..
        } => kernel_thread_fix(*k, *pid, comm, cpu),
        Source::Task { pid, .. } => format!("move pid {pid} off CPU {cpu} (pinrun --pid {pid} --cpus {to}, every thread), or choose a CPU where nothing else runs (--isolated)"),
        Source::Steal { .. } => "on a virtual machine, ask for dedicated (pinned) host CPUs for this guest, or probe again when the host is less loaded".to_string(),
        Source::Irq {
            irq,
            managed: Some(true),
            ..
        } => format!("IRQ {irq} is kernel-managed (a queue of CPU {cpu}; the kernel refuses to move it): it fires for I/O submitted on CPU {cpu}, so keep the device's I/O off it, or boot with {} (it moves managed IRQs whose mask holds a housekeeping CPU)", crate::boot_params::isolcpus_param(&crate::boot_params::IsolcpusFlags { managed_irq: true, ..Default::default() }, &cpu.to_string())),
        Source::Irq {
            irq, pending: true, ..
        } => format!("IRQ {irq} was steered off CPU {cpu} but was still delivered there until its next interrupt (x86 moves it then): probe again; it no longer fires there"),
        Source::Irq { irq, .. } => format!("steer IRQ {irq} to a housekeeping CPU (as root: echo {to} > /proc/irq/{irq}/smp_affinity_list; irqaffinity= at boot), or choose another CPU"),
        Source::Interrupt { label, .. } if label == "LOC" && nohz_full_built => format!("the scheduler tick: boot with nohz_full={cpu} (and isolcpus) so that a single task there runs without it"),
        Source::Interrupt { label, .. } if label == "LOC" => format!("the scheduler tick: this kernel has no nohz_full support (CONFIG_NO_HZ_FULL is off: /sys/devices/system/cpu/nohz_full is absent), so the tick runs on CPU {cpu} whatever the boot parameters; boot a kernel built with CONFIG_NO_HZ_FULL=y with nohz_full={cpu}, or allow for the tick in --probe-max"),
        _ => format!("choose an isolated CPU (--isolated), or see pinrun --probe -v for every source on CPU {cpu}"),
    }
}

/// The fix for kernel thread `comm` (PID `pid`) on `cpu`, by its kind:
/// `pinrun --pid` refuses kernel threads, and `sched_setaffinity(2)` fails
/// with EINVAL on a bound one (`PF_NO_SETAFFINITY`), so a per-CPU thread
/// is kept busy less only by the boot parameters that move the work it
/// runs (isolcpus=, nohz_full=, rcu_nocbs=:
/// Documentation/admin-guide/kernel-parameters.txt), an unbound
/// workqueue worker by the workqueue cpumask
/// (Documentation/core-api/workqueue.rst), a threaded IRQ handler by its
/// IRQ's affinity, any other kernel thread by `taskset -p`.
fn kernel_thread_fix(kind: KernelThread, pid: u32, comm: &str, cpu: u32) -> String {
    match kind {
        KernelThread::PerCpu => format!(
            "{comm} is CPU {cpu}'s own kernel thread: nothing moves it (pinrun --pid refuses kernel threads; sched_setaffinity fails with EINVAL), only less work for it on CPU {cpu}: boot with {} nohz_full={cpu} rcu_nocbs={cpu}, or choose an isolated CPU (--isolated)",
            crate::boot_params::isolcpus_param(
                &crate::boot_params::IsolcpusFlags {
                    nohz: false,
                    domain: true,
                    managed_irq: true,
                },
                &cpu.to_string()
            )
        ),
        KernelThread::UnboundWorker => format!(
            "{comm} is an unbound workqueue worker: pinrun --pid and taskset cannot move it (sched_setaffinity fails with EINVAL); it runs where the workqueue cpumask allows: as root, echo MASK > /sys/devices/virtual/workqueue/cpumask (the housekeeping CPUs as a hex mask, without CPU {cpu}), or boot with workqueue.unbound_cpus=LIST"
        ),
        KernelThread::Movable => match comm
            .strip_prefix("irq/")
            .and_then(|r| r.split('-').next()?.parse::<u32>().ok())
        {
            Some(irq) => format!(
                "{comm} is IRQ {irq}'s handler thread: it follows the IRQ's affinity: steer IRQ {irq} to a housekeeping CPU (as root: echo LIST > /proc/irq/{irq}/smp_affinity_list), or choose another CPU"
            ),
            None => format!(
                "{comm} is a kernel thread (pinrun --pid refuses it): as root, taskset -pc LIST {pid} moves it off CPU {cpu}; or choose an isolated CPU (--isolated)"
            ),
        },
    }
}

/// How the probe ran, as lining its gaps up needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lining {
    /// pinrun's PID: its threads (the probe's) are never a source.
    pub own_pid: u32,
    /// Wakeup mode's interval, ns: the probe's own timer fires once per
    /// deadline on its CPU, counted in `LOC` (`hrtimer_interrupt()` from
    /// the local APIC timer); `None` in spin mode.
    pub own_timer_ns: Option<u64>,
    /// RT throttling's runtime and period, µs ([`rt_throttle`]).
    pub rt_throttle: Option<(i64, i64)>,
    /// The probe's real-time priority.
    pub rt_priority: Option<u32>,
}

/// A gap of `gap_ns` that started at `start_ns` (`CLOCK_MONOTONIC`) on
/// `cpu`, lined up with `samples` (in time order, read with `layout`):
/// the window runs from the last sample whose reads ended at or before the
/// gap's start to the first whose reads began at or after its end, and
/// its sources are what changed on `cpu` across it
/// ([`attribute`]: a task with the time it ran on `cpu`
/// between the samples of the window, [`charge::charge`]; steal time only
/// when it advanced in the window). Then the probe's own timer is subtracted from `LOC` (one per
/// deadline in the window, `lining.own_timer_ns`), and a gap that RT
/// throttling explains (a spinning real-time probe with throttling on, the
/// gap between 1 ms and 110 % of `period − runtime`, as
/// [`likely_source`] decides) is throttling: the tasks below
/// the probe's priority that ran in it ran because the probe was stopped,
/// and are left out. The likely cause is [`likely_source`]'s, else the
/// busiest of the tasks that together ran half the gap ([`busiest_task`]).
/// `at_ns` is the gap's start after the probe's start.
pub fn line_up(
    layout: &Layout,
    samples: &[Sample],
    cpu: u32,
    (start_ns, at_ns, gap_ns): (u64, u64, u64),
    lining: &Lining,
) -> TimedGap {
    let end = start_ns.saturating_add(gap_ns);
    let before = samples.iter().rposition(|s| s.done_ns <= start_ns);
    let after = samples.iter().position(|s| s.at_ns >= end);
    let (Some(bi), Some(ai)) = (before, after) else {
        return TimedGap {
            ns: gap_ns,
            at_ns,
            window_ns: None,
            sources: Vec::new(),
            likely_source: None,
        };
    };
    let (b, a) = (&samples[bi], &samples[ai]);
    let window = a.done_ns.saturating_sub(b.at_ns);
    let charges = charge::charge(&samples[bi..=ai], cpu);
    let (b, a) = charge::charged(
        &layout.snapshot(b),
        &layout.snapshot(a),
        layout,
        &charges,
        cpu,
    );
    let mut sources = attribute(&b, &a, cpu, lining.own_pid);
    if let Some(interval) = lining.own_timer_ns.filter(|i| *i > 0) {
        let own = window.div_ceil(interval);
        sources.retain_mut(|s| match s {
            Source::Interrupt { label, count, .. } if label == "LOC" => {
                *count = count.saturating_sub(own);
                *count > 0
            }
            _ => true,
        });
    }
    if let Some((runtime, period)) = lining.rt_throttle {
        let stopped = ((period - runtime).max(0) as u64) * 1000;
        if gap_ns >= COUNTER_GAP_MAX_NS && gap_ns <= stopped + stopped / 10 {
            let prio = lining.rt_priority.unwrap_or(0);
            sources
                .retain(|s| !matches!(s, Source::Task { rt_priority, .. } if *rt_priority < prio));
            sources.insert(
                0,
                Source::RtThrottling {
                    runtime_us: runtime,
                    period_us: period,
                },
            );
        }
    }
    let likely_source = likely_source(&sources, gap_ns, lining.rt_throttle, lining.rt_priority)
        .or_else(|| busiest_task(&sources, gap_ns, lining.rt_priority));
    TimedGap {
        ns: gap_ns,
        at_ns,
        window_ns: Some(window),
        sources,
        likely_source,
    }
}

/// The task that ran longest on the CPU in a gap's window, when the tasks
/// that could preempt the probe (every task; under a real-time probe of
/// priority `rt_priority`, those of at least that priority) ran, together,
/// at least half the gap: a gap of a spinning probe is the time other
/// tasks ran in its place, and on a shared CPU several take turns in one
/// gap, none of them for half of it. `sources` lists tasks longest first
/// ([`attribute`]).
fn busiest_task(sources: &[Source], gap_ns: u64, rt_priority: Option<u32>) -> Option<Source> {
    let tasks: Vec<&Source> = sources
        .iter()
        .filter(|s| matches!(s, Source::Task { rt_priority: p, .. } if rt_priority.is_none_or(|r| *p >= r)))
        .collect();
    let total: u64 = tasks
        .iter()
        .map(|s| match s {
            Source::Task { runtime_ns, .. } => *runtime_ns,
            _ => 0,
        })
        .sum();
    (total.saturating_mul(2) >= gap_ns)
        .then(|| tasks.first().map(|t| (*t).clone()))
        .flatten()
}

/// What disturbed `cpu` over its measurement `[from_ns, to_ns]`
/// (`CLOCK_MONOTONIC`): the interrupts', softirqs' and steal time's
/// deltas between the probe's snapshots `before` and `after`, and the
/// tasks other than `own_pid`'s with the time the sampler's `readings`
/// charge to `cpu` between its samples inside the measurement
/// ([`charge::charge`], [`charge::inside`]: never time a task ran on
/// another CPU, nor during the pre-heat). Without readings (no sampler),
/// no task is charged: where a task ran between two snapshots a second
/// apart is not known.
pub fn totals(
    (before, after): (&Snapshot, &Snapshot),
    readings: Option<&Readings>,
    cpu: u32,
    measured: (u64, u64),
    own_pid: u32,
) -> Vec<Source> {
    let none = Layout::default();
    let (charges, layout) = match readings {
        Some(r) => (
            charge::charge(charge::inside(&r.samples, measured), cpu),
            &r.layout,
        ),
        None => (charge::Charges::default(), &none),
    };
    let (b, a) = charge::charged(before, after, layout, &charges, cpu);
    attribute(&b, &a, cpu, own_pid)
}

/// Attribution in time for `run` (issue 36): each CPU's largest gaps
/// ([`crate::noise::CpuNoise::top`]) lined up with the sampler's
/// readings ([`line_up`]), the probe's own timer and RT throttling taken
/// from `run`; the sampler's error when there were no readings.
pub fn line_up_all(
    sampled: &Sampled,
    run: &ProbeRun,
    own_pid: u32,
) -> std::result::Result<Timed, String> {
    let r = sampled.as_ref().map_err(Clone::clone)?;
    let lining = Lining {
        own_pid,
        own_timer_ns: (run.request.mode == ProbeMode::Wakeup).then_some(run.request.interval_ns),
        rt_throttle: run.rt_throttle,
        rt_priority: run.rt_priority,
    };
    let gaps = run
        .cpus
        .iter()
        .filter_map(|c| {
            let start = *r.starts.get(&c.cpu)?;
            let lined = c
                .top
                .iter()
                .map(|g| {
                    let at = (start + g.at_ns, g.at_ns, g.ns);
                    line_up(&r.layout, &r.samples, c.cpu, at, &lining)
                })
                .collect();
            Some((c.cpu, lined))
        })
        .collect();
    Ok(Timed {
        period_ns: r.period_ns,
        samples: r.samples.len(),
        cpu_ns: r.cpu_ns,
        gaps,
    })
}

/// How far an osnoise event may lie outside a gap and still overlap it,
/// ns: 2 µs (the trace's timestamps are printed to the µs, and the noise's
/// entry and exit code is outside its duration) plus 50 ppm of the gap's
/// time after the probe's start (the TSC's calibration against
/// `CLOCK_MONOTONIC_RAW`, and `CLOCK_MONOTONIC`'s NTP slew against it).
pub fn trace_slack_ns(at_ns: u64) -> u64 {
    2_000 + at_ns / 20_000
}

/// A gap of `gap_ns` that started at `start_ns` (`CLOCK_MONOTONIC`) on
/// `cpu`, `at_ns` after the probe's start, with the osnoise `events` that
/// overlap it (each spans `end_ns − duration_ns` to `end_ns`, widened by
/// [`trace_slack_ns`]): by source (kind, id and name), with their count and
/// time inside the gap (at most its length), most time first; the idle task (TID 0) and
/// pinrun's own threads (`own_tids`, the probe's among them) are never a
/// source. `named` is the source that took most of the gap.
pub fn trace_gap(
    events: &[NoiseEvent],
    cpu: u32,
    (start_ns, at_ns, gap_ns): (u64, u64, u64),
    own_tids: &std::collections::BTreeSet<u32>,
) -> TracedGap {
    let slack = trace_slack_ns(at_ns);
    let (g0, g1) = (
        start_ns.saturating_sub(slack),
        start_ns.saturating_add(gap_ns).saturating_add(slack),
    );
    let mut by: BTreeMap<(NoiseKind, u32, &str), (u64, u64)> = BTreeMap::new();
    for e in events.iter().filter(|e| e.cpu == cpu) {
        if e.kind == NoiseKind::Thread && (e.id == 0 || own_tids.contains(&e.id)) {
            continue;
        }
        let (e0, e1) = (e.end_ns.saturating_sub(e.duration_ns), e.end_ns);
        if e1 < g0 || e0 > g1 {
            continue;
        }
        let inside = (e1.min(g1) - e0.max(g0)).min(gap_ns);
        let s = by.entry((e.kind, e.id, e.name.as_str())).or_default();
        s.0 += 1;
        s.1 += inside;
    }
    let mut sources: Vec<TracedSource> = by
        .into_iter()
        .map(|((kind, id, name), (count, ns))| TracedSource {
            kind,
            id,
            name: name.to_string(),
            count,
            ns: ns.min(gap_ns),
        })
        .collect();
    sources.sort_by(|a, b| b.ns.cmp(&a.ns).then(b.count.cmp(&a.count)));
    TracedGap {
        ns: gap_ns,
        at_ns,
        named: sources.first().cloned(),
        sources,
    }
}

/// `--probe-tracer` for `run`: each CPU's largest gaps
/// ([`crate::noise::CpuNoise::top`]) with the osnoise `events` that overlap
/// them ([`trace_gap`]); `starts` is each probed CPU's measurement start
/// (`CLOCK_MONOTONIC`, ns), `own_tids` pinrun's threads.
pub fn trace_gaps(
    events: &[NoiseEvent],
    run: &ProbeRun,
    starts: &BTreeMap<u32, u64>,
    own_tids: &std::collections::BTreeSet<u32>,
) -> BTreeMap<u32, Vec<TracedGap>> {
    run.cpus
        .iter()
        .filter_map(|c| {
            let start = *starts.get(&c.cpu)?;
            let gaps = c
                .top
                .iter()
                .map(|g| trace_gap(events, c.cpu, (start + g.at_ns, g.at_ns, g.ns), own_tids))
                .collect();
            Some((c.cpu, gaps))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Policy, SchedRequest};
    use crate::testkit::Machine;

    fn plan(cpus: &str, policy: Option<Policy>) -> Plan {
        crate::testkit::plan_on(
            cpus,
            SchedRequest {
                policy,
                ..Default::default()
            },
        )
    }

    /// sched-rt(7): with sched_rt_runtime_us = -1 a spinning FIFO task owns
    /// its CPU; only isolated CPUs (nothing else scheduled there) are safe.
    #[test]
    fn spinning_rt_probe_refused_without_throttling_on_shared_cpus() {
        let sys = Machine::new(1, 4, 1)
            .isolated("3")
            .rt_sysctls(-1, 1_000_000)
            .build();
        let spin = ProbeRequest::default();
        let fifo = Some(Policy::Fifo(90));
        let e = refuse_unsafe(&sys, &plan("2-3", fifo), &spin).unwrap_err();
        assert_eq!(e.code, ErrorCode::ProbeUnsafe);
        assert!(e.message.contains("CPU 2 "), "{}", e.message);
        assert!(refuse_unsafe(&sys, &plan("3", fifo), &spin).is_ok());
        let wakeup = ProbeRequest {
            mode: ProbeMode::Wakeup,
            ..spin
        };
        assert!(refuse_unsafe(&sys, &plan("2", fifo), &wakeup).is_ok());
        assert!(refuse_unsafe(&sys, &plan("2", None), &spin).is_ok());
        let sys = Machine::new(1, 4, 1)
            .isolated("3")
            .rt_sysctls(950_000, 1_000_000)
            .build();
        assert!(refuse_unsafe(&sys, &plan("2", fifo), &spin).is_ok());
    }

    fn noise(cpu: u32, max_ns: u64) -> CpuNoise {
        let mut s = crate::noise::Series::new(1000, 1.0);
        s.samples = 2;
        s.max = max_ns;
        s.gap(max_ns, 20);
        s.summarize(cpu, ProbeMode::Spin, 1.0, 0, 1_000_000_000)
    }

    /// A run of `cpus` with the totals `sources`, without a sampler
    /// (nothing lined up in time), gated at `max_ns`.
    fn gate_on(cpus: &[CpuNoise], sources: &BTreeMap<u32, Vec<Source>>, max_ns: u64) -> Result<()> {
        gate(&run_of(cpus, sources), max_ns, &built())
    }

    /// IRQ 36 (virtio0), a movable device IRQ seen `count` times.
    fn virtio_irq(count: u64) -> Source {
        Source::Irq {
            irq: 36,
            name: "virtio0".into(),
            count,
            managed: None,
            pending: false,
        }
    }

    /// A host with nohz_full support whose housekeeping CPUs are 0-1.
    fn built() -> FixHost {
        FixHost {
            nohz_full_built: true,
            housekeeping: Some(crate::testkit::cpus("0-1")),
        }
    }

    /// A task's and a device IRQ's fix name where they go on this host:
    /// its housekeeping CPUs outside the probed ones; `LIST` only when
    /// there is none (every allowed CPU probed, isolated or nohz_full).
    #[test]
    fn fixes_name_this_hosts_housekeeping_cpus() {
        let irq = virtio_irq(21);
        assert!(
            fix_for(&irq, 2, &built())
                .contains("as root: echo 0-1 > /proc/irq/36/smp_affinity_list"),
            "{}",
            fix_for(&irq, 2, &built())
        );
        assert!(fix_for(&irq, 2, &FixHost::default()).contains("echo LIST > /proc/irq/36"));
    }

    /// The tick's fix names `nohz_full=` as a boot parameter only on a
    /// kernel built with nohz_full support; on one without (this host's
    /// 6.18, CONFIG_NO_HZ_FULL off) the parameter would be ignored, so the
    /// hint says so and names a kernel that has it, as the
    /// `not-nohz-full` finding does.
    #[test]
    fn the_ticks_fix_names_nohz_full_only_where_the_kernel_has_it() {
        let tick = Source::Interrupt {
            label: "LOC".into(),
            name: "Local timer interrupts".into(),
            count: 4000,
        };
        let built = fix_for(&tick, 1, &built());
        assert_eq!(
            built,
            "the scheduler tick: boot with nohz_full=1 (and isolcpus) so that a single task there runs without it"
        );
        let not_built = fix_for(&tick, 1, &FixHost::default());
        assert!(!not_built.contains("boot with nohz_full"), "{not_built}");
        assert!(
            not_built.contains("this kernel has no nohz_full support")
                && not_built.contains("CONFIG_NO_HZ_FULL=y"),
            "{not_built}"
        );
    }

    fn run_of(cpus: &[CpuNoise], sources: &BTreeMap<u32, Vec<Source>>) -> ProbeRun {
        ProbeRun {
            request: ProbeRequest::default(),
            clock: crate::noise::ProbeClock::MonotonicRaw,
            sched: "SCHED_OTHER nice 0".into(),
            cpus: cpus.to_vec(),
            sources: sources.clone(),
            mlock_error: None,
            rt_throttle: None,
            rt_priority: None,
            dma_latency: None,
            timed: Err(String::new()),
            traced: None,
        }
    }

    /// A task of `comm` (PID `pid`) that ran 15 ms, of kernel thread kind
    /// `kernel`.
    fn task(pid: u32, comm: &str, kernel: Option<KernelThread>) -> Source {
        Source::Task {
            pid,
            tid: pid,
            comm: comm.into(),
            runtime_ns: 15_000_000,
            rt_priority: 0,
            kernel,
        }
    }

    /// A kernel thread is never hinted `pinrun --pid` (which refuses it,
    /// plan::threads::check_target): a per-CPU one (kthread_bind():
    /// sched_setaffinity fails with EINVAL) gets the boot parameters
    /// only, an unbound kworker the workqueue cpumask, a threaded IRQ
    /// handler its IRQ's affinity, any other kernel thread taskset.
    #[test]
    fn a_kernel_thread_is_hinted_what_moves_it() {
        let cpus = [noise(1, 20_000_000)];
        let hint = |t: Source| {
            let e = gate_on(&cpus, &BTreeMap::from([(1, vec![t])]), 1_000_000).unwrap_err();
            (e.message, e.hint.unwrap_or_default())
        };
        let (m, h) = hint(task(24, "ksoftirqd/1", Some(KernelThread::PerCpu)));
        assert!(
            m.ends_with("likely source: kernel thread ksoftirqd/1 (pid 24) 15.0ms"),
            "{m}"
        );
        assert_eq!(
            h,
            "ksoftirqd/1 is CPU 1's own kernel thread: nothing moves it (pinrun --pid refuses kernel threads; sched_setaffinity fails with EINVAL), only less work for it on CPU 1: boot with isolcpus=domain,managed_irq,1 nohz_full=1 rcu_nocbs=1, or choose an isolated CPU (--isolated)"
        );
        let (_, h) = hint(task(50, "kworker/u9:0", Some(KernelThread::UnboundWorker)));
        assert_eq!(
            h,
            "kworker/u9:0 is an unbound workqueue worker: pinrun --pid and taskset cannot move it (sched_setaffinity fails with EINVAL); it runs where the workqueue cpumask allows: as root, echo MASK > /sys/devices/virtual/workqueue/cpumask (the housekeeping CPUs as a hex mask, without CPU 1), or boot with workqueue.unbound_cpus=LIST"
        );
        let (_, h) = hint(task(15, "rcu_preempt", Some(KernelThread::Movable)));
        assert_eq!(
            h,
            "rcu_preempt is a kernel thread (pinrun --pid refuses it): as root, taskset -pc LIST 15 moves it off CPU 1; or choose an isolated CPU (--isolated)"
        );
        let (_, h) = hint(task(52, "irq/24-ACPI:Ged", Some(KernelThread::Movable)));
        assert_eq!(
            h,
            "irq/24-ACPI:Ged is IRQ 24's handler thread: it follows the IRQ's affinity: steer IRQ 24 to a housekeeping CPU (as root: echo LIST > /proc/irq/24/smp_affinity_list), or choose another CPU"
        );
        for (_, h) in [
            hint(task(24, "ksoftirqd/1", Some(KernelThread::PerCpu))),
            hint(task(50, "kworker/u9:0", Some(KernelThread::UnboundWorker))),
            hint(task(15, "rcu_preempt", Some(KernelThread::Movable))),
        ] {
            assert!(
                !h.contains("--pid 24") && !h.contains("pinrun --pid 15"),
                "{h}"
            );
        }
        // A user task keeps pinrun's own fix.
        let (_, h) = hint(task(4242, "hog", None));
        assert!(
            h.starts_with("move pid 4242 off CPU 1 (pinrun --pid 4242"),
            "{h}"
        );
    }

    /// The report's "worst gap: likely" line, its JSON and the gate give
    /// one answer, the worst gap's own window when it was lined up in
    /// time: a task that ran 15 ms elsewhere in the probe (the totals) is
    /// not blamed for a 20 ms gap whose window shows nothing, and an IRQ
    /// the window shows is named by all three.
    #[test]
    fn the_gate_and_the_timeline_give_one_answer() {
        let cpus = [noise(1, 20_000_000)];
        let totals = BTreeMap::from([(1, vec![task(4242, "hog", None)])]);
        let mut run = run_of(&cpus, &totals);
        let lined = |likely: Option<Source>| Timed {
            period_ns: 2_000_000,
            samples: 500,
            cpu_ns: 1_500_000,
            gaps: BTreeMap::from([(
                1,
                vec![TimedGap {
                    ns: 20_000_000,
                    at_ns: 20,
                    window_ns: Some(24_000_000),
                    sources: likely.iter().cloned().collect(),
                    likely_source: likely,
                }],
            )]),
        };
        // Without a sampler: the totals.
        let e = gate(&run, 1_000_000, &built()).unwrap_err();
        assert!(
            e.message
                .ends_with("likely source: task hog (pid 4242) 15.0ms"),
            "{}",
            e.message
        );
        // Lined up, nothing seen in the window: unattributed everywhere.
        run.timed = Ok(lined(None));
        let e = gate(&run, 1_000_000, &built()).unwrap_err();
        assert!(e.message.contains("; unattributed: "), "{}", e.message);
        assert_eq!(worst_likely(&run, &run.cpus[0]), None);
        let text = crate::probe::report::probe_text(&run, false);
        assert!(text.contains("20.0ms at +20ns: nothing seen"), "{text}");
        assert!(!text.contains("likely"), "{text}");
        // Lined up with an IRQ: the gate names the timeline's source.
        let irq = virtio_irq(1);
        run.timed = Ok(lined(Some(irq.clone())));
        let e = gate(&run, 1_000_000, &built()).unwrap_err();
        assert!(
            e.message.ends_with("likely source: IRQ 36 (virtio0) ×1"),
            "{}",
            e.message
        );
        let text = crate::probe::report::probe_text(&run, false);
        assert!(
            text.contains("20.0ms at +20ns: IRQ 36 (virtio0) ×1"),
            "{text}"
        );
        assert!(
            text.contains("CPU 1 worst gap 20.0ms: likely IRQ 36 (virtio0) ×1"),
            "{text}"
        );
    }

    /// The gate names the CPU with the worst gap over the limit and, from
    /// its sources, the likely cause and its kind's fix.
    #[test]
    fn gate_names_cpu_gap_and_source() {
        let cpus = [noise(1, 35_000), noise(2, 50_000), noise(3, 5_000)];
        let mut sources = BTreeMap::new();
        sources.insert(
            2,
            vec![Source::Irq {
                irq: 24,
                name: "nvme0q1".into(),
                count: 12,
                managed: None,
                pending: false,
            }],
        );
        let e = gate_on(&cpus, &sources, 20_000).unwrap_err();
        assert_eq!(e.code, ErrorCode::ProbeOverMax);
        assert!(
            e.message.contains("CPU 2: worst gap 50.0us"),
            "{}",
            e.message
        );
        assert!(e.message.contains("IRQ 24 (nvme0q1)"), "{}", e.message);
        assert!(
            e.hint
                .as_deref()
                .unwrap_or("")
                .contains("/proc/irq/24/smp_affinity_list")
        );
        assert!(gate_on(&cpus, &sources, 60_000).is_ok());
        // A managed queue IRQ (as --steer-irqs found it): no write hint.
        mark_managed(sources.get_mut(&2).unwrap(), |_| Some(true));
        let e = gate_on(&cpus, &sources, 20_000).unwrap_err();
        assert!(
            e.message.contains("IRQ 24 (nvme0q1, kernel-managed) ×12"),
            "{}",
            e.message
        );
        let hint = e.hint.unwrap_or_default();
        assert!(!hint.contains("smp_affinity_list"), "{hint}");
        assert!(hint.contains("isolcpus=managed_irq,2"), "{hint}");
        // A pending move: already steered, no write hint either.
        mark_managed(sources.get_mut(&2).unwrap(), |_| Some(false));
        mark_pending(sources.get_mut(&2).unwrap(), &[24]);
        let e = gate_on(&cpus, &sources, 20_000).unwrap_err();
        assert!(
            e.message
                .contains("IRQ 24 (nvme0q1, steered, move pending) ×12"),
            "{}",
            e.message
        );
        let hint = e.hint.unwrap_or_default();
        assert!(!hint.contains("smp_affinity_list"), "{hint}");
        assert!(hint.contains("next interrupt"), "{hint}");
    }

    /// A task's fix is pinrun's own (--pid moves every thread); a 20 ms
    /// gap that only IRQ counts could explain is said to be unattributed,
    /// with the lost time no source explains; steal time gets the
    /// hypervisor's fix.
    #[test]
    fn gate_fixes_tasks_with_pinrun_and_says_unattributed_time() {
        let cpus = [noise(2, 20_000_000)];
        let task = Source::Task {
            pid: 4242,
            tid: 4242,
            comm: "hog".into(),
            runtime_ns: 15_000_000,
            rt_priority: 0,
            kernel: None,
        };
        let irq = virtio_irq(21);
        let sources = BTreeMap::from([(2, vec![task, irq.clone()])]);
        let e = gate_on(&cpus, &sources, 1_000_000).unwrap_err();
        assert!(
            e.hint.as_deref().unwrap_or("").starts_with(
                "move pid 4242 off CPU 2 (pinrun --pid 4242 --cpus 0-1, every thread)"
            ),
            "{:?}",
            e.hint
        );
        let sources = BTreeMap::from([(2, vec![irq.clone()])]);
        let e = gate_on(&cpus, &sources, 1_000_000).unwrap_err();
        assert!(!e.message.contains("IRQ 36"), "{}", e.message);
        assert!(
            e.message.contains("; unattributed: no task, steal time or throttling seen explains it (20.0ms of 20.0ms lost unexplained)"),
            "{}",
            e.message
        );
        let sources = BTreeMap::from([(2, vec![Source::Steal { ns: 30_000_000 }, irq])]);
        let e = gate_on(&cpus, &sources, 1_000_000).unwrap_err();
        assert!(
            e.message.contains("likely source: steal time 30.0ms"),
            "{}",
            e.message
        );
        assert!(e.hint.as_deref().unwrap_or("").contains("virtual machine"));
    }

    /// CPU 1 sampled every 2 ms: rows IRQ 24 and LOC, softirq TIMER; task
    /// 100 ("hog", SCHED_OTHER) and task 200 ("other").
    fn layout() -> Layout {
        Layout {
            cpus: vec![1],
            irqs: vec![
                ("24".into(), "IR-PCI-MSI 524288-edge nvme0q1".into()),
                ("LOC".into(), "Local timer interrupts".into()),
            ],
            softirqs: vec!["TIMER".into()],
            tasks: [
                (100, (100, "hog".into(), 0, None)),
                (200, (200, "other".into(), 0, None)),
            ]
            .into_iter()
            .collect(),
        }
    }

    /// A sample read from `at` to `at` + 50 µs.
    fn sample(at: u64, irq24: u64, loc: u64, steal: u64, tasks: &[(u32, u32, u64)]) -> Sample {
        Sample {
            at_ns: at,
            done_ns: at + 50_000,
            irqs: vec![irq24, loc],
            softirqs: vec![0],
            steal_ns: vec![steal],
            tasks: tasks
                .iter()
                .map(|&(tid, cpu, runtime_ns)| crate::probe::TaskReading {
                    tid,
                    cpu,
                    runtime_ns,
                    migrations: Some(0),
                })
                .collect(),
        }
    }

    const OTHER: Lining = Lining {
        own_pid: 1,
        own_timer_ns: None,
        rt_throttle: None,
        rt_priority: None,
    };

    /// The gap `(start, at, length)` ns on CPU 1 of [`layout`] and
    /// [`samples`], lined up for another process.
    fn gap_on_1(gap: (u64, u64, u64)) -> TimedGap {
        line_up(&layout(), &samples(), 1, gap, &OTHER)
    }

    /// Samples at 0, 2, 4 and 6 ms: IRQ 24 fires 5 times on CPU 1 in the
    /// first window and once in the second; steal time advances by one
    /// tick (10 ms) in the first window only; task 200 runs 2 ms in the
    /// second window on CPU 0.
    fn samples() -> Vec<Sample> {
        vec![
            sample(0, 10, 100, 0, &[(100, 1, 0), (200, 0, 0)]),
            sample(2_000_000, 15, 100, 10_000_000, &[(100, 1, 0), (200, 0, 0)]),
            sample(
                4_000_000,
                16,
                100,
                10_000_000,
                &[(100, 1, 0), (200, 0, 2_000_000)],
            ),
            sample(
                6_000_000,
                16,
                100,
                10_000_000,
                &[(100, 1, 1_500_000), (200, 0, 2_000_000)],
            ),
        ]
    }

    /// A 100 µs gap inside the second window is the one IRQ 24 interrupt
    /// of that window (not the first window's five); the task that ran on
    /// CPU 0 in it and the steal time of the first window are not blamed.
    #[test]
    fn a_gap_is_what_changed_in_its_window() {
        let g = gap_on_1((2_500_000, 500_000, 100_000));
        assert_eq!(g.window_ns, Some(2_050_000));
        let irq = Source::Irq {
            irq: 24,
            name: "nvme0q1".into(),
            count: 1,
            managed: None,
            pending: false,
        };
        assert_eq!(g.sources, vec![irq.clone()]);
        assert_eq!(g.likely_source, Some(irq));
    }

    /// A gap in the first window sees the steal time that advanced there.
    #[test]
    fn steal_only_in_its_own_window() {
        let g = gap_on_1((500_000, 500_000, 100_000));
        assert_eq!(g.sources[0], Source::Steal { ns: 10_000_000 });
        let later = gap_on_1((4_500_000, 4_500_000, 1_400_000));
        assert!(
            !later
                .sources
                .iter()
                .any(|s| matches!(s, Source::Steal { .. })),
            "{later:?}"
        );
    }

    /// A 1.4 ms gap in the third window, where task 100 ran 1.5 ms on
    /// CPU 1: that task, by PID.
    #[test]
    fn a_task_on_the_cpu_is_the_cause() {
        let g = gap_on_1((4_500_000, 4_500_000, 1_400_000));
        assert!(
            matches!(
                &g.likely_source,
                Some(Source::Task {
                    pid: 100,
                    runtime_ns: 1_500_000,
                    ..
                })
            ),
            "{g:?}"
        );
        // Task 200 ran on CPU 0 (its last CPU at both ends): never on CPU 1.
        let g = gap_on_1((2_500_000, 500_000, 1_000_000));
        assert!(
            !g.sources.iter().any(|s| matches!(s, Source::Task { .. })),
            "{g:?}"
        );
    }

    /// A gap before the first sample or after the last: not sampled.
    #[test]
    fn a_gap_outside_the_samples_is_not_sampled() {
        let g = gap_on_1((5_990_000, 0, 100_000));
        assert_eq!(g.window_ns, None);
        assert!(g.sources.is_empty() && g.likely_source.is_none());
    }

    /// Wakeup mode: one local timer interrupt per deadline of the probe's
    /// 1 ms timer in the window is the probe's own; only the rest is noise.
    #[test]
    fn the_probes_own_timer_is_not_noise() {
        let own = Lining {
            own_timer_ns: Some(1_000_000),
            ..OTHER
        };
        let mut s = samples();
        // 3 deadlines in the 2.05 ms window (ceil): LOC +3 is the probe's.
        s[2].irqs[1] = 103;
        s[3].irqs[1] = 103;
        let g = line_up(&layout(), &s, 1, (2_500_000, 500_000, 100_000), &own);
        assert!(
            !g.sources
                .iter()
                .any(|x| matches!(x, Source::Interrupt { .. })),
            "{g:?}"
        );
        s[2].irqs[1] = 104;
        let g = line_up(&layout(), &s, 1, (2_500_000, 500_000, 100_000), &own);
        assert!(
            g.sources.contains(&Source::Interrupt {
                label: "LOC".into(),
                name: "Local timer interrupts".into(),
                count: 1
            }),
            "{g:?}"
        );
    }

    /// A spinning SCHED_FIFO 50 probe stopped 50 ms by RT throttling
    /// (950 ms of every 1 s): the gap is throttling, and the SCHED_OTHER
    /// task that ran on the CPU meanwhile is not its cause.
    #[test]
    fn throttled_time_is_throttling() {
        let fifo = Lining {
            rt_throttle: Some((950_000, 1_000_000)),
            rt_priority: Some(50),
            ..OTHER
        };
        let s = vec![
            sample(0, 10, 100, 0, &[(100, 1, 0)]),
            sample(52_000_000, 10, 100, 0, &[(100, 1, 49_000_000)]),
        ];
        let g = line_up(&layout(), &s, 1, (1_000_000, 1_000_000, 50_000_000), &fifo);
        let throttling = Source::RtThrottling {
            runtime_us: 950_000,
            period_us: 1_000_000,
        };
        assert_eq!(g.sources, vec![throttling.clone()]);
        assert_eq!(g.likely_source, Some(throttling));
    }

    /// Three tasks took turns on the CPU in a 30 ms gap, none for half of
    /// it (12, 9 and 6 ms): the gap is theirs, named by the busiest.
    #[test]
    fn tasks_taking_turns_name_the_busiest() {
        let mut l = layout();
        l.tasks.insert(300, (300, "cc1".into(), 0, None));
        let s = vec![
            sample(0, 10, 100, 0, &[(100, 1, 0), (200, 1, 0), (300, 1, 0)]),
            sample(
                64_000_000,
                10,
                100,
                0,
                &[
                    (100, 1, 12_000_000),
                    (200, 1, 9_000_000),
                    (300, 1, 6_000_000),
                ],
            ),
        ];
        let g = line_up(&l, &s, 1, (1_000_000, 1_000_000, 30_000_000), &OTHER);
        assert!(
            matches!(
                &g.likely_source,
                Some(Source::Task {
                    pid: 100,
                    runtime_ns: 12_000_000,
                    ..
                })
            ),
            "{g:?}"
        );
        // 12 + 9 + 6 ms do not make half of a 60 ms gap.
        let g = line_up(&l, &s, 1, (1_000_000, 1_000_000, 60_000_000), &OTHER);
        assert_eq!(g.window_ns, Some(64_050_000));
        assert_eq!(g.likely_source, None);
    }

    fn event(kind: NoiseKind, cpu: u32, id: u32, name: &str, end_ns: u64, dur: u64) -> NoiseEvent {
        NoiseEvent {
            kind,
            cpu,
            id,
            name: name.into(),
            end_ns,
            duration_ns: dur,
        }
    }

    /// A 5 ms gap from 10.000 s to 10.005 s on CPU 2: the hog (TID 300),
    /// whose thread_noise (4.9 ms net) ended at 10.005 s, and a local timer
    /// interrupt nested in it (its 60 µs taken out of the hog's net time, as
    /// osnoise-tracer.rst says the values are net), are its sources, the hog
    /// named; the probe's own thread (TID 77) that ran before it, the idle
    /// task, an IRQ on CPU 3 and an IRQ 50 µs after the gap (beyond the 2 µs
    /// slack) are not.
    #[test]
    fn a_gap_is_named_by_the_events_in_it() {
        let own = std::collections::BTreeSet::from([77]);
        let events = vec![
            event(
                NoiseKind::Thread,
                2,
                77,
                "pinrun-probe2",
                10_000_000_000,
                900_000_000,
            ),
            event(
                NoiseKind::Thread,
                2,
                0,
                "swapper/2",
                10_000_000_000,
                1_000_000,
            ),
            event(
                NoiseKind::Irq,
                2,
                236,
                "local_timer",
                10_002_000_000,
                60_000,
            ),
            event(NoiseKind::Thread, 2, 300, "hog", 10_005_000_000, 4_900_000),
            event(NoiseKind::Irq, 3, 24, "virtio0", 10_003_000_000, 10_000),
            event(NoiseKind::Irq, 2, 4, "ttyS0", 10_005_060_000, 5_000),
        ];
        let g = trace_gap(&events, 2, (10_000_000_000, 100, 5_000_000), &own);
        let hog = TracedSource {
            kind: NoiseKind::Thread,
            id: 300,
            name: "hog".into(),
            count: 1,
            ns: 4_900_000,
        };
        let timer = TracedSource {
            kind: NoiseKind::Irq,
            id: 236,
            name: "local_timer".into(),
            count: 1,
            ns: 60_000,
        };
        assert_eq!(g.sources, vec![hog.clone(), timer]);
        assert_eq!(g.named, Some(hog));
        assert_eq!((g.ns, g.at_ns), (5_000_000, 100));
        // A 3 µs gap that two serial interrupts fell in, 1 µs before and
        // after it (within the slack): both counted, their time within
        // the gap's length.
        let events = vec![
            event(NoiseKind::Irq, 2, 4, "ttyS0", 20_000_002_000, 2_000),
            event(NoiseKind::Irq, 2, 4, "ttyS0", 20_000_004_000, 1_500),
        ];
        let g = trace_gap(&events, 2, (20_000_001_000, 10_000_000_000, 3_000), &own);
        assert_eq!(
            g.named.as_ref().map(|s| (s.id, s.count, s.ns)),
            Some((4, 2, 3_000))
        );
        // Nothing the kernel saw: no source.
        let g = trace_gap(&events, 2, (30_000_000_000, 0, 1_000_000), &own);
        assert!(g.sources.is_empty() && g.named.is_none());
    }

    /// The slack: 2 µs, plus 50 ppm of the gap's time after the start
    /// (50 µs at 1 s, 3 ms at 60 s).
    #[test]
    fn the_slack_grows_with_the_time_since_the_start() {
        assert_eq!(trace_slack_ns(0), 2_000);
        assert_eq!(trace_slack_ns(1_000_000_000), 52_000);
        assert_eq!(trace_slack_ns(60_000_000_000), 3_002_000);
    }

    /// The TSC only when invariant and the kernel's clocksource (oslat
    /// reads it on x86; the kernel demotes an unstable one).
    #[test]
    fn clock_choice_follows_the_anchors() {
        let facts = |flags: &str, source: &str| ClockFacts {
            cpuinfo_flags: flags.into(),
            clocksource: source.into(),
        };
        let flags = "fpu tsc constant_tsc nonstop_tsc rdtscp";
        assert_eq!(spin_clock(&facts(flags, "tsc\n")), ProbeClock::Tsc);
        assert_eq!(spin_clock(&facts(flags, "hpet")), ProbeClock::MonotonicRaw);
        assert_eq!(
            spin_clock(&facts("fpu tsc constant_tsc", "tsc")),
            ProbeClock::MonotonicRaw
        );
    }
}
