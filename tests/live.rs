//! Live tests on this machine: pinrun applies policies to the command it
//! execs (a child of the test), and the command reads back what the kernel
//! says from /proc/self/status, /proc/self/stat, /proc/self/sched and
//! /proc/self/numa_maps. Nothing on the host is changed.

mod common;
use common::{Outcome, assert_status, at, is_root, pinrun, stat_field};
use predicates::prelude::*;
use std::os::unix::ffi::OsStrExt;

fn run_stdout(args: &[&str]) -> String {
    let out = pinrun().args(args).output().expect("run");
    assert!(
        out.status.success(),
        "{args:?}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

/// The lowest-numbered online CPU and the highest, from sysfs.
fn online() -> pinrun::cpuset::CpuSet {
    let t = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    pinrun::cpuset::CpuSet::parse_sysfs_list(&t, None).unwrap()
}

#[test]
fn cpus_sets_affinity() {
    let last = online().last().unwrap().to_string();
    let out = run_stdout(&[
        "--cpus",
        &last,
        "--",
        "grep",
        "Cpus_allowed_list",
        "/proc/self/status",
    ]);
    assert_eq!(out, format!("Cpus_allowed_list:\t{last}\n"));
}

/// `--cores 1` on node 0 takes the lowest-numbered thread of the first core
/// listed in node0/cpulist (the kernel's own lists, read here).
#[test]
fn cores_on_node_0() {
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
    let first = pinrun::cpuset::CpuSet::parse_sysfs_list(&node0, None)
        .unwrap()
        .first()
        .unwrap();
    let out = run_stdout(&[
        "--node",
        "0",
        "--cores",
        "1",
        "--",
        "grep",
        "Cpus_allowed_list",
        "/proc/self/status",
    ]);
    assert_eq!(out, format!("Cpus_allowed_list:\t{first}\n"));
}

/// The acceptance command: one CPU, SCHED_FIFO 10, bind:0.
#[test]
fn fifo_membind_acceptance() {
    if !is_root() {
        common::skip("SCHED_FIFO needs root here");
        return;
    }
    let out = run_stdout(&[
        "--node",
        "0",
        "--cores",
        "1",
        "--fifo",
        "10",
        "--membind",
        "--",
        "sh",
        "-c",
        "grep Cpus_allowed_list /proc/self/status; chrt -p $$; grep -m1 -o 'bind:[0-9,-]*' /proc/self/numa_maps",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Cpus_allowed_list:\t0");
    assert!(
        lines[1].ends_with("current scheduling policy: SCHED_FIFO"),
        "{out}"
    );
    assert!(
        lines[2].ends_with("current scheduling priority: 10"),
        "{out}"
    );
    assert_eq!(lines[3], "bind:0");
}

#[test]
fn scheduling_policies_read_back() {
    // The tests' own nice value (they may run under `nice`): kept when no
    // --nice is given; the --nice values are above it (an unprivileged
    // caller may only lower its priority).
    let own = stat_field(&std::fs::read_to_string("/proc/self/stat").unwrap(), 19);
    let (n5, n7) = ((own + 5).min(19), (own + 7).min(19));
    let (n5s, n7s) = (n5.to_string(), n7.to_string());
    // (options, policy number from sched(7)/proc(5) field 41, rt_priority field 40, nice field 19)
    let mut cases: Vec<(Vec<&str>, i64, i64, i64)> = vec![
        (vec!["--batch"], 3, 0, own),
        (vec!["--idle"], 5, 0, own),
        (vec!["--other", "--nice", &n5s], 0, 0, n5),
        (vec!["--nice", &n7s], 0, 0, n7),
    ];
    if is_root() {
        cases.push((vec!["--fifo", "10"], 1, 10, own));
        cases.push((vec!["--rr", "98"], 2, 98, own));
    }
    for (opts, policy, prio, nice) in cases {
        let mut args = opts.clone();
        args.extend(["--", "cat", "/proc/self/stat"]);
        let stat = run_stdout(&args);
        assert_eq!(stat_field(&stat, 41), policy, "{opts:?} policy");
        assert_eq!(stat_field(&stat, 40), prio, "{opts:?} rt_priority");
        assert_eq!(stat_field(&stat, 19), nice, "{opts:?} nice");
    }
}

/// SCHED_RESET_ON_FORK: the exec'd process keeps SCHED_FIFO with the flag;
/// its child starts as SCHED_OTHER.
#[test]
fn reset_on_fork_read_back() {
    if !is_root() {
        common::skip("needs root");
        return;
    }
    let out = run_stdout(&[
        "--fifo",
        "5",
        "--reset-on-fork",
        "--",
        "sh",
        "-c",
        "chrt -p $$; cut -d' ' -f41 /proc/self/stat",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].ends_with("policy: SCHED_FIFO|SCHED_RESET_ON_FORK"),
        "{out}"
    );
    assert!(lines[1].ends_with("priority: 5"), "{out}");
    assert_eq!(lines[2], "0", "child policy");
}

/// SCHED_DEADLINE, read back by `chrt -p` (sched_getattr) from outside,
/// since a deadline task cannot fork.
#[test]
fn deadline_read_back() {
    if !is_root() {
        common::skip("needs root");
        return;
    }
    let _bw = deadline_lock();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinrun"))
        .args([
            "--deadline",
            "--sched-runtime",
            "1ms",
            "--sched-period",
            "10ms",
            "--",
            "sleep",
            "2",
        ])
        // Its warnings (not isolated, IRQs, deadline-cannot-fork) are
        // captured, and shown only when the test fails.
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let mut text = String::new();
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = std::process::Command::new("chrt")
            .args(["-p", &pid])
            .output()
            .unwrap();
        text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.contains("SCHED_DEADLINE") {
            break;
        }
    }
    child.kill().ok();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("current scheduling policy: SCHED_DEADLINE"),
        "{text}\n{err}"
    );
    assert!(
        text.contains("runtime/deadline/period parameters: 1000000/10000000/10000000"),
        "{text}"
    );
}

/// Memory policies as numa_maps spells them (mm/mempolicy.c `policy_modes`).
#[test]
fn memory_policies_read_back() {
    for (opt, want) in [
        ("--membind=0", "bind:0"),
        ("--preferred=0", "prefer:0"),
        ("--interleave=all", "interleave:0"),
        ("--localalloc", "local"),
    ] {
        let out = run_stdout(&[
            opt,
            "--",
            "sh",
            "-c",
            "head -1 /proc/self/numa_maps | cut -d' ' -f2",
        ]);
        assert_eq!(out.trim(), want, "{opt}");
    }
}

#[test]
fn exit_statuses() {
    pinrun()
        .args(["--cpus", "0", "--", "sh", "-c", "exit 7"])
        .assert()
        .code(7);
    pinrun()
        .args(["--cpus", "0", "--", "no-such-command-xyz"])
        .assert()
        .code(127)
        .stderr("pinrun: no-such-command-xyz: command not found\nhint: check the name, give a path (./app), or extend PATH\n");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("not-exec");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    pinrun()
        .arg("--")
        .arg(&script)
        .assert()
        .code(126)
        .stderr(predicate::str::contains("permission denied"))
        .stderr(predicate::str::contains(format!(
            "\nhint: make it executable (chmod +x {})",
            script.display()
        )));
    pinrun()
        .arg("--")
        .arg(dir.path())
        .assert()
        .code(126)
        .stderr(predicate::str::contains("is a directory"))
        .stderr(predicate::str::contains(
            "\nhint: give the program inside it, not the directory",
        ));
    // Killed by a signal: the status is the shell's, since pinrun is the same process.
    let st = pinrun()
        .args(["--", "sh", "-c", "kill -TERM $$"])
        .output()
        .unwrap()
        .status;
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(st.signal(), Some(15));
}

/// Every refusal: exit 125, one `pinrun:` line (+ hint), and the command
/// never runs (it would create a marker file).
#[test]
fn bad_input_refuses_without_running() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let m = marker.to_str().unwrap();
    let nonexistent = (online().last().unwrap() + 1).to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--cpus", &nonexistent], "does not exist"),
        (vec!["--cpus", "0-"], "expected a number after '-'"),
        (vec!["--cpus", "3-1"], "reversed"),
        (vec!["--cpus", "0-3:0"], "at least 1"),
        (vec!["--cpus", "0,,1"], "expected a number"),
        (vec!["--cpus", "0,"], "trailing comma"),
        (vec!["--node", "7"], "node 7 not found"),
        (vec!["--membind=7"], "node 7 not found"),
        (vec!["--cores", "1000"], "whole core"),
        (vec!["--fifo", "0"], "outside 1-99"),
        (vec!["--rr", "100"], "outside 1-99"),
        (vec!["--nice", "20"], "outside -20..19"),
        (
            vec![
                "--deadline",
                "--sched-runtime",
                "5ms",
                "--sched-period",
                "1ms",
            ],
            "runtime <= deadline <= period",
        ),
        (vec!["--deadline", "--sched-runtime", "5"], "needs a unit"),
        (
            vec![
                "--cpus",
                "0",
                "--deadline",
                "--sched-runtime",
                "1ms",
                "--sched-period",
                "10ms",
            ],
            "narrower than its root domain",
        ),
        (vec!["--bogus-option"], "unexpected argument"),
        (
            vec!["--membind", "sh", "-c"],
            "--membind took 'sh' as its node list",
        ),
        (vec!["--interleave", "al"], "or all"),
    ];
    for (opts, msg) in cases {
        let mut args = opts.clone();
        args.extend(["--", "touch", m]);
        let out = pinrun().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{opts:?}: {err}");
        assert!(
            err.starts_with("pinrun: ") && err.contains(msg),
            "{opts:?}: {err}"
        );
        assert!(err.lines().count() <= 2, "{opts:?}: {err}");
        assert!(!marker.exists(), "{opts:?} ran the command");
    }
}

