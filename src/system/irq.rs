//! Interrupts from `/proc/interrupts` and `/proc/irq/N/`
//! (`Documentation/core-api/irq/irq-affinity.rst`, `proc(5)`).
//!
//! A device IRQ's CPUs are its effective affinity (`effective_affinity_list`,
//! where the interrupt is actually delivered), falling back to
//! `smp_affinity_list` and then the `smp_affinity` mask. Rows of
//! `/proc/interrupts` whose id is not a number (LOC, RES, CAL, TLB, NMI, …)
//! are per-CPU interrupts, kept apart.

use super::root::{Dir, Root};
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
    /// Interrupt counts per CPU column, as (CPU id, count); columns that
    /// read 0 are left out.
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

/// The affinity of IRQ `n`; `irq_dir` is `/proc/irq`, opened once.
fn affinity(irq_dir: &Dir, n: u32) -> Option<(CpuSet, &'static str)> {
    [
        ("effective_affinity_list", true),
        ("smp_affinity_list", true),
        ("effective_affinity", false),
        ("smp_affinity", false),
    ]
    .into_iter()
    .find_map(|(file, is_list)| {
        let path = format!("{n}/{file}");
        let set = if is_list {
            irq_dir.read_list(&path)
        } else {
            irq_dir.read_mask(&path)
        }?;
        Some((set, file))
    })
}

/// Whether IRQ `n` is kernel-managed; `debug_dir` is debugfs'
/// `irq/irqs`, opened once (absent without debugfs or root).
fn managed(debug_dir: Option<&Dir>, n: u32) -> Option<bool> {
    debug_dir?
        .read(&n.to_string())
        .map(|t| t.contains("IRQD_AFFINITY_MANAGED"))
}

/// One parsed row of `/proc/interrupts`: (id, counts per CPU, description).
pub type InterruptRow = (String, Vec<(u32, u64)>, String);

/// The CPU columns named by the header line of `/proc/interrupts`.
fn parse_header(header: &str) -> Vec<u32> {
    header
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect()
}

/// One row of `/proc/interrupts` below the header; `None` without `:`.
/// Counts of zero are left out (the checks sum the counts of the CPUs an
/// IRQ hits; a 4096-CPU row is mostly zeros).
fn parse_row(cpus: &[u32], line: &str) -> Option<InterruptRow> {
    let (id, rest) = line.split_once(':')?;
    if !rest.is_ascii() {
        return Some(parse_row_slow(cpus, id, rest));
    }
    // ASCII: the same words as `split_whitespace` (whose ASCII whitespace
    // is U+0009..U+000D and the space), scanned as bytes.
    let ws = |b: u8| b == b' ' || (b'\t'..=b'\r').contains(&b);
    let bytes = rest.as_bytes();
    let mut pos = 0;
    let mut counts = Vec::new();
    for &cpu in cpus {
        // Columns are right-aligned in wide fields: skip runs of spaces
        // eight bytes at a time (the file can be hundreds of MB).
        while bytes.get(pos..pos + 8) == Some(b"        ") {
            pos += 8;
        }
        while pos < bytes.len() && ws(bytes[pos]) {
            pos += 1;
        }
        // The usual column: a lone 0.
        if bytes.get(pos) == Some(&b'0') && bytes.get(pos + 1).is_none_or(|&b| ws(b)) {
            pos += 1;
            continue;
        }
        let start = pos;
        while pos < bytes.len() && !ws(bytes[pos]) {
            pos += 1;
        }
        let word = &bytes[start..pos];
        let value = if !word.is_empty() && word.len() <= 19 && word.iter().all(u8::is_ascii_digit) {
            word.iter().fold(0u64, |v, d| v * 10 + u64::from(d - b'0'))
        } else {
            // Empty (end of line), too long for the fast path, `+N`, or
            // not a number: whatever `str::parse` says.
            match rest[start..pos].parse::<u64>() {
                Ok(v) => v,
                Err(_) => {
                    pos = start;
                    break;
                }
            }
        };
        if value != 0 {
            counts.push((cpu, value));
        }
    }
    Some((
        id.trim().to_string(),
        counts,
        rest[pos..].split_whitespace().collect::<Vec<_>>().join(" "),
    ))
}

/// [`parse_row`] for rows with non-ASCII bytes (Unicode whitespace).
fn parse_row_slow(cpus: &[u32], id: &str, rest: &str) -> InterruptRow {
    let mut words = rest.split_whitespace().peekable();
    let mut counts = Vec::new();
    for &cpu in cpus {
        match words.peek().and_then(|w| w.parse::<u64>().ok()) {
            Some(c) => {
                if c != 0 {
                    counts.push((cpu, c));
                }
                words.next();
            }
            None => break,
        }
    }
    (
        id.trim().to_string(),
        counts,
        words.collect::<Vec<_>>().join(" "),
    )
}

