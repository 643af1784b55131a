//! Real-time findings: throttling, priority 99, deadline tasks that cannot
//! fork, nice values that do not apply (`sched(7)`,
//! `Documentation/scheduler/sched-rt-group.rst`).

use super::{Code, Context, Finding, Severity};
use crate::cpuset::CpuSet;
use crate::policy::Policy;

/// The codes the rt check can emit.
pub(super) const CODES: &[Code] = &[
    Code::RtThrottling,
    Code::RtCompetitor,
    Code::RtPriority99,
    Code::DeadlineCannotFork,
    Code::NiceIgnored,
];

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let policy = ctx.req.sched.policy;
    let rt = policy.is_some_and(Policy::is_rt);
    let p = &ctx.sys.process;
    if let (true, Some(runtime), Some(period)) = (rt, p.rt_runtime_us, p.rt_period_us)
        && runtime >= 0
        && runtime < period
    {
        out.push(Finding::new(
            Code::RtThrottling,
            ctx.possible_disturbance(),
            &ctx.cpus,
            format!(
                "RT throttling is active (kernel.sched_rt_runtime_us = {runtime} of sched_rt_period_us = {period}): a real-time task that keeps its CPU busy is stalled for {} us of every {period} us",
                period - runtime
            ),
            "if the program never yields, disable throttling with `sysctl kernel.sched_rt_runtime_us=-1` (only with your own watchdog), or keep a housekeeping CPU free of real-time load",
        ));
    }
    if let Some(prio) = policy.and_then(Policy::rt_priority) {
        // One finding for every competitor, the highest priority first.
        let mut competitors: Vec<_> = ctx
            .sys
            .rt_tasks
            .iter()
            .filter(|t| {
                t.state == 'R'
                    && t.priority >= prio
                    && !t.cpus.is_empty()
                    && t.cpus.is_subset(&ctx.cpus)
            })
            .collect();
        competitors.sort_by_key(|t| (std::cmp::Reverse(t.priority), t.pid, t.tid));
        if !competitors.is_empty() {
            let cpus: CpuSet = competitors.iter().flat_map(|t| t.cpus.iter()).collect();
            let named: Vec<String> = competitors
                .iter()
                .take(3)
                .map(|t| {
                    format!(
                        "{} ({}, priority {}, {})",
                        t.id(),
                        t.comm,
                        t.priority,
                        t.cpus
                    )
                })
                .collect();
            let rest = competitors.len().saturating_sub(3);
            let message = match competitors.as_slice() {
                [t] => format!(
                    "{} ({}) is runnable at real-time priority {} confined to {}: the command (priority {prio}) will wait behind it",
                    t.kind_and_id(),
                    t.comm,
                    t.priority,
                    crate::words::cpus_phrase(&t.cpus)
                ),
                _ => format!(
                    "{} threads are runnable at a real-time priority of at least {prio} and confined to {}: the command will wait behind them: {}{}",
                    competitors.len(),
                    crate::words::cpus_phrase(&cpus),
                    named.join(", "),
                    if rest > 0 {
                        format!(" and {rest} more")
                    } else {
                        String::new()
                    }
                ),
            };
            out.push(Finding::new(
                Code::RtCompetitor,
                Severity::Warning,
                &cpus,
                message,
                "choose other CPUs, or give the command a higher priority than the competitors",
            ));
        }
    }
    if policy.and_then(Policy::rt_priority) == Some(99) {
        out.push(Finding::new(
            Code::RtPriority99,
            Severity::Warning,
            &ctx.cpus,
            "real-time priority 99 equals the kernel's own per-CPU threads (migration, watchdogs) and can starve them".into(),
            "use a priority from 1 to 98",
        ));
    }
    if policy.is_some_and(Policy::is_deadline) && !ctx.req.sched.reset_on_fork {
        out.push(Finding::new(
            Code::DeadlineCannotFork,
            Severity::Warning,
            &CpuSet::new(),
            "a SCHED_DEADLINE task cannot fork (fork fails with EAGAIN): shells and most daemons will fail".into(),
            "add --reset-on-fork so that children start as SCHED_OTHER, or exec a program that never forks",
        ));
    }
    if let (Some(n), true) = (ctx.req.sched.nice, policy.is_some_and(Policy::ignores_nice)) {
        out.push(Finding::new(
            Code::NiceIgnored,
            Severity::Warning,
            &CpuSet::new(),
            format!("--nice {n} is set but has no effect while the policy is real-time or deadline (it applies to SCHED_OTHER and SCHED_BATCH)"),
            "drop --nice, or use --other/--batch with it",
        ));
    }
}

/// Why the kernel may still refuse a real-time policy with EPERM after the
/// capability and rlimit checks passed: RT group scheduling. Names the
/// cgroup and the setting, or `None` when nothing points there. `config`:
/// whether the kernel has `CONFIG_RT_GROUP_SCHED=y`
/// ([`crate::system::cgroup::read_rt_group_config`], read only after an EPERM).
pub fn eperm_diagnosis(sys: &crate::system::SystemState, config: Option<bool>) -> Option<String> {
    if let Some((path, v)) = &sys.rt_group.v1_runtime
        && path != "/"
    {
        return Some(format!(
            "RT group scheduling is on: cgroup {path} has cpu.rt_runtime_us = {v}; give it (and its parents) enough runtime, or run in the root cpu cgroup"
        ));
    }
    if config == Some(true)
        && let Some(cg) = &sys.rt_group.v2_cgroup
    {
        return Some(format!(
            "the kernel has CONFIG_RT_GROUP_SCHED=y and this process is in cgroup {cg}: real-time tasks are refused outside the root cgroup unless it has RT runtime; run pinrun from the root cgroup (systemd: Delegate=no, or a unit in -.slice)"
        ));
    }
    None
}
