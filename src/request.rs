//! What the user asked for, validated but not yet resolved against the
//! machine. Built by [`crate::cli`]; consumed by [`crate::plan`].

use crate::cpuset::{CpuSet, NodeSet};
use std::ffi::OsString;
use std::path::PathBuf;

/// Which CPUs to run on (ARCHITECTURE.md §6, "Placement"). All `None`/`false`: the
/// affinity is left unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// `--cpus LIST`: exactly these CPUs.
    pub cpus: Option<CpuSet>,
    /// `--node NODES`: CPUs of these nodes.
    pub nodes: Option<NodeSet>,
    /// `--cores N`: N whole cores.
    pub cores: Option<usize>,
    /// `--smt`: every thread of each chosen core.
    pub smt: bool,
    /// `--isolated`: isolated CPUs only.
    pub isolated: bool,
}

impl Placement {
    /// Whether any placement option was given.
    pub fn is_requested(&self) -> bool {
        self.cpus.is_some() || self.nodes.is_some() || self.cores.is_some() || self.isolated
    }
}

/// A node list that may be `all` (`--interleave all`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeChoice {
    /// Every node with memory the process may use.
    All,
    /// These nodes.
    Nodes(NodeSet),
}

/// A memory policy request (`set_mempolicy(2)`, `numactl(8)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryRequest {
    /// `--membind [NODES]`: `None` means the nodes of the chosen CPUs.
    Bind(Option<NodeSet>),
    /// `--preferred NODE`.
    Preferred(u32),
    /// `--preferred-many NODES` (Linux 5.15+).
    PreferredMany(NodeSet),
    /// `--interleave NODES|all`.
    Interleave(NodeChoice),
    /// `--weighted-interleave NODES|all` (Linux 6.9+).
    WeightedInterleave(NodeChoice),
    /// `--localalloc`.
    Local,
}

/// A scheduling policy (`sched(7)`). Priorities are 1–99; deadline
/// parameters are in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `SCHED_OTHER` (`SCHED_NORMAL`).
    Other,
    /// `SCHED_BATCH`.
    Batch,
    /// `SCHED_IDLE`.
    Idle,
    /// `SCHED_FIFO` with a static priority.
    Fifo(u32),
    /// `SCHED_RR` with a static priority.
    Rr(u32),
    /// `SCHED_DEADLINE` with runtime ≤ deadline ≤ period, in ns.
    Deadline {
        /// `sched_runtime`, ns.
        runtime: u64,
        /// `sched_deadline`, ns.
        deadline: u64,
        /// `sched_period`, ns.
        period: u64,
    },
}

impl Policy {
    /// `SCHED_OTHER`'s number (`include/uapi/linux/sched.h`).
    pub const SCHED_OTHER: u32 = 0;
    /// `SCHED_FIFO`'s number.
    pub const SCHED_FIFO: u32 = 1;
    /// `SCHED_RR`'s number.
    pub const SCHED_RR: u32 = 2;
    /// `SCHED_BATCH`'s number.
    pub const SCHED_BATCH: u32 = 3;
    /// `SCHED_IDLE`'s number.
    pub const SCHED_IDLE: u32 = 5;
    /// `SCHED_DEADLINE`'s number.
    pub const SCHED_DEADLINE: u32 = 6;

    /// The kernel's name, `SCHED_FIFO` (sched(7)).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo(_) => "SCHED_FIFO",
            Policy::Rr(_) => "SCHED_RR",
            Policy::Deadline { .. } => "SCHED_DEADLINE",
        }
    }

    /// The short name of the option and of `--json`'s `sched.policy`
    /// (`fifo`), also systemd's `CPUSchedulingPolicy=` value where it has one.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo(_) => "fifo",
            Policy::Rr(_) => "rr",
            Policy::Deadline { .. } => "deadline",
        }
    }

    /// The kernel's number for `sched_setattr(2)`'s `sched_policy`.
    pub fn number(self) -> u32 {
        match self {
            Policy::Other => Self::SCHED_OTHER,
            Policy::Batch => Self::SCHED_BATCH,
            Policy::Idle => Self::SCHED_IDLE,
            Policy::Fifo(_) => Self::SCHED_FIFO,
            Policy::Rr(_) => Self::SCHED_RR,
            Policy::Deadline { .. } => Self::SCHED_DEADLINE,
        }
    }

    /// Whether it is a real-time policy with a static priority
    /// (`SCHED_FIFO`, `SCHED_RR`).
    pub fn is_rt(self) -> bool {
        self.rt_priority().is_some()
    }

    /// Whether the kernel's policy number `n` (`/proc/<pid>/stat` field 41,
    /// `sched_getscheduler(2)`) is a real-time one.
    pub fn is_rt_number(n: i64) -> bool {
        n == i64::from(Self::SCHED_FIFO) || n == i64::from(Self::SCHED_RR)
    }

    /// Whether it is `SCHED_DEADLINE`.
    pub fn is_deadline(self) -> bool {
        matches!(self, Policy::Deadline { .. })
    }

    /// Whether the nice value has no effect under it (real-time and deadline).
    pub fn ignores_nice(self) -> bool {
        self.is_rt() || self.is_deadline()
    }

    /// The static priority (1–99) of a real-time policy.
    pub fn rt_priority(self) -> Option<u32> {
        match self {
            Policy::Fifo(p) | Policy::Rr(p) => Some(p),
            _ => None,
        }
    }
}

