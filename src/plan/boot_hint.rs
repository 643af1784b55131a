//! The boot parameters a hint asks for: `isolcpus=`, `nohz_full=` and
//! `rcu_nocbs=` lines that add CPUs to what the running line lists
//! (`kernel/sched/isolation.c`, `rcu_nocb_setup()`), never naming the boot
//! CPU. Used by the placement's refusals and by the isolation and IRQ
//! findings, so both name the same line.

use crate::cpuset::CpuSet;
use crate::words::cpus_phrase;

/// What a hint says when the only CPU it would name is the boot CPU.
pub const BOOT_CPU_KEPT: &str = "CPU 0 is the boot CPU, where the kernel keeps its housekeeping (before Linux 6.5 tick_nohz_init() also clears it from nohz_full=): run on another CPU";

/// `cpus` without the boot CPU (CPU 0, when online): kernels before 6.5
/// ignore it in `nohz_full=` (`tick_nohz_init()`, `kernel/time/tick-sched.c`,
/// "Clearing 0 from nohz_full range for timekeeping"), and it keeps the
/// kernel's housekeeping on every kernel, so a hint never names it.
pub fn without_boot(sys: &crate::system::SystemState, cpus: &CpuSet) -> CpuSet {
    let mut c = cpus.clone();
    if sys.online.contains(0) {
        c.remove(0);
    }
    c
}

/// A boot parameter a hint can ask for ([`boot_params_for`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// `isolcpus=` with `domain,managed_irq` (and the flags it has).
    Isolcpus,
    /// `isolcpus=` with `managed_irq` (and the flags it has).
    ManagedIrq,
    /// `nohz_full=`.
    NohzFull,
    /// `rcu_nocbs=`.
    RcuNocbs,
}

/// The kernel command line a hint asks for to add `cpus` (the boot CPU
/// left out) to each parameter of `params`, each written whole: the CPUs
/// the parameter already lists are kept, with its flags, since the
/// kernel's parsers (`housekeeping_isolcpus_setup()` and
/// `housekeeping_nohz_full_setup()` in `kernel/sched/isolation.c`,
/// `rcu_nocb_setup()`) take one list per parameter and a hint that named
/// only the new CPUs would un-isolate the others; a note says when the
/// lists leave CPU 0 alone for housekeeping, or when `isolcpus=`'s flags
/// would isolate the added CPUs further than asked. `Err` with the reason
/// when nothing is left to name (only the boot CPU).
pub fn boot_params_for(
    sys: &crate::system::SystemState,
    cpus: &CpuSet,
    params: &[Param],
) -> Result<String, String> {
    let add = without_boot(sys, cpus);
    if add.is_empty() {
        return Err(BOOT_CPU_KEPT.to_string());
    }
    let iso = sys.boot.isolcpus.as_ref().filter(|i| !i.rejected());
    let mut words = Vec::new();
    let mut quiet = CpuSet::new();
    for &p in params {
        let (name, had) = match p {
            Param::Isolcpus | Param::ManagedIrq => ("isolcpus", iso.and_then(|i| i.cpus.clone())),
            Param::NohzFull => ("nohz_full", sys.boot.nohz_full.clone()),
            Param::RcuNocbs => ("rcu_nocbs", sys.boot.rcu_nocbs.clone()),
        };
        let list = had.unwrap_or_default().union(&add);
        if p != Param::RcuNocbs && p != Param::ManagedIrq {
            quiet.union_with(&list);
        }
        let flags = match p {
            Param::Isolcpus | Param::ManagedIrq => {
                let mut f = Vec::new();
                if iso.is_some_and(|i| i.nohz) {
                    f.push("nohz");
                }
                if p == Param::Isolcpus || iso.is_some_and(|i| i.domain && i.cpus.is_some()) {
                    f.push("domain");
                }
                f.push("managed_irq");
                format!("{},", f.join(","))
            }
            _ => String::new(),
        };
        words.push(format!("{name}={flags}{}", list.to_list()));
    }
    let mut line = words.join(" ");
    // isolcpus= gives every CPU it lists the same flags.
    if params.contains(&Param::ManagedIrq)
        && iso.is_some_and(|i| i.domain || i.nohz)
        && !add.is_subset(&iso.and_then(|i| i.cpus.clone()).unwrap_or_default())
    {
        line.push_str(&format!(
            " (isolcpus= gives every CPU it lists the same flags: {} would be isolated from the scheduler too)",
            cpus_phrase(&add)
        ));
    }
    let left = without_boot(sys, &sys.online.difference(&quiet));
    if !quiet.is_empty() && left.is_empty() {
        line.push_str(" (it leaves CPU 0 alone for housekeeping)");
    }
    Ok(line)
}
