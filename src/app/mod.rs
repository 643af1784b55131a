//! The whole run of the `pinrun` command (ARCHITECTURE.md §1's flow), as a table of
//! contents: [`main`] parses the command line; `run` resolves the
//! command, reads the machine once with the scope decided up front
//! ([`scope`]), and hands over to one function per mode: `show`,
//! `dry_run`, `check`, `emit` or `launch` (apply and exec). The
//! modes but `--show` plan and check first (`plan_and_check`, with the
//! claims flow of [`claims`]). All output goes through [`crate::output`];
//! errors are `pinrun: <what>: <why>` with a `hint:` line. `src/main.rs`
//! only turns [`main`]'s result into the process's exit status.

pub mod per_thread;
pub mod scope;

use crate::apply::transaction::{Transaction, Undone};
use crate::check::{Finding, Severity};
use crate::claims::read::records_of;
use crate::claims::run as claims;
use crate::cli::{Cli, Generate};
use crate::error::{Error, ErrorCode, Exit};
use crate::fleet::run as fleet;
use crate::output::{print_error, print_out, print_out_with, to_stderr};
use crate::plan::Plan;
use crate::probe::run as probe;
use crate::request::{Mode, Request};
use crate::steer::plan::SteerPlan;
use crate::steer::run as steer;
use crate::system::{Root, SystemState};
use crate::{apply, exec, report};
use clap::CommandFactory;
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;

/// pinrun(1): clap_mangen's generated sections plus the hand-written ones.
fn render_man(cmd: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(cmd);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    // clap_mangen gives each help heading an .SH of its own (PLACEMENT,
    // CLAIMS, SCHEDULING), which the hand-written sections also are: the
    // headings become subsections of OPTIONS, so each section name is
    // used once.
    let mut options = Vec::new();
    man.render_options_section(&mut options)?;
    let options = String::from_utf8_lossy(&options);
    let mut first = true;
    for line in options.split_inclusive('\n') {
        match line.strip_prefix(".SH ") {
            Some(rest) if !first => out.write_all(format!(".SS {rest}").as_bytes())?,
            _ => out.write_all(line.as_bytes())?,
        }
        if line.starts_with(".SH ") {
            first = false;
        }
    }
    out.write_all(crate::manual::sections().as_bytes())?;
    man.render_version_section(out)
}

fn generate(what: Generate) -> Exit {
    let mut cmd = Cli::command();
    // Into a buffer first: clap_complete panics on a write error.
    let mut buf = Vec::new();
    let shell = match what {
        Generate::Man => {
            // Writing into a Vec cannot fail.
            let _ = render_man(cmd.clone(), &mut buf);
            None
        }
        Generate::Bash => Some(clap_complete::Shell::Bash),
        Generate::Zsh => Some(clap_complete::Shell::Zsh),
        Generate::Fish => Some(clap_complete::Shell::Fish),
    };
    if let Some(shell) = shell {
        clap_complete::generate(shell, &mut cmd, "pinrun", &mut buf);
    }
    let generated = String::from_utf8_lossy(&buf);
    // Live CPU and node numbers, and the command after --.
    let text = match what {
        Generate::Man => generated.into_owned(),
        Generate::Bash => format!("{generated}{}", crate::completion::bash()),
        Generate::Zsh => crate::completion::zsh_patch(&generated),
        Generate::Fish => format!("{generated}{}", crate::completion::fish()),
    };
    match print_out(&text) {
        Ok(()) => Exit::Success,
        Err(e) => {
            print_error(&e, false);
            Exit::Failure
        }
    }
}

