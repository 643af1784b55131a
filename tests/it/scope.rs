//! A scoped read (`SystemState::read_scoped` with `Scope::for_request`)
//! must give the planner and the checks exactly what a full read gives:
//! same plan or same refusal, and the same findings (codes, severities,
//! CPUs, nodes, IRQs, messages, hints: compared as JSON) on every fixture
//! machine and a spread of requests (placements, memory policies,
//! scheduling policies, `--check`, `--emit`, refusals included). Each side
//! goes through what `main` does between the read and the report:
//! `plan`, then `read_extras` for the checked CPUs, then `check`.
//!
//! Besides the 91 fixture dumps, a few synthetic machines cover what no
//! dump has (isolated CPUs, RT group scheduling, RT throttling with an
//! rlimit, a finite RLIMIT_RTTIME with CAP_SYS_NICE, a kernel release, governors, a node short of memory, packages
//! numbered against the node order, IRQs in `/sys/kernel/irq`, whose names and counts a
//! scoped read takes only for the checked CPUs). `scope_is_tight` shows the comparison has teeth: dropping any part of
//! the scope makes some fixture and request differ.

use crate::common;

use clap::Parser;
use pinrun::app::scope::{for_request, read_extras_for};
use pinrun::cli::Cli;
use pinrun::policy::Policy;
use pinrun::request::{Mode, Request};
use pinrun::system::{Cpus, Root, Scope, SystemState};
use pinrun::{check, plan, report};
use std::path::{Path, PathBuf};

/// Every machine dump (directories with `sys/devices/system/cpu`).
fn dumps() -> Vec<PathBuf> {
    common::all_machines()
        .iter()
        .map(|m| common::machine(m))
        .filter(|p| p.join("sys/devices/system/cpu").is_dir())
        .collect()
}

/// An 8-CPU machine (2 packages of 2 cores of 2 threads; node 0 holds
/// package 1's CPUs 4-7 and node 1 package 0's CPUs 0-3, so that the
/// compact order by package_cpus differs from CPU order) plus `extra`
/// files: what the fixtures lack (isolated CPUs with non-isolated
/// siblings, RT group scheduling, RT throttling, governors, low memory,
/// IRQs pinned to some CPUs).
fn synthetic(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = common::tempdir();
    let cpu = "sys/devices/system/cpu";
    let node = "sys/devices/system/node";
    let mut files: Vec<(String, String)> = vec![
        (format!("{cpu}/online"), "0-7\n".into()),
        (format!("{cpu}/possible"), "0-7\n".into()),
        (format!("{cpu}/isolated"), "\n".into()),
        (format!("{cpu}/nohz_full"), "  (null)\n".into()),
        (format!("{node}/online"), "0-1\n".into()),
        (format!("{node}/has_memory"), "0-1\n".into()),
        (format!("{node}/node0/cpulist"), "4-7\n".into()),
        (format!("{node}/node1/cpulist"), "0-3\n".into()),
        (format!("{node}/node0/distance"), "10 21\n".into()),
        (format!("{node}/node1/distance"), "21 10\n".into()),
        (
            format!("{node}/node0/meminfo"),
            "Node 0 MemTotal: 8388608 kB\nNode 0 MemFree: 4194304 kB\n".into(),
        ),
        (
            format!("{node}/node1/meminfo"),
            "Node 1 MemTotal: 8388608 kB\nNode 1 MemFree: 65536 kB\n".into(),
        ),
        ("proc/cmdline".into(), "ro quiet\n".into()),
        ("proc/sys/kernel/numa_balancing".into(), "1\n".into()),
        (
            "proc/interrupts".into(),
            "           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7\n 24:  1  2  3  4  5  6  7  8  PCI-MSI 1-edge  eth0\n 25:  0  0  0  0  9  9  9  9  PCI-MSI 2-edge  nvme0q1\nLOC:  1  1  1  1  1  1  1  1  Local timer interrupts\n".into(),
        ),
        ("proc/irq/24/effective_affinity_list".into(), "2\n".into()),
        ("proc/irq/25/smp_affinity".into(), "f0\n".into()),
        ("proc/irq/default_smp_affinity".into(), "ff\n".into()),
    ];
    for c in 0..8u32 {
        let t = format!("{cpu}/cpu{c}/topology");
        let (core, pkg) = (c / 2, c / 4);
        let sib = format!("{},{}\n", core * 2, core * 2 + 1);
        files.push((format!("{t}/core_cpus_list"), sib));
        files.push((format!("{t}/core_id"), format!("{}\n", core % 2)));
        // Package ids against the node order: package 1 is node 0.
        files.push((format!("{t}/physical_package_id"), format!("{}\n", 1 - pkg)));
        files.push((
            format!("{t}/package_cpus_list"),
            format!("{}-{}\n", pkg * 4, pkg * 4 + 3),
        ));
        let gov = if c % 3 == 0 {
            "powersave"
        } else {
            "performance"
        };
        files.push((
            format!("{cpu}/cpu{c}/cpufreq/scaling_governor"),
            format!("{gov}\n"),
        ));
    }
    common::write_tree(dir.path(), files, extra);
    dir
}

