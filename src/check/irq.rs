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
use crate::cpuset::CpuSet;
use crate::finding::IrqDetail;
use crate::system::SystemState;
use crate::system::irq::Irq;
use crate::words::{cpus_phrase, first_of};

/// How many IRQs a message names before "and N more".
const NAMED: usize = 3;

/// The codes the irq check can emit.
pub(super) const CODES: &[Code] = &[
    Code::IrqOnCpu,
    Code::ManagedIrqOnCpu,
    Code::DefaultIrqAffinity,
];

/// The interrupt findings on the checked CPUs (see the module doc): one
/// per kind of device IRQ delivered there ([`Found`], [`Kind`]), and the
/// default affinity of new IRQs ([`default_affinity`]).
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
    let found = Found::of(ctx);
    for (code, irqs) in [
        (Code::IrqOnCpu, found.movable),
        (Code::ManagedIrqOnCpu, found.managed),
    ] {
        if irqs.is_empty() {
            continue;
        }
        let kind = Kind {
            ctx,
            code,
            hk: &hk,
            undetermined: found.undetermined,
            queues: &found.queues,
        };
        out.push(kind.finding(irqs));
    }
    default_affinity(ctx, &hk, out);
}

/// The device IRQs delivered to the checked CPUs, by kind ([`Found::of`]).
struct Found {
    /// The movable ones.
    movable: Vec<IrqDetail>,
    /// The kernel-managed ones.
    managed: Vec<IrqDetail>,
    /// Whether debugfs did not tell the kind of a movable one.
    undetermined: bool,
    /// The movable ones of unknown kind that look like per-queue MSI-X
    /// vectors (often kernel-managed: [`looks_like_queue_irq`]).
    queues: Vec<u32>,
}

impl Found {
    /// Every device IRQ whose affinity (its delivery counts without one)
    /// reaches an online checked CPU, with what it concerns there
    /// ([`detail`]); one finding per kind (movable, kernel-managed) lists
    /// them.
    fn of(ctx: &Context) -> Self {
        let sys = ctx.sys;
        let mut found = Found {
            movable: Vec::new(),
            managed: Vec::new(),
            undetermined: false,
            queues: Vec::new(),
        };
        // The online checked CPUs, once: an IRQ that misses them is skipped by
        // one `intersects`, without making its `hit` set (issue 17).
        let reach = sys.online.intersection(&ctx.cpus);
        for irq in sys.irqs.list.iter().filter(|i| !i.is_per_cpu()) {
            let Some(detail) = detail(sys, irq, &reach) else {
                continue;
            };
            if irq.managed == Some(true) {
                found.managed.push(detail);
            } else {
                // Without debugfs (managed unknown) a write may fail: EIO/EPERM.
                if irq.managed.is_none() {
                    found.undetermined = true;
                    if looks_like_queue_irq(irq.name()) {
                        found.queues.push(detail.irq);
                    }
                }
                found.movable.push(detail);
            }
        }
        found
    }
}

/// What device IRQ `irq` concerns on the online checked CPUs `reach`:
/// `None` when it has no number or reaches none of them. Without
/// /proc/irq/N (some dumps, restricted procfs) the counts in
/// /proc/interrupts still show where the IRQ has been delivered
/// (per_cpu_count's, the same numbers, on the sysfs path: the message
/// names /proc/interrupts either way, so both read alike).
fn detail(sys: &SystemState, irq: &Irq, reach: &CpuSet) -> Option<IrqDetail> {
    let number = irq.number?;
    // (made only for an IRQ without an affinity: issue 17)
    let delivered = irq.delivered();
    let aff: &CpuSet = &delivered;
    let source = if irq.affinity.is_some() {
        irq.affinity_source
    } else {
        "CPUs with interrupt counts; no readable affinity in /proc/irq/N"
    };
    if !aff.intersects(reach) {
        return None;
    }
    let hit = aff.intersection(reach);
    let (count, count_note) = count_on(sys, irq, &hit);
    Some(IrqDetail {
        irq: number,
        name: irq.name().to_string(),
        cpus: hit.to_vec(),
        affinity: aff.to_list(),
        source: source.to_string(),
        count,
        count_note,
        // Asked elsewhere already (its smp_affinity misses the checked
        // CPUs), delivered here until it fires: the move is pending.
        move_pending: irq.requested.as_ref().is_some_and(|r| !r.intersects(reach)),
    })
}

