//! IRQ steering (`--steer-irqs`, `--reclaim`; issue 21), a wing in one
//! folder (issue 32): this file is its vocabulary, and its other files are
//! its layers, each using the core's layers up to its own and the wing's
//! files below it (ARCHITECTURE.md §2, checked by scripts/import-graph.sh):
//! [`read`] (`/proc/irq`, the journals, irqbalance; the system layer),
//! [`plan`] (what to write and what to restore; pure), [`report`] (text and
//! JSON), [`apply`] (the writes, the journal, the undo) and [`run`] (the
//! flow the application layer calls). The core imports none of them.
//!
//! The vocabulary: the write-ahead journal a steering launch keeps in the
//! state directory, and what each errno of a
//! `/proc/irq/N/smp_affinity_list` open or write means ([`classify`]). No
//! I/O here.
//!
//! The journal is one file per steering launch, named
//! `steer.<pid>.<start_time>.journal` ([`journal_name`]; never the shape of
//! a claim record, [`crate::claims::record_pid`]), written with `O_EXCL` and
//! fsync'ed (file and directory) before the first IRQ is written. It holds
//! the launch's PID namespace (as a claim record names it: a pinrun of
//! another namespace never takes the PID for one of its own processes),
//! the claimed CPUs, the original default mask and, per IRQ, its number,
//! name, original and written cpulists (and, optionally, its original
//! effective affinity), as one JSON object (version 1),
//! at most [`MAX_JOURNAL`] bytes. When irqbalance runs with its control
//! socket, the journal also holds its ban list before the launch changed
//! it ([`JournalBan`], added to version 1 as an optional key).
//!
//! irqbalance's control socket (irqbalance ≥ 1.5.0:
//! `/run/irqbalance/irqbalance<PID>.sock`, a unix stream socket;
//! `irqbalance.c` `init_socket()`, `sock_handle()`): one command per
//! connection, sent in one message with `SCM_CREDENTIALS` of uid 0.
//! `setup` answers `SLEEP <s> [IRQ <n> LOAD <l> DIFF <d> CLASS <c> ]…BANNED
//! <mask>` ([`parse_setup`]); `settings cpus <cpulist>` REPLACES the banned
//! CPUs (isolated ∪ nohz_full, or `IRQBALANCE_BANNED_CPULIST`, by default)
//! from its next rescan on, and `settings cpus NULL` returns to that
//! default ([`ban_command`]). 1.2.0–1.4.0 bound an abstract socket with
//! no PID in its name, and ≥ 1.5.0 falls back to an all-zero abstract name
//! when `/run/irqbalance` is not writable: pinrun cannot tell which daemon
//! answers there, and treats such a daemon as one without a socket.

pub mod apply;
pub mod plan;
pub mod read;
pub mod report;
pub mod run;

use crate::cpuset::CpuSet;
use nix::errno::Errno;
use serde::{Deserialize, Serialize};

/// The journal format's version.
pub const JOURNAL_VERSION: u32 = 1;
/// The largest journal read or written (4 MiB: 10 000 IRQs with cpulists
/// of a few hundred characters each).
pub const MAX_JOURNAL: usize = 4 << 20;

/// One IRQ a launch wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalIrq {
    /// The IRQ number (`/proc/irq/N`).
    pub irq: u32,
    /// Its device name (the last word of its `/proc/interrupts` row).
    pub name: String,
    /// `smp_affinity_list` before this launch wrote it (a cpulist).
    pub original: String,
    /// What this launch wrote (a cpulist).
    pub written: String,
    /// `effective_affinity_list` before this launch wrote it (a cpulist):
    /// the CPU(s) the IRQ fired on. An undo puts it back there
    /// ([`crate::steer::plan::pre_write`]); absent in journals of older
    /// pinrun versions and when the kernel has no effective affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective: Option<String>,
}

/// irqbalance's ban list as a steering launch changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalBan {
    /// The daemon's PID (its socket is `/run/irqbalance/irqbalance<PID>.sock`).
    pub pid: u32,
    /// Its banned CPUs before (the `setup` reply's `BANNED`), a cpulist.
    pub original: String,
    /// What it bans without a ban set through the socket (its environment's
    /// `IRQBALANCE_BANNED_CPUS`/`IRQBALANCE_BANNED_CPULIST`, else isolated
    /// ∪ nohz_full), a cpulist: a restore to exactly this sends `NULL`.
    pub default: String,
    /// The ban this launch sent (`original ∪ cpus`), a cpulist.
    pub written: String,
}

