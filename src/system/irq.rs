//! Interrupts: which IRQs exist, where each is delivered, and (for the ones
//! a check looks at) its name and per-CPU counts
//! (`Documentation/core-api/irq/irq-affinity.rst`, `proc(5)`,
//! `Documentation/ABI/testing/sysfs-kernel-irq`).
//!
//! A device IRQ's CPUs are its effective affinity (`effective_affinity_list`,
//! where the interrupt is actually delivered), falling back to
//! `smp_affinity_list` and then the `effective_affinity` and `smp_affinity`
//! masks, all in `/proc/irq/N/` (one file opened per IRQ, relative to
//! `/proc/irq`); an IRQ a check looks at also gets its requested affinity
//! ([`Irq::requested`]), to tell a pending move.
//!
//! Two sources for the rest ([`IrqSource`]):
//!
//! - **sysfs** (`/sys/kernel/irq`, Linux ≥ 4.10 with `CONFIG_SPARSE_IRQ`):
//!   its numbered directories are every allocated IRQ descriptor, the
//!   authoritative list of IRQ numbers (`/proc/irq/N` is only created once
//!   a handler is requested; an IRQ without it is placed by its counts).
//!   [`read_irqs`] lists the numbers and reads the affinities only;
//!   [`Irqs::read_details`] then reads `actions`, `per_cpu_count`,
//!   `chip_name`, `hwirq`, `type` and `name` (`kernel/irq/irqdesc.c`) and
//!   the debugfs `managed` flag of the IRQs a check looks at: the launch
//!   never reads `/proc/interrupts`, whose size grows with CPUs × IRQs
//!   (about 450 MB for 4096 CPUs and 10 000 IRQs). Detailed IRQs that
//!   `/proc/interrupts` would not list (no handler and no count on an online
//!   CPU, chained handlers without counts, the hidden `IPI` descriptors of
//!   arm/arm64/riscv) are dropped, so that the findings are those of the
//!   other source. `per_cpu_count` is cut at one page (about 2000 CPUs):
//!   counts beyond the cut are unknown ([`Irq::counts_end`]) rather than
//!   taken from `/proc/interrupts`, whose generation is what this path
//!   avoids; an IRQ without a handler whose counts are cut is dropped
//!   (nothing requested it: it disturbs no CPU).
//! - **`/proc/interrupts`** (older kernels, machine dumps): every row, read
//!   line by line. Rows whose id is not a number (LOC, RES, CAL, TLB,
//!   NMI, …) are per-CPU interrupts, kept apart; an IRQ without
//!   `/proc/irq/N` is placed by the CPUs with counts.

use super::root::{Dir, Root};
use crate::cpuset::CpuSet;
use crate::noise::{CounterRow, Counters};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One interrupt: a row of `/proc/interrupts` or an IRQ descriptor of
/// `/sys/kernel/irq`, with the affinity from `/proc/irq/N/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Irq {
    /// The row's id: an IRQ number, or a per-CPU name such as `LOC`.
    pub id: String,
    /// The IRQ number, for device IRQs.
    pub number: Option<u32>,
    /// The text after the counts: chip, hardware IRQ, trigger, device
    /// names (several joined by `, `), words separated by one space, e.g.
    /// `IO-APIC 6-edge ACPI:Ged`. From sysfs ([`Irqs::read_details`];
    /// empty until then) only the device names (`actions`, joined by `, `)
    /// when the IRQ has a handler, else rebuilt as `kernel/irq/proc.c`
    /// `show_interrupts` prints it; either way its last word, [`Irq::name`],
    /// is the one `/proc/interrupts` shows.
    pub description: String,
    /// Interrupt counts of the online CPUs (the columns of
    /// `/proc/interrupts`), as (CPU id, count) in CPU order; counts of 0
    /// are left out. Empty until [`Irqs::read_details`] on the sysfs source.
    pub counts: Vec<(u32, u64)>,
    /// The CPUs the IRQ is delivered to, when known.
    pub affinity: Option<CpuSet>,
    /// Which file `affinity` came from.
    pub affinity_source: &'static str,
    /// The requested affinity (`smp_affinity_list`, else `smp_affinity`),
    /// read when `affinity` is the effective one and the IRQ is detailed
    /// (sysfs: [`Irqs::read_details`]; `/proc/interrupts`: every IRQ).
    /// On x86 a write to `smp_affinity_list` takes effect at the IRQ's next
    /// interrupt (`irq_move_irq()`, `kernel/irq/migration.c`): until then
    /// the effective affinity keeps the old CPUs, and a requested affinity
    /// that excludes them means the move is pending. `None` when unread or
    /// unreadable (dumps may hold only one of the files). Shared between
    /// IRQs that request the same CPUs (see `requested` in this module).
    pub requested: Option<Arc<CpuSet>>,
    /// Kernel-managed (from debugfs `IRQD_AFFINITY_MANAGED`), when known.
    pub managed: Option<bool>,
    /// Whether `description`, `counts` and `managed` are read: always from
    /// `/proc/interrupts`; from sysfs once [`Irqs::read_details`] has
    /// looked at the IRQ.
    pub detailed: bool,
    /// From sysfs: `counts` cover only the CPUs below this one, because
    /// `per_cpu_count` is cut at one page (about 2000 CPUs); `None`: every
    /// CPU's count is known (always so from `/proc/interrupts`).
    pub counts_end: Option<u32>,
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

    /// The CPUs the IRQ is delivered to: its affinity, else (no readable
    /// `/proc/irq/N`) the CPUs with a count, which show where it has been
    /// delivered. Borrowed when the affinity is known (made only for an
    /// IRQ without one: issue 17).
    pub fn delivered(&self) -> std::borrow::Cow<'_, CpuSet> {
        match &self.affinity {
            Some(a) => std::borrow::Cow::Borrowed(a),
            None => std::borrow::Cow::Owned(
                self.counts
                    .iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(c, _)| *c)
                    .collect(),
            ),
        }
    }

    /// Total count across CPUs.
    pub fn total(&self) -> u64 {
        self.counts
            .iter()
            .map(|(_, c)| *c)
            .fold(0, u64::saturating_add)
    }
}

/// Where [`Irqs::list`] was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IrqSource {
    /// Every row of `/proc/interrupts` (no `/sys/kernel/irq`).
    #[default]
    Interrupts,
    /// The IRQ descriptors of `/sys/kernel/irq`, detailed on demand.
    Sysfs,
}

