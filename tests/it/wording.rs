//! A new user's trial: "CPUs 0" (a plural for one CPU) and "1 warning(s)"
//! in what pinrun prints. Counts of CPUs, warnings, notices, findings,
//! IRQs, cores and claims agree with their number, as English does: one
//! place says them (`pinrun::words::count`, `pinrun::words::noun`).

use crate::common;
use common::*;

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The class, in the source: no message says "(s)" or "(es)" after a
/// word (`IRQ(s)`, `warning(s)`; `thread(s)`, `pass(es)` in `--pid`'s
/// lines, found by a new user after the counted nouns were fixed), and no code
/// outside `src/words.rs` adds its own "s" by a count (`if n == 1 { ""
/// } else { "s" }`): a count is said through `words::count` or
/// `words::noun`.
#[test]
fn no_message_hedges_its_plural() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        if f.ends_with("src/words.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            // Inside a string literal (an odd number of quotes before
            // it), after a noun the report counts.
            let hedged = ["(s)", "(es)"].iter().any(|h| {
                code.match_indices(h).any(|(at, _)| {
                    code[..at].matches('"').count() % 2 == 1
                        && code[..at].ends_with(|c: char| c.is_ascii_alphabetic())
                })
            });
            if hedged || code.contains(r#"{ "" } else { "s" }"#) {
                bad.push(format!("{}:{}: {code}", f.display(), i + 1));
            }
        }
    }
    assert!(bad.is_empty(), "plurals said by hand:\n{}", bad.join("\n"));
    assert_eq!(pinrun::words::count(1, "CPU"), "1 CPU");
    assert_eq!(pinrun::words::count(0, "IRQ"), "0 IRQs");
    assert_eq!(pinrun::words::count(2, "warning"), "2 warnings");
    assert_eq!(pinrun::words::noun(1, "IRQ"), "IRQ");
}

/// The class, in the output: a plan for one CPU under --strict on a real
/// dump (xeon4214_2socket, 48 CPUs, one of them named) says "1 CPU" and
/// counts its warnings by their number; --check of one CPU counts its
/// findings so; never "(s)", "CPUs 0 " or "1 CPUs".
#[test]
fn one_cpu_and_one_warning_are_singular() {
    let m = machine("cadvisor/xeon4214_2socket");
    let runs: [&[&str]; 3] = [
        &[
            "--dry-run",
            "--strict",
            "--cpus",
            "0",
            "--fifo",
            "10",
            "--",
            "true",
        ],
        &["--check", "--cpus", "0", "--fifo", "10"],
        &["--dry-run", "-v", "--cpus", "0,1", "--", "true"],
    ];
    for args in runs {
        let o = pinrun()
            .env("PINRUN_CONFIG", "")
            .arg("--sysroot")
            .arg(&m)
            .args(args)
            .output()
            .unwrap();
        let out = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        for wrong in [
            "(s)",
            "CPUs 0 ",
            "CPUs 0)",
            "1 CPUs",
            "1 warnings",
            "1 notices",
            "1 IRQs",
        ] {
            assert!(!out.contains(wrong), "{args:?} says {wrong:?}:\n{out}");
        }
        if args[0] == "--dry-run" && args.contains(&"0") {
            assert!(out.contains("cpus:    0 (1 CPU)\n"), "{out}");
        }
        // The count line of --check and the strict line, by their number.
        for line in out.lines() {
            let counted =
                line.starts_with("strict:") || line.contains("; the fixes: pinrun --check");
            for (n, word) in line
                .split(|c: char| !c.is_ascii_alphanumeric())
                .collect::<Vec<_>>()
                .windows(2)
                .filter_map(|w| Some((w[0].parse::<usize>().ok()?, w[1])))
            {
                if counted && (word.starts_with("warning") || word.starts_with("notice")) {
                    assert_eq!(word.ends_with('s'), n != 1, "{line}");
                }
            }
        }
    }
}
