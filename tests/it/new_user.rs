//! A new user's trial from the README alone (the refusals that a launch
//! makes and a dry run must predict, and the sources of the state
//! directory), each checked against what the kernel or a peer tool answers.

use crate::common;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The kernel's words for errno `e` (strerror(3)), as `Errno::desc` gives them.
fn strerror(e: i32) -> String {
    let s = std::io::Error::from_raw_os_error(e).to_string();
    s.split(" (os error").next().unwrap().to_string()
}

/// What the kernel answers creating a file in `dir` (`open(2)` with
/// `O_CREAT|O_EXCL`), removing it when it was made.
fn kernel_create(dir: &str) -> Option<i32> {
    let path = format!("{dir}/pinrun-new-user-probe");
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&path);
            None
        }
        Err(e) => e.raw_os_error(),
    }
}

/// `--dry-run --exclusive` predicts the launch's refusal of a state
/// directory no record can be written in: procfs and sysfs (the kernel
/// answers ENOENT and EACCES to `open(2)` `O_CREAT`, even for root, while
/// `access(2)` says W_OK), each with the kernel's errno in words, the same
/// message and exit 125 as the launch; the hint names the file system,
/// not a mode. (A new user's trial: the dry run said 0 for /proc.)
#[test]
fn dry_run_exclusive_refuses_the_state_directories_the_launch_refuses() {
    for dir in ["/proc", "/sys"] {
        let errno = kernel_create(dir).expect("the kernel refuses a file here");
        let run = |dry: bool| {
            let mut c = common::pinrun();
            if dry {
                c.arg("--dry-run");
            }
            c.args([
                "--state-dir",
                dir,
                "--exclusive",
                "--cores",
                "1",
                "--",
                "true",
            ])
            .output()
            .unwrap()
        };
        let (dry, launch) = (run(true), run(false));
        let want = format!(
            "pinrun: --exclusive: cannot write a claim record in {dir}: {}",
            strerror(errno)
        );
        for (what, out) in [("dry run", &dry), ("launch", &launch)] {
            assert_eq!(
                out.status.code(),
                Some(125),
                "{what} {dir}: {}",
                stderr(out)
            );
            let err = stderr(out);
            assert!(err.lines().any(|l| l == want), "{what} {dir}: {err}");
            let fs = if dir == "/proc" {
                "in procfs"
            } else {
                "in sysfs"
            };
            assert!(err.contains(fs), "{what} {dir}: {err}");
            assert!(!err.contains("mode 1777"), "{what} {dir}: {err}");
        }
    }
}

