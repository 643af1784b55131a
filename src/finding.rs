//! Findings as data: a [`Finding`] (code, severity, the CPUs, nodes and
//! IRQs concerned, message, hint) and the closed list of finding [`Code`]s.
//! The checks that produce them are [`crate::check`]; pinrun(1)'s CHECKS
//! list ([`Code::man_list`]) and `--allow` validation ([`Code::parse`]) are
//! derived from [`Code::ALL`], so a new code is one variant here (with its
//! man text) and one entry in the `CODES` of the check that emits it.

use crate::cpuset::CpuSet;
use serde::Serialize;
use std::fmt;

/// Declares [`Code`]: each variant with its kebab-case name and its man
/// text (roff, pinrun(1) CHECKS), in the order of the man page.
macro_rules! finding_codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $man:literal;)*) => {
        /// Every finding code pinrun emits (pinrun(1) CHECKS and CLAIMS),
        /// printed in kebab-case (`irq-on-cpu`) in text and JSON.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order of pinrun(1) CHECKS.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The kebab-case name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }

            /// What the code means and the fix: pinrun(1) CHECKS text (roff).
            pub fn man(self) -> &'static str {
                match self {
                    $(Code::$variant => $man,)*
                }
            }
        }
    };
}

finding_codes! {
    /// `not-isolated`.
    NotIsolated = "not-isolated",
        r#"(notice) a chosen CPU is not in /sys/devices/system/cpu/isolated nor a cgroup v2
isolated partition; when isolcpus= lists it without the domain flag, the
message says what the given flags do instead; or it is isolated but in
/sys/devices/virtual/workqueue/cpumask, where unbound workqueue workers run.
Fix: isolcpus=domain,managed_irq,LIST.
"#;
    /// `not-nohz-full`.
    NotNohzFull = "not-nohz-full",
        r#"the scheduler tick still runs on the CPU: not nohz_full, nohz=off, or a
SCHED_DEADLINE command (which keeps the tick). Fix: nohz_full=LIST.
"#;
    /// `not-rcu-nocbs`.
    NotRcuNocbs = "not-rcu-nocbs",
        r#"(notice) RCU callbacks run on the CPU. Fix: rcu_nocbs=LIST (implied by nohz_full=).
"#;
    /// `isolation-not-applied`.
    IsolationNotApplied = "isolation-not-applied",
        r#"isolcpus= or nohz_full= asks for a CPU the kernel did not isolate (usually the
boot CPU); pinrun trusts sysfs.
"#;
    /// `isolcpus-unknown-flag`.
    IsolcpusUnknownFlag = "isolcpus-unknown-flag",
        r#"isolcpus= has a flag other than nohz, domain, managed_irq: since 5.7 the kernel
skips one of letters only; another (any, before 5.7) rejects the parameter.
"#;
    /// `isolated-no-balancing`.
    IsolatedNoBalancing = "isolated-no-balancing",
        r#"several chosen CPUs, all domain-isolated: threads are never moved between them.
"#;
    /// `sibling-not-isolated`.
    SiblingNotIsolated = "sibling-not-isolated",
        r#"an SMT sibling of an isolated chosen CPU is not isolated.
"#;
    /// `isolation-mixed`.
    IsolationMixed = "isolation-mixed",
        r#"(warning) the chosen CPUs mix domain-isolated and housekeeping CPUs: the
scheduler balances no task onto the isolated ones, so a thread stays on the
kind of CPU it starts on.
"#;
    /// `isolated-without-intent`.
    IsolatedWithoutIntent = "isolated-without-intent",
        r#"(notice) a request without latency intent (no real-time or deadline
policy, --exclusive, --isolated, --probe or --steer-irqs) was given isolated or
nohz_full CPUs because nothing else fit.
"#;
    /// `efficiency-core`.
    EfficiencyCore = "efficiency-core",
        r#"a real-time or --isolated launch lands on CPUs that are not performance cores
