//! CPUs and their topology from `/sys/devices/system/cpu`
//! (`Documentation/admin-guide/cputopology.rst`,
//! `Documentation/ABI/stable/sysfs-devices-system-cpu`).

use super::root::{Dir, Root};
use crate::cpuset::CpuSet;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// One logical CPU as sysfs describes it. Topology fields are `None` when
/// the CPU is offline (the kernel removes `topology/` then) or the file is
/// missing; ids the kernel reports as "unknown" (`-1`, and `65535` for
/// `cluster_id` on some arm64 firmware) are `None` as well.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// Kernel CPU id (`cpuN`).
    pub id: u32,
    /// In `/sys/devices/system/cpu/online`.
    pub online: bool,
    /// `topology/core_id` (unique only within a package/die/cluster).
    pub core_id: Option<u32>,
    /// `topology/physical_package_id`.
    pub package: Option<u32>,
    /// `topology/die_id`.
    pub die: Option<u32>,
    /// `topology/cluster_id`.
    pub cluster: Option<u32>,
    /// SMT siblings including this CPU: `core_cpus_list`, else
    /// `thread_siblings_list`, else the mask files of old kernels.
    pub siblings: Option<CpuSet>,
    /// CPUs of the same package: `package_cpus_list`, else `core_siblings_list`.
    pub package_cpus: Option<CpuSet>,
    /// CPUs sharing this CPU's last-level cache (`cache/indexK/shared_cpu_list`
    /// of the highest `level`).
    pub llc: Option<CpuSet>,
    /// NUMA node, from the node cpulists (filled in by the caller).
    pub node: Option<u32>,
    /// `cpufreq/scaling_governor`, when cpufreq is present.
    pub governor: Option<String>,
}

/// The CPU id sets of `/sys/devices/system/cpu`.
#[derive(Debug, Clone, Default)]
pub struct CpuSets {
    /// `possible` (fallback: every `cpuN` directory).
    pub possible: CpuSet,
    /// `present` (fallback: every `cpuN` directory).
    pub present: CpuSet,
    /// `online` (fallback: `cpuN/online` files; a CPU without one, usually
    /// cpu0, cannot be taken offline and is online).
    pub online: CpuSet,
    /// Every `cpuN` directory.
    pub dirs: CpuSet,
}

/// A topology id, `None` for the kernel's "unknown" (`-1`).
fn id_of(root: &Root, path: &str) -> Option<u32> {
    u32::try_from(root.read_int(path)?).ok()
}

/// Reads the possible/present/online sets.
pub fn read_sets(root: &Root) -> CpuSets {
    let dirs: CpuSet = root.numbered_entries(CPU_DIR, "cpu").into_iter().collect();
    let online = root
        .read_list(&format!("{CPU_DIR}/online"))
        .unwrap_or_else(|| {
            dirs.iter()
                .filter(|id| root.read_int(&format!("{CPU_DIR}/cpu{id}/online")) != Some(0))
                .collect()
        });
    CpuSets {
        possible: root
            .read_list(&format!("{CPU_DIR}/possible"))
            .unwrap_or_else(|| dirs.clone()),
        present: root
            .read_list(&format!("{CPU_DIR}/present"))
            .unwrap_or_else(|| dirs.clone()),
        online,
        dirs,
    }
}

/// A CPU whose topology is not read (or is unknown: offline).
pub fn unread_cpu(id: u32, online: bool) -> Cpu {
    Cpu {
        id,
        online,
        core_id: None,
        package: None,
        die: None,
        cluster: None,
        siblings: None,
        package_cpus: None,
        llc: None,
        node: None,
        governor: None,
    }
}

/// Reads one CPU's whole topology. Offline CPUs get only `id` and
/// `online: false`.
pub fn read_cpu(root: &Root, id: u32, online: bool) -> Cpu {
    let mut cpu = unread_cpu(id, online);
    if let Some(dir) = cpu_dir(root) {
        read_siblings(&dir, &mut cpu);
        read_ids(&dir, &mut cpu);
    }
    read_details(root, &mut cpu);
    cpu
}

