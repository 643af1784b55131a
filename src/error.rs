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
    /// `--sysroot DIR` cannot be read confined to DIR: the kernel refuses
    /// `openat2(2)` (before Linux 5.6, or a seccomp filter), or a confined
    /// lookup kept being interrupted by renames or mounts on the host.
    SysrootUnconfined = "sysroot-unconfined",
    /// `--sysroot DIR` holds a directory pinrun's user may not search or a
    /// file it may not read (`EACCES`): refused rather than read in part.
    SysrootUnreadable = "sysroot-unreadable",
    /// A file pinrun needs could not be opened for want of a resource
    /// (`EMFILE`: the open-files limit; `ENFILE`; `ENOMEM`): refused
    /// rather than read as missing.
    ReadStarved = "read-starved",
    /// `--dump FILE` could not be written.
    DumpFailed = "dump-failed",
    /// `--emit systemd` with a command `ExecStart=` cannot name exactly.
    EmitCommand = "emit-command",
    /// `--check-emitted FILE`: FILE's topology fingerprint is not this
    /// machine's, or FILE has none or cannot be read.
    FingerprintMismatch = "fingerprint-mismatch",
    /// A file larger than pinrun reads (`system::root::MAX_FILE`), or a
    /// `/proc/interrupts` beyond its budgets.
    ReadBudget = "read-budget",
    /// `--thread-map` rules that do not parse.
    BadThreadMap = "bad-thread-map",
    /// `--omp` or `--thread-map` without a placement.
    ThreadsNeedPlacement = "threads-need-placement",
    /// `--omp` and the caller's own OpenMP binding variables disagree.
    OmpConflict = "omp-conflict",
    /// A `--thread-map` target the plan cannot give (a position beyond
    /// it, no housekeeping CPU in it, nothing left for `rest`).
    ThreadMapTarget = "thread-map-target",
    /// The `--thread-map` watcher could not be started, or `--thread-log`
    /// could not be opened.
    WatcherFailed = "watcher-failed",
    /// `--steer-irqs` without `--exclusive`, or with `--sysroot` in a launch.
    SteerNeedsExclusive = "steer-needs-exclusive",
    /// `--steer-irqs`: this process may not write `/proc/irq` (not root,
    /// read-only procfs); nothing was changed.
    SteerNotPermitted = "steer-not-permitted",
    /// `--steer-irqs`: a write failed in a way that is not understood, or
    /// the journal could not be written; everything written was undone.
    SteerFailed = "steer-failed",
    /// `--steer-irqs` while irqbalance runs without its control socket (or
    /// more than one runs): it would move the IRQs back; pinrun does not
    /// fight it.
    IrqbalanceRuns = "irqbalance-runs",
    /// `--steer-irqs`: irqbalance's control socket did not answer, refused
    /// the ban, or did not apply it in time; nothing was changed (or it
    /// was undone).
    IrqbalanceSocket = "irqbalance-socket",
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
    /// `--node` with a node whose CPUs are all offline.
    NodeCpusOffline = "node-cpus-offline",
    /// Fewer whole cores than `--cores N` in the candidates.
    NotEnoughCores = "not-enough-cores",
    /// `--llc`, `--dies` or `--clusters` is not a positive number.
    BadUnitCount = "bad-unit-count",
    /// `--dies`/`--clusters`/`--llc` where the kernel lists no such unit
    /// for the candidates (no `die_cpus_list`, `cluster_cpus_list`, cache).
    UnitUnavailable = "unit-unavailable",
    /// Fewer whole, free units than `--llc`/`--dies`/`--clusters N`.
    NotEnoughUnits = "not-enough-units",
    /// `--near`: no such network interface, PCI device, block device or
    /// file.
    DeviceNotFound = "device-not-found",
    /// `--near`: the device's NUMA node is unknown (`numa_node` -1) on a
    /// machine with several nodes.
    DeviceNodeUnknown = "device-node-unknown",
    /// `--near-irqs`: no candidate CPU left.
    NearIrqsLeaveNone = "near-irqs-leave-none",
    /// `--core-type` on a machine with one core type.
    NoCoreTypes = "no-core-types",
    /// `--core-type`: no candidate (with `--cpus`: not every one) is of
    /// the type.
    NoCpusOfCoreType = "no-cpus-of-core-type",
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
    /// A memory policy mode the kernel does not have (EINVAL).
    MempolicyUnsupported = "mempolicy-unsupported",
    // Scheduling refusals.
    /// SCHED_DEADLINE on an affinity narrower than its root domain.
    DeadlineAffinity = "deadline-affinity",
    /// SCHED_DEADLINE without CAP_SYS_NICE.
    DeadlineNotPermitted = "deadline-not-permitted",
    /// A SCHED_DEADLINE period outside `kernel.sched_deadline_period_{min,max}_us`
    /// (the kernel's `__checkparam_dl()`: EINVAL).
    DeadlinePeriod = "deadline-period",
    /// SCHED_DEADLINE with `kernel.sched_rt_runtime_us = 0`: no deadline
    /// bandwidth at all (EPERM).
    DeadlineNoBandwidth = "deadline-no-bandwidth",
    /// SCHED_DEADLINE admission control would refuse the reservation (EBUSY).
    DeadlineAdmission = "deadline-admission",
    /// `--nice` below the current nice value without CAP_SYS_NICE or
    /// RLIMIT_NICE (`setpriority(2)`: EACCES).
    NiceNotPermitted = "nice-not-permitted",
    /// RT group scheduling gives the cgroup no runtime.
    RtGroupNoRuntime = "rt-group-no-runtime",
    /// A priority above RLIMIT_RTPRIO without CAP_SYS_NICE.
    RtprioNotPermitted = "rtprio-not-permitted",
    /// `--strict` and a warning.
    Strict = "strict",
    // The noise probe (`--probe`, issue 20).
    /// A spinning SCHED_FIFO/SCHED_RR probe on a CPU that is not isolated
    /// while RT throttling is off (`kernel.sched_rt_runtime_us = -1`).
    ProbeUnsafe = "probe-unsafe",
    /// `--probe-max`: a probed CPU's worst gap exceeds the limit.
    ProbeOverMax = "probe-over-max",
    /// The probe could not run, or overran and was ended by its watchdog.
    ProbeFailed = "probe-failed",
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
    // Running processes (`--pid`, issue 18).
    /// `--pid` that is not a process id.
    BadPid = "bad-pid",
    /// `--migrate-limit` that is not a size.
    BadSize = "bad-size",
    /// `--pid`/`--tid` names no running process or no thread of it.
    NoSuchProcess = "no-such-process",
    /// The process exited, or its PID now names another process, between
    /// planning and applying: nothing is applied.
    PidReused = "pid-reused",
    /// `--pid`: threads kept appearing with the old placement or policy
    /// (created by threads pinrun had not reached yet) for every pass;
    /// the threads changed are restored.
    ThreadsUnsettled = "threads-unsettled",
    /// `--pid`: another pinrun (or its undo helper) is changing the
    /// process, and held its per-process lock longer than
    /// [`crate::pid::read::LOCK_TIMEOUT`]: nothing is changed.
    PidBusy = "pid-busy",
    /// `--pid`: the helper that puts the threads back should pinrun die
    /// could not be started, or went away: nothing more is changed, and
    /// what was is restored.
    UndoFailed = "undo-failed",
    /// A memory policy (`--membind`, ...) asked for another process: no
    /// system call sets another process's mempolicy.
    PidMempolicy = "pid-mempolicy",
    /// `migrate_pages(2)` failed, or would move more than `--migrate-limit`.
    MigrateFailed = "migrate-failed",
    /// Another user's process without CAP_SYS_NICE (the kernel's
    /// `check_same_owner()`: EPERM).
    PidNotPermitted = "pid-not-permitted",
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
    /// `execve(2)` of the command.
    Exec,
}

