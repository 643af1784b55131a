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
    /// `--choose`: how `--cores` ranks the candidate cores.
    pub choose: Choose,
}

/// How `--cores` ranks the candidate cores (`--choose`; pinrun(1)
/// CHOOSING CORES).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Choose {
    /// By what pinrun reads (`crate::plan::quiet`).
    #[default]
    Rule,
    /// `--choose measured[=DURATION]`: by the worst gap the spin probe
    /// measures on every candidate core at once for `duration_ns`
    /// (default [`Choose::DEFAULT_MEASURE_NS`]), then by the rule.
    Measured {
        /// How long to measure, ns.
        duration_ns: u64,
    },
}

impl Choose {
    /// The default measuring time of `--choose measured`: 1 s.
    pub const DEFAULT_MEASURE_NS: u64 = 1_000_000_000;
    /// The longest measuring time `--choose measured=DURATION` takes: 10 s.
    pub const MAX_MEASURE_NS: u64 = 10_000_000_000;
    /// The shortest: 10 ms (a scheduler tick at HZ=100 must fit).
    pub const MIN_MEASURE_NS: u64 = 10_000_000;
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
    /// Print the plan as native configuration (`--emit systemd|k8s|slurm`).
    Emit,
    /// Compare the topology fingerprint of an emitted file with this
    /// machine's (`--check-emitted FILE`).
    CheckEmitted,
    /// `--probe` without a command: plan, check, measure the noise on the
    /// chosen CPUs and print it; nothing is applied to pinrun itself.
    Probe,
    /// `--plan-host`: the boot-time split of the host into housekeeping
    /// and latency CPUs and every setting that realises it (issue 38);
    /// with `--check`, how the running host differs from it.
    PlanHost,
}

/// How many CPUs `--plan-host` keeps for housekeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostSize {
    /// `--housekeeping-count N`: N CPUs (whole cores), as OpenShift's
    /// Performance Profile Creator's `--reserved-cpu-count`.
    Housekeeping(u32),
    /// `--latency-cores N`: every core but N is housekeeping.
    LatencyCores(u32),
    /// Neither (only with `--check`): the running host's own split, its
    /// latency CPUs those the kernel isolates (`cpu/isolated` ∪
    /// `cpu/nohz_full`).
    Running,
}

/// `--plan-host` and its options (issue 38).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRequest {
    /// The housekeeping size.
    pub size: HostSize,
    /// `--offline-count N`: CPUs to take offline (PPC's
    /// `--offlined-cpu-count`).
    pub offline: u32,
    /// `--no-smt`: the plan boots with `nosmt` (PPC's `--disable-ht`):
    /// only the first CPU of each core stays.
    pub no_smt: bool,
    /// `--split-numa`: housekeeping spread evenly over the NUMA nodes
    /// (PPC's `--split-reserved-cpus-across-numa`).
    pub split_numa: bool,
    /// `--check`: compare the running host with the split instead of
    /// printing the settings.
    pub verify: bool,
}

/// The native configuration `--emit` prints (issue 23).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmitFormat {
    /// systemd `[Service]` directives.
    Systemd,
    /// A Kubernetes container `resources` stanza for the static CPU manager.
    K8s,
    /// `srun --cpu-bind=` for this many tasks per node.
    Slurm(u32),
}

/// The fleet engines (issue 23): what to emit, and how to wait for
/// kubelet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetRequest {
    /// `--emit FORMAT` (with `Mode::Emit`).
    pub emit: Option<EmitFormat>,
    /// `--cgroup` (with `--emit systemd`): add `AllowedCPUs=` and
    /// `AllowedMemoryNodes=`.
    pub cgroup: bool,
    /// `--unit-user USER` (with `--emit systemd`): the unit's `User=`.
    pub unit_user: Option<String>,
    /// `--settle DURATION` (ns): how long to wait for kubelet to write the
    /// container's exclusive CPUs into its cpuset.
    pub settle: Option<u64>,
    /// `--check-emitted FILE` (with `Mode::CheckEmitted`).
    pub emitted: Option<PathBuf>,
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
    /// `--steer-irqs`: move the movable IRQs off the claimed CPUs while
    /// the command lives (issue 21).
    pub steer_irqs: bool,
    /// `--irq-housekeeping LIST`: where IRQs go when nothing of their
    /// affinity is left; `None`: the online CPUs that are not isolated,
    /// nohz_full or claimed.
    pub irq_housekeeping: Option<crate::cpuset::CpuSet>,
    /// `--irqbalance-config`: a running irqbalance without its control
    /// socket gets the claimed CPUs banned in its configuration file and
    /// is restarted (refused without it).
    pub irqbalance_config: bool,
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
    /// Kubernetes, Slurm and systemd: `--emit`, `--cgroup`, `--settle`,
    /// `--check-emitted`.
    pub fleet: FleetRequest,
    /// `--pid`: a running process instead of a command.
    pub target: Option<Target>,
    /// Per-thread placement: `--omp`, `--thread-map` (issue 22).
    pub threads: ThreadRequest,
    /// `--probe[=DURATION]` and its options: measure the noise on the
    /// chosen CPUs before the launch (or, in [`Mode::Probe`], only that).
    pub probe: Option<crate::noise::ProbeRequest>,
    /// `--plan-host` (with [`Mode::PlanHost`]).
    pub host: Option<HostRequest>,
}

