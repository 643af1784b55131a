//! What hostile cpulists cost the parser (issue 15): a 64 KB list that
//! repeats the largest range `0-4194303` (6 400 times, as a damaged claim
//! record or sysfs file can), and lists of many short ranges (a sysfs or
//! kubelet file with thousands of ranges), as cpulist and as cpumask.
//!
//! ```text
//! cargo run --release --example parse_cost -- [ITERS]
//! ```
//! Prints one line per input: `<what> <bytes> B <ms>/parse`.

use pinrun::cpuset::CpuSet;
use std::hint::black_box;
use std::time::Instant;

fn time(what: &str, text: &str, iters: u32, f: impl Fn(&str) -> bool) {
    let start = Instant::now();
    for _ in 0..iters {
        black_box(f(black_box(text)));
    }
    let ms = start.elapsed().as_secs_f64() * 1000.0 / f64::from(iters.max(1));
    println!("{what:<34} {:>7} B {ms:>10.3} ms/parse", text.len());
}

fn main() {
    let iters: u32 = std::env::args()
        .nth(1)
        .map_or(3, |n| n.parse().expect("ITERS"));
    let huge = vec!["0-4194303"; 6400].join(",");
    time("6400 x 0-4194303 (list)", &huge, iters, |t| {
        CpuSet::parse_sysfs_list(t, None).is_ok()
    });
    for n in [1000, 10_000] {
        // Every other CPU as a two-CPU range: n ranges.
        let many: Vec<String> = (0..n).map(|i| format!("{}-{}", 4 * i, 4 * i + 1)).collect();
        let many = many.join(",");
        time(&format!("{n} ranges a-b (list)"), &many, iters, |t| {
            CpuSet::parse_sysfs_list(t, None).is_ok()
        });
        let set = CpuSet::parse_sysfs_list(&many, None).unwrap();
        let mask = set.to_mask();
        time(&format!("{n} ranges (mask)"), &mask, iters, |t| {
            CpuSet::parse_sysfs_mask(t).is_ok()
        });
    }
    let stride = vec!["0-4194303:1/2"; 64].join(",");
    time("64 x 0-4194303:1/2 (list)", &stride, iters, |t| {
        CpuSet::parse(t).is_ok()
    });
}
