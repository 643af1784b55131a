//! A running process and its threads (`--pid PID`, issue 18), read from
//! procfs (`proc(5)`): `/proc/PID/task/` (one directory per thread),
//! each thread's `status` (`Name`, `Cpus_allowed_list`,
//! `Mems_allowed_list`) and `stat` (last CPU, policy, priority, nice,
//! start time), the process's `numa_maps` (per mapping: its memory policy
//! and pages per node), and on the live machine `sched_getattr(2)` for
//! what no file shows (SCHED_DEADLINE runtime/deadline/period, the
//! reset-on-fork flag).

use super::process::{status_field, status_list, status_uids};
use super::root::Root;
use crate::cpuset::{CpuSet, NodeSet};
use std::collections::BTreeMap;

/// One thread of a process as the kernel shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadState {
    /// Thread id (`/proc/PID/task/TID`).
    pub tid: u32,
    /// The thread's `comm` (at most 15 bytes) as `/proc/PID/task/TID/comm`
    /// holds it, unescaped (`status`'s `Name` escapes `\\` and newlines,
    /// `proc_task_name()`, fs/proc/array.c); `Name` when `comm` cannot be
    /// read.
    pub name: String,
    /// `Cpus_allowed_list` of `status`: the thread's CPU affinity.
    pub cpus_allowed: Option<CpuSet>,
    /// `Mems_allowed_list` of `status`: the nodes its cpuset lets it use.
    pub mems_allowed: Option<NodeSet>,
    /// Field 39 of `stat` (`processor`): the CPU it last ran on.
    pub last_cpu: Option<u32>,
    /// Field 41 of `stat`: the `SCHED_*` policy number.
    pub policy: Option<u32>,
    /// Field 40 of `stat`: the real-time priority (0 unless SCHED_FIFO/RR).
    pub rt_priority: Option<u32>,
    /// Field 19 of `stat`: the nice value.
    pub nice: Option<i32>,
    /// Field 22 of `stat`: start time, clock ticks after boot.
    pub start_time: Option<u64>,
    /// Field 3 of `stat`: the state (`R`, `S`, ...; `Z` for a main thread
    /// that exited while other threads run, [`ThreadState::exited`]).
    pub state: Option<char>,
    /// `sched_getattr(2)` (live machine only): SCHED_DEADLINE runtime,
    /// deadline and period in ns, all 0 for other policies.
    pub deadline: Option<(u64, u64, u64)>,
    /// `sched_getattr(2)` (live machine only): `SCHED_FLAG_RESET_ON_FORK`.
    pub reset_on_fork: Option<bool>,
    /// The real and effective uids (the first two fields of `Uid:` in the
    /// thread's `status`): credentials are per thread (`setresuid(2)` by
    /// raw system call changes one thread; glibc's wrapper broadcasts to
    /// every thread), and the kernel checks each thread's own for a
    /// change of its policy or affinity (`check_same_owner()`,
    /// kernel/sched/syscalls.c).
    pub uids: Option<(u32, u32)>,
}

/// The fields of a `stat` line after the command name (field 2, which may
/// hold spaces and `)`: the split is after the last `)`, as `do_task_stat()`
/// in fs/proc/array.c writes `pid (comm) state ...`): element `n - 3` is
/// field `n` of proc(5). `None` without a `)`. This is the crate's one
/// `stat` parser: every reader of `/proc/PID/stat` and
/// `/proc/PID/task/TID/stat` goes through it, [`stat_field`] or
/// [`stat_comm`], so that no line (a dump's included) can panic it.
pub fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    Some(
        stat.get(stat.rfind(')')? + 1..)?
            .split_whitespace()
            .collect(),
    )
}

/// Field 2 of a `stat` line, the command name without its parentheses:
/// from after the first `(` to the last `)`; `None` when either is missing
/// or they are reversed (`999 ) ( x`: not a line the kernel writes).
pub fn stat_comm(stat: &str) -> Option<&str> {
    stat.get(stat.find('(')? + 1..stat.rfind(')')?)
}

/// Field 3 of a `stat` line: the state letter (`R` runnable, `S`
/// sleeping, `Z` zombie, ...).
pub fn stat_state(stat: &str) -> Option<char> {
    stat_fields(stat)?.first()?.chars().next()
}

/// Field `n` (proc(5) numbering, from 3) of a `stat` line, parsed.
pub fn stat_field<T: std::str::FromStr>(stat: &str, n: usize) -> Option<T> {
    stat_fields(stat)?.get(n.checked_sub(3)?)?.parse().ok()
}

