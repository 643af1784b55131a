//! `--plan-host` (issue 38): the boot-time split of a host into
//! housekeeping ("reserved") and latency ("isolated") CPUs, the CPUs to
//! take offline, and which boot parameters realise the split on this
//! kernel. Pure: a function of [`SystemState`] and [`HostFacts`].
//!
//! The rules are those of OpenShift's Performance Profile Creator
//! (cluster-node-tuning-operator, `pkg/performanceprofile/profilecreator/
//! profilecreator.go`: `getReservedCPUs`, `getCPUsSequentially`,
//! `getCPUsSplitAcrossNUMA`, `getOfflinedCPUs`), so that the same inputs
//! give the same sets (`tests/it/plan_host.rs` holds pinrun to PPC's own
//! expected profiles), with these differences, each a refusal where PPC
//! would give a split that does not do what was asked:
//! - housekeeping is whole cores: a count that would split a core is
//!   refused with the two nearest counts that do not (PPC refuses only an
//!   odd count with SMT on, and splits an SMT4 core);
//! - the boot CPU's core and node come first (PPC starts at node 0's
//!   lowest CPU: the same wherever the boot CPU is CPU 0 on node 0);
//! - `--split-numa` gives the first `count % nodes` nodes one more
//!   (PPC's cumulative formula over-allocates for some counts on more than
//!   two nodes: 13 over 4 nodes reserves 15), and a node too small for its
//!   share is refused, not given less.

use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::host::read::HostFacts;
use crate::request::{HostRequest, HostSize};
use crate::system::SystemState;
use crate::words::cpus_phrase;

/// One core as the split sees it: its online CPUs (lowest first; with
/// `--no-smt` only the first) and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Core {
    cpus: Vec<u32>,
    node: Option<u32>,
    package: Option<u32>,
    die: Option<u32>,
    core_id: Option<u32>,
    /// An efficiency core of a hybrid CPU (`cpu_atom`, or a
    /// `cpu_capacity` below the highest): housekeeping takes these first.
    efficient: bool,
}

/// The split of the host's online CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSplit {
    /// Housekeeping ("reserved") CPUs: the kernel's own work, IRQs,
    /// systemd and every service.
    pub housekeeping: CpuSet,
    /// Latency ("isolated") CPUs: only what is placed there.
    pub latency: CpuSet,
    /// CPUs to take offline (`chcpu --disable`).
    pub offline: CpuSet,
    /// CPUs `nosmt` turns off (every core's CPUs but its first).
    pub smt_off: CpuSet,
    /// Present CPUs offline now. Their topology is gone (the kernel
    /// removes an offline CPU's `topology/`), so they are outside the
    /// choice; a plan keeps them offline (in `offline`), a check judges
    /// them by number ([`HostSplit::unjudged`] when it cannot).
    pub already_offline: CpuSet,
    /// What `--check` cannot judge on this host, and why.
    pub unjudged: Vec<String>,
    /// The boot CPU (the lowest online CPU): housekeeping with its core.
    pub boot_cpu: Option<u32>,
    /// How each set was chosen, in words.
    pub why: Vec<String>,
}

/// Whether the running kernel would act on a boot parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// It would; the evidence.
    Yes(String),
    /// It would not (ignored, refused or unknown to it); why.
    No(String),
    /// pinrun cannot tell; why.
    Unknown(String),
}

/// One kernel command-line parameter of the split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootParam {
    /// `isolcpus`, `nohz_full`, `rcu_nocbs`, `irqaffinity`, `nosmt`.
    pub name: &'static str,
    /// Its value (`None` for a flag).
    pub value: Option<String>,
    /// What the parameter does for the split.
    pub purpose: &'static str,
    /// The kernel function that parses it, and its file.
    pub parser: &'static str,
    /// Whether this kernel acts on it.
    pub support: Support,
}

impl BootParam {
    /// `name=value`, or `name`.
    pub fn arg(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.name),
            None => self.name.to_string(),
        }
    }
}

/// The online cores of `sys`, by lowest CPU; with `no_smt` each keeps its
/// first CPU only (as `nosmt` keeps the primary thread; PPC's
/// `topologyHTDisabled` keeps index 0).
fn cores(sys: &SystemState, no_smt: bool) -> Vec<Core> {
    let mut seen = CpuSet::new();
    let mut out = Vec::new();
    let top = sys
        .online
        .iter()
        .filter_map(|c| sys.cpus.get(&c)?.capacity)
        .max();
    let efficient = |cpu: u32| {
        sys.hybrid.atom.as_ref().is_some_and(|a| a.contains(cpu))
            || sys
                .cpus
                .get(&cpu)
                .and_then(|c| c.capacity)
                .zip(top)
                .is_some_and(|(c, t)| c < t)
    };
    for cpu in sys.online.iter() {
        if seen.contains(cpu) {
            continue;
        }
        let set = sys.core_of(cpu).intersection(&sys.online);
        seen.union_with(&set);
        let mut cpus = set.to_vec();
        if no_smt {
            cpus.truncate(1);
        }
        let c = sys.cpus.get(&cpu);
        out.push(Core {
            cpus,
            node: sys.node_of(cpu),
            package: c.and_then(|c| c.package),
            die: c.and_then(|c| c.die),
            core_id: c.and_then(|c| c.core_id),
            efficient: efficient(cpu),
        });
    }
    out
}

