//! kubelet's CPU manager checkpoint (`/var/lib/kubelet/cpu_manager_state`,
//! below the root): read here once for the claims (kubelet's exclusive
//! CPUs are claims) and the fleet wing (the caller's pool), and by
//! `--dump`, so a dump holds it.

use super::root::Root;
use crate::claim::{self, Claim};
use crate::cpuset::CpuSet;

/// kubelet's CPU manager checkpoint, below the root.
pub const KUBELET_STATE: &str = "/var/lib/kubelet/cpu_manager_state";

/// kubelet's exclusive CPU assignments below `root`, and a warning when
/// its state file exists but cannot be used. CPUs outside `possible`
/// are dropped ([`crate::claim::parse_kubelet_state`]).
pub fn read_kubelet(root: &Root, possible: &CpuSet) -> (Vec<Claim>, Option<String>) {
    if !root.exists(KUBELET_STATE) {
        return (Vec::new(), None);
    }
    let shown = root.path(KUBELET_STATE);
    match root.read(KUBELET_STATE) {
        None => (
            Vec::new(),
            Some(format!("claims: cannot read {}", shown.display())),
        ),
        Some(text) => match claim::parse_kubelet(&text, possible.last().unwrap_or(0)) {
            Ok(c) => (c, None),
            Err(e) => (
                Vec::new(),
                Some(format!("claims: {}: {e}", shown.display())),
            ),
        },
    }
}
