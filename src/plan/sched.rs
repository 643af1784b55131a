//! Scheduling: every refusal of `sched_setattr(2)` and `setpriority(2)` that
//! is decidable from readable state, in the kernel's order
//! (`__sched_setscheduler()`, kernel/sched/syscalls.c): the SCHED_DEADLINE
//! parameters (`__checkparam_dl()`, EINVAL), the privileges (EPERM:
//! RLIMIT_RTPRIO, CAP_SYS_NICE, RT group scheduling; EACCES: RLIMIT_NICE),
//! the deadline root domain and bandwidth (EPERM), admission control
//! (`sched_dl_overflow()`, EBUSY) when it is certain. What cannot be read
//! (the bandwidth other deadline tasks already reserve) is said in the plan.

use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::policy::Policy;
use crate::request::SchedRequest;
use crate::system::SystemState;
use crate::words::ns_words;

/// `DL_SCALE` (kernel/sched/sched.h): the smallest runtime is `1 << DL_SCALE` ns.
pub const MIN_DL_RUNTIME_NS: u64 = 1 << 10;
/// `BW_SHIFT` (kernel/sched/sched.h): bandwidths are fixed point, 1.0 = `1 << 20`.
const BW_SHIFT: u32 = 20;
/// The defaults of `kernel.sched_deadline_period_{min,max}_us` (Linux 5.9+,
/// kernel/sched/deadline.c: 100 us and `1 << 22` us).
const DEFAULT_DL_PERIOD_US: (u64, u64) = (100, 1 << 22);

/// The kernel's `to_ratio(period, runtime)` (kernel/sched/core.c):
/// `runtime / period` in `1 << BW_SHIFT` units.
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    ((u128::from(runtime) << BW_SHIFT) / u128::from(period)) as u64
}

/// The SCHED_DEADLINE period bounds in µs the kernel applies: the sysctls
/// when readable; their defaults on a kernel known to be 5.9 or later (a
/// dump without the files); `None` before 5.9, whose `__checkparam_dl()`
/// bounds the period only by bit 63 (and when nothing says which).
pub fn dl_period_bounds_us(sys: &SystemState) -> Option<(u64, u64)> {
    let p = &sys.process;
    match (p.dl_period_min_us, p.dl_period_max_us) {
        (Some(min), Some(max)) => Some((min, max)),
        _ if super::kernel_at_least(sys, 5, 9) == Some(true) => {
            let (dmin, dmax) = DEFAULT_DL_PERIOD_US;
            Some((
                p.dl_period_min_us.unwrap_or(dmin),
                p.dl_period_max_us.unwrap_or(dmax),
            ))
        }
        _ => None,
    }
}

/// The parts of `__checkparam_dl()` (kernel/sched/deadline.c) that need no
/// machine, on runtime, deadline and period in ns: deadline ≠ 0, runtime ≥
/// 1024 ns, bit 63 clear in deadline and period, runtime ≤ deadline ≤
/// period (period 0 means the deadline). The error (`bad-deadline`) names
/// the rule.
pub fn check_dl_order(runtime: u64, deadline: u64, period: u64) -> Result<()> {
    let bad = |why: String| {
        Err(Error::new(
            ErrorCode::BadDeadline,
            format!("--deadline: {why}; the kernel refuses it (sched_setattr: EINVAL, __checkparam_dl())"),
        )
        .hint("e.g. --sched-runtime 2ms --sched-deadline 5ms --sched-period 10ms"))
    };
    if deadline == 0 {
        return bad("the deadline is 0".into());
    }
    if runtime < MIN_DL_RUNTIME_NS {
        return bad(format!(
            "runtime {runtime}ns is below the kernel's minimum of 1024ns (1 << DL_SCALE)"
        ));
    }
    if (deadline | period) & (1 << 63) != 0 {
        return bad("deadline and period must be below 2^63 ns".into());
    }
    let period = if period == 0 { deadline } else { period };
    if period < deadline || deadline < runtime {
        return bad(format!(
            "parameters must satisfy 1024ns <= runtime <= deadline <= period (runtime {runtime}ns, deadline {deadline}ns, period {period}ns)"
        ));
    }
    Ok(())
}

