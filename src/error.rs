//! pinrun's typed failure: what failed ([`ErrorCode`]), why, the fix, the
//! exit status ([`Exit`]) and, for a failed system call, the step and the
//! errno ([`Syscall`]).
//!
//! Printed by [`crate::app`] as `pinrun: <message>` and, when known,
//! `hint: <hint>` on stderr (ARCHITECTURE.md §6 exit statuses: 125 pinrun failed or
//! refused, 126 the command cannot be executed, 127 the command was not
//! found); with `--json` also as `{"error": {"code": …}}` on stdout.

use nix::errno::Errno;
use std::fmt;
use std::process::ExitCode;

/// pinrun's exit status (ARCHITECTURE.md §6, pinrun(1) EXIT STATUS). When the
/// command is exec'd, the status is the command's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the mode succeeded (`--dry-run`, `--show`, `--emit`, a clean `--check`).
    Success,
    /// 1: `--check` found a warning.
    Findings,
    /// 125: pinrun itself failed or refused (as `env(1)`, `chroot(1)`).
    Failure,
    /// 126: the command exists but cannot be executed.
    CannotExec,
    /// 127: the command was not found.
    NotFound,
}

impl Exit {
    /// The status number.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Findings => 1,
            Exit::Failure => 125,
            Exit::CannotExec => 126,
            Exit::NotFound => 127,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// Declares [`ErrorCode`]: each variant with its stable kebab-case name.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// Every refusal or failure pinrun reports, by its stable
        /// kebab-case name (`--json`: `{"error": {"code": …}}`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The kebab-case name printed in `--json` output.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)*
                }
            }
        }
    };
}

error_codes! {
    // Usage (the command line).
    /// clap rejected the command line.
    Usage = "usage",
    /// `--cores` is not a positive number.
    BadCores = "bad-cores",
    /// A cpulist or cpumask that does not parse.
    BadCpuList = "bad-cpu-list",
    /// Inconsistent `--deadline` parameters.
    BadDeadline = "bad-deadline",
    /// A duration that does not parse.
    BadDuration = "bad-duration",
    /// `--nice` outside -20..19.
    BadNice = "bad-nice",
    /// A node list that does not parse.
    BadNodeList = "bad-node-list",
    /// A real-time priority outside 1..99.
    BadPriority = "bad-priority",
    /// `--exclusive` without a placement.
    ExclusiveNeedsPlacement = "exclusive-needs-placement",
    /// A launch without a command.
    NoCommand = "no-command",
    /// `--sysroot` with a launch (only the printing modes read a dump).
    SysrootNeedsMode = "sysroot-needs-mode",
    /// `--allow` names a code that is not a [`crate::check::Code`].
    UnknownFindingCode = "unknown-finding-code",
    /// The policy file (`PINRUN_CONFIG`, `~/.config/pinrun/config.toml`,
    /// `/etc/pinrun.toml`) exists but cannot be read, is too large, or has
    /// an unknown key, a bad value or an unknown finding code.
    BadConfig = "bad-config",
    /// `--sysroot` is not a machine dump.
    SysrootMissing = "sysroot-missing",
    /// `--sysroot ARCHIVE` cannot be unpacked (damaged, hostile, over a limit).
    SysrootArchive = "sysroot-archive",
    /// `--dump FILE` could not be written.
    DumpFailed = "dump-failed",
    /// A file larger than pinrun reads (`system::root::MAX_FILE`), or a
    /// `/proc/interrupts` beyond its budgets.
    ReadBudget = "read-budget",
    /// Topology files that contradict each other beyond recovery.
    TopologyInconsistent = "topology-inconsistent",
    // Placement refusals.
    /// A CPU the machine does not have.
    CpuNotFound = "cpu-not-found",
    /// A possible CPU that is not present.
    CpuNotPresent = "cpu-not-present",
    /// An offline CPU.
    CpuOffline = "cpu-offline",
    /// A CPU outside the allowed set.
    CpuNotAllowed = "cpu-not-allowed",
    /// `--isolated` with a CPU that is not isolated.
    CpuNotIsolated = "cpu-not-isolated",
    /// `--cpus` and `--node` disagree.
    CpuNotOnNode = "cpu-not-on-node",
    /// No candidate CPU is online and allowed.
    NoCpusAllowed = "no-cpus-allowed",
    /// `--isolated` and no isolated CPU is a candidate.
    NoIsolatedCpus = "no-isolated-cpus",
    /// `--housekeeping` with a `--cpus` CPU that is isolated or nohz_full,
    /// or no housekeeping CPU among the candidates.
    NotHousekeeping = "not-housekeeping",
    /// A node option on a machine without NUMA nodes.
    NoNuma = "no-numa",
    /// A node or its CPUs outside what this process may use.
    NodeNotAllowed = "node-not-allowed",
    /// A node the machine does not have.
    NodeNotFound = "node-not-found",
    /// `--node` with a memory-only node.
    NodeWithoutCpus = "node-without-cpus",
    /// Fewer whole cores than `--cores N` in the candidates.
    NotEnoughCores = "not-enough-cores",
    // Claims.
    /// A claimed CPU (`--cpus`, `--exclusive`).
    CpuClaimed = "cpu-claimed",
    /// Every fitting core is claimed (`--cores`).
    NoFreeCore = "no-free-core",
    /// The claim record could not be written.
    ClaimFailed = "claim-failed",
    /// The state directory cannot be used.
    StateDir = "state-dir",
    // Memory policy refusals.
    /// `--membind` without nodes and without a placement.
    MembindNeedsNodes = "membind-needs-nodes",
    /// A memory policy on a node without memory.
    NodeWithoutMemory = "node-without-memory",
    // Scheduling refusals.
    /// SCHED_DEADLINE on an affinity narrower than its root domain.
    DeadlineAffinity = "deadline-affinity",
    /// SCHED_DEADLINE without CAP_SYS_NICE.
    DeadlineNotPermitted = "deadline-not-permitted",
    /// RT group scheduling gives the cgroup no runtime.
    RtGroupNoRuntime = "rt-group-no-runtime",
    /// A priority above RLIMIT_RTPRIO without CAP_SYS_NICE.
    RtprioNotPermitted = "rtprio-not-permitted",
    /// `--strict` and a warning.
    Strict = "strict",
    // Applying.
    /// `set_mempolicy(2)` failed.
    MempolicyFailed = "mempolicy-failed",
    /// `setpriority(2)`, `sched_getattr(2)` or `sched_setattr(2)` failed.
    SchedFailed = "sched-failed",
    /// `sched_setaffinity(2)`/`sched_getaffinity(2)` failed.
    AffinityFailed = "affinity-failed",
    /// The kernel set a narrower affinity than asked.
    AffinityNarrowed = "affinity-narrowed",
    // The command.
    /// An argument with a NUL byte.
    BadArgument = "bad-argument",
    /// The command is not found (exit 127).
    CommandNotFound = "command-not-found",
    /// The command cannot be executed (exit 126).
    CommandNotExecutable = "command-not-executable",
    /// `execve(2)` failed.
    ExecFailed = "exec-failed",
    /// Writing pinrun's own output failed.
    Io = "io",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The system call an apply failure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `set_mempolicy(2)`.
    SetMempolicy,
    /// `setpriority(2)` (`--nice`).
    SetPriority,
    /// `sched_getattr(2)`.
    SchedGetattr,
    /// `sched_setattr(2)`.
    SchedSetattr,
    /// `sched_setaffinity(2)`.
    SchedSetaffinity,
    /// `sched_getaffinity(2)` (the read-back).
    SchedGetaffinity,
}

