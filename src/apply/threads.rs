//! Applying a [`Plan`]'s scheduling and affinity to threads of a running
//! process (`--pid`, issue 18): [`apply_thread`] for one thread (the same
//! steps and order as a launch: affinity last, or first under
//! SCHED_DEADLINE; read back), and [`apply_all`], all or nothing: each
//! thread's attributes are saved before it is changed, and a failure
//! restores every thread already changed.

use super::{apply_affinity_of, apply_sched_of, get_affinity_of};
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result, Step};
use crate::ffi;
use crate::plan::Plan;
use crate::policy::Policy;

/// A thread's scheduling and affinity before pinrun changed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The thread id.
    pub tid: u32,
    /// Its affinity (`sched_getaffinity(2)`).
    pub affinity: CpuSet,
    /// Its attributes (`sched_getattr(2)`: policy, priority, nice, flags,
    /// deadline parameters).
    pub attr: ffi::SchedAttr,
    /// Its nice value (`getpriority(2)`: `sched_getattr(2)` says 0 under
    /// SCHED_FIFO, SCHED_RR and SCHED_DEADLINE, whatever it is).
    pub nice: i32,
}

/// Reads what [`restore`] needs to undo a change of thread `tid`.
pub fn save(tid: u32, possible: &CpuSet) -> Result<Saved> {
    let affinity = get_affinity_of(tid, possible).map_err(|e| {
        Error::from_syscall(
            ErrorCode::AffinityFailed,
            &format!("sched_getaffinity(thread {tid})"),
            Step::SchedGetaffinity,
            &e,
        )
    })?;
    let attr = ffi::sched_getattr_of(tid).map_err(|e| {
        Error::from_syscall(
            ErrorCode::SchedFailed,
            &format!("sched_getattr(thread {tid})"),
            Step::SchedGetattr,
            &e,
        )
    })?;
    let nice = ffi::get_nice_of(tid).map_err(|e| {
        Error::from_syscall(
            ErrorCode::SchedFailed,
            &format!("getpriority(thread {tid})"),
            Step::SetPriority,
            &e,
        )
    })?;
    Ok(Saved {
        tid,
        affinity,
        attr,
        nice,
    })
}

/// Applies the plan's scheduling and affinity to thread `tid` (0: the
/// calling thread), in a launch's order, the affinity read back. The
/// memory policy is not applied: no system call sets another thread's.
pub fn apply_thread(tid: u32, plan: &Plan, possible: &CpuSet) -> Result<()> {
    let deadline = plan.sched.policy.is_some_and(Policy::is_deadline);
    if let (true, Some(cpus)) = (deadline, &plan.cpus) {
        apply_affinity_of(tid, cpus, possible)?;
    }
    if plan.sched.is_requested() {
        apply_sched_of(tid, &plan.sched)?;
        let got = ffi::sched_getattr_of(tid).map_err(|e| {
            Error::from_syscall(
                ErrorCode::SchedFailed,
                "sched_getattr",
                Step::SchedGetattr,
                &e,
            )
        })?;
        if let Some(p) = plan.sched.policy
            && (got.sched_policy != p.number()
                || got.sched_priority != p.rt_priority().unwrap_or(0))
        {
            return Err(Error::new(
                ErrorCode::SchedFailed,
                format!(
                    "sched_setattr(thread {tid}): read back {} instead of {}",
                    super::attr_words(&got),
                    p.name()
                ),
            )
            .hint("another program changed the thread's policy meanwhile; run pinrun again"));
        }
    }
    if let (false, Some(cpus)) = (deadline, &plan.cpus) {
        apply_affinity_of(tid, cpus, possible)?;
    }
    Ok(())
}

/// Gives thread `saved.tid` back its saved attributes and affinity (the
/// affinity first when it was a SCHED_DEADLINE thread, whose affinity the
/// kernel checks against its root domain, else last), each attribute
/// independently: one that fails does not keep the others from being
/// restored. The nice value is restored with `setpriority(2)` as well,
/// since `sched_setattr(2)` ignores `sched_nice` for SCHED_FIFO, SCHED_RR
/// and SCHED_DEADLINE (`__setscheduler_params()`, kernel/sched/syscalls.c,
/// sets the static priority only for the fair policies). An attribute
/// already as saved is not set again: a restore touches only what
/// changed. Errors: the first failure.
pub fn restore(saved: &Saved, possible: &CpuSet) -> Result<()> {
    let sched = || {
        if ffi::sched_getattr_of(saved.tid).is_ok_and(|a| a == saved.attr) {
            return Ok(());
        }
        ffi::sched_setattr_of(saved.tid, &saved.attr).map_err(|e| {
            Error::from_syscall(
                ErrorCode::SchedFailed,
                &format!("sched_setattr({})", super::attr_words(&saved.attr)),
                Step::SchedSetattr,
                &e,
            )
        })
    };
    let nice = || {
        if ffi::get_nice_of(saved.tid).is_ok_and(|n| n == saved.nice) {
            return Ok(());
        }
        ffi::set_nice_of(saved.tid, saved.nice).map_err(|e| {
            Error::from_syscall(
                ErrorCode::SchedFailed,
                &format!("setpriority(nice {})", saved.nice),
                Step::SetPriority,
                &e,
            )
        })
    };
    let affinity = || {
        if get_affinity_of(saved.tid, possible).is_ok_and(|a| a == saved.affinity) {
            return Ok(());
        }
        apply_affinity_of(saved.tid, &saved.affinity, possible)
    };
    let results = if saved.attr.sched_policy == Policy::SCHED_DEADLINE {
        [affinity(), sched(), nice()]
    } else {
        [sched(), nice(), affinity()]
    };
    results.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
}

