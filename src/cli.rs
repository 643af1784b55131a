//! The command line (clap derive, the only definition of the options) and
//! its validation into a [`Request`]. Nothing is read or changed here.

use crate::cpuset::{CpuSet, NodeSet};
use crate::error::{Error, ErrorCode, Result};
use crate::finding::Code;
use crate::request::{
    Choose, ClaimRequest, CoreType, EmitFormat, FleetRequest, HostRequest, HostSize, MemoryRequest,
    Mode, NearIrqs, NodeChoice, OmpPlaces, Output, Placement, Policy, Request, SchedRequest,
    Target, ThreadRequest, ThreadRule, Unit, Within,
};
use clap::{ArgGroup, Parser, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// Kernel limit for `SCHED_FIFO`/`SCHED_RR` static priorities (`sched(7)`).
const MAX_RT_PRIO: u32 = 99;

/// Formats `--emit` can print the plan in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// systemd `[Service]` directives (`systemd.exec(5)`).
    Systemd,
    /// A Kubernetes container resources stanza for kubelet's static CPU
    /// manager, with the CRI-O annotations as comments.
    K8s,
    /// srun --cpu-bind=map_cpu:/mask_cpu: for N tasks per node: `--emit
    /// slurm N`.
    Slurm,
}

/// The bounds `--within` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WithinArg {
    /// The affinity pinrun inherited (taskset, systemd CPUAffinity=, a batch
    /// scheduler's binding): Cpus_allowed_list of /proc/self/status
    Inherited,
    /// The caller's cgroup cpuset (its online effective CPUs)
    Cgroup,
}

/// How `--omp` forms OpenMP places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OmpArg {
    /// One place per planned core, in plan order (with --smt: its planned
    /// SMT siblings)
    Cores,
    /// One place per planned CPU
    Threads,
}

/// How `--probe` measures (`--probe-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeModeArg {
    /// A tight loop reading a clock on each CPU; every gap between two
    /// reads is a sample (oslat, sysjitter): what a polling program sees
    Spin,
    /// Sleeps to an absolute deadline every --probe-interval; a sample is
    /// how late the wake-up was (cyclictest): what an event-driven program sees
    Wakeup,
}

/// The kernel tracers `--probe-tracer` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeTracerArg {
    /// The osnoise tracer without its workload, in a tracefs instance of
    /// pinrun's own: every IRQ, softirq, thread and NMI on the probed CPUs,
    /// timed (Documentation/trace/osnoise-tracer.rst)
    Osnoise,
}

/// The core types `--core-type` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CoreTypeArg {
    /// Performance cores: cpu_core on Intel hybrids, the highest
    /// cpu_capacity on arm64/RISC-V
    Performance,
    /// Efficiency cores: cpu_atom on Intel hybrids, a cpu_capacity below
    /// the highest on arm64/RISC-V
    Efficiency,
}

/// What `--near-irqs` does with the CPUs the device's IRQs are steered to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NearIrqsArg {
    /// Leave them out of the placement
    Avoid,
    /// Choose only among them
    Share,
}

/// Files pinrun can generate from this definition (`--generate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generate {
    /// The man page pinrun(1) (man/pinrun.1)
    Man,
    /// bash completion (completions/pinrun.bash)
    Bash,
    /// zsh completion (completions/_pinrun)
    Zsh,
    /// fish completion (completions/pinrun.fish)
    Fish,
}

/// Run a command on chosen CPUs, NUMA memory policy and scheduling policy,
/// after checking that the CPUs exist, are online and allowed.
///
/// pinrun reads the live topology (sysfs, procfs, the caller's cgroup),
/// resolves the request into concrete CPUs, applies memory policy,
/// scheduling policy and CPU affinity to itself, and execs COMMAND in place
/// (same PID). It replaces `numactl ... chrt ... taskset ... COMMAND`.
#[derive(Debug, Parser)]
#[command(
    name = "pinrun",
    version,
    after_help = "Examples:\n  pinrun --node 0 --cores 4 --fifo 90 -- ./app\n  pinrun --cpus 2-7 --cores 2 --membind -- ./app\n  pinrun --dry-run --json --node 1 --cores 2",
    group(ArgGroup::new("mode").args(["dry_run", "check", "show", "emit", "check_emitted"])),
    group(ArgGroup::new("units").args(["llc", "dies", "clusters"])),
    group(ArgGroup::new("policy").args(["fifo", "rr", "other", "batch", "idle", "deadline"])),
    group(ArgGroup::new("mempolicy").args(["membind", "preferred", "preferred_many", "interleave", "weighted_interleave", "localalloc"])),
)]
pub struct Cli {
    /// Run on exactly these CPUs: a cpulist (0-3,8,0-14:2,0-15:2/4) or a
    /// hex cpumask (0xff, 0xff,00000000). Every CPU must exist, be online
    /// and allowed by the cgroup cpuset; all, !LIST (all but) and +LIST
    /// (indices among the task's CPUs, its inherited affinity) as numactl.
    /// Aliases: -C, -c,
    /// --physcpubind (numactl), --cpu-list (taskset -c).
    #[arg(long, short = 'C', short_alias = 'c', visible_aliases = ["physcpubind", "cpu-list"], value_name = "LIST", value_hint = clap::ValueHint::Other, help_heading = "Placement")]
    pub cpus: Option<String>,

    /// Take CPUs from these NUMA nodes (a node list such as 0 or 0,2; all,
    /// !LIST, +LIST as numactl).
    #[arg(long, value_name = "NODES", value_hint = clap::ValueHint::Other, help_heading = "Placement")]
    pub node: Option<String>,

    /// Run on every allowed CPU of NODES: the same as --node NODES alone,
    /// and therefore not combined with --cores, --cpus, --node or
    /// --isolated (which choose among them). Unlike numactl --cpunodebind
    /// (-N), which sets the nodes' CPUs whatever the caller's affinity
    /// (under taskset -c 1, numactl -N 0 runs on all of node 0), the CPUs
    /// are those of NODES the caller may use (there, CPU 1 only); --within
    /// cgroup takes every CPU of NODES its cpuset allows, as numactl does.
    #[arg(long, short = 'N', value_name = "NODES", conflicts_with_all = ["node", "cores", "cpus", "isolated"], value_hint = clap::ValueHint::Other, help_heading = "Placement")]
    pub cpunodebind: Option<String>,

    /// Choose N whole physical cores (all SMT siblings allowed), one CPU of
    /// each. With latency intent (--fifo/--rr/--deadline, --exclusive,
    /// --isolated, --probe, --steer-irqs) the quietest: isolated and
    /// nohz_full first, no device IRQs, never the boot CPU while others fit;
    /// without it, housekeeping cores first. Then compactly (pinrun(1)
    /// CHOOSING CORES).
    #[arg(long, value_name = "N", help_heading = "Placement")]
    pub cores: Option<usize>,

    /// Choose N whole last-level-cache groups (the CPUs sharing an L3 or
    /// the highest cache: an AMD CCX, an Intel package): every allowed CPU
    /// of each, or, with --cores, cores inside them. Compactly, in the
    /// order node, package, die.
    #[arg(long, value_name = "N", conflicts_with_all = ["cpus", "cpunodebind"], help_heading = "Placement")]
    pub llc: Option<usize>,

    /// Choose N whole dies (die_cpus_list), as --llc does for caches;
    /// refused where the kernel exposes no dies.
    #[arg(long, value_name = "N", conflicts_with_all = ["cpus", "cpunodebind"], help_heading = "Placement")]
    pub dies: Option<usize>,

    /// Choose N whole clusters (cluster_cpus_list: CPUs sharing an L2 or a
    /// firmware cluster), as --llc does for caches; refused where the
    /// kernel exposes no clusters.
    #[arg(long, value_name = "N", conflicts_with_all = ["cpus", "cpunodebind"], help_heading = "Placement")]
    pub clusters: Option<usize>,

