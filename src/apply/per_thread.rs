//! The `--thread-map` watcher: started by [`start`] in the helper process
//! ([`super::helper`]) before pinrun applies anything; once the command is
//! exec'd it scans `/proc/PID/task` every
//! [`POLL_INTERVAL_US`](crate::plan::per_thread::POLL_INTERVAL_US), asks the
//! plan's rules ([`ThreadMap::decide`]) where each new or renamed thread
//! goes, pins it (`sched_setaffinity(2)` on its TID), reads the affinity
//! back (`sched_getaffinity(2)`), and writes each decision to
//! `--thread-log` as a JSON line. It exits when the command's pidfd says
//! it ended.

use crate::cpuset::CpuSet;
use crate::ffi;
use crate::plan::per_thread::{POLL_INTERVAL_US, ThreadInfo, ThreadMap};
use crate::system::threads::tasks;
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};

/// What the watcher knows of one thread.
struct Seen {
    order: u32,
    name: String,
    /// The CPUs it was pinned to (`None`: no rule matched).
    pinned: Option<CpuSet>,
}

/// `--thread-log`: the file, its path (for the one message about a failed
/// write), whether a write failed, and the time of exec.
struct Log {
    file: Option<std::fs::File>,
    path: std::path::PathBuf,
    failed: bool,
    t0: std::time::Instant,
    /// When the perf events ended ([`wait_for_change`]): the `poll`
    /// start line is owed, written before the next decision or once the
    /// command has outlived the events by [`PERF_BACKSTOP_MS`]; never
    /// when the command was ending (its last task's events end first).
    poll_owed: Option<std::time::Instant>,
}

/// One decision about a thread.
struct Entry<'a> {
    tid: u32,
    seen: &'a Seen,
    /// `new` or `rename`.
    event: &'a str,
    /// The rule that matched, as written.
    rule: Option<&'a str>,
    /// The affinity read back after pinning.
    read_back: Option<&'a CpuSet>,
    /// Why pinning failed.
    error: Option<String>,
}

impl Log {
    /// Appends one JSON line; the first failed write (ENOSPC, EIO, EFBIG…)
    /// is said once on stderr ([`Log::failure`]), later ones are silent.
    fn line(&mut self, v: &serde_json::Value) {
        let Some(f) = &mut self.file else { return };
        if let Err(e) = writeln!(f, "{v}")
            && let Some(msg) = self.failure(&e)
        {
            // Not eprintln!: a closed stderr must not end the watcher.
            let _ = writeln!(std::io::stderr(), "{msg}");
        }
    }

    /// The message for a failed write: `Some` the first time only.
    fn failure(&mut self, e: &std::io::Error) -> Option<String> {
        if std::mem::replace(&mut self.failed, true) {
            return None;
        }
        Some(format!(
            "pinrun: --thread-log {}: cannot write: {}; the threads are still pinned, further entries are lost",
            self.path.display(),
            crate::error::io_words(e)
        ))
    }

    /// The first line: `{"t_us": 0, "event": "start", "mechanism":
    /// "perf"|"poll", "interval_us"}` (again when perf falls back to poll).
    fn start(&mut self, mechanism: &str) {
        if self.file.is_none() {
            return;
        }
        let interval = if mechanism == "perf" {
            PERF_BACKSTOP_MS as u64 * 1000
        } else {
            POLL_INTERVAL_US
        };
        let v = serde_json::json!({
            "t_us": self.t0.elapsed().as_micros() as u64,
            "event": "start",
            "mechanism": mechanism,
            "interval_us": interval,
        });
        self.line(&v);
    }

    /// Writes the owed `poll` start line ([`Log::poll_owed`]): `now`, or
    /// once the command has outlived the perf events by
    /// [`PERF_BACKSTOP_MS`].
    fn pay_poll_start(&mut self, now: bool) {
        let Some(since) = self.poll_owed else { return };
        if now || since.elapsed().as_millis() >= PERF_BACKSTOP_MS as u128 {
            self.poll_owed = None;
            self.start("poll");
        }
    }

    /// One decision as a JSON line: `{"t_us", "tid", "name", "order",
    /// "event": "new"|"rename", "rule", "cpus", "read_back", "error"}`;
    /// `t_us` counts from the command's exec.
    fn write(&mut self, e: Entry<'_>) {
        if self.file.is_none() {
            return;
        }
        self.pay_poll_start(true);
        let v = serde_json::json!({
            "t_us": self.t0.elapsed().as_micros() as u64,
            "tid": e.tid,
            "name": e.seen.name,
            "order": e.seen.order,
            "event": e.event,
            "rule": e.rule,
            "cpus": e.seen.pinned.as_ref().map(CpuSet::to_list),
            "read_back": e.read_back.map(CpuSet::to_list),
            "error": e.error,
        });
        self.line(&v);
    }
}

