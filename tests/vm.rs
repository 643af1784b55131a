//! Real-kernel tests: each test boots Debian's kernel under QEMU (TCG) with
//! an emulated topology (sockets, SMT, NUMA nodes, isolcpus), runs the static
//! pinrun inside it (`vm/scenarios/<name>.sh`, one boot per test), and
//! asserts on what the guest read back: `Cpus_allowed_list`,
//! `/proc/<pid>/stat` policy fields, `numa_maps`, `pinrun --show --json`.
//!
//! Every test is ignored by default (plain `cargo test` needs no VM and
//! reports them as ignored); `.ci/run` runs them with
//! `cargo test --test vm -- --ignored`. A guest that cannot boot is a
//! failure, with the console shown. `PINRUN_VM_REPLAY=DIR` re-checks the logs `DIR/<name>.log`
//! of an earlier run without booting. `vm/run.sh` does the work (packages, kernel cache, static
//! build, initramfs, QEMU with a timeout and one retry).

mod common;
use common::stat_field;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

struct Block {
    rc: i32,
    out: String,
    err: String,
}

struct Guest {
    name: &'static str,
    log: PathBuf,
    blocks: BTreeMap<String, Block>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The static pinrun for the guest: `$PINRUN_VM_BIN`, or built once by
/// `vm/build.sh` (its own target dir; the ordinary build is untouched).
fn guest_pinrun() -> &'static str {
    static BIN: OnceLock<String> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(b) = std::env::var("PINRUN_VM_BIN") {
            return b;
        }
        let out = Command::new(repo().join("vm/build.sh"))
            .output()
            .expect("run vm/build.sh");
        assert!(
            out.status.success(),
            "vm/build.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    })
}

/// Boots scenario `name` (or reads its log under `PINRUN_VM_REPLAY`).
fn boot(name: &'static str) -> Guest {
    boot_with(name, "")
}

/// Boots scenario `name` with `append` after its kernel parameters
/// (`PINRUN_VM_APPEND`).
fn boot_with(name: &'static str, append: &str) -> Guest {
    let log = if let Some(dir) = std::env::var_os("PINRUN_VM_REPLAY") {
        // re-check the assertions on the logs of an earlier run, no boot
        PathBuf::from(dir).join(format!("{name}.log"))
    } else {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vm");
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join(format!("{name}.log"));
        let out = Command::new(repo().join("vm/run.sh"))
            .arg(name)
            .arg(&log)
            .env("PINRUN_VM_BIN", guest_pinrun())
            .env("PINRUN_VM_APPEND", append)
            .output()
            .expect("run vm/run.sh");
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            out.status.success(),
            "scenario {name}: the VM did not boot or hung ({:?}); console above, log {}",
            out.status,
            log.display()
        );
        log
    };
    let text = std::fs::read_to_string(&log).expect("console log");
    let text = text.replace('\r', "");
    assert!(
        text.lines().any(|l| l == "=== scenario exit=0"),
        "scenario {name}: the guest script did not finish cleanly; log {}:\n{text}",
        log.display()
    );
    Guest {
        name,
        blocks: parse(&text),
        log,
    }
}

/// The `@@@ NAME rc=N` / `@o` / `@e` / `@@@ end` blocks of vm/guest/lib.sh.
fn parse(text: &str) -> BTreeMap<String, Block> {
    let mut blocks = BTreeMap::new();
    let mut cur: Option<(String, Block)> = None;
    for line in text.lines() {
        if line.starts_with("@@@ end") {
            if let Some((n, b)) = cur.take() {
                blocks.insert(n, b);
            }
        } else if let Some(rest) = line.strip_prefix("@@@ ") {
            let (n, rc) = rest.rsplit_once(" rc=").expect("block header");
            let rc = rc.parse().expect("rc");
            let b = Block {
                rc,
                out: String::new(),
                err: String::new(),
            };
            cur = Some((n.to_string(), b));
        } else if let Some((_, b)) = cur.as_mut() {
            if let Some(l) = line.strip_prefix("@o ") {
                b.out.push_str(l);
                b.out.push('\n');
            } else if let Some(l) = line.strip_prefix("@e ") {
                b.err.push_str(l);
                b.err.push('\n');
            }
        }
    }
    blocks
}

impl Guest {
    fn block(&self, n: &str) -> &Block {
        self.blocks.get(n).unwrap_or_else(|| {
            panic!(
                "{}: no output for {n:?} in {}",
                self.name,
                self.log.display()
            )
        })
    }

    fn describe(&self, n: &str) -> String {
        let b = self.block(n);
        format!(
            "{}/{n}: rc={}\nstdout:\n{}stderr:\n{}",
            self.name, b.rc, b.out, b.err
        )
    }

    /// Stdout of a command that must have succeeded.
    fn ok(&self, n: &str) -> &str {
        let b = self.block(n);
        assert_eq!(b.rc, 0, "{}", self.describe(n));
        &b.out
    }

    /// Stderr of a pinrun launch that must have been refused (exit 125,
    /// nothing run).
    fn refused(&self, n: &str) -> &str {
        let b = self.block(n);
        assert_eq!(b.rc, 125, "{}", self.describe(n));
        assert!(b.out.is_empty(), "{}", self.describe(n));
        assert!(b.err.starts_with("pinrun: "), "{}", self.describe(n));
        &b.err
    }

    fn json(&self, n: &str) -> Value {
        self.ok(n);
        self.json_any(n)
    }

    /// Stdout as JSON, whatever the exit status.
    fn json_any(&self, n: &str) -> Value {
        serde_json::from_str(&self.block(n).out)
            .unwrap_or_else(|e| panic!("{e}: {}", self.describe(n)))
    }

    /// `Cpus_allowed_list` printed by the command pinrun ran.
    fn allowed(&self, n: &str) -> String {
        field(self.ok(n), "Cpus_allowed_list:").unwrap_or_else(|| panic!("{}", self.describe(n)))
    }
}

fn field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.trim().to_string())
}

/// (rt_priority, policy) of a stat line: fields 40 and 41.
fn rt(stat: &str) -> (i64, i64) {
    (stat_field(stat, 40), stat_field(stat, 41))
}

/// The largest anonymous mapping of a numa_maps dump: (policy, pages per node).
fn biggest_anon(maps: &str) -> (String, BTreeMap<u32, u64>) {
    let mut best: Option<(u64, String, BTreeMap<u32, u64>)> = None;
    for l in maps.lines() {
        let mut it = l.split_whitespace();
        let (Some(_addr), Some(mut policy)) = (it.next().map(str::to_string), it.next()) else {
            continue;
        };
        // 6.9+ writes MPOL_WEIGHTED_INTERLEAVE as "weighted interleave:NODES"
        let joined;
        if policy == "weighted" {
            joined = format!("weighted {}", it.next().unwrap_or_default());
            policy = &joined;
        }
        let words: Vec<&str> = it.collect();
        if words.iter().any(|w| w.starts_with("file=")) {
            continue;
        }
        let Some(anon) = words
            .iter()
            .find_map(|w| w.strip_prefix("anon="))
            .map(|v| v.parse::<u64>().unwrap())
        else {
            continue;
        };
        let nodes = words
            .iter()
            .filter_map(|w| {
                let (k, v) = w.strip_prefix('N')?.split_once('=')?;
                Some((k.parse().ok()?, v.parse().ok()?))
            })
            .collect();
        if best.as_ref().is_none_or(|b| anon > b.0) {
            best = Some((anon, policy.to_string(), nodes));
        }
    }
    let (_, p, n) = best.unwrap_or_else(|| panic!("no anonymous mapping in:\n{maps}"));
    (p, n)
}

/// `irq_effective` output (vm/guest/lib.sh): IRQ -> its effective CPUs.
fn irq_effective(out: &str) -> BTreeMap<u64, Vec<u64>> {
    out.lines()
        .filter_map(|l| {
            let (irq, list) = l.split_once(' ')?;
            let cpus = pinrun::cpuset::CpuSet::parse(list.trim()).ok()?;
            Some((irq.parse().ok()?, cpus.iter().map(|c| c as u64).collect()))
        })
        .collect()
}

/// The finding codes of a `--check --json` block: exit 1 exactly when there
/// is a warning (notices and info never fail a check: pinrun(1) CHECKS);
/// each `irq-on-cpu` finding names IRQs that the guest's /proc/irq really
/// delivers to the CPUs it names.
fn check_codes(g: &Guest, n: &str, irqs: &BTreeMap<u64, Vec<u64>>) -> Vec<String> {
    let check = g.json_any(n);
    let findings = check["findings"].as_array().expect("findings");
    let rc = g.block(n).rc;
    let warned = findings.iter().any(|f| f["severity"] == "warning");
    assert_eq!(rc, i32::from(warned), "{}", g.describe(n));
    for f in findings.iter().filter(|f| f["code"] == "irq-on-cpu") {
        // One finding for all IRQs: each IRQ's own CPUs are in irq_details.
        for (irq, (cpus, _, _)) in irq_details(f) {
            let on = irqs.get(&irq).unwrap_or_else(|| panic!("IRQ {irq}: {f}"));
            assert!(cpus.iter().all(|c| on.contains(c)), "{f} vs {on:?}");
        }
    }
    findings
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

/// `irq_listed` output (vm/guest/lib.sh): the IRQs /proc/interrupts lists,
/// IRQ -> (its effective CPUs from /proc/irq/N, the row's last word).
fn irq_listed(out: &str) -> BTreeMap<u64, (Vec<u64>, String)> {
    out.lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 3, "irq_listed line {l:?}");
            let cpus = match w[1] {
                "-" => Vec::new(),
                list => pinrun::cpuset::CpuSet::parse(list)
                    .unwrap_or_else(|e| panic!("{l:?}: {e:?}"))
                    .iter()
                    .map(u64::from)
                    .collect(),
            };
            (w[0].parse().unwrap(), (cpus, w[2].to_string()))
        })
        .collect()
}

/// The IRQ findings (`irq-on-cpu`, `managed-irq-on-cpu`,
/// `default-irq-affinity`) of a `--check --json` block, in order (exit 1
/// exactly when there is a warning).
fn irq_findings(g: &Guest, n: &str) -> Vec<Value> {
    let check = g.json_any(n);
    let findings = check["findings"].as_array().expect("findings");
    let warned = findings.iter().any(|f| f["severity"] == "warning");
    assert_eq!(g.block(n).rc, i32::from(warned), "{}", g.describe(n));
    findings
        .iter()
        .filter(|f| {
            ["irq-on-cpu", "managed-irq-on-cpu", "default-irq-affinity"]
                .contains(&f["code"].as_str().unwrap())
        })
        .cloned()
        .collect()
}

/// The IRQs of an IRQ finding (`irq_details`): number → (CPUs, name, count).
fn irq_details(f: &Value) -> BTreeMap<u64, (Vec<u64>, String, Option<u64>)> {
    f["irq_details"]
        .as_array()
        .map(|v| v.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|d| {
            (
                d["irq"].as_u64().unwrap(),
                (
                    nums(&d["cpus"]),
                    d["name"].as_str().unwrap().to_string(),
                    d["count"].as_u64(),
                ),
            )
        })
        .collect()
}

/// IRQ number → (its CPUs among the checked ones, its name).
type IrqCpusNames = BTreeMap<u64, (Vec<u64>, String)>;

/// What of an IRQ finding does not change between two reads: its code, its
/// CPUs and its IRQs with their CPUs and names (counts grow, and with them
/// the message, the order and whether an IRQ has fired yet).
fn stable(f: &Value) -> (Value, Vec<u64>, IrqCpusNames) {
    let irqs = irq_details(f)
        .into_iter()
        .map(|(n, (cpus, name, _))| (n, (cpus, name)))
        .collect();
    (f["code"].clone(), nums(&f["cpus"]), irqs)
}

