//! `--steer-irqs`' part of a run (issue 21): the steering plan from the
//! live IRQs, the launch's steering under the claim lock with the helper
//! that undoes it when the command ends, the undo of ended claims by the
//! next `--exclusive` launch, and `pinrun --reclaim`.

use crate::apply::helper::Duty;
use crate::apply::transaction::Undone;
use crate::claim::Claims;
use crate::error::{Error, ErrorCode, Result};
use crate::plan::Plan;
use crate::request::Request;
use crate::steer::plan::SteerPlan;
use crate::steer::{Journal, journal_name, journal_owner};
use crate::system::state_dir::{LockKind, StateDir, claim_lives, identity, still_runs};
use crate::system::{Root, SystemState};
use std::fmt::Write;
use std::path::Path;

/// What the steer wing needs of the claims wing, passed in by `app`,
/// which composes the wings (a wing imports no other wing): the names of
/// the claim records of process PID started at START (field 22 of its
/// stat) in the locked state directory, those an ended launch leaves
/// behind, removed with its steering (the claims wing's
/// `records_of`).
pub type RecordsOf = fn(&StateDir, u32, u64) -> Vec<String>;

/// The steering plan of `req` (`None` without `--steer-irqs`): every IRQ
/// of `/proc/irq` below `root` on the claimed CPUs of `plan`, the
/// housekeeping CPUs not claimed by `claims`. On the live machine (dry
/// run and launch alike) it asks the kernel, for each IRQ on a claimed
/// CPU whose kind debugfs did not tell, whether it keeps it (a test
/// write that changes nothing, [`crate::steer::read::test_write`]),
/// asks a running irqbalance for its ban through its control socket
/// ([`irqbalance_ban`]; refused when it has none or it does not answer),
/// and refuses when `/proc/irq` is not writable.
pub fn plan_for(
    root: &Root,
    sys: &SystemState,
    req: &Request,
    plan: &Plan,
    claims: &Claims,
) -> Result<Option<SteerPlan>> {
    if !req.claims.steer_irqs {
        return Ok(None);
    }
    let chosen = crate::plan::claim_set(
        plan.cpus.as_ref().unwrap_or(&Default::default()),
        &plan.cores,
    );
    crate::steer::plan::refuse_claimed_housekeeping(
        req.claims.irq_housekeeping.as_ref(),
        claims,
        &sys.online,
        &chosen,
    )?;
    let hk = crate::steer::plan::housekeeping(
        req.claims.irq_housekeeping.as_ref(),
        &sys.online,
        &sys.isolated,
        &sys.nohz_full,
        &claims.cpus(),
        &chosen,
    );
    let (mut irqs, default) = crate::steer::read::read_irqs(root);
    if req.sysroot.is_none() {
        // Without debugfs, the live kernel says which IRQs it keeps: a
        // test write that changes nothing (the dry run predicts the launch).
        let ask: std::collections::BTreeSet<u32> = crate::steer::plan::to_ask(&irqs, &chosen)
            .into_iter()
            .collect();
        for irq in irqs.iter_mut().filter(|i| ask.contains(&i.number)) {
            irq.kernel_keeps =
                crate::steer::kernel_keeps(crate::steer::read::test_write(irq.number));
            irq.chip = crate::steer::read::chip_name(root, irq.number);
        }
    }
    let mut p =
        crate::steer::plan::plan(&irqs, default.as_ref(), &sys.online, &chosen, &hk, &|n| {
            sys.nodes.get(&n).map(|node| node.cpus.clone())
        });
    let daemons = crate::steer::read::irqbalance(root);
    p.irqbalance = daemons.iter().map(|(pid, _)| *pid).collect();
    if req.sysroot.is_none() {
        if let Err(e) = crate::steer::read::irq_writable() {
            return Err(Error::new(
                ErrorCode::SteerNotPermitted,
                format!(
                    "--steer-irqs: /proc/irq/default_smp_affinity is not writable: {}; nothing was changed",
                    e.desc()
                ),
            )
            .hint(crate::steer::read::NOT_PERMITTED_HINT));
        }
        match daemons.as_slice() {
            [(pid, None)] if req.claims.irqbalance_config => {
                p.config = Some(irqbalance_config(root, *pid, &p.cpus)?);
            }
            _ => p.ban = irqbalance_ban(root, &daemons, &p.cpus)?,
        }
    }
    Ok(Some(p))
}

