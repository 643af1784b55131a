//! Memory policy: the `set_mempolicy(2)` mode and nodes, refusing unknown
//! nodes, nodes without memory and nodes outside `Mems_allowed`.

use super::placement::require_nodes;
use crate::cpuset::NodeSet;
use crate::error::{Error, ErrorCode, Result};
use crate::request::{MemoryRequest, NodeChoice};
use crate::system::{AllowedSource, SystemState};
use crate::words::nodes_phrase;

/// `set_mempolicy(2)` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemMode {
    /// `MPOL_BIND`.
    Bind,
    /// `MPOL_PREFERRED`.
    Preferred,
    /// `MPOL_PREFERRED_MANY`.
    PreferredMany,
    /// `MPOL_INTERLEAVE`.
    Interleave,
    /// `MPOL_WEIGHTED_INTERLEAVE`.
    WeightedInterleave,
    /// `MPOL_LOCAL`.
    Local,
}

impl MemMode {
    /// The name used in text and JSON output (`numa_maps` spelling).
    pub fn name(self) -> &'static str {
        match self {
            MemMode::Bind => "bind",
            MemMode::Preferred => "preferred",
            MemMode::PreferredMany => "preferred-many",
            MemMode::Interleave => "interleave",
            MemMode::WeightedInterleave => "weighted-interleave",
            MemMode::Local => "local",
        }
    }
}

/// A resolved memory policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemPlan {
    /// The mode.
    pub mode: MemMode,
    /// Its nodes (empty for `Local`).
    pub nodes: NodeSet,
}

/// The memory node nearest to `node` by `distance`, if any has memory.
pub fn nearest_memory_node(sys: &SystemState, node: u32) -> Option<u32> {
    let from = sys.nodes.get(&node)?;
    sys.nodes
        .values()
        .filter(|n| n.has_memory && n.id != node)
        .min_by_key(|n| (from.distance_to(n.id).unwrap_or(u32::MAX), n.id))
        .map(|n| n.id)
}

/// Refuses unknown nodes, nodes without memory and nodes outside
/// `Mems_allowed`.
fn validate_mem_nodes(sys: &SystemState, option: &str, nodes: &NodeSet) -> Result<()> {
    require_nodes(sys, option, nodes)?;
    if let Some(bad) = nodes.iter().find(|id| !sys.nodes[id].has_memory) {
        let e = Error::new(
            ErrorCode::NodeWithoutMemory,
            format!("{option}: node {bad} has no memory"),
        );
        return Err(match nearest_memory_node(sys, bad) {
            Some(near) => e.hint(format!(
                "the nearest node with memory is node {near}: use {option}={near}"
            )),
            None => e,
        });
    }
    if let Some(allowed) = &sys.process.mems_allowed {
        let outside = nodes.difference(allowed);
        if !outside.is_empty() {
            return Err(Error::new(
                ErrorCode::NodeNotAllowed,
                format!(
                    "{option}: {} outside the memory nodes this process may use ({}allowed memory nodes {})",
                    nodes_phrase(&outside),
                    match &sys.allowed_source {
                        AllowedSource::Cgroup(cs) => format!("cpuset of cgroup {}: ", cs.cgroup),
                        _ => String::new(),
                    },
                    allowed
                ),
            )
            .hint("choose among the allowed nodes, or widen the cgroup's cpuset.mems"));
        }
    }
    Ok(())
}

