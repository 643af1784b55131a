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
    /// `--within`: the bound `--cores`, `--node` and `--isolated` choose in.
    pub within: Within,
    /// `--cpus all|!LIST|+LIST`: resolved against the allowed CPUs into
    /// [`Placement::cpus`] when planning.
    pub cpus_form: Option<NodeChoice>,
    /// `--node all|!LIST|+LIST`: resolved against the nodes the process
    /// may use into [`Placement::nodes`] when planning.
    pub nodes_form: Option<NodeChoice>,
    /// `--housekeeping`: housekeeping CPUs only (neither isolated nor
    /// nohz_full), the opposite of `--isolated`.
    pub housekeeping: bool,
    /// `--llc N`, `--dies N`, `--clusters N`: N whole groups of CPUs that
    /// share a last-level cache, a die or a cluster.
    pub units: Option<(Unit, usize)>,
    /// `--core-type performance|efficiency`: CPUs of that core type only.
    pub core_type: Option<CoreType>,
    /// `--near DEVICE`: the CPUs of the device's NUMA node.
    pub near: Option<String>,
    /// `--near-irqs`: what to do with the CPUs the device's IRQs are
    /// steered to.
    pub near_irqs: NearIrqs,
}

/// The CPUs a `--near` device's IRQs are steered to (their effective
/// affinity), and what the placement does with them (`--near-irqs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NearIrqs {
    /// Said in the plan only.
    #[default]
    Report,
    /// `--near-irqs avoid`: leave them out (the application does not
    /// share CPUs with the device's interrupt handlers and softirqs).
    Avoid,
    /// `--near-irqs share`: only them (the application runs where the
    /// device's packets are handled, warm in cache).
    Share,
}

/// A placement unit larger than a core (pinrun(1) PLACEMENT UNITS): the
/// CPUs that share a last-level cache, a die or a cluster, as the kernel
/// lists them (`Documentation/admin-guide/cputopology.rst`,
/// `Documentation/ABI/testing/sysfs-devices-system-cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// A die (`topology/die_cpus_list`).
    Die,
    /// A last-level cache (`cache/indexK/shared_cpu_list` of the highest
    /// level that is not an instruction cache).
    Llc,
    /// A cluster (`topology/cluster_cpus_list`: CPUs sharing an L2 or a
    /// cluster of the firmware's PPTT).
    Cluster,
}

impl Unit {
    /// The option that asks for it (`--llc`, `--dies`, `--clusters`).
    pub fn option(self) -> &'static str {
        match self {
            Unit::Die => "--dies",
            Unit::Llc => "--llc",
            Unit::Cluster => "--clusters",
        }
    }

    /// Its name in messages ("LLC", "die", "cluster").
    pub fn name(self) -> &'static str {
        match self {
            Unit::Die => "die",
            Unit::Llc => "LLC",
            Unit::Cluster => "cluster",
        }
    }

    /// The sysfs file that lists a unit's CPUs, below `cpuN/`.
    pub fn file(self) -> &'static str {
        match self {
            Unit::Die => "topology/die_cpus_list",
            Unit::Llc => "cache/index*/shared_cpu_list",
            Unit::Cluster => "topology/cluster_cpus_list",
        }
    }
}

/// A core type of a hybrid CPU (`--core-type`): Intel's performance
/// (`cpu_core`) and efficiency (`cpu_atom`) cores, or on arm64 and RISC-V
/// the CPUs of the highest `cpu_capacity` (performance) and those below it
/// (efficiency).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreType {
    /// Performance cores.
    Performance,
    /// Efficiency cores.
    Efficiency,
}

impl CoreType {
    /// `performance` or `efficiency`.
    pub fn name(self) -> &'static str {
        match self {
            CoreType::Performance => "performance",
            CoreType::Efficiency => "efficiency",
        }
    }
}

/// Which CPUs a placement chooses among (`--within`; pinrun(1) SOURCES).
/// `--cpus` is never limited by it (CPUs outside the inherited affinity
/// give an `outside-inherited-affinity` finding).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Within {
    /// No `--within`: the inherited affinity (`sched_getaffinity(2)`, the
    /// caller's `Cpus_allowed_list`) bounds the choice when it is an
    /// explicit narrowing, that is when it lacks some allowed CPU that is
    /// not isolated; the default mask a shell inherits from init (every
    /// CPU but the isolcpus ones) is not a narrowing, and the cgroup's
    /// CPUs bound the choice.
    #[default]
    Auto,
    /// `--within inherited`: always inside the inherited affinity.
    Inherited,
    /// `--within cgroup`: the cgroup cpuset's online CPUs, ignoring the
    /// inherited affinity.
    Cgroup,
}

