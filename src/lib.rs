//! pinrun: run a command on chosen CPUs, NUMA memory and scheduling policy,
//! replacing `numactl … chrt … taskset …`. Layers (ARCHITECTURE.md §2),
//! lowest first: the vocabulary ([`cpuset`], [`request`], [`policy`], [`claim`],
//! [`finding`], [`habits`], [`error`], [`words`], [`boot_params`], [`ffi`]); [`system`]
//! reads; [`plan`] and [`check`] decide (pure); [`report`], [`show`],
//! [`manual`] and [`completion`] render, [`output`] prints; [`apply`] changes the
//! process, [`exec`] runs the command; [`cli`] parses and [`app`] is the
//! whole run of the `pinrun` command. The wings ([`steer`], [`host`],
//! [`fleet`]) are folders whose files are their layers; [`app`] composes
//! them. The only `unsafe` code is in [`ffi`].
#![deny(unsafe_code)]

pub mod app;
pub mod apply;
pub mod boot_params;
pub mod check;
pub mod claim;
pub mod claims;
pub mod cli;
pub mod completion;
pub mod cpuset;
pub mod dump;
pub mod error;
pub mod exec;
#[allow(unsafe_code)]
pub mod ffi;
pub mod finding;
pub mod fleet;
pub mod habits;
pub mod host;
pub mod manual;
pub mod noise;
pub mod output;
pub mod pid;
pub mod plan;
pub mod policy;
pub mod probe;
pub mod report;
pub mod request;
pub mod show;
pub mod steer;
pub mod system;
#[doc(hidden)]
pub mod testkit;
pub mod waits;
pub mod words;
