//! The claim flow around planning (issue 5): read the claims (under the
//! state directory's lock), plan with them, wait for claimed cores
//! (`--wait`), and for `--exclusive` write this launch's record while the
//! lock is still held, so that choosing and claiming are one atomic step
//! across concurrent pinrun processes. The lock is released at exec (the
//! descriptor is close-on-exec) or on any failure, which also removes the
//! record.

use super::Record;
use super::apply::{remove, write_record};
use crate::claim::Claims;
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::plan::{Plan, claim_set, plan_claimed};
use crate::request::{Mode, Request};
use crate::system::kubelet::read_kubelet;
use crate::system::state_dir::{
    DEFAULT_STATE_DIR, LockKind, StateDir, identity, own_pid_ns, view_pid_ns,
};
use crate::system::{Root, SystemState};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// How often a waiting launch looks again.
const WAIT_POLL: Duration = Duration::from_millis(100);

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The state directory: `--state-dir`, `PINRUN_STATE_DIR` (when set and
/// not empty), or `/run/pinrun`.
pub fn state_dir(req: &Request) -> PathBuf {
    req.claims
        .state_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_STATE_DIR.into())
}

/// The locked state directory of an `--exclusive` launch, and its record
/// once written. Dropping it (any failure before exec) removes the record
/// and releases the lock. The launch releases the lock with
/// [`Guard::unlock`] once the record is written and the affinity set, and
/// prints only after that: nothing it does while holding the lock can
/// block (a full stderr pipe would hold every other launch).
#[derive(Debug)]
pub struct Guard {
    dir: StateDir,
    record: Option<String>,
    /// The process a `--pid` claim is for (pid, start time): its older
    /// records are replaced by the new one when it is kept.
    replaces: Option<(u32, u64)>,
    /// What to print once the lock is released (`--wait`'s "free after").
    pub notice: String,
}

impl Guard {
    /// Writes this process's record for every thread of the chosen cores,
    /// its PID named with this process's own PID namespace (the one
    /// `getpid(2)` numbers it in), so that a reader of another namespace
    /// finds it, or honours it, rather than judge another process by the
    /// same number. Returns the record's path.
    pub fn claim(&mut self, plan: &Plan, req: &Request) -> Result<PathBuf> {
        let cpus = claim_set(
            plan.cpus.as_ref().unwrap_or(&Default::default()),
            &plan.cores,
        );
        let (pid, start, uid, pgid) = identity()?;
        let command: Vec<String> = req
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let rec = Record::new(pid, start, uid, pgid, &cpus, &command, now()).in_ns(own_pid_ns());
        let name = write_record(&self.dir, &rec)?;
        let path = self.dir.path().join(&name);
        self.record = Some(name);
        Ok(path)
    }
}

impl Guard {
    /// Writes a record for running process `pid` (started at `start`,
    /// field 22 of its stat; owned by `uid`) for every thread of the
    /// chosen cores (`--pid --exclusive`): the claim lives as long as that
    /// process; `pid` is numbered in the PID namespace of this `/proc`,
    /// which the record names. Returns the record's path.
    pub fn claim_for(
        &mut self,
        plan: &Plan,
        pid: u32,
        start: u64,
        uid: u32,
        command: &[String],
    ) -> Result<PathBuf> {
        let cpus = claim_set(
            plan.cpus.as_ref().unwrap_or(&Default::default()),
            &plan.cores,
        );
        let rec = Record::new(pid, start, uid, 0, &cpus, command, now()).in_ns(view_pid_ns());
        let name = write_record(&self.dir, &rec)?;
        let path = self.dir.path().join(&name);
        self.record = Some(name);
        self.replaces = Some((pid, start));
        Ok(path)
    }

    /// Keeps the record when the guard is dropped (a claim made for
    /// another process outlives pinrun), removes the process's older
    /// records (one claim per process: the new one replaces them), and
    /// releases the lock.
    pub fn keep(&mut self) {
        let kept = self.record.take();
        if let Some((pid, start)) = self.replaces {
            for name in super::read::records_of(&self.dir, pid, start) {
                if Some(&name) != kept.as_ref() {
                    remove(&self.dir, &name);
                }
            }
        }
        self.dir.unlock();
    }
}

impl Guard {
    /// The locked state directory.
    pub fn dir(&self) -> &StateDir {
        &self.dir
    }

    /// Takes the state directory's exclusive lock again after
    /// [`Guard::unlock`] (to undo this launch's steering once its exec
    /// failed). Errors: [`StateDir::lock`]'s.
    pub fn relock(&mut self) -> Result<()> {
        self.dir.lock(crate::system::state_dir::LockKind::Exclusive)
    }

