//! Findings on synthetic trees (one that fires, one that must not), on the
//! nto dumps with isolation on the kernel command line, and live.

use crate::common;
use common::{assert_status, at, ids, is_root, machine, pinrun};
use serde_json::Value;
use std::path::Path;

/// A 4-CPU, 2-core (siblings 0+2, 1+3), 1-node machine plus `extra` files.
fn tree(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = common::tempdir();
    let mut files: Vec<(String, String)> = vec![
        ("sys/devices/system/cpu/online".into(), "0-3\n".into()),
        ("sys/devices/system/cpu/possible".into(), "0-3\n".into()),
        ("sys/devices/system/cpu/isolated".into(), "\n".into()),
        (
            "sys/devices/system/cpu/nohz_full".into(),
            "  (null)\n".into(),
        ),
        (
            "sys/devices/system/node/node0/cpulist".into(),
            "0-3\n".into(),
        ),
        (
            "sys/devices/system/node/node0/distance".into(),
            "10\n".into(),
        ),
        (
            "sys/devices/system/node/node0/meminfo".into(),
            "Node 0 MemTotal: 8388608 kB\nNode 0 MemFree: 4194304 kB\n".into(),
        ),
        ("proc/cmdline".into(), "ro quiet\n".into()),
        (
            "proc/interrupts".into(),
            "           CPU0       CPU1       CPU2       CPU3\n".into(),
        ),
    ];
    for c in 0..4 {
        let t = format!("sys/devices/system/cpu/cpu{c}/topology");
        files.push((
            format!("{t}/core_cpus_list"),
            if c % 2 == 0 { "0,2\n" } else { "1,3\n" }.into(),
        ));
        files.push((format!("{t}/core_id"), format!("{}\n", c % 2)));
        files.push((format!("{t}/physical_package_id"), "0\n".into()));
    }
    common::write_tree(dir.path(), files, extra);
    dir
}

fn findings(root: &Path, args: &[&str]) -> Vec<Value> {
    let out = pinrun()
        .arg("--sysroot")
        .arg(root)
        .args(["--check", "--json"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    v["findings"].as_array().unwrap().clone()
}

fn codes(f: &[Value]) -> Vec<String> {
    f.iter()
        .map(|x| x["code"].as_str().unwrap().to_string())
        .collect()
}

fn with<'a>(f: &'a [Value], code: &str) -> Vec<&'a Value> {
    f.iter().filter(|x| x["code"] == code).collect()
}

#[test]
fn isolation_findings_fire_and_stay_quiet() {
    let plain = tree(&[]);
    let f = findings(plain.path(), &["--cpus", "1"]);
    assert_eq!(ids(&with(&f, "not-isolated")[0]["cpus"]), vec![1]);
    assert_eq!(with(&f, "not-nohz-full").len(), 1);
    assert_eq!(with(&f, "not-rcu-nocbs").len(), 1);

    let iso = tree(&[
        ("sys/devices/system/cpu/isolated", "1,3\n"),
        ("sys/devices/system/cpu/nohz_full", "1,3\n"),
        ("proc/cmdline", "isolcpus=1,3 nohz_full=1,3\n"),
    ]);
    let f = findings(iso.path(), &["--cpus", "1"]);
    for quiet in [
        "not-isolated",
        "not-nohz-full",
        "not-rcu-nocbs",
        "sibling-not-isolated",
        "isolated-no-balancing",
        "isolation-not-applied",
    ] {
        assert!(with(&f, quiet).is_empty(), "{quiet} fired: {f:?}");
    }
    // Both isolated CPUs in one mask: no load balancing between them.
    let f = findings(iso.path(), &["--cpus", "1,3"]);
    assert_eq!(
        ids(&with(&f, "isolated-no-balancing")[0]["cpus"]),
        vec![1, 3]
    );

    // CPU 1 isolated, its sibling 3 not.
    let half = tree(&[
        ("sys/devices/system/cpu/isolated", "1\n"),
        ("proc/cmdline", "isolcpus=1,3\n"),
    ]);
    let f = findings(half.path(), &["--cpus", "1"]);
    assert_eq!(ids(&with(&f, "sibling-not-isolated")[0]["cpus"]), vec![3]);
    // The command line asked for 3 too; sysfs says no.
    assert_eq!(ids(&with(&f, "isolation-not-applied")[0]["cpus"]), vec![3]);

    let bad = tree(&[("proc/cmdline", "isolcpus=bogus,1\n")]);
    assert_eq!(
        with(
            &findings(bad.path(), &["--cpus", "1"]),
            "isolcpus-unknown-flag"
        )
        .len(),
        1
    );
}

/// [`tree`] with device IRQs 24 (effective affinity CPU 1), 25 (CPU 0),
/// 26 (mask f, never fired) and the per-CPU LOC row.
fn irq_tree() -> tempfile::TempDir {
    tree(&[
        (
            "proc/interrupts",
            "           CPU0       CPU1       CPU2       CPU3\n 24:  1  2  3  4   PCI-MSI 1-edge   eth0-rx-0\n 25:  5  0  0  0   PCI-MSI 2-edge   eth0-rx-1\n 26:  0  0  0  0   PCI-MSI 3-edge   nvme0q1\nLOC:  9  9  9  9   Local timer interrupts\n",
        ),
        ("proc/irq/24/effective_affinity_list", "1\n"),
        ("proc/irq/24/smp_affinity_list", "0-3\n"),
        ("proc/irq/25/smp_affinity_list", "0\n"),
        ("proc/irq/26/smp_affinity", "f\n"),
        ("proc/irq/default_smp_affinity", "1\n"),
    ])
}

