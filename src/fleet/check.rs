//! Fleet findings (issue 23): kubelet's CPU pool of a Kubernetes
//! container, a cpuset kubelet has not settled, a CFS quota, kernels that
//! reset affinities on a cpuset change, Slurm tasks sharing a mask. Pure;
//! `app` adds them after the core's findings ([`findings`]).

use super::read::Fleet;
use crate::check::{Code, Context, Finding, Severity};
use crate::claim::{Claims, Pool};
use crate::cpuset::CpuSet;
use crate::plan::Plan;
use crate::request::Request;
use crate::system::{AllowedSource, SystemState};
use crate::words::cpus_phrase;

/// The codes the fleet check can emit.
pub const CODES: &[Code] = &[
    Code::K8sPool,
    Code::K8sSharedPool,
    Code::K8sCpusetUnsettled,
    Code::CfsQuota,
    Code::CpusetResetsAffinity,
    Code::SlurmSharedMask,
];

/// kubelet's pool of the caller's container: from the state file and the
/// cgroup's effective CPUs (see [`crate::claim::KubeletState::pool`]).
/// `None` outside Kubernetes, without a readable state file, or without a
/// cgroup cpuset.
pub fn pool(fleet: &Fleet, sys: &SystemState) -> Option<Pool> {
    if !fleet.kubernetes {
        return None;
    }
    let state = fleet.kubelet.as_ref()?;
    let AllowedSource::Cgroup(cs) = &sys.allowed_source else {
        return None;
    };
    state.pool(fleet.pod.as_ref().map(|p| p.uid.as_str()), &cs.cpus)
}

/// The container's name for messages: "pod UID (Burstable)" or "this
/// container".
fn container(fleet: &Fleet) -> String {
    match &fleet.pod {
        Some(p) => format!("pod {} ({})", p.uid, p.qos.name()),
        None => "this container".into(),
    }
}

/// The fleet findings of running `plan` on `sys` in the fleet context
/// `fleet` returns (read only when needed), as the core's
/// [`crate::check::check_claimed`] gives its own (through
/// [`crate::check::findings_of`]: none when the request uses no findings,
/// info ones only when it shows them); in the order of `check`. `app`
/// appends them to the core's, before `--allow`
/// ([`crate::check::accept`]).
pub fn findings(
    sys: &SystemState,
    req: &Request,
    plan: &Plan,
    claims: &Claims,
    fleet: impl FnOnce() -> Fleet,
) -> Vec<Finding> {
    crate::check::findings_of(sys, req, plan, claims, |ctx, out| {
        let fleet = &fleet();
        crate::check::run_one(ctx, out, CODES, |ctx, out| check(ctx, fleet, out));
    })
}

/// The fleet findings (see the module doc): kubelet's pool
/// ([`pool_findings`]), a CFS quota ([`cfs_quota`]), a kernel that resets
/// affinities on a cpuset change ([`resets_affinity`]) and Slurm tasks
/// sharing a mask ([`slurm_shared_mask`]), in that order.
fn check(ctx: &Context, fleet: &Fleet, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    let rt = ctx.req.sched.policy.is_some_and(|p| p.ignores_nice());
    let pool = pool(fleet, sys);
    let shared_cpus = match &sys.allowed_source {
        AllowedSource::Cgroup(cs) => cs.cpus.clone(),
        _ => sys.allowed.clone(),
    };
    if let Some(pool) = &pool {
        pool_findings(ctx, fleet, pool, &shared_cpus, rt, out);
    }
    cfs_quota(sys, rt, out);
    resets_affinity(ctx, fleet, pool.as_ref(), &shared_cpus, out);
    slurm_shared_mask(ctx, fleet, out);
}

