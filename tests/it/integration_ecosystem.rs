//! systemd and container use: the example unit's ExecStart= plans on real
//! dumps; exec in place keeps the PID and NOTIFY_SOCKET; `--emit systemd`
//! prints the equivalent directives; inside a container's cpuset pinrun
//! plans within it and names the cgroup when a request falls outside.

use crate::common;
use common::{at, ids, machine, pinrun};
use serde_json::Value;

fn unit_exec_start() -> Vec<String> {
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/systemd/trading-engine.service"
    ))
    .unwrap();
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    line.split_whitespace().map(String::from).collect()
}

/// The unit's pinrun options plan on a 2-socket SMT machine (nto worker) as
/// they say: two whole cores of node 0, bound to node 0, SCHED_FIFO 50.
#[test]
fn example_unit_options_plan_on_a_real_machine() {
    let words = unit_exec_start();
    assert_eq!(words[0], "/usr/local/bin/pinrun");
    let sep = words.iter().position(|w| w == "--").unwrap();
    let mut opts: Vec<&str> = words[1..sep]
        .iter()
        .map(String::as_str)
        .filter(|w| *w != "--strict")
        .collect();
    opts.extend(["--dry-run", "--json"]);
    let m = machine("nto/bare-metal-worker1.internal");
    let out = pinrun()
        .arg("--sysroot")
        .arg(&m)
        .args(&opts)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&v["nodes"]), vec![0]);
    assert_eq!(ids(&v["memory"]["nodes"]), vec![0]);
    assert_eq!(v["sched"]["policy"], "fifo");
    assert_eq!(v["cores"].as_array().unwrap().len(), 2);
    // Each chosen CPU is the lowest thread of a core whose siblings the dump lists.
    for core in v["cores"].as_array().unwrap() {
        let cpus = ids(&core["cpus"]);
        let t = std::fs::read_to_string(m.join(format!(
            "sys/devices/system/cpu/cpu{}/topology/thread_siblings_list",
            cpus[0]
        )))
        .unwrap();
        assert_eq!(
            pinrun::cpuset::CpuSet::parse_sysfs_list(&t, None)
                .unwrap()
                .to_vec(),
            cpus
        );
    }
}

/// Type=notify works because the PID and NOTIFY_SOCKET survive the exec.
#[test]
fn notify_socket_and_pid_survive() {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pinrun"))
        .env("NOTIFY_SOCKET", "/run/systemd/notify")
        .args(["--cpus", "0", "--", "sh", "-c", "echo $$ $NOTIFY_SOCKET"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{pid} /run/systemd/notify\n")
    );
}

#[test]
fn emit_systemd_directives() {
    let m = machine("nto/bare-metal-worker1.internal");
    let out = at(
        &m,
        &[
            "--emit",
            "systemd",
            "--cpus",
            "2,4",
            "--rr",
            "20",
            "--nice",
            "-5",
            "--interleave=0,1",
            "--reset-on-fork",
        ],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let directives: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        directives,
        vec![
            "[Service]",
            "CPUAffinity=2 4",
            "NUMAPolicy=interleave",
            "NUMAMask=0-1",
            "CPUSchedulingPolicy=rr",
            "CPUSchedulingPriority=20",
            "CPUSchedulingResetOnFork=yes",
            "Nice=-5",
        ]
    );
    let out = at(
        &m,
        &[
            "--emit",
            "systemd",
            "--deadline",
            "--sched-runtime",
            "1ms",
            "--sched-period",
            "10ms",
        ],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("# SCHED_DEADLINE (runtime 1000000ns, deadline 10000000ns, period 10000000ns) has no systemd directive"));
}

/// `--emit systemd` refuses a command `ExecStart=` would run differently
/// (systemd.service(5), COMMAND LINES): a leading prefix character, a
/// relative path, bytes that are not UTF-8; an absolute path or a bare name
/// is written as given.
#[test]
fn emit_refuses_commands_exec_start_cannot_name() {
    use std::os::unix::ffi::OsStrExt;
    let m = machine("nto/bare-metal-worker1.internal");
    let nonutf8 = std::ffi::OsStr::from_bytes(b"\xff\xfe");
    for (cmd, why) in [
        (
            vec![std::ffi::OsStr::new("-/bin/echo")],
            "systemd reads the leading '-' of -/bin/echo as an ExecStart= prefix, not as part of the command",
        ),
        (
            vec![std::ffi::OsStr::new("@/bin/echo")],
            "systemd reads the leading '@' of @/bin/echo as an ExecStart= prefix, not as part of the command",
        ),
        (
            vec![std::ffi::OsStr::new("./app")],
            "./app is a relative path; ExecStart= takes an absolute path or a bare name on systemd's PATH",
        ),
        (
            vec![std::ffi::OsStr::new("/bin/echo"), nonutf8],
            "\u{fffd}\u{fffd} is not UTF-8, which ExecStart= cannot carry",
        ),
    ] {
        let out = pinrun()
            .arg("--sysroot")
            .arg(&m)
            .args(["--emit", "systemd", "--cpus", "1", "--"])
            .args(&cmd)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.lines().next().unwrap(),
            format!("pinrun: --emit systemd: {why}")
        );
        assert!(out.stdout.is_empty());
    }
    for cmd in ["/usr/bin/app", "app"] {
        let out = at(&m, &["--emit", "systemd", "--cpus", "1", "--", cmd, "-x"]);
        assert_eq!(out.status.code(), Some(0), "{cmd}");
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l == format!("ExecStart={cmd} -x")),
            "{cmd}"
        );
    }
}

