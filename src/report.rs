//! Rendering plans, findings and the machine as text or JSON (DESIGN §4).
//! Pure: returns strings; `main` prints them.

use crate::check::{Finding, Severity};
use crate::claims::{Claims, Holder, shorten};
use crate::cpuset::CpuSet;
use crate::error::Error;
use crate::plan::Plan;
use crate::request::{Policy, Request};
use crate::system::{AllowedSource, SystemState};
use serde_json::{Value, json};
use std::fmt::Write;

fn policy_json(sched: &crate::request::SchedRequest) -> Value {
    let mut v = json!({"reset_on_fork": sched.reset_on_fork, "nice": sched.nice});
    let (name, prio) = match sched.policy {
        None => ("unchanged", None),
        Some(Policy::Other) => ("other", None),
        Some(Policy::Batch) => ("batch", None),
        Some(Policy::Idle) => ("idle", None),
        Some(Policy::Fifo(p)) => ("fifo", Some(p)),
        Some(Policy::Rr(p)) => ("rr", Some(p)),
        Some(Policy::Deadline {
            runtime,
            deadline,
            period,
        }) => {
            v["runtime_ns"] = json!(runtime);
            v["deadline_ns"] = json!(deadline);
            v["period_ns"] = json!(period);
            ("deadline", None)
        }
    };
    v["policy"] = json!(name);
    v["priority"] = json!(prio);
    v
}

fn sched_text(sched: &crate::request::SchedRequest) -> String {
    let mut parts = vec![match sched.policy {
        None => "policy unchanged".to_string(),
        Some(Policy::Other) => "SCHED_OTHER".into(),
        Some(Policy::Batch) => "SCHED_BATCH".into(),
        Some(Policy::Idle) => "SCHED_IDLE".into(),
        Some(Policy::Fifo(p)) => format!("SCHED_FIFO priority {p}"),
        Some(Policy::Rr(p)) => format!("SCHED_RR priority {p}"),
        Some(Policy::Deadline {
            runtime,
            deadline,
            period,
        }) => {
            format!("SCHED_DEADLINE runtime {runtime}ns deadline {deadline}ns period {period}ns")
        }
    }];
    parts.push(match sched.nice {
        Some(n) => format!("nice {n}"),
        None => "nice unchanged".into(),
    });
    if sched.reset_on_fork {
        parts.push("reset-on-fork".into());
    }
    parts.join(", ")
}

/// The `findings` array.
pub fn findings_json(findings: &[Finding]) -> Value {
    serde_json::to_value(findings).unwrap_or(Value::Null)
}

/// `--dry-run --json`: one object (DESIGN §4).
pub fn plan_json(req: &Request, plan: &Plan, findings: &[Finding]) -> Value {
    json!({
        "cpus": plan.cpus.as_ref().map(CpuSet::to_vec),
        "cpulist": plan.cpus.as_ref().map(CpuSet::to_list),
        "cores": plan.cores.iter().map(|c| json!({
            "package": c.package, "core": c.core, "node": c.node, "cpus": c.cpus.to_vec()
        })).collect::<Vec<_>>(),
        "nodes": plan.nodes.to_vec(),
        "memory": match &plan.memory {
            None => json!({"policy": "default", "nodes": []}),
            Some(m) => json!({"policy": m.mode.name(), "nodes": m.nodes.to_vec()}),
        },
        "sched": policy_json(&plan.sched),
        "reasons": plan.reasons,
        "findings": findings_json(findings),
        // What --strict would do with these findings: the real launch exits 125.
        "strict_refusal": req.output.strict
            && findings.iter().any(|f| f.severity == Severity::Warning),
        "exclusive": req.claims.exclusive,
        "claim": req.claims.exclusive.then(|| {
            crate::plan::claim_set(plan.cpus.as_ref().unwrap_or(&CpuSet::new()), &plan.cores).to_vec()
        }),
        "command": req.command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
    })
}

/// One finding as text lines (`warning: [code] message` + `hint:`).
pub fn finding_text(f: &Finding) -> String {
    let sev = match f.severity {
        Severity::Info => "info",
        Severity::Warning => "warning",
    };
    format!("{sev}: {} [{}]\n  hint: {}\n", f.message, f.code, f.hint)
}

