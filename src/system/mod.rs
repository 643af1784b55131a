//! Reading the system: the only layer that opens files. It returns plain
//! data ([`SystemState`]) and makes no decisions. Every path goes through a
//! [`Root`], so `--sysroot DIR` replays a machine dump exactly.

pub mod archive;
pub mod cgroup;
pub mod config;
pub mod cpuidle;
pub mod devices;
pub mod irq;
pub mod kernel_config;
pub mod kubelet;
pub mod noise;
pub mod numa;
pub mod parallel;
pub mod preempt;
pub mod process;
pub mod root;
pub mod rt_tasks;
pub mod scope;
pub mod state_dir;
pub mod threads;
pub mod topology;

/// A kernel counter field (`/proc/interrupts`, `per_cpu_count`,
/// `/proc/stat`, `schedstat`, meminfo's kB): leading and trailing
/// whitespace and an optional `+` (as `str::parse::<u64>`), then decimal
/// digits. A value past `u64::MAX` (a hostile or corrupt dump: the kernel
/// prints these with `%u`/`%llu`) saturates at `u64::MAX` instead of
/// failing, so that a column is never lost nor read as 0; `None` when the
/// field is not a number.
pub fn parse_count(field: &str) -> Option<u64> {
    let t = field.trim();
    let digits = t.strip_prefix('+').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

pub use cgroup::CgroupCpuset;
pub use numa::Node;
pub use process::Process;
pub use root::Root;
pub use scope::{Cpus, Scope};
pub use topology::Cpu;

use crate::cpuset::{CpuSet, NodeSet};
use std::collections::BTreeMap;

/// The most CPUs pinrun reads topology for (Linux's `NR_CPUS` maximum is 8192).
pub const MAX_CPUS: usize = 65536;

/// Where the allowed-CPU limit came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedSource {
    /// The caller's cgroup cpuset.
    Cgroup(CgroupCpuset),
    /// No cpuset information: `Cpus_allowed_list` of `/proc/self/status`.
    Status,
    /// Neither: every online CPU.
    Online,
}

/// Where an isolation set was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationSource {
    /// The kernel's sysfs file (authoritative).
    Sysfs,
    /// The file is absent; derived from `/proc/cmdline`.
    Cmdline,
    /// The file is absent on a kernel that would have it with the feature
    /// built in (`cpu/nohz_full` beside `cpu/isolated`: no
    /// CONFIG_NO_HZ_FULL): the set is empty whatever the command line says.
    NotBuilt,
}

/// Two sources of one fact that disagree, and which one pinrun used
/// (always the kernel-enforced one; pinrun(1) SOURCES).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The CPUs concerned.
    pub cpus: CpuSet,
    /// Both sources with what each says, and the one used.
    pub message: String,
    /// What the user can do about it, if anything.
    pub hint: String,
}

/// Everything pinrun knows about the machine and the caller.
#[derive(Debug, Clone)]
pub struct SystemState {
    /// `cpu/possible`.
    pub possible: CpuSet,
    /// `cpu/present`.
    pub present: CpuSet,
    /// `cpu/online`.
    pub online: CpuSet,
    /// Every `cpuN` directory, by id.
    pub cpus: BTreeMap<u32, Cpu>,
    /// NUMA nodes by id. A kernel without NUMA (no
    /// `/sys/devices/system/node`: `CONFIG_NUMA=n`) has one node 0 holding
    /// every online CPU, as hwloc reports it (`numa` is then false).
    pub nodes: BTreeMap<u32, Node>,
    /// Whether the kernel exposes NUMA (`/sys/devices/system/node` exists).
    /// Without it `set_mempolicy(2)` fails with ENOSYS: memory options are
    /// a no-op, never applied.
    pub numa: bool,
    /// CPUs the caller may use: online ∩ its cgroup cpuset.
    pub allowed: CpuSet,
    /// Where `allowed` came from.
    pub allowed_source: AllowedSource,
    /// Domain-isolated CPUs: `cpu/isolated` ∪ root `cpuset.cpus.isolated`
    /// (without `cpu/isolated`: the `isolcpus=` CPUs when it has `domain`).
    pub isolated: CpuSet,
    /// `cpu/nohz_full`; without it, empty when `cpu/isolated` exists (a
    /// kernel built without CONFIG_NO_HZ_FULL), else what the command line
    /// asks for (an older kernel, or a dump without the file).
    pub nohz_full: CpuSet,
    /// Where `nohz_full` came from.
    pub nohz_full_source: IsolationSource,
    /// `/sys/devices/virtual/workqueue/cpumask`: the CPUs unbound
    /// workqueue workers may run on (`wq_unbound_cpumask`,
    /// kernel/workqueue.c; Linux 4.2+). Read only when some CPU is
    /// domain-isolated; `None` when not read or absent.
    pub workqueue_cpus: Option<CpuSet>,
    /// Where `isolated` came from.
    pub isolation_source: IsolationSource,
    /// The isolation parameters of `/proc/cmdline`.
    pub boot: crate::boot_params::BootParams,
    /// Every IRQ and its affinity (`/sys/kernel/irq` or `/proc/interrupts`,
    /// and `/proc/irq`); from `/sys/kernel/irq` the names and counts of the
    /// IRQs on the checked CPUs are read by [`SystemState::read_extras`]
    /// (of all of them with [`Scope::full`]).
    pub irqs: irq::Irqs,
    /// Competing real-time tasks; read by [`SystemState::read_extras`] only
    /// when a real-time policy is requested.
    pub rt_tasks: Vec<rt_tasks::RtTask>,
    /// Enabled idle states of the chosen CPUs; read by
    /// [`SystemState::read_extras`].
    pub idle_states: BTreeMap<u32, Vec<cpuidle::IdleState>>,
    /// RT group scheduling limits on the caller.
    pub rt_group: cgroup::RtGroup,
    /// The kernel's preemption model ([`preempt::read`]), read with
    /// [`Scope::preempt`]; `None` when not read or unknown.
    pub preempt: Option<preempt::Preemption>,
    /// `kernel.numa_balancing`.
    pub numa_balancing: Option<i64>,
    /// The CFS bandwidth limit on the caller's cgroup v2 (or an ancestor;
    /// [`cgroup::read_cpu_max`]).
    pub cpu_max: Option<cgroup::CpuMax>,
    /// The caller's cgroup paths, most telling first: the v2 path, then the
    /// v1 paths of the `cpuset`, `cpu` and `cpuacct` controllers
    /// ([`cgroup::pod_paths`]; a Kubernetes pod is recognised in them).
    pub cgroup_paths: Vec<String>,
    /// Who set the inherited affinity, for messages ("Slurm task 3"; see
    /// [`Self::inherited_phrase`]): read by no code of the core, set by the
    /// application (the fleet wing's Slurm task); `None` otherwise.
    pub inherited_from: Option<String>,
    /// Thread-binding variables of OpenMP runtimes set in the environment.
    pub env_affinity: Vec<(String, String)>,
    /// `OMP_NUM_THREADS` from the environment (`--omp` keeps it when set).
    pub env_omp_num_threads: Option<String>,
    /// `/proc/cmdline`.
    pub cmdline: String,
    /// The caller's limits.
    pub process: Process,
    /// Inconsistencies in the firmware's data (e.g. a CPU in two nodes).
    pub warnings: Vec<String>,
    /// Topology files that contradict each other or the kernel's bounds,
    /// and what pinrun used instead (`topology-inconsistent` findings):
    /// `cpuN` directories beyond `possible`/`kernel_max`, sibling lists
    /// that are missing, empty, unparsable or asymmetric.
    pub topology_issues: Vec<String>,
    /// CPUs with an RCU callback-offload kthread
    /// ([`rt_tasks::read_nocb_kthreads`]), read for `--check` and
    /// `--show` when kernel threads are visible: a CPU without one is not
    /// offloaded, whatever the command line says.
    pub nocb_kthreads: Option<CpuSet>,
    /// The hybrid x86 core types (`/sys/devices/cpu_core/cpus`,
    /// `cpu_atom/cpus`), read with [`Scope::units`] or `details`.
    pub hybrid: topology::HybridPmus,
    /// The device `--near` names ([`Scope::near`]): `Err` says why it
    /// was not found.
    pub near: Option<Result<devices::Device, String>>,
    /// The network interfaces and block devices that are not virtual,
    /// with their nodes (`--show`; read with `details`).
    pub devices: Vec<devices::Device>,
    /// Sources of one fact that disagree (`sources-disagree` findings).
    pub disagreements: Vec<Disagreement>,
    /// A read that must stop the run (exit 125): topology that cannot be
    /// made consistent, or a file beyond its reading budget.
    pub read_error: Option<crate::error::Error>,
    /// `--choose measured`: the worst gap (ns) the spin probe measured on
    /// each probed CPU, set by the application layer before the final plan
    /// (`crate::probe::run::measure_choice`; empty while it plans what to
    /// measure); `None`: nothing measured (the plan then refuses
    /// `--choose measured`). A reading of the machine like the others,
    /// made by running on it.
    pub measured: Option<BTreeMap<u32, u64>>,
}

