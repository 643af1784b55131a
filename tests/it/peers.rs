//! Agreement with the peer tools' published output on the real machine
//! dumps in `tests/data/machines`: util-linux `lscpu --parse`, hwloc
//! `lstopo`, and cadvisor's MachineInfo. The expected values come only from
//! those tools' files in the dumps, never from pinrun's own earlier runs.
//! We compare the PARTITIONS (which CPUs share a core, a package, a node),
//! not the numbers: lscpu prints logical indexes, pinrun kernel ids.

use crate::common;
use common::assert_status;
use common::*;
use std::collections::BTreeMap;

/// A deliberate disagreement: (dump, aspect, reason). The aspect is the
/// prefix of the disagreement line: lscpu `cores`, `sockets`, `nodes`,
/// `online`, `offline`, `node lists`; hwloc `PUs`, `cores`, `packages`,
/// `dies`, `llc`, `allowed nodes`, `nodes`, `node N`. Every other aspect of
/// the dump must still agree, and this one must still disagree (so the
/// entry is removed once the cause is gone).
type Exception = (&'static str, &'static str, &'static str);

/// Where pinrun deliberately disagrees with lscpu.
const LSCPU_EXCEPTIONS: &[Exception] = &[
    (
        "util-linux/arm-A510-A710-A715-X3",
        "cores",
        "lscpu numbers cores by core_id within the socket, and core_id restarts in each \
         cluster here (cpu0, cpu3, cpu5 and cpu7 all have core_id 0), so lscpu folds four \
         CPUs into Core 0; the kernel's core_cpus_list/thread_siblings_list say every CPU \
         is a core of its own, and pinrun follows the kernel's sibling lists",
    ),
    (
        "util-linux/arm-A510-A710-A715-X3",
        "sockets",
        "lscpu counts sockets per CPU type on arm (Cortex-A510, A710, A715 and X3 each \
         report `Socket(s): 1`) and prints Socket 0 for every CPU; the kernel's \
         physical_package_id (0, 1, 2) and package_cpus_list (0-2, 3-6, 7) say three \
         packages, and pinrun follows the kernel",
    ),
];

/// Where pinrun deliberately disagrees with hwloc.
const HWLOC_EXCEPTIONS: &[Exception] = &[
    (
        "hwloc/64amd64-4s2n4ca2co",
        "cores",
        "AMD Bulldozer: the kernel's thread_siblings_list pairs the two integer cores of \
         each compute unit (cpu0: 0-1) although their core_id differs (0 and 1); hwloc \
         builds Cores from core_id and shows 64 single-PU cores, pinrun follows the \
         kernel's sibling lists (DESIGN §2: never derive cores any other way), so \
         --cores gives each compute unit to one command",
    ),
    (
        "hwloc/nvidiagpunumanodes",
        "PUs",
        "cgroup v1 /jjh has cpuset.cpus 0-175 but cpuset.effective_cpus 0-87 (and \
         effective_mems 0); hwloc reads cpuset.cpus and shows CPUs 88-103 and node 8 as \
         usable, pinrun uses the effective set the kernel enforces on sched_setaffinity \
         (DESIGN §2 allowed CPUs), so 88-103 are not allowed",
    ),
    (
        "hwloc/nvidiagpunumanodes",
        "allowed nodes",
        "same cgroup: hwloc reads cpuset.mems (0,8,250-255) and by default hides the GPU \
         memory nodes 250-255, so it shows nodes 0 and 8; the kernel confines the process \
         to cpuset.effective_mems = 0, which pinrun uses",
    ),
    (
        "hwloc/8em64t-2s2ca2c-buggynuma",
        "allowed nodes",
        "the firmware lists every CPU in all 8 nodes; hwloc keeps node 0 only (the other \
         seven have the same cpuset and are dropped with their memory), pinrun keeps the \
         8 nodes the kernel reports, each with its own ~2 GiB, keeps every CPU in node 0 \
         like hwloc, and warns once about the firmware data \
         (see buggy_numa_every_node_lists_every_cpu)",
    ),
];

/// Checks the disagreements `errs` of dump `m` against `exceptions`:
/// `Ok(true)` when it fully agrees, `Ok(false)` when it disagrees only in
/// excused aspects (each of which still disagrees), `Err` otherwise.
fn judge(m: &str, errs: &[String], exceptions: &[Exception]) -> Result<bool, String> {
    let excused: Vec<&Exception> = exceptions.iter().filter(|e| e.0 == m).collect();
    let mut bad = Vec::new();
    for e in errs {
        if !excused.iter().any(|x| e.starts_with(&format!("{}:", x.1))) {
            bad.push(e.clone());
        }
    }
    for x in &excused {
        if !errs.iter().any(|e| e.starts_with(&format!("{}:", x.1))) {
            bad.push(format!("{}: now agrees; drop the exception ({})", x.1, x.2));
        }
    }
    if bad.is_empty() {
        Ok(excused.is_empty())
    } else {
        Err(format!("{m}:\n  {}", bad.join("\n  ")))
    }
}

fn show(p: &Partition) -> String {
    let groups: Vec<String> = p
        .iter()
        .map(|g| g.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
        .collect();
    format!("{{{}}}", groups.join(" | "))
}

fn check(what: &str, ours: Partition, theirs: Partition, errs: &mut Vec<String>) {
    if ours != theirs {
        errs.push(format!(
            "{what}: pinrun {} vs peer {}",
            show(&ours),
            show(&theirs)
        ));
    }
}

/// Compares pinrun with `lscpu --parse` on one util-linux dump.
fn lscpu_disagreements(rel: &str) -> Vec<String> {
    let rows = lscpu_parse(rel);
    let domain: Set = rows.keys().copied().collect();
    let p = PinrunView::of(rel);
    let mut errs = Vec::new();
    let online = p.online();
    if !domain.is_subset(&online) {
        errs.push(format!(
            "lscpu lists CPUs {:?} that pinrun has offline",
            domain.difference(&online).collect::<Vec<_>>()
        ));
    }
    let col = |f: fn(&LscpuRow) -> Option<u32>| -> BTreeMap<u32, Option<u32>> {
        rows.iter().map(|(c, r)| (*c, f(r))).collect()
    };
    check(
        "cores",
        p.cores(&domain),
        partition_of(&col(|r| r.core), &domain),
        &mut errs,
    );
    check(
        "sockets",
        p.packages(&domain),
        partition_of(&col(|r| r.socket), &domain),
        &mut errs,
    );
    check(
        "nodes",
        p.node_partition(&domain),
        partition_of(&col(|r| r.node), &domain),
        &mut errs,
    );
    errs
}

/// The `lscpu` summary lines `<key>:  <cpulist>` (util-linux prints
/// strides such as `0-62:2`), keyed by `<key>`.
fn lscpu_summary_lists(rel: &str) -> BTreeMap<String, Set> {
    let text = std::fs::read_to_string(machine(rel).join("expected-lscpu.txt")).unwrap();
    text.lines()
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let list = k.ends_with("CPU(s) list")
                || (k.starts_with("NUMA node") && k.ends_with(" CPU(s)"));
            list.then(|| {
                let set = pinrun::cpuset::CpuSet::parse_sysfs_list(v, None).expect("lscpu cpulist");
                (k.to_string(), set.to_vec().into_iter().collect())
            })
        })
        .collect()
}

