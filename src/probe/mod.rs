//! The noise probe (`--probe`, `--choose measured`; issues 20, 31, 36), a
//! wing in one folder (issue 32; ARCHITECTURE.md §2). Its files are its
//! layers, each using the core's layers up to its own and the wing's files
//! below it (checked by scripts/import-graph.sh): this file (the samples
//! of attribution in time, [`Layout`], [`Sample`]), [`read`] (one sample),
//! [`plan`] (which CPUs are
//! probed, what is refused as unsafe, the RT throttling that applies, the
//! `--probe-max` gate, each large gap lined up with the samples around it;
//! pure), [`report`] (text and JSON), [`apply`] (the
//! probe threads, the watchdog, the counters read around them) and [`run`]
//! (the flow the application layer calls). Its vocabulary and analysis are
//! the core's `noise` (the request is part of `request::Request`), its
//! counters are read by the core's `system::noise` (the dump replay and
//! `--show` read `/proc/interrupts` with the same parsers); the core
//! imports none of this folder but `app`, which calls [`run`].

pub mod apply;
pub mod plan;
pub mod read;
pub mod report;
pub mod run;

use crate::noise::{CounterRow, Counters, KernelThread, Snapshot, TaskTime};
use std::collections::BTreeMap;

/// Shortest period of the sampler of attribution in time (issue 36): 2 ms.
/// One sample reads `/proc/interrupts`, `/proc/softirqs`, `/proc/stat` and
/// two small files per candidate task (tens of µs each on a small
/// machine), from a housekeeping CPU; a gap is lined up with the two
/// samples around it, so a window is two to three periods long.
pub const SAMPLE_PERIOD_NS: u64 = 2_000_000;
/// Most samples one probe keeps: 8192 (the period grows for a longer
/// probe: [`sample_budget`]), about 1.5 KiB each with a few dozen
/// counter rows and candidate tasks on one probed CPU.
pub const MAX_SAMPLES: usize = 8192;
/// Most memory the samples of one probe take: 16 MiB (the counts of every
/// row on every probed CPU, [`sample_budget`]; locked by `mlockall(2)`
/// during the probe).
pub const MAX_SAMPLE_BYTES: usize = 16 << 20;
/// Every how many samples the sampler looks for new candidate tasks (every
/// task's last CPU, `/proc/PID/task/TID/stat` field 39): 50, about 0.1 s.
pub const RESCAN_EVERY: usize = 50;

/// The sampler's period (ns) and how many samples it keeps, for a probe
/// whose pre-heat, measurement and end last `whole_ns`, with samples of
/// `layout`: [`SAMPLE_PERIOD_NS`], longer when [`MAX_SAMPLES`]
/// or [`MAX_SAMPLE_BYTES`] would not cover `whole_ns` (a sample holds 8
/// bytes per row and probed CPU, 8 per CPU of steal, and about 16 per
/// candidate task, reckoned as 64 tasks), at least 2 samples.
pub fn sample_budget(whole_ns: u64, layout: &Layout) -> (u64, usize) {
    let cpus = layout.cpus.len().max(1);
    let per = 8 * (layout.irqs.len() + layout.softirqs.len() + 1) * cpus + 16 * 64 + 128;
    let cap = MAX_SAMPLES.min(MAX_SAMPLE_BYTES / per).max(2);
    let period = SAMPLE_PERIOD_NS.max(whole_ns / (cap as u64 - 1) + 1);
    (period, cap)
}

/// What each [`Sample`] holds, fixed when the sampler starts (a row that
/// appears later, an IRQ requested during the probe, is not sampled): the
/// probed CPUs, the rows of `/proc/interrupts` (label and description)
/// and `/proc/softirqs`, and the candidate tasks by TID (its PID, comm,
/// real-time priority).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The probed CPUs, the columns of every sample.
    pub cpus: Vec<u32>,
    /// `/proc/interrupts` rows: label (`LOC`, `24`) and description.
    pub irqs: Vec<(String, String)>,
    /// `/proc/softirqs` rows (`TIMER`, `NET_RX`).
    pub softirqs: Vec<String>,
    /// Candidate tasks by TID: (PID, comm, `rt_priority`, kernel thread
    /// kind).
    pub tasks: BTreeMap<u32, (u32, String, u32, Option<KernelThread>)>,
}

/// One reading of the sampler: its `CLOCK_MONOTONIC` time (ns) before the
/// first file was read (`at_ns`) and after the last (`done_ns`); the
/// counts of each [`Layout`] row on each probed CPU (row-major: row `r`,
/// CPU `k` at `r × cpus + k`); steal time per probed CPU (ns, 10 ms
/// resolution); and each candidate task read ([`TaskReading`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sample {
    /// `CLOCK_MONOTONIC` before the reads, ns.
    pub at_ns: u64,
    /// `CLOCK_MONOTONIC` after the reads, ns.
    pub done_ns: u64,
    /// `/proc/interrupts` counts, row-major over [`Layout::irqs`] × CPUs.
    pub irqs: Vec<u64>,
    /// `/proc/softirqs` counts, row-major over [`Layout::softirqs`] × CPUs.
    pub softirqs: Vec<u64>,
    /// Steal time per probed CPU, ns.
    pub steal_ns: Vec<u64>,
    /// Each candidate task read, by TID ascending.
    pub tasks: Vec<TaskReading>,
}