/// `k8s-pool` for kubelet's `pool` of the container (exclusive CPUs, or
/// the shared pool of `shared_cpus`); `k8s-shared-pool` for a real-time
/// (`rt`) or `--isolated` launch in the shared pool; `k8s-cpuset-unsettled`
/// when kubelet has not applied the CPUs it assigned yet.
fn pool_findings(
    ctx: &Context,
    fleet: &Fleet,
    pool: &Pool,
    shared_cpus: &CpuSet,
    rt: bool,
    out: &mut Vec<Finding>,
) {
    match pool {
        Pool::Exclusive {
            container: name,
            cpus,
        } => out.push(Finding::new(
            Code::K8sPool,
            Severity::Info,
            cpus,
            format!(
                "{}: container {name} has exclusive {} from kubelet's static CPU manager",
                container(fleet),
                cpus_phrase(cpus)
            ),
            "no other container runs there; pinrun plans inside them",
        )),
        Pool::Shared => {
            out.push(Finding::new(
                Code::K8sPool,
                Severity::Info,
                shared_cpus,
                format!(
                    "{}: kubelet's shared CPU pool ({})",
                    container(fleet),
                    cpus_phrase(shared_cpus)
                ),
                "exclusive CPUs need a Guaranteed pod with integer CPU requests under --cpu-manager-policy=static",
            ));
            if rt || ctx.req.placement.isolated {
                out.push(Finding::new(
                    Code::K8sSharedPool,
                    Severity::Warning,
                    &ctx.cpus,
                    format!(
                        "{}: a {} launch in kubelet's shared CPU pool ({}): other containers run on these CPUs, and kubelet shrinks the pool's cpuset whenever it assigns exclusive CPUs",
                        container(fleet),
                        if rt { "real-time" } else { "--isolated" },
                        cpus_phrase(shared_cpus)
                    ),
                    "give the pod integer CPUs with requests = limits (Guaranteed QoS) under kubelet's static CPU manager: pinrun --emit k8s prints the stanza",
                ));
            }
        }
        Pool::Unsettled {
            container: name,
            assigned,
        } => out.push(Finding::new(
            Code::K8sCpusetUnsettled,
            Severity::Warning,
            assigned,
            format!(
                "{}: kubelet's CPU manager state assigns container {name} {}, but its cpuset.cpus.effective is {}: kubelet has not applied them yet, and when it does, the kernel moves this process to them and the plan's CPUs are lost",
                container(fleet),
                cpus_phrase(assigned),
                shared_cpus
            ),
            match (ctx.req.fleet.settle, ctx.req.sysroot.is_some()) {
                (Some(_), true) => format!(
                    "--settle waits only on the live machine, not below --sysroot (pinrun plans once the cpuset is {assigned})"
                ),
                (Some(ns), false) => format!(
                    "kubelet did not apply them within --settle={}: check that kubelet runs (its reconcile loop writes the cpuset every few seconds), or wait longer",
                    crate::words::ns_words(ns)
                ),
                (None, _) => format!(
                    "wait for kubelet with --settle=10s (pinrun plans once the cpuset is {assigned})"
                ),
            },
        )),
    }
}

/// `cfs-quota`: the caller's CFS quota (`cpu.max`,
/// `Documentation/scheduler/sched-bwc.rst`) throttles the command's
/// SCHED_OTHER threads (a notice for a real-time launch, `rt`).
fn cfs_quota(sys: &SystemState, rt: bool, out: &mut Vec<Finding>) {
    if let Some(q) = &sys.cpu_max {
        let share = q.quota_us as f64 / q.period_us.max(1) as f64;
        out.push(Finding::new(
            Code::CfsQuota,
            if rt { Severity::Notice } else { Severity::Warning },
            &CpuSet::new(),
            format!(
                "{} = {} {}: a CFS quota of {share:.2} CPUs per {} us period; {} are throttled for the rest of a period once they use it",
                q.file,
                q.quota_us,
                q.period_us,
                q.period_us,
                if rt {
                    "the command's SCHED_OTHER threads (not its real-time ones)"
                } else {
                    "the command's threads"
                }
            ),
            "remove the CPU limit (in Kubernetes: the pod annotation cpu-quota.crio.io: \"disable\" with a performance runtime class, or no CPU limit; in systemd: CPUQuota=)",
        ));
    }
}

