//! `--pid` (issue 18) from the command line: what is refused before
//! anything is read or changed, each with exit 125, its error code and
//! the option named; and the read-only view of pinrun itself (`--pid
//! self`), compared with its own /proc/self/status. Changes of a running
//! process are live tests (tests/live.rs).

use crate::common::{assert_status, pinrun};
use serde_json::Value;

/// The error object of a refused `--json` run.
fn refused(args: &[&str]) -> Value {
    let out = pinrun().arg("--json").args(args).output().unwrap();
    assert_status(&out, 125);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON error");
    v["error"].clone()
}

#[test]
fn bad_pid_values_are_refused() {
    // Non-canonical numbers too: "+5" and "05" parse as 5 in Rust and C.
    for bad in [
        "abc",
        "0",
        "-3",
        "2147483648",
        "self2",
        "",
        "+5",
        "05",
        " 5",
    ] {
        let e = refused(&[&format!("--pid={bad}")]);
        assert_eq!(e["code"], "bad-pid", "{bad}: {e}");
        assert!(e["message"].as_str().unwrap().starts_with("--pid: "), "{e}");
    }
}

#[test]
fn pid_conflicts_and_requirements() {
    // A command and a process at once; --tid/--migrate without --pid.
    for args in [
        &["--pid", "self", "--", "true"][..],
        &["--tid", "1", "--dry-run"],
        &["--migrate", "--dry-run", "--", "true"],
        &["--pid", "self", "--show"],
        // Options of a launch that --pid would otherwise ignore.
        &[
            "--pid",
            "self",
            "--cpus",
            "0",
            "--thread-map",
            "w*=0",
            "--dry-run",
        ],
        &[
            "--pid",
            "self",
            "--cpus",
            "0",
            "--omp",
            "cores",
            "--dry-run",
        ],
        &["--pid", "self", "--cpus", "0", "--probe=10ms", "--dry-run"],
        // Issue 33: the dry run listed IRQ moves the change never made.
        &[
            "--pid",
            "1",
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            "0",
            "--dry-run",
        ],
        &["--pid", "1", "--exclusive", "--steer-irqs", "--cpus", "0"],
    ] {
        assert_eq!(refused(args)["code"], "usage", "{args:?}");
    }
    let e = refused(&["--pid", "self", "--migrate", "--migrate-limit", "12Q"]);
    assert_eq!(e["code"], "bad-size");
}

/// set_mempolicy(2) acts on the caller only: a memory policy for another
/// process is refused (with --migrate offered), nothing applied.
#[test]
fn memory_policy_of_a_process_is_refused() {
    let e = refused(&["--pid", "1", "--membind", "0"]);
    assert_eq!(e["code"], "pid-mempolicy", "{e}");
    assert!(e["hint"].as_str().unwrap().contains("--migrate"), "{e}");
}

/// A process that exited: pidfd_open(2) answers ESRCH.
#[test]
fn an_exited_process_is_named() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let e = refused(&["--pid", &pid.to_string()]);
    assert_eq!(e["code"], "no-such-process", "{e}");
    let e = refused(&["--pid", "self", "--tid", "1"]);
    assert_eq!(e["code"], "no-such-process", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("not a thread of"),
        "{e}"
    );
}

