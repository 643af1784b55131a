//! Placement units and core types: choosing whole last-level caches, dies
//! and clusters (`--llc`, `--dies`, `--clusters`), packing `--cores`
//! compactly in the order node, package, die, LLC, cluster, core, and
//! the core types of hybrid CPUs (`--core-type`).
//!
//! The units are the kernel's CPU lists: `cpuN/topology/die_cpus_list`,
//! `cluster_cpus_list` (`Documentation/admin-guide/cputopology.rst`) and
//! the `shared_cpu_list` of the highest-level data or unified cache
//! (`Documentation/ABI/testing/sysfs-devices-system-cpu`,
//! `/sys/devices/system/cpu/cpuX/cache/index*`). The core types are the
//! hybrid PMUs' `/sys/devices/cpu_core/cpus` and `cpu_atom/cpus` on Intel,
//! else `cpu_capacity` (arm64, RISC-V: 1024 for the most capable CPU,
//! `drivers/base/arch_topology.c`, `topology_normalize_cpu_scale()`).

use crate::claim::Claims;
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::request::{CoreType, Unit};
use crate::system::SystemState;
use crate::words::cpus_phrase;
use std::collections::BTreeMap;

/// Where the core types of a machine come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeSource {
    /// Intel hybrid: `/sys/devices/cpu_core/cpus` and `cpu_atom/cpus`.
    Hybrid,
    /// `cpu_capacity`: performance cores are the most capable class of
    /// [`KindRanks`] (`high`: its lowest and highest capacity), efficiency
    /// cores the least capable (`low`); classes between are neither.
    Capacity {
        /// The capacities of the performance class (lowest, highest).
        high: (u32, u32),
        /// The capacities of the efficiency class (lowest, highest).
        low: (u32, u32),
    },
}

/// The core types of a hybrid machine ([`CoreTypes::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreTypes {
    /// The performance cores' CPUs.
    pub performance: CpuSet,
    /// The efficiency cores' CPUs.
    pub efficiency: CpuSet,
    /// Where they come from.
    pub source: TypeSource,
}

impl CoreTypes {
    /// The core types of `sys`'s online CPUs; `None` when the machine has
    /// one type: no hybrid PMU file and every known `cpu_capacity` equal
    /// (or none read).
    pub fn of(sys: &SystemState) -> Option<Self> {
        let h = &sys.hybrid;
        if h.core.is_some() || h.atom.is_some() {
            return Some(Self {
                performance: h.core.clone().unwrap_or_default().intersection(&sys.online),
                efficiency: h.atom.clone().unwrap_or_default().intersection(&sys.online),
                source: TypeSource::Hybrid,
            });
        }
        let ranks = KindRanks::of(sys);
        let last = *ranks.0.values().max()?;
        if last == 0 {
            return None;
        }
        let class = |r: u32| -> (CpuSet, (u32, u32)) {
            let caps: Vec<u32> = ranks
                .0
                .iter()
                .filter(|&(_, &k)| k == r)
                .map(|(&c, _)| c)
                .collect();
            let cpus = sys
                .cpus
                .values()
                .filter(|c| c.online && c.capacity.is_some_and(|cap| caps.contains(&cap)))
                .map(|c| c.id)
                .collect();
            (cpus, (caps[0], caps[caps.len() - 1]))
        };
        let (performance, high) = class(0);
        let (efficiency, low) = class(last);
        Some(Self {
            performance,
            efficiency,
            source: TypeSource::Capacity { high, low },
        })
    }

    /// The CPUs of type `t`.
    pub fn cpus(&self, t: CoreType) -> &CpuSet {
        match t {
            CoreType::Performance => &self.performance,
            CoreType::Efficiency => &self.efficiency,
        }
    }

    /// The kernel's name for type `t`: `cpu_core`, `cpu_atom`, or
    /// `cpu_capacity 1024`.
    pub fn kernel_name(&self, t: CoreType) -> String {
        match (self.source, t) {
            (TypeSource::Hybrid, CoreType::Performance) => "cpu_core".into(),
            (TypeSource::Hybrid, CoreType::Efficiency) => "cpu_atom".into(),
            (TypeSource::Capacity { high: (a, b), .. }, CoreType::Performance)
            | (TypeSource::Capacity { low: (a, b), .. }, CoreType::Efficiency) => {
                if a == b {
                    format!("cpu_capacity {a}")
                } else {
                    format!("cpu_capacity {a}-{b}")
                }
            }
        }
    }