#[test]
fn json_error_is_one_object_on_stdout() {
    let out = pinrun()
        .args(["--dry-run", "--json", "--cpus", "4096"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "cpu-not-found");
}

/// Exec in place: same PID, arguments passed through byte for byte
/// (including non-UTF-8), environment untouched.
#[test]
fn exec_in_place_passes_everything_through() {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinrun"))
        .args(["--cpus", "0", "--", "sh", "-c", "echo $$"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), pid.to_string());

    let arg = std::ffi::OsStr::from_bytes(b"a\xffb --cpus");
    let out = pinrun()
        .args(["--cpus", "0", "--", "printf", "%s"])
        .arg(arg)
        .env("PINRUN_TEST_VAR", "kept")
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"a\xffb --cpus");
    let out = pinrun()
        .args(["--", "sh", "-c", "echo $PINRUN_TEST_VAR"])
        .env("PINRUN_TEST_VAR", "kept")
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"kept\n");
}

/// The affinity pinrun inherits does not limit it: under `taskset -c 0`,
/// `--cpus 1` is still allowed by the cgroup cpuset.
#[test]
fn inherited_affinity_is_not_the_limit() {
    let set = online();
    if set.len() < 2 || !std::path::Path::new("/usr/bin/taskset").exists() {
        common::skip("needs 2 CPUs and taskset");
        return;
    }
    let last = set.last().unwrap().to_string();
    let out = std::process::Command::new("taskset")
        .args(["-c", &set.first().unwrap().to_string()])
        .arg(assert_cmd::cargo::cargo_bin("pinrun"))
        .args([
            "--cpus",
            &last,
            "--",
            "grep",
            "Cpus_allowed_list",
            "/proc/self/status",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Cpus_allowed_list:\t{last}\n")
    );
}

/// The inherited affinity bounds the choice (issue 14): under `taskset -c
/// LAST`, `--cores 1` runs on LAST, as `numactl`/libnuma choose inside the
/// caller's mask; `--within cgroup` chooses across the cgroup's CPUs (the
/// lowest whole core, as without taskset). Read back by the command itself.
#[test]
fn cores_choose_inside_the_inherited_affinity() {
    let set = online();
    if set.len() < 2 || !std::path::Path::new("/usr/bin/taskset").exists() {
        common::skip("needs 2 CPUs and taskset");
        return;
    }
    // A whole core: on an SMT machine a single thread is not one.
    let last = set.last().unwrap();
    let core = std::fs::read_to_string(format!(
        "/sys/devices/system/cpu/cpu{last}/topology/thread_siblings_list"
    ))
    .map(|t| t.trim().to_string())
    .unwrap_or_else(|_| last.to_string());
    let under_taskset = |extra: &[&str]| {
        let out = std::process::Command::new("taskset")
            .args(["-c", &core])
            .arg(assert_cmd::cargo::cargo_bin("pinrun"))
            .args(["--cores", "1", "--quiet"])
            .args(extra)
            .args(["--", "grep", "Cpus_allowed_list", "/proc/self/status"])
            .output()
            .unwrap();
        assert_status(&out, 0);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first_of_core = core.split([',', '-']).next().unwrap().to_string();
    assert_eq!(
        under_taskset(&[]),
        format!("Cpus_allowed_list:\t{first_of_core}\n")
    );
    let plain = run_stdout(&[
        "--cores",
        "1",
        "--quiet",
        "--",
        "grep",
        "Cpus_allowed_list",
        "/proc/self/status",
    ]);
    assert_eq!(under_taskset(&["--within", "cgroup"]), plain);
}

/// `--nice` is applied under every policy (setpriority), as `nice -n 5 chrt
/// -f 10` would: field 19 of /proc/self/stat reads it back.
#[test]
fn nice_applies_under_realtime_policies() {
    if !is_root() {
        common::skip("needs root");
        return;
    }
    for opts in [vec!["--fifo", "10"], vec!["--rr", "3"], vec!["--idle"]] {
        let mut args: Vec<&str> = opts.clone();
        args.extend(["--nice", "5", "--quiet", "--", "cat", "/proc/self/stat"]);
        let stat = run_stdout(&args);
        assert_eq!(stat_field(&stat, 19), 5, "{opts:?}");
    }
}

/// SCHED_DEADLINE with a placement covering the root domain works even when
/// the inherited affinity is narrower (the affinity is set first).
#[test]
fn deadline_with_full_placement_under_narrow_inherited_affinity() {
    let _bw = deadline_lock();
    let set = online();
    if !is_root() || set.len() < 2 {
        common::skip("needs root and 2 CPUs");
        return;
    }
    let all = set.to_list();
    let out = std::process::Command::new("taskset")
        .args(["-c", &set.first().unwrap().to_string()])
        .arg(assert_cmd::cargo::cargo_bin("pinrun"))
        .args([
            "--cpus",
            &all,
            "--deadline",
            "--sched-runtime",
            "1ms",
            "--sched-period",
            "10ms",
            "--",
            "cat",
            "/proc/self/stat",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stat_field(&String::from_utf8_lossy(&out.stdout), 41), 6);
}

/// Non-UTF-8 bytes anywhere on a rejected command line give a usage error,
/// never a panic.
#[test]
fn non_utf8_arguments_never_panic() {
    let bad = std::ffi::OsStr::from_bytes(b"\xff");
    for args in [
        vec![std::ffi::OsStr::new("--bogus"), bad],
        vec![
            std::ffi::OsStr::new("--cpus"),
            bad,
            std::ffi::OsStr::new("true"),
        ],
    ] {
        let out = pinrun().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("pinrun: "));
    }
}

/// A directory that is not a machine dump, and a dump whose files are FIFOs,
/// are refused or read without hanging.
#[test]
fn hostile_sysroots() {
    let dir = tempfile::tempdir().unwrap();
    pinrun()
        .arg("--sysroot")
        .arg(dir.path())
        .arg("--show")
        .assert()
        .code(125)
        .stderr(predicate::str::contains("not a machine dump"));
    let cpu = dir.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(cpu.join("cpu0")).unwrap();
    nix::unistd::mkfifo(&cpu.join("online"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&at(dir.path(), &["--dry-run", "--json", "--cores", "1"]).stdout)
            .unwrap();
    assert_eq!(v["cpulist"], "0");
}

/// execvp(3) semantics: an executable file without `#!` runs under
/// /bin/sh, and an unset PATH searches /bin:/usr/bin.
#[test]
fn execvp_fallbacks() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("no-shebang");
    std::fs::write(&script, "echo ran \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = pinrun()
        .args(["--cpus", "0", "--"])
        .arg(&script)
        .arg("x y")
        .output()
        .unwrap();
    assert_status(&out, 0);
    assert_eq!(out.stdout, b"ran x y\n");
    let out = pinrun()
        .env_remove("PATH")
        .args(["--cpus", "0", "--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_status(&out, 3);
}

/// `-v` prints the plan and every finding once, as `--dry-run` does (the
/// same finding codes, info included), not "findings: none" after the
/// warnings (found by a break test).
#[test]
fn verbose_launch_prints_the_findings_of_dry_run() {
    let codes = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| {
                l.rsplit_once(" [")
                    .map(|(_, c)| c.trim_end_matches(']').to_string())
            })
            .collect()
    };
    for args in [&["--cpus", "0"][..], &["--nice", "1"]] {
        let run = pinrun()
            .arg("-v")
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert!(run.status.success(), "{run:?}");
        let dry = pinrun()
            .arg("--dry-run")
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        let (run, dry) = (
            String::from_utf8_lossy(&run.stderr).to_string(),
            String::from_utf8_lossy(&dry.stdout).to_string(),
        );
        assert!(
            !run.contains("findings: none") || dry.contains("findings: none"),
            "{run}"
        );
        assert_eq!(codes(&run), codes(&dry), "{args:?}\n{run}\n{dry}");
        assert!(run.starts_with("cpus:"), "{run}");
    }
}

/// Output into a pipe whose reader is gone (`pinrun --show | head -1`)
/// ends pinrun by SIGPIPE with no message, in every mode that prints to
/// stdout, as it ends other tools; it used to panic ("failed printing to
/// stdout") and abort. The reader is closed before pinrun starts, so its
/// first write fails.
#[test]
fn closed_stdout_pipe_ends_by_sigpipe_without_panic() {
    use std::os::unix::process::ExitStatusExt;
    for args in [
        &["--show", "-v"][..],
        &["--show", "--json"],
        &["--dry-run", "--cpus", "0", "--", "true"],
        &["--dry-run", "--json", "--cpus", "0", "--", "true"],
        &["--check", "--cpus", "0"],
        &["--emit", "systemd", "--cpus", "0", "--", "true"],
        &["--generate", "man"],
        &["--generate", "bash"],
        &["--generate", "zsh"],
        &["--generate", "fish"],
        &["--help"],
        &["--version"],
        &["--json", "--cpus", "99999", "--", "true"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pinrun"))
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(
            out.status.signal(),
            Some(13),
            "{args:?}: {:?} {err}",
            out.status
        );
    }
}

/// Warnings and the `-v` plan go to stderr before exec; a stderr that is a
/// pipe without a reader must not stop the launch: the command still runs
/// (its exit status comes back).
#[test]
fn closed_stderr_pipe_does_not_stop_a_launch() {
    for args in [&["-v", "--cpus", "0"][..], &["--cpus", "0", "--fifo", "1"]] {
        if args.contains(&"--fifo") && !is_root() {
            continue;
        }
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pinrun"))
            .args(args)
            .args(["--", "sh", "-c", "exit 7"])
            .stderr(writer)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(7), "{args:?}: {:?}", out.status);
    }
}

/// `--quiet --strict` prints no warnings, only the refusal naming their
/// codes (found by a new-user trial: every warning used to be printed).
#[test]
fn quiet_strict_refuses_without_printing_warnings() {
    let out = pinrun()
        .env("OMP_PROC_BIND", "true")
        .args(["--quiet", "--strict", "--cpus", "0", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("warning:"), "{err}");
    assert!(
        err.starts_with("pinrun: refusing to run under --strict: ")
            && err.contains("env-thread-binding"),
        "{err}"
    );
}

/// `--membind COMMAND` without `--` and without arguments: the command is
/// taken as the node list, so "no command given" names that cause too.
#[test]
fn membind_swallowing_the_only_word_is_explained() {
    let out = pinrun()
        .args(["--cpus", "0", "--membind", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pinrun: no command given\nhint: --membind took 'true' as its node list: write --membind=NODES, or put -- before the command\n"
    );
}

/// SIGPIPE reaches the command as the caller left it: ignored under
/// `trap '' PIPE` (as `taskset` passes it on), default otherwise, although
/// the Rust runtime ignores it inside pinrun (its disposition is read
/// before `main`). SigIgn bit 12 is SIGPIPE (13).
#[test]
fn sigpipe_disposition_passes_through_exec() {
    let sig_ign = |trap: &str| -> u64 {
        let script = format!("{trap} exec \"$0\" --cpus 0 -- grep SigIgn /proc/self/status",);
        let out = std::process::Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_pinrun")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let hex = text.trim().strip_prefix("SigIgn:").unwrap().trim();
        u64::from_str_radix(hex, 16).unwrap()
    };
    assert_eq!(sig_ign("trap '' PIPE;") & 0x1000, 0x1000);
    assert_eq!(sig_ign("trap - PIPE;") & 0x1000, 0);
    // With SIGPIPE ignored by the caller, a closed stdout pipe is a write
    // error like any other (exit 125), as for coreutils.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "trap '' PIPE; exec \"$0\" --show",
            env!("CARGO_BIN_EXE_pinrun"),
        ])
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("pinrun: writing stdout: Broken pipe")
    );
}

/// A standard descriptor the caller closed stays closed for the command
/// (the Rust runtime puts /dev/null there inside pinrun; `taskset` keeps it
/// closed), and printing to a closed stdout or a full device is a write
/// error, 125 (found by a break test: output was silently lost).
#[test]
fn closed_std_fds_pass_through_and_fail_output() {
    let run = |script: &str| {
        std::process::Command::new("sh")
            .args(["-c", script, env!("CARGO_BIN_EXE_pinrun")])
            .output()
            .unwrap()
    };
    // fd 0 closed: the command's fd 0 is not /dev/null (it is closed, so
    // the first file it opens takes fd 0).
    let out = run("exec \"$0\" --cpus 0 -- sh -c 'readlink /proc/self/fd/0 || echo closed' <&-");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "closed",
        "{out:?}"
    );
    let out = run("exec \"$0\" --cpus 0 -- sh -c 'readlink /proc/self/fd/0' </dev/null");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "/dev/null");
    for args in [
        "--show",
        "--dry-run --cpus 0 -- true",
        "--generate fish",
        "--version",
    ] {
        let out = run(&format!("exec \"$0\" {args} >&-"));
        assert_eq!(out.status.code(), Some(125), "{args}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .starts_with("pinrun: writing stdout: Bad file descriptor"),
            "{args}: {out:?}"
        );
        let out = run(&format!("exec \"$0\" {args} >/dev/full"));
        assert_eq!(out.status.code(), Some(125), "{args}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .starts_with("pinrun: writing stdout: No space left on device"),
            "{args}: {out:?}"
        );
    }
}

