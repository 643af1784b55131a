//! Choosing cores by what the checks know (issue 31): with latency intent
//! ([`crate::request::Request::latency_intent`]) the quietest whole cores,
//! without it the housekeeping cores first. pinrun(1) CHOOSING CORES
//! states the rule; this module is its one home.
//!
//! A core is ranked by all its threads (an SMT sibling shares the core's
//! pipeline, so its interrupts and tick disturb the other thread), the
//! lowest key first:
//!
//! 1. named for housekeeping: a thread is the boot CPU (CPU 0, which keeps
//!    the kernel's housekeeping; before Linux 6.5 `tick_nohz_init()` in
//!    `kernel/time/tick-sched.c` also clears it from `nohz_full=`; the
//!    last of all), or is in `irqaffinity=`, a
//!    `/proc/irq/default_smp_affinity` narrower than the online CPUs, the
//!    affinity of PID 1 narrower than them (systemd's `CPUAffinity=`), or
//!    outside a non-empty `nohz_full` set;
//! 2. threads not domain-isolated (`cpu/isolated`, cgroup v2 isolated
//!    partitions), then not nohz_full (`cpu/nohz_full`; under `nohz=off`
//!    no CPU is, for its tick: `setup_tick_nohz()` clears
//!    `tick_nohz_enabled` and `tick_nohz_activate()`,
//!    kernel/time/tick-sched.c, then never lets a tick stop, while
//!    `cpu/nohz_full` still lists the CPUs; the `not-nohz-full` check
//!    reads the same), then not in `rcu_nocbs=` (with `nohz_full`, as
//!    `rcu_init_nohz()` adds it, `nohz=off` or not);
//! 3. a device IRQ routed to a thread (effective affinity, else
//!    `smp_affinity_list`, else where its counts show it fired;
//!    `Documentation/core-api/irq/irq-affinity.rst`);
//! 4. the interrupts those IRQs delivered there, by order of magnitude
//!    (decimal digits: 3 and 5 interrupts since boot are a tie).
//!
//! Cores of equal key are chosen compactly ([`super::units::choose_compact`]),
//! near the cores already taken; within a core without `--smt`, the
//! thread of the lowest key (the lowest-numbered on a tie). `--choose
//! measured` ranks by the worst gap the probe measured first
//! ([`Rule::Measured`]).

use super::CoreChoice;
use super::units::{self, KindRanks, Place};
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode};
use crate::system::SystemState;
use crate::words::cpus_phrase;
use std::collections::BTreeMap;

/// Which rule chose the CPUs (the plan's `choice.rule` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `--cpus`: the CPUs named.
    Named,
    /// Latency intent: the quietest whole cores.
    Quietest,
    /// No latency intent: housekeeping CPUs first, compactly.
    HousekeepingFirst,
    /// Every candidate CPU (no `--cores`): a node, a unit, the allowed set.
    Candidates,
    /// `--choose measured`: the smallest worst gap the probe measured,
    /// then [`Rule::Quietest`].
    Measured,
}

impl Rule {
    /// The JSON name: `named`, `quietest`, `housekeeping-first`,
    /// `candidates`, `measured`.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Named => "named",
            Rule::Quietest => "quietest",
            Rule::HousekeepingFirst => "housekeeping-first",
            Rule::Candidates => "candidates",
            Rule::Measured => "measured",
        }
    }
}

/// The intent read from the request and the rule that chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The options that carry latency intent (empty: none).
    pub intent: Vec<&'static str>,
    /// The rule.
    pub rule: Rule,
    /// What the compact, lowest-numbered rule alone (taskset's and
    /// kubelet's habit, pinrun's before issue 31) would have chosen, when
    /// it differs from the choice: the launch then says so.
    pub compact: Option<CpuSet>,
    /// `--choose measured`: the worst gap measured on each probed CPU, ns.
    pub measured: Option<BTreeMap<u32, u64>>,
}

