//! The claims in `--show` (issue 5): text lines and the JSON fields.

use crate::claim::{Claims, Holder};
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
/// live claim), `claimed_cpus`, and `claim_warnings`.
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
                ..
            } => json!({
                "holder": "pinrun", "pid": pid, "start_time": start_time, "uid": uid, "pgid": pgid,
                "group_only": group_only,
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
    v["claim_warnings"] = json!(
        claims
            .warnings
            .iter()
            .chain(&claims.foreign_warnings)
            .chain(&claims.state_warnings)
            .collect::<Vec<_>>()
    );
}

/// The claims section of `--show`: one line per claim (pid, CPUs, age,
/// command). `state_dir`: where they were read (live machine only).
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
    if claims.claims.is_empty() {
        let _ = writeln!(s, "claims{from}: none");
    } else {
        let _ = writeln!(s, "claims{from}: CPUs {}", claims.cpus());
        for c in &claims.claims {
            match &c.holder {
                Holder::Process {
                    pid,
                    command,
                    since,
                    ..
                } => {
                    // One line of at most 80 columns: the command is shortened.
                    let head = format!(
                        "  pid {pid:<8} CPUs {:<10} age {:<5} ",
                        c.cpus.to_list(),
                        age(now, *since)
                    );
                    let room = 80usize.saturating_sub(head.chars().count()).max(12);
                    let _ = writeln!(s, "{head}{}", shorten(&command.join(" "), room));
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
    for w in claims
        .warnings
        .iter()
        .chain(&claims.foreign_warnings)
        .chain(&claims.state_warnings)
    {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}
