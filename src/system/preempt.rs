//! The kernel's preemption model (issue 36 item 4): how soon a woken
//! real-time task gets a CPU that is running kernel code. Read, in this
//! order: `/sys/kernel/debug/sched/preempt` (debugfs, root; present with
//! `CONFIG_PREEMPT_DYNAMIC`, `sched_dynamic_show()` in
//! kernel/sched/debug.c: the models the kernel offers, the active one in
//! parentheses, "none voluntary (full) lazy"), then `/sys/kernel/realtime`
//! ("1" on a `CONFIG_PREEMPT_RT` kernel only, kernel/ksysfs.c: one small
//! file, so read before the configuration), then the kernel configuration
//! (`super::kernel_config::read`, ~250 KB: `CONFIG_PREEMPT_RT`, else
//! `CONFIG_PREEMPT_NONE`/`VOLUNTARY`/`PREEMPT`/`LAZY`, and under
//! `CONFIG_PREEMPT_DYNAMIC` the boot parameter `preempt=` over them,
//! `setup_preempt_mode()` and `preempt_dynamic_init()` in
//! kernel/sched/core.c). Plain data; `crate::check::rt` judges it.

use super::kernel_config::KernelConfig;
use super::root::Root;

/// A preemption model (kernel/Kconfig.preempt; `preempt_modes[]` in
/// kernel/sched/core.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptModel {
    /// `none` (`CONFIG_PREEMPT_NONE`, "No Forced Preemption (Server)"):
    /// kernel code is preempted only where it calls `cond_resched()` or
    /// returns to user space.
    None,
    /// `voluntary` (`CONFIG_PREEMPT_VOLUNTARY`): also at `might_sleep()`
    /// points.
    Voluntary,
    /// `full` (`CONFIG_PREEMPT`): anywhere outside a section that disables
    /// preemption, interrupts or holds a spinlock.
    Full,
    /// `lazy` (`CONFIG_PREEMPT_LAZY`, Linux 6.13): full for the
    /// real-time and deadline classes, delayed to the next tick for fair
    /// tasks (`resched_curr_lazy()`).
    Lazy,
    /// `PREEMPT_RT`: full, with spinlocks and interrupt handlers made
    /// preemptible (threaded).
    Rt,
}

impl PreemptModel {
    /// The kernel's name: `none`, `voluntary`, `full`, `lazy`, `PREEMPT_RT`.
    pub fn name(self) -> &'static str {
        match self {
            PreemptModel::None => "none",
            PreemptModel::Voluntary => "voluntary",
            PreemptModel::Full => "full",
            PreemptModel::Lazy => "lazy",
            PreemptModel::Rt => "PREEMPT_RT",
        }
    }

    fn parse(word: &str) -> Option<Self> {
        match word {
            "none" => Some(PreemptModel::None),
            "voluntary" => Some(PreemptModel::Voluntary),
            "full" => Some(PreemptModel::Full),
            "lazy" => Some(PreemptModel::Lazy),
            _ => None,
        }
    }
}

/// The preemption model and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preemption {
    /// The model.
    pub model: PreemptModel,
    /// Where it came from, in words (`/sys/kernel/debug/sched/preempt
    /// "none voluntary (full) lazy"`, `/proc/config.gz CONFIG_PREEMPT_NONE`).
    pub source: String,
    /// `CONFIG_PREEMPT_DYNAMIC`: the model can be changed at boot
    /// (`preempt=`) and, as root, at run time through debugfs.
    pub dynamic: bool,
    /// Read from the configuration, not from the running kernel: under
    /// `CONFIG_PREEMPT_DYNAMIC` the model at boot, which root may have
    /// changed since.
    pub at_boot: bool,
}

/// The debugfs file of a `CONFIG_PREEMPT_DYNAMIC` kernel.
pub const DEBUGFS_PREEMPT: &str = "/sys/kernel/debug/sched/preempt";

/// The active model of `sched/preempt`'s text: the word in parentheses.
pub fn parse_debugfs(text: &str) -> Option<PreemptModel> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
        .and_then(PreemptModel::parse)
}

/// The model a kernel built with `config` boots into, given the boot
/// parameters `cmdline` (`preempt=` counts only under
/// `CONFIG_PREEMPT_DYNAMIC`; an unknown value is ignored by
/// `sched_dynamic_mode()`, and the configured default applies).
pub fn from_config(config: &KernelConfig, cmdline: &str) -> Option<Preemption> {
    let dynamic = config.enabled("PREEMPT_DYNAMIC");
    let source = |what: &str| format!("{} {what}", config.source);
    if config.enabled("PREEMPT_RT") {
        return Some(Preemption {
            model: PreemptModel::Rt,
            source: source("CONFIG_PREEMPT_RT"),
            dynamic,
            at_boot: false,
        });
    }
    // setup_preempt_mode() (kernel/sched/core.c) runs for each preempt=
    // and leaves the mode as it was for a value sched_dynamic_mode()
    // refuses: the last accepted value stands.
    if dynamic
        && let Some(model) = crate::boot_params::words(cmdline)
            .iter()
            .filter_map(|w| PreemptModel::parse(w.strip_prefix("preempt=")?))
            .next_back()
    {
        return Some(Preemption {
            model,
            source: format!("preempt={} on the kernel command line", model.name()),
            dynamic,
            at_boot: true,
        });
    }
    let (model, option) = [
        (PreemptModel::None, "PREEMPT_NONE"),
        (PreemptModel::Voluntary, "PREEMPT_VOLUNTARY"),
        (PreemptModel::Lazy, "PREEMPT_LAZY"),
        (PreemptModel::Full, "PREEMPT"),
    ]
    .into_iter()
    .find(|(_, o)| config.enabled(o))?;
    Some(Preemption {
        model,
        source: source(&format!("CONFIG_{option}")),
        dynamic,
        at_boot: dynamic,
    })
}

