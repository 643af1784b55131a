//! What `--plan-host` needs beyond [`super::SystemState`] (issue 38): the
//! kernel's answers to "would this boot parameter do anything here",
//! each read from the file the feature itself creates where there is one,
//! else from the kernel's build configuration.

use crate::cpuset::CpuSet;
use crate::system::Root;
use crate::system::kernel_config::{self, KernelConfig};

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The host's capabilities and boot-time settings that the split is
/// realised with. Read on the live machine or below `--sysroot`.
#[derive(Debug, Clone, Default)]
pub struct HostFacts {
    /// The kernel's build configuration, when readable
    /// ([`kernel_config::read`]).
    pub config: Option<KernelConfig>,
    /// `cpu/smt/control` (`on`, `off`, `forceoff`, `notsupported`,
    /// `notimplemented`; `Documentation/ABI/testing/sysfs-devices-system-cpu`):
    /// present only with `CONFIG_HOTPLUG_SMT`, the option `nosmt` needs
    /// (`cpu_smt_disable()`, `kernel/cpu.c`).
    pub smt_control: Option<String>,
    /// Whether a cgroup v2 hierarchy with the cpuset controller is mounted
    /// at `/sys/fs/cgroup` (or `/sys/fs/cgroup/unified`): its
    /// `cgroup.controllers` lists `cpuset`. Only there can an isolated
    /// partition be made (`Documentation/admin-guide/cgroup-v2.rst`).
    pub cgroup2_cpuset: Option<String>,
    /// CPUs with a `cpuN/online` file: those the kernel can take offline
    /// (the boot CPU usually has none; `cpu_down()` refuses it).
    pub hotpluggable: CpuSet,
}

/// Reads the host facts of `root` for `cpus` (the CPU directories).
pub fn read(root: &Root, cpus: &CpuSet) -> HostFacts {
    let cgroup2_cpuset = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .into_iter()
        .find(|d| {
            root.read(&format!("{d}/cgroup.controllers"))
                .is_some_and(|c| c.split_whitespace().any(|w| w == "cpuset"))
        })
        .map(str::to_string);
    HostFacts {
        config: kernel_config::read(root),
        smt_control: root.read_value(&format!("{CPU_DIR}/smt/control")),
        cgroup2_cpuset,
        hotpluggable: cpus
            .iter()
            .filter(|c| root.exists(&format!("{CPU_DIR}/cpu{c}/online")))
            .collect(),
    }
}
