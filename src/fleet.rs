//! The fleet engines as data (issue 23): which Kubernetes pod and
//! container a cgroup path names, kubelet's CPU manager state, a cgroup v2
//! CFS quota (`cpu.max`), and the Slurm task a job step's environment
//! describes. Pure parsers; [`crate::system::fleet`] reads the files and
//! the environment, [`crate::check`] decides what they mean.

use crate::cpuset::CpuSet;
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

/// kubelet's CPU manager checkpoint (`/var/lib/kubelet/cpu_manager_state`,
/// `pkg/kubelet/cm/cpumanager/state/checkpoint.go`
/// `CPUManagerCheckpointV2`): the policy, the shared pool and the
/// exclusive assignments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeletState {
    /// `policyName`: `none` or `static`.
    pub policy: String,
    /// `defaultCpuSet`: the shared pool (every CPU not assigned
    /// exclusively, the reserved CPUs included).
    pub default_cpus: CpuSet,
    /// `entries`: pod UID → container name → exclusive CPUs (a V1
    /// checkpoint's container id → CPUs is kept under the pod key "").
    pub entries: BTreeMap<String, BTreeMap<String, CpuSet>>,
}

/// The value of `key` in a JSON object, matched as Go's `encoding/json`
/// matches struct fields: the exact name first, else any case
/// (kubelet's own tests write `defaultCPUSet` for `defaultCpuSet`).
fn field<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    let m = v.as_object()?;
    m.get(key).or_else(|| {
        m.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    })
}

/// Parses kubelet's CPU manager checkpoint, as kubelet restores it
/// (`pkg/kubelet/cm/cpumanager/state/state_checkpoint.go`, the cases of
/// `state_checkpoint_test.go`): a V4 checkpoint's `data` string holds the
/// state (its outer fields are not used); `entries` maps pod UID →
/// container name → cpulist (V2; a V1 checkpoint's container id →
/// cpulist is kept under the pod key ""), `podEntries` pod UID →
/// `{"cpuSet": cpulist}` (V3, pod-level resources: kept as container "").
/// Keys match in any case, as Go's JSON decoder does. CPUs above `upto`
/// (the highest possible CPU, `cpu/possible`) are dropped while parsing:
/// no such CPU can be assigned on this machine, and the sets cost memory
/// linear in the file's size however wide its ranges (a hostile
/// `0-4194303` per entry once took 1 GB for 1 000 entries). Errors say
/// what is malformed.
pub fn parse_kubelet_state(text: &str, upto: u32) -> Result<KubeletState, String> {
    let outer: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let inner;
    let v = match field(&outer, "data") {
        Some(serde_json::Value::String(d)) => {
            inner = serde_json::from_str::<serde_json::Value>(d)
                .map_err(|e| format!("\"data\" is not JSON: {e}"))?;
            &inner
        }
        _ => &outer,
    };
    let list = |s: &serde_json::Value| -> Result<CpuSet, String> {
        let t = s.as_str().ok_or("a cpulist is not a string")?;
        CpuSet::parse_sysfs_list_upto(t, upto).map_err(|e| format!("bad cpulist {t:?}: {e}"))
    };
    let policy = field(v, "policyName")
        .and_then(|p| p.as_str())
        .unwrap_or("")
        .to_string();
    let default_cpus = match field(v, "defaultCpuSet") {
        None | Some(serde_json::Value::Null) => CpuSet::new(),
        Some(s) => list(s)?,
    };
    let mut entries: BTreeMap<String, BTreeMap<String, CpuSet>> = BTreeMap::new();
    match field(v, "entries") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(m)) => {
            for (pod, containers) in m {
                match containers {
                    serde_json::Value::Object(c) => {
                        let e = entries.entry(pod.clone()).or_default();
                        for (name, cpus) in c {
                            e.insert(name.clone(), list(cpus)?);
                        }
                    }
                    s @ serde_json::Value::String(_) => {
                        entries
                            .entry(String::new())
                            .or_default()
                            .insert(pod.clone(), list(s)?);
                    }
                    _ => return Err(format!("entry {pod:?} is neither an object nor a cpulist")),
                }
            }
        }
        Some(_) => return Err("\"entries\" is not an object".into()),
    }
    match field(v, "podEntries") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(m)) => {
            for (pod, e) in m {
                let cpus =
                    field(e, "cpuSet").ok_or_else(|| format!("pod entry {pod:?} has no cpuSet"))?;
                entries
                    .entry(pod.clone())
                    .or_default()
                    .insert(String::new(), list(cpus)?);
            }
        }
        Some(_) => return Err("\"podEntries\" is not an object".into()),
    }
    Ok(KubeletState {
        policy,
        default_cpus,
        entries,
    })
}

