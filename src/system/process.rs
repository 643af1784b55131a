//! The calling process's limits, read from procfs (`proc(5)`):
//! `/proc/self/status`, `/proc/self/limits`, `/proc/self/stat`, and the
//! real-time throttling sysctls (`Documentation/scheduler/sched-rt-group.rst`).

use super::root::Root;
use crate::cpuset::{CpuSet, NodeSet};

/// `CAP_SYS_NICE` bit in `CapEff` (`capabilities(7)`).
const CAP_SYS_NICE: u32 = 23;

/// What the kernel lets this process do; every field is `None` when the
/// file is absent (as in most machine dumps).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Process {
    /// `Cpus_allowed_list` of `/proc/self/status` (the inherited affinity).
    pub cpus_allowed: Option<CpuSet>,
    /// `Mems_allowed_list` of `/proc/self/status` (the cpuset's memory nodes).
    pub mems_allowed: Option<NodeSet>,
    /// `CAP_SYS_NICE` in `CapEff`.
    pub cap_sys_nice: Option<bool>,
    /// Soft `RLIMIT_RTPRIO` ("Max realtime priority" in `/proc/self/limits`);
    /// `u64::MAX` for unlimited.
    pub rtprio_limit: Option<u64>,
    /// Current nice value (field 19 of `/proc/self/stat`).
    pub nice: Option<i32>,
    /// Current scheduling policy number (field 41 of `/proc/self/stat`):
    /// the kernel lets an unprivileged task keep its RT policy at a lower
    /// priority whatever RLIMIT_RTPRIO says.
    pub policy: Option<u32>,
    /// Current real-time priority (field 40 of `/proc/self/stat`).
    pub rt_priority: Option<u32>,
    /// `/proc/sys/kernel/sched_rt_runtime_us` (`-1`: no throttling).
    pub rt_runtime_us: Option<i64>,
    /// `/proc/sys/kernel/sched_rt_period_us`.
    pub rt_period_us: Option<i64>,
    /// `/proc/sys/kernel/sched_deadline_period_min_us` (Linux 5.1+; `None`
    /// on older kernels, which bound the period only by 2^63 ns).
    pub dl_period_min_us: Option<u64>,
    /// `/proc/sys/kernel/sched_deadline_period_max_us` (Linux 5.1+).
    pub dl_period_max_us: Option<u64>,
    /// `/proc/sys/kernel/osrelease` (`6.8.0-45-generic`): which memory
    /// policies the kernel has, and whether the absence of the
    /// SCHED_DEADLINE period sysctls means a kernel before 5.9 (no bounds).
    pub kernel_release: Option<String>,
    /// Soft `RLIMIT_NICE` ("Max nice priority" in `/proc/self/limits`,
    /// `20 - nice` units as `setrlimit(2)` says); `u64::MAX` for unlimited.
    pub nice_limit: Option<u64>,
    /// `Cpus_allowed_list` of `/proc/1/status`: the affinity PID 1 runs
    /// with (systemd's `CPUAffinity=` in system.conf, `systemd-system.conf(5)`),
    /// read for the latency rule of `--cores` and `--show`; `None` when
    /// unread or unreadable.
    pub init_cpus_allowed: Option<CpuSet>,
}

/// The value of `key:` in a `/proc/PID/status` text, trimmed.
pub(crate) fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim())
    })
}

/// The soft limit of the `/proc/self/limits` line starting with `name`
/// (`u64::MAX` for unlimited).
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with(name))?;
    let soft = line[name.len()..].split_whitespace().next()?;
    if soft == "unlimited" {
        Some(u64::MAX)
    } else {
        soft.parse().ok()
    }
}

/// `Cpus_allowed_list` of `/proc/1/status` below `root` (`proc(5)`);
/// `None` when the file or the field cannot be read.
pub fn init_affinity(root: &Root) -> Option<CpuSet> {
    let status = root.read("/proc/1/status")?;
    CpuSet::parse_sysfs_list(status_field(&status, "Cpus_allowed_list")?, None).ok()
}

/// Reads `/proc/self/*` and the RT sysctls below `root`. Without `rt`, not
/// the RT and SCHED_DEADLINE sysctls (`--fifo`/`--rr`/`--deadline`) nor
/// `/proc/self/limits`, which is skipped as well with `CAP_SYS_NICE`
/// (which makes the limits moot, unless `details`); without `details`,
/// `nice` (a `--nice` request) or `rt`, not `/proc/self/stat` (the current
/// nice value, policy and priority) nor RLIMIT_NICE; without `kernel`, not
/// the kernel release (`/proc/sys/kernel/osrelease`, see
/// [`super::Scope::kernel`]).
pub fn read_process(root: &Root, rt: bool, nice: bool, details: bool, kernel: bool) -> Process {
    let status = root.read("/proc/self/status").unwrap_or_default();
    let list = |key| CpuSet::parse_sysfs_list(status_field(&status, key)?, None).ok();
    let cap_sys_nice = status_field(&status, "CapEff")
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .map(|caps| caps & (1 << CAP_SYS_NICE) != 0);
    let need_limit = details || ((rt || nice) && cap_sys_nice != Some(true));
    let limits = need_limit
        .then(|| root.read("/proc/self/limits"))
        .flatten()
        .unwrap_or_default();
    let rtprio_limit = soft_limit(&limits, "Max realtime priority");
    let nice_limit = soft_limit(&limits, "Max nice priority");
    let mut process = Process {
        cpus_allowed: list("Cpus_allowed_list"),
        mems_allowed: list("Mems_allowed_list"),
        cap_sys_nice,
        rtprio_limit,
        nice_limit,
        ..Process::default()
    };
    if kernel {
        process.kernel_release = root
            .read("/proc/sys/kernel/osrelease")
            .map(|t| t.trim().to_string());
    }
    if rt {
        process.rt_runtime_us = root.read_int("/proc/sys/kernel/sched_rt_runtime_us");
        process.rt_period_us = root.read_int("/proc/sys/kernel/sched_rt_period_us");
        process.dl_period_min_us = root
            .read_int("/proc/sys/kernel/sched_deadline_period_min_us")
            .and_then(|v| u64::try_from(v).ok());
        process.dl_period_max_us = root
            .read_int("/proc/sys/kernel/sched_deadline_period_max_us")
            .and_then(|v| u64::try_from(v).ok());
    }
    if details || nice || rt {
        use super::threads::stat_field;
        let stat = root.read("/proc/self/stat").unwrap_or_default();
        process.nice = stat_field(&stat, 19);
        process.rt_priority = stat_field(&stat, 40);
        process.policy = stat_field(&stat, 41);
    }
    process
}

/// The soft RLIMIT_RTPRIO and RLIMIT_NICE of process `pid`
/// (`/proc/PID/limits`), which the kernel checks against the target of
/// `sched_setattr(2)` when the caller lacks CAP_SYS_NICE
/// (`__sched_setscheduler()`: `task_rlimit(p, RLIMIT_RTPRIO)`); `None`
/// each when unreadable.
pub fn limits_of(root: &Root, pid: u32) -> (Option<u64>, Option<u64>) {
    let limits = root
        .read(&format!("/proc/{pid}/limits"))
        .unwrap_or_default();
    (
        soft_limit(&limits, "Max realtime priority"),
        soft_limit(&limits, "Max nice priority"),
    )
}