/// The ban to send the running irqbalance (`daemons`: PID and control
/// socket) so it keeps its hands off `chosen`: its ban now (its `setup`
/// reply) ∪ `chosen`. `None` when none runs. Refused (nothing changed):
/// more than one daemon, one without a socket (it would move the IRQs
/// back: pinrun never fights it silently), a socket that does not answer
/// or answers what irqbalance's `setup` never says, a ban that cannot be
/// sent.
pub fn irqbalance_ban(
    root: &Root,
    daemons: &[(u32, Option<std::path::PathBuf>)],
    chosen: &crate::cpuset::CpuSet,
) -> Result<Option<crate::steer::plan::BanPlan>> {
    let Some((pid, sock)) = daemons.first() else {
        return Ok(None);
    };
    let cpus = crate::words::cpus_phrase(chosen);
    let ban_hint = format!(
        "ban the CPUs in irqbalance's configuration (IRQBALANCE_BANNED_CPULIST={} in /etc/default/irqbalance or /etc/sysconfig/irqbalance, then restart it), or stop it for the command's life",
        chosen.to_list()
    );
    if daemons.len() > 1 {
        let pids: Vec<String> = daemons.iter().map(|(p, _)| p.to_string()).collect();
        return Err(Error::new(
            ErrorCode::IrqbalanceRuns,
            format!(
                "--steer-irqs: {} irqbalance daemons run (pids {}): each would move IRQs onto {cpus}; nothing was changed",
                daemons.len(),
                pids.join(", ")
            ),
        )
        .hint(format!("run one irqbalance; or {ban_hint}")));
    }
    let Some(sock) = sock else {
        return Err(Error::new(
            ErrorCode::IrqbalanceRuns,
            format!(
                "--steer-irqs: irqbalance runs (pid {pid}) without its control socket /run/irqbalance/irqbalance{pid}.sock (irqbalance before 1.5.0, built without its UI, or /run/irqbalance not writable) and would move the IRQs back onto {cpus}; pinrun does not fight it, nothing was changed"
            ),
        )
        .hint(format!(
            "add --irqbalance-config to ban {} in irqbalance.service's configuration file and restart it for the command's life (put back after); or start irqbalance with /run/irqbalance present (its unit's RuntimeDirectory=irqbalance) so it has its control socket; or stop it for the command's life",
            chosen.to_list()
        )));
    };
    let refused = |why: String| {
        Error::new(
            ErrorCode::IrqbalanceSocket,
            format!(
                "--steer-irqs: irqbalance (pid {pid}) at {}: {why}; nothing was changed",
                sock.display()
            ),
        )
        .hint(socket_hint(
            nix::unistd::geteuid().is_root(),
            *pid,
            &ban_hint,
        ))
    };
    // Bounded by its interval from its command line: a pass may hold its
    // socket that long (crate::steer::answer_within).
    let within = crate::steer::answer_within(crate::steer::read::irqbalance_interval(root, *pid));
    let setup = crate::steer::read::irqbalance_setup(sock, within).map_err(refused)?;
    let default = crate::steer::read::irqbalance_default_ban(root, *pid).ok_or_else(|| {
        refused(format!(
            "cannot read /proc/{pid}/environ (its ban without the socket)"
        ))
    })?;
    let to = crate::steer::plan::ban_for_launch(&setup.banned, chosen);
    crate::steer::ban_command(&to, &default).map_err(refused)?;
    Ok(Some(crate::steer::plan::BanPlan {
        pid: *pid,
        socket: sock.clone(),
        now: setup.banned,
        default,
        to,
        sleep: setup.sleep,
    }))
}

