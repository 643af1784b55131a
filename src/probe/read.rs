//! What the sampler of attribution in time reads (issue 36), every
//! [`super::sample_budget`] from a housekeeping CPU while the probe
//! runs: the probed CPUs' columns of `/proc/interrupts` and
//! `/proc/softirqs`, their steal time (`/proc/stat`), and each candidate
//! task's CPU (`/proc/PID/task/TID/stat` field 39, `processor`), run
//! time (`schedstat`'s first value, ns; proc(5)) and migrations
//! (`sched`'s `se.nr_migrations`). A candidate is a task,
//! not pinrun's, whose last CPU was a probed one when the sampler looked
//! ([`candidates`]). Parsed with the core's parsers
//! (`crate::system::noise`); every file through [`Root`].

use super::{Layout, Sample, TaskReading};
use crate::noise::{NoiseEvent, NoiseKind};
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
            l.tasks
                .entry(tid)
                .or_insert((t.pid, t.comm, t.rt_priority, t.kernel));
        }
    }
    active
}

/// One sample of the counters `l` names and of the candidate tasks `tids`
/// (ascending; the times are the caller's), after `prev` (each task read
/// by [`task`]);
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
            .binary_search_by_key(&tid, |t| t.tid)
            .ok()
            .map(|i| p.tasks[i])
    };
    let tasks = tids
        .iter()
        .filter_map(|tid| Some((*tid, l.tasks.get(tid)?.0)))
        .filter_map(|(tid, pid)| task(root, pid, tid, last(tid)))
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

/// Task `tid` of process `pid` after its reading `last` in the previous
/// sample: its `schedstat` is read every time (a sleeping task costs one
/// small read: it is where it was); when its run time changed, its
/// `sched` (run time and migrations, [`parse_sched`], from one read so
/// that they agree), and its `stat` (its CPU) only when it migrated since
/// `last` (else its CPU is `last`'s: `se.nr_migrations` counts every
/// change of CPU). Without `sched`, its run time is `schedstat`'s and its
/// CPU is read every time it ran, migrations unknown. `None`: a task
/// without `schedstat` (`CONFIG_SCHED_INFO` off) or that has exited.
fn task(root: &Root, pid: u32, tid: u32, last: Option<TaskReading>) -> Option<TaskReading> {
    let dir = format!("/proc/{pid}/task/{tid}");
    let runtime_ns: u64 = root
        .read(&format!("{dir}/schedstat"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    if let Some(was) = last
        && was.runtime_ns == runtime_ns
    {
        return Some(was);
    }
    let sched = root
        .read(&format!("{dir}/sched"))
        .and_then(|t| parse_sched(&t));
    let (runtime_ns, migrations) = match sched {
        Some((run, m)) => (run, Some(m)),
        None => (runtime_ns, None),
    };
    let cpu = match last {
        Some(was) if migrations.is_some() && was.migrations == migrations => was.cpu,
        _ => parse_task_stat(&root.read(&format!("{dir}/stat"))?)?.1,
    };
    Some(TaskReading {
        tid,
        cpu,
        runtime_ns,
        migrations,
    })
}

/// `se.sum_exec_runtime` (ns) and `se.nr_migrations` of a task's `sched`
/// file (`proc_sched_show_task()`, kernel/sched/debug.c: a run time is
/// printed in ms with six decimals, `38.518525`, so to the ns); `None`
/// when either is missing or malformed.
pub fn parse_sched(text: &str) -> Option<(u64, u64)> {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
    };
    let (ms, frac) = value("se.sum_exec_runtime")?.split_once('.')?;
    if frac.len() != 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let runtime = ms
        .parse::<u64>()
        .ok()?
        .checked_mul(1_000_000)?
        .checked_add(frac.parse().ok()?)?;
    Some((runtime, value("se.nr_migrations")?.parse().ok()?))
}

/// Where tracefs is mounted (`--probe-tracer`), from a mount table
/// (`/proc/self/mounts`, proc(5): the second field of the first line whose
/// type, the third, is `tracefs`; octal escapes such as `\040` decoded);
/// `None` when it is not mounted (pinrun never mounts it).
pub fn tracefs_mount(mounts: &str) -> Option<String> {
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&"tracefs")).then(|| unescape_mount(f[1]))
    })
}

