//! Reading claims: the state directory (opened without following
//! symlinks, checked, and locked with `flock(2)`), its records judged
//! against `/proc`, and kubelet's CPU manager state file. Records are
//! written by [`crate::apply::claims`] under the same lock.

use super::root::Root;
use super::threads::{stat_field, stat_state};
use crate::claim::{
    self, Claim, Claims, Elsewhere, Holder, Liveness, NsProcess, NsScan, PidNs, Record, Sight,
    Verdict,
};
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The shared state directory when neither `--state-dir` nor
/// `PINRUN_STATE_DIR` is given.
pub const DEFAULT_STATE_DIR: &str = "/run/pinrun";
/// kubelet's CPU manager checkpoint, below the root.
pub const KUBELET_STATE: &str = "/var/lib/kubelet/cpu_manager_state";
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
        Err(nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR) => Err(dir_error(
            path,
            "is a symlink or not a directory; pinrun never follows one",
        )
        .hint("remove it, or use --state-dir DIR")),
        Err(e) => Err(dir_error(path, e.desc())),
    }
}

/// The failure of `mkdir(path)` with `e`, and how to create it once.
fn cannot_create(path: &Path, e: nix::errno::Errno) -> Error {
    dir_error(path, format!("cannot create it: {}", e.desc())).hint(format!(
        "create it once as root: install -d -m 1777 {} (or a systemd-tmpfiles line: d {} 1777 root root -), or use --state-dir DIR",
        path.display(),
        path.display()
    ))
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
    /// [`SHARED_LOCK_TIMEOUT`] (shared).
    pub fn lock(&mut self, kind: LockKind) -> Result<()> {
        let timeout = match kind {
            LockKind::Shared => SHARED_LOCK_TIMEOUT,
            LockKind::Exclusive => LOCK_TIMEOUT,
        };
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
                        format!("still locked after {:.0}s by {who}", timeout.as_secs_f64()),
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

    /// Releases the lock (the directory stays open).
    pub fn unlock(&mut self) {
        if self.locked {
            let _ = self.dir.unlock();
            self.locked = false;
        }
    }

    /// Reads every record: live claims, warnings for files that are not
    /// usable records, the records that could not be read at all
    /// ([`Claims::unreadable`]: their CPUs are unknown), and the names of
    /// stale records this user may remove (pinrun's own format, a dead
    /// holder, the file this user's or read as root), to be removed under
    /// the exclusive lock. The listing is complete or refused, never cut.
    ///
    /// Each record's CPU list is clipped to `possible` as soon as it is
    /// parsed (a CPU that does not exist cannot be claimed; a warning names
    /// the record): a record of `0-4194303`, which any local user can write
    /// into the sticky state directory, costs what a record of the
    /// machine's CPUs costs, and memory stays linear in the records.
    pub fn read(&self, possible: &CpuSet) -> (Claims, Vec<String>) {
        let mut r = RecordsRead {
            possible,
            me: nix::unistd::geteuid().as_raw(),
            groups: None,
            claims: Claims::default(),
            stale: Vec::new(),
            view: None,
            scan: None,
        };
        let names = match self.names() {
            Ok(n) => n,
            Err(why) => {
                r.claims.unreadable.push(format!(
                    "claims: cannot list {}: {why}",
                    self.path.display()
                ));
                return (r.claims, r.stale);
            }
        };
        let (owned, over) = self.owners(names, &mut r);
        for (name, pid, owner) in owned {
            if over.iter().any(|(u, _)| *u == owner) {
                continue;
            }
            self.read_owned(&mut r, name, pid, owner);
        }
        r.claims.claims.sort_by_key(|c| match c.holder {
            Holder::Process { pid, .. } => pid,
            Holder::Kubelet { .. } => u32::MAX,
        });
        (r.claims, r.stale)
    }

    /// The owner of each record of `names` (one fstatat each, no read):
    /// `(name, pid, uid)`, a record gone meanwhile left out, one that
    /// cannot be stat'ed unreadable in `r`; and the users over
    /// [`claim::MAX_RECORDS_PER_USER`] with their counts, sorted, each
    /// warned about in `r` (a user over the cap hides only its own
    /// records).
    fn owners(
        &self,
        names: Vec<(String, u32)>,
        r: &mut RecordsRead,
    ) -> (Vec<Owned>, Vec<(u32, usize)>) {
        let mut owned = Vec::with_capacity(names.len());
        let mut per_user: HashMap<u32, usize> = HashMap::new();
        for (name, pid) in names {
            match nix::sys::stat::fstatat(
                self.dir.as_fd(),
                name.as_str(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            ) {
                Ok(st) => {
                    if st.st_uid != 0 {
                        *per_user.entry(st.st_uid).or_default() += 1;
                    }
                    owned.push((name, pid, st.st_uid));
                }
                Err(nix::errno::Errno::ENOENT) => {}
                Err(e) => r.claims.unreadable.push(format!(
                    "claims: record {}: fstatat: {}",
                    self.path.join(&name).display(),
                    e.desc()
                )),
            }
        }
        let mut over: Vec<(u32, usize)> = per_user
            .into_iter()
            .filter(|(_, n)| *n > claim::MAX_RECORDS_PER_USER)
            .collect();
        over.sort_unstable();
        for (uid, n) in &over {
            let w = format!(
                "claims: uid {uid} has {n} records in {}, more than {}: all of them ignored",
                self.path.display(),
                claim::MAX_RECORDS_PER_USER
            );
            if *uid == r.me {
                r.claims.warnings.push(w);
            } else {
                r.claims.foreign_warnings.push(w);
            }
        }
        (owned, over)
    }

    /// Reads record `name` of process `pid`, owned by `owner`, into `r`:
    /// its holder's liveness, then the record ([`StateDir::usable_record`]),
    /// its CPUs clipped to the possible ones, and its verdict
    /// ([`judge_here`] for a PID of this reader's `/proc`,
    /// [`judge_elsewhere`] for one of another PID namespace): a live claim,
    /// a stale record this user may remove (only pinrun's own: parsed, the
    /// owner they name), or a forged one warned about.
    fn read_owned(&self, r: &mut RecordsRead, name: String, pid: u32, owner: u32) {
        let me = r.me;
        let live = liveness(pid);
        let shown = self.path.join(&name);
        let foreign = owner != 0 && owner != me;
        let Some((rec, cpus, file_uid)) = self.usable_record(r, &name, &live, foreign) else {
            return;
        };
        let Some(cpus) = clip_to_possible(r, &shown, cpus, foreign) else {
            return;
        };
        if rec.pid != pid {
            r.claims.warnings.push(format!(
                "claims: record {} names pid {}, not {pid}: ignored",
                shown.display(),
                rec.pid
            ));
            return;
        }
        let view = if rec.pid_ns.is_some() { r.view() } else { None };
        let judged = match claim::foreign_ns(&rec, view) {
            None => judge_here(r, &shown, &rec, file_uid, &live),
            Some(ns) => Some(judge_elsewhere(r, ns, &rec, file_uid)),
        };
        let Some((verdict, follows_group, elsewhere)) = judged else {
            return;
        };
        match verdict {
            Verdict::Stale => {
                // Only pinrun's own records (parsed, the owner they
                // name) are ever removed.
                if rec.uid == file_uid && (file_uid == me || me == 0) {
                    r.stale.push(name);
                }
            }
            Verdict::Forged(why) => warnings_of(&mut r.claims, file_uid != 0 && file_uid != me)
                .push(format!("claims: record {} {why}: ignored", shown.display())),
            Verdict::Live { affinity } => r.claims.claims.push(Claim {
                holder: Holder::Process {
                    pid: rec.pid,
                    start_time: rec.start_time,
                    uid: file_uid,
                    pgid: rec.pgid,
                    command: rec.command,
                    since: rec.time,
                    record: name,
                    affinity,
                    group_only: follows_group,
                    elsewhere,
                },
                cpus,
            }),
        }
    }

    /// Record `name` as [`StateDir::read_record`] reads it: `None` when it
    /// is gone, cannot be read (unreadable in `r`: its CPUs are unknown) or
    /// is not a usable record (warned about in `r`, as `foreign` or not,
    /// saying whether its holder, `live`, may be alive).
    fn usable_record(
        &self,
        r: &mut RecordsRead,
        name: &str,
        live: &Liveness,
        foreign: bool,
    ) -> Option<(Record, CpuSet, u32)> {
        let shown = self.path.join(name);
        match self.read_record(name) {
            Ok(rec) => Some(rec),
            Err(RecordError::Gone) => None,
            Err(RecordError::Unreadable(why)) => {
                r.claims.unreadable.push(format!(
                    "claims: record {} cannot be read ({why}); its CPUs are unknown",
                    shown.display()
                ));
                None
            }
            Err(RecordError::Invalid(why)) => {
                warnings_of(&mut r.claims, foreign).push(format!(
                    "claims: {} is not a usable claim record ({why}); {}",
                    shown.display(),
                    if *live == Liveness::Dead {
                        "its pid is gone: ignored (pinrun removes only its own records)"
                    } else {
                        "its pid may be alive: ignored, CPUs unknown"
                    }
                ));
                None
            }
        }
    }

    /// The names of the records of process `pid` started at `start` (field
    /// 22 of its stat), `pid` numbered in this `/proc`: `<pid>.<start>`
    /// and `<pid>.<start>.<suffix>` ([`claim::record_name`]) that parse as
    /// records naming that PID in this `/proc`'s PID namespace or in none
    /// (older versions); a record of another namespace's process with the
    /// same number is not its. Empty when the directory cannot be listed.
    pub fn records_of(&self, pid: u32, start: u64) -> Vec<String> {
        let exact = format!("{pid}.{start}");
        let prefix = format!("{exact}.");
        let mut view = None;
        self.names()
            .unwrap_or_default()
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| *n == exact || n.starts_with(&prefix))
            .filter(|n| match self.read_record(n) {
                Ok((rec, _, _)) => {
                    rec.pid_ns.is_none()
                        || claim::foreign_ns(&rec, *view.get_or_insert_with(view_pid_ns)).is_none()
                }
                Err(_) => false,
            })
            .collect()
    }

    /// The names shaped like records, with their PIDs: every entry of the
    /// directory, or the reason it cannot be listed completely (an error
    /// of `getdents64(2)`, returned once and never retried, or more than
    /// [`claim::MAX_ENTRIES`] entries).
    fn names(&self) -> std::result::Result<Vec<(String, u32)>, String> {
        let mut dir = nix::dir::Dir::openat(
            self.dir.as_fd(),
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| e.desc().to_string())?;
        record_names(dir.iter().map(|e| {
            e.map(|e| e.file_name().to_string_lossy().into_owned())
                .map_err(|e| e.desc().to_string())
        }))
    }

    /// One record: opened relative to the directory without following a
    /// symlink or blocking on a FIFO; only a regular file, at most
    /// [`claim::MAX_RECORD`] bytes.
    fn read_record(
        &self,
        name: &str,
    ) -> std::result::Result<(Record, crate::cpuset::CpuSet, u32), RecordError> {
        use nix::errno::Errno;
        let fd = nix::fcntl::openat(
            self.dir.as_fd(),
            name,
            OFlag::O_RDONLY
                | OFlag::O_NOFOLLOW
                | OFlag::O_NONBLOCK
                | OFlag::O_CLOEXEC
                | OFlag::O_NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::ENOENT => RecordError::Gone,
            Errno::ELOOP => RecordError::Invalid("a symlink, never followed".into()),
            Errno::EACCES | Errno::EPERM | Errno::ENXIO | Errno::ENODEV | Errno::EISDIR => {
                RecordError::Invalid(e.desc().into())
            }
            e => RecordError::Unreadable(format!("open: {}", e.desc())),
        })?;
        let file = File::from(fd);
        let meta = file.metadata().map_err(|e| {
            RecordError::Unreadable(format!("fstat: {}", crate::error::io_words(&e)))
        })?;
        if !meta.is_file() {
            return Err(RecordError::Invalid("not a regular file".into()));
        }
        if meta.len() > claim::MAX_RECORD {
            return Err(RecordError::Invalid(format!(
                "larger than {} bytes ({} bytes)",
                claim::MAX_RECORD,
                meta.len()
            )));
        }
        let mut buf = Vec::new();
        file.take(claim::MAX_RECORD + 1)
            .read_to_end(&mut buf)
            .map_err(|e| {
                RecordError::Unreadable(format!("read: {}", crate::error::io_words(&e)))
            })?;
        let text =
            std::str::from_utf8(&buf).map_err(|_| RecordError::Invalid("not UTF-8".into()))?;
        let (rec, cpus) = Record::parse(text).map_err(RecordError::Invalid)?;
        Ok((rec, cpus, meta.uid()))
    }
}