/// The thread ids of process `pid`, ascending (`/proc/PID/task`); empty
/// when the process does not exist (or exited).
pub fn task_ids(root: &Root, pid: u32) -> Vec<u32> {
    root.numbered_entries(&format!("/proc/{pid}/task"), "")
}

/// The start time of process (or thread) `pid`: field 22 of
/// `/proc/PID/stat`, in clock ticks after boot; with the pid it names one
/// process across PID reuse. `None` when it does not exist.
pub fn start_time(root: &Root, pid: u32) -> Option<u64> {
    stat_field(&root.read(&format!("/proc/{pid}/stat"))?, 22)
}

/// The start time of whatever task `tid` names now, in any process:
/// field 22 of `/proc/TID/task/TID/stat`, one task's `stat`
/// (`proc_tid_stat()`), where `/proc/TID/stat` of a thread group leader
/// reads the whole group. `None` when no task has the id.
pub fn task_start_time(root: &Root, tid: u32) -> Option<u64> {
    stat_field(&root.read(&format!("/proc/{tid}/task/{tid}/stat"))?, 22)
}

/// The start time of thread `tid` when it is a thread of process `pid`:
/// `/proc/PID/task/TID` exists only for a thread of `pid`'s thread group
/// (`proc_task_lookup()`, fs/proc/base.c), and its `status` `Tgid` is
/// checked too; field 22 of its `stat`. `None` when `tid` is not (or no
/// longer) a thread of `pid`: it exited, or its number now names a thread
/// of another process.
pub fn thread_start_time(root: &Root, pid: u32, tid: u32) -> Option<u64> {
    let dir = format!("/proc/{pid}/task/{tid}");
    let status = root.read(&format!("{dir}/status"))?;
    if status_field(&status, "Tgid")?.trim().parse::<u32>().ok()? != pid {
        return None;
    }
    stat_field(&root.read(&format!("{dir}/stat"))?, 22)
}

/// The kernel's `PF_KTHREAD` bit of a task's flags (include/linux/sched.h),
/// field 9 of `/proc/PID/stat`.
pub const PF_KTHREAD: u64 = 0x0020_0000;

impl ThreadState {
    /// Whether the thread has exited (state `Z` or `X`): a main thread
    /// that called `pthread_exit(3)` stays in `/proc/PID/task` as a zombie
    /// until the last thread exits (`delay_group_leader()`,
    /// kernel/exit.c), and is no fact about the process.
    pub fn exited(&self) -> bool {
        self.state.is_some_and(|c| matches!(c, 'Z' | 'X'))
    }
}

/// What `/proc/PID/stat` says of process `pid` that makes it no target of
/// a change: its state (field 3; `Z` zombie, `X` dead) and whether it is a
/// kernel thread (field 9 has [`PF_KTHREAD`]). A process is its live
/// threads: when the main thread has exited (`Z`) while others run
/// (`pthread_exit(3)` in `main`), the state is that of the first live
/// thread of `/proc/PID/task`, whose TID is returned third (`None`: the
/// main thread's own). `None` when the process is gone.
pub fn kind(root: &Root, pid: u32) -> Option<(char, bool, Option<u32>)> {
    let stat = root.read(&format!("/proc/{pid}/stat"))?;
    let state = stat_state(&stat)?;
    let flags: u64 = stat_field(&stat, 9)?;
    let kthread = flags & PF_KTHREAD != 0;
    if matches!(state, 'Z' | 'X') {
        let live = task_ids(root, pid)
            .into_iter()
            .filter(|&t| t != pid)
            .find_map(|t| {
                let s = stat_state(&root.read(&format!("/proc/{pid}/task/{t}/stat"))?)?;
                (!matches!(s, 'Z' | 'X')).then_some((s, t))
            });
        if let Some((s, t)) = live {
            return Some((s, kthread, Some(t)));
        }
    }
    Some((state, kthread, None))
}

/// The real and effective user ids of process `pid` (the first two
/// fields of `Uid:` in `status`): an unprivileged caller may change its
/// threads only when its own effective uid is one of them
/// (`sched_setattr(2)`, EPERM).
pub fn uids(root: &Root, pid: u32) -> Option<(u32, u32)> {
    uids_of(&root.read(&format!("/proc/{pid}/status"))?)
}

