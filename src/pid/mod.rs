//! Running processes (`--pid`, `--tid`, `--migrate`; issue 18), a wing in
//! one folder (issue 32): this file is its vocabulary, and its other files
//! are its layers, each using the core's layers up to its own and the
//! wing's files below it (ARCHITECTURE.md §2, checked by
//! scripts/import-graph.sh): [`read`] (the process by pidfd and start
//! time, its threads, its change lock and who holds it), [`plan`] (who may change the process, what
//! `--migrate` moves; pure), [`report`] (the process as `--pid PID` shows
//! it), [`apply`] (every thread changed all or nothing, the pages moved,
//! and [`apply::undo`], the helper that puts the threads back should
//! pinrun die) and [`run`] (the flow the application layer calls, with
//! what it needs of the core and the claims wing: [`run::Launch`]). The
//! core imports none of them.
//!
//! The wing reads through the core's `system::threads` (`/proc/PID/task`,
//! the pidfd identity, `numa_maps`): the one reader of those files, which
//! the steer and claims wings use too.

pub mod apply;
pub mod plan;
pub mod read;
pub mod report;
pub mod run;
