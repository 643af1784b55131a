//! The noise probe's vocabulary (`--probe`, issue 20): what was asked
//! ([`ProbeRequest`]), the gap series one probe thread records
//! ([`Series`], a log-linear [`Histogram`] plus the largest gaps), the
//! per-CPU result ([`CpuNoise`]), the kernel's counters at one instant
//! ([`Snapshot`]) and what disturbed a CPU ([`Source`]). Vocabulary only
//! (layer 0: types, units, names and words; no I/O, no decision): the
//! probe runs in `crate::probe` (`probe::apply`), its decisions (the
//! attribution, the likely source, the clock) are the probe wing's plan
//! (`crate::probe::plan`, `probe::plan::attribute`), the counters are read
//! by `crate::system::noise`, the text and JSON come from
//! `crate::probe::report`.
//!
//! The two modes follow rt-tests' anchors: **spin** is oslat's and
//! sysjitter's (one thread per CPU reads a clock in a tight loop; every
//! difference between two reads is a sample, a large one is time the CPU
//! was taken away: what a polling program sees); **wakeup** is
//! cyclictest's (`clock_nanosleep(2)` to an absolute deadline every
//! interval; a sample is how late the thread woke: what an event-driven
//! program sees).

use std::collections::BTreeMap;

/// Default probe duration: 1 s (oslat and cyclictest run until stopped;
/// one second gives a launch about 10^7 spin samples or 1000 wake-ups per
/// CPU, enough for a p99.9, and delays the command by about a second).
pub const DEFAULT_DURATION_NS: u64 = 1_000_000_000;
/// Shortest probe: 10 ms. It must hold one scheduler tick at HZ=100
/// (the longest tick period), and a gap is lined up in time with the
/// sampler's readings on either side (`probe::SAMPLE_PERIOD_NS`, 2 ms):
/// below that nothing the probe reports is a measurement (`--probe=1ns`
/// was once taken). `--choose measured` has the same floor.
pub const MIN_DURATION_NS: u64 = 10_000_000;
/// Longest probe: 60 s. A launch is not a benchmark; longer runs are
/// oslat's or cyclictest's job.
pub const MAX_DURATION_NS: u64 = 60_000_000_000;
/// Default threshold of a counted gap: 1 µs (above a cache miss or a TLB
/// refill, below the shortest interrupt entry and exit; oslat's buckets
/// are 1 µs wide for the same reason).
pub const DEFAULT_THRESHOLD_NS: u64 = 1_000;
/// Default threshold of a late wake-up (wakeup mode): 100 µs. Every
/// wake-up is late by the hrtimer's expiry and the scheduler's switch
/// (microseconds), and a SCHED_OTHER thread's by up to its timer slack
/// too (50 µs by default, prctl(2) `PR_SET_TIMERSLACK`): 1 µs would count
/// every sample. 100 µs is the maximum latency cyclictest users hold a
/// PREEMPT_RT system to (the OSADL latency plots' and rteval's usual bound).
pub const DEFAULT_WAKEUP_THRESHOLD_NS: u64 = 100_000;
/// Shortest wake-up interval: 10 µs. Below it the interval is within the
/// timer slack and the hrtimer's expiry and wake-up path (a few µs each):
/// the probe would measure its own loop, not the CPU.
pub const MIN_INTERVAL_NS: u64 = 10_000;
/// Wake-up interval of the wakeup mode: 1 ms (cyclictest's default `-i 1000`).
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000;
/// How many of the largest gaps each CPU keeps, with their timestamps.
pub const TOP_GAPS: usize = 10;

/// How the probe measures (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProbeMode {
    /// A tight clock-reading loop (oslat, sysjitter).
    #[default]
    Spin,
    /// Absolute-deadline sleeps (cyclictest).
    Wakeup,
}

impl ProbeMode {
    /// The name on the command line and in JSON: `spin`, `wakeup`.
    pub fn name(self) -> &'static str {
        match self {
            ProbeMode::Spin => "spin",
            ProbeMode::Wakeup => "wakeup",
        }
    }

    /// The default `--probe-threshold` of the mode, ns:
    /// [`DEFAULT_THRESHOLD_NS`] (spin), [`DEFAULT_WAKEUP_THRESHOLD_NS`]
    /// (wakeup).
    pub fn default_threshold_ns(self) -> u64 {
        match self {
            ProbeMode::Spin => DEFAULT_THRESHOLD_NS,
            ProbeMode::Wakeup => DEFAULT_WAKEUP_THRESHOLD_NS,
        }
    }
}

/// `--probe[=DURATION]`, `--probe-mode`, `--probe-threshold`, `--probe-max`,
/// `--probe-interval`, `--probe-dma-latency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeRequest {
    /// How long to measure, ns (≤ [`MAX_DURATION_NS`]).
    pub duration_ns: u64,
    /// Spin or wake-up.
    pub mode: ProbeMode,
    /// Gaps (spin) or wake-up latencies (wakeup) above this many ns are
    /// counted and their time is lost time.
    pub threshold_ns: u64,
    /// `--probe-max`: refuse the launch when a CPU's worst gap (spin) or
    /// latest wake-up (wakeup) exceeds it, ns (a setting: JSON
    /// `gate_max_ns`, never to be confused with a measured `max_ns`).
    pub gate_max_ns: Option<u64>,
    /// Wake-up interval, ns (wakeup mode).
    pub interval_ns: u64,
    /// `--probe-dma-latency[=US]`: hold `/dev/cpu_dma_latency` open with
    /// this value written, µs, during the probe only (cyclictest's default
    /// holds 0: rt-tests' `set_latency_target()`); `None`: never touched.
    pub dma_latency_us: Option<u32>,
    /// `--probe-tracer[=osnoise]`: attribute the largest gaps with the
    /// kernel's own tracer as well as the sampler; `None`: not asked.
    pub tracer: Option<ProbeTracer>,
}

