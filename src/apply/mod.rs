//! Applying a [`Plan`] to this process, in the order ARCHITECTURE.md §1 fixes:
//! memory policy (`set_mempolicy(2)`), scheduling (`sched_setattr(2)`),
//! CPU affinity last (`sched_setaffinity(2)`), right before exec. The
//! affinity is read back: the kernel silently narrows a mask to the cgroup
//! cpuset, and pinrun never runs a command on a placement it was not asked for.

pub mod helper;
pub mod per_thread;
pub mod tid;
pub mod transaction;

use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result, Step};
use crate::ffi;
use crate::plan::{MemMode, MemPlan, Plan};
use crate::policy::Policy;
use crate::request::SchedRequest;
use std::io;
use transaction::{Transaction, Undone};

/// `sched_attr.sched_flags`' `SCHED_FLAG_RESET_ON_FORK` (include/uapi/linux/sched.h): children
/// start with SCHED_OTHER and nice 0 or above.
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

fn mempolicy_mode(mode: MemMode) -> i32 {
    use ffi::{
        MPOL_BIND, MPOL_INTERLEAVE, MPOL_LOCAL, MPOL_PREFERRED, MPOL_PREFERRED_MANY,
        MPOL_WEIGHTED_INTERLEAVE,
    };
    match mode {
        MemMode::Bind => MPOL_BIND,
        MemMode::Preferred => MPOL_PREFERRED,
        MemMode::PreferredMany => MPOL_PREFERRED_MANY,
        MemMode::Interleave => MPOL_INTERLEAVE,
        MemMode::WeightedInterleave => MPOL_WEIGHTED_INTERLEAVE,
        MemMode::Local => MPOL_LOCAL,
    }
}

/// Sets the calling thread's memory policy to `mode` over `nodes`
/// (`set_mempolicy(2)`; no call sets another thread's).
pub fn apply_memory(mode: MemMode, nodes: &CpuSet) -> Result<()> {
    let res = if mode == MemMode::Local {
        ffi::set_mempolicy(ffi::MPOL_LOCAL, None, 0)
    } else {
        let (mask, maxnode) = nodes.to_kernel_nodemask();
        ffi::set_mempolicy(mempolicy_mode(mode), Some(&mask), maxnode)
    };
    res.map_err(|e| {
        let err = Error::from_syscall(
            ErrorCode::MempolicyFailed,
            &format!("set_mempolicy({}, nodes {})", mode.name(), nodes),
            Step::SetMempolicy,
            &e,
        );
        match (mode, e.raw_os_error()) {
            (MemMode::WeightedInterleave, Some(libc::EINVAL)) => {
                err.hint("weighted interleave needs Linux 6.9 or later")
            }
            (MemMode::PreferredMany, Some(libc::EINVAL)) => {
                err.hint("preferred-many needs Linux 5.15 or later")
            }
            _ => err,
        }
    })
}

/// The `sched_attr` that applies `req` on top of the current one: the
/// current policy, priority, nice and flags are kept unless given.
pub fn sched_attr(current: ffi::SchedAttr, req: &SchedRequest) -> ffi::SchedAttr {
    let mut a = current;
    if let Some(p) = req.policy {
        a.sched_priority = 0;
        a.sched_runtime = 0;
        a.sched_deadline = 0;
        a.sched_period = 0;
        a.sched_policy = p.number();
        a.sched_priority = p.rt_priority().unwrap_or(0);
        if let Policy::Deadline {
            runtime,
            deadline,
            period,
        } = p
        {
            a.sched_runtime = runtime;
            a.sched_deadline = deadline;
            a.sched_period = period;
        }
    }
    if let Some(n) = req.nice {
        a.sched_nice = n;
    }
    if req.reset_on_fork {
        a.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
    }
    // Only flags sched_setattr accepts back unchanged.
    a.sched_flags &= SCHED_FLAG_RESET_ON_FORK;
    a
}

