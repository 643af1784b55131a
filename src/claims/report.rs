//! The claims in `--show` (issue 5): text lines and the JSON fields.

use crate::claim::{Claims, Elsewhere, Holder};
use crate::words::shorten;
use serde_json::{Value, json};
use std::fmt::Write;

fn age(now: u64, since: u64) -> String {
    let s = now.saturating_sub(since);
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// Adds the claims to `--show --json`'s object: `claims` (one object per
/// live claim), `claimed_cpus`, `claim_warnings`, and `claim_info` (those
/// of `claim_warnings` about another user's files: info). A claim whose PID is
/// numbered in another PID namespace than this `/proc`'s names it
/// (`pid_ns`: `{"dev", "ino"}`), with `pid_here` (its PID here, when seen)
/// and `unchecked` (why it could not be checked from here, honoured as
/// written; null when checked); all three null for a PID of this `/proc`.
pub fn add_claims_json(v: &mut Value, claims: &Claims, now: u64) {
    let list: Vec<Value> = claims
        .claims
        .iter()
        .map(|c| match &c.holder {
            Holder::Process {
                pid,
                start_time,
                uid,
                command,
                since,
                record,
                pgid,
                group_only,
                elsewhere,
                ..
            } => json!({
                "holder": "pinrun", "pid": pid, "start_time": start_time, "uid": uid, "pgid": pgid,
                "group_only": group_only,
                "pid_ns": elsewhere.as_ref().map(|e| json!({"dev": e.ns.dev, "ino": e.ns.ino})),
                "pid_here": elsewhere.as_ref().and_then(|e| e.here),
                "unchecked": elsewhere.as_ref().and_then(|e| e.unchecked.as_deref()),
                "command": command, "cpus": c.cpus.to_vec(), "cpulist": c.cpus.to_list(),
                "since": since, "age_s": now.saturating_sub(*since), "record": record,
            }),
            Holder::Kubelet { pod, container } => json!({
                "holder": "kubelet", "pod": pod, "container": container,
                "cpus": c.cpus.to_vec(), "cpulist": c.cpus.to_list(),
            }),
        })
        .collect();
    v["claims"] = json!(list);
    v["claimed_cpus"] = json!(claims.cpus().to_vec());
    // Only when the state directory could not be read: its claims are
    // unknown, not an empty list.
    if let Some(why) = &claims.state_dir_error {
        v["state_dir_error"] = json!(why);
    }
    v["claim_warnings"] = json!(
        claims
            .warnings
            .iter()
            .chain(&claims.foreign_warnings)
            .chain(&claims.state_warnings)
            .collect::<Vec<_>>()
    );
    // Those of claim_warnings that are info (another user's files),
    // as --show's text and the findings label them.
    v["claim_info"] = json!(claims.foreign_warnings);
}

/// The line under a claim of another PID namespace: "pid 1 in PID
/// namespace pid:[4026532451]", then that it was checked, or why not and
/// that it is honoured as written.
fn elsewhere_line(pid: u32, e: &Elsewhere) -> String {
    match &e.unchecked {
        None => format!("pid {pid} in PID namespace {} (checked from here)", e.ns),
        Some(why) => format!(
            "pid {pid} in PID namespace {}: not checked ({why}); honoured as written, never removed from here",
            e.ns
        ),
    }
}

/// The claims section of `--show`: one line per claim (pid, CPUs, age,
/// command), and under a claim of another PID namespace a line naming it
/// (the PID shown is the holder's here when it was found). `state_dir`:
/// where they were read (live machine only).
pub fn claims_text(claims: &Claims, now: u64, state_dir: Option<&std::path::Path>) -> String {
    let mut s = String::new();
    if claims.claims.is_empty()
        && claims.warnings.is_empty()
        && claims.foreign_warnings.is_empty()
        && claims.state_warnings.is_empty()
        && state_dir.is_none()
    {
        return s;
    }
    let from = state_dir.map_or(String::new(), |d| format!(" ({})", d.display()));
    // Never "none" for records that were not read (never fail open).
    let unread = claims.state_dir_error.as_ref().map(|why| {
        format!("the state directory could not be read, so pinrun's claims are unknown: {why}")
    });
    match (claims.claims.is_empty(), &unread) {
        (true, None) => {
            let _ = writeln!(s, "claims{from}: none");
        }
        (true, Some(u)) => {
            let _ = writeln!(s, "claims{from}: {u}");
        }
        (false, None) => {
            let _ = writeln!(
                s,
                "claims{from}: {}",
                crate::words::cpus_phrase(&claims.cpus())
            );
        }
        (false, Some(u)) => {
            let _ = writeln!(
                s,
                "claims{from}: {} and more: {u}",
                crate::words::cpus_phrase(&claims.cpus())
            );
        }
    }
    if !claims.claims.is_empty() {
        for c in &claims.claims {
            match &c.holder {
                Holder::Process {
                    pid,
                    command,
                    since,
                    elsewhere,
                    ..
                } => {
                    // One line of at most 80 columns: the command is shortened.
                    let shown = elsewhere.as_ref().and_then(|e| e.here).unwrap_or(*pid);
                    let head = format!(
                        "  pid {shown:<8} CPUs {:<10} age {:<5} ",
                        c.cpus.to_list(),
                        age(now, *since)
                    );
                    let room = 80usize.saturating_sub(head.chars().count()).max(12);
                    let _ = writeln!(s, "{head}{}", shorten(&command.join(" "), room));
                    if let Some(e) = elsewhere {
                        let _ = writeln!(s, "    {}", elsewhere_line(*pid, e));
                    }
                }
                Holder::Kubelet { pod, container } => {
                    let _ = writeln!(
                        s,
                        "  kubelet      CPUs {:<10}           pod {pod} container {container}",
                        c.cpus.to_list()
                    );
                }
            }
        }
    }
    // One rule, the findings' (claim-record-unusable): a file of another
    // user than root and this one holds nothing and is ignored (info);
    // one of root's or this user's, or the directory itself, a warning.
    for w in claims.warnings.iter().chain(&claims.state_warnings) {
        let _ = writeln!(s, "warning: {w}");
    }
    for w in &claims.foreign_warnings {
        let _ = writeln!(s, "info: {w}");
    }
    s
}