#[test]
fn irq_findings_use_effective_affinity_and_skip_per_cpu_rows() {
    let t = irq_tree();
    let f = findings(t.path(), &["--cpus", "1"]);
    let irqs: Vec<u32> = with(&f, "irq-on-cpu")
        .iter()
        .flat_map(|x| ids(&x["irqs"]))
        .collect();
    // 24 by its effective affinity, 26 by its smp_affinity mask; 25 is on CPU 0; LOC never.
    assert_eq!(irqs, vec![24, 26]);
    assert!(
        with(&f, "irq-on-cpu")[0]["message"]
            .as_str()
            .unwrap()
            .contains("eth0-rx-0")
    );
    assert!(with(&f, "default-irq-affinity").is_empty());
    let f = findings(t.path(), &["--cpus", "0"]);
    let irqs: Vec<u32> = with(&f, "irq-on-cpu")
        .iter()
        .flat_map(|x| ids(&x["irqs"]))
        .collect();
    assert_eq!(irqs, vec![25, 26]);
    assert_eq!(with(&f, "default-irq-affinity").len(), 1);
}

/// The default-irq-affinity hint names `irqaffinity=` only where it can
/// work: irq_affinity_setup() (kernel/irq/irqdesc.c) adds the boot CPU to
/// any `irqaffinity=` list, so for a hit on the boot CPU (CPU 0 here) the
/// hint is the runtime write alone; for other CPUs, both.
#[test]
fn the_default_irq_affinity_hint_never_offers_irqaffinity_for_the_boot_cpu() {
    let hint = |default: &str, cpus: &str| {
        let t = tree(&[
            (
                "proc/interrupts",
                "           CPU0       CPU1       CPU2       CPU3
LOC:  9  9  9  9   Local timer interrupts
",
            ),
            ("proc/irq/default_smp_affinity", default),
        ]);
        let f = findings(t.path(), &["--cpus", cpus]);
        let d = with(&f, "default-irq-affinity");
        assert_eq!(d.len(), 1, "{f:?}");
        d[0]["hint"].as_str().unwrap().to_string()
    };
    let boot = hint("f\n", "0");
    assert!(!boot.contains("boot with irqaffinity"), "{boot}");
    assert!(
        boot.contains("irqaffinity= cannot leave out CPU 0, the boot CPU"),
        "{boot}"
    );
    assert!(
        boot.contains("/proc/irq/default_smp_affinity (0000000e)"),
        "{boot}"
    );
    let other = hint("f\n", "2");
    assert!(other.contains("or boot with irqaffinity=0-1,3"), "{other}");
}

#[test]
fn rt_and_memory_findings() {
    let t = tree(&[
        ("proc/sys/kernel/sched_rt_runtime_us", "950000\n"),
        ("proc/sys/kernel/sched_rt_period_us", "1000000\n"),
        ("proc/sys/kernel/numa_balancing", "1\n"),
    ]);
    let f = findings(t.path(), &["--cpus", "1", "--fifo", "99", "--membind=0"]);
    let c = codes(&f);
    assert!(c.contains(&"rt-throttling".to_string()), "{c:?}");
    assert!(
        with(&f, "rt-throttling")[0]["message"]
            .as_str()
            .unwrap()
            .contains("stalled for 50000 us of every 1000000 us")
    );
    assert!(c.contains(&"rt-priority-99".to_string()));
    assert!(c.contains(&"numa-balancing".to_string()));
    assert!(!c.contains(&"bind-low-memory".to_string()));
    let f = findings(t.path(), &["--cpus", "1", "--fifo", "50"]);
    assert!(!codes(&f).contains(&"rt-priority-99".to_string()));
    let unthrottled = tree(&[
        ("proc/sys/kernel/sched_rt_runtime_us", "-1\n"),
        ("proc/sys/kernel/sched_rt_period_us", "1000000\n"),
    ]);
    assert!(
        !codes(&findings(
            unthrottled.path(),
            &["--cpus", "1", "--fifo", "50"]
        ))
        .contains(&"rt-throttling".to_string())
    );

    // Node 0 nearly full while a memory-only node 1 has memory: a strict
    // bind to node 0 gets the OOM killer while node 1 has room.
    let node0_low = (
        "sys/devices/system/node/node0/meminfo",
        "Node 0 MemTotal: 8388608 kB\nNode 0 MemFree: 102400 kB\n",
    );
    let node1 = [
        ("sys/devices/system/node/node1/cpulist", "\n"),
        ("sys/devices/system/node/node0/distance", "10 20\n"),
        ("sys/devices/system/node/node1/distance", "20 10\n"),
        (
            "sys/devices/system/node/node1/meminfo",
            "Node 1 MemTotal: 8388608 kB\nNode 1 MemFree: 4194304 kB\n",
        ),
    ];
    let mut files = vec![node0_low];
    files.extend_from_slice(&node1);
    let low = tree(&files);
    let f = findings(low.path(), &["--cpus", "1", "--membind=0"]);
    assert_eq!(
        with(&f, "bind-low-memory")[0]["message"].as_str().unwrap(),
        "strict bind to node 0 with 100 MiB free or reclaimable: allocations beyond that invoke the OOM killer even while node 1 has memory"
    );
    // The page cache and reclaimable slab of node0/meminfo are reclaimed
    // before the OOM killer runs (si_mem_available()): 100 MiB free and
    // 2 GiB of them is no hazard.
    let cached = (
        "sys/devices/system/node/node0/meminfo",
        "Node 0 MemTotal: 8388608 kB\nNode 0 MemFree: 102400 kB\nNode 0 Active(file): 1048576 kB\nNode 0 Inactive(file): 1048576 kB\nNode 0 SReclaimable: 4096 kB\n",
    );
    let mut files = vec![cached];
    files.extend_from_slice(&node1);
    let f = findings(tree(&files).path(), &["--cpus", "1", "--membind=0"]);
    assert!(with(&f, "bind-low-memory").is_empty());
    // One node with memory: the bind restricts nothing, no finding.
    let f = findings(tree(&[node0_low]).path(), &["--cpus", "1", "--membind=0"]);
    assert!(with(&f, "bind-low-memory").is_empty());

    // Issue 35 class 3: kernel.numa_balancing = 2 is memory tiering
    // alone, which skips the pages of top-tier nodes (change_pte_range(),
    // mm/mprotect.c), and node 0 has CPUs (always top tier,
    // establish_demotion_targets()); 0 is off; 3 includes normal balancing.
    for (mode, bind, want) in [
        ("2\n", "--membind=0", None),
        ("0\n", "--membind=0", None),
        (
            "3\n",
            "--membind=0",
            Some(
                "kernel.numa_balancing is on: it still scans the bound process's memory (page faults) though it cannot move pages off the bound nodes",
            ),
        ),
        (
            "2\n",
            "--membind=0,1",
            Some(
                "kernel.numa_balancing = 2 (memory tiering): it scans the bound memory on node 1, which has no CPUs and may be below the top memory tier (page faults), though it cannot move pages off the bound nodes",
            ),
        ),
    ] {
        let mut files = vec![("proc/sys/kernel/numa_balancing", mode)];
        files.extend_from_slice(&node1);
        let f = findings(tree(&files).path(), &["--cpus", "1", bind]);
        let got: Vec<&str> = with(&f, "numa-balancing")
            .iter()
            .map(|x| x["message"].as_str().unwrap())
            .collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "{mode:?} {bind}");
    }
}

