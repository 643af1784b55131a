//! `--plan-host` output (issue 38): the split, and every setting that
//! realises it in its owner's native form (the kernel command line as a
//! grubby and a GRUB line, systemd's `CPUAffinity=`, irqbalance's ban list,
//! the offline CPUs, tuned's cpu-partitioning variables, a cgroup v2
//! isolated partition, kubelet's `reservedSystemCPUs`, OpenShift's
//! PerformanceProfile); or, with `--check`, how the running host differs.
//! Text or JSON. Pure.

use crate::cpuset::CpuSet;
use crate::host::check::Difference;
use crate::host::plan::{BootParam, HostSplit, Support};
use crate::host::read::HostFacts;
use crate::words::or_none;
use serde_json::{Value, json};

/// The systemd drop-in for `CPUAffinity=` (`systemd-system.conf(5)`:
/// `system.conf.d/*.conf`).
pub const SYSTEMD_DROP_IN: &str = "/etc/systemd/system.conf.d/50-pinrun-housekeeping.conf";
/// GRUB's drop-in directory of Debian and Ubuntu (`/etc/default/grub.d`,
/// read by `update-grub`).
pub const GRUB_DROP_IN: &str = "/etc/default/grub.d/50-pinrun.cfg";
/// The tmpfiles.d file that takes the offline CPUs down at boot
/// (`tmpfiles.d(5)`, type `w`).
pub const TMPFILES_OFFLINE: &str = "/etc/tmpfiles.d/50-pinrun-offline.conf";
/// tuned's cpu-partitioning variables (`tuned-profiles-cpu-partitioning(7)`).
pub const TUNED_VARIABLES: &str = "/etc/tuned/cpu-partitioning-variables.conf";

/// One block of output: a title (where it goes) and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Short key for JSON (`kernel`, `grubby`, `grub`, `systemd`, …).
    pub key: &'static str,
    /// Where it goes and what to run after, as a comment line.
    pub title: String,
    /// The text, exactly as the owner reads it.
    pub text: String,
}