/// `sched_attr` in words, the policy named as the kernel names it:
/// `SCHED_DEADLINE runtime 20ms deadline 100ms period 100ms, reset-on-fork`.
pub fn attr_words(a: &ffi::SchedAttr) -> String {
    use crate::words::ns_words;
    let name = Policy::kernel_name_of(a.sched_policy)
        .map_or_else(|| format!("policy {}", a.sched_policy), str::to_string);
    let mut s = match a.sched_policy {
        Policy::SCHED_FIFO | Policy::SCHED_RR => format!("{name} priority {}", a.sched_priority),
        Policy::SCHED_DEADLINE => format!(
            "{name} runtime {} deadline {} period {}",
            ns_words(a.sched_runtime),
            ns_words(a.sched_deadline),
            ns_words(a.sched_period)
        ),
        _ => format!("{name} nice {}", a.sched_nice),
    };
    if a.sched_flags & SCHED_FLAG_RESET_ON_FORK != 0 {
        s.push_str(", reset-on-fork");
    }
    s
}

/// Applies `req` to thread `tid` (0: the calling thread): `setpriority(2)`
/// for `--nice`, then `sched_setattr(2)` on top of its current attributes.
pub fn apply_sched_of(tid: u32, req: &SchedRequest) -> Result<()> {
    let fail = |step: Step, what: &str, e: io::Error| {
        Error::from_syscall(ErrorCode::SchedFailed, what, step, &e)
    };
    if let Some(n) = req.nice {
        ffi::set_nice_of(tid, n)
            .map_err(|e| fail(Step::SetPriority, &format!("setpriority(nice {n})"), e))?;
    }
    let mut current =
        ffi::sched_getattr_of(tid).map_err(|e| fail(Step::SchedGetattr, "sched_getattr", e))?;
    match req.nice {
        Some(n) => current.sched_nice = n,
        // sched_getattr(2) says nice 0 under SCHED_FIFO, SCHED_RR and
        // SCHED_DEADLINE (get_params(), kernel/sched/syscalls.c), while the
        // task keeps its nice value: leaving a real-time policy would reset
        // it to 0. getpriority(2) reads the one kept (as chrt -o keeps it).
        None => {
            if let Ok(n) = ffi::get_nice_of(tid) {
                current.sched_nice = n;
            }
        }
    }
    let attr = sched_attr(current, req);
    ffi::sched_setattr_of(tid, &attr).map_err(|e| {
        fail(
            Step::SchedSetattr,
            &format!("sched_setattr({})", attr_words(&attr)),
            e,
        )
    })
}

/// This thread's affinity, with a buffer sized from `possible` and doubled
/// on EINVAL (the kernel's `nr_cpu_ids` may exceed what sysfs said).
pub fn get_affinity(possible: &CpuSet) -> io::Result<CpuSet> {
    get_affinity_of(0, possible)
}

