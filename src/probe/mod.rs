//! The noise probe (`--probe`, `--choose measured`; issues 20, 31, 36), a
//! wing in one folder (issue 32; ARCHITECTURE.md §2). Its files are its
//! layers, each using the core's layers up to its own and the wing's files
//! below it (checked by scripts/import-graph.sh): [`plan`] (which CPUs are
//! probed, what is refused as unsafe, the RT throttling that applies, the
//! `--probe-max` gate; pure), [`report`] (text and JSON), [`apply`] (the
//! probe threads, the watchdog, the counters read around them) and [`run`]
//! (the flow the application layer calls). Its vocabulary and analysis are
//! the core's `noise` (the request is part of `request::Request`), its
//! counters are read by the core's `system::noise` (the dump replay and
//! `--show` read `/proc/interrupts` with the same parsers); the core
//! imports none of this folder but `app`, which calls [`run`].

pub mod apply;
pub mod plan;
pub mod report;
pub mod run;