/// The real and effective uids of a `status` text (`Uid:`).
fn uids_of(status: &str) -> Option<(u32, u32)> {
    let mut ids = status_uids(status);
    Some((ids.next()??, ids.next()??))
}

/// The `cgroup` file of thread `tid` of process `pid`
/// (`/proc/PID/task/TID/cgroup`), as the kernel writes it
/// (`proc_cgroup_show()`, kernel/cgroup/cgroup.c: one line per
/// hierarchy). Threads of one process may be in different cgroups: a
/// cgroup v1 hierarchy moves one thread by writing its TID to `tasks`,
/// cgroup v2 a thread of a threaded subtree to `cgroup.threads`; each
/// thread's cpuset then bounds its own affinity
/// (`cpuset_cpus_allowed()`, kernel/cgroup/cpuset.c). `None` when it
/// cannot be read (the thread exited).
pub fn task_cgroup(root: &Root, pid: u32, tid: u32) -> Option<String> {
    root.read(&format!("/proc/{pid}/task/{tid}/cgroup"))
}

/// The `comm` file of a task directory (`/proc/PID` or
/// `/proc/PID/task/TID`), its newline stripped: the name as the kernel
/// keeps it, the same text `--show` and `--thread-map` read.
pub fn comm(root: &Root, dir: &str) -> Option<String> {
    let text = root.read(&format!("{dir}/comm"))?;
    Some(text.strip_suffix('\n').unwrap_or(&text).to_string())
}

/// Thread `tid` of process `pid`; `None` when it exited (its `stat` or
/// `status` is gone). `live`: also ask `sched_getattr(2)` (only when
/// `root` is this machine's `/`).
pub fn read_thread(root: &Root, pid: u32, tid: u32, live: bool) -> Option<ThreadState> {
    let dir = format!("/proc/{pid}/task/{tid}");
    let status = root.read(&format!("{dir}/status"))?;
    let stat = root.read(&format!("{dir}/stat"))?;
    let list = |key| status_list(&status, key);
    let mut t = ThreadState {
        tid,
        name: comm(root, &dir).unwrap_or_else(|| {
            status_field(&status, "Name")
                .unwrap_or_default()
                .to_string()
        }),
        cpus_allowed: list("Cpus_allowed_list"),
        mems_allowed: list("Mems_allowed_list"),
        last_cpu: stat_field(&stat, 39),
        policy: stat_field(&stat, 41),
        rt_priority: stat_field(&stat, 40),
        nice: stat_field(&stat, 19),
        start_time: stat_field(&stat, 22),
        state: stat_state(&stat),
        deadline: None,
        reset_on_fork: None,
        uids: uids_of(&status),
    };
    if live && let Ok(a) = crate::ffi::sched_getattr_of(tid) {
        t.deadline = Some((a.sched_runtime, a.sched_deadline, a.sched_period));
        t.reset_on_fork = Some(a.sched_flags & 1 != 0);
    }
    Some(t)
}

/// Every thread of process `pid`, read in passes over `/proc/PID/task`
/// until a pass finds no thread it had not seen (threads are created while
/// pinrun reads), at most `max_passes`; the threads ascending by TID
/// (those that exited meanwhile left out) and the number of passes made.
pub fn read_threads(
    root: &Root,
    pid: u32,
    live: bool,
    max_passes: usize,
) -> (Vec<ThreadState>, usize) {
    let mut seen: BTreeMap<u32, ThreadState> = BTreeMap::new();
    let mut passes = 0;
    while passes < max_passes.max(1) {
        passes += 1;
        let mut new = false;
        for tid in task_ids(root, pid) {
            if seen.contains_key(&tid) {
                continue;
            }
            if let Some(t) = read_thread(root, pid, tid, live) {
                seen.insert(tid, t);
                new = true;
            }
        }
        if !new {
            break;
        }
    }
    (seen.into_values().collect(), passes)
}

/// A process's `numa_maps` (`proc(5)`, `Documentation/filesystems/proc.rst`)
/// summarised: one line per mapping gives its memory policy (the VMA's, or
/// else the task's own mempolicy) and its pages per node (`N<node>=<pages>`,
/// `kernelpagesize_kB=`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumaMaps {
    /// Mappings per policy as the kernel prints it (`default`, `bind:0-1`,
    /// `interleave:0-1`, `prefer:1`, ...).
    pub policies: BTreeMap<String, usize>,
    /// Resident bytes per node (pages × the mapping's page size).
    pub bytes_per_node: BTreeMap<u32, u64>,
}

