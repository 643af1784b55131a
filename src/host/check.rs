//! `--plan-host --check` (issue 38): how the running host differs from a
//! split, setting by setting, each judged by what the kernel enforces now
//! (its sysfs sets, PID 1's affinity, the IRQs' affinity), not by the
//! command line. Pure.

use crate::cpuset::CpuSet;
use crate::host::plan::{BootParam, HostSplit, Support};
use crate::host::read::HostFacts;
use crate::request::HostRequest;
use crate::system::SystemState;
use crate::words::or_none;

/// One setting of the split that the running host does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The setting, as the user sets it (`isolcpus=`, `CPUAffinity=`).
    pub setting: String,
    /// What the kernel shows now, and where.
    pub have: String,
    /// What the split needs.
    pub want: String,
}

/// `setting` differs when the kernel's set `have` (read from `source`) is
/// not `want`; the words name what is missing and what is extra.
fn differs(setting: &str, source: &str, have: &CpuSet, want: &CpuSet) -> Option<Difference> {
    (have != want).then(|| {
        let (missing, extra) = (want.difference(have), have.difference(want));
        let mut parts = Vec::new();
        if !missing.is_empty() {
            parts.push(format!("lacks {}", missing.to_list()));
        }
        if !extra.is_empty() {
            parts.push(format!("has {} too", extra.to_list()));
        }
        Difference {
            setting: setting.to_string(),
            have: format!("{source} = {} ({})", or_none(have), parts.join(", ")),
            want: or_none(want),
        }
    })
}

fn applies(params: &[BootParam], name: &str) -> bool {
    params
        .iter()
        .any(|p| p.name == name && !matches!(p.support, Support::No(_)))
}

/// The settings of `split` the running host lacks; empty when it matches.
/// A boot parameter this kernel would not act on ([`Support::No`]) is not
/// asked of it.
pub fn verify(
    sys: &SystemState,
    facts: &HostFacts,
    req: &HostRequest,
    split: &HostSplit,
    params: &[BootParam],
) -> Vec<Difference> {
    let mut out = Vec::new();
    let online = |s: &CpuSet| s.intersection(&sys.online);
    for (param, source, have) in [
        ("isolcpus", "cpu/isolated", &sys.isolated),
        ("nohz_full", "cpu/nohz_full", &sys.nohz_full),
    ] {
        if applies(params, param) {
            let setting = format!("{param}=");
            out.extend(differs(&setting, source, &online(have), &split.latency));
        }
    }
    if applies(params, "rcu_nocbs") {
        let (have, source) = match &sys.nocb_kthreads {
            Some(k) => (k.clone(), "CPUs with an rcuo kthread"),
            None => (
                sys.boot.rcu_nocbs_asked(&sys.nohz_full),
                "rcu_nocbs= and nohz_full= of /proc/cmdline",
            ),
        };
        if !split.latency.is_subset(&have) {
            out.push(Difference {
                setting: "rcu_nocbs=".into(),
                have: format!("{source} = {}", or_none(&have)),
                want: format!("at least {}", split.latency.to_list()),
            });
        }
    }
    if let Some(default) = &sys.irqs.default_affinity {
        out.extend(differs(
            "irqaffinity=",
            "/proc/irq/default_smp_affinity",
            &online(default),
            &split.housekeeping,
        ));
    }
    out.extend(offline_differs(req, split, sys));
    if applies(params, "nosmt") && !matches!(facts.smt_control.as_deref(), Some("off" | "forceoff"))
    {
        out.push(Difference {
            setting: "nosmt".into(),
            have: format!(
                "cpu/smt/control = {}",
                facts.smt_control.as_deref().unwrap_or("missing")
            ),
            want: "off".into(),
        });
    }
    if let Some(init) = &sys.process.init_cpus_allowed {
        out.extend(differs(
            "PID 1's affinity (systemd's CPUAffinity=)",
            "PID 1's Cpus_allowed_list",
            &online(init),
            &split.housekeeping,
        ));
    }
    out.extend(irqs_on_latency(sys, &split.latency));
    out
}

