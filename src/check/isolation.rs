//! Isolation findings (`Documentation/admin-guide/kernel-per-CPU-kthreads.rst`,
//! `kernel-parameters.txt` `isolcpus=`/`nohz_full=`/`rcu_nocbs=`, cgroup v2
//! cpuset partitions). Kernel sysfs is authoritative; the command line is a
//! cross-check, and the source when a dump lacks the sysfs files.

use super::{Code, Context, Finding, Severity};
use crate::cpuset::CpuSet;
use crate::plan::boot_hint::{Param, boot_hint, without_boot};
use crate::system::IsolationSource;
use crate::words::cpus_phrase;

/// The codes the isolation check can emit.
pub(super) const CODES: &[Code] = &[
    Code::NotIsolated,
    Code::NotNohzFull,
    Code::NotRcuNocbs,
    Code::IsolationNotApplied,
    Code::IsolcpusUnknownFlag,
    Code::IsolatedNoBalancing,
    Code::SiblingNotIsolated,
    Code::PartitionInvalid,
    Code::IsolationMixed,
    Code::IsolatedWithoutIntent,
];

fn verb(set: &CpuSet) -> &'static str {
    if set.len() == 1 { "is" } else { "are" }
}

/// The command line `param` asks for `asked`, but the kernel's `file` says
/// `applied`: report the online CPUs that were dropped (sysfs wins).
fn not_applied(
    ctx: &Context,
    out: &mut Vec<Finding>,
    param: &str,
    asked: &CpuSet,
    applied: &CpuSet,
    file: &str,
) {
    let dropped = asked.intersection(&ctx.sys.online).difference(applied);
    if dropped.is_empty() {
        return;
    }
    out.push(Finding::new(
        Code::IsolationNotApplied,
        Severity::Warning,
        &dropped,
        format!(
            "{param} asks for {}, but the kernel's {file} is {}: the kernel keeps at least one housekeeping CPU (usually the boot CPU), and nohz_full needs CONFIG_NO_HZ_FULL",
            cpus_phrase(&dropped),
            if applied.is_empty() { "empty".into() } else { applied.to_list() }
        ),
        format!("trust {file}; leave the boot CPU (usually CPU 0) out of {}", param.split('=').next().unwrap_or(param)),
    ));
}

/// `then`, preceded by what works on this host now, each checked against
/// the planner before it is offered (issue 31: a hint never names what
/// would be refused): `--isolated` (when `isolated_option`) and `--cpus
/// LIST` with one CPU of `quiet` per core for each CPU checked, among the
/// allowed CPUs of the request's nodes that no chosen core holds, no
/// claim holds and that are not the boot CPU ("CPUs 5-6 are isolated and
/// free: --isolated, or --cpus 5; else …").
fn alternatives_first(
    ctx: &Context,
    quiet: &CpuSet,
    what: &str,
    isolated_option: bool,
    then: String,
) -> String {
    let sys = ctx.sys;
    let Some(chosen) = &ctx.plan.cpus else {
        return then;
    };
    let taken = ctx
        .plan
        .cores
        .iter()
        .fold(chosen.clone(), |a, c| a.union(&c.cpus));
    let mut free = without_boot(
        sys,
        &sys.allowed
            .intersection(quiet)
            .difference(&taken)
            .difference(&ctx.claims.cpus()),
    );
    if let Some(nodes) = &ctx.req.placement.nodes {
        free = free
            .iter()
            .filter(|&c| sys.node_of(c).is_some_and(|n| nodes.contains(n)))
            .collect();
    }
    if free.is_empty() {
        return then;
    }
    let works = |r: &crate::request::Request| {
        crate::plan::plan_claimed(sys, r, ctx.claims).is_ok_and(|p| {
            p.cpus
                .as_ref()
                .is_some_and(|c| !c.is_empty() && c.is_subset(quiet))
        })
    };
    let mut options = Vec::new();
    let p = &ctx.req.placement;
    if isolated_option && !p.isolated && p.cpus.is_none() && p.cpus_form.is_none() {
        let mut r = ctx.req.clone();
        r.placement.isolated = true;
        if works(&r) {
            options.push("--isolated".to_string());
        }
    }
    // One CPU of each free core, as many as the CPUs checked.
    let mut seen = CpuSet::new();
    let mut list = CpuSet::new();
    for c in free.iter() {
        if list.len() == chosen.len() {
            break;
        }
        if !seen.contains(c) {
            seen.union_with(&sys.core_of(c));
            list.insert(c);
        }
    }
    if list.len() == chosen.len() {
        let mut r = ctx.req.clone();
        r.placement.cpus = Some(list.clone());
        r.placement.cpus_form = None;
        r.placement.cores = None;
        r.placement.units = None;
        r.placement.choose = crate::request::Choose::Rule;
        if works(&r) {
            options.push(format!("--cpus {list}"));
        }
    }
    if options.is_empty() {
        return then;
    }
    format!(
        "{} {} {what} and free: {}; else {then}",
        cpus_phrase(&free),
        verb(&free),
        options.join(", or ")
    )
}

