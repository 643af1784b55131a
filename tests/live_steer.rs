//! `--steer-irqs` on this machine (issue 21), as root only: each test
//! snapshots every `/proc/irq/N/smp_affinity_list` and
//! `/proc/irq/default_smp_affinity` first, and its guard restores and
//! verifies them when it ends, also when it fails. The tests run one at a
//! time (they share the host's IRQs).
//!
//! A test binary of its own: the other live tests, which compare IRQ
//! findings between a dry run and a launch, never run meanwhile.

mod common;
use common::{is_root, pinrun, skip};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

static STEERING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every IRQ's `smp_affinity_list` and the default mask.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IrqState {
    irqs: BTreeMap<u32, String>,
    default: String,
}

fn read_state() -> IrqState {
    let mut irqs = BTreeMap::new();
    for e in std::fs::read_dir("/proc/irq").unwrap().flatten() {
        if let Some(n) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok())
            && let Ok(t) = std::fs::read_to_string(e.path().join("smp_affinity_list"))
        {
            irqs.insert(n, t.trim().to_string());
        }
    }
    let default = std::fs::read_to_string("/proc/irq/default_smp_affinity")
        .unwrap()
        .trim()
        .to_string();
    IrqState { irqs, default }
}

/// `/proc/irq/N/effective_affinity_list`: the CPU(s) IRQ `n` fires on.
fn effective(n: u32) -> String {
    std::fs::read_to_string(format!("/proc/irq/{n}/effective_affinity_list"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Holds the lock and the snapshot; restores on drop.
struct Snapshot {
    saved: IrqState,
    /// Every IRQ's effective affinity at the snapshot: restorable only
    /// for an IRQ that fires (x86 moves it at its next interrupt), so
    /// compared by [`Snapshot::effective_differences`] for the IRQs a
    /// test makes fire.
    saved_effective: BTreeMap<u32, String>,
    _lock: std::sync::MutexGuard<'static, ()>,
}

impl Snapshot {
    fn take() -> Snapshot {
        let lock = STEERING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let saved = read_state();
        let saved_effective = saved.irqs.keys().map(|n| (*n, effective(*n))).collect();
        Snapshot {
            saved,
            saved_effective,
            _lock: lock,
        }
    }

    /// Writes back whatever differs from the snapshot.
    fn restore(&self) {
        let now = read_state();
        for (n, l) in &self.saved.irqs {
            if now.irqs.get(n) != Some(l) {
                let _ = std::fs::write(format!("/proc/irq/{n}/smp_affinity_list"), l);
            }
        }
        if now.default != self.saved.default {
            let _ = std::fs::write("/proc/irq/default_smp_affinity", &self.saved.default);
        }
    }

    /// Waits up to 10 s for the host to equal the snapshot (the helper
    /// undoes right after the command ends); the differences if not.
    fn wait_equal(&self) -> Vec<String> {
        let start = Instant::now();
        loop {
            let d = self.differences();
            if d.is_empty() || start.elapsed() > Duration::from_secs(10) {
                return d;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The IRQs of `irqs` whose effective affinity is not the snapshot's.
    fn effective_differences(&self, irqs: &[u32]) -> Vec<String> {
        irqs.iter()
            .filter(|n| effective(**n) != self.saved_effective[n])
            .map(|n| {
                format!(
                    "IRQ {n} ({}) fires on {} (was {})",
                    irq_name(*n),
                    effective(*n),
                    self.saved_effective[n]
                )
            })
            .collect()
    }

    fn differences(&self) -> Vec<String> {
        let now = read_state();
        let mut d: Vec<String> = self
            .saved
            .irqs
            .iter()
            .filter(|(n, l)| now.irqs.get(n).is_some_and(|c| c != *l))
            .map(|(n, l)| format!("IRQ {n}: {} (was {l})", now.irqs[n]))
            .collect();
        if now.default != self.saved.default {
            d.push(format!(
                "default {} (was {})",
                now.default, self.saved.default
            ));
        }
        d
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.restore();
        let d = self.differences();
        assert!(
            d.is_empty() || std::thread::panicking(),
            "the host's IRQs were not restored: {d:?}"
        );
    }
}

/// Root and two online CPUs, or why not.
fn usable() -> bool {
    if !is_root() {
        skip("IRQ steering needs root");
        return false;
    }
    // README: a root run that must not write this machine's /proc/irq
    // (each test snapshots and restores it) sets PINRUN_NO_IRQ_WRITES=1.
    if std::env::var_os("PINRUN_NO_IRQ_WRITES").is_some_and(|v| v == "1") {
        skip("PINRUN_NO_IRQ_WRITES=1: no writes to /proc/irq");
        return false;
    }
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus = pinrun::cpuset::CpuSet::parse_sysfs_list(&online, None).unwrap();
    if !cpus.contains(0) || !cpus.contains(1) {
        skip("needs CPUs 0 and 1 online");
        return false;
    }
    if std::process::Command::new("pgrep")
        .arg("-x")
        .arg("irqbalance")
        .status()
        .is_ok_and(|s| s.success())
    {
        skip("irqbalance runs: --steer-irqs refuses");
        return false;
    }
    true
}

fn journals(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with("steer.") && n.ends_with(".journal"))
        .collect()
}

/// The IRQ device name (`/sys/kernel/irq/N/actions`).
fn irq_name(n: u32) -> String {
    std::fs::read_to_string(format!("/sys/kernel/irq/{n}/actions"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Steering off CPU 1, quietly, in the state directory given next.
const STEER_CPU_1: [&str; 6] = [
    "--exclusive",
    "--steer-irqs",
    "--cpus",
    "1",
    "-q",
    "--state-dir",
];

/// Run as the command: prints `N LIST` for every IRQ, then the default.
const PRINT_IRQS: &str = "for d in /proc/irq/[0-9]*; do echo \"${d#/proc/irq/} $(cat $d/smp_affinity_list)\"; done; echo \"default $(cat /proc/irq/default_smp_affinity)\"";

#[test]
fn movable_irqs_leave_cpu_1_for_the_command_and_return() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let out = pinrun()
        .args(["--exclusive", "--steer-irqs", "--cpus", "1", "--state-dir"])
        .arg(state.path())
        .args(["--", "sh", "-c", PRINT_IRQS])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let during: BTreeMap<String, String> = stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let mut moved = 0;
    for (n, before) in &snap.saved.irqs {
        let before_set = pinrun::cpuset::CpuSet::parse_sysfs_list(before, None).unwrap();
        if !before_set.contains(1) {
            continue;
        }
        let now = &during[&n.to_string()];
        let kept = stderr.contains(&format!("IRQ {n} ({}) not moved", irq_name(*n)))
            || stderr.contains(&format!("IRQ {n} ({}) stays", irq_name(*n)));
        if kept {
            // Kernel-managed: reported, and its affinity untouched.
            assert_eq!(now, before, "IRQ {n} was reported kept: {stderr}");
        } else {
            let set = pinrun::cpuset::CpuSet::parse_sysfs_list(now, None).unwrap();
            assert!(
                !set.contains(1),
                "IRQ {n} still on CPU 1 while the command ran: {now}"
            );
            moved += 1;
        }
    }
    assert!(moved > 0, "no IRQ was moved: {stderr}");
    // The network IRQs (virtio_net's input.N/output.N queues) moved.
    for n in snap.saved.irqs.keys() {
        let name = irq_name(*n);
        if name.contains("-input.") || name.contains("-output.") {
            assert_eq!(during[&n.to_string()], "0", "{name}: {stderr}");
        }
    }
    // default_smp_affinity lost CPU 1 (mask bit 1).
    let d = u64::from_str_radix(during["default"].replace(',', "").trim(), 16).unwrap();
    assert_eq!(d & 2, 0, "default {} {stderr}", during["default"]);
    // Returned after: the helper undid it, the journal is gone.
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
    let start = Instant::now();
    while !journals(state.path()).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(journals(state.path()), Vec::<String>::new());
}

/// Sends a UDP datagram to the default gateway every 5 ms until `stop`:
/// each makes the NIC's tx queue interrupt (virtio_net's `output.N`).
fn traffic(stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> std::thread::JoinHandle<()> {
    let gw = std::fs::read_to_string("/proc/net/route")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 2 && f[1] == "00000000")
                .then(|| u32::from_str_radix(f[2], 16).ok())
                .flatten()
        })
        .map(|g| std::net::Ipv4Addr::from(g.swap_bytes()));
    std::thread::spawn(move || {
        let (Some(gw), Ok(s)) = (gw, std::net::UdpSocket::bind("0.0.0.0:0")) else {
            return;
        };
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = s.send_to(b"pinrun", (gw, 9));
            std::thread::sleep(Duration::from_millis(5));
        }
    })
}

/// The finding of the new-user trial: after a steered run, the undo
/// restored `smp_affinity_list` but x86 kept the IRQ on the CPU steering
/// had moved it to (`assign_vector_locked()`: the current target is in
/// the new mask). The NIC's tx IRQ, kept firing by traffic, is back on
/// the CPU it fired on before.
#[test]
fn undo_puts_a_firing_irq_back_on_the_cpu_it_fired_on() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    // virtio_net's tx queues that may fire on CPU 0 or 1 and fire on one.
    let tx: Vec<u32> = snap
        .saved
        .irqs
        .iter()
        .filter(|(n, l)| {
            irq_name(**n).contains("-output.")
                && *l == "0-1"
                && ["0", "1"].contains(&snap.saved_effective[n].as_str())
        })
        .map(|(n, _)| *n)
        .collect();
    let Some(&irq) = tx.first() else {
        skip("no virtio_net tx IRQ at 0-1 firing on CPU 0 or 1");
        return;
    };
    let was = snap.saved_effective[&irq].clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sender = traffic(stop.clone());
    let state = tempfile::tempdir().unwrap();
    // Claim the CPU it fires on: steering moves it to the other one.
    let out = pinrun()
        .args(["--exclusive", "--steer-irqs", "--cpus", &was, "--state-dir"])
        .arg(state.path())
        .args(["--", "sh", "-c"])
        .arg(format!(
            "sleep 0.5; cat /proc/irq/{irq}/effective_affinity_list"
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let during = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_ne!(
        during, was,
        "IRQ {irq} did not move off CPU {was}: {stderr}"
    );
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
    let start = Instant::now();
    while !journals(state.path()).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    sender.join().unwrap();
    assert_eq!(
        snap.effective_differences(&[irq]),
        Vec::<String>::new(),
        "{stderr}"
    );
}

/// The helper of the command `cmd` (a `pinrun-helper` holding a pidfd
/// of it: `Pid:` in its fdinfo).
fn helper_of(cmd: u32) -> Option<u32> {
    helpers_of(cmd).first().copied()
}

/// Every `pinrun-helper` holding a pidfd of the command `cmd`.
fn helpers_of(cmd: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map_or(true, |c| c.trim() != "pinrun-helper")
        {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
            continue;
        };
        if fds.flatten().any(|f| {
            std::fs::read_to_string(f.path())
                .unwrap_or_default()
                .lines()
                .any(|l| l == format!("Pid:\t{cmd}"))
        }) {
            found.push(pid);
        }
    }
    found
}

/// Starts `pinrun` steering off CPU 1 around `sleep 30` with the state
/// directory `state`; returns once the journal and the helper exist and
/// the IRQs differ from `snap`: (the command, its PID, the helper's PID).
fn steered_sleep(snap: &Snapshot, state: &Path) -> (std::process::Child, u32, u32) {
    steered_sleep_with(snap, state, &[])
}

/// [`steered_sleep`] with `extra` options before `--`.
fn steered_sleep_with(
    snap: &Snapshot,
    state: &Path,
    extra: &[&str],
) -> (std::process::Child, u32, u32) {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinrun"))
        .env("PINRUN_CONFIG", "")
        .args(STEER_CPU_1)
        .arg(state)
        .args(extra)
        .args(["--", "sleep", "30"])
        .spawn()
        .unwrap();
    let cmd = child.id();
    let start = Instant::now();
    let helper = loop {
        if !journals(state).is_empty()
            && let Some(h) = helper_of(cmd)
        {
            break h;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no journal or helper"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Steered while the command runs.
    std::thread::sleep(Duration::from_millis(200));
    assert!(!snap.differences().is_empty(), "nothing was steered");
    (child, cmd, helper)
}

/// The helper killed (SIGKILL), then the command: the IRQs stay steered
/// and the journal stays until `pinrun --reclaim`, which restores them,
/// removes the journal and the launch's claim record, and says both.
#[test]
fn sigkill_of_the_helper_then_reclaim_restores() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let (mut child, cmd, helper) = steered_sleep(&snap, state.path());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(helper as i32),
        nix::sys::signal::SIGKILL,
    )
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    std::thread::sleep(Duration::from_millis(200));
    // No helper left to undo: still steered, the journal still there.
    assert!(!snap.differences().is_empty());
    assert_eq!(journals(state.path()).len(), 1);
    let out = pinrun()
        .arg("--reclaim")
        .arg("--state-dir")
        .arg(state.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("restored the IRQ steering of pid {cmd}")),
        "{stderr}"
    );
    assert_eq!(snap.differences(), Vec::<String>::new(), "{stderr}");
    assert_eq!(journals(state.path()), Vec::<String>::new());
    // Issue 33 (break test): the ended launch's claim record went with
    // its steering, under the same lock, and the line says so.
    let left: Vec<String> = std::fs::read_dir(state.path())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    assert_eq!(left, Vec::<String>::new(), "{stderr}");
    assert!(
        stderr.contains(&format!("; removed its claim record {cmd}.")),
        "{stderr}"
    );
}

/// Issue 33 item 4: the helper that undoes the steering was started
/// after the IRQs were written (and after `--probe`): pinrun killed in
/// that window (SIGTERM from systemd, SIGHUP, SIGKILL) left every IRQ
/// moved until `--reclaim`. It is armed before the journal is written
/// now: pinrun dying at every step of the launch (the crash hook of a
/// test build: journal synced, first IRQ written, default mask written,
/// every write done, every policy applied before exec) is undone by the
/// helper alone, every IRQ and the default mask as before and no journal
/// left, and `--reclaim` then finds nothing.
#[test]
fn death_at_every_step_is_undone_by_the_helper() {
    if !usable() {
        return;
    }
    if !cfg!(debug_assertions) {
        skip("the crash hook exists in debug builds only");
        return;
    }
    use std::os::unix::process::ExitStatusExt;
    let cases = [
        ("journal", "KILL", 9),
        ("irq", "KILL", 9),
        ("default", "KILL", 9),
        ("steered", "KILL", 9),
        ("applied", "KILL", 9),
        ("journal", "TERM", 15),
        ("steered", "TERM", 15),
        ("applied", "TERM", 15),
        ("irq", "HUP", 1),
    ];
    // A SIGHUP the test's caller ignores (nohup, some CI runners) is
    // ignored by pinrun too, which then ends by the hook's SIGKILL.
    let hup_ignored = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        })
        .is_some_and(|m| m & 1 != 0);
    for (step, sig, signo) in cases {
        let signo = if sig == "HUP" && hup_ignored {
            9
        } else {
            signo
        };
        let snap = Snapshot::take();
        let state = tempfile::tempdir().unwrap();
        let out = pinrun()
            .env("PINRUN_TEST_CRASH_AT", step)
            .env("PINRUN_TEST_CRASH_SIGNAL", sig)
            .args(STEER_CPU_1)
            .arg(state.path())
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(signo),
            "{step} {sig}: {:?}",
            out.status
        );
        // No --reclaim: the helper puts everything back by itself.
        let start = Instant::now();
        while !journals(state.path()).is_empty() && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            journals(state.path()),
            Vec::<String>::new(),
            "{step} {sig}: the helper left the journal"
        );
        assert_eq!(
            snap.wait_equal(),
            Vec::<String>::new(),
            "after pinrun's death by SIG{sig} at {step}"
        );
        let out = pinrun()
            .arg("--reclaim")
            .arg("--state-dir")
            .arg(state.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{step} {sig}: {stderr}");
        assert!(
            stderr.starts_with("pinrun: nothing to reclaim in "),
            "{step} {sig}: {stderr}"
        );
        drop(snap);
    }
}

