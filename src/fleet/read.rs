//! What the fleet engines say about the caller (issue 23): the Kubernetes
//! pod and container of its cgroup, kubelet's CPU manager state
//! (`/var/lib/kubelet/cpu_manager_state`, below the root), and the Slurm
//! task of its environment. Plain data; [`super::check`] decides what it
//! means. The files are the core's too (the cgroup paths of
//! [`SystemState::cgroup_paths`], kubelet's state that the claims read),
//! so a dump holds them.

use super::{Pod, SlurmTask};
use crate::claim::KubeletState;
use crate::system::{Root, SystemState};

/// The fleet context of the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fleet {
    /// The pod of the caller's cgroup path, when it is one: the v2 path,
    /// else a v1 `cpuset`/`cpu`/`cpuacct` path
    /// ([`SystemState::cgroup_paths`]).
    pub pod: Option<Pod>,
    /// Whether the caller runs in Kubernetes: a pod cgroup path, or
    /// `KUBERNETES_SERVICE_HOST` in the environment (kubelet sets it in
    /// every container; the path is `/` inside a cgroup namespace).
    pub kubernetes: bool,
    /// kubelet's CPU manager state; `None` when the file does not exist
    /// below the root or cannot be used (the claims say why:
    /// [`crate::system::kubelet::read_state`]'s warning).
    pub kubelet: Option<KubeletState>,
    /// The Slurm task of the environment (`SLURM_JOB_ID` set).
    pub slurm: Option<SlurmTask>,
}

/// The Slurm task of this process's environment (`SLURM_JOB_ID` set;
/// variables that are not UTF-8 are left out).
pub fn slurm_task() -> Option<SlurmTask> {
    let vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k.starts_with("SLURM_"))
        .collect();
    SlurmTask::from_env(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Reads the fleet context of the caller of `sys` below `root`; the
/// environment is this process's (as the OpenMP variables are). kubelet's
/// CPUs outside `sys.possible` are dropped
/// ([`crate::system::kubelet::read_state`]).
pub fn read(root: &Root, sys: &SystemState) -> Fleet {
    let pod = sys.cgroup_paths.iter().find_map(|p| super::parse_pod(p));
    Fleet {
        kubernetes: pod.is_some() || std::env::var("KUBERNETES_SERVICE_HOST").is_ok(),
        pod,
        kubelet: crate::system::kubelet::read_state(root, &sys.possible)
            .ok()
            .flatten(),
        slurm: slurm_task(),
    }
}
