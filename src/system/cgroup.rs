//! The caller's cpuset: which CPUs its cgroup lets it use
//! (`Documentation/admin-guide/cgroup-v2.rst` "CgroupCpuset", `cpuset(7)` for v1).
//!
//! The cgroup comes from `/proc/self/cgroup` (fallback `/proc/self/cpuset`,
//! as hwloc does), the mount point from `/proc/self/mountinfo` (fallback
//! `/proc/mounts`). cgroup v2 reads `cpuset.cpus.effective`, walking up to
//! the nearest ancestor that has it (the file exists only where the cpuset
//! controller is enabled); v1 reads `cpuset.effective_cpus`, then
//! `cpuset.cpus`, then `cpus` (the legacy `cpuset` file system and
//! `noprefix` mounts).

use super::root::Root;
use crate::cpuset::CpuSet;

/// The cpuset that limits the caller, and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupCpuset {
    /// The cgroup path as the process sees it (`/docker/abc`, `/`).
    pub cgroup: String,
    /// The file read, as an absolute path on the machine (not below the root).
    pub file: String,
    /// Its CPUs.
    pub cpus: CpuSet,
    /// The matching memory-node file's nodes, when readable.
    pub mems: Option<CpuSet>,
    /// cgroup v2 `cpuset.cpus.partition` of the caller's cgroup (`member`,
    /// `root`, `isolated`, or `isolated invalid (reason)`), when present.
    pub partition: Option<String>,
}

#[derive(Debug)]
struct Mount {
    root: String,
    point: String,
    fstype: String,
    options: Vec<String>,
}

impl Mount {
    fn is_v2(&self) -> bool {
        self.fstype == "cgroup2"
    }
    fn is_v1_cpuset(&self) -> bool {
        self.fstype == "cpuset"
            || (self.fstype == "cgroup" && self.options.iter().any(|o| o == "cpuset"))
    }
    /// File-name prefix of v1 cpuset files on this mount.
    fn v1_prefix(&self) -> &'static str {
        if self.fstype == "cpuset" || self.options.iter().any(|o| o == "noprefix") {
            ""
        } else {
            "cpuset."
        }
    }
}

/// Undoes the octal escapes (`\040` for space) of mountinfo and mounts.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.clone().take(3).collect();
            if let Ok(v) = u8::from_str_radix(&code, 8) {
                out.push(v as char);
                chars.nth(2);
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The caller's cgroup membership, read once: the mounts
/// (`/proc/self/mountinfo`, fallback `/proc/mounts`) and `/proc/self/cgroup`.
#[derive(Debug)]
pub struct SelfCgroup {
    mounts: Vec<Mount>,
    /// The process's `/proc` directory: `/proc/self` or `/proc/PID`.
    proc_dir: String,
    /// `cgroup` in it, when readable.
    cgroup: Option<String>,
}

/// Reads the caller's mounts and `/proc/self/cgroup`, once for
/// [`read_cpuset`] and [`read_rt_group`].
pub fn read_self(root: &Root) -> SelfCgroup {
    read_of(root, None)
}

/// [`read_self`] for process `pid` (`None`: this process): its
/// `/proc/PID/cgroup`, whose paths the kernel shows relative to the
/// reader's cgroup namespace (`proc_cgroup_show()`, kernel/cgroup/cgroup.c),
/// so they are found below the caller's own mounts.
pub fn read_of(root: &Root, pid: Option<u32>) -> SelfCgroup {
    let proc_dir = pid.map_or_else(|| "/proc/self".to_string(), |p| format!("/proc/{p}"));
    SelfCgroup {
        mounts: read_mounts(root),
        cgroup: root.read(&format!("{proc_dir}/cgroup")),
        proc_dir,
    }
}

/// [`read_self`] for thread `tid` of process `pid`: its own
/// `/proc/PID/task/TID/cgroup` (a thread may be in another cgroup than
/// its process's main thread, [`super::threads::task_cgroup`]).
pub fn read_of_task(root: &Root, pid: u32, tid: u32) -> SelfCgroup {
    let proc_dir = format!("/proc/{pid}/task/{tid}");
    SelfCgroup {
        mounts: read_mounts(root),
        cgroup: root.read(&format!("{proc_dir}/cgroup")),
        proc_dir,
    }
}

fn read_mounts(root: &Root) -> Vec<Mount> {
    if let Some(text) = root.read("/proc/self/mountinfo") {
        // id parent major:minor root mount-point options [optional...] - fstype source super-options
        return text
            .lines()
            .filter_map(|l| {
                let (left, right) = l.split_once(" - ")?;
                let f: Vec<&str> = left.split_whitespace().collect();
                let r: Vec<&str> = right.split_whitespace().collect();
                Some(Mount {
                    root: unescape(f.get(3)?),
                    point: unescape(f.get(4)?),
                    fstype: r.first()?.to_string(),
                    options: r
                        .get(2)
                        .unwrap_or(&"")
                        .split(',')
                        .map(String::from)
                        .collect(),
                })
            })
            .collect();
    }
    root.read("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(Mount {
                root: "/".into(),
                point: unescape(f.get(1)?),
                fstype: f.get(2)?.to_string(),
                options: f.get(3)?.split(',').map(String::from).collect(),
            })
        })
        .collect()
}