/// What the rule knows of each CPU, read from [`SystemState`].
pub struct Facts {
    /// CPUs the host names for housekeeping.
    pub housekeeping: CpuSet,
    /// Whether CPU 0, the boot CPU, is online (it is taken after every
    /// other CPU named for housekeeping).
    boot: bool,
    /// Why [`Facts::housekeeping`] holds its CPUs, one phrase per source.
    pub housekeeping_why: Vec<String>,
    /// Domain-isolated CPUs.
    isolated: CpuSet,
    /// nohz_full CPUs.
    nohz_full: CpuSet,
    /// The nohz_full CPUs whose tick can stop: none under `nohz=off`.
    tickless: CpuSet,
    /// CPUs whose RCU callbacks are offloaded.
    nocbs: CpuSet,
    /// Per CPU: (device IRQs routed there, their interrupts there).
    irqs: BTreeMap<u32, (u32, u64)>,
    /// `--choose measured`: the worst gap measured per CPU, ns.
    measured: BTreeMap<u32, u64>,
    /// The smallest of `measured` (CPUs held off, `u64::MAX`, left
    /// out), at least 1 ns: the gap every other is a multiple of.
    quietest: u64,
}

/// The ranking key of one CPU or core (see the module's list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
struct Key {
    /// 2: the boot CPU; 1: another CPU named for housekeeping; 0: none.
    named: u8,
    /// Threads not domain-isolated, per mille of the threads.
    not_isolated: usize,
    not_nohz: usize,
    not_nocbs: usize,
    irq_routed: bool,
    magnitude: u32,
}

/// A core's rank: the worst gap measured on its threads used
/// (`--choose measured`, else 0), then the key of all its threads and of
/// those used (with, for housekeeping-first, how many of them are
/// isolated or nohz_full).
type CoreKey = (u64, [(Key, usize); 2]);

/// Decimal digits of `n` (0 for 0).
fn magnitude(n: u64) -> u32 {
    if n == 0 { 0 } else { n.ilog10() + 1 }
}

impl Facts {
    /// The facts of `candidates` on `sys` (IRQs counted on them only).
    pub fn of(sys: &SystemState, candidates: &CpuSet) -> Self {
        let (housekeeping, housekeeping_why) = named_housekeeping(sys, candidates);
        let nocbs = sys.boot.rcu_nocbs_asked(&sys.nohz_full);
        let reach = sys.online.intersection(candidates);
        let mut irqs: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
        for irq in sys.irqs.list.iter().filter(|i| !i.is_per_cpu()) {
            let aff = irq.delivered();
            if !aff.intersects(&reach) {
                continue;
            }
            for c in aff.intersection(&reach).iter() {
                let e = irqs.entry(c).or_default();
                e.0 += 1;
            }
            for &(c, n) in &irq.counts {
                if aff.contains(c) && reach.contains(c) {
                    let e = irqs.entry(c).or_default();
                    e.1 = e.1.saturating_add(n);
                }
            }
        }
        Facts {
            boot: sys.online.contains(0),
            housekeeping,
            housekeeping_why,
            isolated: sys.isolated.clone(),
            nohz_full: sys.nohz_full.clone(),
            tickless: if sys.boot.nohz == Some(false) {
                CpuSet::new()
            } else {
                sys.nohz_full.clone()
            },
            nocbs,
            irqs,
            quietest: sys
                .measured
                .iter()
                .flatten()
                .map(|(_, &ns)| ns)
                .filter(|&ns| ns != u64::MAX)
                .min()
                .unwrap_or(1)
                .max(1),
            measured: sys.measured.clone().unwrap_or_default(),
        }
    }

    /// The class of the largest worst gap measured on `cpus`, against
    /// the quietest CPU measured: the bit length of their whole ratio, so
    /// that a gap within a factor of two of the quietest ties with it
    /// (class 1), from two to four times it is class 2, and so on, and the
    /// rule decides within a class (a short measurement's worst gap is
    /// noisy: 7 ms against 12 ms on two idle CPUs of this machine). Classes
    /// are relative, not fixed powers of two: 12.7 and 20.0 ms tie
    /// although 2^24 ns lies between them. A CPU not measured is last.
    fn worst_gap(&self, cpus: &CpuSet) -> u64 {
        cpus.iter()
            .map(|c| match self.measured.get(&c) {
                None | Some(&u64::MAX) => u64::MAX,
                Some(&ns) => u64::from(u64::BITS - (ns / self.quietest).leading_zeros()),
            })
            .max()
            .unwrap_or(u64::MAX)
    }

