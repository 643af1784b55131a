//! Kubernetes, Slurm and systemd (issue 23), on the field cases of
//! tests/data/cases (k8s-cpuset-unsettled, k8s-shared-pool, cfs-quota,
//! slurm-task-mask: cadvisor's xeon4214_2socket topology, 2 packages × 12
//! cores × 2 threads, siblings N and N+24, with a pod's or a Slurm step's
//! cgroup; provenance in tests/data/cases/README.md) and the machine
//! dumps. The expected CPUs follow from the dumps' thread_siblings_list
//! and from the cpusets, masks and kubelet state the cases hold.

use crate::common::{self, assert_status, machine, pinrun};
use serde_json::Value;
use std::path::Path;

/// `--dry-run --json ARGS` below `root`, with `env`; the JSON object.
fn dry(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut c = pinrun();
    c.env_remove("KUBERNETES_SERVICE_HOST");
    for (k, _) in std::env::vars() {
        if k.starts_with("SLURM_") {
            c.env_remove(k);
        }
    }
    let out = c
        .envs(env.iter().copied())
        .arg("--sysroot")
        .arg(root)
        .args(["--dry-run", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert_status(&out, 0);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The findings of `v` with `code`.
fn with<'a>(v: &'a Value, code: &str) -> Vec<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// kubelet has assigned the container CPUs 2-3,26-27 (its state file) but
/// its cpuset is still 0-47: a warning naming them; once the cpuset is
/// 2-3,26-27 the container is in the exclusive pool and plans inside it,
/// its own kubelet claim not counted against it.
#[test]
fn kubelet_state_that_differs_from_the_cpuset() {
    let case = common::field_case("k8s-cpuset-unsettled");
    let v = dry(&case, &["--cores", "1"], &[]);
    let f = with(&v, "k8s-cpuset-unsettled");
    assert_eq!(f.len(), 1, "{v}");
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(common::ids(&f[0]["cpus"]), vec![2, 3, 26, 27]);
    assert!(f[0]["message"].as_str().unwrap().contains("Guaranteed"));
    // --settle below a dump waits for nothing: the same finding, at once.
    let t = std::time::Instant::now();
    let s = dry(&case, &["--cores", "1", "--settle=5s"], &[]);
    assert!(t.elapsed() < std::time::Duration::from_secs(4));
    assert_eq!(with(&s, "k8s-cpuset-unsettled").len(), 1);

    let settled = common::tempdir();
    common::copy_tree(&case, settled.path());
    let cg = "sys/fs/cgroup/kubepods.slice/kubepods-pod5a3c1f9e_8d2b_4e6a_9f10_3b7c2d1e4a55.slice/cri-containerd-9f2e6c1b7a04d3e5.scope/cpuset.cpus.effective";
    common::write_file(settled.path(), cg, "2-3,26-27\n");
    let v = dry(settled.path(), &["--cores", "2", "--fifo", "10"], &[]);
    assert_eq!(common::ids(&v["cpus"]), vec![2, 3]);
    let pool = with(&v, "k8s-pool");
    assert_eq!(pool.len(), 1);
    assert!(
        pool[0]["message"]
            .as_str()
            .unwrap()
            .contains("container app has exclusive CPUs 2-3,26-27")
    );
    assert!(with(&v, "k8s-shared-pool").is_empty());
    assert!(with(&v, "cpu-claimed").is_empty());
}

/// A Burstable pod in the shared pool (defaultCpuSet 0-1,4-25,28-47) on
/// 5.15: a real-time launch is warned, and a narrower placement is lost
/// on the next cpuset change before 6.2.
#[test]
fn shared_pool_pod() {
    let case = common::field_case("k8s-shared-pool");
    let v = dry(&case, &["--cores", "1", "--fifo", "50"], &[]);
    // The latency rule takes the lowest core but the boot CPU's (issue 31).
    assert_eq!(common::ids(&v["cpus"]), vec![1]);
    let f = with(&v, "k8s-shared-pool");
    assert_eq!(f.len(), 1, "{v}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["message"].as_str().unwrap().contains("Burstable"));
    assert_eq!(with(&v, "cpuset-resets-affinity")[0]["severity"], "notice");
    // Not real-time, not --isolated: only the pool, as info.
    let v = dry(&case, &["--cores", "1"], &[]);
    assert!(with(&v, "k8s-shared-pool").is_empty());
    assert_eq!(with(&v, "k8s-pool")[0]["severity"], "info");
}

/// cpu.max 150000 100000 on the container (its pod: max): a quota of 1.5
/// CPUs, a warning naming the file; a notice under SCHED_FIFO, which it
/// does not throttle.
#[test]
fn cfs_quota() {
    let case = common::field_case("cfs-quota");
    let v = dry(&case, &["--cores", "1"], &[]);
    let f = with(&v, "cfs-quota");
    assert_eq!(f.len(), 1, "{v}");
    assert_eq!(f[0]["severity"], "warning");
    let m = f[0]["message"].as_str().unwrap();
    assert!(
        m.contains("4be1f0c9d2a37e86/cpu.max = 150000 100000"),
        "{m}"
    );
    assert!(m.contains("1.50 CPUs"), "{m}");
    let rt = dry(&case, &["--cores", "1", "--fifo", "1"], &[]);
    assert_eq!(with(&rt, "cfs-quota")[0]["severity"], "notice");
    // The other cases' cpu.max is "max": no finding.
    let none = dry(
        &common::field_case("k8s-shared-pool"),
        &["--cores", "1"],
        &[],
    );
    assert!(with(&none, "cfs-quota").is_empty());
}

/// The step's cgroup holds CPUs 0-11,24-35; task 3's mask is 4-5,28-29
/// (Cpus_allowed_list): pinrun plans inside the mask and names the task;
/// unbound tasks sharing one mask are warned.
#[test]
fn slurm_task_mask_narrower_than_the_job() {
    let case = common::field_case("slurm-task-mask");
    let env = [
        ("SLURM_JOB_ID", "77"),
        ("SLURM_STEP_ID", "0"),
        ("SLURM_PROCID", "3"),
        ("SLURM_LOCALID", "3"),
        ("SLURM_STEP_TASKS_PER_NODE", "4"),
        ("SLURM_CPU_BIND_TYPE", "mask_cpu:"),
        (
            "SLURM_CPU_BIND_LIST",
            "0x3000003,0xc00000c,0x30000030,0xc00000c0",
        ),
    ];
    let v = dry(&case, &["--cores", "2"], &env);
    assert_eq!(common::ids(&v["cpus"]), vec![4, 5]);
    let reasons = v["reasons"].to_string();
    assert!(reasons.contains("Slurm task 3 mask 4-5,28-29"), "{reasons}");
    assert!(with(&v, "slurm-shared-mask").is_empty());
    // Outside the mask: named by the task.
    let v = dry(&case, &["--cpus", "6"], &env);
    let f = with(&v, "outside-inherited-affinity");
    assert!(
        f[0]["message"]
            .as_str()
            .unwrap()
            .contains("(Slurm task 3 mask 4-5,28-29)")
    );
    // More than the mask holds: refused, naming the task's mask.
    let out = pinrun()
        .envs(env)
        .arg("--sysroot")
        .arg(&case)
        .args(["--dry-run", "--cores", "3"])
        .output()
        .unwrap();
    assert_status(&out, 125);
    let unbound = [
        ("SLURM_JOB_ID", "77"),
        ("SLURM_PROCID", "3"),
        ("SLURM_STEP_TASKS_PER_NODE", "4"),
        ("SLURM_CPU_BIND_TYPE", "none"),
    ];
    let v = dry(&case, &["--cores", "1"], &unbound);
    let f = with(&v, "slurm-shared-mask");
    assert_eq!(f.len(), 1, "{v}");
    assert!(
        f[0]["message"]
            .as_str()
            .unwrap()
            .contains("Slurm task 3 of job 77: 4 tasks on this node share the mask 4-5,28-29 (SLURM_CPU_BIND_TYPE=none)")
    );
}

/// `--emit slurm N`: N disjoint whole cores from the launch's planner, as
/// map_cpu: (one CPU each) or mask_cpu: (the cores' threads); the masks
/// follow the dump's thread_siblings_list (CPU N and N+24).
#[test]
fn emit_slurm_tasks_are_disjoint_whole_cores() {
    let m = machine("cadvisor/xeon4214_2socket");
    let out = common::at(
        &m,
        &["--cores", "1", "--emit", "slurm", "4", "--", "/app", "-x"],
    );
    assert_status(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("srun --ntasks-per-node=4 --cpu-bind=verbose,map_cpu:0,1,2,3 -- /app -x\n"),
        "{text}"
    );
    let out = common::at(&m, &["--cores", "1", "--smt", "--emit", "slurm", "2"]);
    assert_status(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    // CPUs 0,24 and 1,25: bits 0 and 24, 1 and 25.
    assert!(
        text.contains("--cpu-bind=verbose,mask_cpu:0x1000001,0x2000002 COMMAND"),
        "{text}"
    );
    assert!(!text.contains("srun sets no scheduling"));
    let out = common::at(&m, &["--cores", "1", "--fifo", "5", "--emit", "slurm", "2"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("# srun sets no scheduling or memory policy")
    );
    // 24 cores: a 25th task has none.
    let out = common::at(&m, &["--cores", "1", "--emit", "slurm", "25"]);
    assert_status(&out, 125);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--emit slurm 25: task 24: no free core left after tasks 0-23 took CPUs 0-47 (of the allowed CPUs 0-47)\n"),
        "{err}"
    );
    assert!(err.contains("fits 24 tasks per node"), "{err}");
    // No count: refused before anything is read.
    let out = common::at(&m, &["--cores", "1", "--emit", "slurm"]);
    assert_status(&out, 125);
}

/// `--emit k8s`: whole cores as integer CPUs (2 cores × 2 threads = 4),
/// requests = limits, the CRI-O annotations as comments.
#[test]
fn emit_k8s_whole_cores() {
    let m = machine("cadvisor/xeon4214_2socket");
    let out = common::at(&m, &["--cores", "2", "--emit", "k8s", "--", "/app"]);
    assert_status(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("    cpu: \"4\"\n").count(), 2, "{text}");
    assert!(text.contains("full-pcpus-only=true"), "{text}");
    assert!(text.contains("#   cpu-quota.crio.io: \"disable\""));
    assert!(text.contains("#   irq-load-balancing.crio.io: \"disable\""));
    assert!(
        text.contains("\"--cores\", \"2\", \"--\", \"/app\"]"),
        "{text}"
    );
    let no_smt = machine("cadvisor/xeon5218_nohyperthread_2socket_nohotplug");
    let out = common::at(&no_smt, &["--cores", "2", "--emit", "k8s"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("    cpu: \"2\"\n").count(), 2, "{text}");
    assert!(!text.contains("full-pcpus-only"));
}

/// Every emitted file carries the fingerprint; --check-emitted accepts it
/// on the machine it was emitted for and refuses (125) it on another,
/// naming both shapes.
#[test]
fn check_emitted_refuses_another_machine_type() {
    let m = machine("cadvisor/xeon4214_2socket");
    let dir = common::tempdir();
    for (name, args) in [
        (
            "unit.service",
            vec!["--cores", "2", "--emit", "systemd", "--", "/bin/true"],
        ),
        ("pod.yaml", vec!["--cores", "2", "--emit", "k8s"]),
        ("job.sh", vec!["--cores", "2", "--emit", "slurm", "2"]),
    ] {
        let out = common::at(&m, &args);
        assert_status(&out, 0);
        let file = dir.path().join(name);
        std::fs::write(&file, &out.stdout).unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("# pinrun-topology: fnv1a64=")
                && text.contains(" cpus=48 cores=24 packages=2 nodes=1"),
            "{text}"
        );
        let f = file.to_str().unwrap();
        assert_status(&common::at(&m, &["--check-emitted", f]), 0);
        let other = common::at(machine("cadvisor/epyc7402"), &["--check-emitted", f]);
        assert_status(&other, 125);
        let err = String::from_utf8_lossy(&other.stderr);
        assert!(
            err.contains(
                "it was emitted for 48 CPUs in 24 cores, 2 packages, 1 node; the dump has 42 CPUs"
            ),
            "{err}"
        );
    }
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "[Service]\nCPUAffinity=1\n").unwrap();
    assert_status(
        &common::at(&m, &["--check-emitted", plain.to_str().unwrap()]),
        125,
    );
}

/// `--emit systemd --cgroup`: AllowedCPUs= and AllowedMemoryNodes= equal
/// the plan (node 1's first core on the 2-node epyc7402 dump:
/// --node 1 --cores 1), and systemd-analyze verify accepts the unit.
#[test]
fn emit_systemd_cgroup_is_a_valid_unit() {
    let m = machine("cadvisor/xeon4214_2socket");
    let out = common::at(
        &m,
        &[
            "--cores",
            "2",
            "--smt",
            "--membind",
            "--emit",
            "systemd",
            "--cgroup",
            "--",
            "/bin/true",
        ],
    );
    assert_status(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("\nCPUAffinity=0-1 24-25\n"), "{text}");
    assert!(text.contains("\nAllowedCPUs=0-1 24-25\n"), "{text}");
    assert!(text.contains("\nAllowedMemoryNodes=0\n"), "{text}");
    let unit = format!("[Unit]\nDescription=pinrun test\n{text}");
    let Some((ok, err)) = common::systemd_verify("pinrun-fleet-test.service", &unit) else {
        return;
    };
    assert!(
        ok && !err.contains("pinrun-fleet-test.service:"),
        "systemd-analyze verify: {err}"
    );
}

/// Address space a run on hostile input may use (debug build).
const HOSTILE_MEMORY: u64 = 512 << 20;

/// `pinrun --sysroot root ARGS` under [`HOSTILE_MEMORY`] (`RLIMIT_AS`)
/// and a 60 s timeout (the fuzz_trees pattern): a blow-up fails the run.
fn capped(root: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pinrun"));
    cmd.env("PINRUN_CONFIG", "")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .arg("--sysroot")
        .arg(root)
        .args(args);
    common::run_capped(cmd, HOSTILE_MEMORY, std::time::Duration::from_secs(60))
}

/// A hostile kubelet state file at Root's 4 MiB read cap: 150 000 entries
/// each assigning `0-4194303` (the largest cpulist, 512 KiB as a bitmap;
/// the old parser took 21.8 GB). The lists are clipped to the dump's CPUs
/// (0-47), so the run stays in 512 MiB, the claims it reports are CPUs
/// 0-47, and the refusal names 8 of them and counts the rest.
#[test]
fn hostile_kubelet_state_is_bounded() {
    let root = common::tempdir();
    common::copy_tree(&common::field_case("k8s-cpuset-unsettled"), root.path());
    let n = 150_000;
    let mut text = String::from(r#"{"policyName":"static","defaultCpuSet":"0-1","entries":{"#);
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(r#""p{i}":{{"c":"0-4194303"}}"#));
    }
    text.push_str("}}");
    assert!(text.len() < 4 << 20, "{}", text.len());
    common::write_file(root.path(), "var/lib/kubelet/cpu_manager_state", &text);
    for args in [
        &["--dry-run", "--cores", "1", "--", "/bin/true"][..],
        &["--check", "--json", "--cores", "1"][..],
    ] {
        let out = capped(root.path(), args);
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("(CPUs 0-47 by kubelet pod p0 container c; ")
                && err.contains(&format!("; and {} more claims)", n - 8)),
            "{}",
            &err[..err.len().min(2000)]
        );
        assert!(err.len() < 4096, "{} bytes of message", err.len());
    }
}

/// `--check-emitted` reads its FILE as a bounded regular file: a device
/// (/dev/zero once took 5.5 GB), a FIFO (once blocked forever) and a
/// directory are refused by type, a file over 1 MiB by size, a missing
/// file in the house style (the errno's words, no "(os error 2)").
#[test]
fn check_emitted_reads_a_bounded_regular_file() {
    let m = machine("cadvisor/xeon4214_2socket");
    let dir = common::tempdir();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let big = dir.path().join("big.service");
    std::fs::write(&big, "#".repeat((1 << 20) + 1)).unwrap();
    let cases = [
        (
            "/dev/zero".to_string(),
            "--check-emitted: /dev/zero is not a regular file",
        ),
        (fifo.display().to_string(), "is not a regular file"),
        (dir.path().display().to_string(), "is not a regular file"),
        (big.display().to_string(), "is larger than 1024 KiB"),
        (
            "/nonexistent/unit.service".to_string(),
            "--check-emitted: cannot open /nonexistent/unit.service: no such file or directory\n",
        ),
    ];
    for (file, want) in cases {
        let out = capped(&m, &["--check-emitted", &file]);
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(want) && !err.contains("os error"),
            "{file}: {err}"
        );
        assert!(err.contains("\nhint: "), "{err}");
    }
}

/// `--check-emitted` refuses what the fingerprint alone let through: a
/// CPU or node list edited to name what the machine lacks (the dump has
/// CPUs 0-47 and node 0), two fingerprint lines, a fingerprint line
/// without its counts; below --sysroot it names the dump, not "this
/// machine".
#[test]
fn check_emitted_checks_the_unit_lists_and_one_fingerprint() {
    let m = machine("cadvisor/xeon4214_2socket");
    let out = common::at(
        &m,
        &[
            "--cores",
            "2",
            "--membind",
            "--emit",
            "systemd",
            "--cgroup",
            "--",
            "/bin/true",
        ],
    );
    assert_status(&out, 0);
    let unit = String::from_utf8(out.stdout).unwrap();
    let fp = unit
        .lines()
        .find(|l| l.contains("pinrun-topology:"))
        .unwrap()
        .to_string();
    let dir = common::tempdir();
    let check = |name: &str, text: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        common::at(&m, &["--check-emitted", f.to_str().unwrap()])
    };
    // srun's lists too: map_cpu: CPU ids, mask_cpu: hex masks (CPUs 0,24
    // and 1,25 for two tasks of one core with --smt).
    let emit = |args: &[&str]| {
        let out = common::at(&m, args);
        assert_status(&out, 0);
        String::from_utf8(out.stdout).unwrap()
    };
    let slurm = emit(&["--cores", "1", "--emit", "slurm", "2"]);
    assert!(slurm.contains("map_cpu:0,1 COMMAND"), "{slurm}");
    let slurm_masks = emit(&["--cores", "1", "--smt", "--emit", "slurm", "2"]);
    assert!(
        slurm_masks.contains("mask_cpu:0x1000001,0x2000002"),
        "{slurm_masks}"
    );
    for (name, text) in [("ok.sh", &slurm), ("masks-ok.sh", &slurm_masks)] {
        assert_status(&check(name, text), 0);
    }
    let ok = check("ok.service", &unit);
    assert_status(&ok, 0);
    assert!(
        String::from_utf8_lossy(&ok.stdout).contains(&format!(
            "topology matches the dump {} (48 CPUs in 24 cores, 2 packages, 1 node",
            m.display()
        )),
        "{ok:?}"
    );
    for (name, text, want) in [
        (
            "cpu.service",
            format!("{unit}CPUAffinity=7 96\n"),
            "CPUAffinity=7,96 names CPU 96, which the dump",
        ),
        (
            "allowed.service",
            format!("{unit}AllowedCPUs=0-63\n"),
            "AllowedCPUs=0-63 names CPUs 48-63, which the dump",
        ),
        (
            "mems.service",
            format!("{unit}AllowedMemoryNodes=1\n"),
            "AllowedMemoryNodes=1 names node 1, which the dump",
        ),
        (
            "numa.service",
            format!("{unit}NUMAMask=0,3\n"),
            "NUMAMask=0,3 names node 3, which the dump",
        ),
        (
            "two.service",
            format!(
                "{unit}# pinrun-topology: fnv1a64=0000000000000000 cpus=48 cores=24 packages=2 nodes=1\n"
            ),
            "has more than one \"pinrun-topology:\" line",
        ),
        (
            "short.service",
            unit.replace(&fp, "# pinrun-topology: fnv1a64=0000000000000000"),
            "\"pinrun-topology:\" line is malformed",
        ),
        (
            "job.sh",
            slurm.replace("map_cpu:0,1 ", "map_cpu:0,99 "),
            "srun --cpu-bind map_cpu (CPUs 0,99) names CPU 99, which the dump",
        ),
        (
            "masks.sh",
            slurm_masks.replace("mask_cpu:0x1000001,", "mask_cpu:0x1000000000001,"),
            "srun --cpu-bind mask_cpu (CPUs 0-1,25,48) names CPU 48, which the dump",
        ),
    ] {
        let out = check(name, &text);
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains("this machine"), "{name}: {err}");
    }
}

