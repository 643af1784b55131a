//! Competing real-time tasks: every user-space SCHED_FIFO/SCHED_RR process
//! (`sched_getscheduler(2)` on a live machine, `/proc/<pid>/stat` and
//! `status`). Read only for `--fifo`/`--rr` launches whose findings are
//! used (`rt-competitor`): after planning, or on a helper thread while the
//! machine is read and planned ([`RtScan`]), joined before the checks.

use super::root::Root;
use crate::cpuset::CpuSet;
use crate::policy::Policy;

/// A SCHED_FIFO or SCHED_RR thread on the machine (or, for who runs
/// where, a pinned one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtTask {
    /// Process id (the thread group's id).
    pub pid: u32,
    /// Thread id (`/proc/PID/task/TID`); `pid` for the main thread, and for
    /// a process read from `/proc/PID` itself (a dump without its `task`
    /// directory).
    pub tid: u32,
    /// The thread's `comm` (field 2 of its `stat`).
    pub comm: String,
    /// `rt_priority` (field 40 of stat).
    pub priority: u32,
    /// State letter (field 3), `R` when runnable.
    pub state: char,
    /// The thread's `Cpus_allowed_list`.
    pub cpus: CpuSet,
}

impl RtTask {
    /// How findings and who-runs-where name it: `PID` for a main thread,
    /// `PID/TID` for another thread of process PID.
    pub fn id(&self) -> String {
        if self.tid == self.pid {
            self.pid.to_string()
        } else {
            format!("{}/{}", self.pid, self.tid)
        }
    }

    /// `process PID` or `thread PID/TID`, as [`RtTask::id`].
    pub fn kind_and_id(&self) -> String {
        let kind = if self.tid == self.pid {
            "process"
        } else {
            "thread"
        };
        format!("{kind} {}", self.id())
    }
}

/// `PF_KTHREAD` (`include/linux/sched.h`): the flag (field 9 of
/// `/proc/<pid>/stat`) of a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Every user-space SCHED_FIFO/SCHED_RR thread (every thread of every
/// process: `/proc/PID/task/TID`, since a real-time application's
/// real-time threads are seldom its main thread) except those of process
/// `self_pid`, in ascending (pid, tid) order.
///
/// With `self_pid` (pinrun on the live machine, no `--sysroot`) the kernel
/// is asked first ([`read_rt_tasks_live`]: one `sched_getscheduler(2)` per
/// thread, files only for the real-time ones); without it, or when `root`
/// is not this process's live `/proc`, every thread's files are read
/// ([`read_rt_tasks_files`]: a dump's pids are not live). Both give the
/// same tasks.
///
/// In a `/proc` of another PID namespace (`unshare -p` without remounting
/// it) this process has another pid there: the one its `/proc/self` names
/// is left out.
pub fn read_rt_tasks(root: &Root, self_pid: Option<u32>) -> Vec<RtTask> {
    self_pid
        .and_then(|_| read_rt_tasks_live(root, self_pid))
        .unwrap_or_else(|| {
            let me = self_pid.map(|p| proc_self_pid(root).unwrap_or(p));
            read_rt_tasks_files(root, me)
        })
}

/// A scan of the real-time tasks on a helper thread, with the root it read
/// through (its own over-budget record).
pub type RtAhead = super::parallel::Ahead<(Vec<RtTask>, Root)>;

/// Where [`super::SystemState::read_extras`] gets the real-time tasks.
#[derive(Debug)]
pub enum RtScan {
    /// Scanned there, on the caller's thread ([`read_rt_tasks`] with this
    /// `self_pid`).
    Here(Option<u32>),
    /// Scanned ahead on a helper thread
    /// ([`super::SystemState::read_scoped_ahead`]), through a root with an
    /// over-budget record of its own: joined there.
    Ahead(RtAhead),
}

impl RtScan {
    /// The tasks: scanned now, or the helper's once it has ended. A file
    /// over budget on the helper becomes `root`'s unless `root` has one
    /// already, as if the scan had been made here, after the caller's
    /// reads so far.
    #[inline(never)]
    pub fn tasks(self, root: &Root) -> Vec<RtTask> {
        match self {
            Self::Here(self_pid) => read_rt_tasks(root, self_pid),
            Self::Ahead(a) => {
                let (tasks, read_through) = a.join();
                root.adopt_over_budget(&read_through);
                tasks
            }
        }
    }
}

/// The pid `/proc/self` names below `root`, when it is a number.
fn proc_self_pid(root: &Root) -> Option<u32> {
    root.read_link("/proc/self")?.to_str()?.parse().ok()
}

/// The threads of process `pid` ([`super::threads::task_ids`]), each as
/// `Some(tid)`; `[None]` (the process's own `/proc/PID` files) when its
/// `task` directory lists none (a dump written before threads were
/// scanned, or a process that just exited).
fn threads_of(root: &Root, pid: u32) -> Vec<Option<u32>> {
    let tids = super::threads::task_ids(root, pid);
    if tids.is_empty() {
        vec![None]
    } else {
        tids.into_iter().map(Some).collect()
    }
}

