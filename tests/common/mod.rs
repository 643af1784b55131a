//! Helpers shared by the integration tests: the binary, the machine dumps
//! (`tests/data/machines/<source>/<machine>.tar.gz`, unpacked on first use
//! into a temporary directory kept for the whole test binary), and parsers
//! for the peer tools' published expected outputs.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The archives: `tests/data/machines/<source>/<machine>.tar.gz`, each
/// holding `<machine>/` (the dump and the peers' expected outputs).
pub fn archives() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines")
}

/// `$PINRUN_FIXTURES` (a directory of unpacked dumps, `<source>/<machine>/`),
/// if set.
fn fixtures_override() -> Option<PathBuf> {
    std::env::var_os("PINRUN_FIXTURES")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// Sets the harness's number of test threads, unless `RUST_TEST_THREADS`
/// is set (`--test-threads` overrides both): twice the CPUs this process
/// may use (its affinity, as `std::thread::available_parallelism` reads
/// it), not once, as libtest would. A test binary whose tests spend much
/// of their time waiting for the processes they start (pinrun, `flock`,
/// FIFOs that must stay unopened, strace's injected delays) leaves a CPU
/// idle meanwhile with one thread per CPU: on a 2-CPU machine tests/it
/// took 32 s with 2 threads and 28 s with 4, tests/live 8.5 s and 6.3 s.
/// A binary opts in with an `.init_array` entry naming this function
/// (run by the C runtime before `main`, while the process has one
/// thread), as libtest reads the variable in `main`.
pub extern "C" fn two_threads_per_cpu() {
    if std::env::var_os("RUST_TEST_THREADS").is_none() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        // SAFETY: no other thread exists yet to read the environment.
        unsafe { std::env::set_var("RUST_TEST_THREADS", (2 * cpus).to_string()) };
    }
}

static UNPACKED: OnceLock<tempfile::TempDir> = OnceLock::new();

/// The world-readable copy of the binary ([`world_readable_copy`]).
static COPY: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();

/// Arranges, once per test process, that the per-process directories
/// ([`UNPACKED`], [`COPY`]) are removed when the test binary exits: a
/// static is never dropped, and the harness ends with `exit(3)`, which
/// runs the `atexit(3)` handlers. Without it every run left its copy of
/// the binary (about 80 MB) in the temporary directory.
fn remove_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    extern "C" fn remove() {
        if let Some(d) = UNPACKED.get() {
            let _ = std::fs::remove_dir_all(d.path());
        }
        if let Some((d, _)) = COPY.get() {
            let _ = std::fs::remove_dir_all(d.path());
        }
    }
    // SAFETY: registers a plain function without arguments.
    ONCE.call_once(|| unsafe {
        libc::atexit(remove);
    });
}

/// The temporary directory the archives are unpacked into (in /dev/shm if
/// possible, else the usual temporary directory), created on first use and
/// removed when the test binary exits ([`remove_at_exit`]).
fn unpacked() -> &'static Path {
    UNPACKED
        .get_or_init(|| {
            remove_at_exit();
            // tmpfs when there is one: 55 000 small files unpack and go
            // several times faster there than on a disk-backed /tmp.
            let b = tempfile::Builder::new().prefix("pinrun-machines-").clone();
            b.tempdir_in("/dev/shm")
                .or_else(|_| b.tempdir())
                .expect("temporary directory for the machine dumps")
        })
        .path()
}

/// Where the machine dumps are: `$PINRUN_FIXTURES`, else the directory the
/// archives are unpacked into (a dump is there, as `<source>/<machine>`,
/// once [`machine`] has unpacked it).
pub fn fixtures() -> PathBuf {
    match fixtures_override() {
        Some(p) => {
            assert!(
                p.is_dir(),
                "PINRUN_FIXTURES={} is not a directory",
                p.display()
            );
            p
        }
        None => unpacked().join("machines"),
    }
}

/// Unpacks `<archives>/<rel>.tar.gz` (holding the directory named as the
/// last part of `rel`) into `<unpacked>/<rel>`, once per test binary. Each
/// archive has its own lock, so test threads unpack different archives at
/// the same time and wait only for the one they need.
fn unpack(archives: &Path, rel: &str) -> PathBuf {
    static ARCHIVES: OncePer<PathBuf, ()> = Mutex::new(BTreeMap::new());
    let archive = archives.join(format!("{rel}.tar.gz"));
    let top = archives.file_name().expect("archive folder");
    let dest = unpacked().join(top).join(rel);
    once_per(&ARCHIVES, archive.clone(), || {
        let file = std::fs::File::open(&archive)
            .unwrap_or_else(|e| panic!("machine dump {}: {e}", archive.display()));
        let parent = dest.parent().expect("a folder above");
        std::fs::create_dir_all(parent).expect("mkdir");
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
        tar.set_preserve_mtime(false);
        tar.unpack(parent)
            .unwrap_or_else(|e| panic!("unpacking {}: {e}", archive.display()));
        assert!(
            dest.is_dir(),
            "{} does not hold {}/",
            archive.display(),
            dest.file_name().unwrap().to_string_lossy()
        );
    });
    dest
}

