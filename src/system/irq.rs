//! Interrupts from `/proc/interrupts` and `/proc/irq/N/`
//! (`Documentation/core-api/irq/irq-affinity.rst`, `proc(5)`).
//!
//! A device IRQ's CPUs are its effective affinity (`effective_affinity_list`,
//! where the interrupt is actually delivered), falling back to
//! `smp_affinity_list` and then the `smp_affinity` mask. Rows of
//! `/proc/interrupts` whose id is not a number (LOC, RES, CAL, TLB, NMI, …)
//! are per-CPU interrupts, kept apart.

use super::root::Root;
use crate::cpuset::CpuSet;

/// One row of `/proc/interrupts`, with the affinity from `/proc/irq/N/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Irq {
    /// The row's id: an IRQ number, or a per-CPU name such as `LOC`.
    pub id: String,
    /// The IRQ number, for device IRQs.
    pub number: Option<u32>,
    /// The text after the counts: chip, hardware IRQ, trigger, device name.
    pub description: String,
    /// Interrupt counts per CPU column, as (CPU id, count).
    pub counts: Vec<(u32, u64)>,
    /// The CPUs the IRQ is delivered to, when known.
    pub affinity: Option<CpuSet>,
    /// Which file `affinity` came from.
    pub affinity_source: &'static str,
    /// Kernel-managed (from debugfs `IRQD_AFFINITY_MANAGED`), when known.
    pub managed: Option<bool>,
}

impl Irq {
    /// Whether this is a per-CPU interrupt row (non-numeric id).
    pub fn is_per_cpu(&self) -> bool {
        self.number.is_none()
    }

    /// The device name: the last word of the description.
    pub fn name(&self) -> &str {
        self.description.split_whitespace().last().unwrap_or("")
    }

    /// Total count across CPUs.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, c)| c).sum()
    }
}

/// Every interrupt and the default affinity of new IRQs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Irqs {
    /// Rows of `/proc/interrupts` in file order.
    pub list: Vec<Irq>,
    /// `/proc/irq/default_smp_affinity`.
    pub default_affinity: Option<CpuSet>,
}

fn affinity(root: &Root, n: u32) -> Option<(CpuSet, &'static str)> {
    let dir = format!("/proc/irq/{n}");
    [
        ("effective_affinity_list", true),
        ("smp_affinity_list", true),
        ("effective_affinity", false),
        ("smp_affinity", false),
    ]
    .into_iter()
    .find_map(|(file, is_list)| {
        let path = format!("{dir}/{file}");
        let set = if is_list {
            root.read_list(&path)
        } else {
            root.read_mask(&path)
        }?;
        Some((set, file))
    })
}

fn managed(root: &Root, n: u32) -> Option<bool> {
    root.read(&format!("/sys/kernel/debug/irq/irqs/{n}"))
        .map(|t| t.contains("IRQD_AFFINITY_MANAGED"))
}

/// One parsed row of `/proc/interrupts`: (id, counts per CPU, description).
pub type InterruptRow = (String, Vec<(u32, u64)>, String);

/// Parses `/proc/interrupts` text: the header names the CPU columns.
pub fn parse_interrupts(text: &str) -> Vec<InterruptRow> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cpus: Vec<u32> = header
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect();
    lines
        .filter_map(|line| {
            let (id, rest) = line.split_once(':')?;
            let mut words = rest.split_whitespace().peekable();
            let mut counts = Vec::new();
            for &cpu in &cpus {
                match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                    Some(c) => {
                        counts.push((cpu, c));
                        words.next();
                    }
                    None => break,
                }
            }
            Some((
                id.trim().to_string(),
                counts,
                words.collect::<Vec<_>>().join(" "),
            ))
        })
        .collect()
}

/// Reads every interrupt. Per-IRQ affinity files are read for device IRQs
/// only.
pub fn read_irqs(root: &Root) -> Irqs {
    let text = root.read("/proc/interrupts").unwrap_or_default();
    let list = parse_interrupts(&text)
        .into_iter()
        .map(|(id, counts, description)| {
            let number = id.parse::<u32>().ok();
            let (aff, source) = match number.and_then(|n| affinity(root, n)) {
                Some((s, f)) => (Some(s), f),
                None => (None, ""),
            };
            Irq {
                managed: number.and_then(|n| managed(root, n)),
                id,
                number,
                description,
                counts,
                affinity: aff,
                affinity_source: source,
            }
        })
        .collect();
    Irqs {
        list,
        default_affinity: root.read_mask("/proc/irq/default_smp_affinity"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_with_short_and_per_cpu_lines() {
        let text = "           CPU0       CPU1\n  0:         57          0   IO-APIC   2-edge      timer\n 24:          3          9  DMAR-MSI   5-edge      dmar5\nNMI:          1          2   Non-maskable interrupts\nERR:          0\n";
        let rows = parse_interrupts(text);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[1].0, "24");
        assert_eq!(rows[1].1, vec![(0, 3), (1, 9)]);
        assert_eq!(rows[1].2, "DMAR-MSI 5-edge dmar5");
        assert_eq!(rows[3].1, vec![(0, 0)]);
    }
}