(cpu_atom on Intel hybrids, a cpu_capacity below the highest on arm64).
"#;
    /// `partition-invalid`.
    PartitionInvalid = "partition-invalid",
        r#"the caller's cgroup v2 partition reads "isolated invalid (...)".
"#;
    /// `irq-on-cpu`.
    IrqOnCpu = "irq-on-cpu",
        r#"(warning when one fired there, notice when none did) device IRQs whose
effective affinity (effective_affinity_list, else smp_affinity_list, else
smp_affinity) includes a chosen CPU: one finding for all, most active first.
Fix: write the housekeeping CPUs to /proc/irq/N/smp_affinity_list (the hint
is one command line for all); ban the CPUs in irqbalance.
"#;
    /// `managed-irq-on-cpu`.
    ManagedIrqOnCpu = "managed-irq-on-cpu",
        r#"(as irq\-on\-cpu) the same for kernel-managed IRQs (from debugfs), which cannot be moved. Fix:
isolcpus=managed_irq,LIST.
"#;
    /// `default-irq-affinity`.
    DefaultIrqAffinity = "default-irq-affinity",
        r#"(notice) /proc/irq/default_smp_affinity (or irqaffinity=) includes a chosen CPU.
"#;
    /// `rt-throttling`.
    RtThrottling = "rt-throttling",
        r#"(notice) a real-time policy while kernel.sched_rt_runtime_us is below the period: the
message gives the stall per period.
"#;
    /// `rt-time-limit`: a finite `RLIMIT_RTTIME` under SCHED_FIFO/SCHED_RR
    /// (`getrlimit(2)`; `watchdog()`, kernel/sched/rt.c;
    /// `check_thread_timers()`, kernel/time/posix-cpu-timers.c).
    RtTimeLimit = "rt-time-limit",
        r#"(warning) SCHED_FIFO or SCHED_RR under a finite RLIMIT_RTTIME ("Max realtime
timeout" in /proc/self/limits; the process's /proc/PID/limits for \-\-pid): once the
command has used that much CPU time without a blocking system call (counted in
scheduler ticks), the kernel sends SIGXCPU, whose default action ends it with a core
dump (again after each further second if it is caught or ignored), and SIGKILL at
the hard limit. SCHED_DEADLINE is not counted. Fix: prlimit
\-\-rttime=unlimited:unlimited, bash's ulimit \-R (\-r is RLIMIT_RTPRIO), or
LimitRTTIME=infinity in a systemd unit.
"#;
    /// `preempt-model`: the kernel's preemption model under a real-time
    /// or deadline request with `--probe` or `--check` (kernel/Kconfig.preempt;
    /// `sched_dynamic_update()`, kernel/sched/core.c).
    PreemptModel = "preempt-model",
        r#"(notice under preempt=none or voluntary, info otherwise) with \-\-probe or
\-\-check, a SCHED_FIFO, SCHED_RR or SCHED_DEADLINE request is told the kernel's
preemption model, from /sys/kernel/debug/sched/preempt (root; the active model in
parentheses), else /sys/kernel/realtime (PREEMPT_RT), else the kernel configuration
(CONFIG_PREEMPT_NONE, _VOLUNTARY, CONFIG_PREEMPT, _LAZY, _RT; under
CONFIG_PREEMPT_DYNAMIC the model at boot, preempt= included). Under none (and
voluntary) kernel code is not preempted when an interrupt wakes a higher-priority
task: the task runs once that code reaches cond_resched() (or a might_sleep() point
under voluntary) or returns to user space, so its wake-up latency is bounded by the
longest such kernel section on its CPU, often milliseconds. Fix: preempt=full on the
kernel command line (PREEMPT_DYNAMIC; as root also at run time: echo full >
/sys/kernel/debug/sched/preempt), or a PREEMPT_RT kernel.
"#;
    /// `rt-competitor`.
    RtCompetitor = "rt-competitor",
        r#"(warning) with \-\-fifo or \-\-rr, a runnable (state R) user-space SCHED_FIFO or
