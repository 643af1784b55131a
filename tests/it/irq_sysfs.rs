//! IRQs from `/sys/kernel/irq` (names and counts read only for the IRQs on
//! the checked CPUs) give the findings that `/proc/interrupts` gives.
//!
//! One synthetic machine is written with both sources, consistent as a
//! kernel shows them (`kernel/irq/proc.c` `show_interrupts`,
//! `kernel/irq/irqdesc.c` sysfs attributes), then replayed three ways:
//! whole (the sysfs path), without `sys/kernel/irq` (the `/proc/interrupts`
//! path, as on old kernels and in the fixture dumps) and without
//! `proc/interrupts` (showing that the sysfs path never reads it). One IRQ
//! can have its `per_cpu_count` cut inside a page (`cut`), as the kernel
//! cuts it past about 2000 CPUs: its count on CPUs past the cut is then
//! reported as unknown, the one place where the two sources' messages
//! differ.

use crate::common;
use common::{at, ids, write_file};
use serde_json::Value;
use std::path::Path;

/// One IRQ of the synthetic machine.
struct Irq {
    n: u32,
    /// `actions` (sysfs joins several by `,`).
    actions: &'static str,
    chip: &'static str,
    hwirq: &'static str,
    /// `name` (the flow handler: `edge`, `fasteoi`).
    name: &'static str,
    /// Counts of the possible CPUs 0-7 (CPU 6 is offline).
    counts: [u64; 8],
    /// `/proc/irq/N/` file and contents, when the directory exists.
    affinity: Option<(&'static str, &'static str)>,
    /// The text of `per_cpu_count` when not the counts in full (a cut page).
    per_cpu_count: Option<&'static str>,
    /// Whether `/proc/interrupts` lists it (a numbered row).
    listed: bool,
}

const ONLINE: [u32; 7] = [0, 1, 2, 3, 4, 5, 7];

fn irqs() -> Vec<Irq> {
    let irq = |n, actions, counts, affinity, listed| Irq {
        n,
        actions,
        chip: "IO-APIC",
        hwirq: "",
        name: "edge",
        counts,
        affinity,
        per_cpu_count: None,
        listed,
    };
    let eff = |list| Some(("effective_affinity_list", list));
    vec![
        Irq {
            hwirq: "2",
            ..irq(0, "timer", [50, 0, 0, 0, 0, 0, 0, 0], eff("0\n"), true)
        },
        Irq {
            hwirq: "9",
            name: "fasteoi",
            ..irq(9, "acpi", [0, 3, 0, 0, 0, 0, 0, 0], eff("1\n"), true)
        },
        // Two actions whose names have spaces; several CPUs hit.
        Irq {
            chip: "PCI-MSI",
            hwirq: "16",
            ..irq(
                16,
                "PCIe PME,pciehp",
                [0, 5, 7, 11, 0, 0, 0, 0],
                Some(("smp_affinity_list", "1-3\n")),
                true,
            )
        },
        // A handler was freed: no action, no count; /proc/irq/17 stays.
        irq(17, "", [0; 8], eff("1\n"), false),
        // No action but counts on an online CPU: /proc/interrupts lists it.
        Irq {
            hwirq: "18",
            name: "fasteoi",
            ..irq(18, "", [0, 4, 0, 0, 0, 0, 0, 0], eff("1\n"), true)
        },
        // No /proc/irq/19: placed by its counts.
        Irq {
            chip: "PCI-MSI",
            hwirq: "19",
            ..irq(19, "eth0", [0, 0, 9, 0, 0, 0, 0, 0], None, true)
        },
        // A chained handler (its action has no name), no count.
        irq(20, "(null)", [0; 8], None, false),
        // arm64's hidden IPI descriptor: an IPI0 row instead.
        Irq {
            chip: "GICv3",
            hwirq: "1",
            name: "",
            ..irq(
                21,
                "IPI",
                [8, 8, 8, 8, 8, 8, 0, 8],
                Some(("smp_affinity_list", "0-7\n")),
                false,
            )
        },
        // No action, counts only on the offline CPU: /proc/interrupts
        // looks at online CPUs only and leaves it out.
        irq(25, "", [0, 0, 0, 0, 0, 0, 3, 0], eff("6\n"), false),
        // Kernel-managed (debugfs).
        Irq {
            chip: "PCI-MSIX-0000:00:04.0",
            hwirq: "1",
            ..irq(22, "nvme0q1", [0, 0, 21, 0, 0, 0, 0, 0], eff("2\n"), true)
        },
        // Counts of the offline CPU 6 are in per_cpu_count, not in
        // /proc/interrupts; CPU 7's are the 8th field.
        Irq {
            chip: "PCI-MSI",
            hwirq: "23",
            ..irq(
                23,
                "virtio-late",
                [0, 0, 0, 0, 0, 0, 5, 42],
                eff("7\n"),
                true,
            )
        },
        // per_cpu_count cut (as at the end of its page) before CPU 7's
        // count: that count is unknown.
        Irq {
            chip: "PCI-MSI",
            hwirq: "24",
            per_cpu_count: Some("0,0,0,0,0,9,0,"),
            ..irq(24, "big-q0", [0, 0, 0, 0, 0, 9, 0, 130], eff("5,7\n"), true)
        },
    ]
}

