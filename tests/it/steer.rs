//! `--steer-irqs` planned on real dumps (issue 21): `--dry-run --json`
//! lists every IRQ whose `smp_affinity_list` (as the dump's files say)
//! includes a claimed CPU, where it goes (what remains of it among the
//! online CPUs, else the housekeeping CPUs of the device's node), which
//! cannot move and why; the refusals of the options.

use crate::common::{self, assert_status, dry_json, ids, machine, pinrun};
use pinrun::cpuset::CpuSet;
use std::collections::BTreeMap;
use std::path::Path;

/// Every `/proc/irq/N/smp_affinity_list` of a dump, parsed from its files.
fn dump_irqs(root: &Path) -> BTreeMap<u32, CpuSet> {
    std::fs::read_dir(root.join("proc/irq"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let n: u32 = e.file_name().to_str()?.parse().ok()?;
            let t = std::fs::read_to_string(e.path().join("smp_affinity_list")).ok()?;
            Some((n, CpuSet::parse_sysfs_list(&t, None).unwrap()))
        })
        .collect()
}

fn set(v: &serde_json::Value) -> CpuSet {
    let mut s = CpuSet::new();
    for c in ids(v) {
        s.insert(c);
    }
    s
}

/// OpenShift's GCP worker (possible CPUs 0-1, nohz_full=1,
/// isolcpus=managed_irq,1): every IRQ listing CPU 1 moves to CPU 0, the
/// only online CPU left, including those whose masks name CPUs 2-3 that
/// the machine does not have (never written back: the kernel would refuse
/// them).
#[test]
fn gcp_worker_every_irq_on_cpu_1_goes_to_cpu_0() {
    let rel = "nto/e2e-gcp-worker-a";
    let irqs = dump_irqs(&machine(rel));
    let on_1: Vec<u32> = irqs
        .iter()
        .filter(|(_, s)| s.contains(1))
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(on_1.len(), 29, "the dump's IRQs listing CPU 1");
    let v = dry_json(
        rel,
        &["--dry-run", "--exclusive", "--steer-irqs", "--cpus", "1"],
    );
    let s = &v["steer_irqs"];
    assert_eq!(ids(&s["cpus"]), vec![1]);
    // Housekeeping: online 0-1 minus nohz_full 1 (cpu/nohz_full absent:
    // the command line's nohz_full=1).
    assert_eq!(ids(&s["housekeeping"]), vec![0]);
    let moves = s["move"].as_array().unwrap();
    let moved: Vec<u32> = moves
        .iter()
        .map(|m| m["irq"].as_u64().unwrap() as u32)
        .collect();
    assert_eq!(moved, on_1);
    for m in moves {
        let n = m["irq"].as_u64().unwrap() as u32;
        assert_eq!(set(&m["from"]), irqs[&n], "IRQ {n}");
        assert_eq!(ids(&m["to"]), vec![0], "IRQ {n}");
        // Housekeeping fallback exactly when the dump's list is CPU 1 alone.
        assert_eq!(
            m["housekeeping"].as_bool().unwrap(),
            irqs[&n].to_list() == "1",
            "IRQ {n}"
        );
    }
    assert_eq!(s["unmovable"].as_array().unwrap().len(), 0);
    // default_smp_affinity is "f" in the dump: CPUs 0-3.
    assert_eq!(ids(&s["default_smp_affinity"]["from"]), vec![0, 1, 2, 3]);
    assert_eq!(ids(&s["default_smp_affinity"]["to"]), vec![0]);
}

