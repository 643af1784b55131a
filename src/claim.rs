//! Claims as the core sees them (`--exclusive`, issue 5): which CPUs
//! other launches and kubelet hold ([`Claims`], filled by the claims wing,
//! [`crate::claims`]; the planner avoids them, [`crate::plan::claims`]),
//! as plain data, with what the core and the wings share about the
//! processes that hold them: [`Liveness`], PID namespaces ([`PidNs`],
//! [`locate`]), the holders of a lock, and kubelet's CPU manager state
//! file. No I/O here: the state directory is read and locked by
//! [`crate::system::state_dir`]; the records, their trust rules and the
//! flow are the wing's.
//!
//! A record names its holder by PID, and a PID is a number in one PID
//! namespace: a reader whose `/proc` numbers processes in another one
//! finds the holder by its namespace ([`locate`]) or, when it cannot see
//! into that namespace, honours the record unchecked.

use crate::cpuset::CpuSet;
use crate::words::{cpus_phrase, shorten};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Who holds a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// A pinrun launch: its command runs under `pid` (pinrun execs in place).
    Process {
        /// The PID (pinrun's, then the command's).
        pid: u32,
        /// Field 22 of `/proc/<pid>/stat` (clock ticks after boot).
        start_time: u64,
        /// Owner of the record.
        uid: u32,
        /// The process group the claim also follows (the PID itself when
        /// the launch led its process group; 0: the PID only).
        pgid: u32,
        /// The command line (possibly shortened).
        command: Vec<String>,
        /// When the claim was made, seconds since the Unix epoch.
        since: u64,
        /// The record's file name in the state directory.
        record: String,
        /// The holder's `Cpus_allowed_list` until [`Claims::narrow`]
        /// takes it (records of users other than root).
        affinity: Option<CpuSet>,
        /// The PID has exited and the claim lives by its process group.
        group_only: bool,
        /// `pid` is numbered in another PID namespace than this reader's
        /// `/proc`: which, and what this reader knows of it. `None`: the
        /// reader's own (or a record of an older pinrun, which names none).
        elsewhere: Option<Elsewhere>,
    },
    /// A container to which kubelet's static CPU manager assigned CPUs.
    Kubelet {
        /// Pod UID (or container id, in the old checkpoint format).
        pod: String,
        /// Container name (empty in the old checkpoint format).
        container: String,
    },
}

/// Where the holder of a record from another PID namespace is, as this
/// reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elsewhere {
    /// The namespace the record's PID is numbered in.
    pub ns: PidNs,
    /// The holder's PID in this reader's `/proc`, when it was found there
    /// (`None`: its process group holds the claim, or it cannot be seen).
    pub here: Option<u32>,
    /// Why the holder could not be checked from here (the namespace
    /// cannot be seen into, or not completely): the record is honoured as
    /// written and never removed. `None`: checked.
    pub unchecked: Option<String>,
}

/// One claim: a holder and the CPUs it holds (every SMT sibling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// Who.
    pub holder: Holder,
    /// Which CPUs.
    pub cpus: CpuSet,
}

impl Claim {
    /// "pid 123 (sleep 3)", "pid 123 (engine) of uid 1000", "process group
    /// 123 (sh -c ...; pid 123 exited)" or "kubelet pod P container C"; a
    /// holder of another PID namespace is named with it: "pid 4242 (sleep
    /// 3; pid 1 in PID namespace pid:[4026532451])", or "pid 1 in PID
    /// namespace pid:[4026532451] (sleep 3; not visible from here:
    /// honoured unchecked)".
    pub fn who(&self) -> String {
        match &self.holder {
            Holder::Process {
                pid,
                command,
                uid,
                group_only,
                elsewhere,
                ..
            } => {
                let cmd = shorten(&command.join(" "), 60);
                let mut s = match elsewhere {
                    None if *group_only => {
                        format!("process group {pid} ({cmd}; pid {pid} exited)")
                    }
                    None => format!("pid {pid} ({cmd})"),
                    Some(Elsewhere {
                        ns,
                        unchecked: Some(_),
                        ..
                    }) => format!(
                        "pid {pid} in PID namespace {ns} ({cmd}; not visible from here: honoured unchecked)"
                    ),
                    Some(Elsewhere {
                        ns,
                        here: Some(here),
                        ..
                    }) if !*group_only => {
                        format!("pid {here} ({cmd}; pid {pid} in PID namespace {ns})")
                    }
                    Some(Elsewhere { ns, .. }) => format!(
                        "process group {pid} in PID namespace {ns} ({cmd}; pid {pid} exited)"
                    ),
                };
                if *uid != 0 {
                    s.push_str(&format!(" of uid {uid}"));
                }
                s
            }
            Holder::Kubelet { pod, container } if container.is_empty() => {
                format!("kubelet container {pod}")
            }
            Holder::Kubelet { pod, container } => {
                format!("kubelet pod {pod} container {container}")
            }
        }
    }
}

