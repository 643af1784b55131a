//! Applying a [`Plan`]'s scheduling and affinity to threads of a running
//! process (`--pid`, issue 18): [`apply_all`], all or nothing, each thread
//! by the core's [`crate::apply::tid`] (`apply_thread`: the same steps and
//! order as a launch): each thread's attributes are saved before it is
//! changed, and a failure restores every thread already changed.

pub mod undo;

use crate::apply::get_affinity_of;
use crate::apply::tid::{Saved, apply_thread, restore, save};
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result, Step};
use crate::ffi;
use crate::plan::Plan;
use crate::policy::Policy;

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
    /// Threads already changed that could not be restored, or were not
    /// (a TID that names another thread now is never touched).
    pub not_restored: Vec<(u32, Error)>,
    /// Threads already changed that exited before the restore (nothing
    /// to restore: the whole process, when it ended meanwhile).
    pub gone: usize,
    /// A TID that named another thread after pinrun's write to it (the
    /// thread exited and its TID was reused meanwhile): that thread may
    /// have been changed, and is not restored.
    pub reached_other: Option<u32>,
}

/// What [`apply_all`] asks of the caller about the process it changes.
pub struct Threads<'a> {
    /// The thread ids now (`/proc/PID/task`, or the one `--tid`).
    pub list: &'a dyn Fn() -> Vec<u32>,
    /// Before each write: the thread's start time when the process is
    /// still the one planned on and the TID still names a thread of it,
    /// else the caller's refusal (ESRCH: the thread is gone).
    pub check: &'a dyn Fn(u32) -> Result<u64>,
    /// The start time of whatever task the TID names now (field 22 of
    /// `/proc/TID/stat`, proc(5)): with the TID, a thread's identity;
    /// `None` once no task has it. A TID another process took has that
    /// task's start time, never `None`.
    pub start_time: &'a dyn Fn(u32) -> Option<u64>,
    /// Before each change, once the thread is saved: hands its saved
    /// state and start time to whatever undoes the change should pinrun
    /// die ([`undo::Undo::record`]); an error
    /// refuses the change.
    pub record: &'a dyn Fn(&Saved, u64) -> Result<()>,
}

/// A thread saved before its change, with its identity then.
struct Changed {
    saved: Saved,
    start_time: Option<u64>,
}

/// Whether thread state `s` is already what `plan` sets: the affinity
/// (when the plan sets one), and the scheduling attributes [`apply_thread`]
/// would set ([`crate::apply::sched_attr`]: policy, priority, deadline
/// parameters, reset-on-fork; the nice value by `getpriority(2)`). A
/// thread created by a changed thread inherits all of it (`clone(2)`:
/// the affinity and policy are copied from the creator), and needs no
/// change of its own.
fn is_as_planned(s: &Saved, plan: &Plan) -> bool {
    if plan.cpus.as_ref().is_some_and(|c| *c != s.affinity) {
        return false;
    }
    if !plan.sched.is_requested() {
        return true;
    }
    let want = crate::apply::sched_attr(s.attr, &plan.sched);
    let flags = |a: &ffi::SchedAttr| a.sched_flags & crate::apply::SCHED_FLAG_RESET_ON_FORK;
    // The deadline parameters only under SCHED_DEADLINE: for the fair
    // policies sched_getattr(2) reports the task's slice in sched_runtime
    // (get_params() in kernel/sched/syscalls.c, 6.12+: p->se.slice, the
    // base slice after a write of 0), never the 0 a change writes.
    let deadline = want.sched_policy == Policy::SCHED_DEADLINE;
    let dl = |a: &ffi::SchedAttr| (a.sched_runtime, a.sched_deadline, a.sched_period);
    want.sched_policy == s.attr.sched_policy
        && want.sched_priority == s.attr.sched_priority
        && (!deadline || dl(&want) == dl(&s.attr))
        && flags(&want) == flags(&s.attr)
        && plan.sched.nice.is_none_or(|n| n == s.nice)
}

/// Pause between the passes that verify the result: long enough for a
/// thread in the middle of `clone(2)` (it copies its creator's old
/// attributes and is not yet in `/proc/PID/task`) to appear.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(2);

