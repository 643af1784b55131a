//! The fleet engines' flow (issue 23), the fleet wing's run layer:
//! waiting for kubelet to settle a container's cpuset (`--settle`),
//! `--emit systemd|k8s|slurm N`, and `--check-emitted FILE` (the topology
//! fingerprint against this machine). `app` calls these with what only it
//! holds (the re-read of the machine, the claims).

use super::check::pool;
use super::plan::{
    FINGERPRINT_TAG, Fingerprint, Found, fingerprint, fingerprint_difference, task_plans,
    unit_lists, unit_user_exec,
};
use super::read::{self, Fleet};
use crate::check::Finding;
use crate::claim::{Claims, Pool};
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Exit};
use crate::output::print_out;
use crate::plan::Plan;
use crate::request::{EmitFormat, Request};
use crate::system::{Root, SystemState};
use std::time::{Duration, Instant};

/// How often `--settle` re-reads the cpuset and kubelet's state.
const SETTLE_POLL: Duration = Duration::from_millis(100);

/// With `--settle DURATION` in a Kubernetes container whose kubelet state
/// assigns CPUs its cpuset does not show yet: re-reads the machine every
/// 100 ms until they agree or DURATION has passed, and returns the last
/// read. The `k8s-cpuset-unsettled` finding then says whether they agree.
/// Below `--sysroot` nothing changes, so nothing is waited for; outside
/// Kubernetes nothing is either, and `-v` says so on stderr. `reread`
/// reads the machine again, as the caller read it.
pub fn settle(
    root: &Root,
    sys: SystemState,
    req: &Request,
    reread: impl FnMut() -> SystemState,
) -> SystemState {
    let Some(limit) = req.fleet.settle else {
        return sys;
    };
    if !read::read(root, &sys).kubernetes {
        // Accepted (one command line serves every machine of a fleet),
        // but said at -v: nothing here is waited for.
        if req.output.verbose {
            crate::output::to_stderr(
                "pinrun: note: --settle: not in a Kubernetes container (no kubepods cgroup, KUBERNETES_SERVICE_HOST unset): nothing to wait for\n",
            );
        }
        return sys;
    }
    if req.sysroot.is_some() {
        return sys;
    }
    settle_with(
        sys,
        Duration::from_nanos(limit),
        |sys| read::read(root, sys),
        reread,
    )
}

/// [`settle`]'s loop: `reread` until kubelet's pool (of the fleet context
/// `fleet` reads) is no longer unsettled or `limit` has passed.
fn settle_with(
    mut sys: SystemState,
    limit: Duration,
    fleet: impl Fn(&SystemState) -> Fleet,
    mut reread: impl FnMut() -> SystemState,
) -> SystemState {
    let deadline = Instant::now() + limit;
    while matches!(pool(&fleet(&sys), &sys), Some(Pool::Unsettled { .. }))
        && Instant::now() < deadline
    {
        std::thread::sleep(SETTLE_POLL.min(deadline.saturating_duration_since(Instant::now())));
        sys = reread();
    }
    sys
}

/// `--emit k8s` and `--emit slurm N` (systemd is [`emit`]'s own);
/// `claims` reads the claims that `--emit slurm N`'s tasks plan around.
fn emit_fleet(
    req: &Request,
    sys: &SystemState,
    plan: &Plan,
    invocation: &[String],
    claims: impl FnOnce() -> Result<Claims, Error>,
) -> Result<Exit, Error> {
    let fp = fingerprint(sys);
    let (format, carries) = match req.fleet.emit {
        Some(EmitFormat::K8s) => ("--emit k8s", "a pod spec (YAML strings)"),
        _ => ("--emit slurm", "the srun line"),
    };
    // Words that are not UTF-8 would come out replaced: the emitted line
    // would run another argv than the one given (issue 34 item 5).
    let k8s_words: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let words = match req.fleet.emit {
        Some(EmitFormat::K8s) => &k8s_words,
        _ => &req.command,
    };
    if let Some(w) = words.iter().find(|w| w.to_str().is_none()) {
        return Err(Error::new(
            ErrorCode::EmitCommand,
            format!(
                "{format}: {} is not UTF-8, which {carries} cannot carry",
                w.to_string_lossy()
            ),
        )
        .hint(
            "rename the argument, or keep pinrun as the entrypoint in a spec you write yourself",
        ));
    }
    let command: Vec<String> = req
        .command
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let text = match req.fleet.emit {
        Some(EmitFormat::K8s) => {
            let p = &req.placement;
            let fixed = if p.cpus.is_some() || p.cpus_form.is_some() {
                Some("--cpus")
            } else if p.nodes.is_some() || p.nodes_form.is_some() {
                Some("--node")
            } else {
                None
            };
            if let Some(option) = fixed {
                return Err(Error::new(
                    ErrorCode::Usage,
                    format!(
                        "--emit k8s: {option} names fixed {}, but kubelet's static CPU manager chooses which CPUs the container gets: the pod would be refused whenever kubelet assigns others",
                        if option == "--cpus" { "CPUs" } else { "NUMA nodes" }
                    ),
                )
                .hint(
                    "ask for a count, e.g. pinrun --cores 2 --emit k8s -- /app (pinrun then plans inside the CPUs kubelet assigns); to keep them on one NUMA node, run kubelet with --topology-manager-policy=single-numa-node",
                ));
            }
            if plan.cpus.is_none() {
                return Err(Error::new(
                    ErrorCode::Usage,
                    "--emit k8s: no placement requested, so there is no CPU count to request",
                )
                .hint("say what the container gets, e.g. pinrun --cores 2 --emit k8s -- /app"));
            }
            super::report::k8s(plan, &fp, invocation, !command.is_empty())
        }
        Some(EmitFormat::Slurm(n)) => {
            let plans = task_plans(sys, req, &claims()?, n)?;
            super::report::slurm(
                &plans,
                &fp,
                &command,
                req.sched.is_requested() || req.memory.is_some(),
            )
        }
        _ => unreachable!("systemd is emitted by emit"),
    };
    print_out(&text)?;
    Ok(Exit::Success)
}

