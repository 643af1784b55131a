//! Issue 16: findings a person reads (one per problem, severity by harm,
//! `--check` summary, `--quiet`, `--allow` families, the policy file) and
//! the options numactl, taskset and chrt users already type.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn findings_of(out: &std::process::Output) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    v["findings"].as_array().expect("findings").clone()
}

/// One finding per problem: on every dump, `--check` (every allowed CPU,
/// the worst case for IRQs) never repeats a code, and each IRQ finding's
/// `irqs` has one `irq_details` entry per IRQ.
#[test]
fn every_dump_has_at_most_one_finding_per_code() {
    for rel in all_machines() {
        let out = at(machine(&rel), &["--check", "--json", "--fifo", "50"]);
        if out.status.code() == Some(125) {
            continue; // refused dumps are the hostile tests' business
        }
        let f = findings_of(&out);
        let mut seen = BTreeMap::new();
        for x in &f {
            let code = x["code"].as_str().unwrap().to_string();
            *seen.entry(code).or_insert(0) += 1;
            if let Some(irqs) = x["irqs"].as_array().filter(|a| !a.is_empty()) {
                let details = x["irq_details"].as_array().expect("irq_details");
                assert_eq!(irqs.len(), details.len(), "{rel}: {x}");
            }
        }
        let repeated: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(repeated.is_empty(), "{rel}: {repeated:?}");
    }
}