impl SystemState {
    /// Reads the whole machine below `root` (what `--show` prints).
    pub fn read(root: &Root) -> Self {
        Self::read_scoped(root, &Scope::full())
    }

    /// Reads what `scope` asks for below `root`: the fields a request's plan
    /// and checks look at are exactly as [`SystemState::read`] gives them;
    /// the others are left `None`/empty (see [`Scope`]).
    pub fn read_scoped(root: &Root, scope: &Scope) -> Self {
        Self::read_scoped_ahead(root, scope, None).0
    }

    /// [`SystemState::read_scoped`], and, with `rt_tasks` =
    /// `Some(self_pid)`, the real-time tasks for
    /// [`SystemState::read_extras`] ([`rt_tasks::read_rt_tasks`]`(root,
    /// self_pid)`), which need nothing this read gives: when
    /// [`parallel::ahead`] allows a helper thread (2 allowed CPUs or more,
    /// one of them idle), that thread scans them, and first reads the IRQs
    /// (without details: they need only `cpu/possible`), as soon as the CPU
    /// sets are read, while this one reads the rest; otherwise
    /// [`rt_tasks::RtScan::Here`]: `read_extras` scans them, as before.
    /// The state is the same either way, and so is `read_error`: each
    /// helper read goes through a root with its own over-budget record,
    /// adopted where the read would have been made on one thread.
    pub fn read_scoped_ahead(
        root: &Root,
        scope: &Scope,
        rt_tasks: Option<Option<u32>>,
    ) -> (Self, Option<rt_tasks::RtScan>) {
        let mut sets = topology::read_sets(root);
        let (irqs_ahead, rt_scan) = start_ahead(root, scope, &sets.possible, rt_tasks);
        // Every CPU the kernel knows has a cpuN directory; ids only named in
        // `online` (a damaged dump) are not read one by one.
        let known = if sets.dirs.is_empty() {
            sets.online.clone()
        } else {
            sets.dirs.clone()
        };
        let (nodes, ignored_nodes) = numa::read_nodes(root, scope.details || scope.memory);
        let mut nodes: BTreeMap<u32, Node> = nodes.into_iter().map(|n| (n.id, n)).collect();
        let numa = root.exists("/sys/devices/system/node");
        let (process, me, cpuset) = read_caller(root, scope);
        let mut disagreements = Vec::new();
        let affinity = process.cpus_allowed.as_ref();
        sets.online = online_of(root, &sets, cpuset.as_ref(), affinity, &mut disagreements);
        add_offline_cpus(root, &mut nodes, numa, &known, &sets.online);
        let (allowed, allowed_source) = allowed_of(&sets.online, cpuset, affinity);
        let iso = read_isolation(root, scope.isolation, &sets, &mut disagreements);
        let nocb_kthreads = read_nocb(root, scope.kthreads, &iso, &sets.online, &mut disagreements);
        // Unbound workqueue workers may still run on isolated CPUs (before
        // Linux 6.6 isolcpus=domain did not take them out of
        // wq_unbound_cpumask): read where some CPU is isolated.
        let workqueue_cpus = (scope.isolation && !iso.isolated.is_empty())
            .then(|| root.read_mask("/sys/devices/virtual/workqueue/cpumask"))
            .flatten();
        let mut topology_issues = sets.issues.clone();
        topology_issues.extend(ignored_nodes);
        let topology = TopologyRead {
            root,
            scope,
            known: &known,
            online: &sets.online,
            allowed: &allowed,
            isolated: &iso.isolated,
            nodes: &nodes,
        };
        let (mut cpus, mut read_error) = topology.read_cpus(&mut topology_issues);
        topology.read_units(&mut cpus);
        let hybrid = topology.read_hybrid();
        let warnings = assign_nodes(&nodes, &mut cpus);
        let irqs = read_irqs_scoped(root, scope, &sets, &allowed, irqs_ahead);
        first_read_error(root, &irqs, &mut read_error);
        let state = Self {
            nohz_full: iso.nohz_full,
            nohz_full_source: iso.nohz_full_source,
            workqueue_cpus,
            isolation_source: iso.isolation_source,
            boot: iso.boot,
            irqs,
            numa_balancing: if scope.info {
                root.read_int("/proc/sys/kernel/numa_balancing")
            } else {
                None
            },
            rt_group: if scope.sched || scope.details {
                cgroup::read_rt_group(root, &me)
            } else {
                cgroup::RtGroup::default()
            },
            preempt: if scope.preempt {
                preempt::read(root)
            } else {
                None
            },
            rt_tasks: Vec::new(),
            idle_states: BTreeMap::new(),
            cpu_max: cgroup::read_cpu_max(root, &me),
            cgroup_paths: cgroup::pod_paths(root, &me),
            inherited_from: None,
            env_affinity: env_affinity(),
            env_omp_num_threads: std::env::var("OMP_NUM_THREADS").ok(),
            cmdline: iso.cmdline,
            possible: sets.possible,
            present: sets.present,
            online: sets.online,
            cpus,
            nodes,
            numa,
            allowed,
            allowed_source,
            isolated: iso.isolated,
            process,
            warnings,
            topology_issues,
            disagreements,
            nocb_kthreads,
            hybrid,
            near: scope.near.as_ref().map(|spec| {
                devices::read_device(root, spec, root.base() == std::path::Path::new("/"))
            }),
            devices: if scope.details {
                devices::read_devices(root)
            } else {
                Vec::new()
            },
            read_error,
            measured: None,
        };
        (state, rt_scan)
    }

