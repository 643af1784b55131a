//! The state directory's trust model (issue 15): what other users, a
//! hostile directory or a failing kernel can do to `--exclusive` launches.
//! One test per fault a break test of pinrun found; each failed on the
//! code before the fix (the claim was granted again, the launch spun, hung
//! or failed for a reason that was not its own). Unprivileged users are
//! played by uid 65534 through `setpriv` (root only: skipped visibly
//! otherwise). Every test uses a private state directory.

use super::claims::{as_user, bin, free_cores, start_time, stderr, wait_exec};
use crate::common;
use serde_json::Value;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NOBODY: u32 = 65534;

/// A state directory `<tmp>/state`, mode 1777, in a directory every user
/// may traverse.
struct Shared {
    _t: tempfile::TempDir,
    dir: PathBuf,
}

fn shared() -> Shared {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = t.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    Shared { _t: t, dir }
}

/// `pinrun --state-dir DIR ARGS [-- COMMAND]`, as this user.
fn pinrun_in(dir: &Path, args: &[&str], command: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("--state-dir").arg(dir).args(args);
    if !command.is_empty() {
        c.arg("--").args(command);
    }
    c.stdin(Stdio::null());
    c
}

fn can_switch_users() -> bool {
    if !common::is_root() || !Path::new("/usr/bin/setpriv").exists() {
        common::skip("needs root and setpriv (to act as uid 65534)");
        return false;
    }
    true
}

/// The free cores when there are two and users can be switched; `None`
/// (the test skipped, saying why) otherwise.
fn two_cores_as_root() -> Option<Vec<Vec<u32>>> {
    if !can_switch_users() {
        return None;
    }
    let cores = free_cores();
    if cores.len() < 2 {
        common::skip("needs 2 free cores");
        return None;
    }
    Some(cores)
}

/// Waits for `child` up to `limit`; kills it and returns `None` when it
/// is still running then.
fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn list(cpus: &[u32]) -> String {
    cpus.iter()
        .copied()
        .collect::<pinrun::cpuset::CpuSet>()
        .to_list()
}