/// The isolation findings on the checked CPUs, in this order: an
/// `isolcpus=` the kernel rejects, CPUs not isolated, not nohz_full and
/// not in rcu_nocbs, isolation the command line asks for but the kernel
/// did not apply, isolated CPUs without load balancing, [`mixed`]
/// isolation, SMT siblings not isolated, and an invalid cpuset partition.
pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    unknown_flag(ctx, out);
    not_isolated(ctx, out);
    workqueues_on_isolated(ctx, out);
    not_nohz_full(ctx, out);
    not_rcu_nocbs(ctx, out);
    not_applied_at_boot(ctx, out);
    no_balancing(ctx, out);
    mixed(ctx, out);
    sibling_not_isolated(ctx, out);
    partition_invalid(ctx, out);
}

/// What a message adds about where a set came from (`src`): nothing for
/// sysfs, else that it is the command line's or that the kernel lacks
/// nohz_full support.
fn from_cmdline(src: IsolationSource) -> &'static str {
    match src {
        IsolationSource::Sysfs => "",
        IsolationSource::Cmdline => " (per the kernel command line; the sysfs file is absent)",
        IsolationSource::NotBuilt => {
            " (this kernel has no nohz_full support: /sys/devices/system/cpu/nohz_full is absent beside cpu/isolated, CONFIG_NO_HZ_FULL is off)"
        }
    }
}

/// `isolcpus-unknown-flag`: an `isolcpus=` flag the kernel does not know
/// (`housekeeping_isolcpus_setup()`, kernel/sched/isolation.c). One with a
/// character other than a letter rejects the parameter: nothing isolated
/// (a warning). One of letters only is skipped and the rest applied since
/// Linux 5.7 ("isolcpus: Skipped unknown flag"), rejected before: the
/// kernel is asked, not its version: where `cpu/isolated` is read and
/// lists none of the parameter's online domain CPUs, this kernel rejected
/// it (a warning); otherwise a notice.
fn unknown_flag(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let Some(iso) = sys
        .boot
        .isolcpus
        .as_ref()
        .filter(|i| !i.unknown_flags.is_empty())
    else {
        return;
    };
    let flags = format!(
        "{} {}",
        crate::words::noun(iso.unknown_flags.len(), "flag"),
        iso.unknown_flags.join(", ")
    );
    let asked = iso
        .cpus
        .clone()
        .unwrap_or_default()
        .intersection(&sys.online);
    let refused_here = sys.isolation_source == IsolationSource::Sysfs
        && iso.domain
        && !asked.is_empty()
        && asked.intersection(&sys.isolated).is_empty();
    let (severity, message) = if iso.rejected() {
        (
            Severity::Warning,
            format!(
                "isolcpus={} has {flags} with characters other than letters: the kernel rejects the parameter (\"isolcpus: Invalid flag\") and isolates nothing",
                iso.raw
            ),
        )
    } else if refused_here {
        (
            Severity::Warning,
            format!(
                "isolcpus={} has unknown {flags}: this kernel rejected the parameter (cpu/isolated lists none of {asked}; kernels before 5.7 reject an unknown flag, later ones skip it)",
                iso.raw
            ),
        )
    } else {
        (
            Severity::Notice,
            format!(
                "isolcpus={} has unknown {flags}: the kernel skips {} (\"isolcpus: Skipped unknown flag\", since Linux 5.7) and applies the rest; older kernels reject the whole parameter",
                iso.raw,
                if iso.unknown_flags.len() == 1 {
                    "it"
                } else {
                    "them"
                }
            ),
        )
    };
    out.push(Finding::new(
        Code::IsolcpusUnknownFlag,
        severity,
        &CpuSet::new(),
        message,
        "use only the flags nohz, domain and managed_irq",
    ));
}

