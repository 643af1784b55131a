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
    /// `cpu_capacity`: performance cores have the highest (`high`),
    /// efficiency cores the lowest (`low`); CPUs between are neither.
    Capacity {
        /// The highest capacity of the online CPUs.
        high: u32,
        /// The lowest capacity of the online CPUs.
        low: u32,
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
        let caps: BTreeMap<u32, u32> = sys
            .cpus
            .values()
            .filter(|c| c.online)
            .filter_map(|c| Some((c.id, c.capacity?)))
            .collect();
        let high = *caps.values().max()?;
        let low = *caps.values().min()?;
        if high == low {
            return None;
        }
        let with = |v: u32| {
            caps.iter()
                .filter(|&(_, &c)| c == v)
                .map(|(&id, _)| id)
                .collect()
        };
        Some(Self {
            performance: with(high),
            efficiency: with(low),
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
            (TypeSource::Capacity { high, .. }, CoreType::Performance) => {
                format!("cpu_capacity {high}")
            }
            (TypeSource::Capacity { low, .. }, CoreType::Efficiency) => {
                format!("cpu_capacity {low}")
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

/// Where a core or a unit sits, outermost first, each level keyed by the
/// lowest CPU of its CPU list (ids repeat across packages; the package
/// falls back to its id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    /// NUMA node.
    pub node: Option<u32>,
    /// Package (`package_cpus_list`).
    pub package: Option<u32>,
    /// Die (`die_cpus_list`).
    pub die: Option<u32>,
    /// LLC.
    pub llc: Option<u32>,
    /// Cluster (`cluster_cpus_list`).
    pub cluster: Option<u32>,
    /// The lowest CPU.
    pub first: u32,
}

impl Place {
    /// The place of the core or unit whose lowest CPU is `first`.
    pub fn of(sys: &SystemState, first: u32) -> Self {
        let c = sys.cpus.get(&first);
        let key = |s: Option<&CpuSet>| s.and_then(CpuSet::first);
        Place {
            node: c.and_then(|c| c.node),
            package: c.and_then(|c| key(c.package_cpus.as_ref()).or(c.package)),
            die: c.and_then(|c| key(c.die_cpus.as_ref())),
            llc: c.and_then(|c| key(c.llc.as_ref())),
            cluster: c.and_then(|c| key(c.cluster_cpus.as_ref())),
            first,
        }
    }

    /// The level `i` key: 0 die, 1 LLC, 2 cluster.
    fn inner(&self, i: usize) -> Option<u32> {
        [self.die, self.llc, self.cluster][i]
    }
}

/// Orders `items` compactly and takes `n`: the lowest (node, package)
/// that holds all `n`, else the lowest node, else the lowest package,
/// else everything in (node, package, CPU) order; inside that, the lowest
/// die that holds them, then LLC, then cluster ([`pack_inner`]). The
/// result is in (node, package, CPU) order.
pub fn choose_compact<T: Clone>(items: Vec<T>, n: usize, place: impl Fn(&T) -> Place) -> Vec<T> {
    let order = |p: &Place| {
        (
            p.node.unwrap_or(u32::MAX),
            p.package.unwrap_or(u32::MAX),
            p.first,
        )
    };
    let mut items: Vec<(Place, T)> = items.into_iter().map(|t| (place(&t), t)).collect();
    items.sort_by_key(|(p, _)| order(p));
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
    let mut chosen = pack_inner(inside.unwrap_or(items), n, 0);
    chosen.sort_by_key(|(p, _)| order(p));
    chosen.into_iter().map(|(_, t)| t).collect()
}

/// Takes `n` of `items` (sorted) packed by die, LLC and cluster from
/// level `level` (0 die, 1 LLC, 2 cluster): the lowest group of the level
/// that holds all `n`, else the fewest groups (the largest first, then the
/// lowest), each filled the same way one level down.
fn pack_inner<T: Clone>(items: Vec<(Place, T)>, n: usize, level: usize) -> Vec<(Place, T)> {
    if level == 3 || items.len() <= n {
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
    if let Some(i) = groups.iter().position(|(_, v)| v.len() >= n) {
        let (_, v) = groups.swap_remove(i);
        return pack_inner(v, n, level + 1);
    }
    // Largest first; the sort is stable, so equal sizes keep their order.
    groups.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
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
        let g = unit_of(sys, c, unit)?;
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
        match unit_of(sys, c, unit) {
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
    let chosen = choose_compact(free, n, |g| Place::of(sys, g.first().unwrap_or_default()));
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
    format!("{}{}", unit.name(), if k == 1 { "" } else { "s" })
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
    use crate::claim::{Claim, Holder};
    use crate::plan::{plan, plan_claimed};
    use crate::testkit::{Machine, cpus, request};

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

    fn kubelet(list: &str) -> Claims {
        Claims {
            claims: vec![Claim {
                holder: Holder::Kubelet {
                    pod: "p".into(),
                    container: "c".into(),
                },
                cpus: cpus(list),
            }],
            ..Default::default()
        }
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
        // Three tiers: the highest is performance, the lowest efficiency.
        let arm = Machine::new(1, 8, 1)
            .capacity("0-3", 280)
            .capacity("4-6", 855)
            .capacity("7", 1024)
            .build();
        let t = CoreTypes::of(&arm).unwrap();
        assert_eq!(
            (t.performance.clone(), t.efficiency.clone()),
            (cpus("7"), cpus("0-3"))
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
