//! The state directory (`/run/pinrun`, `--state-dir`): opened without
//! following symlinks, checked, and locked with `flock(2)`; shared by the
//! claims wing's records ([`crate::claims::read`]), the steer wing's
//! journals and `--pid`'s undo records. And what they all ask of `/proc`
//! about the processes that wrote them: whether one still lives
//! ([`liveness`], [`claim_lives`], [`still_runs`]), its process group,
//! its PID namespace ([`view_pid_ns`], [`scan_pid_namespaces`]), and this
//! process's own identity.

use super::process::{status_cpus_allowed, status_ids, status_uids};
use super::threads::{stat_field, stat_state};
use crate::claim::{self, Liveness, NsProcess, NsScan, PidNs, Sight};
use crate::error::{Error, ErrorCode, Result};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The shared state directory when neither `--state-dir` nor
/// `PINRUN_STATE_DIR` is given.
pub const DEFAULT_STATE_DIR: &str = "/run/pinrun";
/// How long an `--exclusive` launch waits for the state directory's lock
/// (pinrun holds it for milliseconds; only a stuck or hostile process
/// holds it longer).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a reader waits for the lock before reading without it.
pub const SHARED_LOCK_TIMEOUT: Duration = Duration::from_secs(1);

/// How the state directory is locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// Readers (`--show`, launches without `--exclusive`).
    Shared,
    /// Choosing and claiming (`--exclusive`).
    Exclusive,
}

/// The open, checked and locked state directory. The descriptor is
/// close-on-exec, so the lock is released when the command is exec'd (or
/// when this is dropped) and never leaks into the command.
#[derive(Debug)]
pub struct StateDir {
    dir: File,
    path: PathBuf,
    locked: bool,
}

fn dir_error(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::StateDir,
        format!("claims: state directory {}: {what}", path.display()),
    )
}

/// The directory's fd, opened without following a symlink at its last
/// component; created (mode 1777) when missing and `create`.
fn open_dir(path: &Path, create: bool) -> Result<Option<OwnedFd>> {
    // "dir/" and "dir/." would make the kernel resolve a symlink "dir"
    // before O_NOFOLLOW applies to the last component: the path is rebuilt
    // from its components (which drop trailing slashes and "." after the
    // first), and one ending in ".." (the parent of whatever the rest
    // resolves to) is refused.
    let normal: PathBuf = path.components().collect();
    if matches!(
        path.components().next_back(),
        Some(std::path::Component::ParentDir)
    ) {
        return Err(dir_error(
            path,
            "ends in '..': pinrun names the state directory itself, never through a link",
        )
        .hint("give the directory's own path, e.g. --state-dir /run/pinrun"));
    }
    let path = if normal.as_os_str().is_empty() {
        Path::new(".")
    } else {
        normal.as_path()
    };
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let open = || nix::fcntl::open(path, flags, Mode::empty());
    match open() {
        Ok(fd) => Ok(Some(fd)),
        Err(nix::errno::Errno::ENOENT) if create => {
            match nix::unistd::mkdir(path, Mode::from_bits_truncate(0o1777)) {
                Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
                Err(e) => return Err(cannot_create(path, e)),
            }
            let fd = open().map_err(|e| dir_error(path, e.desc()))?;
            // The umask narrowed mkdir's mode: set 1777 on what was opened
            // (never by path), only when this user owns it.
            let st = nix::sys::stat::fstat(fd.as_fd()).map_err(|e| dir_error(path, e.desc()))?;
            if st.st_uid == nix::unistd::geteuid().as_raw() {
                let _ = nix::sys::stat::fchmod(fd.as_fd(), Mode::from_bits_truncate(0o1777));
            }
            Ok(Some(fd))
        }
        Err(nix::errno::Errno::ENOENT) => Ok(None),
        Err(nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR) => Err(not_a_directory(path)),
        Err(nix::errno::Errno::EACCES) => Err(not_permitted(path)),
        Err(e) => Err(dir_error(path, e.desc())),
    }
}

/// The refusal of `path` that `open(2)` with `O_DIRECTORY | O_NOFOLLOW`
/// answered ELOOP or ENOTDIR: what it is (`lstat(2)`'s file type: a
/// symlink and where it points, a regular file, …), or that a component
/// before it is not a directory.
fn not_a_directory(path: &Path) -> Error {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return dir_error(path, "a component of the path is not a directory")
            .hint("give a directory: --state-dir DIR (created, mode 1777, when missing)");
    };
    let t = meta.file_type();
    if t.is_symlink() {
        let to = std::fs::read_link(path).map_or(String::new(), |l| format!(" to {}", l.display()));
        return dir_error(
            path,
            format!("is a symlink{to}; pinrun never follows one (another user could repoint it)"),
        )
        .hint("give the directory's own path (realpath), or use --state-dir DIR");
    }
    let what = file_kind(&meta);
    if what == "a directory" {
        return dir_error(path, "a component of the path is not a directory")
            .hint("give a directory: --state-dir DIR (created, mode 1777, when missing)");
    }
    dir_error(path, format!("is {what}, not a directory")).hint(
        "give a directory: --state-dir DIR (created, mode 1777, when missing); pinrun never replaces a file",
    )
}

/// `meta`'s file type in words (`inode(7)`): `a regular file`, `a FIFO`.
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else if t.is_symlink() {
        "a symlink"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "a character device"
    }
}

