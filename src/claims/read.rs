//! Reading the claim records (issue 5): every record of the state
//! directory ([`crate::system::state_dir::StateDir`], opened, checked and
//! locked by the core, shared with the steer wing's journals) judged
//! against `/proc` by the trust rules ([`super::judge`]): live claims,
//! stale records to remove, forged or unusable ones warned about. Records
//! are written by [`super::apply`] under the same lock; kubelet's claims
//! are read by the core ([`crate::system::kubelet`]).

use super::{Record, Verdict, judge, judge_unseen};
use crate::claim::{self, Claim, Claims, Elsewhere, Holder, Liveness, NsScan, PidNs, Sight};
use crate::cpuset::CpuSet;
use crate::system::Root;
use crate::system::state_dir::{
    StateDir, group_exists, liveness, process_groups, scan_pid_namespaces, view_pid_ns,
};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The claims wing's reading of the state directory's records.
impl StateDir {
    /// Reads every record: live claims, warnings for files that are not
    /// usable records, the records that could not be read at all
    /// ([`Claims::unreadable`]: their CPUs are unknown), and the names of
    /// stale records this user may remove (pinrun's own format, a dead
    /// holder, the file this user's or read as root), to be removed under
    /// the exclusive lock. The listing is complete or refused, never cut;
    /// `/proc` not read for want of a resource is noted in `root`
    /// ([`Root::starved_open`]: the caller refuses, `read-starved`).
    ///
    /// Each record's CPU list is clipped to `possible` as soon as it is
    /// parsed (a CPU that does not exist cannot be claimed; a warning names
    /// the record): a record of `0-4194303`, which any local user can write
    /// into the sticky state directory, costs what a record of the
    /// machine's CPUs costs, and memory stays linear in the records.
    pub fn read(&self, root: &Root, possible: &CpuSet) -> (Claims, Vec<String>) {
        let mut r = RecordsRead {
            root,
            possible,
            me: nix::unistd::geteuid().as_raw(),
            groups: None,
            claims: Claims::default(),
            stale: Vec::new(),
            view: None,
            scan: None,
        };
        let names = match self.names() {
            Ok(n) => n,
            Err(why) => {
                r.claims.unreadable.push(format!(
                    "claims: cannot list {}: {why}",
                    self.path().display()
                ));
                return (r.claims, r.stale);
            }
        };
        let (owned, over) = self.owners(names, &mut r);
        for (name, pid, owner) in owned {
            if over.iter().any(|(u, _)| *u == owner) {
                continue;
            }
            self.read_owned(&mut r, name, pid, owner);
        }
        r.claims.claims.sort_by_key(|c| match c.holder {
            Holder::Process { pid, .. } => pid,
            Holder::Kubelet { .. } => u32::MAX,
        });
        (r.claims, r.stale)
    }