/// The interrupt counts of IRQ rows in a dump's /proc/interrupts on `cpu`.
fn interrupts_on(root: &std::path::Path, cpu: u32) -> BTreeMap<u32, u64> {
    let text = std::fs::read_to_string(root.join("proc/interrupts")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let col = header
        .iter()
        .position(|h| *h == format!("CPU{cpu}"))
        .expect("CPU column");
    let mut out = BTreeMap::new();
    for l in lines {
        let mut w = l.split_whitespace();
        let Some(n) = w.next().and_then(|h| h.strip_suffix(':')?.parse().ok()) else {
            continue;
        };
        if let Some(c) = w.nth(col).and_then(|c| c.parse().ok()) {
            out.insert(n, c);
        }
    }
    out
}

/// The severity rule (pinrun(1) CHECKS) on nto/bare-metal-worker1, CPU 11:
/// the IRQs routed there are one irq-on-cpu finding, a warning because
/// some fired there (counts from the dump's /proc/interrupts), named most
/// active first; the default IRQ affinity and the scheduler balancing onto
/// a CPU that is not domain-isolated are notices.
#[test]
fn irq_severity_follows_the_counts_in_proc_interrupts() {
    let m = machine("nto/bare-metal-worker1.internal");
    let out = at(&m, &["--check", "--json", "--cpus", "11"]);
    let f = findings_of(&out);
    let irq: Vec<&Value> = f.iter().filter(|x| x["code"] == "irq-on-cpu").collect();
    assert_eq!(irq.len(), 1);
    let counts = interrupts_on(&m, 11);
    let listed = ids(&irq[0]["irqs"]);
    let fired: Vec<u32> = listed
        .iter()
        .copied()
        .filter(|n| counts.get(n).copied().unwrap_or(0) > 0)
        .collect();
    let want = if fired.is_empty() {
        "notice"
    } else {
        "warning"
    };
    assert_eq!(irq[0]["severity"], want, "fired: {fired:?}");
    // Most active first, each with its count on CPU 11.
    let details = irq[0]["irq_details"].as_array().unwrap();
    let got: Vec<(u32, u64)> = details
        .iter()
        .map(|d| {
            (
                d["irq"].as_u64().unwrap() as u32,
                d["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut want_order: Vec<(u32, u64)> = listed.iter().map(|n| (*n, counts[n])).collect();
    want_order.sort_by_key(|(n, c)| (std::cmp::Reverse(*c), *n));
    assert_eq!(got, want_order);
    let x: Vec<&Value> = f.iter().filter(|x| x["code"] == "not-isolated").collect();
    assert_eq!(x.len(), 1);
    assert_eq!(x[0]["severity"], "notice");
    // The text form: one line per finding, then the count line.
    let text = at(&m, &["--check", "--cpus", "11"]);
    assert_eq!(text.status.code(), out.status.code());
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert_eq!(stdout.lines().count(), f.len() + 1, "{stdout}");
    assert!(
        stdout.lines().last().unwrap().contains("--check -v"),
        "{stdout}"
    );
}

/// `--quiet` silences `--check` too; the exit status still says.
#[test]
fn check_quiet_prints_nothing_and_keeps_the_status() {
    let m = machine("nto/bare-metal-worker1.internal");
    let loud = at(&m, &["--check", "--cpus", "11"]);
    let quiet = at(&m, &["--check", "-q", "--cpus", "11"]);
    assert_eq!(loud.status.code(), Some(1));
    assert_eq!(quiet.status.code(), Some(1));
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty());
}

/// `--quiet` silences findings in `--dry-run`'s text too (a quiet launch
/// prints none): the plan is the same, without its findings; `--strict`'s
/// verdict is still said; `--json` keeps the findings.
#[test]
fn dry_run_quiet_prints_the_plan_without_findings() {
    let m = machine("nto/bare-metal-worker1.internal");
    let text = |args: &[&str]| String::from_utf8(at(&m, args).stdout).unwrap();
    let loud = text(&["--dry-run", "--cpus", "11"]);
    let quiet = text(&["--dry-run", "-q", "--cpus", "11"]);
    let (plan, findings) = loud.split_once("findings:").unwrap();
    assert!(findings.contains("[irq-on-cpu]"), "{loud}");
    assert_eq!(quiet, plan);
    let strict = text(&[
        "--dry-run",
        "-q",
        "--strict",
        "--fifo",
        "10",
        "--cpus",
        "11",
    ]);
    assert!(
        strict.contains("\nstrict:  the launch would be refused ("),
        "{strict}"
    );
    assert!(!strict.contains("findings"), "{strict}");
    let json: serde_json::Value =
        serde_json::from_str(&text(&["--dry-run", "-q", "--json", "--cpus", "11"])).unwrap();
    assert!(!json["findings"].as_array().unwrap().is_empty());
}

/// `--allow` takes families and `all`; an unknown word is refused.
#[test]
fn allow_takes_families_and_all() {
    let m = machine("nto/bare-metal-worker1.internal");
    let fam = at(
        &m,
        &["--check", "--json", "--cpus", "11", "--allow", "irq-*"],
    );
    let f = findings_of(&fam);
    let irq: Vec<&Value> = f.iter().filter(|x| x["code"] == "irq-on-cpu").collect();
    assert_eq!(irq[0]["severity"], "info");
    let all = at(&m, &["--check", "--json", "--cpus", "11", "--allow", "all"]);
    assert_status(&all, 0);
    assert!(findings_of(&all).iter().all(|x| x["severity"] == "info"));
    let bad = at(&m, &["--check", "--allow", "nosuch-*"]);
    assert_status(&bad, 125);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("\"nosuch-*\" names no finding code"));
}

/// The policy file: its allow list is honoured and `--show` names it; an
/// unknown key is refused naming file and line; a named file that is
/// missing is refused (never fail open).
#[test]
fn policy_file_is_honoured_shown_and_never_ignored() {
    let m = machine("nto/bare-metal-worker1.internal");
    let dir = tempdir();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "allow = [\"all\"]\n").unwrap();
    let out = pinrun()
        .env("PINRUN_CONFIG", &good)
        .arg("--sysroot")
        .arg(&m)
        .args(["--check", "--json", "--cpus", "11"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let show = pinrun()
        .env("PINRUN_CONFIG", &good)
        .arg("--sysroot")
        .arg(&m)
        .args(["--show", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(v["policy_file"], good.display().to_string());
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "strict = true\n\nalow = [\"all\"]\n").unwrap();
    let out = pinrun()
        .env("PINRUN_CONFIG", &bad)
        .args(["--sysroot"])
        .arg(&m)
        .arg("--check")
        .output()
        .unwrap();
    assert_status(&out, 125);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml: line 3:") && err.contains("alow"),
        "{err}"
    );
    let out = pinrun()
        .env("PINRUN_CONFIG", dir.path().join("missing.toml"))
        .args(["--sysroot"])
        .arg(&m)
        .arg("--check")
        .output()
        .unwrap();
    assert_status(&out, 125);
    // A file of the XDG location is found without PINRUN_CONFIG.
    std::fs::create_dir_all(dir.path().join("xdg/pinrun")).unwrap();
    std::fs::write(
        dir.path().join("xdg/pinrun/config.toml"),
        "allow = [\"irq-*\"]\n",
    )
    .unwrap();
    let out = pinrun()
        .env_remove("PINRUN_CONFIG")
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .arg("--sysroot")
        .arg(&m)
        .args(["--check", "--json", "--cpus", "11"])
        .output()
        .unwrap();
    let f = findings_of(&out);
    assert!(
        f.iter()
            .filter(|x| x["code"] == "irq-on-cpu")
            .all(|x| x["severity"] == "info")
    );
}

/// An unknown short option of numactl/taskset/chrt gets pinrun's option,
/// not "use '-- -p'" (which would run -p as the command).
#[test]
fn peer_short_options_get_pinruns_option() {
    for (arg, want) in [
        ("-p", "--preferred"),
        ("-l", "--localalloc"),
        ("-b", "--batch"),
    ] {
        let out = pinrun().args([arg, "0", "true"]).output().unwrap();
        assert_status(&out, 125);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(want) && !err.contains("use '--"),
            "{arg}: {err}"
        );
    }
}

/// The output of `sh -c SCRIPT` run under `prefix` (a peer tool or
/// pinrun), with the shell's PID replaced by PID.
fn run_under(prefix: &[&str], script: &str, pinrun_bin: bool) -> String {
    let mut cmd = if pinrun_bin {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinrun"));
        c.env("PINRUN_CONFIG", "").args(prefix);
        c
    } else {
        let mut c = std::process::Command::new(prefix[0]);
        c.args(&prefix[1..]);
        c
    };
    let out = cmd.args(["sh", "-c", script]).output().unwrap();
    assert!(
        out.status.success(),
        "{prefix:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// taskset's and numactl's CPU options: the same Cpus_allowed_list as the
/// original tool run the same way.
#[test]
fn cpu_aliases_match_taskset_and_numactl() {
    let script = "grep Cpus_allowed_list /proc/self/status";
    let cpu = "0";
    let want = run_under(&["taskset", "-c", cpu], script, false);
    for alias in [
        ["-c", cpu],
        ["-C", cpu],
        ["--cpu-list", cpu],
        ["--physcpubind", cpu],
    ] {
        let mut args = vec!["-q"];
        args.extend(alias);
        args.push("--");
        assert_eq!(run_under(&args, script, true), want, "{alias:?}");
    }
    if std::process::Command::new("numactl")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("numactl is not installed (apt-get install numactl)");
        return;
    }
    let want = run_under(&["numactl", "--physcpubind", cpu], script, false);
    assert_eq!(
        run_under(&["-q", "--physcpubind", cpu, "--"], script, true),
        want
    );
    let want = run_under(
        &["numactl", "--cpunodebind", "0", "--membind", "0"],
        "grep -E 'Cpus_allowed_list|Mems_allowed_list' /proc/self/status; grep -m1 -o 'bind:[0-9,-]*' /proc/self/numa_maps",
        false,
    );
    let got = run_under(
        &["-q", "-N", "0", "-m", "0", "--"],
        "grep -E 'Cpus_allowed_list|Mems_allowed_list' /proc/self/status; grep -m1 -o 'bind:[0-9,-]*' /proc/self/numa_maps",
        true,
    );
    assert_eq!(got, want);
}

/// chrt's options: the same `chrt -p` report as chrt run the same way
/// (root: SCHED_FIFO needs CAP_SYS_NICE or an RLIMIT_RTPRIO).
#[test]
fn sched_aliases_match_chrt() {
    if !is_root() {
        skip("SCHED_FIFO needs root here");
        return;
    }
    let script = "chrt -p $$ | sed 's/pid [0-9]*/pid PID/'";
    let want = run_under(&["chrt", "-f", "-R", "10"], script, false);
    assert_eq!(
        run_under(&["-q", "-f", "10", "-R", "--"], script, true),
        want
    );
    let want = run_under(&["chrt", "-r", "5"], script, false);
    assert_eq!(run_under(&["-q", "-r", "5", "--"], script, true), want);
}

/// On this machine, a default real-time launch prints at most 2 lines on
/// stderr of at most 160 characters each (issue 31): the CPUs chosen when
/// the rule moved away from the lowest-numbered ones, then the warnings
/// and notices counted by code. Here the rule takes CPU 1, not CPU 0 (the
/// boot CPU, which the host keeps for housekeeping), and the first line
/// says so.
#[test]
fn live_rt_launch_says_at_most_two_short_lines() {
    if !is_root() {
        skip("SCHED_FIFO needs root here");
        return;
    }
    let out = pinrun()
        .env("PINRUN_CONFIG", "")
        .args(["--node", "0", "--cores", "1", "--fifo", "10", "--", "true"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().count() <= 2, "{err}");
    assert!(err.lines().all(|l| l.chars().count() <= 160), "{err}");
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    if online.trim() == "0-1" {
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with("pinrun: chose CPU 1 by the quietest rule (--fifo), not CPU 0"),
            "{err}"
        );
    }
}

/// `--json` works in every printing mode and is refused, with the reason,
/// where it cannot: `--emit` and a launch (exit 125, the error as JSON).
#[test]
fn json_is_refused_with_a_reason_where_it_cannot_apply() {
    for (args, why) in [
        (
            &["--json", "--emit", "systemd", "--cpus", "0"][..],
            "--emit prints unit directives",
        ),
        (
            &["--json", "--cpus", "0", "true"][..],
            "a launch prints nothing to parse",
        ),
    ] {
        let out = pinrun().args(args).output().unwrap();
        assert_status(&out, 125);
        let v: Value = serde_json::from_slice(&out.stdout).expect("the error as JSON");
        assert!(v["error"]["message"].as_str().unwrap().contains(why), "{v}");
        assert!(
            v["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("--dry-run --json")
        );
    }
}

/// Small texts: each pinrun(1) section name once; `--help` names where
/// CLAIMS is and every duration unit the parser takes; a missing path is
/// not told to "give a path"; taskset's `MASK COMMAND` form is recognised.
#[test]
fn small_texts_say_what_is_true() {
    let man = pinrun().args(["--generate", "man"]).output().unwrap();
    let man = String::from_utf8_lossy(&man.stdout);
    let mut sections: Vec<&str> = man.lines().filter_map(|l| l.strip_prefix(".SH ")).collect();
    let n = sections.len();
    sections.sort_unstable();
    sections.dedup();
    assert_eq!(sections.len(), n, "a section name twice: {sections:?}");
    let help = pinrun().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(!help.contains("CLAIMS below") && help.contains("CLAIMS in pinrun(1)"));
    // parse_duration takes m and h (test cli::tests::durations).
    assert!(help.contains("ns, us, ms, s, m, h"), "{help}");
    let out = pinrun().args(["./nosuch-pinrun-test"]).output().unwrap();
    assert_status(&out, 127);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("check the path") && !err.contains("give a path"),
        "{err}"
    );
    let out = pinrun().args(["0x3", "true"]).output().unwrap();
    assert_status(&out, 127);
    assert!(String::from_utf8_lossy(&out.stderr).contains("pinrun --cpus 0-1 -- true"));
}

/// `--housekeeping` on nto/bare-metal-worker1 (isolcpus=managed_irq,0-4,11-79
/// nohz_full=0-4,11-79): the CPUs tuned computed for the same machine in
/// its command line, tuned.non_isolcpus=000007e0 (and
/// systemd.cpu_affinity=5,6,7,8,9,10): 5-10.
#[test]
fn housekeeping_is_what_tuned_says_is_not_isolated() {
    let v = dry_json(
        "nto/bare-metal-worker1.internal",
        &["--dry-run", "--housekeeping"],
    );
    assert_eq!(v["cpulist"], "5-10");
    let out = at(
        machine("nto/bare-metal-worker1.internal"),
        &["--dry-run", "--housekeeping", "--cpus", "4-5"],
    );
    assert_status(&out, 125);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--housekeeping: CPU 4 is"));
}

/// numactl's list forms (`all`, `!LIST`, `+LIST`) give the affinity and
/// mempolicy numactl gives, run the same way.
#[test]
fn list_forms_match_numactl() {
    if std::process::Command::new("numactl")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("numactl is not installed (apt-get install numactl)");
        return;
    }
    let script = "grep Cpus_allowed_list /proc/self/status";
    for form in ["all", "!0", "+0", "+1"] {
        let want = std::process::Command::new("numactl")
            .arg(format!("--physcpubind={form}"))
            .args(["sh", "-c", script])
            .output()
            .unwrap();
        if !want.status.success() {
            continue; // a form this machine cannot take (+1 on one CPU)
        }
        let got = run_under(&["-q", "--cpus", form, "--"], script, true);
        assert_eq!(got, String::from_utf8_lossy(&want.stdout), "{form}");
    }
    let maps = "grep -m1 -o 'bind:[0-9,-]*' /proc/self/numa_maps";
    let want = run_under(&["numactl", "--membind=all"], maps, false);
    assert_eq!(run_under(&["-q", "--membind=all", "--"], maps, true), want);
}

/// One finding per problem for the variables too: two OpenMP binding
/// variables are one env-thread-binding finding, each in `items`.
#[test]
fn binding_variables_are_one_finding() {
    let out = pinrun()
        .env("OMP_PROC_BIND", "true")
        .env("GOMP_CPU_AFFINITY", "0-3")
        .args(["--dry-run", "--json", "--cpus", "0"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let f = findings_of(&out);
    let env: Vec<&Value> = f
        .iter()
        .filter(|x| x["code"] == "env-thread-binding")
        .collect();
    assert_eq!(env.len(), 1, "{f:?}");
    let mut items: Vec<&str> = env[0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap())
        .collect();
    items.sort_unstable();
    assert_eq!(items, ["GOMP_CPU_AFFINITY=0-3", "OMP_PROC_BIND=true"]);
}

/// An I/O failure is said in pinrun's words (the errno's description and
/// name, as strerror(3) and errno(3) give them), never Rust's "(os error
/// N)": a missing dump, a configuration file that is a directory (read(2)
/// gives EISDIR), a dump written into a missing directory.
#[test]
fn io_failures_name_the_errno_not_rusts_os_error() {
    let dir = tempfile::tempdir().unwrap();
    type Case<'a> = (Vec<String>, Vec<(&'a str, String)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec![
                "--sysroot".into(),
                "/nonexistent-pinrun-dump".into(),
                "--show".into(),
            ],
            vec![],
            "pinrun: --sysroot: /nonexistent-pinrun-dump: No such file or directory (ENOENT)\n",
        ),
        (
            vec![
                "--dry-run".into(),
                "--cpus".into(),
                "0".into(),
                "--".into(),
                "true".into(),
            ],
            vec![("PINRUN_CONFIG", dir.path().display().to_string())],
            "Is a directory (EISDIR)",
        ),
    ];
    for (args, env, want) in cases {
        let mut cmd = pinrun();
        cmd.args(&args);
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
}

/// A command-line mistake's hint names the options involved and what each
/// does (their `--help` line), not only "see pinrun --help": two policies
/// at once (chrt takes one), a mode pair, a missing value.
#[test]
fn usage_errors_explain_the_options_they_name() {
    for (args, hint) in [
        (
            &["--fifo", "10", "--rr", "5", "--", "true"][..],
            "hint: use only one: --fifo <PRIO>: SCHED_FIFO with priority PRIO (1-99); --rr <PRIO>: SCHED_RR with priority PRIO (1-99)\n",
        ),
        (
            &["--dry-run", "--check"][..],
            "hint: use only one: --dry-run: print the plan and findings, change nothing, run nothing; --check: print findings only; exit 0 when clean, 1 when not\n",
        ),
        (
            &["--cpus", "0", "--fifo", "--", "true"][..],
            "hint: --fifo <PRIO>: SCHED_FIFO with priority PRIO (1-99)\n",
        ),
    ] {
        let out = pinrun().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.ends_with(hint), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 2, "{args:?}: {err}");
    }
}

/// A policy file that is not a regular file is refused at once, as a
/// directory is: a FIFO without a writer (open(2) would wait for one, and
/// the launch with it) and a character device (/dev/zero: endless bytes).
#[test]
fn a_policy_file_that_is_a_fifo_or_device_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("config.toml");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) of a path in our own temporary directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (path, kind) in [
        (fifo.display().to_string(), "a FIFO"),
        ("/dev/zero".to_string(), "a character device"),
    ] {
        let out = pinrun()
            .args(["--quiet", "--cpus", "0", "--", "true"])
            .env("PINRUN_CONFIG", &path)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{path}: {err}");
        assert!(
            err.starts_with(&format!(
                "pinrun: policy file {path}: not a regular file ({kind}): not a pinrun policy file\n"
            )),
            "{path}: {err}"
        );
    }
}