/// Values made once per test process, one per key: see [`once_per`].
pub type OncePer<K, V> = Mutex<BTreeMap<K, std::sync::Arc<OnceLock<V>>>>;

/// The value of `key` in `map`, made by `make` the first time it is asked
/// for in this test process. Each key has its own lock: threads asking for
/// different keys make them at the same time, a thread asking for a key
/// being made waits for that one only.
pub fn once_per<K: Ord, V: Clone>(map: &OncePer<K, V>, key: K, make: impl FnOnce() -> V) -> V {
    let once = map
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone();
    once.get_or_init(make).clone()
}

/// Every `.rs` file below `src/`, as (its path relative to `src/`, its
/// text), in a stable order: for the scans of pinrun's own code.
pub fn src_files() -> Vec<(String, String)> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![src.clone()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// What `scan` finds in every file of [`src_files`] but `skip` (a path
/// relative to `src/`), as `src/PATH:LINE: TEXT` lines; `scan` gives a
/// file's finds as (line number, text).
pub fn src_findings(skip: &str, scan: fn(&str) -> Vec<(usize, String)>) -> Vec<String> {
    src_files()
        .into_iter()
        .filter(|(rel, _)| rel != skip)
        .flat_map(|(rel, text)| {
            scan(&text)
                .into_iter()
                .map(move |(n, l)| format!("src/{rel}:{n}: {l}"))
        })
        .collect()
}

/// A field case of `tests/data/cases/<name>.tar.gz` (a small tree that
/// reproduces a reported fault; see its README.md), unpacked on first use.
pub fn field_case(name: &str) -> PathBuf {
    unpack(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/cases"),
        name,
    )
}

/// One machine dump (`<source>/<machine>`), unpacked on first use.
pub fn machine(rel: &str) -> PathBuf {
    let p = match fixtures_override() {
        Some(root) => root.join(rel),
        None => unpack(&archives(), rel),
    };
    assert!(p.is_dir(), "machine dump {} missing", p.display());
    p
}

/// Every machine of a fixture source (skipping `_`-prefixed extras such as
/// `nto/_ppc-expected-profiles`), as `<source>/<machine>`.
pub fn machines(source: &str) -> Vec<String> {
    let names: Vec<String> = match fixtures_override() {
        Some(root) => std::fs::read_dir(root.join(source))
            .expect("fixture source")
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        None => std::fs::read_dir(archives().join(source))
            .unwrap_or_else(|e| panic!("{}: {e}", archives().join(source).display()))
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".tar.gz")
                    .map(String::from)
            })
            .collect(),
    };
    let mut v: Vec<String> = names
        .into_iter()
        .filter(|n| !n.starts_with('_'))
        .map(|n| format!("{source}/{n}"))
        .collect();
    v.sort();
    v
}

/// Every machine dump of every fixture source (91 machines).
pub fn all_machines() -> Vec<String> {
    [
        "cadvisor",
        "cri-resource-manager",
        "ghw",
        "hwloc",
        "iree",
        "nri-plugins",
        "nto",
        "util-linux",
        "util-linux-chcpu",
        "util-linux-historical",
    ]
    .into_iter()
    .flat_map(machines)
    .collect()
}

/// A temporary directory for a sysroot tree a test writes: on /dev/shm
/// when there is one (thousands of small files are written and removed
/// several times faster on tmpfs), else the usual temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("temporary directory")
}

/// Says on the terminal that the running test is skipped and why: written
/// to the standard error itself, which the harness does not capture (it
/// captures `eprintln!`, shown only for a failure). The test then returns,
/// and is counted as passed: the harness has no run-time skip.
pub fn skip(why: impl std::fmt::Display) {
    use std::io::Write;
    let t = std::thread::current();
    let name = t.name().unwrap_or("?");
    let _ = writeln!(std::io::stderr().lock(), "test {name}: SKIPPED: {why}");
}

/// Whether the tests run as root (real-time policies need it here).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

/// A copy of the pinrun binary in a world-readable directory (for tests
/// that run it as another user), made once per test process by `cp(1)`:
/// the test process never holds the copy open for writing, so a child
/// another test thread forks meanwhile cannot inherit that descriptor and
/// make the copy's exec fail with ETXTBSY ("Text file busy"), as
/// `std::fs::copy` in each test did. Removed when the test binary exits
/// ([`remove_at_exit`]).
pub fn world_readable_copy() -> &'static Path {
    use std::os::unix::fs::PermissionsExt;
    &COPY
        .get_or_init(|| {
            remove_at_exit();
            let tmp = tempfile::tempdir().unwrap();
            let copy = tmp.path().join("pinrun");
            let st = std::process::Command::new("cp")
                .arg(assert_cmd::cargo::cargo_bin("pinrun"))
                .arg(&copy)
                .status()
                .unwrap();
            assert!(st.success(), "cp: {st}");
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            (tmp, copy)
        })
        .1
}