/// The `rt-competitor` findings of a `--dry-run --json` block.
fn rt_competitors(g: &Guest, n: &str) -> Vec<Value> {
    g.json(n)["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "rt-competitor")
        .cloned()
        .collect()
}

fn nums(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn range(a: u64, b: u64) -> Vec<u64> {
    (a..=b).collect()
}

/// `--show --json` against what QEMU was given: `packages` sockets of
/// `cores` cores of `threads` threads, numbered thread-fastest (QEMU's
/// order); `nodes[i]` = (node id, its CPUs, has memory).
fn assert_topology(
    show: &Value,
    packages: u64,
    cores: u64,
    threads: u64,
    nodes: &[(u64, Vec<u64>, bool)],
) {
    let n = packages * cores * threads;
    let cpus = show["cpus"].as_array().expect("cpus");
    assert_eq!(cpus.len() as u64, n, "{show}");
    assert_eq!(nums(&show["online"]), range(0, n - 1));
    let mut core_ids = std::collections::BTreeSet::new();
    for c in cpus {
        let id = c["cpu"].as_u64().unwrap();
        let first = id - id % threads;
        assert_eq!(c["online"], true, "{c}");
        assert_eq!(c["package"].as_u64(), Some(id / (cores * threads)), "{c}");
        assert_eq!(
            nums(&c["siblings"]),
            range(first, first + threads - 1),
            "{c}"
        );
        let pkg_first = id - id % (cores * threads);
        assert_eq!(
            nums(&c["package_cpus"]),
            range(pkg_first, pkg_first + cores * threads - 1),
            "{c}"
        );
        let node = nodes.iter().find(|(_, cs, _)| cs.contains(&id)).unwrap().0;
        assert_eq!(c["node"].as_u64(), Some(node), "{c}");
        core_ids.insert((c["package"].as_u64(), c["core"].as_u64()));
    }
    assert_eq!(core_ids.len() as u64, packages * cores, "distinct cores");
    let js_nodes = show["nodes"].as_array().expect("nodes");
    assert_eq!(js_nodes.len(), nodes.len(), "{show}");
    for (id, ncpus, mem) in nodes {
        let j = js_nodes
            .iter()
            .find(|j| j["node"].as_u64() == Some(*id))
            .unwrap_or_else(|| panic!("node {id} missing: {show}"));
        assert_eq!(&nums(&j["cpus"]), ncpus, "{j}");
        assert_eq!(j["has_cpu"], !ncpus.is_empty(), "{j}");
        assert_eq!(j["has_memory"], *mem, "{j}");
        let total = j["mem_total_kb"].as_u64().unwrap_or(0);
        if *mem {
            assert!(total > 100_000 && total <= 512 * 1024, "{j}");
        } else {
            assert_eq!(total, 0, "{j}");
        }
    }
}

/// The distance from node `a` to node `b` in `--show --json`.
fn distance(show: &Value, a: u64, b: u64) -> u64 {
    let node = show["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["node"].as_u64() == Some(a))
        .unwrap();
    node["distances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["node"].as_u64() == Some(b))
        .unwrap_or_else(|| panic!("no distance {a}->{b}: {node}"))["distance"]
        .as_u64()
        .unwrap()
}

fn assert_isolation(show: &Value, isolated: &[u64], nohz_full: &[u64]) {
    assert_eq!(nums(&show["isolated"]), isolated, "{show}");
    assert_eq!(nums(&show["nohz_full"]), nohz_full, "{show}");
    for c in show["cpus"].as_array().unwrap() {
        let id = c["cpu"].as_u64().unwrap();
        assert_eq!(c["isolated"], isolated.contains(&id), "{c}");
        assert_eq!(c["nohz_full"], nohz_full.contains(&id), "{c}");
    }
}

/// Scenario 1: 2 sockets x 2 cores x 2 threads, nodes {0-3} {4-7},
/// isolcpus=2,3 nohz_full=2,3 irqaffinity=0,1.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_basic_topology_placement_memory_sched() {
    let g = boot("basic");
    let show = g.json("show-json");
    assert_topology(
        &show,
        2,
        2,
        2,
        &[(0, range(0, 3), true), (1, range(4, 7), true)],
    );
    assert_eq!(distance(&show, 0, 1), 20);
    assert_eq!(distance(&show, 1, 1), 10);
    // isolation as the kernel command line says; the finding for it in
    // --check is not written yet, so --show is what is asserted
    assert_isolation(&show, &[2, 3], &[2, 3]);
    // allowed = online ∩ cpuset, not the init shell's affinity (which lacks 2-3)
    assert_eq!(g.ok("init-affinity").trim(), "Cpus_allowed_list:\t0-1,4-7");
    assert_eq!(nums(&show["allowed_cpus"]), range(0, 7));
    assert_eq!(g.ok("possible").trim(), "0-7");
    assert_eq!(g.ok("irq-default-affinity").trim(), "03");
    assert_eq!(show["possible"], "0-7");

    assert_eq!(g.allowed("node1-cores2"), "4,6");
    assert_eq!(g.allowed("node1-cores2-smt"), "4-7");
    assert_eq!(g.allowed("isolated-cores1"), "2");
    assert_eq!(g.allowed("isolated-cores1-smt"), "2-3");

    // --membind 1: the exec'd shell's 16 MiB string is bound to node 1, and
    // its pages are there
    let (policy, pages) = biggest_anon(g.ok("membind1"));
    assert_eq!(policy, "bind:1");
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [1]);
    assert!(pages[&1] >= 4096, "{pages:?}");

    // --fifo 90 --reset-on-fork: the exec'd shell (pinrun's PID) is FIFO 90,
    // the child it forks is back to SCHED_OTHER
    let out = g.ok("fifo90-rof");
    let lines: Vec<&str> = out.lines().collect();
    let pid = lines[0].strip_prefix("pinrun-pid ").unwrap();
    assert!(lines[1].starts_with(&format!("{pid} (sh)")), "{out}");
    assert_eq!(rt(lines[1]), (90, libc::SCHED_FIFO as i64), "{out}");
    assert_eq!(
        stat_field(lines[2], 4).to_string(),
        pid,
        "child's parent: {out}"
    );
    assert_eq!(rt(lines[2]), (0, libc::SCHED_OTHER as i64), "{out}");

    // --check --cpus 2: isolated, nohz_full, and irqaffinity=0,1 keeps IRQs
    // off it. The isolation/nohz/IRQ findings are being written as this
    // lands, so: no IRQ is delivered there, and no finding may claim one
    let irqs = irq_effective(g.ok("irq-effective"));
    assert!(!irqs.is_empty());
    for (irq, cpus) in &irqs {
        assert!(cpus.iter().all(|c| *c <= 1), "IRQ {irq} on {cpus:?}");
    }
    let codes = check_codes(&g, "check-cpus2", &irqs);
    assert!(!codes.contains(&"irq-on-cpu".to_string()), "{codes:?}");
    assert!(
        !codes.contains(&"smt-siblings-shared".to_string()),
        "{codes:?}"
    );
    let dry = g.json("dry-run-cpus2");
    assert_eq!(nums(&dry["cpus"]), [2]);
    assert_eq!(dry["cores"][0]["cpus"], serde_json::json!([2, 3]));

    // 6.1 has no MPOL_WEIGHTED_INTERLEAVE: refused with the reason
    let err = g.refused("weighted-interleave");
    assert!(err.contains("EINVAL"), "{err}");
    assert!(
        err.contains("6.9"),
        "the refusal must explain EINVAL: {err}"
    );
}

/// Scenario 5: possible_cpus=1100 (nr_cpu_ids 1100: affinity masks wider
/// than 1024 bits; a fixed cpu_set_t gets EINVAL from sched_getaffinity).
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_wide_masks_possible_cpus_1100() {
    let g = boot("wide-masks");
    assert_eq!(g.ok("possible").trim(), "0-1099");
    let show = g.json("show-json");
    assert_eq!(show["possible"], "0-1099");
    assert_eq!(show["present"], "0-7");
    assert_eq!(nums(&show["allowed_cpus"]), range(0, 7));
    assert_topology(
        &show,
        2,
        2,
        2,
        &[(0, range(0, 3), true), (1, range(4, 7), true)],
    );
    // set and read back (pinrun checks sched_getaffinity after setting)
    assert_eq!(g.allowed("cpus-all"), "0-7");
    assert_eq!(g.allowed("cpus5"), "5");
    assert_eq!(g.allowed("node1-cores2"), "4,6");
    assert_eq!(g.allowed("isolated-cores1"), "2");
    let err = g.refused("cpus1099");
    assert!(err.contains("CPU 1099"), "{err}");
    assert!(err.contains("not present"), "{err}");
}

/// Scenario 2: node 2 = CPUs 6-7 without memory; distances 0-1 20, 0-2 30,
/// 1-2 15.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_memoryless_node() {
    let g = boot("memless");
    let show = g.json("show-json");
    assert_topology(
        &show,
        2,
        2,
        2,
        &[
            (0, range(0, 3), true),
            (1, range(4, 5), true),
            (2, range(6, 7), false),
        ],
    );
    assert_eq!(distance(&show, 2, 1), 15);
    assert_eq!(distance(&show, 2, 0), 30);
    assert_eq!(g.allowed("node2-cores1"), "6");
    for n in ["membind2", "node2-membind"] {
        let err = g.refused(n);
        assert!(err.contains("node 2 has no memory"), "{err}");
        assert!(err.contains("nearest node with memory is node 1"), "{err}");
    }
    let out = g.ok("node2-membind1");
    assert_eq!(field(out, "Cpus_allowed_list:").as_deref(), Some("6"));
    let (policy, pages) = biggest_anon(out);
    assert_eq!(policy, "bind:1");
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [1]);
    assert!(pages[&1] >= 2048, "{pages:?}");
}

/// `--near`: an e1000e NIC behind a PCIe expander bridge (pxb-pcie) that
/// QEMU attaches to NUMA node 1 (its ACPI `_PXM`): the guest kernel's
/// `numa_node` of the NIC's PCI function is 1, and `--near` it runs on
/// node 1's CPUs 4-7 with memory bound there.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_near_nic() {
    let g = boot("near");
    let pci = g.ok("pci");
    assert!(
        pci.lines().any(|l| l == "0000:81:00.0 1 0x020000"),
        "the NIC's function is on node 1 (class 0x020000: Ethernet):\n{pci}"
    );
    assert!(
        pci.lines().any(|l| l.starts_with("0000:80:00.0 1 ")),
        "{pci}"
    );
    let out = g.ok("near-nic");
    assert_eq!(field(out, "Cpus_allowed_list:").as_deref(), Some("4"));
    let (policy, pages) = biggest_anon(out);
    assert_eq!(policy, "bind:1");
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [1]);
    let v = g.json("near-nic-json");
    assert_eq!(v["cpulist"], "4-7");
    assert!(v["reasons"].to_string().contains("NUMA node 1"), "{v}");
    assert_eq!(g.allowed("near-port"), "4-7");
    let show = g.ok("near-nic-show");
    assert!(show.contains("node 1: CPUs 4-7"), "{show}");
}

/// Scenario 3: node 2 = 256M without CPUs; distances 0-1 21, 0-2 30, 1-2 30.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_cpuless_memory_node() {
    let g = boot("cpuless");
    let show = g.json("show-json");
    assert_topology(
        &show,
        2,
        2,
        2,
        &[
            (0, range(0, 3), true),
            (1, range(4, 7), true),
            (2, vec![], true),
        ],
    );
    assert_eq!(distance(&show, 0, 1), 21);
    assert_eq!(distance(&show, 0, 2), 30);
    assert_eq!(distance(&show, 2, 1), 30);
    let out = g.ok("node0-membind2");
    assert_eq!(field(out, "Cpus_allowed_list:").as_deref(), Some("0"));
    let (policy, pages) = biggest_anon(out);
    assert_eq!(policy, "bind:2");
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [2]);
    assert!(pages[&2] >= 1024, "{pages:?}");
    let err = g.refused("node2-cores1");
    assert!(err.contains("node 2 has no CPUs"), "{err}");
    // interleave over every node, the CPU-less one included
    let (policy, pages) = biggest_anon(g.ok("interleave-all"));
    assert_eq!(policy, "interleave:0-2");
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [0, 1, 2]);
}

/// Scenario 4: 4 sockets x 4 cores x 2 threads, a node per socket,
/// isolcpus=nohz,domain,managed_irq,4-7,12-15, 8 PCIe root ports (PCI-MSI
/// IRQs): IRQ findings from /sys/kernel/irq equal those from
/// /proc/interrupts; a live SCHED_FIFO competitor is found.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_big_four_sockets_isolcpus_flags() {
    let g = boot("big");
    let show = g.json("show-json");
    let nodes: Vec<_> = (0..4).map(|n| (n, range(n * 8, n * 8 + 7), true)).collect();
    assert_topology(&show, 4, 4, 2, &nodes);
    assert_eq!(nums(&show["allowed_cpus"]), range(0, 31));
    // the nohz flag of isolcpus= makes them nohz_full as well
    let iso = [4, 5, 6, 7, 12, 13, 14, 15];
    assert_isolation(&show, &iso, &iso);
    // --isolated carries latency intent (issue 31): the quietest isolated
    // cores, those with no device IRQ routed to a thread (per the guest's
    // own /proc/irq/N/effective_affinity_list) first, while they fit.
    let irqs = irq_effective(g.ok("irq-effective"));
    let noisy = |core: &[u64]| irqs.values().any(|on| core.iter().any(|c| on.contains(c)));
    let quiet_cores = |cores: &[[u64; 2]], chosen: &str, n: usize| {
        let got = pinrun::cpuset::CpuSet::parse(chosen).unwrap();
        let picked: Vec<&[u64; 2]> = cores
            .iter()
            .filter(|c| c.iter().any(|&t| got.contains(t as u32)))
            .collect();
        assert_eq!((picked.len(), got.len()), (n, n), "{chosen} {irqs:?}");
        let free = cores.iter().filter(|c| !noisy(&c[..])).count();
        let picked_free = picked.iter().filter(|c| !noisy(&c[..])).count();
        assert_eq!(picked_free, n.min(free), "{chosen}: {irqs:?}");
    };
    quiet_cores(
        &[[4, 5], [6, 7], [12, 13], [14, 15]],
        &g.allowed("isolated-cores2"),
        2,
    );
    assert_eq!(g.allowed("isolated-cores4-smt"), "4-7,12-15");
    quiet_cores(
        &[[12, 13], [14, 15]],
        &g.allowed("node1-isolated-cores1"),
        1,
    );
    assert_eq!(g.allowed("node1-cores2"), "8,10");
    assert_eq!(g.allowed("node3-cores4"), "24,26,28,30");
    let err = g.refused("isolated-cores5");
    assert!(
        err.contains("only 4 whole cores") && err.contains("4-7,12-15"),
        "{err}"
    );
    let err = g.refused("isolated-cpus");
    assert!(err.contains("CPU 3 not isolated"), "{err}");
    // findings: only what --check has today (isolation findings pending);
    // any irq-on-cpu finding must match the guest's /proc/irq
    let codes = check_codes(&g, "check-cpus4", &irqs);
    assert!(
        !codes.contains(&"smt-siblings-shared".to_string()),
        "{codes:?}"
    );
    let codes = check_codes(&g, "check-cpus4-5", &irqs);
    assert!(
        codes.contains(&"smt-siblings-shared".to_string()),
        "{codes:?}"
    );

    // IRQs on a real kernel. What /proc/interrupts lists, with the effective
    // affinity of /proc/irq/N, read before and after the checks (unchanged):
    // the ISA IRQs and the 8 root ports' PCI-MSI IRQs (vm/boot.sh), each on
    // one CPU: the kernel spreads them, isolated CPUs included
    // (isolcpus=managed_irq steers managed IRQs only; these are not).
    let listed = irq_listed(g.ok("irq-listed"));
    assert_eq!(listed, irq_listed(g.ok("irq-listed-after")));
    let names: BTreeMap<u64, &str> = listed.iter().map(|(i, (_, n))| (*i, n.as_str())).collect();
    let isa: BTreeMap<u64, &str> = [
        (0, "timer"),
        (1, "i8042"),
        (4, "ttyS0"),
        (8, "rtc0"),
        (9, "acpi"),
        (12, "i8042"),
    ]
    .into();
    let (low, msi): (BTreeMap<u64, &str>, BTreeMap<u64, &str>) =
        names.iter().partition(|(i, _)| **i < 16);
    assert_eq!(low, isa, "{listed:?}");
    assert_eq!(msi.len(), 8, "{listed:?}");
    assert!(msi.values().all(|n| *n == "aerdrv"), "{listed:?}");
    for (irq, (cpus, _)) in &listed {
        assert_eq!(cpus.len(), 1, "IRQ {irq}: {listed:?}");
    }
    // pinrun --check on the live guest (IRQs from /sys/kernel/irq), from a
    // sysroot without sys/kernel/irq (the /proc/interrupts path) and from
    // one without proc/interrupts (sysfs alone): the same IRQ findings
    // (counts masked; they only grow from one read to the next), naming
    // exactly the listed IRQs on the checked CPUs, by their row's name.
    let mut found = std::collections::BTreeSet::new();
    for c in ["0-3", "4-7", "8-31"] {
        let set: Vec<u64> = pinrun::cpuset::CpuSet::parse(c)
            .unwrap()
            .iter()
            .map(u64::from)
            .collect();
        let live = irq_findings(&g, &format!("irq-check-live-{c}"));
        let proc_path = irq_findings(&g, &format!("irq-check-proc-{c}"));
        let sysfs = irq_findings(&g, &format!("irq-check-sysfs-{c}"));
        let stable_of = |v: &[Value]| v.iter().map(stable).collect::<Vec<_>>();
        assert_eq!(
            stable_of(&live),
            stable_of(&proc_path),
            "--cpus {c}: sysfs vs /proc/interrupts"
        );
        assert_eq!(
            stable_of(&live),
            stable_of(&sysfs),
            "--cpus {c}: live vs sysfs alone"
        );
        let want: BTreeMap<u64, (Vec<u64>, String)> = listed
            .iter()
            .filter_map(|(irq, (cpus, name))| {
                let hit: Vec<u64> = cpus.iter().copied().filter(|x| set.contains(x)).collect();
                (!hit.is_empty()).then(|| (*irq, (hit, name.clone())))
            })
            .collect();
        let mut got = BTreeMap::new();
        for (i, f) in live.iter().enumerate() {
            if f["code"] == "default-irq-affinity" {
                // no irqaffinity=: every CPU is in default_smp_affinity
                assert_eq!(nums(&f["cpus"]), set, "{f}");
                continue;
            }
            // nothing asks for managed IRQs here (and no debugfs to tell)
            assert_eq!(f["code"], "irq-on-cpu", "{f}");
            // One finding for all of them: its irqs are its details'.
            let details = irq_details(f);
            assert_eq!(
                nums(&f["irqs"]),
                details.keys().copied().collect::<Vec<_>>(),
                "{f}"
            );
            let (p, s) = (irq_details(&proc_path[i]), irq_details(&sysfs[i]));
            for (irq, (cpus, name, count)) in details {
                // Counts read later are never smaller (live, then the two
                // sysroots copied after it).
                let counts = [count, p[&irq].2, s[&irq].2];
                assert!(
                    counts.is_sorted(),
                    "--cpus {c}: IRQ {irq} counts {counts:?}"
                );
                got.insert(irq, (cpus, name));
            }
        }
        assert_eq!(got, want, "--cpus {c}");
        assert_eq!(
            live.iter()
                .filter(|f| f["code"] == "default-irq-affinity")
                .count(),
            1,
            "--cpus {c}"
        );
        found.extend(got.into_keys());
    }
    assert_eq!(
        found,
        listed.keys().copied().collect(),
        "every listed IRQ found once"
    );
    // --show: IRQs per CPU as /proc/irq/N/effective_affinity_list places the
    // listed ones, from sysfs (live) and from /proc/interrupts alike
    let mut per_cpu: BTreeMap<String, u64> = BTreeMap::new();
    for (cpus, _) in listed.values() {
        for c in cpus {
            *per_cpu.entry(c.to_string()).or_default() += 1;
        }
    }
    let per_cpu = serde_json::to_value(per_cpu).unwrap();
    assert_eq!(show["device_irqs_per_cpu"], per_cpu, "live (sysfs)");
    assert_eq!(
        g.json("irq-show-proc")["device_irqs_per_cpu"],
        per_cpu,
        "/proc/interrupts"
    );

    // a live SCHED_FIFO 5 busy loop confined to CPU 6: a competitor for
    // --fifo 5 on CPU 6 (alone or with 7), not for --fifo 6 nor on CPU 7
    // alone, and gone once killed
    let out = g.ok("rt-hog");
    let (pid, stat) = out.split_once('\n').unwrap();
    let pid = pid.strip_prefix("hog-pid ").unwrap();
    assert!(stat.starts_with(&format!("{pid} (sh) R ")), "{out}");
    assert_eq!(rt(stat), (5, libc::SCHED_FIFO as i64), "{out}");
    assert_eq!(stat_field(stat, 39), 6, "runs on CPU 6: {out}");
    for n in ["rt-fifo5-cpus6", "rt-fifo5-cpus6-7"] {
        let comp = rt_competitors(&g, n);
        assert_eq!(comp.len(), 1, "{}", g.describe(n));
        assert_eq!(nums(&comp[0]["cpus"]), [6], "{}", comp[0]);
        let msg = comp[0]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!(
                "process {pid} (sh) is runnable at real-time priority 5 confined to CPU 6"
            )),
            "{msg}"
        );
    }
    for n in ["rt-fifo6-cpus6", "rt-fifo5-cpus7", "rt-fifo5-cpus6-after"] {
        assert_eq!(
            rt_competitors(&g, n),
            Vec::<Value>::new(),
            "{}",
            g.describe(n)
        );
    }
}