/// `--emit systemd`: the plan (on `sys`, with its `findings`) as unit
/// directives; `--emit k8s|slurm N`: `emit_fleet`, with `claims`.
pub fn emit(
    req: &Request,
    sys: &SystemState,
    plan: &Plan,
    findings: &[Finding],
    claims: impl FnOnce() -> Result<Claims, Error>,
) -> Result<Exit, Error> {
    if req.fleet.emit != Some(EmitFormat::Systemd) {
        return emit_fleet(req, sys, plan, &invocation_without_emit(), claims);
    }
    emittable_command(&req.command)?;
    print_out(&super::report::systemd(
        req,
        plan,
        findings,
        &invocation_without_emit(),
        &fingerprint(sys),
        std::env::var("PATH").ok().as_deref(),
    ))?;
    Ok(Exit::Success)
}

/// Refuses a command that `ExecStart=` (systemd.service(5), "COMMAND
/// LINES") would run differently from a launch: bytes that are not UTF-8
/// (they would be replaced), a first word starting with one of systemd's
/// prefixes (`-@:+!|`), or a relative path with a `/` (systemd takes an
/// absolute path or a bare name it looks up in its own PATH).
fn emittable_command(command: &[std::ffi::OsString]) -> Result<(), Error> {
    let refuse = |why: String, hint: &str| {
        Err(Error::new(ErrorCode::EmitCommand, format!("--emit systemd: {why}")).hint(hint))
    };
    for word in command {
        if word.to_str().is_none() {
            return refuse(
                format!(
                    "{} is not UTF-8, which ExecStart= cannot carry",
                    word.to_string_lossy()
                ),
                "keep pinrun as the ExecStart= prefix in a unit you write yourself, or rename the argument",
            );
        }
    }
    if let Some(first) = command.first().and_then(|w| w.to_str()) {
        if let Some(c) = first.chars().next().filter(|c| "-@:+!|".contains(*c)) {
            return refuse(
                format!(
                    "systemd reads the leading '{c}' of {first} as an ExecStart= prefix, not as part of the command"
                ),
                "name the command by its absolute path",
            );
        }
        if first.contains('/') && !first.starts_with('/') {
            return refuse(
                format!(
                    "{first} is a relative path; ExecStart= takes an absolute path or a bare name on systemd's PATH"
                ),
                "name the command by its absolute path",
            );
        }
    }
    Ok(())
}

/// This pinrun's command line without `--emit FORMAT`, `--sysroot DIR`,
/// `--cgroup` and `--unit-user USER`,
/// argv[0] replaced by
/// the binary's absolute path (for `ExecStart=`).
fn invocation_without_emit() -> Vec<String> {
    let mut out = vec![
        std::env::current_exe()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "pinrun".into()),
    ];
    let mut args = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    let mut in_command = false;
    while let Some(a) = args.next() {
        // --emit, --cgroup, --unit-user and --sysroot describe this run,
        // not the service's (and --emit slurm's task count).
        if !in_command && a == "--unit-user" {
            args.next();
            continue;
        }
        if !in_command && (a == "--emit" || a == "--sysroot") {
            if args.next().as_deref() == Some("slurm") {
                args.next();
            }
            continue;
        }
        if !in_command && a.starts_with("--emit=slurm") {
            args.next();
            continue;
        }
        if !in_command
            && (a.starts_with("--emit=")
                || a.starts_with("--sysroot=")
                || a.starts_with("--unit-user=")
                || a == "--cgroup")
        {
            continue;
        }
        in_command |= a == "--";
        out.push(a);
    }
    out
}

