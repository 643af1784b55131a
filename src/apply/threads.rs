//! The `--thread-map` watcher: started by [`start`] in the helper process
//! ([`super::helper`]) before pinrun applies anything; once the command is
//! exec'd it scans `/proc/PID/task` every
//! [`POLL_INTERVAL_US`](crate::plan::threads::POLL_INTERVAL_US), asks the
//! plan's rules ([`ThreadMap::decide`]) where each new or renamed thread
//! goes, pins it (`sched_setaffinity(2)` on its TID), reads the affinity
//! back (`sched_getaffinity(2)`), and writes each decision to
//! `--thread-log` as a JSON line. It exits when the command's pidfd says
//! it ended.

use crate::cpuset::CpuSet;
use crate::ffi;
use crate::plan::threads::{POLL_INTERVAL_US, ThreadInfo, ThreadMap};
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

/// `--thread-log`: the file and the time of exec.
struct Log {
    file: Option<std::fs::File>,
    t0: std::time::Instant,
}

/// One decision about a thread.
struct Entry<'a> {
    tid: i32,
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
    /// One decision as a JSON line: `{"t_us", "tid", "name", "order",
    /// "event": "new"|"rename", "rule", "cpus", "read_back", "error"}`;
    /// `t_us` counts from the command's exec.
    fn write(&mut self, e: Entry<'_>) {
        let Some(f) = &mut self.file else { return };
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
        let _ = writeln!(f, "{v}");
    }
}

/// Pins `tid` to `cpus` and reads it back: the affinity the kernel keeps,
/// or why it failed (ESRCH: the thread ended meanwhile).
fn pin(tid: i32, cpus: &CpuSet, possible: &CpuSet) -> Result<CpuSet, String> {
    let bytes = super::mask_bytes(possible, cpus);
    ffi::sched_setaffinity_of(tid, &cpus.to_kernel_bytes(bytes))
        .map_err(|e| format!("sched_setaffinity(TID {tid}, CPUs {cpus}): {e}"))?;
    let got = super::get_affinity_of(tid, possible)
        .map_err(|e| format!("sched_getaffinity(TID {tid}): {e}"))?;
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
    h: super::helper::Helper,
    file: Option<std::fs::File>,
) -> i32 {
    if !h.wait_for_exec() {
        return 0;
    }
    let mut log = Log {
        file,
        t0: std::time::Instant::now(),
    };
    let pid = h.target_pid;
    let mut seen: BTreeMap<i32, Seen> = BTreeMap::new();
    let mut next_order = 1u32;
    let mut each = Vec::new();
    let mut status = 0;
    let interval_ms = (POLL_INTERVAL_US / 1000).max(1) as i32;
    while let Ok(now) = tasks(pid) {
        seen.retain(|tid, _| now.iter().any(|t| t.tid == *tid));
        for t in now {
            let (event, order, prev) = match seen.get(&t.tid) {
                Some(s) if s.name == t.name => continue,
                Some(s) => ("rename", s.order, s.pinned.clone()),
                None if t.tid == pid => ("new", 0, None),
                None => {
                    next_order += 1;
                    ("new", next_order - 1, None)
                }
            };
            let info = ThreadInfo {
                main: t.tid == pid,
                order,
                name: t.name.clone(),
            };
            let decision = map.decide(&info, &mut each);
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
                Some(d) if prev.as_ref() != Some(&d.cpus) => match pin(t.tid, &d.cpus, possible) {
                    Ok(g) => {
                        got = g;
                        e.read_back = Some(&got);
                    }
                    // The thread ended meanwhile.
                    Err(why) if why.contains("No such process") => continue,
                    Err(why) => {
                        // Not eprintln!: a closed stderr must not end the watcher.
                        let _ = writeln!(
                            std::io::stderr(),
                            "pinrun: --thread-map: thread {} ({}): {why}",
                            t.tid,
                            entry.name
                        );
                        e.error = Some(why);
                        status = 1;
                    }
                },
                _ => {}
            }
            log.write(e);
            seen.insert(t.tid, entry);
        }
        if h.ended_within(interval_ms) {
            break;
        }
    }
    status
}

/// Starts the watcher for `map` in the helper process, before anything is
/// applied; `log` (`--thread-log`, opened by the caller) receives its
/// decisions. Returns the write end of the start pipe, which must stay
/// open (close-on-exec) until exec. `Err`: the failing system call.
pub fn start(
    map: &ThreadMap,
    possible: &CpuSet,
    log: Option<std::fs::File>,
) -> std::io::Result<OwnedFd> {
    let keep: Vec<_> = log.iter().map(|f| f.as_fd()).collect();
    super::helper::spawn(&keep, |h| {
        watch(
            map,
            possible,
            h,
            log.as_ref().and_then(|f| f.try_clone().ok()),
        )
    })
}
