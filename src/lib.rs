//! pinrun: run a command on chosen CPUs, NUMA memory and scheduling policy,
//! replacing `numactl … chrt … taskset …`. Layers (DESIGN §1): [`system`]
//! reads, [`plan`] and [`check`] decide (pure), [`report`] renders,
//! [`apply`] changes the process, [`exec`] runs the command; [`app`] is the
//! whole run of the `pinrun` command. The only `unsafe` code is in [`ffi`].
#![deny(unsafe_code)]

pub mod app;
pub mod apply;
pub mod boot_params;
pub mod check;
pub mod claim;
pub mod cli;
pub mod cpuset;
pub mod emit;
pub mod error;
pub mod exec;
#[allow(unsafe_code)]
pub mod ffi;
pub mod finding;
pub mod manual;
pub mod output;
pub mod plan;
pub mod report;
pub mod request;
pub mod show;
pub mod system;
#[doc(hidden)]
pub mod testkit;
pub mod words;
