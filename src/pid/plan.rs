//! Deciding for a running process (`--pid`, issue 18): who may change it
//! (the ownership rule of `sched_setattr(2)`/`sched_setaffinity(2)`), and
//! what `--migrate` moves (`migrate_pages(2)`). Pure.

use crate::cpuset::NodeSet;
use crate::error::{Error, ErrorCode, Result};
use std::collections::BTreeMap;

/// Refuses to change process `pid` when the kernel would answer EPERM for
/// its owner: without CAP_SYS_NICE, the caller's effective uid must be the
/// target's real or effective uid (`check_same_owner()`,
/// kernel/sched/syscalls.c; the same for `sched_setaffinity(2)`). `None`
/// for an unknown fact: the kernel then decides.
pub fn check_owner(
    pid: u32,
    caller_euid: u32,
    target_uids: Option<(u32, u32)>,
    cap_sys_nice: Option<bool>,
) -> Result<()> {
    let Some((ruid, euid)) = target_uids else {
        return Ok(());
    };
    if cap_sys_nice == Some(true) || caller_euid == ruid || caller_euid == euid {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::PidNotPermitted,
        format!(
            "--pid {pid}: the process belongs to uid {euid} and pinrun runs as uid {caller_euid} without CAP_SYS_NICE; the kernel refuses to change another user's threads (EPERM)"
        ),
    )
    .hint(format!(
        "run pinrun as uid {euid} (sudo -u '#{euid}' pinrun ...), or with CAP_SYS_NICE"
    )))
}

/// [`check_owner`] for every live thread of process `pid`, each given as
/// `(tid, its real and effective uids)`, the process's first live thread
/// first. Credentials are per thread: the kernel checks the target
/// thread's own (`check_same_owner()`, kernel/sched/syscalls.c), and a
/// thread that called `setresuid(2)` by raw system call (glibc's wrapper
/// broadcasts the change to every thread, the raw call does not) runs as
/// another uid than its process's main thread. The first thread the
/// kernel would refuse refuses the change (all or nothing); named when
/// its uids differ from the first thread's.
pub fn check_owners(
    pid: u32,
    caller_euid: u32,
    threads: &[(u32, Option<(u32, u32)>)],
    cap_sys_nice: Option<bool>,
) -> Result<()> {
    let first = threads.first().and_then(|t| t.1);
    for &(tid, uids) in threads {
        let Err(e) = check_owner(pid, caller_euid, uids, cap_sys_nice) else {
            continue;
        };
        let (Some((ruid, euid)), Some((_, first_euid))) = (uids, first) else {
            return Err(e);
        };
        if uids == first {
            return Err(e);
        }
        return Err(Error::new(
            ErrorCode::PidNotPermitted,
            format!(
                "--pid {pid}: thread {tid} runs as uid {euid} (real uid {ruid}; the process's thread {} runs as uid {first_euid}) and pinrun runs as uid {caller_euid} without CAP_SYS_NICE; the kernel checks each thread's own credentials and refuses to change another user's thread (EPERM), so no thread is changed",
                threads[0].0
            ),
        )
        .hint(format!(
            "credentials are per thread (grep Uid /proc/{pid}/task/*/status): run pinrun with CAP_SYS_NICE, or change only this user's threads with --tid TID"
        )));
    }
    Ok(())
}

/// Refuses an affinity of `cpus` for a process whose threads are in
/// cgroups of their own: each `(tid, cgroup, cpus)` is a live thread in
/// another cgroup than the first live thread, with its cgroup's cpuset
/// CPUs. The kernel bounds each thread's affinity by its own cpuset
/// (`__sched_setaffinity()` ANDs the request with
/// `cpuset_cpus_allowed()`, kernel/sched/syscalls.c and
/// kernel/cgroup/cpuset.c): CPUs outside it all are refused (EINVAL),
/// some of them silently dropped (pinrun reads the affinity back and
/// undoes the change). The plan is bounded by the first thread's
/// cgroup; this is the rest of the process.
pub fn check_thread_cpusets(
    pid: u32,
    cpus: &crate::cpuset::CpuSet,
    threads: &[(u32, String, crate::cpuset::CpuSet)],
) -> Result<()> {
    let Some((tid, cgroup, allowed)) = threads.iter().find(|t| !cpus.is_subset(&t.2)) else {
        return Ok(());
    };
    let kept = cpus.intersection(allowed);
    let (code, what) = if kept.is_empty() {
        (
            ErrorCode::AffinityFailed,
            "refuses them for it (sched_setaffinity: EINVAL)".to_string(),
        )
    } else {
        (
            ErrorCode::AffinityNarrowed,
            format!("would set CPUs {kept} instead"),
        )
    };
    Err(Error::new(
        code,
        format!(
            "--pid {pid}: thread {tid} is in cgroup {cgroup}, whose cpuset allows CPUs {allowed}: the kernel bounds each thread's affinity by its own cpuset (cpuset_cpus_allowed(), kernel/cgroup/cpuset.c), so for CPUs {cpus} it {what}; no thread is changed"
        ),
    )
    .hint(format!(
        "give CPUs of every thread's cpuset (grep cpuset /proc/{pid}/task/*/cgroup), or place thread {tid} apart with --tid {tid}"
    )))
}