/// Scenario 6: uid 1000 without capabilities; RLIMIT_RTPRIO 0 and 20; a
/// cgroup v2 cpuset of CPUs 4-5 and mems 1.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_unprivileged_rlimit_and_cgroup_cpuset() {
    let g = boot("unprivileged");
    let err = g.refused("unpriv-fifo10");
    assert!(err.contains("RLIMIT_RTPRIO 0"), "{err}");
    assert!(err.contains("CAP_SYS_NICE"), "{err}");
    let out = g.ok("unpriv-rtprio20-fifo10");
    assert_eq!(
        field(out, "Uid:").unwrap().split_whitespace().next(),
        Some("1000")
    );
    assert_eq!(field(out, "CapEff:").as_deref(), Some("0000000000000000"));
    let stat = out.lines().last().unwrap();
    assert_eq!(rt(stat), (10, libc::SCHED_FIFO as i64), "{out}");
    let err = g.refused("unpriv-rtprio20-fifo30");
    assert!(err.contains("RLIMIT_RTPRIO 20"), "{err}");

    let show = g.json("cg-show-json");
    assert_eq!(nums(&show["allowed_cpus"]), [4, 5]);
    assert_eq!(nums(&show["allowed_nodes"]), [1]);
    assert_eq!(show["allowed_source"]["cgroup"], "/pin");
    let out = g.ok("cg-cores1");
    assert_eq!(field(out, "Cpus_allowed_list:").as_deref(), Some("4"));
    assert_eq!(field(out, "Mems_allowed_list:").as_deref(), Some("1"));
    assert_eq!(g.allowed("cg-cores1-smt"), "4-5");
    let err = g.refused("cg-cpus0");
    assert!(
        err.contains("CPU 0 is outside the cpuset of cgroup /pin"),
        "{err}"
    );
    let err = g.refused("cg-membind0");
    assert!(err.contains("node 0"), "{err}");
}

/// Scenario 9 (issue 23): two Slurm-like ranks with masks 4-5 and 6-7
/// under one cgroup cpuset 4-7 never overlap with `--cores 1`, and name
/// their task; `--emit slurm 4` gives disjoint whole cores, as the guest's
/// core_cpus_list groups them; an emitted unit's fingerprint matches the
/// guest it was emitted on and not an edited one. (systemd-analyze verify
/// of an emitted unit runs on the host: tests/it/fleet.rs; the busybox
/// guest has no systemd.)
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_fleet_slurm_ranks_and_emit() {
    let g = boot("fleet");
    // The guest's cores, from the kernel.
    let cores: Vec<String> = g.ok("siblings").lines().map(str::to_string).collect();
    assert_eq!(cores, ["0-1", "2-3", "4-5", "6-7"]);
    let out = g.ok("ranks");
    let mut got: Vec<&str> = out.lines().collect();
    got.sort();
    assert_eq!(
        got,
        [
            "rank 0 Cpus_allowed_list:\t4",
            "rank 1 Cpus_allowed_list:\t6"
        ],
        "{out}"
    );
    let dry = g.ok("rank1-dry");
    assert!(dry.contains("Slurm task 1 mask 6-7"), "{dry}");
    assert!(dry.contains("cpus:    6 (1 CPU)"), "{dry}");
    let err = g.refused("rank1-cores2");
    assert!(err.contains("Slurm task 1 mask 6-7"), "{err}");
    // No latency intent (issue 31): each task gets a housekeeping core
    // first, and the isolated core 2-3 (isolcpus=2,3) goes last, to the
    // task nothing else fits.
    let s = g.ok("emit-slurm4");
    assert!(
        s.contains("--cpu-bind=verbose,map_cpu:0,4,6,2 COMMAND"),
        "{s}"
    );
    let s = g.ok("emit-slurm4-smt");
    // Each mask is one core of core_cpus_list: 0-1, 4-5, 6-7, then 2-3.
    assert!(
        s.contains("--cpu-bind=verbose,mask_cpu:0x3,0x30,0xc0,0xc COMMAND"),
        "{s}"
    );
    assert!(
        g.ok("check-emitted")
            .contains("topology matches this machine")
    );
    let err = g.refused("check-emitted-other");
    assert!(err.contains("it was emitted for 16 CPUs"), "{err}");
}

/// The second kernel, Debian 13's 6.12: `--weighted-interleave` (Linux 6.9+),
/// which 6.1 refuses (checked in the basic scenario), works.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_weighted_interleave_on_6_12() {
    let g = boot("weighted");
    assert!(
        g.ok("uname").contains("Linux version 6.12"),
        "{}",
        g.ok("uname")
    );
    let show = g.json("show-json");
    assert_topology(
        &show,
        2,
        2,
        2,
        &[(0, range(0, 3), true), (1, range(4, 7), true)],
    );
    assert_eq!(g.allowed("node1-cores2"), "4,6");
    // default weights 1:1: the 16 MiB string is split evenly
    let (policy, pages) = biggest_anon(g.ok("weighted-all"));
    assert_eq!(policy, "weighted interleave:0-1");
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [0, 1]);
    assert!(pages[&0].abs_diff(pages[&1]) <= 1, "{pages:?}");
    let out = g.ok("weighted-1");
    assert_eq!(field(out, "Cpus_allowed_list:").as_deref(), Some("0"));
    let (policy, pages) = biggest_anon(out);
    assert_eq!(policy, "weighted interleave:1");
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [1]);
}

/// Scenario 8 (issue 14): every request of vm/scenarios/differential.sh,
/// as root and as uid 1000, run with `--dry-run --json` and for real on a
/// kernel with two root domains (isolcpus=2,3): the verdict, the message
/// and the values the launched shell reads back from its own /proc/self
/// (Cpus_allowed_list, policy, priority, nice, mempolicy) are equal.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_differential_dry_run_predicts_the_launch() {
    let g = boot("differential");
    let mut n = 0;
    let mut disagreements = Vec::new();
    for user in ["root", "test"] {
        let own = g.block(&format!("own-{user}"));
        let own = common::launch_outcome(own.rc, &own.out, &own.err);
        for i in 1.. {
            let Some(args) = g.blocks.get(&format!("{i}-args")) else {
                break;
            };
            let dry = g.block(&format!("{i}-{user}-dry"));
            let run = g.block(&format!("{i}-{user}-run"));
            let want = common::dry_run_outcome(dry.rc, &dry.out, &own);
            let got = common::launch_outcome(run.rc, &run.out, &run.err);
            n += 1;
            if want != got {
                disagreements.push(format!(
                    "{user} {}  dry run: {want:?}\n  launch:  {got:?}",
                    args.out
                ));
            }
        }
    }
    eprintln!(
        "vm differential: {n} requests, {} disagreements",
        disagreements.len()
    );
    assert!(n >= 100, "{n} requests");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// Sum of `N<node>=<pages>` × `kernelpagesize_kB` over every mapping of a
/// numa_maps text, in bytes.
fn node_bytes(maps: &str, node: u32) -> u64 {
    let key = format!("N{node}=");
    maps.lines()
        .map(|l| {
            let kb: u64 = l
                .split_whitespace()
                .find_map(|w| w.strip_prefix("kernelpagesize_kB="))
                .and_then(|v| v.parse().ok())
                .unwrap_or(4);
            l.split_whitespace()
                .find_map(|w| w.strip_prefix(key.as_str()))
                .and_then(|v| v.parse::<u64>().ok())
                .map_or(0, |p| p * kb * 1024)
        })
        .sum()
}

/// Issue 18 on two memory nodes: `--pid PID --migrate --membind 1` moves a
/// running shell's 16 MiB string from node 0 to node 1 (its numa_maps read
/// back by cat); `--dry-run --json` predicts the bytes on node 0 that
/// numa_maps showed; `--migrate-limit 1M` refuses and moves nothing; a
/// memory policy without `--migrate` is refused.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_pid_migrate_two_nodes() {
    let g = boot("migrate");
    let before = g.ok("migrate-before");
    let (_, pages) = biggest_anon(before);
    assert_eq!(pages.keys().copied().collect::<Vec<_>>(), [0], "{before}");
    assert!(pages[&0] >= 4096, "{pages:?}");
    let on0 = node_bytes(before, 0);
    let dry = g.json("migrate-dry");
    assert_eq!(dry["migrate"]["from"], serde_json::json!([0]), "{dry}");
    assert_eq!(dry["migrate"]["to"], serde_json::json!([1]), "{dry}");
    let bytes = dry["migrate"]["bytes"].as_u64().unwrap();
    // numa_maps read by cat and by pinrun a moment apart: the shell's own
    // small allocations may differ, the 16 MiB do not.
    assert!(
        bytes >= 16 << 20 && bytes.abs_diff(on0) <= 1 << 20,
        "{bytes} vs {on0}"
    );
    let err = g.refused("migrate-limit");
    assert!(err.contains("--migrate-limit"), "{err}");
    let (_, still) = biggest_anon(g.ok("migrate-limit-after"));
    assert_eq!(still.keys().copied().collect::<Vec<_>>(), [0]);
    g.ok("migrate");
    let after = g.ok("migrate-after");
    let (_, moved) = biggest_anon(after);
    assert_eq!(moved.keys().copied().collect::<Vec<_>>(), [1], "{after}");
    assert!(node_bytes(after, 1) >= 16 << 20, "{after}");
    let q = g.json("migrate-query");
    assert!(
        q["numa_maps"]["bytes_per_node"]["1"].as_u64().unwrap() >= 16 << 20,
        "{q}"
    );
    let err = g.refused("migrate-policy");
    assert!(
        err.contains("no system call sets another process's memory policy"),
        "{err}"
    );
}

/// Issue 22 on a real kernel with SMT and two nodes: `--node 1 --cores 2
/// --smt --omp` gives a static libgomp program one sibling pair per place
/// (the guest kernel's thread_siblings_list), OpenMP thread i bound to
/// place i; `--thread-map` pins threads named after creation by name;
/// the helper process is gone once the command has ended.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_threads_omp_and_thread_map() {
    let g = boot("threads");
    let siblings: BTreeMap<String, String> = g
        .ok("siblings")
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(c, s)| (c.to_string(), s.to_string()))
        .collect();
    let pair0 = siblings["cpu4"].clone();
    let pair1 = siblings["cpu6"].clone();
    assert_ne!(pair0, pair1, "{siblings:?}");
    let dry = g.json("omp-dry");
    let places: Vec<String> = dry["omp"]["places"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let ids: Vec<String> = p
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.to_string())
                .collect();
            ids.join(",")
        })
        .collect();
    // thread_siblings_list of a two-thread core: "4-5" or "4,6".
    let as_list = |s: &str| s.replace('-', ",");
    assert_eq!(places, vec![as_list(&pair0), as_list(&pair1)]);
    let out = g.ok("omp-smt");
    let mut threads: Vec<&str> = out.lines().filter(|l| l.starts_with("thread ")).collect();
    threads.sort();
    assert_eq!(threads.len(), 2, "{}", g.describe("omp-smt"));
    for (i, (line, pair)) in threads.iter().zip([&pair0, &pair1]).enumerate() {
        assert!(
            line.starts_with(&format!("thread {i} place {i} cpu ")),
            "{line}"
        );
        assert!(line.ends_with(&format!(" allowed {pair}")), "{line}");
    }
    let named: BTreeMap<&str, &str> = g
        .ok("thread-map")
        .lines()
        .filter_map(|l| l.split_once(' '))
        .collect();
    assert_eq!(named.get("w1"), Some(&"4"), "{}", g.describe("thread-map"));
    assert_eq!(named.get("w2"), Some(&"6"));
    assert_eq!(named.get("w3"), Some(&"4,6"));
    assert_eq!(named.get("named_threads"), Some(&"4,6"));
    assert!(g.ok("thread-log").contains("\"rename\""));
    assert_eq!(g.ok("helpers-left").trim(), "checked");
}

/// The probe's object of CPU `cpu`.
fn probe_cpu(v: &Value, cpu: u64) -> &Value {
    v["probe"]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cpu"].as_u64() == Some(cpu))
        .unwrap_or_else(|| panic!("CPU {cpu} not probed: {v}"))
}