/// `--irqbalance-config` for irqbalance `pid` running without its
/// control socket: the edit of the last existing `EnvironmentFile=` of
/// irqbalance.service (systemd loads them in order, the last assignment
/// wins) banning its own ban ∪ `chosen`. Refused, nothing changed: systemd
/// does not run this machine, the unit is not active or its main PID is
/// not `pid`, no environment file exists, the file's ban variables differ
/// from what the daemon runs with (`/proc/PID/environ`: edited since it
/// started, or set elsewhere), or it cannot be read or edited.
pub fn irqbalance_config(
    root: &Root,
    pid: u32,
    chosen: &crate::cpuset::CpuSet,
) -> Result<crate::steer::plan::ConfigPlan> {
    use crate::steer::read::IRQBALANCE_UNIT;
    let refused = |why: String, hint: &str| {
        Error::new(
            ErrorCode::IrqbalanceRuns,
            format!("--irqbalance-config: irqbalance (pid {pid}): {why}; nothing was changed"),
        )
        .hint(hint.to_string())
    };
    let stop_hint = "stop irqbalance for the command's life, or start it with /run/irqbalance present so it has its control socket";
    if !crate::steer::read::systemd_booted(root) {
        return Err(refused(
            "systemd does not run this machine (no /run/systemd/system): pinrun restarts irqbalance only through systemctl try-restart irqbalance.service".into(),
            stop_hint,
        ));
    }
    let unit = crate::steer::read::irqbalance_unit()
        .map_err(|e| refused(format!("cannot read {IRQBALANCE_UNIT}: {e}"), stop_hint))?;
    if unit.active_state != "active" || unit.main_pid != pid {
        return Err(refused(
            format!(
                "{IRQBALANCE_UNIT} is {} with main PID {}: this daemon is not the unit's",
                unit.active_state, unit.main_pid
            ),
            stop_hint,
        ));
    }
    let Some(path) = unit
        .environment_files
        .iter()
        .rev()
        .map(|(p, _)| p)
        .find(|p| p.is_file())
    else {
        return Err(refused(
            format!("{IRQBALANCE_UNIT} has no EnvironmentFile= that exists"),
            "create the unit's configuration file (Debian: /etc/default/irqbalance, RHEL/Fedora: /etc/sysconfig/irqbalance) and restart irqbalance, or stop it for the command's life",
        ));
    };
    let at = |e: String| {
        refused(
            format!("{}: {e}", path.display()),
            "fix the file by hand (or stop irqbalance for the command's life)",
        )
    };
    let now = crate::steer::read::read_config(path).map_err(at)?;
    let env = crate::steer::read::irqbalance_environ(root, pid).ok_or_else(|| {
        refused(
            format!("cannot read /proc/{pid}/environ (what it runs with)"),
            "run as root",
        )
    })?;
    for var in crate::steer::BAN_VARS {
        let file = crate::steer::env_file_value(&now, var).map_err(at)?;
        let runs = crate::steer::read::environ_value(&env, var);
        if file.is_some() && file != runs {
            return Err(refused(
                format!(
                    "{} sets {var}={} but the daemon runs with {}: the file was edited since it started",
                    path.display(),
                    file.unwrap_or_default(),
                    runs.map_or("it unset".to_string(), |r| format!("{var}={r}"))
                ),
                "systemctl restart irqbalance.service so it runs with its file, then retry",
            ));
        }
    }
    let ban_now = crate::steer::read::irqbalance_default_ban(root, pid).ok_or_else(|| {
        refused(
            format!("cannot read /proc/{pid}/environ (its ban)"),
            "run as root",
        )
    })?;
    let ban_to = ban_now.union(chosen);
    let to = crate::steer::config_edit(&now, &ban_to).map_err(at)?;
    Ok(crate::steer::plan::ConfigPlan {
        pid,
        path: path.clone(),
        now,
        ban_now,
        ban_to,
        to,
    })
}

/// Whether the launch of journal `j` still runs: judged in the PID
/// namespace its PID is numbered in ([`still_runs`]); in this reader's
/// own, its process group too, as its claim lives ([`claim_lives`]: the
/// IRQs stay off the claimed CPUs while the group has a live member).
/// `Err(why)`: it cannot be seen from here, and its steering is left
/// alone.
fn holder_runs(j: &Journal) -> std::result::Result<bool, String> {
    let view = crate::system::state_dir::view_pid_ns();
    let here = j.pid_ns.is_none() || j.pid_ns == view;
    if here {
        return Ok(claim_lives(j.pid, j.start_time, j.pgid));
    }
    still_runs(j.pid, j.start_time, j.pid_ns)
}