/// How [`apply_all`] failed: the thread and why, and the threads whose
/// restore failed in turn (with why).
#[derive(Debug)]
pub struct Failed {
    /// The thread the apply failed on.
    pub tid: u32,
    /// How many threads were changed before it.
    pub index: usize,
    /// Why.
    pub error: Error,
    /// Threads already changed that could not be restored.
    pub not_restored: Vec<(u32, Error)>,
}

/// Applies the plan to every thread `list()` names ([`apply_thread`]),
/// saving each first, in passes: after each pass `list()` is asked again,
/// and a pass that finds no thread not yet changed ends the work (a thread
/// created by a changed thread inherits its affinity and policy), at most
/// `max_passes`. On a failure, restores the threads already changed (the
/// failing one too, which may be half changed), newest first. A thread
/// that exits meanwhile (ESRCH) is skipped. `check(tid)` runs before each
/// thread (the caller refuses a process that exited or a
/// PID that was reused); `fail_at`: a test hook making the apply of the
/// n-th thread (from 0) fail with EPERM, as if the kernel refused it.
/// Returns the threads changed, in order, and the passes made.
pub fn apply_all(
    list: &dyn Fn() -> Vec<u32>,
    max_passes: usize,
    plan: &Plan,
    possible: &CpuSet,
    check: &dyn Fn(u32) -> Result<()>,
    fail_at: Option<usize>,
) -> std::result::Result<(Vec<u32>, usize), Failed> {
    let mut done: Vec<Saved> = Vec::new();
    // A thread that exited (ESRCH) needs no restore.
    let rollback = |done: &[Saved]| -> Vec<(u32, Error)> {
        done.iter()
            .rev()
            .filter_map(|s| restore(s, possible).err().map(|e| (s.tid, e)))
            .filter(|(_, e)| e.errno() != Some(nix::errno::Errno::ESRCH))
            .collect()
    };
    let mut gone: Vec<u32> = Vec::new();
    let mut passes = 0;
    while passes < max_passes.max(1) {
        passes += 1;
        let new: Vec<u32> = list()
            .into_iter()
            .filter(|t| !done.iter().any(|s| s.tid == *t) && !gone.contains(t))
            .collect();
        if new.is_empty() {
            break;
        }
        for tid in new {
            let index = done.len();
            let step = check(tid)
                .and_then(|()| save(tid, possible))
                .and_then(|saved| {
                    done.push(saved);
                    if fail_at == Some(index) {
                        return Err(Error::from_syscall(
                            ErrorCode::SchedFailed,
                            "sched_setattr (PINRUN_TEST_FAIL_AT)",
                            Step::SchedSetattr,
                            &std::io::Error::from_raw_os_error(libc::EPERM),
                        ));
                    }
                    apply_thread(tid, plan, possible)
                });
            // A thread that exited meanwhile (ESRCH) is not a failure: it is
            // gone, with whatever was set on it.
            if step
                .as_ref()
                .is_err_and(|e| e.errno() == Some(nix::errno::Errno::ESRCH))
                && fail_at != Some(index)
            {
                if done.last().is_some_and(|s| s.tid == tid) {
                    done.pop();
                }
                gone.push(tid);
                continue;
            }
            if let Err(error) = step {
                return Err(Failed {
                    tid,
                    error,
                    index,
                    not_restored: rollback(&done),
                });
            }
        }
    }
    Ok((done.iter().map(|s| s.tid).collect(), passes))
}

/// Moves the pages of process `pid` as `m` says (`migrate_pages(2)`, what
/// migratepages(8) does); returns the pages the kernel could not move
/// (busy or pinned pages are left where they are).
pub fn migrate(pid: u32, m: &crate::plan::threads::Migration) -> Result<u64> {
    let all = m.from.union(&m.to);
    let (_, maxnode) = super::nodemask(&all);
    let bytes = (maxnode - 1).div_ceil(64) as usize * 8;
    ffi::migrate_pages(
        pid,
        maxnode,
        &m.from.to_kernel_bytes(bytes),
        &m.to.to_kernel_bytes(bytes),
    )
    .map_err(|e| {
        let err = Error::new(
            ErrorCode::MigrateFailed,
            format!(
                "migrate_pages(process {pid}, nodes {} to nodes {}): {}",
                m.from,
                m.to,
                crate::error::errno_words(nix::errno::Errno::from_raw(
                    e.raw_os_error().unwrap_or(0)
                ))
            ),
        );
        match e.raw_os_error() {
            Some(libc::EPERM) => err.hint(
                "moving another user's pages needs CAP_SYS_NICE: run pinrun as the process's user or with CAP_SYS_NICE",
            ),
            Some(libc::EINVAL) => err.hint(format!(
                "a destination node is outside the process's Mems_allowed_list (grep Mems_allowed_list /proc/{pid}/status)"
            )),
            _ => err.hint("run pinrun again; migratepages(8) does the same"),
        }
    })
}