/// `not-isolated`: checked CPUs the scheduler balances other tasks onto,
/// saying what an `isolcpus=` without the `domain` flag does for them
/// instead (kernel/sched/isolation.c: explicit flags replace the default
/// "domain"); the hint offers isolated alternatives first, else the boot
/// parameters or a cgroup v2 isolated partition.
fn not_isolated(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let not_iso = ctx.cpus.difference(&sys.isolated);
    if not_iso.is_empty() {
        return;
    }
    // What the command line does for these CPUs when it lists them
    // without the domain flag (kernel/sched/isolation.c: explicit flags
    // replace the default "domain").
    let listed = sys
        .boot
        .isolcpus
        .as_ref()
        .filter(|i| !i.domain && !i.rejected())
        .and_then(|i| Some((i, i.cpus.as_ref()?.intersection(&not_iso))))
        .filter(|(_, c)| !c.is_empty());
    let message = match listed {
        Some((i, c)) => format!(
            "{} {} not isolated from the scheduler: isolcpus={} lists {} but without the `domain` flag, so {}; other tasks are still balanced onto {}{}",
            cpus_phrase(&not_iso),
            verb(&not_iso),
            i.raw,
            if c != not_iso {
                cpus_phrase(&c)
            } else if c.len() == 1 {
                "it".to_string()
            } else {
                "them".to_string()
            },
            match (i.managed_irq, i.nohz) {
                (true, true) =>
                    "it only keeps managed IRQs off them (best effort) and stops their tick",
                (true, false) =>
                    "it only keeps kernel-managed IRQs off them where a housekeeping CPU shares the IRQ's mask (best effort)",
                (false, true) => "it only stops their tick (as nohz_full=)",
                (false, false) => "it does nothing for them",
            },
            if not_iso.len() == 1 { "it" } else { "them" },
            from_cmdline(sys.isolation_source),
        ),
        None => format!(
            "{} {} not isolated: the scheduler balances other tasks onto {}{}",
            cpus_phrase(&not_iso),
            verb(&not_iso),
            if not_iso.len() == 1 { "it" } else { "them" },
            from_cmdline(sys.isolation_source),
        ),
    };
    // Whole cores: an SMT sibling left in the scheduler's balancing runs
    // other tasks on the same core (`sibling-not-isolated` once the line
    // is booted), so the line names every online thread of each core but
    // the boot CPU's, which no line isolates.
    let whole = not_iso.iter().fold(not_iso.clone(), |acc, c| {
        let core = sys.core_of(c).intersection(&sys.online);
        if without_boot(sys, &core) == core {
            acc.union(&core)
        } else {
            acc
        }
    });
    let siblings = whole.difference(&not_iso);
    out.push(Finding::new(
        Code::NotIsolated,
        ctx.possible_disturbance(),
        &not_iso,
        message,
        alternatives_first(ctx, &sys.isolated, "isolated", true, {
            let mut params = vec![Param::Isolcpus];
            if sys.nohz_full_source != IsolationSource::NotBuilt {
                params.push(Param::NohzFull);
            }
            params.push(Param::RcuNocbs);
            boot_hint(sys, &whole, &params, |line| {
                let cores = if without_boot(sys, &siblings).is_empty() {
                    String::new()
                } else {
                    format!(
                        " (with the SMT {} {}: every thread of each core, else other tasks share it)",
                        if siblings.len() == 1 { "sibling" } else { "siblings" },
                        siblings.to_list()
                    )
                };
                if sys.cgroup_v2() {
                    format!(
                        "isolate at boot with {line}{cores}, or at run time with a cgroup v2 isolated partition (cpuset.cpus.partition=isolated)"
                    )
                } else {
                    format!("isolate at boot with {line}{cores}")
                }
            })
        }),
    ));
}

