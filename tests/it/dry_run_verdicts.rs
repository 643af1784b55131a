//! What the launch would refuse, predicted by `--dry-run` and `--check`
//! from what is readable (issue 14 class 2): the field case
//! `deadline-period-limits` (`__checkparam_dl()`'s period bounds) and the
//! command's resolution (exit 126/127 with the launch's message).

use crate::common;

/// The field case: `sched_deadline_period_{min,max}_us` = 100 and 4194304;
/// a 5 s period and a 50 µs period are refused (the kernel answers EINVAL),
/// naming the sysctl and its value, with the same code in `--dry-run` and
/// `--check`; the bounds' inside is approved.
#[test]
fn field_case_deadline_period_limits() {
    let case = common::field_case("deadline-period-limits");
    for (args, sysctl) in [
        (
            ["--sched-runtime", "10ms", "--sched-period", "5s"],
            "kernel.sched_deadline_period_max_us = 4194304",
        ),
        (
            ["--sched-runtime", "20us", "--sched-period", "50us"],
            "kernel.sched_deadline_period_min_us = 100",
        ),
    ] {
        for mode in ["--dry-run", "--check"] {
            let mut all = vec![mode, "--json", "--deadline", "--reset-on-fork"];
            all.extend(args);
            let out = common::at(&case, &all);
            common::assert_status(&out, 125);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            assert_eq!(v["error"]["code"], "deadline-period", "{args:?}");
            let msg = v["error"]["message"].as_str().unwrap();
            assert!(msg.contains(sysctl), "{msg}");
            assert!(msg.contains("EINVAL"), "{msg}");
            assert!(
                v["error"]["hint"]
                    .as_str()
                    .unwrap()
                    .contains("100us to 4194304us"),
                "{v}"
            );
        }
    }
    let ok = common::at(
        &case,
        &[
            "--dry-run",
            "--deadline",
            "--sched-runtime",
            "20us",
            "--sched-period",
            "100us",
            "--reset-on-fork",
        ],
    );
    common::assert_status(&ok, 0);
}