/// How many times `irq` fired on the CPUs `hit`, and a note when that
/// count is partial or unknown: per_cpu_count cut at one page (sysfs
/// path, ~2000+ CPUs), empty or damaged, or a count past 2^64.
fn count_on(sys: &SystemState, irq: &Irq, hit: &CpuSet) -> (Option<u64>, Option<String>) {
    let sum: u64 = irq
        .counts
        .iter()
        .filter(|(c, _)| hit.contains(*c))
        .map(|(_, n)| *n)
        .fold(0, u64::saturating_add);
    // per_cpu_count cut at one page (sysfs path, ~2000+ CPUs): the
    // counts of CPUs past the cut are unknown.
    match irq
        .counts_end
        .filter(|&end| hit.last().is_some_and(|l| l >= end))
    {
        // A sum at the saturation point holds a field past 2^64 (the
        // kernel's per-CPU counts are `unsigned int`): damaged, not a
        // count to show.
        _ if sum == u64::MAX => (
            None,
            Some(format!(
                "{} holds a count past 2^64 (damaged)",
                match sys.irqs.source {
                    crate::system::irq::IrqSource::Sysfs => "per_cpu_count",
                    crate::system::irq::IrqSource::Interrupts => "/proc/interrupts",
                }
            )),
        ),
        None => (Some(sum), None),
        Some(end) if sys.possible.first() == Some(end) => (
            None,
            Some("per_cpu_count is empty, unreadable or damaged".to_string()),
        ),
        Some(end) => {
            let known: crate::cpuset::CpuSet = hit.iter().filter(|&c| c < end).collect();
            if known.is_empty() || sum == 0 {
                (None, Some(format!("per_cpu_count ends before CPU {end}")))
            } else {
                (
                    Some(sum),
                    Some(format!(
                        "counted on {} only: per_cpu_count ends before CPU {end}",
                        cpus_phrase(&known)
                    )),
                )
            }
        }
    }
}

/// One kind of IRQ finding ([`Kind::finding`]) and what its hint needs.
struct Kind<'a> {
    /// The check's context.
    ctx: &'a Context<'a>,
    /// `irq-on-cpu` (movable) or `managed-irq-on-cpu`.
    code: Code,
    /// Where IRQs should go.
    hk: &'a CpuSet,
    /// Whether debugfs did not tell the kind of a movable IRQ.
    undetermined: bool,
    /// The movable IRQs that look like per-queue vectors.
    queues: &'a [u32],
}