/// A running process to show or change (`--pid`, `--tid`, `--migrate`;
/// issue 18).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The process id (`self` resolved to pinrun's own).
    pub pid: u32,
    /// `--tid`: only this thread; `None`: every thread.
    pub tid: Option<u32>,
    /// `--migrate`: move the process's pages to the chosen nodes.
    pub migrate: bool,
    /// `--migrate-limit`: the most bytes `--migrate` may move.
    pub migrate_limit: Option<u64>,
}

impl Target {
    /// Whether the request only asks to see the process (no placement,
    /// scheduling, memory or migration).
    pub fn is_query(&self, req: &Request) -> bool {
        !self.migrate
            && !req.placement.is_requested()
            && !req.sched.is_requested()
            && req.memory.is_none()
    }
}

/// How `--omp` forms OpenMP places (`OMP_PLACES`, OpenMP 5.2 §21.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OmpPlaces {
    /// `--omp` / `--omp=cores`: one place per planned core, in plan order;
    /// with `--smt` its planned SMT siblings, otherwise one CPU.
    Cores,
    /// `--omp=threads`: one place per planned CPU.
    Threads,
}

/// Per-thread placement (`--omp`, `--thread-map`, `--thread-log`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadRequest {
    /// `--omp[=cores|threads]`: export `OMP_PLACES`, `OMP_PROC_BIND` and
    /// `OMP_NUM_THREADS` for the command.
    pub omp: Option<OmpPlaces>,
    /// `--omp-replace`: replace the caller's `OMP_PLACES`, `OMP_PROC_BIND`,
    /// `GOMP_CPU_AFFINITY` and `KMP_AFFINITY` instead of refusing.
    pub omp_replace: bool,
    /// `--thread-map RULES`: the rules, in the order given.
    pub thread_map: Vec<ThreadRule>,
    /// `--thread-log FILE`: one JSON line per watcher decision.
    pub thread_log: Option<PathBuf>,
    /// `PINRUN_THREAD_WATCH=poll`: the watcher polls, without trying perf
    /// events.
    pub poll_only: bool,
}

/// Which threads a `--thread-map` rule matches (left of `=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadSelector {
    /// `main`: the thread whose TID is the PID (the one that exec'd).
    Main,
    /// `#N`: the N-th thread created after the main thread (1-based), in
    /// the order the watcher first sees their TIDs.
    Nth(u32),
    /// A glob (`fnmatch(3)`: `*`, `?`, `[...]`) on the thread's name, the
    /// `comm` of `/proc/PID/task/TID/comm` (15 bytes at most, set by
    /// `pthread_setname_np(3)` / `prctl(PR_SET_NAME)`).
    Name(String),
}

/// Where a `--thread-map` rule puts its threads (right of `=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadTarget {
    /// `@N` or `@N-M`: the plan's positions N to M (0-based; a position is
    /// one planned CPU, or one planned core with `--smt`).
    Positions(u32, u32),
    /// `each`: one position per matching thread, round-robin in the order
    /// the threads match.
    Each,
    /// `housekeeping`: the planned CPUs that are housekeeping CPUs
    /// (neither isolated nor nohz_full).
    Housekeeping,
    /// `rest`: the planned positions no `@` target of the map names.
    Rest,
}

/// One `SELECTOR=TARGET` rule of `--thread-map`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRule {
    /// Which threads.
    pub selector: ThreadSelector,
    /// Where they go.
    pub target: ThreadTarget,
    /// The rule as written (for messages and `--thread-log`).
    pub text: String,
}

