//! Exclusive claims (`--exclusive`, issue 5): which CPUs other launches
//! hold, as plain data, and the pure decisions about them: the record
//! format, whether a record is live, stale or forged, the kubelet CPU
//! manager's state file. No I/O here: the state directory is read and
//! locked by [`crate::system::claims`], written by [`crate::apply::claims`];
//! planning with claims is [`crate::plan::claims`], their findings
//! `crate::check::claims`, the flow [`crate::app::claims`].

use crate::cpuset::CpuSet;
use crate::words::{cpus_phrase, shorten};
use serde::{Deserialize, Serialize};

/// Version of the record format.
pub const RECORD_VERSION: u32 = 1;
/// The most pinrun reads of one record.
pub const MAX_RECORD: u64 = 64 * 1024;
/// Arguments of the command kept in a record (each cut to [`MAX_ARG`] chars).
pub const MAX_ARGS: usize = 64;
/// Characters kept of each argument in a record.
pub const MAX_ARG: usize = 256;

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
        /// The command line (possibly shortened).
        command: Vec<String>,
        /// When the claim was made, seconds since the Unix epoch.
        since: u64,
        /// The record's file name in the state directory.
        record: String,
    },
    /// A container to which kubelet's static CPU manager assigned CPUs.
    Kubelet {
        /// Pod UID (or container id, in the old checkpoint format).
        pod: String,
        /// Container name (empty in the old checkpoint format).
        container: String,
    },
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
    /// "pid 123 (sleep 3)" or "kubelet pod P container C".
    pub fn who(&self) -> String {
        match &self.holder {
            Holder::Process { pid, command, .. } => {
                format!("pid {pid} ({})", shorten(&command.join(" "), 60))
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
}

impl Claims {
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
    /// for the claims holding any of `cpus`.
    pub fn describe(&self, cpus: &CpuSet) -> String {
        self.holding(cpus)
            .map(|c| format!("{} by {}", cpus_phrase(&c.cpus.intersection(cpus)), c.who()))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A claim record as stored (JSON, one small file per claim, named
/// [`record_name`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// [`RECORD_VERSION`].
    pub version: u32,
    /// The claiming PID.
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`.
    pub start_time: u64,
    /// The claimant's effective UID (must match the file's owner).
    pub uid: u32,
    /// The claimed CPUs, a kernel cpulist.
    pub cpus: String,
    /// The command line (shortened: [`MAX_ARGS`] arguments of [`MAX_ARG`] chars).
    pub command: Vec<String>,
    /// Seconds since the Unix epoch.
    pub time: u64,
}

impl Record {
    /// A record for `pid`, shortening the command.
    pub fn new(
        pid: u32,
        start_time: u64,
        uid: u32,
        cpus: &CpuSet,
        command: &[String],
        time: u64,
    ) -> Self {
        Self {
            version: RECORD_VERSION,
            pid,
            start_time,
            uid,
            cpus: cpus.to_list(),
            command: command
                .iter()
                .take(MAX_ARGS)
                .map(|a| a.chars().take(MAX_ARG).collect())
                .collect(),
            time,
        }
    }

    /// The record's text (one JSON object and a newline).
    pub fn render(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Parses a record's text, checking its version, PID and CPU list.
    /// Control characters in the command are replaced by `?`: records come
    /// from other users and their text reaches this user's terminal.
    pub fn parse(text: &str) -> Result<(Record, CpuSet), String> {
        let mut r: Record =
            serde_json::from_str(text).map_err(|e| format!("not a claim record: {e}"))?;
        for arg in &mut r.command {
            *arg = arg
                .chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
        }
        if r.version != RECORD_VERSION {
            return Err(format!("unknown record version {}", r.version));
        }
        if !valid_pid(r.pid) {
            return Err(format!("invalid pid {}", r.pid));
        }
        let cpus = CpuSet::parse_sysfs_list(&r.cpus, None)
            .map_err(|e| format!("bad CPU list {:?}: {e}", r.cpus))?;
        if cpus.is_empty() {
            return Err("empty CPU list".into());
        }
        Ok((r, cpus))
    }
}

/// Whether `pid` can name a process (1..=2^22, Linux's `PID_MAX_LIMIT`).
pub fn valid_pid(pid: u32) -> bool {
    (1..=4 << 20).contains(&pid)
}

/// The record file name: `<pid>.<start_time>`, then `.1`, `.2`... when a
/// file of that name already exists (a stale record another user owns).
pub fn record_name(pid: u32, start_time: u64, attempt: u32) -> String {
    if attempt == 0 {
        format!("{pid}.{start_time}")
    } else {
        format!("{pid}.{start_time}.{attempt}")
    }
}

/// The PID a file name claims to be a record of, when the name has the
/// shape of [`record_name`]; other names are not records.
pub fn record_pid(name: &str) -> Option<u32> {
    let mut parts = name.split('.');
    let pid = parts.next()?;
    let start = parts.next()?;
    let attempt = parts.next();
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid)
        || !digits(start)
        || attempt.is_some_and(|a| !digits(a))
        || parts.next().is_some()
    {
        return None;
    }
    pid.parse().ok().filter(|p| valid_pid(*p))
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
    },
}

/// What a readable record is worth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Its process runs: the CPUs are claimed.
    Live,
    /// Its process is gone or the PID was reused: reclaim it.
    Stale,
    /// The file's owner is not the process's: ignored, with this warning.
    Forged(String),
}

/// Judges a record whose file is owned by `file_uid`. Root's records are
/// trusted for any process (root may start commands as other users); a
/// user's record counts only for that user's own processes, so no one can
/// forge a claim in another user's name.
pub fn judge(rec: &Record, file_uid: u32, proc: &Liveness) -> Verdict {
    let (start_time, uids) = match proc {
        Liveness::Dead => return Verdict::Stale,
        Liveness::Alive { start_time, uids } => (start_time, uids),
    };
    if start_time.is_some_and(|s| s != rec.start_time) {
        return Verdict::Stale;
    }
    if rec.uid != file_uid {
        return Verdict::Forged(format!(
            "says uid {} but the file belongs to uid {file_uid}",
            rec.uid
        ));
    }
    if file_uid != 0 && !uids.is_empty() && !uids.contains(&file_uid) {
        return Verdict::Forged(format!(
            "belongs to uid {file_uid}, but pid {} runs as uid {}",
            rec.pid,
            uids.first().copied().unwrap_or(0)
        ));
    }
    Verdict::Live
}

/// Start time (field 22) and state (field 3) of a `/proc/<pid>/stat` text.
pub fn parse_stat(stat: &str) -> Option<(char, u64)> {
    // The command name (field 2) may contain spaces and ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let start = f.nth(18)?.parse().ok()?;
    Some((state, start))
}

/// The claims of kubelet's CPU manager state file
/// (`/var/lib/kubelet/cpu_manager_state`): under the static policy,
/// `entries` maps pod UID → container → cpulist (older kubelets: container
/// id → cpulist); `defaultCpuSet` is the shared pool and not claimed.
pub fn parse_kubelet(text: &str) -> Result<Vec<Claim>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let entries = match v.get("entries") {
        None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
        Some(serde_json::Value::Object(m)) => m,
        Some(_) => return Err("\"entries\" is not an object".into()),
    };
    let list = |s: &serde_json::Value| -> Result<CpuSet, String> {
        let t = s.as_str().ok_or("a cpulist is not a string")?;
        CpuSet::parse_sysfs_list(t, None).map_err(|e| format!("bad cpulist {t:?}: {e}"))
    };
    let mut out = Vec::new();
    for (pod, containers) in entries {
        match containers {
            serde_json::Value::Object(m) => {
                for (name, cpus) in m {
                    out.push(Claim {
                        holder: Holder::Kubelet {
                            pod: pod.clone(),
                            container: name.clone(),
                        },
                        cpus: list(cpus)?,
                    });
                }
            }
            s @ serde_json::Value::String(_) => out.push(Claim {
                holder: Holder::Kubelet {
                    pod: pod.clone(),
                    container: String::new(),
                },
                cpus: list(s)?,
            }),
            _ => return Err(format!("entry {pod:?} is neither an object nor a cpulist")),
        }
    }
    out.retain(|c| !c.cpus.is_empty());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(t: &str) -> CpuSet {
        CpuSet::parse(t).unwrap()
    }

    fn rec(pid: u32, start: u64, uid: u32) -> Record {
        Record::new(
            pid,
            start,
            uid,
            &set("2-3"),
            &["sleep".into(), "3".into()],
            1000,
        )
    }

    #[test]
    fn record_round_trip() {
        let r = rec(42, 7, 1000);
        let (back, cpus) = Record::parse(&r.render()).unwrap();
        assert_eq!((back, cpus), (r, set("2-3")));
        for bad in ["", "garbage", "{}", "{\"version\":1}", "\u{0}\u{1}"] {
            assert!(Record::parse(bad).is_err(), "{bad:?}");
        }
        let mut r = rec(0, 7, 0);
        assert!(Record::parse(&r.render()).is_err());
        r.pid = 5;
        r.cpus = "3-1".into();
        assert!(Record::parse(&r.render()).is_err());
    }

    #[test]
    fn long_commands_are_shortened() {
        let cmd: Vec<String> = (0..1000).map(|_| "x".repeat(10_000)).collect();
        let r = Record::new(1, 1, 0, &set("0"), &cmd, 0);
        assert!(r.render().len() < MAX_RECORD as usize);
    }

    #[test]
    fn names() {
        assert_eq!(record_pid(&record_name(12, 34, 0)), Some(12));
        assert_eq!(record_pid(&record_name(12, 34, 2)), Some(12));
        for bad in [
            "x",
            "12",
            "12.",
            ".5",
            "0.5",
            "12.3.4.5",
            "12.x",
            "99999999.1",
            "../1.2",
        ] {
            assert_eq!(record_pid(bad), None, "{bad}");
        }
    }

    #[test]
    fn verdicts() {
        let r = rec(42, 7, 1000);
        let alive = |start, uids: &[u32]| Liveness::Alive {
            start_time: start,
            uids: uids.to_vec(),
        };
        assert_eq!(judge(&r, 1000, &Liveness::Dead), Verdict::Stale);
        assert_eq!(judge(&r, 1000, &alive(Some(8), &[1000])), Verdict::Stale);
        assert_eq!(judge(&r, 1000, &alive(Some(7), &[1000])), Verdict::Live);
        assert_eq!(judge(&r, 1000, &alive(None, &[])), Verdict::Live);
        // Another user's record naming this user's process, or a record
        // lying about its owner.
        assert!(matches!(
            judge(&r, 1000, &alive(Some(7), &[0, 0])),
            Verdict::Forged(_)
        ));
        assert!(matches!(
            judge(&r, 1001, &alive(Some(7), &[1001])),
            Verdict::Forged(_)
        ));
        // Root's records hold for any process.
        let r = rec(42, 7, 0);
        assert_eq!(judge(&r, 0, &alive(Some(7), &[1000])), Verdict::Live);
    }

    #[test]
    fn stat_fields() {
        let stat = "77 (a) b) c) S 1 77 77 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 10";
        assert_eq!(parse_stat(stat), Some(('S', 123456)));
        assert_eq!(parse_stat("garbage"), None);
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
}