impl Kind<'_> {
    /// The finding listing `irqs` (most active first; an unknown count
    /// first of all, as it may be any): a disturbance when one fired, else
    /// a possible one, with [`Kind::hint`].
    fn finding(&self, mut irqs: Vec<IrqDetail>) -> Finding {
        let ctx = self.ctx;
        irqs.sort_by_key(|d| (std::cmp::Reverse(d.count.unwrap_or(u64::MAX)), d.irq));
        let cpus: CpuSet = irqs.iter().flat_map(|d| d.cpus.iter().copied()).collect();
        let numbers: Vec<u32> = {
            let mut v: Vec<u32> = irqs.iter().map(|d| d.irq).collect();
            v.sort_unstable();
            v
        };
        let hint = self.hint(&irqs, &cpus);
        let fired = irqs.iter().any(|d| d.count != Some(0));
        let mut f = Finding::new(
            self.code,
            if fired {
                ctx.disturbance()
            } else {
                ctx.possible_disturbance()
            },
            &cpus,
            irqs_message(self.code == Code::ManagedIrqOnCpu, &irqs, &cpus)
                + &maybe_managed(self.code, self.queues)
                + &pending(&irqs),
            hint,
        );
        f.irqs = numbers;
        f.irq_details = irqs;
        f
    }

    /// The hint for `irqs` on `cpus`: for managed IRQs, the boot parameter
    /// that steers them (`isolcpus=managed_irq`,
    /// `Documentation/admin-guide/kernel-parameters.txt`) or why it does
    /// not; for movable ones, that no housekeeping CPU is left, that the
    /// moves are pending, or the commands that move them ([`Kind::move_hint`]).
    fn hint(&self, irqs: &[IrqDetail], cpus: &CpuSet) -> String {
        let (ctx, sys) = (self.ctx, self.ctx.sys);
        if self.code == Code::ManagedIrqOnCpu {
            if self.steered(cpus) {
                format!(
                    "isolcpus=managed_irq already lists {}: the kernel keeps a managed IRQ on an isolated CPU only when its mask has no online housekeeping CPU (best effort); spread the device's queues over fewer CPUs, or keep these CPUs for housekeeping",
                    cpus_phrase(cpus)
                )
            } else {
                format!(
                    "managed IRQs cannot be moved through /proc (the write fails: EIO, EPERM on some kernels); {}",
                    crate::plan::boot_hint::boot_hint(
                        sys,
                        &ctx.cpus,
                        &[crate::plan::boot_hint::Param::ManagedIrq],
                        |line| format!(
                            "boot with {line} so the kernel steers them to housekeeping CPUs"
                        ),
                    )
                )
            }
        } else if self.hk.is_empty() {
            format!(
                "every online CPU is checked: no housekeeping CPU left to move {} to; leave at least one CPU out of the checked ones for IRQs",
                if irqs.len() == 1 { "it" } else { "them" },
            )
        } else if irqs.iter().all(|d| d.move_pending) {
            format!(
                "nothing to write: {} already asked to leave {} (smp_affinity_list); the move takes effect at {} next interrupt",
                if irqs.len() == 1 { "it is" } else { "they are" },
                cpus_phrase(cpus),
                if irqs.len() == 1 { "its" } else { "each one's" },
            )
        } else {
            self.move_hint(irqs, cpus)
        }
    }

    /// Whether `isolcpus=managed_irq` (with valid flags) already covers
    /// `cpus`.
    fn steered(&self, cpus: &CpuSet) -> bool {
        self.ctx
            .sys
            .boot
            .isolcpus
            .as_ref()
            .filter(|i| !i.rejected() && i.managed_irq)
            .and_then(|i| i.cpus.as_ref())
            .is_some_and(|c| cpus.is_subset(c))
    }

    /// The commands that move the movable `irqs` not already pending to
    /// the housekeeping CPUs (and keep irqbalance off the checked ones);
    /// when their kind is undetermined, what a failing write means.
    fn move_hint(&self, irqs: &[IrqDetail], cpus: &CpuSet) -> String {
        let (ctx, sys) = (self.ctx, self.ctx.sys);
        let hk_list = self.hk.to_list();
        // Pending moves are not written again.
        let numbers: Vec<u32> = {
            let mut v: Vec<u32> = irqs
                .iter()
                .filter(|d| !d.move_pending)
                .map(|d| d.irq)
                .collect();
            v.sort_unstable();
            v
        };
        let list: Vec<String> = numbers.iter().map(u32::to_string).collect();
        let move_cmd = if numbers.len() == 1 {
            format!("echo {hk_list} > /proc/irq/{}/smp_affinity_list", list[0])
        } else {
            format!(
                "for i in {}; do echo {hk_list} > /proc/irq/$i/smp_affinity_list; done",
                list.join(" ")
            )
        };
        format!(
            "move {}: {move_cmd} (and keep irqbalance off these CPUs: IRQBALANCE_BANNED_CPULIST={}){}",
            if numbers.len() == 1 { "it" } else { "them" },
            ctx.cpus,
            if self.undetermined {
                format!(
                    "; a write that fails with EIO (EPERM on some kernels) means that IRQ is kernel-managed; {}",
                    if self.steered(cpus) {
                        "isolcpus=managed_irq already covers these CPUs, and the kernel keeps it here only when its mask has no housekeeping CPU".to_string()
                    } else {
                        crate::plan::boot_hint::boot_hint(
                            sys,
                            &ctx.cpus,
                            &[crate::plan::boot_hint::Param::ManagedIrq],
                            |line| format!("boot with {line} instead"),
                        )
                    }
                )
            } else {
                String::new()
            }
        )
    }
}