/// Runs the request: the exit status of a mode, or never returns when the
/// command is exec'd.
fn run(req: Request) -> Result<Exit, Error> {
    // --pid: a running process instead of a command (the wing src/pid/).
    if let Some(target) = &req.target {
        return crate::pid::run::run(&PidLaunch, &req, target);
    }
    // The command is looked up first, as the launch's exec will: the
    // launch, `--dry-run` and `--check` give the same 126/127 and message,
    // except below `--sysroot` (the dump holds no programs, and this host's
    // PATH is not the dumped machine's). A command that cannot run does not
    // hide a plan that is refused: the plan's refusal is the first fault
    // (README, EXIT STATUS: 125 in every mode) and its error comes first
    // (JSON's is the plan's), the command's after it. A launch whose
    // command is missing therefore still plans, as a dry run (nothing is
    // claimed, nothing waited for), and reports the command's failure
    // when the plan stands. A dry run shows the plan first and the
    // verdict on the command after it (issue 37).
    let (command, verdict) = look_up(&req);
    let lost_launch = req.mode == Mode::Run && verdict.is_some();
    let req = if lost_launch {
        Request {
            mode: Mode::DryRun,
            ..req
        }
    } else {
        req
    };
    let root = Root::sysroot(req.sysroot.as_deref())?;
    // The real-time tasks need only the request: scanned, with the IRQs,
    // on a helper thread while this one reads the rest and plans (when a
    // second allowed CPU is idle), joined before the checks, long before
    // anything is applied.
    let (sys, ahead) = SystemState::read_scoped_ahead(
        &root,
        &scope::for_request(&req),
        scope::rt_scan_ahead(&req),
    );
    let mut sys = fleet::settle(&root, sys, &req, || {
        SystemState::read_scoped(&root, &scope::for_request(&req))
    });
    fleet::name_inherited(&mut sys);
    if let Some(e) = sys.read_error.take() {
        return Err(e);
    }
    // --choose measured: the candidates probed before the plan chooses.
    if matches!(
        req.mode,
        Mode::Run | Mode::DryRun | Mode::Check | Mode::Probe
    ) {
        sys = probe::measure_choice(&root, sys, &req, |s| candidates(&root, s, &req))?;
    }
    let planned = |sys| plan_and_check(&root, sys, &req, ahead);
    match req.mode {
        Mode::Show => show(&root, &sys, &req),
        Mode::DryRun => {
            let p = match planned_first(planned(sys), verdict.as_ref(), &req)? {
                Ok(p) => p,
                Err(exit) => return Ok(exit),
            };
            // The launch's command cannot run: its failure, after the plan stood.
            if lost_launch && let Some(v) = verdict {
                return Err(v);
            }
            // What the kernel answers the launch's own calls (a seccomp
            // filter, a cgroup, a security module): asked on a throwaway
            // thread, the dry run's verdict when it refuses.
            let verdict = verdict.or_else(|| rehearse(&root, &req, &p));
            let parts = (&p.plan, &p.findings[..], p.steer.as_ref());
            let exit = dry_run(&req, parts, command.as_deref(), verdict.as_ref())?;
            // The verdict on stderr after the whole plan, with its exit
            // status (as --strict's refusal: a second JSON document would
            // break `jq`).
            match verdict {
                Some(e) => {
                    crate::output::print_error(&e, false);
                    Ok(e.exit)
                }
                None => Ok(exit),
            }
        }
        Mode::Check => {
            let p = match planned_first(planned(sys), verdict.as_ref(), &req)? {
                Ok(p) => p,
                Err(exit) => return Ok(exit),
            };
            if let Some(v) = verdict {
                return Err(v);
            }
            let refused = rehearse(&root, &req, &p);
            let exit = check(&req, &p.findings);
            // The launch would fail: its error after the findings, its status.
            if let Some(e) = refused {
                exit?;
                crate::output::print_error(&e, false);
                return Ok(e.exit);
            }
            // The machine's state is not freed (issue 17: 10 000 IRQ
            // records and their sets, ≈ 4 % of a `--check`'s user time
            // on a 10 000-IRQ dump); it holds memory only, which the exit
            // gives back. The claims guard (none: only a launch claims,
            // `claims::plan`) is dropped as before.
            let Planned { sys, guard, .. } = p;
            std::mem::forget(sys);
            drop(guard);
            exit
        }
        Mode::Emit => emit(&root, &req, &planned(sys)?),
        Mode::CheckEmitted => fleet::check_emitted(&req, &sys),
        Mode::Run => launch(&root, &req, planned(sys)?, command),
        Mode::Probe => {
            let p = planned(sys)?;
            probe::only(&root, &req, &probed(&p, &managed(&p)))
        }
        Mode::PlanHost => crate::host::run::run(&root, &sys, &req),
    }
}

/// The command as the launch's exec will find it, or why it cannot run
/// (exit 126/127: the launch, `--dry-run` and `--check` alike; not below
/// `--sysroot`, whose dump holds no programs).
fn look_up(req: &Request) -> (Option<PathBuf>, Option<Error>) {
    let looked = req.mode == Mode::Run
        || (matches!(req.mode, Mode::DryRun | Mode::Check)
            && req.sysroot.is_none()
            && !req.command.is_empty());
    if !looked {
        return (None, None);
    }
    let resolved = exec::resolve(&req.command).and_then(|path| {
        if req.mode != Mode::Run {
            // What execve(2) would answer for its #! interpreter.
            exec::predict_exec(&req.command[0], &path)?;
        }
        Ok(path)
    });
    match resolved {
        Ok(path) => (Some(path), None),
        Err(e) => (None, Some(e)),
    }
}

/// The plan, or its refusal as the first fault when the command cannot
/// run either (`verdict`): the refusal is printed (JSON's error with
/// `--json`), then the command's failure as text, and the refusal's exit
/// status (125) is returned in `Ok(Err)`, nothing more to print.
fn planned_first(
    planned: Result<Planned, Error>,
    verdict: Option<&Error>,
    req: &Request,
) -> Result<Result<Planned, Exit>, Error> {
    match (planned, verdict) {
        (Err(e), Some(v)) => {
            crate::output::print_error(&e, req.output.json);
            crate::output::print_error(v, false);
            Ok(Err(e.exit))
        }
        (p, _) => p.map(Ok),
    }
}

