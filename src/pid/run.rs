//! `--pid PID`: a running process instead of a command (issue 18). Alone,
//! it shows every thread (`query`); with placement or scheduling options it
//! plans them exactly as a launch (same checks, `--dry-run`, `--check`,
//! `--strict`, `--exclusive`) and applies them to every thread, all or
//! nothing (`change`). The process is named by a pidfd plus its start
//! time: a PID that names another process by the time pinrun applies is
//! never touched.

use crate::check::{Finding, Severity};
use crate::error::{Error, ErrorCode, Exit};
use crate::output::{print_out, to_stderr};
use crate::pid::read::{MAX_PASSES, Process, open, still_same, thread_cpusets};
use crate::pid::report::{ProcessView, process_json, process_text};
use crate::plan::Plan;
use crate::request::{Mode, Request, Target};
use crate::system::threads;
use crate::system::{Root, SystemState};

/// A request planned and checked as a launch (`app::plan_and_check`):
/// the machine with the process's facts ([`as_target`]), the plan and
/// every finding.
pub struct Planned {
    /// The machine, with what the checks of the chosen CPUs read.
    pub sys: SystemState,
    /// The plan.
    pub plan: Plan,
    /// Every finding, `--allow`ed codes downgraded to info.
    pub findings: Vec<Finding>,
    /// For `--exclusive`: the claim held for the process (the claims
    /// wing's `Guard`, which this wing reaches through `app`).
    pub guard: Option<Box<dyn Claim>>,
    /// `--migrate`: the wing's own plan, what moves (set by the wing,
    /// `None` from `app`).
    pub migration: Option<crate::pid::plan::Migration>,
}

/// An `--exclusive` claim being made for a process (the claims wing's
/// `claims::run::Guard`, composed by `app`: a wing imports no other wing).
pub trait Claim {
    /// Writes the claim record of `plan`'s CPUs for a process (its PID,
    /// start time in clock ticks since boot, and effective uid; its
    /// thread names `names`) and returns the record's path.
    ///
    /// # Errors
    /// The claims wing's: the state directory cannot be written.
    fn record(
        &mut self,
        plan: &Plan,
        process: (u32, u64, u32),
        names: &[String],
    ) -> Result<std::path::PathBuf, Error>;
    /// Keeps the record written (the change is done) and releases the lock.
    fn keep(&mut self);
}

/// What the wing asks of the application layer, which composes the core
/// (the read scope, planning and checking as a launch, `--dry-run`'s and
/// `--check`'s output) and the claims wing.
pub trait Launch {
    /// The machine read for `req` (its scope as a launch's).
    fn read(&self, root: &Root, req: &Request) -> SystemState;
    /// Plans and checks `req` on `sys` as a launch does.
    ///
    /// # Errors
    /// The launch's refusals.
    fn plan_and_check(
        &self,
        root: &Root,
        sys: SystemState,
        req: &Request,
    ) -> Result<Planned, Error>;
    /// `--dry-run`'s output of `p`, and its exit status.
    ///
    /// # Errors
    /// A failed write of the output.
    fn dry_run(&self, req: &Request, p: &Planned) -> Result<Exit, Error>;
    /// `--check`'s output of `p`, and its exit status.
    ///
    /// # Errors
    /// A failed write of the output.
    fn check(&self, req: &Request, p: &Planned) -> Result<Exit, Error>;
    /// Removes an earlier `--exclusive` claim record of process `pid`
    /// (started at `start`): the process left its CPUs.
    fn forget(&self, req: &Request, pid: u32, start: u64);
}