/// Every interrupt and the default affinity of new IRQs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Irqs {
    /// Rows of `/proc/interrupts` in file order (per-CPU rows included),
    /// or the IRQs of `/sys/kernel/irq` by number (device IRQs only).
    pub list: Vec<Irq>,
    /// `/proc/irq/default_smp_affinity`.
    pub default_affinity: Option<CpuSet>,
    /// Where `list` was read.
    pub source: IrqSource,
    /// Why `/proc/interrupts` was not read whole: it exceeded a budget
    /// ([`MAX_INTERRUPTS_LINE`], [`MAX_IRQ_ROWS`], [`MAX_IRQ_COUNTS`], or
    /// CPU columns beyond the possible CPUs). The reader refuses with it.
    pub error: Option<String>,
}

/// The longest row of `/proc/interrupts` read (1 MiB; a row of 8192 CPUs
/// with 20-digit counts is 172 KB).
pub const MAX_INTERRUPTS_LINE: usize = 1 << 20;
/// The most rows of `/proc/interrupts` read (262 144; large machines have
/// tens of thousands of IRQs).
pub const MAX_IRQ_ROWS: usize = 1 << 18;
/// The most non-zero counts kept from `/proc/interrupts` (4 194 304, 16
/// bytes each: 64 MiB). A real file has far fewer (most columns are 0:
/// an MSI counts on the CPUs it was delivered to, per-CPU rows such as
/// `LOC` on every CPU); a file of hundreds of MB of non-zero counts cannot
/// cost gigabytes.
pub const MAX_IRQ_COUNTS: usize = 1 << 22;

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
        let mut buf = [0u8; 40];
        let path = irq_file(&mut buf, n, file);
        let set = if is_list {
            irq_dir.read_list(path)
        } else {
            irq_dir.read_mask(path)
        }?;
        Some((set, file))
    })
}

/// `{n}/{file}` written into `buf` (no allocation: one path per IRQ on
/// 10 000-IRQ machines, issue 17); `file` is one of [`affinity`]'s names
/// (at most 23 bytes, with 10 digits of `n` and the `/`: 34).
fn irq_file<'b>(buf: &'b mut [u8; 40], n: u32, file: &str) -> &'b str {
    let mut digits = [0u8; 20];
    let number = crate::ffi::decimal(&mut digits, u64::from(n));
    let len = number.len() + 1 + file.len();
    buf[..number.len()].copy_from_slice(number);
    buf[number.len()] = b'/';
    buf[number.len() + 1..len].copy_from_slice(file.as_bytes());
    std::str::from_utf8(&buf[..len]).unwrap_or_default()
}

/// `/proc/irq/N/smp_affinity_list` (fallback the `smp_affinity` mask)
/// below `root`: the CPUs IRQ `n` is asked to go to, what a write
/// replaces (`Documentation/core-api/irq/irq-affinity.rst`). `None` when
/// neither file reads as a set.
pub fn read_requested(root: &Root, n: u32) -> Option<CpuSet> {
    root.read_list_or_mask(&format!("{PROC_IRQ}/{n}"), "smp_affinity")
}

/// `/proc/irq/N/effective_affinity_list` (fallback the
/// `effective_affinity` mask) below `root`: the CPUs IRQ `n` is delivered
/// to now (x86: one CPU; `irq_effective_aff_list_proc_show()`,
/// `kernel/irq/proc.c`). `None` when
/// neither file reads as a set.
pub fn read_effective(root: &Root, n: u32) -> Option<CpuSet> {
    root.read_list_or_mask(&format!("{PROC_IRQ}/{n}"), "effective_affinity")
}

/// `/proc/irq/default_smp_affinity` below `root` (a cpumask): the CPUs a
/// new IRQ may go to (`Documentation/core-api/irq/irq-affinity.rst`).
pub fn read_default(root: &Root) -> Option<CpuSet> {
    root.read_mask(DEFAULT_AFFINITY)
}

/// `/proc/irq/N/node` below `root`: the NUMA node of IRQ `n`'s device;
/// `None` when unreadable or `-1` (no node).
pub fn read_node(root: &Root, n: u32) -> Option<u32> {
    root.read_int(&format!("{PROC_IRQ}/{n}/node"))
        .and_then(|v| u32::try_from(v).ok())
}

/// `/proc/irq`: one directory per IRQ with a handler requested.
pub const PROC_IRQ: &str = "/proc/irq";
/// `/proc/irq/default_smp_affinity`, a cpumask.
pub const DEFAULT_AFFINITY: &str = "/proc/irq/default_smp_affinity";

/// The requested affinity of IRQ `n` ([`Irq::requested`]) when its
/// `affinity` came from `source`, an effective affinity file; `irq_dir` is
/// `/proc/irq`.
///
/// IRQs mostly request the same CPUs (every CPU, or a device's node): a
/// set equal to the one read last in `last` (one per read of the IRQs,
/// shared by its threads) is shared with it, not made again (issue 17: a
/// 4096-CPU set is 512 bytes, 5 MB for 10 000 IRQs). Equal means the same
/// file (list or mask) with the same text, which the same parser makes
/// into the same set.
fn requested(irq_dir: &Dir, n: u32, source: &str, last: &LastRequested) -> Option<Arc<CpuSet>> {
    if !source.starts_with("effective_") {
        return None;
    }
    let shared = |is_list: bool, text: &str| {
        let mut last = last.0.lock().ok();
        if let Some(Some((l, t, set))) = last.as_deref()
            && *l == is_list
            && t == text
        {
            return set.clone();
        }
        let set = if is_list {
            CpuSet::parse_sysfs_list(text, None)
        } else {
            CpuSet::parse_sysfs_mask(text)
        }
        .ok()
        .map(Arc::new);
        if let Some(last) = last.as_deref_mut() {
            *last = Some((is_list, text.to_string(), set.clone()));
        }
        set
    };
    irq_dir
        .read_with(&format!("{n}/smp_affinity_list"), |t| shared(true, t))
        .flatten()
        .or_else(|| {
            irq_dir
                .read_with(&format!("{n}/smp_affinity"), |t| shared(false, t))
                .flatten()
        })
}

/// The requested affinity read last ([`requested`]) in one read of the
/// IRQs, by any of its threads: whether it was a list, its text, and the
/// set (or `None`: malformed).
#[derive(Debug, Default)]
#[allow(clippy::type_complexity)]
struct LastRequested(std::sync::Mutex<Option<(bool, String, Option<Arc<CpuSet>>)>>);

/// Whether IRQ `n` is kernel-managed (`IRQD_AFFINITY_MANAGED` in its
/// debugfs file, `kernel/irq/debugfs.c`); `debug_dir` is
/// [`DEBUG_IRQS`], opened once (absent without debugfs or root). `None`
/// when the file cannot be read.
pub fn managed(debug_dir: Option<&Dir>, n: u32) -> Option<bool> {
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
    let mut counts = Vec::new();
    let desc = scan_counts(cpus, rest, |cpu, value| {
        if value != 0 {
            counts.push((cpu, value));
        }
    });
    Some((
        id.trim().to_string(),
        counts,
        desc.split_whitespace().collect::<Vec<_>>().join(" "),
    ))
}