/// The kernel tracer `--probe-tracer` runs beside the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeTracer {
    /// The osnoise tracer (Documentation/trace/osnoise-tracer.rst) without
    /// its workload (`NO_OSNOISE_WORKLOAD`): its `osnoise:*` events time
    /// every IRQ, softirq, thread and NMI on the traced CPUs.
    Osnoise,
}

impl ProbeTracer {
    /// The tracer's name in `available_tracers`, on the command line and
    /// in JSON: `osnoise`.
    pub fn name(self) -> &'static str {
        match self {
            ProbeTracer::Osnoise => "osnoise",
        }
    }
}

impl Default for ProbeRequest {
    fn default() -> Self {
        Self {
            duration_ns: DEFAULT_DURATION_NS,
            mode: ProbeMode::Spin,
            threshold_ns: DEFAULT_THRESHOLD_NS,
            gate_max_ns: None,
            interval_ns: DEFAULT_INTERVAL_NS,
            dma_latency_us: None,
            tracer: None,
        }
    }
}

/// Which clock the probe reads (oslat: the TSC on x86; cyclictest:
/// `CLOCK_MONOTONIC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeClock {
    /// `RDTSC`, converted to ns by a calibration against
    /// `CLOCK_MONOTONIC_RAW` over the probe itself.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC_RAW)` (vDSO).
    MonotonicRaw,
    /// `clock_gettime(CLOCK_MONOTONIC)` (the wakeup mode's deadlines).
    Monotonic,
}

impl ProbeClock {
    /// The name printed: `tsc`, `CLOCK_MONOTONIC_RAW`, `CLOCK_MONOTONIC`.
    pub fn name(self) -> &'static str {
        match self {
            ProbeClock::Tsc => "tsc",
            ProbeClock::MonotonicRaw => "CLOCK_MONOTONIC_RAW",
            ProbeClock::Monotonic => "CLOCK_MONOTONIC",
        }
    }
}

/// Sub-buckets per power of two in [`Histogram`]: a value is kept within
/// 1/64 (1.6 %) of itself.
const SUB: u64 = 64;
/// Buckets of [`Histogram`]: exact below 128, then 64 per power of two up
/// to 2^64.
const BUCKETS: usize = ((64 - 6) * SUB + SUB) as usize;

/// A log-linear histogram of `u64` values (ticks of the probe's clock):
/// exact up to 127, then within 1.6 %; constant-time record, fixed size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }
}

impl Histogram {
    fn index(v: u64) -> usize {
        if v < 2 * SUB {
            return v as usize;
        }
        let e = 63 - u64::from(v.leading_zeros());
        let shift = e - 6;
        (shift * SUB + (v >> shift)) as usize
    }

    /// The highest value of bucket `i`.
    fn upper(i: usize) -> u64 {
        let i = i as u64;
        if i < 2 * SUB {
            return i;
        }
        let shift = i / SUB - 1;
        let m = i % SUB + SUB;
        // The top bucket ends at u64::MAX (2^64 - 1).
        (((u128::from(m) + 1) << shift) - 1).min(u128::from(u64::MAX)) as u64
    }

    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
    }

    /// The `q` quantile (0 < q ≤ 1): the upper bound of the bucket holding
    /// the value of rank ⌈q·n⌉ (nearest-rank), so never below the true
    /// value; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::upper(i));
            }
        }
        None
    }
}

/// One gap: its length and when it started, in ticks of the probe's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawGap {
    /// Length, ticks.
    pub len: u64,
    /// Start, ticks of the clock (absolute).
    pub at: u64,
}

/// Buckets of the reported histogram ([`bucket_edges_ns`]): below 1 µs,
/// then 27 powers of two from 1 µs, the last one open.
pub const REPORT_BUCKETS: usize = 28;

/// The lower edges of the reported histogram's buckets, ns: 0, then
/// 1 µs · 2^k for k = 0..=26 (1 µs, 2 µs, 4 µs, … 33.6 s, 67.1 s). A bucket
/// holds the values from its edge up to the next one (excluded); the last,
/// from 2^26 µs (67 s, longer than the longest probe), has no end. Powers
/// of two, as the kernel's own latency histograms (`hist:` triggers'
/// `.log2`, Documentation/trace/histogram.rst) and bcc's `runqlat` bucket
/// them: 27 buckets reach from 1 µs to a minute; oslat's and cyclictest's
/// 1 µs-wide linear buckets would need 60 million.
pub fn bucket_edges_ns() -> [u64; REPORT_BUCKETS] {
    let mut e = [0; REPORT_BUCKETS];
    for (k, edge) in e.iter_mut().enumerate().skip(1) {
        *edge = 1000 << (k - 1);
    }
    e
}