/// `--show`: the machine and the claims.
fn show(root: &Root, sys: &SystemState, req: &Request) -> Result<Exit, Error> {
    let (claims, _) = with_others(root, sys, |o| claims::read_claims(root, sys, req, false, o))?;
    // Who runs where: the real-time and pinned threads (issue 18), of the
    // live machine or, below --sysroot, of the dump (which keeps their
    // `stat` and `status`).
    let tasks = crate::system::rt_tasks::read_placed_tasks(root, &sys.online);
    if req.output.json {
        let mut claims_json = serde_json::json!({});
        claims_json["tasks"] = report::placed_tasks_json(&tasks);
        crate::claims::report::add_claims_json(&mut claims_json, &claims, claims::now());
        report::add_policy_file_json(&mut claims_json, &req.output);
        print_out_with(|w| report::write_show_json(sys, claims_json, w))?;
    } else {
        let live = req.sysroot.is_none().then(|| claims::state_dir(req));
        print_out(&crate::show::text(sys, req.output.verbose))?;
        print_out(&crate::show::who_runs_where(&tasks, &sys.online))?;
        print_out(&report::policy_file_text(&req.output))?;
        print_out(&crate::claims::report::claims_text(
            &claims,
            claims::now(),
            live.as_deref(),
        ))?;
    }
    Ok(Exit::Success)
}

/// `f` with what the claims wing needs of the steer and fleet wings
/// ([`claims::Others`]): `app` composes the wings.
fn with_others<T>(root: &Root, sys: &SystemState, f: impl FnOnce(&claims::Others) -> T) -> T {
    let own_exclusive = || fleet::own_exclusive_cpus(root, sys);
    f(&claims::Others {
        reclaim: &|d| steer::reclaim_stale(d, records_of),
        own_exclusive: &own_exclusive,
    })
}

/// A request planned and checked on the machine.
struct Planned {
    /// The machine, with what the checks of the chosen CPUs read.
    sys: SystemState,
    /// The plan.
    plan: Plan,
    /// Every finding, `--allow`ed codes downgraded to info.
    findings: Vec<Finding>,
    /// For `--exclusive`: the locked state directory (see [`claims::Guard`]).
    guard: Option<claims::Guard>,
    /// `--steer-irqs`: the IRQs to move off the claimed CPUs (the steer
    /// wing's plan, beside the core's).
    steer: Option<SteerPlan>,
}

/// `--choose measured`'s candidates: the plan against the claims, the lock
/// an `--exclusive` launch takes released until the final plan.
fn candidates(root: &Root, sys: &SystemState, req: &Request) -> Result<Plan, Error> {
    with_others(root, sys, |o| claims::plan(root, sys, req, o)).map(|(plan, _, _)| plan)
}

/// Whether `--steer-irqs`' plan found an IRQ kernel-managed, for the probe
/// ([`crate::steer::plan::managed`]; `None` for every IRQ without it).
fn managed(p: &Planned) -> impl Fn(u32) -> Option<bool> + '_ {
    move |irq| {
        p.steer
            .as_ref()
            .and_then(|sp| crate::steer::plan::managed(sp, irq))
    }
}

/// The probe wing's view of a planned request.
fn probed<'a>(p: &'a Planned, managed: &'a dyn Fn(u32) -> Option<bool>) -> probe::Probed<'a> {
    probe::Probed {
        sys: &p.sys,
        plan: &p.plan,
        findings: &p.findings,
        managed: p.steer.is_some().then_some(managed),
    }
}

/// Plans `req` against the claims (waiting with `--wait`), reads what the
/// checks of the chosen CPUs need (the real-time tasks from `ahead` when
/// they were scanned ahead, [`scope::rt_scan_ahead`]), and checks.
fn plan_and_check(
    root: &Root,
    mut sys: SystemState,
    req: &Request,
    ahead: Option<crate::system::rt_tasks::RtScan>,
) -> Result<Planned, Error> {
    fleet::name_inherited(&mut sys);
    // Claims (issue 5): `guard` holds the state directory's lock and, once
    // written, this launch's record; dropping it on failure removes both.
    let (plan, claims, guard) = with_others(root, &sys, |o| claims::plan(root, &sys, req, o))?;
    // --steer-irqs (issue 21): the IRQs on the claimed CPUs, planned now.
    let steer = steer::plan_for(root, &sys, req, &plan, &claims)?;
    let checked = crate::check::checked_cpus(&sys, &plan);
    scope::read_extras_for(&mut sys, root, req, &checked, ahead);
    if let Some(e) = sys.read_error.take() {
        return Err(e);
    }
    let mut findings = crate::check::check_claimed(&sys, req, &plan, &claims);
    // The claims wing's findings, after the core's (as they always came).
    findings.extend(crate::claims::check::findings(&sys, req, &plan, &claims));
    // The fleet wing's findings (issue 23), after the core's.
    findings.extend(crate::fleet::check::findings(
        &sys,
        req,
        &plan,
        &claims,
        || crate::fleet::read::read(root, &sys),
    ));
    crate::check::accept(&mut findings, &req.output.allow);
    Ok(Planned {
        sys,
        plan,
        findings,
        guard,
        steer,
    })
}

