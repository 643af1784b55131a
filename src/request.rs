//! What the user asked for, validated but not yet resolved against the
//! machine. Built by [`crate::cli`]; consumed by [`crate::plan`].

use crate::cpuset::{CpuSet, NodeSet};
pub use crate::policy::Policy;
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
    /// `--housekeeping`: housekeeping CPUs only (neither isolated nor
    /// nohz_full), the opposite of `--isolated`.
    pub housekeeping: bool,
}

impl Placement {
    /// Whether any placement option was given.
    pub fn is_requested(&self) -> bool {
        self.cpus.is_some()
            || self.nodes.is_some()
            || self.cores.is_some()
            || self.isolated
            || self.housekeeping
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
    /// `--allow CODES`: finding codes accepted (downgraded to info), with
    /// the policy file's.
    pub allow: Vec<crate::finding::Code>,
    /// The policy file whose `allow`, `strict` and `state_dir` were
    /// merged in (pinrun(1) FILES), if any.
    pub config_file: Option<PathBuf>,
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
