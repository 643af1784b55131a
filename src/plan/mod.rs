//! Planning: a pure function from ([`SystemState`], [`Request`]) to a
//! [`Plan`]: which CPUs, which memory nodes, which scheduling policy, and
//! why. No I/O, no syscalls. Every refusal happens here, before anything is
//! applied. One submodule per subject: [`placement`], [`memory`],
//! [`sched`], [`claims`].

pub mod boot_hint;
pub mod claims;
pub mod memory;
pub mod near;
pub mod per_thread;
pub mod placement;
pub mod quiet;
pub mod sched;
pub mod units;

pub use claims::claim_set;
pub use memory::{MemMode, MemPlan, nearest_memory_node};
pub use placement::{cores_of, inherited_bound};

use crate::claim::Claims;
use crate::cpuset::{CpuSet, NodeSet};
use crate::error::Result;
use crate::request::{Request, SchedRequest};
use crate::system::SystemState;
use crate::words::cpus_phrase;

/// One chosen core: every SMT thread of it, whether used or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreChoice {
    /// `physical_package_id`.
    pub package: Option<u32>,
    /// `core_id`.
    pub core: Option<u32>,
    /// The node of its CPUs.
    pub node: Option<u32>,
    /// The package as a grouping key: the lowest CPU of `package_cpus_list`
    /// (physical ids can be -1 or repeat across packages on some machines),
    /// else the physical id.
    pub package_key: Option<u32>,
    /// All its threads (SMT siblings).
    pub cpus: CpuSet,
}

/// The resolved request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// CPUs to set as affinity; `None`: affinity unchanged.
    pub cpus: Option<CpuSet>,
    /// The cores the chosen CPUs belong to.
    pub cores: Vec<CoreChoice>,
    /// Nodes of the chosen CPUs.
    pub nodes: NodeSet,
    /// Memory policy; `None`: unchanged.
    pub memory: Option<MemPlan>,
    /// Scheduling changes.
    pub sched: SchedRequest,
    /// Why these CPUs, one sentence each.
    pub reasons: Vec<String>,
    /// `--omp`: the environment the command gets; `None` without it.
    pub omp: Option<per_thread::OmpPlan>,
    /// `--thread-map`: the resolved rules; `None` without it.
    pub thread_map: Option<per_thread::ThreadMap>,
    /// The latency intent read and the rule that chose the CPUs; `None`
    /// without a placement.
    pub choice: Option<quiet::Choice>,
}

/// Whether the kernel (`/proc/sys/kernel/osrelease`, `6.8.0-45-generic`) is
/// at least `major.minor`; `None` when the release is unknown or unparsable.
pub fn kernel_at_least(sys: &SystemState, major: u32, minor: u32) -> Option<bool> {
    let mut it = sys
        .process
        .kernel_release
        .as_deref()?
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().ok());
    let (ma, mi) = (it.next()??, it.next()??);
    Some((ma, mi) >= (major, minor))
}

/// Resolves `req` on `sys`. Errors are refusals (exit 125), each naming the
/// object and the fix.
pub fn plan(sys: &SystemState, req: &Request) -> Result<Plan> {
    plan_claimed(sys, req, &Claims::default())
}