/// IRQs also in `/sys/kernel/irq` (a kernel ≥ 4.17), matching the
/// synthetic `/proc/interrupts` plus IRQ 27, listed with a count on CPU 6
/// that its `per_cpu_count`, cut at a page, lacks (read from
/// `/proc/interrupts`), and IRQ 26, allocated without a handler (not
/// listed); the scoped read details only the IRQs on the checked CPUs.
const SYSFS_IRQS: &[(&str, &str)] = &[
    (
        "proc/interrupts",
        "           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7\n 24:  1  2  3  4  5  6  7  8  PCI-MSI 1-edge  eth0\n 25:  0  0  0  0  9  9  9  9  PCI-MSI 2-edge  nvme0q1\n 27:  0  0  0  0  0  0  6  0  PCI-MSI 3-edge  dev27\nLOC:  1  1  1  1  1  1  1  1  Local timer interrupts\n",
    ),
    ("sys/kernel/irq/24/actions", "eth0\n"),
    ("sys/kernel/irq/24/per_cpu_count", "1,2,3,4,5,6,7,8\n"),
    ("sys/kernel/irq/24/chip_name", "PCI-MSI\n"),
    ("sys/kernel/irq/24/hwirq", "1\n"),
    ("sys/kernel/irq/24/name", "edge\n"),
    ("sys/kernel/irq/25/actions", "nvme0q1\n"),
    ("sys/kernel/irq/25/per_cpu_count", "0,0,0,0,9,9,9,9\n"),
    ("sys/kernel/irq/25/chip_name", "PCI-MSI\n"),
    ("sys/kernel/irq/25/hwirq", "2\n"),
    ("sys/kernel/irq/25/name", "edge\n"),
    ("sys/kernel/irq/26/actions", ""),
    ("sys/kernel/irq/26/per_cpu_count", "0,0,0,0,0,0,0,0\n"),
    ("proc/irq/26/smp_affinity_list", "0-7\n"),
    ("sys/kernel/irq/27/actions", "dev27\n"),
    ("sys/kernel/irq/27/per_cpu_count", "0,0,0,0,0,0,"),
    ("proc/irq/27/effective_affinity_list", "6\n"),
];