impl ThreadRule {
    /// Parses `--thread-map`'s comma-separated `SELECTOR=TARGET` rules:
    /// selectors `main`, `#N` (N ≥ 1) or a name glob (a plain name at
    /// most 15 bytes, the kernel's `TASK_COMM_LEN` - 1); targets `@N`, `@N-M`, `each`,
    /// `housekeeping`, `rest`. `Err` names the rule and what is wrong.
    pub fn parse_list(text: &str) -> Result<Vec<ThreadRule>, String> {
        let mut rules = Vec::new();
        for rule in text.split(',') {
            let rule = rule.trim();
            let Some((sel, target)) = rule.split_once('=') else {
                return Err(format!("\"{rule}\" is not SELECTOR=TARGET"));
            };
            let selector = match sel {
                "main" => ThreadSelector::Main,
                "" => return Err(format!("\"{rule}\" has no selector")),
                s if s.starts_with('#') => match s[1..].parse::<u32>() {
                    Ok(n) if n >= 1 => ThreadSelector::Nth(n),
                    _ => {
                        return Err(format!(
                            "\"{rule}\": #N counts threads from 1 (#1 is the first thread the main thread creates)"
                        ));
                    }
                },
                s if s.len() > 15 && !s.contains(['*', '?', '[']) => {
                    return Err(format!(
                        "\"{rule}\": thread names have at most 15 bytes (TASK_COMM_LEN), so \"{s}\" matches none"
                    ));
                }
                s => ThreadSelector::Name(s.to_string()),
            };
            let target = match target {
                "each" => ThreadTarget::Each,
                "housekeeping" => ThreadTarget::Housekeeping,
                "rest" => ThreadTarget::Rest,
                t if t.starts_with('@') => {
                    let (a, b) = t[1..].split_once('-').unwrap_or((&t[1..], &t[1..]));
                    match (a.parse::<u32>(), b.parse::<u32>()) {
                        (Ok(a), Ok(b)) if a <= b => ThreadTarget::Positions(a, b),
                        _ => {
                            return Err(format!(
                                "\"{rule}\": a position is @N or @N-M with N <= M (0 is the plan's first)"
                            ));
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "\"{rule}\": the target is @N, @N-M, each, housekeeping or rest"
                    ));
                }
            };
            // The first rule that matches a thread places it: a rule
            // after one with the same selector, or after `*` (every
            // thread has a name), would never match.
            if let Some(earlier) = rules.iter().find(|r: &&ThreadRule| {
                r.selector == selector || r.selector == ThreadSelector::Name("*".into())
            }) {
                return Err(format!(
                    "\"{rule}\" can never match: the earlier \"{}\" matches its threads first (the first rule that matches a thread places it)",
                    earlier.text
                ));
            }
            rules.push(ThreadRule {
                selector,
                target,
                text: rule.to_string(),
            });
        }
        Ok(rules)
    }
}

impl Request {
    /// The options that carry latency intent (pinrun(1) CHOOSING CORES):
    /// a real-time or deadline policy (`--fifo`, `--rr`, `--deadline`),
    /// `--exclusive`, `--isolated`, `--probe`, `--steer-irqs`,
    /// `--choose measured`; empty: none.
    /// With intent, `--cores` takes the quietest whole cores; without, it
    /// keeps off the isolated and nohz_full CPUs
    /// ([`crate::plan::quiet`]). The mode plays no part: `--dry-run`,
    /// `--check`, `--emit` and the launch choose alike.
    pub fn latency_intent(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        match self.sched.policy {
            Some(Policy::Fifo(_)) => v.push("--fifo"),
            Some(Policy::Rr(_)) => v.push("--rr"),
            Some(Policy::Deadline { .. }) => v.push("--deadline"),
            _ => {}
        }
        if self.claims.exclusive {
            v.push("--exclusive");
        }
        if self.placement.isolated {
            v.push("--isolated");
        }
        if self.probe.is_some() {
            v.push("--probe");
        }
        if self.claims.steer_irqs {
            v.push("--steer-irqs");
        }
        if matches!(self.placement.choose, Choose::Measured { .. }) {
            v.push("--choose measured");
        }
        v
    }

    /// Whether the launch is latency-critical: it carries latency intent
    /// ([`Request::latency_intent`]: the same notion that chooses its
    /// cores), or it is `--check` itself. Disturbances (no isolation, IRQs)
    /// are then warnings rather than info.
    pub fn latency_critical(&self) -> bool {
        self.mode == Mode::Check || !self.latency_intent().is_empty()
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

    #[test]
    fn thread_map_rules_parse_in_order() {
        let r = ThreadRule::parse_list("w1=@0,w2=@1-3,main=housekeeping,#2=each,*=rest").unwrap();
        let got: Vec<(ThreadSelector, ThreadTarget)> =
            r.into_iter().map(|r| (r.selector, r.target)).collect();
        assert_eq!(
            got,
            vec![
                (
                    ThreadSelector::Name("w1".into()),
                    ThreadTarget::Positions(0, 0)
                ),
                (
                    ThreadSelector::Name("w2".into()),
                    ThreadTarget::Positions(1, 3)
                ),
                (ThreadSelector::Main, ThreadTarget::Housekeeping),
                (ThreadSelector::Nth(2), ThreadTarget::Each),
                (ThreadSelector::Name("*".into()), ThreadTarget::Rest),
            ]
        );
        for bad in [
            "w1",
            "=@0",
            "w1=@",
            "w1=@3-1",
            "w1=@x",
            "#0=@0",
            "#x=@0",
            "w1=cpu3",
            "a_sixteen_bytes_=@0",
            "",
            // Never matched: the first matching rule places a thread.
            "main=@0,main=@1",
            "w*=@0,w*=each",
            "#2=@0,#2=@1",
            "*=@0,main=@1",
        ] {
            assert!(ThreadRule::parse_list(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ThreadRule::parse_list("main=@0,main=@1").unwrap_err(),
            "\"main=@1\" can never match: the earlier \"main=@0\" matches its threads first (the first rule that matches a thread places it)"
        );
    }
}
