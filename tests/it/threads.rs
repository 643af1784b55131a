//! Per-thread placement (issue 22): `--omp` against util-linux's lscpu
//! cores and a real OpenMP runtime (libgomp, static), `--thread-map` with
//! a program that names its threads after creation, the kernel's
//! `Cpus_allowed_list` of each thread as the truth, and the watcher
//! leaving nothing behind.

use crate::common::{self, assert_status, compile, lscpu_parse, machines, pinrun};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The CPUs this test may use: at least two, else `None` (after SKIPPED).
fn two_cpus() -> Option<(u32, u32)> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let cpus: Vec<u32> = list
        .split(',')
        .flat_map(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()
        })
        .collect();
    if cpus.len() < 2 {
        common::skip(format!("needs two CPUs, has {list}"));
        return None;
    }
    Some((cpus[0], cpus[1]))
}

/// "NAME CPULIST" lines of the helper, by name (the main thread keeps the
/// program's name).
fn by_name(stdout: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| {
            let (n, c) = l.split_once(' ')?;
            Some((n.to_string(), c.to_string()))
        })
        .collect()
}

/// The proof, with perf events (where perf_event_open(2) permits;
/// the log's first line says which) and with the polling fallback
/// (PINRUN_THREAD_WATCH=poll): threads named w1, w2, w3 50 ms after
/// creation end on the CPUs their rule says, as the kernel reports them in
/// /proc/self/task/*/status; `*=rest` gets the whole plan when the @
/// targets name every position, as the main thread does. The log has a
/// rename event per worker with the affinity read back.
#[test]
fn thread_map_follows_renames() {
    thread_map_follows_renames_with(None);
}

#[test]
fn thread_map_follows_renames_polling() {
    thread_map_follows_renames_with(Some("poll"));
}

/// pinrun's arguments placing the `named_threads` program's workers:
/// `--cpus A,B --thread-map w1=@0,w2=@1,*=rest --thread-log LOG --
/// PROGRAM MS` (its threads live MS milliseconds).
fn thread_map_argv(
    a: u32,
    b: u32,
    log: &std::path::Path,
    program: &std::path::Path,
    ms: &str,
) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = ["--cpus".into(), format!("{a},{b}").into()].into();
    v.extend(["--thread-map", "w1=@0,w2=@1,*=rest", "--thread-log"].map(Into::into));
    v.push(log.into());
    v.push("--".into());
    v.push(program.into());
    v.push(ms.into());
    v
}

