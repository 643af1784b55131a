//! No shell script of the repository that runs under `set -o pipefail`
//! has a pipeline whose reader may leave before its writer is done
//! (`grep -q`, `grep -m`, `grep -l`, `head`, `awk … exit`, `read`): the
//! writer then dies by SIGPIPE and the pipeline fails with 141 (CI's man
//! page check, 72a9b40: `pinrun --generate man | grep -q …`), or, in an
//! `&&` list, answers wrongly (`git status --porcelain | grep -q . && echo
//! dirty` said nothing for a tree with thousands of changed files). Such a
//! reader reads a file instead, or a reader that reads all is used
//! (`sed -n 1p`, `[ -n "$(…)" ]`).

use std::path::{Path, PathBuf};

/// The shell scripts of `.ci`, `scripts`, `bench` and `vm` (a `.sh` name
/// or a shell `#!` line).
fn scripts(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = [".ci", "scripts", "bench", "vm"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let head = std::fs::read(&p)
                .map(|b| b.iter().take(64).copied().collect::<Vec<u8>>())
                .unwrap_or_default();
            let shebang = String::from_utf8_lossy(&head);
            let shell = shebang.starts_with("#!")
                && ["sh", "bash"].iter().any(|s| {
                    shebang.lines().next().is_some_and(|l| {
                        l.ends_with(&format!("/{s}")) || l.ends_with(&format!(" {s}"))
                    })
                });
            if shell || p.extension().is_some_and(|x| x == "sh") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Whether a pipeline stage (the text after a `|`) is a reader that may
/// leave before its input ends.
fn leaves_early(stage: &str) -> bool {
    let words: Vec<&str> = stage.split_whitespace().collect();
    let Some(&cmd) = words.first() else {
        return false;
    };
    let opts = || words.iter().skip(1).take_while(|w| w.starts_with('-'));
    match cmd {
        "head" | "read" => true,
        "grep" | "egrep" | "fgrep" => opts().any(|w| {
            matches!(
                *w,
                "--quiet" | "--silent" | "--files-with-matches" | "--files-without-match"
            ) || w.starts_with("--max-count")
                || (!w.starts_with("--") && w[1..].chars().any(|c| "qlLm".contains(c)))
        }),
        "awk" => stage.contains("exit"),
        _ => false,
    }
}

/// The pipelines of `text` (a script under pipefail) with a reader that
/// may leave early: `(line number, line)`. Comments and here-documents are
/// skipped; `||` is not a pipe.
fn early_readers(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut heredoc: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
            }
            continue;
        }
        let code = line.trim_start();
        if code.starts_with('#') {
            continue;
        }
        if let Some(at) = code.find("<<") {
            let tag: String = code[at + 2..]
                .trim_start_matches('-')
                .trim_start()
                .chars()
                .filter(|c| !matches!(c, '\'' | '"'))
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !tag.is_empty() {
                heredoc = Some(tag);
            }
        }
        let bytes = code.as_bytes();
        for (j, _) in code.match_indices('|') {
            let double = bytes.get(j + 1) == Some(&b'|') || (j > 0 && bytes[j - 1] == b'|');
            if !double && leaves_early(&code[j + 1..]) {
                found.push((i + 1, line.to_string()));
                break;
            }
        }
    }
    found
}

/// What the rule is for: bash under pipefail, a writer with more to write
/// than a pipe holds (64 KiB, `pipe(7)`) and a reader that leaves at the
/// first line: 141 (128 + SIGPIPE); the same writer into a file read by
/// `grep -q`, or into a reader that reads all, succeeds.
#[test]
fn an_early_reader_fails_a_pipefail_pipeline_with_141() {
    let run = |script: &str| {
        std::process::Command::new("bash")
            .args(["-c", script])
            .output()
            .expect("bash")
    };
    let out = run("set -o pipefail; seq 1 200000 | grep -q 1; echo $?");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "141\n");
    let out = run("set -o pipefail; seq 1 200000 | sed -n 1p >/dev/null; echo $?");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n");
}

#[test]
fn the_detector_flags_early_readers_only() {
    let bad = [
        "\"$bin\" --generate man | grep -q '^\\.SH INSTALLATION'",
        "echo $(git status --porcelain | grep -q . && echo dirty)",
        "x=$(find . | sort | head -1)",
        "ls | grep -m1 foo",
        "ls | grep -ql foo",
        "ls | grep --quiet foo",
        "apt-cache depends x | awk '/Depends/{print $2; exit}'",
        "producer | read first",
    ];
    for b in bad {
        assert_eq!(early_readers(b).len(), 1, "{b}");
    }
    let good = [
        "grep -q '^\\.SH INSTALLATION' \"$build/pinrun.1\"",
        "[ -n \"$(git status --porcelain)\" ] && echo dirty",
        "x=$(find . | sort | sed -n 1p)",
        "ls | grep -c foo",
        "cmd || head -1 file",
        "# a comment | head -1",
        "scripts/import-graph.sh | sed -n '/^# layers/,$p'",
        "python3 - <<'EOF'\nx | head\nEOF",
    ];
    for g in good {
        assert_eq!(early_readers(g), Vec::<(usize, String)>::new(), "{g}");
    }
}

#[test]
fn no_pipefail_script_has_a_reader_that_leaves_early() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = scripts(root);
    assert!(
        all.iter().any(|p| p.ends_with(".ci/run")),
        "the scripts were not found: {all:?}"
    );
    let mut bad = Vec::new();
    let mut checked = 0;
    for p in &all {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        if !text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("set ") && l.contains("pipefail")
        }) {
            continue;
        }
        checked += 1;
        for (n, line) in early_readers(&text) {
            bad.push(format!("{}:{n}: {}", p.display(), line.trim()));
        }
    }
    assert!(checked >= 10, "only {checked} scripts under pipefail");
    assert!(
        bad.is_empty(),
        "a reader that leaves early under pipefail:\n{}",
        bad.join("\n")
    );
}
