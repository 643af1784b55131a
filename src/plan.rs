//! Planning: a pure function from ([`SystemState`], [`Request`]) to a
//! [`Plan`]: which CPUs, which memory nodes, which scheduling policy, and
//! why. No I/O, no syscalls. Every refusal happens here, before anything is
//! applied.

use crate::claims::Claims;
use crate::cpuset::{CpuSet, NodeSet};
use crate::error::{Error, Result};
use crate::request::{MemoryRequest, NodeChoice, Placement, Policy, Request, SchedRequest};
use crate::system::{AllowedSource, SystemState};
use std::collections::BTreeMap;

/// One chosen core: every SMT thread of it, whether used or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreChoice {
    /// `physical_package_id`.
    pub package: Option<u32>,
    /// `core_id`.
    pub core: Option<u32>,
    /// The node of its CPUs.
    pub node: Option<u32>,
    /// The package as a grouping key: the lowest CPU of `package_cpus_list`
    /// (physical ids can be -1 or repeat across packages on some machines),
    /// else the physical id.
    pub package_key: Option<u32>,
    /// All its threads (SMT siblings).
    pub cpus: CpuSet,
}

/// `set_mempolicy(2)` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemMode {
    /// `MPOL_BIND`.
    Bind,
    /// `MPOL_PREFERRED`.
    Preferred,
    /// `MPOL_PREFERRED_MANY`.
    PreferredMany,
    /// `MPOL_INTERLEAVE`.
    Interleave,
    /// `MPOL_WEIGHTED_INTERLEAVE`.
    WeightedInterleave,
    /// `MPOL_LOCAL`.
    Local,
}

impl MemMode {
    /// The name used in text and JSON output (`numa_maps` spelling).
    pub fn name(self) -> &'static str {
        match self {
            MemMode::Bind => "bind",
            MemMode::Preferred => "preferred",
            MemMode::PreferredMany => "preferred-many",
            MemMode::Interleave => "interleave",
            MemMode::WeightedInterleave => "weighted-interleave",
            MemMode::Local => "local",
        }
    }
}

/// A resolved memory policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemPlan {
    /// The mode.
    pub mode: MemMode,
    /// Its nodes (empty for `Local`).
    pub nodes: NodeSet,
}

/// The resolved request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// CPUs to set as affinity; `None`: affinity unchanged.
    pub cpus: Option<CpuSet>,
    /// The cores the chosen CPUs belong to.
    pub cores: Vec<CoreChoice>,
    /// Nodes of the chosen CPUs.
    pub nodes: NodeSet,
    /// Memory policy; `None`: unchanged.
    pub memory: Option<MemPlan>,
    /// Scheduling changes.
    pub sched: SchedRequest,
    /// Why these CPUs, one sentence each.
    pub reasons: Vec<String>,
}

/// "CPU 3" / "CPUs 3-5".
pub fn cpus_phrase(set: &CpuSet) -> String {
    if set.len() == 1 {
        format!("CPU {set}")
    } else {
        format!("CPUs {set}")
    }
}

fn nodes_phrase(set: &NodeSet) -> String {
    if set.len() == 1 {
        format!("node {set}")
    } else {
        format!("nodes {set}")
    }
}

/// How the allowed set is limited, for messages.
pub fn allowed_phrase(sys: &SystemState) -> String {
    match &sys.allowed_source {
        AllowedSource::Cgroup(cs) => format!(
            "the cpuset of cgroup {}: {} = {}",
            cs.cgroup,
            cs.file,
            cs.cpus.to_list()
        ),
        AllowedSource::Status => format!(
            "this process's allowed CPUs (Cpus_allowed_list = {})",
            sys.allowed.to_list()
        ),
        AllowedSource::Online => "no cgroup cpuset (none found)".to_string(),
    }
}