/// A Guaranteed pod on a pure cgroup v1 node (no `0::` line in
/// /proc/self/cgroup, KUBERNETES_SERVICE_HOST unset), with the cpuset and
/// kubelet state of k8s-cpuset-unsettled once settled (2-3,26-27 for
/// container app): the pod is recognised from its v1 cpuset and
/// cpu,cpuacct lines, with kubelet's cgroupfs and systemd drivers, so its
/// own kubelet claim does not block it (it was refused "CPUs 2-3,26-27
/// claimed by kubelet pod <its own uid> container app").
#[test]
fn cgroup_v1_pod_is_recognised() {
    let uid = "5a3c1f9e-8d2b-4e6a-9f10-3b7c2d1e4a55";
    let id = "9f2e6c1b7a04d3e5";
    let case = common::field_case("k8s-cpuset-unsettled");
    let cgroupfs = format!("/kubepods/pod{uid}/{id}");
    let systemd = format!(
        "/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{id}.scope",
        uid.replace('-', "_")
    );
    for path in [cgroupfs, systemd] {
        let root = common::tempdir();
        let r = root.path();
        common::write_file(
            r,
            "proc/self/cgroup",
            &format!("12:cpuset:{path}\n11:cpu,cpuacct:{path}\n1:name=systemd:{path}\n"),
        );
        common::write_file(
            r,
            "proc/self/mountinfo",
            "31 25 0:27 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpuset\n32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct\n",
        );
        for f in ["cpuset.effective_cpus", "cpuset.cpus"] {
            common::write_file(r, &format!("sys/fs/cgroup/cpuset{path}/{f}"), "2-3,26-27\n");
        }
        for rel in ["sys/devices", "proc/sys", "var"] {
            common::copy_tree(&case.join(rel), &r.join(rel));
        }
        let v = dry(r, &["--cores", "1"], &[]);
        assert_eq!(common::ids(&v["cpus"]), vec![2], "{path}: {v}");
        let pool = with(&v, "k8s-pool");
        assert_eq!(pool.len(), 1, "{path}: {v}");
        assert!(
            pool[0]["message"].as_str().unwrap().contains(&format!(
                "pod {uid} (Guaranteed): container app has exclusive CPUs 2-3,26-27"
            )),
            "{path}: {v}"
        );
        assert!(with(&v, "cpu-claimed").is_empty(), "{path}: {v}");
    }
}