/// Applies the plan to every thread `t.list()` names ([`apply_thread`]),
/// in passes, and verifies the result. Every pass lists the threads again
/// and reads each one not seen before (`sched_getaffinity(2)`,
/// `sched_getattr(2)`, `getpriority(2)`: cheap, so that a short-lived
/// thread is read before it exits); one already as planned
/// ([`is_as_planned`]: a thread created by a changed thread inherits the
/// change) is left, any other is changed. A pass agrees when it changed
/// nothing and read every new thread: one gone before it was read may have
/// started threads with the old placement. The work ends when two
/// consecutive passes, [`SETTLE`] apart, agree; when `max_passes` end
/// without that (threads keep appearing with the old placement: a thread
/// in the middle of `clone(2)` copies its creator's old attributes and is
/// not yet listed, and a chain of short-lived threads can stay ahead of
/// pinrun), it fails with `threads-unsettled`, restoring what it changed:
/// pinrun never reports success with a thread left on the old placement
/// (issue 33).
///
/// Before each change, `t.check(tid)` runs (the caller refuses a process
/// that exited or a PID that was reused, and gives the thread's start
/// time); after it, the start time is read again: a TID that names
/// another thread now (the thread exited and its TID was reused while
/// pinrun wrote it) fails the change, naming it, and that thread is not
/// "restored" to another thread's state. On a failure the threads already
/// changed are restored (the failing one too, which may be half changed),
/// newest first, each only while its TID still names the thread saved; a
/// thread that exited meanwhile (ESRCH) is skipped. `fail_at`: a test hook
/// making the change of the n-th thread (from 0) fail with EPERM, as if
/// the kernel refused it. Returns the threads changed, in order, the
/// threads found already as planned, and the passes made. Time and memory
/// are linear in the threads.
pub fn apply_all(
    t: &Threads,
    max_passes: usize,
    plan: &Plan,
    possible: &CpuSet,
    fail_at: Option<usize>,
) -> std::result::Result<(Vec<u32>, Vec<u32>, usize), Failed> {
    let mut w = Work {
        t,
        plan,
        possible,
        fail_at,
        done: Vec::new(),
        already: Vec::new(),
        seen: std::collections::HashSet::new(),
        set_back: 0,
        unread: 0,
        unread_passes: 0,
        reached_other: None,
    };
    let mut passes = 0;
    let mut agreeing = 0;
    while agreeing < 2 {
        if passes == max_passes.max(2) {
            let why = if w.set_back > 0 {
                format!(
                    "threads kept leaving the plan after {passes} passes over the process's threads: {} a thread pinrun had changed was found set back (the program sets its own affinity or policy, or a thread's execve(2) replaced the process)",
                    crate::words::count(w.set_back, "time")
                )
            } else if w.unread_passes > 0 {
                format!(
                    "threads kept appearing with the old placement or policy, or exiting before pinrun could read them, for {passes} passes over the process's threads: in {} nothing needed a change but {} had exited before pinrun read them, so threads they may have created on the old placement were not ruled out (threads living less than a pass, or pinrun kept off the CPU on a busy machine)",
                    crate::words::count_as(w.unread_passes, "pass", "passes"),
                    crate::words::count(w.unread, "listed thread")
                )
            } else {
                format!(
                    "threads kept appearing with the old placement or policy after {passes} passes over the process's threads"
                )
            };
            let error = Error::new(ErrorCode::ThreadsUnsettled, why)
            .hint("a thread was created from one pinrun had not reached yet, each pass; run pinrun again when the process creates threads less often, or set the policy and affinity at launch (pinrun -- COMMAND)");
            let tid = w.done.last().map_or(0, |c| c.saved.tid);
            let mut failed = w.fail(tid, w.done.len(), error);
            // Threads created from changed threads inherited the change
            // and were never saved: not restorable, and said.
            let kept = (t.list)()
                .into_iter()
                .filter(|&tid| save(tid, possible).is_ok_and(|s| is_as_planned(&s, plan)))
                .count();
            if kept > 0 {
                let (threads, are) = (
                    crate::words::count(kept, "live thread"),
                    if kept == 1 { "is" } else { "are" },
                );
                failed.error.message.push_str(&format!(
                    "; {threads} {are} on the new placement after the restore (created from changed threads, they inherited it)"
                ));
            }
            return Err(failed);
        }
        if passes > 0 {
            std::thread::sleep(SETTLE);
        }
        passes += 1;
        agreeing = if w.pass()? { agreeing + 1 } else { 0 };
    }
    let changed = w.done.iter().map(|c| c.saved.tid).collect();
    Ok((changed, w.already, passes))
}