/// Remote memory on a two-node dump (nto/bare-metal-worker1: node
/// distances from its node*/distance files).
#[test]
fn remote_memory_on_a_real_dump() {
    let m = machine("nto/bare-metal-worker1.internal");
    let out = at(
        &m,
        &[
            "--check",
            "--json",
            "--node",
            "1",
            "--cores",
            "1",
            "--membind=0",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap();
    let remote = with(f, "memory-remote");
    assert_eq!(remote.len(), 1, "{f:?}");
    let d = std::fs::read_to_string(m.join("sys/devices/system/node/node1/distance")).unwrap();
    let dist: Vec<&str> = d.split_whitespace().collect();
    assert!(
        remote[0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("distance {}, local {}", dist[0], dist[1])),
        "{remote:?}"
    );
}

/// nto/bare-metal-worker1: isolcpus=managed_irq,0-4,11-79 nohz_full=0-4,11-79
/// rcu_nocbs=0-4,11-79 and no isolated/nohz_full files in the dump. For CPU
/// 11 the command line stops the tick and offloads RCU callbacks, but without
/// the `domain` flag does not isolate it from the scheduler.
#[test]
fn nto_worker_cmdline_isolation() {
    let m = machine("nto/bare-metal-worker1.internal");
    let out = at(&m, &["--check", "--json", "--cpus", "11"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap();
    let c = codes(f);
    assert!(!c.contains(&"not-nohz-full".to_string()));
    assert!(!c.contains(&"not-rcu-nocbs".to_string()));
    let msg = with(f, "not-isolated")[0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.contains("without the `domain` flag") && msg.contains("managed IRQs"),
        "{msg}"
    );
    // Exactly the IRQs whose effective_affinity_list names CPU 11.
    let mut want = vec![];
    for e in std::fs::read_dir(m.join("proc/irq")).unwrap().flatten() {
        let Ok(n) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(t) = std::fs::read_to_string(e.path().join("effective_affinity_list")) else {
            continue;
        };
        let set = pinrun::cpuset::CpuSet::parse_sysfs_list(&t, None).unwrap();
        let listed = std::fs::read_to_string(m.join("proc/interrupts"))
            .unwrap()
            .lines()
            .any(|l| l.trim_start().starts_with(&format!("{n}:")));
        if set.contains(11) && listed {
            want.push(n);
        }
    }
    want.sort();
    let mut got: Vec<u32> = with(f, "irq-on-cpu")
        .iter()
        .flat_map(|x| ids(&x["irqs"]))
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert!(!want.is_empty());
}

/// Live: `--check --cpus 1` lists exactly the device IRQs whose
/// effective_affinity_list (read here from /proc/irq) includes CPU 1.
#[test]
fn live_check_lists_irqs_by_effective_affinity() {
    let online = pinrun::cpuset::CpuSet::parse_sysfs_list(
        &std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap(),
        None,
    )
    .unwrap();
    let cpu = online.last().unwrap();
    let interrupts = std::fs::read_to_string("/proc/interrupts").unwrap();
    let mut want = vec![];
    for line in interrupts.lines().skip(1) {
        let Some((id, _)) = line.split_once(':') else {
            continue;
        };
        let Ok(n) = id.trim().parse::<u32>() else {
            continue;
        };
        let dir = format!("/proc/irq/{n}");
        let text = std::fs::read_to_string(format!("{dir}/effective_affinity_list"))
            .or_else(|_| std::fs::read_to_string(format!("{dir}/smp_affinity_list")));
        let Ok(text) = text else { continue };
        let set = pinrun::cpuset::CpuSet::parse_sysfs_list(&text, None)
            .unwrap()
            .intersection(&online);
        if set.contains(cpu) {
            want.push(n);
        }
    }
    let out = pinrun()
        .args(["--check", "--json", "--cpus", &cpu.to_string()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap();
    let mut got: Vec<u32> = f
        .iter()
        .filter(|x| x["code"] == "irq-on-cpu" || x["code"] == "managed-irq-on-cpu")
        .flat_map(|x| ids(&x["irqs"]))
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    // Every finding has a hint.
    assert!(f.iter().all(|x| !x["hint"].as_str().unwrap().is_empty()));
}

/// --strict turns a warning into exit 125 with nothing run.
#[test]
fn strict_refuses_on_warnings() {
    let dir = common::tempdir();
    let marker = dir.path().join("ran");
    let out = pinrun()
        .args(["--strict", "--not-an-option"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let out = pinrun()
        .args([
            "--strict", "--cpus", "0", "--batch", "--nice", "1", "--rr", "99",
        ])
        .arg("--")
        .arg("touch")
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let out = pinrun()
        .env("OMP_PROC_BIND", "true")
        .args(["--strict", "--cpus", "0", "--"])
        .arg("touch")
        .arg(&marker)
        .output()
        .unwrap();
    assert_status(&out, 125);
    assert!(String::from_utf8_lossy(&out.stderr).contains("env-thread-binding"));
    assert!(!marker.exists());
}

/// RT group scheduling: a v1 `cpu` cgroup with cpu.rt_runtime_us = 0 makes
/// the kernel refuse SCHED_FIFO with EPERM; pinrun refuses first, naming it.
#[test]
fn rt_group_without_runtime_is_refused_before_any_change() {
    let t = tree(&[
        ("proc/self/cgroup", "4:cpu,cpuacct:/batch\n"),
        (
            "proc/self/mountinfo",
            "35 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
        ),
        ("sys/fs/cgroup/cpu,cpuacct/batch/cpu.rt_runtime_us", "0\n"),
    ]);
    let out = at(t.path(), &["--dry-run", "--cpus", "1", "--fifo", "10"]);
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cgroup /batch no real-time runtime (cpu.rt_runtime_us = 0)"),
        "{err}"
    );
    let ok = tree(&[
        ("proc/self/cgroup", "4:cpu,cpuacct:/batch\n"),
        (
            "proc/self/mountinfo",
            "35 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
        ),
        (
            "sys/fs/cgroup/cpu,cpuacct/batch/cpu.rt_runtime_us",
            "100000\n",
        ),
    ]);
    pinrun()
        .arg("--sysroot")
        .arg(ok.path())
        .args(["--dry-run", "--cpus", "1", "--fifo", "10"])
        .assert()
        .success();
}

fn stat_line(pid: u32, comm: &str, state: char, flags: u64, prio: u32, policy: u32) -> String {
    // Fields 3..=41 of proc(5) stat: state, then 4..=39, then rt_priority, policy.
    let mut f: Vec<String> = vec![state.to_string()];
    f.extend((4..=39).map(|n| {
        if n == 9 {
            flags.to_string()
        } else {
            "0".into()
        }
    }));
    f.push(prio.to_string());
    f.push(policy.to_string());
    format!("{pid} ({comm}) {}\n", f.join(" "))
}

/// A runnable user-space SCHED_FIFO task confined to the chosen CPU at a
/// higher priority is reported; a kernel thread (PF_KTHREAD) or a sleeping
/// one is not. Deep idle states are reported as info.
#[test]
fn rt_competitors_and_idle_states() {
    let spin = stat_line(4242, "spin loop", 'R', 0, 50, 1);
    let kthread = stat_line(15, "migration/1", 'R', 0x0020_0040, 99, 1);
    let sleeper = stat_line(4343, "sleeper", 'S', 0, 60, 2);
    let t = tree(&[
        ("proc/4242/stat", &spin),
        ("proc/4242/status", "Name:\tspin\nCpus_allowed_list:\t1\n"),
        ("proc/15/stat", &kthread),
        ("proc/15/status", "Cpus_allowed_list:\t1\n"),
        ("proc/4343/stat", &sleeper),
        ("proc/4343/status", "Cpus_allowed_list:\t1\n"),
        ("sys/devices/system/cpu/cpu1/cpuidle/state0/name", "POLL\n"),
        ("sys/devices/system/cpu/cpu1/cpuidle/state0/latency", "0\n"),
        ("sys/devices/system/cpu/cpu1/cpuidle/state1/name", "C6\n"),
        (
            "sys/devices/system/cpu/cpu1/cpuidle/state1/latency",
            "133\n",
        ),
        ("sys/devices/system/cpu/cpu1/cpuidle/state1/disable", "0\n"),
    ]);
    let f = findings(t.path(), &["--cpus", "1", "--fifo", "40"]);
    let comp = with(&f, "rt-competitor");
    assert_eq!(comp.len(), 1, "{f:?}");
    assert!(
        comp[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("process 4242 (spin loop) is runnable at real-time priority 50")
    );
    assert!(
        with(
            &findings(t.path(), &["--cpus", "1", "--fifo", "60"]),
            "rt-competitor"
        )
        .is_empty()
    );
    let idle = with(&f, "cpuidle-deep-states");
    assert_eq!(idle[0]["severity"], "info");
    assert!(
        idle[0]["message"]
            .as_str()
            .unwrap()
            .contains("deepest: C6 at 133 us")
    );
    assert!(with(&findings(t.path(), &["--cpus", "0"]), "cpuidle-deep-states").is_empty());
}

/// Issue 35 class 4: isolated CPUs (cpu/isolated 2-3) that
/// `/sys/devices/virtual/workqueue/cpumask` still holds (`f`: CPUs 0-3,
/// as isolcpus=domain leaves it before Linux 6.6) may run unbound
/// workqueue workers (`wq_unbound_cpumask`, kernel/workqueue.c):
/// `not-isolated` names them and the mask to write (CPUs 0-1:
/// `00000003`, cpumask_parse() text); a
/// mask of the housekeeping CPUs (`3`) gives nothing.
#[test]
fn workqueue_cpumask_on_isolated_cpus() {
    for (mask, exposed) in [("f", Some(vec![2, 3])), ("3", None), ("7", Some(vec![2]))] {
        let t = tree(&[
            ("sys/devices/system/cpu/isolated", "2-3\n"),
            (
                "sys/devices/virtual/workqueue/cpumask",
                &format!("{mask}\n"),
            ),
        ]);
        let f = findings(t.path(), &["--cpus", "2-3", "--fifo", "10"]);
        let wq: Vec<&Value> = with(&f, "not-isolated")
            .into_iter()
            .filter(|x| x["message"].as_str().unwrap().contains("workqueue"))
            .collect();
        match exposed {
            None => assert!(wq.is_empty(), "{mask}: {wq:?}"),
            Some(cpus) => {
                assert_eq!(ids(&wq[0]["cpus"]), cpus, "{mask}");
                let hint = wq[0]["hint"].as_str().unwrap();
                assert!(
                    hint.starts_with("echo 00000003 > /sys/devices/virtual/workqueue/cpumask"),
                    "{hint}"
                );
            }
        }
    }
}

/// Issue 35 class 4: the cpuidle governor never selects a state whose
/// exit latency exceeds the CPU's resume latency QoS
/// (`cpuidle_governor_latency_req()`, drivers/cpuidle/governor.c, read by
/// `menu_select()` and `teo_select()`): `pm_qos_resume_latency_us` of
/// `n/a` (a limit of 0: polling only) or 100 keeps CPU 1 out of C6 (133
/// us), so `cpuidle-deep-states` said a wake-up cost the CPU never pays;
/// `0` (no constraint) and 200 leave C6 in.
#[test]
fn idle_states_beyond_the_resume_latency_limit_are_never_entered() {
    let cpu1 = "sys/devices/system/cpu/cpu1";
    for (qos, deep) in [
        (None, true),
        (Some("0"), true),
        (Some("200"), true),
        (Some("100"), false),
        (Some("n/a"), false),
    ] {
        let mut files = vec![
            (format!("{cpu1}/cpuidle/state0/name"), "POLL\n".to_string()),
            (format!("{cpu1}/cpuidle/state0/latency"), "0\n".into()),
            (format!("{cpu1}/cpuidle/state1/name"), "C6\n".into()),
            (format!("{cpu1}/cpuidle/state1/latency"), "133\n".into()),
        ];
        if let Some(q) = qos {
            files.push((
                format!("{cpu1}/power/pm_qos_resume_latency_us"),
                format!("{q}\n"),
            ));
        }
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let t = tree(&refs);
        let f = findings(t.path(), &["--cpus", "1", "--fifo", "10"]);
        assert_eq!(
            !with(&f, "cpuidle-deep-states").is_empty(),
            deep,
            "{qos:?}: {f:?}"
        );
    }
}

/// Each of these findings fires on one tree and stays quiet on its twin.
#[test]
fn findings_fire_only_when_their_cause_is_present() {
    let two_nodes = |mem1: &str| {
        tree(&[
            ("sys/devices/system/node/node0/cpulist", "0,2\n"),
            ("sys/devices/system/node/node1/cpulist", "1,3\n"),
            ("sys/devices/system/node/node0/distance", "10 21\n"),
            ("sys/devices/system/node/node1/distance", "21 10\n"),
            ("sys/devices/system/node/node1/meminfo", mem1),
        ])
    };
    let t = two_nodes("Node 1 MemTotal: 8388608 kB\nNode 1 MemFree: 4194304 kB\n");
    // memory-remote: CPUs on node 1, memory on node 0; quiet with local memory.
    let f = findings(t.path(), &["--cpus", "1", "--membind=0"]);
    assert!(
        with(&f, "memory-remote")[0]["message"]
            .as_str()
            .unwrap()
            .contains("distance 21, local 10")
    );
    assert!(
        with(
            &findings(t.path(), &["--cpus", "1", "--membind=1"]),
            "memory-remote"
        )
        .is_empty()
    );
    // memory-partly-remote: CPUs on both nodes, memory on one.
    let f = findings(t.path(), &["--cpus", "0,1", "--membind=0"]);
    assert_eq!(with(&f, "memory-partly-remote")[0]["severity"], "info");
    assert!(with(&f, "memory-remote").is_empty());

    // cpufreq-governor: powersave fires, performance does not.
    let gov = |g: &str| tree(&[("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", g)]);
    assert_eq!(
        ids(&with(
            &findings(gov("powersave\n").path(), &["--cpus", "1"]),
            "cpufreq-governor"
        )[0]["cpus"]),
        vec![1]
    );
    assert!(
        with(
            &findings(gov("performance\n").path(), &["--cpus", "1"]),
            "cpufreq-governor"
        )
        .is_empty()
    );

    // managed-irq-on-cpu: debugfs marks the IRQ managed.
    let irq = |debug: &str| {
        tree(&[
            (
                "proc/interrupts",
                "           CPU0       CPU1       CPU2       CPU3\n 30:  0  7  0  0   PCI-MSI 1-edge   nvme0q1\n",
            ),
            ("proc/irq/30/effective_affinity_list", "1\n"),
            ("sys/kernel/debug/irq/irqs/30", debug),
        ])
    };
    let f = findings(
        irq("handler:  handle_edge_irq\nstate:    0x00000000\n            IRQD_AFFINITY_MANAGED\n")
            .path(),
        &["--cpus", "1"],
    );
    assert_eq!(
        codes(&f)
            .iter()
            .filter(|c| c.ends_with("irq-on-cpu"))
            .collect::<Vec<_>>(),
        vec!["managed-irq-on-cpu"]
    );
    let f = findings(irq("handler:  handle_edge_irq\n").path(), &["--cpus", "1"]);
    assert_eq!(
        codes(&f)
            .iter()
            .filter(|c| c.ends_with("irq-on-cpu"))
            .collect::<Vec<_>>(),
        vec!["irq-on-cpu"]
    );

    // default-irq-affinity from irqaffinity= when /proc/irq/default_smp_affinity is absent.
    let boot = tree(&[("proc/cmdline", "irqaffinity=0-1\n")]);
    assert_eq!(
        with(
            &findings(boot.path(), &["--cpus", "1"]),
            "default-irq-affinity"
        )
        .len(),
        1
    );
    assert!(
        with(
            &findings(boot.path(), &["--cpus", "2"]),
            "default-irq-affinity"
        )
        .is_empty()
    );

    // partition-invalid: the caller's cgroup v2 partition is invalid.
    let part = |state: &str| {
        tree(&[
            ("proc/self/cgroup", "0::/rt\n"),
            (
                "proc/self/mountinfo",
                "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            ),
            ("sys/fs/cgroup/rt/cpuset.cpus.effective", "1\n"),
            ("sys/fs/cgroup/rt/cpuset.cpus.partition", state),
        ])
    };
    let f = findings(
        part("isolated invalid (Cpu list in cpuset.cpus not exclusive)\n").path(),
        &["--cpus", "1"],
    );
    assert!(
        with(&f, "partition-invalid")[0]["message"]
            .as_str()
            .unwrap()
            .contains("not exclusive")
    );
    assert!(
        with(
            &findings(part("isolated\n").path(), &["--cpus", "1"]),
            "partition-invalid"
        )
        .is_empty()
    );
}

/// env-thread-binding fires only when a binding variable is set.
#[test]
fn openmp_binding_variables() {
    let t = tree(&[]);
    let run = |env: Option<(&str, &str)>| {
        let mut cmd = pinrun();
        cmd.env_remove("OMP_PROC_BIND")
            .env_remove("OMP_PLACES")
            .env_remove("GOMP_CPU_AFFINITY")
            .env_remove("KMP_AFFINITY");
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = cmd
            .arg("--sysroot")
            .arg(t.path())
            .args(["--check", "--json", "--cpus", "1"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        codes(v["findings"].as_array().unwrap())
    };
    assert!(run(Some(("GOMP_CPU_AFFINITY", "0-3"))).contains(&"env-thread-binding".to_string()));
    assert!(!run(None).contains(&"env-thread-binding".to_string()));
}

/// `--allow CODES` accepts known findings: they become info, so `--check`
/// exits 0 and `--strict` runs; the strict refusal counts repeated codes.
#[test]
fn allow_accepts_named_findings() {
    let t = tree(&[
        (
            "proc/interrupts",
            "           CPU0       CPU1       CPU2       CPU3\n 24:  0  2  0  0   PCI-MSI 1-edge   a\n 25:  0  3  0  0   PCI-MSI 2-edge   b\n",
        ),
        ("proc/irq/24/effective_affinity_list", "1\n"),
        ("proc/irq/25/effective_affinity_list", "1\n"),
    ]);
    let check = |allow: &str| {
        at(t.path(), &["--check", "--cpus", "1", "--allow", allow])
            .status
            .code()
    };
    assert_eq!(check("irq-on-cpu"), Some(1));
    assert_eq!(
        check("irq-on-cpu,not-isolated,not-nohz-full,not-rcu-nocbs"),
        Some(0)
    );
    let out = at(
        t.path(),
        &["--check", "--json", "--cpus", "1", "--allow", "irq-on-cpu"],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        with(v["findings"].as_array().unwrap(), "irq-on-cpu")
            .iter()
            .all(|f| f["severity"] == "info")
    );
    // Live: --strict with an RT policy refuses, listing repeated codes once with a count.
    let out = pinrun()
        .args(["--strict", "--cpus", "0", "--fifo", "10", "--", "true"])
        .output()
        .unwrap();
    if is_root() {
        assert_eq!(out.status.code(), Some(125));
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().nth(1).unwrap();
        assert!(
            last.starts_with("pinrun: refusing to run under --strict:"),
            "{last}"
        );
        assert!(!last.contains("irq-on-cpu, irq-on-cpu"), "{last}");
    }
}

/// Without /proc/irq/N, the per-CPU counts of /proc/interrupts say where an
/// IRQ was delivered (nto/bare-metal-master keeps no per-IRQ directories);
/// the hint moves IRQs to CPUs that are neither checked nor nohz_full.
#[test]
fn irq_counts_when_affinity_files_are_missing() {
    let m = machine("nto/bare-metal-master.internal");
    assert!(!m.join("proc/irq/135").exists());
    let text = std::fs::read_to_string(m.join("proc/interrupts")).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    let col = header.iter().position(|h| *h == "CPU3").unwrap();
    let want: Vec<u32> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (id, rest) = l.split_once(':')?;
            let n: u32 = id.trim().parse().ok()?;
            let count: u64 = rest.split_whitespace().nth(col)?.parse().ok()?;
            (count > 0).then_some(n)
        })
        .collect();
    assert!(!want.is_empty());
    let out = at(&m, &["--check", "--json", "--cpus", "3"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got: Vec<u32> = with(v["findings"].as_array().unwrap(), "irq-on-cpu")
        .iter()
        .flat_map(|x| ids(&x["irqs"]))
        .collect();
    assert_eq!(got, want);
    // Unknown --allow codes are refused rather than silently accepting nothing.
    let out = pinrun()
        .args(["--check", "--cpus", "0", "--allow", "rt-throtling"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"rt-throtling\" names no finding code")
    );
}

/// `--dry-run --strict` says whether the launch would be refused.
#[test]
fn dry_run_predicts_strict_refusal() {
    let t = tree(&[]);
    let run = |extra: &[&str]| {
        let out = pinrun()
            .arg("--sysroot")
            .arg(t.path())
            .args(["--dry-run", "--json", "--cpus", "1"])
            .args(extra)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["strict_refusal"].clone()
    };
    assert_eq!(run(&["--strict", "--fifo", "10"]), Value::Bool(true));
    assert_eq!(run(&["--fifo", "10"]), Value::Bool(false));
    assert_eq!(run(&["--strict"]), Value::Bool(false));
}

/// The field case `rlimit-rttime` (tests/data/cases/README.md):
/// `proc/self/limits` has `Max realtime timeout 200000 200000 us`. Under
/// SCHED_FIFO or SCHED_RR the kernel counts the command's CPU time without
/// blocking against it and, soft and hard being equal, sends SIGKILL at
/// 200 ms (`check_thread_timers()` checks the hard limit first, so no
/// SIGXCPU comes before it): `--check` and `--dry-run` warn
/// `rt-time-limit` naming 200ms, `--strict` refuses; SCHED_OTHER,
/// SCHED_BATCH and no policy do not.
#[test]
fn field_case_rlimit_rttime() {
    let case = common::field_case("rlimit-rttime");
    for policy in [&["--fifo", "10"][..], &["--rr", "10"][..]] {
        let f = findings(&case, &[&["--cpus", "1"][..], policy].concat());
        let rt = with(&f, "rt-time-limit");
        assert_eq!(rt.len(), 1, "{policy:?}: {:?}", codes(&f));
        assert_eq!(rt[0]["severity"], "warning");
        assert_eq!(rt[0]["cpus"], serde_json::json!([]));
        let msg = rt[0]["message"].as_str().unwrap();
        assert!(
            msg.starts_with("RLIMIT_RTTIME is 200ms soft, 200ms hard ("),
            "{msg}"
        );
        assert!(msg.contains("sends SIGKILL at 200ms"), "{msg}");
        assert!(!msg.contains("SIGXCPU"), "{msg}");
        let hint = rt[0]["hint"].as_str().unwrap();
        assert!(
            hint.contains("prlimit --rttime=unlimited:unlimited"),
            "{hint}"
        );
        assert!(hint.contains("ulimit -R unlimited"), "{hint}");
        assert!(hint.contains("LimitRTTIME=infinity"), "{hint}");
    }
    // The text of --check exits 1 on the warning and names it.
    let out = at(&case, &["--check", "--cpus", "1", "--fifo", "10"]);
    assert_status(&out, 1);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("warning rt-time-limit: RLIMIT_RTTIME is 200ms")
    );
    // The dry run shows it, and --strict would refuse the launch.
    let dry = |extra: &[&str]| {
        let out = at(
            &case,
            &[
                &["--dry-run", "--json", "--cpus", "1", "--fifo", "10"][..],
                extra,
                &["--", "true"],
            ]
            .concat(),
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let v = dry(&[]);
    assert_eq!(
        codes(v["findings"].as_array().unwrap())
            .iter()
            .filter(|c| *c == "rt-time-limit")
            .count(),
        1
    );
    assert_eq!(dry(&["--strict"])["strict_refusal"], Value::Bool(true));
    // The case's process lacks CAP_SYS_NICE: SCHED_DEADLINE is refused
    // there (the unit and live tests show it is not counted).
    for other in [&["--other"][..], &["--batch"][..], &[][..]] {
        let f = findings(&case, &[&["--cpus", "1"][..], other].concat());
        assert!(
            with(&f, "rt-time-limit").is_empty(),
            "{other:?}: {:?}",
            codes(&f)
        );
    }
}

/// The hint of a finding on the boot CPU says every sentence that
/// applies, remedy first: the boot parameters for the other CPUs, then
/// why CPU 0 is left out (its own sentence, without nohz_full= where the
/// hint names no nohz_full=); on CPU 0 alone, why no parameter takes it.
/// `irq-on-cpu` once gave the boot-CPU sentence in place of the
/// isolcpus=managed_irq remedy. (4 CPUs; IRQs 24-26 as in
/// irq_findings_use_effective_affinity_and_skip_per_cpu_rows; 26 may be
/// a managed queue vector: without debugfs pinrun cannot tell.)
#[test]
fn a_hint_on_the_boot_cpu_keeps_every_sentence() {
    let t = irq_tree();
    let hint = |cpus: &str, code: &str| {
        let f = findings(t.path(), &["--cpus", cpus]);
        with(&f, code)[0]["hint"].as_str().unwrap().to_string()
    };
    let left_out = "CPU 0 is left out: it is the boot CPU, where the kernel keeps its housekeeping";
    let nohz = " (before Linux 6.5 tick_nohz_init() also clears it from nohz_full=)";
    assert_eq!(
        hint("0-1", "irq-on-cpu"),
        format!(
            "move them: for i in 24 25 26; do echo 2-3 > /proc/irq/$i/smp_affinity_list; done (and keep irqbalance off these CPUs: IRQBALANCE_BANNED_CPULIST=0-1); a write that fails with EIO (EPERM on some kernels) means that IRQ is kernel-managed; boot with isolcpus=managed_irq,1 instead; {left_out}"
        )
    );
    assert_eq!(
        hint("0", "irq-on-cpu"),
        "move them: for i in 25 26; do echo 1-3 > /proc/irq/$i/smp_affinity_list; done (and keep irqbalance off these CPUs: IRQBALANCE_BANNED_CPULIST=0); a write that fails with EIO (EPERM on some kernels) means that IRQ is kernel-managed; CPU 0 is the boot CPU, where the kernel keeps its housekeeping: no boot parameter takes it, run on another CPU"
    );
    assert_eq!(
        hint("0-1", "not-isolated"),
        format!(
            "isolate at boot with isolcpus=domain,managed_irq,1,3 nohz_full=1,3 rcu_nocbs=1,3 (with the SMT sibling 3: every thread of each core, else other tasks share it); {left_out}{nohz}"
        )
    );
    assert_eq!(
        hint("0-1", "not-nohz-full"),
        format!("boot with nohz_full=1 (CONFIG_NO_HZ_FULL); {left_out}{nohz}")
    );
    assert_eq!(
        hint("0-1", "not-rcu-nocbs"),
        format!("boot with rcu_nocbs=1 (nohz_full= implies it); {left_out}")
    );
    assert_eq!(
        hint("0", "not-rcu-nocbs"),
        "CPU 0 is the boot CPU, where the kernel keeps its housekeeping: no boot parameter takes it, run on another CPU"
    );
}

/// Every printer of an isolcpus= line writes its flags in the order
/// Documentation/admin-guide/kernel-parameters.txt lists them
/// (`isolcpus=nohz,domain,managed_irq,LIST`; boot_params::isolcpus_value):
/// `--plan-host`'s kernel line, the isolation and IRQ findings' hints and
/// the placement's refusal, on a machine without isolation and on one
/// whose isolcpus= has nohz (kept in the line the hints ask for); and no
/// source file but boot_params.rs spells a flag list after `isolcpus=`.
#[test]
fn every_isolcpus_line_has_the_documented_flag_order() {
    let ordered = |text: &str| {
        for w in text
            .split_whitespace()
            .filter(|w| w.starts_with("isolcpus="))
        {
            let v = w.trim_start_matches("isolcpus=");
            let flags: Vec<&str> = v
                .split(',')
                .take_while(|f| f.starts_with(|c: char| c.is_ascii_alphabetic()))
                .collect();
            let want: Vec<&str> = ["nohz", "domain", "managed_irq"]
                .into_iter()
                .filter(|f| flags.contains(f))
                .collect();
            assert_eq!(flags, want, "{w} in {text}");
        }
        text.contains("isolcpus=")
    };
    for cmdline in ["ro quiet\n", "ro isolcpus=managed_irq,nohz,3 nohz_full=3\n"] {
        let t = tree(&[
            ("proc/cmdline", cmdline),
            (
                "proc/interrupts",
                "           CPU0       CPU1       CPU2       CPU3\n 26:  0  0  0  0   PCI-MSI 3-edge   nvme0q1\n",
            ),
            ("proc/irq/26/smp_affinity", "f\n"),
        ]);
        let f = findings(t.path(), &["--cpus", "1-2"]);
        let hints: Vec<String> = f
            .iter()
            .filter_map(|x| x["hint"].as_str().map(String::from))
            .collect();
        assert!(
            hints.iter().filter(|h| ordered(h)).count() >= 2,
            "{cmdline}: {hints:?}"
        );
        let out = at(
            t.path(),
            &["--isolated", "--cores", "1", "--dry-run", "--", "true"],
        );
        assert!(
            ordered(&String::from_utf8_lossy(&out.stderr)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v = common::dry_json(
        "nto/bare-metal-worker1.internal",
        &["--plan-host", "--latency-cores", "4"],
    );
    let line = v["kernel_cmdline"].as_str().unwrap();
    assert!(ordered(line), "{line}");
    assert!(line.starts_with("isolcpus=domain,managed_irq,"), "{line}");
    // The source: a flag list after isolcpus= only in boot_params.rs
    // (tests and parsers' inputs aside: lines with `parse` or in tests).
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.clone()];
    let mut bad = Vec::new();
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if p.ends_with("boot_params.rs") || p.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for l in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            if [
                "isolcpus=nohz,",
                "isolcpus=domain,",
                "isolcpus=managed_irq,",
                "\"managed_irq,",
                "\"domain,",
            ]
            .iter()
            .any(|p| l.contains(p))
                && l.contains('{')
            {
                bad.push(format!("{}: {l}", p.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "isolcpus= flags written outside boot_params::isolcpus_value: {bad:#?}"
    );
}

/// A kernel cpulist ("0-3,8") as ids; empty for an empty or missing file
/// (a trailing NUL, as some hwloc dumps hold, ends the list).
fn kernel_list(path: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.trim_matches(|c: char| c.is_whitespace() || c == '\0')
        .split(',')
        .filter(|r| !r.is_empty())
        .flat_map(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            let n = |x: &str| {
                x.parse::<u32>()
                    .unwrap_or_else(|_| panic!("{}: not a cpulist: {text:?}", path.display()))
            };
            n(a)..=n(b)
        })
        .collect()
}

/// The not-isolated hint's boot line isolates whole cores: on every dump
/// with SMT, for a chosen thread whose core holds neither the boot CPU nor
/// an isolated CPU, the `isolcpus=` list of the hint holds every online
/// thread of its core, as the dump's `thread_siblings_list` gives it.
/// Booted with a line naming one thread, the sibling stays in the
/// scheduler's balancing, which is pinrun's own `sibling-not-isolated`
/// warning: the hint's fix led to another warning (on
/// cadvisor/xeon4214_2socket, `--cpus 4`: `isolcpus=domain,managed_irq,4`
/// for a core of threads 4 and 28). Then, on one dump, the line is booted
/// (its `isolcpus=` in /proc/cmdline and /sys/devices/system/cpu/isolated)
/// and neither warning is left.
#[test]
fn the_not_isolated_hint_isolates_whole_cores() {
    let isolcpus_of = |hint: &str| -> Vec<u32> {
        let list = hint
            .split_whitespace()
            .find_map(|w| w.strip_prefix("isolcpus=domain,managed_irq,"))
            .unwrap_or_else(|| panic!("no isolcpus= in {hint}"));
        let dir = common::tempdir();
        std::fs::write(dir.path().join("l"), list).unwrap();
        kernel_list(&dir.path().join("l"))
    };
    let mut checked = Vec::new();
    for rel in common::all_machines() {
        let root = machine(&rel);
        let cpu_dir = root.join("sys/devices/system/cpu");
        let online = kernel_list(&cpu_dir.join("online"));
        let isolated = kernel_list(&cpu_dir.join("isolated"));
        let cmdline = std::fs::read_to_string(root.join("proc/cmdline")).unwrap_or_default();
        if !isolated.is_empty() || cmdline.contains("isolcpus") || cmdline.contains("nohz_full") {
            continue;
        }
        let core = |c: u32| -> Vec<u32> {
            kernel_list(&cpu_dir.join(format!("cpu{c}/topology/thread_siblings_list")))
                .into_iter()
                .filter(|s| online.contains(s))
                .collect()
        };
        let Some(cpu) = online.iter().copied().find(|&c| {
            let threads = core(c);
            threads.len() > 1 && threads.contains(&c) && !threads.contains(&0)
        }) else {
            continue;
        };
        let f = findings(&root, &["--cpus", &cpu.to_string(), "--fifo", "10"]);
        let Some(not_isolated) = with(&f, "not-isolated").first().copied() else {
            continue;
        };
        let hint = not_isolated["hint"].as_str().unwrap();
        // An isolated alternative named first is no boot line to follow.
        if !hint.contains("isolcpus=") {
            continue;
        }
        let got = isolcpus_of(hint);
        for t in core(cpu) {
            assert!(
                got.contains(&t),
                "{rel}: CPU {cpu}'s sibling {t} not in {hint}"
            );
        }
        checked.push(rel);
    }
    assert!(
        checked.len() >= 20,
        "only {} dumps with SMT: {checked:?}",
        checked.len()
    );
    // Booted with the line: no not-isolated, no sibling-not-isolated.
    let rel = "cadvisor/xeon4214_2socket";
    let dir = common::tempdir();
    common::copy_tree(&machine(rel), dir.path());
    let f = findings(dir.path(), &["--cpus", "4", "--fifo", "10"]);
    let list = isolcpus_of(with(&f, "not-isolated")[0]["hint"].as_str().unwrap());
    assert_eq!(list, [4, 28], "{rel}: thread_siblings_list of cpu4 is 4,28");
    common::write_file(
        dir.path(),
        "proc/cmdline",
        "ro isolcpus=domain,managed_irq,4,28",
    );
    common::write_file(dir.path(), "sys/devices/system/cpu/isolated", "4,28\n");
    let f = findings(dir.path(), &["--cpus", "4", "--fifo", "10"]);
    assert!(with(&f, "not-isolated").is_empty(), "{:?}", codes(&f));
    assert!(
        with(&f, "sibling-not-isolated").is_empty(),
        "{:?}",
        codes(&f)
    );
}
