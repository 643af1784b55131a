//! `--probe` in the run (issue 20): after the plan and the checks, before
//! anything is applied to pinrun itself, measure the noise on the planned
//! CPUs with the planned policies ([`crate::probe::apply::run`]), print it, and
//! gate the launch on `--probe-max`. Without a command ([`Mode::Probe`]
//! (crate::request::Mode::Probe)) only the report.

use crate::error::{Error, Exit};
use crate::finding::Finding;
use crate::noise::{ProbeRequest, ProbeRun};
use crate::output::{print_error, print_out, to_stderr};
use crate::plan::Plan;
use crate::request::Request;
use crate::system::{Root, SystemState};

/// What the probe needs of a planned request: the machine, the plan, its
/// findings, and (under `--steer-irqs`) whether the steering plan found an
/// IRQ kernel-managed (`Some(true)`), movable (`Some(false)`) or did not
/// say (`None`); the application layer builds it from its own `Planned`.
pub struct Probed<'a> {
    /// The machine, with what the checks of the chosen CPUs read.
    pub sys: &'a SystemState,
    /// The plan.
    pub plan: &'a Plan,
    /// Every finding, `--allow`ed codes downgraded to info.
    pub findings: &'a [Finding],
    /// Under `--steer-irqs`: the steering plan's word on an IRQ number.
    pub managed: Option<&'a dyn Fn(u32) -> Option<bool>>,
}

/// The housekeeping CPUs outside `probed` the watchdog may run on (allowed,
/// neither isolated nor nohz_full); `None` when there is none (it then
/// keeps pinrun's inherited affinity).
fn watchdog_cpus(
    s: &crate::system::SystemState,
    probed: &crate::cpuset::CpuSet,
) -> Option<crate::cpuset::CpuSet> {
    let cpus = s
        .allowed
        .difference(probed)
        .difference(&s.isolated)
        .difference(&s.nohz_full);
    (!cpus.is_empty()).then_some(cpus)
}

/// Refuses an unsafe probe, then probes the planned CPUs (device IRQs
/// marked kernel-managed as `--steer-irqs`' plan found them, and those
/// whose move the launch left `pending`).
fn measure(root: &Root, p: &Probed, pr: &ProbeRequest, pending: &[u32]) -> Result<ProbeRun, Error> {
    let probed = crate::probe::plan::probed_cpus(p.sys, p.plan);
    crate::probe::plan::refuse_unsafe(p.sys, p.plan, pr)?;
    let (mut run, sampled) = crate::probe::apply::run(
        root,
        p.plan,
        &p.sys.possible,
        &probed,
        pr,
        watchdog_cpus(p.sys, &probed).as_ref(),
    )?;
    run.rt_throttle = crate::probe::plan::rt_throttle(p.sys, p.plan, pr);
    run.timed = crate::probe::plan::line_up_all(&sampled, &run, std::process::id());
    // Under --steer-irqs the probe runs after the steering: an IRQ still
    // firing on a claimed CPU is named kernel-managed when the plan found
    // it so.
    // The gaps lined up in time are marked alike: the gate and the report
    // take the worst gap's own window first (plan::worst_likely).
    if let Some(managed) = p.managed {
        let mark = |sources: &mut [crate::noise::Source]| {
            super::plan::mark_managed(sources, managed);
            super::plan::mark_pending(sources, pending);
        };
        for sources in run.sources.values_mut() {
            mark(sources);
        }
        if let Ok(t) = &mut run.timed {
            for g in t.gaps.values_mut().flatten() {
                mark(&mut g.sources);
                mark(g.likely_source.as_mut_slice());
            }
        }
    }
    Ok(run)
}

/// `--probe-max`'s refusal, its hint naming only what this kernel has
/// (no `nohz_full=` where the kernel was built without it).
fn gate(run: &ProbeRun, sys: &SystemState) -> Result<(), Error> {
    let probed: crate::cpuset::CpuSet = run.cpus.iter().map(|c| c.cpu).collect();
    let host = crate::probe::plan::FixHost {
        nohz_full_built: sys.nohz_full_source != crate::system::IsolationSource::NotBuilt,
        housekeeping: watchdog_cpus(sys, &probed),
    };
    match run.request.gate_max_ns {
        Some(max) => crate::probe::plan::gate(run, max, &host),
        None => Ok(()),
    }
}

