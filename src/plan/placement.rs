//! Placement: which CPUs (`--cpus`, `--node`, `--cores`, `--smt`,
//! `--isolated`), refusing CPUs that do not exist, are offline or outside
//! the allowed set, and choosing whole cores compactly.

use super::CoreChoice;
use super::boot_hint;
use super::claims::{refuse_claimed, skip_claimed};
use super::near;
use super::quiet::{self, Choice, Rule};
use super::units::{self, Place};
use crate::claim::Claims;
use crate::cpuset::{CpuSet, NodeSet};
use crate::error::{Error, ErrorCode, Result};
use crate::request::{Choose, Placement, Unit, Within};
use crate::system::SystemState;
use crate::words::{cpus_phrase, nodes_phrase, or_none};

/// Refuses CPUs that do not exist, are offline or are outside the allowed
/// set, naming the first kind of fault found.
fn validate_cpus(sys: &SystemState, cpus: &CpuSet) -> Result<()> {
    let known = sys.possible.union(&sys.cpus.keys().copied().collect());
    let missing = cpus.difference(&known);
    if !missing.is_empty() {
        let verb = if missing.len() == 1 { "does" } else { "do" };
        return Err(Error::new(
            ErrorCode::CpuNotFound,
            format!(
                "--cpus: {} {verb} not exist: this machine's CPUs are {}",
                cpus_phrase(&missing),
                known
            ),
        )
        .hint(format!("choose among the online CPUs {}", sys.online)));
    }
    let absent = cpus.difference(&sys.present);
    if !absent.is_empty() && !sys.present.is_empty() {
        let verb = if absent.len() == 1 { "is" } else { "are" };
        return Err(Error::new(
            ErrorCode::CpuNotPresent,
            format!(
                "--cpus: {} {verb} possible but not present (an empty hotplug slot; present: {})",
                cpus_phrase(&absent),
                sys.present
            ),
        )
        .hint(format!("choose among the online CPUs {}", sys.online)));
    }
    let offline = cpus.difference(&sys.online);
    if !offline.is_empty() {
        let verb = if offline.len() == 1 { "is" } else { "are" };
        return Err(Error::new(
            ErrorCode::CpuOffline,
            format!("--cpus: {} {verb} offline (online: {})", cpus_phrase(&offline), sys.online),
        )
        .hint(format!(
            "bring it online (`echo 1 > /sys/devices/system/cpu/cpu{}/online`) or choose among the online CPUs {}",
            offline.first().unwrap_or(0),
            sys.online
        )));
    }
    let outside = cpus.difference(&sys.allowed);
    if !outside.is_empty() {
        let verb = if outside.len() == 1 { "is" } else { "are" };
        return Err(Error::new(
            ErrorCode::CpuNotAllowed,
            format!("--cpus: {} {verb} outside {}", cpus_phrase(&outside), sys.allowed_phrase()),
        )
        .hint(format!(
            "choose among the allowed CPUs {}, or widen the cgroup's cpuset (docker --cpuset-cpus, systemd AllowedCPUs=)",
            sys.allowed
        )));
    }
    Ok(())
}

/// "isolate them at boot with LINE", LINE naming `cpus` (the boot CPU left
/// out) in `isolcpus=` (with `rcu_nocbs=` when `rcu`) and in `nohz_full=`
/// when the kernel can act on it ([`boot_hint::boot_hint`], the line
/// the isolation findings give; no `nohz_full=` on a kernel built without
/// `CONFIG_NO_HZ_FULL`), and a cgroup v2 isolated partition where the
/// caller's cpuset is a v2 one (partitions exist nowhere else).
fn isolate_hint(sys: &SystemState, cpus: &CpuSet, rcu: bool) -> String {
    use crate::system::IsolationSource;
    use boot_hint::Param;
    let mut params = vec![Param::Isolcpus];
    if sys.nohz_full_source != IsolationSource::NotBuilt {
        params.push(Param::NohzFull);
    }
    if rcu {
        params.push(Param::RcuNocbs);
    }
    boot_hint::boot_hint(sys, cpus, &params, |line| {
        if sys.cgroup_v2() {
            format!("isolate them at boot with {line}, or with a cgroup v2 isolated partition")
        } else {
            format!("isolate them at boot with {line}")
        }
    })
}

