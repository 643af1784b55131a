//! `pinrun --dump FILE.tar.gz`: the machine as pinrun reads it, in one
//! archive that `--sysroot FILE.tar.gz` replays (issue 12).
//!
//! What goes in is not a list kept by hand: while the dump reads the
//! machine, [`Root`] notes every path it is asked for ([`note`],
//! [`note_list`]), and exactly those paths are archived: the files that
//! exist and are readable, byte for byte; the directories on the way; and
//! the symbolic links on the way as links (`cpu0/cpufreq ->
//! ../cpufreq/policy0`, `/proc/self -> PID`), so that a replay walks the
//! same links. The read is [`read_everything`]: what `--show` reads, plus
//! what `--check`/`--dry-run` read for any request on every CPU (idle
//! states, governors and IRQ details of every CPU, the real-time tasks,
//! kubelet's CPU manager state).
//!
//! Live data in the dump (see DUMPS in pinrun(1)): `/proc/self` is the
//! dumping pinrun (its `status`, `stat`, `cgroup`, `limits`: the caller's
//! cgroup, allowed CPUs, capabilities and RT limit, as a launch from the
//! same shell would see them); of the other processes only the `stat` and
//! `status` of the real-time and pinned user-space threads (what the
//! `rt-competitor` check and who runs where need, [`keeps`]) and the `comm`
//! of `kthreadd` and the RCU offload kthreads;
//! `meminfo` and IRQ counts as they were at that moment. Claims in the
//! state directory (`/run/pinrun`) are not part of the machine and are not
//! dumped (below `--sysroot` they are never read).

//!
//! A wing (issue 32, ARCHITECTURE.md §2): [`read`] records and collects,
//! [`report`] writes the tree as a `.tar.gz`, [`run`] is `--dump FILE`.
//! The core never imports it: [`Root`](crate::system::Root) records
//! through the [`crate::system::root::Recorder`] trait, which
//! [`read::Recorder`] implements. Reading an archive back (`--sysroot
//! ARCHIVE`) is the core's ([`crate::system::archive`]), as it is one of
//! `Root`'s backends, whoever wrote the archive.

pub mod read;
pub mod report;
pub mod run;

use crate::error::{Error, ErrorCode};
use std::collections::BTreeMap;
use std::path::Path;

/// One archive entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory.
    Dir,
    /// A regular file's bytes.
    File(Vec<u8>),
    /// A symbolic link and its (relative) target.
    Link(String),
}

/// The archive's contents: relative paths (no leading `/`) to entries,
/// in path order (a directory before what it holds).
pub type Tree = BTreeMap<String, Entry>;

/// An error of `--dump FILE`.
fn dump_error(file: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::DumpFailed,
        format!("--dump {}: {why}", file.display()),
    )
}