/// The `LOC` (local timer) count the probe attributes to `cpu`.
fn probe_loc(v: &Value, cpu: u64) -> u64 {
    let c = probe_cpu(v, cpu);
    c["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "interrupt" && s["label"] == "LOC")
        .and_then(|s| s["count"].as_u64())
        .unwrap_or(0)
}

/// Issue 20: a 3 s spinning probe on housekeeping CPU 1 and nohz_full CPU
/// 2 (basic topology). The kernel stops the tick of a nohz_full CPU that
/// runs one task (at most one tick a second remains, `tick_nohz_full`),
/// and keeps ticking on the housekeeping CPU: the probe's LOC counts
/// (deltas of the guest's /proc/interrupts) show it. Counts, not
/// microseconds, and a ratio, not HZ: under TCG on a loaded host a vCPU
/// that does not run misses ticks (the first run saw 180 on CPU 1 in 3 s
/// at HZ 250, and 10 on CPU 2). The guest boots with `tsc=reliable`: a
/// TSC the clocksource watchdog marks unstable (it did under CI's load)
/// keeps the tick on every CPU, so the clocksource must still be `tsc`.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_probe_tick_on_nohz_full() {
    let g = boot("probe");
    let v = g.json("probe-nohz");
    assert_eq!(
        g.ok("clocksource").trim(),
        "tsc",
        "the TSC was marked unstable, so no CPU stops its tick: {}",
        g.describe("clocksource")
    );
    let (housekeeping, nohz) = (probe_loc(&v, 1), probe_loc(&v, 2));
    assert!(housekeeping >= 50, "CPU 1 LOC {housekeeping}: {v}");
    assert!(
        nohz * 5 <= housekeeping,
        "nohz_full CPU 2 LOC {nohz} vs housekeeping CPU 1 {housekeeping}: {v}"
    );

    // Issue 31: --probe carries latency intent, so `--cores 1` lands on the
    // isolated nohz_full CPU 2 (isolcpus=2,3 nohz_full=2,3: the kernel's
    // cpu/isolated), not on CPU 0, the compact rule's choice; the probe
    // there counts a fifth of CPU 0's local timer interrupts or fewer.
    let new = g.json("choose-rule");
    let cpus: Vec<u64> = new["probe"]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cpu"].as_u64().unwrap())
        .collect();
    assert_eq!(cpus, [2], "{new}");
    let old = g.json("choose-old");
    let (loc_new, loc_old) = (probe_loc(&new, 2), probe_loc(&old, 0));
    eprintln!(
        "vm_probe: 3 s probe, LOC on CPU 2 (the rule's choice) {loc_new}, on CPU 0 (the compact rule's) {loc_old}"
    );
    assert!(loc_old >= 50, "CPU 0 LOC {loc_old}: {old}");
    assert!(
        loc_new * 5 <= loc_old,
        "CPU 2 LOC {loc_new} vs CPU 0 {loc_old}"
    );
    // --choose measured with CPU 2 made noisy: never chosen.
    let m = g.json("choose-measured");
    let chosen = nums(&m["cpus"]);
    eprintln!(
        "vm_probe: --choose measured with CPU 2 busy: chose {chosen:?}; {}",
        m["choice"]["measured"]
    );
    assert_eq!(chosen.len(), 1, "{m}");
    assert_ne!(chosen[0], 2, "the noisy CPU 2 was chosen: {}", m["choice"]);
    assert_eq!(m["choice"]["rule"], "measured", "{m}");
}

/// `N LIST` lines (and `default MASK`) of the steer scenario's listing.
fn irq_lists(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Issue 21 on a real kernel with PCIe root ports (PCI-MSI IRQs):
/// `--exclusive --steer-irqs --cpus 16` claims CPU 16's core; every IRQ
/// whose smp_affinity_list includes a claimed CPU gets exactly the list
/// the dry run said while the command runs, or is reported not moved and
/// left as it was; every IRQ and default_smp_affinity are back after the
/// command ends, and no journal is left.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_steer_irqs_msi_off_claimed_cpus_and_back() {
    let g = boot("steer");
    let names = irq_lists(g.ok("names"));
    let before = irq_lists(g.ok("before"));
    let dry = g.json("dry");
    let s = &dry["steer_irqs"];
    let claimed: Vec<u64> = s["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(claimed.len(), 2, "{s}");
    assert!(claimed.contains(&16));
    let parse = |l: &str| {
        pinrun::cpuset::CpuSet::parse_sysfs_list(l, None).unwrap_or_else(|e| panic!("{l:?}: {e:?}"))
    };
    // Every IRQ on a claimed CPU is in the plan, moved or unmovable.
    let planned: BTreeMap<String, &Value> = s["move"]
        .as_array()
        .unwrap()
        .iter()
        .chain(s["unmovable"].as_array().unwrap())
        .map(|m| (m["irq"].to_string(), m))
        .collect();
    for (n, l) in before.iter().filter(|(n, _)| *n != "default") {
        let on = claimed.iter().any(|c| parse(l).contains(*c as u32));
        assert_eq!(planned.contains_key(n), on, "IRQ {n} {l}: {s}");
    }
    let during_b = g.block("during");
    assert_eq!(during_b.rc, 0, "{}", g.describe("during"));
    let during = irq_lists(&during_b.out);
    let mut msi_moved = 0;
    for m in s["move"].as_array().unwrap() {
        let n = m["irq"].to_string();
        // "pinrun: IRQ 2 not moved: …" or "pinrun: IRQ 0 (timer) not moved: …"
        let kept = during_b.err.lines().any(|l| {
            l.strip_prefix(&format!("pinrun: IRQ {n}"))
                .is_some_and(|r| {
                    r.starts_with(' ') && r.contains(" not moved: the kernel keeps it")
                })
        });
        let to: Vec<String> = m["to"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.to_string())
            .collect();
        let now = parse(&during[&n]);
        if now == parse(&before[&n]) && kept {
            continue;
        }
        assert_eq!(
            now.to_vec()
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>(),
            to,
            "IRQ {n}: {}",
            g.describe("during")
        );
        for c in &claimed {
            assert!(!now.contains(*c as u32), "IRQ {n} on CPU {c}");
        }
        if names
            .get(&n)
            .is_some_and(|a| a.contains("PCIe") || a.contains("pcie") || a.contains("aer"))
        {
            msi_moved += 1;
        }
    }
    assert!(
        msi_moved > 0,
        "no PCIe root port IRQ moved: {names:?}\n{}",
        g.describe("during")
    );
    for u in s["unmovable"].as_array().unwrap() {
        let n = u["irq"].to_string();
        assert_eq!(during[&n], before[&n], "unmovable IRQ {n}");
    }
    // Back after the command, by the helper.
    assert_eq!(irq_lists(g.ok("after")), before, "{}", g.describe("after"));
    let listed = g.ok("journals");
    assert!(listed.contains("listed"));
    assert!(!listed.contains(".journal"), "{listed}");
    steering_follows_the_process_group(&g, &before, &during);
}

/// Issue 33 item 8 (vm/scenarios/steer.sh, blocks group-*): `setsid
/// pinrun --exclusive --steer-irqs --cpus 16 -- sh -c 'sleep 12 & exit 0'`
/// leads its process group; the shell exits at once and its `sleep` keeps
/// CPUs 16-17 claimed. 2.5 s later the IRQs are still as the steered
/// launch `during` had them (they were back on CPU 16 before: the steering
/// ended with the PID), the journal still there and the claim live; after
/// the sleep everything is as `before` and no journal is left.
fn steering_follows_the_process_group(
    g: &Guest,
    before: &BTreeMap<String, String>,
    during: &BTreeMap<String, String>,
) {
    let start = g.ok("group-start");
    assert!(start.contains("rc=0"), "{}", g.describe("group-start"));
    let mid = g.ok("group-during");
    let now = irq_lists(mid);
    for (n, l) in during {
        assert_eq!(
            now.get(n),
            Some(l),
            "IRQ {n}: {}",
            g.describe("group-during")
        );
    }
    assert!(
        mid.lines().any(|l| l == "1"),
        "one journal: {}",
        g.describe("group-during")
    );
    // The sleep must outlive this step: 12 s leaves 9.5 s for the step's
    // own reads under TCG (with 6 s, one run of .ci/run read the claim
    // after the sleep had ended, while the helper had not yet put the
    // IRQs back).
    assert!(
        mid.contains("\"claimed_cpus\":[16,17]"),
        "the shell exited at uptime {}: {}",
        start.lines().nth(1).unwrap_or("?"),
        g.describe("group-during")
    );
    let after = g.ok("group-after");
    let t = |s: &str| -> f64 { s.lines().next().unwrap().parse().unwrap() };
    let (t0, t1) = (
        start.lines().nth(1).unwrap().parse::<f64>().unwrap(),
        t(after),
    );
    assert!(
        t1 - t0 >= 11.0,
        "restored {:.1} s after the shell exited, before its sleep 12 ended",
        t1 - t0
    );
    let back: BTreeMap<String, String> = irq_lists(after)
        .into_iter()
        .filter(|(n, _)| before.contains_key(n))
        .collect();
    assert_eq!(&back, before, "{}", g.describe("group-after"));
    assert!(!after.contains(".journal"), "{}", g.describe("group-after"));
}

/// The `SLEEP … BANNED <mask>` lines of irqbalance's `setup` replies in a
/// block's stdout (read by tests/helpers/irqbalance_query.c), in order.
fn setup_replies(out: &str) -> Vec<pinrun::steer::IrqbalanceSetup> {
    out.lines()
        .filter(|l| l.starts_with("SLEEP "))
        .map(|l| pinrun::steer::parse_setup(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

/// Issue 21 item 4 with the real irqbalance 1.9.4 (Debian trixie) and its
/// control socket, rebalancing every second: its ban is the kernel's
/// isolated CPUs (isolcpus=…,4-7,12-15: mask f0f0) before; while
/// `--exclusive --steer-irqs --cpus 16` runs, its own `setup` reply bans
/// the claimed CPUs 16-17 too (4-7,12-17, as the dry run said it would
/// send), and after 3 rebalance passes no IRQ lists a claimed CPU (the
/// --banirq'd one by pinrun's write, the others by irqbalance honouring
/// the ban); after the command ends the ban is f0f0 again, irqbalance
/// still runs, the IRQ only pinrun moved is back at 0-31 and no journal
/// is left.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_steer_irqs_irqbalance_bans_claimed_cpus_through_its_socket() {
    let g = boot("steer-irqbalance");
    let x = g.ok("banned-irq").trim().to_string();
    let before = setup_replies(g.ok("setup-before"));
    assert_eq!(before.len(), 1, "{}", g.describe("setup-before"));
    let cpus = |s: &str| pinrun::cpuset::CpuSet::parse(s).unwrap();
    assert_eq!(before[0].sleep, 1);
    assert_eq!(
        before[0].banned,
        cpus("4-7,12-15"),
        "{}",
        g.describe("setup-before")
    );
    assert_eq!(before[0].banned_irqs, [x.parse::<u32>().unwrap()]);
    assert!(g.ok("setup-before").contains("BANNED 0000f0f0"));
    let irqs_before = irq_lists(g.ok("before"));
    assert_eq!(irqs_before[&x], "0-31");
    let dry = g.json("dry");
    let s = &dry["steer_irqs"];
    assert_eq!(s["cpus"], serde_json::json!([16, 17]), "{s}");
    let ban = &s["irqbalance_ban"];
    assert_eq!(ban["command"], "settings cpus 4-7,12-17", "{s}");
    assert_eq!(ban["now"], serde_json::json!([4, 5, 6, 7, 12, 13, 14, 15]));
    let during_b = g.block("during");
    assert_eq!(during_b.rc, 0, "{}", g.describe("during"));
    let during = setup_replies(&during_b.out);
    assert_eq!(during.len(), 2, "{}", g.describe("during"));
    for d in &during {
        assert_eq!(d.banned, cpus("4-7,12-17"), "{}", g.describe("during"));
    }
    assert!(during_b.out.contains("BANNED 0003f0f0"));
    assert!(
        during_b.err.contains("irqbalance (pid ") && during_b.err.contains("bans CPUs 4-7,12-17"),
        "{}",
        g.describe("during")
    );
    let unmovable: Vec<String> = s["unmovable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["irq"].to_string())
        .collect();
    let lists = irq_lists(&during_b.out);
    for (n, l) in lists.iter().filter(|(n, _)| !n.starts_with("SLEEP")) {
        let set = pinrun::cpuset::CpuSet::parse_sysfs_list(l, None).unwrap();
        // "pinrun: IRQ 2 not moved: …" or "pinrun: IRQ 0 (timer) not moved: …"
        let kept = during_b.err.lines().any(|e| {
            e.strip_prefix(&format!("pinrun: IRQ {n}"))
                .is_some_and(|r| r.starts_with(' ') && r.contains(" not moved: "))
        });
        if unmovable.contains(n) || kept {
            continue;
        }
        assert!(
            !set.contains(16) && !set.contains(17),
            "IRQ {n} on {l} after 3 rebalance passes: {}",
            g.describe("during")
        );
    }
    let moved_x = s["move"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["irq"] == x.parse::<u64>().unwrap())
        .unwrap_or_else(|| panic!("IRQ {x} not planned: {s}"));
    assert_eq!(lists[&x], "0-15,18-31", "{}", g.describe("during"));
    assert_eq!(moved_x["to"].as_array().unwrap().len(), 30);
    // After: the original ban, irqbalance alive, the IRQ only pinrun
    // moved back, no journal.
    let after_out = g.ok("after");
    let after = setup_replies(after_out);
    assert_eq!(after.len(), 1, "{}", g.describe("after"));
    assert_eq!(
        after[0].banned,
        cpus("4-7,12-15"),
        "{}",
        g.describe("after")
    );
    assert!(after_out.contains("BANNED 0000f0f0"));
    assert_eq!(irq_lists(after_out)[&x], "0-31", "{}", g.describe("after"));
    g.ok("irqbalance-alive");
    let listed = g.ok("journals");
    assert!(listed.contains("listed"));
    assert!(!listed.contains(".journal"), "{listed}");
}

/// The state a block of vm/scenarios/steer-irqbalance-bookworm.sh prints
/// (`state`): irqbalance's ban, every IRQ's list and the default mask, the
/// number of journals, whether irqbalance lives.
fn steer_state(g: &Guest, n: &str) -> (pinrun::cpuset::CpuSet, BTreeMap<String, String>) {
    let out = g.ok(n);
    let setup = setup_replies(out);
    assert_eq!(setup.len(), 1, "{}", g.describe(n));
    assert!(out.contains("journals: 0\n"), "{}", g.describe(n));
    assert!(out.contains("irqbalance alive"), "{}", g.describe(n));
    // Only the IRQs irqbalance is told to leave alone (--banirq): it
    // moves the others at will.
    let only: Vec<&str> = g.ok("banned-irqs").split_whitespace().collect();
    assert!(!only.is_empty(), "{}", g.describe("banned-irqs"));
    let irqs = irq_lists(out)
        .into_iter()
        .filter(|(k, _)| k == "default" || only.contains(&k.as_str()))
        .collect();
    (setup[0].banned.clone(), irqs)
}

/// The guest's uptime on a block's line starting with `what` ("start at
/// 12.3").
fn uptime_at(out: &str, what: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix(what))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {what:?} in {out}"))
}

/// Issue 33 items 3 and 4 with Debian bookworm's irqbalance 1.9.2
/// (vm/scenarios/steer-irqbalance-bookworm.sh), interval 4 s. It rescans
/// with its socket unserved for a whole interval after every `settings
/// cpus`, and dies of SIGPIPE answering a connection its client dropped:
/// the launch polled every 100 ms, dropped each unanswered connection
/// after 3 s, was refused after ~14 s (the ban not put back) and
/// irqbalance died, 3 times of 3. Now:
/// - the launch succeeds: its command sees the claimed CPUs banned
///   (4-7,12-17) within 2 intervals + 3 s; afterwards ban, IRQs and
///   default mask as before, irqbalance alive;
/// - irqbalance stopped: the launch is refused (irqbalance-socket, 125)
///   after its bound (interval + 3 s = 7 s), nothing changed, its
///   unanswered setup kept open by pinrun-drain; continued, irqbalance
///   answers it and lives;
/// - pinrun killed (SIGTERM, SIGKILL) with the ban sent and in --probe
///   after every write: the helper alone puts the ban, every IRQ and the
///   default mask back, no journal left, irqbalance alive.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_steer_irqs_irqbalance_1_9_2_survives_and_every_death_is_undone() {
    let g = boot("steer-irqbalance-bookworm");
    assert!(
        g.ok("version").contains("1.9.2"),
        "{}",
        g.describe("version")
    );
    let cpus = |s: &str| pinrun::cpuset::CpuSet::parse(s).unwrap();
    let (ban0, irqs0) = steer_state(&g, "before");
    assert_eq!(ban0, cpus("4-7,12-15"), "{}", g.describe("before"));
    assert!(
        irqs0.values().filter(|l| *l == "0-31").count() >= 2,
        "{irqs0:?}"
    );
    let dry = g.json("dry");
    assert_eq!(
        dry["steer_irqs"]["irqbalance_ban"]["command"], "settings cpus 4-7,12-17",
        "{dry}"
    );
    // The launch: the ban seen by the command, within 2 x 4 + 3 s.
    let l = g.ok("launch");
    let during = setup_replies(l);
    assert_eq!(during.len(), 1, "{}", g.describe("launch"));
    assert_eq!(
        during[0].banned,
        cpus("4-7,12-17"),
        "{}",
        g.describe("launch")
    );
    let took = uptime_at(l, "command at ") - uptime_at(l, "start at ");
    assert!(
        took < 14.0,
        "the ban took {took:.1} s: {}",
        g.describe("launch")
    );
    eprintln!("bookworm: launch to command {took:.1} s");
    let same = |n: &str| {
        let (ban, irqs) = steer_state(&g, n);
        assert_eq!(ban, ban0, "{}", g.describe(n));
        assert_eq!(irqs, irqs0, "{}", g.describe(n));
    };
    same("after-launch");
    // Stopped: refused after interval + 3 s, nothing changed, the daemon
    // unharmed once continued.
    let b = g.block("stopped");
    assert_eq!(b.rc, 125, "{}", g.describe("stopped"));
    assert!(
        b.err.contains("no answer in 7 s") && b.err.contains("nothing was changed"),
        "{}",
        g.describe("stopped")
    );
    let waited = uptime_at(&b.out, "end at ") - uptime_at(&b.out, "start at ");
    assert!((6.5..12.0).contains(&waited), "refused after {waited:.1} s");
    eprintln!("bookworm: stopped daemon refused after {waited:.1} s");
    let un = g.ok("stopped-unchanged");
    assert!(
        un.contains("drain waits"),
        "{}",
        g.describe("stopped-unchanged")
    );
    let lists: BTreeMap<String, String> = irq_lists(un)
        .into_iter()
        .filter(|(k, _)| irqs0.contains_key(k))
        .collect();
    assert_eq!(lists, irqs0, "{}", g.describe("stopped-unchanged"));
    assert!(
        un.contains("No such file"),
        "the command ran: {}",
        g.describe("stopped-unchanged")
    );
    same("after-stopped");
    // Every death undone by the helper.
    for sig in ["TERM", "KILL"] {
        for step in ["ban", "probe"] {
            let k = format!("kill-{step}-{sig}");
            let out = g.ok(&k);
            assert!(
                out.contains(&format!("killed with SIG{sig}")),
                "{}",
                g.describe(&k)
            );
            let rc = if sig == "TERM" { 143 } else { 137 };
            assert!(
                out.contains(&format!("pinrun rc={rc}")),
                "{}",
                g.describe(&k)
            );
            if step == "ban" {
                assert!(
                    out.contains(": 1 journal(s) with the ban"),
                    "{}",
                    g.describe(&k)
                );
            }
            eprintln!(
                "bookworm: {k}: {}",
                out.lines()
                    .find(|l| l.starts_with("settled"))
                    .unwrap_or("?")
            );
            same(&format!("after-{k}"));
        }
    }
    // SIGKILL inside an exchange (irqbalance stopped for it): the reply,
    // written once it continues, is read by pinrun-drain; irqbalance lives.
    let k = g.ok("kill-stopped-KILL");
    assert!(
        k.contains("irqbalance stopped, 1 pinrun-drain") && k.contains("pinrun rc=137"),
        "{}",
        g.describe("kill-stopped-KILL")
    );
    assert!(
        g.ok("after-kill-stopped-KILL").contains("irqbalance alive"),
        "{}",
        g.describe("after-kill-stopped-KILL")
    );
    same("after-kill-stopped-KILL");
    // Two intervals after the last: no ban left pending in irqbalance.
    same("final-state");
    g.ok("irqbalance-alive");
}

/// `/proc/interrupts` counts per IRQ number and CPU: `{irq: [count per CPU]}`.
fn interrupt_counts(text: &str) -> BTreeMap<u64, Vec<u64>> {
    let mut lines = text.lines();
    let ncpu = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|l| {
            let (label, rest) = l.trim_start().split_once(':')?;
            let n: u64 = label.parse().ok()?;
            let counts: Vec<u64> = rest
                .split_whitespace()
                .take(ncpu)
                .map_while(|c| c.parse().ok())
                .collect();
            Some((n, counts))
        })
        .collect()
}

/// The interrupts of each IRQ on `cpus` between two `/proc/interrupts`.
fn deltas_on(before: &str, after: &str, cpus: &[u64]) -> BTreeMap<u64, u64> {
    let (b, a) = (interrupt_counts(before), interrupt_counts(after));
    a.iter()
        .map(|(n, counts)| {
            let d = cpus
                .iter()
                .map(|&c| {
                    let c = c as usize;
                    counts.get(c).copied().unwrap_or(0)
                        - b.get(n).and_then(|v| v.get(c)).copied().unwrap_or(0)
                })
                .sum();
            (*n, d)
        })
        .collect()
}

/// The IRQs a launch said are still delivered to a claimed CPU ("pinrun:
/// effective affinity pending for IRQs 32 41", "… for IRQ 32"): x86 applies the move of
/// an MSI IRQ without interrupt remapping when it next fires, on its old
/// CPU (`irq_move_masked_irq()`), so each may still fire there until the
/// move takes effect.
fn pending_irqs(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("pinrun: effective affinity pending for "))
        .filter_map(|l| l.strip_prefix("IRQs ").or_else(|| l.strip_prefix("IRQ ")))
        .flat_map(|l| l.split_whitespace().map_while(|w| w.parse().ok()))
        .collect()
}

