//! The noise probe (`--probe`, issue 20): after the plan and the checks,
//! before anything is applied to pinrun itself, one thread per probed CPU,
//! each with exactly the plan's memory policy, scheduling policy and
//! priority and pinned to its CPU ([`crate::apply::apply`] on the thread),
//! measures what the CPU does to a program (the modes of
//! [`crate::noise`]). Around it, the kernel's counters are read twice
//! ([`crate::system::noise::snapshot`]) to attribute the noise.
//!
//! What it changes, and undoes before returning: `mlockall(2)` for the
//! probe only (no page fault in the measurement; `munlockall(2)` after),
//! and its threads (joined: the command starts with one thread). It
//! touches PM QoS (`/dev/cpu_dma_latency`) only when asked
//! (`--probe-dma-latency`, held during the probe and closed before exec),
//! so by default the idle states it sees are the ones the command will
//! get. A watchdog thread, on a CPU outside the
//! probed ones when there is one, stops the probe at twice its duration
//! and pre-heat, at least one second after them ([`watchdog_limit`]),
//! moves a thread held off its CPU to where it can run and return, and,
//! should a probe thread still not return a second later, ends pinrun
//! (exit 125) rather than exec the command beside a thread it lost.

use super::{Readings, Sampled};
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::ffi;
use crate::noise::{
    DmaLatency, NoiseEvent, ProbeClock, ProbeMode, ProbeRequest, ProbeRun, Series, Snapshot,
};
use crate::plan::Plan;
use crate::system::Root;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::Duration;

/// How long each probe thread spins (or sleeps and wakes) before it
/// measures: the CPU leaves its idle states and its frequency settles
/// (oslat's and cyclictest's warm-up), and the TSC is calibrated for the
/// threshold.
const PREHEAT_NS: u64 = 100_000_000;
/// Stack of a probe thread: it holds a [`Series`] on the heap and little
/// else; small so that `mlockall(MCL_FUTURE)` locks little.
const STACK: usize = 256 * 1024;

/// The watchdog's limit for a probe of `duration_ns`: the measurement and
/// its pre-heat ([`PREHEAT_NS`]) twice over, and never less than that plus
/// one second, so that a short probe on a loaded machine (a CI host, a
/// build) is not ended for the time its threads waited to be scheduled.
pub fn watchdog_limit(duration_ns: u64) -> Duration {
    let run = duration_ns.saturating_add(PREHEAT_NS);
    Duration::from_nanos((2 * run).max(run + 1_000_000_000))
}

/// One thread's raw measurement.
struct Raw {
    series: Series,
    /// Clock ticks and `CLOCK_MONOTONIC_RAW` ns at the start and end of
    /// the measurement (the TSC's calibration).
    ticks: (u64, u64),
    raw_ns: (u64, u64),
    /// `CLOCK_MONOTONIC` at the start, ns: the sampler's clock, for
    /// lining the gaps up with its samples.
    mono0: u64,
}

/// The clock read in the hot loop.
fn read_clock(clock: ProbeClock) -> u64 {
    match clock {
        ProbeClock::Tsc => ffi::tsc().unwrap_or_else(ffi::monotonic_raw_ns),
        ProbeClock::MonotonicRaw => ffi::monotonic_raw_ns(),
        ProbeClock::Monotonic => ffi::monotonic_ns(),
    }
}

/// Spins for `ns` of `CLOCK_MONOTONIC_RAW`; returns the clock's ticks per ns
/// over that time (1.0 for the clock_gettime clocks).
fn preheat(clock: ProbeClock, ns: u64) -> f64 {
    let (t0, r0) = (read_clock(clock), ffi::monotonic_raw_ns());
    let mut r1 = r0;
    while r1 - r0 < ns {
        r1 = ffi::monotonic_raw_ns();
    }
    let t1 = read_clock(clock);
    if clock == ProbeClock::Tsc && r1 > r0 {
        (t1 - t0) as f64 / (r1 - r0) as f64
    } else {
        1.0
    }
}

/// oslat's loop: read the clock, compare with the previous read, until
/// `done` (checked every 1024 reads: a `clock_gettime` per read would
/// double the TSC loop's period). A difference above the series'
/// threshold is a gap ([`Series::gap`]); the others are only counted and
/// their maximum kept (no per-read histogram: it would measure the loop).
/// The gap timer restarts after every step of the probe's own
/// housekeeping (recording a gap, the end check and its `clock_gettime`),
/// so that no gap holds the probe's own work: the restart's read, not the
/// last read before the housekeeping, is the next gap's start. The time
/// between them is not watched, and is added up in
/// [`Series::housekeeping`] (oslat instead counts its bucket update and
/// stop check into the next sample).
fn spin<R: FnMut() -> u64, D: FnMut() -> bool>(mut read: R, series: &mut Series, mut done: D) {
    let threshold = series.threshold;
    let (mut reads, mut max, mut unwatched) = (0u64, 0u64, 0u64);
    let mut prev = read();
    loop {
        let now = read();
        let gap = now.wrapping_sub(prev);
        prev = now;
        max = max.max(gap);
        reads += 1;
        if gap > threshold {
            series.gap(gap, now.wrapping_sub(gap));
            let again = read();
            unwatched = unwatched.wrapping_add(again.wrapping_sub(prev));
            prev = again;
        }
        if reads & 1023 == 0 {
            if done() {
                break;
            }
            let again = read();
            unwatched = unwatched.wrapping_add(again.wrapping_sub(prev));
            prev = again;
        }
    }
    series.samples = reads;
    series.max = max;
    series.housekeeping = unwatched;
}

/// cyclictest's loop: sleep to an absolute deadline every `interval` ns of
/// `CLOCK_MONOTONIC`; a sample is how late the thread woke. A deadline
/// already passed is skipped, not slept to (no burst of catch-up samples).
fn wakeup(series: &mut Series, interval: u64, end: u64, stop: &AtomicBool) {
    let mut next = ffi::monotonic_ns() + interval;
    while next < end && !stop.load(Ordering::Relaxed) {
        ffi::sleep_until_monotonic(next);
        let now = ffi::monotonic_ns();
        series.record(now.saturating_sub(next), next);
        next += interval;
        while next <= now {
            next += interval;
        }
    }
}

