//! Issue 14: facts read from the source the kernel enforces, the command
//! line parsed as its kernel parser does, and causes and hints that are
//! right for the tree's state (the field cases of tests/data/cases).

use crate::common;
use serde_json::Value;

fn check_json(root: &std::path::Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--check", "--json"];
    all.extend_from_slice(args);
    let out = common::at(root, &all);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["findings"].as_array().cloned().unwrap_or_default()
}

/// The finding with `code` (panics naming the codes present when none).
fn finding<'a>(findings: &'a [Value], code: &str) -> &'a Value {
    findings
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {:?}", codes(findings)))
}

fn codes(findings: &[Value]) -> Vec<&str> {
    findings.iter().filter_map(|f| f["code"].as_str()).collect()
}

/// Field case rcu-nocbs-without-list: `rcu_nocbs` without `=LIST` offloads
/// no CPU (rcu_nocb_setup(), kernel/rcu/tree_nocb.h), so CPU 3 (not
/// nohz_full either) still runs its RCU callbacks.
#[test]
fn bare_rcu_nocbs_offloads_no_cpu() {
    let case = common::field_case("rcu-nocbs-without-list");
    let f = check_json(&case, &["--cpus", "3"]);
    let nocb = finding(&f, "not-rcu-nocbs");
    assert_eq!(nocb["cpus"], serde_json::json!([3]));
    assert!(
        nocb["message"].as_str().unwrap().contains("bare rcu_nocbs"),
        "{nocb}"
    );
    assert_eq!(
        nocb["hint"],
        "boot with rcu_nocbs=3 (nohz_full= implies it)"
    );
}

/// The class: each rcu_nocbs grammar the kernel accepts, on the same tree
/// with the command line replaced; nohz_full CPUs are offloaded too
/// (rcu_init_nohz()).
#[test]
fn rcu_nocbs_grammar_as_the_kernel() {
    let case = common::field_case("rcu-nocbs-without-list");
    for (cmdline, offloaded) in [
        ("ro rcu_nocbs=", false),
        ("ro rcu_nocbs=3", true),
        ("ro rcu_nocbs=1-N", true),
        ("ro rcu_nocbs=2-3:1/2", false),
        ("ro rcu_nocbs=bogus", true),
        ("ro rcu_nocbs=3 rcu_nocbs", false),
    ] {
        let dir = common::tempdir();
        common::copy_tree(&case, dir.path());
        common::write_file(dir.path(), "proc/cmdline", cmdline);
        let f = check_json(dir.path(), &["--cpus", "3"]);
        assert_eq!(
            !codes(&f).contains(&"not-rcu-nocbs"),
            offloaded,
            "{cmdline}: {:?}",
            codes(&f)
        );
    }
}

