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
use crate::request::{HostRequest, HostSize};
use crate::system::SystemState;
use crate::system::host::HostFacts;
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
    /// Present CPUs offline now: outside the split (their topology is
    /// gone); with `--check` they count toward the offline CPUs asked for.
    pub already_offline: CpuSet,
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
/// first, then the others by id (CPUs without a node last); in a node the
/// boot CPU's core first, then by lowest CPU.
fn housekeeping_order(cores: &[Core], boot: Option<u32>) -> Vec<(Option<u32>, Vec<&Core>)> {
    let boot_core = |c: &Core| boot.is_some_and(|b| c.cpus.contains(&b));
    let boot_node = cores.iter().find(|c| boot_core(c)).and_then(|c| c.node);
    let mut nodes: Vec<Option<u32>> = cores.iter().map(|c| c.node).collect();
    nodes.sort_by_key(|n| (*n != boot_node || n.is_none(), n.is_none(), *n));
    nodes.dedup();
    nodes
        .into_iter()
        .map(|n| {
            let mut list: Vec<&Core> = cores.iter().filter(|c| c.node == n).collect();
            list.sort_by_key(|c| (!boot_core(c), c.cpus[0]));
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

/// The housekeeping CPUs: `want` units of whole cores in
/// [`housekeeping_order`], over all nodes in turn, or (`split`) shared
/// evenly by the nodes, the first `want % nodes` one more.
fn choose_housekeeping(
    order: &[(Option<u32>, Vec<&Core>)],
    want: usize,
    unit: Unit,
    split: bool,
    why: &mut Vec<String>,
) -> Result<CpuSet> {
    let split_error = |(below, above): (usize, usize), scope: String, share: usize| {
        let what = if below == above {
            format!(
                "{scope} has only {} for {}",
                unit_words(unit, below),
                unit_words(unit, share)
            )
        } else {
            format!(
                "{} of housekeeping on {scope} would split a core: housekeeping is whole cores",
                unit_words(unit, share)
            )
        };
        let hint = if below == above {
            "ask for fewer housekeeping CPUs, or drop --split-numa".to_string()
        } else {
            format!(
                "the nearest counts that keep whole cores there give it {} or {}",
                unit_words(unit, below),
                unit_words(unit, above)
            )
        };
        host_error(what, hint)
    };
    if !split {
        let all: Vec<&Core> = order.iter().flat_map(|(_, l)| l.iter().copied()).collect();
        let set =
            take_whole(&all, want, unit).map_err(|e| split_error(e, "this host".into(), want))?;
        why.push(format!(
            "housekeeping: {}, whole cores from the boot CPU's core on, node by node",
            unit_words(unit, want)
        ));
        return Ok(set);
    }
    let n = order.len();
    let mut set = CpuSet::new();
    let mut shares = Vec::new();
    for (i, (node, list)) in order.iter().enumerate() {
        let share = want / n + usize::from(i < want % n);
        let scope = node.map_or("the CPUs without a node".to_string(), |n| {
            format!("node {n}")
        });
        let part =
            take_whole(list, share, unit).map_err(|e| split_error(e, scope.clone(), share))?;
        set.union_with(&part);
        shares.push(format!("{scope}: {}", unit_words(unit, share)));
    }
    why.push(format!(
        "housekeeping: {} spread over the nodes ({})",
        unit_words(unit, want),
        shares.join(", ")
    ));
    Ok(set)
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

/// The split `req` asks for on `sys`. Refused (exit 125) when the sizes
/// leave no housekeeping or no latency CPU, or cannot be whole cores.
pub fn split(sys: &SystemState, req: &HostRequest) -> Result<HostSplit> {
    let smt = sys
        .online
        .iter()
        .any(|c| sys.core_of(c).intersection(&sys.online).len() > 1);
    let no_smt = req.no_smt && smt;
    let cores = cores(sys, no_smt);
    let boot_cpu = sys.online.first();
    let mut why = Vec::new();
    let already_offline = sys.present.difference(&sys.online);
    let smt_off: CpuSet = if no_smt {
        let kept: CpuSet = cores.iter().map(|c| c.cpus[0]).collect();
        why.push("nosmt: every core keeps its first CPU only".to_string());
        sys.online.difference(&kept)
    } else {
        if req.no_smt {
            why.push(
                "--no-smt: no core has two online CPUs here, nosmt would change nothing".into(),
            );
        }
        CpuSet::new()
    };
    let considered = sys.online.difference(&smt_off);
    let total = considered.len();
    if let HostSize::Running = req.size {
        let latency = sys.isolated.union(&sys.nohz_full).intersection(&sys.online);
        if latency.is_empty() {
            return Err(host_error(
                "the running kernel isolates no CPU (cpu/isolated and cpu/nohz_full are empty)"
                    .into(),
                "give the split to check: --housekeeping-count N or --latency-cores N".into(),
            ));
        }
        why.push("the running kernel's split: latency = cpu/isolated ∪ cpu/nohz_full".into());
        return Ok(HostSplit {
            housekeeping: considered.difference(&latency),
            latency,
            offline: CpuSet::new(),
            smt_off,
            already_offline,
            boot_cpu,
            why,
        });
    }
    let mut offline = req.offline as usize;
    if !already_offline.is_empty() {
        if req.verify {
            offline = offline.saturating_sub(already_offline.len());
            why.push(format!(
                "{} offline now: counted toward the {} offline CPUs asked for",
                cpus_phrase(&already_offline),
                req.offline
            ));
        } else {
            why.push(format!(
                "{} offline now: outside the split (the kernel removes an offline CPU's topology)",
                cpus_phrase(&already_offline)
            ));
        }
    }
    let (want, unit) = match req.size {
        HostSize::Housekeeping(n) => (n as usize, Unit::Cpus),
        HostSize::LatencyCores(n) => (cores.len().saturating_sub(n as usize), Unit::Cores),
        HostSize::Running => unreachable!("returned above"),
    };
    check_sizes(req, want, unit, total, cores.len(), offline)?;
    let order = housekeeping_order(&cores, boot_cpu);
    let housekeeping = choose_housekeeping(&order, want, unit, req.split_numa, &mut why)?;
    let off = choose_offline(&cores, &housekeeping, offline, &mut why);
    let latency = considered.difference(&housekeeping).difference(&off);
    why.extend(devices_without_latency(sys, &latency));
    Ok(HostSplit {
        housekeeping,
        latency,
        offline: off,
        smt_off,
        already_offline,
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
) -> Result<()> {
    let after = if req.no_smt { " with nosmt" } else { "" };
    if let HostSize::LatencyCores(n) = req.size
        && n as usize >= ncores
    {
        return Err(host_error(
            format!(
                "{n} latency cores leave no housekeeping core: this host has {ncores} cores online{after}"
            ),
            format!("--latency-cores takes 1 to {}", ncores.saturating_sub(1)),
        ));
    }
    let cpus = match unit {
        Unit::Cpus => want,
        Unit::Cores => 0,
    };
    if cpus >= total || cpus + offline >= total || offline >= total {
        return Err(host_error(
            format!(
                "{} housekeeping and {offline} offline CPUs leave no latency CPU: this host has {total} CPUs online{after}",
                unit_words(unit, want)
            ),
            format!(
                "housekeeping plus offline CPUs must be at most {}",
                total.saturating_sub(1)
            ),
        ));
    }
    Ok(())
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
            value: Some(format!("managed_irq,domain,{latency}")),
            purpose: "takes the latency CPUs out of the scheduler's load balancing (domain) and keeps managed IRQs off them where a housekeeping CPU can serve the queue (managed_irq)",
            parser: "housekeeping_isolcpus_setup(), kernel/sched/isolation.c",
            support: config_support(facts, "CPU_ISOLATION", None),
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
            "cpu/smt/control is '{other}': nosmt does nothing here; take the siblings offline instead"
        )),
        None => Support::No(
            "no cpu/smt/control: built without CONFIG_HOTPLUG_SMT, nosmt is ignored; take the siblings offline instead".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let s = split(&sys, &req(HostSize::Housekeeping(4))).unwrap();
        assert_eq!(s.housekeeping, cpus("0-1,8-9"));
        assert_eq!(s.latency, sys.online.difference(&s.housekeeping));
        let e = split(&sys, &req(HostSize::Housekeeping(3))).unwrap_err();
        assert!(e.to_string().contains("would split a core"), "{e}");
        assert!(
            e.hint.as_deref().unwrap_or("").contains("2 CPUs or 4 CPUs"),
            "{e:?}"
        );
    }

    /// 5 housekeeping cores over 2 nodes: 3 on node 0, 2 on node 1.
    #[test]
    fn split_numa_gives_the_first_nodes_the_remainder() {
        let sys = machine();
        let mut r = req(HostSize::LatencyCores(3));
        r.split_numa = true;
        let s = split(&sys, &r).unwrap();
        let on = |n: u32| s.housekeeping.intersection(&sys.nodes[&n].cpus).len();
        assert_eq!((on(0), on(1)), (6, 4));
        assert_eq!(s.latency.len(), 6);
    }

    /// Sizes that leave nothing are refused; --latency-cores counts cores.
    #[test]
    fn sizes_leaving_no_latency_cpu_are_refused() {
        let sys = machine();
        assert!(split(&sys, &req(HostSize::Housekeeping(16))).is_err());
        assert!(split(&sys, &req(HostSize::LatencyCores(8))).is_err());
        let s = split(&sys, &req(HostSize::LatencyCores(7))).unwrap();
        assert_eq!(s.housekeeping, cpus("0,8"));
        let mut r = req(HostSize::Housekeeping(2));
        r.offline = 14;
        assert!(split(&sys, &r).is_err());
    }

    /// nosmt: the second CPU of each core is off and counts for nothing.
    #[test]
    fn no_smt_keeps_each_cores_first_cpu() {
        let sys = machine();
        let mut r = req(HostSize::Housekeeping(3));
        r.no_smt = true;
        let s = split(&sys, &r).unwrap();
        assert_eq!(s.smt_off.len(), 8);
        assert_eq!(s.housekeeping.len(), 3);
        assert!(!s.housekeeping.intersects(&s.smt_off));
        assert_eq!(s.latency.len(), 5);
    }
}
