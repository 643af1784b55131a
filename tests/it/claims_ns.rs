//! Claims across PID namespaces (issue 33 item 5): a record names its
//! holder by PID, a number valid in one PID namespace, so it also names
//! that namespace. Live, as root, with `unshare -p -f --mount-proc` and one
//! state directory shared by the host and the new namespaces: a host claim
//! holds inside a namespace, which cannot see the host's processes (the
//! record is honoured, never removed, and says so); a claim made inside a
//! namespace holds on the host, which finds its holder under the PID it has
//! there; and once a holder ends, the host (which sees every namespace)
//! reclaims its record. Before, each side took the other's PID for one of
//! its own: the record was judged stale, removed, and the CPU given away.

use super::claims::{bin, free_cores, records, stderr, wait_exec};
use crate::common;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether the tests can make PID namespaces here (root, unshare(1) with
/// `--mount-proc` and `--kill-child`); says SKIPPED when not.
fn namespaces_usable() -> bool {
    if !common::is_root() {
        common::skip("needs root for unshare -p");
        return false;
    }
    match Command::new("unshare")
        .args(["-p", "-f", "--mount-proc", "--kill-child", "true"])
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => true,
        Ok(s) => {
            common::skip(format_args!("unshare -p -f --mount-proc fails here ({s})"));
            false
        }
        Err(e) => {
            common::skip(format_args!("no unshare(1): {e}"));
            false
        }
    }
}

/// The children a test started, killed and reaped however it ends.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A CPU of a free core, as `--cpus` takes it.
fn some_cpu() -> Option<String> {
    free_cores()
        .first()
        .and_then(|c| c.first())
        .map(|c| c.to_string())
}

/// `pinrun --state-dir DIR ARGS [-- COMMAND]` on the host.
fn on_host(dir: &Path, args: &[&str], command: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.env("PINRUN_CONFIG", "")
        .arg("--state-dir")
        .arg(dir)
        .args(args);
    if !command.is_empty() {
        c.arg("--").args(command);
    }
    c
}

/// The same in a new PID namespace with its own `/proc`; `--kill-child`:
/// killing unshare kills what it started.
fn in_new_ns(dir: &Path, args: &[&str], command: &[&str]) -> Command {
    let mut c = Command::new("unshare");
    c.env("PINRUN_CONFIG", "")
        .args(["-p", "-f", "--mount-proc", "--kill-child"])
        .arg(bin())
        .arg("--state-dir")
        .arg(dir)
        .args(args);
    if !command.is_empty() {
        c.arg("--").args(command);
    }
    c
}

/// A command that prints the CPUs it may run on (pinrun execs it in place).
const SHOW_CPUS: [&str; 3] = ["grep", "Cpus_allowed_list:", "/proc/self/status"];

/// The CPU list a [`SHOW_CPUS`] command printed.
fn ran_on(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    out.trim()
        .strip_prefix("Cpus_allowed_list:")
        .unwrap_or_else(|| panic!("no affinity printed: {out:?} {}", stderr(o)))
        .trim()
        .to_string()
}

fn json(mut c: Command) -> Value {
    let o = c.output().unwrap();
    serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", stderr(&o)))
}

/// The inode of a PID namespace link (`pid:[INODE]`).
fn ns_ino(link: &str) -> u64 {
    std::fs::metadata(link).unwrap().ino()
}

/// A line of `/proc/PID/status`, its numbers.
fn status_ids(pid: u32, key: &str) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect()
}

