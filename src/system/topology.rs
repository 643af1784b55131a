//! CPUs and their topology from `/sys/devices/system/cpu`
//! (`Documentation/admin-guide/cputopology.rst`,
//! `Documentation/ABI/stable/sysfs-devices-system-cpu`).

use super::root::{Dir, Root};
use crate::cpuset::CpuSet;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// One logical CPU as sysfs describes it. Topology fields are `None` when
/// the CPU is offline (the kernel removes `topology/` then) or the file is
/// missing; ids the kernel reports as "unknown" (`-1`, and `65535` for
/// `cluster_id` on some arm64 firmware) are `None` as well.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// Kernel CPU id (`cpuN`).
    pub id: u32,
    /// In `/sys/devices/system/cpu/online`.
    pub online: bool,
    /// `topology/core_id` (unique only within a package/die/cluster).
    pub core_id: Option<u32>,
    /// `topology/physical_package_id`.
    pub package: Option<u32>,
    /// `topology/die_id`.
    pub die: Option<u32>,
    /// `topology/cluster_id`.
    pub cluster: Option<u32>,
    /// SMT siblings including this CPU: `core_cpus_list`, else
    /// `thread_siblings_list`, else the mask files of old kernels.
    pub siblings: Option<CpuSet>,
    /// CPUs of the same package: `package_cpus_list`, else `core_siblings_list`.
    pub package_cpus: Option<CpuSet>,
    /// CPUs sharing this CPU's last-level cache (`cache/indexK/shared_cpu_list`
    /// of the highest `level`).
    pub llc: Option<CpuSet>,
    /// CPUs of the same die: `topology/die_cpus_list` (Linux 5.2+, x86
    /// and s390; `None` where the kernel does not expose dies).
    pub die_cpus: Option<CpuSet>,
    /// CPUs of the same cluster: `topology/cluster_cpus_list` (Linux
    /// 5.16+, arm64 and x86 with L2 clusters; `None` where absent).
    pub cluster_cpus: Option<CpuSet>,
    /// `cpu_capacity`: the CPU's capacity relative to the most capable CPU
    /// of the system, which has 1024 (arm64, RISC-V;
    /// `Documentation/ABI/testing/sysfs-devices-system-cpu`).
    pub capacity: Option<u32>,
    /// NUMA node, from the node cpulists (filled in by the caller).
    pub node: Option<u32>,
    /// `cpufreq/scaling_governor`, when cpufreq is present.
    pub governor: Option<String>,
}

/// The CPU id sets of `/sys/devices/system/cpu`.
#[derive(Debug, Clone, Default)]
pub struct CpuSets {
    /// `possible` (fallback: every `cpuN` directory).
    pub possible: CpuSet,
    /// `present` (fallback: every `cpuN` directory).
    pub present: CpuSet,
    /// `online` (fallback: `cpuN/online` files; a CPU without one, usually
    /// cpu0, cannot be taken offline and is online).
    pub online: CpuSet,
    /// Every `cpuN` directory whose id the kernel can have (see
    /// [`read_sets`]).
    pub dirs: CpuSet,
    /// What was ignored and why (`topology-inconsistent` findings).
    pub issues: Vec<String>,
}

/// A topology id, `None` for the kernel's "unknown" (`-1`).
fn id_of(root: &Root, path: &str) -> Option<u32> {
    u32::try_from(root.read_int(path)?).ok()
}