/// The body of one probe thread on `cpu`: apply the plan (pinned to `cpu`),
/// pre-heat, wait for the others, measure.
fn probe_thread(
    plan: Plan,
    possible: CpuSet,
    req: ProbeRequest,
    clock: ProbeClock,
    start: Arc<Barrier>,
    stop: Arc<AtomicBool>,
) -> Result<Raw> {
    let applied = crate::apply::apply(&plan, &possible);
    let ticks_per_ns = match &applied {
        Ok(()) if req.mode == ProbeMode::Spin => preheat(clock, PREHEAT_NS),
        Ok(()) => {
            // Wake-ups are what is measured: pre-heat by waking.
            let mut warm = Series::new(u64::MAX, 1.0);
            wakeup(
                &mut warm,
                req.interval_ns,
                ffi::monotonic_ns() + PREHEAT_NS,
                &stop,
            );
            1.0
        }
        Err(_) => 1.0,
    };
    // Every thread reaches the barrier, failed or not, so none waits forever.
    start.wait();
    applied?;
    let threshold = (req.threshold_ns as f64 * ticks_per_ns) as u64;
    let mut series = Series::new(threshold, ticks_per_ns);
    let r0 = ffi::monotonic_raw_ns();
    let mono0 = ffi::monotonic_ns();
    let t0 = read_clock(clock);
    let end_raw = r0 + req.duration_ns;
    let done = || ffi::monotonic_raw_ns() >= end_raw || stop.load(Ordering::Relaxed);
    match req.mode {
        ProbeMode::Spin => match clock {
            ProbeClock::Tsc => spin(|| ffi::tsc().unwrap_or(0), &mut series, done),
            _ => spin(ffi::monotonic_raw_ns, &mut series, done),
        },
        ProbeMode::Wakeup => wakeup(
            &mut series,
            req.interval_ns,
            ffi::monotonic_ns() + req.duration_ns,
            &stop,
        ),
    }
    let t1 = read_clock(clock);
    let r1 = ffi::monotonic_raw_ns();
    Ok(Raw {
        series,
        ticks: (t0, t1),
        raw_ns: (r0, r1),
        mono0,
    })
}

/// The watchdog: waits for every probe thread's completion (its index in
/// `tids`); at `limit` it stops the probe and moves each thread that has
/// not returned onto `rescue` (`sched_setaffinity(2)` on its TID, again
/// every 20 ms, since a thread may still be pinning itself): a thread held
/// off its CPU (a real-time task spinning there) can then run, see the
/// stop and return, cut short. When one still has not returned a second
/// later, it ends the process (exit 125): a probe thread that cannot be
/// stopped must not be left behind an exec'd command.
fn watchdog(
    done: mpsc::Receiver<usize>,
    tids: &[AtomicU32],
    limit: Duration,
    stop: &AtomicBool,
    rescue: Option<&[u8]>,
    tracer: Option<&Osnoise>,
) {
    let start = std::time::Instant::now();
    let mut left: Vec<bool> = vec![true; tids.len()];
    let mut count = tids.len();
    let mut grace: Option<std::time::Instant> = None;
    while count > 0 {
        let wait = match grace {
            None => limit.saturating_sub(start.elapsed()),
            Some(_) => Duration::from_millis(20),
        };
        match done.recv_timeout(wait) {
            Ok(i) => {
                if std::mem::replace(&mut left[i], false) {
                    count -= 1;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let since = *grace.get_or_insert_with(|| {
                    stop.store(true, Ordering::Relaxed);
                    std::time::Instant::now()
                });
                if since.elapsed() >= Duration::from_secs(1) {
                    if let Some(Err(e)) = tracer.map(Osnoise::remove) {
                        warn_left(&e);
                    }
                    die(&format!(
                        "a probe thread did not stop 1s after the watchdog's limit of {:.1}s",
                        limit.as_secs_f64()
                    ));
                }
                if let Some(mask) = rescue {
                    for (i, tid) in tids.iter().enumerate() {
                        let tid = tid.load(Ordering::Acquire);
                        if left[i] && tid != 0 {
                            // ESRCH: it has just returned.
                            let _ = ffi::sched_setaffinity_of(tid, mask);
                        }
                    }
                }
            }
        }
    }
}

/// What the watchdog thread watches ([`watchdog`]'s arguments), and the
/// CPUs it runs on (`None`: inherited).
struct Watched {
    done: mpsc::Receiver<usize>,
    tids: Arc<Vec<AtomicU32>>,
    limit: Duration,
    stop: Arc<AtomicBool>,
    rescue: Option<Vec<u8>>,
    cpus: Option<Vec<u8>>,
    tracer: Option<Arc<Osnoise>>,
}

impl Watched {
    /// Starts the watchdog thread on its CPUs (best effort: the inherited
    /// affinity otherwise).
    fn start(self) -> std::io::Result<std::thread::JoinHandle<()>> {
        std::thread::Builder::new()
            .name("pinrun-watchdog".into())
            .stack_size(STACK)
            .spawn(move || {
                if let Some(c) = &self.cpus {
                    let _ = ffi::sched_setaffinity(c);
                }
                watchdog(
                    self.done,
                    &self.tids,
                    self.limit,
                    &self.stop,
                    self.rescue.as_deref(),
                    self.tracer.as_deref(),
                )
            })
    }
}

/// Sends on drop: a probe thread's completion (its index), even when it
/// panics.
struct Done(mpsc::Sender<usize>, usize);

impl Drop for Done {
    fn drop(&mut self) {
        let _ = self.0.send(self.1);
    }
}

/// Probes `cpus` with `plan`'s policies (the plan's CPUs replaced by each
/// CPU in turn), attributing the noise from `root`'s counters; `watchdog_cpus`
/// are where the watchdog may run (`None`: inherited). Errors: a thread that
/// cannot be created, a policy that cannot be applied on a probe thread
/// (as the launch would fail), a probe ended by the watchdog.
pub fn run(
    root: &Root,
    plan: &Plan,
    possible: &CpuSet,
    cpus: &CpuSet,
    req: &ProbeRequest,
    watchdog_cpus: Option<&CpuSet>,
) -> Result<(ProbeRun, Sampled)> {
    let helpers = Helpers {
        cpus: watchdog_cpus,
        sample: true,
        tracer: None,
    };
    let m = measure(root, plan, possible, cpus, req, helpers)?;
    let (clock, (raws, before, after, sampled, own_tids)) = (m.clock, m.measured);
    if let Some(limit) = m.overran {
        return Err(Error::new(
            ErrorCode::ProbeFailed,
            format!(
                "--probe: the probe overran its watchdog's limit ({:.1}s: twice its duration and pre-heat, at least 1s more than them): its threads could not run",
                limit.as_secs_f64()
            ),
        )
        .hint("a higher-priority task or an interrupt storm held a probed CPU; run pinrun --probe -v again, or probe with --probe-mode wakeup"));
    }
    let own = std::process::id();
    let mut out = Vec::new();
    let mut sources = BTreeMap::new();
    let mut sampled = sampled;
    let mut starts = BTreeMap::new();
    for (cpu, raw) in raws {
        let noise = summarize(clock, req.mode, cpu, &raw);
        // The measurement on CLOCK_MONOTONIC, the sampler's clock.
        let measured = (raw.mono0, raw.mono0.saturating_add(noise.duration_ns));
        let readings = sampled.as_ref().ok();
        let totals = super::plan::totals((&before, &after), readings, cpu, measured, own);
        sources.insert(cpu, totals);
        out.push(noise);
        starts.insert(cpu, raw.mono0);
        if let Ok(s) = &mut sampled {
            s.starts.insert(cpu, raw.mono0);
        }
    }
    let mut run = ProbeRun {
        request: *req,
        clock,
        sched: crate::apply::attr_words(&crate::apply::sched_attr(
            ffi::sched_getattr().unwrap_or_default(),
            &plan.sched,
        )),
        cpus: out,
        sources,
        mlock_error: m.mlock_error,
        dma_latency: m.dma_latency,
        rt_throttle: None,
        rt_priority: plan
            .sched
            .policy
            .and_then(crate::policy::Policy::rt_priority),
        timed: Err(String::new()),
        traced: None,
    };
    run.traced = m.traced.map(|t| {
        t.map(
            |(instance, (events, overrun, not_kept))| crate::noise::Traced {
                tracer: "osnoise".into(),
                instance,
                events: events.len() as u64,
                overrun,
                not_kept,
                gaps: super::plan::trace_gaps(&events, &run, &starts, &own_tids),
            },
        )
    });
    Ok((run, sampled))
}

/// Where the probe's helper threads (the watchdog, the sampler) may run
/// (`None`: pinrun's inherited affinity, and no sampler), and whether the
/// sampler of attribution in time runs at all.
#[derive(Debug, Clone, Copy)]
struct Helpers<'a> {
    /// The housekeeping CPUs outside the probed ones.
    cpus: Option<&'a CpuSet>,
    /// Start the sampler ([`start_sampler`]).
    sample: bool,
    /// `--probe-tracer`'s tracer, removed before the watchdog ends pinrun.
    tracer: Option<&'a Arc<Osnoise>>,
}

