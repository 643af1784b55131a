//! Topology findings: SMT siblings requested together, inconsistent
//! firmware data.

use super::{Code, Context, Finding, Severity};
use crate::cpuset::CpuSet;
use crate::plan::units::CoreTypes;
use crate::plan::{cores_of, inherited_bound};
use crate::request::CoreType;
use crate::words::cpus_phrase;

/// The codes the topology check can emit.
pub(super) const CODES: &[Code] = &[
    Code::SmtSiblingsShared,
    Code::FirmwareData,
    Code::TopologyInconsistent,
    Code::SourcesDisagree,
    Code::OutsideInheritedAffinity,
    Code::EfficiencyCore,
];

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    efficiency_core(ctx, out);
    for w in &ctx.sys.warnings {
        out.push(Finding::new(
            Code::FirmwareData,
            Severity::Warning,
            &CpuSet::new(),
            w.clone(),
            "the kernel reports inconsistent topology (firmware SRAT/ACPI tables); check BIOS settings and kernel version",
        ));
    }
    for w in &ctx.sys.topology_issues {
        out.push(Finding::new(
            Code::TopologyInconsistent,
            Severity::Warning,
            &CpuSet::new(),
            w.clone(),
            "the kernel's topology files contradict each other (a kernel or firmware bug, or a damaged dump); the plan uses the sources that agree, as the message says",
        ));
    }
    if let Some(cpus) = &ctx.req.placement.cpus
        && let Some(bound) = inherited_bound(ctx.sys, ctx.req.placement.within)
    {
        let outside = cpus.difference(&bound);
        if !outside.is_empty() {
            out.push(Finding::new(
                Code::OutsideInheritedAffinity,
                Severity::Warning,
                &outside,
                format!(
                    "{} {} outside the inherited CPU affinity ({}), which narrows the allowed CPUs: another task given its own affinity (taskset, CPUAffinity=, a batch scheduler) may run there",
                    cpus_phrase(&outside),
                    if outside.len() == 1 { "is" } else { "are" },
                    ctx.sys.inherited_phrase(),
                ),
                format!("choose inside it ({bound}) with --cores or --cpus, or confirm with --allow outside-inherited-affinity"),
            ));
        }
    }
    for d in &ctx.sys.disagreements {
        out.push(Finding::new(
            Code::SourcesDisagree,
            Severity::Warning,
            &d.cpus,
            d.message.clone(),
            d.hint.clone(),
        ));
    }
    if let (Some(cpus), None) = (&ctx.req.placement.cpus, ctx.req.placement.cores) {
        let shared: Vec<CpuSet> = cores_of(ctx.sys, cpus)
            .into_iter()
            .map(|core| core.intersection(cpus))
            .filter(|used| used.len() > 1)
            .collect();
        if !shared.is_empty() {
            let all = shared.iter().fold(CpuSet::new(), |a, c| a.union(c));
            let groups: Vec<String> = shared
                .iter()
                .map(|c| {
                    c.iter()
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join("+")
                })
                .collect();
            out.push(Finding::new(
                Code::SmtSiblingsShared,
                Severity::Warning,
                &all,
                format!(
                    "{} share physical cores as SMT siblings ({}): threads on one core share its execution units and caches",
                    cpus_phrase(&all),
                    groups.join(", ")
                ),
                "use one CPU per core (--cores N picks whole cores), unless sharing a core is intended",
            ));
        }
    }
}

/// `efficiency-core`: a real-time (SCHED_FIFO, SCHED_RR) or `--isolated`
/// launch whose chosen CPUs include some that are not performance cores,
/// unless `--core-type efficiency` asked for them.
fn efficiency_core(ctx: &Context, out: &mut Vec<Finding>) {
    let p = &ctx.req.placement;
    let rt = ctx.req.sched.policy.is_some_and(|pol| pol.is_rt());
    let (Some(chosen), true) = (&ctx.plan.cpus, rt || p.isolated) else {
        return;
    };
    if p.core_type == Some(CoreType::Efficiency) {
        return;
    }
    let Some(types) = CoreTypes::of(ctx.sys) else {
        return;
    };
    let slow = chosen.difference(&types.performance);
    if slow.is_empty() {
        return;
    }
    let what = if rt { "a real-time" } else { "an --isolated" };
    out.push(Finding::new(
        Code::EfficiencyCore,
        Severity::Warning,
        &slow,
        format!(
            "{what} launch runs on {}, which {}: {}",
            cpus_phrase(&slow),
            if slow.len() == 1 {
                "is not a performance core"
            } else {
                "are not performance cores"
            },
            types.describe(&ctx.sys.online)
        ),
        format!(
            "add --core-type performance (performance cores: {}), or confirm with --allow efficiency-core",
            crate::words::or_none(&types.performance)
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::super::testing::{find, findings, machine};
    use crate::finding::Code;
    use crate::testkit::cpus;

    #[test]
    fn requested_smt_siblings_are_one_finding() {
        let sys = machine().build();
        let f = findings(&sys, &["--check", "--cpus", "0,8"]);
        assert_eq!(
            find(&f, Code::SmtSiblingsShared).map(|(_, c)| c),
            Some(cpus("0,8"))
        );
        let apart = findings(&sys, &["--check", "--cpus", "0-1"]);
        assert_eq!(find(&apart, Code::SmtSiblingsShared), None);
    }
}