/// The plan's one line on memory when a placement names CPUs (their
/// nodes `nodes`) and no memory policy is requested, on a machine with
/// more than one memory node: the inherited policy stays, as numactl
/// --physcpubind and taskset leave it, and under the default policy
/// (local allocation, set_mempolicy(2) `MPOL_DEFAULT`: "allocate memory
/// on the node of the CPU that triggered the allocation") the chosen
/// CPUs' node decides where pages go; when they span nodes, a thread
/// moved between them keeps the pages it first touched on the other.
/// `None` on a one-node machine or without CPUs.
pub(super) fn unchanged_reason(sys: &SystemState, nodes: &NodeSet) -> Option<String> {
    if !sys.numa || sys.memory_nodes().len() < 2 || nodes.is_empty() {
        return None;
    }
    let head = "memory: no policy requested, so the inherited one stays (numactl --physcpubind leaves it so); under the default, local allocation";
    Some(match nodes.iter().next() {
        Some(n) if nodes.len() == 1 && !sys.nodes.get(&n).is_some_and(|x| x.has_memory) => {
            format!(
                "{head}, node {n} has no memory: pages come from the nearest node with memory{}; --membind NODES to choose",
                nearest_memory_node(sys, n).map_or(String::new(), |m| format!(" (node {m})"))
            )
        }
        Some(n) if nodes.len() == 1 => format!(
            "{head} puts pages on the node of the CPU that first touches them: node {n}; --membind binds them there"
        ),
        _ => format!(
            "{head} puts pages on the node of the CPU that first touches them, and these CPUs span {}: a thread moved across them reads the pages it touched on the other remotely; --membind binds them to these nodes, --node N keeps to one",
            nodes_phrase(nodes)
        ),
    })
}

pub(super) fn plan_memory(
    sys: &SystemState,
    req: &MemoryRequest,
    chosen_nodes: Option<&NodeSet>,
) -> Result<MemPlan> {
    let all_nodes = || {
        let mem = sys.memory_nodes();
        match &sys.process.mems_allowed {
            Some(a) => mem.intersection(a),
            None => mem,
        }
    };
    let choice = |c: &NodeChoice, option: &str| {
        c.resolve(&all_nodes()).map_err(|why| {
            Error::new(ErrorCode::BadNodeList, format!("{option}: {why}"))
                .hint("+LIST counts from 0 among the nodes with memory the process may use (pinrun --show)")
        })
    };
    let (mode, nodes, option) = match req {
        MemoryRequest::Bind(Some(c)) => (MemMode::Bind, choice(c, "--membind")?, "--membind"),
        MemoryRequest::Bind(None) => {
            let n = chosen_nodes.filter(|n| !n.is_empty()).ok_or_else(|| {
                Error::new(
                    ErrorCode::MembindNeedsNodes,
                    "--membind: no NODES given and no placement to take them from",
                )
                .hint("give the nodes (--membind=0) or a placement (--node, --cpus, --cores)")
            })?;
            (MemMode::Bind, n.clone(), "--membind")
        }
        MemoryRequest::Preferred(n) => (
            MemMode::Preferred,
            std::iter::once(*n).collect(),
            "--preferred",
        ),
        MemoryRequest::PreferredMany(n) => (MemMode::PreferredMany, n.clone(), "--preferred-many"),
        MemoryRequest::Interleave(c) => (
            MemMode::Interleave,
            choice(c, "--interleave")?,
            "--interleave",
        ),
        MemoryRequest::WeightedInterleave(c) => (
            MemMode::WeightedInterleave,
            choice(c, "--weighted-interleave")?,
            "--weighted-interleave",
        ),
        MemoryRequest::Local => {
            return Ok(MemPlan {
                mode: MemMode::Local,
                nodes: NodeSet::new(),
            });
        }
    };
    // set_mempolicy(2) answers EINVAL for a mode the kernel lacks
    // (mm/mempolicy.c: `mode >= MPOL_MAX`): refused when the kernel said
    // so to a test call (crate::system::process::mempolicy_modes), never
    // for its version (distribution kernels backport modes); a dump's
    // kernel cannot be asked, and is not refused.
    let modes = &sys.process.mempolicy_modes;
    let has = match mode {
        MemMode::PreferredMany => modes.preferred_many,
        MemMode::WeightedInterleave => modes.weighted_interleave,
        _ => None,
    };
    if has == Some(false) {
        return Err(Error::new(
            ErrorCode::MempolicyUnsupported,
            format!(
                "{option}: this kernel ({}) has no {} memory policy: set_mempolicy(2) answered EINVAL to a test call on a throwaway thread",
                sys.process.kernel_release.as_deref().unwrap_or("?"),
                mode.name()
            ),
        )
        .hint(match mode {
            MemMode::WeightedInterleave => "use --interleave (mainline has the mode since Linux 6.9)",
            _ => "use --preferred NODE, or --membind NODES (mainline has the mode since Linux 5.15)",
        }));
    }
    validate_mem_nodes(sys, option, &nodes)?;
    Ok(MemPlan { mode, nodes })
}
