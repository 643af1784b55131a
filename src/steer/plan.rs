//! IRQ steering decided (`--steer-irqs`, issue 21), pure: which IRQs leave
//! the claimed CPUs and where they go ([`plan`]), where an IRQ goes when
//! the vectors of its first target run out ([`fallbacks`]), and what the
//! end of a steering claim restores, composed with the other live
//! steering claims ([`undo`]).
//!
//! An IRQ whose `smp_affinity_list` includes a chosen CPU gets
//! `old − chosen`; when that is empty, the housekeeping CPUs (online, not
//! isolated, not nohz_full, not claimed; `--irq-housekeeping LIST`
//! overrides), those of the device's node first. Kernel-managed IRQs are
//! never written (`irq_can_set_affinity_usr()` refuses them with EIO).

use crate::cpuset::CpuSet;
use crate::steer::Journal;
use crate::steer::read::SteerIrq;

/// One IRQ to move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The IRQ number.
    pub irq: u32,
    /// Its device name.
    pub name: String,
    /// Its `smp_affinity_list` now.
    pub from: CpuSet,
    /// What will be written.
    pub to: CpuSet,
    /// Whether `to` is the housekeeping fallback (`from − chosen` was empty).
    pub housekeeping: bool,
    /// Kernel-managed per debugfs or the kernel's answer to a test write
    /// (`SteerIrq::kernel_keeps`): `Some(false)`, or `None` when unknown
    /// (never `Some(true)`: those are [`Unmovable`]).
    pub managed: Option<bool>,
}

/// One IRQ on a chosen CPU that stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmovable {
    /// The IRQ number.
    pub irq: u32,
    /// Its device name.
    pub name: String,
    /// Its CPUs (affinity, else effective affinity).
    pub cpus: CpuSet,
    /// Why, in words.
    pub why: String,
    /// Kernel-managed: `Some(true)` per debugfs, or when the kernel
    /// refused a test write of an MSI IRQ (an MSI chip can move any IRQ
    /// it does not manage); `Some(false)` when it stays for want of a
    /// housekeeping CPU; `None` when the kernel keeps a non-MSI IRQ (the
    /// timer, a per-CPU IRQ: not balanceable or managed, unknown which).
    pub managed: Option<bool>,
}

/// The steering of one launch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SteerPlan {
    /// The CPUs IRQs leave (the claimed CPUs).
    pub cpus: CpuSet,
    /// The housekeeping CPUs used as fallback.
    pub housekeeping: CpuSet,
    /// The IRQs to write, by number.
    pub moves: Vec<Move>,
    /// The IRQs on the chosen CPUs that cannot be moved.
    pub unmovable: Vec<Unmovable>,
    /// `default_smp_affinity`: (now, to write), when it includes a chosen CPU.
    pub default: Option<(CpuSet, CpuSet)>,
    /// PIDs of running irqbalance daemons (filled by the application
    /// layer): it would move the IRQs back, so the launch bans the CPUs
    /// through its socket ([`SteerPlan::ban`]) or refuses.
    pub irqbalance: Vec<u32>,
    /// The ban to send irqbalance through its control socket, when it
    /// runs with one.
    pub ban: Option<BanPlan>,
    /// irqbalance's configuration to edit before restarting it
    /// (`--irqbalance-config`, a daemon without its control socket).
    pub config: Option<ConfigPlan>,
}

/// `--irqbalance-config`: the edit of the configuration file of
/// `irqbalance.service` and its restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigPlan {
    /// The daemon's PID (the unit's `MainPID`).
    pub pid: u32,
    /// The file edited (the unit's last `EnvironmentFile=`).
    pub path: std::path::PathBuf,
    /// Its bytes now.
    pub now: String,
    /// The daemon's own ban now (its `/proc/PID/environ`, else isolated ∪
    /// nohz_full).
    pub ban_now: CpuSet,
    /// The ban written: `ban_now ∪ the claimed CPUs`.
    pub ban_to: CpuSet,
    /// The bytes written ([`crate::steer::config_edit`]).
    pub to: String,
}

/// What ending a steering claim does to irqbalance's configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigUndo {
    /// Write these bytes (the original, or the original edited to ban the
    /// CPUs live claims still hold) and restart the daemon.
    Restore(String),
    /// Already what to restore: nothing to write.
    Unchanged,
    /// Someone edited the file since (it is not what pinrun last wrote):
    /// left alone.
    Foreign,
}

/// Ends the configuration edit of `ended` with `others` the live
/// steering claims' journals and `now` the file's bytes: when `now` is
/// what pinrun last wrote (every live journal of the file keeps it),
/// the original when no live claim edited the same file, else the
/// original edited to ban its own ban ∪ the live claims' CPUs; the live
/// journals' `written` become the restored bytes. `None`: `ended` did not
/// edit it.
pub fn undo_config(ended: &Journal, others: &mut [Journal], now: &str) -> Option<ConfigUndo> {
    let c = ended.irqbalance_config.as_ref()?;
    let same = |o: &Journal| {
        o.irqbalance_config
            .as_ref()
            .is_some_and(|oc| oc.path == c.path)
    };
    let held = others
        .iter()
        .filter(|o| same(o))
        .fold(CpuSet::new(), |acc, o| acc.union(&o.cpu_set()));
    let to = if held.is_empty() {
        c.original.clone()
    } else {
        match crate::steer::config_edit(&c.original, &list(&c.ban).union(&held)) {
            Ok(t) => t,
            // The original was edited once: it edits again.
            Err(_) => c.original.clone(),
        }
    };
    let ours = now == to
        || now == c.written
        || others
            .iter()
            .filter_map(|o| o.irqbalance_config.as_ref())
            .any(|oc| oc.path == c.path && oc.written == now);
    if !ours {
        return Some(ConfigUndo::Foreign);
    }
    for o in others.iter_mut() {
        if let Some(oc) = o.irqbalance_config.as_mut().filter(|oc| oc.path == c.path) {
            oc.written = to.clone();
        }
    }
    Some(if to == now {
        ConfigUndo::Unchanged
    } else {
        ConfigUndo::Restore(to)
    })
}

/// The CPUs a launch adds to irqbalance's ban.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BanPlan {
    /// The daemon's PID.
    pub pid: u32,
    /// Its control socket.
    pub socket: std::path::PathBuf,
    /// Its ban now (the `setup` reply).
    pub now: CpuSet,
    /// What it bans on its own (no ban set through the socket).
    pub default: CpuSet,
    /// The ban to send: `now ∪ the claimed CPUs` ([`ban_for_launch`]).
    pub to: CpuSet,
    /// Its rebalance interval, seconds: the ban applies at its next
    /// rescan, at most this long after the command.
    pub sleep: u32,
}

/// The ban a launch sends: irqbalance's `settings cpus` replaces its ban,
/// so the new ban is its ban now ∪ the claimed CPUs.
pub fn ban_for_launch(now: &CpuSet, chosen: &CpuSet) -> CpuSet {
    now.union(chosen)
}

/// What ending a steering claim does to irqbalance's ban.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BanUndo {
    /// Send this ban (the original ∪ the CPUs other live steering claims
    /// still hold), also when irqbalance's `setup` already says it: a
    /// `settings cpus` it has taken shows in `setup` only from its next
    /// rescan on, so a launch that died after sending its ban and before
    /// seeing it (issue 33 item 4: the launch killed by SIGKILL 1 s into
    /// the wait) looks unchanged while the ban is still to come; the
    /// restore, taken after it, overrides it (irqbalance serves its
    /// connections in order).
    Restore(CpuSet),
    /// Someone else changed the ban since (now, what steering sent): left
    /// alone.
    Foreign(CpuSet, CpuSet),
}

