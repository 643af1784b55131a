//! Reads that only some requests need, done after planning for the chosen
//! CPUs: competing real-time tasks (`/proc/<pid>/stat`, `status`) and CPU
//! idle states (`Documentation/admin-guide/pm/cpuidle.rst`).

use super::root::Root;
use crate::cpuset::CpuSet;

/// A SCHED_FIFO or SCHED_RR task on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtTask {
    /// Process id.
    pub pid: u32,
    /// `comm`.
    pub comm: String,
    /// `rt_priority` (field 40 of stat).
    pub priority: u32,
    /// State letter (field 3), `R` when runnable.
    pub state: char,
    /// `Cpus_allowed_list`.
    pub cpus: CpuSet,
}

/// One enabled idle state of a CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleState {
    /// `name` (C1, C6, …).
    pub name: String,
    /// `latency`: exit latency, µs.
    pub latency_us: u64,
}

/// Every user-space SCHED_FIFO/SCHED_RR process (main threads) except
/// `self_pid`.
pub fn read_rt_tasks(root: &Root, self_pid: Option<u32>) -> Vec<RtTask> {
    let mut pids = root.numbered_entries("/proc", "");
    pids.retain(|p| Some(*p) != self_pid);
    pids.into_iter()
        .filter_map(|pid| {
            let stat = root.read(&format!("/proc/{pid}/stat"))?;
            let close = stat.rfind(')')?;
            let comm = stat[stat.find('(')? + 1..close].to_string();
            let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            // f[0] is field 3 (state); field n is f[n - 3].
            let policy: u32 = f.get(38)?.parse().ok()?;
            // Field 9 flags: PF_KTHREAD (0x00200000) marks kernel threads,
            // whose per-CPU RT threads (migration/N) are the kernel's own.
            let flags: u64 = f.get(6)?.parse().ok()?;
            if (policy != 1 && policy != 2) || flags & 0x0020_0000 != 0 {
                return None;
            }
            let status = root.read(&format!("/proc/{pid}/status"))?;
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(|v| CpuSet::parse_sysfs_list(v, None).ok())?;
            Some(RtTask {
                pid,
                comm,
                priority: f.get(37)?.parse().ok()?,
                state: f.first()?.chars().next()?,
                cpus,
            })
        })
        .collect()
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
