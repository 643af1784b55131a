//! Interrupt findings (`Documentation/core-api/irq/irq-affinity.rst`).
//! A device IRQ concerns a chosen CPU when its effective affinity (fallback
//! `smp_affinity_list`, `smp_affinity`), intersected with the online CPUs,
//! includes it. Per-CPU interrupts (LOC, RES, CAL, TLB, …) are never
//! reported; kernel-managed IRQs are reported apart, as they cannot be moved.
//! The IRQs' names and counts come from `/proc/interrupts` or, on kernels
//! with `/sys/kernel/irq`, from its `actions` and `per_cpu_count`, read
//! after planning for the IRQs on the checked CPUs only
//! (`crate::system::irq::Irqs::read_details`); the findings are the same.

use super::{Code, Context, Finding};
use crate::words::cpus_phrase;

/// The codes the irq check can emit.
pub(super) const CODES: &[Code] = &[
    Code::IrqOnCpu,
    Code::ManagedIrqOnCpu,
    Code::DefaultIrqAffinity,
];

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    // Where IRQs should go: online CPUs that are neither checked nor
    // isolated/nohz_full (else just not checked).
    let quiet = ctx
        .housekeeping()
        .difference(&sys.isolated.union(&sys.nohz_full));
    let hk = if quiet.is_empty() {
        ctx.housekeeping()
    } else {
        quiet
    };
    let hk_list = if hk.is_empty() {
        "<housekeeping CPUs>".to_string()
    } else {
        hk.to_list()
    };
    for irq in sys.irqs.list.iter().filter(|i| !i.is_per_cpu()) {
        let Some(number) = irq.number else {
            continue;
        };
        // Without /proc/irq/N (some dumps, restricted procfs) the counts in
        // /proc/interrupts still show where the IRQ has been delivered
        // (per_cpu_count's, the same numbers, on the sysfs path: the
        // message names /proc/interrupts either way, so both read alike).
        let counted: crate::cpuset::CpuSet = irq
            .counts
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(c, _)| *c)
            .collect();
        let (aff, source) = match &irq.affinity {
            Some(a) => (a, irq.affinity_source),
            None => (
                &counted,
                "CPUs with interrupt counts; no readable affinity in /proc/irq/N",
            ),
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
        // per_cpu_count cut at one page (sysfs path, ~2000+ CPUs): the
        // counts of CPUs past the cut are unknown.
        let count = match irq
            .counts_end
            .filter(|&end| hit.last().is_some_and(|l| l >= end))
        {
            None => format!("{count} interrupts there so far"),
            Some(end) if sys.possible.first() == Some(end) => {
                "its count there is unknown: per_cpu_count is empty or unreadable".to_string()
            }
            Some(end) => {
                let known: crate::cpuset::CpuSet = hit.iter().filter(|&c| c < end).collect();
                if known.is_empty() {
                    format!("its count there is unknown: per_cpu_count ends before CPU {end}")
                } else {
                    format!(
                        "{count} interrupts so far on {}, unknown past it: per_cpu_count ends before CPU {end}",
                        cpus_phrase(&known)
                    )
                }
            }
        };
        let managed = irq.managed == Some(true);
        let iso = sys
            .boot
            .isolcpus
            .as_ref()
            .filter(|i| i.unknown_flags.is_empty());
        let steered = iso
            .filter(|i| i.managed_irq)
            .and_then(|i| i.cpus.as_ref())
            .is_some_and(|c| hit.is_subset(c));
        let queue = irq.managed.is_none() && looks_like_queue_irq(irq.name());
        let mut f = Finding::new(
            if managed {
                Code::ManagedIrqOnCpu
            } else {
                Code::IrqOnCpu
            },
            ctx.disturbance(),
            &hit,
            format!(
                "{}IRQ {number} ({}) is delivered to {} ({} = {}; {count}){}",
                if managed { "kernel-managed " } else { "" },
                irq.name(),
                cpus_phrase(&hit),
                source,
                aff,
                if queue {
                    "; it may be kernel-managed (a per-queue MSI-X vector; without debugfs pinrun cannot tell)"
                } else {
                    ""
                },
            ),
            match (managed, steered) {
                (true, true) => format!(
                    "isolcpus=managed_irq already lists {}: the kernel keeps a managed IRQ on an isolated CPU only when its mask has no online housekeeping CPU (best effort); spread the device's queues over fewer CPUs, or keep {} for housekeeping",
                    cpus_phrase(&hit),
                    aff
                ),
                (true, false) => format!(
                    "managed IRQs cannot be moved through /proc (the write fails: EIO); boot with isolcpus=managed_irq,{} so the kernel steers them to housekeeping CPUs",
                    ctx.cpus
                ),
                (false, _) => format!(
                    "move it: echo {hk_list} > /proc/irq/{number}/smp_affinity_list (and keep irqbalance off these CPUs: IRQBALANCE_BANNED_CPULIST={}){}",
                    ctx.cpus,
                    match irq.managed {
                        Some(false) => String::new(),
                        _ => format!(
                            "; if the write fails with EIO (EPERM on some kernels), the IRQ is kernel-managed: {}",
                            if steered {
                                "isolcpus=managed_irq already covers these CPUs, and the kernel keeps it here only when its mask has no housekeeping CPU".to_string()
                            } else {
                                format!("boot with isolcpus=managed_irq,{} instead", ctx.cpus)
                            }
                        ),
                    }
                ),
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
    // irq_affinity_setup() (kernel/irq/irqdesc.c) ORs the boot CPU (taken
    // as the lowest online one) into irqaffinity='s mask.
    let with_boot = sys.boot.irqaffinity.as_ref().map(|d| {
        let mut d = d.clone();
        if let Some(b) = sys.online.first() {
            d.insert(b);
        }
        d
    });
    let boot = with_boot.as_ref().map(|d| {
        (
            d,
            "irqaffinity= (with the boot CPU, as irq_affinity_setup() sets it)",
        )
    });
    if let Some((set, source)) = default.or(boot) {
        let hit = set.intersection(&sys.online).intersection(&ctx.cpus);
        if !hit.is_empty() {
            out.push(Finding::new(
                Code::DefaultIrqAffinity,
                ctx.disturbance(),
                &hit,
                format!("{source} ({}) includes {}: IRQs set up from now on can land there", set.intersection(&sys.online), cpus_phrase(&hit)),
                if hk.is_empty() {
                    "every online CPU is checked: leave at least one housekeeping CPU for IRQs (irqaffinity=)".to_string()
                } else {
                    format!("write the housekeeping CPUs' mask to /proc/irq/default_smp_affinity ({}), or boot with irqaffinity={hk_list}", hk.to_mask())
                },
            ));
        }
    }
}

/// Whether an IRQ's device name is a per-queue MSI-X vector of a driver
/// that allocates them kernel-managed (`pci_alloc_irq_vectors_affinity()`):
/// NVMe (`nvme0q1`), virtio (`virtio0-req.0`, `virtio1-request.3`), and the
/// SCSI HBAs `megasas`, `mpt3sas`, `hisi_sas`. A hint only: debugfs'
/// `IRQD_AFFINITY_MANAGED` decides when readable.
fn looks_like_queue_irq(name: &str) -> bool {
    let digits_after = |rest: &str| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = name.strip_prefix("nvme")
        && let Some((ctrl, q)) = rest.split_once('q')
    {
        // Queue 0 is the admin queue, a pre-vector outside the spread.
        return digits_after(ctrl) && digits_after(q) && q != "0";
    }
    if let Some(rest) = name.strip_prefix("virtio")
        && let Some((_, queue)) = rest.split_once('-')
    {
        return queue.starts_with("req");
    }
    ["megasas", "mpt3sas", "hisi_sas"]
        .iter()
        .any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::looks_like_queue_irq;

    #[test]
    fn queue_irq_names() {
        for n in [
            "nvme0q1",
            "nvme12q63",
            "virtio0-req.0",
            "virtio3-request.1",
            "megasas0-msix5",
        ] {
            assert!(looks_like_queue_irq(n), "{n}");
        }
        for n in [
            "nvme0q",
            "nvme0",
            "virtio0-config",
            "virtio1-input.0",
            "eth0-TxRx-0",
            "i8042",
            "acpi",
        ] {
            assert!(!looks_like_queue_irq(n), "{n}");
        }
    }
}
