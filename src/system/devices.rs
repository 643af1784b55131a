//! Devices and their NUMA node (`--near DEVICE`, `--show`): a network
//! interface (`/sys/class/net/NAME`), a PCI function
//! (`/sys/bus/pci/devices/DDDD:BB:DD.F`), a block device
//! (`/sys/class/block/NAME`) or a file's backing block device
//! (`/sys/dev/block/MAJOR:MINOR`), resolved to the device directory below
//! `/sys/devices` that has a `numa_node` file
//! (`Documentation/ABI/testing/sysfs-bus-pci`: "the NUMA node the device
//! is attached to, or -1 if the node is unknown"), as numactl's
//! `--cpunodebind=netdev:|pci:|block:|file:` does (libnuma `affinity.c`).
//! Plain data: which CPUs or node to use is decided in `plan`.

use super::root::Root;
use crate::cpuset::CpuSet;

/// What `--near` named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// A network interface (`/sys/class/net/NAME`).
    Net,
    /// A PCI function (`/sys/bus/pci/devices/ADDRESS`).
    Pci,
    /// A block device (`/sys/class/block/NAME`).
    Block,
    /// A file, by the block device it is stored on.
    File,
}

impl DeviceKind {
    /// "network interface", "PCI device", "block device", "file".
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Net => "network interface",
            DeviceKind::Pci => "PCI device",
            DeviceKind::Block => "block device",
            DeviceKind::File => "file",
        }
    }
}

/// A device and where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// As named (`eth0`, `0000:3b:00.0`, `nvme0n1`, `/data/file`).
    pub name: String,
    /// What it is.
    pub kind: DeviceKind,
    /// The device's own sysfs directory (links resolved), e.g.
    /// `/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0`.
    pub sysfs: String,
    /// The nearest directory at or above `sysfs` with a `numa_node` file
    /// (the PCI function, usually); `None` for a virtual device (below
    /// `/sys/devices/virtual`) or one whose bus has no node.
    pub numa_dir: Option<String>,
    /// Its `numa_node` as the kernel prints it: `-1` is unknown.
    pub numa_node: Option<i64>,
    /// Its `local_cpulist` (the CPUs of its node, or every CPU when the
    /// node is unknown).
    pub local_cpus: Option<CpuSet>,
    /// Its MSI/MSI-X IRQs (`msi_irqs/N`), a NIC's queues among them.
    pub irqs: Vec<u32>,
}

/// A PCI address in the kernel's form (`0000:3b:00.0`), from
/// `DDDD:BB:DD.F` or `BB:DD.F` (domain 0, as lspci prints it); `None`
/// when `s` is not one.
pub fn pci_address(s: &str) -> Option<String> {
    let full = if s.matches(':').count() == 1 {
        format!("0000:{s}")
    } else {
        s.to_string()
    };
    let parts: Vec<&str> = full.split([':', '.']).collect();
    let ok = parts.len() == 4
        && [4, 2, 2, 1]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_hexdigit()));
    ok.then(|| full.to_ascii_lowercase())
}

/// The `(major, minor)` of a `st_dev`/`st_rdev`, as glibc's
/// `gnu_dev_major`/`gnu_dev_minor` (`<sys/sysmacros.h>`) split it.
pub fn dev_numbers(dev: u64) -> (u64, u64) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x00ff);
    (major, minor)
}