    /// Choose only CPUs of this core type: Intel hybrids'
    /// /sys/devices/cpu_core/cpus (performance) and cpu_atom/cpus
    /// (efficiency), else arm64's cpu_capacity (the highest is
    /// performance); refused on a machine with one core type. With --cpus,
    /// refuse any of another type.
    #[arg(
        long,
        value_enum,
        value_name = "TYPE",
        conflicts_with = "cpunodebind",
        help_heading = "Placement"
    )]
    pub core_type: Option<CoreTypeArg>,

    /// Choose CPUs of the NUMA node of DEVICE: a network interface (eth0),
    /// a PCI address (0000:3b:00.0 or 3b:00.0), a block device (nvme0n1)
    /// or a file (/data/x: the block device it is on), from the device's
    /// numa_node in sysfs (-1, unknown, is said so); --membind without
    /// NODES binds to that node. Combines with --cores, --llc, --isolated.
    #[arg(long, value_name = "DEVICE", conflicts_with_all = ["cpus", "node", "cpunodebind"], value_hint = clap::ValueHint::Other, help_heading = "Placement")]
    pub near: Option<String>,

    /// With --near, leave out (avoid) or choose only (share) the CPUs the
    /// device's MSI IRQs (a NIC's queues) are steered to; by default they
    /// are only named in the plan.
    #[arg(
        long,
        value_enum,
        value_name = "HOW",
        requires = "near",
        help_heading = "Placement"
    )]
    pub near_irqs: Option<NearIrqsArg>,

    /// With --cores, use every SMT thread of each chosen core.
    #[arg(long, requires = "cores", help_heading = "Placement")]
    pub smt: bool,

    /// Choose only isolated CPUs (isolcpus=, cgroup v2 isolated partitions);
    /// with --cpus, refuse if any is not isolated.
    #[arg(long, help_heading = "Placement")]
    pub isolated: bool,

    /// Where --cores, --node and --isolated choose: inside the inherited
    /// CPU affinity (taskset, systemd CPUAffinity=, a batch scheduler's
    /// per-task binding) or across the cgroup's CPUs. Default: inside the
    /// inherited affinity when it is narrower than the cgroup's CPUs minus
    /// the isolated ones, else across the cgroup (see SOURCES). --cpus may
    /// leave the inherited affinity (with a finding).
    #[arg(long, value_enum, value_name = "BOUND", help_heading = "Placement")]
    pub within: Option<WithinArg>,

    /// How --cores ranks cores: rule (default: by what pinrun reads,
    /// pinrun(1) CHOOSING CORES) or measured[=DURATION]: run the spin probe
    /// (SCHED_OTHER) on every candidate core at once, for 1s by default
    /// (10ms to 10s; --dry-run measures too), and take the N with the
    /// smallest worst gap. Live machine only. Not with --cpus, which
    /// names the CPUs (nothing to choose).
    #[arg(long, value_name = "RULE", help_heading = "Placement")]
    pub choose: Option<String>,

    /// Choose only housekeeping CPUs: allowed CPUs that are neither
    /// isolated nor nohz_full (the kernel's domain and tick housekeeping),
    /// the opposite of --isolated; with --cpus, refuse any that is not.
    #[arg(long, conflicts_with_all = ["isolated", "cpunodebind"], help_heading = "Placement")]
    pub housekeeping: bool,

    /// Claim the chosen cores (every SMT sibling of each) while COMMAND
    /// lives: other pinrun launches skip them (--cores), refuse them
    /// (--cpus) or warn. Choosing and claiming are one atomic step (a lock
    /// on the state directory); see CLAIMS in pinrun(1).
    #[arg(long, help_heading = "Claims")]
    pub exclusive: bool,

    /// Wait for claimed cores to become free instead of refusing, printing
    /// what it waits for; without DURATION as long as it takes
    /// (--wait=30s; units ns, us, ms, s, m, h).
    #[arg(long, value_name = "DURATION", num_args = 0..=1, require_equals = true, default_missing_value = BARE, help_heading = "Claims")]
    pub wait: Option<String>,

    /// Directory of the claim records (default: PINRUN_STATE_DIR when set
    /// and not empty, else /run/pinrun, created with mode 1777 like /tmp).
    #[arg(long, value_name = "DIR", help_heading = "Claims")]
    pub state_dir: Option<PathBuf>,

    /// With --exclusive (root): move every movable IRQ off the claimed
    /// CPUs while COMMAND lives and put it back after (a write-ahead
    /// journal in the state directory; kernel-managed IRQs are reported,
    /// never written); see IRQ STEERING in pinrun(1).
    #[arg(long, help_heading = "Claims")]
    pub steer_irqs: bool,

    /// With --steer-irqs: the CPUs an IRQ goes to when none of its own is
    /// left (default: online CPUs not isolated, not nohz_full, not claimed;
    /// the device's node first).
    #[arg(long, value_name = "LIST", help_heading = "Claims")]
    pub irq_housekeeping: Option<String>,

    /// With --steer-irqs, when irqbalance runs without its control socket:
    /// ban the claimed CPUs in irqbalance.service's configuration file
    /// (its EnvironmentFile=) and restart it, and put the file back and
    /// restart it again when COMMAND ends; see IRQ STEERING in pinrun(1).
    #[arg(long, help_heading = "Claims")]
    pub irqbalance_config: bool,

    /// Allocate memory only on NODES (default: the nodes of the chosen CPUs, or of the task's CPUs without a placement).
    /// Write --membind=NODES, or put -- before the command, when COMMAND
    /// could be read as a node list.
    #[arg(long, short = 'm', value_name = "NODES", num_args = 0..=1, default_missing_value = BARE, value_hint = clap::ValueHint::Other, help_heading = "Memory policy")]
    pub membind: Option<String>,

    /// Prefer memory on NODE, falling back to others.
    #[arg(long, value_name = "NODE", value_hint = clap::ValueHint::Other, help_heading = "Memory policy")]
    pub preferred: Option<u32>,

    /// Prefer memory on any of NODES (Linux 5.15+).
    #[arg(long, value_name = "NODES", value_hint = clap::ValueHint::Other, help_heading = "Memory policy")]
    pub preferred_many: Option<String>,

    /// Interleave memory across NODES, or all nodes with memory.
    #[arg(long, value_name = "NODES|all", value_hint = clap::ValueHint::Other, help_heading = "Memory policy")]
    pub interleave: Option<String>,

    /// Interleave by the kernel's per-node weights (Linux 6.9+).
    #[arg(long, value_name = "NODES|all", value_hint = clap::ValueHint::Other, help_heading = "Memory policy")]
    pub weighted_interleave: Option<String>,

    /// Allocate on the node of the CPU that touches the memory.
    #[arg(long, help_heading = "Memory policy")]
    pub localalloc: bool,

    /// SCHED_FIFO with priority PRIO (1-99).
    #[arg(long, short = 'f', value_name = "PRIO", help_heading = "Scheduling")]
    pub fifo: Option<u32>,

    /// SCHED_RR with priority PRIO (1-99).
    #[arg(long, short = 'r', value_name = "PRIO", help_heading = "Scheduling")]
    pub rr: Option<u32>,

    /// SCHED_OTHER (the default time-sharing policy).
    #[arg(long, help_heading = "Scheduling")]
    pub other: bool,

    /// SCHED_BATCH.
    #[arg(long, help_heading = "Scheduling")]
    pub batch: bool,

    /// SCHED_IDLE.
    #[arg(long, help_heading = "Scheduling")]
    pub idle: bool,

    /// SCHED_DEADLINE; needs --sched-runtime and --sched-deadline or
    /// --sched-period.
    #[arg(long, requires = "sched_runtime", help_heading = "Scheduling")]
    pub deadline: bool,

    /// Deadline runtime T, with a unit: ns, us, ms, s, m or h.
    #[arg(
        long,
        value_name = "T",
        requires = "deadline",
        help_heading = "Scheduling"
    )]
    pub sched_runtime: Option<String>,

    /// Deadline relative deadline T (default: the period).
    #[arg(
        long,
        value_name = "T",
        requires = "deadline",
        help_heading = "Scheduling"
    )]
    pub sched_deadline: Option<String>,

    /// Deadline period T (default: the deadline).
    #[arg(
        long,
        value_name = "T",
        requires = "deadline",
        help_heading = "Scheduling"
    )]
    pub sched_period: Option<String>,

    /// Nice value N (-20..19); default: keep the current one.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Scheduling"
    )]
    pub nice: Option<i32>,

    /// Set SCHED_RESET_ON_FORK: children start with SCHED_OTHER and nice 0
    /// or above.
    #[arg(long, short = 'R', help_heading = "Scheduling")]
    pub reset_on_fork: bool,

    /// A running process instead of a command (`taskset -p`, `chrt -p`):
    /// alone, print each thread's CPUs, last CPU, scheduling policy and
    /// memory; with placement or scheduling options, apply them to every
    /// thread (all or none). PID is a process id, or `self` (pinrun itself,
    /// as `numactl --show`). See RUNNING PROCESSES in pinrun(1).
    #[arg(long, value_name = "PID", value_hint = clap::ValueHint::Other, conflicts_with_all = ["command", "show", "emit", "sysroot"], help_heading = "Running processes")]
    pub pid: Option<String>,

    /// With --pid: only this thread of the process (`taskset -p` without -a).
    #[arg(
        long,
        value_name = "TID",
        requires = "pid",
        help_heading = "Running processes"
    )]
    pub tid: Option<u32>,

    /// With --pid: move the process's pages to the chosen memory nodes
    /// (`migrate_pages(2)`, as migratepages(8)) from the nodes it has; the
    /// only way to change where another process's memory is, since no
    /// system call sets another process's memory policy.
    #[arg(long, requires = "pid", help_heading = "Running processes")]
    pub migrate: bool,

    /// With --migrate: refuse to move more than SIZE (bytes, or with K, M,
    /// G, T: KiB, MiB, GiB, TiB), counted from numa_maps before moving.
    #[arg(
        long,
        value_name = "SIZE",
        requires = "migrate",
        help_heading = "Running processes"
    )]
    pub migrate_limit: Option<String>,

    /// Measure the noise on the chosen CPUs, with the chosen scheduling
    /// policy and priority, before running COMMAND (default 1s, at most
    /// 60s; --probe=5s): per CPU the gaps above the threshold (spin: a
    /// histogram, their count, the time lost, the largest) or the wake-up
    /// latencies (wakeup: min, p50, p99, p99.9, max, a histogram), and
    /// what interrupted the CPU (IRQs, the timer tick, softirqs, tasks). Without COMMAND, only report (--json for JSON).
    /// Not with --deadline (a deadline task cannot be pinned to one CPU of
    /// its root domain). See PROBE in pinrun(1).
    #[arg(long, value_name = "DURATION", num_args = 0..=1, require_equals = true, default_missing_value = BARE, conflicts_with_all = ["dry_run", "check", "show", "emit", "check_emitted", "sysroot", "dump", "deadline"], help_heading = "Probe")]
    pub probe: Option<String>,

    /// What --probe measures: spin (default) or wakeup.
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Probe")]
    pub probe_mode: Option<ProbeModeArg>,

    /// Gaps (or wake-up latencies) above T are counted and their time is
    /// lost time (default 1us; wakeup: 100us, above a SCHED_OTHER
    /// thread's 50us timer slack).
    #[arg(long, value_name = "T", help_heading = "Probe")]
    pub probe_threshold: Option<String>,

    /// Wake-up interval of --probe-mode wakeup (default 1ms, as cyclictest;
    /// at least 10us, below which the timer slack and the hrtimer's own
    /// expiry are all the probe would see).
    #[arg(long, value_name = "T", help_heading = "Probe")]
    pub probe_interval: Option<String>,

    /// Refuse the launch (exit 125) when a probed CPU's worst gap (wakeup:
    /// latest wake-up) exceeds T, naming the CPU, the gap and its most
    /// likely source.
    #[arg(long, value_name = "T", help_heading = "Probe")]
    pub probe_max: Option<String>,

    /// Hold /dev/cpu_dma_latency open with US microseconds written (default
    /// 0, as cyclictest does) during the probe only, closed before COMMAND
    /// runs: idle states slower than US to leave are not entered meanwhile.
    /// Never by default (the probe then sees the idle states COMMAND gets).
    #[arg(long, value_name = "US", num_args = 0..=1, require_equals = true, default_missing_value = BARE, help_heading = "Probe")]
    pub probe_dma_latency: Option<String>,

    /// Also run the kernel's osnoise tracer on the probed CPUs (default
    /// osnoise, the only one), in a tracefs instance of pinrun's own that
    /// is removed afterwards, and name for each large gap the IRQ, softirq,
    /// thread or NMI the kernel saw in it. Root, tracefs mounted, a kernel
    /// with osnoise in available_tracers and tracing not in use; otherwise
    /// the report says why in one line and the sampler alone attributes.
    /// Signals that end pinrun wait until the instance is removed.
    #[arg(long, value_enum, value_name = "TRACER", num_args = 0..=1, require_equals = true, default_missing_value = "osnoise", help_heading = "Probe")]
    pub probe_tracer: Option<ProbeTracerArg>,

    /// Print the plan and findings, change nothing, run nothing.
    #[arg(long, help_heading = "Modes")]
    pub dry_run: bool,

    /// Print findings only; exit 0 when clean, 1 when not.
    #[arg(long, help_heading = "Modes")]
    pub check: bool,

    /// Print the machine: nodes, packages, cores, CPUs.
    #[arg(long, conflicts_with_all = ["cpus", "node", "cpunodebind", "cores", "isolated", "units", "core_type", "near", "exclusive", "wait", "policy", "mempolicy", "nice", "reset_on_fork", "command"], help_heading = "Modes")]
    pub show: bool,

    /// Print the plan as native directives of FORMAT instead of running
    /// (systemd: CPUAffinity=, NUMAPolicy=, CPUSchedulingPolicy=, ...).
    #[arg(long, value_name = "FORMAT", help_heading = "Modes")]
    pub emit: Option<Emit>,

    /// With --emit systemd: add AllowedCPUs= and AllowedMemoryNodes=, so
    /// that the unit's cgroup holds exactly the planned CPUs and nodes.
    #[arg(long, requires = "emit", help_heading = "Modes")]
    pub cgroup: bool,

    /// With --emit systemd: the unit's User=; warns when that user cannot
    /// run the ExecStart= binary (a bare name as systemd finds it on its
    /// fixed search path): a directory above it it cannot search, the file
    /// it cannot execute, or no such binary.
    #[arg(long, value_name = "USER", requires = "emit", help_heading = "Modes")]
    pub unit_user: Option<String>,

    /// Refuse (exit 125) when this machine's topology fingerprint differs
    /// from the one FILE (a unit, pod spec or script pinrun emitted)
    /// carries: a CPU list chosen on one machine type is not rolled out to
    /// another. Also refused: FILE with no, a malformed or more than one
    /// fingerprint line, a CPUAffinity=, AllowedCPUs=, NUMAMask= or
    /// AllowedMemoryNodes= (or an srun --cpu-bind= list) naming a CPU or
    /// node the machine lacks, a unit whose User= cannot run its
    /// ExecStart= binary here (as --unit-user warns), and a
    /// FILE that is not a regular file of at most 1 MiB.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, conflicts_with_all = ["cpus", "node", "cpunodebind", "cores", "isolated", "exclusive", "wait", "policy", "mempolicy", "nice", "reset_on_fork", "command", "json"], help_heading = "Modes")]
    pub check_emitted: Option<PathBuf>,

    /// In a Kubernetes container: when kubelet's CPU manager state assigns
    /// this container CPUs its cpuset does not show yet, wait up to
    /// DURATION for them (--settle=10s; units ns, us, ms, s, m, h) before
    /// planning. Outside Kubernetes there is nothing to wait for (-v says
    /// so).
    #[arg(long, value_name = "DURATION", help_heading = "Kubernetes")]
    pub settle: Option<String>,

    /// Machine-readable output: one JSON object on stdout (errors too, as
    /// {"error": {...}}); with --dry-run, --check, --show or --probe without
    /// a command, and with --pid (the view, or what a change did). Refused, with
    /// the reason, with --emit (its output is unit directives) and with a
    /// launch (stdout belongs to the command).
    #[arg(long, help_heading = "Modes")]
    pub json: bool,

    /// Read sysfs, procfs and cgroupfs below DIR (a machine dump), or from
    /// a .tar.gz, .tar.xz or .tar archive of one (read into memory, never
    /// unpacked); only with --dry-run, --check, --show, --emit, --plan-host
    /// or --dump.
    #[arg(long, value_name = "DIR|ARCHIVE", value_hint = clap::ValueHint::AnyPath, help_heading = "Modes")]
    pub sysroot: Option<PathBuf>,

    /// Save the files pinrun reads of this machine (or of --sysroot) to
    /// FILE, a .tar.gz that --sysroot FILE replays: attach it to a bug
    /// report. Never replaces an existing FILE. See DUMPS in pinrun(1).
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, conflicts_with_all = ["mode", "json", "cpus", "node", "cpunodebind", "cores", "isolated", "units", "core_type", "near", "exclusive", "wait", "policy", "mempolicy", "nice", "reset_on_fork", "strict", "allow", "command"], help_heading = "Modes")]
    pub dump: Option<PathBuf>,

    /// Undo the IRQ steering of every ended --steer-irqs launch (its
    /// journal in the state directory) and exit; prints "nothing to
    /// reclaim in DIR" when there is none.
    #[arg(long, conflicts_with_all = ["mode", "json", "cpus", "node", "cpunodebind", "cores", "isolated", "exclusive", "wait", "policy", "mempolicy", "nice", "reset_on_fork", "command", "steer_irqs"], help_heading = "Modes")]
    pub reclaim: bool,

    /// Plan the boot-time split of this host into housekeeping and
    /// latency CPUs (whole cores; the boot CPU's core is housekeeping) and
    /// print every setting that makes it so, each in its owner's form: the
    /// kernel command line (each parameter checked against this kernel),
    /// systemd's CPUAffinity=, irqbalance's ban list, tuned's
    /// cpu-partitioning variables, a cgroup v2 isolated partition,
    /// kubelet's reservedSystemCPUs and OpenShift's PerformanceProfile
    /// spec.cpu. With --check: how the running host differs from the
    /// split (exit 1 when it does). Needs --housekeeping-count N or
    /// --latency-cores N, but with --check (then the split is the one the
    /// running kernel isolates). See PREPARE THE HOST in pinrun(1).
    #[arg(long, conflicts_with_all = ["dry_run", "show", "emit", "check_emitted", "dump", "reclaim", "cpus", "node", "cpunodebind", "cores", "isolated", "units", "core_type", "near", "smt", "exclusive", "wait", "policy", "mempolicy", "nice", "reset_on_fork", "command", "pid", "probe", "steer_irqs", "omp", "thread_map"], help_heading = "Host")]
    pub plan_host: bool,

    /// With --plan-host: keep N CPUs for housekeeping, whole cores, taken
    /// from the boot CPU's core and node on (OpenShift's
    /// reserved-cpu-count).
    #[arg(
        long,
        value_name = "N",
        requires = "plan_host",
        conflicts_with = "latency_cores",
        help_heading = "Host"
    )]
    pub housekeeping_count: Option<u32>,

    /// With --plan-host: make N whole cores latency CPUs; every other core
    /// is housekeeping.
    #[arg(
        long,
        value_name = "N",
        requires = "plan_host",
        conflicts_with = "offline_count",
        help_heading = "Host"
    )]
    pub latency_cores: Option<u32>,

    /// With --plan-host: take N CPUs offline: whole packages without
    /// housekeeping first, then the SMT siblings of latency cores, then
    /// any latency CPU (OpenShift's offlined-cpu-count).
    #[arg(long, value_name = "N", requires = "plan_host", help_heading = "Host")]
    pub offline_count: Option<u32>,

    /// With --plan-host: boot with nosmt, so only the first CPU of each
    /// core stays (OpenShift's disable-ht).
    #[arg(long, requires = "plan_host", help_heading = "Host")]
    pub no_smt: bool,

    /// With --plan-host: spread the housekeeping CPUs evenly over the NUMA
    /// nodes (OpenShift's split-reserved-cpus-across-numa).
    #[arg(long, requires = "plan_host", help_heading = "Host")]
    pub split_numa: bool,

    /// Refuse the launch (exit 125) on any warning.
    #[arg(long, help_heading = "Output")]
    pub strict: bool,

    /// Accept these finding codes (comma-separated: codes such as
    /// rt-throttling, families such as irq-*, or all): they become info, so
    /// --strict and --check pass over them.
    #[arg(
        long,
        value_name = "CODES",
        value_delimiter = ',',
        value_parser = AllowWords,
        hide_possible_values = true,
        help_heading = "Output"
    )]
    pub allow: Vec<String>,

    /// Export OMP_PLACES (one place per planned core in plan order; with
    /// --smt its SMT siblings; --omp=threads: one per planned CPU),
    /// OMP_PROC_BIND=close and, unless set, OMP_NUM_THREADS (the number of
    /// places) to the command. Refused when the caller set a different
    /// OMP_PLACES or OMP_PROC_BIND, or KMP_AFFINITY or GOMP_CPU_AFFINITY
    /// (--omp-replace replaces them).
    #[arg(long, value_enum, value_name = "PLACES", num_args = 0..=1, require_equals = true, default_missing_value = "cores", help_heading = "Threads")]
    pub omp: Option<OmpArg>,

    /// With --omp: replace the caller's OMP_PLACES, OMP_PROC_BIND,
    /// KMP_AFFINITY and GOMP_CPU_AFFINITY instead of refusing.
    #[arg(long, requires = "omp", help_heading = "Threads")]
    pub omp_replace: bool,

    /// Pin each thread of the command by rules matched in order,
    /// SELECTOR=TARGET[,...]: selector main, #N (the N-th thread created)
    /// or a name glob (w*); target @N or @N-M (positions in the plan:
    /// planned CPUs, or cores with --smt), each (one position per thread,
    /// round-robin), housekeeping or rest. A watcher process follows new
    /// threads and renames (THREADS in pinrun(1)).
    #[arg(long, value_name = "RULES", help_heading = "Threads")]
    pub thread_map: Option<String>,

    /// Append each --thread-map decision to FILE as a JSON line (a regular
    /// file; a symlink, FIFO or device is refused).
    #[arg(long, value_name = "FILE", requires = "thread_map", value_hint = clap::ValueHint::FilePath, help_heading = "Threads")]
    pub thread_log: Option<PathBuf>,

    /// Print no warnings.
    #[arg(long, short, conflicts_with = "verbose", help_heading = "Output")]
    pub quiet: bool,

    /// Print the plan to stderr before running the command.
    #[arg(long, short, help_heading = "Output")]
    pub verbose: bool,

    /// Write the man page or a shell completion script to stdout, e.g.
    /// `pinrun --generate man > /usr/local/share/man/man1/pinrun.1`
    /// (INSTALLATION in pinrun(1)).
    #[arg(long, value_name = "WHAT", help_heading = "Output")]
    pub generate: Option<Generate>,

    /// The command to run, and its arguments (passed through untouched).
    #[arg(value_name = "COMMAND", trailing_var_arg = true, value_hint = clap::ValueHint::CommandWithArguments)]
    pub command: Vec<OsString>,
}

