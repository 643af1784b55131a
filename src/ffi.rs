//! The raw syscalls nix lacks or caps at 1024 CPUs: `set_mempolicy(2)`,
//! `sched_setattr(2)`/`sched_getattr(2)`, `sched_getscheduler(2)` (of
//! another process, read-only), and `sched_setaffinity(2)`/
//! `sched_getaffinity(2)` with a dynamically sized mask. The only `unsafe`
//! code in pinrun.

use std::io;

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
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as libc::c_uint;
    // SAFETY: `attr` is a live, writable `SchedAttr` of `size` bytes whose
    // layout matches the kernel's VER0 struct; flags must be 0.
    check(unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
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
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a plain integer argument; no memory is shared with the kernel.
    let policy = check(unsafe { libc::syscall(libc::SYS_sched_getscheduler, pid) })?;
    Ok(policy as i32 & !SCHED_RESET_ON_FORK)
}

/// `sched_setattr(0, attr, 0)` for the calling thread.
pub fn sched_setattr(attr: &SchedAttr) -> io::Result<()> {
    let mut a = *attr;
    a.size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: `a` is a valid VER0 `sched_attr` with `size` set; the kernel
    // only reads it.
    check(unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &a as *const SchedAttr, 0) })?;
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

/// `sched_setaffinity(0, mask.len(), mask)`.
pub fn sched_setaffinity(mask: &[u8]) -> io::Result<()> {
    // SAFETY: `mask` is a readable buffer of `mask.len()` bytes.
    check(unsafe { libc::syscall(libc::SYS_sched_setaffinity, 0, mask.len(), mask.as_ptr()) })?;
    Ok(())
}

/// `sched_getaffinity(0, ...)` with a buffer of `bytes` bytes (a multiple
/// of 8); returns the bytes the kernel wrote. EINVAL means the buffer is
/// smaller than the kernel's `nr_cpu_ids`.
pub fn sched_getaffinity(bytes: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; bytes];
    // SAFETY: `buf` is a writable buffer of `bytes` bytes.
    let n = check(unsafe {
        libc::syscall(libc::SYS_sched_getaffinity, 0, buf.len(), buf.as_mut_ptr())
    })?;
    buf.truncate(n as usize);
    Ok(buf)
}

/// `setpriority(PRIO_PROCESS, 0, nice)`: the nice value, stored even under
/// real-time policies (where `sched_setattr(2)` ignores `sched_nice`).
pub fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: plain integer arguments; no memory is shared with the kernel.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Whether SIGPIPE was ignored when the process started (`trap '' PIPE`,
/// `nohup`-style launchers), before the Rust runtime set it to `SIG_IGN`.
static SIGPIPE_IGNORED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Reads SIGPIPE's disposition into [`SIGPIPE_IGNORED_AT_START`] and which
/// standard descriptors are closed into [`STD_FDS_CLOSED_AT_START`]; run by
/// the C runtime from `.init_array`, before `main` and so before the Rust
/// runtime changes it (the constructor pattern glibc runs for every ELF
/// object, static builds included).
extern "C" fn capture_sigpipe() {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::uninit();
    // SAFETY: a null new action only reads the current one into `old`,
    // which sigaction(2) fills when it returns 0.
    let ignored = unsafe {
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), old.as_mut_ptr()) == 0
            && old.assume_init().sa_sigaction == libc::SIG_IGN
    };
    SIGPIPE_IGNORED_AT_START.store(ignored, std::sync::atomic::Ordering::Relaxed);
    let mut closed = 0u8;
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            closed |= 1 << fd;
        }
    }
    STD_FDS_CLOSED_AT_START.store(closed, std::sync::atomic::Ordering::Relaxed);
}

/// Which of fds 0, 1, 2 (bits 0–2) were closed when the process started;
/// the Rust runtime then opens `/dev/null` on them before `main`.
static STD_FDS_CLOSED_AT_START: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Whether standard descriptor `fd` (0, 1 or 2) was closed when pinrun
/// started (the Rust runtime has since put `/dev/null` there).
pub fn std_fd_closed_at_start(fd: i32) -> bool {
    (0..3).contains(&fd)
        && STD_FDS_CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) & (1 << fd) != 0
}

/// Closes again the standard descriptors that were closed when pinrun
/// started, right before exec, so that the command gets the descriptors
/// the caller gave (`taskset` keeps a closed fd closed), not the runtime's
/// `/dev/null`.
pub fn restore_std_fds() {
    for fd in 0..3 {
        if std_fd_closed_at_start(fd) {
            // SAFETY: the descriptor is the runtime's /dev/null, which
            // nothing in pinrun uses; it is closed only before exec.
            unsafe { libc::close(fd) };
        }
    }
}

#[used]
// SAFETY: `.init_array` holds `extern "C" fn()` pointers the C runtime
// calls once at start; `capture_sigpipe` only reads a signal disposition.
#[unsafe(link_section = ".init_array")]
static CAPTURE_SIGPIPE: extern "C" fn() = capture_sigpipe;

/// Whether the caller started pinrun with SIGPIPE ignored.
pub fn sigpipe_ignored_at_start() -> bool {
    SIGPIPE_IGNORED_AT_START.load(std::sync::atomic::Ordering::Relaxed)
}

/// Gives SIGPIPE back the disposition the caller left before exec: the
/// Rust runtime sets it to `SIG_IGN`, and an ignored signal stays ignored
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

/// Ends the process by SIGPIPE, as a write to a pipe without readers ends
/// other tools (`numactl --hardware | head -1`); the Rust runtime ignores
/// SIGPIPE, so pinrun sees `EPIPE` instead and calls this (unless the
/// caller ignored SIGPIPE: [`sigpipe_ignored_at_start`]). Status 141 if the
/// signal does not end it.
pub fn die_by_sigpipe() -> ! {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: SIG_DFL runs no handler code; the process ends here.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
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

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live, writable timespec; the monotonic clocks
    // always exist on Linux, so the call cannot fail.
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
