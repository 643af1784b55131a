//! Choosing cores by what the checks know (issue 31) on every machine dump
//! whose kernel isolates CPUs: a request with latency intent lands on the
//! isolated or nohz_full CPUs when they are free, never on the boot CPU
//! while another core fits; a request without it never lands on them.
//! The isolated and nohz_full CPUs of each dump are written here from the
//! dump's own kernel data (its `cpu/isolated` file, else its
//! `/proc/cmdline`), not from pinrun's reading, and every dump pinrun sees
//! isolation on must be in the table.

use crate::common::{self, dry_json, ids};
use std::collections::BTreeSet;

type Set = BTreeSet<u32>;

fn set(list: &[std::ops::RangeInclusive<u32>]) -> Set {
    list.iter().flat_map(|r| r.clone()).collect()
}

/// (dump, the CPUs its kernel isolates or runs nohz_full, where that is read).
fn isolating_dumps() -> Vec<(&'static str, Set, &'static str)> {
    vec![
        (
            "nri-plugins/server",
            set(&[4..=7, 60..=63]),
            "sys/devices/system/cpu/isolated: 4-7,60-63",
        ),
        (
            "nto/e2e-gcp-worker-a",
            set(&[1..=1]),
            "proc/cmdline: isolcpus=managed_irq,1 nohz_full=1 rcu_nocbs=1",
        ),
        (
            "nto/bare-metal-worker1.internal",
            // nohz_full=0-4,11-79: CPU 0 is the boot CPU, which the rule
            // takes last whatever the list says.
            set(&[1..=4, 11..=79]),
            "proc/cmdline: isolcpus=managed_irq,0-4,11-79 nohz_full=0-4,11-79 rcu_nocbs=0-4,11-79",
        ),
    ]
}

/// `pinrun --sysroot DUMP ARGS --json` as JSON, `None` when refused.
fn sysroot_json(m: &str, args: &[&str]) -> Option<serde_json::Value> {
    let out = common::pinrun()
        .arg("--sysroot")
        .arg(common::machine(m))
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// The CPUs of a boot parameter's value (`domain,managed_irq,1-3` →
/// 1-3): the comma-separated words after its flags.
fn param_cpus(value: &str) -> pinrun::cpuset::CpuSet {
    let mut list: Vec<&str> = value
        .rsplit(',')
        .take_while(|w| !w.chars().any(char::is_alphabetic))
        .collect();
    list.reverse();
    pinrun::cpuset::CpuSet::parse(&list.join(",")).unwrap_or_default()
}

#[test]
fn latency_lands_on_isolated_cpus_and_plain_requests_stay_off() {
    let table = isolating_dumps();
    // Every dump with isolation that pinrun sees is in the table.
    for m in common::all_machines() {
        if !common::machine(&m).join("sys/devices/system/cpu").is_dir() {
            continue;
        }
        let v = dry_json(&m, &["--show"]);
        let seen: Set = ids(&v["isolated"])
            .into_iter()
            .chain(ids(&v["nohz_full"]))
            .collect();
        if !seen.is_empty() {
            assert!(
                table.iter().any(|(d, _, _)| *d == m),
                "{m} isolates {seen:?}: add it to isolating_dumps()"
            );
        }
    }
    for (m, quiet, source) in &table {
        for intent in [
            &["--fifo", "90"][..],
            &["--rr", "1"],
            &["--isolated"],
            &["--exclusive"],
        ] {
            if intent == ["--isolated"] && !m.starts_with("nri-plugins") {
                continue; // nohz_full only: --isolated refuses, rightly
            }
            for n in ["1", "2"] {
                if quiet.len() < n.parse().unwrap() {
                    continue; // e2e-gcp-worker-a: one quiet CPU
                }
                let mut args = vec!["--dry-run", "--cores", n];
                args.extend_from_slice(intent);
                let v = sysroot_json(m, &args).unwrap_or_else(|| panic!("{m} {args:?}"));
                let got: Set = ids(&v["cpus"]).into_iter().collect();
                assert!(
                    got.is_subset(quiet),
                    "{m} {args:?}: chose {got:?}, not among the quiet CPUs of {source}"
                );
                assert!(!got.contains(&0), "{m} {args:?}: the boot CPU");
                assert_eq!(v["choice"]["rule"], "quietest", "{m} {args:?}");
            }
        }
        for args in [
            &["--dry-run", "--cores", "1"][..],
            &["--dry-run", "--cores", "2", "--smt"],
            &["--dry-run", "--node", "0"],
            &["--dry-run", "--cores", "1", "--nice", "5"],
        ] {
            let v = dry_json(m, args);
            let got: Set = ids(&v["cpus"]).into_iter().collect();
            // bare-metal-worker1's housekeeping CPUs 5-10 have nohz_full
            // SMT siblings (45-50): with --smt nothing else fits.
            let used: Set = if args.contains(&"--smt") {
                got.iter().copied().filter(|c| !quiet.contains(c)).collect()
            } else {
                got.clone()
            };
            assert!(!used.is_empty(), "{m} {args:?}: chose {got:?}");
            if !args.contains(&"--smt") {
                assert!(
                    got.is_disjoint(quiet),
                    "{m} {args:?}: chose {got:?}, among the quiet CPUs of {source}"
                );
            }
        }
    }
}

/// On this machine: `--cores 1 --fifo 90` takes CPU 1 when CPU 0, the boot
/// CPU, is the other one (the first example).
#[test]
fn live_latency_request_avoids_the_boot_cpu() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let allowed = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Cpus_allowed_list:")
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_default();
    if online.trim() != "0-1" || allowed != "0-1" {
        common::skip("needs a 2-CPU machine with both CPUs allowed");
        return;
    }
    let out = common::pinrun()
        .args(["--dry-run", "--json", "--cores", "1", "--fifo", "90"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&v["cpus"]), vec![1]);
    assert_eq!(ids(&v["choice"]["compact"]), vec![0]);
    assert_eq!(v["choice"]["intent"], serde_json::json!(["--fifo"]));
}