/// The process's cgroup paths: (v2 path, v1 cpuset path).
fn cgroup_paths(root: &Root, me: &SelfCgroup) -> (Option<String>, Option<String>) {
    let Some(text) = &me.cgroup else {
        // Kernels and dumps without /proc/self/cgroup: /proc/self/cpuset names
        // the cpuset path for whichever hierarchy carries the controller.
        let p = root.read_value(&format!("{}/cpuset", me.proc_dir));
        return (p.clone(), p);
    };
    let (mut v2, mut v1) = (None, None);
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(hier), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if hier == "0" && ctrls.is_empty() {
            v2 = Some(path.to_string());
        } else if ctrls.split(',').any(|c| c == "cpuset") {
            v1 = Some(path.to_string());
        }
    }
    (v2, v1)
}

/// Joins a cgroup path onto its mount point, removing the mount's own root
/// (a bind-mounted sub-tree in a container shows `root` = `/docker/abc`).
///
/// `None` when the mount's root lies outside the caller's cgroup namespace
/// (mountinfo shows it as `/..`: a cgroupfs mounted before `unshare -C`) or
/// the cgroup does (`/../x` in `/proc/self/cgroup`), so the caller's cgroup
/// cannot be found below it; the caller then falls back to
/// `Cpus_allowed_list` rather than read the root cgroup's files.
fn cgroup_dir(mount: &Mount, path: &str) -> Option<String> {
    // `..` in the mount's root or the cgroup path (a cgroup outside the
    // namespace, `/../x`) leaves what can be located; in the mount point
    // (never so in the kernel's mountinfo, which prints canonical paths) it
    // would climb out of a --sysroot dump read by path.
    if [mount.root.as_str(), mount.point.as_str(), path]
        .iter()
        .any(|p| p.split('/').any(|c| c == ".."))
    {
        return None;
    }
    let rel = if mount.root != "/" {
        path.strip_prefix(mount.root.as_str()).unwrap_or(path)
    } else {
        path
    };
    Some(
        format!(
            "{}/{}",
            mount.point.trim_end_matches('/'),
            rel.trim_start_matches('/')
        )
        .trim_end_matches('/')
        .to_string(),
    )
}

/// Reads the first of `names` that parses, in `dir` or the nearest ancestor
/// at or below `top` that has it.
fn read_up(root: &Root, dir: &str, top: &str, names: &[&str]) -> Option<(String, CpuSet)> {
    let mut d = dir.to_string();
    loop {
        for name in names {
            let file = format!("{d}/{name}");
            if let Some(set) = root.read_list(&file) {
                return Some((file, set));
            }
        }
        if d.len() <= top.len() {
            return None;
        }
        d = match d.rfind('/') {
            Some(i) if i >= top.len() => d[..i].to_string(),
            _ => top.to_string(),
        };
    }
}