/// Ends the irqbalance ban of `ended` with `others` the live steering
/// claims' journals and `now` the daemon's ban now: when `now` is the ban
/// to restore or what `ended` or a live claim (of the same daemon) sent,
/// restore `original ∪ CPUs of the live claims` ([`BanUndo::Restore`]); the live journals are updated as
/// [`undo`] does for IRQs (an original that was `ended`'s write becomes
/// `ended`'s original; every written becomes the restored ban).
pub fn undo_ban(ended: &Journal, others: &mut [Journal], now: &CpuSet) -> Option<BanUndo> {
    let b = ended.irqbalance.as_ref()?;
    let live: Vec<&Journal> = others
        .iter()
        .filter(|o| o.irqbalance.as_ref().is_some_and(|ob| ob.pid == b.pid))
        .collect();
    let held = live
        .iter()
        .fold(CpuSet::new(), |acc, o| acc.union(&o.cpu_set()));
    let to = list(&b.original).union(&held);
    let ours = *now == to
        || *now == list(&b.written)
        || live.iter().any(|o| {
            o.irqbalance
                .as_ref()
                .is_some_and(|ob| list(&ob.written) == *now)
        });
    if !ours {
        return Some(BanUndo::Foreign(now.clone(), list(&b.written)));
    }
    for o in others.iter_mut() {
        if let Some(ob) = o.irqbalance.as_mut().filter(|ob| ob.pid == b.pid) {
            if ob.original == b.written {
                ob.original = b.original.clone();
            }
            ob.written = to.to_list();
        }
    }
    Some(BanUndo::Restore(to))
}

/// The housekeeping CPUs: `given` (`--irq-housekeeping`) when set, else
/// the online CPUs that are not isolated, not nohz_full, not claimed (by
/// others) and not `chosen`.
pub fn housekeeping(
    given: Option<&CpuSet>,
    online: &CpuSet,
    isolated: &CpuSet,
    nohz_full: &CpuSet,
    claimed: &CpuSet,
    chosen: &CpuSet,
) -> CpuSet {
    match given {
        Some(g) => g.difference(chosen),
        None => online
            .difference(isolated)
            .difference(nohz_full)
            .difference(claimed)
            .difference(chosen),
    }
}

/// Refuses `--irq-housekeeping LIST` naming CPUs another live launch
/// claims (issue 33): steering would move IRQs onto the CPUs that launch
/// keeps quiet. Errors: `cpu-claimed`, naming the holders, with the
/// housekeeping CPUs no one claims as the hint.
pub fn refuse_claimed_housekeeping(
    given: Option<&CpuSet>,
    claims: &crate::claim::Claims,
    online: &CpuSet,
    chosen: &CpuSet,
) -> crate::error::Result<()> {
    let Some(given) = given else {
        return Ok(());
    };
    let claimed = claims.cpus();
    let taken = given.intersection(&claimed);
    if taken.is_empty() {
        return Ok(());
    }
    let free = online.difference(&claimed).difference(chosen);
    Err(crate::error::Error::new(
        crate::error::ErrorCode::CpuClaimed,
        format!(
            "--irq-housekeeping: {} claimed by another launch ({}): its IRQs would be moved onto CPUs it keeps quiet",
            crate::words::cpus_phrase(&taken),
            claims.describe(&taken)
        ),
    )
    .hint(if free.is_empty() {
        "no online CPU is free of claims: leave --irq-housekeeping out, or stop a holder".to_string()
    } else {
        format!(
            "name CPUs no launch claims (--irq-housekeeping {}), or leave it out: pinrun then takes the unclaimed housekeeping CPUs",
            free.to_list()
        )
    }))
}

/// The IRQs of `irqs` on `chosen` whose kind debugfs did not tell: those
/// to ask the kernel about with a test write
/// ([`crate::steer::read::test_write`]) before planning.
pub fn to_ask(irqs: &[SteerIrq], chosen: &CpuSet) -> Vec<u32> {
    irqs.iter()
        .filter(|i| i.managed.is_none())
        .filter(|i| {
            i.affinity
                .as_ref()
                .or(i.effective.as_ref())
                .is_some_and(|a| a.intersects(chosen))
        })
        .map(|i| i.number)
        .collect()
}

/// What steering knows of IRQ `irq`: `Some(true)` when it stays on the
/// claimed CPUs as kernel-managed, `Some(false)` when it is moved or stays
/// for another reason, `None` when the plan does not list it (for
/// `--probe`'s sources).
pub fn managed(p: &SteerPlan, irq: u32) -> Option<bool> {
    if let Some(u) = p.unmovable.iter().find(|u| u.irq == irq) {
        return Some(u.managed == Some(true));
    }
    p.moves.iter().any(|m| m.irq == irq).then_some(false)
}

/// The housekeeping CPUs for an IRQ of `node`: those of the node when
/// there are any, else all of them.
fn near(hk: &CpuSet, node: Option<u32>, node_cpus: &dyn Fn(u32) -> Option<CpuSet>) -> CpuSet {
    node.and_then(node_cpus)
        .map(|c| c.intersection(hk))
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| hk.clone())
}

/// Plans moving every IRQ of `irqs` off `chosen`, with `hk` as the
/// fallback; `node_cpus` gives a node's CPUs; `default` is
/// `default_smp_affinity`. What is written is only ever online CPUs: an
/// affinity may name CPUs beyond the online (even the possible) ones,
/// which a write refuses (`irq_do_set_affinity()`: EINVAL without an
/// online CPU; `bitmap_parselist()`: ERANGE beyond `nr_cpu_ids`).
pub fn plan(
    irqs: &[SteerIrq],
    default: Option<&CpuSet>,
    online: &CpuSet,
    chosen: &CpuSet,
    hk: &CpuSet,
    node_cpus: &dyn Fn(u32) -> Option<CpuSet>,
) -> SteerPlan {
    let mut p = SteerPlan {
        cpus: chosen.clone(),
        housekeeping: hk.clone(),
        ..Default::default()
    };
    for irq in irqs {
        let Some(from) = irq.affinity.as_ref().or(irq.effective.as_ref()) else {
            continue;
        };
        if !from.intersects(chosen) {
            continue;
        }
        let stays = |why: &str, managed: Option<bool>| Unmovable {
            irq: irq.number,
            name: irq.name.clone(),
            cpus: from.clone(),
            why: why.to_string(),
            managed,
        };
        if irq.managed == Some(true) {
            p.unmovable.push(stays(
                "kernel-managed (its affinity is the kernel's: irq_can_set_affinity_usr() refuses writes with EIO); isolcpus=managed_irq keeps such IRQs off isolated CPUs",
                Some(true),
            ));
            continue;
        }
        if irq.managed.is_none() && irq.kernel_keeps == Some(true) {
            let msi = irq.chip.as_deref().is_some_and(|c| c.contains("MSI"));
            p.unmovable.push(if msi {
                stays(
                    "kernel-managed (the kernel refused a test write with EIO, EPERM on some kernels: write_irq_affinity(), irq_can_set_affinity_usr(); an MSI IRQ it does not manage is movable); isolcpus=managed_irq keeps such IRQs off isolated CPUs",
                    Some(true),
                )
            } else {
                stays(
                    "the kernel keeps it (it refused a test write with EIO, EPERM on some kernels: write_irq_affinity(), irq_can_set_affinity_usr(): per-CPU, not balanceable or kernel-managed)",
                    None,
                )
            });
            continue;
        }
        let rest = from.difference(chosen).intersection(online);
        let (to, housekeeping) = if rest.is_empty() {
            (near(hk, irq.node, node_cpus), true)
        } else {
            (rest, false)
        };
        if to.is_empty() {
            p.unmovable.push(stays(
                "no housekeeping CPU to move to (every online CPU is isolated, nohz_full or claimed)",
                Some(false),
            ));
            continue;
        }
        p.moves.push(Move {
            irq: irq.number,
            name: irq.name.clone(),
            from: from.clone(),
            to,
            housekeeping,
            // The kernel parsed the test write: it does not manage it.
            managed: irq.managed.or(irq.kernel_keeps),
        });
    }
    if let Some(d) = default.filter(|d| d.intersects(chosen)) {
        let rest = d.difference(chosen).intersection(online);
        let to = if rest.is_empty() { hk.clone() } else { rest };
        if !to.is_empty() {
            p.default = Some((d.clone(), to));
        }
    }
    p
}

