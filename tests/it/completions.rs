//! The generated completions (`pinrun --generate bash|zsh|fish`) run in the
//! real shells: CPU numbers of this machine (as `lscpu -p=CPU --online`
//! lists them) for the CPU options, node numbers for the node options,
//! finding codes for `--allow`, commands after `--`. A shell that is not
//! installed is skipped visibly (`.ci/run` installs them).

use crate::common;
use common::*;
use std::process::Command;

/// The script for `shell`, written to a file in `dir`.
fn script(dir: &std::path::Path, shell: &str) -> std::path::PathBuf {
    let out = pinrun().args(["--generate", shell]).output().unwrap();
    assert_status(&out, 0);
    let path = dir.join(format!("pinrun.{shell}"));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

fn has(shell: &str) -> bool {
    Command::new(shell)
        .args(["-c", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The online CPUs as util-linux lscpu lists them.
fn online_cpus() -> Vec<String> {
    let out = Command::new("lscpu")
        .args(["-p=CPU", "--online"])
        .output()
        .expect("lscpu (util-linux)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The online nodes as lscpu lists them (the NODE column), or `0` when
/// the machine exposes no nodes.
fn online_nodes() -> Vec<String> {
    if !std::path::Path::new("/sys/devices/system/node/online").exists() {
        return Vec::new();
    }
    let out = Command::new("lscpu").args(["-p=NODE"]).output().unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_string)
        .collect();
    v.sort_by_key(|n| n.parse::<u32>().unwrap_or(u32::MAX));
    v.dedup();
    v
}

/// Bash: the completion function registered for pinrun, called as bash
/// calls it (COMP_WORDS, COMP_CWORD, and command, word, previous word).
fn bash_complete(file: &std::path::Path, words: &[&str]) -> Vec<String> {
    let cword = words.len() - 1;
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let prog = format!(
        "source '{}'; fn=$(complete -p pinrun | sed 's/.*-F \\([^ ]*\\).*/\\1/'); \
         COMP_WORDS=({}); COMP_CWORD={cword}; \
         $fn pinrun '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display(),
        quoted.join(" "),
        words[cword],
        words[cword - 1]
    );
    let out = Command::new("bash").args(["-c", &prog]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_cpus_nodes_codes_and_commands() {
    if !has("bash") {
        skip("bash is not installed");
        return;
    }
    let dir = tempdir();
    let file = script(dir.path(), "bash");
    let mut want: Vec<String> = vec!["all".into()];
    want.extend(online_cpus());
    for opt in ["--cpus", "-c", "-C", "--physcpubind", "--cpu-list"] {
        assert_eq!(bash_complete(&file, &["pinrun", opt, ""]), want, "{opt}");
    }
    let nodes = online_nodes();
    if !nodes.is_empty() {
        let mut want: Vec<String> = vec!["all".into()];
        want.extend(nodes);
        for opt in ["--node", "-N", "--membind", "--interleave"] {
            assert_eq!(bash_complete(&file, &["pinrun", opt, ""]), want, "{opt}");
        }
    }
    assert_eq!(
        bash_complete(&file, &["pinrun", "--allow", "irq"]),
        vec!["irq-*", "irq-on-cpu"]
    );
    // After --: a command (bash's compgen -c), never pinrun's options.
    let cmds = bash_complete(&file, &["pinrun", "--cores", "1", "--", "tasks"]);
    assert!(cmds.iter().any(|c| c == "taskset"), "{cmds:?}");
    let opts = bash_complete(&file, &["pinrun", "--", "--fi"]);
    assert!(!opts.iter().any(|c| c == "--fifo"), "{opts:?}");
    // Before --, options still complete.
    assert_eq!(bash_complete(&file, &["pinrun", "--fi"]), vec!["--fifo"]);
    // --pid: process ids (this test's own among them) and self, never
    // file names.
    let me = std::process::id().to_string();
    let pids = bash_complete(&file, &["pinrun", "--pid", &me]);
    assert!(pids.contains(&me), "{pids:?}");
    assert!(pids.iter().all(|p| p.starts_with(&me)), "{pids:?}");
    assert_eq!(
        bash_complete(&file, &["pinrun", "--pid", "se"]),
        vec!["self"]
    );
}

#[test]
fn fish_completes_cpus_and_codes() {
    if !has("fish") {
        skip("fish is not installed (apt-get install fish)");
        return;
    }
    let dir = tempdir();
    let file = script(dir.path(), "fish");
    let complete = |line: &str| -> Vec<String> {
        let out = Command::new("fish")
            .args([
                "--no-config",
                "-c",
                &format!("source '{}'; complete -C '{line}'", file.display()),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    };
    let got = complete("pinrun --cpus ");
    for cpu in online_cpus() {
        assert!(got.contains(&cpu), "CPU {cpu}: {got:?}");
    }
    assert!(got.contains(&"all".to_string()), "{got:?}");
    let got = complete("pinrun --allow irq");
    assert!(got.contains(&"irq-on-cpu".to_string()), "{got:?}");
}

#[test]
fn zsh_script_loads_and_lists_cpus() {
    if !has("zsh") {
        skip("zsh is not installed (apt-get install zsh)");
        return;
    }
    let dir = tempdir();
    let file = script(dir.path(), "zsh");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("#compdef pinrun\n"));
    assert!(text.contains("--cpus=[") && text.contains(":LIST:_pinrun_cpus'"));
    assert!(text.contains("--node=[") && text.contains(":NODES:_pinrun_nodes'"));
    // The helper zsh calls for --cpus, run by zsh itself: this machine's
    // online CPUs. (Driving the completion widget needs a terminal, zpty.)
    let prog = format!(
        "autoload -U compinit; compinit -u -d '{}/zcompdump'; source '{}'; _pinrun_ids /sys/devices/system/cpu/online",
        dir.path().display(),
        file.display()
    );
    let out = Command::new("zsh")
        .args(["-f", "-c", &prog])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(got, online_cpus());
}