    /// The key of the CPUs `cpus` (a core's threads, or one CPU).
    fn key(&self, cpus: &CpuSet) -> Key {
        let mut k = Key::default();
        let (mut routed, mut interrupts) = (0u32, 0u64);
        let n = cpus.len().max(1);
        for c in cpus.iter() {
            let named = if c == 0 && self.boot {
                2
            } else {
                u8::from(self.housekeeping.contains(c))
            };
            k.named = k.named.max(named);
            k.not_isolated += usize::from(!self.isolated.contains(c));
            k.not_nohz += usize::from(!self.tickless.contains(c));
            k.not_nocbs += usize::from(!self.nocbs.contains(c));
            if let Some(&(r, n)) = self.irqs.get(&c) {
                routed += r;
                interrupts = interrupts.saturating_add(n);
            }
        }
        // As shares of the threads (per mille): a core of two threads is
        // not worse than a core of one for having two.
        for f in [&mut k.not_isolated, &mut k.not_nohz, &mut k.not_nocbs] {
            *f = *f * 1000 / n;
        }
        k.irq_routed = routed > 0;
        k.magnitude = magnitude(interrupts);
        k
    }

    /// The key of no-intent choosing: how many of `cpus` are isolated or
    /// nohz_full (the fewest first).
    fn isolated_count(&self, cpus: &CpuSet) -> usize {
        cpus.iter()
            .filter(|&c| self.isolated.contains(c) || self.nohz_full.contains(c))
            .count()
    }

    /// "CPU 1: isolated, nohz_full, no device IRQ" and the like: what the
    /// rule saw of `cpus`, for the plan's reasons.
    fn describe(&self, cpus: &CpuSet) -> String {
        let k = self.key(cpus);
        let n = cpus.len();
        let missing = |set: &CpuSet| cpus.iter().filter(|&c| !set.contains(c)).count();
        let mut parts = Vec::new();
        if k.named > 0 {
            parts.push("named for housekeeping".to_string());
        }
        let of = |missing: usize, what: &str| match missing {
            0 => what.to_string(),
            m if m == n => format!("not {what}"),
            m => format!("{} of {n} threads {what}", n - m),
        };
        parts.push(of(missing(&self.isolated), "isolated"));
        let nohz_full = if self.tickless.is_empty() && !self.nohz_full.is_empty() {
            "nohz_full (its tick kept: nohz=off)"
        } else {
            "nohz_full"
        };
        parts.push(of(missing(&self.nohz_full), nohz_full));
        if missing(&self.nocbs) != n {
            parts.push(of(missing(&self.nocbs), "rcu_nocbs"));
        }
        // The IRQs, not their counts: a plan read from a dump of this
        // moment reads the same (the counts only rank).
        let routed: u32 = cpus
            .iter()
            .filter_map(|c| self.irqs.get(&c))
            .map(|&(r, _)| r)
            .sum();
        parts.push(match routed {
            0 => "no device IRQ".to_string(),
            r => format!(
                "{} routed there",
                crate::words::count(r as usize, "device IRQ")
            ),
        });
        format!("{}: {}", cpus_phrase(cpus), parts.join(", "))
    }
}

/// The CPUs the host names for housekeeping (see the module's list), and
/// why, one phrase per source that names any of `candidates` not named
/// by an earlier source.
pub fn named_housekeeping(sys: &SystemState, candidates: &CpuSet) -> (CpuSet, Vec<String>) {
    let online = &sys.online;
    let mut set = CpuSet::new();
    let mut why = Vec::new();
    // Each source's candidates not named by an earlier one.
    let mut add = |cpus: CpuSet, what: String| {
        let cpus = cpus.intersection(online);
        let new = cpus.intersection(candidates).difference(&set);
        if !new.is_empty() {
            why.push(format!("{} ({what})", cpus_phrase(&new)));
        }
        set.union_with(&cpus);
    };
    if online.contains(0) {
        add(std::iter::once(0).collect(), "the boot CPU".into());
    }
    if let Some(a) = &sys.boot.irqaffinity {
        add(a.clone(), "irqaffinity=".into());
    }
    let narrower = |s: &CpuSet| {
        let on = s.intersection(online);
        !on.is_empty() && on != *online
    };
    if let Some(d) = sys.irqs.default_affinity.as_ref().filter(|d| narrower(d)) {
        add(d.clone(), "/proc/irq/default_smp_affinity".into());
    }
    if let Some(a) = sys
        .process
        .init_cpus_allowed
        .as_ref()
        // Only narrower than the CPUs the caller may use: in a container
        // PID 1 runs on the container's cpuset, which names nothing.
        .filter(|a| narrower(a) && !sys.allowed.is_subset(a))
    {
        add(
            a.clone(),
            "the affinity of PID 1, systemd's CPUAffinity= on a host".into(),
        );
    }
    if !sys.nohz_full.is_empty() {
        add(
            online.difference(&sys.nohz_full),
            "outside nohz_full=".into(),
        );
    }
    (set, why)
}

