//! Checking: a pure function from the machine, the request and the plan to
//! findings: what will still disturb or endanger the chosen CPUs, and how to
//! fix it. No I/O. One submodule per subject.
//!
//! Severity: hazards (RT throttling, a thread that cannot fork, memory that
//! will OOM) are warnings. Disturbances (no isolation, IRQs, timers) are
//! warnings when the launch is latency-critical — a real-time or deadline
//! policy, `--isolated`, or `--check` itself — and info otherwise, so that
//! an ordinary launch on a desktop is not told that its CPUs are not isolated.

mod env;
mod irq;
mod isolation;
mod memory;
mod rt;
mod topology;

use crate::cpuset::CpuSet;
use crate::plan::Plan;
use crate::request::Request;
use crate::system::SystemState;
use serde::Serialize;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never refuses, not printed before exec unless `-v`.
    Info,
    /// Risky; printed before exec, refuses the launch under `--strict`.
    Warning,
}

/// One finding, with a stable kebab-case `code` (documented in pinrun(1)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable identifier, e.g. `irq-on-cpu`.
    pub code: &'static str,
    /// Info or warning.
    pub severity: Severity,
    /// CPUs concerned, ascending.
    pub cpus: Vec<u32>,
    /// Nodes concerned, ascending.
    pub nodes: Vec<u32>,
    /// IRQ numbers concerned, ascending.
    pub irqs: Vec<u32>,
    /// One line.
    pub message: String,
    /// The fix.
    pub hint: String,
}

impl Finding {
    /// A finding about `cpus`.
    pub fn new(
        code: &'static str,
        severity: Severity,
        cpus: &CpuSet,
        message: String,
        hint: impl Into<String>,
    ) -> Self {
        Finding {
            code,
            severity,
            cpus: cpus.to_vec(),
            nodes: Vec::new(),
            irqs: Vec::new(),
            message,
            hint: hint.into(),
        }
    }
}

/// What every check sees.
pub struct Context<'a> {
    /// The machine.
    pub sys: &'a SystemState,
    /// The request.
    pub req: &'a Request,
    /// The plan.
    pub plan: &'a Plan,
    /// The CPUs checked: the chosen ones, or every allowed CPU when the
    /// affinity is left unchanged.
    pub cpus: CpuSet,
    /// Whether the launch is latency-critical (see the module doc).
    pub critical: bool,
}

impl Context<'_> {
    /// Warning when latency-critical, info otherwise.
    pub fn disturbance(&self) -> Severity {
        if self.critical {
            Severity::Warning
        } else {
            Severity::Info
        }
    }

    /// Online CPUs outside the checked ones: where housekeeping can go.
    pub fn housekeeping(&self) -> CpuSet {
        self.sys.online.difference(&self.cpus)
    }
}

/// Every finding code pinrun emits (pinrun(1) CHECKS and CLAIMS).
pub const CODES: &[&str] = &[
    "bind-low-memory",
    "claim-record-unusable",
    "claim-state-unusable",
    "cpu-claimed",
    "cpufreq-governor",
    "cpuidle-deep-states",
    "deadline-cannot-fork",
    "default-irq-affinity",
    "env-thread-binding",
    "firmware-data",
    "irq-on-cpu",
    "isolated-no-balancing",
    "isolation-not-applied",
    "isolcpus-unknown-flag",
    "managed-irq-on-cpu",
    "memory-partly-remote",
    "memory-remote",
    "nice-ignored",
    "not-isolated",
    "not-nohz-full",
    "not-rcu-nocbs",
    "numa-balancing",
    "partition-invalid",
    "rt-competitor",
    "rt-priority-99",
    "rt-throttling",
    "sibling-not-isolated",
    "smt-siblings-shared",
    "topology-inconsistent",
];

/// Downgrades the findings whose code is in `allow` (`--allow`) to info.
pub fn accept(findings: &mut [Finding], allow: &[String]) {
    for f in findings
        .iter_mut()
        .filter(|f| allow.iter().any(|a| a == f.code))
    {
        f.severity = Severity::Info;
    }
}

/// "irq-on-cpu ×20, rt-throttling": codes with their counts, in order.
pub fn summarize_codes<'a>(findings: impl Iterator<Item = &'a Finding>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for f in findings {
        match counts.iter_mut().find(|(c, _)| *c == f.code) {
            Some((_, n)) => *n += 1,
            None => counts.push((f.code, 1)),
        }
    }
    counts
        .iter()
        .map(|(c, n)| {
            if *n > 1 {
                format!("{c} ×{n}")
            } else {
                c.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The CPUs the checks look at: the chosen ones, or every allowed CPU when
/// the affinity is left unchanged.
pub fn checked_cpus(sys: &SystemState, plan: &Plan) -> CpuSet {
    plan.cpus.clone().unwrap_or_else(|| sys.allowed.clone())
}

/// All findings about running `plan` on `sys`, in a stable order: only
/// those the request can show or act on ([`Request::uses_findings`],
/// [`Request::shows_info`]; a plain launch never sees info findings, and
/// [`crate::system::Scope::for_request`] does not read what only they need).
pub fn check(sys: &SystemState, req: &Request, plan: &Plan) -> Vec<Finding> {
    if !req.uses_findings() {
        return Vec::new();
    }
    let critical = req.latency_critical();
    let ctx = Context {
        sys,
        req,
        plan,
        cpus: checked_cpus(sys, plan),
        critical,
    };
    let mut out = Vec::new();
    topology::check(&ctx, &mut out);
    isolation::check(&ctx, &mut out);
    irq::check(&ctx, &mut out);
    rt::check(&ctx, &mut out);
    memory::check(&ctx, &mut out);
    env::check(&ctx, &mut out);
    if !req.shows_info() {
        out.retain(|f| f.severity == Severity::Warning);
    }
    out
}