/// A steering launch's write-ahead journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// [`JOURNAL_VERSION`].
    pub version: u32,
    /// The launch's PID (the command's, after exec).
    pub pid: u32,
    /// Its start time (field 22 of `/proc/PID/stat`, clock ticks since
    /// boot): a reused PID is not the holder.
    pub start_time: u64,
    /// The PID namespace `pid` is numbered in (the launch's own, as a
    /// claim record names it: [`crate::claims::Record::pid_ns`]), so that a
    /// pinrun of another namespace never takes `pid` for one of its own
    /// processes and undoes a live launch's steering; absent in journals
    /// of older pinrun versions (`pid` is then the reader's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_ns: Option<crate::claim::PidNs>,
    /// The process group the steering also follows, as the launch's claim
    /// record does ([`crate::claims::Record::pgid`]): the PID itself when
    /// the launch led its group, so the IRQs stay off the claimed CPUs
    /// while the group has a live member after the PID exits (a command
    /// that forks and exits, systemd `Type=forking`); 0 (absent in older
    /// journals): the PID only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pgid: u32,
    /// The CPUs the IRQs were moved off (the claimed CPUs), a cpulist.
    pub cpus: String,
    /// `/proc/irq/default_smp_affinity` before (as a cpulist), when written.
    pub default_original: Option<String>,
    /// What was written there (as a cpulist).
    pub default_written: Option<String>,
    /// Every IRQ written, in write order. An IRQ is added (and the journal
    /// re-synced) before its file is written.
    pub irqs: Vec<JournalIrq>,
    /// irqbalance's ban, when this launch changed it through the socket;
    /// written (and synced) before the `settings cpus` command is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irqbalance: Option<JournalBan>,
    /// irqbalance's configuration file, when this launch edited it
    /// (`--irqbalance-config`); written (and synced) before the file is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irqbalance_config: Option<JournalConfig>,
}

/// Whether a journal's `pgid` is absent (serde's `skip_serializing_if`).
fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Journal {
    /// An empty journal for the launch `pid` started at `start_time`
    /// steering off `cpus`.
    pub fn new(pid: u32, start_time: u64, cpus: &CpuSet) -> Self {
        Journal {
            version: JOURNAL_VERSION,
            pid,
            start_time,
            pid_ns: None,
            pgid: 0,
            cpus: cpus.to_list(),
            default_original: None,
            default_written: None,
            irqs: Vec::new(),
            irqbalance: None,
            irqbalance_config: None,
        }
    }

    /// The claimed CPUs ([`Journal::cpus`]); empty when unparsable.
    pub fn cpu_set(&self) -> CpuSet {
        CpuSet::parse(&self.cpus).unwrap_or_default()
    }

    /// The journal as written: one JSON object and a newline.
    pub fn render(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Parses a journal; errors say why it is not one (too large, not
    /// JSON, another version, a cpulist that does not parse).
    pub fn parse(text: &str) -> Result<Journal, String> {
        if text.len() > MAX_JOURNAL {
            return Err(format!("{} bytes, more than {MAX_JOURNAL}", text.len()));
        }
        let j: Journal = serde_json::from_str(text).map_err(|e| format!("not a journal: {e}"))?;
        if j.version != JOURNAL_VERSION {
            return Err(format!(
                "version {}, this pinrun reads version {JOURNAL_VERSION}",
                j.version
            ));
        }
        CpuSet::parse(&j.cpus).map_err(|e| format!("cpus {:?}: {e}", j.cpus))?;
        for i in &j.irqs {
            for l in [&i.original, &i.written].into_iter().chain(&i.effective) {
                CpuSet::parse(l).map_err(|e| format!("IRQ {}: cpulist {l:?}: {e}", i.irq))?;
            }
        }
        // A ban may be empty (irqbalance bans no CPU without isolcpus=,
        // nohz_full= or its variables): "" is the empty cpulist here.
        let ban = |l: &String| {
            if l.is_empty() {
                Ok(())
            } else {
                CpuSet::parse(l)
                    .map(|_| ())
                    .map_err(|e| format!("irqbalance ban {l:?}: {e}"))
            }
        };
        if let Some(b) = &j.irqbalance {
            for l in [&b.original, &b.default, &b.written] {
                ban(l)?;
            }
        }
        if let Some(c) = &j.irqbalance_config {
            ban(&c.ban)?;
            if c.original.len() > MAX_CONFIG || c.written.len() > MAX_CONFIG {
                return Err(format!(
                    "irqbalance config {}: more than {MAX_CONFIG} bytes",
                    c.path
                ));
            }
        }
        Ok(j)
    }
}

/// The longest command irqbalance 1.9.4 reads whole: `sock_handle()`
/// receives into `char buff[500]` with one `recvmsg()` (16384 bytes from
/// 1.9.5 on); a longer `settings cpus` would be cut, silently in 1.9.4.
pub const IRQBALANCE_MAX_COMMAND: usize = 499;
/// irqbalance's rebalance interval when its command line does not set
/// one (`constants.h` `SLEEP_INTERVAL`, seconds; `-t N`/`--interval=N`
/// sets another, `settings sleep N` through the socket changes it).
pub const IRQBALANCE_DEFAULT_SLEEP: u32 = 10;

/// The longest rebalance interval pinrun waits on (seconds): a longer one
/// is waited on as this long.
pub const IRQBALANCE_MAX_SLEEP: u32 = 60;

/// What pinrun adds to irqbalance's own delays for the machine (a loaded
/// guest, a slow rebalance pass).
pub const IRQBALANCE_MARGIN: std::time::Duration = std::time::Duration::from_secs(3);

/// How long one exchange with irqbalance (connect, command, its reply or
/// its close) may take when it rebalances every `sleep` seconds: its main
/// loop serves the socket between passes, and before 1.9.4 a pass that
/// rescans the CPU tree (after every `settings cpus`) sleeps its whole
/// interval inside `scan()` (`sleep_approx(sleep_interval)`, removed by
/// commit de0fe4a "Fix socket API being blocked for 10s"): up to `sleep`
/// (at most [`IRQBALANCE_MAX_SLEEP`]) + [`IRQBALANCE_MARGIN`].
pub fn answer_within(sleep: u32) -> std::time::Duration {
    std::time::Duration::from_secs(u64::from(sleep.min(IRQBALANCE_MAX_SLEEP))) + IRQBALANCE_MARGIN
}

/// How long irqbalance may take to show a ban sent with `settings cpus`
/// in its `setup` reply when it rebalances every `sleep` seconds: the
/// command only sets `need_rescan`; the next pass (up to `sleep` later)
/// rebuilds the tree with the new ban (`setup_banned_cpus()`), and before
/// 1.9.4 then sleeps `sleep` more with its socket unserved
/// ([`answer_within`]): 2 × `sleep` (each at most
/// [`IRQBALANCE_MAX_SLEEP`]) + [`IRQBALANCE_MARGIN`].
pub fn ban_within(sleep: u32) -> std::time::Duration {
    std::time::Duration::from_secs(2 * u64::from(sleep.min(IRQBALANCE_MAX_SLEEP)))
        + IRQBALANCE_MARGIN
}

/// irqbalance's rebalance interval from its command line `argv` (without
/// the program name), as `irqbalance.c` `parse_command_line()` reads it
/// with `getopt_long(argc, argv, "odfjVi:p:s:c:l:m:t:e:", …)`: `-t N`,
/// `-tN`, a cluster ending in `t` (`-ft N`), `--interval N`,
/// `--interval=N`; the last one wins; [`IRQBALANCE_DEFAULT_SLEEP`] without
/// one (or when it is not a number ≥ 1, which irqbalance refuses).
pub fn irqbalance_interval(argv: &[String]) -> u32 {
    const WITH_VALUE: &str = "ipsclmte";
    let mut sleep = IRQBALANCE_DEFAULT_SLEEP;
    let mut set = |v: &str| {
        if let Ok(n) = v.trim().parse::<u32>()
            && n >= 1
        {
            sleep = n;
        }
    };
    let mut args = argv.iter();
    while let Some(a) = args.next() {
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some(("interval", v)) => set(v),
                None if long == "interval" => {
                    if let Some(v) = args.next() {
                        set(v);
                    }
                }
                _ => {}
            }
            continue;
        }
        let Some(short) = a.strip_prefix('-') else {
            continue;
        };
        for (i, c) in short.char_indices() {
            if WITH_VALUE.contains(c) {
                let rest = &short[i + c.len_utf8()..];
                let v = if rest.is_empty() {
                    args.next().map(String::as_str)
                } else {
                    Some(rest)
                };
                if c == 't'
                    && let Some(v) = v
                {
                    set(v);
                }
                break;
            }
        }
    }
    sleep
}

