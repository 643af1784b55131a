//! Memory-policy findings (`set_mempolicy(2)`, `numa(7)`,
//! `Documentation/admin-guide/sysctl/kernel.rst` `numa_balancing`).

use super::{Code, Context, Finding, Severity};
use crate::cpuset::{CpuSet, NodeSet};
use crate::plan::{MemMode, MemPlan};
use crate::system::SystemState;

/// The codes the memory check can emit.
pub(super) const CODES: &[Code] = &[
    Code::BindLowMemory,
    Code::MemoryRemote,
    Code::MemoryPartlyRemote,
    Code::NumaBalancing,
    Code::NoNuma,
];

/// A strict bind with less free memory than this (MiB) is a hazard.
const LOW_FREE_MIB: u64 = 512;

/// The memory-policy findings: a policy on a kernel without NUMA, then
/// for the plan's policy, those of a strict bind ([`bind_findings`]) and
/// of memory remote to the chosen CPUs ([`remote_findings`]).
pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    if !sys.numa && ctx.req.memory.is_some() {
        out.push(Finding::new(
            Code::NoNuma,
            Severity::Info,
            &CpuSet::new(),
            "this kernel has no NUMA (no /sys/devices/system/node): node 0 is the whole machine and holds all memory, so the memory policy is not applied (set_mempolicy(2) fails with ENOSYS there)".to_string(),
            "leave out the memory options on this machine",
        ));
    }
    let Some(mem) = &ctx.plan.memory else {
        return;
    };
    if mem.mode == MemMode::Bind {
        bind_findings(ctx, mem, out);
    }
    remote_findings(ctx, mem, out);
}

/// `f` naming the memory nodes `nodes`.
fn with_nodes(mut f: Finding, nodes: &NodeSet) -> Finding {
    f.nodes = nodes.to_vec();
    f
}

/// The findings of the strict bind `mem`: `bind-low-memory` when its
/// nodes have little memory free or reclaimable while other nodes have
/// memory (the OOM killer comes first), and `numa-balancing` when
/// `kernel.numa_balancing` still scans the bound memory.
fn bind_findings(ctx: &Context, mem: &MemPlan, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    // Other nodes with memory, which the bind forbids: without them the
    // bind restricts nothing, and the OOM killer comes as it would
    // without pinrun.
    let elsewhere: NodeSet = sys
        .nodes
        .values()
        .filter(|n| n.has_memory && !mem.nodes.contains(n.id))
        .map(|n| n.id)
        .collect();
    // Free memory plus what reclaim frees first (page cache,
    // reclaimable slab): the kernel reclaims before it kills.
    let usable: Option<u64> = mem
        .nodes
        .iter()
        .map(|n| {
            let node = sys.nodes.get(&n)?;
            Some(
                node.mem_free_kb?
                    .saturating_add(node.mem_reclaimable_kb.unwrap_or(0)),
            )
        })
        .try_fold(0u64, |a, b| Some(a.saturating_add(b?)));
    if let Some(kb) = usable
        && kb / 1024 < LOW_FREE_MIB
        && !elsewhere.is_empty()
    {
        out.push(with_nodes(
            Finding::new(
                Code::BindLowMemory,
                Severity::Warning,
                &CpuSet::new(),
                format!(
                    "strict bind to {} with {} MiB free or reclaimable: allocations beyond that invoke the OOM killer even while {} {} memory",
                    crate::words::nodes_phrase(&mem.nodes),
                    kb / 1024,
                    crate::words::nodes_phrase(&elsewhere),
                    if elsewhere.len() == 1 { "has" } else { "have" }
                ),
                format!("use --preferred {} (falls back to other nodes), or free memory on the node", mem.nodes.first().unwrap_or(0)),
            ),
            &mem.nodes,
        ));
    }
    if let Some(message) = sys
        .numa_balancing
        .and_then(|mode| numa_balancing_scans(sys, mode, &mem.nodes))
    {
        out.push(with_nodes(
            Finding::new(
                Code::NumaBalancing,
                Severity::Info,
                &CpuSet::new(),
                message,
                "sysctl kernel.numa_balancing=0 on machines dedicated to pinned workloads",
            ),
            &mem.nodes,
        ));
    }
}

/// `NUMA_BALANCING_NORMAL`, the bit of `kernel.numa_balancing`
/// (include/linux/sched/sysctl.h) for balancing between all nodes.
const NUMA_BALANCING_NORMAL: i64 = 1;
/// `NUMA_BALANCING_MEMORY_TIERING`: promotion from lower memory tiers only.
const NUMA_BALANCING_MEMORY_TIERING: i64 = 2;

