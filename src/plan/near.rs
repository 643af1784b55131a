//! `--near DEVICE`: the NUMA node of a device and the CPUs its IRQs are
//! steered to ([`crate::system::devices`] reads them), turned into the
//! node the placement chooses in and what it does with those CPUs
//! (`--near-irqs`).

use super::placement::require_nodes;
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::request::NearIrqs;
use crate::system::SystemState;
use crate::words::or_none;

/// What `--near` resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Near {
    /// The device's node; `None` when unknown on a machine with one node
    /// (every CPU is as near).
    pub node: Option<u32>,
    /// The CPUs the device's MSI IRQs are steered to (effective affinity).
    pub irq_cpus: CpuSet,
    /// What was found, for the plan.
    pub reasons: Vec<String>,
}

/// Resolves `--near SPEC` on `sys` (whose `near` holds the read device).
/// Refused when the device was not found, or its node is unknown
/// (`numa_node` `-1`, or no `numa_node`) on a machine with several nodes.
pub fn resolve(sys: &SystemState, spec: &str) -> Result<Near> {
    let dev = match &sys.near {
        Some(Ok(d)) => d,
        Some(Err(why)) => {
            return Err(Error::new(ErrorCode::DeviceNotFound, format!("--near: {why}")).hint(
                "name a network interface (ip link), a PCI address (lspci -D), a block device (lsblk) or a file",
            ));
        }
        None => {
            return Err(Error::new(
                ErrorCode::DeviceNotFound,
                format!("--near {spec}: the device was not read"),
            ));
        }
    };
    let what = format!("--near {}: {} {}", dev.name, dev.kind.name(), dev.sysfs);
    let mut reasons = Vec::new();
    let node = match (dev.numa_node, &dev.numa_dir) {
        (Some(n), Some(dir)) if n >= 0 => {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            require_nodes(sys, "--near", &std::iter::once(n).collect())?;
            reasons.push(format!("{what}: NUMA node {n} ({dir}/numa_node)"));
            Some(n)
        }
        (value, dir) => {
            let why = match (value, dir) {
                (Some(v), Some(dir)) => {
                    format!(
                        "{dir}/numa_node is {v}: the kernel does not know the device's node, the firmware gives it no proximity"
                    )
                }
                _ if dev.sysfs.starts_with("/sys/devices/virtual/") => {
                    "a virtual device, on no bus and no node".to_string()
                }
                _ => "no numa_node file above it: its bus has no NUMA node".to_string(),
            };
            let with_cpus = sys.nodes.values().filter(|n| !n.cpus.is_empty()).count();
            if with_cpus > 1 {
                return Err(Error::new(
                    ErrorCode::DeviceNodeUnknown,
                    format!("{what}: NUMA node unknown: {why}"),
                )
                .hint(format!(
                    "choose the node yourself with --node (nodes {}; pinrun --show lists the devices per node), or fix the firmware's proximity (_PXM) for the device",
                    sys.node_ids()
                )));
            }
            reasons.push(format!(
                "{what}: NUMA node unknown ({why}); this machine has one node with CPUs, so every CPU is as near"
            ));
            None
        }
    };
    let mut irq_cpus = CpuSet::new();
    let mut steered = 0;
    for irq in &dev.irqs {
        if let Some(a) = sys
            .irqs
            .list
            .iter()
            .find(|i| i.number == Some(*irq))
            .and_then(|i| i.affinity.as_ref())
        {
            irq_cpus.union_with(a);
            steered += 1;
        }
    }
    if !dev.irqs.is_empty() {
        let list: CpuSet = dev.irqs.iter().copied().collect();
        let n = dev.irqs.len();
        let are = if n == 1 { "is" } else { "are" };
        reasons.push(match steered {
            0 => format!(
                "its {} ({list}): where {} steered is not known here (no /sys/kernel/irq or /proc/irq affinity for {})",
                crate::words::count(n, "MSI IRQ"),
                if n == 1 { "it is" } else { "they are" },
                if n == 1 { "it" } else { "them" },
            ),
            k => format!(
                "its {} ({list}) {are} steered to {}{}",
                crate::words::count(n, "MSI IRQ"),
                if irq_cpus.is_empty() { "no CPU".to_string() } else { crate::words::cpus_phrase(&irq_cpus) },
                if k < n {
                    format!(" ({} without a known affinity)", n - k)
                } else {
                    String::new()
                }
            ),
        });
    }
    Ok(Near {
        node,
        irq_cpus,
        reasons,
    })
}

/// `candidate` without (`Avoid`) or only with (`Share`) the CPUs the
/// device's IRQs are steered to; refused when none would be left.
pub fn apply_irqs(
    near: &Near,
    how: NearIrqs,
    candidate: CpuSet,
    reasons: &mut Vec<String>,
) -> Result<CpuSet> {
    let (kept, verb) = match how {
        NearIrqs::Report => return Ok(candidate),
        NearIrqs::Avoid => (candidate.difference(&near.irq_cpus), "avoid"),
        NearIrqs::Share => (candidate.intersection(&near.irq_cpus), "share"),
    };
    if kept.is_empty() {
        return Err(Error::new(
            ErrorCode::NearIrqsLeaveNone,
            format!(
                "--near-irqs {verb}: no candidate CPU is left (candidates {candidate}, the device's IRQ CPUs {})",
                or_none(&near.irq_cpus)
            ),
        )
        .hint("drop --near-irqs, or widen the candidates (the cgroup cpuset, --within cgroup)"));
    }
    reasons.push(format!(
        "--near-irqs {verb}: candidates {kept} (the device's IRQ CPUs: {})",
        or_none(&near.irq_cpus)
    ));
    Ok(kept)
}