    /// "performance cores (cpu_core): CPUs 0-7; efficiency cores
    /// (cpu_atom): CPUs 8-15", and the CPUs of neither type.
    pub fn describe(&self, online: &CpuSet) -> String {
        let mut s = [CoreType::Performance, CoreType::Efficiency]
            .map(|t| {
                format!(
                    "{} cores ({}): {}",
                    t.name(),
                    self.kernel_name(t),
                    crate::words::or_none(self.cpus(t))
                )
            })
            .join("; ");
        let other = online.difference(&self.performance.union(&self.efficiency));
        if !other.is_empty() {
            s.push_str(&format!("; neither: {}", cpus_phrase(&other)));
        }
        s
    }
}

/// The CPUs `cpu`'s core shares `unit` with, as the kernel lists them for
/// the core's lowest CPU (a unit holds whole cores; a launch reads the
/// units of those CPUs only: `system::Scope::units`).
pub fn unit_of_core(sys: &SystemState, cpu: u32, unit: Unit) -> Option<&CpuSet> {
    unit_of(sys, sys.core_of(cpu).first().unwrap_or(cpu), unit)
}

/// The CPUs `cpu` shares `unit` with, as the kernel lists them.
pub fn unit_of(sys: &SystemState, cpu: u32, unit: Unit) -> Option<&CpuSet> {
    let c = sys.cpus.get(&cpu)?;
    match unit {
        Unit::Die => c.die_cpus.as_ref(),
        Unit::Llc => c.llc.as_ref(),
        Unit::Cluster => c.cluster_cpus.as_ref(),
    }
}

/// `candidate` narrowed to core type `t`, with the reason; refused on a
/// machine with one core type, or when no candidate is of type `t`. With
/// `exact` (`--cpus`), every candidate must be of type `t`.
pub fn of_core_type(
    sys: &SystemState,
    candidate: &CpuSet,
    t: CoreType,
    exact: bool,
) -> Result<(CpuSet, String)> {
    let Some(types) = CoreTypes::of(sys) else {
        return Err(Error::new(
            ErrorCode::NoCoreTypes,
            format!(
                "--core-type {}: this machine has one core type (no /sys/devices/cpu_core/cpus or cpu_atom/cpus, and no cpu_capacity that differs between CPUs)",
                t.name()
            ),
        )
        .hint("leave out --core-type: every CPU here is of the same kind"));
    };
    let of_type = types.cpus(t);
    let kept = candidate.intersection(of_type);
    let others = candidate.difference(of_type);
    if kept.is_empty() || (exact && !others.is_empty()) {
        return Err(Error::new(
            ErrorCode::NoCpusOfCoreType,
            format!(
                "--core-type {}: {} {} not {} cores ({}); this machine's {}",
                t.name(),
                cpus_phrase(&others),
                if others.len() == 1 { "is" } else { "are" },
                t.name(),
                types.kernel_name(t),
                types.describe(&sys.online)
            ),
        )
        .hint(format!(
            "choose among the {} cores {} (pinrun --show lists the core types)",
            t.name(),
            crate::words::or_none(of_type)
        )));
    }
    Ok((
        kept.clone(),
        format!(
            "{} cores ({}): candidates {kept}",
            t.name(),
            types.kernel_name(t)
        ),
    ))
}

/// The capacity classes of the online CPUs, the most capable first:
/// `cpu_capacity` → class. A class starts at the highest capacity not yet
/// classed and takes every lower one that still "fits" it as the
/// scheduler's `fits_capacity()` margin counts (`kernel/sched/fair.c`:
/// `cap * 1280 < max * 1024` is too small), so that CPUs that differ only
/// by frequency binning (NVIDIA GB10's 1024, 1017 and 997) are one class,
/// while big and little cores (1024 and 280) are not.
#[derive(Debug, Clone, Default)]
pub struct KindRanks(BTreeMap<u32, u32>);

impl KindRanks {
    /// The classes of `sys`'s online CPUs' capacities.
    pub fn of(sys: &SystemState) -> Self {
        let mut caps: Vec<u32> = sys
            .cpus
            .values()
            .filter(|c| c.online)
            .filter_map(|c| c.capacity)
            .collect();
        caps.sort_unstable_by(|a, b| b.cmp(a));
        caps.dedup();
        let mut out = BTreeMap::new();
        let (mut rank, mut top) = (0, None);
        for c in caps {
            match top {
                Some(t) if u64::from(c) * 1280 >= u64::from(t) * 1024 => {}
                Some(_) => {
                    rank += 1;
                    top = Some(c);
                }
                None => top = Some(c),
            }
            out.insert(c, rank);
        }
        Self(out)
    }
}