/// The refusal of `path` that `open(2)` answered EACCES: its mode and
/// owner when `lstat(2)` tells them (pinrun needs to read and search it,
/// `r-x` for this user), and who can change that.
fn not_permitted(path: &Path) -> Error {
    let me = nix::unistd::geteuid().as_raw();
    match std::fs::symlink_metadata(path) {
        Ok(m) => dir_error(
            path,
            format!(
                "cannot be read: permission denied (mode {:04o}, owner uid {}; pinrun runs as uid {me} and needs to read and search it)",
                m.mode() & 0o7777,
                m.uid()
            ),
        )
        .hint(format!(
            "as its owner: chmod 1777 {} (what pinrun creates), or use --state-dir DIR",
            path.display()
        )),
        Err(_) => dir_error(
            path,
            format!("cannot be reached: permission denied on a directory above it (pinrun runs as uid {me})"),
        )
        .hint("use --state-dir DIR in a directory you can search"),
    }
}

/// The failure of `mkdir(path)` with `e`, and how to create it once where
/// that works on this host ([`where_nothing_is_made`]).
fn cannot_create(path: &Path, e: nix::errno::Errno) -> Error {
    let e = dir_error(path, format!("cannot create it: {}", e.desc()));
    match where_nothing_is_made(path) {
        Some(why) => e.hint(format!(
            "{why}: use --state-dir DIR on a writable file system (the default is {DEFAULT_STATE_DIR})"
        )),
        None => e.hint(format!(
            "create it once as root: install -d -m 1777 {} (or a systemd-tmpfiles line: d {} 1777 root root -), or use --state-dir DIR",
            path.display(),
            path.display()
        )),
    }
}

/// Why no directory can be made at `path` even by root (so `install -d`
/// is no remedy): its nearest existing ancestor is in procfs or sysfs
/// (`statfs(2)` `f_type`: their directories are the kernel's, `mkdir(2)`
/// fails), or on a file system mounted read-only (`statvfs(3)`
/// `ST_RDONLY`). `None` when root could make it.
fn where_nothing_is_made(path: &Path) -> Option<String> {
    let above = path.ancestors().skip(1).find(|a| {
        let a = if a.as_os_str().is_empty() {
            Path::new(".")
        } else {
            a
        };
        nix::sys::stat::stat(a).is_ok()
    })?;
    let above = if above.as_os_str().is_empty() {
        Path::new(".")
    } else {
        above
    };
    no_files(above).map(|k| k.words(above))
}

/// Why no file can be made in an existing directory even by root
/// ([`no_files`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoFiles {
    /// In procfs (`statfs(2)` `f_type` `PROC_SUPER_MAGIC`): its
    /// directories are the kernel's.
    Proc,
    /// In sysfs (`SYSFS_MAGIC`): kernfs has no `create`.
    Sys,
    /// On a file system mounted read-only (`statvfs(3)` `ST_RDONLY`).
    ReadOnly,
}

impl NoFiles {
    /// Why, in words with the remedy's start, of the directory `dir`.
    pub fn words(self, dir: &Path) -> String {
        match self {
            NoFiles::Proc => format!(
                "{} is in procfs, where only the kernel makes directories",
                dir.display()
            ),
            NoFiles::Sys => format!(
                "{} is in sysfs, where only the kernel makes directories",
                dir.display()
            ),
            NoFiles::ReadOnly => {
                format!("{} is on a file system mounted read-only", dir.display())
            }
        }
    }
}

/// Why no file can be made in the existing directory `dir` even by root
/// ([`NoFiles`]), asked of the kernel (`statfs(2)`, `statvfs(3)`); `None`
/// when root could make one, or when the kernel does not say.
pub fn no_files(dir: &Path) -> Option<NoFiles> {
    let kind = nix::sys::statfs::statfs(dir).ok()?.filesystem_type();
    if kind == nix::sys::statfs::PROC_SUPER_MAGIC {
        return Some(NoFiles::Proc);
    }
    if kind == nix::sys::statfs::SYSFS_MAGIC {
        return Some(NoFiles::Sys);
    }
    let vfs = nix::sys::statvfs::statvfs(dir).ok()?;
    vfs.flags()
        .contains(nix::sys::statvfs::FsFlags::ST_RDONLY)
        .then_some(NoFiles::ReadOnly)
}

/// What creating a record (`openat(2)` `O_CREAT`) in the existing
/// directory `dir` would answer, asked without writing: procfs answers
/// ENOENT (`proc_root_lookup()` finds no such name), sysfs EACCES (kernfs
/// has no `create`), a file system mounted read-only EROFS, a directory
/// this user may not write and search what `faccessat(2)` with
/// `AT_EACCESS` answers (EACCES; EROFS on a read-only mount). `Ok` when
/// the kernel would let it.
pub fn predict_create(dir: &Path) -> std::result::Result<(), nix::errno::Errno> {
    use nix::errno::Errno;
    match no_files(dir) {
        Some(NoFiles::Proc) => Err(Errno::ENOENT),
        Some(NoFiles::Sys) => Err(Errno::EACCES),
        Some(NoFiles::ReadOnly) | None => nix::unistd::faccessat(
            nix::fcntl::AT_FDCWD,
            dir,
            nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
            nix::fcntl::AtFlags::AT_EACCESS,
        ),
    }
}