/// The targets to try, in order, after the kernel found no free vector
/// (ENOSPC) on `m.to`: the housekeeping CPUs of the IRQ's node, all of
/// them, then each housekeeping CPU alone; never `m.to` again, never a
/// chosen CPU.
pub fn fallbacks(
    m: &Move,
    node: Option<u32>,
    hk: &CpuSet,
    node_cpus: &dyn Fn(u32) -> Option<CpuSet>,
) -> Vec<CpuSet> {
    let mut out: Vec<CpuSet> = Vec::new();
    let singles = hk.iter().map(|c| {
        let mut s = CpuSet::new();
        s.insert(c);
        s
    });
    for t in [near(hk, node, node_cpus), hk.clone()]
        .into_iter()
        .chain(singles)
    {
        if !t.is_empty() && t != m.to && !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// One IRQ at the end of a steering claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoStep {
    /// Write `to` (the original minus the CPUs other live steering
    /// claims still hold).
    Restore {
        /// The IRQ number.
        irq: u32,
        /// Its name.
        name: String,
        /// What to write.
        to: CpuSet,
        /// Its effective affinity before steering (the journal's
        /// `effective`), when known: see [`pre_write`].
        effective: Option<CpuSet>,
    },
    /// Someone else changed it since: left alone.
    Foreign {
        /// The IRQ number.
        irq: u32,
        /// Its name.
        name: String,
        /// Its affinity now.
        now: CpuSet,
        /// What steering wrote.
        written: CpuSet,
    },
    /// Other live steering claims hold every CPU of the original: it stays
    /// as it is until the last one ends.
    Kept {
        /// The IRQ number.
        irq: u32,
    },
    /// Its affinity is still the original: the launch ended before
    /// writing it (a crash between the journal and the write), or the
    /// kernel refused the write.
    Unchanged {
        /// The IRQ number.
        irq: u32,
    },
    /// The IRQ no longer exists (its device went away).
    Gone {
        /// The IRQ number.
        irq: u32,
    },
}

/// What ending a steering claim does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undo {
    /// Per IRQ of the journal, in its order.
    pub steps: Vec<UndoStep>,
    /// `default_smp_affinity` to write, if any.
    pub default: Option<CpuSet>,
    /// `default_smp_affinity` changed by someone else since (now, written).
    pub default_foreign: Option<(CpuSet, CpuSet)>,
    /// The other live journals, updated (written lists after this undo;
    /// originals that were this claim's writes become this claim's
    /// originals): rewrite those that changed.
    pub others: Vec<Journal>,
    /// The ended journal with each IRQ (and the default mask) pinrun
    /// holds written as it is now: saved with `others` before any write,
    /// a crash before the writes leaves a journal whose rerun finds them
    /// pinrun's.
    pub ended: Journal,
}

/// What an undo writes to an IRQ's `smp_affinity_list` before `to`, so
/// that the IRQ fires again on the CPU(s) it fired on before steering
/// (`was`, the journal's effective affinity): x86 keeps an IRQ's current
/// target when it is in the new mask (`assign_vector_locked()` in
/// arch/x86/kernel/apic/vector.c: "no point in moving the interrupt"), so
/// writing `to` alone would leave it on the CPU steering moved it to.
/// `Some(was)` when `was` is known, non-empty, inside `to` and `online`,
/// and differs from the effective affinity now (`now`, `None` when the
/// kernel does not show one: nothing to put back then).
pub fn pre_write(
    was: Option<&CpuSet>,
    to: &CpuSet,
    online: &CpuSet,
    now: Option<&CpuSet>,
) -> Option<CpuSet> {
    let (was, now) = (was?, now?);
    (!was.is_empty() && was.is_subset(to) && was.is_subset(online) && was != now)
        .then(|| was.clone())
}

/// The undo's report when the IRQ `irq` (`name`) was written `was` (see
/// [`pre_write`]) but its effective affinity did not follow within
/// `waited_ms` milliseconds (x86 moves a non-PCNTXT IRQ at its next
/// interrupt, `irq_move_masked_irq()`): it now fires on `now`.
pub fn not_back(irq: u32, name: &str, now: &CpuSet, was: &CpuSet, waited_ms: u64) -> String {
    format!(
        "IRQ {irq} ({name}) now fires on {} (was {} before steering): its next interrupt did not come within {waited_ms} ms",
        crate::words::cpus_phrase(now),
        crate::words::cpus_phrase(was)
    )
}

fn list(s: &str) -> CpuSet {
    CpuSet::parse(s).unwrap_or_default()
}

/// Hands IRQ `e` of an ending claim to the live claims `others` once the
/// undo leaves it at `stays`: a claim that already journaled it takes
/// the ended claim's original when its own was the ended claim's write,
/// and `stays` as what was written; a claim without an entry whose CPUs
/// keep CPUs of the original out of `stays` gets one (the original and
/// `stays`). Whichever live claim ends last then restores the original,
/// and the caller saves `others` before it writes `stays` (write-ahead).
/// Returns the true original.
fn adopt(others: &mut [Journal], e: &crate::steer::JournalIrq, stays: &CpuSet) -> String {
    let pairs: Vec<(String, String)> = others
        .iter()
        .flat_map(|o| &o.irqs)
        .filter(|oe| oe.irq == e.irq)
        .map(|oe| (oe.original.clone(), oe.written.clone()))
        .collect();
    let (root, chain) = chain_root(&e.original, &e.written, &pairs);
    let orig = list(&root);
    for o in others.iter_mut() {
        let narrows = o.cpu_set().intersects(&orig);
        match o.irqs.iter_mut().find(|oe| oe.irq == e.irq) {
            Some(oe) => {
                if chain.contains(&oe.original) {
                    oe.original = root.clone();
                    // Where it fired before steering goes with the
                    // original it was journaled with.
                    if e.original == root {
                        oe.effective = e.effective.clone();
                    }
                }
                oe.written = stays.to_list();
            }
            None if narrows => o.irqs.push(crate::steer::JournalIrq {
                irq: e.irq,
                name: e.name.clone(),
                original: root.clone(),
                written: stays.to_list(),
                effective: (e.original == root).then(|| e.effective.clone()).flatten(),
            }),
            None => {}
        }
    }
    root
}

