//! Issue 17: the per-IRQ files (`/proc/irq/N` affinities, debugfs'
//! `managed` flag, the `/sys/kernel/irq/N` details) are read on several
//! threads when there are many (`system::parallel::map`). The threads must
//! change nothing: on every fixture dump and on the synthetic machines of
//! `irq_sysfs` (both IRQ sources, a cut `per_cpu_count`), the state read,
//! the plan or refusal and the findings (as JSON) are the same with one
//! thread, with 3 (uneven chunks) and with more threads than IRQs.
//! `parallel::with_threads` forces the count, so even a dump with a few
//! IRQs goes through the threaded path.

use crate::common;
use crate::irq_sysfs;

use clap::Parser;
use pinrun::app::scope::{for_request, read_extras_for};
use pinrun::cli::Cli;
use pinrun::system::{Root, SystemState, parallel};
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
/// detailed), as text.
fn everything(dump: &Path) -> String {
    everything_from(&Root::new(dump), dump)
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
                out.push_str(&format!(
                    "{args}: {:?}\n{:?}\n{}\n",
                    p,
                    sys.irqs,
                    report::findings_json(&findings)
                ));
            }
        }
    }
    out
}

fn assert_same_on_any_thread_count(dump: &Path) {
    let one = parallel::with_threads(1, || everything(dump));
    for threads in [3, 1000] {
        let many = parallel::with_threads(threads, || everything(dump));
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
        let text = parallel::with_threads(3, || everything(m.path()));
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
