//! `--dry-run`'s lines and JSON key for `--steer-irqs` (issue 21): every
//! IRQ that would leave the claimed CPUs and where to, every one that
//! cannot and why, and the default affinity of new IRQs.

use crate::cpuset::CpuSet;
use crate::steer::plan::{SteerPlan, Unmovable};
use crate::words::cpus_phrase;
use serde_json::{Value, json};
use std::fmt::Write;

/// Adds `"steer_irqs": {"cpus": [1], "housekeeping": [0], "move": [{"irq":
/// 36, "name": "virtio1-req.0", "from": [0,1], "to": [0], "housekeeping":
/// false, "managed": false|null}], "unmovable": [{"irq", "name", "cpus",
/// "why", "managed": true|false|null}], "irqbalance": [PID…],
/// "irqbalance_ban": {"pid", "socket", "now", "default", "to", "command"}
/// | null, "irqbalance_config": {"pid", "path", "now", "to", "lines",
/// "restart"} | null, "default_smp_affinity": {"from": [...], "to": [...]}
/// | null}` to `v` when planned (absent otherwise).
pub fn add_json(v: &mut Value, steer: Option<&SteerPlan>) {
    let Some(p) = steer else {
        return;
    };
    v["steer_irqs"] = json!({
        "cpus": p.cpus.to_vec(),
        "housekeeping": p.housekeeping.to_vec(),
        "move": p.moves.iter().map(|m| json!({
            "irq": m.irq,
            "name": m.name,
            "from": m.from.to_vec(),
            "to": m.to.to_vec(),
            "housekeeping": m.housekeeping,
            "managed": m.managed,
        })).collect::<Vec<_>>(),
        "unmovable": p.unmovable.iter().map(|u| json!({
            "irq": u.irq,
            "name": u.name,
            "cpus": u.cpus.to_vec(),
            "why": u.why,
            "managed": u.managed,
        })).collect::<Vec<_>>(),
        "irqbalance": p.irqbalance,
        "irqbalance_ban": p.ban.as_ref().map(|b| json!({
            "pid": b.pid,
            "socket": b.socket.display().to_string(),
            "now": b.now.to_vec(),
            "default": b.default.to_vec(),
            "to": b.to.to_vec(),
            "command": crate::steer::ban_command(&b.to, &b.default).ok(),
        })),
        "irqbalance_config": p.config.as_ref().map(|c| json!({
            "pid": c.pid,
            "path": c.path.display().to_string(),
            "now": c.ban_now.to_vec(),
            "to": c.ban_to.to_vec(),
            "lines": config_lines(c),
            "restart": restart_command(),
        })),
        "default_smp_affinity": p.default.as_ref().map(|(from, to)| json!({
            "from": from.to_vec(),
            "to": to.to_vec(),
        })),
    });
}

/// The lines `--irqbalance-config` writes (those of the edited file
/// that the file did not have).
fn config_lines(c: &crate::steer::plan::ConfigPlan) -> Vec<String> {
    c.to.lines()
        .filter(|l| !c.now.lines().any(|o| o == *l))
        .map(str::to_string)
        .collect()
}

/// The restart `--irqbalance-config` runs after each edit.
fn restart_command() -> String {
    format!(
        "systemctl try-restart {}",
        crate::steer::read::IRQBALANCE_UNIT
    )
}

/// `IRQ 36 (virtio1-req.0)`, or `IRQ 2` when it has no name (no handler).
pub fn named(irq: u32, name: &str) -> String {
    if name.is_empty() {
        format!("IRQ {irq}")
    } else {
        format!("IRQ {irq} ({})", crate::claim::printable(name))
    }
}

