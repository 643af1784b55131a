//! `--dry-run`'s lines and JSON key for `--steer-irqs` (issue 21): every
//! IRQ that would leave the claimed CPUs and where to, every one that
//! cannot and why, and the default affinity of new IRQs.

use crate::plan::Plan;
use crate::words::cpus_phrase;
use serde_json::{Value, json};
use std::fmt::Write;

/// Adds `"steer_irqs": {"cpus": [1], "housekeeping": [0], "move": [{"irq":
/// 36, "name": "virtio1-req.0", "from": [0,1], "to": [0], "housekeeping":
/// false, "managed": false|null}], "unmovable": [{"irq", "name", "cpus",
/// "why", "managed": true|false|null}], "irqbalance": [PID…],
/// "irqbalance_ban": {"pid", "socket", "now", "default", "to", "command"}
/// | null, "default_smp_affinity": {"from": [...], "to": [...]} | null}`
/// to `v` when planned (absent otherwise).
pub fn add_json(v: &mut Value, plan: &Plan) {
    let Some(p) = &plan.steer else {
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
        "default_smp_affinity": p.default.as_ref().map(|(from, to)| json!({
            "from": from.to_vec(),
            "to": to.to_vec(),
        })),
    });
}

/// `IRQ 36 (virtio1-req.0)`, or `IRQ 2` when it has no name (no handler).
pub fn named(irq: u32, name: &str) -> String {
    if name.is_empty() {
        format!("IRQ {irq}")
    } else {
        format!("IRQ {irq} ({})", crate::claim::printable(name))
    }
}

/// The `irqs:` lines of `--dry-run`'s text (empty without `--steer-irqs`).
pub fn text(plan: &Plan) -> String {
    let Some(p) = &plan.steer else {
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
    for u in &p.unmovable {
        let _ = writeln!(
            s,
            "irqs:    cannot move {} on {}: {}",
            named(u.irq, &u.name),
            cpus_phrase(&u.cpus),
            u.why
        );
    }
    if p.ban.is_none() {
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
            if b.now.is_empty() {
                "none".to_string()
            } else {
                b.now.to_list()
            },
            crate::steer::ban_command(&b.to, &b.default).unwrap_or_default(),
            b.socket.display()
        );
    }
    let unknown = p.moves.iter().filter(|m| m.managed.is_none()).count();
    if unknown > 0 {
        let _ = writeln!(
            s,
            "irqs:    {unknown} IRQ(s) not known to be unmanaged (debugfs irq/irqs unreadable): a kernel-managed one is refused at its write (EIO/EPERM), skipped and reported"
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
    use crate::plan::steer::{BanPlan, SteerPlan};
    use crate::testkit::cpus;

    /// The dry run names the exact command the launch sends.
    #[test]
    fn dry_run_shows_the_irqbalance_command() {
        let sys = crate::testkit::Machine::new(1, 4, 1).build();
        let mut plan =
            crate::plan::plan(&sys, &crate::testkit::request(&["--cpus", "1", "--", "x"])).unwrap();
        plan.steer = Some(SteerPlan {
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
        let t = text(&plan);
        assert!(
            t.contains("irqs:    irqbalance (pid 368): ban 4-7,12-17 (now 4-7,12-15): send \"settings cpus 4-7,12-17\" to /run/irqbalance/irqbalance368.sock first"),
            "{t}"
        );
        let mut v = serde_json::json!({});
        add_json(&mut v, &plan);
        assert_eq!(
            v["steer_irqs"]["irqbalance_ban"]["command"],
            "settings cpus 4-7,12-17"
        );
        assert_eq!(v["steer_irqs"]["irqbalance_ban"]["pid"], 368);
        // A dump with irqbalance in it: what a launch would do.
        plan.steer.as_mut().unwrap().ban = None;
        assert!(text(&plan).contains("irqbalance runs (pid 368): a launch bans"));
    }
}
