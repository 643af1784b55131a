//! `--pid`'s undo helper (issue 33): what pinrun changes in another
//! process outlives pinrun, so a helper process armed before the first
//! thread is changed ([`arm`]) keeps each thread's earlier state and puts
//! it back when pinrun ends, SIGKILL included, before it said the work was
//! settled ([`Undo::settle`]: verified, or put back by pinrun itself).
//!
//! The helper is [`crate::apply::helper::spawn`]'s (its own session, SIGTERM
//! blocked, pinrun's pidfd and socket). It also holds one end of a
//! stream socket (`socketpair(2)`) whose other end only pinrun holds:
//! before changing a thread, pinrun writes the thread's identity and
//! state to it ([`Undo::record`], one `send(2)` of one line, which the
//! kernel has queued to the helper when it returns), so a thread is never
//! changed before the helper could put it back. The helper reads the
//! stream line by line to its end (pinrun exited or died), each line at
//! most the longest a record can be ([`max_line`]: a longer one is
//! refused, named and counted, never held), then looks whether pinrun
//! said [`crate::apply::helper::settled`]; if not, it restores each recorded
//! thread, newest first, to the state recorded first for it
//! ([`crate::apply::tid::restore`]: only what differs is set), and only while
//! its TID still names a thread of the process with the recorded start
//! time (`/proc/PID/task/TID`: a TID reused by another thread or process
//! is never touched), removes the claim record written for the change
//! (`--exclusive`, [`Undo::claim`]), and says on the stderr it inherited
//! what it did.

use crate::apply::tid::{Saved, restore};
use crate::cpuset::CpuSet;
use crate::ffi::SchedAttr;
use std::io::{self, BufRead, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;

/// The armed undo of a `--pid` change: pinrun's ends of the helper's
/// socket and record stream.
#[derive(Debug)]
pub struct Undo {
    records: UnixStream,
    started: OwnedFd,
}

/// Starts the helper that undoes the changes of process `pid`'s threads
/// if pinrun ends before [`Undo::settle`] (`possible`: the possible CPUs,
/// the affinity masks' size). `lock`, the process's pidfd that holds its
/// change lock, stays open in the helper until it ends: a change by
/// another pinrun waits for the helper's undo too. Errors: the failing
/// system call's (`socketpair(2)`, `pidfd_open(2)`, `fork(2)`).
pub fn arm(pid: u32, possible: &CpuSet, lock: BorrowedFd) -> io::Result<Undo> {
    let (records, theirs) = UnixStream::pair()?;
    let possible = possible.clone();
    let keep = [theirs.as_raw_fd(), lock.as_raw_fd()];
    let started = crate::apply::helper::spawn(&keep, move |h| {
        // To the end of the stream: pinrun exited or died (it alone holds
        // the other end).
        let max = max_line(&possible);
        let stream = read_stream(io::BufReader::new(&theirs), max);
        if h.was_settled() {
            return 0;
        }
        let (line, ok) = undo(pid, &stream, max, &possible);
        if let Some(line) = line {
            crate::output::to_stderr(&line);
        }
        i32::from(!ok)
    })?;
    // pinrun's copy of the helper's end went with the closure.
    Ok(Undo { records, started })
}

impl Undo {
    /// Hands thread `saved.tid`'s state, with its start time `start_time`
    /// (its identity), to the helper; call before changing the thread.
    /// Errors: the write's (the helper is gone: the thread must not be
    /// changed).
    pub fn record(&self, saved: &Saved, start_time: u64) -> io::Result<()> {
        (&self.records).write_all(encode(saved, start_time).as_bytes())
    }

    /// Hands the path of the claim record written for this change
    /// (`--exclusive`) to the helper, which removes it, under the state
    /// directory's lock, if pinrun ends before [`Undo::settle`]: a claim
    /// for a placement the threads were put back from claims nothing.
    /// Errors: the write's; a path with a line feed is refused
    /// (`InvalidInput`).
    pub fn claim(&self, path: &std::path::Path) -> io::Result<()> {
        let text = path.to_str().filter(|t| !t.contains('\n')).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a claim path with a line feed")
        })?;
        (&self.records).write_all(format!("{CLAIM}{text}\n").as_bytes())
    }

    /// Tells the helper the work is settled (verified, or restored by
    /// pinrun): it ends without touching anything. Errors: the send's.
    pub fn settle(self) -> io::Result<()> {
        crate::apply::helper::settled(&self.started)
    }
}