/// The IRQs of `unmovable` grouped by CPUs and reason, in first-seen
/// order: (who, their CPUs, why, how many), who being "IRQ 36 (name)" for
/// one and "IRQs 0 (timer), 2" for several (as the irq-on-cpu finding lists
/// them: one line per reason, not one per IRQ).
pub fn unmovable_groups(unmovable: &[Unmovable]) -> Vec<(String, &CpuSet, &str, usize)> {
    let mut groups: Vec<(Vec<&Unmovable>, &CpuSet, &str)> = Vec::new();
    for u in unmovable {
        match groups
            .iter_mut()
            .find(|g| *g.1 == u.cpus && g.2 == u.why.as_str())
        {
            Some(g) => g.0.push(u),
            None => groups.push((vec![u], &u.cpus, u.why.as_str())),
        }
    }
    groups
        .into_iter()
        .map(|(us, cpus, why)| {
            let who = match us.as_slice() {
                [u] => named(u.irq, &u.name),
                _ => format!(
                    "IRQs {}",
                    us.iter()
                        .map(|u| named(u.irq, &u.name)["IRQ ".len()..].to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            (who, cpus, why, us.len())
        })
        .collect()
}

/// When steering moves no IRQ because no housekeeping CPU is left (every
/// online CPU outside the claimed ones is isolated, nohz_full or held by
/// another steering launch): the plain sentence saying so.
pub fn nothing_moved(p: &SteerPlan) -> Option<&'static str> {
    (p.moves.is_empty() && p.unmovable.iter().any(|u| u.managed == Some(false)))
        .then_some("no IRQ moved: no housekeeping CPU left outside the claimed CPUs")
}

/// The `irqs:` lines of `--dry-run`'s text (empty without `--steer-irqs`).
pub fn text(steer: Option<&SteerPlan>) -> String {
    let Some(p) = steer else {
        return String::new();
    };
    let mut s = String::new();
    if p.moves.is_empty() && p.unmovable.is_empty() && p.default.is_none() {
        let _ = writeln!(s, "irqs:    no IRQ on {}", cpus_phrase(&p.cpus));
    }
    for m in &p.moves {
        let _ = writeln!(
            s,
            "irqs:    move {} from {} to {}{}",
            named(m.irq, &m.name),
            cpus_phrase(&m.from),
            cpus_phrase(&m.to),
            if m.housekeeping {
                " (housekeeping)"
            } else {
                ""
            }
        );
    }
    if let Some(n) = nothing_moved(p) {
        let _ = writeln!(s, "irqs:    {n}");
    }
    for (who, cpus, why, _) in unmovable_groups(&p.unmovable) {
        let _ = writeln!(
            s,
            "irqs:    cannot move {who} on {}: {why}",
            cpus_phrase(cpus)
        );
    }
    if let Some(c) = &p.config {
        let _ = writeln!(
            s,
            "irqs:    irqbalance (pid {}) has no control socket: ban {} (now {}): set {} in {}, then {}; the file back and the same restart when the command ends",
            c.pid,
            c.ban_to.to_list(),
            crate::words::or_none(&c.ban_now),
            config_lines(c).join(" and "),
            c.path.display(),
            restart_command()
        );
    }
    if p.ban.is_none() && p.config.is_none() {
        for pid in &p.irqbalance {
            let _ = writeln!(
                s,
                "irqs:    irqbalance runs (pid {pid}): a launch bans the CPUs through its control socket, and refuses without one (it would move the IRQs back)"
            );
        }
    }
    if let Some(b) = &p.ban {
        let _ = writeln!(
            s,
            "irqs:    irqbalance (pid {}): ban {} (now {}): send {:?} to {} first, and its original ban back when the command ends",
            b.pid,
            b.to.to_list(),
            crate::words::or_none(&b.now),
            crate::steer::ban_command(&b.to, &b.default).unwrap_or_default(),
            b.socket.display()
        );
    }
    let unknown = p.moves.iter().filter(|m| m.managed.is_none()).count();
    if unknown > 0 {
        let _ = writeln!(
            s,
            "irqs:    {} not known to be unmanaged (debugfs irq/irqs unreadable): a kernel-managed one is refused at its write (EIO/EPERM), skipped and reported",
            crate::words::count(unknown, "IRQ")
        );
    }
    if let Some((from, to)) = &p.default {
        let _ = writeln!(
            s,
            "irqs:    default_smp_affinity {} -> {}",
            from.to_list(),
            to.to_list()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steer::plan::{BanPlan, SteerPlan};
    use crate::testkit::cpus;

    /// `--irqbalance-config`'s dry run names the file, the lines it
    /// writes and the restart.
    #[test]
    fn dry_run_shows_the_irqbalance_config_edit() {
        let now = include_str!("../../tests/data/irqbalance/debian-trixie-1.9.4.default");
        let plan = Some(SteerPlan {
            cpus: cpus("2-3"),
            irqbalance: vec![612],
            config: Some(crate::steer::plan::ConfigPlan {
                pid: 612,
                path: "/etc/default/irqbalance".into(),
                now: now.into(),
                ban_now: crate::cpuset::CpuSet::default(),
                ban_to: cpus("2-3"),
                to: crate::steer::config_edit(now, &cpus("2-3")).unwrap(),
            }),
            ..Default::default()
        });
        assert!(
            text(plan.as_ref()).contains("irqs:    irqbalance (pid 612) has no control socket: ban 2-3 (now none): set IRQBALANCE_BANNED_CPUS=0000000c and IRQBALANCE_BANNED_CPULIST=2-3 in /etc/default/irqbalance, then systemctl try-restart irqbalance.service;"),
            "{}",
            text(plan.as_ref())
        );
        let mut v = json!({});
        add_json(&mut v, plan.as_ref());
        let c = &v["steer_irqs"]["irqbalance_config"];
        assert_eq!(c["path"], "/etc/default/irqbalance");
        assert_eq!(c["to"], json!([2, 3]));
        assert_eq!(c["restart"], "systemctl try-restart irqbalance.service");
        assert_eq!(
            c["lines"],
            json!([
                "IRQBALANCE_BANNED_CPUS=0000000c",
                "IRQBALANCE_BANNED_CPULIST=2-3"
            ])
        );
    }

    /// The dry run names the exact command the launch sends.
    #[test]
    fn dry_run_shows_the_irqbalance_command() {
        let mut plan = Some(SteerPlan {
            cpus: cpus("16-17"),
            irqbalance: vec![368],
            ban: Some(BanPlan {
                pid: 368,
                socket: "/run/irqbalance/irqbalance368.sock".into(),
                now: cpus("4-7,12-15"),
                default: cpus("4-7,12-15"),
                to: cpus("4-7,12-17"),
                sleep: 10,
            }),
            ..Default::default()
        });
        let t = text(plan.as_ref());
        assert!(
            t.contains("irqs:    irqbalance (pid 368): ban 4-7,12-17 (now 4-7,12-15): send \"settings cpus 4-7,12-17\" to /run/irqbalance/irqbalance368.sock first"),
            "{t}"
        );
        let mut v = serde_json::json!({});
        add_json(&mut v, plan.as_ref());
        assert_eq!(
            v["steer_irqs"]["irqbalance_ban"]["command"],
            "settings cpus 4-7,12-17"
        );
        assert_eq!(v["steer_irqs"]["irqbalance_ban"]["pid"], 368);
        // A dump with irqbalance in it: what a launch would do.
        plan.as_mut().unwrap().ban = None;
        assert!(text(plan.as_ref()).contains("irqbalance runs (pid 368): a launch bans"));
    }

    /// The new-user trial: CPU 0 held by another steering launch, a
    /// second one on CPU 1 found no housekeeping CPU for 18 IRQs and said
    /// so 18 times, then "steered 0 IRQ(s)". One line per reason, and the
    /// plain sentence first.
    #[test]
    fn unmovable_irqs_are_grouped_by_reason() {
        let no_hk =
            "no housekeeping CPU to move to (every online CPU is isolated, nohz_full or claimed)";
        let stay = |irq: u32, cpus_: &str, why: &str, managed: Option<bool>| Unmovable {
            irq,
            name: format!("dev{irq}"),
            cpus: cpus(cpus_),
            why: why.into(),
            managed,
        };
        let mut unmovable: Vec<Unmovable> = [24, 25, 26]
            .iter()
            .map(|n| stay(*n, "1", no_hk, Some(false)))
            .collect();
        unmovable.insert(1, stay(36, "0-1", "kernel-managed", Some(true)));
        let plan = Some(SteerPlan {
            cpus: cpus("1"),
            unmovable,
            ..Default::default()
        });
        let p = plan.as_ref().unwrap();
        assert_eq!(
            nothing_moved(p),
            Some("no IRQ moved: no housekeeping CPU left outside the claimed CPUs")
        );
        let g: Vec<(String, String, usize)> = unmovable_groups(&p.unmovable)
            .into_iter()
            .map(|(who, c, _, n)| (who, c.to_list(), n))
            .collect();
        assert_eq!(
            g,
            vec![
                (
                    "IRQs 24 (dev24), 25 (dev25), 26 (dev26)".to_string(),
                    "1".to_string(),
                    3
                ),
                ("IRQ 36 (dev36)".to_string(), "0-1".to_string(), 1),
            ]
        );
        assert_eq!(
            text(plan.as_ref()),
            format!(
                "irqs:    no IRQ moved: no housekeeping CPU left outside the claimed CPUs\n\
                 irqs:    cannot move IRQs 24 (dev24), 25 (dev25), 26 (dev26) on CPU 1: {no_hk}\n\
                 irqs:    cannot move IRQ 36 (dev36) on CPUs 0-1: kernel-managed\n"
            )
        );
        // A kernel-managed IRQ alone is no "nothing moved" for want of CPUs.
        let mut only_managed = p.clone();
        only_managed.unmovable.retain(|u| u.irq == 36);
        assert_eq!(nothing_moved(&only_managed), None);
    }
}