/// [`threads_of`] on the live machine, without listing the `task`
/// directory of a process with one thread: procfs gives that directory a
/// link count of 2 plus the number of threads (`proc_task_getattr()`,
/// fs/proc/base.c; a zombie leader stays counted while its threads run),
/// so 3 means the main thread alone (one `fstatat(2)` relative to `proc`,
/// the open `/proc`, instead of an open, a `getdents64(2)` and a close:
/// most processes have one thread).
fn live_threads_of(root: &Root, proc: Option<&std::fs::File>, pid: u32) -> Vec<Option<u32>> {
    let nlink = proc.and_then(|dir| {
        nix::sys::stat::fstatat(
            dir,
            format!("{pid}/task").as_str(),
            nix::fcntl::AtFlags::empty(),
        )
        .ok()
    });
    match nlink {
        Some(st) if st.st_nlink == 3 => vec![Some(pid)],
        _ => threads_of(root, pid),
    }
}

/// [`read_rt_tasks`] from files only, for any root (a dump or `/`): lists
/// `/proc` and each process's `task` directory, reads every thread's
/// `stat` (`proc(5)`), and `status` (`Cpus_allowed_list`) only of the
/// user-space SCHED_FIFO/SCHED_RR ones. Threads that vanish or cannot be
/// read are skipped.
pub fn read_rt_tasks_files(root: &Root, self_pid: Option<u32>) -> Vec<RtTask> {
    scan_files(root, self_pid, None)
}