/// What one probe thread recorded, in ticks of its clock.
///
/// Spin mode records only the gaps above the threshold ([`Series::gap`]):
/// a gap below it is the loop's own iteration, not something the CPU did
/// to the program, and a percentile over them measures the loop (p50
/// 11 ns, p99.9 ~40 ns idle or loaded, issue 36). Wakeup mode records
/// every wake-up's latency ([`Series::record`]): each one is a
/// measurement of the kernel's wake-up path.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Every latency (wakeup mode; empty in spin mode).
    pub hist: Histogram,
    /// Samples: clock reads compared (spin), wake-ups (wakeup).
    pub samples: u64,
    /// Smallest sample (`u64::MAX` when none; wakeup mode).
    pub min: u64,
    /// Largest sample: the longest gap between two clock reads, counted
    /// or not (spin), the latest wake-up (wakeup).
    pub max: u64,
    /// Samples above the threshold.
    pub above: u64,
    /// Sum of the samples above the threshold.
    pub lost: u64,
    /// The [`TOP_GAPS`] largest samples above the threshold, largest first.
    pub top: Vec<RawGap>,
    /// Threshold, ticks.
    pub threshold: u64,
    /// The lower edges of the reported buckets in ticks
    /// ([`bucket_edges_ns`] converted with the pre-heat's calibration).
    pub edges: [u64; REPORT_BUCKETS],
    /// Counts per reported bucket: the gaps above the threshold (spin),
    /// every latency (wakeup).
    pub buckets: [u64; REPORT_BUCKETS],
    /// Ticks the spin loop spent on its own housekeeping and did not watch
    /// (the end check every 1024 reads, the recording of a gap): the gap
    /// timer restarts after each, so none is counted as a gap.
    pub housekeeping: u64,
}

impl Series {
    /// An empty series counting samples above `threshold` ticks, with the
    /// reported buckets at `ticks_per_ns` (1.0 for the clock_gettime
    /// clocks; the TSC's rate from the pre-heat).
    pub fn new(threshold: u64, ticks_per_ns: f64) -> Self {
        let mut edges = bucket_edges_ns();
        for e in &mut edges {
            *e = (*e as f64 * ticks_per_ns) as u64;
        }
        Self {
            hist: Histogram::default(),
            samples: 0,
            min: u64::MAX,
            max: 0,
            above: 0,
            lost: 0,
            top: Vec::with_capacity(TOP_GAPS + 1),
            threshold,
            edges,
            buckets: [0; REPORT_BUCKETS],
            housekeeping: 0,
        }
    }

    /// Records a wake-up latency of `len` ticks whose deadline was tick
    /// `at` (wakeup mode): in the percentiles' histogram, the reported
    /// buckets, and, above the threshold, the count and the top list.
    #[inline]
    pub fn record(&mut self, len: u64, at: u64) {
        self.hist.record(len);
        self.samples += 1;
        self.min = self.min.min(len);
        self.max = self.max.max(len);
        self.bucket(len);
        if len > self.threshold {
            self.above += 1;
            self.lost = self.lost.saturating_add(len);
            self.keep_top(RawGap { len, at });
        }
    }

    /// Records a gap above the threshold of `len` ticks that started at
    /// tick `at` (spin mode: the loop counts its reads and keeps the
    /// maximum itself, and calls this only for a gap above the threshold).
    #[cold]
    #[inline(never)]
    pub fn gap(&mut self, len: u64, at: u64) {
        self.above += 1;
        self.lost = self.lost.saturating_add(len);
        self.bucket(len);
        self.keep_top(RawGap { len, at });
    }

    fn bucket(&mut self, len: u64) {
        let i = self.edges.partition_point(|&e| e <= len).max(1) - 1;
        self.buckets[i] += 1;
    }

    fn keep_top(&mut self, g: RawGap) {
        if self.top.len() == TOP_GAPS && self.top[TOP_GAPS - 1].len >= g.len {
            return;
        }
        let pos = self.top.partition_point(|t| t.len >= g.len);
        self.top.insert(pos, g);
        self.top.truncate(TOP_GAPS);
    }
}

/// One of a CPU's largest gaps (spin) or latest wake-ups (wakeup).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Gap {
    /// Length, ns.
    pub ns: u64,
    /// Start (spin), deadline (wakeup), ns after the probe started on this
    /// CPU.
    pub at_ns: u64,
}

/// One bucket of the reported histogram ([`bucket_edges_ns`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Bucket {
    /// Lower edge, ns (included).
    pub from_ns: u64,
    /// Upper edge, ns (excluded); `None` for the last, open bucket.
    pub to_ns: Option<u64>,
    /// Gaps (spin) or wake-ups (wakeup) of that length.
    pub count: u64,
}

/// The wake-up latency's distribution (wakeup mode): every wake-up is a
/// measurement of the kernel's wake-up path, so its percentiles mean
/// something (cyclictest's min, avg and max; its histogram's percentiles).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    /// Smallest latency, ns.
    pub min_ns: u64,
    /// Median, ns (nearest rank, the bucket's upper bound: within 1.6 %).
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
}

/// The measured noise of one CPU, in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuNoise {
    /// The CPU.
    pub cpu: u32,
    /// How it was measured: which fields mean what (pinrun(1) PROBE, JSON).
    pub mode: ProbeMode,
    /// Samples: clock reads compared (spin), wake-ups (wakeup).
    pub samples: u64,
    /// The longest gap between two clock reads (spin; below the threshold
    /// when no gap was counted), the latest wake-up (wakeup), ns.
    pub max_ns: u64,
    /// Samples above the threshold: gaps (spin), late wake-ups (wakeup).
    pub above_threshold: u64,
    /// The gaps' sum, ns: time the CPU was taken from the probe (spin;
    /// the sum of the late wake-ups' latencies in wakeup mode, which
    /// reports it nowhere: a late wake-up loses no CPU time).
    pub lost_ns: u64,
    /// How long the probe measured on this CPU, ns.
    pub duration_ns: u64,
    /// The gaps above the threshold (spin) or every latency (wakeup) per
    /// bucket of [`bucket_edges_ns`], non-empty buckets only, ascending.
    pub histogram: Vec<Bucket>,
    /// The largest gaps (spin) or latest wake-ups (wakeup), largest first.
    pub top: Vec<Gap>,
    /// Wakeup mode's distribution; `None` in spin mode.
    pub latency: Option<Latency>,
    /// Time the spin loop did not watch, spent on its own housekeeping, ns
    /// ([`Series::housekeeping`]; 0 in wakeup mode).
    pub housekeeping_ns: u64,
}

