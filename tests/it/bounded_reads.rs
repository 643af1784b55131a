//! Every whole-file read of pinrun's own code is bounded (issue 32): a
//! file of `/proc`, `/sys`, tracefs or a path a user names is read
//! through `Root` or `system::root::read_bounded` (at most 4 MiB,
//! `MAX_FILE`), never with `std::fs::read_to_string` or `std::fs::read`,
//! which grow their buffer to whatever the file holds. Only
//! `system/root.rs`, where the bound is, and the `#[cfg(test)]` modules
//! (last in a file, as scripts/import-graph.sh takes them) may.

use crate::common;

/// The unbounded whole-file reads of `text` (a source file), by line
/// number: `fs::read_to_string(` and `fs::read(` outside `//` comments
/// and the trailing `#[cfg(test)]` module.
fn unbounded(text: &str) -> Vec<(usize, String)> {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    code.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| l.contains("fs::read_to_string(") || l.contains("fs::read("))
        .map(|(n, l)| (n + 1, l.trim().to_string()))
        .collect()
}

#[test]
fn the_scan_finds_an_unbounded_read_and_leaves_tests_and_comments() {
    let src = "fn a() {\n    let s = std::fs::read_to_string(\"/proc/1/status\");\n    // std::fs::read(x) in a comment\n    let b = std::fs::read(p);\n}\n\n#[cfg(test)]\nmod tests {\n    fn t() { std::fs::read_to_string(\"x\"); }\n}\n";
    let found: Vec<usize> = unbounded(src).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, [2, 4]);
}

#[test]
fn no_file_is_read_whole_without_a_bound() {
    let found = common::src_findings("system/root.rs", unbounded);
    assert!(
        found.is_empty(),
        "unbounded reads (use Root or system::root::read_bounded):\n{}",
        found.join("\n")
    );
}
