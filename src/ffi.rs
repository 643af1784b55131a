//! The raw syscalls nix lacks or caps at 1024 CPUs: `set_mempolicy(2)`,
//! `sched_setattr(2)`/`sched_getattr(2)`, `sched_getscheduler(2)` (of
//! another process, read-only), and `sched_setaffinity(2)`/
//! `sched_getaffinity(2)` with a dynamically sized mask (of this thread or
//! any TID); for the helper process of `--thread-map` (issue 22)
//! `pidfd_open(2)`, `fork(2)`, `_exit(2)`, `close_range(2)`, `poll(2)`,
//! `perf_event_open(2)` with its ring buffer, and `fnmatch(3)`; and
//! `openat(2)`, `read(2)` and `close(2)` without glibc's cancellation
//! wrappers, for the reads of many small files. The only `unsafe` code in
//! pinrun.

use std::io;

/// `openat(2)` of `path` relative to `dir` (flags `O_CLOEXEC` added), made
/// with `syscall(2)`: glibc's `openat`, `read` and `close` are
/// cancellation points, which in a process with threads wrap each call in
/// two atomic operations (`__pthread_enable_asynccancel`/`disable`, about
/// 5 % of a whole-machine `--check` of 10 000 IRQs, each file's three
/// calls). pinrun cancels no thread. `None` for a path with a NUL byte.
pub fn openat_nocancel(
    dir: std::os::fd::BorrowedFd<'_>,
    path: &str,
    flags: libc::c_int,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    // NUL-terminated on the stack (pinrun's relative paths are short).
    let mut buf = [0u8; 256];
    let owned;
    let c_path: &std::ffi::CStr = if path.len() < buf.len() {
        buf[..path.len()].copy_from_slice(path.as_bytes());
        std::ffi::CStr::from_bytes_with_nul(&buf[..=path.len()])
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?
    } else {
        owned = std::ffi::CString::new(path)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        &owned
    };
    let fd = check(unsafe {
        libc::syscall(
            libc::SYS_openat,
            dir.as_raw_fd(),
            c_path.as_ptr(),
            flags | libc::O_CLOEXEC,
            0,
        )
    })?;
    // The kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// `read(2)` through `syscall(2)` (see [`openat_nocancel`]; `EINTR` is
/// returned as the error it is) into the spare capacity of `buf` (not
/// zeroed first), its length grown by the bytes read: the first read of
/// a file, into a page that needs no clearing.
pub fn read_nocancel_spare(
    fd: std::os::fd::BorrowedFd<'_>,
    buf: &mut Vec<u8>,
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let spare = buf.spare_capacity_mut();
    // SAFETY: the kernel writes at most `spare.len()` bytes into memory
    // the vector owns.
    let n = check(unsafe {
        libc::syscall(
            libc::SYS_read,
            fd.as_raw_fd(),
            spare.as_mut_ptr(),
            spare.len(),
        )
    })? as usize;
    // SAFETY: `n <= spare.len()` bytes after the length were written.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// `close(2)` through `syscall(2)` (see [`openat_nocancel`]); as `OwnedFd`'s
/// drop, an error is ignored (the descriptor is released either way).
pub fn close_nocancel(fd: std::os::fd::OwnedFd) {
    use std::os::fd::IntoRawFd;
    let raw = fd.into_raw_fd();
    unsafe {
        libc::syscall(libc::SYS_close, raw);
    }
}

/// `struct sched_attr` as of `SCHED_ATTR_SIZE_VER0` (48 bytes,
/// `include/uapi/linux/sched/types.h`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SchedAttr {
    /// Size of this structure, bytes.
    pub size: u32,
    /// `SCHED_*` policy.
    pub sched_policy: u32,
    /// `SCHED_FLAG_*`.
    pub sched_flags: u64,
    /// Nice value for `SCHED_OTHER`/`SCHED_BATCH`.
    pub sched_nice: i32,
    /// Static priority for `SCHED_FIFO`/`SCHED_RR`.
    pub sched_priority: u32,
    /// `SCHED_DEADLINE` runtime, ns.
    pub sched_runtime: u64,
    /// `SCHED_DEADLINE` deadline, ns.
    pub sched_deadline: u64,
    /// `SCHED_DEADLINE` period, ns.
    pub sched_period: u64,
}

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Eight bytes from `getrandom(2)` (the kernel's CSPRNG, blocking only
/// until it is seeded at boot), as a number.
pub fn random_u64() -> io::Result<u64> {
    let mut buf = [0u8; 8];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[got..].as_mut_ptr().cast(), buf.len() - got, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    Ok(u64::from_ne_bytes(buf))
}

/// `sched_getattr(0, ...)` for the calling thread.
pub fn sched_getattr() -> io::Result<SchedAttr> {
    sched_getattr_of(0)
}

/// `sched_getattr(tid, ...)` (`sched_getattr(2)`): the policy, priority,
/// nice, flags and SCHED_DEADLINE runtime/deadline/period (ns) of thread
/// `tid` (0: the calling thread). Read-only, no privilege needed. Errors:
/// ESRCH when the thread exited; EINVAL for a `tid` above `i32::MAX`.
pub fn sched_getattr_of(tid: u32) -> io::Result<SchedAttr> {
    let tid = pid_arg(tid)?;
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as libc::c_uint;
    // SAFETY: `attr` is a live, writable `SchedAttr` of `size` bytes whose
    // layout matches the kernel's VER0 struct; flags must be 0.
    check(unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid,
            &mut attr as *mut SchedAttr,
            size,
            0,
        )
    })?;
    Ok(attr)
}

/// `SCHED_RESET_ON_FORK` (`include/uapi/linux/sched.h`): the flag
/// `sched_getscheduler(2)` ORs into the policy of a task that has it.
pub const SCHED_RESET_ON_FORK: i32 = 0x4000_0000;

