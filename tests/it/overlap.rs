//! Issue 17: the reads of a `--fifo`/`--rr` request that need no plan (the
//! real-time tasks, and the IRQs without their details) run on one helper
//! thread while the caller reads the rest and plans
//! (`SystemState::read_scoped_ahead`, `system::parallel::ahead`). The
//! helper must change nothing: with the overlap forced on and off, on every
//! fixture dump and on the synthetic machines of `irq_sysfs` (both IRQ
//! sources, a cut `per_cpu_count`) given a real-time task, the whole state
//! read, the plan or refusal, the findings and the read error are the same;
//! and when files are over the reading budget, the error names the same
//! file either way (the first one in the order of a read on one thread).

use crate::common;
use crate::irq_sysfs;
use crate::parallel_read::on_every_fixture;

use clap::Parser;
use common::write_file;
use pinrun::app::scope::{for_request, read_extras_for, rt_scan_ahead};
use pinrun::cli::Cli;
use pinrun::request::Request;
use pinrun::system::rt_tasks::RtScan;
use pinrun::system::{Root, SystemState};
use pinrun::{check, plan, report};
use std::path::Path;

/// Requests whose real-time tasks are scanned ahead (a latency-critical
/// launch, dry runs and checks with `--fifo`/`--rr`, `-v`), and two that
/// scan none (`--quiet` launch, no policy): the same path either way.
const REQUESTS: [&str; 8] = [
    "--dry-run --node 0 --cores 1 --fifo 10 --membind",
    "--check --fifo 10",
    "--check --cpus 0 --rr 99",
    "--dry-run --cpus 0 --fifo 1",
    "--dry-run -v --cpus 1 --fifo 50",
    "--cpus 0 --fifo 10 -- true",
    "--quiet --cpus 0 --fifo 10 -- true",
    "--check --cpus 0",
];

/// `args` below `--sysroot dump`, parsed as `main` parses them.
fn request(dump: &Path, args: &str) -> Option<Request> {
    let mut argv = vec!["pinrun".to_string(), "--sysroot".into()];
    argv.push(dump.display().to_string());
    argv.extend(args.split_whitespace().map(String::from));
    Cli::try_parse_from(&argv).ok()?.into_request().ok()
}

/// What `main` computes for `req` on `dump` (read with the helper when
/// `rt_scan_ahead` allows it, plan, the extras, check) with the overlap
/// forced `on` or off: the whole state, the plan or refusal, the findings,
/// the read error. Asserts that the helper ran exactly when `on` and the
/// request scans real-time tasks.
fn outcome(dump: &Path, req: &Request, on: bool) -> String {
    // A root per run, as per process: over-budget records are per root.
    let root = Root::new(dump).overlapping(on);
    let rt = rt_scan_ahead(req);
    let (mut sys, ahead) = SystemState::read_scoped_ahead(&root, &for_request(req), rt);
    match (&rt, &ahead) {
        (None, None) => {}
        (Some(_), Some(RtScan::Ahead(_))) if on => {}
        (Some(_), Some(RtScan::Here(_))) if !on => {}
        _ => panic!("{}: helper with overlap {on}: {ahead:?}", dump.display()),
    }
    if let Some(e) = sys.read_error.take() {
        return format!("read error {} {}\n", e.code, e.message);
    }
    match plan::plan(&sys, req) {
        Err(e) => format!("refused {} {}\n", e.code, e.message),
        Ok(p) => {
            let checked = check::checked_cpus(&sys, &p);
            read_extras_for(&mut sys, &root, req, &checked, ahead);
            if let Some(e) = sys.read_error.take() {
                return format!("read error {} {}\n", e.code, e.message);
            }
            let findings = check::check(&sys, req, &p);
            format!("{sys:?}\n{p:?}\n{}\n", report::findings_json(&findings))
        }
    }
}

/// [`outcome`] of every request of [`REQUESTS`] on `dump`, with the
/// overlap on and off: equal.
fn assert_same_either_way(dump: &Path) -> String {
    let mut all = String::new();
    for args in REQUESTS {
        let Some(req) = request(dump, args) else {
            continue;
        };
        let off = outcome(dump, &req, false);
        let on = outcome(dump, &req, true);
        assert!(
            on == off,
            "{} {args}: the overlap changed the outcome\n--- on\n{on}\n--- off\n{off}",
            dump.display()
        );
        all.push_str(&off);
    }
    all
}

