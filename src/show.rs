//! `--show` as text: the machine as a person reads it before choosing
//! cores, within 80 columns on a laptop or a 512-CPU machine. Pure.
//!
//! Cores are printed with their SMT siblings joined by `+`; marks: `*`
//! isolated, `~` nohz_full, `!` outside the allowed set, `^` receives
//! device IRQs. Long lists use the stride form (`0-78:2`).

use crate::cpuset::CpuSet;
use crate::plan::units::{CoreTypes, unit_of};
use crate::request::Unit;
use crate::system::SystemState;
use crate::words::or_dash;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The devices `--show` lists (network interfaces and block devices that
/// are not virtual) on `node` (`None`: unknown, `numa_node` -1 or none),
/// as "eth0 nvme0n1".
fn devices_on(sys: &SystemState, node: Option<i64>) -> String {
    sys.devices
        .iter()
        .filter(|d| match node {
            Some(n) => d.numa_node == Some(n),
            None => d.numa_node.is_none_or(|v| v < 0),
        })
        .map(|d| d.name.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Above this many nodes the default view prints one line per node.
const MANY_NODES: usize = 16;
/// Width the text is wrapped to.
const WIDTH: usize = 79;

fn or_none(c: &CpuSet) -> String {
    if c.is_empty() {
        "none".into()
    } else {
        c.to_compact_list()
    }
}

fn kib(kb: u64) -> String {
    if kb >= 1 << 20 {
        format!("{:.1} GiB", kb as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.0} MiB", kb as f64 / 1024.0)
    }
}

/// Joins `parts` with `sep`, breaking lines before `WIDTH` with `indent`;
/// a part too long for a line of its own is broken between its words.
fn wrap(s: &mut String, first: &str, indent: &str, parts: &[String], sep: &str) {
    let room = WIDTH - indent.len();
    let mut tokens: Vec<(String, &str)> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let lead = if i == 0 { "" } else { sep };
        if p.len() > room {
            for (j, w) in p.split_whitespace().enumerate() {
                tokens.push((w.to_string(), if j == 0 { lead } else { " " }));
            }
        } else {
            tokens.push((p.clone(), lead));
        }
    }
    let mut line = first.to_string();
    let mut fresh = true;
    for (t, lead) in tokens {
        if !fresh && line.len() + lead.len() + t.len() > WIDTH {
            let _ = writeln!(s, "{}", line.trim_end());
            line = format!("{indent}{t}");
        } else {
            line.push_str(if fresh { "" } else { lead });
            line.push_str(&t);
        }
        fresh = false;
    }
    let _ = writeln!(s, "{}", line.trim_end());
}

/// Device IRQs per CPU: how many device IRQs' affinity includes each CPU.
pub fn irqs_per_cpu(sys: &SystemState) -> BTreeMap<u32, usize> {
    let mut m = BTreeMap::new();
    for irq in sys.irqs.list.iter().filter(|i| !i.is_per_cpu()) {
        if let Some(a) = &irq.affinity {
            for c in a.intersection(&sys.online).iter() {
                *m.entry(c).or_insert(0) += 1;
            }
        }
    }
    m
}

/// Cores of online CPUs grouped by (node, package key: the package's
/// first CPU, else its id).
type Groups = BTreeMap<(Option<u32>, Option<u32>), Vec<CpuSet>>;

/// The text of `pinrun --show`; `verbose` adds packages for every node and
/// one line per CPU.
pub fn text(sys: &SystemState, verbose: bool) -> String {
    let mut s = String::new();
    let irqs = irqs_per_cpu(sys);
    let groups = core_groups(sys);
    summary(&mut s, sys, &groups);
    irq_summary(&mut s, sys, &irqs);
    for w in sys.warnings.iter().chain(&sys.topology_issues) {
        wrap(&mut s, "warning: ", "  ", std::slice::from_ref(w), "");
    }
    let many = sys.nodes.len() > MANY_NODES && !verbose;
    let mut last_node = None;
    for ((node, _), cores) in &groups {
        if last_node != Some(*node) {
            last_node = Some(*node);
            match node.and_then(|n| sys.nodes.get(&n)) {
                Some(n) => {
                    let counts = many.then(|| packages_and_cores(&groups, *node));
                    node_line(&mut s, sys, n, counts);
                }
                None => {
                    let _ = writeln!(s, "no NUMA node information:");
                }
            }
        }
        if many {
            continue;
        }
        package_lines(&mut s, sys, cores, &irqs);
    }
    for n in sys.nodes.values().filter(|n| n.cpus.is_empty()) {
        let mem = n.mem_total_kb.map_or(String::new(), |t| {
            format!(", {} ({} free)", kib(t), kib(n.mem_free_kb.unwrap_or(0)))
        });
        let _ = writeln!(s, "node {}: no CPUs{mem}", n.id);
    }
    let unknown = devices_on(sys, None);
    if !unknown.is_empty() {
        wrap(
            &mut s,
            "devices of no known node (numa_node -1 or none): ",
            "  ",
            &[unknown],
            "",
        );
    }
    if many {
        let _ = writeln!(s, "(-v shows packages, cores and every CPU)");
    }
    if verbose {
        cpu_table(&mut s, sys, &irqs);
    }
    s
}

/// CPU `id` with its marks: `*` isolated, `~` nohz_full, `!` outside the
/// allowed set, `^` receives device IRQs (a CPU of `irqs`).
fn mark(sys: &SystemState, irqs: &BTreeMap<u32, usize>, id: u32) -> String {
    let mut t = id.to_string();
    for (on, m) in [
        (sys.isolated.contains(id), '*'),
        (sys.nohz_full.contains(id), '~'),
        (!sys.allowed.contains(id), '!'),
        (irqs.contains_key(&id), '^'),
    ] {
        if on {
            t.push(m);
        }
    }
    t
}

/// The cores of the online CPUs grouped by node and package ([`Groups`]).
fn core_groups(sys: &SystemState) -> Groups {
    let mut groups: Groups = BTreeMap::new();
    let mut seen = CpuSet::new();
    for c in sys.cpus.values().filter(|c| c.online) {
        if seen.contains(c.id) {
            continue;
        }
        let core = sys.core_of(c.id);
        seen = seen.union(&core);
        let pkg = c
            .package_cpus
            .as_ref()
            .and_then(CpuSet::first)
            .or(c.package);
        groups.entry((c.node, pkg)).or_default().push(core);
    }
    groups
}

/// Writes the head of the text to `s`: the online and possible CPUs with
/// the counts of nodes, packages and cores (of `groups`), the offline
/// CPUs, the allowed ones, the isolated, nohz_full and housekeeping ones,
/// and the core types where the machine has them.
fn summary(s: &mut String, sys: &SystemState, groups: &Groups) {
    let ncores: usize = groups.values().map(Vec::len).sum();
    let npkgs = groups
        .keys()
        .map(|(_, p)| *p)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    wrap(
        s,
        "",
        "  ",
        &[
            format!("CPUs {} online", or_none(&sys.online)),
            format!("possible {}", or_none(&sys.possible)),
            crate::words::count(sys.nodes.len(), "node"),
            crate::words::count(npkgs, "package"),
            crate::words::count(ncores, "core"),
        ],
        ", ",
    );
    let offline = sys
        .present
        .union(&sys.cpus.keys().copied().collect())
        .difference(&sys.online);
    if !offline.is_empty() {
        wrap(s, "offline: ", "  ", &[offline.to_compact_list()], "");
    }
    wrap(
        s,
        "allowed: ",
        "  ",
        &[
            or_none(&sys.allowed),
            format!("({}; ! marks CPUs outside it)", sys.allowed_phrase()),
        ],
        " ",
    );
    let housekeeping = sys.online.difference(&sys.isolated.union(&sys.nohz_full));
    wrap(
        s,
        "",
        "  ",
        &[
            format!("isolated (*): {}", or_none(&sys.isolated)),
            format!("nohz_full (~): {}", or_none(&sys.nohz_full)),
            format!("housekeeping: {}", or_none(&housekeeping)),
        ],
        "  ",
    );
    if let Some(types) = CoreTypes::of(sys) {
        wrap(s, "core types: ", "  ", &[types.describe(&sys.online)], "");
    }
}

/// Writes the device IRQs' line to `s`, when there are any: how many, on
/// which CPUs (`irqs`, [`irqs_per_cpu`]; unknown for those without a
/// readable `/proc/irq/N`) and the CPU with the most.
fn irq_summary(s: &mut String, sys: &SystemState, irqs: &BTreeMap<u32, usize>) {
    let device = sys.irqs.list.iter().filter(|i| !i.is_per_cpu()).count();
    if device == 0 {
        return;
    }
    let on: CpuSet = irqs.keys().copied().collect();
    let busiest = irqs
        .iter()
        .max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c)));
    // IRQs without a readable /proc/irq/N (dumps that omit it): their
    // CPUs are unknown, not "none".
    let unknown = sys
        .irqs
        .list
        .iter()
        .filter(|i| !i.is_per_cpu() && i.affinity.is_none())
        .count();
    let head = if unknown == device {
        format!("device IRQs: {device}, on CPUs unknown (no readable /proc/irq/N affinity)")
    } else if unknown > 0 {
        format!(
            "device IRQs (^): {device}, on CPUs {} ({unknown} of them unknown: no readable /proc/irq/N affinity)",
            or_none(&on)
        )
    } else {
        format!("device IRQs (^): {device}, on CPUs {}", or_none(&on))
    };
    wrap(
        s,
        "",
        "  ",
        &[
            head,
            busiest.map_or(String::new(), |(c, n)| format!("(most on CPU {c}: {n})")),
        ],
        " ",
    );
}