/// `sched_getscheduler(pid)` (`sched_getscheduler(2)`): the scheduling
/// policy of the thread `pid` (a process id names its main thread) as a
/// `SCHED_*` number (0 OTHER, 1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE),
/// with [`SCHED_RESET_ON_FORK`] masked off. Read-only: it changes nothing
/// and needs no privilege.
///
/// The raw syscall, not the libc function: musl's `sched_getscheduler()`
/// always fails with ENOSYS. Errors: ESRCH when no thread `pid` exists
/// (it exited) in the caller's PID namespace; EPERM/EACCES when a security
/// module refuses; EINVAL for a `pid` above `i32::MAX`.
pub fn sched_getscheduler(pid: u32) -> io::Result<i32> {
    let pid = pid_arg(pid)?;
    // SAFETY: a plain integer argument; no memory is shared with the kernel.
    let policy = check(unsafe { libc::syscall(libc::SYS_sched_getscheduler, pid) })?;
    Ok(policy as i32 & !SCHED_RESET_ON_FORK)
}

/// `sched_setattr(0, attr, 0)` for the calling thread.
pub fn sched_setattr(attr: &SchedAttr) -> io::Result<()> {
    sched_setattr_of(0, attr)
}

/// A thread id as the `pid_t` system calls take; EINVAL above `i32::MAX`.
fn pid_arg(tid: u32) -> io::Result<libc::pid_t> {
    libc::pid_t::try_from(tid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// `sched_setattr(tid, attr, 0)` (`sched_setattr(2)`) for thread `tid`
/// (0: the calling thread). Errors as the manual page: EPERM (another
/// user's thread without CAP_SYS_NICE, RLIMIT_RTPRIO), ESRCH (exited),
/// EBUSY (SCHED_DEADLINE admission), EINVAL.
pub fn sched_setattr_of(tid: u32, attr: &SchedAttr) -> io::Result<()> {
    let tid = pid_arg(tid)?;
    let mut a = *attr;
    a.size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: `a` is a valid VER0 `sched_attr` with `size` set; the kernel
    // only reads it.
    check(unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &a as *const SchedAttr, 0) })?;
    Ok(())
}

/// `set_mempolicy(mode, nodemask, maxnode)`. `mask` holds the kernel's
/// `unsigned long` bitmap; `maxnode` is the number of bits the kernel reads
/// plus one (it reads `maxnode - 1` bits).
pub fn set_mempolicy(mode: i32, mask: Option<&[u8]>, maxnode: u64) -> io::Result<()> {
    let ptr = mask.map_or(std::ptr::null(), |m| m.as_ptr());
    if let Some(m) = mask {
        debug_assert!((m.len() as u64) * 8 >= maxnode.saturating_sub(1));
    }
    // SAFETY: `ptr` is null or points at `mask`, at least (maxnode-1) bits
    // long as the kernel requires; the kernel only reads it.
    check(unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) })?;
    Ok(())
}

/// The bits of the node mask [`get_mempolicy`] reads: the kernel refuses
/// (EINVAL) a `maxnode` below its `nr_node_ids`, at most `MAX_NUMNODES`
/// (1 << `CONFIG_NODES_SHIFT`, 10 at most on x86_64).
const GET_MEMPOLICY_NODES: usize = 4096;

/// The calling thread's memory policy (`get_mempolicy(2)` with no flags):
/// its mode with its mode flags (`MPOL_F_STATIC_NODES`,
/// `MPOL_F_RELATIVE_NODES`), the node mask it was given and the `maxnode`
/// to give [`set_mempolicy`] back, which sets the same policy again.
pub fn get_mempolicy() -> io::Result<(i32, Vec<u8>, u64)> {
    let mut mode: libc::c_int = 0;
    let mut mask = vec![0u8; GET_MEMPOLICY_NODES / 8];
    let maxnode = GET_MEMPOLICY_NODES as u64 + 1;
    // SAFETY: `mode` is a live int and `mask` a live, writable buffer of
    // (maxnode-1) bits, as the kernel requires; no address is given
    // (flags 0: the thread's policy).
    check(unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            maxnode,
            std::ptr::null_mut::<libc::c_void>(),
            0,
        )
    })?;
    Ok((mode, mask, maxnode))
}

/// The `set_mempolicy(2)` modes (include/uapi/linux/mempolicy.h).
pub const MPOL_PREFERRED: i32 = 1;
/// `MPOL_BIND`.
pub const MPOL_BIND: i32 = 2;
/// `MPOL_INTERLEAVE`.
pub const MPOL_INTERLEAVE: i32 = 3;
/// `MPOL_LOCAL`.
pub const MPOL_LOCAL: i32 = 4;
/// `MPOL_PREFERRED_MANY` (mainline 5.15).
pub const MPOL_PREFERRED_MANY: i32 = 5;
/// `MPOL_WEIGHTED_INTERLEAVE` (mainline 6.9).
pub const MPOL_WEIGHTED_INTERLEAVE: i32 = 6;

/// `sched_setaffinity(0, mask.len(), mask)`.
pub fn sched_setaffinity(mask: &[u8]) -> io::Result<()> {
    sched_setaffinity_of(0, mask)
}

/// `sched_setaffinity(tid, mask.len(), mask)` (`sched_setaffinity(2)`)
/// for thread `tid` (0: the calling thread). EPERM: another user's thread
/// without CAP_SYS_NICE; ESRCH: it exited.
pub fn sched_setaffinity_of(tid: u32, mask: &[u8]) -> io::Result<()> {
    let tid = pid_arg(tid)?;
    // SAFETY: `mask` is a readable buffer of `mask.len()` bytes.
    check(unsafe { libc::syscall(libc::SYS_sched_setaffinity, tid, mask.len(), mask.as_ptr()) })?;
    Ok(())
}

/// `sched_getaffinity(0, ...)` with a buffer of `bytes` bytes (a multiple
/// of 8); returns the bytes the kernel wrote. EINVAL means the buffer is
/// smaller than the kernel's `nr_cpu_ids`.
pub fn sched_getaffinity(bytes: usize) -> io::Result<Vec<u8>> {
    sched_getaffinity_of(0, bytes)
}

/// `sched_getaffinity(tid, ...)` for thread `tid` (0: the calling
/// thread), as [`sched_getaffinity`]; ESRCH when it exited.
pub fn sched_getaffinity_of(tid: u32, bytes: usize) -> io::Result<Vec<u8>> {
    let tid = pid_arg(tid)?;
    let mut buf = vec![0u8; bytes];
    // SAFETY: `buf` is a writable buffer of `bytes` bytes.
    let n = check(unsafe {
        libc::syscall(
            libc::SYS_sched_getaffinity,
            tid,
            buf.len(),
            buf.as_mut_ptr(),
        )
    })?;
    buf.truncate(n as usize);
    Ok(buf)
}

