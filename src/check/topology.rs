//! Topology findings: SMT siblings requested together, inconsistent
//! firmware data.

use super::{Context, Finding, Severity};
use crate::cpuset::CpuSet;
use crate::plan::{cores_of, cpus_phrase};

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    for w in &ctx.sys.warnings {
        out.push(Finding::new(
            "firmware-data",
            Severity::Warning,
            &CpuSet::new(),
            w.clone(),
            "the kernel reports inconsistent topology (firmware SRAT/ACPI tables); check BIOS settings and kernel version",
        ));
    }
    if let (Some(cpus), None) = (&ctx.req.placement.cpus, ctx.req.placement.cores) {
        for core in cores_of(ctx.sys, cpus) {
            let used = core.intersection(cpus);
            if used.len() > 1 {
                out.push(Finding::new(
                    "smt-siblings-shared",
                    Severity::Warning,
                    &used,
                    format!("{} are SMT siblings of one core: they share its execution units and caches", cpus_phrase(&used)),
                    "use one CPU per core (--cores N picks whole cores), unless sharing a core is intended",
                ));
            }
        }
    }
}
