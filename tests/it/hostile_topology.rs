//! Issue 15: topology files that are missing, empty, unparsable or
//! contradict each other never shrink, duplicate or invent a plan. Each
//! test edits a copy of a real machine dump (`tests/data/machines`) or the
//! field case `sibling-list-garbled` in a temporary directory; plans must
//! equal the plan on the unmodified dump, with a `topology-inconsistent`
//! finding naming the file.

use crate::common;
use common::*;
use pinrun::cpuset::CpuSet;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn json(root: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let out = at(root, &a);
    assert_status(&out, if args.contains(&"--check") { 1 } else { 0 });
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn cpulist(root: &Path, args: &[&str]) -> String {
    let mut a = vec!["--dry-run"];
    a.extend_from_slice(args);
    json(root, &a)["cpulist"].as_str().unwrap().to_string()
}

/// The `siblings` of every CPU of `--show --json`.
fn siblings(root: &Path) -> Vec<Value> {
    json(root, &["--show"])["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["siblings"].clone())
        .collect()
}

/// `topology-inconsistent` findings of `--check --cores 1` (which has
/// warnings anyway: not isolated), as messages.
fn inconsistent(root: &Path) -> Vec<String> {
    common::finding_messages(
        &json(root, &["--check", "--cores", "1"]),
        "topology-inconsistent",
    )
}

const SIB: &[&str] = &[
    "core_cpus_list",
    "thread_siblings_list",
    "core_cpus",
    "thread_siblings",
];

fn topo(root: &Path, cpu: u32) -> PathBuf {
    root.join(format!("sys/devices/system/cpu/cpu{cpu}/topology"))
}

/// Writes `set` into every sibling file `cpu` has, each in its format.
fn write_siblings(root: &Path, cpu: u32, text_for: impl Fn(bool) -> String) {
    for f in SIB {
        let p = topo(root, cpu).join(f);
        if p.exists() {
            std::fs::write(&p, text_for(f.ends_with("_list"))).unwrap();
        }
    }
}

fn set_text(set: &CpuSet) -> impl Fn(bool) -> String + '_ {
    move |list| {
        if list {
            format!("{}\n", set.to_list())
        } else {
            format!("{}\n", set.to_mask())
        }
    }
}

/// One way to damage CPU `x`'s sibling files, whose core is `core`.
#[derive(Debug, Clone, Copy)]
enum Damage {
    Missing,
    Empty,
    Garbage,
    /// `x`'s other thread lists only itself (asymmetric: `x` still lists it).
    Asymmetric,
    /// `x`'s files list its core without `x`.
    SelfExcluding,
}

/// Puts back in `copy` the sibling files of the CPUs of `core` as they are
/// in `orig` (all that [`damage`] changes), removing those `orig` lacks.
fn restore(orig: &Path, copy: &Path, core: &CpuSet) {
    for c in core.iter() {
        for f in SIB {
            let (from, to) = (topo(orig, c).join(f), topo(copy, c).join(f));
            if from.exists() {
                std::fs::copy(&from, &to).unwrap();
            } else {
                let _ = std::fs::remove_file(&to);
            }
        }
    }
}

fn damage(root: &Path, x: u32, core: &CpuSet, how: Damage) {
    match how {
        Damage::Missing => {
            for f in SIB {
                let _ = std::fs::remove_file(topo(root, x).join(f));
            }
        }
        Damage::Empty => write_siblings(root, x, |_| "\n".into()),
        Damage::Garbage => write_siblings(root, x, |_| "xyz\0\u{1}garbage\n".into()),
        Damage::Asymmetric => {
            let y = core.iter().find(|&c| c != x).unwrap();
            let only: CpuSet = std::iter::once(y).collect();
            write_siblings(root, y, set_text(&only));
        }
        Damage::SelfExcluding => {
            let mut without = core.clone();
            without.remove(x);
            write_siblings(root, x, set_text(&without));
        }
    }
}

/// For each damage of CPU `x` in a copy of `rel`: every CPU's siblings,
/// and `--cores`/`--smt` plans, equal the unmodified dump's, and one
/// finding names what was wrong.
fn recovers(rel: &str, x: u32, plans: &[&[&str]]) {
    let m = machine(rel);
    let want_sib = siblings(&m);
    let want: Vec<String> = plans.iter().map(|a| cpulist(&m, a)).collect();
    assert!(inconsistent(&m).is_empty(), "{rel} is sound");
    let core: CpuSet = want_sib[x as usize]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    assert!(core.len() >= 2, "{rel}: CPU {x} has SMT siblings");
    // One copy, its damaged files put back before each damage.
    let dir = common::tempdir();
    common::copy_tree(&m, dir.path());
    for how in [
        Damage::Missing,
        Damage::Empty,
        Damage::Garbage,
        Damage::Asymmetric,
        Damage::SelfExcluding,
    ] {
        restore(&m, dir.path(), &core);
        damage(dir.path(), x, &core, how);
        let ctx = format!("{rel}, CPU {x} {how:?}");
        assert_eq!(siblings(dir.path()), want_sib, "{ctx}");
        for (args, want) in plans.iter().zip(&want) {
            assert_eq!(&cpulist(dir.path(), args), want, "{ctx} {args:?}");
        }
        let found = inconsistent(dir.path());
        assert_eq!(found.len(), 1, "{ctx}: {found:?}");
        let named = match how {
            Damage::Asymmetric => core.iter().find(|&c| c != x).unwrap(),
            _ => x,
        };
        assert!(
            found[0].contains(&format!("cpu{named}/topology")),
            "{ctx}: {found:?}"
        );
    }
}

/// The plans the 96-CPU EPYC 7451 dump is damaged under: 48 cores of
/// threads N and N+48 (thread_siblings_list only).
const EPYC_PLANS: &[&[&str]] = &[
    &["--cores", "2"],
    &["--cores", "2", "--smt"],
    &["--cores", "48", "--smt"],
    &["--node", "0", "--cores", "3", "--smt"],
];

/// The EPYC's first CPU damaged (one test per CPU, so the harness runs
/// them side by side).
#[test]
fn epyc_sibling_damage_recovers() {
    recovers("util-linux/x86_64-epyc_7451", 0, EPYC_PLANS);
}

/// A second-thread CPU of the EPYC damaged (CPU 53, sibling of 5).
#[test]
fn epyc_second_thread_damage_recovers() {
    recovers("util-linux/x86_64-epyc_7451", 53, EPYC_PLANS);
}

#[test]
fn power7_smt4_damage_recovers() {
    // 16 CPUs, SMT4 (0-3, 4-7, ...).
    let plans: &[&[&str]] = &[&["--cores", "2", "--smt"], &["--cores", "4"]];
    recovers("util-linux/ppc64-POWER7", 5, plans);
}

#[test]
fn mask_only_dump_damage_recovers() {
    // hwloc dump of an old kernel: thread_siblings masks, no online file.
    let plans: &[&[&str]] = &[&["--cores", "2", "--smt"], &["--cores", "8"]];
    recovers("hwloc/16em64t-4s2c2t", 0, plans);
}

/// The field case: cpu0's thread_siblings_list holds garbage.
#[test]
fn field_case_sibling_list_garbled() {
    let case = common::field_case("sibling-list-garbled");
    assert_eq!(cpulist(&case, &["--cores", "2"]), "0-1");
    assert_eq!(cpulist(&case, &["--cores", "2", "--smt"]), "0-1,48-49");
    let found = inconsistent(&case);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].contains("cpu0/topology/thread_siblings_list"),
        "{found:?}"
    );
    assert!(found[0].contains("core 0,48"), "{found:?}");
}