/// Pins `tid` to `cpus` and reads it back: the affinity the kernel keeps,
/// or why it failed (ESRCH: the thread ended meanwhile).
fn pin(tid: u32, cpus: &CpuSet, possible: &CpuSet) -> Result<CpuSet, String> {
    let bytes = super::mask_bytes(possible, cpus);
    ffi::sched_setaffinity_of(tid, &cpus.to_kernel_bytes(bytes)).map_err(|e| {
        format!(
            "sched_setaffinity(TID {tid}, CPUs {cpus}): {}",
            crate::error::io_words(&e)
        )
    })?;
    let got = super::get_affinity_of(tid, possible).map_err(|e| {
        format!(
            "sched_getaffinity(TID {tid}): {}",
            crate::error::io_words(&e)
        )
    })?;
    if &got != cpus {
        return Err(format!(
            "sched_setaffinity(TID {tid}, CPUs {cpus}): the kernel kept CPUs {got}"
        ));
    }
    Ok(got)
}

/// The watcher's loop in the helper: returns its exit status (0 when the
/// command ended; 1 when a thread could not be pinned as its rule says,
/// after saying so on stderr and in the log).
fn watch(
    map: &ThreadMap,
    possible: &CpuSet,
    h: &super::helper::Helper,
    file: Option<(std::fs::File, std::path::PathBuf)>,
    perf: Vec<OwnedFd>,
) -> i32 {
    let (file, path) = file.unzip();
    let log = Log {
        file,
        path: path.unwrap_or_default(),
        failed: false,
        t0: std::time::Instant::now(),
        poll_owed: None,
    };
    let mut rings: Vec<ffi::PerfRing> = perf
        .into_iter()
        .map(ffi::PerfRing::map)
        .collect::<Result<_, _>>()
        .unwrap_or_default();
    let pid = h.target_pid;
    let mut w = Watcher {
        map,
        possible,
        pid,
        log,
        seen: BTreeMap::new(),
        next_order: 1,
        each: Vec::new(),
        status: 0,
    };
    w.log.start(if rings.is_empty() { "poll" } else { "perf" });
    let interval_ms = (POLL_INTERVAL_US / 1000).max(1) as i32;
    loop {
        let now = match tasks(pid) {
            Ok(now) => now,
            Err(e) => {
                // Ended, or /proc hides it (hidepid=): say so unless ended.
                if !h.ended_within(0) {
                    let _ = writeln!(
                        std::io::stderr(),
                        "pinrun: --thread-map: cannot read /proc/{pid}/task: {}; threads created from now on keep the affinity they inherit",
                        crate::error::io_words(&e)
                    );
                    w.status = 1;
                }
                break;
            }
        };
        w.scan(now);
        if !wait_for_change(h, &mut rings, &mut w.log, interval_ms) {
            break;
        }
    }
    w.status
}

/// The watcher's state between scans ([`watch`]).
struct Watcher<'a> {
    /// The plan's rules.
    map: &'a ThreadMap,
    /// The possible CPUs (the affinity masks' size).
    possible: &'a CpuSet,
    /// The command's PID (its main thread's TID).
    pid: u32,
    /// `--thread-log`.
    log: Log,
    /// The threads seen, by TID.
    seen: BTreeMap<u32, Seen>,
    /// The order the next new thread gets (the main thread's is 0).
    next_order: u32,
    /// The rules' `each` counters ([`ThreadMap::decide`]).
    each: Vec<usize>,
    /// The exit status: 1 once a thread could not be pinned.
    status: i32,
}