/// What [`measure`] returns.
struct Measurement {
    /// The clock the samples were read from.
    clock: ProbeClock,
    /// Why memory was not locked.
    mlock_error: Option<String>,
    /// `/dev/cpu_dma_latency` as held (`--probe-dma-latency`).
    dma_latency: Option<DmaLatency>,
    /// The raw series with the counters before and after.
    measured: Measured,
    /// The watchdog's limit when it had to stop the threads (`None`:
    /// every thread measured its whole duration).
    overran: Option<Duration>,
    /// `--probe-tracer`: the instance, the osnoise events and how many the
    /// buffer dropped, or why the tracer did not run; `None`: not asked.
    traced: Option<TraceRead>,
}

/// The tracer's instance and what it read ([`Osnoise::events`]), or why
/// it did not run.
type TraceRead = std::result::Result<(String, TraceEvents), String>;

/// The osnoise events kept, how many the ring buffer dropped (the
/// kernel's count) and how many were read past the bound and not kept
/// (pinrun's).
type TraceEvents = (Vec<NoiseEvent>, u64, u64);

/// The probe of `cpus` ([`run`]'s measurement), with `/dev/cpu_dma_latency`
/// held during it only when asked ([`hold_dma_latency`]).
fn measure(
    root: &Root,
    plan: &Plan,
    possible: &CpuSet,
    cpus: &CpuSet,
    req: &ProbeRequest,
    helpers: Helpers,
) -> Result<Measurement> {
    let clock = match req.mode {
        ProbeMode::Spin => super::plan::spin_clock(&crate::system::noise::clock_facts(root)),
        ProbeMode::Wakeup => ProbeClock::Monotonic,
    };
    let mlock_error = lock_memory();
    let (held, dma_latency) = match req.dma_latency_us {
        Some(us) => {
            let (file, held) = hold_dma_latency(us);
            (file, Some(DmaLatency { us, held }))
        }
        None => (None, None),
    };
    // --probe-tracer: a signal that would end pinrun waits until the
    // tracer's instance is removed (the probe is bounded by its watchdog).
    let deferred = req.tracer.and_then(|_| ffi::defer_ending_signals());
    let tracer = req
        .tracer
        .map(|_| Osnoise::start(cpus, possible).map(Arc::new));
    let helpers = Helpers {
        tracer: tracer.as_ref().and_then(|t| t.as_ref().ok()),
        ..helpers
    };
    let result = run_locked(root, plan, possible, cpus, req, clock, helpers);
    let traced = tracer.map(|t| {
        t.and_then(|g| {
            let events = g.events(cpus).map(|e| (g.instance(), e));
            if let Err(e) = g.remove() {
                warn_left(&e);
            }
            events
        })
    });
    if let Some(saved) = deferred {
        ffi::deliver_ending_signals(saved);
    }
    // The command starts without pinrun's PM QoS request and lock,
    // whatever happened: closing the file removes the request
    // (`cpu_latency_qos_release()`).
    drop(held);
    let _ = ffi::munlockall();
    let (measured, overran) = result?;
    Ok(Measurement {
        clock,
        mlock_error,
        dma_latency,
        measured,
        overran,
        traced,
    })
}

