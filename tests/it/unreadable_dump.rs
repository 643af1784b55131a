//! A dump directory that pinrun's user may read only in part (another user
//! wrote it with a private umask, or made one subtree private). Read in
//! part, it would give another machine's answers: a CPU directory that
//! cannot be searched read as a machine with no CPUs and "no findings"
//! (exit 0), and an SMT sibling list that cannot be read as a core of one
//! thread. Every kind of read below `--sysroot DIR` that the kernel refuses
//! with `EACCES` (a file from the dump's root, a directory listed, a file
//! from an opened directory: the per-IRQ and per-CPU reads) makes pinrun
//! refuse with `sysroot-unreadable` (exit 125), naming the path; the same
//! dump read by a user who may read all of it gives its normal answer.
//!
//! pinrun runs as user nobody (`common::as_nobody`, setpriv): root may read
//! every file whatever its mode.

use crate::common;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A private copy of the `nto/e2e-gcp-worker-a` dump (IRQs in
/// `/proc/irq`), every directory on the way searchable by all.
fn readable_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = common::tempdir();
    let dump = tmp.path().join("dump");
    common::copy_tree(&common::machine("nto/e2e-gcp-worker-a"), &dump);
    for d in [tmp.path(), &dump] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    chmod_tree(&dump);
    (tmp, dump)
}