/// Resolves `spec` below `root`. A path (starting with `/`) is a file:
/// the block device it is stored on (`stat(2)`'s `st_dev`), or, for a
/// block special file, that device (`st_rdev`); only on the live machine
/// (`live`), as a dump holds no files. Otherwise, in this order, a
/// network interface, a PCI address, a block device. `Err` says why
/// nothing was found.
pub fn read_device(root: &Root, spec: &str, live: bool) -> Result<Device, String> {
    let (kind, link) = if spec.starts_with('/') {
        if !live {
            return Err(format!(
                "{spec}: a file's device can be read only on the live machine, not in a --sysroot dump"
            ));
        }
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let meta = std::fs::metadata(spec)
            .map_err(|e| format!("{spec}: {}", crate::error::io_words(&e)))?;
        let dev = if meta.file_type().is_block_device() {
            meta.rdev()
        } else {
            meta.dev()
        };
        let (major, minor) = dev_numbers(dev);
        if major == 0 {
            return Err(format!(
                "{spec} is on device {major}:{minor}, not a block device (a virtual filesystem: tmpfs, overlayfs, NFS, …)"
            ));
        }
        (DeviceKind::File, format!("/sys/dev/block/{major}:{minor}"))
    } else if !spec.is_empty()
        && !spec.contains('/')
        && root.exists(&format!("/sys/class/net/{spec}"))
    {
        (DeviceKind::Net, format!("/sys/class/net/{spec}"))
    } else if let Some(addr) = pci_address(spec) {
        (DeviceKind::Pci, format!("/sys/bus/pci/devices/{addr}"))
    } else if !spec.is_empty()
        && !spec.contains('/')
        && root.exists(&format!("/sys/class/block/{spec}"))
    {
        (DeviceKind::Block, format!("/sys/class/block/{spec}"))
    } else {
        return Err(format!(
            "no network interface (/sys/class/net), PCI device (DDDD:BB:DD.F) or block device (/sys/class/block) is named \"{spec}\""
        ));
    };
    let sysfs = root
        .resolve(&link)
        .ok_or_else(|| format!("{spec}: {link} does not exist"))?;
    Ok(device_at(root, spec, kind, sysfs))
}

/// The [`Device`] whose resolved sysfs directory is `sysfs`.
fn device_at(root: &Root, name: &str, kind: DeviceKind, sysfs: String) -> Device {
    let mut numa_dir = None;
    if !sysfs.starts_with("/sys/devices/virtual/") {
        let mut dir = sysfs.as_str();
        while dir.starts_with("/sys/devices/") {
            if root.exists(&format!("{dir}/numa_node")) {
                numa_dir = Some(dir.to_string());
                break;
            }
            dir = &dir[..dir.rfind('/').unwrap_or(0)];
        }
    }
    let read = |f: &str| numa_dir.as_ref().map(|d| format!("{d}/{f}"));
    Device {
        name: name.to_string(),
        kind,
        numa_node: read("numa_node").and_then(|p| root.read_int(&p)),
        local_cpus: read("local_cpulist").and_then(|p| root.read_list(&p)),
        irqs: read("msi_irqs").map_or_else(Vec::new, |p| root.numbered_entries(&p, "")),
        sysfs,
        numa_dir,
    }
}

/// The network interfaces and block devices of the machine that are not
/// virtual (`--show`'s devices per node): every `/sys/class/net` and
/// `/sys/class/block` entry that resolves below `/sys/devices` but not
/// `/sys/devices/virtual`, partitions left out.
pub fn read_devices(root: &Root) -> Vec<Device> {
    let mut out = Vec::new();
    for (class, kind) in [("net", DeviceKind::Net), ("block", DeviceKind::Block)] {
        for name in root.names(&format!("/sys/class/{class}")) {
            let link = format!("/sys/class/{class}/{name}");
            let Some(sysfs) = root.resolve(&link) else {
                continue;
            };
            if sysfs.starts_with("/sys/devices/virtual/")
                || (kind == DeviceKind::Block && root.exists(&format!("{sysfs}/partition")))
            {
                continue;
            }
            out.push(device_at(root, &name, kind, sysfs));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses_as_the_kernel_names_them() {
        assert_eq!(pci_address("3b:00.0").as_deref(), Some("0000:3b:00.0"));
        assert_eq!(pci_address("0000:AF:1f.7").as_deref(), Some("0000:af:1f.7"));
        assert_eq!(pci_address("eth0"), None);
        assert_eq!(pci_address("3b:00"), None);
        assert_eq!(pci_address("0000:3b:00.10"), None);
    }

    /// glibc's encoding: makedev(259, 1) (an NVMe namespace) and
    /// makedev(8, 17) (sdb1).
    #[test]
    fn device_numbers_split_as_glibc() {
        let makedev = |ma: u64, mi: u64| {
            ((ma & 0xffff_f000) << 32)
                | ((ma & 0x0fff) << 8)
                | ((mi & 0xffff_ff00) << 12)
                | (mi & 0x00ff)
        };
        assert_eq!(dev_numbers(makedev(259, 1)), (259, 1));
        assert_eq!(dev_numbers(makedev(8, 17)), (8, 17));
        assert_eq!(dev_numbers(makedev(4095, 1_048_575)), (4095, 1_048_575));
        assert_eq!(dev_numbers(0x0803), (8, 3));
    }
}