/// `--emit k8s` emits nothing that fails on deployment: fixed CPU or node
/// lists are refused (kubelet's static CPU manager chooses the CPUs, so
/// `pinrun --cpus 1` in the pod would be refused whenever kubelet assigns
/// another); a plan whose scheduling needs CAP_SYS_NICE in a container
/// (sched(7): a real-time policy or SCHED_DEADLINE, or a nice value below
/// 0, with a container's RLIMIT_RTPRIO and RLIMIT_NICE of 0) adds it in
/// securityContext, and only then; one CPU is "1 CPU".
#[test]
fn emit_k8s_deploys() {
    let m = machine("cadvisor/xeon4214_2socket");
    for args in [
        &["--cpus", "1"][..],
        &["--cpus", "all"][..],
        &["--node", "0", "--cores", "1"][..],
    ] {
        let out = common::at(&m, &[args, &["--emit", "k8s", "--", "/app"]].concat());
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("kubelet's static CPU manager chooses which CPUs the container gets")
                && err.contains("hint: ask for a count, e.g. pinrun --cores 2 --emit k8s"),
            "{args:?}: {err}"
        );
    }
    let cap = "securityContext:\n  capabilities:\n    add: [\"SYS_NICE\"]\n";
    for (args, needs) in [
        (
            &["--fifo", "50", "--membind"][..],
            Some("# SCHED_FIFO: needs CAP_SYS_NICE"),
        ),
        (&["--rr", "1"][..], Some("# SCHED_RR: needs CAP_SYS_NICE")),
        (
            &[
                "--cores",
                "24",
                "--smt",
                "--deadline",
                "--sched-runtime",
                "1ms",
                "--sched-deadline",
                "5ms",
            ][..],
            Some("# SCHED_DEADLINE: needs CAP_SYS_NICE"),
        ),
        (&["--nice", "-5"][..], Some("# nice -5: needs CAP_SYS_NICE")),
        (&["--nice", "5"][..], None),
        (&["--batch"][..], None),
        (&[][..], None),
    ] {
        let cores: &[&str] = if args.contains(&"--cores") {
            &[]
        } else {
            &["--cores", "1"]
        };
        let out = common::at(
            &m,
            &[cores, args, &["--emit", "k8s", "--", "/app"]].concat(),
        );
        assert_status(&out, 0);
        let text = String::from_utf8_lossy(&out.stdout);
        match needs {
            Some(why) => assert!(text.contains(why) && text.contains(cap), "{args:?}: {text}"),
            None => assert!(!text.contains("SYS_NICE"), "{args:?}: {text}"),
        }
    }
    // A memory policy on a 4-node machine: set_mempolicy(2), which the
    // RuntimeDefault seccomp profile allows only with CAP_SYS_NICE.
    let numa = machine("cri-resource-manager/2-socket-4-node-40-core");
    let out = common::at(&numa, &["--cores", "1", "--membind", "--emit", "k8s"]);
    assert_status(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("# the bind memory policy (set_mempolicy, which the RuntimeDefault seccomp profile allows only with CAP_SYS_NICE): needs CAP_SYS_NICE") && text.contains(cap),
        "{text}"
    );
    let no_smt = machine("cadvisor/xeon5218_nohyperthread_2socket_nohotplug");
    let out = common::at(&no_smt, &["--cores", "1", "--emit", "k8s"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\n# 1 CPU (1 whole core) from kubelet's"),
        "{text}"
    );
}

