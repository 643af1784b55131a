//! What to read: [`Scope`] tells [`super::SystemState::read_scoped`] which
//! files a request needs, so that a launch reads a few dozen small files
//! instead of every CPU's topology and cache directories.
//!
//! The rule is exactness, not approximation: every field that `plan` and
//! `check` look at for the request is read exactly as a full read would read
//! it; only data they never look at is left out (and is then `None`, empty
//! or default). `--show` prints everything and uses [`Scope::full`].
//! Code that starts looking at a new field for some request must widen
//! `crate::app::scope::for_request` accordingly; `tests/it/scope.rs` compares the plan
//! and findings of a scoped read with those of a full read on every fixture.

use crate::cpuset::{CpuSet, NodeSet};

/// Whose topology to read: `core_cpus_list` (the core's siblings) of these
/// CPUs, and `core_id`, `physical_package_id` and `package_cpus_list` of
/// the lowest CPU of each of their cores (the planner names a core by that
/// CPU, and reads the ids of no other). Without `details` nothing else is
/// read per CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cpus {
    /// Every CPU.
    All,
    /// No placement: the allowed CPUs that are isolated (the check
    /// `sibling-not-isolated` names their siblings).
    None,
    /// These CPUs (`--cpus LIST`: the candidates are among them).
    Only(CpuSet),
    /// The CPUs in these nodes' cpulists (`--node NODES` without `--cpus`).
    Nodes(NodeSet),
}

