//! Refusals of `--probe` (issue 20), decided before anything runs: which
//! CPUs the probe measures, and whether a spinning real-time probe could
//! lock a CPU up.

use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::noise::{CpuNoise, ProbeMode, ProbeRequest, Source, likely_source, unattributed_ns};
use crate::plan::Plan;
use crate::system::SystemState;
use crate::words::{cpus_phrase, duration_approx};
use std::collections::BTreeMap;

/// The CPUs the probe measures: the plan's CPUs, or, when the launch
/// keeps its affinity, the task's CPUs
/// ([`crate::plan::placement::task_cpus`]). One probe thread runs on each.
pub fn probed_cpus(sys: &SystemState, plan: &Plan) -> CpuSet {
    crate::plan::placement::command_cpus(sys, plan)
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

/// `--probe-max`: refuses (exit 125) when a probed CPU's worst gap (spin)
/// or latest wake-up (wakeup) exceeds `max_ns`, naming the CPU, the gap or
/// latency and its most likely source ([`likely_source`]) with the fix for
/// that kind of source.
pub fn gate(
    cpus: &[CpuNoise],
    sources: &BTreeMap<u32, Vec<Source>>,
    max_ns: u64,
    rt_throttle: Option<(i64, i64)>,
    rt_priority: Option<u32>,
) -> Result<()> {
    let Some(worst) = cpus
        .iter()
        .filter(|c| c.max_ns > max_ns)
        .max_by_key(|c| c.max_ns)
    else {
        return Ok(());
    };
    let cpu = worst.cpu;
    let likely = sources
        .get(&cpu)
        .and_then(|s| likely_source(s, worst.max_ns, rt_throttle, rt_priority));
    let (why, hint) = match &likely {
        Some(s @ Source::RtThrottling { .. }) => (
            format!("likely source: {}", s.words()),
            format!("a real-time task that never sleeps is stopped by RT throttling: give it an isolated CPU (--isolated) where kernel.sched_rt_runtime_us=-1 is safe, or let it sleep (--probe-mode wakeup shows what an event-driven program sees on CPU {cpu})"),
        ),
        Some(s @ Source::Task { pid, .. }) => (
            format!("likely source: {}", s.words()),
            format!("move pid {pid} off CPU {cpu} (pinrun --pid {pid} --cpus LIST, every thread), or choose a CPU where nothing else runs (--isolated)"),
        ),
        Some(s @ Source::Steal { .. }) => (
            format!("likely source: {}", s.words()),
            "on a virtual machine, ask for dedicated (pinned) host CPUs for this guest, or probe again when the host is less loaded".to_string(),
        ),
        Some(
            s @ Source::Irq {
                irq,
                managed: Some(true),
                ..
            },
        ) => (
            format!("likely source: {}", s.words()),
            format!("IRQ {irq} is kernel-managed (a queue of CPU {cpu}; the kernel refuses to move it): it fires for I/O submitted on CPU {cpu}, so keep the device's I/O off it, or boot with isolcpus=managed_irq,{cpu} (it moves managed IRQs whose mask holds a housekeeping CPU)"),
        ),
        Some(
            s @ Source::Irq {
                irq, pending: true, ..
            },
        ) => (
            format!("likely source: {}", s.words()),
            format!("IRQ {irq} was steered off CPU {cpu} but was still delivered there until its next interrupt (x86 moves it then): probe again; it no longer fires there"),
        ),
        Some(s @ Source::Irq { irq, .. }) => (
            format!("likely source: {}", s.words()),
            format!("steer IRQ {irq} to a housekeeping CPU (as root: echo LIST > /proc/irq/{irq}/smp_affinity_list; irqaffinity= at boot), or choose another CPU"),
        ),
        Some(s @ Source::Interrupt { label, .. }) if label == "LOC" => (
            format!("likely source: {}", s.words()),
            format!("the scheduler tick: boot with nohz_full={cpu} (and isolcpus) so that a single task there runs without it"),
        ),
        Some(s) => (
            format!("likely source: {}", s.words()),
            format!("choose an isolated CPU (--isolated), or see pinrun --probe -v for every source on CPU {cpu}"),
        ),
        None if worst.mode == ProbeMode::Wakeup => (
            "unattributed: no task, steal time or interrupt seen explains it: preemption by short-lived tasks, a non-preemptible kernel section (see the preempt-model finding), SMIs, or a hypervisor that reports no steal time".to_string(),
            format!("see pinrun --probe -v for every source on CPU {cpu}; check the BIOS's power and SMI settings, or on a virtual machine the host's load"),
        ),
        None => (
            format!(
                "unattributed: no task, steal time or throttling seen explains it ({} of {} lost unexplained): preemption by short-lived tasks, SMIs, or a hypervisor that reports no steal time",
                duration_approx(unattributed_ns(
                    sources.get(&cpu).map_or(&[][..], Vec::as_slice),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Policy, SchedRequest};
    use crate::testkit::Machine;

    fn plan(cpus: &str, policy: Option<Policy>) -> Plan {
        Plan {
            cpus: Some(CpuSet::parse(cpus).unwrap()),
            cores: vec![],
            nodes: Default::default(),
            memory: None,
            sched: SchedRequest {
                policy,
                ..Default::default()
            },
            reasons: vec![],
            omp: None,
            thread_map: None,
            choice: None,
        }
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
        let e = gate(&cpus, &sources, 20_000, None, None).unwrap_err();
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
        assert!(gate(&cpus, &sources, 60_000, None, None).is_ok());
        // A managed queue IRQ (as --steer-irqs found it): no write hint.
        crate::noise::mark_managed(sources.get_mut(&2).unwrap(), |_| Some(true));
        let e = gate(&cpus, &sources, 20_000, None, None).unwrap_err();
        assert!(
            e.message.contains("IRQ 24 (nvme0q1, kernel-managed) ×12"),
            "{}",
            e.message
        );
        let hint = e.hint.unwrap_or_default();
        assert!(!hint.contains("smp_affinity_list"), "{hint}");
        assert!(hint.contains("isolcpus=managed_irq,2"), "{hint}");
        // A pending move: already steered, no write hint either.
        crate::noise::mark_managed(sources.get_mut(&2).unwrap(), |_| Some(false));
        crate::noise::mark_pending(sources.get_mut(&2).unwrap(), &[24]);
        let e = gate(&cpus, &sources, 20_000, None, None).unwrap_err();
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
        };
        let irq = Source::Irq {
            irq: 36,
            name: "virtio0".into(),
            count: 21,
            managed: None,
            pending: false,
        };
        let sources = BTreeMap::from([(2, vec![task, irq.clone()])]);
        let e = gate(&cpus, &sources, 1_000_000, None, None).unwrap_err();
        assert!(
            e.hint
                .as_deref()
                .unwrap_or("")
                .starts_with("move pid 4242 off CPU 2 (pinrun --pid 4242 --cpus LIST"),
            "{:?}",
            e.hint
        );
        let sources = BTreeMap::from([(2, vec![irq.clone()])]);
        let e = gate(&cpus, &sources, 1_000_000, None, None).unwrap_err();
        assert!(!e.message.contains("IRQ 36"), "{}", e.message);
        assert!(
            e.message.contains("; unattributed: no task, steal time or throttling seen explains it (20.0ms of 20.0ms lost unexplained)"),
            "{}",
            e.message
        );
        let sources = BTreeMap::from([(2, vec![Source::Steal { ns: 30_000_000 }, irq])]);
        let e = gate(&cpus, &sources, 1_000_000, None, None).unwrap_err();
        assert!(
            e.message.contains("likely source: steal time 30.0ms"),
            "{}",
            e.message
        );
        assert!(e.hint.as_deref().unwrap_or("").contains("virtual machine"));
    }
}