/// The most read from irqbalance's socket for one reply (its `setup`
/// reply is `SLEEP`, the banned IRQs and a mask: well under this).
pub const IRQBALANCE_MAX_REPLY: usize = 64 << 10;

/// irqbalance's `setup` reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqbalanceSetup {
    /// Its rebalance interval, seconds (`SLEEP`).
    pub sleep: u32,
    /// The IRQs it does not balance (`IRQ n …` entries).
    pub banned_irqs: Vec<u32>,
    /// Its banned CPUs (`BANNED`, a hex cpumask of comma-separated 32-bit
    /// groups, `bitmap_scnprintf()`).
    pub banned: CpuSet,
}

/// Parses irqbalance's reply to `setup`, as `irqbalance.c` `sock_handle()`
/// writes it (`"SLEEP %d "`, then per banned IRQ `get_irq_data()`'s
/// `"IRQ %d LOAD %lu DIFF %lu CLASS %d "`, then `"BANNED %s"` with
/// `cpumask_scnprintf()`) and `ui/irqbalance-ui.c` `parse_setup()` reads
/// it. Errors say what is missing or malformed.
pub fn parse_setup(text: &str) -> Result<IrqbalanceSetup, String> {
    if text.len() > IRQBALANCE_MAX_REPLY {
        return Err(format!(
            "{} bytes, more than {IRQBALANCE_MAX_REPLY}",
            text.len()
        ));
    }
    let mut w = text.split_ascii_whitespace();
    let num = |w: Option<&str>, what: &str| -> Result<u64, String> {
        w.and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("{what} is not a number"))
    };
    if w.next() != Some("SLEEP") {
        return Err("no SLEEP at its start".into());
    }
    let sleep = u32::try_from(num(w.next(), "SLEEP")?).map_err(|_| "SLEEP out of range")?;
    let mut banned_irqs = Vec::new();
    loop {
        match w.next() {
            Some("IRQ") => {
                let n = u32::try_from(num(w.next(), "IRQ")?).map_err(|_| "IRQ out of range")?;
                for key in ["LOAD", "DIFF", "CLASS"] {
                    if w.next() != Some(key) {
                        return Err(format!("IRQ {n}: no {key}"));
                    }
                    // CLASS is a signed int in irqbalance; LOAD/DIFF unsigned.
                    let v = w.next().unwrap_or("");
                    if v.trim_start_matches('-').parse::<u64>().is_err() {
                        return Err(format!("IRQ {n}: {key} is not a number"));
                    }
                }
                banned_irqs.push(n);
            }
            Some("BANNED") => break,
            Some(other) => return Err(format!("unexpected {other:?}")),
            None => return Err("no BANNED".into()),
        }
    }
    let mask = w.next().ok_or("BANNED without a mask")?;
    if w.next().is_some() {
        return Err("words after the BANNED mask".into());
    }
    let banned = CpuSet::parse_sysfs_mask(mask).map_err(|e| format!("BANNED {mask:?}: {e}"))?;
    Ok(IrqbalanceSetup {
        sleep,
        banned_irqs,
        banned,
    })
}