/// Undoes, in the locked `dir`, every journal whose holder has ended (and
/// `only`'s, the caller's own, last, when given), composed with the live
/// ones. Returns what to say, one line each without the `pinrun: `
/// prefix, whether every journal could be used and undone, and a line for
/// each journal left alone because its launch, of another PID namespace,
/// cannot be seen from this one (never taken for ended). For `only`,
/// nothing is said when every IRQ and ban is simply restored; otherwise
/// each IRQ or ban left alone (changed since) and each failed restore has
/// its line.
fn undo_ended(
    dir: &StateDir,
    only: Option<&str>,
    records_of: RecordsOf,
) -> (Vec<String>, bool, Vec<String>) {
    let root = Root::new("/");
    let mut files = crate::steer::read::read_journals(dir);
    let mut lines = Vec::new();
    let mut unseen = Vec::new();
    let mut ok = true;
    // The caller's own journal last: an ended launch's journal left by a
    // crash (between an undo's hand-over and its writes) is finished
    // first, composed with the live ones, so the own undo sees its writes.
    // Another user's files are not pinrun's: one line for them all.
    let foreign: Vec<String> = files
        .iter()
        .filter(|f| f.foreign.is_some())
        .map(|f| f.name.clone())
        .collect();
    if only.is_none() && !foreign.is_empty() {
        lines.push(format!(
            "ignored {} in {} not owned by root (not pinrun's steering journals): {}",
            crate::words::count(foreign.len(), "file"),
            dir.path().display(),
            crate::words::shorten(&foreign.join(" "), 200)
        ));
    }
    let mut names: Vec<String> = files
        .iter()
        .filter(|f| f.foreign.is_none())
        .map(|f| f.name.clone())
        .collect();
    names.sort_by_key(|n| only == Some(n.as_str()));
    for name in names {
        let Some(idx) = files.iter().position(|f| f.name == name) else {
            continue;
        };
        let j = match &files[idx].journal {
            Ok(j) => j.clone(),
            Err(why) => {
                if only.is_none() || only == Some(name.as_str()) {
                    ok = false;
                    lines.push(format!(
                        "steering journal {} cannot be used: {why}; left in place",
                        dir.path().join(&name).display()
                    ));
                }
                continue;
            }
        };
        let mine = only == Some(name.as_str());
        if !mine {
            match holder_runs(&j) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(why) => {
                    unseen.push(format!(
                        "kept the IRQ steering of pid {} in PID namespace {} ({}): that launch cannot be checked from here ({why}); a pinrun on the host restores it once the launch has ended",
                        j.pid,
                        j.pid_ns.map_or(String::new(), |n| n.to_string()),
                        dir.path().join(&name).display()
                    ));
                    continue;
                }
            }
        }
        let others: Vec<(String, Journal)> = files
            .iter()
            .filter(|f| f.name != name)
            .filter(|f| f.foreign.is_none())
            .filter_map(|f| f.journal.as_ref().ok().map(|o| (f.name.clone(), o.clone())))
            .collect();
        let (said, done) = crate::steer::apply::finish(&root, dir, &name, &j, &others);
        ok &= done;
        let restored = j.irqs.len();
        // An ended launch's claim records claim nothing: removed under the
        // same lock, with its steering (those of this /proc's PID
        // namespace: another's are judged there).
        let removed = if !mine && done {
            stale_records_removed(dir, &name, &j, records_of)
        } else {
            String::new()
        };
        // The launch's own helper says nothing when all is restored.
        if !mine || !done {
            lines.push(format!(
                "restored the IRQ steering of pid {} ({} journaled){}{removed}",
                j.pid,
                crate::words::count(restored, "IRQ"),
                if done {
                    ""
                } else {
                    "; some restores failed, the journal is kept for --reclaim"
                }
            ));
        }
        lines.extend(said);
        // Re-read: the undo may have rewritten the other journals.
        files = crate::steer::read::read_journals(dir);
    }
    (lines, ok, unseen)
}

/// Removes the claim records of the ended launch whose steering journal
/// is `journal` ([`crate::steer::journal_owner`]: its PID and start
/// time) from the exclusively locked `dir`; "; removed its claim
/// record(s) NAMES", or empty when there was none, or when the launch
/// (`j`) was of another PID namespace than this `/proc`'s (its records
/// are judged there).
fn stale_records_removed(
    dir: &StateDir,
    journal: &str,
    j: &Journal,
    records_of: RecordsOf,
) -> String {
    let Some((pid, start)) = crate::steer::journal_owner(journal) else {
        return String::new();
    };
    if j.pid_ns.is_some() && j.pid_ns != crate::system::state_dir::view_pid_ns() {
        return String::new();
    }
    let names = records_of(dir, pid, start);
    for n in &names {
        dir.remove(n);
    }
    if names.is_empty() {
        return String::new();
    }
    format!(
        "; removed its claim {} {}",
        crate::words::noun(names.len(), "record"),
        names.join(" ")
    )
}