#[test]
fn not_root_is_refused_before_any_change() {
    if !is_root() {
        // Unprivileged: the real refusal.
        let state = tempfile::tempdir().unwrap();
        let before = read_state();
        let out = pinrun()
            .args(["--exclusive", "--steer-irqs", "--cpus", "0", "--state-dir"])
            .arg(state.path())
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("[steer-not-permitted]") || stderr.contains("nothing was changed"),
            "{stderr}"
        );
        assert_eq!(read_state(), before);
        assert_eq!(journals(state.path()), Vec::<String>::new());
        return;
    }
    // As root: drop to nobody with setpriv when it exists.
    if std::process::Command::new("setpriv")
        .arg("--help")
        .output()
        .is_err()
    {
        skip("needs setpriv to drop root");
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        state.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("pinrun");
    let as_nobody = |dry: bool| {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .env("PINRUN_CONFIG", "");
        if dry {
            c.arg("--dry-run");
        }
        c.args(["--exclusive", "--steer-irqs", "--cpus", "1", "--state-dir"])
            .arg(state.path())
            .args(["--", "true"])
            .output()
            .unwrap()
    };
    let out = as_nobody(false);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    // faccessat(2) W_OK, AT_EACCESS on the file (mode 0644, root's,
    // kernel/irq/proc.c) as uid 65534 without capabilities.
    assert!(
        stderr.contains("pinrun: --steer-irqs: /proc/irq/default_smp_affinity is not writable: Permission denied; nothing was changed"),
        "{stderr}"
    );
    // The hint names what the kernel wants: uid 0 or CAP_DAC_OVERRIDE.
    assert!(
        stderr.contains("hint: /proc/irq/*/smp_affinity_list and default_smp_affinity are root's, mode 0644: run as root (or with CAP_DAC_OVERRIDE), or drop --steer-irqs"),
        "{stderr}"
    );
    // The dry run predicts the same refusal.
    let dry = as_nobody(true);
    assert_eq!(dry.status.code(), Some(125));
    assert_eq!(String::from_utf8_lossy(&dry.stderr), stderr);
    // uid 65534 with CAP_DAC_OVERRIDE may open the files for writing
    // (the kernel's open judges the effective capabilities; access(2)
    // would drop them for a non-root real uid): not refused. A dry run
    // only: nothing is ever written as that user here.
    let dry_cap = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=+dac_override",
            "--ambient-caps=+dac_override",
        ])
        .arg(&bin)
        .env("PINRUN_CONFIG", "")
        .args([
            "--dry-run",
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            "1",
            "--state-dir",
        ])
        .arg(state.path())
        .args(["--", "true"])
        .output()
        .unwrap();
    let cap_err = String::from_utf8_lossy(&dry_cap.stderr).to_string();
    assert!(
        !cap_err.contains("steer-not-permitted") && !cap_err.contains("not writable"),
        "{cap_err}"
    );
    assert_eq!(dry_cap.status.code(), Some(0), "{cap_err}");
    assert_eq!(snap.differences(), Vec::<String>::new());
    assert_eq!(journals(state.path()), Vec::<String>::new());
}

