//! Planning: a pure function from ([`SystemState`], [`Request`]) to a
//! [`Plan`]: which CPUs, which memory nodes, which scheduling policy, and
//! why. No I/O, no syscalls. Every refusal happens here, before anything is
//! applied. One submodule per subject: [`placement`], [`memory`],
//! [`sched`], [`claims`].

pub mod claims;
pub mod memory;
pub mod placement;
pub mod sched;

pub use claims::claim_set;
pub use memory::{MemMode, MemPlan, nearest_memory_node};
pub use placement::cores_of;

use crate::claim::Claims;
use crate::cpuset::{CpuSet, NodeSet};
use crate::error::Result;
use crate::request::{Request, SchedRequest};
use crate::system::SystemState;
use crate::words::cpus_phrase;

/// One chosen core: every SMT thread of it, whether used or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreChoice {
    /// `physical_package_id`.
    pub package: Option<u32>,
    /// `core_id`.
    pub core: Option<u32>,
    /// The node of its CPUs.
    pub node: Option<u32>,
    /// The package as a grouping key: the lowest CPU of `package_cpus_list`
    /// (physical ids can be -1 or repeat across packages on some machines),
    /// else the physical id.
    pub package_key: Option<u32>,
    /// All its threads (SMT siblings).
    pub cpus: CpuSet,
}

/// The resolved request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// CPUs to set as affinity; `None`: affinity unchanged.
    pub cpus: Option<CpuSet>,
    /// The cores the chosen CPUs belong to.
    pub cores: Vec<CoreChoice>,
    /// Nodes of the chosen CPUs.
    pub nodes: NodeSet,
    /// Memory policy; `None`: unchanged.
    pub memory: Option<MemPlan>,
    /// Scheduling changes.
    pub sched: SchedRequest,
    /// Why these CPUs, one sentence each.
    pub reasons: Vec<String>,
}

/// Resolves `req` on `sys`. Errors are refusals (exit 125), each naming the
/// object and the fix.
pub fn plan(sys: &SystemState, req: &Request) -> Result<Plan> {
    plan_claimed(sys, req, &Claims::default())
}

/// [`plan`] with the CPUs other launches hold: `--cores` skips claimed
/// cores, `--cpus` refuses claimed CPUs, and `--exclusive` refuses to claim
/// a core any part of which is claimed.
pub fn plan_claimed(sys: &SystemState, req: &Request, claims: &Claims) -> Result<Plan> {
    let placed = if req.placement.is_requested() {
        Some(placement::place(sys, &req.placement, claims)?)
    } else {
        None
    };
    let mut placed = placed;
    if let (true, Some(p)) = (req.claims.exclusive, &mut placed) {
        let claim = claim_set(&p.cpus, &p.cores);
        claims::refuse_claimed("--exclusive", &claim, claims)?;
        p.reasons.push(format!(
            "--exclusive: claims {} (every thread of the chosen cores) while the command lives",
            cpus_phrase(&claim)
        ));
    }
    let nodes: NodeSet = placed
        .as_ref()
        .map(|p| p.cpus.iter().filter_map(|c| sys.node_of(c)).collect())
        .unwrap_or_default();
    let memory = req
        .memory
        .as_ref()
        .map(|m| memory::plan_memory(sys, m, placed.as_ref().map(|_| &nodes)))
        .transpose()?;
    sched::plan_sched(
        sys,
        &req.sched,
        placed.as_ref().map(|p| &p.cpus),
        req.mode != crate::request::Mode::Emit,
    )?;
    let (cpus, cores, reasons) = match placed {
        Some(p) => (Some(p.cpus), p.cores, p.reasons),
        None => (
            None,
            Vec::new(),
            vec!["no placement requested: CPU affinity unchanged".to_string()],
        ),
    };
    Ok(Plan {
        cpus,
        cores,
        nodes,
        memory,
        sched: req.sched.clone(),
        reasons,
    })
}