/// What clap stores for an option whose value is optional
/// (`num_args = 0..=1`) when it is given without one: a NUL, which no
/// argument can hold (`execve(2)` passes C strings), so an explicit empty
/// value (`--membind=`, `--membind ""`) stays `""` and is refused
/// ([`Cli::bare_values`]), as `numactl --membind=` refuses it (EINVAL).
pub const BARE: &str = "\0";

/// The state directory `--state-dir` or else `PINRUN_STATE_DIR` names
/// (`None`: neither; an empty `PINRUN_STATE_DIR` is unset, as for most
/// tools' variables and as `--help` says), each checked by
/// [`absolute_state_dir`].
pub fn state_dir_given(option: Option<PathBuf>) -> Result<Option<PathBuf>> {
    if let Some(dir) = option {
        return absolute_state_dir("--state-dir", dir).map(Some);
    }
    std::env::var_os("PINRUN_STATE_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| absolute_state_dir("PINRUN_STATE_DIR", PathBuf::from(d)))
        .transpose()
}

/// `dir` as the state directory `source` names (`--state-dir`,
/// `PINRUN_STATE_DIR`, the policy file's `state_dir`), refused when empty
/// or relative: a relative one follows the caller's working directory, so
/// two `--exclusive` launches from two directories would each see only
/// their own claims and claim the same CPUs.
pub fn absolute_state_dir(source: &str, dir: PathBuf) -> Result<PathBuf> {
    if dir.as_os_str().is_empty() {
        return Err(Error::new(
            ErrorCode::StateDir,
            format!("{source}: the state directory is empty"),
        )
        .hint(format!(
            "give an absolute path (the default is {}), or leave it out",
            DEFAULT_STATE_DIR_WORDS
        )));
    }
    if dir.is_relative() {
        return Err(Error::new(
            ErrorCode::StateDir,
            format!(
                "{source}: state directory \"{}\" is relative: it would follow the working directory, and launches from two directories would not see each other's claims",
                dir.display()
            ),
        )
        .hint(format!(
            "give an absolute path, e.g. {} (the default)",
            DEFAULT_STATE_DIR_WORDS
        )));
    }
    Ok(dir)
}

/// The default state directory, for messages
/// (`crate::system::state_dir::DEFAULT_STATE_DIR`).
const DEFAULT_STATE_DIR_WORDS: &str = "/run/pinrun";

fn bad(code: ErrorCode, option: &str, what: impl std::fmt::Display) -> Error {
    Error::new(code, format!("{option}: {what}"))
}

const LIST_HINT: &str = "lists look like 0-3,8 (ranges), 0-14:2 (stride), 0-15:2/4 (used/group) or 0xff (mask); see CPU LISTS in pinrun(1)";

/// `--allow`'s value parser: takes any word (validated by
/// [`Code::matching`] in [`Cli::into_request`], with pinrun's own error),
/// and offers the codes, their families and `all` to shell completion.
#[derive(Clone, Copy, Debug)]
pub struct AllowWords;

impl clap::builder::TypedValueParser for AllowWords {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = Code::sorted_names();
        let families: std::collections::BTreeSet<String> = names
            .iter()
            .filter_map(|c| c.split_once('-').map(|(first, _)| format!("{first}-*")))
            .collect();
        let words: Vec<String> = std::iter::once("all".to_string())
            .chain(families)
            .chain(names.iter().map(|c| c.to_string()))
            .collect();
        Some(Box::new(
            words.into_iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

/// The options `-h` shows, each with its one-line summary (issue 37: `-h`
/// fits one screen, at most 40 lines; `--help` and pinrun(1) keep every
/// option, with the whole text).
const SHORT_HELP: &[(&str, &str)] = &[
    ("cpus", "Run on exactly these CPUs (0-3,8; 0xff; +0)"),
    ("node", "Take CPUs from these NUMA nodes"),
    (
        "cores",
        "Choose N whole cores (the quietest with latency intent)",
    ),
    ("fifo", "SCHED_FIFO at PRIO (1-99), as chrt -f"),
    ("rr", "SCHED_RR at PRIO (1-99), as chrt -r"),
    (
        "membind",
        "Allocate memory only on NODES (default: the CPUs' nodes)",
    ),
    (
        "exclusive",
        "Claim the chosen cores while the command lives",
    ),
    ("dry_run", "Print the plan and its findings; change nothing"),
    ("check", "Audit the CPUs; exit 1 on a warning"),
    (
        "show",
        "Show the machine: topology, isolation, IRQs, claims",
    ),
    ("pid", "A running process: show or change every thread"),
    ("json", "Machine-readable output"),
];

/// The command line parser: [`Cli`]'s, with `-h` cut to one screen
/// ([`SHORT_HELP`]: a one-line summary for the options people use most,
/// the others hidden from `-h` only); `--help` shows each option's whole
/// text. The man page and completions are generated from [`Cli`] itself.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        let short = SHORT_HELP.iter().find(|(k, _)| *k == id).map(|(_, h)| *h);
        cmd = cmd.mut_arg(&id, |a| match short {
            Some(h) => match a.get_long_help().or(a.get_help()).cloned() {
                Some(long) => a.long_help(long).help(h),
                None => a.help(h),
            },
            None if id == "help" || id == "version" || id == "command" => a,
            None => a.hide_short_help(true),
        });
    }
    let long_after = cmd.get_after_help().cloned().unwrap_or_default();
    let more = cmd
        .get_arguments()
        .filter(|a| a.is_hide_short_help_set())
        .count();
    let short_after = format!(
        "Example: pinrun --node 0 --cores 4 --fifo 90 -- ./app\n{more} more options: pinrun --help; every rule: pinrun(1)"
    );
    let long_about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .cloned()
        .unwrap_or_default();
    cmd.about("Run a command on chosen CPUs with memory and scheduling policies, checked first")
        .long_about(long_about)
        .after_help(short_after)
        .after_long_help(long_after)
}

/// The hint for an option of numactl(8), taskset(1) or chrt(1) that
/// pinrun does not take under that spelling (`arg`, as clap names it:
/// `-p`, `--cpubind=0`), from the habits table ([`crate::habits::HABITS`]),
/// so that `pinrun -l ./app` is not told to pass `-l` as a value. `args`
/// is pinrun's whole command line. Rows that say the same (taskset's and
/// chrt's `--all-tasks`) are one; with one, the exact pinrun command: the
/// command line with the option and its value replaced by pinrun's; with
/// several (`-p` is numactl's `--preferred`, taskset's and chrt's `--pid`),
/// each tool's equivalent, what works on `host` first (`-p 1234` after
/// `--cpus` is taskset's `-p`; [`PeerHost`]), never a node `host` lacks.
/// `None` when no row has the spelling.
pub fn peer_hint(arg: &str, args: &[String], host: &PeerHost) -> Option<String> {
    use crate::habits::{Habit, Pinrun};
    let name = arg.split('=').next()?;
    let rows: Vec<&Habit> = crate::habits::rows_of(name)
        .into_iter()
        .filter(|h| !h.form && !h.accepted.contains(&name))
        .collect();
    let rows = host_order(rows, name, args, host);
    // Rows that say the same, their tools joined: "taskset and chrt".
    let mut groups: Vec<(String, &Habit)> = Vec::new();
    for h in rows {
        match groups
            .iter_mut()
            .find(|(_, g)| g.pinrun == h.pinrun && g.note == h.note && g.arg == h.arg)
        {
            Some((tools, _)) => *tools = format!("{tools} and {}", h.tool.name()),
            None => groups.push((h.tool.name().to_string(), h)),
        }
    }
    let before: Vec<&String> = args.iter().take_while(|a| *a != "--").collect();
    let at = before
        .iter()
        .position(|a| *a == name || a.starts_with(&format!("{name}=")));
    // The option's value as given: after '=', or the next word.
    let given = |h: &Habit| -> (Option<String>, usize) {
        let i = at.unwrap_or(0);
        match (h.arg, args.get(i).and_then(|a| a.split_once('='))) {
            (None, _) => (None, 1),
            (Some(_), Some((_, v))) => (Some(v.to_string()), 1),
            (Some(_), None) => match args.get(i + 1).filter(|v| !v.starts_with('-')) {
                Some(v) => (Some(v.clone()), 2),
                None => (None, 1),
            },
        }
    };
    let note = |h: &Habit| {
        if h.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", h.note)
        }
    };
    let phrase = |(tools, h): &(String, &Habit)| {
        let (value, _) = given(h);
        let shown = value
            .clone()
            .or(h.arg.map(|a| a.name.to_string()))
            .unwrap_or_default();
        let with = if h.arg.is_some() {
            format!(" {shown}")
        } else {
            String::new()
        };
        match h.pinrun {
            Pinrun::Use(_) => format!(
                "{tools} {name}{with} is {}{}",
                h.command_with(&shown).unwrap_or_default(),
                note(h)
            ),
            Pinrun::Default(why) => format!("{tools} {name}: {why}"),
            Pinrun::None(why) => format!("{tools} {name} has no pinrun equivalent: {why}"),
        }
    };
    // A spelling pinrun takes for its own option (`--show`): the command
    // line is pinrun's meaning, so no exact command is built from it, only
    // the peer's equivalent and pinrun's own meaning.
    let own = |h: &Habit| h.taken.iter().find(|(s, _)| *s == name).map(|(_, m)| *m);
    match (&groups[..], at) {
        ([], _) => None,
        ([(tools, h)], _) if own(h).is_some() => Some(format!(
            "{}; {}",
            phrase(&(tools.clone(), *h)),
            own(h).unwrap_or_default()
        )),
        ([(tools, h)], Some(i)) if !matches!(h.pinrun, Pinrun::None(_)) => {
            let (value, used) = given(h);
            let value = value.or(h.arg.map(|a| a.name.to_string()));
            let replaced = h.command_with(value.as_deref().unwrap_or_default())?;
            let words: Vec<String> = args[..i]
                .iter()
                .map(|a| crate::exec::sh_word(a))
                .chain(replaced.split_whitespace().map(str::to_string))
                .chain(args[i + used..].iter().map(|a| crate::exec::sh_word(a)))
                .collect();
            let why = match h.pinrun {
                Pinrun::Default(why) => format!(" ({why})"),
                _ => note(h),
            };
            Some(format!("{tools} {name}: pinrun {}{why}", words.join(" ")))
        }
        (groups, _) => Some(groups.iter().map(phrase).collect::<Vec<_>>().join("; ")),
    }
}

/// What the host says of a peer option's value, for [`peer_hint`]: whether
/// a word names a NUMA node of the machine (`node/online`,
/// `Documentation/ABI/stable/sysfs-devices-node`) and whether it names a
/// running process (`/proc/PID`, proc(5)).
pub struct PeerHost {
    /// Whether the word is a node id online on the machine.
    pub is_node: Box<dyn Fn(&str) -> bool>,
    /// Whether the word is the PID of a running process.
    pub is_pid: Box<dyn Fn(&str) -> bool>,
}

/// The options that name where a command runs (a placement): with one on
/// the command line, a peer's `-p` is taskset's `--pid`, not numactl's
/// `--preferred` (`taskset -p` changes a process's CPUs).
const PLACEMENT: &[&str] = &[
    "--cpus",
    "-c",
    "--cpu-list",
    "-C",
    "--physcpubind",
    "--node",
    "-N",
    "--cpunodebind",
    "--cores",
];

/// `rows` (of a peer option `name`) for the host: a row whose argument is
/// a node (numactl's `-p NODE`) is dropped when the value given is not an
/// online node; the rows whose argument is a PID come first when the value
/// is a running process that is not a node, or when another option already
/// names a placement ([`PLACEMENT`]).
fn host_order<'h>(
    rows: Vec<&'h crate::habits::Habit>,
    name: &str,
    args: &[String],
    host: &PeerHost,
) -> Vec<&'h crate::habits::Habit> {
    let before: Vec<&String> = args.iter().take_while(|a| *a != "--").collect();
    let Some(at) = before.iter().position(|a| *a == name) else {
        return rows;
    };
    let Some(value) = before.get(at + 1).filter(|v| !v.starts_with('-')) else {
        return rows;
    };
    let takes = |h: &crate::habits::Habit, what: &str| h.arg.is_some_and(|a| a.name == what);
    let node = (host.is_node)(value);
    let placed = before
        .iter()
        .any(|a| PLACEMENT.contains(&a.split('=').next().unwrap_or(a)));
    let pid_first = placed || (!node && (host.is_pid)(value));
    let numeric = value.bytes().all(|b| b.is_ascii_digit());
    let mut kept: Vec<&crate::habits::Habit> = rows
        .into_iter()
        .filter(|h| node || !numeric || !takes(h, "NODE"))
        .collect();
    if pid_first {
        kept.sort_by_key(|h| !takes(h, "PID"));
    }
    kept
}

/// The hint for taskset's `-p MASK PID` habit given to pinrun as `--pid
/// MASK PID` or `-p MASK PID` (`args`: pinrun's arguments): the exact
/// pinrun command, the mask read as taskset reads it (hexadecimal; a list
/// after `-c`/`--cpu-list`). `None` when the arguments are not that form.
pub fn taskset_pid_hint(args: &[String]) -> Option<String> {
    use crate::habits::{Tool, form};
    let i = args
        .iter()
        .position(|a| a == "--pid" || a == "-p" || a == "-pc" || a == "-cp")?;
    let (mask, pid) = (args.get(i + 1)?, args.get(i + 2)?);
    pid.parse::<u32>().ok().filter(|&p| p > 0)?;
    let list_form =
        args[i] == "-pc" || args[i] == "-cp" || args.iter().any(|a| a == "-c" || a == "--cpu-list");
    // chrt -p PRIO PID: a SCHED_RR priority (chrt's default policy), or
    // the policy a chrt option before it names (`chrt -f -p 10 PID`).
    let policy = args[..i].iter().rev().find_map(|a| match a.as_str() {
        "-f" | "--fifo" => Some(("-f ", "--fifo")),
        "-r" | "--rr" => Some(("-r ", "--rr")),
        _ => None,
    });
    let chrt = mask
        .parse::<u32>()
        .ok()
        .filter(|p| !list_form && (1..=99).contains(p) && !mask.starts_with('0'))
        .and_then(|p| {
            let command = form(Tool::Chrt, "-p PRIO PID").command_with(&p.to_string())?;
            let command = match policy {
                Some((_, option)) => command.replace("--rr", option),
                None => command,
            };
            Some(format!(
                "as chrt {}-p PRIO PID: pinrun {}",
                policy.map_or("", |(short, _)| short),
                command.replace("PID", pid)
            ))
        });
    // A chrt policy option names chrt's form: only that reading.
    if let (Some(_), Some(c)) = (policy, &chrt) {
        return Some(c.clone());
    }
    let chrt = chrt.map(|c| format!("; {c}")).unwrap_or_default();
    let cpus = if list_form {
        CpuSet::parse(mask).ok()?
    } else {
        match crate::exec::taskset_mask(mask, crate::exec::online_here().as_ref())? {
            Ok(m) => m,
            Err(why) => return Some(format!("taskset's -p MASK PID form: {why}{chrt}")),
        }
    };
    let shape = if list_form {
        "-pc LIST PID"
    } else {
        "-p MASK PID"
    };
    let command = form(Tool::Taskset, shape)
        .command_with(&cpus.to_list())?
        .replace("PID", pid);
    Some(format!(
        "taskset's {shape} form: pinrun {command} (every thread of the process; --tid TID for one){chrt}"
    ))
}