/// `not-isolated` for checked CPUs that are domain-isolated but where
/// unbound workqueue workers may still run: `wq_unbound_cpumask`
/// (kernel/workqueue.c, `/sys/devices/virtual/workqueue/cpumask`) is the
/// affinity of every unbound worker; `workqueue_init_early()` takes the
/// `nohz_full=` CPUs out of it (`HK_TYPE_WQ`) and since Linux 6.6 the
/// `isolcpus=domain` ones (`HK_TYPE_DOMAIN`), since 6.7 isolated cpuset
/// partitions; an administrator may write it. An input of "which tasks
/// the scheduler may place there" (issue 35 class 4).
fn workqueues_on_isolated(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let Some(wq) = &sys.workqueue_cpus else {
        return;
    };
    let exposed = ctx.cpus.intersection(&sys.isolated).intersection(wq);
    if exposed.is_empty() {
        return;
    }
    let keep = sys
        .online
        .difference(&sys.isolated)
        .difference(&sys.nohz_full);
    let hint = if keep.is_empty() {
        "leave a housekeeping CPU out of the isolated ones, and write it to /sys/devices/virtual/workqueue/cpumask".to_string()
    } else {
        format!(
            "echo {} > /sys/devices/virtual/workqueue/cpumask (as root; a mask, not kept across boots), or boot with nohz_full= for them (Linux 6.6+: isolcpus=domain suffices)",
            keep.to_mask()
        )
    };
    out.push(Finding::new(
        Code::NotIsolated,
        ctx.disturbance(),
        &exposed,
        format!(
            "{} {} isolated from the scheduler's load balancing, but unbound workqueue workers may run there: /sys/devices/virtual/workqueue/cpumask ({}) includes {} (wq_unbound_cpumask, kernel/workqueue.c)",
            cpus_phrase(&exposed),
            verb(&exposed),
            wq,
            if exposed.len() == 1 { "it" } else { "them" }
        ),
        hint,
    ));
}

/// `not-nohz-full`: checked CPUs whose scheduler tick still runs; a
/// notice on a kernel built without NO_HZ_FULL, where no launch on this
/// host can change it (issue 31), in every mode alike (--check, --strict
/// and --allow judge the same findings). The hint never asks for what the
/// command line already has.
fn not_nohz_full(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    if sys.boot.nohz == Some(false) {
        return tick_turned_off(ctx, out);
    }
    deadline_keeps_the_tick(ctx, out);
    let ticking = ctx.cpus.difference(&sys.nohz_full);
    if ticking.is_empty() {
        return;
    }
    let not_built = sys.nohz_full_source == IsolationSource::NotBuilt;
    let severity = if not_built {
        ctx.possible_disturbance()
    } else {
        ctx.disturbance()
    };
    let then = if not_built {
        boot_hint(sys, &ticking, &[Param::NohzFull], |line| {
            format!("boot a kernel built with CONFIG_NO_HZ_FULL=y, with {line}")
        })
    } else if sys
        .boot
        .nohz_full
        .as_ref()
        .is_some_and(|b| ticking.is_subset(b))
    {
        // Never ask for what the command line already has.
        format!(
            "nohz_full= already lists {} but the kernel did not apply it (it keeps a housekeeping CPU, and needs CONFIG_NO_HZ_FULL): run on other CPUs, or leave the boot CPU out of nohz_full=",
            cpus_phrase(&ticking)
        )
    } else {
        boot_hint(sys, &ticking, &[Param::NohzFull], |line| {
            format!("boot with {line} (CONFIG_NO_HZ_FULL)")
        })
    };
    out.push(Finding::new(
        Code::NotNohzFull,
        severity,
        &ticking,
        format!(
            "{} {} not nohz_full: the scheduler tick interrupts {} up to HZ times a second even with one task running{}",
            cpus_phrase(&ticking),
            verb(&ticking),
            if ticking.len() == 1 { "it" } else { "them" },
            from_cmdline(sys.nohz_full_source)
        ),
        alternatives_first(ctx, &sys.nohz_full, "nohz_full", false, then),
    ));
}

