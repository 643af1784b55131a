//! The `--pid` wing's read layer (issue 32): the process named by a
//! pidfd and its start time ([`open`]), its threads read in passes, its
//! change lock ([`Identity::try_lock`], waited for up to
//! [`LOCK_TIMEOUT`]) and who holds it, the identity check before a change
//! ([`still_same`]), and the cgroups of its threads ([`thread_cpusets`]).
//! Everything is read through the core's `system` layer (the one reader
//! of `/proc/PID/task`, `status`, `cgroup`); nothing here changes the
//! process but the lock.

use crate::error::{Error, ErrorCode};
use crate::request::Target;
use crate::system::Root;
use crate::system::threads::{self, Identity, ThreadState};

/// At most this many passes over `/proc/PID/task`: when reading, before
/// pinrun settles for the threads it found (a process creating threads
/// without pause); when changing, before it refuses and restores
/// ([`crate::pid::apply::apply_all`]: threads-unsettled).
pub const MAX_PASSES: usize = 16;

/// How long a change of a process waits for another pinrun's change of
/// it to end (its per-process lock, [`Identity::try_lock`]) before it
/// refuses (`pid-busy`). A change takes milliseconds (BENCHMARKS.md:
/// 10 000 threads well under a second); a `--migrate` of many pages, an
/// undo helper putting threads back, or a stuck pinrun take longer.
pub const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The process being worked on: its pidfd and start time (its identity),
/// its threads and how many passes found them.
pub struct Process {
    /// Its PID.
    pub pid: u32,
    /// Its pidfd and start time.
    pub id: Identity,
    /// Its start time, clock ticks since boot (`/proc/PID/stat` field 22).
    pub start_time: u64,
    /// Its threads (only `--tid`'s when given).
    pub threads: Vec<ThreadState>,
    /// How many passes over `/proc/PID/task` found them.
    pub passes: usize,
}

/// `e`, unless a file of the process could not be opened for want of a
/// resource (EMFILE under a small `ulimit -n`): then the process was not
/// read, not found missing, and the error is `read-starved`
/// ([`Root::starved_error`]).
fn starved_or(root: &Root, e: Error) -> Error {
    root.starved_error().unwrap_or(e)
}

fn no_such(pid: u32, why: &str) -> Error {
    Error::new(ErrorCode::NoSuchProcess, format!("--pid {pid}: {why}"))
        .hint("list processes with ps -e (or pgrep NAME); a process of another PID namespace has another id here")
}

/// Opens the process (pidfd, start time) and reads its threads (only
/// `--tid`'s when given).
pub fn open(root: &Root, target: &Target, lock: bool) -> Result<Process, Error> {
    let pid = target.pid;
    let id = Identity::open(root, pid).map_err(|e| {
        root.note_io_error(&e, &|| format!("/proc/{pid} (pidfd_open)"));
        starved_or(root, match e.raw_os_error() {
        Some(libc::ESRCH) => no_such(pid, "no such process"),
        Some(libc::EINVAL) => no_such(pid, "this is a thread id, not a process id").hint(format!(
            "give its process (grep Tgid /proc/{pid}/status) with --tid {pid}"
        )),
        Some(libc::ENOSYS) => Error::new(
            ErrorCode::NoSuchProcess,
            format!("--pid {pid}: pidfd_open: {}", crate::error::io_words(&e)),
        )
        .hint("pinrun needs pidfd_open(2), Linux 5.3 or later, to name a running process safely"),
        // EPERM of a seccomp filter or security module, EMFILE...: by
        // its errno, not "Linux 5.3".
        _ => Error::new(
            ErrorCode::NoSuchProcess,
            format!("--pid {pid}: pidfd_open: {}", crate::error::io_words(&e)),
        )
        .hint(crate::system::process::start_hint(&e)),
    })
    })?;
    if lock {
        // Before the threads are read: what a change saves as "before"
        // is never another change's half-done work.
        wait_for_lock(root, &id)?;
    }
    let start_time = id.start_time;
    let live = threads::is_live(root);
    let (mut list, passes) = threads::read_threads(root, pid, live, MAX_PASSES);
    if let Some(tid) = target.tid {
        list.retain(|t| t.tid == tid);
        // A main thread that exited (a zombie while others run) has no
        // placement to change: refused as a thread that is gone.
        if list.first().is_some_and(ThreadState::exited) {
            return Err(Error::new(
                ErrorCode::NoSuchProcess,
                format!("--tid {tid}: the thread has exited (state Z: the main thread, kept until the last thread exits)"),
            )
            .hint(format!("its live threads are listed in /proc/{pid}/task; --pid {pid} alone changes all of them")));
        }
        if list.is_empty() {
            return Err(Error::new(
                ErrorCode::NoSuchProcess,
                format!("--tid {tid}: not a thread of process {pid}"),
            )
            .hint(format!("its threads are listed in /proc/{pid}/task")));
        }
    }
    if list.is_empty() {
        return Err(starved_or(root, no_such(pid, "it has exited")));
    }
    Ok(Process {
        pid,
        id,
        start_time,
        threads: list,
        passes,
    })
}

