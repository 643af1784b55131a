//! Issue 17: the per-IRQ files (`/proc/irq/N` affinities, debugfs'
//! `managed` flag, the `/sys/kernel/irq/N` details) and the checked CPUs'
//! governors and idle states are read on several threads when there are
//! many (`system::parallel::map`). The threads must
//! change nothing: on every fixture dump and on the synthetic machines of
//! `irq_sysfs` (both IRQ sources, a cut `per_cpu_count`), the state read,
//! the plan or refusal and the findings (as JSON) are the same with one
//! thread, with 3 (uneven chunks) and with more threads than IRQs.
//! `Root::with_threads` forces the count, so even a dump with a few
//! IRQs goes through the threaded path.

use crate::common;
use crate::irq_sysfs;

use clap::Parser;
use pinrun::app::scope::{for_request, read_extras_for};
use pinrun::cli::Cli;
use pinrun::system::{Root, SystemState};
use pinrun::{check, plan, report};
use std::path::{Path, PathBuf};

const REQUESTS: [&str; 5] = [
    "--check",
    "--check --cpus 0",
    "--check --cpus 1",
    "--dry-run --cores 1",
    "--dry-run --node 0 --cores 1 --fifo 10 --membind",
];

/// Everything `main` computes from one read of `dump` for each of
/// [`REQUESTS`], plus a full read (what `--show` reads, every IRQ
/// detailed), as text, read on `threads` threads.
/// [`everything_from`] the dump's directory on `threads` threads; for a
/// machine dump (never written by a test) made once per test process:
/// `threads_change_nothing_on_fixtures` and `read_once`'s two fixture
/// tests compare their reads with the same directory reads (on 1 and 3
/// threads), which each of them made again. A tree a test writes (its
/// path may come again) is read each time.
pub fn everything(dump: &Path, threads: usize) -> String {
    static READ: common::OncePer<(PathBuf, usize), String> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let read = || everything_from(&Root::new(dump).with_threads(threads), dump);
    if !dump.starts_with(common::fixtures()) {
        return read();
    }
    common::once_per(&READ, (dump.to_path_buf(), threads), read)
}

/// [`everything`], read through `root` (a root at `dump`).
pub fn everything_from(root: &Root, dump: &Path) -> String {
    let root = root.clone();
    let mut out = String::new();
    let mut full = SystemState::read(&root);
    let (possible, online) = (full.possible.clone(), full.online.clone());
    full.irqs.read_details(&root, &possible, &online, None);
    out.push_str(&format!("{:?}\n", full.irqs));
    for args in REQUESTS {
        let mut argv = vec!["pinrun".to_string(), "--sysroot".into()];
        argv.push(dump.display().to_string());
        argv.extend(args.split_whitespace().map(String::from));
        let Ok(req) = Cli::try_parse_from(&argv)
            .map_err(|e| e.to_string())
            .and_then(|c| c.into_request().map_err(|e| e.message))
        else {
            out.push_str("unparsed\n");
            continue;
        };
        let mut sys = SystemState::read_scoped(&root, &for_request(&req));
        match plan::plan(&sys, &req) {
            Err(e) => out.push_str(&format!("{args}: refused {} {}\n", e.code, e.message)),
            Ok(p) => {
                let checked = check::checked_cpus(&sys, &p);
                read_extras_for(&mut sys, &root, &req, &checked, None);
                let findings = check::check(&sys, &req, &p);
                let governors: Vec<_> = sys.cpus.values().map(|c| (c.id, &c.governor)).collect();
                out.push_str(&format!(
                    "{args}: {:?}\n{:?}\n{:?}\n{governors:?}\n{}\n",
                    p,
                    sys.irqs,
                    sys.idle_states,
                    report::findings_json(&findings)
                ));
            }
        }
    }
    out
}

fn assert_same_on_any_thread_count(dump: &Path) {
    let one = everything(dump, 1);
    for threads in [3, 1000] {
        let many = everything(dump, threads);
        assert!(
            one == many,
            "{}: {threads} threads read differently from one",
            dump.display()
        );
    }
}

/// Runs `same` on every fixture dump with a CPU directory (at least 8 of
/// them with IRQs).
pub fn on_every_fixture(same: impl Fn(&Path)) {
    let dumps: Vec<PathBuf> = common::all_machines()
        .iter()
        .map(|m| common::machine(m))
        .filter(|p| p.join("sys/devices/system/cpu").is_dir())
        .collect();
    let with_irqs = dumps
        .iter()
        .filter(|p| p.join("proc/interrupts").is_file())
        .count();
    assert!(with_irqs >= 8, "only {with_irqs} dumps with IRQs");
    for d in &dumps {
        same(d);
    }
}

/// Runs `same` on the synthetic machines of `irq_sysfs` (both IRQ
/// sources, a cut `per_cpu_count`), each with IRQs on the checked CPUs:
/// the comparison is not of two empty lists.
pub fn on_sysfs_irq_machines(same: impl Fn(&Path)) {
    for (sysfs, interrupts, cut) in irq_sysfs::WAYS {
        let m = irq_sysfs::machine(sysfs, interrupts, cut);
        same(m.path());
        let text = everything(m.path(), 3);
        assert!(text.contains("irq-on-cpu"), "{text}");
    }
}

#[test]
fn threads_change_nothing_on_fixtures() {
    on_every_fixture(assert_same_on_any_thread_count);
}