/// All of `__checkparam_dl()`: [`check_dl_order`], then the period within
/// `kernel.sched_deadline_period_{min,max}_us` ([`dl_period_bounds_us`];
/// `deadline-period`, naming the sysctl).
pub fn check_dl_params(sys: &SystemState, runtime: u64, deadline: u64, period: u64) -> Result<()> {
    check_dl_order(runtime, deadline, period)?;
    let period = if period == 0 { deadline } else { period };
    if let Some((min, max)) = dl_period_bounds_us(sys) {
        let (min_ns, max_ns) = (min.saturating_mul(1000), max.saturating_mul(1000));
        let (side, sysctl, limit) = if period < min_ns {
            ("below", "kernel.sched_deadline_period_min_us", min)
        } else if period > max_ns {
            ("above", "kernel.sched_deadline_period_max_us", max)
        } else {
            return Ok(());
        };
        return Err(Error::new(
            ErrorCode::DeadlinePeriod,
            format!(
                "--deadline: period {} is {side} {sysctl} = {limit} ({}); the kernel refuses it (sched_setattr: EINVAL, __checkparam_dl())",
                ns_words(period),
                ns_words(limit.saturating_mul(1000))
            ),
        )
        .hint(format!(
            "choose a period from {} to {} (/proc/sys/kernel/sched_deadline_period_{{min,max}}_us), or, as root, widen the bound: sysctl {sysctl}=…",
            ns_words(min_ns),
            ns_words(max_ns)
        )));
    }
    Ok(())
}

/// The deadline bandwidth of the request's root domain, as far as it can be
/// read (`sched_dl_overflow()`, `__dl_overflow()`: the reservations of a
/// root domain may total `sched_rt_runtime_us / sched_rt_period_us` of each
/// of its CPUs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DlBandwidth {
    /// The request's `runtime / period`, `1 << 20` = one CPU.
    pub request: u64,
    /// `sched_rt_runtime_us / sched_rt_period_us` per CPU, same units.
    pub per_cpu: u64,
    /// The CPUs of the root domain.
    pub cpus: CpuSet,
}

impl DlBandwidth {
    /// What the root domain admits in all: `per_cpu` × its CPUs
    /// (`cap_scale(dl_b->bw, dl_bw_capacity())` on a machine whose CPUs all
    /// have capacity 1024; asymmetric CPUs admit less, so a refusal by this
    /// bound is certain).
    pub fn total(&self) -> u64 {
        self.per_cpu.saturating_mul(self.cpus.len() as u64)
    }

    /// The numbers in words: "the request is 20.0% of a CPU; the root
    /// domain CPUs 0-1 admits 2 × 95.0% = 190.0%".
    pub fn words(&self) -> String {
        let pct = |bw: u64| format!("{:.1}%", bw as f64 * 100.0 / f64::from(1u32 << BW_SHIFT));
        format!(
            "the request is {} of a CPU; its root domain ({}) admits {} × {} (sched_rt_runtime_us / sched_rt_period_us) = {} of SCHED_DEADLINE reservations in all",
            pct(self.request),
            crate::words::cpus_phrase(&self.cpus),
            self.cpus.len(),
            pct(self.per_cpu),
            pct(self.total())
        )
    }
}

/// The CPUs a SCHED_DEADLINE task on `cpus` must be allowed to run on:
/// its root domain's span. The CPUs outside domain isolation form one root
/// domain; the isolated CPUs (`isolcpus=domain`, isolated partitions: no
/// scheduling domain) are all attached to the kernel's `def_root_domain`
/// (`detach_destroy_domains()`, kernel/sched/topology.c), so they share
/// one span. An affinity across both may start in either: both spans, so
/// that the plan never approves what the kernel may refuse. Exclusive
/// cpuset partitions with load balancing are not read.
pub fn root_domain(sys: &SystemState, cpus: Option<&CpuSet>) -> CpuSet {
    let isolated = sys.online.intersection(&sys.isolated);
    let housekeeping = sys.online.difference(&sys.isolated);
    match cpus {
        Some(c) if !c.is_empty() && c.is_subset(&isolated) => isolated,
        Some(c) if !c.intersection(&isolated).is_empty() => sys.online.clone(),
        _ => housekeeping,
    }
}