/// [`plan`] with the CPUs other launches hold: `--cores` skips claimed
/// cores, `--cpus` refuses claimed CPUs, and `--exclusive` refuses to claim
/// a core any part of which is claimed.
pub fn plan_claimed(sys: &SystemState, req: &Request, claims: &Claims) -> Result<Plan> {
    let placed = if req.placement.is_requested() {
        Some(placement::place(
            sys,
            &req.placement,
            &req.latency_intent(),
            claims,
        )?)
    } else {
        None
    };
    let mut placed = placed;
    if let (true, Some(p)) = (req.claims.exclusive, &mut placed) {
        let claim = claim_set(&p.cpus, &p.cores);
        claims::refuse_claimed("--exclusive", &claim, claims)?;
        p.reasons.push(format!(
            "--exclusive: claims {} (every thread of the chosen cores) while the command lives",
            cpus_phrase(&claim)
        ));
    }
    let nodes: NodeSet = placed
        .as_ref()
        .map(|p| p.cpus.iter().filter_map(|c| sys.node_of(c)).collect())
        .unwrap_or_default();
    // `--membind` without NODES: the nodes of the chosen CPUs, or of the
    // task's CPUs when the affinity is left as it is (issue 34: a Slurm
    // rank bound by srun binds to its own node).
    let task_nodes: NodeSet = match &placed {
        Some(_) => nodes.clone(),
        None => placement::task_cpus(sys)
            .iter()
            .filter_map(|c| sys.node_of(c))
            .collect(),
    };
    let memory = req
        .memory
        .as_ref()
        .map(|m| memory::plan_memory(sys, m, Some(&task_nodes)))
        .transpose()?
        // Validated (only node 0 exists), never applied: set_mempolicy(2)
        // fails with ENOSYS on a kernel without NUMA, and its one node
        // holds all memory (the `no-numa` finding says so).
        .filter(|_| sys.numa);
    let sched_notes = sched::plan_sched(
        sys,
        &req.sched,
        placed.as_ref().map(|p| &p.cpus),
        req.mode != crate::request::Mode::Emit,
    )?;
    let (cpus, cores, mut reasons, choice) = match placed {
        Some(p) => (Some(p.cpus), p.cores, p.reasons, Some(p.choice)),
        None => (
            None,
            Vec::new(),
            vec![format!(
                "no placement requested: CPU affinity unchanged ({}, the task's CPUs: the checks look there)",
                cpus_phrase(&placement::task_cpus(sys))
            )],
            None,
        ),
    };
    if req.memory.is_none() && cpus.is_some() {
        reasons.extend(memory::unchanged_reason(sys, &nodes));
    }
    reasons.extend(sched_notes);
    let mut plan = Plan {
        cpus,
        cores,
        nodes,
        memory,
        sched: req.sched.clone(),
        reasons,
        omp: None,
        thread_map: None,
        choice,
    };
    plan.omp = per_thread::plan_omp(sys, req, &plan)?;
    plan.thread_map = per_thread::plan_thread_map(sys, req, &plan)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::testkit::{Machine, cpus, deadline, kubelet, request};

    /// 2 packages (nodes 0 and 1) × 4 cores × 2 threads: CPU 0's sibling
    /// is 8; node 0 holds 0-3,8-11, node 1 holds 4-7,12-15.
    fn machine() -> Machine {
        Machine::new(2, 4, 2)
    }

    fn refusal(sys: &SystemState, args: &[&str]) -> ErrorCode {
        plan(sys, &request(args)).expect_err("a refusal").code
    }

    /// set_mempolicy(2)'s newer modes are refused only when the kernel
    /// answered EINVAL to a test call, never for the version (issue 35:
    /// RHEL 9's 5.14 has MPOL_PREFERRED_MANY): a "5.14" kernel that
    /// accepts the mode is planned, a "6.12" one that refuses it is
    /// refused, and a kernel that could not be asked (a dump) is planned.
    #[test]
    fn memory_modes_are_refused_by_the_kernels_answer_not_its_version() {
        use crate::system::process::MempolicyModes;
        let on = |r: &str, pm: Option<bool>, wi: Option<bool>| {
            let mut sys = machine().kernel(r).build();
            sys.process.mempolicy_modes = MempolicyModes {
                preferred_many: pm,
                weighted_interleave: wi,
            };
            sys
        };
        let wi = ["--dry-run", "--weighted-interleave", "all"];
        let pm = ["--dry-run", "--preferred-many", "0-1"];
        assert!(
            plan(
                &on("5.14.0-503.11.1.el9_5.x86_64", Some(true), None),
                &request(&pm)
            )
            .is_ok()
        );
        assert_eq!(
            refusal(&on("6.12.0", Some(false), Some(false)), &pm),
            ErrorCode::MempolicyUnsupported
        );
        assert_eq!(
            refusal(&on("6.12.0", Some(true), Some(false)), &wi),
            ErrorCode::MempolicyUnsupported
        );
        assert!(plan(&on("6.1.0-28-amd64", None, None), &request(&wi)).is_ok());
        assert!(plan(&on("5.10.0", None, None), &request(&pm)).is_ok());
    }

    /// The inherited affinity bounds --cores when it narrows the allowed
    /// CPUs that are not isolated (taskset -c 2-3), not when it is the
    /// default housekeeping mask (every CPU but the isolated ones, as a
    /// shell started by init has); --within overrides both ways.
    #[test]
    fn inherited_affinity_bounds_the_choice() {
        let cores1 = |sys: &SystemState, extra: &[&str]| {
            let mut args = vec!["--dry-run", "--cores", "1"];
            args.extend_from_slice(extra);
            plan(sys, &request(&args)).map(|p| p.cpus)
        };
        let sys = machine().inherited("2-3,10-11").build();
        assert_eq!(cores1(&sys, &[]).unwrap(), Some(cpus("2")));
        assert_eq!(
            cores1(&sys, &["--within", "cgroup"]).unwrap(),
            Some(cpus("0"))
        );
        assert_eq!(
            cores1(&sys, &["--node", "1"]).unwrap_err().code,
            ErrorCode::NodeNotAllowed
        );
        // Two ranks with their own masks get different cores.
        let other = machine().inherited("5,13").build();
        assert_eq!(cores1(&other, &[]).unwrap(), Some(cpus("5")));
        // The default housekeeping mask: --isolated still reaches 4-7.
        let sys = machine()
            .isolated("4-7,12-15")
            .inherited("0-3,8-11")
            .build();
        assert_eq!(cores1(&sys, &["--isolated"]).unwrap(), Some(cpus("4")));
        assert_eq!(cores1(&sys, &[]).unwrap(), Some(cpus("0")));
        assert_eq!(
            cores1(&sys, &["--isolated", "--within", "inherited"])
                .unwrap_err()
                .code,
            ErrorCode::NoIsolatedCpus
        );
        // One thread of a core is not a whole core: the hint names --within.
        let e = cores1(&machine().inherited("2").build(), &[]).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotEnoughCores);
        assert!(e.hint.unwrap().contains("--within cgroup"));
        // The full mask is no narrowing either.
        let sys = machine().inherited("0-15").build();
        assert_eq!(cores1(&sys, &["--node", "1"]).unwrap(), Some(cpus("4")));
        // Nor is PID 1's mask, which every process inherits (systemd's
        // CPUAffinity= keeping 0-1,8-9 for housekeeping, isolated CPUs
        // elsewhere): a latency request from a login shell reaches the
        // isolated cores; a narrower mask (taskset) still bounds.
        let mut sys = machine().isolated("2-3,10-11").inherited("0-1,8-9").build();
        sys.process.init_cpus_allowed = Some(cpus("0-1,8-9"));
        assert_eq!(cores1(&sys, &["--fifo", "9"]).unwrap(), Some(cpus("2")));
        sys.process.cpus_allowed = Some(cpus("1,9"));
        assert_eq!(cores1(&sys, &["--fifo", "9"]).unwrap(), Some(cpus("1")));
    }

    /// In a container PID 1 runs on the container's cpuset: its affinity
    /// names no housekeeping CPU (it would name every candidate).
    #[test]
    fn a_containers_pid_1_names_no_housekeeping() {
        let mut sys = Machine::new(1, 8, 1)
            .cgroup_cpuset("/kubepods/pod1", "4-7")
            .build();
        sys.process.init_cpus_allowed = Some(cpus("4-7"));
        let (named, why) = quiet::named_housekeeping(&sys, &cpus("4-7"));
        assert_eq!(
            (named.intersection(&cpus("4-7")), why.len()),
            (CpuSet::new(), 0)
        );
        let p = plan(
            &sys,
            &request(&["--dry-run", "--cores", "2", "--fifo", "1"]),
        )
        .unwrap();
        assert_eq!(p.cpus, Some(cpus("4-5")));
    }

    /// A kernel without NUMA: node 0 is every CPU, a memory policy on it
    /// is validated and not applied (set_mempolicy(2) would fail: ENOSYS).
    #[test]
    fn without_numa_node_0_is_the_machine() {
        let sys = machine().without_numa().build();
        let p = plan(&sys, &request(&["--dry-run", "--node", "0", "--membind=0"])).unwrap();
        assert_eq!(p.cpus, Some(cpus("0-15")));
        assert_eq!(p.memory, None);
        assert_eq!(
            refusal(&sys, &["--dry-run", "--membind=1"]),
            ErrorCode::NodeNotFound
        );
    }

    /// A node whose CPUs are all offline is not a memory-only node: the
    /// refusal names its offline CPUs and how to online them.
    #[test]
    fn node_with_only_offline_cpus() {
        let sys = machine().offline_in_node("4-7,12-15").build();
        let e = plan(&sys, &request(&["--dry-run", "--node", "1"])).expect_err("refused");
        assert_eq!(e.code, ErrorCode::NodeCpusOffline);
        assert!(
            e.message.contains("CPUs 4-7,12-15 exist but are offline"),
            "{}",
            e.message
        );
        assert!(e.hint.as_deref().unwrap().contains("chcpu -e 4-7,12-15"));
        // Part of the node offline: the plan uses the online part.
        let sys = machine().offline_in_node("4-7").build();
        let p = plan(&sys, &request(&["--dry-run", "--node", "1"])).unwrap();
        assert_eq!(p.cpus, Some(cpus("12-15")));
    }

    #[test]
    fn cores_are_chosen_compactly_one_thread_each() {
        let sys = machine().build();
        let p = plan(&sys, &request(&["--dry-run", "--cores", "2"])).unwrap();
        assert_eq!(p.cpus, Some(cpus("0-1")));
        assert_eq!(p.nodes, cpus("0"));
        assert_eq!(p.cores.len(), 2);
        assert_eq!(p.cores[0].cpus, cpus("0,8"));
        assert_eq!(p.cores[1].core, Some(1));
    }

    #[test]
    fn smt_takes_every_sibling_of_the_chosen_cores() {
        let sys = machine().build();
        let p = plan(&sys, &request(&["--dry-run", "--cores", "2", "--smt"])).unwrap();
        assert_eq!(p.cpus, Some(cpus("0-1,8-9")));
    }

    #[test]
    fn node_narrows_the_cores_to_its_package() {
        let sys = machine().build();
        let p = plan(
            &sys,
            &request(&["--dry-run", "--node", "1", "--cores", "1"]),
        )
        .unwrap();
        assert_eq!(p.cpus, Some(cpus("4")));
        assert_eq!(p.cores[0].package, Some(1));
        assert_eq!(p.nodes, cpus("1"));
    }

    #[test]
    fn cores_spill_over_nodes_only_when_no_node_holds_them() {
        let sys = machine().build();
        let p = plan(&sys, &request(&["--dry-run", "--cores", "5"])).unwrap();
        assert_eq!(p.cpus, Some(cpus("0-4")));
        assert_eq!(
            refusal(&sys, &["--dry-run", "--cores", "9"]),
            ErrorCode::NotEnoughCores
        );
    }

    #[test]
    fn a_core_with_a_sibling_outside_the_candidates_is_not_whole() {
        // CPU 8 (CPU 0's sibling) is not allowed: core 0 is not whole.
        let sys = machine().allowed("0-7,9-15").build();
        let p = plan(&sys, &request(&["--dry-run", "--cores", "1"])).unwrap();
        assert_eq!(p.cpus, Some(cpus("1")));
    }

    #[test]
    fn cpus_that_cannot_be_used_are_refused_by_kind() {
        let sys = machine().offline("15").allowed("0-13").build();
        for (args, code) in [
            (&["--cpus", "16"][..], ErrorCode::CpuNotFound),
            (&["--cpus", "15"], ErrorCode::CpuOffline),
            (&["--cpus", "14"], ErrorCode::CpuNotAllowed),
            (&["--node", "2"], ErrorCode::NodeNotFound),
            (&["--cpus", "0", "--node", "1"], ErrorCode::CpuNotOnNode),
        ] {
            let args = [&["--dry-run"][..], args].concat();
            assert_eq!(refusal(&sys, &args), code, "{args:?}");
        }
    }

    #[test]
    fn housekeeping_takes_the_cpus_isolated_leaves() {
        let sys = machine().isolated("6-7,14-15").build();
        let p = crate::plan::plan(&sys, &request(&["--dry-run", "--housekeeping"])).unwrap();
        assert_eq!(p.cpus, Some(cpus("0-5,8-13")));
        let p = crate::plan::plan(
            &sys,
            &request(&["--dry-run", "--housekeeping", "--cores", "2", "--node", "0"]),
        )
        .unwrap();
        assert!(p.cpus.unwrap().is_subset(&cpus("0-5,8-13")));
        let e = refusal(&sys, &["--dry-run", "--housekeeping", "--cpus", "5-6"]);
        assert_eq!(e, ErrorCode::NotHousekeeping);
    }

    #[test]
    fn isolated_takes_only_isolated_cpus() {
        let sys = machine().isolated("6-7,14-15").build();
        let p = plan(
            &sys,
            &request(&["--dry-run", "--isolated", "--cores", "2", "--smt"]),
        )
        .unwrap();
        assert_eq!(p.cpus, Some(cpus("6-7,14-15")));
        let plain = machine().build();
        assert_eq!(
            refusal(&plain, &["--dry-run", "--isolated"]),
            ErrorCode::NoIsolatedCpus
        );
        assert_eq!(
            refusal(&sys, &["--dry-run", "--isolated", "--cpus", "5"]),
            ErrorCode::CpuNotIsolated
        );
    }

    #[test]
    fn membind_without_nodes_binds_to_the_nodes_of_the_cpus() {
        let sys = machine().build();
        let p = plan(&sys, &request(&["--dry-run", "--node", "1", "--membind"])).unwrap();
        let m = p.memory.expect("a memory policy");
        assert_eq!((m.mode, m.nodes), (MemMode::Bind, cpus("1")));
        // No placement (issue 34: a Slurm rank bound by srun): the nodes
        // of the task's CPUs, its inherited affinity; every node with
        // an affinity of every CPU.
        let mut rank1 = machine().build();
        rank1.process.cpus_allowed = Some(cpus("5,13"));
        let m = plan(&rank1, &request(&["--dry-run", "--membind"]))
            .unwrap()
            .memory
            .unwrap();
        assert_eq!((m.mode, m.nodes), (MemMode::Bind, cpus("1")));
        let m = plan(&sys, &request(&["--dry-run", "--membind"]))
            .unwrap()
            .memory
            .unwrap();
        assert_eq!(m.nodes, cpus("0-1"));
    }

    /// With no placement option the task's CPUs (its inherited affinity
    /// within the allowed CPUs) are where the command runs: the checks
    /// look there, and numactl's `+N` counts among them, as libnuma's
    /// `numa_all_cpus_ptr` (the task's Cpus_allowed) does: under `taskset
    /// -c 5`, `--cpus +0` is CPU 5, as `numactl --physcpubind=+0` (issue
    /// 34; pinrun gave CPU 0).
    #[test]
    fn the_default_scope_is_the_task() {
        let mut sys = machine().build();
        sys.process.cpus_allowed = Some(cpus("5"));
        let req = request(&["--dry-run", "--cpus", "+0"]);
        assert_eq!(plan(&sys, &req).unwrap().cpus, Some(cpus("5")));
        let req = request(&["--dry-run", "--cpus", "all"]);
        assert_eq!(plan(&sys, &req).unwrap().cpus, Some(cpus("5")));
        let p = plan(&sys, &request(&["--dry-run", "--fifo", "50"])).unwrap();
        assert_eq!(crate::check::checked_cpus(&sys, &p), cpus("5"));
        // An affinity outside the allowed CPUs (a cpuset changed since):
        // the allowed CPUs.
        sys.process.cpus_allowed = Some(cpus("40"));
        assert_eq!(placement::task_cpus(&sys), sys.allowed);
    }

    #[test]
    fn interleave_all_takes_every_node_with_memory() {
        let sys = machine().without_memory(1).build();
        let p = plan(&sys, &request(&["--dry-run", "--interleave", "all"])).unwrap();
        assert_eq!(p.memory.unwrap().nodes, cpus("0"));
    }

    #[test]
    fn a_node_without_memory_is_refused_naming_the_nearest() {
        let sys = machine().without_memory(1).build();
        let e = plan(&sys, &request(&["--dry-run", "--preferred", "1"])).unwrap_err();
        assert_eq!(e.code, ErrorCode::NodeWithoutMemory);
        assert!(e.hint.unwrap().contains("--preferred=0"));
        assert_eq!(nearest_memory_node(&sys, 1), Some(0));
    }

    #[test]
    fn rt_priority_above_the_rlimit_is_refused_without_cap_sys_nice() {
        let sys = machine().unprivileged(10).build();
        assert_eq!(
            refusal(&sys, &["--dry-run", "--fifo", "20"]),
            ErrorCode::RtprioNotPermitted
        );
        assert!(plan(&sys, &request(&["--dry-run", "--rr", "10"])).is_ok());
        assert_eq!(
            refusal(&sys, &deadline(&["--dry-run"])),
            ErrorCode::DeadlineNotPermitted
        );
    }

    #[test]
    fn deadline_needs_its_whole_root_domain() {
        let sys = machine().build();
        let dl = deadline(&["--dry-run"]);
        let narrow = deadline(&["--dry-run", "--cpus", "0-3"]);
        assert_eq!(refusal(&sys, &narrow), ErrorCode::DeadlineAffinity);
        assert!(plan(&sys, &request(&dl)).is_ok());
        // The hint names what this host admits first: the whole root
        // domain (0-15 here), then a root domain made as the host's cpuset
        // controller makes one: a v2 partition only under cgroup v2, v1's
        // cpu_exclusive under v1 (a new user's trial on a v1 host was
        // told of v2 partitions only), either when no cpuset was read.
        let hint = plan(&sys, &request(&narrow)).unwrap_err().hint.unwrap();
        assert!(
            hint.starts_with("place it on its whole root domain (--cpus 0-15)"),
            "{hint}"
        );
        assert!(
            hint.contains("partition=root") && hint.contains("cpu_exclusive=1"),
            "{hint}"
        );
        let v2 = machine().cgroup_cpuset("/rt", "0-15").build();
        let hint = plan(&v2, &request(&narrow)).unwrap_err().hint.unwrap();
        assert!(
            hint.contains("partition=root") && !hint.contains("cpu_exclusive"),
            "{hint}"
        );
        let mut v1 = machine().cgroup_cpuset("/rt", "0-15").build();
        if let crate::system::AllowedSource::Cgroup(c) = &mut v1.allowed_source {
            c.file = "/sys/fs/cgroup/cpuset/rt/cpuset.cpus".into();
        }
        let hint = plan(&v1, &request(&narrow)).unwrap_err().hint.unwrap();
        assert!(
            hint.contains("cpu_exclusive=1") && !hint.contains("partition"),
            "{hint}"
        );
        let narrowed = machine().inherited("0-3").build();
        let hint = plan(&narrowed, &request(&dl)).unwrap_err().hint.unwrap();
        assert!(
            hint.starts_with(
                "start pinrun with an affinity that covers its root domain (taskset -c 0-15"
            ),
            "{hint}"
        );
        let caged = machine().allowed("0-3").build();
        let hint = plan(&caged, &request(&dl)).unwrap_err().hint.unwrap();
        assert!(
            hint.starts_with("widen the cgroup's cpuset (0-3) to its whole root domain"),
            "{hint}"
        );
    }

    #[test]
    fn claimed_cores_are_skipped_and_claimed_cpus_refused() {
        let sys = machine().build();
        let claims = kubelet("0,8");
        let p = plan_claimed(&sys, &request(&["--dry-run", "--cores", "1"]), &claims).unwrap();
        assert_eq!(p.cpus, Some(cpus("1")));
        let e = plan_claimed(&sys, &request(&["--dry-run", "--cpus", "8"]), &claims).unwrap_err();
        assert_eq!(e.code, ErrorCode::CpuClaimed);
        assert_eq!(claim_set(&cpus("1"), &p.cores), cpus("1,9"));
    }

    #[test]
    fn no_placement_leaves_the_affinity_unchanged() {
        let sys = machine().build();
        let p = plan(&sys, &request(&["--dry-run", "--fifo", "10"])).unwrap();
        assert_eq!(p.cpus, None);
        assert!(p.cores.is_empty());
    }
}