/// `/sys/devices/system/cpu`, opened once for [`read_siblings`] and
/// [`read_ids`] (which then walk only `cpuN/topology/FILE`).
pub fn cpu_dir(root: &Root) -> Option<Dir> {
    root.dir(CPU_DIR)
}

/// Fills `siblings` of an online CPU; `dir` is [`cpu_dir`].
pub fn read_siblings(dir: &Dir, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    let t = format!("cpu{}/topology", cpu.id);
    cpu.siblings = dir
        .read_list_or_mask(&t, "core_cpus")
        .or_else(|| dir.read_list_or_mask(&t, "thread_siblings"))
        .filter(|s| !s.is_empty());
}

/// Fills `core_id` of an online CPU; `dir` is [`cpu_dir`].
pub fn read_core_id(dir: &Dir, cpu: &mut Cpu) {
    if cpu.online {
        cpu.core_id = read_id(dir, cpu.id, "core_id");
    }
}

/// `cpuN/topology/NAME` as an id (`-1` and other non-ids: `None`).
fn read_id(dir: &Dir, cpu: u32, name: &str) -> Option<u32> {
    u32::try_from(dir.read_int(&format!("cpu{cpu}/topology/{name}"))?).ok()
}

/// Fills `core_id`, `package` and `package_cpus` of an online CPU; `dir`
/// is [`cpu_dir`].
pub fn read_ids(dir: &Dir, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    let t = format!("cpu{}/topology", cpu.id);
    read_core_id(dir, cpu);
    cpu.package = read_id(dir, cpu.id, "physical_package_id");
    // The planner's compact grouping keys a core by its package's lowest
    // CPU (CoreChoice.package_key), falling back to the package id.
    cpu.package_cpus = dir
        .read_list_or_mask(&t, "package_cpus")
        .or_else(|| dir.read_list_or_mask(&t, "core_siblings"))
        .filter(|s| !s.is_empty());
}

/// Fills `governor` (`cpufreq/scaling_governor`) of an online CPU.
pub fn read_governor(root: &Root, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    cpu.governor = root.read_value(&format!("{CPU_DIR}/cpu{}/cpufreq/scaling_governor", cpu.id));
}

/// Fills what only `--show` prints: `die`, `cluster`, `llc`, and `governor`
/// (which a launch reads after planning, for the checked CPUs only: see
/// [`super::SystemState::read_extras`]).
pub fn read_details(root: &Root, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    let id = cpu.id;
    let t = format!("{CPU_DIR}/cpu{id}/topology");
    cpu.die = id_of(root, &format!("{t}/die_id"));
    // 65535 is what arm64 reports for "no cluster" (BAD_APICID-like filler).
    cpu.cluster = id_of(root, &format!("{t}/cluster_id")).filter(|&c| c != 65535);
    cpu.llc = read_llc(root, id);
    read_governor(root, cpu);
}

/// The shared CPUs of the highest-level data or unified cache; `None` when
/// the kernel does not say (no cache directory, or a set without this CPU).
fn read_llc(root: &Root, id: u32) -> Option<CpuSet> {
    let dir = format!("{CPU_DIR}/cpu{id}/cache");
    root.numbered_entries(&dir, "index")
        .into_iter()
        .filter_map(|k| {
            let idx = format!("{dir}/index{k}");
            if root.read_value(&format!("{idx}/type")).as_deref() == Some("Instruction") {
                return None;
            }
            let level = root.read_int(&format!("{idx}/level"))?;
            let shared = root
                .read_list(&format!("{idx}/shared_cpu_list"))
                .or_else(|| root.read_mask(&format!("{idx}/shared_cpu_map")))?;
            Some((level, shared))
        })
        .max_by_key(|(level, _)| *level)
        .map(|(_, set)| set)
        // The set includes the CPU itself; one without it (the all-zero
        // shared_cpu_map of old ia64 kernels) means "unknown".
        .filter(|set| set.contains(id))
}