/// Runs pinrun as user nobody with no capabilities (setpriv, util-linux),
/// from [`world_readable_copy`]; `None` when that cannot be done here (not
/// root, or no setpriv).
pub fn as_nobody(args: &[&str]) -> Option<std::process::Output> {
    if !std::path::Path::new("/usr/bin/setpriv").exists() || !is_root() {
        skip("needs root to drop to nobody, and setpriv");
        return None;
    }
    Some(
        std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
            ])
            .arg(world_readable_copy())
            .args(args)
            .output()
            .unwrap(),
    )
}

/// Writes `text` to `root/rel`, creating the directories on the way (for
/// the sysroot trees tests build).
pub fn write_file(root: &std::path::Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("a file below root")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// Field `n` (1-based, as in proc(5)) of a `/proc/<pid>/stat` line.
pub fn stat_field(stat: &str, n: usize) -> i64 {
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    rest.split_whitespace()
        .nth(n - 3)
        .expect("field")
        .parse()
        .expect("number")
}

/// Copies the tree `src` to `dst` (symlinks as symlinks).
pub fn copy_tree(src: &std::path::Path, dst: &std::path::Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let (from, to) = (e.path(), dst.join(e.file_name()));
        let ty = e.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from).unwrap(), &to).unwrap();
        } else if ty.is_dir() {
            copy_tree(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap();
        }
    }
}

/// Runs pinrun with `--sysroot root` and `args`, returning its output.
pub fn at(root: impl AsRef<std::path::Path>, args: &[&str]) -> std::process::Output {
    pinrun()
        .arg("--sysroot")
        .arg(root.as_ref())
        .args(args)
        .output()
        .expect("run pinrun")
}

/// Writes `files` (path below `root`, text), each of `extra` replacing the
/// file of the same path or added.
pub fn write_tree(
    root: &std::path::Path,
    mut files: Vec<(String, String)>,
    extra: &[(&str, &str)],
) {
    for (p, t) in extra {
        files.retain(|(q, _)| q != p);
        files.push((p.to_string(), t.to_string()));
    }
    for (p, t) in files {
        write_file(root, &p, &t);
    }
}

/// Runs `cmd` with its address space capped at `memory` bytes
/// (`RLIMIT_AS`, set in the child before exec) and killed after `timeout`:
/// a blow-up on hostile input fails the run (exit 134 or a signal)
/// instead of the machine.
pub fn run_capped(
    mut cmd: std::process::Command,
    memory: u64,
    timeout: std::time::Duration,
) -> std::process::Output {
    cap_memory(&mut cmd, memory);
    Command::from_std(cmd)
        .timeout(timeout)
        .output()
        .expect("run pinrun")
}

/// Asserts a process's exit status, showing its stderr when it differs.
pub fn assert_status(out: &std::process::Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The pinrun binary, with no policy file (`PINRUN_CONFIG=`): the tests'
/// outputs never depend on this machine's /etc/pinrun.toml or
/// ~/.config/pinrun/config.toml (tests of the policy file set their own).
pub fn pinrun() -> Command {
    let mut c = Command::cargo_bin("pinrun").expect("binary");
    c.env("PINRUN_CONFIG", "");
    c
}

/// Runs pinrun with `args` against the dump `rel`, expecting JSON on stdout
/// and exit 0.
pub fn dry_json(rel: &str, args: &[&str]) -> Value {
    let out = pinrun()
        .arg("--sysroot")
        .arg(machine(rel))
        .args(args)
        .arg("--json")
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{rel} {args:?}: exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

/// The messages of the findings with `code` in pinrun's JSON `v` (its
/// `findings` array), in order.
pub fn finding_messages(v: &Value, code: &str) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

/// A JSON array of numbers as a Vec.
pub fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_u64().expect("number") as u32)
        .collect()
}

/// One row of `lscpu --parse` (logical ids; `None` for `-`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LscpuRow {
    pub cpu: u32,
    pub core: Option<u32>,
    pub socket: Option<u32>,
    pub node: Option<u32>,
}