/// One candidate task in a [`Sample`]: what the kernel says of where and
/// how long it ran (proc(5)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskReading {
    /// Its TID.
    pub tid: u32,
    /// The CPU it is on or last ran on (`/proc/PID/task/TID/stat` field 39,
    /// `processor`: `task_cpu()`).
    pub cpu: u32,
    /// Its run time, ns (`se.sum_exec_runtime`: the first value of
    /// `schedstat`, or `se.sum_exec_runtime` of `sched`).
    pub runtime_ns: u64,
    /// How many times the kernel has moved it to another CPU
    /// (`se.nr_migrations` of `/proc/PID/task/TID/sched`: `set_task_cpu()`,
    /// kernel/sched/core.c, counts every change of its CPU); `None` where
    /// the kernel has no `sched` file (built without `CONFIG_SCHED_DEBUG`,
    /// an option of older kernels). Unchanged between two readings: the task
    /// was on one CPU, `cpu`, all along ([`plan::charge`]).
    pub migrations: Option<u64>,
}

impl Layout {
    /// Candidate task `tid` as a [`TaskTime`] on `cpu` with `runtime_ns`
    /// of run time (its PID, comm, priority and kind from the layout);
    /// `None` for a TID the layout does not name.
    pub fn task_time(&self, tid: u32, cpu: u32, runtime_ns: u64) -> Option<TaskTime> {
        let (pid, comm, rt_priority, kernel) = self.tasks.get(&tid)?;
        Some(TaskTime {
            pid: *pid,
            tid,
            comm: comm.clone(),
            cpu,
            runtime_ns,
            rt_priority: *rt_priority,
            kernel: *kernel,
        })
    }

    /// `s` as a [`Snapshot`] of the probed CPUs, for
    /// [`plan::attribute`].
    pub fn snapshot(&self, s: &Sample) -> Snapshot {
        let n = self.cpus.len();
        let rows = |labels: &mut dyn Iterator<Item = (&String, &String)>, counts: &[u64]| {
            let rows = labels
                .enumerate()
                .map(|(r, (label, desc))| {
                    let counts = counts.get(r * n..(r + 1) * n).unwrap_or(&[]).to_vec();
                    (
                        label.clone(),
                        CounterRow {
                            counts,
                            desc: desc.clone(),
                        },
                    )
                })
                .collect();
            Counters {
                cpus: self.cpus.clone(),
                rows,
            }
        };
        let none = String::new();
        Snapshot {
            interrupts: rows(&mut self.irqs.iter().map(|(l, d)| (l, d)), &s.irqs),
            softirqs: rows(&mut self.softirqs.iter().map(|l| (l, &none)), &s.softirqs),
            tasks: s
                .tasks
                .iter()
                .filter_map(|t| Some((t.tid, self.task_time(t.tid, t.cpu, t.runtime_ns)?)))
                .collect(),
            steal_ns: self
                .cpus
                .iter()
                .copied()
                .zip(s.steal_ns.iter().copied())
                .collect(),
        }
    }
}

/// The sampler's readings over one probe: the layout, the samples in time
/// order, the period, and each probed CPU's measurement start
/// (`CLOCK_MONOTONIC`, ns; filled once the probe threads return).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readings {
    /// What each sample holds.
    pub layout: Layout,
    /// The samples, in time order.
    pub samples: Vec<Sample>,
    /// The sampler's period, ns.
    pub period_ns: u64,
    /// Each probed CPU's measurement start, `CLOCK_MONOTONIC` ns.
    pub starts: BTreeMap<u32, u64>,
    /// The CPU time the sampler thread used, ns
    /// (`CLOCK_THREAD_CPUTIME_ID`, from its start to its last sample):
    /// what attribution in time cost its housekeeping CPU.
    pub cpu_ns: u64,
}

/// The sampler's readings, or why there were none.
pub type Sampled = Result<Readings, String>;

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(cpus: u32, rows: usize) -> Layout {
        Layout {
            cpus: (0..cpus).collect(),
            irqs: (0..rows).map(|r| (r.to_string(), String::new())).collect(),
            ..Layout::default()
        }
    }

    /// One probed CPU, 60 rows, a 1 s probe and its 0.2 s of pre-heat and
    /// end: every 2 ms, 8192 at most. A 60 s probe: 8191 periods of at
    /// least 7.35 ms. 256 CPUs of 100 rows (207 960 bytes a sample): 80
    /// samples in 16 MiB, 79 periods of 762 ms over 60.2 s.
    #[test]
    fn samples_fit_their_budget() {
        assert_eq!(
            sample_budget(1_200_000_000, &layout(1, 60)),
            (2_000_000, 8192)
        );
        assert_eq!(
            sample_budget(60_200_000_000, &layout(1, 60)),
            (7_349_530, 8192)
        );
        assert_eq!(
            sample_budget(60_200_000_000, &layout(256, 100)),
            (762_025_317, 80)
        );
    }
}
