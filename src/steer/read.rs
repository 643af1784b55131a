//! What IRQ steering (`--steer-irqs`, issue 21) reads: every IRQ of
//! `/proc/irq` with its configured affinity (`smp_affinity_list`, what a
//! write replaces), its effective affinity, its node and name and whether
//! the kernel manages it, plus `default_smp_affinity`
//! (`Documentation/core-api/irq/irq-affinity.rst`); and the steering
//! journals of the state directory ([`crate::steer::Journal`]).

use crate::cpuset::CpuSet;
use crate::steer::{Journal, MAX_JOURNAL, journal_owner};
use crate::system::Root;
use crate::system::irq;
use crate::system::process::status_cpus_allowed;
use crate::system::state_dir::StateDir;
use crate::system::threads::stat_state;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::io::Read;

/// One IRQ as steering sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SteerIrq {
    /// The IRQ number.
    pub number: u32,
    /// Its device name: the last word of `/sys/kernel/irq/N/actions`
    /// (empty when it has no handler or no sysfs).
    pub name: String,
    /// `smp_affinity_list` (fallback `smp_affinity`): the CPUs asked for.
    pub affinity: Option<CpuSet>,
    /// `effective_affinity_list`: where it is delivered (x86: one CPU).
    pub effective: Option<CpuSet>,
    /// `/proc/irq/N/node`: the device's NUMA node (`-1` is none).
    pub node: Option<u32>,
    /// Kernel-managed (`IRQD_AFFINITY_MANAGED` in debugfs), when known.
    pub managed: Option<bool>,
    /// Without debugfs: whether the kernel keeps it where it is, by its
    /// answer to a test write ([`test_write`], [`crate::steer::kernel_keeps`]);
    /// `None` when not asked (a dump, not root, debugfs answered, not on a
    /// claimed CPU).
    pub kernel_keeps: Option<bool>,
    /// Its interrupt chip (`/sys/kernel/irq/N/chip_name`: `PCI-MSI`,
    /// `IR-PCI-MSIX-0000:01:00.0`, `IO-APIC`), read with [`test_write`]'s
    /// answer.
    pub chip: Option<String>,
}

/// Every IRQ of `/proc/irq` below `root` and the default affinity of new
/// IRQs (`/proc/irq/default_smp_affinity`, a cpumask).
pub fn read_irqs(root: &Root) -> (Vec<SteerIrq>, Option<CpuSet>) {
    let debug = root.dir(irq::DEBUG_IRQS);
    let list = root
        .numbered_entries(irq::PROC_IRQ, "")
        .into_iter()
        .map(|n| {
            let name = root
                .read_value(&format!("/sys/kernel/irq/{n}/actions"))
                .and_then(|a| a.split(',').next_back().map(|s| s.trim().to_string()))
                .unwrap_or_default();
            SteerIrq {
                number: n,
                name,
                affinity: irq::read_requested(root, n),
                effective: irq::read_effective(root, n),
                node: irq::read_node(root, n),
                managed: irq::managed(debug.as_ref(), n),
                kernel_keeps: None,
                chip: None,
            }
        })
        .collect();
    (list, irq::read_default(root))
}

/// A journal file of the state directory, read.
#[derive(Debug, Clone)]
pub struct JournalFile {
    /// Its file name.
    pub name: String,
    /// The journal, or why it cannot be used (not a regular file, a
    /// symbolic link, too large, corrupt).
    pub journal: Result<Journal, String>,
    /// The uid owning it when that is not root: another user's file, not
    /// pinrun's (steering needs root; any other owner could forge
    /// restores). Ignored by the undo, named in one summary line.
    pub foreign: Option<u32>,
}

/// Every steering journal in `dir` (names of [`crate::steer::journal_name`]'s
/// shape), sorted by name. A journal must be a regular file owned by root
/// (steering needs root; any other owner could forge restores) of at most
/// [`MAX_JOURNAL`] bytes.
pub fn read_journals(dir: &StateDir) -> Vec<JournalFile> {
    let Ok(mut d) = nix::dir::Dir::openat(
        dir.fd(),
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    let mut names: Vec<String> = d
        .iter()
        .flatten()
        .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
        .filter(|n| journal_owner(n).is_some())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            // The file itself (a symbolic link is not followed): its
            // owner decides whether it is pinrun's at all.
            let owner = nix::sys::stat::fstatat(
                dir.fd(),
                name.as_str(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            )
            .ok()
            .map(|st| st.st_uid);
            let foreign = owner.filter(|u| *u != 0);
            let journal = read_journal(dir, &name);
            JournalFile {
                name,
                journal,
                foreign,
            }
        })
        .collect()
}

