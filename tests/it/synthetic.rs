//! The planner on synthetic machines the tests build as sysroot trees:
//! sibling schemes (N, N+k) and (2k, 2k+1), offline CPUs, sparse, CPU-less
//! and memoryless nodes, a cgroup-restricted allowed set, and more than 1024
//! CPUs. Expected values follow from how each tree is built.

use crate::common;
use common::{ids, pinrun};
use serde_json::Value;
use std::path::Path;

/// A machine description: for each online CPU (core id, package, node);
/// SMT siblings are the CPUs sharing (package, core).
struct Machine {
    cpus: Vec<(u32, u32, u32, u32)>, // (cpu, core, package, node)
    offline: Vec<u32>,
    memless: Vec<u32>,
    cpuless_nodes: Vec<u32>,
    cgroup_cpus: Option<String>,
}

use common::write_file as write;

fn list(v: &[u32]) -> String {
    let s: pinrun::cpuset::CpuSet = v.iter().copied().collect();
    s.to_list()
}

impl Machine {
    fn new(cpus: Vec<(u32, u32, u32, u32)>) -> Self {
        Machine {
            cpus,
            offline: vec![],
            memless: vec![],
            cpuless_nodes: vec![],
            cgroup_cpus: None,
        }
    }

    /// `sockets` × `cores` × `threads`, one node per socket; thread t of
    /// core c numbered by `number(socket, core, thread)`.
    fn smt(sockets: u32, cores: u32, threads: u32, number: impl Fn(u32, u32, u32) -> u32) -> Self {
        let mut v = vec![];
        for s in 0..sockets {
            for c in 0..cores {
                for t in 0..threads {
                    v.push((number(s, c, t), c, s, s));
                }
            }
        }
        v.sort();
        Self::new(v)
    }