/// The synthetic machines: plain, with IRQs in `/sys/kernel/irq`, with isolated CPUs whose siblings are
/// not isolated (and a caller whose affinity leaves them out), with RT
/// group scheduling (no runtime) and RT throttling.
fn synthetics() -> Vec<tempfile::TempDir> {
    vec![
        synthetic(&[]),
        synthetic(SYSFS_IRQS),
        synthetic(&[
            ("sys/devices/system/cpu/isolated", "2,5-7\n"),
            ("sys/devices/system/cpu/nohz_full", "5-7\n"),
        ]),
        // A caller under isolcpus (init's affinity: every CPU but the
        // isolated ones) in a cgroup v2 cpuset of every CPU: the affinity
        // is no narrowing of the choice.
        synthetic(&[
            ("sys/devices/system/cpu/isolated", "2,5-7\n"),
            ("sys/devices/system/cpu/nohz_full", "5-7\n"),
            ("proc/self/status", "Cpus_allowed_list:\t0-1,3-4\n"),
            ("proc/self/cgroup", "0::/\n"),
            (
                "proc/self/mountinfo",
                "35 31 0:29 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            ),
            ("sys/fs/cgroup/cpuset.cpus.effective", "0-7\n"),
            ("sys/fs/cgroup/cpuset.mems.effective", "0-1\n"),
        ]),
        synthetic(&[
            ("proc/self/cgroup", "4:cpu,cpuacct:/batch\n"),
            (
                "proc/self/mountinfo",
                "35 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
            ),
            ("sys/fs/cgroup/cpu,cpuacct/batch/cpu.rt_runtime_us", "0\n"),
            ("proc/sys/kernel/sched_rt_runtime_us", "950000\n"),
            ("proc/sys/kernel/sched_rt_period_us", "1000000\n"),
            ("proc/self/status", "CapEff:\t0000000000000000\n"),
            (
                "proc/self/limits",
                "Limit                     Soft Limit           Hard Limit           Units\nMax realtime priority     5                    5\n",
            ),
        ]),
        synthetic(&[
            ("proc/sys/kernel/sched_rt_runtime_us", "950000\n"),
            ("proc/sys/kernel/sched_rt_period_us", "1000000\n"),
            ("proc/self/status", "CapEff:\t0000000000000000\n"),
            (
                "proc/self/limits",
                "Limit                     Soft Limit           Hard Limit           Units\nMax realtime priority     20                   20\n",
            ),
            // No dump carries a kernel release: 6.1 has SCHED_DEADLINE
            // period bounds (5.9); memory policy modes are asked of the
            // kernel, never judged by the release.
            ("proc/sys/kernel/osrelease", "6.1.0-test\n"),
        ]),
        // A finite RLIMIT_RTTIME with CAP_SYS_NICE: the limits are read
        // for every policy request, the capability notwithstanding.
        synthetic(&[
            ("proc/self/status", "CapEff:\t0000000000800000\n"),
            (
                "proc/self/limits",
                "Limit                     Soft Limit           Hard Limit           Units\nMax realtime priority     0                    0\nMax realtime timeout      100000               200000               us\n",
            ),
        ]),
        // A PREEMPT_DYNAMIC kernel under preempt=none (issue 36): the
        // preemption model is read for a real-time --check.
        synthetic(&[(
            "sys/kernel/debug/sched/preempt",
            "(none) voluntary full lazy \n",
        )]),
    ]
}

/// The nodes the per-node requests name: every node of a machine with up
/// to 8, else the first two, the last two and the first of each kind
/// (with or without CPUs, with or without memory): ia64-512cpus's 128
/// nodes of 4 CPUs each would add 1 100 requests that differ only in the
/// node number.
fn sample_nodes(full: &SystemState) -> Vec<u32> {
    let ids: Vec<u32> = full.nodes.keys().copied().collect();
    if ids.len() <= 8 {
        return ids;
    }
    let mut pick: std::collections::BTreeSet<u32> = ids[..2]
        .iter()
        .chain(&ids[ids.len() - 2..])
        .copied()
        .collect();
    let mut kinds = std::collections::BTreeSet::new();
    for (id, n) in &full.nodes {
        if kinds.insert((n.cpus.is_empty(), n.has_memory)) {
            pick.insert(*id);
        }
    }
    pick.into_iter().collect()
}

fn requests(full: &SystemState) -> Vec<Vec<String>> {
    let mut reqs: Vec<Vec<String>> = [
        "",
        "--check",
        "--check --cpus 0",
        "--check --cores 1",
        "--check --cores 2 --smt --fifo 10",
        "--check --isolated",
        "--check --interleave all",
        "--check --membind --cores 1",
        "--cpus 0",
        "--cpus 1",
        "--cpus 0-3",
        "--cpus 0,2",
        "--cpus 0-1 --smt",
        "--cpus 9999",
        "--cores 1",
        "--cores 2 --smt",
        "--cores 4",
        "--cores 100000",
        "--cores 1 --exclusive",
        "--isolated",
        "--isolated --cores 1",
        "--isolated --cores 2 --smt",
        "--cpus 0 --isolated",
        "--membind --cores 1",
        "--membind --cpus 0",
        "--membind",
        "--interleave all",
        "--interleave all --cores 2",
        "--weighted-interleave all --cpus 0",
        "--localalloc --cpus 1",
        "--fifo 10",
        "--fifo 10 --cpus 0",
        "--fifo 99 --cores 1",
        "--rr 99",
        "--fifo 10 --nice 5",
        "--nice 5",
        "--batch --cpus 1",
        "--other --cores 1",
        "--deadline --sched-runtime 1ms --sched-period 10ms",
        // Beyond the default sched_deadline_period_max_us (4.19 s): refused
        // on a dump of a kernel known to be 5.9 or later without the
        // sysctls, planned when the release is not read.
        "--deadline --sched-runtime 1ms --sched-period 5s",
        "--deadline --sched-runtime 1ms --sched-period 10ms --cpus 0",
        "--deadline --sched-runtime 1ms --sched-period 10ms --reset-on-fork",
        "--deadline --sched-runtime 1ms --sched-period 10ms --cores 1",
        "--deadline --sched-runtime 1ms --sched-period 10ms --isolated",
        "--node 0 --cpus 0",
        "--node 0 --cores 1 --fifo 10 --membind",
        "--emit systemd --cores 1 --fifo 50 --membind",
        "--llc 1",
        "--llc 2 --cores 1",
        "--dies 1",
        "--clusters 1 --smt --cores 1",
        "--cores 6",
        "--core-type performance",
        "--core-type efficiency --cores 1",
        "--core-type efficiency --cpus 0",
        "--fifo 10 --cpus 1",
        "--near ib0 --cores 1 --membind",
        "--near eth0 --near-irqs avoid",
        "--near nvme0n1",
        "--emit systemd --cpus 0 --deadline --sched-runtime 1ms --sched-period 10ms",
    ]
    .iter()
    .map(|s| s.split_whitespace().map(String::from).collect())
    .collect();
    for n in sample_nodes(full).into_iter().chain([999]) {
        for a in [
            format!("--membind={n}"),
            format!("--membind={n} --cores 1"),
            format!("--node {n}"),
            format!("--node {n} --cores 1 --smt"),
            format!("--node {n} --check"),
            format!("--node {n} --llc 1"),
            format!("--node {n} --cores 2 --core-type performance"),
            format!("--preferred {n}"),
            format!("--preferred {n} --cores 1"),
            format!("--preferred-many {n} --node {n}"),
            format!("--interleave {n} --cpus 0"),
        ] {
            reqs.push(a.split_whitespace().map(String::from).collect());
        }
    }
    // Launches (no --dry-run): a plain one shows warnings only, `-v` also
    // info, `--quiet` nothing (unless --strict); what no finding it can
    // show needs is not read.
    for base in [
        "--cpus 0",
        "--cpus 1",
        "--cpus 2",
        "--cpus 0-3 --smt",
        "--cpus 0 --node 0",
        "--cpus 1 --exclusive",
        "--cpus 0-3 --cores 1",
        // Latency intent inside named CPUs (issue 31): the rule ranks by
        // IRQs and PID 1's affinity, read whatever the launch prints.
        "--cpus 0-3 --cores 1 --exclusive",
        "--cpus 0-3 --cores 1 --fifo 10",
        "--cores 2 --exclusive",
        "--cpus 2 --housekeeping",
        "--cpus 2 --deadline --sched-runtime 1ms --sched-period 10ms",
        "--cores 1",
        "--isolated",
        "--membind --cores 1",
        "--fifo 10 --cpus 0",
        "--node 0 --cores 1 --fifo 10 --membind",
    ] {
        for out in ["", "-v", "--quiet", "--quiet --strict", "--quiet -v"] {
            reqs.push(
                format!("{LAUNCH} {out} {base}")
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
            );
        }
    }
    let last = full.cpus.keys().next_back().copied().unwrap_or(0);
    for id in [last, last.saturating_sub(1)] {
        reqs.push(vec!["--cpus".into(), id.to_string()]);
        reqs.push(vec!["--cpus".into(), format!("0-{id}")]);
        reqs.push(vec!["--check".into(), "--cpus".into(), id.to_string()]);
    }
    reqs
}

/// Marks a request as a launch: no `--dry-run`, a command after `--`.
const LAUNCH: &str = "@launch";

fn parse(dump: &Path, args: &[String]) -> Option<Request> {
    let launch = args.first().is_some_and(|a| a == LAUNCH);
    let args = &args[usize::from(launch)..];
    let mode_given = args
        .iter()
        .any(|a| a == "--check" || a == "--emit" || a == "--show");
    let mut argv: Vec<String> = vec!["pinrun".into(), "--sysroot".into()];
    argv.push(dump.display().to_string());
    // A launch below --sysroot is refused on the command line: it is
    // parsed as the dry run and made a launch (`Mode::Run`) after, as the
    // request of the same launch on the live machine (the dry run differs
    // from it in its mode only). Without this, every launch request was
    // refused and left out of the comparison.
    if !mode_given {
        argv.push("--dry-run".into());
    }
    argv.extend(args.iter().cloned());
    if launch || args.iter().any(|a| a == "--emit") {
        argv.extend(["--".into(), "/bin/true".into()]);
    }
    let req = Cli::try_parse_from(argv)
        .map_err(|e| e.to_string())
        .and_then(|c| c.into_request().map_err(|e| e.message));
    let mut req = req.ok()?;
    if launch {
        assert_eq!(req.mode, Mode::DryRun, "{args:?}");
        req.mode = Mode::Run;
    }
    Some(req)
}

/// What `main` computes from a read: the plan (or refusal) and the
/// findings as JSON.
fn outcome(root: &Root, sys: &SystemState, req: &Request) -> String {
    let p = match plan::plan(sys, req) {
        Ok(p) => p,
        Err(e) => return format!("refused {} {} {:?}", e.code, e.message, e.hint),
    };
    let mut sys = sys.clone();
    let checked = check::checked_cpus(&sys, &p);
    read_extras_for(&mut sys, root, req, &checked, None);
    let findings = check::check(&sys, req, &p);
    format!("{p:?}\n{}", report::findings_json(&findings))
}

/// Scoped reads of one dump, by scope (many requests share one).
type Reads = Vec<(Scope, SystemState)>;

/// Compares every request on each of `dumps` (panics on a mismatch);
/// returns the number of requests compared.
fn run(dumps: &[PathBuf], scope_of: &dyn Fn(&Request) -> Scope) -> usize {
    let mut compared = 0;
    each_request(dumps, &mut |dump, root, full, reads, args, req| {
        let scoped = scoped_read(reads, root, scope_of(req));
        compared += 1;
        let near = near_read(root, req);
        let a = outcome(root, near.as_ref().unwrap_or(full), req);
        let b = outcome(root, scoped, req);
        assert_eq!(a, b, "{} {args:?}: scoped read differs", dump.display());
        true
    });
    compared
}

/// What [`each_request`] calls: the machine's path, root and full read,
/// its scoped reads so far, and one request (its arguments, parsed);
/// `false` stops the walk.
type OnRequest<'f> =
    dyn FnMut(&Path, &Root, &SystemState, &mut Reads, &[String], &Request) -> bool + 'f;

/// Calls `f` for every request of [`requests`] that parses on each of
/// `dumps`, in order, until it returns `false`.
fn each_request(dumps: &[PathBuf], f: &mut OnRequest) {
    for dump in dumps {
        let root = Root::new(dump);
        let full = SystemState::read(&root);
        let mut reads = Reads::new();
        for args in requests(&full) {
            let Some(req) = parse(dump, &args) else {
                continue;
            };
            if !f(dump, &root, &full, &mut reads, &args, &req) {
                return;
            }
        }
    }
}

/// The read of `scope` among `reads` (one machine's scoped reads so far),
/// made and kept when it is not there yet.
fn scoped_read<'r>(reads: &'r mut Reads, root: &Root, scope: Scope) -> &'r SystemState {
    let i = match reads.iter().position(|(s, _)| *s == scope) {
        Some(i) => i,
        None => {
            let sys = SystemState::read_scoped(root, &scope);
            reads.push((scope, sys));
            reads.len() - 1
        }
    };
    &reads[i].1
}