/// Lists that disagree with each other and with core_id are refused,
/// naming the files, never planned on.
#[test]
fn contradiction_without_agreement_is_refused() {
    let m = machine("util-linux/x86_64-epyc_7451");
    let dir = common::tempdir();
    common::copy_tree(&m, dir.path());
    // CPU 0 says 0,1; CPU 1 says 1,49; CPU 48 says 0,48; core_id agrees
    // with none of 0's choices for both.
    let t = |c: u32, s: &str| {
        std::fs::write(topo(dir.path(), c).join("thread_siblings_list"), s).unwrap()
    };
    t(0, "0-1\n");
    t(1, "1,49\n");
    std::fs::write(topo(dir.path(), 0).join("core_id"), "7\n").unwrap();
    let out = at(dir.path(), &["--dry-run", "--cores", "2"]);
    assert_status(&out, 125);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("pinrun: reading /sys/devices/system/cpu: "),
        "{err}"
    );
    assert!(err.contains("cpu0/topology/thread_siblings_list"), "{err}");
    assert!(err.contains("\nhint: "), "{err}");
}

/// An empty `cpu4294967295` directory (and others beyond `possible` and
/// `kernel_max`) is ignored with a finding: no memory blow-up, never
/// planned on, even without an `online` file.
#[test]
fn cpu_dirs_beyond_possible_are_ignored() {
    let m = machine("util-linux/ppc64-POWER7");
    let want_show = json(&m, &["--show"]);
    let dir = common::tempdir();
    common::copy_tree(&m, dir.path());
    let cpu = dir.path().join("sys/devices/system/cpu");
    for d in ["cpu4294967295", "cpu99999999999", "cpu64", "cpu4194303"] {
        std::fs::create_dir(cpu.join(d)).unwrap();
    }
    std::fs::remove_file(cpu.join("online")).unwrap();
    let show = json(dir.path(), &["--show"]);
    assert_eq!(show["cpus"], want_show["cpus"]);
    assert_eq!(show["online"], want_show["online"]);
    let w = show["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("cpu4294967295")),
        "{w:?}"
    );
    assert_eq!(cpulist(dir.path(), &["--cores", "4", "--smt"]), "0-15");
    for c in ["4294967295", "64"] {
        let out = at(dir.path(), &["--dry-run", "--cpus", c]);
        assert_status(&out, 125);
    }
    // Without possible and kernel_max the bound is pinrun's own maximum.
    std::fs::remove_file(cpu.join("possible")).unwrap();
    let _ = std::fs::remove_file(cpu.join("kernel_max"));
    let show = json(dir.path(), &["--show"]);
    let ids: Vec<u64> = show["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cpu"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.last(), Some(&64), "{ids:?}");
    assert_eq!(cpulist(dir.path(), &["--cores", "4", "--smt"]), "0-15");
}