/// On a file system mounted read-only (a tmpfs mounted `ro` in a mount
/// namespace of the test's own, so the host's mounts are untouched), the
/// kernel answers EROFS; the dry run and the launch both refuse with it
/// and hint the remount or another --state-dir (not "mode 1777"). Root
/// only (mount(2) needs CAP_SYS_ADMIN).
#[test]
fn read_only_state_directory_is_named_read_only() {
    if !common::is_root() || !std::path::Path::new("/usr/bin/unshare").exists() {
        eprintln!("skipped: needs root and unshare(1)");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("pinrun");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let script = format!(
        "mount -t tmpfs -o ro tmpfs {d} || exit 99; \
         touch {d}/x 2>/dev/null; echo touch=$?; \
         PINRUN_CONFIG= {b} --dry-run --state-dir {d} --exclusive --cores 1 >/dev/null; echo dry=$?; \
         PINRUN_CONFIG= {b} --state-dir {d} --exclusive --cores 1 -- true; echo run=$?",
        b = bin.display()
    );
    let out = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(99) {
        eprintln!("skipped: mount refused here");
        return;
    }
    // The kernel refuses the file; pinrun refuses both, 125.
    assert!(text.contains("touch=1"), "{text}");
    assert!(text.contains("dry=125"), "{text}");
    assert!(text.contains("run=125"), "{text}");
    let err = stderr(&out);
    let want = format!(
        "pinrun: --exclusive: cannot write a claim record in {d}: {}",
        strerror(libc::EROFS)
    );
    assert_eq!(err.lines().filter(|l| *l == want).count(), 2, "{err}");
    assert_eq!(
        err.matches("mounted read-only: remount it read-write")
            .count(),
        2,
        "{err}"
    );
    assert!(!err.contains("mode 1777"), "{err}");
}

/// A relative or empty state directory is refused from each of its
/// sources, naming the source and the value, with exit 125: a relative
/// path follows the caller's working directory (two `--exclusive`
/// launches from two directories would each lock and read their own
/// directory, as `openat(AT_FDCWD, "relative")` resolves from each
/// process's cwd: path_resolution(7)), and an empty one names none.
#[test]
fn a_relative_or_empty_state_directory_is_refused_from_every_source() {
    let tmp = tempfile::tempdir().unwrap();
    let conf = |text: &str| {
        let p = tmp.path().join("pinrun.toml");
        std::fs::write(&p, text).unwrap();
        p
    };
    // (environment, arguments, the refusal's start).
    type Case<'a> = (Vec<(&'a str, String)>, Vec<&'a str>, String);
    let cases: Vec<Case> = vec![
        (
            vec![],
            vec!["--state-dir", "relative"],
            "--state-dir: state directory \"relative\" is relative".into(),
        ),
        (
            vec![("PINRUN_STATE_DIR", "relative".into())],
            vec![],
            "PINRUN_STATE_DIR: state directory \"relative\" is relative".into(),
        ),
        (
            vec![(
                "PINRUN_CONFIG",
                conf("state_dir = \"relative\"\n").display().to_string(),
            )],
            vec![],
            format!(
                "policy file {}: state_dir: state directory \"relative\" is relative",
                tmp.path().join("pinrun.toml").display()
            ),
        ),
    ];
    for (env, args, want) in cases {
        let mut c = common::pinrun();
        c.current_dir(tmp.path());
        for (k, v) in &env {
            c.env(k, v);
        }
        let out = c
            .args(&args)
            .args(["--exclusive", "--cores", "1", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125), "{env:?} {args:?}");
        let err = stderr(&out);
        assert!(err.starts_with(&format!("pinrun: {want}")), "{err}");
        assert!(err.contains("hint: give an absolute path"), "{err}");
        // Nothing was made in the working directory.
        assert!(!tmp.path().join("relative").exists());
    }
    let p = conf("state_dir = \"\"\n");
    let out = common::pinrun()
        .env("PINRUN_CONFIG", &p)
        .args(["--exclusive", "--cores", "1", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).starts_with(&format!(
            "pinrun: policy file {}: state_dir: the state directory is empty",
            p.display()
        )),
        "{}",
        stderr(&out)
    );
}

/// An explicit empty `--membind` value is refused as numactl refuses it
/// (`numactl --membind= true`: set_mempolicy(2) EINVAL, exit 1): exit 125
/// naming --membind, never the bare option's binding (a new user's trial:
/// `--membind="$NODES"` with NODES unset bound to node 0, exit 0).
#[test]
fn an_empty_membind_value_is_refused_as_numactl_refuses_it() {
    if let Ok(o) = std::process::Command::new("numactl")
        .args(["--membind=", "true"])
        .output()
    {
        assert!(!o.status.success(), "numactl accepted --membind=");
    }
    let dump = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/machines/cri-resource-manager/2-socket-4-node-40-core.tar.gz");
    for form in [&["--membind="][..], &["--membind", ""]] {
        let out = common::pinrun()
            .arg("--sysroot")
            .arg(&dump)
            .args(["--dry-run", "--cores", "2"])
            .args(form)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125), "{form:?}");
        assert!(
            stderr(&out).starts_with("pinrun: --membind: the value is empty"),
            "{}",
            stderr(&out)
        );
    }
}