/// What `mkdir(path)` would answer, predicted without creating anything
/// (`mkdir(2)` ERRORS): the parent must be a directory (`ENOENT`,
/// `ENOTDIR`) this user may write and search (`faccessat(2)` with
/// `AT_EACCESS`: `EACCES`), on a file system mounted read-write
/// (`EROFS`); in procfs a name that does not exist fails its lookup
/// (`proc_root_lookup()`, `proc_lookup()` in fs/proc/: `ENOENT`) before
/// any directory could be made.
fn predict_mkdir(path: &Path) -> Result<()> {
    use nix::errno::Errno;
    use nix::unistd::AccessFlags;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let st = nix::sys::stat::stat(parent).map_err(|e| cannot_create(path, e))?;
    if st.st_mode & nix::libc::S_IFMT != nix::libc::S_IFDIR {
        return Err(cannot_create(path, Errno::ENOTDIR));
    }
    let fs = nix::sys::statfs::statfs(parent).map_err(|e| cannot_create(path, e))?;
    if fs.filesystem_type() == nix::sys::statfs::PROC_SUPER_MAGIC {
        return Err(cannot_create(path, Errno::ENOENT));
    }
    let vfs = nix::sys::statvfs::statvfs(parent).map_err(|e| cannot_create(path, e))?;
    if vfs.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY) {
        return Err(cannot_create(path, Errno::EROFS));
    }
    nix::unistd::faccessat(
        nix::fcntl::AT_FDCWD,
        parent,
        AccessFlags::W_OK | AccessFlags::X_OK,
        nix::fcntl::AtFlags::AT_EACCESS,
    )
    .map_err(|e| cannot_create(path, e))
}

impl StateDir {
    /// What [`StateDir::open`] with `create` would refuse, found without
    /// creating, locking or changing anything (`--dry-run --exclusive`):
    /// the same checks of an existing directory, or [`predict_mkdir`] for
    /// a missing one.
    pub fn probe(path: &Path) -> Result<()> {
        match open_dir(path, false)? {
            Some(fd) => Self::checked(path, fd).map(drop),
            None => predict_mkdir(path),
        }
    }

    /// Opens `path` (creating it, mode 1777, when `create`) and checks that
    /// no other user could delete or replace records in it (owned by root
    /// or this user; writable by others only with the sticky bit); not yet
    /// locked. `Ok(None)`: it does not exist and was not to be created.
    pub fn open(path: &Path, create: bool) -> Result<Option<StateDir>> {
        let Some(fd) = open_dir(path, create)? else {
            return Ok(None);
        };
        Self::checked(path, fd).map(Some)
    }