/// The three ways other tests replay [`machine`], as its arguments
/// (`sysfs`, `interrupts`, `cut`): both IRQ sources; sysfs alone with a
/// cut `per_cpu_count`; `/proc/interrupts` alone.
pub(crate) const WAYS: [(bool, bool, bool); 3] = [
    (true, true, false),
    (true, false, true),
    (false, true, false),
];

/// The machine: 8 possible CPUs, 6 offline; each CPU a core of its own;
/// with `cut`, IRQ 24's `per_cpu_count` is cut inside CPU 7's count.
pub(crate) fn machine(sysfs: bool, interrupts: bool, cut: bool) -> tempfile::TempDir {
    let dir = common::tempdir();
    let root = dir.path();
    let cpu = "sys/devices/system/cpu";
    for (f, t) in [
        ("possible", "0-7\n"),
        ("present", "0-7\n"),
        ("online", "0-5,7\n"),
        ("isolated", "\n"),
        ("nohz_full", "  (null)\n"),
    ] {
        write_file(root, &format!("{cpu}/{f}"), t);
    }
    for c in 0..8 {
        if c == 6 {
            write_file(root, &format!("{cpu}/cpu6/online"), "0\n");
            continue;
        }
        let t = format!("{cpu}/cpu{c}/topology");
        write_file(root, &format!("{t}/core_cpus_list"), &format!("{c}\n"));
        write_file(root, &format!("{t}/core_id"), &format!("{c}\n"));
        write_file(root, &format!("{t}/physical_package_id"), "0\n");
    }
    let node = "sys/devices/system/node/node0";
    write_file(root, &format!("{node}/cpulist"), "0-7\n");
    write_file(root, &format!("{node}/distance"), "10\n");
    write_file(
        root,
        &format!("{node}/meminfo"),
        "Node 0 MemTotal: 8388608 kB\nNode 0 MemFree: 4194304 kB\n",
    );
    write_file(root, "proc/cmdline", "ro quiet\n");
    write_file(root, "proc/irq/default_smp_affinity", "01\n");
    write_file(
        root,
        "sys/kernel/debug/irq/irqs/22",
        "handler:  handle_edge_irq\nstate:    0x00000000\n            IRQD_AFFINITY_MANAGED\n",
    );
    // kernel/irq/proc.c: "%*d: ", "%10u " per online CPU, " %8s" chip,
    // " %*lu" hwirq, "-%-8s" name, "  " actions joined by ", ".
    let mut text = String::from("           ");
    for c in ONLINE {
        text.push_str(&format!("CPU{c:<8}"));
    }
    text.push('\n');
    for i in irqs() {
        if let Some((file, list)) = i.affinity {
            write_file(root, &format!("proc/irq/{}/{file}", i.n), list);
        }
        let s = format!("sys/kernel/irq/{}", i.n);
        let counts: Vec<String> = i.counts.iter().map(u64::to_string).collect();
        let pcc = i
            .per_cpu_count
            .filter(|_| cut)
            .map_or_else(|| format!("{}\n", counts.join(",")), str::to_string);
        let line = |t: &str| {
            if t.is_empty() {
                String::new()
            } else {
                format!("{t}\n")
            }
        };
        if sysfs {
            for (f, t) in [
                ("actions", line(i.actions)),
                ("per_cpu_count", pcc),
                ("chip_name", line(i.chip)),
                ("hwirq", line(i.hwirq)),
                ("type", "edge\n".to_string()),
                ("name", line(i.name)),
                ("wakeup", "disabled\n".to_string()),
            ] {
                write_file(root, &format!("{s}/{f}"), &t);
            }
        }
        if i.listed {
            text.push_str(&format!("{:>3}: ", i.n));
            for c in ONLINE {
                text.push_str(&format!("{:>10} ", i.counts[c as usize]));
            }
            text.push_str(&format!(" {:>8} {:>3}-{:<8}", i.chip, i.hwirq, i.name));
            if !i.actions.is_empty() {
                text.push_str(&format!("  {}", i.actions.replace(',', ", ")));
            }
            text.push('\n');
        }
    }
    text.push_str("IPI0:          8          8          8          8          8          8          8       Rescheduling interrupts\n");
    text.push_str("LOC:        100        100        100        100        100        100        100   Local timer interrupts\n");
    if interrupts {
        write_file(root, "proc/interrupts", &text);
    }
    dir
}

