//! `--sysroot` dry runs against real machine dumps (`tests/data/machines`),
//! checked against util-linux's published `lscpu --parse` output and the
//! dumps' own sysfs files, never against pinrun's earlier output.

use crate::common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};

/// Dumps where pinrun deliberately disagrees with lscpu's core grouping.
const LSCPU_CORE_EXCEPTIONS: &[(&str, &str)] = &[(
    "util-linux/arm-A510-A710-A715-X3",
    "lscpu numbers cores by core_id within the socket, and core_id restarts in each \
     cluster here (cpu0, cpu3, cpu5 and cpu7 all have core_id 0), so lscpu folds four \
     CPUs into Core 0; the kernel's core_cpus_list/thread_siblings_list say every CPU \
     is a core of its own, and pinrun follows the kernel's sibling lists",
)];

fn lscpu_machines() -> Vec<String> {
    let mut v = machines("util-linux");
    v.extend(machines("util-linux-historical"));
    v.extend(machines("util-linux-chcpu"));
    v.retain(|m| machine(m).join("expected-lscpu.txt").is_file());
    v
}

/// lscpu's cores (CPUs sharing a Core id), with the node of each CPU.
fn lscpu_cores(rel: &str) -> (BTreeMap<u32, LscpuRow>, Vec<BTreeSet<u32>>) {
    let rows = lscpu_parse(rel);
    let cores = partition(
        &rows
            .iter()
            .map(|(c, r)| (*c, r.core))
            .collect::<BTreeMap<_, _>>(),
    )
    .into_iter()
    .map(|v| v.into_iter().collect())
    .collect();
    (rows, cores)
}

/// `--cores 1 --smt` picks exactly one of lscpu's cores, on the lowest
/// node lscpu reports; `--cores 1` uses its lowest-numbered thread; asking
/// for every core succeeds and one more is refused.
#[test]
fn cores_agree_with_lscpu_on_every_util_linux_dump() {
    let mut checked = 0;
    for m in lscpu_machines() {
        let (rows, cores) = lscpu_cores(&m);
        if rows.values().any(|r| r.core.is_none()) {
            continue; // lscpu printed no Core column values for this dump
        }
        let v = dry_json(&m, &["--dry-run", "--cores", "1", "--smt"]);
        let got: BTreeSet<u32> = ids(&v["cpus"]).into_iter().collect();
        if let Some((_, why)) = LSCPU_CORE_EXCEPTIONS.iter().find(|(x, _)| *x == m) {
            assert!(
                !cores.contains(&got),
                "{m} now agrees with lscpu; drop the exception ({why})"
            );
            assert_eq!(got.len(), 1, "{m}: the kernel lists no SMT siblings");
            continue;
        }
        assert!(
            cores.contains(&got),
            "{m}: --cores 1 --smt chose {got:?}, not one lscpu core"
        );
        let min_node = rows.values().filter_map(|r| r.node).min();
        for cpu in &got {
            assert_eq!(
                rows[cpu].node, min_node,
                "{m}: CPU {cpu} is not on the lowest node"
            );
        }
        let one = dry_json(&m, &["--dry-run", "--cores", "1"]);
        assert_eq!(
            ids(&one["cpus"]),
            vec![*got.iter().next().unwrap()],
            "{m}: lowest thread"
        );

        let all = cores.len().to_string();
        let v = dry_json(&m, &["--dry-run", "--cores", &all, "--smt"]);
        let every: BTreeSet<u32> = rows.keys().copied().collect();
        assert_eq!(
            ids(&v["cpus"]).into_iter().collect::<BTreeSet<_>>(),
            every,
            "{m}: all cores"
        );
        let more = (cores.len() + 1).to_string();
        pinrun()
            .arg("--sysroot")
            .arg(machine(&m))
            .args(["--dry-run", "--cores", &more])
            .assert()
            .code(125)
            .stderr(predicates::str::contains(format!(
                "--cores {more}: only {all} whole core"
            )));
        checked += 1;
    }
    assert_eq!(
        checked + LSCPU_CORE_EXCEPTIONS.len(),
        25,
        "22 current + 3 historical lscpu dumps"
    );
}

