//! Competing real-time tasks: every user-space SCHED_FIFO/SCHED_RR process
//! (`sched_getscheduler(2)` on a live machine, `/proc/<pid>/stat` and
//! `status`). Read after planning, only for `--fifo`/`--rr` launches whose
//! findings are used (`rt-competitor`).

use super::root::Root;
use crate::cpuset::CpuSet;
use crate::policy::Policy;

/// A SCHED_FIFO or SCHED_RR task on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtTask {
    /// Process id.
    pub pid: u32,
    /// `comm`.
    pub comm: String,
    /// `rt_priority` (field 40 of stat).
    pub priority: u32,
    /// State letter (field 3), `R` when runnable.
    pub state: char,
    /// `Cpus_allowed_list`.
    pub cpus: CpuSet,
}

/// `PF_KTHREAD` (`include/linux/sched.h`): the flag (field 9 of
/// `/proc/<pid>/stat`) of a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Every user-space SCHED_FIFO/SCHED_RR process (main threads) except
/// `self_pid`, in ascending pid order.
///
/// With `self_pid` (pinrun on the live machine, no `--sysroot`) the kernel
/// is asked first ([`read_rt_tasks_live`]: one `sched_getscheduler(2)` per
/// process, files only for the real-time ones); without it, or when `root`
/// is not this process's live `/proc`, every process's files are read
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

/// The pid `/proc/self` names below `root`, when it is a number.
fn proc_self_pid(root: &Root) -> Option<u32> {
    std::fs::read_link(root.path("/proc/self"))
        .ok()?
        .to_str()?
        .parse()
        .ok()
}

/// [`read_rt_tasks`] from files only, for any root (a dump or `/`): lists
/// `/proc` and reads `/proc/<pid>/stat` of each process (`proc(5)`), and
/// `/proc/<pid>/status` (`Cpus_allowed_list`) only of the user-space
/// SCHED_FIFO/SCHED_RR ones. Processes that vanish or cannot be read are
/// skipped.
pub fn read_rt_tasks_files(root: &Root, self_pid: Option<u32>) -> Vec<RtTask> {
    let mut pids = root.numbered_entries("/proc", "");
    pids.retain(|p| Some(*p) != self_pid);
    // One `stat` per process: on several threads when there are many
    // (`super::parallel`), in pid order either way.
    super::parallel::map(&pids, |&pid| read_rt_task(root, pid))
        .into_iter()
        .flatten()
        .collect()
}

/// [`read_rt_tasks`] on the live machine: lists `/proc` once and asks the
/// kernel for each process's policy with `sched_getscheduler(2)` (no file
/// opened); only for SCHED_FIFO/SCHED_RR processes are `stat` and (for
/// user-space ones) `status` read, exactly as [`read_rt_tasks_files`] reads
/// them, so both return the same tasks. A process that exited (ESRCH) is
/// skipped; one whose policy the kernel refuses to tell (a security
/// module) is read from its files.
///
/// `None` when `root` is not this process's live `/proc`: its base is not
/// `/`, or `/proc/self` does not name this process (a procfs of another
/// PID namespace, whose pids the syscall would misread).
pub fn read_rt_tasks_live(root: &Root, self_pid: Option<u32>) -> Option<Vec<RtTask>> {
    if !is_live_proc(root) {
        return None;
    }
    let pids = root.numbered_entries("/proc", "");
    // One `sched_getscheduler(2)` per process, on this thread: at well
    // under a microsecond each, 2 000 processes cost about what starting
    // and joining a thread does, and on a loaded host a second thread
    // made the scan slower (BENCHMARKS.md, issue 17).
    Some(
        pids.into_iter()
            .filter(|p| Some(*p) != self_pid)
            .filter(|&pid| match crate::ffi::sched_getscheduler(pid) {
                Ok(policy) => Policy::is_rt_number(i64::from(policy)),
                Err(e) => e.raw_os_error() != Some(libc::ESRCH),
            })
            .filter_map(|pid| read_rt_task(root, pid))
            .collect(),
    )
}

/// Whether `root` is `/` and its `/proc/self` names this process (so that
/// the pids listed in its `/proc` are the ones syscalls take).
pub(crate) fn is_live_proc(root: &Root) -> bool {
    root.base() == std::path::Path::new("/") && proc_self_pid(root) == Some(std::process::id())
}

/// Process `pid` as an [`RtTask`] when it is a user-space SCHED_FIFO or
/// SCHED_RR process: its `stat` first (state, priority, flags, policy,
/// `comm`), then `status` (`Cpus_allowed_list`) only for such a process.
/// `None` for any other process, or when a file is missing or malformed.
fn read_rt_task(root: &Root, pid: u32) -> Option<RtTask> {
    read_task(root, pid, None)
}

/// [`read_rt_task`], and with `pinned_in` (the online CPUs) also a
/// user-space process of any policy whose `Cpus_allowed_list` lacks some
/// of them (a pinned process; its `priority` is 0, which no SCHED_FIFO or
/// SCHED_RR task has).
fn read_task(root: &Root, pid: u32, pinned_in: Option<&CpuSet>) -> Option<RtTask> {
    let stat = root.read(&format!("/proc/{pid}/stat"))?;
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
    let status = root.read(&format!("/proc/{pid}/status"))?;
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|v| CpuSet::parse_sysfs_list(v, None).ok())?;
    if !rt && pinned_in.is_some_and(|online| online.difference(&cpus).is_empty()) {
        return None;
    }
    Some(RtTask {
        pid,
        comm,
        priority: if rt { f.get(37)?.parse().ok()? } else { 0 },
        state: f.first()?.chars().next()?,
        cpus,
    })
}

/// Who runs where (`--show`, issue 18): every user-space process that is
/// SCHED_FIFO/SCHED_RR (as [`read_rt_tasks_files`] finds them, for the
/// `rt-competitor` check) or pinned (its `Cpus_allowed_list` lacks some
/// of the `online` CPUs; `priority` 0), in ascending pid order; kernel
/// threads left out. Reads every process's `stat`, and `status` of the
/// user-space ones.
pub fn read_placed_tasks(root: &Root, online: &CpuSet) -> Vec<RtTask> {
    root.numbered_entries("/proc", "")
        .into_iter()
        .filter_map(|pid| read_task(root, pid, Some(online)))
        .collect()
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