/// Refuses node ids that do not exist (listing those that do), or any node
/// id on a machine that exposes no NUMA nodes.
pub(super) fn require_nodes(sys: &SystemState, option: &str, nodes: &NodeSet) -> Result<()> {
    if sys.nodes.is_empty() {
        return Err(Error::new(
            ErrorCode::NoNuma,
            format!("{option}: this machine exposes no NUMA nodes (no /sys/devices/system/node)"),
        )
        .hint("leave out the node options: the machine has a single memory domain"));
    }
    let unknown = nodes.difference(&sys.node_ids());
    if !unknown.is_empty() {
        return Err(Error::new(
            ErrorCode::NodeNotFound,
            format!(
                "{option}: {} not found: this machine's nodes are {}",
                nodes_phrase(&unknown),
                sys.node_ids()
            ),
        )
        .hint(format!(
            "choose among nodes {} (pinrun --show lists them)",
            sys.node_ids()
        )));
    }
    Ok(())
}

/// The CPUs of `nodes`, refusing unknown and CPU-less nodes.
fn node_cpus(sys: &SystemState, nodes: &NodeSet) -> Result<CpuSet> {
    require_nodes(sys, "--node", nodes)?;
    let mut cpus = CpuSet::new();
    for id in nodes.iter() {
        let n = &sys.nodes[&id];
        if n.cpus.is_empty() && !n.offline_cpus.is_empty() {
            let off = &n.offline_cpus;
            let first = off.first().unwrap_or_default();
            return Err(Error::new(
                ErrorCode::NodeCpusOffline,
                format!(
                    "--node: node {id}'s {} {} offline (node{id}/cpulist lists only online CPUs; the cpuN/node{id} links name them)",
                    cpus_phrase(off),
                    if off.len() == 1 { "exists but is" } else { "exist but are" },
                ),
            )
            .hint(format!(
                "bring {} online as root: `chcpu -e {}` (or {}), then run again",
                if off.len() == 1 { "it" } else { "them" },
                off.to_list(),
                match off.iter().collect::<Vec<_>>().as_slice() {
                    [one] => format!("`echo 1 > /sys/devices/system/cpu/cpu{one}/online`"),
                    few if few.len() <= 8 => format!(
                        "`for n in {}; do echo 1 > /sys/devices/system/cpu/cpu$n/online; done`",
                        few.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
                    ),
                    _ => format!("`echo 1 > /sys/devices/system/cpu/cpuN/online` for each, from cpu{first}"),
                },
            )));
        }
        if n.cpus.is_empty() {
            let with_cpus: NodeSet = sys
                .nodes
                .values()
                .filter(|m| !m.cpus.is_empty())
                .map(|m| m.id)
                .collect();
            return Err(Error::new(
                ErrorCode::NodeWithoutCpus,
                format!("--node: node {id} has no CPUs (memory-only node)"),
            )
            .hint(match with_cpus.first() {
                Some(near) => format!(
                    "run on a node with CPUs and bind memory to node {id}: --node {near} --membind={id}"
                ),
                None => "no node has online CPUs: leave out --node".to_string(),
            }));
        }
        // A CPU that firmware lists in several nodes belongs to the one it
        // was given to (the firmware-data finding says which): --node never
        // takes it from another node's list.
        let own: CpuSet = n
            .cpus
            .iter()
            .filter(|&c| sys.node_of(c).is_none_or(|m| m == id))
            .collect();
        if own.is_empty() {
            let keepers: NodeSet = n.cpus.iter().filter_map(|c| sys.node_of(c)).collect();
            return Err(Error::new(
                ErrorCode::NodeWithoutCpus,
                format!(
                    "--node: node {id}'s {} {} also listed by node {keepers}, which keeps {} (firmware data: a CPU belongs to one node)",
                    cpus_phrase(&n.cpus),
                    if n.cpus.len() == 1 { "is" } else { "are" },
                    if n.cpus.len() == 1 { "it" } else { "them" },
                ),
            )
            .hint(format!(
                "choose among node {keepers}'s CPUs (--node {}), or name CPUs with --cpus; the firmware's SRAT/ACPI tables are wrong (pinrun --check shows firmware-data)",
                keepers.first().unwrap_or_default()
            )));
        }
        cpus.union_with(&own);
    }
    Ok(cpus)
}

fn core_choice(sys: &SystemState, cpus: CpuSet) -> CoreChoice {
    let first = cpus.first().and_then(|id| sys.cpus.get(&id));
    CoreChoice {
        package: first.and_then(|c| c.package),
        core: first.and_then(|c| c.core_id),
        node: first.and_then(|c| c.node),
        package_key: first.and_then(|c| {
            c.package_cpus
                .as_ref()
                .and_then(CpuSet::first)
                .or(c.package)
        }),
        cpus,
    }
}