/// The original of the chain of steering writes an ended claim's
/// `original`/`written` belongs to, with `pairs` the live claims'
/// (original, written) for the same IRQ or mask: a claim launched after
/// another journaled that one's write as its original, so the true
/// original is found by following originals back through writes. Returns
/// it and every value of the chain (what a live claim may hold as its
/// original and must replace by the true one).
fn chain_root(original: &str, written: &str, pairs: &[(String, String)]) -> (String, Vec<String>) {
    let mut root = original.to_string();
    let mut chain = vec![written.to_string(), root.clone()];
    for _ in 0..pairs.len() {
        match pairs
            .iter()
            .find(|(o, w)| *w == root && *o != root && !chain.contains(o))
        {
            Some((o, _)) => {
                root = o.clone();
                chain.push(root.clone());
            }
            None => break,
        }
    }
    // And forward: a claim launched after another journaled its write.
    for _ in 0..pairs.len() {
        match pairs
            .iter()
            .find(|(o, w)| chain.contains(o) && !chain.contains(w))
        {
            Some((_, w)) => chain.push(w.clone()),
            None => break,
        }
    }
    (root, chain)
}

/// Ends the steering of `ended`, with `others` the journals of the
/// steering claims still live; `current` reads an IRQ's
/// `smp_affinity_list` now, `current_default` the default mask. An IRQ is
/// pinrun's when its affinity is what `ended` or another live claim wrote;
/// it gets `original − CPUs of the other live claims` (left as it is when
/// that is empty). Any other affinity is a foreign edit, left alone.
/// What stays narrowed is handed to the live claims (`adopt`) and the
/// ended journal records what each IRQ is now ([`Undo::ended`]): the
/// caller syncs both before its writes.
pub fn undo(
    ended: &Journal,
    others: &[Journal],
    current: &dyn Fn(u32) -> Option<CpuSet>,
    current_default: Option<&CpuSet>,
) -> Undo {
    let held = others
        .iter()
        .fold(CpuSet::new(), |acc, o| acc.union(&o.cpu_set()));
    let mut others = others.to_vec();
    let mut u = Undo {
        steps: Vec::new(),
        default: None,
        default_foreign: None,
        others: Vec::new(),
        ended: ended.clone(),
    };
    for (i, e) in ended.irqs.iter().enumerate() {
        let step = undo_irq(e, current(e.irq), &held, &mut others, &mut u.ended.irqs[i]);
        u.steps.push(step);
    }
    undo_default(ended, current_default, &held, &mut others, &mut u);
    u.others = others;
    u
}

/// The undo of IRQ `e` of an ended journal, its affinity `now` (`None`:
/// gone), with `held` the CPUs of the live claims `others`: unchanged
/// when it is the original; foreign when it is neither what a claim wrote
/// nor an interrupted undo's pre-write ([`pre_write`]); else pinrun's,
/// and `entry` (the ended journal's copy) records it as written now, the
/// IRQ handed to `others` ([`adopt`]) at what it keeps, and it is kept
/// (the live claims hold every CPU of its original) or restored to
/// `original − held`.
fn undo_irq(
    e: &crate::steer::JournalIrq,
    now: Option<CpuSet>,
    held: &CpuSet,
    others: &mut [Journal],
    entry: &mut crate::steer::JournalIrq,
) -> UndoStep {
    let Some(now) = now else {
        return UndoStep::Gone { irq: e.irq };
    };
    let written = list(&e.written);
    if now == list(&e.original) {
        return UndoStep::Unchanged { irq: e.irq };
    }
    // An undo interrupted between its pre-write (the effective
    // affinity before steering, [`pre_write`]) and its restore left
    // that: still pinrun's.
    let pre_written = e
        .effective
        .as_deref()
        .map(list)
        .is_some_and(|w| !w.is_empty() && w == now && w.is_subset(&list(&e.original)));
    let ours = now == written
        || pre_written
        || others
            .iter()
            .flat_map(|o| &o.irqs)
            .any(|oe| oe.irq == e.irq && list(&oe.written) == now);
    if !ours {
        return UndoStep::Foreign {
            irq: e.irq,
            name: e.name.clone(),
            now,
            written,
        };
    }
    entry.written = now.to_list();
    let to = list(&e.original).difference(held);
    // What the IRQ keeps after this undo: `to`, or what it is now
    // when the other claims hold every CPU of the original.
    let stays = if to.is_empty() {
        now.clone()
    } else {
        to.clone()
    };
    entry.original = adopt(others, e, &stays);
    if to.is_empty() {
        return UndoStep::Kept { irq: e.irq };
    }
    UndoStep::Restore {
        irq: e.irq,
        name: e.name.clone(),
        to,
        effective: e.effective.as_deref().and_then(|l| CpuSet::parse(l).ok()),
    }
}

/// The undo of the default mask of `ended`, when it journaled one, with
/// `now` the mask now (`current_default`) and `held` the CPUs of the live
/// claims `others`: foreign (in `u.default_foreign`) when it is neither
/// the original nor what a claim wrote; else, unless it is the original
/// already, `u.ended` records it as written now and its true original,
/// the mask is handed to `others` ([`adopt_default`]) and restored to
/// `original − held` (`u.default`) unless that is empty.
fn undo_default(
    ended: &Journal,
    current_default: Option<&CpuSet>,
    held: &CpuSet,
    others: &mut [Journal],
    u: &mut Undo,
) {
    let (Some(orig), Some(written)) = (&ended.default_original, &ended.default_written) else {
        return;
    };
    let written = list(written);
    let now = current_default.cloned().unwrap_or_default();
    // Never written (a launch killed before its default write) or
    // already back: nothing to do, as for an IRQ.
    let unchanged = now == list(orig);
    let ours = unchanged
        || now == written
        || others
            .iter()
            .any(|o| o.default_written.as_deref().map(list) == Some(now.clone()));
    if !ours {
        u.default_foreign = Some((now, written));
        return;
    }
    let to = list(orig).difference(held);
    if unchanged {
        return;
    }
    u.ended.default_written = Some(now.to_list());
    let stays = if to.is_empty() {
        now.clone()
    } else {
        to.clone()
    };
    u.ended.default_original = Some(adopt_default(others, orig, &written, &stays));
    if !to.is_empty() {
        u.default = Some(to);
    }
}

