//! What the fleet engines say about this process (issue 23): the
//! Kubernetes pod and container of its cgroup, kubelet's CPU manager state
//! (`/var/lib/kubelet/cpu_manager_state`, below the root), the CFS quota
//! on its cgroup (`cpu.max`), and the Slurm task of its environment. Plain
//! data; [`crate::check`] decides what it means.

use super::cgroup::{self, SelfCgroup};
use super::claims::KUBELET_STATE;
use super::root::Root;
use crate::cpuset::CpuSet;
use crate::fleet::{CpuMax, KubeletState, Pod, SlurmTask};

/// The fleet context of the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fleet {
    /// The pod of the caller's cgroup path, when it is one: the v2 path,
    /// else a v1 `cpuset`/`cpu`/`cpuacct` path ([`cgroup::pod_paths`]).
    pub pod: Option<Pod>,
    /// Whether the caller runs in Kubernetes: a pod cgroup path, or
    /// `KUBERNETES_SERVICE_HOST` in the environment (kubelet sets it in
    /// every container; the path is `/` inside a cgroup namespace).
    pub kubernetes: bool,
    /// kubelet's CPU manager state, or why it cannot be used; `None` when
    /// the file does not exist below the root.
    pub kubelet: Option<Result<KubeletState, String>>,
    /// The CFS bandwidth limit on the caller's cgroup v2 (or an ancestor).
    pub cpu_max: Option<CpuMax>,
    /// The Slurm task of the environment (`SLURM_JOB_ID` set).
    pub slurm: Option<SlurmTask>,
}

/// Reads the fleet context below `root`; the environment is this
/// process's (as the OpenMP variables are). kubelet's CPUs outside
/// `possible` are dropped ([`crate::fleet::parse_kubelet_state`]).
pub fn read(root: &Root, me: &SelfCgroup, possible: &CpuSet) -> Fleet {
    let pod = cgroup::pod_paths(root, me)
        .iter()
        .find_map(|p| crate::fleet::parse_pod(p));
    let kubelet = root.exists(KUBELET_STATE).then(|| {
        let shown = root.path(KUBELET_STATE);
        match root.read(KUBELET_STATE) {
            None => Err(format!("cannot read {}", shown.display())),
            Some(t) => crate::fleet::parse_kubelet_state(&t, possible.last().unwrap_or(0))
                .map_err(|e| format!("{}: {e}", shown.display())),
        }
    });
    let vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k.starts_with("SLURM_") || k == "KUBERNETES_SERVICE_HOST")
        .collect();
    let kubernetes = pod.is_some() || vars.iter().any(|(k, _)| k == "KUBERNETES_SERVICE_HOST");
    Fleet {
        pod,
        kubernetes,
        kubelet,
        cpu_max: cgroup::read_cpu_max(root, me),
        slurm: SlurmTask::from_env(vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
    }
}
