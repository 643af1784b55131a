//! A scoped read (`SystemState::read_scoped` with `Scope::for_request`)
//! must give the planner and the checks exactly what a full read gives:
//! same plan or same refusal, same findings, on every fixture machine and
//! a spread of requests (placements, memory policies, scheduling policies,
//! refusals included).

mod common;

use clap::Parser;
use pinrun::cli::Cli;
use pinrun::system::{Root, Scope, SystemState};
use pinrun::{check, plan};
use std::path::{Path, PathBuf};

/// Every machine dump below the fixtures (directories with `sys/devices/system/cpu`).
fn dumps() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for source in std::fs::read_dir(common::fixtures()).unwrap().flatten() {
        for m in std::fs::read_dir(source.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if m.path().join("sys/devices/system/cpu").is_dir() {
                out.push(m.path());
            }
        }
    }
    out.sort();
    out
}

fn requests(full: &SystemState) -> Vec<Vec<String>> {
    let mut reqs: Vec<Vec<String>> = [
        "",
        "--cpus 0",
        "--cpus 1",
        "--cpus 0-3",
        "--cpus 0,2",
        "--cpus 9999",
        "--cores 1",
        "--cores 2 --smt",
        "--cores 100000",
        "--isolated",
        "--isolated --cores 1",
        "--cpus 0 --isolated",
        "--membind --cores 1",
        "--interleave all",
        "--weighted-interleave all --cpus 0",
        "--localalloc --cpus 1",
        "--fifo 10 --cpus 0",
        "--rr 99",
        "--fifo 10 --nice 5",
        "--deadline --sched-runtime 1ms --sched-period 10ms --cpus 0",
        "--deadline --sched-runtime 1ms --sched-period 10ms --reset-on-fork",
        "--deadline --sched-runtime 1ms --sched-period 10ms --cores 1",
        "--node 0 --cpus 0",
        "--node 0 --cores 1 --fifo 10 --membind",
    ]
    .iter()
    .map(|s| s.split_whitespace().map(String::from).collect())
    .collect();
    for n in full.nodes.keys().copied().chain([999]) {
        for a in [
            format!("--membind={n}"),
            format!("--node {n}"),
            format!("--node {n} --cores 1 --smt"),
            format!("--preferred {n}"),
            format!("--preferred-many {n} --node {n}"),
        ] {
            reqs.push(a.split_whitespace().map(String::from).collect());
        }
    }
    let last = full.cpus.keys().next_back().copied().unwrap_or(0);
    for id in [last, last.saturating_sub(1)] {
        reqs.push(vec!["--cpus".into(), id.to_string()]);
        reqs.push(vec!["--cpus".into(), format!("0-{id}")]);
    }
    reqs
}

/// Scoped reads of one dump, by scope (many requests share one).
type Reads = Vec<(Scope, SystemState)>;

fn compare(dump: &Path, full: &SystemState, reads: &mut Reads, args: &[String]) {
    let argv = ["pinrun", "--sysroot"]
        .iter()
        .map(|s| s.to_string())
        .chain([dump.display().to_string(), "--dry-run".into()])
        .chain(args.iter().cloned());
    let Ok(req) = Cli::try_parse_from(argv)
        .map_err(|e| e.to_string())
        .and_then(|c| c.into_request().map_err(|e| e.message))
    else {
        return;
    };
    let scope = Scope::for_request(&req);
    let i = match reads.iter().position(|(s, _)| *s == scope) {
        Some(i) => i,
        None => {
            let sys = SystemState::read_scoped(&Root::new(dump), &scope);
            reads.push((scope, sys));
            reads.len() - 1
        }
    };
    let scoped = &reads[i].1;
    let a = plan::plan(full, &req);
    let b = plan::plan(scoped, &req);
    assert_eq!(a, b, "{} {args:?}: plans differ", dump.display());
    if let Ok(p) = &a {
        assert_eq!(
            check::check(full, &req, p),
            check::check(scoped, &req, p),
            "{} {args:?}: findings differ",
            dump.display()
        );
    }
}

#[test]
fn scoped_read_plans_like_full_read() {
    let dumps = dumps();
    assert!(dumps.len() > 50, "{} dumps", dumps.len());
    for dump in &dumps {
        let full = SystemState::read(&Root::new(dump));
        let mut reads = Reads::new();
        for args in requests(&full) {
            compare(dump, &full, &mut reads, &args);
        }
    }
}

/// `--show` reads everything.
#[test]
fn show_reads_everything() {
    let req = Cli::try_parse_from(["pinrun", "--show"])
        .unwrap()
        .into_request()
        .unwrap();
    assert_eq!(Scope::for_request(&req), Scope::full());
}