/// Issue 21 with an NVMe controller (vm/scenarios/steer-nvme.sh: 32 CPUs,
/// 8 PCIe root ports, QEMU's nvme with 32 managed queue IRQs, no irq
/// debugfs). `--exclusive --steer-irqs --cpus 16` claims CPUs 16-17:
/// - the dry run lists as unmovable exactly the IRQs on them the kernel
///   refuses a test write for (the shell's own `echo x`: EIO), the queue
///   IRQs of CPUs 16 and 17 as kernel-managed, and plans every other one
///   (the admin queue nvme0q0, set to CPU 16, and the root ports' MSI)
///   as a move known unmanaged;
/// - the launch writes exactly those lists (the shell reads them),
///   reports nothing it could not move, never writes a managed one;
///   during 3 s of I/O no movable IRQ fires on CPUs 16-17 (the shell's
///   /proc/interrupts deltas) while nvme0q0 fires elsewhere and CPU 17's
///   managed queue fires on CPU 17;
/// - `--probe` after the steering names no movable device IRQ on the
///   claimed CPUs (but a pending move's last interrupt, named so) and
///   names CPU 17's queue IRQ kernel-managed;
/// - every IRQ and the default mask are back after each command.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_steer_irqs_nvme_managed_queues_stay_msi_moves() {
    let g = boot("steer-nvme");
    let names = irq_lists(g.ok("names"));
    let chips = irq_lists(g.ok("chips"));
    let irq_of = |name: &str| -> String {
        names
            .iter()
            .find(|(_, a)| a.as_str() == name)
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| panic!("no IRQ {name}: {names:?}"))
    };
    let (q0, q9, q10) = (irq_of("nvme0q0"), irq_of("nvme0q9"), irq_of("nvme0q10"));
    let parse = |l: &str| {
        pinrun::cpuset::CpuSet::parse_sysfs_list(l, None).unwrap_or_else(|e| panic!("{l:?}: {e:?}"))
    };
    // The admin queue was put on CPU 16 and fired there.
    let admin: Vec<&str> = g.ok("admin-to-16").split_whitespace().collect();
    assert_eq!(
        admin,
        [q0.as_str(), "16", "16"],
        "{}",
        g.describe("admin-to-16")
    );
    let before = irq_lists(g.ok("before"));
    assert_eq!(
        irq_lists(g.ok("after-test-writes")),
        before,
        "the test writes changed nothing"
    );
    let claimed = [16u64, 17];
    let on_claimed = |l: &str| claimed.iter().any(|&c| parse(l).contains(c as u32));
    // The kernel's answers, as the shell got them.
    let kept: BTreeMap<String, bool> = g
        .ok("test-writes")
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, err)| {
            let k = err.contains("Input/output error") || err.contains("Operation not permitted");
            assert!(k || err.contains("Invalid argument"), "IRQ {n}: {err}");
            (n.to_string(), k)
        })
        .collect();
    assert_eq!(
        kept.get(&q9),
        Some(&true),
        "nvme0q9 (CPU 16's queue) is managed: {kept:?}"
    );
    assert_eq!(
        kept.get(&q10),
        Some(&true),
        "nvme0q10 (CPU 17's queue): {kept:?}"
    );
    assert_eq!(
        kept.get(&q0),
        Some(&false),
        "nvme0q0 (admin) is not managed: {kept:?}"
    );
    // The dry run.
    let dry = g.json("dry");
    let s = &dry["steer_irqs"];
    assert_eq!(nums(&s["cpus"]), claimed);
    let listed = |key: &str| -> BTreeMap<String, Value> {
        s[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["irq"].to_string(), m.clone()))
            .collect()
    };
    let (moves, unmovable) = (listed("move"), listed("unmovable"));
    for (n, l) in before.iter().filter(|(n, _)| *n != "default") {
        if !on_claimed(l) {
            assert!(
                !moves.contains_key(n) && !unmovable.contains_key(n),
                "IRQ {n} {l}: {s}"
            );
            continue;
        }
        let k = kept[n];
        assert_eq!(unmovable.contains_key(n), k, "IRQ {n} {l} kept={k}: {s}");
        assert_eq!(moves.contains_key(n), !k, "IRQ {n} {l} kept={k}: {s}");
        if k {
            let u = &unmovable[n];
            let msi = chips.get(n).is_some_and(|c| c.contains("MSI"));
            assert_eq!(
                u["managed"],
                if msi { Value::Bool(true) } else { Value::Null },
                "{u}"
            );
            if msi {
                assert!(
                    u["why"].as_str().unwrap().starts_with("kernel-managed"),
                    "{u}"
                );
            }
        } else {
            assert_eq!(moves[n]["managed"], false, "IRQ {n}: {s}");
        }
    }
    assert!(moves[&q0]["housekeeping"].as_bool().unwrap(), "{s}");
    let dry_text = g.ok("dry-text");
    assert!(
        dry_text.contains(&format!(
            "cannot move IRQ {q10} (nvme0q10) on CPU 17: kernel-managed"
        )),
        "{dry_text}"
    );
    assert!(
        !dry_text.contains("not known to be unmanaged"),
        "{dry_text}"
    );
    // The launch: exactly the planned lists, nothing refused, managed untouched.
    let during_b = g.block("during");
    assert_eq!(during_b.rc, 0, "{}", g.describe("during"));
    assert!(
        !during_b.err.contains("not moved"),
        "{}",
        g.describe("during")
    );
    let parts: Vec<&str> = during_b.out.split("===\n").collect();
    assert_eq!(parts.len(), 4, "{}", g.describe("during"));
    let during = irq_lists(parts[0]);
    for (n, m) in &moves {
        assert_eq!(
            parse(&during[n]).to_vec(),
            nums(&m["to"]).iter().map(|&c| c as u32).collect::<Vec<_>>(),
            "IRQ {n}"
        );
        assert!(!on_claimed(&during[n]), "IRQ {n} {}", during[n]);
    }
    for n in unmovable.keys() {
        assert_eq!(during[n], before[n], "unmovable IRQ {n}");
    }
    assert_ne!(during["default"], before["default"]);
    // 3 s of I/O while steered: the shell's deltas.
    let (i_before, i_after) = (parts[1], parts[2]);
    let claimed_deltas = deltas_on(i_before, i_after, &claimed);
    let all: Vec<u64> = (0..32).collect();
    let all_deltas = deltas_on(i_before, i_after, &all);
    let pending = pending_irqs(&during_b.err);
    for (n, d) in &claimed_deltas {
        // A move pinrun reported pending takes effect at the IRQ's next
        // interrupts on its old CPU (x86 without interrupt remapping:
        // `irq_move_masked_irq()`, the old vector cleaned up only once one
        // arrives on the new one), so it may fire there until then, once
        // or a few times when interrupts are back to back; that its
        // effective affinity then lies inside what was written is checked
        // after the I/O below.
        if kept.get(&n.to_string()) != Some(&true) && !pending.contains(n) {
            assert!(
                *d == 0,
                "movable IRQ {n} fired {d}× on CPUs 16-17 while steered (pending {pending:?}): {}",
                g.describe("during")
            );
        }
    }
    let q0n: u64 = q0.parse().unwrap();
    let q10n: u64 = q10.parse().unwrap();
    assert!(
        all_deltas[&q0n] > 0,
        "the admin queue did not fire: {}",
        g.describe("during")
    );
    assert!(
        claimed_deltas[&q10n] > 0,
        "CPU 17's queue did not fire on it: {}",
        g.describe("during")
    );
    let effective = irq_lists(parts[3]);
    assert!(
        !on_claimed(&effective[&q0]),
        "nvme0q0 effective {}",
        effective[&q0]
    );
    // Every moved IRQ is delivered inside what was written, unless its
    // move is still pending (it has not fired since).
    for (n, m) in &moves {
        let to: Vec<u32> = nums(&m["to"]).iter().map(|&c| c as u32).collect();
        let outside: Vec<u32> = parse(&effective[n])
            .to_vec()
            .into_iter()
            .filter(|c| !to.contains(c))
            .collect();
        assert!(
            outside.is_empty() || pending.contains(&n.parse().unwrap()),
            "IRQ {n}: effective {} outside {to:?} after the I/O",
            effective[n]
        );
    }
    // Back after the command.
    assert_eq!(irq_lists(g.ok("after")), before, "{}", g.describe("after"));
    // --probe after the steering.
    let probe = g.block("probe");
    assert_eq!(probe.rc, 0, "{}", g.describe("probe"));
    let mut managed_seen = 0;
    for cpu in claimed {
        let line = probe
            .err
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(&format!("CPU {cpu} sources: ")))
            .unwrap_or_else(|| panic!("no sources of CPU {cpu}: {}", g.describe("probe")));
        for src in line.split("; ").filter(|x| x.starts_with("IRQ ")) {
            let n = src.split_whitespace().nth(1).unwrap();
            if kept.get(n) == Some(&true) {
                assert!(src.contains(", kernel-managed) ×"), "CPU {cpu}: {src}");
                managed_seen += 1;
            } else {
                // Only a pending move's one last interrupt, named so.
                assert!(
                    pending_irqs(&probe.err).contains(&n.parse().unwrap())
                        && src.ends_with(", steered, move pending) ×1"),
                    "movable IRQ on CPU {cpu} during the probe: {src}\n{}",
                    g.describe("probe")
                );
            }
        }
    }
    assert!(
        managed_seen > 0,
        "no managed queue IRQ named: {}",
        g.describe("probe")
    );
    let out = &probe.out;
    let (p_before, p_after) = out.split_once("===\n").expect("probe command output");
    for (n, d) in deltas_on(p_before, p_after, &claimed) {
        if kept.get(&n.to_string()) != Some(&true) {
            // The probe ran first: a pending move has happened by now.
            assert_eq!(
                d, 0,
                "movable IRQ {n} fired {d}× on CPUs 16-17 under the probe's steering"
            );
        }
    }
    assert_eq!(
        irq_lists(g.ok("after-probe")),
        before,
        "{}",
        g.describe("after-probe")
    );
    let listed = g.ok("journals");
    assert!(listed.contains("listed"));
    assert!(!listed.contains(".journal"), "{listed}");
}