/// The real-time task every synthetic machine gets: `spin`, pid 4242,
/// SCHED_FIFO 50, runnable, confined to CPU 0 (proc(5) `stat` fields 3 to
/// 52: state R, rt_priority 50, policy 1).
fn add_rt_task(root: &Path) {
    let mut f = vec!["0"; 50];
    (f[0], f[37], f[38]) = ("R", "50", "1");
    write_file(
        root,
        "proc/4242/stat",
        &format!("4242 (spin) {}\n", f.join(" ")),
    );
    write_file(root, "proc/4242/status", "Cpus_allowed_list:\t0\n");
}

#[test]
fn overlap_changes_nothing_on_fixtures() {
    on_every_fixture(|d| {
        assert_same_either_way(d);
    });
}

#[test]
fn overlap_changes_nothing_on_sysfs_irqs() {
    for (sysfs, interrupts, cut) in irq_sysfs::WAYS {
        let m = irq_sysfs::machine(sysfs, interrupts, cut);
        add_rt_task(m.path());
        let all = assert_same_either_way(m.path());
        // Not a comparison of empty lists: the task and the IRQs were read.
        assert!(all.contains("rt-competitor"), "{all}");
        assert!(all.contains("irq-on-cpu"), "{all}");
    }
}

/// A file one byte over the budget (`root::MAX_FILE`).
fn too_big(root: &Path, rel: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let f = std::fs::File::create(p).unwrap();
    f.set_len(pinrun::system::root::MAX_FILE + 1).unwrap();
}

/// The read error of `args` on a machine with the files `big` over budget,
/// with the overlap on and off: the same, and naming `want`.
fn budget_error_names(big: &[&str], args: &str, want: &str) {
    let m = irq_sysfs::machine(true, true, false);
    add_rt_task(m.path());
    for rel in big {
        too_big(m.path(), rel);
    }
    let req = request(m.path(), args).expect(args);
    let off = outcome(m.path(), &req, false);
    let on = outcome(m.path(), &req, true);
    assert_eq!(on, off, "{big:?}");
    assert!(
        off.starts_with("read error read-budget") && off.contains(&format!("reading {want}:")),
        "{big:?}: {off}"
    );
}

/// Files over budget on both threads name the file a read on one thread
/// meets first: a topology-side file read before the IRQs (`isolated`)
/// over an IRQ's affinity (read by the helper, from the start); an IRQ's
/// detail (read after planning) over a real-time task's `stat` (scanned by
/// the helper during the first read). A helper sharing the caller's
/// over-budget record names the helper's file, or fails before planning.
#[test]
fn over_budget_files_are_named_in_one_thread_order() {
    let args = "--dry-run --cpus 0 --fifo 10";
    budget_error_names(
        &[
            "proc/irq/0/effective_affinity_list",
            "sys/devices/system/cpu/isolated",
        ],
        args,
        "/sys/devices/system/cpu/isolated",
    );
    budget_error_names(
        &["proc/4242/stat", "sys/kernel/irq/0/per_cpu_count"],
        args,
        "/sys/kernel/irq/0/per_cpu_count",
    );
    // Alone, each helper file is named.
    budget_error_names(
        &["proc/irq/0/effective_affinity_list"],
        args,
        "/proc/irq/0/effective_affinity_list",
    );
    budget_error_names(&["proc/4242/stat"], args, "/proc/4242/stat");
}

/// Only `--fifo`/`--rr` requests whose findings are used, that plan, and
/// that wait for nothing between the read and the plan scan ahead; the
/// process excluded is the one a scan after planning excludes.
#[test]
fn which_requests_scan_ahead() {
    let live = |args: &str| {
        let argv: Vec<&str> = std::iter::once("pinrun")
            .chain(args.split_whitespace())
            .collect();
        let req = Cli::try_parse_from(argv).unwrap().into_request().unwrap();
        rt_scan_ahead(&req)
    };
    let me = Some(std::process::id());
    assert_eq!(live("--fifo 10 -- true"), Some(me));
    assert_eq!(live("--dry-run --rr 5 --cpus 0"), Some(me));
    assert_eq!(live("--check --fifo 1"), Some(me));
    assert_eq!(live("--quiet --fifo 10 -- true"), None);
    assert_eq!(live("--quiet --strict --fifo 10 -- true"), Some(me));
    assert_eq!(live("--cpus 0 -- true"), None);
    assert_eq!(
        live("--deadline --sched-runtime 1ms --sched-deadline 2ms -- true"),
        None
    );
    assert_eq!(
        live("--exclusive --wait=5s --fifo 10 --cpus 0 -- true"),
        None
    );
    assert_eq!(live("--exclusive --fifo 10 --cpus 0 -- true"), Some(me));
    assert_eq!(live("--settle 1s --fifo 10 -- true"), None);
    let dump = common::machine("hwloc/16em64t-4s2c2t");
    let req = request(&dump, "--check --fifo 10").unwrap();
    assert_eq!(rt_scan_ahead(&req), Some(None));
}
