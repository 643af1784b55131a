//! What `--probe` reads of the kernel (issue 20): the per-CPU counters
//! before and after the probe (`/proc/interrupts`, `/proc/softirqs`, every
//! task's CPU time and last CPU), and what decides the probe's clock
//! (`/proc/cpuinfo`'s flags, the current clocksource). Plain data for
//! `crate::noise`; every file through [`Root`].

use super::irq::{INTERRUPTS, SOFTIRQS, read_counters};
use super::root::Root;
use crate::noise::{Snapshot, TaskTime};
use std::collections::BTreeMap;

/// A task's `stat` line: (`comm`, field 39 `processor`, utime + stime in
/// clock ticks, field 40 `rt_priority`); the comm is between the first `(`
/// and the last `)`.
pub fn parse_task_stat(stat: &str) -> Option<(String, u32, u64, u32)> {
    let comm = super::threads::stat_comm(stat)?.to_string();
    // Fields after the comm start at field 3 (state).
    let f = super::threads::stat_fields(stat)?;
    let field = |n: usize| f.get(n - 3).and_then(|v| super::parse_count(v));
    let ticks = field(14)?.saturating_add(field(15)?);
    Some((
        comm,
        u32::try_from(field(39)?).ok()?,
        ticks,
        u32::try_from(field(40).unwrap_or(0)).unwrap_or(0),
    ))
}

/// `USER_HZ`: the unit of `stat`'s utime and stime (`sysconf(_SC_CLK_TCK)`,
/// 100 on every Linux architecture).
const USER_HZ_NS: u64 = 10_000_000;

/// Every task's CPU time and last CPU: `/proc/PID/task/TID/stat` (comm,
/// processor) and `schedstat` (run time in ns; without
/// `CONFIG_SCHED_INFO`, utime + stime from `stat`, in 10 ms ticks).
/// Tasks that exit while being read are skipped.
pub fn read_tasks(root: &Root) -> BTreeMap<u32, TaskTime> {
    let mut tasks = BTreeMap::new();
    for pid in root.numbered_entries("/proc", "") {
        let dir = format!("/proc/{pid}/task");
        for tid in root.numbered_entries(&dir, "") {
            let Some(stat) = root.read(&format!("{dir}/{tid}/stat")) else {
                continue;
            };
            let Some((comm, cpu, ticks, rt_priority)) = parse_task_stat(&stat) else {
                continue;
            };
            let runtime_ns = root
                .read(&format!("{dir}/{tid}/schedstat"))
                .and_then(|s| super::parse_count(s.split_whitespace().next()?))
                .unwrap_or(ticks.saturating_mul(USER_HZ_NS));
            tasks.insert(
                tid,
                TaskTime {
                    pid,
                    tid,
                    comm,
                    cpu,
                    runtime_ns,
                    rt_priority,
                    kernel: crate::noise::KernelThread::from_stat(&stat),
                },
            );
        }
    }
    tasks
}

/// The counters now. With `tasks`, every task too (a few thousand small
/// files on a busy machine).
pub fn snapshot(root: &Root, tasks: bool) -> Snapshot {
    let counters = |path: &str| read_counters(root, path).unwrap_or_default();
    Snapshot {
        interrupts: counters(INTERRUPTS),
        softirqs: counters(SOFTIRQS),
        tasks: if tasks {
            read_tasks(root)
        } else {
            BTreeMap::new()
        },
        steal_ns: root
            .read("/proc/stat")
            .map(|t| parse_steal(&t))
            .unwrap_or_default(),
    }
}

/// Steal time per CPU from `/proc/stat` (proc_stat(5), fs/proc/stat.c
/// `show_stat()`): each `cpuN` line's 8th value (after user, nice, system,
/// idle, iowait, irq, softirq), in USER_HZ ticks, as ns. The aggregate
/// `cpu` line and lines without a steal column (before Linux 2.6.11) are
/// skipped.
pub fn parse_steal(text: &str) -> BTreeMap<u32, u64> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let cpu = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            let steal = super::parse_count(f.nth(7)?)?;
            Some((cpu, steal.saturating_mul(USER_HZ_NS)))
        })
        .collect()
}

/// What the spin mode's clock is chosen from (`probe::plan::spin_clock`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClockFacts {
    /// The first `flags` line of `/proc/cpuinfo`, after its colon (empty
    /// when unreadable).
    pub cpuinfo_flags: String,
    /// `/sys/devices/system/clocksource/clocksource0/current_clocksource`
    /// (empty when unreadable).
    pub clocksource: String,
}

/// This machine's [`ClockFacts`].
pub fn clock_facts(root: &Root) -> ClockFacts {
    let cpuinfo_flags = root
        .read("/proc/cpuinfo")
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("flags"))
                .map(|l| l.split_once(':').map_or("", |(_, v)| v).to_string())
        })
        .unwrap_or_default();
    let clocksource = root
        .read_value("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .unwrap_or_default();
    ClockFacts {
        cpuinfo_flags,
        clocksource,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// proc_stat(5): `cpuN user nice system idle iowait irq softirq steal
    /// guest guest_nice`; the aggregate line is not a CPU; a line from a
    /// kernel without steal is skipped.
    #[test]
    fn steal_per_cpu() {
        let text = "cpu  100 0 50 9000 10 1 2 42 0 0\ncpu0 50 0 25 4500 5 1 1 40 0 0\ncpu3 50 0 25 4500 5 0 1 2 0 0\ncpu7 1 2 3 4\nintr 12345 0\n";
        let s = parse_steal(text);
        assert_eq!(
            s.into_iter().collect::<Vec<_>>(),
            vec![(0, 400_000_000), (3, 20_000_000)]
        );
    }

    /// proc_pid_stat(5): a comm with spaces and parentheses.
    #[test]
    fn task_stat_fields() {
        let stat = "4242 (a (b) c) R 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 12345 1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0";
        assert_eq!(parse_task_stat(stat), Some(("a (b) c".into(), 3, 300, 0)));
    }
}