/// The first `lscpu --parse` section of `expected-lscpu.txt` (util-linux
/// `tests/expected/lscpu/lscpu-<machine>`), keyed by CPU.
pub fn lscpu_parse(rel: &str) -> BTreeMap<u32, LscpuRow> {
    let text = std::fs::read_to_string(machine(rel).join("expected-lscpu.txt"))
        .expect("expected-lscpu.txt");
    let mut lines = text.lines().skip_while(|l| !l.starts_with("# CPU,"));
    let header: Vec<&str> = lines
        .next()
        .expect("parse header")
        .trim_start_matches("# ")
        .split(',')
        .collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (c_core, c_sock, c_node) = (col("Core"), col("Socket"), col("Node"));
    let num = |f: &[&str], c: Option<usize>| c.and_then(|i| f.get(i)).and_then(|v| v.parse().ok());
    lines
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let row = LscpuRow {
                cpu: f[0].parse().expect("cpu"),
                core: num(&f, c_core),
                socket: num(&f, c_sock),
                node: num(&f, c_node),
            };
            (row.cpu, row)
        })
        .collect()
}

/// Groups keys by a value: the partition a column induces.
pub fn partition<K: Ord + Copy, V: Ord + Clone>(m: &BTreeMap<K, V>) -> Vec<Vec<K>> {
    let mut g: BTreeMap<V, Vec<K>> = BTreeMap::new();
    for (k, v) in m {
        g.entry(v.clone()).or_default().push(*k);
    }
    let mut out: Vec<Vec<K>> = g.into_values().collect();
    out.sort();
    out
}

/// A set of CPU ids.
pub type Set = std::collections::BTreeSet<u32>;
/// A partition of CPUs into groups (cores, sockets or nodes).
pub type Partition = std::collections::BTreeSet<Set>;

/// `pinrun --sysroot DIR --show --json`.
pub fn show_json(rel: &str) -> Value {
    dry_json(rel, &["--show"])
}

/// Groups the keys of `m` by value and keeps only the keys in `domain`.
pub fn partition_of<V: Ord + Clone>(m: &BTreeMap<u32, V>, domain: &Set) -> Partition {
    let mut g: BTreeMap<V, Set> = BTreeMap::new();
    for (k, v) in m.iter().filter(|(k, _)| domain.contains(k)) {
        g.entry(v.clone()).or_default().insert(*k);
    }
    g.into_values().collect()
}

/// `part` with every group cut down to `domain` (empty groups dropped).
pub fn restrict(part: &Partition, domain: &Set) -> Partition {
    part.iter()
        .map(|g| g.intersection(domain).copied().collect::<Set>())
        .filter(|g| !g.is_empty())
        .collect()
}

/// pinrun's view of the machine, from `--show --json`.
#[derive(Debug, Clone)]
pub struct PinrunView {
    /// Every CPU pinrun lists, with its `--show --json` object.
    pub cpus: BTreeMap<u32, Value>,
    /// Node id → its `cpus`.
    pub nodes: BTreeMap<u32, Set>,
    /// `allowed_cpus`.
    pub allowed: Set,
    /// `allowed_nodes`: memory nodes the process may allocate from.
    pub allowed_nodes: Set,
    /// `warnings`.
    pub warnings: Vec<String>,
}

impl PinrunView {
    pub fn of(rel: &str) -> Self {
        let v = show_json(rel);
        let cpus = v["cpus"]
            .as_array()
            .expect("cpus")
            .iter()
            .map(|c| (c["cpu"].as_u64().unwrap() as u32, c.clone()))
            .collect();
        let nodes = v["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| {
                (
                    n["node"].as_u64().unwrap() as u32,
                    ids(&n["cpus"]).into_iter().collect(),
                )
            })
            .collect();
        let warnings = v["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .map(|s| s.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        Self {
            cpus,
            nodes,
            allowed: ids(&v["allowed_cpus"]).into_iter().collect(),
            allowed_nodes: ids(&v["allowed_nodes"]).into_iter().collect(),
            warnings,
        }
    }

    /// Online CPUs.
    pub fn online(&self) -> Set {
        self.cpus
            .iter()
            .filter(|(_, c)| c["online"] == true)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Cores: the `siblings` sets, cut down to `domain`. A CPU of `domain`
    /// without siblings is a core of its own.
    pub fn cores(&self, domain: &Set) -> Partition {
        let part: Partition = domain
            .iter()
            .map(|id| match self.cpus.get(id).map(|c| &c["siblings"]) {
                Some(s) if s.is_array() => ids(s).into_iter().collect(),
                _ => std::iter::once(*id).collect(),
            })
            .collect();
        restrict(&part, domain)
    }

    /// Packages: CPUs grouped by their `package_cpus` set (the kernel's
    /// `package_cpus_list`/`core_siblings_list`, as cores are grouped by
    /// their sibling sets); by `package` id where the kernel gives no set.
    pub fn packages(&self, domain: &Set) -> Partition {
        let key: BTreeMap<u32, (Option<Vec<u32>>, Option<u64>)> = self
            .cpus
            .iter()
            .map(|(id, c)| {
                let cpus = c["package_cpus"]
                    .is_array()
                    .then(|| ids(&c["package_cpus"]));
                let pkg = if cpus.is_some() {
                    None
                } else {
                    c["package"].as_u64()
                };
                (*id, (cpus, pkg))
            })
            .collect();
        partition_of(&key, domain)
    }

    /// Dies: CPUs grouped by package (as [`Self::packages`]) and `die` id.
    pub fn dies(&self, domain: &Set) -> Partition {
        let pkg: BTreeMap<Set, usize> = self
            .packages(domain)
            .into_iter()
            .enumerate()
            .map(|(i, g)| (g, i))
            .collect();
        let key: BTreeMap<u32, (usize, Option<u64>)> = domain
            .iter()
            .map(|id| {
                let p = pkg
                    .iter()
                    .find(|(g, _)| g.contains(id))
                    .map(|(_, i)| *i)
                    .unwrap();
                (*id, (p, self.cpus[id]["die"].as_u64()))
            })
            .collect();
        partition_of(&key, domain)
    }

    /// Last-level caches: CPUs grouped by their `llc` set (a CPU with
    /// none is left out).
    pub fn llc(&self, domain: &Set) -> Partition {
        let key: BTreeMap<u32, Vec<u32>> = self
            .cpus
            .iter()
            .filter(|(_, c)| c["llc"].is_array())
            .map(|(id, c)| (*id, ids(&c["llc"])))
            .collect();
        partition_of(&key, domain)
    }

    /// Nodes: CPUs grouped by their `node`.
    pub fn node_partition(&self, domain: &Set) -> Partition {
        let key: BTreeMap<u32, Option<u64>> = self
            .cpus
            .iter()
            .map(|(id, c)| (*id, c["node"].as_u64()))
            .collect();
        partition_of(&key, domain)
    }
}

