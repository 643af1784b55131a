//! Scheduling: refusals of a policy the kernel would answer with EPERM
//! (RLIMIT_RTPRIO without CAP_SYS_NICE, RT group scheduling without
//! runtime, SCHED_DEADLINE without the capability or on a narrow affinity).

use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::policy::Policy;
use crate::request::SchedRequest;
use crate::system::SystemState;

/// Refuses a scheduling policy the kernel would refuse with EPERM.
/// `own_permissions`: whether this process's capabilities and limits
/// matter (not for `--emit`, where systemd applies the policy as root).
pub(super) fn plan_sched(
    sys: &SystemState,
    sched: &SchedRequest,
    cpus: Option<&CpuSet>,
    own_permissions: bool,
) -> Result<()> {
    let no_cap = own_permissions && sys.process.cap_sys_nice == Some(false);
    let rt_priority = sched.policy.and_then(Policy::rt_priority);
    let deadline = sched.policy.is_some_and(Policy::is_deadline);
    match rt_priority {
        Some(_) if matches!(&sys.rt_group.v1_runtime, Some((p, 0)) if p != "/") => {
            return Err(Error::new(
                ErrorCode::RtGroupNoRuntime,
                format!(
                    "real-time policy refused: RT group scheduling gives this process's cgroup {} no real-time runtime (cpu.rt_runtime_us = 0), so the kernel answers EPERM",
                    sys.rt_group.v1_runtime.as_ref().map_or("", |(p, _)| p.as_str())
                ),
            )
            .hint("grant it runtime (echo 950000 > <cgroup>/cpu.rt_runtime_us, parents first), or run pinrun in the root cpu cgroup"));
        }
        Some(prio) => {
            if let (true, Some(limit)) = (no_cap, sys.process.rtprio_limit)
                && u64::from(prio) > limit
            {
                return Err(Error::new(
                    ErrorCode::RtprioNotPermitted,
                    format!("real-time priority {prio} exceeds RLIMIT_RTPRIO {limit}, and CAP_SYS_NICE is missing"),
                )
                .hint(format!("raise the limit (systemd LimitRTPRIO={prio}, limits.conf `rtprio {prio}`), or grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE)")));
            }
        }
        None if deadline => {
            if no_cap {
                return Err(Error::new(
                    ErrorCode::DeadlineNotPermitted,
                    "SCHED_DEADLINE needs CAP_SYS_NICE, which this process lacks",
                )
                .hint("run as root or grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE)"));
            }
            if let Some(cpus) = cpus {
                // The root domain spans the online CPUs outside domain isolation
                // (exclusive cpuset partitions aside), not the caller's cpuset.
                let span = sys.online.difference(&sys.isolated);
                let span = if cpus.is_subset(&sys.isolated) {
                    cpus.clone()
                } else {
                    span
                };
                if !span.is_subset(cpus) {
                    return Err(Error::new(
                        ErrorCode::DeadlineAffinity,
                        format!(
                            "--deadline: the affinity {} is narrower than its root domain {}; the kernel refuses SCHED_DEADLINE tasks that cannot run on every CPU of their root domain (EPERM/EBUSY)",
                            cpus, span
                        ),
                    )
                    .hint("create an exclusive cpuset partition for these CPUs (cgroup v2 cpuset.cpus.partition=root) and run pinrun inside it, or drop the placement"));
                }
            }
        }
        _ => {}
    }
    Ok(())
}