/// `not-nohz-full` for nohz_full CPUs the command runs on under
/// SCHED_DEADLINE: `sched_can_stop_tick()` (kernel/sched/core.c) answers
/// false while a deadline task is queued on the CPU ("Deadline tasks,
/// even if single, need the tick"), so `TICK_DEP_BIT_SCHED` stays set and
/// `can_stop_full_tick()` (kernel/time/tick-sched.c) keeps the tick; one
/// SCHED_FIFO task, one SCHED_RR task or one fair task lets it stop.
/// An input of the tick's decision that the request gives (issue 35
/// class 4).
fn deadline_keeps_the_tick(ctx: &Context, out: &mut Vec<Finding>) {
    if !ctx
        .plan
        .sched
        .policy
        .is_some_and(crate::policy::Policy::is_deadline)
    {
        return;
    }
    let listed = ctx.cpus.intersection(&ctx.sys.nohz_full);
    if listed.is_empty() {
        return;
    }
    out.push(Finding::new(
        Code::NotNohzFull,
        ctx.disturbance(),
        &listed,
        format!(
            "{} {} nohz_full, but a SCHED_DEADLINE task keeps the scheduler tick running: sched_can_stop_tick() (kernel/sched/core.c) never lets it stop while a deadline task is queued on the CPU",
            cpus_phrase(&listed),
            verb(&listed)
        ),
        "the tick of a nohz_full CPU stops under one SCHED_FIFO task (or one SCHED_RR or SCHED_OTHER task): use --fifo where the tick must stop, or accept it with --allow not-nohz-full",
    ));
}

/// `not-nohz-full` under `nohz=off` on the command line: every checked
/// CPU ticks, nohz_full ones included. `setup_tick_nohz()`
/// (kernel/time/tick-sched.c) clears `tick_nohz_enabled`, so
/// `tick_nohz_activate()` never sets `TS_FLAG_NOHZ` and
/// `tick_nohz_full_update_tick()` never stops the tick, while
/// `cpu/nohz_full` still lists the CPUs (issue 35: a value that turns the
/// feature off).
fn tick_turned_off(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let listed = ctx.cpus.intersection(&sys.nohz_full);
    let also = if listed.is_empty() {
        String::new()
    } else {
        format!(
            " ({} {} nohz_full, but the kernel never stops a tick under nohz=off: setup_tick_nohz() and tick_nohz_activate(), kernel/time/tick-sched.c)",
            cpus_phrase(&listed),
            if listed.len() == 1 { "is" } else { "are" }
        )
    };
    out.push(Finding::new(
        Code::NotNohzFull,
        ctx.disturbance(),
        &ctx.cpus,
        format!(
            "nohz=off on the kernel command line: the scheduler tick interrupts {} up to HZ times a second even with one task running{also}",
            cpus_phrase(&ctx.cpus)
        ),
        "remove nohz=off from the kernel command line (the tick of a nohz_full CPU stops only with it on, the default)",
    ));
}

/// `not-rcu-nocbs`: checked CPUs whose RCU callbacks are not offloaded.
/// rcu_init_nohz() (kernel/rcu/tree_nocb.h) ORs the nohz_full CPUs into
/// rcu_nocb_mask; `boot.rcu_nocbs` is what rcu_nocb_setup() set. A CPU
/// without an rcuo kthread is not offloaded (when they are seen).
fn not_rcu_nocbs(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let asked = sys.boot.rcu_nocbs_asked(&sys.nohz_full);
    let nocb = match &sys.nocb_kthreads {
        Some(k) => asked.intersection(k),
        None => asked.clone(),
    };
    let callbacks = ctx.cpus.difference(&nocb);
    if callbacks.is_empty() {
        return;
    }
    let why = match (&sys.boot.rcu_nocbs, &sys.boot.rcu_nocbs_bad) {
        (Some(set), None) if set.is_empty() => {
            " (a bare rcu_nocbs on the command line offloads no CPU: rcu_nocb_setup() in kernel/rcu/tree_nocb.h reads a list only after `=`; since 5.17 the bare word only allows offloading at run time)"
        }
        _ => "",
    };
    out.push(Finding::new(
        Code::NotRcuNocbs,
        ctx.possible_disturbance(),
        &callbacks,
        format!(
            "{} {} not in rcu_nocbs={why}: RCU callbacks run on {} in softirq context",
            cpus_phrase(&callbacks),
            verb(&callbacks),
            if callbacks.len() == 1 { "it" } else { "them" }
        ),
        if callbacks.is_subset(&asked) {
            // Asked for, and the kthreads show the kernel did not.
            "rcu_nocbs=/nohz_full= already list them but the kernel runs no rcuo kthread for them: boot a kernel built with CONFIG_RCU_NOCB_CPU=y".to_string()
        } else {
            boot_hint(sys, &callbacks, &[Param::RcuNocbs], |line| {
                format!("boot with {line} (nohz_full= implies it)")
            })
        },
    ));
}