impl Holder {
    /// The holder's PID in this reader's `/proc`: the record's own PID,
    /// or the one it was found under in another namespace; `None` for
    /// kubelet and a holder not seen from here.
    pub fn pid_here(&self) -> Option<u32> {
        match self {
            Holder::Process {
                pid,
                elsewhere: None,
                ..
            } => Some(*pid),
            Holder::Process {
                elsewhere: Some(e), ..
            } => e.here,
            Holder::Kubelet { .. } => None,
        }
    }
}

/// Every live claim pinrun knows of, and what it could not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claims {
    /// Live claims, pinrun records first (by PID), then kubelet's.
    pub claims: Vec<Claim>,
    /// Records that could not be used (warnings).
    pub warnings: Vec<String>,
    /// Unusable records owned by another user (not root, not us): info
    /// only, so that nobody can make others' `--strict` launches refuse by
    /// dropping junk in the shared directory.
    pub foreign_warnings: Vec<String>,
    /// The state directory or kubelet's state file could not be used
    /// (missing permissions, a stuck lock, a damaged file): warnings.
    pub state_warnings: Vec<String>,
    /// Why the state directory itself could not be opened (permission
    /// denied, not a directory): its records, so pinrun's claims, are
    /// unknown, never "none" (`--show` says so).
    pub state_dir_error: Option<String>,
    /// Records that exist but could not be read for a reason that says
    /// nothing about them (`EMFILE`, `ENOMEM`, `EIO`, a failing
    /// `getdents64(2)`): their CPUs are unknown, so an `--exclusive` launch
    /// refuses rather than grant them (never fail open).
    pub unreadable: Vec<String>,
}

impl Claims {
    /// Narrows every claim of a user other than root to the CPUs its
    /// process may claim: those of its `Cpus_allowed_list` and their SMT
    /// siblings (`core_of(cpu)`: every thread of that CPU's core; a claim
    /// covers whole cores). CPUs beyond are ignored, with a warning naming
    /// them (info: another user's record), so that no user can hold CPUs
    /// its process cannot run on. `affinity` (from the [`Verdict`]) is
    /// taken out of each holder.
    pub fn narrow(&mut self, core_of: impl Fn(u32) -> CpuSet, me: u32) {
        for c in &mut self.claims {
            let Holder::Process {
                pid,
                uid,
                affinity,
                record,
                ..
            } = &mut c.holder
            else {
                continue;
            };
            let Some(aff) = affinity.take() else {
                continue;
            };
            let mut may = CpuSet::new();
            for cpu in aff.iter() {
                may.union_with(&core_of(cpu));
                may.insert(cpu);
            }
            let outside = c.cpus.difference(&may);
            if outside.is_empty() {
                continue;
            }
            c.cpus = c.cpus.intersection(&may);
            let w = format!(
                "claims: record {record} of uid {uid} claims {} outside pid {pid}'s Cpus_allowed_list {}: ignored for {}",
                cpus_phrase(&outside),
                aff.to_list(),
                if outside.len() == 1 { "it" } else { "those" },
            );
            if *uid == me {
                self.warnings.push(w);
            } else {
                self.foreign_warnings.push(w);
            }
        }
        self.claims.retain(|c| !c.cpus.is_empty());
    }