    /// The owner of each record of `names` (one fstatat each, no read):
    /// `(name, pid, uid)`, a record gone meanwhile left out, one that
    /// cannot be stat'ed unreadable in `r`; and the users over
    /// [`super::MAX_RECORDS_PER_USER`] with their counts, sorted, each
    /// warned about in `r` (a user over the cap hides only its own
    /// records).
    fn owners(
        &self,
        names: Vec<(String, u32)>,
        r: &mut RecordsRead,
    ) -> (Vec<Owned>, Vec<(u32, usize)>) {
        let mut owned = Vec::with_capacity(names.len());
        let mut per_user: HashMap<u32, usize> = HashMap::new();
        for (name, pid) in names {
            match nix::sys::stat::fstatat(
                self.fd(),
                name.as_str(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            ) {
                Ok(st) => {
                    if st.st_uid != 0 {
                        *per_user.entry(st.st_uid).or_default() += 1;
                    }
                    owned.push((name, pid, st.st_uid));
                }
                Err(nix::errno::Errno::ENOENT) => {}
                Err(e) => r.claims.unreadable.push(format!(
                    "claims: record {}: fstatat: {}",
                    self.path().join(&name).display(),
                    e.desc()
                )),
            }
        }
        let mut over: Vec<(u32, usize)> = per_user
            .into_iter()
            .filter(|(_, n)| *n > super::MAX_RECORDS_PER_USER)
            .collect();
        over.sort_unstable();
        for (uid, n) in &over {
            let w = format!(
                "claims: uid {uid} has {n} records in {}, more than {}: all of them ignored",
                self.path().display(),
                super::MAX_RECORDS_PER_USER
            );
            if *uid == r.me {
                r.claims.warnings.push(w);
            } else {
                r.claims.foreign_warnings.push(w);
            }
        }
        (owned, over)
    }

    /// Reads record `name` of process `pid`, owned by `owner`, into `r`:
    /// its holder's liveness, then the record ([`StateDir::usable_record`]),
    /// its CPUs clipped to the possible ones, and its verdict
    /// ([`judge_here`] for a PID of this reader's `/proc`,
    /// [`judge_elsewhere`] for one of another PID namespace): a live claim,
    /// a stale record this user may remove (only pinrun's own: parsed, the
    /// owner they name), or a forged one warned about.
    fn read_owned(&self, r: &mut RecordsRead, name: String, pid: u32, owner: u32) {
        let me = r.me;
        let live = liveness(pid);
        let shown = self.path().join(&name);
        if let Liveness::Unknown(why) = &live {
            // Neither live nor stale: its CPUs unknown, the record kept.
            r.claims.unreadable.push(format!(
                "claims: record {}: cannot tell whether pid {pid} still runs: {why}",
                shown.display()
            ));
            return;
        }
        let foreign = owner != 0 && owner != me;
        let Some((rec, cpus, file_uid)) = self.usable_record(r, &name, &live, foreign) else {
            return;
        };
        let Some(cpus) = clip_to_possible(r, &shown, cpus, foreign) else {
            return;
        };
        if rec.pid != pid {
            r.claims.warnings.push(format!(
                "claims: record {} names pid {}, not {pid}: ignored",
                shown.display(),
                rec.pid
            ));
            return;
        }
        let view = if rec.pid_ns.is_some() { r.view() } else { None };
        let judged = match super::foreign_ns(&rec, view) {
            None => judge_here(r, &shown, &rec, file_uid, &live),
            Some(ns) => Some(judge_elsewhere(r, ns, &rec, file_uid)),
        };
        let Some((verdict, follows_group, elsewhere)) = judged else {
            return;
        };
        match verdict {
            Verdict::Stale => {
                // Only pinrun's own records (parsed, the owner they
                // name) are ever removed.
                if rec.uid == file_uid && (file_uid == me || me == 0) {
                    r.stale.push(name);
                }
            }
            Verdict::Forged(why) => warnings_of(&mut r.claims, file_uid != 0 && file_uid != me)
                .push(format!("claims: record {} {why}: ignored", shown.display())),
            Verdict::Live { affinity } => r.claims.claims.push(Claim {
                holder: Holder::Process {
                    pid: rec.pid,
                    start_time: rec.start_time,
                    uid: file_uid,
                    pgid: rec.pgid,
                    command: rec.command,
                    since: rec.time,
                    record: name,
                    affinity,
                    group_only: follows_group,
                    elsewhere,
                },
                cpus,
            }),
        }
    }

    /// Record `name` as [`StateDir::read_record`] reads it: `None` when it
    /// is gone, cannot be read (unreadable in `r`: its CPUs are unknown) or
    /// is not a usable record (warned about in `r`, as `foreign` or not,
    /// saying whether its holder, `live`, may be alive).
    fn usable_record(
        &self,
        r: &mut RecordsRead,
        name: &str,
        live: &Liveness,
        foreign: bool,
    ) -> Option<(Record, CpuSet, u32)> {
        let shown = self.path().join(name);
        match self.read_record(name) {
            Ok(rec) => Some(rec),
            Err(RecordError::Gone) => None,
            Err(RecordError::Unreadable(why)) => {
                r.claims.unreadable.push(format!(
                    "claims: record {} cannot be read ({why}); its CPUs are unknown",
                    shown.display()
                ));
                None
            }
            Err(RecordError::Invalid(why)) => {
                warnings_of(&mut r.claims, foreign).push(format!(
                    "claims: {} is not a usable claim record ({why}); {}",
                    shown.display(),
                    if *live == Liveness::Dead {
                        "its pid is gone: ignored (pinrun removes only its own records)"
                    } else {
                        "its pid may be alive: ignored, CPUs unknown"
                    }
                ));
                None
            }
        }
    }

    /// The names shaped like records, with their PIDs: every entry of the
    /// directory, or the reason it cannot be listed completely (an error
    /// of `getdents64(2)`, returned once and never retried, or more than
    /// [`super::MAX_ENTRIES`] entries).
    fn names(&self) -> std::result::Result<Vec<(String, u32)>, String> {
        let mut dir = nix::dir::Dir::openat(
            self.fd(),
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| e.desc().to_string())?;
        record_names(dir.iter().map(|e| {
            e.map(|e| e.file_name().to_string_lossy().into_owned())
                .map_err(|e| e.desc().to_string())
        }))
    }

    /// One record: opened relative to the directory without following a
    /// symlink or blocking on a FIFO; only a regular file, at most
    /// [`super::MAX_RECORD`] bytes.
    fn read_record(
        &self,
        name: &str,
    ) -> std::result::Result<(Record, crate::cpuset::CpuSet, u32), RecordError> {
        use nix::errno::Errno;
        let fd = nix::fcntl::openat(
            self.fd(),
            name,
            OFlag::O_RDONLY
                | OFlag::O_NOFOLLOW
                | OFlag::O_NONBLOCK
                | OFlag::O_CLOEXEC
                | OFlag::O_NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::ENOENT => RecordError::Gone,
            Errno::ELOOP => RecordError::Invalid("a symlink, never followed".into()),
            Errno::EACCES | Errno::EPERM | Errno::ENXIO | Errno::ENODEV | Errno::EISDIR => {
                RecordError::Invalid(e.desc().into())
            }
            e => RecordError::Unreadable(format!("open: {}", e.desc())),
        })?;
        let file = File::from(fd);
        let meta = file.metadata().map_err(|e| {
            RecordError::Unreadable(format!("fstat: {}", crate::error::io_words(&e)))
        })?;
        if !meta.is_file() {
            return Err(RecordError::Invalid("not a regular file".into()));
        }
        if meta.len() > super::MAX_RECORD {
            return Err(RecordError::Invalid(format!(
                "larger than {} bytes ({} bytes)",
                super::MAX_RECORD,
                meta.len()
            )));
        }
        let mut buf = Vec::new();
        file.take(super::MAX_RECORD + 1)
            .read_to_end(&mut buf)
            .map_err(|e| {
                RecordError::Unreadable(format!("read: {}", crate::error::io_words(&e)))
            })?;
        let text =
            std::str::from_utf8(&buf).map_err(|_| RecordError::Invalid("not UTF-8".into()))?;
        let (rec, cpus) = Record::parse(text).map_err(RecordError::Invalid)?;
        Ok((rec, cpus, meta.uid()))
    }
}

