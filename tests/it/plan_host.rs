//! `--plan-host` (issue 38) against OpenShift's own expectations: the 19
//! Performance Profile Creator profiles of `nto/_ppc-expected-profiles`
//! (PPC's inputs in `profileN.json`, the `spec.cpu` it produced in
//! `profileN.yaml`), each run on the machine dump of its must-gather;
//! and every emitted line read back by its owner's parser.

use crate::common;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A cpulist as a sorted list of CPU ids ("" is empty).
fn cpus(list: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out.sort_unstable();
    out
}

/// `spec.cpu` of a PPC profile: `reserved`, `isolated`, `offlined` (the
/// YAML PPC writes: two-space indents, unquoted cpulists).
fn spec_cpu(yaml: &str) -> BTreeMap<String, Vec<u32>> {
    let mut out = BTreeMap::new();
    let mut inside = false;
    for line in yaml.lines() {
        if line == "  cpu:" {
            inside = true;
            continue;
        }
        if inside {
            match line.strip_prefix("    ").and_then(|l| l.split_once(": ")) {
                Some((k, v)) => {
                    out.insert(k.to_string(), cpus(v.trim_matches('"')));
                }
                None => break,
            }
        }
    }
    out
}

/// The dump of a PPC must-gather. The bare-metal must-gather's worker-cnf
/// node is an 80-CPU Gold 6230 with siblings N/N+40 (INDEX.md; which of
/// the two worker1 snapshots upstream does not record: both are tried);
/// the SNO one a 12-CPU master without SMT.
fn dumps(must_gather: &str) -> &'static [&'static str] {
    match must_gather {
        "must-gather.bare-metal" => &[
            "nto/bare-metal-worker1.internal",
            "nto/old-bare-metal-worker1",
        ],
        "must-gather.sno" => &["nto/sno-sno", "nto/old-sno-ocp47sno-master-0"],
        other => panic!("no dump for {other}"),
    }
}

/// pinrun's options for PPC's inputs.
fn options(input: &Value) -> Vec<String> {
    let mut args = vec![
        "--plan-host".to_string(),
        "--housekeeping-count".into(),
        input["reserved-cpu-count"].to_string(),
    ];
    if let Some(n) = input["offlined-cpu-count"].as_u64() {
        args.extend(["--offline-count".into(), n.to_string()]);
    }
    if input["disable-ht"] == true {
        args.push("--no-smt".into());
    }
    if input["split-reserved-cpus-across-numa"] == true {
        args.push("--split-numa".into());
    }
    // PPC offlines whole sockets first unless the power mode is
    // ultra-low-latency (`getOfflinedCPUs`' highPowerConsumption); no
    // profile here asks for it, and pinrun has no such mode.
    assert_ne!(input["power-consumption-mode"], "ultra-low-latency");
    args
}

fn profiles() -> Vec<(String, Value, String)> {
    let dir = common::machine("nto/_ppc-expected-profiles");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(String::from)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let input = std::fs::read_to_string(dir.join(format!("{n}.json"))).unwrap();
            let yaml = std::fs::read_to_string(dir.join(format!("{n}.yaml"))).unwrap();
            (n, serde_json::from_str(&input).unwrap(), yaml)
        })
        .collect()
}

fn plan(dump: &str, args: &[String]) -> Value {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    common::dry_json(dump, &a)
}

/// Every PPC profile: pinrun's split on the must-gather's dump equals the
/// reserved, isolated and offlined sets PPC produced.
#[test]
fn the_19_ppc_profiles_split_as_ppc_did() {
    let profiles = profiles();
    assert_eq!(profiles.len(), 19, "the 19 PPC profiles");
    for (name, input, yaml) in &profiles {
        let want = spec_cpu(yaml);
        let args = options(input);
        let must_gather = input["must-gather-dir-path"].as_str().unwrap();
        for dump in dumps(must_gather) {
            let v = plan(dump, &args);
            let got = |k: &str| cpus(v[k].as_str().unwrap());
            let none = Vec::new();
            assert_eq!(
                got("housekeeping"),
                want["reserved"],
                "{name} on {dump}: reserved ({args:?})"
            );
            assert_eq!(
                got("latency"),
                want["isolated"],
                "{name} on {dump}: isolated ({args:?})"
            );
            assert_eq!(
                got("offline"),
                *want.get("offlined").unwrap_or(&none),
                "{name} on {dump}: offlined ({args:?})"
            );
        }
    }
}