/// The IRQs `--dry-run --json` would move off CPU 1 (the live plan).
fn planned_moves() -> Vec<u32> {
    let out = pinrun()
        .args([
            "--dry-run",
            "--json",
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            "1",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["steer_irqs"]["move"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["irq"].as_u64().unwrap() as u32)
        .collect()
}

/// A write errno steering does not understand (EBUSY, injected on the
/// last IRQ in a test build) puts back every IRQ already written
/// before pinrun exits 125, removes the journal and never runs the
/// command; EIO on one IRQ skips it (reported, left as it was) and
/// steers the rest.
#[test]
fn unknown_write_errno_undoes_everything_and_eio_skips() {
    if !usable() {
        return;
    }
    if !cfg!(debug_assertions) {
        skip("the errno hook exists in debug builds only");
        return;
    }
    // The lock first: another steering test's IRQs are not the plan.
    let snap = Snapshot::take();
    let moves = planned_moves();
    assert!(moves.len() >= 2, "{moves:?}");
    let last = *moves.last().unwrap();
    let state = tempfile::tempdir().unwrap();
    let marker = state.path().join("ran");
    let out = pinrun()
        .env("PINRUN_TEST_IRQ_ERRNO", format!("{last}:16:all"))
        .args(STEER_CPU_1)
        .arg(state.path())
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains(&format!("writing /proc/irq/{last}/smp_affinity_list")),
        "{stderr}"
    );
    assert!(
        stderr.contains("Device or resource busy; every IRQ written was put back"),
        "{stderr}"
    );
    // Put back by pinrun itself, before it exited.
    assert_eq!(snap.differences(), Vec::<String>::new(), "{stderr}");
    assert_eq!(journals(state.path()), Vec::<String>::new());
    assert!(!marker.exists(), "the command ran");

    let first = moves[0];
    let out = pinrun()
        .env("PINRUN_TEST_IRQ_ERRNO", format!("{first}:5:all"))
        .args(["--exclusive", "--steer-irqs", "--cpus", "1", "--state-dir"])
        .arg(state.path())
        .args(["--", "sh", "-c", PRINT_IRQS])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "IRQ {first} ({}) not moved: the kernel keeps it (I/O error",
            irq_name(first)
        )),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let line = |n: u32| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{n} ")).map(str::to_string))
            .unwrap()
    };
    assert_eq!(line(first), snap.saved.irqs[&first]);
    assert_eq!(line(moves[1]), "0", "{stderr}");
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
}