    /// `fd` (the directory `path`) as a state directory, if no other user
    /// could delete or replace records in it (see [`StateDir::open`]).
    fn checked(path: &Path, fd: OwnedFd) -> Result<StateDir> {
        let st = nix::sys::stat::fstat(fd.as_fd()).map_err(|e| dir_error(path, e.desc()))?;
        let me = nix::unistd::geteuid().as_raw();
        let mode = st.st_mode & 0o7777;
        if st.st_uid != 0 && st.st_uid != me {
            return Err(dir_error(
                path,
                format!("belongs to uid {}, not to root or to this user", st.st_uid),
            )
            .hint(
                "claims must live in a directory only root or you control; use --state-dir DIR",
            ));
        }
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Err(dir_error(
                path,
                format!("mode {mode:04o} lets other users delete records (no sticky bit)"),
            )
            .hint(format!("chmod 1777 {} (as its owner)", path.display())));
        }
        Ok(StateDir {
            dir: File::from(fd),
            path: path.to_path_buf(),
            locked: false,
        })
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory's descriptor (for `openat(2)`-relative record I/O).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// Takes the lock, polling up to [`LOCK_TIMEOUT`] (exclusive) or
    /// [`SHARED_LOCK_TIMEOUT`] (shared), each through
    /// [`crate::waits::bound`].
    pub fn lock(&mut self, kind: LockKind) -> Result<()> {
        let timeout = crate::waits::bound(match kind {
            LockKind::Shared => SHARED_LOCK_TIMEOUT,
            LockKind::Exclusive => LOCK_TIMEOUT,
        });
        let start = Instant::now();
        loop {
            let r = match kind {
                LockKind::Shared => self.dir.try_lock_shared(),
                LockKind::Exclusive => self.dir.try_lock(),
            };
            match r {
                Ok(()) => {
                    self.locked = true;
                    return Ok(());
                }
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holders = self.lock_holders();
                    let who = if holders.is_empty() {
                        "another process (not found in /proc/locks)".to_string()
                    } else {
                        holders.join(", ")
                    };
                    return Err(dir_error(
                        &self.path,
                        format!(
                            "still locked after {} by {who}",
                            crate::words::ns_words(timeout.as_nanos() as u64)
                        ),
                    )
                    .hint(format!(
                        "a pinrun holds the lock for milliseconds and never while it prints: that process is stuck or hostile; stop it, or claim in a directory only you can write (--state-dir DIR, see SECURITY in pinrun(1)); `fuser -v {}` lists who has it open",
                        self.path.display()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(dir_error(
                        &self.path,
                        format!("flock: {}", crate::error::io_words(&e)),
                    ));
                }
            }
        }
    }

    /// Who holds a lock on the directory ([`flock_holders`]).
    fn lock_holders(&self) -> Vec<String> {
        flock_holders(self.dir.as_fd())
    }

    /// Removes file `name` of the directory (best effort: a stale record
    /// another user owns stays, and is ignored by every reader; never a
    /// directory, never through a symlink: `unlinkat(2)` removes the link).
    pub fn remove(&self, name: &str) {
        let _ = nix::unistd::unlinkat(
            self.dir.as_fd(),
            name,
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }

    /// Releases the lock (the directory stays open).
    pub fn unlock(&mut self) {
        if self.locked {
            let _ = self.dir.unlock();
            self.locked = false;
        }
    }
}

/// The PIDs `/proc/locks` names as holding a lock on the file of `fd`
/// (0: one this `/proc` cannot see), sorted, each once.
pub fn flock_holder_pids(fd: BorrowedFd) -> Vec<u32> {
    let Ok(st) = nix::sys::stat::fstat(fd) else {
        return Vec::new();
    };
    let locks = super::root::read_bounded("/proc/locks").unwrap_or_default();
    #[allow(clippy::useless_conversion)]
    let dev = u64::from(st.st_dev);
    let (major, minor) = (nix::sys::stat::major(dev), nix::sys::stat::minor(dev));
    #[allow(clippy::useless_conversion)]
    let mut pids = claim::lock_holders(&locks, major, minor, u64::from(st.st_ino));
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Who holds a `flock(2)` lock on the file `fd` is open on, from
/// `/proc/locks` (`proc(5)`: the lock's device and inode, and the PID
/// that took it): "pid 123 (engine) of uid 65534" each, the command from
/// `/proc/PID/comm` and the user from the owner of `/proc/PID`. Once
/// that process exits, a process that inherited the descriptor holds the
/// lock: "a process that inherited it from pid 123 (exited)"; a holder
/// `/proc/locks` shows as PID 0 is one this `/proc` cannot see. Empty
/// when `/proc/locks` names no holder.
pub fn flock_holders(fd: BorrowedFd) -> Vec<String> {
    flock_holder_pids(fd)
        .into_iter()
        .map(|pid| {
            // locks_translate_pid() (fs/locks.c) shows 0 for a holder not
            // visible in this /proc's PID namespace, or whose PID is freed.
            if pid == 0 {
                return "a process this /proc cannot see (of another PID namespace, or gone)"
                    .to_string();
            }
            let comm = super::root::read_bounded(format!("/proc/{pid}/comm"))
                .map(|c| claim::printable(c.trim_end()));
            match (comm, std::fs::metadata(format!("/proc/{pid}"))) {
                (Ok(comm), Ok(m)) => format!("pid {pid} ({comm}) of uid {}", m.uid()),
                _ => format!("a process that inherited it from pid {pid} (exited)"),
            }
        })
        .collect()
}

/// Whether process group `pgid` has a member (`kill(-pgid, 0)`: `ESRCH`
/// means none; `EPERM` means members this user may not signal).
pub fn group_exists(pgid: u32) -> bool {
    claim::valid_pid(pgid)
        && !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(-(pgid as i32)), None),
            Err(nix::errno::Errno::ESRCH)
        )
}

/// Whether `pid` is a live member of process group `pgid` (field 5 of
/// its `/proc/<pid>/stat`): what a claim following its group counts
/// ([`crate::claims::judge`] takes a zombie as ended; a zombie main thread
/// whose other threads run is a live process, [`live_threads`]).
pub fn live_member(pid: u32, pgid: u32) -> bool {
    super::root::read_bounded(format!("/proc/{pid}/stat")).is_ok_and(|st| {
        stat_field::<u32>(&st, 5) == Some(pgid)
            && (!matches!(stat_state(&st), Some('Z' | 'X'))
                // Threads over the cap: not known to be gone, a member.
                || live_threads("/proc", pid, MAX_PROC_ENTRIES).map_or(true, |t| !t.is_empty()))
    })
}

/// The live threads of process `pid` with their `status` texts
/// (`/proc/PID/task/TID/status`; a thread in state `Z` or `X`, field 3
/// of its `stat`, left out), ascending by TID. A process is its live
/// threads (issue 35 class 2): its main thread may have exited
/// (`pthread_exit(3)` in `main`: the leader stays a zombie in `/proc`
/// until the last thread exits, `delay_group_leader()`, kernel/exit.c)
/// while the others run, and each thread has its own credentials
/// (`setresuid(2)` by raw system call changes one thread) and affinity.
///
/// `proc` is procfs' mount (`/proc`; a fixture in tests) and `cap` the
/// most entries listed ([`MAX_PROC_ENTRIES`]). Errors: more than `cap`
/// entries in `/proc/PID/task` (its words name the path and the cap):
/// the process's threads are not known, so neither is whether it runs
/// nor as whom. A listing that fails otherwise gives the threads listed
/// before it (none when the directory cannot be opened).
fn live_threads(
    proc: &str,
    pid: u32,
    cap: usize,
) -> std::result::Result<Vec<(u32, String)>, String> {
    let dir = format!("{proc}/{pid}/task");
    let mut tids = match list_ids(&dir, cap) {
        (_, Some(Listing::Over)) => return Err(over_words(&dir, cap)),
        (tids, _) => tids,
    };
    tids.sort_unstable();
    Ok(tids
        .into_iter()
        .filter_map(|t| {
            let task = format!("{dir}/{t}");
            let stat = super::root::read_bounded(format!("{task}/stat")).ok()?;
            if matches!(stat_state(&stat), Some('Z' | 'X')) {
                return None;
            }
            Some((t, super::root::read_bounded(format!("{task}/status")).ok()?))
        })
        .collect())
}

/// The most entries pinrun lists of one procfs directory (`/proc`, and
/// `/proc/PID/task`): 1 048 576, a quarter of the kernel's largest
/// `pid_max` (`PID_MAX_LIMIT`, 4 194 304 on 64-bit,
/// include/linux/threads.h), as many as it lists of a state directory.
/// Any local user can create tasks up to `kernel.threads-max`, so the
/// listing is bounded; a directory with more is refused, named with the
/// cap ([`over_words`]), and the reader concludes nothing from it (a
/// claim lives, a scan has a gap, a process's liveness is unknown): never
/// "no holder" because the cap was met.
pub const MAX_PROC_ENTRIES: usize = 1 << 20;

/// Why [`list_ids`] stopped before the end of its directory.
#[derive(Debug)]
enum Listing {
    /// The directory could not be opened or listed (the first error of
    /// `getdents64(2)`, never retried: it may repeat forever).
    Io(std::io::Error),
    /// More than the cap of entries.
    Over,
}

/// The ids of the entries of `dir` named by a number (PIDs, TIDs), in
/// the order listed, from at most `cap` entries of any name; and why the
/// listing stopped early, if it did (the ids before it are kept).
fn list_ids(dir: &str, cap: usize) -> (Vec<u32>, Option<Listing>) {
    let mut ids = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(d) => d,
        Err(e) => return (ids, Some(Listing::Io(e))),
    };
    for (i, e) in entries.enumerate() {
        if i >= cap {
            return (ids, Some(Listing::Over));
        }
        match e {
            Ok(e) => ids.extend(e.file_name().to_str().and_then(|n| n.parse::<u32>().ok())),
            Err(e) => return (ids, Some(Listing::Io(e))),
        }
    }
    (ids, None)
}

/// The words of a listing of `dir` refused for holding more than `cap`
/// entries ([`MAX_PROC_ENTRIES`]).
fn over_words(dir: &str, cap: usize) -> String {
    format!(
        "{dir}: more than {cap} entries, the most pinrun lists (MAX_PROC_ENTRIES): refused, not read in part"
    )
}

/// The uids (`Uid:`: real, effective, saved, filesystem) and the
/// `Cpus_allowed_list` of one `status` text, added to `uids` and
/// `affinity`.
fn add_status(status: &str, uids: &mut Vec<u32>, affinity: &mut Option<crate::cpuset::CpuSet>) {
    for u in status_uids(status).flatten() {
        if !uids.contains(&u) {
            uids.push(u);
        }
    }
    if let Some(set) = status_cpus_allowed(status) {
        match affinity {
            Some(a) => a.union_with(&set),
            None => *affinity = Some(set),
        }
    }
}

/// The live members of process group `pgid` ([`live_member`]), from one
/// listing of `/proc` ([`process_groups`]); its errors.
pub fn live_members(pgid: u32) -> std::result::Result<Vec<u32>, String> {
    if !group_exists(pgid) {
        return Ok(Vec::new());
    }
    Ok(process_groups(&unnoted)?
        .remove(&pgid)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| live_member(*p, pgid))
        .collect())
}

