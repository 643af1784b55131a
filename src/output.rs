//! Where pinrun's own output goes, and what a failed write means: every
//! write to stdout and stderr goes through here (the renderers in
//! [`crate::report`], [`crate::show`] and [`crate::fleet::report`] only return text).
//!
//! - stdout ([`print_out`]): a reader that has gone away (`pinrun --show |
//!   head -1`) ends pinrun by SIGPIPE, silently, as it ends other tools;
//!   when the caller ignored SIGPIPE, or closed stdout before pinrun
//!   started, it is pinrun's own failure (exit 125).
//! - stderr ([`to_stderr`], [`print_error`]): notes, warnings and errors,
//!   written ignoring errors, so that a closed stderr or a pipe without a
//!   reader never stops a launch (`eprint!` would panic).

use crate::error::{Error, ErrorCode};
use crate::ffi;
use std::io::Write;

/// Writes `text` to stdout (see the module doc for a failed write).
pub fn print_out(text: &str) -> Result<(), Error> {
    print_out_with(|out| out.write_all(text.as_bytes()))
}

/// [`print_out`] for output written piece by piece (`--show --json`, CPU
/// by CPU, so that memory stays linear in the machine), through a 64 KiB
/// buffer.
pub fn print_out_with(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Error> {
    if ffi::std_fd_closed_at_start(1) {
        return Err(stdout_failed(std::io::Error::from_raw_os_error(
            libc::EBADF,
        )));
    }
    let mut out = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(stdout_failed)
}

/// clap's `--help` or `--version` text on stdout, styled as clap styles it
/// (see the module doc for a failed write).
pub fn print_clap(e: &clap::Error) -> Result<(), Error> {
    if ffi::std_fd_closed_at_start(1) {
        return Err(stdout_failed(std::io::Error::from_raw_os_error(
            libc::EBADF,
        )));
    }
    e.print().map_err(stdout_failed)
}

/// A failed write to stdout: death by SIGPIPE for a pipe without a reader
/// (unless the caller ignores SIGPIPE), else pinrun's own failure (exit
/// 125), the errno in words ([`crate::error::io_words`]) and a hint where
/// one is known: EPIPE (the reader went away), ENOSPC (a full file
/// system), EBADF (stdout closed).
pub fn stdout_failed(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe && !ffi::sigpipe_ignored_at_start() {
        ffi::die_by_sigpipe();
    }
    let err = Error::new(
        ErrorCode::Io,
        format!("writing stdout: {}", crate::error::io_words(&e)),
    );
    match e.raw_os_error() {
        Some(libc::EPIPE) => err.hint(
            "the reader of pinrun's output exited before reading it all, and SIGPIPE is ignored (trap '' PIPE), so the write fails instead of ending pinrun; read the whole output, or run pinrun with SIGPIPE at its default",
        ),
        Some(libc::ENOSPC) => err.hint(
            "the file system of pinrun's standard output is full (or it is /dev/full): free space there or redirect the output elsewhere",
        ),
        Some(libc::EBADF) => {
            err.hint("standard output is closed (>&-): give pinrun a stdout, e.g. >/dev/null")
        }
        _ => err,
    }
}

/// Writes `text` to stderr, ignoring errors: notes and warnings before
/// exec must not stop a launch whose stderr is closed or a pipe without a
/// reader.
pub fn to_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// The error as `pinrun: <message>` and `hint: <hint>` on stderr (first,
/// so that a stdout without a reader cannot lose it), and with `--json` as
/// `{"error": ...}` on stdout.
pub fn print_error(e: &Error, json: bool) {
    let mut text = format!("pinrun: {}\n", e.message);
    if let Some(h) = &e.hint {
        text.push_str(&format!("hint: {h}\n"));
    }
    to_stderr(&text);
    if json {
        let _ = print_out(&format!("{}\n", crate::report::error_json(e)));
    }
}