/// Chooses `n` of the whole `cores` (free, in candidate order) by `rule`
/// ([`Rule::Quietest`] or [`Rule::HousekeepingFirst`]): tiers of equal
/// key, the best first, each taken whole while it fits, the last one
/// compactly near what was taken. Returns the chosen cores (in (node,
/// package, CPU) order), the CPUs to use (every thread with `smt`, else
/// the best thread of each) and the reasons.
pub fn choose(
    sys: &SystemState,
    facts: &Facts,
    cores: Vec<CoreChoice>,
    n: usize,
    rule: Rule,
    smt: bool,
) -> (Vec<CoreChoice>, CpuSet, Vec<String>) {
    let ranks = KindRanks::of(sys);
    let place = |c: &CoreChoice| Place::of(sys, &ranks, c.cpus.first().unwrap_or_default());
    let measured = rule == Rule::Measured;
    let quiet = rule == Rule::Quietest || measured;
    // The threads used of a core: all with `smt`, else its best thread.
    let used = |c: &CoreChoice| -> CpuSet {
        if smt {
            return c.cpus.clone();
        }
        let one = |t: u32| -> CpuSet { std::iter::once(t).collect() };
        let best = c.cpus.iter().min_by_key(|&t| {
            let t1 = one(t);
            if quiet {
                (
                    facts.key(&t1),
                    if measured { facts.worst_gap(&t1) } else { 0 },
                    0,
                    t,
                )
            } else {
                (Key::default(), 0, facts.isolated_count(&t1), t)
            }
        });
        best.map(one).unwrap_or_default()
    };
    // The key of a core: that of all its threads (a sibling disturbs the
    // core), then of the threads used; for housekeeping-first, how many of
    // them are isolated or nohz_full.
    // Measured: the worst gap of the threads used comes first.
    let key_of = |c: &CoreChoice| -> CoreKey {
        let u = used(c);
        let gap = if measured { facts.worst_gap(&u) } else { 0 };
        if quiet {
            (gap, [(facts.key(&c.cpus), 0), (facts.key(&u), 0)])
        } else {
            (
                gap,
                [
                    (Key::default(), facts.isolated_count(&c.cpus)),
                    (Key::default(), facts.isolated_count(&u)),
                ],
            )
        }
    };
    let mut tiers: BTreeMap<CoreKey, Vec<CoreChoice>> = BTreeMap::new();
    for c in cores {
        tiers.entry(key_of(&c)).or_default().push(c);
    }
    let mut chosen: Vec<CoreChoice> = Vec::new();
    for (_, tier) in tiers {
        let want = n - chosen.len();
        if want == 0 {
            break;
        }
        if tier.len() <= want {
            chosen.extend(tier);
            continue;
        }
        let near = near_chosen(sys, &chosen, tier, want);
        chosen.extend(units::choose_compact(near, want, place));
    }
    chosen.sort_by_key(|c| {
        let p = place(c);
        (
            p.node.unwrap_or(u32::MAX),
            p.package.unwrap_or(u32::MAX),
            p.first,
        )
    });
    let cpus: CpuSet = chosen.iter().flat_map(|c| used(c).to_vec()).collect();
    let mut reasons = Vec::new();
    if measured {
        let words = |ns: u64| {
            if ns == u64::MAX {
                "held off the CPU by the watchdog's limit (the noisiest)".to_string()
            } else {
                crate::words::duration_approx(ns)
            }
        };
        let all: Vec<String> = facts
            .measured
            .iter()
            .map(|(c, ns)| format!("CPU {c} {}", words(*ns)))
            .collect();
        reasons.push(format!(
            "measured worst gaps (spin probe, all candidates at once): {}",
            all.join(", ")
        ));
    }
    if quiet {
        if !facts.housekeeping_why.is_empty() {
            reasons.push(format!(
                "named for housekeeping, {}: {}",
                if measured {
                    "ranked last only among gaps within twice the quietest"
                } else {
                    "chosen only when nothing else fits"
                },
                facts.housekeeping_why.join("; ")
            ));
        }
        reasons.push(format!("chosen: {}", facts.describe(&cpus)));
    }
    (chosen, cpus, reasons)
}