/// PM QoS's CPU latency device (Documentation/power/pm_qos_interface.rst).
const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// `--probe-dma-latency`: opens [`CPU_DMA_LATENCY`] read-write and writes
/// `us` as a 32-bit binary value, as cyclictest does
/// (`set_latency_target()`: `write(fd, &latency_target_value, 4)`, the
/// value 0 by default); `cpu_latency_qos_write()` (kernel/power/qos.c)
/// takes 4 bytes as binary. The request lasts while the file is open.
/// Returns the open file and the system-wide limit read back from it
/// (`cpu_latency_qos_read()`: the smallest request of every holder, µs),
/// or why it could not be held (no file: the kernel lacks PM QoS, or
/// pinrun is not root, the device being mode 0600).
fn hold_dma_latency(us: u32) -> (Option<std::fs::File>, std::result::Result<i32, String>) {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    let words = |e: &std::io::Error| format!("{CPU_DMA_LATENCY}: {}", crate::error::io_words(e));
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(CPU_DMA_LATENCY)
    {
        Ok(f) => f,
        Err(e) => return (None, Err(words(&e))),
    };
    let value = i32::try_from(us).unwrap_or(i32::MAX);
    if let Err(e) = file.write_all(&value.to_ne_bytes()) {
        return (None, Err(words(&e)));
    }
    let mut limit = [0u8; 4];
    let held = match file.read_exact_at(&mut limit, 0) {
        Ok(()) => Ok(i32::from_ne_bytes(limit)),
        Err(e) => Err(words(&e)),
    };
    (Some(file), held)
}

/// One CPU's series in ns (the TSC calibrated over the measurement).
fn summarize(clock: ProbeClock, mode: ProbeMode, cpu: u32, raw: &Raw) -> crate::noise::CpuNoise {
    let (t0, t1) = raw.ticks;
    let (r0, r1) = raw.raw_ns;
    let ns_per_tick = if clock == ProbeClock::Tsc && t1 > t0 {
        (r1 - r0) as f64 / (t1 - t0) as f64
    } else {
        1.0
    };
    raw.series.summarize(cpu, mode, ns_per_tick, t0, r1 - r0)
}

/// `--choose measured` (issue 31): the worst gap of each of `cpus` (ns)
/// under `plan`'s policies, as [`run`] measures it, where a probe the
/// watchdog had to stop is no error: a CPU whose thread did not measure
/// its whole duration (held off it: the noisiest there is) gets
/// `u64::MAX`, never the small gaps of the little it measured.
pub fn worst_gaps(
    root: &Root,
    plan: &Plan,
    possible: &CpuSet,
    cpus: &CpuSet,
    req: &ProbeRequest,
    watchdog_cpus: Option<&CpuSet>,
) -> Result<BTreeMap<u32, u64>> {
    // Only each CPU's worst gap is wanted: no sampler.
    let helpers = Helpers {
        cpus: watchdog_cpus,
        sample: false,
        tracer: None,
    };
    let m = measure(root, plan, possible, cpus, req, helpers)?;
    let (clock, (raws, ..), overran) = (m.clock, m.measured, m.overran);
    let mut gaps: BTreeMap<u32, u64> = cpus.iter().map(|c| (c, u64::MAX)).collect();
    for (cpu, raw) in &raws {
        let (r0, r1) = raw.raw_ns;
        if overran.is_none() || r1.saturating_sub(r0) >= req.duration_ns {
            gaps.insert(*cpu, summarize(clock, req.mode, *cpu, raw).max_ns);
        }
    }
    Ok(gaps)
}

/// The osnoise tracer of `--probe-tracer`, running in a tracefs instance
/// of pinrun's own (`instances/pinrun-PID`, Documentation/trace/ftrace.rst
/// "Instances"), with the tracer's global option `OSNOISE_WORKLOAD` turned
/// off for the probe (the tracer then runs no workload thread of its own,
/// which would compete with the probe, and its `osnoise:*` events time
/// every other task, IRQ, softirq and NMI: osnoise-tracer.rst, "Running
/// osnoise tracer without workload"). [`Osnoise::remove`] (also on drop,
/// and before the watchdog ends pinrun) stops it, gives `osnoise/options`
/// back as it was and removes the instance: the host is left as it was.
#[derive(Debug)]
pub struct Osnoise {
    /// The tracefs mount point.
    top: std::path::PathBuf,
    /// The instance's directory.
    dir: std::path::PathBuf,
    /// `osnoise/options` before, once pinrun changed it.
    options: std::sync::Mutex<Option<String>>,
    /// Removed already.
    removed: AtomicBool,
}

/// Per-CPU ring buffer of the instance on each probed CPU, KiB: 8 MiB,
/// about 150 000 events (a busy CPU makes a few thousand a second).
const TRACE_BUFFER_KB: u32 = 8192;

/// The osnoise events `--probe-tracer` enables (include/trace/events/osnoise.h).
const OSNOISE_EVENTS: [&str; 5] = [
    "irq_noise",
    "softirq_noise",
    "thread_noise",
    "nmi_noise",
    "sample_threshold",
];

/// `path`'s text, or `what: cause` in words: a small file of tracefs
/// (`current_tracer`, `osnoise/options`, `per_cpu/cpuN/stats`) or
/// `/proc/self/mounts`, read whole as [`crate::system::root::read_bounded`]
/// bounds it (at most 4 MiB, else "larger than 4 MiB"; the instance's
/// `trace` is read line by line instead: [`Osnoise::events`]).
fn read_text(path: &std::path::Path) -> std::result::Result<String, String> {
    crate::system::root::read_bounded(path)
        .map_err(|e| format!("{}: {}", path.display(), crate::error::io_words(&e)))
}

/// Writes `text` to a tracefs file, or says what failed.
fn write_text(path: &std::path::Path, text: &str) -> std::result::Result<(), String> {
    std::fs::write(path, text).map_err(|e| {
        format!(
            "writing {text} to {}: {}",
            path.display(),
            crate::error::io_words(&e)
        )
    })
}