impl CpuNoise {
    /// `100 × (duration − lost) / duration` (spin mode's available share).
    pub fn available_pct(&self) -> f64 {
        if self.duration_ns == 0 {
            0.0
        } else {
            100.0 * (self.duration_ns - self.lost_ns.min(self.duration_ns)) as f64
                / self.duration_ns as f64
        }
    }
}

impl Series {
    /// The series in ns: `ns_per_tick` converts ticks (1.0 for the
    /// clock_gettime clocks; the calibrated period for the TSC); `start`
    /// is the tick the measurement began at and `duration_ns` how long it
    /// ran; `mode` says what was recorded.
    pub fn summarize(
        &self,
        cpu: u32,
        mode: ProbeMode,
        ns_per_tick: f64,
        start: u64,
        duration_ns: u64,
    ) -> CpuNoise {
        let ns = |t: u64| (t as f64 * ns_per_tick).round() as u64;
        let q = |p: f64| ns(self.hist.quantile(p).unwrap_or(0).min(self.max));
        let edges = bucket_edges_ns();
        let histogram = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| Bucket {
                from_ns: edges[i],
                to_ns: edges.get(i + 1).copied(),
                count: *c,
            })
            .collect();
        CpuNoise {
            cpu,
            mode,
            samples: self.samples,
            max_ns: ns(self.max),
            above_threshold: self.above,
            lost_ns: ns(self.lost).min(duration_ns),
            duration_ns,
            histogram,
            top: self
                .top
                .iter()
                .map(|g| Gap {
                    ns: ns(g.len),
                    at_ns: ns(g.at.saturating_sub(start)),
                })
                .collect(),
            latency: (mode == ProbeMode::Wakeup).then(|| Latency {
                min_ns: if self.samples == 0 { 0 } else { ns(self.min) },
                p50_ns: q(0.5),
                p99_ns: q(0.99),
                p999_ns: q(0.999),
            }),
            housekeeping_ns: ns(self.housekeeping),
        }
    }
}

/// `/dev/cpu_dma_latency` during the probe (`--probe-dma-latency`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DmaLatency {
    /// The value written, µs.
    pub us: u32,
    /// The system-wide limit read back from the open file while it was
    /// held, µs (`cpu_latency_qos_read()`: the smallest request of all
    /// holders, kernel/power/qos.c), or why it could not be held.
    pub held: Result<i32, String>,
}

/// A probe's outcome.
#[derive(Debug, Clone)]
pub struct ProbeRun {
    /// What was asked.
    pub request: ProbeRequest,
    /// The clock the samples were read from.
    pub clock: ProbeClock,
    /// The scheduling of the probe threads, in words
    /// (`SCHED_FIFO priority 90`).
    pub sched: String,
    /// One result per probed CPU, ascending.
    pub cpus: Vec<CpuNoise>,
    /// What disturbed each CPU, by CPU (`probe::plan::attribute::attribute`).
    pub sources: BTreeMap<u32, Vec<Source>>,
    /// Why memory could not be locked (`mlockall(2)` failed), if it could not.
    pub mlock_error: Option<String>,
    /// RT throttling's runtime and period (µs) when the probe ran under
    /// SCHED_FIFO/SCHED_RR with throttling on
    /// (`probe::plan::attribute::likely_source`).
    pub rt_throttle: Option<(i64, i64)>,
    /// The probe's real-time priority under SCHED_FIFO/SCHED_RR
    /// (`probe::plan::attribute::likely_source`).
    pub rt_priority: Option<u32>,
    /// `/dev/cpu_dma_latency` as the probe held it (`--probe-dma-latency`);
    /// `None`: not touched.
    pub dma_latency: Option<DmaLatency>,
    /// Attribution in time (issue 36): each CPU's largest gaps lined up
    /// with the sampler's readings around them, or why there was no
    /// sampler (no housekeeping CPU outside the probed ones).
    pub timed: Result<Timed, String>,
    /// `--probe-tracer`: each CPU's largest gaps with the tracer's events
    /// that overlap them, or why the tracer could not run (one line);
    /// `None` when it was not asked for.
    pub traced: Option<Result<Traced, String>>,
}

/// The kind of an osnoise event (`osnoise:irq_noise`, `softirq_noise`,
/// `thread_noise`, `nmi_noise`; include/trace/events/osnoise.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseKind {
    /// A hard IRQ or an x86 system vector (`irq_noise`: its `desc`, e.g.
    /// `local_timer`, and `vector`, the IRQ number or the vector).
    Irq,
    /// A softirq (`softirq_noise`: its vector, e.g. 1 `TIMER`).
    Softirq,
    /// A thread that ran on the CPU (`thread_noise`: comm and pid, the
    /// kernel's TID).
    Thread,
    /// An NMI (`nmi_noise`).
    Nmi,
}