/// Reads the possible/present/online sets.
///
/// CPU ids are bounded by what the kernel can have: `kernel_max` ("the
/// maximum CPU index allowed by the kernel configuration", `NR_CPUS - 1`)
/// and `possible` (the CPUs "allocated resources", every id a CPU can
/// ever have: `Documentation/admin-guide/cputopology.rst`); without either,
/// by [`super::MAX_CPUS`]. A `cpuN` directory beyond the bound (an empty
/// `cpu4294967295` in a damaged dump), and ids beyond it in `online` or
/// `present`, are ignored and reported, never read or planned on; every
/// bitmap is then sized by the bound, not by what a file claims.
pub fn read_sets(root: &Root) -> CpuSets {
    let mut issues = Vec::new();
    let kernel_max = root
        .read_int(&format!("{CPU_DIR}/kernel_max"))
        .and_then(|k| u32::try_from(k).ok())
        .filter(|&k| k <= crate::cpuset::MAX_ID);
    let possible_file = root.read_list(&format!("{CPU_DIR}/possible"));
    let mut bound = kernel_max.unwrap_or(super::MAX_CPUS as u32 - 1);
    let mut possible = possible_file.clone();
    if let Some(p) = &mut possible
        && p.last().is_some_and(|l| l > bound)
    {
        issues.push(format!(
            "{CPU_DIR}/possible lists CPUs {} beyond kernel_max ({bound}); ignoring them",
            beyond(p, bound)
        ));
        *p = below(p, bound);
    }
    if let Some(last) = possible.as_ref().and_then(CpuSet::last) {
        bound = bound.min(last);
    }
    let (dirs, far) = root.numbered_entries_below(CPU_DIR, "cpu", bound);
    let mut dirs: CpuSet = dirs.into_iter().collect();
    if let Some(p) = &possible {
        let outside = dirs.difference(p);
        if !outside.is_empty() {
            issues.push(format!(
                "{CPU_DIR}: directories cpu{{{outside}}} are not in possible ({p}); ignoring them"
            ));
            dirs = dirs.intersection(p);
        }
    }
    if !far.is_empty() {
        let what = match (possible.is_some(), kernel_max) {
            (true, _) => "possible",
            (false, Some(_)) => "kernel_max",
            (false, None) => "the largest CPU id pinrun reads",
        };
        let what = format!("{what} (CPU {bound})");
        issues.push(super::root::beyond_words(CPU_DIR, "cpu", &far, &what));
    }
    let set = |name: &str, issues: &mut Vec<String>| -> Option<CpuSet> {
        let s = root.read_list(&format!("{CPU_DIR}/{name}"))?;
        if s.last().is_some_and(|l| l > bound) {
            issues.push(format!(
                "{CPU_DIR}/{name} lists CPUs {} beyond the possible ones (up to {bound}); ignoring them",
                beyond(&s, bound)
            ));
            return Some(below(&s, bound));
        }
        Some(s)
    };
    let online = set("online", &mut issues).unwrap_or_else(|| {
        dirs.iter()
            .filter(|id| root.read_int(&format!("{CPU_DIR}/cpu{id}/online")) != Some(0))
            .collect()
    });
    // An online CPU has its cpuN directory (the kernel registers the device
    // of every present CPU: drivers/base/cpu.c, register_cpu()): an id that
    // `online` lists without one is not a CPU of this machine, never planned on.
    let mut online = online;
    let missing = online.difference(&dirs);
    if !dirs.is_empty() && !missing.is_empty() {
        issues.push(format!(
            "{CPU_DIR}/online lists CPUs {} that have no cpuN directory; ignoring them",
            missing.to_compact_list()
        ));
        online = online.intersection(&dirs);
    }
    let present = set("present", &mut issues).unwrap_or_else(|| dirs.clone());
    let known = possible.is_some() || !dirs.is_empty();
    let possible = possible.unwrap_or_else(|| dirs.clone());
    let (present, online) = within_possible(&possible, known, present, online, &mut issues);
    CpuSets {
        possible,
        present,
        online,
        dirs,
        issues,
    }
}

/// `present` and `online` checked against `possible`: the kernel's sets
/// nest, possible ⊇ present ⊇ online (`Documentation/admin-guide/
/// cputopology.rst`), so a CPU outside `possible` is a lie of the dump (or
/// a kernel bug) and is ignored, never planned on, and reported. When
/// `possible` is not `known` (no `possible` file, no `cpuN` directory)
/// nothing can be checked: the CPUs are kept, and that is reported, never
/// silent (a dump holding only `online`).
fn within_possible(
    possible: &CpuSet,
    known: bool,
    present: CpuSet,
    online: CpuSet,
    issues: &mut Vec<String>,
) -> (CpuSet, CpuSet) {
    if !known {
        if !online.is_empty() {
            issues.push(format!(
                "{CPU_DIR}/online lists CPUs {} but neither {CPU_DIR}/possible nor any cpuN directory exists: the kernel's possible ⊇ present ⊇ online cannot be checked; planning on online as given",
                online.to_compact_list()
            ));
        }
        return (present, online);
    }
    let mut keep = |name: &str, s: CpuSet| {
        let outside = s.difference(possible);
        if outside.is_empty() {
            return s;
        }
        issues.push(format!(
            "{CPU_DIR}/{name} lists CPUs {} that are not possible ({}); ignoring them",
            outside.to_compact_list(),
            if possible.is_empty() {
                "none".to_string()
            } else {
                possible.to_compact_list()
            }
        ));
        s.intersection(possible)
    };
    let present = keep("present", present);
    let online = keep("online", online);
    (present, online)
}

