//! The fleet engines' flow (issue 23): waiting for kubelet to settle a
//! container's cpuset (`--settle`), `--emit k8s`, `--emit slurm N`, and
//! `--check-emitted FILE` (the topology fingerprint against this machine).

use crate::error::{Error, ErrorCode, Exit};
use crate::fleet::Pool;
use crate::output::print_out;
use crate::plan::fleet::{Fingerprint, fingerprint, fingerprint_difference, task_plans};
use crate::request::{EmitFormat, Request};
use crate::system::{Root, SystemState};
use std::time::{Duration, Instant};

/// How often `--settle` re-reads the cpuset and kubelet's state.
const SETTLE_POLL: Duration = Duration::from_millis(100);

/// With `--settle DURATION` in a Kubernetes container whose kubelet state
/// assigns CPUs its cpuset does not show yet: re-reads the machine every
/// 100 ms until they agree or DURATION has passed, and returns the last
/// read. The `k8s-cpuset-unsettled` finding then says whether they agree.
/// Below `--sysroot` nothing changes, so nothing is waited for.
pub fn settle(root: &Root, sys: SystemState, req: &Request) -> SystemState {
    let Some(limit) = req.fleet.settle else {
        return sys;
    };
    if req.sysroot.is_some() {
        return sys;
    }
    let scope = super::scope::for_request(req);
    settle_with(sys, Duration::from_nanos(limit), || {
        SystemState::read_scoped(root, &scope)
    })
}

/// [`settle`]'s loop: `reread` until kubelet's pool is no longer
/// unsettled or `limit` has passed.
fn settle_with(
    mut sys: SystemState,
    limit: Duration,
    mut reread: impl FnMut() -> SystemState,
) -> SystemState {
    let deadline = Instant::now() + limit;
    while matches!(
        crate::check::fleet::pool(&sys),
        Some(Pool::Unsettled { .. })
    ) && Instant::now() < deadline
    {
        std::thread::sleep(SETTLE_POLL.min(deadline.saturating_duration_since(Instant::now())));
        sys = reread();
    }
    sys
}

/// `--emit k8s` and `--emit slurm N` (systemd is `super::emit`).
pub fn emit(
    root: &Root,
    req: &Request,
    sys: &SystemState,
    plan: &crate::plan::Plan,
    invocation: &[String],
) -> Result<Exit, Error> {
    let fp = fingerprint(sys);
    let command: Vec<String> = req
        .command
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let text = match req.fleet.emit {
        Some(EmitFormat::K8s) => {
            if plan.cpus.is_none() {
                return Err(Error::new(
                    ErrorCode::Usage,
                    "--emit k8s: no placement requested, so there is no CPU count to request",
                )
                .hint("say what the container gets, e.g. pinrun --cores 2 --emit k8s -- /app"));
            }
            crate::emit::k8s(plan, &fp, invocation, !command.is_empty())
        }
        Some(EmitFormat::Slurm(n)) => {
            let (claims, _) = super::claims::read_claims(root, sys, req, false)?;
            let plans = task_plans(sys, req, &claims, n)?;
            crate::emit::slurm(
                &plans,
                &fp,
                &command,
                req.sched.is_requested() || req.memory.is_some(),
            )
        }
        _ => unreachable!("systemd is emitted by app::emit"),
    };
    print_out(&text)?;
    Ok(Exit::Success)
}

/// `--check-emitted FILE`: exit 0 when FILE's topology fingerprint is this
/// machine's; refuses (125) when it differs, naming the difference, or
/// when FILE has none. FILE is read from the host, not below `--sysroot`
/// (it is the user's file, as the policy file).
pub fn check_emitted(req: &Request, sys: &SystemState) -> Result<Exit, Error> {
    let Some(file) = &req.fleet.emitted else {
        return Ok(Exit::Success);
    };
    let text = std::fs::read(file).map_err(|e| {
        Error::new(
            ErrorCode::FingerprintMismatch,
            format!("--check-emitted: cannot read {}: {e}", file.display()),
        )
        .hint("name a unit, pod spec or script that pinrun --emit wrote")
    })?;
    let text = String::from_utf8_lossy(&text);
    let here = fingerprint(sys);
    let Some(emitted) = Fingerprint::find_in(&text) else {
        return Err(Error::new(
            ErrorCode::FingerprintMismatch,
            format!(
                "--check-emitted: {} has no \"# {}\" line",
                file.display(),
                crate::plan::fleet::FINGERPRINT_TAG
            ),
        )
        .hint(format!(
            "emit it again with pinrun --emit on a machine of its type; this one's line is: # {}",
            here.line()
        )));
    };
    match fingerprint_difference(&emitted, &here) {
        None => {
            print_out(&format!(
                "{}: topology matches this machine ({}, fingerprint {})\n",
                file.display(),
                here.shape(),
                here.hash
            ))?;
            Ok(Exit::Success)
        }
        Some(why) => Err(Error::new(
            ErrorCode::FingerprintMismatch,
            format!(
                "--check-emitted: {} does not fit this machine: {why}",
                file.display()
            ),
        )
        .hint(
            "its CPU lists were chosen on another machine type: emit it again with pinrun --emit on this one, or roll it out only to machines of its type",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{parse_kubelet_state, parse_pod};
    use crate::system::fleet::Fleet;
    use crate::testkit::Machine;

    /// A Guaranteed pod whose state file gives container "app" CPUs 2-3,
    /// with the cgroup cpuset `effective`.
    fn pod(effective: &str) -> SystemState {
        let cgroup = "/kubepods/pod0f3e2d1c-4b5a-6978-8a9b-0c1d2e3f4a5b/abc";
        Machine::new(1, 4, 1)
            .cgroup_cpuset(cgroup, effective)
            .fleet(Fleet {
                pod: parse_pod(cgroup),
                kubernetes: true,
                kubelet: Some(parse_kubelet_state(
                    r#"{"policyName":"static","defaultCpuSet":"0-1","entries":{"0f3e2d1c-4b5a-6978-8a9b-0c1d2e3f4a5b":{"app":"2-3"}}}"#,
                )),
                ..Fleet::default()
            })
            .build()
    }

    /// --settle re-reads until kubelet has written the cpuset, then stops.
    #[test]
    fn settle_rereads_until_the_cpuset_matches() {
        let mut reads = 0;
        let sys = settle_with(pod("0-3"), Duration::from_secs(60), || {
            reads += 1;
            pod(if reads < 3 { "0-3" } else { "2-3" })
        });
        assert_eq!(reads, 3);
        assert_eq!(sys.allowed, crate::testkit::cpus("2-3"));
        // Never settled: bounded by the limit, the last read returned.
        let mut reads = 0;
        let sys = settle_with(pod("0-3"), Duration::from_millis(250), || {
            reads += 1;
            pod("0-3")
        });
        assert!((1..=3).contains(&reads), "{reads} reads");
        assert!(matches!(
            crate::check::fleet::pool(&sys),
            Some(Pool::Unsettled { .. })
        ));
        // Settled from the start: nothing is re-read.
        let sys = settle_with(pod("2-3"), Duration::from_secs(60), || unreachable!());
        assert_eq!(sys.allowed, crate::testkit::cpus("2-3"));
    }
}
