//! What the sampler of attribution in time reads (issue 36), every
//! [`super::sample_budget`] from a housekeeping CPU while the probe
//! runs: the probed CPUs' columns of `/proc/interrupts` and
//! `/proc/softirqs`, their steal time (`/proc/stat`), and each candidate
//! task's CPU (`/proc/PID/task/TID/stat` field 39, `processor`) and run
//! time (`schedstat`'s first value, ns; proc(5)). A candidate is a task,
//! not pinrun's, whose last CPU was a probed one when the sampler looked
//! ([`candidates`]). Parsed with the core's parsers
//! (`crate::system::noise`); every file through [`Root`].

use super::{Layout, Sample};
use crate::system::Root;
use crate::system::irq::{INTERRUPTS, SOFTIRQS, read_counters};
use crate::system::noise::{parse_steal, parse_task_stat, read_tasks};
use std::collections::BTreeMap;

/// The layout of the samples of `cpus`: every row of `/proc/interrupts`
/// and `/proc/softirqs` now (the candidate tasks are added by
/// [`candidates`]).
pub fn layout(root: &Root, cpus: &[u32]) -> Layout {
    let rows = |path: &str| read_counters(root, path).unwrap_or_default().rows;
    Layout {
        cpus: cpus.to_vec(),
        irqs: rows(INTERRUPTS)
            .into_iter()
            .map(|(label, row)| (label, row.desc))
            .collect(),
        softirqs: rows(SOFTIRQS).into_keys().collect(),
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
        let c = read_counters(root, path)?;
        let mut out = Vec::new();
        for label in labels {
            out.extend(l.cpus.iter().map(|&cpu| c.count(label, cpu)));
        }
        Some(out)
    };
    let irqs = columns(INTERRUPTS, &mut l.irqs.iter().map(|(label, _)| label))?;
    let softirqs = columns(SOFTIRQS, &mut l.softirqs.iter())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A `stat` line (proc(5)) of task `tid` with `comm`, last on `cpu`
    /// (field 39, `processor`), 52 fields as Linux 6.x prints them.
    fn stat(tid: u32, comm: &str, cpu: u32) -> String {
        let mut f: Vec<String> = format!(
            "{tid} ({comm}) R 1 {tid} {tid} 0 -1 4194304 0 0 0 0 300 20 0 0 20 0 1 0 100 0 0 18446744073709551615"
        )
        .split(' ')
        .map(str::to_string)
        .collect();
        f.resize(52, "0".into());
        f[38] = cpu.to_string();
        f.join(" ") + "\n"
    }

    /// A dump of this machine's counters (lines of its `/proc/interrupts`,
    /// `/proc/softirqs` and `/proc/stat`, kernel 6.18) and three tasks:
    /// 42 last on CPU 1, 43 (of 42) on CPU 0, 50 (pinrun's own, on CPU 1).
    fn dump() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let write = |p: &str, t: &str| {
            let f = dir.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        };
        write(
            "proc/interrupts",
            "           CPU0       CPU1       \n 26:          0          1  IO-APIC   4-edge      ttyS0\nLOC:    9949738   10454060   Local timer interrupts\nRES:    3504480    2994239   Rescheduling interrupts\n",
        );
        write(
            "proc/softirqs",
            "                    CPU0       CPU1       \n          HI:          0          0\n       TIMER:    1340872    1042260\n",
        );
        write(
            "proc/stat",
            "cpu  4358799 36733 704221 2132630 15912 0 22576 78143 0 0\ncpu0 2087289 17793 380262 1130809 9044 0 10763 39130 0 0\ncpu1 2271510 18940 323959 1001821 6868 0 11813 39013 0 0\n",
        );
        for (pid, tid, comm, cpu, run) in [
            (42, 42, "hog", 1, "118018994 32009107 959\n"),
            (42, 43, "hog-io", 0, "5000 0 1\n"),
            (50, 50, "pinrun", 1, "7000 0 1\n"),
        ] {
            write(
                &format!("proc/{pid}/task/{tid}/stat"),
                &stat(tid, comm, cpu),
            );
            write(&format!("proc/{pid}/task/{tid}/schedstat"), run);
        }
        dir
    }

    /// The probed CPU's column of each row, its steal (ticks of 10 ms:
    /// 39013 → 390.13 s), and the one candidate: a task last on the probed
    /// CPU, not pinrun's own, nor one on CPU 0.
    #[test]
    fn a_sample_reads_the_probed_cpus_only() {
        let dir = dump();
        let root = Root::new(dir.path());
        let mut l = layout(&root, &[1]);
        let mut seen = BTreeMap::new();
        let tids = candidates(&root, &mut l, 50, &mut seen);
        assert_eq!(tids, vec![42]);
        assert_eq!(l.tasks[&42], (42, "hog".to_string(), 0));
        let labels: Vec<&str> = l.irqs.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, ["26", "LOC", "RES"]);
        let s = sample(&root, &l, &tids, None).unwrap();
        assert_eq!(s.irqs, vec![1, 10_454_060, 2_994_239]);
        assert_eq!(s.softirqs, vec![0, 1_042_260]);
        assert_eq!(s.steal_ns, vec![390_130_000_000]);
        assert_eq!(s.tasks, vec![(42, 1, 118_018_994)]);
        // A task that has not run since the last look is no candidate.
        assert_eq!(candidates(&root, &mut l, 50, &mut seen), Vec::<u32>::new());
        // Asleep since the last sample: its stat is not read again (here:
        // gone), its CPU is the last one seen.
        std::fs::remove_file(dir.path().join("proc/42/task/42/stat")).unwrap();
        let again = sample(&root, &l, &tids, Some(&s)).unwrap();
        assert_eq!(again.tasks, vec![(42, 1, 118_018_994)]);
        // Run since: its stat is read, and a task that has gone is left out.
        std::fs::write(
            dir.path().join("proc/42/task/42/schedstat"),
            "118019994 0 960\n",
        )
        .unwrap();
        assert_eq!(sample(&root, &l, &tids, Some(&s)).unwrap().tasks, vec![]);
        // Without /proc/interrupts, no sample (never one of zeros).
        std::fs::remove_file(dir.path().join("proc/interrupts")).unwrap();
        assert_eq!(sample(&root, &l, &tids, None), None);
    }
}