/// Why the osnoise tracer may not run here, or the tracefs mount point:
/// pinrun must be root, tracefs mounted (`/proc/self/mounts`), `osnoise`
/// in its `available_tracers` (the kernel's word, never its version),
/// the global `current_tracer` `nop`, no instance tracing with another
/// tracer, none of pinrun's left (`instances/pinrun-*`), and
/// `osnoise/options` offering `OSNOISE_WORKLOAD` (Linux 6.3 and later).
fn osnoise_usable() -> std::result::Result<(std::path::PathBuf, String), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("pinrun is not root (tracefs is root's)".into());
    }
    let mounts = read_text(std::path::Path::new("/proc/self/mounts"))?;
    let top = std::path::PathBuf::from(
        super::read::tracefs_mount(&mounts)
            .ok_or("tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)")?,
    );
    let tracers = read_text(&top.join("available_tracers"))?;
    if !tracers.split_whitespace().any(|t| t == "osnoise") {
        return Err(format!(
            "this kernel has no osnoise tracer (available_tracers: {}; it needs CONFIG_OSNOISE_TRACER)",
            tracers.trim()
        ));
    }
    let current = read_text(&top.join("current_tracer"))?;
    if current.trim() != "nop" {
        return Err(format!(
            "tracing is in use: current_tracer is {}",
            current.trim()
        ));
    }
    let instances = std::fs::read_dir(top.join("instances")).map_err(|e| {
        format!(
            "{}/instances: {}",
            top.display(),
            crate::error::io_words(&e)
        )
    })?;
    for entry in instances.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("pinrun-") {
            return Err(format!(
                "a tracefs instance of pinrun's is left: {} (rmdir it when no pinrun runs)",
                entry.path().display()
            ));
        }
        let t = read_text(&entry.path().join("current_tracer")).unwrap_or_default();
        if !t.trim().is_empty() && t.trim() != "nop" {
            return Err(format!(
                "tracing is in use: instance {name} runs {}",
                t.trim()
            ));
        }
    }
    let options = read_text(&top.join("osnoise/options"))?;
    if !options
        .split_whitespace()
        .any(|o| o.trim_start_matches("NO_") == "OSNOISE_WORKLOAD")
    {
        return Err(format!(
            "this kernel's osnoise has no OSNOISE_WORKLOAD option (osnoise/options: {}): its workload would compete with the probe",
            options.trim()
        ));
    }
    Ok((top, options))
}