/// PPC refuses an odd reserved count with SMT on ("can't allocate odd
/// number of CPUs from a NUMA Node", `getCPUsSequentially`); pinrun too,
/// naming the whole-core counts around it.
#[test]
fn a_count_splitting_a_core_is_refused_with_the_nearest_counts() {
    let out = common::pinrun()
        .arg("--sysroot")
        .arg(common::machine("nto/bare-metal-worker1.internal"))
        .args(["--plan-host", "--housekeeping-count", "5"])
        .output()
        .unwrap();
    common::assert_status(&out, 125);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("would split a core"), "{err}");
    assert!(
        err.contains("hint: the nearest counts that keep whole cores: --housekeeping-count 4 or --housekeeping-count 6"),
        "{err}"
    );
}

/// `--latency-cores N` on the bare-metal worker: 40 cores, so 36 cores
/// of housekeeping from CPU 0's core on, node 0 first; the 4 latency cores
/// are the last of node 1 (CPUs 33,35,37,39 and their siblings +40).
#[test]
fn latency_cores_leave_the_last_cores_of_the_last_node() {
    let v = plan(
        "nto/bare-metal-worker1.internal",
        &["--plan-host".into(), "--latency-cores".into(), "4".into()],
    );
    assert_eq!(
        cpus(v["latency"].as_str().unwrap()),
        vec![33, 35, 37, 39, 73, 75, 77, 79]
    );
}