/// `pidfd_open(pid, 0)` (`pidfd_open(2)`, Linux 5.3): a descriptor that
/// names process `pid` itself, not its number, so that
/// [`pidfd_alive`] later tells whether that very process still exists.
/// Errors: ESRCH (no such process), EINVAL (`pid` names a thread that is
/// not a thread-group leader, or is above `i32::MAX`), ENOSYS (older kernel).
pub fn pidfd_open(pid: u32) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let pid = pid_arg(pid)?;
    // SAFETY: plain integer arguments; the kernel returns a new descriptor.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    // SAFETY: `fd` is a descriptor the kernel just opened for us alone.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether the process a pidfd names has not exited:
/// `pidfd_send_signal(fd, 0, NULL, 0)` (`pidfd_send_signal(2)`; signal 0
/// sends nothing) fails with ESRCH once it has exited, even if its number
/// was given to a new process since. Other errors (EPERM: another user's
/// process) mean it exists.
pub fn pidfd_alive(fd: &std::os::fd::OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor, signal 0 and a null siginfo; nothing is
    // sent and no memory is shared.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// `migrate_pages(pid, maxnode, old_nodes, new_nodes)` (`migrate_pages(2)`):
/// moves the pages of process `pid` on the nodes of `old` to those of
/// `new` (node masks as [`set_mempolicy`]'s, `maxnode` bits + 1). Returns
/// the number of pages that could not be moved. Errors: EPERM (another
/// user's process without CAP_SYS_NICE), ESRCH (no such process), EINVAL
/// (a node outside the target's allowed memory nodes).
pub fn migrate_pages(pid: u32, maxnode: u64, old: &[u8], new: &[u8]) -> io::Result<u64> {
    let pid = pid_arg(pid)?;
    debug_assert!((old.len().min(new.len()) as u64) * 8 >= maxnode.saturating_sub(1));
    // SAFETY: `old` and `new` are readable masks of at least maxnode - 1
    // bits; the kernel only reads them.
    let n = check(unsafe {
        libc::syscall(
            libc::SYS_migrate_pages,
            pid,
            maxnode,
            old.as_ptr(),
            new.as_ptr(),
        )
    })?;
    Ok(n as u64)
}

/// `fnmatch(3)` of `name` against the shell glob `pattern` (`*`, `?`,
/// `[...]`, flags 0); false when either holds a NUL byte.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let (Ok(p), Ok(n)) = (
        std::ffi::CString::new(pattern),
        std::ffi::CString::new(name),
    ) else {
        return false;
    };
    // SAFETY: both are NUL-terminated strings that outlive the call.
    unsafe { libc::fnmatch(p.as_ptr(), n.as_ptr(), 0) == 0 }
}

/// `poll(2)` on one descriptor for `POLLIN` (or hang-up) for up to
/// `timeout_ms` (-1: no limit): whether it is readable.
pub fn poll_readable(fd: std::os::fd::BorrowedFd<'_>, timeout_ms: i32) -> io::Result<bool> {
    Ok(poll_any(&[fd], timeout_ms)?[0] != 0)
}

/// `poll(2)` on `fds` for `POLLIN` for up to `timeout_ms`: each one's
/// `revents` (0: nothing; `POLLIN`, `POLLHUP`, `POLLERR`…).
pub fn poll_any(fds: &[std::os::fd::BorrowedFd<'_>], timeout_ms: i32) -> io::Result<Vec<i16>> {
    use std::os::fd::AsRawFd;
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `p` holds `p.len()` valid pollfd structures for the call.
    let n = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(p.iter().map(|x| x.revents).collect())
}

/// `struct perf_event_attr` as of `PERF_ATTR_SIZE_VER0` (64 bytes,
/// `include/uapi/linux/perf_event.h`).
#[repr(C)]
#[derive(Debug, Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// `perf_event_open(2)` of a software dummy event on the calling thread,
/// counting on `cpu` only, inherited by every thread and process it
/// creates from now on (`inherit`), recording their creation and exit
/// (`task`) and renames (`comm`, which `prctl(PR_SET_NAME)` and
/// `pthread_setname_np(3)` emit), waking a reader at each record (a
/// watermark of 1 byte);
/// user-space only, as `perf_event_paranoid` 2 permits. Close-on-exec.
pub fn perf_task_events(cpu: u32) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    const PERF_TYPE_SOFTWARE: u32 = 1;
    const PERF_COUNT_SW_DUMMY: u64 = 9;
    const INHERIT: u64 = 1 << 1;
    const EXCLUDE_KERNEL: u64 = 1 << 5;
    const EXCLUDE_HV: u64 = 1 << 6;
    const COMM: u64 = 1 << 9;
    const TASK: u64 = 1 << 13;
    // wakeup_events is then wakeup_watermark, in bytes: records other
    // than samples wake a reader only past the watermark (perf_output_begin).
    const WATERMARK: u64 = 1 << 14;
    const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
    let attr = PerfEventAttr {
        kind: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_SW_DUMMY,
        flags: INHERIT | EXCLUDE_KERNEL | EXCLUDE_HV | COMM | TASK | WATERMARK,
        wakeup_events: 1,
        ..Default::default()
    };
    // SAFETY: `attr` is a valid perf_event_attr of the size it states,
    // read by the kernel during the call.
    let fd = check(unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0,
            cpu as libc::c_int,
            -1,
            PERF_FLAG_FD_CLOEXEC,
        )
    })?;
    // SAFETY: the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// The ring buffer of a [`perf_task_events`] descriptor: one metadata
/// page and one data page, mapped read-write so that the kernel waits for
/// [`PerfRing::consume`] instead of overwriting.
#[derive(Debug)]
pub struct PerfRing {
    fd: std::os::fd::OwnedFd,
    map: std::ptr::NonNull<libc::c_void>,
    len: usize,
}

