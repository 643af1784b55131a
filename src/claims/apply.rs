//! Writing claims: this launch's record in the locked state directory
//! ([`crate::system::state_dir::StateDir`]), and removing stale ones. Every
//! file operation is relative to the directory's descriptor and never
//! follows a symlink.

use super::{Record, record_name};
use crate::error::{Error, ErrorCode, Result};
use crate::system::state_dir::StateDir;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::io::Write;

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
    let fail = |what: String, hint: &str| {
        Error::new(
            ErrorCode::ClaimFailed,
            format!(
                "--exclusive: cannot write a claim record in {}: {what}",
                dir.path().display()
            ),
        )
        .hint(hint.to_string())
    };
    let not_writable =
        "the state directory must be writable (mode 1777 like /tmp); or use --state-dir DIR";
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
            Err(e) => return Err(fail(e.desc().to_string(), not_writable)),
        };
        // The umask may have narrowed the mode: records are world-readable.
        let _ = nix::sys::stat::fchmod(&fd, Mode::from_bits_truncate(0o644));
        let mut file = std::fs::File::from(fd);
        if let Err(e) = file.write_all(text.as_bytes()) {
            remove(dir, &name);
            return Err(fail(crate::error::io_words(&e), not_writable));
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

/// Removes a record (best effort: a stale record another user owns stays,
/// and is ignored by every reader; [`StateDir::remove`]).
pub fn remove(dir: &StateDir, name: &str) {
    dir.remove(name);
}