/// The kernel's CPU sets nest, possible ⊇ present ⊇ online
/// (Documentation/admin-guide/cputopology.rst). A dump whose `online` is
/// not within `possible` lies: the CPUs outside are ignored, never planned
/// on, and a `topology-inconsistent` warning says so; a dump holding only
/// `online` (nothing to check it against) is planned as given, with the
/// warning, never silently (a new user's trial: "CPUs 0-7 online,
/// possible none", no warning).
#[test]
fn online_cpus_outside_possible_are_topology_inconsistent() {
    let findings = |files: &[(&str, &str)]| {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join("sys/devices/system/cpu").join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let out = common::at(dir.path(), &["--dry-run", "--json", "--cores", "2"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{files:?}: {}", stderr(&out)));
        (out.status.code(), v)
    };
    let topo = |v: &serde_json::Value| common::finding_messages(v, "topology-inconsistent");
    let (code, v) = findings(&[("online", "0-7\n")]);
    assert_eq!(code, Some(0));
    let t = topo(&v);
    assert!(
        t.iter()
            .any(|m| m.contains("online lists CPUs 0-7 but neither")),
        "{v}"
    );
    // A hole: possible 0-1,4-5 with online 0-3 (ids past possible's last
    // are refused earlier, "beyond the possible ones"): CPUs 2-3 are not
    // possible; the plan takes its two cores among 0-1.
    let (code, v) = findings(&[
        ("possible", "0-1,4-5\n"),
        ("online", "0-3\n"),
        ("present", "0-1,4-5\n"),
    ]);
    assert_eq!(code, Some(0));
    assert!(
        topo(&v)
            .iter()
            .any(|m| m.contains("online lists CPUs 2-3 that are not possible (0-1,4-5)")),
        "{v}"
    );
    let cpus = common::ids(&v["cpus"]);
    assert!(cpus.iter().all(|c| *c <= 1), "{cpus:?}");
    // present 0-5 over the same hole.
    let (_, v) = findings(&[
        ("possible", "0-1,4-5\n"),
        ("present", "0-5\n"),
        ("online", "0-1\n"),
    ]);
    assert!(
        topo(&v)
            .iter()
            .any(|m| m.contains("present lists CPUs 2-3 that are not possible (0-1,4-5)")),
        "{v}"
    );
    // A consistent dump has no such warning.
    let (_, v) = findings(&[
        ("possible", "0-3\n"),
        ("present", "0-3\n"),
        ("online", "0-3\n"),
    ]);
    assert!(topo(&v).is_empty(), "{v}");
}

/// The command's lookup says what the path is, with the shell's exit
/// status (bash run with the same word: 127 not found, 126 not
/// executable): an absolute path that is missing is not explained by the
/// working directory, a character device is not a regular file (no chmod
/// makes /dev/null a program: execve(2) answers EACCES), and an empty
/// word is said to be empty, not ": command not found".
#[test]
fn command_lookup_failures_say_what_the_word_is() {
    let cases = [
        (
            "/nonexistent-dir-of-pinrun/app.x",
            "pinrun: /nonexistent-dir-of-pinrun/app.x: command not found",
            None,
            "relative",
        ),
        (
            "/dev/null",
            "pinrun: /dev/null: cannot execute /dev/null: is a character device, not a regular file",
            None,
            "chmod",
        ),
        (
            "",
            "pinrun: the command is empty",
            Some("hint: give the program to run"),
            ": command not found",
        ),
    ];
    for (word, first, hint, never) in cases {
        let shell = std::process::Command::new("bash")
            .args(["-c", "\"$1\"", "bash", word])
            .output()
            .unwrap();
        let out = common::pinrun().args(["--", word]).output().unwrap();
        assert_eq!(
            out.status.code(),
            shell.status.code(),
            "{word:?}: {}",
            stderr(&out)
        );
        let err = stderr(&out);
        assert!(err.starts_with(first), "{word:?}: {err}");
        if let Some(h) = hint {
            assert!(err.contains(h), "{word:?}: {err}");
        }
        assert!(!err.contains(never), "{word:?}: {err}");
    }
}