/// `--choose measured` after the measurement: every chosen CPU has a
/// worst gap measured over the whole duration. When the best the choice
/// could take includes a CPU whose probe thread was held off it past the
/// watchdog's limit (`u64::MAX`) or that was not probed, nothing was
/// measured that tells the candidates apart (a host too loaded for the
/// probe's threads to run): refused, not chosen by the rule alone under
/// the name of a measurement. Errors: [`ErrorCode::ProbeFailed`].
pub fn require_measured(sys: &SystemState, rule: Rule, cpus: &CpuSet) -> Result<(), Error> {
    let Some(measured) = sys
        .measured
        .as_ref()
        .filter(|m| rule == Rule::Measured && !m.is_empty())
    else {
        return Ok(());
    };
    let unmeasured: CpuSet = cpus
        .iter()
        .filter(|c| measured.get(c).is_none_or(|&ns| ns == u64::MAX))
        .collect();
    if unmeasured.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::ProbeFailed,
        format!(
            "--choose measured: {} could not be measured (the probe thread was held off the CPU past the watchdog's limit), and no other candidate measured better",
            cpus_phrase(&unmeasured)
        ),
    )
    .hint("run again when the host is less loaded, measure longer (--choose measured=3s), or choose by the rule alone (leave --choose out)"))
}

/// The cores of `tier` in the LLC, else the node, of the cores already
/// `chosen`, when they hold `want`; else the whole tier.
fn near_chosen(
    sys: &SystemState,
    chosen: &[CoreChoice],
    tier: Vec<CoreChoice>,
    want: usize,
) -> Vec<CoreChoice> {
    let Some(first) = chosen.first().and_then(|c| c.cpus.first()) else {
        return tier;
    };
    let llc = units::unit_of_core(sys, first, crate::request::Unit::Llc).cloned();
    let node = sys.node_of(first);
    let same_llc: Vec<CoreChoice> = tier
        .iter()
        .filter(|c| {
            llc.as_ref()
                .is_some_and(|l| c.cpus.first().is_some_and(|f| l.contains(f)))
        })
        .cloned()
        .collect();
    if same_llc.len() >= want {
        return same_llc;
    }
    let same_node: Vec<CoreChoice> = tier
        .iter()
        .filter(|c| node.is_some() && c.cpus.first().and_then(|f| sys.node_of(f)) == node)
        .cloned()
        .collect();
    if same_node.len() >= want {
        return same_node;
    }
    tier
}

#[cfg(test)]
mod tests {
    use crate::claim::Claims;
    use crate::cpuset::CpuSet;
    use crate::plan::{plan, plan_claimed};
    use crate::system::SystemState;
    use crate::system::irq::Irq;
    use crate::testkit::{Machine, cpus, kubelet, request};

    fn chosen(sys: &SystemState, args: &str) -> CpuSet {
        let mut a = vec!["--dry-run"];
        a.extend(args.split_whitespace());
        plan(sys, &request(&a)).unwrap().cpus.unwrap()
    }

    /// A device IRQ routed to `aff` (effective affinity) with `counts`.
    fn irq(n: u32, aff: &str, counts: &[(u32, u64)]) -> Irq {
        Irq {
            id: n.to_string(),
            number: Some(n),
            description: format!("dev{n}"),
            counts: counts.to_vec(),
            affinity: Some(cpus(aff)),
            affinity_source: "effective_affinity_list",
            requested: None,
            managed: None,
            detailed: true,
            counts_end: None,
        }
    }