/// A command-line error clap reports (`clap::Error`) in pinrun's form,
/// `<what>: <cause>` (pinrun prints `pinrun: ` before it, [`usage_hint`]
/// and the habits table's hints after): the option clap names (`--fifo`,
/// not its usage `--fifo <PRIO>`) and what is wrong with it, for an
/// unknown option, a missing or invalid value, a conflict, a missing
/// required option; clap's own sentence for any other kind, after the
/// option it names (or "command line").
pub fn clap_message(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let names = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    // "--probe[=<DURATION>]" and "--fifo <PRIO>" name --probe and --fifo.
    // "[COMMAND]..." names COMMAND.
    let name = |usage: &str| {
        let u = usage.trim_start_matches(['[', '<']);
        u.split([' ', '[', '=', ']', '>'])
            .next()
            .unwrap_or(u)
            .to_string()
    };
    let argv = args;
    let args = names(ContextKind::InvalidArg);
    let what = args.first().map_or("command line".to_string(), |a| name(a));
    let value = names(ContextKind::InvalidValue).pop().unwrap_or_default();
    let cause = match e.kind() {
        ErrorKind::UnknownArgument if what.starts_with('-') => "unknown option".to_string(),
        ErrorKind::UnknownArgument => "unexpected argument".to_string(),
        // `--omp=`: an explicit empty value, not a missing one.
        ErrorKind::InvalidValue
            if matches!(e.get(ContextKind::InvalidValue), Some(ContextValue::String(v)) if v.is_empty())
                && !names(ContextKind::ValidValue).is_empty() =>
        {
            format!(
                "the value is empty; it is one of {}",
                names(ContextKind::ValidValue).join(", ")
            )
        }
        ErrorKind::InvalidValue if value.is_empty() => {
            let usage = args.first().cloned().unwrap_or_default();
            let shape = usage.split_once(' ').map_or("a value", |(_, v)| v);
            format!("needs a value ({})", shape.trim_matches(['<', '>']))
        }
        ErrorKind::InvalidValue => format!(
            "'{value}' is not one of {}",
            names(ContextKind::ValidValue).join(", ")
        ),
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e)
                .map(|s| s.to_string())
                .unwrap_or_else(|| "invalid".to_string())
                .replace("invalid digit found in string", "expected a whole number");
            format!("'{value}': {why}")
        }
        ErrorKind::ArgumentConflict => {
            let prior: Vec<String> = names(ContextKind::PriorArg)
                .iter()
                .map(|a| name(a))
                .collect();
            format!("cannot be used with {}", prior.join(", "))
        }
        ErrorKind::MissingRequiredArgument => {
            let all: Vec<String> = names(ContextKind::InvalidArg)
                .iter()
                .map(|a| name(a))
                .collect();
            let by = requirers(argv);
            return match by.is_empty() {
                true => format!("{}: required with the options given", all.join(", ")),
                false => format!(
                    "{}: needs {}, which is not given",
                    by.join(", "),
                    all.join(" and ")
                ),
            };
        }
        ErrorKind::NoEquals => format!("takes its value after '=' ({what}=VALUE)"),
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_string()
        }
    };
    format!("{what}: {cause}")
}

/// The options on the command line `argv` (without the program name)
/// that need an option clap found missing (`requires`, an
/// `ErrorKind::MissingRequiredArgument`), by their long names: clap's
/// error names only the missing option (`--cores`), not the one the user
/// typed (`--smt`). Each option given is tried alone with its `requires`
/// (those of the other options given cleared): it is a requirer when the
/// missing option is still missing. Empty when none is found (a
/// requirement of a group).
pub fn requirers(argv: &[std::ffi::OsString]) -> Vec<String> {
    use clap::error::ErrorKind;
    let full = || std::iter::once(std::ffi::OsString::from("pinrun")).chain(argv.iter().cloned());
    let missing = |cmd: clap::Command| matches!(cmd.try_get_matches_from(full()), Err(e) if e.kind() == ErrorKind::MissingRequiredArgument);
    let Ok(given) = command().ignore_errors(true).try_get_matches_from(full()) else {
        return Vec::new();
    };
    let cmd = command();
    let typed: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| {
            given.value_source(a.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine)
        })
        .collect();
    let alone = |keep: &clap::Id| {
        typed
            .iter()
            .filter(|b| b.get_id() != keep)
            .fold(command(), |c, b| {
                c.mut_arg(b.get_id(), |b| b.requires(clap::builder::Resettable::Reset))
            })
    };
    typed
        .iter()
        .filter(|a| missing(alone(a.get_id())))
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// An option's help cut to a hint's length: its first sentence (a ". "
/// after "e.g" or "i.e" ends none); when that passes 150 characters, without
/// its parenthesised asides; when it still does, up to its last clause
/// (`; `, `: ` outside parentheses) or list item (`, `) or word within 150
/// characters, a cut inside a clause ending in "…". A hint of two options
/// stays a line or two and never ends mid-aside (a new user's trial:
/// `--generate <WHAT>: ..., e.g`, `--within <BOUND>: where --cores`), nor
/// passes a cut list for the whole (`--sysroot`'s "only with --dry-run,
/// --check, --show, --emit", without `--plan-host or --dump`).
fn short_help(help: &str) -> String {
    const MAX: usize = 150;
    let mut end = help.len();
    let mut from = 0;
    while let Some(i) = help[from..].find(". ") {
        let at = from + i;
        let before = help[..at].to_ascii_lowercase();
        if !(before.ends_with("e.g") || before.ends_with("i.e")) {
            end = at;
            break;
        }
        from = at + 2;
    }
    let sentence = &help[..end];
    if sentence.len() <= MAX {
        return sentence.to_string();
    }
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in sentence.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let plain = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    let plain = plain
        .replace(" ,", ",")
        .replace(" ;", ";")
        .replace(" :", ":");
    if plain.len() <= MAX {
        return plain;
    }
    // Room for the ", …" that marks a cut inside a clause.
    let mut cut = MAX - ", …".len();
    while !plain.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &plain[..cut];
    let clause = ["; ", ": "].iter().filter_map(|sep| head.rfind(sep)).max();
    let item = head.rfind(", ");
    match (clause, item) {
        // A clause ends there: what is left out is a clause of its own.
        (Some(c), i) if i.is_none_or(|i| c > i) => plain[..c].to_string(),
        // Inside a list or a clause: the words left out are marked, so
        // that "only with --dry-run, --check, --show, --emit" is never
        // read as the whole list.
        (_, Some(i)) => format!("{}, …", &plain[..i]),
        _ => format!("{} …", &plain[..head.rfind(' ').unwrap_or(head.len())]),
    }
}

/// The hint for a command-line error clap reports (`clap::Error`), from
/// the options it names: for two options that cannot be used together
/// (`ErrorKind::ArgumentConflict`), which one each is for; for an option
/// whose value is missing or invalid, that option's usage and one-line help
/// (`pinrun --help` shows them). `None` when clap names no pinrun option:
/// the caller says "see pinrun --help".
pub fn usage_hint(e: &clap::Error) -> Option<String> {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let names = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let cmd = Cli::command();
    // clap names an option as its usage, "--fifo <PRIO>" or "--cpus <CPUS>".
    let explain = |usage: &str| {
        // "--probe[=<DURATION>]": the name ends at '[' or '='.
        let long = usage.split_whitespace().next()?.strip_prefix("--")?;
        let long = long.split(['[', '=']).next()?;
        let arg = cmd.get_arguments().find(|a| a.get_long() == Some(long))?;
        let help = arg.get_help()?.to_string();
        let help = short_help(&help);
        let help = help.trim_end_matches('.');
        // "Print the plan…" reads "print the plan…" after a colon;
        // "SCHED_FIFO…" stays.
        let mut chars = help.chars();
        let help: String = match (chars.next(), chars.next()) {
            (Some(c), Some(n)) if c.is_uppercase() && n.is_lowercase() => {
                c.to_lowercase().chain(help.chars().skip(1)).collect()
            }
            _ => help.to_string(),
        };
        Some(format!("{usage}: {help}"))
    };
    let invalid = names(ContextKind::InvalidArg);
    match e.kind() {
        ErrorKind::ArgumentConflict => {
            let mut both: Vec<String> = invalid;
            both.extend(names(ContextKind::PriorArg));
            let lines: Vec<String> = both.iter().filter_map(|u| explain(u)).collect();
            (lines.len() >= 2).then(|| format!("use only one: {}", lines.join("; ")))
        }
        ErrorKind::InvalidValue
        | ErrorKind::ValueValidation
        | ErrorKind::MissingRequiredArgument => {
            let lines: Vec<String> = invalid.iter().filter_map(|u| explain(u)).collect();
            (!lines.is_empty()).then(|| lines.join("; "))
        }
        _ => None,
    }
}

/// Parses a user node list (same grammar as cpulists).
/// The hint of a node list that does not parse: what a NODES option
/// takes (numactl(8)'s forms: numbers, ranges, `!`, `+`, `all`).
const NODE_LIST_HINT: &str = "node lists look like 0, 0-1 or 0,2 (node numbers, ranges), !1 (all but 1), +0 (the first allowed) or all; see CPU LISTS in pinrun(1)";

/// A node list of `option`: its errors say "node number" where a CPU
/// list's say "CPU number", with [`NODE_LIST_HINT`].
fn node_list(option: &str, text: &str) -> Result<NodeSet> {
    CpuSet::parse(text).map_err(|mut e| {
        e.expected = e.expected.replace("CPU number", "node number");
        bad(ErrorCode::BadNodeList, option, e).hint(NODE_LIST_HINT)
    })
}

fn node_choice(option: &str, text: &str) -> Result<NodeChoice> {
    NodeChoice::parse(text, |t| node_list(option, t)).map_err(|e| {
        e.hint("give a node list such as 0,1, !1 (all but 1), +0 (the first allowed) or all")
    })
}

/// A placement list: an exact list stays in `Some(set)`, numactl's other
/// forms (`all`, `!LIST`, `+LIST`) in the form, resolved when planning.
fn placement_list(
    option: &str,
    text: &str,
    parse: impl Fn(&str) -> Result<CpuSet>,
) -> Result<(Option<CpuSet>, Option<NodeChoice>)> {
    let _ = option;
    Ok(match NodeChoice::parse(text, parse)? {
        NodeChoice::Nodes(set) => (Some(set), None),
        form => (None, Some(form)),
    })
}

/// The durations an option takes, ns, and an example of one: every
/// error of [`parse_duration_in`] names this range in its message and
/// its hint, in the units the option is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationRange {
    /// The shortest, ns (at least 1).
    pub min_ns: u64,
    /// The longest, ns (at most 2^63-1).
    pub max_ns: u64,
    /// Why nothing shorter is taken (after "shorter than"), if a reason
    /// other than "a duration is positive".
    pub min_why: &'static str,
    /// Why nothing longer is taken, if a reason.
    pub max_why: &'static str,
    /// An example as the user writes it (`--probe=1s`).
    pub example: &'static str,
}

impl DurationRange {
    /// Any positive duration up to 2^63-1 ns (about 292 years).
    pub const ANY: DurationRange = DurationRange {
        min_ns: 1,
        max_ns: (1 << 63) - 1,
        min_why: "",
        max_why: "",
        example: "500us",
    };

    /// The range in words, in whole units: `from 10ms to 60s`, `from 1ns
    /// to about 292 years (2^63-1 ns)`.
    pub fn words(&self) -> String {
        let max = if self.max_ns == Self::ANY.max_ns {
            "about 292 years (2^63-1 ns)".to_string()
        } else {
            whole_units(self.max_ns)
        };
        format!("from {} to {max}", whole_units(self.min_ns))
    }

    /// The hint of every error: the units, the range, the example.
    pub fn hint(&self) -> String {
        format!(
            "write a number with a unit (ns, us, ms, s, m or h) {}, e.g. {}",
            self.words(),
            self.example
        )
    }
}

/// `--probe=DURATION`: from [`crate::noise::MIN_DURATION_NS`] to
/// [`crate::noise::MAX_DURATION_NS`].
const PROBE_RANGE: DurationRange = DurationRange {
    min_ns: crate::noise::MIN_DURATION_NS,
    max_ns: crate::noise::MAX_DURATION_NS,
    min_why: "the probe measures nothing shorter: one scheduler tick at HZ=100, five periods of the sampler that lines gaps up in time",
    max_why: "the probe's cap; longer measurements are oslat's or cyclictest's job",
    example: "--probe=1s",
};

/// `--choose measured=DURATION`: from [`Choose::MIN_MEASURE_NS`] to
/// [`Choose::MAX_MEASURE_NS`].
const CHOOSE_RANGE: DurationRange = DurationRange {
    min_ns: Choose::MIN_MEASURE_NS,
    max_ns: Choose::MAX_MEASURE_NS,
    min_why: "a scheduler tick at HZ=100 must fit",
    max_why: "every candidate CPU is measured at once, before the command starts",
    example: "--choose measured=300ms (1s when left out)",
};

/// `--probe-interval`: from [`crate::noise::MIN_INTERVAL_NS`] up to the
/// probe's cap (and shorter than the probe, checked after).
const INTERVAL_RANGE: DurationRange = DurationRange {
    min_ns: crate::noise::MIN_INTERVAL_NS,
    max_ns: crate::noise::MAX_DURATION_NS,
    min_why: "below it a wake-up is within the timer slack and the hrtimer's own expiry, and the probe would measure itself",
    max_why: "the probe's cap",
    example: "--probe-interval 100us (cyclictest's default is 1ms)",
};

/// `--probe-threshold` and `--probe-max`: a gap or latency from 1ns to
/// the probe's cap (no gap is longer than the probe).
const GAP_RANGE: DurationRange = DurationRange {
    min_ns: 1,
    max_ns: crate::noise::MAX_DURATION_NS,
    min_why: "",
    max_why: "no gap is longer than the probe, at most 60s",
    example: "--probe-max 50us",
};

/// `ns` in the largest unit up to seconds that divides it: `10ms`, `60s`,
/// `1500us`.
fn whole_units(ns: u64) -> String {
    let units = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")];
    units
        .iter()
        .find(|(n, _)| ns.is_multiple_of(*n))
        .map_or(format!("{ns}ns"), |(n, u)| format!("{}{u}", ns / n))
}