/// The `default-irq-affinity` finding: `/proc/irq/default_smp_affinity`
/// (else `irqaffinity=` with the boot CPU) includes a checked CPU, where
/// IRQs set up from now on can land. `hk`: where IRQs should go.
fn default_affinity(ctx: &Context, hk: &CpuSet, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let hk_list = hk.to_list();
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
                ctx.possible_disturbance(),
                &hit,
                format!("{source} ({}) includes {}: IRQs set up from now on can land there", set.intersection(&sys.online), cpus_phrase(&hit)),
                if hk.is_empty() {
                    "every online CPU is checked: leave at least one housekeeping CPU for IRQs (irqaffinity=)".to_string()
                } else if sys.online.first().is_some_and(|b| hit.contains(b)) {
                    // irq_affinity_setup() adds the boot CPU to any
                    // irqaffinity= list: no boot parameter keeps it out.
                    format!("write the housekeeping CPUs' mask to /proc/irq/default_smp_affinity ({}) after every boot (irqaffinity= cannot leave out CPU {}, the boot CPU: irq_affinity_setup() adds it to any list)", hk.to_mask(), sys.online.first().unwrap_or(0))
                } else {
                    format!("write the housekeeping CPUs' mask to /proc/irq/default_smp_affinity ({}), or boot with irqaffinity={hk_list}", hk.to_mask())
                },
            ));
        }
    }
}

/// The note on IRQs whose move away is pending ([`IrqDetail::move_pending`]).
fn pending(irqs: &[IrqDetail]) -> String {
    let mut list: Vec<u32> = irqs
        .iter()
        .filter(|d| d.move_pending)
        .map(|d| d.irq)
        .collect();
    if list.is_empty() {
        return String::new();
    }
    list.sort_unstable();
    let list: Vec<String> = list.iter().map(u32::to_string).collect();
    format!(
        "; move pending for {} {} (smp_affinity_list excludes these CPUs, the effective affinity not yet: delivered here until {} next interrupt)",
        crate::words::noun(list.len(), "IRQ"),
        list.join(", "),
        if list.len() == 1 { "its" } else { "each one's" },
    )
}

/// The note on movable IRQs that look like per-queue vectors: they may be
/// kernel-managed (without debugfs pinrun cannot tell).
fn maybe_managed(code: Code, queues: &[u32]) -> String {
    if code != Code::IrqOnCpu || queues.is_empty() {
        return String::new();
    }
    let list: Vec<String> = queues.iter().map(u32::to_string).collect();
    format!(
        "; {} {} may be kernel-managed (per-queue MSI-X vectors; without debugfs pinrun cannot tell)",
        crate::words::noun(queues.len(), "IRQ"),
        list.join(", ")
    )
}

/// One line about the IRQs `irqs` (most active first) delivered to `cpus`:
/// the most active named with their counts, the rest counted, and how many
/// never fired there.
fn irqs_message(managed: bool, irqs: &[IrqDetail], cpus: &CpuSet) -> String {
    let kind = if managed { "kernel-managed " } else { "" };
    let one = |d: &IrqDetail| {
        let count = match (d.count, &d.count_note) {
            (Some(n), None) => format!("{n}"),
            (Some(n), Some(note)) => format!("{n}, {note}"),
            (None, Some(note)) => format!("count unknown: {note}"),
            (None, None) => "count unknown".to_string(),
        };
        format!("{} {} ({count})", d.irq, d.name)
    };
    let fired: Vec<&IrqDetail> = irqs.iter().filter(|d| d.count != Some(0)).collect();
    let idle = irqs.len() - fired.len();
    let sources: Vec<&str> = {
        let mut v: Vec<&str> = irqs.iter().map(|d| d.source.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let by = match sources.as_slice() {
        [one] => format!(" (per {one})"),
        _ => String::new(),
    };
    let where_ = cpus_phrase(cpus);
    if fired.is_empty() {
        return format!(
            "{} {kind}IRQ{} routed to {where_}{by} but never fired there so far: {}",
            irqs.len(),
            if irqs.len() == 1 { " is" } else { "s are" },
            first_of(irqs.iter().map(|d| format!("{} {}", d.irq, d.name)), NAMED)
        );
    }
    let total: u64 = fired
        .iter()
        .filter_map(|d| d.count)
        .fold(0, u64::saturating_add);
    let unknown = fired.iter().any(|d| d.count.is_none());
    format!(
        "{} {kind}{} {} on {where_}{by}, {total}{} interrupts so far: {}{}",
        fired.len(),
        crate::words::noun(fired.len(), "IRQ"),
        if unknown { "may have fired" } else { "fired" },
        if unknown { "+?" } else { "" },
        first_of(fired.iter().map(|d| one(d)), NAMED),
        if idle > 0 {
            format!("; {idle} more routed there never fired")
        } else {
            String::new()
        }
    )
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