/// The child of `parent` whose comm is `comm`, waited for (unshare's
/// child is the new namespace's PID 1).
fn child_of(parent: u32, comm: &str) -> u32 {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let ppid: Option<u32> = pinrun::system::threads::stat_field(&stat, 4);
            if ppid == Some(parent) && pinrun::system::threads::stat_comm(&stat) == Some(comm) {
                return pid;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no child {comm} of {parent}");
}

/// The one record in `dir` whose name starts with `prefix`.
fn record_starting(dir: &Path, prefix: &str) -> String {
    let found: Vec<String> = records(dir)
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect();
    assert_eq!(found.len(), 1, "{prefix}: {:?}", records(dir));
    found[0].clone()
}

/// A claim on the host, read from a new PID namespace: the holder's PID
/// names another process there (or none), so the namespace cannot judge
/// it: the launch is refused (cpu-claimed) naming the host's namespace,
/// the record is listed as honoured unchecked and stays, even after the
/// holder ended. The host then reclaims it and runs on the CPU.
#[test]
fn a_host_claim_holds_in_a_pid_namespace() {
    if !namespaces_usable() {
        return;
    }
    let Some(cpu) = some_cpu() else {
        common::skip("no free core");
        return;
    };
    let t = common::tempdir();
    let dir = t.path().join("state");
    let host_ns = ns_ino("/proc/self/ns/pid");
    let mut kids = Children(Vec::new());
    let holder = on_host(
        &dir,
        &["-q", "--exclusive", "--cpus", &cpu],
        &["sleep", "60"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let hp = holder.id();
    kids.0.push(holder);
    wait_exec(hp, "sleep");
    let rec = record_starting(&dir, &format!("{hp}."));

    let o = in_new_ns(&dir, &["-q", "--exclusive", "--cpus", &cpu], &SHOW_CPUS)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(125),
        "ran on a claimed CPU: {} {}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    let e = stderr(&o);
    assert!(
        e.contains(&format!("CPU {cpu} is claimed"))
            && e.contains(&format!(
                "pid {hp} in PID namespace pid:[{host_ns}] (sleep 60; not visible from here: honoured unchecked)"
            )),
        "{e}"
    );
    let text = std::fs::read_to_string(dir.join(&rec)).unwrap();
    assert!(text.contains(&format!("\"ino\":{host_ns}")), "{text}");
    let v = json(in_new_ns(
        &dir,
        &["--dry-run", "--json", "--exclusive", "--cpus", &cpu],
        &["true"],
    ));
    assert_eq!(v["error"]["code"], "cpu-claimed", "{v}");
    let v = json(in_new_ns(&dir, &["--show", "--json"], &[]));
    let c = &v["claims"][0];
    assert_eq!(
        (&c["pid"], &c["pid_ns"]["ino"], &c["pid_here"]),
        (&Value::from(hp), &Value::from(host_ns), &Value::Null),
        "{c}"
    );
    assert!(c["unchecked"].is_string(), "{c}");
    assert!(records(&dir).contains(&rec));

    // The holder ends: nothing inside the namespace can tell, so the
    // record is still honoured there, and kept.
    for mut k in kids.0.drain(..) {
        k.kill().unwrap();
        k.wait().unwrap();
    }
    let o = in_new_ns(&dir, &["-q", "--exclusive", "--cpus", &cpu], &["true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(records(&dir).contains(&rec), "{:?}", records(&dir));

    // The host sees its holder gone: reclaimed, and the CPU is given.
    let o = on_host(&dir, &["-q", "--exclusive", "--cpus", &cpu], &SHOW_CPUS)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(ran_on(&o), cpu);
    assert!(!records(&dir).contains(&rec), "{:?}", records(&dir));
}

/// A claim made inside a new PID namespace (its holder is that namespace's
/// PID 1), read on the host, where PID 1 is another process: the host
/// finds the holder by its namespace, under the PID it has here, and
/// refuses (cpu-claimed) naming both PIDs; a sibling namespace cannot see
/// it and honours it. Once the holder ends the host finds the namespace
/// gone, reclaims the record and runs on the CPU.
#[test]
fn a_claim_made_in_a_pid_namespace_holds_on_the_host() {
    if !namespaces_usable() {
        return;
    }
    let Some(cpu) = some_cpu() else {
        common::skip("no free core");
        return;
    };
    let t = common::tempdir();
    let dir = t.path().join("state");
    let mut kids = Children(Vec::new());
    let unshare = in_new_ns(
        &dir,
        &["-q", "--exclusive", "--cpus", &cpu],
        &["sleep", "60"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let up = unshare.id();
    kids.0.push(unshare);
    let hp = child_of(up, "sleep");
    assert_eq!(status_ids(hp, "NSpid:"), vec![hp, 1]);
    assert_eq!(
        status_ids(hp, "Cpus_allowed_list:"),
        vec![cpu.parse::<u32>().unwrap()]
    );
    let ns = ns_ino(&format!("/proc/{hp}/ns/pid"));
    let rec = record_starting(&dir, "1.");

    let o = on_host(&dir, &["-q", "--exclusive", "--cpus", &cpu], &SHOW_CPUS)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(125),
        "ran on a claimed CPU: {} {}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    let e = stderr(&o);
    assert!(
        e.contains(&format!("CPU {cpu} is claimed"))
            && e.contains(&format!(
                "pid {hp} (sleep 60; pid 1 in PID namespace pid:[{ns}])"
            )),
        "{e}"
    );
    let text = std::fs::read_to_string(dir.join(&rec)).unwrap();
    assert!(text.contains(&format!("\"ino\":{ns}")), "{text}");
    let v = json(on_host(
        &dir,
        &["--dry-run", "--json", "--exclusive", "--cpus", &cpu],
        &["true"],
    ));
    assert_eq!(v["error"]["code"], "cpu-claimed", "{v}");
    let v = json(on_host(&dir, &["--show", "--json"], &[]));
    let c = &v["claims"][0];
    assert_eq!(
        (
            &c["pid"],
            &c["pid_ns"]["ino"],
            &c["pid_here"],
            &c["unchecked"]
        ),
        (
            &Value::from(1),
            &Value::from(ns),
            &Value::from(hp),
            &Value::Null
        ),
        "{c}"
    );
    // A sibling namespace sees neither the holder nor its namespace.
    let o = in_new_ns(&dir, &["-q", "--exclusive", "--cpus", &cpu], &["true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(stderr(&o).contains("honoured unchecked"), "{}", stderr(&o));
    assert!(records(&dir).contains(&rec));

    // The holder ends (the namespace with it): the host reclaims.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(hp as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    for mut k in kids.0.drain(..) {
        k.wait().unwrap();
    }
    let o = on_host(&dir, &["-q", "--exclusive", "--cpus", &cpu], &SHOW_CPUS)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(ran_on(&o), cpu);
    assert!(!records(&dir).contains(&rec), "{:?}", records(&dir));
}

/// A steering journal (`steer.PID.START.journal`) as a launch of PID
/// namespace `ns` (dev, ino) would leave it, with no IRQ in it: undoing it
/// changes nothing on this machine, it only removes the file.
fn write_journal(dir: &Path, pid: u32, start: u64, ns: (u64, u64)) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let name = format!("steer.{pid}.{start}.journal");
    let j = serde_json::json!({
        "version": 1, "pid": pid, "start_time": start,
        "pid_ns": {"dev": ns.0, "ino": ns.1},
        "cpus": "0", "default_original": null, "default_written": null, "irqs": [],
    });
    std::fs::write(dir.join(&name), format!("{j}\n")).unwrap();
    name
}

/// Field 22 of `/proc/PID/stat`.
fn start_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    pinrun::system::threads::stat_field(&stat, 22).unwrap()
}

/// The journals in `dir`.
fn journals(dir: &Path) -> Vec<String> {
    records(dir)
        .into_iter()
        .filter(|n| n.starts_with("steer."))
        .collect()
}

/// IRQ steering journals name their launch's PID namespace too, and
/// `--reclaim` judges a launch in it: a namespace's live launch (PID 1
/// there, the host's init here) is not undone by the host, a host's live
/// launch not by a namespace, which cannot see it and says so; once the
/// launch has ended the host restores it. Before, each side took the
/// other's PID for one of its own and undid a live launch's steering.
#[test]
fn steering_of_a_live_launch_in_another_namespace_is_never_undone() {
    if !namespaces_usable() {
        return;
    }
    let t = common::tempdir();
    let dir = t.path().join("state");
    let reclaim = |mut c: Command| -> String {
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stderr(&o)
    };
    let mut kids = Children(Vec::new());

    // A launch in a new namespace: its PID 1, seen from the host.
    let unshare = Command::new("unshare")
        .args(["-p", "-f", "--mount-proc", "--kill-child", "sleep", "60"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let up = unshare.id();
    kids.0.push(unshare);
    let hp = child_of(up, "sleep");
    let link = std::fs::metadata(format!("/proc/{hp}/ns/pid")).unwrap();
    let name = write_journal(&dir, 1, start_of(hp), (link.dev(), link.ino()));
    let e = reclaim(on_host(&dir, &["--reclaim"], &[]));
    assert!(!e.contains("restored"), "{e}");
    assert_eq!(journals(&dir), vec![name.clone()], "{e}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(hp as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    for mut k in kids.0.drain(..) {
        k.wait().unwrap();
    }
    let e = reclaim(on_host(&dir, &["--reclaim"], &[]));
    assert!(e.contains("restored the IRQ steering of pid 1"), "{e}");
    assert_eq!(journals(&dir), Vec::<String>::new(), "{e}");

    // A launch on the host, seen from a new namespace.
    let sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let sp = sleeper.id();
    kids.0.push(sleeper);
    let link = std::fs::metadata("/proc/self/ns/pid").unwrap();
    let name = write_journal(&dir, sp, start_of(sp), (link.dev(), link.ino()));
    let e = reclaim(in_new_ns(&dir, &["--reclaim"], &[]));
    assert!(
        e.contains(&format!(
            "kept the IRQ steering of pid {sp} in PID namespace pid:[{}]",
            link.ino()
        )) && !e.contains("restored"),
        "{e}"
    );
    assert_eq!(journals(&dir), vec![name.clone()], "{e}");
    for mut k in kids.0.drain(..) {
        k.kill().unwrap();
        k.wait().unwrap();
    }
    // Ended, but the namespace cannot tell: still kept there; the host
    // restores it.
    let e = reclaim(in_new_ns(&dir, &["--reclaim"], &[]));
    assert!(e.contains("kept the IRQ steering"), "{e}");
    assert_eq!(journals(&dir), vec![name], "{e}");
    let e = reclaim(on_host(&dir, &["--reclaim"], &[]));
    assert!(
        e.contains(&format!("restored the IRQ steering of pid {sp}")),
        "{e}"
    );
    assert_eq!(journals(&dir), Vec::<String>::new(), "{e}");
}