/// Issue 37, items 1-3: the habits numactl, taskset and chrt users bring
/// get the exact pinrun command, or what the option means here, never
/// clap's generic advice ("to pass '--all-tasks' as a value") or a wrong
/// suggestion ('--physcpubind' for numactl's --cpubind, '--allow' for
/// --all). Each row: the arguments, the exit status, and the hint line.
#[test]
fn peer_tool_habits_get_the_pinrun_command() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let online = online.trim();
    let ff = format!(
        "hint: ff looks like taskset's hexadecimal mask, whose CPUs here are {online}: write --cpus {online}"
    );
    let rows: &[(&[&str], i32, &str)] = &[
        // taskset MASK COMMAND: the mask is hexadecimal (1 is CPU 0); the
        // list reading second.
        (
            &["1", "true"],
            127,
            "hint: taskset's MASK form: taskset reads 1 as a hexadecimal mask: pinrun --cpus 0 -- true (as a list, as taskset -c reads it: pinrun --cpus 1 -- true)",
        ),
        (
            &["0-1", "true"],
            127,
            "hint: taskset -c's list form: pinrun takes the CPUs as an option: pinrun --cpus 0-1 -- true",
        ),
        // A mask of no CPU here: said, and no command that would fail.
        (
            &["0x10000000,00000000,00000000,00000000", "true"],
            127,
            "hint: taskset's MASK form: 0x10000000,00000000,00000000,00000000 is CPU 124, not online here (CPUs ONLINE)",
        ),
        (&["--cpus", "ff", "true"], 125, ff.as_str()),
        // taskset -p MASK PID.
        (
            &["--pid", "0x1", "1234"],
            125,
            "hint: taskset's -p MASK PID form: pinrun --pid 1234 --cpus 0 (every thread of the process; --tid TID for one)",
        ),
        (
            &["-p", "03", "700"],
            125,
            "hint: taskset's -p MASK PID form: pinrun --pid 700 --cpus 0-1 (every thread of the process; --tid TID for one)",
        ),
        (
            &["--all-tasks", "--pid", "1"],
            125,
            "hint: taskset --all-tasks and chrt --all-tasks are pinrun --pid PID, which changes every thread of the process (--tid TID: one thread)",
        ),
        (
            &["--hardware"],
            125,
            "hint: numactl --hardware is pinrun --show (--show --json for a script)",
        ),
        (
            &["--cpubind", "0", "true"],
            125,
            "hint: numactl's --cpubind is the old name of --cpunodebind: pinrun --cpunodebind 0 true",
        ),
        (
            &["--cpubind=0", "--", "sh", "-c", "x y"],
            125,
            "hint: numactl's --cpubind is the old name of --cpunodebind: pinrun --cpunodebind=0 -- sh -c 'x y'",
        ),
        (
            &["--max"],
            125,
            "hint: chrt --max: the real-time priorities are 1 to 99 (SCHED_FIFO, SCHED_RR; sched_get_priority_max(2)); pinrun --check --fifo 99 says what this process may use",
        ),
        (
            &["-m", "./app"],
            125,
            "hint: -m took './app' as its node list: write --membind=NODES, or put -- before the command",
        ),
    ];
    for (args, status, hint) in rows {
        let out = pinrun().args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*status), "{args:?}: {err}");
        let hint = hint.replace("ONLINE", online);
        assert_eq!(err.lines().nth(1), Some(hint.as_str()), "{args:?}: {err}");
    }
    for opt in ["--all", "--balancing", "--touch", "--shm", "--huge"] {
        let out = pinrun().arg(opt).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.lines()
                .nth(1)
                .is_some_and(|h| h.starts_with("hint: numactl")),
            "{opt}: {err}"
        );
    }
    // Two options that cannot be used together: what each is for.
    let out = pinrun()
        .args(["--probe", "--deadline", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hint: use only one: --probe[=<DURATION>]: measure the noise"),
        "{err}"
    );
}