/// A record's name, the PID it names and its owner's uid.
type Owned = (String, u32, u32);

/// The PIDs `/proc/locks` names as holding a lock on the file of `fd`
/// (0: one this `/proc` cannot see), sorted, each once.
pub fn flock_holder_pids(fd: BorrowedFd) -> Vec<u32> {
    let Ok(st) = nix::sys::stat::fstat(fd) else {
        return Vec::new();
    };
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
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
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| claim::printable(c.trim_end()));
            match (comm, std::fs::metadata(format!("/proc/{pid}"))) {
                (Ok(comm), Ok(m)) => format!("pid {pid} ({comm}) of uid {}", m.uid()),
                _ => format!("a process that inherited it from pid {pid} (exited)"),
            }
        })
        .collect()
}

/// A reading of the claim records under way ([`StateDir::read`]).
struct RecordsRead<'a> {
    /// The CPUs that exist: a record's CPUs are clipped to them.
    possible: &'a CpuSet,
    /// This process's effective uid.
    me: u32,
    /// The machine's process groups, read once when a claim first lives
    /// by its group ([`process_groups`]).
    groups: Option<std::result::Result<HashMap<u32, Vec<u32>>, String>>,
    /// The claims read so far, with their warnings.
    claims: Claims,
    /// The stale records this user may remove.
    stale: Vec<String>,
    /// The PID namespace of this `/proc` ([`view_pid_ns`]), read when a
    /// record first names one.
    view: Option<Option<PidNs>>,
    /// Every process with its namespace ([`scan_pid_namespaces`]), read
    /// when a record of another namespace is first judged.
    scan: Option<NsScan>,
}

