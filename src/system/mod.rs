//! Reading the system: the only layer that opens files. It returns plain
//! data ([`SystemState`]) and makes no decisions. Every path goes through a
//! [`Root`], so `--sysroot DIR` replays a machine dump exactly.

pub mod cgroup;
pub mod numa;
pub mod process;
pub mod root;
pub mod scope;
pub mod topology;

pub use cgroup::Cpuset;
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
    Cgroup(Cpuset),
    /// No cpuset information: `Cpus_allowed_list` of `/proc/self/status`.
    Status,
    /// Neither: every online CPU.
    Online,
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
    /// NUMA nodes by id; empty when the kernel exposes none.
    pub nodes: BTreeMap<u32, Node>,
    /// CPUs the caller may use: online ∩ its cgroup cpuset.
    pub allowed: CpuSet,
    /// Where `allowed` came from.
    pub allowed_source: AllowedSource,
    /// Domain-isolated CPUs: `cpu/isolated` ∪ root `cpuset.cpus.isolated`.
    pub isolated: CpuSet,
    /// `cpu/nohz_full`.
    pub nohz_full: CpuSet,
    /// `/proc/cmdline`.
    pub cmdline: String,
    /// The caller's limits.
    pub process: Process,
    /// Inconsistencies in the firmware's data (e.g. a CPU in two nodes).
    pub warnings: Vec<String>,
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
        let sets = topology::read_sets(root);
        // Every CPU the kernel knows has a cpuN directory; ids only named in
        // `online` (a damaged dump) are not read one by one.
        let known = if sets.dirs.is_empty() {
            sets.online.clone()
        } else {
            sets.dirs.clone()
        };
        let nodes: BTreeMap<u32, Node> = numa::read_nodes(root, scope.details)
            .into_iter()
            .map(|n| (n.id, n))
            .collect();
        let wanted = match &scope.topology {
            Cpus::All => None,
            Cpus::None => Some(CpuSet::new()),
            Cpus::Only(set) => Some(set.clone()),
            Cpus::Nodes(ids) => Some(
                ids.iter()
                    .filter_map(|id| nodes.get(&id))
                    .fold(CpuSet::new(), |acc, n| acc.union(&n.cpus)),
            ),
        };
        let online = |id: u32| sets.online.contains(id);
        let mut cpus: BTreeMap<u32, Cpu> = match wanted {
            None if scope.details => known
                .iter()
                .take(MAX_CPUS)
                .map(|id| (id, topology::read_cpu(root, id, online(id))))
                .collect(),
            wanted => {
                // Siblings of the wanted CPUs; `core_id` and `package` only
                // of the lowest CPU of each of their cores (core_of's
                // first), the only CPU the planner reads them from. Every
                // other CPU keeps only its id and online state.
                let mut cpus: BTreeMap<u32, Cpu> = known
                    .iter()
                    .take(MAX_CPUS)
                    .map(|id| (id, topology::unread_cpu(id, online(id))))
                    .collect();
                let targets = wanted.unwrap_or_else(|| known.clone());
                let mut firsts = CpuSet::new();
                if let Some(dir) = topology::cpu_dir(root) {
                    for id in targets.iter() {
                        if let Some(cpu) = cpus.get_mut(&id) {
                            topology::read_siblings(&dir, cpu);
                            let first = cpu.siblings.as_ref().filter(|s| s.contains(id));
                            firsts.insert(first.and_then(CpuSet::first).unwrap_or(id));
                        }
                    }
                    for id in firsts.iter() {
                        if let Some(cpu) = cpus.get_mut(&id) {
                            topology::read_ids(&dir, cpu);
                        }
                    }
                }
                if scope.details {
                    for id in targets.union(&firsts).iter() {
                        if let (Some(cpu), Some(dir)) = (cpus.get_mut(&id), topology::cpu_dir(root))
                        {
                            topology::read_ids(&dir, cpu);
                            topology::read_details(root, cpu);
                        }
                    }
                }
                cpus
            }
        };
        let mut warnings = Vec::new();
        // A CPU listed by several nodes keeps the lowest; one warning per
        // distinct set of nodes (firmware that lists every CPU in every
        // node would otherwise give CPUs × nodes warnings).
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
        let mut process = process::read_process(root, scope.rt_limit, scope.details);
        let cpuset = cgroup::read_cpuset(root);
        // Without Mems_allowed_list (most dumps) the cgroup's effective
        // memory nodes limit the process, as its effective CPUs do.
        if process.mems_allowed.is_none() {
            process.mems_allowed = cpuset.as_ref().and_then(|cs| cs.mems.clone());
        }
        let (allowed, allowed_source) = match (cpuset, &process.cpus_allowed) {
            (Some(cs), _) => (
                sets.online.intersection(&cs.cpus),
                AllowedSource::Cgroup(cs),
            ),
            (None, Some(status)) => (sets.online.intersection(status), AllowedSource::Status),
            (None, None) => (sets.online.clone(), AllowedSource::Online),
        };
        let cpu_dir = "/sys/devices/system/cpu";
        let isolated = if scope.isolation {
            root.read_list(&format!("{cpu_dir}/isolated"))
                .unwrap_or_default()
                .union(
                    &root
                        .read_list("/sys/fs/cgroup/cpuset.cpus.isolated")
                        .unwrap_or_default(),
                )
        } else {
            CpuSet::new()
        };
        let (nohz_full, cmdline) = if scope.details {
            (
                root.read_list(&format!("{cpu_dir}/nohz_full"))
                    .unwrap_or_default(),
                root.read_value("/proc/cmdline").unwrap_or_default(),
            )
        } else {
            Default::default()
        };
        Self {
            nohz_full,
            cmdline,
            possible: sets.possible,
            present: sets.present,
            online: sets.online,
            cpus,
            nodes,
            allowed,
            allowed_source,
            isolated,
            process,
            warnings,
        }
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