    /// Reads what only some plans need, for the checked CPUs `cpus` (the
    /// chosen ones, or every allowed CPU without a placement): the names and
    /// counts of the IRQs delivered to them ([`irq::Irqs::read_details`];
    /// only IRQs read from `/sys/kernel/irq` lack them); when `info`, their
    /// idle states and cpufreq governors (the `cpufreq-governor` check looks
    /// at no other CPU's; both give info findings only); and, with `rt` (a
    /// real-time policy is requested), the machine's other real-time tasks
    /// ([`rt_tasks::RtScan`]: scanned here, or joined from the helper that
    /// scanned them ahead). A file beyond its reading budget sets
    /// `read_error` (the caller refuses with it): the first one in the
    /// order of a read on one thread.
    pub fn read_extras(
        &mut self,
        root: &Root,
        cpus: &CpuSet,
        info: bool,
        rt: Option<rt_tasks::RtScan>,
    ) {
        self.irqs
            .read_details(root, &self.possible, &self.online, Some(cpus));
        if info {
            // `/sys/devices/system/cpu` opened once: each CPU's files are a
            // short path walk from it (unopenable: nothing below it reads).
            let cpu_dir = root.dir("/sys/devices/system/cpu");
            // Each CPU's governor and idle states on the allowed CPUs
            // (`parallel::map`): two files or more per CPU, 8 192 opens
            // for the whole check of a 4096-CPU machine.
            let ids: Vec<u32> = cpus.iter().collect();
            let known = &self.cpus;
            let read = parallel::map(root, &ids, |&id| {
                let Some(dir) = &cpu_dir else {
                    return (None, Vec::new());
                };
                let governor = known.get(&id).and_then(|c| topology::governor_in(dir, c));
                (governor, cpuidle::read_idle_states(dir, id))
            });
            self.idle_states = BTreeMap::new();
            for (id, (governor, states)) in ids.into_iter().zip(read) {
                if let (Some(cpu), Some(governor)) = (self.cpus.get_mut(&id), governor) {
                    cpu.governor = governor;
                }
                self.idle_states.insert(id, states);
            }
        }
        if let Some(scan) = rt {
            self.rt_tasks = scan.tasks(root);
        }
        if let Some(e) = budget_error(root) {
            self.read_error.get_or_insert(e);
        }
    }

    /// Whether the caller's cpuset is a cgroup v2 one (its effective CPUs
    /// read from `cpuset.cpus.effective`): only there do cpuset partitions
    /// (`cpuset.cpus.partition`, `Documentation/admin-guide/cgroup-v2.rst`)
    /// exist, so only there may a hint offer one.
    pub fn cgroup_v2(&self) -> bool {
        matches!(&self.allowed_source, AllowedSource::Cgroup(cs) if cs.file.ends_with("cpuset.cpus.effective"))
    }

    /// The SMT siblings of `cpu` including itself; a CPU without topology
    /// information is a core of its own.
    pub fn core_of(&self, cpu: u32) -> CpuSet {
        self.cpus
            .get(&cpu)
            .and_then(|c| c.siblings.clone())
            .filter(|s| s.contains(cpu))
            .unwrap_or_else(|| std::iter::once(cpu).collect())
    }

    /// The node of `cpu`, if known.
    pub fn node_of(&self, cpu: u32) -> Option<u32> {
        self.cpus.get(&cpu).and_then(|c| c.node)
    }

    /// How the allowed set is limited, for messages: "the cpuset of cgroup
    /// /a: /sys/fs/cgroup/a/cpuset.cpus.effective = 0-3", "this process's
    /// allowed CPUs (Cpus_allowed_list = …)" or "no cgroup cpuset (none found)".
    pub fn allowed_phrase(&self) -> String {
        match &self.allowed_source {
            AllowedSource::Cgroup(cs) => format!(
                "the cpuset of cgroup {}: {} = {}",
                cs.cgroup,
                cs.file,
                cs.cpus.to_list()
            ),
            AllowedSource::Status => format!(
                "this process's allowed CPUs (Cpus_allowed_list = {})",
                self.allowed.to_list()
            ),
            AllowedSource::Online => "no cgroup cpuset (none found)".to_string(),
        }
    }

    /// The inherited affinity for messages: "Slurm task 3 mask 4-7" in a
    /// Slurm job step (issue 23), else "Cpus_allowed_list = 4-7".
    pub fn inherited_phrase(&self) -> String {
        let mask = self
            .process
            .cpus_allowed
            .as_ref()
            .map_or("none".to_string(), crate::words::or_none);
        match &self.inherited_from {
            Some(who) => format!("{who} mask {mask}"),
            None => format!("Cpus_allowed_list = {mask}"),
        }
    }

    /// Ids of every node.
    pub fn node_ids(&self) -> NodeSet {
        self.nodes.keys().copied().collect()
    }

    /// Nodes with memory.
    pub fn memory_nodes(&self) -> NodeSet {
        self.nodes
            .values()
            .filter(|n| n.has_memory)
            .map(|n| n.id)
            .collect()
    }
}

/// Starts [`SystemState::read_scoped_ahead`]'s helper when `rt_tasks` is
/// `Some(self_pid)` ([`start_helper`]; the IRQs read ahead only when
/// `scope` wants them without details): the channel the IRQs come on, if
/// the helper reads them, and how the real-time tasks are scanned
/// ([`rt_tasks::RtScan::Ahead`] by the helper, or
/// [`rt_tasks::RtScan::Here`] when none could start). `(None, None)`
/// without `rt_tasks`.
fn start_ahead(
    root: &Root,
    scope: &Scope,
    possible: &CpuSet,
    rt_tasks: Option<Option<u32>>,
) -> (Option<IrqsAhead>, Option<rt_tasks::RtScan>) {
    let irqs_ahead = scope.irqs && !scope.details;
    match rt_tasks {
        None => (None, None),
        Some(self_pid) => match start_helper(root, possible, irqs_ahead, self_pid) {
            Some((irqs, scan)) => (irqs, Some(rt_tasks::RtScan::Ahead(scan))),
            None => (None, Some(rt_tasks::RtScan::Here(self_pid))),
        },
    }
}

/// Reads the caller below `root`: its process ([`process::read_process`]
/// with what `scope` asks for, and init's affinity for the quiet and init
/// rules or details), its cgroup ([`cgroup::read_of`]) and that cgroup's
/// cpuset ([`cgroup::read_cpuset`]), in that order. Without
/// `Mems_allowed_list` (most dumps) the cgroup's effective memory nodes
/// limit the process, as its effective CPUs do.
fn read_caller(root: &Root, scope: &Scope) -> (Process, cgroup::SelfCgroup, Option<CgroupCpuset>) {
    let mut process = process::read_process(
        root,
        scope.rt || scope.details,
        scope.nice,
        scope.details,
        scope.kernel,
    );
    if scope.quiet || scope.init || scope.details {
        process.init_cpus_allowed = process::init_affinity(root);
    }
    let me = cgroup::read_of(root, scope.cgroup_of);
    let cpuset = cgroup::read_cpuset(root, &me);
    if process.mems_allowed.is_none() {
        process.mems_allowed = cpuset.as_ref().and_then(|cs| cs.mems.clone());
    }
    if scope.mempolicy_modes {
        let node = process
            .mems_allowed
            .as_ref()
            .and_then(|m| m.first())
            .unwrap_or(0);
        process.mempolicy_modes = process::mempolicy_modes(root, node);
    }
    (process, me, cpuset)
}