/// What an errno of one [`Step`] means, in words, and the fix: from the
/// ERRORS sections of sched_setattr(2), set_mempolicy(2),
/// sched_setaffinity(2), setpriority(2) and execve(2), and the kernel paths
/// that return them (`kernel/sched/syscalls.c`, `kernel/sched/deadline.c`,
/// `mm/mempolicy.c`, `fs/exec.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cause {
    /// The cause, e.g. "SCHED_DEADLINE admission control: …".
    pub words: &'static str,
    /// A fix that works when this is the cause.
    pub hint: &'static str,
}

/// What the kernel's own files say about who may change a thread, to
/// tell the causes of an EPERM apart: the caller's effective uid and
/// `CAP_SYS_NICE` (`Uid:`, `CapEff:` of `/proc/self/status`), the
/// thread's real and effective uids (`Uid:` of its `status`), and the
/// caller's `Seccomp:` mode (0 none, 1 strict, 2 filter) and
/// `NoNewPrivs:` (`proc(5)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermFacts {
    /// The caller's effective uid.
    pub caller_euid: u32,
    /// `CAP_SYS_NICE` in the caller's `CapEff`; `None`: not read.
    pub cap_sys_nice: Option<bool>,
    /// The thread's (real, effective) uid; `None`: not read.
    pub target_uids: Option<(u32, u32)>,
    /// The caller's `Seccomp:` mode; `None`: not read (before Linux 3.8).
    pub seccomp: Option<u8>,
    /// The caller's `NoNewPrivs:`.
    pub no_new_privs: bool,
}