/// The ids of `s` above `bound`, as a short cpulist.
fn beyond(s: &CpuSet, bound: u32) -> String {
    s.difference(&below(s, bound)).to_compact_list()
}

/// The ids of `s` up to `bound`.
fn below(s: &CpuSet, bound: u32) -> CpuSet {
    let mut keep = CpuSet::new();
    keep.insert_range(0, bound);
    s.intersection(&keep)
}

/// A CPU whose topology is not read (or is unknown: offline).
pub fn unread_cpu(id: u32, online: bool) -> Cpu {
    Cpu {
        id,
        online,
        core_id: None,
        package: None,
        die: None,
        cluster: None,
        siblings: None,
        package_cpus: None,
        llc: None,
        die_cpus: None,
        cluster_cpus: None,
        capacity: None,
        node: None,
        governor: None,
    }
}

/// Reads one CPU's whole topology. Offline CPUs get only `id` and
/// `online: false`; also returns what its sibling files said (online CPUs).
pub fn read_cpu(root: &Root, id: u32, online: bool) -> (Cpu, Option<SiblingRead>) {
    let mut cpu = unread_cpu(id, online);
    let mut read = None;
    if let Some(dir) = cpu_dir(root) {
        read = read_siblings(&dir, &mut cpu);
        read_ids(&dir, &mut cpu);
    }
    read_details(root, &mut cpu);
    (cpu, read)
}

/// `/sys/devices/system/cpu`, opened once for [`read_siblings`] and
/// [`read_ids`] (which then walk only `cpuN/topology/FILE`).
pub fn cpu_dir(root: &Root) -> Option<Dir> {
    root.dir(CPU_DIR)
}

/// What one online CPU's SMT sibling files say ([`read_sibling_files`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiblingRead {
    /// The first usable list: parsed, not empty, holding the CPU itself.
    pub set: Option<CpuSet>,
    /// The file `set` came from (`cpuN/topology/core_cpus_list`, …).
    pub file: String,
    /// Why the first sibling file that exists could not be used, when it
    /// could not (`set` may still come from a later file).
    pub problem: Option<String>,
    /// Whether any sibling file exists for the CPU.
    pub present: bool,
    /// Whether `cpuN/topology` exists (the kernel removes it with the CPU).
    pub has_topology: bool,
}

/// The SMT sibling files in the order pinrun trusts them:
/// `core_cpus_list` ("CPUs within the same core", Linux 5.7+) and its
/// older name `thread_siblings_list`, each with its cpumask twin
/// (`Documentation/admin-guide/cputopology.rst`,
/// `Documentation/ABI/stable/sysfs-devices-system-cpu`). Each lists the
/// CPU itself: a list without it, an empty one or an unparsable one is a
/// problem, and the next file is tried.
pub fn read_sibling_files(dir: &Dir, id: u32) -> SiblingRead {
    let mut out = SiblingRead::default();
    for name in ["core_cpus", "thread_siblings"] {
        for (file, is_list) in [(format!("{name}_list"), true), (name.to_string(), false)] {
            let rel = format!("cpu{id}/topology/{file}");
            let Some(text) = dir.read(&rel) else {
                continue;
            };
            out.present = true;
            let parsed = if is_list {
                CpuSet::parse_sysfs_list(&text, None)
            } else {
                CpuSet::parse_sysfs_mask(&text)
            };
            let why = match parsed {
                Err(e) => format!("unparsable: {e}"),
                Ok(s) if s.is_empty() => "empty".to_string(),
                Ok(s) if !s.contains(id) => format!("lists {s} without CPU {id} itself"),
                Ok(s) => {
                    out.set = Some(s);
                    out.file = rel;
                    return out;
                }
            };
            out.problem.get_or_insert(format!("{rel} is {why}"));
        }
    }
    out.has_topology = dir.exists(&format!("cpu{id}/topology"));
    if out.problem.is_none() {
        out.problem = Some(format!(
            "cpu{id}/topology has no core_cpus_list or thread_siblings_list"
        ));
    }
    out
}

/// Fills `siblings` of an online CPU; `dir` is [`cpu_dir`]. Returns what
/// the files said, for [`reconcile_siblings`].
pub fn read_siblings(dir: &Dir, cpu: &mut Cpu) -> Option<SiblingRead> {
    if !cpu.online {
        return None;
    }
    let read = read_sibling_files(dir, cpu.id);
    cpu.siblings = read.set.clone();
    Some(read)
}