/// What `kernel.numa_balancing` = `mode` does to memory bound to `nodes`,
/// or `None` when it scans none of it (issue 35: a value that turns the
/// feature off). 0 is off; with `NUMA_BALANCING_NORMAL` (1, 3) every page
/// is scanned; `NUMA_BALANCING_MEMORY_TIERING` alone (2) skips the pages of
/// top-tier nodes (`change_pte_range()`, mm/mprotect.c: "Skip scanning top
/// tier node if normal numa balancing is disabled"), and a node with CPUs
/// is always top tier (`establish_demotion_targets()`, mm/memory-tiers.c,
/// sets the top tier to the lowest one holding a CPU node), so only bound
/// nodes without CPUs may be scanned (pinrun does not read the tiers).
fn numa_balancing_scans(sys: &SystemState, mode: i64, nodes: &NodeSet) -> Option<String> {
    if mode & NUMA_BALANCING_NORMAL != 0 {
        return Some("kernel.numa_balancing is on: it still scans the bound process's memory (page faults) though it cannot move pages off the bound nodes".into());
    }
    if mode & NUMA_BALANCING_MEMORY_TIERING == 0 {
        return None;
    }
    let cpuless: NodeSet = nodes
        .iter()
        .filter(|&n| sys.nodes.get(&n).is_some_and(|node| node.cpus.is_empty()))
        .collect();
    (!cpuless.is_empty()).then(|| {
        let which = match cpuless.len() {
            1 => "which has",
            _ => "which have",
        };
        format!(
            "kernel.numa_balancing = {mode} (memory tiering): it scans the bound memory on {}, {which} no CPUs and may be below the top memory tier (page faults), though it cannot move pages off the bound nodes",
            crate::words::nodes_phrase(&cpuless)
        )
    })
}

/// `memory-remote` when the memory of a bind or preferred policy `mem` is
/// remote to every node of the chosen CPUs (by the nodes' distances),
/// `memory-partly-remote` when to some of them.
fn remote_findings(ctx: &Context, mem: &MemPlan, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    if !matches!(
        mem.mode,
        MemMode::Bind | MemMode::Preferred | MemMode::PreferredMany
    ) || ctx.plan.cpus.is_none()
    {
        return;
    }
    let cpu_nodes = &ctx.plan.nodes;
    let remote: Vec<(u32, u32, u32)> = cpu_nodes
        .iter()
        .filter_map(|cn| {
            let node = sys.nodes.get(&cn)?;
            let local = node.distance_to(cn)?;
            let nearest = mem
                .nodes
                .iter()
                .filter_map(|m| Some((node.distance_to(m)?, m)))
                .min()?;
            (nearest.0 > local).then_some((cn, nearest.1, nearest.0))
        })
        .collect();
    if remote.len() == cpu_nodes.len() && !remote.is_empty() {
        let (cn, mn, d) = remote[0];
        let local = sys.nodes[&cn].distance_to(cn).unwrap_or(10);
        out.push(with_nodes(
            Finding::new(
                Code::MemoryRemote,
                Severity::Warning,
                ctx.plan.cpus.as_ref().unwrap_or(&CpuSet::new()),
                format!("memory on node {mn} is remote to the chosen CPUs on node {cn} (distance {d}, local {local})"),
                format!("bind to the CPUs' own node (--membind without a value takes the nodes of the chosen CPUs: {cpu_nodes})"),
            ),
            &mem.nodes,
        ));
    } else if !remote.is_empty() {
        let nodes: NodeSet = remote.iter().map(|r| r.0).collect();
        out.push(with_nodes(
            Finding::new(
                Code::MemoryPartlyRemote,
                Severity::Info,
                ctx.plan.cpus.as_ref().unwrap_or(&CpuSet::new()),
                format!("the chosen CPUs span nodes {cpu_nodes}; memory on {} is remote to the CPUs on {}", mem.nodes, crate::words::nodes_phrase(&nodes)),
                "choose CPUs on one node (--node N), or interleave memory across their nodes",
            ),
            &mem.nodes,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{find, findings, machine};
    use crate::finding::{Code, Severity};

    #[test]
    fn memory_bound_to_a_remote_node_is_found() {
        let sys = machine().build();
        let f = findings(&sys, &["--dry-run", "--cpus", "0", "--membind", "1"]);
        assert!(find(&f, Code::MemoryRemote).is_some());
        let local = findings(&sys, &["--dry-run", "--cpus", "0", "--membind", "0"]);
        assert_eq!(find(&local, Code::MemoryRemote), None);
    }

    #[test]
    fn a_strict_bind_to_a_nearly_full_node_is_a_hazard() {
        let sys = machine().free_mib(1, 100).build();
        let f = findings(&sys, &["--dry-run", "--membind", "1"]);
        assert_eq!(
            find(&f, Code::BindLowMemory).map(|(s, _)| s),
            Some(Severity::Warning)
        );
        // The kernel reclaims page cache and reclaimable slab before it
        // kills: 100 MiB free and 1 GiB of them is no hazard.
        let cached = machine().free_mib(1, 100).reclaimable_mib(1, 1024).build();
        let f = findings(&cached, &["--dry-run", "--membind", "1"]);
        assert_eq!(find(&f, Code::BindLowMemory), None);
        // A bind to every node with memory restricts nothing: no hazard
        // pinrun adds, whatever is free.
        let f = findings(&sys, &["--dry-run", "--membind", "0-1"]);
        assert_eq!(find(&f, Code::BindLowMemory), None);
        let one_node = machine().free_mib(1, 100).without_memory(0).build();
        let f = findings(&one_node, &["--dry-run", "--membind", "1"]);
        assert_eq!(find(&f, Code::BindLowMemory), None);
    }
}