SCHED_RR thread whose allowed CPUs all lie within the chosen CPUs has the same or
a higher priority: the command waits behind it (one finding for all of them,
the highest priority first). Fix: choose other CPUs, or give the command a higher
priority than the competitors.
"#;
    /// `cpuidle-deep-states`.
    CpuidleDeepStates = "cpuidle-deep-states",
        r#"(info) a chosen CPU may enter an idle state with an exit latency above 10 us
(one enabled and within its pm_qos_resume_latency_us). Fix: cpupower idle-set -D 10.
"#;
    /// `rt-priority-99`.
    RtPriority99 = "rt-priority-99",
        r#"SCHED_FIFO/SCHED_RR priority 99; use 1\-98.
"#;
    /// `deadline-cannot-fork`.
    DeadlineCannotFork = "deadline-cannot-fork",
        r#"SCHED_DEADLINE without --reset-on-fork: the command cannot fork (EAGAIN).
"#;
    /// `nice-ignored`.
    NiceIgnored = "nice-ignored",
        r#"--nice with a real-time or deadline policy, where it has no effect.
"#;
    /// `cpu-claimed`.
    CpuClaimed = "cpu-claimed",
        r#"the command would run on CPUs another launch claimed (--exclusive) or kubelet assigned to a container; use --cores N, which skips them, or --wait.
"#;
    /// `claim-record-unusable`.
    ClaimRecordUnusable = "claim-record-unusable",
        r#"a file named like a record in the state directory is a symlink, not a regular file, larger than 32 KiB or corrupt (it claims nothing; remove it if its process is gone), or another user's record claims CPUs outside its process's Cpus_allowed_list (ignored for those CPUs; info when another user owns the file).
"#;
    /// `claim-state-unusable`.
    ClaimStateUnusable = "claim-state-unusable",
        r#"the state directory cannot be read or locked (permissions, a lock held for seconds, a listing or a record failing with EMFILE, ENOMEM or EIO) or kubelet's cpu_manager_state is damaged: those claims are not respected by this launch (an --exclusive launch refuses instead).
"#;
    /// `k8s-pool`.
    K8sPool = "k8s-pool",
        r#"(info) in a Kubernetes container: which of kubelet's CPU pools it runs in, from
/var/lib/kubelet/cpu_manager_state and cpuset.cpus.effective (exclusive CPUs of the
static CPU manager, or the shared pool).
"#;
    /// `k8s-shared-pool`.
    K8sSharedPool = "k8s-shared-pool",
        r#"a real-time or \-\-isolated launch in kubelet's shared CPU pool: other containers
run on the same CPUs, and kubelet shrinks the pool's cpuset whenever it assigns exclusive
CPUs. Fix: a Guaranteed pod with integer CPUs under the static CPU manager (\-\-emit k8s).
"#;
    /// `k8s-cpuset-unsettled`.
    K8sCpusetUnsettled = "k8s-cpuset-unsettled",
        r#"kubelet's CPU manager state assigns the container CPUs that its
cpuset.cpus.effective does not show (kubelet's reconcile loop has not written them yet).
Fix: \-\-settle DURATION waits for them before planning.
"#;
    /// `cfs-quota`.
    CfsQuota = "cfs-quota",
        r#"the caller's cgroup v2 (or an ancestor) has a CFS bandwidth limit (cpu.max is not
"max"): SCHED_OTHER threads are throttled when they use the quota (notice under a real-time
policy, whose threads it does not throttle). Fix: no CPU limit, or the
cpu-quota.crio.io: "disable" annotation.
"#;
    /// `cpuset-resets-affinity`.
    CpusetResetsAffinity = "cpuset-resets-affinity",
        r#"(notice) a placement narrower than a Kubernetes shared-pool cpuset on a kernel