/// The ids that place a core inside its package (`physical_package_id`,
/// `die_id`, `cluster_id`, `core_id`): the tie-breaker of
/// [`reconcile_siblings`] when sibling lists disagree. `None` without a
/// core id (a package id of `-1`, as on POWER, is `None` inside).
pub type CoreKey = (Option<u32>, Option<u32>, Option<u32>, u32);

/// [`CoreKey`] of an online CPU.
pub fn read_core_key(dir: &Dir, id: u32) -> Option<CoreKey> {
    let cluster = read_id(dir, id, "cluster_id").filter(|&c| c != 65535);
    Some((
        read_id(dir, id, "physical_package_id"),
        read_id(dir, id, "die_id"),
        cluster,
        read_id(dir, id, "core_id")?,
    ))
}

/// The SMT cores of the online CPUs, as a partition consistent with the
/// kernel's sibling lists, from `lists` (one [`SiblingRead`] per online
/// CPU) and, as tie-breaker, `key` ([`CoreKey`]).
///
/// The kernel's lists are symmetric (`cputopology.rst`: `core_cpus` is
/// "the CPUs within the same core", so when A lists B, B lists A, and each
/// lists itself): a core is *agreed* when every one of its online CPUs
/// lists exactly it and no other CPU names one of them. That is every
/// core of a sound machine, and then nothing is reported. A CPU outside
/// the agreed cores (its list missing, empty, unparsable, without itself,
/// or contradicting another) gets:
///
/// 1. the one list the other unresolved CPUs give for it, when every CPU of
///    that list that has a usable list of its own agrees;
/// 2. else the list that matches `core_id` within the package (and die
///    and cluster) over the unresolved CPUs;
/// 3. else, when no list names it and none of its `core_id` group has a
///    usable list, the `core_id` group;
/// 4. else the one list all the other CPUs of it agree on, when it holds
///    this CPU's own list (the larger core, never a smaller one);
/// 5. else, when no list names it and it has no usable list, a core of
///    its own (nothing contradicts it), silently when it has no
///    `topology` directory at all (as the kernel leaves an offline CPU);
/// 6. else the topology is refused (`Err`, naming the files).
///
/// Each recovery is described in the returned messages (the
/// `topology-inconsistent` finding). A machine whose online CPUs have no
/// sibling file at all (no topology in the dump) keeps every CPU a core of
/// its own, silently, as before: there is nothing to contradict.
#[allow(clippy::type_complexity)]
pub fn reconcile_siblings(
    lists: &std::collections::BTreeMap<u32, SiblingRead>,
    mut key: impl FnMut(u32) -> Option<CoreKey>,
) -> Result<(std::collections::BTreeMap<u32, CpuSet>, Vec<String>), String> {
    let s = Siblings {
        lists,
        online: lists.keys().copied().collect(),
    };
    let online = &s.online;
    let mut cores = s.agreed();
    let mut issues = Vec::new();
    let mut unresolved: CpuSet = online.iter().filter(|c| !cores.contains_key(c)).collect();
    if unresolved.is_empty() {
        // Agreed everywhere; a problem in a file that a later file made
        // good (core_cpus_list garbled, thread_siblings_list sound) is
        // still reported.
        for r in lists.values() {
            if let (Some(p), Some(set)) = (&r.problem, &r.set) {
                issues.push(format!(
                    "{p}; used {} ({set}), which agrees with the other CPUs' lists",
                    r.file
                ));
            }
        }
        return Ok((cores, issues));
    }
    if lists.values().all(|r| !r.present) {
        for c in online.iter() {
            cores.insert(c, std::iter::once(c).collect());
        }
        return Ok((cores, issues));
    }
    for c in online.iter() {
        if !unresolved.contains(c) {
            continue;
        }
        let cands = s.candidates(c, &unresolved);
        let chosen = s.choose(c, &cands, &unresolved, &mut key);
        if chosen.is_none() && cands.is_empty() && !lists[&c].has_topology {
            // No topology directory (the kernel removes it with an offline
            // CPU; a dump may keep the CPU online) and no list names it:
            // nothing says anything, a core of its own as always.
            unresolved.remove(c);
            cores.insert(c, std::iter::once(c).collect());
            continue;
        }
        let chosen = chosen.or_else(|| {
            (cands.is_empty() && s.usable(c).is_none()).then(|| {
                (
                    std::iter::once(c).collect(),
                    "nothing (no sibling list names it and core_id does not group it): a core of its own".into(),
                )
            })
        });
        let Some((g, source)) = chosen else {
            return Err(s.refusal(c, &unresolved));
        };
        let members = g.intersection(online);
        let why = s.why(&g, &members, &unresolved);
        issues.push(format!("{}; core {g} taken from {source}", why.join("; ")));
        for m in members.iter() {
            unresolved.remove(m);
            cores.insert(m, g.clone());
        }
    }
    Ok((cores, issues))
}