/// The command that makes irqbalance ban exactly `ban`, `default` being
/// what it bans on its own: `settings cpus NULL` when they are equal (back
/// to its own ban: `setup_banned_cpus()` then follows isolcpus/nohz_full
/// again), else `settings cpus <cpulist>` (`cpulist_parse()`). Errors: an
/// empty ban that is not its default (irqbalance reads an empty list as
/// NULL, and 1.9.4 dereferences it), or a command longer than
/// [`IRQBALANCE_MAX_COMMAND`].
pub fn ban_command(ban: &CpuSet, default: &CpuSet) -> Result<String, String> {
    if ban == default {
        return Ok("settings cpus NULL".into());
    }
    if ban.is_empty() {
        return Err(format!(
            "irqbalance cannot be told to ban no CPU while its own ban is {}",
            default.to_list()
        ));
    }
    let c = format!("settings cpus {}", ban.to_list());
    if c.len() > IRQBALANCE_MAX_COMMAND {
        return Err(format!(
            "the command is {} bytes; irqbalance reads at most {IRQBALANCE_MAX_COMMAND}",
            c.len()
        ));
    }
    Ok(c)
}

/// The journal's file name in the state directory.
pub fn journal_name(pid: u32, start_time: u64) -> String {
    format!("steer.{pid}.{start_time}.journal")
}

/// The (pid, start time) of a journal file name, when `name` has the shape
/// of [`journal_name`].
pub fn journal_owner(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix("steer.")?.strip_suffix(".journal")?;
    let (pid, start) = rest.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(start) {
        return None;
    }
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Which system call on an IRQ's `smp_affinity_list` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `open(2)` for writing.
    Open,
    /// `write(2)` of the cpulist.
    Write,
}

/// What an errno of [`Stage`] means for steering
/// (`kernel/irq/proc.c` `write_irq_affinity()`, `kernel/irq/manage.c`
/// `irq_set_affinity_locked()`, `kernel/irq/matrix.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// EACCES/EPERM at open, EROFS: not permitted; refuse before any
    /// change.
    Refuse,
    /// EIO at write (`irq_can_set_affinity_usr()` false: kernel-managed or
    /// per-CPU) or EPERM at write: the kernel keeps it; skip and report.
    Unmovable,
    /// ENOSPC: no vector left on the target CPUs
    /// (`irq_matrix_alloc()`); try another housekeeping subset.
    NoVector,
    /// EINVAL: no online CPU in the mask (`irq_do_set_affinity()`): a CPU
    /// went offline; re-read the online CPUs and retry once.
    Offline,
    /// Anything else: undo everything written, exit 125.
    Undo,
}

/// The disposition of `errno` at `stage`.
pub fn classify(stage: Stage, errno: Errno) -> Disposition {
    match (stage, errno) {
        (Stage::Open, Errno::EACCES | Errno::EPERM | Errno::EROFS) => Disposition::Refuse,
        (Stage::Write, Errno::EIO | Errno::EPERM) => Disposition::Unmovable,
        (Stage::Write, Errno::ENOSPC) => Disposition::NoVector,
        (Stage::Write, Errno::EINVAL) => Disposition::Offline,
        _ => Disposition::Undo,
    }
}

/// What pinrun writes to `/proc/irq/N/smp_affinity_list` to ask the
/// kernel whether it keeps IRQ `N` where it is, when debugfs does not say:
/// not a cpulist, so nothing is ever applied. `write_irq_affinity()`
/// (`kernel/irq/proc.c`) returns EIO before it parses anything when
/// `irq_can_set_affinity_usr()` is false (kernel-managed, per-CPU or not
/// balanceable), and otherwise the parser's EINVAL
/// (`cpumask_parselist_user()`); never an empty text, which the kernel
/// takes as "reset to the default affinity" (`irq_select_affinity_usr()`).
pub const TEST_WRITE: &str = "x";

/// The kernel's answer to [`TEST_WRITE`]: `Some(true)` when it keeps the
/// IRQ (EIO; EPERM on some kernels, as [`classify`] at write), `Some(false)`
/// when it parsed the text (EINVAL: the IRQ's affinity can be set),
/// `None` for anything else (not asked, not permitted, a write that
/// succeeded).
pub fn kernel_keeps(answer: Result<(), Errno>) -> Option<bool> {
    match answer {
        Err(Errno::EIO | Errno::EPERM) => Some(true),
        Err(Errno::EINVAL) => Some(false),
        _ => None,
    }
}

/// The two variables irqbalance reads its own ban from (`cputree.c`
/// `setup_banned_cpus()`): the hex `IRQBALANCE_BANNED_CPUS` (the only one
/// up to 1.7; from 1.8.0 deprecated but, when set and not empty, still
/// taking precedence) and the cpulist `IRQBALANCE_BANNED_CPULIST`
/// (1.8.0 on).
pub const BAN_VARS: [&str; 2] = ["IRQBALANCE_BANNED_CPUS", "IRQBALANCE_BANNED_CPULIST"];

/// The largest irqbalance configuration file `--irqbalance-config` edits
/// and journals (64 KiB; the shipped ones are under 2 KiB).
pub const MAX_CONFIG: usize = 64 << 10;