/// The machine read as for a launch, with the process's own affinity,
/// memory nodes, scheduling and limits in place of pinrun's (what the
/// kernel checks for `sched_setattr(2)` on it).
fn as_target(mut sys: SystemState, root: &Root, p: &Process) -> SystemState {
    // The facts of a live thread: a main thread that exited keeps the
    // affinity it had then.
    let main = p
        .threads
        .iter()
        .find(|t| !t.exited())
        .unwrap_or(&p.threads[0]);
    sys.process.cpus_allowed = main.cpus_allowed.clone();
    sys.process.mems_allowed = main.mems_allowed.clone();
    // Every thread is changed: the permission checks weigh the thread the
    // kernel would refuse first.
    let each: Vec<_> = p
        .threads
        .iter()
        .filter(|t| !t.exited())
        .map(|t| (t.policy, t.rt_priority, t.nice))
        .collect();
    (
        sys.process.policy,
        sys.process.rt_priority,
        sys.process.nice,
    ) = crate::pid::plan::strictest(&each);
    let limits = crate::system::process::limits_of(root, p.pid);
    if sys.process.rtprio_limit.is_some() || limits.rtprio.is_some() {
        sys.process.rtprio_limit = limits.rtprio;
    }
    if sys.process.nice_limit.is_some() || limits.nice.is_some() {
        sys.process.nice_limit = limits.nice;
    }
    // The target's RLIMIT_RTTIME, not pinrun's: its ticks count against it.
    if sys.process.rttime_limit.is_some() || limits.rttime.is_some() {
        sys.process.rttime_limit = limits.rttime;
    }
    sys
}

/// Refuses a change the kernel would refuse for one of the live threads
/// of `p` for its owner ([`crate::pid::plan::check_owners`]): each
/// thread's own uids, credentials being per thread.
fn check_owners(root: &Root, p: &Process) -> Result<(), Error> {
    let owners: Vec<_> = p
        .threads
        .iter()
        .filter(|t| !t.exited())
        .map(|t| (t.tid, t.uids.or_else(|| threads::uids(root, p.pid))))
        .collect();
    crate::pid::plan::check_owners(
        p.pid,
        nix::unistd::geteuid().as_raw(),
        &owners,
        crate::system::process::read_process(root, false, false, false, false).cap_sys_nice,
    )
}

/// Runs a `--pid` request.
pub fn run(l: &dyn Launch, req: &Request, target: &Target) -> Result<Exit, Error> {
    let root = Root::machine(std::path::Path::new("/"))?;
    let changes = !target.is_query(req) && !matches!(req.mode, Mode::DryRun | Mode::Check);
    let p = open(&root, target, changes)?;
    if target.is_query(req) {
        return query(l, &root, req, p);
    }
    change(l, &root, req, target, p)
}

/// `--pid PID` alone: each thread, the memory, and the findings of the
/// threads' CPUs (those of `--check --cpus` of them).
fn query(l: &dyn Launch, root: &Root, req: &Request, p: Process) -> Result<Exit, Error> {
    let cpus: crate::cpuset::CpuSet = p
        .threads
        .iter()
        .filter_map(|t| t.cpus_allowed.as_ref())
        .flat_map(|c| c.iter())
        .collect();
    let mut as_check = req.clone();
    as_check.mode = Mode::Check;
    as_check.placement.cpus = Some(cpus);
    let sys = l.read(root, &as_check);
    let sys = as_target(sys, root, &p);
    let findings = match l.plan_and_check(root, sys, &as_check) {
        // `--pid PID --check`: the findings of its CPUs, with --check's
        // output and exit status (1 on a warning).
        Ok(planned) if req.mode == Mode::Check => return l.check(&as_check, &planned),
        // A view places nothing: "choose inside the inherited affinity"
        // means nothing for the CPUs it shows.
        Ok(planned) => planned
            .findings
            .into_iter()
            .filter(|f| f.code != crate::finding::Code::OutsideInheritedAffinity)
            .collect(),
        // The machine not read whole (a file not opened for want of a
        // resource): no view claims "no findings".
        Err(e) if req.mode == Mode::Check || e.code == ErrorCode::ReadStarved => return Err(e),
        Err(e) => {
            to_stderr(&format!(
                "pinrun: --pid {}: its CPUs cannot be checked: {}\n",
                p.pid, e.message
            ));
            Vec::new()
        }
    };
    let view = ProcessView {
        pid: p.pid,
        name: threads::comm(root, &format!("/proc/{}", p.pid)).unwrap_or_default(),
        start_time: Some(p.start_time),
        numa_maps: threads::read_numa_maps(root, p.pid),
        threads: p.threads,
        passes: p.passes,
        findings,
    };
    if let Some(e) = root.starved_error() {
        return Err(e);
    }
    if req.output.json {
        print_out(&format!("{}\n", process_json(&view)))?;
    } else {
        print_out(&process_text(&view))?;
    }
    Ok(Exit::Success)
}