/// One object of an lstopo tree (console or XML export).
#[derive(Debug, Clone, Default)]
pub struct HwObj {
    /// `Machine`, `Package`, `Die`, `Group`, `L3Cache`, `NUMANode`, `Core`, `PU`, ...
    pub kind: String,
    /// `P#` (console) or `os_index` (XML).
    pub os: Option<u32>,
    /// The object's `cpuset` (XML only; the console does not print it).
    pub cpuset: Option<Set>,
    /// Marked `(disallowed)` (lstopo `--disallowed`).
    pub disallowed: bool,
    pub children: Vec<HwObj>,
}

impl HwObj {
    /// Every PU below (or at) this object.
    pub fn pus(&self) -> Set {
        let mut s = Set::new();
        self.walk(&mut |o: &HwObj, _| {
            if o.kind == "PU" {
                s.insert(o.os.expect("PU without P#"));
            }
        });
        s
    }

    fn walk_inner<'a>(
        &'a self,
        anc: &mut Vec<&'a HwObj>,
        f: &mut dyn FnMut(&'a HwObj, &[&'a HwObj]),
    ) {
        f(self, anc);
        anc.push(self);
        for c in &self.children {
            c.walk_inner(anc, f);
        }
        anc.pop();
    }

    /// Calls `f(object, ancestors)` on every object, depth first.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a HwObj, &[&'a HwObj])) {
        self.walk_inner(&mut Vec::new(), f);
    }
}

/// Parses the object tree of an lstopo console output (`lstopo -v -`): one
/// object per line, two spaces of indentation per level, e.g.
/// `    NUMANode(GPUMemory) L#1 (P#253 local=15GiB ...)` or
/// `            PU L#7 (P#18) (disallowed)`. The tree ends at the first
/// unindented line after `Machine` (`depth 0: ...`, `Topology infos`, ...).
pub fn lstopo_console(text: &str) -> HwObj {
    let mut stack: Vec<(usize, HwObj)> = Vec::new();
    let mut root: Option<HwObj> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        if i > 0 && indent == 0 {
            break;
        }
        let body = line.trim_start();
        let kind: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let os = body.find("(P#").and_then(|p| {
            body[p + 3..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        });
        let obj = HwObj {
            kind,
            os,
            cpuset: None,
            disallowed: body.ends_with("(disallowed)"),
            children: vec![],
        };
        while let Some((d, _)) = stack.last() {
            if *d < indent {
                break;
            }
            let (_, done) = stack.pop().unwrap();
            match stack.last_mut() {
                Some((_, parent)) => parent.children.push(done),
                None => root = Some(done),
            }
        }
        stack.push((indent, obj));
    }
    while let Some((_, done)) = stack.pop() {
        match stack.last_mut() {
            Some((_, parent)) => parent.children.push(done),
            None => root = Some(done),
        }
    }
    root.expect("empty lstopo output")
}