fn thread_map_follows_renames_with(watch: Option<&str>) {
    let Some((a, b)) = two_cpus() else { return };
    let dir = common::tempdir();
    let Some(helper) = compile("named_threads", &["-O2", "-pthread"], dir.path()) else {
        return;
    };
    let log = dir.path().join("threads.jsonl");
    let mut cmd = pinrun();
    match watch {
        Some(w) => cmd.env("PINRUN_THREAD_WATCH", w),
        None => cmd.env_remove("PINRUN_THREAD_WATCH"),
    };
    let out = cmd
        .args(thread_map_argv(a, b, &log, &helper, "5000"))
        .output()
        .unwrap();
    assert_status(&out, 0);
    let got = by_name(&out.stdout);
    let both = if b == a + 1 {
        format!("{a}-{b}")
    } else {
        format!("{a},{b}")
    };
    let want: BTreeMap<String, String> = [
        ("named_threads", both.as_str()),
        ("w1", &a.to_string()),
        ("w2", &b.to_string()),
        ("w3", both.as_str()),
    ]
    .into_iter()
    .map(|(n, c)| (n.to_string(), c.to_string()))
    .collect();
    assert_eq!(got, want, "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines[0]["event"], "start");
    let mechanism = lines[0]["mechanism"].as_str().unwrap();
    if watch == Some("poll") {
        assert_eq!(mechanism, "poll");
    } else if mechanism == "poll" {
        common::skip("perf_event_open(2) refused here: polled");
    }
    for (name, cpu) in [("w1", a), ("w2", b)] {
        let l = lines
            .iter()
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {lines:?}"));
        assert_eq!(l["event"], "rename");
        assert_eq!(l["read_back"], cpu.to_string());
        assert!(l["order"].as_u64().unwrap() >= 1);
    }
}

/// A caller that closed stdin and stdout (a daemon's `<&- >&-`) gets the
/// same watcher: pinrun opens `/dev/null` on the closed standard
/// descriptors before `main` (`ffi`'s constructor, as the Rust runtime's
/// start did), so its pidfd, pipe and log cannot take fds 0 and 1, which
/// the helper points at `/dev/null`. Without that, the helper lost its log
/// (and its watch) and the log stayed empty (checked with such a build).
#[test]
fn thread_map_works_with_stdin_and_stdout_closed() {
    thread_map_places_workers_under("01", "-");
}

/// Runs `pinrun --cpus A,B --thread-map w1=@0,w2=@1,*=rest` on the
/// `named_threads` program under a caller that closed the standard
/// descriptors `close` and ignores the signal numbers `ignore` (the
/// `inherited` helper's `as` mode), and checks that the thread log has w1
/// renamed on CPU A and w2 on CPU B (read back by the watcher). Returns the
/// temporary directory (with the built `inherited` helper in it) and the
/// CPUs, `None` where the machine or compiler cannot run the test.
fn thread_map_places_workers_under(
    close: &str,
    ignore: &str,
) -> Option<(tempfile::TempDir, std::path::PathBuf, u32)> {
    let (a, b) = two_cpus()?;
    let dir = common::tempdir();
    let threads = compile("named_threads", &["-O2", "-pthread"], dir.path())?;
    let setup = compile("inherited", &["-O2"], dir.path())?;
    let log = dir.path().join("threads.jsonl");
    let out = std::process::Command::new(&setup)
        .args(["as", close, ignore, "-", "--", env!("CARGO_BIN_EXE_pinrun")])
        .args(thread_map_argv(a, b, &log, &threads, "3000"))
        .output()
        .unwrap();
    assert_status(&out, 0);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    for (name, cpu) in [("w1", a), ("w2", b)] {
        let l = lines
            .iter()
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {lines:?}"));
        assert_eq!(l["event"], "rename");
        assert_eq!(l["read_back"], cpu.to_string());
    }
    Some((dir, setup, a))
}

/// The helper process is gone once the command has ended (no process
/// left but, at most, a zombie init has yet to reap: no descriptors), and
/// the command gets exactly the descriptors it gets without pinrun.
#[test]
fn watcher_leaves_nothing_behind() {
    let Some((cpu, _)) = two_cpus() else { return };
    let cpu = cpu.to_string();
    let fds = |with_pinrun: bool| {
        let script = "ls /proc/$$/fd";
        let out = if with_pinrun {
            pinrun()
                .env("PINRUN_TEST_MARK", std::process::id().to_string())
                .args([
                    "--cpus",
                    &cpu,
                    "--thread-map",
                    "*=@0",
                    "--",
                    "sh",
                    "-c",
                    script,
                ])
                .output()
                .unwrap()
        } else {
            std::process::Command::new("sh")
                .args(["-c", script])
                .output()
                .unwrap()
        };
        assert_status(&out, 0);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(fds(true), fds(false));
    // Every helper of this test process has exited.
    wait_for_helpers(&std::process::id().to_string());
}

/// --omp on every x86 util-linux dump with SMT (lscpu's Core column of the
/// ARM dumps numbers cores per cluster: arm-A510-A710-A715-X3 repeats core
/// 0 on socket 0): with --smt, one place per
/// planned core, each exactly the CPUs lscpu gives that core; with
/// --omp=threads one CPU per place; OMP_NUM_THREADS is the number of
/// places, OMP_PROC_BIND close.
#[test]
fn omp_places_are_lscpu_cores() {
    let mut checked = 0;
    for rel in machines("util-linux") {
        if !rel.contains("x86") {
            continue;
        }
        let rows = lscpu_parse(&rel);
        let mut cores: BTreeMap<(Option<u32>, u32), BTreeSet<u32>> = BTreeMap::new();
        for r in rows.values() {
            if let Some(c) = r.core {
                cores.entry((r.socket, c)).or_default().insert(r.cpu);
            }
        }
        if !cores.values().any(|c| c.len() > 1) {
            continue;
        }
        let out = pinrun()
            .arg("--sysroot")
            .arg(common::machine(&rel))
            .args(["--dry-run", "--json", "--cores", "2", "--smt", "--omp"])
            .env_remove("OMP_NUM_THREADS")
            .output()
            .unwrap();
        if !out.status.success() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let places: Vec<BTreeSet<u32>> = v["omp"]["places"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| common::ids(p).into_iter().collect())
            .collect();
        assert_eq!(places.len(), 2, "{rel}");
        for p in &places {
            assert!(
                cores.values().any(|c| c == p),
                "{rel}: place {p:?} is no lscpu core"
            );
        }
        assert_eq!(v["omp"]["set"]["OMP_NUM_THREADS"], "2", "{rel}");
        assert_eq!(v["omp"]["set"]["OMP_PROC_BIND"], "close", "{rel}");
        let planned: BTreeSet<u32> = common::ids(&v["cpus"]).into_iter().collect();
        let threads = common::dry_json(
            &rel,
            &["--dry-run", "--cores", "2", "--smt", "--omp=threads"],
        );
        let n = threads["omp"]["places"].as_array().unwrap().len();
        assert_eq!(n, planned.len(), "{rel}");
        checked += 1;
    }
    assert!(checked > 0, "no util-linux dump with SMT");
}

/// A caller's KMP_AFFINITY/GOMP_CPU_AFFINITY/OMP_PLACES refuse --omp
/// (exit 125, omp-conflict) unless --omp-replace.
#[test]
fn omp_conflicts_are_refused() {
    let Some((cpu, _)) = two_cpus() else { return };
    let cpu = cpu.to_string();
    for (k, v) in [
        ("GOMP_CPU_AFFINITY", "0-3"),
        ("KMP_AFFINITY", "compact"),
        ("OMP_PLACES", "cores"),
    ] {
        let out = pinrun()
            .env(k, v)
            .args(["--dry-run", "--json", "--cpus", &cpu, "--omp"])
            .output()
            .unwrap();
        assert_status(&out, 125);
        let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(e["error"]["code"], "omp-conflict", "{k}");
        assert!(
            e["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("--omp-replace")
        );
        let out = pinrun()
            .env(k, v)
            .args([
                "--dry-run",
                "--json",
                "--cpus",
                &cpu,
                "--omp",
                "--omp-replace",
            ])
            .output()
            .unwrap();
        assert_status(&out, 0);
    }
}

/// Issue 35 class 3 (the live case): a value that turns binding off is
/// no re-binding, so `--strict` runs the command (exit 0) and the plan
/// lists no `env-thread-binding`; a value that binds still refuses (125,
/// `strict`). The pinrun binary reads its own environment, as a launch.
#[test]
fn binding_turned_off_by_its_value_does_not_refuse_strict() {
    let Some((cpu, _)) = two_cpus() else { return };
    let cpu = cpu.to_string();
    for (env, status) in [
        (&[("OMP_PROC_BIND", "false")][..], 0),
        (&[("OMP_PROC_BIND", "FALSE"), ("OMP_PLACES", "cores")], 0),
        (&[("KMP_AFFINITY", "disabled")], 0),
        (&[("KMP_AFFINITY", "verbose,none")], 0),
        // Invalid to libgomp's parse_bind_var (a list may not start with
        // false), so ignored as unset; an empty GOMP_CPU_AFFINITY is
        // invalid to parse_affinity.
        (&[("OMP_PROC_BIND", "false,close")], 0),
        (&[("GOMP_CPU_AFFINITY", "")], 0),
        (&[("OMP_PROC_BIND", "spread,close")], 125),
        (&[("OMP_PROC_BIND", "true")], 125),
        (&[("KMP_AFFINITY", "compact")], 125),
    ] {
        let mut c = pinrun();
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c
            .args(["--strict", "--cpus", &cpu, "--", "true"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(status),
            "{env:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if status == 125 {
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("env-thread-binding"),
                "{env:?}"
            );
        }
    }
}

/// A static libgomp program under --omp: OpenMP thread i runs on place i
/// (sched_getcpu(3) in the thread, and the runtime's own place number),
/// and a caller's GOMP_CPU_AFFINITY is gone under --omp-replace.
#[test]
fn openmp_threads_land_on_their_places() {
    let Some((a, b)) = two_cpus() else { return };
    let dir = common::tempdir();
    let Some(prog) = compile("omp_cpus", &["-O2", "-fopenmp", "-static"], dir.path()) else {
        return;
    };
    let out = pinrun()
        .env_remove("OMP_NUM_THREADS")
        .env("GOMP_CPU_AFFINITY", format!("{b}"))
        .arg("--cpus")
        .arg(format!("{a},{b}"))
        .args(["--omp", "--omp-replace", "--"])
        .arg(&prog)
        .output()
        .unwrap();
    assert_status(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            format!("GOMP_CPU_AFFINITY=(unset) OMP_PLACES={{{a}}},{{{b}}} OMP_PROC_BIND=close"),
            format!("thread 0 place 0 cpu {a} allowed {a}"),
            format!("thread 1 place 1 cpu {b} allowed {b}"),
        ],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs pinrun with `args`, killed after 30 s (a launch blocked on a FIFO
/// must fail the test, not hang it): its exit status and stderr.
fn run_bounded(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pinrun"))
        .env("PINRUN_CONFIG", "")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}

/// `--thread-log` never writes where it must not, and `--dry-run` says so
/// exactly as the launch does (exit 125, the same message) without
/// creating anything: a symlink is refused, not followed (ELOOP of
/// O_NOFOLLOW); a FIFO without a reader fails at once (ENXIO of
/// O_NONBLOCK; the old open blocked the launch forever); a device, a
/// directory and a missing directory are refused; the command never runs.
/// A new file in a writable directory passes, and the dry run leaves it
/// uncreated.
#[test]
fn thread_log_refuses_what_it_must_not_write() {
    let Some((a, _)) = two_cpus() else { return };
    let dir = common::tempdir();
    let target = dir.path().join("target");
    std::fs::write(&target, "").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let marker = dir.path().join("ran");
    let cases: [(PathBuf, &str); 5] = [
        (link.clone(), "is a symbolic link"),
        (fifo.clone(), "is a FIFO or socket without a reader"),
        (
            "/dev/full".into(),
            "is a character device, not a regular file",
        ),
        (dir.path().to_path_buf(), "Is a directory"),
        (
            dir.path().join("no/such/dir/log"),
            "No such file or directory",
        ),
    ];
    let cpus = a.to_string();
    for (path, what) in &cases {
        for dry in [true, false] {
            let mut args: Vec<&std::ffi::OsStr> = vec![
                "--cpus".as_ref(),
                cpus.as_ref(),
                "--thread-map".as_ref(),
                "*=@0".as_ref(),
                "--thread-log".as_ref(),
                path.as_os_str(),
            ];
            if dry {
                args.push("--dry-run".as_ref());
            }
            args.extend(["--".as_ref(), "touch".as_ref(), marker.as_os_str()]);
            let (status, stderr) = run_bounded(&args);
            assert_eq!(status, Some(125), "{path:?} dry {dry}: {stderr}");
            let want = format!("pinrun: --thread-log {}: {what}", path.display());
            assert!(stderr.starts_with(&want), "{path:?} dry {dry}: {stderr}");
            assert!(stderr.contains("\nhint: "), "{stderr}");
            assert!(
                !marker.exists(),
                "the command ran with --thread-log {path:?}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "",
        "written through the symlink"
    );
    // A new file: the dry run passes and creates nothing.
    let new = dir.path().join("new.jsonl");
    let out = pinrun()
        .args(["--cpus", &cpus, "--thread-map", "*=@0", "--thread-log"])
        .arg(&new)
        .args(["--dry-run", "--", "true"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    assert!(!new.exists(), "the dry run created the log");
}

/// As root, another user's file in a sticky world-writable directory (a
/// /tmp) is never appended to, as the kernel's fs.protected_regular
/// refuses it (fs/namei.c may_create_in_sticky): the finding's uid-65534
/// file. This user's own file there is fine.
#[test]
fn thread_log_refuses_another_users_file_in_a_sticky_dir() {
    use std::os::unix::fs::PermissionsExt;
    let Some((a, _)) = two_cpus() else { return };
    if !common::is_root() {
        return common::skip("chown to another user needs root");
    }
    let dir = common::tempdir();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = tmp.join("theirs.jsonl");
    std::fs::write(&theirs, "").unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let cpus = a.to_string();
    for dry in [true, false] {
        let mut cmd = pinrun();
        cmd.args(["--cpus", &cpus, "--thread-map", "*=@0", "--thread-log"])
            .arg(&theirs);
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.args(["--", "true"]).output().unwrap();
        assert_status(&out, 125);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!(
                "pinrun: --thread-log {}: belongs to uid 65534 in the sticky world-writable directory",
                theirs.display()
            )),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "");
    let mine = tmp.join("mine.jsonl");
    let out = pinrun()
        .args(["--cpus", &cpus, "--thread-map", "*=@0", "--thread-log"])
        .arg(&mine)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .contains("\"start\"")
    );
}

/// `--thread-map` works when the caller ignores SIGCHLD (the kernel then
/// reaps children itself, and pinrun's wait for its helper's first child
/// failed with ECHILD: the launch was refused), and the command still
/// inherits SIGCHLD ignored, as under taskset.
#[test]
fn thread_map_works_with_sigchld_ignored() {
    let Some((dir, setup, a)) = thread_map_places_workers_under("-", "17") else {
        return;
    };
    // What the command inherits: the same signal lines as under taskset.
    let probe = |prefix: &[&str], file: &str| {
        let f = dir.path().join(file);
        let out = std::process::Command::new(&setup)
            .args(["as", "-", "17", "-", "--"])
            .args(prefix)
            .arg(&setup)
            .arg("probe")
            .arg(&f)
            .output()
            .unwrap();
        assert_status(&out, 0);
        std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("Sig"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let cpus = format!("{a}");
    let pinrun = env!("CARGO_BIN_EXE_pinrun");
    let under_pinrun = probe(
        &[
            pinrun,
            "--quiet",
            "--cpus",
            &cpus,
            "--thread-map",
            "*=@0",
            "--",
        ],
        "pinrun.txt",
    );
    let under_taskset = probe(&["taskset", "-c", &cpus], "taskset.txt");
    assert_eq!(under_pinrun, under_taskset);
    assert!(
        under_pinrun
            .iter()
            .filter_map(|l| l.strip_prefix("SigIgn:"))
            .any(|m| u64::from_str_radix(m.trim(), 16).is_ok_and(|m| m & (1 << 16) != 0)),
        "{under_pinrun:?}"
    );
}

/// Under a small open-files limit the `--thread-map` watcher cannot get
/// its pidfd and pipe: the launch runs, or is refused (exit 125) with the limit in
/// the hint (`ulimit -n`), not sent to "pidfd_open(2) needs Linux 5.3"
/// as it was (session 7's break test, limits 5-8). The helper may also
/// have no room for the perf events handed to it: the kernel drops them
/// (`MSG_CTRUNC`), and at `ulimit -n 6` the launch failed with EPIPE and
/// "run pinrun again", or, when pinrun's last message went first, ran
/// the command with no watcher, as the helper and pinrun raced (seen
/// under load). Now pinrun waits for the helper's answer before exec:
/// refused with EMFILE and the hint, the same at every try.
#[test]
fn thread_map_short_of_descriptors_names_the_limit() {
    if two_cpus().is_none() {
        common::skip("needs two CPUs");
        return;
    }
    let mut refused = 0;
    for n in 4..=8 {
        let mut codes = Vec::new();
        for _ in 0..3 {
            let o = common::pinrun_under_ulimit("-n", n)
                .args([
                    "--cpus",
                    "0-1",
                    "--thread-map",
                    "main=@0,*=@1",
                    "--",
                    "true",
                ])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            codes.push(o.status.code());
            if o.status.code() == Some(0) {
                continue;
            }
            assert_eq!(o.status.code(), Some(125), "ulimit -n {n}: {err}");
            assert!(
                err.contains("ulimit -n 1024") && !err.contains("Linux 5.3"),
                "ulimit -n {n}: {err}"
            );
            refused += 1;
        }
        assert!(
            codes.windows(2).all(|w| w[0] == w[1]),
            "ulimit -n {n}: {codes:?}"
        );
    }
    assert!(refused > 0, "never short of descriptors from ulimit -n 4");
}

/// Issue 33 (low): a `--thread-map` watcher killed while the command runs
/// (SIGKILL, as the OOM killer sends) was not reported: threads created
/// afterwards were silently left unplaced. The watcher now runs in a
/// child of the helper (`pinrun-watcher`), and the helper says on the
/// command's stderr that it was killed, by what, and what that means.
#[test]
fn a_killed_watcher_is_reported() {
    use std::io::Read;
    let Some((cpu, _)) = two_cpus() else { return };
    let mark = format!("PINRUN_TEST_MARK=watcher-{}", std::process::id());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pinrun"))
        .env("PINRUN_CONFIG", "")
        .env(
            "PINRUN_TEST_MARK",
            format!("watcher-{}", std::process::id()),
        )
        .args(["--cpus", &cpu.to_string(), "--thread-map", "*=@0"])
        .args(["--", "cat"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let watcher = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                comm.trim() == "pinrun-watcher"
                    && env.split(|&c| c == 0).any(|v| v == mark.as_bytes())
            })
    };
    let pid = loop {
        if let Some(pid) = watcher() {
            break pid;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the command ended first"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // The command ends; its stderr (the helper's too) is read to its end.
    drop(child.stdin.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        err.contains(&format!(
            "the watcher of process {} (pid {pid}, pinrun-watcher) was killed by SIGKILL",
            child.id()
        )),
        "{err}"
    );
}

/// The `--thread-log` start lines say how the watcher learnt of threads
/// (pinrun(1) THREADS): one "start" line, "perf", however the command
/// ends: one thread (`sleep`), several (`named_threads`), or a main thread
/// that exits first while a worker runs on until its stdin closes
/// (tests/helpers/leader_exits.c). Its perf events end with its last task
/// (is_event_hup(): no child event left), a moment before its pidfd says
/// it ended, and that is no fallback to polling. Before the fix every
/// command's log ended with a "poll" start line (`pinrun --cpus 0-1
/// --thread-map '*=each' --thread-log F -- sleep 0.5`:
/// `{"event":"start","interval_us":2000,"mechanism":"poll","t_us":502888}`;
/// for leader_exits at its worker's end, 479 ms, not at its main thread's).
#[test]
fn thread_log_says_poll_only_when_the_command_outlives_its_events() {
    let Some((a, b)) = two_cpus() else { return };
    let dir = common::tempdir();
    let Some(named) = compile("named_threads", &["-O2", "-pthread"], dir.path()) else {
        return;
    };
    let Some(leader) = compile("leader_exits", &["-O2", "-pthread"], dir.path()) else {
        return;
    };
    let mark = format!("thread-log-start-{}", std::process::id());
    // The start lines of one run, read once its helper has exited (the
    // helper writes the log after pinrun has exec'd the command).
    let starts = |name: &str, command: &[&std::ffi::OsStr], hold_stdin_ms: u64| {
        let log = dir.path().join(format!("{name}.jsonl"));
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pinrun"));
        cmd.env("PINRUN_CONFIG", "")
            .env_remove("PINRUN_THREAD_WATCH")
            .env("PINRUN_TEST_MARK", &mark)
            .args(["--cpus", &format!("{a},{b}"), "--thread-map", "*=each"])
            .arg("--thread-log")
            .arg(&log)
            .arg("--")
            .args(command)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(hold_stdin_ms));
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success(), "{name}");
        wait_for_helpers(&mark);
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
            .filter(|l| l["event"] == "start")
            .map(|l| l["mechanism"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let sleep = starts("sleep", &["sleep".as_ref(), "0.3".as_ref()], 0);
    if sleep.first().map(String::as_str) == Some("poll") {
        common::skip("perf_event_open(2) refused here: polled from the start");
        return;
    }
    assert_eq!(sleep, ["perf"], "one thread that ends");
    let threads = starts("named", &[named.as_os_str(), "300".as_ref()], 0);
    assert_eq!(threads, ["perf"], "threads that end by exit_group(2)");
    let orphaned = starts("leader", &[leader.as_os_str()], 400);
    assert_eq!(orphaned, ["perf"], "a main thread that exits first");
}

/// Waits up to 2 s until no live `pinrun-helper` carries
/// `PINRUN_TEST_MARK=mark`, and asserts that none is left.
fn wait_for_helpers(mark: &str) {
    let want = format!("PINRUN_TEST_MARK={mark}");
    let live = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                comm.trim() == "pinrun-helper"
                    && !stat
                        .rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                    && env.split(|&c| c == 0).any(|v| v == want.as_bytes())
            })
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while !live().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(live(), Vec::<u32>::new(), "a helper outlived 2 s");
}