impl PerfRing {
    /// Maps `fd`'s ring buffer.
    pub fn map(fd: std::os::fd::OwnedFd) -> io::Result<Self> {
        use std::os::fd::AsRawFd;
        // SAFETY: sysconf only reads a constant.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = 2 * page;
        // SAFETY: a new shared mapping of the event's buffer; the kernel
        // checks the descriptor and the size (1 + 2^n pages).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let map = std::ptr::NonNull::new(p).ok_or_else(|| io::Error::other("mmap gave null"))?;
        Ok(PerfRing { fd, map, len })
    }

    /// The descriptor, for `poll(2)`.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    /// Marks every record read (`data_tail = data_head`,
    /// `perf_event_mmap_page` at byte 1024 and 1032): the records only wake
    /// the reader, which then scans `/proc`.
    pub fn consume(&self) {
        use std::sync::atomic::{AtomicU64, Ordering};
        // SAFETY: the metadata page is mapped for as long as `self` lives;
        // data_head and data_tail are aligned u64 fields the kernel and
        // this reader share, accessed atomically as perf_event_open(2)
        // prescribes (acquire the head, release the tail).
        unsafe {
            let base = self.map.as_ptr().cast::<u8>();
            let head = &*(base.add(1024) as *const AtomicU64);
            let tail = &*(base.add(1032) as *const AtomicU64);
            tail.store(head.load(Ordering::Acquire), Ordering::Release);
        }
    }
}