/// How many packages and cores `groups` hold on `node`.
fn packages_and_cores(groups: &Groups, node: Option<u32>) -> (usize, usize) {
    let here: Vec<_> = groups.iter().filter(|((nn, _), _)| *nn == node).collect();
    let cores: usize = here.iter().map(|(_, c)| c.len()).sum();
    (here.len(), cores)
}

/// Writes node `n`'s line to `s`: its CPUs, memory, distances and
/// devices; in the one-line-per-node view, `counts`: the numbers of its
/// packages and cores ([`packages_and_cores`]).
fn node_line(
    s: &mut String,
    sys: &SystemState,
    n: &crate::system::Node,
    counts: Option<(usize, usize)>,
) {
    let mut parts = vec![format!("node {}: CPUs {}", n.id, or_none(&n.cpus))];
    if let Some(t) = n.mem_total_kb {
        parts.push(format!(
            "{} ({} free)",
            kib(t),
            kib(n.mem_free_kb.unwrap_or(0))
        ));
    }
    if !n.distances.is_empty() {
        let d: Vec<String> = n.distances.iter().map(|(_, d)| d.to_string()).collect();
        parts.push(format!("distances {}", d.join(" ")));
    }
    let devs = devices_on(sys, Some(i64::from(n.id)));
    if !devs.is_empty() {
        parts.push(format!("devices {devs}"));
    }
    if let Some((packages, cores)) = counts {
        parts.push(format!(
            "{}, {}",
            crate::words::count(packages, "package"),
            crate::words::count(cores, "core")
        ));
    }
    wrap(s, "", "    ", &parts, ", ");
}