/// The root domain whose bandwidth admits a task on `cpus`: [`root_domain`],
/// or, for an affinity across both kinds, the larger of the two (a refusal
/// by it is certain in either).
fn admitting_domain(sys: &SystemState, cpus: Option<&CpuSet>) -> CpuSet {
    let span = root_domain(sys, cpus);
    if span != sys.online || sys.isolated.is_empty() {
        return span;
    }
    let isolated = sys.online.intersection(&sys.isolated);
    let housekeeping = sys.online.difference(&sys.isolated);
    if isolated.len() > housekeeping.len() {
        isolated
    } else {
        housekeeping
    }
}

/// The deadline bandwidth of `policy` on `cpus` (`None`: not deadline, or
/// the RT sysctls unread, or admission control off:
/// `sched_rt_runtime_us = -1`).
pub fn dl_bandwidth(
    sys: &SystemState,
    policy: Policy,
    cpus: Option<&CpuSet>,
) -> Option<DlBandwidth> {
    let Policy::Deadline {
        runtime,
        deadline,
        period,
    } = policy
    else {
        return None;
    };
    let (rt_runtime, rt_period) = (sys.process.rt_runtime_us?, sys.process.rt_period_us?);
    if rt_runtime < 0 {
        return None;
    }
    let period = if period == 0 { deadline } else { period };
    Some(DlBandwidth {
        request: to_ratio(period, runtime),
        per_cpu: to_ratio(rt_period as u64, rt_runtime as u64),
        cpus: admitting_domain(sys, cpus),
    })
}

/// What the plan says about scheduling that the launch cannot be sure of
/// (reasons of the plan), or the refusal the kernel would give.
/// `own_permissions`: whether this process's capabilities and limits
/// matter (not for `--emit`, where systemd applies the policy as root).
pub(super) fn plan_sched(
    sys: &SystemState,
    sched: &SchedRequest,
    cpus: Option<&CpuSet>,
    own_permissions: bool,
) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let no_cap = own_permissions && sys.process.cap_sys_nice == Some(false);
    // setpriority(2) runs first: set_one_prio() refuses a lower nice value
    // without can_nice() (RLIMIT_NICE >= 20 - nice, or CAP_SYS_NICE): EACCES.
    if let (true, Some(n), Some(cur), Some(limit)) =
        (no_cap, sched.nice, sys.process.nice, sys.process.nice_limit)
        && n < cur
        && (20 - i64::from(n)) as u64 > limit
    {
        return Err(Error::new(
            ErrorCode::NiceNotPermitted,
            format!(
                "--nice {n}: lowering the nice value from {cur} needs CAP_SYS_NICE or RLIMIT_NICE >= {} (it is {limit}); the kernel refuses it (setpriority: EACCES)",
                20 - n
            ),
        )
        .hint(format!(
            "raise the limit (systemd LimitNICE={n}, limits.conf `nice {n}`), grant CAP_SYS_NICE, or ask for --nice {cur} or more"
        )));
    }
    let Some(policy) = sched.policy else {
        return Ok(notes);
    };
    // user_check_sched_setscheduler(): leaving SCHED_IDLE counts as raising
    // the nice value from 20 - RLIMIT_NICE (is_nice_reduction()): EPERM.
    if let (true, Some(Policy::SCHED_IDLE), Some(cur), Some(limit)) = (
        no_cap && policy != Policy::Idle,
        sys.process.policy,
        sys.process.nice,
        sys.process.nice_limit,
    ) && (20 - i64::from(cur)) as u64 > limit
    {
        return Err(Error::new(
            ErrorCode::NiceNotPermitted,
            format!(
                "{}: leaving SCHED_IDLE needs CAP_SYS_NICE or RLIMIT_NICE >= {} (it is {limit}); the kernel refuses it (sched_setattr: EPERM)",
                policy.kernel_name(),
                20 - cur
            ),
        )
        .hint("raise RLIMIT_NICE (systemd LimitNICE=), grant CAP_SYS_NICE, or start pinrun outside SCHED_IDLE"));
    }
    if let Policy::Deadline {
        runtime,
        deadline,
        period,
    } = policy
    {
        check_dl_params(sys, runtime, deadline, period)?;
    }
    match policy.rt_priority() {
        Some(_) if matches!(&sys.rt_group.v1_runtime, Some((p, 0)) if p != "/") => {
            return Err(Error::new(
                ErrorCode::RtGroupNoRuntime,
                format!(
                    "real-time policy refused: RT group scheduling gives this process's cgroup {} no real-time runtime (cpu.rt_runtime_us = 0), so the kernel answers EPERM",
                    sys.rt_group.v1_runtime.as_ref().map_or("", |(p, _)| p.as_str())
                ),
            )
            .hint("grant it runtime (echo 950000 > <cgroup>/cpu.rt_runtime_us, parents first), or run pinrun in the root cpu cgroup"));
        }
        Some(prio) => {
            // user_check_sched_setscheduler(): without CAP_SYS_NICE, a new
            // RT policy needs RLIMIT_RTPRIO > 0, and a priority above the
            // current one needs it at least that priority.
            let current = sys.process.rt_priority.unwrap_or(0);
            let same_policy = sys.process.policy == Some(policy.number());
            if let (true, Some(limit)) = (no_cap, sys.process.rtprio_limit)
                && ((!same_policy && limit == 0) || (prio > current && u64::from(prio) > limit))
            {
                return Err(Error::new(
                    ErrorCode::RtprioNotPermitted,
                    format!("real-time priority {prio} exceeds RLIMIT_RTPRIO {limit}, and CAP_SYS_NICE is missing"),
                )
                .hint(format!("raise the limit (systemd LimitRTPRIO={prio}, limits.conf `rtprio {prio}`), or grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE)")));
            }
        }
        None if policy.is_deadline() => {
            if no_cap {
                return Err(Error::new(
                    ErrorCode::DeadlineNotPermitted,
                    "SCHED_DEADLINE needs CAP_SYS_NICE, which this process lacks",
                )
                .hint("run as root or grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE)"));
            }
            plan_deadline(sys, policy, cpus, &mut notes)?;
        }
        None => {}
    }
    Ok(notes)
}

