//! Issue 15: mutated machine dumps (files truncated, garbage, binary, of
//! the wrong type, huge ids, directories beyond `possible`, files beyond the
//! read budget) never make pinrun panic, hang or blow up its memory, and
//! never give a plan that contradicts the files that were read. A bounded
//! property test: it runs in seconds in `cargo test` (and so in CI); raise
//! `PINRUN_FUZZ_CASES` for a longer run.

use crate::common;
use common::*;
use pinrun::cpuset::CpuSet;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Address space pinrun may use (a blow-up fails the run, as exit 134 or
/// a signal, which the test rejects).
const MEMORY: u64 = 1 << 30;
/// Longest a run may take (debug build, shared machine).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Regular files below `root/sub`, relative to `root`, sorted.
fn files(root: &Path, sub: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(root.join(sub)) else {
        return;
    };
    for e in rd.flatten() {
        let rel = Path::new(sub).join(e.file_name());
        let ty = e.file_type().unwrap();
        if ty.is_dir() {
            files(root, rel.to_str().unwrap(), out);
        } else if ty.is_file() {
            out.push(rel);
        }
    }
    out.sort();
}

/// A small synthetic machine: 4 CPUs, 2 cores of 2 threads, one node.
fn synthetic(dir: &Path) {
    let w = |rel: &str, t: &str| write_file(dir, rel, t);
    let c = "sys/devices/system/cpu";
    for f in ["online", "possible", "present"] {
        w(&format!("{c}/{f}"), "0-3\n");
    }
    w(&format!("{c}/kernel_max"), "7\n");
    for cpu in 0..4u32 {
        let t = format!("{c}/cpu{cpu}/topology");
        let sib = if cpu % 2 == 0 {
            format!("{},{}", cpu, cpu + 1)
        } else {
            format!("{},{}", cpu - 1, cpu)
        };
        w(&format!("{t}/thread_siblings_list"), &format!("{sib}\n"));
        w(&format!("{t}/core_cpus_list"), &format!("{sib}\n"));
        w(&format!("{t}/core_id"), &format!("{}\n", cpu / 2));
        w(&format!("{t}/physical_package_id"), "0\n");
        w(&format!("{t}/package_cpus_list"), "0-3\n");
    }
    w("sys/devices/system/node/node0/cpulist", "0-3\n");
    w("sys/devices/system/node/online", "0\n");
    w(
        "proc/interrupts",
        "      CPU0 CPU1 CPU2 CPU3\n 24: 1 0 0 5 PCI-MSI 1-edge eth0\nLOC: 9 9 9 9 Local timer interrupts\n",
    );
    w("proc/irq/24/effective_affinity_list", "3\n");
    w("proc/cmdline", "ro quiet\n");
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize, usize),
    Garbage(usize, String),
    Binary(usize, Vec<u8>),
    HugeId(usize, usize),
    Delete(usize),
    FileToDir(usize),
    CpuDirBeyond(usize),
    NodeDirBeyond(usize),
    OverBudget(usize),
    Empty(usize),
}

const HUGE: &[&str] = &[
    "4294967295\n",
    "0-4194303\n",
    "99999999999999999999\n",
    "-1\n",
    "0-4194304\n",
    "ffffffff,ffffffff,ffffffff,ffffffff\n",
    "0-3,0-3,0-3,0-3\n",
    "4194303\n",
];

const BEYOND: &[&str] = &["cpu4294967295", "cpu4194303", "cpu64", "cpu9999999999999"];

fn mutation() -> impl Strategy<Value = Mutation> {
    let f = any::<usize>();
    prop_oneof![
        (f, 0usize..8).prop_map(|(a, b)| Mutation::Truncate(a, b)),
        (f, "\\PC{0,24}").prop_map(|(a, b)| Mutation::Garbage(a, b)),
        (f, proptest::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(a, b)| Mutation::Binary(a, b)),
        (f, 0..HUGE.len()).prop_map(|(a, b)| Mutation::HugeId(a, b)),
        f.prop_map(Mutation::Delete),
        f.prop_map(Mutation::FileToDir),
        (0..BEYOND.len()).prop_map(Mutation::CpuDirBeyond),
        (0..BEYOND.len()).prop_map(Mutation::NodeDirBeyond),
        f.prop_map(Mutation::OverBudget),
        f.prop_map(Mutation::Empty),
    ]
}

/// Applies `m` to the tree `root`, whose files are `list` (the files most
/// worth mutating, the topology and CPU sets, are `list`'s first half).
fn apply(root: &Path, list: &[PathBuf], m: &Mutation) {
    let pick = |i: usize| root.join(&list[i % list.len()]);
    let put = |i: usize, bytes: &[u8]| {
        let p = pick(i);
        if p.is_file() {
            std::fs::write(p, bytes).unwrap();
        }
    };
    match m {
        Mutation::Truncate(i, n) => {
            let p = pick(*i);
            if let Ok(b) = std::fs::read(&p) {
                std::fs::write(&p, &b[..(*n).min(b.len())]).unwrap();
            }
        }
        Mutation::Garbage(i, s) => put(*i, s.as_bytes()),
        Mutation::Binary(i, b) => put(*i, b),
        Mutation::HugeId(i, k) => put(*i, HUGE[*k].as_bytes()),
        Mutation::Delete(i) => {
            let _ = std::fs::remove_file(pick(*i));
        }
        Mutation::FileToDir(i) => {
            let p = pick(*i);
            if std::fs::remove_file(&p).is_ok() {
                std::fs::create_dir(&p).unwrap();
            }
        }
        Mutation::CpuDirBeyond(k) => {
            let _ = std::fs::create_dir(root.join("sys/devices/system/cpu").join(BEYOND[*k]));
        }
        Mutation::NodeDirBeyond(k) => {
            let node = BEYOND[*k].replace("cpu", "node");
            let _ = std::fs::create_dir_all(root.join("sys/devices/system/node").join(node));
        }
        Mutation::OverBudget(i) => put(*i, &vec![b'1'; (4 << 20) + 1]),
        Mutation::Empty(i) => put(*i, b""),
    }
}