/// The test hook before applying: `PINRUN_TEST_BEFORE_APPLY=FIFO` writes
/// `ready` into the FIFO, then waits until a writer opens and closes it
/// (the live test replaces the process meanwhile). Debug builds only (the
/// ones `cargo test` runs): an installed pinrun never reads it.
fn test_pause() {
    if !cfg!(debug_assertions) {
        return;
    }
    if let Some(path) = std::env::var_os("PINRUN_TEST_BEFORE_APPLY") {
        let _ = std::fs::write(&path, "ready\n");
        let _ = crate::system::root::read_bounded_bytes(&path);
    }
}

/// The line saying which threads of process `pid` (`keeps_reset`, TIDs)
/// keep SCHED_RESET_ON_FORK under a
/// new policy without `--reset-on-fork` (sched_setattr(2) keeps what
/// pinrun does not set); "" when none does or no policy is set.
fn keeps_reset_text(req: &Request, pid: u32, keeps_reset: &[u32]) -> String {
    // sched_setattr(2) keeps what pinrun does not set, as a launch keeps
    // pinrun's own flag: a thread's SCHED_RESET_ON_FORK survives a new
    // policy without --reset-on-fork. Said, so the dry run predicts it.
    if !(req.sched.policy.is_some() && !req.sched.reset_on_fork && !keeps_reset.is_empty()) {
        return String::new();
    }
    let tids: Vec<String> = keeps_reset.iter().map(u32::to_string).collect();
    format!(
        "pinrun: --pid {}: {} {} {} SCHED_RESET_ON_FORK, set before (pinrun sets the flag only with --reset-on-fork and clears it never): {} children start with SCHED_OTHER\n",
        pid,
        crate::words::noun(tids.len(), "thread"),
        tids.join(","),
        if tids.len() == 1 { "keeps" } else { "keep" },
        if tids.len() == 1 { "its" } else { "their" }
    )
}