/// The sibling lists [`reconcile_siblings`] settles: one [`SiblingRead`]
/// per online CPU.
struct Siblings<'a> {
    /// The lists, by CPU.
    lists: &'a std::collections::BTreeMap<u32, SiblingRead>,
    /// The online CPUs (those with a list read).
    online: CpuSet,
}

impl Siblings<'_> {
    /// CPU `c`'s usable sibling list, if any.
    fn usable(&self, c: u32) -> Option<&CpuSet> {
        self.lists.get(&c).and_then(|r| r.set.as_ref())
    }

    /// What CPU `c`'s files say, for a message: its problem, or the list
    /// it gives.
    fn describe(&self, c: u32) -> String {
        let r = &self.lists[&c];
        match (&r.problem, &r.set) {
            (Some(p), None) => p.clone(),
            (_, Some(s)) => format!("{} lists {s}", r.file),
            (None, None) => format!("cpu{c}/topology has no sibling list"),
        }
    }

    /// The agreed cores, by CPU: each usable list every one of whose
    /// online CPUs lists exactly it, and that no other CPU names a CPU of.
    fn agreed(&self) -> std::collections::BTreeMap<u32, CpuSet> {
        use std::collections::BTreeMap;
        let online = &self.online;
        let mut named_by: BTreeMap<u32, CpuSet> = BTreeMap::new();
        for (&c, r) in self.lists {
            if let Some(set) = &r.set {
                for m in set.intersection(online).iter() {
                    named_by.entry(m).or_default().insert(c);
                }
            }
        }
        let mut cores: BTreeMap<u32, CpuSet> = BTreeMap::new();
        for (&c, r) in self.lists {
            let Some(g) = &r.set else { continue };
            let agreed = g.intersection(online).iter().all(|m| {
                self.usable(m) == Some(g) && named_by.get(&m).is_none_or(|n| n.is_subset(g))
            });
            if agreed {
                cores.insert(c, g.clone());
            }
        }
        cores
    }

    /// The distinct usable lists of the `unresolved` CPUs that hold CPU
    /// `c`, in the order of those CPUs.
    fn candidates(&self, c: u32, unresolved: &CpuSet) -> Vec<&CpuSet> {
        let mut cands: Vec<&CpuSet> = Vec::new();
        for m in unresolved.iter() {
            if let Some(s) = self.usable(m).filter(|s| s.contains(c))
                && !cands.contains(&s)
            {
                cands.push(s);
            }
        }
        cands
    }

    /// The core of unresolved CPU `c` by rules 1 to 4 of
    /// [`reconcile_siblings`] from its candidate lists `cands`, with the
    /// source a message names; `key` (its [`CoreKey`], and those of the
    /// `unresolved` CPUs) is asked only when rule 1 does not settle it.
    fn choose(
        &self,
        c: u32,
        cands: &[&CpuSet],
        unresolved: &CpuSet,
        key: &mut impl FnMut(u32) -> Option<CoreKey>,
    ) -> Option<(CpuSet, String)> {
        let online = &self.online;
        let members_ok = |g: &CpuSet| {
            g.intersection(online)
                .iter()
                .all(|m| unresolved.contains(m) && self.usable(m).is_none_or(|s| s == g))
        };
        let chosen: Option<(CpuSet, String)> = if cands.len() == 1 && members_ok(cands[0]) {
            Some((
                cands[0].clone(),
                "the sibling lists of the core's other CPUs".into(),
            ))
        } else if let Some(k) = key(c) {
            let group: CpuSet = unresolved.iter().filter(|&m| key(m) == Some(k)).collect();
            if let Some(g) = cands.iter().find(|g| g.intersection(online) == group) {
                Some((
                    (*g).clone(),
                    "the sibling list that agrees with core_id within the package".into(),
                ))
            } else if cands.is_empty() && group.iter().all(|m| self.usable(m).is_none()) {
                Some((
                    group,
                    "core_id within the package (no sibling list names these CPUs)".into(),
                ))
            } else {
                None
            }
        } else {
            None
        };
        // The other CPUs of one candidate all list exactly it, and this
        // CPU's own list is part of it: the larger core (never a smaller
        // one) that every other CPU of it agrees on.
        chosen.or_else(|| {
            cands
                .iter()
                .find(|g| {
                    self.usable(c).is_none_or(|own| own.is_subset(g))
                        && g.intersection(online).len() > 1
                        && g.intersection(online).iter().all(|m| {
                            unresolved.contains(m) && (m == c || self.usable(m) == Some(*g))
                        })
                })
                .map(|g| {
                    (
                        (*g).clone(),
                        "the sibling lists of the core's other CPUs, which all agree".into(),
                    )
                })
        })
    }

    /// The refusal when nothing settles CPU `c`: what its files and the
    /// `unresolved` CPUs' lists that name it say.
    fn refusal(&self, c: u32, unresolved: &CpuSet) -> String {
        let named: Vec<String> = unresolved
            .iter()
            .filter(|&m| m == c || self.usable(m).is_some_and(|s| s.contains(c)))
            .map(|m| self.describe(m))
            .collect();
        format!(
            "the SMT sibling lists of CPU {c} disagree and core_id does not settle them: {}",
            named.join("; ")
        )
    }

    /// Why core `g` (its online `members`) was settled: what the files of
    /// its CPUs whose list is not `g` or has a problem say, then those of
    /// the `unresolved` CPUs outside it that name one of its CPUs.
    fn why(&self, g: &CpuSet, members: &CpuSet, unresolved: &CpuSet) -> Vec<String> {
        members
            .iter()
            .filter(|&m| self.usable(m) != Some(g) || self.lists[&m].problem.is_some())
            .map(|m| self.describe(m))
            .chain(
                // CPUs outside the core that name one of its CPUs.
                unresolved
                    .iter()
                    .filter(|&m| {
                        !members.contains(m)
                            && self.usable(m).is_some_and(|s| s.intersects(members))
                    })
                    .map(|m| self.describe(m)),
            )
            .collect()
    }
}