/// The scheduling facts of a process's threads that the kernel's
/// permission checks weigh, the strictest of them all: every thread is
/// changed, so the plan must hold for the thread the kernel would refuse
/// first. Each thread gives `(policy, rt_priority, nice)` as its `stat`
/// says (`None`: unknown). Returns the policy (SCHED_IDLE if a thread has
/// it: leaving it needs RLIMIT_NICE; else a non-real-time policy if a
/// thread has one: a new real-time policy needs RLIMIT_RTPRIO; else the
/// first thread's), the lowest real-time priority (raising it is
/// checked) and the highest nice value (lowering it is checked,
/// `can_nice()`, kernel/sched/syscalls.c).
pub fn strictest(
    threads: &[(Option<u32>, Option<u32>, Option<i32>)],
) -> (Option<u32>, Option<u32>, Option<i32>) {
    use crate::policy::Policy;
    let policies: Vec<u32> = threads.iter().filter_map(|t| t.0).collect();
    let policy = policies
        .iter()
        .find(|p| **p == Policy::SCHED_IDLE)
        .or_else(|| {
            policies
                .iter()
                .find(|p| ![Policy::SCHED_FIFO, Policy::SCHED_RR].contains(p))
        })
        .or(policies.first())
        .copied();
    let rt_priority = threads.iter().filter_map(|t| t.1).min();
    let nice = threads.iter().filter_map(|t| t.2).max();
    (policy, rt_priority, nice)
}

/// Refuses a change of process `pid` the kernel would refuse, or that
/// means nothing, from what its `stat` says: `state` (field 3) `Z`
/// (zombie) or `X` (dead): its threads are gone; `kthread` (`PF_KTHREAD`
/// in field 9): a kernel thread, whose affinity is the kernel's
/// (`PF_NO_SETAFFINITY` answers EINVAL for most) and which pinrun never
/// changes. `deadline_threads`: the threads under SCHED_DEADLINE with
/// their affinity, when the plan sets `cpus` and no new policy: the
/// kernel answers EBUSY unless the new affinity spans the thread's root
/// domain (`dl_task_check_affinity()`, kernel/sched/syscalls.c), which
/// its current affinity does.
pub fn check_target(
    pid: u32,
    state: char,
    kthread: bool,
    cpus: Option<&crate::cpuset::CpuSet>,
    deadline_threads: &[(u32, crate::cpuset::CpuSet)],
) -> Result<()> {
    if matches!(state, 'Z' | 'X') {
        return Err(Error::new(
            ErrorCode::NoSuchProcess,
            format!("--pid {pid}: the process has exited (state {state}, a zombie its parent has not reaped): it has no thread to change"),
        )
        .hint(format!("its parent (grep PPid /proc/{pid}/status) reaps it; place the process that replaces it")));
    }
    if kthread {
        return Err(Error::new(
            ErrorCode::PidNotPermitted,
            format!("--pid {pid}: a kernel thread (PF_KTHREAD in /proc/{pid}/stat): pinrun does not change kernel threads, whose placement the kernel manages"),
        )
        .hint("keep kernel threads off CPUs with the kernel's parameters (isolcpus=, nohz_full=, rcu_nocbs=) or a cgroup v2 isolated partition"));
    }
    if let Some(cpus) = cpus
        && let Some((tid, span)) = deadline_threads.iter().find(|(_, a)| !a.is_subset(cpus))
    {
        return Err(Error::new(
            ErrorCode::AffinityFailed,
            format!("--pid {pid}: thread {tid} runs under SCHED_DEADLINE on CPUs {span}; the kernel refuses an affinity of CPUs {cpus} that does not span its root domain (sched_setaffinity: EBUSY)"),
        )
        .hint(format!("give CPUs including {span}, or change its policy in the same run (--fifo, --other), or place it in a cgroup v2 partition of its own")));
    }
    Ok(())
}