fn read_journal(dir: &StateDir, name: &str) -> Result<Journal, String> {
    let fd = nix::fcntl::openat(
        dir.fd(),
        name,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    // O_NOFOLLOW on a symbolic link fails with ELOOP (open(2)).
    .map_err(|e| match e {
        nix::errno::Errno::ELOOP => "is a symbolic link".to_string(),
        e => e.desc().to_string(),
    })?;
    let st = nix::sys::stat::fstat(&fd).map_err(|e| e.desc().to_string())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("not a regular file".into());
    }
    if st.st_uid != 0 {
        return Err(format!("owned by uid {}, not root", st.st_uid));
    }
    if st.st_size as u64 > MAX_JOURNAL as u64 {
        return Err(format!("{} bytes, more than {MAX_JOURNAL}", st.st_size));
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(MAX_JOURNAL as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| crate::error::io_words(&e))?;
    Journal::parse(&text)
}

/// Asks the live kernel whether it keeps IRQ `n` where it is: writes
/// [`crate::steer::TEST_WRITE`] (not a cpulist) to
/// `/proc/irq/N/smp_affinity_list`, which changes nothing (the kernel
/// refuses it with EIO before parsing when it keeps the IRQ, else with the
/// parser's EINVAL); read it with [`crate::steer::kernel_keeps`]. Live
/// machine only, never below `--sysroot` (a dump's files are data); the
/// open needs root (EACCES otherwise).
pub fn test_write(n: u32) -> Result<(), nix::errno::Errno> {
    let fd = nix::fcntl::open(
        format!("/proc/irq/{n}/smp_affinity_list").as_str(),
        OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    nix::unistd::write(&fd, crate::steer::TEST_WRITE.as_bytes()).map(|_| ())
}

/// `/sys/kernel/irq/N/chip_name` below `root`: the IRQ's interrupt chip.
pub fn chip_name(root: &Root, n: u32) -> Option<String> {
    root.read_value(&format!("/sys/kernel/irq/{n}/chip_name"))
}

/// The online CPUs (`/sys/devices/system/cpu/online`), read again after
/// an EINVAL (a CPU went offline).
pub fn read_online(root: &Root) -> Option<CpuSet> {
    root.read_list("/sys/devices/system/cpu/online")
}

/// The PIDs of running irqbalance daemons (`/proc/PID/comm` is
/// `irqbalance`, not a zombie, run by root: real and effective uid 0 in
/// `/proc/PID/status` `Uid:`), each with its control socket when it has one
/// (`/run/irqbalance/irqbalance<PID>.sock`, irqbalance's `ui/`). A process
/// of another user named `irqbalance` is not one: only root can change an
/// IRQ's affinity, and any user can name a process so.
pub fn irqbalance(root: &Root) -> Vec<(u32, Option<std::path::PathBuf>)> {
    root.numbered_entries("/proc", "")
        .into_iter()
        .filter(|pid| {
            root.read_value(&format!("/proc/{pid}/comm")).as_deref() == Some("irqbalance")
                && crate::system::threads::uids(root, *pid) == Some((0, 0))
                // A zombie (state Z, field 3 of /proc/PID/stat) has ended.
                && root
                    .read(&format!("/proc/{pid}/stat"))
                    .and_then(|st| stat_state(&st))
                    != Some('Z')
        })
        .map(|pid| {
            let sock = format!("/run/irqbalance/irqbalance{pid}.sock");
            (pid, root.exists(&sock).then(|| root.path(&sock)))
        })
        .collect()
}

/// The threaded handlers of IRQ `n` (kernel threads named `irq/N-…`) with
/// their `Cpus_allowed_list`: they follow the IRQ's affinity when it next
/// fires (`irq_thread_check_affinity()`).
pub fn irq_threads(root: &Root, n: u32) -> Vec<(u32, Option<CpuSet>)> {
    let prefix = format!("irq/{n}-");
    root.numbered_entries("/proc", "")
        .into_iter()
        .filter(|pid| {
            root.read_value(&format!("/proc/{pid}/comm"))
                .is_some_and(|c| c.starts_with(&prefix))
        })
        .map(|pid| {
            let allowed = root
                .read(&format!("/proc/{pid}/status"))
                .and_then(|s| status_cpus_allowed(&s));
            (pid, allowed)
        })
        .collect()
}

/// Whether this process may write `/proc/irq/default_smp_affinity`:
/// `faccessat(2)` with `AT_EACCESS`, so judged by the effective uid, gid
/// and capabilities as `open(2)` would (the kernel's `do_faccessat()`
/// otherwise switches to the real ids and drops the capabilities of a
/// non-root real user: uid 65534 with CAP_DAC_OVERRIDE may open the file
/// for writing, but `access(2)` says no). `Err(errno)` when not. The
/// launch still opens every file before writing; this lets `--dry-run`
/// predict its refusal.
pub fn irq_writable() -> Result<(), nix::errno::Errno> {
    nix::unistd::faccessat(
        nix::fcntl::AT_FDCWD,
        "/proc/irq/default_smp_affinity",
        nix::unistd::AccessFlags::W_OK,
        nix::fcntl::AtFlags::AT_EACCESS,
    )
}

/// The hint of a refusal to write `/proc/irq`: the files are root's,
/// mode 0644 (`proc_create_data("smp_affinity", 0644, …)` and
/// `proc_create("default_smp_affinity", 0644, …)` in kernel/irq/proc.c),
/// so writing them takes uid 0 or CAP_DAC_OVERRIDE.
pub const NOT_PERMITTED_HINT: &str = "/proc/irq/*/smp_affinity_list and default_smp_affinity are root's, mode 0644: run as root (or with CAP_DAC_OVERRIDE), or drop --steer-irqs";

/// Sends `command` to irqbalance's control socket `path` in one message
/// with this process's `SCM_CREDENTIALS` (irqbalance answers uid 0 only:
/// `sock_handle()`), and reads until it closes the connection: its reply
/// to `setup` (a `settings …` gets none, and its close says the command
/// was taken), at most [`crate::steer::IRQBALANCE_MAX_REPLY`] bytes. One
/// exchange at a time, each whole before the next: the connect, the send
/// and the reply together take at most `within`
/// ([`crate::steer::answer_within`] of its interval).
///
/// irqbalance writes its reply with `send()` without `MSG_NOSIGNAL` and
/// does not ignore SIGPIPE: a connection closed before the reply is
/// written kills the daemon; and it reads the command with a blocking
/// `recvmsg` right after `accept`, so a connection that stays open with
/// nothing sent hangs it. So the connection is written and read by a
/// process of its own ([`read_detached`]), which sends the command itself:
/// whatever happens to pinrun once it is forked (no answer within
/// `within`, a reply too long, SIGTERM, or SIGKILL, which no mask defers),
/// the command is sent whole and the reply finds its reader, which
/// forwards it to pinrun while pinrun listens.
/// Errors: the step that failed and its errno (ECONNREFUSED: the daemon is
/// gone; a connect that times out: its backlog is full; the fork of the
/// reader: nothing was sent), no answer in time, or a reply too long or
/// not UTF-8. A `settings` command is a change: [`crate::steer::apply`]
/// sends them; `setup` only reads.
pub fn irqbalance_exchange(
    path: &std::path::Path,
    command: &str,
    within: std::time::Duration,
) -> Result<String, String> {
    use nix::sys::socket::{
        AddressFamily, SockFlag, SockType, UnixAddr, connect, setsockopt, socket, sockopt,
    };
    use std::os::fd::{AsFd, AsRawFd};
    if command.len() > crate::steer::IRQBALANCE_MAX_COMMAND {
        return Err(format!("command of {} bytes is too long", command.len()));
    }
    let deadline = std::time::Instant::now() + within;
    let fd = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| format!("socket: {}", e.desc()))?;
    let tv = nix::sys::time::TimeVal::new(within.as_secs() as _, within.subsec_micros() as _);
    // SO_SNDTIMEO bounds a connect to a full backlog
    // (unix_stream_connect() waits sk_sndtimeo) and the send.
    setsockopt(&fd, sockopt::SendTimeout, &tv).map_err(|e| format!("SO_SNDTIMEO: {}", e.desc()))?;
    let addr = UnixAddr::new(path).map_err(|e| format!("address: {}", e.desc()))?;
    connect(fd.as_raw_fd(), &addr).map_err(|e| match e {
        nix::errno::Errno::EAGAIN => format!(
            "connect: its backlog stayed full for {} (it serves no connection)",
            seconds(within)
        ),
        e => format!("connect: {}", e.desc()),
    })?;
    // Closed with nothing sent, the connection costs irqbalance nothing;
    // the reader sends the command (`read_detached`), never pinrun.
    let reply = read_detached(fd.as_fd(), command.as_bytes()).map_err(|e| format!("fork: {e}"))?;
    drop(fd);
    collect_reply(&reply, deadline, within, command.len())
}

/// Sends `command` on `conn` in one message with this process's
/// `SCM_CREDENTIALS` (`unix(7)`: the kernel checks the PID is the
/// sender's): the number of bytes sent.
fn send_command(conn: std::os::fd::BorrowedFd<'_>, command: &[u8]) -> nix::Result<usize> {
    use nix::sys::socket::{ControlMessage, MsgFlags, UnixCredentials, sendmsg};
    use std::os::fd::AsRawFd;
    let creds = UnixCredentials::new();
    let iov = [std::io::IoSlice::new(command)];
    sendmsg::<()>(
        conn.as_raw_fd(),
        &iov,
        &[ControlMessage::ScmCredentials(&creds)],
        MsgFlags::MSG_NOSIGNAL,
        None,
    )
}

/// The tag of a message of [`read_detached`]'s reader carrying reply bytes.
const REPLY_DATA: u8 = b'D';

/// The tag of its last message when reading the connection failed: the
/// errno follows, 4 bytes in native order.
const REPLY_ERROR: u8 = b'E';

/// The tag of its only message when sending the command failed (nothing
/// sent: it then closes the connection): the errno follows, as above.
const SEND_ERROR: u8 = b'S';

/// The tag of its message when only part of the command was sent: the
/// count follows, 4 bytes in native order; it then reads on.
const SEND_SHORT: u8 = b'P';

/// Forks the reader of the connection `conn` ([`crate::ffi::fork_detached`]:
/// pinrun keeps no child; named `pinrun-drain`, its own session, every
/// other descriptor closed, stdio on `/dev/null`, in `/`, the ending
/// signals blocked: systemd stopping
/// the unit's cgroup does not close the connection unread). It sends
/// `command` ([`send_command`]; nothing sent: it closes the connection,
/// [`SEND_ERROR`]; part of it: [`SEND_SHORT`]), reads `conn` until
/// irqbalance closes it and forwards each read to pinrun over a
/// `SOCK_SEQPACKET` pair ([`REPLY_DATA`], [`REPLY_ERROR`]; end of file
/// when it is done), and goes on reading, forwarding nothing, once pinrun
/// no longer listens. The reader sends, not pinrun: irqbalance reads a
/// connection with a blocking `recvmsg` right after `accept`
/// (`sock_handle()`), so a connection held open by a reader with nothing
/// ever sent on it (pinrun ended between the fork and its send) hung the
/// daemon. Returns pinrun's end of the pair. Errors: the socket pair's or
/// the fork's (nothing sent).
fn read_detached(
    conn: std::os::fd::BorrowedFd<'_>,
    command: &[u8],
) -> Result<std::os::fd::OwnedFd, String> {
    use nix::sys::socket::{AddressFamily, MsgFlags, SockFlag, SockType, send, socketpair};
    use std::os::fd::AsRawFd;
    let (mine, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| e.desc().to_string())?;
    if !crate::ffi::fork_detached().map_err(|e| crate::error::io_words(&e))? {
        return Ok(mine);
    }
    // Born with the ending signals blocked (`fork_detached`: a Ctrl-C to
    // pinrun's process group before `setsid` would otherwise leave the
    // reply unread), and they stay blocked. It writes nothing and may
    // outlive pinrun by a rescan or a stopped daemon: pinrun's stdio and
    // directory held open meanwhile keep a pipe reader of pinrun's output
    // waiting and the directory's mount busy.
    crate::ffi::loosen_detached(
        &[conn.as_raw_fd(), theirs.as_raw_fd()],
        c"pinrun-drain",
        true,
    );
    let _ = nix::unistd::chdir(c"/");
    let mut listening = true;
    match send_command(conn, command) {
        Ok(n) if n == command.len() => {}
        Ok(n) => {
            let mut msg = [SEND_SHORT, 0, 0, 0, 0];
            msg[1..].copy_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_ne_bytes());
            listening = send(theirs.as_raw_fd(), &msg, MsgFlags::MSG_NOSIGNAL).is_ok();
        }
        Err(e) => {
            let mut msg = [SEND_ERROR, 0, 0, 0, 0];
            msg[1..].copy_from_slice(&(e as i32).to_ne_bytes());
            let _ = send(theirs.as_raw_fd(), &msg, MsgFlags::MSG_NOSIGNAL);
            crate::ffi::exit_now(0)
        }
    }
    let mut buf = [0u8; 4097];
    buf[0] = REPLY_DATA;
    loop {
        let n = match nix::unistd::read(conn, &mut buf[1..]) {
            Ok(0) => break,
            Ok(n) => n + 1,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => {
                let mut msg = [REPLY_ERROR, 0, 0, 0, 0];
                msg[1..].copy_from_slice(&(e as i32).to_ne_bytes());
                let _ = listening && send(theirs.as_raw_fd(), &msg, MsgFlags::MSG_NOSIGNAL).is_ok();
                break;
            }
        };
        listening =
            listening && send(theirs.as_raw_fd(), &buf[..n], MsgFlags::MSG_NOSIGNAL).is_ok();
    }
    crate::ffi::exit_now(0)
}