/// Compares pinrun with lscpu's summary: online and offline CPUs, and the
/// CPUs of every NUMA node lscpu names (`NUMA nodeN CPU(s):`, empty for a
/// CPU-less node; kernel node ids on both sides).
fn lscpu_summary_disagreements(rel: &str) -> Vec<String> {
    let lists = lscpu_summary_lists(rel);
    let p = PinrunView::of(rel);
    let mut errs = Vec::new();
    if let Some(on) = lists.get("On-line CPU(s) list")
        && *on != p.online()
    {
        errs.push(format!("online: pinrun {:?} vs lscpu {on:?}", p.online()));
    }
    let offline: Set = p
        .cpus
        .keys()
        .filter(|c| !p.online().contains(c))
        .copied()
        .collect();
    if let Some(off) = lists.get("Off-line CPU(s) list")
        && *off != offline
    {
        errs.push(format!("offline: pinrun {offline:?} vs lscpu {off:?}"));
    }
    let nodes: BTreeMap<u32, Set> = lists
        .iter()
        .filter_map(|(k, v)| {
            Some((
                k.strip_prefix("NUMA node")?
                    .strip_suffix(" CPU(s)")?
                    .parse()
                    .ok()?,
                v.clone(),
            ))
        })
        .collect();
    // Without node/ (a kernel without NUMA) lscpu prints no NUMA lines,
    // while pinrun, as hwloc, shows one node 0 with every online CPU.
    let no_numa = !machine(rel).join("sys/devices/system/node").exists()
        && nodes.is_empty()
        && p.nodes.keys().eq([0].iter())
        && p.nodes[&0] == p.online();
    if nodes != p.nodes && !no_numa {
        errs.push(format!(
            "node lists: pinrun {:?} vs lscpu {nodes:?}",
            p.nodes
        ));
    }
    errs
}

