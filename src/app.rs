//! The whole run of the `pinrun` command (DESIGN §1's flow): parse the
//! command line, read the machine, plan and check, then print the plan or
//! findings (`--dry-run`, `--check`, `--show`, `--emit`) or apply and exec.
//! Output goes through one stdout path ([`print_out`]); errors are
//! `pinrun: <what>: <why>` with a `hint:` line. `src/main.rs` only turns
//! [`main`]'s result into the process's exit status.

use crate::cli::{Cli, Generate};
use crate::error::{EXIT_FAILURE, Error};
use crate::request::{Mode, Request};
use crate::system::{Root, SystemState};
use crate::{apply, check, claims, exclusive, exec, plan, report};
use clap::{CommandFactory, Parser};
use std::io::Write;
use std::process::ExitCode;

/// Writes `text` to stdout. A reader that has gone away (`pinrun --show |
/// head -1`) ends pinrun by SIGPIPE, silently, as it ends other tools
/// (when the caller ignored SIGPIPE, it is an error like any other write
/// error: pinrun's own failure, exit 125).
fn print_out(text: &str) -> Result<(), Error> {
    print_out_with(|out| out.write_all(text.as_bytes()))
}

/// [`print_out`] for output written piece by piece (`--show --json`).
fn print_out_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Error> {
    if apply::std_fd_closed_at_start(1) {
        return Err(stdout_failed(std::io::Error::from_raw_os_error(
            libc::EBADF,
        )));
    }
    let mut out = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(stdout_failed)
}

/// A failed write to stdout: death by SIGPIPE for a pipe without a reader
/// (unless the caller ignores SIGPIPE), else pinrun's own failure.
fn stdout_failed(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe && !apply::sigpipe_ignored_at_start() {
        apply::die_by_sigpipe();
    }
    Error::new("io", format!("writing stdout: {e}"))
}

/// The error on stderr (first, so that a stdout without a reader cannot
/// lose it), and with `--json` as `{"error": ...}` on stdout.
fn print_error(e: &Error, json: bool) {
    {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "pinrun: {}", e.message);
        if let Some(h) = &e.hint {
            let _ = writeln!(err, "hint: {h}");
        }
    }
    if json {
        let _ = print_out(&format!("{}\n", report::error_json(e)));
    }
}

/// pinrun(1): clap_mangen's generated sections plus the hand-written ones.
fn render_man(cmd: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(cmd);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    out.write_all(crate::manual::SECTIONS.as_bytes())?;
    man.render_version_section(out)
}