/// The full read of a request that names a device (`--near`): it
/// includes that device, which nothing else could know; `None` without
/// `--near` (the plain full read stands).
fn near_read(root: &Root, req: &Request) -> Option<SystemState> {
    let spec = req.placement.near.as_ref()?;
    Some(SystemState::read_scoped(
        root,
        &Scope {
            near: Some(spec.clone()),
            ..Scope::full()
        },
    ))
}

/// The scoped read agrees with the full read on every request on every
/// machine of `source` (71 requests, more on many-node machines): one test
/// per source, so that the harness runs them in parallel.
/// `source` may be `name:i/n`: the i-th of n parts of its machines (every
/// n-th machine from the i-th), for a source too big for one test.
fn scoped_like_full(source: &str) {
    let (source, i, n) = match source.split_once(':') {
        Some((s, part)) => {
            let (i, n) = part.split_once('/').unwrap();
            (s, i.parse().unwrap(), n.parse().unwrap())
        }
        None => (source, 0, 1),
    };
    let dumps: Vec<PathBuf> = common::machines(source)
        .iter()
        .skip(i)
        .step_by(n)
        .map(|m| common::machine(m))
        .collect();
    assert!(!dumps.is_empty(), "no machine in {source}");
    let compared = run(&dumps, &for_request);
    assert!(
        compared > dumps.len() * 50,
        "{source}: only {compared} requests compared on {} machines",
        dumps.len()
    );
}