impl RecordsRead<'_> {
    /// The PID namespace of this `/proc`, read once.
    fn view(&mut self) -> Option<PidNs> {
        *self.view.get_or_insert_with(view_pid_ns)
    }

    /// Every process with its PID namespace, read once.
    fn scan(&mut self) -> &NsScan {
        let view = self.view();
        self.scan.get_or_insert_with(|| scan_pid_namespaces(view))
    }
}

/// The CPUs of record `shown` within the possible ones: a record naming
/// CPUs that do not exist is warned about in `r` (as `foreign` or not),
/// and `None` when none of its CPUs exists (it claims nothing).
fn clip_to_possible(
    r: &mut RecordsRead,
    shown: &Path,
    cpus: CpuSet,
    foreign: bool,
) -> Option<CpuSet> {
    let possible = r.possible;
    let named = (cpus.len(), cpus.last().unwrap_or(0));
    let cpus = cpus.intersection(possible);
    let beyond = named.0 - cpus.len();
    if beyond > 0 {
        warnings_of(&mut r.claims, foreign).push(format!(
            "claims: record {} names {} CPUs that do not exist (up to CPU {}; possible: {}): {}",
            shown.display(),
            beyond,
            named.1,
            possible.to_compact_list(),
            if cpus.is_empty() {
                "it claims nothing, ignored"
            } else {
                "only the possible ones count"
            }
        ));
        if cpus.is_empty() {
            return None;
        }
    }
    Some(cpus)
}