/// Undoes the ended claims' steering in `dir` (already locked
/// exclusively by an `--exclusive` launch); what to print after the lock
/// is released. Only root can write `/proc/irq`: other users' launches
/// leave the journals to root's next launch or `--reclaim`.
pub fn reclaim_stale(dir: &StateDir, records_of: RecordsOf) -> String {
    if !nix::unistd::geteuid().is_root() {
        return String::new();
    }
    // Another user's files alone: nothing to say at every launch
    // (--reclaim names them).
    let has = crate::steer::read::read_journals(dir)
        .iter()
        .any(|f| f.foreign.is_none() && journal_owner(&f.name).is_some());
    if !has {
        return String::new();
    }
    let (lines, _, _) = undo_ended(dir, None, records_of);
    report_text(&lines)
}

/// The undo's `lines` in the house format: `pinrun: LINE`, one per line.
fn report_text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("pinrun: {l}\n")).collect()
}

/// `pinrun --reclaim`: locks the state directory, undoes the steering of
/// every ended launch and prints what it did, and names each journal left
/// alone because its launch, of a PID namespace this one cannot see into,
/// cannot be checked ("pinrun: nothing to reclaim in DIR" on stderr when
/// there is none of either, or the directory does not exist); exit 125
/// when a journal cannot be used or a restore failed.
pub fn reclaim(state_dir: &Path, records_of: RecordsOf) -> Result<()> {
    let nothing = format!("pinrun: nothing to reclaim in {}\n", state_dir.display());
    let Some(mut dir) = StateDir::open(state_dir, false)? else {
        crate::output::to_stderr(&nothing);
        return Ok(());
    };
    dir.lock(LockKind::Exclusive)?;
    let (mut lines, ok, unseen) = undo_ended(&dir, None, records_of);
    drop(dir);
    lines.extend(unseen);
    if lines.is_empty() {
        crate::output::to_stderr(&nothing);
    }
    crate::output::to_stderr(&report_text(&lines));
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::SteerFailed,
            format!(
                "--reclaim: some steering in {} could not be undone",
                state_dir.display()
            ),
        )
        .hint(
            "see the lines above; a journal that cannot be used names the IRQs to restore by hand",
        ))
    }
}

/// The hint of a refused exchange with irqbalance's socket (pid `pid`),
/// for a caller that is root (`root`: its effective uid is 0) or not;
/// `ban_hint` is the way around the socket. irqbalance answers uid 0 only
/// (`sock_handle()` checks the sender's `SCM_CREDENTIALS`), so "retry as
/// root" fits only a caller that is not; to root, the daemon itself did
/// not answer (busy in a rebalance pass, hung, or gone): retry, check it,
/// or stop it for the command's life.
fn socket_hint(root: bool, pid: u32, ban_hint: &str) -> String {
    if root {
        format!(
            "irqbalance (pid {pid}) answers between its rebalance passes: retry; if it keeps failing check the daemon (systemctl status irqbalance.service, journalctl -u irqbalance.service), or {ban_hint}"
        )
    } else {
        format!(
            "irqbalance answers uid 0 only (sock_handle() checks the sender's credentials): run as root; or {ban_hint}"
        )
    }
}

/// The helper's duty for this launch's steering
/// ([`crate::apply::helper::spawn_duties`], started before [`launch`]
/// writes anything, its journal included): once the steering's lifetime
/// has ended ([`wait_for_the_end`]: pinrun died before exec, or the
/// command has ended and with it, when the launch led its process group,
/// the group, as the claim does), undo this launch's journal in the state
/// directory `dir` under its lock, and write to the stderr it inherited
/// (the command's) one `pinrun: …` line per IRQ or ban left alone and per
/// failed restore (nothing when all is restored; nothing at all when
/// pinrun already put everything back or steered nothing).
/// `Err`: this process's identity cannot be read.
pub fn undo_duty(dir: &StateDir, records_of: RecordsOf) -> Result<Duty> {
    let (pid, start, _, pgid) = identity()?;
    let name = journal_name(pid, start);
    let path = dir.path().to_path_buf();
    // SIGTERM (systemd stopping the unit) is blocked in the helper: it
    // outlives the command by this undo (a SIGKILL leaves the undo to the
    // next launch or --reclaim).
    Ok(Box::new(move |h| {
        wait_for_the_end(h, pid, start, pgid);
        let Ok(Some(mut d)) = StateDir::open(&path, false) else {
            return 1;
        };
        if d.lock(LockKind::Exclusive).is_err() {
            return 1;
        }
        let (lines, ok, _) = undo_ended(&d, Some(&name), records_of);
        drop(d);
        // The helper's stderr is the command's (a terminal, the unit's
        // journal): what was left alone or could not be restored.
        crate::output::to_stderr(&report_text(&lines));
        i32::from(!ok)
    }))
}