/// Whether a claim of `pid` started at `start_time`, following process
/// group `pgid` (its PID when the launch led its group, 0: none), still
/// lives, as [`crate::claims::judge`] judges a record: its process runs, or
/// it led its group, its PID is not reused, and the group has a live
/// member. A group whose members cannot be read lives (nothing is undone
/// for a claim that may still run).
pub fn claim_lives(pid: u32, start_time: u64, pgid: u32) -> bool {
    match liveness(pid) {
        Liveness::Alive {
            start_time: Some(s),
            ..
        } if s != start_time => false,
        Liveness::Alive { .. } | Liveness::Unknown(_) => true,
        Liveness::Dead if pgid != 0 && pgid == pid => {
            live_members(pgid).map_or(true, |m| !m.is_empty())
        }
        Liveness::Dead => false,
    }
}

/// Where a reader of `/proc` that has no [`super::Root`] (the claims',
/// the liveness of a state directory's writers) gives an open that failed:
/// its caller's root ([`super::Root::note_io_error`]: one for want of a
/// resource makes the caller refuse, `read-starved`), or [`unnoted`].
pub type Note<'a> = &'a dyn Fn(&std::io::Error, &dyn Fn() -> String);

/// Notes nothing ([`Note`]): for a caller that refuses on its own (a
/// group whose members cannot be read lives, [`claim_lives`]).
pub fn unnoted(_: &std::io::Error, _: &dyn Fn() -> String) {}