/// An empty `node4294967295` directory costs no memory (it cost 0.5 to
/// 1.5 GB: node sets were sized by it) and is ignored with a finding.
#[test]
fn node_dirs_beyond_possible_are_ignored() {
    let m = machine("util-linux/ppc64-POWER7");
    let want = json(&m, &["--show"]);
    let want_plan = cpulist(&m, &["--node", "0", "--cores", "2", "--membind"]);
    let dir = common::tempdir();
    common::copy_tree(&m, dir.path());
    std::fs::create_dir(dir.path().join("sys/devices/system/node/node4294967295")).unwrap();
    let show = json(dir.path(), &["--show"]);
    assert_eq!(show["nodes"], want["nodes"]);
    let w = show["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("node4294967295")),
        "{w:?}"
    );
    assert_eq!(
        cpulist(dir.path(), &["--node", "0", "--cores", "2", "--membind"]),
        want_plan
    );
    let out = at(dir.path(), &["--dry-run", "--node", "4294967295"]);
    assert_status(&out, 125);
}

/// A file beyond the reading budget (4 MiB) is an error naming it, exit
/// 125, whether read with the machine or after planning (a governor).
#[test]
fn files_beyond_the_budget_are_refused() {
    let m = machine("util-linux/ppc64-POWER7");
    let big = format!("0-3{}\n", ",0-3".repeat(1 << 20));
    for (rel, args) in [
        (
            "sys/devices/system/cpu/online",
            &["--dry-run", "--cores", "1"][..],
        ),
        (
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            &["--check", "--cpus", "0"][..],
        ),
    ] {
        let dir = common::tempdir();
        common::copy_tree(&m, dir.path());
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &big).unwrap();
        let out = at(dir.path(), args);
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!("pinrun: reading /{rel}: larger than 4 MiB")),
            "{err}"
        );
        assert!(err.contains("\nhint: "), "{err}");
    }
}