/// `--pid PID` with options: planned as a launch, applied to every thread.
fn change(
    l: &dyn Launch,
    root: &Root,
    req: &Request,
    target: &Target,
    p: Process,
) -> Result<Exit, Error> {
    if p.pid == std::process::id() {
        return Err(Error::new(
            ErrorCode::Usage,
            "--pid self names pinrun itself, which exits right after: changing it changes nothing that lasts",
        )
        .hint("place a command with pinrun OPTIONS -- COMMAND, or name another process with --pid PID; --pid self alone shows pinrun's own placement"));
    }
    // A zombie or a kernel thread is refused before anything is planned.
    // A main thread that exited while others run is no zombie process.
    let (state, kthread, _) = threads::kind(root, p.pid).unwrap_or(('?', false, None));
    crate::pid::plan::check_target(p.pid, state, kthread, None, &[])?;
    if req.memory.is_some() && !target.migrate {
        return Err(Error::new(
            ErrorCode::PidMempolicy,
            format!(
                "--pid {}: no system call sets another process's memory policy (set_mempolicy(2) acts on the caller only)",
                p.pid
            ),
        )
        .hint("start the process under pinrun with the policy, or move its pages with --migrate"));
    }
    check_owners(root, &p)?;
    let mut as_launch = req.clone();
    // The process's current affinity is what is being replaced: it bounds
    // --cores/--node/--isolated only with an explicit --within inherited;
    // by default the choice is among the allowed CPUs (--within cgroup).
    if as_launch.placement.within == crate::request::Within::Auto {
        as_launch.placement.within = crate::request::Within::Cgroup;
    }
    let sys = l.read(root, &as_launch);
    let mut sys = as_target(sys, root, &p);
    if let Some(e) = sys.read_error.take() {
        return Err(e);
    }
    let planned = l.plan_and_check(root, sys, &as_launch)?;
    let deadline: Vec<_> = p
        .threads
        .iter()
        .filter(|t| t.policy == Some(crate::policy::Policy::SCHED_DEADLINE))
        .filter(|_| {
            req.sched
                .policy
                .is_none_or(crate::policy::Policy::is_deadline)
        })
        .filter_map(|t| Some((t.tid, t.cpus_allowed.clone()?)))
        .collect();
    crate::pid::plan::check_target(p.pid, state, kthread, planned.plan.cpus.as_ref(), &deadline)?;
    if let Some(cpus) = &planned.plan.cpus {
        crate::pid::plan::check_thread_cpusets(p.pid, cpus, &thread_cpusets(root, &p))?;
    }
    let mut planned = planned;
    planned.migration = if target.migrate {
        Some(plan_migration(root, target, &p, &planned)?)
    } else {
        None
    };
    // No system call sets another process's memory policy (set_mempolicy(2)
    // acts on the caller): a policy option only names where --migrate moves
    // the pages (`plan_migration`'s target, said by `migration_text`), so
    // the plan shows the process's policy unchanged, as the change leaves it.
    planned.plan.memory = None;
    let mut summary = format!(
        "pinrun: --pid {}: {}\n",
        p.pid,
        crate::pid::report::threads_read(p.pid, p.threads.len(), p.passes)
    );
    if let Some(m) = &planned.migration {
        summary.push_str(&crate::pid::report::migration_text(p.pid, m));
    }
    let keeps_reset: Vec<u32> = p
        .threads
        .iter()
        .filter(|t| t.reset_on_fork == Some(true))
        .map(|t| t.tid)
        .collect();
    summary.push_str(&keeps_reset_text(req, p.pid, &keeps_reset));
    match req.mode {
        Mode::DryRun if req.output.json => {
            let mut v =
                crate::report::plan_json(&as_launch, &planned.plan, &planned.findings, None);
            v["pid"] = p.pid.into();
            v["threads"] = p.threads.iter().map(|t| t.tid).collect::<Vec<_>>().into();
            v["passes"] = p.passes.into();
            v["keeps_reset_on_fork"] = if req.sched.policy.is_some() && !req.sched.reset_on_fork {
                keeps_reset.clone().into()
            } else {
                Vec::<u32>::new().into()
            };
            crate::pid::report::add_change_json(&mut v, planned.migration.as_ref());
            print_out(&format!("{v}\n"))?;
            Ok(Exit::Success)
        }
        Mode::DryRun => {
            print_out(&summary)?;
            l.dry_run(&as_launch, &planned)
        }
        Mode::Check => l.check(&as_launch, &planned),
        _ => apply(l, root, req, target, p, planned, summary),
    }
}

/// What `--migrate` moves: to the memory policy's nodes when one is given,
/// else to the nodes of the chosen CPUs; from `numa_maps`.
fn plan_migration(
    root: &Root,
    target: &Target,
    p: &Process,
    planned: &Planned,
) -> Result<crate::pid::plan::Migration, Error> {
    let to = match &planned.plan.memory {
        Some(m) if !m.nodes.is_empty() => m.nodes.clone(),
        _ => planned.plan.nodes.clone(),
    };
    let maps = threads::read_numa_maps(root, p.pid).ok_or_else(|| {
        Error::new(
            ErrorCode::MigrateFailed,
            format!(
                "--migrate: /proc/{}/numa_maps cannot be read, so what would move is unknown",
                p.pid
            ),
        )
        .hint("reading another user's numa_maps needs ptrace read access (same user, or CAP_SYS_PTRACE); the kernel needs CONFIG_NUMA")
    })?;
    crate::pid::plan::migration(p.pid, &maps.bytes_per_node, &to, target.migrate_limit)
}

