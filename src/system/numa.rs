//! NUMA nodes from `/sys/devices/system/node`
//! (`Documentation/ABI/stable/sysfs-devices-node`). Node ids can be sparse
//! (0 and 8), nodes can be CPU-less (memory only) or memoryless (CPUs only).

use super::root::Root;
use crate::cpuset::{CpuSet, NodeSet};

const NODE_DIR: &str = "/sys/devices/system/node";

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Kernel node id (`nodeN`).
    pub id: u32,
    /// `nodeN/cpulist` (fallback `cpumap`); may include offline CPUs.
    pub cpus: CpuSet,
    /// `MemTotal` from `nodeN/meminfo`, in KiB.
    pub mem_total_kb: Option<u64>,
    /// `MemFree` from `nodeN/meminfo`, in KiB.
    pub mem_free_kb: Option<u64>,
    /// What reclaim can free on the node, in KiB: the file pages
    /// (`Active(file)` + `Inactive(file)`) and the reclaimable slab
    /// (`SReclaimable`) of `nodeN/meminfo`, the parts of the kernel's
    /// `MemAvailable` estimate (`si_mem_available()`) it exports per node;
    /// `None` when the file has none of them.
    pub mem_reclaimable_kb: Option<u64>,
    /// `nodeN/distance`: pairs of (other node id, distance), in the order of
    /// the online nodes the kernel prints them for (`for_each_online_node`).
    pub distances: Vec<(u32, u32)>,
    /// Offline CPUs of the node: `nodeN/cpulist` holds only online CPUs
    /// (the kernel removes a CPU from its node's mask when it goes
    /// offline), so these come from the offline CPUs' `cpuM/nodeN` links,
    /// which stay while the CPU is offline (`drivers/base/cpu.c`
    /// `register_cpu()`). Empty when none or unknown.
    pub offline_cpus: CpuSet,
    /// In `node/has_memory`; without that file, `MemTotal` > 0; without
    /// `meminfo` either (some dumps), assumed true: unknown is not "none".
    pub has_memory: bool,
}

impl Node {
    /// The distance to node `other`, if the kernel reported it.
    pub fn distance_to(&self, other: u32) -> Option<u32> {
        self.distances
            .iter()
            .find(|(n, _)| *n == other)
            .map(|(_, d)| *d)
    }
}

pub(super) fn meminfo_kb(text: &str, key: &str) -> Option<u64> {
    // "Node 0 MemTotal:       32768 kB"
    text.lines().find_map(|l| {
        let (_, rest) = l.split_once(&format!(" {key}:"))?;
        super::parse_count(rest.split_whitespace().next()?)
    })
}

/// The highest node id read without `node/possible`: above any kernel's
/// `MAX_NUMNODES` (`1 << CONFIG_NODES_SHIFT`, at most 1024 today).
pub const MAX_NODE_ID: u32 = 4095;

/// The `nodeN` directories `far` beyond the node ids the kernel can have
/// (`bound`: the last of `node/possible`, "nodes that could possibly become
/// online", `Documentation/ABI/stable/sysfs-devices-node`; without it
/// [`MAX_NODE_ID`]), which [`read_nodes`] ignores: a message for the
/// `topology-inconsistent` finding, when there are any.
fn ignored_nodes(bound: u32, far: &[u64]) -> Option<String> {
    if far.is_empty() {
        return None;
    }
    let what = format!("the possible nodes (node {bound})");
    Some(super::root::beyond_words(NODE_DIR, "node", far, &what))
}

fn node_bound(root: &Root) -> u32 {
    root.read_list(&format!("{NODE_DIR}/possible"))
        .and_then(|p| p.last())
        .unwrap_or(MAX_NODE_ID)
        .min(MAX_NODE_ID)
}