/// The online CPUs ([`online_checked`]) against the caller's limit: its
/// cgroup's effective CPUs (`cpuset`) when that is the file read, else,
/// without a cpuset, its `affinity`. Only an effective set is kept within
/// the online CPUs; a configured one (cgroup v1 `cpus`, the old
/// /dev/cpuset) may name offline CPUs, so `cpu/online` stands then.
/// Disagreements go to `out`.
fn online_of(
    root: &Root,
    sets: &topology::CpuSets,
    cpuset: Option<&CgroupCpuset>,
    affinity: Option<&CpuSet>,
    out: &mut Vec<Disagreement>,
) -> CpuSet {
    match (cpuset, affinity) {
        (Some(cs), _)
            if cs.file.ends_with("cpus.effective") || cs.file.ends_with("effective_cpus") =>
        {
            online_checked(root, sets, &cs.cpus, OnlineWitness::Cgroup(&cs.file), out)
        }
        (None, Some(affinity)) => {
            online_checked(root, sets, affinity, OnlineWitness::Affinity, out)
        }
        _ => sets.online.clone(),
    }
}

/// Gives `nodes` their offline CPUs among `known` ([`numa::offline_cpu_nodes`]:
/// those not in `online`), when there are nodes; without NUMA (`numa`
/// false) adds node 0 holding every `online` CPU
/// ([`numa::without_numa`]).
fn add_offline_cpus(
    root: &Root,
    nodes: &mut BTreeMap<u32, Node>,
    numa: bool,
    known: &CpuSet,
    online: &CpuSet,
) {
    if !nodes.is_empty() {
        for (cpu, node) in numa::offline_cpu_nodes(root, &known.difference(online)) {
            if let Some(n) = nodes.get_mut(&node) {
                n.offline_cpus.insert(cpu);
            }
        }
    }
    if !numa {
        nodes.insert(0, numa::without_numa(online));
    }
}

/// The isolation of the CPUs, as [`read_isolation`] reads it.
struct Isolation {
    /// `/proc/cmdline` (empty when not read).
    cmdline: String,
    /// Its isolation parameters.
    boot: crate::boot_params::BootParams,
    /// [`SystemState::isolated`].
    isolated: CpuSet,
    /// [`SystemState::nohz_full`].
    nohz_full: CpuSet,
    /// [`SystemState::nohz_full_source`].
    nohz_full_source: IsolationSource,
    /// [`SystemState::isolation_source`].
    isolation_source: IsolationSource,
}

/// Reads the isolated and nohz_full CPUs when `iso` (without it: nothing
/// read, no CPU isolated): `/proc/cmdline`, `cpu/isolated`,
/// `cpu/nohz_full` and the root `cpuset.cpus.isolated`, in that order. The
/// kernel's sysfs files are authoritative; a dump without them falls back
/// to what the command line asks for (`isolcpus=`, `nohz_full=`;
/// `Documentation/admin-guide/kernel-parameters.txt`). A kernel built
/// without CONFIG_NO_HZ_FULL whose command line asks for nohz_full CPUs
/// adds a disagreement to `out`.
fn read_isolation(
    root: &Root,
    iso: bool,
    sets: &topology::CpuSets,
    out: &mut Vec<Disagreement>,
) -> Isolation {
    let cmdline = iso
        .then(|| root.read_value("/proc/cmdline"))
        .flatten()
        .unwrap_or_default();
    let boot = crate::boot_params::parse(&cmdline, sets.possible.last());
    let cpu_dir = "/sys/devices/system/cpu";
    let sysfs_isolated = iso
        .then(|| root.read_list(&format!("{cpu_dir}/isolated")))
        .flatten();
    let sysfs_nohz = iso
        .then(|| root.read_list(&format!("{cpu_dir}/nohz_full")))
        .flatten();
    // Kernel sysfs is authoritative; a dump without these files (the
    // isolation lives only on its command line) falls back to what the
    // command line asks for.
    let isolation_source = if sysfs_isolated.is_some() {
        IsolationSource::Sysfs
    } else {
        IsolationSource::Cmdline
    };
    let boot_iso = boot.isolcpus.as_ref();
    let boot_cpus = |want: bool| {
        boot_iso
            .filter(|_| want)
            .and_then(|i| i.cpus.clone())
            .unwrap_or_default()
    };
    // housekeeping_setup() (kernel/sched/isolation.c) keeps the boot
    // CPU (taken as the lowest online one) for housekeeping when every
    // CPU is listed, for isolcpus= and nohz_full= alike.
    let keep_boot = |mut asked: CpuSet| {
        if let Some(boot) = sets.online.first()
            && sets.online.is_subset(&asked)
        {
            asked.remove(boot);
        }
        asked
    };
    let isolated = sysfs_isolated
        .unwrap_or_else(|| {
            keep_boot(boot_cpus(
                boot_iso.is_some_and(|i| i.domain && !i.rejected()),
            ))
        })
        .union(
            &iso.then(|| root.read_list("/sys/fs/cgroup/cpuset.cpus.isolated"))
                .flatten()
                .unwrap_or_default(),
        );
    let nohz_asked = keep_boot(boot.nohz_full.clone().unwrap_or_default().union(&boot_cpus(
        boot_iso.is_some_and(|i| i.nohz && !i.rejected()),
    )));
    let (nohz_full, nohz_full_source) = nohz_full_of(sysfs_nohz, isolation_source, nohz_asked, out);
    Isolation {
        cmdline,
        boot,
        isolated,
        nohz_full,
        nohz_full_source,
        isolation_source,
    }
}

/// The nohz_full CPUs and where they came from: `cpu/nohz_full` when read
/// (`sysfs_nohz`), else none on a kernel built without CONFIG_NO_HZ_FULL,
/// else `nohz_asked` (what the command line asks for). Such a kernel
/// (`isolation_source` is sysfs: `cpu/isolated` exists) whose command
/// line asks for nohz_full CPUs adds a disagreement to `out`.
fn nohz_full_of(
    sysfs_nohz: Option<CpuSet>,
    isolation_source: IsolationSource,
    nohz_asked: CpuSet,
    out: &mut Vec<Disagreement>,
) -> (CpuSet, IsolationSource) {
    let cpu_dir = "/sys/devices/system/cpu";
    // cpu/nohz_full and cpu/isolated came in the same release (both
    // "Date: Apr 2015", Documentation/ABI/testing/sysfs-devices-system-cpu),
    // and drivers/base/cpu.c creates nohz_full only with
    // CONFIG_NO_HZ_FULL: `isolated` without `nohz_full` is a kernel built
    // without it, where no CPU is nohz_full whatever the command line says.
    let no_hz_full_config = sysfs_nohz.is_none() && isolation_source == IsolationSource::Sysfs;
    if no_hz_full_config && !nohz_asked.is_empty() {
        out.push(Disagreement {
            message: format!(
                "the kernel command line asks for nohz_full CPUs {nohz_asked}, but {cpu_dir}/nohz_full is absent while {cpu_dir}/isolated exists (both since Linux 4.1): the kernel is built without CONFIG_NO_HZ_FULL, so no CPU is nohz_full"
            ),
            hint: "boot a kernel built with CONFIG_NO_HZ_FULL=y for nohz_full= to take effect".into(),
            cpus: nohz_asked.clone(),
        });
    }
    let nohz_full_source = match (sysfs_nohz.is_some(), no_hz_full_config) {
        (true, _) => IsolationSource::Sysfs,
        (false, true) => IsolationSource::NotBuilt,
        (false, false) => IsolationSource::Cmdline,
    };
    let nohz_full = match (sysfs_nohz, no_hz_full_config) {
        (Some(set), _) => set,
        (None, true) => CpuSet::new(),
        (None, false) => nohz_asked,
    };
    (nohz_full, nohz_full_source)
}