/// stdout of `pinrun --sysroot root args`.
fn run(root: &Path, args: &[&str]) -> String {
    let out = at(root, args);
    String::from_utf8(out.stdout).unwrap()
}

/// The IRQ findings of `--check --json args`: (code, IRQs, message).
/// Each IRQ of the IRQ findings (one per kind, issue 16), by number: its
/// code, `[number]` and its `irq_details` entry as
/// `name|cpus|source = affinity|count|count_note`.
fn irq_findings(root: &Path, args: &[&str]) -> Vec<(String, Vec<u32>, String)> {
    let mut argv = vec!["--check", "--json"];
    argv.extend(args);
    let v: Value = serde_json::from_str(&run(root, &argv)).unwrap();
    let mut out: Vec<(String, Vec<u32>, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "irq-on-cpu" || f["code"] == "managed-irq-on-cpu")
        .flat_map(|f| {
            let code = f["code"].as_str().unwrap().to_string();
            f["irq_details"].as_array().unwrap().iter().map(move |d| {
                (
                    code.clone(),
                    vec![d["irq"].as_u64().unwrap() as u32],
                    format!(
                        "{}|{}|{} = {}|{}|{}",
                        d["name"].as_str().unwrap(),
                        ids(&d["cpus"])
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                        d["source"].as_str().unwrap(),
                        d["affinity"].as_str().unwrap(),
                        d["count"],
                        d["count_note"].as_str().unwrap_or("")
                    ),
                )
            })
        })
        .collect();
    out.sort_by_key(|x| x.1.clone());
    out
}

const REQUESTS: &[&[&str]] = &[
    &["--check", "--json"],
    &["--check", "--json", "--cpus", "0"],
    &["--check", "--json", "--cpus", "1"],
    &["--check", "--json", "--cpus", "2"],
    &["--check", "--json", "--cpus", "3"],
    &["--check", "--json", "--cpus", "1-2"],
    &["--check", "--json", "--cpus", "1-3,7"],
    &["--check", "--json", "--cpus", "6"],
    &["--check", "--json", "--cpus", "7"],
    &["--check", "--json", "--cores", "2"],
    &["--dry-run", "--json", "--cores", "1"],
    &["--dry-run", "--cpus", "1"],
    &["--show"],
    &["--show", "--json"],
    &["--show", "-v"],
];

/// Same output from both sources for every request, --show included.
#[test]
fn sysfs_irqs_give_the_findings_of_proc_interrupts() {
    let both = machine(true, true, false);
    let old = machine(false, true, false);
    for args in REQUESTS {
        let a = run(old.path(), args);
        assert!(!a.is_empty(), "{args:?}: no output");
        assert_eq!(run(both.path(), args), a, "{args:?}");
    }
}