/// Fills `core_id` of an online CPU; `dir` is [`cpu_dir`].
pub fn read_core_id(dir: &Dir, cpu: &mut Cpu) {
    if cpu.online {
        cpu.core_id = read_id(dir, cpu.id, "core_id");
    }
}

/// `cpuN/topology/NAME` as an id (`-1` and other non-ids: `None`).
fn read_id(dir: &Dir, cpu: u32, name: &str) -> Option<u32> {
    u32::try_from(dir.read_int(&format!("cpu{cpu}/topology/{name}"))?).ok()
}

/// Fills `core_id`, `package` and `package_cpus` of an online CPU; `dir`
/// is [`cpu_dir`].
pub fn read_ids(dir: &Dir, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    let t = format!("cpu{}/topology", cpu.id);
    read_core_id(dir, cpu);
    cpu.package = read_id(dir, cpu.id, "physical_package_id");
    // The planner's compact grouping keys a core by its package's lowest
    // CPU (CoreChoice.package_key), falling back to the package id.
    cpu.package_cpus = dir
        .read_list_or_mask(&t, "package_cpus")
        .or_else(|| dir.read_list_or_mask(&t, "core_siblings"))
        .filter(|s| !s.is_empty());
}

/// `cpuN/cpufreq/scaling_governor`, relative to [`CPU_DIR`].
fn governor_file(cpu: u32) -> String {
    format!("cpu{cpu}/cpufreq/scaling_governor")
}

/// Fills `governor` (`cpufreq/scaling_governor`) of an online CPU.
pub fn read_governor(root: &Root, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    cpu.governor = root.read_value(&format!("{CPU_DIR}/{}", governor_file(cpu.id)));
}

/// What [`read_governor`] would set `cpu.governor` to, read relative to
/// `cpu_dir` ([`CPU_DIR`] opened once, for the many CPUs of a check: a
/// short path walk each) without changing `cpu` (so that many CPUs can be
/// read on several threads): `None` for an offline CPU, whose governor is
/// not read (it keeps what it has), else `Some` of the file's first line
/// (`Some(None)` when it cannot be read).
pub fn governor_in(cpu_dir: &Dir, cpu: &Cpu) -> Option<Option<String>> {
    cpu.online
        .then(|| cpu_dir.read_value(&governor_file(cpu.id)))
}