/// Applies the plan to every thread of `tids`, all or nothing.
fn apply(
    l: &dyn Launch,
    root: &Root,
    req: &Request,
    target: &Target,
    p: Process,
    mut planned: Planned,
    summary: String,
) -> Result<Exit, Error> {
    let out = &req.output;
    refuse_strict(req, &p, &planned)?;
    let mut text = if out.quiet {
        String::new()
    } else {
        crate::report::launch_text(&planned.plan, &planned.findings)
    };
    test_pause();
    still_same(root, &p)?;
    // What outlives pinrun is undone by a helper armed before the first
    // change: pinrun's death at any step (SIGKILL included) puts every
    // thread it changed back.
    let undo = crate::pid::apply::undo::arm(p.pid, &planned.sys.possible, p.id.fd())
        .map_err(|e| undo_error(p.pid, &e))?;
    if let Some(g) = planned.guard.as_mut() {
        let uid = threads::uids(root, p.pid).map_or(0, |(_, e)| e);
        let name = p.threads[0].name.clone();
        let path = g.record(&planned.plan, (p.pid, p.start_time, uid), &[name])?;
        // pinrun's death before the change is settled removes it too.
        undo.claim(&path).map_err(|e| undo_error(p.pid, &e))?;
    }
    // Pages first: a migration cannot be undone, so threads are changed
    // (and restored on failure) only once it is done.
    if let Some(m) = planned.migration.as_ref().filter(|m| !m.from.is_empty()) {
        text.push_str(&migrate_pages(req, p.pid, m)?);
    }
    // Test hook (debug builds only): fail on the Nth thread applied.
    let fail_at = std::env::var("PINRUN_TEST_FAIL_AT")
        .ok()
        .filter(|_| cfg!(debug_assertions))
        .and_then(|v| v.parse().ok());
    let pid = p.pid;
    let result = apply_threads(root, target, &p, &planned, &undo, fail_at);
    if result.is_err() {
        // The threads are back: the claim record goes (and releases the
        // lock) before the helper is told, so no death between leaves it.
        drop(planned.guard.take());
    }
    // Verified, or put back by pinrun itself: the helper has nothing to
    // do. A settle that fails leaves the helper to restore the threads
    // when pinrun exits: not a success.
    let settled = undo.settle();
    let (changed, already, passes) = match (result, settled) {
        (Ok(done), Ok(())) => done,
        (Ok(_), Err(e)) => {
            drop(planned.guard.take());
            to_stderr(&text);
            let mut e = undo_error(pid, &e);
            e.message
                .push_str("; the helper puts every changed thread back as pinrun exits");
            return Err(e);
        }
        (Err(f), _) => {
            let e = failed(root, &planned, pid, f);
            to_stderr(&text);
            return Err(e);
        }
    };
    match planned.guard.as_mut() {
        Some(g) => g.keep(),
        // The process left the CPUs of an earlier --exclusive claim.
        None if planned.plan.cpus.is_some() => {
            l.forget(req, pid, p.start_time);
        }
        None => {}
    }
    let done = Done {
        pid,
        changed,
        already,
        passes,
    };
    report_change(req, &planned, &done, &summary, text)?;
    Ok(Exit::Success)
}

/// Refuses, under `--strict`, to change process `p` when `planned` has
/// warnings.
fn refuse_strict(req: &Request, p: &Process, planned: &Planned) -> Result<(), Error> {
    let warnings: Vec<_> = planned
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .collect();
    if req.output.strict && !warnings.is_empty() {
        return Err(Error::new(
            ErrorCode::Strict,
            format!(
                "refusing to change --pid {} under --strict: {}: {}",
                p.pid,
                crate::words::count(warnings.len(), "warning"),
                crate::check::summarize_codes(warnings.iter().copied())
            ),
        )
        .hint("fix what the warnings say, accept known ones with --allow CODE[,CODE], or drop --strict"));
    }
    Ok(())
}

/// Moves process `pid`'s pages as `m` says (migrate_pages(2),
/// [`crate::pid::apply::migrate`]). Returns what to print: the move
/// in words ([`crate::pid::report::migration_text`]) unless `--quiet` or `--verbose`, and the
/// pages that could not be moved.
fn migrate_pages(
    req: &Request,
    pid: u32,
    m: &crate::pid::plan::Migration,
) -> Result<String, Error> {
    let out = &req.output;
    let mut text = String::new();
    let left = crate::pid::apply::migrate(pid, m)?;
    if !out.quiet && !out.verbose {
        text.push_str(&crate::pid::report::migration_text(pid, m));
    }
    if left > 0 {
        text.push_str(&format!(
            "pinrun: --pid {pid} --migrate: {} could not be moved (in use or pinned)\n",
            crate::words::count(left as usize, "page")
        ));
    }
    Ok(text)
}

