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
pub mod rt;
mod topology;

use crate::claim::Claims;
use crate::cpuset::CpuSet;
pub use crate::finding::{Code, Finding, Severity};
use crate::plan::Plan;
use crate::request::Request;
use crate::system::SystemState;

/// What every check sees.
pub struct Context<'a> {
    /// The machine.
    pub sys: &'a SystemState,
    /// The request.
    pub req: &'a Request,
    /// The plan.
    pub plan: &'a Plan,
    /// The CPUs other launches hold.
    pub claims: &'a Claims,
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

    /// What only could disturb the chosen CPUs (see [`Severity`]): notice
    /// when latency-critical, info otherwise.
    pub fn possible_disturbance(&self) -> Severity {
        if self.critical {
            Severity::Notice
        } else {
            Severity::Info
        }
    }

    /// Online CPUs outside the checked ones: where housekeeping can go.
    pub fn housekeeping(&self) -> CpuSet {
        self.sys.online.difference(&self.cpus)
    }
}

/// Downgrades the findings whose code is in `allow` (`--allow`) to info.
pub fn accept(findings: &mut [Finding], allow: &[Code]) {
    for f in findings.iter_mut().filter(|f| allow.contains(&f.code)) {
        f.severity = Severity::Info;
    }
}

/// "irq-on-cpu ×20, rt-throttling": codes with their counts, in order.
pub fn summarize_codes<'a>(findings: impl Iterator<Item = &'a Finding>) -> String {
    let mut counts: Vec<(Code, usize)> = Vec::new();
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

/// Items of one finding, joined for its one-line message: the first three
/// separated by "; ", the rest counted ("and 2 more").
pub(crate) fn listed(items: &[String]) -> String {
    const NAMED: usize = 3;
    let mut s = items
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > NAMED {
        s.push_str(&format!("; and {} more", items.len() - NAMED));
    }
    s
}

/// One check: the function and the codes it can emit.
type Check = (fn(&Context, &mut Vec<Finding>), &'static [Code]);

/// Every check, in the order of their findings. A new subject is a module
/// with a `check` function and its `CODES`, added here.
const CHECKS: &[Check] = &[
    (topology::check, topology::CODES),
    (isolation::check, isolation::CODES),
    (irq::check, irq::CODES),
    (rt::check, rt::CODES),
    (memory::check, memory::CODES),
    (env::check, env::CODES),
];

/// Runs `check`, asserting (in debug builds) that it emits only codes of
/// its `codes` (its module's `CODES`).
pub fn run_one(
    ctx: &Context,
    out: &mut Vec<Finding>,
    codes: &[Code],
    check: impl FnOnce(&Context, &mut Vec<Finding>),
) {
    let from = out.len();
    check(ctx, out);
    debug_assert!(
        out[from..].iter().all(|f| codes.contains(&f.code)),
        "a check emitted a code missing from its CODES"
    );
}

/// The CPUs the checks look at: the chosen ones, or, when the affinity is
/// left unchanged, the task's CPUs ([`crate::plan::placement::task_cpus`]:
/// where the command will run).
pub fn checked_cpus(sys: &SystemState, plan: &Plan) -> CpuSet {
    crate::plan::placement::command_cpus(sys, plan)
}

/// All findings about running `plan` on `sys`, in a stable order: only
/// those the request can show or act on ([`Request::uses_findings`],
/// [`Request::shows_info`]; a plain launch never sees info findings, and
/// [`crate::app::scope::for_request`] does not read what only they need).
pub fn check(sys: &SystemState, req: &Request, plan: &Plan) -> Vec<Finding> {
    check_claimed(sys, req, plan, &Claims::default())
}

/// [`check`] with the CPUs other launches hold ([`Context::claims`]:
/// some checks' hints name free CPUs). The claims wing's own findings
/// (`claims::check::findings`) and the fleet wing's are appended by `app`,
/// before `--allow` is applied by [`accept`].
pub fn check_claimed(
    sys: &SystemState,
    req: &Request,
    plan: &Plan,
    claims: &Claims,
) -> Vec<Finding> {
    findings_of(sys, req, plan, claims, |ctx, out| {
        for (check, codes) in CHECKS {
            run_one(ctx, out, codes, check);
        }
    })
}

/// The findings `run` appends about running `plan` on `sys` with `claims`
/// held: none (`run` not called) when the request uses no findings
/// ([`Request::uses_findings`]), info ones only when it shows them
/// ([`Request::shows_info`]). The core's checks ([`check_claimed`]) and
/// each wing's (the claims' and the fleet's, which `app` appends to the
/// core's) run through it.
pub fn findings_of(
    sys: &SystemState,
    req: &Request,
    plan: &Plan,
    claims: &Claims,
    run: impl FnOnce(&Context, &mut Vec<Finding>),
) -> Vec<Finding> {
    if !req.uses_findings() {
        return Vec::new();
    }
    let critical = req.latency_critical();
    let ctx = Context {
        sys,
        req,
        plan,
        claims,
        cpus: checked_cpus(sys, plan),
        critical,
    };
    let mut out = Vec::new();
    run(&ctx, &mut out);
    if !req.shows_info() {
        out.retain(|f| f.severity >= Severity::Notice);
    }
    out
}

/// What the checks' unit tests share: a machine and the findings of a
/// request on it.
#[cfg(test)]
mod testing {
    use super::*;
    use crate::testkit::{Machine, request};

    /// 2 packages (nodes 0 and 1) × 4 cores × 2 threads: CPU 0's sibling
    /// is 8; node 0 holds 0-3,8-11, node 1 holds 4-7,12-15.
    pub(super) fn machine() -> Machine {
        Machine::new(2, 4, 2)
    }

    /// The findings of `pinrun ARGS` on `sys`, as (code, severity, CPUs).
    pub(super) fn findings(sys: &SystemState, args: &[&str]) -> Vec<(Code, Severity, CpuSet)> {
        let req = request(args);
        let plan = crate::plan::plan(sys, &req).expect("a plan");
        check(sys, &req, &plan)
            .into_iter()
            .map(|f| (f.code, f.severity, f.cpus.into_iter().collect()))
            .collect()
    }

    /// The finding of `code` of `pinrun ARGS` on `sys`, as (severity,
    /// message, hint).
    pub(super) fn worded(
        sys: &SystemState,
        args: &[&str],
        code: Code,
    ) -> Option<(Severity, String, String)> {
        let req = request(args);
        let plan = crate::plan::plan(sys, &req).expect("a plan");
        check(sys, &req, &plan)
            .into_iter()
            .find(|f| f.code == code)
            .map(|f| (f.severity, f.message, f.hint))
    }

    /// The finding of `code` among `all`, as (severity, CPUs).
    pub(super) fn find(all: &[(Code, Severity, CpuSet)], code: Code) -> Option<(Severity, CpuSet)> {
        all.iter()
            .find(|(c, _, _)| *c == code)
            .map(|(_, s, set)| (*s, set.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{findings, machine};
    use super::*;

    #[test]
    fn a_quiet_launch_computes_no_findings() {
        let sys = machine().build();
        assert!(findings(&sys, &["--quiet", "--cpus", "1", "true"]).is_empty());
    }

    /// Every finding code belongs to exactly one check.
    #[test]
    fn every_code_has_one_check() {
        // The wings' findings are added by `app` (claims::check::findings,
        // fleet::check::findings).
        let mut all: Vec<Code> = CHECKS
            .iter()
            .flat_map(|(_, c)| c.iter().copied())
            .chain(crate::claims::check::CODES.iter().copied())
            .chain(crate::fleet::check::CODES.iter().copied())
            .collect();
        all.sort_unstable();
        let mut want = Code::ALL.to_vec();
        want.sort_unstable();
        assert_eq!(all, want);
    }
}