/// Every process group of `/proc` with its members' PIDs (field 5 of each
/// `/proc/<pid>/stat`); read once per listing, only when a record's PID is
/// gone and its group may live.
///
/// Errors: `/proc` that cannot be listed, or a process's `stat` that
/// cannot be read for another reason than the process having exited
/// (`ENOENT`, `ESRCH`): `EMFILE` under a small `ulimit -n` hid every
/// member, and a live group read as empty would have its claim judged
/// stale and its record removed. The message names the path and the
/// error; a resource error is also given to `note` (for `read-starved`).
pub fn process_groups(note: Note) -> std::result::Result<HashMap<u32, Vec<u32>>, String> {
    process_groups_in("/proc", MAX_PROC_ENTRIES, note)
}

/// [`process_groups`] of procfs mounted at `proc` (a fixture in tests),
/// listing at most `cap` entries: more is an error naming `proc` and the
/// cap ([`over_words`]).
fn process_groups_in(
    proc: &str,
    cap: usize,
    note: Note,
) -> std::result::Result<HashMap<u32, Vec<u32>>, String> {
    let failed = |path: &str, e: &std::io::Error| {
        note(e, &|| path.to_string());
        format!("reading {path}: {}", crate::error::io_words(e))
    };
    let mut out: HashMap<u32, Vec<u32>> = HashMap::new();
    let pids = match list_ids(proc, cap) {
        (pids, None) => pids,
        (_, Some(Listing::Io(e))) => return Err(failed(proc, &e)),
        (_, Some(Listing::Over)) => return Err(over_words(proc, cap)),
    };
    for pid in pids {
        let path = format!("{proc}/{pid}/stat");
        match super::root::read_bounded(&path) {
            Ok(stat) => {
                if let Some(pgrp) = stat_field::<u32>(&stat, 5) {
                    out.entry(pgrp).or_default().push(pid);
                }
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)) => {}
            Err(e) => return Err(failed(&path, &e)),
        }
    }
    Ok(out)
}

/// Whether `pid` runs, and as whom: judged by its live threads
/// ([`live_threads`]; a main thread that exited while others run is no
/// ended process), their uids and `Cpus_allowed_list`s together (one
/// `status` per thread). `/proc` hidden by `hidepid=` cannot prove a
/// process dead: `kill(pid, 0)` decides (ESRCH: dead).
///
/// [`Liveness::Unknown`] when its threads cannot be listed in full (more
/// than [`MAX_PROC_ENTRIES`]): whether it runs, and as whom, is not known.
pub fn liveness(pid: u32) -> Liveness {
    liveness_in("/proc", pid, MAX_PROC_ENTRIES)
}

/// [`liveness`] in procfs mounted at `proc` (a fixture in tests), listing
/// at most `cap` threads.
fn liveness_in(proc: &str, pid: u32, cap: usize) -> Liveness {
    if !claim::valid_pid(pid) {
        return Liveness::Dead;
    }
    let dir = format!("{proc}/{pid}");
    if let Ok(stat) = super::root::read_bounded(format!("{dir}/stat")) {
        // Its live threads: a zombie main thread with live threads is a
        // running process; their uids and affinities together are the
        // process's (a thread may run as another uid, or be pinned apart
        // from the main thread inside the claimed CPUs).
        let threads = match live_threads(proc, pid, cap) {
            Ok(t) => t,
            Err(why) => return Liveness::Unknown(why),
        };
        let zombie = matches!(stat_state(&stat), Some('Z' | 'X'));
        if zombie && threads.is_empty() {
            return Liveness::Dead;
        }
        let mut uids: Vec<u32> = std::fs::metadata(&dir)
            .map(|m| m.uid())
            .into_iter()
            .collect();
        let mut affinity = None;
        if threads.is_empty()
            && let Ok(status) = super::root::read_bounded(format!("{dir}/status"))
        {
            add_status(&status, &mut uids, &mut affinity);
        }
        for (_, status) in &threads {
            add_status(status, &mut uids, &mut affinity);
        }
        return Liveness::Alive {
            start_time: stat_field(&stat, 22),
            uids,
            affinity,
        };
    }
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None) {
        Err(nix::errno::Errno::ESRCH) => Liveness::Dead,
        _ => Liveness::Alive {
            start_time: None,
            uids: Vec::new(),
            affinity: None,
        },
    }
}

/// Whether process `pid` started at `start` (field 22 of its stat) still
/// runs, its PID numbered in PID namespace `ns` (`None`: this `/proc`'s,
/// as in journals of older versions): judged in this `/proc` when it is
/// that namespace's (a zombie or another start time has ended), else
/// found by its namespace among every process ([`claim::locate`]).
/// `Err(why)`: this reader cannot see into that namespace and cannot
/// tell.
pub fn still_runs(pid: u32, start: u64, ns: Option<PidNs>) -> std::result::Result<bool, String> {
    let runs = |l: Liveness| match l {
        Liveness::Dead => Ok(false),
        Liveness::Alive { start_time, .. } => Ok(start_time.is_none_or(|s| s == start)),
        Liveness::Unknown(why) => Err(why),
    };
    let view = if ns.is_some() { view_pid_ns() } else { None };
    let Some(ns) = ns.filter(|n| Some(*n) != view) else {
        return runs(liveness(pid));
    };
    match claim::locate(&scan_pid_namespaces(view, &unnoted), ns, pid, 0) {
        Sight::Unseen(why) => Err(why),
        Sight::Seen { holder, .. } => holder.map_or(Ok(false), |h| runs(liveness(h))),
    }
}