/// `--dry-run` as text.
pub fn plan_text(req: &Request, plan: &Plan, findings: &[Finding]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "cpus:    {}",
        plan.cpus
            .as_ref()
            .map_or("unchanged".to_string(), |c| format!(
                "{c} ({} CPU{})",
                c.len(),
                if c.len() == 1 { "" } else { "s" }
            ))
    );
    for c in &plan.cores {
        let used = plan
            .cpus
            .as_ref()
            .map(|p| c.cpus.intersection(p))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  core:  package {} core {} node {}: threads {} (using {})",
            opt(c.package),
            opt(c.core),
            opt(c.node),
            c.cpus,
            used
        );
    }
    let _ = writeln!(
        s,
        "nodes:   {}",
        if plan.nodes.is_empty() {
            "-".into()
        } else {
            plan.nodes.to_list()
        }
    );
    let _ = writeln!(
        s,
        "memory:  {}",
        match &plan.memory {
            None => "unchanged".to_string(),
            Some(m) if m.nodes.is_empty() => m.mode.name().to_string(),
            Some(m) => format!("{} {}", m.mode.name(), m.nodes),
        }
    );
    let _ = writeln!(s, "sched:   {}", sched_text(&plan.sched));
    if !req.command.is_empty() {
        let cmd: Vec<_> = req.command.iter().map(|a| a.to_string_lossy()).collect();
        let _ = writeln!(s, "command: {}", cmd.join(" "));
    }
    let _ = writeln!(s, "why:");
    for r in &plan.reasons {
        let _ = writeln!(s, "  - {r}");
    }
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    if req.output.strict && warnings > 0 {
        let _ = writeln!(
            s,
            "strict:  the launch would be refused ({warnings} warning(s))"
        );
    }
    if findings.is_empty() {
        let _ = writeln!(s, "findings: none");
    } else {
        let _ = writeln!(s, "findings:");
        for f in findings {
            s.push_str(&finding_text(f));
        }
    }
    s
}

/// `{"error": {...}}` for `--json` failures.
pub fn error_json(e: &Error) -> Value {
    json!({"error": {"code": e.code, "message": e.message, "hint": e.hint}})
}

