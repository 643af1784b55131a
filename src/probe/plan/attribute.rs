//! The noise probe's attribution (issue 20, issue 36): what disturbed a
//! probed CPU, from two snapshots of the kernel's counters
//! ([`attribute`]: device IRQs, per-CPU interrupts, softirqs, tasks, steal
//! time), the marks `--steer-irqs` puts on its IRQs ([`mark_managed`],
//! [`mark_pending`]), the time the measured sources do not explain
//! ([`unattributed_ns`]) and the likely cause of a gap ([`likely_source`]).
//! Pure decisions over the core's vocabulary (`crate::noise`), part of the
//! probe wing's plan layer: only the probe uses them (issue 32: layer 0
//! names, it does not decide).

use crate::noise::{Counters, Snapshot, Source};

fn deltas(before: &Counters, after: &Counters, cpu: u32) -> Vec<(String, String, u64)> {
    after
        .rows
        .iter()
        .filter_map(|(label, row)| {
            let d = after
                .count(label, cpu)
                .saturating_sub(before.count(label, cpu));
            (d > 0).then(|| (label.clone(), row.desc.clone(), d))
        })
        .collect()
}

/// The IRQ name of a `/proc/interrupts` description: its last word
/// (`IR-PCI-MSI 524288-edge nvme0q1` → `nvme0q1`), as `show_interrupts()`
/// prints the action names last.
fn irq_name(desc: &str) -> String {
    desc.split_whitespace().last().unwrap_or("").to_string()
}

/// Marks each device IRQ of `sources` with what `managed` says of it
/// (`--steer-irqs`' plan: [`crate::steer::plan::managed`]); an IRQ it does
/// not know keeps its mark.
pub fn mark_managed(sources: &mut [Source], managed: impl Fn(u32) -> Option<bool>) {
    for s in sources {
        if let Source::Irq {
            irq, managed: m, ..
        } = s
            && let Some(known) = managed(*irq)
        {
            *m = Some(known);
        }
    }
}

/// Marks each device IRQ of `sources` whose number is in `pending` (the
/// IRQs a steering launch left with a pending move) as such.
pub fn mark_pending(sources: &mut [Source], pending: &[u32]) {
    for s in sources {
        if let Source::Irq {
            irq, pending: p, ..
        } = s
        {
            *p = pending.contains(irq);
        }
    }
}

/// What disturbed `cpu` between two snapshots: device IRQs, per-CPU
/// interrupts, softirqs (each with its count) and the tasks other than
/// `own_pid`'s (the probe's threads) that ran on it (by their last CPU
/// in either snapshot), most first within each kind: tasks, then
/// device IRQs, per-CPU interrupts, softirqs.
pub fn attribute(before: &Snapshot, after: &Snapshot, cpu: u32, own_pid: u32) -> Vec<Source> {
    let steal = after
        .steal_ns
        .get(&cpu)
        .zip(before.steal_ns.get(&cpu))
        .map_or(0, |(a, b)| a.saturating_sub(*b));
    let mut tasks: Vec<Source> = after
        .tasks
        .values()
        .filter(|t| t.pid != own_pid)
        .filter_map(|t| {
            let old = before.tasks.get(&t.tid);
            let ran_here = t.cpu == cpu || old.is_some_and(|o| o.cpu == cpu);
            let d = t
                .runtime_ns
                .saturating_sub(old.map_or(t.runtime_ns, |o| o.runtime_ns));
            (ran_here && d > 0).then(|| Source::Task {
                pid: t.pid,
                tid: t.tid,
                comm: t.comm.clone(),
                runtime_ns: d,
                rt_priority: t.rt_priority,
                kernel: t.kernel,
            })
        })
        .collect();
    tasks.sort_by_key(|s| match s {
        Source::Task { runtime_ns, .. } => std::cmp::Reverse(*runtime_ns),
        _ => std::cmp::Reverse(0),
    });
    let mut irqs = Vec::new();
    let mut percpu = Vec::new();
    for (label, desc, count) in deltas(&before.interrupts, &after.interrupts, cpu) {
        match label.parse::<u32>() {
            Ok(irq) => irqs.push(Source::Irq {
                irq,
                name: irq_name(&desc),
                count,
                managed: None,
                pending: false,
            }),
            Err(_) => percpu.push(Source::Interrupt {
                label,
                name: desc,
                count,
            }),
        }
    }
    let mut soft: Vec<Source> = deltas(&before.softirqs, &after.softirqs, cpu)
        .into_iter()
        .map(|(name, _, count)| Source::Softirq { name, count })
        .collect();
    let count = |s: &Source| match s {
        Source::Irq { count, .. }
        | Source::Interrupt { count, .. }
        | Source::Softirq { count, .. } => std::cmp::Reverse(*count),
        Source::Task { .. } | Source::RtThrottling { .. } | Source::Steal { .. } => {
            std::cmp::Reverse(0)
        }
    };
    irqs.sort_by_key(count);
    percpu.sort_by_key(count);
    soft.sort_by_key(count);
    tasks.extend(irqs);
    tasks.extend(percpu);
    tasks.extend(soft);
    if steal > 0 {
        tasks.insert(0, Source::Steal { ns: steal });
    }
    tasks
}