/// One assignment line of a systemd `EnvironmentFile=` (systemd.exec(5)):
/// `KEY=VALUE`, leading blanks and blanks around `=` ignored, a value in
/// single or double quotes unquoted; lines starting with `#` or `;` are
/// comments. `Err` for what this reader does not take as systemd does
/// (a backslash: escapes and line continuations), so an edit never
/// changes a value it misread.
fn env_assignment(line: &str) -> Result<Option<(&str, String)>, String> {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
        return Ok(None);
    }
    let Some((k, v)) = t.split_once('=') else {
        return Ok(None);
    };
    let k = k.trim_end();
    if line.contains('\\') {
        return Err(format!(
            "line {line:?} has a backslash (an escape or continuation this editor does not take)"
        ));
    }
    let v = v.trim();
    let v = match (v.chars().next(), v.chars().last()) {
        (Some(q @ ('"' | '\'')), Some(e)) if v.len() >= 2 && e == q => &v[1..v.len() - 1],
        (Some('"' | '\''), _) => return Err(format!("line {line:?} has an unmatched quote")),
        _ => v,
    };
    Ok(Some((k, v.to_string())))
}

/// The value the systemd `EnvironmentFile=` `text` gives `key` (the last
/// assignment wins, as systemd loads them in order); `None` when unset.
/// `Err` as [`env_assignment`].
pub fn env_file_value(text: &str, key: &str) -> Result<Option<String>, String> {
    let mut v = None;
    for line in text.lines() {
        if let Some((k, val)) = env_assignment(line)?
            && k == key
        {
            v = Some(val);
        }
    }
    Ok(v)
}

/// irqbalance's configuration `text` with its own ban set to `ban`, for
/// every irqbalance version: `IRQBALANCE_BANNED_CPULIST=<cpulist>` and
/// `IRQBALANCE_BANNED_CPUS=<hex mask>` (both the same CPUs: 1.2–1.7 read
/// only the hex mask, 1.8+ prefer it when set). Each replaces the last
/// assignment of its variable; without one, the line is added after the
/// shipped commented template (`#IRQBALANCE_BANNED_CPULIST=` in Debian's
/// `/etc/default/irqbalance` and irqbalance's `misc/irqbalance.env`), else
/// at the end. Every other line is kept byte for byte. `Err`: larger than
/// [`MAX_CONFIG`], an empty `ban`, or a line [`env_assignment`] refuses.
pub fn config_edit(text: &str, ban: &CpuSet) -> Result<String, String> {
    if text.len() > MAX_CONFIG {
        return Err(format!("{} bytes, more than {MAX_CONFIG}", text.len()));
    }
    if ban.is_empty() {
        return Err("an empty ban".into());
    }
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    for (key, value) in [(BAN_VARS[0], ban.to_mask()), (BAN_VARS[1], ban.to_list())] {
        let new = format!("{key}={value}\n");
        let mut last = None;
        let mut template = None;
        for (i, l) in lines.iter().enumerate() {
            if let Some((k, _)) = env_assignment(l)?
                && k == key
            {
                last = Some(i);
            }
            let c = l.trim_start();
            if c.strip_prefix('#')
                .is_some_and(|c| c.trim_start().starts_with(&format!("{key}=")))
            {
                template = Some(i);
            }
        }
        match (last, template) {
            (Some(i), _) => {
                lines[i] = new;
            }
            (None, Some(i)) => {
                if !lines[i].ends_with('\n') {
                    lines[i].push('\n');
                }
                lines.insert(i + 1, new);
            }
            (None, None) => {
                if lines.last().is_some_and(|l| !l.ends_with('\n')) {
                    lines.last_mut().unwrap().push('\n');
                }
                lines.push(new);
            }
        }
    }
    Ok(lines.concat())
}

/// The ban irqbalance reads from configuration `text` as its
/// `setup_banned_cpus()` does: a non-empty `IRQBALANCE_BANNED_CPUS` (hex),
/// else `IRQBALANCE_BANNED_CPULIST`; `Ok(None)` when neither is set
/// (it bans the isolated and nohz_full CPUs then).
pub fn config_ban(text: &str) -> Result<Option<CpuSet>, String> {
    if let Some(m) = env_file_value(text, BAN_VARS[0])?.filter(|m| !m.is_empty()) {
        return CpuSet::parse_sysfs_mask(&m)
            .map(Some)
            .map_err(|e| format!("{}={m:?}: {e}", BAN_VARS[0]));
    }
    match env_file_value(text, BAN_VARS[1])? {
        Some(l) => CpuSet::parse_sysfs_list(&l, None)
            .map(Some)
            .map_err(|e| format!("{}={l:?}: {e}", BAN_VARS[1])),
        None => Ok(None),
    }
}

/// What `systemctl show -p MainPID -p ActiveState -p EnvironmentFiles
/// UNIT` says: the unit's main PID (0: none), its active state, and its
/// environment files in load order, each with whether a missing file is
/// ignored (`-` in the unit, `(ignore_errors=yes)` in the output).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitShow {
    /// `MainPID=`.
    pub main_pid: u32,
    /// `ActiveState=` (`active`, `inactive`, `failed`, …).
    pub active_state: String,
    /// `EnvironmentFiles=` lines: (path, ignore_errors).
    pub environment_files: Vec<(std::path::PathBuf, bool)>,
}

