//! `--thread-map`'s part of a launch: opening `--thread-log` and starting
//! the watcher ([`crate::apply::threads`]) with pinrun's errors.

use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode};
use crate::plan::Plan;
use crate::request::Request;
use std::os::fd::OwnedFd;

/// The error of a watcher that could not be started.
pub fn watcher_error(e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::WatcherFailed,
        format!("--thread-map: cannot start the watcher process: {e}"),
    )
    .hint("pidfd_open(2) needs Linux 5.3; check the process limit (ulimit -u) and that /proc is mounted")
}

/// Opens `--thread-log` (appending, created 0644) and starts the watcher
/// when the plan has a thread map; `None` without one. The returned
/// descriptor must live until exec.
pub fn start_watcher(
    req: &Request,
    plan: &Plan,
    possible: &CpuSet,
) -> Result<Option<OwnedFd>, Error> {
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
    crate::apply::threads::start(map, possible, log, !req.threads.poll_only)
        .map(Some)
        .map_err(|e| watcher_error(&e))
}
