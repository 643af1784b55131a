//! What to read: [`Scope`] tells [`super::SystemState::read_scoped`] which
//! files a request needs, so that a launch reads a few dozen small files
//! instead of every CPU's topology and cache directories.
//!
//! The rule is exactness, not approximation: every field that `plan` and
//! `check` look at for the request is read exactly as a full read would read
//! it; only data they never look at is left out (and is then `None`, empty
//! or default). `--show` prints everything and uses [`Scope::full`].
//! Code that starts looking at a new field for some request must widen
//! [`Scope::for_request`] accordingly; `tests/scope.rs` compares the plan
//! and findings of a scoped read with those of a full read on every fixture.

use crate::request::{Mode, Request};

/// The parts of the machine to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// What only `--show` prints: die, cluster, `package_cpus`, the LLC
    /// (`cache/index*`), node `meminfo` and `distance` (read anyway where the
    /// planner needs them: `meminfo` without `node/has_memory`, `distance`
    /// of nodes without memory), `nohz_full`, `/proc/cmdline`,
    /// `/proc/self/stat` and the RT throttling sysctls.
    pub details: bool,
}

impl Scope {
    /// Everything (`--show`, and [`super::SystemState::read`]).
    pub fn full() -> Self {
        Self { details: true }
    }

    /// What planning and checking `req` look at.
    pub fn for_request(req: &Request) -> Self {
        if req.mode == Mode::Show {
            return Self::full();
        }
        Self { details: false }
    }
}
