//! `--dry-run`'s lines and JSON keys for `--omp` and `--thread-map`
//! (issue 22): the environment the command would get, and each rule with
//! the CPUs it gives.

use crate::plan::Plan;
use crate::plan::per_thread::omp_places_value;
use serde_json::{Value, json};
use std::fmt::Write;

/// Adds `"omp": {"places": [[0,8],[1,9]], "set": {"OMP_PLACES": …},
/// "unset": [...]}` and `"thread_map": {"positions": [[0],[1]], "rules":
/// [{"rule": "w1=@0", "cpus": [0]}], "mechanism": "perf-or-poll"|"poll",
/// "interval_us": …}` to `v` when planned (the keys are absent otherwise):
/// the watcher tries perf events unless `PINRUN_THREAD_WATCH=poll`, and
/// which one it used is only known at launch (`--thread-log`'s first line).
pub fn add_json(v: &mut Value, req: &crate::request::Request, plan: &Plan) {
    if let Some(o) = &plan.omp {
        let set: serde_json::Map<String, Value> = o
            .set
            .iter()
            .map(|(k, val)| (k.clone(), json!(val)))
            .collect();
        v["omp"] = json!({
            "places": o.places.iter().map(|p| p.to_vec()).collect::<Vec<_>>(),
            "set": set,
            "unset": o.unset,
        });
    }
    if let Some(m) = &plan.thread_map {
        v["thread_map"] = json!({
            "positions": m.positions.iter().map(|p| p.to_vec()).collect::<Vec<_>>(),
            "rules": m.rules.iter().map(|r| json!({
                "rule": r.rule.text,
                "cpus": r.cpus.to_vec(),
            })).collect::<Vec<_>>(),
            "mechanism": if req.threads.poll_only { "poll" } else { "perf-or-poll" },
            "interval_us": crate::plan::per_thread::POLL_INTERVAL_US,
        });
    }
}

/// The `env:` and `threads:` lines of `--dry-run`'s text (empty when
/// neither is planned).
pub fn text(req: &crate::request::Request, plan: &Plan) -> String {
    let mut s = String::new();
    if let Some(o) = &plan.omp {
        for (k, v) in &o.set {
            let _ = writeln!(s, "env:     {k}={v}");
        }
        for k in &o.unset {
            let _ = writeln!(s, "env:     unset {k}");
        }
    }
    if let Some(m) = &plan.thread_map {
        let _ = writeln!(
            s,
            "threads: positions {} (watcher: {}polls /proc/PID/task every {} us)",
            omp_places_value(&m.positions),
            if req.threads.poll_only {
                ""
            } else {
                "perf events where perf_event_open(2) permits, else "
            },
            crate::plan::per_thread::POLL_INTERVAL_US
        );
        for r in &m.rules {
            let each = if r.rule.target == crate::request::ThreadTarget::Each {
                " (one position each, round-robin)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "  rule:  {} -> {}{each}",
                r.rule.text,
                crate::words::cpus_phrase(&r.cpus)
            );
        }
    }
    s
}