/// Takes process `id`'s change lock ([`Identity::try_lock`]), polling
/// up to [`LOCK_TIMEOUT`] ([`crate::waits::bound`]): two changes of one process never interleave
/// (each would save the other's half-done work as the state to put back).
/// Errors: `pid-busy` naming the holder (PID, command, uid, from
/// `/proc/locks`), `no-such-process` when the process exits meanwhile,
/// or `flock(2)`'s error.
fn wait_for_lock(root: &Root, id: &Identity) -> Result<(), Error> {
    let pid = id.pid;
    let start = std::time::Instant::now();
    let limit = crate::waits::bound(LOCK_TIMEOUT);
    loop {
        match id.try_lock() {
            Ok(true) => return Ok(()),
            // The lock outlives the process (its holders keep their
            // pidfds): an exit meanwhile is said as such, not "busy".
            Ok(false) if !id.is_same(root) => {
                return Err(no_such(
                    pid,
                    "it exited while pinrun waited for another change of it to end; nothing was changed",
                ));
            }
            Ok(false) if start.elapsed() < limit => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Ok(false) => {
                if let Some(e) = held_by_strangers(id) {
                    return Err(e);
                }
                let holders = crate::system::state_dir::flock_holders(id.fd());
                let who = if holders.is_empty() {
                    "a process /proc/locks does not name (of a PID namespace this one cannot see into, or one that has just ended)".to_string()
                } else {
                    holders.join(", ")
                };
                return Err(Error::new(
                    ErrorCode::PidBusy,
                    format!(
                        "--pid {pid}: another change of this process is under way, still after {}: its lock is held by {who}; nothing was changed",
                        crate::words::ns_words(limit.as_nanos() as u64)
                    ),
                )
                .hint(format!(
                    "one pinrun changes a process at a time; run pinrun again once that one has ended (a pinrun-helper holding it is putting threads back), or stop it if it is stuck; `pinrun --pid {pid}` shows the threads now"
                )));
            }
            Err(e) => {
                return Err(Error::new(
                    ErrorCode::PidBusy,
                    format!(
                        "--pid {pid}: cannot lock the process (flock(2) on its pidfd): {}; nothing was changed",
                        crate::error::io_words(&e)
                    ),
                )
                .hint(match e.raw_os_error() {
                    // A seccomp filter or security module: not transient.
                    Some(libc::EPERM | libc::EACCES) => crate::system::process::start_hint(&e)
                        .replace("pidfd_open(2) or fork(2)", "flock(2)"),
                    _ => "pinrun locks a process's pidfd so two changes never interleave; run pinrun again".into(),
                }));
            }
        }
    }
}

/// The error when every holder of process `id`'s change lock is a
/// process that may not change it (`sched_setattr(2)`'s rule: its
/// effective uid is neither 0 nor the process's real or effective uid,
/// and it has no `CAP_SYS_NICE`): any process may `flock(2)` a pidfd, so
/// such a lock is no change under way but another program's (another
/// user's, at worst to keep changes off the process); said as such,
/// with its PID to stop. `None`: a holder may be a change, or none is
/// visible.
fn held_by_strangers(id: &Identity) -> Option<Error> {
    let pid = id.pid;
    let status = |p: u32| crate::system::root::read_bounded(format!("/proc/{p}/status")).ok();
    let ids = owner_ids(&status(pid)?)?;
    let pids = crate::system::state_dir::flock_holder_pids(id.fd());
    if pids.is_empty() || pids.contains(&0) {
        return None;
    }
    let mut who = Vec::new();
    for h in &pids {
        let euid = stranger(&status(*h)?, &ids)?;
        let comm = crate::system::root::read_bounded(format!("/proc/{h}/comm")).unwrap_or_default();
        who.push(format!(
            "pid {h} ({}) of uid {euid}",
            crate::claim::printable(comm.trim_end())
        ));
    }
    Some(
        Error::new(
            ErrorCode::PidBusy,
            format!(
                "--pid {pid}: its change lock (flock(2) on its pidfd) is held by {}, which may not change this process (not its owner, no CAP_SYS_NICE): no change is under way, another program holds the lock; nothing was changed",
                who.join(", ")
            ),
        )
        .hint(format!(
            "any process may lock a pidfd; stop the holder (kill {}) and run pinrun again",
            pids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
        )),
    )
}

/// The real and effective uids of a process (the first two of the `Uid:`
/// line of its `/proc/PID/status` text `status`, `proc(5)`), once each:
/// the uids `sched_setattr(2)` lets change it. `None` without a `Uid:`
/// line (a status read in part).
fn owner_ids(status: &str) -> Option<Vec<String>> {
    let mut ids = crate::system::process::status_field(status, "Uid")?
        .split_whitespace()
        .take(2)
        .map(str::to_owned)
        .collect::<Vec<_>>();
    ids.dedup();
    Some(ids)
}