/// Counting housekeeping in CPUs or in cores.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Cpus,
    Cores,
}

impl Unit {
    fn size(self, core: &Core) -> usize {
        match self {
            Unit::Cpus => core.cpus.len(),
            Unit::Cores => 1,
        }
    }
}

/// The cores in housekeeping order, grouped by node: the boot CPU's node
/// first (its CPUs may have no node), then the others by id (CPUs without
/// a node last); in a node the boot CPU's core first, then the efficiency
/// cores of a hybrid CPU, then by lowest CPU.
fn housekeeping_order(cores: &[Core], boot: Option<u32>) -> Vec<(Option<u32>, Vec<&Core>)> {
    let boot_core = |c: &Core| boot.is_some_and(|b| c.cpus.contains(&b));
    let boot_node = cores.iter().find(|c| boot_core(c)).and_then(|c| c.node);
    let mut nodes: Vec<Option<u32>> = cores.iter().map(|c| c.node).collect();
    nodes.sort_by_key(|n| (*n != boot_node, n.is_none(), *n));
    nodes.dedup();
    nodes
        .into_iter()
        .map(|n| {
            let mut list: Vec<&Core> = cores.iter().filter(|c| c.node == n).collect();
            list.sort_by_key(|c| (!boot_core(c), !c.efficient, c.cpus[0]));
            (n, list)
        })
        .collect()
}

/// Takes whole cores from `order` until `want` units; `Err((below,
/// above))`, the two nearest reachable counts, when the next core would
/// pass `want`, and `Err((taken, taken))` when the cores run out.
fn take_whole(
    order: &[&Core],
    want: usize,
    unit: Unit,
) -> std::result::Result<CpuSet, (usize, usize)> {
    let mut taken = 0;
    let mut set = CpuSet::new();
    for core in order {
        if taken == want {
            break;
        }
        let size = unit.size(core);
        if taken + size > want {
            return Err((taken, taken + size));
        }
        taken += size;
        core.cpus.iter().for_each(|&c| set.insert(c));
    }
    if taken < want {
        return Err((taken, taken));
    }
    Ok(set)
}

fn unit_words(unit: Unit, n: usize) -> String {
    match (unit, n) {
        (Unit::Cpus, 1) => "1 CPU".into(),
        (Unit::Cpus, n) => format!("{n} CPUs"),
        (Unit::Cores, 1) => "1 core".into(),
        (Unit::Cores, n) => format!("{n} cores"),
    }
}

fn host_error(what: String, hint: String) -> Error {
    Error::new(ErrorCode::Usage, format!("--plan-host: {what}")).hint(hint)
}

/// Where a housekeeping count fails: the node (or the host) whose share
/// would split a core or does not fit.
struct Misfit {
    scope: String,
    share: usize,
    /// Whether the cores ran out (else the next core would pass the share).
    short: bool,
}

/// One attempt at `want` units: whole cores in [`housekeeping_order`],
/// over all nodes in turn, or (`split`) shared evenly by the nodes, the
/// first `want % nodes` one more. The set and each node's share.
fn try_housekeeping(
    order: &[(Option<u32>, Vec<&Core>)],
    want: usize,
    unit: Unit,
    split: bool,
) -> std::result::Result<(CpuSet, Vec<String>), Misfit> {
    let misfit = |scope: String, share: usize, (below, above): (usize, usize)| Misfit {
        scope,
        share,
        short: below == above,
    };
    if !split {
        let all: Vec<&Core> = order.iter().flat_map(|(_, l)| l.iter().copied()).collect();
        let set = take_whole(&all, want, unit).map_err(|e| misfit("this host".into(), want, e))?;
        return Ok((set, Vec::new()));
    }
    let n = order.len();
    let mut set = CpuSet::new();
    let mut shares = Vec::new();
    for (i, (node, list)) in order.iter().enumerate() {
        let share = want / n + usize::from(i < want % n);
        let scope = node.map_or("the CPUs without a node".to_string(), |n| {
            format!("node {n}")
        });
        let part = take_whole(list, share, unit).map_err(|e| misfit(scope.clone(), share, e))?;
        set.union_with(&part);
        shares.push(format!("{scope}: {}", unit_words(unit, share)));
    }
    Ok((set, shares))
}

/// The most counts tried on either side of a refused one for the hint.
const NEAREST_TRIES: usize = 4096;

