//! An in-memory machine for unit tests of [`crate::plan`] and
//! [`crate::check`]: a [`Machine`] builder that fills a [`SystemState`]
//! without reading any file, and [`request`] to parse a command line into a
//! [`Request`]. Not part of pinrun's interface.
//!
//! CPU numbering follows what x86 firmware usually gives Linux: the first
//! SMT thread of every core first, package by package, then the second
//! threads (`cpu = thread × cores + package × cores_per_package + core`),
//! so the SMT siblings of CPU 0 on a 2×4×2 machine are 0 and 8. Each
//! package is one NUMA node with 16 GiB of memory (8 GiB free); node
//! distances are 10 (local) and 20 (remote).

use crate::boot_params::BootParams;
use crate::cpuset::CpuSet;
use crate::request::Request;
use crate::system::numa::Node;
use crate::system::process::Process;
use crate::system::{AllowedSource, Cpu, IsolationSource, SystemState};
use std::collections::BTreeMap;

/// Builds a [`SystemState`] (see the module doc for the layout).
#[derive(Debug, Clone)]
pub struct Machine {
    sys: SystemState,
}

/// A cpulist (`"0-3,8"`); panics on a bad list (test input).
pub fn cpus(list: &str) -> CpuSet {
    CpuSet::parse(list).expect("a cpulist")
}

/// A plan of the CPUs `list` (a cpulist; panics on a bad one) with the
/// scheduling request `sched`, and nothing else: no cores, nodes, memory
/// policy, reasons or thread placement.
pub fn plan_on(list: &str, sched: crate::request::SchedRequest) -> crate::plan::Plan {
    crate::plan::Plan {
        cpus: Some(cpus(list)),
        cores: Vec::new(),
        nodes: Default::default(),
        memory: None,
        sched,
        reasons: Vec::new(),
        omp: None,
        thread_map: None,
        choice: None,
    }
}

/// Claims of one kubelet container (pod `p`, container `c`) on the CPUs
/// `list` (a cpulist; panics on a bad one).
pub fn kubelet(list: &str) -> crate::claim::Claims {
    use crate::claim::{Claim, Claims, Holder};
    let holder = Holder::Kubelet {
        pod: "p".into(),
        container: "c".into(),
    };
    let cpus = cpus(list);
    let claims = vec![Claim { holder, cpus }];
    Claims {
        claims,
        ..Default::default()
    }
}

/// `args` followed by `--deadline` with 1 ms of runtime every 10 ms.
pub fn deadline<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let dl = "--deadline --sched-runtime 1ms --sched-period 10ms".split(' ');
    args.iter().copied().chain(dl).collect()
}

/// Parses `pinrun ARGS` into a request; panics on a usage error.
pub fn request(args: &[&str]) -> Request {
    use clap::Parser;
    let argv = std::iter::once("pinrun").chain(args.iter().copied());
    crate::cli::Cli::try_parse_from(argv)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
        .into_request()
        .unwrap_or_else(|e| panic!("{args:?}: {}", e.message))
}