/// `cpu/online` listing CPUs that have no cpuN directory (a lying dump; on a
/// live kernel every online CPU's device is registered): they are never
/// planned on, and the finding names them. nto/bare-metal-master.internal
/// has CPUs 0-111 (siblings N and N+56) and no online or possible file.
#[test]
fn online_cpus_without_a_directory_are_ignored() {
    let t = common::tempdir();
    let d = t.path().join("m");
    common::copy_tree(&common::machine("nto/bare-metal-master.internal"), &d);
    common::write_file(&d, "sys/devices/system/cpu/online", "0-111,200\n");
    assert_eq!(cpulist(&d, &["--cores", "1"]), "0");
    let out = at(&d, &["--dry-run", "--cpus", "200"]);
    assert_status(&out, 125);
    let found = inconsistent(&d);
    assert_eq!(
        found,
        [
            "/sys/devices/system/cpu/online lists CPUs 200 that have no cpuN directory; ignoring them"
        ]
    );
}

/// A CPU that firmware lists in two nodes' cpulists belongs to the node
/// pinrun keeps it in (the lowest, as the firmware-data warning says):
/// `--node` of the other node never takes it. nto/bare-metal-master.internal:
/// node 0 has the even CPUs, node 1 the odd ones.
#[test]
fn a_cpu_in_two_node_lists_is_chosen_by_one_node_only() {
    let t = common::tempdir();
    let d = t.path().join("m");
    common::copy_tree(&common::machine("nto/bare-metal-master.internal"), &d);
    let odd: Vec<String> = (1..112).step_by(2).map(|c| c.to_string()).collect();
    assert_eq!(cpulist(&d, &["--node", "1"]), odd.join(","));
    common::write_file(&d, "sys/devices/system/node/node1/cpulist", "0-111\n");
    // Node 1 still has its own odd CPUs; the even ones stay node 0's.
    assert_eq!(cpulist(&d, &["--node", "1"]), odd.join(","));
    // Every CPU listed by node 0 too: node 1 has none of its own.
    common::write_file(&d, "sys/devices/system/node/node1/cpulist", "0,2\n");
    let out = at(&d, &["--dry-run", "--node", "1"]);
    assert_status(&out, 125);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().next().unwrap(),
        "pinrun: --node: node 1's CPUs 0,2 are also listed by node 0, which keeps them (firmware data: a CPU belongs to one node)"
    );
}

/// Hostile `stat` lines (no parentheses, reversed ones, empty, huge,
/// non-UTF-8 comm) for a process and its thread below `--sysroot`: every
/// reader of `/proc/PID/stat` and `/proc/PID/task/TID/stat` (the
/// real-time competitor scan, who runs where, `--pid`, the RCU offload
/// scan) goes through one parser; none may panic (exit 101).
#[test]
fn hostile_stat_lines_never_panic() {
    let m = machine("util-linux/ppc64-POWER7");
    let huge = format!("999 ({}) R {}", ")(".repeat(50_000), "7 ".repeat(60_000));
    let mut lines: Vec<Vec<u8>> = [
        "999 ) ( x",
        ")(",
        "",
        "999",
        "999 (x R 1 1 1",
        "999 x) R 1 1 1",
        &huge,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    lines.push(b"999 (\xff\xfe) R 1 999 999 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0".to_vec());
    for line in &lines {
        let dir = common::tempdir();
        common::copy_tree(&m, dir.path());
        let status = "Name:\tx\nCpus_allowed_list:\t0\nUid:\t0\t0\t0\t0\n";
        for d in ["proc/999", "proc/999/task/999", "proc/2"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
            std::fs::write(dir.path().join(d).join("stat"), line).unwrap();
            std::fs::write(dir.path().join(d).join("status"), status).unwrap();
            std::fs::write(dir.path().join(d).join("comm"), line).unwrap();
        }
        for args in [
            &["--check", "--cpus", "0", "--fifo", "5"][..],
            &["--check", "--cpus", "0", "--fifo", "5", "--json"],
            &["--show"],
            &["--show", "--json"],
            &["--dry-run", "--pid", "999", "--cpus", "0"],
        ] {
            let out = at(dir.path(), args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_ne!(
                out.status.code(),
                Some(101),
                "{args:?} on {:?}: {err}",
                String::from_utf8_lossy(line).get(..40)
            );
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
    }
}