/// Scheduling changes. Nothing set: the scheduling is left unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchedRequest {
    /// The policy, when one is given.
    pub policy: Option<Policy>,
    /// `--nice N` (-20..=19); otherwise the current nice value is kept.
    pub nice: Option<i32>,
    /// `--reset-on-fork` (`SCHED_RESET_ON_FORK`).
    pub reset_on_fork: bool,
}

impl SchedRequest {
    /// Whether anything about scheduling is to change.
    pub fn is_requested(&self) -> bool {
        self.policy.is_some() || self.nice.is_some() || self.reset_on_fork
    }
}

/// What pinrun does with the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Apply and exec the command.
    Run,
    /// Print the plan and findings; change nothing.
    DryRun,
    /// Print findings only; exit 1 when there are any.
    Check,
    /// Print the machine.
    Show,
    /// Print the plan as systemd directives (`--emit systemd`).
    Emit,
}

/// How much pinrun says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// `--json`.
    pub json: bool,
    /// `-v`: print the plan to stderr before exec.
    pub verbose: bool,
    /// `--quiet`: no warnings.
    pub quiet: bool,
    /// `--strict`: warnings refuse the launch.
    pub strict: bool,
    /// `--allow CODES`: finding codes accepted (downgraded to info).
    pub allow: Vec<crate::finding::Code>,
}

/// Exclusive claims (`--exclusive`, `--wait`, `--state-dir`; issue 5).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimRequest {
    /// `--exclusive`: claim the chosen cores while the command lives.
    pub exclusive: bool,
    /// `--wait[=DURATION]`: wait for claimed cores instead of refusing;
    /// `Some(None)` waits without a limit; durations in ns.
    pub wait: Option<Option<u64>>,
    /// `--state-dir DIR` / `PINRUN_STATE_DIR`; `None`: `/run/pinrun`.
    pub state_dir: Option<PathBuf>,
}

/// A whole validated invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Which CPUs.
    pub placement: Placement,
    /// Memory policy; `None`: unchanged.
    pub memory: Option<MemoryRequest>,
    /// Scheduling.
    pub sched: SchedRequest,
    /// What to do.
    pub mode: Mode,
    /// Output switches.
    pub output: Output,
    /// `--sysroot DIR`: read the machine below DIR.
    pub sysroot: Option<PathBuf>,
    /// The command and its arguments, untouched (may be non-UTF-8).
    pub command: Vec<OsString>,
    /// Claims: `--exclusive`, `--wait`, `--state-dir`.
    pub claims: ClaimRequest,
}

impl Request {
    /// Whether the launch is latency-critical: a real-time or deadline
    /// policy, `--isolated`, or `--check` itself. Disturbances (no
    /// isolation, IRQs) are then warnings rather than info.
    pub fn latency_critical(&self) -> bool {
        self.mode == Mode::Check
            || self.placement.isolated
            || self.sched.policy.is_some_and(Policy::ignores_nice)
    }

    /// Whether any finding can be printed or refuse the launch: every mode
    /// but a launch with `--quiet` and without `--strict` (which prints
    /// nothing and runs whatever the findings; with `--strict` the findings
    /// are computed, not printed, and the refusal names their codes).
    pub fn uses_findings(&self) -> bool {
        self.mode != Mode::Run || !self.output.quiet || self.output.strict
    }

    /// Whether info findings can be seen: in every mode but a launch, and in
    /// a launch with `-v`. A plain launch prints warnings only, so what can
    /// only ever be info (governors, idle states, NUMA balancing, and the
    /// disturbances of a launch that is not latency-critical) need not be
    /// read at all.
    pub fn shows_info(&self) -> bool {
        self.mode != Mode::Run || (self.output.verbose && !self.output.quiet)
    }
}