impl Machine {
    /// `packages` packages (one node each) of `cores` cores with `threads`
    /// SMT threads each, every CPU online and allowed, nothing isolated.
    pub fn new(packages: u32, cores: u32, threads: u32) -> Self {
        let per_thread = packages * cores;
        let id = |t: u32, p: u32, c: u32| t * per_thread + p * cores + c;
        let mut cpu_map = BTreeMap::new();
        let mut nodes = BTreeMap::new();
        for p in 0..packages {
            let package_cpus: CpuSet = (0..threads)
                .flat_map(|t| (0..cores).map(move |c| id(t, p, c)))
                .collect();
            for c in 0..cores {
                let siblings: CpuSet = (0..threads).map(|t| id(t, p, c)).collect();
                for t in 0..threads {
                    let n = id(t, p, c);
                    cpu_map.insert(
                        n,
                        Cpu {
                            id: n,
                            online: true,
                            core_id: Some(c),
                            package: Some(p),
                            die: Some(0),
                            cluster: None,
                            siblings: Some(siblings.clone()),
                            package_cpus: Some(package_cpus.clone()),
                            llc: Some(package_cpus.clone()),
                            die_cpus: Some(package_cpus.clone()),
                            cluster_cpus: None,
                            capacity: None,
                            node: Some(p),
                            governor: None,
                        },
                    );
                }
            }
            nodes.insert(
                p,
                Node {
                    id: p,
                    cpus: package_cpus,
                    mem_total_kb: Some(16 << 20),
                    mem_free_kb: Some(8 << 20),
                    mem_reclaimable_kb: None,
                    distances: (0..packages)
                        .map(|q| (q, if q == p { 10 } else { 20 }))
                        .collect(),
                    has_memory: true,
                    offline_cpus: CpuSet::new(),
                },
            );
        }
        let all: CpuSet = cpu_map.keys().copied().collect();
        Machine {
            sys: SystemState {
                possible: all.clone(),
                present: all.clone(),
                online: all.clone(),
                cpus: cpu_map,
                nodes,
                numa: true,
                allowed: all,
                allowed_source: AllowedSource::Online,
                isolated: CpuSet::new(),
                nohz_full: CpuSet::new(),
                nohz_full_source: IsolationSource::Sysfs,
                workqueue_cpus: None,
                isolation_source: IsolationSource::Sysfs,
                boot: BootParams::default(),
                irqs: Default::default(),
                rt_tasks: Vec::new(),
                idle_states: BTreeMap::new(),
                rt_group: Default::default(),
                preempt: None,
                numa_balancing: None,
                cpu_max: None,
                cgroup_paths: Vec::new(),
                inherited_from: None,
                env_affinity: Vec::new(),
                env_omp_num_threads: None,
                cmdline: String::new(),
                process: Process::default(),
                warnings: Vec::new(),
                topology_issues: Vec::new(),
                disagreements: Vec::new(),
                nocb_kthreads: None,
                measured: None,
                hybrid: Default::default(),
                near: None,
                devices: Vec::new(),
                read_error: None,
            },
        }
    }

    /// Takes `list` offline: out of `online` and `allowed`, without
    /// topology (as the kernel removes `topology/` of an offline CPU).
    pub fn offline(mut self, list: &str) -> Self {
        let off = cpus(list);
        self.sys.online = self.sys.online.difference(&off);
        self.sys.allowed = self.sys.allowed.difference(&off);
        for id in off.iter() {
            self.sys
                .cpus
                .insert(id, crate::system::topology::unread_cpu(id, false));
        }
        self
    }

    /// A kernel without NUMA: one node 0 with every CPU (as
    /// [`SystemState::read`] makes it without `/sys/devices/system/node`).
    pub fn without_numa(mut self) -> Self {
        self.sys.numa = false;
        self.sys.nodes =
            std::iter::once((0, crate::system::numa::without_numa(&self.sys.online))).collect();
        for c in self.sys.cpus.values_mut() {
            c.node = Some(0);
        }
        self
    }

    /// Takes `list` offline as [`Machine::offline`] and out of its node's
    /// `cpulist`, keeping its `cpuN/nodeM` link (as the kernel does).
    pub fn offline_in_node(mut self, list: &str) -> Self {
        let off = cpus(list);
        for n in self.sys.nodes.values_mut() {
            n.offline_cpus.union_with(&n.cpus.intersection(&off));
            n.cpus = n.cpus.difference(&off);
        }
        self.offline(list)
    }

    /// Sets the inherited affinity (`Cpus_allowed_list`) to `list`, leaving
    /// the allowed CPUs (the cgroup's) as they are.
    pub fn inherited(mut self, list: &str) -> Self {
        self.sys.process.cpus_allowed = Some(cpus(list));
        self
    }

    /// Limits the allowed CPUs to `list` (as `Cpus_allowed_list` would).
    pub fn allowed(mut self, list: &str) -> Self {
        let a = cpus(list);
        self.sys.allowed = self.sys.online.intersection(&a);
        self.sys.process.cpus_allowed = Some(a);
        self.sys.allowed_source = AllowedSource::Status;
        self
    }