#[test]
fn threads_change_nothing_on_sysfs_irqs() {
    on_sysfs_irq_machines(assert_same_on_any_thread_count);
}

/// A 40-CPU machine whose CPUs have governors and idle states of every
/// kind the readers tell apart: governors `performance`/`powersave`/none
/// (no `cpufreq`), CPU 37 offline (its governor is not read), idle states
/// enabled, disabled (`disable` 1) and without a `disable` file, with
/// their kernel names and exit latencies (`cpuidle.rst`'s sysfs layout).
fn machine_with_idle_states() -> tempfile::TempDir {
    let dir = common::tempdir();
    let cpu = dir.path().join("sys/devices/system/cpu");
    let write = |rel: &str, text: &str| {
        let p = cpu.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("online", "0-36,38-39\n");
    write("possible", "0-39\n");
    for c in 0..40u32 {
        write(
            &format!("cpu{c}/online"),
            if c == 37 { "0\n" } else { "1\n" },
        );
        match c % 3 {
            0 => write(&format!("cpu{c}/cpufreq/scaling_governor"), "performance\n"),
            1 => write(&format!("cpu{c}/cpufreq/scaling_governor"), "powersave\n"),
            _ => {}
        }
        let states = [("POLL", 0), ("C1", 2), ("C6", 133 + c)];
        for (k, (name, latency)) in states.iter().enumerate().take(1 + c as usize % 3) {
            let s = format!("cpu{c}/cpuidle/state{k}");
            write(&format!("{s}/name"), &format!("{name}\n"));
            write(&format!("{s}/latency"), &format!("{latency}\n"));
            if k != 1 {
                write(
                    &format!("{s}/disable"),
                    if c % 4 == 0 { "1\n" } else { "0\n" },
                );
            }
        }
    }
    dir
}

/// The checked CPUs' governors and idle states read on several threads
/// (blocks of one CPU each, interleaved) are those read on one, and they
/// are the files' values: no fixture dump has `cpuidle` or `cpufreq`.
#[test]
fn threads_change_nothing_on_idle_states_and_governors() {
    let m = machine_with_idle_states();
    assert_same_on_any_thread_count(m.path());
    let root = Root::new(m.path());
    let all: pinrun::cpuset::CpuSet = (0..40).collect();
    let read = |threads| {
        let root = root.clone().with_threads(threads);
        let mut sys = SystemState::read(&root);
        sys.read_extras(&root, &all, true, None);
        sys
    };
    let (one, many) = (read(1), read(3));
    assert_eq!(one.idle_states, many.idle_states);
    let names = |sys: &SystemState, c: u32| -> Vec<(String, u64)> {
        sys.idle_states[&c]
            .iter()
            .map(|s| (s.name.clone(), s.latency_us))
            .collect()
    };
    for sys in [&one, &many] {
        let governor = |c: u32| sys.cpus[&c].governor.clone();
        assert_eq!(governor(3).as_deref(), Some("performance"));
        assert_eq!(governor(4).as_deref(), Some("powersave"));
        assert_eq!(governor(5), None);
        // Offline: not read (`performance` is in its file).
        assert_eq!(governor(37), None);
        // CPU 4: POLL and C1 disabled by `disable` 1 (C1 has no such file).
        assert_eq!(names(sys, 4), [("C1".to_string(), 2)]);
        assert_eq!(
            names(sys, 5),
            [("POLL".into(), 0), ("C1".into(), 2), ("C6".into(), 138)]
        );
        assert_eq!(names(sys, 6), [("POLL".to_string(), 0)]);
        assert_eq!(names(sys, 9), [("POLL".into(), 0)]);
        assert_eq!(names(sys, 10), [("POLL".into(), 0), ("C1".into(), 2)]);
    }
}

/// Two files over budget read by different threads: CPU 30's idle state
/// `name` (read after its governor and the state's `disable`) and CPU 31's
/// governor (its item's first read, so usually met first in time). The
/// read error names the one a read on one thread meets first, CPU 30's,
/// on any thread count and whichever thread got there first (each read
/// repeated: the threads race).
#[test]
fn over_budget_files_are_named_in_item_order_on_any_thread() {
    let m = machine_with_idle_states();
    let cpu = m.path().join("sys/devices/system/cpu");
    for rel in [
        "cpu30/cpuidle/state0/name",
        "cpu31/cpufreq/scaling_governor",
    ] {
        std::fs::File::create(cpu.join(rel))
            .unwrap()
            .set_len(pinrun::system::root::MAX_FILE + 1)
            .unwrap();
    }
    let all: pinrun::cpuset::CpuSet = (0..40).collect();
    for threads in [1, 2, 3, 40] {
        for _ in 0..10 {
            let root = Root::new(m.path()).with_threads(threads);
            // Not `SystemState::read`: its details (`--show`'s) read
            // every governor already, in CPU order.
            let scope = pinrun::system::scope::Scope {
                details: false,
                ..pinrun::system::scope::Scope::full()
            };
            let mut sys = SystemState::read_scoped(&root, &scope);
            sys.read_extras(&root, &all, true, None);
            let error = sys.read_error.map(|e| e.message);
            let error = error.expect("a read error");
            assert!(
                error.contains("/cpu30/cpuidle/state0/name:"),
                "{threads} threads: {error}"
            );
        }
    }
}