/// Every thread of every process (but `self_pid`'s) read by [`read_task`]
/// with `pinned_in`: on several threads when there are many processes
/// (`super::parallel`), in (pid, tid) order either way.
fn scan_files(root: &Root, self_pid: Option<u32>, pinned_in: Option<&CpuSet>) -> Vec<RtTask> {
    let mut pids = root.numbered_entries("/proc", "");
    pids.retain(|p| Some(*p) != self_pid);
    super::parallel::map(root, &pids, |&pid| {
        threads_of(root, pid)
            .into_iter()
            .filter_map(|tid| read_task(root, pid, tid, pinned_in))
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

/// [`read_rt_tasks`] on the live machine: lists `/proc` and each process's
/// `task` directory, and asks the kernel for each thread's policy with
/// `sched_getscheduler(2)` (which takes a thread id; no file opened); only
/// for SCHED_FIFO/SCHED_RR threads are `stat` and (for user-space ones)
/// `status` read, exactly as [`read_rt_tasks_files`] reads them, so both
/// return the same tasks. A thread that exited (ESRCH) is skipped; one
/// whose policy the kernel refuses to tell (a security module) is read
/// from its files.
///
/// `None` when `root` is not this process's live `/proc`: its base is not
/// `/`, or `/proc/self` does not name this process (a procfs of another
/// PID namespace, whose pids the syscall would misread).
pub fn read_rt_tasks_live(root: &Root, self_pid: Option<u32>) -> Option<Vec<RtTask>> {
    if !is_live_proc(root) {
        return None;
    }
    let pids = root.numbered_entries("/proc", "");
    // One `task` listing per process and one `sched_getscheduler(2)` per
    // thread, on this thread: at well under a microsecond each, 2 000
    // processes cost about what starting and joining a thread does, and
    // on a loaded host a second thread made the scan slower
    // (BENCHMARKS.md, issue 17).
    let mut out = Vec::new();
    let proc = std::fs::File::open(root.path("/proc"))
        .map_err(|e| root.note_io_error(&e, &|| "/proc".to_string()))
        .ok();
    for pid in pids.into_iter().filter(|p| Some(*p) != self_pid) {
        for tid in live_threads_of(root, proc.as_ref(), pid) {
            let rt = match crate::ffi::sched_getscheduler(tid.unwrap_or(pid)) {
                Ok(policy) => Policy::is_rt_number(i64::from(policy)),
                Err(e) => e.raw_os_error() != Some(libc::ESRCH),
            };
            if let Some(t) = rt.then(|| read_task(root, pid, tid, None)).flatten() {
                out.push(t);
            }
        }
    }
    Some(out)
}

/// Whether `root` is `/` and its `/proc/self` names this process (so that
/// the pids listed in its `/proc` are the ones syscalls take).
pub(crate) fn is_live_proc(root: &Root) -> bool {
    root.base() == std::path::Path::new("/") && proc_self_pid(root) == Some(std::process::id())
}

/// Thread `tid` of process `pid` (`/proc/PID/task/TID`; with `None`, the
/// process's own `/proc/PID`) as an [`RtTask`] when it is a user-space
/// SCHED_FIFO or SCHED_RR thread: its `stat` first (state, priority,
/// flags, policy, `comm`), then `status` (`Cpus_allowed_list`) only for
/// such a thread. With `pinned_in` (the online CPUs) also a user-space
/// thread of any policy whose `Cpus_allowed_list` lacks some of them (a
/// pinned thread; its `priority` is 0, which no SCHED_FIFO or SCHED_RR
/// task has). `None` for any other thread, or when a file is missing or
/// malformed.
fn read_task(
    root: &Root,
    pid: u32,
    tid: Option<u32>,
    pinned_in: Option<&CpuSet>,
) -> Option<RtTask> {
    let dir = match tid {
        Some(t) => format!("/proc/{pid}/task/{t}"),
        None => format!("/proc/{pid}"),
    };
    let stat = root.read(&format!("{dir}/stat"))?;
    let comm = super::threads::stat_comm(&stat)?.to_string();
    let f = super::threads::stat_fields(&stat)?;
    // f[0] is field 3 (state); field n is f[n - 3].
    let policy: i64 = f.get(38)?.parse().ok()?;
    // Field 9 flags: PF_KTHREAD marks kernel threads, whose per-CPU RT
    // threads (migration/N) are the kernel's own.
    let flags: u64 = f.get(6)?.parse().ok()?;
    let rt = Policy::is_rt_number(policy);
    if (!rt && pinned_in.is_none()) || flags & PF_KTHREAD != 0 {
        return None;
    }
    let cpus = super::process::status_cpus_allowed(&root.read(&format!("{dir}/status"))?)?;
    if !rt && pinned_in.is_some_and(|online| online.difference(&cpus).is_empty()) {
        return None;
    }
    Some(RtTask {
        pid,
        tid: tid.unwrap_or(pid),
        comm,
        priority: if rt { f.get(37)?.parse().ok()? } else { 0 },
        state: f.first()?.chars().next()?,
        cpus,
    })
}

/// Who runs where (`--show`, issue 18): every user-space thread that is
/// SCHED_FIFO/SCHED_RR (as [`read_rt_tasks_files`] finds them, for the
/// `rt-competitor` check) or pinned (its `Cpus_allowed_list` lacks some
/// of the `online` CPUs; `priority` 0), in ascending (pid, tid) order;
/// kernel threads left out. Reads every thread's `stat`, and `status` of
/// the user-space ones.
pub fn read_placed_tasks(root: &Root, online: &CpuSet) -> Vec<RtTask> {
    scan_files(root, None, Some(online))
}

/// The CPUs with an RCU callback-offload kthread (`rcuop/N`, and on older
/// kernels `rcuob/N`, `rcuos/N`: `rcu_spawn_cpu_nocb_kthread()`,
/// kernel/rcu/tree_nocb.h), from every process's `comm`; the `rcuog/N`
/// grace-period kthreads are not counted. An offloaded CPU always has one
/// (the kernel de-offloads a CPU whose kthread it cannot start), so a CPU
/// without one is not offloaded; the converse does not hold: since 5.17 the
/// kernel spawns them for every CPU once `rcu_nocbs` or `nohz_full` is
/// given. `None` when kernel threads are not visible (no `kthreadd` as pid
/// 2: a procfs of another PID namespace, or a dump without them).
pub fn read_nocb_kthreads(root: &Root) -> Option<CpuSet> {
    if root.read_value("/proc/2/comm").as_deref() != Some("kthreadd") {
        return None;
    }
    Some(
        root.numbered_entries("/proc", "")
            .into_iter()
            .filter_map(|pid| nocb_cpu(&root.read_value(&format!("/proc/{pid}/comm"))?))
            .collect(),
    )
}

/// Whether [`read_nocb_kthreads`] uses the `comm` of process `pid`:
/// `kthreadd` as pid 2, or an offload kthread's name (what a dump keeps
/// of the `comm` files the scan reads).
pub(crate) fn nocb_scan_reads(pid: u32, comm: &str) -> bool {
    (pid == 2 && comm == "kthreadd") || nocb_cpu(comm).is_some()
}

/// The CPU of an offload kthread's name (`rcuop/12` → 12).
fn nocb_cpu(comm: &str) -> Option<u32> {
    let rest = comm.strip_prefix("rcuo")?;
    let (flavour, cpu) = rest.split_at_checked(1)?;
    if !matches!(flavour, "p" | "b" | "s") {
        return None;
    }
    let digits = cpu.strip_prefix('/')?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())
        .flatten()
}

#[cfg(test)]
mod nocb_tests {
    use super::nocb_cpu;

    #[test]
    fn offload_kthread_names() {
        assert_eq!(nocb_cpu("rcuop/12"), Some(12));
        assert_eq!(nocb_cpu("rcuob/0"), Some(0));
        assert_eq!(nocb_cpu("rcuos/3"), Some(3));
        for n in [
            "rcuog/0",
            "rcu_preempt",
            "rcuop/",
            "rcuop/1x",
            "rcuc/2",
            "rcuo",
        ] {
            assert_eq!(nocb_cpu(n), None, "{n}");
        }
    }
}