    /// Domain-isolates `list` and makes it `nohz_full` (as `isolcpus=` and
    /// `nohz_full=` would).
    pub fn isolated(mut self, list: &str) -> Self {
        self.sys.isolated = cpus(list);
        self.sys.nohz_full = cpus(list);
        self
    }

    /// Removes node `id`'s memory (a CPU-only node).
    pub fn without_memory(mut self, id: u32) -> Self {
        if let Some(n) = self.sys.nodes.get_mut(&id) {
            n.has_memory = false;
            n.mem_total_kb = Some(0);
            n.mem_free_kb = Some(0);
        }
        self
    }

    /// Sets the free memory of node `id`, in MiB.
    pub fn free_mib(mut self, id: u32, mib: u64) -> Self {
        if let Some(n) = self.sys.nodes.get_mut(&id) {
            n.mem_free_kb = Some(mib * 1024);
        }
        self
    }

    /// Sets what reclaim can free on node `id` (page cache, reclaimable
    /// slab), in MiB.
    pub fn reclaimable_mib(mut self, id: u32, mib: u64) -> Self {
        if let Some(n) = self.sys.nodes.get_mut(&id) {
            n.mem_reclaimable_kb = Some(mib * 1024);
        }
        self
    }

    /// The caller lacks CAP_SYS_NICE and has RLIMIT_RTPRIO `limit`.
    pub fn unprivileged(mut self, rtprio_limit: u64) -> Self {
        self.sys.process.cap_sys_nice = Some(false);
        self.sys.process.rtprio_limit = Some(rtprio_limit);
        self
    }

    /// `RLIMIT_RTTIME` ("Max realtime timeout" of `/proc/self/limits`),
    /// soft and hard, in microseconds (`u64::MAX`: unlimited).
    pub fn rttime(mut self, soft_us: u64, hard_us: u64) -> Self {
        self.sys.process.rttime_limit = Some(crate::system::process::Rlimit {
            soft: soft_us,
            hard: hard_us,
        });
        self
    }

    /// `kernel.sched_rt_runtime_us` and `sched_rt_period_us` (µs; runtime
    /// -1: no throttling, no deadline admission control).
    pub fn rt_sysctls(mut self, runtime_us: i64, period_us: i64) -> Self {
        self.sys.process.rt_runtime_us = Some(runtime_us);
        self.sys.process.rt_period_us = Some(period_us);
        self
    }

    /// The preemption model, as read from `source` (`dynamic`:
    /// `CONFIG_PREEMPT_DYNAMIC`, read from the running kernel).
    pub fn preempt(
        mut self,
        model: crate::system::preempt::PreemptModel,
        source: &str,
        dynamic: bool,
    ) -> Self {
        self.sys.preempt = Some(crate::system::preempt::Preemption {
            model,
            source: source.into(),
            dynamic,
            at_boot: false,
        });
        self
    }

    /// `kernel.sched_deadline_period_{min,max}_us`.
    pub fn dl_period_bounds(mut self, min_us: u64, max_us: u64) -> Self {
        self.sys.process.dl_period_min_us = Some(min_us);
        self.sys.process.dl_period_max_us = Some(max_us);
        self
    }

    /// The current nice value and the soft `RLIMIT_NICE`.
    pub fn nice(mut self, current: i32, limit: u64) -> Self {
        self.sys.process.nice = Some(current);
        self.sys.process.nice_limit = Some(limit);
        self
    }

    /// The kernel release (`/proc/sys/kernel/osrelease`).
    pub fn kernel(mut self, release: &str) -> Self {
        self.sys.process.kernel_release = Some(release.to_string());
        self
    }