/// Parses one `numa_maps` text (see [`NumaMaps`]).
pub fn parse_numa_maps(text: &str) -> NumaMaps {
    let mut m = NumaMaps::default();
    for line in text.lines() {
        add_numa_maps_line(&mut m, line);
    }
    m
}

/// Adds one `numa_maps` line (one mapping) to `m`.
fn add_numa_maps_line(m: &mut NumaMaps, line: &str) {
    let mut words = line.split_whitespace();
    let (Some(_addr), Some(policy)) = (words.next(), words.next()) else {
        return;
    };
    *m.policies.entry(policy.to_string()).or_default() += 1;
    let mut page_kb = 4u64;
    let mut pages: Vec<(u32, u64)> = Vec::new();
    for w in words {
        if let Some(kb) = w.strip_prefix("kernelpagesize_kB=") {
            page_kb = super::parse_count(kb).unwrap_or(4);
        } else if let Some((n, count)) = w.strip_prefix('N').and_then(|r| r.split_once('='))
            && let (Ok(n), Some(count)) = (n.parse(), super::parse_count(count))
        {
            pages.push((n, count));
        }
    }
    for (n, count) in pages {
        let bytes = m.bytes_per_node.entry(n).or_default();
        *bytes = bytes.saturating_add(count.saturating_mul(page_kb.saturating_mul(1024)));
    }
}

/// The longest `numa_maps` line read (64 KiB: a mapping's fields and its
/// file's path, at most `PATH_MAX`, 4096 bytes, are far shorter).
const MAX_NUMA_MAPS_LINE: u64 = 64 << 10;

/// `/proc/PID/numa_maps`, streamed line by line (it grows with the
/// mappings, beyond [`super::root::MAX_FILE`]: never held whole); bytes
/// that are not UTF-8 (a mapped file's name) replaced. `None` when it
/// cannot be read: no NUMA support in the kernel, the caller lacks ptrace
/// read access to the process (`PTRACE_MODE_READ_FSCREDS`, `proc(5)`), or
/// a line is longer than [`MAX_NUMA_MAPS_LINE`].
pub fn read_numa_maps(root: &Root, pid: u32) -> Option<NumaMaps> {
    use std::io::BufRead;
    let file = root.open_regular(&format!("/proc/{pid}/numa_maps"))?;
    let mut reader = std::io::BufReader::new(file);
    let mut m = NumaMaps::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = std::io::Read::take(&mut reader, MAX_NUMA_MAPS_LINE + 1)
            .read_until(b'\n', &mut line)
            .ok()?;
        if read == 0 {
            return Some(m);
        }
        if line.len() as u64 > MAX_NUMA_MAPS_LINE {
            return None;
        }
        add_numa_maps_line(&mut m, &String::from_utf8_lossy(&line));
    }
}

/// A running process named robustly: a pidfd (`pidfd_open(2)`), which
/// names the process itself and not its number, and its start time (field
/// 22 of `/proc/PID/stat`), which with the pid names one process across
/// PID reuse in `/proc`.
#[derive(Debug)]
pub struct Identity {
    /// The process id.
    pub pid: u32,
    /// The pidfd.
    pidfd: std::os::fd::OwnedFd,
    /// Its start time, clock ticks after boot.
    pub start_time: u64,
}

impl Identity {
    /// Opens process `pid`: its pidfd, then its start time. Errors: the
    /// `pidfd_open(2)` error (ESRCH: no such process; EINVAL: `pid` is a
    /// thread that is not a thread-group leader; ENOSYS: before Linux
    /// 5.3), or ESRCH when `/proc/PID/stat` is gone.
    pub fn open(root: &Root, pid: u32) -> std::io::Result<Identity> {
        let pidfd = crate::ffi::pidfd_open(pid)?;
        let start_time =
            start_time(root, pid).ok_or_else(|| std::io::Error::from_raw_os_error(libc::ESRCH))?;
        Ok(Identity {
            pid,
            pidfd,
            start_time,
        })
    }

    /// Whether the process has not exited: `pidfd_send_signal(2)` with
    /// signal 0 on its pidfd, which names the process itself, not its
    /// number (a PID reused by another process is another `struct pid`:
    /// ESRCH). Reading `/proc/PID/stat` again would add nothing and cost
    /// the whole thread group per call (`do_task_stat()` sums every
    /// thread, fs/proc/array.c): `--pid` checks before every thread's
    /// change, and that made it quadratic in the threads (issue 33 item
    /// 12). `_root` is kept for the callers' symmetry with [`start_time`].
    pub fn is_same(&self, _root: &Root) -> bool {
        crate::ffi::pidfd_alive(&self.pidfd)
    }

