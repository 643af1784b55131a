//! The calling process's limits, read from procfs (`proc(5)`):
//! `/proc/self/status`, `/proc/self/limits` (and `/proc/PID/limits` of a
//! `--pid` target), `/proc/self/stat`, and the real-time throttling sysctls
//! (`Documentation/scheduler/sched-rt-group.rst`).

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
    /// `RLIMIT_RTTIME`, soft and hard, in microseconds ("Max realtime
    /// timeout" in `/proc/self/limits`, units "us"): the CPU time a
    /// SCHED_FIFO/SCHED_RR task may use without blocking before the kernel
    /// sends SIGXCPU (soft) and SIGKILL (hard) (`getrlimit(2)`;
    /// `watchdog()` in kernel/sched/rt.c, `check_thread_timers()` in
    /// kernel/time/posix-cpu-timers.c). Read for any policy request,
    /// whatever the capabilities: CAP_SYS_NICE does not lift it.
    pub rttime_limit: Option<Rlimit>,
    /// `Cpus_allowed_list` of `/proc/1/status`: the affinity PID 1 runs
    /// with (systemd's `CPUAffinity=` in system.conf, `systemd-system.conf(5)`),
    /// read for the latency rule of `--cores` and `--show`; `None` when
    /// unread or unreadable.
    pub init_cpus_allowed: Option<CpuSet>,
}

/// A resource limit as `/proc/PID/limits` shows it (`proc(5)`;
/// `proc_pid_limits()` in fs/proc/base.c prints "unlimited" for
/// `RLIM_INFINITY`): the soft and the hard value, `u64::MAX` for unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimit {
    /// The soft limit (`rlim_cur`), what the kernel enforces.
    pub soft: u64,
    /// The hard limit (`rlim_max`), the ceiling of the soft one.
    pub hard: u64,
}

impl Rlimit {
    /// Whether the soft limit is finite (not `RLIM_INFINITY`).
    pub fn is_finite(self) -> bool {
        self.soft != u64::MAX
    }
}

/// The limits of `/proc/PID/limits` that decide what `sched_setattr(2)`
/// may do to a process and what happens to it after: see [`limits_of`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Soft `RLIMIT_RTPRIO` ("Max realtime priority").
    pub rtprio: Option<u64>,
    /// Soft `RLIMIT_NICE` ("Max nice priority").
    pub nice: Option<u64>,
    /// `RLIMIT_RTTIME` ("Max realtime timeout", µs).
    pub rttime: Option<Rlimit>,
}

impl Limits {
    /// The limits of a `/proc/PID/limits` text; each `None` when its row
    /// is missing or unparsable.
    fn parse(limits: &str) -> Limits {
        Limits {
            rtprio: limit_columns(limits, "Max realtime priority")[0],
            nice: limit_columns(limits, "Max nice priority")[0],
            rttime: match limit_columns(limits, "Max realtime timeout") {
                [Some(soft), Some(hard)] => Some(Rlimit { soft, hard }),
                _ => None,
            },
        }
    }
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

/// The value of `key:` in a `/proc/PID/status` text, trimmed: the
/// crate's one `status` parser (`proc_pid_status()`, fs/proc/array.c:
/// one `Key:\tvalue` line each; `proc(5)`). Every reader of
/// `/proc/PID/status` and `/proc/PID/task/TID/status` goes through it,
/// [`status_list`], [`status_cpus_allowed`] or [`status_uids`].
pub fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim())
    })
}

/// The cpulist of field `key` of a `status` text (`Cpus_allowed_list`,
/// `Mems_allowed_list`); `None` when missing or malformed.
pub fn status_list(status: &str, key: &str) -> Option<CpuSet> {
    CpuSet::parse_sysfs_list(status_field(status, key)?, None).ok()
}

