//! kubelet's CPU manager checkpoint (`/var/lib/kubelet/cpu_manager_state`,
//! below the root): read here once for the claims (kubelet's exclusive
//! CPUs are claims) and the fleet wing (the caller's pool), and by
//! `--dump`, so a dump holds it.

use super::root::Root;
use crate::claim::{Claim, KubeletState, parse_kubelet_state};
use crate::cpuset::CpuSet;

/// kubelet's CPU manager checkpoint, below the root.
pub const KUBELET_STATE: &str = "/var/lib/kubelet/cpu_manager_state";

/// kubelet's CPU manager checkpoint below `root`, its CPUs outside
/// `possible` dropped ([`parse_kubelet_state`]): `Ok(None)` when the file
/// does not exist; `Err` (a warning naming the file) when it exists but
/// cannot be read or parsed. The one reader of the file: the claims
/// ([`read_kubelet`]), the fleet wing's context and `--dump` use it.
pub fn read_state(root: &Root, possible: &CpuSet) -> Result<Option<KubeletState>, String> {
    if !root.exists(KUBELET_STATE) {
        return Ok(None);
    }
    let shown = root.path(KUBELET_STATE);
    let text = root
        .read(KUBELET_STATE)
        .ok_or_else(|| format!("claims: cannot read {}", shown.display()))?;
    parse_kubelet_state(&text, possible.last().unwrap_or(0))
        .map(Some)
        .map_err(|e| format!("claims: {}: {e}", shown.display()))
}

/// kubelet's exclusive CPU assignments below `root`
/// ([`KubeletState::claims`] of [`read_state`]), and a warning when its
/// state file exists but cannot be used.
pub fn read_kubelet(root: &Root, possible: &CpuSet) -> (Vec<Claim>, Option<String>) {
    match read_state(root, possible) {
        Ok(state) => (state.map(KubeletState::claims).unwrap_or_default(), None),
        Err(warning) => (Vec::new(), Some(warning)),
    }
}
