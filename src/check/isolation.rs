//! Isolation findings (`Documentation/admin-guide/kernel-per-CPU-kthreads.rst`,
//! `kernel-parameters.txt` `isolcpus=`/`nohz_full=`/`rcu_nocbs=`, cgroup v2
//! cpuset partitions). Kernel sysfs is authoritative; the command line is a
//! cross-check, and the source when a dump lacks the sysfs files.

use super::{Code, Context, Finding, Severity};
use crate::cpuset::CpuSet;
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

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let cpus = &ctx.cpus;
    let boot_iso = sys.boot.isolcpus.as_ref();
    let list = cpus.to_list();
    let from_cmdline = |src: IsolationSource| match src {
        IsolationSource::Sysfs => "",
        IsolationSource::Cmdline => " (per the kernel command line; the sysfs file is absent)",
        IsolationSource::NotBuilt => {
            " (this kernel has no nohz_full support: /sys/devices/system/cpu/nohz_full is absent beside cpu/isolated, CONFIG_NO_HZ_FULL is off)"
        }
    };

    if let Some(iso) = boot_iso
        && !iso.unknown_flags.is_empty()
    {
        out.push(Finding::new(
            Code::IsolcpusUnknownFlag,
            Severity::Warning,
            &CpuSet::new(),
            format!(
                "isolcpus={} has unknown flag(s) {}: the kernel rejects the parameter (\"isolcpus: Error, unknown flag\") and isolates nothing",
                iso.raw,
                iso.unknown_flags.join(", ")
            ),
            "use only the flags nohz, domain and managed_irq",
        ));
    }

    let not_iso = cpus.difference(&sys.isolated);
    if !not_iso.is_empty() {
        // What the command line does for these CPUs when it lists them
        // without the domain flag (kernel/sched/isolation.c: explicit flags
        // replace the default "domain").
        let listed = boot_iso
            .filter(|i| !i.domain && i.unknown_flags.is_empty())
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
        out.push(Finding::new(
            Code::NotIsolated,
            ctx.possible_disturbance(),
            &not_iso,
            message,
            format!(
                "isolate at boot with isolcpus=domain,managed_irq,{list} nohz_full={list} rcu_nocbs={list}, or at run time with a cgroup v2 isolated partition (cpuset.cpus.partition=isolated)"
            ),
        ));
    }

    let ticking = cpus.difference(&sys.nohz_full);
    if !ticking.is_empty() {
        out.push(Finding::new(
            Code::NotNohzFull,
            ctx.disturbance(),
            &ticking,
            format!(
                "{} {} not nohz_full: the scheduler tick interrupts {} up to HZ times a second even with one task running{}",
                cpus_phrase(&ticking),
                verb(&ticking),
                if ticking.len() == 1 { "it" } else { "them" },
                from_cmdline(sys.nohz_full_source)
            ),
            if sys.nohz_full_source == IsolationSource::NotBuilt {
                format!("boot a kernel built with CONFIG_NO_HZ_FULL=y, with nohz_full={list}")
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
                format!("boot with nohz_full={list} (CONFIG_NO_HZ_FULL)")
            },
        ));
    }

    // rcu_init_nohz() (kernel/rcu/tree_nocb.h) ORs the nohz_full CPUs into
    // rcu_nocb_mask; `boot.rcu_nocbs` is what rcu_nocb_setup() set.
    // A CPU without an rcuo kthread is not offloaded (when they are seen).
    let asked = sys
        .boot
        .rcu_nocbs
        .clone()
        .unwrap_or_default()
        .union(&sys.nohz_full);
    let nocb = match &sys.nocb_kthreads {
        Some(k) => asked.intersection(k),
        None => asked.clone(),
    };
    let callbacks = cpus.difference(&nocb);
    if !callbacks.is_empty() {
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
                format!("boot with rcu_nocbs={list} (nohz_full= implies it)")
            },
        ));
    }

    if sys.isolation_source == IsolationSource::Sysfs
        && let Some(iso) = boot_iso.filter(|i| i.domain && i.unknown_flags.is_empty())
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

    if cpus.len() > 1 && cpus.is_subset(&sys.isolated) {
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

    let mut shared = CpuSet::new();
    for c in cpus.intersection(&sys.isolated).iter() {
        shared = shared.union(&ctx.sys.core_of(c).difference(&sys.isolated));
    }
    if !shared.is_empty() {
        out.push(Finding::new(
            Code::SiblingNotIsolated,
            Severity::Warning,
            &shared,
            format!(
                "{} {} SMT sibling(s) of isolated chosen CPUs but not isolated: other tasks run on the same physical cores",
                cpus_phrase(&shared),
                verb(&shared)
            ),
            "isolate every thread of each core (add the siblings to isolcpus=/the isolated partition), or disable SMT",
        ));
    }

    if let crate::system::AllowedSource::Cgroup(cs) = &sys.allowed_source
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