/// Parses `systemctl show` output into a [`UnitShow`]; other properties
/// are ignored.
pub fn parse_unit_show(text: &str) -> UnitShow {
    let mut u = UnitShow::default();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("MainPID=") {
            u.main_pid = v.trim().parse().unwrap_or(0);
        } else if let Some(v) = line.strip_prefix("ActiveState=") {
            u.active_state = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("EnvironmentFiles=") {
            let (path, ignore) = match v.rsplit_once(" (ignore_errors=") {
                Some((p, rest)) => (p, rest.starts_with("yes")),
                None => (v.trim(), false),
            };
            if !path.is_empty() {
                u.environment_files.push((path.into(), ignore));
            }
        }
    }
    u
}

/// irqbalance's configuration file as a steering launch edited it
/// (`--irqbalance-config`), journaled before the file is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalConfig {
    /// The daemon's PID before the restart.
    pub pid: u32,
    /// The file (an `EnvironmentFile=` of `irqbalance.service`).
    pub path: String,
    /// Its bytes before the first live launch edited it (at most
    /// [`MAX_CONFIG`]; shared by every live launch's journal).
    pub original: String,
    /// The daemon's own ban before the first live launch (its
    /// `/proc/PID/environ`, else isolated ∪ nohz_full), a cpulist.
    pub ban: String,
    /// The file's bytes as pinrun last wrote them (kept equal in every
    /// live launch's journal).
    pub written: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replies as `sock_handle()` (irqbalance.c, 1.9.4 and master) writes
    /// them: `"SLEEP %d "`, `get_irq_data()` per banned IRQ, `"BANNED %s"`
    /// from `bitmap_scnprintf()` (32-bit groups, leading zero groups left
    /// out, the last always written).
    #[test]
    fn irqbalance_setup_reply() {
        let s = parse_setup("SLEEP 10 BANNED 00000000").unwrap();
        assert_eq!((s.sleep, s.banned_irqs.len()), (10, 0));
        assert!(s.banned.is_empty());
        let s = parse_setup(
            "SLEEP 1 IRQ 24 LOAD 0 DIFF 0 CLASS 5 IRQ 31 LOAD 17 DIFF 3 CLASS -1 BANNED 0000f0f0",
        )
        .unwrap();
        assert_eq!(s.sleep, 1);
        assert_eq!(s.banned_irqs, [24, 31]);
        assert_eq!(s.banned.to_list(), "4-7,12-15");
        // CPU 32 and 1: two groups.
        let s = parse_setup("SLEEP 10 BANNED 00000001,00000002").unwrap();
        assert_eq!(s.banned.to_list(), "1,32");
        for bad in [
            "",
            "BANNED 0",
            "SLEEP x BANNED 0",
            "SLEEP 10 ",
            "SLEEP 10 BANNED",
            "SLEEP 10 IRQ 3 LOAD 1 BANNED 0",
            "SLEEP 10 BANNED 0 extra",
            "SLEEP 10 BANNED zz",
        ] {
            assert!(parse_setup(bad).is_err(), "{bad:?}");
        }
        assert!(
            parse_setup(&format!(
                "SLEEP 1 BANNED {}",
                "0".repeat(IRQBALANCE_MAX_REPLY)
            ))
            .is_err()
        );
    }

    #[test]
    fn irqbalance_interval_from_its_command_line() {
        let v =
            |a: &[&str]| irqbalance_interval(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(v(&[]), 10);
        assert_eq!(v(&["--foreground"]), 10);
        assert_eq!(v(&["--foreground", "--interval=1"]), 1);
        assert_eq!(v(&["--interval", "4", "-f"]), 4);
        assert_eq!(v(&["-t5"]), 5);
        assert_eq!(v(&["-ft", "7"]), 7);
        // -i takes a value: the t in it is not -t.
        assert_eq!(v(&["-it", "-t", "3"]), 3);
        assert_eq!(v(&["--banirq=5", "-t", "0"]), 10);
        assert_eq!(v(&["-t", "2", "--interval=6"]), 6);
        assert_eq!(v(&["--", "-t", "2"]), 10);
        // The bounds of an exchange and of a ban's verification.
        assert_eq!(answer_within(10).as_secs(), 13);
        assert_eq!(ban_within(10).as_secs(), 23);
        assert_eq!(ban_within(1000).as_secs(), 123);
    }

    #[test]
    fn irqbalance_ban_commands() {
        let c = |s: &str| CpuSet::parse(s).unwrap();
        assert_eq!(
            ban_command(&c("4-7,16-17"), &c("4-7")).unwrap(),
            "settings cpus 4-7,16-17"
        );
        assert_eq!(
            ban_command(&c("4-7"), &c("4-7")).unwrap(),
            "settings cpus NULL"
        );
        assert_eq!(
            ban_command(&CpuSet::new(), &CpuSet::new()).unwrap(),
            "settings cpus NULL"
        );
        assert!(ban_command(&CpuSet::new(), &c("4")).is_err());
        // Every other CPU of 0-998: longer than 1.9.4's buffer.
        let wide: String = (0..500)
            .map(|i| (2 * i).to_string())
            .collect::<Vec<_>>()
            .join(",");
        assert!(
            ban_command(&c(&wide), &CpuSet::new())
                .unwrap_err()
                .contains("499")
        );
    }

    /// `write_irq_affinity()`: EIO for an IRQ the kernel keeps (the
    /// guest's nvme0q9, the timer IRQ 0), EINVAL from the parser for a
    /// movable one (nvme0q0, a PCIe root port); an open that was refused
    /// or a write that went through tells nothing.
    #[test]
    fn test_write_answers() {
        assert_eq!(kernel_keeps(Err(Errno::EIO)), Some(true));
        assert_eq!(kernel_keeps(Err(Errno::EPERM)), Some(true));
        assert_eq!(kernel_keeps(Err(Errno::EINVAL)), Some(false));
        assert_eq!(kernel_keeps(Err(Errno::EACCES)), None);
        assert_eq!(kernel_keeps(Err(Errno::ENOENT)), None);
        assert_eq!(kernel_keeps(Ok(())), None);
        assert!(CpuSet::parse_sysfs_list(TEST_WRITE, None).is_err());
        assert!(!TEST_WRITE.is_empty());
    }

    #[test]
    fn errno_classifier() {
        use Disposition::*;
        let cases = [
            (Stage::Open, Errno::EACCES, Refuse),
            (Stage::Open, Errno::EPERM, Refuse),
            (Stage::Open, Errno::EROFS, Refuse),
            (Stage::Open, Errno::ENOENT, Undo),
            (Stage::Open, Errno::EIO, Undo),
            (Stage::Write, Errno::EIO, Unmovable),
            (Stage::Write, Errno::EPERM, Unmovable),
            (Stage::Write, Errno::ENOSPC, NoVector),
            (Stage::Write, Errno::EINVAL, Offline),
            (Stage::Write, Errno::EBUSY, Undo),
            (Stage::Write, Errno::ENOMEM, Undo),
            (Stage::Write, Errno::EACCES, Undo),
        ];
        for (stage, e, want) in cases {
            assert_eq!(classify(stage, e), want, "{stage:?} {e}");
        }
    }

    #[test]
    fn journal_round_trip_and_refusals() {
        let mut j = Journal::new(42, 7, &CpuSet::parse("1").unwrap());
        j.irqs.push(JournalIrq {
            irq: 36,
            name: "virtio1-req.0".into(),
            original: "0-1".into(),
            written: "0".into(),
            effective: Some("1".into()),
        });
        j.default_original = Some("3".into());
        assert_eq!(Journal::parse(&j.render()).unwrap(), j);
        // A journal of an older pinrun (no "effective") still parses.
        let old = j.render().replace(",\"effective\":\"1\"", "");
        assert!(!old.contains("effective"));
        assert_eq!(Journal::parse(&old).unwrap().irqs[0].effective, None);
        assert!(
            Journal::parse("{")
                .unwrap_err()
                .starts_with("not a journal")
        );
        let v2 = j.render().replace("\"version\":1", "\"version\":2");
        assert!(Journal::parse(&v2).unwrap_err().contains("version 2"));
        let bad = j.render().replace("\"0-1\"", "\"0-x\"");
        assert!(Journal::parse(&bad).unwrap_err().contains("IRQ 36"));
        assert!(Journal::parse(&" ".repeat(MAX_JOURNAL + 1)).is_err());
        // irqbalance's ban: absent from the JSON when not changed (the
        // journals of earlier pinruns parse), round-trips when present.
        assert!(!j.render().contains("irqbalance"));
        j.irqbalance = Some(JournalBan {
            pid: 900,
            original: "4-7".into(),
            default: "4-7".into(),
            written: "1,4-7".into(),
        });
        assert_eq!(Journal::parse(&j.render()).unwrap(), j);
        let bad = j.render().replace("\"1,4-7\"", "\"1,x\"");
        assert!(Journal::parse(&bad).unwrap_err().contains("irqbalance ban"));
    }

    #[test]
    fn journal_names_are_not_claim_records() {
        let n = journal_name(1234, 99);
        assert_eq!(journal_owner(&n), Some((1234, 99)));
        assert_eq!(crate::claims::record_pid(&n), None);
        assert_eq!(journal_owner("1234.99.00ff"), None);
        assert_eq!(journal_owner("steer.12x.9.journal"), None);
    }
    /// The shipped files (tests/data/irqbalance/README.md): the edit adds
    /// both ban lines after their commented templates, every other line
    /// byte for byte, and irqbalance reads the ban back from the result.
    #[test]
    fn config_edit_of_the_shipped_files() {
        let debian = include_str!("../../tests/data/irqbalance/debian-trixie-1.9.4.default");
        let upstream = include_str!("../../tests/data/irqbalance/upstream-misc-irqbalance.env");
        let ban = CpuSet::parse("2-3,33").unwrap();
        for text in [debian, upstream] {
            assert_eq!(config_ban(text).unwrap(), None);
            let out = config_edit(text, &ban).unwrap();
            let added: Vec<&str> = out
                .lines()
                .filter(|l| !text.lines().any(|o| o == *l))
                .collect();
            assert_eq!(
                added,
                [
                    "IRQBALANCE_BANNED_CPUS=00000002,0000000c",
                    "IRQBALANCE_BANNED_CPULIST=2-3,33"
                ]
            );
            // Removing the two added lines gives the file back exactly.
            let back: String = out
                .split_inclusive('\n')
                .filter(|l| !added.contains(&l.trim_end()))
                .collect();
            assert_eq!(back, text);
            // Each after its template.
            let lines: Vec<&str> = out.lines().collect();
            for (k, v) in [
                ("IRQBALANCE_BANNED_CPUS", "00000002,0000000c"),
                ("IRQBALANCE_BANNED_CPULIST", "2-3,33"),
            ] {
                let i = lines.iter().position(|l| *l == format!("{k}={v}")).unwrap();
                assert_eq!(lines[i - 1], format!("#{k}="));
            }
            assert_eq!(config_ban(&out).unwrap(), Some(ban.clone()));
            // Idempotent in shape: a second edit replaces, adds nothing.
            let again = config_edit(&out, &CpuSet::parse("5").unwrap()).unwrap();
            assert_eq!(again.lines().count(), out.lines().count());
            assert_eq!(config_ban(&again).unwrap(), CpuSet::parse("5").ok());
        }
        // upstream's IRQBALANCE_ARGS="" is kept quoted as it was.
        assert!(
            config_edit(upstream, &ban)
                .unwrap()
                .ends_with("IRQBALANCE_ARGS=\"\"\n")
        );
    }

    /// setup_banned_cpus(): a non-empty hex IRQBALANCE_BANNED_CPUS wins
    /// over the cpulist (1.8+), an empty one does not; the last
    /// assignment of a variable wins (systemd); the edit replaces the one
    /// that counts and keeps quotes-free values.
    #[test]
    fn config_ban_precedence_and_edit_of_set_values() {
        let t = "IRQBALANCE_BANNED_CPULIST=1-2\nIRQBALANCE_BANNED_CPUS=0c\n";
        assert_eq!(config_ban(t).unwrap(), CpuSet::parse("2-3").ok());
        let t = "IRQBALANCE_BANNED_CPUS=\nIRQBALANCE_BANNED_CPULIST=\"1-2\"\n";
        assert_eq!(config_ban(t).unwrap(), CpuSet::parse("1-2").ok());
        let t = "IRQBALANCE_BANNED_CPULIST=1\n  IRQBALANCE_BANNED_CPULIST = 4\nX=1";
        assert_eq!(config_ban(t).unwrap(), CpuSet::parse("4").ok());
        let out = config_edit(t, &CpuSet::parse("4,6").unwrap()).unwrap();
        assert_eq!(
            out,
            "IRQBALANCE_BANNED_CPULIST=1\nIRQBALANCE_BANNED_CPULIST=4,6\nX=1\nIRQBALANCE_BANNED_CPUS=00000050\n"
        );
        let t = "IRQBALANCE_BANNED_CPUS='0f'\n";
        assert_eq!(
            config_edit(t, &CpuSet::parse("0-3,8").unwrap()).unwrap(),
            "IRQBALANCE_BANNED_CPUS=0000010f\nIRQBALANCE_BANNED_CPULIST=0-3,8\n"
        );
        // Refused, never guessed: escapes, unmatched quotes, an empty ban.
        assert!(config_edit("IRQBALANCE_ARGS=\"a\\\"b\"\n", &CpuSet::parse("1").unwrap()).is_err());
        assert!(
            config_edit(
                "IRQBALANCE_BANNED_CPULIST=\"1\n",
                &CpuSet::parse("1").unwrap()
            )
            .is_err()
        );
        assert!(config_edit("", &CpuSet::default()).is_err());
        assert_eq!(
            config_edit("", &CpuSet::parse("1").unwrap()).unwrap(),
            "IRQBALANCE_BANNED_CPUS=00000002\nIRQBALANCE_BANNED_CPULIST=1\n"
        );
    }

    /// `systemctl show -p MainPID -p ActiveState -p EnvironmentFiles
    /// irqbalance.service` on Debian 13 (the unit in
    /// tests/data/irqbalance/debian-trixie-1.9.4.service).
    #[test]
    fn unit_show_is_parsed() {
        let u = parse_unit_show(
            "MainPID=612\nActiveState=active\nEnvironmentFiles=/usr/lib/irqbalance/defaults.env (ignore_errors=yes)\nEnvironmentFiles=/etc/default/irqbalance (ignore_errors=yes)\n",
        );
        assert_eq!(u.main_pid, 612);
        assert_eq!(u.active_state, "active");
        assert_eq!(
            u.environment_files,
            [
                ("/usr/lib/irqbalance/defaults.env".into(), true),
                ("/etc/default/irqbalance".into(), true)
            ]
        );
        let u = parse_unit_show(
            "MainPID=0\nActiveState=inactive\nEnvironmentFiles=/etc/sysconfig/irqbalance (ignore_errors=no)\n",
        );
        assert_eq!((u.main_pid, u.environment_files[0].1), (0, false));
    }
    /// irqbalance bans no CPU on a machine without isolcpus=, nohz_full=
    /// or its variables: a journal of such a ban (empty cpulists) is
    /// usable, or the helper could never undo it.
    #[test]
    fn journal_with_empty_bans_parses() {
        let mut j = Journal::new(5, 9, &CpuSet::parse("1").unwrap());
        j.irqbalance = Some(JournalBan {
            pid: 7,
            original: String::new(),
            default: String::new(),
            written: "1".into(),
        });
        j.irqbalance_config = Some(JournalConfig {
            pid: 7,
            path: "/etc/default/irqbalance".into(),
            original: "#x\n".into(),
            ban: String::new(),
            written: "#x\nIRQBALANCE_BANNED_CPULIST=1\n".into(),
        });
        assert_eq!(Journal::parse(&j.render()), Ok(j.clone()));
        j.irqbalance.as_mut().unwrap().original = "x".into();
        assert!(Journal::parse(&j.render()).is_err());
    }
}