fn opt(v: Option<u32>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// One CPU of `--show --json`'s `cpus`.
fn show_cpu_json(sys: &SystemState, c: &crate::system::Cpu) -> Value {
    json!({
        "cpu": c.id, "online": c.online, "core": c.core_id, "package": c.package,
        "die": c.die, "cluster": c.cluster, "node": c.node,
        "siblings": c.online.then(|| sys.core_of(c.id).to_vec()),
        "package_cpus": c.package_cpus.as_ref().map(CpuSet::to_vec),
        "llc": c.llc.as_ref().map(CpuSet::to_vec),
        "allowed": sys.allowed.contains(c.id),
        "isolated": sys.isolated.contains(c.id),
        "nohz_full": sys.nohz_full.contains(c.id),
    })
}

/// `--show --json`.
pub fn show_json(sys: &SystemState) -> Value {
    let mut v = show_json_rest(sys);
    let cpus: Vec<Value> = sys.cpus.values().map(|c| show_cpu_json(sys, c)).collect();
    v["cpus"] = json!(cpus);
    v
}

/// `--show --json` with the members of `extra` (an object: the claims of
/// [`add_claims_json`]) added, written to `w` byte for byte as
/// `format!("{v}\n")` prints [`show_json`]'s value, but without building
/// `cpus` as one value: each CPU's object is built, written and dropped in
/// turn. Each CPU object carries its package's and its LLC's CPU lists
/// (`package_cpus`, `llc`), so the *output* grows with CPUs × package
/// size (the JSON contract: about 170 MB at 8192 CPUs in two packages);
/// the memory stays linear in the machine (issue 15: a `Value` per listed
/// id cost 2.4 GB at 8192 CPUs).
pub fn write_show_json(
    sys: &SystemState,
    extra: Value,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut top = match show_json_rest(sys) {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    if let Value::Object(e) = extra {
        top.extend(e);
    }
    top.insert("cpus".into(), Value::Null);
    w.write_all(b"{")?;
    for (i, (k, v)) in top.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        serde_json::to_writer(&mut *w, k)?;
        w.write_all(b":")?;
        if k == "cpus" {
            w.write_all(b"[")?;
            for (j, c) in sys.cpus.values().enumerate() {
                if j > 0 {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(&mut *w, &show_cpu_json(sys, c))?;
            }
            w.write_all(b"]")?;
        } else {
            serde_json::to_writer(&mut *w, v)?;
        }
    }
    w.write_all(b"}\n")
}

/// `--show --json` but `cpus`.
fn show_json_rest(sys: &SystemState) -> Value {
    let nodes: Vec<Value> = sys
        .nodes
        .values()
        .map(|n| {
            json!({
                "node": n.id, "cpus": n.cpus.to_vec(), "mem_total_kb": n.mem_total_kb,
                "mem_free_kb": n.mem_free_kb,
                "distances": n.distances.iter().map(|(id, d)| json!({"node": id, "distance": d})).collect::<Vec<_>>(),
                "has_cpu": !n.cpus.is_empty(), "has_memory": n.has_memory,
            })
        })
        .collect();
    let allowed_nodes: Vec<u32> = match &sys.process.mems_allowed {
        Some(m) => sys.memory_nodes().intersection(m).to_vec(),
        None => sys.memory_nodes().to_vec(),
    };
    json!({
        "nodes": nodes,
        "online": sys.online.to_vec(),
        "possible": sys.possible.to_list(),
        "present": sys.present.to_list(),
        "allowed_cpus": sys.allowed.to_vec(),
        "allowed_nodes": allowed_nodes,
        "allowed_source": match &sys.allowed_source {
            AllowedSource::Cgroup(cs) => json!({"cgroup": cs.cgroup, "file": cs.file}),
            AllowedSource::Status => json!("Cpus_allowed_list"),
            AllowedSource::Online => json!("online"),
        },
        "isolated": sys.isolated.to_vec(),
        "device_irqs_per_cpu": crate::show::irqs_per_cpu(sys),
        "nohz_full": sys.nohz_full.to_vec(),
        "warnings": sys.warnings.iter().chain(&sys.topology_issues).collect::<Vec<_>>(),
    })
}

// ---- claims (issue 5) ----

fn age(now: u64, since: u64) -> String {
    let s = now.saturating_sub(since);
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// Adds the claims to `--show --json`'s object: `claims` (one object per
/// live claim), `claimed_cpus`, and `claim_warnings`.
pub fn add_claims_json(v: &mut Value, claims: &Claims, now: u64) {
    let list: Vec<Value> = claims
        .claims
        .iter()
        .map(|c| match &c.holder {
            Holder::Process {
                pid,
                start_time,
                uid,
                command,
                since,
                record,
            } => json!({
                "holder": "pinrun", "pid": pid, "start_time": start_time, "uid": uid,
                "command": command, "cpus": c.cpus.to_vec(), "cpulist": c.cpus.to_list(),
                "since": since, "age_s": now.saturating_sub(*since), "record": record,
            }),
            Holder::Kubelet { pod, container } => json!({
                "holder": "kubelet", "pod": pod, "container": container,
                "cpus": c.cpus.to_vec(), "cpulist": c.cpus.to_list(),
            }),
        })
        .collect();
    v["claims"] = json!(list);
    v["claimed_cpus"] = json!(claims.cpus().to_vec());
    v["claim_warnings"] = json!(
        claims
            .warnings
            .iter()
            .chain(&claims.foreign_warnings)
            .chain(&claims.state_warnings)
            .collect::<Vec<_>>()
    );
}

/// The claims section of `--show`: one line per claim (pid, CPUs, age,
/// command). `state_dir`: where they were read (live machine only).
pub fn claims_text(claims: &Claims, now: u64, state_dir: Option<&std::path::Path>) -> String {
    let mut s = String::new();
    if claims.claims.is_empty()
        && claims.warnings.is_empty()
        && claims.foreign_warnings.is_empty()
        && claims.state_warnings.is_empty()
        && state_dir.is_none()
    {
        return s;
    }
    let from = state_dir.map_or(String::new(), |d| format!(" ({})", d.display()));
    if claims.claims.is_empty() {
        let _ = writeln!(s, "claims{from}: none");
    } else {
        let _ = writeln!(s, "claims{from}: CPUs {}", claims.cpus());
        for c in &claims.claims {
            match &c.holder {
                Holder::Process {
                    pid,
                    command,
                    since,
                    ..
                } => {
                    // One line of at most 80 columns: the command is shortened.
                    let head = format!(
                        "  pid {pid:<8} CPUs {:<10} age {:<5} ",
                        c.cpus.to_list(),
                        age(now, *since)
                    );
                    let room = 80usize.saturating_sub(head.chars().count()).max(12);
                    let _ = writeln!(s, "{head}{}", shorten(&command.join(" "), room));
                }
                Holder::Kubelet { pod, container } => {
                    let _ = writeln!(
                        s,
                        "  kubelet      CPUs {:<10}           pod {pod} container {container}",
                        c.cpus.to_list()
                    );
                }
            }
        }
    }
    for w in claims
        .warnings
        .iter()
        .chain(&claims.foreign_warnings)
        .chain(&claims.state_warnings)
    {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}

/// Writes `text` to stderr, ignoring errors: notes and warnings before
/// exec must not stop a launch whose stderr is closed or a pipe without a
/// reader (`eprint!` would panic).
pub fn to_stderr(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