/// `--dry-run`: the plan, its findings and the steer wing's plan; `exec`,
/// the resolved command.
fn dry_run(
    req: &Request,
    (plan, findings, steer): (&Plan, &[Finding], Option<&SteerPlan>),
    exec: Option<&std::path::Path>,
    verdict: Option<&Error>,
) -> Result<Exit, Error> {
    // What the launch would refuse, the dry run refuses too.
    per_thread::check_thread_log(req, plan)?;
    if req.output.json {
        let mut v = report::plan_json(req, plan, findings, exec);
        crate::steer::report::add_json(&mut v, steer);
        // The command cannot be run here: its error in the one document.
        if let Some(e) = verdict {
            v["error"] = report::error_json(e)["error"].clone();
        }
        print_out(&format!("{v}\n"))?;
    } else {
        print_out(&report::plan_text(
            req,
            plan,
            findings,
            exec,
            &crate::steer::report::text(steer),
        ))?;
    }
    // --strict: the launch's refusal, on stderr after the whole plan, and
    // its exit status (a second JSON document would break `jq`).
    if let Some(e) = strict_refusal(req, findings) {
        crate::output::print_error(&e, false);
        return Ok(Exit::Failure);
    }
    Ok(Exit::Success)
}

/// Under `--strict`, the refusal of a launch with warnings among
/// `findings` (after `--allow`): exit 125, the codes named.
fn strict_refusal(req: &Request, findings: &[Finding]) -> Option<Error> {
    let warnings: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .collect();
    (req.output.strict && !warnings.is_empty()).then(|| {
        Error::new(
            ErrorCode::Strict,
            format!(
                "refusing to run under --strict: {}: {}",
                crate::words::count(warnings.len(), "warning"),
                crate::check::summarize_codes(warnings.iter().copied())
            ),
        )
        .hint("fix what the warnings say, accept known ones with --allow CODE[,CODE], or drop --strict")
    })
}

