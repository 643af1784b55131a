//! pinrun's typed failure: what failed, why, the fix, and the exit status.
//!
//! Printed by `main` as `pinrun: <message>` and, when known, `hint: <hint>`
//! on stderr (DESIGN §3 exit statuses: 125 pinrun failed or refused, 126 the
//! command cannot be executed, 127 the command was not found).

use std::fmt;

/// Exit status when pinrun itself fails or refuses (as `env(1)`, `chroot(1)`).
pub const EXIT_FAILURE: u8 = 125;
/// Exit status when the command exists but cannot be executed.
pub const EXIT_CANNOT_EXEC: u8 = 126;
/// Exit status when the command is not found.
pub const EXIT_NOT_FOUND: u8 = 127;

/// A refusal or failure, with a stable machine-readable `code` (kebab-case,
/// used in `--json` as `{"error": {"code": ...}}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Stable kebab-case identifier, e.g. `cpu-offline`.
    pub code: &'static str,
    /// One line: `<what failed>: <cause>`, naming the CPU, node, file or cgroup.
    pub message: String,
    /// The fix, when one is known.
    pub hint: Option<String>,
    /// Process exit status (125, 126 or 127).
    pub exit: u8,
}

impl Error {
    /// A refusal or failure of pinrun itself (exit 125).
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
            exit: EXIT_FAILURE,
        }
    }

    /// Adds the fix.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the exit status.
    pub fn exit(mut self, exit: u8) -> Self {
        self.exit = exit;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Result with pinrun's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