/// What [`verify`] could not read on this host (a dump without the file,
/// a file pinrun may not read): each is "not judged", never taken as
/// matching.
pub fn unreadable(sys: &SystemState) -> Vec<String> {
    let mut out = Vec::new();
    if sys.irqs.default_affinity.is_none() {
        out.push("the IRQs' default affinity (irqaffinity=): /proc/irq/default_smp_affinity could not be read".to_string());
    }
    if sys.process.init_cpus_allowed.is_none() {
        out.push(
            "PID 1's affinity (systemd's CPUAffinity=): /proc/1/status could not be read"
                .to_string(),
        );
    }
    if sys.irqs.list.is_empty() {
        out.push("the IRQs on the latency CPUs: neither /proc/interrupts nor /sys/kernel/irq could be read".to_string());
    }
    out
}

/// The offline CPUs: every CPU the split takes offline among the online
/// ones is a difference; the CPUs offline now (whose topology is gone)
/// are judged by number: without `--no-smt` there must be exactly as many
/// as `--offline-count` (with it, [`HostSplit::unjudged`] says what
/// cannot be told).
fn offline_differs(req: &HostRequest, split: &HostSplit, sys: &SystemState) -> Vec<Difference> {
    let mut out = Vec::new();
    let still_online = split.offline.intersection(&sys.online);
    if !still_online.is_empty() {
        out.push(Difference {
            setting: "offline CPUs (chcpu --disable)".into(),
            have: format!("online: {}", still_online.to_list()),
            want: format!("offline: {}", split.offline.to_list()),
        });
    }
    let now = split.already_offline.len();
    if !req.no_smt && now > req.offline as usize {
        out.push(Difference {
            setting: "offline CPUs (chcpu --disable)".into(),
            have: format!(
                "{} offline: {}",
                if now == 1 {
                    "1 CPU".to_string()
                } else {
                    format!("{now} CPUs")
                },
                split.already_offline.to_list()
            ),
            want: format!("{} (--offline-count)", req.offline),
        });
    }
    out
}

/// Device IRQs (not kernel-managed, not per-CPU) delivered to a latency
/// CPU: irqbalance's ban list or `irqaffinity=` has not kept them off.
fn irqs_on_latency(sys: &SystemState, latency: &CpuSet) -> Option<Difference> {
    let on: Vec<String> = sys
        .irqs
        .list
        .iter()
        .filter(|i| i.number.is_some() && !i.is_per_cpu() && i.managed != Some(true))
        .filter(|i| i.affinity.as_ref().is_some_and(|a| a.intersects(latency)))
        .map(|i| format!("{} ({})", i.id, i.name()))
        .collect();
    (!on.is_empty()).then(|| Difference {
        setting: "IRQBALANCE_BANNED_CPULIST= (and irqaffinity=)".into(),
        have: format!(
            "{} delivered to latency CPUs: {}",
            crate::words::count(on.len(), "device IRQ"),
            crate::words::first_of(on.into_iter(), 8)
        ),
        want: "none on the latency CPUs".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::plan::{boot_params, split};
    use crate::request::{HostRequest, HostSize};
    use crate::testkit::{Machine, cpus};

    fn settings(sys: &SystemState) -> Vec<String> {
        let req = HostRequest {
            size: HostSize::LatencyCores(2),
            offline: 0,
            no_smt: false,
            split_numa: false,
            verify: true,
        };
        let facts = HostFacts::default();
        let s = split(sys, &facts, &req).unwrap();
        let params = boot_params(sys, &facts, &s);
        verify(sys, &facts, &req, &s, &params)
            .into_iter()
            .map(|d| d.setting)
            .collect()
    }

    /// 2 packages × 2 cores × 2 threads (cores 0,4 1,5 2,6 3,7): 2 latency
    /// cores are package 1's, CPUs 2-3,6-7. A host isolating exactly them with
    /// nohz_full and the default IRQ affinity on housekeeping matches; one
    /// isolating a CPU less differs in isolcpus=, nohz_full= and rcu_nocbs=
    /// (nohz_full= offloads RCU callbacks too, `rcu_init_nohz()`), not in
    /// the IRQ affinity.
    #[test]
    fn a_host_with_the_split_matches_and_one_without_differs() {
        let mut sys = Machine::new(2, 2, 2).isolated("2-3,6-7").build();
        sys.nohz_full = cpus("2-3,6-7");
        sys.irqs.default_affinity = Some(cpus("0-1,4-5"));
        assert_eq!(settings(&sys), Vec::<String>::new());
        sys.isolated = cpus("2-3,6");
        sys.nohz_full = cpus("2-3,6");
        assert_eq!(settings(&sys), ["isolcpus=", "nohz_full=", "rcu_nocbs="]);
    }
}