/// A failed system call: which step, and the errno when the kernel gave one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syscall {
    /// The step.
    pub step: Step,
    /// The errno (`errno(3)`), `None` for a failure without one.
    pub errno: Option<Errno>,
}

/// A refusal or failure, with a stable machine-readable `code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Stable identifier, e.g. [`ErrorCode::CpuOffline`] (`cpu-offline`).
    pub code: ErrorCode,
    /// One line: `<what failed>: <cause>`, naming the CPU, node, file or cgroup.
    pub message: String,
    /// The fix, when one is known.
    pub hint: Option<String>,
    /// Process exit status ([`Exit::Failure`], [`Exit::CannotExec`] or
    /// [`Exit::NotFound`]).
    pub exit: Exit,
    /// For a failed system call: its step and errno.
    pub syscall: Option<Syscall>,
}

impl Error {
    /// A refusal or failure of pinrun itself (exit 125).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
            exit: Exit::Failure,
            syscall: None,
        }
    }

    /// Adds the fix.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the exit status.
    pub fn exit(mut self, exit: Exit) -> Self {
        self.exit = exit;
        self
    }

    /// Records the failed system call and its errno (from `e`).
    pub fn syscall(mut self, step: Step, e: &std::io::Error) -> Self {
        self.syscall = Some(Syscall {
            step,
            errno: e.raw_os_error().map(Errno::from_raw),
        });
        self
    }

    /// The errno of a failed system call, if this is one.
    pub fn errno(&self) -> Option<Errno> {
        self.syscall.and_then(|s| s.errno)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_are_the_documented_numbers() {
        let codes: Vec<u8> = [
            Exit::Success,
            Exit::Findings,
            Exit::Failure,
            Exit::CannotExec,
            Exit::NotFound,
        ]
        .iter()
        .map(|e| e.code())
        .collect();
        assert_eq!(codes, [0, 1, 125, 126, 127]);
        assert_eq!(Error::new(ErrorCode::Strict, "x").exit, Exit::Failure);
    }

    #[test]
    fn a_failed_system_call_keeps_its_step_and_errno() {
        let e = Error::new(ErrorCode::SchedFailed, "x").syscall(
            Step::SchedSetattr,
            &std::io::Error::from_raw_os_error(libc::EPERM),
        );
        assert_eq!(e.errno(), Some(Errno::EPERM));
        assert_eq!(e.syscall.map(|s| s.step), Some(Step::SchedSetattr));
        assert_eq!(Error::new(ErrorCode::Io, "x").errno(), None);
    }

    #[test]
    fn error_codes_are_unique_kebab_case() {
        let mut names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert!(
            names
                .iter()
                .all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
    }
}