macro_rules! scoped_like_full {
    ($($name:ident = $source:literal),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                scoped_like_full($source);
            }
        )*
        /// Every fixture source has its test above.
        #[test]
        fn every_source_is_compared() {
            let sources: Vec<String> = std::fs::read_dir(common::archives())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let mut sources = sources;
            sources.sort();
            // (a split source, hwloc:0/2 and hwloc:1/2, counts once)
            let mut listed: Vec<&str> = [$($source),*]
                .iter()
                .map(|s| s.split(':').next().unwrap())
                .collect();
            listed.sort();
            listed.dedup();
            assert_eq!(sources, listed);
        }
    };
}

scoped_like_full! {
    scoped_read_like_full_cadvisor = "cadvisor",
    scoped_read_like_full_cri_resource_manager = "cri-resource-manager",
    scoped_read_like_full_ghw = "ghw",
    scoped_read_like_full_hwloc_0 = "hwloc:0/2",
    scoped_read_like_full_hwloc_1 = "hwloc:1/2",
    scoped_read_like_full_iree = "iree",
    scoped_read_like_full_nri_plugins = "nri-plugins",
    scoped_read_like_full_nto = "nto",
    scoped_read_like_full_util_linux = "util-linux",
    scoped_read_like_full_util_linux_chcpu = "util-linux-chcpu",
    scoped_read_like_full_util_linux_historical = "util-linux-historical",
}