/// The distinct cores (all threads, including those outside `cpus`)
/// touching `cpus`, ordered by their lowest CPU in `cpus`. One pass: each
/// core's CPUs are added to the `seen` set in place, so the cost is linear
/// in the CPUs (and bitmap words) of the cores, with no set rebuilt per CPU.
pub fn cores_of(sys: &SystemState, cpus: &CpuSet) -> Vec<CpuSet> {
    let mut seen = CpuSet::new();
    let mut out = Vec::new();
    for id in cpus.iter() {
        if seen.contains(id) {
            continue;
        }
        let core = sys.core_of(id);
        seen.union_with(&core);
        out.push(core);
    }
    out
}

/// Whether every CPU of `core` is in `set`, without building a set (the
/// per-core test of the `--cores` partition).
fn all_in(core: &CpuSet, set: &CpuSet) -> bool {
    core.iter().all(|c| set.contains(c))
}

/// The CPUs chosen, their cores and why.
pub(super) struct Placed {
    /// The chosen CPUs.
    pub cpus: CpuSet,
    /// Their cores.
    pub cores: Vec<CoreChoice>,
    /// Why, one sentence each.
    pub reasons: Vec<String>,
    /// The intent read and the rule that chose.
    pub choice: Choice,
}

/// The inherited affinity (`Cpus_allowed_list` of the caller: what
/// `sched_getaffinity(2)` returns) when it bounds what `--cores`, `--node`
/// and `--isolated` choose ([`Within`]): with `--within inherited`, always;
/// by default, when it is an explicit narrowing: it lacks an allowed CPU
/// that is not isolated (a shell started by init has every CPU but the
/// isolcpus ones, and that is no narrowing) and does not hold PID 1's
/// affinity (systemd's `CPUAffinity=`, which every process inherits);
/// never with `--within cgroup` or when it is unknown. The result is
/// within the allowed CPUs.
pub fn inherited_bound(sys: &SystemState, within: Within) -> Option<CpuSet> {
    let inherited = sys.process.cpus_allowed.as_ref()?;
    // The mask every process inherits from PID 1 (systemd's CPUAffinity=
    // on a host that keeps its housekeeping CPUs apart) is no narrowing
    // either: a login shell has it without anyone asking.
    let from_init = sys
        .process
        .init_cpus_allowed
        .as_ref()
        .is_some_and(|i| i.intersection(&sys.allowed).is_subset(inherited));
    let narrows = match within {
        Within::Cgroup => false,
        Within::Inherited => true,
        Within::Auto => !sys.allowed.difference(&sys.isolated).is_subset(inherited) && !from_init,
    };
    narrows.then(|| sys.allowed.intersection(inherited))
}

/// The task's CPUs (issue 34: the default scope is the task): the
/// inherited affinity (`Cpus_allowed_list`, what `taskset`, `srun
/// --cpu-bind` or systemd's `CPUAffinity=` gave the process) within the
/// allowed CPUs; the allowed CPUs when it is unknown or holds none of
/// them. With no placement option the command runs there (its affinity is
/// left as it is), so the checks, `--probe` and `--membind` without NODES
/// look there; numactl's list forms (`+N`, `all`, `!LIST`) count among
/// them as libnuma's do (`numa_all_cpus_ptr`, from the task's
/// `Cpus_allowed` in `set_task_constraints()`, libnuma.c).
pub fn task_cpus(sys: &SystemState) -> CpuSet {
    sys.process
        .cpus_allowed
        .as_ref()
        .map(|a| sys.allowed.intersection(a))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| sys.allowed.clone())
}

/// The CPUs the command runs on under `plan`: the chosen ones, or, when
/// the affinity is left unchanged, the task's ([`task_cpus`]). What the
/// checks look at and `--probe` measures.
pub fn command_cpus(sys: &SystemState, plan: &super::Plan) -> CpuSet {
    plan.cpus.clone().unwrap_or_else(|| task_cpus(sys))
}

/// The housekeeping CPUs: allowed, neither isolated (domain housekeeping)
/// nor nohz_full (tick housekeeping; `kernel/sched/isolation.c`).
pub(super) fn housekeeping(sys: &SystemState) -> CpuSet {
    sys.allowed.difference(&sys.isolated.union(&sys.nohz_full))
}

