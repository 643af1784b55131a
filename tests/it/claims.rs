//! Exclusive claims (issue 5) on this machine: concurrent `--exclusive`
//! launches never share a core, the one too many is refused ("no free
//! core") or waits (`--wait`), claims of exited or SIGKILLed holders are
//! reclaimed, a race of 20 launches (repeated 20 times) gives exactly as
//! many winners as there are free cores; and hostile or stale records
//! (reused pid, garbage, symlinks, FIFOs, forged owners) and a kubelet CPU
//! manager state file. Every test uses a private `--state-dir`.

use crate::common;
use common::{assert_status, ids, pinrun};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(super) fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pinrun")
}

/// The whole cores pinrun may use here (every sibling allowed), each as
/// its sorted CPUs.
pub(super) fn free_cores() -> Vec<Vec<u32>> {
    let out = pinrun().args(["--show", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let allowed: BTreeSet<u32> = ids(&v["allowed_cpus"]).into_iter().collect();
    let mut cores = BTreeSet::new();
    for c in v["cpus"].as_array().unwrap() {
        if c["siblings"].is_array() {
            let sibs = ids(&c["siblings"]);
            if sibs.iter().all(|s| allowed.contains(s)) {
                cores.insert(sibs);
            }
        }
    }
    cores.into_iter().collect()
}

fn core_of(cores: &[Vec<u32>], cpu: u32) -> usize {
    cores
        .iter()
        .position(|c| c.contains(&cpu))
        .unwrap_or_else(|| panic!("CPU {cpu} is in no free core {cores:?}"))
}

fn state_dir() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("state");
    (t, d)
}

/// `pinrun --exclusive --state-dir D ARGS -- COMMAND...` as a child.
fn spawn(dir: &Path, args: &[&str], command: &[&str]) -> Child {
    Command::new(bin())
        .arg("--state-dir")
        .arg(dir)
        .args(args)
        .arg("--")
        .args(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `pid` has exec'd `comm` (pinrun execs in place).
pub(super) fn wait_exec(pid: u32, comm: &str) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        let c = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if c.trim() == comm {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("pid {pid} did not exec {comm}");
}

/// `Cpus_allowed_list` of a live process, as CPU ids.
fn affinity(pid: u32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    pinrun::cpuset::CpuSet::parse(line.trim()).unwrap().to_vec()
}

fn run(dir: &Path, args: &[&str], command: &[&str]) -> std::process::Output {
    let mut c = pinrun();
    c.arg("--state-dir").arg(dir).args(args);
    if !command.is_empty() {
        c.arg("--").args(command);
    }
    c.output().unwrap()
}

pub(super) fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dry(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["--dry-run", "--json"];
    a.extend_from_slice(args);
    let o = run(dir, &a, &[]);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", stderr(&o)))
}

/// The claim findings' codes (other checks, e.g. IRQs, vary by machine).
fn codes(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .filter(|c| c.starts_with("claim-") || c == "cpu-claimed")
        .collect()
}

pub(super) fn records(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The name of `pid`'s record in `dir`: `<pid>.<start time>.<16 random
/// hex digits>`.
fn record_of(dir: &Path, pid: u32) -> String {
    let prefix = format!("{pid}.{}.", start_time(pid));
    let found: Vec<String> = records(dir)
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert_eq!(found.len(), 1, "{prefix}: {:?}", records(dir));
    let suffix = &found[0][prefix.len()..];
    assert!(
        suffix.len() == 16 && suffix.bytes().all(|b| b.is_ascii_hexdigit()),
        "{suffix}"
    );
    found[0].clone()
}

pub(super) fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    pinrun::system::threads::stat_field(&stat, 22).unwrap()
}

fn write_record(dir: &Path, name: &str, pid: u32, start: u64, uid: u32, cpus: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let r = pinrun::claims::Record {
        version: 1,
        pid,
        start_time: start,
        uid,
        pgid: 0,
        // As older pinrun versions wrote them: the PID is the reader's.
        pid_ns: None,
        cpus: cpus.into(),
        command: vec!["holder".into()],
        time: 0,
    };
    std::fs::write(dir.join(name), r.render()).unwrap();
}

pub(super) fn all_cpus(cores: &[Vec<u32>]) -> String {
    let s: pinrun::cpuset::CpuSet = cores.iter().flatten().copied().collect();
    s.to_list()
}

#[test]
fn concurrent_launches_never_share_a_core() {
    let cores = free_cores();
    if cores.len() < 2 || cores.len() > 64 {
        common::skip(format_args!(
            "needs 2 to 64 free cores, found {}",
            cores.len()
        ));
        return;
    }
    let (_t, dir) = state_dir();
    let mut holders: Vec<Child> = (0..cores.len())
        .map(|_| spawn(&dir, &["--exclusive", "--cores", "1"], &["sleep", "60"]))
        .collect();
    let mut used = BTreeSet::new();
    for h in &holders {
        wait_exec(h.id(), "sleep");
        let a = affinity(h.id());
        assert_eq!(a.len(), 1, "one CPU each: {a:?}");
        assert!(
            used.insert(core_of(&cores, a[0])),
            "two launches share a core"
        );
    }
    // Every core is claimed and listed by --show.
    let o = run(&dir, &["--show", "--json"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let listed: BTreeSet<u64> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pid"].as_u64().unwrap())
        .collect();
    let pids: BTreeSet<u64> = holders.iter().map(|h| u64::from(h.id())).collect();
    assert_eq!(listed, pids);
    let text = String::from_utf8_lossy(&run(&dir, &["--show"], &[]).stdout).into_owned();
    for p in &pids {
        assert!(text.contains(&format!("pid {p} ")), "{text}");
    }
    // One too many: refused, naming the holders.
    let o = run(&dir, &["--exclusive", "--cores", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(stderr(&o).contains("no free core"), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("pid {}", holders[0].id())));
    // --cpus on a claimed CPU is refused; a launch without placement warns,
    // and refuses under --strict.
    let o = run(&dir, &["--cpus", &cores[0][0].to_string()], &["true"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("claimed"), "{}", stderr(&o));
    let o = run(&dir, &["--nice", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("1 warning (cpu-claimed)"),
        "{}",
        stderr(&o)
    );
    let o = run(&dir, &["--strict", "--nice", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(125));
    // --wait: waits with a message, then runs once the holders exit
    // (ended here once it says it waits).
    let mut waiter = spawn(
        &dir,
        &["--exclusive", "--wait=30s", "--cores", "1"],
        &["true"],
    );
    let mut said = String::new();
    let mut err = std::io::BufReader::new(waiter.stderr.take().unwrap());
    while !said.contains("pinrun: waiting") {
        let before = said.len();
        std::io::BufRead::read_line(&mut err, &mut said).unwrap();
        assert!(
            said.len() > before,
            "the waiter ended without waiting: {said}"
        );
    }
    for h in &mut holders {
        h.kill().unwrap();
        h.wait().unwrap();
    }
    let status = waiter.wait().unwrap();
    std::io::Read::read_to_string(&mut err, &mut said).unwrap();
    assert_eq!(status.code(), Some(0), "{said}");
    // All reclaimed: every core can be claimed again, and the stale
    // records are removed.
    let o = run(&dir, &["--show", "--json"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["claims"].as_array().unwrap().len(), 0);
    let o = run(
        &dir,
        &["--exclusive", "--cores", &cores.len().to_string()],
        &["true"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(records(&dir).len() <= 1, "{:?}", records(&dir));
    // A short --wait gives up with the reason.
    let mut h = spawn(
        &dir,
        &["--exclusive", "--cores", &cores.len().to_string()],
        &["sleep", "5"],
    );
    wait_exec(h.id(), "sleep");
    let t = Instant::now();
    let o = run(
        &dir,
        &["--exclusive", "--wait=300ms", "--cores", "1"],
        &["true"],
    );
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("no free core") && stderr(&o).contains("waited"));
    assert!(t.elapsed() < Duration::from_secs(4));
    let _ = h.kill();
    let _ = h.wait();
}

#[test]
fn sigkilled_holder_is_reclaimed() {
    let cores = free_cores();
    if cores.is_empty() {
        common::skip("no free core");
        return;
    }
    let (_t, dir) = state_dir();
    let n = cores.len().to_string();
    for reap in [false, true] {
        let mut h = spawn(&dir, &["--exclusive", "--cores", &n], &["sleep", "60"]);
        wait_exec(h.id(), "sleep");
        let o = run(&dir, &["--exclusive", "--cores", "1"], &["true"]);
        assert_eq!(o.status.code(), Some(125));
        h.kill().unwrap();
        if reap {
            h.wait().unwrap();
        } else {
            // Not yet reaped: a zombie runs nowhere and holds nothing.
            std::thread::sleep(Duration::from_millis(100));
        }
        let o = run(&dir, &["--exclusive", "--cores", "1"], &["true"]);
        assert_eq!(o.status.code(), Some(0), "reap {reap}: {}", stderr(&o));
        // No claim finding: the dead holder's claim is gone (--exclusive
        // is latency-critical, so this host's own findings may show).
        assert!(!stderr(&o).contains("claim"), "{}", stderr(&o));
        let _ = h.wait();
    }
}

/// Issue 35 class 2: a holder whose main thread exited (`pthread_exit(3)`
/// in `main`) while another thread runs still holds its claim: the
/// kernel keeps the leader in `/proc` as a zombie (state `Z`,
/// `delay_group_leader()`, kernel/exit.c) until the last thread exits,
/// and the process runs on. pinrun judged the claim by the leader's state
/// alone, took it as ended, and gave the CPUs of a running holder to the
/// next `--exclusive` launch (exit 0). Once the last thread ends the
/// claim is reclaimed.
#[test]
fn holder_whose_main_thread_exited_keeps_its_claim() {
    let cores = free_cores();
    if cores.is_empty() {
        common::skip("no free core");
        return;
    }
    let tools = tempfile::tempdir().unwrap();
    let Some(helper) = common::compile("leader_exits", &["-O2", "-pthread"], tools.path()) else {
        return;
    };
    let (_t, dir) = state_dir();
    let n = cores.len().to_string();
    let helper = helper.to_str().unwrap();
    let mut h = spawn(&dir, &["--exclusive", "--cores", &n], &[helper]);
    let pid = h.id();
    let state = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().and_then(|r| r.trim().chars().next()))
    };
    let t0 = Instant::now();
    while (state() != Some('Z') || records(&dir).is_empty())
        && t0.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(state(), Some('Z'), "the main thread did not exit");
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .count();
    assert_eq!(tasks, 2, "the zombie leader and its worker");
    let o = run(&dir, &["--exclusive", "--cores", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("pid {pid}")), "{}", stderr(&o));
    // The worker ends the process when its stdin closes.
    drop(h.stdin.take());
    h.wait().unwrap();
    let o = run(&dir, &["--exclusive", "--cores", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// One race: 20 concurrent `--exclusive --cores 1` launches. Winners print
/// their affinity and hold their core until their stdin closes, so every
/// loser decides while all winners still hold.
fn race(cores: &[Vec<u32>]) {
    let (_t, dir) = state_dir();
    let children: Vec<Child> = (0..20)
        .map(|_| {
            spawn(
                &dir,
                &["--exclusive", "--cores", "1"],
                &[
                    "sh",
                    "-c",
                    "grep Cpus_allowed_list /proc/self/status; exec cat >/dev/null",
                ],
            )
        })
        .collect();
    let results: Vec<(Child, Option<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = children
            .into_iter()
            .map(|mut c| {
                s.spawn(move || {
                    let mut line = String::new();
                    BufReader::new(c.stdout.take().unwrap())
                        .read_line(&mut line)
                        .unwrap();
                    (c, (!line.is_empty()).then_some(line))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut used = BTreeSet::new();
    let mut winners = 0;
    let mut losers = Vec::new();
    for (mut c, line) in results {
        match line {
            Some(l) => {
                winners += 1;
                let cpus = pinrun::cpuset::CpuSet::parse(l.split(':').nth(1).unwrap().trim())
                    .unwrap()
                    .to_vec();
                assert_eq!(cpus.len(), 1);
                assert!(
                    used.insert(core_of(cores, cpus[0])),
                    "two winners share a core"
                );
                drop(c.stdin.take());
                assert!(c.wait().unwrap().success());
            }
            None => losers.push(c),
        }
    }
    for c in losers {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(125));
        let e = stderr(&o);
        assert!(e.contains("no free core") && e.contains("claimed"), "{e}");
    }
    assert_eq!(winners, cores.len(), "winners");
}

#[test]
fn race_of_twenty_launches_twenty_times() {
    let cores = free_cores();
    if cores.is_empty() || cores.len() >= 20 {
        common::skip(format_args!(
            "needs 1 to 19 free cores, found {}",
            cores.len()
        ));
        return;
    }
    for _ in 0..20 {
        race(&cores);
    }
}

#[test]
fn stale_forged_and_hostile_records() {
    let cores = free_cores();
    if cores.is_empty() {
        common::skip("no free core");
        return;
    }
    let (t, dir) = state_dir();
    let all = all_cpus(&cores);
    let n = cores.len().to_string();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let mut holder = Command::new("sleep").arg("60").spawn().unwrap();
    let hp = holder.id();
    let hs = start_time(hp);
    // A reused pid (same pid, other start time): stale, silently.
    write_record(&dir, &format!("{hp}.{}", hs + 1), hp, hs + 1, 0, &all);
    let v = dry(&dir, &["--cores", &n]);
    assert_eq!(codes(&v), Vec::<String>::new());
    // The real holder's record: claimed, named in the refusal.
    write_record(&dir, &format!("{hp}.{hs}"), hp, hs, 0, &all);
    let o = run(&dir, &["--dry-run", "--cores", "1"], &[]);
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains(&format!("pid {hp} (holder)")),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(dir.join(format!("{hp}.{hs}"))).unwrap();
    // A dead pid's record and garbage: the garbage warns; a dead pid's
    // garbage is reclaimed, a live pid's is ignored (never removed).
    let mut dead = Command::new("true").spawn().unwrap();
    let dp = dead.id();
    dead.wait().unwrap();
    write_record(&dir, &format!("{dp}.1"), dp, 1, 0, &all);
    std::fs::write(dir.join(format!("{dp}.2")), b"\x00\xffgarbage").unwrap();
    std::fs::write(dir.join(format!("{hp}.3")), "{\"version\":1,").unwrap();
    // A symlink to a file outside, a FIFO, a directory, and a huge file,
    // named like records of the live holder; and files that are no records.
    let outside = t.path().join("outside");
    std::fs::write(&outside, "keep").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join(format!("{hp}.4"))).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(dir.join(format!("{hp}.5")))
            .status()
            .unwrap()
            .success()
    );
    std::fs::create_dir(dir.join(format!("{hp}.6"))).unwrap();
    std::fs::write(dir.join(format!("{hp}.7")), vec![b' '; 1 << 20]).unwrap();
    std::fs::write(dir.join("README"), "not a record").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
    // Forged: a record in uid 65534's name for root's process.
    write_record(&dir, &format!("{hp}.{hs}.1"), hp, hs, 65534, &all);
    std::os::unix::fs::chown(dir.join(format!("{hp}.{hs}.1")), Some(65534), Some(65534)).unwrap();
    let t0 = Instant::now();
    let v = dry(&dir, &["--cores", &n]);
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "a FIFO blocked pinrun"
    );
    let c = codes(&v);
    assert!(c.iter().all(|c| c == "claim-record-unusable"), "{c:?}");
    // One finding for the 7 unusable records (issue 16), each in `items`.
    assert_eq!(c.len(), 1, "{v}");
    let claim = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "claim-record-unusable")
        .unwrap();
    assert_eq!(claim["items"].as_array().unwrap().len(), 7, "{v}");
    let text = v["findings"].to_string();
    assert!(text.contains("symlink"), "{text}");
    assert!(text.contains("belongs to uid 65534"), "{text}");
    // An exclusive launch works, reclaims only what is provably stale, and
    // writes nothing through the symlink.
    let o = run(&dir, &["--exclusive", "--cores", &n], &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let left = records(&dir);
    // pinrun's own record of a dead pid is reclaimed; garbage named like
    // one is not pinrun's to delete.
    assert!(!left.contains(&format!("{dp}.1")), "{left:?}");
    assert!(left.contains(&format!("{dp}.2")), "{left:?}");
    for kept in ["3", "4", "5", "6", "7"] {
        assert!(left.contains(&format!("{hp}.{kept}")), "{left:?}");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    holder.kill().unwrap();
    holder.wait().unwrap();
}

#[test]
fn unsafe_state_dirs_are_refused() {
    let t = tempfile::tempdir().unwrap();
    // A symlink as the state directory: never followed.
    let real = t.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = run(&link, &["--exclusive", "--cores", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("symlink"), "{}", stderr(&o));
    assert!(records(&real).is_empty());
    // World-writable without the sticky bit: others could delete records.
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = run(&real, &["--exclusive", "--cores", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("sticky"), "{}", stderr(&o));
    // Launches without --exclusive only warn.
    let o = run(&real, &["--nice", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A missing directory is created with mode 1777, records 0644.
    let fresh = t.path().join("fresh");
    let o = run(&fresh, &["--exclusive", "--cores", "1"], &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o1777);
    let recs = records(&fresh);
    assert_eq!(recs.len(), 1);
    let mode = std::fs::metadata(fresh.join(&recs[0]))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o644);
    // A lock held for long (a stuck or hostile process) delays a reader by
    // a second only (a tenth of it in a test build run with
    // PINRUN_TEST_SHORT_WAITS=1, pinrun::waits::bound); an --exclusive
    // launch would refuse after 10s.
    let mut holder = Command::new("flock")
        .arg("-x")
        .arg(&fresh)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    let o = pinrun()
        .env("PINRUN_TEST_SHORT_WAITS", "1")
        .arg("--state-dir")
        .arg(&fresh)
        .args(["--nice", "1", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(claim-state-unusable)"),
        "{}",
        stderr(&o)
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
    holder.kill().unwrap();
    holder.wait().unwrap();
    // PINRUN_STATE_DIR is the default's override.
    let o = pinrun()
        .env("PINRUN_STATE_DIR", &fresh)
        .args(["--show", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["claims"].is_array());
}

#[test]
fn lock_fd_does_not_reach_the_command() {
    let (_t, dir) = state_dir();
    let o = run(
        &dir,
        &["--exclusive", "--cores", "1"],
        &["sh", "-c", "ls -l /proc/self/fd/"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fds = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(!fds.contains(&*dir.to_string_lossy()), "{fds}");
    // The record is pinrun's PID, which is the command's after exec.
    let mut h = spawn(&dir, &["--exclusive", "--cores", "1"], &["sleep", "5"]);
    wait_exec(h.id(), "sleep");
    record_of(&dir, h.id());
    h.kill().unwrap();
    h.wait().unwrap();
    // A command that cannot be exec'd leaves no claim behind.
    let (t, dir) = state_dir();
    let script = t.path().join("bad");
    std::fs::write(&script, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = run(
        &dir,
        &["--exclusive", "--cores", "1"],
        &[script.to_str().unwrap()],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(records(&dir).is_empty(), "{:?}", records(&dir));
}

/// A 4-CPU machine, two cores with siblings (0,1) and (2,3), one node, and
/// kubelet's static CPU manager state assigning CPUs 2-3 to a container.
fn kubelet_machine(state: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| common::write_file(t.path(), rel, text);
    let cpu = "sys/devices/system/cpu";
    for f in ["online", "possible", "present"] {
        w(&format!("{cpu}/{f}"), "0-3\n");
    }
    for id in 0..4u32 {
        let core = id / 2;
        let sibs = format!("{}-{}\n", core * 2, core * 2 + 1);
        w(&format!("{cpu}/cpu{id}/topology/core_cpus_list"), &sibs);
        w(
            &format!("{cpu}/cpu{id}/topology/thread_siblings_list"),
            &sibs,
        );
        w(
            &format!("{cpu}/cpu{id}/topology/core_id"),
            &format!("{core}\n"),
        );
        w(
            &format!("{cpu}/cpu{id}/topology/physical_package_id"),
            "0\n",
        );
    }
    w("sys/devices/system/node/node0/cpulist", "0-3\n");
    w("sys/devices/system/node/online", "0\n");
    w("var/lib/kubelet/cpu_manager_state", state);
    t
}

fn sysroot_json(root: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let o = pinrun()
        .arg("--sysroot")
        .arg(root)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, stderr(&o))
}

#[test]
fn kubelet_exclusive_cpus_count_as_claimed() {
    let m = kubelet_machine(
        r#"{"policyName":"static","defaultCpuSet":"0-1","entries":{"6f0c-pod":{"app":"2-3"}},"checksum":3282543372}"#,
    );
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--cores", "1"]);
    assert_eq!(code, Some(0));
    assert_eq!(ids(&v["cpus"]), vec![0]);
    let why = v["reasons"].to_string();
    assert!(
        why.contains("skipped 1 claimed core")
            && why.contains("kubelet pod 6f0c-pod container app"),
        "{why}"
    );
    // Two cores, kubelet's state holds the one of CPUs 2-3: one is free,
    // and the refusal says so (a new user's trial: it said "no free
    // cores: 1 of the 2 whole cores … is claimed"); with every core
    // held, none is.
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--cores", "2"]);
    assert_eq!(code, Some(125));
    assert_eq!(
        v["error"]["message"],
        "--cores 2: only 1 free core: 1 of the 2 whole cores in the candidates 0-3 is claimed (CPUs 2-3 by kubelet pod 6f0c-pod container app)"
    );
    let all = kubelet_machine(
        r#"{"policyName":"static","defaultCpuSet":"","entries":{"6f0c-pod":{"app":"0-3"}},"checksum":1}"#,
    );
    let (code, v, _) = sysroot_json(all.path(), &["--dry-run", "--cores", "1"]);
    assert_eq!(code, Some(125));
    assert!(
        v["error"]["message"].as_str().unwrap().starts_with(
            "--cores 1: no free core: 2 of the 2 whole cores in the candidates 0-3 are claimed ("
        ),
        "{v}"
    );
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--cpus", "3"]);
    assert_eq!(code, Some(125));
    assert_eq!(v["error"]["code"], "cpu-claimed");
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--node", "0"]);
    assert_eq!(code, Some(0));
    assert_eq!(codes(&v), vec!["cpu-claimed"]);
    let (_, v, _) = sysroot_json(m.path(), &["--show"]);
    let c = &v["claims"][0];
    assert_eq!(
        (c["holder"].as_str(), ids(&c["cpus"])),
        (Some("kubelet"), vec![2, 3])
    );
    // One thread assigned (no full-pcpus-only): its whole core is taken
    // for --cores and --exclusive; its free sibling stays usable by --cpus.
    let m = kubelet_machine(
        r#"{"policyName":"static","defaultCpuSet":"0-2","entries":{"p":{"c":"3"}},"checksum":1}"#,
    );
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--cores", "1", "--smt"]);
    assert_eq!((code, ids(&v["cpus"])), (Some(0), vec![0, 1]));
    let (code, _, _) = sysroot_json(m.path(), &["--dry-run", "--cores", "2"]);
    assert_eq!(code, Some(125));
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--exclusive", "--cpus", "2"]);
    assert_eq!(
        (code, &v["error"]["code"]),
        (Some(125), &Value::from("cpu-claimed"))
    );
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--cpus", "2"]);
    assert_eq!((code, codes(&v)), (Some(0), vec![]));
    // The "none" policy has no entries; a damaged file warns and claims nothing.
    let m = kubelet_machine(r#"{"policyName":"none","defaultCpuSet":"","checksum":1353318690}"#);
    let (_, v, _) = sysroot_json(m.path(), &["--dry-run", "--cores", "2"]);
    assert_eq!(codes(&v), Vec::<String>::new());
    let m = kubelet_machine("{\"policyName\":\"static\",\"entries\":");
    let (code, v, _) = sysroot_json(m.path(), &["--dry-run", "--cores", "2"]);
    assert_eq!(code, Some(0));
    assert_eq!(codes(&v), vec!["claim-state-unusable"]);
}

/// `setpriv` as `uid` (no groups, no capabilities) running `bin ARGS`.
pub(super) fn as_user(uid: u32, bin: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("setpriv");
    c.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"))
        .args(["--clear-groups", "--inh-caps=-all"])
        .arg(bin)
        .args(args);
    c
}

/// Root and two unprivileged users share one state directory: they never
/// get the same core, none can delete another's live record or forge one
/// in another's name, and a stale record its owner left (which others
/// cannot remove) blocks no one.
#[test]
fn users_share_one_state_directory() {
    let cores = free_cores();
    if !Path::new("/usr/bin/setpriv").exists() || !common::is_root() || cores.len() < 2 {
        common::skip("needs root, setpriv and 2 free cores");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = common::world_readable_copy();
    let dir = t.path().join("state");
    let d = dir.to_str().unwrap();
    // Root claims the first core (and creates the directory, mode 1777).
    let mut root = spawn(&dir, &["--exclusive", "--cores", "1"], &["sleep", "30"]);
    wait_exec(root.id(), "sleep");
    let root_name = record_of(&dir, root.id());
    // nobody gets another core.
    let mut nobody = as_user(
        65534,
        copy,
        &[
            "--exclusive",
            "--cores",
            "1",
            "--state-dir",
            d,
            "--",
            "sleep",
            "30",
        ],
    )
    .spawn()
    .unwrap();
    wait_exec(nobody.id(), "sleep");
    let (a, b) = (affinity(root.id()), affinity(nobody.id()));
    assert_ne!(core_of(&cores, a[0]), core_of(&cores, b[0]));
    let nobody_name = record_of(&dir, nobody.id());
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(dir.join(&nobody_name)).unwrap().uid(),
        65534
    );
    // nobody can neither delete root's record nor forge a claim naming
    // root's process; root sees both real claims and a warning.
    let rm = as_user(
        65534,
        Path::new("/bin/rm"),
        &["-f", &format!("{d}/{root_name}")],
    )
    .output()
    .unwrap();
    assert!(!rm.status.success());
    assert!(dir.join(&root_name).exists());
    let forged = format!("{}.{}.5", root.id(), start_time(root.id()));
    let sh = format!(
        "printf '%s\\n' '{{\"version\":1,\"pid\":{},\"start_time\":{},\"uid\":65534,\"cpus\":\"{}\",\"command\":[\"x\"],\"time\":0}}' > {d}/{forged}",
        root.id(),
        start_time(root.id()),
        all_cpus(&cores)
    );
    assert!(
        as_user(65534, Path::new("/bin/sh"), &["-c", &sh])
            .status()
            .unwrap()
            .success()
    );
    let o = run(&dir, &["--show", "--json"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let pids: BTreeSet<u64> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids, [root.id(), nobody.id()].map(u64::from).into());
    assert!(
        v["claim_warnings"]
            .to_string()
            .contains("belongs to uid 65534")
    );
    // Holders gone: nobody's stale record stays (uid 65533 cannot remove
    // it) but blocks no one.
    for h in [&mut root, &mut nobody] {
        h.kill().unwrap();
        h.wait().unwrap();
    }
    let o = as_user(
        65533,
        copy,
        &[
            "--exclusive",
            "--cores",
            &cores.len().to_string(),
            "--state-dir",
            d,
            "--",
            "true",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.join(&nobody_name).exists());
}

/// Files another user drops in the shared directory neither hide live
/// claims (6000 non-record names) nor make `--strict` launches refuse (a
/// junk record named like one): both were ways for any user to disable
/// others' claims or services.
#[test]
fn junk_from_other_users_neither_hides_claims_nor_blocks_strict() {
    if !common::is_root() || !std::path::Path::new("/usr/bin/setpriv").exists() {
        common::skip("needs root and setpriv");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let sd = d.path().to_str().unwrap().to_string();
    let bin = assert_cmd::cargo::cargo_bin("pinrun");
    let mut holder = std::process::Command::new(&bin)
        .args([
            "--exclusive",
            "--cores",
            "1",
            "--state-dir",
            &sd,
            "--",
            "sleep",
            "60",
        ])
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::fs::read_dir(d.path()).unwrap().count() > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let script =
        format!("i=0; while [ $i -lt 6000 ]; do : > {sd}/a$i; i=$((i+1)); done; echo x > {sd}/1.5");
    let st = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
            &script,
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let online = pinrun::cpuset::CpuSet::parse_sysfs_list(
        &std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap(),
        None,
    )
    .unwrap();
    let all = online.len().to_string();
    let out = std::process::Command::new(&bin)
        .args([
            "--exclusive",
            "--cores",
            &all,
            "--state-dir",
            &sd,
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_status(&out, 125);
    // One core held: "only K free cores" (or none free on a one-core
    // machine), naming the claim.
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains(" free core") && e.contains(" claimed ("), "{e}");
    // The core still free: where an --exclusive launch would go now.
    let out = std::process::Command::new(&bin)
        .args([
            "--dry-run",
            "--json",
            "--exclusive",
            "--cores",
            "1",
            "--state-dir",
            &sd,
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let free = v["cpus"][0].as_u64();
    if let Some(cpu) = free {
        let out = std::process::Command::new(&bin)
            .args([
                "--strict",
                "--allow",
                "not-isolated,not-nohz-full,not-rcu-nocbs,irq-on-cpu,default-irq-affinity",
                "--cpus",
                &cpu.to_string(),
                "--state-dir",
                &sd,
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert_status(&out, 0);
    }
    holder.kill().ok();
    holder.wait().ok();
}

/// A trailing slash does not smuggle a symlinked state directory past the
/// no-follow check.
#[test]
fn trailing_slash_does_not_follow_a_symlinked_state_dir() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let with_slash = format!("{}/", link.display());
    let out = Command::new(bin())
        .args([
            "--exclusive",
            "--cores",
            "1",
            "--state-dir",
            &with_slash,
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a symlink"));
}

/// Finding 4: claim records of CPUs `0-4194303` (any local user may write
/// records into the sticky state directory) are clipped to the possible
/// CPUs when read, with a warning naming each record: a CPU that does not
/// exist cannot be claimed. 300 of them are read under a 128 MiB
/// address-space cap (they held 512 KiB each, and per-CPU work made
/// `--show` take 57 s); the claimed CPUs are exactly the possible ones
/// (`/sys/devices/system/cpu/possible`).
#[test]
fn records_of_cpus_that_do_not_exist_are_clipped() {
    let (_t, dir) = state_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let me = std::process::id();
    let start = start_time(me);
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    for i in 0..300 {
        write_record(
            &dir,
            &format!("{me}.{start}.{i:x}"),
            me,
            start,
            uid,
            "0-4194303",
        );
    }
    let mut cmd = std::process::Command::new(bin());
    cmd.arg("--state-dir").arg(&dir).args(["--show", "--json"]);
    common::cap_memory(&mut cmd, 128 << 20);
    let out = cmd.output().unwrap();
    assert_status(&out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let possible: pinrun::cpuset::CpuSet = pinrun::cpuset::CpuSet::parse_sysfs_list(
        &std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap(),
        None,
    )
    .unwrap();
    // The claims are then narrowed to the holder's (this test's) allowed
    // CPUs and their cores: all the possible ones unless it was confined.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = pinrun::cpuset::CpuSet::parse_sysfs_list(
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap(),
        None,
    )
    .unwrap();
    let claimed: pinrun::cpuset::CpuSet = ids(&v["claimed_cpus"]).into_iter().collect();
    assert!(claimed.is_subset(&possible), "{claimed} not in {possible}");
    assert!(
        allowed.intersection(&possible).is_subset(&claimed),
        "{claimed}"
    );
    if allowed == possible {
        assert_eq!(claimed, possible);
    }
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 300);
    let warned = v["claim_warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| {
            w.as_str().unwrap().contains(&format!(
                "CPUs that do not exist (up to CPU 4194303; possible: {}",
                possible.to_compact_list()
            ))
        })
        .count();
    assert_eq!(warned, 300, "{:#}", v["claim_warnings"]);
}

/// `--dry-run --exclusive` refuses every state directory the launch
/// refuses, with the launch's exit status (125) and message, and creates
/// nothing: world-writable without the sticky bit, another user's (as
/// root), a symlink, a file (`/dev/null`), a directory that cannot be
/// created (in procfs: ENOENT, in a missing parent: ENOENT). A missing
/// directory the launch would create is not created by the dry run.
#[test]
fn dry_run_refuses_the_state_dirs_the_launch_refuses() {
    let t = tempfile::tempdir().unwrap();
    let sticky = t.path().join("nosticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o777)).unwrap();
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&sticky, &link).unwrap();
    let mut dirs = vec![
        (sticky.clone(), "no sticky bit"),
        (link, "is a symlink to "),
        (
            PathBuf::from("/dev/null"),
            "is a character device, not a directory",
        ),
        (
            PathBuf::from("/proc/nope"),
            "cannot create it: No such file or directory",
        ),
        (
            t.path().join("missing/dir"),
            "cannot create it: No such file or directory",
        ),
    ];
    if nix::unistd::geteuid().is_root() {
        let other = t.path().join("nobody");
        std::fs::create_dir(&other).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o1777)).unwrap();
        nix::unistd::chown(&other, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        dirs.push((other, "belongs to uid 65534"));
    } else {
        common::skip("another user's state directory: needs root to chown");
    }
    for (dir, why) in &dirs {
        let launch = run(dir, &["--exclusive", "--cores", "1"], &["true"]);
        let dry = run(
            dir,
            &["--exclusive", "--cores", "1", "--dry-run"],
            &["true"],
        );
        assert_eq!(
            launch.status.code(),
            Some(125),
            "{dir:?}: {}",
            stderr(&launch)
        );
        assert_eq!(dry.status.code(), Some(125), "{dir:?}: {}", stderr(&dry));
        assert!(stderr(&dry).contains(why), "{dir:?}: {}", stderr(&dry));
        assert_eq!(stderr(&dry), stderr(&launch), "{dir:?}");
        assert!(dry.stdout.is_empty(), "{dir:?}");
    }
    // A missing directory in a writable parent: the launch would create
    // it; the dry run plans and leaves it missing.
    let fresh = t.path().join("fresh");
    let dry = run(
        &fresh,
        &["--exclusive", "--cores", "1", "--dry-run"],
        &["true"],
    );
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert!(!fresh.exists());
}

/// A state directory pinrun cannot read is never read as empty (never
/// fail open): `--show` says it could not be read and why, in text and
/// JSON, and a launch's refusal names what the path is and a hint that
/// works on this host. Cases: a regular file (open(2) O_DIRECTORY:
/// ENOTDIR; lstat(2) says S_IFREG), a mode 0000 directory read as user
/// nobody (EACCES), a directory to create under /proc (procfs: mkdir(2)
/// fails even for root, so no `install -d`).
#[test]
fn an_unreadable_state_dir_is_never_read_as_empty() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("state");
    std::fs::write(&file, "x").unwrap();
    let f = file.display();
    let show = run(&file, &["--show"], &[]);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        text.contains(&format!("claims ({f}): the state directory could not be read, so pinrun's claims are unknown: is a regular file, not a directory\n")),
        "{text}"
    );
    assert!(!text.contains(&format!("claims ({f}): none")), "{text}");
    let v: Value = serde_json::from_slice(&run(&file, &["--show", "--json"], &[]).stdout).unwrap();
    assert_eq!(
        v["state_dir_error"], "is a regular file, not a directory",
        "{v}"
    );
    let launch = run(&file, &["--exclusive", "--cores", "1"], &["true"]);
    assert_eq!(launch.status.code(), Some(125));
    assert_eq!(
        stderr(&launch),
        format!(
            "pinrun: claims: state directory {f}: is a regular file, not a directory\nhint: give a directory: --state-dir DIR (created, mode 1777, when missing); pinrun never replaces a file\n"
        )
    );
    // Under /proc only the kernel makes directories: no install -d.
    let launch = run(
        Path::new("/proc/pinrun-state"),
        &["--exclusive", "--cores", "1"],
        &["true"],
    );
    assert_eq!(
        stderr(&launch),
        "pinrun: claims: state directory /proc/pinrun-state: cannot create it: No such file or directory\nhint: /proc is in procfs, where only the kernel makes directories: use --state-dir DIR on a writable file system (the default is /run/pinrun)\n"
    );
    // Mode 0000, owned by root, read by nobody: EACCES.
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let closed = t.path().join("closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
    let c = closed.display().to_string();
    let Some(out) = common::as_nobody(&["--state-dir", &c, "--show"]) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let why = "cannot be read: permission denied (mode 0000, owner uid 0; pinrun runs as uid 65534 and needs to read and search it)";
    assert!(
        text.contains(&format!("claims ({c}): the state directory could not be read, so pinrun's claims are unknown: {why}\n")),
        "{text}"
    );
    let out = common::as_nobody(&[
        "--state-dir",
        &c,
        "--exclusive",
        "--cpus",
        "0",
        "--",
        "true",
    ])
    .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "pinrun: claims: state directory {c}: {why}\nhint: as its owner: chmod 1777 {c} (what pinrun creates), or use --state-dir DIR\n"
        )
    );
}