/// How often the helper looks whether the process group it follows is
/// empty (`kill(-PGID, 0)`: one system call) and whether the first of
/// the group's members it knows is still a live member (one read).
const GROUP_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// While the group exists but no member the helper knows is live (only
/// zombies, or members it has not seen yet), how many polls apart it
/// reads the whole of `/proc` for the group's members.
const GROUP_SCAN_EVERY: u32 = 20;

/// Blocks until the steering of launch `pid` (started at `start`,
/// following process group `pgid`: see [`crate::steer::Journal::pgid`])
/// has ended: pinrun ended (its pidfd in `h`) before exec (nothing runs
/// for it: at once), or the command ended and, when the launch led its
/// group, the group has no live member any more, as its claim judges
/// ([`crate::system::state_dir::claim_lives`], asked twice a poll apart
/// before the undo). The group is polled every
/// [`GROUP_POLL`]: while the first member the helper knows lives, that is
/// one system call and one read; once it has ended, the others it knows
/// are read, and when none of them lives the whole of `/proc` (at once,
/// then every [`GROUP_SCAN_EVERY`] polls while the group exists). So the
/// undo follows the group's last member within a poll or two, also when
/// zombies keep the group in existence until they are reaped (it took up
/// to 2 s when the members were read every 20 polls).
fn wait_for_the_end(h: &crate::apply::helper::Helper, pid: u32, start: u64, pgid: u32) {
    use crate::system::state_dir::{group_exists, live_member, live_members};
    while !h.ended_within(-1) {}
    if pgid == 0 || pgid != pid || !h.wait_for_exec() {
        return;
    }
    let mut known: Vec<u32> = Vec::new();
    let mut since_scan = 0u32;
    while group_exists(pgid) {
        if !known.first().is_some_and(|m| live_member(*m, pgid)) {
            let had = !known.is_empty();
            known.retain(|m| live_member(*m, pgid));
            if known.is_empty() && (had || since_scan.is_multiple_of(GROUP_SCAN_EVERY)) {
                // Ended only when two looks a poll apart say so: a member
                // that forks and exits between one look's listing of /proc
                // and its reads (a daemon's double fork) hides its child
                // from that look.
                if !claim_lives(pid, start, pgid) && {
                    std::thread::sleep(GROUP_POLL);
                    !claim_lives(pid, start, pgid)
                } {
                    return;
                }
                known = live_members(pgid).unwrap_or_default();
                since_scan = 0;
            }
        }
        since_scan = since_scan.wrapping_add(1);
        std::thread::sleep(GROUP_POLL);
    }
}

/// The error of a helper that could not be started for `--steer-irqs`.
pub fn helper_error(e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::SteerFailed,
        format!("--steer-irqs: cannot start the helper that undoes the steering: {}; nothing was changed", crate::error::io_words(e)),
    )
    .hint(crate::system::process::start_hint(e))
}