/// The parts of the machine to read. Always read, whatever the scope:
/// the CPU sets, every node's cpulist (node of every CPU, `firmware-data`
/// warnings), `has_memory`, the caller's status and cgroup cpuset
/// (allowed CPUs and memory nodes, partition) and the OpenMP variables;
/// with `isolation`, `/proc/cmdline` and the isolation sets. With
/// `irqs`, every IRQ's number and affinity (`/sys/kernel/irq` or else
/// `/proc/interrupts`, `/proc/irq/N/`, `default_smp_affinity`). The
/// governors and idle states of the checked CPUs (only when info findings
/// can be shown), and (from `/sys/kernel/irq`) the names and counts of the
/// IRQs delivered to them, are read after planning
/// (`crate::app::scope::read_extras_for`); with `details`, every IRQ's
/// are read with the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// CPUs whose topology is read; the others keep only `id`, `online`
    /// and `node`. With `details` and [`Cpus::All`], every CPU is read whole.
    pub topology: Cpus,
    /// Every node's `meminfo` and `distance` (`bind-low-memory`,
    /// `memory-remote`): needed by any memory policy. Without it `meminfo`
    /// is read only when `node/has_memory` is missing, and `distance` only
    /// of nodes without memory (the planner's nearest-memory hint).
    pub memory: bool,
    /// `/proc/self/limits` (`RLIMIT_RTPRIO` and RLIMIT_NICE, which matter
    /// only without `CAP_SYS_NICE`, and `RLIMIT_RTTIME`, which the
    /// capability does not lift), the RT throttling sysctls (the
    /// deadline bandwidth too), the SCHED_DEADLINE period bounds and the
    /// current policy (`/proc/self/stat`): any policy option.
    pub rt: bool,
    /// The current nice value (`/proc/self/stat`) and `RLIMIT_NICE`:
    /// `--nice` (lowering it needs the limit or `CAP_SYS_NICE`).
    pub nice: bool,
    /// RT group scheduling (the v1 `cpu` cgroup's `cpu.rt_runtime_us`, the
    /// v2 cgroup path): any scheduling request (the planner refuses RT
    /// policies by it; an EPERM from the kernel is explained by it, with the
    /// kernel config read only then).
    pub sched: bool,
    /// `/proc/cmdline` and the isolation sets (`cpu/isolated`,
    /// `cpu/nohz_full`, the root `cpuset.cpus.isolated`; their sources and
    /// disagreements): the isolation checks, and the planner wherever it
    /// chooses or refuses by them (the inherited affinity's bound, which
    /// leaves the isolated CPUs aside, `--isolated`, `--housekeeping`,
    /// SCHED_DEADLINE's root domain, the housekeeping CPUs of
    /// `--thread-map`, `--steer-irqs` and `--probe`). Without it
    /// `isolated`, `nohz_full` and `cmdline` are empty: only a launch that
    /// uses no finding and names its CPUs leaves it out.
    pub isolation: bool,
    /// The kernel release (`/proc/sys/kernel/osrelease`), for messages
    /// and, below a dump only, SCHED_DEADLINE's period bounds before 5.9
    /// and `cpuset-resets-affinity` before 6.2: a `--quiet` launch
    /// without them does not read it.
    pub kernel: bool,
    /// Ask the kernel which newer memory policy modes it has
    /// ([`super::process::mempolicy_modes`]): a request for
    /// `--preferred-many` or `--weighted-interleave`.
    pub mempolicy_modes: bool,
    /// Every IRQ (`/proc/interrupts`, `/proc/irq/N/`,
    /// `default_smp_affinity`): the IRQ findings are disturbances, seen
    /// only when the request is latency-critical or shows info
    /// (`Request::latency_critical`, `Request::shows_info`).
    pub irqs: bool,
    /// What only info findings need: `numa_balancing` (and, after
    /// planning, the governors and idle states): `Request::shows_info`.
    pub info: bool,
    /// The RCU callback-offload kthreads (a scan of every process's
    /// `comm`): `--check` and `--show` only, so that a dry run and the
    /// launch read the same sources.
    pub kthreads: bool,
    /// What the latency rule of `--cores` ranks by (`crate::plan::quiet`):
    /// the names and counts of the IRQs on the allowed CPUs (from
    /// `/sys/kernel/irq`, detailed before planning rather than after it for
    /// the chosen CPUs only), and PID 1's affinity (as `init`). Implies
    /// reading the IRQs' affinities whatever `irqs` says.
    pub quiet: bool,
    /// The affinity of PID 1 (`/proc/1/status`: systemd's `CPUAffinity=`
    /// on a host): the latency rule names it for housekeeping, and the
    /// inherited affinity is no narrowing when it holds it
    /// (`crate::plan::inherited_bound`): any placement that chooses.
    pub init: bool,
    /// What only `--show` prints: die, cluster, the LLC (`cache/index*`)
    /// and governor of every CPU, `/proc/self/stat` (nice).
    pub details: bool,
    /// The placement units of the first CPU of each of the topology
    /// targets' cores (every online CPU's `cpu_capacity`): `die_cpus_list`, `cluster_cpus_list`, the LLC
    /// (`cache/index*`) and `cpu_capacity`, and the hybrid core types
    /// (`/sys/devices/cpu_core/cpus`, `cpu_atom/cpus`): `--cores` (compact
    /// inside the LLC), `--llc`, `--dies`, `--clusters`, `--core-type`,
    /// and the `efficiency-core` check of real-time and `--isolated`
    /// launches.
    pub units: bool,
    /// The device `--near` names (a network interface, PCI address,
    /// block device or file): its sysfs directory, `numa_node`,
    /// `local_cpulist` and `msi_irqs` ([`super::devices::read_device`]).
    pub near: Option<String>,
    /// The kernel's preemption model ([`super::preempt::read`]: debugfs,
    /// `/sys/kernel/realtime`, else the kernel configuration, ~250 KB):
    /// the `preempt-model` check of a real-time or deadline request with
    /// `--probe` or `--check`.
    pub preempt: bool,
    /// The process whose cgroup bounds the plan (`/proc/PID/cgroup`, its
    /// cpuset's effective CPUs and mems, its RT group): `--pid`'s target;
    /// `None`: this process (`/proc/self`).
    pub cgroup_of: Option<u32>,
}

impl Scope {
    /// Everything (`--show`, and [`super::SystemState::read`]).
    pub fn full() -> Self {
        Self {
            topology: Cpus::All,
            memory: true,
            rt: true,
            nice: true,
            sched: true,
            isolation: true,
            kernel: true,
            mempolicy_modes: false,
            irqs: true,
            info: true,
            kthreads: true,
            quiet: true,
            init: true,
            details: true,
            units: true,
            near: None,
            preempt: true,
            cgroup_of: None,
        }
    }
}