/// The kernel command line: the parameters this kernel acts on (or may:
/// [`Support::Unknown`]), space-separated.
pub fn kernel_cmdline(params: &[BootParam]) -> String {
    params
        .iter()
        .filter(|p| !matches!(p.support, Support::No(_)))
        .map(BootParam::arg)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every setting of `split`, each in its owner's form.
pub fn blocks(split: &HostSplit, params: &[BootParam], facts: &HostFacts) -> Vec<Block> {
    let cmdline = kernel_cmdline(params);
    let hk = split.housekeeping.to_list();
    let lat = split.latency.to_list();
    let mut out = vec![
        Block {
            key: "kernel",
            title: "the kernel command line (each parameter below says why)".into(),
            text: cmdline.clone(),
        },
        Block {
            key: "grubby",
            title: "Fedora, RHEL: grubby replaces a parameter already there; reboot after".into(),
            text: format!("grubby --update-kernel=ALL --args=\"{cmdline}\""),
        },
        Block {
            key: "grub",
            title: format!("Debian, Ubuntu: {GRUB_DROP_IN}, then update-grub and reboot (remove these parameters from /etc/default/grub first)"),
            text: format!("GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {cmdline}\""),
        },
        Block {
            key: "systemd",
            title: format!("{SYSTEMD_DROP_IN}: every service on housekeeping (systemd-system.conf(5)); daemon-reexec or reboot"),
            text: format!("[Manager]\nCPUAffinity={hk}"),
        },
        Block {
            key: "irqbalance",
            title: "/etc/default/irqbalance (Debian) or /etc/sysconfig/irqbalance (RHEL): irqbalance leaves the latency CPUs alone; restart irqbalance".into(),
            text: format!("IRQBALANCE_BANNED_CPULIST={lat}"),
        },
    ];
    if !split.offline.is_empty() {
        let lines: Vec<String> = split
            .offline
            .iter()
            .map(|c| format!("w /sys/devices/system/cpu/cpu{c}/online - - - - 0"))
            .collect();
        out.push(Block {
            key: "offline",
            title: format!(
                "{TMPFILES_OFFLINE}: the offline CPUs at every boot (now: chcpu --disable {})",
                split.offline.to_list()
            ),
            text: lines.join("\n"),
        });
    }
    let nohz = if params
        .iter()
        .any(|p| p.name == "nohz_full" && matches!(p.support, Support::No(_)))
    {
        "; its nohz_full= does nothing on this kernel either (see nohz_full above)"
    } else {
        ""
    };
    out.push(Block {
        key: "tuned",
        title: format!("or tuned's cpu-partitioning instead of the kernel line, systemd and irqbalance above (it sets nohz_full, rcu_nocbs, systemd's CPUAffinity and the IRQs' affinity from isolated_cores, isolcpus domain from no_balance_cores, managed_irq with isolate_managed_irq=Y, which needs a kernel with the flag; nosmt and the offline CPUs are not its: keep those{nohz}): {TUNED_VARIABLES}, then tuned-adm profile cpu-partitioning and reboot"),
        text: format!("isolated_cores={lat}\nno_balance_cores={lat}\nisolate_managed_irq=Y"),
    });
    out.push(partition_block(split, facts));
    out.push(Block {
        key: "kubelet",
        title: "Kubernetes: merge into the node's KubeletConfiguration (changing cpuManagerPolicy needs the node drained, kubelet stopped and /var/lib/kubelet/cpu_manager_state removed); a pod's exclusive CPUs are latency CPUs, isolcpus domain: the scheduler moves no thread between them, so pin each (pinrun --thread-map or --omp in the container)".into(),
        text: format!(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\nreservedSystemCPUs: \"{hk}\""
        ),
    });
    out.push(Block {
        key: "performance_profile",
        title: "OpenShift: a PerformanceProfile instead of every block above (the Node Tuning Operator writes the kernel line, systemd, irqbalance and kubelet itself; set nodeSelector to your nodes). It isolates with isolcpus=managed_irq without domain (CRI-O turns load balancing off per pod), so pinrun --plan-host --check on such a node reports isolcpus= (cpu/isolated) as differing: domain is what pinrun holds a latency CPU to".into(),
        text: performance_profile(split, params),
    });
    out
}

/// The runtime alternative: a cgroup v2 isolated partition, where the
/// host has the cpuset controller on cgroup v2.
fn partition_block(split: &HostSplit, facts: &HostFacts) -> Block {
    let lat = split.latency.to_list();
    let title = "at runtime, without a reboot: a cgroup v2 isolated partition (Documentation/admin-guide/cgroup-v2.rst); it only takes the CPUs out of load balancing: the tick, RCU callbacks and IRQs stay until the boot parameters are in place";
    match &facts.cgroup2_cpuset {
        Some(dir) => Block {
            key: "partition",
            title: format!("{title}; read cpuset.cpus.partition back: 'isolated invalid (…)' says why the kernel refused"),
            text: format!(
                "echo +cpuset > {dir}/cgroup.subtree_control\nmkdir {dir}/latency\necho {lat} > {dir}/latency/cpuset.cpus\necho isolated > {dir}/latency/cpuset.cpus.partition\ncat {dir}/latency/cpuset.cpus.partition"
            ),
        },
        None => Block {
            key: "partition",
            title: title.to_string(),
            text: "# not on this host: no cgroup v2 hierarchy with the cpuset controller (/sys/fs/cgroup/cgroup.controllers)".into(),
        },
    }
}

/// OpenShift's PerformanceProfile with `spec.cpu` as PPC writes it.
fn performance_profile(split: &HostSplit, params: &[BootParam]) -> String {
    let mut t = format!(
        "apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata:\n  name: pinrun\nspec:\n  cpu:\n    reserved: \"{}\"\n    isolated: \"{}\"\n",
        split.housekeeping.to_list(),
        split.latency.to_list()
    );
    if !split.offline.is_empty() {
        t.push_str(&format!("    offlined: \"{}\"\n", split.offline.to_list()));
    }
    if params
        .iter()
        .any(|p| p.name == "nosmt" && !matches!(p.support, Support::No(_)))
    {
        t.push_str("  additionalKernelArgs:\n  - nosmt\n");
    }
    t.push_str("  nodeSelector:\n    node-role.kubernetes.io/worker: \"\"");
    t
}

fn support_words(s: &Support) -> (&'static str, &str) {
    match s {
        Support::Yes(w) => ("yes", w),
        Support::No(w) => ("no", w),
        Support::Unknown(w) => ("unknown", w),
    }
}

fn sets_text(split: &HostSplit) -> String {
    let count = |s: &CpuSet| match s.len() {
        1 => "1 CPU".to_string(),
        n => format!("{n} CPUs"),
    };
    let mut t = format!(
        "housekeeping: {} ({})\nlatency:      {} ({})\n",
        or_none(&split.housekeeping),
        count(&split.housekeeping),
        or_none(&split.latency),
        count(&split.latency)
    );
    for (name, set) in [
        ("offline:     ", &split.offline),
        ("nosmt off:   ", &split.smt_off),
        ("offline now: ", &split.already_offline),
    ] {
        if !set.is_empty() {
            t.push_str(&format!("{name} {} ({})\n", set.to_list(), count(set)));
        }
    }
    t.push_str("why:\n");
    for w in &split.why {
        t.push_str(&format!("  {w}\n"));
    }
    t
}

/// The text of `--plan-host`; `warnings` about the command line
/// ([`crate::host::plan::cmdline_warnings`]).
pub fn text(
    split: &HostSplit,
    params: &[BootParam],
    facts: &HostFacts,
    warnings: &[String],
) -> String {
    let mut t = sets_text(split);
    t.push_str("boot parameters:\n");
    for p in params {
        let (yes, why) = support_words(&p.support);
        let verdict = match yes {
            "yes" => "",
            "no" => "  NOT EMITTED: this kernel would not act on it: ",
            _ => "  emitted, but pinrun cannot tell whether this kernel acts on it: ",
        };
        t.push_str(&format!("  {}: {}; {}\n", p.arg(), p.purpose, p.parser));
        if yes == "yes" {
            t.push_str(&format!("    this kernel: {why}\n"));
        } else {
            t.push_str(&format!("  {verdict}{why}\n"));
        }
    }
    t.extend(warnings.iter().map(|w| format!("WARNING: {w}\n")));
    for b in blocks(split, params, facts) {
        t.push_str(&format!("\n# {}\n{}\n", b.title, b.text));
    }
    t
}

/// The text of `--plan-host --check`.
pub fn verify_text(split: &HostSplit, differences: &[Difference]) -> String {
    let mut t = sets_text(split);
    for u in &split.unjudged {
        t.push_str(&format!("not judged: {u}\n"));
    }
    if differences.is_empty() {
        t.push_str(if split.unjudged.is_empty() {
            "the running host matches this split\n"
        } else {
            "the running host matches this split in everything judged, but not all could be: exit 1\n"
        });
        return t;
    }
    t.push_str(&format!(
        "the running host differs from this split in {}:\n",
        crate::words::count(differences.len(), "setting")
    ));
    for d in differences {
        t.push_str(&format!("  {}: {}; wanted {}\n", d.setting, d.have, d.want));
    }
    t
}

fn split_json(split: &HostSplit) -> Value {
    json!({
        "housekeeping": split.housekeeping.to_list(),
        "latency": split.latency.to_list(),
        "offline": split.offline.to_list(),
        "smt_off": split.smt_off.to_list(),
        "already_offline": split.already_offline.to_list(),
        "boot_cpu": split.boot_cpu,
        "why": split.why,
        "unjudged": split.unjudged,
    })
}

/// `--plan-host --json`.
pub fn json(
    split: &HostSplit,
    params: &[BootParam],
    facts: &HostFacts,
    warnings: &[String],
) -> Value {
    let mut v = split_json(split);
    v["warnings"] = json!(warnings);
    v["kernel_cmdline"] = json!(kernel_cmdline(params));
    v["boot_params"] = params
        .iter()
        .map(|p| {
            let (support, reason) = support_words(&p.support);
            json!({"name": p.name, "value": p.value, "arg": p.arg(), "purpose": p.purpose,
                   "parser": p.parser, "support": support, "reason": reason})
        })
        .collect();
    v["settings"] = blocks(split, params, facts)
        .into_iter()
        .map(|b| json!({"key": b.key, "title": b.title, "text": b.text}))
        .collect();
    v
}

/// `--plan-host --check --json`.
pub fn verify_json(split: &HostSplit, differences: &[Difference]) -> Value {
    let mut v = split_json(split);
    v["matches"] = json!(differences.is_empty() && split.unjudged.is_empty());
    v["differences"] = differences
        .iter()
        .map(|d| json!({"setting": d.setting, "have": d.have, "want": d.want}))
        .collect();
    v
}