fn container(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut all: Vec<(String, String)> = vec![
        ("sys/devices/system/cpu/online".into(), "0-7\n".into()),
        (
            "sys/devices/system/node/node0/cpulist".into(),
            "0-7\n".into(),
        ),
    ];
    for c in 0..8 {
        all.push((
            format!("sys/devices/system/cpu/cpu{c}/topology/core_cpus_list"),
            format!("{c}\n"),
        ));
    }
    all.extend(files.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    for (p, t) in all {
        common::write_file(dir.path(), &p, &t);
    }
    dir
}

/// `docker run --cpuset-cpus 2-3` on cgroup v2 with a cgroup namespace: the
/// container sees itself at "/" and its cpuset at /sys/fs/cgroup.
#[test]
fn docker_cpuset_cpus_v2() {
    let t = container(&[
        ("proc/self/cgroup", "0::/\n"),
        (
            "proc/self/mountinfo",
            "600 590 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n",
        ),
        ("sys/fs/cgroup/cpuset.cpus.effective", "2-3\n"),
        ("proc/self/status", "Cpus_allowed_list:\t2-3\n"),
    ]);
    let out = at(t.path(), &["--dry-run", "--json", "--cores", "2"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&v["cpus"]), vec![2, 3]);
    let out = at(t.path(), &["--dry-run", "--cpus", "0"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "CPU 0 is outside the cpuset of cgroup /: /sys/fs/cgroup/cpuset.cpus.effective = 2-3"
    ));
}

/// A Kubernetes pod with the static CPU manager on cgroup v1, no cgroup
/// namespace: the container's cpuset is bind-mounted with its own root.
#[test]
fn kubernetes_static_cpu_manager_v1() {
    let cg = "/kubepods/pod1234/abcdef";
    let t = container(&[
        (
            "proc/self/cgroup",
            &format!("5:cpuset:{cg}\n4:cpu,cpuacct:{cg}\n"),
        ),
        (
            "proc/self/mountinfo",
            &format!("700 690 0:31 {cg} /sys/fs/cgroup/cpuset ro - cgroup cgroup rw,cpuset\n"),
        ),
        ("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "4-7\n"),
    ]);
    let out = at(t.path(), &["--dry-run", "--json", "--cores", "1"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&v["cpus"]), vec![4]);
    let out = at(t.path(), &["--dry-run", "--cores", "5"]);
    assert_eq!(out.status.code(), Some(125));
    let out = at(t.path(), &["--dry-run", "--cpus", "1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!(
        "outside the cpuset of cgroup {cg}: /sys/fs/cgroup/cpuset/cpuset.effective_cpus = 4-7"
    )));
}

/// `unshare -C` under a cgroup whose cpuset is CPU 0, with the host's
/// cgroupfs still mounted: mountinfo shows the mount's root as `/..` (above
/// the namespace) and /proc/self/cgroup says `/`. The caller's cpuset
/// cannot be located there, so the root cgroup's 0-7 must not be taken:
/// the allowed CPUs are Cpus_allowed_list, and CPU 1 is refused before
/// anything is applied (a break test found the root cgroup's files read,
/// and a bare EINVAL from sched_setaffinity at launch). Likewise a cgroup
/// path with `..` (a cgroup outside the namespace).
#[test]
fn cgroup_namespace_above_the_mount_is_not_read() {
    for (cgroup, mount_root) in [("/", "/.."), ("/../x", "/")] {
        let t = container(&[
            ("proc/self/cgroup", &format!("5:cpuset:{cgroup}\n")),
            (
                "proc/self/mountinfo",
                &format!(
                    "31 25 0:28 {mount_root} /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
                ),
            ),
            ("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-7\n"),
            ("sys/fs/cgroup/cpuset/x/cpuset.effective_cpus", "0-7\n"),
            ("proc/self/status", "Cpus_allowed_list:\t0\n"),
        ]);
        let out = at(t.path(), &["--dry-run", "--cpus", "1"]);
        assert_eq!(
            out.status.code(),
            Some(125),
            "{cgroup} {mount_root}: {out:?}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("CPU 1"), "{err}");
        let out = at(t.path(), &["--dry-run", "--json", "--cores", "1"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(ids(&v["cpus"]), vec![0], "{cgroup} {mount_root}");
    }
}

/// Affinity inside one's own cpuset needs no privilege: an unprivileged
/// user (setpriv, util-linux) places a command without CAP_SYS_NICE.
#[test]
fn unprivileged_placement_needs_no_capability() {
    // A nice value above the tests' own (they may run under `nice`): an
    // unprivileged user may only lower its priority.
    let own = common::stat_field(&std::fs::read_to_string("/proc/self/stat").unwrap(), 19);
    let nice = (own + 3).min(19).to_string();
    let Some(out) = common::as_nobody(&[
        "--cpus",
        "0",
        "--nice",
        &nice,
        "--",
        "grep",
        "-E",
        "Cpus_allowed_list|CapEff",
        "/proc/self/status",
    ]) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("CapEff:\t0000000000000000"), "{text}");
    assert!(text.contains("Cpus_allowed_list:\t0"), "{text}");
    // A real-time policy is refused up front, naming both fixes.
    let out = common::as_nobody(&["--fifo", "10", "--", "true"]).unwrap();
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exceeds RLIMIT_RTPRIO 0, and CAP_SYS_NICE is missing")
            && err.contains("LimitRTPRIO="),
        "{err}"
    );
}

/// `--emit` describes what systemd will do as root: an unprivileged caller
/// gets the directives (no RLIMIT_RTPRIO refusal), and the command becomes
/// ExecStart=.
#[test]
fn emit_ignores_the_callers_own_limits() {
    let Some(out) = common::as_nobody(&[
        "--emit",
        "systemd",
        "--cpus",
        "0",
        "--fifo",
        "40",
        "--",
        "/usr/bin/app",
        "-x",
    ]) else {
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CPUSchedulingPriority=40\n") && text.contains("ExecStart=/usr/bin/app -x\n"),
        "{text}"
    );
}

/// `--check-emitted` reads a unit's first `ExecStart=` word as systemd
/// does (`extract_first_word()` with `EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE`,
/// systemd.service(5) "COMMAND LINES"): quotes anywhere in a word, C
/// escapes quoted or not, `%%`; an unterminated quote, an unknown escape
/// or a NUL is no word. It was the inverse of `--emit systemd`'s quoting
/// only for `\"` and `\\`: `\n` read as `n`, `\x01` as `x01`. Break
/// test (systemd 252's `systemd-analyze verify`): `$$` is not `$` in the
/// executable's path, `\;` and a control character are refused, a
/// no-break space or a vertical tab ends no word; `--emit systemd` wrote a
/// `$` in the path as `$$` (a path systemd does not find). Now the
/// inverse of the path's quoting for every name systemd takes.
#[test]
fn exec_start_first_word_is_read_as_systemd_reads_it() {
    use pinrun::fleet::plan::systemd_first_word as first;
    let cases: &[(&str, Option<&str>)] = &[
        ("  /usr/bin/app -x", Some("/usr/bin/app")),
        ("\"foo\\\"bar\" rest", None),
        ("\"/tmp/no/a'b\" c", None),
        ("/tmp/no/a\\\\ c", None),
        ("'foo bar' x", Some("foo bar")),
        ("foo\"bar baz\"qux x", Some("foobar bazqux")),
        ("a\\x20b", Some("a b")),
        ("\\u00e4", Some("\u{e4}")),
        ("\\101", Some("A")),
        ("a\\sb", Some("a b")),
        // systemd 252 (`systemd-analyze verify` on a unit with each line):
        // an executable name with a control character is refused, `\;` is
        // an unknown escape, `$$` stays in the path (no variable is
        // expanded there), a quote or a backslash in the name is refused, a no-break space or a vertical tab ends no word.
        ("\"a\\nb\\tc\"", None),
        ("\"/tmp/no/a\\x7fb\"", None),
        ("\\; x", None),
        ("%%h/$$HOME", Some("%h/$$HOME")),
        ("/tmp/no/a${X}b", Some("/tmp/no/a${X}b")),
        ("/tmp/no/a\u{a0}b c", Some("/tmp/no/a\u{a0}b")),
        ("/tmp/no/a\u{b}b c", None),
        ("/tmp/no/a\tb", Some("/tmp/no/a")),
        ("\"", None),
        ("'a b", None),
        ("a\\q", None),
        ("a\\x00", None),
        ("a\\x4", None),
        ("a\\", None),
    ];
    for (line, want) in cases {
        assert_eq!(first(line).as_deref(), *want, "{line:?}");
    }
    let config = proptest::test_runner::Config::with_cases(2000);
    proptest::proptest!(config, |(s in "[^\\x00]{0,12}|[\\x01-\\x1f \"'\\\\%$;a\\u{e4}]{0,12}")| {
        let w = pinrun::fleet::report::systemd_path_word(&s);
        let refused = |c: char| c < ' ' || matches!(c, '\u{7f}' | '\\' | '"' | '\'');
        let taken = (s != ";" && !s.chars().any(refused)).then(|| s.clone());
        proptest::prop_assert_eq!(first(&w), taken.clone(), "{:?}", w);
        proptest::prop_assert_eq!(first(&format!("{w} --next")), taken, "{:?}", w);
    });
}

/// ExecStart= words are quoted and escaped for systemd, and requests that
/// systemd cannot express keep pinrun itself as ExecStart=.
#[test]
fn emit_quotes_exec_start_and_keeps_pinrun_when_needed() {
    assert_eq!(
        pinrun::fleet::report::systemd_word("plain-arg"),
        "plain-arg"
    );
    assert_eq!(pinrun::fleet::report::systemd_word("a b"), "\"a b\"");
    assert_eq!(pinrun::fleet::report::systemd_word("$HOME"), "$$HOME");
    assert_eq!(
        pinrun::fleet::report::systemd_path_word("/opt/a$b"),
        "/opt/a$b"
    );
    assert_eq!(
        pinrun::fleet::report::systemd_path_word("/opt/%h"),
        "/opt/%%h"
    );
    assert_eq!(pinrun::fleet::report::systemd_word("%h"), "%%h");
    assert_eq!(pinrun::fleet::report::systemd_word("it's"), "\"it's\"");
    assert_eq!(pinrun::fleet::report::systemd_word("c\\"), "\"c\\\\\"");
    assert_eq!(
        pinrun::fleet::report::systemd_word("say \"hi\""),
        "\"say \\\"hi\\\"\""
    );
    assert_eq!(pinrun::fleet::report::systemd_word(";"), "\\;");
    assert_eq!(pinrun::fleet::report::systemd_word(""), "\"\"");
    let m = machine("nto/bare-metal-worker1.internal");
    let out = at(
        &m,
        &[
            "--emit",
            "systemd",
            "--cpus",
            "2",
            "--preferred-many",
            "0,1",
            "--",
            "/bin/app",
            "a b",
        ],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let exec = text.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
    assert!(
        exec.ends_with(" --cpus 2 --preferred-many 0,1 -- /bin/app \"a b\""),
        "{exec}"
    );
    assert!(
        !exec.contains("--emit") && !exec.contains("--sysroot"),
        "{exec}"
    );
}

/// docs/deploy.md's systemd recipes are the units and commands the VM
/// test `vm_systemd_pid1_units_run_pinrun_as_documented` runs under a real
/// systemd (vm/guest/systemd/units/): each file is a fenced block of the
/// page, byte for byte.
#[test]
fn deploy_md_systemd_recipes_are_the_vm_units() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/deploy.md")).unwrap();
    let mut names: Vec<_> = std::fs::read_dir(root.join("vm/guest/systemd/units"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for p in names {
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            doc.contains(&format!("\n```\n{text}```\n")),
            "docs/deploy.md has no fenced block equal to {}:\n{text}",
            p.display()
        );
    }
}

/// docs/deploy.md's Slurm recipe is the batch script the VM test
/// `vm_slurm_daemons_bind_and_pinrun_plans_inside` submits to a real
/// slurmctld/slurmd 22.05 (vm/guest/root-slurm/job/recipe.sbatch): a
/// fenced block of the page, byte for byte, with the fingerprint of the
/// guest's node type and the masks `--emit slurm` printed there.
#[test]
fn deploy_md_slurm_recipe_is_the_vm_job() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/deploy.md")).unwrap();
    let job = std::fs::read_to_string(root.join("vm/guest/root-slurm/job/recipe.sbatch")).unwrap();
    assert!(
        job.contains("srun --ntasks-per-node=4 --cpu-bind=verbose,map_cpu:0,2,4,6 -- \\\n     pinrun --fifo 50 --membind -- ./rank"),
        "{job}"
    );
    assert!(
        doc.contains(&format!("\n```bash\n{job}```\n")),
        "docs/deploy.md has no fenced block equal to vm/guest/root-slurm/job/recipe.sbatch:\n{job}"
    );
}
