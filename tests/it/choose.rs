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
                let out = common::pinrun()
                    .arg("--sysroot")
                    .arg(common::machine(m))
                    .args(&args)
                    .arg("--json")
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{m} {args:?}");
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