/// The start of the line naming the claim record ([`Undo::claim`]).
const CLAIM: &str = "claim ";

/// Removes the claim record at `path` ([`Undo::claim`]) under its state
/// directory's exclusive lock; false when it could not.
fn remove_claim(path: &str) -> bool {
    let path = std::path::Path::new(path);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return false;
    };
    let Ok(Some(mut d)) = crate::system::state_dir::StateDir::open(dir, false) else {
        return false;
    };
    if d.lock(crate::system::state_dir::LockKind::Exclusive)
        .is_err()
    {
        return false;
    }
    d.remove(name);
    true
}

/// The longest path a claim line carries, bytes: `PATH_MAX` (4096,
/// include/uapi/linux/limits.h) less its NUL.
const PATH_MAX: usize = 4095;

/// The longest record line without its CPU list, bytes: ten numbers at
/// their widest (`TID` and the three `u32`s 10 digits, `START`, `FLAGS`,
/// `RUNTIME`, `DEADLINE` and `PERIOD` 20, the two nice values 11 with
/// their sign: 152), ten spaces and the line feed.
const RECORD_FIXED: usize = 163;

/// The longest line of the stream, bytes, line feed included: a record
/// whose CPU list is the longest a subset of `possible` can have (each
/// CPU at most its digits and one separator, ranges only shorten it),
/// or a claim line with a path of [`PATH_MAX`] bytes. pinrun writes no
/// longer line; the helper refuses one ([`read_stream`]).
fn max_line(possible: &CpuSet) -> usize {
    let list: usize = possible.iter().map(|c| c.to_string().len() + 1).sum();
    (RECORD_FIXED + list).max(CLAIM.len() + PATH_MAX + 1)
}

/// What the helper read of the stream ([`read_stream`]).
#[derive(Debug, Default, PartialEq)]
struct Stream {
    /// Each thread once, with the state recorded first for it, in the
    /// order of their first record.
    records: Vec<(Saved, u64)>,
    /// The claim record's path ([`Undo::claim`]), the first named.
    claim: Option<String>,
    /// Lines longer than [`max_line`], refused unread.
    refused: usize,
}

/// Reads the stream `r` to its end, one line at a time, each at most
/// `max` bytes with its line feed ([`max_line`]): a longer line is
/// refused (counted in [`Stream::refused`], skipped to its end, never
/// held), a line cut short by the end (pinrun died while writing it:
/// that thread was not changed yet) or that is no record is left out.
/// The memory held is the records', one per thread. A read error ends
/// the stream as its end does.
fn read_stream(mut r: impl BufRead, max: usize) -> Stream {
    let mut s = Stream::default();
    let mut seen = std::collections::HashSet::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut r).take(max as u64).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return s,
            Ok(_) => {}
        }
        let Some(text) = line.strip_suffix(b"\n") else {
            if line.len() < max || !skip_line(&mut r) {
                return s;
            }
            s.refused += 1;
            continue;
        };
        let text = String::from_utf8_lossy(text);
        if let Some(path) = text.strip_prefix(CLAIM) {
            s.claim.get_or_insert_with(|| path.to_string());
        } else if let Some((saved, start)) = decode(&text)
            && seen.insert(saved.tid)
        {
            s.records.push((saved, start));
        }
    }
}

/// Reads `r` past the next line feed, a buffer at a time; false when the
/// stream ends first.
fn skip_line(r: &mut impl BufRead) -> bool {
    loop {
        let (done, used) = match r.fill_buf() {
            Ok([]) | Err(_) => return false,
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (true, i + 1),
                None => (false, buf.len()),
            },
        };
        r.consume(used);
        if done {
            return true;
        }
    }
}

/// One record: `TID START NICE POLICY FLAGS ATTR_NICE PRIORITY RUNTIME
/// DEADLINE PERIOD CPULIST`, a line.
fn encode(s: &Saved, start_time: u64) -> String {
    let a = &s.attr;
    format!(
        "{} {start_time} {} {} {} {} {} {} {} {} {}\n",
        s.tid,
        s.nice,
        a.sched_policy,
        a.sched_flags,
        a.sched_nice,
        a.sched_priority,
        a.sched_runtime,
        a.sched_deadline,
        a.sched_period,
        s.affinity.to_list()
    )
}