/// `isolation-not-applied` ([`not_applied`]) for `isolcpus=` (with the
/// domain flag) against `cpu/isolated`, then `nohz_full=` against
/// `cpu/nohz_full`, each when the kernel's file was read.
fn not_applied_at_boot(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    if sys.isolation_source == IsolationSource::Sysfs
        && let Some(iso) = sys
            .boot
            .isolcpus
            .as_ref()
            .filter(|i| i.domain && !i.rejected())
        && let Some(asked) = &iso.cpus
    {
        not_applied(
            ctx,
            out,
            &format!("isolcpus={}", iso.raw),
            asked,
            &sys.isolated,
            "cpu/isolated",
        );
    }
    if sys.nohz_full_source == IsolationSource::Sysfs
        && let Some(asked) = &sys.boot.nohz_full
    {
        not_applied(
            ctx,
            out,
            &format!("nohz_full={asked}"),
            asked,
            &sys.nohz_full,
            "cpu/nohz_full",
        );
    }
}

/// `isolated-no-balancing`: several checked CPUs, all domain-isolated,
/// between which the scheduler moves no thread.
fn no_balancing(ctx: &Context, out: &mut Vec<Finding>) {
    let cpus = &ctx.cpus;
    if cpus.len() > 1 && cpus.is_subset(&ctx.sys.isolated) {
        out.push(Finding::new(
            Code::IsolatedNoBalancing,
            Severity::Warning,
            cpus,
            format!(
                "all of {} are domain-isolated: the scheduler does not move threads between them, so every thread stays on the CPU it starts on",
                cpus_phrase(cpus)
            ),
            "pin each thread to its own CPU (pthread_setaffinity_np, or one pinrun per CPU), or choose a single CPU",
        ));
    }
}

/// `sibling-not-isolated`: SMT siblings of isolated checked CPUs that are
/// not isolated themselves.
fn sibling_not_isolated(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let mut shared = CpuSet::new();
    for c in ctx.cpus.intersection(&sys.isolated).iter() {
        shared = shared.union(&ctx.sys.core_of(c).difference(&sys.isolated));
    }
    if !shared.is_empty() {
        out.push(Finding::new(
            Code::SiblingNotIsolated,
            Severity::Warning,
            &shared,
            format!(
                "{} {} of isolated chosen CPUs but not isolated: other tasks run on the same physical cores",
                cpus_phrase(&shared),
                if shared.len() == 1 { "is an SMT sibling" } else { "are SMT siblings" }
            ),
            "isolate every thread of each core (add the siblings to isolcpus=/the isolated partition), or disable SMT",
        ));
    }
}

/// `partition-invalid`: the caller's cgroup v2 cpuset partition reads
/// invalid (`cpuset.cpus.partition`,
/// `Documentation/admin-guide/cgroup-v2.rst`) and gives no isolation.
fn partition_invalid(ctx: &Context, out: &mut Vec<Finding>) {
    if let crate::system::AllowedSource::Cgroup(cs) = &ctx.sys.allowed_source
        && let Some(p) = &cs.partition
        && p.contains("invalid")
    {
        out.push(Finding::new(
            Code::PartitionInvalid,
            Severity::Warning,
            &cs.cpus,
            format!("the cgroup {} partition reads \"{p}\": it gives no isolation", cs.cgroup),
            "fix what the reason says (CPUs must be exclusive to the partition and its parent must be a valid partition root)",
        ));
    }
}