/// The emitted kernel parameters read back by pinrun's own parser of
/// `/proc/cmdline` (which follows the kernel's: housekeeping_isolcpus_setup,
/// cpulist_parse) give the split's sets; the systemd CPUAffinity= value is
/// accepted by systemd's own parser (systemd-analyze verify of a unit with
/// it: the same parse_cpu_set_extend() as system.conf's [Manager]
/// CPUAffinity=); the PerformanceProfile and the kubelet configuration
/// load with PyYAML and carry the sets.
#[test]
fn emitted_lines_read_back_by_their_owners() {
    let dump = "nto/bare-metal-worker1.internal";
    let v = plan(
        dump,
        &[
            "--plan-host",
            "--housekeeping-count",
            "4",
            "--offline-count",
            "4",
        ]
        .map(String::from),
    );
    let hk = v["housekeeping"].as_str().unwrap().to_string();
    let lat = v["latency"].as_str().unwrap().to_string();
    let setting = |key: &str| {
        v["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == key)
            .unwrap_or_else(|| panic!("no {key} in {v}"))["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The kernel line as the kernel reads it: a copy of the dump whose
    // /proc/cmdline is the emitted line (it has no cpu/isolated nor
    // cpu/nohz_full, so pinrun derives them from the line with its
    // parsers of the kernel's), checked against the same split.
    let kernel = setting("kernel");
    let tree = common::tempdir();
    common::copy_tree(&common::machine(dump), tree.path());
    std::fs::write(tree.path().join("proc/cmdline"), format!("{kernel}\n")).unwrap();
    let out = common::pinrun()
        .arg("--sysroot")
        .arg(tree.path())
        .args([
            "--plan-host",
            "--housekeeping-count",
            "4",
            "--offline-count",
            "4",
            "--check",
            "--json",
        ])
        .output()
        .unwrap();
    let check: Value = serde_json::from_slice(&out.stdout).unwrap();
    let differing: Vec<&str> = check["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["setting"].as_str())
        .collect();
    for param in ["isolcpus=", "nohz_full=", "rcu_nocbs="] {
        assert!(
            !differing.contains(&param),
            "{param} differs after booting the emitted line: {check}"
        );
    }
    // What the line does not change is still named: the dump's IRQ
    // default affinity, its online CPUs.
    assert!(differing.contains(&"irqaffinity="), "{check}");
    assert!(
        kernel.split(' ').any(|a| a == format!("irqaffinity={hk}")),
        "{kernel}"
    );
    systemd_accepts_cpu_affinity(&setting("systemd"), &hk);
    for key in ["performance_profile", "kubelet"] {
        pyyaml_reads(&setting(key), key, &hk, &lat, &v["offline"]);
    }
    tmpfiles_take_the_cpus_offline(&setting("offline"), v["offline"].as_str().unwrap());
}

/// The tmpfiles.d lines, applied by systemd-tmpfiles itself below a root
/// whose cpuN/online files read 1: exactly the offline CPUs' files read 0
/// after (type `w` writes an existing file, tmpfiles.d(5)).
fn tmpfiles_take_the_cpus_offline(conf: &str, offline: &str) {
    let Ok(v) = std::process::Command::new("systemd-tmpfiles")
        .arg("--version")
        .output()
    else {
        return common::skip("systemd-tmpfiles is not installed");
    };
    if !v.status.success() {
        return common::skip("systemd-tmpfiles does not run here");
    }
    let root = common::tempdir();
    let cpu = root.path().join("sys/devices/system/cpu");
    for c in 0..80 {
        std::fs::create_dir_all(cpu.join(format!("cpu{c}"))).unwrap();
        std::fs::write(cpu.join(format!("cpu{c}/online")), "1\n").unwrap();
    }
    let file = root.path().join("50-pinrun-offline.conf");
    std::fs::write(&file, format!("{conf}\n")).unwrap();
    let out = std::process::Command::new("systemd-tmpfiles")
        .arg(format!("--root={}", root.path().display()))
        .arg("--create")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let now_off: Vec<u32> = (0..80)
        .filter(|c| {
            std::fs::read_to_string(cpu.join(format!("cpu{c}/online")))
                .unwrap()
                .trim()
                == "0"
        })
        .collect();
    assert_eq!(now_off, cpus(offline));
}

fn systemd_accepts_cpu_affinity(dropin: &str, hk: &str) {
    let value = dropin
        .lines()
        .find_map(|l| l.strip_prefix("CPUAffinity="))
        .expect("CPUAffinity=");
    assert_eq!(value, hk);
    let unit = format!("[Service]\nType=oneshot\nExecStart=/bin/true\nCPUAffinity={value}\n");
    let Some((_, err)) = common::systemd_verify("hk.service", &unit) else {
        return;
    };
    assert!(!err.contains("CPUAffinity"), "systemd-analyze: {err}");
}

fn pyyaml_reads(text: &str, key: &str, hk: &str, lat: &str, offline: &Value) {
    let script = r#"
import json, sys, yaml
d = yaml.safe_load(sys.stdin)
print(json.dumps(d))
"#;
    let Some(out) = common::python_yaml(key, script, text.as_bytes()) else {
        return;
    };
    let d: Value = serde_json::from_slice(&out).unwrap();
    if key == "kubelet" {
        assert_eq!(d["reservedSystemCPUs"], hk);
        assert_eq!(d["cpuManagerPolicy"], "static");
    } else {
        assert_eq!(d["spec"]["cpu"]["reserved"], hk);
        assert_eq!(d["spec"]["cpu"]["isolated"], lat);
        assert_eq!(d["spec"]["cpu"]["offlined"], *offline);
    }
}

/// Every fixture dump: a plan of one latency core either splits the host
/// into housekeeping, latency and offline CPUs that cover every present
/// CPU once (a CPU offline now stays offline: its topology is gone), with
/// the boot CPU (the lowest online one) housekeeping, or is refused (125)
/// with a reason, never a panic.
#[test]
fn every_dump_splits_into_disjoint_sets_or_says_why() {
    for dump in common::all_machines() {
        let out = common::pinrun()
            .arg("--sysroot")
            .arg(common::machine(&dump))
            .args(["--plan-host", "--latency-cores", "1", "--json"])
            .output()
            .unwrap();
        let code = out.status.code();
        if code == Some(125) {
            let err: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            assert!(err["error"]["message"].is_string(), "{dump}: {err}");
            continue;
        }
        assert_eq!(
            code,
            Some(0),
            "{dump}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (h, l) = (
            cpus(v["housekeeping"].as_str().unwrap()),
            cpus(v["latency"].as_str().unwrap()),
        );
        assert!(!h.is_empty() && !l.is_empty(), "{dump}: {v}");
        assert!(h.iter().all(|c| !l.contains(c)), "{dump}: overlap {v}");
        let show = common::show_json(&dump);
        let online = common::ids(&show["online"]);
        assert!(
            h.contains(&online[0]),
            "{dump}: boot CPU {} not housekeeping: {v}",
            online[0]
        );
        let mut all: Vec<u32> = h.iter().chain(&l).copied().collect();
        all.extend(cpus(v["offline"].as_str().unwrap()));
        all.extend(cpus(v["smt_off"].as_str().unwrap()));
        all.sort_unstable();
        assert_eq!(all, cpus(show["present"].as_str().unwrap()), "{dump}: {v}");
    }
}

/// The bare-metal worker with CPUs 40-79 (every core's second CPU) offline
/// as `echo 0 > cpuN/online` leaves them (no topology/), and
/// `cpu/smt/control` = `smt`.
fn with_siblings_offline(smt: &str) -> tempfile::TempDir {
    let tree = common::tempdir();
    common::copy_tree(
        &common::machine("nto/bare-metal-worker1.internal"),
        tree.path(),
    );
    let cpu = tree.path().join("sys/devices/system/cpu");
    std::fs::write(cpu.join("online"), "0-39\n").unwrap();
    for c in 40..80 {
        let _ = std::fs::remove_dir_all(cpu.join(format!("cpu{c}/topology")));
        std::fs::write(cpu.join(format!("cpu{c}/online")), "0\n").unwrap();
    }
    std::fs::write(cpu.join("smt/control"), format!("{smt}\n")).unwrap();
    tree
}

fn host(tree: &Path, args: &[&str]) -> (i32, Value) {
    let out = common::pinrun()
        .arg("--sysroot")
        .arg(tree)
        .arg("--plan-host")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), v)
}

/// CPUs offline when the plan is made come back at the next boot unless
/// the plan keeps them off: with SMT off at run time and --no-smt they
/// are nosmt's (the line carries nosmt); taken offline by hand they go
/// into the offline block. A check judges what it can tell: 40 CPUs
/// offline where the split takes 4 differs; with SMT off it cannot tell a
/// sibling from a CPU --offline-count took, and says so.
#[test]
fn cpus_offline_now_are_kept_off_and_judged_by_what_can_be_told() {
    let off = with_siblings_offline("off");
    let (_, v) = host(off.path(), &["--housekeeping-count", "4", "--no-smt"]);
    assert_eq!(v["smt_off"], "40-79", "{v}");
    assert!(
        v["kernel_cmdline"].as_str().unwrap().ends_with(" nosmt"),
        "{v}"
    );
    let by_hand = with_siblings_offline("on");
    let (_, v) = host(by_hand.path(), &["--housekeeping-count", "4"]);
    assert_eq!(v["offline"], "40-79", "{v}");
    assert!(
        v["settings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["key"] == "offline"
                && s["text"]
                    .as_str()
                    .unwrap()
                    .contains("w /sys/devices/system/cpu/cpu79/online - - - - 0")),
        "{v}"
    );
    let (code, v) = host(
        by_hand.path(),
        &[
            "--housekeeping-count",
            "4",
            "--offline-count",
            "4",
            "--check",
        ],
    );
    assert_eq!(code, 1, "{v}");
    let offline: Vec<&Value> = v["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["setting"] == "offline CPUs (chcpu --disable)")
        .collect();
    assert_eq!(offline.len(), 1, "{v}");
    assert_eq!(offline[0]["have"], "40 CPUs offline: 40-79", "{v}");
    let (_, v) = host(
        off.path(),
        &[
            "--housekeeping-count",
            "4",
            "--offline-count",
            "4",
            "--no-smt",
            "--check",
        ],
    );
    let unjudged: Vec<&str> = v["unjudged"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u.as_str())
        .collect();
    assert!(
        unjudged[0].starts_with("which CPUs are offline (40-79)"),
        "{v}"
    );
    // The dump has no /proc/1/status: PID 1's affinity is not judged, and
    // what is not judged is no match (exit 1 even without a difference).
    assert!(
        unjudged.iter().any(|u| u.starts_with("PID 1's affinity")),
        "{v}"
    );
    assert_eq!(v["matches"], false, "{v}");
}

/// `--plan-host --check` without a size audits the running split: the
/// options that shape a split to plan are refused, not ignored.
#[test]
fn running_check_refuses_the_options_of_a_plan() {
    for extra in [
        &["--offline-count", "2"][..],
        &["--no-smt"],
        &["--split-numa"],
    ] {
        let out = common::pinrun()
            .arg("--sysroot")
            .arg(common::machine("nto/bare-metal-worker1.internal"))
            .args(["--plan-host", "--check"])
            .args(extra)
            .output()
            .unwrap();
        common::assert_status(&out, 125);
        assert!(String::from_utf8_lossy(&out.stderr).contains("shape a split to plan"));
    }
}

/// tuned's cpu-partitioning block sets what the kernel line does: domain
/// isolation through no_balance_cores and managed_irq through
/// isolate_managed_irq (tuned-profiles-cpu-partitioning(7)).
#[test]
fn the_tuned_block_isolates_as_the_kernel_line_does() {
    let v = plan(
        "nto/bare-metal-worker1.internal",
        &[
            "--plan-host".into(),
            "--housekeeping-count".into(),
            "4".into(),
        ],
    );
    let tuned = v["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "tuned")
        .unwrap();
    assert_eq!(
        tuned["text"],
        "isolated_cores=1,3-39,41,43-79\nno_balance_cores=1,3-39,41,43-79\nisolate_managed_irq=Y"
    );
}