/// Where a core or a unit sits, outermost first, each level keyed by the
/// lowest CPU of its CPU list (ids repeat across packages; the package
/// falls back to its id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    /// NUMA node.
    pub node: Option<u32>,
    /// Package (`package_cpus_list`).
    pub package: Option<u32>,
    /// Core type rank: 0 for performance cores and where no type is
    /// known; on Intel hybrids 1 for `cpu_atom`; by `cpu_capacity`, the
    /// rank of its capacity class ([`KindRanks`]).
    pub kind: u32,
    /// Die (`die_cpus_list`).
    pub die: Option<u32>,
    /// LLC.
    pub llc: Option<u32>,
    /// Cluster (`cluster_cpus_list`).
    pub cluster: Option<u32>,
    /// The number of CPUs of the cluster (0: unknown).
    pub cluster_size: usize,
    /// The lowest CPU.
    pub first: u32,
}

impl Place {
    /// The place of the core or unit whose lowest CPU is `first`;
    /// `ranks` is [`KindRanks::of`] `sys`.
    pub fn of(sys: &SystemState, ranks: &KindRanks, first: u32) -> Self {
        let c = sys.cpus.get(&first);
        let key = |s: Option<&CpuSet>| s.and_then(CpuSet::first);
        let kind = if sys.hybrid.atom.as_ref().is_some_and(|a| a.contains(first)) {
            1
        } else if sys.hybrid.core.is_some() {
            0
        } else {
            c.and_then(|c| c.capacity)
                .and_then(|cap| ranks.0.get(&cap).copied())
                .unwrap_or(0)
        };
        Place {
            node: c.and_then(|c| c.node),
            kind,
            package: c.and_then(|c| key(c.package_cpus.as_ref()).or(c.package)),
            die: c.and_then(|c| key(c.die_cpus.as_ref())),
            llc: c.and_then(|c| key(c.llc.as_ref())),
            cluster: c.and_then(|c| key(c.cluster_cpus.as_ref())),
            cluster_size: c
                .and_then(|c| c.cluster_cpus.as_ref())
                .map_or(0, CpuSet::len),
            first,
        }
    }

    /// The level `i` key: 0 core type, 1 die, 2 LLC, 3 cluster.
    fn inner(&self, i: usize) -> Option<u32> {
        [Some(self.kind), self.die, self.llc, self.cluster][i]
    }
}

/// The order cores and units are listed and chosen in: node, package,
/// lowest CPU (an unknown node or package last).
fn order(p: &Place) -> (u32, u32, u32) {
    (
        p.node.unwrap_or(u32::MAX),
        p.package.unwrap_or(u32::MAX),
        p.first,
    )
}

/// Orders `items` compactly and takes `n`: core types first (the most
/// capable filled first), then the lowest (node, package) that holds all
/// `n`, else the lowest node, else the lowest package, else everything in
/// (node, package, CPU) order; inside that, the lowest die, LLC and
/// cluster ([`pack_inner`]). The result is in (node, package, CPU) order.
pub fn choose_compact<T: Clone>(items: Vec<T>, n: usize, place: impl Fn(&T) -> Place) -> Vec<T> {
    let items: Vec<(Place, T)> = items.into_iter().map(|t| (place(&t), t)).collect();
    let mut chosen = compact_placed(items, n);
    chosen.sort_by_key(|(p, _)| order(p));
    chosen.into_iter().map(|(_, t)| t).collect()
}