/// Reads every `nodeN` directory up to the possible nodes, with the
/// message of the ones beyond them ([`ignored_nodes`]; `node/possible` and
/// the `node/` listing are read once for both). An empty list means the
/// kernel exposes no NUMA information (no `node/` directory, as in some
/// container dumps).
///
/// Without `details`, `meminfo` is read only when `node/has_memory` is
/// missing (it then decides `has_memory`), and `distance` only for nodes
/// without memory (the planner's nearest-memory hint starts from those).
pub fn read_nodes(root: &Root, details: bool) -> (Vec<Node>, Option<String>) {
    let bound = node_bound(root);
    let (ids, far) = root.numbered_entries_below(NODE_DIR, "node", bound);
    let mut online: Option<NodeSet> = None;
    let has_memory = root.read_list(&format!("{NODE_DIR}/has_memory"));
    let nodes = ids
        .iter()
        .map(|&id| {
            let dir = format!("{NODE_DIR}/node{id}");
            let meminfo = if details || has_memory.is_none() {
                root.read(&format!("{dir}/meminfo")).unwrap_or_default()
            } else {
                String::new()
            };
            let mem_total_kb = meminfo_kb(&meminfo, "MemTotal");
            let has_memory = match &has_memory {
                Some(set) => set.contains(id),
                None => mem_total_kb.is_none_or(|kb| kb > 0),
            };
            let distances = if details || !has_memory {
                root.read(&format!("{dir}/distance"))
                    .map(|t| {
                        let online = online.get_or_insert_with(|| {
                            root.read_list(&format!("{NODE_DIR}/online"))
                                .unwrap_or_else(|| ids.iter().copied().collect())
                        });
                        online
                            .iter()
                            .zip(t.split_whitespace().filter_map(|d| d.parse().ok()))
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            Node {
                id,
                cpus: root
                    .read_list(&format!("{dir}/cpulist"))
                    .or_else(|| root.read_mask(&format!("{dir}/cpumap")))
                    .unwrap_or_default(),
                mem_total_kb,
                mem_free_kb: meminfo_kb(&meminfo, "MemFree"),
                mem_reclaimable_kb: ["Active(file)", "Inactive(file)", "SReclaimable"]
                    .iter()
                    .filter_map(|k| meminfo_kb(&meminfo, k))
                    .reduce(|a, b| a + b),
                distances,
                has_memory,
                offline_cpus: CpuSet::new(),
            }
        })
        .collect();
    (nodes, ignored_nodes(bound, &far))
}

/// The node of each CPU of `offline` (the offline CPUs) from its
/// `cpuN/nodeM` link, the one source of an offline CPU's node: its node's
/// `cpulist` no longer lists it. A CPU with no such link, or several, is
/// left out.
pub fn offline_cpu_nodes(root: &Root, offline: &CpuSet) -> Vec<(u32, u32)> {
    offline
        .iter()
        .take(super::MAX_CPUS)
        .filter_map(|id| {
            match root
                .numbered_entries(&format!("/sys/devices/system/cpu/cpu{id}"), "node")
                .as_slice()
            {
                [node] => Some((id, *node)),
                _ => None,
            }
        })
        .collect()
}

/// The one node of a kernel without NUMA (no `/sys/devices/system/node`,
/// `CONFIG_NUMA=n`): node 0 with every online CPU and the machine's
/// memory, as hwloc and libnuma (`numa_available()` fails, one node 0)
/// describe such a machine. Its memory sizes are unknown (`None`).
pub fn without_numa(online: &CpuSet) -> Node {
    Node {
        id: 0,
        cpus: online.clone(),
        mem_total_kb: None,
        mem_free_kb: None,
        mem_reclaimable_kb: None,
        distances: vec![(0, 10)],
        has_memory: true,
        offline_cpus: CpuSet::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `node/possible` bounds the `nodeN` directories read; the ones beyond
    /// it are named in one message, from the same listing.
    #[test]
    fn nodes_beyond_possible_are_ignored_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("sys/devices/system/node");
        for (rel, text) in [
            ("possible", "0-1\n"),
            ("has_memory", "0-1\n"),
            ("node0/cpulist", "0-1\n"),
            ("node1/cpulist", "2-3\n"),
            ("node7/cpulist", "4\n"),
        ] {
            let f = node.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        }
        let (nodes, ignored) = read_nodes(&Root::new(dir.path()), false);
        let ids: Vec<u32> = nodes.iter().map(|n| n.id).collect();
        assert_eq!(ids, [0, 1]);
        assert_eq!(nodes[1].cpus.to_list(), "2-3");
        assert_eq!(
            ignored.as_deref(),
            Some(
                "/sys/devices/system/node: 1 directory beyond the possible nodes (node 1): node7; ignoring it"
            )
        );
        std::fs::write(node.join("possible"), "0-7\n").unwrap();
        let (nodes, ignored) = read_nodes(&Root::new(dir.path()), false);
        assert_eq!(nodes.len(), 3);
        assert_eq!(ignored, None);
    }
}
