//! `--thread-map`'s part of a launch: opening `--thread-log` and starting
//! the watcher ([`crate::apply::per_thread`]) as a duty of the helper,
//! with pinrun's errors.

use crate::apply::helper::Duty;
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode};
use crate::plan::Plan;
use crate::request::Request;
use std::fs::File;
use std::path::Path;

/// The error of a watcher that could not be started.
pub fn watcher_error(e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::WatcherFailed,
        format!(
            "--thread-map: cannot start the watcher process: {}",
            crate::error::io_words(e)
        ),
    )
    .hint(crate::system::process::start_hint(e))
}

/// Opens `--thread-log` as the launch does (`create`: appending, created
/// 0644) or, for `--dry-run`, checks that it would (`create` false:
/// nothing is created or written). The file is opened relative to its
/// directory with `O_NOFOLLOW` (a symlink is refused, never followed),
/// `O_NONBLOCK` (a FIFO without a reader fails with ENXIO instead of
/// blocking the launch) and `O_CLOEXEC`; refused unless it is a regular
/// file, and when another user owns it in a sticky world-writable
/// directory unless that user owns the directory (the rule of the
/// kernel's `fs.protected_regular`, fs/namei.c `may_create_in_sticky`;
/// as the state directory is guarded in `system::state_dir`). `Ok(None)`:
/// a dry run of a file not there yet whose directory is writable.
/// Errors: watcher-failed, naming the path and the cause.
pub fn open_thread_log(path: &Path, create: bool) -> Result<Option<File>, Error> {
    use nix::errno::Errno;
    use nix::fcntl::OFlag;
    use nix::sys::stat::{Mode, SFlag, fstat};
    let fail = |what: String, hint: &str| {
        Error::new(
            ErrorCode::WatcherFailed,
            format!("--thread-log {}: {what}", path.display()),
        )
        .hint(hint)
    };
    const WRITABLE: &str = "give a file in a directory this user can write";
    let Some(name) = path.file_name() else {
        return Err(fail("is not a file name".into(), WRITABLE));
    };
    let dir_path = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = nix::fcntl::open(
        dir_path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| fail(e.desc().into(), WRITABLE))?;
    let mut flags = OFlag::O_WRONLY
        | OFlag::O_APPEND
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_CLOEXEC
        | OFlag::O_NOCTTY;
    if create {
        flags |= OFlag::O_CREAT;
    }
    let fd = match nix::fcntl::openat(&dir, name, flags, Mode::from_bits_truncate(0o644)) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) if !create => {
            // The launch would create it: the directory must be writable.
            return match nix::unistd::access(dir_path, nix::unistd::AccessFlags::W_OK) {
                Ok(()) => Ok(None),
                Err(e) => Err(fail(e.desc().into(), WRITABLE)),
            };
        }
        Err(Errno::ELOOP) => {
            return Err(fail(
                "is a symbolic link; pinrun never follows one to write its log".into(),
                "give the path of the file itself, in a directory only you control",
            ));
        }
        Err(Errno::ENXIO) => {
            return Err(fail(
                "is a FIFO or socket without a reader, not a regular file".into(),
                "give a regular file; to follow the log as it grows: tail -f FILE",
            ));
        }
        Err(e) => return Err(fail(e.desc().into(), WRITABLE)),
    };
    let st = fstat(&fd).map_err(|e| fail(e.desc().into(), WRITABLE))?;
    if st.st_mode & SFlag::S_IFMT.bits() != SFlag::S_IFREG.bits() {
        let what = crate::words::file_kind(st.st_mode);
        return Err(fail(
            format!("is {what}, not a regular file; pinrun writes its log only to a regular file"),
            "give a regular file; to follow the log as it grows: tail -f FILE",
        ));
    }
    let d = fstat(&dir).map_err(|e| fail(e.desc().into(), WRITABLE))?;
    let me = nix::unistd::geteuid().as_raw();
    let sticky_shared = d.st_mode & 0o1000 != 0 && d.st_mode & 0o002 != 0;
    if sticky_shared && st.st_uid != me && st.st_uid != d.st_uid {
        return Err(fail(
            format!(
                "belongs to uid {} in the sticky world-writable directory {}: another user's file there is never appended to (the kernel's protected_regular rule)",
                st.st_uid,
                dir_path.display()
            ),
            "give a path in a directory only you control, or a new file name",
        ));
    }
    Ok(Some(File::from(fd)))
}

/// `--dry-run`'s prediction of [`watcher_duty`]'s log: the same checks
/// ([`open_thread_log`] without creating), when the plan has a thread map
/// and the launch would happen on this host (not under `--sysroot`).
pub fn check_thread_log(req: &Request, plan: &Plan) -> Result<(), Error> {
    match (&plan.thread_map, &req.threads.thread_log) {
        (Some(_), Some(path)) if req.sysroot.is_none() => open_thread_log(path, false).map(drop),
        _ => Ok(()),
    }
}

/// The watcher's duty when the plan has a thread map
/// ([`crate::apply::per_thread::duty`]; its descriptors are handed over
/// later, [`hand_watcher_fds`]); `None` without a thread map.
pub fn watcher_duty(req: &Request, plan: &Plan, possible: &CpuSet) -> Option<Duty> {
    let map = plan.thread_map.as_ref()?;
    Some(crate::apply::per_thread::duty(
        map.clone(),
        possible.clone(),
        req.threads.thread_log.clone(),
    ))
}

/// Opens `--thread-log` ([`open_thread_log`]) and the watcher's perf
/// events ([`crate::apply::per_thread::events`]) when the plan has a
/// thread map, and hands them to the helper over `w`
/// ([`crate::apply::helper::hand_fds`]); after `--probe`, so that the
/// events do not count its threads. pinrun's copies close at exec.
pub fn hand_watcher_fds(req: &Request, plan: &Plan, w: &std::os::fd::OwnedFd) -> Result<(), Error> {
    use std::os::fd::AsRawFd;
    let Some(map) = &plan.thread_map else {
        return Ok(());
    };
    if let Some(path) = &req.threads.thread_log
        && let Some(f) = open_thread_log(path, true)?
    {
        crate::apply::helper::hand_fds(w, crate::apply::per_thread::LOG_FD, &[f.as_raw_fd()])
            .map_err(|e| watcher_error(&e))?;
    }
    let events = crate::apply::per_thread::events(map, !req.threads.poll_only);
    let raw: Vec<i32> = events.iter().map(|f| f.as_raw_fd()).collect();
    crate::apply::helper::hand_fds(w, crate::apply::per_thread::PERF_FDS, &raw)
        .map_err(|e| watcher_error(&e))
}
