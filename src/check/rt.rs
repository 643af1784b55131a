//! Real-time findings: throttling, RLIMIT_RTTIME, priority 99, deadline
//! tasks that cannot fork, nice values that do not apply (`sched(7)`,
//! `getrlimit(2)`, `Documentation/scheduler/sched-rt-group.rst`).

use super::{Code, Context, Finding, Severity};
use crate::cpuset::CpuSet;
use crate::policy::Policy;

/// The codes the rt check can emit.
pub(super) const CODES: &[Code] = &[
    Code::RtThrottling,
    Code::RtTimeLimit,
    Code::PreemptModel,
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
    rt_time_limit(ctx, out);
    preempt_model(ctx, out);
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
            let named = competitors.iter().map(|t| {
                format!(
                    "{} ({}, priority {}, {})",
                    t.id(),
                    t.comm,
                    t.priority,
                    t.cpus
                )
            });
            let message = match competitors.as_slice() {
                [t] => format!(
                    "{} ({}) is runnable at real-time priority {} confined to {}: the command (priority {prio}) will wait behind it",
                    t.kind_and_id(),
                    t.comm,
                    t.priority,
                    crate::words::cpus_phrase(&t.cpus)
                ),
                _ => format!(
                    "{} threads are runnable at a real-time priority of at least {prio} and confined to {}: the command will wait behind them: {}",
                    competitors.len(),
                    crate::words::cpus_phrase(&cpus),
                    crate::words::first_of(named, 3)
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

/// `rt-time-limit`: a SCHED_FIFO/SCHED_RR request under a finite
/// RLIMIT_RTTIME (the launch's own, or the `--pid` target's). The kernel
/// counts it only for the real-time class: `task_tick_rt()` calls
/// `watchdog()` (kernel/sched/rt.c), which adds one to `p->rt.timeout`
/// per tick the task is running and arms the thread's CPU timer once it
/// passes `min(soft, hard)`; `enqueue_task_rt()` sets it back to 0 on a
/// wakeup (`ENQUEUE_WAKEUP`: after a blocking call, not after a preemption
/// or `sched_yield(2)`). `check_thread_timers()`
/// (kernel/time/posix-cpu-timers.c) then sends SIGKILL when the count
/// reaches the hard limit, checked first, else SIGXCPU at the soft limit,
/// raising the soft limit by a second each time. `task_tick_dl()`
/// (kernel/sched/deadline.c) has no watchdog: SCHED_DEADLINE is not
/// counted. Under `--emit` systemd, not this shell, sets the unit's limit.
fn rt_time_limit(ctx: &Context, out: &mut Vec<Finding>) {
    use crate::request::Mode;
    let (Some(policy), Some(limit)) = (ctx.req.sched.policy, ctx.sys.process.rttime_limit) else {
        return;
    };
    if !policy.is_rt()
        || !limit.is_finite()
        || matches!(ctx.req.mode, Mode::Emit | Mode::CheckEmitted)
    {
        return;
    }
    let us = |v: u64| match v.checked_mul(1000) {
        Some(ns) => crate::words::ns_words(ns),
        None => format!("{v}us"),
    };
    let soft = us(limit.soft);
    let hard = if limit.hard == u64::MAX {
        "unlimited".to_string()
    } else {
        us(limit.hard)
    };
    let (who, file) = match &ctx.req.target {
        Some(t) => (
            format!("process {}", t.pid),
            format!("/proc/{}/limits", t.pid),
        ),
        None => ("the command".to_string(), "/proc/self/limits".to_string()),
    };
    let xcpu = format!(
        "SIGXCPU at {soft}, whose default action ends it with a core dump (exit status 152 in a shell; if it is caught or ignored, again after each further second)"
    );
    let signals = if limit.hard == u64::MAX {
        xcpu
    } else if limit.soft >= limit.hard {
        format!("SIGKILL at {hard}")
    } else {
        format!("{xcpu}, and SIGKILL at {hard}")
    };
    let raise = match &ctx.req.target {
        Some(t) => format!("`prlimit --pid {} --rttime=unlimited:unlimited`", t.pid),
        None => "`prlimit --rttime=unlimited:unlimited pinrun ...`, `ulimit -R unlimited` in bash (-R; -r is RLIMIT_RTPRIO), or LimitRTTIME=infinity in a systemd unit".to_string(),
    };
    let privilege = if limit.hard == u64::MAX {
        String::new()
    } else {
        format!(" (above the hard limit {hard}, CAP_SYS_RESOURCE is needed)")
    };
    out.push(Finding::new(
        Code::RtTimeLimit,
        Severity::Warning,
        &CpuSet::new(),
        format!(
            "RLIMIT_RTTIME is {soft} soft, {hard} hard (\"Max realtime timeout\" in {file}): under {} the kernel counts the CPU time {who} uses without a blocking system call, in scheduler ticks, and sends {signals}",
            policy.kernel_name()
        ),
        format!(
            "lift the limit: {raise}{privilege}; or let the program block (any blocking system call sets the count back to 0)"
        ),
    ));
}

/// Whether `req` is told the kernel's preemption model (`preempt-model`):
/// a SCHED_FIFO, SCHED_RR or SCHED_DEADLINE request with `--probe` (the
/// probe's wake-ups measure it) or `--check`. The read scope follows it
/// (`crate::app::scope::for_request`).
pub fn judges_preemption(req: &crate::request::Request) -> bool {
    req.sched
        .policy
        .is_some_and(|p| p.is_rt() || p.is_deadline())
        && (req.probe.is_some() || req.mode == crate::request::Mode::Check)
}

/// `preempt-model`: the preemption model under a real-time or deadline
/// request ([`judges_preemption`]). Under `none` the kernel is preempted
/// only at `cond_resched()` and on the way back to user space:
/// `sched_dynamic_update()` (kernel/sched/core.c) disables
/// `preempt_schedule()` and `irqentry_exit_cond_resched()` (the
/// preemption when an interrupt returns to kernel code) and keeps
/// `cond_resched()`; `voluntary` adds `might_resched()` (kernel/Kconfig.preempt:
/// "explicit preemption points"). A SCHED_FIFO task woken by its timer
/// while kernel code runs on its CPU waits for the next such point.
/// `full`, `lazy` (full for the real-time and deadline classes:
/// `resched_curr_lazy()` is used for fair tasks only) and PREEMPT_RT
/// preempt at once: info.
fn preempt_model(ctx: &Context, out: &mut Vec<Finding>) {
    use crate::system::preempt::PreemptModel;
    let Some(p) = ctx
        .sys
        .preempt
        .as_ref()
        .filter(|_| judges_preemption(ctx.req))
    else {
        return;
    };
    let policy = ctx
        .req
        .sched
        .policy
        .map_or("real-time", |p| p.kernel_name());
    let when = if p.at_boot { " at boot" } else { "" };
    let (severity, message, hint) = match p.model {
        PreemptModel::None | PreemptModel::Voluntary => {
            let point = if p.model == PreemptModel::None {
                "calls cond_resched()"
            } else {
                "calls cond_resched() or reaches a might_sleep() point"
            };
            (
                ctx.possible_disturbance(),
                format!(
                    "the kernel's preemption model is {}{when} ({}): a {policy} task woken while kernel code runs on its CPU waits until that code {point} or returns to user space, so its wake-up latency is bounded by the longest such kernel section there (often milliseconds), not by its priority",
                    p.model.name(),
                    p.source
                ),
                if p.dynamic {
                    "boot with preempt=full (as root, also now: echo full > /sys/kernel/debug/sched/preempt), or use a PREEMPT_RT kernel; keep kernel work (I/O, page reclaim, other tasks' system calls) off the CPU"
                } else {
                    "use a kernel built with CONFIG_PREEMPT or CONFIG_PREEMPT_DYNAMIC (then boot with preempt=full), or a PREEMPT_RT kernel; keep kernel work (I/O, page reclaim, other tasks' system calls) off the CPU"
                },
            )
        }
        PreemptModel::Full | PreemptModel::Lazy | PreemptModel::Rt => (
            Severity::Info,
            format!(
                "the kernel's preemption model is {}{when} ({}): a {policy} task preempts kernel code as soon as it is woken, outside sections that disable preemption{}",
                p.model.name(),
                p.source,
                if p.model == PreemptModel::Rt {
                    " (spinlocks and interrupt handlers are preemptible too)"
                } else {
                    ", interrupts or hold a spinlock"
                }
            ),
            "nothing to do",
        ),
    };
    out.push(Finding::new(
        Code::PreemptModel,
        severity,
        &ctx.cpus,
        message,
        hint,
    ));
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

#[cfg(test)]
mod tests {
    use super::super::testing::{find, findings, machine, worded};
    use super::*;
    use crate::testkit::{Machine, deadline};

    /// The `rt-time-limit` finding of `pinrun ARGS` on a 1×4×1 machine with
    /// RLIMIT_RTTIME `soft`/`hard` µs: (severity, message, hint).
    fn rt_time(soft: u64, hard: u64, args: &[&str]) -> Option<(Severity, String, String)> {
        let sys = Machine::new(1, 4, 1).rttime(soft, hard).build();
        worded(&sys, args, Code::RtTimeLimit)
    }

    /// soft 100 ms < hard 200 ms (`prlimit --rttime=100000:200000`):
    /// check_thread_timers() sends SIGXCPU at the soft limit and SIGKILL at
    /// the hard one; a warning, for SCHED_FIFO and SCHED_RR alike.
    #[test]
    fn finite_rttime_under_a_realtime_policy_is_a_warning() {
        for (args, name) in [
            (
                &["--dry-run", "--cpus", "1", "--fifo", "10"][..],
                "SCHED_FIFO",
            ),
            (&["--check", "--cpus", "1", "--rr", "5"][..], "SCHED_RR"),
        ] {
            let (severity, message, hint) = rt_time(100_000, 200_000, args).expect(name);
            assert_eq!(severity, Severity::Warning, "{name}");
            assert!(
                message.starts_with("RLIMIT_RTTIME is 100ms soft, 200ms hard ("),
                "{message}"
            );
            assert!(message.contains(&format!("under {name} ")), "{message}");
            assert!(message.contains("SIGXCPU at 100ms"), "{message}");
            assert!(message.contains("SIGKILL at 200ms"), "{message}");
            assert!(message.contains("/proc/self/limits"), "{message}");
            assert!(
                hint.contains("prlimit --rttime=unlimited:unlimited"),
                "{hint}"
            );
            assert!(hint.contains("ulimit -R"), "{hint}");
            assert!(hint.contains("LimitRTTIME=infinity"), "{hint}");
            assert!(hint.contains("above the hard limit 200ms"), "{hint}");
        }
    }

    /// soft = hard: the hard limit is checked first, so SIGKILL comes
    /// without a SIGXCPU; a soft limit under an unlimited hard one sends
    /// only SIGXCPU, and raising it needs no privilege.
    #[test]
    fn which_signal_follows_the_kernels_order() {
        let (_, message, _) = rt_time(200_000, 200_000, &["--dry-run", "--fifo", "1"]).unwrap();
        assert!(message.contains("sends SIGKILL at 200ms"), "{message}");
        assert!(!message.contains("SIGXCPU"), "{message}");
        let (_, message, hint) =
            rt_time(1_500_000, u64::MAX, &["--dry-run", "--fifo", "1"]).unwrap();
        assert!(
            message.contains("is 1500ms soft, unlimited hard ("),
            "{message}"
        );
        assert!(message.contains("SIGXCPU at 1500ms"), "{message}");
        assert!(!message.contains("SIGKILL"), "{message}");
        assert!(!hint.contains("CAP_SYS_RESOURCE"), "{hint}");
    }

    /// No finding where the kernel counts nothing: an unlimited soft limit,
    /// SCHED_DEADLINE (task_tick_dl() has no watchdog), the other policies,
    /// no policy, and `--emit` (systemd sets the unit's limit).
    #[test]
    fn nothing_where_the_kernel_does_not_count() {
        let rt = ["--dry-run", "--fifo", "10"];
        assert_eq!(rt_time(u64::MAX, u64::MAX, &rt), None);
        for args in [
            &deadline(&["--dry-run", "--reset-on-fork"])[..],
            &["--dry-run", "--other"][..],
            &["--dry-run", "--batch"][..],
            &["--dry-run", "--idle"][..],
            &["--dry-run", "--cpus", "1"][..],
            &["--emit", "systemd", "--fifo", "10"][..],
        ] {
            assert_eq!(rt_time(100_000, 200_000, args), None, "{args:?}");
        }
    }

    /// The `preempt-model` finding of `pinrun ARGS` on a machine whose
    /// preemption model is `model` (from debugfs, PREEMPT_DYNAMIC).
    fn preempt(
        model: crate::system::preempt::PreemptModel,
        args: &[&str],
    ) -> Option<(Severity, String, String)> {
        let sys = Machine::new(1, 4, 1)
            .preempt(
                model,
                "/sys/kernel/debug/sched/preempt \"(none) voluntary full lazy\"",
                true,
            )
            .build();
        worded(&sys, args, Code::PreemptModel)
    }

    /// Under preempt=none a SCHED_FIFO wake-up waits for cond_resched():
    /// a notice naming the model and where it was read, under --check and
    /// --probe; full, lazy and PREEMPT_RT preempt at once: info.
    #[test]
    fn preemption_model_under_a_realtime_request() {
        use crate::system::preempt::PreemptModel;
        for args in [
            &["--check", "--cpus", "1", "--fifo", "10"][..],
            &["--probe", "--cpus", "1", "--fifo", "10", "--", "true"][..],
            &["--probe", "--cpus", "1", "--rr", "10"][..],
        ] {
            let (severity, message, hint) = preempt(PreemptModel::None, args).expect("a finding");
            assert_eq!(severity, Severity::Notice, "{args:?}");
            assert!(
                message.starts_with("the kernel's preemption model is none (/sys/kernel/debug/sched/preempt \"(none) voluntary full lazy\"): a SCHED_"),
                "{message}"
            );
            assert!(
                message.contains("calls cond_resched() or returns to user space"),
                "{message}"
            );
            assert!(hint.contains("preempt=full"), "{hint}");
        }
        let (severity, message, _) =
            preempt(PreemptModel::Voluntary, &["--check", "--fifo", "10"]).unwrap();
        assert_eq!(severity, Severity::Notice);
        assert!(message.contains("might_sleep()"), "{message}");
        for model in [PreemptModel::Full, PreemptModel::Lazy, PreemptModel::Rt] {
            let (severity, message, _) = preempt(model, &["--check", "--fifo", "10"]).unwrap();
            assert_eq!(severity, Severity::Info, "{model:?}");
            assert!(
                message.contains("preempts kernel code as soon as it is woken"),
                "{message}"
            );
        }
    }

    /// Not told: a launch or dry run without --probe, and --check or
    /// --probe without a real-time or deadline policy.
    #[test]
    fn preemption_model_only_where_it_is_judged() {
        use crate::system::preempt::PreemptModel;
        for args in [
            &["--dry-run", "--fifo", "10"][..],
            &["--fifo", "10", "--", "true"][..],
            &["--check"][..],
            &["--check", "--other"][..],
            &["--probe", "--cpus", "1"][..],
        ] {
            assert_eq!(preempt(PreemptModel::None, args), None, "{args:?}");
        }
    }

    /// `--pid`: the target's own limit, and the hint changes that process.
    #[test]
    fn pid_target_is_named() {
        let (_, message, hint) = rt_time(
            100_000,
            200_000,
            &["--pid", "4242", "--fifo", "10", "--dry-run"],
        )
        .unwrap();
        assert!(message.contains("/proc/4242/limits"), "{message}");
        assert!(message.contains("process 4242 uses"), "{message}");
        assert!(
            hint.contains("prlimit --pid 4242 --rttime=unlimited:unlimited"),
            "{hint}"
        );
    }

    #[test]
    fn rt_priority_99_and_nice_with_rt_are_warnings() {
        let sys = machine().build();
        let f = findings(&sys, &["--dry-run", "--fifo", "99", "--nice", "5"]);
        assert_eq!(
            find(&f, Code::RtPriority99).map(|(s, _)| s),
            Some(Severity::Warning)
        );
        assert!(find(&f, Code::NiceIgnored).is_some());
        let dl = findings(&sys, &deadline(&["--dry-run"]));
        assert!(find(&dl, Code::DeadlineCannotFork).is_some());
    }
}