/// [`apply_all`]'s state: what it was asked, the threads changed (in
/// order, saved), found as planned, and seen.
struct Work<'a> {
    t: &'a Threads<'a>,
    plan: &'a Plan,
    possible: &'a CpuSet,
    fail_at: Option<usize>,
    done: Vec<Changed>,
    already: Vec<u32>,
    /// Threads read once (changed, found as planned, or gone).
    seen: std::collections::HashSet<u32>,
    /// How many times a thread read before was found off the plan again.
    set_back: usize,
    /// How many new threads exited between the listing and their read.
    unread: usize,
    /// Passes that changed nothing but did not agree for such a thread.
    unread_passes: usize,
    /// [`Failed::reached_other`].
    reached_other: Option<u32>,
}

impl Work<'_> {
    /// One pass over the threads listed now: each new one read, and
    /// changed unless already as planned. `Ok(true)` when the pass agrees
    /// (nothing changed, every new thread read: one gone before pinrun
    /// read it may have started threads with the old placement).
    fn pass(&mut self) -> std::result::Result<bool, Failed> {
        let mut agrees = true;
        let (mut changed, mut unread) = (false, false);
        for tid in (self.t.list)() {
            let seen = !self.seen.insert(tid);
            let index = self.done.len();
            // The cheap read first (three system calls): a short-lived
            // thread is read before it exits, and one already as planned
            // needs nothing more. Every live thread is read again on each
            // pass: one changed before may have been set back (a thread
            // that sets its own affinity), or replaced (a thread's
            // execve(2) takes over the main thread's TID with its own,
            // old attributes).
            match save(tid, self.possible) {
                Ok(s) if is_as_planned(&s, self.plan) && self.fail_at != Some(index) => {
                    if !seen {
                        self.already.push(tid);
                    }
                    continue;
                }
                Ok(_) if seen => {
                    self.set_back += 1;
                }
                Ok(_) => {}
                Err(e) if seen && e.errno() == Some(nix::errno::Errno::ESRCH) => continue,
                Err(e) if e.errno() == Some(nix::errno::Errno::ESRCH) => {
                    agrees = false;
                    unread = true;
                    self.unread += 1;
                    continue;
                }
                Err(error) => return Err(self.fail(tid, index, error)),
            }
            agrees = false;
            changed = true;
            match self.change(tid, index) {
                Ok(()) => {}
                // A thread that exited meanwhile (ESRCH) is not a failure:
                // it is gone, with whatever was set on it.
                Err(e)
                    if e.errno() == Some(nix::errno::Errno::ESRCH)
                        && self.fail_at != Some(index) =>
                {
                    self.done.truncate(index);
                }
                Err(error) => {
                    // A TID reused by another thread is not restored.
                    if error.code == ErrorCode::NoSuchProcess && error.errno().is_none() {
                        self.done.truncate(index);
                    }
                    return Err(self.fail(tid, index, error));
                }
            }
        }
        if unread && !changed {
            self.unread_passes += 1;
        }
        Ok(agrees)
    }

    /// Changes thread `tid` (the `index`-th changed): its identity checked
    /// first, its state saved, the plan applied, its start time read
    /// again (a TID that names another thread now fails, naming it).
    fn change(&mut self, tid: u32, index: usize) -> Result<()> {
        let before = (self.t.check)(tid)?;
        let saved = save(tid, self.possible)?;
        (self.t.record)(&saved, before)?;
        self.done.push(Changed {
            saved,
            start_time: Some(before),
        });
        if self.fail_at == Some(index) {
            return Err(Error::from_syscall(
                ErrorCode::SchedFailed,
                "sched_setattr (PINRUN_TEST_FAIL_AT)",
                Step::SchedSetattr,
                &std::io::Error::from_raw_os_error(libc::EPERM),
            ));
        }
        apply_thread(tid, self.plan, self.possible)?;
        match (self.t.start_time)(tid) {
            Some(now) if now != before => {
                self.reached_other = Some(tid);
                Err(Error::new(
                ErrorCode::NoSuchProcess,
                format!(
                    "thread {tid} exited while pinrun changed it, and its TID now names another thread (started at {now}, not {before}), which pinrun's write may have reached{}: not restored, since its earlier state is unknown",
                    reached(tid, self.plan, self.possible)
                ),
            )
            .hint(format!(
                "check that thread (grep Tgid /proc/{tid}/status; taskset -p {tid}; chrt -p {tid})"
            )))
            }
            _ => Ok(()),
        }
    }

    /// The failure on thread `tid` (after `index` changed), with the
    /// threads changed restored ([`Work::rollback`]).
    fn fail(&self, tid: u32, index: usize, error: Error) -> Failed {
        let gone = std::cell::Cell::new(0);
        let not_restored = self.rollback(&gone);
        Failed {
            tid,
            index,
            error,
            not_restored,
            gone: gone.get(),
            reached_other: self.reached_other,
        }
    }

    /// Restores the threads changed, newest first, each only while its
    /// TID still names the thread saved; returns those not restored (a
    /// thread gone needs no restore) with why, and counts in `gone` those
    /// that exited.
    fn rollback(&self, gone: &std::cell::Cell<usize>) -> Vec<(u32, Error)> {
        let exited = |_| gone.set(gone.get() + 1);
        self.done
            .iter()
            .rev()
            .filter_map(|c| {
                let tid = c.saved.tid;
                match (self.t.start_time)(tid) {
                    // Gone: nothing to restore.
                    None => {
                        exited(tid);
                        None
                    }
                    Some(now) if c.start_time.is_some_and(|was| was != now) => Some((
                        tid,
                        Error::new(
                            ErrorCode::NoSuchProcess,
                            format!(
                                "it exited and TID {tid} now names another thread (started at {now}, not {}): not touched",
                                c.start_time.unwrap_or_default()
                            ),
                        ),
                    )),
                    Some(_) => restore(&c.saved, self.possible).err().map(|e| (tid, e)),
                }
            })
            .filter(|(tid, e)| {
                let esrch = e.errno() == Some(nix::errno::Errno::ESRCH);
                if esrch {
                    exited(*tid);
                }
                !esrch
            })
            .collect()
    }
}