/// Thread `tid`'s affinity (0: the calling thread), as [`get_affinity`].
pub fn get_affinity_of(tid: u32, possible: &CpuSet) -> io::Result<CpuSet> {
    let mut bytes = mask_bytes(possible, &CpuSet::new());
    loop {
        match ffi::sched_getaffinity_of(tid, bytes) {
            Ok(b) => return Ok(CpuSet::from_kernel_bytes(&b)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && bytes < (1 << 20) => bytes *= 2,
            Err(e) => return Err(e),
        }
    }
}

/// The bytes of an affinity mask that holds every CPU of `possible` and
/// `cpus`: whole 64-bit words, as the kernel's `cpumask` copies them.
pub fn mask_bytes(possible: &CpuSet, cpus: &CpuSet) -> usize {
    (possible.last().unwrap_or(0).max(cpus.last().unwrap_or(0)) as usize / 64 + 1) * 8
}

/// Sets thread `tid`'s affinity (0: the calling thread) to `cpus` and
/// reads it back: a narrower mask (the cgroup cpuset) is an error.
pub fn apply_affinity_of(tid: u32, cpus: &CpuSet, possible: &CpuSet) -> Result<()> {
    let bytes = mask_bytes(possible, cpus);
    ffi::sched_setaffinity_of(tid, &cpus.to_kernel_bytes(bytes)).map_err(|e| {
        Error::from_syscall(
            ErrorCode::AffinityFailed,
            &format!("sched_setaffinity(CPUs {cpus})"),
            Step::SchedSetaffinity,
            &e,
        )
    })?;
    let got = get_affinity_of(tid, possible).map_err(|e| {
        Error::from_syscall(
            ErrorCode::AffinityFailed,
            "sched_getaffinity",
            Step::SchedGetaffinity,
            &e,
        )
    })?;
    if &got != cpus {
        let me = (tid != 0).then_some(tid);
        let cgroup = crate::system::Root::machine(std::path::Path::new("/"))
            .ok()
            .and_then(|root| {
                let of = crate::system::cgroup::read_of(&root, me);
                crate::system::cgroup::read_cpuset(&root, &of)
            });
        let (why, hint) = narrowed_words(
            cpus,
            &got,
            cgroup.as_ref().map(|c| (c.file.as_str(), &c.cpus)),
        );
        return Err(Error::new(
            ErrorCode::AffinityNarrowed,
            format!("sched_setaffinity(CPUs {cpus}): read back CPUs {got}: {why}"),
        )
        .hint(hint));
    }
    Ok(())
}

/// Why an affinity read back as `got` differs from `cpus`, just set, and
/// the hint, from what is known: the thread's own affinity is not what
/// was set, and its cgroup's effective cpuset, read now (`cgroup`: the
/// file and its CPUs; `None`: unreadable), either lacks a chosen CPU (the
/// cpuset was narrowed: the kernel narrows every task's mask with it) or
/// allows them all (then the thread, or another of its process, set its
/// own affinity after pinrun's write).
fn narrowed_words(
    cpus: &CpuSet,
    got: &CpuSet,
    cgroup: Option<(&str, &CpuSet)>,
) -> (String, String) {
    match cgroup {
        Some((file, cg)) if !cpus.is_subset(cg) => (
            format!(
                "the thread's affinity is not what was set, and its cgroup's cpuset ({file}) is CPUs {cg} now, without CPUs {}: the cpuset was narrowed meanwhile",
                cpus.difference(cg)
            ),
            "the cgroup's cpuset no longer allows every chosen CPU; run pinrun again".into(),
        ),
        Some((file, cg)) => (
            format!(
                "the thread's affinity is not what was set, though its cgroup's cpuset ({file}: CPUs {cg}) allows every chosen CPU: the thread set its own affinity after pinrun's write{}",
                if got.is_subset(cpus) { "" } else { " (to CPUs pinrun did not choose)" }
            ),
            "a program that pins its own threads undoes pinrun's change: use the program's own setting, or run pinrun again".into(),
        ),
        None => (
            "the thread's affinity is not what was set, and its cgroup's cpuset could not be read to tell whether it was narrowed or the thread set its own affinity".into(),
            "compare the thread's Cpus_allowed_list (/proc/TID/status) with its cgroup's cpuset.cpus.effective; run pinrun again".into(),
        ),
    }
}

/// One change [`apply`] makes to the calling thread.
enum Own<'p> {
    /// `set_mempolicy(2)`.
    Memory(&'p MemPlan),
    /// `setpriority(2)` for the nice value, then `sched_setattr(2)`.
    Sched(&'p SchedRequest),
    /// `sched_setaffinity(2)`, read back.
    Affinity(&'p CpuSet),
}

/// The changes `plan` makes to the calling thread, in the order they are
/// made: the memory policy, the scheduling, the affinity last, except for
/// SCHED_DEADLINE: the kernel checks a deadline task's current affinity
/// against its root domain, so the affinity is set before the policy.
fn own_changes(plan: &Plan) -> Vec<Own<'_>> {
    let mut out = Vec::new();
    if let Some(m) = &plan.memory {
        out.push(Own::Memory(m));
    }
    let deadline = plan.sched.policy.is_some_and(Policy::is_deadline);
    if let (true, Some(cpus)) = (deadline, &plan.cpus) {
        out.push(Own::Affinity(cpus));
    }
    if plan.sched.is_requested() {
        out.push(Own::Sched(&plan.sched));
    }
    if let (false, Some(cpus)) = (deadline, &plan.cpus) {
        out.push(Own::Affinity(cpus));
    }
    out
}

/// Makes one change of [`own_changes`] to the calling thread.
fn make(change: &Own, possible: &CpuSet) -> Result<()> {
    match change {
        Own::Memory(m) => apply_memory(m.mode, &m.nodes),
        Own::Sched(s) => apply_sched_of(0, s),
        Own::Affinity(cpus) => apply_affinity_of(0, cpus, possible),
    }
}

/// Applies the plan to the calling thread: memory policy, scheduling,
/// affinity last (first under SCHED_DEADLINE, whose affinity the kernel
/// checks against its root domain). Stops at the first failure; the
/// caller must then not exec.
pub fn apply(plan: &Plan, possible: &CpuSet) -> Result<()> {
    for c in own_changes(plan) {
        make(&c, possible)?;
    }
    Ok(())
}

/// What one change of [`own_changes`] changes, read before it is made
/// (`None`: it could not be read, and is not put back).
#[derive(Clone)]
enum Before {
    /// `get_mempolicy(2)`: mode, node mask, `maxnode`.
    Memory(Option<(i32, Vec<u8>, u64)>),
    /// `sched_getattr(2)` and `getpriority(2)` (the nice value, which
    /// `sched_getattr(2)` says is 0 under the real-time policies).
    Sched(Option<(ffi::SchedAttr, i32)>),
    /// `sched_getaffinity(2)`.
    Affinity(Option<CpuSet>),
}

impl Before {
    /// Reads what `change` changes on the calling thread.
    fn of(change: &Own, possible: &CpuSet) -> Before {
        match change {
            Own::Memory(_) => Before::Memory(ffi::get_mempolicy().ok()),
            Own::Sched(_) => {
                Before::Sched(ffi::sched_getattr_of(0).ok().zip(ffi::get_nice_of(0).ok()))
            }
            Own::Affinity(_) => Before::Affinity(get_affinity(possible).ok()),
        }
    }

    /// Sets it back on the calling thread where it differs now; best
    /// effort (what cannot be set back ends with pinrun).
    fn put_back(&self, possible: &CpuSet) {
        match self {
            Before::Memory(Some((mode, mask, maxnode))) => {
                if ffi::get_mempolicy().ok().as_ref() != Some(&(*mode, mask.clone(), *maxnode)) {
                    // MPOL_DEFAULT takes no node mask.
                    let _ = match *mode {
                        0 => ffi::set_mempolicy(0, None, 0),
                        m => ffi::set_mempolicy(m, Some(mask), *maxnode),
                    };
                }
            }
            Before::Sched(Some((attr, nice))) => {
                if ffi::sched_getattr_of(0).ok() != Some(*attr) {
                    let _ = ffi::sched_setattr_of(0, attr);
                }
                if ffi::get_nice_of(0).ok() != Some(*nice) {
                    let _ = ffi::set_nice_of(0, *nice);
                }
            }
            Before::Affinity(Some(cpus)) => {
                if get_affinity(possible).ok().as_ref() != Some(cpus) {
                    let _ = apply_affinity_of(0, cpus, possible);
                }
            }
            Before::Memory(None) | Before::Sched(None) | Before::Affinity(None) => {}
        }
    }
}

/// Applies the plan to the calling thread as steps of `tx`, with the same
/// system calls in the same order as [`apply`]; before each change, what
/// it changes is read (`Before::of`: `get_mempolicy(2)`;
/// `sched_getattr(2)` and `getpriority(2)`; `sched_getaffinity(2)`) and
/// its undo registered: set back where it differs. A change that fails
/// puts back its own part too (the nice value set before a refused
/// `sched_setattr(2)`). The undos are quiet ([`Undone::Quiet`]): pinrun's
/// own attributes end with it, and a failure's error is the same as the
/// dry run's rehearsal of these calls; they are put back so that the rest
/// of the rollback (the IRQ steering's undo, which may start `systemctl`)
/// runs as pinrun was started. A failure goes through `explain` before
/// the rollback's words are added.
pub fn apply_steps<'a>(
    tx: &mut Transaction<'a>,
    plan: &'a Plan,
    possible: &'a CpuSet,
    explain: &dyn Fn(Error) -> Error,
) -> Result<()> {
    for c in own_changes(plan) {
        let what = match c {
            Own::Memory(_) => "pinrun's memory policy",
            Own::Sched(_) => "pinrun's scheduling policy",
            Own::Affinity(_) => "pinrun's affinity",
        };
        let saved = Before::of(&c, possible);
        let undo = saved.clone();
        tx.step(
            what,
            move || {
                undo.put_back(possible);
                Undone::Quiet
            },
            || {
                make(&c, possible).map_err(|e| {
                    saved.put_back(possible);
                    explain(e)
                })
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(cpus: Option<&str>, memory: Option<MemMode>, sched: SchedRequest) -> Plan {
        Plan {
            cpus: cpus.map(|c| CpuSet::parse(c).unwrap()),
            cores: vec![],
            nodes: Default::default(),
            memory: memory.map(|mode| MemPlan {
                mode,
                nodes: Default::default(),
            }),
            sched,
            reasons: vec![],
            omp: None,
            thread_map: None,
            choice: None,
        }
    }

    fn names(plan: &Plan) -> Vec<&'static str> {
        own_changes(plan)
            .iter()
            .map(|c| match c {
                Own::Memory(_) => "memory",
                Own::Sched(_) => "sched",
                Own::Affinity(_) => "affinity",
            })
            .collect()
    }

    /// ARCHITECTURE.md §1: the affinity last, except under SCHED_DEADLINE
    /// (the kernel checks a deadline task's affinity against its root
    /// domain, so it is set before the policy).
    #[test]
    fn own_changes_keep_the_launch_order() {
        let fifo = SchedRequest {
            policy: Some(Policy::Fifo(10)),
            ..Default::default()
        };
        let p = plan(Some("0"), Some(MemMode::Local), fifo);
        assert_eq!(names(&p), ["memory", "sched", "affinity"]);
        let dl = SchedRequest {
            policy: Some(Policy::Deadline {
                runtime: 1_000_000,
                deadline: 10_000_000,
                period: 10_000_000,
            }),
            ..Default::default()
        };
        let p = plan(Some("0"), Some(MemMode::Local), dl);
        assert_eq!(names(&p), ["memory", "affinity", "sched"]);
        let p = plan(None, None, SchedRequest::default());
        assert!(names(&p).is_empty());
    }

    /// A launch whose affinity fails (no CPU 4095 here: EINVAL) puts
    /// back the memory policy and the nice value it had set, on this
    /// thread, as the kernel reads them back; the error is the affinity's,
    /// unchanged (what the dry run's rehearsal says).
    #[test]
    fn a_failed_affinity_puts_back_the_memory_policy_and_the_nice_value() {
        std::thread::spawn(|| {
            let possible = CpuSet::parse("0").unwrap();
            let before_mem = ffi::get_mempolicy().unwrap();
            let before_nice = ffi::get_nice_of(0).unwrap();
            let nice = SchedRequest {
                nice: Some((before_nice + 3).min(19)),
                ..Default::default()
            };
            let p = plan(Some("4095"), Some(MemMode::Local), nice);
            let mut tx = transaction::Transaction::new();
            let made = std::cell::RefCell::new(Vec::new());
            let e = apply_steps(&mut tx, &p, &possible, &|e| {
                // By the failure, the earlier steps are still made.
                made.borrow_mut().push((
                    ffi::get_mempolicy().unwrap().0,
                    ffi::get_nice_of(0).unwrap(),
                ));
                e
            })
            .unwrap_err();
            assert_eq!(e.code, ErrorCode::AffinityFailed, "{e:?}");
            assert!(
                e.message
                    .starts_with("sched_setaffinity(CPUs 4095): Invalid argument (EINVAL)")
                    && !e.message.contains("put back"),
                "{e:?}"
            );
            assert_eq!(
                *made.borrow(),
                [(ffi::MPOL_LOCAL, (before_nice + 3).min(19))]
            );
            assert_eq!(ffi::get_mempolicy().unwrap(), before_mem);
            assert_eq!(ffi::get_nice_of(0).unwrap(), before_nice);
        })
        .join()
        .unwrap();
    }

    /// A scheduling step the kernel refuses (SCHED_DEADLINE with a
    /// runtime above its deadline: EINVAL from `sched_setattr(2)`) after
    /// its `setpriority(2)` changed the nice value puts that back itself:
    /// the thread's nice value read back is the one before.
    #[test]
    fn a_refused_sched_setattr_puts_back_the_nice_it_set() {
        std::thread::spawn(|| {
            let possible = CpuSet::parse("0").unwrap();
            let before = ffi::get_nice_of(0).unwrap();
            let sched = SchedRequest {
                policy: Some(Policy::Deadline {
                    runtime: 20_000_000,
                    deadline: 10_000_000,
                    period: 10_000_000,
                }),
                nice: Some((before + 2).min(19)),
                ..Default::default()
            };
            let p = plan(None, None, sched);
            let mut tx = transaction::Transaction::new();
            let set = std::cell::Cell::new(None);
            let e = apply_steps(&mut tx, &p, &possible, &|e| {
                set.set(ffi::get_nice_of(0).ok());
                e
            })
            .unwrap_err();
            assert_eq!(e.errno(), Some(nix::errno::Errno::EINVAL), "{e:?}");
            // Put back before the error was explained, as the kernel reads it.
            assert_eq!(set.get(), Some(before));
            assert_eq!(ffi::get_nice_of(0).unwrap(), before);
        })
        .join()
        .unwrap();
    }

    /// Issue 33 (low): a thread that re-pins itself was called "(cgroup
    /// cpuset changed?)". What is known is said: the cgroup's cpuset, read,
    /// lacks a chosen CPU (narrowed), or allows them all (the thread set
    /// its own affinity), or could not be read.
    #[test]
    fn a_narrowed_affinity_says_what_the_cgroup_explains() {
        let set = |s: &str| CpuSet::parse(s).unwrap();
        let file = "/sys/fs/cgroup/a/cpuset.cpus.effective";
        let (why, hint) = narrowed_words(&set("2-3"), &set("0"), Some((file, &set("0-3"))));
        assert!(
            why.contains("allows every chosen CPU: the thread set its own affinity"),
            "{why}"
        );
        assert!(why.contains("(to CPUs pinrun did not choose)"), "{why}");
        assert!(hint.contains("pins its own threads"), "{hint}");
        let (why, hint) = narrowed_words(&set("2-3"), &set("2"), Some((file, &set("0-2"))));
        assert!(why.contains("is CPUs 0-2 now, without CPUs 3"), "{why}");
        assert!(hint.contains("no longer allows"), "{hint}");
        let (why, _) = narrowed_words(&set("2-3"), &set("2"), None);
        assert!(why.contains("could not be read"), "{why}");
        assert!(!why.contains("changed?"), "{why}");
    }

    #[test]
    fn maxnode_covers_highest_node() {
        let nodemask = |n: &[u32]| n.iter().copied().collect::<CpuSet>().to_kernel_nodemask();
        let (mask, maxnode) = nodemask(&[0]);
        assert_eq!((mask.len(), maxnode), (8, 2));
        let (mask, maxnode) = nodemask(&[0, 8]);
        assert_eq!((maxnode, mask[1]), (10, 1));
        let (mask, maxnode) = nodemask(&[255]);
        assert_eq!((mask.len(), maxnode), (32, 257));
    }

    #[test]
    fn sched_attr_keeps_what_is_not_given() {
        let cur = ffi::SchedAttr {
            sched_nice: 5,
            ..Default::default()
        };
        let a = sched_attr(
            cur,
            &SchedRequest {
                policy: Some(Policy::Fifo(10)),
                ..Default::default()
            },
        );
        assert_eq!(
            (a.sched_policy, a.sched_priority, a.sched_nice),
            (Policy::SCHED_FIFO, 10, 5)
        );
        let a = sched_attr(
            cur,
            &SchedRequest {
                nice: Some(-3),
                reset_on_fork: true,
                ..Default::default()
            },
        );
        assert_eq!(
            (a.sched_policy, a.sched_nice, a.sched_flags),
            (Policy::SCHED_OTHER, -3, 1)
        );
    }
}