/// Refuses CPUs that do not exist, are offline or are outside the allowed
/// set, naming the first kind of fault found.
fn validate_cpus(sys: &SystemState, cpus: &CpuSet) -> Result<()> {
    let known = sys.possible.union(&sys.cpus.keys().copied().collect());
    let missing = cpus.difference(&known);
    if !missing.is_empty() {
        let verb = if missing.len() == 1 { "does" } else { "do" };
        return Err(Error::new(
            "cpu-not-found",
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
            "cpu-not-present",
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
            "cpu-offline",
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
            "cpu-not-allowed",
            format!("--cpus: {} {verb} outside {}", cpus_phrase(&outside), allowed_phrase(sys)),
        )
        .hint(format!(
            "choose among the allowed CPUs {}, or widen the cgroup's cpuset (docker --cpuset-cpus, systemd AllowedCPUs=)",
            sys.allowed
        )));
    }
    Ok(())
}

/// Refuses node ids that do not exist (listing those that do), or any node
/// id on a machine that exposes no NUMA nodes.
fn require_nodes(sys: &SystemState, option: &str, nodes: &NodeSet) -> Result<()> {
    if sys.nodes.is_empty() {
        return Err(Error::new(
            "no-numa",
            format!("{option}: this machine exposes no NUMA nodes (no /sys/devices/system/node)"),
        )
        .hint("leave out the node options: the machine has a single memory domain"));
    }
    let unknown = nodes.difference(&sys.node_ids());
    if !unknown.is_empty() {
        return Err(Error::new(
            "node-not-found",
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
        if n.cpus.is_empty() {
            return Err(Error::new(
                "node-without-cpus",
                format!("--node: node {id} has no CPUs (memory-only node)"),
            )
            .hint(format!(
                "run on a node with CPUs and bind memory to it instead: --node <N> --membind={id}"
            )));
        }
        cpus.union_with(&n.cpus);
    }
    Ok(cpus)
}

/// Maps a core to the (node, package) group it is packed into.
type GroupKey = dyn Fn(&CoreChoice) -> (Option<u32>, Option<u32>);

/// Orders cores compactly: the lowest (node, package) that can hold all `n`,
/// else the lowest node, else the lowest package; otherwise in (node,
/// package, CPU) order.
fn choose_compact(mut cores: Vec<CoreChoice>, n: usize) -> Vec<CoreChoice> {
    let key = |c: &CoreChoice| {
        (
            c.node.unwrap_or(u32::MAX),
            c.package_key.unwrap_or(u32::MAX),
            c.cpus.first(),
        )
    };
    // Cached: `first()` scans the bitmap from CPU 0, so computing the key in
    // every comparison costs O(n log n) scans.
    cores.sort_by_cached_key(key);
    let fitting = |group: &GroupKey| -> Option<Vec<CoreChoice>> {
        let mut counts: BTreeMap<_, usize> = BTreeMap::new();
        for c in &cores {
            *counts.entry(group(c)).or_default() += 1;
        }
        let target = counts.iter().find(|(_, k)| **k >= n).map(|(g, _)| *g)?;
        Some(
            cores
                .iter()
                .filter(|c| group(c) == target)
                .take(n)
                .cloned()
                .collect(),
        )
    };
    fitting(&|c| (c.node, c.package_key))
        .or_else(|| fitting(&|c| (c.node, None)))
        .or_else(|| fitting(&|c| (None, c.package_key)))
        .unwrap_or_else(|| cores.iter().take(n).cloned().collect())
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

struct Placed {
    cpus: CpuSet,
    cores: Vec<CoreChoice>,
    reasons: Vec<String>,
}

fn place(sys: &SystemState, p: &Placement, claims: &Claims) -> Result<Placed> {
    let mut reasons = vec![format!(
        "allowed CPUs: {} (online {}, limited by {})",
        sys.allowed,
        sys.online,
        allowed_phrase(sys)
    )];
    let node_set = p.nodes.as_ref().map(|n| node_cpus(sys, n)).transpose()?;
    let candidate = if let Some(cpus) = &p.cpus {
        validate_cpus(sys, cpus)?;
        if p.isolated {
            let not_iso = cpus.difference(&sys.isolated);
            if !not_iso.is_empty() {
                return Err(Error::new(
                    "cpu-not-isolated",
                    format!("--isolated: {} not isolated (isolated CPUs: {})", cpus_phrase(&not_iso), or_none(&sys.isolated)),
                )
                .hint("isolate them at boot (isolcpus=domain,managed_irq,LIST nohz_full=LIST) or with a cgroup v2 isolated partition"));
            }
        }
        if let (Some(nodes), Some(ncpus)) = (&p.nodes, &node_set) {
            let off = cpus.difference(ncpus);
            if !off.is_empty() {
                return Err(Error::new(
                    "cpu-not-on-node",
                    format!(
                        "--cpus/--node: {} not on {} (its CPUs are {})",
                        cpus_phrase(&off),
                        nodes_phrase(nodes),
                        ncpus
                    ),
                ));
            }
        }
        refuse_claimed("--cpus", cpus, claims)?;
        reasons.push(format!("requested {}", cpus_phrase(cpus)));
        cpus.clone()
    } else {
        let mut c = sys.allowed.clone();
        if let (Some(nodes), Some(ncpus)) = (&p.nodes, &node_set) {
            c = c.intersection(ncpus);
            if c.is_empty() {
                return Err(Error::new(
                    "node-not-allowed",
                    format!(
                        "--node: {} has CPUs {}, none of them online and inside {}",
                        nodes_phrase(nodes),
                        ncpus,
                        allowed_phrase(sys)
                    ),
                )
                .hint(format!(
                    "choose a node whose CPUs are allowed (allowed CPUs: {})",
                    sys.allowed
                )));
            }
            reasons.push(format!("{}: allowed CPUs {}", nodes_phrase(nodes), c));
        }
        if p.isolated {
            c = c.intersection(&sys.isolated);
            if c.is_empty() {
                return Err(Error::new(
                    "no-isolated-cpus",
                    format!("--isolated: no isolated CPU is available here (isolated: {}, candidates: {})", or_none(&sys.isolated), sys.allowed),
                )
                .hint("isolate CPUs at boot (isolcpus=domain,managed_irq,LIST nohz_full=LIST rcu_nocbs=LIST) or with a cgroup v2 isolated partition"));
            }
            reasons.push(format!("isolated candidates: {c}"));
        }
        if c.is_empty() {
            return Err(Error::new(
                "no-cpus-allowed",
                format!(
                    "no CPU is both online ({}) and inside {}",
                    or_none(&sys.online),
                    allowed_phrase(sys)
                ),
            ));
        }
        c
    };
    let Some(n) = p.cores else {
        let cores = cores_of(sys, &candidate)
            .into_iter()
            .map(|c| core_choice(sys, c))
            .collect();
        return Ok(Placed {
            cpus: candidate,
            cores,
            reasons,
        });
    };
    let all = cores_of(sys, &candidate);
    let (whole, partial): (Vec<CpuSet>, Vec<CpuSet>) =
        all.into_iter().partition(|c| all_in(c, &candidate));
    if whole.len() < n {
        let mut msg = format!(
            "--cores {n}: only {} whole core{} available in the candidates {}",
            whole.len(),
            if whole.len() == 1 { " is" } else { "s are" },
            candidate
        );
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
        return Err(Error::new("not-enough-cores", msg).hint(
            "ask for fewer cores, or widen the candidates (--node, --cpus, the cgroup cpuset)",
        ));
    }
    let (whole, skipped) = skip_claimed(n, &candidate, whole, claims)?;
    let total = whole.len();
    let chosen = choose_compact(whole.into_iter().map(|c| core_choice(sys, c)).collect(), n);
    let cpus: CpuSet = chosen
        .iter()
        .flat_map(|c| {
            if p.smt {
                c.cpus.to_vec()
            } else {
                c.cpus.first().into_iter().collect()
            }
        })
        .collect();
    reasons.push(format!(
        "{total} whole core{} available; chose {n} compactly (lowest node, then package, then core){}",
        if total == 1 { "" } else { "s" },
        if p.smt { ", every SMT thread" } else { ", the lowest-numbered thread of each" }
    ));
    if let Some(why) = skipped {
        reasons.push(why);
    }
    if !partial.is_empty() {
        reasons.push(format!(
            "skipped {} core{} with a sibling outside the candidates",
            partial.len(),
            if partial.len() == 1 { "" } else { "s" }
        ));
    }
    Ok(Placed {
        cpus,
        cores: chosen,
        reasons,
    })
}

fn or_none(set: &CpuSet) -> String {
    if set.is_empty() {
        "none".into()
    } else {
        set.to_list()
    }
}

/// The memory node nearest to `node` by `distance`, if any has memory.
pub fn nearest_memory_node(sys: &SystemState, node: u32) -> Option<u32> {
    let from = sys.nodes.get(&node)?;
    sys.nodes
        .values()
        .filter(|n| n.has_memory && n.id != node)
        .min_by_key(|n| (from.distance_to(n.id).unwrap_or(u32::MAX), n.id))
        .map(|n| n.id)
}

/// Refuses unknown nodes, nodes without memory and nodes outside
/// `Mems_allowed`.
fn validate_mem_nodes(sys: &SystemState, option: &str, nodes: &NodeSet) -> Result<()> {
    require_nodes(sys, option, nodes)?;
    if let Some(bad) = nodes.iter().find(|id| !sys.nodes[id].has_memory) {
        let e = Error::new(
            "node-without-memory",
            format!("{option}: node {bad} has no memory"),
        );
        return Err(match nearest_memory_node(sys, bad) {
            Some(near) => e.hint(format!(
                "the nearest node with memory is node {near}: use {option}={near}"
            )),
            None => e,
        });
    }
    if let Some(allowed) = &sys.process.mems_allowed {
        let outside = nodes.difference(allowed);
        if !outside.is_empty() {
            return Err(Error::new(
                "node-not-allowed",
                format!(
                    "{option}: {} outside the memory nodes this process may use ({}allowed memory nodes {})",
                    nodes_phrase(&outside),
                    match &sys.allowed_source {
                        AllowedSource::Cgroup(cs) => format!("cpuset of cgroup {}: ", cs.cgroup),
                        _ => String::new(),
                    },
                    allowed
                ),
            )
            .hint("choose among the allowed nodes, or widen the cgroup's cpuset.mems"));
        }
    }
    Ok(())
}

fn plan_memory(
    sys: &SystemState,
    req: &MemoryRequest,
    chosen_nodes: Option<&NodeSet>,
) -> Result<MemPlan> {
    let all_nodes = || {
        let mem = sys.memory_nodes();
        match &sys.process.mems_allowed {
            Some(a) => mem.intersection(a),
            None => mem,
        }
    };
    let choice = |c: &NodeChoice| match c {
        NodeChoice::All => all_nodes(),
        NodeChoice::Nodes(n) => n.clone(),
    };
    let (mode, nodes, option) = match req {
        MemoryRequest::Bind(Some(n)) => (MemMode::Bind, n.clone(), "--membind"),
        MemoryRequest::Bind(None) => {
            let n = chosen_nodes.filter(|n| !n.is_empty()).ok_or_else(|| {
                Error::new(
                    "membind-needs-nodes",
                    "--membind: no NODES given and no placement to take them from",
                )
                .hint("give the nodes (--membind=0) or a placement (--node, --cpus, --cores)")
            })?;
            (MemMode::Bind, n.clone(), "--membind")
        }
        MemoryRequest::Preferred(n) => (
            MemMode::Preferred,
            std::iter::once(*n).collect(),
            "--preferred",
        ),
        MemoryRequest::PreferredMany(n) => (MemMode::PreferredMany, n.clone(), "--preferred-many"),
        MemoryRequest::Interleave(c) => (MemMode::Interleave, choice(c), "--interleave"),
        MemoryRequest::WeightedInterleave(c) => (
            MemMode::WeightedInterleave,
            choice(c),
            "--weighted-interleave",
        ),
        MemoryRequest::Local => {
            return Ok(MemPlan {
                mode: MemMode::Local,
                nodes: NodeSet::new(),
            });
        }
    };
    validate_mem_nodes(sys, option, &nodes)?;
    Ok(MemPlan { mode, nodes })
}

/// `own_permissions`: whether this process's capabilities and limits
/// matter (not for `--emit`, where systemd applies the policy as root).
fn plan_sched(
    sys: &SystemState,
    sched: &SchedRequest,
    cpus: Option<&CpuSet>,
    own_permissions: bool,
) -> Result<()> {
    let no_cap = own_permissions && sys.process.cap_sys_nice == Some(false);
    match sched.policy {
        Some(Policy::Fifo(_)) | Some(Policy::Rr(_)) if matches!(&sys.rt_group.v1_runtime, Some((p, 0)) if p != "/") =>
        {
            return Err(Error::new(
                "rt-group-no-runtime",
                format!(
                    "real-time policy refused: RT group scheduling gives this process's cgroup {} no real-time runtime (cpu.rt_runtime_us = 0), so the kernel answers EPERM",
                    sys.rt_group.v1_runtime.as_ref().map_or("", |(p, _)| p.as_str())
                ),
            )
            .hint("grant it runtime (echo 950000 > <cgroup>/cpu.rt_runtime_us, parents first), or run pinrun in the root cpu cgroup"));
        }
        Some(Policy::Fifo(prio)) | Some(Policy::Rr(prio)) => {
            if let (true, Some(limit)) = (no_cap, sys.process.rtprio_limit)
                && u64::from(prio) > limit
            {
                return Err(Error::new(
                    "rtprio-not-permitted",
                    format!("real-time priority {prio} exceeds RLIMIT_RTPRIO {limit}, and CAP_SYS_NICE is missing"),
                )
                .hint(format!("raise the limit (systemd LimitRTPRIO={prio}, limits.conf `rtprio {prio}`), or grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE)")));
            }
        }
        Some(Policy::Deadline { .. }) => {
            if no_cap {
                return Err(Error::new(
                    "deadline-not-permitted",
                    "SCHED_DEADLINE needs CAP_SYS_NICE, which this process lacks",
                )
                .hint("run as root or grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE)"));
            }
            if let Some(cpus) = cpus {
                // The root domain spans the online CPUs outside domain isolation
                // (exclusive cpuset partitions aside), not the caller's cpuset.
                let span = sys.online.difference(&sys.isolated);
                let span = if cpus.is_subset(&sys.isolated) {
                    cpus.clone()
                } else {
                    span
                };
                if !span.is_subset(cpus) {
                    return Err(Error::new(
                        "deadline-affinity",
                        format!(
                            "--deadline: the affinity {} is narrower than its root domain {}; the kernel refuses SCHED_DEADLINE tasks that cannot run on every CPU of their root domain (EPERM/EBUSY)",
                            cpus, span
                        ),
                    )
                    .hint("create an exclusive cpuset partition for these CPUs (cgroup v2 cpuset.cpus.partition=root) and run pinrun inside it, or drop the placement"));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Why the kernel may still refuse a real-time policy with EPERM after the
/// capability and rlimit checks passed: RT group scheduling. Names the
/// cgroup and the setting, or `None` when nothing points there.
pub fn rt_eperm_diagnosis(sys: &SystemState) -> Option<String> {
    if let Some((path, v)) = &sys.rt_group.v1_runtime
        && path != "/"
    {
        return Some(format!(
            "RT group scheduling is on: cgroup {path} has cpu.rt_runtime_us = {v}; give it (and its parents) enough runtime, or run in the root cpu cgroup"
        ));
    }
    if sys.rt_group.config == Some(true)
        && let Some(cg) = &sys.rt_group.v2_cgroup
    {
        return Some(format!(
            "the kernel has CONFIG_RT_GROUP_SCHED=y and this process is in cgroup {cg}: real-time tasks are refused outside the root cgroup unless it has RT runtime; run pinrun from the root cgroup (systemd: Delegate=no, or a unit in -.slice)"
        ));
    }
    None
}

/// Resolves `req` on `sys`. Errors are refusals (exit 125), each naming the
/// object and the fix.
pub fn plan(sys: &SystemState, req: &Request) -> Result<Plan> {
    plan_claimed(sys, req, &Claims::default())
}

/// [`plan`] with the CPUs other launches hold: `--cores` skips claimed
/// cores, `--cpus` refuses claimed CPUs, and `--exclusive` refuses to claim
/// a core any part of which is claimed.
pub fn plan_claimed(sys: &SystemState, req: &Request, claims: &Claims) -> Result<Plan> {
    let placed = if req.placement.is_requested() {
        Some(place(sys, &req.placement, claims)?)
    } else {
        None
    };
    let mut placed = placed;
    if let (true, Some(p)) = (req.claims.exclusive, &mut placed) {
        let claim = claim_set(&p.cpus, &p.cores);
        refuse_claimed("--exclusive", &claim, claims)?;
        p.reasons.push(format!(
            "--exclusive: claims {} (every thread of the chosen cores) while the command lives",
            cpus_phrase(&claim)
        ));
    }
    let nodes: NodeSet = placed
        .as_ref()
        .map(|p| p.cpus.iter().filter_map(|c| sys.node_of(c)).collect())
        .unwrap_or_default();
    let memory = req
        .memory
        .as_ref()
        .map(|m| plan_memory(sys, m, placed.as_ref().map(|_| &nodes)))
        .transpose()?;
    plan_sched(
        sys,
        &req.sched,
        placed.as_ref().map(|p| &p.cpus),
        req.mode != crate::request::Mode::Emit,
    )?;
    let (cpus, cores, reasons) = match placed {
        Some(p) => (Some(p.cpus), p.cores, p.reasons),
        None => (
            None,
            Vec::new(),
            vec!["no placement requested: CPU affinity unchanged".to_string()],
        ),
    };
    Ok(Plan {
        cpus,
        cores,
        nodes,
        memory,
        sched: req.sched.clone(),
        reasons,
    })
}

// ---- claims (issue 5): pure; the claimed CPUs come in as data ----

/// The CPUs an `--exclusive` launch claims: every thread of each chosen
/// core, and the chosen CPUs themselves.
pub fn claim_set(cpus: &CpuSet, cores: &[CoreChoice]) -> CpuSet {
    let mut claim = cpus.clone();
    for c in cores {
        claim.union_with(&c.cpus);
    }
    claim
}

/// Refuses `cpus` when any of them is claimed, naming the holders.
fn refuse_claimed(option: &str, cpus: &CpuSet, claims: &Claims) -> Result<()> {
    let taken = cpus.intersection(&claims.cpus());
    if taken.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        "cpu-claimed",
        format!(
            "{option}: {} claimed: {}",
            if taken.len() == 1 {
                format!("CPU {taken} is")
            } else {
                format!("CPUs {taken} are")
            },
            claims.describe(&taken)
        ),
    )
    .hint(
        "choose other CPUs (--cores N skips claimed cores), wait with --wait, or stop the holder",
    ))
}

/// Drops the whole cores any CPU of which is claimed; refuses when fewer
/// than `n` stay free. Returns the free cores and the reason to print.
fn skip_claimed(
    n: usize,
    candidate: &CpuSet,
    whole: Vec<CpuSet>,
    claims: &Claims,
) -> Result<(Vec<CpuSet>, Option<String>)> {
    let claimed = claims.cpus();
    let (free, taken): (Vec<CpuSet>, Vec<CpuSet>) = whole
        .into_iter()
        .partition(|c| !c.iter().any(|id| claimed.contains(id)));
    let mut taken_cpus = CpuSet::new();
    for c in &taken {
        taken_cpus.union_with(c);
    }
    let holders = claims.describe(&taken_cpus);
    if free.len() < n {
        return Err(Error::new(
            "no-free-core",
            format!(
                "--cores {n}: no free core{}: {} of the {} whole cores in the candidates {candidate} {} claimed ({holders})",
                if n == 1 { "" } else { "s" },
                taken.len(),
                taken.len() + free.len(),
                if taken.len() == 1 { "is" } else { "are" },
            ),
        )
        .hint("wait for a core with --wait[=DURATION], ask for fewer cores, or widen the candidates"));
    }
    let why = (!taken.is_empty()).then(|| {
        format!(
            "skipped {} claimed core{}: {holders}",
            taken.len(),
            if taken.len() == 1 { "" } else { "s" }
        )
    });
    Ok((free, why))
}