/// The PID namespace of `path` (`/proc/<pid>/ns/pid`): `stat(2)` of
/// the link's target, an nsfs file.
fn pid_ns_of(path: &str) -> std::io::Result<PidNs> {
    std::fs::metadata(path).map(|m| PidNs {
        dev: m.dev(),
        ino: m.ino(),
    })
}

/// This process's own PID namespace, the one [`std::process::id`] is
/// numbered in (`None`: `/proc/self/ns/pid` cannot be read, a kernel
/// without namespaces).
pub fn own_pid_ns() -> Option<PidNs> {
    pid_ns_of("/proc/self/ns/pid").ok()
}

/// The PID namespace `/proc` numbers processes in: this process's own
/// when its `NSpid:` has one number (or none, before Linux 4.1), else
/// that of `/proc`'s PID 1, the init of the namespace it was mounted for
/// (a `/proc` of a parent namespace). `None`: not known.
pub fn view_pid_ns() -> Option<PidNs> {
    let status = super::root::read_bounded("/proc/self/status").ok()?;
    let levels = status_ids(&status, "NSpid").len();
    if levels <= 1 {
        own_pid_ns()
    } else {
        pid_ns_of("/proc/1/ns/pid").ok()
    }
}

/// Every process of `/proc` with its PID namespace, and for those not
/// known to be of `view` (this `/proc`'s namespace) their `NSpid:` and
/// `NSpgid:` ([`NsScan`]). A process whose namespace link cannot be read
/// (`EACCES`: it needs ptrace access) is kept with its `status`, readable
/// by all, which tells whether it is of `view`. A process that exits
/// meanwhile (`ENOENT`, `ESRCH`) is left out; one that cannot be read at
/// all (`hidepid=`, `EMFILE`), a listing error and a `/proc` without PID 1
/// (`hidepid=`) are the scan's gap, named: a process not read may be a
/// record's holder.
///
/// At most [`MAX_PROC_ENTRIES`] entries of `/proc` are listed: more is
/// the scan's gap too, naming `/proc` and the cap.
pub fn scan_pid_namespaces(view: Option<PidNs>, note: Note) -> NsScan {
    scan_pid_namespaces_in("/proc", MAX_PROC_ENTRIES, view, note)
}

/// [`scan_pid_namespaces`] of procfs mounted at `proc` (a fixture in
/// tests), listing at most `cap` entries.
fn scan_pid_namespaces_in(proc: &str, cap: usize, view: Option<PidNs>, note: Note) -> NsScan {
    let mut scan = NsScan {
        view,
        ..NsScan::default()
    };
    let mut gap = None;
    let failed = |path: &str, e: &std::io::Error| {
        note(e, &|| path.to_string());
        format!("{path}: {}", crate::error::io_words(e))
    };
    let gone = |e: &std::io::Error| matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH));
    let (pids, stopped) = list_ids(proc, cap);
    match stopped {
        None => {}
        Some(Listing::Io(e)) if pids.is_empty() => {
            scan.gap = Some(failed(proc, &e));
            return scan;
        }
        Some(Listing::Io(e)) => gap = Some(failed(proc, &e)),
        Some(Listing::Over) => gap = Some(over_words(proc, cap)),
    }
    for pid in pids {
        let ns = match pid_ns_of(&format!("{proc}/{pid}/ns/pid")) {
            Ok(ns) => Some(ns),
            Err(e) if gone(&e) => continue,
            Err(_) => None,
        };
        let mut p = NsProcess {
            pid,
            ns,
            nspid: Vec::new(),
            nspgid: Vec::new(),
        };
        if ns.is_none() || ns != view {
            let path = format!("{proc}/{pid}/status");
            match super::root::read_bounded(&path) {
                Ok(status) => {
                    p.nspid = status_ids(&status, "NSpid");
                    p.nspgid = status_ids(&status, "NSpgid");
                }
                Err(e) if gone(&e) => continue,
                Err(e) => {
                    gap.get_or_insert_with(|| failed(&path, &e));
                    continue;
                }
            }
        }
        scan.procs.push(p);
    }
    if gap.is_none() && !scan.procs.iter().any(|p| p.pid == 1) {
        gap = Some(format!("{proc} shows no PID 1 (mounted with hidepid=?)"));
    }
    scan.gap = gap;
    scan
}