before 6.2: a change of the cpuset (kubelet assigning exclusive CPUs) resets every task's
CPU affinity to the whole cpuset (Linux 6.2 keeps the affinity a task asked for:
"sched: Enforce user requested affinity").
"#;
    /// `slurm-shared-mask`.
    SlurmSharedMask = "slurm-shared-mask",
        r#"several tasks of a Slurm job step on this node share one CPU mask (SLURM_CPU_BIND_TYPE
none or unset, or a repeated mask in SLURM_CPU_BIND_LIST): each pinrun plans the same CPUs.
Fix: srun \-\-cpu\-bind=cores, or the masks of \-\-emit slurm N.
"#;
    /// `bind-low-memory`.
    BindLowMemory = "bind-low-memory",
        r#"strict bind to nodes with less than 512 MiB free or reclaimable (MemFree plus the file pages and reclaimable slab of nodeN/meminfo) while other nodes have memory: the OOM killer fires while they have some. Not reported when the bind covers every node with memory (it then restricts nothing). Fix: --preferred.
"#;
    /// `memory-remote`.
    MemoryRemote = "memory-remote",
        r#"bound or preferred memory is farther (node distance) than the CPUs' own node.
"#;
    /// `memory-partly-remote`.
    MemoryPartlyRemote = "memory-partly-remote",
        r#"(info) the CPUs span several nodes and memory is remote to some.
"#;
    /// `numa-balancing`.
    NumaBalancing = "numa-balancing",
        r#"(info) kernel.numa_balancing is on together with a bind.
"#;
    /// `env-thread-binding`.
    EnvThreadBinding = "env-thread-binding",
        r#"OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY or KMP_AFFINITY is set.
"#;
    /// `cpufreq-governor`.
    CpufreqGovernor = "cpufreq-governor",
        r#"(info) the governor of a chosen CPU is not performance.
"#;
    /// `smt-siblings-shared`.
    SmtSiblingsShared = "smt-siblings-shared",
        r#"requested CPUs share physical cores as SMT siblings (one finding lists every pair); use --cores to get whole cores.
"#;
    /// `firmware-data`.
    FirmwareData = "firmware-data",
        r#"the kernel's topology is inconsistent (a CPU listed in two nodes); check firmware.
"#;
    /// `no-numa`.
    NoNuma = "no-numa",
        r#"(info) a memory option on a kernel without NUMA (no /sys/devices/system/node): node 0 is the whole machine, as hwloc and libnuma report it, and the memory policy is validated but not applied (set_mempolicy(2) fails with ENOSYS there).
"#;
    /// `outside-inherited-affinity`.
    OutsideInheritedAffinity = "outside-inherited-affinity",
        r#"\fB\-\-cpus\fR names CPUs outside the CPU affinity pinrun inherited (taskset, systemd CPUAffinity=, a batch scheduler's per-task binding) while that affinity narrows the cgroup's CPUs: another task of the same job may have been given them. pinrun runs where \fB\-\-cpus\fR says; \fB\-\-cores\fR and \fB\-\-node\fR would choose inside the inherited affinity (see \fB\-\-within\fR).
"#;
    /// `sources-disagree`.
    SourcesDisagree = "sources-disagree",
        r#"two sources of one fact disagree (pinrun(1) SOURCES): the kernel-maintained one (a cgroup's effective set, a per-CPU sysfs file, the caller's affinity) against a file that may be virtualised (lxcfs) or stale, or the kernel command line. The message names both and the one used: always the kernel-enforced one; no refusal or hint is based on the other.
"#;
    /// `topology-inconsistent`.
    TopologyInconsistent = "topology-inconsistent",
        r#"a topology file is missing, empty, unparsable or contradicts the others (an SMT sibling list without its own CPU or not listed back, a cpuN directory beyond possible or kernel_max); the message names the file and what was used instead (the sources that agree). When no sources agree, pinrun refuses (exit 125) naming the files.
"#;
}