    /// The union of every claimed CPU.
    pub fn cpus(&self) -> CpuSet {
        self.claims
            .iter()
            .fold(CpuSet::new(), |a, c| a.union(&c.cpus))
    }

    /// The claims holding any of `cpus`.
    pub fn holding<'a>(&'a self, cpus: &'a CpuSet) -> impl Iterator<Item = &'a Claim> + 'a {
        self.claims
            .iter()
            .filter(move |c| !c.cpus.intersection(cpus).is_empty())
    }

    /// "CPU 0 by pid 12 (sleep 3); CPUs 2-3 by kubelet pod P container C"
    /// for the claims holding any of `cpus`: the first
    /// [`DESCRIBE_CLAIMS`], then "and N more claims" (a hostile kubelet
    /// state file can hold 150 000 entries).
    pub fn describe(&self, cpus: &CpuSet) -> String {
        let mut out: Vec<String> = Vec::new();
        let mut more = 0usize;
        for c in self.holding(cpus) {
            if out.len() < DESCRIBE_CLAIMS {
                out.push(format!(
                    "{} by {}",
                    cpus_phrase(&c.cpus.intersection(cpus)),
                    c.who()
                ));
            } else {
                more += 1;
            }
        }
        if more > 0 {
            out.push(format!(
                "and {more} more {}",
                crate::words::noun(more, "claim")
            ));
        }
        out.join("; ")
    }
}

/// How many claims [`Claims::describe`] names before it counts the rest.
pub const DESCRIBE_CLAIMS: usize = 8;

/// Whether `c` could change how the text around it looks on a terminal:
/// a control character (C0, DEL, C1) or a Unicode bidirectional
/// formatting character (U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069), which can make a command read backwards.
pub fn is_deceptive(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every [`is_deceptive`] character replaced by `?`: text from
/// other users (record commands, kubelet's pod names) before it reaches a
/// terminal or a message.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if is_deceptive(c) { '?' } else { c })
        .collect()
}

/// Whether `pid` can name a process (1..=2^22, Linux's `PID_MAX_LIMIT`).
pub fn valid_pid(pid: u32) -> bool {
    (1..=4 << 20).contains(&pid)
}

/// What `/proc` says about a record's PID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    /// No such process (or a zombie: it no longer runs anywhere).
    Dead,
    /// It runs; `start_time` and `uids` are `None`/empty when `/proc/<pid>`
    /// cannot be read (`hidepid=`).
    Alive {
        /// Field 22 of `/proc/<pid>/stat`.
        start_time: Option<u64>,
        /// The owner of `/proc/<pid>` and its real, effective, saved and
        /// filesystem UIDs.
        uids: Vec<u32>,
        /// Its `Cpus_allowed_list` (`None`: unreadable).
        affinity: Option<CpuSet>,
    },
    /// Whether it runs, and as whom, cannot be told: its threads could not
    /// be listed in full (more than `system::state_dir::MAX_PROC_ENTRIES`
    /// in `/proc/PID/task`). Never taken as dead: a claim of it lives, its
    /// CPUs as recorded. The words name the path and the cap.
    Unknown(String),
}

/// The inode of the initial PID namespace (`PROC_PID_INIT_INO` in the
/// kernel's include/linux/proc_ns.h), the same at every boot; namespaces
/// created later get numbers from `0xF0000000` up.
pub const INITIAL_PID_NS_INO: u64 = 0xEFFF_FFFC;

/// A PID namespace, as `stat(2)` of `/proc/<pid>/ns/pid` names it: the
/// device and inode of its nsfs file (what `readlink` shows as
/// `pid:[INODE]`, and `lsns(8)` lists). Both are unique among the live
/// namespaces of the machine, whichever namespace reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PidNs {
    /// `st_dev` of the nsfs file.
    pub dev: u64,
    /// `st_ino` of the nsfs file.
    pub ino: u64,
}