/// Fills what only `--show` prints: `die`, `cluster`, the placement units
/// ([`read_units`]), and `governor` (which a launch reads after planning,
/// for the checked CPUs only: see [`super::SystemState::read_extras`]).
pub fn read_details(root: &Root, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    let id = cpu.id;
    let t = format!("{CPU_DIR}/cpu{id}/topology");
    cpu.die = id_of(root, &format!("{t}/die_id"));
    // 65535 is what arm64 reports for "no cluster" (BAD_APICID-like filler).
    cpu.cluster = id_of(root, &format!("{t}/cluster_id")).filter(|&c| c != 65535);
    read_units(root, cpu);
    read_governor(root, cpu);
}

/// Fills the placement units of an online CPU: `llc` ([`read_llc`]),
/// `die_cpus` (`topology/die_cpus_list`, else the `die_cpus` mask),
/// `cluster_cpus` (`topology/cluster_cpus_list`, else `cluster_cpus`) and
/// `capacity` (`cpu_capacity`). A set without the CPU itself is unknown
/// (`None`), as for the LLC; so is a die or cluster whose id is the
/// kernel's "unknown" (`-1`, and 65535 for clusters): an architecture
/// without dies or clusters still has the files, with the generic
/// `topology_die_cpumask()`/`topology_cluster_cpumask()` of
/// `include/linux/topology.h`, the CPU alone.
pub fn read_units(root: &Root, cpu: &mut Cpu) {
    if !cpu.online {
        return;
    }
    for i in 0..3 {
        *unit_slot(cpu, i) = read_unit(root, cpu.id, i);
    }
    read_capacity(root, cpu);
}

/// The `i`th unit of [`read_units`] of online CPU `id`: 0 die, 1 LLC, 2
/// cluster.
pub fn read_unit(root: &Root, id: u32, i: usize) -> Option<CpuSet> {
    if i == 1 {
        return read_llc(root, id);
    }
    let name = if i == 0 { "die" } else { "cluster" };
    let t = format!("{CPU_DIR}/cpu{id}/topology");
    let known = id_of(root, &format!("{t}/{name}_id")).is_some_and(|i| i != 65535);
    if !known {
        return None;
    }
    root.read_list(&format!("{t}/{name}_cpus_list"))
        .or_else(|| root.read_mask(&format!("{t}/{name}_cpus")))
        .filter(|s| s.contains(id))
}

/// The field of [`read_unit`]'s `i`th unit.
pub fn unit_slot(cpu: &mut Cpu, i: usize) -> &mut Option<CpuSet> {
    match i {
        0 => &mut cpu.die_cpus,
        1 => &mut cpu.llc,
        _ => &mut cpu.cluster_cpus,
    }
}

/// Fills `capacity` (`cpuN/cpu_capacity`) of an online CPU.
pub fn read_capacity(root: &Root, cpu: &mut Cpu) {
    if cpu.online {
        cpu.capacity = root
            .read_int(&format!("{CPU_DIR}/cpu{}/cpu_capacity", cpu.id))
            .and_then(|c| u32::try_from(c).ok());
    }
}

/// The CPUs of the hybrid x86 core types: `/sys/devices/cpu_core/cpus`
/// (performance cores) and `/sys/devices/cpu_atom/cpus` (efficiency
/// cores), the cpulists of the two PMUs the kernel registers on Intel
/// hybrid CPUs (`arch/x86/events/intel/core.c`, `intel_pmu_init()` hybrid
/// PMUs; `Documentation/ABI/testing/sysfs-bus-event_source-devices`).
/// Each is `None` when its file is absent or unparsable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HybridPmus {
    /// `/sys/devices/cpu_core/cpus`.
    pub core: Option<CpuSet>,
    /// `/sys/devices/cpu_atom/cpus`.
    pub atom: Option<CpuSet>,
}

/// Reads [`HybridPmus`].
pub fn read_hybrid(root: &Root) -> HybridPmus {
    HybridPmus {
        core: root.read_list("/sys/devices/cpu_core/cpus"),
        atom: root.read_list("/sys/devices/cpu_atom/cpus"),
    }
}