/// `cpuset-resets-affinity`: in Kubernetes, outside an exclusive `pool`,
/// a plan narrower than the cpuset (`shared_cpus`) on a kernel before 6.2,
/// which resets every task's affinity to the whole cpuset when the cpuset
/// changes. The kernel cannot be asked (the change keeps the user's mask,
/// `user_cpus_ptr`, which no file shows, and seeing it would take a cpuset
/// change), so the release is the only evidence: the notice says "may",
/// names the version as its source, and that a distribution kernel may
/// carry the change (issue 35 class 1: a version is "cannot tell").
fn resets_affinity(
    ctx: &Context,
    fleet: &Fleet,
    pool: Option<&Pool>,
    shared_cpus: &CpuSet,
    out: &mut Vec<Finding>,
) {
    let sys = ctx.sys;
    let narrower = ctx.plan.cpus.as_ref().is_some_and(|c| c != shared_cpus);
    if fleet.kubernetes
        && !matches!(pool, Some(Pool::Exclusive { .. }))
        && narrower
        && crate::plan::kernel_at_least(sys, 6, 2) == Some(false)
    {
        out.push(Finding::new(
            Code::CpusetResetsAffinity,
            Severity::Notice,
            &ctx.cpus,
            format!(
                "kernel {} may reset every task's CPU affinity to the whole cpuset when the cpuset changes (Linux before 6.2 does; pinrun can tell only by the version, and a distribution kernel may carry the change), and kubelet changes the shared pool's cpuset whenever it assigns exclusive CPUs: {} would be lost",
                sys.process.kernel_release.as_deref().unwrap_or("?"),
                cpus_phrase(&ctx.cpus)
            ),
            "run in a Guaranteed pod with exclusive CPUs (its cpuset does not change), or on Linux 6.2 or later",
        ));
    }
}