/// The 80-CPU bare-metal worker (nohz_full=0-4,11-79, node 0 the even
/// CPUs): claiming CPU 2 claims its core (2 and 42); an IRQ on those
/// alone goes to the housekeeping CPUs of its device's node (5-10 ∩ node
/// 0 = 6,8,10), never to a nohz_full CPU.
#[test]
fn bare_metal_housekeeping_is_the_devices_node_and_never_nohz_full() {
    let rel = "nto/bare-metal-worker1.internal";
    let root = machine(rel);
    let irqs = dump_irqs(&root);
    let v = dry_json(
        rel,
        &["--dry-run", "--exclusive", "--steer-irqs", "--cpus", "2"],
    );
    let s = &v["steer_irqs"];
    assert_eq!(ids(&s["cpus"]), vec![2, 42]);
    assert_eq!(ids(&s["housekeeping"]), vec![5, 6, 7, 8, 9, 10]);
    let claimed: CpuSet = set(&s["cpus"]);
    let expected: Vec<u32> = irqs
        .iter()
        .filter(|(_, a)| a.intersects(&claimed))
        .map(|(n, _)| *n)
        .collect();
    let moves = s["move"].as_array().unwrap();
    let moved: Vec<u32> = moves
        .iter()
        .map(|m| m["irq"].as_u64().unwrap() as u32)
        .collect();
    assert_eq!(moved, expected);
    let mut fallbacks = 0;
    for m in moves {
        let n = m["irq"].as_u64().unwrap() as u32;
        let to = set(&m["to"]);
        assert!(!to.intersects(&claimed), "IRQ {n}");
        if m["housekeeping"].as_bool().unwrap() {
            fallbacks += 1;
            let node = std::fs::read_to_string(root.join(format!("proc/irq/{n}/node")))
                .unwrap()
                .trim()
                .to_string();
            let want = if node == "0" { "6,8,10" } else { "5,7,9" };
            assert_eq!(to.to_list(), want, "IRQ {n} of node {node}");
        } else {
            assert_eq!(to, irqs[&n].difference(&claimed), "IRQ {n}");
        }
    }
    assert!(fallbacks > 0);
    // --irq-housekeeping overrides the fallback.
    let v = dry_json(
        rel,
        &[
            "--dry-run",
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            "2",
            "--irq-housekeeping",
            "11",
        ],
    );
    for m in v["steer_irqs"]["move"].as_array().unwrap() {
        if m["housekeeping"].as_bool().unwrap() {
            assert_eq!(ids(&m["to"]), vec![11]);
        }
    }
}

/// A kernel-managed IRQ (debugfs `IRQD_AFFINITY_MANAGED`, as
/// `kernel/irq/debugfs.c` prints the state) is listed as unmovable with
/// its reason, never as a move; the text says so.
#[test]
fn managed_irqs_are_unmovable_and_said_why() {
    let dir = common::tempdir();
    common::copy_tree(&machine("nto/e2e-gcp-worker-a"), dir.path());
    let files = dump_irqs(dir.path());
    common::write_file(
        dir.path(),
        "sys/kernel/debug/irq/irqs/33",
        "handler:  handle_edge_irq\ndstate:   0x3660a200\n            IRQD_ACTIVATED\n            IRQD_IRQ_STARTED\n            IRQD_SINGLE_TARGET\n            IRQD_AFFINITY_MANAGED\n",
    );
    common::write_file(
        dir.path(),
        "sys/kernel/debug/irq/irqs/34",
        "handler:  handle_edge_irq\ndstate:   0x3400a200\n            IRQD_ACTIVATED\n",
    );
    let out = common::at(
        dir.path(),
        &[
            "--dry-run",
            "--json",
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            "1",
        ],
    );
    assert_status(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["steer_irqs"];
    let un = s["unmovable"].as_array().unwrap();
    assert_eq!(un.len(), 1);
    assert_eq!(un[0]["irq"], 33);
    assert!(un[0]["why"].as_str().unwrap().starts_with("kernel-managed"));
    assert_eq!(un[0]["managed"], true);
    assert!(s["move"].as_array().unwrap().iter().all(|m| m["irq"] != 33));
    // 34's debugfs state has no IRQD_AFFINITY_MANAGED: known unmanaged;
    // the others have no debugfs file: unknown. Below --sysroot pinrun
    // never asks a kernel with a test write (the live one's IRQs are not
    // the dump's; the dump's files are data, left as they were).
    for m in s["move"].as_array().unwrap() {
        let want = if m["irq"] == 34 {
            serde_json::json!(false)
        } else {
            serde_json::Value::Null
        };
        assert_eq!(m["managed"], want, "{m}");
    }
    assert!(s["move"].as_array().unwrap().iter().any(|m| m["irq"] == 34));
    let out = common::at(
        dir.path(),
        &["--dry-run", "--exclusive", "--steer-irqs", "--cpus", "1"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("irqs:    cannot move IRQ 33 on CPU 1: kernel-managed"),
        "{text}"
    );
    assert!(
        text.contains("irqs:    move IRQ 34 from CPU 1 to CPU 0 (housekeeping)"),
        "{text}"
    );
    assert!(
        text.contains("irqs:    default_smp_affinity 0-3 -> 0"),
        "{text}"
    );
    assert_eq!(dump_irqs(dir.path()), files);
}

#[test]
fn steer_options_refused_without_their_base() {
    let out = pinrun()
        .args(["--steer-irqs", "--cpus", "0", "--", "true"])
        .output()
        .unwrap();
    assert_status(&out, 125);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("pinrun: --steer-irqs: IRQs are moved off claimed CPUs only"),
        "{e}"
    );
    assert!(e.contains("hint: add --exclusive"), "{e}");
    let out = pinrun()
        .args(["--irq-housekeeping", "0", "--cpus", "0", "--", "true"])
        .output()
        .unwrap();
    assert_status(&out, 125);
    let out = pinrun()
        .args([
            "--exclusive",
            "--steer-irqs",
            "--irq-housekeeping",
            "0-x",
            "--cpus",
            "0",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_status(&out, 125);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--irq-housekeeping: \"0-x\" is not a cpulist")
    );
    // --irqbalance-config edits irqbalance's file for steering only.
    let out = pinrun()
        .args(["--irqbalance-config", "--cpus", "0", "--", "true"])
        .output()
        .unwrap();
    assert_status(&out, 125);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains(
            "pinrun: --irqbalance-config: only IRQ steering edits irqbalance's configuration"
        ) && e.contains("hint: add --exclusive --steer-irqs, or drop --irqbalance-config"),
        "{e}"
    );
    // Without --steer-irqs the plan has no steer_irqs key.
    let v = dry_json(
        "nto/e2e-gcp-worker-a",
        &["--dry-run", "--exclusive", "--cpus", "1"],
    );
    assert!(v.get("steer_irqs").is_none());
}

