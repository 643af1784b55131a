//! The real-time competitor scan (`rt-competitor`) on the live machine: the
//! syscall path (`sched_getscheduler(2)` per process) and the file path
//! (`/proc/<pid>/stat` of every process) must find the same tasks. The
//! tests start their own busy-looping children (SCHED_FIFO needs root) and
//! kill them at the end; nothing else on the host is changed.

mod common;
use common::{is_root, pinrun, stat_field};
use pinrun::cpuset::CpuSet;
use pinrun::system::Root;
use pinrun::system::rt_tasks::{RtTask, read_rt_tasks, read_rt_tasks_files, read_rt_tasks_live};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A child process killed and reaped when dropped (also when an assertion
/// fails first).
struct Spinner(Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Spinner {
    /// `taskset -c CPU [chrt -R -f PRIO] sh -c 'while :; do :; done'`: a
    /// busy loop confined to `cpu`, under SCHED_FIFO `prio` with
    /// SCHED_RESET_ON_FORK (which `sched_getscheduler(2)` ORs into the
    /// policy) when given. Returns
    /// once the loop runs (comm `sh`, the policy set), or panics after 5 s.
    fn start(cpu: u32, fifo: Option<u32>) -> Self {
        let mut cmd = Command::new("taskset");
        cmd.args(["-c", &cpu.to_string()]);
        if let Some(p) = fifo {
            cmd.args(["chrt", "-R", "-f", &p.to_string()]);
        }
        cmd.args(["sh", "-c", "while :; do :; done"]);
        let s = Spinner(cmd.spawn().expect("spawn taskset"));
        let want_policy = if fifo.is_some() { 1 } else { 0 };
        let t = Instant::now();
        loop {
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", s.pid()))
                && stat.contains("(sh)")
                && stat_field(&stat, 41) == want_policy
            {
                return s;
            }
            assert!(t.elapsed() < Duration::from_secs(5), "child never started");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

/// The highest online CPU, when there are at least two (a busy real-time
/// loop on the only CPU would starve the test itself).
fn spare_cpu() -> Option<u32> {
    let t = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    let online = CpuSet::parse_sysfs_list(&t, None).ok()?;
    (online.len() >= 2).then(|| online.last()).flatten()
}

/// [`spare_cpu`] when this test runs as root (SCHED_FIFO needs it here);
/// `None` after saying SKIPPED otherwise.
fn root_and_spare_cpu() -> Option<u32> {
    if !is_root() {
        common::skip("SCHED_FIFO needs root here");
        return None;
    }
    let cpu = spare_cpu();
    if cpu.is_none() {
        common::skip("needs 2 online CPUs");
    }
    cpu
}

/// Both paths, retried a few times until they agree (a process of the
/// host may start or exit between the two scans).
fn both_paths() -> (Vec<RtTask>, Vec<RtTask>) {
    let root = Root::new("/");
    let me = Some(std::process::id());
    let mut last = None;
    for _ in 0..5 {
        let live = read_rt_tasks_live(&root, me).expect("/ is this process's live /proc");
        let files = read_rt_tasks_files(&root, me);
        if live == files {
            return (live, files);
        }
        last = Some((live, files));
    }
    last.unwrap()
}

/// The `rt-competitor` findings of `pinrun --dry-run --json ARGS` on the
/// live machine.
fn competitors(args: &[&str]) -> Vec<String> {
    let out = pinrun()
        .args(["--dry-run", "--json"])
        .args(args)
        .arg("true")
        .output()
        .expect("run pinrun");
    assert!(out.status.success(), "{args:?}: {out:?}");
    rt_competitor_messages(&out.stdout)
}

/// The messages of the `rt-competitor` findings of a `--json` output.
fn rt_competitor_messages(stdout: &[u8]) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(stdout).expect("JSON");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "rt-competitor")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

/// A SCHED_FIFO busy loop confined to one CPU is found by both paths as
/// the same task (pid, comm `sh`, priority, state R, that CPU), by the
/// dispatching `read_rt_tasks`, and reported by `--fifo` at its priority on
/// that CPU but not at a higher one.
#[test]
fn fifo_child_found_by_both_paths() {
    let Some(cpu) = root_and_spare_cpu() else {
        return;
    };
    let child = Spinner::start(cpu, Some(1));
    let want = RtTask {
        pid: child.pid(),
        tid: child.pid(),
        comm: "sh".into(),
        priority: 1,
        state: 'R',
        cpus: std::iter::once(cpu).collect(),
    };
    let (live, files) = both_paths();
    assert_eq!(live, files, "the two paths disagree");
    assert!(live.contains(&want), "{want:?} not in {live:?}");
    let dispatched = read_rt_tasks(&Root::new("/"), Some(std::process::id()));
    assert!(dispatched.contains(&want), "{dispatched:?}");

    let c = cpu.to_string();
    let found = competitors(&["--cpus", &c, "--fifo", "1"]);
    let tag = format!(
        "process {} (sh) is runnable at real-time priority 1",
        want.pid
    );
    assert!(found.iter().any(|m| m.starts_with(&tag)), "{found:?}");
    let found = competitors(&["--cpus", &c, "--fifo", "2"]);
    assert!(!found.iter().any(|m| m.starts_with(&tag)), "{found:?}");
}

/// `sched_getscheduler` reads a policy without the reset-on-fork flag,
/// and fails with ESRCH for a pid no process can have (`pid_max`).
#[test]
fn sched_getscheduler_reads_policies() {
    use pinrun::ffi::sched_getscheduler;
    let me = sched_getscheduler(std::process::id()).expect("own policy");
    assert!([0, 1, 2, 3, 5, 6].contains(&me), "{me}");
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let e = sched_getscheduler(max).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ESRCH), "{e}");
    if is_root() {
        let Some(cpu) = spare_cpu() else { return };
        let child = Spinner::start(cpu, Some(1));
        assert_eq!(sched_getscheduler(child.pid()).unwrap(), 1);
    }
}

/// A SCHED_OTHER busy loop is found by neither path (runs unprivileged).
#[test]
fn other_child_not_reported() {
    let Some(cpu) = spare_cpu() else {
        common::skip("needs 2 online CPUs");
        return;
    };
    let child = Spinner::start(cpu, None);
    let (live, files) = both_paths();
    assert_eq!(live, files, "the two paths disagree");
    assert!(
        !live.iter().any(|t| t.pid == child.pid()),
        "SCHED_OTHER child {} reported: {live:?}",
        child.pid()
    );
}

/// Below a sysroot the syscall path declines (a dump's pids are not live)
/// and `read_rt_tasks` reads the files even when given a pid to skip.
#[test]
fn dumps_use_the_file_path() {
    let t = tempfile::tempdir().unwrap();
    // Fields 3..=52 of proc(5): state R, rt_priority (40) 50, policy (41) 1.
    let mut f = vec!["0"; 50];
    (f[0], f[37], f[38]) = ("R", "50", "1");
    common::write_file(
        t.path(),
        "proc/4242/stat",
        &format!("4242 (spin) {}\n", f.join(" ")),
    );
    common::write_file(t.path(), "proc/4242/status", "Cpus_allowed_list:\t1\n");
    // A /proc/self naming this process must not make a dump look live.
    std::os::unix::fs::symlink(std::process::id().to_string(), t.path().join("proc/self")).unwrap();
    let root = Root::new(t.path());
    assert_eq!(read_rt_tasks_live(&root, Some(1)), None);
    let want = vec![RtTask {
        pid: 4242,
        tid: 4242,
        comm: "spin".into(),
        priority: 50,
        state: 'R',
        cpus: std::iter::once(1).collect(),
    }];
    assert_eq!(read_rt_tasks(&root, Some(1)), want);
    assert_eq!(read_rt_tasks(&root, None), want);
    assert_eq!(read_rt_tasks_files(&root, Some(4242)), vec![]);
}

/// Under `unshare -p -f` (a new PID namespace, the host's /proc kept),
/// pinrun's pid in /proc is not `getpid()`: it must still not report itself,
/// running at SCHED_FIFO 50, as a competitor (found by a break test).
#[test]
fn not_its_own_competitor_in_another_pid_namespace() {
    if !is_root() || Command::new("unshare").arg("--help").output().is_err() {
        common::skip("needs root and unshare(1)");
        return;
    }
    // Every CPU pinrun may use: its own allowed set is then among them.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let out = Command::new("unshare")
        .args(["-p", "-f", "chrt", "-f", "50", env!("CARGO_BIN_EXE_pinrun")])
        .args([
            "--dry-run",
            "--json",
            "--cpus",
            &allowed,
            "--fifo",
            "1",
            "--",
            "true",
        ])
        .output()
        .expect("run unshare");
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let own: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "rt-competitor")
        .filter(|f| f["message"].as_str().unwrap().contains("(pinrun)"))
        .collect();
    assert!(own.is_empty(), "{own:?}");
}

/// `--show`'s who-runs-where (issue 18) lists, from the same scan, a
/// process pinned with `taskset -c CPU` (priority 0, `cpus` = [CPU]) and,
/// as root, one under `chrt -f 3` (priority 3), each with the CPUs
/// taskset gave it; the text names them on that CPU's line.
#[test]
fn show_lists_who_runs_where() {
    let Some(cpu) = spare_cpu() else {
        common::skip("needs two online CPUs");
        return;
    };
    let pinned = Spinner::start(cpu, None);
    let rt = is_root().then(|| Spinner::start(cpu, Some(3)));
    let out = pinrun().args(["--show", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tasks = v["tasks"].as_array().expect("tasks");
    let find = |pid: u32| {
        tasks
            .iter()
            .find(|t| t["pid"] == pid)
            .unwrap_or_else(|| panic!("pid {pid} missing: {tasks:?}"))
    };
    let t = find(pinned.pid());
    assert_eq!(
        (&t["priority"], &t["cpus"]),
        (&serde_json::json!(0), &serde_json::json!([cpu]))
    );
    if let Some(rt) = &rt {
        let t = find(rt.pid());
        assert_eq!(
            (&t["priority"], &t["cpus"]),
            (&serde_json::json!(3), &serde_json::json!([cpu]))
        );
    }
    let text = String::from_utf8(pinrun().arg("--show").output().unwrap().stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("  CPU {cpu}: ")))
        .unwrap_or_else(|| panic!("no line for CPU {cpu}:\n{text}"));
    assert!(
        line.contains(&format!("{} sh (pinned, ", pinned.pid())),
        "{line}"
    );
    if let Some(rt) = &rt {
        assert!(line.contains(&format!("{} sh (rt 3, ", rt.pid())), "{line}");
    }
}

/// Issue 17: on a host with 600 more processes (idle `sleep`s, enough for
/// the file scan to use several threads), the file scan on several threads
/// finds what it finds on one and what the syscall scan finds (the same
/// tasks, in pid order), and a sleeping SCHED_FIFO child among those
/// processes is found (as root).
#[test]
fn threaded_scans_find_what_one_thread_finds() {
    let idle: Vec<Spinner> = (0..600)
        .map(|_| {
            Spinner(
                Command::new("sleep")
                    .arg("600")
                    .spawn()
                    .expect("spawn sleep"),
            )
        })
        .collect();
    let fifo = if is_root() {
        Some(sleeping_fifo(9))
    } else {
        common::skip("the SCHED_FIFO child needs root; idle processes only");
        None
    };
    let me = Some(std::process::id());
    let scan = |root: Root| {
        (
            read_rt_tasks_live(&root, me).expect("live /proc"),
            read_rt_tasks_files(&root, me),
        )
    };
    // Another test's child may start or exit between two scans: retried.
    let mut agreed = false;
    for _ in 0..5 {
        let one = scan(Root::new("/").with_threads(1));
        let many = scan(Root::new("/").with_threads(3));
        let default = scan(Root::new("/"));
        if one == many && many == default && one.0 == one.1 {
            if let Some(f) = &fifo {
                assert!(one.0.iter().any(|t| t.pid == f.pid() && t.priority == 9));
            }
            agreed = true;
            break;
        }
    }
    assert!(agreed, "threaded scans disagree with one thread");
    drop(idle);
}

/// A sleeping `chrt -f PRIO sleep 600` (state S: listed by the scans, no
/// `rt-competitor` finding of the other tests, which run beside this one,
/// can count it), once `sleep` runs.
fn sleeping_fifo(prio: u32) -> Spinner {
    let s = Spinner(
        Command::new("chrt")
            .args(["-f", &prio.to_string(), "sleep", "600"])
            .spawn()
            .expect("spawn chrt"),
    );
    let t = Instant::now();
    while std::fs::read_to_string(format!("/proc/{}/stat", s.pid()))
        .map_or(true, |st| !st.contains("(sleep)"))
    {
        assert!(t.elapsed() < Duration::from_secs(5), "chrt never ran sleep");
        std::thread::sleep(Duration::from_millis(5));
    }
    s
}

/// Issue 17: the real-time tasks a `--fifo` request scans ahead, on a
/// helper thread while the machine is read and planned
/// (`SystemState::read_scoped_ahead` with the overlap forced on), are the
/// ones it scans after planning on one thread (forced off): a sleeping
/// SCHED_FIFO 9 child is found either way, and this process (the helper is
/// one of its threads) is not listed.
#[test]
fn scan_ahead_finds_what_the_scan_after_planning_finds() {
    use clap::Parser;
    use pinrun::app::scope::{for_request, read_extras_for, rt_scan_ahead};
    use pinrun::system::SystemState;
    use pinrun::system::rt_tasks::RtScan;
    if !is_root() {
        common::skip("the SCHED_FIFO child needs root");
        return;
    }
    let fifo = sleeping_fifo(9);
    let req =
        pinrun::cli::Cli::try_parse_from(["pinrun", "--dry-run", "--fifo", "1", "--", "true"])
            .unwrap()
            .into_request()
            .unwrap();
    let scan = |on: bool| {
        let root = Root::new("/").overlapping(on);
        let (mut sys, ahead) =
            SystemState::read_scoped_ahead(&root, &for_request(&req), rt_scan_ahead(&req));
        assert!(
            matches!(
                (&ahead, on),
                (Some(RtScan::Ahead(_)), true) | (Some(RtScan::Here(_)), false)
            ),
            "{ahead:?}"
        );
        let p = pinrun::plan::plan(&sys, &req).expect("plan");
        let checked = pinrun::check::checked_cpus(&sys, &p);
        read_extras_for(&mut sys, &root, &req, &checked, ahead);
        sys.rt_tasks
    };
    // Another test's child may start or exit between two scans: retried.
    let mut last = None;
    for _ in 0..5 {
        let (off, on) = (scan(false), scan(true));
        if off == on {
            assert!(
                on.iter()
                    .any(|t| t.pid == fifo.pid() && t.priority == 9 && t.state == 'S'),
                "{on:?}"
            );
            assert!(!on.iter().any(|t| t.pid == std::process::id()), "{on:?}");
            return;
        }
        last = Some((off, on));
    }
    panic!("the scans ahead and after planning disagree: {last:?}");
}

/// `tests/helpers/rt_threads.c` running: main thread SCHED_OTHER, thread
/// `spin` SCHED_FIFO 20 busy on one CPU, thread `nap` SCHED_FIFO 7
/// asleep; killed and reaped when dropped.
struct RtThreads {
    child: Spinner,
    spin: u32,
    nap: u32,
    _dir: tempfile::TempDir,
}

impl RtThreads {
    /// Compiles and starts the helper on `cpu`; `None` (after SKIPPED)
    /// without gcc.
    fn start(cpu: u32) -> Option<Self> {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let bin = common::compile("rt_threads", &["-O2", "-pthread"], dir.path())?;
        let mut child = Spinner(
            Command::new(bin)
                .args([cpu.to_string(), "20".into(), "7".into()])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("spawn rt_threads"),
        );
        let mut line = String::new();
        std::io::BufReader::new(child.0.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n", "rt_threads failed");
        let pid = child.pid();
        let tid = |name: &str| {
            std::fs::read_dir(format!("/proc/{pid}/task"))
                .unwrap()
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .find(|t| {
                    std::fs::read_to_string(format!("/proc/{pid}/task/{t}/comm"))
                        .is_ok_and(|c| c.trim_end() == name)
                })
                .unwrap_or_else(|| panic!("no thread {name}"))
        };
        let (spin, nap) = (tid("spin"), tid("nap"));
        // The kernel's view: both threads SCHED_FIFO (policy 1, field 41),
        // the main thread SCHED_OTHER.
        let policy = |t: u32| {
            stat_field(
                &std::fs::read_to_string(format!("/proc/{pid}/task/{t}/stat")).unwrap(),
                41,
            )
        };
        assert_eq!((policy(pid), policy(spin), policy(nap)), (0, 1, 1));
        Some(RtThreads {
            child,
            spin,
            nap,
            _dir: dir,
        })
    }
}

/// The `rt-competitor` messages of `pinrun [--sysroot S] --check --json
/// --cpus CPU --fifo 10`.
fn check_competitors(sysroot: Option<&str>, cpu: u32) -> Vec<String> {
    let mut cmd = pinrun();
    if let Some(s) = sysroot {
        cmd.args(["--sysroot", s]);
    }
    let out = cmd
        .args([
            "--check",
            "--json",
            "--cpus",
            &cpu.to_string(),
            "--fifo",
            "10",
        ])
        .output()
        .expect("run pinrun");
    rt_competitor_messages(&out.stdout)
}

/// `--show --json`'s tasks and `--show`'s text, below `sysroot` if given.
fn show_both(sysroot: Option<&str>) -> (Vec<serde_json::Value>, String) {
    let run = |json: bool| {
        let mut cmd = pinrun();
        if let Some(s) = sysroot {
            cmd.args(["--sysroot", s]);
        }
        cmd.arg("--show");
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().expect("run pinrun");
        assert!(out.status.success(), "{out:?}");
        out.stdout
    };
    let v: serde_json::Value = serde_json::from_slice(&run(true)).expect("JSON");
    let tasks = v["tasks"].as_array().expect("tasks").clone();
    (tasks, String::from_utf8(run(false)).unwrap())
}

/// Finding 1: a real-time thread that is not its process's main thread
/// (the usual layout of real-time applications) is a competitor, and who
/// runs where lists it, runnable (`spin`, FIFO 20) or asleep (`nap`,
/// FIFO 7), on the live machine and in the replay of a `--dump`. The old
/// scan read `/proc/PID/stat` (the main thread) only and found neither.
#[test]
fn real_time_threads_beside_the_main_thread() {
    let Some(cpu) = root_and_spare_cpu() else {
        return;
    };
    let Some(app) = RtThreads::start(cpu) else {
        return;
    };
    let pid = app.child.pid();
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("m.tar.gz");
    let out = pinrun()
        .args(["--dump", dump.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    for sysroot in [None, dump.to_str()] {
        let found = check_competitors(sysroot, cpu);
        let want = format!(
            "thread {pid}/{} (spin) is runnable at real-time priority 20",
            app.spin
        );
        assert!(
            found.iter().any(|m| m.starts_with(&want)),
            "{sysroot:?}: {found:?}"
        );
        let (tasks, text) = show_both(sysroot);
        for (tid, prio, cpus) in [
            (app.spin, 20, serde_json::json!([cpu])),
            (app.nap, 7, serde_json::Value::Null),
        ] {
            let t = tasks
                .iter()
                .find(|t| t["pid"] == pid && t["tid"] == tid)
                .unwrap_or_else(|| panic!("{sysroot:?}: {pid}/{tid} missing: {tasks:?}"));
            assert_eq!(t["priority"], prio, "{t}");
            assert_eq!(t["realtime"], true, "{t}");
            if !cpus.is_null() {
                assert_eq!(t["cpus"], cpus, "{t}");
                assert_eq!(t["state"], "R", "{t}");
            }
        }
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("  CPU {cpu}: ")))
            .unwrap_or_else(|| panic!("{sysroot:?}: no line for CPU {cpu}:\n{text}"));
        assert!(
            line.contains(&format!("{pid}/{} spin (rt 20, R)", app.spin)),
            "{line}"
        );
        assert!(
            line.contains(&format!("{pid}/{} nap (rt 7, ", app.nap)),
            "{line}"
        );
        // The SCHED_OTHER, unpinned main thread is neither.
        assert!(
            !tasks.iter().any(|t| t["pid"] == pid && t["tid"] == pid),
            "{tasks:?}"
        );
    }
}