/// The CPUs with an RCU callback-offload kthread, read when `kthreads`
/// ([`rt_tasks::read_nocb_kthreads`]). The online CPUs whose callbacks
/// the command line offloads (`rcu_nocbs=`, and the nohz_full CPUs
/// rcu_init_nohz() adds) but that have no rcuo kthread add a
/// disagreement to `out`: the kernel does not offload them.
fn read_nocb(
    root: &Root,
    kthreads: bool,
    iso: &Isolation,
    online: &CpuSet,
    out: &mut Vec<Disagreement>,
) -> Option<CpuSet> {
    let nocb_kthreads = kthreads
        .then(|| rt_tasks::read_nocb_kthreads(root))
        .flatten();
    if let Some(k) = &nocb_kthreads {
        // rcu_init_nohz() adds the nohz_full CPUs.
        let asked = iso
            .boot
            .rcu_nocbs_asked(&iso.nohz_full)
            .intersection(online);
        let missing = asked.difference(k);
        if !missing.is_empty() {
            out.push(Disagreement {
                message: format!(
                    "the kernel command line offloads the RCU callbacks of {} (rcu_nocbs=, nohz_full=), but no rcuo kthread runs for {}: the kernel does not offload {} (built without CONFIG_RCU_NOCB_CPU, or a kthread failed to start)",
                    crate::words::cpus_phrase(&asked),
                    crate::words::cpus_phrase(&missing),
                    if missing.len() == 1 { "it" } else { "them" },
                ),
                hint: "boot a kernel built with CONFIG_RCU_NOCB_CPU=y for rcu_nocbs= to take effect".into(),
                cpus: missing,
            });
        }
    }
    nocb_kthreads
}

/// What [`SystemState::read_scoped_ahead`] reads the CPUs' topology with:
/// the scope, and the sets [`topology_targets`] picks the CPUs from.
struct TopologyRead<'a> {
    /// Where the machine is read.
    root: &'a Root,
    /// What the read is for.
    scope: &'a Scope,
    /// Every CPU the kernel knows (its `cpuN` directories).
    known: &'a CpuSet,
    /// The online CPUs.
    online: &'a CpuSet,
    /// The CPUs the caller may use.
    allowed: &'a CpuSet,
    /// The isolated CPUs.
    isolated: &'a CpuSet,
    /// The NUMA nodes.
    nodes: &'a BTreeMap<u32, Node>,
}

impl TopologyRead<'_> {
    /// Whether every CPU's topology is read in full (`--show`'s details).
    fn full(&self) -> bool {
        self.scope.details && self.scope.topology == Cpus::All
    }

    /// The CPUs whose cores the plan and the checks look at
    /// ([`topology_targets`]).
    fn targets(&self) -> CpuSet {
        topology_targets(
            &self.scope.topology,
            self.known,
            self.allowed,
            self.isolated,
            self.nodes,
        )
    }

    /// Every known CPU (up to [`MAX_CPUS`]): read in full when
    /// [`TopologyRead::full`] ([`topology::read_cpu`]), else with the
    /// topology of the targets' cores only ([`read_cores`]); the cores
    /// settled ([`settle_cores`]). What was inconsistent goes to `issues`;
    /// the second value is the refusal when the cores cannot be settled.
    fn read_cpus(
        &self,
        issues: &mut Vec<String>,
    ) -> (BTreeMap<u32, Cpu>, Option<crate::error::Error>) {
        let root = self.root;
        let online = |id: u32| self.online.contains(id);
        let mut read_error = None;
        let cpus = if self.full() {
            let mut lists = BTreeMap::new();
            let mut cpus: BTreeMap<u32, Cpu> = self
                .known
                .iter()
                .take(MAX_CPUS)
                .map(|id| {
                    let (cpu, read) = topology::read_cpu(root, id, online(id));
                    if let Some(r) = read {
                        lists.insert(id, r);
                    }
                    (id, cpu)
                })
                .collect();
            if let Some(dir) = topology::cpu_dir(root) {
                match settle_cores(&dir, &mut cpus, lists) {
                    Ok(found) => issues.extend(found),
                    Err(e) => read_error = Some(e),
                }
            }
            cpus
        } else {
            // The CPUs whose cores the plan and the checks look at: the
            // placement's candidates, or, without a placement, the allowed
            // isolated CPUs (whose siblings `sibling-not-isolated` names).
            let (cpus, settled) = read_cores(root, self.known, &self.targets(), online);
            match settled {
                Ok(found) => issues.extend(found),
                Err(e) => read_error = Some(e),
            }
            cpus
        };
        (cpus, read_error)
    }

    /// The hybrid x86 core types ([`topology::read_hybrid`]), read with
    /// [`Scope::units`] or details; none otherwise.
    fn read_hybrid(&self) -> topology::HybridPmus {
        if self.scope.units || self.scope.details {
            topology::read_hybrid(self.root)
        } else {
            topology::HybridPmus::default()
        }
    }

    /// Reads into `cpus`, with [`Scope::units`] (a full read has them
    /// already), the placement units (die, cluster, LLC, capacity) of the
    /// first CPU of each of the topology targets' cores (the planner keys a
    /// core by it), and every CPU's capacity when the CPUs have one.
    fn read_units(&self, cpus: &mut BTreeMap<u32, Cpu>) {
        if !self.scope.units || self.full() {
            return;
        }
        let root = self.root;
        let targets = self.targets();
        // A unit holds whole cores: the planner asks for the units of
        // each core's lowest CPU only (`plan::units::unit_of_core`).
        let mut read = CpuSet::new();
        for id in targets.iter() {
            let first = cpus
                .get(&id)
                .and_then(|c| c.siblings.as_ref().filter(|s| s.contains(id))?.first());
            read.insert(first.unwrap_or(id));
        }
        // A unit's CPUs share its list (`cputopology.rst`: the same
        // from each of its CPUs; the LLC's `shared_cpu_list` likewise):
        // read once per unit, from its first core read, and given to
        // its other cores, as packages are. `it::scope` checks this
        // against each CPU's own files on every fixture dump.
        // The kernel gives every CPU a cpu_capacity file or none
        // (`drivers/base/arch_topology.c`): a first online CPU without
        // it ends the search.
        let any_capacity = cpus.values().find(|c| c.online).is_some_and(|c| {
            root.exists(&format!("/sys/devices/system/cpu/cpu{}/cpu_capacity", c.id))
        });
        let mut known: [Vec<CpuSet>; 3] = Default::default();
        for id in read.iter() {
            let Some(cpu) = cpus.get_mut(&id).filter(|c| c.online) else {
                continue;
            };
            for (i, k) in known.iter_mut().enumerate() {
                *topology::unit_slot(cpu, i) = match k.iter().find(|s| s.contains(id)) {
                    Some(set) => Some(set.clone()),
                    None => {
                        let set = topology::read_unit(root, id, i);
                        k.extend(set.clone());
                        set
                    }
                };
            }
            if any_capacity {
                topology::read_capacity(root, cpu);
            }
        }
        // Core types compare every CPU's capacity (the most capable
        // ones are the performance cores).
        if any_capacity {
            for cpu in cpus.values_mut().filter(|c| !read.contains(c.id)) {
                topology::read_capacity(root, cpu);
            }
        }
    }
}

