//! Writing claims: this launch's record in the locked state directory
//! ([`crate::system::state_dir::StateDir`]), and removing stale ones. Every
//! file operation is relative to the directory's descriptor and never
//! follows a symlink.

use super::{Record, record_name};
use crate::error::{Error, ErrorCode, Result};
use crate::system::state_dir::{NoFiles, StateDir, no_files, predict_create};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::io::Write;
use std::path::Path;

/// How many random names are tried (one is enough unless `getrandom(2)`
/// is broken: 2^64 names cannot be pre-created).
const NAME_ATTEMPTS: u32 = 4;

/// Creates this launch's record (mode 0644, `O_EXCL|O_NOFOLLOW`, so an
/// existing file or symlink is never written through) under a name with a
/// random suffix ([`record_name`]), which no one can pre-create. Returns
/// its name.
pub fn write_record(dir: &StateDir, rec: &Record) -> Result<String> {
    let text = rec.render();
    if !rec.fits() {
        return Err(Error::new(
            ErrorCode::ClaimFailed,
            format!(
                "--exclusive: the claim's cpulist ({} characters) does not fit in a record ({} bytes, at most {})",
                rec.cpus.len(),
                text.len(),
                super::MAX_RECORD
            ),
        )
        .hint("claim fewer CPUs, or ranges (--cores N, --node NODES) rather than scattered CPUs"));
    }
    let fail = |what: String, hint: &str| cannot_write(dir.path(), what, hint);
    for _ in 0..NAME_ATTEMPTS {
        let suffix = crate::ffi::random_u64().map_err(|e| {
            fail(
                format!("getrandom: {}", crate::error::io_words(&e)),
                "the kernel's random number generator must be usable (Linux 3.17+)",
            )
        })?;
        let name = record_name(rec.pid, rec.start_time, suffix);
        let fd = match nix::fcntl::openat(
            dir.fd(),
            name.as_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o644),
        ) {
            Ok(fd) => fd,
            Err(nix::errno::Errno::EEXIST) => continue,
            Err(e) => return Err(unwritable(dir.path(), e)),
        };
        // The umask may have narrowed the mode: records are world-readable.
        let _ = nix::sys::stat::fchmod(&fd, Mode::from_bits_truncate(0o644));
        let mut file = std::fs::File::from(fd);
        if let Err(e) = file.write_all(text.as_bytes()) {
            remove(dir, &name);
            return Err(fail(crate::error::io_words(&e), NOT_WRITABLE));
        }
        return Ok(name);
    }
    Err(fail(
        format!(
            "{NAME_ATTEMPTS} random names for pid {} already exist",
            rec.pid
        ),
        "getrandom(2) returned names that exist: report this as a bug",
    ))
}

/// The hint of a state directory this user cannot write in.
const NOT_WRITABLE: &str =
    "the state directory must be writable (mode 1777 like /tmp); or use --state-dir DIR";

/// The refusal of a claim record in `dir`.
fn cannot_write(dir: &Path, what: String, hint: &str) -> Error {
    Error::new(
        ErrorCode::ClaimFailed,
        format!(
            "--exclusive: cannot write a claim record in {}: {what}",
            dir.display()
        ),
    )
    .hint(hint.to_string())
}

/// The refusal of a claim record in `dir` that the kernel answered `e`
/// (`openat(2)` `O_CREAT`, or [`predict_create`]'s prediction of it, so
/// that `--dry-run --exclusive` says what the launch says): why the
/// file system takes no file ([`no_files`]: procfs, sysfs, mounted
/// read-only, and the remedy), else that the directory must be writable.
pub fn unwritable(dir: &Path, e: nix::errno::Errno) -> Error {
    match no_files(dir) {
        Some(NoFiles::ReadOnly) => cannot_write(
            dir,
            e.desc().to_string(),
            &format!(
                "{}: remount it read-write (mount -o remount,rw on its mount point), or use --state-dir DIR on a writable file system",
                NoFiles::ReadOnly.words(dir)
            ),
        ),
        Some(k) => cannot_write(
            dir,
            e.desc().to_string(),
            &format!(
                "{}: use --state-dir DIR on a writable file system",
                k.words(dir)
            ),
        ),
        None => cannot_write(dir, e.desc().to_string(), NOT_WRITABLE),
    }
}

/// What [`write_record`] would answer in `dir`, asked of the kernel without
/// writing ([`predict_create`]): `--dry-run --exclusive` predicts the launch.
pub fn predict_write(dir: &Path) -> Result<()> {
    predict_create(dir).map_err(|e| unwritable(dir, e))
}

/// Removes a record (best effort: a stale record another user owns stays,
/// and is ignored by every reader; [`StateDir::remove`]).
pub fn remove(dir: &StateDir, name: &str) {
    dir.remove(name);
}