impl PidNs {
    /// Whether this is the machine's initial PID namespace, whose `/proc`
    /// shows every process of every namespace.
    pub fn is_initial(&self) -> bool {
        self.ino == INITIAL_PID_NS_INO
    }
}

impl std::fmt::Display for PidNs {
    /// `pid:[4026532451]`, as `readlink /proc/PID/ns/pid` says.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid:[{}]", self.ino)
    }
}

/// One process of this reader's `/proc`, with its PID namespace
/// ([`NsScan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NsProcess {
    /// Its PID in this reader's `/proc`.
    pub pid: u32,
    /// Its own PID namespace (`/proc/<pid>/ns/pid`); `None`: it could not
    /// be read (`EACCES`: the link needs ptrace access to the process).
    pub ns: Option<PidNs>,
    /// The `NSpid:` line of its `status` (readable by all): its PID in
    /// each namespace from the one of this `/proc` down to its own, so one
    /// number for a process of this `/proc`'s own namespace. Empty when
    /// not read (a process known to be of this `/proc`'s namespace).
    pub nspid: Vec<u32>,
    /// The `NSpgid:` line, its process group likewise.
    pub nspgid: Vec<u32>,
}

impl NsProcess {
    /// Whether this process may be of namespace `ns`, for a `/proc` of
    /// namespace `view`: it is, or its namespace is not known and its
    /// `NSpid:` does not place it in `view` (one number) itself.
    fn may_be_in(&self, ns: PidNs, view: Option<PidNs>) -> bool {
        match self.ns {
            Some(n) => n == ns,
            None => self.nspid.len() >= 2 || view.is_none(),
        }
    }
}

/// Every process of this reader's `/proc` with its PID namespace, read
/// once when a record of another namespace is judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NsScan {
    /// The namespace this `/proc` numbers processes in (`None`: not known).
    pub view: Option<PidNs>,
    /// The processes.
    pub procs: Vec<NsProcess>,
    /// Why some process could not be read at all, neither its namespace
    /// nor its `status` (`hidepid=`, `EMFILE`), or the listing was cut: a
    /// holder not found may be among them. `None`: every process was read.
    pub gap: Option<String>,
}

/// Where the holder of a record of another PID namespace is, for a reader
/// whose `/proc` is `scan` ([`locate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sight {
    /// This reader sees into the namespace: `holder` is the holder's PID
    /// in this `/proc` (`None`: gone), `members` those of its process
    /// group's members (when the record follows its group).
    Seen {
        /// The holder, when it runs.
        holder: Option<u32>,
        /// Its group's members.
        members: Vec<u32>,
    },
    /// This reader cannot tell whether the holder runs (why): the record
    /// is honoured as written, never removed.
    Unseen(String),
}