/// `--exclusive --emit systemd [--cgroup]`: the ExecStart= pinrun chooses
/// and claims free cores at each start, so the unit fixes no
/// CPUAffinity=, AllowedCPUs=, AllowedMemoryNodes= or NUMA policy (two
/// units from one request were pinned to core 0 both and collided);
/// without --exclusive the lists stay (CPU 0, node 0: the first core).
#[test]
fn emit_systemd_exclusive_leaves_the_cores_to_launch_time() {
    let m = machine("cadvisor/xeon4214_2socket");
    let args = [
        "--cores",
        "1",
        "--membind",
        "--emit",
        "systemd",
        "--cgroup",
        "--",
        "/app",
    ];
    let out = common::at(&m, &[&["--exclusive"][..], &args].concat());
    assert_status(&out, 0);
    let unit = String::from_utf8_lossy(&out.stdout);
    for key in [
        "CPUAffinity=",
        "AllowedCPUs=",
        "AllowedMemoryNodes=",
        "NUMAMask=",
        "NUMAPolicy=",
    ] {
        assert!(!unit.lines().any(|l| l.starts_with(key)), "{key}: {unit}");
    }
    assert!(
        unit.lines().any(|l| l.starts_with("ExecStart=")
            && l.contains(" --exclusive --cores 1 --membind -- /app")),
        "{unit}"
    );
    let out = common::at(&m, &args);
    let unit = String::from_utf8_lossy(&out.stdout);
    for key in ["CPUAffinity=0", "AllowedCPUs=0", "AllowedMemoryNodes=0"] {
        assert!(unit.lines().any(|l| l == key), "{key}: {unit}");
    }
}