impl PermFacts {
    /// Why `step` (`setpriority(2)`, `sched_setaffinity(2)`,
    /// `sched_setattr(2)`) on the thread answered EPERM, with its fix, or
    /// `None` when the step's own [`Step::cause`] says it. The kernel
    /// lets the caller change the thread when its effective uid is the
    /// thread's real or effective uid, or with `CAP_SYS_NICE`
    /// (`check_same_owner()`, kernel/sched/syscalls.c; `set_one_prio()`,
    /// kernel/sys.c); past that, a seccomp filter (`SECCOMP_RET_ERRNO`)
    /// or a security module (`security_task_setscheduler()`) answers
    /// EPERM too. So the owner is named only when it is the cause.
    pub fn eperm_cause(&self, step: Step) -> Option<(String, String)> {
        let owner = self
            .target_uids
            .is_none_or(|(r, e)| self.caller_euid == r || self.caller_euid == e);
        let filter = self.seccomp == Some(2);
        let filter_words = || {
            format!(
                "a seccomp filter on pinrun refused the system call (Seccomp: 2 in /proc/self/status{}; inherited from what started pinrun: a container runtime's profile, systemd's SystemCallFilter=)",
                if self.no_new_privs {
                    ", NoNewPrivs: 1"
                } else {
                    ""
                }
            )
        };
        let filter_hint = format!(
            "allow {}(2) in that filter (docker/podman: --security-opt seccomp=PROFILE; systemd: SystemCallFilter=@resources), or run pinrun outside it",
            step.name()
        );
        match (owner, self.cap_sys_nice, step) {
            (false, Some(false), _) => {
                let (r, e) = self.target_uids.unwrap_or_default();
                Some((
                    format!(
                        "the thread runs as uid {e} (real uid {r}) and pinrun as uid {}, without CAP_SYS_NICE (CapEff in /proc/self/status)",
                        self.caller_euid
                    ),
                    format!("run pinrun as uid {e}, or grant it CAP_SYS_NICE"),
                ))
            }
            (false, _, _) if filter => Some((filter_words(), filter_hint)),
            (false, _, _) => Some((
                "pinrun has CAP_SYS_NICE, but the kernel counts it only in the thread's user namespace and those above it (ns_capable()), or a security module (SELinux, AppArmor) refused the call".to_string(),
                "run pinrun in the thread's user namespace (nsenter -U) or as its user; for a security module see the audit log (ausearch -m AVC, dmesg)".to_string(),
            )),
            // The thread is pinrun's own user's: a real-time policy's
            // limits are sched_setattr's own causes, else a filter.
            (true, _, Step::SchedSetattr) if !filter => None,
            (true, _, Step::SchedSetattr) => Some((
                format!(
                    "{}; or {}",
                    step.cause(Errno::EPERM).words,
                    filter_words()
                ),
                filter_hint,
            )),
            (true, _, _) if filter => Some((
                format!("not the thread's owner (it runs as pinrun's uid {}): {}", self.caller_euid, filter_words()),
                filter_hint,
            )),
            (true, _, _) => Some((
                format!(
                    "not the thread's owner (it runs as pinrun's uid {}) and no seccomp filter (Seccomp: 0): a security module (SELinux, AppArmor, Landlock) refused the call",
                    self.caller_euid
                ),
                "see the audit log (ausearch -m AVC, dmesg) and the security module's policy for pinrun".to_string(),
            )),
        }
    }
}