/// Steers the IRQs of `p` for this launch in the locked `dir` (after the
/// claim record; [`plan_for`] refused irqbalance and an unwritable
/// `/proc/irq`; the helper with [`undo_duty`] is already running).
/// Returns what to print once the lock is released, the IRQs whose
/// effective affinity is still on a claimed CPU (the move is pending until
/// their next interrupt; `--probe` names them), and whether anything was
/// changed (an IRQ, `default_smp_affinity`, irqbalance's ban or its
/// configuration file): without, there is nothing to say was put back.
pub fn launch(
    dir: &StateDir,
    p: &SteerPlan,
    sys: &SystemState,
    quiet: bool,
) -> Result<(String, Vec<u32>, bool)> {
    let (pid, start, _, pgid) = identity()?;
    let root = Root::new("/");
    let (irqs, _) = crate::steer::read::read_irqs(&root);
    let out = crate::steer::apply::steer(
        &root,
        dir,
        p,
        &irqs,
        &|n| sys.nodes.get(&n).map(|node| node.cpus.clone()),
        (pid, start, pgid),
    )?;
    let mut s = String::new();
    let pending_irqs: Vec<u32> = out.moved.iter().filter(|m| m.3).map(|m| m.0).collect();
    let changed =
        !out.moved.is_empty() || out.default.is_some() || out.ban.is_some() || p.config.is_some();
    if quiet {
        return Ok((s, pending_irqs, changed));
    }
    let journal = dir.path().join(&out.journal);
    if out.moved.is_empty() {
        let _ = writeln!(
            s,
            "pinrun: {} (off {}; journal {})",
            crate::steer::report::nothing_moved(p).unwrap_or("no IRQ moved"),
            crate::words::cpus_phrase(&p.cpus),
            journal.display()
        );
    } else {
        let _ = writeln!(
            s,
            "pinrun: steered {} off {} (journal {})",
            crate::words::count(out.moved.len(), "IRQ"),
            crate::words::cpus_phrase(&p.cpus),
            journal.display()
        );
    }
    if let Some(c) = &p.config {
        let _ = writeln!(
            s,
            "pinrun: irqbalance bans {} (was {}) for the command's life: {} edited and irqbalance.service restarted",
            crate::words::cpus_phrase(&c.ban_to),
            crate::words::or_no_cpu(&c.ban_now),
            c.path.display()
        );
    }
    if let (Some(b), Some(ban)) = (&p.ban, &out.ban) {
        let _ = writeln!(
            s,
            "pinrun: irqbalance (pid {}) bans {} (was {}) for the command's life",
            b.pid,
            crate::words::cpus_phrase(ban),
            crate::words::or_no_cpu(&b.now)
        );
    }
    let pending: Vec<String> = pending_irqs.iter().map(u32::to_string).collect();
    if !pending.is_empty() {
        let _ = writeln!(
            s,
            "pinrun: effective affinity pending for {} {} (x86 moves an IRQ at its next interrupt)",
            crate::words::noun(pending.len(), "IRQ"),
            pending.join(" ")
        );
    }
    for (n, name, why) in &out.skipped {
        let _ = writeln!(
            s,
            "pinrun: {} not moved: {why}",
            crate::steer::report::named(*n, name)
        );
    }
    for (who, cpus, why, n) in crate::steer::report::unmovable_groups(&p.unmovable) {
        let _ = writeln!(
            s,
            "pinrun: {who} {} on {}: {why}",
            if n == 1 { "stays" } else { "stay" },
            crate::words::cpus_phrase(cpus)
        );
    }
    if !out.threads_pending.is_empty() {
        let t: Vec<String> = out
            .threads_pending
            .iter()
            .map(|(n, tid)| format!("irq/{n} (pid {tid})"))
            .collect();
        let _ = writeln!(
            s,
            "pinrun: threaded handlers follow at their IRQ's next interrupt: {}",
            t.join(", ")
        );
    }
    Ok((s, pending_irqs, changed))
}