/// Each fleet refusal names its own cause (finding 4 of the testers):
/// the format asked for, not systemd; a count too large or zero, not a
/// missing one; a later Slurm task that finds its CPUs taken by the
/// earlier ones, not a cpuset that contradicts itself ("CPU 1 is outside
/// the cpuset ... = 0-1"); a negative duration, not a missing unit.
#[test]
fn fleet_refusals_name_their_cause() {
    let m = machine("cadvisor/xeon4214_2socket");
    for (args, want) in [
        (
            &["--cores", "1", "--omp=cores", "--emit", "slurm", "2"][..],
            "pinrun: --omp: --emit slurm cannot say it in srun options\nhint: run pinrun inside each task",
        ),
        (
            &["--cores", "1", "--thread-map", "w1=@0", "--emit", "k8s"][..],
            "pinrun: --thread-map: --emit k8s cannot say it in a pod spec\nhint: run pinrun as the container's command",
        ),
        (
            &["--cores", "1", "--omp=cores", "--emit", "systemd"][..],
            "pinrun: --omp: --emit systemd cannot say it in unit directives\nhint: keep pinrun as the ExecStart= prefix",
        ),
        (
            &["--cores", "1", "--emit", "slurm", "99999999999"][..],
            "pinrun: --emit slurm: 99999999999 tasks per node is too large (at most 4294967295)\n",
        ),
        (
            &["--cores", "1", "--emit", "slurm", "0"][..],
            "pinrun: --emit slurm: 0 tasks per node is not a count: at least 1 task is needed\n",
        ),
        (
            &["--cpus", "1", "--emit", "slurm", "2"][..],
            "pinrun: --emit slurm 2: task 1: --cpus names the same CPUs for every task, and task 0 took CPUs 1,25\nhint: ask for a count instead (--cores N)",
        ),
        (
            &["--cores", "13", "--emit", "slurm", "2"][..],
            "pinrun: --emit slurm 2: task 1: no free core left after task 0 took CPUs 0-12,24-36 (of the allowed CPUs 0-47)\nhint: this placement fits 1 task per node",
        ),
        (
            &["--settle=-1s", "--cores", "1", "--dry-run"][..],
            "pinrun: --settle: \"-1s\" is negative: --settle takes from 1ns to about 292 years (2^63-1 ns)\n",
        ),
    ] {
        let out = common::at(&m, args);
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let out = pinrun()
        .args(["--probe=-1s", "--cores", "1", "--", "/bin/true"])
        .output()
        .unwrap();
    assert_status(&out, 125);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("pinrun: --probe: \"-1s\" is negative: --probe takes from 10ms to 60s\n"),
        "{err}"
    );
}

