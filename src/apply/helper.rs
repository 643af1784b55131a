//! The helper process that outlives pinrun's exec (ARCHITECTURE.md §10,
//! "one helper process"): one process per launch runs every duty the
//! launch has, in order ([`spawn_duties`]): the `--thread-map` watcher,
//! then `--steer-irqs`' undo; `--pid` has one of its own, the undo of
//! the threads it changes ([`crate::pid::apply::undo`]). The watcher
//! runs in a child of the helper (`pinrun-watcher`), so that its death by
//! a signal is reported and the steering's undo still runs. Only the
//! process plumbing lives here; what the helper does is the closures
//! given to it.
//!
//! [`spawn`] double-forks: pinrun forks a child that forks the helper and
//! exits at once, and pinrun reaps that child, so the command pinrun execs
//! has no child of its own (the helper is re-parented to the nearest
//! subreaper or init) and no zombie. The helper stays in pinrun's cgroup
//! (fork keeps it: `cgroups(7)`), so systemd stops it with the unit, and
//! keeps the scheduling policy, affinity and mempolicy pinrun was started
//! with (it is forked before any is applied, and before the first change
//! to the host: `--steer-irqs`' undo is armed before its journal exists,
//! so that pinrun's death at any step, SIGKILL included, is undone by the
//! helper). It holds:
//!
//! - a pidfd of pinrun's process (`pidfd_open(2)`), readable when the
//!   command (same PID after exec) ends, whatever its parent does;
//! - one end of a socket pair (`SOCK_SEQPACKET`) whose other end only
//!   pinrun holds, close-on-exec: pinrun hands descriptors it opens later
//!   over it (the watcher's perf events and log, opened after `--probe`:
//!   [`hand_fds`]), then says "exec follows" ([`about_to_exec`]); end of
//!   file once pinrun has exec'd (or died), so the helper starts its work
//!   only after every policy is applied, or learns that pinrun died
//!   before exec;
//! - its own session (`setsid(2)`): terminal signals go to the command;
//! - SIGTERM blocked: systemd stopping the unit signals the whole cgroup,
//!   and the helper must outlive the command by its last duty (putting the
//!   IRQs back) rather than die with it; SIGKILL still ends it (the undo is
//!   then left to the next launch or `--reclaim`);
//! - the descriptors the caller names (a log file), and stderr. Every other
//!   descriptor is closed at once; stdin and stdout are `/dev/null`, so a
//!   pipe reader of the command's output sees its end when the command
//!   ends.

use crate::ffi;
use std::cell::{Cell, RefCell};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

/// The tag of [`about_to_exec`]'s message.
const EXEC: u8 = b'X';

/// The tag of [`about_to_exec`]'s message after [`hand_fds`]: the helper
/// answers it ([`TAKEN`], [`LOST`]). Only then: a helper whose one duty
/// waits for the command's end before it reads (the steering's undo)
/// would never answer.
const EXEC_ANSWER: u8 = b'Y';

/// The tag of [`settled`]'s message.
const SETTLED: u8 = b'S';

/// The helper's answer to [`about_to_exec`]: every descriptor handed
/// over before it arrived.
const TAKEN: u8 = b'A';

/// Its answer when some did not: a message came with `MSG_CTRUNC`, its
/// descriptors dropped by the kernel (`unix(7)`: the receiver's open-files
/// limit had no room for them; `scm_detach_fds()` meets EMFILE).
const LOST: u8 = b'N';

/// The most descriptors in one `SCM_RIGHTS` message (the kernel's
/// `SCM_MAX_FD` is 253).
const FDS_PER_MESSAGE: usize = 250;

/// What the helper's work is given.
#[derive(Debug)]
pub struct Helper {
    /// The PID of the process that will exec the command.
    pub target_pid: u32,
    /// Its pidfd: readable when it has ended.
    pub target: OwnedFd,
    /// pinrun's messages ([`hand_fds`], [`about_to_exec`]); end of file
    /// once the target has exec'd or ended.
    pub started: OwnedFd,
    /// What [`Helper::wait_for_exec`] found, once it has.
    exec: Cell<Option<bool>>,
    /// The descriptors handed over so far, with their tags.
    fds: RefCell<Vec<(u8, OwnedFd)>>,
    /// The tags of the messages received so far, in order.
    tags: RefCell<Vec<u8>>,
    /// Whether a message came with its descriptors dropped (`MSG_CTRUNC`).
    lost: Cell<bool>,
}