impl Placement {
    /// Whether any placement option was given.
    pub fn is_requested(&self) -> bool {
        self.cpus.is_some()
            || self.nodes.is_some()
            || self.cpus_form.is_some()
            || self.nodes_form.is_some()
            || self.cores.is_some()
            || self.isolated
            || self.housekeeping
            || self.units.is_some()
            || self.core_type.is_some()
            || self.near.is_some()
    }
}

/// A CPU or node list in numactl's forms (`numactl(8)`, libnuma's
/// `numa_parse_cpustring`/`numa_parse_nodestring`): a list, `all`, `!LIST`
/// (every allowed one but LIST) or `+LIST` (LIST as indices into the
/// allowed ones: `+0-1` is the first two), resolved against the allowed
/// CPUs or nodes by [`NodeChoice::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeChoice {
    /// Every allowed one (for memory: every node with memory the process may use).
    All,
    /// These.
    Nodes(NodeSet),
    /// `!LIST`: every allowed one but these.
    AllBut(NodeSet),
    /// `+LIST`: the allowed ones at these indices (0 is the lowest).
    Relative(NodeSet),
}

impl NodeChoice {
    /// Parses `all`, `!LIST`, `+LIST` or a list, the list by `parse`.
    pub fn parse<E>(text: &str, parse: impl Fn(&str) -> Result<NodeSet, E>) -> Result<Self, E> {
        Ok(if text == "all" {
            NodeChoice::All
        } else if let Some(rest) = text.strip_prefix('!') {
            NodeChoice::AllBut(parse(rest)?)
        } else if let Some(rest) = text.strip_prefix('+') {
            NodeChoice::Relative(parse(rest)?)
        } else {
            NodeChoice::Nodes(parse(text)?)
        })
    }

    /// The ids this choice names among `allowed`; `Err` says why when
    /// `+LIST` has indices beyond the allowed ones or `!LIST` leaves none.
    pub fn resolve(&self, allowed: &NodeSet) -> Result<NodeSet, String> {
        let set = match self {
            NodeChoice::All => allowed.clone(),
            NodeChoice::Nodes(n) => n.clone(),
            NodeChoice::AllBut(n) => allowed.difference(n),
            NodeChoice::Relative(idx) => {
                let ids: Vec<u32> = allowed.iter().collect();
                let beyond: NodeSet = idx.iter().filter(|&i| i as usize >= ids.len()).collect();
                if !beyond.is_empty() {
                    return Err(format!(
                        "+{idx}: only {} allowed ({allowed}), so index {beyond} names none",
                        ids.len()
                    ));
                }
                idx.iter().map(|i| ids[i as usize]).collect()
            }
        };
        // `all` of none and an empty list are refused where they are used,
        // with the reason (no NUMA, no CPU allowed); `!LIST` of them all here.
        if set.is_empty() && matches!(self, NodeChoice::AllBut(_)) {
            return Err(format!("names none of the allowed ones ({allowed})"));
        }
        Ok(set)
    }
}

/// A memory policy request (`set_mempolicy(2)`, `numactl(8)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryRequest {
    /// `--membind [NODES]`: `None` means the nodes of the chosen CPUs.
    Bind(Option<NodeChoice>),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[u32]) -> NodeSet {
        v.iter().copied().collect()
    }

    /// numactl(8): "!" inverts within the allowed set, "+" counts from 0
    /// among the allowed ones (libnuma numa_parse_cpustring).
    #[test]
    fn numactl_list_forms_resolve_against_the_allowed_ones() {
        let parse = |t: &str| NodeChoice::parse(t, CpuSet::parse).unwrap();
        let allowed = set(&[2, 3, 5, 8]);
        assert_eq!(parse("all").resolve(&allowed), Ok(allowed.clone()));
        assert_eq!(parse("!3,8").resolve(&allowed), Ok(set(&[2, 5])));
        assert_eq!(parse("+0,2").resolve(&allowed), Ok(set(&[2, 5])));
        assert_eq!(parse("+1-3").resolve(&allowed), Ok(set(&[3, 5, 8])));
        assert_eq!(parse("5").resolve(&allowed), Ok(set(&[5])));
        assert!(parse("+4").resolve(&allowed).is_err());
        assert!(parse("!2-8").resolve(&allowed).is_err());
    }
}
