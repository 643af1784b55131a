//! What to read: [`Scope`] tells [`super::SystemState::read_scoped`] which
//! files a request needs, so that a launch reads a few dozen small files
//! instead of every CPU's topology and cache directories.
//!
//! The rule is exactness, not approximation: every field that `plan` and
//! `check` look at for the request is read exactly as a full read would read
//! it; only data they never look at is left out (and is then `None`, empty
//! or default). `--show` prints everything and uses [`Scope::full`].
//! Code that starts looking at a new field for some request must widen
//! [`Scope::for_request`] accordingly; `tests/scope.rs` compares the plan
//! and findings of a scoped read with those of a full read on every fixture.

use crate::cpuset::{CpuSet, NodeSet};
use crate::request::{Mode, Policy, Request};

/// Whose topology to read: `core_cpus_list` (the core's siblings) of these
/// CPUs, and `core_id` and `physical_package_id` of the lowest CPU of each
/// of their cores (the planner names a core by that CPU, and reads the ids
/// of no other). Without `details` nothing else is read per CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cpus {
    /// Every CPU.
    All,
    /// No CPU (no placement requested).
    None,
    /// These CPUs (`--cpus LIST`: the candidates are among them).
    Only(CpuSet),
    /// The CPUs in these nodes' cpulists (`--node NODES` without `--cpus`).
    Nodes(NodeSet),
}

/// The parts of the machine to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// CPUs whose topology is read; the others keep only `id`, `online`
    /// and `node`. With `details` and [`Cpus::All`], every CPU is read whole.
    pub topology: Cpus,
    /// The isolated set (`cpu/isolated`, root `cpuset.cpus.isolated`):
    /// needed by `--isolated` and by `--deadline` (its root domain).
    pub isolation: bool,
    /// `RLIMIT_RTPRIO` (`/proc/self/limits`): needed by `--fifo`/`--rr`,
    /// and then only when `CapEff` lacks `CAP_SYS_NICE` (with it the limit
    /// does not apply, and `rtprio_limit` stays `None`).
    pub rt_limit: bool,
    /// What only `--show` prints: die, cluster, `package_cpus`, the LLC
    /// (`cache/index*`), node `meminfo` and `distance` (read anyway where the
    /// planner needs them: `meminfo` without `node/has_memory`, `distance`
    /// of nodes without memory), `nohz_full`, `/proc/cmdline`,
    /// `/proc/self/stat` and the RT throttling sysctls.
    pub details: bool,
}

impl Scope {
    /// Everything (`--show`, and [`super::SystemState::read`]).
    pub fn full() -> Self {
        Self {
            topology: Cpus::All,
            isolation: true,
            rt_limit: true,
            details: true,
        }
    }

    /// What planning and checking `req` look at.
    pub fn for_request(req: &Request) -> Self {
        if req.mode == Mode::Show {
            return Self::full();
        }
        let p = &req.placement;
        let topology = if !p.is_requested() {
            Cpus::None
        } else if let Some(cpus) = &p.cpus {
            Cpus::Only(cpus.clone())
        } else if let Some(nodes) = &p.nodes {
            Cpus::Nodes(nodes.clone())
        } else {
            Cpus::All
        };
        let policy = req.sched.policy;
        Self {
            topology,
            isolation: p.isolated || matches!(policy, Some(Policy::Deadline { .. })),
            rt_limit: matches!(policy, Some(Policy::Fifo(_) | Policy::Rr(_))),
            details: false,
        }
    }
}