/// `--check`: the findings; exit 1 when one is a warning (info findings
/// are printed but do not fail).
fn check(req: &Request, findings: &[Finding]) -> Result<Exit, Error> {
    let text = if req.output.json {
        format!(
            "{}\n",
            serde_json::json!({"findings": report::findings_json(findings)})
        )
    } else if req.output.quiet {
        // --quiet: nothing printed; the exit status still says.
        String::new()
    } else if req.output.verbose {
        let mut s: String = findings.iter().map(report::finding_text).collect();
        s.push_str(&format!("{}\n", report::severity_counts(findings)));
        s
    } else {
        report::check_summary(findings)
    };
    print_out(&text)?;
    let warned = findings.iter().any(|f| f.severity == Severity::Warning);
    Ok(if warned {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// The `--pid` wing's launch ([`crate::pid::run::Launch`]): the core's
/// read scope, planning, checks and output, and the claims wing's guard.
struct PidLaunch;

impl crate::pid::run::Launch for PidLaunch {
    fn read(&self, root: &Root, req: &Request) -> SystemState {
        SystemState::read_scoped(root, &scope::for_request(req))
    }

    fn plan_and_check(
        &self,
        root: &Root,
        sys: SystemState,
        req: &Request,
    ) -> Result<crate::pid::run::Planned, Error> {
        let p = plan_and_check(root, sys, req, None)?;
        Ok(crate::pid::run::Planned {
            sys: p.sys,
            plan: p.plan,
            findings: p.findings,
            guard: p
                .guard
                .map(|g| Box::new(g) as Box<dyn crate::pid::run::Claim>),
            migration: None,
        })
    }

    fn dry_run(&self, req: &Request, p: &crate::pid::run::Planned) -> Result<Exit, Error> {
        dry_run(req, (&p.plan, &p.findings, None), None, None)
    }

    fn check(&self, req: &Request, p: &crate::pid::run::Planned) -> Result<Exit, Error> {
        check(req, &p.findings)
    }

    fn forget(&self, req: &Request, pid: u32, start: u64) {
        claims::forget(req, pid, start);
    }
}

impl crate::pid::run::Claim for claims::Guard {
    fn record(
        &mut self,
        plan: &Plan,
        (pid, start, uid): (u32, u64, u32),
        names: &[String],
    ) -> Result<PathBuf, Error> {
        self.claim_for(plan, pid, start, uid, names)
    }

    fn keep(&mut self) {
        claims::Guard::keep(self);
    }
}

/// `--emit`: the fleet wing's ([`fleet::emit`]), with the claims that
/// `--emit slurm N`'s tasks plan around.
fn emit(root: &Root, req: &Request, p: &Planned) -> Result<Exit, Error> {
    fleet::emit(req, &p.sys, &p.plan, &p.findings, || {
        with_others(root, &p.sys, |o| {
            claims::read_claims(root, &p.sys, req, false, o)
        })
        .map(|(c, _)| c)
    })
}

/// A launch: the warnings (or, under `--strict`, the refusal), then its
/// changes as one transaction ([`launch_steps`]), then exec. The text is
/// printed once the state directory's lock is released: right before
/// exec, or after a failure has been rolled back. Returns only on failure.
fn launch(
    root: &Root,
    req: &Request,
    mut p: Planned,
    command: Option<PathBuf>,
) -> Result<Exit, Error> {
    let mut text = launch_text(req, &mut p, command.as_deref());
    let guard = RefCell::new(p.guard.take());
    let steered = std::cell::Cell::new(false);
    let helper = match launch_steps(root, req, &p, &guard, &steered, &mut text) {
        Ok(helper) => helper,
        Err(e) => {
            // Rolled back: the record removed and the lock released.
            drop(guard);
            to_stderr(&text);
            return Err(e);
        }
    };
    // The record is written and the affinity set: other launches may
    // choose now (an exclusive reader sees this process on its CPUs).
    if let Some(g) = guard.borrow_mut().as_mut() {
        g.unlock();
    }
    to_stderr(&text);
    if let Some(w) = &helper
        && let Err(e) = apply::helper::about_to_exec(w, p.plan.thread_map.is_some())
    {
        return Err(per_thread::watcher_error(&e));
    }
    let env = p
        .plan
        .omp
        .as_ref()
        .and_then(|o| exec::environment(&o.set, &o.unset));
    let e = exec::exec(&command.unwrap_or_default(), &req.command, env.as_deref());
    // No command runs (126, 127): the steering is put back now, and said,
    // not left to the helper once pinrun has exited.
    match (steered.get(), p.steer.as_ref(), guard.borrow_mut().as_mut()) {
        (true, Some(sp), Some(g)) => Err(steering_put_back(g, sp, e)),
        _ => Err(e),
    }
}

/// "the IRQ steering off CPUs 2-3", the steering step's name.
fn steering_words(sp: &SteerPlan) -> String {
    format!(
        "the IRQ steering off {}",
        crate::words::cpus_phrase(&sp.cpus)
    )
}

/// The exec error `e` of a launch whose steering `sp` changed the host,
/// once that steering is undone under the state directory's lock taken
/// again ([`steer::undo_own`]), the outcome said as a failed transaction
/// says it.
fn steering_put_back(g: &mut claims::Guard, sp: &SteerPlan, mut e: Error) -> Error {
    let what = steering_words(sp);
    let clause = match g.relock() {
        Err(l) => format!(
            "{what} is left to the helper, which puts it back as pinrun exits: {}",
            l.message
        ),
        Ok(()) => match steer::undo_own(g.dir(), records_of) {
            Undone::Quiet => return e,
            Undone::PutBack => format!("{what} was put back"),
            Undone::PutBackWith(d) => format!("{what} was put back ({d})"),
            Undone::Failed(why) => format!("{what} could not be put back: {why}"),
        },
    };
    g.unlock();
    e.message = format!("{}; {clause}", e.message);
    e
}

/// A launch's changes, in order, as steps of one [`Transaction`], each
/// with its undo registered before it is made; a failure at any step
/// undoes the steps made, the last first, and its error says what was
/// put back ([`crate::apply::transaction::with_undo`]). Under the state
/// directory's lock (`guard`, held from planning):
///
/// 1. `--strict`'s refusal, before any change;
/// 2. the claim record (named in `text` with `--verbose`); undo: removed,
///    and the lock released (no one saw it);
/// 3. the helper ([`spawn_helper`]), armed before the first change to the
///    host: should pinrun die at any later point, it puts the IRQs back;
///    undo: none (it ends once pinrun has, undoing what is left);
/// 4. `--steer-irqs` ([`steer::launch`], journal first; its report joins
///    `text`); undo: [`steer::undo_own`];
/// 5. `--probe` on the claimed CPUs once their IRQs are steered (its
///    report in `text`; `--probe-max` may refuse), then the watcher's
///    descriptors handed to the helper ([`per_thread::hand_watcher_fds`]:
///    after the probe, whose threads its perf events would count);
///    neither changes anything;
/// 6. pinrun's memory policy, scheduling and affinity
///    ([`apply::apply_steps`]: [`apply::apply`]'s calls and order, the
///    affinity last except under SCHED_DEADLINE); undo: each put back.
///
/// Then committed, exec next. Returns the helper's socket; `steered` says
/// whether the steering changed anything.
fn launch_steps<'a>(
    root: &'a Root,
    req: &Request,
    p: &'a Planned,
    guard: &'a RefCell<Option<claims::Guard>>,
    steered: &'a std::cell::Cell<bool>,
    text: &mut String,
) -> Result<Option<std::os::fd::OwnedFd>, Error> {
    let mut tx = Transaction::new();
    if let Some(e) = strict_refusal(req, &p.findings) {
        return Err(e);
    }
    // Read once: a borrow held across a step would be the claim's undo's.
    let claimed = guard.borrow().is_some();
    if claimed {
        let record = tx.step(
            "the claim record",
            || {
                drop(guard.borrow_mut().take());
                Undone::Quiet
            },
            || {
                let mut g = guard.borrow_mut();
                g.as_mut().map(|g| g.claim(&p.plan, req)).transpose()
            },
        )?;
        if let (true, Some(record)) = (req.output.verbose, record) {
            text.push_str(&format!("pinrun: claimed in {}\n", record.display()));
        }
    }
    let helper = tx.step(
        "the helper",
        || Undone::Quiet,
        || spawn_helper(req, p, guard.borrow().as_ref()),
    )?;
    let mut pending = Vec::new();
    if let (true, Some(sp)) = (claimed, p.steer.as_ref()) {
        let (said, still) = tx.step(
            steering_words(sp),
            // Nothing moved: nothing to say was put back (the journal
            // goes all the same).
            || match guard.borrow().as_ref() {
                Some(g) => match steer::undo_own(g.dir(), records_of) {
                    Undone::PutBack if !steered.get() => Undone::Quiet,
                    u => u,
                },
                None => Undone::Quiet,
            },
            || match guard.borrow().as_ref() {
                Some(g) => steer::launch(g.dir(), sp, &p.sys, req.output.quiet).map(
                    |(said, still, changed)| {
                        steered.set(changed);
                        (said, still)
                    },
                ),
                None => Ok((String::new(), Vec::new())),
            },
        )?;
        text.push_str(&said);
        pending = still;
    }
    if req.probe.is_some() {
        tx.run(|| {
            let (report, gated) =
                probe::before_launch(root, req, &probed(p, &managed(p)), &pending);
            text.push_str(&report);
            gated
        })?;
    }
    if let Some(w) = &helper {
        tx.run(|| per_thread::hand_watcher_fds(req, &p.plan, w))?;
    }
    apply::apply_steps(&mut tx, &p.plan, &p.sys.possible, &|e| {
        explain_apply_error(root, p, e)
    })?;
    crate::steer::apply::crash_point("applied");
    tx.commit();
    Ok(helper)
}

/// The text a launch prints once the state directory's lock is released:
/// the claim's notice (taken from `p`'s guard), then the plan with every
/// finding with `--verbose`, else the launch's findings unless `--quiet`.
/// Nothing is printed while the lock is held (a blocked stderr would hold
/// every other --exclusive launch): the text waits until the lock is
/// released, right before exec or on failure.
fn launch_text(req: &Request, p: &mut Planned, command: Option<&std::path::Path>) -> String {
    let out = &req.output;
    let mut text = p
        .guard
        .as_mut()
        .map(|g| std::mem::take(&mut g.notice))
        .unwrap_or_default();
    if out.verbose {
        // The plan with every finding (info included), once.
        text.push_str(&report::plan_text(
            req,
            &p.plan,
            &p.findings,
            command,
            &crate::steer::report::text(p.steer.as_ref()),
        ));
    } else if !out.quiet {
        text.push_str(&report::launch_text(&p.plan, &p.findings));
    }
    text
}

/// The helper: one process for every duty that outlives exec (the
/// --thread-map watcher, then the steering's undo), forked before the
/// first change to the host and before any policy is applied (it keeps
/// pinrun's own policy and affinity). Its undo is armed before the
/// steering's journal exists: it waits on pinrun's pidfd from the start,
/// so pinrun's death at any step (SIGTERM from systemd, SIGHUP, SIGKILL,
/// a failed apply) puts the IRQs and irqbalance's ban back without
/// `--reclaim`. Returns its socket ([`apply::helper::spawn_duties`]),
/// `None` without duties. `guard`: the launch's claim (steering needs
/// one), taken out of `p` by [`launch`].
fn spawn_helper(
    req: &Request,
    p: &Planned,
    guard: Option<&claims::Guard>,
) -> Result<Option<std::os::fd::OwnedFd>, Error> {
    let steering = p.steer.is_some() && guard.is_some();
    let watcher = per_thread::watcher_duty(req, &p.plan, &p.sys.possible);
    let undo = match (steering, guard) {
        (true, Some(g)) => Some(steer::undo_duty(g.dir(), records_of)?),
        _ => None,
    };
    apply::helper::spawn_duties(&[], watcher, undo).map_err(|e| {
        if steering {
            steer::helper_error(&e)
        } else {
            per_thread::watcher_error(&e)
        }
    })
}

/// The launch's memory policy, scheduling and affinity calls made on a
/// throwaway thread: the error the launch would meet that nothing read can
/// predict (a seccomp filter or a security module refusing a call, issue
/// 33's break test D1), so that `--dry-run` and `--check` say what the
/// launch will. The thread sets its own memory policy (no call sets
/// another thread's), then waits while this thread sets its policy and
/// affinity by TID ([`apply::tid::apply_thread`], the launch's order
/// and calls) and puts them back, so that it never has to run on the
/// planned CPUs: a real-time thread there behind a busier real-time task
/// would never get to end. Not below `--sysroot` (the dump is another
/// machine), not for SCHED_DEADLINE (its admission would reserve
/// bandwidth, even briefly, that a concurrent launch may need; the planner
/// judges it from the bandwidth read), and not when the plan changes
/// nothing.
fn rehearse(root: &Root, req: &Request, p: &Planned) -> Option<Error> {
    let changes = p.plan.memory.is_some() || p.plan.sched.is_requested() || p.plan.cpus.is_some();
    if req.sysroot.is_some()
        || !changes
        || p.plan
            .sched
            .policy
            .is_some_and(crate::policy::Policy::is_deadline)
    {
        return None;
    }
    let possible = &p.sys.possible;
    let (to_main, from_thread) = std::sync::mpsc::channel();
    let (to_thread, from_main) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let memory = p
                .plan
                .memory
                .as_ref()
                .and_then(|m| apply::apply_memory(m.mode, &m.nodes).err());
            let tid = nix::unistd::gettid().as_raw() as u32;
            let _ = to_main.send((tid, memory));
            let _ = from_main.recv();
        });
        let (tid, memory) = from_thread.recv().ok()?;
        let saved = apply::tid::save(tid, possible).ok();
        let result = match memory {
            Some(e) => Err(e),
            None => apply::tid::apply_thread(tid, &p.plan, possible),
        };
        if let Some(saved) = &saved {
            let _ = apply::tid::restore(saved, possible);
        }
        let _ = to_thread.send(());
        result.err().map(|e| explain_apply_error(root, p, e))
    })
}