/// A record's name, the PID it names and its owner's uid.
type Owned = (String, u32, u32);

/// A reading of the claim records under way ([`StateDir::read`]).
struct RecordsRead<'a> {
    /// The root whose reading refuses when `/proc` could not be read for
    /// want of a resource ([`Root::note_io_error`]).
    root: &'a Root,
    /// The CPUs that exist: a record's CPUs are clipped to them.
    possible: &'a CpuSet,
    /// This process's effective uid.
    me: u32,
    /// The machine's process groups, read once when a claim first lives
    /// by its group ([`process_groups`]).
    groups: Option<std::result::Result<HashMap<u32, Vec<u32>>, String>>,
    /// The claims read so far, with their warnings.
    claims: Claims,
    /// The stale records this user may remove.
    stale: Vec<String>,
    /// The PID namespace of this `/proc` ([`view_pid_ns`]), read when a
    /// record first names one.
    view: Option<Option<PidNs>>,
    /// Every process with its namespace ([`scan_pid_namespaces`]), read
    /// when a record of another namespace is first judged.
    scan: Option<NsScan>,
}

/// The names of the records in `dir` of process `pid` started at `start` (field
/// 22 of its stat), `pid` numbered in this `/proc`: `<pid>.<start>`
/// and `<pid>.<start>.<suffix>` ([`super::record_name`]) that parse as
/// records naming that PID in this `/proc`'s PID namespace or in none
/// (older versions); a record of another namespace's process with the
/// same number is not its. Empty when the directory cannot be listed.
pub fn records_of(dir: &StateDir, pid: u32, start: u64) -> Vec<String> {
    let exact = format!("{pid}.{start}");
    let prefix = format!("{exact}.");
    let mut view = None;
    dir.names()
        .unwrap_or_default()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| *n == exact || n.starts_with(&prefix))
        .filter(|n| match dir.read_record(n) {
            Ok((rec, _, _)) => {
                rec.pid_ns.is_none()
                    || super::foreign_ns(&rec, *view.get_or_insert_with(view_pid_ns)).is_none()
            }
            Err(_) => false,
        })
        .collect()
}