/// An hwloc bitmap string (`0x0000000f,0xffffffff`, 32-bit words, most
/// significant first; an empty word is zero).
pub fn hwloc_bitmap(s: &str) -> Set {
    let words: Vec<&str> = s.split(',').collect();
    let mut set = Set::new();
    for (i, w) in words.iter().rev().enumerate() {
        let w = w.trim_start_matches("0x");
        let v = if w.is_empty() {
            0
        } else {
            u32::from_str_radix(w, 16).expect("hex word")
        };
        for b in 0..32 {
            if v & (1 << b) != 0 {
                set.insert(i as u32 * 32 + b);
            }
        }
    }
    set
}

/// Parses the object tree of an lstopo XML export (`<object type=...
/// os_index=... cpuset=...>` nested as in the topology).
pub fn lstopo_xml(text: &str) -> HwObj {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let key = format!(" {name}=\"");
        let p = tag.find(&key)? + key.len();
        Some(tag[p..].split('"').next()?.to_string())
    };
    let mut stack: Vec<HwObj> = vec![HwObj {
        kind: "root".into(),
        ..Default::default()
    }];
    let mut rest = text;
    while let Some(p) = rest.find('<') {
        rest = &rest[p..];
        let end = rest.find('>').expect("unterminated tag");
        let tag = &rest[..=end];
        rest = &rest[end + 1..];
        if tag.starts_with("<object ") {
            let obj = HwObj {
                kind: attr(tag, "type").unwrap_or_default(),
                os: attr(tag, "os_index").and_then(|v| v.parse().ok()),
                cpuset: attr(tag, "cpuset").map(|v| hwloc_bitmap(&v)),
                disallowed: false,
                children: vec![],
            };
            if tag.ends_with("/>") {
                stack.last_mut().unwrap().children.push(obj);
            } else {
                stack.push(obj);
            }
        } else if tag.starts_with("</object") {
            let done = stack.pop().unwrap();
            stack.last_mut().unwrap().children.push(done);
        }
    }
    stack
        .pop()
        .unwrap()
        .children
        .into_iter()
        .next()
        .expect("no Machine object")
}

/// hwloc's grouping of PUs, in OS indexes.
#[derive(Debug, Clone, Default)]
pub struct HwlocView {
    /// Every PU shown.
    pub pus: Set,
    /// PUs marked `(disallowed)`.
    pub disallowed: Set,
    /// The PUs of each Core; a PU with no Core above it is its own core.
    pub cores: Partition,
    /// The PUs of each Package; PUs with no Package above them form one group.
    pub packages: Partition,
    /// NUMANode OS index → its PUs. The XML gives each node's cpuset. The
    /// console does not: there hwloc attaches a NUMANode to the object whose
    /// cpuset equals its own, so its PUs are those below its parent, except
    /// that a CPU-less node (empty cpuset) is attached to the Machine; a
    /// Machine-level node is taken as CPU-less when some other node hangs
    /// below the Machine (a Machine-level node with CPUs would hold them all).
    pub nodes: BTreeMap<u32, Set>,
    /// NUMANodes marked `(disallowed)`.
    pub disallowed_nodes: Set,
    /// The PUs of each Die (empty when hwloc shows no Die).
    pub dies: Partition,
    /// The PUs sharing each PU's highest-level data or unified cache
    /// (`L3Cache`, `L2Cache`, `L2dCache`, ...; never an instruction cache);
    /// PUs below no such cache are left out.
    pub llc: Partition,
}

impl HwlocView {
    pub fn of(root: &HwObj) -> Self {
        let mut v = HwlocView {
            pus: root.pus(),
            ..Default::default()
        };
        let mut cores: BTreeMap<Option<*const HwObj>, Set> = BTreeMap::new();
        let mut packages: BTreeMap<Option<*const HwObj>, Set> = BTreeMap::new();
        let mut nested_nodes = false;
        root.walk(&mut |o, anc| nested_nodes |= o.kind == "NUMANode" && anc.len() > 1);
        root.walk(&mut |o, anc| {
            if o.kind == "PU" {
                let id = o.os.unwrap();
                if o.disallowed {
                    v.disallowed.insert(id);
                }
                let near = |k: &str| {
                    anc.iter()
                        .rev()
                        .find(|a| a.kind == k)
                        .map(|a| *a as *const HwObj)
                };
                match near("Core") {
                    Some(c) => cores.entry(Some(c)).or_default().insert(id),
                    None => v.cores.insert(std::iter::once(id).collect()),
                };
                packages.entry(near("Package")).or_default().insert(id);
            }
            if o.kind == "NUMANode" {
                let cpus = match (&o.cpuset, anc.last()) {
                    (Some(cs), _) => cs.clone(),
                    (None, Some(_)) if anc.len() == 1 && nested_nodes => Set::new(),
                    (None, Some(p)) => p.pus(),
                    (None, None) => Set::new(),
                };
                let id = o.os.expect("NUMANode without P#");
                if o.disallowed {
                    v.disallowed_nodes.insert(id);
                }
                v.nodes.insert(id, cpus);
            }
        });
        let mut dies: BTreeMap<*const HwObj, Set> = BTreeMap::new();
        let mut llc: BTreeMap<*const HwObj, Set> = BTreeMap::new();
        let cache_level = |k: &str| -> Option<u32> {
            let rest = k.strip_prefix('L')?;
            let (lvl, kind) = rest.split_at(rest.find(|c: char| !c.is_ascii_digit())?);
            matches!(kind, "Cache" | "dCache" | "uCache").then(|| lvl.parse().ok())?
        };
        root.walk(&mut |o, anc| {
            if o.kind == "PU" {
                let id = o.os.unwrap();
                if let Some(d) = anc.iter().rev().find(|a| a.kind == "Die") {
                    dies.entry(*d as *const HwObj).or_default().insert(id);
                }
                let top = anc
                    .iter()
                    .filter_map(|a| Some((cache_level(&a.kind)?, *a as *const HwObj)))
                    .max_by_key(|(l, _)| *l);
                if let Some((_, c)) = top {
                    llc.entry(c).or_default().insert(id);
                }
            }
        });
        v.dies = dies.into_values().collect();
        v.llc = llc.into_values().collect();
        v.cores.extend(cores.into_values());
        v.packages = packages.into_values().collect();
        v
    }
}

