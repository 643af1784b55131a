//! The kernel command line's CPU isolation parameters, parsed as the kernel
//! does (pure; no I/O). Sources: `Documentation/admin-guide/kernel-parameters.txt`
//! and each parameter's own parser:
//!
//! - `isolcpus=`: `housekeeping_isolcpus_setup()` (kernel/sched/isolation.c):
//!   flags are consumed while the value starts with a letter: `nohz,`,
//!   `domain,`, `managed_irq,`; anything else up to the next comma is an
//!   unknown flag: one of letters only is skipped ("isolcpus: Skipped
//!   unknown flag", since Linux 5.7, commit 3662daf02350; before, the whole
//!   parameter was rejected), one with another character rejects the whole
//!   parameter ("isolcpus: Invalid flag"); with no known flag the default
//!   is `domain`.
//! - `nohz_full=`: `housekeeping_nohz_full_setup()` (same file); both go
//!   through `housekeeping_setup()`, which keeps the boot CPU for
//!   housekeeping when every CPU is listed (applied by the reader, which
//!   knows the online CPUs) and sets nothing for a list it cannot parse.
//! - `rcu_nocbs`: `rcu_nocb_setup()` (kernel/rcu/tree_nocb.h), see
//!   [`parse_rcu_nocbs`]; `rcu_init_nohz()` adds the nohz_full CPUs (done by
//!   the check).
//! - `irqaffinity=`: `irq_affinity_setup()` (kernel/irq/irqdesc.c), which
//!   also adds the boot CPU (done by the check).
//! - `nohz=`: `setup_tick_nohz()` (kernel/time/tick-sched.c), a
//!   `kstrtobool()` (lib/kstrtox.c) value, see [`kstrtobool`]. `nohz=off`
//!   keeps every CPU's tick running, nohz_full ones included:
//!   `tick_nohz_activate()` returns before setting `TS_FLAG_NOHZ` when
//!   `tick_nohz_enabled` is false, and `tick_nohz_full_update_tick()`
//!   stops nothing without that flag (`cpu/nohz_full` still lists the
//!   CPUs, and their RCU offloading and housekeeping stay).
//!
//! CPU lists use the kernel's `bitmap_parselist()` grammar (`cpulist_parse()`),
//! including `N` for the last CPU and `a-b:u/g` groups.

use crate::cpuset::CpuSet;

/// `isolcpus=` as the kernel reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Isolcpus {
    /// `domain` (explicit, or implied when no flag is given): removed from
    /// scheduler load balancing.
    pub domain: bool,
    /// `nohz`: the tick is stopped when one task runs (as `nohz_full=`).
    pub nohz: bool,
    /// `managed_irq`: kernel-managed IRQs avoid these CPUs where their mask
    /// also has housekeeping CPUs (best effort).
    pub managed_irq: bool,
    /// Flags the kernel does not know (see [`Isolcpus::rejected`]).
    pub unknown_flags: Vec<String>,
    /// The CPUs, or `None` when the list does not parse.
    pub cpus: Option<CpuSet>,
    /// The parameter as written.
    pub raw: String,
}

impl Isolcpus {
    /// Whether the kernel rejects the whole parameter for its unknown
    /// flags: one with a character other than a letter ("isolcpus: Invalid
    /// flag", `housekeeping_isolcpus_setup()`). One of letters only is
    /// skipped, the rest applied ("isolcpus: Skipped unknown flag"), since
    /// Linux 5.7; older kernels rejected it too, which `cpu/isolated`
    /// shows (the check compares).
    pub fn rejected(&self) -> bool {
        self.unknown_flags
            .iter()
            .any(|f| !f.chars().all(|c| c.is_ascii_alphabetic()))
    }
}

/// The flags of an `isolcpus=` that pinrun writes ([`isolcpus_value`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IsolcpusFlags {
    /// `nohz`.
    pub nohz: bool,
    /// `domain`.
    pub domain: bool,
    /// `managed_irq`.
    pub managed_irq: bool,
}