/// How a SCHED_DEADLINE task whose affinity is narrower than its root
/// domain `span` can be admitted on this host, what works here first: the
/// placement widened to the whole root domain (`--cpus SPAN`, when the
/// allowed CPUs hold it), or, without a placement, an inherited affinity
/// that covers it; then a root domain of the CPUs' own, made the way this
/// host's cpuset controller makes one (cgroup v2: a partition root,
/// `cpuset.cpus.partition=root`; v1: `cpuset.cpu_exclusive=1` under a
/// parent with `cpuset.sched_load_balance=0`; Documentation/admin-guide/
/// cgroup-v1/cpusets.rst, cgroup-v2.rst).
fn deadline_domain_hint(sys: &SystemState, placed: bool, span: &CpuSet) -> String {
    let first = match (placed, span.is_subset(&sys.allowed)) {
        (true, true) => format!("place it on its whole root domain (--cpus {span})"),
        (false, true) => format!(
            "start pinrun with an affinity that covers its root domain (taskset -c {} pinrun ...)",
            span.to_list()
        ),
        (_, false) => format!(
            "widen the cgroup's cpuset ({}) to its whole root domain {span}",
            sys.allowed
        ),
    };
    const V2: &str = "a cgroup v2 cpuset partition of these CPUs (cpuset.cpus.partition=root)";
    const V1: &str = "a cgroup v1 cpuset of these CPUs with cpuset.cpu_exclusive=1 under a parent with cpuset.sched_load_balance=0";
    let own = match &sys.allowed_source {
        _ if sys.cgroup_v2() => V2.to_string(),
        crate::system::AllowedSource::Cgroup(_) => V1.to_string(),
        // No cpuset read (a dump without it): either, as the host has it.
        _ => format!("{V2} or, under cgroup v1, {V1}"),
    };
    format!("{first}, or give the CPUs a root domain of their own: run pinrun inside {own}")
}