/// The running kernel's preemption model (module documentation for the
/// order of sources); `None` when none can be read (a user without
/// debugfs on a kernel without a readable configuration, a dump without
/// them); `/proc/cmdline` is read for `preempt=` only with the
/// configuration.
pub fn read(root: &Root) -> Option<Preemption> {
    let rt = root
        .read_value("/sys/kernel/realtime")
        .is_some_and(|v| v.trim() == "1");
    if let Some(text) = root.read_value(DEBUGFS_PREEMPT)
        && let Some(model) = parse_debugfs(&text)
    {
        return Some(Preemption {
            // A PREEMPT_RT kernel lists "full" and "lazy" (from index 2 of
            // preempt_modes[]): either is RT there.
            model: if rt { PreemptModel::Rt } else { model },
            source: format!("{DEBUGFS_PREEMPT} \"{}\"", text.trim()),
            dynamic: true,
            at_boot: false,
        });
    }
    if rt {
        return Some(Preemption {
            model: PreemptModel::Rt,
            source: "/sys/kernel/realtime = 1".into(),
            dynamic: false,
            at_boot: false,
        });
    }
    let config = super::kernel_config::read(root)?;
    from_config(
        &config,
        &root.read_value("/proc/cmdline").unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sched_dynamic_show()'s format: the active model in parentheses.
    #[test]
    fn debugfs_names_the_active_model() {
        assert_eq!(
            parse_debugfs("none voluntary (full) lazy \n"),
            Some(PreemptModel::Full)
        );
        assert_eq!(
            parse_debugfs("(none) voluntary full \n"),
            Some(PreemptModel::None)
        );
        assert_eq!(parse_debugfs("none voluntary full\n"), None);
    }

    /// This machine's configuration (Linux 6.18, PREEMPT_DYNAMIC with
    /// PREEMPT_NONE): none at boot, unless preempt= says otherwise;
    /// without PREEMPT_DYNAMIC, preempt= is not a parameter.
    #[test]
    fn config_and_preempt_parameter() {
        let c = KernelConfig::parse(
            "CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT_VOLUNTARY is not set\n# CONFIG_PREEMPT is not set\n# CONFIG_PREEMPT_LAZY is not set\nCONFIG_PREEMPTION=y\nCONFIG_PREEMPT_DYNAMIC=y\n",
            "/proc/config.gz",
        );
        let p = from_config(&c, "quiet").unwrap();
        assert_eq!(p.model, PreemptModel::None);
        assert_eq!(p.source, "/proc/config.gz CONFIG_PREEMPT_NONE");
        assert!(p.dynamic && p.at_boot);
        let p = from_config(&c, "quiet preempt=full").unwrap();
        assert_eq!(p.model, PreemptModel::Full);
        // An unknown value: sched_dynamic_mode() refuses it.
        assert_eq!(
            from_config(&c, "preempt=fast").unwrap().model,
            PreemptModel::None
        );
        // ... and leaves the mode an earlier preempt= set.
        assert_eq!(
            from_config(&c, "preempt=full preempt=fast").unwrap().model,
            PreemptModel::Full
        );
        let fixed = KernelConfig::parse("CONFIG_PREEMPT_VOLUNTARY=y\n", "/boot/config-6.1");
        let p = from_config(&fixed, "preempt=full").unwrap();
        assert_eq!((p.model, p.dynamic), (PreemptModel::Voluntary, false));
        let rt = KernelConfig::parse("CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_DYNAMIC=y\n", "x");
        assert_eq!(
            from_config(&rt, "preempt=none").unwrap().model,
            PreemptModel::Rt
        );
        assert_eq!(from_config(&KernelConfig::parse("", "x"), ""), None);
    }

    /// The order of sources: debugfs, /sys/kernel/realtime, then the
    /// configuration.
    #[test]
    fn sources_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let w = |p: &str, t: &str| {
            let f = dir.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        };
        w("proc/sys/kernel/osrelease", "6.18.0-t\n");
        w("proc/cmdline", "ro preempt=none\n");
        w("boot/config-6.18.0-t", "CONFIG_PREEMPT_VOLUNTARY=y\n");
        let root = Root::new(dir.path());
        // preempt= is no parameter of a kernel without PREEMPT_DYNAMIC.
        let p = read(&root).unwrap();
        assert_eq!(p.model, PreemptModel::Voluntary);
        assert_eq!(p.source, "/boot/config-6.18.0-t CONFIG_PREEMPT_VOLUNTARY");
        w("sys/kernel/realtime", "1\n");
        assert_eq!(read(&root).unwrap().model, PreemptModel::Rt);
        w("sys/kernel/realtime", "0\n");
        w(
            "sys/kernel/debug/sched/preempt",
            "(none) voluntary full lazy \n",
        );
        let p = read(&root).unwrap();
        assert_eq!((p.model, p.at_boot), (PreemptModel::None, false));
        assert_eq!(
            p.source,
            "/sys/kernel/debug/sched/preempt \"(none) voluntary full lazy\""
        );
    }
}
