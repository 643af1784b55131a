//! Issue 17: a dump's file is read once when the first `read(2)` returns
//! its whole `st_size` (no second read to see end of file), and the
//! debugfs `managed` files of the sysfs IRQ details are opened only for
//! the IRQs debugfs lists. Neither may change what is read: on every
//! fixture dump and on the synthetic machines of `irq_sysfs` (both IRQ
//! sources, a cut `per_cpu_count`), the state, the plan or refusal and the
//! findings (as JSON) are the same as when every file is read to end of
//! file (`Root::reading_to_eof`), on one thread and on several.

use crate::common;
use crate::irq_sysfs;
use crate::parallel_read::everything_from;

use pinrun::system::{Root, parallel};
use std::path::{Path, PathBuf};

fn assert_same_read_to_eof(dump: &Path) {
    for threads in [1, 3] {
        let once = parallel::with_threads(threads, || everything_from(&Root::new(dump), dump));
        let eof = parallel::with_threads(threads, || {
            everything_from(&Root::new(dump).reading_to_eof(), dump)
        });
        assert!(
            once == eof,
            "{} ({threads} threads): ending files at st_size read differently",
            dump.display()
        );
    }
}

#[test]
fn reads_ending_at_st_size_change_nothing_on_fixtures() {
    let dumps: Vec<PathBuf> = common::all_machines()
        .iter()
        .map(|m| common::machine(m))
        .filter(|p| p.join("sys/devices/system/cpu").is_dir())
        .collect();
    assert!(dumps.len() >= 50, "only {} dumps", dumps.len());
    for d in &dumps {
        assert_same_read_to_eof(d);
    }
}

#[test]
fn reads_ending_at_st_size_change_nothing_on_sysfs_irqs() {
    for (sysfs, interrupts, cut) in [
        (true, true, false),
        (true, false, true),
        (false, true, false),
    ] {
        let m = irq_sysfs::machine(sysfs, interrupts, cut);
        assert_same_read_to_eof(m.path());
        let text = everything_from(&Root::new(m.path()), m.path());
        assert!(text.contains("irq-on-cpu"), "{text}");
    }
}