    /// 4 cores × 2 threads (CPU c's sibling is c + 4), booted with
    /// isolcpus=domain,managed_irq,2-3,6-7 nohz_full=2-3,6-7 (the issue's
    /// third machine).
    fn isolated_machine() -> SystemState {
        let mut sys = Machine::new(1, 4, 2).isolated("2-3,6-7").build();
        sys.nohz_full = cpus("2-3,6-7");
        sys
    }

    #[test]
    fn latency_lands_on_isolated_cores_and_plain_requests_stay_off_them() {
        let sys = isolated_machine();
        assert_eq!(chosen(&sys, "--cores 1 --fifo 90"), cpus("2"));
        assert_eq!(chosen(&sys, "--cores 2 --fifo 90"), cpus("2-3"));
        assert_eq!(chosen(&sys, "--cores 1 --smt --exclusive"), cpus("2,6"));
        assert_eq!(chosen(&sys, "--cores 1 --isolated"), cpus("2"));
        // Three: the isolated pair, then core 1 (core 0 holds the boot CPU).
        assert_eq!(chosen(&sys, "--cores 3 --fifo 90"), cpus("1-3"));
        // No intent: housekeeping cores first; the node without the
        // isolated CPUs.
        assert_eq!(chosen(&sys, "--cores 1"), cpus("0"));
        assert_eq!(chosen(&sys, "--cores 2"), cpus("0-1"));
        assert_eq!(chosen(&sys, "--node 0"), cpus("0-1,4-5"));
        // Nothing else fits: an isolated core, said by a finding.
        let req = request(&["--dry-run", "--cores", "3"]);
        let p = plan(&sys, &req).unwrap();
        assert_eq!(p.cpus, Some(cpus("0-2")));
        let codes: Vec<_> = crate::check::check_claimed(&sys, &req, &p, &Claims::default())
            .into_iter()
            .map(|f| f.code.to_string())
            .collect();
        assert!(codes.contains(&"isolation-mixed".to_string()), "{codes:?}");
        assert!(
            codes.contains(&"isolated-without-intent".to_string()),
            "{codes:?}"
        );
    }

    #[test]
    fn the_boot_cpu_is_taken_last() {
        let sys = Machine::new(1, 2, 1).build();
        assert_eq!(chosen(&sys, "--cores 1 --fifo 1"), cpus("1"));
        assert_eq!(chosen(&sys, "--cores 1 --rr 1"), cpus("1"));
        assert_eq!(chosen(&sys, "--cores 2 --fifo 1"), cpus("0-1"));
        assert_eq!(chosen(&sys, "--cores 1"), cpus("0"));
        let p = plan(
            &sys,
            &request(&["--dry-run", "--cores", "1", "--fifo", "1"]),
        )
        .unwrap();
        let c = p.choice.unwrap();
        assert_eq!(c.intent, vec!["--fifo"]);
        assert_eq!(c.rule.name(), "quietest");
        assert_eq!(c.compact, Some(cpus("0")));
    }

    #[test]
    fn device_irqs_and_their_counts_rank_cores() {
        let mut sys = Machine::new(1, 4, 1).build();
        sys.irqs.list = vec![
            irq(30, "1", &[(1, 5000)]),
            irq(31, "2", &[(2, 3)]),
            // Routed to CPU 3 once, moved since: only where it is routed counts.
            irq(32, "1", &[(3, 90_000)]),
        ];
        assert_eq!(chosen(&sys, "--cores 1 --fifo 1"), cpus("3"));
        assert_eq!(chosen(&sys, "--cores 2 --fifo 1"), cpus("2-3"));
        assert_eq!(chosen(&sys, "--cores 3 --fifo 1"), cpus("1-3"));
        // An IRQ without affinity is placed by its counts.
        sys.irqs.list.push(Irq {
            affinity: None,
            ..irq(33, "3", &[(3, 7)])
        });
        assert_eq!(chosen(&sys, "--cores 1 --fifo 1"), cpus("2"));
    }