impl Drop for PerfRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`.
        unsafe { libc::munmap(self.map.as_ptr(), self.len) };
    }
}

/// `fork(2)`: `Ok(0)` in the child, the child's PID in the parent. Only
/// for a single-threaded caller (pinrun before exec): the child then runs
/// ordinary Rust code safely.
pub fn fork() -> io::Result<i32> {
    // SAFETY: the caller is single-threaded, so no lock can be held by a
    // thread that does not exist in the child.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid)
    }
}

/// Forks a process nobody waits for: the caller forks a child that forks
/// the detached process and exits at once, and the caller reaps that child
/// (forked under the default SIGCHLD, [`default_sigchld`]: with SIGCHLD
/// ignored the kernel would reap it first and `waitpid(2)` fail with
/// ECHILD; the caller's action is back before this returns). So the caller
/// is left with no child and no zombie, and the detached process is
/// re-parented to the nearest subreaper or init (`PR_SET_CHILD_SUBREAPER`,
/// `prctl(2)`). `Ok(true)` in the detached process, `Ok(false)` in the
/// caller. Errors: the first fork's errno, or the intermediate child's
/// failure (its own fork failed: no detached process exists). Only for a
/// single-threaded caller, as [`fork`].
///
/// The detached process starts with [`ENDING_SIGNALS`] blocked (forked
/// under them: `fork(2)` copies the mask) and the caller's mask is back
/// before this returns in the caller: until it leaves the caller's process
/// group (`setsid`, [`loosen_detached`]) a Ctrl-C, a hang-up or
/// `timeout`'s SIGTERM to that group reaches it too, and had ended it
/// before its first instruction could block them (the reply's reader dead
/// with the reply unread, the helper dead with its undo undone). One that
/// arrives meanwhile stays pending: in the caller it is delivered when its
/// mask is back; the detached process unblocks or discards its own
/// ([`release_terminal_signals`]).
pub fn fork_detached() -> io::Result<bool> {
    let saved = defer_ending_signals();
    let sigchld = default_sigchld();
    let forked = fork();
    if let Ok(0) = forked {
        match fork() {
            Ok(0) => return Ok(true),
            Ok(_) => exit_now(0),
            Err(_) => exit_now(1),
        }
    }
    let waited = forked.and_then(|child| {
        let pid = nix::unistd::Pid::from_raw(child);
        loop {
            match nix::sys::wait::waitpid(pid, None) {
                Err(nix::errno::Errno::EINTR) => continue,
                Ok(nix::sys::wait::WaitStatus::Exited(_, 0)) => break Ok(false),
                Ok(_) => break Err(io::Error::other("the intermediate child failed to fork")),
                Err(e) => break Err(e.into()),
            }
        }
    });
    if let Some(s) = sigchld {
        restore_sigchld(s);
    }
    if let Some(m) = saved {
        deliver_ending_signals(m);
    }
    waited
}

/// In a process [`fork_detached`] made, after it left the caller's session
/// (`setsid`, [`loosen_detached`]): discards the SIGINT, SIGHUP and
/// SIGQUIT that reached it while it was still in the caller's process
/// group (they were meant for the caller and its command, which got them
/// too) and unblocks them, so that they end it by their default action
/// from now on, when sent to it. SIGTERM stays blocked (the helper's
/// rule: systemd stopping the unit's cgroup must not end it before its
/// last duty). `sigtimedwait(2)` with a zero timeout takes a pending
/// signal off without delivering it.
pub fn release_terminal_signals() {
    // SAFETY: the set is initialised by sigemptyset(3) before sigaddset(3);
    // sigtimedwait(2) and pthread_sigmask(3) read it; a null siginfo
    // pointer is allowed.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::sigaddset(&mut set, s);
        }
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        while libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) > 0 {}
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Cuts a process [`fork_detached`] just made loose from pinrun's: closes
/// every descriptor from 3 up except `keep` ([`close_fds_except`]), puts
/// stdin and stdout (and stderr too when `stderr` is true) on `/dev/null`
/// (a pipe reader of pinrun's output, `pinrun … | tee` or `$(pinrun …)`,
/// is not kept waiting for it), starts its own session (`setsid(2)`: the
/// terminal's SIGINT, SIGQUIT and SIGHUP go to the command, not to it) and
/// names it `name` (`PR_SET_NAME`, `prctl(2)`: what `ps` and
/// `/proc/PID/comm` show, at most 15 bytes). Every step is best effort: a
/// step that fails leaves that part as it was (the process still works,
/// with pinrun's session); stdio is never left pinrun's ([`stdio_off`]).
pub fn loosen_detached(keep: &[i32], name: &std::ffi::CStr, stderr: bool) {
    close_fds_except(keep);
    stdio_off(c"/dev/null", stderr);
    let _ = nix::unistd::setsid();
    let _ = nix::sys::prctl::set_name(name);
}

/// Puts stdin and stdout (and stderr when `stderr` is true) on `null`,
/// opened read-write; when it cannot be opened (a root without `/dev`, a
/// mount namespace with an empty one), on pipes of this process's own
/// whose other ends are closed: a read sees end of file, a write fails
/// with EPIPE (SIGPIPE is ignored in pinrun and what it forks before exec:
/// [`start`]). Either way no descriptor of pinrun's caller stays on 0-2:
/// one kept there holds `$(pinrun …)` or `pinrun … | tee` open until this
/// process ends (pinrun kept them when `/dev/null` was missing).
fn stdio_off(null: &std::ffi::CStr, stderr: bool) {
    use nix::unistd::{dup2_stderr, dup2_stdin, dup2_stdout, pipe};
    if let Ok(null) = nix::fcntl::open(
        null,
        nix::fcntl::OFlag::O_RDWR,
        nix::sys::stat::Mode::empty(),
    ) {
        let _ = dup2_stdin(&null);
        let _ = dup2_stdout(&null);
        if stderr {
            let _ = dup2_stderr(&null);
        }
        return;
    }
    if let Ok((read, write)) = pipe() {
        drop(write);
        let _ = dup2_stdin(&read);
    }
    if let Ok((read, write)) = pipe() {
        drop(read);
        let _ = dup2_stdout(&write);
        if stderr {
            let _ = dup2_stderr(&write);
        }
    }
}

/// The descriptors an `SCM_RIGHTS` message just gave this process
/// (`unix(7)`: installed in its table by `recvmsg(2)`), owned from now on.
pub fn received_fds(fds: Vec<std::os::fd::RawFd>) -> Vec<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    fds.into_iter()
        // SAFETY: recvmsg(2) installed each descriptor for this process
        // alone; nothing else owns or closes it.
        .map(|fd| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
        .collect()
}

/// `_exit(2)`: ends the process at once, without running atexit handlers
/// or flushing the parent's buffers (a forked child's way out).
pub fn exit_now(status: i32) -> ! {
    // SAFETY: _exit never returns and touches no memory of ours.
    unsafe { libc::_exit(status) }
}

/// Closes every descriptor from 3 up except those in `keep`
/// (`close_range(2)` between them; Linux 5.9+, otherwise one `close(2)`
/// per descriptor of `/proc/self/fd`'s range up to 65536).
pub fn close_fds_except(keep: &[i32]) {
    let mut keep: Vec<i32> = keep.iter().copied().filter(|&f| f > 2).collect();
    keep.sort_unstable();
    let mut from = 3u32;
    let ends = keep
        .iter()
        .map(|&k| k as u32)
        .chain(std::iter::once(u32::MAX));
    for end in ends {
        if end > from {
            let last = end - 1;
            // SAFETY: closes descriptors this process owns; none is in `keep`.
            let r = unsafe { libc::syscall(libc::SYS_close_range, from, last, 0) };
            if r < 0 {
                for fd in from..=last.min(65535) {
                    // SAFETY: as above, one by one.
                    unsafe { libc::close(fd as i32) };
                }
            }
        }
        from = end.saturating_add(1);
    }
}

/// `getpriority(PRIO_PROCESS, tid)` (`getpriority(2)`): thread `tid`'s
/// nice value (0: the calling thread), kept under every policy, unlike
/// the `sched_nice` of `sched_getattr(2)`, which is 0 for SCHED_FIFO,
/// SCHED_RR and SCHED_DEADLINE (`get_params()`, kernel/sched/syscalls.c).
/// -1 is a valid answer, so errno is cleared before the call. ESRCH: no
/// such thread.
pub fn get_nice_of(tid: u32) -> io::Result<i32> {
    let tid = libc::id_t::try_from(pid_arg(tid)?).unwrap_or(0);
    // SAFETY: errno is this thread's; clearing it is what getpriority(2)
    // tells callers to do.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: plain integer arguments; no memory is shared with the kernel.
    let r = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
    let e = io::Error::last_os_error();
    if r == -1 && e.raw_os_error().is_some_and(|n| n != 0) {
        Err(e)
    } else {
        Ok(r)
    }
}

/// `setpriority(PRIO_PROCESS, tid, nice)` (`setpriority(2)`): on Linux
/// `PRIO_PROCESS` with a thread id sets that one thread's nice value.
/// EPERM: another user's thread; EACCES: a lower nice value without
/// CAP_SYS_NICE or RLIMIT_NICE.
pub fn set_nice_of(tid: u32, nice: i32) -> io::Result<()> {
    let tid = libc::id_t::try_from(pid_arg(tid)?).unwrap_or(0);
    // SAFETY: plain integer arguments; no memory is shared with the kernel.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Whether SIGPIPE was ignored when the process started (`trap '' PIPE`,
/// `nohup`-style launchers), before [`start`] set it to `SIG_IGN`.
static SIGPIPE_IGNORED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// What pinrun needs before `main`, in place of the Rust runtime's start
/// (`src/main.rs` is `#![no_main]`, BENCHMARKS.md "Round 4: the quiet
/// launch's fixed costs"); run by the C runtime from `.init_array`, the
/// constructor pattern glibc runs for every ELF object, static builds
/// included. It does what std's `sys::pal::unix::init` does that pinrun
/// relies on, in the same order, and records what it found:
///
/// - fds 0, 1, 2 closed by the caller are opened on `/dev/null` (one
///   `poll(2)`, `fcntl(2)` if `poll` cannot run), so that no file pinrun
///   opens takes a standard descriptor and no note written to stderr lands
///   in one; which were closed goes to [`STD_FDS_CLOSED_AT_START`]
///   ([`restore_std_fds`] closes them again before exec). As std, it aborts
///   when `/dev/null` cannot be opened.
/// - SIGPIPE is set to `SIG_IGN` (a write to a pipe without a reader is
///   then `EPIPE`: [`die_by_sigpipe`] after cleaning up, and no death by a
///   stderr without a reader during a launch); the caller's disposition,
///   read by the same `sigaction(2)`, goes to [`SIGPIPE_IGNORED_AT_START`]
///   ([`reset_sigpipe`] gives it back before exec).
///
/// In a binary with std's own start (the test harnesses), std then finds
/// fds 0-2 open and sets `SIG_IGN` again: the same state.
extern "C" fn start() {
    let closed = open_closed_std_fds();
    STD_FDS_CLOSED_AT_START.store(closed, std::sync::atomic::Ordering::Relaxed);
    // std's `signal(SIGPIPE, SIG_IGN)`: glibc's signal() sets SA_RESTART
    // and blocks the signal in its own handler.
    // SAFETY: an all-zero `sigaction` is a valid value; SIG_IGN runs no
    // code; `old` is filled by sigaction(2) when it returns 0.
    let ignored = unsafe {
        let mut ign: libc::sigaction = std::mem::zeroed();
        ign.sa_sigaction = libc::SIG_IGN;
        ign.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut ign.sa_mask);
        libc::sigaddset(&mut ign.sa_mask, libc::SIGPIPE);
        let mut old = std::mem::MaybeUninit::<libc::sigaction>::uninit();
        if libc::sigaction(libc::SIGPIPE, &ign, old.as_mut_ptr()) != 0 {
            libc::abort();
        }
        old.assume_init().sa_sigaction == libc::SIG_IGN
    };
    SIGPIPE_IGNORED_AT_START.store(ignored, std::sync::atomic::Ordering::Relaxed);
}

