//! Environment and power findings: thread-binding variables of OpenMP
//! runtimes, cpufreq governors.

use super::{Context, Finding, Severity};
use crate::cpuset::CpuSet;

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    for (k, v) in &ctx.sys.env_affinity {
        out.push(Finding::new(
            "env-thread-binding",
            Severity::Warning,
            &CpuSet::new(),
            format!("{k}={v} is set: the program's OpenMP runtime will re-bind its threads itself, possibly outside pinrun's CPUs"),
            format!("unset {k}, or make it agree with the chosen CPUs"),
        ));
    }
    let slow: CpuSet = ctx
        .cpus
        .iter()
        .filter(|c| {
            ctx.sys
                .cpus
                .get(c)
                .and_then(|cpu| cpu.governor.as_deref())
                .is_some_and(|g| g != "performance")
        })
        .collect();
    if let Some(first) = slow.first() {
        let gov = ctx.sys.cpus[&first].governor.clone().unwrap_or_default();
        out.push(Finding::new(
            "cpufreq-governor",
            Severity::Info,
            &slow,
            format!("cpufreq governor \"{gov}\" on {}: the clock ramps up only under load, adding wake-up latency", crate::plan::cpus_phrase(&slow)),
            format!("cpupower -c {slow} frequency-set -g performance"),
        ));
    }
}