/// The counts of one row of `/proc/interrupts` or `/proc/softirqs` (`rest`:
/// the text after the row's `LABEL:`), one per column of `cpus` while the
/// words are counts, each given to `count` with its CPU (zeros too);
/// returns the text after the last count (the description, untrimmed).
/// A row with fewer counts (`ERR`, `MIS`) stops at its first word that is
/// not one.
fn scan_counts<'a>(cpus: &[u32], rest: &'a str, mut count: impl FnMut(u32, u64)) -> &'a str {
    if !rest.is_ascii() {
        return scan_counts_slow(cpus, rest, count);
    }
    // ASCII: the same words as `split_whitespace` (whose ASCII whitespace
    // is U+0009..U+000D and the space), scanned as bytes.
    let ws = |b: u8| b == b' ' || (b'\t'..=b'\r').contains(&b);
    let bytes = rest.as_bytes();
    let mut pos = 0;
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
            count(cpu, 0);
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
            match super::parse_count(&rest[start..pos]) {
                Some(v) => v,
                None => {
                    pos = start;
                    break;
                }
            }
        };
        count(cpu, value);
    }
    &rest[pos..]
}

/// [`scan_counts`] for rows with non-ASCII bytes (Unicode whitespace).
fn scan_counts_slow<'a>(cpus: &[u32], rest: &'a str, mut count: impl FnMut(u32, u64)) -> &'a str {
    let mut rest = rest.trim_start();
    for &cpu in cpus {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        match super::parse_count(&rest[..end]) {
            Some(c) => {
                count(cpu, c);
                rest = rest[end..].trim_start();
            }
            None => break,
        }
    }
    rest
}

/// Parses `/proc/interrupts` or `/proc/softirqs` for the probe
/// (`show_interrupts()`, `show_softirqs()`; `proc(5)`): a header of `CPUn`
/// columns (online CPUs only), then one row per label: `LABEL:` and up to
/// one count per column, then (in `/proc/interrupts`) the chip, hardware
/// IRQ and action names. Rows with fewer counts (`ERR`, `MIS`) keep what
/// they have; lines that do not parse, or whose label is empty or holds a
/// space, are skipped. Each row's counts are every column's (zeros
/// included), its description trimmed.
pub fn parse_counters(text: &str) -> Counters {
    let mut lines = text.lines();
    let cpus = parse_header(lines.next().unwrap_or(""));
    let mut rows = BTreeMap::new();
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let label = label.trim();
        if label.is_empty() || label.contains(' ') {
            continue;
        }
        let mut counts = Vec::with_capacity(cpus.len());
        let desc = scan_counts(&cpus, rest, |_, n| counts.push(n));
        rows.insert(
            label.to_string(),
            CounterRow {
                counts,
                desc: desc.trim().to_string(),
            },
        );
    }
    Counters { cpus, rows }
}

/// [`parse_counters`] of `path` below `root` (`/proc/interrupts` or
/// `/proc/softirqs`), read whole under [`super::root::MAX_FILE`]; `None`
/// when it cannot be read.
pub fn read_counters(root: &Root, path: &str) -> Option<Counters> {
    root.read(path).map(|t| parse_counters(&t))
}

/// `/proc/interrupts`: per-CPU counts of every IRQ and per-CPU interrupt.
pub const INTERRUPTS: &str = "/proc/interrupts";
/// `/proc/softirqs`: per-CPU counts of each softirq.
pub const SOFTIRQS: &str = "/proc/softirqs";

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
fn for_each_row(
    root: &Root,
    max_columns: usize,
    mut row: impl FnMut(InterruptRow),
) -> Result<(), String> {
    use std::io::BufRead;
    let Some(file) = root.open_regular(INTERRUPTS) else {
        return Ok(());
    };
    let mut reader = std::io::BufReader::with_capacity(64 << 10, file);
    let mut buf = Vec::new();
    // One line into `buf`, at most MAX_INTERRUPTS_LINE bytes (a longer one
    // is an error, not a buffer the size of the file).
    let mut next_line = |buf: &mut Vec<u8>| -> Result<bool, String> {
        buf.clear();
        let limit = MAX_INTERRUPTS_LINE as u64 + 1;
        match std::io::Read::take(&mut reader, limit).read_until(b'\n', buf) {
            Ok(0) | Err(_) => Ok(false),
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                } else if buf.len() > MAX_INTERRUPTS_LINE {
                    return Err(format!(
                        "a line is longer than {} KiB",
                        MAX_INTERRUPTS_LINE >> 10
                    ));
                }
                Ok(true)
            }
        }
    };
    if !next_line(&mut buf)? {
        return Ok(());
    }
    let cpus = parse_header(&String::from_utf8_lossy(&buf));
    if cpus.len() > max_columns {
        return Err(format!(
            "the header names {} CPU columns, more than the {max_columns} possible CPUs",
            cpus.len()
        ));
    }
    let (mut rows, mut counts) = (0usize, 0usize);
    while next_line(&mut buf)? {
        if let Some(mut r) = parse_row(&cpus, &String::from_utf8_lossy(&buf)) {
            rows += 1;
            counts += r.1.len();
            if rows > MAX_IRQ_ROWS {
                return Err(format!("more than {MAX_IRQ_ROWS} rows"));
            }
            if counts > MAX_IRQ_COUNTS {
                return Err(format!("more than {MAX_IRQ_COUNTS} non-zero counts"));
            }
            r.1.shrink_to_fit();
            row(r);
        }
    }
    Ok(())
}

/// A directory listed once and opened once: the numbers of its numbered
/// entries (so that an IRQ without an entry there, as in dumps that kept
/// few of `/proc/irq`'s directories, costs no failing opens) and the
/// directory, for opens relative to it. `None` when empty or missing.
type Listed = Option<(BTreeSet<u32>, Dir)>;

fn listed(root: &Root, abs: &str) -> Listed {
    let ids: BTreeSet<u32> = root.numbered_entries(abs, "").into_iter().collect();
    Some(ids).filter(|i| !i.is_empty()).zip(root.dir(abs))
}

/// The directory of `dir` when it lists `n`.
fn known(dir: &Listed, n: u32) -> Option<&Dir> {
    dir.as_ref()
        .filter(|(ids, _)| ids.contains(&n))
        .map(|(_, d)| d)
}

/// IRQs found without their `/proc/irq/N` before [`ProcIrq`] lists the
/// directory.
const MISSES_BEFORE_LISTING: usize = 8;