/// Opens `/dev/null` on each of fds 0, 1, 2 that is closed (std's
/// `sanitize_standard_fds`); returns which were (bits 0-2).
fn open_closed_std_fds() -> u8 {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    let mut closed = 0u8;
    loop {
        // SAFETY: `fds` is a writable array of 3 `pollfd`; timeout 0.
        if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } != -1 {
            for (i, p) in fds.iter().enumerate() {
                if p.revents & libc::POLLNVAL != 0 {
                    closed |= 1 << i;
                }
            }
            break;
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            // RLIMIT_NOFILE below 3 or no memory: ask each descriptor.
            Some(libc::EINVAL | libc::EAGAIN | libc::ENOMEM) => {
                for fd in 0..3 {
                    // SAFETY: F_GETFD only reads the descriptor's flags.
                    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
                        && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
                    {
                        closed |= 1 << fd;
                    }
                }
                break;
            }
            // SAFETY: abort(3) ends the process.
            _ => unsafe { libc::abort() },
        }
    }
    // The lowest free descriptor is the lowest closed standard one, so
    // each open (or dup of the first) lands on the next closed fd.
    let mut null = -1;
    for fd in 0..3 {
        if closed & (1 << fd) == 0 {
            continue;
        }
        // SAFETY: dup(2) and open(2) of a constant path; the descriptors
        // are the process's standard ones, never closed by pinrun but
        // before exec (restore_std_fds).
        unsafe {
            if null == -1 || libc::dup(null) == -1 {
                null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0);
                if null == -1 {
                    libc::abort();
                }
            }
        }
    }
    closed
}

/// Which of fds 0, 1, 2 (bits 0–2) were closed when the process started;
/// [`start`] then opened `/dev/null` on them.
static STD_FDS_CLOSED_AT_START: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Whether standard descriptor `fd` (0, 1 or 2) was closed when pinrun
/// started ([`start`] has since put `/dev/null` there).
pub fn std_fd_closed_at_start(fd: i32) -> bool {
    (0..3).contains(&fd)
        && STD_FDS_CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) & (1 << fd) != 0
}

/// Closes again the standard descriptors that were closed when pinrun
/// started, right before exec, so that the command gets the descriptors
/// the caller gave (`taskset` keeps a closed fd closed), not [`start`]'s
/// `/dev/null`.
pub fn restore_std_fds() {
    for fd in 0..3 {
        if std_fd_closed_at_start(fd) {
            // SAFETY: the descriptor is start's /dev/null, which nothing
            // in pinrun uses; it is closed only before exec.
            unsafe { libc::close(fd) };
        }
    }
}

#[used]
// SAFETY: `.init_array` holds `extern "C" fn()` pointers the C runtime
// calls once at start; `start` only sets up fds 0-2 and SIGPIPE.
#[unsafe(link_section = ".init_array")]
static START: extern "C" fn() = start;

/// Whether the caller started pinrun with SIGPIPE ignored.
pub fn sigpipe_ignored_at_start() -> bool {
    SIGPIPE_IGNORED_AT_START.load(std::sync::atomic::Ordering::Relaxed)
}

/// Gives SIGPIPE back the disposition the caller left before exec:
/// [`start`] sets it to `SIG_IGN`, and an ignored signal stays ignored
/// across `execve(2)`; so `SIG_DFL` unless it was ignored at start (then
/// the command inherits `SIG_IGN`, as under `taskset`).
pub fn reset_sigpipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    let handler = if sigpipe_ignored_at_start() {
        SigHandler::SigIgn
    } else {
        SigHandler::SigDfl
    };
    // SAFETY: SIG_DFL and SIG_IGN run no handler code; nothing else in
    // pinrun relies on SIGPIPE's disposition after this point.
    let _ = unsafe { signal(Signal::SIGPIPE, handler) };
}

/// Puts `sig` back to its default action (`SIG_DFL`, signal(7)): what
/// a forked process does before it must end by a signal its parent may
/// have ignored. Errors (an invalid signal) are ignored.
pub fn default_disposition(sig: nix::sys::signal::Signal) {
    // SAFETY: SIG_DFL runs no handler code.
    let _ = unsafe { nix::sys::signal::signal(sig, nix::sys::signal::SigHandler::SigDfl) };
}

/// Ends the process by SIGPIPE, as a write to a pipe without readers ends
/// other tools (`numactl --hardware | head -1`); [`start`] ignores
/// SIGPIPE, so pinrun sees `EPIPE` instead and calls this (unless the
/// caller ignored SIGPIPE: [`sigpipe_ignored_at_start`]). Status 141 if the
/// signal does not end it.
pub fn die_by_sigpipe() -> ! {
    default_disposition(nix::sys::signal::Signal::SIGPIPE);
    let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGPIPE);
    std::process::exit(128 + libc::SIGPIPE)
}

