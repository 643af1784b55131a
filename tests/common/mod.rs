//! Helpers shared by the integration tests: the binary, the fixture dumps
//! in `../shared/fixtures` (used in place, never copied), and parsers for
//! the peer tools' published expected outputs.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `$PINRUN_FIXTURES`, else `../shared/fixtures` beside the checkout.
pub fn fixtures() -> PathBuf {
    let p = std::env::var_os("PINRUN_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures"));
    assert!(
        p.join("INDEX.md").is_file(),
        "machine dumps not found at {}: put shared/ beside the checkout or set PINRUN_FIXTURES",
        p.display()
    );
    p
}

/// One machine dump.
pub fn machine(rel: &str) -> PathBuf {
    let p = fixtures().join(rel);
    assert!(
        p.is_dir(),
        "fixture {} missing (shared/ must sit beside the checkout)",
        p.display()
    );
    p
}

/// Every machine directory of a fixture source (skipping `_`-prefixed extras).
pub fn machines(source: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixtures().join(source))
        .expect("fixture source")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('_'))
        .map(|n| format!("{source}/{n}"))
        .collect();
    v.sort();
    v
}

/// The pinrun binary.
pub fn pinrun() -> Command {
    Command::cargo_bin("pinrun").expect("binary")
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
