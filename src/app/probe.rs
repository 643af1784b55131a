//! `--probe` in the run (issue 20): after the plan and the checks, before
//! anything is applied to pinrun itself, measure the noise on the planned
//! CPUs with the planned policies ([`crate::probe::run`]), print it, and
//! gate the launch on `--probe-max`. Without a command ([`Mode::Probe`]
//! (crate::request::Mode::Probe)) only the report.

use super::Planned;
use crate::error::{Error, Exit};
use crate::noise::{ProbeRequest, ProbeRun};
use crate::output::{print_error, print_out, to_stderr};
use crate::request::Request;
use crate::system::Root;

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
fn measure(
    root: &Root,
    p: &Planned,
    pr: &ProbeRequest,
    pending: &[u32],
) -> Result<ProbeRun, Error> {
    let probed = crate::plan::probe::probed_cpus(&p.sys, &p.plan);
    crate::plan::probe::refuse_unsafe(&p.sys, &p.plan, pr)?;
    let mut run = crate::probe::run(
        root,
        &p.plan,
        &p.sys.possible,
        &probed,
        pr,
        watchdog_cpus(&p.sys, &probed).as_ref(),
    )?;
    run.rt_throttle = crate::plan::probe::rt_throttle(&p.sys, &p.plan, pr);
    // Under --steer-irqs the probe runs after the steering: an IRQ still
    // firing on a claimed CPU is named kernel-managed when the plan found
    // it so.
    if let Some(sp) = &p.steer {
        for sources in run.sources.values_mut() {
            crate::noise::mark_managed(sources, |irq| crate::steer::plan::managed(sp, irq));
            crate::noise::mark_pending(sources, pending);
        }
    }
    Ok(run)
}

fn gate(run: &ProbeRun) -> Result<(), Error> {
    match run.request.gate_max_ns {
        Some(max) => crate::plan::probe::gate(
            &run.cpus,
            &run.sources,
            max,
            run.rt_throttle,
            run.rt_priority,
        ),
        None => Ok(()),
    }
}

/// `pinrun --probe [placement] [scheduling]` without a command: the
/// findings' warnings on stderr, the probe on stdout (`--json`: one object,
/// with `"error"` when `--probe-max` refuses); exit 125 when it refuses.
pub(super) fn only(root: &Root, req: &Request, p: &Planned) -> Result<Exit, Error> {
    let pr = req.probe.unwrap_or_default();
    if !req.output.quiet && !req.output.json {
        to_stderr(&crate::report::launch_text(&p.plan, &p.findings));
    }
    let run = measure(root, p, &pr, &[])?;
    let gated = gate(&run);
    if req.output.json {
        let mut v = serde_json::json!({"probe": crate::report::probe::probe_json(&run)});
        if let Err(e) = &gated {
            v["error"] = crate::report::error_json(e)["error"].clone();
        }
        print_out(&format!("{v}\n"))?;
    } else {
        print_out(&crate::report::probe::probe_text(&run, req.output.verbose))?;
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
pub(super) fn before_launch(
    root: &Root,
    req: &Request,
    p: &Planned,
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
        crate::report::probe::probe_text(&run, req.output.verbose)
    };
    (report, gate(&run))
}

/// `--choose measured` (issue 31): plans the candidates (every free whole
/// core, the quietest thread of each: `crate::plan::placement`), runs the
/// spin probe on all of them at once for the requested time under
/// SCHED_OTHER, and returns `sys` with each CPU's worst gap, from which
/// the final plan chooses (SCHED_OTHER is never what
/// `crate::plan::probe::refuse_unsafe` refuses); `sys` unchanged without
/// `--choose measured`.
pub(super) fn measure_choice(
    root: &Root,
    mut sys: crate::system::SystemState,
    req: &Request,
) -> Result<crate::system::SystemState, Error> {
    let crate::request::Choose::Measured { duration_ns } = req.placement.choose else {
        return Ok(sys);
    };
    // The candidates as the launch would see them (an empty measurement:
    // every free whole core); the lock an --exclusive launch takes is
    // released until the final plan.
    sys.measured = Some(std::collections::BTreeMap::new());
    let (mut plan, _, guard) = super::claims::plan(root, &sys, req)?;
    drop(guard);
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
    sys.measured = Some(crate::probe::worst_gaps(
        root,
        &plan,
        &sys.possible,
        &probed,
        &pr,
        watchdog_cpus(&sys, &probed).as_ref(),
    )?);
    Ok(sys)
}
