//! The habits table (issue 37): one row per option and form of numactl(8)
//! (numactl 2.0.16), taskset(1) and chrt(1) (util-linux 2.38), with
//! pinrun's equivalent or the reason it has none. The parser's hints for
//! the options pinrun does not take (`cli::peer_hint`), pinrun(1)'s
//! NUMACTL, TASKSET AND CHRT section (`manual::habits_section`) and the
//! test that runs every row (`tests/it/habits.rs`) read it. Data only.

/// The tool a row is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// numactl(8), from the numactl package (`numactl --help`'s usage).
    Numactl,
    /// taskset(1), from util-linux (`taskset --help`).
    Taskset,
    /// chrt(1), from util-linux (`chrt --help`).
    Chrt,
    /// The kernel's own words for scheduling parameters, which users
    /// of `sched_setattr(2)` (`struct sched_attr`) and sched(7) write as
    /// options (`--sched-priority`): no tool, a name pinrun spells
    /// otherwise.
    Sched,
}

impl Tool {
    /// The command's name, as numactl(8), taskset(1) and chrt(1) are run.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Numactl => "numactl",
            Tool::Taskset => "taskset",
            Tool::Chrt => "chrt",
            Tool::Sched => "sched_setattr(2)",
        }
    }
}

/// The argument an option takes, as the tool's help names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    /// Its name in the tool's help (numactl(8) `<nodes>`, chrt(1) `<ns>`).
    pub name: &'static str,
    /// A value the tests give it (valid on any machine: node 0, CPU 0).
    pub example: &'static str,
}

/// What pinrun does with a row's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pinrun {
    /// pinrun's command for it: a template in which `{arg}` is the
    /// option's argument (`--preferred {arg}`, `--sched-runtime {arg}ns`).
    Use(&'static str),
    /// pinrun does this by default (drop the option): why.
    Default(&'static str),
    /// No pinrun equivalent: why (the man page and the hint say it).
    None(&'static str),
}

/// One option or form of numactl(8), taskset(1) or chrt(1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Habit {
    /// The tool it is from.
    pub tool: Tool,
    /// Its spellings: short, long and old aliases (`-c`, `--cpubind`), or
    /// for a form its shape (`MASK COMMAND`, `-p MASK PID`).
    pub spellings: &'static [&'static str],
    /// The spellings pinrun takes with this meaning (pinrun's own options
    /// and aliases, `cli::Cli`).
    pub accepted: &'static [&'static str],
    /// Spellings pinrun takes with another meaning, and that meaning
    /// (numactl's `-c` is taskset's `-c` to pinrun).
    pub taken: &'static [(&'static str, &'static str)],
    /// The argument the option takes, if any.
    pub arg: Option<Arg>,
    /// pinrun's equivalent, or the reason there is none.
    pub pinrun: Pinrun,
    /// A remark for the man page and the hint ("" for none).
    pub note: &'static str,
    /// Whether this is a form (a positional argument's shape), not an
    /// option: its hint comes from the code that reads the form (taskset's
    /// mask, `cli::taskset_pid_hint`).
    pub form: bool,
}

const fn arg(name: &'static str, example: &'static str) -> Option<Arg> {
    Some(Arg { name, example })
}

const fn row(
    tool: Tool,
    spellings: &'static [&'static str],
    accepted: &'static [&'static str],
    arg: Option<Arg>,
    pinrun: Pinrun,
) -> Habit {
    Habit {
        tool,
        spellings,
        accepted,
        taken: &[],
        arg,
        pinrun,
        note: "",
        form: false,
    }
}

impl Habit {
    const fn taken(mut self, taken: &'static [(&'static str, &'static str)]) -> Self {
        self.taken = taken;
        self
    }
    const fn note(mut self, note: &'static str) -> Self {
        self.note = note;
        self
    }
    const fn form(mut self) -> Self {
        self.form = true;
        self
    }

    /// pinrun's command for this row with `value` as the argument (`{arg}`
    /// in the template): `None` when pinrun has no equivalent; "" when
    /// pinrun does it by default.
    pub fn command_with(&self, value: &str) -> Option<String> {
        match self.pinrun {
            Pinrun::Use(t) => Some(t.replace("{arg}", value)),
            Pinrun::Default(_) => Some(String::new()),
            Pinrun::None(_) => None,
        }
    }

    /// Whether `spelling` is one of this row's (`--cpubind=0` is `--cpubind`).
    pub fn spelled(&self, spelling: &str) -> bool {
        let name = spelling.split('=').next().unwrap_or(spelling);
        self.spellings.contains(&name)
    }
}

const SHM: &str = "a shared-memory policy option: pinrun sets the process's policy before exec (--membind, --interleave, ...), which its allocations follow";

use Pinrun::{Default, None as No, Use};
use Tool::{Chrt, Numactl, Sched, Taskset};