/// `--choose rule|measured[=DURATION]` ([`Choose`]); errors
/// (bad-choose, bad-duration) name the text and the range.
fn parse_choose(text: &str) -> Result<Choose> {
    let (rule, duration) = match text.split_once('=') {
        Some((r, d)) => (r, Some(d)),
        None => (text, None),
    };
    match (rule, duration) {
        ("rule", None) => Ok(Choose::Rule),
        ("measured", d) => {
            let duration_ns = match d {
                None => Choose::DEFAULT_MEASURE_NS,
                Some(d) => parse_duration_in("--choose measured", d, &CHOOSE_RANGE)?,
            };
            Ok(Choose::Measured { duration_ns })
        }
        _ => Err(bad(
            ErrorCode::Usage,
            "--choose",
            format!("\"{text}\" is not a rule: rule, measured or measured=DURATION"),
        )
        .hint("--choose measured (1s of probing), --choose measured=300ms, or leave it out (the rule)")),
    }
}

/// Parses a duration with a unit (`500us`, `1.5ms`, `2s`) into nanoseconds:
/// from 1ns to 2^63-1 ns (about 292 years) ([`parse_duration_in`] with
/// [`DurationRange::ANY`]).
pub fn parse_duration(option: &str, text: &str) -> Result<u64> {
    parse_duration_in(option, text, &DurationRange::ANY)
}

/// Parses a duration with a unit (`500us`, `1.5ms`, `2s`) into nanoseconds
/// within `range`. Errors (bad-duration), each naming `option`, `text`
/// and the range, with [`DurationRange::hint`]: no unit, not a number, a
/// negative value, a value below or above the range (`0s` is below any).
pub fn parse_duration_in(option: &str, text: &str, range: &DurationRange) -> Result<u64> {
    let refuse = |why: String| bad(ErrorCode::BadDuration, option, why).hint(range.hint());
    let t = text.trim();
    if let Some(rest) = t.strip_prefix('-')
        && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
    {
        return Err(refuse(format!(
            "\"{text}\" is negative: {option} takes {}",
            range.words()
        )));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    // The sign (above) and the number are judged before the unit: "-1s"
    // is a negative duration, "+1s" no number, not ones without a unit.
    let Ok(value) = num.parse::<f64>() else {
        return Err(refuse(format!("\"{text}\" is not a number with a unit")));
    };
    let scale: f64 = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(bad(
                ErrorCode::BadDuration,
                option,
                if unit.is_empty() {
                    format!("\"{text}\" needs a unit")
                } else {
                    format!("\"{text}\" has an unknown unit \"{unit}\"")
                },
            )
            .hint(chrt_nanoseconds(option, t).unwrap_or_else(|| range.hint())));
        }
    };
    let ns = (value * scale).round();
    let why = |w: &str| {
        if w.is_empty() {
            String::new()
        } else {
            format!(" ({w})")
        }
    };
    if ns < range.min_ns as f64 {
        return Err(refuse(format!(
            "\"{text}\" is shorter than {}{}: {option} takes {}",
            whole_units(range.min_ns),
            why(range.min_why),
            range.words()
        )));
    }
    if ns > range.max_ns as f64 {
        return Err(refuse(format!(
            "\"{text}\" is longer than {}{}: {option} takes {}",
            if range.max_ns == DurationRange::ANY.max_ns {
                "2^63-1 ns".to_string()
            } else {
                whole_units(range.max_ns)
            },
            why(range.max_why),
            range.words()
        )));
    }
    Ok(ns as u64)
}

/// The hint for chrt(1)'s habit of a deadline parameter in bare
/// nanoseconds (`--sched-runtime 500000`, as `chrt -T 500000`): pinrun's
/// option with the unit, from the habits table. `None` for another option
/// or a value that is not a whole number.
fn chrt_nanoseconds(option: &str, text: &str) -> Option<String> {
    text.parse::<u64>().ok()?;
    let row = crate::habits::rows_of(option)
        .into_iter()
        .find(|h| h.tool == crate::habits::Tool::Chrt)?;
    Some(format!(
        "chrt {option} takes nanoseconds, pinrun's a unit: write {}",
        row.command_with(text)?
    ))
}

fn rt_prio(option: &str, prio: u32) -> Result<u32> {
    if (1..=MAX_RT_PRIO).contains(&prio) {
        Ok(prio)
    } else {
        Err(bad(
            ErrorCode::BadPriority,
            option,
            format!("priority {prio} is outside 1-{MAX_RT_PRIO}"),
        )
        .hint(
            "real-time priorities run from 1 to 99; 1-98 leaves room for the kernel's own threads",
        ))
    }
}

/// `--emit slurm N`'s task count: N is the first word of `command` (after
/// the format), taken from it with the `--` clap kept after it. Refused
/// when it is missing or not 1..=u32::MAX (a number out of range is named
/// for what it is, not taken for a missing count), or when an option
/// follows it (it would be the command).
fn slurm_tasks(command: &mut Vec<OsString>) -> Result<u32> {
    let word = command.first().and_then(|w| w.to_str());
    if let Some(w) = word.filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())) {
        let what = match w.parse::<u32>() {
            Ok(0) => Some("is not a count: at least 1 task is needed".to_string()),
            Ok(_) => None,
            Err(_) => Some(format!("is too large (at most {})", u32::MAX)),
        };
        if let Some(what) = what {
            return Err(Error::new(
                ErrorCode::Usage,
                format!("--emit slurm: {w} tasks per node {what}"),
            )
            .hint("write the tasks per node srun starts, e.g. pinrun --cores 2 --emit slurm 4"));
        }
    }
    let n = word.and_then(|w| w.parse::<u32>().ok()).filter(|n| *n >= 1);
    let Some(n) = n else {
        return Err(Error::new(
            ErrorCode::Usage,
            "--emit slurm: needs the number of tasks per node",
        )
        .hint("write --emit slurm N, e.g. pinrun --cores 2 --emit slurm 4"));
    };
    command.remove(0);
    // `--emit slurm 4 -- cmd`: clap kept the `--` after N.
    if command.first().is_some_and(|w| w == "--") {
        command.remove(0);
    } else if let Some(opt) = command
        .first()
        .and_then(|w| w.to_str())
        .filter(|w| w.starts_with('-'))
    {
        return Err(Error::new(
            ErrorCode::Usage,
            format!("--emit slurm {n}: {opt} after the task count would be the command"),
        )
        .hint(format!(
            "put the options before --emit: pinrun {opt} ... --emit slurm {n}"
        )));
    }
    Ok(n)
}

impl Cli {
    /// `choose`, refused (either rule) with `--cpus` (the CPUs are named:
    /// nothing to rank) or without `--cores`, and when it is `measured`
    /// where nothing can be measured: below `--sysroot` (a dump), for
    /// `--pid`, `--emit`/`--check-emitted` (for another time)
    /// and `--deadline` (a SCHED_DEADLINE task cannot be probed pinned to
    /// one CPU of its root domain, as `--probe` refuses).
    fn measurable(&self, choose: Choose) -> Result<Choose> {
        // Either rule, as a user wrote it: --choose ranks the cores
        // --cores picks, so with --cpus (the CPUs named) or without
        // --cores there is nothing it could rank.
        let named = if choose == Choose::Rule {
            "--choose rule"
        } else {
            "--choose measured"
        };
        let refuse = |why: &str, hint: &str| {
            Err(bad(
                ErrorCode::Usage,
                named,
                format!("{why} (--choose ranks the cores --cores N picks)"),
            )
            .hint(hint))
        };
        if self.cpus.is_some() {
            return refuse(
                "not with --cpus: --cpus names the CPUs, so there is nothing to choose",
                "leave out --choose to run on the named CPUs; to choose among them, give them as the inherited affinity: taskset -c LIST pinrun --within inherited --cores N --choose RULE -- COMMAND",
            );
        }
        if self.cores.is_none() {
            return refuse(
                "needs --cores, which is not given",
                "add --cores N, or leave out --choose",
            );
        }
        if choose == Choose::Rule {
            return Ok(choose);
        }
        let with = [
            (
                "--sysroot",
                self.sysroot.is_some(),
                "a dump cannot be measured",
            ),
            (
                "--pid",
                self.pid.is_some(),
                "the process runs where it runs",
            ),
            (
                "--emit",
                self.emit.is_some() || self.check_emitted.is_some(),
                "emitted files run at another time",
            ),
            (
                "--deadline",
                self.deadline,
                "a SCHED_DEADLINE task cannot be pinned to one CPU of its root domain to be probed",
            ),
        ];
        match with.iter().find(|(_, on, _)| *on) {
            Some((option, _, why)) => Err(bad(
                ErrorCode::Usage,
                "--choose measured",
                format!("not with {option}: {why}"),
            )
            .hint("leave out --choose measured: the rule chooses (pinrun(1) CHOOSING CORES)")),
            None => Ok(choose),
        }
    }

    fn policy(&self) -> Result<Option<Policy>> {
        Ok(if let Some(p) = self.fifo {
            Some(Policy::Fifo(rt_prio("--fifo", p)?))
        } else if let Some(p) = self.rr {
            Some(Policy::Rr(rt_prio("--rr", p)?))
        } else if self.other {
            Some(Policy::Other)
        } else if self.batch {
            Some(Policy::Batch)
        } else if self.idle {
            Some(Policy::Idle)
        } else if self.deadline {
            Some(self.deadline_policy()?)
        } else {
            None
        })
    }

    fn deadline_policy(&self) -> Result<Policy> {
        let dur = |opt: &str, v: &Option<String>| {
            v.as_deref().map(|t| parse_duration(opt, t)).transpose()
        };
        let runtime = dur("--sched-runtime", &self.sched_runtime)?.unwrap_or(0);
        let deadline = dur("--sched-deadline", &self.sched_deadline)?;
        let period = dur("--sched-period", &self.sched_period)?;
        let (deadline, period) = match (deadline, period) {
            (Some(d), Some(p)) => (d, p),
            (Some(d), None) => (d, d),
            (None, Some(p)) => (p, p),
            (None, None) => {
                return Err(Error::new(
                    ErrorCode::BadDeadline,
                    "--deadline: needs --sched-deadline or --sched-period",
                )
                .hint("e.g. --deadline --sched-runtime 2ms --sched-deadline 10ms"));
            }
        };
        crate::plan::sched::check_dl_order(runtime, deadline, period)?;
        Ok(Policy::Deadline {
            runtime,
            deadline,
            period,
        })
    }

    /// The options whose value is optional, each as the option, its value
    /// and what it means alone (for the hint).
    fn optional_values(&mut self) -> [(&'static str, &mut Option<String>, &'static str); 4] {
        [
            ("--wait", &mut self.wait, "wait as long as it takes"),
            (
                "--membind",
                &mut self.membind,
                "the nodes of the chosen CPUs",
            ),
            ("--probe", &mut self.probe, "probe for 1s"),
            (
                "--probe-dma-latency",
                &mut self.probe_dma_latency,
                "0 microseconds",
            ),
        ]
    }