    /// Releases the lock, keeping the record: other launches may choose
    /// now, and see this claim.
    pub fn unlock(&mut self) {
        self.dir.unlock();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(name) = self.record.take() {
            remove(&self.dir, &name);
        }
    }
}

/// Removes the claim records of process `pid` started at `start` (a
/// `--pid` change without `--exclusive` leaves the process on other CPUs
/// than its claim said), under the state directory's exclusive lock;
/// nothing when there is no state directory. A lock that cannot be taken
/// is a warning on stderr (the stale record then lives until the process
/// ends).
pub fn forget(req: &Request, pid: u32, start: u64) {
    let Ok(Some(mut d)) = StateDir::open(&state_dir(req), false) else {
        return;
    };
    if let Err(e) = d.lock(LockKind::Exclusive) {
        crate::output::to_stderr(&format!(
            "pinrun: --pid {pid}: its claim record was left in place: {}\n",
            e.message
        ));
        return;
    }
    for name in super::read::records_of(&d, pid, start) {
        remove(&d, &name);
    }
    d.unlock();
}

/// What the claims need of the other wings, passed in by `app`, which
/// composes them (a wing imports no other wing).
pub struct Others<'a> {
    /// Undoes the IRQ steering of ended claims under the state directory's
    /// exclusive lock, saying what was undone (the steer wing's
    /// `reclaim_stale`; issue 21).
    pub reclaim: &'a dyn Fn(&StateDir) -> String,
    /// The exclusive CPUs kubelet gave the caller's own container, when
    /// it runs in one (the fleet wing's `own_exclusive_cpus`; issue 23).
    pub own_exclusive: &'a dyn Fn() -> Option<CpuSet>,
}

/// Reads every claim: kubelet's (below the root, so `--sysroot` dumps
/// too; but not the caller's own container's exclusive CPUs) and, on the live machine, the state directory's records, each
/// narrowed to the CPUs its holder may claim ([`Claims::narrow`]). With
/// `claim`, the directory is created if missing, locked exclusively and
/// stale records are removed; it is returned still locked. Records that
/// cannot be read refuse an `--exclusive` request, dry run included (their
/// CPUs are unknown). Otherwise a directory or record that cannot be used
/// is a warning, never a failure.
pub fn read_claims(
    root: &Root,
    sys: &SystemState,
    req: &Request,
    claim: bool,
    others: &Others,
) -> Result<(Claims, Option<StateDir>)> {
    let mut claims = Claims::default();
    let mut dir = None;
    if req.sysroot.is_none() {
        let path = state_dir(req);
        // --dry-run --exclusive: what the launch's open (creating the
        // directory when missing) would refuse, refused the same way.
        if !claim && req.claims.exclusive && req.mode == Mode::DryRun {
            StateDir::probe(&path)?;
            // An existing directory: what creating the record would answer.
            if path.is_dir() {
                super::apply::predict_write(&path)?;
            }
        }
        let kind = if claim {
            LockKind::Exclusive
        } else {
            LockKind::Shared
        };
        match StateDir::open(&path, claim) {
            Ok(Some(mut d)) => {
                // A reader that cannot get the lock reads without it.
                let locked = match d.lock(kind) {
                    Err(e) if claim => return Err(e),
                    Err(e) => Some(format!("{}; records read without the lock", e.message)),
                    Ok(()) => None,
                };
                let (c, stale) = d.read(root, &sys.possible);
                claims = c;
                claims.state_warnings.extend(locked);
                // --dry-run --exclusive predicts this refusal too.
                if req.claims.exclusive
                    && let Some(first) = claims.unreadable.first()
                {
                    let more = claims.unreadable.len() - 1;
                    return Err(Error::new(
                        ErrorCode::StateDir,
                        format!(
                            "--exclusive: {first}{}",
                            if more > 0 {
                                format!(" (and {more} more)")
                            } else {
                                String::new()
                            }
                        ),
                    )
                    .hint(
                        "pinrun grants no CPU it cannot prove free: retry (EMFILE, ENOMEM and EIO are usually passing), raise the limit named, or repair the state directory",
                    ));
                }
                if claim {
                    for name in &stale {
                        remove(&d, name);
                    }
                }
                claims.state_warnings.append(&mut claims.unreadable);
                dir = Some(d);
            }
            Ok(None) => {}
            Err(e) if claim => return Err(e),
            Err(e) => {
                let prefix = format!("claims: state directory {}: ", path.display());
                claims.state_dir_error = Some(
                    e.message
                        .strip_prefix(&prefix)
                        .unwrap_or(&e.message)
                        .to_string(),
                );
                claims.state_warnings.push(e.message);
            }
        }
    }
    let (mut kubelet, warning) = read_kubelet(root, &sys.possible);
    // In a container with exclusive CPUs, kubelet's claim on them is this
    // container's own (issue 23): it bounds the cpuset, it does not
    // compete with it.
    if !kubelet.is_empty()
        && let Some(cpus) = (others.own_exclusive)()
    {
        kubelet.retain(|c| c.cpus != cpus);
    }
    claims.claims.extend(kubelet);
    claims.state_warnings.extend(warning);
    // --pid: the target's own claims never count against it (a new one
    // replaces them).
    if let Some(t) = &req.target {
        let start = crate::system::threads::start_time(root, t.pid);
        claims.claims.retain(|c| {
            !matches!(&c.holder, crate::claim::Holder::Process { start_time, .. }
                if c.holder.pid_here() == Some(t.pid) && Some(*start_time) == start)
        });
    }
    claims.narrow(|cpu| sys.core_of(cpu), nix::unistd::geteuid().as_raw());
    Ok((claims, dir))
}