/// Issue 32: a launch is one transaction. A failure after the IRQs are
/// steered (`--probe-max 1ns`: a gate no CPU meets, checked once the
/// probe ran on the steered CPU) puts them back before pinrun exits 125,
/// and says so after the gate's error; the journal and the claim record
/// are gone and the command never ran.
/// `pinrun --exclusive --steer-irqs --cpus 1 -q --state-dir STATE REST`:
/// its exit status, its stderr, and the line of it that starts with
/// `error` (empty when none does).
fn steer_cpu_1_failing(
    state: &Path,
    rest: &[&std::ffi::OsStr],
    error: &str,
) -> (Option<i32>, String, String) {
    let out = pinrun()
        .args(STEER_CPU_1)
        .arg(state)
        .args(rest)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let line = stderr
        .lines()
        .find(|l| l.starts_with(error))
        .unwrap_or_default()
        .to_string();
    (out.status.code(), stderr, line)
}

/// The start of `--probe-max 1ns`'s refusal of CPU 1.
const PROBE_MAX_ERROR: &str = "pinrun: --probe-max 1ns: CPU 1: worst gap ";

#[test]
fn a_failure_after_steering_is_rolled_back_and_said() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let marker = state.path().join("ran");
    let args = ["--probe=50ms", "--probe-max", "1ns", "--", "touch"];
    let mut rest: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    rest.push(marker.as_os_str());
    let (code, stderr, error) = steer_cpu_1_failing(state.path(), &rest, PROBE_MAX_ERROR);
    assert_eq!(code, Some(125), "{stderr}");
    // The line may go on with what the kernel had not yet done: "(IRQ 42
    // (virtio3-tx) now fires on CPU 0 (was CPU 1 before steering): its
    // next interrupt did not come within 2000 ms)" (x86 moves an IRQ's
    // effective affinity at its next interrupt).
    let put_back = "; the IRQ steering off CPU 1 was put back";
    assert!(
        error.ends_with(put_back) || error.contains(&format!("{put_back} (IRQ ")),
        "{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(state.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    // Put back by pinrun itself, before it exited.
    assert_eq!(snap.differences(), Vec::<String>::new(), "{stderr}");
}

/// Issue 33 (break test): an exec failure after the IRQs were steered
/// (exit 126: the program is open for writing, `execve(2)` ETXTBSY,
/// which the plan cannot foresee) did not say the IRQs were put back.
/// pinrun now undoes its own steering under the lock before it exits
/// and says so at the end of the error line; the host's IRQs and
/// default mask are the snapshot's and no journal is left.
#[test]
fn an_exec_failure_after_steering_puts_the_irqs_back_and_says_so() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let prog = state.path().join("busy");
    std::fs::copy("/bin/true", &prog).unwrap();
    // Open for writing while pinrun runs: execve(2) answers ETXTBSY.
    let _writer = std::fs::OpenOptions::new().write(true).open(&prog).unwrap();
    let rest = [std::ffi::OsStr::new("--"), prog.as_os_str()];
    let busy = format!("pinrun: {}: execv", prog.display());
    let (code, stderr, error) = steer_cpu_1_failing(state.path(), &rest, &busy);
    assert_eq!(code, Some(126), "{stderr}");
    assert!(error.contains("Text file busy"), "{stderr}");
    assert!(
        error.ends_with("; the IRQ steering off CPU 1 was put back"),
        "{stderr}"
    );
    assert_eq!(journals(state.path()), Vec::<String>::new(), "{stderr}");
    assert_eq!(snap.differences(), Vec::<String>::new(), "{stderr}");
}

/// Issue 33 (break test): a launch whose steering moved nothing said
/// "the IRQ steering ... was put back" when it failed afterwards. Every
/// IRQ the kernel lets the test move is first put on CPU 0 and
/// `default_smp_affinity` set to CPU 0 (the snapshot restores both), so
/// steering off CPU 1 finds nothing to change; `--probe-max 1ns` then
/// refuses the launch (125): its error says nothing was put back, and
/// the host is as the test left it (no IRQ written by pinrun).
#[test]
fn a_failure_after_steering_that_moved_nothing_says_nothing_was_put_back() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    for n in snap.saved.irqs.keys() {
        // A managed IRQ refuses (EIO): it stays, and pinrun cannot move it either.
        let _ = std::fs::write(format!("/proc/irq/{n}/smp_affinity_list"), "0");
    }
    std::fs::write("/proc/irq/default_smp_affinity", "1").unwrap();
    let set = read_state();
    let state = tempfile::tempdir().unwrap();
    let rest = ["--probe=50ms", "--probe-max", "1ns", "--", "true"].map(std::ffi::OsStr::new);
    let (code, stderr, error) = steer_cpu_1_failing(state.path(), &rest, PROBE_MAX_ERROR);
    assert_eq!(code, Some(125), "{stderr}");
    assert!(!error.is_empty(), "{stderr}");
    assert!(!error.contains("put back"), "{stderr}");
    let now = read_state();
    assert_eq!((now.irqs, now.default), (set.irqs, set.default), "{stderr}");
}