/// What `--migrate` moves with `migrate_pages(2)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The nodes pages move from: those holding pages of the process that
    /// are not among the destination nodes.
    pub from: NodeSet,
    /// The destination nodes.
    pub to: NodeSet,
    /// The resident bytes on `from` (from `numa_maps`): every page there
    /// moves, since `from` and `to` do not overlap (`do_migrate_pages()`,
    /// mm/mempolicy.c, moves each source node to a destination node).
    pub bytes: u64,
}

/// The migration of a process whose resident bytes per node are
/// `bytes_per_node` (`numa_maps`) to `to`; refused when `to` is empty or
/// the bytes exceed `limit` (`--migrate-limit`).
pub fn migration(
    pid: u32,
    bytes_per_node: &BTreeMap<u32, u64>,
    to: &NodeSet,
    limit: Option<u64>,
) -> Result<Migration> {
    if to.is_empty() {
        return Err(Error::new(
            ErrorCode::MigrateFailed,
            format!("--migrate: no destination node for process {pid}"),
        )
        .hint("say where: --membind NODES, or a placement (--node, --cpus) whose nodes take the pages"));
    }
    let from: NodeSet = bytes_per_node
        .iter()
        .filter(|(n, b)| **b > 0 && !to.contains(**n))
        .map(|(n, _)| *n)
        .collect();
    let bytes = from
        .iter()
        .map(|n| bytes_per_node.get(&n).copied().unwrap_or(0))
        .fold(0, u64::saturating_add);
    if let Some(limit) = limit
        && bytes > limit
    {
        return Err(Error::new(
            ErrorCode::MigrateFailed,
            format!(
                "--migrate: process {pid} has {bytes} bytes on nodes {from}, more than --migrate-limit {limit}"
            ),
        )
        .hint("raise --migrate-limit, or move fewer nodes' pages"));
    }
    Ok(Migration {
        from,
        to: to.clone(),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(v: &[u32]) -> NodeSet {
        v.iter().copied().collect()
    }

    /// check_same_owner(): euid == the target's uid or euid, or CAP_SYS_NICE.
    #[test]
    fn owner_rule() {
        assert!(check_owner(7, 1000, Some((1000, 1000)), Some(false)).is_ok());
        assert!(check_owner(7, 1000, Some((1000, 0)), Some(false)).is_ok());
        assert!(check_owner(7, 1000, Some((0, 1000)), Some(false)).is_ok());
        assert!(check_owner(7, 0, Some((1000, 1000)), Some(true)).is_ok());
        assert!(check_owner(7, 1000, None, Some(false)).is_ok());
        let e = check_owner(7, 1000, Some((1001, 1001)), Some(false)).unwrap_err();
        assert_eq!(e.code, ErrorCode::PidNotPermitted);
        assert!(e.message.contains("uid 1001"), "{}", e.message);
    }

    /// Credentials are per thread: a thread of another uid than the
    /// caller refuses the change, named when its uids differ from the
    /// first thread's; CAP_SYS_NICE changes every thread.
    #[test]
    fn owner_rule_per_thread() {
        let threads = [(10, Some((1000, 1000))), (11, Some((1001, 1001)))];
        assert!(check_owners(10, 1000, &threads[..1], Some(false)).is_ok());
        assert!(check_owners(10, 1000, &threads, Some(true)).is_ok());
        let e = check_owners(10, 1000, &threads, Some(false)).unwrap_err();
        assert_eq!(e.code, ErrorCode::PidNotPermitted);
        assert!(
            e.message.contains("thread 11 runs as uid 1001")
                && e.message.contains("thread 10 runs as uid 1000"),
            "{}",
            e.message
        );
        // The whole process another user's: the process-wide message.
        let e = check_owners(10, 1002, &threads, Some(false)).unwrap_err();
        assert!(!e.message.contains("thread 10"), "{}", e.message);
    }

    /// A thread in a cpuset without some planned CPUs: EINVAL when it has
    /// none of them, narrowed when some (`__sched_setaffinity()`).
    #[test]
    fn each_thread_is_bounded_by_its_own_cpuset() {
        let set = |s: &str| crate::cpuset::CpuSet::parse_sysfs_list(s, None).unwrap();
        let apart = [(12, "/rt".to_string(), set("0-1"))];
        assert!(check_thread_cpusets(10, &set("0"), &apart).is_ok());
        assert!(check_thread_cpusets(10, &set("2"), &[]).is_ok());
        let e = check_thread_cpusets(10, &set("2-3"), &apart).unwrap_err();
        assert_eq!(e.code, ErrorCode::AffinityFailed);
        assert!(
            e.message.contains("thread 12 is in cgroup /rt"),
            "{}",
            e.message
        );
        let e = check_thread_cpusets(10, &set("1-2"), &apart).unwrap_err();
        assert_eq!(e.code, ErrorCode::AffinityNarrowed);
        assert!(
            e.message.contains("would set CPUs 1 instead"),
            "{}",
            e.message
        );
    }

    /// The thread the kernel refuses first decides: the highest nice
    /// value, SCHED_IDLE before others, a non-real-time thread before
    /// real-time ones, the lowest real-time priority.
    #[test]
    fn strictest_thread_decides() {
        let t = |p, r, n| (Some(p), Some(r), Some(n));
        assert_eq!(
            strictest(&[t(0, 0, 0), t(0, 0, 5), t(0, 0, -2)]),
            (Some(0), Some(0), Some(5))
        );
        assert_eq!(
            strictest(&[t(1, 50, 0), t(5, 0, 3), t(0, 0, 0)]),
            (Some(5), Some(0), Some(3))
        );
        assert_eq!(
            strictest(&[t(1, 50, 0), t(2, 10, 0), t(0, 0, 0)]),
            (Some(0), Some(0), Some(0))
        );
        assert_eq!(
            strictest(&[t(1, 50, 0), t(2, 10, 0)]),
            (Some(1), Some(10), Some(0))
        );
        assert_eq!(strictest(&[]), (None, None, None));
    }

    /// Zombies and kernel threads are refused; a SCHED_DEADLINE thread's
    /// new affinity must include its current one (its root domain).
    #[test]
    fn targets_the_kernel_refuses() {
        let set = |s: &str| crate::cpuset::CpuSet::parse_sysfs_list(s, None).unwrap();
        assert!(check_target(9, 'S', false, Some(&set("1")), &[]).is_ok());
        let e = check_target(9, 'Z', false, None, &[]).unwrap_err();
        assert_eq!(e.code, ErrorCode::NoSuchProcess);
        let e = check_target(2, 'S', true, None, &[]).unwrap_err();
        assert!(e.message.contains("kernel thread"), "{}", e.message);
        let dl = [(12, set("0-1"))];
        assert!(check_target(9, 'S', false, Some(&set("0-3")), &dl).is_ok());
        assert!(check_target(9, 'S', false, None, &dl).is_ok());
        let e = check_target(9, 'R', false, Some(&set("1")), &dl).unwrap_err();
        assert!(
            e.message.contains("thread 12") && e.message.contains("EBUSY"),
            "{}",
            e.message
        );
    }

    #[test]
    fn migration_moves_what_is_off_the_destination() {
        let per: BTreeMap<u32, u64> = [(0, 4096), (1, 8192), (2, 0)].into_iter().collect();
        let m = migration(1, &per, &nodes(&[1]), None).unwrap();
        assert_eq!((m.from, m.bytes), (nodes(&[0]), 4096));
        let m = migration(1, &per, &nodes(&[0, 1]), None).unwrap();
        assert_eq!((m.from.is_empty(), m.bytes), (true, 0));
        let m = migration(1, &per, &nodes(&[2]), None).unwrap();
        assert_eq!((m.from, m.bytes), (nodes(&[0, 1]), 12288));
        assert_eq!(
            migration(1, &per, &nodes(&[2]), Some(12287))
                .unwrap_err()
                .code,
            ErrorCode::MigrateFailed
        );
        assert!(migration(1, &per, &nodes(&[2]), Some(12288)).is_ok());
        assert!(migration(1, &per, &nodes(&[]), None).is_err());
    }
}