/// One osnoise event on a traced CPU: its kind, the source (`id`: the IRQ
/// number or vector, the softirq vector, the thread's TID; `name`: the
/// IRQ's action name, the softirq's name, the thread's comm), and its time
/// in `CLOCK_MONOTONIC` ns: the event is recorded when the noise ends
/// (the instance's `trace_clock` is `mono`, printed to the µs), and
/// `duration_ns` is its net duration (nested noise subtracted), so it
/// spans `end_ns − duration_ns` to `end_ns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoiseEvent {
    /// What kind of noise.
    pub kind: NoiseKind,
    /// The CPU it ran on (the trace line's `[CPU]`).
    pub cpu: u32,
    /// IRQ number or vector, softirq vector, TID; 0 for an NMI.
    pub id: u32,
    /// IRQ action name, softirq name, comm; empty for an NMI.
    pub name: String,
    /// When it ended, `CLOCK_MONOTONIC` ns.
    pub end_ns: u64,
    /// Its net duration, ns.
    pub duration_ns: u64,
}

/// One source of osnoise events in a gap: every event of the same kind,
/// id and name that overlaps it, their count, and the time they overlap
/// the gap (ns).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TracedSource {
    /// `irq`, `softirq`, `thread` or `nmi`.
    pub kind: NoiseKind,
    /// IRQ number or vector, softirq vector, TID (0 for an NMI).
    pub id: u32,
    /// IRQ action name, softirq name, comm.
    pub name: String,
    /// How many events.
    pub count: u64,
    /// Their time inside the gap, ns.
    pub ns: u64,
}

/// One large gap (or late wake-up) and the osnoise events that overlap
/// it in time, by source, most time first; `named` is the first (the
/// source that took most of the gap), `None` when no event overlaps it
/// (noise the kernel did not see: SMIs, the hypervisor).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TracedGap {
    /// The gap's length, ns.
    pub ns: u64,
    /// Its start after the start of the probe, ns.
    pub at_ns: u64,
    /// The sources whose events overlap it, most time first.
    pub sources: Vec<TracedSource>,
    /// The source that took most of it.
    pub named: Option<TracedSource>,
}

/// What `--probe-tracer` found: the tracer, the tracefs instance it ran
/// in (removed since), how many events it recorded on the probed CPUs
/// and pinrun kept (`events`), how many the kernel lost to a full buffer
/// (`overrun`, the instance's `per_cpu/cpuN/stats`) and how many pinrun
/// read but did not keep (`not_kept`, past its bound), and per CPU its
/// largest gaps in the order of [`CpuNoise::top`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traced {
    /// `osnoise`.
    pub tracer: String,
    /// The instance directory, e.g. `/sys/kernel/tracing/instances/pinrun-42`.
    pub instance: String,
    /// Events read and kept.
    pub events: u64,
    /// Events the ring buffer dropped, as the kernel counts them (the
    /// `overrun:` lines of the instance's `per_cpu/cpuN/stats`).
    pub overrun: u64,
    /// Events read past pinrun's bound of events kept
    /// (`probe::read::MAX_TRACE_EVENTS`, 1 000 000): counted, not kept,
    /// nor attributed; pinrun's own limit, never the kernel's count.
    pub not_kept: u64,
    /// Per CPU, its largest gaps with their events.
    pub gaps: BTreeMap<u32, Vec<TracedGap>>,
}

/// The sampler's outcome: its period, how many samples it kept, and per
/// probed CPU its largest gaps (latest wake-ups) in time, in the order of
/// [`CpuNoise::top`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timed {
    /// The sampler's period, ns.
    pub period_ns: u64,
    /// Samples read.
    pub samples: usize,
    /// The CPU time the sampler used, ns ([`crate::ffi`]'s
    /// `thread_cpu_ns`, on its housekeeping CPU).
    pub cpu_ns: u64,
    /// Per CPU, its largest gaps lined up with the samples.
    pub gaps: BTreeMap<u32, Vec<TimedGap>>,
}

/// One large gap (or late wake-up) lined up with the two samples around
/// it: what changed on its CPU between the last sample read before it
/// started and the first read after it ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TimedGap {
    /// The gap's length, ns.
    pub ns: u64,
    /// Its start after the start of the probe, ns ([`Gap::at_ns`]).
    pub at_ns: u64,
    /// The window's length, ns: from the start of the sample before the
    /// gap to the end of the one after it; `None` when no sample was read
    /// on one side of it (the probe's first or last moments).
    pub window_ns: Option<u64>,
    /// What changed on the CPU in the window (`probe::plan::attribute`), the probe's
    /// own timer subtracted from `LOC` in wakeup mode, and under RT
    /// throttling the throttling instead of the lower-priority tasks that
    /// ran while the probe was stopped.
    pub sources: Vec<Source>,
    /// The likely cause (`probe::plan::attribute::likely_source` over
    /// `sources`).
    pub likely_source: Option<Source>,
}

/// A per-CPU counter file: `/proc/interrupts` or `/proc/softirqs`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// The CPU of each column (the header's `CPUn`: online CPUs only).
    pub cpus: Vec<u32>,
    /// The rows, by label (`0`, `24`, `LOC`, `TIMER`).
    pub rows: BTreeMap<String, CounterRow>,
}

/// A row of a [`Counters`] file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CounterRow {
    /// One count per column of [`Counters::cpus`] (missing ones are 0).
    pub counts: Vec<u64>,
    /// The text after the counts (`IO-APIC 2-edge timer`,
    /// `Local timer interrupts`); empty in `/proc/softirqs`.
    pub desc: String,
}