/// Applies `planned`'s plan to every thread of process `p` (only
/// `--tid`'s with one), all or nothing ([`crate::pid::apply::apply_all`],
/// up to [`MAX_PASSES`] over `/proc/PID/task`; `fail_at`: the test hook).
/// Before each thread: the process is still the one planned on, and the
/// TID still names a thread of it (the thread planned on, for --tid): a
/// thread that exited is skipped (as ESRCH), a --tid thread that exited
/// refuses; a TID reused by another process is never touched. Returns the
/// threads changed, those already as planned and the passes made.
fn apply_threads(
    root: &Root,
    target: &Target,
    p: &Process,
    planned: &Planned,
    undo: &crate::pid::apply::undo::Undo,
    fail_at: Option<usize>,
) -> Result<(Vec<u32>, Vec<u32>, usize), crate::pid::apply::Failed> {
    let pid = p.pid;
    let record = |s: &crate::apply::tid::Saved, start: u64| {
        undo.record(s, start).map_err(|e| {
            let mut e = undo_error(pid, &e);
            e.message
                .push_str(&format!(" (before thread {}: it was not changed)", s.tid));
            e
        })
    };
    let planned_start: std::collections::HashMap<u32, Option<u64>> =
        p.threads.iter().map(|t| (t.tid, t.start_time)).collect();
    let check_thread = |tid: u32| {
        still_same(root, p).map_err(|mut e| {
            // Threads may have been changed already: failed() says what
            // became of them.
            e.message = e.message.replace("; nothing was changed", "");
            e
        })?;
        let planned = planned_start.get(&tid).copied().flatten();
        match threads::thread_start_time(root, pid, tid) {
            Some(now) if planned.is_none_or(|s| s == now) => Ok(now),
            _ if target.tid.is_some() => Err(Error::new(
                ErrorCode::NoSuchProcess,
                format!(
                    "--tid {tid}: the thread exited after pinrun read it (/proc/{pid}/task/{tid} is gone or names another thread)"
                ),
            )
            .hint(format!("its threads are listed in /proc/{pid}/task; run pinrun again"))),
            _ => Err(Error::from_syscall(
                ErrorCode::NoSuchProcess,
                &format!("thread {tid} of process {pid}"),
                crate::error::Step::SchedGetattr,
                &std::io::Error::from_raw_os_error(libc::ESRCH),
            )),
        }
    };
    let only = target.tid;
    let list = || match only {
        Some(tid) => vec![tid],
        None => threads::task_ids(root, pid),
    };
    // Whatever task the TID names now, in any process (one task's stat,
    // not the group's): a TID another process took has another start
    // time, and is never taken for gone.
    let start_time = |tid: u32| threads::task_start_time(root, tid);
    crate::pid::apply::apply_all(
        &crate::pid::apply::Threads {
            list: &list,
            check: &check_thread,
            start_time: &start_time,
            record: &record,
        },
        MAX_PASSES,
        &planned.plan,
        &planned.sys.possible,
        fail_at,
    )
}

/// What a change of process `pid` did.
struct Done {
    /// The process.
    pid: u32,
    /// The threads changed.
    changed: Vec<u32>,
    /// The threads found already as planned (verified, not changed).
    already: Vec<u32>,
    /// The passes made over `/proc/PID/task`.
    passes: usize,
}