fn lscpu_dumps() -> Vec<String> {
    let mut v = machines("util-linux");
    v.extend(machines("util-linux-historical"));
    v.retain(|m| machine(m).join("expected-lscpu.txt").is_file());
    v
}

/// Every util-linux dump (22 current + 3 historical): pinrun groups the
/// CPUs of lscpu's first `--parse` section into the same cores, sockets and
/// nodes as lscpu.
#[test]
fn lscpu_partitions_agree() {
    let dumps = lscpu_dumps();
    assert_eq!(dumps.len(), 25, "22 current + 3 historical lscpu dumps");
    let mut agree = 0;
    let mut failures = Vec::new();
    let mut excused = 0;
    for m in &dumps {
        let mut errs = lscpu_disagreements(m);
        errs.extend(lscpu_summary_disagreements(m));
        match judge(m, &errs, LSCPU_EXCEPTIONS) {
            Ok(true) => agree += 1,
            Ok(false) => excused += 1,
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "lscpu: {agree}/{} dumps agree; {excused} more agree except for named exceptions",
        dumps.len()
    );
    assert!(
        failures.is_empty(),
        "disagreements with lscpu:\n{}",
        failures.join("\n")
    );
    assert_eq!(agree + excused, dumps.len());
}

/// One upstream hwloc test (`hwloc-test-<t>.test`) of a dump.
#[derive(Debug, Clone)]
pub(crate) struct HwlocTest {
    pub(crate) target: String,
    pub(crate) options: String,
    pub(crate) env: String,
}

fn hwloc_tests(rel: &str) -> Vec<HwlocTest> {
    let mut v: Vec<HwlocTest> = std::fs::read_dir(machine(rel))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("hwloc-test-"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let field = |k: &str| -> String {
                text.lines()
                    .filter_map(|l| l.strip_prefix(k))
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            HwlocTest {
                target: field("target:"),
                options: field("options:"),
                env: field("env:"),
            }
        })
        .collect();
    v.sort_by(|a, b| a.target.cmp(&b.target));
    v
}

/// The expected output to compare with, per dump. Preference:
/// 1. a console output with no `options:` and no `env:` (hwloc's default
///    `lstopo -v -`): every object, only allowed PUs and nodes;
/// 2. a console output with options: the only one of this kind is
///    16amd64-4n4c-cgroup-distance-merge with `--filter all:structure
///    --no-icaches`, which removes caches and objects that add no structure
///    (a Core with one PU disappears, so a PU without a Core is its own core);
/// 3. an XML export (six dumps have no console output): `--no-icaches` and
///    `--whole-io` change only caches and I/O objects, and
///    nvidia-dgx-gb10's `HWLOC_CPUKINDS=midr=0` (the `-nomidr` variant, not
///    chosen) changes only CPU kinds.
///
/// Never chosen: `--merge` (drops levels identical to their child, e.g. a
/// Core level with one PU each, which would look like no cores at all),
/// `--no-caches` and `--disallowed` variants where a plain one exists (the
/// plain one also checks pinrun's allowed set), and
/// `HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1` (-kept: GPU memory nodes attached to
/// the package near the GPU, i.e. given that package's CPUs, where the kernel
/// says they have none).
pub(crate) fn hwloc_choice(rel: &str) -> (HwlocTest, HwObj) {
    let tests = hwloc_tests(rel);
    let pick = |console: bool, plain: bool| {
        tests.iter().find(|t| {
            t.target.ends_with(".console") == console
                && (!plain || (t.options.is_empty() && t.env.is_empty()))
        })
    };
    let t = pick(true, true)
        .or_else(|| pick(true, false))
        .or_else(|| pick(false, true))
        .or_else(|| pick(false, false))
        .unwrap_or_else(|| panic!("{rel}: no hwloc test"))
        .clone();
    let text = std::fs::read_to_string(machine(rel).join(format!("expected-lstopo-{}", t.target)))
        .unwrap();
    let tree = if t.target.ends_with(".xml") {
        lstopo_xml(&text)
    } else {
        lstopo_console(&text)
    };
    (t, tree)
}

/// Compares pinrun with hwloc's lstopo on one hwloc dump.
fn hwloc_disagreements(rel: &str) -> Vec<String> {
    let (t, tree) = hwloc_choice(rel);
    let h = HwlocView::of(&tree);
    let p = PinrunView::of(rel);
    let mut errs = Vec::new();
    // The PUs hwloc shows are the online CPUs the process may use (all
    // online CPUs with --disallowed): offline CPUs are never shown.
    let usable = if t.options.contains("--disallowed") {
        p.online()
    } else {
        p.online().intersection(&p.allowed).copied().collect()
    };
    if h.pus != usable {
        errs.push(format!(
            "PUs: pinrun online∩allowed {:?} vs hwloc {:?}",
            usable, h.pus
        ));
    }
    let domain = h.pus.clone();
    check("cores", p.cores(&domain), h.cores.clone(), &mut errs);
    check(
        "packages",
        p.packages(&domain),
        h.packages.clone(),
        &mut errs,
    );
    if !h.dies.is_empty() {
        check("dies", p.dies(&domain), h.dies.clone(), &mut errs);
    }
    // Only the last-level cache index is kept in the dumps (fixtures
    // INDEX, transformation 2), so only hwloc's highest cache compares.
    // Where the kernel gives no usable set (an all-zero shared_cpu_map on
    // old ia64 kernels) pinrun reports none and hwloc guesses one; compare
    // the CPUs both know.
    let known: Set = p
        .cpus
        .iter()
        .filter(|(_, c)| c["llc"].is_array())
        .map(|(id, _)| *id)
        .collect();
    let cached: Set = h
        .llc
        .iter()
        .flatten()
        .filter(|c| known.contains(c))
        .copied()
        .collect();
    check("llc", p.llc(&cached), restrict(&h.llc, &cached), &mut errs);
    // Nodes: every node hwloc shows exists in pinrun with the same PUs
    // (a CPU-less node has none), and each PU is in the same node.
    // hwloc always shows at least one NUMANode: where the kernel exposes no
    // node/ directory it shows P#0 holding every PU, and so does pinrun
    // (issue 14): compared as any other node below.
    // The NUMANodes hwloc shows (not marked disallowed) are the memory
    // nodes the process may use (its cpuset's effective mems).
    let shown: Set = h
        .nodes
        .keys()
        .filter(|n| !h.disallowed_nodes.contains(n))
        .copied()
        .collect();
    if !t.options.contains("--disallowed") && shown != p.allowed_nodes {
        errs.push(format!(
            "allowed nodes: pinrun {:?} vs hwloc {:?}",
            p.allowed_nodes, shown
        ));
    }
    let mut node_of: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (n, cpus) in &h.nodes {
        for c in cpus {
            node_of.entry(*c).or_default().push(*n);
        }
        match p.nodes.get(n) {
            None => errs.push(format!("hwloc node {n} missing in pinrun")),
            Some(ours) => {
                let ours: Set = ours.intersection(&domain).copied().collect();
                if &ours != cpus {
                    errs.push(format!("node {n}: pinrun CPUs {ours:?} vs hwloc {cpus:?}"));
                }
            }
        }
    }
    let one: BTreeMap<u32, u32> = node_of
        .iter()
        .filter(|(_, v)| v.len() == 1)
        .map(|(c, v)| (*c, v[0]))
        .collect();
    let single: Set = one.keys().copied().collect();
    check(
        "nodes",
        p.node_partition(&single),
        partition_of(&one, &single),
        &mut errs,
    );
    errs
}

/// Every hwloc dump (34): pinrun groups the PUs hwloc shows into the same
/// Cores, Packages and NUMANodes, and shows exactly the same PUs as usable.
#[test]
fn hwloc_partitions_agree() {
    let dumps = machines("hwloc");
    assert_eq!(dumps.len(), 34);
    let mut agree = 0;
    let mut failures = Vec::new();
    let mut excused = 0;
    for m in &dumps {
        match judge(m, &hwloc_disagreements(m), HWLOC_EXCEPTIONS) {
            Ok(true) => agree += 1,
            Ok(false) => excused += 1,
            Err(e) => failures.push(format!(
                "{e}\n  (compared with {})",
                hwloc_choice(m).0.target
            )),
        }
    }
    eprintln!(
        "hwloc: {agree}/{} dumps agree; {excused} more agree except for named exceptions",
        dumps.len()
    );
    assert!(
        failures.is_empty(),
        "disagreements with hwloc:\n{}",
        failures.join("\n")
    );
    assert_eq!(agree + excused, dumps.len());
}

/// nto must-gathers with cadvisor's MachineInfo: per NUMA node, the same
/// cores (thread sets) and the same split of those cores into sockets.
#[test]
fn cadvisor_cores_and_sockets_per_node_agree() {
    let dumps: Vec<String> = machines("nto")
        .into_iter()
        .filter(|m| {
            machine(m)
                .join("expected-cadvisor-machineinfo.json")
                .is_file()
        })
        .collect();
    let mut agree = 0;
    let mut failures = Vec::new();
    for m in &dumps {
        let text =
            std::fs::read_to_string(machine(m).join("expected-cadvisor-machineinfo.json")).unwrap();
        let info: serde_json::Value = serde_json::from_str(&text).unwrap();
        let p = PinrunView::of(m);
        let mut errs = Vec::new();
        let mut all = Set::new();
        for node in info["topology"].as_array().expect("topology") {
            let id = node["node_id"].as_u64().unwrap() as u32;
            let mut cores = Partition::new();
            let mut sockets: BTreeMap<u32, u64> = BTreeMap::new();
            for core in node["cores"].as_array().unwrap() {
                let threads: Set = ids(&core["thread_ids"]).into_iter().collect();
                for t in &threads {
                    sockets.insert(*t, core["socket_id"].as_u64().unwrap());
                }
                cores.insert(threads);
            }
            let cpus: Set = cores.iter().flatten().copied().collect();
            all.extend(cpus.iter().copied());
            let ours: Set = p
                .nodes
                .get(&id)
                .cloned()
                .unwrap_or_default()
                .intersection(&p.online())
                .copied()
                .collect();
            if ours != cpus {
                errs.push(format!(
                    "node {id}: pinrun CPUs {ours:?} vs cadvisor {cpus:?}"
                ));
            }
            check(
                &format!("node {id} cores"),
                p.cores(&cpus),
                cores,
                &mut errs,
            );
            check(
                &format!("node {id} sockets"),
                p.packages(&cpus),
                partition_of(&sockets, &cpus),
                &mut errs,
            );
        }
        let sockets: Set = info["topology"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|n| {
                n["cores"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["socket_id"].as_u64().unwrap() as u32)
            })
            .collect();
        if p.packages(&all).len() != sockets.len()
            || sockets.len() as u64 != info["num_sockets"].as_u64().unwrap()
        {
            errs.push(format!(
                "sockets: pinrun {} vs cadvisor num_sockets {}",
                p.packages(&all).len(),
                info["num_sockets"]
            ));
        }
        if p.cores(&all).len()
            != info["topology"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n["cores"].as_array().unwrap().len())
                .sum::<usize>()
        {
            errs.push("core count differs from the per-node core lists".into());
        }
        // Not compared: cadvisor's num_physical_cores, which counts distinct
        // core_id values machine-wide (28 on the 2×28-core master, whose
        // core ids repeat in each socket); its per-node core lists above
        // are the reference.
        if errs.is_empty() {
            agree += 1;
        } else {
            failures.push(format!("{m}:\n  {}", errs.join("\n  ")));
        }
    }
    eprintln!("cadvisor: {agree}/{} dumps agree", dumps.len());
    assert!(
        failures.is_empty(),
        "disagreements with cadvisor:\n{}",
        failures.join("\n")
    );
    assert_eq!(dumps.len(), 5, "nto dumps with a cadvisor machineinfo.json");
}

/// hwloc/8em64t-2s2ca2c-buggynuma: the firmware lists every CPU in all 8
/// nodes. pinrun says so in ONE firmware-data warning (not one per CPU and
/// node), keeps each CPU in the lowest node listing it, as hwloc's output
/// does (one NUMANode P#0 with all PUs), and does not invent a grouping:
/// every node still reports the cpulist the kernel gave it.
#[test]
fn buggy_numa_every_node_lists_every_cpu() {
    let m = "hwloc/8em64t-2s2ca2c-buggynuma";
    let p = PinrunView::of(m);
    assert_eq!(
        p.warnings,
        vec![
            "firmware data: CPUs 0-7 are each listed in the cpulists of nodes 0-7; using node 0"
                .to_string()
        ]
    );
    let all: Set = (0..8).collect();
    assert_eq!(
        p.nodes.keys().copied().collect::<Vec<_>>(),
        (0..8).collect::<Vec<_>>()
    );
    assert!(
        p.nodes.values().all(|cpus| *cpus == all),
        "each node keeps the kernel's cpulist"
    );
    assert_eq!(p.node_partition(&all), Partition::from([all.clone()]));
    let (_, tree) = hwloc_choice(m);
    let h = HwlocView::of(&tree);
    assert_eq!(
        h.nodes,
        BTreeMap::from([(0, all.clone())]),
        "hwloc merged the nodes into P#0"
    );
    // --check reports it as a firmware-data finding (exit 1), once.
    let out = at(machine(m), &["--check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "firmware-data").count(),
        1,
        "{codes:?}"
    );
}

/// A minimal sysfs tree: CPUs `0..ncpus` online, each its own core, and
/// node directories with the given cpulists.
fn synthetic(ncpus: u32, nodes: &[(u32, &str)]) -> tempfile::TempDir {
    let dir = common::tempdir();
    let cpu = dir.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    let all = format!("0-{}\n", ncpus - 1);
    for f in ["online", "possible", "present"] {
        std::fs::write(cpu.join(f), &all).unwrap();
    }
    for c in 0..ncpus {
        let t = cpu.join(format!("cpu{c}/topology"));
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("core_cpus_list"), format!("{c}\n")).unwrap();
        std::fs::write(t.join("physical_package_id"), "0\n").unwrap();
        std::fs::write(t.join("core_id"), format!("{c}\n")).unwrap();
    }
    for (n, list) in nodes {
        let d = dir.path().join(format!("sys/devices/system/node/node{n}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cpulist"), format!("{list}\n")).unwrap();
    }
    dir
}

fn warnings_of(dir: &tempfile::TempDir) -> (Vec<String>, serde_json::Value) {
    let out = at(dir.path(), &["--show", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    (w, v)
}

/// The whole kind of fault "a CPU in several node cpulists": one warning
/// per distinct set of nodes that share CPUs, naming the CPUs and the node
/// kept (the lowest); CPUs listed once are untouched and warn nothing.
#[test]
fn cpus_in_several_nodes_warn_once_per_overlap() {
    // Partial overlap: 2-3 in nodes 0 and 1, 5 in nodes 1 and 2, 6 in 0-2.
    let dir = synthetic(8, &[(0, "0-3,6"), (1, "2-5,6"), (2, "5-7")]);
    let (w, v) = warnings_of(&dir);
    assert_eq!(
        w,
        vec![
            "firmware data: CPUs 2-3 are each listed in the cpulists of nodes 0-1; using node 0",
            "firmware data: CPU 6 is listed in the cpulists of nodes 0-2; using node 0",
            "firmware data: CPU 5 is listed in the cpulists of nodes 1-2; using node 1",
        ]
    );
    let node_of: Vec<u64> = v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["node"].as_u64().unwrap())
        .collect();
    assert_eq!(node_of, vec![0, 0, 0, 0, 1, 1, 0, 2]);
    // Disjoint cpulists (the normal case), sparse ids: no warning.
    let dir = synthetic(4, &[(0, "0-1"), (8, "2-3"), (250, "")]);
    assert!(warnings_of(&dir).0.is_empty());
}

/// The whole kind of fault "memory nodes limited by the cgroup, no
/// `Mems_allowed_list` in the dump": the cgroup's effective memory nodes
/// limit the process as its effective CPUs do (hwloc dumps
/// 16amd64-8n2c-cpusets, 16amd64-4n4c-cgroup-distance-merge and
/// nvidiagpunumanodes above; here cgroup v2 on a synthetic tree), and
/// `Mems_allowed_list`, when present, is what the kernel enforces.
#[test]
fn cgroup_memory_nodes_limit_allowed_nodes() {
    let dir = synthetic(4, &[(0, "0-1"), (1, "2-3"), (2, "")]);
    let w = |rel: &str, text: &str| common::write_file(dir.path(), rel, text);
    w("proc/self/cgroup", "0::/job\n");
    w(
        "proc/mounts",
        "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n",
    );
    w("sys/fs/cgroup/job/cpuset.cpus.effective", "0-3\n");
    w("sys/fs/cgroup/job/cpuset.mems.effective", "1-2\n");
    let (_, v) = warnings_of(&dir);
    assert_eq!(ids(&v["allowed_nodes"]), vec![1, 2]);
    let out = at(dir.path(), &["--dry-run", "--membind=0"]);
    assert_status(&out, 125);
    w("proc/self/status", "Name:\tx\nMems_allowed_list:\t0-1\n");
    let (_, v) = warnings_of(&dir);
    assert_eq!(ids(&v["allowed_nodes"]), vec![0, 1]);
}

/// The whole kind of fault "a cache sharing set that does not contain the
/// CPU" (old ia64 kernels print an all-zero `shared_cpu_map`, as in
/// hwloc/8ia64-2s2c2t and 8ia64-2n2s2c): the LLC is unknown (`null`), not
/// "shared by every CPU with the same empty set".
#[test]
fn llc_without_the_cpu_itself_is_unknown() {
    for m in ["hwloc/8ia64-2s2c2t", "hwloc/8ia64-2n2s2c"] {
        let p = PinrunView::of(m);
        assert!(p.cpus.values().all(|c| c["llc"].is_null()), "{m}");
    }
    let dir = synthetic(4, &[]);
    let cache = |cpu: u32, file: &str, text: &str| {
        let d = dir
            .path()
            .join(format!("sys/devices/system/cpu/cpu{cpu}/cache/index3"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("level"), "3\n").unwrap();
        std::fs::write(d.join("type"), "Unified\n").unwrap();
        std::fs::write(d.join(file), text).unwrap();
    };
    cache(0, "shared_cpu_map", "00000000\n");
    cache(1, "shared_cpu_list", "\n\0");
    cache(2, "shared_cpu_list", "2-3\n");
    cache(3, "shared_cpu_map", "0000000c\n");
    let (_, v) = warnings_of(&dir);
    let llc: Vec<serde_json::Value> = v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["llc"].clone())
        .collect();
    assert_eq!(
        llc,
        vec![
            serde_json::json!(null),
            serde_json::json!(null),
            serde_json::json!([2, 3]),
            serde_json::json!([2, 3])
        ]
    );
}