/// The command is resolved by `--dry-run` and `--check` as by the launch:
/// the same exit status (127 not found, 126 not executable) and message;
/// `--json` names the file that would be executed, the one `sh`'s
/// `command -v` finds (the peer). Under `--sysroot` it is not resolved.
#[test]
fn dry_run_resolves_the_command_as_the_launch() {
    let dir = common::tempdir();
    let script = dir.path().join("not-executable");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let script = script.to_str().unwrap();
    for (cmd, status) in [("nosuchcmd-pinrun-test", 127), (script, 126), (".", 126)] {
        let launch = common::pinrun().args(["--", cmd]).output().unwrap();
        common::assert_status(&launch, status);
        for mode in ["--dry-run", "--check"] {
            let dry = common::pinrun().args([mode, "--", cmd]).output().unwrap();
            common::assert_status(&dry, status);
            assert_eq!(
                String::from_utf8_lossy(&dry.stderr),
                String::from_utf8_lossy(&launch.stderr),
                "{mode} {cmd}"
            );
        }
    }
    let peer = std::process::Command::new("sh")
        .args(["-c", "command -v env"])
        .output()
        .unwrap();
    let want = String::from_utf8_lossy(&peer.stdout).trim().to_string();
    let out = common::pinrun()
        .args(["--dry-run", "--json", "--", "env"])
        .output()
        .unwrap();
    common::assert_status(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exec"], serde_json::json!(want));
    // A dump holds no programs: not resolved, "exec": null.
    let case = common::field_case("deadline-period-limits");
    let out = common::at(
        &case,
        &["--dry-run", "--json", "--", "nosuchcmd-pinrun-test"],
    );
    common::assert_status(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exec"], serde_json::Value::Null);
}

/// A script's `#!` interpreter as `execve(2)` takes it (fs/binfmt_script.c
/// `load_script()`, fs/exec.c `exec_binprm()`): `--dry-run` and `--check`
/// give the launch's exit status and message, and the kernel's errno (the
/// peer: `Command::spawn`, which calls execve) is the one named. Missing
/// interpreter (ENOENT, 127), one without execute permission or a
/// directory (EACCES, 126), a chain of six scripts (ELOOP, 126) and of
/// five (runs); a `#!` line longer than BINPRM_BUF_SIZE without a space
/// (ENOEXEC: run by /bin/sh, as execvp(3) does), spaces around the
/// interpreter, and a binary run.
#[test]
fn dry_run_predicts_the_scripts_interpreter() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::tempdir();
    let d = dir.path();
    let script = |name: &str, text: &str| {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.to_str().unwrap().to_string()
    };
    let plain = d.join("plain-interp");
    std::fs::write(&plain, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    // s0 -> s1 -> ... -> s5 -> /bin/sh: six scripts.
    for k in (0..6).rev() {
        let next = if k == 5 {
            "/bin/sh".to_string()
        } else {
            d.join(format!("s{}", k + 1)).display().to_string()
        };
        script(&format!("s{k}"), &format!("#!{next}\nexit 0\n"));
    }
    let long = format!("#!/{}\nexit 0\n", "a".repeat(300));
    let cases: Vec<(String, i32, Option<nix::errno::Errno>)> = vec![
        (
            script("missing", "#!/nonexistent/interp\necho hi\n"),
            127,
            Some(nix::errno::Errno::ENOENT),
        ),
        (
            script("missing-arg", "#! /nonexistent/interp -e\n"),
            127,
            Some(nix::errno::Errno::ENOENT),
        ),
        (
            script("dir", &format!("#!{}\n", d.display())),
            126,
            Some(nix::errno::Errno::EACCES),
        ),
        (
            script("noexec", &format!("#!{}\n", plain.display())),
            126,
            Some(nix::errno::Errno::EACCES),
        ),
        (
            d.join("s0").display().to_string(),
            126,
            Some(nix::errno::Errno::ELOOP),
        ),
        (d.join("s1").display().to_string(), 0, None),
        (script("long", &long), 0, Some(nix::errno::Errno::ENOEXEC)),
        (script("spaces", "#! \t/bin/sh \t-e \t\nexit 0\n"), 0, None),
        ("/bin/true".to_string(), 0, None),
    ];
    for (cmd, status, errno) in cases {
        let peer = std::process::Command::new(&cmd).status();
        match errno {
            Some(e) => assert_eq!(
                peer.as_ref().err().and_then(|x| x.raw_os_error()),
                Some(e as i32),
                "{cmd}: {peer:?}"
            ),
            None => assert!(peer.unwrap().success(), "{cmd}"),
        }
        let launch = common::pinrun().args(["--", &cmd]).output().unwrap();
        common::assert_status(&launch, status);
        // A script whose interpreter fails names the interpreter (a new
        // user's trial: "the file, its interpreter or a library").
        let named = match cmd.rsplit('/').next() {
            Some("missing" | "missing-arg") => {
                Some("/nonexistent/interp (the #! line) does not exist")
            }
            Some("dir" | "noexec") => Some("(the #! line) is not an executable regular file"),
            _ => None,
        };
        if let Some(words) = named {
            let err = String::from_utf8_lossy(&launch.stderr);
            assert!(
                err.contains("its interpreter ") && err.contains(words),
                "{cmd}: {err}"
            );
            assert!(
                err.contains("hint: ") && err.contains("#!/path/to/interpreter"),
                "{cmd}: {err}"
            );
        }
        for mode in ["--dry-run", "--check"] {
            let dry = common::pinrun().args([mode, "--", &cmd]).output().unwrap();
            if status == 0 {
                assert!(
                    dry.status.code() == Some(0) || mode == "--check",
                    "{mode} {cmd}: {dry:?}"
                );
                assert!(
                    dry.stderr.is_empty() || mode == "--check",
                    "{mode} {cmd}: {dry:?}"
                );
            } else {
                common::assert_status(&dry, status);
                assert_eq!(
                    String::from_utf8_lossy(&dry.stderr),
                    String::from_utf8_lossy(&launch.stderr),
                    "{mode} {cmd}"
                );
            }
        }
    }
}

/// `--strict`: a dry run whose launch would be refused prints its whole
/// plan (text: the "strict:" line; JSON: one document with
/// `"strict_refusal": true`), then the launch's refusal on stderr, and
/// exits 125 as the launch does; with the warnings `--allow`ed it exits 0.
/// Live, the dry run's refusal is the launch's, word for word.
#[test]
fn strict_dry_run_exits_as_the_launch() {
    let m = common::machine("cadvisor/epyc7402");
    let args = ["--dry-run", "--cpus", "1", "--fifo", "99", "--strict"];
    let out = common::at(&m, &args);
    common::assert_status(&out, 125);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("strict:  the launch would be refused"),
        "{text}"
    );
    assert!(text.contains("[rt-priority-99]"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("pinrun: refusing to run under --strict: ")
            && err.contains("rt-priority-99"),
        "{err}"
    );
    let mut json = args.to_vec();
    json.push("--json");
    let out = common::at(&m, &json);
    common::assert_status(&out, 125);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["strict_refusal"], true);
    let mut allowed = args.to_vec();
    allowed.extend(["--allow", "all"]);
    common::assert_status(&common::at(&m, &allowed), 0);
    // Live: the launch's refusal (root: the plan grants --fifo 99).
    let live = ["--cpus", "0", "--fifo", "99", "--strict"];
    let launch = common::pinrun()
        .args(live)
        .args(["--", "true"])
        .output()
        .unwrap();
    let dry = common::pinrun()
        .args(live)
        .args(["--dry-run", "--", "true"])
        .output()
        .unwrap();
    common::assert_status(&launch, 125);
    common::assert_status(&dry, 125);
    let tail = |o: &std::process::Output| {
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        let lines: Vec<&str> = e.lines().collect();
        lines[lines.len().saturating_sub(2)..].join("\n")
    };
    assert_eq!(tail(&dry), tail(&launch));
}

/// A plan the planner refuses and a command that is not there: the
/// plan's refusal is the first fault (README, "Exit status": "In every
/// mode, 125 when the plan itself is refused"), so the launch, the dry run
/// and `--check` all exit 125 and say the plan's refusal first, the
/// command's after it; `--json`'s one error document is the plan's
/// (`cpu-not-found`: CPU 4095 is past any machine this test runs on).
/// (A new user's trials: first the dry run said only the plan's error;
/// then the launch hid it behind "command not found", exit 127.) A plan
/// that stands leaves the command's own status, 127.
#[test]
fn a_missing_command_and_a_refused_plan_exit_125_in_every_mode() {
    let run = |mode: &[&str], cpus: &str| {
        let mut c = crate::common::pinrun();
        c.args(mode)
            .args(["--cpus", cpus, "--", "./no-such-program-here"])
            .output()
            .unwrap()
    };
    for mode in [&[][..], &["--dry-run"], &["--check"]] {
        let out = run(mode, "4095");
        assert_eq!(out.status.code(), Some(125), "{mode:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let plan = err
            .find("pinrun: --cpus: CPU 4095")
            .expect("the plan's refusal");
        let cmd = err
            .find("pinrun: ./no-such-program-here: command not found")
            .expect("the command's");
        assert!(plan < cmd, "{mode:?}: {err}");
        // The plan stands: the command's status, as execvp(3) leaves it.
        assert_eq!(run(mode, "0").status.code(), Some(127), "{mode:?}");
    }
    for mode in ["--dry-run", "--check"] {
        let out = run(&[mode, "--json"], "4095");
        assert_eq!(out.status.code(), Some(125), "{mode}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
        assert_eq!(v["error"]["code"], "cpu-not-found", "{mode}: {v}");
    }
}