/// Parses `/proc/interrupts` text: the header names the CPU columns.
pub fn parse_interrupts(text: &str) -> Vec<InterruptRow> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cpus = parse_header(header);
    lines.filter_map(|line| parse_row(&cpus, line)).collect()
}

/// Calls `row` for each row of `/proc/interrupts`, read line by line: the
/// file grows with CPUs × IRQs (about 450 MB for 4096 CPUs and 10 000
/// IRQs), so it is neither held whole in memory nor cut at
/// [`super::root::MAX_FILE`]. Bytes that are not UTF-8 are replaced.
fn for_each_row(root: &Root, mut row: impl FnMut(InterruptRow)) {
    use std::io::BufRead;
    let Some(file) = root.open_regular("/proc/interrupts") else {
        return;
    };
    let mut reader = std::io::BufReader::with_capacity(64 << 10, file);
    let mut buf = Vec::new();
    let mut next_line = |buf: &mut Vec<u8>| -> bool {
        buf.clear();
        match reader.read_until(b'\n', buf) {
            Ok(0) | Err(_) => false,
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                }
                true
            }
        }
    };
    if !next_line(&mut buf) {
        return;
    }
    let cpus = parse_header(&String::from_utf8_lossy(&buf));
    while next_line(&mut buf) {
        if let Some(r) = parse_row(&cpus, &String::from_utf8_lossy(&buf)) {
            row(r);
        }
    }
}

/// Reads every interrupt. Per-IRQ affinity files are read for device IRQs
/// only, relative to `/proc/irq` (and debugfs' `irq/irqs`), each opened
/// once.
pub fn read_irqs(root: &Root) -> Irqs {
    // Each directory is listed once, so that an IRQ without an entry there
    // (dumps that kept few of /proc/irq's directories) costs no failing
    // opens; the files of the listed ones are opened relative to it.
    let listed = |abs: &str| {
        let ids: std::collections::BTreeSet<u32> =
            root.numbered_entries(abs, "").into_iter().collect();
        Some(ids).filter(|i| !i.is_empty()).zip(root.dir(abs))
    };
    let irq_dir = listed("/proc/irq");
    let debug_dir = listed("/sys/kernel/debug/irq/irqs");
    fn known(dir: &Option<(std::collections::BTreeSet<u32>, Dir)>, n: u32) -> Option<&Dir> {
        dir.as_ref()
            .filter(|(ids, _)| ids.contains(&n))
            .map(|(_, d)| d)
    }
    let mut list = Vec::new();
    for_each_row(root, |(id, counts, description)| {
        let number = id.parse::<u32>().ok();
        let (aff, source) = match number.and_then(|n| affinity(known(&irq_dir, n)?, n)) {
            Some((s, f)) => (Some(s), f),
            None => (None, ""),
        };
        list.push(Irq {
            managed: number.and_then(|n| managed(known(&debug_dir, n), n)),
            id,
            number,
            description,
            counts,
            affinity: aff,
            affinity_source: source,
        });
    });
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
        assert_eq!(rows[3].1, vec![]);
        // Zero columns are left out; words that are not numbers end the
        // counts as `str::parse` decides (`+7` is 7), also past non-ASCII.
        let text = "  CPU0 CPU1 CPU2\n 5: 0 +7 3x dev\x0bname\n 6:\u{a0}4 0 0 é\n";
        let rows = parse_interrupts(text);
        assert_eq!(rows[0].1, vec![(1, 7)]);
        assert_eq!(rows[0].2, "3x dev name");
        assert_eq!(rows[1].1, vec![(0, 4)]);
        assert_eq!(rows[1].2, "é");
    }

    /// The streaming reader gives the rows `parse_interrupts` gives, CRLF
    /// and non-UTF-8 bytes included, and reads past `MAX_FILE`.
    #[test]
    fn streams_rows_past_max_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("           CPU0       CPU1\r\n");
        text.push_str(" 24:          3          9  DMAR-MSI   5-edge      dmar5\n");
        let row = " 30:          1          2  PCI-MSI   1-edge      eth0\n";
        let n = (crate::system::root::MAX_FILE as usize) / row.len() + 10;
        for _ in 0..n {
            text.push_str(row);
        }
        text.push_str("NMI:          1          2   Non-maskable interrupts");
        let mut bytes = text.clone().into_bytes();
        bytes.extend_from_slice(b"\n 99: 1 2 bad\xffname\n");
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/interrupts"), &bytes).unwrap();
        let root = Root::new(dir.path());
        let mut rows = Vec::new();
        for_each_row(&root, |r| rows.push(r));
        let expected = parse_interrupts(&String::from_utf8_lossy(&bytes));
        assert_eq!(rows.len(), n + 3);
        assert_eq!(rows, expected);
        assert_eq!(rows.last().unwrap().2, "bad\u{fffd}name");
        assert_eq!(read_irqs(&root).list.len(), n + 3);
    }
}
