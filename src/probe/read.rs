//! What the sampler of attribution in time reads (issue 36), every
//! [`super::sample_period_ns`] from a housekeeping CPU while the probe
//! runs: the probed CPUs' columns of `/proc/interrupts` and
//! `/proc/softirqs`, their steal time (`/proc/stat`), and each candidate
//! task's CPU (`/proc/PID/task/TID/stat` field 39, `processor`) and run
//! time (`schedstat`'s first value, ns; proc(5)). A candidate is a task,
//! not pinrun's, whose last CPU was a probed one when the sampler looked
//! ([`candidates`]). Parsed with the core's parsers
//! (`crate::system::noise`); every file through [`Root`].

use super::{Layout, Sample};
use crate::system::Root;
use crate::system::noise::{parse_counters, parse_steal, parse_task_stat, read_tasks};
use std::collections::BTreeMap;

/// The layout of the samples of `cpus`: every row of `/proc/interrupts`
/// and `/proc/softirqs` now (the candidate tasks are added by
/// [`candidates`]).
pub fn layout(root: &Root, cpus: &[u32]) -> Layout {
    let rows = |path: &str| {
        root.read(path)
            .map(|t| parse_counters(&t))
            .unwrap_or_default()
            .rows
    };
    Layout {
        cpus: cpus.to_vec(),
        irqs: rows("/proc/interrupts")
            .into_iter()
            .map(|(label, row)| (label, row.desc))
            .collect(),
        softirqs: rows("/proc/softirqs").into_keys().collect(),
        tasks: Default::default(),
    }
}

/// The candidate tasks to sample until the next look: every task, other
/// than `own_pid`'s threads, whose last CPU (field 39 of its `stat`) is one
/// of `l.cpus` and whose run time changed since the last look (`seen`:
/// each task's run time then, updated here; before the first look, the
/// probe's first snapshot). A task asleep since the last look is not read
/// every sample: a few hundred small files would make each sample cost
/// milliseconds; one that wakes is sampled from the next look on (the
/// totals over the probe still count it). Every task is read, so the
/// sampler looks every [`super::RESCAN_EVERY`] samples only. Names stay
/// in `l.tasks` for the samples already taken.
pub fn candidates(
    root: &Root,
    l: &mut Layout,
    own_pid: u32,
    seen: &mut BTreeMap<u32, u64>,
) -> Vec<u32> {
    let mut active = Vec::new();
    for (tid, t) in read_tasks(root) {
        let was = seen.insert(tid, t.runtime_ns);
        if t.pid != own_pid && l.cpus.contains(&t.cpu) && was != Some(t.runtime_ns) {
            active.push(tid);
            l.tasks.entry(tid).or_insert((t.pid, t.comm, t.rt_priority));
        }
    }
    active
}

/// One sample of the counters `l` names and of the candidate tasks `tids`
/// (ascending; the times are the caller's), after `prev`: a candidate's `schedstat` is read every time, its `stat`
/// (its CPU) only when its run time changed since `prev` (a sleeping
/// task costs one small read); a task without `schedstat`
/// (`CONFIG_SCHED_INFO` off) is not sampled;
/// `None` when `/proc/interrupts`, `/proc/softirqs` or `/proc/stat`
/// cannot be read (the sampler skips it: a sample of zeros would make the
/// next window's deltas the whole counts). A row that went away reads 0
/// (deltas saturate: never taken for activity); a task that has exited is
/// left out.
pub fn sample(root: &Root, l: &Layout, tids: &[u32], prev: Option<&Sample>) -> Option<Sample> {
    let columns = |path: &str, labels: &mut dyn Iterator<Item = &String>| {
        let c = parse_counters(&root.read(path)?);
        let mut out = Vec::new();
        for label in labels {
            out.extend(l.cpus.iter().map(|&cpu| c.count(label, cpu)));
        }
        Some(out)
    };
    let irqs = columns(
        "/proc/interrupts",
        &mut l.irqs.iter().map(|(label, _)| label),
    )?;
    let softirqs = columns("/proc/softirqs", &mut l.softirqs.iter())?;
    let steal = parse_steal(&root.read("/proc/stat")?);
    // Samples list their tasks by TID, ascending (the layout's order).
    let last = |tid: u32| {
        let p = prev?;
        p.tasks
            .binary_search_by_key(&tid, |t| t.0)
            .ok()
            .map(|i| &p.tasks[i])
    };
    let tasks = tids
        .iter()
        .filter_map(|tid| Some((*tid, l.tasks.get(tid)?.0)))
        .filter_map(|(tid, pid)| {
            let dir = format!("/proc/{pid}/task/{tid}");
            let runtime: u64 = root
                .read(&format!("{dir}/schedstat"))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            // A task that has not run since the last sample is where it was.
            if let Some(&(_, cpu, was)) = last(tid)
                && was == runtime
            {
                return Some((tid, cpu, runtime));
            }
            let (_, cpu, _, _) = parse_task_stat(&root.read(&format!("{dir}/stat"))?)?;
            Some((tid, cpu, runtime))
        })
        .collect();
    Some(Sample {
        at_ns: 0,
        done_ns: 0,
        irqs,
        softirqs,
        steal_ns: l
            .cpus
            .iter()
            .map(|c| steal.get(c).copied().unwrap_or(0))
            .collect(),
        tasks,
    })
}