/// The effective uid of a lock holder of `/proc/PID/status` text `status`
/// when it may not change a process of uids `owner` (its euid neither 0
/// nor one of them, and `CapEff:` without `CAP_SYS_NICE`, bit 23,
/// `capabilities(7)`). `None` when it may, or when `status` does not say
/// as the kernel writes it (`fs/proc/array.c`: four uids, `CapEff:` of 16
/// hex digits): a status read in part is never taken for a stranger's.
fn stranger(status: &str, owner: &[String]) -> Option<String> {
    let field = |k: &str| crate::system::process::status_field(status, k);
    let uids: Vec<_> = field("Uid")?.split_whitespace().collect();
    let euid = (uids.len() == 4).then(|| uids[1].to_owned())?;
    let nice = field("CapEff")
        .filter(|c| c.len() == 16)
        .and_then(|c| u64::from_str_radix(c, 16).ok())
        .is_none_or(|c| c & (1 << 23) != 0);
    (euid != "0" && !nice && !owner.contains(&euid)).then_some(euid)
}

/// Refuses when the process exited or its PID now names another process
/// (pidfd, then the start time of `/proc/PID/stat`).
pub fn still_same(root: &Root, p: &Process) -> Result<(), Error> {
    if p.id.is_same(root) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::PidReused,
        format!(
            "--pid {}: the process exited after pinrun read it{}; nothing was changed",
            p.pid,
            if threads::start_time(root, p.pid).is_some() {
                ", and its PID now names another process"
            } else {
                ""
            }
        ),
    )
    .hint("find the process again (pgrep NAME) and run pinrun again"))
}

/// The live threads of `p` in another cgroup than the process's own
/// `/proc/PID/cgroup` (the one the plan is bounded by), each with its
/// cgroup's path and cpuset CPUs: one `cgroup` file per thread, a cpuset
/// read per thread that differs.
pub fn thread_cpusets(root: &Root, p: &Process) -> Vec<(u32, String, crate::cpuset::CpuSet)> {
    let own = root.read(&format!("/proc/{}/cgroup", p.pid));
    p.threads
        .iter()
        .filter(|t| !t.exited())
        .filter_map(|t| {
            let text = threads::task_cgroup(root, p.pid, t.tid)?;
            if own.as_deref() == Some(text.as_str()) {
                return None;
            }
            let me = crate::system::cgroup::read_of_task(root, p.pid, t.tid);
            let cs = crate::system::cgroup::read_cpuset(root, &me)?;
            Some((t.tid, cs.cgroup, cs.cpus))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A holder's `/proc/PID/status` as the kernel writes it (proc(5):
    /// tab-separated real, effective, saved, filesystem uids; `CapEff:`
    /// 16 hex digits), uid 1000 with no capability.
    const HOLDER: &str = "Name:\tflock\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\n";

    #[test]
    fn a_holder_of_another_uid_without_cap_sys_nice_is_a_stranger() {
        let owner = owner_ids("Uid:\t0\t0\t0\t0\n").unwrap();
        assert_eq!(owner, ["0"]);
        assert_eq!(stranger(HOLDER, &owner).as_deref(), Some("1000"));
        // The owner's real uid (kill(2)'s and sched_setattr(2)'s rule).
        let owner = owner_ids("Uid:\t1000\t0\t0\t0\n").unwrap();
        assert_eq!(owner, ["1000", "0"]);
        assert_eq!(stranger(HOLDER, &owner), None);
        // CAP_SYS_NICE is bit 23 of CapEff (linux/capability.h).
        let nice = HOLDER.replace("CapEff:\t0000000000000000", "CapEff:\t0000000000800000");
        assert_eq!(stranger(&nice, &["0".into()]), None);
    }

    /// A status read in part (cut mid-line, or before `CapEff:`) or not a
    /// status at all is never taken for a stranger's: the lock is then
    /// said as a change under way (`pid-busy` naming `/proc/locks`' holders).
    #[test]
    fn a_truncated_or_foreign_status_is_no_strangers() {
        let owner = ["0".to_string()];
        for cut in 0..HOLDER.len() {
            let part = &HOLDER[..cut];
            assert_eq!(
                stranger(part, &owner).is_some(),
                part.contains("CapEff:\t0000000000000000"),
                "cut at {cut}: {part:?}"
            );
        }
        assert_eq!(owner_ids("Name:\tx\nUi"), None);
        assert_eq!(stranger("\u{0}\u{ff}garbage: 1 2", &owner), None);
        // Cut inside the uids (the euid would read "10"), CapEff whole.
        let cut = "Uid:\t1000\t10\nCapEff:\t0000000000000000\n";
        assert_eq!(stranger(cut, &owner), None);
    }
}