impl Osnoise {
    /// Starts the osnoise tracer on `cpus` (of `possible`) in a new
    /// instance, or says why it may not or could not (one line; whatever
    /// was done is undone).
    pub fn start(cpus: &CpuSet, possible: &CpuSet) -> std::result::Result<Osnoise, String> {
        let (top, options) = osnoise_usable()?;
        let dir = top.join(format!("instances/pinrun-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("mkdir {}: {}", dir.display(), crate::error::io_words(&e)))?;
        let g = Osnoise {
            top,
            dir,
            options: std::sync::Mutex::new(None),
            removed: AtomicBool::new(false),
        };
        // Any error from here is undone by the drop of `g`.
        let d = &g.dir;
        write_text(&d.join("trace_clock"), "mono")?;
        let bytes = (possible.last().unwrap_or(0) as usize / 32 + 1) * 4;
        write_text(&d.join("tracing_cpumask"), &cpumask_hex(cpus, bytes))?;
        for cpu in cpus.iter() {
            write_text(
                &d.join(format!("per_cpu/cpu{cpu}/buffer_size_kb")),
                &TRACE_BUFFER_KB.to_string(),
            )?;
        }
        for e in OSNOISE_EVENTS {
            write_text(&d.join(format!("events/osnoise/{e}/enable")), "1")?;
        }
        if options.split_whitespace().any(|o| o == "OSNOISE_WORKLOAD") {
            *g.options.lock().unwrap_or_else(|p| p.into_inner()) = Some(options);
            write_text(&g.top.join("osnoise/options"), "NO_OSNOISE_WORKLOAD")?;
        }
        write_text(&d.join("current_tracer"), "osnoise")?;
        Ok(g)
    }

    /// The instance's directory.
    pub fn instance(&self) -> String {
        self.dir.display().to_string()
    }

    /// Stops recording and reads every osnoise event of the probed CPUs
    /// (the instance's `trace`, line by line: at most
    /// [`super::read::MAX_TRACE_EVENTS`] kept), how many the ring buffer
    /// dropped (the sum of the `overrun:` lines of `per_cpu/cpuN/stats`,
    /// as the kernel counts them) and how many were read past the bound
    /// (not kept: pinrun's count, apart).
    pub fn events(&self, cpus: &CpuSet) -> std::result::Result<TraceEvents, String> {
        self.events_keeping(cpus, super::read::MAX_TRACE_EVENTS)
    }

    /// [`Osnoise::events`], keeping at most `keep` events.
    fn events_keeping(
        &self,
        cpus: &CpuSet,
        keep: usize,
    ) -> std::result::Result<TraceEvents, String> {
        write_text(&self.dir.join("tracing_on"), "0")?;
        let path = self.dir.join("trace");
        let (events, not_kept) = std::fs::File::open(&path)
            .and_then(|f| super::read::noise_events(std::io::BufReader::new(f), keep))
            .map_err(|e| format!("{}: {}", path.display(), crate::error::io_words(&e)))?;
        let overrun = cpus
            .iter()
            .filter_map(|c| read_text(&self.dir.join(format!("per_cpu/cpu{c}/stats"))).ok())
            .flat_map(|t| {
                t.lines()
                    .filter_map(|l| l.strip_prefix("overrun:")?.trim().parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum::<u64>();
        Ok((events, overrun, not_kept))
    }

    /// Stops the tracer, gives `osnoise/options` back (each option as it
    /// was, then read back) and removes the instance; once (later calls
    /// do nothing). Errors: what could not be undone.
    pub fn remove(&self) -> std::result::Result<(), String> {
        if self.removed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut failed = Vec::new();
        let _ = write_text(&self.dir.join("tracing_on"), "0");
        if let Err(e) = write_text(&self.dir.join("current_tracer"), "nop") {
            failed.push(e);
        }
        let saved = self
            .options
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(before) = saved {
            let path = self.top.join("osnoise/options");
            for o in before
                .split_whitespace()
                .filter(|o| o.trim_start_matches("NO_") != "DEFAULTS")
            {
                if let Err(e) = write_text(&path, o) {
                    failed.push(e);
                }
            }
            match read_text(&path) {
                Ok(now) if now.split_whitespace().eq(before.split_whitespace()) => {}
                Ok(now) => failed.push(format!(
                    "{} is {} (was {})",
                    path.display(),
                    now.trim(),
                    before.trim()
                )),
                Err(e) => failed.push(e),
            }
        }
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            failed.push(format!(
                "rmdir {}: {}",
                self.dir.display(),
                crate::error::io_words(&e)
            ));
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(failed.join("; "))
        }
    }
}

impl Drop for Osnoise {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            warn_left(&e);
        }
    }
}

/// Says on stderr what `--probe-tracer` could not undo.
fn warn_left(e: &str) {
    crate::output::to_stderr(&format!(
        "pinrun: --probe-tracer: the tracer could not be undone: {e}\nhint: as root, echo nop > INSTANCE/current_tracer, echo OSNOISE_WORKLOAD > osnoise/options and rmdir the instance\n"
    ));
}

/// `cpus` as a `tracing_cpumask` value: comma-separated 32-bit hex words,
/// most significant first, `bytes` long (cpumask_parse_user()).
fn cpumask_hex(cpus: &CpuSet, bytes: usize) -> String {
    let words = bytes.div_ceil(4).max(1);
    (0..words)
        .rev()
        .map(|w| {
            let v: u32 = cpus
                .iter()
                .filter(|c| *c as usize / 32 == w)
                .fold(0, |v, c| v | 1 << (c % 32));
            format!("{v:08x}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `mlockall(MCL_CURRENT | MCL_FUTURE)` when it cannot starve pinrun of
/// memory: as root (CAP_IPC_LOCK ignores the limit) or with an unlimited
/// RLIMIT_MEMLOCK. Under a finite limit, MCL_FUTURE would make every
/// allocation past it fail (a thread stack, a read buffer), so memory is
/// left unlocked and the reason returned, as it is when the call fails.
fn lock_memory() -> Option<String> {
    use nix::sys::resource::{Resource, getrlimit};
    let unlimited = getrlimit(Resource::RLIMIT_MEMLOCK)
        .is_ok_and(|(soft, _)| soft == nix::sys::resource::RLIM_INFINITY);
    if !unlimited && !nix::unistd::geteuid().is_root() {
        let soft = getrlimit(Resource::RLIMIT_MEMLOCK).map_or(0, |(s, _)| s);
        return Some(format!(
            "RLIMIT_MEMLOCK is {} KiB: mlockall(MCL_FUTURE) would fail pinrun's allocations past it",
            soft / 1024
        ));
    }
    ffi::mlockall()
        .err()
        .map(|e| format!("mlockall: {}", crate::error::io_words(&e)))
}

/// Ends pinrun (exit 125) with `pinrun: --probe: <what>`: for a probe
/// thread that cannot be started or stopped, which no error return could
/// leave behind safely (the command is never exec'd).
fn die(what: &str) -> ! {
    crate::output::to_stderr(&format!(
        "pinrun: --probe: {what}\nhint: run pinrun again; if it recurs, probe with --probe-mode wakeup or without a real-time policy\n"
    ));
    std::process::exit(i32::from(crate::error::Exit::Failure.code()))
}

/// The raw series of each CPU, the counters before and after, the
/// sampler's readings, and pinrun's threads during the probe (TIDs).
type Measured = (
    Vec<(u32, Raw)>,
    Snapshot,
    Snapshot,
    Sampled,
    std::collections::BTreeSet<u32>,
);

fn run_locked(
    root: &Root,
    plan: &Plan,
    possible: &CpuSet,
    cpus: &CpuSet,
    req: &ProbeRequest,
    clock: ProbeClock,
    helpers: Helpers,
) -> Result<(Measured, Option<Duration>)> {
    let fail = |what: String| Error::new(ErrorCode::ProbeFailed, format!("--probe: {what}"));
    let watchdog_cpus = helpers.cpus;
    let before = crate::system::noise::snapshot(root, true);
    let n = cpus.len();
    let start = Arc::new(Barrier::new(n));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let limit = watchdog_limit(req.duration_ns);
    let tids: Arc<Vec<AtomicU32>> = Arc::new((0..n).map(|_| AtomicU32::new(0)).collect());
    let bytes = (possible.last().unwrap_or(0) as usize / 64 + 1) * 8;
    // Where a probe thread held off its CPU is moved to when the watchdog
    // stops the probe: the watchdog's CPUs, else pinrun's own affinity.
    let rescue = match watchdog_cpus {
        Some(c) => Some(c.to_kernel_bytes(bytes)),
        None => ffi::sched_getaffinity(bytes).ok(),
    };
    let wd = Watched {
        done: rx,
        tids: tids.clone(),
        limit,
        stop: stop.clone(),
        rescue,
        cpus: watchdog_cpus.map(|c| c.to_kernel_bytes(bytes)),
        tracer: helpers.tracer.cloned(),
    }
    .start()
    .map_err(|e| {
        fail(format!(
            "cannot start the watchdog thread: {}",
            crate::error::io_words(&e)
        ))
    })?;
    let finished = Arc::new(AtomicBool::new(false));
    let sampler = if helpers.sample {
        start_sampler(
            root,
            cpus,
            req,
            watchdog_cpus,
            bytes,
            finished.clone(),
            &before,
        )
    } else {
        Err("not sampled".to_string())
    };
    let mut handles = Vec::new();
    for (i, cpu) in cpus.iter().enumerate() {
        let mut p = plan.clone();
        p.cpus = Some(std::iter::once(cpu).collect());
        let (possible, req, start, stop) = (possible.clone(), *req, start.clone(), stop.clone());
        let tids = tids.clone();
        let done = Done(tx.clone(), i);
        let h = std::thread::Builder::new()
            .name(format!("pinrun-probe{cpu}"))
            .stack_size(STACK)
            .spawn(move || {
                let _done = done;
                tids[i].store(nix::unistd::gettid().as_raw() as u32, Ordering::Release);
                probe_thread(p, possible, req, clock, start, stop)
            });
        match h {
            Ok(h) => handles.push((cpu, h)),
            Err(e) => {
                // The threads already started wait at the barrier for
                // ones that will never come: end the process instead of
                // leaving them (no command has run; nothing was applied
                // to pinrun itself).
                if let Some(Err(e)) = helpers.tracer.map(|t| t.remove()) {
                    warn_left(&e);
                }
                die(&format!(
                    "cannot start the probe thread of CPU {cpu}: {}",
                    crate::error::io_words(&e)
                ));
            }
        }
    }
    drop(tx);
    // pinrun's threads now (the probe's, the watchdog, the sampler): never
    // a source of the tracer's events.
    let own_tids = own_tasks();
    let mut raws = Vec::new();
    let mut first_err = None;
    for (cpu, h) in handles {
        match h.join() {
            Ok(Ok(raw)) => raws.push((cpu, raw)),
            Ok(Err(mut e)) => {
                e.message = format!("--probe on CPU {cpu}: {}", e.message);
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(fail(format!("the probe thread of CPU {cpu} panicked")));
            }
        }
    }
    let _ = wd.join();
    finished.store(true, Ordering::Relaxed);
    let sampled = match sampler {
        Ok(h) => h
            .join()
            .unwrap_or_else(|_| Err("the sampler thread panicked".to_string())),
        Err(e) => Err(e),
    };
    if let Some(e) = first_err {
        return Err(e);
    }
    let overran = stop.load(Ordering::Relaxed).then_some(limit);
    let after = crate::system::noise::snapshot(root, true);
    Ok(((raws, before, after, sampled, own_tids), overran))
}

/// The TIDs of pinrun's threads (`/proc/self/task`).
fn own_tasks() -> std::collections::BTreeSet<u32> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Starts the sampler of attribution in time (issue 36) on `watchdog_cpus`
/// (a housekeeping CPU outside the probed ones; without one, no sampler:
/// on a probed CPU it would be the noise it measures): every period of
/// [`super::sample_budget`] it reads [`super::read::sample`], stamped
/// with `CLOCK_MONOTONIC` before and after, into a vector allocated up
/// front for the whole probe (pre-heat included; [`super::MAX_SAMPLES`]
/// and [`super::MAX_SAMPLE_BYTES`] at most), until `finished` or full; it looks for new candidate tasks every
/// [`super::RESCAN_EVERY`] samples (the first look against `first`, the
/// probe's first snapshot). A deadline already passed is skipped. It runs
/// at SCHED_FIFO priority 1 where pinrun may.
fn start_sampler(
    root: &Root,
    cpus: &CpuSet,
    req: &ProbeRequest,
    watchdog_cpus: Option<&CpuSet>,
    bytes: usize,
    finished: Arc<AtomicBool>,
    first: &Snapshot,
) -> std::result::Result<std::thread::JoinHandle<Sampled>, String> {
    let Some(mask) = watchdog_cpus.map(|c| c.to_kernel_bytes(bytes)) else {
        return Err("no housekeeping CPU outside the probed ones to sample from".into());
    };
    let (root, cpus) = (root.clone(), cpus.iter().collect::<Vec<u32>>());
    let mut seen: BTreeMap<u32, u64> = first
        .tasks
        .iter()
        .map(|(tid, t)| (*tid, t.runtime_ns))
        .collect();
    let whole = req.duration_ns.saturating_add(2 * PREHEAT_NS);
    std::thread::Builder::new()
        .name("pinrun-sampler".into())
        .stack_size(STACK)
        .spawn(move || {
            ffi::sched_setaffinity(&mask)
                .map_err(|e| format!("sched_setaffinity: {}", crate::error::io_words(&e)))?;
            // SCHED_FIFO 1 where pinrun may (root, RLIMIT_RTPRIO): on a
            // loaded housekeeping CPU an ordinary thread samples every
            // 40-100 ms instead of 2 (measured here at load average 7);
            // the lowest real-time priority, for well under a millisecond
            // per period. Refused: it stays as it is.
            let _ = ffi::sched_setattr(&ffi::SchedAttr {
                sched_policy: libc::SCHED_FIFO as u32,
                sched_priority: 1,
                ..ffi::SchedAttr::default()
            });
            let own = std::process::id();
            let mut layout = super::read::layout(&root, &cpus);
            let mut tids = super::read::candidates(&root, &mut layout, own, &mut seen);
            let (period, cap) = super::sample_budget(whole, &layout);
            let mut samples = Vec::with_capacity(cap);
            let mut next = ffi::monotonic_ns();
            // One more sample once the probe threads have returned, so
            // that their last gaps have a sample after them.
            loop {
                let last = finished.load(Ordering::Relaxed);
                if samples.len() % super::RESCAN_EVERY == super::RESCAN_EVERY - 1 {
                    tids = super::read::candidates(&root, &mut layout, own, &mut seen);
                }
                let at_ns = ffi::monotonic_ns();
                if let Some(mut s) = super::read::sample(&root, &layout, &tids, samples.last()) {
                    s.at_ns = at_ns;
                    s.done_ns = ffi::monotonic_ns();
                    samples.push(s);
                }
                if last || samples.len() >= cap {
                    break;
                }
                let now = ffi::monotonic_ns();
                next += period;
                while next <= now {
                    next += period;
                }
                ffi::sleep_until_monotonic(next);
            }
            Ok(Readings {
                layout,
                samples,
                period_ns: period,
                starts: BTreeMap::new(),
                cpu_ns: ffi::thread_cpu_ns(),
            })
        })
        .map_err(|e| {
            format!(
                "cannot start the sampler thread: {}",
                crate::error::io_words(&e)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe thread held off its CPU (here: one that waits for its
    /// affinity to change, deaf to the stop flag, as a thread that never
    /// gets its CPU is) is moved onto the rescue CPUs once the watchdog's
    /// limit passes, and returns; the watchdog then returns instead of
    /// ending the process (CI's VM run of 1cd1395 ended `--choose
    /// measured` there, a SCHED_FIFO hog holding a SCHED_OTHER probe
    /// thread off CPU 2).
    #[test]
    fn watchdog_moves_a_held_off_thread_where_it_can_return() {
        let bytes = 128;
        let own = ffi::sched_getaffinity(bytes).unwrap();
        let allowed = CpuSet::from_kernel_bytes(&own);
        let Some(first) = allowed.iter().next().filter(|_| allowed.len() > 1) else {
            eprintln!("skipped: needs two allowed CPUs");
            return;
        };
        let pinned = std::iter::once(first)
            .collect::<CpuSet>()
            .to_kernel_bytes(bytes);
        let tids: Arc<Vec<AtomicU32>> = Arc::new(vec![AtomicU32::new(0)]);
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (t, s) = (tids.clone(), stop.clone());
        let pin = pinned.clone();
        let held = std::thread::spawn(move || {
            let _done = Done(tx, 0);
            ffi::sched_setaffinity(&pin).unwrap();
            t[0].store(nix::unistd::gettid().as_raw() as u32, Ordering::Release);
            let only = CpuSet::from_kernel_bytes(&pin);
            while CpuSet::from_kernel_bytes(&ffi::sched_getaffinity(bytes).unwrap()) == only {
                std::thread::sleep(Duration::from_millis(1));
            }
            s.load(Ordering::Relaxed)
        });
        let t0 = std::time::Instant::now();
        watchdog(
            rx,
            &tids,
            Duration::from_millis(100),
            &stop,
            Some(&own),
            None,
        );
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
        assert!(held.join().unwrap(), "moved before the stop was set");
        assert!(stop.load(Ordering::Relaxed));
    }

    /// An idle loop's own housekeeping is never a gap (issue 36 item 1):
    /// on a simulated clock where each read advances 10 ticks and each end
    /// check costs 5000 (five times the 1000-tick threshold; a slow
    /// `clock_gettime`), 100 checks of an idle loop count no gap, and the
    /// 100 × 5000 ticks are the unwatched housekeeping. One preemption of
    /// 50000 ticks between two reads is one gap of 50010 (the read's own
    /// 10 included) that started at the read before it, and the recording
    /// of it (another 5000 ticks here) is not the next gap either.
    /// oslat's loop, which counts the check into the next sample, would
    /// count 100 gaps of 5010.
    #[test]
    fn spin_never_counts_its_own_housekeeping() {
        use std::cell::Cell;
        let run = |preempt_at: Option<u64>| {
            let clock = Cell::new(0u64);
            let reads = Cell::new(0u64);
            let read = || {
                reads.set(reads.get() + 1);
                let mut t = clock.get() + 10;
                if Some(reads.get()) == preempt_at {
                    t += 50_000;
                }
                clock.set(t);
                t
            };
            let checks = Cell::new(0u32);
            let done = || {
                clock.set(clock.get() + 5000);
                checks.set(checks.get() + 1);
                checks.get() == 100
            };
            let mut s = Series::new(1000, 1.0);
            spin(read, &mut s, done);
            s
        };
        let idle = run(None);
        assert_eq!(idle.above, 0, "{:?}", idle.top);
        assert_eq!(idle.samples, 100 * 1024);
        assert_eq!(idle.max, 10);
        // Each check costs 5000 ticks and its restart read 10 more.
        assert_eq!(idle.housekeeping, 99 * 5010);
        let hit = run(Some(3000));
        assert_eq!(hit.above, 1);
        assert_eq!(
            (hit.top[0].len, hit.max, hit.lost),
            (50_010, 50_010, 50_010)
        );
        // It started at the 2999th read of the clock (the restart reads
        // are among them): 2999 × 10 ticks plus the 5000 of each of the
        // two end checks before it.
        assert_eq!(hit.top[0].at, 2999 * 10 + 2 * 5000);
        assert_eq!(hit.samples, 100 * 1024);
    }

    /// The watchdog's floor: a 100 ms probe (plus its 100 ms pre-heat) on
    /// a loaded machine gets 1.2 s, not 0.4 s; a long one gets twice its
    /// run.
    #[test]
    fn watchdog_limit_has_a_floor_of_one_second_beyond_the_run() {
        assert_eq!(watchdog_limit(100_000_000), Duration::from_millis(1200));
        assert_eq!(watchdog_limit(0), Duration::from_millis(1100));
        assert_eq!(watchdog_limit(900_000_000), Duration::from_secs(2));
        assert_eq!(
            watchdog_limit(10_000_000_000),
            Duration::from_millis(20_200)
        );
        for ms in [1, 10, 100, 500, 1000, 60_000] {
            let run = Duration::from_millis(ms) + Duration::from_nanos(PREHEAT_NS);
            let l = watchdog_limit(ms * 1_000_000);
            assert!(
                l >= run * 2 && l >= run + Duration::from_secs(1),
                "{ms}ms: {l:?}"
            );
        }
    }

    /// The instance's events: the ring buffer's drops are the kernel's
    /// (the `overrun:` lines of `per_cpu/cpuN/stats`, as kernel 6.18
    /// prints them; `commit overrun:` is another count), apart from the
    /// events read past the bound and not kept (pinrun's): an instance
    /// whose CPU 1 overwrote 7 events, with 5 events read and 2 kept.
    #[test]
    fn overwritten_and_not_kept_are_counted_apart() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("instances/pinrun-1");
        std::fs::create_dir_all(dir.join("per_cpu/cpu1")).unwrap();
        std::fs::write(dir.join("tracing_on"), "1").unwrap();
        std::fs::write(
            dir.join("trace"),
            "# tracer: osnoise\n\
          <idle>-0       [001] dNh2.    10.956522: irq_noise: reschedule:253 start 12.079325861 duration 2147 ns\n\
              sh-279     [001] dNh11    11.348689: irq_noise: local_timer:236 start 12.471488723 duration 589581 ns\n\
              sh-279     [001] d..31    11.348819: thread_noise:  taskset:279 start 12.468664902 duration 2961758 ns\n\
          rcuc/1-35      [001] d..3.    11.348887: thread_noise:   rcuc/1:35 start 12.472221547 duration 62336 ns\n\
          <idle>-0       [001] d.s2.    11.400001: softirq_noise:    TIMER:1 start 12.523000000 duration 4100 ns\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("per_cpu/cpu1/stats"),
            "entries: 5\noverrun: 7\ncommit overrun: 2\nbytes: 360\noldest event ts:    10.956522\nnow ts:    11.500000\ndropped events: 0\nread events: 5\n",
        )
        .unwrap();
        let g = Osnoise {
            top: t.path().to_path_buf(),
            dir: dir.clone(),
            options: std::sync::Mutex::new(None),
            removed: AtomicBool::new(true),
        };
        let cpus = CpuSet::parse("1").unwrap();
        let (events, overrun, not_kept) = g.events_keeping(&cpus, 2).unwrap();
        assert_eq!((events.len(), overrun, not_kept), (2, 7, 3));
        assert_eq!(
            std::fs::read_to_string(dir.join("tracing_on")).unwrap(),
            "0"
        );
        let (events, overrun, not_kept) = g.events(&cpus).unwrap();
        assert_eq!((events.len(), overrun, not_kept), (5, 7, 0));
    }
}