    /// Refuses an explicit empty value of an option whose value is
    /// optional (`--membind=""`: a script's unset variable must not get the
    /// default binding it never asked for; `numactl --membind=` fails with
    /// EINVAL), and turns [`BARE`] (the option alone) into the value its
    /// parser reads as "no value": `""`, or `"0"` for `--probe-dma-latency`.
    fn bare_values(&mut self) -> Result<()> {
        for (option, value, alone) in self.optional_values() {
            match value.as_deref() {
                Some("") => {
                    return Err(bad(
                        ErrorCode::Usage,
                        option,
                        "the value is empty (an unset variable?)",
                    )
                    .hint(format!(
                        "give a value ({option}=VALUE), or {option} alone for its default ({alone})"
                    )));
                }
                Some(BARE) => {
                    *value = Some(if option == "--probe-dma-latency" {
                        "0".to_string()
                    } else {
                        String::new()
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn memory(&self) -> Result<Option<MemoryRequest>> {
        Ok(if let Some(m) = &self.membind {
            if m.is_empty() {
                Some(MemoryRequest::Bind(None))
            } else {
                let nodes = NodeChoice::parse(m, |t| node_list("--membind", t)).map_err(|e| {
                    e.hint("--membind takes an optional node list: write --membind=NODES, or put -- before the command")
                })?;
                Some(MemoryRequest::Bind(Some(nodes)))
            }
        } else if let Some(n) = self.preferred {
            Some(MemoryRequest::Preferred(n))
        } else if let Some(m) = &self.preferred_many {
            Some(MemoryRequest::PreferredMany(node_list(
                "--preferred-many",
                m,
            )?))
        } else if let Some(m) = &self.interleave {
            Some(MemoryRequest::Interleave(node_choice("--interleave", m)?))
        } else if let Some(m) = &self.weighted_interleave {
            Some(MemoryRequest::WeightedInterleave(node_choice(
                "--weighted-interleave",
                m,
            )?))
        } else if self.localalloc {
            Some(MemoryRequest::Local)
        } else {
            None
        })
    }

    /// Validates the parsed options into a [`Request`]. Errors name the
    /// option and the input (exit 125).
    pub fn into_request(mut self) -> Result<Request> {
        self.bare_values()?;
        let mode = self.mode();
        let probe = self.probe_request()?;
        let host = self.host()?;
        self.check_mode(mode)?;
        let mut command = std::mem::take(&mut self.command);
        let emit = self.emit_format(&mut command)?;
        let settle = self.settle()?;
        let target = self.target()?;
        if mode == Mode::Run && command.is_empty() && target.is_none() {
            return Err(Error::new(ErrorCode::NoCommand, "no command given")
                .hint("pinrun [OPTIONS] -- COMMAND [ARG]...; or --dry-run, --check, --show"));
        }
        self.check_counts()?;
        let wait = self.wait(&command)?;
        self.check_nice()?;
        let allow = self.allow_codes()?;
        let placement = self.placement()?;
        let irq_housekeeping = self.steering()?;
        let threads = self.threads(&placement, mode)?;
        let memory = self.memory()?;
        let policy = self.policy()?;
        let claims = ClaimRequest {
            exclusive: self.exclusive,
            wait,
            state_dir: state_dir_given(self.state_dir.take())?,
            steer_irqs: self.steer_irqs,
            irq_housekeeping,
            irqbalance_config: self.irqbalance_config,
        };
        Ok(Request {
            claims,
            memory,
            sched: SchedRequest {
                policy,
                nice: self.nice,
                reset_on_fork: self.reset_on_fork,
            },
            placement,
            mode,
            output: Output {
                json: self.json,
                verbose: self.verbose,
                quiet: self.quiet,
                strict: self.strict,
                allow,
                config_file: None,
            },
            sysroot: self.sysroot,
            command,
            target,
            fleet: FleetRequest {
                emit,
                cgroup: self.cgroup,
                unit_user: self.unit_user,
                settle,
                emitted: self.check_emitted,
            },
            threads,
            probe,
            host,
        })
    }

    /// `--plan-host`'s options; `None` without it. Without a size it needs
    /// `--check` (the running host's own split).
    fn host(&self) -> Result<Option<HostRequest>> {
        if !self.plan_host {
            return Ok(None);
        }
        let size = match (self.housekeeping_count, self.latency_cores) {
            (Some(n), _) => HostSize::Housekeeping(n),
            (None, Some(n)) => HostSize::LatencyCores(n),
            (None, None) if self.check => {
                if self.offline_count.is_some() || self.no_smt || self.split_numa {
                    return Err(Error::new(
                        ErrorCode::Usage,
                        "--plan-host --check without a size audits the running kernel's split: --offline-count, --no-smt and --split-numa shape a split to plan",
                    )
                    .hint("give the split they shape: --housekeeping-count N or --latency-cores N"));
                }
                HostSize::Running
            }
            (None, None) => {
                return Err(Error::new(
                    ErrorCode::Usage,
                    "--plan-host: how many CPUs stay housekeeping is not given",
                )
                .hint("add --housekeeping-count N (CPUs) or --latency-cores N (cores); --plan-host --check alone audits the split the running kernel has"));
            }
        };
        if matches!(size, HostSize::Housekeeping(0) | HostSize::LatencyCores(0)) {
            return Err(Error::new(
                ErrorCode::Usage,
                "--plan-host: a split needs at least one housekeeping CPU and one latency core",
            )
            .hint("--housekeeping-count and --latency-cores take 1 or more"));
        }
        Ok(Some(HostRequest {
            size,
            offline: self.offline_count.unwrap_or(0),
            no_smt: self.no_smt,
            split_numa: self.split_numa,
            verify: self.check,
        }))
    }

    /// The mode the options ask for: `--emit`, `--check-emitted`,
    /// `--dry-run`, `--check`, `--show`, `--probe` without a command, else
    /// a launch (the first of these given).
    fn mode(&self) -> Mode {
        if self.plan_host {
            Mode::PlanHost
        } else if self.emit.is_some() {
            Mode::Emit
        } else if self.check_emitted.is_some() {
            Mode::CheckEmitted
        } else if self.dry_run {
            Mode::DryRun
        } else if self.check {
            Mode::Check
        } else if self.show {
            Mode::Show
        } else if self.probe.is_some() && self.command.is_empty() {
            Mode::Probe
        } else {
            Mode::Run
        }
    }

    /// Refuses output options `mode` cannot honour: `--json` with
    /// `--emit` (unit directives) or a launch (but `--pid PID` alone,
    /// whose JSON is the process), and `--sysroot` with a launch (a dump
    /// runs nothing).
    fn check_mode(&self, mode: Mode) -> Result<()> {
        if self.json {
            let why = match mode {
                Mode::Emit => Some((
                    "--emit prints unit directives, not JSON",
                    "the plan as JSON is --dry-run --json with the same options",
                )),
                // `--pid PID` alone prints the process; its JSON is that.
                Mode::Run if self.pid.is_none() => Some((
                    "a launch prints nothing to parse: after exec, standard output is the command's",
                    "the plan it would apply is --dry-run --json with the same options; --check --json its findings",
                )),
                _ => None,
            };
            if let Some((what, hint)) = why {
                return Err(Error::new(ErrorCode::Usage, format!("--json: {what}")).hint(hint));
            }
        }
        if mode == Mode::Run && self.sysroot.is_some() {
            return Err(Error::new(
                ErrorCode::SysrootNeedsMode,
                "--sysroot: only a dump can be read there, nothing can be run on it",
            )
            .hint("add --dry-run, --check, --show or --emit systemd"));
        }
        Ok(())
    }

    /// `--emit`'s format; for `--emit slurm N` the task count
    /// ([`slurm_tasks`]) is taken from the front of `command`. Then
    /// refuses `--cgroup` but with `--emit systemd`.
    fn emit_format(&self, command: &mut Vec<OsString>) -> Result<Option<EmitFormat>> {
        let emit = match self.emit {
            None => None,
            Some(Emit::Systemd) => Some(EmitFormat::Systemd),
            Some(Emit::K8s) => Some(EmitFormat::K8s),
            Some(Emit::Slurm) => Some(EmitFormat::Slurm(slurm_tasks(command)?)),
        };
        if self.unit_user.is_some() && emit != Some(EmitFormat::Systemd) {
            return Err(Error::new(
                ErrorCode::Usage,
                "--unit-user: only --emit systemd writes User=",
            )
            .hint("use --emit systemd --unit-user USER"));
        }
        if self.cgroup && emit != Some(EmitFormat::Systemd) {
            return Err(Error::new(
                ErrorCode::Usage,
                "--cgroup: only --emit systemd writes cgroup directives",
            )
            .hint("use --emit systemd --cgroup"));
        }
        Ok(emit)
    }

    /// `--settle`'s duration in nanoseconds ([`parse_duration`]), if given.
    fn settle(&self) -> Result<Option<u64>> {
        match self.settle.as_deref() {
            None => Ok(None),
            Some(t) => Ok(Some(parse_duration("--settle", t)?)),
        }
    }

    /// Refuses a count of 0 for `--cores`, `--llc`, `--dies` or
    /// `--clusters`, in that order.
    fn check_counts(&self) -> Result<()> {
        if self.cores == Some(0) {
            return Err(
                Error::new(ErrorCode::BadCores, "--cores: must be at least 1")
                    .hint("ask for one or more cores, e.g. --cores 1"),
            );
        }
        for (option, n) in [
            ("--llc", self.llc),
            ("--dies", self.dies),
            ("--clusters", self.clusters),
        ] {
            if n == Some(0) {
                return Err(Error::new(
                    ErrorCode::BadUnitCount,
                    format!("{option}: must be at least 1"),
                )
                .hint(format!("ask for one or more, e.g. {option} 1")));
            }
        }
        Ok(())
    }

    /// `--wait`: `None` when not given, `Some(None)` without a duration
    /// (wait as long as it takes), else the duration in nanoseconds.
    /// `--wait 30s -- cmd` is refused: the value needs `=`, else "30s",
    /// the first word of `command`, is the command.
    fn wait(&self, command: &[OsString]) -> Result<Option<Option<u64>>> {
        let wait = match self.wait.as_deref() {
            None => None,
            Some("") => Some(None),
            Some(t) => Some(Some(parse_duration("--wait", t)?)),
        };
        if wait == Some(None)
            && let Some(first) = command.first().and_then(|c| c.to_str())
            && parse_duration("--wait", first).is_ok()
        {
            return Err(Error::new(
                ErrorCode::BadDuration,
                format!("--wait: \"{first}\" would be run as the command"),
            )
            .hint(format!("write --wait={first}")));
        }
        Ok(wait)
    }

    /// Refuses a `--nice` outside -20..19 (setpriority(2)'s range).
    fn check_nice(&self) -> Result<()> {
        if let Some(n) = self.nice
            && !(-20..=19).contains(&n)
        {
            return Err(Error::new(
                ErrorCode::BadNice,
                format!("--nice: {n} is outside -20..19"),
            )
            .hint("nice values run from -20 (most CPU) to 19 (least)"));
        }
        Ok(())
    }

    /// The finding codes `--allow` names ([`Code::matching`]: codes,
    /// families ending in `*`, or `all`), sorted and without repeats;
    /// refused for a word that names none.
    fn allow_codes(&self) -> Result<Vec<Code>> {
        let mut allow: Vec<Code> = Vec::new();
        for word in &self.allow {
            let Some(codes) = Code::matching(word) else {
                return Err(Error::new(
                    ErrorCode::UnknownFindingCode,
                    format!("--allow: \"{word}\" names no finding code"),
                )
                .hint(Code::unknown_hint(word)));
            };
            allow.extend(codes);
        }
        allow.sort_unstable();
        allow.dedup();
        Ok(allow)
    }

    /// The placement options: `--cpus`, `--node` (or `--cpunodebind`)
    /// with numactl's list forms ([`placement_list`]), `--cores`, `--smt`,
    /// `--isolated`, `--within`, `--housekeeping`, the unit counts,
    /// `--core-type`, `--near`, `--near-irqs` and `--choose` (refused where
    /// nothing can be measured: [`Cli::measurable`]); then refuses
    /// `--exclusive` without a placement.
    fn placement(&self) -> Result<Placement> {
        let (cpus, cpus_form) = match self.cpus.as_deref() {
            None => (None, None),
            Some(t) => placement_list("--cpus", t, |t| {
                CpuSet::parse(t).map_err(|e| {
                    let err = bad(ErrorCode::BadCpuList, "--cpus", e);
                    // taskset's bare hexadecimal mask (`taskset ff CMD`).
                    match crate::exec::taskset_mask(t, crate::exec::online_here().as_ref()) {
                        Some(Ok(m)) => err.hint(format!(
                            "{t} looks like taskset's hexadecimal mask, whose CPUs here are {m}: write --cpus {}",
                            m.to_list()
                        )),
                        Some(Err(why)) => err.hint(format!(
                            "{t} looks like taskset's hexadecimal mask: {why}"
                        )),
                        // taskset's combined -cp LIST PID: -c took "p".
                        None if t == "p" => {
                            let args: Vec<String> = std::env::args().skip(1).collect();
                            match taskset_pid_hint(&args) {
                                Some(h) => err.hint(h),
                                None => err.hint(LIST_HINT),
                            }
                        }
                        None => err.hint(LIST_HINT),
                    }
                })
            })?,
        };
        let (nodes, nodes_form) = match (&self.node, &self.cpunodebind) {
            (Some(t), _) => placement_list("--node", t, |t| node_list("--node", t))?,
            (None, Some(t)) => {
                placement_list("--cpunodebind", t, |t| node_list("--cpunodebind", t))?
            }
            (None, None) => (None, None),
        };
        let placement = Placement {
            cpus,
            nodes,
            cpus_form,
            nodes_form,
            cores: self.cores,
            smt: self.smt,
            isolated: self.isolated,
            within: match self.within {
                None => Within::Auto,
                Some(WithinArg::Inherited) => Within::Inherited,
                Some(WithinArg::Cgroup) => Within::Cgroup,
            },
            housekeeping: self.housekeeping,
            units: [
                (Unit::Llc, self.llc),
                (Unit::Die, self.dies),
                (Unit::Cluster, self.clusters),
            ]
            .into_iter()
            .find_map(|(u, n)| Some((u, n?))),
            core_type: self.core_type.map(|t| match t {
                CoreTypeArg::Performance => CoreType::Performance,
                CoreTypeArg::Efficiency => CoreType::Efficiency,
            }),
            near: self.near.clone(),
            near_irqs: match self.near_irqs {
                None => NearIrqs::Report,
                Some(NearIrqsArg::Avoid) => NearIrqs::Avoid,
                Some(NearIrqsArg::Share) => NearIrqs::Share,
            },
            choose: match &self.choose {
                None => Choose::Rule,
                Some(t) => self.measurable(parse_choose(t)?)?,
            },
        };
        if self.exclusive && !placement.is_requested() {
            return Err(Error::new(
                ErrorCode::ExclusiveNeedsPlacement,
                "--exclusive: nothing to claim without a placement",
            )
            .hint("say which cores to claim: --cores N, --cpus LIST or --node NODES"));
        }
        Ok(placement)
    }

    /// The IRQ steering options: refuses `--steer-irqs` without
    /// `--exclusive`, and `--irq-housekeeping` or `--irqbalance-config`
    /// without `--steer-irqs`; returns `--irq-housekeeping`'s CPUs, refused
    /// when not a cpulist.
    fn steering(&self) -> Result<Option<CpuSet>> {
        if self.steer_irqs && !self.exclusive {
            return Err(Error::new(
                ErrorCode::SteerNeedsExclusive,
                "--steer-irqs: IRQs are moved off claimed CPUs only, and nothing is claimed without --exclusive",
            )
            .hint("add --exclusive (and a placement: --cores N, --cpus LIST or --node NODES)"));
        }
        let irq_housekeeping = match &self.irq_housekeeping {
            None => None,
            Some(_) if !self.steer_irqs => {
                return Err(Error::new(
                    ErrorCode::Usage,
                    "--irq-housekeeping: only IRQ steering uses it",
                )
                .hint("add --exclusive --steer-irqs, or drop --irq-housekeeping"));
            }
            Some(t) => Some(crate::cpuset::CpuSet::parse(t).map_err(|e| {
                Error::new(
                    ErrorCode::Usage,
                    format!("--irq-housekeeping: {t:?} is not a cpulist: {e}"),
                )
                .hint("give CPUs as a kernel cpulist, e.g. --irq-housekeeping 0-1")
            })?),
        };
        if self.irqbalance_config && !self.steer_irqs {
            return Err(Error::new(
                ErrorCode::Usage,
                "--irqbalance-config: only IRQ steering edits irqbalance's configuration",
            )
            .hint("add --exclusive --steer-irqs, or drop --irqbalance-config"));
        }
        Ok(irq_housekeeping)
    }

    /// `--omp`, `--thread-map`, `--thread-log`: both need a placement
    /// (their places and positions are the plan's), and neither can be
    /// said in a systemd unit.
    fn threads(&self, placement: &Placement, mode: Mode) -> Result<ThreadRequest> {
        let thread_map = match self.thread_map.as_deref() {
            None => Vec::new(),
            Some(t) => ThreadRule::parse_list(t).map_err(|why| {
                bad(ErrorCode::BadThreadMap, "--thread-map", why).hint(
                    "write rules as SELECTOR=TARGET[,...], e.g. --thread-map 'w1=@0,w2=@1,*=rest'; see THREADS in pinrun(1)",
                )
            })?,
        };
        let option = match (self.omp.is_some(), !thread_map.is_empty()) {
            (true, _) => "--omp",
            (false, true) => "--thread-map",
            (false, false) => return Ok(ThreadRequest::default()),
        };
        if !placement.is_requested() {
            return Err(Error::new(
                ErrorCode::ThreadsNeedPlacement,
                format!("{option}: places threads within the plan, and nothing is planned without a placement"),
            )
            .hint("add a placement: --cores N, --cpus LIST or --node NODES"));
        }
        if mode == Mode::Emit {
            // Name the format asked for, and where pinrun goes in it.
            let (format, cannot, hint) = match self.emit {
                Some(Emit::K8s) => (
                    "k8s",
                    "a pod spec",
                    "run pinrun as the container's command instead: command: [\"pinrun\", \"--cores\", \"N\", ..., \"--\", \"COMMAND\"]",
                ),
                Some(Emit::Slurm) => (
                    "slurm",
                    "srun options",
                    "run pinrun inside each task instead: srun ... pinrun --cores N ... -- COMMAND",
                ),
                _ => (
                    "systemd",
                    "unit directives",
                    "keep pinrun as the ExecStart= prefix: ExecStart=pinrun ... -- COMMAND",
                ),
            };
            return Err(Error::new(
                ErrorCode::Usage,
                format!("{option}: --emit {format} cannot say it in {cannot}"),
            )
            .hint(hint));
        }
        Ok(ThreadRequest {
            omp: self.omp.map(|o| match o {
                OmpArg::Cores => OmpPlaces::Cores,
                OmpArg::Threads => OmpPlaces::Threads,
            }),
            omp_replace: self.omp_replace,
            thread_map,
            thread_log: self.thread_log.clone(),
            poll_only: std::env::var_os("PINRUN_THREAD_WATCH").is_some_and(|v| v == "poll"),
        })
    }

    /// `--pid`, `--tid`, `--migrate`, `--migrate-limit` as a [`Target`];
    /// `self` is pinrun's own process id.
    fn target(&self) -> Result<Option<Target>> {
        let Some(text) = self.pid.as_deref() else {
            // clap's `requires` is not enforced for a flag (--migrate).
            if self.migrate || self.tid.is_some() || self.migrate_limit.is_some() {
                return Err(Error::new(
                    ErrorCode::Usage,
                    "--tid, --migrate and --migrate-limit work on a running process: they need --pid PID",
                )
                .hint("name the process with --pid PID (pgrep NAME finds it)"));
            }
            return Ok(None);
        };
        let pid = if text == "self" {
            std::process::id()
        } else {
            // Canonical decimal only, as /proc names it: "+5" and "05"
            // parse as 5 but are not how a process id is written.
            let canonical = text.bytes().all(|b| b.is_ascii_digit()) && !text.starts_with('0');
            match text.parse::<u32>() {
                Ok(p) if canonical && p > 0 && p <= i32::MAX as u32 => p,
                _ => {
                    return Err(bad(
                        ErrorCode::BadPid,
                        "--pid",
                        format!("\"{text}\" is not a process id"),
                    )
                    .hint("give a process id (pgrep NAME finds one) or self"));
                }
            }
        };
        // What works on a command pinrun starts, not on a running
        // process: refused rather than ignored.
        if let Some(option) = [
            (self.thread_map.is_some(), "--thread-map"),
            (self.omp.is_some(), "--omp"),
            (self.probe.is_some(), "--probe"),
            // Steering's undo lives as long as the command pinrun starts
            // (issue 33: the dry run listed moves the change never made).
            (self.steer_irqs, "--steer-irqs"),
        ]
        .iter()
        .find_map(|(given, o)| given.then_some(*o))
        {
            return Err(Error::new(
                ErrorCode::Usage,
                format!(
                    "{option} works on a command pinrun starts; with --pid it is not supported yet"
                ),
            )
            .hint(format!(
                "drop {option}, or start the program under pinrun: pinrun {option} ... -- COMMAND"
            )));
        }
        let migrate_limit = match self.migrate_limit.as_deref() {
            None => None,
            Some(t) => Some(parse_size("--migrate-limit", t)?),
        };
        Ok(Some(Target {
            pid,
            tid: self.tid,
            migrate: self.migrate,
            migrate_limit,
        }))
    }

    /// `--probe[=DURATION]` and its options, validated: durations with a
    /// unit, the duration at most [`crate::noise::MAX_DURATION_NS`], an
    /// interval shorter than the duration.
    fn probe_request(&self) -> Result<Option<crate::noise::ProbeRequest>> {
        use crate::noise::{ProbeMode, ProbeRequest};
        let Some(text) = self.probe.as_deref() else {
            // Each option of the probe names itself (clap's `requires`
            // would say "required arguments were not provided").
            let given = [
                ("--probe-mode", self.probe_mode.is_some()),
                ("--probe-threshold", self.probe_threshold.is_some()),
                ("--probe-interval", self.probe_interval.is_some()),
                ("--probe-max", self.probe_max.is_some()),
                ("--probe-dma-latency", self.probe_dma_latency.is_some()),
                ("--probe-tracer", self.probe_tracer.is_some()),
            ];
            if let Some((option, _)) = given.iter().find(|(_, set)| *set) {
                return Err(Error::new(
                    ErrorCode::Usage,
                    format!("{option} needs --probe: it sets how the noise probe measures, and no probe was asked for"),
                )
                .hint(format!("add --probe (or --probe=DURATION, e.g. --probe=1s) before {option}")));
            }
            return Ok(None);
        };
        let dur = |option: &str, t: &Option<String>, range: &DurationRange| {
            t.as_deref()
                .map(|t| parse_duration_in(option, t, range))
                .transpose()
        };
        let mut p = ProbeRequest::default();
        if !text.is_empty() {
            p.duration_ns = parse_duration_in("--probe", text, &PROBE_RANGE)?;
        }
        p.mode = match self.probe_mode {
            None | Some(ProbeModeArg::Spin) => ProbeMode::Spin,
            Some(ProbeModeArg::Wakeup) => ProbeMode::Wakeup,
        };
        p.threshold_ns = match dur("--probe-threshold", &self.probe_threshold, &GAP_RANGE)? {
            Some(t) => t,
            None => p.mode.default_threshold_ns(),
        };
        if let Some(t) = dur("--probe-interval", &self.probe_interval, &INTERVAL_RANGE)? {
            if t >= p.duration_ns {
                return Err(bad(
                    ErrorCode::BadDuration,
                    "--probe-interval",
                    "must be shorter than the probe",
                )
                .hint("e.g. --probe=1s --probe-interval 1ms"));
            }
            p.interval_ns = t;
        }
        p.gate_max_ns = dur("--probe-max", &self.probe_max, &GAP_RANGE)?;
        p.tracer = self
            .probe_tracer
            .map(|ProbeTracerArg::Osnoise| crate::noise::ProbeTracer::Osnoise);
        if let Some(us) = self.probe_dma_latency.as_deref() {
            // cpu_latency_qos_write() takes an s32 (kernel/power/qos.c);
            // a negative one is not a latency.
            p.dma_latency_us = Some(
                us.parse::<u32>()
                    .ok()
                    .filter(|v| i32::try_from(*v).is_ok())
                    .ok_or_else(|| {
                        bad(
                            ErrorCode::Usage,
                            "--probe-dma-latency",
                            format!("\"{us}\" is not a whole number of microseconds from 0 to 2147483647"),
                        )
                        .hint("e.g. --probe-dma-latency (0, as cyclictest) or --probe-dma-latency=10")
                    })?,
            );
        }
        // `--probe 2s -- cmd`: the value needs `=`, else "2s" is the command.
        if text.is_empty()
            && let Some(first) = self.command.first().and_then(|c| c.to_str())
            && parse_duration("--probe", first).is_ok()
        {
            return Err(Error::new(
                ErrorCode::BadDuration,
                format!("--probe: \"{first}\" would be run as the command"),
            )
            .hint(format!("write --probe={first}")));
        }
        Ok(Some(p))
    }
}

/// A size in bytes: a whole number with an optional binary unit K, M, G or
/// T (KiB, MiB, GiB, TiB; `numactl`'s and `migratepages`' readers take the
/// same letters), e.g. `512M`.
pub fn parse_size(option: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => 64,
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: Option<u64> = digits.parse().ok();
    match n.and_then(|n| (shift < 64).then(|| n.checked_mul(1u64 << shift)).flatten()) {
        Some(v) => Ok(v),
        None => Err(bad(
            ErrorCode::BadSize,
            option,
            format!("\"{text}\" is not a size"),
        )
        .hint("write bytes or a whole number with K, M, G or T, e.g. 512M")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option's hint text (what a usage error's hint quotes) is at
    /// most 150 characters, has balanced parentheses and backquotes, and
    /// never ends inside an "e.g." or on a dangling word: the class of a
    /// new user's `--generate <WHAT>: ..., e.g` and `--within <BOUND>:
    /// where --cores`.
    #[test]
    fn every_option_hint_is_whole() {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let mut n = 0;
        for arg in cmd.get_arguments() {
            let Some(help) = arg.get_help() else { continue };
            let h = short_help(&help.to_string());
            let name = arg.get_id().to_string();
            n += 1;
            assert!(h.len() <= 150, "{name}: {h}");
            assert_eq!(
                h.matches('(').count(),
                h.matches(')').count(),
                "{name}: {h}"
            );
            assert_eq!(h.matches('`').count() % 2, 0, "{name}: {h}");
            let last = h.trim_end_matches('.').rsplit(' ').next().unwrap_or("");
            assert!(
                !matches!(
                    last,
                    "e.g" | "i.e" | "with" | "where" | "the" | "a" | "and" | "or"
                ),
                "{name}: {h}"
            );
            assert!(!h.is_empty(), "{name}");
            // Whole, or marked as cut: the hint is the help's first
            // sentence, or it and its asides' remainder end at a clause
            // (". ", "; ", ": "), or it ends in "…".
            let help = help.to_string();
            let asides_out = without_asides(&help);
            let whole = |text: &str| {
                text.strip_prefix(h.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', ';', ':']))
            };
            assert!(
                whole(&help) || whole(&asides_out) || h.ends_with('…'),
                "{name}: the hint {h:?} leaves out part of a clause unmarked"
            );
        }
        assert!(n > 50);
        assert_eq!(
            short_help(&format!(
                "Only with {}.",
                ["--a-long-option-name"; 12].join(", ")
            )),
            format!("Only with {}, …", ["--a-long-option-name"; 6].join(", "))
        );
        assert_eq!(
            short_help("Write it, e.g. `x > y` (see Z). More."),
            "Write it, e.g. `x > y` (see Z)"
        );
    }

    /// `text` without its parenthesised asides, its spaces single, as a
    /// reader skipping the asides reads it.
    fn without_asides(text: &str) -> String {
        let mut plain = String::new();
        let mut depth = 0usize;
        for c in text.chars() {
            match c {
                '(' => depth += 1,
                ')' if depth > 0 => depth -= 1,
                _ if depth == 0 => plain.push(c),
                _ => {}
            }
        }
        plain
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" ,", ",")
            .replace(" ;", ";")
            .replace(" :", ":")
            .replace(" .", ".")
    }

    fn req(args: &[&str]) -> Result<Request> {
        let mut v = vec!["pinrun"];
        v.extend_from_slice(args);
        Cli::try_parse_from(v).expect("clap").into_request()
    }

    /// `--probe[=DURATION]`: the defaults, the options, the 60 s cap, the
    /// mode without a command, and `--probe 2s` (2s would be the command).
    #[test]
    fn probe_options() {
        use crate::noise::{ProbeMode, ProbeRequest};
        let r = req(&["--probe", "--cpus", "1"]).unwrap();
        assert_eq!(
            (r.mode, r.probe),
            (Mode::Probe, Some(ProbeRequest::default()))
        );
        let r = req(&[
            "--probe=250ms",
            "--probe-mode",
            "wakeup",
            "--probe-interval",
            "500us",
            "--probe-threshold",
            "20us",
            "--probe-max",
            "50us",
            "--",
            "true",
        ])
        .unwrap();
        assert_eq!(r.mode, Mode::Run);
        assert_eq!(
            r.probe,
            Some(ProbeRequest {
                duration_ns: 250_000_000,
                mode: ProbeMode::Wakeup,
                threshold_ns: 20_000,
                gate_max_ns: Some(50_000),
                interval_ns: 500_000,
                dma_latency_us: None,
                tracer: None,
            })
        );
        assert!(req(&["--probe=60s", "true"]).is_ok());
        let e = req(&["--probe=61s", "true"]).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadDuration);
        let e = req(&["--probe", "2s", "true"]).unwrap_err();
        assert_eq!(e.hint.as_deref(), Some("write --probe=2s"));
        let e = req(&["--probe=1s", "--probe-interval", "1s"]).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadDuration);
        assert!(req(&["--probe=1s", "--probe-max", "20"]).is_err());
    }

    /// `--probe-dma-latency[=US]`: never by default; 0 (cyclictest's
    /// value) without a value; an s32 of microseconds at most; only with
    /// --probe.
    #[test]
    fn probe_dma_latency_option() {
        let probe = |args: &[&str]| req(args).map(|r| r.probe.unwrap().dma_latency_us);
        assert_eq!(probe(&["--probe"]).unwrap(), None);
        assert_eq!(probe(&["--probe", "--probe-dma-latency"]).unwrap(), Some(0));
        assert_eq!(
            probe(&["--probe", "--probe-dma-latency=20", "--", "true"]).unwrap(),
            Some(20)
        );
        assert_eq!(
            probe(&["--probe", "--probe-dma-latency=2147483647"]).unwrap(),
            Some(i32::MAX as u32)
        );
        for bad in ["-1", "2147483648", "10us"] {
            let e = probe(&["--probe", &format!("--probe-dma-latency={bad}")]).unwrap_err();
            assert_eq!(e.code, ErrorCode::Usage, "{bad}");
        }
        let e = req(&["--probe-dma-latency", "--", "true"]).unwrap_err();
        assert!(
            e.message.starts_with("--probe-dma-latency needs --probe"),
            "{}",
            e.message
        );
    }

    /// The wake-up mode's own default threshold (100 µs: a SCHED_OTHER
    /// thread wakes up to its 50 µs timer slack late, so 1 µs would count
    /// every sample) and its shortest interval (10 µs); an explicit
    /// threshold still wins.
    #[test]
    fn wakeup_threshold_and_interval_bounds() {
        let probe = |args: &[&str]| req(args).unwrap().probe.unwrap();
        assert_eq!(probe(&["--probe"]).threshold_ns, 1_000);
        let w = probe(&["--probe", "--probe-mode", "wakeup"]);
        assert_eq!((w.threshold_ns, w.interval_ns), (100_000, 1_000_000));
        let w = probe(&[
            "--probe",
            "--probe-mode",
            "wakeup",
            "--probe-threshold",
            "5us",
        ]);
        assert_eq!(w.threshold_ns, 5_000);
        assert_eq!(
            probe(&[
                "--probe",
                "--probe-mode",
                "wakeup",
                "--probe-interval",
                "10us"
            ])
            .interval_ns,
            10_000
        );
        for short in ["1ns", "9999ns", "9us"] {
            let e = req(&[
                "--probe",
                "--probe-mode",
                "wakeup",
                "--probe-interval",
                short,
            ])
            .unwrap_err();
            assert_eq!(e.code, ErrorCode::BadDuration, "{short}");
            assert!(
                e.message.starts_with(&format!(
                    "--probe-interval: \"{short}\" is shorter than 10us"
                )),
                "{}",
                e.message
            );
            assert!(e.hint.is_some());
        }
    }

    /// Every option of the probe given without --probe names itself and
    /// --probe (not clap's "required arguments were not provided").
    #[test]
    fn probe_options_need_probe() {
        for (option, value) in [
            ("--probe-mode", "wakeup"),
            ("--probe-threshold", "1us"),
            ("--probe-interval", "1ms"),
            ("--probe-max", "1ms"),
        ] {
            let e = req(&[option, value, "--", "true"]).unwrap_err();
            assert_eq!(e.code, ErrorCode::Usage);
            assert!(
                e.message.starts_with(&format!("{option} needs --probe")),
                "{}",
                e.message
            );
            assert!(e.hint.as_deref().unwrap_or("").contains("--probe=1s"));
        }
    }

    /// --probe conflicts with each mode by name: clap names the one given,
    /// not the whole mode group.
    #[test]
    fn probe_conflict_names_the_mode_given() {
        for mode in ["--dry-run", "--check", "--show"] {
            let e = Cli::try_parse_from(["pinrun", "--probe", mode]).unwrap_err();
            let text = e.render().to_string();
            assert!(text.contains(&format!("'{mode}'")), "{text}");
            for other in [
                "--dry-run",
                "--check",
                "--show",
                "--emit",
                "--check-emitted",
            ] {
                if other != mode {
                    assert!(!text.contains(&format!("'{other}")), "{text}");
                }
            }
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("x", "4096").unwrap(), 4096);
        assert_eq!(parse_size("x", "512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("x", "2g").unwrap(), 2 << 30);
        for bad in ["", "M", "1.5G", "-1", "9Q", "99999999999T"] {
            assert!(parse_size("x", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("x", "500us").unwrap(), 500_000);
        assert_eq!(parse_duration("x", "1.5ms").unwrap(), 1_500_000);
        assert_eq!(parse_duration("x", "2s").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration("x", "10ns").unwrap(), 10);
        assert_eq!(parse_duration("x", "1m").unwrap(), 60_000_000_000);
        for bad in ["10", "ms", "1.2.3ms", "-1ms", "0ms", "1d", "99999999999s"] {
            let e = parse_duration("x", bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadDuration, "{bad}");
            // Every error names the option and the text, with a hint.
            assert!(
                e.message.starts_with(&format!("x: \"{bad}\" ")),
                "{}",
                e.message
            );
            let hint = e.hint.as_deref().unwrap_or("");
            assert!(hint.contains("e.g. 500us"), "{bad}");
        }
        // Each error names its own cause: the sign and the number are
        // judged before the unit ("-1s" once said "needs a unit").
        let why = |t: &str| parse_duration("--probe", t).unwrap_err().message;
        for (t, want) in [
            (
                "-1s",
                "--probe: \"-1s\" is negative: --probe takes from 1ns to about 292 years (2^63-1 ns)",
            ),
            (
                "-0.5ms",
                "--probe: \"-0.5ms\" is negative: --probe takes from 1ns to about 292 years (2^63-1 ns)",
            ),
            ("+1s", "--probe: \"+1s\" is not a number with a unit"),
            ("ms", "--probe: \"ms\" is not a number with a unit"),
            (
                "1.2.3ms",
                "--probe: \"1.2.3ms\" is not a number with a unit",
            ),
            ("10", "--probe: \"10\" needs a unit"),
            ("1d", "--probe: \"1d\" has an unknown unit \"d\""),
            (
                "0ms",
                "--probe: \"0ms\" is shorter than 1ns: --probe takes from 1ns to about 292 years (2^63-1 ns)",
            ),
        ] {
            assert_eq!(why(t), want, "{t}");
        }
    }

    /// Every duration option refuses what is outside its own range, the
    /// message and the hint naming the same bounds in the same units:
    /// `--probe=1ns` (below what the probe measures, noise::MIN_DURATION_NS)
    /// and `--probe=61s` (its cap), `--choose measured=5ms`,
    /// `--probe-interval 1us` (noise::MIN_INTERVAL_NS); `--wait` and
    /// `--settle` take any positive duration.
    #[test]
    fn each_duration_option_names_its_range() {
        let err = |args: &[&str]| {
            let e = req(args).map(|_| ()).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadDuration, "{args:?}");
            (e.message, e.hint.unwrap_or_default())
        };
        let probe_hint =
            "write a number with a unit (ns, us, ms, s, m or h) from 10ms to 60s, e.g. --probe=1s";
        for (args, message, hint) in [
            (
                &["--probe=1ns", "--cpus", "0"][..],
                "--probe: \"1ns\" is shorter than 10ms (the probe measures nothing shorter: one scheduler tick at HZ=100, five periods of the sampler that lines gaps up in time): --probe takes from 10ms to 60s",
                probe_hint,
            ),
            (
                &["--probe=61s", "--cpus", "0"][..],
                "--probe: \"61s\" is longer than 60s (the probe's cap; longer measurements are oslat's or cyclictest's job): --probe takes from 10ms to 60s",
                probe_hint,
            ),
            (
                &["--probe=-1s", "--cpus", "0"][..],
                "--probe: \"-1s\" is negative: --probe takes from 10ms to 60s",
                probe_hint,
            ),
            (
                &["--probe=2x", "--cpus", "0"][..],
                "--probe: \"2x\" has an unknown unit \"x\"",
                probe_hint,
            ),
            (
                &["--choose", "measured=5ms", "--cores", "1", "true"][..],
                "--choose measured: \"5ms\" is shorter than 10ms (a scheduler tick at HZ=100 must fit): --choose measured takes from 10ms to 10s",
                "write a number with a unit (ns, us, ms, s, m or h) from 10ms to 10s, e.g. --choose measured=300ms (1s when left out)",
            ),
            (
                &[
                    "--probe",
                    "--probe-mode",
                    "wakeup",
                    "--probe-interval",
                    "1us",
                    "--cpus",
                    "0",
                ][..],
                "--probe-interval: \"1us\" is shorter than 10us (below it a wake-up is within the timer slack and the hrtimer's own expiry, and the probe would measure itself): --probe-interval takes from 10us to 60s",
                "write a number with a unit (ns, us, ms, s, m or h) from 10us to 60s, e.g. --probe-interval 100us (cyclictest's default is 1ms)",
            ),
            (
                &["--probe", "--probe-max", "0us", "--cpus", "0"][..],
                "--probe-max: \"0us\" is shorter than 1ns: --probe-max takes from 1ns to 60s",
                "write a number with a unit (ns, us, ms, s, m or h) from 1ns to 60s, e.g. --probe-max 50us",
            ),
            (
                &["--wait=0s", "--cpus", "0", "true"][..],
                "--wait: \"0s\" is shorter than 1ns: --wait takes from 1ns to about 292 years (2^63-1 ns)",
                "write a number with a unit (ns, us, ms, s, m or h) from 1ns to about 292 years (2^63-1 ns), e.g. 500us",
            ),
        ] {
            assert_eq!(
                err(args),
                (message.to_string(), hint.to_string()),
                "{args:?}"
            );
        }
        // The bounds themselves are taken.
        let p = |args: &[&str]| req(args).unwrap().probe.unwrap().duration_ns;
        assert_eq!(p(&["--probe=10ms", "--cpus", "0"]), 10_000_000);
        assert_eq!(p(&["--probe=60s", "--cpus", "0"]), 60_000_000_000);
    }

    #[test]
    fn command_passes_through() {
        let r = req(&["--cpus", "0", "--", "ls", "-l", "--cpus"]).unwrap();
        assert_eq!(r.command, vec!["ls", "-l", "--cpus"]);
        let r = req(&["--cpus", "0", "ls", "-l"]).unwrap();
        assert_eq!(r.command, vec!["ls", "-l"]);
    }

    /// --omp and --thread-map place threads within a plan: refused without
    /// a placement and under --emit; rules that do not parse are
    /// bad-thread-map; --thread-log and --omp-replace need their option.
    #[test]
    fn thread_options_need_a_placement() {
        let code = |args: &[&str]| req(args).map(|_| ()).unwrap_err().code;
        assert_eq!(code(&["--omp", "true"]), ErrorCode::ThreadsNeedPlacement);
        assert_eq!(
            code(&["--thread-map", "w1=@0", "true"]),
            ErrorCode::ThreadsNeedPlacement
        );
        assert_eq!(
            code(&["--cpus", "0", "--thread-map", "w1", "true"]),
            ErrorCode::BadThreadMap
        );
        assert_eq!(
            code(&["--emit", "systemd", "--cpus", "0", "--omp", "true"]),
            ErrorCode::Usage
        );
        let r = req(&["--cpus", "0", "--omp=threads", "true"]).unwrap();
        assert_eq!(r.threads.omp, Some(OmpPlaces::Threads));
        let r = req(&["--cpus", "0", "--omp", "--", "true"]).unwrap();
        assert_eq!(r.threads.omp, Some(OmpPlaces::Cores));
        for args in [
            &["pinrun", "--cpus", "0", "--thread-log", "f", "true"][..],
            &["pinrun", "--cpus", "0", "--omp-replace", "true"][..],
        ] {
            assert!(Cli::try_parse_from(args).is_err(), "{args:?}");
        }
    }

    /// Every option whose value is optional (`num_args = 0..=1`) refuses
    /// an explicit empty value, `--X=` and, where the value may follow as
    /// its own word, `--X ""`, as numactl refuses `--membind=` (its
    /// `set_mempolicy(2)` answers EINVAL): the option alone means its
    /// default, an empty value is a script's unset variable. The class is
    /// read from clap's own definition, so an option added later is in it.
    #[test]
    fn an_explicit_empty_optional_value_is_refused() {
        let cmd = command();
        let optional: Vec<&clap::Arg> = cmd
            .get_arguments()
            .filter(|a| a.get_long().is_some())
            .filter(|a| {
                a.get_num_args()
                    .is_some_and(|n| n.min_values() == 0 && n.takes_values())
            })
            .collect();
        let longs: Vec<&str> = optional.iter().filter_map(|a| a.get_long()).collect();
        assert_eq!(
            longs,
            [
                "wait",
                "membind",
                "probe",
                "probe-dma-latency",
                "probe-tracer",
                "omp"
            ]
        );
        for arg in optional {
            let long = format!("--{}", arg.get_long().unwrap());
            let mut forms = vec![vec![format!("{long}=")]];
            if !arg.is_require_equals_set() {
                forms.push(vec![long.clone(), String::new()]);
            }
            for form in forms {
                let mut argv = vec!["pinrun".to_string()];
                argv.extend(form.iter().cloned());
                // What the option needs besides: --probe's options need --probe.
                if long.starts_with("--probe-") {
                    argv.push("--probe".into());
                }
                argv.extend(["--cores".into(), "1".into(), "true".into()]);
                let message = match Cli::try_parse_from(&argv) {
                    Err(e) => {
                        let os: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
                        clap_message(&e, &os)
                    }
                    Ok(c) => c.into_request().expect_err(&form.join(" ")).message,
                };
                assert!(message.starts_with(&format!("{long}: ")), "{message}");
                assert!(message.contains("empty"), "{message}");
            }
            // Alone, the option is its default.
            let mut argv = vec!["pinrun".to_string(), long.clone()];
            if long.starts_with("--probe-") {
                argv.push("--probe".into());
            }
            argv.extend(["--cores".into(), "1".into(), "--".into(), "true".into()]);
            let r = Cli::try_parse_from(&argv).expect("clap").into_request();
            assert!(r.is_ok(), "{argv:?}: {:?}", r.err().map(|e| e.message));
        }
        // The bare forms keep their meaning: --membind alone binds to the
        // chosen CPUs' nodes, --probe-dma-latency alone is 0 us.
        let r = req(&["--membind", "--cores", "1", "--", "true"]).unwrap();
        assert_eq!(r.memory, Some(MemoryRequest::Bind(None)));
        let r = req(&["--probe", "--probe-dma-latency", "true"]).unwrap();
        assert_eq!(r.probe.unwrap().dma_latency_us, Some(0));
        let r = req(&["--cores", "1", "--wait", "--", "true"]).unwrap();
        assert_eq!(r.claims.wait, Some(None));
    }

    /// Every option that takes a node list says "node number" and offers
    /// node lists (numactl(8)'s forms), never a CPU number or a CPU mask.
    #[test]
    fn node_list_errors_speak_of_nodes() {
        for opt in [
            "--node",
            "--cpunodebind",
            "--membind",
            "--preferred-many",
            "--interleave",
            "--weighted-interleave",
        ] {
            for bad_list in ["x", "0,", ""] {
                let arg = format!("{opt}={bad_list}");
                let e = req(&[&arg, "--", "true"]).unwrap_err();
                assert!(e.message.starts_with(&format!("{opt}: ")), "{}", e.message);
                assert!(!e.message.contains("CPU"), "{arg}: {}", e.message);
                let hint = e.hint.unwrap_or_default();
                assert!(hint.contains("node"), "{arg}: {hint}");
                assert!(!hint.contains("mask"), "{arg}: {hint}");
            }
        }
    }

    #[test]
    fn membind_optional_value() {
        let r = req(&["--membind", "--", "true"]).unwrap();
        assert_eq!(r.memory, Some(MemoryRequest::Bind(None)));
        assert_eq!(
            req(&["--membind=!1", "true"]).unwrap().memory,
            Some(MemoryRequest::Bind(Some(NodeChoice::AllBut(
                [1].into_iter().collect()
            ))))
        );
        let r = req(&["--membind", "0,2", "true"]).unwrap();
        assert_eq!(
            r.memory,
            Some(MemoryRequest::Bind(Some(NodeChoice::Nodes(
                [0, 2].into_iter().collect()
            ))))
        );
        let e = req(&["--membind", "sh", "--", "true"]).unwrap_err();
        assert!(e.hint.unwrap().contains("--membind=NODES"));
    }

    #[test]
    fn deadline_rules() {
        let r = req(&[
            "--deadline",
            "--sched-runtime",
            "2ms",
            "--sched-period",
            "10ms",
            "true",
        ])
        .unwrap();
        assert_eq!(
            r.sched.policy,
            Some(Policy::Deadline {
                runtime: 2_000_000,
                deadline: 10_000_000,
                period: 10_000_000
            })
        );
        assert!(
            req(&[
                "--deadline",
                "--sched-runtime",
                "20ms",
                "--sched-period",
                "10ms",
                "true"
            ])
            .is_err()
        );
        assert!(req(&["--deadline", "--sched-runtime", "1ms", "true"]).is_err());
        assert!(
            req(&[
                "--deadline",
                "--sched-runtime",
                "100ns",
                "--sched-period",
                "1ms",
                "true"
            ])
            .is_err()
        );
    }

    #[test]
    fn range_checks() {
        assert_eq!(
            req(&["--fifo", "0", "true"]).unwrap_err().code.as_str(),
            "bad-priority"
        );
        assert_eq!(
            req(&["--rr", "100", "true"]).unwrap_err().code.as_str(),
            "bad-priority"
        );
        assert_eq!(
            req(&["--nice", "20", "true"]).unwrap_err().code.as_str(),
            "bad-nice"
        );
        assert_eq!(
            req(&["--nice", "-20", "true"]).unwrap().sched.nice,
            Some(-20)
        );
        assert_eq!(
            req(&["--cores", "0", "true"]).unwrap_err().code.as_str(),
            "bad-cores"
        );
        assert_eq!(
            req(&["--sysroot", "/x", "true"]).unwrap_err().code.as_str(),
            "sysroot-needs-mode"
        );
        assert_eq!(
            req(&["--cpus", "0"]).unwrap_err().code.as_str(),
            "no-command"
        );
        assert_eq!(
            req(&["--cpus", "3-1", "true"]).unwrap_err().code.as_str(),
            "bad-cpu-list"
        );
    }

    #[test]
    fn claim_options() {
        let r = req(&["--exclusive", "--cores", "1", "--wait", "--", "true"]).unwrap();
        assert!(r.claims.exclusive);
        assert_eq!(r.claims.wait, Some(None));
        let r = req(&["--cores", "1", "--wait=1.5s", "true"]).unwrap();
        assert_eq!(r.claims.wait, Some(Some(1_500_000_000)));
        // --wait takes its value only with '=': the next word is the command.
        let r = req(&["--cores", "1", "--wait", "sleep", "1"]).unwrap();
        assert_eq!((r.claims.wait, r.command.len()), (Some(None), 2));
        assert_eq!(
            req(&["--wait=5", "true"]).unwrap_err().code.as_str(),
            "bad-duration"
        );
        assert_eq!(
            req(&["--exclusive", "true"]).unwrap_err().code.as_str(),
            "exclusive-needs-placement"
        );
        let r = req(&["--state-dir", "/tmp/x", "--show"]).unwrap();
        assert_eq!(r.claims.state_dir, Some("/tmp/x".into()));
        assert!(Cli::try_parse_from(["pinrun", "--show", "--exclusive"]).is_err());
    }

    #[test]
    fn conflicting_options_rejected_by_clap() {
        for args in [
            vec!["pinrun", "--fifo", "1", "--rr", "1", "true"],
            vec!["pinrun", "--smt", "true"],
            vec!["pinrun", "--dry-run", "--show"],
            vec!["pinrun", "--membind=0", "--interleave", "all", "true"],
        ] {
            assert!(Cli::try_parse_from(&args).is_err(), "{args:?}");
        }
    }
}