/// `--reclaim` with nothing to undo says so (it printed nothing): an
/// empty state directory, and one that does not exist.
#[test]
fn reclaim_with_nothing_to_undo_says_so() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("none");
    for dir in [d.path(), missing.as_path()] {
        let out = pinrun()
            .arg("--reclaim")
            .arg("--state-dir")
            .arg(dir)
            .output()
            .unwrap();
        assert_status(&out, 0);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("pinrun: nothing to reclaim in {}\n", dir.display())
        );
    }
}

/// Break test: another user's junk in the state directory (files with a
/// journal's name, owned by nobody, one a symbolic link) made `--reclaim`
/// exit 125 with one line per file, so an `ExecStartPre=` running it
/// failed. They are not pinrun's: one summary line, exit 0. A root-owned
/// symbolic link with a journal's name is named "is a symbolic link"
/// (open(2)'s ELOOP under O_NOFOLLOW), not "Too many symbolic links".
#[test]
fn reclaim_ignores_other_users_junk_and_names_a_symlink() {
    if !common::is_root() {
        common::skip("chown to another user needs root");
        return;
    }
    let dir = common::tempdir();
    let d = dir.path();
    std::fs::write(d.join("steer.1.2.journal"), "junk").unwrap();
    std::fs::write(d.join("steer.3.4.journal"), "{}").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", d.join("steer.5.6.journal")).unwrap();
    for n in [
        "steer.1.2.journal",
        "steer.3.4.journal",
        "steer.5.6.journal",
    ] {
        std::os::unix::fs::lchown(d.join(n), Some(65534), Some(65534)).unwrap();
    }
    let out = pinrun()
        .arg("--reclaim")
        .arg("--state-dir")
        .arg(d)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_status(&out, 0);
    assert_eq!(
        stderr,
        format!(
            "pinrun: ignored 3 files in {} not owned by root (not pinrun's steering journals): steer.1.2.journal steer.3.4.journal steer.5.6.journal\n",
            d.display()
        )
    );
    // Root's own symbolic link is pinrun's to report, and not usable.
    std::os::unix::fs::symlink("/etc/passwd", d.join("steer.7.8.journal")).unwrap();
    let out = pinrun()
        .arg("--reclaim")
        .arg("--state-dir")
        .arg(d)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_status(&out, 125);
    assert!(
        stderr.contains(&format!(
            "steering journal {} cannot be used: is a symbolic link; left in place",
            d.join("steer.7.8.journal").display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("Too many symbolic links"), "{stderr}");
}
