//! The fleet engines (issue 23), a wing in one folder (issue 32;
//! ARCHITECTURE.md §2): Kubernetes, Slurm and systemd around a launch.
//! This file is its vocabulary: which Kubernetes pod and container a
//! cgroup path names, and the Slurm task a job step's environment
//! describes (pure parsers). Its files are its layers: [`read`] (the pod,
//! kubelet's state and the Slurm task of the caller), [`plan`] (the
//! topology fingerprint, `--emit slurm N`'s per-task plans; pure),
//! [`check`] (the fleet findings; pure), [`report`] (the emitters:
//! `--emit systemd|k8s|slurm`) and [`run`] (`--settle`, `--emit`,
//! `--check-emitted`). What the core reads for itself stays in the core:
//! kubelet's checkpoint is a source of claims ([`crate::claim`]), `cpu.max`
//! a cgroup file ([`crate::system::cgroup::CpuMax`]). The core imports
//! none of it but `app`, which composes it.

pub mod access;
pub mod check;
pub mod plan;
pub mod read;
pub mod report;
pub mod run;

use std::collections::BTreeMap;

/// Kubernetes QoS class of a pod, from its cgroup path (kubelet's
/// `pkg/kubelet/cm/qos_container_manager_linux.go`: guaranteed pods sit
/// directly below `kubepods`, the others below `kubepods/burstable` and
/// `kubepods/besteffort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QosClass {
    /// requests = limits for every resource.
    Guaranteed,
    /// Some requests below limits.
    Burstable,
    /// No requests nor limits.
    BestEffort,
}

impl QosClass {
    /// Kubernetes' own name ("Guaranteed", "Burstable", "BestEffort").
    pub fn name(self) -> &'static str {
        match self {
            QosClass::Guaranteed => "Guaranteed",
            QosClass::Burstable => "Burstable",
            QosClass::BestEffort => "BestEffort",
        }
    }
}

/// A pod and container recognised from a cgroup path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// The pod UID with dashes (`metadata.uid`, the key of kubelet's state
    /// file), as the cgroupfs driver writes it; the systemd driver's
    /// underscores are turned back into dashes.
    pub uid: String,
    /// The container runtime's container id (the last path component, its
    /// `cri-containerd-`/`crio-`/`docker-` prefix and `.scope` removed);
    /// `None` when the path ends at the pod.
    pub container_id: Option<String>,
    /// The pod's QoS class.
    pub qos: QosClass,
}

/// Recognises the pod in a cgroup path of `/proc/self/cgroup`, in both
/// shapes kubelet creates (`pkg/kubelet/cm/cgroup_manager_linux.go`):
/// the cgroupfs driver's `/kubepods/burstable/pod<uid>/<id>` and the
/// systemd driver's
/// `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope`.
/// `None` for any other path (and for `/` inside a cgroup namespace).
pub fn parse_pod(path: &str) -> Option<Pod> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let top = parts
        .iter()
        .position(|p| *p == "kubepods" || *p == "kubepods.slice")?;
    let mut rest = &parts[top + 1..];
    let qos = match rest.first().copied() {
        Some("burstable" | "kubepods-burstable.slice") => QosClass::Burstable,
        Some("besteffort" | "kubepods-besteffort.slice") => QosClass::BestEffort,
        _ => QosClass::Guaranteed,
    };
    if qos != QosClass::Guaranteed {
        rest = &rest[1..];
    }
    let pod = rest.first()?;
    let uid = if let Some(slice) = pod.strip_suffix(".slice") {
        // kubepods-burstable-pod<uid>.slice / kubepods-pod<uid>.slice
        let at = slice.rfind("-pod")?;
        slice[at + 4..].replace('_', "-")
    } else {
        pod.strip_prefix("pod")?.to_string()
    };
    if uid.is_empty() || !uid.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return None;
    }
    let container_id = rest.get(1).map(|c| {
        let c = c.strip_suffix(".scope").unwrap_or(c);
        let c = c.rsplit_once('-').map_or(c, |(_, id)| id);
        c.to_string()
    });
    Some(Pod {
        uid,
        container_id,
        qos,
    })
}

/// The Slurm task this process is, from the job step's environment
/// (`srun(1)` "OUTPUT ENVIRONMENT VARIABLES").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlurmTask {
    /// `SLURM_JOB_ID`.
    pub job: String,
    /// `SLURM_STEP_ID` (absent in a batch script outside `srun`).
    pub step: Option<String>,
    /// `SLURM_PROCID`: the task's global rank.
    pub rank: Option<u32>,
    /// `SLURM_LOCALID`: the task's index on this node.
    pub local: Option<u32>,
    /// Tasks of the step on this node: the first count of
    /// `SLURM_STEP_TASKS_PER_NODE` (`2(x3),1` → 2), else of
    /// `SLURM_TASKS_PER_NODE`.
    pub tasks_on_node: Option<u32>,
    /// `SLURM_CPU_BIND_TYPE` (`mask_cpu:`, `none`, `cores,`...).
    pub bind_type: Option<String>,
    /// `SLURM_CPU_BIND_LIST`: one hex mask per local task, when bound.
    pub bind_list: Vec<String>,
}

