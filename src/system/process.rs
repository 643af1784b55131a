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
    /// `/proc/sys/kernel/osrelease` (`6.8.0-45-generic`): for a dump
    /// only, whether the absence of the SCHED_DEADLINE period sysctls means
    /// a kernel before 5.9 (no bounds), and for messages. Capabilities are
    /// never judged by it on a live system ([`MempolicyModes`]).
    pub kernel_release: Option<String>,
    /// Whether the kernel accepts the newer `set_mempolicy(2)` modes,
    /// asked of the kernel ([`mempolicy_modes`]); read only for a memory
    /// policy request.
    pub mempolicy_modes: MempolicyModes,
    /// Soft `RLIMIT_NICE` ("Max nice priority" in `/proc/self/limits`,
    /// `20 - nice` units as `setrlimit(2)` says); `u64::MAX` for unlimited.
    pub nice_limit: Option<u64>,
    /// `Cpus_allowed_list` of `/proc/1/status`: the affinity PID 1 runs
    /// with (systemd's `CPUAffinity=` in system.conf, `systemd-system.conf(5)`),
    /// read for the latency rule of `--cores` and `--show`; `None` when
    /// unread or unreadable.
    pub init_cpus_allowed: Option<CpuSet>,
}

/// Which of the `set_mempolicy(2)` modes newer than Linux 5.14 the kernel
/// accepts: `Some(true)` or `Some(false)` as the kernel answered, `None`
/// when it cannot be told (a dump: its kernel is not here to ask).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MempolicyModes {
    /// `MPOL_PREFERRED_MANY` (mainline 5.15; backported to distribution
    /// kernels such as RHEL 9's 5.14).
    pub preferred_many: Option<bool>,
    /// `MPOL_WEIGHTED_INTERLEAVE` (mainline 6.9).
    pub weighted_interleave: Option<bool>,
}

/// Asks the kernel which newer memory policy modes it has (issue 35: a
/// capability is the kernel's answer, never a version: RHEL 9's 5.14
/// backports `MPOL_PREFERRED_MANY`). On the live machine (`root` is `/`)
/// each mode is tried with `set_mempolicy(2)` on a throwaway thread, on
/// `node` (one the process may use): the kernel answers `EINVAL` for a
/// mode it lacks (`mode >= MPOL_MAX` in `sanitize_mpol_flags()`,
/// mm/mempolicy.c); the thread's policy ends with it, so pinrun's own is
/// untouched. Below a dump, weighted interleaving is known present when
/// the dump holds `/sys/kernel/mm/mempolicy/weighted_interleave` (the
/// directory the mode's sysfs interface creates), and nothing else can be
/// told.
pub fn mempolicy_modes(root: &Root, node: u32) -> MempolicyModes {
    if root.base() != std::path::Path::new("/") {
        return MempolicyModes {
            preferred_many: None,
            weighted_interleave: root
                .is_dir("/sys/kernel/mm/mempolicy/weighted_interleave")
                .then_some(true),
        };
    }
    MempolicyModes {
        preferred_many: try_mode(crate::ffi::MPOL_PREFERRED_MANY, node),
        weighted_interleave: try_mode(crate::ffi::MPOL_WEIGHTED_INTERLEAVE, node),
    }
}

/// `set_mempolicy(mode, {node})` on a thread started for it: `Some(true)`
/// when accepted, `Some(false)` on `EINVAL`, `None` otherwise (the thread
/// could not start, or another error says nothing about the mode).
fn try_mode(mode: i32, node: u32) -> Option<bool> {
    std::thread::Builder::new()
        .name("pinrun-mpol".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let nodes: NodeSet = std::iter::once(node).collect();
            let (mask, maxnode) = nodes.to_kernel_nodemask();
            match crate::ffi::set_mempolicy(mode, Some(&mask), maxnode) {
                Ok(()) => Some(true),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Some(false),
                Err(_) => None,
            }
        })
        .ok()?
        .join()
        .ok()
        .flatten()
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
