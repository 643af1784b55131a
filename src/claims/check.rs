//! Claim findings (issue 5): `cpu-claimed` when the command would run on
//! CPUs another launch holds, `claim-record-unusable` for each record that
//! could not be used (info when another user owns it), and
//! `claim-state-unusable` when the state directory or kubelet's file could
//! not be read. Pure; `app` appends them to the core's findings
//! ([`findings`]).

use crate::check::{Code, Context, Finding, Severity};
use crate::claim::Claims;
use crate::cpuset::CpuSet;
use crate::plan::Plan;
use crate::request::Request;
use crate::system::SystemState;
use crate::words::cpus_phrase;

/// The codes the claims check can emit.
pub const CODES: &[Code] = &[
    Code::CpuClaimed,
    Code::ClaimRecordUnusable,
    Code::ClaimStateUnusable,
];

/// The claim findings of running `plan` on `sys` with `claims` held, as
/// the core's [`crate::check::check_claimed`] gives its own (through
/// [`crate::check::findings_of`]). `app` appends them right after the
/// core's, before `--allow` ([`crate::check::accept`]).
pub fn findings(sys: &SystemState, req: &Request, plan: &Plan, claims: &Claims) -> Vec<Finding> {
    crate::check::findings_of(sys, req, plan, claims, |ctx, out| {
        crate::check::run_one(ctx, out, CODES, check);
    })
}

/// The claim findings about running the plan (affinity unchanged: on the
/// CPUs the command would inherit, `Cpus_allowed_list` within the allowed
/// set).
fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let inherited = sys
        .process
        .cpus_allowed
        .as_ref()
        .unwrap_or(&sys.allowed)
        .intersection(&sys.allowed);
    let none = CpuSet::new();
    let unusable = ctx
        .claims
        .warnings
        .iter()
        .map(|w| (w, Severity::Warning))
        .chain(
            ctx.claims
                .foreign_warnings
                .iter()
                .map(|w| (w, Severity::Info)),
        );
    // One finding per code: the most serious first, the severity theirs.
    let mut unusable: Vec<(&String, Severity)> = unusable.collect();
    unusable.sort_by_key(|(_, s)| std::cmp::Reverse(*s));
    if let Some(&(_, severity)) = unusable.first() {
        let texts: Vec<String> = unusable.iter().map(|(w, _)| (*w).clone()).collect();
        let mut f = Finding::new(
            Code::ClaimRecordUnusable,
            severity,
            &none,
            crate::check::listed(&texts),
            "remove the files whose process is gone (their owner or root can); pinrun ignores them meanwhile",
        );
        f.items = texts;
        out.push(f);
    }
    if !ctx.claims.state_warnings.is_empty() {
        let mut f = Finding::new(
            Code::ClaimStateUnusable,
            Severity::Warning,
            &none,
            crate::check::listed(&ctx.claims.state_warnings),
            "claims pinrun cannot read are not respected: fix the state directory (mode 1777, owned by root) or the file named",
        );
        f.items = ctx.claims.state_warnings.clone();
        out.push(f);
    }
    let cpus = ctx.plan.cpus.as_ref().unwrap_or(&inherited);
    let taken = cpus.intersection(&ctx.claims.cpus());
    if !taken.is_empty() {
        out.push(Finding::new(
            Code::CpuClaimed,
            Severity::Warning,
            &taken,
            format!(
                "the command would run on claimed {}: {}",
                cpus_phrase(&taken),
                ctx.claims.describe(&taken)
            ),
            "choose with --cores N (it skips claimed cores), or wait for the holder (--wait)",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Machine, kubelet, request};

    /// 2 packages (nodes 0 and 1) × 4 cores × 2 threads.
    fn machine() -> Machine {
        Machine::new(2, 4, 2)
    }

    #[test]
    fn claimed_cpus_come_from_check_claimed_and_allow_downgrades() {
        let sys = machine().build();
        let req = request(&["--dry-run", "--cpus", "1-2"]);
        let plan = crate::plan::plan(&sys, &req).unwrap();
        let claims = kubelet("2,10");
        let mut f = crate::check::check_claimed(&sys, &req, &plan, &claims);
        f.extend(findings(&sys, &req, &plan, &claims));
        let claimed = f
            .iter()
            .find(|f| f.code == Code::CpuClaimed)
            .expect("cpu-claimed");
        assert_eq!(
            (claimed.severity, claimed.cpus.clone()),
            (Severity::Warning, vec![2])
        );
        assert_eq!(f.last().map(|f| f.code), Some(Code::CpuClaimed));
        crate::check::accept(&mut f, &[Code::CpuClaimed]);
        assert!(
            f.iter()
                .all(|f| f.code != Code::CpuClaimed || f.severity == Severity::Info)
        );
    }
}
