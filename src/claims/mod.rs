//! The claims wing (issue 5, issue 32): `--exclusive` launches hold CPUs
//! with a record each in the state directory, as plain data and the pure
//! decisions about them: the record format, and whether a record is live,
//! stale or forged ([`judge`]). No I/O here: the records are read by
//! [`read`] (the state directory itself, its lock and the liveness of
//! processes are the core's, [`crate::system::state_dir`], shared with the
//! steer wing's journals), written by [`apply`]; their findings are
//! [`check`]'s, their text [`report`]'s, the flow around planning [`run`]'s.
//! What the core needs of claims is [`crate::claim::Claims`], which this
//! wing fills: the planner avoids the CPUs it holds.
//!
//! A record names its holder by PID, and a PID is a number in one PID
//! namespace: a record carries that namespace ([`PidNs`]), and a reader
//! whose `/proc` numbers processes in another one finds the holder by its
//! namespace ([`crate::claim::locate`]) or, when it cannot see into that
//! namespace, honours the record unchecked ([`judge_unseen`]), never
//! removes it.

pub mod apply;
pub mod check;
pub mod read;
pub mod report;
pub mod run;

use crate::claim::{Liveness, PidNs, printable, valid_pid};
use crate::cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// Version of the record format.
pub const RECORD_VERSION: u32 = 1;
/// The largest record pinrun reads, bytes: a larger file is not a record
/// (pinrun writes at most this, shortening the command to fit, and refuses
/// a claim whose cpulist alone would not fit), so one file cannot make a
/// launch parse for long under the lock. Room for the longest cpulist of
/// `NR_CPUS` = 8192 (every other CPU: about 20 KB) and a command.
pub const MAX_RECORD: u64 = 32 * 1024;
/// Arguments of the command kept in a record (each cut to [`MAX_ARG`] chars).
pub const MAX_ARGS: usize = 32;
/// Characters kept of each argument in a record.
pub const MAX_ARG: usize = 128;
/// The most records pinrun considers of one user other than root: beyond,
/// every record of that user is ignored (a warning), so that one user's
/// flood can hide only that user's own claims and costs one `fstatat(2)`
/// per file, never a read. Root's records are never capped.
pub const MAX_RECORDS_PER_USER: usize = 4096;
/// The most directory entries pinrun lists in the state directory: beyond,
/// the directory is refused (`--exclusive`) or reported unreadable, never
/// read in part.
pub const MAX_ENTRIES: usize = 1 << 20;

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
    /// The process group the claim also follows: the PID itself when the
    /// launch led its process group (a shell job, a systemd service), so
    /// that a command that forks and exits keeps its claim while its
    /// children live; 0 (or absent): the PID only.
    #[serde(default)]
    pub pgid: u32,
    /// The PID namespace `pid` (and `pgid`) are numbered in: the
    /// claimant's own (`stat(2)` of `/proc/self/ns/pid`), or for `--pid`
    /// that of the `/proc` the target was found in. Absent in records of
    /// older pinrun versions: their PID is taken as the reader's, as
    /// those versions did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_ns: Option<PidNs>,
    /// The claimed CPUs, a kernel cpulist.
    pub cpus: String,
    /// The command line (shortened: [`MAX_ARGS`] arguments of [`MAX_ARG`] chars).
    pub command: Vec<String>,
    /// Seconds since the Unix epoch.
    pub time: u64,
}

impl Record {
    /// A record for `pid` (following process group `pgid`, 0: none),
    /// shortening the command so that the text fits in [`MAX_RECORD`].
    /// It names no PID namespace until [`Record::in_ns`] gives one.
    pub fn new(
        pid: u32,
        start_time: u64,
        uid: u32,
        pgid: u32,
        cpus: &CpuSet,
        command: &[String],
        time: u64,
    ) -> Self {
        Self {
            version: RECORD_VERSION,
            pid,
            start_time,
            uid,
            pgid,
            pid_ns: None,
            cpus: cpus.to_list(),
            command: command
                .iter()
                .take(MAX_ARGS)
                .map(|a| a.chars().take(MAX_ARG).collect())
                .collect(),
            time,
        }
        .fit()
    }