/// Finds the holder of a record of PID `pid` (following process group
/// `pgid` when it is `pid`; 0: none) numbered in namespace `ns` (not this
/// reader's) among `scan`'s processes. A process's own namespace never
/// changes, so the holder, while it runs, is the process of namespace `ns`
/// whose last `NSpid:` is `pid`. When it is not there:
///
/// - a process that could not be read at all (`scan.gap`), or whose
///   namespace could not and whose last `NSpid:` is `pid`, may
///   be it: unseen;
/// - some process of `ns` was seen: this `/proc` shows every process of
///   that namespace (a namespace's processes are seen from its ancestors'
///   `/proc`, all of them), so the holder is gone;
/// - none, and this `/proc` is the initial namespace's, which shows every
///   process: the holder is gone (and when a namespace's first process
///   ends the kernel kills every other);
/// - none, from another namespace: `ns` is not below this one (a parent's,
///   a sibling's), and nothing here can tell: unseen.
///
/// A group's members (for a record that follows its process group) are
/// the processes whose `NSpgid:` at `ns`'s level is `pgid`:
/// processes of namespaces below `ns` count too, and so, not being told
/// apart, do those of other namespaces at the same depth (a claim kept
/// longer, never dropped early). A group whose level is not known (no
/// process of `ns` seen, some of unknown namespace) is unseen.
pub fn locate(scan: &NsScan, ns: PidNs, pid: u32, pgid: u32) -> Sight {
    let unseen = |why: String| Sight::Unseen(why);
    let holder = scan
        .procs
        .iter()
        .find(|p| p.ns == Some(ns) && p.nspid.last() == Some(&pid))
        .map(|p| p.pid);
    let follows_group = pgid != 0 && pgid == pid;
    if holder.is_none() || follows_group {
        if let Some(gap) = &scan.gap {
            return unseen(format!("not every process can be read here: {gap}"));
        }
        if let Some(p) = scan.procs.iter().find(|p| {
            holder.is_none()
                && p.ns.is_none()
                && p.may_be_in(ns, scan.view)
                && p.nspid.last() == Some(&pid)
        }) {
            return unseen(format!(
                "pid {} here, whose namespace cannot be read, may be its holder",
                p.pid
            ));
        }
    }
    let depth = scan
        .procs
        .iter()
        .find(|p| p.ns == Some(ns))
        .map(|p| p.nspid.len());
    let gone = || Sight::Seen {
        holder: None,
        members: Vec::new(),
    };
    match (depth, scan.view) {
        (Some(depth), _) => {
            let members = if follows_group && depth > 0 {
                scan.procs
                    .iter()
                    .filter(|p| p.nspid.len() >= depth && p.nspgid.get(depth - 1) == Some(&pgid))
                    .map(|p| p.pid)
                    .collect()
            } else {
                Vec::new()
            };
            Sight::Seen { holder, members }
        }
        (None, Some(v)) if v.is_initial() => {
            let unknown = scan.procs.iter().any(|p| p.may_be_in(ns, scan.view));
            if follows_group && unknown {
                unseen(
                    "its process group cannot be followed: some processes' namespaces cannot be read here"
                        .into(),
                )
            } else {
                gone()
            }
        }
        (None, Some(v)) => unseen(format!("cannot be seen from this PID namespace, {v}")),
        (None, None) => unseen("this /proc's PID namespace is not known".into()),
    }
}

impl Liveness {
    /// The UIDs of a live process (empty when dead or unreadable).
    pub fn uids(&self) -> &[u32] {
        match self {
            Liveness::Alive { uids, .. } => uids,
            Liveness::Dead | Liveness::Unknown(_) => &[],
        }
    }
}

/// The holders of a lock on the file `dev`:`ino` in a `/proc/locks` text
/// (`1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; the device is
/// `%02x:%02x` major:minor, `lock_get_status()` in fs/locks.c): their PIDs,
/// waiters (`->` lines) left out.
pub fn lock_holders(locks: &str, major: u64, minor: u64, ino: u64) -> Vec<u32> {
    let want = format!("{major:02x}:{minor:02x}:{ino}");
    locks
        .lines()
        .filter(|l| !l.contains("->"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = f.iter().position(|w| *w == want)?;
            f.get(at.checked_sub(1)?)?.parse().ok()
        })
        .collect()
}

impl KubeletState {
    /// Its claims: under the static policy, every container's (or pod's)
    /// exclusive CPUs, a claim by its pod's container (an older kubelet's
    /// container id alone names the pod). `defaultCpuSet` is the shared
    /// pool and not claimed.
    pub fn claims(self) -> Vec<Claim> {
        let mut out = Vec::new();
        for (pod, containers) in self.entries {
            for (name, cpus) in containers {
                let holder = if pod.is_empty() {
                    Holder::Kubelet {
                        pod: printable(&name),
                        container: String::new(),
                    }
                } else {
                    Holder::Kubelet {
                        pod: printable(&pod),
                        container: printable(&name),
                    }
                };
                out.push(Claim { holder, cpus });
            }
        }
        out.retain(|c| !c.cpus.is_empty());
        out
    }
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn set(t: &str) -> CpuSet {
        CpuSet::parse(t).unwrap()
    }