/// `/proc/irq`, opened once and listed only when IRQs turn out to lack
/// their directory (issue 17). A machine, and a dump of one, has
/// `/proc/irq/N` for nearly every IRQ of `/sys/kernel/irq`: each IRQ's
/// files are opened directly, and a listing (10 000 entries cost about
/// 2 ms of ext4's `getdents64` plus their parsing) would only confirm
/// them. Dumps that kept few of the directories would pay four failing
/// opens per IRQ without one: after [`MISSES_BEFORE_LISTING`] IRQs
/// without any affinity file, the directory is listed once and IRQs it
/// does not list are not opened. Either way an IRQ gets the affinity its
/// files give (none without a directory): the listing only saves opens
/// that would fail.
struct ProcIrq<'r> {
    root: &'r Root,
    dir: Option<Dir>,
    misses: std::sync::atomic::AtomicUsize,
    ids: std::sync::OnceLock<BTreeSet<u32>>,
}

impl<'r> ProcIrq<'r> {
    const PATH: &'static str = PROC_IRQ;

    fn open(root: &'r Root) -> Self {
        Self {
            root,
            dir: root.dir(Self::PATH),
            misses: std::sync::atomic::AtomicUsize::new(0),
            ids: std::sync::OnceLock::new(),
        }
    }

    /// `/proc/irq`, unless its listing, once made, lacks `n`.
    fn known(&self, n: u32) -> Option<&Dir> {
        let dir = self.dir.as_ref()?;
        match self.ids.get() {
            Some(ids) if !ids.contains(&n) => None,
            _ => Some(dir),
        }
    }

    /// The affinity of IRQ `n` ([`affinity`]); an IRQ with none counts
    /// towards the listing.
    fn affinity(&self, n: u32) -> Option<(CpuSet, &'static str)> {
        let found = affinity(self.known(n)?, n);
        if found.is_none()
            && self
                .misses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1
                >= MISSES_BEFORE_LISTING
        {
            self.ids.get_or_init(|| {
                self.root
                    .numbered_entries(Self::PATH, "")
                    .into_iter()
                    .collect()
            });
        }
        found
    }
}

/// The sysfs IRQ directory, when it exists below the root.
const SYSFS_IRQ: &str = "/sys/kernel/irq";

/// Reads every interrupt: from `/sys/kernel/irq` when it lists IRQs and
/// the `possible` CPUs (the order of `per_cpu_count`) are known, else from
/// `/proc/interrupts` ([`IrqSource`]). Per-IRQ affinity files are read for
/// device IRQs only, relative to `/proc/irq`, each opened once. From sysfs
/// the IRQs are not detailed yet: `all_details` (`--show`) details every
/// one with [`Irqs::read_details`]; otherwise the caller details the ones
/// its checked CPUs need. `all_details` is `Some(online)` (`cpu/online`)
/// for those: nothing else needs the online CPUs, so that without it the
/// IRQs can be read as soon as `possible` is known.
pub fn read_irqs(root: &Root, possible: &CpuSet, all_details: Option<&CpuSet>) -> Irqs {
    let default_affinity = read_default(root);
    let irq_dir = ProcIrq::open(root);
    let affinity_of = |n: u32| irq_dir.affinity(n);
    let numbers = if possible.is_empty() {
        Vec::new()
    } else {
        root.numbered_entries(SYSFS_IRQ, "")
    };
    if !numbers.is_empty() {
        let found = super::parallel::map(root, &numbers, |&n| affinity_of(n));
        let list = numbers
            .into_iter()
            .zip(found)
            .map(|(n, found)| {
                let (aff, source) = found.map_or((None, ""), |(s, f)| (Some(s), f));
                Irq {
                    id: n.to_string(),
                    number: Some(n),
                    description: String::new(),
                    counts: Vec::new(),
                    affinity: aff,
                    affinity_source: source,
                    requested: None,
                    managed: None,
                    detailed: false,
                    counts_end: None,
                }
            })
            .collect();
        let mut irqs = Irqs {
            list,
            default_affinity,
            source: IrqSource::Sysfs,
            error: None,
        };
        if let Some(online) = all_details {
            irqs.read_details(root, possible, online, None);
        }
        return irqs;
    }
    let debug_dir = listed(root, DEBUG_IRQS);
    let mut rows = Vec::new();
    let max_columns = if possible.is_empty() {
        super::MAX_CPUS
    } else {
        possible.len()
    };
    let error = for_each_row(root, max_columns, |row| rows.push(row)).err();
    if error.is_some() {
        rows = Vec::new();
    }
    // The rows first, then each device IRQ's files (on several threads when
    // there are many): the same files as reading them row by row.
    let last = LastRequested::default();
    let found = super::parallel::map(root, &rows, |(id, _, _)| {
        let number = id.parse::<u32>().ok();
        let found = number.and_then(affinity_of);
        let wanted = number
            .zip(found.as_ref())
            .and_then(|(n, (_, source))| requested(irq_dir.known(n)?, n, source, &last));
        (
            number,
            found,
            wanted,
            number.and_then(|n| managed(known(&debug_dir, n), n)),
        )
    });
    let list = rows
        .into_iter()
        .zip(found)
        .map(
            |((id, counts, description), (number, found, wanted, managed))| {
                let (aff, source) = found.map_or((None, ""), |(s, f)| (Some(s), f));
                Irq {
                    managed,
                    id,
                    number,
                    description,
                    counts,
                    affinity: aff,
                    affinity_source: source,
                    requested: wanted,
                    detailed: true,
                    counts_end: None,
                }
            },
        )
        .collect();
    Irqs {
        list,
        default_affinity,
        source: IrqSource::Interrupts,
        error,
    }
}

/// debugfs' per-IRQ directory (`kernel/irq/debugfs.c`).
pub const DEBUG_IRQS: &str = "/sys/kernel/debug/irq/irqs";

/// `per_cpu_count` of an IRQ (`kernel/irq/irqdesc.c` `per_cpu_count_show`):
/// `%u` per possible CPU in CPU order, joined by `,`, then a newline.
/// Each piece is printed by `scnprintf` into what is left of one page, so
/// with many CPUs (4096 zeros need 8 KiB) the text stops at `PAGE_SIZE -
/// 1` bytes, possibly inside a number, and has no newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PerCpuCount {
    /// (CPU id, count) of the online CPUs the text covers, counts of 0
    /// left out.
    pub(super) counts: Vec<(u32, u64)>,
    /// The first possible CPU whose count the text lacks (`None`: it
    /// covers every possible CPU). Covered CPUs are the ones below it.
    first_missing: Option<u32>,
}