/// `pinrun --probe [placement] [scheduling]` without a command: the
/// findings' warnings on stderr, the probe on stdout (`--json`: one object,
/// with `"error"` when `--probe-max` refuses); exit 125 when it refuses.
pub fn only(root: &Root, req: &Request, p: &Probed) -> Result<Exit, Error> {
    let pr = req.probe.unwrap_or_default();
    if !req.output.quiet && !req.output.json {
        to_stderr(&crate::report::launch_text(p.plan, p.findings));
    }
    let run = measure(root, p, &pr, &[])?;
    let gated = gate(&run, p.sys);
    if req.output.json {
        let mut v = serde_json::json!({"probe": crate::probe::report::probe_json(&run)});
        if let Err(e) = &gated {
            v["error"] = crate::report::error_json(e)["error"].clone();
        }
        print_out(&format!("{v}\n"))?;
    } else {
        print_out(&crate::probe::report::probe_text(&run, req.output.verbose))?;
    }
    match gated {
        Ok(()) => Ok(Exit::Success),
        Err(e) => {
            print_error(&e, false);
            Ok(Exit::Failure)
        }
    }
}

/// The probe of a launch (`pending`: the IRQs steering left with a
/// pending move): the report for stderr (nothing with `--quiet`),
/// and the `--probe-max` refusal, if any (the report explains it, so it is
/// printed either way).
pub fn before_launch(
    root: &Root,
    req: &Request,
    p: &Probed,
    pending: &[u32],
) -> (String, Result<(), Error>) {
    let pr = req.probe.unwrap_or_default();
    let run = match measure(root, p, &pr, pending) {
        Ok(run) => run,
        Err(e) => return (String::new(), Err(e)),
    };
    let report = if req.output.quiet {
        String::new()
    } else {
        crate::probe::report::probe_text(&run, req.output.verbose)
    };
    (report, gate(&run, p.sys))
}

/// `--choose measured` (issue 31): plans the candidates (every free whole
/// core, the quietest thread of each: `crate::plan::placement`), runs the
/// spin probe on all of them at once for the requested time under
/// SCHED_OTHER, and returns `sys` with each CPU's worst gap, from which
/// the final plan chooses (SCHED_OTHER is never what
/// `crate::probe::plan::refuse_unsafe` refuses); `sys` unchanged without
/// `--choose measured`. `plan_candidates` is the application layer's
/// planning against the claims (any lock it takes released before it
/// returns).
pub fn measure_choice(
    root: &Root,
    mut sys: SystemState,
    req: &Request,
    plan_candidates: impl FnOnce(&SystemState) -> Result<Plan, Error>,
) -> Result<SystemState, Error> {
    let crate::request::Choose::Measured { duration_ns } = req.placement.choose else {
        return Ok(sys);
    };
    // The candidates as the launch would see them (an empty measurement:
    // every free whole core); the lock an --exclusive launch takes is
    // released until the final plan.
    sys.measured = Some(std::collections::BTreeMap::new());
    let mut plan = plan_candidates(&sys)?;
    // Measured under SCHED_OTHER whatever the request asks: a real-time
    // spin on every candidate at once would take every CPU from the rest
    // of the host for the whole measurement (a 1 s stall seen with --fifo
    // 90 on this machine); an ordinary thread measures what would
    // disturb the command there (IRQs, kernel work, other tasks).
    plan.sched = crate::request::SchedRequest::default();
    let probed = plan.cpus.clone().unwrap_or_default();
    let pr = ProbeRequest {
        duration_ns,
        ..ProbeRequest::default()
    };
    sys.measured = Some(crate::probe::apply::worst_gaps(
        root,
        &plan,
        &sys.possible,
        &probed,
        &pr,
        watchdog_cpus(&sys, &probed).as_ref(),
    )?);
    Ok(sys)
}