/// The housekeeping CPUs for `want` units ([`try_housekeeping`]); a count
/// that cannot be whole cores is refused with the nearest counts, below
/// and above, that can (found by trying them; none when there is none).
fn choose_housekeeping(
    order: &[(Option<u32>, Vec<&Core>)],
    want: usize,
    unit: Unit,
    split: bool,
    limit: usize,
    why: &mut Vec<String>,
) -> Result<CpuSet> {
    match try_housekeeping(order, want, unit, split) {
        Ok((set, shares)) => {
            why.push(if split {
                format!(
                    "housekeeping: {} spread over the nodes ({})",
                    unit_words(unit, want),
                    shares.join(", ")
                )
            } else {
                format!(
                    "housekeeping: {}, whole cores from the boot CPU's core on, node by node{}",
                    unit_words(unit, want),
                    if order.iter().flat_map(|(_, l)| l).any(|c| c.efficient) {
                        ", efficiency cores first (the latency CPUs get the performance cores)"
                    } else {
                        ""
                    }
                )
            });
            Ok(set)
        }
        Err(m) => {
            let works = |t: &usize| try_housekeeping(order, *t, unit, split).is_ok();
            let below = (1..want).rev().take(NEAREST_TRIES).find(works);
            let above = (want + 1..limit).take(NEAREST_TRIES).find(works);
            let what = if m.short {
                format!(
                    "{} has fewer cores than its share of {}",
                    m.scope,
                    unit_words(unit, m.share)
                )
            } else {
                format!(
                    "{} of housekeeping on {} would split a core: housekeeping is whole cores",
                    unit_words(unit, m.share),
                    m.scope
                )
            };
            let option = match unit {
                Unit::Cpus => "--housekeeping-count",
                Unit::Cores => "--latency-cores",
            };
            let hint = match (below, above, unit) {
                (None, None, _) => "no count of whole cores fits here".to_string(),
                (b, a, Unit::Cpus) => format!(
                    "the nearest counts that keep whole cores: {}",
                    [b, a]
                        .into_iter()
                        .flatten()
                        .map(|t| format!("{option} {t}"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
                (b, a, Unit::Cores) => format!(
                    "the nearest that keep whole cores: {}",
                    [a, b]
                        .into_iter()
                        .flatten()
                        .map(|t| format!("{option} {}", limit - t))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            };
            Err(host_error(what, hint))
        }
    }
}

/// The cores in PPC's offlining order: by package id (unknown last), in a
/// package by die and `core_id` (ghw sorts a processor's cores by core
/// id), then lowest CPU.
fn offline_order(cores: &[Core]) -> Vec<&Core> {
    let mut list: Vec<&Core> = cores.iter().collect();
    list.sort_by_key(|c| (c.package.is_none(), c.package, c.die, c.core_id, c.cpus[0]));
    list
}

/// `count` CPUs to take offline, none of `housekeeping` (PPC's
/// `getOfflinedCPUs`): whole packages without a housekeeping CPU that fit
/// in what is left to take, then every core's CPUs but its first, then any
/// CPU, each in [`offline_order`].
fn choose_offline(
    cores: &[Core],
    housekeeping: &CpuSet,
    count: usize,
    why: &mut Vec<String>,
) -> CpuSet {
    let order = offline_order(cores);
    let mut off = CpuSet::new();
    if count == 0 {
        return off;
    }
    let mut packages: Vec<Option<u32>> = order.iter().map(|c| c.package).collect();
    packages.dedup();
    for p in packages.iter().filter(|p| p.is_some()) {
        let cpus: CpuSet = order
            .iter()
            .filter(|c| c.package == *p)
            .flat_map(|c| c.cpus.iter().copied())
            .collect();
        if !cpus.intersects(housekeeping) && cpus.len() <= count - off.len() {
            off.union_with(&cpus);
            why.push(format!(
                "offline: package {} whole ({}), which has no housekeeping CPU",
                p.unwrap_or_default(),
                cpus_phrase(&cpus)
            ));
        }
    }
    let take = |off: &mut CpuSet, skip_first: bool| {
        for core in &order {
            for &cpu in core.cpus.iter().skip(usize::from(skip_first)) {
                if off.len() < count && !housekeeping.contains(cpu) {
                    off.insert(cpu);
                }
            }
        }
    };
    let before = off.len();
    take(&mut off, true);
    if off.len() > before {
        why.push(format!(
            "offline: {} SMT siblings of latency cores (a latency core then runs without a sibling)",
            off.len() - before
        ));
    }
    let before = off.len();
    take(&mut off, false);
    if off.len() > before {
        why.push(format!(
            "offline: {} more latency CPUs, by package and core id",
            off.len() - before
        ));
    }
    off
}

/// Whether `nosmt` works on this kernel: not when `cpu/smt/control` is
/// `notsupported`/`notimplemented`, or is missing on a kernel built
/// without `CONFIG_HOTPLUG_SMT` ([`smt_support`]); a dump that kept
/// neither the file nor the configuration cannot tell, and is planned as
/// if it did.
pub fn nosmt_works(facts: &HostFacts) -> bool {
    !matches!(smt_support(facts), Support::No(_))
}

/// The split `req` asks for on `sys`. Refused (exit 125) when the sizes
/// leave no housekeeping or no latency CPU, or cannot be whole cores.
pub fn split(sys: &SystemState, facts: &HostFacts, req: &HostRequest) -> Result<HostSplit> {
    let smt = sys
        .online
        .iter()
        .any(|c| sys.core_of(c).intersection(&sys.online).len() > 1);
    let no_smt = req.no_smt && smt;
    let cores = cores(sys, no_smt);
    let boot_cpu = sys.online.first();
    let mut why = Vec::new();
    let mut unjudged = Vec::new();
    let mut already_offline = sys.present.difference(&sys.online);
    // SMT turned off at run time (`cpu/smt/control` off): the CPUs offline
    // now are its siblings as far as pinrun can tell; with --no-smt they
    // are nosmt's, and the boot line keeps them off.
    let smt_now_off = matches!(facts.smt_control.as_deref(), Some("off" | "forceoff"));
    let siblings: CpuSet = if no_smt {
        let kept: CpuSet = cores.iter().map(|c| c.cpus[0]).collect();
        sys.online.difference(&kept)
    } else if req.no_smt && smt_now_off && !already_offline.is_empty() {
        why.push(format!(
            "SMT is off now (cpu/smt/control): {} offline are taken for its siblings, which nosmt keeps off at boot",
            cpus_phrase(&already_offline)
        ));
        if req.verify && req.offline > 0 {
            unjudged.push(format!(
                "which CPUs are offline ({}): with SMT off pinrun cannot tell a sibling from a CPU --offline-count took (the kernel removes an offline CPU's topology)",
                already_offline.to_list()
            ));
        }
        std::mem::take(&mut already_offline)
    } else {
        CpuSet::new()
    };
    // Where nosmt does nothing, the siblings are taken offline instead.
    let (smt_off, siblings_offline) = if no_smt && !nosmt_works(facts) {
        why.push(format!(
            "nosmt does nothing on this kernel ({}): the other CPUs of each core are taken offline instead",
            match smt_support(facts) {
                Support::No(why) => why,
                _ => String::new(),
            }
        ));
        (CpuSet::new(), siblings)
    } else {
        if no_smt {
            why.push("nosmt: every core keeps its first CPU only".to_string());
        } else if req.no_smt && siblings.is_empty() && already_offline.is_empty() {
            why.push(
                "--no-smt: no core has two online CPUs here, nosmt would change nothing".into(),
            );
        }
        (siblings, CpuSet::new())
    };
    let considered = sys
        .online
        .difference(&smt_off)
        .difference(&siblings_offline);
    let total = considered.len();
    if let HostSize::Running = req.size {
        return running(sys, considered, smt_off, already_offline, boot_cpu, why);
    }
    let mut offline = req.offline as usize;
    if !already_offline.is_empty() {
        let words = cpus_phrase(&already_offline);
        if !req.verify {
            why.push(format!(
                "{words} offline now: without their topology (the kernel removes it) they stay out of the choice, and offline: bring them online and plan again to place them"
            ));
        } else {
            offline = offline.saturating_sub(already_offline.len());
        }
    }
    if !unjudged.is_empty() {
        // Which CPUs --offline-count took cannot be told: none is asked.
        offline = 0;
    }
    let (want, unit, limit) = match req.size {
        HostSize::Housekeeping(n) => (n as usize, Unit::Cpus, total),
        HostSize::LatencyCores(n) => (
            cores.len().saturating_sub(n as usize),
            Unit::Cores,
            cores.len(),
        ),
        HostSize::Running => unreachable!("returned above"),
    };
    check_sizes(req, want, unit, total, cores.len(), offline, no_smt)?;
    let order = housekeeping_order(&cores, boot_cpu);
    let housekeeping = choose_housekeeping(&order, want, unit, req.split_numa, limit, &mut why)?;
    let mut off = choose_offline(&cores, &housekeeping, offline, &mut why);
    off.union_with(&siblings_offline);
    if !req.verify {
        off.union_with(&already_offline);
    }
    let latency = considered.difference(&housekeeping).difference(&off);
    why.extend(devices_without_latency(sys, &latency));
    Ok(HostSplit {
        housekeeping,
        latency,
        offline: off,
        smt_off,
        already_offline,
        unjudged,
        boot_cpu,
        why,
    })
}

/// The running kernel's own split (`--plan-host --check` without a size):
/// latency = `cpu/isolated` ∪ `cpu/nohz_full`, the other online CPUs
/// housekeeping.
fn running(
    sys: &SystemState,
    considered: CpuSet,
    smt_off: CpuSet,
    already_offline: CpuSet,
    boot_cpu: Option<u32>,
    mut why: Vec<String>,
) -> Result<HostSplit> {
    let latency = sys.isolated.union(&sys.nohz_full).intersection(&considered);
    if latency.is_empty() {
        return Err(host_error(
            "the running kernel isolates no CPU (cpu/isolated and cpu/nohz_full are empty)".into(),
            "give the split to check: --housekeeping-count N or --latency-cores N".into(),
        ));
    }
    why.push("the running kernel's split: latency = cpu/isolated ∪ cpu/nohz_full".into());
    Ok(HostSplit {
        housekeeping: considered.difference(&latency),
        latency,
        offline: CpuSet::new(),
        smt_off,
        already_offline,
        unjudged: Vec::new(),
        boot_cpu,
        why,
    })
}

/// The devices (NICs, NVMe: not virtual) on a node without latency CPUs:
/// a latency command using one reaches it across nodes.
fn devices_without_latency(sys: &SystemState, latency: &CpuSet) -> Vec<String> {
    sys.devices
        .iter()
        .filter_map(|d| {
            let node = u32::try_from(d.numa_node?).ok()?;
            let cpus = &sys.nodes.get(&node)?.cpus;
            (!cpus.intersects(latency)).then(|| {
                format!(
                    "device {} is on node {node}, which has no latency CPU: a latency command using it reaches it across nodes",
                    d.name
                )
            })
        })
        .collect()
}

/// PPC's bounds (`CalculateCPUSets`): at least one housekeeping and one
/// latency CPU once the offline ones are taken.
fn check_sizes(
    req: &HostRequest,
    want: usize,
    unit: Unit,
    total: usize,
    ncores: usize,
    offline: usize,
    no_smt: bool,
) -> Result<()> {
    let after = if no_smt { " with nosmt" } else { "" };
    if ncores < 2 {
        return Err(host_error(
            format!(
                "this host has {} online{after}: no split is possible",
                unit_words(Unit::Cores, ncores)
            ),
            "housekeeping and latency need a core each".into(),
        ));
    }
    if let HostSize::LatencyCores(n) = req.size
        && n as usize >= ncores
    {
        return Err(host_error(
            format!(
                "{} leave no housekeeping core: this host has {} online{after}",
                latency_cores_words(n as usize),
                unit_words(Unit::Cores, ncores)
            ),
            if ncores == 2 {
                "--latency-cores takes 1 here".to_string()
            } else {
                format!("--latency-cores takes 1 to {}", ncores - 1)
            },
        ));
    }
    let cpus = match unit {
        Unit::Cpus => want,
        Unit::Cores => 0,
    };
    if cpus >= total || cpus + offline >= total || offline >= total {
        return Err(host_error(
            format!(
                "{} of housekeeping and {} offline leave no latency CPU: this host has {} online{after}",
                unit_words(unit, want),
                unit_words(Unit::Cpus, offline),
                unit_words(Unit::Cpus, total)
            ),
            format!(
                "housekeeping plus offline CPUs must be at most {}",
                total.saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

fn latency_cores_words(n: usize) -> String {
    if n == 1 {
        "1 latency core".into()
    } else {
        format!("{n} latency cores")
    }
}

/// Refuses a split whose offline CPUs include one the kernel cannot take
/// offline: no `cpuN/online` file (`cpu_down()` is not offered; usually
/// the boot CPU). Not judged when no CPU has the file (a dump without
/// them).
pub fn check_offline(split: &HostSplit, facts: &HostFacts) -> Result<()> {
    let fixed = split.offline.difference(&facts.hotpluggable);
    if facts.hotpluggable.is_empty() || fixed.is_empty() {
        return Ok(());
    }
    Err(host_error(
        format!(
            "{} cannot be taken offline: no cpuN/online file (the kernel does not hotplug it)",
            cpus_phrase(&fixed)
        ),
        "ask for fewer offline CPUs".into(),
    ))
}

/// The kernel command line of `split`, each parameter judged against this
/// kernel ([`HostFacts`], the isolation sources of `sys`).
pub fn boot_params(sys: &SystemState, facts: &HostFacts, split: &HostSplit) -> Vec<BootParam> {
    let latency = split.latency.to_list();
    let mut params = vec![
        BootParam {
            name: "isolcpus",
            value: Some(crate::boot_params::isolcpus_value(
                &crate::boot_params::IsolcpusFlags {
                    domain: true,
                    managed_irq: true,
                    ..Default::default()
                },
                &latency,
            )),
            purpose: "takes the latency CPUs out of the scheduler's load balancing (domain) and keeps managed IRQs off them where a housekeeping CPU can serve the queue (managed_irq)",
            parser: "housekeeping_isolcpus_setup(), kernel/sched/isolation.c",
            support: isolcpus_support(sys, facts),
        },
        BootParam {
            name: "nohz_full",
            value: Some(latency.clone()),
            purpose: "stops the tick on a latency CPU running one task, and keeps unbound kthreads, workqueues and timers on housekeeping (there is no parameter for kthreads alone)",
            parser: "housekeeping_nohz_full_setup() → housekeeping_setup(), kernel/sched/isolation.c (refused whole, with 'nohz unsupported', without CONFIG_NO_HZ_FULL)",
            support: nohz_full_support(sys, facts),
        },
        BootParam {
            name: "rcu_nocbs",
            value: Some(latency.clone()),
            purpose: "moves RCU callbacks off the latency CPUs to rcuo kthreads",
            parser: "rcu_nocb_setup(), kernel/rcu/tree_nocb.h",
            support: rcu_nocbs_support(sys, facts),
        },
        BootParam {
            name: "irqaffinity",
            value: Some(split.housekeeping.to_list()),
            purpose: "the default affinity of every IRQ: housekeeping",
            parser: "irq_affinity_setup(), kernel/irq/irqdesc.c",
            support: Support::Yes("every SMP kernel has it".into()),
        },
    ];
    if !split.smt_off.is_empty() {
        params.push(BootParam {
            name: "nosmt",
            value: None,
            purpose: "keeps every core's second CPU off",
            parser: "smt_cmdline_disable(), kernel/cpu.c",
            support: smt_support(facts),
        });
    }
    params
}

/// `isolcpus=managed_irq,domain,…`: needs `CONFIG_CPU_ISOLATION`, and
/// the `managed_irq` flag is Linux 5.6's (and backports', RHEL 8's 4.18
/// among them): a kernel that does not know a flag refuses the whole
/// parameter ("isolcpus: Error, unknown flag",
/// `housekeeping_isolcpus_setup()`). No call asks a kernel which boot
/// flags it knows, so a release before 5.6 is "cannot tell", unless the
/// running command line uses the flag and the kernel isolates CPUs by it.
fn isolcpus_support(sys: &SystemState, facts: &HostFacts) -> Support {
    let running = sys
        .boot
        .isolcpus
        .as_ref()
        .is_some_and(|i| i.managed_irq && !i.rejected() && !sys.isolated.is_empty());
    let evidence = running.then(|| {
        "the running kernel isolates CPUs with an isolcpus= that has managed_irq".to_string()
    });
    match config_support(facts, "CPU_ISOLATION", evidence) {
        Support::Yes(why) if !running && crate::plan::kernel_at_least(sys, 5, 6) == Some(false) => {
            Support::Unknown(format!(
                "{why}, but managed_irq is an isolcpus= flag of Linux 5.6 and later (or a backport, as in RHEL 8's 4.18): a kernel without it refuses the whole parameter"
            ))
        }
        s => s,
    }
}

/// The length limit of the kernel command line on x86, arm64, powerpc and
/// RISC-V (`COMMAND_LINE_SIZE`, 2048 bytes with its NUL; s390's is
/// configurable, others differ): a longer line is cut.
pub const COMMAND_LINE_SIZE: usize = 2048;

/// Warnings about the command line `line` would make with the running one
/// (`sys.cmdline`, its parameters of the same names replaced): longer than
/// [`COMMAND_LINE_SIZE`].
pub fn cmdline_warnings(sys: &SystemState, params: &[BootParam], line: &str) -> Vec<String> {
    let names: Vec<&str> = params.iter().map(|p| p.name).collect();
    let kept: Vec<&str> = sys
        .cmdline
        .split_whitespace()
        .filter(|w| !names.contains(&w.split('=').next().unwrap_or(w)))
        .collect();
    let len = kept.iter().map(|w| w.len() + 1).sum::<usize>() + line.len();
    let mut out = Vec::new();
    if len >= COMMAND_LINE_SIZE {
        out.push(format!(
            "the command line would be {len} bytes with the running one's other parameters ({} alone): x86, arm64, powerpc and RISC-V cut it at {} (COMMAND_LINE_SIZE), dropping what comes after",
            line.len(),
            COMMAND_LINE_SIZE - 1
        ));
    }
    out
}

/// Support from a config option, with `evidence` first when given.
fn config_support(facts: &HostFacts, option: &str, evidence: Option<String>) -> Support {
    if let Some(e) = evidence {
        return Support::Yes(e);
    }
    match &facts.config {
        Some(c) if c.enabled(option) => Support::Yes(format!("CONFIG_{option} in {}", c.source)),
        Some(c) => Support::No(format!("built without CONFIG_{option} ({})", c.source)),
        None => Support::Unknown(
            "the kernel configuration is unreadable (/proc/config.gz, /boot/config-RELEASE)".into(),
        ),
    }
}

fn nohz_full_support(sys: &SystemState, facts: &HostFacts) -> Support {
    use crate::system::IsolationSource;
    match sys.nohz_full_source {
        IsolationSource::Sysfs => Support::Yes("cpu/nohz_full exists (CONFIG_NO_HZ_FULL)".into()),
        IsolationSource::NotBuilt => Support::No(
            "no cpu/nohz_full beside cpu/isolated: built without CONFIG_NO_HZ_FULL, so the kernel refuses nohz_full= whole".into(),
        ),
        IsolationSource::Cmdline => config_support(facts, "NO_HZ_FULL", None),
    }
}

fn rcu_nocbs_support(sys: &SystemState, facts: &HostFacts) -> Support {
    use crate::system::IsolationSource;
    // NO_HZ_FULL selects RCU_NOCB_CPU (kernel/time/Kconfig); the rcuo
    // kthreads exist only with it.
    let evidence = if sys.nohz_full_source == IsolationSource::Sysfs {
        Some("cpu/nohz_full exists: CONFIG_NO_HZ_FULL selects CONFIG_RCU_NOCB_CPU".to_string())
    } else if sys.nocb_kthreads.as_ref().is_some_and(|k| !k.is_empty()) {
        Some("rcuo kthreads run (CONFIG_RCU_NOCB_CPU)".to_string())
    } else {
        None
    };
    match config_support(facts, "RCU_NOCB_CPU", evidence) {
        Support::No(why) => Support::No(format!(
            "{why}: rcu_nocbs= is then unknown to the kernel, which passes it to init"
        )),
        s => s,
    }
}

fn smt_support(facts: &HostFacts) -> Support {
    match facts.smt_control.as_deref() {
        Some("on" | "off" | "forceoff") => {
            Support::Yes("cpu/smt/control exists (CONFIG_HOTPLUG_SMT)".into())
        }
        Some(other) => Support::No(format!(
            "cpu/smt/control is '{}': nosmt does nothing here; take the siblings offline instead",
            other.escape_debug()
        )),
        None => match config_support(facts, "HOTPLUG_SMT", None) {
            Support::No(why) => Support::No(format!(
                "no cpu/smt/control, {why}: nosmt is ignored; take the siblings offline instead"
            )),
            Support::Unknown(why) => Support::Unknown(format!("no cpu/smt/control, and {why}")),
            yes => yes,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::read::HostFacts;
    use crate::testkit::{Machine, cpus};

    fn req(size: HostSize) -> HostRequest {
        HostRequest {
            size,
            offline: 0,
            no_smt: false,
            split_numa: false,
            verify: false,
        }
    }

    /// 2 nodes × 4 cores × 2 threads, siblings N/N+8 (node 0: cores
    /// 0-3, node 1: cores 4-7).
    fn machine() -> SystemState {
        Machine::new(2, 4, 2).build()
    }

    /// Whole cores from CPU 0's core on; 3 CPUs would split a core and
    /// the hint names 2 and 4.
    #[test]
    fn housekeeping_is_whole_cores_from_the_boot_cpu() {
        let sys = machine();
        let s = split(&sys, &HostFacts::default(), &req(HostSize::Housekeeping(4))).unwrap();
        assert_eq!(s.housekeeping, cpus("0-1,8-9"));
        assert_eq!(s.latency, sys.online.difference(&s.housekeeping));
        let e = split(&sys, &HostFacts::default(), &req(HostSize::Housekeeping(3))).unwrap_err();
        assert!(e.to_string().contains("would split a core"), "{e}");
        assert_eq!(
            e.hint.as_deref(),
            Some(
                "the nearest counts that keep whole cores: --housekeeping-count 2 or --housekeeping-count 4"
            )
        );
    }

    /// 5 housekeeping cores over 2 nodes: 3 on node 0, 2 on node 1.
    #[test]
    fn split_numa_gives_the_first_nodes_the_remainder() {
        let sys = machine();
        let mut r = req(HostSize::LatencyCores(3));
        r.split_numa = true;
        let s = split(&sys, &HostFacts::default(), &r).unwrap();
        let on = |n: u32| s.housekeeping.intersection(&sys.nodes[&n].cpus).len();
        assert_eq!((on(0), on(1)), (6, 4));
        assert_eq!(s.latency.len(), 6);
    }

    /// Sizes that leave nothing are refused; --latency-cores counts cores.
    #[test]
    fn sizes_leaving_no_latency_cpu_are_refused() {
        let sys = machine();
        assert!(
            split(
                &sys,
                &HostFacts::default(),
                &req(HostSize::Housekeeping(16))
            )
            .is_err()
        );
        assert!(split(&sys, &HostFacts::default(), &req(HostSize::LatencyCores(8))).is_err());
        let s = split(&sys, &HostFacts::default(), &req(HostSize::LatencyCores(7))).unwrap();
        assert_eq!(s.housekeeping, cpus("0,8"));
        let mut r = req(HostSize::Housekeeping(2));
        r.offline = 14;
        assert!(split(&sys, &HostFacts::default(), &r).is_err());
    }

    /// nosmt: the second CPU of each core is off and counts for nothing.
    #[test]
    fn no_smt_keeps_each_cores_first_cpu() {
        let sys = machine();
        let mut r = req(HostSize::Housekeeping(3));
        r.no_smt = true;
        let facts = HostFacts {
            smt_control: Some("on".into()),
            ..Default::default()
        };
        let s = split(&sys, &facts, &r).unwrap();
        assert_eq!(s.smt_off, cpus("8-15"));
        assert_eq!(s.housekeeping, cpus("0-2"));
        assert_eq!(s.latency, cpus("3-7"));
        assert!(s.offline.is_empty());
        // Where nosmt does nothing (no cpu/smt/control, built without
        // CONFIG_HOTPLUG_SMT), the siblings are taken offline instead,
        // never left on beside the latency CPUs.
        let without = HostFacts {
            config: Some(crate::system::kernel_config::KernelConfig::parse(
                "# CONFIG_HOTPLUG_SMT is not set\n",
                "t",
            )),
            ..Default::default()
        };
        let s = split(&sys, &without, &r).unwrap();
        assert!(s.smt_off.is_empty());
        assert_eq!(s.offline, cpus("8-15"));
        assert_eq!(s.latency, cpus("3-7"));
    }

    /// The boot CPU's core is housekeeping even when its CPUs have no
    /// node (a firmware that names only some CPUs' node); the hint never
    /// offers a count that cannot work.
    #[test]
    fn the_boot_cpu_is_housekeeping_wherever_it_is() {
        let mut sys = machine();
        for c in [0, 8] {
            sys.cpus.get_mut(&c).unwrap().node = None;
        }
        let s = split(&sys, &HostFacts::default(), &req(HostSize::Housekeeping(2))).unwrap();
        assert_eq!(s.housekeeping, cpus("0,8"));
        let e = split(&sys, &HostFacts::default(), &req(HostSize::Housekeeping(1))).unwrap_err();
        assert_eq!(
            e.hint.as_deref(),
            Some("the nearest counts that keep whole cores: --housekeeping-count 2")
        );
    }

    /// A hybrid CPU: housekeeping takes the efficiency cores after the boot
    /// CPU's core, so the latency cores are performance cores.
    #[test]
    fn hybrid_latency_cores_are_performance_cores() {
        let mut sys = Machine::new(1, 4, 1).build();
        sys.hybrid.atom = Some(cpus("2-3"));
        let s = split(&sys, &HostFacts::default(), &req(HostSize::LatencyCores(1))).unwrap();
        assert_eq!(s.housekeeping, cpus("0,2-3"));
        assert_eq!(s.latency, cpus("1"));
    }

    /// isolcpus= with managed_irq on a release before 5.6 is "cannot tell"
    /// (a kernel without the flag drops the whole parameter), unless the
    /// running line uses the flag and the kernel isolates by it.
    #[test]
    fn managed_irq_before_5_6_cannot_be_told() {
        use crate::system::kernel_config::KernelConfig;
        let mut sys = Machine::new(1, 4, 1).kernel("5.4.0-216-generic").build();
        let facts = HostFacts {
            config: Some(KernelConfig::parse(
                "CONFIG_CPU_ISOLATION=y\n",
                "/boot/config-5.4.0",
            )),
            ..Default::default()
        };
        let s = split(&sys, &facts, &req(HostSize::LatencyCores(2))).unwrap();
        let iso = |sys: &SystemState| boot_params(sys, &facts, &s)[0].support.clone();
        assert!(matches!(iso(&sys), Support::Unknown(w) if w.contains("Linux 5.6")));
        sys.boot.isolcpus = Some(crate::boot_params::parse_isolcpus(
            "managed_irq,domain,2-3",
            None,
        ));
        sys.isolated = cpus("2-3");
        assert!(matches!(iso(&sys), Support::Yes(_)));
        let new = Machine::new(1, 4, 1).kernel("6.1.0").build();
        assert!(matches!(iso(&new), Support::Yes(_)));
    }

    /// A line the kernel would cut at COMMAND_LINE_SIZE is said, counted
    /// with the running line's other parameters (its own isolcpus= is
    /// replaced, not added).
    #[test]
    fn a_line_past_command_line_size_is_said() {
        let mut sys = Machine::new(1, 4, 1).build();
        sys.cmdline = format!("ro isolcpus=1 {}", "x".repeat(2000));
        let facts = HostFacts::default();
        let s = split(&sys, &facts, &req(HostSize::LatencyCores(2))).unwrap();
        let params = boot_params(&sys, &facts, &s);
        let line = "isolcpus=managed_irq,domain,2-3 irqaffinity=0-1";
        let w = cmdline_warnings(&sys, &params, line);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(&format!(
                "the command line would be {} bytes",
                3 + 2001 + line.len()
            )),
            "{w:?}"
        );
        sys.cmdline = "ro isolcpus=1".into();
        assert!(cmdline_warnings(&sys, &params, line).is_empty());
    }
}