/// Whether record `rec` (`shown`) lives by its process group only (its
/// PID, `live`, is gone or names another process, and it leads its group),
/// and the group's members still alive when the group exists. `None`
/// when the group's members could not all be read: neither live nor
/// stale, its CPUs unknown (unreadable in `r`) and the record kept.
fn group_members(
    r: &mut RecordsRead,
    shown: &Path,
    rec: &Record,
    live: &Liveness,
) -> Option<(bool, Vec<Liveness>)> {
    // The PID is gone (or names another process): the claim can
    // live only by its process group.
    let pid_gone = match live {
        Liveness::Dead => true,
        Liveness::Alive { start_time, .. } => start_time.is_some_and(|s| s != rec.start_time),
    };
    let follows_group = rec.pgid == rec.pid && pid_gone;
    let members: Vec<Liveness> = if follows_group && group_exists(rec.pgid) {
        match r.groups.get_or_insert_with(process_groups) {
            Ok(groups) => groups
                .get(&rec.pgid)
                .map(|pids| {
                    pids.iter()
                        .map(|p| liveness(*p))
                        .filter(|l| *l != Liveness::Dead)
                        .collect()
                })
                .unwrap_or_default(),
            // A group whose members could not all be read is
            // neither live nor stale: its CPUs are unknown, and
            // the record is kept.
            Err(why) => {
                r.claims.unreadable.push(format!(
                    "claims: record {}: cannot tell whether process group {} still runs: {why}",
                    shown.display(),
                    rec.pgid
                ));
                return None;
            }
        }
    } else {
        Vec::new()
    };
    Some((follows_group, members))
}