fn generate(what: Generate) -> ExitCode {
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
    match print_out(&String::from_utf8_lossy(&buf)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            print_error(&e, false);
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Runs the request; returns the exit status for the modes, or never
/// returns when the command is exec'd.
fn run(req: Request) -> Result<u8, Error> {
    let resolved = if req.mode == Mode::Run {
        Some(exec::resolve(&req.command[0])?)
    } else {
        None
    };
    let root = Root::new(req.sysroot.clone().unwrap_or_else(|| "/".into()));
    if !root.exists("/sys/devices/system/cpu") {
        return Err(Error::new(
            "sysroot-missing",
            format!(
                "--sysroot: {}: not a machine dump (no sys/devices/system/cpu below it)",
                root.base().display()
            ),
        )
        .hint("point --sysroot at a directory laid out like / with sys/ and proc/"));
    }
    let mut sys = SystemState::read_scoped(&root, &crate::system::Scope::for_request(&req));
    if let Some(e) = sys.read_error.take() {
        return Err(e);
    }
    let out = req.output.clone();
    if req.mode == Mode::Show {
        let (claims, _) = exclusive::read_claims(&root, &req, false)?;
        let live = req.sysroot.is_none().then(|| exclusive::state_dir(&req));
        if out.json {
            let mut claims_json = serde_json::json!({});
            report::add_claims_json(&mut claims_json, &claims, exclusive::now());
            print_out_with(|w| report::write_show_json(&sys, claims_json, w))?;
        } else {
            print_out(&crate::show::text(&sys, out.verbose))?;
            print_out(&report::claims_text(
                &claims,
                exclusive::now(),
                live.as_deref(),
            ))?;
        }
        return Ok(0);
    }
    // Claims (issue 5): `guard` holds the state directory's lock and, once
    // written, this launch's record; dropping it on failure removes both.
    let (plan, claims, mut guard) = exclusive::plan(&root, &sys, &req)?;
    sys.read_extras_for(&root, &req, &check::checked_cpus(&sys, &plan));
    if let Some(e) = sys.read_error.take() {
        return Err(e);
    }
    let mut findings = check::check(&sys, &req, &plan);
    let inherited = sys.process.cpus_allowed.as_ref().unwrap_or(&sys.allowed);
    findings.extend(claims::findings(
        &claims,
        &plan,
        &inherited.intersection(&sys.allowed),
    ));
    check::accept(&mut findings, &out.allow);
    match req.mode {
        Mode::Emit => {
            print_out(&crate::emit::systemd(
                &req,
                &plan,
                &findings,
                &invocation_without_emit(),
            ))?;
            return Ok(0);
        }
        Mode::DryRun => {
            if out.json {
                print_out(&format!("{}\n", report::plan_json(&req, &plan, &findings)))?;
            } else {
                print_out(&report::plan_text(&req, &plan, &findings))?;
            }
            return Ok(0);
        }
        Mode::Check => {
            let text = if out.json {
                format!(
                    "{}\n",
                    serde_json::json!({"findings": report::findings_json(&findings)})
                )
            } else if findings.is_empty() {
                "no findings\n".to_string()
            } else {
                findings.iter().map(report::finding_text).collect()
            };
            print_out(&text)?;
            // Clean means no warning; info findings are printed but do not fail.
            return Ok(u8::from(
                findings
                    .iter()
                    .any(|f| f.severity == check::Severity::Warning),
            ));
        }
        _ => {}
    }
    let warnings: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == check::Severity::Warning)
        .collect();
    if out.verbose {
        // The plan with every finding (info included), once.
        report::to_stderr(&report::plan_text(&req, &plan, &findings));
    } else if !out.quiet {
        let mut err = std::io::stderr().lock();
        for f in findings
            .iter()
            .filter(|f| f.severity == check::Severity::Warning)
        {
            let _ = write!(err, "pinrun: {}", report::finding_text(f));
        }
    }
    if out.strict && !warnings.is_empty() {
        return Err(Error::new(
            "strict",
            format!(
                "refusing to run under --strict: {} warning(s): {}",
                warnings.len(),
                check::summarize_codes(warnings.iter().copied())
            ),
        )
        .hint("fix what the warnings say, accept known ones with --allow CODE[,CODE], or drop --strict"));
    }
    if let Some(g) = guard.as_mut() {
        let record = g.claim(&plan, &req)?;
        if out.verbose {
            report::to_stderr(&format!("pinrun: claimed in {}\n", record.display()));
        }
    }
    apply::apply(&plan, &sys.possible).map_err(|e| {
        if e.code != "sched-failed" || !e.message.contains("EPERM") {
            return e;
        }
        sys.rt_group.config = crate::system::cgroup::read_rt_group_config(&root);
        match plan::rt_eperm_diagnosis(&sys) {
            Some(why) => e.hint(why),
            None => e,
        }
    })?;
    let path = resolved.unwrap_or_default();
    Err(exec::exec(&path, &req.command))
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

/// This pinrun's command line without `--emit FORMAT` and `--sysroot DIR`,
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
        // --emit and --sysroot describe this run, not the service's.
        if !in_command && (a == "--emit" || a == "--sysroot") {
            args.next();
            continue;
        }
        if !in_command && (a.starts_with("--emit=") || a.starts_with("--sysroot=")) {
            continue;
        }
        in_command |= a == "--";
        out.push(a);
    }
    out
}

/// The word after a bare `--membind` when it is not a node list: the usual
/// cause of a usage error is `--membind COMMAND -flag` without `--`.
fn membind_swallowed_command() -> Option<String> {
    let args = pinrun_args();
    let i = args.iter().position(|a| a == "--membind")?;
    let next = args.get(i + 1)?;
    (!next.starts_with('-') && crate::cpuset::CpuSet::parse(next).is_err()).then(|| next.clone())
}

/// Runs `pinrun` with this process's arguments: the exit status of a mode
/// (0, or 1 for `--check` with warnings), 125 for pinrun's own failures
/// and refusals, 126/127 when the command cannot be executed or found;
/// does not return when the command is exec'd (its status is then its own).
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let res = if apply::std_fd_closed_at_start(1) {
                    Err(std::io::Error::from_raw_os_error(libc::EBADF))
                } else {
                    e.print()
                };
                return match res.map_err(stdout_failed) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(err) => {
                        print_error(&err, false);
                        ExitCode::from(EXIT_FAILURE)
                    }
                };
            }
            let text = e.render().to_string();
            // clap's body up to "Usage:", on one line; its "tip:" becomes the hint.
            let body: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:"))
                .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                .collect();
            let message: Vec<&str> = body
                .iter()
                .copied()
                .filter(|l| !l.starts_with("tip: "))
                .collect();
            let tip = body.iter().find_map(|l| l.strip_prefix("tip: "));
            let message = message
                .join(" ")
                .replace("invalid digit found in string", "expected a whole number");
            let mut err = Error::new("usage", message.trim_start_matches("error: ").to_string())
                .hint(tip.map_or_else(|| "see pinrun --help".to_string(), str::to_string));
            if let Some(word) = membind_swallowed_command() {
                err = err.hint(format!(
                    "--membind took '{word}' as its node list: write --membind=NODES, or put -- before the command"
                ));
            }
            print_error(&err, pinrun_args().iter().any(|a| a == "--json"));
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    if let Some(what) = cli.generate {
        return generate(what);
    }
    let json = cli.json;
    match cli.into_request().and_then(run) {
        Ok(code) => ExitCode::from(code),
        Err(mut e) => {
            if e.code == "no-command"
                && let Some(word) = membind_swallowed_command()
            {
                e = e.hint(format!(
                    "--membind took '{word}' as its node list: write --membind=NODES, or put -- before the command"
                ));
            }
            print_error(&e, json);
            ExitCode::from(e.exit)
        }
    }
}