/// [`choose_compact`] on placed items.
fn compact_placed<T: Clone>(mut items: Vec<(Place, T)>, n: usize) -> Vec<(Place, T)> {
    items.sort_by_key(|(p, _)| order(p));
    // Core types first, the most capable filled first: arm64 kernels that
    // give each cluster its own package id would otherwise pack into the
    // lowest package, the little cores.
    let best = items.iter().map(|(p, _)| p.kind).min().unwrap_or(0);
    let of_best = items.iter().filter(|(p, _)| p.kind == best).count();
    if of_best < items.len() {
        let (first, rest): (Vec<_>, Vec<_>) = items.into_iter().partition(|(p, _)| p.kind == best);
        if of_best >= n {
            items = first;
        } else {
            let mut all = first;
            all.extend(compact_placed(rest, n - of_best));
            return all;
        }
    }
    type Outer = fn(&Place) -> (Option<u32>, Option<u32>);
    let levels: [Outer; 3] = [
        |p| (p.node, p.package),
        |p| (p.node, None),
        |p| (None, p.package),
    ];
    let mut inside = None;
    for group in levels {
        let mut counts: BTreeMap<_, usize> = BTreeMap::new();
        for (p, _) in &items {
            *counts.entry(group(p)).or_default() += 1;
        }
        // The lowest group in (node, package) order, as the items are sorted.
        if let Some(target) = items.iter().map(|(p, _)| group(p)).find(|g| counts[g] >= n) {
            inside = Some(
                items
                    .iter()
                    .filter(|(p, _)| group(p) == target)
                    .cloned()
                    .collect(),
            );
            break;
        }
    }
    pack_inner(inside.unwrap_or(items), n, 0)
}

/// Takes `n` of `items` (sorted) packed by core type, die, LLC and
/// cluster from level `level` (0 core type, 1 die, 2 LLC, 3 cluster): core
/// types filled the most capable first; at the other levels the lowest
/// group that holds all `n`, else the fewest groups (the largest first,
/// then the lowest); each filled the same way one level down; clusters
/// only when all are of one size.
fn pack_inner<T: Clone>(items: Vec<(Place, T)>, n: usize, level: usize) -> Vec<(Place, T)> {
    if level == 4 || items.len() <= n {
        return items.into_iter().take(n).collect();
    }
    // Clusters of different sizes are cores of different kinds (Intel
    // hybrids: one P-core per cluster, E-cores by four sharing an L2):
    // packing into the one that holds n would move the choice onto the
    // efficiency cores, so the cluster level counts only where every
    // cluster is alike (Kunpeng 920: 4 cores each).
    if level == 2
        && items
            .iter()
            .any(|(p, _)| p.cluster_size != items[0].0.cluster_size)
    {
        return items.into_iter().take(n).collect();
    }
    type Group<T> = (Option<u32>, Vec<(Place, T)>);
    let mut groups: Vec<Group<T>> = Vec::new();
    for it in items {
        let k = it.0.inner(level);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(it),
            None => groups.push((k, vec![it])),
        }
    }
    // Core types: filled the most capable first, whatever their CPU
    // numbers and sizes (never a whole efficiency group over performance
    // cores that hold some).
    if level == 0 {
        groups.sort_by_key(|(k, _)| *k);
    } else if let Some(i) = groups.iter().position(|(_, v)| v.len() >= n) {
        let (_, v) = groups.swap_remove(i);
        return pack_inner(v, n, level + 1);
    }
    // Largest first (core types: most capable first); the sort is
    // stable, so equal sizes keep their order.
    if level > 0 {
        groups.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    }
    let mut out = Vec::new();
    for (_, v) in groups {
        let want = n - out.len();
        if want == 0 {
            break;
        }
        out.extend(pack_inner(v, want, level + 1));
    }
    out
}