    /// A user's claim holds only CPUs of its process's affinity (and their
    /// SMT siblings); root's holds everything.
    #[test]
    fn claims_are_narrowed_to_the_holders_affinity() {
        let claim = |uid, affinity: Option<&str>| Claim {
            holder: Holder::Process {
                pid: 9,
                start_time: 1,
                uid,
                pgid: 0,
                command: vec!["x".into()],
                since: 0,
                record: "9.1".into(),
                affinity: affinity.map(set),
                group_only: false,
                elsewhere: None,
            },
            cpus: set("0-7"),
        };
        let mut c = Claims {
            claims: vec![
                claim(1000, Some("2")),
                claim(0, None),
                claim(1001, Some("8-9")),
            ],
            ..Claims::default()
        };
        // Cores of two threads: (0,1), (2,3)...
        c.narrow(|cpu| set(&format!("{}-{}", cpu & !1, cpu | 1)), 1000);
        assert_eq!(c.claims.len(), 2, "{c:?}");
        assert_eq!(c.claims[0].cpus, set("2-3"));
        assert_eq!(c.claims[1].cpus, set("0-7"));
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains("claims CPUs 0-1,4-7 outside pid 9's Cpus_allowed_list 2"),
            "{:?}",
            c.warnings
        );
        assert_eq!(c.foreign_warnings.len(), 1);
        assert!(
            c.claims
                .iter()
                .all(|c| matches!(c.holder, Holder::Process { affinity: None, .. }))
        );
    }

    /// The initial PID namespace (the host's), for tests.
    /// The claims of a kubelet state text ([`KubeletState::claims`]).
    pub(crate) fn parse_kubelet(text: &str) -> Result<Vec<Claim>, String> {
        parse_kubelet_state(text, crate::cpuset::MAX_ID).map(KubeletState::claims)
    }

    pub(crate) const HOST: PidNs = PidNs {
        dev: 4,
        ino: INITIAL_PID_NS_INO,
    };
    /// A container's PID namespace, for tests.
    pub(crate) const CONTAINER: PidNs = PidNs {
        dev: 4,
        ino: 4026532451,
    };
    const NESTED: PidNs = PidNs {
        dev: 4,
        ino: 4026532460,
    };
    const SIBLING: PidNs = PidNs {
        dev: 4,
        ino: 4026532470,
    };

    /// A process of a scan: PID here, namespace, NSpid, NSpgid.
    fn proc(pid: u32, ns: Option<PidNs>, nspid: &[u32], nspgid: &[u32]) -> NsProcess {
        NsProcess {
            pid,
            ns,
            nspid: nspid.to_vec(),
            nspgid: nspgid.to_vec(),
        }
    }

    fn scan(view: Option<PidNs>, procs: Vec<NsProcess>) -> NsScan {
        NsScan {
            view,
            procs,
            gap: None,
        }
    }

    fn seen(holder: Option<u32>, members: &[u32]) -> Sight {
        Sight::Seen {
            holder,
            members: members.to_vec(),
        }
    }

    /// From the host (the initial namespace, which sees every process):
    /// the holder of a container's record is the process of that
    /// namespace whose last NSpid is the record's PID; when it is not
    /// there the holder is gone, whether the container still runs or not.
    #[test]
    fn a_container_record_is_judged_from_the_host() {
        let host = |more: Vec<NsProcess>| {
            let mut p = vec![proc(1, Some(HOST), &[], &[]), proc(2, Some(HOST), &[], &[])];
            p.extend(more);
            scan(Some(HOST), p)
        };
        let holder = proc(4242, Some(CONTAINER), &[4242, 1], &[4242, 1]);
        let other = proc(4250, Some(CONTAINER), &[4250, 9], &[4250, 9]);
        // PID 1 of the container runs as 4242 here.
        assert_eq!(
            locate(&host(vec![holder.clone(), other.clone()]), CONTAINER, 1, 0),
            seen(Some(4242), &[])
        );
        // The same number in another namespace is not the holder.
        let lookalike = proc(4300, Some(SIBLING), &[4300, 1], &[4300, 1]);
        assert_eq!(
            locate(&host(vec![lookalike.clone()]), CONTAINER, 1, 0),
            seen(None, &[])
        );
        // The container runs, its PID 1 is not the holder's number.
        assert_eq!(
            locate(&host(vec![other.clone()]), CONTAINER, 1, 0),
            seen(None, &[])
        );
        // The container is gone: from the initial namespace, no process
        // of it means none is left.
        assert_eq!(locate(&host(vec![]), CONTAINER, 1, 0), seen(None, &[]));
        // This /proc's PID 1 refuses its namespace link (EACCES) but its
        // NSpid places it in this namespace: not a candidate.
        let mut unreadable_init = host(vec![]);
        unreadable_init.procs[0] = proc(1, None, &[1], &[1]);
        assert_eq!(locate(&unreadable_init, CONTAINER, 1, 0), seen(None, &[]));
        // A process of an unreadable namespace with the holder's number
        // may be it.
        let maybe = proc(4400, None, &[4400, 1], &[4400, 1]);
        assert!(matches!(
            locate(&host(vec![maybe]), CONTAINER, 1, 0),
            Sight::Unseen(w) if w.contains("pid 4400 here")
        ));
        // A process not read at all may be it too.
        let mut gap = host(vec![]);
        gap.gap = Some("/proc/77/status: Too many open files (EMFILE)".into());
        assert!(matches!(
            locate(&gap, CONTAINER, 1, 0),
            Sight::Unseen(w) if w.contains("EMFILE")
        ));
        // ...but not when the holder was found.
        gap.procs.push(holder.clone());
        assert_eq!(locate(&gap, CONTAINER, 1, 0), seen(Some(4242), &[]));
    }

    /// From a namespace that cannot see the record's (the host's record
    /// read in a container, or a sibling container's), nothing can prove
    /// the holder gone: the record is unseen, honoured.
    #[test]
    fn a_record_of_an_unseen_namespace_is_honoured() {
        let inside = scan(
            Some(CONTAINER),
            vec![
                proc(1, Some(CONTAINER), &[], &[]),
                proc(7, Some(CONTAINER), &[], &[]),
            ],
        );
        for ns in [HOST, SIBLING] {
            assert!(matches!(
                locate(&inside, ns, 7, 0),
                Sight::Unseen(w) if w == "cannot be seen from this PID namespace, pid:[4026532451]"
            ));
        }
        // A /proc whose namespace is not known, and a /proc without PID 1.
        let unknown = scan(None, vec![proc(1, None, &[1], &[1])]);
        assert!(matches!(
            locate(&unknown, CONTAINER, 1, 0),
            Sight::Unseen(_)
        ));
        let empty = scan(None, vec![]);
        assert!(matches!(locate(&empty, CONTAINER, 5, 0), Sight::Unseen(_)));
    }

    /// A record that follows its process group: its members are the
    /// processes whose NSpgid at the namespace's level is the group, those
    /// of namespaces below included.
    #[test]
    fn a_container_records_group_is_followed_from_the_host() {
        let procs = vec![
            proc(1, Some(HOST), &[], &[]),
            // Group 5 of the container: 4501 in it, 4502 in a namespace
            // below it; 4503 is of group 6.
            proc(4501, Some(CONTAINER), &[4501, 8], &[4500, 5]),
            proc(4502, Some(NESTED), &[4502, 9, 1], &[4500, 5, 0]),
            proc(4503, Some(CONTAINER), &[4503, 10], &[4503, 6]),
        ];
        assert_eq!(
            locate(&scan(Some(HOST), procs.clone()), CONTAINER, 5, 5),
            seen(None, &[4501, 4502])
        );
        // Not following its group: no members.
        assert_eq!(
            locate(&scan(Some(HOST), procs.clone()), CONTAINER, 5, 0),
            seen(None, &[])
        );
        // With a gap, the group cannot be followed even when the leader
        // is seen.
        let mut gap = scan(Some(HOST), procs);
        gap.procs
            .push(proc(4504, Some(CONTAINER), &[4504, 5], &[4500, 5]));
        gap.gap = Some("x".into());
        assert!(matches!(locate(&gap, CONTAINER, 5, 5), Sight::Unseen(_)));
        // No process of the namespace seen, some of unknown namespace: the
        // group's level is unknown.
        let unknown = scan(
            Some(HOST),
            vec![
                proc(1, Some(HOST), &[], &[]),
                proc(4600, None, &[4600, 3], &[4600, 3]),
            ],
        );
        assert!(matches!(
            locate(&unknown, CONTAINER, 5, 5),
            Sight::Unseen(_)
        ));
        assert_eq!(locate(&unknown, CONTAINER, 5, 0), seen(None, &[]));
    }

    /// A holder of another namespace is named with it.
    #[test]
    fn holders_of_other_namespaces_are_named_with_it() {
        let claim = |elsewhere: Option<Elsewhere>, group_only| Claim {
            holder: Holder::Process {
                pid: 1,
                start_time: 1,
                uid: 0,
                pgid: 0,
                command: vec!["sleep".into(), "60".into()],
                since: 0,
                record: "1.1".into(),
                affinity: None,
                group_only,
                elsewhere,
            },
            cpus: set("0"),
        };
        let at = |here, unchecked: Option<&str>| {
            Some(Elsewhere {
                ns: CONTAINER,
                here,
                unchecked: unchecked.map(String::from),
            })
        };
        assert_eq!(claim(None, false).who(), "pid 1 (sleep 60)");
        let c = claim(at(Some(4242), None), false);
        assert_eq!(
            c.who(),
            "pid 4242 (sleep 60; pid 1 in PID namespace pid:[4026532451])"
        );
        assert_eq!(c.holder.pid_here(), Some(4242));
        let c = claim(at(None, Some("x")), false);
        assert_eq!(
            c.who(),
            "pid 1 in PID namespace pid:[4026532451] (sleep 60; not visible from here: honoured unchecked)"
        );
        assert_eq!(c.holder.pid_here(), None);
        assert_eq!(
            claim(at(None, None), true).who(),
            "process group 1 in PID namespace pid:[4026532451] (sleep 60; pid 1 exited)"
        );
        assert_eq!(claim(None, false).holder.pid_here(), Some(1));
    }

    #[test]
    fn locks_of_a_file() {
        let locks = "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF\n1: -> FLOCK  ADVISORY  WRITE 99 fd:01:5678 0 EOF\n2: POSIX  ADVISORY  READ 77 00:1f:5678 0 EOF\n3: FLOCK  ADVISORY  READ 55 fd:01:5678 0 EOF\n";
        assert_eq!(lock_holders(locks, 0xfd, 1, 5678), vec![1234, 55]);
        assert_eq!(lock_holders(locks, 0, 0x1f, 5678), vec![77]);
        assert_eq!(lock_holders(locks, 0, 0x1f, 1), Vec::<u32>::new());
    }

    #[test]
    fn kubelet_state() {
        let text = r#"{"policyName":"static","defaultCpuSet":"0,5-7","entries":{"pod-a":{"app":"1-2","side":"3"},"pod-b":{"db":"4"}},"checksum":1234}"#;
        let c = parse_kubelet(text).unwrap();
        assert_eq!(c.len(), 3);
        let all = c.iter().fold(CpuSet::new(), |a, c| a.union(&c.cpus));
        assert_eq!(all, set("1-4"));
        assert_eq!(
            parse_kubelet(r#"{"policyName":"none","defaultCpuSet":"","checksum":1}"#).unwrap(),
            vec![]
        );
        let old = parse_kubelet(
            r#"{"policyName":"static","defaultCpuSet":"0","entries":{"abc123":"1"}}"#,
        )
        .unwrap();
        assert_eq!(old[0].who(), "kubelet container abc123");
        for bad in [
            "",
            "[]x",
            r#"{"entries":5}"#,
            r#"{"entries":{"p":{"c":"9-1"}}}"#,
        ] {
            assert!(parse_kubelet(bad).is_err(), "{bad}");
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
}
