//! In-process benchmark of the pure planner (issue 8): reads a machine dump
//! once, then times `plan::plan` + `check::check` and, separately, the
//! scoped read, with `std::time::Instant`.
//!
//! ```text
//! cargo run --release --example plan_bench -- SYSROOT [ITERS] [PINRUN OPTIONS...]
//! cargo run --release --example plan_bench -- bench/out/sysroots/c4096-n16-i10000-smt 200 --cores 1
//! ```
//! Prints one line: `plan+check <ns>/iter  read <ns>/iter  cpus <n>  nodes <n>`.

use clap::Parser;
use pinrun::cli::Cli;
use pinrun::system::{Root, SystemState};
use pinrun::{check, plan};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let sysroot = args
        .next()
        .expect("usage: plan_bench SYSROOT [ITERS] [OPTIONS...]");
    let iters: u32 = args.next().map_or(1000, |n| n.parse().expect("ITERS"));
    let mut argv = vec![
        "pinrun".to_string(),
        "--sysroot".into(),
        sysroot.clone(),
        "--dry-run".into(),
    ];
    argv.extend(args);
    let req = Cli::try_parse_from(&argv)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_request()
        .unwrap_or_else(|e| panic!("{}", e.message));
    let root = Root::new(&sysroot);
    let scope = pinrun::app::scope::for_request(&req);
    // The read, a few times (it dominates; the page cache is warm after the
    // first; with 10 000 IRQs on 4096 CPUs one read takes seconds).
    let reads = iters.clamp(1, 3);
    let t = Instant::now();
    let mut sys = SystemState::read_scoped(&root, &scope);
    for _ in 1..reads {
        sys = black_box(SystemState::read_scoped(&root, &scope));
    }
    let read_ns = t.elapsed().as_nanos() / u128::from(reads);
    // What main reads after planning (governors, idle states, RT tasks),
    // once, so that the checks below see what a launch sees.
    if let Ok(p) = plan::plan(&sys, &req) {
        let rt = matches!(
            req.sched.policy,
            Some(pinrun::request::Policy::Fifo(_) | pinrun::request::Policy::Rr(_))
        );
        let checked = p.cpus.clone().unwrap_or_else(|| sys.allowed.clone());
        sys.read_extras(
            &root,
            &checked,
            true,
            rt.then_some(pinrun::system::rt_tasks::RtScan::Here(None)),
        );
    }
    let t = Instant::now();
    for _ in 0..iters {
        let p = plan::plan(black_box(&sys), black_box(&req));
        if let Ok(p) = &p {
            black_box(check::check(&sys, &req, p));
        }
        black_box(p).ok();
    }
    let plan_ns = t.elapsed().as_nanos() / u128::from(iters.max(1));
    println!(
        "plan+check {plan_ns} ns/iter  read {read_ns} ns/iter  cpus {}  nodes {}",
        sys.cpus.len(),
        sys.nodes.len()
    );
}