/// Which of kubelet's CPU pools a container runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pool {
    /// Exclusive CPUs of the static CPU manager, and the container's name
    /// in the state file.
    Exclusive {
        /// The container's name in `entries`.
        container: String,
        /// Its CPUs.
        cpus: CpuSet,
    },
    /// The shared pool (`defaultCpuSet`, or every CPU under the `none`
    /// policy): other containers' threads run on the same CPUs and the
    /// pool shrinks when kubelet assigns exclusive CPUs.
    Shared,
    /// The state file assigns the container CPUs that its
    /// `cpuset.cpus.effective` does not show yet (kubelet's reconcile loop
    /// has not written them).
    Unsettled {
        /// The container's name in `entries`.
        container: String,
        /// The CPUs the state file assigns.
        assigned: CpuSet,
    },
}

impl KubeletState {
    /// The pool of the container of pod `uid` whose cgroup's effective
    /// CPUs are `effective`. A pod without entries (or the `none` policy)
    /// is in the shared pool. Of a pod's entries, the one equal to
    /// `effective` is the container's; a pod with a single entry that
    /// differs is unsettled (the state file does not say which container
    /// is which, only names). With several entries and none equal, the
    /// container is one of the pod's shared-pool containers when
    /// `effective` is the shared pool, and unsettled on the first
    /// otherwise. `uid` `None` (a cgroup namespace hides the path): the
    /// entry equal to `effective` among all pods, else shared when
    /// `effective` is the shared pool, else `None`.
    pub fn pool(&self, uid: Option<&str>, effective: &CpuSet) -> Option<Pool> {
        if self.policy != "static" {
            return Some(Pool::Shared);
        }
        let exclusive = |(name, cpus): (&String, &CpuSet)| Pool::Exclusive {
            container: name.clone(),
            cpus: cpus.clone(),
        };
        let Some(uid) = uid else {
            let hit = self
                .entries
                .values()
                .flat_map(|c| c.iter())
                .find(|(_, cpus)| *cpus == effective);
            return match hit {
                Some(h) => Some(exclusive(h)),
                None => (*effective == self.default_cpus).then_some(Pool::Shared),
            };
        };
        let Some(containers) = self.entries.get(uid).filter(|c| !c.is_empty()) else {
            return Some(Pool::Shared);
        };
        if let Some(hit) = containers.iter().find(|(_, cpus)| *cpus == effective) {
            return Some(exclusive(hit));
        }
        if containers.len() > 1 && *effective == self.default_cpus {
            return Some(Pool::Shared);
        }
        let (name, cpus) = containers.iter().next()?;
        Some(Pool::Unsettled {
            container: name.clone(),
            assigned: cpus.clone(),
        })
    }
}

/// A cgroup v2 CFS bandwidth limit (`cpu.max`: `$MAX $PERIOD`, both in
/// microseconds; `Documentation/admin-guide/cgroup-v2.rst` "cpu.max").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuMax {
    /// The file it was read from (absolute path on the machine).
    pub file: String,
    /// The quota per period, in microseconds.
    pub quota_us: u64,
    /// The period, in microseconds.
    pub period_us: u64,
}