/// Issue 33 item 8: the claim follows the launch's process group when
/// pinrun leads it (a command that forks and exits, systemd
/// `Type=forking`), but the steering ended with the PID: under
/// `setsid -w pinrun … -- sh -c 'sleep 3 & exit 0'` the IRQs were back on
/// CPU 1 while CPU 1 was still claimed. One lifetime now: after the shell
/// exits, its `sleep` keeps CPU 1 claimed and the IRQs off it (journal
/// and helper still there); once it ends, everything is restored.
#[test]
fn steering_lives_as_long_as_the_claims_process_group() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let child = std::process::Command::new("setsid")
        .arg("-w")
        .arg(assert_cmd::cargo::cargo_bin("pinrun"))
        .env("PINRUN_CONFIG", "")
        .args(STEER_CPU_1)
        .arg(state.path())
        .args(["--", "sh", "-c", "sleep 60 >/dev/null & echo $!; exit 0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The shell (pinrun's PID) says its sleep's PID and exits at once;
    // setsid -w reaps it. The helper looks at the group every 100 ms.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let sleep: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !snap.differences().is_empty(),
        "the IRQs are back while the group still claims CPU 1"
    );
    assert_eq!(journals(state.path()).len(), 1);
    let show = pinrun()
        .args(["--show", "--json", "--state-dir"])
        .arg(state.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(v["claimed_cpus"], serde_json::json!([1]), "{v}");
    // Once the sleep ends, the helper restores.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(sleep), nix::sys::signal::SIGTERM).unwrap();
    let start = Instant::now();
    while !journals(state.path()).is_empty() && start.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(journals(state.path()), Vec::<String>::new());
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
}

/// systemd stopping the unit: SIGTERM to every process of the cgroup,
/// the helper included. The helper keeps SIGTERM blocked, sees the
/// command end and restores; no --reclaim needed.
#[test]
fn sigterm_to_the_command_and_helper_still_restores() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let (mut child, cmd, helper) = steered_sleep(&snap, state.path());
    for pid in [helper, cmd] {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::SIGTERM,
        )
        .unwrap();
    }
    let _ = child.wait();
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
    let start = Instant::now();
    while !journals(state.path()).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(journals(state.path()), Vec::<String>::new());
}