/// `p` with numactl's list forms (`all`, `!LIST`, `+LIST`) of `--cpus`
/// and `--node` resolved: CPUs among the allowed CPUs, nodes among the
/// nodes of the machine the process may use (Mems_allowed), as libnuma
/// resolves them against `numa_all_cpus_ptr`/`numa_all_nodes_ptr`.
fn resolve_forms(sys: &SystemState, p: &Placement) -> Result<Placement> {
    let mut p = p.clone();
    if let Some(form) = p.cpus_form.take() {
        let task = task_cpus(sys);
        let cpus = form.resolve(&task).map_err(|why| {
            Error::new(ErrorCode::BadCpuList, format!("--cpus: {why}")).hint(format!(
                "+LIST counts from 0 among the task's CPUs {task} (its inherited affinity within the allowed CPUs, as numactl counts)"
            ))
        })?;
        p.cpus = Some(cpus);
    }
    if let Some(form) = p.nodes_form.take() {
        let mut nodes = sys.node_ids();
        if let Some(m) = &sys.process.mems_allowed {
            nodes = nodes.intersection(m);
        }
        let set = form.resolve(&nodes).map_err(|why| {
            Error::new(ErrorCode::BadNodeList, format!("--node: {why}"))
                .hint(format!("+LIST counts from 0 among the nodes {nodes}"))
        })?;
        p.nodes = Some(set);
    }
    Ok(p)
}

/// Resolves the placement `p` on `sys` with the latency `intent` read
/// from the request ([`crate::request::Request::latency_intent`]): the
/// CPUs, their cores, the reasons and the rule that chose
/// ([`quiet::Rule`]); a refusal names the object and the fix.
pub(super) fn place(
    sys: &SystemState,
    p: &Placement,
    intent: &[&'static str],
    claims: &Claims,
) -> Result<Placed> {
    let mut p = resolve_forms(sys, p)?;
    let mut reasons = vec![format!(
        "allowed CPUs: {} (online {}, limited by {})",
        sys.allowed,
        sys.online,
        sys.allowed_phrase()
    )];
    // --near: the device's node, as --node would name it.
    let near = p
        .near
        .as_deref()
        .map(|spec| near::resolve(sys, spec))
        .transpose()?;
    if let Some(n) = &near {
        reasons.extend(n.reasons.iter().cloned());
        if let Some(node) = n.node {
            p.nodes = Some(std::iter::once(node).collect());
        }
    }
    let p = &p;
    let bound = inherited_bound(sys, p.within);
    let node_set = p.nodes.as_ref().map(|n| node_cpus(sys, n)).transpose()?;
    let scene = Scene {
        sys,
        p,
        claims,
        intent,
        bound,
        node_set,
    };
    let candidate = if let Some(cpus) = &p.cpus {
        scene.named(cpus, &mut reasons)?
    } else {
        scene.candidates(near.as_ref(), &mut reasons)?
    };
    match p.cores {
        None => Ok(scene.place_candidates(candidate, reasons)),
        Some(n) => scene.place_cores(n, &candidate, reasons),
    }
}

/// What [`place`] chooses in, once the placement's list forms and
/// `--near` are resolved.
struct Scene<'a> {
    /// The machine.
    sys: &'a SystemState,
    /// The placement asked for.
    p: &'a Placement,
    /// The CPUs other pinrun runs claim.
    claims: &'a Claims,
    /// The latency intent read from the request.
    intent: &'a [&'static str],
    /// The inherited affinity when it bounds the choice
    /// ([`inherited_bound`]).
    bound: Option<CpuSet>,
    /// The CPUs of `--node` ([`node_cpus`]).
    node_set: Option<CpuSet>,
}

