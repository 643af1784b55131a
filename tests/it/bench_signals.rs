//! A benchmark script ended by a signal (Ctrl-C to its process group, a
//! SIGTERM or SIGHUP to the script alone) ends at once and leaves no
//! process and no file: not its load (the busy loop, the loop of O_DIRECT
//! reads and the `dd` it is running), not the tool it was running, not
//! its temporary files. Before: a SIGTERM to bench/probe-worst-gap.sh left
//! its `dd` and the running oslat behind (oslat writing its JSON into the
//! removed directory), and a Ctrl-C during an oslat run (oslat ends on
//! SIGINT with status 0) only ended that run. The tools here are stand-ins
//! that sleep (a real run needs root and rt-tests): what is tested is the
//! script's own process handling.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// The processes of process group `pgid` (field 5 of /proc/PID/stat), as
/// "PID COMM".
fn group_members(pgid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // rest: state ppid pgrp …; a zombie is gone but for its parent.
        if fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str()) {
            out.push(format!("{} {}", e.file_name().to_string_lossy(), head));
        }
    }
    out
}

/// A stand-in named `name` in `bin`: sleeps as long as a run would (D
/// seconds), and, like oslat and cyclictest, ends with status 0 on SIGINT
/// and SIGTERM. Once its sleep runs it creates the file `$STARTED`.
fn stand_in(bin: &Path, name: &str) {
    let p = bin.join(name);
    std::fs::write(
        &p,
        "#!/bin/sh\ntrap 'kill $! 2>/dev/null; exit 0' INT TERM\nsleep \"${D:-1}\" &\n: > \"$STARTED\"\nwait $!\n",
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `script` (LOAD=1 or CONDS=loaded: the load on CPU 0) in a process
/// group of its own with the stand-ins first in PATH, sends `signal` to
/// the group or to the script alone once the first stand-in runs (its
/// load, file and warm-up behind it: an event, not a time, as a loaded
/// machine may take seconds to get there), and returns its exit status,
/// how long it took to end, and what was left.
fn interrupted(
    script: &str,
    signal: nix::sys::signal::Signal,
    group: bool,
) -> (Option<i32>, Duration, Vec<String>, Vec<String>) {
    let root = env!("CARGO_MANIFEST_DIR");
    // O_DIRECT needs a disk file system (tmpfs refuses it): the target's.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (bin, tmp) = (dir.path().join("bin"), dir.path().join("tmp"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    for t in ["oslat", "cyclictest", "pinrun"] {
        stand_in(&bin, t);
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = std::process::Command::new("bash")
        .arg(format!("{root}/{script}"))
        .env("PATH", path)
        .env("TMPDIR", &tmp)
        // Outside TMPDIR, whose files are asserted gone.
        .env("STARTED", dir.path().join("started"))
        .env("PINRUN", bin.join("pinrun"))
        .env("CPU", "0")
        .env("R", "2")
        .env("D", "1")
        .env("LOAD", "1")
        .env("CONDS", "loaded")
        // A 1 MiB file to read: its 64 MiB default is written with
        // O_DIRECT before the load starts, 1-2 s of disk per case.
        .env("BLOCKS_MB", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    while !dir.path().join("started").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60) && child.try_wait().unwrap().is_none(),
            "{script}: no tool started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // And a moment in it: the script's own steps around its tool (its
    // traps, the tool's sleep it just forked) are settled.
    std::thread::sleep(Duration::from_millis(300));
    let target = nix::unistd::Pid::from_raw(pid as i32);
    if group {
        nix::sys::signal::killpg(target, signal).unwrap();
    } else {
        nix::sys::signal::kill(target, signal).unwrap();
    }
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = nix::sys::signal::killpg(target, nix::sys::signal::Signal::SIGKILL);
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = t0.elapsed();
    // What is left is left for good, not on its way out: a short grace.
    std::thread::sleep(Duration::from_millis(300));
    let left = group_members(pid);
    let _ = nix::sys::signal::killpg(target, nix::sys::signal::Signal::SIGKILL);
    let files: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    (status.code(), took, left, files)
}

#[test]
fn an_interrupted_probe_benchmark_leaves_nothing_behind() {
    use nix::sys::signal::Signal;
    let mut cases = Vec::new();
    for script in ["bench/probe-worst-gap.sh", "bench/probe-rt.sh"] {
        for (signal, group, code) in [
            (Signal::SIGINT, true, 130),
            (Signal::SIGTERM, false, 143),
            (Signal::SIGHUP, false, 129),
        ] {
            cases.push((script, signal, group, code));
        }
    }
    // The six at once, each in its own process group and directory.
    std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .map(|&(script, signal, group, code)| {
                s.spawn(move || {
                    (
                        script,
                        signal,
                        group,
                        code,
                        interrupted(script, signal, group),
                    )
                })
            })
            .collect();
        for run in runs {
            let (script, signal, group, code, (status, took, left, files)) = run.join().unwrap();
            let what = format!(
                "{script}, {signal:?} to the {}",
                if group { "group" } else { "script" }
            );
            assert_eq!(status, Some(code), "{what}");
            assert!(
                took < Duration::from_secs(3),
                "{what}: ended {took:?} after the signal"
            );
            assert_eq!(left, Vec::<String>::new(), "{what}: processes left");
            assert_eq!(files, Vec::<String>::new(), "{what}: files left in TMPDIR");
        }
    });
}
