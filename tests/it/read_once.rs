//! Issue 17: a dump's file is read once when the first `read(2)` returns
//! its whole `st_size` (no second read to see end of file). That may not
//! change what is read: on every
//! fixture dump and on the synthetic machines of `irq_sysfs` (both IRQ
//! sources, a cut `per_cpu_count`), the state, the plan or refusal and the
//! findings (as JSON) are the same as when every file is read to end of
//! file (`Root::reading_to_eof`), on one thread and on several.

use crate::common;
use crate::parallel_read::{everything, everything_from, on_every_fixture, on_sysfs_irq_machines};

use pinrun::system::Root;
use std::path::Path;

fn assert_same_read_to_eof(dump: &Path) {
    for threads in [1, 3] {
        let once = everything(dump, threads);
        let eof = everything_from(
            &Root::new(dump).reading_to_eof().with_threads(threads),
            dump,
        );
        assert!(
            once == eof,
            "{} ({threads} threads): ending files at st_size read differently",
            dump.display()
        );
    }
}

#[test]
fn reads_ending_at_st_size_change_nothing_on_fixtures() {
    on_every_fixture(assert_same_read_to_eof);
}

#[test]
fn reads_ending_at_st_size_change_nothing_on_sysfs_irqs() {
    on_sysfs_irq_machines(assert_same_read_to_eof);
}

/// Issue 32: an archive is read into memory and its paths walked there
/// (`system::archive::Archive::walk`), not unpacked and opened: on every
/// fixture, the state, the plans or refusals and the findings read from
/// its archive (`tests/data/machines/<source>/<machine>.tar.gz`) are those
/// read from the same dump unpacked into a directory, on one thread and
/// on several.
#[test]
fn an_archive_reads_as_its_directory_on_fixtures() {
    let mut n = 0;
    for m in common::all_machines() {
        let dump = common::machine(&m);
        let archive = common::archives().join(format!("{m}.tar.gz"));
        if !dump.join("sys/devices/system/cpu").is_dir() {
            continue;
        }
        let from_archive = Root::sysroot(Some(&archive)).unwrap();
        assert!(!from_archive.is_live());
        for threads in [1, 3] {
            let dir = everything(&dump, threads);
            let mem = everything_from(&from_archive.clone().with_threads(threads), &dump);
            assert!(
                dir == mem,
                "{m} ({threads} threads): the archive read differently from its directory"
            );
        }
        n += 1;
    }
    assert!(n >= 80, "only {n} machines");
}