/// Every hint that offers `--isolated` or `--cpus LIST` ("… are isolated
/// and free: --isolated, or --cpus 5") names a request that the planner
/// accepts, and every boot parameter a hint writes names CPU 0 only when
/// the dump's own command line already lists it there (issue 31: a hint
/// names what works on this host, never the boot CPU).
#[test]
fn hints_name_what_works_here() {
    let requests: &[&[&str]] = &[
        &["--cores", "1", "--fifo", "90"],
        &["--cores", "2", "--fifo", "90"],
        &["--node", "0", "--cores", "2", "--fifo", "90"],
        &["--node", "0", "--cores", "1", "--exclusive"],
        &["--cores", "8", "--fifo", "90"],
        &["--cpus", "0", "--fifo", "90"],
        &["--cpus", "8", "--fifo", "90"],
        &["--node", "0"],
        &["--cores", "3"],
    ];
    let mut offered = 0;
    for (m, _, _) in isolating_dumps() {
        let cmdline = std::fs::read_to_string(common::machine(m).join("proc/cmdline"))
            .unwrap_or_default()
            .replace('\0', " ");
        for req in requests {
            let mut args = vec!["--dry-run"];
            args.extend_from_slice(req);
            let Some(v) = sysroot_json(m, &args) else {
                continue; // a refusal: no findings to judge
            };
            for f in v["findings"].as_array().unwrap() {
                let hint = f["hint"].as_str().unwrap_or("");
                // Boot parameters: CPU 0 only where the dump has it already.
                for param in ["isolcpus=", "nohz_full=", "rcu_nocbs="] {
                    for (i, _) in hint.match_indices(param) {
                        let value = hint[i + param.len()..]
                            .split(|c: char| c.is_whitespace() || c == ')')
                            .next()
                            .unwrap();
                        if param_cpus(value).contains(0) {
                            let own = cmdline
                                .split_whitespace()
                                .filter_map(|w| w.strip_prefix(param))
                                .any(|v| param_cpus(v).contains(0));
                            assert!(
                                own,
                                "{m} {req:?}: {param}{value} names the boot CPU: {hint}"
                            );
                        }
                    }
                }
                let Some((_, offer)) = hint.split_once(" and free: ") else {
                    continue;
                };
                let offer = offer.split("; else").next().unwrap();
                for option in offer.split(", or ") {
                    let mut tried: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                    if option == "--isolated" {
                        tried.push("--isolated".into());
                    } else if let Some(list) = option.strip_prefix("--cpus ") {
                        // --cpus replaces --cores and any --cpus.
                        let mut t = Vec::new();
                        let mut it = tried.iter();
                        while let Some(a) = it.next() {
                            if a == "--cores" || a == "--cpus" {
                                it.next();
                            } else {
                                t.push(a.clone());
                            }
                        }
                        t.extend(["--cpus".to_string(), list.to_string()]);
                        tried = t;
                    } else {
                        panic!("{m} {req:?}: an offer pinrun does not make: {option:?} in {hint}");
                    }
                    let o = common::pinrun()
                        .arg("--sysroot")
                        .arg(common::machine(m))
                        .args(&tried)
                        .output()
                        .unwrap();
                    assert!(
                        o.status.success(),
                        "{m}: the hint of {req:?} offers {option:?}, refused: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                    offered += 1;
                }
            }
        }
    }
    assert!(offered > 0, "no hint offered an alternative");
}

/// `--choose measured` is refused where nothing is measured (--emit, a
/// dump, --deadline); `--choose rule`, the default, is accepted anywhere.
#[test]
fn measured_choice_is_refused_where_nothing_is_measured() {
    let m = common::machine("nto/e2e-gcp-worker-a");
    for args in [
        &[
            "--emit",
            "systemd",
            "--cores",
            "1",
            "--choose",
            "measured",
            "--",
            "/bin/true",
        ][..],
        &[
            "--sysroot",
            m.to_str().unwrap(),
            "--dry-run",
            "--cores",
            "1",
            "--choose",
            "measured",
        ],
        &[
            "--dry-run",
            "--cores",
            "1",
            "--deadline",
            "--sched-runtime",
            "1ms",
            "--sched-period",
            "10ms",
            "--choose",
            "measured",
        ],
    ] {
        let o = common::pinrun().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(125), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("pinrun: --choose measured: not with"),
            "{err}"
        );
    }
    let v = dry_json(
        "nto/e2e-gcp-worker-a",
        &[
            "--dry-run",
            "--cores",
            "1",
            "--fifo",
            "1",
            "--choose",
            "rule",
        ],
    );
    assert_eq!(ids(&v["cpus"]), vec![1]);
}

/// A new user's trial: `--choose rule --cpus 1` was refused as a bare
/// conflict, and `--choose measured --cpus` the same way although the
/// code had a reason for it. Both rules, with --cpus (the CPUs named) or
/// without --cores, are refused alike, saying why and what to do: the
/// rule ranks the cores --cores picks, and nothing else.
#[test]
fn choose_without_cores_to_rank_says_why_for_either_rule() {
    for rule in ["rule", "measured"] {
        for (args, why) in [
            (
                &["--cpus", "0"][..],
                "not with --cpus: --cpus names the CPUs, so there is nothing to choose",
            ),
            (&["--node", "0"][..], "needs --cores, which is not given"),
        ] {
            let o = common::pinrun()
                .args(["--dry-run", "--choose", rule])
                .args(args)
                .args(["--", "true"])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(125), "{rule} {args:?}: {err}");
            let lines: Vec<&str> = err.lines().collect();
            assert!(
                lines[0].starts_with(&format!("pinrun: --choose {rule}: {why}")),
                "{err}"
            );
            assert!(lines[1].starts_with("hint: "), "{err}");
            assert!(lines[1].contains("leave out --choose"), "{err}");
        }
    }
}