/// A mount table's path with its octal escapes (`\040` for a space)
/// decoded.
fn unescape_mount(p: &str) -> String {
    let b = p.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).and_then(|d| {
            std::str::from_utf8(d)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        });
        match (b[i], oct) {
            (b'\\', Some(c)) => {
                out.push(c);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A trace timestamp `SECS.FRACTION` (µs with the `mono` clock, up to ns)
/// in ns.
fn trace_ns(t: &str) -> Option<u64> {
    let (s, f) = t.split_once('.')?;
    if f.is_empty() || f.len() > 9 || !f.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let frac: u64 = f.parse().ok()?;
    s.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac * 10u64.pow(9 - f.len() as u32))
}

/// One line of a tracefs instance's `trace` file as an osnoise event
/// (include/trace/events/osnoise.h's formats, after the common
/// `COMM-PID [CPU] FLAGS TIMESTAMP: EVENT: ` part):
/// `irq_noise: DESC:VECTOR start S duration D ns`,
/// `softirq_noise: NAME:VECTOR start S duration D ns`,
/// `thread_noise: COMM:PID start S duration D ns` (comm right-aligned in
/// 8 columns), `nmi_noise: start S duration D ns`. `start` is the
/// tracer's own clock (`trace_clock_local()`), not the instance's, so
/// it is not read: the timestamp (the instance's clock, taken when the
/// noise ended) is. `None` for a comment, another event
/// (`sample_threshold`, which only the tracer's workload reports) or a
/// malformed line.
pub fn noise_event(line: &str) -> Option<NoiseEvent> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    let (kind, name) = [
        (NoiseKind::Irq, "irq_noise"),
        (NoiseKind::Softirq, "softirq_noise"),
        (NoiseKind::Thread, "thread_noise"),
        (NoiseKind::Nmi, "nmi_noise"),
    ]
    .into_iter()
    .find(|(_, n)| line.contains(&format!(": {n}: ")))?;
    let (head, payload) = line.split_once(&format!(": {name}: "))?;
    let mut h = head.split_whitespace().rev();
    let end_ns = trace_ns(h.next()?)?;
    let _flags = h.next()?;
    let cpu = h
        .next()?
        .strip_prefix('[')?
        .strip_suffix(']')?
        .parse()
        .ok()?;
    let (source, rest) = match payload.rsplit_once(" start ") {
        Some((src, rest)) => (src.trim(), rest),
        None => ("", payload.strip_prefix("start ")?),
    };
    let d = rest.split_once(" duration ")?.1;
    let duration_ns = d.strip_suffix(" ns")?.trim().parse().ok()?;
    let (name, id) = match kind {
        NoiseKind::Nmi => (String::new(), 0),
        _ => {
            let (n, id) = source.rsplit_once(':')?;
            (n.trim().to_string(), id.trim().parse().ok()?)
        }
    };
    Some(NoiseEvent {
        kind,
        cpu,
        id,
        name,
        end_ns,
        duration_ns,
    })
}

/// At most this many osnoise events are kept of one probe's `trace`
/// ([`noise_events`]): about 100 MiB of [`NoiseEvent`]s, the ring buffers
/// of 7 probed CPUs filled (about 150 000 events each at 8 MiB per CPU).
pub const MAX_TRACE_EVENTS: usize = 1_000_000;

/// The longest line read of a `trace` file: the kernel prints an event
/// into a `trace_seq` of at most two pages (`TRACE_SEQ_BUFFER_SIZE`,
/// include/linux/trace_seq.h). A longer line is read in pieces, none an
/// event.
const MAX_TRACE_LINE: u64 = 8192;

