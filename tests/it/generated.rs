//! The committed man page and completions are generated from the clap
//! definition (`pinrun --generate ...`); this test fails when they are stale.

use crate::common;
use common::pinrun;

#[test]
fn generated_files_are_fresh() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (what, file) in [
        ("man", "man/pinrun.1"),
        ("bash", "completions/pinrun.bash"),
        ("zsh", "completions/_pinrun"),
        ("fish", "completions/pinrun.fish"),
    ] {
        let out = pinrun().args(["--generate", what]).output().unwrap();
        assert!(out.status.success());
        let committed = std::fs::read(root.join(file)).unwrap_or_default();
        assert!(
            committed == out.stdout,
            "{file} is stale: run `cargo run -- --generate {what} > {file}`"
        );
    }
}

/// Every line of pinrun(1) that starts with troff's control characters
/// (`.` or `'`) is a request or macro the page means (issue 37 item 4: a
/// text line starting `.pinrun\-dump\-*` was read as an undefined macro
/// and its sentence dropped from the rendered page); text that must start
/// with a dot is written `\&.`. The names are those of groff_man(7) and
/// the few troff requests the generated parts use.
#[test]
fn no_text_line_starts_with_a_control_character() {
    const KNOWN: &[&str] = &[
        "TH", "SH", "SS", "PP", "TP", "IP", "RS", "RE", "B", "I", "BR", "RB", "BI", "IB", "IR",
        "RI", "br", "nf", "fi", "ie", "el", "TS", "TE", "sp", "in", "ti", "ad", "na", "\\\"",
    ];
    let out = pinrun().args(["--generate", "man"]).output().unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    for (i, line) in page.lines().enumerate() {
        let Some(rest) = line.strip_prefix('.').or_else(|| line.strip_prefix('\'')) else {
            continue;
        };
        let name = rest.split_whitespace().next().unwrap_or("");
        assert!(
            name.is_empty() || KNOWN.contains(&name) || name.starts_with("\\\""),
            "man/pinrun.1 line {}: {line:?} starts with a control character but {name:?} is no macro the page means (write \\& before the dot)",
            i + 1
        );
    }
    // groff itself, where it is installed (.ci/run installs groff-base):
    // no warning at all with every warning class on.
    let groff = std::process::Command::new("groff")
        .args(["-ww", "-z", "-man"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    if let Ok(mut g) = groff {
        use std::io::Write;
        g.stdin.take().unwrap().write_all(page.as_bytes()).unwrap();
        let out = g.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "groff -ww -z -man man/pinrun.1: {err}");
    }
    // Rendered at 80 columns as man(1) does: no warning ("table wider
    // than line width" was one, issue 37).
    let page_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man/pinrun.1");
    if let Ok(out) = std::process::Command::new("man")
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .arg("-l")
        .arg(&page_path)
        .output()
    {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.trim().is_empty(),
            "man -l man/pinrun.1 at 80 columns: {err}"
        );
    }
}

/// The README's counts of machine dumps are the repository's: 91 machines
/// in 93 archives (two `_` archives hold only peers' expected outputs).
/// What scripts/readme-numbers.sh prints, held by a test where a test can.
#[test]
fn readme_counts_the_machine_dumps_there_are() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut archives = 0;
    let mut machines = 0;
    for src in std::fs::read_dir(root.join("tests/data/machines"))
        .unwrap()
        .flatten()
    {
        if !src.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(src.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tar.gz") {
                archives += 1;
                machines += usize::from(!name.starts_with('_'));
            }
        }
    }
    let claim = format!("against {machines} real machine dumps ({archives} archives in");
    assert!(
        readme.replace('\n', " ").contains(&claim),
        "README.md should say \"{claim}\""
    );
}

/// The README's test command names every live test that creates a cgroup
/// on the host (`TestCpuset::new` in tests/live.rs), so that whoever may
/// not write cgroups there knows what to skip (a new user's trial: it
/// named pid_plans_inside_the_targets_cgroup only, while
/// pid_threads_in_different_cpusets makes one too on cgroup v1).
#[test]
fn readme_names_every_test_that_creates_a_cgroup() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let live = std::fs::read_to_string(root.join("tests/live.rs")).unwrap();
    let mut makers = Vec::new();
    let mut current = None;
    for line in live.lines() {
        if let Some(rest) = line.strip_prefix("fn ") {
            current = rest.split('(').next().map(str::to_string);
        }
        if line.contains("TestCpuset::new(")
            && let Some(name) = &current
            && !makers.contains(name)
        {
            makers.push(name.clone());
        }
    }
    assert!(makers.len() >= 2, "{makers:?}");
    for name in &makers {
        assert!(
            readme.contains(name.as_str()),
            "README.md's test command should name {name}, which creates a cgroup"
        );
        let skip = readme
            .split("--skip ")
            .skip(1)
            .filter_map(|s| s.split([' ', ')', '\n']).next())
            .any(|filter| name.contains(filter));
        assert!(skip, "README.md's --skip filters should match {name}");
    }
}
