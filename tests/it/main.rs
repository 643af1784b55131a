//! The integration tests that read machine dumps, synthetic trees and the
//! binary's output, in one test binary (one build, one unpacking of the
//! dumps, and the harness runs them all in parallel). The tests that run
//! real-time processes on this machine are separate binaries
//! (`tests/live.rs`, `tests/rt_scan.rs`: run concurrently with each other
//! they would see each other's real-time tasks), and so is the VM suite
//! (`tests/vm.rs`, ignored by default).

#[path = "../common/mod.rs"]
mod common;

/// Twice as many test threads as CPUs ([`common::two_threads_per_cpu`]).
#[used]
#[unsafe(link_section = ".init_array")]
static TWO_THREADS_PER_CPU: extern "C" fn() = common::two_threads_per_cpu;

mod bench_signals;
mod bounded_reads;
mod checks;
mod choose;
mod claims;
mod claims_ns;
mod claims_trust;
mod completions;
mod damaged_sysfs;
mod dry_run_verdicts;
mod dump;
mod escaping_links;
mod fixtures_plan;
mod fleet;
mod fuzz_trees;
mod generated;
mod golden_plans;
mod habits;
mod hostile_topology;
mod import_graph;
mod integration_ecosystem;
mod irq_sysfs;
mod kernel_sources;
mod near;
mod new_user;
mod out_of_memory;
mod overlap;
mod parallel_read;
mod peers;
mod pid;
mod plan_host;
mod read_once;

mod scope;
mod shell_pipes;
mod show;
mod show_json_stream;
mod static_build;
mod statics;
mod steer;
mod synthetic;
mod threads;
mod units;
mod unreadable_dump;
mod wording;
