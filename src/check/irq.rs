//! Interrupt findings (`Documentation/core-api/irq/irq-affinity.rst`).
//! A device IRQ concerns a chosen CPU when its effective affinity (fallback
//! `smp_affinity_list`, `smp_affinity`), intersected with the online CPUs,
//! includes it. Per-CPU interrupts (LOC, RES, CAL, TLB, …) are never
//! reported; kernel-managed IRQs are reported apart, as they cannot be moved.

use super::{Context, Finding};
use crate::plan::cpus_phrase;

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let hk = ctx.housekeeping();
    let hk_list = if hk.is_empty() {
        "<housekeeping CPUs>".to_string()
    } else {
        hk.to_list()
    };
    for irq in sys.irqs.list.iter().filter(|i| !i.is_per_cpu()) {
        let (Some(number), Some(aff)) = (irq.number, &irq.affinity) else {
            continue;
        };
        let hit = aff.intersection(&sys.online).intersection(&ctx.cpus);
        if hit.is_empty() {
            continue;
        }
        let count: u64 = irq
            .counts
            .iter()
            .filter(|(c, _)| hit.contains(*c))
            .map(|(_, n)| n)
            .sum();
        let managed = irq.managed == Some(true);
        let mut f = Finding::new(
            if managed {
                "managed-irq-on-cpu"
            } else {
                "irq-on-cpu"
            },
            ctx.disturbance(),
            &hit,
            format!(
                "{}IRQ {number} ({}) is delivered to {} ({} = {}; {count} interrupts there so far)",
                if managed { "kernel-managed " } else { "" },
                irq.name(),
                cpus_phrase(&hit),
                irq.affinity_source,
                aff
            ),
            if managed {
                format!(
                    "managed IRQs cannot be moved through /proc; boot with isolcpus=managed_irq,{} so the kernel steers them to housekeeping CPUs",
                    ctx.cpus
                )
            } else {
                format!(
                    "move it: echo {hk_list} > /proc/irq/{number}/smp_affinity_list (and keep irqbalance off these CPUs: IRQBALANCE_BANNED_CPULIST={})",
                    ctx.cpus
                )
            },
        );
        f.irqs = vec![number];
        out.push(f);
    }
    let default = sys
        .irqs
        .default_affinity
        .as_ref()
        .map(|d| (d, "/proc/irq/default_smp_affinity"));
    let boot = sys.boot.irqaffinity.as_ref().map(|d| (d, "irqaffinity="));
    if let Some((set, source)) = default.or(boot) {
        let hit = set.intersection(&sys.online).intersection(&ctx.cpus);
        if !hit.is_empty() {
            out.push(Finding::new(
                "default-irq-affinity",
                ctx.disturbance(),
                &hit,
                format!("{source} ({}) includes {}: IRQs set up from now on can land there", set.intersection(&sys.online), cpus_phrase(&hit)),
                format!("write the housekeeping CPUs' mask to /proc/irq/default_smp_affinity ({}), or boot with irqaffinity={hk_list}", hk.to_mask()),
            ));
        }
    }
}