/// What thread `tid` (a TID reused by another thread) has now, said when
/// it is what `plan` sets: ` (it runs on CPUs 1 now, as planned)`;
/// otherwise empty.
fn reached(tid: u32, plan: &Plan, possible: &CpuSet) -> String {
    match (&plan.cpus, get_affinity_of(tid, possible)) {
        (Some(cpus), Ok(now)) if *cpus == now => format!(
            " (it runs on {} now, as planned)",
            crate::words::cpus_phrase(cpus)
        ),
        _ => String::new(),
    }
}

/// Moves the pages of process `pid` as `m` says (`migrate_pages(2)`, what
/// migratepages(8) does); returns the pages the kernel could not move
/// (busy or pinned pages are left where they are).
pub fn migrate(pid: u32, m: &crate::pid::plan::Migration) -> Result<u64> {
    let all = m.from.union(&m.to);
    let (mask, maxnode) = all.to_kernel_nodemask();
    let bytes = mask.len();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

    /// Two threads of this test process, parked until dropped; their TIDs.
    struct Parked {
        tids: Vec<u32>,
        stop: Arc<AtomicBool>,
        handles: Vec<std::thread::JoinHandle<()>>,
    }

    impl Parked {
        fn start(n: usize) -> Parked {
            let stop = Arc::new(AtomicBool::new(false));
            let mut tids = Vec::new();
            let mut handles = Vec::new();
            for _ in 0..n {
                let (tid, s) = (Arc::new(AtomicU32::new(0)), stop.clone());
                let t = tid.clone();
                handles.push(std::thread::spawn(move || {
                    t.store(nix::unistd::gettid().as_raw() as u32, Ordering::SeqCst);
                    while !s.load(Ordering::SeqCst) {
                        std::thread::park_timeout(std::time::Duration::from_millis(5));
                    }
                }));
                while tid.load(Ordering::SeqCst) == 0 {
                    std::thread::yield_now();
                }
                tids.push(tid.load(Ordering::SeqCst));
            }
            Parked {
                tids,
                stop,
                handles,
            }
        }
    }

    impl Drop for Parked {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            for h in self.handles.drain(..) {
                let _ = h.join();
            }
        }
    }

    fn allowed() -> (CpuSet, CpuSet) {
        let possible: CpuSet = (0..1024).collect();
        (get_affinity_of(0, &possible).unwrap(), possible)
    }

    fn plan_on(cpus: CpuSet) -> Plan {
        crate::testkit::plan_on(&cpus.to_list(), Default::default())
    }

    /// The rollback tests' start: two parked threads (their holder and
    /// TIDs), this process's allowed CPUs, its first CPU alone, and the
    /// possible CPUs. `None` with one allowed CPU.
    fn two() -> Option<(Parked, [u32; 2], CpuSet, CpuSet, CpuSet)> {
        let (own, possible) = allowed();
        let first = own.iter().next().filter(|_| own.len() > 1)?;
        let p = Parked::start(2);
        let tids = [p.tids[0], p.tids[1]];
        Some((p, tids, own, std::iter::once(first).collect(), possible))
    }

    /// Issue 33, item 2: a TID that names another thread after pinrun
    /// wrote it (the thread exited and its TID was reused meanwhile) fails
    /// the change, naming what happened, and is never "restored" to the
    /// old thread's state; the thread changed before it is restored.
    /// The reuse is simulated by the start time the caller reports.
    #[test]
    fn a_tid_reused_during_the_write_is_named_and_never_restored() {
        // `_parked` holds the threads until the test ends.
        let Some((_parked, [a, b], own, one, possible)) = two() else {
            eprintln!("skipped: needs two allowed CPUs");
            return;
        };
        let list = || vec![a, b];
        // The identity checked before each write: start time 100.
        let check = |_tid: u32| -> Result<u64> { Ok(100) };
        // Read again after the write: b's TID names another thread.
        let start_time = |tid: u32| Some(if tid == b { 200 } else { 100 });
        let t = Threads {
            list: &list,
            check: &check,
            start_time: &start_time,
            record: &|_, _| Ok(()),
        };
        let f = apply_all(&t, 16, &plan_on(one.clone()), &possible, None).unwrap_err();
        assert_eq!(f.tid, b);
        assert_eq!(f.index, 1);
        assert!(
            f.error.message.contains("now names another thread"),
            "{}",
            f.error.message
        );
        assert!(f.not_restored.is_empty(), "{:?}", f.not_restored);
        // a restored; b (the "other" thread) left as written, not touched.
        assert_eq!(get_affinity_of(a, &possible).unwrap(), own);
        assert_eq!(get_affinity_of(b, &possible).unwrap(), one);
    }

    /// A rollback restores a thread only while its TID names the thread
    /// saved: one reused meanwhile is named as not touched.
    #[test]
    fn a_rollback_never_restores_a_reused_tid() {
        // `_parked` holds the threads until the test ends.
        let Some((_parked, [a, b], own, one, possible)) = two() else {
            eprintln!("skipped: needs two allowed CPUs");
            return;
        };
        let reused = Cell::new(false);
        let list = || vec![a, b];
        let check = |tid: u32| -> Result<u64> {
            // Checking b (after a was changed): a's TID is reused.
            if tid == b {
                reused.set(true);
            }
            Ok(100)
        };
        let start_time = |tid: u32| Some(if tid == a && reused.get() { 300 } else { 100 });
        let t = Threads {
            list: &list,
            check: &check,
            start_time: &start_time,
            record: &|_, _| Ok(()),
        };
        // The second thread's change fails (EPERM, the test hook).
        let f = apply_all(&t, 16, &plan_on(one.clone()), &possible, Some(1)).unwrap_err();
        assert_eq!(f.tid, b);
        assert_eq!(f.not_restored.len(), 1, "{:?}", f.not_restored);
        assert_eq!(f.not_restored[0].0, a);
        assert!(f.not_restored[0].1.message.contains("not touched"));
        assert_eq!(get_affinity_of(a, &possible).unwrap(), one);
        assert_eq!(get_affinity_of(b, &possible).unwrap(), own);
    }

    /// Threads already as planned (created by a changed thread: they
    /// inherit it) are not changed, and the result is verified by two
    /// passes that agree: three passes in all for a process whose threads
    /// all need the change.
    #[test]
    fn threads_already_as_planned_are_left_and_two_passes_verify() {
        let (own, possible) = allowed();
        let p = Parked::start(2);
        let list = || p.tids.clone();
        let check = |_tid: u32| -> Result<u64> { Ok(1) };
        let start_time = |_tid: u32| Some(1);
        let t = Threads {
            list: &list,
            check: &check,
            start_time: &start_time,
            record: &|_, _| Ok(()),
        };
        let (changed, already, passes) =
            apply_all(&t, 16, &plan_on(own.clone()), &possible, None).unwrap();
        assert_eq!(changed, Vec::<u32>::new());
        assert_eq!(already, p.tids);
        assert_eq!(passes, 2);
        let Some(first) = own.iter().next().filter(|_| own.len() > 1) else {
            return;
        };
        let one: CpuSet = std::iter::once(first).collect();
        let (changed, already, passes) =
            apply_all(&t, 16, &plan_on(one.clone()), &possible, None).unwrap();
        assert_eq!(changed, p.tids);
        assert_eq!(already, Vec::<u32>::new());
        assert_eq!(passes, 3);
        for &tid in &p.tids {
            assert_eq!(get_affinity_of(tid, &possible).unwrap(), one);
        }
    }
}