const REQUESTS: &[&[&str]] = &[
    &["--dry-run", "--json", "--cores", "2"],
    &["--dry-run", "--json", "--cores", "1", "--smt"],
    &["--dry-run", "--json", "--cpus", "0-3"],
    &["--dry-run", "--json", "--node", "0", "--cores", "1"],
    &["--check", "--json", "--cores", "1"],
    &["--show", "--json"],
    &["--show", "-v"],
];

/// Runs pinrun on `root` with `args` under the memory cap and timeout.
fn run(root: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pinrun"));
    cmd.arg("--sysroot").arg(root).args(args);
    run_capped(cmd, MEMORY, TIMEOUT)
}

/// The set a sysfs cpulist file of the tree says, when it parses.
fn list_file(root: &Path, rel: &str) -> Option<CpuSet> {
    let t = std::fs::read(root.join(rel)).ok()?;
    CpuSet::parse_sysfs_list(&String::from_utf8_lossy(&t), None).ok()
}

/// What a plan must respect: exit 0/1/125 only (no panic, abort, signal or
/// timeout); each chosen CPU has its `cpuN` directory and is online per
/// `cpu/online` when that parses (and per `cpuN/online` when it does
/// not); with `--cores`, the chosen cores are disjoint and cover the plan.
fn check(root: &Path, args: &[&str], out: &std::process::Output) -> Result<(), String> {
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    if !matches!(code, Some(0 | 1 | 125)) || err.contains("panicked") {
        return Err(format!("{args:?}: exit {:?}\n{err}", out.status));
    }
    if code == Some(125) && !err.starts_with("pinrun: ") {
        return Err(format!("{args:?}: error without 'pinrun: ': {err}"));
    }
    if code != Some(0) || args[0] != "--dry-run" {
        return Ok(());
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{args:?}: not JSON: {e}"))?;
    let cpus = match v["cpus"].as_array() {
        Some(a) => a
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect::<Vec<_>>(),
        None => return Ok(()),
    };
    let cpu_dir = root.join("sys/devices/system/cpu");
    let online = list_file(root, "sys/devices/system/cpu/online");
    for &c in &cpus {
        if !cpu_dir.join(format!("cpu{c}")).is_dir() {
            return Err(format!("{args:?}: planned CPU {c} has no cpu{c} directory"));
        }
        let on = match &online {
            Some(set) => set.contains(c),
            None => std::fs::read_to_string(cpu_dir.join(format!("cpu{c}/online")))
                .map_or(true, |t| t.trim() != "0"),
        };
        if !on {
            return Err(format!(
                "{args:?}: planned CPU {c} is offline per the files"
            ));
        }
    }
    if args.contains(&"--cores") {
        let mut seen = CpuSet::new();
        for core in v["cores"].as_array().into_iter().flatten() {
            for c in core["cpus"].as_array().unwrap() {
                let c = c.as_u64().unwrap() as u32;
                if seen.contains(c) {
                    return Err(format!(
                        "{args:?}: CPU {c} in two chosen cores: {}",
                        v["cores"]
                    ));
                }
                seen.insert(c);
            }
        }
        if !cpus.iter().all(|&c| seen.contains(c)) {
            return Err(format!(
                "{args:?}: plan {cpus:?} outside its cores {}",
                v["cores"]
            ));
        }
    }
    Ok(())
}

/// The base trees: small real dumps and the synthetic one.
fn bases() -> Vec<(String, tempfile::TempDir, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for rel in [
        "util-linux/ppc64-POWER7",
        "hwloc/16em64t-4s2c2t",
        "cadvisor/graviton2",
        "",
    ] {
        let dir = common::tempdir();
        if rel.is_empty() {
            synthetic(dir.path());
        } else {
            common::copy_tree(&machine(rel), dir.path());
        }
        // Topology and CPU-set files first: most mutations land there.
        let mut list = Vec::new();
        files(dir.path(), "sys/devices/system/cpu", &mut list);
        let mut rest = Vec::new();
        files(dir.path(), "sys/devices/system/node", &mut rest);
        files(dir.path(), "proc", &mut rest);
        list.retain(|p| !p.to_str().unwrap().contains("/cache/"));
        list.extend(rest);
        out.push((
            if rel.is_empty() {
                "synthetic".into()
            } else {
                rel.to_string()
            },
            dir,
            list,
        ));
    }
    out
}

#[test]
fn mutated_trees_never_panic_hang_or_contradict_the_files() {
    let cases: u32 = std::env::var("PINRUN_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(48);
    let bases = bases();
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(base in 0..bases.len(), muts in proptest::collection::vec(mutation(), 1..5), req in 0..REQUESTS.len())| {
        let (name, src, list) = &bases[base];
        let dir = common::tempdir();
        common::copy_tree(src.path(), dir.path());
        for m in &muts {
            apply(dir.path(), list, m);
        }
        let out = run(dir.path(), REQUESTS[req]);
        if let Err(e) = check(dir.path(), REQUESTS[req], &out) {
            prop_assert!(false, "{name} {muts:?}: {e}");
        }
    });
}
