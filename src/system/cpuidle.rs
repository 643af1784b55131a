//! CPU idle states (`Documentation/admin-guide/pm/cpuidle.rst`): the
//! states a CPU's governor may select and their exit latencies. Read after planning,
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

/// The idle states of `cpu` its cpuidle governor may select, in index
/// order: enabled (`disable` = 0) and within the CPU's resume latency
/// limit ([`resume_latency_limit`]); `cpu_dir` is
/// `/sys/devices/system/cpu`, opened once for every CPU (a short path
/// walk per file, issue 17).
///
/// What the governor reads (`cpuidle_select()`, drivers/cpuidle/cpuidle.c;
/// `menu_select()`, `teo_select()` in drivers/cpuidle/governors/): the
/// states the driver registered (`intel_idle.max_cstate=`,
/// `processor.max_cstate=` leave the deeper ones out of sysfs), each
/// state's `disable`, and the latency limit of
/// `cpuidle_governor_latency_req()` (drivers/cpuidle/governor.c): the
/// smaller of the CPU device's resume latency QoS (this file) and the
/// global CPU latency QoS (`/dev/cpu_dma_latency`, not read: opening it
/// adds a request, `cpu_latency_qos_open()`, kernel/power/qos.c); a
/// state whose exit latency exceeds the limit is never selected.
pub fn read_idle_states(cpu_dir: &Dir, cpu: u32) -> Vec<IdleState> {
    let dir = format!("cpu{cpu}/cpuidle");
    let limit = resume_latency_limit(cpu_dir, cpu);
    cpu_dir
        .numbered_entries(&dir, "state")
        .into_iter()
        .filter_map(|k| {
            let s = format!("{dir}/state{k}");
            if cpu_dir.read_int(&format!("{s}/disable")) == Some(1) {
                return None;
            }
            let state = IdleState {
                name: cpu_dir.read_value(&format!("{s}/name"))?,
                latency_us: u64::try_from(cpu_dir.read_int(&format!("{s}/latency"))?).ok()?,
            };
            limit.is_none_or(|l| state.latency_us <= l).then_some(state)
        })
        .collect()
}

/// The resume latency limit of `cpu`, µs, from
/// `cpuN/power/pm_qos_resume_latency_us` as
/// `pm_qos_resume_latency_us_show()` (drivers/base/power/sysfs.c) writes
/// it: `0` is no constraint (`PM_QOS_RESUME_LATENCY_NO_CONSTRAINT`),
/// `n/a` a limit of 0 (no state but polling), `N` a limit of N µs
/// (Documentation/ABI/testing/sysfs-devices-power). `None`: no
/// constraint, or the file is missing or unreadable.
pub fn resume_latency_limit(cpu_dir: &Dir, cpu: u32) -> Option<u64> {
    parse_resume_latency(&cpu_dir.read_value(&format!("cpu{cpu}/power/pm_qos_resume_latency_us"))?)
}

/// Parses a `pm_qos_resume_latency_us` value (see [`resume_latency_limit`]).
fn parse_resume_latency(text: &str) -> Option<u64> {
    match text.trim() {
        "n/a" => Some(0),
        "0" => None,
        v => v.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    /// The three shapes `pm_qos_resume_latency_us_show()` writes, and
    /// what is not one of them (no constraint read).
    #[test]
    fn resume_latency_as_the_kernel_writes_it() {
        assert_eq!(super::parse_resume_latency("0\n"), None);
        assert_eq!(super::parse_resume_latency("n/a\n"), Some(0));
        assert_eq!(super::parse_resume_latency("20\n"), Some(20));
        assert_eq!(super::parse_resume_latency("-1"), None);
        assert_eq!(super::parse_resume_latency(""), None);
    }
}
