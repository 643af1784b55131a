//! Environment and power findings: thread-binding variables of OpenMP
//! runtimes, cpufreq governors.

use super::{Code, Context, Finding, Severity};
use crate::cpuset::CpuSet;

/// The codes the env check can emit.
pub(super) const CODES: &[Code] = &[
    Code::CpuidleDeepStates,
    Code::EnvThreadBinding,
    Code::CpufreqGovernor,
];

pub(super) fn check(ctx: &Context, out: &mut Vec<Finding>) {
    // One finding for every variable set. Under --omp the command gets
    // pinrun's OMP_PLACES and OMP_PROC_BIND instead (a differing one, and
    // KMP_AFFINITY or GOMP_CPU_AFFINITY, were refused by the plan or
    // removed by --omp-replace): nothing is left to re-bind the threads.
    // An empty OMP_PLACES or OMP_PROC_BIND binds nothing (libgomp ignores
    // it), nor does a value that turns binding off (OMP_PROC_BIND=false,
    // KMP_AFFINITY=none|disabled): crate::plan::per_thread::rebinding_env.
    let binding: Vec<&(String, String)> =
        crate::plan::per_thread::rebinding_env(&ctx.sys.env_affinity).collect();
    if !binding.is_empty() && ctx.plan.omp.is_none() {
        let set: Vec<String> = binding.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let names: Vec<&str> = binding.iter().map(|(k, _)| k.as_str()).collect();
        let mut f = Finding::new(
            Code::EnvThreadBinding,
            Severity::Warning,
            &CpuSet::new(),
            format!(
                "{} {} set: the program's OpenMP runtime will re-bind its threads itself, possibly outside pinrun's CPUs",
                super::listed(&set),
                if set.len() == 1 { "is" } else { "are" }
            ),
            format!(
                "unset {}, or make {} agree with the chosen CPUs",
                names.join(" "),
                if names.len() == 1 { "it" } else { "them" }
            ),
        );
        f.items = set;
        out.push(f);
    }
    /// Idle states with a longer exit latency than this (µs) are reported.
    const DEEP_IDLE_US: u64 = 10;
    let deep: CpuSet = ctx
        .sys
        .idle_states
        .iter()
        .filter(|(_, states)| states.iter().any(|s| s.latency_us > DEEP_IDLE_US))
        .map(|(c, _)| *c)
        .collect();
    if let Some(first) = deep.first() {
        let worst = ctx.sys.idle_states[&first]
            .iter()
            .max_by_key(|s| s.latency_us);
        out.push(Finding::new(
            Code::CpuidleDeepStates,
            Severity::Info,
            &deep,
            format!(
                "{} can enter idle states with exit latency above {DEEP_IDLE_US} us (deepest: {} at {} us): waking up costs that much",
                crate::words::cpus_phrase(&deep),
                worst.map_or("?", |s| s.name.as_str()),
                worst.map_or(0, |s| s.latency_us)
            ),
            format!("cpupower -c {deep} idle-set -D {DEEP_IDLE_US}, or boot with intel_idle.max_cstate=1 / processor.max_cstate=1"),
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
            Code::CpufreqGovernor,
            Severity::Info,
            &slow,
            format!("cpufreq governor \"{gov}\" on {}: the clock ramps up only under load, adding wake-up latency", crate::words::cpus_phrase(&slow)),
            format!("cpupower -c {slow} frequency-set -g performance"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use crate::finding::Code;
    use crate::testkit::{Machine, request};

    /// OMP_PLACES in the environment warns that the runtime re-binds its
    /// threads; with --omp (the same OMP_PLACES, or --omp-replace) the
    /// command gets pinrun's, and the finding is gone.
    #[test]
    fn omp_replaces_the_binding_finding() {
        let mut sys = Machine::new(1, 4, 1).build();
        sys.env_affinity = vec![("OMP_PLACES".into(), "{0},{1}".into())];
        let codes = |args: &[&str]| {
            let req = request(args);
            let plan = crate::plan::plan(&sys, &req).expect("a plan");
            crate::check::check(&sys, &req, &plan)
                .into_iter()
                .map(|f| f.code)
                .collect::<Vec<_>>()
        };
        assert!(codes(&["--dry-run", "--cpus", "0-1"]).contains(&Code::EnvThreadBinding));
        assert!(!codes(&["--dry-run", "--cpus", "0-1", "--omp"]).contains(&Code::EnvThreadBinding));
    }

    /// An empty OMP_PLACES, OMP_PROC_BIND or GOMP_CPU_AFFINITY binds
    /// nothing: libgomp (env.c parse_places_var, parse_bind_var,
    /// parse_affinity, where strtoul reading nothing is invalid) rejects
    /// it and runs as if it were unset, so no finding.
    #[test]
    fn empty_omp_binding_is_unset() {
        let mut sys = Machine::new(1, 4, 1).build();
        for (k, v, warns) in [
            ("OMP_PLACES", "", false),
            ("OMP_PROC_BIND", " ", false),
            ("GOMP_CPU_AFFINITY", "", false),
            ("GOMP_CPU_AFFINITY", "2", true),
            ("OMP_PLACES", "{0}", true),
        ] {
            sys.env_affinity = vec![(k.into(), v.into())];
            let req = request(&["--dry-run", "--cpus", "0-1"]);
            let plan = crate::plan::plan(&sys, &req).expect("a plan");
            let found = crate::check::check(&sys, &req, &plan)
                .iter()
                .any(|f| f.code == Code::EnvThreadBinding);
            assert_eq!(found, warns, "{k}={v:?}");
        }
    }

    /// A value that turns binding off is no re-binding (issue 35, the live
    /// case: `OMP_PROC_BIND=false` warned and `--strict` refused a correct
    /// launch): OMP_PROC_BIND=false in any case, with OMP_PLACES or
    /// GOMP_CPU_AFFINITY then ignored by libgomp; KMP_AFFINITY of type
    /// none or disabled. KMP_AFFINITY of another type still binds, even
    /// beside OMP_PROC_BIND=false (the LLVM runtime follows KMP_AFFINITY).
    #[test]
    fn values_that_turn_binding_off_do_not_warn() {
        let mut sys = Machine::new(1, 4, 1).build();
        let cases: &[(&[(&str, &str)], bool)] = &[
            (&[("OMP_PROC_BIND", "false")], false),
            (&[("OMP_PROC_BIND", " FALSE ")], false),
            (
                &[("OMP_PROC_BIND", "False"), ("OMP_PLACES", "{0},{1}")],
                false,
            ),
            (
                &[("OMP_PROC_BIND", "false"), ("GOMP_CPU_AFFINITY", "0-3")],
                false,
            ),
            (&[("KMP_AFFINITY", "none")], false),
            (&[("KMP_AFFINITY", "verbose,disabled")], false),
            (&[("KMP_AFFINITY", "granularity=fine,None")], false),
            (&[("OMP_PROC_BIND", "true")], true),
            (&[("OMP_PROC_BIND", "close")], true),
            (&[("KMP_AFFINITY", "compact")], true),
            (&[("KMP_AFFINITY", "explicit,proclist=[0,1]")], true),
            (
                &[("OMP_PROC_BIND", "false"), ("KMP_AFFINITY", "scatter")],
                true,
            ),
        ];
        for (env, warns) in cases {
            sys.env_affinity = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let req = request(&["--dry-run", "--cpus", "0-1"]);
            let plan = crate::plan::plan(&sys, &req).expect("a plan");
            let found = crate::check::check(&sys, &req, &plan)
                .iter()
                .any(|f| f.code == Code::EnvThreadBinding);
            assert_eq!(found, *warns, "{env:?}");
        }
    }
}