/// Undoes this launch's own steering in the locked `dir` (the launch's
/// transaction, [`crate::apply::transaction`], failed after steering):
/// put back, with the lines of what was left alone (an IRQ or ban changed
/// since); or failed, with the lines of what could not be restored (the
/// journal stays: the helper tries again once pinrun has ended).
pub fn undo_own(dir: &StateDir, records_of: RecordsOf) -> Undone {
    let (pid, start, _, _) = match identity() {
        Ok(id) => id,
        Err(e) => {
            return Undone::Failed(format!(
                "{}; the helper puts it back once pinrun has ended",
                e.message
            ));
        }
    };
    let (lines, ok, _) = undo_ended(dir, Some(&journal_name(pid, start)), records_of);
    match (ok, lines.is_empty()) {
        (true, true) => Undone::PutBack,
        (true, false) => Undone::PutBackWith(lines.join("; ")),
        (false, _) => Undone::Failed(format!(
            "{}; the helper tries again once pinrun has ended (else pinrun --reclaim)",
            lines.join("; ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{cpus, irqbalance_server};

    /// A root with `/proc/<pid>/environ` holding `env` (NUL-separated) and
    /// the isolated/nohz_full files.
    /// The directory goes with the returned `TempDir`.
    fn root_with(pid: u32, env: &str, isolated: &str) -> (Root, tempfile::TempDir) {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::create_dir_all(d.join(format!("proc/{pid}"))).unwrap();
        std::fs::create_dir_all(d.join("sys/devices/system/cpu")).unwrap();
        std::fs::write(
            d.join(format!("proc/{pid}/environ")),
            env.replace(' ', "\0"),
        )
        .unwrap();
        std::fs::write(
            d.join("sys/devices/system/cpu/isolated"),
            format!("{isolated}\n"),
        )
        .unwrap();
        std::fs::write(d.join("sys/devices/system/cpu/nohz_full"), "\n").unwrap();
        (Root::new(d), t)
    }

    #[test]
    fn irqbalance_ban_is_its_ban_plus_the_claimed_cpus() {
        let (root, _t7) = root_with(7, "PATH=/bin ", "4-7");
        let (sock, h) = irqbalance_server(b"SLEEP 10 BANNED 000000f0".to_vec());
        let b = irqbalance_ban(&root, &[(7, Some(sock.clone()))], &cpus("16-17"))
            .unwrap()
            .unwrap();
        assert_eq!(h.join().unwrap().0, "setup");
        assert_eq!(
            (b.now.to_list(), b.to.to_list()),
            ("4-7".into(), "4-7,16-17".into())
        );
        assert_eq!(b.default, cpus("4-7"));
        assert_eq!(b.sleep, 10);
        assert_eq!(
            crate::steer::ban_command(&b.to, &b.default).unwrap(),
            "settings cpus 4-7,16-17"
        );
        // IRQBALANCE_BANNED_CPULIST overrides isolcpus; the hex
        // IRQBALANCE_BANNED_CPUS overrides both (cputree.c
        // setup_banned_cpus()).
        let (root, _t8) = root_with(8, "IRQBALANCE_BANNED_CPULIST=1-2 ", "4-7");
        assert_eq!(
            crate::steer::read::irqbalance_default_ban(&root, 8),
            Some(cpus("1-2"))
        );
        let (root, _t9) = root_with(
            9,
            "IRQBALANCE_BANNED_CPULIST=1-2 IRQBALANCE_BANNED_CPUS=0c ",
            "4-7",
        );
        assert_eq!(
            crate::steer::read::irqbalance_default_ban(&root, 9),
            Some(cpus("2-3"))
        );
    }

    #[test]
    fn irqbalance_refusals_name_the_daemon_and_change_nothing() {
        let (root, _t11) = root_with(11, "", "");
        let e = irqbalance_ban(&root, &[(11, None)], &cpus("3")).unwrap_err();
        assert_eq!(e.code, ErrorCode::IrqbalanceRuns);
        assert!(
            e.message.contains("pid 11") && e.message.contains("/run/irqbalance/irqbalance11.sock"),
            "{}",
            e.message
        );
        assert!(
            e.hint.as_deref().unwrap().starts_with(
                "add --irqbalance-config to ban 3 in irqbalance.service's configuration file"
            ),
            "{:?}",
            e.hint
        );
        let e = irqbalance_ban(&root, &[(11, None), (12, None)], &cpus("3")).unwrap_err();
        assert_eq!(e.code, ErrorCode::IrqbalanceRuns);
        assert!(e.message.contains("pids 11, 12"), "{}", e.message);
        // Not root: irqbalance closes without a reply.
        let (sock, h) = irqbalance_server(Vec::new());
        let e = irqbalance_ban(&root, &[(11, Some(sock))], &cpus("3")).unwrap_err();
        let _ = h.join();
        assert_eq!(e.code, ErrorCode::IrqbalanceSocket);
        assert!(
            e.message.contains("no SLEEP") && e.message.contains("nothing was changed"),
            "{}",
            e.message
        );
        // Gone: nobody answers at the path.
        let e = irqbalance_ban(
            &root,
            &[(11, Some("/nonexistent/x.sock".into()))],
            &cpus("3"),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::IrqbalanceSocket);
        assert!(e.message.contains("connect: "), "{}", e.message);
        assert!(irqbalance_ban(&root, &[], &cpus("3")).unwrap().is_none());
    }

    /// The new-user trial: as root, a socket that answered "Try again"
    /// got "retry as root". The hint fits the caller.
    #[test]
    fn irqbalance_socket_hint_fits_the_caller() {
        let root = socket_hint(true, 612, "stop it");
        assert_eq!(
            root,
            "irqbalance (pid 612) answers between its rebalance passes: retry; if it keeps failing check the daemon (systemctl status irqbalance.service, journalctl -u irqbalance.service), or stop it"
        );
        assert!(!root.contains("as root"));
        assert_eq!(
            socket_hint(false, 612, "stop it"),
            "irqbalance answers uid 0 only (sock_handle() checks the sender's credentials): run as root; or stop it"
        );
    }
}