/// Issue 37, item 6: `--dry-run` on a planning host without the program
/// shows the plan, then the verdict on the command (exit 127).
#[test]
fn a_dry_run_shows_the_plan_before_the_missing_command() {
    let out = pinrun()
        .args([
            "--dry-run",
            "--json",
            "--cpus",
            "0",
            "--",
            "no-such-program-here",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the plan on stdout");
    assert_eq!(v["cpus"], serde_json::json!([0]));
    // One JSON document: the plan, with the command's error in it.
    assert_eq!(v["error"]["code"], "command-not-found", "{v}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("pinrun: no-such-program-here: command not found"),
    );
}

/// Issue 37, item 5: `-h` is one screen (at most 40 lines at 80 columns,
/// none wider) with the options people use most and where the rest is;
/// `--help` keeps every option with its whole text (219 and 349 lines
/// before, for 70+ options).
#[test]
fn short_help_fits_a_screen_and_long_help_keeps_everything() {
    let short = pinrun().env("COLUMNS", "80").arg("-h").output().unwrap();
    assert_status(&short, 0);
    let short = String::from_utf8_lossy(&short.stdout);
    let lines: Vec<&str> = short.lines().collect();
    assert!(lines.len() <= 40, "{} lines:\n{short}", lines.len());
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{short}");
    for opt in [
        "--cpus",
        "--node",
        "--cores",
        "--fifo",
        "--membind",
        "--exclusive",
        "--dry-run",
        "--check",
        "--show",
        "--pid",
    ] {
        assert!(short.contains(opt), "{opt}: {short}");
    }
    assert!(!short.contains("--steer-irqs"), "{short}");
    assert!(
        lines
            .last()
            .unwrap()
            .ends_with("more options: pinrun --help; every rule: pinrun(1)")
    );
    let long = pinrun().arg("--help").output().unwrap();
    let long = String::from_utf8_lossy(&long.stdout);
    for opt in [
        "--steer-irqs",
        "--thread-map",
        "--probe-mode",
        "--sched-runtime",
        "--dump",
    ] {
        assert!(long.contains(opt), "{opt}");
    }
    assert!(long.contains("CHOOSING CORES"), "the whole --cores text");
}