/// Reports a change `done` as `planned`: the plan as JSON with the
/// process, the threads changed, the passes and the `migration` with
/// `--json` (printed on stdout); then `text` with a line saying what
/// changed (with `--verbose` also `summary`, the passes and the plan) on
/// stderr.
fn report_change(
    req: &Request,
    planned: &Planned,
    done: &Done,
    summary: &str,
    mut text: String,
) -> Result<(), Error> {
    let out = &req.output;
    let (pid, changed, already, passes) = (done.pid, &done.changed, &done.already, done.passes);
    let what = crate::pid::report::changed_words(&planned.plan);
    if out.json {
        let mut v = crate::report::plan_json(req, &planned.plan, &planned.findings, None);
        v["pid"] = pid.into();
        v["changed"] = if what.is_empty() {
            Vec::<u32>::new().into()
        } else {
            changed.clone().into()
        };
        // Threads that were already as planned (created by a changed
        // thread, or placed so before): verified, not changed.
        v["already"] = if what.is_empty() {
            Vec::<u32>::new().into()
        } else {
            already.clone().into()
        };
        v["passes"] = passes.into();
        crate::pid::report::add_change_json(&mut v, planned.migration.as_ref());
        print_out(&format!("{v}\n"))?;
    }
    let done = if what.is_empty() {
        format!("pinrun: --pid {pid}: no thread attribute changed\n")
    } else {
        format!(
            "pinrun: --pid {pid}: {what} for {}{}\n",
            crate::words::count(changed.len() + already.len(), "thread"),
            match already.len() {
                0 => String::new(),
                _ if changed.is_empty() => " (already so: none changed)".to_string(),
                n => format!(" ({n} of them already so)"),
            }
        )
    };
    if !out.quiet && !out.verbose && !out.json {
        text.push_str(&done);
    }
    if out.verbose {
        text.push_str(summary);
        text.push_str(&done);
        text.push_str(&format!(
            "pinrun: --pid {pid}: {}\n",
            crate::pid::report::threads_read(pid, changed.len() + already.len(), passes)
        ));
        text.push_str(&crate::report::plan_text(
            req,
            &planned.plan,
            &planned.findings,
            None,
            "",
        ));
    }
    to_stderr(&text);
    Ok(())
}

/// The error of an undo helper for process `pid` that could not be
/// started or took no record (`e`): the change is refused.
fn undo_error(pid: u32, e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::UndoFailed,
        format!(
            "--pid {pid}: the helper that puts the threads back should pinrun die is not there: {}",
            crate::error::io_words(e)
        ),
    )
    .hint(crate::system::process::start_hint(e))
}

/// The error of a failed [`crate::pid::apply::apply_all`]: which
/// thread and why, whether the others were restored, and the EPERM
/// diagnosis of a launch.
fn failed(root: &Root, planned: &Planned, pid: u32, f: crate::pid::apply::Failed) -> Error {
    let gone = match f.gone {
        0 => String::new(),
        n => format!(" ({n} of them had exited: nothing to restore)"),
    };
    let restored = if f.not_restored.is_empty() {
        match f.index {
            // The other thread's change is said before: not "nothing".
            0 if f.reached_other.is_some() => {
                format!("no thread of process {pid} was left changed")
            }
            0 => "nothing was left changed".to_string(),
            n if n == f.gone => {
                format!(
                    "the {} already changed have exited: nothing was left changed",
                    crate::words::count(n, "thread")
                )
            }
            n => format!(
                "the {} already changed were restored{gone}",
                crate::words::count(n, "thread")
            ),
        }
    } else {
        // One cause, said once, with the threads it left changed.
        let mut by_cause: Vec<(String, Vec<String>)> = Vec::new();
        for (t, e) in &f.not_restored {
            match by_cause.iter_mut().find(|(m, _)| *m == e.message) {
                Some((_, tids)) => tids.push(t.to_string()),
                None => by_cause.push((e.message.clone(), vec![t.to_string()])),
            }
        }
        let list: Vec<String> = by_cause
            .iter()
            .map(|(m, tids)| {
                let threads = crate::words::noun(tids.len(), "thread");
                format!("{threads} {}: {m}", tids.join(","))
            })
            .collect();
        format!("NOT restored: {}{gone}", list.join("; "))
    };
    let mut e = f
        .error
        .explain_eperm(&crate::system::process::perm_facts(pid, f.tid));
    // The kernel's facts are the target's, not pinrun's own.
    e.hint = e
        .hint
        .map(|h| h.replace("/proc/self/", &format!("/proc/{pid}/")));
    e.message = format!(
        "--pid {pid}: thread {} (after {} changed): {}; {restored}",
        f.tid, f.index, e.message
    );
    if e.code == ErrorCode::SchedFailed && e.errno() == Some(nix::errno::Errno::EPERM) {
        let config = crate::system::cgroup::read_rt_group_config(root);
        if let Some(why) = crate::check::rt::eperm_diagnosis(&planned.sys, config) {
            e = e.hint(why);
        }
    }
    e
}
