//! `--show` text: readable within 80 columns on every dump, compact on the
//! 512-CPU / 128-node machine, and naming what the kernel says.

use crate::common;
use common::{all_machines, machine, pinrun};

fn show(rel: Option<&str>, verbose: bool) -> String {
    let mut cmd = pinrun();
    if let Some(r) = rel {
        cmd.arg("--sysroot").arg(machine(r));
    }
    cmd.arg("--show");
    if verbose {
        cmd.arg("-v");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{rel:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_dump_fits_80_columns() {
    let mut n = 0;
    for m in all_machines() {
        for v in [false, true] {
            for line in show(Some(&m), v).lines() {
                assert!(
                    line.chars().count() <= 80,
                    "{m} (-v {v}): {} columns: {line}",
                    line.chars().count()
                );
            }
        }
        n += 1;
    }
    assert_eq!(n, 91);
}

/// 128 nodes: one line per node by default, not 512 CPU lines.
#[test]
fn large_machine_is_compact() {
    let text = show(Some("util-linux-historical/ia64-512cpus"), false);
    assert!(text.lines().count() < 140, "{} lines", text.lines().count());
    assert!(text.contains("128 nodes"));
    let verbose = show(Some("util-linux-historical/ia64-512cpus"), true);
    assert!(verbose.lines().count() > 512);
}

/// nto worker1: siblings N/N+40 shown together, node 0 = the even CPUs as
/// its node0/cpulist says, nohz_full from the command line.
#[test]
fn siblings_and_nodes_on_a_real_machine() {
    let m = machine("nto/bare-metal-worker1.internal");
    let text = show(Some("nto/bare-metal-worker1.internal"), false);
    let node0 = std::fs::read_to_string(m.join("sys/devices/system/node/node0/cpulist")).unwrap();
    let set = pinrun::cpuset::CpuSet::parse_sysfs_list(&node0, None).unwrap();
    assert!(
        text.contains(&format!("node 0: CPUs {}", set.to_compact_list())),
        "{text}"
    );
    let sib = std::fs::read_to_string(
        m.join("sys/devices/system/cpu/cpu2/topology/thread_siblings_list"),
    )
    .unwrap();
    let sib = pinrun::cpuset::CpuSet::parse_sysfs_list(&sib, None).unwrap();
    assert_eq!(sib.to_list(), "2,42");
    assert!(text.contains(" 2~^+42~^ "), "{text}");
    assert!(text.contains("nohz_full (~): 0-4,11-79"));
}

#[test]
fn live_show_names_node0() {
    let text = show(None, false);
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
    let set = pinrun::cpuset::CpuSet::parse_sysfs_list(&node0, None).unwrap();
    assert!(
        text.contains(&format!("node 0: CPUs {}", set.to_compact_list())),
        "{text}"
    );
}

/// A dump without /proc/irq/N (nto's 112-CPU master keeps only
/// /proc/interrupts' 1862 device IRQs) does not know where its IRQs go:
/// `--show` says unknown, never "on CPUs none", and marks no CPU `^`;
/// a dump with the files still names the CPUs.
#[test]
fn device_irqs_of_unknown_affinity_are_not_on_no_cpu() {
    let text = show(Some("nto/bare-metal-master.internal"), false);
    assert!(
        text.contains("device IRQs: 1862, on CPUs unknown (no readable /proc/irq/N affinity)"),
        "{text}"
    );
    assert!(!text.contains("on CPUs none"), "{text}");
    assert!(!text.contains('^'), "{text}");
    let text = show(Some("nto/bare-metal-worker1.internal"), false);
    assert!(text.contains("device IRQs (^): "), "{text}");
}
