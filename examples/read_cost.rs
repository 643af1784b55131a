//! The floor under every read-bound benchmark row (issue 8): what one small
//! file costs pinrun's reader ([`pinrun::system::Root::dir`] +
//! `Dir::read`: `openat` relative to the directory, `read` until EOF,
//! `close`), for a sysfs attribute, a procfs file, and a file of a machine
//! dump on disk (the page cache). Reading N IRQs' affinities or N CPUs'
//! topology files cannot cost less than N times this.
//!
//! ```text
//! cargo run --release --example read_cost -- [ITERS] [DUMP_DIR REL]
//! ```
//! Prints one line per file: `<what> <ns>/read`.

use pinrun::system::Root;
use std::hint::black_box;
use std::time::Instant;

/// Mean nanoseconds per `Dir::read` of `rel` below `dir` of `root`.
fn cost(root: &Root, dir: &str, rel: &str, iters: u32) -> Option<u128> {
    let d = root.dir(dir)?;
    d.read(rel)?;
    let start = Instant::now();
    for _ in 0..iters {
        black_box(d.read(rel));
    }
    Some(start.elapsed().as_nanos() / u128::from(iters.max(1)))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iters: u32 = args.next().map_or(20_000, |n| n.parse().expect("ITERS"));
    let live = Root::new("/");
    let first_irq = live
        .numbered_entries("/proc/irq", "")
        .into_iter()
        .next()
        .map(|n| format!("{n}/effective_affinity_list"));
    let mut rows = vec![(
        "sysfs cpu0/topology/core_cpus_list".to_string(),
        cost(
            &live,
            "/sys/devices/system/cpu",
            "cpu0/topology/core_cpus_list",
            iters,
        ),
    )];
    if let Some(rel) = first_irq {
        rows.push((
            format!("procfs /proc/irq/{rel}"),
            cost(&live, "/proc/irq", &rel, iters),
        ));
    }
    if let (Some(dump), Some(rel)) = (args.next(), args.next()) {
        let root = Root::new(&dump);
        rows.push((format!("dump {dump}/{rel}"), cost(&root, "/", &rel, iters)));
    }
    for (what, ns) in rows {
        match ns {
            Some(ns) => println!("{what} {ns}/read"),
            None => println!("{what} unreadable"),
        }
    }
}
