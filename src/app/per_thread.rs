//! `--thread-map`'s part of a launch: opening `--thread-log` and starting
//! the watcher ([`crate::apply::per_thread`]) as a duty of the helper,
//! with pinrun's errors.

use crate::apply::helper::Duty;
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode};
use crate::plan::Plan;
use crate::request::Request;

/// The error of a watcher that could not be started.
pub fn watcher_error(e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::WatcherFailed,
        format!("--thread-map: cannot start the watcher process: {e}"),
    )
    .hint("pidfd_open(2) needs Linux 5.3; check the process limit (ulimit -u) and that /proc is mounted")
}

/// Opens `--thread-log` (appending, created 0644) and prepares the
/// watcher when the plan has a thread map: the descriptors the helper
/// keeps and its duty ([`crate::apply::helper::spawn_duties`] starts it);
/// `None` without a thread map.
pub fn watcher_duty(
    req: &Request,
    plan: &Plan,
    possible: &CpuSet,
) -> Result<Option<(Vec<i32>, Duty)>, Error> {
    let Some(map) = &plan.thread_map else {
        return Ok(None);
    };
    let log = match &req.threads.thread_log {
        None => None,
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .map_err(|e| {
                    Error::new(
                        ErrorCode::WatcherFailed,
                        format!("--thread-log {}: {e}", path.display()),
                    )
                    .hint("give a file in a directory this user can write")
                })?,
        ),
    };
    Ok(Some(crate::apply::per_thread::duty(
        map.clone(),
        possible.clone(),
        log,
        !req.threads.poll_only,
    )))
}