/// Writes a package's lines to `s`: its id, cores and CPUs with its
/// placement units ([`package_units`]), then each of its `cores` with
/// its SMT siblings joined by `+` ([`mark`]ed with `irqs`).
fn package_lines(s: &mut String, sys: &SystemState, cores: &[CpuSet], irqs: &BTreeMap<u32, usize>) {
    let cpus = cores.iter().fold(CpuSet::new(), |a, c| a.union(c));
    let first = cpus.first().and_then(|c| sys.cpus.get(&c));
    let mut parts = vec![format!(
        "  package {}: {}, CPUs {}",
        or_dash(first.and_then(|c| c.package)),
        crate::words::count(cores.len(), "core"),
        cpus.to_compact_list()
    )];
    parts.extend(package_units(sys, &cpus, cores.len()));
    wrap(s, "", "    ", &parts, "; ");
    let items: Vec<String> = cores
        .iter()
        .map(|core| {
            core.iter()
                .map(|id| mark(sys, irqs, id))
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    wrap(s, "    ", "    ", &items, " ");
}

/// The units of a package of `cpus` and `ncores` cores (pinrun(1)
/// PLACEMENT UNITS), one part each: its LLCs, and its dies and clusters
/// only when they split it further than cores do.
fn package_units(sys: &SystemState, cpus: &CpuSet, ncores: usize) -> Vec<String> {
    let mut parts = Vec::new();
    for unit in [Unit::Die, Unit::Llc, Unit::Cluster] {
        let mut groups: Vec<&CpuSet> = cpus.iter().filter_map(|c| unit_of(sys, c, unit)).collect();
        groups.sort_by_key(|g| g.first());
        groups.dedup();
        let split = match unit {
            Unit::Llc => true,
            Unit::Die => groups.len() > 1,
            Unit::Cluster => groups.len() > 1 && groups.len() < ncores,
        };
        match groups.len() {
            0 => {}
            _ if !split => {}
            1 => parts.push(format!("{} {}", unit.name(), groups[0].to_compact_list())),
            n => parts.push(format!(
                "{n} {}s: {}",
                unit.name(),
                groups
                    .iter()
                    .map(|g| g.to_compact_list())
                    .collect::<Vec<_>>()
                    .join(" | ")
            )),
        }
    }
    parts
}

/// Writes `-v`'s table to `s`: one line per CPU with its marks (`irqs`),
/// online state, node, package, die, cluster, core, siblings, LLC and its
/// device IRQs' count (lists cut at 12 columns).
fn cpu_table(s: &mut String, sys: &SystemState, irqs: &BTreeMap<u32, usize>) {
    let _ = writeln!(
        s,
        "CPU    online node pkg  die clu core siblings     llc          irqs"
    );
    for c in sys.cpus.values() {
        let cut = |t: String| {
            if t.len() > 12 {
                format!("{}…", &t[..11])
            } else {
                t
            }
        };
        let _ = writeln!(
            s,
            "{:<6} {:<6} {:<4} {:<4} {:<3} {:<3} {:<4} {:<12} {:<12} {}",
            mark(sys, irqs, c.id),
            if c.online { "yes" } else { "no" },
            or_dash(c.node),
            or_dash(c.package),
            or_dash(c.die),
            or_dash(c.cluster),
            or_dash(c.core_id),
            cut(if c.online {
                sys.core_of(c.id).to_compact_list()
            } else {
                "-".into()
            }),
            cut(c.llc.as_ref().map_or("-".into(), CpuSet::to_compact_list)),
            irqs.get(&c.id).copied().unwrap_or(0)
        );
    }
}

/// `--show`'s who-runs-where (issue 18): for each online CPU, the
/// real-time threads (`rt N`, their `rt_priority`; `PID` for a main
/// thread, `PID/TID` for another) and the pinned ones
/// (`pinned`: an affinity narrower than the online CPUs) allowed on it,
/// from [`crate::system::rt_tasks::read_placed_tasks`]; a CPU with none is
/// left out, and so is the section when no process is real-time or pinned.
pub fn who_runs_where(tasks: &[crate::system::rt_tasks::RtTask], online: &CpuSet) -> String {
    let mut s = String::new();
    for cpu in online.iter() {
        let on: Vec<String> = tasks
            .iter()
            .filter(|t| t.cpus.contains(cpu))
            .map(|t| {
                let how = if t.priority > 0 {
                    format!("rt {}", t.priority)
                } else {
                    "pinned".to_string()
                };
                format!("{} {} ({how}, {})", t.id(), t.comm, t.state)
            })
            .collect();
        if !on.is_empty() {
            s.push_str(&format!("  CPU {cpu}: {}\n", on.join(", ")));
        }
    }
    if s.is_empty() {
        return s;
    }
    format!(
        "who runs where (real-time and pinned threads, PID or PID/TID, comm (rt PRIORITY or pinned, state)):\n{s}"
    )
}