/// [`encode`]'s line read back; `None` for a line cut short (pinrun died
/// while writing it: that thread was not changed yet).
fn decode(line: &str) -> Option<(Saved, u64)> {
    let f: Vec<&str> = line.split(' ').collect();
    if f.len() != 11 {
        return None;
    }
    let n = |i: usize| f[i].parse::<u64>().ok();
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: u32::try_from(n(3)?).ok()?,
        sched_flags: n(4)?,
        sched_nice: f[5].parse().ok()?,
        sched_priority: u32::try_from(n(6)?).ok()?,
        sched_runtime: n(7)?,
        sched_deadline: n(8)?,
        sched_period: n(9)?,
    };
    let saved = Saved {
        tid: u32::try_from(n(0)?).ok()?,
        affinity: CpuSet::parse(f[10]).ok()?,
        attr,
        nice: f[2].parse().ok()?,
    };
    Some((saved, n(1)?))
}

/// Restores the threads of process `pid` that `stream` records, newest
/// first, each while `/proc/PID/task/TID` has its recorded start time.
/// Returns the line to print (`None`: nothing was recorded) and whether
/// every thread still there was restored (never when a line over `max`
/// bytes was refused: the thread it was for is not known).
fn undo(pid: u32, stream: &Stream, max: usize, possible: &CpuSet) -> (Option<String>, bool) {
    let recs = &stream.records;
    let claim = stream
        .claim
        .as_deref()
        .map(|path| (path, remove_claim(path)));
    let refused_words = match stream.refused {
        0 => String::new(),
        n => format!(
            "; {} of more than {max} bytes (the longest a thread's record or the claim's path can be) refused: what they said was not undone",
            crate::words::count(n, "line")
        ),
    };
    let claim_words = match claim {
        None => String::new(),
        Some((_, true)) => "; its claim record was removed".into(),
        Some((path, false)) => {
            format!(
                "; its claim record {path} could not be removed (the next launch drops it once the process ends)"
            )
        }
    };
    if recs.is_empty() {
        let line = (claim.is_some() || stream.refused > 0).then(|| {
            format!(
                "pinrun: --pid {pid}: pinrun ended before changing any thread{claim_words}{refused_words}\n"
            )
        });
        return (line, claim.is_none_or(|(_, ok)| ok) && stream.refused == 0);
    }
    let Ok(root) = crate::system::Root::machine(std::path::Path::new("/")) else {
        return (None, false);
    };
    let (mut put_back, mut gone) = (0, 0);
    let mut other = Vec::new();
    let mut failed = Vec::new();
    for (saved, start) in recs.iter().rev() {
        let tid = saved.tid;
        match crate::system::threads::thread_start_time(&root, pid, tid) {
            Some(now) if now == *start => match restore(saved, possible) {
                Ok(()) => put_back += 1,
                Err(e) if e.errno() == Some(nix::errno::Errno::ESRCH) => gone += 1,
                Err(e) => failed.push(format!("thread {tid}: {}", e.message)),
            },
            // A TID that names another task now: never touched.
            None if crate::system::threads::task_start_time(&root, tid).is_some() => {
                other.push(tid.to_string())
            }
            Some(_) => other.push(tid.to_string()),
            None => gone += 1,
        }
    }
    let mut line = format!(
        "pinrun: --pid {pid}: pinrun ended before its change of the threads was settled (killed?); its undo helper put back {}",
        crate::words::count(put_back, "thread")
    );
    if gone > 0 {
        line.push_str(&format!(", {gone} had exited"));
    }
    if !other.is_empty() {
        line.push_str(&format!(
            "; {} {}: the TID names another thread now, not touched",
            crate::words::noun(other.len(), "thread"),
            other.join(",")
        ));
    }
    if !failed.is_empty() {
        line.push_str(&format!("; NOT restored: {}", failed.join("; ")));
    }
    line.push_str(&claim_words);
    line.push_str(&refused_words);
    line.push('\n');
    (Some(line), failed.is_empty() && stream.refused == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(tid: u32, cpus: &str, policy: u32, prio: u32, nice: i32) -> Saved {
        Saved {
            tid,
            affinity: CpuSet::parse(cpus).unwrap(),
            attr: SchedAttr {
                size: 48,
                sched_policy: policy,
                sched_flags: 1,
                sched_nice: nice,
                sched_priority: prio,
                sched_runtime: 7,
                sched_deadline: 8,
                sched_period: 9,
            },
            nice,
        }
    }

    /// A record reads back as written (every attribute, the affinity as
    /// a list); a line cut short is no record; a thread recorded twice
    /// keeps its first (earliest) state.
    #[test]
    fn records_read_back_and_keep_the_first_state() {
        let a = saved(41, "0-3,8", 2, 5, -3);
        let b = saved(42, "1", 0, 0, 4);
        let a2 = saved(41, "2", 1, 9, 0);
        let full = format!("{}{}{}", encode(&a, 100), encode(&b, 101), encode(&a2, 100));
        let cut = &encode(&b, 7)[..12];
        let got = read_stream(format!("{full}{cut}").as_bytes(), 4096);
        assert_eq!(got.records, vec![(a, 100), (b, 101)]);
        assert_eq!((got.claim, got.refused), (None, 0));
        assert_eq!(decode("41 100 0 0"), None);
    }

    /// The stream is read a line at a time, each at most [`max_line`]:
    /// the longest record pinrun can write (every field at its widest,
    /// the affinity every other CPU of 8192 possible ones, as `NR_CPUS`
    /// = 8192 kernels have) and the longest claim path (`PATH_MAX`) fit
    /// it exactly or within it; a line one byte longer is refused,
    /// skipped to its end and named, the records around it kept.
    #[test]
    fn a_line_longer_than_any_record_is_refused_naming_the_bound() {
        let possible = CpuSet::parse("0-8191").unwrap();
        let max = max_line(&possible);
        let evens: Vec<String> = (0..8192).step_by(2).map(|c| c.to_string()).collect();
        let widest = Saved {
            tid: u32::MAX,
            affinity: CpuSet::parse(&evens.join(",")).unwrap(),
            attr: SchedAttr {
                size: 48,
                sched_policy: u32::MAX,
                sched_flags: u64::MAX,
                sched_nice: i32::MIN,
                sched_priority: u32::MAX,
                sched_runtime: u64::MAX,
                sched_deadline: u64::MAX,
                sched_period: u64::MAX,
            },
            nice: i32::MIN,
        };
        let longest = encode(&widest, u64::MAX);
        assert_eq!(decode(longest.trim_end()), Some((widest.clone(), u64::MAX)));
        assert!(longest.len() <= max, "{} > {max}", longest.len());
        // Each CPU at most its digits and a separator: 0-9 take 2 bytes,
        // 10-99 3, 100-999 4, 1000-8191 5; with the fixed part, 163.
        assert_eq!(max, 163 + 10 * 2 + 90 * 3 + 900 * 4 + 7192 * 5);
        let path = format!("/{}", "p".repeat(PATH_MAX - 1));
        let claim_line = format!("{CLAIM}{path}\n");
        assert!(claim_line.len() <= max);

        let a = saved(41, "0-3,8", 2, 5, -3);
        let b = saved(42, "1", 0, 0, 4);
        let over = format!("{}\n", "9".repeat(max));
        let at_most = format!("{}\n", "9".repeat(max - 1));
        let text = format!(
            "{}{over}{}{at_most}{claim_line}{over}",
            encode(&a, 100),
            encode(&b, 101)
        );
        let got = read_stream(io::BufReader::with_capacity(64, text.as_bytes()), max);
        assert_eq!(
            got,
            Stream {
                records: vec![(a, 100), (b, 101)],
                claim: Some(path),
                refused: 2,
            }
        );
        // Nothing recorded but a refused line: said, and not "all undone".
        let refused = Stream {
            refused: 1,
            ..Stream::default()
        };
        let (line, ok) = undo(7, &refused, max, &possible);
        assert_eq!(
            line.as_deref(),
            Some(
                format!(
                    "pinrun: --pid 7: pinrun ended before changing any thread; 1 line of more than {max} bytes (the longest a thread's record or the claim's path can be) refused: what they said was not undone\n"
                )
                .as_str()
            )
        );
        assert!(!ok);
    }
}