    /// Issue 35: under `nohz=off` no CPU's tick stops
    /// (`setup_tick_nohz()`, `tick_nohz_activate()`,
    /// kernel/time/tick-sched.c), so a nohz_full CPU is not ranked as
    /// tickless: with the same RCU offloading (`rcu_nocbs=1-3`) and the
    /// same housekeeping naming (CPU 2 in `irqaffinity=`, CPU 1 outside
    /// `nohz_full=`), the device IRQ routed to CPU 2 decides. CPU 3 is
    /// first either way (nothing names it for housekeeping).
    #[test]
    fn nohz_off_is_no_tickless_cpu() {
        let mut sys = Machine::new(1, 4, 1).build();
        sys.nohz_full = cpus("2-3");
        sys.irqs.list = vec![irq(30, "2", &[(2, 500)])];
        sys.boot =
            crate::boot_params::parse("nohz_full=2-3 rcu_nocbs=1-3 irqaffinity=0,2", Some(3));
        assert_eq!(chosen(&sys, "--cores 2 --fifo 1"), cpus("2-3"));
        sys.boot = crate::boot_params::parse(
            "nohz_full=2-3 rcu_nocbs=1-3 irqaffinity=0,2 nohz=off",
            Some(3),
        );
        assert_eq!(chosen(&sys, "--cores 2 --fifo 1"), cpus("1,3"));
    }

    #[test]
    fn cpus_the_host_names_for_housekeeping_come_last() {
        let base = || Machine::new(1, 4, 1).build();
        let mut a = base();
        a.boot.irqaffinity = Some(cpus("0-1"));
        let mut b = base();
        b.process.init_cpus_allowed = Some(cpus("0,2"));
        let mut c = base();
        c.irqs.default_affinity = Some(cpus("0,3"));
        let mut d = base();
        d.nohz_full = cpus("3");
        assert_eq!(chosen(&a, "--cores 2 --fifo 1"), cpus("2-3"));
        assert_eq!(chosen(&b, "--cores 2 --fifo 1"), cpus("1,3"));
        assert_eq!(chosen(&c, "--cores 2 --fifo 1"), cpus("1-2"));
        assert_eq!(chosen(&d, "--cores 1 --fifo 1"), cpus("3"));
        // A mask of every online CPU names nothing.
        let mut e = base();
        e.irqs.default_affinity = Some(cpus("0-3"));
        e.process.init_cpus_allowed = Some(cpus("0-3"));
        assert_eq!(chosen(&e, "--cores 2 --fifo 1"), cpus("1-2"));
    }

    #[test]
    fn claims_smt_threads_and_narrow_cgroups() {
        let sys = isolated_machine();
        let claims = kubelet("2,6");
        let p = plan_claimed(
            &sys,
            &request(&["--dry-run", "--cores", "1", "--fifo", "9"]),
            &claims,
        )
        .unwrap();
        assert_eq!(p.cpus, Some(cpus("3")));
        // The quietest thread of a core: CPU 1's core {1,3} has its IRQ
        // on CPU 1, so CPU 3 runs the command.
        let mut smt = Machine::new(1, 2, 2).build();
        smt.irqs.list = vec![irq(40, "1", &[(1, 10)])];
        assert_eq!(chosen(&smt, "--cores 1 --fifo 1"), cpus("3"));
        assert_eq!(chosen(&smt, "--cores 1 --smt --fifo 1"), cpus("1,3"));
        // A cgroup narrower than the node: only its CPUs are candidates.
        let narrow = Machine::new(1, 4, 2)
            .isolated("2-3,6-7")
            .cgroup_cpuset("/pod", "0-1,4-5")
            .build();
        assert_eq!(chosen(&narrow, "--cores 1 --fifo 9"), cpus("1"));
    }