/// What a launch applied, read back by the command from its own
/// /proc/self (status, stat fields 19, 40, 41, numa_maps), or the refusal:
/// the differential tests of `--dry-run` against the launch (tests/live.rs,
/// tests/vm.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The exit status and the message (`pinrun: MESSAGE` of the launch,
    /// `error.message` of `--dry-run --json`: the same text).
    Refused { exit: i32, message: String },
    /// What the command read back.
    Ran {
        cpus: String,
        policy: i64,
        priority: i64,
        nice: i64,
        mempolicy: String,
    },
}

/// The shell script (`sh -c`) the launched command runs: it prints its own
/// status, stat and first numa_maps line with builtins only (no fork: a
/// SCHED_DEADLINE task cannot fork, and a child would not be the task
/// pinrun set up).
pub const READ_BACK: &str = "while IFS= read -r l; do printf '%s\\n' \"$l\"; done </proc/self/status; \
read -r s </proc/self/stat; printf 'STAT %s\\n' \"$s\"; \
read -r n </proc/self/numa_maps; printf 'NUMA %s\\n' \"$n\"";

/// The outcome of a launch (not `--json`) whose command ran [`READ_BACK`].
pub fn launch_outcome(exit: i32, stdout: &str, stderr: &str) -> Outcome {
    if exit != 0 {
        let message = stderr
            .lines()
            .rfind(|l| l.starts_with("pinrun: ") && !l.starts_with("pinrun: warning: "))
            .map_or(String::new(), |l| l["pinrun: ".len()..].to_string());
        return Outcome::Refused { exit, message };
    }
    let field = |key: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {stdout}"))
            .trim()
            .to_string()
    };
    let stat = field("STAT ");
    let numa = field("NUMA ");
    // "ADDRESS POLICY key=value... [heap|stack|huge]": the policy may hold a
    // space ("prefer (many):0").
    let mempolicy = numa
        .split(' ')
        .skip(1)
        .take_while(|t| !t.contains('=') && !["heap", "stack", "huge"].contains(t))
        .collect::<Vec<_>>()
        .join(" ");
    Outcome::Ran {
        cpus: field("Cpus_allowed_list:"),
        policy: stat_field(&stat, 41),
        priority: stat_field(&stat, 40),
        nice: stat_field(&stat, 19),
        mempolicy,
    }
}

/// numa_maps' spelling of a `--dry-run --json` `memory` object
/// (mm/mempolicy.c `policy_modes`, `mpol_to_str()`).
pub fn numa_maps_policy(memory: &Value) -> String {
    // numa_maps prints the nodes as the kernel prints a nodemask
    // (`%*pbl`: ranges, "0-1"), as CpuSet::to_list does.
    let nodes: pinrun::cpuset::CpuSet = memory["nodes"]
        .as_array()
        .expect("memory.nodes")
        .iter()
        .map(|n| n.as_u64().expect("a node id") as u32)
        .collect();
    let nodes = nodes.to_list();
    let mode = match memory["policy"].as_str().expect("memory.policy") {
        "default" => return "default".into(),
        "local" => return "local".into(),
        "bind" => "bind",
        "preferred" => "prefer",
        "preferred-many" => "prefer (many)",
        "interleave" => "interleave",
        "weighted-interleave" => "weighted interleave",
        other => panic!("unknown mempolicy {other}"),
    };
    format!("{mode}:{nodes}")
}