/// What the findings say on the sysfs path (and so on both).
#[test]
fn sysfs_irq_edge_cases() {
    let m = machine(true, true, true);
    let f = irq_findings(m.path(), &["--cpus", "1-2"]);
    let msg = |n: u32| {
        f.iter()
            .find(|x| x.1 == [n])
            .map(|x| x.2.clone())
            .unwrap_or_default()
    };
    let numbers: Vec<u32> = f.iter().flat_map(|x| x.1.clone()).collect();
    // 17 (no handler, no count), 20 (chained), 21 (IPI) are not device
    // IRQs; 18 has counts without a handler and is named by its trigger.
    assert_eq!(numbers, vec![9, 16, 18, 19, 22], "{f:#?}");
    // Shared names with spaces: the last action names it; counts summed
    // over the hit CPUs 1 and 2 only (not CPU 3's 11).
    assert!(
        msg(16).starts_with("pciehp|1,2|smp_affinity_list = 1-3|12|"),
        "{}",
        msg(16)
    );
    assert!(msg(18).starts_with("18-fasteoi|"), "{}", msg(18));
    assert!(
        msg(19)
            .ends_with("|CPUs with interrupt counts; no readable affinity in /proc/irq/N = 2|9|"),
        "{}",
        msg(19)
    );
    assert_eq!(
        f.iter().find(|x| x.1 == [22]).unwrap().0,
        "managed-irq-on-cpu"
    );
    // CPU 7 is the 8th field of per_cpu_count (CPU 6, offline, the 7th);
    // IRQ 24's cut page lacks CPU 7: reported, its count there unknown.
    let f = irq_findings(m.path(), &["--cpus", "7"]);
    let numbers: Vec<u32> = f.iter().flat_map(|x| x.1.clone()).collect();
    assert_eq!(numbers, vec![23, 24], "{f:#?}");
    assert!(f[0].2.ends_with("|42|"), "{}", f[0].2);
    assert!(
        f[1].2 == "big-q0|7|effective_affinity_list = 5,7|null|per_cpu_count ends before CPU 7",
        "{}",
        f[1].2
    );
    // Hit CPUs on both sides of the cut: the known part is counted.
    let g = irq_findings(m.path(), &["--cpus", "0-5,7"]);
    let msg = &g.iter().find(|x| x.1 == [24]).unwrap().2;
    assert!(
        msg == "big-q0|5,7|effective_affinity_list = 5,7|9|counted on CPU 5 only: per_cpu_count ends before CPU 7",
        "{msg}"
    );
}

/// With /sys/kernel/irq, /proc/interrupts is never read: removing it
/// changes nothing, cut pages included.
#[test]
fn sysfs_path_does_not_read_proc_interrupts() {
    for cut in [false, true] {
        let both = machine(true, true, cut);
        let sysfs_only = machine(true, false, cut);
        for args in [
            &["--cpus", "0"][..],
            &["--cpus", "1-2"],
            &["--cpus", "3"],
            &["--cpus", "1-5"],
            &["--cpus", "7"],
            &["--cpus", "0-5,7"],
        ] {
            assert_eq!(
                irq_findings(sysfs_only.path(), args),
                irq_findings(both.path(), args),
                "{args:?} cut={cut}"
            );
        }
    }
}

/// Counts at `u64::MAX` (a hostile dump: the kernel prints its per-CPU
/// `unsigned int` counts with `%u`, so no real count comes near) and
/// 20-digit fields past it saturate: never a wrapped sum nor a panic, and
/// a saturated total is said to be damage ("count unknown: … holds a count
/// past 2^64 (damaged)", naming the file read), not shown as a count; a
/// count past `u64::MAX` in `/proc/interrupts` keeps the columns after it
/// (IRQ 9's 3 on CPU 1). Both sources, a check and a verbose dry run.
#[test]
fn hostile_counts_saturate() {
    const MAX: &str = "18446744073709551615";
    for sysfs in [true, false] {
        let m = machine(sysfs, true, false);
        let root = m.path();
        if sysfs {
            // IRQ 16 on CPUs 1-3, IRQ 9 on CPU 1.
            write_file(
                root,
                "sys/kernel/irq/16/per_cpu_count",
                &format!("0,{MAX},{MAX},0,0,0,0,0\n"),
            );
            write_file(
                root,
                "sys/kernel/irq/9/per_cpu_count",
                "99999999999999999999,3,0,0,0,0,0,0\n",
            );
        } else {
            let p = root.join("proc/interrupts");
            let text = std::fs::read_to_string(&p).unwrap();
            let text: String = text
                .lines()
                .map(|l| match l.split_once(':').map(|(id, _)| id.trim()) {
                    Some("16") => {
                        format!(" 16: 0 {MAX} {MAX} 0 0 0 0 PCI-MSI 16-edge PCIe PME, pciehp\n")
                    }
                    Some("9") => {
                        "  9: 99999999999999999999 3 0 0 0 0 0 IO-APIC 9-fasteoi acpi\n".to_string()
                    }
                    _ => format!("{l}\n"),
                })
                .collect();
            std::fs::write(&p, text).unwrap();
        }
        for args in [
            &["--check", "--cpus", "1-2"][..],
            &["--dry-run", "-v", "--cpus", "1-2", "--fifo", "10"][..],
        ] {
            let out = at(root, args);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "sysfs {sysfs} {args:?}: {out:?}"
            );
            let text = String::from_utf8(out.stdout).unwrap();
            let file = if sysfs {
                "per_cpu_count"
            } else {
                "/proc/interrupts"
            };
            assert!(
                text.contains(&format!(
                    "16 pciehp (count unknown: {file} holds a count past 2^64 (damaged))"
                )) && !text.contains(MAX),
                "sysfs {sysfs} {args:?}:\n{text}"
            );
        }
        let nine: Vec<_> = irq_findings(root, &["--cpus", "1"])
            .into_iter()
            .filter(|f| f.1 == [9])
            .collect();
        assert_eq!(nine.len(), 1, "sysfs {sysfs}: {nine:?}");
        assert!(nine[0].2.ends_with("|3|"), "sysfs {sysfs}: {nine:?}");
    }
}