/// Directories 0755 and files 0644 below `dir`, as a dump meant for
/// others is.
fn chmod_tree(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let ty = e.file_type().unwrap();
        if ty.is_dir() {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            chmod_tree(&e.path());
        } else if ty.is_file() {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// pinrun's `--json` error as nobody: (exit status, error code, message).
fn refusal(dump: &Path, args: &[&str]) -> Option<(i32, String, String)> {
    let mut all = vec!["--sysroot", dump.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    let out = common::as_nobody(&all)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {stdout} / {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    Some((
        out.status.code().unwrap(),
        v["error"]["code"].as_str().unwrap_or("").to_string(),
        v["error"]["message"].as_str().unwrap_or("").to_string(),
    ))
}

#[test]
fn a_dump_read_in_part_is_refused_naming_the_path() {
    let (_tmp, dump) = readable_copy();
    // Readable by all: nobody gets the dump's findings (exit 1), as root.
    let Some(out) = common::as_nobody(&[
        "--sysroot",
        dump.to_str().unwrap(),
        "--check",
        "--cpus",
        "0",
    ]) else {
        return;
    };
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = common::at(&dump, &["--check", "--cpus", "0"]);
    assert_eq!(out.stdout, root.stdout);

    let cpu = dump.join("sys/devices/system/cpu");
    let cases: Vec<(std::path::PathBuf, u32, &[&str], &str)> = vec![
        // A directory that cannot be searched: every CPU file below it
        // (was: "no findings", exit 0, a machine with no CPUs).
        (cpu.clone(), 0o700, &["--check"], "/sys/devices/system/cpu/"),
        // A directory pinrun lists, whose files it may still open.
        (cpu.clone(), 0o311, &["--check"], "/sys/devices/system/cpu"),
        // The SMT siblings of the CPU a request plans on (was: planned as
        // a core of one thread).
        (
            cpu.join("cpu1/topology/core_cpus_list"),
            0o600,
            &["--dry-run", "--cpus", "1", "--", "true"],
            "/sys/devices/system/cpu/cpu1/topology/core_cpus_list",
        ),
        // A per-IRQ directory, read from the opened /proc/irq.
        (
            dump.join("proc/irq/1"),
            0o700,
            &["--check", "--cpus", "0"],
            "/proc/irq/1/",
        ),
        // The dump's top directory (was: "not a machine dump").
        (dump.clone(), 0o700, &["--check"], "/sys/devices/system/cpu"),
    ];
    for (path, mode, args, named) in cases {
        assert!(path.exists(), "{} not in the fixture", path.display());
        set_mode(&path, mode);
        let (code, error, message) = refusal(&dump, args).unwrap();
        set_mode(&path, if path.is_dir() { 0o755 } else { 0o644 });
        assert_eq!(
            (code, error.as_str()),
            (125, "sysroot-unreadable"),
            "{}: {message}",
            path.display()
        );
        // A directory: the first path refused is below it, or itself.
        let names = message.contains(&format!("reading {named}"))
            || message.contains(&format!("reading {}: ", named.trim_end_matches('/')));
        assert!(
            names && message.contains("permission denied"),
            "{}: {message}",
            path.display()
        );
    }
    // Every mode given back: the same answer as at first.
    let again = common::as_nobody(&[
        "--sysroot",
        dump.to_str().unwrap(),
        "--check",
        "--cpus",
        "0",
    ])
    .unwrap();
    assert_eq!(again.stdout, root.stdout);
}

/// pinrun run with its open-files limit (`RLIMIT_NOFILE`, `ulimit -n`)
/// set to `limit`.
fn with_nofile(limit: u32, args: &[&str]) -> std::process::Output {
    common::pinrun_under_ulimit("-n", limit)
        .args(args)
        .output()
        .unwrap()
}

/// An open that fails for want of a resource (`EMFILE` here: the
/// open-files limit) is not a missing file: with any limit, pinrun gives
/// the answer it gives without one, or refuses (`read-starved`, exit 125,
/// naming the file and the limit). Was: the IRQ files it could not open
/// read as missing, and `irq-on-cpu` went unreported (exit 1 with one
/// warning fewer on this machine at `ulimit -n 5`). On a dump (per-IRQ
/// files from an opened directory, the topology from the root) and on
/// this machine's own files.
#[test]
fn running_out_of_file_descriptors_never_changes_the_answer() {
    let dump = common::machine("nto/e2e-gcp-worker-a");
    let dump = dump.to_str().unwrap();
    let runs: [&[&str]; 4] = [
        &["--sysroot", dump, "--check", "--json"],
        &[
            "--sysroot",
            dump,
            "--dry-run",
            "--json",
            "--node",
            "0",
            "--cores",
            "1",
            "--",
            "true",
        ],
        &["--show", "--json"],
        &["--check", "--cpus", "0", "--json"],
    ];
    for args in runs {
        let full = with_nofile(1024, args);
        let mut refused = 0;
        for limit in 4..=12 {
            let out = with_nofile(limit, args);
            if out.status.code() == Some(125) {
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(
                    v["error"]["code"], "read-starved",
                    "{args:?} at {limit}: {v}"
                );
                let message = v["error"]["message"].as_str().unwrap();
                assert!(message.contains("(EMFILE)"), "{message}");
                let hint = v["error"]["hint"].as_str().unwrap();
                assert!(hint.contains(&format!("(it is {limit} here)")), "{hint}");
                refused += 1;
                continue;
            }
            assert_eq!(
                out.status.code(),
                full.status.code(),
                "{args:?} at ulimit -n {limit}"
            );
            if args[0] != "--sysroot" {
                // This machine: its topology, and the codes of its
                // findings (IRQ counts move between runs; an IRQ that has
                // fired on CPU 0 stays counted).
                let (a, b): (Value, Value) = (
                    serde_json::from_slice(&out.stdout).unwrap(),
                    serde_json::from_slice(&full.stdout).unwrap(),
                );
                assert_eq!(a["cpus"], b["cpus"], "{args:?} at ulimit -n {limit}");
                let codes = |v: &Value| -> Vec<String> {
                    v["findings"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|f| f["code"].to_string())
                        .collect()
                };
                assert_eq!(codes(&a), codes(&b), "{args:?} at ulimit -n {limit}");
            } else {
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&full.stdout),
                    "{args:?} at ulimit -n {limit}"
                );
            }
        }
        assert!(
            refused > 0,
            "{args:?}: never short of descriptors from ulimit -n 4"
        );
    }
}

/// The same rule for the modes that read the machine for something else
/// than a plan (session 7's break test): `--dump FILE` wrote a partial
/// dump and exited 0 (`ulimit -n 4`: 88 files of 163, every
/// `/proc/irq/*` missing; its replay lost `irq-on-cpu`), and `--pid PID`
/// printed "no findings" with exit 0 (5, 6) or called a live process
/// missing (`no-such-process`, 3, 4). At every limit each gives the
/// answer of the normal limit, or refuses with `read-starved` (exit 125)
/// and, for `--dump`, writes no file.
#[test]
fn a_dump_or_a_process_view_never_comes_out_partial() {
    let t = tempfile::tempdir().unwrap();
    let archive_entries = |path: &Path| -> Vec<String> {
        let o = std::process::Command::new("tar")
            .arg("tzf")
            .arg(path)
            .output()
            .unwrap();
        assert!(o.status.success(), "tar tzf {}", path.display());
        // `/proc/self` is each run's own PID. The other processes a dump
        // keeps (the tasks the checks need: other tests' real-time or
        // pinned commands, which come and go while this test runs) count
        // as kinds of files, not one by one, and their threads not at all.
        let v: std::collections::BTreeSet<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(
                |l| match l.strip_prefix("proc/").and_then(|r| r.split_once('/')) {
                    Some((pid, rest)) if pid.bytes().all(|b| b.is_ascii_digit()) => {
                        format!("proc/PID/{rest}")
                    }
                    _ => l.to_string(),
                },
            )
            .filter(|l| !l.starts_with("proc/PID/task/"))
            .collect();
        v.into_iter().collect::<Vec<_>>()
    };
    let refused = |out: &std::process::Output, what: &str| {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{what}: {err}");
        assert!(
            err.contains("(EMFILE)") && err.contains("hint: raise the open-files limit"),
            "{what}: {err}"
        );
    };
    let full_path = t.path().join("full.tar.gz");
    let full = with_nofile(1024, &["--dump", full_path.to_str().unwrap()]);
    assert_eq!(full.status.code(), Some(0));
    let want = archive_entries(&full_path);
    assert!(want.iter().any(|e| e.starts_with("proc/irq/")), "{want:?}");
    let mut dump_refused = 0;
    for limit in 3..=12 {
        let p = t.path().join(format!("n{limit}.tar.gz"));
        let out = with_nofile(limit, &["--dump", p.to_str().unwrap()]);
        if out.status.code() == Some(125) {
            refused(&out, &format!("--dump at ulimit -n {limit}"));
            assert!(
                !p.exists(),
                "--dump at ulimit -n {limit} left {}",
                p.display()
            );
            dump_refused += 1;
        } else {
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(archive_entries(&p), want, "--dump at ulimit -n {limit}");
        }
    }
    assert!(dump_refused > 0, "--dump never short of descriptors");

    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let codes = |out: &std::process::Output| -> Vec<String> {
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|f| f["code"].to_string())
            .collect()
    };
    let want = codes(&with_nofile(1024, &["--pid", &pid, "--json"]));
    let mut pid_refused = 0;
    let mut results = Vec::new();
    for limit in 3..=12 {
        let out = with_nofile(limit, &["--pid", &pid, "--json"]);
        results.push((limit, out));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(!want.is_empty(), "no findings on this machine's CPUs");
    for (limit, out) in &results {
        if out.status.code() == Some(125) {
            refused(out, &format!("--pid at ulimit -n {limit}"));
            pid_refused += 1;
        } else {
            assert_eq!(out.status.code(), Some(0), "--pid at ulimit -n {limit}");
            assert_eq!(codes(out), want, "--pid at ulimit -n {limit}");
        }
    }
    assert!(pid_refused > 0, "--pid never short of descriptors");
}

/// An archive given to `--sysroot` is unpacked into a temporary directory
/// that goes when pinrun ends, whatever its open-files limit: the removal
/// kept one descriptor per level and failed under a small `ulimit -n`,
/// leaving the unpacked tree (6.7 MB for this dump) behind at every limit
/// from 4 to 12, exits 0 included (session 7's break test); and an
/// archive that could not be opened or unpacked for want of descriptors
/// was called damaged (`sysroot-archive`). At every limit the answer is
/// the normal one or `read-starved`, and the directory is gone.
#[test]
fn an_unpacked_archive_goes_whatever_the_limit() {
    let archive = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/machines/cadvisor/epyc7402.tar.gz");
    let tmp = tempfile::tempdir().unwrap();
    let run = |limit: u32| {
        common::pinrun_under_ulimit("-n", limit)
            .args(["--sysroot", archive.to_str().unwrap(), "--show", "--json"])
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap()
    };
    let full = run(1024);
    assert_eq!(full.status.code(), Some(0));
    let mut refused = 0;
    for limit in 3..=12 {
        let out = run(limit);
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "ulimit -n {limit} left {left:?}");
        if out.status.code() == Some(125) {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["error"]["code"], "read-starved", "ulimit -n {limit}: {v}");
            refused += 1;
        } else {
            assert_eq!(out.status.code(), Some(0), "ulimit -n {limit}");
            assert_eq!(out.stdout, full.stdout, "ulimit -n {limit}");
        }
    }
    assert!(refused > 0, "never short of descriptors from ulimit -n 3");
}