/// Gives each CPU of `cpus` its node from `nodes`' cpulists, and returns
/// the firmware-data warnings: a CPU listed by several nodes keeps the
/// lowest; one warning per distinct set of nodes (firmware that lists
/// every CPU in every node would otherwise give CPUs × nodes warnings).
fn assign_nodes(nodes: &BTreeMap<u32, Node>, cpus: &mut BTreeMap<u32, Cpu>) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut multi: BTreeMap<u32, NodeSet> = BTreeMap::new();
    for node in nodes.values() {
        for id in node.cpus.iter() {
            if let Some(cpu) = cpus.get_mut(&id) {
                match cpu.node {
                    None => cpu.node = Some(node.id),
                    Some(first) => {
                        multi
                            .entry(id)
                            .or_insert_with(|| std::iter::once(first).collect())
                            .insert(node.id);
                    }
                }
            }
        }
    }
    let mut by_nodes: BTreeMap<Vec<u32>, CpuSet> = BTreeMap::new();
    for (id, ns) in &multi {
        by_nodes.entry(ns.to_vec()).or_default().insert(*id);
    }
    for (ns, ids) in by_nodes {
        let set: NodeSet = ns.iter().copied().collect();
        let what = if ids.len() == 1 {
            format!("CPU {ids} is")
        } else {
            format!("CPUs {ids} are each")
        };
        warnings.push(format!(
            "firmware data: {what} listed in the cpulists of nodes {set}; using node {}",
            ns[0]
        ));
    }
    warnings
}

/// The IRQs `scope` asks for: those the helper read `ahead`, if it sent
/// them ([`irqs_read_ahead`]), else read here when `scope` wants IRQs or
/// the quiet rule ([`irq::read_irqs`], with details for `--show`), else
/// none. The latency rule ranks the allowed CPUs by their IRQs' counts
/// before the plan exists (`crate::plan::quiet`): with `scope.quiet` the
/// details of the IRQs on `allowed` are read too.
fn read_irqs_scoped(
    root: &Root,
    scope: &Scope,
    sets: &topology::CpuSets,
    allowed: &CpuSet,
    ahead: Option<IrqsAhead>,
) -> irq::Irqs {
    let mut irqs = match ahead.and_then(|rx| irqs_read_ahead(root, rx)) {
        Some(irqs) => irqs,
        None if scope.irqs || scope.quiet => {
            irq::read_irqs(root, &sets.possible, scope.details.then_some(&sets.online))
        }
        None => irq::Irqs::default(),
    };
    if scope.quiet && !scope.details {
        irqs.read_details(root, &sets.possible, &sets.online, Some(allowed));
    }
    irqs
}

/// The CPUs the caller may use among the `online` ones, and where that
/// limit came from: its cgroup's `cpuset`, else its `Cpus_allowed_list`
/// (`status`), else every online CPU.
fn allowed_of(
    online: &CpuSet,
    cpuset: Option<CgroupCpuset>,
    status: Option<&CpuSet>,
) -> (CpuSet, AllowedSource) {
    match (cpuset, status) {
        (Some(cs), _) => (online.intersection(&cs.cpus), AllowedSource::Cgroup(cs)),
        (None, Some(status)) => (online.intersection(status), AllowedSource::Status),
        (None, None) => (online.clone(), AllowedSource::Online),
    }
}

/// The thread-binding variables of OpenMP runtimes set in the
/// environment (`OMP_PROC_BIND`, `OMP_PLACES`, `GOMP_CPU_AFFINITY`,
/// `KMP_AFFINITY`), with their values, in that order.
fn env_affinity() -> Vec<(String, String)> {
    [
        "OMP_PROC_BIND",
        "OMP_PLACES",
        "GOMP_CPU_AFFINITY",
        "KMP_AFFINITY",
    ]
    .into_iter()
    .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
    .collect()
}

/// Makes `read_error` (unless it has one already) the IRQs' read error
/// (`/proc/interrupts` damaged), else a file below `root` not read
/// ([`budget_error`]).
fn first_read_error(root: &Root, irqs: &irq::Irqs, read_error: &mut Option<crate::error::Error>) {
    if let Some(e) = &irqs.error {
        read_error.get_or_insert_with(|| {
            crate::error::Error::new(crate::error::ErrorCode::ReadBudget, format!("reading /proc/interrupts: {e}"))
                .hint("the file is damaged or not a kernel's /proc/interrupts; without --sysroot, report it")
        });
    }
    if let Some(e) = budget_error(root) {
        read_error.get_or_insert(e);
    }
}

/// Where [`online_checked`] found CPUs that `cpu/online` leaves out.
enum OnlineWitness<'a> {
    /// The caller's cgroup effective CPUs, which the kernel keeps a subset
    /// of the online ones (`Documentation/admin-guide/cgroup-v2.rst`,
    /// `cpuset.cpus.effective`; v1 `cpuset.effective_cpus`): the file.
    Cgroup(&'a str),
    /// The caller's `Cpus_allowed_list` (no cpuset): it may name offline
    /// CPUs, so only a CPU whose own `cpuN/online` says 1 counts.
    Affinity,
}

/// The online CPUs: `cpu/online`, unless `claimed` (CPUs the `witness`
/// names) holds CPUs it calls offline. Such a CPU is online when its own
/// `cpuN/online` does not say 0 (for [`OnlineWitness::Affinity`]: says 1):
/// lxcfs virtualises `cpu/online`, not the per-CPU files; a disagreement
/// names both. A cgroup CPU whose `cpuN/online` says 0 too stays offline,
/// with a disagreement (the kernel's files contradict each other).
fn online_checked(
    root: &Root,
    sets: &topology::CpuSets,
    claimed: &CpuSet,
    witness: OnlineWitness,
    out: &mut Vec<Disagreement>,
) -> CpuSet {
    let known = if sets.dirs.is_empty() {
        &sets.possible
    } else {
        &sets.dirs
    };
    let claimed = claimed.difference(&sets.online).intersection(known);
    if claimed.is_empty() {
        return sets.online.clone();
    }
    let dir = "/sys/devices/system/cpu";
    let (mut up, mut down) = (CpuSet::new(), CpuSet::new());
    for id in claimed.iter().take(MAX_CPUS) {
        match (root.read_int(&format!("{dir}/cpu{id}/online")), &witness) {
            (Some(0), OnlineWitness::Cgroup(_)) => down.insert(id),
            (Some(0) | None, OnlineWitness::Affinity) => {}
            _ => up.insert(id),
        }
    }
    let online_text = if sets.online.is_empty() {
        "empty".to_string()
    } else {
        sets.online.to_list()
    };
    let phrase = crate::words::cpus_phrase;
    if !up.is_empty() {
        let per_cpu = if up.len() == 1 {
            format!("{dir}/cpu{}/online", up.first().unwrap_or_default())
        } else {
            format!("{dir}/cpuN/online files")
        };
        let why = match witness {
            OnlineWitness::Cgroup(file) => format!(
                "the kernel-maintained {file} (always a subset of the online CPUs) lists {}, and {per_cpu} {} not say 0",
                phrase(&up),
                if up.len() == 1 { "does" } else { "do" }
            ),
            OnlineWitness::Affinity => format!(
                "{per_cpu} {} 1 for {}, which this process may run on (Cpus_allowed_list)",
                if up.len() == 1 { "says" } else { "say" },
                phrase(&up)
            ),
        };
        out.push(Disagreement {
            message: format!(
                "{dir}/online says {online_text}, but {why}: {dir}/online is virtualised (lxcfs) or stale; pinrun trusts the kernel's per-CPU state and takes {} as online",
                phrase(&up),
            ),
            hint: "nothing to change: inside a container the virtualised file shows the container's view; pinrun plans on the CPUs the kernel lets this process use".into(),
            cpus: up.clone(),
        });
    }
    if let (false, OnlineWitness::Cgroup(file)) = (down.is_empty(), witness) {
        out.push(Disagreement {
            message: format!(
                "{file} lists {}, but both {dir}/online ({online_text}) and {dir}/cpuN/online say offline: pinrun takes {} as offline",
                phrase(&down),
                if down.len() == 1 { "it" } else { "them" },
            ),
            hint: "the CPU went offline while pinrun read the machine, or the files are damaged; run pinrun again".into(),
            cpus: down,
        });
    }
    sets.online.union(&up)
}