/// The same on the synthetic machines (what no dump has).
#[test]
fn scoped_read_like_full_synthetic() {
    let synthetic = synthetics();
    let dumps: Vec<PathBuf> = synthetic.iter().map(|t| t.path().to_path_buf()).collect();
    let compared = run(&dumps, &for_request);
    assert!(
        compared > dumps.len() * 50,
        "only {compared} requests compared"
    );
}

/// Dropping any part of the scope shows up as a difference somewhere (in
/// the fixtures or the synthetic machines): the comparison above would
/// catch a scope that is too narrow.
#[test]
fn scope_is_tight() {
    type Narrow = fn(&mut Scope, &Request);
    let narrowed: [(&str, Narrow); 15] = [
        ("the --near device", |s, _| s.near = None),
        ("the isolation sets", |s, _| s.isolation = false),
        // Each request `for_request` keeps them for although it names its
        // CPUs and uses no finding: each exclusion is needed.
        ("the isolation sets of a --housekeeping launch", |s, r| {
            if r.placement.housekeeping && !r.uses_findings() {
                s.isolation = false;
            }
        }),
        ("the isolation sets of a SCHED_DEADLINE launch", |s, r| {
            if r.sched.policy.is_some_and(Policy::is_deadline) && !r.uses_findings() {
                s.isolation = false;
            }
        }),
        ("the isolation sets of a --cores launch", |s, r| {
            if r.placement.cores.is_some() && !r.uses_findings() {
                s.isolation = false;
            }
        }),
        ("placement units and core types", |s, _| s.units = false),
        ("topology of --cores candidates", |s, r| {
            if r.placement.cores.is_some() && s.topology == Cpus::All {
                s.topology = Cpus::None;
            }
        }),
        ("siblings of isolated CPUs without placement", |s, _| {
            if s.topology == Cpus::None {
                s.topology = Cpus::Only(Default::default());
            }
        }),
        ("node meminfo and distance", |s, _| s.memory = false),
        ("RT throttling sysctls and RLIMIT_RTPRIO", |s, _| {
            s.rt = false
        }),
        ("RT group scheduling", |s, _| s.sched = false),
        ("the kernel release", |s, _| s.kernel = false),
        ("IRQs", |s, _| s.irqs = false),
        ("numa_balancing", |s, _| s.info = false),
        ("the preemption model", |s, _| s.preempt = false),
    ];
    // The synthetic machines first: they hold what most narrowings break,
    // and the search stops at the first difference.
    let synthetic = synthetics();
    let dumps: Vec<PathBuf> = synthetic
        .iter()
        .map(|t| t.path().to_path_buf())
        .chain(dumps())
        .collect();
    // One pass over the machines and requests for every narrowing at once
    // (the full read and its outcome made once per request, the scoped
    // reads shared by the narrowings that ask the same scope), until each
    // narrowing has a witness: a request whose outcome it changes.
    let mut witness: Vec<Option<String>> = vec![None; narrowed.len()];
    each_request(&dumps, &mut |dump, root, full, reads, args, req| {
        let near = near_read(root, req);
        let a = outcome(root, near.as_ref().unwrap_or(full), req);
        for ((_, narrow), w) in narrowed.iter().zip(&mut witness) {
            if w.is_some() {
                continue;
            }
            let mut scope = for_request(req);
            narrow(&mut scope, req);
            if outcome(root, scoped_read(reads, root, scope), req) != a {
                *w = Some(format!("{} {args:?}", dump.display()));
            }
        }
        !witness.iter().all(Option::is_some)
    });
    for ((what, _), w) in narrowed.iter().zip(&witness) {
        assert!(
            w.is_some(),
            "dropping {what} from the scope changed no plan or finding"
        );
    }
}

/// `--show` reads everything.
#[test]
fn show_reads_everything() {
    let req = Cli::try_parse_from(["pinrun", "--show"])
        .unwrap()
        .into_request()
        .unwrap();
    assert_eq!(for_request(&req), Scope::full());
}