impl Counters {
    /// The count of row `label` on `cpu` (0 when either is missing).
    pub fn count(&self, label: &str, cpu: u32) -> u64 {
        let Some(col) = self.cpus.iter().position(|&c| c == cpu) else {
            return 0;
        };
        self.rows
            .get(label)
            .and_then(|r| r.counts.get(col))
            .copied()
            .unwrap_or(0)
    }
}

/// One task's CPU time and last CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskTime {
    /// Thread group (process) id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// `comm`.
    pub comm: String,
    /// The CPU it last ran on (field 39 of `stat`).
    pub cpu: u32,
    /// Time it has run, ns (`schedstat`'s first field, else utime + stime).
    pub runtime_ns: u64,
    /// Its real-time priority (field 40 of `stat`; 0 for the other policies).
    pub rt_priority: u32,
    /// What kind of kernel thread it is; `None` for a user task
    /// ([`KernelThread::from_stat`]).
    pub kernel: Option<KernelThread>,
}

/// `PF_KTHREAD` (include/linux/sched.h): field 9 (`flags`) of
/// `/proc/PID/stat` has it for a kernel thread.
pub const PF_KTHREAD: u64 = 0x0020_0000;
/// `PF_NO_SETAFFINITY` (include/linux/sched.h, "Userland is not allowed
/// to meddle with cpus_mask"): set by `kthread_bind()` and
/// `kthread_bind_mask()`; `sched_setaffinity(2)` on such a task fails
/// with EINVAL (kernel/sched/syscalls.c).
pub const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// A kernel thread, by what can move it off a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelThread {
    /// Bound to its CPU by the kernel (`kthread_bind()`: `ksoftirqd/N`,
    /// `migration/N`, `cpuhp/N`, a per-CPU `kworker/N:M`): nothing moves
    /// it (`sched_setaffinity(2)`: EINVAL); only boot parameters keep its
    /// work off the CPU.
    PerCpu,
    /// A worker of the unbound workqueues (`kworker/uN:M`, and the
    /// rescuers `kworker/R-NAME`; `PF_NO_SETAFFINITY` too): it runs where
    /// the workqueue cpumask (`/sys/devices/virtual/workqueue/cpumask`,
    /// `workqueue.unbound_cpus=` at boot) allows.
    UnboundWorker,
    /// Any other kernel thread (`rcu_preempt`, `kswapd0`, `irq/N-NAME`):
    /// `sched_setaffinity(2)` moves it (as root: `taskset -pc`).
    Movable,
}

impl KernelThread {
    /// The kind of the task of `stat` (a `/proc/PID/stat` line): from its
    /// `flags` (field 9: [`PF_KTHREAD`], [`PF_NO_SETAFFINITY`]) and, for
    /// a bound one, its `comm` (the workqueue names its unbound workers
    /// `kworker/u…` and rescuers `kworker/R-…`, kernel/workqueue.c);
    /// `None` for a user task or a line without field 9.
    pub fn from_stat(stat: &str) -> Option<KernelThread> {
        let comm = stat.get(stat.find('(')? + 1..stat.rfind(')')?)?;
        let flags: u64 = stat
            .get(stat.rfind(')')? + 1..)?
            .split_whitespace()
            .nth(6)?
            .parse()
            .ok()?;
        if flags & PF_KTHREAD == 0 {
            None
        } else if flags & PF_NO_SETAFFINITY == 0 {
            Some(KernelThread::Movable)
        } else if comm.starts_with("kworker/u") || comm.starts_with("kworker/R-") {
            Some(KernelThread::UnboundWorker)
        } else {
            Some(KernelThread::PerCpu)
        }
    }
}

/// The kernel's counters at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// `/proc/interrupts`.
    pub interrupts: Counters,
    /// `/proc/softirqs`.
    pub softirqs: Counters,
    /// Every task, by tid.
    pub tasks: BTreeMap<u32, TaskTime>,
    /// Steal time per CPU, ns: the time the hypervisor ran something else
    /// while this virtual CPU wanted to run (`/proc/stat` `cpuN` 8th
    /// value, in USER_HZ ticks; proc_stat(5)). Empty where it is not read.
    pub steal_ns: BTreeMap<u32, u64>,
}

/// What disturbed a CPU during the probe.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Source {
    /// A device IRQ (a numbered row of `/proc/interrupts`).
    Irq {
        /// The IRQ number.
        irq: u32,
        /// Its name (the row's description).
        name: String,
        /// Interrupts on the CPU during the probe.
        count: u64,
        /// Kernel-managed, as `--steer-irqs` found it (its plan's
        /// unmovable IRQs, `probe::plan::attribute::mark_managed`): `true` for a managed queue
        /// IRQ the kernel keeps on its CPU, `false` for one steering moved
        /// or could not move for another reason; absent (`None`) when not
        /// known.
        #[serde(skip_serializing_if = "Option::is_none")]
        managed: Option<bool>,
        /// Steered off this CPU but still delivered here until its next
        /// interrupt (the launch read back its effective affinity on a
        /// claimed CPU: x86 moves an MSI IRQ without interrupt remapping
        /// when it next fires, `irq_move_masked_irq()`); absent when false.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pending: bool,
    },
    /// A per-CPU interrupt: the local timer (`LOC`), an IPI (`RES`, `CAL`,
    /// `TLB`, `IWI`), …
    Interrupt {
        /// The row label (`LOC`).
        label: String,
        /// Its description (`Local timer interrupts`).
        name: String,
        /// Interrupts on the CPU during the probe.
        count: u64,
    },
    /// A softirq (`/proc/softirqs`).
    Softirq {
        /// Its name (`TIMER`, `NET_RX`, `RCU`).
        name: String,
        /// Raised on the CPU during the probe.
        count: u64,
    },
    /// RT throttling (`sched-rt(7)`): a SCHED_FIFO/SCHED_RR task is stopped
    /// for `period - runtime` of every period once it used its runtime;
    /// only ever a likely source, never counted.
    RtThrottling {
        /// `kernel.sched_rt_runtime_us`.
        runtime_us: i64,
        /// `kernel.sched_rt_period_us`.
        period_us: i64,
    },
    /// Steal time (`/proc/stat`): the hypervisor ran another guest or its
    /// own work while this virtual CPU wanted to run.
    Steal {
        /// Steal time on the CPU during the probe, ns (10 ms resolution).
        ns: u64,
    },
    /// A task that ran on the CPU.
    Task {
        /// Process id.
        pid: u32,
        /// Thread id.
        tid: u32,
        /// `comm`.
        comm: String,
        /// Its CPU time during the probe, ns.
        runtime_ns: u64,
        /// Its real-time priority (0: not SCHED_FIFO/SCHED_RR).
        rt_priority: u32,
        /// A kernel thread's kind; absent for a user task.
        #[serde(skip_serializing_if = "Option::is_none")]
        kernel: Option<KernelThread>,
    },
}