/// Hands the default mask of an ending claim (its `orig`inal and
/// `written`) to the live claims `others` once the undo leaves it at
/// `stays`, as [`adopt`] does an IRQ: a claim that wrote the mask takes
/// the true original when its own is of the chain ([`chain_root`]) and
/// `stays` as written; a live claim that keeps CPUs of the original out
/// of the mask owns it from now on (its end restores the original).
/// Returns the true original.
fn adopt_default(others: &mut [Journal], orig: &str, written: &CpuSet, stays: &CpuSet) -> String {
    let pairs: Vec<(String, String)> = others
        .iter()
        .filter_map(|o| Some((o.default_original.clone()?, o.default_written.clone()?)))
        .collect();
    let (root, chain) = chain_root(orig, &written.to_list(), &pairs);
    let orig_set = list(&root);
    for o in others.iter_mut() {
        if o.default_written.is_some() {
            if o.default_original
                .as_ref()
                .is_some_and(|d| chain.contains(d))
            {
                o.default_original = Some(root.clone());
            }
            o.default_written = Some(stays.to_list());
        } else if o.cpu_set().intersects(&orig_set) {
            // A live claim that keeps CPUs out of the mask owns
            // it from now on: its end restores the original.
            o.default_original = Some(root.clone());
            o.default_written = Some(stays.to_list());
        }
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steer::JournalIrq;
    use crate::testkit::cpus;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    fn irq(n: u32, aff: &str, managed: Option<bool>, node: Option<u32>) -> SteerIrq {
        SteerIrq {
            number: n,
            name: format!("dev{n}"),
            affinity: Some(cpus(aff)),
            effective: None,
            node,
            managed,
            kernel_keeps: None,
            chip: None,
        }
    }

    fn nodes(n: u32) -> Option<CpuSet> {
        match n {
            0 => Some(cpus("0-3")),
            1 => Some(cpus("4-7")),
            _ => None,
        }
    }

    fn banned(pid: u32, start: u64, claimed: &str, original: &str) -> Journal {
        let mut j = Journal::new(pid, start, &cpus(claimed));
        let written = ban_for_launch(&cpus(original), &cpus(claimed));
        j.irqbalance = Some(crate::steer::JournalBan {
            pid: 900,
            original: original.into(),
            default: "4-7".into(),
            written: written.to_list(),
        });
        j
    }

    /// Two overlapping claims on one irqbalance whose own ban is 4-7: A
    /// (CPUs 16-17) bans 4-7,16-17; B (CPUs 17-18) reads that and bans
    /// 4-7,16-18. A ends first: the ban becomes 4-7,17-18 (B still holds
    /// 17-18) and B's journal learns A's original; B ends: 4-7 again. In
    /// the other order the same. A foreign change in between is left alone.
    #[test]
    fn irqbalance_ban_composes_with_live_claims() {
        let a = banned(1, 1, "16-17", "4-7");
        let b = banned(2, 2, "17-18", "4-7,16-17");
        let mut others = vec![b.clone()];
        let u = undo_ban(&a, &mut others, &cpus("4-7,16-18")).unwrap();
        assert_eq!(u, BanUndo::Restore(cpus("4-7,17-18")));
        let b2 = &others[0];
        let bb = b2.irqbalance.as_ref().unwrap();
        assert_eq!(
            (bb.original.as_str(), bb.written.as_str()),
            ("4-7", "4-7,17-18")
        );
        let u = undo_ban(b2, &mut [], &cpus("4-7,17-18")).unwrap();
        assert_eq!(u, BanUndo::Restore(cpus("4-7")));
        // B ends first: A still holds 16-17.
        let mut others = vec![a.clone()];
        let u = undo_ban(&b, &mut others, &cpus("4-7,16-18")).unwrap();
        assert_eq!(u, BanUndo::Restore(cpus("4-7,16-17")));
        let u = undo_ban(&others[0], &mut [], &cpus("4-7,16-17")).unwrap();
        assert_eq!(u, BanUndo::Restore(cpus("4-7")));
        // Someone set the ban to 4-9 while both ran: A's end leaves it,
        // and so does B's.
        let mut others = vec![b.clone()];
        let u = undo_ban(&a, &mut others, &cpus("4-9")).unwrap();
        assert_eq!(u, BanUndo::Foreign(cpus("4-9"), cpus("4-7,16-17")));
        assert_eq!(others[0], b);
        assert!(matches!(
            undo_ban(&b, &mut [], &cpus("4-9")),
            Some(BanUndo::Foreign(..))
        ));
        // A crash after the journal, before the command or before
        // irqbalance showed it (its setup lags a taken `settings cpus`
        // until its next rescan): the original is sent all the same.
        assert_eq!(
            undo_ban(&a, &mut [], &cpus("4-7")),
            Some(BanUndo::Restore(cpus("4-7")))
        );
        // Another daemon's claim does not hold CPUs in this one's ban.
        let mut c = banned(3, 3, "20", "4-7");
        c.irqbalance.as_mut().unwrap().pid = 901;
        let u = undo_ban(&a, &mut [c], &cpus("4-7,16-17")).unwrap();
        assert_eq!(u, BanUndo::Restore(cpus("4-7")));
        // No ban journaled: nothing to do.
        assert_eq!(
            undo_ban(&Journal::new(1, 1, &cpus("1")), &mut [], &cpus("4")),
            None
        );
    }

    /// A journal of launch `pid` that edited `/etc/default/irqbalance`
    /// (`original`, the daemon's own ban `ban`) and wrote `written`.
    fn configured(pid: u32, claimed: &str, original: &str, ban: &str, written: &str) -> Journal {
        let mut j = Journal::new(pid, pid.into(), &cpus(claimed));
        j.irqbalance_config = Some(crate::steer::JournalConfig {
            pid: 700,
            path: "/etc/default/irqbalance".into(),
            original: original.into(),
            ban: ban.into(),
            written: written.into(),
        });
        j
    }

    /// Two launches edit one file: A claims 16-17 (writes F0 + ban
    /// 4-7,16-17), B then 18 (writes ban 4-7,16-18; both journals keep
    /// the first original F0 and the last write). A ends: F0 edited to ban
    /// 4-7,18, B's journal learns that write; B ends: F0 byte for byte.
    /// The other order likewise. A file someone edited meanwhile is left
    /// alone by both; a crash before the write needs no restore.
    #[test]
    fn irqbalance_config_undo_composes_with_live_claims() {
        let f0 = "# shipped\nIRQBALANCE_ARGS=\"\"\n";
        let ed = |b: &str| crate::steer::config_edit(f0, &cpus(b)).unwrap();
        let a = configured(1, "16-17", f0, "4-7", &ed("4-7,16-18"));
        let b = configured(2, "18", f0, "4-7", &ed("4-7,16-18"));
        let mut others = vec![b.clone()];
        let u = undo_config(&a, &mut others, &ed("4-7,16-18")).unwrap();
        assert_eq!(u, ConfigUndo::Restore(ed("4-7,18")));
        let b2 = others[0].clone();
        assert_eq!(b2.irqbalance_config.as_ref().unwrap().written, ed("4-7,18"));
        assert_eq!(
            undo_config(&b2, &mut [], &ed("4-7,18")),
            Some(ConfigUndo::Restore(f0.into()))
        );
        // B ends first.
        let mut others = vec![a.clone()];
        assert_eq!(
            undo_config(&b, &mut others, &ed("4-7,16-18")),
            Some(ConfigUndo::Restore(ed("4-7,16-17")))
        );
        assert_eq!(
            undo_config(&others[0], &mut [], &ed("4-7,16-17")),
            Some(ConfigUndo::Restore(f0.into()))
        );
        // An administrator's edit in between: left alone, journals as they were.
        let foreign = format!("{f0}IRQBALANCE_BANNED_CPULIST=2\n");
        let mut others = vec![b.clone()];
        assert_eq!(
            undo_config(&a, &mut others, &foreign),
            Some(ConfigUndo::Foreign)
        );
        assert_eq!(others[0], b);
        assert_eq!(
            undo_config(&b, &mut [], &foreign),
            Some(ConfigUndo::Foreign)
        );
        // Killed after the journal, before the file was written.
        let c = configured(3, "16-17", f0, "4-7", &ed("4-7,16-17"));
        assert_eq!(undo_config(&c, &mut [], f0), Some(ConfigUndo::Unchanged));
        // Another file's claim holds nothing here; no edit: nothing to do.
        let mut d = configured(4, "20", f0, "4-7", &ed("4-7,20"));
        d.irqbalance_config.as_mut().unwrap().path = "/etc/sysconfig/irqbalance".into();
        assert_eq!(
            undo_config(&c, &mut [d], &ed("4-7,16-17")),
            Some(ConfigUndo::Restore(f0.into()))
        );
        assert_eq!(
            undo_config(&Journal::new(1, 1, &cpus("1")), &mut [], f0),
            None
        );
    }

    #[test]
    fn housekeeping_excludes_isolated_nohz_claimed_chosen() {
        let hk = housekeeping(
            None,
            &cpus("0-7"),
            &cpus("6"),
            &cpus("7"),
            &cpus("5"),
            &cpus("2-3"),
        );
        assert_eq!(hk, cpus("0-1,4"));
        let given = cpus("1,2");
        assert_eq!(
            housekeeping(
                Some(&given),
                &cpus("0-7"),
                &CpuSet::new(),
                &CpuSet::new(),
                &CpuSet::new(),
                &cpus("2")
            ),
            cpus("1")
        );
    }

    #[test]
    fn plan_moves_off_chosen_and_falls_back_to_the_node() {
        let irqs = [
            irq(10, "0-7", Some(false), Some(0)),
            irq(11, "2", None, Some(1)),
            irq(12, "2", None, Some(0)),
            irq(13, "2-3", Some(true), Some(0)),
            irq(14, "5", None, None),
            irq(15, "3", None, Some(9)),
        ];
        let hk = cpus("0,1,4,5");
        let p = plan(
            &irqs,
            Some(&cpus("0-7")),
            &cpus("0-7"),
            &cpus("2-3"),
            &hk,
            &nodes,
        );
        let moves: Vec<(u32, String, bool)> = p
            .moves
            .iter()
            .map(|m| (m.irq, m.to.to_list(), m.housekeeping))
            .collect();
        assert_eq!(
            moves,
            vec![
                (10, "0-1,4-7".into(), false),
                (11, "4-5".into(), true),
                (12, "0-1".into(), true),
                (15, "0-1,4-5".into(), true),
            ]
        );
        assert_eq!(p.unmovable.len(), 1);
        assert_eq!(p.unmovable[0].irq, 13);
        assert!(p.unmovable[0].why.starts_with("kernel-managed"));
        assert_eq!(p.default, Some((cpus("0-7"), cpus("0-1,4-7"))));
        // No housekeeping CPU: reported, not moved.
        let p = plan(
            &irqs[1..2],
            None,
            &cpus("0-7"),
            &cpus("2"),
            &CpuSet::new(),
            &nodes,
        );
        assert!(p.moves.is_empty());
        assert!(p.unmovable[0].why.contains("no housekeeping CPU"));
    }

    /// The IRQs of the NVMe guest (vm/scenarios/steer-nvme.sh: 32 CPUs,
    /// no debugfs) on claimed CPUs 16-17, with the kernel's answers to the
    /// test write as the guest's shell got them: the managed queue IRQs
    /// (PCI-MSI, EIO) and the timer (IO-APIC, EIO) stay, named as such;
    /// the admin queue and a root port (PCI-MSI, EINVAL) move, known
    /// unmanaged; an IRQ not asked stays unknown.
    #[test]
    fn the_kernels_answer_decides_without_debugfs() {
        let asked = |n: u32, aff: &str, name: &str, chip: &str, keeps: Option<bool>| SteerIrq {
            name: name.into(),
            chip: Some(chip.into()),
            kernel_keeps: keeps,
            ..irq(n, aff, None, Some(0))
        };
        let irqs = [
            asked(0, "0-31", "timer", "IO-APIC", Some(true)),
            asked(24, "0-31", "aerdrv", "PCI-MSI", Some(false)),
            asked(32, "16", "nvme0q0", "PCI-MSI", Some(false)),
            asked(41, "16", "nvme0q9", "PCI-MSI", Some(true)),
            asked(42, "17", "nvme0q10", "IR-PCI-MSIX-0000:01:00.0", Some(true)),
            asked(43, "18", "nvme0q11", "PCI-MSI", Some(true)),
            irq(5, "0-31", None, None),
        ];
        let chosen = cpus("16-17");
        assert_eq!(to_ask(&irqs, &chosen), vec![0, 24, 32, 41, 42, 5]);
        let p = plan(&irqs, None, &cpus("0-31"), &chosen, &cpus("0-3"), &nodes);
        let moves: Vec<(u32, Option<bool>)> = p.moves.iter().map(|m| (m.irq, m.managed)).collect();
        assert_eq!(moves, vec![(24, Some(false)), (32, Some(false)), (5, None)]);
        let stays: Vec<(u32, Option<bool>)> =
            p.unmovable.iter().map(|u| (u.irq, u.managed)).collect();
        assert_eq!(stays, vec![(0, None), (41, Some(true)), (42, Some(true))]);
        assert!(p.unmovable[0].why.starts_with("the kernel keeps it"));
        assert!(p.unmovable[1].why.starts_with("kernel-managed"));
        assert_eq!(managed(&p, 41), Some(true));
        assert_eq!(managed(&p, 0), Some(false));
        assert_eq!(managed(&p, 32), Some(false));
        assert_eq!(managed(&p, 43), None);
    }

    /// An affinity naming CPUs that are not online (a dump's 0-3 on a
    /// machine whose possible CPUs are 0-1) is never written back with
    /// them; nothing online left: the housekeeping CPUs.
    #[test]
    fn only_online_cpus_are_written() {
        let irqs = [irq(1, "0-3", None, None), irq(2, "1-3", None, None)];
        let p = plan(
            &irqs,
            Some(&cpus("0-3")),
            &cpus("0-1"),
            &cpus("1"),
            &cpus("0"),
            &nodes,
        );
        let to: Vec<String> = p.moves.iter().map(|m| m.to.to_list()).collect();
        assert_eq!(to, vec!["0", "0"]);
        assert!(p.moves[1].housekeeping);
        assert_eq!(p.default, Some((cpus("0-3"), cpus("0"))));
    }

    #[test]
    fn enospc_fallbacks_never_repeat_or_touch_chosen() {
        let m = Move {
            irq: 1,
            name: String::new(),
            from: cpus("2"),
            to: cpus("0-1"),
            housekeeping: true,
            managed: None,
        };
        let f = fallbacks(&m, Some(0), &cpus("0,1,4"), &nodes);
        let f: Vec<String> = f.iter().map(|c| c.to_list()).collect();
        assert_eq!(f, vec!["0-1,4", "0", "1", "4"]);
    }

    fn journal(pid: u32, chosen: &str, entries: &[(u32, &str, &str)]) -> Journal {
        let mut j = Journal::new(pid, 1, &cpus(chosen));
        for (irq, o, w) in entries {
            j.irqs.push(JournalIrq {
                irq: *irq,
                name: format!("dev{irq}"),
                original: o.to_string(),
                written: w.to_string(),
                effective: None,
            });
        }
        j
    }

    /// Applies an undo to a simulated /proc/irq.
    fn run(u: &Undo, hw: &RefCell<BTreeMap<u32, CpuSet>>) {
        for s in &u.steps {
            if let UndoStep::Restore { irq, to, .. } = s {
                hw.borrow_mut().insert(*irq, to.clone());
            }
        }
    }

    #[test]
    fn two_overlapping_claims_and_a_foreign_edit() {
        // IRQs 20 and 21 start on 0-3. A claims CPU 1, then B claims CPU 2.
        let hw = RefCell::new(BTreeMap::from([(20, cpus("0-3")), (21, cpus("0-3"))]));
        let a = journal(100, "1", &[(20, "0-3", "0,2-3"), (21, "0-3", "0,2-3")]);
        hw.borrow_mut().insert(20, cpus("0,2-3"));
        hw.borrow_mut().insert(21, cpus("0,2-3"));
        let b = journal(200, "2", &[(20, "0,2-3", "0,3"), (21, "0,2-3", "0,3")]);
        hw.borrow_mut().insert(20, cpus("0,3"));
        hw.borrow_mut().insert(21, cpus("0,3"));
        // Someone else sets IRQ 21 to CPU 3 alone.
        hw.borrow_mut().insert(21, cpus("3"));
        let read = |n: u32| hw.borrow().get(&n).cloned();
        // A ends first: CPU 1 comes back, CPU 2 (B's) stays excluded; 21 is
        // foreign, left alone.
        let ua = undo(&a, std::slice::from_ref(&b), &read, None);
        assert_eq!(
            ua.steps,
            vec![
                UndoStep::Restore {
                    irq: 20,
                    name: "dev20".into(),
                    to: cpus("0-1,3"),
                    effective: None,
                },
                UndoStep::Foreign {
                    irq: 21,
                    name: "dev21".into(),
                    now: cpus("3"),
                    written: cpus("0,2-3")
                },
            ]
        );
        run(&ua, &hw);
        assert_eq!(hw.borrow()[&20], cpus("0-1,3"));
        assert_eq!(hw.borrow()[&21], cpus("3"));
        // B's journal now restores A's original and knows the new write.
        let b2 = ua.others[0].clone();
        assert_eq!(b2.irqs[0].original, "0-3");
        assert_eq!(b2.irqs[0].written, "0-1,3");
        // B ends: the original of IRQ 20 is back whole; 21 still foreign.
        let read = |n: u32| hw.borrow().get(&n).cloned();
        let ub = undo(&b2, &[], &read, None);
        run(&ub, &hw);
        assert_eq!(hw.borrow()[&20], cpus("0-3"));
        assert_eq!(hw.borrow()[&21], cpus("3"));
        assert!(matches!(ub.steps[1], UndoStep::Foreign { irq: 21, .. }));
    }

    #[test]
    fn later_claim_ending_first_keeps_the_earlier_ones_cpus_out() {
        let hw = RefCell::new(BTreeMap::from([(20, cpus("0,3"))]));
        let a = journal(100, "1", &[(20, "0-3", "0,2-3")]);
        let b = journal(200, "2", &[(20, "0,2-3", "0,3")]);
        let read = |n: u32| hw.borrow().get(&n).cloned();
        let ub = undo(&b, std::slice::from_ref(&a), &read, None);
        run(&ub, &hw);
        assert_eq!(hw.borrow()[&20], cpus("0,2-3"));
        let a2 = ub.others[0].clone();
        assert_eq!(a2.irqs[0].original, "0-3");
        let read = |n: u32| hw.borrow().get(&n).cloned();
        run(&undo(&a2, &[], &read, None), &hw);
        assert_eq!(hw.borrow()[&20], cpus("0-3"));
    }

    #[test]
    fn kept_while_others_hold_every_original_cpu_and_gone_irqs() {
        let a = journal(
            100,
            "1",
            &[(20, "1", "0"), (21, "0-1", "0"), (22, "0-1", "0")],
        );
        let b = journal(200, "1", &[]);
        // 22 was never written (a crash between the journal and the write).
        let hw = BTreeMap::from([(20, cpus("0")), (22, cpus("0-1"))]);
        let u = undo(&a, &[b], &|n| hw.get(&n).cloned(), None);
        assert_eq!(
            u.steps,
            vec![
                UndoStep::Kept { irq: 20 },
                UndoStep::Gone { irq: 21 },
                UndoStep::Unchanged { irq: 22 }
            ]
        );
    }

    #[test]
    fn default_mask_restored_composed_and_foreign() {
        let mut a = journal(100, "1", &[]);
        a.default_original = Some("0-3".into());
        a.default_written = Some("0,2-3".into());
        let mut b = journal(200, "2", &[]);
        b.default_original = Some("0,2-3".into());
        b.default_written = Some("0,3".into());
        let u = undo(&a, std::slice::from_ref(&b), &|_| None, Some(&cpus("0,3")));
        assert_eq!(u.default, Some(cpus("0-1,3")));
        assert_eq!(u.others[0].default_original.as_deref(), Some("0-3"));
        let u = undo(&a, &[], &|_| None, Some(&cpus("0")));
        assert_eq!(u.default, None);
        assert_eq!(u.default_foreign, Some((cpus("0"), cpus("0,2-3"))));
        // Killed after the journal, before the default write: the mask is
        // its original: neither written nor reported as someone else's.
        let u = undo(&a, &[], &|_| None, Some(&cpus("0-3")));
        assert_eq!((u.default, u.default_foreign), (None, None));
    }

    #[test]
    fn pre_write_puts_the_irq_back_where_it_fired() {
        let online = cpus("0-1");
        // The lead's host: IRQ 42 at 0-1 fired on CPU 0; steering wrote 1,
        // it moved to CPU 1; the undo restores 0-1: write 0 first.
        assert_eq!(
            pre_write(Some(&cpus("0")), &cpus("0-1"), &online, Some(&cpus("1"))),
            Some(cpus("0"))
        );
        // Already there: nothing first.
        assert_eq!(
            pre_write(Some(&cpus("0")), &cpus("0-1"), &online, Some(&cpus("0"))),
            None
        );
        // Outside what is restored (another live claim holds CPU 0).
        assert_eq!(
            pre_write(Some(&cpus("0")), &cpus("1"), &online, Some(&cpus("1"))),
            None
        );
        // Offline now.
        assert_eq!(
            pre_write(Some(&cpus("2")), &cpus("0-3"), &online, Some(&cpus("1"))),
            None
        );
        // Unknown before (an older journal) or no effective affinity shown.
        assert_eq!(
            pre_write(None, &cpus("0-1"), &online, Some(&cpus("1"))),
            None
        );
        assert_eq!(
            pre_write(Some(&cpus("0")), &cpus("0-1"), &online, None),
            None
        );
        assert_eq!(
            not_back(42, "virtio0-input.0", &cpus("1"), &cpus("0"), 2000),
            "IRQ 42 (virtio0-input.0) now fires on CPU 1 (was CPU 0 before steering): its next interrupt did not come within 2000 ms"
        );
    }

    #[test]
    fn undo_interrupted_after_its_pre_write_is_still_pinruns() {
        let mut j = journal(1, "1", &[(42, "0-1", "1")]);
        j.irqs[0].effective = Some("0".into());
        // A crash left the pre-write "0": the restore is still done.
        let u = undo(&j, &[], &|_| Some(cpus("0")), None);
        assert_eq!(
            u.steps,
            vec![UndoStep::Restore {
                irq: 42,
                name: "dev42".into(),
                to: cpus("0-1"),
                effective: Some(cpus("0")),
            }]
        );
        // Without the journaled effective affinity, "0" is a foreign edit.
        j.irqs[0].effective = None;
        let u = undo(&j, &[], &|_| Some(cpus("0")), None);
        assert!(matches!(u.steps[0], UndoStep::Foreign { .. }));
    }

    /// A simulated host for the end-order tests: IRQs, the default mask
    /// and the journals of the steering launches, each live or ended.
    struct Host {
        all: CpuSet,
        hw: BTreeMap<u32, CpuSet>,
        default: CpuSet,
        js: Vec<(Journal, bool)>,
    }

    impl Host {
        /// A launch claiming `c`: moves each IRQ (and the default mask) off
        /// `c` to the CPUs no live claim holds; with none left (no
        /// housekeeping CPU) it writes nothing and journals nothing.
        fn launch(&mut self, pid: u32, c: &str) {
            let c = cpus(c);
            let held = self
                .js
                .iter()
                .filter(|(_, live)| *live)
                .fold(c.clone(), |a, (j, _)| a.union(&j.cpu_set()));
            let hk = self.all.difference(&held);
            let mut j = Journal::new(pid, 1, &c);
            if !hk.is_empty() {
                for (irq, now) in self.hw.iter_mut() {
                    if now.intersects(&c) {
                        let mut to = now.difference(&held);
                        if to.is_empty() {
                            to = hk.clone();
                        }
                        j.irqs.push(JournalIrq {
                            irq: *irq,
                            name: format!("dev{irq}"),
                            original: now.to_list(),
                            written: to.to_list(),
                            effective: None,
                        });
                        *now = to;
                    }
                }
                if self.default.intersects(&c) {
                    let mut to = self.default.difference(&held);
                    if to.is_empty() {
                        to = hk.clone();
                    }
                    j.default_original = Some(self.default.to_list());
                    j.default_written = Some(to.to_list());
                    self.default = to;
                }
            }
            self.js.push((j, true));
        }

        /// Launch `pid` ends: every ended journal is finished (its own
        /// last), composed with the live ones, as `undo_ended` does; with
        /// `crash`, the own undo stops after handing over (journals
        /// saved, nothing written, its journal left).
        fn end(&mut self, pid: u32, crash: bool) {
            for (j, live) in &mut self.js {
                if j.pid == pid {
                    *live = false;
                }
            }
            let mut order: Vec<u32> = self
                .js
                .iter()
                .filter(|(j, live)| !*live && j.pid != pid)
                .map(|(j, _)| j.pid)
                .collect();
            order.push(pid);
            for p in order {
                let i = self.js.iter().position(|(j, _)| j.pid == p).unwrap();
                let ended = self.js[i].0.clone();
                let live: Vec<usize> = (0..self.js.len()).filter(|k| *k != i).collect();
                let others: Vec<Journal> = live.iter().map(|k| self.js[*k].0.clone()).collect();
                let hw = self.hw.clone();
                let u = undo(
                    &ended,
                    &others,
                    &|n| hw.get(&n).cloned(),
                    Some(&self.default),
                );
                for (k, o) in live.iter().zip(u.others) {
                    self.js[*k].0 = o;
                }
                if crash && p == pid {
                    self.js[i].0 = u.ended;
                    return;
                }
                for st in &u.steps {
                    if let UndoStep::Restore { irq, to, .. } = st {
                        self.hw.insert(*irq, to.clone());
                    }
                }
                if let Some(d) = u.default {
                    self.default = d;
                }
                self.js.remove(i);
            }
        }
    }

    fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 1 {
            return vec![vec![0]];
        }
        let mut out = Vec::new();
        for p in permutations(n - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, n - 1);
                out.push(q);
            }
        }
        out
    }

    /// Break test: two `--exclusive --steer-irqs` launches on a 2-CPU host,
    /// the second with no housekeeping CPU (an empty journal); the first
    /// ending first narrowed every IRQ to CPU 0 and nobody owned it. Every
    /// end order of two and three claims, with and without housekeeping
    /// CPUs, with a crash of any undo between its hand-over and its
    /// writes, ends with every IRQ and the default mask at the original.
    #[test]
    fn every_end_order_restores_the_originals() {
        let cases: [(&str, &str, &[&str]); 5] = [
            ("0-1", "0-1", &["0", "1"]),
            ("0-3", "0-3", &["1", "2"]),
            ("0-3", "0-2", &["0", "1", "2"]),
            ("0-2", "0-2", &["0", "1", "2"]),
            ("0-3", "0-3", &["0-1", "2", "1-2"]),
        ];
        for (all, orig, claims) in cases {
            for order in permutations(claims.len()) {
                for crash in [None, Some(0), Some(1)] {
                    let mut h = Host {
                        all: cpus(all),
                        hw: BTreeMap::from([(20, cpus(orig)), (21, cpus("0")), (22, cpus(all))]),
                        default: cpus(all),
                        js: Vec::new(),
                    };
                    for (i, c) in claims.iter().enumerate() {
                        h.launch(100 + i as u32, c);
                    }
                    for (step, i) in order.iter().enumerate() {
                        h.end(100 + *i as u32, crash == Some(step));
                    }
                    // --reclaim after the last end (a crash leaves a journal).
                    let left: Vec<u32> = h.js.iter().map(|(j, _)| j.pid).collect();
                    for p in left {
                        h.end(p, false);
                    }
                    let why =
                        format!("{all} claims {claims:?} end order {order:?} crash {crash:?}");
                    assert!(h.js.is_empty(), "{why}");
                    assert_eq!(h.hw[&20], cpus(orig), "{why}");
                    assert_eq!(h.hw[&21], cpus("0"), "{why}");
                    assert_eq!(h.hw[&22], cpus(all), "{why}");
                    assert_eq!(h.default, cpus(all), "{why}");
                }
            }
        }
    }

    /// The second claim without housekeeping CPUs takes over what the
    /// first one's end narrows: an entry with the true original, so a
    /// foreign edit after the hand-over is still left alone.
    #[test]
    fn a_narrowing_undo_hands_the_irq_to_the_live_claim() {
        let mut a = journal(100, "0", &[(20, "0-1", "1")]);
        a.default_original = Some("0-1".into());
        a.default_written = Some("1".into());
        let b = journal(200, "1", &[]);
        let hw = BTreeMap::from([(20, cpus("1"))]);
        let u = undo(
            &a,
            std::slice::from_ref(&b),
            &|n| hw.get(&n).cloned(),
            Some(&cpus("1")),
        );
        assert_eq!(
            u.steps,
            vec![UndoStep::Restore {
                irq: 20,
                name: "dev20".into(),
                to: cpus("0"),
                effective: None,
            }]
        );
        assert_eq!(u.default, Some(cpus("0")));
        let b2 = &u.others[0];
        assert_eq!(
            (b2.irqs[0].original.as_str(), b2.irqs[0].written.as_str()),
            ("0-1", "0")
        );
        assert_eq!(
            (
                b2.default_original.as_deref(),
                b2.default_written.as_deref()
            ),
            (Some("0-1"), Some("0"))
        );
        // Someone sets IRQ 20 to CPU 1 after: B's end leaves it alone.
        let hw = BTreeMap::from([(20, cpus("1"))]);
        let ub = undo(b2, &[], &|n| hw.get(&n).cloned(), Some(&cpus("0")));
        assert!(matches!(ub.steps[0], UndoStep::Foreign { irq: 20, .. }));
        assert_eq!(ub.default, Some(cpus("0-1")));
    }

    /// `--irq-housekeeping` naming a CPU another launch claims is refused
    /// (cpu-claimed), the holder named and the free CPUs offered; free
    /// CPUs, or no list, pass.
    #[test]
    fn irq_housekeeping_on_claimed_cpus_is_refused() {
        let claims = crate::testkit::kubelet("2-3");
        let online = cpus("0-7");
        let chosen = cpus("6-7");
        let refuse =
            |l: &str| refuse_claimed_housekeeping(Some(&cpus(l)), &claims, &online, &chosen);
        let e = refuse("0,3").unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::CpuClaimed);
        assert!(
            e.message
                .starts_with("--irq-housekeeping: CPU 3 claimed by another launch ("),
            "{}",
            e.message
        );
        assert_eq!(
            e.hint.as_deref(),
            Some(
                "name CPUs no launch claims (--irq-housekeeping 0-1,4-5), or leave it out: pinrun then takes the unclaimed housekeeping CPUs"
            )
        );
        assert!(refuse("0-1").is_ok());
        assert!(refuse_claimed_housekeeping(None, &claims, &online, &chosen).is_ok());
    }
}