    fn build(&self) -> tempfile::TempDir {
        let dir = common::tempdir();
        let r = dir.path();
        let cpu = "sys/devices/system/cpu";
        let online: Vec<u32> = self.cpus.iter().map(|c| c.0).collect();
        let mut all = online.clone();
        all.extend(&self.offline);
        all.sort();
        write(r, &format!("{cpu}/online"), &format!("{}\n", list(&online)));
        write(
            r,
            &format!("{cpu}/possible"),
            &format!("0-{}\n", all.last().unwrap()),
        );
        write(r, &format!("{cpu}/present"), &format!("{}\n", list(&all)));
        for &(id, core, pkg, _) in &self.cpus {
            let sibs: Vec<u32> = self
                .cpus
                .iter()
                .filter(|c| c.1 == core && c.2 == pkg)
                .map(|c| c.0)
                .collect();
            let t = format!("{cpu}/cpu{id}/topology");
            write(r, &format!("{t}/core_id"), &format!("{core}\n"));
            write(r, &format!("{t}/physical_package_id"), &format!("{pkg}\n"));
            write(
                r,
                &format!("{t}/core_cpus_list"),
                &format!("{}\n", list(&sibs)),
            );
        }
        for &id in &self.offline {
            write(r, &format!("{cpu}/cpu{id}/online"), "0\n");
        }
        let mut nodes: Vec<u32> = self.cpus.iter().map(|c| c.3).collect();
        nodes.extend(&self.cpuless_nodes);
        nodes.sort();
        nodes.dedup();
        let node = "sys/devices/system/node";
        write(r, &format!("{node}/online"), &format!("{}\n", list(&nodes)));
        let mem: Vec<u32> = nodes
            .iter()
            .copied()
            .filter(|n| !self.memless.contains(n))
            .collect();
        write(
            r,
            &format!("{node}/has_memory"),
            &format!("{}\n", list(&mem)),
        );
        for &n in &nodes {
            let cpus: Vec<u32> = self.cpus.iter().filter(|c| c.3 == n).map(|c| c.0).collect();
            write(
                r,
                &format!("{node}/node{n}/cpulist"),
                &format!("{}\n", list(&cpus)),
            );
            let d: Vec<String> = nodes
                .iter()
                .map(|m| {
                    if *m == n {
                        "10".into()
                    } else {
                        (20 + m.abs_diff(n)).to_string()
                    }
                })
                .collect();
            write(
                r,
                &format!("{node}/node{n}/distance"),
                &format!("{}\n", d.join(" ")),
            );
        }
        if let Some(cg) = &self.cgroup_cpus {
            write(r, "proc/self/cgroup", "0::/job\n");
            write(
                r,
                "proc/self/mountinfo",
                "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            );
            write(
                r,
                "sys/fs/cgroup/job/cpuset.cpus.effective",
                &format!("{cg}\n"),
            );
        }
        dir
    }
}

fn dry(root: &Path, args: &[&str]) -> Value {
    let out = pinrun()
        .arg("--sysroot")
        .arg(root)
        .arg("--dry-run")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn refuse(root: &Path, args: &[&str]) -> String {
    let out = pinrun()
        .arg("--sysroot")
        .arg(root)
        .arg("--dry-run")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

/// Siblings (N, N+k): 2 sockets × 4 cores × 2 threads, cpu = s*4 + c + t*8.
#[test]
fn siblings_split_n_n_plus_k() {
    let m = Machine::smt(2, 4, 2, |s, c, t| s * 4 + c + t * 8).build();
    let v = dry(m.path(), &["--cores", "2"]);
    assert_eq!(ids(&v["cpus"]), vec![0, 1]);
    assert_eq!(ids(&v["cores"][0]["cpus"]), vec![0, 8]);
    let v = dry(m.path(), &["--cores", "2", "--smt"]);
    assert_eq!(ids(&v["cpus"]), vec![0, 1, 8, 9]);
    let v = dry(m.path(), &["--node", "1", "--cores", "2", "--smt"]);
    assert_eq!(ids(&v["cpus"]), vec![4, 5, 12, 13]);
    // Inside a list: whole cores only (3 and 11 are siblings; 2's sibling 10 is outside).
    let v = dry(m.path(), &["--cpus", "2-3,11", "--cores", "1", "--smt"]);
    assert_eq!(ids(&v["cpus"]), vec![3, 11]);
}

/// Siblings (2k, 2k+1).
#[test]
fn siblings_adjacent() {
    let m = Machine::smt(2, 4, 2, |s, c, t| (s * 4 + c) * 2 + t).build();
    let v = dry(m.path(), &["--cores", "3"]);
    assert_eq!(ids(&v["cpus"]), vec![0, 2, 4]);
    let v = dry(m.path(), &["--cpus", "0-5", "--cores", "2", "--smt"]);
    assert_eq!(ids(&v["cpus"]), vec![0, 1, 2, 3]);
    // Two SMT siblings requested together draw a warning.
    let v = dry(m.path(), &["--cpus", "0,1"]);
    assert_eq!(v["findings"][0]["code"], "smt-siblings-shared");
    assert_eq!(ids(&v["findings"][0]["cpus"]), vec![0, 1]);
}

/// Compactness: 3 cores fit on node 1 only when node 0 is partly outside the
/// cgroup; they are not spread over both nodes.
#[test]
fn compact_choice_prefers_one_node() {
    let mut m = Machine::smt(2, 4, 1, |s, c, _| s * 4 + c);
    m.cgroup_cpus = Some("0-1,4-7".into());
    let t = m.build();
    let v = dry(t.path(), &["--cores", "3"]);
    assert_eq!(ids(&v["cpus"]), vec![4, 5, 6]);
    let v = dry(t.path(), &["--cores", "2"]);
    assert_eq!(ids(&v["cpus"]), vec![0, 1]);
    let v = dry(t.path(), &["--cores", "5"]);
    assert_eq!(ids(&v["cpus"]), vec![0, 1, 4, 5, 6]);
    let e = refuse(t.path(), &["--cpus", "2"]);
    assert!(e.contains("CPU 2 is outside the cpuset of cgroup /job: /sys/fs/cgroup/job/cpuset.cpus.effective = 0-1,4-7"), "{e}");
}

/// Offline CPUs are refused by name and never chosen.
#[test]
fn offline_cpus() {
    let mut m = Machine::smt(1, 4, 1, |_, c, _| c + 1);
    m.offline = vec![0];
    let t = m.build();
    let v = dry(t.path(), &["--cores", "1"]);
    assert_eq!(ids(&v["cpus"]), vec![1]);
    let e = refuse(t.path(), &["--cpus", "0-1"]);
    assert!(
        e.starts_with("pinrun: --cpus: CPU 0 is offline (online: 1-4)"),
        "{e}"
    );
}

/// Sparse node ids (0 and 8), a CPU-less node 9 and a memoryless node 8.
#[test]
fn sparse_cpuless_memoryless_nodes() {
    let mut m = Machine::new(vec![(0, 0, 0, 0), (1, 1, 0, 0), (2, 0, 1, 8), (3, 1, 1, 8)]);
    m.cpuless_nodes = vec![9];
    m.memless = vec![8];
    let t = m.build();
    let v = dry(t.path(), &["--node", "8", "--cores", "2"]);
    assert_eq!(ids(&v["cpus"]), vec![2, 3]);
    let e = refuse(t.path(), &["--node", "8", "--cores", "1", "--membind"]);
    assert!(e.contains("--membind: node 8 has no memory"), "{e}");
    // distances from node 8: node 0 = 28, node 9 = 21: the nearest memory is node 9.
    assert!(
        e.contains("hint: the nearest node with memory is node 9"),
        "{e}"
    );
    let e = refuse(t.path(), &["--node", "9", "--cores", "1"]);
    assert!(e.contains("node 9 has no CPUs"), "{e}");
    let v = dry(t.path(), &["--node", "0", "--cores", "1", "--membind=9"]);
    assert_eq!(ids(&v["memory"]["nodes"]), vec![9]);
    let e = refuse(t.path(), &["--node", "1"]);
    assert!(
        e.contains("node 1 not found: this machine's nodes are 0,8-9"),
        "{e}"
    );
}

/// 1100 CPUs (beyond a fixed 1024-bit cpu_set_t): the highest ones are chosen
/// and printed exactly.
#[test]
fn more_than_1024_cpus() {
    let m = Machine::smt(2, 550, 1, |s, c, _| s * 550 + c).build();
    let v = dry(m.path(), &["--cpus", "1023-1025,1099"]);
    assert_eq!(v["cpulist"], "1023-1025,1099");
    let v = dry(m.path(), &["--node", "1", "--cores", "550"]);
    assert_eq!(v["cpulist"], "550-1099");
    let v = dry(
        m.path(),
        &[
            "--cpus",
            "0x8000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        ],
    );
    assert_eq!(v["cpulist"], "1071");
}

/// Sub-NUMA clustering: 2 packages × 2 nodes × 2 cores. With CPU 3 outside
/// the cgroup no node holds 4 cores and package 0 holds only 3, so 4 cores
/// come from package 1 alone rather than spreading over both packages.
#[test]
fn compact_choice_prefers_one_package_when_no_node_fits() {
    let cpus = (0..8).map(|c| (c, c % 4, c / 4, c / 2)).collect();
    let mut m = Machine::new(cpus);
    m.cgroup_cpus = Some("0-2,4-7".into());
    let t = m.build();
    let v = dry(t.path(), &["--cores", "4"]);
    assert_eq!(ids(&v["cpus"]), vec![4, 5, 6, 7]);
    let v = dry(t.path(), &["--cores", "5"]);
    assert_eq!(ids(&v["cpus"]), vec![0, 1, 2, 4, 5]);
}

/// `plan::cores_of` on siblings (N, N+k) beyond 1024 CPUs: each core that
/// touches the CPUs appears once with all its threads (also those outside
/// the CPUs), in the order of its lowest CPU among them, and agrees with a
/// naive scan over every core.
#[test]
fn cores_of_each_core_once() {
    use pinrun::cpuset::CpuSet;
    let m = Machine::smt(2, 300, 2, |s, c, t| s * 300 + c + t * 600).build();
    let sys = pinrun::system::SystemState::read(&pinrun::system::Root::new(m.path()));
    let set = |s: &str| CpuSet::parse(s).unwrap();
    // 601 is 1's sibling; 5's sibling 605 is outside the CPUs.
    let got = pinrun::plan::cores_of(&sys, &set("601,1,5,1199"));
    assert_eq!(got, vec![set("1,601"), set("5,605"), set("599,1199")]);
    let cpus = set("0-99,550-650,1000-1199:3");
    let got = pinrun::plan::cores_of(&sys, &cpus);
    let mut naive: Vec<CpuSet> = Vec::new();
    for id in cpus.iter() {
        let core = sys.core_of(id);
        if !naive.contains(&core) {
            naive.push(core);
        }
    }
    assert_eq!(got, naive);
    let threads: usize = got.iter().map(CpuSet::len).sum();
    let union = got.iter().fold(CpuSet::new(), |a, c| a.union(c));
    assert_eq!(threads, union.len(), "a CPU in two cores");
    assert!(cpus.is_subset(&union));
}

/// Issue 35: `nohz=off` keeps every CPU's tick (`setup_tick_nohz()`, then
/// `tick_nohz_activate()` never lets it stop, kernel/time/tick-sched.c)
/// while `cpu/nohz_full` still lists the CPUs, and the quietest rule must
/// read it as the `not-nohz-full` check does. 4 CPUs, nohz_full 2-3,
/// RCU offloaded on 1-3, `irqaffinity=0,2` (CPU 2 named for
/// housekeeping, as CPU 1 is for being outside nohz_full), a device IRQ
/// routed to CPU 2: with the tick stopping, CPU 2's tick decides before
/// the IRQ and `--cores 2 --fifo 1` takes 2-3; under `nohz=off` CPU 2 is
/// no quieter for its tick, the IRQ decides, and CPU 1 is taken. CPU 3
/// (nothing names it for housekeeping) is first either way.
#[test]
fn nohz_off_ranks_no_cpu_as_tickless() {
    let m = Machine::smt(1, 4, 1, |_, c, _| c).build();
    let r = m.path();
    write(r, "sys/devices/system/cpu/isolated", "\n");
    write(r, "sys/devices/system/cpu/nohz_full", "2-3\n");
    write(
        r,
        "proc/interrupts",
        "           CPU0       CPU1       CPU2       CPU3\n 30:          0          0        500          0   PCI-MSI 1-edge      dev30\n",
    );
    write(r, "proc/irq/30/effective_affinity_list", "2\n");
    let base = "nohz_full=2-3 rcu_nocbs=1-3 irqaffinity=0,2";
    let chosen = |cmdline: &str| {
        write(r, "proc/cmdline", &format!("{cmdline}\n"));
        let v = dry(r, &["--cores", "2", "--fifo", "1"]);
        (ids(&v["cpus"]), v["reasons"].to_string())
    };
    let (on, _) = chosen(base);
    assert_eq!(on, vec![2, 3]);
    let (off, reasons) = chosen(&format!("{base} nohz=off"));
    assert_eq!(off, vec![1, 3]);
    assert!(reasons.contains("its tick kept: nohz=off"), "{reasons}");
}