/// `clock_gettime(CLOCK_MONOTONIC_RAW)` in nanoseconds: the clock the probe
/// reads when the TSC is not usable (rt-tests oslat's fallback; served by
/// the vDSO, no system call).
#[inline]
pub fn monotonic_raw_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC_RAW)
}

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds: the clock of the
/// probe's absolute wake-up deadlines (cyclictest's default clock).
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` in nanoseconds: the CPU time
/// the calling thread has used (`clock_gettime(2)`).
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live, writable timespec; the monotonic clocks and
    // the calling thread's CPU clock always exist on Linux, so the call
    // cannot fail.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline)`: sleeps
/// until the absolute `deadline_ns` of [`monotonic_ns`], restarted after a
/// signal (cyclictest's wake-up, `clock_nanosleep(2)`).
pub fn sleep_until_monotonic(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; the remainder pointer may be
        // null with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

#[inline]
/// The time-stamp counter (`RDTSC`) on x86-64; `None` elsewhere. Its rate is
/// constant only with `constant_tsc` and `nonstop_tsc`, which the caller checks.
pub fn tsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86-64 CPU and only reads a counter.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// `mlockall(MCL_CURRENT | MCL_FUTURE)`: no page fault while the probe
/// measures (`mlockall(2)`); undone by [`munlockall`].
pub fn mlockall() -> io::Result<()> {
    // SAFETY: plain flags; no memory is passed.
    let r = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `munlockall(2)`: the command starts without pinrun's memory lock.
pub fn munlockall() -> io::Result<()> {
    // SAFETY: no arguments.
    let r = unsafe { libc::munlockall() };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The signals that end a process by default when a user or a supervisor
/// asks it to stop: SIGINT (Ctrl-C), SIGTERM (`timeout`, `kill`), SIGHUP
/// (a closed terminal), SIGQUIT.
const ENDING_SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The set of [`ENDING_SIGNALS`].
fn ending_set() -> libc::sigset_t {
    // SAFETY: sigemptyset(3) initialises the set it is given; sigaddset(3)
    // adds valid signal numbers to an initialised set.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        for s in ENDING_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// The calling thread's signal mask before [`defer_ending_signals`], to
/// give back with [`deliver_ending_signals`].
#[derive(Clone, Copy)]
pub struct SavedMask(libc::sigset_t);

impl std::fmt::Debug for SavedMask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SavedMask")
    }
}

/// Blocks [`ENDING_SIGNALS`] in the calling thread (and the threads it
/// starts after this, which inherit the mask: `pthread_sigmask(3)`), so
/// that one arriving while pinrun holds something to clean up (the IRQ
/// affinities `--steer-irqs` changed) stays pending instead of ending the process; an
/// ignored one is still discarded. Returns the previous mask, `None` if
/// `pthread_sigmask` failed (nothing changed).
pub fn defer_ending_signals() -> Option<SavedMask> {
    let set = ending_set();
    // SAFETY: `set` is initialised; `old` is filled when the call returns 0.
    unsafe {
        let mut old = std::mem::zeroed::<libc::sigset_t>();
        (libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) == 0).then_some(SavedMask(old))
    }
}

/// Gives the calling thread back the mask [`defer_ending_signals`] saved:
/// a signal that arrived meanwhile is delivered now, and ends the process
/// by its default action as it would have at its arrival.
pub fn deliver_ending_signals(saved: SavedMask) {
    // SAFETY: `saved.0` is the mask pthread_sigmask returned.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &saved.0, std::ptr::null_mut());
    }
}

/// SIGCHLD's disposition before [`default_sigchld`], to give back with
/// [`restore_sigchld`].
pub struct SavedAction(libc::sigaction);

/// Sets SIGCHLD to `SIG_DFL` (no flags) and returns the caller's action:
/// with SIGCHLD ignored or `SA_NOCLDWAIT` the kernel reaps children at once
/// and `waitpid(2)` fails with ECHILD (`sigaction(2)`, "POSIX.1-2001
/// specifies that if the disposition of SIGCHLD is set to SIG_IGN or the
/// SA_NOCLDWAIT flag is set…"), so a child pinrun must wait for is forked
/// under the default. `None` if sigaction failed (nothing changed).
pub fn default_sigchld() -> Option<SavedAction> {
    // SAFETY: an all-zero sigaction with SIG_DFL and an empty mask is
    // valid; `old` is filled when the call returns 0.
    unsafe {
        let mut dfl = std::mem::zeroed::<libc::sigaction>();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut dfl.sa_mask);
        let mut old = std::mem::zeroed::<libc::sigaction>();
        (libc::sigaction(libc::SIGCHLD, &dfl, &mut old) == 0).then_some(SavedAction(old))
    }
}

/// Gives SIGCHLD back the action [`default_sigchld`] saved (the command
/// exec'd later inherits an ignored SIGCHLD as under taskset).
pub fn restore_sigchld(saved: SavedAction) {
    // SAFETY: `saved.0` is the action sigaction(2) returned.
    unsafe {
        libc::sigaction(libc::SIGCHLD, &saved.0, std::ptr::null_mut());
    }
}

/// `v` in decimal ASCII digits, written at the end of `buf` (no
/// allocation: a path per IRQ on 10 000-IRQ machines, a message when
/// memory has run out); the slice of `buf` holding them.
pub fn decimal(buf: &mut [u8; 20], v: u64) -> &[u8] {
    let (mut i, mut v) = (buf.len(), v);
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// The global allocator of the `pinrun` binary (a `static` in main.rs,
/// process-wide by nature, and holding no state): the system's `malloc`,
/// and, when it fails (`ulimit -v` too small, the machine out of memory),
/// `pinrun: allocating N bytes: out of memory` with a `hint:` line on
/// stderr and exit 125, where Rust's default handler printed "memory
/// allocation of N bytes failed" and aborted (SIGABRT, exit 134). The
/// message is written from a stack buffer: nothing more is allocated.
/// Nothing is left to clean up: a `--sysroot` archive is read into
/// memory, not unpacked on disk.
pub struct ExitOnOom;

impl ExitOnOom {
    #[cold]
    fn out_of_memory(&self, size: usize) -> ! {
        let mut buf = [0u8; 160];
        let mut n = 0;
        let mut put = |b: &[u8]| {
            let k = b.len().min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&b[..k]);
            n += k;
        };
        put(b"pinrun: allocating ");
        put(decimal(&mut [0; 20], size as u64));
        put(b" bytes: out of memory\nhint: raise the address-space limit (ulimit -v) or free memory, and run again\n");
        // SAFETY: write(2) of our own stack buffer to fd 2; _exit never
        // returns.
        unsafe {
            libc::write(2, buf.as_ptr().cast(), n);
            libc::_exit(125)
        }
    }
}

