//! CPU idle states (`Documentation/admin-guide/pm/cpuidle.rst`): the
//! enabled states of a CPU and their exit latencies. Read after planning,
//! for the checked CPUs only, when info findings can be shown
//! (`cpuidle-deep-states`).

use super::root::Dir;

/// One enabled idle state of a CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleState {
    /// `name` (C1, C6, …).
    pub name: String,
    /// `latency`: exit latency, µs.
    pub latency_us: u64,
}

/// Enabled idle states of `cpu` (`disable` = 0), in index order; `cpu_dir`
/// is `/sys/devices/system/cpu`, opened once for every CPU (a short path
/// walk per file, issue 17).
pub fn read_idle_states(cpu_dir: &Dir, cpu: u32) -> Vec<IdleState> {
    let dir = format!("cpu{cpu}/cpuidle");
    cpu_dir
        .numbered_entries(&dir, "state")
        .into_iter()
        .filter_map(|k| {
            let s = format!("{dir}/state{k}");
            if cpu_dir.read_int(&format!("{s}/disable")) == Some(1) {
                return None;
            }
            Some(IdleState {
                name: cpu_dir.read_value(&format!("{s}/name"))?,
                latency_us: u64::try_from(cpu_dir.read_int(&format!("{s}/latency"))?).ok()?,
            })
        })
        .collect()
}