/// What a record is worth, whether its claim lives by its process group
/// only, and where its holder is when in another PID namespace.
type Judged = (Verdict, bool, Option<Elsewhere>);

/// Judges record `rec` (`shown`), whose PID is this reader's `/proc`'s,
/// its process being `live` ([`claim::judge`], with its group's members
/// from [`group_members`]). `None`: the group's members could not all be
/// read (unreadable in `r`), the record is kept.
fn judge_here(
    r: &mut RecordsRead,
    shown: &Path,
    rec: &Record,
    file_uid: u32,
    live: &Liveness,
) -> Option<Judged> {
    let (follows_group, members) = group_members(r, shown, rec, live)?;
    Some((
        claim::judge(rec, file_uid, live, &members),
        follows_group,
        None,
    ))
}

/// Judges record `rec`, whose PID is numbered in PID namespace `ns`, not
/// this reader's `/proc`'s: the holder is found by its namespace among
/// every process ([`claim::locate`] on [`RecordsRead::scan`]) and judged
/// under the PID it has here ([`claim::judge`]); a holder this reader
/// cannot see is honoured unchecked ([`claim::judge_unseen`]), its record
/// never removed.
fn judge_elsewhere(r: &mut RecordsRead, ns: PidNs, rec: &Record, file_uid: u32) -> Judged {
    match claim::locate(r.scan(), ns, rec.pid, rec.pgid) {
        Sight::Unseen(why) => (
            claim::judge_unseen(rec, file_uid),
            false,
            Some(Elsewhere {
                ns,
                here: None,
                unchecked: Some(why),
            }),
        ),
        Sight::Seen { holder, members } => {
            let live = holder.map_or(Liveness::Dead, liveness);
            let pid_gone = match &live {
                Liveness::Dead => true,
                Liveness::Alive { start_time, .. } => {
                    start_time.is_some_and(|s| s != rec.start_time)
                }
            };
            let follows_group = rec.pgid == rec.pid && pid_gone;
            let members: Vec<Liveness> = if follows_group {
                members
                    .iter()
                    .map(|p| liveness(*p))
                    .filter(|l| *l != Liveness::Dead)
                    .collect()
            } else {
                Vec::new()
            };
            (
                claim::judge(rec, file_uid, &live, &members),
                follows_group,
                Some(Elsewhere {
                    ns,
                    here: holder.filter(|_| !pid_gone),
                    unchecked: None,
                }),
            )
        }
    }
}