impl PerCpuCount {
    /// Parses `text` against the `possible` CPUs (ascending).
    /// `kernel/irq/irqdesc.c` `per_cpu_count_show` prints into one page, so
    /// a text cut there is a page less its NUL, without the final newline,
    /// and its last field may be partial: it is dropped. A text without the
    /// newline that is shorter than that is taken as cut too when it lacks
    /// fields or its last field is not a number, and as whole (a dump that
    /// stripped the newline) otherwise. A field that is not a number ends
    /// the covered part.
    pub(super) fn parse(text: &str, possible: &[u32], online: &CpuSet) -> Self {
        let body = text.strip_suffix('\n').unwrap_or(text);
        // The fields as byte slices (`,` is ASCII, so each is a whole
        // UTF-8 string): a 4096-CPU text is 2048 fields, and a
        // whole-machine check parses one per IRQ, so no Vec of `&str`.
        let fields = || {
            body.as_bytes()
                .split(|&b| b == b',')
                .take(if body.is_empty() { 0 } else { usize::MAX })
        };
        let digits = |f: &[u8]| !f.is_empty() && f.iter().all(u8::is_ascii_digit);
        let whole = text.ends_with('\n') || {
            let page = text.len() >= 4095 && (text.len() + 1).is_power_of_two();
            let last = body.as_bytes().rsplit(|&b| b == b',').next();
            !page
                && !body.is_empty()
                && last.is_some_and(digits)
                && fields().nth(possible.len().saturating_sub(1)).is_some()
        };
        // A cut text loses its last (maybe partial) field. `pos` is where
        // the next field starts; `more`, whether there is one.
        let b = body.as_bytes();
        let (mut pos, mut more) = (0, !body.is_empty());
        let mut counts = Vec::new();
        let mut covered = 0;
        // Eight fields of `0`, each followed by a comma (so none is the
        // last field): skipped at once. Most CPUs of a many-CPU machine
        // never saw a given IRQ, and a whole-machine check parses one such
        // page per IRQ (issue 17).
        // Thirty-two at once first (64 bytes: a 4096-CPU page is 64 such
        // runs, against 256 of eight).
        const ZEROS: &[u8; 16] = b"0,0,0,0,0,0,0,0,";
        const ZEROS32: &[u8; 64] =
            b"0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,";
        while more && covered < possible.len() {
            if covered + 32 <= possible.len() && b[pos..].starts_with(ZEROS32) {
                pos += ZEROS32.len();
                covered += 32;
                continue;
            }
            if covered + 8 <= possible.len() && b[pos..].starts_with(ZEROS) {
                pos += ZEROS.len();
                covered += 8;
                continue;
            }
            let end = b[pos..].iter().position(|&c| c == b',').map(|k| pos + k);
            let field = &b[pos..end.unwrap_or(b.len())];
            if !whole && end.is_none() {
                break;
            }
            // `str::trim` then `str::parse::<u64>`: digits alone (at most
            // 19, which always fit) are summed here, anything else goes
            // through them.
            let c = if field == b"0" {
                0
            } else if digits(field) && field.len() <= 19 {
                field.iter().fold(0u64, |v, d| v * 10 + u64::from(d - b'0'))
            } else {
                match std::str::from_utf8(field).ok().and_then(super::parse_count) {
                    Some(c) => c,
                    None => break,
                }
            };
            let cpu = possible[covered];
            covered += 1;
            if c != 0 && online.contains(cpu) {
                counts.push((cpu, c));
            }
            match end {
                Some(e) => pos = e + 1,
                None => more = false,
            }
        }
        Self {
            counts,
            first_missing: possible.get(covered).copied(),
        }
    }
}

/// The `/proc/interrupts` description of an IRQ from its sysfs attributes
/// (`kernel/irq/irqdesc.c`), as `kernel/irq/proc.c` `show_interrupts`
/// prints it after the counts: the chip name (`-` when it has none), the
/// hardware IRQ when the IRQ has a domain (`hwirq` is empty otherwise),
/// then `-` and the handler name when the descriptor has one (x86:
/// `5-edge`), else the trigger as `Level`/`Edge` (what
/// `CONFIG_GENERIC_IRQ_SHOW_LEVEL` kernels, arm and arm64, print), then the
/// action names joined by `, ` (sysfs joins them by `,`). Words are
/// separated by one space, as [`parse_row`] leaves them. Chips that print
/// themselves (`irq_print_chip`) may differ in the chip part; the device
/// names, which the findings show, are the same.
fn describe(chip: &str, hwirq: &str, kind: &str, name: &str, actions: &str) -> String {
    let mut words = vec![if chip.is_empty() { "-" } else { chip }.to_string()];
    let trigger = match kind {
        "level" => "Level",
        _ => "Edge",
    };
    match (hwirq.is_empty(), name.is_empty()) {
        (false, false) => words.push(format!("{hwirq}-{name}")),
        (true, false) => words.push(format!("-{name}")),
        (false, true) => words.extend([hwirq.to_string(), trigger.to_string()]),
        (true, true) => words.push(trigger.to_string()),
    }
    words.push(actions.replace(',', ", "));
    words
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// What [`Irqs::read_details`] found for one IRQ.
enum Detail {
    /// Not looked at: detailed before, or not on the checked CPUs.
    Skip,
    /// Not an IRQ `/proc/interrupts` lists: removed from the list.
    Drop,
    /// Its description, counts, managed flag and requested affinity.
    Read {
        description: String,
        counts: Vec<(u32, u64)>,
        counts_end: Option<u32>,
        managed: Option<bool>,
        requested: Option<Arc<CpuSet>>,
    },
}

impl Irqs {
    /// Reads the details of the sysfs IRQs (no-op for the
    /// `/proc/interrupts` source) that a check of the CPUs `cpus` looks at
    /// (every IRQ with `None`): those whose affinity ∩ `online` meets
    /// `cpus`, and those without `/proc/irq/N` (placed by their counts).
    /// Each gets its `description` (see [`Irq::description`]), `counts`
    /// (from `per_cpu_count`, in the order of the `possible` CPUs; past a
    /// cut page unknown, [`Irq::counts_end`]) and `managed` flag; IRQs that
    /// `/proc/interrupts` would not list are dropped: no handler (empty
    /// `actions`, or `(null)`, the nameless action of a chained handler)
    /// and no count on an online CPU as far as `per_cpu_count` reaches, and
    /// `IPI` (the IPI descriptors of arm, arm64 and riscv, hidden from
    /// `/proc/interrupts`' numbered rows by `IRQ_HIDDEN`). `/proc/interrupts`
    /// is never read here. IRQs detailed before are not read again.
    pub fn read_details(
        &mut self,
        root: &Root,
        possible: &CpuSet,
        online: &CpuSet,
        cpus: Option<&CpuSet>,
    ) {
        if self.source != IrqSource::Sysfs {
            return;
        }
        let Some(sys_dir) = root.dir(SYSFS_IRQ) else {
            return;
        };
        let debug_dir = root.dir(DEBUG_IRQS);
        let irq_dir = root.dir("/proc/irq");
        let possible: Vec<u32> = possible.iter().collect();
        let reader = DetailReader {
            sys_dir: &sys_dir,
            debug_dir: debug_dir.as_ref(),
            irq_dir: irq_dir.as_ref(),
            possible: &possible,
            online,
            cpus,
            last: LastRequested::default(),
        };
        // Each IRQ's files (on several threads when there are many), then
        // the results applied in order: the same files as one loop.
        let wanted = self.wanted(online, cpus);
        let list = &self.list;
        let details = super::parallel::map(root, &wanted, |&i| reader.detail(&list[i]));
        let mut dropped = BTreeSet::new();
        for (i, d) in wanted.into_iter().zip(details) {
            let irq = &mut self.list[i];
            match d {
                Detail::Skip => {}
                Detail::Drop => {
                    dropped.extend(irq.number);
                }
                Detail::Read {
                    description,
                    counts,
                    counts_end,
                    managed,
                    requested,
                } => {
                    irq.requested = requested;
                    irq.description = description;
                    irq.counts_end = counts_end;
                    irq.counts = counts;
                    irq.managed = managed;
                    irq.detailed = true;
                }
            }
        }
        if !dropped.is_empty() {
            self.list
                .retain(|i| !i.number.is_some_and(|n| dropped.contains(&n)));
        }
    }

    /// The indices of the IRQs [`Irqs::read_details`] looks at: numbered,
    /// not detailed before, and on the checked CPUs `cpus` among the
    /// `online` ones or of unknown affinity (placed by their counts). The
    /// online checked CPUs once, then one `intersects` per IRQ (without
    /// two sets made per IRQ).
    fn wanted(&self, online: &CpuSet, cpus: Option<&CpuSet>) -> Vec<usize> {
        let checked_online = cpus.map(|c| online.intersection(c));
        (0..self.list.len())
            .filter(|&i| {
                let irq = &self.list[i];
                irq.number.is_some()
                    && !irq.detailed
                    && !irq.affinity.as_ref().is_some_and(|a| {
                        checked_online.as_ref().is_some_and(|co| !a.intersects(co))
                    })
            })
            .collect()
    }
}

/// What [`Irqs::read_details`] reads one IRQ's details with
/// ([`DetailReader::detail`]).
struct DetailReader<'a> {
    /// `/sys/kernel/irq`.
    sys_dir: &'a Dir,
    /// debugfs' `irq/irqs`, when readable (the managed flag).
    debug_dir: Option<&'a Dir>,
    /// `/proc/irq`, when readable (the requested affinity).
    irq_dir: Option<&'a Dir>,
    /// The possible CPUs, in order (`per_cpu_count`'s columns).
    possible: &'a [u32],
    /// The online CPUs.
    online: &'a CpuSet,
    /// The checked CPUs (`None`: every IRQ is detailed).
    cpus: Option<&'a CpuSet>,
    /// The requested affinity read last ([`requested`]).
    last: LastRequested,
}