/// The Levenshtein distance between `a` and `b` (insertions, deletions,
/// substitutions of characters).
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(cur + 1).min(row[j] + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

impl Code {
    /// The code named `name` (kebab-case, as printed), if any.
    pub fn parse(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// The codes an `--allow` word names: a code (`irq-on-cpu`), a family
    /// (a prefix ending in `*`: `irq-*`, `claim-*`; `*` alone is every
    /// code) or `all`. `None` when the word names no code (an unknown
    /// code, a family matching none, or a `*` elsewhere than at the end).
    pub fn matching(word: &str) -> Option<Vec<Code>> {
        let codes: Vec<Code> = if word == "all" {
            Code::ALL.to_vec()
        } else if let Some(prefix) = word.strip_suffix('*') {
            if prefix.contains('*') {
                return None;
            }
            Code::ALL
                .iter()
                .copied()
                .filter(|c| c.as_str().starts_with(prefix))
                .collect()
        } else {
            Code::parse(word).into_iter().collect()
        };
        (!codes.is_empty()).then_some(codes)
    }

    /// The hint for `word`, which names no code (`--allow`, a policy
    /// file's `allow`): the nearest code when one is within a third of its
    /// length in edits (Levenshtein distance, at least 2), then what
    /// `--allow` takes and every code.
    pub fn unknown_hint(word: &str) -> String {
        let near = Code::sorted_names()
            .into_iter()
            .map(|n| (edits(word, n), n))
            .min()
            .filter(|(d, _)| *d <= (word.chars().count() / 3).max(2))
            .map_or(String::new(), |(_, n)| format!("did you mean {n}? "));
        format!(
            "{near}give codes, families ending in * (irq-*) or all; the codes: {}",
            Code::sorted_names().join(", ")
        )
    }

    /// Every name, sorted (for the `--allow` hint).
    pub fn sorted_names() -> Vec<&'static str> {
        let mut v: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        v.sort_unstable();
        v
    }

    /// pinrun(1) CHECKS list: a `.TP` paragraph per code, in [`Code::ALL`] order.
    pub fn man_list() -> String {
        Code::ALL
            .iter()
            .map(|c| format!(".TP\n.B {}\n{}", c.as_str(), c.man()))
            .collect()
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// How serious a finding is: the harm it does to the chosen CPUs
/// (pinrun(1) FINDINGS, "Severity"). The rule, for a latency-critical
/// launch: what will disturb the chosen CPUs now (an IRQ that fired there,
/// a runnable real-time task, the tick) or endangers the command (OOM, a
/// fork that fails) is a [`Severity::Warning`]; what only could (an IRQ
/// routed there that never fired, the default IRQ affinity, the scheduler
/// balancing other tasks onto a CPU that is not isolated, throttling of a
/// task that never yields) is a [`Severity::Notice`]; what is just a fact
/// of the machine (governors, idle states, NUMA balancing), every
/// disturbance of a launch that is not latency-critical, and every code
/// accepted with `--allow` is [`Severity::Info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A fact worth knowing; never refuses, not printed before exec unless `-v`.
    Info,
    /// Could disturb the chosen CPUs; counted in one line before exec,
    /// listed by `--check` (exit 0) and `-v`, never refuses.
    Notice,
    /// Will disturb or endanger; printed before exec, refuses the launch
    /// under `--strict`, makes `--check` exit 1.
    Warning,
}

impl Severity {
    /// The lowercase name, as in text and JSON (`warning`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Notice => "notice",
            Severity::Warning => "warning",
        }
    }
}