/// `--settle` below a dump waits for nothing, and the unsettled hint says
/// so instead of recommending `--settle=10s` again; outside Kubernetes
/// `--settle` is accepted (one command line for a whole fleet) and `-v`
/// says there is nothing to wait for.
#[test]
fn settle_says_what_it_waited_for() {
    let case = common::field_case("k8s-cpuset-unsettled");
    let v = dry(&case, &["--cores", "1", "--settle=5s"], &[]);
    let f = with(&v, "k8s-cpuset-unsettled");
    assert_eq!(f.len(), 1, "{v}");
    assert!(
        f[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("the kernel moves this process to them and the plan's CPUs are lost"),
        "{v}"
    );
    assert_eq!(
        f[0]["hint"],
        "--settle waits only on the live machine, not below --sysroot (pinrun plans once the cpuset is 2-3,26-27)"
    );
    let v = dry(&case, &["--cores", "1"], &[]);
    assert_eq!(
        with(&v, "k8s-cpuset-unsettled")[0]["hint"],
        "wait for kubelet with --settle=10s (pinrun plans once the cpuset is 2-3,26-27)"
    );
    let m = machine("cadvisor/xeon4214_2socket");
    let note = "pinrun: note: --settle: not in a Kubernetes container (no kubepods cgroup, KUBERNETES_SERVICE_HOST unset): nothing to wait for\n";
    let run = |extra: &[&str]| {
        pinrun()
            .env_remove("KUBERNETES_SERVICE_HOST")
            .arg("--sysroot")
            .arg(&m)
            .args(["--settle=1s", "--dry-run", "--cores", "1"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["-v"]);
    assert_status(&out, 0);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(note),
        "{out:?}"
    );
    let out = run(&[]);
    assert_status(&out, 0);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("--settle"),
        "{out:?}"
    );
}

/// Hostile command words for the emitters (issue 34 item 5): options of
/// srun, kubelet's `$(VAR)` and `$$`, shell metacharacters, quotes,
/// YAML's line breaks (U+0085 NEL, U+2028) and controls, an empty word.
const HOSTILE: &[&str] = &[
    "-o",
    "/etc/cron.d/x",
    "--export=ALL,LD_PRELOAD=/tmp/x.so",
    "$(HOME)",
    "$$",
    "$HOME",
    "$(",
    "a b",
    "'q'",
    "\"dq\"",
    "back\\slash",
    "new\nline",
    "tab\t",
    "\u{85}nel",
    "\u{2028}ls",
    "\u{7f}del",
    "é",
    "*",
    "~",
    "`id`",
    ";",
    "&&",
    "",
    "{a,b}",
    "#c",
    "-",
];

/// `--emit slurm`: the srun line, run by bash with a stand-in `srun` that
/// prints its argv, passes exactly the words given after `--` (getopt's
/// end of options: a word starting with `-` is the program, never an srun
/// option).
#[test]
fn emit_slurm_runs_exactly_the_argv_given() {
    let m = machine("cadvisor/xeon4214_2socket");
    let mut args = vec!["--cores", "1", "--emit", "slurm", "2", "--"];
    args.extend(HOSTILE);
    let out = common::at(&m, &args);
    assert_status(&out, 0);
    let text = String::from_utf8(out.stdout).unwrap();
    // The line is the last of the output; a quoted word may hold a newline.
    let line = &text[text.find("\nsrun ").expect("srun line") + 1..];
    let dir = common::tempdir();
    let fake = dir.path().join("srun");
    std::fs::write(&fake, "#!/bin/sh\nprintf '%s\\0' \"$@\"\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = std::process::Command::new("bash")
        .arg("-c")
        .arg(line)
        .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let argv: Vec<String> = String::from_utf8(run.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(String::from)
        .collect();
    let after = argv.iter().position(|a| a == "--").expect("--");
    assert!(
        argv[..after]
            .iter()
            .all(|a| a.starts_with("--ntasks") || a.starts_with("--cpu-bind")),
        "{argv:?}"
    );
    assert_eq!(
        argv[after + 1..],
        HOSTILE.iter().map(|s| s.to_string()).collect::<Vec<_>>()[..]
    );
}

/// `--emit k8s`: the container command, read by a YAML reader (PyYAML,
/// YAML 1.1 like kubectl's) and expanded as kubelet expands `command`
/// (`$$` → `$`, `$(VAR)` → the variable, an unknown one left as written:
/// `third_party/forked/golang/expansion`, with HOME defined to show an
/// expansion would happen), is exactly pinrun's argv.
#[test]
fn emit_k8s_command_is_exactly_the_argv_given() {
    let m = machine("cadvisor/xeon4214_2socket");
    let mut args = vec!["--cores", "1", "--emit", "k8s", "--"];
    args.extend(HOSTILE);
    let out = common::at(&m, &args);
    assert_status(&out, 0);
    let script = r#"
import json, sys, yaml
def expand(s, env):
    out, i = "", 0
    while i < len(s):
        if s[i] == "$" and i + 1 < len(s):
            n = s[i + 1]
            if n == "$":
                out += "$"; i += 2; continue
            if n == "(":
                j = s.find(")", i + 2)
                if j < 0:
                    out += "$("; i += 2; continue
                name = s[i + 2:j]
                out += env.get(name, "$(" + name + ")"); i = j + 1; continue
            out += "$" + n; i += 2; continue
        out += s[i]; i += 1
    return out
d = yaml.safe_load(sys.stdin.buffer.read().decode())
print(json.dumps([expand(w, {"HOME": "/root"}) for w in d["command"]]))
"#;
    let Some(res) = common::python_yaml("k8s command", script, &out.stdout) else {
        return;
    };
    let got: Vec<String> = serde_json::from_slice(&res).unwrap();
    let mut want: Vec<String> = ["pinrun", "--cores", "1", "--"].map(String::from).to_vec();
    want.extend(HOSTILE.iter().map(|s| s.to_string()));
    assert_eq!(got, want);
}

/// A word that is not UTF-8 cannot be carried by an srun line or a pod
/// spec without being replaced: refused (125), naming it.
#[test]
fn emit_k8s_and_slurm_refuse_words_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let m = machine("cadvisor/xeon4214_2socket");
    let bad = std::ffi::OsStr::from_bytes(b"x\xff");
    for format in [&["k8s"][..], &["slurm", "2"][..]] {
        let out = common::pinrun()
            .arg("--sysroot")
            .arg(&m)
            .args(["--cores", "1", "--emit"])
            .args(format)
            .arg("--")
            .arg("/app")
            .arg(bad)
            .output()
            .unwrap();
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is not UTF-8"), "{format:?}: {err}");
    }
}

/// A unit's `User=` must search every directory above its `ExecStart=`
/// binary: the walk agrees with the kernel, asked as user nobody
/// (setpriv, `test -x`), for a binary under a root-owned 0700 directory
/// (as /root/.cargo/bin/pinrun) and under a 0755 one.
#[test]
fn exec_path_blocked_for_the_units_user_matches_the_kernel() {
    use std::os::unix::fs::PermissionsExt;
    if !common::is_root() || !std::path::Path::new("/usr/bin/setpriv").exists() {
        return common::skip("needs root and setpriv to ask the kernel as nobody");
    }
    let t = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (uid, gids) = pinrun::fleet::access::user_ids("nobody").expect("user nobody");
    for (mode, blocked) in [(0o700, true), (0o755, false)] {
        let dir = t.path().join(format!("d{mode:o}"));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let bin = dir.join("bin/pinrun");
        let cp = std::process::Command::new("cp")
            .arg("/bin/true")
            .arg(&bin)
            .status()
            .unwrap();
        assert!(cp.success(), "cp: {cp}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        let kernel = nobody_can_execute(&bin);
        assert_eq!(kernel, !blocked, "the kernel, mode {mode:o}");
        let got = pinrun::fleet::access::blocked_dir(&bin, uid, &gids);
        assert_eq!(got.is_some(), blocked, "{got:?}");
        if let Some(b) = got {
            assert_eq!((b.dir, b.mode, b.uid), (dir.clone(), mode, 0));
        }
    }
}

/// `--emit systemd --unit-user nobody` with pinrun under a root-owned 0700
/// directory (as /root/.cargo/bin/pinrun): `User=nobody` and a warning
/// naming the path, the blocking directory (mode, owner) and where to
/// install; the ExecStart= pinrun keeps no --unit-user (it needs --emit).
#[test]
fn emitted_unit_warns_when_its_user_cannot_reach_pinrun() {
    use std::os::unix::fs::PermissionsExt;
    if !common::is_root() {
        return common::skip("needs root to own a 0700 directory nobody cannot search");
    }
    let t = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = t.path().join("root");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    let bin = home.join("bin/pinrun");
    // cp(1), not std::fs::copy: no write descriptor a child of another
    // test thread could inherit (ETXTBSY, common::world_readable_copy).
    let cp = std::process::Command::new("cp")
        .arg(env!("CARGO_BIN_EXE_pinrun"))
        .arg(&bin)
        .status()
        .unwrap();
    assert!(cp.success(), "cp: {cp}");
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let emit = || {
        let out = std::process::Command::new(&bin)
            .args([
                "--emit",
                "systemd",
                "--unit-user",
                "nobody",
                "--exclusive",
                "--cores",
                "1",
                "--",
                "/bin/true",
            ])
            .output()
            .unwrap();
        assert_status(&out, 0);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let unit = emit();
    let b = bin.display();
    assert!(
        unit.contains(&format!(
            "\nExecStart={b} --exclusive --cores 1 -- /bin/true\nUser=nobody\n"
        )),
        "{unit}"
    );
    let want = format!(
        "# warning: User=nobody cannot reach {b}: {} is mode 0700, owner uid 0 gid 0 (no search permission for uid 65534; path_resolution(7)); install pinrun where every user can reach it: cargo install --locked --path . --root /usr/local (/usr/local/bin/pinrun), or the Debian package (/usr/bin/pinrun)\n",
        home.display()
    );
    assert!(unit.contains(&want), "{unit}");
    // With the directory searchable, no warning.
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!emit().contains("cannot reach"));
}

/// Whether `nobody` may execute `path`, asked of the kernel: setpriv(1)
/// as uid/gid 65534 without capabilities, `test -x` (access(2) X_OK).
fn nobody_can_execute(path: &std::path::Path) -> bool {
    std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--init-groups",
            "--inh-caps=-all",
        ])
        .args(["test", "-x"])
        .arg(path)
        .status()
        .unwrap()
        .success()
}

/// A new user's trial: `--emit systemd --unit-user USER -- app` (a bare
/// name) was not checked, and `--check-emitted` did not read `User=`. The
/// class, every way ExecStart= names a binary: a bare name, resolved on
/// systemd's fixed search path (systemd.service(5)) as a shell's `test
/// -x` walk of those directories finds it, or found nowhere; an absolute
/// path under a directory nobody cannot search; a file nobody cannot
/// execute; and one it can. The emitted unit warns, and `--check-emitted`
/// of it refuses (125), exactly when the kernel (setpriv as nobody, `test
/// -x`) says nobody cannot execute it.
#[test]
fn units_user_access_is_checked_for_every_exec_start_and_by_check_emitted() {
    use std::os::unix::fs::PermissionsExt;
    // A bare name: systemd's search path, against sh's `test -x` walk.
    let dirs = pinrun::fleet::access::SYSTEMD_PATH.join(" ");
    let sh = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "for d in {dirs}; do [ -f \"$d/true\" ] && [ -x \"$d/true\" ] && {{ echo \"$d/true\"; break; }}; done"
        ))
        .output()
        .unwrap();
    let first = String::from_utf8_lossy(&sh.stdout).trim().to_string();
    assert_eq!(
        pinrun::fleet::access::systemd_exec("true"),
        Some(std::path::PathBuf::from(&first))
    );
    assert_eq!(
        pinrun::fleet::access::systemd_exec("no-such-command-pinrun-test"),
        None
    );
    if !common::is_root() || !std::path::Path::new("/usr/bin/setpriv").exists() {
        return common::skip("needs root and setpriv to ask the kernel as nobody");
    }
    let t = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let make = |name: &str, dir_mode: u32, file_mode: u32| {
        let dir = t.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("app");
        let cp = std::process::Command::new("cp")
            .arg("/bin/true")
            .arg(&bin)
            .status()
            .unwrap();
        assert!(cp.success());
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(file_mode)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(dir_mode)).unwrap();
        bin.to_string_lossy().into_owned()
    };
    let cases = [
        ("true".to_string(), first.clone()),
        (make("closed", 0o700, 0o755), String::new()),
        (make("private", 0o755, 0o700), String::new()),
        (make("open", 0o755, 0o755), String::new()),
        ("no-such-command-pinrun-test".to_string(), String::new()),
    ];
    for (word, resolved) in cases {
        let path = if resolved.is_empty() {
            word.clone()
        } else {
            resolved
        };
        let runs = std::path::Path::new(&path).is_absolute()
            && std::path::Path::new(&path).exists()
            && nobody_can_execute(std::path::Path::new(&path));
        let out = pinrun()
            .env("PINRUN_CONFIG", "")
            .args([
                "--emit",
                "systemd",
                "--cpus",
                "0",
                "--unit-user",
                "nobody",
                "--",
                &word,
            ])
            .output()
            .unwrap();
        assert_status(&out, 0);
        let unit = String::from_utf8_lossy(&out.stdout).into_owned();
        let warned: Vec<&str> = unit
            .lines()
            .filter(|l| {
                l.starts_with("# warning: User=nobody") || l.starts_with("# warning: ExecStart=")
            })
            .collect();
        assert_eq!(warned.is_empty(), runs, "{word}: {unit}");
        let file = t.path().join("unit.service");
        std::fs::write(&file, &unit).unwrap();
        let check = pinrun()
            .env("PINRUN_CONFIG", "")
            .arg("--check-emitted")
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&check.stderr);
        assert_eq!(
            check.status.code(),
            Some(if runs { 0 } else { 125 }),
            "{word}: {err}"
        );
        if let Some(w) = warned.first() {
            // The same sentence, emitted and refused.
            let sentence = w.trim_start_matches("# warning: ");
            assert!(err.contains(sentence), "{word}: {err}");
        }
    }
}

