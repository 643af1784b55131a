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

/// Lists written for a tool are in the kernel's own form, and the README
/// and pinrun(1) say where the stride form appears instead (a new user's
/// trial: both said "Output is always canonical kernel ranges" while
/// `--show` printed a package as `CPUs 0-30:2`). On the dump whose kernel
/// wrote cpu0's `core_siblings_list` as `0,2,4,…,30`: `--dry-run --json`'s
/// `cpulist` is that text byte for byte, from the kernel's list and from
/// the stride form alike; `--show` writes the stride form; the docs say so.
#[test]
fn lists_for_tools_are_the_kernels_and_the_docs_say_where_strides_are() {
    let rel = "cadvisor/xeon5218_nohyperthread_2socket_nohotplug";
    let kernel = std::fs::read_to_string(
        machine(rel).join("sys/devices/system/cpu/cpu0/topology/core_siblings_list"),
    )
    .unwrap()
    .trim()
    .to_string();
    let evens: Vec<String> = (0..=30).step_by(2).map(|c| c.to_string()).collect();
    assert_eq!(kernel, evens.join(","));
    for given in [kernel.as_str(), "0-30:2"] {
        let v = common::dry_json(rel, &["--dry-run", "--cpus", given]);
        assert_eq!(v["cpulist"], kernel.as_str(), "--cpus {given}");
    }
    let text = show(Some(rel), false);
    assert!(text.contains("CPUs 0-30:2"), "{text}");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for doc in ["README.md", "man/pinrun.1"] {
        let words = std::fs::read_to_string(root.join(doc))
            .unwrap()
            .replace("\\-", "-")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(!words.contains("Output is always canonical"), "{doc}");
        assert!(
            words.contains("in the kernel's own form")
                && words.contains("in the stride form (")
                && words.contains("0-30:2"),
            "{doc} should say which lists are the kernel's and which use strides"
        );
    }
}