impl SlurmTask {
    /// Recognises a Slurm job from environment variables (`vars` yields
    /// name and value); `None` without `SLURM_JOB_ID`.
    pub fn from_env<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<SlurmTask> {
        let env: BTreeMap<&str, &str> = vars
            .into_iter()
            .filter(|(k, _)| k.starts_with("SLURM_"))
            .collect();
        let num = |k: &str| env.get(k).and_then(|v| v.trim().parse().ok());
        let per_node = |k: &str| {
            let v = env.get(k)?;
            let first = v.split(',').next()?;
            first.split('(').next()?.trim().parse().ok()
        };
        Some(SlurmTask {
            job: env.get("SLURM_JOB_ID")?.to_string(),
            step: env.get("SLURM_STEP_ID").map(|s| s.to_string()),
            rank: num("SLURM_PROCID"),
            local: num("SLURM_LOCALID"),
            tasks_on_node: per_node("SLURM_STEP_TASKS_PER_NODE")
                .or_else(|| per_node("SLURM_TASKS_PER_NODE")),
            bind_type: env.get("SLURM_CPU_BIND_TYPE").map(|s| s.to_string()),
            bind_list: env
                .get("SLURM_CPU_BIND_LIST")
                .map(|l| {
                    l.split(',')
                        .filter(|m| !m.is_empty())
                        .map(|m| m.trim().to_lowercase())
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// "Slurm task 3" (the global rank), or "Slurm job 77" outside a step.
    pub fn name(&self) -> String {
        match self.rank {
            Some(r) => format!("Slurm task {r}"),
            None => format!("Slurm job {}", self.job),
        }
    }

    /// Whether Slurm bound the tasks to nothing: `SLURM_CPU_BIND_TYPE`
    /// unset or `none`.
    pub fn unbound(&self) -> bool {
        self.bind_type
            .as_deref()
            .is_none_or(|t| t.split(',').any(|w| w.trim_end_matches(':') == "none") || t.is_empty())
    }

    /// Whether two local tasks got the same mask in `SLURM_CPU_BIND_LIST`.
    pub fn masks_repeat(&self) -> bool {
        let mut seen = std::collections::BTreeSet::new();
        self.bind_list.iter().any(|m| !seen.insert(m.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both drivers' path shapes, as kubelet builds them
    /// (`pkg/kubelet/cm/cgroup_manager_linux.go` `ToSystemd`/`ToCgroupfs`,
    /// the kubelet docs' "cgroup drivers" page), for the three QoS classes.
    #[test]
    fn pods_are_recognised_in_both_cgroup_drivers() {
        let uid = "2f1b4b5c-2c1e-4a34-9b1c-7f8e2b7d9a10";
        let cases = [
            (
                format!("/kubepods/pod{uid}/8d5c0f1e2a"),
                QosClass::Guaranteed,
                Some("8d5c0f1e2a"),
            ),
            (
                format!("/kubepods/burstable/pod{uid}/8d5c0f1e2a"),
                QosClass::Burstable,
                Some("8d5c0f1e2a"),
            ),
            (
                format!("/kubepods/besteffort/pod{uid}"),
                QosClass::BestEffort,
                None,
            ),
            (
                format!(
                    "/kubepods.slice/kubepods-pod{}.slice/cri-containerd-8d5c0f1e2a.scope",
                    uid.replace('-', "_")
                ),
                QosClass::Guaranteed,
                Some("8d5c0f1e2a"),
            ),
            (
                format!(
                    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/crio-8d5c0f1e2a.scope",
                    uid.replace('-', "_")
                ),
                QosClass::Burstable,
                Some("8d5c0f1e2a"),
            ),
            (
                format!(
                    "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/docker-8d5c0f1e2a.scope",
                    uid.replace('-', "_")
                ),
                QosClass::BestEffort,
                Some("8d5c0f1e2a"),
            ),
        ];
        for (path, qos, id) in cases {
            let pod = parse_pod(&path).unwrap_or_else(|| panic!("{path}"));
            assert_eq!(pod.uid, uid, "{path}");
            assert_eq!(pod.qos, qos, "{path}");
            assert_eq!(pod.container_id.as_deref(), id, "{path}");
        }
        for other in [
            "/",
            "/user.slice/user-0.slice/session-1.scope",
            "/docker/abc",
            "/kubepods",
            "/kubepods/burstable",
            "/kubepods.slice/kubepods-burstable.slice",
        ] {
            assert_eq!(parse_pod(other), None, "{other}");
        }
    }

    /// srun(1) OUTPUT ENVIRONMENT VARIABLES.
    #[test]
    fn slurm_environment() {
        let t = SlurmTask::from_env([
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "3"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_STEP_TASKS_PER_NODE", "2(x2)"),
            ("SLURM_CPU_BIND_TYPE", "mask_cpu:"),
            ("SLURM_CPU_BIND_LIST", "0x30,0xC0"),
            ("HOME", "/root"),
        ])
        .unwrap();
        assert_eq!(t.name(), "Slurm task 3");
        assert_eq!(t.tasks_on_node, Some(2));
        assert!(!t.unbound());
        assert!(!t.masks_repeat());
        let u = SlurmTask::from_env([
            ("SLURM_JOB_ID", "77"),
            ("SLURM_CPU_BIND_TYPE", "none"),
            ("SLURM_CPU_BIND_LIST", "0xff,0xFF"),
        ])
        .unwrap();
        assert!(u.unbound() && u.masks_repeat());
        assert_eq!(u.name(), "Slurm job 77");
        assert_eq!(SlurmTask::from_env([("HOME", "/")]), None);
    }
}