/// What [`SystemState::read_scoped_ahead`]'s helper sends: the IRQs, as
/// soon as they are read, with the root they were read through.
type IrqsAhead = std::sync::mpsc::Receiver<(irq::Irqs, Root)>;

/// The IRQs [`SystemState::read_scoped_ahead`]'s helper read, once sent;
/// its file over budget, if any, becomes `root`'s unless `root` has one
/// already (the IRQs were the last read of a one-thread read). `None` when
/// the helper ended without sending them.
#[inline(never)]
fn irqs_read_ahead(root: &Root, rx: IrqsAhead) -> Option<irq::Irqs> {
    let (irqs, read_through) = rx.recv().ok()?;
    root.adopt_over_budget(&read_through);
    Some(irqs)
}

/// Starts [`SystemState::read_scoped_ahead`]'s helper thread
/// ([`parallel::ahead`]): the IRQs when `irqs` ([`irq::read_irqs`] without
/// details, sent on the returned channel), then the real-time tasks but
/// `self_pid`'s (its result), each through a root of its own over-budget
/// record. `None` when no helper is started.
#[inline(never)]
fn start_helper(
    root: &Root,
    possible: &CpuSet,
    irqs: bool,
    self_pid: Option<u32>,
) -> Option<(Option<IrqsAhead>, rt_tasks::RtAhead)> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let (irq_root, rt_root) = (root.with_own_budget(), root.with_own_budget());
    let possible = possible.clone();
    let scan = parallel::ahead(root.ahead(), move || {
        if irqs {
            // The receiver is gone only when the caller has stopped waiting.
            let _ = tx.send((irq::read_irqs(&irq_root, &possible, None), irq_root));
        }
        drop(tx);
        (rt_tasks::read_rt_tasks(&rt_root, self_pid), rt_root)
    })?;
    Some((irqs.then_some(rx), scan))
}

/// The error for a file below `root` that was not read: one whose
/// confined lookup kept being interrupted ([`Root::interrupted_lookup`]),
/// else the first one larger than [`root::MAX_FILE`] (either reads as
/// missing), if any.
fn budget_error(root: &Root) -> Option<crate::error::Error> {
    if let Some(p) = root.interrupted_lookup() {
        return Some(
            crate::error::Error::new(
                crate::error::ErrorCode::SysrootUnconfined,
                format!(
                    "reading {p} below --sysroot {}: its lookup confined to the dump was interrupted {} times in a row by renames or mounts elsewhere on this host (EAGAIN from openat2)",
                    root.base().display(),
                    root::EAGAIN_TRIES
                ),
            )
            .hint("run it again when the host's renames or mounts have settled; nothing was read outside the dump"),
        );
    }
    if let Some(e) = root.unreadable_error() {
        return Some(e);
    }
    if let Some(e) = root.starved_error() {
        return Some(e);
    }
    let f = root.over_budget()?;
    Some(
        crate::error::Error::new(
            crate::error::ErrorCode::ReadBudget,
            format!(
                "reading {f}: larger than {} MiB, the most pinrun reads of one file",
                root::MAX_FILE >> 20
            ),
        )
        .hint("the file is damaged or not the kernel's; below --sysroot, take the dump again"),
    )
}

/// Every known CPU, with the topology of `targets`' cores: `siblings` of
/// each target, and `core_id`, `package` and `package_cpus` of the lowest
/// CPU of each of their cores (core_of's first, the only CPU the planner
/// reads them from). Every other CPU keeps only its id and online state.
fn read_cores(
    root: &Root,
    known: &CpuSet,
    targets: &CpuSet,
    online: impl Fn(u32) -> bool,
) -> (BTreeMap<u32, Cpu>, Result<Vec<String>, crate::error::Error>) {
    let mut cpus: BTreeMap<u32, Cpu> = known
        .iter()
        .take(MAX_CPUS)
        .map(|id| (id, topology::unread_cpu(id, online(id))))
        .collect();
    let Some(dir) = topology::cpu_dir(root) else {
        return (cpus, Ok(Vec::new()));
    };
    let mut lists = BTreeMap::new();
    for id in targets.iter() {
        if let Some(cpu) = cpus.get_mut(&id)
            && let Some(r) = topology::read_siblings(&dir, cpu)
        {
            lists.insert(id, r);
        }
    }
    let settled = settle_cores(&dir, &mut cpus, lists);
    let mut firsts = CpuSet::new();
    for id in targets.iter() {
        if let Some(cpu) = cpus.get(&id) {
            let first = cpu.siblings.as_ref().filter(|s| s.contains(id));
            firsts.insert(first.and_then(CpuSet::first).unwrap_or(id));
        }
    }
    // A package's CPUs share `physical_package_id` and `package_cpus_list`
    // (`Documentation/admin-guide/cputopology.rst`: the package's CPU list
    // is the same from each of its CPUs): read once per package, from its
    // first core read, and given to the package's other cores, which read
    // only `core_id`. `tests/it/scope.rs` checks this against each CPU's own
    // files on every fixture dump.
    let mut packages: Vec<(CpuSet, Option<u32>)> = Vec::new();
    let mut package_of: BTreeMap<u32, usize> = BTreeMap::new();
    for id in firsts.iter() {
        let Some(cpu) = cpus.get_mut(&id) else {
            continue;
        };
        match package_of.get(&id) {
            Some(&i) if cpu.online => {
                topology::read_core_id(&dir, cpu);
                cpu.package = packages[i].1;
                cpu.package_cpus = Some(packages[i].0.clone());
            }
            _ => {
                topology::read_ids(&dir, cpu);
                if let Some(set) = cpu.package_cpus.as_ref().filter(|s| s.contains(id)) {
                    for c in set.iter().filter(|&c| c > id && firsts.contains(c)) {
                        package_of.insert(c, packages.len());
                    }
                    packages.push((set.clone(), cpu.package));
                }
            }
        }
    }
    (cpus, settled)
}