/// A path that cannot be looked up for another reason than "nothing
/// there" is 126 with the reason, as execvp(3) and the shells report it:
/// a file used as a directory, a symlink loop; nothing there is 127
/// (found by a break test: all were "command not found").
#[test]
fn path_lookup_errors_are_126() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "").unwrap();
    std::os::unix::fs::symlink("loop2", dir.path().join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", dir.path().join("loop2")).unwrap();
    for (path, code, why) in [
        (file.join("prog"), 126, "not a directory"),
        (dir.path().join("loop1"), 126, "too many symbolic links"),
        (dir.path().join("none"), 127, "command not found"),
    ] {
        let out = pinrun()
            .args(["--cpus", "0", "--"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{path:?}: {err}");
        assert!(
            err.contains(why) && err.contains("\nhint: "),
            "{path:?}: {err}"
        );
    }
}

/// Serializes the tests that reserve SCHED_DEADLINE bandwidth on this
/// machine: the admission test fills the root domain on purpose, and any
/// deadline launch running meanwhile would get EBUSY.
static DEADLINE_BANDWIDTH: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn deadline_lock() -> std::sync::MutexGuard<'static, ()> {
    DEADLINE_BANDWIDTH
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills and reaps the children it holds when dropped, also when the test
/// fails.
struct Reap(Vec<std::process::Child>);

impl Drop for Reap {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// SCHED_DEADLINE admission control (EBUSY), as the issue reproduces it:
/// two `chrt -d` tasks reserve 85% of a CPU each; a 20% request then
/// exceeds what the root domain admits (95% of each CPU at the default
/// sysctls, less the deadline servers'). The error names SCHED_DEADLINE and
/// admission control, shows the request's utilisation, the per-CPU limit
/// read from the sysctls and the root domain, and gives the fix.
#[test]
fn deadline_admission_refusal_is_explained() {
    if !is_root() {
        common::skip("needs root");
        return;
    }
    let online = online();
    let rt_runtime: i64 = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let rt_period: i64 = std::fs::read_to_string("/proc/sys/kernel/sched_rt_period_us")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    if rt_runtime < 0 {
        common::skip("admission control is off (sched_rt_runtime_us = -1)");
        return;
    }
    let _bw = deadline_lock();
    // Fill the root domain with 85% reservations until one more is refused
    // by chrt itself (the peer tool), leaving less than 20%.
    let mut hogs = Reap(Vec::new());
    let per_cpu = rt_runtime as f64 / rt_period as f64;
    let n = ((per_cpu * online.len() as f64 - 0.2) / 0.85).ceil() as usize;
    for _ in 0..n.max(1) {
        let c = std::process::Command::new("chrt")
            .args([
                "-d",
                "--sched-runtime",
                "85000000",
                "--sched-deadline",
                "100000000",
            ])
            .args(["--sched-period", "100000000", "0", "sleep", "15"])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("chrt");
        hogs.0.push(c);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = pinrun()
        .args([
            "--quiet",
            "--deadline",
            "--sched-runtime",
            "20ms",
            "--sched-period",
            "100ms",
        ])
        .args(["--reset-on-fork", "--", "true"])
        .output()
        .unwrap();
    drop(hogs);
    assert_status(&out, 125);
    let err = String::from_utf8_lossy(&out.stderr);
    let pct = format!("{:.1}%", per_cpu * 100.0);
    for want in [
        "sched_setattr(SCHED_DEADLINE runtime 20ms deadline 100ms period 100ms, reset-on-fork)",
        "(EBUSY)",
        "admission control",
        "the request is 20.0% of a CPU",
        &format!("CPU{} {online}", if online.len() == 1 { "" } else { "s" }),
        &format!("{} × {pct}", online.len()),
        "hint: ask for less runtime or a longer period",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    assert!(!err.contains("policy 6"), "{err}");
}

/// One request of the differential test: its options (without mode and
/// command), and whether it uses SCHED_DEADLINE (run one at a time).
fn differential_requests(online: &pinrun::cpuset::CpuSet) -> Vec<Vec<String>> {
    let first = online.first().unwrap().to_string();
    let last = online.last().unwrap().to_string();
    let all = online.to_list();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let placements: Vec<Vec<String>> = vec![
        vec![],
        s(&["--cpus", &first]),
        s(&["--cpus", &last]),
        s(&["--cpus", &all]),
        s(&["--cpus", "4095"]),
        s(&["--cpus", &(online.last().unwrap() + 1).to_string()]),
        s(&["--node", "0"]),
        s(&["--node", "1"]),
        s(&["--cores", "1"]),
    ];
    let memory: Vec<Vec<String>> = vec![
        vec![],
        s(&["--membind=0"]),
        s(&["--membind=1"]),
        s(&["--preferred=0"]),
        s(&["--preferred-many=0"]),
        s(&["--interleave=all"]),
        s(&["--weighted-interleave=0"]),
        s(&["--localalloc"]),
    ];
    let dl = |rt: &str, d: Option<&str>, p: Option<&str>, rof: bool| {
        let mut v = s(&["--deadline", "--sched-runtime", rt]);
        if let Some(d) = d {
            v.extend(s(&["--sched-deadline", d]));
        }
        if let Some(p) = p {
            v.extend(s(&["--sched-period", p]));
        }
        if rof {
            v.push("--reset-on-fork".into());
        }
        v
    };
    let sched: Vec<Vec<String>> = vec![
        vec![],
        s(&["--fifo", "0"]),
        s(&["--fifo", "1"]),
        s(&["--fifo", "99"]),
        s(&["--fifo", "100"]),
        s(&["--rr", "1"]),
        s(&["--rr", "99"]),
        s(&["--rr", "100"]),
        s(&["--other"]),
        s(&["--batch"]),
        s(&["--idle"]),
        s(&["--nice", "-20"]),
        s(&["--nice", "-1"]),
        s(&["--nice", "0"]),
        s(&["--nice", "19"]),
        s(&["--nice", "20"]),
        s(&["--fifo", "10", "--nice", "5"]),
        s(&["--batch", "--nice", "-5", "--reset-on-fork"]),
        s(&["--other", "--reset-on-fork"]),
        s(&["--reset-on-fork"]),
        dl("1024ns", None, Some("100us"), true),
        dl("1023ns", None, Some("100us"), true),
        dl("1024ns", None, Some("99999ns"), true),
        dl("1024ns", None, Some("99us"), true),
        dl("1ms", None, Some("4194304us"), true),
        dl("1ms", None, Some("4194305us"), true),
        dl("10ms", None, Some("5s"), true),
        dl("20us", None, Some("50us"), true),
        dl("2ms", Some("1ms"), Some("10ms"), true),
        dl("1ms", Some("20ms"), Some("10ms"), true),
        dl("1ms", Some("5ms"), Some("10ms"), false),
        dl("1ms", Some("10ms"), None, true),
        dl("10ms", None, Some("10ms"), true),
    ];
    let mut out = Vec::new();
    // Every scheduling request on every placement (SCHED_DEADLINE's on the
    // placements that differ for it: none, one CPU, the whole root domain,
    // a CPU that does not exist); every memory policy on every placement;
    // and every memory policy with a few scheduling policies.
    for (i, p) in placements.iter().enumerate() {
        for sc in &sched {
            let is_dl = sc.iter().any(|a| a == "--deadline");
            if !is_dl || [0, 1, 3, 4].contains(&i) {
                out.push([p.clone(), sc.clone()].concat());
            }
        }
        for m in &memory[1..] {
            out.push([p.clone(), m.clone()].concat());
        }
    }
    for m in &memory[1..] {
        for sc in [
            &sched[2], &sched[9], &sched[10], &sched[12], &sched[17], &sched[20],
        ] {
            out.push([m.clone(), sc.clone()].concat());
        }
    }
    out
}

/// pinrun run as `user` (`setpriv --reuid --regid --clear-groups`, which
/// drops every capability), or as this user (`None`), in `/`.
fn as_user(user: Option<u32>) -> std::process::Command {
    let bin = assert_cmd::cargo::cargo_bin("pinrun");
    let mut c = match user {
        Some(uid) => {
            let mut c = std::process::Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .args(["--clear-groups", "--"])
                .arg(&bin);
            c
        }
        None => std::process::Command::new(&bin),
    };
    c.current_dir("/");
    c
}

/// The launch of `args` as `user` (None: this user), read back.
fn launched(user: Option<u32>, args: &[String]) -> Outcome {
    let out = as_user(user)
        .args(args)
        .args(["--", "sh", "-c", common::READ_BACK])
        .output()
        .expect("run pinrun");
    common::launch_outcome(
        out.status.code().unwrap_or(-1),
        &String::from_utf8_lossy(&out.stdout),
        &String::from_utf8_lossy(&out.stderr),
    )
}

/// What `--dry-run --json` predicts for `args` as `user`: the refusal, or
/// the values the launch applies (unchanged ones are this process's own,
/// which the launch inherits).
fn predicted(user: Option<u32>, args: &[String], own: &Outcome) -> Outcome {
    let out = as_user(user)
        .args(["--dry-run", "--json"])
        .args(args)
        .args(["--", "sh", "-c", common::READ_BACK])
        .output()
        .expect("run pinrun");
    common::dry_run_outcome(
        out.status.code().unwrap_or(-1),
        &String::from_utf8_lossy(&out.stdout),
        own,
    )
}

/// The differential test of issue 14: a few hundred generated requests
/// (placements with invalid CPUs and nodes, every memory policy, every
/// scheduling policy with its parameter edges), each run once with
/// `--dry-run --json` and once for real, as root and as `nobody`: the
/// verdict (exit status), the error code and the applied values
/// (Cpus_allowed_list, policy, priority, nice, mempolicy) must be equal.
/// SCHED_DEADLINE requests run one at a time (admission control is
/// machine-wide); the others in parallel.
#[test]
fn differential_dry_run_predicts_the_launch() {
    let online = online();
    let requests = differential_requests(&online);
    let mut users = vec![None];
    if is_root() {
        users.push(Some(65534));
    } else {
        common::skip("the root and nobody halves need root; running as this user only");
    }
    // This process's own values: what an unchanged setting inherits.
    let own = launched(None, &[]);
    let mut cases: Vec<(Option<u32>, Vec<String>)> = Vec::new();
    for u in &users {
        for r in &requests {
            cases.push((*u, r.clone()));
        }
    }
    let (dl, other): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .partition(|(_, r)| r.iter().any(|a| a == "--deadline"));
    let disagreements = std::sync::Mutex::new(Vec::new());
    let check = |(user, args): &(Option<u32>, Vec<String>)| {
        let own = if user.is_some() {
            launched(*user, &[])
        } else {
            own.clone()
        };
        let want = predicted(*user, args, &own);
        let got = launched(*user, args);
        if want != got {
            disagreements.lock().unwrap().push(format!(
                "{user:?} {args:?}:\n  dry run: {want:?}\n  launch:  {got:?}"
            ));
        }
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(c) = other.get(i) else { break };
                    check(c);
                }
            });
        }
        s.spawn(|| {
            let _bw = deadline_lock();
            for c in &dl {
                check(c);
            }
        });
    });
    let d = disagreements.into_inner().unwrap();
    eprintln!(
        "differential: {} requests ({} users), {} disagreements",
        dl.len() + other.len(),
        users.len(),
        d.len()
    );
    assert!(d.is_empty(), "{}", d.join("\n"));
}