/// kubelet's exclusive CPUs of the caller's own container (issue 23): in
/// a container with exclusive CPUs, kubelet's claim on them bounds the
/// cpuset rather than competes with it. Reads the fleet context
/// ([`read::read`]); `None` outside such a container.
pub fn own_exclusive_cpus(root: &Root, sys: &SystemState) -> Option<CpuSet> {
    match pool(&read::read(root, sys), sys)? {
        Pool::Exclusive { cpus, .. } => Some(cpus),
        _ => None,
    }
}

/// Names, in `sys`, the Slurm task that set the inherited affinity
/// ([`SystemState::inherited_from`]: "Slurm task 3 mask 4-7" in the
/// core's messages), from this process's environment.
pub fn name_inherited(sys: &mut SystemState) {
    sys.inherited_from = read::slurm_task().map(|t| t.name());
}

/// Largest file `--check-emitted` reads: a unit, pod spec or script that
/// pinrun wrote is a few KiB.
pub const MAX_EMITTED: u64 = 1 << 20;

/// Reads the user's FILE for `--check-emitted`: opened `O_NONBLOCK` (a
/// FIFO does not block), only a regular file, at most [`MAX_EMITTED`]
/// bytes. Errors are `(what failed, hint)`.
fn read_emitted(file: &std::path::Path) -> Result<String, (String, &'static str)> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |what: &'static str| {
        move |e: std::io::Error| {
            let why = e.raw_os_error().map_or_else(
                || e.to_string(),
                |n| nix::errno::Errno::from_raw(n).desc().to_lowercase(),
            );
            (
                format!("cannot {what} {}: {why}", file.display()),
                "name a unit, pod spec or script that pinrun --emit wrote",
            )
        }
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(file)
        .map_err(failed("open"))?;
    let meta = f.metadata().map_err(failed("stat"))?;
    if !meta.is_file() {
        return Err((
            format!("{} is not a regular file", file.display()),
            "name the file pinrun --emit wrote, not a device, FIFO or directory",
        ));
    }
    let mut buf = Vec::new();
    f.take(MAX_EMITTED + 1)
        .read_to_end(&mut buf)
        .map_err(failed("read"))?;
    if buf.len() as u64 > MAX_EMITTED {
        return Err((
            format!(
                "{} is larger than {} KiB, which no emitted file is",
                file.display(),
                MAX_EMITTED >> 10
            ),
            "name the unit, pod spec or script that pinrun --emit wrote",
        ));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `--check-emitted FILE`: exit 0 when FILE's topology fingerprint is this
/// machine's and every CPU and node list a unit or srun line sets
/// ([`super::plan::unit_lists`]) exists here; refuses (125) when it
/// differs, naming the difference, or when FILE has no fingerprint line,
/// a malformed one or several. FILE is read from the host, not below
/// `--sysroot` (it is the user's file, as the policy file), as a bounded
/// regular file ([`read_emitted`]).
pub fn check_emitted(req: &Request, sys: &SystemState) -> Result<Exit, Error> {
    let Some(file) = &req.fleet.emitted else {
        return Ok(Exit::Success);
    };
    let refuse = |what: String| {
        Error::new(
            ErrorCode::FingerprintMismatch,
            format!("--check-emitted: {what}"),
        )
    };
    let text = read_emitted(file).map_err(|(what, hint)| refuse(what).hint(hint))?;
    let machine = match &req.sysroot {
        Some(p) => format!("the dump {}", p.display()),
        None => "this machine".to_string(),
    };
    let here = fingerprint(sys);
    let emit_again = format!(
        "emit it again with pinrun --emit on a machine of its type; {machine}'s line is: # {}",
        here.line()
    );
    let tag = FINGERPRINT_TAG;
    let emitted = match Fingerprint::find_in(&text) {
        Found::One(f) => f,
        Found::None => {
            return Err(
                refuse(format!("{} has no \"# {tag}\" line", file.display())).hint(emit_again),
            );
        }
        Found::Malformed(n) => {
            return Err(refuse(format!(
                "{}: line {n}: the \"{tag}\" line is malformed (it needs fnv1a64=, cpus=, cores=, packages= and nodes=)",
                file.display()
            ))
            .hint(emit_again));
        }
        Found::Several(a, b) => {
            return Err(refuse(format!(
                "{} has more than one \"{tag}\" line (lines {a} and {b}): which one holds is a guess",
                file.display()
            ))
            .hint(emit_again));
        }
    };
    let short = if req.sysroot.is_some() {
        "the dump"
    } else {
        "this machine"
    };
    if let Some(why) = fingerprint_difference(&emitted, &here, short) {
        return Err(refuse(format!("{} does not fit {machine}: {why}", file.display())).hint(
            format!("its CPU lists were chosen on another machine type: emit it again with pinrun --emit for {machine}, or roll it out only to machines of its type"),
        ));
    }
    let lists = unit_lists(&text)
        .map_err(|e| refuse(format!("{}: {e}", file.display())).hint(emit_again.clone()))?;
    let nodes = sys.node_ids();
    for (line, name, cpus, set) in lists {
        let (exist, kind) = if cpus {
            (&sys.online, "online CPUs")
        } else {
            (&nodes, "NUMA nodes")
        };
        let missing = set.difference(exist);
        if !missing.is_empty() {
            return Err(refuse(format!(
                "{}: line {line}: {} names {}, which {machine} does not have ({kind}: {exist})",
                file.display(),
                if name.starts_with("srun ") {
                    format!("{name} (CPUs {set})")
                } else {
                    format!("{name}={set}")
                },
                if cpus {
                    crate::words::cpus_phrase(&missing)
                } else {
                    crate::words::nodes_phrase(&missing)
                },
            ))
            .hint(format!(
                "the file was edited after pinrun --emit wrote it: emit it again for {machine}"
            )));
        }
    }
    // The unit's User= must be able to run its ExecStart= here, as
    // --emit systemd --unit-user warns; a dump has no files to walk.
    if let Some((user, word)) = unit_user_exec(&text).filter(|_| req.sysroot.is_none()) {
        let is_pinrun = std::path::Path::new(&word).file_name() == Some("pinrun".as_ref());
        if let Some(why) = super::report::user_problem(&user, &word, is_pinrun) {
            return Err(refuse(format!("{}: {why}", file.display())).hint(
                "the unit would fail to start here (status=203/EXEC or 217/USER): fix the install or the User= line, then check again",
            ));
        }
    }
    print_out(&format!(
        "{}: topology matches {machine} ({}, fingerprint {})\n",
        file.display(),
        here.shape(),
        here.hash
    ))?;
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::parse_kubelet_state;
    use crate::fleet::parse_pod;
    use crate::testkit::Machine;

    const CGROUP: &str = "/kubepods/pod0f3e2d1c-4b5a-6978-8a9b-0c1d2e3f4a5b/abc";

    /// A machine in a Guaranteed pod with the cgroup cpuset `effective`.
    fn pod(effective: &str) -> SystemState {
        Machine::new(1, 4, 1)
            .cgroup_cpuset(CGROUP, effective)
            .build()
    }

    /// The pod's fleet context: its state file gives container "app"
    /// CPUs 2-3.
    fn fleet(_: &SystemState) -> Fleet {
        Fleet {
            pod: parse_pod(CGROUP),
            kubernetes: true,
            kubelet: parse_kubelet_state(
                r#"{"policyName":"static","defaultCpuSet":"0-1","entries":{"0f3e2d1c-4b5a-6978-8a9b-0c1d2e3f4a5b":{"app":"2-3"}}}"#,
                crate::cpuset::MAX_ID,
            )
            .ok(),
            ..Fleet::default()
        }
    }

    /// --settle re-reads until kubelet has written the cpuset, then stops.
    #[test]
    fn settle_rereads_until_the_cpuset_matches() {
        let mut reads = 0;
        let sys = settle_with(pod("0-3"), Duration::from_secs(60), fleet, || {
            reads += 1;
            pod(if reads < 3 { "0-3" } else { "2-3" })
        });
        assert_eq!(reads, 3);
        assert_eq!(sys.allowed, crate::testkit::cpus("2-3"));
        // Never settled: bounded by the limit, the last read returned.
        let mut reads = 0;
        let sys = settle_with(pod("0-3"), Duration::from_millis(250), fleet, || {
            reads += 1;
            pod("0-3")
        });
        assert!((1..=3).contains(&reads), "{reads} reads");
        assert!(matches!(
            pool(&fleet(&sys), &sys),
            Some(Pool::Unsettled { .. })
        ));
        // Settled from the start: nothing is re-read.
        let sys = settle_with(
            pod("2-3"),
            Duration::from_secs(60),
            fleet,
            || unreachable!(),
        );
        assert_eq!(sys.allowed, crate::testkit::cpus("2-3"));
    }
}