fn as_refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The cpuset limiting this process, or `None` when no cpuset information
/// exists (no cpuset controller mounted, or files unreadable).
pub fn read_cpuset(root: &Root, me: &SelfCgroup) -> Option<CgroupCpuset> {
    let mounts = &me.mounts;
    let (v2_path, v1_path) = cgroup_paths(root, me);
    let v1 = mounts
        .iter()
        .find(|m| m.is_v1_cpuset())
        .zip(v1_path.as_ref());
    let v2 = mounts.iter().find(|m| m.is_v2()).zip(v2_path.as_ref());
    let (mount, path, cpus_names, mems_names): (&Mount, &String, Vec<String>, Vec<String>) =
        if let Some((m, p)) = v1 {
            let pre = m.v1_prefix();
            (
                m,
                p,
                vec![format!("{pre}effective_cpus"), format!("{pre}cpus")],
                vec![format!("{pre}effective_mems"), format!("{pre}mems")],
            )
        } else {
            let (m, p) = v2?;
            (
                m,
                p,
                vec!["cpuset.cpus.effective".into()],
                vec!["cpuset.mems.effective".into()],
            )
        };
    let dir = cgroup_dir(mount, path)?;
    let top = mount.point.trim_end_matches('/');
    let (file, cpus) = read_up(root, &dir, top, &as_refs(&cpus_names))?;
    let mems = read_up(root, &dir, top, &as_refs(&mems_names)).map(|(_, s)| s);
    let partition = mount
        .is_v2()
        .then(|| root.read_value(&format!("{dir}/cpuset.cpus.partition")))
        .flatten();
    Some(CgroupCpuset {
        cgroup: path.clone(),
        file,
        cpus,
        mems,
        partition,
    })
}

/// The caller's cgroup v2 path from `/proc/self/cgroup` (`0::PATH`), or
/// `/proc/self/cpuset` on kernels without it.
pub fn v2_path(root: &Root, me: &SelfCgroup) -> Option<String> {
    cgroup_paths(root, me).0
}

/// The caller's cgroup paths that can name a Kubernetes pod, most telling
/// first: the cgroup v2 path, then the v1 paths of the `cpuset`, `cpu`
/// and `cpuacct` controllers (kubelet creates the pod's cgroup in each
/// hierarchy it manages, with either cgroup driver, so a pure cgroup v1
/// node shows the pod only on those lines).
pub fn pod_paths(root: &Root, me: &SelfCgroup) -> Vec<String> {
    let (v2, v1) = cgroup_paths(root, me);
    let mut out: Vec<String> = v2.into_iter().chain(v1).collect();
    if let Some(text) = &me.cgroup {
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(_), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if ctrls.split(',').any(|c| c == "cpu" || c == "cpuacct") {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// The CFS bandwidth limit on the caller: `cpu.max` of its cgroup v2, else
/// of the nearest ancestor (below the mount point) whose `cpu.max` is not
/// `max` (each level limits its whole subtree). `None` without cgroup v2,
/// or when no level is limited.
pub fn read_cpu_max(root: &Root, me: &SelfCgroup) -> Option<CpuMax> {
    let mount = me.mounts.iter().find(|m| m.is_v2())?;
    let dir = cgroup_dir(mount, &v2_path(root, me)?)?;
    let top = mount.point.trim_end_matches('/');
    let mut d = dir.as_str();
    while d.len() > top.len() {
        let file = format!("{d}/cpu.max");
        if let Some(max) = root.read(&file).and_then(|t| parse_cpu_max(&file, &t)) {
            return Some(max);
        }
        d = &d[..d.rfind('/')?];
    }
    None
}

/// The path of the caller's cgroup in the v1 hierarchy carrying
/// `controller`, from `/proc/self/cgroup`.
fn v1_path(me: &SelfCgroup, controller: &str) -> Option<String> {
    me.cgroup.as_deref()?.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        ctrls
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_string())
    })
}