/// An apply failure with what can be read to explain it: a SCHED_DEADLINE
/// refusal (EBUSY: admission control) gets the bandwidth numbers, an EPERM
/// for the scheduling policy [`crate::check::rt::eperm_diagnosis`]'s hint,
/// from the RT group configuration read below `root`.
fn explain_apply_error(root: &Root, p: &Planned, mut e: Error) -> Error {
    // SCHED_DEADLINE admission control: the numbers that can be read.
    if e.errno() == Some(nix::errno::Errno::EBUSY)
        && let Some(bw) = p.plan.sched.policy.and_then(|pol| {
            let aff = p.plan.cpus.as_ref().or(p.sys.process.cpus_allowed.as_ref());
            crate::plan::sched::dl_bandwidth(&p.sys, pol, aff)
        })
    {
        e.message = format!("{}; {}", e.message, bw.words());
        return e;
    }
    if e.errno() == Some(nix::errno::Errno::EPERM) {
        // pinrun's own threads: never another user's.
        let me = std::process::id();
        e = e.explain_eperm(&crate::system::process::perm_facts(me, me));
    }
    if e.code != ErrorCode::SchedFailed || e.errno() != Some(nix::errno::Errno::EPERM) {
        return e;
    }
    let config = crate::system::cgroup::read_rt_group_config(root);
    match crate::check::rt::eperm_diagnosis(&p.sys, config) {
        Some(why) => e.hint(why),
        None => e,
    }
}

