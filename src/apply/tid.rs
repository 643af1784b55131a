//! One thread changed by its TID (issue 18): [`save`] its scheduling and
//! affinity, [`apply_thread`] a plan's (the same steps and order as a
//! launch: affinity last, or first under SCHED_DEADLINE; read back) and
//! [`restore`] what was saved. The launch's rehearsal (`app::rehearse`,
//! on a throwaway thread) and the `--pid` wing (`pid::apply::apply_all`,
//! every thread of a process) use them.

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
                    crate::apply::attr_words(&got),
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
                &format!("sched_setattr({})", crate::apply::attr_words(&saved.attr)),
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