impl Watcher<'_> {
    /// One scan: forgets the threads gone from `now` (the command's
    /// threads with their names), then decides each new or renamed one
    /// ([`Watcher::decide`]).
    fn scan(&mut self, now: Vec<crate::system::threads::Task>) {
        self.seen.retain(|tid, _| now.iter().any(|t| t.tid == *tid));
        for t in now {
            self.decide(t);
        }
    }

    /// Asks the rules where thread `t` goes when it is new or renamed,
    /// pins it there when that changes its CPUs ([`pin`]; a failure is said
    /// on stderr and sets the status to 1), and logs the decision. A thread
    /// that ended meanwhile is left out.
    fn decide(&mut self, t: crate::system::threads::Task) {
        let (map, pid) = (self.map, self.pid);
        let (event, order, prev) = match self.seen.get(&t.tid) {
            Some(s) if s.name == t.name => return,
            Some(s) => ("rename", s.order, s.pinned.clone()),
            None if t.tid == pid => ("new", 0, None),
            None => {
                self.next_order += 1;
                ("new", self.next_order - 1, None)
            }
        };
        let info = ThreadInfo {
            main: t.tid == pid,
            order,
            name: t.name.clone(),
        };
        let decision = map.decide(&info, &mut self.each);
        let entry = Seen {
            order,
            name: t.name,
            pinned: decision.as_ref().map(|d| d.cpus.clone()).or(prev.clone()),
        };
        let rule = decision
            .as_ref()
            .map(|d| map.rules[d.rule].rule.text.as_str());
        let mut e = Entry {
            tid: t.tid,
            seen: &entry,
            event,
            rule,
            read_back: None,
            error: None,
        };
        let got;
        match &decision {
            Some(d) if prev.as_ref() != Some(&d.cpus) => match pin(t.tid, &d.cpus, self.possible) {
                Ok(g) => {
                    got = g;
                    e.read_back = Some(&got);
                }
                // The thread ended meanwhile.
                Err(why) if why.contains("No such process") => return,
                Err(why) => {
                    // Not eprintln!: a closed stderr must not end the watcher.
                    let _ = writeln!(
                        std::io::stderr(),
                        "pinrun: --thread-map: thread {} ({}): {why}",
                        t.tid,
                        entry.name
                    );
                    e.error = Some(why);
                    self.status = 1;
                }
            },
            _ => {}
        }
        self.log.write(e);
        self.seen.insert(t.tid, entry);
    }
}

/// Waits for the next scan: polling, up to `interval_ms` for the command
/// to end (`h`); with perf events (`rings`), until a thread's creation or
/// rename wakes it, or every [`PERF_BACKSTOP_MS`] in case a record was
/// lost. When the events end (every task that inherited them has exited:
/// the command is ending, a moment before its pidfd says so) it polls
/// from then on, saying so in `log` only once the command has outlived
/// them by [`PERF_BACKSTOP_MS`] or before its next decision. Returns `false` when the
/// command ended (or cannot be waited for).
fn wait_for_change(
    h: &super::helper::Helper,
    rings: &mut Vec<ffi::PerfRing>,
    log: &mut Log,
    interval_ms: i32,
) -> bool {
    if rings.is_empty() {
        let ended = h.ended_within(interval_ms);
        if !ended {
            log.pay_poll_start(false);
        }
        return !ended;
    }
    // Perf events: woken by a thread's creation or rename, and every
    // PERF_BACKSTOP_MS in case a record was lost.
    let mut fds = vec![h.target.as_fd()];
    fds.extend(rings.iter().map(ffi::PerfRing::fd));
    let Ok(rev) = ffi::poll_any(&fds, PERF_BACKSTOP_MS) else {
        return false;
    };
    if rev[0] != 0 {
        return false;
    }
    if rev[1..]
        .iter()
        .any(|r| r & (libc::POLLHUP | libc::POLLERR) != 0)
    {
        // The events ended: every task that inherited them has exited
        // (perf's is_event_hup(): the event exited and has no child
        // events left, so not when only the main thread did), which is
        // the command ending: its pidfd says so a moment later, and there
        // is nothing to say. Should it still run, polling from now on,
        // said in the log once it has outlived the events.
        rings.clear();
        log.poll_owed = Some(std::time::Instant::now());
        return true;
    }
    rings.iter().for_each(ffi::PerfRing::consume);
    true
}

/// With perf events, the scan that runs even without a record (a lost
/// record, a thread the events cannot see), in milliseconds.
const PERF_BACKSTOP_MS: i32 = 100;

/// At most this many CPUs get a perf event each (one descriptor and two
/// pages per CPU of the plan); a larger plan is polled.
const PERF_MAX_CPUS: usize = 512;

/// The tag of the `--thread-log` descriptor handed to the helper
/// ([`super::helper::hand_fds`]).
pub const LOG_FD: u8 = b'L';

/// The tag of the perf event descriptors handed to the helper.
pub const PERF_FDS: u8 = b'P';