/// The CPUs whose cores the plan and the checks look at ([`Cpus`]): the
/// placement's candidates, or, without a placement, the allowed isolated
/// CPUs (whose siblings `sibling-not-isolated` names).
fn topology_targets(
    topology: &Cpus,
    known: &CpuSet,
    allowed: &CpuSet,
    isolated: &CpuSet,
    nodes: &BTreeMap<u32, Node>,
) -> CpuSet {
    match topology {
        Cpus::All => known.clone(),
        Cpus::None => allowed.intersection(isolated),
        Cpus::Only(set) => set.clone(),
        Cpus::Nodes(ids) => ids
            .iter()
            .filter_map(|id| nodes.get(&id))
            .fold(CpuSet::new(), |acc, n| acc.union(&n.cpus)),
    }
}

/// Makes the SMT cores a partition of the online CPUs consistent with the
/// kernel's sibling lists ([`topology::reconcile_siblings`]); `lists` is
/// what the CPUs read so far said. On a sound machine this costs only the
/// lists of the read cores' other online CPUs (their lists must be the
/// same); any problem (a list missing, empty, unparsable, without its own
/// CPU, or disagreeing) reads every online CPU's list and settles the
/// cores from the sources that agree, returning the messages of the
/// `topology-inconsistent` findings, or the refusal.
fn settle_cores(
    dir: &root::Dir,
    cpus: &mut BTreeMap<u32, Cpu>,
    mut lists: BTreeMap<u32, topology::SiblingRead>,
) -> Result<Vec<String>, crate::error::Error> {
    let is_online = |cpus: &BTreeMap<u32, Cpu>, m: u32| cpus.get(&m).is_some_and(|c| c.online);
    let mut more = CpuSet::new();
    for r in lists.values() {
        for m in r.set.iter().flat_map(CpuSet::iter) {
            if !lists.contains_key(&m) && is_online(cpus, m) {
                more.insert(m);
            }
        }
    }
    for m in more.iter() {
        lists.insert(m, topology::read_sibling_files(dir, m));
    }
    let sound = lists.values().all(|r| {
        r.problem.is_none()
            && r.set.as_ref().is_some_and(|s| {
                s.iter().all(|m| {
                    !is_online(cpus, m) || lists.get(&m).and_then(|o| o.set.as_ref()) == Some(s)
                })
            })
    });
    if !sound {
        let all: Vec<u32> = cpus
            .values()
            .filter(|c| c.online && !lists.contains_key(&c.id))
            .map(|c| c.id)
            .collect();
        for id in all {
            lists.insert(id, topology::read_sibling_files(dir, id));
        }
    }
    for (id, r) in &lists {
        if let Some(cpu) = cpus.get_mut(id) {
            cpu.siblings = r.set.clone();
        }
    }
    if sound {
        return Ok(Vec::new());
    }
    let mut keys: BTreeMap<u32, Option<topology::CoreKey>> = BTreeMap::new();
    let key = |c: u32| {
        *keys
            .entry(c)
            .or_insert_with(|| topology::read_core_key(dir, c))
    };
    match topology::reconcile_siblings(&lists, key) {
        Ok((cores, issues)) => {
            for (c, g) in cores {
                if let Some(cpu) = cpus.get_mut(&c) {
                    cpu.siblings = Some(g);
                }
            }
            Ok(issues)
        }
        Err(e) => Err(crate::error::Error::new(
            crate::error::ErrorCode::TopologyInconsistent,
            format!("reading /sys/devices/system/cpu: {e}"),
        )
        .hint("the topology files named are damaged (a kernel bug, or a damaged dump): take the dump again, or report it with the files' contents")),
    }
}

#[cfg(test)]
mod count_tests {
    use super::*;
    use proptest::prelude::*;

    /// A count field as a dump may hold it: near `u64::MAX`, or 20 to 40
    /// digits past it.
    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u64..16).prop_map(|d| (u64::MAX - d).to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            "[1-9][0-9]{19,39}",
        ]
    }

    #[test]
    fn parse_count_saturates() {
        assert_eq!(parse_count("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_count("18446744073709551616"), Some(u64::MAX));
        assert_eq!(parse_count("99999999999999999999"), Some(u64::MAX));
        assert_eq!(parse_count(" +7\n"), Some(7));
        assert_eq!(parse_count("7x"), None);
        assert_eq!(parse_count("-1"), None);
        assert_eq!(parse_count(""), None);
    }

    proptest! {
        /// Every count parser and summer over such fields: no panic, each
        /// count is the field's value saturated at `u64::MAX`, and each sum
        /// is the saturated sum (monotone: never below any of its counts).
        #[test]
        fn counts_near_u64_max(fields in proptest::collection::vec(field(), 1..5)) {
            let want: Vec<u64> = fields
                .iter()
                .map(|f| f.parse::<u64>().unwrap_or(u64::MAX))
                .collect();
            let sum = want.iter().fold(0u64, |a, b| a.saturating_add(*b));
            let n = fields.len() as u32;
            let header: String = (0..n).map(|c| format!(" CPU{c}")).collect();
            let text = format!("{header}\n 42: {} IO-APIC dev\n", fields.join(" "));
            // /proc/interrupts for the checks (zeros left out) and the probe.
            let rows = irq::parse_interrupts(&text);
            let kept: Vec<(u32, u64)> = (0..n).zip(want.iter().copied()).filter(|x| x.1 != 0).collect();
            prop_assert_eq!(&rows[0].1, &kept);
            prop_assert_eq!(&rows[0].2, "IO-APIC dev");
            let irq = irq::Irq {
                id: "42".into(),
                number: Some(42),
                description: String::new(),
                counts: kept.clone(),
                affinity: None,
                affinity_source: "",
                requested: None,
                managed: None,
                detailed: true,
                counts_end: None,
            };
            prop_assert_eq!(irq.total(), sum);
            // per_cpu_count (the sysfs path).
            let possible: Vec<u32> = (0..n).collect();
            let online: CpuSet = possible.iter().copied().collect();
            let pcc = irq::PerCpuCount::parse(&format!("{}\n", fields.join(",")), &possible, &online);
            prop_assert_eq!(&pcc.counts, &kept);
            let c = irq::parse_counters(&text);
            for (cpu, w) in (0..n).zip(&want) {
                prop_assert_eq!(c.count("42", cpu), *w);
            }
            // numa's meminfo, /proc/stat's steal, a task's utime + stime.
            let node = numa::meminfo_kb(&format!("Node 0 MemFree: {} kB\n", fields[0]), "MemFree");
            prop_assert_eq!(node, Some(want[0]));
            let steal = noise::parse_steal(&format!("cpu0 0 0 0 0 0 0 0 {}\n", fields[0]));
            prop_assert!(steal[&0] >= want[0].min(u64::MAX / 10_000_000));
            let f = |i: usize| fields[i % fields.len()].clone();
            let stat = format!("1 (t) S {}", (4..=40).map(|k| match k { 14 => f(0), 15 => f(1), _ => "0".into() }).collect::<Vec<_>>().join(" "));
            let (_, _, ticks, _) = noise::parse_task_stat(&stat).unwrap();
            prop_assert_eq!(ticks, want[0].saturating_add(want[1 % want.len()]));
            // numa_maps: pages × page size, summed per node.
            let maps = threads::parse_numa_maps(&format!("7f00 default N0={} N0={} kernelpagesize_kB=4\n", fields[0], f(1)));
            prop_assert_eq!(
                maps.bytes_per_node.get(&0).copied(),
                Some(want[0].saturating_mul(4096).saturating_add(want[1 % want.len()].saturating_mul(4096)))
            );
        }
    }
}