/// Issue 38, the loop closed on a real kernel: the guest plans its own
/// split for 2 latency cores (`--plan-host --latency-cores 2`: the boot
/// CPU's core and the next stay housekeeping, CPUs 0-3 on node 0; latency
/// 4-7), the host boots it again with the kernel command line pinrun
/// printed, and then the running kernel has the split: `--plan-host
/// --check` finds no difference (before: isolcpus, nohz_full, rcu_nocbs,
/// irqaffinity and PID 1's affinity differ), `--check --isolated --cores
/// 2` no isolation finding, a latency launch lands on 4-7, and the probe
/// counts a fifth of a housekeeping CPU's local timer interrupts or fewer
/// on a latency CPU (nohz_full took).
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_plan_host_boots_into_the_split() {
    let first = boot("host-plan");
    let plan = first.json("plan");
    assert_eq!(plan["housekeeping"], "0-3", "{plan}");
    assert_eq!(plan["latency"], "4-7", "{plan}");
    // Debian's kernel has CONFIG_NO_HZ_FULL (cpu/nohz_full exists), so
    // every parameter is emitted.
    let cmdline = plan["kernel_cmdline"].as_str().unwrap().to_string();
    assert_eq!(
        cmdline, "isolcpus=domain,managed_irq,4-7 nohz_full=4-7 rcu_nocbs=4-7 irqaffinity=0-3",
        "{plan}"
    );
    let before = first.json_any("check-before");
    assert_eq!(before["matches"], false, "{before}");
    let settings = |v: &Value| -> Vec<String> {
        v["differences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["setting"].as_str().unwrap().to_string())
            .collect()
    };
    for s in [
        "isolcpus=",
        "nohz_full=",
        "irqaffinity=",
        "PID 1's affinity (systemd's CPUAffinity=)",
    ] {
        assert!(
            settings(&before).iter().any(|x| x == s),
            "{s} not named before: {before}"
        );
    }

    // irqbalance 1.9.2 reads the ban line pinrun printed: its setup reply
    // bans exactly CPUs 4-7 (mask f0; nothing else isolates them here).
    assert_eq!(
        first.ok("irqbalance-line").trim(),
        "IRQBALANCE_BANNED_CPULIST=4-7"
    );
    let setup = first.ok("irqbalance-setup");
    let banned = setup
        .split_whitespace()
        .skip_while(|w| *w != "BANNED")
        .nth(1)
        .unwrap_or_else(|| panic!("no BANNED in irqbalance's setup: {setup}"));
    assert_eq!(banned.trim_start_matches('0'), "f0", "{setup}");

    let g = boot_with("host-ready", &cmdline);
    assert!(
        g.ok("cmdline").contains(&cmdline),
        "{}",
        g.describe("cmdline")
    );
    g.ok("init-affinity");
    let after = g.json_any("check-host");
    assert_eq!(after["matches"], true, "the booted host differs: {after}");
    assert_eq!(g.block("check-host").rc, 0, "{}", g.describe("check-host"));
    // The isolation checks (check/isolation.rs CODES): none on one latency
    // core; on two, only isolated-no-balancing, what isolcpus=domain means
    // (the scheduler moves no thread between them) and what pinrun(1)
    // PREPARE THE HOST says.
    let isolation = |n: &str| -> Vec<String> {
        let v = g.json_any(n);
        v["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .filter_map(|f| f["code"].as_str())
            .filter(|c| {
                [
                    "not-isolated",
                    "not-nohz-full",
                    "not-rcu-nocbs",
                    "isolation-not-applied",
                    "isolcpus-unknown-flag",
                    "isolated-no-balancing",
                    "sibling-not-isolated",
                    "partition-invalid",
                    "isolation-mixed",
                    "isolated-without-intent",
                ]
                .contains(c)
            })
            .map(String::from)
            .collect()
    };
    assert_eq!(
        isolation("check-isolated1"),
        Vec::<String>::new(),
        "{}",
        g.describe("check-isolated1")
    );
    assert_eq!(
        isolation("check-isolated2"),
        ["isolated-no-balancing"],
        "{}",
        g.describe("check-isolated2")
    );
    let launched = g.allowed("launch");
    assert!(
        ["4-5", "6-7", "4-7"].contains(&launched.as_str()) || launched.split(',').count() == 2,
        "{launched}"
    );
    assert!(
        launched
            .chars()
            .filter(|c| c.is_ascii_digit())
            .all(|c| ('4'..='7').contains(&c)),
        "launched on {launched}"
    );
    assert_eq!(
        g.ok("clocksource").trim(),
        "tsc",
        "{}",
        g.describe("clocksource")
    );
    let lat = g.json("probe-latency");
    let lat_cpu = lat["probe"]["cpus"][0]["cpu"]
        .as_u64()
        .unwrap_or_else(|| panic!("{lat}"));
    assert!((4..=7).contains(&lat_cpu), "{lat}");
    let (loc_lat, loc_hk) = (
        probe_loc(&lat, lat_cpu),
        probe_loc(&g.json("probe-housekeeping"), 0),
    );
    eprintln!(
        "vm_plan_host: 3 s probe, LOC on latency CPU {lat_cpu} {loc_lat}, on housekeeping CPU 0 {loc_hk}"
    );
    assert!(loc_hk >= 50, "CPU 0 LOC {loc_hk}");
    assert!(
        loc_lat * 5 <= loc_hk,
        "latency CPU {lat_cpu} LOC {loc_lat} vs CPU 0 {loc_hk}"
    );
}

/// `key=value` lines (`systemctl show -p ...`, `--emit systemd`) as a map.
fn key_values(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What the guest's `kernel_view PID` printed for a unit's main process.
struct MainProc {
    name: String,
    uid: String,
    cpus: String,
    mems: String,
    stat: String,
    /// numa_maps: (mappings, `bind:1` ones, `default` ones)
    maps: (u64, u64, u64),
}

/// The systemd-pid1 scenario's unit `n`: its state (`n-unit`), which
/// must be active and running with no restart, and its main process as
/// the kernel sees it (`n-kernel`), whose PID is the unit's MainPID.
fn running_unit(g: &Guest, n: &str) -> (BTreeMap<String, String>, MainProc) {
    let unit = key_values(g.ok(&format!("{n}-unit")));
    let state = |k: &str| unit.get(k).map(String::as_str);
    assert_eq!(state("ActiveState"), Some("active"), "{unit:?}");
    assert_eq!(state("SubState"), Some("running"), "{unit:?}");
    assert_eq!(state("NRestarts"), Some("0"), "{unit:?}");
    let out = g.ok(&format!("{n}-kernel"));
    let stat =
        field(out, "stat:").unwrap_or_else(|| panic!("{}", g.describe(&format!("{n}-kernel"))));
    let maps = field(out, "numa_maps:").unwrap();
    let w: Vec<u64> = maps
        .split_whitespace()
        .filter_map(|w| w.trim_end_matches(',').parse().ok())
        .collect();
    let p = MainProc {
        name: field(out, "Name:").unwrap(),
        uid: field(out, "Uid:")
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string(),
        cpus: field(out, "Cpus_allowed_list:").unwrap(),
        mems: field(out, "Mems_allowed_list:").unwrap(),
        maps: (w[0], w[1], w[2]),
        stat,
    };
    // the process pinrun became: systemd's main PID, its child, now the
    // engine's `exec sleep` (pinrun and the engine exec'd in place)
    assert_eq!(p.stat.split(' ').next(), state("MainPID"), "{n}: {out}");
    assert_eq!(p.name, "sleep", "{n}: {out}");
    assert_eq!(stat_field(&p.stat, 4), 1, "{n}: parent is PID 1: {out}");
    (unit, p)
}

/// The systemd-pid1 scenario's unit `n`, which pinrun must have refused:
/// failed with exit 125, not restarted (`RestartPreventExitStatus=125`);
/// returns its journal (pinrun's message among systemd's).
fn refused_unit<'a>(g: &'a Guest, n: &str) -> &'a str {
    let unit = key_values(g.ok(&format!("{n}-unit")));
    let state = |k: &str| unit.get(k).map(String::as_str);
    assert_eq!(state("ActiveState"), Some("failed"), "{unit:?}");
    assert_eq!(state("Result"), Some("exit-code"), "{unit:?}");
    assert_eq!(state("ExecMainStatus"), Some("125"), "{unit:?}");
    assert_eq!(state("NRestarts"), Some("0"), "{unit:?}");
    let journal = g.ok(&format!("{n}-journal"));
    assert!(
        journal.contains(&format!(
            "{n}.service: Main process exited, code=exited, status=125/n/a"
        )),
        "{journal}"
    );
    journal
}

/// Issue 34, systemd part: a Debian 12 guest whose PID 1 is systemd 252
/// (vm/rootfs.sh, `#@ rootfs systemd`) starts docs/deploy.md's units
/// (vm/guest/systemd/units/) with pinrun as the `ExecStart=` prefix, the
/// unit `--emit systemd --cgroup` printed, guarded by `--check-emitted`,
/// `User=nobody` with and without `LimitRTPRIO=`, `Type=notify`, the
/// unit's own `CPUAffinity=` narrowing and excluding node 1, and
/// `systemctl stop` during an `--exclusive --steer-irqs` launch. Each
/// unit's main process is read back from /proc (Cpus_allowed_list,
/// Mems_allowed_list, numa_maps, stat fields 40 rt_priority and 41
/// policy), and what systemd applied from `systemctl show` and the
/// unit's cgroup. Node 1 is CPUs 4-7, cores {4,5} {6,7}.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_systemd_pid1_units_run_pinrun_as_documented() {
    let g = boot("systemd-pid1");
    let pid1 = g.ok("pid1");
    assert!(pid1.starts_with("systemd\nsystemd 252 ("), "{pid1}");
    assert!(pid1.ends_with("\nrunning\n"), "{pid1}");
    let fifo50 = (50, libc::SCHED_FIFO as i64);

    // 1. the ExecStart= prefix: one core of node 1 (CPU 4: the first, as
    // `pinrun --node 1 --cores 2` picks 4,6 in vm_basic), SCHED_FIFO 50
    let (_, p) = running_unit(&g, "engine");
    assert_eq!(p.cpus, "4");
    assert_eq!(rt(&p.stat), fifo50, "{}", p.stat);
    assert_eq!(p.mems, "0-1");
    assert_eq!(p.uid, "0");

    // 2. the emitted unit: pinrun's plan as systemd's own directives, with
    // the cgroup's cpuset; --check-emitted (ExecStartPre=) let it start
    let emitted = g.ok("emit");
    assert!(
        emitted.starts_with("[Service]\n# pinrun-topology: fnv1a64=")
            && emitted
                .lines()
                .nth(1)
                .unwrap()
                .ends_with(" cpus=8 cores=4 packages=2 nodes=2"),
        "{emitted}"
    );
    let e = key_values(emitted);
    for (k, v) in [
        ("CPUAffinity", "4"),
        ("NUMAPolicy", "bind"),
        ("NUMAMask", "1"),
        ("CPUSchedulingPolicy", "fifo"),
        ("CPUSchedulingPriority", "50"),
        ("AllowedCPUs", "4"),
        ("AllowedMemoryNodes", "1"),
        ("ExecStart", "/usr/local/bin/engine"),
        (
            "ExecStartPre",
            "/usr/local/bin/pinrun --check-emitted /etc/systemd/system/engine-native.service",
        ),
    ] {
        assert_eq!(e.get(k).map(String::as_str), Some(v), "{k}: {emitted}");
    }
    let (_, p) = running_unit(&g, "engine-native");
    assert_eq!(p.cpus, "4");
    assert_eq!(p.mems, "1");
    assert_eq!(rt(&p.stat), fifo50, "{}", p.stat);
    // MPOL_BIND to node 1: every mapping of the process shows it
    assert!(
        p.maps.0 > 10 && p.maps.1 + 2 >= p.maps.0 && p.maps.2 == 0,
        "{:?}",
        p.maps
    );
    let applied = key_values(g.ok("engine-native-props"));
    for (k, v) in [
        ("CPUAffinity", "4"),
        ("AllowedCPUs", "4"),
        ("AllowedMemoryNodes", "1"),
        ("NUMAPolicy", "bind"),
        ("NUMAMask", "1"),
        ("CPUSchedulingPolicy", "1"),
        ("CPUSchedulingPriority", "50"),
        ("ControlGroup", "/system.slice/engine-native.service"),
    ] {
        assert_eq!(
            applied.get(k).map(String::as_str),
            Some(v),
            "{k}: {applied:?}"
        );
    }
    assert_eq!(
        g.ok("engine-native-cgroup"),
        "cpuset.cpus: 4\ncpuset.cpus.effective: 4\ncpuset.mems: 1\ncpuset.mems.effective: 1\n"
    );
    // the prefixed units bind no memory: the default policy, both nodes
    let (_, p) = running_unit(&g, "engine");
    assert_eq!((p.maps.1, p.mems.as_str()), (0, "0-1"), "{:?}", p.maps);

    // 3. User=nobody: SCHED_FIFO 50 with LimitRTPRIO=50 ...
    // (its CPUs are not asserted: with no placement pinrun set 0-7, the
    // cgroup's, over the 0-1,4-7 the unit inherited: issue 34 item 2)
    let (_, p) = running_unit(&g, "engine-user");
    assert_eq!(p.uid, "65534");
    assert_eq!(rt(&p.stat), fifo50, "{}", p.stat);
    // ... and without it pinrun refuses, naming the limit and the fix
    let j = refused_unit(&g, "engine-user-nolimit");
    assert!(
        j.contains(
            "pinrun: real-time priority 50 exceeds RLIMIT_RTPRIO 0, and CAP_SYS_NICE is missing"
        ),
        "{j}"
    );
    assert!(j.contains("LimitRTPRIO=50"), "{j}");

    // 4. Type=notify, NotifyAccess=main: the engine's READY=1 came from
    // the main PID (systemd accepted its status text) and the start job
    // waited for it
    let (unit, p) = running_unit(&g, "engine-notify");
    let pid = p.stat.split(' ').next().unwrap();
    assert_eq!(
        unit.get("StatusText"),
        Some(&format!("engine pid {pid} ready")),
        "{unit:?}"
    );
    assert_eq!(g.block("engine-notify-start").rc, 0);
    assert_eq!(p.cpus, "4");
    assert_eq!(rt(&p.stat), fifo50, "{}", p.stat);

    // 5. the unit's CPUAffinity=6-7 bounds the choice: core {6,7} of node 1
    let (_, p) = running_unit(&g, "engine-narrow");
    assert_eq!(p.cpus, "6");
    assert_eq!(rt(&p.stat), fifo50, "{}", p.stat);
    // ... and CPUAffinity=0-1 leaves node 1 nothing: refused, saying so
    let j = refused_unit(&g, "engine-disjoint");
    assert!(
        j.contains("pinrun: --node: node 1 has CPUs 4-7, none of them online and inside the inherited affinity's allowed CPUs (0-1)"),
        "{j}"
    );

    // 6. `systemctl stop` during `--exclusive --steer-irqs`: the IRQs the
    // guest allowed on all CPUs left the claimed core {4,5} while the
    // engine ran, and were all back when `systemctl stop` returned
    let irqs = |n: &str| -> BTreeMap<String, String> {
        g.ok(n)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let widened: Vec<&str> = g.ok("steer-widen").lines().collect();
    assert!(widened.len() >= 3, "{widened:?}");
    let (before, during, after) = (
        irqs("steer-before"),
        irqs("steer-during"),
        irqs("steer-after"),
    );
    let (_, p) = running_unit(&g, "engine-steer");
    assert_eq!(p.cpus, "4");
    let claims = g.ok("steer-claims");
    assert!(claims.contains("\"claimed_cpus\":[4,5]"), "{claims}");
    assert!(
        claims
            .lines()
            .any(|l| l.starts_with("steer.") && l.ends_with(".journal")),
        "{claims}"
    );
    for (irq, cpus) in &before {
        let moved = widened.contains(&irq.as_str());
        let want = if moved { "0-3,6-7" } else { cpus.as_str() };
        assert_eq!(
            during[irq], want,
            "IRQ {irq} while steered (before: {cpus})"
        );
        if moved {
            assert_eq!(cpus, "0-7", "IRQ {irq}");
        }
    }
    assert_eq!(before["default"], "03");
    assert_eq!(after, before, "after systemctl stop");
    let state = g.ok("steer-after-state");
    assert!(!state.contains(".journal"), "{state}");
    assert!(state.contains("ActiveState=inactive"), "{state}");
    // the dead launch's claim record may stay; it claims nothing
    assert!(state.contains("\"claimed_cpus\":[]"), "{state}");
}

/// The findings of `v` with `code`.
fn findings_with<'a>(v: &'a Value, code: &str) -> Vec<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// The one finding of `v` with `code`: its message.
fn only_message(v: &Value, code: &str) -> String {
    let f = findings_with(v, code);
    assert_eq!(f.len(), 1, "{code}: {v}");
    f[0]["message"].as_str().unwrap().to_string()
}