impl Helper {
    /// Blocks until the target has exec'd: true once it sent
    /// [`about_to_exec`]'s message and the socket then closed (exec, or
    /// its death after a failed exec); false when it closed without it
    /// (pinrun failed or died before exec: there is no command to watch),
    /// and false when descriptors handed over were lost (pinrun, told so
    /// by the answer to [`about_to_exec`], refuses the launch).
    /// The descriptors handed over meanwhile are kept for
    /// [`Helper::take_fds`]. The answer is kept: a later call returns it.
    pub fn wait_for_exec(&self) -> bool {
        if let Some(done) = self.exec.get() {
            return done;
        }
        loop {
            match self.receive() {
                Err(nix::errno::Errno::EINTR) => continue,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        let got = self
            .tags
            .borrow()
            .iter()
            .any(|t| [EXEC, EXEC_ANSWER].contains(t))
            && !self.lost.get();
        self.exec.set(Some(got));
        got
    }

    /// Blocks until pinrun has exited or died (end of file on the
    /// socket); true when it said [`settled`] before: its work on another
    /// process is verified, or put back by pinrun itself, and the
    /// helper's undo has nothing to do.
    pub fn was_settled(&self) -> bool {
        self.wait_for_exec();
        self.tags.borrow().contains(&SETTLED)
    }

    /// One message of pinrun: its tag (`None`: end of file), its
    /// descriptors kept under the tag; [`about_to_exec`]'s is answered
    /// ([`TAKEN`] or [`LOST`]).
    fn receive(&self) -> nix::Result<Option<u8>> {
        use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
        let mut tag = [0u8; 1];
        let mut iov = [io::IoSliceMut::new(&mut tag)];
        let mut cmsg = nix::cmsg_space!([RawFd; FDS_PER_MESSAGE]);
        let m = recvmsg::<()>(
            self.started.as_raw_fd(),
            &mut iov,
            Some(&mut cmsg),
            MsgFlags::MSG_CMSG_CLOEXEC,
        )?;
        if m.bytes == 0 {
            return Ok(None);
        }
        let mut got = Vec::new();
        if m.flags.contains(MsgFlags::MSG_CTRUNC) {
            self.lost.set(true);
        } else {
            for c in m.cmsgs()? {
                if let ControlMessageOwned::ScmRights(fds) = c {
                    got.extend(ffi::received_fds(fds));
                }
            }
        }
        let t = tag[0];
        if t == EXEC_ANSWER {
            let answer = if self.lost.get() { LOST } else { TAKEN };
            let _ =
                nix::sys::socket::send(self.started.as_raw_fd(), &[answer], MsgFlags::MSG_NOSIGNAL);
        }
        self.tags.borrow_mut().push(t);
        self.fds
            .borrow_mut()
            .extend(got.into_iter().map(|fd| (t, fd)));
        Ok(Some(t))
    }

    /// The descriptors pinrun handed over with `tag` ([`hand_fds`]), in
    /// order; call after [`Helper::wait_for_exec`].
    pub fn take_fds(&self, tag: u8) -> Vec<OwnedFd> {
        let mut all = self.fds.borrow_mut();
        let (mine, rest): (Vec<_>, Vec<_>) = all.drain(..).partition(|(t, _)| *t == tag);
        *all = rest;
        mine.into_iter().map(|(_, fd)| fd).collect()
    }

    /// Waits up to `timeout_ms` for the target to end; true when it has.
    pub fn ended_within(&self, timeout_ms: i32) -> bool {
        ffi::poll_readable(self.target.as_fd(), timeout_ms).unwrap_or(true)
    }
}

/// Sends one message on the helper's socket `w`: `tag` and `fds`.
fn send(w: &OwnedFd, tag: u8, fds: &[RawFd]) -> io::Result<()> {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    let iov = [io::IoSlice::new(std::slice::from_ref(&tag))];
    let rights = [ControlMessage::ScmRights(fds)];
    let cmsgs: &[ControlMessage] = if fds.is_empty() { &[] } else { &rights };
    sendmsg::<()>(w.as_raw_fd(), &iov, cmsgs, MsgFlags::MSG_NOSIGNAL, None)?;
    Ok(())
}

/// Hands `fds` (opened by pinrun after the helper started: the watcher's
/// perf events and log) to the helper under `tag` ([`Helper::take_fds`]);
/// pinrun may close its own copies afterwards.
pub fn hand_fds(started_w: &OwnedFd, tag: u8, fds: &[RawFd]) -> io::Result<()> {
    for chunk in fds.chunks(FDS_PER_MESSAGE) {
        send(started_w, tag, chunk)?;
    }
    Ok(())
}

/// Tells the helper that every policy is applied and exec follows (its
/// end of file then comes with exec, which closes the close-on-exec
/// socket). After [`hand_fds`] (`handed`), waits for its answer that it
/// took every descriptor handed over: else the command would run without
/// them (the `--thread-map` watcher blind). Errors: the send's (EPIPE:
/// the helper has ended); EMFILE when the kernel dropped some for the
/// helper's open-files limit ([`LOST`]); EPIPE when it ended without an
/// answer.
pub fn about_to_exec(started_w: &OwnedFd, handed: bool) -> io::Result<()> {
    if !handed {
        return send(started_w, EXEC, &[]);
    }
    send(started_w, EXEC_ANSWER, &[])?;
    let mut answer = [0u8; 1];
    let n = loop {
        match nix::sys::socket::recv(
            started_w.as_raw_fd(),
            &mut answer,
            nix::sys::socket::MsgFlags::empty(),
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            r => break r?,
        }
    };
    match (n, answer[0]) {
        (1, TAKEN) => Ok(()),
        (1, LOST) => Err(io::Error::from_raw_os_error(libc::EMFILE)),
        _ => Err(io::Error::from_raw_os_error(libc::EPIPE)),
    }
}

/// Tells the helper that pinrun's work on another process (`--pid`) is
/// settled: verified, or put back by pinrun itself after a failure; its
/// undo ([`crate::pid::apply::undo`]) then does nothing. A message of
/// its own (`sendmsg(2)`, where the records are `send(2)`s: a tracer can
/// stop pinrun right before it, as the live test does).
pub fn settled(started_w: &OwnedFd) -> io::Result<()> {
    send(started_w, SETTLED, &[])
}

/// Starts the helper running `work` (its return value is the helper's exit
/// status), keeping `keep` open in it. Returns in pinrun once the
/// intermediate child is reaped; pinrun's end of the socket pair stays in
/// pinrun, close-on-exec. Errors are the failing system call's.
pub fn spawn(keep: &[RawFd], work: impl FnOnce(Helper) -> i32) -> io::Result<OwnedFd> {
    let target_pid = std::process::id();
    let target = ffi::pidfd_open(target_pid)?;
    let (started, started_w) = nix::sys::socket::socketpair(
        nix::sys::socket::AddressFamily::Unix,
        nix::sys::socket::SockType::SeqPacket,
        None,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
    )?;
    // The first child is waited for under the default SIGCHLD
    // (ffi::fork_detached): an ignored one (the kernel would reap it:
    // ECHILD) does not fail the launch, and the command inherits the
    // caller's action as under taskset.
    if !ffi::fork_detached()? {
        drop(started);
        drop(target);
        return Ok(started_w);
    }
    let mut kept: Vec<i32> = keep.to_vec();
    kept.extend([target.as_raw_fd(), started.as_raw_fd()]);
    // Born with the ending signals blocked (ffi::fork_detached): a Ctrl-C
    // or hang-up to pinrun's process group before `setsid` does not end
    // it with its undo undone. Out of the terminal's session, SIGINT,
    // SIGQUIT and SIGHUP go to the command, which the helper outlives by
    // at most one wait: those that came before are discarded, and they are
    // unblocked. SIGTERM (systemd stopping the unit's cgroup) stays
    // blocked, so the helper does its last duty after the command (module
    // doc). Its stderr stays pinrun's: what it could not undo is said there.
    ffi::loosen_detached(&kept, c"pinrun-helper", false);
    ffi::release_terminal_signals();
    let status = work(Helper {
        target_pid,
        target,
        started,
        exec: Cell::new(None),
        fds: RefCell::new(Vec::new()),
        tags: RefCell::new(Vec::new()),
        lost: Cell::new(false),
    });
    ffi::exit_now(status)
}

/// One duty of the helper: runs in the helper process with its [`Helper`]
/// and returns an exit status (0: done, or nothing to do). A duty returns
/// once the command has ended (or pinrun failed before exec).
pub type Duty = Box<dyn FnOnce(&Helper) -> i32>;

/// Starts one helper for a launch's duties (none: no helper, `Ok(None)`),
/// keeping `keep` open in it: `during`, the duty that works while the
/// command runs (the `--thread-map` watcher), then `after`, the one that
/// waits for the command's end (`--steer-irqs`' undo). Their order is in
/// the signature: a duty that waits for the end run first would leave the
/// other nothing to do. The helper exits with the larger status. Returns
/// pinrun's end of the socket pair, to keep open until exec and to pass
/// to [`hand_fds`] and [`about_to_exec`]. Errors are [`spawn`]'s.
pub fn spawn_duties(
    keep: &[RawFd],
    during: Option<Duty>,
    after: Option<Duty>,
) -> io::Result<Option<OwnedFd>> {
    if during.is_none() && after.is_none() {
        return Ok(None);
    }
    spawn(keep, move |h| {
        [during, after]
            .into_iter()
            .flatten()
            .map(|d| d(&h))
            .max()
            .unwrap_or(0)
    })
    .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Break test: the helper blocked SIGTERM after its fork, still in
    /// pinrun's process group, and left SIGINT and SIGHUP to their default
    /// until `setsid`: a Ctrl-C or a hang-up (or `timeout`'s SIGTERM) to
    /// the group then ended it with pinrun, the steering's undo undone.
    /// Forked with the ending signals blocked (`ffi::fork_detached`), it
    /// runs its work in its own session, named, with SIGTERM blocked and
    /// SIGINT, SIGHUP and SIGQUIT neither blocked nor pending (they go to
    /// the command, in the terminal's process group, not to it): the
    /// kernel's SigBlk and SigPnd/ShdPnd of its /proc/self/status.
    #[test]
    fn the_helper_runs_in_its_own_session_with_only_sigterm_blocked() {
        let dir = tempfile::tempdir().unwrap();
        let (tmp, done) = (dir.path().join("tmp"), dir.path().join("done"));
        let d = done.clone();
        let _started = spawn(&[], move |_| {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let me = nix::unistd::getpid();
            let own = nix::unistd::getsid(None).ok() == Some(me);
            let comm = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
            let _ = std::fs::write(&tmp, format!("{status}Own session: {own}\nComm: {comm}"));
            let _ = std::fs::rename(&tmp, &d);
            0
        })
        .unwrap();
        let t0 = std::time::Instant::now();
        while !done.exists() && t0.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let got = std::fs::read_to_string(&done).unwrap();
        let field = |name: &str| {
            got.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        let mask = |name: &str| u64::from_str_radix(&field(name), 16).unwrap();
        let bit = |sig: i32| 1u64 << (sig - 1);
        let term = bit(libc::SIGTERM);
        let ending = [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGTERM]
            .map(bit)
            .iter()
            .fold(0, |a, b| a | b);
        assert_eq!(mask("SigBlk:") & ending, term, "{got}");
        assert_eq!(mask("SigPnd:") & ending & !term, 0, "{got}");
        assert_eq!(mask("ShdPnd:") & ending & !term, 0, "{got}");
        assert_eq!(field("Own session:"), "true");
        assert_eq!(field("Comm:"), "pinrun-helper");
    }
}