/// `--node N --cores 1 --smt` stays inside node N (lscpu's Node column) on
/// every multi-node util-linux dump, for every node with CPUs.
#[test]
fn node_restricts_choice_like_lscpu_nodes() {
    let mut checked = 0;
    for m in lscpu_machines() {
        let (rows, cores) = lscpu_cores(&m);
        let nodes: BTreeSet<u32> = rows.values().filter_map(|r| r.node).collect();
        if nodes.len() < 2 || rows.values().any(|r| r.core.is_none()) {
            continue;
        }
        for n in &nodes {
            let v = dry_json(
                &m,
                &[
                    "--dry-run",
                    "--node",
                    &n.to_string(),
                    "--cores",
                    "1",
                    "--smt",
                ],
            );
            let got: BTreeSet<u32> = ids(&v["cpus"]).into_iter().collect();
            assert!(
                cores.contains(&got),
                "{m} node {n}: {got:?} is not an lscpu core"
            );
            assert!(
                got.iter().all(|c| rows[c].node == Some(*n)),
                "{m}: {got:?} not on node {n}"
            );
            assert_eq!(ids(&v["nodes"]), vec![*n]);
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} multi-node dumps");
}

/// Siblings numbered (N, N+32) on util-linux x86_64-64cpu: two cores are
/// CPUs 0 and 4 on node 0 (lscpu: CPUs 0,4 are node 0, socket 0, distinct
/// cores; CPU 1 is on node 2), never 0 and 1.
#[test]
fn sibling_scheme_and_nodes_on_x86_64_64cpu() {
    let rows = lscpu_parse("util-linux/x86_64-64cpu");
    let v = dry_json(
        "util-linux/x86_64-64cpu",
        &["--dry-run", "--node", "0", "--cores", "2"],
    );
    let cpus = ids(&v["cpus"]);
    assert_eq!(cpus.len(), 2);
    assert!(cpus.iter().all(|c| rows[c].node == Some(0)));
    assert_ne!(rows[&cpus[0]].core, rows[&cpus[1]].core);
    // Node ids are sparse here (0, 2, 3): node 1 does not exist.
    pinrun()
        .arg("--sysroot")
        .arg(machine("util-linux/x86_64-64cpu"))
        .args(["--dry-run", "--node", "1", "--cores", "1"])
        .assert()
        .code(125)
        .stderr("pinrun: --node: node 1 not found: this machine's nodes are 0,2-3\nhint: choose among nodes 0,2-3 (pinrun --show lists them)\n");
}

/// Every machine dump: a dry run of `--cores 1` succeeds and picks one
/// online CPU (per the dump's own `cpu/online`) that its cgroup allows.
#[test]
fn every_dump_plans_one_core() {
    let mut n = 0;
    for m in all_machines() {
        let v = dry_json(&m, &["--dry-run", "--cores", "1"]);
        let cpus = ids(&v["cpus"]);
        assert_eq!(cpus.len(), 1, "{m}");
        let online_file = machine(&m).join("sys/devices/system/cpu/online");
        if let Ok(text) = std::fs::read_to_string(&online_file) {
            let online = pinrun::cpuset::CpuSet::parse_sysfs_list(&text, None).unwrap();
            assert!(online.contains(cpus[0]), "{m}: CPU {} offline", cpus[0]);
        }
        n += 1;
    }
    assert_eq!(n, 91, "fixture count changed");
}

/// Memory-only nodes: nri-plugins/server has PMEM nodes 4-5 without CPUs
/// (`has_cpu` = 0-3, `has_memory` = 0-5).
#[test]
fn cpu_less_memory_nodes() {
    let m = "nri-plugins/server";
    pinrun()
        .arg("--sysroot")
        .arg(machine(m))
        .args(["--dry-run", "--node", "4", "--cores", "1"])
        .assert()
        .code(125)
        .stderr(predicates::str::contains(
            "node 4 has no CPUs (memory-only node)",
        ));
    let v = dry_json(
        m,
        &["--dry-run", "--node", "0", "--cores", "1", "--membind=4"],
    );
    assert_eq!(v["memory"]["policy"], "bind");
    assert_eq!(ids(&v["memory"]["nodes"]), vec![4]);
    assert_eq!(ids(&v["nodes"]), vec![0]);
}

/// Sparse and high node ids: nvidiagpunumanodes has nodes 0, 8 (CPUs) and
/// 250-255 (GPU memory); `--interleave all` covers every memory node the
/// process may use, which its cgroup limits to node 0.
#[test]
fn sparse_high_node_ids() {
    let m = "hwloc/nvidiagpunumanodes";
    let v = dry_json(
        m,
        &["--dry-run", "--node", "0", "--cores", "1", "--membind"],
    );
    assert_eq!(ids(&v["memory"]["nodes"]), vec![0]);
    // The dump's cgroup /jjh allows CPUs 0-87 only: node 8 (CPUs 88-175) is refused.
    pinrun()
        .arg("--sysroot")
        .arg(machine(m))
        .args(["--dry-run", "--node", "8", "--cores", "1"])
        .assert()
        .code(125)
        .stderr(predicates::str::contains(
            "node 8 has CPUs 88-175, none of them online and inside the cpuset of cgroup /jjh",
        ));
    // ... and memory node 0 only (cpuset.effective_mems = 0, though
    // cpuset.mems = 0,8,250-255).
    let v = dry_json(m, &["--dry-run", "--interleave", "all"]);
    assert_eq!(ids(&v["memory"]["nodes"]), vec![0]);
    pinrun()
        .arg("--sysroot")
        .arg(machine(m))
        .args(["--dry-run", "--membind=250"])
        .assert()
        .code(125)
        .stderr(predicates::str::contains(
            "node 250 outside the memory nodes this process may use (cpuset of cgroup /jjh: allowed memory nodes 0)",
        ));
    pinrun()
        .arg("--sysroot")
        .arg(machine(m))
        .args(["--dry-run", "--membind=9"])
        .assert()
        .code(125)
        .stderr(predicates::str::starts_with(
            "pinrun: --membind: node 9 not found: this machine's nodes are 0,8,250-255\nhint: ",
        ));
}

/// A cgroup-restricted allowed set (hwloc/32amd64-4s2n4c-cgroup2: the
/// job's `cpuset.cpus.effective`) limits the choice, and a CPU outside it
/// is refused naming the cgroup.
#[test]
fn cgroup_v2_cpuset_limits_choice() {
    let m = "hwloc/32amd64-4s2n4c-cgroup2";
    let root = machine(m);
    let eff = std::fs::read_to_string(
        root.join("cgroup/unified/uid_2008/job_15389/step_0/cpuset.cpus.effective"),
    )
    .unwrap();
    let allowed = pinrun::cpuset::CpuSet::parse_sysfs_list(&eff, None).unwrap();
    let v = dry_json(m, &["--show"]);
    assert_eq!(ids(&v["allowed_cpus"]), allowed.to_vec());
    let outside = (0..32).find(|c| !allowed.contains(*c)).unwrap();
    pinrun()
        .arg("--sysroot")
        .arg(&root)
        .args(["--dry-run", "--cpus", &outside.to_string()])
        .assert()
        .code(125)
        .stderr(predicates::str::contains(format!(
            "CPU {outside} is outside the cpuset of cgroup /uid_2008/job_15389/step_0"
        )));
}

/// The 512-CPU, 128-node ia64 dump: masks wider than 1024 bits are not
/// needed, but 128 nodes and 512 CPUs are planned without loss.
#[test]
fn ia64_512_cpus_128_nodes() {
    let m = "util-linux-historical/ia64-512cpus";
    let v = dry_json(m, &["--dry-run", "--cpus", "0-511"]);
    assert_eq!(ids(&v["cpus"]).len(), 512);
    assert_eq!(ids(&v["nodes"]).len(), 128);
    let v = dry_json(m, &["--dry-run", "--node", "127", "--cores", "1"]);
    let rows = lscpu_parse(m);
    assert_eq!(rows[&ids(&v["cpus"])[0]].node, Some(127));
}

/// A node and its CPUs.
type NodeCpus = (u32, Vec<u32>);

/// The number of nodes with memory of a dump, from its sysfs
/// `node/has_memory` (Documentation/ABI/stable/sysfs-devices-node), and
/// the CPUs of each of them that has CPUs, from `nodeN/cpulist`: the
/// kernel's files, not pinrun's reading.
fn memory_nodes_and_cpus(m: &std::path::Path) -> Option<(usize, Vec<NodeCpus>)> {
    let dir = m.join("sys/devices/system/node");
    let has = std::fs::read_to_string(dir.join("has_memory")).ok()?;
    let has = pinrun::cpuset::CpuSet::parse(has.trim()).ok()?;
    Some((
        has.len(),
        has.iter()
            .filter_map(|n| {
                let l = std::fs::read_to_string(dir.join(format!("node{n}/cpulist"))).ok()?;
                let cpus = pinrun::cpuset::CpuSet::parse(l.trim()).ok()?;
                (!cpus.is_empty()).then(|| (n, cpus.iter().collect()))
            })
            .collect(),
    ))
}

/// A new user's trial: `pinrun -c 1 --dry-run` on a multi-node machine
/// said `memory: unchanged`, not that CPU 1's node decides where pages
/// go. As numactl --physcpubind, no policy is set (JSON "default"); the
/// plan's reasons say, in one line, the node of the CPU (from the dump's
/// nodeN/cpulist) or, for CPUs of two nodes, that they span both; a
/// one-node machine says nothing. Every hwloc dump with has_memory.
#[test]
fn cpus_without_memory_policy_name_the_node_that_decides() {
    let mut multi = 0;
    for rel in machines("hwloc") {
        let m = machine(&rel);
        let Some((memory_nodes, nodes)) = memory_nodes_and_cpus(&m) else {
            continue;
        };
        let plan = |cpus: &str| {
            let o = pinrun()
                .env("PINRUN_CONFIG", "")
                .arg("--sysroot")
                .arg(&m)
                .args(["--dry-run", "--json", "--cpus", cpus, "--", "true"])
                .output()
                .unwrap();
            // Refused (a CPU outside the dump's cpuset): no plan.
            match o.status.success() {
                true => serde_json::from_slice(&o.stdout).unwrap_or_default(),
                false => serde_json::Value::Null,
            }
        };
        let memory_lines = |v: &serde_json::Value| -> Vec<String> {
            v["reasons"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str())
                .filter(|r| r.starts_with("memory: "))
                .map(String::from)
                .collect()
        };
        let Some((n0, cpus0)) = nodes.first() else {
            continue;
        };
        let v = plan(&cpus0[0].to_string());
        if v.is_null() {
            continue; // the CPU is offline or not allowed in this dump
        }
        assert_eq!(v["memory"]["policy"], "default", "{rel}: numactl sets none");
        let lines = memory_lines(&v);
        if memory_nodes < 2 {
            assert!(lines.is_empty(), "{rel}: one memory node: {lines:?}");
        }
        if nodes.len() < 2 {
            continue; // one node with CPUs (the others a GPU's memory)
        }
        multi += 1;
        assert_eq!(lines.len(), 1, "{rel}: {lines:?}");
        assert!(
            lines[0].contains(&format!("first touches them: node {n0};")),
            "{rel}: CPU {} is on node {n0}: {}",
            cpus0[0],
            lines[0]
        );
        let Some((n1, cpus1)) = nodes.get(1) else {
            continue; // the other memory nodes have no CPU (a GPU's)
        };
        let v = plan(&format!("{},{}", cpus0[0], cpus1[0]));
        if v.is_null() {
            continue;
        }
        let lines = memory_lines(&v);
        assert_eq!(lines.len(), 1, "{rel}: {lines:?}");
        let span = if n1 - n0 == 1 {
            format!("span nodes {n0}-{n1}")
        } else {
            format!("span nodes {n0},{n1}")
        };
        assert!(lines[0].contains(&span), "{rel}: {span}: {}", lines[0]);
    }
    assert!(multi >= 3, "only {multi} multi-node hwloc dumps");
}