// SAFETY: every call is passed to `std::alloc::System` unchanged; a null
// result never returns to the caller (the process ends).
unsafe impl std::alloc::GlobalAlloc for ExitOnOom {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            self.out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as alloc.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            self.out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            self.out_of_memory(new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each of [`ENDING_SIGNALS`] is blocked in the calling thread.
    fn ending_blocked() -> [bool; 4] {
        // SAFETY: a null new set only reads the mask into `m`.
        let m = unsafe {
            let mut m = std::mem::zeroed::<libc::sigset_t>();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut m);
            m
        };
        // SAFETY: `m` is a mask pthread_sigmask filled.
        ENDING_SIGNALS.map(|s| unsafe { libc::sigismember(&m, s) } == 1)
    }

    /// Break test: the reply's reader and the helper blocked the ending
    /// signals with their first instructions after the fork, still in
    /// pinrun's process group: a Ctrl-C to the group in between (after
    /// pinrun had sent `setup`) ended the reader too, and irqbalance's reply
    /// found no reader (11 of 200 SIGINTs to a client's group right after
    /// its command arrived, 1 of 200 on one CPU; 0 of 400 since). The
    /// detached process is forked with them blocked, and the caller's
    /// mask is as it was.
    #[test]
    fn a_detached_process_is_born_with_the_ending_signals_blocked() {
        let before = ending_blocked();
        let (r, w) = nix::unistd::pipe().unwrap();
        if fork_detached().unwrap() {
            let got = ending_blocked().map(u8::from);
            let _ = nix::unistd::write(&w, &got);
            exit_now(0);
        }
        drop(w);
        let mut got = [9u8; 5];
        let n = nix::unistd::read(&r, &mut got).unwrap();
        assert_eq!(&got[..n], &[1, 1, 1, 1], "SIGINT, SIGTERM, SIGHUP, SIGQUIT");
        assert_eq!(ending_blocked(), before);
    }

    /// Break test: with no `/dev/null` to open, a detached process kept
    /// pinrun's stdin, stdout and stderr (best effort: the step was
    /// skipped), so `$(pinrun …)` waited for it. Now they are pipes of its
    /// own: reading stdin sees end of file, writing stdout or stderr
    /// fails with EPIPE, and none is the caller's (`/proc/self/fd/N`).
    /// With `/dev/null`, all three are it.
    #[test]
    fn detached_stdio_is_never_the_callers() {
        let link = |fd: i32| {
            std::fs::read_link(format!("/proc/self/fd/{fd}"))
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let callers = [0, 1, 2].map(link);
        for (null, pipes) in [(c"/nonexistent/null", true), (c"/dev/null", false)] {
            let (r, w) = nix::unistd::pipe().unwrap();
            let child = match fork().unwrap() {
                0 => {
                    stdio_off(null, true);
                    let mut report = [0u8; 6];
                    for fd in 0..3 {
                        let l = link(fd);
                        let expected = if pipes {
                            l.starts_with("pipe:[") && !callers.contains(&l)
                        } else {
                            l == "/dev/null"
                        };
                        report[fd as usize] = u8::from(expected);
                    }
                    let mut buf = [0u8; 1];
                    // SAFETY: fds 0-2 are this process's; `buf` is writable.
                    report[3] = u8::from(unsafe { libc::read(0, buf.as_mut_ptr().cast(), 1) } == 0);
                    for (i, fd) in [(4, 1), (5, 2)] {
                        // SAFETY: as above; one byte of `buf` is read.
                        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), 1) };
                        let e = io::Error::last_os_error().raw_os_error();
                        report[i] = u8::from(if pipes {
                            n < 0 && e == Some(libc::EPIPE)
                        } else {
                            n == 1
                        });
                    }
                    let _ = nix::unistd::write(&w, &report);
                    exit_now(0)
                }
                pid => nix::unistd::Pid::from_raw(pid),
            };
            drop(w);
            let mut got = [9u8; 7];
            let n = nix::unistd::read(&r, &mut got).unwrap();
            let _ = nix::sys::wait::waitpid(child, None);
            assert_eq!(
                &got[..n],
                &[1; 6],
                "{null:?}: fds 0-2, read EOF, write 1 and 2"
            );
        }
    }

    /// What arrived for the caller's group before the detached process
    /// left it is discarded, not delivered, by [`release_terminal_signals`];
    /// SIGINT, SIGHUP and SIGQUIT are unblocked, SIGTERM stays blocked.
    #[test]
    fn released_terminal_signals_are_discarded_then_unblocked() {
        let (r, w) = nix::unistd::pipe().unwrap();
        let child = match fork().unwrap() {
            0 => {
                let _ = defer_ending_signals();
                // SAFETY: raise(3) of blocked signals: they stay pending.
                unsafe {
                    libc::raise(libc::SIGINT);
                    libc::raise(libc::SIGHUP);
                    libc::raise(libc::SIGQUIT);
                }
                release_terminal_signals();
                let got = ending_blocked().map(u8::from);
                let _ = nix::unistd::write(&w, &got);
                exit_now(0)
            }
            pid => nix::unistd::Pid::from_raw(pid),
        };
        drop(w);
        let mut got = [9u8; 5];
        let n = nix::unistd::read(&r, &mut got).unwrap();
        assert_eq!(
            nix::sys::wait::waitpid(child, None).unwrap(),
            nix::sys::wait::WaitStatus::Exited(child, 0)
        );
        assert_eq!(&got[..n], &[0, 1, 0, 0], "SIGINT, SIGTERM, SIGHUP, SIGQUIT");
    }
}