/// The findings of `pinrun --dry-run --json ARGS` (which must succeed), as
/// JSON text.
fn dry_findings(dir: &Path, args: &[&str]) -> String {
    let mut a = vec!["--dry-run", "--json"];
    a.extend_from_slice(args);
    let o = pinrun_in(dir, &a, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["findings"].to_string()
}

/// A record's text as pinrun writes it.
fn record_json(pid: u32, start: u64, uid: u32, cpus: &str, command: &str) -> String {
    serde_json::json!({
        "version": 1, "pid": pid, "start_time": start, "uid": uid,
        "cpus": cpus, "command": [command], "time": 0,
    })
    .to_string()
        + "\n"
}

/// The names of `dir` in directory order (the order `getdents64(2)`
/// returns them, which is pinrun's).
fn listing(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn is_record_name(n: &str) -> bool {
    let p: Vec<&str> = n.split('.').collect();
    (2..=3).contains(&p.len())
        && p[..2]
            .iter()
            .all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
}

/// Fault 1: Another user floods the directory with files named like records of
/// a live PID (PID 1) until a real claim lies beyond the first 4096 record
/// names in directory order. pinrun used to read only those and grant the
/// claimed core again; now the listing is complete, the flooding user's
/// records are all ignored (past the per-user cap) and the claim holds.
#[test]
fn a_flood_of_records_cannot_hide_a_claim() {
    let Some(cores) = two_cores_as_root() else {
        return;
    };
    let s = shared();
    let pid1 = start_time(1);
    let junk = record_json(1, pid1, NOBODY, &list(&cores.concat()), "junk");
    let mut n = 0;
    let mut flood = |count: usize| {
        for _ in 0..count {
            let f = s.dir.join(format!("1.{n}"));
            std::fs::write(&f, &junk).unwrap();
            std::os::unix::fs::chown(&f, Some(NOBODY), Some(NOBODY)).unwrap();
            n += 1;
        }
    };
    flood(12_000);
    // Whatever the directory's order (creation, reverse creation, hash),
    // a holder whose record lies beyond the first 4200 record names.
    let mut tries = 0;
    let mut holder = loop {
        let mut h = pinrun_in(&s.dir, &["--exclusive", "--cores", "1"], &["sleep", "60"])
            .spawn()
            .unwrap();
        wait_exec(h.id(), "sleep");
        flood(2000);
        let prefix = format!("{}.", h.id());
        let at = listing(&s.dir)
            .into_iter()
            .filter(|n| is_record_name(n))
            .position(|n| n.starts_with(&prefix))
            .unwrap();
        if at > 4200 {
            break h;
        }
        h.kill().unwrap();
        h.wait().unwrap();
        tries += 1;
        assert!(tries < 30, "the holder's record stays among the first");
    };
    let n = listing(&s.dir)
        .iter()
        .filter(|f| f.starts_with("1."))
        .count();
    let all = cores.len().to_string();
    let o = pinrun_in(&s.dir, &["--exclusive", "--cores", &all], &["true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(" free core") && stderr(&o).contains(&format!("pid {}", holder.id())),
        "{}",
        stderr(&o)
    );
    let o = pinrun_in(&s.dir, &["--show", "--json"], &[])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["claim_warnings"].to_string();
    assert!(
        w.contains(&format!("uid {NOBODY} has {n} records")) && w.contains("all of them ignored"),
        "{w}"
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
}

/// Fault 2: A 64 KB record whose `cpus` repeats the widest range: not a record
/// (records are at most 32 KiB), so it claims nothing and cannot make a
/// launch parse for long; it used to claim every CPU.
#[test]
fn an_oversized_record_claims_nothing() {
    let t = tempfile::tempdir().unwrap();
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let (pid, st) = (sleeper.id(), start_time(sleeper.id()));
    let cpus = "0-4194303,".repeat(6500);
    let text = record_json(
        pid,
        st,
        nix::unistd::geteuid().as_raw(),
        &cpus[..cpus.len() - 1],
        "x",
    );
    assert!(text.len() > 64_000, "{}", text.len());
    std::fs::write(t.path().join(format!("{pid}.{st}")), text).unwrap();
    let f = dry_findings(t.path(), &["--cores", "1"]);
    assert!(
        f.contains("claim-record-unusable") && f.contains("larger than 32768 bytes"),
        "{f}"
    );
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}

/// A seccomp filter (classic BPF) that fails system call `nr` with
/// `errno`, only when its third argument is `arg2` if given, and allows
/// everything else; for `pre_exec`.
fn fail_syscall(nr: i64, arg2: Option<u32>, errno: i32) -> impl FnMut() -> std::io::Result<()> {
    #[repr(C)]
    struct SockFilter {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let op = |code, jt, jf, k| SockFilter { code, jt, jf, k };
    // seccomp_data: nr at offset 0, args[i] at 16 + 8 i (low half first).
    let mut prog = vec![op(LD_W_ABS, 0, 0, 0)];
    match arg2 {
        Some(a) => prog.extend([
            op(JEQ_K, 0, 3, nr as u32),
            op(LD_W_ABS, 0, 0, 32),
            op(JEQ_K, 0, 1, a),
        ]),
        None => prog.push(op(JEQ_K, 0, 1, nr as u32)),
    }
    prog.push(op(RET_K, 0, 0, RET_ERRNO | errno as u32));
    prog.push(op(RET_K, 0, 0, RET_ALLOW));
    move || {
        let fprog = SockFprog {
            len: prog.len() as u16,
            filter: prog.as_ptr(),
        };
        // SAFETY: prctl with a valid, live filter program.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, 2, &fprog as *const SockFprog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Runs `pinrun --state-dir DIR ARGS [-- COMMAND]` under a
/// [`fail_syscall`] filter, killed after 30 s (it must end by itself).
fn under_seccomp(
    dir: &Path,
    args: &[&str],
    command: &[&str],
    filter: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) -> std::process::Output {
    let mut c = pinrun_in(dir, args, command);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: only prctl(2) between fork and exec.
    unsafe { c.pre_exec(filter) };
    let mut child = c.spawn().unwrap();
    let status = wait_for(&mut child, Duration::from_secs(30));
    assert!(status.is_some(), "{args:?}: pinrun did not end in 30 s");
    child.wait_with_output().unwrap()
}

/// Fault 3: opening a live record fails for a reason that says nothing
/// about it (EMFILE, ENFILE, ENOMEM, EIO, EINTR: a seccomp filter fails the
/// `openat(2)` of records, recognised by their flags): the launch and its
/// dry run refuse, naming the record and the error; they never grant its
/// CPUs. They used to ignore the record ("unusable") and grant them.
#[test]
fn an_unreadable_record_refuses_instead_of_granting() {
    let cores = free_cores();
    if cores.len() < 2 || !cfg!(target_arch = "x86_64") {
        common::skip("needs 2 free cores and x86_64 (seccomp filter)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("state");
    let mut holder = pinrun_in(&dir, &["--exclusive", "--cores", "1"], &["sleep", "60"])
        .spawn()
        .unwrap();
    wait_exec(holder.id(), "sleep");
    let all = cores.len().to_string();
    let record_flags =
        (libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
            as u32;
    for errno in [
        libc::EMFILE,
        libc::ENFILE,
        libc::ENOMEM,
        libc::EIO,
        libc::EINTR,
    ] {
        for (args, command) in [
            (&["--exclusive", "--cores", &all][..], &["true"][..]),
            (&["--dry-run", "--exclusive", "--cores", &all][..], &[][..]),
        ] {
            let filter = fail_syscall(libc::SYS_openat, Some(record_flags), errno);
            let o = under_seccomp(&dir, args, command, filter);
            let want = format!(
                "cannot be read (open: {})",
                nix::errno::Errno::from_raw(errno).desc()
            );
            assert_eq!(
                o.status.code(),
                Some(125),
                "{want}, {args:?}: {}",
                stderr(&o)
            );
            assert!(
                stderr(&o).contains(&want),
                "{want}, {args:?}: {}",
                stderr(&o)
            );
        }
    }
    holder.kill().unwrap();
    holder.wait().unwrap();
}

/// Fault 4: Every `getdents64(2)` on the state directory fails (a seccomp filter
/// returns EIO): the launch refuses at once, naming the failure. It used
/// to retry the same error forever while holding the lock.
#[test]
fn a_failing_directory_listing_refuses_at_once() {
    if !cfg!(target_arch = "x86_64") {
        common::skip("the seccomp filter reads x86_64 system call numbers");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // The launch, and its dry run, which predicts the refusal.
    for (args, command) in [
        (
            &["--quiet", "--exclusive", "--cpus", "0"][..],
            &["true"][..],
        ),
        (&["--dry-run", "--exclusive", "--cpus", "0"][..], &[][..]),
    ] {
        let filter = fail_syscall(libc::SYS_getdents64, None, libc::EIO);
        let o = under_seccomp(t.path(), args, command, filter);
        assert_eq!(o.status.code(), Some(125), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("getdents64: I/O error"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// Fault 5a: Another user holds the directory's lock: an `--exclusive` launch
/// refuses after its bounded wait, naming the holder (PID, command, UID
/// from `/proc/locks`) so that it can be stopped.
#[test]
fn a_held_lock_names_its_holder() {
    if !can_switch_users() {
        return;
    }
    let s = shared();
    let mut locker = as_user(
        NOBODY,
        Path::new("/usr/bin/flock"),
        &["-x", s.dir.to_str().unwrap(), "sleep", "60"],
    )
    .spawn()
    .unwrap();
    // flock(1) forks the command once it holds the lock.
    let t = Instant::now();
    while !std::fs::read_to_string("/proc/locks")
        .unwrap()
        .contains(&format!(" {} ", locker.id()))
    {
        assert!(t.elapsed() < Duration::from_secs(10), "flock took no lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A test build waits a tenth of the 10 s (pinrun::waits::bound).
    let o = pinrun_in(&s.dir, &["--exclusive", "--cores", "1"], &["true"])
        .env("PINRUN_TEST_SHORT_WAITS", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let want = format!(
        "still locked after 1s by pid {} (flock) of uid {NOBODY}",
        locker.id()
    );
    assert!(stderr(&o).contains(&want), "{want}: {}", stderr(&o));
    assert!(stderr(&o).contains("hint: "), "{}", stderr(&o));
    locker.kill().unwrap();
    locker.wait().unwrap();
}

/// A pipe whose buffer is full: writing to `.1` blocks until `.0` is read.
fn full_pipe() -> (OwnedFd, OwnedFd) {
    let (r, w) = nix::unistd::pipe().unwrap();
    let flags =
        nix::fcntl::OFlag::from_bits_truncate(nix::fcntl::fcntl(&w, nix::fcntl::F_GETFL).unwrap());
    nix::fcntl::fcntl(
        &w,
        nix::fcntl::F_SETFL(flags | nix::fcntl::OFlag::O_NONBLOCK),
    )
    .unwrap();
    let chunk = [b'x'; 4096];
    while nix::unistd::write(&w, &chunk).is_ok() {}
    nix::fcntl::fcntl(&w, nix::fcntl::F_SETFL(flags)).unwrap();
    (r, w)
}

/// Fault 5b: A launch whose stderr is a full pipe (its reader stuck) blocks
/// printing its warnings; it must not do so holding the lock. It used to:
/// every other `--exclusive` launch then failed after 10 s.
#[test]
fn a_launch_blocked_on_stderr_does_not_hold_the_lock() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    // A warning for every launch: a file named like a record of PID 1
    // that is no record.
    std::fs::write(dir.join("1.1"), "not a record").unwrap();
    let (r, w) = full_pipe();
    let mut blocked = pinrun_in(&dir, &["--exclusive", "--cores", "1"], &["sleep", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::from(w))
        .spawn()
        .unwrap();
    // It writes its record, then blocks on stderr.
    let t0 = Instant::now();
    while !listing(&dir)
        .iter()
        .any(|n| n.starts_with(&format!("{}.", blocked.id())))
        && t0.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(blocked.try_wait().unwrap().is_none());
    let o = pinrun_in(&dir, &["--exclusive", "--cores", "1"], &["true"])
        .output()
        .unwrap();
    assert!(
        !stderr(&o).contains("locked"),
        "a blocked launch held the lock: {}",
        stderr(&o)
    );
    assert!(
        o.status.code() == Some(0) || stderr(&o).contains("no free core"),
        "{}",
        stderr(&o)
    );
    drop(r);
    let _ = blocked.kill();
    let _ = blocked.wait();
}

/// Fault 6: A user writes a record for its own process (restricted to one core)
/// claiming every CPU under another command's name: the claim holds only
/// the CPUs that process may run on, with a finding naming the rest, and
/// every message names the claiming user. It used to refuse root's
/// launches on every CPU.
#[test]
fn a_users_claim_holds_only_its_own_cpus() {
    let Some(cores) = two_cores_as_root() else {
        return;
    };
    let s = shared();
    let (mine, theirs) = (cores[0][0], &cores[1]);
    let mut sleeper = as_user(
        NOBODY,
        Path::new("/usr/bin/taskset"),
        &["-c", &list(theirs), "sleep", "60"],
    )
    .spawn()
    .unwrap();
    wait_exec(sleeper.id(), "sleep");
    let (pid, st) = (sleeper.id(), start_time(sleeper.id()));
    let rec = record_json(pid, st, NOBODY, &list(&cores.concat()), "systemd");
    let sh = format!("printf '%s' '{rec}' > {}/{pid}.{st}", s.dir.display());
    assert!(
        as_user(NOBODY, Path::new("/bin/sh"), &["-c", &sh])
            .status()
            .unwrap()
            .success()
    );
    let f = dry_findings(&s.dir, &["--exclusive", "--cpus", &mine.to_string()]);
    assert!(
        f.contains(&format!(
            "outside pid {pid}'s Cpus_allowed_list {}",
            list(theirs)
        )),
        "{f}"
    );
    let o = pinrun_in(
        &s.dir,
        &["--dry-run", "--cpus", &theirs[0].to_string()],
        &[],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("by pid {pid} (systemd) of uid {NOBODY}")),
        "{}",
        stderr(&o)
    );
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}

/// Fault 7: Files pre-created under every name `<pid>.<start>[.N]` the launch
/// could have used (its PID and start time are those of the shell that
/// execs it): the launch still claims, under a random name. It used to
/// fail, blaming permissions.
#[test]
fn pre_created_record_names_do_not_stop_a_launch() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    let chown = if common::is_root() {
        format!("chown {NOBODY} \"$D\"/$$.* ;")
    } else {
        String::new()
    };
    let script = format!(
        "st=$(cut -d' ' -f22 /proc/$$/stat); : > \"$D/$$.$st\"; \
         for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do : > \"$D/$$.$st.$i\"; done; {chown} \
         exec \"$P\" --state-dir \"$D\" --exclusive --cores 1 -- sh -c 'echo $$'"
    );
    let o = Command::new("sh")
        .args(["-c", &script])
        .env("D", &dir)
        .env("P", bin())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The 17 decoys, kept (not pinrun's), and the launch's own record
    // (stale since `sh` exited, reclaimed by the next launch).
    let names = listing(&dir);
    assert_eq!(names.len(), 18, "{names:?}");
    assert_eq!(
        names
            .iter()
            .filter(|n| n.split('.').nth(2).is_some_and(|s| s.len() == 16))
            .count(),
        1,
        "{names:?}"
    );
}

/// Fault 8: A mistaken `--state-dir` pointing at an ordinary directory: files
/// that merely look like stale records (named `<dead pid>.<n>`) are kept.
/// pinrun removes only its own records (its format, the owner they name).
#[test]
fn files_that_only_look_like_records_are_never_deleted() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("photos");
    std::fs::create_dir(&dir).unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let dp = dead.id();
    dead.wait().unwrap();
    let files = [format!("{dp}.1"), format!("{dp}.2024"), format!("{dp}.7.3")];
    for f in &files {
        std::fs::write(dir.join(f), "precious").unwrap();
    }
    // A real stale record of this user next to them: reclaimed.
    let me = nix::unistd::geteuid().as_raw();
    std::fs::write(
        dir.join(format!("{dp}.5")),
        record_json(dp, 5, me, "0", "x"),
    )
    .unwrap();
    let o = pinrun_in(&dir, &["--exclusive", "--cores", "1"], &["true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in &files {
        assert_eq!(
            std::fs::read_to_string(dir.join(f)).ok().as_deref(),
            Some("precious"),
            "{f}"
        );
    }
    assert!(!dir.join(format!("{dp}.5")).exists());
}

/// Every free core claimed (`--exclusive`) by a launch that leads its
/// process group and exits, leaving a `sleep 60` of its group behind: the
/// temporary directory, the state directory in it, and the group's id
/// (the caller kills the group). `None` without a free core.
fn claim_by_a_group() -> Option<(tempfile::TempDir, PathBuf, i32)> {
    let cores = free_cores();
    if cores.is_empty() {
        return None;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("state");
    let all = cores.len().to_string();
    let mut c = pinrun_in(
        &dir,
        &["--exclusive", "--cores", &all],
        &["sh", "-c", "sleep 60 </dev/null >/dev/null 2>&1 & exit 0"],
    );
    c.process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut leader = c.spawn().unwrap();
    let pgid = leader.id() as i32;
    assert!(leader.wait().unwrap().success());
    Some((t, dir, pgid))
}

/// Fault 9: A command that forks and exits (a daemon, `sh -c 'cmd &'`) leaves
/// its children on the claimed cores: when the launch leads its process
/// group (a shell job, a systemd service) the claim lasts while the group
/// has a live member, and ends with it. It used to end with the PID.
#[test]
fn a_claim_follows_the_process_group() {
    let Some((_t, dir, pgid)) = claim_by_a_group() else {
        common::skip("no free core");
        return;
    };
    let o = pinrun_in(&dir, &["--dry-run", "--cores", "1"], &[])
        .output()
        .unwrap();
    let show = pinrun_in(&dir, &["--show", "--json"], &[])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&show.stdout).unwrap();
    let c = &v["claims"][0];
    let (pid, pgid_json, group_only) = (
        c["pid"].as_i64(),
        c["pgid"].as_i64(),
        c["group_only"].as_bool(),
    );
    let killed = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("process group {pgid} (sh -c"))
            && stderr(&o).contains(&format!("pid {pgid} exited)")),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        (pid, pgid_json, group_only),
        (Some(pgid.into()), Some(pgid.into()), Some(true))
    );
    assert!(killed.is_ok());
    // The group gone, the claim is reclaimed.
    let t0 = Instant::now();
    loop {
        let o = pinrun_in(&dir, &["--dry-run", "--cores", "1"], &[])
            .output()
            .unwrap();
        if o.status.code() == Some(0) {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{}", stderr(&o));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fault 11 (session 7's break test): the members of a claim's process
/// group are found by reading every `/proc/PID/stat`; under a small
/// `ulimit -n` those opens failed with EMFILE, the live group read as
/// empty, the claim was judged stale, its record removed and the CPUs
/// granted (`ulimit -n 5`: the command ran on the claimed core, exit 0).
/// At every limit the launch is refused and the record kept.
#[test]
fn a_group_that_cannot_be_read_keeps_its_claim() {
    let Some((t, dir, pgid)) = claim_by_a_group() else {
        common::skip("no free core");
        return;
    };
    let before = listing(&dir);
    let ran = t.path().join("ran");
    let mut outcomes = Vec::new();
    for n in 4..=12 {
        let o = common::pinrun_under_ulimit("-n", n)
            .arg("--state-dir")
            .arg(&dir)
            .args(["--exclusive", "--cores", "1", "--", "touch"])
            .arg(&ran)
            .output()
            .unwrap();
        outcomes.push((n, o.status.code(), stderr(&o)));
    }
    let after = listing(&dir);
    let killed = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert!(killed.is_ok());
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(after, before, "the live group's record was removed");
    assert!(
        !ran.exists(),
        "the command ran on a claimed core: {outcomes:#?}"
    );
    for (n, code, err) in &outcomes {
        assert_eq!(*code, Some(125), "ulimit -n {n}: {err}");
    }
}

/// Fault 10: `PINRUN_STATE_DIR=` (set, empty) is unset, as for most tools; an
/// empty `--state-dir` typed on the command line is refused naming it.
#[test]
fn an_empty_pinrun_state_dir_is_unset() {
    let t = tempfile::tempdir().unwrap();
    let o = common::pinrun()
        .env("PINRUN_STATE_DIR", "")
        .args(["--dry-run", "--json", "--cores", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = common::pinrun()
        .env("PINRUN_STATE_DIR", "")
        .arg("--state-dir")
        .arg(t.path().join("s"))
        .args(["--exclusive", "--cores", "1", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = common::pinrun()
        .args(["--state-dir", "", "--show"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("--state-dir"), "{}", stderr(&o));
}

/// Fault 11: A record's command with bidirectional controls (U+202A–U+202E,
/// U+2066–U+2069) reaches neither `--show` nor messages: each is `?`.
#[test]
fn bidi_controls_in_a_record_never_reach_the_terminal() {
    let t = tempfile::tempdir().unwrap();
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let (pid, st) = (sleeper.id(), start_time(sleeper.id()));
    let evil: String = [
        '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}',
    ]
    .iter()
    .map(|c| format!("a{c}"))
    .collect();
    let me = nix::unistd::geteuid().as_raw();
    std::fs::write(
        t.path().join(format!("{pid}.{st}")),
        record_json(pid, st, me, "0", &evil),
    )
    .unwrap();
    let shown = "a?".repeat(9);
    let o = pinrun_in(t.path(), &["--show"], &[]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains(&shown), "{text}");
    let o = pinrun_in(t.path(), &["--dry-run", "--cpus", "0"], &[])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains(&shown), "{}", stderr(&o));
    for out in [text, stderr(&o)] {
        assert!(
            !out.chars().any(|c| ('\u{202A}'..='\u{202E}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{out:?}"
        );
    }
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}

/// The state directory's own checks hold for other users' directories:
/// one another user owns is refused, even sticky.
#[test]
fn another_users_state_directory_is_refused() {
    if !can_switch_users() {
        return;
    }
    let s = shared();
    std::os::unix::fs::chown(&s.dir, Some(NOBODY), Some(NOBODY)).unwrap();
    let o = pinrun_in(&s.dir, &["--exclusive", "--cores", "1"], &["true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains(&format!("belongs to uid {NOBODY}")),
        "{}",
        stderr(&o)
    );
}

/// Issue 33's break test D1: a seccomp filter fails the launch's own calls
/// with EPERM (sched_setaffinity(2), x86_64 203; set_mempolicy(2), 238;
/// sched_setattr(2), 314). The dry run and --check asked the files only
/// and said 0 while the launch exited 125; they now make the launch's
/// calls on a throwaway thread and end as it does: the same status and
/// the same error line.
#[test]
fn a_dry_run_meets_the_seccomp_filter_the_launch_meets() {
    if !cfg!(target_arch = "x86_64") {
        return common::skip("the seccomp filter reads x86_64 system call numbers");
    }
    let dir = common::tempdir();
    for (nr, args) in [
        (203, &["--cpus", "0"][..]),
        (238, &["--membind", "0"][..]),
        (314, &["--batch"][..]),
    ] {
        let run = |mode: Option<&str>| {
            let mut a: Vec<&str> = mode.into_iter().collect();
            a.extend(args);
            under_seccomp(
                dir.path(),
                &a,
                &["true"],
                fail_syscall(nr, None, libc::EPERM),
            )
        };
        let launch = run(None);
        assert_eq!(launch.status.code(), Some(125), "{args:?}: {launch:?}");
        let error = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .find(|l| l.starts_with("pinrun: "))
                .map(String::from)
        };
        for mode in ["--dry-run", "--check"] {
            let o = run(Some(mode));
            assert_eq!(o.status.code(), Some(125), "{mode} {args:?}: {o:?}");
            assert_eq!(error(&o), error(&launch), "{mode} {args:?}");
        }
    }
}

/// Issue 33 (break test): `--show` labelled every unusable file in the
/// state directory "warning:" while the `claim-record-unusable` finding
/// calls another user's info. One rule (pinrun(1) SECURITY, Other users'
/// files): a file of root or this user that is not a record is a
/// warning, another user's (uid 65534 here, by chown) info, in `--show`'s
/// text, in its JSON (`claim_info`) and in `--check`'s finding.
#[test]
fn other_users_files_are_info_wherever_they_are_shown() {
    if !common::is_root() {
        common::skip("needs root to chown a file to another user");
        return;
    }
    let s = shared();
    let theirs = s.dir.join("1.1");
    let ours = s.dir.join("1.2");
    std::fs::write(&theirs, "not a record").unwrap();
    std::fs::write(&ours, "not a record").unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let o = pinrun_in(&s.dir, &["--show"], &[]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let label = |f: &Path| {
        let name = f.display().to_string();
        text.lines()
            .find(|l| l.contains(&name))
            .and_then(|l| l.split_once(':'))
            .map(|(k, _)| k.to_string())
    };
    assert_eq!(label(&theirs).as_deref(), Some("info"), "{text}");
    assert_eq!(label(&ours).as_deref(), Some("warning"), "{text}");
    let o = pinrun_in(&s.dir, &["--show", "--json"], &[])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let info = v["claim_info"].to_string();
    assert!(info.contains(&theirs.display().to_string()), "{info}");
    assert!(!info.contains(&ours.display().to_string()), "{info}");
    // The finding alone of the other user's file: info.
    std::fs::remove_file(&ours).unwrap();
    let o = pinrun_in(&s.dir, &["--check", "--json", "--cpus", "0"], &[])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "claim-record-unusable")
        .cloned()
        .unwrap_or_default();
    assert_eq!(f["severity"], "info", "{v}");
}
