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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Machine, cpus, request};

    /// 2 packages (nodes 0 and 1) × 4 cores × 2 threads: CPU 0's sibling
    /// is 8; node 0 holds 0-3,8-11, node 1 holds 4-7,12-15.
    fn machine() -> Machine {
        Machine::new(2, 4, 2)
    }

    /// The findings of `pinrun ARGS` on `sys`, as (code, severity, CPUs).
    fn findings(sys: &SystemState, args: &[&str]) -> Vec<(Code, Severity, CpuSet)> {
        let req = request(args);
        let plan = crate::plan::plan(sys, &req).expect("a plan");
        check(sys, &req, &plan)
            .into_iter()
            .map(|f| (f.code, f.severity, f.cpus.into_iter().collect()))
            .collect()
    }

    fn find(all: &[(Code, Severity, CpuSet)], code: Code) -> Option<(Severity, CpuSet)> {
        all.iter()
            .find(|(c, _, _)| *c == code)
            .map(|(_, s, set)| (*s, set.clone()))
    }

    #[test]
    fn cpus_that_are_not_isolated_are_named() {
        let sys = machine().isolated("4-7").build();
        let f = findings(&sys, &["--check", "--cpus", "2-5"]);
        // The scheduler could balance tasks there: a notice; the tick
        // interrupts them now: a warning.
        assert_eq!(
            find(&f, Code::NotIsolated),
            Some((Severity::Notice, cpus("2-3")))
        );
        assert_eq!(
            find(&f, Code::NotNohzFull),
            Some((Severity::Warning, cpus("2-3")))
        );
    }

    /// Issue 35 class 3: `nohz=off` (setup_tick_nohz()'s kstrtobool)
    /// keeps the tick of the nohz_full CPUs running: tick_nohz_activate()
    /// never sets TS_FLAG_NOHZ, which tick_nohz_full_update_tick() needs
    /// (kernel/time/tick-sched.c), though cpu/nohz_full lists them.
    #[test]
    fn nohz_off_keeps_the_tick_of_nohz_full_cpus() {
        let mut sys = machine().isolated("4-7").build();
        let args = ["--check", "--cpus", "4-5"];
        assert_eq!(find(&findings(&sys, &args), Code::NotNohzFull), None);
        sys.boot = crate::boot_params::parse("nohz_full=4-7 nohz=off", Some(15));
        assert_eq!(
            find(&findings(&sys, &args), Code::NotNohzFull),
            Some((Severity::Warning, cpus("4-5")))
        );
        // The last value kstrtobool() accepts stands.
        sys.boot = crate::boot_params::parse("nohz=off nohz_full=4-7 nohz=1", Some(15));
        assert_eq!(find(&findings(&sys, &args), Code::NotNohzFull), None);
    }

    /// Issue 35 class 4: unbound workqueue workers run anywhere in
    /// `wq_unbound_cpumask` (kernel/workqueue.c), isolated CPUs included
    /// when the mask has them (isolcpus=domain before Linux 6.6, or a
    /// mask written so): `not-isolated` for those of the checked CPUs;
    /// none when the mask leaves them out, or was not read.
    #[test]
    fn workqueues_may_run_on_isolated_cpus() {
        let mut sys = machine().isolated("4-7").build();
        let args = ["--check", "--cpus", "4-5"];
        assert_eq!(find(&findings(&sys, &args), Code::NotIsolated), None);
        sys.workqueue_cpus = Some(cpus("0-3,8-15"));
        assert_eq!(find(&findings(&sys, &args), Code::NotIsolated), None);
        sys.workqueue_cpus = Some(cpus("0-4,8-15"));
        assert_eq!(
            find(&findings(&sys, &args), Code::NotIsolated),
            Some((Severity::Warning, cpus("4")))
        );
    }

    /// Issue 35 class 4: a SCHED_DEADLINE task keeps the tick of a
    /// nohz_full CPU (`sched_can_stop_tick()`, kernel/sched/core.c:
    /// "Deadline tasks, even if single, need the tick"); one SCHED_FIFO
    /// task lets it stop. So a deadline launch on nohz_full CPUs is
    /// `not-nohz-full` for them, a FIFO one is not.
    #[test]
    fn deadline_keeps_the_tick_of_nohz_full_cpus() {
        let mut sys = machine().build();
        sys.nohz_full = cpus("4-7");
        let ticking = |args: &[&str]| -> Vec<CpuSet> {
            findings(&sys, args)
                .into_iter()
                .filter(|(c, _, _)| *c == Code::NotNohzFull)
                .map(|(_, _, set)| set)
                .collect()
        };
        let all = "0-15";
        assert_eq!(
            ticking(&["--check", "--cpus", all, "--fifo", "10"]),
            vec![cpus("0-3,8-15")]
        );
        assert_eq!(
            ticking(&[
                "--check",
                "--cpus",
                all,
                "--deadline",
                "--sched-runtime",
                "1ms",
                "--sched-period",
                "10ms"
            ]),
            vec![cpus("4-7"), cpus("0-3,8-15")]
        );
    }

    /// Issue 35 class 3: an unknown isolcpus= flag of letters only is
    /// skipped since 5.7 (housekeeping_isolcpus_setup(): "Skipped unknown
    /// flag"), so the rest applies: a notice; cpu/isolated listing none of
    /// its CPUs says this kernel rejected it; a flag with another
    /// character ("Invalid flag") always rejects it.
    #[test]
    fn unknown_isolcpus_flags_as_the_kernel_reads_them() {
        let args = ["--check", "--cpus", "4-5"];
        let flag = |cmdline: &str, isolated: Option<&str>| {
            let m = machine();
            let mut sys = match isolated {
                Some(list) => m.isolated(list),
                None => m,
            }
            .build();
            sys.boot = crate::boot_params::parse(cmdline, Some(15));
            find(&findings(&sys, &args), Code::IsolcpusUnknownFlag).map(|(s, _)| s)
        };
        assert_eq!(
            flag("isolcpus=bogus,4-7", Some("4-7")),
            Some(Severity::Notice)
        );
        assert_eq!(flag("isolcpus=bogus,4-7", None), Some(Severity::Warning));
        assert_eq!(
            flag("isolcpus=no_hz,4-7", Some("4-7")),
            Some(Severity::Warning)
        );
        assert_eq!(flag("isolcpus=domain,4-7", Some("4-7")), None);
    }

    #[test]
    fn disturbances_are_info_unless_latency_critical() {
        let sys = machine().build();
        let plain = findings(&sys, &["--dry-run", "--cpus", "1"]);
        assert_eq!(
            find(&plain, Code::NotIsolated),
            Some((Severity::Info, cpus("1")))
        );
        let rt = findings(&sys, &["--dry-run", "--cpus", "1", "--fifo", "10"]);
        assert_eq!(
            find(&rt, Code::NotIsolated),
            Some((Severity::Notice, cpus("1")))
        );
        assert_eq!(
            find(&rt, Code::NotNohzFull),
            Some((Severity::Warning, cpus("1")))
        );
        assert_eq!(
            find(&plain, Code::NotNohzFull),
            Some((Severity::Info, cpus("1")))
        );
    }

    #[test]
    fn an_isolated_cpu_whose_sibling_is_not_is_found() {
        // CPU 4's sibling is 12, which is not isolated.
        let sys = machine().isolated("4").build();
        let f = findings(&sys, &["--check", "--cpus", "4"]);
        assert_eq!(find(&f, Code::NotIsolated), None);
        assert_eq!(
            find(&f, Code::SiblingNotIsolated).map(|(s, _)| s),
            Some(Severity::Warning)
        );
    }

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

    #[test]
    fn rt_priority_99_and_nice_with_rt_are_warnings() {
        let sys = machine().build();
        let f = findings(&sys, &["--dry-run", "--fifo", "99", "--nice", "5"]);
        assert_eq!(
            find(&f, Code::RtPriority99).map(|(s, _)| s),
            Some(Severity::Warning)
        );
        assert!(find(&f, Code::NiceIgnored).is_some());
        let dl = findings(
            &sys,
            &[
                "--dry-run",
                "--deadline",
                "--sched-runtime",
                "1ms",
                "--sched-period",
                "10ms",
            ],
        );
        assert!(find(&dl, Code::DeadlineCannotFork).is_some());
    }

    #[test]
    fn memory_bound_to_a_remote_node_is_found() {
        let sys = machine().build();
        let f = findings(&sys, &["--dry-run", "--cpus", "0", "--membind", "1"]);
        assert!(find(&f, Code::MemoryRemote).is_some());
        let local = findings(&sys, &["--dry-run", "--cpus", "0", "--membind", "0"]);
        assert_eq!(find(&local, Code::MemoryRemote), None);
    }

    #[test]
    fn a_strict_bind_to_a_nearly_full_node_is_a_hazard() {
        let sys = machine().free_mib(1, 100).build();
        let f = findings(&sys, &["--dry-run", "--membind", "1"]);
        assert_eq!(
            find(&f, Code::BindLowMemory).map(|(s, _)| s),
            Some(Severity::Warning)
        );
        // The kernel reclaims page cache and reclaimable slab before it
        // kills: 100 MiB free and 1 GiB of them is no hazard.
        let cached = machine().free_mib(1, 100).reclaimable_mib(1, 1024).build();
        let f = findings(&cached, &["--dry-run", "--membind", "1"]);
        assert_eq!(find(&f, Code::BindLowMemory), None);
        // A bind to every node with memory restricts nothing: no hazard
        // pinrun adds, whatever is free.
        let f = findings(&sys, &["--dry-run", "--membind", "0-1"]);
        assert_eq!(find(&f, Code::BindLowMemory), None);
        let one_node = machine().free_mib(1, 100).without_memory(0).build();
        let f = findings(&one_node, &["--dry-run", "--membind", "1"]);
        assert_eq!(find(&f, Code::BindLowMemory), None);
    }

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