/// The shared CPUs of the highest-level data or unified cache; `None` when
/// the kernel does not say (no cache directory, or a set without this CPU).
/// `cache/indexK/{level,type,shared_cpu_list}`:
/// `Documentation/ABI/testing/sysfs-devices-system-cpu`
/// (`/sys/devices/system/cpu/cpuX/cache/index*`).
fn read_llc(root: &Root, id: u32) -> Option<CpuSet> {
    let dir = format!("{CPU_DIR}/cpu{id}/cache");
    root.numbered_entries(&dir, "index")
        .into_iter()
        .filter_map(|k| {
            let idx = format!("{dir}/index{k}");
            if root.read_value(&format!("{idx}/type")).as_deref() == Some("Instruction") {
                return None;
            }
            let level = root.read_int(&format!("{idx}/level"))?;
            let shared = root
                .read_list(&format!("{idx}/shared_cpu_list"))
                .or_else(|| root.read_mask(&format!("{idx}/shared_cpu_map")))?;
            Some((level, shared))
        })
        .max_by_key(|(level, _)| *level)
        .map(|(_, set)| set)
        // The set includes the CPU itself; one without it (the all-zero
        // shared_cpu_map of old ia64 kernels) means "unknown".
        .filter(|set| set.contains(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn set(s: &str) -> CpuSet {
        CpuSet::parse(s).unwrap()
    }

    /// Sibling reads of online CPUs from (cpu, list or None for a bad file).
    fn reads(v: &[(u32, Option<&str>)]) -> BTreeMap<u32, SiblingRead> {
        v.iter()
            .map(|&(c, l)| {
                let r = SiblingRead {
                    set: l.map(set),
                    file: format!("cpu{c}/topology/thread_siblings_list"),
                    problem: l
                        .is_none()
                        .then(|| format!("cpu{c}/topology/thread_siblings_list is empty")),
                    present: true,
                    has_topology: true,
                };
                (c, r)
            })
            .collect()
    }

    /// core_id = cpu mod `n` (threads N and N+n share a core).
    fn key_mod(n: u32) -> impl FnMut(u32) -> Option<CoreKey> {
        move |c| Some((Some(0), None, None, c % n))
    }

    fn cores(m: &BTreeMap<u32, CpuSet>) -> Vec<String> {
        m.values().map(CpuSet::to_list).collect()
    }

    #[test]
    fn sound_lists_need_nothing() {
        let r = reads(&[
            (0, Some("0,2")),
            (1, Some("1,3")),
            (2, Some("0,2")),
            (3, Some("1,3")),
        ]);
        let (c, issues) = reconcile_siblings(&r, |_| None).unwrap();
        assert_eq!(cores(&c), ["0,2", "1,3", "0,2", "1,3"]);
        assert!(issues.is_empty());
    }

    #[test]
    fn bad_list_recovered_from_the_others() {
        // cpu0's list is bad: cpu2's list names it; no core_id needed.
        let r = reads(&[
            (0, None),
            (1, Some("1,3")),
            (2, Some("0,2")),
            (3, Some("1,3")),
        ]);
        let (c, issues) = reconcile_siblings(&r, |_| None).unwrap();
        assert_eq!(cores(&c), ["0,2", "1,3", "0,2", "1,3"]);
        assert_eq!(issues.len(), 1);
        assert!(issues[0].contains("cpu0/topology/thread_siblings_list is empty"));
    }

    #[test]
    fn asymmetric_settled_by_core_id_or_by_the_others() {
        // cpu2 lists only itself, cpu0 lists 0,2: core_id says 0 and 2.
        let r = reads(&[
            (0, Some("0,2")),
            (1, Some("1,3")),
            (2, Some("2")),
            (3, Some("1,3")),
        ]);
        let (c, issues) = reconcile_siblings(&r, key_mod(2)).unwrap();
        assert_eq!(cores(&c), ["0,2", "1,3", "0,2", "1,3"]);
        assert!(issues[0].contains("cpu2/topology"), "{issues:?}");
        // SMT4 without core ids: three CPUs agree on 4-7, one lists itself.
        let r = reads(&[
            (4, Some("4")),
            (5, Some("4-7")),
            (6, Some("4-7")),
            (7, Some("4-7")),
        ]);
        let (c, _) = reconcile_siblings(&r, |_| None).unwrap();
        assert_eq!(cores(&c), ["4-7"; 4]);
    }

    #[test]
    fn disagreement_without_a_tie_breaker_is_refused() {
        // 0 says 0-1, 1 says 1-2, 2 says 0,2: no list is agreed by its CPUs.
        let r = reads(&[(0, Some("0-1")), (1, Some("1-2")), (2, Some("0,2"))]);
        let e = reconcile_siblings(&r, |_| None).unwrap_err();
        assert!(e.contains("CPU 0"), "{e}");
    }

    #[test]
    fn no_topology_at_all_keeps_cores_of_one() {
        let mut r = reads(&[(0, None), (1, None)]);
        for x in r.values_mut() {
            x.present = false;
        }
        let (c, issues) = reconcile_siblings(&r, |_| None).unwrap();
        assert_eq!(cores(&c), ["0", "1"]);
        assert!(issues.is_empty());
    }
}