    /// The record with its PID numbered in namespace `ns` (`None`: not
    /// known, the record is read as older versions wrote it), shortened
    /// again to fit.
    pub fn in_ns(mut self, ns: Option<PidNs>) -> Self {
        self.pid_ns = ns;
        self.fit()
    }

    /// The record with its command shortened until its text fits in
    /// [`MAX_RECORD`] (escapes such as `\u0001` and a long cpulist can
    /// make it too long): the last arguments dropped, then the first
    /// halved (the writer refuses a record that still does not fit).
    fn fit(mut self) -> Self {
        while self.render().len() as u64 > MAX_RECORD && self.command.len() > 1 {
            self.command.pop();
        }
        while self.render().len() as u64 > MAX_RECORD
            && let Some(a) = self.command.first_mut()
            && !a.is_empty()
        {
            let keep = a.chars().count() / 2;
            *a = a.chars().take(keep).collect();
        }
        self
    }

    /// Whether the record's text fits in [`MAX_RECORD`] (else readers
    /// would ignore it: it must not be written).
    pub fn fits(&self) -> bool {
        self.render().len() as u64 <= MAX_RECORD
    }

    /// The record's text (one JSON object and a newline).
    pub fn render(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Parses a record's text, checking its size, version, PID and CPU
    /// list. Control and bidirectional-formatting characters in the
    /// command are replaced by `?` ([`printable`]): records come from other
    /// users and their text reaches this user's terminal.
    pub fn parse(text: &str) -> Result<(Record, CpuSet), String> {
        if text.len() as u64 > MAX_RECORD {
            return Err(format!(
                "larger than {MAX_RECORD} bytes ({} bytes)",
                text.len()
            ));
        }
        let mut r: Record =
            serde_json::from_str(text).map_err(|e| format!("not a claim record: {e}"))?;
        for arg in &mut r.command {
            *arg = printable(arg);
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

/// The record file name: `<pid>.<start_time>.<suffix>`, the suffix 16
/// hexadecimal digits of `getrandom(2)`, so that no one can pre-create the
/// name a launch will use (it is created with `O_EXCL`).
pub fn record_name(pid: u32, start_time: u64, suffix: u64) -> String {
    format!("{pid}.{start_time}.{suffix:016x}")
}

/// The PID a file name claims to be a record of, when the name has the
/// shape of [`record_name`] (or of earlier versions: `<pid>.<start>` and
/// `<pid>.<start>.<N>`); other names are not records.
pub fn record_pid(name: &str) -> Option<u32> {
    let mut parts = name.split('.');
    let pid = parts.next()?;
    let start = parts.next()?;
    let suffix = parts.next();
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    let hex = |s: &str| {
        !s.is_empty() && s.len() <= 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    if !digits(pid) || !digits(start) || suffix.is_some_and(|a| !hex(a)) || parts.next().is_some() {
        return None;
    }
    pid.parse().ok().filter(|p| valid_pid(*p))
}

/// What a readable record is worth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Its process (or process group) runs: the CPUs are claimed. For a
    /// record of a user other than root, `affinity` is that process's
    /// `Cpus_allowed_list` when readable: the CPUs it may claim
    /// ([`Claims::narrow`]).
    Live {
        /// The holder's `Cpus_allowed_list`; `None`: not checked.
        affinity: Option<CpuSet>,
    },
    /// Its process is gone or the PID was reused: reclaim it.
    Stale,
    /// The file's owner is not the process's: ignored, with this warning.
    Forged(String),
}

/// Judges a record whose file is owned by `file_uid`. `proc` is what
/// `/proc` says of the record's PID; `group` of the other members of its
/// process group when the record follows one (`pgid` = its PID) and that
/// PID is gone: the claim then lives while the group does (a PID cannot
/// be reused while its number names a live process group). Root's records
/// are trusted for any process (root may start commands as other users);
/// a user's record counts only for that user's own processes, so no one
/// can forge a claim in another user's name.
///
/// A process (or the group member judged) whose liveness is
/// [`Liveness::Unknown`] is judged as one this reader cannot see
/// ([`judge_unseen`]): its claim lives, its CPUs as written.
pub fn judge(rec: &Record, file_uid: u32, proc: &Liveness, group: &[Liveness]) -> Verdict {
    if let Liveness::Unknown(_) = proc {
        return judge_unseen(rec, file_uid);
    }
    let reused = match proc {
        Liveness::Alive {
            start_time: Some(s),
            ..
        } => *s != rec.start_time,
        _ => false,
    };
    let proc = match proc {
        Liveness::Alive { .. } if !reused => proc,
        // The leader is gone (or its number names another process, which
        // then leads no group of ours): the group, if any member is left.
        _ if rec.pgid == rec.pid && !reused => {
            match group
                .iter()
                .find(|m| file_uid == 0 || m.uids().contains(&file_uid))
                .or(group.first())
            {
                Some(m) => m,
                None => return Verdict::Stale,
            }
        }
        _ => return Verdict::Stale,
    };
    let (uids, affinity) = match proc {
        Liveness::Alive { uids, affinity, .. } => (uids, affinity),
        Liveness::Unknown(_) => return judge_unseen(rec, file_uid),
        Liveness::Dead => return Verdict::Stale,
    };
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
    Verdict::Live {
        affinity: affinity.clone().filter(|_| file_uid != 0),
    }
}

/// Whether record `rec` names its PID in another namespace than `view`
/// (the namespace of this reader's `/proc`, `None`: not known), and which.
/// A record without one (older pinrun versions) is read as theirs were:
/// its PID is this `/proc`'s.
pub fn foreign_ns(rec: &Record, view: Option<PidNs>) -> Option<PidNs> {
    rec.pid_ns.filter(|ns| Some(*ns) != view)
}

/// Judges a record of another PID namespace whose holder this reader
/// cannot see ([`Sight::Unseen`]): it claims its CPUs as written (no
/// affinity to narrow them to), unless it lies about its owner.
pub fn judge_unseen(rec: &Record, file_uid: u32) -> Verdict {
    if rec.uid != file_uid {
        return Verdict::Forged(format!(
            "says uid {} but the file belongs to uid {file_uid}",
            rec.uid
        ));
    }
    Verdict::Live { affinity: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::tests::{CONTAINER, HOST, parse_kubelet};

    fn set(t: &str) -> CpuSet {
        CpuSet::parse(t).unwrap()
    }

    fn rec(pid: u32, start: u64, uid: u32) -> Record {
        Record::new(
            pid,
            start,
            uid,
            0,
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
        let r = Record::new(1, 1, 0, 0, &set("0"), &cmd, 0);
        assert!(r.render().len() <= MAX_RECORD as usize);
        assert_eq!(Record::parse(&r.render()).unwrap().0, r);
        // Arguments of control characters, escaped six bytes each in JSON.
        let cmd: Vec<String> = (0..40).map(|_| "\u{1}".repeat(200)).collect();
        let r = Record::new(1, 1, 0, 0, &set("0"), &cmd, 0);
        assert!(r.fits(), "{}", r.render().len());
        // The longest cpulist of 8192 CPUs and a long command fit.
        let every_other: CpuSet = (0..8192).step_by(2).collect();
        let r = Record::new(1, 1, 0, 0, &every_other, &cmd, 0);
        assert!(r.fits() && !r.command.is_empty(), "{}", r.render().len());
        // A cpulist beyond a record does not, and is not written.
        let wide: CpuSet = (0..40_000).step_by(2).collect();
        assert!(!Record::new(1, 1, 0, 0, &wide, &cmd, 0).fits());
        let r = Record::new(1, 1, 0, 0, &set("0"), &cmd, 0);
        assert!(
            r.render().len() <= MAX_RECORD as usize,
            "{}",
            r.render().len()
        );
        assert!(Record::parse(&r.render()).is_ok());
    }

    /// A record whose `cpus` repeats the widest range up to the size limit
    /// parses to exactly that range (the cpulist parser is linear, the
    /// record bounded); one byte beyond the limit is not a record.
    #[test]
    fn huge_ranges_in_a_record() {
        let mut r = Record::new(1, 1, 0, 0, &set("0"), &[], 0);
        let item = "0-4194303,";
        let room = MAX_RECORD as usize - r.render().len();
        let n = room / item.len();
        r.cpus = item.repeat(n);
        r.cpus.pop();
        let text = r.render();
        assert!(text.len() <= MAX_RECORD as usize);
        let (_, cpus) = Record::parse(&text).unwrap();
        assert_eq!(
            (cpus.len(), cpus.to_list()),
            (4_194_304, "0-4194303".to_string())
        );
        r.cpus
            .push_str(&",0".repeat((MAX_RECORD as usize - text.len()) / 2 + 1));
        let err = Record::parse(&r.render()).unwrap_err();
        assert!(err.starts_with("larger than 32768 bytes"), "{err}");
    }

    /// Bidirectional controls and other deceptive characters never reach
    /// a terminal from a record or kubelet's file.
    #[test]
    fn bidi_controls_are_replaced() {
        for c in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{1b}', '\u{9b}',
            '\u{7f}',
        ] {
            let mut r = rec(1, 1, 0);
            r.command = vec![format!("evil{c}txt.exe")];
            let (back, _) = Record::parse(&r.render()).unwrap();
            assert_eq!(back.command, vec!["evil?txt.exe"], "U+{:04X}", c as u32);
        }
        assert_eq!(printable("sleep 3 é ✓"), "sleep 3 é ✓");
        let k = parse_kubelet(r#"{"entries":{"pod\u202e":{"c\u2066":"1"}}}"#).unwrap();
        assert_eq!(k[0].who(), "kubelet pod pod? container c?");
    }

    #[test]
    fn names() {
        assert_eq!(record_name(12, 34, 0xab), "12.34.00000000000000ab");
        assert_eq!(record_pid(&record_name(12, 34, u64::MAX)), Some(12));
        // Names of earlier versions.
        assert_eq!(record_pid("12.34"), Some(12));
        assert_eq!(record_pid("12.34.2"), Some(12));
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
            "12.34.ABCDEF",
            "12.34.00000000000000000",
            "12.34.g",
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
            affinity: Some(set("1")),
        };
        let live = |a: Option<&str>| Verdict::Live {
            affinity: a.map(set),
        };
        assert_eq!(judge(&r, 1000, &Liveness::Dead, &[]), Verdict::Stale);
        assert_eq!(
            judge(&r, 1000, &alive(Some(8), &[1000]), &[]),
            Verdict::Stale
        );
        assert_eq!(
            judge(&r, 1000, &alive(Some(7), &[1000]), &[]),
            live(Some("1"))
        );
        assert_eq!(judge(&r, 1000, &alive(None, &[]), &[]), live(Some("1")));
        // Threads over the listing's cap: not known to have ended, nor as
        // whom it runs: its claim lives, its CPUs as written; the group's
        // member likewise, never "stale"; the owner is still checked.
        let unknown = Liveness::Unknown("/proc/42/task: more than 3 entries".into());
        assert_eq!(judge(&r, 1000, &unknown, &[]), live(None));
        let g = Record {
            pgid: 42,
            ..r.clone()
        };
        assert_eq!(
            judge(&g, 1000, &Liveness::Dead, std::slice::from_ref(&unknown)),
            live(None)
        );
        assert!(matches!(judge(&r, 1001, &unknown, &[]), Verdict::Forged(_)));
        // Another user's record naming this user's process, or a record
        // lying about its owner.
        assert!(matches!(
            judge(&r, 1000, &alive(Some(7), &[0, 0]), &[]),
            Verdict::Forged(_)
        ));
        assert!(matches!(
            judge(&r, 1001, &alive(Some(7), &[1001]), &[]),
            Verdict::Forged(_)
        ));
        // Root's records hold for any process, on any CPU.
        let r0 = rec(42, 7, 0);
        assert_eq!(judge(&r0, 0, &alive(Some(7), &[1000]), &[]), live(None));
        // A record following its process group: the leader gone, the claim
        // lives while a member of the owner does; a reused leader PID or
        // no member left ends it; a record without a group ignores them.
        let mut g = rec(42, 7, 1000);
        g.pgid = 42;
        let member = [alive(Some(99), &[1000])];
        assert_eq!(judge(&g, 1000, &Liveness::Dead, &member), live(Some("1")));
        assert_eq!(judge(&g, 1000, &Liveness::Dead, &[]), Verdict::Stale);
        assert_eq!(
            judge(&g, 1000, &alive(Some(8), &[1000]), &member),
            Verdict::Stale
        );
        assert!(matches!(
            judge(&g, 1000, &Liveness::Dead, &[alive(Some(99), &[0])]),
            Verdict::Forged(_)
        ));
        assert_eq!(judge(&r, 1000, &Liveness::Dead, &member), Verdict::Stale);
    }

    /// Records name their PID namespace; one of an older pinrun (without
    /// it) is read as before: its PID is this `/proc`'s.
    #[test]
    fn records_name_their_pid_namespace() {
        let r = rec(1, 7, 0).in_ns(Some(CONTAINER));
        let text = r.render();
        assert!(
            text.contains(r#""pid_ns":{"dev":4,"ino":4026532451}"#),
            "{text}"
        );
        assert_eq!(Record::parse(&text).unwrap().0, r);
        let old = r#"{"version":1,"pid":42,"start_time":7,"uid":0,"pgid":0,"cpus":"2-3","command":["sleep","3"],"time":1000}"#;
        let (old, _) = Record::parse(old).unwrap();
        assert_eq!(old.pid_ns, None);
        assert_eq!(old, rec(42, 7, 0));
        assert!(!rec(42, 7, 0).render().contains("pid_ns"));
        // Which records are of another namespace than this /proc's.
        assert_eq!(foreign_ns(&old, Some(HOST)), None);
        assert_eq!(foreign_ns(&old, None), None);
        assert_eq!(foreign_ns(&r, Some(CONTAINER)), None);
        assert_eq!(foreign_ns(&r, Some(HOST)), Some(CONTAINER));
        assert_eq!(foreign_ns(&r, None), Some(CONTAINER));
        assert!(HOST.is_initial() && !CONTAINER.is_initial());
        assert_eq!(CONTAINER.to_string(), "pid:[4026532451]");
        // A namespace does not make a record too long to write.
        let cmd: Vec<String> = (0..40).map(|_| "\u{1}".repeat(200)).collect();
        let every_other: CpuSet = (0..8192).step_by(2).collect();
        let r = Record::new(1, 1, 0, 0, &every_other, &cmd, 0).in_ns(Some(CONTAINER));
        assert!(r.fits() && r.pid_ns.is_some(), "{}", r.render().len());
    }

    /// A record of another PID namespace whose holder cannot be seen
    /// ([`crate::claim::Sight::Unseen`]) is honoured as written, unless it
    /// lies about its owner.
    #[test]
    fn an_unseen_record_is_honoured() {
        let r = rec(7, 1, 1000).in_ns(Some(HOST));
        assert_eq!(judge_unseen(&r, 1000), Verdict::Live { affinity: None });
        assert!(matches!(judge_unseen(&r, 1001), Verdict::Forged(_)));
    }
}