/// Issues 21 and 22 share one helper process: a launch with both
/// `--thread-map` and `--steer-irqs` has exactly one `pinrun-helper`
/// holding a pidfd of the command, which pins the main thread as the map
/// says and, once the command ends, puts every IRQ back.
#[test]
fn one_helper_watches_threads_and_undoes_the_steering() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let (mut child, cmd, _) = steered_sleep_with(&snap, state.path(), &["--thread-map", "main=@0"]);
    assert_eq!(helpers_of(cmd).len(), 1, "helpers of {cmd}");
    let status = std::fs::read_to_string(format!("/proc/{cmd}/status")).unwrap();
    assert!(
        status.lines().any(|l| l == "Cpus_allowed_list:\t1"),
        "{status}"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(cmd as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    child.wait().unwrap();
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
}

/// The helper's report after a normal end (issue 21, item 6): an IRQ
/// someone else changed while the command ran (here: the command itself,
/// as root) is left as that edit put it, and the helper says so on the
/// stderr it inherited from the command, in the house format; every other
/// IRQ is restored. A run where nothing was changed says nothing after
/// the command.
#[test]
fn helper_reports_an_irq_changed_during_the_command_and_leaves_it() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let moves = planned_moves();
    let n = *moves.first().expect("an IRQ to move off CPU 1");
    let original = snap.saved.irqs[&n].clone();
    // Neither the original nor what steering writes (CPU 0).
    let foreign = if original == "1" { "0-1" } else { "1" };
    let state = tempfile::tempdir().unwrap();
    let out = pinrun()
        .args(["--exclusive", "--steer-irqs", "--cpus", "1", "--state-dir"])
        .arg(state.path())
        .args([
            "--",
            "sh",
            "-c",
            &format!("echo {foreign} > /proc/irq/{n}/smp_affinity_list && echo command-ended >&2"),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    // Read by .output() to EOF: the helper held the pipe until it ended.
    let after = stderr
        .split_once("command-ended\n")
        .map(|(_, a)| a.to_string())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(
        after,
        format!(
            "pinrun: IRQ {n} ({}) left alone: changed since (now {foreign}, steering wrote 0)\n",
            irq_name(n)
        ),
        "{stderr}"
    );
    let now = read_state();
    assert_eq!(now.irqs[&n], foreign);
    let others: Vec<String> = snap
        .differences()
        .into_iter()
        .filter(|d| !d.starts_with(&format!("IRQ {n}:")))
        .collect();
    assert_eq!(others, Vec::<String>::new(), "{stderr}");
    assert_eq!(journals(state.path()), Vec::<String>::new());
    // Nothing changed during the command: nothing said after it.
    snap.restore();
    assert_eq!(snap.differences(), Vec::<String>::new());
    let out = pinrun()
        .args([
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            "1",
            "-q",
            "--state-dir",
        ])
        .arg(state.path())
        .args(["--", "sh", "-c", "echo command-ended >&2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr, "command-ended\n");
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
}

/// A stand-in for a socketless irqbalance run by systemd, in `d`: a copy
/// of sleep(1) named irqbalance started with `d/etc/irqbalance` (Debian
/// 13's shipped /etc/default/irqbalance) as its environment, as systemd's
/// EnvironmentFile= does, and a stub `systemctl` in `d/bin` that records
/// its arguments in `d/log`, answers `show` for it and, on `try-restart`,
/// starts a new one with the file's environment. Returns the shell line
/// that starts the daemon and waits until it has exec'ed (its comm is
/// irqbalance).
fn irqbalance_stand_in(d: &Path) -> String {
    for sub in ["bin", "etc", "state"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    std::fs::write(d.join("etc/irqbalance"), SHIPPED_DEFAULT).unwrap();
    std::fs::copy("/bin/sleep", d.join("bin/irqbalance")).unwrap();
    let dd = d.display();
    let start_daemon = format!(
        "(set -a; . {dd}/etc/irqbalance; exec {dd}/bin/irqbalance 1000) </dev/null >/dev/null 2>&1 & echo $! > {dd}/pid; until [ \"$(cat /proc/$(cat {dd}/pid)/comm)\" = irqbalance ]; do sleep 0.01; done"
    );
    let stub = format!(
        "#!/bin/sh\necho \"$*\" >> {dd}/log\ncase \"$1\" in\nshow) echo \"MainPID=$(cat {dd}/pid)\"; echo ActiveState=active; echo \"EnvironmentFiles=/nonexistent/defaults.env (ignore_errors=yes)\"; echo \"EnvironmentFiles={dd}/etc/irqbalance (ignore_errors=yes)\";;\ntry-restart) kill $(cat {dd}/pid); {start_daemon};;\nesac\n"
    );
    std::fs::write(d.join("bin/systemctl"), stub).unwrap();
    std::fs::set_permissions(
        d.join("bin/systemctl"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    start_daemon
}

/// Debian 13's shipped /etc/default/irqbalance (tests/data/irqbalance).
const SHIPPED_DEFAULT: &str = include_str!("data/irqbalance/debian-trixie-1.9.4.default");

/// Runs `body` (shell) in a private mount and PID namespace with a tmpfs
/// over /run (no /run/irqbalance: the daemon has no control socket; with
/// `systemd`, /run/systemd/system so systemd "runs"), `d/bin` first on
/// PATH and the stand-in daemon of [`irqbalance_stand_in`] started (its
/// PID in `d/pid0`); `$P` is pinrun. Returns its stdout and a context for failures (stdout, the
/// stderr, `d/stderr`, the systemctl log).
fn in_irqbalance_namespace(d: &Path, systemd: bool, body: &str) -> (String, String) {
    let start_daemon = irqbalance_stand_in(d);
    let dd = d.display();
    let script = format!(
        "set -e; mount -t tmpfs tmpfs /run; {} export PATH={dd}/bin:$PATH PINRUN_CONFIG= P={}; {start_daemon}; cp {dd}/pid {dd}/pid0; {body}",
        if systemd {
            "mkdir -p /run/systemd/system;"
        } else {
            ""
        },
        assert_cmd::cargo::cargo_bin("pinrun").display()
    );
    let out = std::process::Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "--pid",
            "--fork",
            "--mount-proc",
            "sh",
            "-c",
        ])
        .arg(&script)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let ctx = format!(
        "{}\nstdout:\n{stdout}\nstderr:\n{}{}\nsystemctl log:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(d.join("stderr")).unwrap_or_default(),
        std::fs::read_to_string(d.join("log")).unwrap_or_default()
    );
    assert!(out.status.success(), "{ctx}");
    (stdout, ctx)
}

/// Waits (in the namespace's shell, whose /proc shows its own processes)
/// until the helper has ended (its undo and its report done: the
/// namespace's processes die with its shell), up to 10 s. A short command
/// can end before the helper has named itself pinrun-helper.
fn wait_helper() -> String {
    "i=0; while pgrep -x 'pinrun(-helper)?' >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done"
        .into()
}

/// `--irqbalance-config` end to end without touching this host's /etc or
/// services (see [`in_irqbalance_namespace`]). Proven here: the dry run's
/// line, the file chosen from EnvironmentFiles=, the two lines written,
/// every other byte kept, the restart, the check of the new daemon's
/// environ, and the restore with a second restart once the command ends.
/// Proven by stubs only: systemctl's behaviour (the real daemon's socket
/// path is proven in the VM, scenario steer-irqbalance).
#[test]
fn irqbalance_config_is_edited_restarted_and_put_back() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let dd = d.display();
    let steer =
        format!("--exclusive --steer-irqs --irqbalance-config --cpus 1 --state-dir {dd}/state");
    let (stdout, ctx) = in_irqbalance_namespace(
        d,
        true,
        &format!(
            "$P --dry-run {steer} -- true | grep 'irqbalance (pid'; \
             $P {steer} -- sh -c 'grep ^IRQBALANCE_BANNED {dd}/etc/irqbalance; tr \"\\0\" \"\\n\" < /proc/$(cat {dd}/pid)/environ | grep ^IRQBALANCE_BANNED | sort | sed s/^/daemon:/' 2>{dd}/stderr; \
             {}; echo after: $(tr '\\0' '\\n' < /proc/$(cat {dd}/pid)/environ | grep -c ^IRQBALANCE_BANNED || true)",
            wait_helper()
        ),
    );
    // The dry run: the lines, the file, the restart.
    let pid0 = std::fs::read_to_string(d.join("pid0")).unwrap();
    let pid0 = pid0.trim();
    assert_eq!(
        stdout.lines().next().unwrap_or_default(),
        format!(
            "irqs:    irqbalance (pid {pid0}) has no control socket: ban 1 (now none): set IRQBALANCE_BANNED_CPUS=00000002 and IRQBALANCE_BANNED_CPULIST=1 in {dd}/etc/irqbalance, then systemctl try-restart irqbalance.service; the file back and the same restart when the command ends"
        ),
        "{ctx}"
    );
    // While the command ran: the file and the restarted daemon ban CPU 1;
    // after: a daemon without a ban variable again.
    assert_eq!(
        stdout.lines().skip(1).collect::<Vec<_>>(),
        [
            "IRQBALANCE_BANNED_CPUS=00000002",
            "IRQBALANCE_BANNED_CPULIST=1",
            "daemon:IRQBALANCE_BANNED_CPULIST=1",
            "daemon:IRQBALANCE_BANNED_CPUS=00000002",
            "after: 0"
        ],
        "{ctx}"
    );
    assert!(
        ctx.contains(&format!(
            "pinrun: irqbalance bans CPU 1 (was no CPU) for the command's life: {dd}/etc/irqbalance edited and irqbalance.service restarted"
        )),
        "{ctx}"
    );
    // Two restarts: the edit and the restore; the file byte for byte.
    file_back_after_two_restarts(d, &ctx);
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
}

/// How many `systemctl try-restart irqbalance.service` the stub
/// `systemctl` of test directory `d` recorded (its `log`).
fn restarts(d: &Path) -> usize {
    std::fs::read_to_string(d.join("log"))
        .unwrap()
        .lines()
        .filter(|l| *l == "try-restart irqbalance.service")
        .count()
}

/// After a launch that edited irqbalance's configuration in test
/// directory `d` and put it back: two restarts (the edit and the
/// restore), the shipped file byte for byte, no journal left.
fn file_back_after_two_restarts(d: &Path, ctx: &str) {
    assert_eq!(restarts(d), 2, "{ctx}");
    assert_eq!(
        std::fs::read_to_string(d.join("etc/irqbalance")).unwrap(),
        SHIPPED_DEFAULT
    );
    assert_eq!(journals(&d.join("state")), Vec::<String>::new());
}

/// An administrator edits irqbalance's configuration while the command
/// runs: the helper leaves the file as they left it, restarts nothing,
/// says so on the command's stderr, and restores the IRQs.
#[test]
fn irqbalance_config_edited_meanwhile_is_left_alone_and_reported() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let dd = d.display();
    let (_, ctx) = in_irqbalance_namespace(
        d,
        true,
        &format!(
            "$P --exclusive --steer-irqs --irqbalance-config --cpus 1 -q --state-dir {dd}/state -- sh -c 'echo IRQBALANCE_ARGS=--debug >> {dd}/etc/irqbalance' 2>{dd}/stderr; {}",
            wait_helper()
        ),
    );
    let stderr = std::fs::read_to_string(d.join("stderr")).unwrap();
    assert_eq!(
        stderr,
        format!(
            "pinrun: irqbalance's configuration {dd}/etc/irqbalance left alone: edited since steering wrote it (it still may ban CPUs 1); put it right by hand and systemctl restart irqbalance.service\n"
        ),
        "{ctx}"
    );
    let file = std::fs::read_to_string(d.join("etc/irqbalance")).unwrap();
    // As steering wrote it plus the administrator's line.
    let steered = SHIPPED_DEFAULT
        .replace(
            "#IRQBALANCE_BANNED_CPUS=\n",
            "#IRQBALANCE_BANNED_CPUS=\nIRQBALANCE_BANNED_CPUS=00000002\n",
        )
        .replace(
            "#IRQBALANCE_BANNED_CPULIST=\n",
            "#IRQBALANCE_BANNED_CPULIST=\nIRQBALANCE_BANNED_CPULIST=1\n",
        );
    assert_eq!(file, format!("{steered}IRQBALANCE_ARGS=--debug\n"));
    assert_eq!(restarts(d), 1, "{ctx}");
    assert_eq!(journals(&d.join("state")), Vec::<String>::new());
    assert_eq!(snap.wait_equal(), Vec::<String>::new());
}

/// Refused before any change: a socketless irqbalance without the opt-in
/// (the hint names it), and with it when systemd does not run the
/// machine; neither the file, the daemon nor an IRQ is touched.
#[test]
fn irqbalance_without_socket_is_refused_without_the_opt_in_or_systemd() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let dd = d.display();
    let (stdout, ctx) = in_irqbalance_namespace(
        d,
        false,
        &format!(
            "for o in '' --irqbalance-config; do $P --exclusive --steer-irqs $o --cpus 1 --state-dir {dd}/state -- touch {dd}/ran 2>&1 && exit 9; echo rc=$?; done"
        ),
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let pid0 = std::fs::read_to_string(d.join("pid0")).unwrap();
    let pid0 = pid0.trim();
    assert_eq!(lines.len(), 6, "{ctx}");
    assert!(
        lines[0].starts_with(&format!("pinrun: --steer-irqs: irqbalance runs (pid {pid0}) without its control socket /run/irqbalance/irqbalance{pid0}.sock")),
        "{ctx}"
    );
    assert!(
        lines[1].starts_with(
            "hint: add --irqbalance-config to ban 1 in irqbalance.service's configuration file"
        ),
        "{ctx}"
    );
    assert_eq!(lines[2], "rc=125", "{ctx}");
    assert_eq!(
        lines[3],
        format!(
            "pinrun: --irqbalance-config: irqbalance (pid {pid0}): systemd does not run this machine (no /run/systemd/system): pinrun restarts irqbalance only through systemctl try-restart irqbalance.service; nothing was changed"
        ),
        "{ctx}"
    );
    assert_eq!(lines[5], "rc=125", "{ctx}");
    assert!(!d.join("ran").exists());
    assert!(!d.join("log").exists(), "systemctl ran: {ctx}");
    assert_eq!(
        std::fs::read_to_string(d.join("etc/irqbalance")).unwrap(),
        SHIPPED_DEFAULT
    );
    assert_eq!(snap.differences(), Vec::<String>::new());
}

/// A restart that does not bring up a daemon with the ban (here: a
/// `systemctl try-restart` that does nothing) refuses the launch after
/// 10 s: the file is put back byte for byte, irqbalance restarted again,
/// no IRQ written and the command never run.
#[test]
fn irqbalance_config_restart_without_the_ban_puts_the_file_back() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let dd = d.display();
    let (stdout, ctx) = in_irqbalance_namespace(
        d,
        true,
        &format!(
            "sed -i 's/^try-restart) .*/try-restart) ;;/' {dd}/bin/systemctl; \
             PINRUN_TEST_SHORT_WAITS=1 $P --exclusive --steer-irqs --irqbalance-config --cpus 1 --state-dir {dd}/state -- touch {dd}/ran 2>&1 && exit 9; echo rc=$?"
        ),
    );
    let pid0 = std::fs::read_to_string(d.join("pid0")).unwrap();
    let pid0 = pid0.trim();
    // The refusal, after the launch's own line counting this host's
    // findings (--exclusive is latency-critical: issue 31).
    assert_eq!(
        stdout
            .lines()
            .find(|l| l.starts_with("pinrun: --irqbalance-config:"))
            .unwrap_or_default(),
        format!(
            "pinrun: --irqbalance-config: irqbalance (pid {pid0}), {dd}/etc/irqbalance: after systemctl try-restart, irqbalance.service still has main PID {pid0} (not restarted) after 1 s (wanted the ban 1); the file was put back and irqbalance restarted, no IRQ was written"
        ),
        "{ctx}"
    );
    assert!(stdout.ends_with("rc=125\n"), "{ctx}");
    assert!(!d.join("ran").exists());
    file_back_after_two_restarts(d, &ctx);
    assert_eq!(snap.differences(), Vec::<String>::new());
}

/// Killed right after irqbalance was restarted with the edited file
/// (crash point `config`, test builds): the helper, armed before the
/// journal (issue 33 item 4), puts the file back byte for byte, restarts
/// irqbalance and restores every IRQ; `--reclaim` finds nothing left.
#[test]
fn sigkill_after_the_irqbalance_restart_the_helper_restores_the_file() {
    if !usable() {
        return;
    }
    if !cfg!(debug_assertions) {
        skip("the crash hook exists in debug builds only");
        return;
    }
    let snap = Snapshot::take();
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let dd = d.display();
    let (stdout, ctx) = in_irqbalance_namespace(
        d,
        true,
        &format!(
            "PINRUN_TEST_CRASH_AT=config $P --exclusive --steer-irqs --irqbalance-config --cpus 1 -q --state-dir {dd}/state -- touch {dd}/ran 2>&1 && exit 9; echo rc=$?; \
             i=0; while ls {dd}/state/steer.*.journal >/dev/null 2>&1 && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done; \
             grep -c ^IRQBALANCE_BANNED {dd}/etc/irqbalance || true; $P --reclaim --state-dir {dd}/state 2>&1; echo rc=$?"
        ),
    );
    // (The shell's "Killed" aside.)
    let lines: Vec<&str> = stdout.lines().filter(|l| *l != "Killed").collect();
    // SIGKILL: 128 + 9; the helper, armed before the journal (issue 33
    // item 4), put the file back (no ban line left) and restarted the
    // daemon by itself: --reclaim finds nothing.
    assert_eq!(lines[..2], ["rc=137", "0"], "{ctx}");
    assert!(
        lines[2].starts_with("pinrun: nothing to reclaim in "),
        "{ctx}"
    );
    assert_eq!(lines[3..], ["rc=0"], "{ctx}");
    assert!(!d.join("ran").exists());
    file_back_after_two_restarts(d, &ctx);
    assert_eq!(snap.differences(), Vec::<String>::new());
}

/// The kernel's own answer to a write of "x" (not a cpulist) to IRQ `n`'s
/// smp_affinity_list, as coreutils echo(1) gets it: `Some(true)` when it keeps
/// the IRQ (EIO, EPERM on some kernels: `write_irq_affinity()` checks
/// `irq_can_set_affinity_usr()` before parsing), `Some(false)` when it
/// parsed the text (EINVAL). Nothing is changed either way.
fn shell_says_kept(n: u32) -> Option<bool> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec /bin/echo x > /proc/irq/{n}/smp_affinity_list"
        ))
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Input/output error") || err.contains("Operation not permitted") {
        Some(true)
    } else if err.contains("Invalid argument") {
        Some(false)
    } else {
        None
    }
}

