//! The boot parameters a hint asks for: `isolcpus=`, `nohz_full=` and
//! `rcu_nocbs=` lines that add CPUs to what the running line lists
//! (`kernel/sched/isolation.c`, `rcu_nocb_setup()`), never naming the boot
//! CPU. Used by the placement's refusals and by the isolation and IRQ
//! findings, so both name the same line.

use crate::cpuset::CpuSet;
use crate::words::cpus_phrase;

/// What a hint says of the boot CPU among the CPUs it would name, which
/// no line names ([`without_boot`]): why (with `nohz_full=` among
/// `params`, also that kernels before 6.5 clear it from that list); when
/// it is the only one (`alone`), to run elsewhere, else that the line
/// leaves it out.
fn boot_cpu_sentence(params: &[Param], alone: bool) -> String {
    let why = format!(
        "the boot CPU, where the kernel keeps its housekeeping{}",
        if params.contains(&Param::NohzFull) {
            " (before Linux 6.5 tick_nohz_init() also clears it from nohz_full=)"
        } else {
            ""
        }
    );
    if alone {
        format!("CPU 0 is {why}: no boot parameter takes it, run on another CPU")
    } else {
        format!("CPU 0 is left out: it is {why}")
    }
}

/// The hint of a boot-parameter remedy for `cpus`: `remedy(LINE)` with
/// the line of [`boot_params_for`], then, when `cpus` holds the boot CPU,
/// the sentence that says why the line leaves it out; the boot-CPU
/// sentence alone when it is the only CPU. Every caller says both: a
/// hint once gave the boot-CPU sentence in place of the `isolcpus=`
/// remedy for the other CPUs.
pub fn boot_hint(
    sys: &crate::system::SystemState,
    cpus: &CpuSet,
    params: &[Param],
    remedy: impl FnOnce(&str) -> String,
) -> String {
    let boot = sys.online.contains(0) && cpus.contains(0);
    match boot_params_for(sys, cpus, params) {
        Ok(line) if boot => format!("{}; {}", remedy(&line), boot_cpu_sentence(params, false)),
        Ok(line) => remedy(&line),
        Err(why) => why,
    }
}

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
fn boot_params_for(
    sys: &crate::system::SystemState,
    cpus: &CpuSet,
    params: &[Param],
) -> Result<String, String> {
    let add = without_boot(sys, cpus);
    if add.is_empty() {
        return Err(boot_cpu_sentence(params, true));
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
        words.push(match p {
            Param::Isolcpus | Param::ManagedIrq => crate::boot_params::isolcpus_param(
                &crate::boot_params::IsolcpusFlags {
                    nohz: iso.is_some_and(|i| i.nohz),
                    domain: p == Param::Isolcpus
                        || iso.is_some_and(|i| i.domain && i.cpus.is_some()),
                    managed_irq: true,
                },
                &list.to_list(),
            ),
            _ => format!("{name}={}", list.to_list()),
        });
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
    // When `cpus` holds the boot CPU, [`boot_hint`] says why it is left.
    if !quiet.is_empty() && left.is_empty() && add.len() == cpus.len() {
        line.push_str(" (it leaves CPU 0 alone for housekeeping)");
    }
    Ok(line)
}