fn dry(root: &std::path::Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["--dry-run", "--json"];
    all.extend_from_slice(args);
    let out = common::at(root, &all);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "no JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

/// Field case virtualised-online-file: lxcfs's `cpu/online` says 0, the
/// kernel's `cpuset.cpus.effective` (a subset of the online CPUs,
/// cgroup-v2.rst) and `cpu24/online` say CPU 24: the plan is CPU 24, with
/// a finding naming both files, and no hint to online a CPU.
#[test]
fn virtualised_online_file_trusts_the_cgroup() {
    let case = common::field_case("virtualised-online-file");
    let (code, v) = dry(&case, &["--cpus", "24"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["cpus"], serde_json::json!([24]));
    let f = v["findings"].as_array().unwrap();
    let d = finding(f, "sources-disagree");
    assert_eq!(d["cpus"], serde_json::json!([24]));
    let msg = d["message"].as_str().unwrap();
    for file in [
        "/sys/devices/system/cpu/online says 0",
        "/sys/fs/cgroup/cpuset.cpus.effective",
        "cpu24/online",
    ] {
        assert!(msg.contains(file), "{msg}");
    }
    assert!(!v.to_string().contains("echo 1 >"), "{v}");
    // --cores chooses there too.
    let (code, v) = dry(&case, &["--cores", "1"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["cpus"], serde_json::json!([24]));
}

/// The class, without a cgroup cpuset: `Cpus_allowed_list` may name
/// offline CPUs, so only a CPU whose own `cpuN/online` says 1 is taken as
/// online against `cpu/online`; one whose file says 0 stays offline and
/// the refusal's hint names the per-CPU file.
#[test]
fn affinity_against_virtualised_online_file() {
    let dir = common::tempdir();
    common::copy_tree(&common::field_case("virtualised-online-file"), dir.path());
    std::fs::remove_file(dir.path().join("sys/fs/cgroup/cpuset.cpus.effective")).unwrap();
    let (code, v) = dry(dir.path(), &["--cpus", "24"]);
    assert_eq!(code, Some(0), "{v}");
    let d = finding(v["findings"].as_array().unwrap(), "sources-disagree");
    let msg = d["message"].as_str().unwrap();
    assert!(
        msg.contains("cpu24/online says 1") && msg.contains("Cpus_allowed_list"),
        "{msg}"
    );
    common::write_file(dir.path(), "sys/devices/system/cpu/cpu24/online", "0\n");
    let (code, err) = refused(dir.path(), &["--cpus", "24"]);
    assert_eq!(code, Some(125));
    assert!(err.contains("CPU 24 is offline"), "{err}");
}

/// The class: when the CPU's own `cpuN/online` says 0 as well, the kernel's
/// files contradict each other: the CPU stays offline, the refusal names
/// the contradiction's files.
#[test]
fn cgroup_against_per_cpu_online_file() {
    let case = common::field_case("virtualised-online-file");
    let dir = common::tempdir();
    common::copy_tree(&case, dir.path());
    common::write_file(dir.path(), "sys/devices/system/cpu/cpu24/online", "0\n");
    let out = common::at(dir.path(), &["--check", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let d = finding(v["findings"].as_array().unwrap(), "sources-disagree");
    assert_eq!(d["cpus"], serde_json::json!([24]));
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("takes it as offline")
    );
    // A cgroup that agrees with cpu/online gives no such finding.
    common::write_file(dir.path(), "sys/devices/system/cpu/online", "0,24\n");
    let f = check_json(dir.path(), &[]);
    assert!(!codes(&f).contains(&"sources-disagree"), "{:?}", codes(&f));
}

/// Runs `--dry-run ARGS` and returns (exit status, stderr).
fn refused(root: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["--dry-run"];
    all.extend_from_slice(args);
    let out = common::at(root, &all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Field case node-with-offline-cpus: node 1's CPUs 2-3 are offline
/// (`cpu/offline`, `cpu2/node1`, `cpu3/node1`; `node1/cpulist` empty): the
/// refusal names them and how to bring them online, each file the hint
/// writes existing in the tree; never a `--membind` hint.
#[test]
fn node_with_offline_cpus_names_them() {
    let case = common::field_case("node-with-offline-cpus");
    let (code, err) = refused(&case, &["--node", "1", "--cores", "1"]);
    assert_eq!(code, Some(125));
    assert!(
        err.contains("node 1's CPUs 2-3 exist but are offline"),
        "{err}"
    );
    assert!(err.contains("chcpu -e 2-3"), "{err}");
    assert!(!err.contains("--membind"), "{err}");
    for n in [2, 3] {
        let f = case.join(format!("sys/devices/system/cpu/cpu{n}/online"));
        assert_eq!(std::fs::read_to_string(&f).unwrap().trim(), "0");
    }
    let out = common::at(
        &case,
        &["--dry-run", "--json", "--node", "1", "--cores", "1"],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "node-cpus-offline");
    // --cpus 2: the per-CPU file the hint writes is the tree's.
    let (code, err) = refused(&case, &["--cpus", "2"]);
    assert_eq!(code, Some(125));
    assert!(
        err.contains("echo 1 > /sys/devices/system/cpu/cpu2/online"),
        "{err}"
    );
}

/// The class: once CPUs 2-3 are no longer node 1's (no `cpuN/node1`
/// link), node 1 is a memory-only node; the hint's command then works on
/// that tree (run as given).
#[test]
fn memory_only_node_hint_works() {
    let case = common::field_case("node-with-offline-cpus");
    let dir = common::tempdir();
    common::copy_tree(&case, dir.path());
    for n in [2, 3] {
        std::fs::remove_file(
            dir.path()
                .join(format!("sys/devices/system/cpu/cpu{n}/node1")),
        )
        .unwrap();
    }
    let (code, err) = refused(dir.path(), &["--node", "1", "--cores", "1"]);
    assert_eq!(code, Some(125));
    assert!(err.contains("memory-only node"), "{err}");
    let hint = err.split("hint: ").nth(1).expect("hint");
    let args: Vec<&str> = hint
        .rsplit_once(": ")
        .expect("a command")
        .1
        .split_whitespace()
        .collect();
    assert_eq!(args, ["--node", "0", "--membind=1"]);
    let (code, err) = refused(dir.path(), &args);
    assert_eq!(code, Some(0), "{err}");
}

/// A 4-CPU tree (field case rcu-nocbs-without-list) with `cmdline` and one
/// IRQ 30 named `name` delivered to CPU `cpu`; `debug` is its debugfs
/// file, if any.
fn irq_tree(cmdline: &str, name: &str, cpu: u32, debug: Option<&str>) -> tempfile::TempDir {
    let dir = common::tempdir();
    common::copy_tree(&common::field_case("rcu-nocbs-without-list"), dir.path());
    common::write_file(dir.path(), "proc/cmdline", cmdline);
    common::write_file(
        dir.path(),
        "proc/interrupts",
        &format!(
            "           CPU0       CPU1       CPU2       CPU3\n 30:  0  7  9  0   PCI-MSI 1-edge   {name}\n"
        ),
    );
    common::write_file(
        dir.path(),
        "proc/irq/30/effective_affinity_list",
        &format!("{cpu}\n"),
    );
    if let Some(d) = debug {
        common::write_file(dir.path(), "sys/kernel/debug/irq/irqs/30", d);
    }
    dir
}

fn irq_finding(root: &std::path::Path, cpus: &str) -> Value {
    check_json(root, &["--cpus", cpus])
        .into_iter()
        .find(|f| {
            f["code"]
                .as_str()
                .is_some_and(|c| c.ends_with("irq-on-cpu"))
        })
        .expect("an irq finding")
}

/// irq-on-cpu hints, each checked against the tree's state: a movable IRQ
/// (debugfs says not managed) gets the plain smp_affinity_list write; an
/// IRQ of unknown kind gets the EIO/EPERM caveat, and a queue IRQ is said
/// to be possibly managed; a managed IRQ on CPUs that isolcpus=managed_irq
/// already lists is never told to add isolcpus=managed_irq.
#[test]
fn irq_hints_match_the_tree() {
    let base = "ro isolcpus=domain,2-3";
    // Unknown (no debugfs), an NVMe I/O queue.
    let t = irq_tree(base, "nvme0q1", 1, None);
    let f = irq_finding(t.path(), "1");
    assert_eq!(f["code"], "irq-on-cpu");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("may be kernel-managed"),
        "{f}"
    );
    let hint = f["hint"].as_str().unwrap();
    assert!(
        hint.contains("echo 0 > /proc/irq/30/smp_affinity_list"),
        "{hint}"
    );
    // One isolcpus= for all its CPUs (issue 31): the list it has is kept,
    // and the hint says CPU 1 would take its domain flag too.
    assert!(
        hint.contains("EIO")
            && hint.contains("isolcpus=domain,managed_irq,1-3")
            && hint.contains("CPU 1 would be isolated from the scheduler too"),
        "{hint}"
    );
    // Known movable (debugfs without IRQD_AFFINITY_MANAGED): no caveat.
    let t = irq_tree(base, "eth0-TxRx-0", 1, Some("handler:  handle_edge_irq\n"));
    let f = irq_finding(t.path(), "1");
    assert!(!f["hint"].as_str().unwrap().contains("EIO"), "{f}");
    assert!(!f["message"].as_str().unwrap().contains("may be"), "{f}");
    // Known managed, on a CPU isolcpus=managed_irq already covers.
    let managed = "handler:  handle_edge_irq\n            IRQD_AFFINITY_MANAGED\n";
    let t = irq_tree(
        "ro isolcpus=domain,managed_irq,2-3",
        "nvme0q3",
        3,
        Some(managed),
    );
    let f = irq_finding(t.path(), "3");
    assert_eq!(f["code"], "managed-irq-on-cpu");
    let hint = f["hint"].as_str().unwrap();
    assert!(hint.contains("already lists CPU 3"), "{hint}");
    assert!(!hint.contains("boot with"), "{hint}");
    // Known managed, not covered: the boot parameter is the fix.
    let t = irq_tree(base, "nvme0q3", 3, Some(managed));
    let hint = irq_finding(t.path(), "3")["hint"]
        .as_str()
        .unwrap()
        .to_string();
    // The isolcpus=domain,2-3 already there is kept whole (issue 31).
    assert!(
        hint.contains("boot with isolcpus=domain,managed_irq,2-3 so"),
        "{hint}"
    );
}

/// A kernel without NUMA (no /sys/devices/system/node; hwloc/2arm-2c,
/// whose expected lstopo shows one NUMANode P#0 holding both PUs): node 0
/// is the whole machine; `--node 0` means every CPU; a memory option is
/// validated, not applied (memory "default"), with the `no-numa` info.
#[test]
fn kernel_without_numa_is_one_node_0() {
    let rel = "hwloc/2arm-2c";
    let m = common::machine(rel);
    assert!(!m.join("sys/devices/system/node").exists());
    let lstopo = std::fs::read_to_string(m.join("expected-lstopo-2arm-2c.console")).unwrap();
    assert_eq!(lstopo.matches("NUMANode L#").count(), 1, "{lstopo}");
    assert!(lstopo.contains("NUMANode L#0 (P#0"), "{lstopo}");
    let show = common::show_json(rel);
    for c in show["cpus"].as_array().unwrap() {
        assert_eq!(c["node"], 0, "{c}");
    }
    assert_eq!(show["nodes"][0]["node"], 0);
    assert_eq!(show["nodes"][0]["cpus"], serde_json::json!([0, 1]));
    let v = common::dry_json(rel, &["--dry-run", "--node", "0", "--membind=0"]);
    assert_eq!(v["cpus"], serde_json::json!([0, 1]));
    assert_eq!(v["memory"]["policy"], "default");
    let f = v["findings"].as_array().unwrap();
    let nn = finding(f, "no-numa");
    assert_eq!(nn["severity"], "info");
    // Node 1 does not exist there.
    let (code, err) = refused(&m, &["--node", "1"]);
    assert_eq!(code, Some(125));
    assert!(err.contains("this machine's nodes are 0"), "{err}");
}

/// The command line as its kernel parsers read it, where the kernel
/// exports nothing (the tree's sysfs isolated/nohz_full removed):
/// housekeeping_setup() keeps the boot CPU when nohz_full= lists every
/// CPU; a nohz_full= list cpulist_parse() rejects sets nothing;
/// irq_affinity_setup() adds the boot CPU to irqaffinity=.
#[test]
fn other_parameters_as_their_kernel_parsers() {
    let case = common::field_case("rcu-nocbs-without-list");
    let with = |cmdline: &str| {
        let dir = common::tempdir();
        common::copy_tree(&case, dir.path());
        for f in ["isolated", "nohz_full"] {
            let _ = std::fs::remove_file(dir.path().join(format!("sys/devices/system/cpu/{f}")));
        }
        common::write_file(dir.path(), "proc/cmdline", cmdline);
        dir
    };
    let cpus_of = |f: &[Value], code: &str| {
        f.iter()
            .find(|x| x["code"] == code)
            .map(|x| x["cpus"].clone())
    };
    let t = with("ro nohz_full=0-3");
    let f = check_json(t.path(), &["--cpus", "0-3"]);
    assert_eq!(cpus_of(&f, "not-nohz-full"), Some(serde_json::json!([0])));
    // nohz_full CPUs are RCU no-callbacks CPUs too (rcu_init_nohz()).
    assert_eq!(cpus_of(&f, "not-rcu-nocbs"), Some(serde_json::json!([0])));
    let t = with("ro nohz_full=1-x");
    let f = check_json(t.path(), &["--cpus", "0-3"]);
    assert_eq!(
        cpus_of(&f, "not-nohz-full"),
        Some(serde_json::json!([0, 1, 2, 3]))
    );
    let t = with("ro irqaffinity=2-3");
    let f = check_json(t.path(), &["--cpus", "0-1"]);
    assert_eq!(
        cpus_of(&f, "default-irq-affinity"),
        Some(serde_json::json!([0]))
    );
}

/// `cpu/isolated` without `cpu/nohz_full` (both since Linux 4.1, the
/// latter only with CONFIG_NO_HZ_FULL): nohz_full= on the command line is
/// not in effect; the finding names both sources, and no CPU is taken as
/// nohz_full.
#[test]
fn nohz_full_without_config_no_hz_full() {
    let dir = common::tempdir();
    common::copy_tree(&common::field_case("rcu-nocbs-without-list"), dir.path());
    std::fs::remove_file(dir.path().join("sys/devices/system/cpu/nohz_full")).unwrap();
    common::write_file(dir.path(), "proc/cmdline", "ro isolcpus=2-3 nohz_full=2-3");
    let f = check_json(dir.path(), &["--cpus", "2-3"]);
    let d = finding(&f, "sources-disagree");
    let msg = d["message"].as_str().unwrap();
    assert!(
        msg.contains("nohz_full CPUs 2-3") && msg.contains("CONFIG_NO_HZ_FULL"),
        "{msg}"
    );
    let t = finding(&f, "not-nohz-full");
    assert_eq!(t["cpus"], serde_json::json!([2, 3]));
    assert_eq!(
        t["hint"],
        "boot a kernel built with CONFIG_NO_HZ_FULL=y, with nohz_full=2-3"
    );
    // Nor are they RCU no-callbacks CPUs by nohz_full (rcu_init_nohz()
    // needs CONFIG_NO_HZ_FULL too).
    let r = finding(&f, "not-rcu-nocbs");
    assert_eq!(r["cpus"], serde_json::json!([2, 3]));
}

/// The kernel-enforced source of RCU offloading, where visible (`--check`):
/// a CPU without an `rcuop/N` kthread is not offloaded, whatever
/// rcu_nocbs= says (a kernel without CONFIG_RCU_NOCB_CPU); `rcuog/N`
/// (grace-period kthreads) do not count. Without `kthreadd` as pid 2
/// (kernel threads invisible) the command line stands.
#[test]
fn rcuo_kthreads_outweigh_rcu_nocbs() {
    let dir = common::tempdir();
    common::copy_tree(&common::field_case("rcu-nocbs-without-list"), dir.path());
    common::write_file(dir.path(), "proc/cmdline", "ro isolcpus=2-3 rcu_nocbs=2-3");
    for (pid, comm) in [(10, "rcuop/2"), (11, "rcuog/3"), (12, "rcu_preempt")] {
        common::write_file(
            dir.path(),
            &format!("proc/{pid}/comm"),
            &format!("{comm}\n"),
        );
    }
    // kthreadd not visible: the command line stands.
    let f = check_json(dir.path(), &["--cpus", "2-3"]);
    assert!(!codes(&f).contains(&"not-rcu-nocbs"), "{:?}", codes(&f));
    common::write_file(dir.path(), "proc/2/comm", "kthreadd\n");
    let f = check_json(dir.path(), &["--cpus", "2-3"]);
    let r = finding(&f, "not-rcu-nocbs");
    assert_eq!(r["cpus"], serde_json::json!([3]));
    let d = finding(&f, "sources-disagree");
    assert_eq!(d["cpus"], serde_json::json!([3]));
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("no rcuo kthread runs for CPU 3")
    );
    // The hint does not ask for the rcu_nocbs= already there.
    let hint = r["hint"].as_str().unwrap();
    assert!(hint.contains("CONFIG_RCU_NOCB_CPU=y"), "{hint}");
    assert!(!hint.contains("boot with rcu_nocbs"), "{hint}");
}

/// not-nohz-full when nohz_full= already lists the CPU but the kernel's
/// `cpu/nohz_full` does not: the hint never asks for nohz_full= again.
#[test]
fn nohz_full_hint_never_asks_for_what_is_configured() {
    let dir = common::tempdir();
    common::copy_tree(&common::field_case("rcu-nocbs-without-list"), dir.path());
    common::write_file(dir.path(), "proc/cmdline", "ro isolcpus=2-3 nohz_full=0-3");
    common::write_file(dir.path(), "sys/devices/system/cpu/nohz_full", "1-3\n");
    let f = check_json(dir.path(), &["--cpus", "0"]);
    let t = finding(&f, "not-nohz-full");
    let hint = t["hint"].as_str().unwrap();
    // What works here first (issue 31), then why the boot parameter did not.
    assert!(
        hint.starts_with(
            "CPUs 1-3 are nohz_full and free: --cpus 1; else nohz_full= already lists CPU 0"
        ),
        "{hint}"
    );
    assert!(!hint.contains("boot with nohz_full"), "{hint}");
    // Not listed: the boot parameter is the fix.
    common::write_file(dir.path(), "proc/cmdline", "ro isolcpus=2-3 nohz_full=2-3");
    common::write_file(dir.path(), "sys/devices/system/cpu/nohz_full", "2-3\n");
    let f = check_json(dir.path(), &["--cpus", "1"]);
    assert_eq!(
        finding(&f, "not-nohz-full")["hint"],
        "CPUs 2-3 are nohz_full and free: --cpus 2; else boot with nohz_full=1-3 (it leaves CPU 0 alone for housekeeping) (CONFIG_NO_HZ_FULL)"
    );
}