/// Issue 34, Kubernetes, with the closest real substitute for a kubelet
/// (vm/scenarios/k8s-runc.sh): Debian 12's runc 1.1.5 with its systemd
/// cgroup driver starts containers in the pod-shaped cgroup
/// `kubepods.slice/kubepods-pod<UID>.slice/cri-containerd-<ID>.scope` with
/// a cpuset and a CFS quota, and a hand-written `cpu_manager_state` in
/// kubelet's checkpoint format is bind-mounted in. pinrun, the container's
/// entrypoint, names the pod and the container, plans inside the cpuset
/// runc gave, reports the quota, and `--settle` times out with its hint or
/// waits for `runc update` (kubelet's UpdateContainerResources). No
/// kubelet, CRI runtime or CPU manager runs: docs/deploy.md says so.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_k8s_runc_pod_cgroup_cpuset_quota_and_settle() {
    let g = boot("k8s-runc");
    let v = g.ok("versions");
    assert!(v.starts_with("runc version 1.1.5"), "{v}");
    assert!(v.contains("\nrunning\ncpuset cpu "), "{v}");
    let fifo10 = (10, libc::SCHED_FIFO as i64);
    let uid = "4c2a9e1b-7d3f-4e8a-9b6c-1f2e3d4c5b6a";
    let scope = |id: &str| {
        format!(
            "/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{id}.scope",
            uid.replace('-', "_")
        )
    };
    let exclusive = format!(
        "pod {uid} (Guaranteed): container engine has exclusive CPUs 2-3,6-7 from kubelet's static CPU manager"
    );

    // 1. Exclusive CPUs 2-3,6-7 and a CFS quota of 2 CPUs, the pod path
    // in /proc/self/cgroup: the pod (UID, QoS), the checkpoint's container
    // name and its CPUs; the quota as a notice (a real-time launch); the
    // plan inside runc's cpuset: CPU 2, the isolated core's first thread.
    let d = g.json("dry-quota");
    assert_eq!(d["cpus"], serde_json::json!([2]), "{d}");
    assert_eq!(d["cores"][0]["cpus"], serde_json::json!([2, 3]), "{d}");
    assert_eq!(only_message(&d, "k8s-pool"), exclusive);
    let q = findings_with(&d, "cfs-quota");
    assert_eq!(q.len(), 1, "{d}");
    assert_eq!(q[0]["severity"], "notice");
    assert!(
        q[0]["message"].as_str().unwrap().starts_with(&format!(
            "/sys/fs/cgroup{}/cpu.max = 200000 100000: a CFS quota of 2.00 CPUs per 100000 us period",
            scope("c0ffee01")
        )),
        "{d}"
    );
    for code in ["k8s-shared-pool", "k8s-cpuset-unsettled"] {
        assert!(findings_with(&d, code).is_empty(), "{code}: {d}");
    }
    let why = d["reasons"][0].as_str().unwrap();
    assert_eq!(
        why,
        format!(
            "allowed CPUs: 2-3,6-7 (online 0-7, limited by the cpuset of cgroup {s}: /sys/fs/cgroup{s}/cpuset.cpus.effective = 2-3,6-7)",
            s = scope("c0ffee01")
        )
    );
    // the launch: /app on CPU 2 with SCHED_FIFO 10, in the container's
    // scope with the quota and cpuset runc set
    let out = g.ok("launch-quota");
    assert_eq!(g.allowed("launch-quota"), "2");
    assert_eq!(rt(&field(out, "stat:").unwrap()), fifo10, "{out}");
    assert!(
        out.ends_with(&format!(
            "cgroup: {}\ncpu.max: 200000 100000\ncpuset.cpus: 2-3,6-7\ncpuset.cpus.effective: 2-3,6-7\n",
            scope("c0ffee03")
        )),
        "{out}"
    );
    let err = &g.block("launch-quota").err;
    assert!(
        err.contains("pinrun: CPU 2: 2 notices (rt-throttling, cfs-quota)"),
        "{err}"
    );

    // 2. No quota: no cfs-quota finding, the same pool and plan.
    let d = g.json("dry-noquota");
    assert!(findings_with(&d, "cfs-quota").is_empty(), "{d}");
    assert_eq!(only_message(&d, "k8s-pool"), exclusive);
    assert_eq!(d["cpus"], serde_json::json!([2]), "{d}");

    // 3. A private cgroup namespace (containerd's default on cgroup v2):
    // the path is "/", KUBERNETES_SERVICE_HOST marks the container, and
    // the pool is found by its cpuset among the checkpoint's entries.
    let d = g.json("dry-cgroupns");
    assert_eq!(
        only_message(&d, "k8s-pool"),
        "this container: container engine has exclusive CPUs 2-3,6-7 from kubelet's static CPU manager"
    );
    assert!(
        d["reasons"][0]
            .as_str()
            .unwrap()
            .contains("cpuset of cgroup /: /sys/fs/cgroup/cpuset.cpus.effective = 2-3,6-7"),
        "{d}"
    );
    assert_eq!(d["cpus"], serde_json::json!([2]), "{d}");
    let out = g.ok("launch-cgroupns");
    assert_eq!(g.allowed("launch-cgroupns"), "2");
    assert_eq!(rt(&field(out, "stat:").unwrap()), fifo10, "{out}");
    assert!(
        out.ends_with(
            "cgroup: /\ncpu.max: max 100000\ncpuset.cpus: 2-3,6-7\ncpuset.cpus.effective: 2-3,6-7\n"
        ),
        "{out}"
    );

    // 4. The checkpoint assigns 2-3,6-7 but the cpuset is the shared pool
    // 0-1,4-5: --settle=1s gives up with the documented hint and plans
    // in the cpuset as it is ...
    let d = g.json("settle-timeout");
    let f = findings_with(&d, "k8s-cpuset-unsettled");
    assert_eq!(f.len(), 1, "{d}");
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(f[0]["cpus"], serde_json::json!([2, 3, 6, 7]));
    assert_eq!(
        f[0]["message"],
        format!(
            "pod {uid} (Guaranteed): kubelet's CPU manager state assigns container engine CPUs 2-3,6-7, but its cpuset.cpus.effective is 0-1,4-5: kubelet has not applied them yet, and when it does, the kernel moves this process to them and the plan's CPUs are lost"
        )
    );
    assert_eq!(
        f[0]["hint"],
        "kubelet did not apply them within --settle=1s: check that kubelet runs (its reconcile loop writes the cpuset every few seconds), or wait longer"
    );
    assert_eq!(d["cpus"], serde_json::json!([0]), "{d}");
    // ... and --settle=60s waits (pinrun still pinrun, on the shared pool,
    // a second after it started) until `runc update --cpuset-cpus
    // 2-3,6-7`, then plans and runs in the assigned CPUs
    let out = g.ok("settle-update");
    assert!(
        out.starts_with(
            "before update: pinrun Cpus_allowed_list:\t0-1,4-5\nupdate rc=0\ncontainer rc=0\n"
        ),
        "{out}"
    );
    assert_eq!(
        field(out, "Cpus_allowed_list:").as_deref(),
        Some("2"),
        "{out}"
    );
    assert_eq!(rt(&field(out, "stat:").unwrap()), fifo10, "{out}");
    assert!(
        out.ends_with("cpuset.cpus: 2-3,6-7\ncpuset.cpus.effective: 2-3,6-7\n"),
        "{out}"
    );

    // 5. --emit k8s in the container: one whole core (2 CPUs) with
    // requests = limits, the argv given, CAP_SYS_NICE for SCHED_FIFO ...
    let y = g.ok("emit");
    for want in [
        "resources:\n  requests:\n    cpu: \"2\"\n",
        "  limits:\n    cpu: \"2\"\n",
        "\ncommand: [\"pinrun\", \"--cores\", \"1\", \"--fifo\", \"10\", \"--\", \"/app\"]\n",
        "    add: [\"SYS_NICE\"]\n",
    ] {
        assert!(y.contains(want), "{want:?} in {y}");
    }
    // ... and its command, run as printed in a container of that size
    // (CPUs 6-7, the checkpoint rewritten to match), runs /app on CPU 6
    // with SCHED_FIFO 10 (pinrun found through the image's PATH)
    let out = g.ok("emitted-run");
    assert_eq!(g.allowed("emitted-run"), "6");
    assert_eq!(rt(&field(out, "stat:").unwrap()), fifo10, "{out}");
    assert!(
        out.ends_with(&format!(
            "cgroup: {}\ncpu.max: max 100000\ncpuset.cpus: 6-7\ncpuset.cpus.effective: 6-7\n",
            scope("c0ffee0a")
        )),
        "{out}"
    );
    // every container deleted, no scope left
    assert_eq!(g.ok("leftovers"), "");
}

