//! What IRQ steering (`--steer-irqs`, issue 21) reads: every IRQ of
//! `/proc/irq` with its configured affinity (`smp_affinity_list`, what a
//! write replaces), its effective affinity, its node and name and whether
//! the kernel manages it, plus `default_smp_affinity`
//! (`Documentation/core-api/irq/irq-affinity.rst`); and the steering
//! journals of the state directory ([`crate::steer::Journal`]).

use super::claims::StateDir;
use super::root::Root;
use crate::cpuset::CpuSet;
use crate::steer::{Journal, MAX_JOURNAL, journal_owner};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::io::Read;

/// One IRQ as steering sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SteerIrq {
    /// The IRQ number.
    pub number: u32,
    /// Its device name: the last word of `/sys/kernel/irq/N/actions`
    /// (empty when it has no handler or no sysfs).
    pub name: String,
    /// `smp_affinity_list` (fallback `smp_affinity`): the CPUs asked for.
    pub affinity: Option<CpuSet>,
    /// `effective_affinity_list`: where it is delivered (x86: one CPU).
    pub effective: Option<CpuSet>,
    /// `/proc/irq/N/node`: the device's NUMA node (`-1` is none).
    pub node: Option<u32>,
    /// Kernel-managed (`IRQD_AFFINITY_MANAGED` in debugfs), when known.
    pub managed: Option<bool>,
    /// Without debugfs: whether the kernel keeps it where it is, by its
    /// answer to a test write ([`test_write`], [`crate::steer::kernel_keeps`]);
    /// `None` when not asked (a dump, not root, debugfs answered, not on a
    /// claimed CPU).
    pub kernel_keeps: Option<bool>,
    /// Its interrupt chip (`/sys/kernel/irq/N/chip_name`: `PCI-MSI`,
    /// `IR-PCI-MSIX-0000:01:00.0`, `IO-APIC`), read with [`test_write`]'s
    /// answer.
    pub chip: Option<String>,
}

/// Every IRQ of `/proc/irq` below `root` and the default affinity of new
/// IRQs (`/proc/irq/default_smp_affinity`, a cpumask).
pub fn read_irqs(root: &Root) -> (Vec<SteerIrq>, Option<CpuSet>) {
    let debug = root.dir("/sys/kernel/debug/irq/irqs");
    let list = root
        .numbered_entries("/proc/irq", "")
        .into_iter()
        .map(|n| {
            let d = format!("/proc/irq/{n}");
            let name = root
                .read_value(&format!("/sys/kernel/irq/{n}/actions"))
                .and_then(|a| a.split(',').next_back().map(|s| s.trim().to_string()))
                .unwrap_or_default();
            SteerIrq {
                number: n,
                name,
                affinity: root.read_list_or_mask(&d, "smp_affinity"),
                effective: root.read_list_or_mask(&d, "effective_affinity"),
                node: root
                    .read_int(&format!("{d}/node"))
                    .and_then(|v| u32::try_from(v).ok()),
                managed: debug
                    .as_ref()
                    .and_then(|dd| dd.read(&n.to_string()))
                    .map(|t| t.contains("IRQD_AFFINITY_MANAGED")),
                kernel_keeps: None,
                chip: None,
            }
        })
        .collect();
    let default = root.read_mask("/proc/irq/default_smp_affinity");
    (list, default)
}

/// A journal file of the state directory, read.
#[derive(Debug, Clone)]
pub struct JournalFile {
    /// Its file name.
    pub name: String,
    /// The journal, or why it cannot be used (foreign-owned, not a
    /// regular file, too large, corrupt).
    pub journal: Result<Journal, String>,
}

/// Every steering journal in `dir` (names of [`crate::steer::journal_name`]'s
/// shape), sorted by name. A journal must be a regular file owned by root
/// (steering needs root; any other owner could forge restores) of at most
/// [`MAX_JOURNAL`] bytes.
pub fn read_journals(dir: &StateDir) -> Vec<JournalFile> {
    let Ok(mut d) = nix::dir::Dir::openat(
        dir.fd(),
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    let mut names: Vec<String> = d
        .iter()
        .flatten()
        .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
        .filter(|n| journal_owner(n).is_some())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let journal = read_journal(dir, &name);
            JournalFile { name, journal }
        })
        .collect()
}