/// An unprivileged process started by root under a policy (chrt, then
/// setpriv to `nobody`, RLIMIT_RTPRIO and RLIMIT_NICE 0): SCHED_FIFO 50 may
/// lower its priority and may not raise it; SCHED_IDLE may not be left
/// (user_check_sched_setscheduler()). The dry run says what the launch
/// does, each way.
#[test]
fn unprivileged_task_under_an_inherited_policy() {
    if !is_root() {
        common::skip("needs root");
        return;
    }
    let run = |chrt: &[&str], extra: &[&str], args: &[&str]| {
        let out = std::process::Command::new("chrt")
            .args(chrt)
            .args([
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
            ])
            .arg(assert_cmd::cargo::cargo_bin("pinrun"))
            .current_dir("/")
            .args(extra)
            .args(args)
            .args(["--", "sh", "-c", common::READ_BACK])
            .output()
            .expect("chrt");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (chrt, policy, cases) in [
        (
            &["-f", "50"][..],
            1,
            &[
                (&["--fifo", "10"][..], false),
                (&["--fifo", "60"], true),
                (&["--rr", "10"], true),
            ][..],
        ),
        (
            &["-i", "0"],
            5,
            &[(&["--other"][..], true), (&["--idle"], false)],
        ),
    ] {
        let (c, o, e) = run(chrt, &[], &[]);
        let own = common::launch_outcome(c, &o, &e);
        assert!(
            matches!(own, Outcome::Ran { policy: p, .. } if p == policy),
            "{own:?}"
        );
        for (args, refused) in cases {
            let (c, o, _) = run(chrt, &["--dry-run", "--json"], args);
            let want = common::dry_run_outcome(c, &o, &own);
            let (c, o, e) = run(chrt, &[], args);
            let got = common::launch_outcome(c, &o, &e);
            assert_eq!(want, got, "{chrt:?} {args:?}");
            assert_eq!(matches!(got, Outcome::Refused { .. }), *refused, "{got:?}");
        }
    }
}