/// A new user's trial: `--emit systemd` baked the path of the pinrun that
/// ran into ExecStart= (here the test build, under target/), which may
/// be gone when the unit starts. The unit warns, naming that path, when
/// its directory is not on PATH; with the directory on PATH it does not.
/// `--emit k8s` and `--emit slurm` bake no path: their command is the
/// bare `pinrun` of the image or node.
#[test]
fn a_unit_naming_an_uninstalled_pinrun_warns() {
    const UNIT: &[&str] = &[
        "--emit",
        "systemd",
        "--exclusive",
        "--cores",
        "1",
        "--",
        "/bin/true",
    ];
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_pinrun"));
    let emit = |path: &str| {
        let out = pinrun()
            .env("PINRUN_CONFIG", "")
            .env("PATH", path)
            .args(UNIT)
            .output()
            .unwrap();
        assert_status(&out, 0);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let unit = emit("/usr/bin:/bin");
    assert!(
        unit.contains(&format!("\nExecStart={} --exclusive", exe.display())),
        "{unit}"
    );
    assert!(
        unit.contains(&format!(
            "# warning: ExecStart= runs {}, the pinrun that wrote this unit, which is neither on PATH nor under /usr, /bin, /sbin or /opt",
        exe.display()
        )) && unit.contains("cargo install --locked --path . --root /usr/local"),
        "{unit}"
    );
    let on_path = format!("{}:/usr/bin:/bin", exe.parent().unwrap().display());
    assert!(!emit(&on_path).contains("the pinrun that wrote this unit"));
    for (path, installed) in [
        ("/usr/local/bin/pinrun", true),
        ("/usr/bin/pinrun", true),
        ("/opt/pinrun/bin/pinrun", true),
        ("/tmp/x/pinrun", false),
        ("/home/u/src/pinrun/target/debug/pinrun", false),
    ] {
        assert_eq!(
            pinrun::fleet::access::installed(std::path::Path::new(path), Some("/usr/bin:/bin")),
            installed,
            "{path}"
        );
    }
    let k8s = pinrun()
        .env("PINRUN_CONFIG", "")
        .args(["--emit", "k8s", "--cores", "1", "--", "/bin/true"])
        .output()
        .unwrap();
    let k8s = String::from_utf8_lossy(&k8s.stdout);
    assert!(k8s.contains("command: [\"pinrun\", "), "{k8s}");
    assert!(!k8s.contains(&exe.display().to_string()), "{k8s}");
}