    /// Tries to take the process's change lock without waiting: an
    /// exclusive `flock(2)` on its pidfd. Since Linux 6.9 a pidfd is a
    /// file of pidfs (fs/pidfs.c), one inode per `struct pid`, which every
    /// pidfd of the process shares whatever PID namespace opened it, and
    /// which lives while a pidfd is open; so every pinrun that changes the
    /// process takes the same lock, and it ends with the last descriptor
    /// of the open file (a helper that inherited it keeps it). Before
    /// Linux 6.9 every pidfd is the one anonymous inode
    /// (`anon_inode_getfile()`): the lock is then one for the whole
    /// machine, never weaker. `Ok(false)`: another open file holds it
    /// (EWOULDBLOCK). Errors: `flock(2)`'s others.
    pub fn try_lock(&self) -> std::io::Result<bool> {
        let file = std::fs::File::from(self.pidfd.try_clone()?);
        match file.try_lock() {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// The pidfd, to name the lock's holders ([`Identity::try_lock`]) or
    /// to hand it, with its lock, to a helper process.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.pidfd.as_fd()
    }
}

/// Whether `root` is this machine's live procfs, whose ids system calls
/// take (see `rt_tasks`).
pub fn is_live(root: &Root) -> bool {
    super::rt_tasks::is_live_proc(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `do_task_stat()` (fs/proc/array.c) writes the comm verbatim between
    /// `(` and `)`: a comm may hold spaces, `(` and `)`.
    #[test]
    fn stat_fields_after_the_last_paren() {
        let stat = "77 (a) b) c) S 1 77 77 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 10";
        assert_eq!(stat_state(stat), Some('S'));
        assert_eq!(stat_field::<u32>(stat, 5), Some(77));
        assert_eq!(stat_field::<u64>(stat, 22), Some(123456));
        assert_eq!(stat_comm(stat), Some("a) b) c"));
        assert_eq!(stat_field::<u64>("garbage", 22), None);
    }

    /// Lines no kernel writes (a hostile dump): no answer, never a panic.
    #[test]
    fn hostile_stat_lines() {
        let huge = format!("1 ({}) R {}", "(".repeat(100_000), "9 ".repeat(100_000));
        for line in [
            "999 ) ( x",
            ")(",
            "(",
            ")",
            "",
            "1 (",
            "1 )",
            "1 () R",
            &huge,
        ] {
            let _ = (stat_fields(line), stat_comm(line), stat_state(line));
            let _ = stat_field::<u64>(line, 22);
        }
        assert_eq!(stat_comm("999 ) ( x"), None);
        assert_eq!(stat_comm("1 () R"), Some(""));
        assert_eq!(stat_state("999 ) ( x"), Some('('));
    }

    /// Lines as the kernel's `show_numa_map()` prints them
    /// (fs/proc/task_mmu.c): policy, then `N<node>=<pages>` and the page size.
    #[test]
    fn numa_maps_summary() {
        let text = "\
55d0c0a00000 default file=/usr/bin/sleep mapped=3 N0=3 kernelpagesize_kB=4
7f0000000000 bind:1 anon=512 dirty=512 N1=512 kernelpagesize_kB=4
7f1000000000 default anon=2 dirty=2 N0=1 N1=1 kernelpagesize_kB=2048
7ffd00000000 default stack anon=3 dirty=3 N0=3 kernelpagesize_kB=4
";
        let m = parse_numa_maps(text);
        assert_eq!(m.policies.get("default"), Some(&3));
        assert_eq!(m.policies.get("bind:1"), Some(&1));
        assert_eq!(m.bytes_per_node.get(&0), Some(&((6 * 4 + 2048) * 1024)));
        assert_eq!(m.bytes_per_node.get(&1), Some(&((512 * 4 + 2048) * 1024)));
    }

    /// `numa_maps` is streamed, never held whole nor cut: a file larger
    /// than `MAX_FILE` (as a process with ~60 000 mappings has) sums every
    /// line; a line longer than `MAX_NUMA_MAPS_LINE` refuses the file; a
    /// mapped file's name that is not UTF-8 does not.
    #[test]
    fn numa_maps_are_streamed_with_each_line_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let maps = dir.path().join("proc/7/numa_maps");
        std::fs::create_dir_all(maps.parent().unwrap()).unwrap();
        let line = b"7f0000000000 bind:1 file=/x\xff anon=1 N1=1 kernelpagesize_kB=4\n";
        let n = (crate::system::root::MAX_FILE as usize) / line.len() + 10;
        std::fs::write(&maps, line.repeat(n)).unwrap();
        let root = Root::new(dir.path());
        let m = read_numa_maps(&root, 7).unwrap();
        assert_eq!(m.policies.get("bind:1"), Some(&n));
        assert_eq!(m.bytes_per_node.get(&1), Some(&(n as u64 * 4096)));
        let mut long = b"7f0000000000 default file=/".to_vec();
        long.resize(MAX_NUMA_MAPS_LINE as usize + 1, b'a');
        std::fs::write(&maps, long).unwrap();
        assert_eq!(read_numa_maps(&root, 7), None);
    }

    /// A thread is a thread of the process whose `task` directory holds it
    /// and whose `Tgid` its status names; a TID reused by another process
    /// (its Tgid another) is not, nor one that exited.
    #[test]
    fn a_thread_belongs_to_its_tgid_only() {
        let dir = tempfile::tempdir().unwrap();
        let put = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let stat = |tid: u32, start: u64| {
            format!("{tid} (w) S 1 1 1 0 -1 4194624 0 0 0 0 0 0 0 0 20 0 2 0 {start} 0 0")
        };
        put("proc/10/task/11/status", "Name:\tw\nTgid:\t10\nPid:\t11\n");
        put("proc/10/task/11/stat", &stat(11, 500));
        // /proc/10/task/12 as a dump could hold it, with another Tgid.
        put("proc/10/task/12/status", "Name:\tx\nTgid:\t12\nPid:\t12\n");
        put("proc/10/task/12/stat", &stat(12, 900));
        put(
            "proc/2/stat",
            "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0",
        );
        put(
            "proc/7/stat",
            "7 (a b) Z 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0",
        );
        let root = Root::new(dir.path());
        assert_eq!(thread_start_time(&root, 10, 11), Some(500));
        assert_eq!(thread_start_time(&root, 10, 12), None);
        assert_eq!(thread_start_time(&root, 10, 13), None);
        // kthreadd's flags as the kernel shows them: PF_KTHREAD set.
        assert_eq!(kind(&root, 2), Some(('S', true, None)));
        assert_eq!(kind(&root, 7), Some(('Z', false, None)));
        assert_eq!(kind(&root, 8), None);
        // A main thread that exited while thread 72 runs: the process is
        // its live thread (pthread_exit(3) in main).
        put(
            "proc/70/stat",
            "70 (m) Z 1 70 70 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 2 0 5 0 0",
        );
        put(
            "proc/70/task/70/stat",
            "70 (m) Z 1 70 70 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 2 0 5 0 0",
        );
        put("proc/70/task/72/stat", &stat(72, 600));
        assert_eq!(kind(&root, 70), Some(('S', false, Some(72))));
    }

    #[test]
    fn stat_fields_after_a_name_with_parentheses() {
        let stat = "42 (a) b (c) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 3 0 12345";
        assert_eq!(stat_field::<i32>(stat, 19), Some(0));
        assert_eq!(stat_field::<u64>(stat, 22), Some(12345));
        assert_eq!(stat_field::<u32>(stat, 20), Some(3));
    }
}

/// One thread of a live process, as the `--thread-map` watcher sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The thread id.
    pub tid: u32,
    /// Its name (`/proc/PID/task/TID/comm`, newline stripped; at most 15
    /// bytes, the kernel's `TASK_COMM_LEN` - 1).
    pub name: String,
}

/// The threads of live process `pid` with their names (`proc(5)`:
/// `/proc/PID/task/TID/comm`), ascending by TID, read from this machine's
/// `/proc` (a watcher follows a running command, never a dump); threads
/// that end while being read are left out. `Err` (NotFound) when
/// `/proc/PID/task` is gone: the process has ended.
pub fn tasks(pid: u32) -> std::io::Result<Vec<Task>> {
    let root = Root::new("/");
    let dir = format!("/proc/{pid}/task");
    if !root.exists(&dir) {
        return Err(std::io::ErrorKind::NotFound.into());
    }
    Ok(task_ids(&root, pid)
        .into_iter()
        .filter_map(|tid| {
            Some(Task {
                tid,
                name: comm(&root, &format!("{dir}/{tid}"))?,
            })
        })
        .collect())
}