/// Every option of numactl 2.0.16 (`numactl --help`, numactl(8) and its
/// getopt table: `--verify` is undocumented), taskset and chrt of
/// util-linux 2.38 (`--help`), and their positional forms; newer
/// numactl's `-w` too; and the kernel's `sched_priority` written as an
/// option.
pub const HABITS: &[Habit] = &[
    // numactl(8)
    row(Numactl, &["-a", "--all"], &[], None, No("lists ignore the cpuset there; pinrun resolves within the task's CPUs and the cgroup cpuset (pinrun(1) CPU LISTS), and --within cgroup chooses across the cgroup's CPUs")),
    row(Numactl, &["-b", "--balancing"], &[], None, No("MPOL_F_NUMA_BALANCING has no pinrun option: kernel.numa_balancing applies; pinrun --check says whether it is on")),
    row(Numactl, &["-i", "--interleave"], &["--interleave"], arg("NODES", "0"), Use("--interleave {arg}")),
    row(Numactl, &["-p", "--preferred"], &["--preferred"], arg("NODE", "0"), Use("--preferred {arg}")),
    row(Numactl, &["-P", "--preferred-many"], &["--preferred-many"], arg("NODES", "0"), Use("--preferred-many {arg}")),
    row(Numactl, &["-C", "--physcpubind"], &["-C", "--physcpubind"], arg("CPUS", "0"), Use("--cpus {arg}")),
    row(Numactl, &["-N", "--cpunodebind"], &["-N", "--cpunodebind"], arg("NODES", "0"), Use("--cpunodebind {arg}"))
        .note("every allowed CPU of the nodes: --node NODES alone; --node chooses among them with --cores"),
    row(Numactl, &["-c", "--cpubind"], &[], arg("NODES", "0"), Use("--cpunodebind {arg}"))
        .taken(&[("-c", "--cpus (taskset -c): CPUs, not nodes")])
        .note("numactl's old name of --cpunodebind"),
    row(Numactl, &["-m", "--membind"], &["-m", "--membind"], arg("NODES", "0"), Use("--membind {arg}"))
        .note("the node list may be omitted: the chosen CPUs' nodes"),
    row(Numactl, &["-l", "--localalloc"], &["--localalloc"], None, Use("--localalloc")),
    row(Numactl, &["-s", "--show"], &[], None, Use("--pid self"))
        .taken(&[("--show", "pinrun --show prints the machine (numactl --hardware)")])
        .note("the caller's own policy and CPUs"),
    row(Numactl, &["-H", "--hardware"], &[], None, Use("--show"))
        .note("--show --json for a script"),
    row(Numactl, &["-S", "--shm"], &[], arg("SHMKEYFILE", "/tmp/k"), No(SHM)),
    row(Numactl, &["-f", "--file"], &[], arg("TMPFSFILE", "/dev/shm/f"), No(SHM))
        .taken(&[("-f", "--fifo (chrt -f)")]),
    row(Numactl, &["-o", "--offset"], &[], arg("OFFSET", "0"), No(SHM)),
    row(Numactl, &["-L", "--length"], &[], arg("LENGTH", "1m"), No(SHM)),
    row(Numactl, &["-M", "--shmmode"], &[], arg("SHMMODE", "0600"), No(SHM)),
    row(Numactl, &["-I", "--shmid"], &[], arg("ID", "1"), No(SHM)),
    row(Numactl, &["-u", "--huge"], &[], None, No(SHM)),
    row(Numactl, &["-T", "--touch"], &[], None, No(SHM)),
    row(Numactl, &["-t", "--strict"], &[], None, No(SHM))
        .taken(&[("--strict", "pinrun --strict refuses a launch with a warning")]),
    row(Numactl, &["-d", "--dump"], &[], None, No(SHM))
        .taken(&[("--dump", "pinrun --dump FILE saves the machine's files for a bug report")]),
    row(Numactl, &["-D", "--dump-nodes"], &[], None, No(SHM)),
    row(Numactl, &["-V", "--verify"], &[], None, No(SHM))
        .taken(&[("-V", "--version")])
        .note("undocumented (numactl's getopt table)"),
    row(Numactl, &["-w", "--weighted-interleave"], &["--weighted-interleave"], arg("NODES", "0"), Use("--weighted-interleave {arg}"))
        .note("numactl 2.0.19 and later"),
    // taskset(1)
    row(Taskset, &["-a", "--all-tasks"], &[], None, Default("every thread is --pid's default, --tid TID for one; a COMMAND's threads inherit what pinrun sets")),
    row(Taskset, &["-p", "--pid"], &["--pid"], arg("PID", "1"), Use("--pid {arg}"))
        .note("alone, every thread's CPUs; with --cpus, changes them"),
    row(Taskset, &["-c", "--cpu-list"], &["-c", "--cpu-list"], arg("LIST", "0"), Use("--cpus {arg}")),
    row(Taskset, &["-h", "--help"], &["-h", "--help"], None, Use("--help")),
    row(Taskset, &["-V", "--version"], &["-V", "--version"], None, Use("--version")),
    row(Taskset, &["MASK COMMAND"], &[], None, Use("--cpus {arg} -- COMMAND"))
        .note("MASK is hexadecimal (2 is CPU 1); the hint names the mask's CPUs online here")
        .form(),
    row(Taskset, &["-p MASK PID"], &[], None, Use("--pid PID --cpus {arg}"))
        .note("MASK is hexadecimal; the hint names its CPUs online here")
        .form(),
    row(Taskset, &["-pc LIST PID"], &[], None, Use("--pid PID --cpus {arg}")).form(),
    // chrt(1)
    row(Chrt, &["-b", "--batch"], &["--batch"], None, Use("--batch"))
        .note("chrt -b 0 COMMAND: no priority"),
    row(Chrt, &["-d", "--deadline"], &["--deadline"], None, Use("--deadline"))
        .note("with --sched-runtime and --sched-deadline or --sched-period"),
    row(Chrt, &["-f", "--fifo"], &["-f", "--fifo"], arg("PRIO", "10"), Use("--fifo {arg}"))
        .note("the priority after the option, as chrt -f 10 COMMAND"),
    row(Chrt, &["-i", "--idle"], &["--idle"], None, Use("--idle"))
        .note("chrt -i 0 COMMAND: no priority"),
    row(Chrt, &["-o", "--other"], &["--other"], None, Use("--other"))
        .note("chrt -o 0 COMMAND: no priority"),
    row(Chrt, &["-r", "--rr"], &["-r", "--rr"], arg("PRIO", "10"), Use("--rr {arg}")),
    row(Chrt, &["-R", "--reset-on-fork"], &["-R", "--reset-on-fork"], None, Use("--reset-on-fork")),
    row(Chrt, &["-T", "--sched-runtime"], &[], arg("NS", "500000"), Use("--sched-runtime {arg}ns"))
        .note("pinrun's takes a unit"),
    row(Chrt, &["-P", "--sched-period"], &[], arg("NS", "10000000"), Use("--sched-period {arg}ns"))
        .note("pinrun's takes a unit"),
    row(Chrt, &["-D", "--sched-deadline"], &[], arg("NS", "10000000"), Use("--sched-deadline {arg}ns"))
        .note("pinrun's takes a unit"),
    row(Chrt, &["-a", "--all-tasks"], &[], None, Default("every thread is --pid's default, --tid TID for one; a COMMAND's threads inherit what pinrun sets")),
    row(Chrt, &["-m", "--max"], &[], None, No("the real-time priorities are 1 to 99 (SCHED_FIFO, SCHED_RR; sched_get_priority_max(2)); pinrun --check --fifo 99 says what this process may use"))
        .taken(&[("-m", "--membind (numactl -m)")]),
    row(Chrt, &["-p", "--pid"], &["--pid"], arg("PID", "1"), Use("--pid {arg}"))
        .note("alone, every thread's policy, priority, nice and deadline parameters"),
    row(Chrt, &["-v", "--verbose"], &["-v", "--verbose"], None, Use("--verbose"))
        .note("prints the plan"),
    row(Chrt, &["-h", "--help"], &["-h", "--help"], None, Use("--help")),
    row(Chrt, &["-V", "--version"], &["-V", "--version"], None, Use("--version")),
    row(Chrt, &["PRIO COMMAND"], &[], None, Use("--rr {arg} -- COMMAND"))
        .note("chrt's default policy is SCHED_RR")
        .form(),
    row(Chrt, &["-p PRIO PID"], &[], None, Use("--pid PID --rr {arg}")).form(),
    // sched_setattr(2)'s and sched(7)'s field names, typed as options
    row(Sched, &["--sched-priority"], &[], arg("PRIO", "10"), Use("--fifo {arg}"))
        .note("sched_priority is the SCHED_FIFO or SCHED_RR priority, 1-99 (sched(7)): --rr PRIO for round robin, as chrt -f PRIO and chrt -r PRIO"),
];

/// The rows (of [`HABITS`]) with `spelling` among their spellings
/// (numactl(8), taskset(1), chrt(1) share several: `-p`, `-a`, `-i`).
pub fn rows_of(spelling: &str) -> Vec<&'static Habit> {
    HABITS.iter().filter(|h| h.spelled(spelling)).collect()
}

/// The form row of `tool` whose shape is `shape` (`MASK COMMAND`): the
/// hints for taskset's and chrt's positional forms read its template.
/// Panics when the table lacks it (a test runs every form).
pub fn form(tool: Tool, shape: &str) -> &'static Habit {
    HABITS
        .iter()
        .find(|h| h.form && h.tool == tool && h.spellings.contains(&shape))
        .expect("the habits table has the form")
}