/// `isolation-mixed` and `isolated-without-intent` (issue 31): what the
/// choosing rules (`crate::plan::quiet`) avoid, said when it happens
/// anyway (`--cpus` named it, or nothing else fit).
fn mixed(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let Some(cpus) = &ctx.plan.cpus else {
        return;
    };
    let iso = cpus.intersection(&sys.isolated);
    let hk = cpus.difference(&sys.isolated);
    if !iso.is_empty() && !hk.is_empty() {
        out.push(Finding::new(
            Code::IsolationMixed,
            Severity::Warning,
            cpus,
            format!(
                "the chosen CPUs mix isolated {} and housekeeping {}: the scheduler balances no task onto isolated CPUs, so each thread stays on the kind of CPU it starts on",
                cpus_phrase(&iso),
                cpus_phrase(&hk)
            ),
            format!(
                "choose one kind: --cpus {} (isolated; --isolated chooses among them) or --cpus {} (housekeeping)",
                iso.to_list(),
                hk.to_list()
            ),
        ));
    }
    let quiet = cpus.intersection(&sys.isolated.union(&sys.nohz_full));
    if let Some(c) = &ctx.plan.choice
        && c.intent.is_empty()
        && c.rule != crate::plan::quiet::Rule::Named
        && !quiet.is_empty()
    {
        out.push(Finding::new(
            Code::IsolatedWithoutIntent,
            Severity::Notice,
            &quiet,
            format!(
                "{} {} isolated or nohz_full and chosen without latency intent: no other CPUs fit the request",
                cpus_phrase(&quiet),
                verb(&quiet)
            ),
            match (ctx.req.placement.cores, quiet.is_subset(&sys.isolated)) {
                (Some(_), true) => "ask for fewer cores to stay on housekeeping CPUs, or state the intent (a real-time policy, --isolated, --exclusive)",
                (Some(_), false) => "ask for fewer cores to stay on housekeeping CPUs, or state the intent (a real-time policy, --exclusive)",
                (None, _) => "widen the candidates to reach housekeeping CPUs (--node, the cgroup cpuset), or state the intent (a real-time policy, --exclusive)",
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{find, findings, machine};
    use crate::cpuset::CpuSet;
    use crate::finding::{Code, Severity};
    use crate::testkit::{cpus, deadline};

    #[test]
    fn cpus_that_are_not_isolated_are_named() {
        let sys = machine().isolated("4-7").build();
        let f = findings(&sys, &["--check", "--cpus", "2-5"]);
        // The scheduler could balance tasks there: a notice; the tick
        // interrupts them now: a warning.
        assert_eq!(
            find(&f, Code::NotIsolated),
            Some((Severity::Notice, cpus("2-3")))
        );
        assert_eq!(
            find(&f, Code::NotNohzFull),
            Some((Severity::Warning, cpus("2-3")))
        );
    }

    /// Issue 35 class 3: `nohz=off` (setup_tick_nohz()'s kstrtobool)
    /// keeps the tick of the nohz_full CPUs running: tick_nohz_activate()
    /// never sets TS_FLAG_NOHZ, which tick_nohz_full_update_tick() needs
    /// (kernel/time/tick-sched.c), though cpu/nohz_full lists them.
    #[test]
    fn nohz_off_keeps_the_tick_of_nohz_full_cpus() {
        let mut sys = machine().isolated("4-7").build();
        let args = ["--check", "--cpus", "4-5"];
        assert_eq!(find(&findings(&sys, &args), Code::NotNohzFull), None);
        sys.boot = crate::boot_params::parse("nohz_full=4-7 nohz=off", Some(15));
        assert_eq!(
            find(&findings(&sys, &args), Code::NotNohzFull),
            Some((Severity::Warning, cpus("4-5")))
        );
        // The last value kstrtobool() accepts stands.
        sys.boot = crate::boot_params::parse("nohz=off nohz_full=4-7 nohz=1", Some(15));
        assert_eq!(find(&findings(&sys, &args), Code::NotNohzFull), None);
    }

    /// Issue 35 class 4: unbound workqueue workers run anywhere in
    /// `wq_unbound_cpumask` (kernel/workqueue.c), isolated CPUs included
    /// when the mask has them (isolcpus=domain before Linux 6.6, or a
    /// mask written so): `not-isolated` for those of the checked CPUs;
    /// none when the mask leaves them out, or was not read.
    #[test]
    fn workqueues_may_run_on_isolated_cpus() {
        let mut sys = machine().isolated("4-7").build();
        let args = ["--check", "--cpus", "4-5"];
        assert_eq!(find(&findings(&sys, &args), Code::NotIsolated), None);
        sys.workqueue_cpus = Some(cpus("0-3,8-15"));
        assert_eq!(find(&findings(&sys, &args), Code::NotIsolated), None);
        sys.workqueue_cpus = Some(cpus("0-4,8-15"));
        assert_eq!(
            find(&findings(&sys, &args), Code::NotIsolated),
            Some((Severity::Warning, cpus("4")))
        );
    }

    /// Issue 35 class 4: a SCHED_DEADLINE task keeps the tick of a
    /// nohz_full CPU (`sched_can_stop_tick()`, kernel/sched/core.c:
    /// "Deadline tasks, even if single, need the tick"); one SCHED_FIFO
    /// task lets it stop. So a deadline launch on nohz_full CPUs is
    /// `not-nohz-full` for them, a FIFO one is not.
    #[test]
    fn deadline_keeps_the_tick_of_nohz_full_cpus() {
        let mut sys = machine().build();
        sys.nohz_full = cpus("4-7");
        let ticking = |args: &[&str]| -> Vec<CpuSet> {
            findings(&sys, args)
                .into_iter()
                .filter(|(c, _, _)| *c == Code::NotNohzFull)
                .map(|(_, _, set)| set)
                .collect()
        };
        let all = "0-15";
        assert_eq!(
            ticking(&["--check", "--cpus", all, "--fifo", "10"]),
            vec![cpus("0-3,8-15")]
        );
        assert_eq!(
            ticking(&deadline(&["--check", "--cpus", all])),
            vec![cpus("4-7"), cpus("0-3,8-15")]
        );
    }

    /// Issue 35 class 3: an unknown isolcpus= flag of letters only is
    /// skipped since 5.7 (housekeeping_isolcpus_setup(): "Skipped unknown
    /// flag"), so the rest applies: a notice; cpu/isolated listing none of
    /// its CPUs says this kernel rejected it; a flag with another
    /// character ("Invalid flag") always rejects it.
    #[test]
    fn unknown_isolcpus_flags_as_the_kernel_reads_them() {
        let args = ["--check", "--cpus", "4-5"];
        let flag = |cmdline: &str, isolated: Option<&str>| {
            let m = machine();
            let mut sys = match isolated {
                Some(list) => m.isolated(list),
                None => m,
            }
            .build();
            sys.boot = crate::boot_params::parse(cmdline, Some(15));
            find(&findings(&sys, &args), Code::IsolcpusUnknownFlag).map(|(s, _)| s)
        };
        assert_eq!(
            flag("isolcpus=bogus,4-7", Some("4-7")),
            Some(Severity::Notice)
        );
        assert_eq!(flag("isolcpus=bogus,4-7", None), Some(Severity::Warning));
        assert_eq!(
            flag("isolcpus=no_hz,4-7", Some("4-7")),
            Some(Severity::Warning)
        );
        assert_eq!(flag("isolcpus=domain,4-7", Some("4-7")), None);
    }

    #[test]
    fn disturbances_are_info_unless_latency_critical() {
        let sys = machine().build();
        let plain = findings(&sys, &["--dry-run", "--cpus", "1"]);
        assert_eq!(
            find(&plain, Code::NotIsolated),
            Some((Severity::Info, cpus("1")))
        );
        let rt = findings(&sys, &["--dry-run", "--cpus", "1", "--fifo", "10"]);
        assert_eq!(
            find(&rt, Code::NotIsolated),
            Some((Severity::Notice, cpus("1")))
        );
        assert_eq!(
            find(&rt, Code::NotNohzFull),
            Some((Severity::Warning, cpus("1")))
        );
        assert_eq!(
            find(&plain, Code::NotNohzFull),
            Some((Severity::Info, cpus("1")))
        );
    }

    #[test]
    fn an_isolated_cpu_whose_sibling_is_not_is_found() {
        // CPU 4's sibling is 12, which is not isolated.
        let sys = machine().isolated("4").build();
        let f = findings(&sys, &["--check", "--cpus", "4"]);
        assert_eq!(find(&f, Code::NotIsolated), None);
        assert_eq!(
            find(&f, Code::SiblingNotIsolated).map(|(s, _)| s),
            Some(Severity::Warning)
        );
    }
}