/// Where a warning about a record goes: `foreign_warnings` for a record
/// of another user than root and this one (`foreign`), else `warnings`.
fn warnings_of(claims: &mut Claims, foreign: bool) -> &mut Vec<String> {
    if foreign {
        &mut claims.foreign_warnings
    } else {
        &mut claims.warnings
    }
}

/// Why a record could not be used.
#[derive(Debug)]
enum RecordError {
    /// Removed since the listing.
    Gone,
    /// Not a record (a symlink, a FIFO, garbage, too large): it claims
    /// nothing.
    Invalid(String),
    /// An error that says nothing about the file (`EMFILE`, `ENOMEM`,
    /// `EIO`...): its claim is unknown.
    Unreadable(String),
}

/// The record names among `entries` (a directory listing, in any order),
/// with their PIDs, sorted; the first error ends the listing (an iterator
/// over `getdents64(2)` may return the same error forever), as do more
/// than [`claim::MAX_ENTRIES`] entries of any name.
pub fn record_names(
    entries: impl Iterator<Item = std::result::Result<String, String>>,
) -> std::result::Result<Vec<(String, u32)>, String> {
    let mut names = Vec::new();
    for (i, e) in entries.enumerate() {
        if i >= claim::MAX_ENTRIES {
            return Err(format!(
                "more than {} entries; pinrun reads a state directory completely or not at all",
                claim::MAX_ENTRIES
            ));
        }
        let name = e.map_err(|why| format!("getdents64: {why}"))?;
        if let Some(pid) = claim::record_pid(&name) {
            names.push((name, pid));
        }
    }
    names.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    Ok(names)
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
/// ([`crate::claim::judge`] takes a zombie as ended; a zombie main thread
/// whose other threads run is a live process, [`live_threads`]).
pub fn live_member(pid: u32, pgid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
        stat_field::<u32>(&st, 5) == Some(pgid)
            && (!matches!(stat_state(&st), Some('Z' | 'X')) || !live_threads(pid).is_empty())
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
fn live_threads(pid: u32) -> Vec<(u32, String)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tids: Vec<u32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    tids.into_iter()
        .filter_map(|t| {
            let task = format!("/proc/{pid}/task/{t}");
            let stat = std::fs::read_to_string(format!("{task}/stat")).ok()?;
            if matches!(stat_state(&stat), Some('Z' | 'X')) {
                return None;
            }
            Some((t, std::fs::read_to_string(format!("{task}/status")).ok()?))
        })
        .collect()
}

/// The uids (`Uid:`: real, effective, saved, filesystem) and the
/// `Cpus_allowed_list` of one `status` text, added to `uids` and
/// `affinity`.
fn add_status(status: &str, uids: &mut Vec<u32>, affinity: &mut Option<crate::cpuset::CpuSet>) {
    for line in status.lines() {
        if let Some(u) = line.strip_prefix("Uid:") {
            for u in u.split_whitespace().filter_map(|u| u.parse::<u32>().ok()) {
                if !uids.contains(&u) {
                    uids.push(u);
                }
            }
        } else if let Some(l) = line.strip_prefix("Cpus_allowed_list:")
            && let Ok(set) = crate::cpuset::CpuSet::parse_sysfs_list(l.trim(), None)
        {
            match affinity {
                Some(a) => a.union_with(&set),
                None => *affinity = Some(set),
            }
        }
    }
}

/// The live members of process group `pgid` ([`live_member`]), from one
/// listing of `/proc` ([`process_groups`]); its errors.
pub fn live_members(pgid: u32) -> std::result::Result<Vec<u32>, String> {
    if !group_exists(pgid) {
        return Ok(Vec::new());
    }
    Ok(process_groups()?
        .remove(&pgid)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| live_member(*p, pgid))
        .collect())
}