/// Plans `req` against the current claims. An `--exclusive` launch gets
/// back the [`Guard`] holding the lock (write the record with
/// [`Guard::claim`] right before applying). With `--wait`, a refusal
/// because of claims (`cpu-claimed`, `no-free-core`) is retried until the
/// cores are free or the duration is over, saying so on stderr.
pub fn plan(
    root: &Root,
    sys: &SystemState,
    req: &Request,
    others: &Others,
) -> Result<(Plan, Claims, Option<Guard>)> {
    let run = req.mode == Mode::Run;
    let claim = run && req.claims.exclusive;
    let wait = req.claims.wait.filter(|_| run);
    let start = Instant::now();
    let mut said = String::new();
    // --pid: the process waited for (its start time names it).
    let target = req
        .target
        .as_ref()
        .map(|t| (t.pid, crate::system::threads::start_time(root, t.pid)));
    loop {
        let (claims, dir) = read_claims(root, sys, req, claim, others)?;
        // The steering of ended claims is undone by the next --exclusive
        // launch, under the same lock (issue 21).
        let undone = match &dir {
            Some(d) if claim => (others.reclaim)(d),
            _ => String::new(),
        };
        match plan_claimed(sys, req, &claims) {
            Ok(plan) => {
                let notice = if !said.is_empty() && !req.output.quiet {
                    format!(
                        "pinrun: the cores are free after {:.1}s\n",
                        start.elapsed().as_secs_f64()
                    )
                } else {
                    String::new()
                };
                let notice = if req.output.quiet {
                    notice
                } else {
                    undone + &notice
                };
                let guard = dir.filter(|_| claim).map(|dir| Guard {
                    dir,
                    record: None,
                    replaces: None,
                    notice: String::new(),
                });
                // Printed now only when no lock is held.
                let guard = match guard {
                    Some(mut g) => {
                        g.notice = notice;
                        Some(g)
                    }
                    None => {
                        crate::output::to_stderr(&notice);
                        None
                    }
                };
                return Ok((plan, claims, guard));
            }
            Err(e)
                if matches!(e.code, ErrorCode::CpuClaimed | ErrorCode::NoFreeCore)
                    && wait.is_some() =>
            {
                let limit = wait.flatten().map(Duration::from_nanos);
                let waited = start.elapsed();
                if limit.is_some_and(|l| waited >= l) {
                    return Err(e.hint(format!(
                        "waited {:.1}s (--wait) and the cores are still claimed; wait longer or stop the holder",
                        waited.as_secs_f64()
                    )));
                }
                drop(dir);
                // Waiting for a process that has exited is waiting for
                // nothing.
                if let Some((pid, started)) = target
                    && crate::system::threads::start_time(root, pid) != started
                {
                    return Err(Error::new(
                        ErrorCode::PidReused,
                        format!(
                            "--pid {pid}: the process exited while pinrun waited (--wait) for its cores; nothing was changed"
                        ),
                    )
                    .hint("find the process again (pgrep NAME) and run pinrun again"));
                }
                if e.message != said {
                    crate::output::to_stderr(&format!(
                        "pinrun: waiting{}: {}\n",
                        limit.map_or(String::new(), |l| format!(" up to {:.1}s", l.as_secs_f64())),
                        e.message
                    ));
                    said = e.message;
                }
                let left = limit.map_or(WAIT_POLL, |l| l.saturating_sub(waited).min(WAIT_POLL));
                std::thread::sleep(left.max(Duration::from_millis(1)));
            }
            Err(e) => return Err(e),
        }
    }
}