/// pinrun's own arguments (before `--`), lossily as text; never panics on
/// non-UTF-8 bytes, which belong to the command anyway.
fn pinrun_args() -> Vec<String> {
    std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect()
}

/// The machine a peer option's hint is for ([`crate::cli::PeerHost`]): the
/// `--sysroot` in `args` (a usage error came before clap read it), else
/// this host. Its nodes are its `nodeN` directories (node 0 alone on a kernel
/// without NUMA, as numactl(8) takes it); a PID runs when `/proc/PID/stat`
/// reads. An unreadable `--sysroot` knows neither: no node, no process.
fn peer_host_of(args: &[String]) -> crate::cli::PeerHost {
    let before: Vec<&String> = args.iter().take_while(|a| *a != "--").collect();
    let sysroot = before
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--sysroot") {
            Some("") => before.get(i + 1).map(|v| v.to_string()),
            Some(v) => v.strip_prefix('=').map(str::to_string),
            None => None,
        });
    let root = Root::sysroot(sysroot.as_deref().map(std::path::Path::new)).ok();
    let nodes: Option<Vec<u32>> = root.as_ref().map(|r| {
        let ids: Vec<u32> = crate::system::numa::read_nodes(r, false)
            .0
            .iter()
            .map(|n| n.id)
            .collect();
        if ids.is_empty() { vec![0] } else { ids }
    });
    let pids: Option<Root> = root;
    let is_node = Box::new(move |w: &str| {
        w.parse::<u32>()
            .is_ok_and(|n| nodes.as_ref().is_some_and(|s| s.contains(&n)))
    });
    let is_pid = Box::new(move |w: &str| {
        w.parse::<u32>().is_ok_and(|p| {
            pids.as_ref()
                .is_some_and(|r| r.read(&format!("/proc/{p}/stat")).is_some())
        })
    });
    crate::cli::PeerHost { is_node, is_pid }
}