/// The reply [`read_detached`]'s reader forwards on `from`, until its end
/// or `deadline` (`within` after the exchange began: the error says it);
/// `command_len`: the bytes it was to send.
fn collect_reply(
    from: &std::os::fd::OwnedFd,
    deadline: std::time::Instant,
    within: std::time::Duration,
    command_len: usize,
) -> Result<String, String> {
    use std::os::fd::AsFd;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4097];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        match crate::ffi::poll_readable(from.as_fd(), ms) {
            Ok(true) => {}
            Ok(false) => {
                return Err(format!(
                    "no answer in {} (its rebalance pass holds its socket, or it is stopped)",
                    seconds(within)
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reply: poll: {}", crate::error::io_words(&e))),
        }
        let n = match nix::unistd::read(from, &mut buf) {
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => continue,
            Err(e) => return Err(format!("reply: {}", e.desc())),
        };
        match buf[..n] {
            [] => break,
            [REPLY_DATA, ref data @ ..] => {
                reply.extend_from_slice(data);
                if reply.len() > crate::steer::IRQBALANCE_MAX_REPLY {
                    return Err(format!(
                        "reply: more than {} bytes",
                        crate::steer::IRQBALANCE_MAX_REPLY
                    ));
                }
            }
            [REPLY_ERROR, a, b, c, d] => {
                let errno = nix::errno::Errno::from_raw(i32::from_ne_bytes([a, b, c, d]));
                return Err(format!("reply: {}", errno.desc()));
            }
            [SEND_ERROR, a, b, c, d] => {
                let errno = nix::errno::Errno::from_raw(i32::from_ne_bytes([a, b, c, d]));
                return Err(format!("send: {}", errno.desc()));
            }
            [SEND_SHORT, a, b, c, d] => {
                let sent = u32::from_ne_bytes([a, b, c, d]);
                return Err(format!("send: {sent} of {command_len} bytes"));
            }
            _ => return Err("reply: its reader sent a malformed message".into()),
        }
    }
    String::from_utf8(reply).map_err(|_| "reply: not UTF-8".into())
}

/// `d` in seconds for a message: "13 s", "0.3 s".
fn seconds(d: std::time::Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// irqbalance's `setup` through `socket`, answered within `within`
/// ([`irqbalance_exchange`]), parsed ([`crate::steer::parse_setup`]).
pub fn irqbalance_setup(
    socket: &std::path::Path,
    within: std::time::Duration,
) -> Result<crate::steer::IrqbalanceSetup, String> {
    let reply = irqbalance_exchange(socket, "setup", within)?;
    crate::steer::parse_setup(&reply).map_err(|e| format!("its setup reply: {e}"))
}

/// irqbalance `pid`'s rebalance interval from its command line
/// (`/proc/PID/cmdline` below `root`, [`crate::steer::irqbalance_interval`]):
/// what bounds the first exchange with it, before its `setup` reply says.
pub fn irqbalance_interval(root: &Root, pid: u32) -> u32 {
    let argv: Vec<String> = root
        .read(&format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split('\0')
        .skip(1)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .collect();
    crate::steer::irqbalance_interval(&argv)
}

/// What irqbalance `pid` bans on its own, as `cputree.c`
/// `setup_banned_cpus()` decides without a ban set through its socket:
/// `IRQBALANCE_BANNED_CPUS` (a hex mask, deprecated) when set and not
/// empty, else `IRQBALANCE_BANNED_CPULIST` when set (even empty), else
/// `/sys/devices/system/cpu/isolated` ∪ `nohz_full`; from its environment
/// (`/proc/PID/environ`, as it started). `None` when unreadable. An empty
/// `IRQBALANCE_BANNED_CPULIST` bans no CPU in irqbalance after 1.9.5
/// (commit 8929e4d) but means "unset" up to 1.9.5: read as the former, a
/// guess that is wrong for those only makes a restore send the list instead of
/// `NULL` (the same CPUs), never another ban.
pub fn irqbalance_default_ban(root: &Root, pid: u32) -> Option<CpuSet> {
    let env = irqbalance_environ(root, pid)?;
    let var = |name: &str| environ_value(&env, name);
    if let Some(m) = var("IRQBALANCE_BANNED_CPUS").filter(|m| !m.is_empty()) {
        return CpuSet::parse_sysfs_mask(&m).ok();
    }
    if let Some(l) = var("IRQBALANCE_BANNED_CPULIST") {
        return CpuSet::parse_sysfs_list(&l, None).ok();
    }
    let read = |f: &str| {
        root.read_list(&format!("/sys/devices/system/cpu/{f}"))
            .unwrap_or_default()
    };
    Some(read("isolated").union(&read("nohz_full")))
}

/// Process `pid`'s environment as it started (`/proc/PID/environ`, NUL
/// separated); `None` when unreadable or larger than
/// [`crate::system::root::MAX_FILE`] (its size is the process's).
pub fn irqbalance_environ(root: &Root, pid: u32) -> Option<Vec<u8>> {
    let mut env = Vec::new();
    let max = crate::system::root::MAX_FILE;
    root.open_file_unnoted(&format!("/proc/{pid}/environ"))?
        .take(max + 1)
        .read_to_end(&mut env)
        .ok()?;
    (env.len() as u64 <= max).then_some(env)
}

/// The value of `name` in an environment block `env` (`/proc/PID/environ`).
pub fn environ_value(env: &[u8], name: &str) -> Option<String> {
    env.split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('=').map(str::to_string))
}

/// The systemd unit that runs irqbalance in every packaging (upstream's
/// `misc/irqbalance.service.in`, Debian, RHEL/Fedora).
pub const IRQBALANCE_UNIT: &str = "irqbalance.service";

/// Whether systemd runs this machine (`/run/systemd/system` below `root`
/// is a directory: `sd_booted(3)`).
pub fn systemd_booted(root: &Root) -> bool {
    root.is_dir("/run/systemd/system")
}

/// `systemctl` with `args` (the first `systemctl` on `PATH`, as an
/// administrator's shell runs it; stdin null); its stdout, or why it
/// failed (the exit status and its stderr's first line).
pub fn systemctl(args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("systemctl")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            format!(
                "systemctl {}: {}",
                args.join(" "),
                crate::error::io_words(&e)
            )
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "systemctl {}: {}{}",
            args.join(" "),
            out.status,
            err.lines()
                .next()
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// irqbalance.service as systemd runs it: `systemctl show -p MainPID -p
/// ActiveState -p EnvironmentFiles irqbalance.service` (drop-ins
/// included), parsed by [`crate::steer::parse_unit_show`].
pub fn irqbalance_unit() -> Result<crate::steer::UnitShow, String> {
    systemctl(&[
        "show",
        "-p",
        "MainPID",
        "-p",
        "ActiveState",
        "-p",
        "EnvironmentFiles",
        IRQBALANCE_UNIT,
    ])
    .map(|t| crate::steer::parse_unit_show(&t))
}

/// The bytes of irqbalance's configuration file `path` (at most
/// [`crate::steer::MAX_CONFIG`], UTF-8); errors name the cause.
pub fn read_config(path: &std::path::Path) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| crate::error::io_words(&e))?;
    let mut b = Vec::new();
    f.take(crate::steer::MAX_CONFIG as u64 + 1)
        .read_to_end(&mut b)
        .map_err(|e| crate::error::io_words(&e))?;
    if b.len() > crate::steer::MAX_CONFIG {
        return Err(format!("larger than {} bytes", crate::steer::MAX_CONFIG));
    }
    String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: std::time::Duration = std::time::Duration::from_secs(1);

    fn serve(
        reply: Vec<u8>,
    ) -> (
        std::path::PathBuf,
        std::thread::JoinHandle<(String, Option<u32>)>,
    ) {
        crate::testkit::irqbalance_server(reply)
    }

    #[test]
    fn exchange_sends_one_message_with_credentials_and_reads_the_reply() {
        let (path, h) = serve(b"SLEEP 10 BANNED 0000f0f0".to_vec());
        let s = irqbalance_setup(&path, SECOND).unwrap();
        assert_eq!(s.banned.to_list(), "4-7,12-15");
        let (got, uid) = h.join().unwrap();
        assert_eq!(got, "setup");
        assert_eq!(uid, Some(nix::unistd::getuid().as_raw()));
        // A settings command: irqbalance closes without a reply.
        let (path, h) = serve(Vec::new());
        assert_eq!(
            irqbalance_exchange(&path, "settings cpus 4-7,16", SECOND).unwrap(),
            ""
        );
        assert_eq!(h.join().unwrap().0, "settings cpus 4-7,16");
    }

    #[test]
    fn exchange_bounds_hostile_replies() {
        let (path, h) = serve(vec![b'A'; crate::steer::IRQBALANCE_MAX_REPLY + 4096]);
        let e = irqbalance_exchange(&path, "setup", SECOND).unwrap_err();
        assert!(e.contains("more than"), "{e}");
        let _ = h.join();
        let (path, h) = serve(vec![0xff, 0xfe]);
        assert_eq!(
            irqbalance_exchange(&path, "setup", SECOND).unwrap_err(),
            "reply: not UTF-8"
        );
        let _ = h.join();
        // Not listening: refused at connect, nothing else tried.
        let e = irqbalance_exchange(
            std::path::Path::new("/nonexistent/irqbalance1.sock"),
            "setup",
            SECOND,
        )
        .unwrap_err();
        assert!(e.starts_with("connect: "), "{e}");
        assert!(
            irqbalance_exchange(&path, &"x".repeat(500), SECOND)
                .unwrap_err()
                .contains("too long")
        );
    }

    /// Issue 33 item 3: a `setup` irqbalance answers late (1.9.2 holds
    /// its socket for a whole interval while it rescans) was closed
    /// unread after 3 s, and irqbalance died of SIGPIPE writing the reply.
    /// Now the exchange gives up after its bound but the connection stays
    /// open in a process of its own until the reply is read: the daemon's
    /// send succeeds. A `settings` command that is taken (closed without a
    /// reply) is answered by its close.
    #[test]
    fn an_unanswered_setup_is_never_closed_unread() {
        use std::io::{Read, Write};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("irqbalance1.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 500];
            let n = s.read(&mut buf).unwrap();
            // The rescan's sleep: the client has given up meanwhile.
            std::thread::sleep(std::time::Duration::from_millis(1200));
            let sent = nix::sys::socket::send(
                std::os::fd::AsRawFd::as_raw_fd(&s),
                b"SLEEP 10 BANNED 00000000",
                nix::sys::socket::MsgFlags::MSG_NOSIGNAL,
            );
            let _ = s.flush();
            (String::from_utf8_lossy(&buf[..n]).to_string(), sent)
        });
        let t0 = std::time::Instant::now();
        let e =
            irqbalance_exchange(&path, "setup", std::time::Duration::from_millis(300)).unwrap_err();
        assert!(e.starts_with("no answer in 0.3 s"), "{e}");
        assert!(t0.elapsed() < std::time::Duration::from_millis(1000));
        let (got, sent) = h.join().unwrap();
        assert_eq!(got, "setup");
        assert_eq!(sent, Ok(24), "the daemon's reply must find its reader");
    }

    /// CI (`.ci/run`, the VM's steer-irqbalance-bookworm at
    /// `after-kill-ban-KILL`): pinrun killed by SIGKILL in its ban wait,
    /// in the middle of a `setup`, took the connection with it, and
    /// irqbalance 1.9.2 died of SIGPIPE writing the reply. SIGKILL cannot
    /// be deferred, so the connection has a reader of its own, forked
    /// before the send: here the client is killed after its command
    /// arrived and before the reply, and the daemon's send succeeds.
    #[test]
    fn a_client_killed_mid_exchange_leaves_the_reply_a_reader() {
        use std::io::Read;
        use std::os::fd::AsFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("irqbalance1.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let client = match crate::ffi::fork().unwrap() {
            0 => {
                let _ = irqbalance_exchange(&path, "setup", std::time::Duration::from_secs(10));
                crate::ffi::exit_now(0)
            }
            pid => nix::unistd::Pid::from_raw(pid),
        };
        assert!(
            crate::ffi::poll_readable(l.as_fd(), 10_000).unwrap(),
            "no connect"
        );
        let (mut s, _) = l.accept().unwrap();
        let mut buf = [0u8; 500];
        let n = s.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"setup");
        nix::sys::signal::kill(client, nix::sys::signal::Signal::SIGKILL).unwrap();
        assert_eq!(
            nix::sys::wait::waitpid(client, None).unwrap(),
            nix::sys::wait::WaitStatus::Signaled(client, nix::sys::signal::Signal::SIGKILL, false)
        );
        let sent = nix::sys::socket::send(
            std::os::fd::AsRawFd::as_raw_fd(&s),
            b"SLEEP 10 BANNED 00000000",
            nix::sys::socket::MsgFlags::MSG_NOSIGNAL,
        );
        assert_eq!(sent, Ok(24), "the daemon's reply must find its reader");
    }

    /// In a forked client: SIGINT, SIGTERM and SIGHUP at their default
    /// action, ending it, as in pinrun run from a terminal. A harness may
    /// start the tests with SIGINT ignored (a shell's background job),
    /// which the fork inherits: the client then outlived the signal the
    /// test sends and waited out its 10 s exchange, each round.
    fn default_ending_signals() {
        use nix::sys::signal::Signal;
        for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            crate::ffi::default_disposition(sig);
        }
    }

    /// Break test: the reply's reader blocked the ending signals with its
    /// first instruction after the fork, still in pinrun's process group;
    /// a Ctrl-C to the group once the command was sent ended the
    /// reader with pinrun, and irqbalance's reply found no reader (it dies
    /// of SIGPIPE): 11 of 200 here, 1 of 200 on one CPU; 0 of 400 since
    /// the reader is forked with them blocked
    /// (`ffi::tests::a_detached_process_is_born_with_the_ending_signals_blocked`
    /// holds the cause for any detached process). Each client here is the
    /// leader of its own group and gets SIGINT the moment its command
    /// arrives.
    #[test]
    fn a_sigint_to_the_clients_group_leaves_the_reply_a_reader() {
        use std::io::Read;
        use std::os::fd::AsFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("irqbalance1.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let n = 40;
        let mut unread = 0;
        for _ in 0..n {
            let client = match crate::ffi::fork().unwrap() {
                0 => {
                    let _ = nix::unistd::setpgid(
                        nix::unistd::Pid::from_raw(0),
                        nix::unistd::Pid::from_raw(0),
                    );
                    default_ending_signals();
                    let _ = irqbalance_exchange(&path, "setup", std::time::Duration::from_secs(10));
                    crate::ffi::exit_now(0)
                }
                pid => nix::unistd::Pid::from_raw(pid),
            };
            assert!(crate::ffi::poll_readable(l.as_fd(), 10_000).unwrap());
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 500];
            let k = s.read(&mut buf).unwrap();
            assert_eq!(&buf[..k], b"setup");
            let _ = nix::sys::signal::killpg(client, nix::sys::signal::Signal::SIGINT);
            let _ = nix::sys::wait::waitpid(client, None);
            std::thread::sleep(std::time::Duration::from_millis(20));
            let sent = nix::sys::socket::send(
                std::os::fd::AsRawFd::as_raw_fd(&s),
                b"SLEEP 10 BANNED 00000000",
                nix::sys::socket::MsgFlags::MSG_NOSIGNAL,
            );
            if sent != Ok(24) {
                unread += 1;
            }
        }
        assert_eq!(unread, 0, "replies with no reader, of {n}");
    }

    /// Break test: irqbalance reads a connection's command with a
    /// blocking `recvmsg` right after `accept` (`sock_handle()`), and the
    /// reply's reader, forked before pinrun sent its command, held the
    /// connection open: pinrun ended between that fork and its send (a
    /// SIGKILL, or an ending signal deferred by the fork and delivered
    /// right after it) left a connection on which nothing would ever come
    /// and that nobody would close, and irqbalance hung in `recvmsg`
    /// (its main loop, its balancing and its own SIGTERM handling with
    /// it). Here each client is killed at a moment from its connect to
    /// just after its fork, and the stand-in daemon's blocking read must
    /// see the whole command or the end of file, within 2 s.
    #[test]
    fn a_client_killed_before_its_command_never_leaves_the_daemon_waiting() {
        use std::io::Read;
        use std::os::fd::AsFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("irqbalance1.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let mut stuck = Vec::new();
        for round in 0..60u32 {
            let client = match crate::ffi::fork().unwrap() {
                0 => {
                    default_ending_signals();
                    let _ = irqbalance_exchange(&path, "setup", std::time::Duration::from_secs(10));
                    crate::ffi::exit_now(0)
                }
                pid => nix::unistd::Pid::from_raw(pid),
            };
            assert!(crate::ffi::poll_readable(l.as_fd(), 10_000).unwrap());
            let (mut s, _) = l.accept().unwrap();
            // From at once to ~1.5 ms: before, across and after the fork.
            std::thread::sleep(std::time::Duration::from_micros(u64::from(round % 20) * 75));
            let signal = if round % 2 == 0 {
                nix::sys::signal::Signal::SIGKILL
            } else {
                nix::sys::signal::Signal::SIGINT
            };
            let _ = nix::sys::signal::kill(client, signal);
            let _ = nix::sys::wait::waitpid(client, None);
            s.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                .unwrap();
            let mut buf = [0u8; 64];
            match s.read(&mut buf) {
                Ok(0) => {}
                Ok(n) => assert_eq!(&buf[..n], b"setup", "round {round}"),
                Err(e) => stuck.push(format!("round {round} ({signal:?}): {e}")),
            }
        }
        assert_eq!(
            stuck,
            Vec::<String>::new(),
            "connections left open with nothing sent"
        );
    }

    /// Break test: the drain kept pinrun's stdin, stdout, stderr and
    /// directory: while irqbalance held the connection (a rescan, or
    /// stopped), `pinrun … | tee` and `$(pinrun …)` waited for the drain,
    /// not for pinrun. Every live drain of this binary (named once its
    /// setup is done) holds `/dev/null` on 0-2, its two sockets and
    /// nothing else, in `/`.
    #[test]
    fn a_drain_holds_only_its_sockets_and_dev_null() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("irqbalance1.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 500];
            let _ = s.read(&mut buf).unwrap();
            // Held open, unanswered, until the drain has been looked at.
            let _ = rx.recv();
        });
        let e =
            irqbalance_exchange(&path, "setup", std::time::Duration::from_millis(200)).unwrap_err();
        assert!(e.starts_with("no answer in 0.2 s"), "{e}");
        let me = std::env::current_exe().unwrap();
        let mut drains = 0;
        for p in std::fs::read_dir("/proc").unwrap().flatten() {
            let p = p.path();
            let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
            if comm.trim_end() != "pinrun-drain"
                || std::fs::read_link(p.join("exe")).ok().as_ref() != Some(&me)
            {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(p.join("fd")) else {
                continue; // ended meanwhile
            };
            let mut fds: Vec<(u32, String)> = fds
                .flatten()
                .map(|f| {
                    let n = f.file_name().to_string_lossy().parse().unwrap();
                    let to = std::fs::read_link(f.path()).unwrap_or_default();
                    (n, to.to_string_lossy().into_owned())
                })
                .collect();
            fds.sort();
            let null: Vec<_> = fds.iter().filter(|(n, _)| *n < 3).collect();
            assert_eq!(
                null,
                [0, 1, 2]
                    .map(|n| (n, "/dev/null".to_string()))
                    .iter()
                    .collect::<Vec<_>>(),
                "{p:?}"
            );
            let rest: Vec<_> = fds.iter().filter(|(n, _)| *n >= 3).collect();
            assert_eq!(rest.len(), 2, "{p:?}: {fds:?}");
            assert!(
                rest.iter().all(|(_, to)| to.starts_with("socket:[")),
                "{fds:?}"
            );
            assert_eq!(
                std::fs::read_link(p.join("cwd")).unwrap(),
                std::path::Path::new("/")
            );
            drains += 1;
        }
        assert!(drains >= 1, "the held connection's drain was not found");
        tx.send(()).unwrap();
        h.join().unwrap();
    }

    /// Break test: any user's process named `irqbalance` (`cp /bin/sleep
    /// /tmp/x/irqbalance` run as nobody) made every root `--steer-irqs`
    /// refuse. Only a root-owned one (real and effective uid 0) is the
    /// daemon; a zombie is not either.
    #[test]
    fn only_root_owned_irqbalance_counts() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        for (pid, uid, state) in [
            (10, "0\t0\t0\t0", 'S'),
            (11, "65534\t65534\t65534\t65534", 'S'),
            (12, "1000\t0\t0\t0", 'S'),
            (13, "0\t1000\t1000\t1000", 'S'),
            (14, "0\t0\t0\t0", 'Z'),
        ] {
            let p = d.join(format!("proc/{pid}"));
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("comm"), "irqbalance\n").unwrap();
            std::fs::write(
                p.join("status"),
                format!("Name:\tirqbalance\nUid:\t{uid}\n"),
            )
            .unwrap();
            std::fs::write(p.join("stat"), format!("{pid} (irqbalance) {state} 1 1")).unwrap();
        }
        std::fs::create_dir_all(d.join("run/irqbalance")).unwrap();
        std::fs::write(d.join("run/irqbalance/irqbalance11.sock"), "").unwrap();
        let root = Root::new(d);
        let found: Vec<u32> = irqbalance(&root).into_iter().map(|(p, _)| p).collect();
        assert_eq!(found, [10]);
    }
}