impl Step {
    /// The system call's name, `sched_setattr`.
    pub fn name(self) -> &'static str {
        match self {
            Step::SetMempolicy => "set_mempolicy",
            Step::SetPriority => "setpriority",
            Step::SchedGetattr => "sched_getattr",
            Step::SchedSetattr => "sched_setattr",
            Step::SchedSetaffinity => "sched_setaffinity",
            Step::SchedGetaffinity => "sched_getaffinity",
            Step::Exec => "execve",
        }
    }

    /// The errnos the step's manual page documents (and, for
    /// `sched_setaffinity`, EBUSY, which the kernel returns for a
    /// SCHED_DEADLINE task, `dl_task_check_affinity()`).
    pub fn documented(self) -> &'static [Errno] {
        use Errno::*;
        match self {
            Step::SetMempolicy => &[EFAULT, EINVAL, ENOMEM],
            Step::SetPriority => &[EACCES, EINVAL, EPERM, ESRCH],
            Step::SchedGetattr => &[E2BIG, EINVAL, ESRCH],
            Step::SchedSetattr => &[E2BIG, EBUSY, EINVAL, EPERM, ESRCH],
            Step::SchedSetaffinity => &[EBUSY, EFAULT, EINVAL, EPERM, ESRCH],
            Step::SchedGetaffinity => &[EFAULT, EINVAL, ESRCH],
            Step::Exec => &[
                E2BIG,
                EACCES,
                EAGAIN,
                EFAULT,
                EINVAL,
                EIO,
                EISDIR,
                ELIBBAD,
                ELOOP,
                EMFILE,
                ENAMETOOLONG,
                ENFILE,
                ENOENT,
                ENOEXEC,
                ENOMEM,
                ENOTDIR,
                EPERM,
                ETXTBSY,
            ],
        }
    }

    /// Why the kernel answered `errno` to this step, and the fix. Pure; an
    /// errno the manual page does not document gets a generic cause.
    pub fn cause(self, errno: Errno) -> Cause {
        use Errno::*;
        let c = |words, hint| Cause { words, hint };
        match (self, errno) {
            (Step::SetMempolicy, EINVAL) => c(
                "the kernel refuses this mode or node mask: a node outside the cpuset's memory nodes (Mems_allowed_list) or without memory, or a mode this kernel lacks (preferred-many: Linux 5.15, weighted-interleave: Linux 6.9)",
                "choose nodes from Mems_allowed_list in /proc/self/status that have memory, or a mode this kernel has",
            ),
            (Step::SetMempolicy, ENOMEM) => c(
                "the kernel had no memory for the policy",
                "free memory and run pinrun again",
            ),
            (Step::SetPriority, EACCES) => c(
                "lowering the nice value below the current one needs CAP_SYS_NICE or an RLIMIT_NICE of at least 20 - nice",
                "raise RLIMIT_NICE (systemd LimitNICE=, limits.conf `nice`), grant CAP_SYS_NICE, or ask for a nice value not below the current one",
            ),
            (Step::SetPriority, EPERM) => c(
                "the process belongs to another user",
                "run pinrun as the user the command runs as",
            ),
            (Step::SetPriority | Step::SchedSetattr | Step::SchedGetattr, E2BIG) => c(
                "the kernel's struct sched_attr differs from pinrun's (a kernel older than 3.14?)",
                "run on Linux 3.14 or later",
            ),
            (Step::SchedSetattr, EBUSY) => c(
                "SCHED_DEADLINE admission control refused the reservation: the deadline bandwidth of the root domain (sched_rt_runtime_us / sched_rt_period_us per CPU) is already reserved by other SCHED_DEADLINE tasks",
                "ask for less runtime or a longer period, stop other SCHED_DEADLINE tasks (ps -eLo pid,cls,comm | grep DLN), or raise kernel.sched_rt_runtime_us",
            ),
            (Step::SchedSetattr, EINVAL) => c(
                "the kernel refuses these parameters: a priority outside the policy's range, SCHED_DEADLINE parameters that break runtime >= 1024ns, runtime <= deadline <= period, or a period outside kernel.sched_deadline_period_min_us..max_us",
                "check the parameters against sched(7) and /proc/sys/kernel/sched_deadline_period_{min,max}_us",
            ),
            (Step::SchedSetattr, EPERM) => c(
                "without CAP_SYS_NICE, a real-time policy needs RLIMIT_RTPRIO, a lower nice value or leaving SCHED_IDLE needs RLIMIT_NICE, and SCHED_DEADLINE is refused; SCHED_DEADLINE also needs an affinity covering its whole root domain and deadline bandwidth (sched_rt_runtime_us > 0); with RT group scheduling the cgroup needs cpu.rt_runtime_us",
                "grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE) or raise RLIMIT_RTPRIO (LimitRTPRIO=); for SCHED_DEADLINE run on the whole root domain (or an exclusive cpuset partition)",
            ),
            (Step::SchedSetaffinity, EINVAL) => c(
                "no chosen CPU is both online and inside this process's cgroup cpuset",
                "check /proc/self/status Cpus_allowed_list and the cgroup's cpuset.cpus.effective; the cpuset may have changed since pinrun read it",
            ),
            (Step::SchedSetaffinity, EBUSY) => c(
                "a SCHED_DEADLINE task's affinity must span its whole root domain (admission control is per root domain)",
                "drop the placement, or run inside an exclusive cpuset partition of these CPUs",
            ),
            (Step::SchedSetaffinity, EPERM) => c(
                "the process belongs to another user and CAP_SYS_NICE is missing",
                "run pinrun as the user the command runs as",
            ),
            (Step::SchedSetaffinity | Step::SchedGetaffinity | Step::SetMempolicy, EFAULT) => c(
                "the kernel could not read pinrun's mask (a pinrun bug)",
                "report it with `pinrun --dump machine.tar.gz`",
            ),
            (Step::SchedGetaffinity | Step::SchedGetattr, EINVAL) => c(
                "the kernel's CPU mask or sched_attr is larger than pinrun's buffer",
                "report it with `pinrun --dump machine.tar.gz`",
            ),
            (_, ESRCH) => c("the process is gone", "run pinrun again"),
            (Step::SetPriority, EINVAL) => c(
                "the nice value or target is not one setpriority(2) accepts",
                "give --nice from -20 to 19",
            ),
            (Step::Exec, ENOENT) => c(
                "the file, its interpreter (#! line) or a library it needs does not exist",
                "check the path, the #! line and `ldd` of the program",
            ),
            (Step::Exec, EACCES) => c(
                "the file or a directory on its path is not executable, or it lies on a noexec mount",
                "chmod +x the file, make the directories searchable, or move it off the noexec mount",
            ),
            (Step::Exec, ENOEXEC) => c(
                "the file is not in a format this kernel can run",
                "run it through its interpreter, or build it for this machine",
            ),
            (Step::Exec, ETXTBSY) => c(
                "the file is open for writing by another process",
                "wait until it is written completely",
            ),
            (Step::Exec, E2BIG) => c(
                "the arguments and environment are too large",
                "shorten them, or pass data through a file",
            ),
            (Step::Exec, EAGAIN) => c(
                "RLIMIT_NPROC is exceeded for this user",
                "raise RLIMIT_NPROC or stop processes of this user",
            ),
            (Step::Exec, EISDIR | ELIBBAD | EINVAL) => c(
                "the program's ELF interpreter is a directory or damaged",
                "reinstall the program or its loader",
            ),
            (Step::Exec, ELOOP) => c(
                "too many symbolic links on the path or nested interpreters",
                "resolve the link chain",
            ),
            (Step::Exec, ENAMETOOLONG | ENOTDIR) => c(
                "the path is too long or one of its directories is a file",
                "fix the path",
            ),
            (Step::Exec, EMFILE | ENFILE) => c(
                "too many open files (this process, or the system)",
                "close files or raise RLIMIT_NOFILE / fs.file-max",
            ),
            (Step::Exec, ENOMEM) => c(
                "not enough memory to load the program",
                "free memory, or check RLIMIT_AS / RLIMIT_DATA",
            ),
            (Step::Exec, EIO) => c("an I/O error reading the program", "check the disk"),
            (Step::Exec, EPERM) => c(
                "the file system is nosuid or the process is traced, or a security module refuses it",
                "check the mount options and the security policy (dmesg)",
            ),
            (Step::Exec, EFAULT) => c(
                "a bad argument pointer (a pinrun bug)",
                "report it with `pinrun --dump machine.tar.gz`",
            ),
            _ => c(
                "an error this system call does not document",
                "see the system call's manual page",
            ),
        }
    }
}