/// Whether a claim of `pid` started at `start_time`, following process
/// group `pgid` (its PID when the launch led its group, 0: none), still
/// lives, as [`crate::claim::judge`] judges a record: its process runs, or
/// it led its group, its PID is not reused, and the group has a live
/// member. A group whose members cannot be read lives (nothing is undone
/// for a claim that may still run).
pub fn claim_lives(pid: u32, start_time: u64, pgid: u32) -> bool {
    match liveness(pid) {
        Liveness::Alive {
            start_time: Some(s),
            ..
        } if s != start_time => false,
        Liveness::Alive { .. } => true,
        Liveness::Dead if pgid != 0 && pgid == pid => {
            live_members(pgid).map_or(true, |m| !m.is_empty())
        }
        Liveness::Dead => false,
    }
}

/// Every process group of `/proc` with its members' PIDs (field 5 of each
/// `/proc/<pid>/stat`); read once per listing, only when a record's PID is
/// gone and its group may live.
///
/// Errors: `/proc` that cannot be listed, or a process's `stat` that
/// cannot be read for another reason than the process having exited
/// (`ENOENT`, `ESRCH`): `EMFILE` under a small `ulimit -n` hid every
/// member, and a live group read as empty would have its claim judged
/// stale and its record removed. The message names the path and the
/// error; a resource error is also noted for `read-starved`
/// ([`super::root::note_io_error`]).
fn process_groups() -> std::result::Result<HashMap<u32, Vec<u32>>, String> {
    let failed = |path: &str, e: &std::io::Error| {
        super::root::note_io_error(e, &|| path.to_string());
        format!("reading {path}: {}", crate::error::io_words(e))
    };
    let mut out: HashMap<u32, Vec<u32>> = HashMap::new();
    let dir = std::fs::read_dir("/proc").map_err(|e| failed("/proc", &e))?;
    for e in dir {
        let e = e.map_err(|e| failed("/proc", &e))?;
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let path = format!("/proc/{pid}/stat");
        match std::fs::read_to_string(&path) {
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
pub fn liveness(pid: u32) -> Liveness {
    if !claim::valid_pid(pid) {
        return Liveness::Dead;
    }
    let dir = format!("/proc/{pid}");
    if let Ok(stat) = std::fs::read_to_string(format!("{dir}/stat")) {
        // Its live threads: a zombie main thread with live threads is a
        // running process; their uids and affinities together are the
        // process's (a thread may run as another uid, or be pinned apart
        // from the main thread inside the claimed CPUs).
        let threads = live_threads(pid);
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
            && let Ok(status) = std::fs::read_to_string(format!("{dir}/status"))
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
        Liveness::Dead => false,
        Liveness::Alive { start_time, .. } => start_time.is_none_or(|s| s == start),
    };
    let view = if ns.is_some() { view_pid_ns() } else { None };
    let Some(ns) = ns.filter(|n| Some(*n) != view) else {
        return Ok(runs(liveness(pid)));
    };
    match claim::locate(&scan_pid_namespaces(view), ns, pid, 0) {
        Sight::Unseen(why) => Err(why),
        Sight::Seen { holder, .. } => Ok(holder.is_some_and(|h| runs(liveness(h)))),
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
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let levels = ns_ids(&status, "NSpid:").len();
    if levels <= 1 {
        own_pid_ns()
    } else {
        pid_ns_of("/proc/1/ns/pid").ok()
    }
}

/// The numbers of line `key` (`NSpid:`, `NSpgid:`) of a `status` text.
fn ns_ids(status: &str, key: &str) -> Vec<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| {
            v.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default()
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
pub fn scan_pid_namespaces(view: Option<PidNs>) -> NsScan {
    let mut scan = NsScan {
        view,
        ..NsScan::default()
    };
    let mut gap = None;
    let failed = |path: &str, e: &std::io::Error| {
        super::root::note_io_error(e, &|| path.to_string());
        format!("{path}: {}", crate::error::io_words(e))
    };
    let gone = |e: &std::io::Error| matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH));
    let dir = match std::fs::read_dir("/proc") {
        Ok(d) => d,
        Err(e) => {
            scan.gap = Some(failed("/proc", &e));
            return scan;
        }
    };
    for e in dir {
        let e = match e {
            Ok(e) => e,
            Err(e) => {
                gap.get_or_insert_with(|| failed("/proc", &e));
                break;
            }
        };
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let ns = match pid_ns_of(&format!("/proc/{pid}/ns/pid")) {
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
            let path = format!("/proc/{pid}/status");
            match std::fs::read_to_string(&path) {
                Ok(status) => {
                    p.nspid = ns_ids(&status, "NSpid:");
                    p.nspgid = ns_ids(&status, "NSpgid:");
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
        gap = Some("/proc shows no PID 1 (mounted with hidepid=?)".into());
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
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
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

/// kubelet's exclusive CPU assignments below `root`, and a warning when
/// its state file exists but cannot be used. CPUs outside `possible`
/// are dropped ([`crate::claim::parse_kubelet_state`]).
pub fn read_kubelet(root: &Root, possible: &CpuSet) -> (Vec<Claim>, Option<String>) {
    if !root.exists(KUBELET_STATE) {
        return (Vec::new(), None);
    }
    let shown = root.path(KUBELET_STATE);
    match root.read(KUBELET_STATE) {
        None => (
            Vec::new(),
            Some(format!("claims: cannot read {}", shown.display())),
        ),
        Some(text) => match claim::parse_kubelet(&text, possible.last().unwrap_or(0)) {
            Ok(c) => (c, None),
            Err(e) => (
                Vec::new(),
                Some(format!("claims: {}: {e}", shown.display())),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing that fails ends at its first error, even when the
    /// iterator would repeat that error forever (a persistent
    /// `getdents64(2)` failure once spun with the lock held).
    #[test]
    fn a_failing_listing_ends_at_its_first_error() {
        let ok = ["7.1", "x", "3.9.00000000000000ff"].map(|n| Ok(n.to_string()));
        let forever = std::iter::repeat_with(|| Err("Input/output error".to_string()));
        assert_eq!(
            record_names(ok.clone().into_iter().chain(forever)),
            Err("getdents64: Input/output error".into())
        );
        assert_eq!(
            record_names(ok.into_iter()),
            Ok(vec![("3.9.00000000000000ff".into(), 3), ("7.1".into(), 7)])
        );
        // Too many entries: refused, never read in part.
        let many = (0..).map(|i| Ok(format!("f{i}")));
        assert!(
            record_names(many)
                .unwrap_err()
                .contains("more than 1048576 entries")
        );
    }

    /// This process is found in the scan by its own PID namespace, and
    /// `NSpid:`/`NSpgid:` lines are read as numbers.
    #[test]
    fn this_process_is_found_by_its_pid_namespace() {
        let own = own_pid_ns().expect("/proc/self/ns/pid");
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        if ns_ids(&status, "NSpid:").len() == 1 {
            assert_eq!(view_pid_ns(), Some(own));
        }
        // As if /proc were another namespace's: NSpid is read too.
        let scan = scan_pid_namespaces(None);
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
            ns_ids("Name:\tx\nNSpid:\t4242\t1\nNSpgid:\t4240\t0\n", "NSpid:"),
            vec![4242, 1]
        );
        assert_eq!(ns_ids("Name:\tx\n", "NSpgid:"), Vec::<u32>::new());
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
}