impl RecordsRead<'_> {
    /// The PID namespace of this `/proc`, read once.
    fn view(&mut self) -> Option<PidNs> {
        *self.view.get_or_insert_with(view_pid_ns)
    }

    /// Every process with its PID namespace, read once.
    fn scan(&mut self) -> &NsScan {
        let view = self.view();
        let root = self.root;
        self.scan
            .get_or_insert_with(|| scan_pid_namespaces(view, &|e, w| root.note_io_error(e, w)))
    }
}

/// The CPUs of record `shown` within the possible ones: a record naming
/// CPUs that do not exist is warned about in `r` (as `foreign` or not),
/// and `None` when none of its CPUs exists (it claims nothing).
fn clip_to_possible(
    r: &mut RecordsRead,
    shown: &Path,
    cpus: CpuSet,
    foreign: bool,
) -> Option<CpuSet> {
    let possible = r.possible;
    let named = (cpus.len(), cpus.last().unwrap_or(0));
    let cpus = cpus.intersection(possible);
    let beyond = named.0 - cpus.len();
    if beyond > 0 {
        warnings_of(&mut r.claims, foreign).push(format!(
            "claims: record {} names {} CPUs that do not exist (up to CPU {}; possible: {}): {}",
            shown.display(),
            beyond,
            named.1,
            possible.to_compact_list(),
            if cpus.is_empty() {
                "it claims nothing, ignored"
            } else {
                "only the possible ones count"
            }
        ));
        if cpus.is_empty() {
            return None;
        }
    }
    Some(cpus)
}

/// Whether record `rec` (`shown`) lives by its process group only (its
/// PID, `live`, is gone or names another process, and it leads its group),
/// and the group's members still alive when the group exists. `None`
/// when the group's members could not all be read: neither live nor
/// stale, its CPUs unknown (unreadable in `r`) and the record kept.
fn group_members(
    r: &mut RecordsRead,
    shown: &Path,
    rec: &Record,
    live: &Liveness,
) -> Option<(bool, Vec<Liveness>)> {
    // The PID is gone (or names another process): the claim can
    // live only by its process group.
    let pid_gone = match live {
        Liveness::Dead => true,
        Liveness::Alive { start_time, .. } => start_time.is_some_and(|s| s != rec.start_time),
        Liveness::Unknown(_) => false,
    };
    let follows_group = rec.pgid == rec.pid && pid_gone;
    let members: Vec<Liveness> = if follows_group && group_exists(rec.pgid) {
        let root = r.root;
        let note = |e: &std::io::Error, w: &dyn Fn() -> String| root.note_io_error(e, w);
        let read = match r.groups.get_or_insert_with(|| process_groups(&note)) {
            Ok(groups) => {
                let members: Vec<Liveness> = groups
                    .get(&rec.pgid)
                    .map(|pids| {
                        pids.iter()
                            .map(|p| liveness(*p))
                            .filter(|l| *l != Liveness::Dead)
                            .collect()
                    })
                    .unwrap_or_default();
                let unknown = members.iter().find_map(|l| match l {
                    Liveness::Unknown(why) => Some(why.clone()),
                    _ => None,
                });
                unknown.map_or(Ok(members), Err)
            }
            Err(why) => Err(why.clone()),
        };
        match read {
            Ok(members) => members,
            // A group whose members could not all be read is
            // neither live nor stale: its CPUs are unknown, and
            // the record is kept.
            Err(why) => {
                r.claims.unreadable.push(format!(
                    "claims: record {}: cannot tell whether process group {} still runs: {why}",
                    shown.display(),
                    rec.pgid
                ));
                return None;
            }
        }
    } else {
        Vec::new()
    };
    Some((follows_group, members))
}

/// What a record is worth, whether its claim lives by its process group
/// only, and where its holder is when in another PID namespace.
type Judged = (Verdict, bool, Option<Elsewhere>);

/// Judges record `rec` (`shown`), whose PID is this reader's `/proc`'s,
/// its process being `live` ([`judge`], with its group's members
/// from [`group_members`]). `None`: the group's members could not all be
/// read (unreadable in `r`), the record is kept.
fn judge_here(
    r: &mut RecordsRead,
    shown: &Path,
    rec: &Record,
    file_uid: u32,
    live: &Liveness,
) -> Option<Judged> {
    let (follows_group, members) = group_members(r, shown, rec, live)?;
    Some((judge(rec, file_uid, live, &members), follows_group, None))
}