/// `strerror` text and the symbolic name: `Device or resource busy (EBUSY)`.
pub fn errno_words(errno: Errno) -> String {
    format!("{} ({errno:?})", errno.desc())
}

/// An I/O error in pinrun's words: [`errno_words`] when it carries an
/// errno (`No space left on device (ENOSPC)`, never Rust's
/// `(os error 28)`), else its own text.
pub fn io_words(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => errno_words(Errno::from_raw(n)),
        None => e.to_string(),
    }
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

    /// A failed system call `what` (`sched_setattr(SCHED_FIFO 10)`) of
    /// `step`: the message is `<what>: <strerror> (<ERRNO>): <cause>`, the
    /// hint the cause's ([`Step::cause`]), and the step and errno are kept.
    pub fn from_syscall(code: ErrorCode, what: &str, step: Step, e: &std::io::Error) -> Self {
        let (text, hint) = match e.raw_os_error().map(Errno::from_raw) {
            Some(errno) => {
                let cause = step.cause(errno);
                (
                    format!("{what}: {}: {}", errno_words(errno), cause.words),
                    cause.hint.to_string(),
                )
            }
            None => (
                format!("{what}: {e}"),
                "see the system call's manual page".to_string(),
            ),
        };
        Error::new(code, text).hint(hint).syscall(step, e)
    }

    /// An EPERM of `setpriority(2)`, `sched_setaffinity(2)` or
    /// `sched_setattr(2)` with its cause told from `facts`
    /// ([`PermFacts::eperm_cause`]) in place of the step's generic one;
    /// any other error unchanged.
    pub fn explain_eperm(mut self, facts: &PermFacts) -> Self {
        let Some(Syscall {
            step: step @ (Step::SetPriority | Step::SchedSetaffinity | Step::SchedSetattr),
            errno: Some(Errno::EPERM),
        }) = self.syscall
        else {
            return self;
        };
        if let Some((words, hint)) = facts.eperm_cause(step) {
            self.message = self.message.replace(step.cause(Errno::EPERM).words, &words);
            self.hint = Some(hint);
        }
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

    /// The facts of a caller of uid `caller` (with `CAP_SYS_NICE` when
    /// `cap`) and a thread of uids (`r`, `e`), under seccomp `mode`.
    fn facts(caller: u32, cap: bool, r: u32, e: u32, mode: u8) -> PermFacts {
        PermFacts {
            caller_euid: caller,
            cap_sys_nice: Some(cap),
            target_uids: Some((r, e)),
            seccomp: Some(mode),
            no_new_privs: mode == 2,
        }
    }

    /// An EPERM names the owner only when `check_same_owner()`
    /// (kernel/sched/syscalls.c: the caller's euid is the thread's euid
    /// or real uid, else CAP_SYS_NICE) refuses; a thread of pinrun's own
    /// uid (its real uid counts: setuid programs) is refused by a seccomp
    /// filter when `Seccomp:` is 2, else by a security module;
    /// `sched_setattr(2)`'s own causes (RLIMIT_RTPRIO, ...) stay.
    #[test]
    fn eperm_names_the_cause_the_kernel_applied() {
        let cause = |f: PermFacts, s| f.eperm_cause(s).map(|(w, _)| w);
        let aff = Step::SchedSetaffinity;
        let other = cause(facts(1000, false, 0, 0, 0), aff).unwrap();
        assert!(
            other.starts_with(
                "the thread runs as uid 0 (real uid 0) and pinrun as uid 1000, without CAP_SYS_NICE"
            ),
            "{other}"
        );
        for (r, e) in [(1000, 1000), (1000, 0), (0, 1000)] {
            let w = cause(facts(1000, false, r, e, 2), aff).unwrap();
            assert!(w.contains("a seccomp filter on pinrun refused the system call (Seccomp: 2 in /proc/self/status, NoNewPrivs: 1"), "{w}");
            assert!(!w.contains("runs as uid 0"), "{w}");
            let w = cause(facts(1000, false, r, e, 0), Step::SetPriority).unwrap();
            assert!(w.contains("a security module"), "{w}");
        }
        assert_eq!(cause(facts(0, true, 0, 0, 0), Step::SchedSetattr), None);
        let w = cause(facts(0, true, 0, 0, 2), Step::SchedSetattr).unwrap();
        assert!(
            w.starts_with(Step::SchedSetattr.cause(Errno::EPERM).words),
            "{w}"
        );
        assert!(w.ends_with("systemd's SystemCallFilter=)"), "{w}");
        // CAP_SYS_NICE held and still refused: the user namespace or a filter.
        assert!(
            cause(facts(0, true, 5, 5, 0), aff)
                .unwrap()
                .contains("ns_capable()")
        );
        assert!(
            cause(facts(0, true, 5, 5, 2), aff)
                .unwrap()
                .contains("seccomp")
        );
        // The generic cause is replaced in the message.
        let e = Error::from_syscall(
            ErrorCode::AffinityFailed,
            "sched_setaffinity(0)",
            aff,
            &std::io::Error::from_raw_os_error(libc::EPERM),
        )
        .explain_eperm(&facts(1000, false, 1000, 1000, 2));
        assert!(!e.message.contains("another user"), "{}", e.message);
        assert!(e.message.contains("seccomp filter"), "{}", e.message);
    }

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

    /// Every errno the manual pages document for a step has its own cause
    /// (not the generic one), with a hint; an undocumented one is generic.
    #[test]
    fn every_documented_errno_has_a_cause_and_hint() {
        let generic = Step::SchedSetattr.cause(Errno::EXDEV);
        assert_eq!(generic.words, "an error this system call does not document");
        for step in [
            Step::SetMempolicy,
            Step::SetPriority,
            Step::SchedGetattr,
            Step::SchedSetattr,
            Step::SchedSetaffinity,
            Step::SchedGetaffinity,
            Step::Exec,
        ] {
            for &e in step.documented() {
                let c = step.cause(e);
                assert_ne!(c, generic, "{} {e:?}", step.name());
                assert!(!c.hint.is_empty(), "{} {e:?}", step.name());
            }
        }
        // The causes that name what the kernel checks.
        assert!(
            Step::SchedSetattr
                .cause(Errno::EBUSY)
                .words
                .contains("admission control")
        );
        assert!(
            Step::SetPriority
                .cause(Errno::EACCES)
                .words
                .contains("RLIMIT_NICE")
        );
        assert_eq!(errno_words(Errno::EBUSY), "Device or resource busy (EBUSY)");
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