/// The distinct `unit` groups of the chosen CPUs (`cpus`), for the plan's
/// reasons: "inside one LLC (CPUs 0-7)" or "over 2 LLCs (CPUs 0-7,
/// 8-15)"; `None` when the kernel does not list the unit for them.
pub fn spread(sys: &SystemState, cpus: &CpuSet, unit: Unit) -> Option<String> {
    let mut groups: Vec<&CpuSet> = Vec::new();
    for c in cpus.iter() {
        let g = unit_of_core(sys, c, unit)?;
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let lists: Vec<String> = groups.iter().map(|g| g.to_compact_list()).collect();
    Some(match groups.len() {
        0 => return None,
        1 => format!("inside one {} (CPUs {})", unit.name(), lists[0]),
        k => format!("over {k} {}s (CPUs {})", unit.name(), lists.join(" | ")),
    })
}

/// Chooses `n` whole `unit` groups among the `candidate` CPUs: a group is
/// whole when all its online CPUs are candidates and none is claimed.
/// Returns their CPUs and the reasons. Refused when the kernel lists the
/// unit for none of the candidates, or fewer than `n` are whole and free.
pub fn choose_units(
    sys: &SystemState,
    candidate: &CpuSet,
    unit: Unit,
    n: usize,
    claims: &Claims,
) -> Result<(CpuSet, Vec<String>)> {
    let opt = unit.option();
    let mut groups: Vec<CpuSet> = Vec::new();
    let mut unknown = CpuSet::new();
    for c in candidate.iter() {
        match unit_of_core(sys, c, unit) {
            Some(g) => {
                let g = g.intersection(&sys.online);
                if !groups.contains(&g) {
                    groups.push(g);
                }
            }
            None => {
                unknown.insert(c);
            }
        }
    }
    if groups.is_empty() {
        return Err(Error::new(
            ErrorCode::UnitUnavailable,
            format!(
                "{opt} {n}: the kernel lists no {} for the candidates {candidate} (no cpuN/{})",
                unit.name(),
                unit.file()
            ),
        )
        .hint(match unit {
            Unit::Llc => "choose by --node or --cores: this kernel or dump has no cache directory",
            Unit::Die | Unit::Cluster => "choose by --llc, --node or --cores: this kernel or CPU exposes no such unit (die_cpus_list is Linux 5.2+, cluster_cpus_list 5.16+)",
        }));
    }
    let claimed = claims.cpus();
    let (whole, partial): (Vec<CpuSet>, Vec<CpuSet>) =
        groups.into_iter().partition(|g| g.is_subset(candidate));
    let (free, taken): (Vec<CpuSet>, Vec<CpuSet>) =
        whole.into_iter().partition(|g| !g.intersects(&claimed));
    if free.len() < n {
        let mut msg = format!(
            "{opt} {n}: only {} whole {} available in the candidates {candidate}",
            free.len(),
            plural(unit, free.len())
        );
        if !partial.is_empty() {
            msg.push_str(&format!(
                "; {} more {} CPUs outside them ({})",
                partial.len(),
                if partial.len() == 1 { "has" } else { "have" },
                lists(&partial)
            ));
        }
        if !taken.is_empty() {
            msg.push_str(&format!(
                "; {} claimed ({})",
                lists(&taken),
                claims.describe(&taken.iter().fold(CpuSet::new(), |a, g| a.union(g)))
            ));
        }
        return Err(Error::new(ErrorCode::NotEnoughUnits, msg).hint(format!(
            "ask for fewer, or widen the candidates (--node, the cgroup cpuset); pinrun --show lists the {}s",
            unit.name()
        )));
    }
    let total = free.len();
    let ranks = KindRanks::of(sys);
    let chosen = choose_compact(free, n, |g| {
        Place::of(sys, &ranks, g.first().unwrap_or_default())
    });
    let cpus = chosen.iter().fold(CpuSet::new(), |a, g| a.union(g));
    let mut reasons = vec![format!(
        "{total} whole {} available; chose {n} compactly (lowest node, then package, then die): {}",
        plural(unit, total),
        lists(&chosen)
    )];
    if !partial.is_empty() {
        reasons.push(format!(
            "skipped {} {} with CPUs outside the candidates",
            partial.len(),
            plural(unit, partial.len())
        ));
    }
    if !taken.is_empty() {
        reasons.push(format!(
            "skipped claimed {}: {}",
            plural(unit, taken.len()),
            lists(&taken)
        ));
    }
    if !unknown.is_empty() {
        reasons.push(format!(
            "{} {} no {} (no cpuN/{}): not chosen",
            cpus_phrase(&unknown),
            if unknown.len() == 1 { "has" } else { "have" },
            unit.name(),
            unit.file()
        ));
    }
    Ok((cpus, reasons))
}

/// "LLC" / "LLCs".
fn plural(unit: Unit, k: usize) -> String {
    crate::words::noun(k, unit.name())
}

/// Groups as "0-7 | 8-15".
fn lists(groups: &[CpuSet]) -> String {
    groups
        .iter()
        .map(CpuSet::to_compact_list)
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, plan_claimed};
    use crate::testkit::{Machine, cpus, kubelet, request};

    /// One package of 8 cores × 2 threads (CPU c's sibling is c + 8),
    /// split in two LLCs of 4 cores (an AMD CCX pair): 0-3,8-11 and
    /// 4-7,12-15.
    fn ccx() -> Machine {
        Machine::new(1, 8, 2).llc(&["0-3,8-11", "4-7,12-15"])
    }

    fn chosen(sys: &SystemState, args: &[&str]) -> CpuSet {
        let args: Vec<&str> = ["--dry-run"].iter().chain(args).copied().collect();
        plan(sys, &request(&args)).unwrap().cpus.unwrap()
    }

    fn refused(sys: &SystemState, args: &[&str]) -> ErrorCode {
        let args: Vec<&str> = ["--dry-run"].iter().chain(args).copied().collect();
        plan(sys, &request(&args)).unwrap_err().code
    }

    #[test]
    fn cores_stay_inside_one_llc_when_it_holds_them() {
        let sys = ccx().build();
        assert_eq!(chosen(&sys, &["--cores", "4"]), cpus("0-3"));
        // The lowest LLC has 3 free cores (CPU 1's core is claimed): three
        // would fit there, four go to the other LLC whole, not 0,2,3,4.
        let claims = kubelet("1,9");
        let p = |n: &str| {
            plan_claimed(&sys, &request(&["--dry-run", "--cores", n]), &claims)
                .unwrap()
                .cpus
                .unwrap()
        };
        assert_eq!(p("3"), cpus("0,2-3"));
        assert_eq!(p("4"), cpus("4-7"));
        // Five: the fewest LLCs (two), the fuller one whole.
        assert_eq!(p("5"), cpus("0,4-7"));
    }

    #[test]
    fn the_plan_says_how_many_llcs() {
        let sys = ccx().build();
        let why = |n: &str| {
            plan(&sys, &request(&["--dry-run", "--cores", n]))
                .unwrap()
                .reasons
        };
        assert!(
            why("2")
                .iter()
                .any(|r| r.ends_with("inside one LLC (CPUs 0-3,8-11)"))
        );
        assert!(
            why("6")
                .iter()
                .any(|r| r.contains("over 2 LLCs (CPUs 0-3,8-11 | 4-7,12-15)"))
        );
    }

    #[test]
    fn whole_llcs_skip_cut_and_claimed_ones() {
        let sys = ccx().build();
        assert_eq!(chosen(&sys, &["--llc", "1"]), cpus("0-3,8-11"));
        assert_eq!(chosen(&sys, &["--llc", "2"]), cpus("0-15"));
        assert_eq!(chosen(&sys, &["--llc", "1", "--cores", "2"]), cpus("0-1"));
        let claims = kubelet("2");
        let p = plan_claimed(&sys, &request(&["--dry-run", "--llc", "1"]), &claims).unwrap();
        assert_eq!(p.cpus, Some(cpus("4-7,12-15")));
        let cut = ccx().allowed("0-14").build();
        assert_eq!(chosen(&cut, &["--llc", "1"]), cpus("0-3,8-11"));
        assert_eq!(refused(&cut, &["--llc", "2"]), ErrorCode::NotEnoughUnits);
    }

    #[test]
    fn units_the_kernel_does_not_list_are_refused() {
        let sys = ccx().build();
        assert_eq!(
            refused(&sys, &["--clusters", "1"]),
            ErrorCode::UnitUnavailable
        );
        let mut flat = ccx().build();
        for c in flat.cpus.values_mut() {
            c.llc = None;
        }
        assert_eq!(refused(&flat, &["--llc", "1"]), ErrorCode::UnitUnavailable);
        // Without LLCs, --cores packs by CPU as before.
        assert_eq!(chosen(&flat, &["--cores", "5"]), cpus("0-4"));
        let sys = ccx()
            .clusters(&["0-1,8-9", "2-3,10-11", "4-5,12-13", "6-7,14-15"])
            .build();
        assert_eq!(chosen(&sys, &["--clusters", "1"]), cpus("0-1,8-9"));
        // Two dies per package: testkit's die is the package.
        assert_eq!(chosen(&sys, &["--dies", "1"]), cpus("0-15"));
    }

    /// Clusters of one size pack (Kunpeng); of different sizes (an Intel
    /// hybrid: P-cores alone, E-cores by four) they do not, so --cores 2
    /// stays on the lowest cores instead of moving to the E-core quad.
    #[test]
    fn clusters_pack_only_when_alike() {
        let alike = Machine::new(1, 8, 1).clusters(&["0-3", "4-7"]).build();
        let claims = kubelet("1");
        let p = plan_claimed(&alike, &request(&["--dry-run", "--cores", "4"]), &claims).unwrap();
        assert_eq!(p.cpus, Some(cpus("4-7")));
        let hybrid = Machine::new(1, 8, 1)
            .clusters(&["0", "1", "2", "3", "4-7"])
            .build();
        assert_eq!(chosen(&hybrid, &["--cores", "2"]), cpus("0-1"));
    }

    /// A core whose node or package the kernel does not name is chosen
    /// last: the group that holds the cores is the lowest in the order they
    /// are sorted in (unknown last), not an unknown group first.
    #[test]
    fn unknown_node_and_package_come_last() {
        let mut sys = Machine::new(2, 2, 1).build();
        for id in [0, 1] {
            let c = sys.cpus.get_mut(&id).unwrap();
            c.node = None;
            c.package = None;
            c.package_cpus = None;
        }
        assert_eq!(chosen(&sys, &["--cores", "2"]), cpus("2-3"));
    }

    /// --cores packs performance cores first: a Pixel-6-like 2 big, 2
    /// middle, 4 little with an LLC per tier takes the big and middle
    /// cores for 4 (not the one LLC of the little ones), an M1-like 2
    /// efficiency + 6 performance takes performance cores; capacities
    /// within the scheduler's fits_capacity() margin (GB10's 1024, 1017,
    /// 997) are one class, packed by LLC.
    #[test]
    fn cores_prefer_the_most_capable_type() {
        let pixel = Machine::new(1, 8, 1)
            .llc(&["0-1", "2-3", "4-7"])
            .capacity("0-1", 1024)
            .capacity("2-3", 820)
            .capacity("4-7", 280)
            .build();
        assert_eq!(chosen(&pixel, &["--cores", "4"]), cpus("0-3"));
        assert_eq!(chosen(&pixel, &["--cores", "2"]), cpus("0-1"));
        let m1 = Machine::new(1, 8, 1)
            .llc(&["0-1", "2-7"])
            .capacity("0-1", 485)
            .capacity("2-7", 1024)
            .build();
        assert_eq!(chosen(&m1, &["--cores", "4"]), cpus("2-5"));
        let hybrid = Machine::new(1, 8, 1).hybrid("4-7", "0-3").build();
        assert_eq!(chosen(&hybrid, &["--cores", "2"]), cpus("4-5"));
        let gb10 = Machine::new(1, 8, 1)
            .llc(&["0-3", "4-7"])
            .capacity("0-1,4-5", 718)
            .capacity("2", 997)
            .capacity("6", 1017)
            .capacity("3,7", 1024)
            .build();
        assert_eq!(chosen(&gb10, &["--cores", "2"]), cpus("2-3"));
    }

    #[test]
    fn core_types_from_pmus_and_capacity() {
        let hybrid = Machine::new(1, 8, 1).hybrid("0-3", "4-7").build();
        assert_eq!(chosen(&hybrid, &["--core-type", "efficiency"]), cpus("4-7"));
        assert_eq!(
            chosen(&hybrid, &["--core-type", "performance", "--cores", "2"]),
            cpus("0-1")
        );
        assert_eq!(
            refused(&hybrid, &["--core-type", "efficiency", "--cpus", "3-4"]),
            ErrorCode::NoCpusOfCoreType
        );
        // Three tiers: the most capable class is performance (855 is
        // within fits_capacity()'s margin of 1024), the least efficiency;
        // a middle class (600) is neither.
        let arm = Machine::new(1, 8, 1)
            .capacity("0-2", 280)
            .capacity("3", 600)
            .capacity("4-6", 855)
            .capacity("7", 1024)
            .build();
        let t = CoreTypes::of(&arm).unwrap();
        assert_eq!(
            (t.performance.clone(), t.efficiency.clone()),
            (cpus("4-7"), cpus("0-2"))
        );
        assert_eq!(
            t.kernel_name(CoreType::Performance),
            "cpu_capacity 855-1024"
        );
        assert_eq!(t.kernel_name(CoreType::Efficiency), "cpu_capacity 280");
        let same = Machine::new(1, 4, 1).capacity("0-3", 1024).build();
        assert_eq!(
            refused(&same, &["--core-type", "performance"]),
            ErrorCode::NoCoreTypes
        );
        assert_eq!(
            refused(
                &Machine::new(1, 4, 1).build(),
                &["--core-type", "efficiency"]
            ),
            ErrorCode::NoCoreTypes
        );
    }
}