/// The watcher for `map` as a duty of the helper process (started by the
/// caller, with the other duties, before anything is changed). Its
/// descriptors come later, handed over by pinrun after `--probe`
/// ([`events`] under [`PERF_FDS`], `--thread-log` under [`LOG_FD`], whose
/// path `log` names it in messages): opened earlier, the perf events
/// (inherited by every thread pinrun starts) would count the probe's
/// threads. With perf events, one per CPU of the plan (where every thread
/// of the command runs) wakes the watcher at each thread creation and
/// rename; without (refused, or more than [`PERF_MAX_CPUS`] CPUs), the
/// watcher polls.
pub fn duty(
    map: ThreadMap,
    possible: CpuSet,
    log: Option<std::path::PathBuf>,
) -> super::helper::Duty {
    Box::new(move |h| {
        if !h.wait_for_exec() {
            return 0;
        }
        let file = h
            .take_fds(LOG_FD)
            .into_iter()
            .next()
            .map(std::fs::File::from)
            .zip(log);
        let perf = h.take_fds(PERF_FDS);
        // The watcher runs in a child of the helper, which says when it
        // is killed: threads would no longer be placed, silently.
        match ffi::fork() {
            Ok(0) => {
                let _ = nix::sys::prctl::set_name(c"pinrun-watcher");
                ffi::exit_now(watch(&map, &possible, h, file, perf))
            }
            Ok(child) => {
                drop((file, perf));
                reap_watcher(child, h.target_pid)
            }
            Err(_) => watch(&map, &possible, h, file, perf),
        }
    })
}

/// Waits for the watcher `child` of command `pid` and returns its status;
/// one killed by a signal (SIGKILL, the OOM killer) is said on the
/// helper's stderr (the command's), since the command's threads are no
/// longer placed from then on.
fn reap_watcher(child: i32, pid: u32) -> i32 {
    let id = nix::unistd::Pid::from_raw(child);
    loop {
        match nix::sys::wait::waitpid(id, None) {
            Err(nix::errno::Errno::EINTR) => continue,
            Ok(nix::sys::wait::WaitStatus::Exited(_, code)) => return code,
            Ok(nix::sys::wait::WaitStatus::Signaled(_, sig, _)) => {
                crate::output::to_stderr(&watcher_killed(pid, child, sig.as_str()));
                return 1;
            }
            Ok(_) => continue,
            Err(_) => return 1,
        }
    }
}

/// The line saying that the `--thread-map` watcher (pid `child`) of
/// command `pid` was killed by signal `sig`.
fn watcher_killed(pid: u32, child: i32, sig: &str) -> String {
    format!(
        "pinrun: --thread-map: the watcher of process {pid} (pid {child}, pinrun-watcher) was killed by {sig}: threads the command creates or renames from now on are not placed (they keep the affinity of the thread that creates them)\n"
    )
}

/// The perf events of the watcher of `map` ([`ffi::perf_task_events`],
/// one per CPU of the plan), opened by pinrun on itself and inherited by
/// the threads the command starts; none without `perf`, when the plan has
/// more than [`PERF_MAX_CPUS`] CPUs, or when `perf_event_open(2)` is
/// refused (`perf_event_paranoid` 3, seccomp): the watcher then polls.
pub fn events(map: &ThreadMap, perf: bool) -> Vec<OwnedFd> {
    let cpus: CpuSet = map.positions.iter().fold(CpuSet::new(), |a, p| a.union(p));
    if perf && cpus.len() <= PERF_MAX_CPUS {
        cpus.iter()
            .map(ffi::perf_task_events)
            .collect::<Result<_, _>>()
            .unwrap_or_default()
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log whose writes fail (`/dev/full`: ENOSPC, as a full file
    /// system) is said once, naming the path and the errno's text, and
    /// the watcher goes on.
    #[test]
    fn a_failed_log_write_is_said_once() {
        let Ok(full) = std::fs::OpenOptions::new().append(true).open("/dev/full") else {
            return;
        };
        let mut log = Log {
            file: Some(full),
            path: "/dev/full".into(),
            failed: false,
            t0: std::time::Instant::now(),
            poll_owed: None,
        };
        // The real write path: the write fails and is noted.
        log.start("poll");
        assert!(log.failed);
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(log.failure(&e), None, "said a second time");
        log.failed = false;
        let first = log.failure(&e).expect("the first failure is said");
        assert!(
            first.starts_with(
                "pinrun: --thread-log /dev/full: cannot write: No space left on device"
            ),
            "{first}"
        );
    }
}