/// Without debugfs (no `IRQD_AFFINITY_MANAGED` to read) the dry run used
/// to plan moving every IRQ on CPU 1, kernel-managed ones included (the
/// launch then got EIO/EPERM and said "not moved": the dry run did not
/// predict the launch; the NVMe guest of vm/scenarios/steer-nvme.sh
/// showed it for its queue IRQs and the timer). Now it lists exactly the
/// IRQs the kernel refuses (the shell's own test write) as unmovable and
/// every other IRQ on CPU 1 as a move known not to be managed, and
/// changes nothing.
#[test]
fn dry_run_lists_exactly_the_irqs_the_kernel_keeps() {
    if !usable() {
        return;
    }
    let snap = Snapshot::take();
    let state = tempfile::tempdir().unwrap();
    let out = pinrun()
        .args([
            "--dry-run",
            "--json",
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            "1",
            "--state-dir",
        ])
        .arg(state.path())
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["steer_irqs"];
    let listed = |key: &str| -> BTreeMap<u32, serde_json::Value> {
        s[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["irq"].as_u64().unwrap() as u32, m.clone()))
            .collect()
    };
    let (moves, unmovable) = (listed("move"), listed("unmovable"));
    let mut kept = 0;
    for (n, l) in &snap.saved.irqs {
        let set = pinrun::cpuset::CpuSet::parse_sysfs_list(l, None).unwrap();
        if !set.contains(1) {
            continue;
        }
        match shell_says_kept(*n) {
            Some(true) => {
                kept += 1;
                assert!(
                    unmovable.contains_key(n),
                    "IRQ {n} ({}) kept by the kernel: {s}",
                    irq_name(*n)
                );
                assert!(!moves.contains_key(n), "IRQ {n}: {s}");
            }
            Some(false) => {
                assert_eq!(moves[n]["managed"], false, "IRQ {n}: {s}");
                assert!(!unmovable.contains_key(n), "IRQ {n}: {s}");
            }
            None => panic!("IRQ {n}: the shell's test write said nothing known"),
        }
    }
    eprintln!("{kept} IRQ(s) on CPU 1 kept by the kernel");
    assert_eq!(snap.differences(), Vec::<String>::new());
}