fn read_journal(dir: &StateDir, name: &str) -> Result<Journal, String> {
    let fd = nix::fcntl::openat(
        dir.fd(),
        name,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| e.desc().to_string())?;
    let st = nix::sys::stat::fstat(&fd).map_err(|e| e.desc().to_string())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("not a regular file".into());
    }
    if st.st_uid != 0 {
        return Err(format!("owned by uid {}, not root", st.st_uid));
    }
    if st.st_size as u64 > MAX_JOURNAL as u64 {
        return Err(format!("{} bytes, more than {MAX_JOURNAL}", st.st_size));
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(MAX_JOURNAL as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    Journal::parse(&text)
}

/// Asks the live kernel whether it keeps IRQ `n` where it is: writes
/// [`crate::steer::TEST_WRITE`] (not a cpulist) to
/// `/proc/irq/N/smp_affinity_list`, which changes nothing (the kernel
/// refuses it with EIO before parsing when it keeps the IRQ, else with the
/// parser's EINVAL); read it with [`crate::steer::kernel_keeps`]. Live
/// machine only, never below `--sysroot` (a dump's files are data); the
/// open needs root (EACCES otherwise).
pub fn test_write(n: u32) -> Result<(), nix::errno::Errno> {
    let fd = nix::fcntl::open(
        format!("/proc/irq/{n}/smp_affinity_list").as_str(),
        OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    nix::unistd::write(&fd, crate::steer::TEST_WRITE.as_bytes()).map(|_| ())
}

/// `/sys/kernel/irq/N/chip_name` below `root`: the IRQ's interrupt chip.
pub fn chip_name(root: &Root, n: u32) -> Option<String> {
    root.read_value(&format!("/sys/kernel/irq/{n}/chip_name"))
}

/// `/proc/irq/N/smp_affinity_list` (fallback `smp_affinity`) below `root`:
/// what an undo compares with what was written.
pub fn read_affinity(root: &Root, n: u32) -> Option<CpuSet> {
    root.read_list_or_mask(&format!("/proc/irq/{n}"), "smp_affinity")
}

/// `/proc/irq/N/effective_affinity_list` (fallback the mask): where the
/// IRQ is delivered now.
pub fn read_effective(root: &Root, n: u32) -> Option<CpuSet> {
    root.read_list_or_mask(&format!("/proc/irq/{n}"), "effective_affinity")
}

/// `/proc/irq/default_smp_affinity`.
pub fn read_default(root: &Root) -> Option<CpuSet> {
    root.read_mask("/proc/irq/default_smp_affinity")
}

/// The online CPUs (`/sys/devices/system/cpu/online`), read again after
/// an EINVAL (a CPU went offline).
pub fn read_online(root: &Root) -> Option<CpuSet> {
    root.read_list("/sys/devices/system/cpu/online")
}

/// The PIDs of running irqbalance daemons (`/proc/PID/comm` is
/// `irqbalance`), each with its control socket when it has one
/// (`/run/irqbalance/irqbalance<PID>.sock`, irqbalance's `ui/`).
pub fn irqbalance(root: &Root) -> Vec<(u32, Option<std::path::PathBuf>)> {
    root.numbered_entries("/proc", "")
        .into_iter()
        .filter(|pid| {
            root.read_value(&format!("/proc/{pid}/comm")).as_deref() == Some("irqbalance")
        })
        .map(|pid| {
            let sock = format!("/run/irqbalance/irqbalance{pid}.sock");
            (pid, root.exists(&sock).then(|| root.path(&sock)))
        })
        .collect()
}

/// The threaded handlers of IRQ `n` (kernel threads named `irq/N-…`) with
/// their `Cpus_allowed_list`: they follow the IRQ's affinity when it next
/// fires (`irq_thread_check_affinity()`).
pub fn irq_threads(root: &Root, n: u32) -> Vec<(u32, Option<CpuSet>)> {
    let prefix = format!("irq/{n}-");
    root.numbered_entries("/proc", "")
        .into_iter()
        .filter(|pid| {
            root.read_value(&format!("/proc/{pid}/comm"))
                .is_some_and(|c| c.starts_with(&prefix))
        })
        .map(|pid| {
            let allowed = root.read(&format!("/proc/{pid}/status")).and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .and_then(|l| CpuSet::parse_sysfs_list(l.trim(), None).ok())
            });
            (pid, allowed)
        })
        .collect()
}

/// Whether this process may write `/proc/irq/default_smp_affinity`
/// (`access(2)` `W_OK`, the real user's permission as the kernel judges
/// it): `Err(errno)` when not. The launch still opens every file before
/// writing; this lets `--dry-run` predict its refusal.
pub fn irq_writable() -> Result<(), nix::errno::Errno> {
    nix::unistd::access(
        "/proc/irq/default_smp_affinity",
        nix::unistd::AccessFlags::W_OK,
    )
}