/// `isolcpus=`'s value as every plan and hint of pinrun writes it: the
/// flags of `flags` in the order
/// `Documentation/admin-guide/kernel-parameters.txt` lists them
/// (`isolcpus=[flag-list,]<cpu-list>`: `nohz`, `domain`, `managed_irq`),
/// then the CPU list `list`: `nohz,domain,managed_irq,2-3`. The kernel's
/// parser takes the flags in any order (`housekeeping_isolcpus_setup()`);
/// one order lets a reader compare the lines pinrun prints. No flag: the
/// list alone (the kernel's default, `domain`).
pub fn isolcpus_value(flags: &IsolcpusFlags, list: &str) -> String {
    let mut words: Vec<&str> = [
        (flags.nohz, "nohz"),
        (flags.domain, "domain"),
        (flags.managed_irq, "managed_irq"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    words.push(list);
    words.join(",")
}

/// `isolcpus=VALUE` ([`isolcpus_value`]): `isolcpus=domain,managed_irq,2-3`.
pub fn isolcpus_param(flags: &IsolcpusFlags, list: &str) -> String {
    format!("isolcpus={}", isolcpus_value(flags, list))
}

/// The isolation-related parameters of `/proc/cmdline`; the last occurrence
/// of a parameter wins, as for the kernel's `__setup` handlers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootParams {
    /// `isolcpus=`.
    pub isolcpus: Option<Isolcpus>,
    /// `nohz_full=`.
    pub nohz_full: Option<CpuSet>,
    /// The CPUs `rcu_nocbs` offloads, as `rcu_nocb_setup()`
    /// (kernel/rcu/tree_nocb.h) sets them: a bare `rcu_nocbs` or an empty
    /// `rcu_nocbs=` offloads none (since 5.17 it only allows runtime
    /// offloading); a list the kernel's `cpulist_parse()` rejects offloads
    /// every CPU ("rcu_nocbs= bad CPU range, all CPUs set"). `None` when the
    /// parameter is absent. nohz_full CPUs are offloaded too
    /// (`rcu_init_nohz()`): [`BootParams::rcu_nocbs_asked`] is that union.
    pub rcu_nocbs: Option<CpuSet>,
    /// `rcu_nocbs=` was given with a list the kernel rejects (every CPU
    /// offloaded): the value as written.
    pub rcu_nocbs_bad: Option<String>,
    /// `irqaffinity=`: the default affinity of new IRQs.
    pub irqaffinity: Option<CpuSet>,
    /// `nohz=` as `setup_tick_nohz()` leaves `tick_nohz_enabled`: `None`
    /// when no occurrence parses (the default, on), else the last value
    /// [`kstrtobool`] accepts (one it rejects leaves the previous value).
    pub nohz: Option<bool>,
}

impl BootParams {
    /// The CPUs whose RCU callbacks the command line asks to offload:
    /// `rcu_nocbs=` and the `nohz_full` CPUs, which `rcu_init_nohz()`
    /// (`kernel/rcu/tree_nocb.h`) adds; empty when neither is given.
    /// Whether the kernel did is another question (its rcuo kthreads).
    pub fn rcu_nocbs_asked(&self, nohz_full: &CpuSet) -> CpuSet {
        self.rcu_nocbs.clone().unwrap_or_default().union(nohz_full)
    }
}

fn list(value: &str, last: Option<u32>) -> Option<CpuSet> {
    CpuSet::parse_sysfs_list(value, last).ok()
}

/// Parses `isolcpus=`'s value.
pub fn parse_isolcpus(value: &str, last: Option<u32>) -> Isolcpus {
    let mut iso = Isolcpus {
        raw: value.to_string(),
        ..Default::default()
    };
    let mut rest = value;
    while rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let (flag, tail) = rest.split_once(',').unwrap_or((rest, ""));
        match flag {
            "nohz" => iso.nohz = true,
            "domain" => iso.domain = true,
            "managed_irq" => iso.managed_irq = true,
            other => iso.unknown_flags.push(other.to_string()),
        }
        rest = tail;
    }
    if !(iso.nohz || iso.domain || iso.managed_irq) {
        iso.domain = true;
    }
    iso.cpus = list(rest, last);
    iso
}

/// `irqaffinity=` as `irq_affinity_setup()` (kernel/irq/irqdesc.c) sets
/// the default IRQ affinity, before it adds the boot CPU: `cpulist_parse()`
/// (`bitmap_parselist()`, lib/bitmap-str.c) clears the mask, then sets
/// each `,`-separated region in turn and stops at the first it rejects,
/// keeping those before it; an empty or wholly rejected list leaves only
/// the boot CPU.
pub fn parse_irqaffinity(value: &str, last: Option<u32>) -> CpuSet {
    let mut set = CpuSet::new();
    for region in value.split(',') {
        match list(region, last) {
            Some(r) => set.union_with(&r),
            None => break,
        }
    }
    set
}

/// `rcu_nocb_setup()`'s reading of what follows `rcu_nocbs` on the command
/// line (`rest` is `""` for a bare word, `"=LIST"` otherwise): no `=` or an
/// empty list offloads no CPU; a list `cpulist_parse()` rejects offloads
/// every possible CPU (`0..=last`; none when `last` is unknown), returned
/// with the rejected value.
pub fn parse_rcu_nocbs(rest: &str, last: Option<u32>) -> (CpuSet, Option<String>) {
    let Some(value) = rest.strip_prefix('=') else {
        return (CpuSet::new(), None);
    };
    if value.is_empty() {
        return (CpuSet::new(), None);
    }
    match list(value, last) {
        Some(set) => (set, None),
        None => (
            last.map(|l| (0..=l).collect()).unwrap_or_default(),
            Some(value.to_string()),
        ),
    }
}