/// The kernel's number of a `--json` `sched.policy` name (sched(7)).
pub fn policy_number(name: &str) -> i64 {
    match name {
        "other" => 0,
        "fifo" => 1,
        "rr" => 2,
        "batch" => 3,
        "idle" => 5,
        "deadline" => 6,
        other => panic!("unknown policy {other}"),
    }
}

/// What `--dry-run --json` (exit status `exit`, stdout `stdout`) predicts
/// the launch applies: the refusal, or the values, the unchanged ones being
/// `own` (what a launch without options reads back: it inherits them).
pub fn dry_run_outcome(exit: i32, stdout: &str, own: &Outcome) -> Outcome {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|_| panic!("not JSON: {stdout}"));
    if exit != 0 {
        return Outcome::Refused {
            exit,
            message: v["error"]["message"].as_str().unwrap_or("?").into(),
        };
    }
    let Outcome::Ran {
        cpus,
        policy,
        priority,
        nice,
        ..
    } = own.clone()
    else {
        panic!("a launch without options was refused: {own:?}")
    };
    let sched = &v["sched"];
    let (policy, priority) = match sched["policy"].as_str() {
        Some("unchanged") | None => (policy, priority),
        Some(p) => (policy_number(p), sched["priority"].as_i64().unwrap_or(0)),
    };
    Outcome::Ran {
        cpus: v["cpulist"].as_str().map_or(cpus, str::to_string),
        policy,
        priority,
        nice: sched["nice"].as_i64().unwrap_or(nice),
        mempolicy: numa_maps_policy(&v["memory"]),
    }
}

/// Compiles `tests/helpers/NAME.c` with `gcc FLAGS` into a temporary
/// directory; `None` (after saying SKIPPED) without gcc or the library.
pub fn compile(name: &str, flags: &[&str], dir: &Path) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/helpers/{name}.c"));
    let out = dir.join(name);
    match std::process::Command::new("gcc")
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
    {
        Ok(o) if o.status.success() => Some(out),
        Ok(o) => {
            skip(format!(
                "gcc {flags:?} {name}.c failed (apt-get install gcc libgomp1): {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ));
            None
        }
        Err(e) => {
            skip(format!("no gcc ({e}): apt-get install gcc"));
            None
        }
    }
}

/// Limits the address space of the process `cmd` starts to `bytes`
/// (`RLIMIT_AS`, set in the child before exec): an allocation beyond it
/// fails (pinrun aborts), so a test bounds memory without timing anything.
pub fn cap_memory(cmd: &mut std::process::Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// pinrun under a resource limit set by `sh`'s `ulimit OPTION VALUE`
/// (`-n`: open files, `RLIMIT_NOFILE`; `-v`: address space in KiB,
/// `RLIMIT_AS`), killed after 120 s by `timeout`, outside the limit (a
/// hang then exits 137 and fails the test). Add pinrun's arguments.
pub fn pinrun_under_ulimit(option: &str, value: u32) -> std::process::Command {
    let mut c = std::process::Command::new("timeout");
    c.args(["-s", "KILL", "120", "sh", "-c"])
        .arg(format!("ulimit {option} {value} && exec \"$0\" \"$@\""))
        .arg(assert_cmd::cargo::cargo_bin("pinrun"));
    c
}

/// Runs `python3 -c script` with `input` on its standard input, for the
/// tests that load pinrun's YAML with PyYAML (`yaml.safe_load`), the
/// loader Kubernetes tooling and OpenShift's scripts use. Returns its
/// standard output; `None` (the test skipped, saying why) when python3 or
/// PyYAML is not installed. Panics when the script fails otherwise.
pub fn python_yaml(what: &str, script: &str, input: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let Ok(mut child) = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        skip("python3 is not installed");
        return None;
    };
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("No module named 'yaml'") {
        skip("PyYAML is not installed");
        return None;
    }
    assert!(out.status.success(), "{what}: python3: {err}");
    Some(out.stdout)
}

/// `systemd-analyze verify --man=no` of a unit file `name` holding `text`
/// (systemd's own parser, systemd.unit(5)): whether it exited 0, and its
/// standard error (where systemd names each line it rejects as
/// `NAME:LINE: ...`). `None` (the test skipped) when systemd-analyze is not
/// installed or does not run here.
pub fn systemd_verify(name: &str, text: &str) -> Option<(bool, String)> {
    let runs = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output();
    match runs {
        Err(_) => {
            skip("systemd-analyze is not installed");
            return None;
        }
        Ok(v) if !v.status.success() => {
            skip("systemd-analyze does not run here");
            return None;
        }
        Ok(_) => {}
    }
    let dir = tempdir();
    let unit = dir.path().join(name);
    std::fs::write(&unit, text).unwrap();
    let out = std::process::Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&unit)
        .output()
        .unwrap();
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}
