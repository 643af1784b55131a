//! Scheduling refusals the kernel would give, predicted by `--dry-run` and
//! `--check` from what is readable (issue 14 class 2): the field case
//! `deadline-period-limits` (`__checkparam_dl()`'s period bounds).

use crate::common;

/// The field case: `sched_deadline_period_{min,max}_us` = 100 and 4194304;
/// a 5 s period and a 50 µs period are refused (the kernel answers EINVAL),
/// naming the sysctl and its value, with the same code in `--dry-run` and
/// `--check`; the bounds' inside is approved.
#[test]
fn field_case_deadline_period_limits() {
    let case = common::field_case("deadline-period-limits");
    for (args, sysctl) in [
        (
            ["--sched-runtime", "10ms", "--sched-period", "5s"],
            "kernel.sched_deadline_period_max_us = 4194304",
        ),
        (
            ["--sched-runtime", "20us", "--sched-period", "50us"],
            "kernel.sched_deadline_period_min_us = 100",
        ),
    ] {
        for mode in ["--dry-run", "--check"] {
            let mut all = vec![mode, "--json", "--deadline", "--reset-on-fork"];
            all.extend(args);
            let out = common::at(&case, &all);
            common::assert_status(&out, 125);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            assert_eq!(v["error"]["code"], "deadline-period", "{args:?}");
            let msg = v["error"]["message"].as_str().unwrap();
            assert!(msg.contains(sysctl), "{msg}");
            assert!(msg.contains("EINVAL"), "{msg}");
            assert!(
                v["error"]["hint"]
                    .as_str()
                    .unwrap()
                    .contains("100us to 4194304us"),
                "{v}"
            );
        }
    }
    let ok = common::at(
        &case,
        &[
            "--dry-run",
            "--deadline",
            "--sched-runtime",
            "20us",
            "--sched-period",
            "100us",
            "--reset-on-fork",
        ],
    );
    common::assert_status(&ok, 0);
}
