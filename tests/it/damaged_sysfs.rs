//! Damaged or hand-made sysfs IRQ trees (found by a break test): directory
//! entries that only look like numbers (`+1`, `001`) are not IRQs, CPUs or
//! nodes (the kernel names them in canonical decimal), and an empty
//! `per_cpu_count` leaves a count unknown.

use crate::common;
use common::{at, write_file};
use serde_json::Value;

/// A minimal 4-CPU machine with IRQ 1 on CPU 1, in both sources.
fn machine(root: &std::path::Path) {
    write_file(root, "sys/devices/system/cpu/possible", "0-3\n");
    write_file(root, "sys/devices/system/cpu/present", "0-3\n");
    write_file(root, "sys/devices/system/cpu/online", "0-3\n");
    for c in 0..4 {
        write_file(
            root,
            &format!("sys/devices/system/cpu/cpu{c}/topology/core_cpus_list"),
            &format!("{c}\n"),
        );
    }
    write_file(
        root,
        "proc/interrupts",
        "           CPU0       CPU1       CPU2       CPU3\n  1:          0         37          0          0  IO-APIC   1-edge      dev1\n",
    );
    write_file(root, "proc/irq/1/effective_affinity_list", "1\n");
    for (f, t) in [
        ("actions", "dev1\n"),
        ("per_cpu_count", "0,37,0,0\n"),
        ("chip_name", "IO-APIC\n"),
        ("hwirq", "1\n"),
        ("name", "edge\n"),
        ("type", "edge\n"),
    ] {
        write_file(root, &format!("sys/kernel/irq/1/{f}"), t);
    }
}

fn irq_findings(root: &std::path::Path) -> Vec<Value> {
    let out = at(root, &["--check", "--json", "--cpus", "1"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "irq-on-cpu")
        .cloned()
        .collect()
}

/// `/sys/kernel/irq/+1` and `/sys/kernel/irq/001` are not IRQ 1 (found by
/// a break test: `"+1".parse::<u32>()` is Ok, and IRQ 1 was reported three
/// times); IRQ 1 is reported once, as on the `/proc/interrupts` path.
#[test]
fn sysfs_irq_dir_aliases_give_one_finding() {
    let dir = common::tempdir();
    machine(dir.path());
    assert_eq!(irq_findings(dir.path()).len(), 1);
    std::fs::create_dir_all(dir.path().join("sys/kernel/irq/+1")).unwrap();
    std::fs::create_dir_all(dir.path().join("sys/kernel/irq/001")).unwrap();
    assert_eq!(
        irq_findings(dir.path()).len(),
        1,
        "IRQ 1 reported once per directory alias"
    );
}

/// An empty `per_cpu_count`, or one damaged from its first field, leaves
/// the count unknown and says so, rather than "ends before CPU 0" (found by
/// a break test); a field past 2^64 (the kernel's per-CPU counts are
/// `unsigned int`) is damage, not a count of 18446744073709551615 (found by
/// the round-4 break test).
#[test]
fn empty_per_cpu_count_says_unknown() {
    for (text, note) in [
        ("", "per_cpu_count is empty, unreadable or damaged"),
        ("abc,7\n", "per_cpu_count is empty, unreadable or damaged"),
        (
            "99999999999999999999999,99999999999999999999999\n",
            "per_cpu_count holds a count past 2^64 (damaged)",
        ),
    ] {
        let dir = common::tempdir();
        machine(dir.path());
        write_file(dir.path(), "sys/kernel/irq/1/per_cpu_count", text);
        let f = irq_findings(dir.path());
        assert_eq!(f.len(), 1, "{text:?}");
        let d = &f[0]["irq_details"][0];
        assert_eq!(d["count"], Value::Null, "{text:?}");
        assert_eq!(d["count_note"], note, "{text:?}");
        let msg = f[0]["message"].as_str().unwrap();
        assert!(
            msg.contains("may have fired") && msg.contains(&format!("(count unknown: {note})")),
            "{text:?}: {msg}"
        );
        assert!(!msg.contains("18446744073709551615"), "{msg}");
    }
}