/// The longest gap an interrupt counter is blamed for: 1 ms. A hard or
/// soft interrupt handler that holds a CPU that long is itself a bug; a
/// longer gap with no task, steal time or throttling to explain it was a
/// preemption the snapshots did not see (a task that lived and died
/// between them), the hypervisor, or firmware (SMIs): unattributed.
pub const COUNTER_GAP_MAX_NS: u64 = 1_000_000;

/// The part of `lost_ns` the time-measured `sources` (the tasks' run time
/// and steal time on the CPU) do not explain, ns: what short-lived tasks,
/// interrupts (counted, never timed), SMIs or a hypervisor that does not
/// report steal time took.
pub fn unattributed_ns(sources: &[Source], lost_ns: u64) -> u64 {
    let explained: u64 = sources
        .iter()
        .map(|s| match s {
            Source::Task { runtime_ns, .. } => *runtime_ns,
            Source::Steal { ns } => *ns,
            _ => 0,
        })
        .fold(0, u64::saturating_add);
    lost_ns.saturating_sub(explained)
}

/// The most likely cause of a CPU's worst gap among its `sources` (from
/// [`attribute`]), a heuristic in this order: steal time or a task that
/// ran on the CPU for at least half the worst gap (a gap that long is a
/// preemption; of the two, the longer), a task only when, if the probe ran
/// at real-time priority `rt_priority`, it has at least that priority (a
/// lower one cannot preempt it); RT throttling, when a
/// spinning probe ran under a real-time policy with throttling on
/// (`rt_throttle`: runtime and period, µs) and the gap is between 1 ms and
/// 110 % of what throttling stops it for (`period - runtime`, less when
/// `RT_RUNTIME_SHARE` lends it other CPUs' runtime); the busiest device
/// IRQ; the busiest
/// per-CPU interrupt other than the local timer (IPIs); the local timer
/// (`LOC`); the busiest softirq — these counters only for a gap below
/// [`COUNTER_GAP_MAX_NS`]. `None`: unattributed.
pub fn likely_source(
    sources: &[Source],
    worst_gap_ns: u64,
    rt_throttle: Option<(i64, i64)>,
    rt_priority: Option<u32>,
) -> Option<Source> {
    let task = sources.iter().find(|s| {
        matches!(s, Source::Task { runtime_ns, rt_priority: prio, .. }
            if *runtime_ns * 2 >= worst_gap_ns && rt_priority.is_none_or(|p| *prio >= p))
    });
    let steal = sources
        .iter()
        .find(|s| matches!(s, Source::Steal { ns } if *ns * 2 >= worst_gap_ns));
    let task = match (steal, task) {
        (Some(Source::Steal { ns }), Some(t @ Source::Task { runtime_ns, .. }))
            if runtime_ns > ns =>
        {
            Some(t)
        }
        (Some(st), _) => Some(st),
        (None, t) => t,
    };
    if task.is_none()
        && let Some((runtime_us, period_us)) = rt_throttle
        && (0..period_us).contains(&runtime_us)
        && worst_gap_ns >= 1_000_000
        && worst_gap_ns * 10 <= (period_us - runtime_us) as u64 * 1000 * 11
    {
        return Some(Source::RtThrottling {
            runtime_us,
            period_us,
        });
    }
    if task.is_some() || worst_gap_ns >= COUNTER_GAP_MAX_NS {
        return task.cloned();
    }
    task.or_else(|| sources.iter().find(|s| matches!(s, Source::Irq { .. })))
        .or_else(|| {
            sources
                .iter()
                .find(|s| matches!(s, Source::Interrupt { label, .. } if label != "LOC"))
        })
        .or_else(|| {
            sources
                .iter()
                .find(|s| matches!(s, Source::Interrupt { .. }))
        })
        .or_else(|| sources.iter().find(|s| matches!(s, Source::Softirq { .. })))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::{CounterRow, TaskTime};

    /// `--steer-irqs`' plan marks the IRQs it knows: managed queue IRQs
    /// are named so, moved ones are marked unmanaged, others untouched.
    #[test]
    fn steering_marks_managed_irqs() {
        let irq = |n: u32, name: &str| Source::Irq {
            irq: n,
            name: name.into(),
            count: 7,
            managed: None,
            pending: false,
        };
        let mut s = vec![irq(42, "nvme0q10"), irq(32, "nvme0q0"), irq(9, "acpi")];
        mark_managed(&mut s, |n| match n {
            42 => Some(true),
            32 => Some(false),
            _ => None,
        });
        let words: Vec<String> = s.iter().map(Source::words).collect();
        assert_eq!(
            words,
            [
                "IRQ 42 (nvme0q10, kernel-managed) ×7",
                "IRQ 32 (nvme0q0) ×7",
                "IRQ 9 (acpi) ×7"
            ]
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json[0]["managed"], true);
        assert_eq!(json[1]["managed"], false);
        assert!(json[2].get("managed").is_none());
        assert!(json[1].get("pending").is_none());
        // nvme0q0, steered off while its effective affinity was still on
        // the CPU: its one last interrupt there is named so.
        mark_pending(&mut s, &[32]);
        assert_eq!(s[1].words(), "IRQ 32 (nvme0q0, steered, move pending) ×7");
        assert_eq!(serde_json::to_value(&s[1]).unwrap()["pending"], true);
    }
    fn counters(cpus: &[u32], rows: &[(&str, &[u64], &str)]) -> Counters {
        Counters {
            cpus: cpus.to_vec(),
            rows: rows
                .iter()
                .map(|(l, c, d)| {
                    (
                        l.to_string(),
                        CounterRow {
                            counts: c.to_vec(),
                            desc: d.to_string(),
                        },
                    )
                })
                .collect(),
        }
    }

    fn task(pid: u32, tid: u32, cpu: u32, runtime_ns: u64) -> (u32, TaskTime) {
        (
            tid,
            TaskTime {
                pid,
                tid,
                comm: format!("t{tid}"),
                cpu,
                runtime_ns,
                rt_priority: 0,
                kernel: None,
            },
        )
    }

    #[test]
    fn attribution_is_the_delta_on_the_cpu() {
        let before = Snapshot {
            interrupts: counters(
                &[0, 1],
                &[
                    ("24", &[5, 10], "IR-PCI-MSI 524288-edge nvme0q1"),
                    ("LOC", &[100, 200], "Local timer interrupts"),
                    ("RES", &[1, 1], "Rescheduling interrupts"),
                ],
            ),
            softirqs: counters(&[0, 1], &[("TIMER", &[7, 7], "")]),
            tasks: [
                task(10, 10, 1, 1000),
                task(10, 11, 0, 5),
                task(99, 99, 1, 0),
            ]
            .into_iter()
            .collect(),
            steal_ns: [(0, 0), (1, 10_000_000)].into_iter().collect(),
        };
        let after = Snapshot {
            interrupts: counters(
                &[0, 1],
                &[
                    ("24", &[5, 22], "IR-PCI-MSI 524288-edge nvme0q1"),
                    ("LOC", &[110, 450], "Local timer interrupts"),
                    ("RES", &[1, 1], "Rescheduling interrupts"),
                ],
            ),
            softirqs: counters(&[0, 1], &[("TIMER", &[7, 9], "")]),
            tasks: [
                task(10, 10, 1, 3_001_000),
                task(10, 11, 0, 500),
                task(99, 99, 1, 7_000_000),
            ]
            .into_iter()
            .collect(),
            steal_ns: [(0, 0), (1, 10_000_000)].into_iter().collect(),
        };
        let s = attribute(&before, &after, 1, 99);
        assert_eq!(
            s,
            vec![
                Source::Task {
                    pid: 10,
                    tid: 10,
                    comm: "t10".into(),
                    runtime_ns: 3_000_000,
                    rt_priority: 0,
                    kernel: None,
                },
                Source::Irq {
                    irq: 24,
                    name: "nvme0q1".into(),
                    count: 12,
                    managed: None,
                    pending: false,
                },
                Source::Interrupt {
                    label: "LOC".into(),
                    name: "Local timer interrupts".into(),
                    count: 250
                },
                Source::Softirq {
                    name: "TIMER".into(),
                    count: 2
                },
            ]
        );
        // A 5 ms gap: the task ran 3 ms on the CPU, so it is the likely cause.
        assert!(matches!(
            likely_source(&s, 5_000_000, None, None),
            Some(Source::Task { pid: 10, .. })
        ));
        // A 20 ms gap: the task's 3 ms do not explain it, and no interrupt
        // handler holds a CPU that long: unattributed, not "IRQ 24 ×12"
        // (the field report: 93 ms lost blamed on an IRQ ×21).
        assert_eq!(likely_source(&s, 20_000_000, None, None), None);
        // Below 1 ms the counters are candidates: the device IRQ.
        assert!(matches!(
            likely_source(&s, 500_000, None, Some(10)),
            Some(Source::Irq { irq: 24, .. })
        ));
        // A 48 ms gap is throttling's 50 ms stop (sched-rt(7)), not the
        // SCHED_OTHER task that ran meanwhile (it cannot preempt FIFO 10); so
        // is a 20 ms one (RT_RUNTIME_SHARE shortens the stop); a 60 ms one
        // is longer than throttling stops anything.
        let throttle = Some((950_000, 1_000_000));
        assert!(matches!(
            likely_source(&s, 48_000_000, throttle, Some(10)),
            Some(Source::RtThrottling { .. })
        ));
        assert!(matches!(
            likely_source(&s, 20_000_000, throttle, Some(10)),
            Some(Source::RtThrottling { .. })
        ));
        assert_eq!(likely_source(&s, 60_000_000, throttle, Some(10)), None);
        // A SCHED_OTHER task cannot preempt a FIFO 10 probe: not its cause.
        assert_eq!(likely_source(&s, 5_000_000, None, Some(10)), None);
        // Throttling off (-1): never.
        assert_eq!(
            likely_source(&s, 48_000_000, Some((-1, 1_000_000)), None),
            None
        );
        // The time lost that the task (3 ms) does not explain.
        assert_eq!(unattributed_ns(&s, 93_000_000), 90_000_000);
        assert_eq!(unattributed_ns(&s, 2_000_000), 0);
    }

    /// Steal time (/proc/stat, per CPU) is a source on a virtual machine:
    /// its delta on the CPU, first; the likely cause of a gap it covers
    /// half of (over a task that ran less); it explains lost time.
    #[test]
    fn steal_time_is_attributed() {
        let snap = |steal: u64, run: u64| Snapshot {
            tasks: [task(10, 10, 1, run)].into_iter().collect(),
            steal_ns: [(1, steal)].into_iter().collect(),
            ..Default::default()
        };
        let s = attribute(&snap(10_000_000, 0), &snap(90_000_000, 3_000_000), 1, 99);
        assert_eq!(s[0], Source::Steal { ns: 80_000_000 });
        assert!(matches!(
            s[1],
            Source::Task {
                runtime_ns: 3_000_000,
                ..
            }
        ));
        assert_eq!(
            likely_source(&s, 93_000_000, None, None),
            Some(Source::Steal { ns: 80_000_000 })
        );
        // A 5 ms gap: both cover half of it; steal ran longer.
        assert_eq!(
            likely_source(&s, 5_000_000, None, None),
            Some(Source::Steal { ns: 80_000_000 })
        );
        assert_eq!(unattributed_ns(&s, 93_000_000), 10_000_000);
        // No steal on another CPU, or without a reading: no source.
        let s = attribute(&snap(10_000_000, 0), &snap(10_000_000, 0), 1, 99);
        assert!(!s.iter().any(|x| matches!(x, Source::Steal { .. })));
        let s = attribute(&Snapshot::default(), &snap(10_000_000, 0), 1, 99);
        assert!(!s.iter().any(|x| matches!(x, Source::Steal { .. })));
    }
}