/// The numbers of field `key` of a `status` text (`NSpid`, `NSpgid`: the
/// task's ids in each PID namespace, outermost first); words that are not
/// numbers skipped, empty when the field is missing.
pub fn status_ids(status: &str, key: &str) -> Vec<u32> {
    status_field(status, key)
        .map(|v| {
            v.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// `Cpus_allowed_list` of a `status` text: the task's CPU affinity
/// (`sched_setaffinity(2)`); `None` when missing or malformed.
pub fn status_cpus_allowed(status: &str) -> Option<CpuSet> {
    status_list(status, "Cpus_allowed_list")
}

/// The ids of `Uid:` in a `status` text, in the kernel's order (real,
/// effective, saved set, filesystem); `None` each for a word that is not a
/// number, nothing when the field is missing.
pub fn status_uids(status: &str) -> impl Iterator<Item = Option<u32>> + '_ {
    status_field(status, "Uid")
        .unwrap_or("")
        .split_whitespace()
        .map(|u| u.parse().ok())
}

/// The soft and hard values of the `/proc/PID/limits` row starting with
/// `name` (`u64::MAX` for "unlimited"; `None` each when missing or not a
/// number). The row is `name`, then the soft limit, the hard limit and
/// the units (`proc_pid_limits()`, fs/proc/base.c).
fn limit_columns(limits: &str, name: &str) -> [Option<u64>; 2] {
    let Some(line) = limits.lines().find(|l| l.starts_with(name)) else {
        return [None, None];
    };
    let mut words = line[name.len()..].split_whitespace().map(|w| {
        if w == "unlimited" {
            Some(u64::MAX)
        } else {
            w.parse().ok()
        }
    });
    [words.next().flatten(), words.next().flatten()]
}

/// `Cpus_allowed_list` of `/proc/1/status` below `root` (`proc(5)`);
/// `None` when the file or the field cannot be read.
pub fn init_affinity(root: &Root) -> Option<CpuSet> {
    status_cpus_allowed(&root.read("/proc/1/status")?)
}

/// Reads `/proc/self/*` and the RT sysctls below `root`. Without `rt`, not
/// the RT and SCHED_DEADLINE sysctls (`--fifo`/`--rr`/`--deadline`) nor
/// `/proc/self/limits` (with `rt` it is read whatever the capabilities:
/// RLIMIT_RTTIME applies to a privileged task too; for `nice` alone it is
/// skipped with `CAP_SYS_NICE`, which makes RLIMIT_NICE moot); without `details`,
/// `nice` (a `--nice` request) or `rt`, not `/proc/self/stat` (the current
/// nice value, policy and priority) nor RLIMIT_NICE; without `kernel`, not
/// the kernel release (`/proc/sys/kernel/osrelease`, see
/// [`super::Scope::kernel`]).
pub fn read_process(root: &Root, rt: bool, nice: bool, details: bool, kernel: bool) -> Process {
    let status = root.read("/proc/self/status").unwrap_or_default();
    let list = |key| status_list(&status, key);
    let cap_sys_nice = status_field(&status, "CapEff")
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .map(|caps| caps & (1 << CAP_SYS_NICE) != 0);
    let need_limit = details || rt || (nice && cap_sys_nice != Some(true));
    // Root::read is bounded (root::MAX_FILE); the live file is the
    // kernel's own answer for this process.
    let limits = need_limit
        .then(|| root.read("/proc/self/limits"))
        .flatten()
        .map(|t| Limits::parse(&t))
        .unwrap_or_default();
    let mut process = Process {
        cpus_allowed: list("Cpus_allowed_list"),
        mems_allowed: list("Mems_allowed_list"),
        cap_sys_nice,
        rtprio_limit: limits.rtprio,
        nice_limit: limits.nice,
        rttime_limit: limits.rttime,
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

/// The limits of process `pid` (`/proc/PID/limits`, read under
/// [`super::root::MAX_FILE`]): the soft RLIMIT_RTPRIO and RLIMIT_NICE,
/// which the kernel checks against the target of `sched_setattr(2)` when
/// the caller lacks CAP_SYS_NICE (`__sched_setscheduler()`:
/// `task_rlimit(p, RLIMIT_RTPRIO)`), and RLIMIT_RTTIME, which the
/// target's own ticks count against once it runs under a real-time policy
/// (`watchdog()`, kernel/sched/rt.c); `None` each when unreadable.
pub fn limits_of(root: &Root, pid: u32) -> Limits {
    root.read(&format!("/proc/{pid}/limits"))
        .map(|t| Limits::parse(&t))
        .unwrap_or_default()
}

/// The facts that tell an EPERM's causes apart for a change of thread
/// `tid` of process `pid` ([`crate::error::PermFacts`]): this process's
/// `Uid:`, `CapEff:`, `Seccomp:` and `NoNewPrivs:` from
/// `/proc/self/status`, the thread's `Uid:` from
/// `/proc/PID/task/TID/status` (`proc(5)`). A field that cannot be read
/// is `None` (or false).
pub fn perm_facts(pid: u32, tid: u32) -> crate::error::PermFacts {
    let own = super::root::read_bounded("/proc/self/status").unwrap_or_default();
    let theirs = super::root::read_bounded(format!("/proc/{pid}/task/{tid}/status")).ok();
    let uids = |status: &str| -> Option<(u32, u32)> {
        let mut f = status_field(status, "Uid")?.split_whitespace();
        Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
    };
    crate::error::PermFacts {
        caller_euid: nix::unistd::geteuid().as_raw(),
        cap_sys_nice: status_field(&own, "CapEff")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .map(|caps| caps & (1 << CAP_SYS_NICE) != 0),
        target_uids: theirs.as_deref().and_then(uids),
        seccomp: status_field(&own, "Seccomp").and_then(|v| v.parse().ok()),
        no_new_privs: status_field(&own, "NoNewPrivs") == Some("1"),
    }
}

/// The hint for a helper that could not be started ([`crate::apply::helper::spawn`], or a pidfd of `--pid`) with
/// error `e`, by its errno: EMFILE/ENFILE (a descriptor: `ulimit -n`,
/// `fs.file-max`), EAGAIN (`fork(2)`: `RLIMIT_NPROC` or the pids cgroup's
/// `pids.max`), ENOMEM, EPERM (a seccomp filter or security module
/// refusing `pidfd_open(2)`/`fork(2)`: `Seccomp:` of `/proc/self/status`
/// says which), ENOSYS (`pidfd_open(2)` is Linux 5.3). Source: the
/// ERRORS of `pidfd_open(2)`, `socketpair(2)`, `fork(2)`.
pub fn start_hint(e: &std::io::Error) -> String {
    let seccomp = super::root::read_bounded("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Seccomp:").map(|v| v.trim() == "2"))
        })
        .unwrap_or(false);
    match e.raw_os_error() {
        Some(libc::EMFILE) => "pinrun is out of file descriptors (RLIMIT_NOFILE): raise the limit (ulimit -n 1024) and run pinrun again".into(),
        Some(libc::ENFILE) => "the system is out of file descriptors (fs.file-max, /proc/sys/fs/file-nr): close files and run pinrun again".into(),
        Some(libc::EAGAIN) => "fork(2) was refused: this user's process limit (ulimit -u) or the cgroup's pids.max is reached; stop processes or raise it".into(),
        Some(libc::ENOMEM) => "the kernel had no memory for the helper: free memory and run pinrun again".into(),
        Some(libc::EPERM | libc::EACCES) if seccomp => "a seccomp filter on pinrun (Seccomp: 2 in /proc/self/status) refuses pidfd_open(2) or fork(2): allow them in the container's or unit's filter (SystemCallFilter=), or run pinrun outside it".into(),
        Some(libc::EPERM | libc::EACCES) => "a security module (SELinux, AppArmor) refuses pidfd_open(2) or fork(2) to pinrun: see the audit log (ausearch -m AVC, dmesg)".into(),
        Some(libc::ENOSYS) => "this kernel has no pidfd_open(2): it needs Linux 5.3 or later".into(),
        _ => "run pinrun again; if it keeps failing, report it with `pinrun --dump machine.tar.gz`".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as `proc_pid_limits()` prints them (fs/proc/base.c: "%-25s
    /// %-20s %-20s %-10s", "unlimited" for RLIM_INFINITY): this host's
    /// defaults and the field case `rlimit-rttime`'s.
    #[test]
    fn limits_rows_are_read_as_the_kernel_prints_them() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max nice priority         0                    0                    \n\
                    Max realtime priority     20                   20                   \n\
                    Max realtime timeout      200000               200000               us        \n";
        assert_eq!(
            Limits::parse(text),
            Limits {
                rtprio: Some(20),
                nice: Some(0),
                rttime: Some(Rlimit {
                    soft: 200_000,
                    hard: 200_000
                }),
            }
        );
        let unlimited =
            "Max realtime timeout      unlimited            unlimited            us        \n";
        let r = Limits::parse(unlimited).rttime.unwrap();
        assert_eq!((r.soft, r.hard, r.is_finite()), (u64::MAX, u64::MAX, false));
        let soft_only =
            "Max realtime timeout      100000               unlimited            us        \n";
        let r = Limits::parse(soft_only).rttime.unwrap();
        assert_eq!((r.soft, r.hard, r.is_finite()), (100_000, u64::MAX, true));
        assert_eq!(Limits::parse(""), Limits::default());
    }
}