/// The irq-on-cpu finding and hint of `--check --json --cpus cpus`.
fn irq_on_cpu(root: &Path, cpus: &str) -> Value {
    let v: Value =
        serde_json::from_str(&run(root, &["--check", "--json", "--cpus", cpus])).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "irq-on-cpu")
        .cloned()
        .unwrap_or(Value::Null)
}

/// After `echo 0 > /proc/irq/9/smp_affinity_list` on x86 the effective
/// affinity keeps CPU 1 until IRQ 9 fires again (`irq_move_irq()`,
/// `kernel/irq/migration.c`): IRQ 9 is still counted on CPU 1, named
/// "move pending", and left out of the hint's loop, on both IRQ sources.
/// An IRQ whose only file is `smp_affinity_list` (16) or whose
/// `smp_affinity_list` still includes the CPU (18) is not pending.
#[test]
fn pending_irq_moves_are_not_hinted_again() {
    for sysfs in [true, false] {
        let m = machine(sysfs, true, false);
        write_file(m.path(), "proc/irq/9/smp_affinity_list", "0\n");
        write_file(m.path(), "proc/irq/18/smp_affinity_list", "0-1\n");
        let f = irq_on_cpu(m.path(), "1");
        assert_eq!(f["irqs"], serde_json::json!([9, 16, 18]), "{f:#}");
        let pending: Vec<u64> = f["irq_details"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["move_pending"] == true)
            .map(|d| d["irq"].as_u64().unwrap())
            .collect();
        assert_eq!(pending, vec![9], "{f:#}");
        let msg = f["message"].as_str().unwrap();
        assert!(msg.starts_with("3 IRQs fired on CPU 1"), "{msg}");
        assert!(msg.contains("; move pending for IRQ 9 ("), "{msg}");
        let hint = f["hint"].as_str().unwrap();
        assert!(
            hint.contains("for i in 16 18; do echo 0,2-5,7 > /proc/irq/$i/smp_affinity_list; done"),
            "{hint}"
        );
        // Every IRQ's move asked for: nothing left to write.
        write_file(m.path(), "proc/irq/16/effective_affinity_list", "1\n");
        write_file(m.path(), "proc/irq/16/smp_affinity_list", "2\n");
        write_file(m.path(), "proc/irq/18/smp_affinity_list", "3\n");
        let f = irq_on_cpu(m.path(), "1");
        let hint = f["hint"].as_str().unwrap();
        assert!(
            hint.starts_with("nothing to write: they are already asked to leave CPU 1"),
            "{hint}"
        );
        assert!(!hint.contains("/proc/irq/"), "{hint}");
    }
}

/// Every online CPU checked: the irq-on-cpu hint has no CPU to name (no
/// `<housekeeping CPUs>` placeholder, no IRQBALANCE_BANNED_CPULIST banning
/// every CPU), as the default-irq-affinity hint says.
#[test]
fn no_housekeeping_cpu_left_to_move_irqs_to() {
    let m = machine(true, true, false);
    let f = irq_on_cpu(m.path(), "0-5,7");
    assert_eq!(
        f["hint"],
        "every online CPU is checked: no housekeeping CPU left to move them to; leave at least one CPU out of the checked ones for IRQs"
    );
    // One CPU left: it is the target.
    let f = irq_on_cpu(m.path(), "1-5,7");
    let hint = f["hint"].as_str().unwrap();
    assert!(hint.contains("echo 0 > /proc/irq/"), "{hint}");
}
