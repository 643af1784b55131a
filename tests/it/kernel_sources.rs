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
    let nocb = f
        .iter()
        .find(|f| f["code"] == "not-rcu-nocbs")
        .unwrap_or_else(|| panic!("no not-rcu-nocbs in {:?}", codes(&f)));
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