/// The lines `/job/rank` printed in a Slurm scenario block (one per rank,
/// `rank=N cpus=… mems=… policy=… prio=… numa=POLICY*COUNT,… slurm=…
/// cpu_bind=…`), by rank.
fn slurm_ranks(out: &str) -> BTreeMap<u64, BTreeMap<String, String>> {
    out.lines()
        .filter(|l| l.starts_with("rank="))
        .map(|l| {
            let kv: BTreeMap<String, String> = l
                .split(' ')
                .filter_map(|w| w.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            (kv["rank"].parse().unwrap(), kv)
        })
        .collect()
}

/// Each rank's CPUs, scheduling (policy, rt_priority) and memory policy
/// on every mapping (`bind:N`, or `default`: numa_maps shows the task's
/// policy on mappings without their own) in a Slurm scenario block.
fn assert_ranks(g: &Guest, n: &str, want: &[(&str, (i64, i64), &str)]) {
    let out = g.ok(n);
    let ranks = slurm_ranks(out);
    assert_eq!(ranks.len(), want.len(), "{}", g.describe(n));
    for (r, (cpus, sched, mem)) in want.iter().enumerate() {
        let k = &ranks[&(r as u64)];
        assert_eq!(k["cpus"], *cpus, "{n} rank {r}: {out}");
        assert_eq!(
            (k["prio"].parse().unwrap(), k["policy"].parse().unwrap()),
            *sched,
            "{n} rank {r}: {out}"
        );
        // one policy on every mapping, `mem` (mappings*COUNT)
        let (policy, count) = k["numa"].split_once('*').unwrap();
        assert_eq!(policy, *mem, "{n} rank {r}: {out}");
        assert!(count.parse::<u64>().unwrap() > 10, "{n} rank {r}: {out}");
        assert_eq!(k["mems"], "0-1", "{n} rank {r}: {out}");
    }
}

/// Issue 34, Slurm part: Debian 12's slurm-wlm 22.05 for real (slurmctld,
/// slurmd and munge started by their Debian units under systemd 252 as
/// PID 1; select/cons_tres with CR_Core, task/affinity and task/cgroup on
/// cgroup v2; vm/guest/root-slurm/) on one node shaped as the guest, 2
/// sockets x 2 cores x 2 threads, node 0 = CPUs 0-3 and node 1 = CPUs
/// 4-7, no isolcpus (vm/scenarios/slurm.sh). srun binds each task
/// (`--cpu-bind=cores|threads|map_cpu|mask_cpu|none`), pinrun plans inside
/// the task's mask, and each rank reads back from the kernel its CPUs,
/// policy and priority, and its memory policy; docs/deploy.md's batch
/// script runs as written; the line `--emit slurm 4` prints runs as
/// printed; `--cpus +0` counts from each task's CPUs.
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_slurm_daemons_bind_and_pinrun_plans_inside() {
    let g = boot("slurm");
    assert_eq!(
        g.ok("pid1"),
        "systemd\nrunning\npinrun-slurm\n127.0.1.1       pinrun-slurm\n"
    );
    let daemons = g.ok("daemons");
    assert_eq!(
        daemons.matches("ActiveState=active").count(),
        3,
        "{daemons}"
    );
    let idle = g.ok("idle");
    assert!(idle.starts_with("slurm-wlm 22.05."), "{idle}");
    assert!(idle.contains("\npinrun-slurm idle 8 2 2 2\n"), "{idle}");
    let c = g.ok("slurmd-C");
    assert!(
        c.starts_with(
            "NodeName=pinrun-slurm CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=2 "
        ),
        "{c}"
    );
    let none = (0, 0);
    let fifo50 = (50, libc::SCHED_FIFO as i64);
    // a task's --dry-run line, "R: ..." (sed-labelled by SLURM_PROCID)
    let dry = |n: &str, r: u64, text: &str| {
        let out = g.ok(n);
        assert!(
            out.lines().any(|l| l
                .strip_prefix(&format!("{r}: "))
                .is_some_and(|l| l.contains(text))),
            "{n}: task {r} has no line with {text:?}:\n{out}"
        );
    };

    // 1. --cpu-bind=cores, -n2: under CR_Core the two tasks share one
    // core (0-1, mask 0x03 twice), and pinrun --cores 1 in both picks CPU
    // 0, warning that the mask is shared
    assert_ranks(
        &g,
        "cores",
        &[("0", none, "default"), ("0", none, "default")],
    );
    assert_eq!(
        slurm_ranks(g.ok("cores"))[&0]["slurm"],
        "mask_cpu:0x03,0x03"
    );
    assert_eq!(g.block("cores").err.matches("slurm-shared-mask").count(), 2);
    // ... with -c2 a core each: 0-1 and 2-3, and pinrun names the mask
    assert_ranks(
        &g,
        "cores-c2",
        &[("0", none, "default"), ("2", none, "default")],
    );
    dry("cores-c2", 0, "(Slurm task 0 mask 0-1)");
    dry("cores-c2", 1, "(Slurm task 1 mask 2-3)");
    // --cpu-bind=threads: a CPU each, no whole core in it: --cores 1 is
    // refused naming the task's mask ...
    let err = &g.block("threads").err;
    assert_ne!(g.block("threads").rc, 0);
    assert!(
        err.contains("--cores 1: only 0 whole cores are available in the candidates 0, bounded by the inherited affinity (Slurm task 0 mask 0); 1 more core has a sibling outside them (0-1)"),
        "{err}"
    );
    assert!(err.contains("(Slurm task 1 mask 1)"), "{err}");
    // ... and with no placement pinrun plans and checks on the task's CPU
    // (issue 34 item 2), binding memory to its node (item 1)
    assert_ranks(
        &g,
        "threads-task",
        &[("0", fifo50, "bind:0"), ("1", fifo50, "bind:0")],
    );
    dry(
        "threads-task",
        0,
        "no placement requested: CPU affinity unchanged (CPU 0, the task's CPUs: the checks look there)",
    );
    dry(
        "threads-task",
        1,
        "no placement requested: CPU affinity unchanged (CPU 1, the task's CPUs: the checks look there)",
    );
    // map_cpu:5,2 and mask_cpu:0x30,0xc in an exclusive allocation: each
    // rank on its CPU, memory bound to that CPU's node
    assert_ranks(
        &g,
        "map",
        &[("5", fifo50, "bind:1"), ("2", fifo50, "bind:0")],
    );
    assert_ranks(&g, "mask", &[("4", none, "bind:1"), ("2", none, "bind:0")]);
    dry("mask", 0, "(Slurm task 0 mask 4-5)");
    dry("mask", 1, "(Slurm task 1 mask 2-3)");
    // --cpu-bind=none: both tasks have the step's CPUs (its cgroup, 0-1),
    // which srun 22.05 reports as one mask for both (SLURM_CPU_BIND_LIST
    // 0x03 once: slurm-shared-mask, which looks for a repeated mask, does
    // not warn), and pinrun --cores 1 puts both on CPU 0
    assert_ranks(
        &g,
        "none",
        &[("0", none, "default"), ("0", none, "default")],
    );
    assert_eq!(slurm_ranks(g.ok("none"))[&1]["slurm"], "mask_cpu:0x03");

    // 2. docs/deploy.md's recipe (vm/guest/root-slurm/job/recipe.sbatch):
    // the fingerprint matches, and each rank is SCHED_FIFO 50 on its
    // mapped CPU with memory bound to that CPU's node
    let out = g.ok("recipe");
    assert!(
        out.contains("topology matches this machine (8 CPUs in 4 cores, 2 packages, 2 nodes"),
        "{out}"
    );
    for (task, mask) in ["0x1", "0x4", "0x10", "0x40"].iter().enumerate() {
        assert!(
            out.contains(&format!(
                "cpu-bind=MAP  - pinrun-slurm, task  {task}  {task} ["
            )),
            "{out}"
        );
        assert!(out.contains(&format!("]: mask {mask} set")), "{out}");
    }
    assert_ranks(
        &g,
        "recipe",
        &[
            ("0", fifo50, "bind:0"),
            ("2", fifo50, "bind:0"),
            ("4", fifo50, "bind:1"),
            ("6", fifo50, "bind:1"),
        ],
    );

    // 3. --emit slurm 4 in the guest: its fingerprint is the recipe's,
    // its line runs as printed in an exclusive allocation ...
    let emit = g.ok("emit");
    let recipe =
        std::fs::read_to_string(repo().join("vm/guest/root-slurm/job/recipe.sbatch")).unwrap();
    let print = recipe
        .lines()
        .find(|l| l.starts_with("# pinrun-topology: "))
        .unwrap();
    assert!(emit.starts_with(&format!("{print}\n")), "{emit}");
    assert!(
        emit.ends_with("\nsrun --ntasks-per-node=4 --cpu-bind=verbose,map_cpu:0,2,4,6 -- ./rank\n"),
        "{emit}"
    );
    assert!(emit.contains("(sbatch/salloc --exclusive)"), "{emit}");
    assert_ranks(
        &g,
        "emitted",
        &[
            ("0", none, "default"),
            ("2", none, "default"),
            ("4", none, "default"),
            ("6", none, "default"),
        ],
    );
    // ... and in a partial allocation srun refuses it, as the comment says
    let b = g.block("emitted-partial");
    assert_ne!(b.rc, 0);
    assert!(
        b.err.contains("CPU binding outside of job step allocation"),
        "{}",
        g.describe("emitted-partial")
    );

    // 4. --cpus +0 under --cpu-bind=threads: the first CPU of each task's
    // own mask (0x01,0x10,0x02,0x20), four CPUs (issue 34 item 3)
    assert_ranks(
        &g,
        "plus0",
        &[
            ("0", none, "default"),
            ("4", none, "default"),
            ("1", none, "default"),
            ("5", none, "default"),
        ],
    );
    assert_eq!(
        slurm_ranks(g.ok("plus0"))[&0]["slurm"],
        "mask_cpu:0x01,0x10,0x02,0x20"
    );
    assert_eq!(g.ok("failed"), "");
}

/// The named source of each of the ten largest gaps `--probe-tracer`
/// lined up on CPU `cpu`: (kind, id, name), `None` for a gap no event
/// overlaps. Panics when the tracer reported an error.
fn traced_named(v: &Value, cpu: u64) -> Vec<Option<(String, u64, String)>> {
    assert_eq!(
        v["probe"]["tracer"]["error"],
        Value::Null,
        "{}",
        v["probe"]["tracer"]
    );
    probe_cpu(v, cpu)["traced_gaps"]
        .as_array()
        .unwrap_or_else(|| panic!("no traced_gaps: {}", v["probe"]["tracer"]))
        .iter()
        .map(|g| {
            let n = &g["named"];
            n.is_object().then(|| {
                (
                    n["kind"].as_str().unwrap().to_string(),
                    n["id"].as_u64().unwrap(),
                    n["name"].as_str().unwrap().to_string(),
                )
            })
        })
        .collect()
}

/// The value of `Key: N` in oslat's or cyclictest's output, as the tool
/// prints it (oslat: "Maximum:     57 (us)"; cyclictest: "# Max Latencies: 00057").
fn rt_tests_value(out: &str, key: &str) -> Option<f64> {
    out.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
}

/// The 99th percentile (µs) of cyclictest's histogram (`-h`: lines
/// "BUCKET_US COUNT", one thread), the samples past its end ("# Histogram
/// Overflows: N") counted too: `None` when the 99th percentile is among
/// them (past the histogram's end), or when there is no sample.
fn cyclictest_p99(out: &str) -> Option<u64> {
    let hist: Vec<(u64, u64)> = out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect();
    let over = rt_tests_value(out, "# Histogram Overflows:").unwrap_or(0.0) as u64;
    let total: u64 = hist.iter().map(|h| h.1).sum::<u64>() + over;
    let mut seen = 0;
    hist.iter().find_map(|&(us, n)| {
        seen += n;
        (total > 0 && seen * 100 >= total * 99).then_some(us)
    })
}

/// cyclictest's `-h 2000` output as rt-tests 2.6 prints it (the bucket
/// lines "%06d %06lu", then "# Total:", "# Histogram Overflows:"; boot R2
/// of BENCHMARKS.md "In the VM guest" had 175 overflows of 1 668 samples
/// on CPU 1, whose 99th percentile the bins alone put at 1.07 ms): samples
/// past the histogram's end count, and a 99th percentile among them is
/// `None`, not the last bucket.
#[test]
fn cyclictest_p99_counts_the_overflows() {
    let head = "# /dev/cpu_dma_latency set to 0us\n";
    let out = |b1: u64, b2: u64, over: u64| {
        format!(
            "{head}000000 000000\n000100 {b1:06}\n000200 {b2:06}\n000300 000000\n# Total: {:09}\n# Min Latencies: 00100\n# Avg Latencies: 00150\n# Max Latencies: 05000\n# Histogram Overflows: {over:05}\n",
            b1 + b2
        )
    };
    // 98 of 100 in the bins: the 99th sample is past 300 us
    assert_eq!(cyclictest_p99(&out(90, 8, 2)), None);
    // 99 of 100 in the bins: the 99th is in the 200 us bucket
    assert_eq!(cyclictest_p99(&out(90, 9, 1)), Some(200));
    // no overflow line: the bins alone (99 of 99 reached at 200 us, 90 < 98.01 at 100)
    assert_eq!(cyclictest_p99("000100 000090\n000200 000009\n"), Some(200));
    assert_eq!(cyclictest_p99("# Histogram Overflows: 00000\n"), None);
}

/// The bar of [`vm_probe_tracer_names_the_injected_sources`] for one
/// injected source named for `hits` of the 10 largest gaps (`named`;
/// `None`: a gap the kernel saw no event in): at least `least` of the 10.
/// The others may be gaps with no event (the vCPU not running) or with
/// another source's event that such a stall lengthened (boot R3 of
/// BENCHMARKS.md "In the VM guest": ktimers/2, 37 ms of a 58 ms gap).
fn named_for_at_least(
    what: &str,
    hits: usize,
    least: usize,
    named: &[Option<(String, u64, String)>],
) {
    assert_eq!(named.len(), 10, "{named:?}");
    assert!(
        hits >= least,
        "{what} named for {hits} of the 10 largest gaps (at least {least}): {named:?}"
    );
}

/// Issue 36: `--probe-tracer` on Debian 13's PREEMPT_RT kernel (the
/// flavour built with CONFIG_OSNOISE_TRACER), isolated CPU 2 of the basic
/// topology, booted under single-threaded TCG (`#@ accel
/// tcg,thread=single`: under multi-threaded TCG this kernel's boot-time
/// text patching oopsed, "int3" in ttwu_do_activate, twice in CI), two
/// injected sources in turn under a 3 s spin probe: a pinned SCHED_FIFO 1
/// hog (noise_hog, 20 ms every 40 ms), then the second serial port's IRQ 3
/// moved to CPU 2 and fed from the host at a set rate (`#@ serial-feed 512
/// 40`: 512 bytes, then 40 ms with none after the guest took them;
/// vm/serial-feed.c), ttyS1 held open by a sleep on CPU 0 that reads
/// nothing. Of the 10 largest gaps, at least 9 are named for the injected source (the hog by its pid;
/// IRQ 3 (ttyS1) or its IRQ thread, irq/3-ttyS1, as PREEMPT_RT threads
/// device interrupts); the one allowed other is the vCPU not running (one
/// host thread runs the 8 vCPUs in turn, beside the host's other work),
/// which no tracer in the guest sees, alone or inside another source's
/// event (BENCHMARKS.md, "In the VM guest": the counts per boot). After
/// each, the host is as it was: osnoise/options as before, no instance
/// left, current_tracer nop, IRQ 3's affinity back. Then rt-tests from the
/// archive on the same idle CPU and on housekeeping CPU 1: oslat's and
/// cyclictest's worst against the probe's, printed (ratios, no assertion
/// on time).
#[test]
#[ignore = "boots QEMU: run by .ci/run with --ignored (README: VM tests)"]
fn vm_probe_tracer_names_the_injected_sources() {
    let g = boot("probe-osnoise");
    assert!(
        g.ok("tracers").split_whitespace().any(|t| t == "osnoise"),
        "{}",
        g.describe("tracers")
    );
    let before = g.ok("options-before").to_string();
    let hog: u64 = g.ok("hog-pid").trim().parse().unwrap();
    let v = g.json("traced-hog");
    let named = traced_named(&v, 2);
    eprintln!("vm_probe_tracer: hog {hog}: {named:?}");
    assert_eq!(named.len(), 10, "{v}");
    let hits = named
        .iter()
        .filter(|n| matches!(n, Some((k, id, name)) if k == "thread" && *id == hog && name == "noise_hog"))
        .count();
    named_for_at_least("the hog", hits, 9, &named);
    for after in ["options-after-hog", "options-after-irq"] {
        assert_eq!(g.ok(after), before, "{}", g.describe(after));
    }
    for n in ["instances-after-hog", "instances-after-irq"] {
        assert_eq!(g.ok(n).trim(), "", "{}", g.describe(n));
    }
    assert_eq!(g.ok("current-after-hog").trim(), "nop");

    let v = g.json("traced-irq");
    let threads: Vec<u64> = g
        .ok("irq3-threads")
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    let named = traced_named(&v, 2);
    eprintln!(
        "vm_probe_tracer: IRQ 3 (threads {threads:?}; {}): {named:?}",
        g.ok("irq3-counts").trim()
    );
    let irq3 = |n: &&&Option<(String, u64, String)>| match n {
        Some((k, id, _)) if k == "irq" => *id == 3,
        Some((k, id, name)) if k == "thread" => threads.contains(id) && name.starts_with("irq/3-"),
        _ => false,
    };
    let hits = named.iter().filter(|n| irq3(&n)).count();
    named_for_at_least("IRQ 3", hits, 9, &named);
    assert_eq!(g.ok("irq3-after"), g.ok("irq3-before"));

    // rt-tests beside the probe on idle CPU 2 and housekeeping CPU 1:
    // printed for BENCHMARKS.md.
    for (cpu, what) in [(2, "idle isolated"), (1, "housekeeping")] {
        let oslat = rt_tests_value(g.ok(&format!("oslat-{cpu}")), "Maximum:");
        let spin = g.json(&format!("spin-{cpu}"))["probe"]["cpus"][0]["max_ns"].as_f64();
        let ct = g.ok(&format!("cyclictest-{cpu}"));
        let (ct_max, ct_p99) = (rt_tests_value(ct, "# Max Latencies:"), cyclictest_p99(ct));
        let w = &g.json(&format!("wakeup-{cpu}"))["probe"]["cpus"][0];
        let (w_max, w_p99) = (w["max_ns"].as_f64(), w["p99_ns"].as_f64());
        eprintln!(
            "vm_probe_tracer: {what} CPU {cpu}, 3 s each: worst gap pinrun {:?} us / oslat {oslat:?} us = {:?}; wake-up max pinrun {:?} us / cyclictest {ct_max:?} us = {:?}; p99 pinrun {:?} us / cyclictest {ct_p99:?} us = {:?}",
            spin.map(|n| n / 1e3),
            spin.zip(oslat).map(|(a, b)| a / 1e3 / b),
            w_max.map(|n| n / 1e3),
            w_max.zip(ct_max).map(|(a, b)| a / 1e3 / b),
            w_p99.map(|n| n / 1e3),
            w_p99.zip(ct_p99).map(|(a, b)| a / 1e3 / b as f64),
        );
    }
}