/// Splits a command line into parameters as the kernel's `next_arg()` does:
/// white space separates, double quotes group (`foo="a b"` is one
/// parameter), and a bare `--` ends the kernel's parameters (the rest goes
/// to init).
pub fn words(cmdline: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in cmdline.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    if cur == "--" {
                        return out;
                    }
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            c => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started && cur != "--" {
        out.push(cur);
    }
    out
}

/// A boolean parameter as the kernel's `kstrtobool()` (lib/kstrtox.c)
/// reads it: the first character `y`, `Y`, `t`, `T` or `1` is true; `n`,
/// `N`, `f`, `F` or `0` is false; `o`/`O` followed by `n`/`N` (on) is
/// true, by `f`/`F` (off) false; anything else (empty included) is
/// rejected (`None`). Only the first one or two characters count.
pub fn kstrtobool(s: &str) -> Option<bool> {
    let b = s.as_bytes();
    match b.first()? {
        b'y' | b'Y' | b't' | b'T' | b'1' => Some(true),
        b'n' | b'N' | b'f' | b'F' | b'0' => Some(false),
        b'o' | b'O' => match b.get(1)? {
            b'n' | b'N' => Some(true),
            b'f' | b'F' => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Parses the isolation parameters of a kernel command line. `last` is the
/// highest possible CPU id (for `N`).
pub fn parse(cmdline: &str, last: Option<u32>) -> BootParams {
    let mut p = BootParams::default();
    for word in words(cmdline) {
        let word = word.as_str();
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        match key {
            "isolcpus" => p.isolcpus = Some(parse_isolcpus(value, last)),
            "nohz_full" => p.nohz_full = list(value, last),
            // `__setup("rcu_nocbs", rcu_nocb_setup)`: the handler gets what
            // follows the name, and parses a list only after an `=`.
            "rcu_nocbs" => {
                let rest = word.strip_prefix("rcu_nocbs").unwrap_or("");
                let (set, bad) = parse_rcu_nocbs(rest, last);
                p.rcu_nocbs = Some(set);
                p.rcu_nocbs_bad = bad;
            }
            "irqaffinity" => p.irqaffinity = Some(parse_irqaffinity(value, last)),
            // `__setup("nohz=", setup_tick_nohz)`: only with the `=`.
            "nohz" if word.contains('=') => p.nohz = kstrtobool(value).or(p.nohz),
            _ => {}
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> CpuSet {
        CpuSet::parse(s).unwrap()
    }

    #[test]
    fn isolcpus_flags() {
        // No flag: domain.
        let i = parse_isolcpus("2,3", Some(7));
        assert!(i.domain && !i.nohz && !i.managed_irq);
        assert_eq!(i.cpus, Some(set("2-3")));
        // managed_irq alone does NOT imply domain (nto worker dumps).
        let i = parse_isolcpus("managed_irq,0-4,11-79", Some(79));
        assert!(!i.domain && i.managed_irq);
        assert_eq!(i.cpus, Some(set("0-4,11-79")));
        let i = parse_isolcpus("nohz,domain,managed_irq,4-7,12-15", Some(31));
        assert!(i.domain && i.nohz && i.managed_irq);
        assert_eq!(i.cpus, Some(set("4-7,12-15")));
        // housekeeping_isolcpus_setup() since 5.7: a flag of letters only
        // is skipped (no known flag left: domain), one with another
        // character rejects the parameter.
        let i = parse_isolcpus("bogus,1", Some(7));
        assert_eq!(i.unknown_flags, vec!["bogus"]);
        assert!(!i.rejected() && i.domain);
        assert_eq!(i.cpus, Some(set("1")));
        let i = parse_isolcpus("nohz_full,1", Some(7));
        assert!(i.rejected());
        // N is the last CPU; groups as in bitmap_parselist.
        assert_eq!(parse_isolcpus("1-N", Some(7)).cpus, Some(set("1-7")));
        assert_eq!(
            parse_isolcpus("domain,0-15:2/4", Some(15)).cpus,
            Some(set("0-1,4-5,8-9,12-13"))
        );
    }

    #[test]
    fn whole_cmdline() {
        let p = parse(
            "ro quiet isolcpus=managed_irq,5-10 nohz_full=5-10 rcu_nocbs=5-10 irqaffinity=0-4",
            Some(15),
        );
        assert_eq!(p.nohz_full, Some(set("5-10")));
        assert_eq!(p.rcu_nocbs, Some(set("5-10")));
        assert_eq!(p.irqaffinity, Some(set("0-4")));
        assert!(p.isolcpus.unwrap().managed_irq);
        assert_eq!(parse("quiet", Some(3)), BootParams::default());
        // After "--" the words belong to init; quotes group words.
        assert_eq!(
            parse("ro -- isolcpus=1 nohz_full=1", Some(3)),
            BootParams::default()
        );
        assert_eq!(
            parse("foo=\"bar isolcpus=1 nohz_full=1\"", Some(3)),
            BootParams::default()
        );
        assert_eq!(words("a \"b c\" d=\"e f\" -- g"), vec!["a", "b c", "d=e f"]);
    }

    /// `rcu_nocb_setup()` (kernel/rcu/tree_nocb.h): bare and empty offload
    /// nothing, a bad range offloads every CPU, a list is taken as
    /// `cpulist_parse()` reads it; the last occurrence wins.
    /// irq_affinity_setup(): bitmap_parselist() keeps the regions before
    /// the first it rejects (the boot CPU is added by the readers).
    #[test]
    fn irqaffinity_as_irq_affinity_setup() {
        assert_eq!(
            parse("irqaffinity=0-1", Some(7)).irqaffinity,
            Some(set("0-1"))
        );
        assert_eq!(
            parse("irqaffinity=0-1,x,4", Some(7)).irqaffinity,
            Some(set("0-1"))
        );
        assert_eq!(
            parse("irqaffinity=x", Some(7)).irqaffinity,
            Some(CpuSet::new())
        );
        assert_eq!(
            parse("irqaffinity=", Some(7)).irqaffinity,
            Some(CpuSet::new())
        );
        assert_eq!(parse("quiet", Some(7)).irqaffinity, None);
    }

    /// `nohz=` through setup_tick_nohz()'s kstrtobool(): the last value
    /// it accepts stands; a rejected one ("nohz=maybe") or a bare `nohz`
    /// changes nothing.
    #[test]
    fn nohz_as_setup_tick_nohz() {
        assert_eq!(parse("nohz_full=2-3", Some(3)).nohz, None);
        assert_eq!(parse("nohz=off nohz_full=2-3", Some(3)).nohz, Some(false));
        assert_eq!(parse("nohz=OFF", Some(3)).nohz, Some(false));
        assert_eq!(parse("nohz=0", Some(3)).nohz, Some(false));
        assert_eq!(parse("nohz=n", Some(3)).nohz, Some(false));
        assert_eq!(parse("nohz=off nohz=on", Some(3)).nohz, Some(true));
        assert_eq!(parse("nohz=off nohz=maybe", Some(3)).nohz, Some(false));
        assert_eq!(parse("nohz=off nohz", Some(3)).nohz, Some(false));
        assert_eq!(parse("nohz=", Some(3)).nohz, None);
        assert_eq!(kstrtobool("o"), None);
        assert_eq!(kstrtobool("yes"), Some(true));
    }

    #[test]
    fn rcu_nocbs_as_rcu_nocb_setup() {
        let p = parse("ro rcu_nocbs", Some(3));
        assert_eq!(p.rcu_nocbs, Some(CpuSet::new()));
        assert_eq!(p.rcu_nocbs_bad, None);
        assert_eq!(parse("rcu_nocbs=", Some(3)).rcu_nocbs, Some(CpuSet::new()));
        let p = parse("rcu_nocbs=2-x", Some(3));
        assert_eq!(p.rcu_nocbs, Some(set("0-3")));
        assert_eq!(p.rcu_nocbs_bad.as_deref(), Some("2-x"));
        assert_eq!(parse("rcu_nocbs=1-N", Some(3)).rcu_nocbs, Some(set("1-3")));
        assert_eq!(
            parse("rcu_nocbs=1 rcu_nocbs", Some(3)).rcu_nocbs,
            Some(CpuSet::new())
        );
        assert_eq!(parse("quiet", Some(3)).rcu_nocbs, None);
    }

    /// Every flag set, in the kernel documentation's order; each alone;
    /// and what pinrun writes reads back as written.
    #[test]
    fn isolcpus_is_written_in_the_documented_order() {
        let all = IsolcpusFlags {
            nohz: true,
            domain: true,
            managed_irq: true,
        };
        assert_eq!(
            isolcpus_param(&all, "2-3"),
            "isolcpus=nohz,domain,managed_irq,2-3"
        );
        let dm = IsolcpusFlags {
            domain: true,
            managed_irq: true,
            ..Default::default()
        };
        assert_eq!(isolcpus_value(&dm, "1"), "domain,managed_irq,1");
        assert_eq!(isolcpus_value(&IsolcpusFlags::default(), "1"), "1");
        let back = parse_isolcpus(&isolcpus_value(&all, "2-3"), Some(3));
        assert!(back.nohz && back.domain && back.managed_irq && !back.rejected());
        assert_eq!(back.cpus, CpuSet::parse_sysfs_list("2-3", Some(3)).ok());
    }
}