/// The root domain, bandwidth and admission of a SCHED_DEADLINE request,
/// all only while admission control is on (`dl_bandwidth_enabled()`:
/// `sched_rt_runtime_us >= 0`; unknown counts as on).
fn plan_deadline(
    sys: &SystemState,
    policy: Policy,
    cpus: Option<&CpuSet>,
    notes: &mut Vec<String>,
) -> Result<()> {
    if sys.process.rt_runtime_us.is_some_and(|r| r < 0) {
        notes.push("SCHED_DEADLINE admission control is off (kernel.sched_rt_runtime_us = -1): the kernel checks neither the root domain nor the bandwidth".into());
        return Ok(());
    }
    // The affinity the task has when sched_setattr runs: the placement
    // (set first for SCHED_DEADLINE), else the inherited one.
    let affinity = cpus.or(sys.process.cpus_allowed.as_ref());
    let span = root_domain(sys, affinity);
    if let Some(aff) = affinity
        && !span.is_subset(aff)
    {
        return Err(Error::new(
            ErrorCode::DeadlineAffinity,
            format!(
                "--deadline: the affinity {aff} is narrower than its root domain {span}; the kernel refuses SCHED_DEADLINE tasks that cannot run on every CPU of their root domain (EPERM/EBUSY)"
            ),
        )
        .hint(deadline_domain_hint(sys, cpus.is_some(), &span)));
    }
    let Some(bw) = dl_bandwidth(sys, policy, affinity) else {
        notes.push("SCHED_DEADLINE admission cannot be predicted: kernel.sched_rt_runtime_us and sched_rt_period_us were not read".into());
        return Ok(());
    };
    if bw.per_cpu == 0 {
        return Err(Error::new(
            ErrorCode::DeadlineNoBandwidth,
            "--deadline: kernel.sched_rt_runtime_us = 0 leaves no bandwidth for SCHED_DEADLINE; the kernel refuses it (sched_setattr: EPERM)",
        )
        .hint("as root, give real-time and deadline tasks bandwidth: sysctl kernel.sched_rt_runtime_us=950000"));
    }
    if bw.request > bw.total() {
        return Err(Error::new(
            ErrorCode::DeadlineAdmission,
            format!(
                "--deadline: SCHED_DEADLINE admission control refuses it whatever else runs: {} (sched_setattr: EBUSY)",
                bw.words()
            ),
        )
        .hint("ask for less runtime or a longer period, or, as root, raise kernel.sched_rt_runtime_us"));
    }
    notes.push(format!(
        "SCHED_DEADLINE admission cannot be predicted: {}; the bandwidth other SCHED_DEADLINE tasks (and the kernel's deadline servers) already reserve is not readable, so the kernel may still refuse with EBUSY",
        bw.words()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::plan;
    use crate::testkit::{Machine, deadline, request};

    fn refusal(sys: &SystemState, args: &[&str]) -> Option<ErrorCode> {
        plan(sys, &request(args)).err().map(|e| e.code)
    }

    /// `__checkparam_dl()`: the period bounds come from the sysctls, each
    /// side refused naming its sysctl; the bounds themselves are accepted.
    #[test]
    fn deadline_period_bounds_from_the_sysctls() {
        let sys = Machine::new(1, 2, 1)
            .rt_sysctls(-1, 1_000_000)
            .dl_period_bounds(100, 4_194_304)
            .build();
        let dl = |rt: &str, period: &str| {
            vec![
                "--dry-run".to_string(),
                "--deadline".into(),
                "--sched-runtime".into(),
                rt.into(),
                "--sched-period".into(),
                period.into(),
            ]
        };
        let run = |a: Vec<String>| {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            plan(&sys, &request(&a)).err()
        };
        let e = run(dl("10ms", "5s")).unwrap();
        assert_eq!(e.code, ErrorCode::DeadlinePeriod);
        assert!(
            e.message
                .contains("kernel.sched_deadline_period_max_us = 4194304"),
            "{}",
            e.message
        );
        let e = run(dl("20us", "50us")).unwrap();
        assert!(
            e.message
                .contains("kernel.sched_deadline_period_min_us = 100"),
            "{}",
            e.message
        );
        assert!(run(dl("20us", "100us")).is_none());
        assert!(run(dl("10ms", "4194304us")).is_none());
        assert_eq!(
            run(dl("10ms", "4194305us")).map(|e| e.code),
            Some(ErrorCode::DeadlinePeriod)
        );
        assert_eq!(
            run(dl("2us", "99999ns")).map(|e| e.code),
            Some(ErrorCode::DeadlinePeriod)
        );
    }

    /// Without the sysctls: the 5.9 defaults on a kernel known to have
    /// them, no bounds before 5.9 (and when nothing says which).
    #[test]
    fn deadline_period_bounds_by_kernel_version() {
        let args = [
            "--dry-run",
            "--deadline",
            "--sched-runtime",
            "10ms",
            "--sched-period",
            "5s",
        ];
        let m = || Machine::new(1, 2, 1).rt_sysctls(-1, 1_000_000);
        assert_eq!(
            refusal(&m().kernel("6.8.0-45-generic").build(), &args),
            Some(ErrorCode::DeadlinePeriod)
        );
        assert_eq!(refusal(&m().kernel("5.4.0").build(), &args), None);
        assert_eq!(refusal(&m().build(), &args), None);
        let k =
            |r: &str| super::super::kernel_at_least(&Machine::new(1, 1, 1).kernel(r).build(), 5, 9);
        assert_eq!(k("5.10.1"), Some(true));
        assert_eq!(k("4.19.0-rt"), Some(false));
        assert_eq!(k("garbage"), None);
    }

    /// The rules that need no machine, with the kernel's numbers.
    #[test]
    fn checkparam_dl_order() {
        assert!(check_dl_order(1024, 1024, 1024).is_ok());
        assert!(check_dl_order(1023, 2048, 2048).is_err());
        assert!(check_dl_order(2048, 1024, 4096).is_err());
        assert!(check_dl_order(1024, 4096, 2048).is_err());
        assert!(check_dl_order(1024, 0, 0).is_err());
        assert!(check_dl_order(1024, 2048, 0).is_ok());
        assert!(check_dl_order(1024, 1 << 63, 1 << 63).is_err());
    }

    /// `to_ratio()` and `__dl_overflow()`: one task cannot exceed what a
    /// one-CPU root domain admits (95% at the defaults), and the plan says
    /// admission cannot be predicted otherwise.
    #[test]
    fn deadline_admission_and_bandwidth() {
        assert_eq!(to_ratio(100, 20), (20 << 20) / 100);
        assert_eq!(to_ratio(0, 20), 0);
        let one = Machine::new(1, 1, 1).rt_sysctls(950_000, 1_000_000).build();
        let full = [
            "--dry-run",
            "--deadline",
            "--sched-runtime",
            "10ms",
            "--sched-period",
            "10ms",
        ];
        assert_eq!(refusal(&one, &full), Some(ErrorCode::DeadlineAdmission));
        let two = Machine::new(1, 2, 1).rt_sysctls(950_000, 1_000_000).build();
        let p = plan(&two, &request(&full)).unwrap();
        assert!(
            p.reasons
                .iter()
                .any(|r| r.contains("admission cannot be predicted")
                    && r.contains("100.0% of a CPU")
                    && r.contains("2 × 95.0%")),
            "{:?}",
            p.reasons
        );
        let none = Machine::new(1, 2, 1).rt_sysctls(0, 1_000_000).build();
        assert_eq!(refusal(&none, &full), Some(ErrorCode::DeadlineNoBandwidth));
        // Admission control off: neither bandwidth nor root domain checked.
        let off = Machine::new(1, 2, 1).rt_sysctls(-1, 1_000_000).build();
        let narrow = deadline(&["--dry-run", "--cpus", "0"]);
        assert_eq!(refusal(&off, &narrow), None);
        assert_eq!(refusal(&two, &narrow), Some(ErrorCode::DeadlineAffinity));
    }

    /// The inherited affinity counts when there is no placement.
    #[test]
    fn deadline_inherited_narrow_affinity_is_refused() {
        let sys = Machine::new(1, 2, 1)
            .allowed("0")
            .rt_sysctls(950_000, 1_000_000)
            .build();
        let args = deadline(&["--dry-run"]);
        assert_eq!(refusal(&sys, &args), Some(ErrorCode::DeadlineAffinity));
    }

    /// `set_one_prio()`: a lower nice value needs RLIMIT_NICE >= 20 - nice
    /// or CAP_SYS_NICE; raising it never does.
    #[test]
    fn nice_below_current_needs_rlimit_nice() {
        let m = || Machine::new(1, 2, 1).unprivileged(0);
        let sys = m().nice(0, 0).build();
        assert_eq!(
            refusal(&sys, &["--dry-run", "--nice", "-1"]),
            Some(ErrorCode::NiceNotPermitted)
        );
        assert_eq!(refusal(&sys, &["--dry-run", "--nice", "0"]), None);
        assert_eq!(refusal(&sys, &["--dry-run", "--nice", "19"]), None);
        let sys = m().nice(0, 25).build();
        assert_eq!(refusal(&sys, &["--dry-run", "--nice", "-5"]), None);
        assert_eq!(
            refusal(&sys, &["--dry-run", "--nice", "-6"]),
            Some(ErrorCode::NiceNotPermitted)
        );
        let root = Machine::new(1, 2, 1).nice(0, 0).build();
        assert_eq!(refusal(&root, &["--dry-run", "--nice", "-20"]), None);
    }

    /// isolcpus=2,3 on 8 CPUs: the housekeeping CPUs form one root domain,
    /// the isolated ones share def_root_domain; a deadline task must be
    /// allowed on every CPU of its domain (an affinity across both: on all).
    #[test]
    fn deadline_root_domains_with_isolated_cpus() {
        let sys = Machine::new(2, 2, 2)
            .isolated("2-3")
            .rt_sysctls(950_000, 1_000_000)
            .build();
        let dl = |cpus: &str| refusal(&sys, &deadline(&["--dry-run", "--cpus", cpus]));
        assert_eq!(dl("2"), Some(ErrorCode::DeadlineAffinity));
        assert_eq!(dl("2-3"), None);
        assert_eq!(dl("0-1,4-7"), None);
        assert_eq!(dl("0-1,4-6"), Some(ErrorCode::DeadlineAffinity));
        assert_eq!(dl("0-3,4-6"), Some(ErrorCode::DeadlineAffinity));
        assert_eq!(dl("0-7"), None);
        assert_eq!(
            root_domain(&sys, Some(&crate::testkit::cpus("3"))),
            crate::testkit::cpus("2-3")
        );
    }

    /// An unprivileged task already SCHED_FIFO 50 may lower its priority
    /// with RLIMIT_RTPRIO 0 (user_check_sched_setscheduler()); raising it,
    /// or switching to SCHED_RR, is refused.
    #[test]
    fn rtprio_rule_counts_the_current_policy() {
        let mut sys = Machine::new(1, 2, 1).unprivileged(0).build();
        sys.process.policy = Some(Policy::SCHED_FIFO);
        sys.process.rt_priority = Some(50);
        assert_eq!(refusal(&sys, &["--dry-run", "--fifo", "10"]), None);
        assert_eq!(refusal(&sys, &["--dry-run", "--fifo", "50"]), None);
        assert_eq!(
            refusal(&sys, &["--dry-run", "--fifo", "51"]),
            Some(ErrorCode::RtprioNotPermitted)
        );
        assert_eq!(
            refusal(&sys, &["--dry-run", "--rr", "10"]),
            Some(ErrorCode::RtprioNotPermitted)
        );
        sys.process.policy = Some(Policy::SCHED_OTHER);
        sys.process.rt_priority = Some(0);
        sys.process.rtprio_limit = Some(20);
        assert_eq!(refusal(&sys, &["--dry-run", "--rr", "20"]), None);
        assert_eq!(
            refusal(&sys, &["--dry-run", "--rr", "21"]),
            Some(ErrorCode::RtprioNotPermitted)
        );
    }

    /// Leaving SCHED_IDLE without CAP_SYS_NICE needs RLIMIT_NICE >= 20 - nice.
    #[test]
    fn leaving_sched_idle_needs_rlimit_nice() {
        let mut sys = Machine::new(1, 2, 1).unprivileged(0).nice(0, 0).build();
        sys.process.policy = Some(Policy::SCHED_IDLE);
        assert_eq!(
            refusal(&sys, &["--dry-run", "--other"]),
            Some(ErrorCode::NiceNotPermitted)
        );
        assert_eq!(refusal(&sys, &["--dry-run", "--idle"]), None);
        sys.process.nice_limit = Some(20);
        assert_eq!(refusal(&sys, &["--dry-run", "--batch"]), None);
    }
}