/// RT group scheduling limits on the caller (`Documentation/scheduler/sched-rt-group.rst`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RtGroup {
    /// `cpu.rt_runtime_us` of the caller's cgroup v1 `cpu` hierarchy, with
    /// the cgroup path; present only with CONFIG_RT_GROUP_SCHED.
    pub v1_runtime: Option<(String, i64)>,
    /// The caller's cgroup v2 path, when it is not the root.
    pub v2_cgroup: Option<String>,
}

/// Reads the RT group scheduling limits of the caller's cgroups (the
/// planner refuses `--fifo`/`--rr` by `v1_runtime`; an EPERM is explained
/// by it). The kernel config is read apart: [`read_rt_group_config`].
pub fn read_rt_group(root: &Root, me: &SelfCgroup) -> RtGroup {
    let v1_runtime = me
        .mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.options.iter().any(|o| o == "cpu"))
        .zip(v1_path(me, "cpu"))
        .and_then(|(m, p)| {
            let v = root.read_int(&format!("{}/cpu.rt_runtime_us", cgroup_dir(m, &p)?))?;
            Some((p, v))
        });
    RtGroup {
        v1_runtime,
        v2_cgroup: cgroup_paths(root, me).0.filter(|p| p != "/"),
    }
}

/// Whether the running kernel was built with `CONFIG_RT_GROUP_SCHED=y`
/// ([`super::kernel_config::read`]: `/proc/config.gz`, else
/// `/boot/config-$(uname -r)`); `None` when neither is readable. Read only
/// to explain an EPERM.
pub fn read_rt_group_config(root: &Root) -> Option<bool> {
    super::kernel_config::read(root).map(|c| c.enabled("RT_GROUP_SCHED"))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel config is read only on demand, from
    /// `/boot/config-$(osrelease)`.
    #[test]
    fn rt_group_config_from_boot_config() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let write = |p: &str, t: &str| {
            let f = dir.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        };
        assert_eq!(read_rt_group_config(&root), None);
        write("proc/sys/kernel/osrelease", "6.1.0-test\n");
        write(
            "boot/config-6.1.0-test",
            "CONFIG_X=y\n# CONFIG_RT_GROUP_SCHED is not set\n",
        );
        assert_eq!(read_rt_group_config(&root), Some(false));
        write(
            "boot/config-6.1.0-test",
            "CONFIG_X=y\nCONFIG_RT_GROUP_SCHED=y\n",
        );
        assert_eq!(read_rt_group_config(&root), Some(true));
        write("proc/self/cgroup", "0::/user.slice\n");
        let rt = read_rt_group(&root, &read_self(&root));
        assert_eq!(rt.v2_cgroup.as_deref(), Some("/user.slice"));
    }

    #[test]
    fn unescapes_mountinfo() {
        assert_eq!(unescape(r"/a\040b"), "/a b");
        assert_eq!(unescape(r"/plain"), "/plain");
    }

    #[test]
    fn container_root_is_stripped() {
        let m = Mount {
            root: "/docker/abc".into(),
            point: "/sys/fs/cgroup".into(),
            fstype: "cgroup2".into(),
            options: vec![],
        };
        assert_eq!(cgroup_dir(&m, "/docker/abc").unwrap(), "/sys/fs/cgroup");
        assert_eq!(cgroup_dir(&m, "/").unwrap(), "/sys/fs/cgroup");
        let m2 = Mount {
            root: "/".into(),
            ..m
        };
        assert_eq!(cgroup_dir(&m2, "/a/b").unwrap(), "/sys/fs/cgroup/a/b");
        // Mounted outside the caller's cgroup namespace: not locatable.
        let m3 = Mount {
            root: "/..".into(),
            ..m2
        };
        assert_eq!(cgroup_dir(&m3, "/"), None);
        // A mount point with `..` (never in the kernel's mountinfo; a
        // hostile dump's, read by path, would climb out of the dump).
        let m4 = Mount {
            root: "/".into(),
            point: "/../../../tmp/outside".into(),
            ..m3
        };
        assert_eq!(cgroup_dir(&m4, "/cgx"), None);
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
}