/// Starts `pinrun --exclusive --steer-irqs --cpus CPU -q --state-dir
/// STATE -- sleep 30` and waits until `journals` journals exist.
fn steer_cpu(cpu: &str, state: &Path, journals_then: usize) -> std::process::Child {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinrun"))
        .env("PINRUN_CONFIG", "")
        .args([
            "--exclusive",
            "--steer-irqs",
            "--cpus",
            cpu,
            "-q",
            "--state-dir",
        ])
        .arg(state)
        .args(["--", "sleep", "30"])
        .spawn()
        .unwrap();
    let start = Instant::now();
    while journals(state).len() < journals_then || helper_of(child.id()).is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no journal or helper for --cpus {cpu}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    child
}

/// Break test: two `--exclusive --steer-irqs` launches, on CPU 0 and on
/// CPU 1 of a host whose other CPUs the first one's steering uses (the
/// second one finds no housekeeping CPU on a 2-CPU host and journals no
/// write). When the first ended first, its undo narrowed every IRQ and
/// the default mask to CPU 0 and nobody owned that write: the host stayed
/// changed after both ended. In both end orders, the host equals its
/// snapshot once both have ended.
#[test]
fn two_claims_ending_in_either_order_restore_the_host() {
    if !usable() {
        return;
    }
    for first_ends_first in [true, false] {
        let snap = Snapshot::take();
        let state = tempfile::tempdir().unwrap();
        let mut a = steer_cpu("0", state.path(), 1);
        let mut b = steer_cpu("1", state.path(), 2);
        let (x, y) = if first_ends_first {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        let _ = x.kill();
        let _ = x.wait();
        let start = Instant::now();
        while journals(state.path()).len() > 1 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            journals(state.path()).len(),
            1,
            "first end: {first_ends_first}"
        );
        let _ = y.kill();
        let _ = y.wait();
        assert_eq!(
            snap.wait_equal(),
            Vec::<String>::new(),
            "first launch ended first: {first_ends_first}"
        );
        let start = Instant::now();
        while !journals(state.path()).is_empty() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(journals(state.path()), Vec::<String>::new());
        drop(snap);
    }
}