/// `slurm-shared-mask`: a placed launch in a Slurm task whose node runs
/// several tasks with one mask (unbound, or a mask repeated in
/// `SLURM_CPU_BIND_LIST`): each task's pinrun plans the same CPUs.
fn slurm_shared_mask(ctx: &Context, fleet: &Fleet, out: &mut Vec<Finding>) {
    let sys = ctx.sys;
    if let Some(t) = &fleet.slurm
        && t.tasks_on_node.unwrap_or(1) > 1
        && ctx.req.placement.is_requested()
        && (t.unbound() || t.masks_repeat())
    {
        let mask = sys
            .process
            .cpus_allowed
            .clone()
            .unwrap_or(sys.allowed.clone());
        out.push(Finding::new(
            Code::SlurmSharedMask,
            Severity::Warning,
            &mask,
            format!(
                "{} of job {}: {} tasks on this node share the mask {} ({}): each one's pinrun plans the same CPUs",
                t.name(),
                t.job,
                t.tasks_on_node.unwrap_or(1),
                mask,
                if t.unbound() {
                    format!(
                        "SLURM_CPU_BIND_TYPE={}",
                        t.bind_type.as_deref().unwrap_or("unset")
                    )
                } else {
                    "a mask repeats in SLURM_CPU_BIND_LIST".to_string()
                }
            ),
            "bind each task to its own cores: srun --cpu-bind=cores, or the masks of pinrun --emit slurm N with this placement",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::findings;
    use crate::check::{Code, Severity};
    use crate::claim::{Claims, parse_kubelet_state};
    use crate::fleet::read::Fleet;
    use crate::fleet::{SlurmTask, parse_pod};
    use crate::plan::plan;
    use crate::system::SystemState;
    use crate::system::cgroup::CpuMax;
    use crate::testkit::{Machine, request};

    const UID: &str = "2f1b4b5c-2c1e-4a34-9b1c-7f8e2b7d9a10";

    /// The cgroup of [`pod`]'s container.
    fn cgroup() -> String {
        format!("/kubepods/burstable/pod{UID}/abc")
    }

    /// A 1×8×2 machine in a pod whose cgroup cpuset is `effective`.
    fn pod(effective: &str) -> Machine {
        Machine::new(1, 8, 2).cgroup_cpuset(&cgroup(), effective)
    }

    /// [`pod`]'s fleet context, with kubelet's state `state`.
    fn in_pod(state: &str) -> Fleet {
        Fleet {
            pod: parse_pod(&cgroup()),
            kubernetes: true,
            kubelet: parse_kubelet_state(state, crate::cpuset::MAX_ID).ok(),
            ..Fleet::default()
        }
    }

    /// The fleet findings of `pinrun ARGS` on `sys` in `fleet`.
    fn found(sys: &SystemState, fleet: &Fleet, args: &[&str]) -> Vec<crate::check::Finding> {
        let req = request(args);
        let p = plan(sys, &req).unwrap();
        findings(sys, &req, &p, &Claims::default(), || fleet.clone())
    }

    fn codes(sys: &SystemState, fleet: &Fleet, args: &[&str]) -> Vec<(Code, Severity)> {
        found(sys, fleet, args)
            .into_iter()
            .map(|f| (f.code, f.severity))
            .collect()
    }

    #[test]
    fn shared_pool_real_time_is_a_warning() {
        let state = r#"{"policyName":"static","defaultCpuSet":"0-3,8-11","entries":{"other":{"c":"4-7,12-15"}},"checksum":1}"#;
        let sys = pod("0-3,8-11").build();
        let fleet = in_pod(state);
        assert_eq!(
            codes(&sys, &fleet, &["--dry-run", "--cores", "1", "--fifo", "10"]),
            vec![
                (Code::K8sPool, Severity::Info),
                (Code::K8sSharedPool, Severity::Warning)
            ]
        );
        assert_eq!(
            codes(&sys, &fleet, &["--dry-run", "--cores", "1"]),
            vec![(Code::K8sPool, Severity::Info)]
        );
        // Before 6.2 a narrower placement is lost on the next cpuset change.
        let old = pod("0-3,8-11").kernel("5.15.0-91-generic").build();
        assert!(
            codes(&old, &fleet, &["--dry-run", "--cores", "1"])
                .contains(&(Code::CpusetResetsAffinity, Severity::Notice))
        );
        let new = pod("0-3,8-11").kernel("6.8.0").build();
        assert!(
            !codes(&new, &fleet, &["--dry-run", "--cores", "1"])
                .iter()
                .any(|(c, _)| *c == Code::CpusetResetsAffinity)
        );
    }

    #[test]
    fn exclusive_and_unsettled() {
        let state = format!(
            r#"{{"policyName":"static","defaultCpuSet":"0-1,4-9,12-15","entries":{{"{UID}":{{"app":"2-3,10-11"}}}},"checksum":1}}"#
        );
        let sys = pod("2-3,10-11").kernel("5.15.0").build();
        let fleet = in_pod(&state);
        assert_eq!(
            codes(&sys, &fleet, &["--dry-run", "--cores", "1", "--fifo", "10"]),
            vec![(Code::K8sPool, Severity::Info)]
        );
        let unsettled = pod("0-15").build();
        assert_eq!(
            codes(&unsettled, &fleet, &["--dry-run", "--cores", "1"]),
            vec![(Code::K8sCpusetUnsettled, Severity::Warning)]
        );
        // The message is whole, and the hint does not recommend --settle
        // to a launch that already waited with it.
        let finding = |args: &[&str]| {
            found(&unsettled, &fleet, args)
                .into_iter()
                .find(|f| f.code == Code::K8sCpusetUnsettled)
                .unwrap()
        };
        let f = finding(&["--dry-run", "--cores", "1"]);
        assert!(
            f.message.ends_with(
                "kubelet has not applied them yet, and when it does, the kernel moves this process to them and the plan's CPUs are lost"
            ),
            "{}",
            f.message
        );
        assert_eq!(
            f.hint,
            "wait for kubelet with --settle=10s (pinrun plans once the cpuset is 2-3,10-11)"
        );
        let f = finding(&["--dry-run", "--cores", "1", "--settle=3s"]);
        assert!(
            f.hint
                .starts_with("kubelet did not apply them within --settle=3s: ")
                && !f.hint.contains("--settle=10s"),
            "{}",
            f.hint
        );
    }

    #[test]
    fn cfs_quota_and_slurm_masks() {
        let quota = CpuMax {
            file: "/sys/fs/cgroup/x/cpu.max".into(),
            quota_us: 200_000,
            period_us: 100_000,
        };
        let mut sys = Machine::new(1, 4, 1).build();
        sys.cpu_max = Some(quota);
        let fleet = Fleet::default();
        assert_eq!(
            codes(&sys, &fleet, &["--dry-run", "--cores", "1"]),
            vec![(Code::CfsQuota, Severity::Warning)]
        );
        assert_eq!(
            codes(&sys, &fleet, &["--dry-run", "--cores", "1", "--fifo", "1"]),
            vec![(Code::CfsQuota, Severity::Notice)]
        );
        let slurm = |bind: &str| Fleet {
            slurm: SlurmTask::from_env([
                ("SLURM_JOB_ID", "77"),
                ("SLURM_PROCID", "1"),
                ("SLURM_STEP_TASKS_PER_NODE", "2"),
                ("SLURM_CPU_BIND_TYPE", bind),
            ]),
            ..Fleet::default()
        };
        let plain = Machine::new(1, 4, 1).build();
        assert_eq!(
            codes(&plain, &slurm("none"), &["--dry-run", "--cores", "1"]),
            vec![(Code::SlurmSharedMask, Severity::Warning)]
        );
        assert_eq!(
            codes(&plain, &slurm("mask_cpu:"), &["--dry-run", "--cores", "1"]),
            vec![]
        );
    }
}
