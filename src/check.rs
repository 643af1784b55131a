//! Checking: a pure function from the machine and the plan to findings:
//! what will still disturb or endanger the chosen placement. No I/O.

use crate::cpuset::CpuSet;
use crate::plan::{Plan, cores_of, cpus_phrase};
use crate::request::{Policy, Request};
use crate::system::SystemState;
use serde::Serialize;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never refuses.
    Info,
    /// Risky; refuses the launch under `--strict`.
    Warning,
}

/// One finding, with a stable kebab-case `code` (documented in pinrun(1)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable identifier, e.g. `smt-siblings-shared`.
    pub code: &'static str,
    /// Info or warning.
    pub severity: Severity,
    /// CPUs concerned, ascending.
    pub cpus: Vec<u32>,
    /// Nodes concerned, ascending.
    pub nodes: Vec<u32>,
    /// One line.
    pub message: String,
    /// The fix.
    pub hint: String,
}

fn warning(code: &'static str, cpus: &CpuSet, message: String, hint: &str) -> Finding {
    Finding {
        code,
        severity: Severity::Warning,
        cpus: cpus.to_vec(),
        nodes: Vec::new(),
        message,
        hint: hint.to_string(),
    }
}

/// All findings about running `plan` on `sys`, in a stable order.
pub fn check(sys: &SystemState, req: &Request, plan: &Plan) -> Vec<Finding> {
    let mut out = Vec::new();
    for w in &sys.warnings {
        out.push(warning(
            "firmware-data",
            &CpuSet::new(),
            w.clone(),
            "the kernel reports inconsistent topology (firmware SRAT/ACPI tables); check BIOS settings and kernel version",
        ));
    }
    if let (Some(cpus), None) = (&req.placement.cpus, req.placement.cores) {
        for core in cores_of(sys, cpus) {
            let used = core.intersection(cpus);
            if used.len() > 1 {
                out.push(warning(
                    "smt-siblings-shared",
                    &used,
                    format!("{} are SMT siblings of one core: they share its execution units and caches", cpus_phrase(&used)),
                    "use one CPU per core (--cores N picks whole cores), unless sharing a core is intended",
                ));
            }
        }
    }
    if let Some(Policy::Deadline { .. }) = req.sched.policy
        && !req.sched.reset_on_fork
    {
        out.push(warning(
            "deadline-cannot-fork",
            &CpuSet::new(),
            "a SCHED_DEADLINE task cannot fork (fork fails with EAGAIN): shells and most daemons will fail".into(),
            "add --reset-on-fork so that children start as SCHED_OTHER, or exec a program that never forks",
        ));
    }
    if let (Some(n), Some(Policy::Fifo(_) | Policy::Rr(_) | Policy::Deadline { .. })) =
        (req.sched.nice, req.sched.policy)
    {
        out.push(warning(
            "nice-ignored",
            &CpuSet::new(),
            format!("--nice {n} has no effect under a real-time or deadline policy (it applies to SCHED_OTHER and SCHED_BATCH)"),
            "drop --nice, or use --other/--batch with it",
        ));
    }
    if let Some(Policy::Fifo(99) | Policy::Rr(99)) = req.sched.policy {
        out.push(warning(
            "rt-priority-99",
            plan.cpus.as_ref().unwrap_or(&CpuSet::new()),
            "real-time priority 99 equals the kernel's own per-CPU threads (migration, watchdogs) and can starve them".into(),
            "use a priority from 1 to 98",
        ));
    }
    out
}