/// The hint when a bare `--membind` (or numactl's `-m`) took the next word,
/// which is not a node list, as its value: the usual cause of a usage
/// error is `--membind COMMAND -flag` without `--`.
fn membind_swallowed_command() -> Option<String> {
    let args = pinrun_args();
    let i = args.iter().position(|a| a == "--membind" || a == "-m")?;
    let next = args.get(i + 1)?;
    (!next.starts_with('-') && crate::cpuset::CpuSet::parse(next).is_err()).then(|| {
        format!(
            "{} took '{next}' as its node list: write --membind=NODES, or put -- before the command",
            args[i]
        )
    })
}

/// `req` with the policy file's `allow`, `strict` and `state_dir` merged
/// in (pinrun(1) FILES): the allowed codes are the union; `strict` from
/// either; the command line's (or `PINRUN_STATE_DIR`'s) state directory
/// wins. Read from the host even under `--sysroot` (it is the user's
/// policy, [`crate::system::config`]).
fn with_policy_file(mut req: Request) -> Result<Request, Error> {
    use crate::system::config;
    let explicit = std::env::var_os("PINRUN_CONFIG").is_some_and(|v| !v.is_empty());
    let Some(loaded) = config::read(&config::candidates(|k| std::env::var_os(k)), explicit)? else {
        return Ok(req);
    };
    for word in &loaded.config.allow {
        let Some(codes) = crate::finding::Code::matching(word) else {
            return Err(Error::new(
                ErrorCode::BadConfig,
                format!(
                    "policy file {}: allow: \"{word}\" names no finding code",
                    loaded.path.display()
                ),
            )
            .hint(crate::finding::Code::unknown_hint(word)));
        };
        req.output.allow.extend(codes);
    }
    req.output.allow.sort_unstable();
    req.output.allow.dedup();
    req.output.strict |= loaded.config.strict;
    if req.claims.state_dir.is_none()
        && let Some(dir) = loaded.config.state_dir
    {
        let source = format!("policy file {}: state_dir", loaded.path.display());
        req.claims.state_dir = Some(crate::cli::absolute_state_dir(&source, dir)?);
    }
    req.output.config_file = Some(loaded.path);
    Ok(req)
}

/// Runs `pinrun` with this process's arguments: the exit status of a mode
/// (0, or 1 for `--check` with warnings), 125 for pinrun's own failures
/// and refusals, 126/127 when the command cannot be executed or found;
/// does not return when the command is exec'd (its status is then its own).
pub fn main() -> Exit {
    let parsed = crate::cli::command()
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                return match crate::output::print_clap(&e) {
                    Ok(()) => Exit::Success,
                    Err(err) => {
                        print_error(&err, false);
                        Exit::Failure
                    }
                };
            }
            let text = e.render().to_string();
            // clap's "tip:" becomes the hint, but for its "use '-- --x'",
            // which would run --x as a command.
            let tip = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("tip: "))
                .filter(|t| !t.starts_with("to pass '"))
                .map(str::to_string);
            let mut err = Error::new(
                ErrorCode::Usage,
                crate::cli::clap_message(&e, &std::env::args_os().skip(1).collect::<Vec<_>>()),
            )
            .hint(
                tip.or_else(|| crate::cli::usage_hint(&e))
                    .unwrap_or_else(|| "see pinrun --help".to_string()),
            );
            // The whole command line: the hint is the command to run.
            let all: Vec<String> = std::env::args_os()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            if let Some(hint) = e
                .get(clap::error::ContextKind::InvalidArg)
                .map(|v| v.to_string())
                .and_then(|a| crate::cli::peer_hint(&a, &all, &peer_host_of(&all)))
            {
                err = err.hint(hint);
            }
            if let Some(hint) = crate::cli::taskset_pid_hint(&pinrun_args()) {
                err = err.hint(hint);
            }
            if let Some(hint) = membind_swallowed_command() {
                err = err.hint(hint);
            }
            print_error(&err, pinrun_args().iter().any(|a| a == "--json"));
            return Exit::Failure;
        }
    };
    if let Some(what) = cli.generate {
        return generate(what);
    }
    if let Some(file) = &cli.dump {
        return match crate::dump::run::run(file, cli.sysroot.as_deref()) {
            Ok(()) => Exit::Success,
            Err(e) => {
                print_error(&e, false);
                e.exit
            }
        };
    }
    if cli.reclaim {
        let dir = crate::cli::state_dir_given(cli.state_dir.clone())
            .map(|d| d.unwrap_or_else(|| crate::system::state_dir::DEFAULT_STATE_DIR.into()));
        return match dir.and_then(|dir| steer::reclaim(&dir, records_of)) {
            Ok(()) => Exit::Success,
            Err(e) => {
                print_error(&e, false);
                e.exit
            }
        };
    }
    let json = cli.json;
    match cli.into_request().and_then(with_policy_file).and_then(run) {
        Ok(exit) => exit,
        Err(mut e) => {
            if e.code == ErrorCode::NoCommand
                && let Some(hint) = membind_swallowed_command()
            {
                e = e.hint(hint);
            }
            print_error(&e, json);
            e.exit
        }
    }
}
