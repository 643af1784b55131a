//! CPU idle states (`Documentation/admin-guide/pm/cpuidle.rst`): the
//! enabled states of a CPU and their exit latencies. Read after planning,
//! for the checked CPUs only, when info findings can be shown
//! (`cpuidle-deep-states`).

use super::root::Root;

/// One enabled idle state of a CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleState {
    /// `name` (C1, C6, …).
    pub name: String,
    /// `latency`: exit latency, µs.
    pub latency_us: u64,
}

/// Enabled idle states of `cpu` (`disable` = 0), in index order.
pub fn read_idle_states(root: &Root, cpu: u32) -> Vec<IdleState> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    root.numbered_entries(&dir, "state")
        .into_iter()
        .filter_map(|k| {
            let s = format!("{dir}/state{k}");
            if root.read_int(&format!("{s}/disable")) == Some(1) {
                return None;
            }
            Some(IdleState {
                name: root.read_value(&format!("{s}/name"))?,
                latency_us: u64::try_from(root.read_int(&format!("{s}/latency"))?).ok()?,
            })
        })
        .collect()
}