impl Scene<'_> {
    /// The CPUs `--cpus` names, refused when [`Scene::refuse_named`] or
    /// [`refuse_claimed`] refuse them, or when `--core-type` does not hold
    /// them all ([`units::of_core_type`]); their reasons go to `reasons`.
    fn named(&self, cpus: &CpuSet, reasons: &mut Vec<String>) -> Result<CpuSet> {
        self.refuse_named(cpus)?;
        refuse_claimed("--cpus", cpus, self.claims)?;
        reasons.push(format!("requested {}", cpus_phrase(cpus)));
        if let Some(t) = self.p.core_type {
            reasons.push(units::of_core_type(self.sys, cpus, t, true)?.1);
        }
        Ok(cpus.clone())
    }

    /// Refuses the CPUs `--cpus` names when [`validate_cpus`] does, when
    /// `--isolated` is asked and one is not isolated, when
    /// `--housekeeping` is asked and one is isolated or nohz_full, or when
    /// one is not on `--node`'s nodes.
    fn refuse_named(&self, cpus: &CpuSet) -> Result<()> {
        let (sys, p) = (self.sys, self.p);
        validate_cpus(sys, cpus)?;
        if p.isolated {
            let not_iso = cpus.difference(&sys.isolated);
            if !not_iso.is_empty() {
                return Err(Error::new(
                    ErrorCode::CpuNotIsolated,
                    format!(
                        "--isolated: {} not isolated (isolated CPUs: {})",
                        cpus_phrase(&not_iso),
                        or_none(&sys.isolated)
                    ),
                )
                .hint(isolate_hint(sys, &not_iso, false)));
            }
        }
        if p.housekeeping {
            let busy = cpus.intersection(&sys.isolated.union(&sys.nohz_full));
            if !busy.is_empty() {
                return Err(Error::new(
                    ErrorCode::NotHousekeeping,
                    format!(
                        "--housekeeping: {} isolated or nohz_full (isolated: {}, nohz_full: {})",
                        cpus_phrase(&busy),
                        or_none(&sys.isolated),
                        or_none(&sys.nohz_full)
                    ),
                )
                .hint(format!(
                    "choose among the housekeeping CPUs {}, or drop --housekeeping",
                    or_none(&housekeeping(sys))
                )));
            }
        }
        if let (Some(nodes), Some(ncpus)) = (&p.nodes, &self.node_set) {
            let off = cpus.difference(ncpus);
            if !off.is_empty() {
                return Err(Error::new(
                    ErrorCode::CpuNotOnNode,
                    format!(
                        "--cpus/--node: {} not on {} (its CPUs are {})",
                        cpus_phrase(&off),
                        nodes_phrase(nodes),
                        ncpus
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The candidate CPUs without `--cpus`: the allowed ones
    /// ([`Scene::bounded`]) narrowed to the isolated or housekeeping ones
    /// when asked ([`Scene::narrowed`]), then to those `--near`'s IRQs
    /// leave ([`near::apply_irqs`]), to `--core-type`'s
    /// ([`units::of_core_type`]) and to `--units`' ([`units::choose_units`]);
    /// each step's reason goes to `reasons`. Refused when a step leaves
    /// none.
    fn candidates(&self, near: Option<&near::Near>, reasons: &mut Vec<String>) -> Result<CpuSet> {
        let (sys, p) = (self.sys, self.p);
        let mut c = self.bounded(reasons)?;
        c = self.narrowed(c, reasons)?;
        if let Some(n) = near {
            c = near::apply_irqs(n, p.near_irqs, c, reasons)?;
        }
        if let Some(t) = p.core_type {
            let (kept, why) = units::of_core_type(sys, &c, t, false)?;
            c = kept;
            reasons.push(why);
        }
        if let Some((unit, n)) = p.units {
            let (kept, why) = units::choose_units(sys, &c, unit, n, self.claims)?;
            c = kept;
            reasons.extend(why);
        }
        Ok(c)
    }

    /// The allowed CPUs within the inherited affinity when it bounds the
    /// choice, and within `--node`'s CPUs; refused when either leaves
    /// none. The reasons go to `reasons`.
    fn bounded(&self, reasons: &mut Vec<String>) -> Result<CpuSet> {
        let (sys, p, bound) = (self.sys, self.p, &self.bound);
        let mut c = sys.allowed.clone();
        if let Some(b) = bound {
            if b.is_empty() {
                return Err(Error::new(
                    ErrorCode::NoCpusAllowed,
                    format!(
                        "the inherited CPU affinity ({}) has no CPU inside the allowed ones ({})",
                        sys.inherited_phrase(),
                        or_none(&sys.allowed)
                    ),
                )
                .hint("choose across the cgroup's CPUs with --within cgroup, or start pinrun with an affinity that includes allowed CPUs"));
            }
            reasons.push(format!(
                "choosing inside the inherited affinity ({}): {}; --within cgroup chooses across {}",
                sys.inherited_phrase(),
                match p.within {
                    Within::Inherited => "--within inherited".to_string(),
                    _ => format!("it narrows the allowed CPUs that are not isolated ({})", sys.allowed.difference(&sys.isolated)),
                },
                sys.allowed
            ));
            c = b.clone();
        }
        if let (Some(nodes), Some(ncpus)) = (&p.nodes, &self.node_set) {
            c = c.intersection(ncpus);
            if c.is_empty() {
                return Err(Error::new(
                    ErrorCode::NodeNotAllowed,
                    format!(
                        "--node: {} has CPUs {}, none of them online and inside {}",
                        nodes_phrase(nodes),
                        ncpus,
                        match bound {
                            Some(b) => format!("the inherited affinity's allowed CPUs ({b})"),
                            None => sys.allowed_phrase(),
                        }
                    ),
                )
                .hint(match bound {
                    Some(b) => format!(
                        "choose a node with CPUs in {b}, or choose across the cgroup's CPUs ({}) with --within cgroup",
                        sys.allowed
                    ),
                    None => format!(
                        "choose a node whose CPUs are allowed (allowed CPUs: {})",
                        sys.allowed
                    ),
                }));
            }
            reasons.push(format!("{}: allowed CPUs {}", nodes_phrase(nodes), c));
        }
        Ok(c)
    }

    /// `c` narrowed to the isolated CPUs with `--isolated` and to the
    /// housekeeping ones with `--housekeeping`; refused when that leaves
    /// none, or when `c` is empty. The reasons go to `reasons`.
    fn narrowed(&self, mut c: CpuSet, reasons: &mut Vec<String>) -> Result<CpuSet> {
        let (sys, p) = (self.sys, self.p);
        if p.isolated {
            let candidates = c.clone();
            c = c.intersection(&sys.isolated);
            if c.is_empty() {
                return Err(Error::new(
                    ErrorCode::NoIsolatedCpus,
                    format!("--isolated: no isolated CPU is available here (isolated: {}, candidates: {})", or_none(&sys.isolated), sys.allowed),
                )
                .hint(isolate_hint(sys, &candidates, true)));
            }
            reasons.push(format!("isolated candidates: {c}"));
        }
        if p.housekeeping {
            c = c.intersection(&housekeeping(sys));
            if c.is_empty() {
                return Err(Error::new(
                    ErrorCode::NotHousekeeping,
                    format!(
                        "--housekeeping: every candidate CPU is isolated or nohz_full (isolated: {}, nohz_full: {})",
                        or_none(&sys.isolated),
                        or_none(&sys.nohz_full)
                    ),
                )
                .hint("widen the candidates (--node, the cgroup cpuset), or drop --housekeeping"));
            }
            reasons.push(format!(
                "housekeeping candidates (neither isolated nor nohz_full): {c}"
            ));
        }
        if c.is_empty() {
            return Err(Error::new(
                ErrorCode::NoCpusAllowed,
                format!(
                    "no CPU is both online ({}) and inside {}",
                    or_none(&sys.online),
                    sys.allowed_phrase()
                ),
            ));
        }
        Ok(c)
    }

    /// The placement without `--cores`: the `candidate` CPUs and their
    /// cores. Without latency intent, the isolated and nohz_full CPUs are
    /// left out of a chosen mask while others remain (as init's affinity
    /// leaves out isolcpus=): the scheduler balances nothing onto them.
    fn place_candidates(&self, mut candidate: CpuSet, mut reasons: Vec<String>) -> Placed {
        let (sys, intent) = (self.sys, self.intent);
        let named = self.p.cpus.is_some();
        let quiet_cpus = sys.isolated.union(&sys.nohz_full);
        if !named && intent.is_empty() && candidate.intersects(&quiet_cpus) {
            let rest = candidate.difference(&quiet_cpus);
            if !rest.is_empty() {
                reasons.push(format!(
                    "left out the isolated or nohz_full {} (no latency intent: housekeeping CPUs first; --isolated or --cpus takes them)",
                    cpus_phrase(&candidate.intersection(&quiet_cpus))
                ));
                candidate = rest;
            }
        }
        let cores = cores_of(sys, &candidate)
            .into_iter()
            .map(|c| core_choice(sys, c))
            .collect();
        Placed {
            cpus: candidate,
            cores,
            reasons,
            choice: Choice {
                intent: intent.to_vec(),
                rule: if named { Rule::Named } else { Rule::Candidates },
                compact: None,
                measured: None,
            },
        }
    }

    /// The placement with `--cores n`: `n` of the whole cores of
    /// `candidate` ([`Scene::whole_cores`]) not claimed ([`skip_claimed`]),
    /// chosen by the rule ([`quiet::choose`]: measured, latency or
    /// housekeeping-first), with `reasons` saying how, what the compact
    /// rule alone would have chosen when it differs, and the cache the
    /// chosen cores share.
    fn place_cores(
        &self,
        n: usize,
        candidate: &CpuSet,
        mut reasons: Vec<String>,
    ) -> Result<Placed> {
        let (sys, p, intent) = (self.sys, self.p, self.intent);
        let (whole, partial) = self.whole_cores(n, candidate)?;
        let (whole, skipped) = skip_claimed(n, candidate, whole, self.claims)?;
        let total = whole.len();
        let whole: Vec<CoreChoice> = whole.into_iter().map(|c| core_choice(sys, c)).collect();
        let ranks = units::KindRanks::of(sys);
        // What the compact, lowest-numbered rule alone gives (pinrun's choice
        // before issue 31, taskset's and kubelet's habit): the launch says so
        // when the rule moved away from it.
        let compact = units::choose_compact(whole.clone(), n, |c| {
            Place::of(sys, &ranks, c.cpus.first().unwrap_or_default())
        });
        let rule = if matches!(p.choose, Choose::Measured { .. }) {
            Rule::Measured
        } else if intent.is_empty() {
            Rule::HousekeepingFirst
        } else {
            Rule::Quietest
        };
        let n = measured_count(sys, rule, n, total)?;
        let facts = quiet::Facts::of(sys, candidate);
        let (chosen, cpus, why) = quiet::choose(sys, &facts, whole, n, rule, p.smt);
        quiet::require_measured(sys, rule, &cpus)?;
        let compact_cpus: CpuSet = compact
            .iter()
            .flat_map(|c| {
                if p.smt {
                    c.cpus.to_vec()
                } else {
                    c.cpus.first().into_iter().collect()
                }
            })
            .collect();
        reasons.push(rule_reason(total, n, rule, intent, p.smt));
        reasons.extend(why);
        if cpus != compact_cpus {
            reasons.push(format!(
                "the compact rule alone would have chosen {}",
                cpus_phrase(&compact_cpus)
            ));
        }
        let choice = Choice {
            intent: intent.to_vec(),
            rule,
            compact: (cpus != compact_cpus).then_some(compact_cpus),
            measured: sys.measured.clone().filter(|_| rule == Rule::Measured),
        };
        // The cache the chosen cores share (pinrun(1) PLACEMENT UNITS: node,
        // package, die, LLC, cluster, core), where the kernel lists it.
        let threads = chosen.iter().fold(CpuSet::new(), |a, c| a.union(&c.cpus));
        if let Some(spread) = units::spread(sys, &threads, Unit::Llc) {
            reasons.push(format!("the chosen cores are {spread}"));
        }
        if let Some(why) = skipped {
            reasons.push(why);
        }
        if !partial.is_empty() {
            reasons.push(format!(
                "skipped {} with a sibling outside the candidates",
                crate::words::count(partial.len(), "core")
            ));
        }
        Ok(Placed {
            cpus,
            cores: chosen,
            reasons,
            choice,
        })
    }

    /// The cores touching `candidate`, split into the whole ones (every
    /// thread a candidate) and the partial ones; refused when fewer than
    /// `n` are whole, naming the partial ones and the inherited affinity
    /// when it bounds the candidates.
    fn whole_cores(&self, n: usize, candidate: &CpuSet) -> Result<(Vec<CpuSet>, Vec<CpuSet>)> {
        let all = cores_of(self.sys, candidate);
        let (whole, partial): (Vec<CpuSet>, Vec<CpuSet>) =
            all.into_iter().partition(|c| all_in(c, candidate));
        if whole.len() < n {
            let mut msg = format!(
                "--cores {n}: only {} whole core{} available in the candidates {}",
                whole.len(),
                if whole.len() == 1 { " is" } else { "s are" },
                candidate
            );
            if self.bound.is_some() {
                msg.push_str(&format!(
                    ", bounded by the inherited affinity ({})",
                    self.sys.inherited_phrase()
                ));
            }
            if !partial.is_empty() {
                msg.push_str(&format!(
                    "; {} more core{} a sibling outside them ({})",
                    partial.len(),
                    if partial.len() == 1 { " has" } else { "s have" },
                    partial
                        .iter()
                        .map(|c| c.to_list())
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
            }
            return Err(Error::new(ErrorCode::NotEnoughCores, msg).hint(if self.bound.is_some() {
                "ask for fewer cores, or widen the candidates: the inherited affinity bounds them (start pinrun with whole cores in its affinity, or choose across the cgroup's CPUs with --within cgroup)"
            } else {
                "ask for fewer cores, or widen the candidates (--node, --cpus, the cgroup cpuset)"
            }));
        }
        Ok((whole, partial))
    }
}

/// How many of the `total` free whole cores the `rule` chooses, `n` asked:
/// `--choose measured` before the measurement takes every free whole core,
/// the quietest thread of each, which is what the probe measures
/// (`crate::probe::run::measure_choice`); the plan made after it chooses
/// `n`. Refused when nothing was measured (a mode that does not measure,
/// such as --emit): never the candidates' whole set.
fn measured_count(sys: &SystemState, rule: Rule, n: usize, total: usize) -> Result<usize> {
    match &sys.measured {
        _ if rule != Rule::Measured => Ok(n),
        Some(m) if m.is_empty() => Ok(total),
        Some(_) => Ok(n),
        None => Err(Error::new(
            ErrorCode::Usage,
            "--choose measured: nothing was measured here (only a launch, --dry-run, --check and --probe measure)".to_string(),
        )
        .hint("choose by the rule here (leave --choose out), or measure on the machine itself")),
    }
}

/// The reason saying how `n` of `total` whole cores were chosen: by
/// `rule` (with the latency `intent` it read), and which threads of each
/// (every one with `smt`).
fn rule_reason(total: usize, n: usize, rule: Rule, intent: &[&'static str], smt: bool) -> String {
    format!(
        "{} available; chose {n} {}{}",
        crate::words::count(total, "whole core"),
        match rule {
            Rule::Measured => format!(
                "by the smallest worst gap measured (--choose measured), then by the latency rule (intent: {})",
                intent.join(", ")
            ),
            Rule::Quietest => format!(
                "by the latency rule (intent: {}): CPUs named for housekeeping last; isolated, nohz_full and rcu_nocbs CPUs first; then no device IRQ; then the fewest interrupts; ties compactly",
                intent.join(", ")
            ),
            _ => "by the housekeeping-first rule (no latency intent): cores without isolated or nohz_full CPUs first, then compactly (the lowest node, package, die, LLC and cluster that hold them, else the fewest)".to_string(),
        },
        if smt {
            ", every SMT thread"
        } else if rule != Rule::HousekeepingFirst {
            ", the quietest thread of each"
        } else {
            ", the lowest-numbered thread of each"
        }
    )
}

#[cfg(test)]
mod tests {
    use crate::error::ErrorCode;
    use crate::plan::plan;
    use crate::system::IsolationSource;
    use crate::testkit::{Machine, request};

    /// `--isolated` with nothing isolated names the boot line the isolation
    /// findings give, with the CPUs themselves (the boot CPU left out), and
    /// `nohz_full=` only where the kernel can act on it: a kernel built
    /// without CONFIG_NO_HZ_FULL refuses `nohz_full=` whole
    /// (housekeeping_setup(), kernel/sched/isolation.c), so the hint leaves
    /// it out (a new user's trial: `isolcpus=domain,managed_irq,LIST
    /// nohz_full=LIST` on such a kernel).
    #[test]
    fn the_isolated_hint_names_a_line_this_kernel_takes() {
        let hint = |built: bool, args: &[&str]| {
            let mut sys = Machine::new(1, 4, 1).build();
            if !built {
                sys.nohz_full_source = IsolationSource::NotBuilt;
            }
            let e = plan(&sys, &request(args)).expect_err("refused");
            (e.code, e.hint.unwrap_or_default())
        };
        let (code, h) = hint(true, &["--isolated", "--", "x"]);
        assert_eq!(code, ErrorCode::NoIsolatedCpus);
        assert!(
            h.starts_with("isolate them at boot with isolcpus=domain,managed_irq,1-3 nohz_full=1-3 rcu_nocbs=1-3"),
            "{h}"
        );
        let (_, h) = hint(false, &["--isolated", "--", "x"]);
        assert!(
            h.starts_with(
                "isolate them at boot with isolcpus=domain,managed_irq,1-3 rcu_nocbs=1-3"
            ),
            "{h}"
        );
        let (code, h) = hint(false, &["--isolated", "--cpus", "2", "--", "x"]);
        assert_eq!(code, ErrorCode::CpuNotIsolated);
        assert!(
            h.starts_with("isolate them at boot with isolcpus=domain,managed_irq,2"),
            "{h}"
        );
        assert!(!h.contains("LIST") && !h.contains("nohz_full"), "{h}");
        let (_, h) = hint(true, &["--isolated", "--cpus", "0", "--", "x"]);
        assert!(h.starts_with("CPU 0 is the boot CPU"), "{h}");
    }
}