    /// `--choose measured`: before the measurement every free whole core
    /// is planned (what the probe measures); with the worst gaps set, the
    /// N smallest win over the rule (here the boot CPU), the rule breaking
    /// ties.
    #[test]
    fn measured_gaps_decide_before_the_rule() {
        let mut sys = Machine::new(1, 4, 1).build();
        let req = request(&["--dry-run", "--cores", "2", "--choose", "measured"]);
        // Nothing measured (--emit's case): refused, never every core.
        assert_eq!(
            plan(&sys, &req).unwrap_err().code,
            crate::error::ErrorCode::Usage
        );
        // While measuring: every free core, what the probe measures.
        sys.measured = Some(Default::default());
        assert_eq!(plan(&sys, &req).unwrap().cpus, Some(cpus("0-3")));
        // Gaps of 10 and 15 ns tie (within a factor of two): the rule.
        sys.measured = Some([(0, 10), (1, 500), (2, 50), (3, 15)].into_iter().collect());
        assert_eq!(chosen(&sys, "--cores 1 --choose measured"), cpus("3"));
        sys.measured = Some([(0, 10), (1, 500), (2, 50), (3, 10)].into_iter().collect());
        let p = plan(
            &sys,
            &request(&["--dry-run", "--cores", "2", "--choose", "measured"]),
        )
        .unwrap();
        assert_eq!(p.cpus, Some(cpus("0,3")));
        let c = p.choice.unwrap();
        assert_eq!(c.rule.name(), "measured");
        assert_eq!(c.intent, vec!["--choose measured"]);
        // The rule's part said as what it is: a tie-break, not a claim
        // that the gaps were equal (a new user read 40.3 ms against
        // 14.0 ms as "equal measurements").
        assert!(
            p.reasons.iter().any(|r| r
                == "named for housekeeping, ranked last only among gaps within twice the quietest: CPU 0 (the boot CPU)"),
            "{:?}",
            p.reasons
        );
        // A tie in the gap: the rule decides (the boot CPU last).
        assert_eq!(chosen(&sys, "--cores 1 --choose measured"), cpus("3"));
    }

    /// "Within a factor of two" is of the quietest CPU measured, not a
    /// fixed power-of-two bucket: the pairs a new user measured on this
    /// 2-CPU machine (`--choose measured=200ms --cores 1`), CPU 0 the boot
    /// CPU, where fixed buckets took CPU 0 because 2^24 or 2^23 ns fell
    /// between the two gaps. A gap twice the quietest or more loses to it.
    #[test]
    fn a_gap_within_twice_the_quietest_ties_with_it() {
        let mut sys = Machine::new(1, 2, 1).build();
        let pick = |sys: &mut SystemState, g0: u64, g1: u64| {
            sys.measured = Some([(0, g0), (1, g1)].into_iter().collect());
            chosen(sys, "--cores 1 --choose measured")
        };
        // Ratios 1.58 and 1.74: ties, the rule puts the boot CPU last.
        assert_eq!(pick(&mut sys, 12_699_000, 20_029_000), cpus("1"));
        assert_eq!(pick(&mut sys, 7_324_000, 12_745_000), cpus("1"));
        // Just under twice: a tie still; twice or more: the quieter wins.
        assert_eq!(pick(&mut sys, 10_000_000, 19_999_999), cpus("1"));
        assert_eq!(pick(&mut sys, 10_000_000, 20_000_000), cpus("0"));
        assert_eq!(pick(&mut sys, 7_000_000, 31_000_000), cpus("0"));
        // CPU 1 held off the probe (u64::MAX) is last, and not the quietest.
        assert_eq!(pick(&mut sys, 31_000_000, u64::MAX), cpus("0"));
    }

    /// A CPU whose probe thread was held off it (`u64::MAX`) ranks after
    /// every CPU measured; when the choice still needs one (every
    /// candidate held off, or more cores asked than were measured), it is
    /// refused, never taken by the rule alone (the isolated CPU 3 here,
    /// which a SCHED_FIFO hog may be the reason the probe could not run
    /// on).
    #[test]
    fn a_cpu_not_measured_is_last_and_never_chosen_unmeasured() {
        let mut sys = Machine::new(1, 4, 1).isolated("3").build();
        let max = u64::MAX;
        sys.measured = Some(
            [(0, 10), (1, max), (2, 900), (3, max)]
                .into_iter()
                .collect(),
        );
        assert_eq!(chosen(&sys, "--cores 1 --choose measured"), cpus("0"));
        assert_eq!(chosen(&sys, "--cores 2 --choose measured"), cpus("0,2"));
        let refused = |sys: &SystemState, n: &str| {
            let e = plan(
                sys,
                &request(&["--dry-run", "--cores", n, "--choose", "measured"]),
            )
            .unwrap_err();
            assert_eq!(e.code, crate::error::ErrorCode::ProbeFailed, "{e:?}");
            e.message
        };
        let e = refused(&sys, "3");
        assert!(e.contains("CPU 3 could not be measured"), "{e}");
        sys.measured = Some((0..4).map(|c| (c, max)).collect());
        let e = refused(&sys, "1");
        assert!(e.contains("CPU 3 could not be measured"), "{e}");
    }
}