/// This process: (pid, start time, effective uid, process group to
/// follow), for its own record. The group is followed only when this
/// process leads it (a shell job, a systemd service): otherwise it is the
/// caller's, which outlives the command.
pub fn identity() -> Result<(u32, u64, u32, u32)> {
    let pid = std::process::id();
    let stat = super::root::read_bounded("/proc/self/stat").unwrap_or_default();
    let start: u64 = stat_field(&stat, 22).ok_or_else(|| {
        Error::new(
            ErrorCode::ClaimFailed,
            "--exclusive: cannot read this process's start time from /proc/self/stat",
        )
        .hint("claims need procfs mounted at /proc")
    })?;
    let pgid = nix::unistd::getpgrp().as_raw() as u32;
    let pgid = if pgid == pid { pid } else { 0 };
    Ok((pid, start, nix::unistd::geteuid().as_raw(), pgid))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process is found in the scan by its own PID namespace, and
    /// `NSpid:`/`NSpgid:` lines are read as numbers.
    #[test]
    fn this_process_is_found_by_its_pid_namespace() {
        let own = own_pid_ns().expect("/proc/self/ns/pid");
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        if status_ids(&status, "NSpid").len() == 1 {
            assert_eq!(view_pid_ns(), Some(own));
        }
        // As if /proc were another namespace's: NSpid is read too.
        let scan = scan_pid_namespaces(None, &unnoted);
        let me = scan
            .procs
            .iter()
            .find(|p| p.pid == std::process::id())
            .expect("this process in the scan");
        assert_eq!(me.ns, Some(own));
        assert_eq!(
            me.nspid.last(),
            Some(&nix::unistd::getpid().as_raw().cast_unsigned())
        );
        assert_eq!(
            status_ids("Name:\tx\nNSpid:\t4242\t1\nNSpgid:\t4240\t0\n", "NSpid"),
            vec![4242, 1]
        );
        assert_eq!(status_ids("Name:\tx\n", "NSpgid"), Vec::<u32>::new());
    }

    /// A launch is judged in the PID namespace its PID is numbered in:
    /// this process runs, under another start time it has ended, and in a
    /// namespace that does not exist it has ended as seen from the initial
    /// namespace (which sees every process) and cannot be told elsewhere.
    #[test]
    fn a_launch_is_judged_in_its_namespace() {
        let (pid, start, _, _) = identity().unwrap();
        let own = own_pid_ns();
        assert_eq!(still_runs(pid, start, None), Ok(true));
        assert_eq!(still_runs(pid, start + 1, None), Ok(false));
        assert_eq!(still_runs(pid, start, own), Ok(true));
        let gone = PidNs {
            dev: own.map_or(0, |n| n.dev),
            ino: 0xF000_0000,
        };
        match (view_pid_ns(), still_runs(pid, start, Some(gone))) {
            (Some(v), r) if v.is_initial() => assert_eq!(r, Ok(false)),
            (_, r) => assert!(r.is_err(), "{r:?}"),
        }
    }

    /// A state directory named through a symlink is refused however the
    /// path ends: `link`, `link/`, `link/.` (which slipped past O_NOFOLLOW,
    /// issue 33) and `link/..`; the real directory as `d/.` is opened.
    #[test]
    fn a_state_directory_is_never_reached_through_its_link() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("d");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
        for p in ["link", "link/", "link/.", "link/./", "link/.."] {
            let e = StateDir::open(&t.path().join(p), false).unwrap_err();
            assert_eq!(e.code, ErrorCode::StateDir, "{p}");
        }
        for p in ["d", "d/", "d/."] {
            assert!(
                StateDir::open(&t.path().join(p), false).unwrap().is_some(),
                "{p}"
            );
        }
    }

    /// Every listing of `/proc` here is bounded ([`MAX_PROC_ENTRIES`]):
    /// on a procfs fixture made of this process's own files (its `stat`
    /// and `status` as this kernel printed them), `cap` entries are read
    /// in full and `cap + 1` are refused, naming the directory and the
    /// cap, and never read as gone: the process's liveness is unknown
    /// (its claim lives), its group's members an error, the namespace
    /// scan has a gap.
    #[test]
    fn proc_listings_over_the_cap_are_refused_never_read_as_gone() {
        let cap = 3;
        let me = std::process::id();
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let pgrp: u32 = stat_field(&stat, 5).unwrap();
        let start: u64 = stat_field(&stat, 22).unwrap();
        // `n` entries in /proc (this process and n - 1 others of its
        // group) and `n` in /proc/ME/task.
        let fixture = |n: u32| {
            let t = tempfile::tempdir().unwrap();
            let w = |p: String, text: &str| {
                let f = t.path().join(p);
                std::fs::create_dir_all(f.parent().unwrap()).unwrap();
                std::fs::write(f, text).unwrap();
            };
            w(format!("{me}/stat"), &stat);
            w(format!("{me}/status"), &status);
            for i in 0..n {
                w(format!("{me}/task/{}/stat", me + i), &stat);
                w(format!("{me}/task/{}/status", me + i), &status);
            }
            for i in 1..n {
                w(format!("{}/stat", me + 1000 + i), &stat);
            }
            t
        };
        let over = |dir: String| {
            format!(
                "{dir}: more than 3 entries, the most pinrun lists (MAX_PROC_ENTRIES): refused, not read in part"
            )
        };

        let full = fixture(cap);
        let p = full.path().to_str().unwrap();
        assert!(matches!(
            liveness_in(p, me, cap as usize),
            Liveness::Alive { start_time: Some(s), .. } if s == start
        ));
        let groups = process_groups_in(p, cap as usize, &unnoted).unwrap();
        assert_eq!(groups[&pgrp].len(), cap as usize);
        assert_eq!(
            scan_pid_namespaces_in(p, cap as usize, None, &unnoted).gap,
            Some(format!("{p} shows no PID 1 (mounted with hidepid=?)"))
        );

        let flood = fixture(cap + 1);
        let p = flood.path().to_str().unwrap();
        assert_eq!(
            liveness_in(p, me, cap as usize),
            Liveness::Unknown(over(format!("{p}/{me}/task")))
        );
        assert_eq!(
            process_groups_in(p, cap as usize, &unnoted),
            Err(over(p.to_string()))
        );
        assert_eq!(
            scan_pid_namespaces_in(p, cap as usize, None, &unnoted).gap,
            Some(over(p.to_string()))
        );
    }
}
