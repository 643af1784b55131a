//! Rendering plans, findings and the machine as text or JSON (ARCHITECTURE.md §6).
//! Pure: returns strings; [`crate::output`] prints them.

pub mod per_thread;

use crate::check::{Finding, Severity};
use crate::cpuset::CpuSet;
use crate::error::Error;
use crate::plan::Plan;
use crate::policy::Policy;
use crate::request::Request;
use crate::system::{AllowedSource, SystemState};
use crate::words::or_dash;
use serde_json::{Value, json};
use std::fmt::Write;

fn policy_json(sched: &crate::request::SchedRequest) -> Value {
    let mut v = json!({"reset_on_fork": sched.reset_on_fork, "nice": sched.nice});
    if let Some(Policy::Deadline {
        runtime,
        deadline,
        period,
    }) = sched.policy
    {
        v["runtime_ns"] = json!(runtime);
        v["deadline_ns"] = json!(deadline);
        v["period_ns"] = json!(period);
    }
    v["policy"] = json!(sched.policy.map_or("unchanged", Policy::name));
    v["priority"] = json!(sched.policy.and_then(Policy::rt_priority));
    v
}

fn sched_text(sched: &crate::request::SchedRequest) -> String {
    let mut parts = vec![match sched.policy {
        None => "policy unchanged".to_string(),
        Some(Policy::Deadline {
            runtime,
            deadline,
            period,
        }) => {
            format!("SCHED_DEADLINE runtime {runtime}ns deadline {deadline}ns period {period}ns")
        }
        Some(p) => match p.rt_priority() {
            Some(prio) => format!("{} priority {prio}", p.kernel_name()),
            None => p.kernel_name().to_string(),
        },
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

/// `--dry-run --json`: one object (ARCHITECTURE.md §6). `exec`: the file
/// the launch would execute (the command resolved as `execvp(3)` does), or
/// `None` when it was not resolved (`--sysroot`); the key `"exec"` is
/// present only when a command is given.
pub fn plan_json(
    req: &Request,
    plan: &Plan,
    findings: &[Finding],
    exec: Option<&std::path::Path>,
) -> Value {
    let mut v = json!({
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
        // Which latency intent was read and which rule chose (issue 31):
        // intent lists the options, rule is named, quietest,
        // housekeeping-first, candidates or measured; compact lists what the
        // compact, lowest-numbered rule alone would have chosen when it
        // differs (null otherwise).
        "choice": plan.choice.as_ref().map(|c| json!({
            "intent": c.intent, "rule": c.rule.name(),
            "compact": c.compact.as_ref().map(CpuSet::to_vec),
            // --choose measured: each probed CPU's worst gap, ns; null
            // where the probe thread could not measure its whole time.
            "measured": c.measured.as_ref().map(|m| m.iter()
                .map(|(cpu, ns)| json!({"cpu": cpu, "max_ns": (*ns != u64::MAX).then_some(*ns)}))
                .collect::<Vec<_>>()),
        })),
        "findings": findings_json(findings),
        // What --strict would do with these findings: the real launch exits 125.
        "strict_refusal": req.output.strict
            && findings.iter().any(|f| f.severity == Severity::Warning),
        "exclusive": req.claims.exclusive,
        "claim": req.claims.exclusive.then(|| {
            crate::plan::claim_set(plan.cpus.as_ref().unwrap_or(&CpuSet::new()), &plan.cores).to_vec()
        }),
        "command": req.command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
    });
    if !req.command.is_empty() {
        v["exec"] = json!(exec.map(|p| p.to_string_lossy()));
    }
    per_thread::add_json(&mut v, req, plan);
    v
}

/// "rule: quietest (latency intent: --fifo)": the first `why:` line.
fn choice_text(c: &crate::plan::quiet::Choice) -> String {
    format!(
        "rule: {} ({})",
        c.rule.name(),
        if c.intent.is_empty() {
            "no latency intent: no real-time or deadline policy, --exclusive, --isolated, --probe or --steer-irqs".to_string()
        } else {
            format!("latency intent: {}", c.intent.join(", "))
        }
    )
}

/// One finding as text lines (`warning: message [code]` + `hint:`).
pub fn finding_text(f: &Finding) -> String {
    format!(
        "{}: {} [{}]\n  hint: {}\n",
        f.severity.as_str(),
        f.message,
        f.code,
        f.hint
    )
}

/// "2 warnings, 1 notice": the count of each severity present, most
/// serious first; "no findings" when there are none.
pub fn severity_counts(findings: &[Finding]) -> String {
    let parts: Vec<String> = [Severity::Warning, Severity::Notice, Severity::Info]
        .iter()
        .filter_map(|&sev| {
            let n = findings.iter().filter(|f| f.severity == sev).count();
            // "info" is a mass noun: "2 info".
            (n > 0).then(|| match sev {
                Severity::Info => format!("{n} info"),
                _ => crate::words::count(n, sev.as_str()),
            })
        })
        .collect();
    if parts.is_empty() {
        "no findings".to_string()
    } else {
        parts.join(", ")
    }
}

/// `--check` as text: one line per finding (`warning  code: message`),
/// then a count line saying where the fixes are (`-v`: every finding with
/// its hint; `--json`: every detail).
pub fn check_summary(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "no findings\n".to_string();
    }
    let mut s = String::new();
    for f in findings {
        let _ = writeln!(s, "{:<7} {}: {}", f.severity.as_str(), f.code, f.message);
    }
    let _ = writeln!(
        s,
        "{}; the fixes: pinrun --check -v (same options), every detail: --check --json",
        severity_counts(findings)
    );
    s
}

/// The longest line a launch prints on stderr (issue 31: a default
/// launch says what it chose and what it found in at most two lines).
pub const LAUNCH_LINE: usize = 160;

/// What a launch prints on stderr before exec (without `-v`): at most two
/// lines of at most [`LAUNCH_LINE`] characters. The first says which CPUs
/// were chosen when the rule moved away from the compact, lowest-numbered
/// ones (what taskset's habit would expect); the second counts the
/// warnings and notices by code, naming the CPUs checked (`pinrun -v` or
/// `--check` shows them whole).
pub fn launch_text(plan: &Plan, findings: &[Finding]) -> String {
    let mut s = String::new();
    if let (Some(c), Some(cpus)) = (&plan.choice, &plan.cpus)
        && let Some(compact) = &c.compact
    {
        let line = format!(
            "pinrun: chose {} by the {} rule{}, not {}: --dry-run says why",
            crate::words::cpus_phrase(cpus),
            c.rule.name(),
            if c.intent.is_empty() {
                String::new()
            } else {
                format!(" ({})", c.intent.join(" "))
            },
            crate::words::cpus_phrase(compact)
        );
        let _ = writeln!(s, "{}", crate::words::shorten(&line, LAUNCH_LINE));
    }
    let shown: Vec<&Finding> = findings
        .iter()
        .filter(|f| matches!(f.severity, Severity::Warning | Severity::Notice))
        .collect();
    if shown.is_empty() {
        return s;
    }
    let tail = ": pinrun -v or --check shows them";
    // The CPUs named at most in 40 characters: the counts must fit.
    let head = match &plan.cpus {
        Some(c) => format!(
            "pinrun: {}: ",
            crate::words::shorten(&crate::words::cpus_phrase(c), 40)
        ),
        None => "pinrun: ".to_string(),
    };
    let room = LAUNCH_LINE.saturating_sub(head.chars().count() + tail.chars().count());
    // Each severity with its codes while they fit, else counted only.
    let mut counts = Vec::new();
    for sev in [Severity::Warning, Severity::Notice] {
        let these: Vec<&Finding> = shown
            .iter()
            .copied()
            .filter(|f| f.severity == sev)
            .collect();
        if these.is_empty() {
            continue;
        }
        let count = crate::words::count(these.len(), sev.as_str());
        let used: usize = counts.iter().map(|c: &String| c.chars().count() + 2).sum();
        let full = format!(
            "{count} ({})",
            crate::check::summarize_codes(these.iter().copied())
        );
        counts.push(if used + full.chars().count() <= room {
            full
        } else {
            count
        });
    }
    let line = format!(
        "{head}{}{tail}",
        crate::words::shorten(&counts.join("; "), room)
    );
    let _ = writeln!(s, "{}", crate::words::shorten(&line, LAUNCH_LINE));
    s
}

/// `--dry-run` as text; without findings under `--quiet` (a quiet launch
/// prints none; `--strict`'s verdict is still said).
/// `exec`: the resolved command, printed as `exec:` when given. `wings`:
/// the lines of the wings' plans (`irqs:` of `--steer-irqs`), put after
/// `sched:` and the threads' lines, before the command.
pub fn plan_text(
    req: &Request,
    plan: &Plan,
    findings: &[Finding],
    exec: Option<&std::path::Path>,
    wings: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "cpus:    {}",
        plan.cpus
            .as_ref()
            .map_or("unchanged".to_string(), |c| format!(
                "{c} ({})",
                crate::words::count(c.len(), "CPU")
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
            or_dash(c.package),
            or_dash(c.core),
            or_dash(c.node),
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
    s.push_str(&per_thread::text(req, plan));
    s.push_str(wings);
    if !req.command.is_empty() {
        let cmd: Vec<_> = req.command.iter().map(|a| a.to_string_lossy()).collect();
        let _ = writeln!(s, "command: {}", cmd.join(" "));
        if let Some(path) = exec {
            let _ = writeln!(s, "exec:    {}", path.display());
        }
    }
    let _ = writeln!(s, "why:");
    if let Some(c) = &plan.choice {
        let _ = writeln!(s, "  - {}", choice_text(c));
    }
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
            "strict:  the launch would be refused ({})",
            crate::words::count(warnings, "warning")
        );
    }
    if req.output.quiet {
        // --quiet silences findings in every mode, as the launch would.
    } else if findings.is_empty() {
        let _ = writeln!(s, "findings: none");
    } else {
        let _ = writeln!(s, "findings:");
        for f in findings {
            s.push_str(&finding_text(f));
        }
    }
    s
}

/// `--show`'s line about the policy file: which file was used and what
/// it accepts (pinrun(1) FILES).
pub fn policy_file_text(out: &crate::request::Output) -> String {
    match &out.config_file {
        None => "policy file: none (pinrun(1) POLICY FILE)\n".to_string(),
        Some(p) => format!(
            "policy file: {} (allow: {}; strict: {})\n",
            p.display(),
            if out.allow.is_empty() {
                "none".to_string()
            } else if out.allow.len() == crate::finding::Code::ALL.len() {
                "all".to_string()
            } else {
                out.allow
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            },
            if out.strict { "yes" } else { "no" }
        ),
    }
}

/// Adds `policy_file` (path or null), `allow` and `strict` to `--show --json`.
pub fn add_policy_file_json(v: &mut Value, out: &crate::request::Output) {
    v["policy_file"] = json!(out.config_file.as_ref().map(|p| p.display().to_string()));
    v["allow"] = json!(out.allow.iter().map(|c| c.as_str()).collect::<Vec<_>>());
    v["strict"] = json!(out.strict);
}

/// `{"error": {...}}` for `--json` failures.
pub fn error_json(e: &Error) -> Value {
    json!({"error": {"code": e.code, "message": e.message, "hint": e.hint}})
}

/// One CPU of `--show --json`'s `cpus`.
fn show_cpu_json(sys: &SystemState, c: &crate::system::Cpu) -> Value {
    json!({
        "cpu": c.id, "online": c.online, "core": c.core_id, "package": c.package,
        "die": c.die, "cluster": c.cluster, "node": c.node,
        "siblings": c.online.then(|| sys.core_of(c.id).to_vec()),
        "package_cpus": c.package_cpus.as_ref().map(CpuSet::to_vec),
        "llc": c.llc.as_ref().map(CpuSet::to_vec),
        "die_cpus": c.die_cpus.as_ref().map(CpuSet::to_vec),
        "cluster_cpus": c.cluster_cpus.as_ref().map(CpuSet::to_vec),
        "capacity": c.capacity,
        "allowed": sys.allowed.contains(c.id),
        "isolated": sys.isolated.contains(c.id),
        "nohz_full": sys.nohz_full.contains(c.id),
    })
}

/// `--show --json`'s `tasks`: the real-time and pinned threads (pid,
/// tid (the pid for a main thread), comm, `priority` 0 for a pinned one that is not real-time, state,
/// `cpus`), from [`crate::system::rt_tasks::read_placed_tasks`].
pub fn placed_tasks_json(tasks: &[crate::system::rt_tasks::RtTask]) -> Value {
    tasks
        .iter()
        .map(|t| {
            json!({
                "pid": t.pid,
                "tid": t.tid,
                "comm": t.comm,
                "priority": t.priority,
                "realtime": t.priority > 0,
                "state": t.state.to_string(),
                "cpus": t.cpus.to_vec(),
            })
        })
        .collect()
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
        "core_types": crate::plan::units::CoreTypes::of(sys).map(|t| {
            use crate::request::CoreType::{Efficiency, Performance};
            json!({
                "performance": {"cpus": t.performance.to_vec(), "kernel_name": t.kernel_name(Performance)},
                "efficiency": {"cpus": t.efficiency.to_vec(), "kernel_name": t.kernel_name(Efficiency)},
            })
        }),
        "devices": sys.devices.iter().map(|d| json!({
            "name": d.name, "kind": d.kind.name(), "sysfs": d.sysfs,
            "numa_node": d.numa_node, "irqs": d.irqs,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Code;
    use crate::testkit::{Machine, request};

    /// A launch prints at most two lines of at most [`LAUNCH_LINE`]
    /// characters, whatever the CPUs and findings (a 128-CPU choice with
    /// every code a check can emit).
    #[test]
    fn launch_lines_stay_short() {
        let sys = Machine::new(1, 128, 1).build();
        let mut plan = crate::plan::plan(
            &sys,
            &request(&["--dry-run", "--cores", "43", "--fifo", "1"]),
        )
        .unwrap();
        // CPUs a list cannot shorten: every third one.
        let cpus: crate::cpuset::CpuSet = (0..128).step_by(3).collect();
        plan.cpus = Some(cpus.clone());
        let mut findings = Vec::new();
        for (i, code) in Code::sorted_names().iter().enumerate() {
            let code = Code::parse(code).unwrap();
            let sev = if i % 2 == 0 {
                Severity::Warning
            } else {
                Severity::Notice
            };
            findings.push(Finding::new(code, sev, &cpus, "m".into(), "h"));
        }
        let text = launch_text(&plan, &findings);
        assert!(text.lines().count() <= 2, "{text}");
        assert!(
            text.lines().all(|l| l.chars().count() <= LAUNCH_LINE),
            "{text}"
        );
        assert!(text.lines().last().unwrap().contains("warnings"), "{text}");
    }
}