/// One IRQ of an IRQ finding (`irq-on-cpu`, `managed-irq-on-cpu`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqDetail {
    /// The IRQ number (`/proc/irq/N`).
    pub irq: u32,
    /// Its actions' names (`/sys/kernel/irq/N/actions`, `/proc/interrupts`).
    pub name: String,
    /// The chosen CPUs it is delivered to, ascending.
    pub cpus: Vec<u32>,
    /// Its affinity as read, a cpulist.
    pub affinity: String,
    /// The file the affinity was read from (`effective_affinity_list`, …).
    pub source: String,
    /// Interrupts delivered to those CPUs so far; `None` when unknown
    /// (`per_cpu_count` cut short or unreadable: see `count_note`).
    pub count: Option<u64>,
    /// Why the count is unknown or partial, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_note: Option<String>,
    /// Its requested affinity (`smp_affinity_list`) already excludes these
    /// CPUs, but the effective one does not yet: the move takes effect at
    /// its next interrupt (x86, `irq_move_irq()`), until then it is still
    /// delivered here. JSON `move_pending`, absent when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub move_pending: bool,
}

/// One finding, with a stable kebab-case `code` (documented in pinrun(1)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable identifier, e.g. [`Code::IrqOnCpu`] (`irq-on-cpu`).
    pub code: Code,
    /// Info or warning.
    pub severity: Severity,
    /// CPUs concerned, ascending.
    pub cpus: Vec<u32>,
    /// Nodes concerned, ascending.
    pub nodes: Vec<u32>,
    /// IRQ numbers concerned, ascending.
    pub irqs: Vec<u32>,
    /// Each IRQ of [`Finding::irqs`] in full, most active first (JSON
    /// `irq_details`; absent from findings about no IRQ).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub irq_details: Vec<IrqDetail>,
    /// Each object of a finding about several (claim records, variables),
    /// in full, when the message names only the first few (JSON `items`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<String>,
    /// One line.
    pub message: String,
    /// The fix.
    pub hint: String,
}

impl Finding {
    /// A finding about `cpus`.
    pub fn new(
        code: Code,
        severity: Severity,
        cpus: &CpuSet,
        message: String,
        hint: impl Into<String>,
    ) -> Self {
        Finding {
            code,
            severity,
            cpus: cpus.to_vec(),
            nodes: Vec::new(),
            irqs: Vec::new(),
            irq_details: Vec::new(),
            items: Vec::new(),
            message,
            hint: hint.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_parse_back() {
        let names = Code::sorted_names();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(unique.len(), Code::ALL.len());
        for c in Code::ALL {
            assert!(
                c.as_str()
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
            );
            assert_eq!(Code::parse(c.as_str()), Some(*c));
        }
        assert_eq!(Code::parse("no-such-code"), None);
    }

    #[test]
    fn allow_words_name_codes_families_and_all() {
        assert_eq!(
            Code::matching("rt-throttling"),
            Some(vec![Code::RtThrottling])
        );
        assert_eq!(
            Code::matching("irq-*"),
            Some(vec![Code::IrqOnCpu]),
            "a family is a prefix of the name: managed-irq-on-cpu is not irq-*"
        );
        assert_eq!(
            Code::matching("claim-*"),
            Some(vec![Code::ClaimRecordUnusable, Code::ClaimStateUnusable])
        );
        assert_eq!(
            Code::matching("all").map(|v| v.len()),
            Some(Code::ALL.len())
        );
        assert_eq!(Code::matching("*").map(|v| v.len()), Some(Code::ALL.len()));
        assert_eq!(Code::matching("nosuch-*"), None);
        assert_eq!(Code::matching("irq*cpu"), None);
        assert_eq!(Code::matching("irq-on-*-x*"), None);
        assert_eq!(Code::matching("no-such-code"), None);
    }

    /// A code spelled with one or two edits is named in the hint; a word
    /// near no code is not (the code list follows either way).
    #[test]
    fn a_misspelled_code_is_named() {
        assert!(Code::unknown_hint("irq-on-cp").starts_with("did you mean irq-on-cpu? give codes"));
        assert!(Code::unknown_hint("rt-throttle").starts_with("did you mean rt-throttling? "));
        assert!(Code::unknown_hint("nohz").starts_with(
            "give codes, families ending in * (irq-*) or all; the codes: bind-low-memory, "
        ));
        assert_eq!(edits("kitten", "sitting"), 3);
        assert_eq!(edits("", "abc"), 3);
    }
}