/// Every osnoise event of a `trace` file read from `trace`
/// ([`noise_event`]), in the file's order, read line by line (the file is
/// never held whole): the first `keep` events, and how many more there
/// were (read and counted, not kept; said with the ring buffer's
/// overruns, as events the report does not attribute). Errors: the
/// read's.
pub fn noise_events(
    mut trace: impl std::io::BufRead,
    keep: usize,
) -> std::io::Result<(Vec<NoiseEvent>, u64)> {
    use std::io::{BufRead, Read};
    let (mut events, mut beyond) = (Vec::new(), 0u64);
    let mut line = Vec::new();
    loop {
        line.clear();
        if (&mut trace)
            .take(MAX_TRACE_LINE)
            .read_until(b'\n', &mut line)?
            == 0
        {
            return Ok((events, beyond));
        }
        let text = String::from_utf8_lossy(&line);
        let Some(e) = noise_event(text.trim_end_matches(['\n', '\r'])) else {
            continue;
        };
        if events.len() < keep {
            events.push(e);
        } else {
            beyond += 1;
        }
    }
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
        assert_eq!(l.tasks[&42], (42, "hog".to_string(), 0, None));
        let labels: Vec<&str> = l.irqs.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, ["26", "LOC", "RES"]);
        let s = sample(&root, &l, &tids, None).unwrap();
        assert_eq!(s.irqs, vec![1, 10_454_060, 2_994_239]);
        assert_eq!(s.softirqs, vec![0, 1_042_260]);
        assert_eq!(s.steal_ns, vec![390_130_000_000]);
        let hog = TaskReading {
            tid: 42,
            cpu: 1,
            runtime_ns: 118_018_994,
            migrations: None,
        };
        // No `sched` file in this dump: migrations unknown.
        assert_eq!(s.tasks, vec![hog]);
        // A task that has not run since the last look is no candidate.
        assert_eq!(candidates(&root, &mut l, 50, &mut seen), Vec::<u32>::new());
        // Asleep since the last sample: its stat is not read again (here:
        // gone), its CPU is the last one seen.
        std::fs::remove_file(dir.path().join("proc/42/task/42/stat")).unwrap();
        let again = sample(&root, &l, &tids, Some(&s)).unwrap();
        assert_eq!(again.tasks, vec![hog]);
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

    /// `/proc/PID/task/TID/sched` as this host's kernel (6.18, without
    /// `CONFIG_SCHEDSTATS`) prints it for a shell, its run time and
    /// migrations set.
    fn sched(comm: &str, pid: u32, runtime: &str, migrations: u64) -> String {
        format!(
            "{comm} ({pid}, #threads: 1)\n-------------------------------------------------------------------\n\
se.exec_start                                :      67954650.635603\n\
se.vruntime                                  :           118.147768\n\
se.sum_exec_runtime                          :  {runtime:>19}\n\
se.nr_migrations                             :  {migrations:>19}\n\
nr_switches                                  :                  126\n\
nr_voluntary_switches                        :                  114\n\
nr_involuntary_switches                      :                   12\n\
se.load.weight                               :              1048576\n\
policy                                       :                    0\n\
prio                                         :                  120\n\
clock-delta                                  :                   42\n"
        )
    }

    /// `sched`'s run time is printed in ms to the ns (`38.518525`), its
    /// migrations as a count; anything else is no reading.
    #[test]
    fn sched_gives_run_time_and_migrations() {
        assert_eq!(
            parse_sched(&sched("bash", 20714, "38.518525", 9)),
            Some((38_518_525, 9))
        );
        assert_eq!(
            parse_sched(&sched("hog", 42, "118.019994", 0)),
            Some((118_019_994, 0))
        );
        assert_eq!(parse_sched(&sched("hog", 42, "118.01999", 0)), None);
        assert_eq!(parse_sched(&sched("hog", 42, "118", 0)), None);
        assert_eq!(parse_sched("se.nr_migrations : 3\n"), None);
    }

    /// With `sched`: a task that ran is read from it (run time and
    /// migrations together); while its migrations stay the same its CPU
    /// is the last one read (its `stat`, here gone, is not read); once
    /// they change, `stat` is read again (gone: the task is left out).
    #[test]
    fn a_task_that_ran_is_read_with_its_migrations() {
        let dir = dump();
        let root = Root::new(dir.path());
        let path = |f: &str| dir.path().join(format!("proc/42/task/42/{f}"));
        std::fs::write(path("sched"), sched("hog", 42, "118.018994", 4)).unwrap();
        let mut l = layout(&root, &[1]);
        let tids = candidates(&root, &mut l, 50, &mut BTreeMap::new());
        let s = sample(&root, &l, &tids, None).unwrap();
        let hog = TaskReading {
            tid: 42,
            cpu: 1,
            runtime_ns: 118_018_994,
            migrations: Some(4),
        };
        assert_eq!(s.tasks, vec![hog]);
        std::fs::remove_file(path("stat")).unwrap();
        std::fs::write(path("schedstat"), "118019000 0 960\n").unwrap();
        std::fs::write(path("sched"), sched("hog", 42, "118.019994", 4)).unwrap();
        let ran = sample(&root, &l, &tids, Some(&s)).unwrap();
        let stayed = TaskReading {
            runtime_ns: 118_019_994,
            ..hog
        };
        assert_eq!(ran.tasks, vec![stayed]);
        std::fs::write(path("schedstat"), "118021000 0 961\n").unwrap();
        std::fs::write(path("sched"), sched("hog", 42, "118.021994", 5)).unwrap();
        assert_eq!(sample(&root, &l, &tids, Some(&ran)).unwrap().tasks, vec![]);
    }

    /// Lines of a trace file written by the osnoise tracer without its
    /// workload on Debian 13's 6.12.117 PREEMPT_RT kernel (an instance with
    /// `trace_clock` mono, CPU 2 of the VM guest): each event's kind,
    /// source, CPU, end (the timestamp, µs) and net duration as the kernel
    /// printed them; the header and the swapper line's fields are kept.
    #[test]
    fn osnoise_lines_are_read_as_the_kernel_wrote_them() {
        let trace = "# tracer: osnoise\n\
#           TASK-PID      CPU# |||||||   TIMESTAMP    IN US       IN US  AVAILABLE  IN US     HW    NMI    IRQ   SIRQ THREAD\n\
          <idle>-0       [002] dNh2.    10.956522: irq_noise: reschedule:253 start 12.079325861 duration 2147 ns\n\
          <idle>-0       [002] d..3.    10.957252: thread_noise: swapper/2:0 start 0.000000000 duration 12080647903 ns\n\
              sh-279     [002] dNh11    11.348689: irq_noise: local_timer:236 start 12.471488723 duration 589581 ns\n\
              sh-279     [002] d..31    11.348819: thread_noise:  taskset:279 start 12.468664902 duration 2961758 ns\n\
          rcuc/2-35      [002] d..3.    11.348887: thread_noise:   rcuc/2:35 start 12.472221547 duration 62336 ns\n\
          <idle>-0       [003] d.s2.    11.400001: softirq_noise:    TIMER:1 start 12.523000000 duration 4100 ns\n\
          <idle>-0       [003] d.Z2.    11.400002: nmi_noise: start 12.523000001 duration 900 ns\n\
          osnoise/3-90   [003] ....    11.400003: sample_threshold: start 12.523000002 duration 9000 ns interference 2\n";
        let (e, beyond) = noise_events(trace.as_bytes(), MAX_TRACE_EVENTS).unwrap();
        assert_eq!(beyond, 0);
        // Past `keep`, events are counted, not kept.
        let (first, more) = noise_events(trace.as_bytes(), 2).unwrap();
        assert_eq!((first.len(), more), (2, 5));
        let ev = |kind, cpu, id, name: &str, end_ns, duration_ns| NoiseEvent {
            kind,
            cpu,
            id,
            name: name.into(),
            end_ns,
            duration_ns,
        };
        assert_eq!(
            e,
            vec![
                ev(NoiseKind::Irq, 2, 253, "reschedule", 10_956_522_000, 2147),
                ev(
                    NoiseKind::Thread,
                    2,
                    0,
                    "swapper/2",
                    10_957_252_000,
                    12_080_647_903
                ),
                ev(
                    NoiseKind::Irq,
                    2,
                    236,
                    "local_timer",
                    11_348_689_000,
                    589_581
                ),
                ev(
                    NoiseKind::Thread,
                    2,
                    279,
                    "taskset",
                    11_348_819_000,
                    2_961_758
                ),
                ev(NoiseKind::Thread, 2, 35, "rcuc/2", 11_348_887_000, 62_336),
                ev(NoiseKind::Softirq, 3, 1, "TIMER", 11_400_001_000, 4100),
                ev(NoiseKind::Nmi, 3, 0, "", 11_400_002_000, 900),
            ]
        );
        assert_eq!(
            noise_event("sh-1 [x] d 1.0: irq_noise: a:1 start 1.0 duration 5 ns"),
            None
        );
        assert_eq!(
            noise_event("sh-1 [001] d 1.0: irq_noise: a:b start 1.0 duration 5 ns"),
            None
        );
    }

    /// proc(5)'s mount table: tracefs where this kernel mounts it, a path
    /// with a space escaped as `\\040`; none without a tracefs line.
    #[test]
    fn tracefs_is_found_in_the_mount_table() {
        let m = "proc /proc proc rw,nosuid 0 0\ntracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0\n";
        assert_eq!(tracefs_mount(m).as_deref(), Some("/sys/kernel/tracing"));
        let m = "nodev /mnt/my\\040trace tracefs rw 0 0\n";
        assert_eq!(tracefs_mount(m).as_deref(), Some("/mnt/my trace"));
        assert_eq!(tracefs_mount("proc /proc proc rw 0 0\n"), None);
    }
}