/// `--pid self` (numactl --show): pinrun's one thread, whose Name, cpulist
/// and Mems_allowed_list are what a process started the same way reads
/// in its own /proc/self/status (`grep` run under the same parent).
#[test]
fn pid_self_is_pinrun_as_its_status_says() {
    let out = pinrun().args(["--pid", "self", "--json"]).output().unwrap();
    assert_status(&out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1, "{v}");
    assert_eq!(threads[0]["tid"], v["pid"]);
    assert_eq!(threads[0]["name"], "pinrun");
    let status = String::from_utf8(
        std::process::Command::new("grep")
            .args(["-E", "^(Cpus|Mems)_allowed_list", "/proc/self/status"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    assert_eq!(threads[0]["cpulist"], cpus);
}

/// Field `n` (proc(5) numbering) of `/proc/PID/stat`, after the command.
fn stat_field(pid: u32, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n - 3).map(str::to_string)
}

/// Processes the kernel has nothing to change on are refused, the dry run
/// as the launch: a zombie (state Z in /proc/PID/stat, its threads gone)
/// and a kernel thread (PF_KTHREAD 0x00200000 in field 9; kthreadd and
/// kworkers answer EINVAL to sched_setaffinity, PF_NO_SETAFFINITY).
#[test]
fn zombies_and_kernel_threads_are_refused() {
    // A child that exited and is not waited for: a zombie.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let zombie = child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while stat_field(zombie, 3).as_deref() != Some("Z") {
        assert!(std::time::Instant::now() < deadline, "no zombie");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for mode in ["--dry-run", "--check"] {
        let e = refused(&["--pid", &zombie.to_string(), "--cpus", "0", mode]);
        assert_eq!(e["code"], "no-such-process", "{e}");
        assert!(e["message"].as_str().unwrap().contains("state Z"), "{e}");
    }
    child.wait().unwrap();
    // A kernel thread of this PID namespace, if it shows any.
    let kthread = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|&p| {
            stat_field(p, 9)
                .and_then(|f| f.parse::<u64>().ok())
                .is_some_and(|f| f & 0x0020_0000 != 0)
        });
    let Some(k) = kthread else {
        crate::common::skip("no kernel thread visible in this PID namespace");
        return;
    };
    let e = refused(&["--pid", &k.to_string(), "--cpus", "0", "--dry-run"]);
    assert!(
        e["message"].as_str().unwrap().contains("kernel thread"),
        "{e}"
    );
}

/// A change says what it did: `--json` prints the plan with the threads
/// changed (what taskset -cp then reads back), text one line on stderr
/// (the CPUs and how many threads); `--pid self` with a change is refused
/// (pinrun exits right after: nothing would last).
#[test]
fn a_change_says_what_it_did() {
    let cpus = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Cpus_allowed_list:")
                .map(|v| v.trim().to_string())
        })
        .unwrap();
    let cpu = pinrun::cpuset::CpuSet::parse_sysfs_list(&cpus, None)
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = sleeper.id().to_string();
    let json = pinrun()
        .args(["--pid", &pid, "--cpus", &cpu, "--json"])
        .output()
        .unwrap();
    let taskset = std::process::Command::new("taskset")
        .args(["-cp", &pid])
        .output()
        .unwrap();
    let text = pinrun()
        .args(["--pid", &pid, "--cpus", &cpu])
        .output()
        .unwrap();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_status(&json, 0);
    let v: Value = serde_json::from_slice(&json.stdout).expect("JSON on stdout");
    assert_eq!(v["changed"], serde_json::json!([sleeper.id()]), "{v}");
    assert_eq!(v["already"], serde_json::json!([]), "{v}");
    let read_back = String::from_utf8_lossy(&taskset.stdout);
    assert_eq!(read_back.rsplit(' ').next().unwrap().trim(), cpu);
    assert_eq!(v["cpulist"], cpu, "{v}");
    assert_status(&text, 0);
    assert_eq!(
        String::from_utf8_lossy(&text.stderr),
        // The JSON run moved it: this one verifies and changes nothing.
        format!("pinrun: --pid {pid}: CPU {cpu} for 1 thread (already so: none changed)\n")
    );
    assert_eq!(refused(&["--pid", "self", "--cpus", &cpu])["code"], "usage");
}

/// Names are the kernel's `comm` (what /proc/PID/comm holds), one rule in
/// text and JSON: a backslash stays single (status's `Name` doubles it),
/// and in text a control character (ESC) is shown as `?`, never sent to
/// the terminal. The process is sleep(1) run through a symlink so named.
#[test]
fn thread_names_are_comm_and_never_raw_control_characters() {
    let dir = crate::common::tempdir();
    let link = dir.path().join("a\\b\x1bc");
    std::os::unix::fs::symlink("/bin/sleep", &link).unwrap();
    let mut child = std::process::Command::new(&link).arg("60").spawn().unwrap();
    let pid = child.id().to_string();
    // Until the child has exec'd (before, comm is this test thread's).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let comm = loop {
        let c = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
        if c.starts_with('a') || std::time::Instant::now() > deadline {
            break c.trim_end_matches('\n').to_string();
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let json = pinrun().args(["--pid", &pid, "--json"]).output().unwrap();
    let text = pinrun().args(["--pid", &pid]).output().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(comm, "a\\b\x1bc");
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["threads"][0]["name"], comm.as_str(), "{v}");
    assert_eq!(v["name"], comm.as_str(), "{v}");
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(
        text.contains(&format!("process {pid} (a\\b?c)")),
        "{text:?}"
    );
}