/// Parses `cpu.max` (`max 100000` or `200000 100000`; a lone quota keeps
/// the default period of 100000 us). `None` when unlimited or malformed.
pub fn parse_cpu_max(file: &str, text: &str) -> Option<CpuMax> {
    let mut w = text.split_whitespace();
    let quota = w.next()?;
    if quota == "max" {
        return None;
    }
    let period_us = match w.next() {
        Some(p) => p.parse().ok()?,
        None => 100_000,
    };
    Some(CpuMax {
        file: file.to_string(),
        quota_us: quota.parse().ok()?,
        period_us,
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

    fn set(t: &str) -> CpuSet {
        CpuSet::parse(t).unwrap()
    }

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

    /// The checkpoint shapes of kubelet's own tests
    /// (`pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go`,
    /// kubernetes/kubernetes 0411cc70): V2 `entries`, V3 `podEntries`, V4
    /// `data`, `defaultCPUSet` spelled as Go's decoder accepts it.
    #[test]
    fn kubelet_state_and_pools() {
        let s = parse_kubelet_state(
            r#"{"policyName":"static","defaultCpuSet":"0,5-15","entries":{"pod":{"container1":"1-2","container2":"3-4"},"pod2":{"c":"5"}},"checksum":4198766049}"#, crate::cpuset::MAX_ID
        )
        .unwrap();
        assert_eq!(s.default_cpus, set("0,5-15"));
        assert_eq!(
            s.pool(Some("pod"), &set("3-4")),
            Some(Pool::Exclusive {
                container: "container2".into(),
                cpus: set("3-4")
            })
        );
        // A pod with no entry: the shared pool.
        assert_eq!(s.pool(Some("other"), &set("0,5-15")), Some(Pool::Shared));
        // One entry, a different cpuset: kubelet has not applied it yet.
        assert_eq!(
            s.pool(Some("pod2"), &set("0-15")),
            Some(Pool::Unsettled {
                container: "c".into(),
                assigned: set("5")
            })
        );
        // Several entries, the shared pool: a shared container of the pod.
        assert_eq!(s.pool(Some("pod"), &set("0,5-15")), Some(Pool::Shared));
        // Path hidden by a cgroup namespace: matched by CPUs.
        assert_eq!(
            s.pool(None, &set("1-2")),
            Some(Pool::Exclusive {
                container: "container1".into(),
                cpus: set("1-2")
            })
        );
        assert_eq!(s.pool(None, &set("0-1")), None);
        let none = parse_kubelet_state(
            r#"{"policyName":"none","defaultCpuSet":"","checksum":1}"#,
            crate::cpuset::MAX_ID,
        )
        .unwrap();
        assert_eq!(none.pool(Some("pod"), &set("0-3")), Some(Pool::Shared));
        // state_checkpoint_test.go "Restore valid checkpoint ...": V4, the
        // outer (V2) fields deliberately wrong, the state in "data".
        let v4 = parse_kubelet_state(
            r#"{"policyName":"other","defaultCPUSet":"1-9","checksum":1234,"data":"{\"policyName\":\"static\",\"defaultCPUSet\":\"7-9\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"1-3\"}}}","dataChecksum":1420829534}"#, crate::cpuset::MAX_ID
        )
        .unwrap();
        assert_eq!(v4.policy, "static");
        assert_eq!(v4.default_cpus, set("7-9"));
        assert_eq!(v4.entries["pod"]["container1"], set("4-6"));
        // "Restore checkpoint from v3 (migration)": podEntries.
        let v3 = parse_kubelet_state(
            r#"{"policyName":"static","defaultCPUSet":"1-2","entries":{"pod1":{"container1":"5-6","container2":"3-4"}},"podEntries":{"pod2":{"cpuSet":"7-9"}},"checksum":766259872}"#, crate::cpuset::MAX_ID
        )
        .unwrap();
        assert_eq!(v3.entries["pod2"][""], set("7-9"));
        assert_eq!(v3.entries["pod1"]["container2"], set("3-4"));
        for bad in [
            r#"{"entries":[]}"#,
            r#"{"defaultCpuSet":"x"}"#,
            "{",
            r#"{"data":"{"}"#,
        ] {
            assert!(
                parse_kubelet_state(bad, crate::cpuset::MAX_ID).is_err(),
                "{bad}"
            );
        }
    }

    /// kubelet's lists are clipped to the possible CPUs while parsing:
    /// `0-4194303` on a 4-CPU machine is 0-3 in one word, strides and
    /// singles above the last CPU drop out, and syntax errors stay errors.
    #[test]
    fn kubelet_lists_are_clipped_to_the_possible_cpus() {
        let s = parse_kubelet_state(
            r#"{"policyName":"static","defaultCpuSet":"0-4194303","entries":{"p":{"a":"0-4194303","b":"2-4194303:2","c":"9,4194303","d":"1,7"}}}"#,
            3,
        )
        .unwrap();
        assert_eq!(s.default_cpus, set("0-3"));
        let p = &s.entries["p"];
        assert_eq!(
            (
                p["a"].clone(),
                p["b"].clone(),
                p["c"].clone(),
                p["d"].clone()
            ),
            (set("0-3"), set("2"), CpuSet::new(), set("1"))
        );
        assert!(parse_kubelet_state(r#"{"entries":{"p":{"a":"0-4194304"}}}"#, 3).is_err());
        assert!(parse_kubelet_state(r#"{"entries":{"p":{"a":"3-1"}}}"#, 3).is_err());
    }

    /// cgroup-v2.rst "cpu.max": "$MAX $PERIOD", "max" for no limit.
    #[test]
    fn cpu_max() {
        assert_eq!(parse_cpu_max("f", "max 100000\n"), None);
        let q = parse_cpu_max("f", "150000 100000\n").unwrap();
        assert_eq!((q.quota_us, q.period_us), (150_000, 100_000));
        assert_eq!(parse_cpu_max("f", "50000").unwrap().period_us, 100_000);
        assert_eq!(parse_cpu_max("f", "x 1"), None);
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