impl DetailReader<'_> {
    /// What the check looks at of `set`: its CPUs that are online and
    /// checked.
    fn hits(&self, set: &CpuSet) -> CpuSet {
        let on = set.intersection(self.online);
        match self.cpus {
            Some(c) => on.intersection(c),
            None => on,
        }
    }

    /// The details of `irq` (see [`Irqs::read_details`]): its
    /// `per_cpu_count` first (an IRQ of unknown affinity not counted on the
    /// checked CPUs is skipped), then its `actions` (no handler and no
    /// count, or `IPI`: dropped), the chip files for a name only without a
    /// handler, its managed flag and its requested affinity.
    fn detail(&self, irq: &Irq) -> Detail {
        let sys_dir = self.sys_dir;
        let Some(n) = irq.number else {
            return Detail::Skip;
        };
        let read = |file: &str| {
            sys_dir
                .read_with(&format!("{n}/{file}"), |t| t.trim_end().to_string())
                .unwrap_or_default()
        };
        // Parsed where it was read: a 4096-CPU text is a page.
        let count = sys_dir
            .read_with(&format!("{n}/per_cpu_count"), |t| {
                PerCpuCount::parse(t, self.possible, self.online)
            })
            .unwrap_or_else(|| PerCpuCount::parse("", self.possible, self.online));
        if irq.affinity.is_none() {
            let counted: CpuSet = count.counts.iter().map(|(c, _)| *c).collect();
            // Not placed on the checked CPUs (as far as the page
            // reaches); with `None` every IRQ is detailed (or dropped),
            // as `--show` counts them.
            if self.cpus.is_some() && self.hits(&counted).is_empty() {
                return Detail::Skip;
            }
        }
        let actions = read("actions");
        if actions == "IPI" {
            return Detail::Drop;
        }
        let handler = !actions.is_empty() && actions != "(null)";
        // Listed by /proc/interrupts only with a handler or a count on
        // an online CPU. Beyond a cut page nothing is known: a
        // handler-less IRQ without counts where the page reaches is
        // dropped too (nothing requested it; it disturbs no CPU now).
        if !handler && count.counts.is_empty() {
            return Detail::Drop;
        }
        // The findings show the last word (`Irq::name`): the last
        // action's name. The chip part is read only for IRQs without a
        // handler, whose name it then is (`18-fasteoi`): four files
        // fewer per IRQ.
        let description = if handler {
            actions.replace(',', ", ")
        } else {
            describe(
                &read("chip_name"),
                &read("hwirq"),
                &read("type"),
                &read("name"),
                &actions,
            )
        };
        Detail::Read {
            description,
            counts: count.counts,
            counts_end: count.first_missing,
            managed: managed(self.debug_dir, n),
            requested: self
                .irq_dir
                .and_then(|d| requested(d, n, irq.affinity_source, &self.last)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format of `show_interrupts()` (kernel/irq/proc.c) and
    /// arch_show_interrupts() on x86, from a 4.x-6.x machine.
    #[test]
    fn interrupts_rows_and_names() {
        let text = "           CPU0       CPU1       \n  0:         33          0   IO-APIC   2-edge      timer\n 24:          0      12345  IR-PCI-MSI 524288-edge      nvme0q1\nNMI:          0          0   Non-maskable interrupts\nLOC:    1234567     765432   Local timer interrupts\nERR:          0\nMIS:          0\n";
        let c = parse_counters(text);
        assert_eq!(c.cpus, vec![0, 1]);
        assert_eq!(c.count("24", 1), 12345);
        assert_eq!(c.rows["24"].desc, "IR-PCI-MSI 524288-edge      nvme0q1");
        assert_eq!(c.count("LOC", 0), 1234567);
        assert_eq!(c.rows["LOC"].desc, "Local timer interrupts");
        assert_eq!(c.rows["ERR"].counts, vec![0]);
        assert_eq!(c.count("ERR", 1), 0);
    }

    /// `show_softirqs()` (fs/proc/softirqs.c): `%12s:` names, `%10u` counts.
    #[test]
    fn softirqs() {
        let text = "                    CPU0       CPU2\n          HI:          1          0\n       TIMER:     123456      65432\n      NET_RX:         10         20\n";
        let c = parse_counters(text);
        assert_eq!(c.cpus, vec![0, 2]);
        assert_eq!(c.count("TIMER", 2), 65432);
        assert_eq!(c.count("NET_RX", 0), 10);
    }

    /// A dump below `dir` with `/proc/irq/N/effective_affinity_list` =
    /// `N % 4` for the IRQs `with`, and `/proc/irq` itself.
    fn proc_irq_dump(dir: &std::path::Path, with: impl Iterator<Item = u32>) -> Root {
        std::fs::create_dir_all(dir.join("proc/irq")).unwrap();
        for n in with {
            let d = dir.join(format!("proc/irq/{n}"));
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("effective_affinity_list"), format!("{}\n", n % 4)).unwrap();
        }
        Root::new(dir)
    }

    /// Issue 17: `/proc/irq` is listed only once IRQs lack their
    /// directory, and every IRQ gets the affinity its files give either
    /// way (none without a directory, before and after the listing).
    #[test]
    fn proc_irq_is_listed_only_after_misses() {
        let all = tempfile::tempdir().unwrap();
        let root = proc_irq_dump(all.path(), 0..40);
        let irq = ProcIrq::open(&root);
        for n in 0..40 {
            assert_eq!(
                irq.affinity(n).map(|(s, f)| (s.to_list(), f)),
                Some(((n % 4).to_string(), "effective_affinity_list")),
                "{n}"
            );
        }
        assert!(irq.ids.get().is_none(), "listed without a miss");
        // Every third IRQ kept its directory: the first misses open
        // directly, then the listing answers.
        let few = tempfile::tempdir().unwrap();
        let root = proc_irq_dump(few.path(), (0..60).filter(|n| n % 3 == 0));
        let irq = ProcIrq::open(&root);
        let mut listed_at = None;
        for n in 0..60 {
            let want = (n % 3 == 0).then(|| ((n % 4).to_string(), "effective_affinity_list"));
            assert_eq!(irq.affinity(n).map(|(s, f)| (s.to_list(), f)), want, "{n}");
            if listed_at.is_none() && irq.ids.get().is_some() {
                listed_at = Some(n);
            }
        }
        // The eighth IRQ without a directory is 11 (1, 2, 4, 5, 7, 8, 10, 11).
        assert_eq!(listed_at, Some(11));
        assert_eq!(irq.ids.get().map(BTreeSet::len), Some(20));
        assert!(irq.known(4).is_none() && irq.known(6).is_some());
        // No /proc/irq at all: nothing is opened or listed.
        let none = tempfile::tempdir().unwrap();
        let root = Root::new(none.path());
        let irq = ProcIrq::open(&root);
        assert!((0..20).all(|n| irq.affinity(n).is_none()));
        assert!(irq.ids.get().is_none());
    }

    /// Issue 17: equal requested affinities are one shared set; the same
    /// text as a list and as a mask are different sets (`1`: CPU 1 and
    /// CPU 0), and a different text is a set of its own.
    /// `irq_file` writes what `format!` writes, for the longest name and
    /// number too.
    #[test]
    fn irq_file_is_the_formatted_path() {
        for n in [0, 1, 9, 10, 99, 100, 4095, 10_000, 1_000_000_007, u32::MAX] {
            for file in [
                "effective_affinity_list",
                "smp_affinity_list",
                "effective_affinity",
                "smp_affinity",
            ] {
                let mut buf = [0u8; 40];
                assert_eq!(irq_file(&mut buf, n, file), format!("{n}/{file}"));
            }
        }
    }

    #[test]
    fn requested_affinities_are_shared_when_equal() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for (n, file, text) in [
            (1, "smp_affinity_list", "0-3\n"),
            (2, "smp_affinity_list", "0-3\n"),
            (3, "smp_affinity", "1\n"),
            (4, "smp_affinity_list", "1\n"),
            (5, "smp_affinity_list", "0-3\n"),
            (6, "smp_affinity_list", "x\n"),
        ] {
            std::fs::create_dir_all(p.join(format!("proc/irq/{n}"))).unwrap();
            std::fs::write(p.join(format!("proc/irq/{n}/{file}")), text).unwrap();
        }
        let root = Root::new(p);
        let d = root.dir("/proc/irq").unwrap();
        let last = LastRequested::default();
        let r = |n| requested(&d, n, "effective_affinity_list", &last);
        let (a, b) = (r(1).unwrap(), r(2).unwrap());
        assert_eq!(a.to_list(), "0-3");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(r(3).unwrap().to_list(), "0");
        assert_eq!(r(4).unwrap().to_list(), "1");
        let c = r(5).unwrap();
        assert_eq!(*c, *a);
        assert_eq!(r(6), None);
        assert_eq!(requested(&d, 1, "smp_affinity_list", &last), None);
    }

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
        for_each_row(&root, 2, |r| rows.push(r)).unwrap();
        let expected = parse_interrupts(&String::from_utf8_lossy(&bytes));
        assert_eq!(rows.len(), n + 3);
        assert_eq!(rows, expected);
        assert_eq!(rows.last().unwrap().2, "bad\u{fffd}name");
        assert_eq!(read_irqs(&root, &CpuSet::new(), None).list.len(), n + 3);
    }

    /// Issue 15: `/proc/interrupts` is read within budgets (a line, the
    /// CPU columns, the rows, the non-zero counts); beyond one the read
    /// stops with an error naming the budget, never a buffer the size of
    /// the file.
    #[test]
    fn interrupts_budgets() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let root = Root::new(dir.path());
        let possible: CpuSet = [0, 1].into_iter().collect();
        let write = |t: &[u8]| std::fs::write(dir.path().join("proc/interrupts"), t).unwrap();
        // A row without a newline longer than the line budget.
        let mut t = b"CPU0 CPU1\n 5: ".to_vec();
        t.extend(std::iter::repeat_n(b'1', MAX_INTERRUPTS_LINE + 10));
        write(&t);
        let irqs = read_irqs(&root, &possible, None);
        assert!(
            irqs.error.as_deref().unwrap().contains("longer than"),
            "{irqs:?}"
        );
        assert!(irqs.list.is_empty());
        // More CPU columns than possible CPUs.
        write(b"CPU0 CPU1 CPU2\n 5: 1 2 3 x\n");
        let irqs = read_irqs(&root, &possible, None);
        assert!(
            irqs.error.as_deref().unwrap().contains("3 CPU columns"),
            "{irqs:?}"
        );
        // Within the budgets: read whole, no error.
        write(b"CPU0 CPU1\n 5: 1 2 x\n");
        let irqs = read_irqs(&root, &possible, None);
        assert_eq!((irqs.error, irqs.list.len()), (None, 1));
    }

    /// `per_cpu_count` is by possible CPU; offline CPUs' counts are left
    /// out; a cut page (no newline) loses its last, maybe partial, field.
    #[test]
    fn per_cpu_count_by_possible_cpu() {
        let possible = [0, 1, 2, 4, 5];
        let online: CpuSet = [0, 2, 4, 5].into_iter().collect();
        let c = PerCpuCount::parse("1,2,0,4,5\n", &possible, &online);
        assert_eq!(c.counts, vec![(0, 1), (4, 4), (5, 5)]);
        assert_eq!(c.first_missing, None);
        let c = PerCpuCount::parse("1,2,0,4", &possible, &online);
        assert_eq!(c.counts, vec![(0, 1)]);
        assert_eq!(c.first_missing, Some(4));
        // Every field but no newline (a dump that stripped it): whole.
        let c = PerCpuCount::parse("1,2,0,4,5", &possible, &online);
        assert_eq!((c.counts.len(), c.first_missing), (3, None));
        // A full page (4095 bytes, no newline) is cut inside its last field
        // even when it has a field for every possible CPU.
        let many: Vec<u32> = (0..2048).collect();
        let all: CpuSet = many.iter().copied().collect();
        let text = format!("{}1", "1,".repeat(2047));
        assert_eq!(text.len(), 4095);
        let c = PerCpuCount::parse(&text, &many, &all);
        assert_eq!((c.counts.len(), c.first_missing), (2047, Some(2047)));
        let c = PerCpuCount::parse("", &possible, &online);
        assert_eq!(c.first_missing, Some(0));
        let c = PerCpuCount::parse("3,x,1\n", &possible, &online);
        assert_eq!((c.counts, c.first_missing), (vec![(0, 3)], Some(1)));
    }

    /// `PerCpuCount::parse` as it was before issue 17 (a `Vec` of `&str`
    /// fields, each trimmed and parsed; since then a count past `u64::MAX`
    /// saturates, [`super::super::parse_count`]): the oracle of the
    /// property below.
    fn per_cpu_count_before(text: &str, possible: &[u32], online: &CpuSet) -> PerCpuCount {
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut fields: Vec<&str> = if body.is_empty() {
            Vec::new()
        } else {
            body.split(',').collect()
        };
        let whole = text.ends_with('\n') || {
            let page = text.len() >= 4095 && (text.len() + 1).is_power_of_two();
            let last_ok = fields
                .last()
                .is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
            !page && fields.len() >= possible.len() && last_ok
        };
        if !whole {
            fields.pop();
        }
        let mut counts = Vec::new();
        let mut covered = 0;
        for (&cpu, field) in possible.iter().zip(&fields) {
            let Some(c) = crate::system::parse_count(field) else {
                break;
            };
            covered += 1;
            if c != 0 && online.contains(cpu) {
                counts.push((cpu, c));
            }
        }
        PerCpuCount {
            counts,
            first_missing: possible.get(covered).copied(),
        }
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Issue 17: the byte-scanning parse gives what the parse before
        /// it gave, on texts made of counts (0, small, 19 and 20 digits,
        /// past u64), spaces, `+`, non-ASCII, empty fields, with and
        /// without the newline, and cut at a page.
        #[test]
        fn per_cpu_count_parse_unchanged(
            fields in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => proptest::strategy::Just("0".to_string()),
                    2 => (0u64..100_000).prop_map(|v| v.to_string()),
                    1 => proptest::strategy::Just("9999999999999999999".to_string()),
                    1 => proptest::strategy::Just("18446744073709551615".to_string()),
                    1 => proptest::strategy::Just("18446744073709551616".to_string()),
                    1 => "[0-9 +\t\u{a0}é-]{0,4}",
                ],
                0..40,
            ),
            newline in proptest::bool::ANY,
            ncpus in 1usize..40,
            offline in 0u32..40,
            page in proptest::bool::ANY,
        ) {
            let mut text = fields.join(",");
            if page {
                let mut t = "0,".repeat(2100);
                t.push_str(&text);
                text = t.chars().take(4095).collect();
            } else if newline {
                text.push('\n');
            }
            let possible: Vec<u32> = (0..ncpus as u32 + if page { 2100 } else { 0 }).collect();
            let online: CpuSet = possible.iter().copied().filter(|&c| c != offline).collect();
            proptest::prop_assert_eq!(
                PerCpuCount::parse(&text, &possible, &online),
                per_cpu_count_before(&text, &possible, &online)
            );
        }
    }

    proptest::proptest! {
        /// Issue 17: runs of eight `0` fields are skipped at once; texts made
        /// mostly of zeros (runs of every length, cut or not, more or fewer
        /// fields than possible CPUs, a few counts and damaged fields among
        /// them) parse as the parse before it did.
        #[test]
        fn per_cpu_count_zero_runs_unchanged(
            fields in proptest::collection::vec(
                proptest::prop_oneof![
                    40 => proptest::strategy::Just("0".to_string()),
                    2 => (1u64..1000).prop_map(|v| v.to_string()),
                    1 => "[0 x]{0,2}",
                ],
                0..300,
            ),
            newline in proptest::bool::ANY,
            extra in 0usize..40,
            fewer in 0usize..40,
            offline in 0u32..300,
        ) {
            let mut text = fields.join(",");
            if newline {
                text.push('\n');
            }
            let ncpus = (fields.len() + extra).saturating_sub(fewer).max(1);
            let possible: Vec<u32> = (0..ncpus as u32).collect();
            let online: CpuSet = possible.iter().copied().filter(|&c| c != offline).collect();
            proptest::prop_assert_eq!(
                PerCpuCount::parse(&text, &possible, &online),
                per_cpu_count_before(&text, &possible, &online)
            );
        }
    }

    /// Descriptions as /proc/interrupts rows of x86 (handler name) and
    /// arm64 (trigger) show them.
    #[test]
    fn describes_like_show_interrupts() {
        let row = |line: &str| parse_interrupts(&format!("CPU0\n{line}\n"))[0].2.clone();
        assert_eq!(
            describe("IO-APIC", "6", "edge", "edge", "ACPI:Ged"),
            row(" 25:          0 IO-APIC   6-edge      ACPI:Ged")
        );
        assert_eq!(
            describe("PCI-MSI", "1", "edge", "edge", "PCIe PME,pciehp"),
            row(" 122:         0  PCI-MSI   1-edge      PCIe PME, pciehp")
        );
        assert_eq!(
            describe("GICv3", "27", "level", "", "arch_timer"),
            row(" 11:      3124     GICv3  27 Level     arch_timer")
        );
        assert_eq!(describe("", "", "edge", "", ""), "- Edge");
    }
}
