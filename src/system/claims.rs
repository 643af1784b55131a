//! Reading claims: the state directory (opened without following
//! symlinks, checked, and locked with `flock(2)`), its records judged
//! against `/proc`, and kubelet's CPU manager state file. Records are
//! written by [`crate::apply::claims`] under the same lock.

use super::root::Root;
use crate::claim::{self, Claim, Claims, Holder, Liveness, Record, Verdict};
use crate::error::{Error, ErrorCode, Result};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
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
/// The most directory entries read (a directory flooded by a hostile user
/// cannot make pinrun slow).
pub const MAX_ENTRIES: usize = 4096;
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
    // "dir/" would make the kernel resolve a symlink "dir" before O_NOFOLLOW
    // applies: drop trailing slashes first.
    let trimmed = path.to_string_lossy();
    let trimmed = trimmed.trim_end_matches('/');
    let path = if trimmed.is_empty() {
        Path::new("/")
    } else {
        Path::new(trimmed)
    };
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let open = || nix::fcntl::open(path, flags, Mode::empty());
    match open() {
        Ok(fd) => Ok(Some(fd)),
        Err(nix::errno::Errno::ENOENT) if create => {
            match nix::unistd::mkdir(path, Mode::from_bits_truncate(0o1777)) {
                Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
                Err(e) => {
                    return Err(dir_error(path, format!("cannot create it: {}", e.desc())).hint(
                        format!(
                            "create it once as root: install -d -m 1777 {} (or a systemd-tmpfiles line: d {} 1777 root root -), or use --state-dir DIR",
                            path.display(),
                            path.display()
                        ),
                    ));
                }
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

impl StateDir {
    /// Opens `path` (creating it, mode 1777, when `create`) and checks that
    /// no other user could delete or replace records in it (owned by root
    /// or this user; writable by others only with the sticky bit); not yet
    /// locked. `Ok(None)`: it does not exist and was not to be created.
    pub fn open(path: &Path, create: bool) -> Result<Option<StateDir>> {
        let Some(fd) = open_dir(path, create)? else {
            return Ok(None);
        };
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
        Ok(Some(StateDir {
            dir: File::from(fd),
            path: path.to_path_buf(),
            locked: false,
        }))
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
                    return Err(dir_error(
                        &self.path,
                        format!(
                            "still locked after {:.0}s by another process",
                            timeout.as_secs_f64()
                        ),
                    )
                    .hint(format!(
                        "find the holder with `fuser -v {}` (a pinrun holds it only for milliseconds)",
                        self.path.display()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(dir_error(&self.path, format!("flock: {e}")));
                }
            }
        }
    }

    /// Releases the lock (the directory stays open).
    pub fn unlock(&mut self) {
        if self.locked {
            let _ = self.dir.unlock();
            self.locked = false;
        }
    }

    /// Reads every record: live claims, warnings for unusable files, and
    /// the names of stale records (to be removed under the exclusive lock).
    pub fn read(&self) -> (Claims, Vec<String>) {
        let mut claims = Claims::default();
        let mut stale = Vec::new();
        let names = match self.names() {
            Ok(n) => n,
            Err(e) => {
                claims.state_warnings.push(format!(
                    "claims: cannot list {}: {}",
                    self.path.display(),
                    e.desc()
                ));
                return (claims, stale);
            }
        };
        if names.len() >= MAX_ENTRIES {
            claims.state_warnings.push(format!(
                "claims: {} has more than {MAX_ENTRIES} claim records; only the first were read",
                self.path.display()
            ));
        }
        for name in names {
            let Some(pid) = claim::record_pid(&name) else {
                continue;
            };
            let live = liveness(pid);
            let shown = self.path.join(&name);
            match self.read_record(&name) {
                Err(why) => {
                    let dead = live == Liveness::Dead;
                    let sink = if self.foreign(&name) {
                        &mut claims.foreign_warnings
                    } else {
                        &mut claims.warnings
                    };
                    sink.push(format!(
                        "claims: record {} is unusable ({why}); {}",
                        shown.display(),
                        if dead {
                            "its pid is gone: reclaimed"
                        } else {
                            "its pid may be alive: ignored, CPUs unknown"
                        }
                    ));
                    if dead {
                        stale.push(name);
                    }
                }
                Ok((rec, cpus, file_uid)) => {
                    if rec.pid != pid {
                        claims.warnings.push(format!(
                            "claims: record {} names pid {}, not {pid}: ignored",
                            shown.display(),
                            rec.pid
                        ));
                        continue;
                    }
                    match claim::judge(&rec, file_uid, &live) {
                        Verdict::Stale => stale.push(name),
                        Verdict::Forged(why) => {
                            let sink =
                                if file_uid != 0 && file_uid != nix::unistd::geteuid().as_raw() {
                                    &mut claims.foreign_warnings
                                } else {
                                    &mut claims.warnings
                                };
                            sink.push(format!("claims: record {} {why}: ignored", shown.display()))
                        }
                        Verdict::Live => claims.claims.push(Claim {
                            holder: Holder::Process {
                                pid: rec.pid,
                                start_time: rec.start_time,
                                uid: file_uid,
                                command: rec.command,
                                since: rec.time,
                                record: name,
                            },
                            cpus,
                        }),
                    }
                }
            }
        }
        (claims, stale)
    }

    /// Whether the entry `name` is owned by a user other than root and us.
    fn foreign(&self, name: &str) -> bool {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(self.path.join(name))
            .is_ok_and(|m| m.uid() != 0 && m.uid() != nix::unistd::geteuid().as_raw())
    }

    fn names(&self) -> nix::Result<Vec<String>> {
        let mut dir = nix::dir::Dir::openat(
            self.dir.as_fd(),
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let mut names: Vec<String> = dir
            .iter()
            .flatten()
            .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
            // Only record names count toward the limit: other files cannot
            // push real records out of sight.
            .filter(|n| claim::record_pid(n).is_some())
            .take(MAX_ENTRIES)
            .collect();
        names.sort_by_key(|n| (claim::record_pid(n), n.clone()));
        Ok(names)
    }

    /// One record: opened relative to the directory without following a
    /// symlink or blocking on a FIFO; only a regular file, at most
    /// [`claim::MAX_RECORD`] bytes.
    fn read_record(
        &self,
        name: &str,
    ) -> std::result::Result<(Record, crate::cpuset::CpuSet, u32), String> {
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
            nix::errno::Errno::ELOOP => "a symlink, never followed".to_string(),
            e => e.desc().to_string(),
        })?;
        let file = File::from(fd);
        let meta = file.metadata().map_err(|e| e.to_string())?;
        if !meta.is_file() {
            return Err("not a regular file".into());
        }
        let mut buf = Vec::new();
        file.take(claim::MAX_RECORD)
            .read_to_end(&mut buf)
            .map_err(|e| e.to_string())?;
        let text = std::str::from_utf8(&buf).map_err(|_| "not UTF-8".to_string())?;
        let (rec, cpus) = Record::parse(text)?;
        Ok((rec, cpus, meta.uid()))
    }
}

/// Whether `pid` runs, and as whom. `/proc` hidden by `hidepid=` cannot
/// prove a process dead: `kill(pid, 0)` decides (ESRCH: dead).
pub fn liveness(pid: u32) -> Liveness {
    if !claim::valid_pid(pid) {
        return Liveness::Dead;
    }
    let dir = format!("/proc/{pid}");
    if let Ok(stat) = std::fs::read_to_string(format!("{dir}/stat")) {
        let parsed = claim::parse_stat(&stat);
        if let Some(('Z' | 'X', _)) = parsed {
            return Liveness::Dead;
        }
        let mut uids: Vec<u32> = std::fs::metadata(&dir)
            .map(|m| m.uid())
            .into_iter()
            .collect();
        if let Ok(status) = std::fs::read_to_string(format!("{dir}/status"))
            && let Some(line) = status.lines().find(|l| l.starts_with("Uid:"))
        {
            uids.extend(
                line[4..]
                    .split_whitespace()
                    .filter_map(|u| u.parse::<u32>().ok()),
            );
        }
        return Liveness::Alive {
            start_time: parsed.map(|(_, s)| s),
            uids,
        };
    }
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None) {
        Err(nix::errno::Errno::ESRCH) => Liveness::Dead,
        _ => Liveness::Alive {
            start_time: None,
            uids: Vec::new(),
        },
    }
}

/// This process: (pid, start time, effective uid), for its own record.
pub fn identity() -> Result<(u32, u64, u32)> {
    let pid = std::process::id();
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let (_, start) = claim::parse_stat(&stat).ok_or_else(|| {
        Error::new(
            ErrorCode::ClaimFailed,
            "--exclusive: cannot read this process's start time from /proc/self/stat",
        )
        .hint("claims need procfs mounted at /proc")
    })?;
    Ok((pid, start, nix::unistd::geteuid().as_raw()))
}

/// kubelet's exclusive CPU assignments below `root`, and a warning when
/// its state file exists but cannot be used.
pub fn read_kubelet(root: &Root) -> (Vec<Claim>, Option<String>) {
    if !root.exists(KUBELET_STATE) {
        return (Vec::new(), None);
    }
    let shown = root.path(KUBELET_STATE);
    match root.read(KUBELET_STATE) {
        None => (
            Vec::new(),
            Some(format!("claims: cannot read {}", shown.display())),
        ),
        Some(text) => match claim::parse_kubelet(&text) {
            Ok(c) => (c, None),
            Err(e) => (
                Vec::new(),
                Some(format!("claims: {}: {e}", shown.display())),
            ),
        },
    }
}
