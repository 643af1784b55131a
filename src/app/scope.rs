//! What a launch reads, decided up front from the request: the
//! [`Scope`] of the first read, and what [`SystemState::read_extras`] reads
//! once the plan has chosen the CPUs (the governors, idle states and IRQ
//! names of the checked CPUs only: reading them for every CPU would cost a
//! few files per CPU on every launch, BENCHMARKS.md). The system layer
//! never sees the request.

use crate::cpuset::CpuSet;
use crate::policy::Policy;
use crate::request::{MemoryRequest, Mode, Request};
use crate::system::rt_tasks::RtScan;
use crate::system::{Cpus, Root, Scope, SystemState};

/// What planning and checking `req` look at.
pub fn for_request(req: &Request) -> Scope {
    if matches!(req.mode, Mode::Show | Mode::PlanHost) {
        return Scope::full();
    }
    let p = &req.placement;
    // Every emitted file carries the topology fingerprint, of every CPU.
    let fingerprint = matches!(req.mode, Mode::Emit | Mode::CheckEmitted);
    let topology = if fingerprint {
        Cpus::All
    } else if !p.is_requested() {
        Cpus::None
    } else if let Some(cpus) = &p.cpus {
        Cpus::Only(cpus.clone())
    } else if let Some(nodes) = &p.nodes {
        Cpus::Nodes(nodes.clone())
    } else {
        Cpus::All
    };
    Scope {
        topology,
        memory: req.memory.is_some(),
        rt: req.sched.policy.is_some(),
        nice: req.sched.nice.is_some(),
        sched: req.sched.is_requested(),
        isolation: req.uses_findings() || !cpus_named_only(req),
        kernel: req.memory.is_some() || req.sched.is_requested() || req.uses_findings(),
        mempolicy_modes: matches!(
            req.memory,
            Some(MemoryRequest::PreferredMany(_) | MemoryRequest::WeightedInterleave(_))
        ),
        irqs: (req.uses_findings() && (req.latency_critical() || req.shows_info()))
            || p.near.is_some(),
        info: req.shows_info(),
        kthreads: req.mode == Mode::Check,
        quiet: ranks_quietest(req),
        // inherited_bound() looks at PID 1's affinity wherever a placement
        // chooses (no --cpus).
        init: p.is_requested() && p.cpus.is_none() && p.cpus_form.is_none(),
        details: false,
        units: p.is_requested()
            && (p.cores.is_some()
                || p.units.is_some()
                || p.core_type.is_some()
                || (req.uses_findings()
                    && (p.isolated || req.sched.policy.is_some_and(Policy::is_rt)))),
        near: p.near.clone(),
        preempt: crate::check::rt::judges_preemption(req),
        // --pid: the target's cgroup bounds the plan, not pinrun's.
        cgroup_of: req.target.as_ref().map(|t| t.pid),
    }
}

/// Whether the plan of `req` ranks cores by the latency rule
/// (`crate::plan::quiet`): `--cores N` with latency intent (inside
/// `--cpus LIST` too).
fn ranks_quietest(req: &Request) -> bool {
    req.placement.cores.is_some() && !req.latency_intent().is_empty()
}

/// Whether the plan of `req` takes its CPUs as named (`--cpus LIST` or a
/// list form, with or without `--node`, `--smt` or `--core-type`), without
/// anything that chooses or refuses by the isolation sets
/// ([`Scope::isolation`]): no `--cores`, `--llc`/`--dies`/`--clusters`,
/// `--isolated`, `--housekeeping` or `--near` (the inherited affinity's
/// bound names them in a refusal), no SCHED_DEADLINE (its root domain),
/// no `--thread-map`, `--steer-irqs`, `--probe` or `--pid`.
fn cpus_named_only(req: &Request) -> bool {
    let p = &req.placement;
    (p.cpus.is_some() || p.cpus_form.is_some())
        && p.cores.is_none()
        && p.units.is_none()
        && !p.isolated
        && !p.housekeeping
        && p.near.is_none()
        && !req.sched.policy.is_some_and(Policy::is_deadline)
        && req.threads.thread_map.is_empty()
        && !req.claims.steer_irqs
        && req.probe.is_none()
        && req.target.is_none()
}

/// Whether `req`'s checks look at the machine's real-time tasks: a
/// `--fifo`/`--rr` request whose findings are used
/// ([`crate::request::Request::uses_findings`]).
fn scans_rt_tasks(req: &Request) -> bool {
    req.sched.policy.is_some_and(Policy::is_rt) && req.uses_findings()
}

/// The process being placed, which is not its own competitor: pinrun's,
/// or the `--pid` process's, on a live machine (not below `--sysroot`).
fn self_pid(req: &Request) -> Option<u32> {
    req.sysroot
        .is_none()
        .then(|| req.target.as_ref().map_or_else(std::process::id, |t| t.pid))
}

/// `Some(self_pid)` when the real-time tasks of `req` may be scanned
/// ahead, while the machine is read and the plan made
/// ([`SystemState::read_scoped_ahead`]; [`read_extras_for`] takes them):
/// the scan needs only the request. Not when nothing would be scanned, nor
/// when anything can wait between the read and the plan (`--wait` for
/// claimed cores, `--settle` for kubelet's cpuset: the scan would be older
/// than the plan by that wait), nor for `--pid` and the modes that do not
/// plan (`--show`, `--check-emitted`).
pub fn rt_scan_ahead(req: &Request) -> Option<Option<u32>> {
    let plans = !matches!(req.mode, Mode::Show | Mode::CheckEmitted);
    let waits = req.claims.wait.is_some() || req.fleet.settle.is_some();
    (plans && scans_rt_tasks(req) && !waits && req.target.is_none()).then(|| self_pid(req))
}

/// [`SystemState::read_extras`] for `req` on the checked CPUs `cpus`:
/// real-time tasks when `--fifo`/`--rr` is requested and findings are
/// used ([`crate::request::Request::uses_findings`]), excluding this
/// process on a live machine (not below `--sysroot`): those of `ahead`
/// ([`rt_scan_ahead`], [`SystemState::read_scoped_ahead`]) when given,
/// else scanned now; governors and idle
/// states only when info findings can be shown
/// ([`crate::request::Request::shows_info`]).
pub fn read_extras_for(
    sys: &mut SystemState,
    root: &Root,
    req: &Request,
    cpus: &CpuSet,
    ahead: Option<RtScan>,
) {
    let rt = scans_rt_tasks(req).then(|| ahead.unwrap_or_else(|| RtScan::Here(self_pid(req))));
    sys.read_extras(root, cpus, req.shows_info(), rt);
}