/// Judges record `rec`, whose PID is numbered in PID namespace `ns`, not
/// this reader's `/proc`'s: the holder is found by its namespace among
/// every process ([`claim::locate`] on [`RecordsRead::scan`]) and judged
/// under the PID it has here ([`judge`]); a holder this reader
/// cannot see is honoured unchecked ([`judge_unseen`]), its record
/// never removed.
fn judge_elsewhere(r: &mut RecordsRead, ns: PidNs, rec: &Record, file_uid: u32) -> Judged {
    match claim::locate(r.scan(), ns, rec.pid, rec.pgid) {
        Sight::Unseen(why) => (
            judge_unseen(rec, file_uid),
            false,
            Some(Elsewhere {
                ns,
                here: None,
                unchecked: Some(why),
            }),
        ),
        Sight::Seen { holder, members } => {
            let live = holder.map_or(Liveness::Dead, liveness);
            let pid_gone = match &live {
                Liveness::Dead => true,
                Liveness::Alive { start_time, .. } => {
                    start_time.is_some_and(|s| s != rec.start_time)
                }
                Liveness::Unknown(_) => false,
            };
            let follows_group = rec.pgid == rec.pid && pid_gone;
            let members: Vec<Liveness> = if follows_group {
                members
                    .iter()
                    .map(|p| liveness(*p))
                    .filter(|l| *l != Liveness::Dead)
                    .collect()
            } else {
                Vec::new()
            };
            (
                judge(rec, file_uid, &live, &members),
                follows_group,
                Some(Elsewhere {
                    ns,
                    here: holder.filter(|_| !pid_gone),
                    // A holder whose threads could not be listed in full
                    // is honoured unchecked (`judge`), and says why.
                    unchecked: std::iter::once(&live)
                        .chain(&members)
                        .find_map(|l| match l {
                            Liveness::Unknown(why) => Some(why.clone()),
                            _ => None,
                        }),
                }),
            )
        }
    }
}

/// Where a warning about a record goes: `foreign_warnings` for a record
/// of another user than root and this one (`foreign`), else `warnings`.
fn warnings_of(claims: &mut Claims, foreign: bool) -> &mut Vec<String> {
    if foreign {
        &mut claims.foreign_warnings
    } else {
        &mut claims.warnings
    }
}

/// Why a record could not be used.
#[derive(Debug)]
enum RecordError {
    /// Removed since the listing.
    Gone,
    /// Not a record (a symlink, a FIFO, garbage, too large): it claims
    /// nothing.
    Invalid(String),
    /// An error that says nothing about the file (`EMFILE`, `ENOMEM`,
    /// `EIO`...): its claim is unknown.
    Unreadable(String),
}

/// The record names among `entries` (a directory listing, in any order),
/// with their PIDs, sorted; the first error ends the listing (an iterator
/// over `getdents64(2)` may return the same error forever), as do more
/// than [`super::MAX_ENTRIES`] entries of any name.
pub fn record_names(
    entries: impl Iterator<Item = std::result::Result<String, String>>,
) -> std::result::Result<Vec<(String, u32)>, String> {
    let mut names = Vec::new();
    for (i, e) in entries.enumerate() {
        if i >= super::MAX_ENTRIES {
            return Err(format!(
                "more than {} entries; pinrun reads a state directory completely or not at all",
                super::MAX_ENTRIES
            ));
        }
        let name = e.map_err(|why| format!("getdents64: {why}"))?;
        if let Some(pid) = super::record_pid(&name) {
            names.push((name, pid));
        }
    }
    names.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing that fails ends at its first error, even when the
    /// iterator would repeat that error forever (a persistent
    /// `getdents64(2)` failure once spun with the lock held).
    #[test]
    fn a_failing_listing_ends_at_its_first_error() {
        let ok = ["7.1", "x", "3.9.00000000000000ff"].map(|n| Ok(n.to_string()));
        let forever = std::iter::repeat_with(|| Err("Input/output error".to_string()));
        assert_eq!(
            record_names(ok.clone().into_iter().chain(forever)),
            Err("getdents64: Input/output error".into())
        );
        assert_eq!(
            record_names(ok.into_iter()),
            Ok(vec![("3.9.00000000000000ff".into(), 3), ("7.1".into(), 7)])
        );
        // Too many entries: refused, never read in part.
        let many = (0..).map(|i| Ok(format!("f{i}")));
        assert!(
            record_names(many)
                .unwrap_err()
                .contains("more than 1048576 entries")
        );
    }
}