impl Source {
    /// The source in words: `IRQ 24 (nvme0q1) ×12`, `LOC (Local timer
    /// interrupts) ×1000`, `softirq TIMER ×1000`, `task stress (pid 42) 310ms`.
    pub fn words(&self) -> String {
        match self {
            Source::Irq {
                irq,
                name,
                count,
                managed: Some(true),
                ..
            } => format!("IRQ {irq} ({name}, kernel-managed) ×{count}"),
            Source::Irq {
                irq,
                name,
                count,
                pending: true,
                ..
            } => format!("IRQ {irq} ({name}, steered, move pending) ×{count}"),
            Source::Irq {
                irq, name, count, ..
            } => format!("IRQ {irq} ({name}) ×{count}"),
            Source::Interrupt { label, name, count } => format!("{label} ({name}) ×{count}"),
            Source::Softirq { name, count } => format!("softirq {name} ×{count}"),
            Source::Steal { ns } => format!(
                "steal time {} (the hypervisor ran something else)",
                crate::words::duration_approx(*ns)
            ),
            Source::RtThrottling {
                runtime_us,
                period_us,
            } => format!(
                "RT throttling (kernel.sched_rt_runtime_us = {runtime_us} of sched_rt_period_us = {period_us}: real-time tasks stop for {} of every period)",
                crate::words::duration_approx(((period_us - runtime_us).max(0) as u64) * 1000)
            ),
            Source::Task {
                pid,
                tid,
                comm,
                runtime_ns,
                kernel,
                ..
            } => {
                let id = if pid == tid {
                    format!("pid {pid}")
                } else {
                    format!("pid {pid} tid {tid}")
                };
                format!(
                    "{} {comm} ({id}) {}",
                    if kernel.is_some() {
                        "kernel thread"
                    } else {
                        "task"
                    },
                    crate::words::duration_approx(*runtime_ns)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value maps into a bucket whose bounds hold it, and buckets
    /// are contiguous and ordered.
    #[test]
    fn histogram_buckets_hold_their_values() {
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let i = Histogram::index(v);
            assert!(Histogram::upper(i) >= v, "{v}");
            if i > 0 {
                assert!(Histogram::upper(i - 1) < v, "{v}");
            }
            // Within 1/64 of the value.
            assert!(Histogram::upper(i) - v <= v / 64 + 1, "{v}");
        }
        assert!(Histogram::index(u64::MAX) < BUCKETS);
    }

    /// Nearest-rank percentiles of a synthetic wake-up series: 990
    /// latencies of 20 ticks, 9 of 1000, one of 50000.
    #[test]
    fn percentiles_of_a_synthetic_latency_series() {
        let mut s = Series::new(100, 1.0);
        let mut t = 0;
        for i in 0..1000u64 {
            let len = match i {
                500 => 50_000,
                _ if i % 100 == 7 && i != 507 => 1000,
                _ => 20,
            };
            s.record(len, t);
            t += len;
        }
        assert_eq!(s.hist.total, 1000);
        let n = s.summarize(3, ProbeMode::Wakeup, 1.0, 0, t);
        let l = n.latency.unwrap();
        assert_eq!((l.min_ns, l.p50_ns, n.max_ns), (20, 20, 50_000));
        // Rank 990 is the last 20; rank 999 a 1000 (1000 lies in a bucket
        // of width 16 whose upper bound is 1007).
        assert_eq!(l.p99_ns, 20);
        assert!((1000..=1007).contains(&l.p999_ns), "{}", l.p999_ns);
        assert_eq!(n.above_threshold, 10);
        assert_eq!(
            n.top[0],
            Gap {
                ns: 50_000,
                at_ns: 495 * 20 + 5 * 1000 // after 495 gaps of 20 and five of 1000
            }
        );
        assert_eq!(n.top.len(), 10);
        // Every latency is in the histogram: 990 below 1 us, 9 in 1-2 us
        // (1000 ns is the edge, included above), one in 32-64 us.
        assert_eq!(
            n.histogram,
            [
                Bucket {
                    from_ns: 0,
                    to_ns: Some(1000),
                    count: 990
                },
                Bucket {
                    from_ns: 1000,
                    to_ns: Some(2000),
                    count: 9
                },
                Bucket {
                    from_ns: 32_000,
                    to_ns: Some(64_000),
                    count: 1
                },
            ]
        );
    }

    /// The reported buckets: powers of two from 1 us, each holding its
    /// lower edge and not its upper one, the last one open; a spin
    /// series counts only its gaps there, in ticks converted by the
    /// calibration (3 ticks per ns: 2999 ticks are 999.7 ns, under 1 us).
    #[test]
    fn buckets_are_powers_of_two_from_one_microsecond() {
        let e = bucket_edges_ns();
        assert_eq!(e[..5], [0, 1000, 2000, 4000, 8000]);
        assert_eq!(e[REPORT_BUCKETS - 1], 67_108_864_000); // 2^26 us, 67 s
        let mut s = Series::new(0, 3.0);
        for ticks in [2999, 3000, 5999, 6000, 3 * 67_108_864_000, u64::MAX] {
            s.gap(ticks, 0);
        }
        let n = s.summarize(0, ProbeMode::Spin, 1.0 / 3.0, 0, u64::MAX);
        let got: Vec<(u64, Option<u64>, u64)> = n
            .histogram
            .iter()
            .map(|b| (b.from_ns, b.to_ns, b.count))
            .collect();
        assert_eq!(
            got,
            [
                (0, Some(1000), 1),
                (1000, Some(2000), 2),
                (2000, Some(4000), 1),
                (67_108_864_000, None, 2)
            ]
        );
        assert!(n.latency.is_none());
    }

    /// A spin series: only the gaps above the threshold, their sum and
    /// the available share.
    #[test]
    fn spin_series_counts_gaps_and_time_lost() {
        let mut s = Series::new(1000, 1.0);
        s.samples = 1_000_000;
        s.max = 50_000;
        s.gap(50_000, 500);
        s.gap(2_000, 90_000);
        let n = s.summarize(1, ProbeMode::Spin, 1.0, 0, 1_000_000);
        assert_eq!(
            (n.above_threshold, n.lost_ns, n.max_ns),
            (2, 52_000, 50_000)
        );
        assert!((n.available_pct() - 94.8).abs() < 1e-9);
        assert_eq!(
            n.top[1],
            Gap {
                ns: 2000,
                at_ns: 90_000
            }
        );
    }

    /// The top list keeps the largest TOP_GAPS, largest first.
    #[test]
    fn top_gaps_are_the_largest() {
        let mut s = Series::new(0, 1.0);
        for i in 1..=100u64 {
            s.record(i * 7 % 101, i);
        }
        let lens: Vec<u64> = s.top.iter().map(|g| g.len).collect();
        assert_eq!(lens, vec![100, 99, 98, 97, 96, 95, 94, 93, 92, 91]);
    }

    /// TSC ticks are converted with the calibrated period.
    #[test]
    fn tsc_ticks_convert_to_ns() {
        let mut s = Series::new(3000, 3.0);
        s.record(30, 1000);
        s.record(30_000, 2000);
        let n = s.summarize(0, ProbeMode::Wakeup, 1.0 / 3.0, 1000, 1_000_000);
        assert_eq!(
            (n.latency.unwrap().min_ns, n.max_ns, n.lost_ns),
            (10, 10_000, 10_000)
        );
        assert_eq!(n.top[0].at_ns, 333);
        // 30 ticks are 10 ns (below 1 us), 30000 are 10 us (8-16 us).
        let b: Vec<u64> = n.histogram.iter().map(|b| b.from_ns).collect();
        assert_eq!(b, [0, 8000]);
    }

    /// Kernel threads by what moves them, from `/proc/PID/stat` lines of
    /// this host (kernel 6.18): `ksoftirqd/1` and a per-CPU kworker carry
    /// PF_NO_SETAFFINITY (their Cpus_allowed_list is their CPU), an
    /// unbound kworker and a rescuer too (0-1, the workqueue cpumask),
    /// `rcu_preempt` and `irq/24-ACPI:Ged` only PF_KTHREAD; bash neither.
    #[test]
    fn kernel_threads_are_told_by_their_flags() {
        let kind = KernelThread::from_stat;
        let line = |pid: u32, comm: &str, flags: u64| {
            format!(
                "{pid} ({comm}) S 2 0 0 0 -1 {flags} 0 0 0 0 6 4415 0 0 20 0 1 0 6 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0"
            )
        };
        assert_eq!(
            kind(&line(24, "ksoftirqd/1", 69238848)),
            Some(KernelThread::PerCpu)
        );
        assert_eq!(
            kind(&line(1664, "kworker/1:0-virtio_vsock", 69238880)),
            Some(KernelThread::PerCpu)
        );
        assert_eq!(
            kind(&line(50, "kworker/u9:0", 69238880)),
            Some(KernelThread::UnboundWorker)
        );
        assert_eq!(
            kind(&line(4, "kworker/R-rcu_gp", 69238880)),
            Some(KernelThread::UnboundWorker)
        );
        assert_eq!(
            kind(&line(15, "rcu_preempt", 2129984)),
            Some(KernelThread::Movable)
        );
        assert_eq!(
            kind(&line(52, "irq/24-ACPI:Ged", 2129984)),
            Some(KernelThread::Movable)
        );
        assert_eq!(kind(&line(1616, "bash", 0x400040)), None);
        // A comm with spaces and parentheses does not shift the fields.
        assert_eq!(kind(&line(9, "a) (b c", 0x400040)), None);
        assert_eq!(kind("9 (x) S"), None);
    }
}
