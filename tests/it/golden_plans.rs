//! Golden comparison (issue 13): pinrun's stdout and exit status for a fixed
//! set of requests on every fixture dump, compared with
//! `tests/golden/plans.jsonl`, recorded from the code before the issue-13
//! refactor. A refactor must leave every line identical.
//!
//! Regenerate (only when a change of output is intended, and say so in the
//! commit): `PINRUN_BLESS=1 cargo test --test it golden_plans`.
//!
//! One line per (case, machine): `{"case":…,"machine":…,"exit":…,"stdout":…}`.
//! Outputs longer than [`INLINE_MAX`] bytes are kept as their length and
//! FNV-1a 64-bit hash (`"stdout_fnv"`) to keep the file small; the short
//! ones stay readable so that a diff shows what moved. Nothing is excluded:
//! with `--sysroot` every case reads the dump only (claims come from the
//! dump's kubelet file, not the live state directory), so the output does
//! not depend on the machine running the test, except `--emit`'s
//! `ExecStart=pinrun …` line, which names the absolute path of the binary
//! under test: it is replaced by `PINRUN`.

use crate::common;

use std::path::PathBuf;
use std::sync::Mutex;

/// Longest stdout kept verbatim in the golden file.
const INLINE_MAX: usize = 2048;

/// The requests, by name.
const CASES: &[(&str, &[&str])] = &[
    ("cpus0", &["--dry-run", "--json", "--cpus", "0"]),
    ("cpus-missing", &["--dry-run", "--json", "--cpus", "4095"]),
    (
        "node0-cores1",
        &["--dry-run", "--json", "--node", "0", "--cores", "1"],
    ),
    (
        "cores2-smt-membind",
        &["--dry-run", "--json", "--cores", "2", "--smt", "--membind"],
    ),
    ("isolated", &["--dry-run", "--json", "--isolated"]),
    (
        "interleave-all",
        &["--dry-run", "--json", "--interleave", "all"],
    ),
    (
        "preferred1",
        &["--dry-run", "--json", "--preferred", "1", "--cores", "1"],
    ),
    (
        "fifo10",
        &["--dry-run", "--json", "--cores", "1", "--fifo", "10"],
    ),
    (
        "deadline",
        &[
            "--dry-run",
            "--json",
            "--node",
            "0",
            "--deadline",
            "--sched-runtime",
            "1ms",
            "--sched-deadline",
            "5ms",
            "--sched-period",
            "10ms",
        ],
    ),
    (
        "text-cores2",
        &["--dry-run", "-v", "--cores", "2", "--rr", "5"],
    ),
    ("check", &["--check", "--json"]),
    ("check-text", &["--check"]),
    (
        "emit-fifo",
        &[
            "--emit",
            "systemd",
            "--node",
            "0",
            "--cores",
            "2",
            "--fifo",
            "10",
            "--membind",
            "--",
            "/bin/true",
        ],
    ),
    (
        "emit-batch",
        &[
            "--emit",
            "systemd",
            "--cpus",
            "0-1",
            "--batch",
            "--nice",
            "5",
            "--interleave",
            "all",
            "--",
            "app",
            "x",
        ],
    ),
    (
        "emit-deadline",
        &[
            "--emit",
            "systemd",
            "--deadline",
            "--sched-runtime",
            "1ms",
            "--sched-period",
            "10ms",
            "--",
            "app",
        ],
    ),
    ("show", &["--show", "--json"]),
    ("show-text", &["--show", "-v"]),
];

/// FNV-1a, 64 bits.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The unit's warning that the pinrun which wrote it is not installed:
/// it depends on where this checkout's build lies and on `PATH`, not on the
/// machine, so it is left out of the golden output
/// (`fleet::a_unit_naming_an_uninstalled_pinrun_warns` asserts it).
const UNINSTALLED: &str =
    "# warning: ExecStart= runs PINRUN, the pinrun that wrote this unit, which is neither on PATH";

fn line(case: &str, machine: &str, out: &std::process::Output) -> String {
    let stdout: String = String::from_utf8_lossy(&out.stdout)
        .replace(env!("CARGO_BIN_EXE_pinrun"), "PINRUN")
        .split_inclusive('\n')
        .filter(|l| !l.starts_with(UNINSTALLED))
        .collect();
    let mut v = serde_json::json!({
        "case": case,
        "machine": machine,
        "exit": out.status.code(),
    });
    if stdout.len() <= INLINE_MAX {
        v["stdout"] = stdout.into();
    } else {
        v["stdout_len"] = stdout.len().into();
        v["stdout_fnv"] = format!("{:016x}", fnv(stdout.as_bytes())).into();
    }
    v.to_string()
}

#[test]
fn golden_plans() {
    let machines = common::all_machines();
    let jobs: Vec<(usize, &str, &[&str], String)> = machines
        .iter()
        .flat_map(|m| CASES.iter().map(move |(c, a)| (*c, *a, m.clone())))
        .enumerate()
        .map(|(i, (c, a, m))| (i, c, a, m))
        .collect();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_pinrun"));
    let results: Mutex<Vec<Option<String>>> = Mutex::new(vec![None; jobs.len()]);
    let next = Mutex::new(0usize);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some((_, case, args, m)) = jobs.get(i) else {
                        return;
                    };
                    let out = std::process::Command::new(&bin)
                        .arg("--sysroot")
                        .arg(common::machine(m))
                        .args(*args)
                        .output()
                        .expect("run pinrun");
                    results.lock().unwrap()[i] = Some(line(case, m, &out));
                }
            });
        }
    });
    let got: Vec<String> = results
        .into_inner()
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/plans.jsonl");
    if std::env::var_os("PINRUN_BLESS").is_some() {
        std::fs::write(&path, got.join("\n") + "\n").expect("write golden file");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .expect("tests/golden/plans.jsonl (PINRUN_BLESS=1 writes it)");
    let want: Vec<&str> = want.lines().collect();
    let mut diffs = Vec::new();
    for (i, g) in got.iter().enumerate() {
        match want.get(i) {
            Some(w) if w == g => {}
            Some(w) => diffs.push(format!("want {w}\n got {g}")),
            None => diffs.push(format!("extra {g}")),
        }
    }
    if want.len() > got.len() {
        diffs.push(format!(
            "{} golden lines not produced",
            want.len() - got.len()
        ));
    }
    assert!(
        diffs.is_empty(),
        "{} of {} cases differ from tests/golden/plans.jsonl (PINRUN_BLESS=1 to regenerate if intended):\n{}",
        diffs.len(),
        got.len(),
        diffs
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
