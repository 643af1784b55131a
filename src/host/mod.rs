//! Preparing the host (`--plan-host`, `--plan-host --check`; issue 38), a
//! wing in one folder (issue 32; ARCHITECTURE.md §2): the boot-time split
//! of the host into housekeeping and latency CPUs and every setting that
//! realises it. Its files are its layers: [`read`] (the kernel's answers:
//! `cpu/smt/control`, the kernel configuration, the cgroup v2 cpuset
//! controller, the hotpluggable CPUs), [`plan`] (the split, by OpenShift's
//! Performance Profile Creator's rules, and each boot parameter's support;
//! pure), [`check`] (the running host against a split; pure), [`report`]
//! (each owner's native form, text and JSON) and [`run`] (the mode). Its
//! request is the core's `request::HostRequest`; the core imports none of
//! it but `app`, which calls [`run::run`].

pub mod check;
pub mod plan;
pub mod read;
pub mod report;
pub mod run;