    /// Limits the allowed CPUs to `list` by the cgroup v2 cpuset of
    /// `cgroup` (its `cpuset.cpus.effective`), as in a container.
    pub fn cgroup_cpuset(mut self, cgroup: &str, list: &str) -> Self {
        let a = cpus(list);
        self.sys.allowed = self.sys.online.intersection(&a);
        self.sys.allowed_source = AllowedSource::Cgroup(crate::system::CgroupCpuset {
            cgroup: cgroup.to_string(),
            file: format!("/sys/fs/cgroup{cgroup}/cpuset.cpus.effective"),
            cpus: a,
            mems: None,
            partition: None,
        });
        self
    }

    /// Splits the last-level caches: every group of `groups` (cpulists)
    /// is one LLC, shared by its CPUs (each group holds whole cores).
    pub fn llc(self, groups: &[&str]) -> Self {
        self.groups(groups, |c, set| c.llc = Some(set))
    }

    /// Splits the clusters (`cluster_cpus_list`): each group of `groups`.
    pub fn clusters(self, groups: &[&str]) -> Self {
        self.groups(groups, |c, set| c.cluster_cpus = Some(set))
    }

    /// Gives every CPU of each group of `groups` that group, by `set`.
    fn groups(mut self, groups: &[&str], set: impl Fn(&mut Cpu, CpuSet)) -> Self {
        for g in groups {
            let group = cpus(g);
            for id in group.iter() {
                set(
                    self.sys.cpus.get_mut(&id).expect("a CPU of the machine"),
                    group.clone(),
                );
            }
        }
        self
    }

    /// An Intel hybrid: `core` in `/sys/devices/cpu_core/cpus`, `atom` in
    /// `/sys/devices/cpu_atom/cpus`.
    pub fn hybrid(mut self, core: &str, atom: &str) -> Self {
        self.sys.hybrid.core = Some(cpus(core));
        self.sys.hybrid.atom = Some(cpus(atom));
        self
    }

    /// `cpu_capacity` of the CPUs of `list`.
    pub fn capacity(mut self, list: &str, capacity: u32) -> Self {
        for id in cpus(list).iter() {
            self.sys
                .cpus
                .get_mut(&id)
                .expect("a CPU of the machine")
                .capacity = Some(capacity);
        }
        self
    }

    /// The machine.
    pub fn build(self) -> SystemState {
        self.sys
    }
}

/// A one-connection stand-in for irqbalance's control socket, as
/// `irqbalance.c` `sock_handle()` serves it: a unix stream socket
/// `irqbalance1.sock` in a fresh directory below the temporary directory
/// with `SO_PASSCRED`, one `recvmsg()` of at most 500 bytes (1.9.4's
/// buffer), then `reply` and close. Returns the socket's path and a handle
/// that yields what it received and the sender's uid from
/// `SCM_CREDENTIALS` (`None` without them). Panics on any I/O error (test
/// setup).
pub fn irqbalance_server(
    reply: Vec<u8>,
) -> (
    std::path::PathBuf,
    std::thread::JoinHandle<(String, Option<u32>)>,
) {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt};
    use std::io::Write;
    use std::os::fd::AsRawFd;
    // A directory of its own, kept (the socket's path outlives this call).
    let dir = tempfile::Builder::new()
        .prefix("pinrun-irqb-")
        .tempdir()
        .expect("a temporary directory")
        .keep();
    let path = dir.join("irqbalance1.sock");
    let l = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    setsockopt(&l, sockopt::PassCred, &true).expect("SO_PASSCRED");
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let mut buf = [0u8; 500];
        let mut iov = [std::io::IoSliceMut::new(&mut buf)];
        let mut cmsg = nix::cmsg_space!(nix::sys::socket::UnixCredentials);
        let m = recvmsg::<()>(s.as_raw_fd(), &mut iov, Some(&mut cmsg), MsgFlags::empty())
            .expect("recvmsg");
        let uid = m.cmsgs().expect("cmsgs").find_map(|c| match c {
            ControlMessageOwned::ScmCredentials(u) => Some(u.uid()),
            _ => None,
        });
        let n = m.bytes;
        let got = String::from_utf8_lossy(&buf[..n]).to_string();
        let _ = s.write_all(&reply);
        let _ = std::fs::remove_dir_all(dir);
        (got, uid)
    });
    (path, h)
}
