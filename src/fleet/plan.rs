//! Planning for the fleet engines (issue 23): the topology fingerprint
//! that every emitted file carries, and the disjoint per-task placements of
//! `--emit slurm N`, from the same planner as a launch. Pure.

use crate::claim::Claims;
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::plan::{Plan, plan_claimed};
use crate::request::Request;
use crate::system::SystemState;
use crate::words::cpus_phrase;
use std::hash::Hasher;

/// The comment tag of the fingerprint line: `# pinrun-topology: ...`.
pub const FINGERPRINT_TAG: &str = "pinrun-topology:";

/// A machine's topology fingerprint: what a CPU list chosen on it means.
///
/// The canonical text is one line per core of the online CPUs, by its
/// lowest CPU: `core CPULIST package P node N` (its SMT siblings, the
/// `physical_package_id` of its lowest CPU, the nodes of its CPUs; `?`
/// when unknown); the hash is FNV-1a 64 of that text. Offline CPUs are
/// left out (their topology files are gone), so hotplug changes the
/// fingerprint, as it changes what a CPU list can run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// FNV-1a 64 of the canonical text, 16 hex digits.
    pub hash: String,
    /// Online CPUs.
    pub cpus: usize,
    /// Their cores.
    pub cores: usize,
    /// Their packages.
    pub packages: usize,
    /// Their NUMA nodes.
    pub nodes: usize,
}

/// What [`Fingerprint::find_in`] found in an emitted file; line numbers
/// count from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No fingerprint line.
    None,
    /// One well-formed line.
    One(Fingerprint),
    /// The line at this number lacks `fnv1a64=` or one of the counts.
    Malformed(usize),
    /// Fingerprint lines at these two numbers (the first two).
    Several(usize, usize),
}

impl Fingerprint {
    /// The comment line's text (without the comment character):
    /// `pinrun-topology: fnv1a64=HASH cpus=16 cores=8 packages=1 nodes=2`.
    pub fn line(&self) -> String {
        format!(
            "{FINGERPRINT_TAG} fnv1a64={} cpus={} cores={} packages={} nodes={}",
            self.hash, self.cpus, self.cores, self.packages, self.nodes
        )
    }

    /// Parses the fingerprint line of an emitted file (`#` or any other
    /// comment prefix before the tag). Refused when there is none, when it
    /// lacks the hash or a count ([`Found::Malformed`]), and when there is
    /// more than one ([`Found::Several`]: which one would hold is a guess;
    /// pinrun writes one).
    pub fn find_in(text: &str) -> Found {
        let mut lines = text.lines().enumerate().filter_map(|(i, l)| {
            let at = l.find(FINGERPRINT_TAG)?;
            Some((i + 1, &l[at + FINGERPRINT_TAG.len()..]))
        });
        let Some((first, line)) = lines.next() else {
            return Found::None;
        };
        if let Some((second, _)) = lines.next() {
            return Found::Several(first, second);
        }
        let mut hash = None;
        let mut n = [None; 4];
        for w in line.split_whitespace() {
            let Some((k, v)) = w.split_once('=') else {
                return Found::Malformed(first);
            };
            let slot = match k {
                "fnv1a64" => {
                    hash = Some(v.to_string());
                    continue;
                }
                "cpus" => 0,
                "cores" => 1,
                "packages" => 2,
                "nodes" => 3,
                _ => continue,
            };
            n[slot] = v.parse().ok();
        }
        let fp = (|| {
            Some(Fingerprint {
                hash: hash?,
                cpus: n[0]?,
                cores: n[1]?,
                packages: n[2]?,
                nodes: n[3]?,
            })
        })();
        fp.map_or(Found::Malformed(first), Found::One)
    }

    /// "16 CPUs in 8 cores, 1 package, 2 nodes".
    pub fn shape(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        format!(
            "{} in {}, {}, {}",
            plural(self.cpus, "CPU", "CPUs"),
            plural(self.cores, "core", "cores"),
            plural(self.packages, "package", "packages"),
            plural(self.nodes, "node", "nodes")
        )
    }
}

/// The fingerprint of `sys` (see [`Fingerprint`]); needs the topology of
/// every CPU (`Cpus::All` in the read scope).
pub fn fingerprint(sys: &SystemState) -> Fingerprint {
    let mut text = String::new();
    let mut seen = CpuSet::new();
    let (mut cores, mut packages, mut nodes) = (0, CpuSet::new(), CpuSet::new());
    let opt = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
    for cpu in sys.online.iter() {
        if seen.contains(cpu) {
            continue;
        }
        let core = sys.core_of(cpu).intersection(&sys.online);
        seen = seen.union(&core);
        let package = sys.cpus.get(&cpu).and_then(|c| c.package);
        let core_nodes: CpuSet = core.iter().filter_map(|c| sys.node_of(c)).collect();
        cores += 1;
        if let Some(p) = package {
            packages.insert(p);
        }
        nodes = nodes.union(&core_nodes);
        text.push_str(&format!(
            "core {} package {} node {}\n",
            core.to_list(),
            opt(package),
            if core_nodes.is_empty() {
                "?".to_string()
            } else {
                core_nodes.to_list()
            }
        ));
    }
    let mut h = fnv::FnvHasher::default();
    h.write(text.as_bytes());
    Fingerprint {
        hash: format!("{:016x}", h.finish()),
        cpus: sys.online.len(),
        cores,
        packages: packages.len().max(1),
        nodes: nodes.len().max(1),
    }
}

/// Why the machine's fingerprint `here` refuses a file emitted for
/// `emitted`, in words; `None` when they are equal. `machine` names the
/// machine that was read ("this machine", "the dump DIR").
pub fn fingerprint_difference(
    emitted: &Fingerprint,
    here: &Fingerprint,
    machine: &str,
) -> Option<String> {
    if emitted == here {
        return None;
    }
    Some(if emitted.shape() == here.shape() {
        format!(
            "{machine} has the same counts ({}) but numbers its CPUs, cores or nodes differently (fingerprint {} here, {} in the file)",
            here.shape(),
            here.hash,
            emitted.hash
        )
    } else {
        format!(
            "it was emitted for {}; {machine} has {}",
            emitted.shape(),
            here.shape()
        )
    })
}

/// The systemd settings of an emitted unit that name CPUs or NUMA nodes
/// (`systemd.exec(5)` `CPUAffinity=`, `NUMAMask=`;
/// `systemd.resource-control(5)` `AllowedCPUs=`, `AllowedMemoryNodes=`).
pub const UNIT_LISTS: [(&str, bool); 4] = [
    ("CPUAffinity", true),
    ("AllowedCPUs", true),
    ("NUMAMask", false),
    ("AllowedMemoryNodes", false),
];

/// The CPU and node lists an emitted file sets, as (line number from 1,
/// setting, whether it names CPUs (else nodes), the set): each
/// [`UNIT_LISTS`] assignment, its list separated by spaces or commas as
/// systemd's `parse_cpu_set_full()` accepts, and the CPUs of an srun
/// `--cpu-bind=` `map_cpu:`/`mask_cpu:` list (every task's, together). An empty assignment (a
/// reset) is left out; a list that does not parse is an error naming the
/// line.
pub fn unit_lists(
    text: &str,
) -> std::result::Result<Vec<(usize, &'static str, bool, CpuSet)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(bind) = srun_bind(line) {
            let (name, set) = bind.map_err(|e| format!("line {}: {e}", i + 1))?;
            out.push((i + 1, name, true, set));
            continue;
        }
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        let Some(&(name, cpus)) = UNIT_LISTS.iter().find(|(k, _)| *k == key.trim()) else {
            continue;
        };
        // NUMAMask=all: every node (config_parse_numa_mask).
        if value.trim().is_empty() || (name == "NUMAMask" && value.trim() == "all") {
            continue;
        }
        let set = systemd_cpu_set(value)
            .map_err(|e| format!("line {}: {name}={}: {e}", i + 1, value.trim()))?;
        out.push((i + 1, name, cpus, set));
    }
    Ok(out)
}

/// The CPUs (or nodes) of a unit's list, as systemd reads it
/// (`parse_cpu_set_full()`, src/shared/cpu-set-util.c, systemd 252): words
/// split at white space and commas, each `N` or `N-M`
/// (`parse_range()`), a number as `safe_atou()` reads it: decimal, `0x`
/// hexadecimal, a leading `0` octal (C's `strtoul(…, 0)`), and `0b`/`0o`
/// binary and octal (`mangle_base()`), so `0x4` is CPU 4, not a mask,
/// and `010` is CPU 8. A range whose start is past its end adds nothing
/// (systemd warns and ignores it); a CPU at or above 8192 is an error, as
/// any word that does not parse (systemd then ignores the whole
/// assignment). A quoted word (systemd unquotes) is refused: pinrun does
/// not read it, so it cannot vouch for it.
pub fn systemd_cpu_set(value: &str) -> std::result::Result<CpuSet, String> {
    let mut set = CpuSet::new();
    let words = value
        .split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    for word in words {
        if word.contains(['"', '\'', '\\']) {
            return Err(format!(
                "{word:?}: a quoted or escaped word, which pinrun does not read"
            ));
        }
        let (lower, upper) = match word.split_once('-') {
            Some((l, u)) => (systemd_atou(l), systemd_atou(u)),
            None => (systemd_atou(word), systemd_atou(word)),
        };
        let (Some(lower), Some(upper)) = (lower, upper) else {
            return Err(format!("{word:?} is not a CPU number or a range N-M"));
        };
        if upper >= 8192 {
            return Err(format!("{word:?}: CPU {upper} is past systemd's 8191"));
        }
        if lower <= upper {
            set.insert_range(lower, upper);
        }
    }
    Ok(set)
}

/// A number as systemd's `safe_atou()` reads it (`safe_atou_full()` with
/// base 0, src/basic/parse-util.c) in a word `parse_range()` split at its
/// first `-` (so no `-` is left): an optional `+`, then `0b`/`0B` binary
/// or `0o`/`0O` octal (`mangle_base()`), else `strtoul(3)` with base 0
/// (`0x` hexadecimal, a leading `0` octal, decimal); it must fit 32 bits.
/// `None` for anything else, the empty word included.
fn systemd_atou(word: &str) -> Option<u32> {
    let digits = word.strip_prefix('+').unwrap_or(word);
    let strip = |p: [&str; 2]| p.iter().find_map(|p| digits.strip_prefix(p));
    let (radix, digits) = if let Some(d) = strip(["0b", "0B"]) {
        (2, d)
    } else if let Some(d) = strip(["0o", "0O"]) {
        (8, d)
    } else if let Some(d) = strip(["0x", "0X"]) {
        (16, d)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    // from_str_radix takes a sign of its own: strtoul's is read above.
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    u32::try_from(u64::from_str_radix(digits, radix).ok()?).ok()
}

/// A unit's `User=` (the last assignment: a later one overrides,
/// systemd.unit(5)) and the first word of its first `ExecStart=`, without
/// systemd's prefixes (`-@:+!|`, systemd.service(5)), as systemd reads it
/// ([`systemd_first_word`]). `None` when the file sets no `User=` or no
/// command, or the word is not one systemd would take. As systemd 252
/// reads a unit (`systemd-analyze verify`): white space around `=` is
/// allowed (`ExecStart = /x`), and an empty `ExecStart=` resets the list,
/// so the first command is the first one after the last reset.
pub fn unit_user_exec(text: &str) -> Option<(String, String)> {
    let text = join_continuations(text);
    let value = |key: &str| {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(key)?.trim_start().strip_prefix('='))
            .map(str::trim)
            .collect::<Vec<_>>()
    };
    let user = value("User").pop().filter(|u| !u.is_empty())?;
    let execs = value("ExecStart");
    let after_reset = execs
        .iter()
        .rposition(|e| e.is_empty())
        .map_or(0, |i| i + 1);
    let exec = execs
        .get(after_reset)?
        .trim_start_matches(['-', '@', ':', '+', '!', '|']);
    let word = systemd_first_word(exec)?;
    (!word.is_empty()).then(|| (user.to_string(), word))
}

/// `text` with each line ending in an odd number of backslashes joined to
/// the next, the backslash a space (systemd 252's `config_parse()`:
/// `ExecStart=/tmp/no/a\` then `b c` runs `/tmp/no/a`; two backslashes
/// continue nothing).
fn join_continuations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let trailing = line.len() - line.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            out.push_str(&line[..line.len() - 1]);
            out.push(' ');
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The first word of a command line as systemd reads `ExecStart=`
/// (systemd.service(5) "COMMAND LINES"; `extract_first_word()` with
/// `EXTRACT_UNQUOTE | EXTRACT_CUNESCAPE`, src/basic/extract-word.c): words
/// end at unquoted whitespace, systemd's `WHITESPACE` (space, tab, newline,
/// carriage return: not a no-break space, a vertical tab or a form feed);
/// `"…"` and `'…'` quote anywhere in a word; a backslash escape is C's, as
/// `cunescape_one()` (src/basic/escape.c) reads it (`\a \b \f \n \r \t
/// \v \\ \" \' \s`, `\xNN`, `\NNN` octal, `\uNNNN`, `\UNNNNNNNN`; a NUL
/// or an unknown escape, `\;` included, is refused); then `%%` is `%`
/// (`unit_path_printf()`; an `ExecStart=` written by `--emit systemd` has
/// no other specifier). `$$` stays: the executable's path is not
/// environment-expanded, only the arguments are. systemd 252
/// (`systemd-analyze verify`) refuses an executable name with a control
/// character, a backslash or a quote ("Executable name contains special
/// characters": `string_is_safe()`), and so does this. The inverse of
/// [`crate::fleet::report::systemd_path_word`] for every other string but
/// `;`. `None`: an unterminated quote or escape, a bad escape, a name
/// systemd refuses; an empty line is the empty word.
pub fn systemd_first_word(line: &str) -> Option<String> {
    let systemd_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let line = line.trim_start_matches(systemd_space);
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', _) => word.push(cunescape_one(&mut chars)?),
            (c, Some(q)) if c == q => quote = None,
            (c, None) if c == '"' || c == '\'' => quote = Some(c),
            (c, None) if systemd_space(c) => break,
            (c, _) => word.push(c),
        }
    }
    // string_is_safe() (src/basic/string-util.c), as config_parse_exec()
    // asks of the executable's name.
    let unsafe_char = |c: char| c < ' ' || matches!(c, '\u{7f}' | '\\' | '"' | '\'');
    if quote.is_some() || word.chars().any(unsafe_char) {
        return None;
    }
    Some(word.replace("%%", "%"))
}

/// One C escape after its backslash, as systemd's `cunescape_one()`:
/// `None` for an unknown or unterminated one, a NUL, or a code point that
/// is not a `char`.
fn cunescape_one(chars: &mut std::str::Chars<'_>) -> Option<char> {
    let first = chars.next()?;
    let mut digits = |n: usize, radix: u32| -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            v = v
                .checked_mul(radix)?
                .checked_add(chars.next()?.to_digit(radix)?)?;
        }
        Some(v)
    };
    let c = match first {
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\u{b}',
        's' => ' ',
        c @ ('\\' | '"' | '\'') => c,
        'x' => char::from_u32(digits(2, 16)?)?,
        'u' => char::from_u32(digits(4, 16)?)?,
        'U' => char::from_u32(digits(8, 16)?)?,
        d @ '0'..='7' => {
            let rest = digits(2, 8)?;
            char::from_u32(d.to_digit(8)? * 64 + rest).filter(|c| u32::from(*c) < 256)?
        }
        _ => return None,
    };
    (c != '\0').then_some(c)
}

/// The `--cpu-bind` values of a line, in order, in any of srun's
/// spellings: `--cpu-bind=V`, `--cpu-bind V`, and the old `--cpu_bind`
/// of either form.
fn cpu_bind_values(line: &str) -> Vec<&str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut values = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for name in ["--cpu-bind", "--cpu_bind"] {
            if let Some(rest) = w.strip_prefix(name) {
                if let Some(v) = rest.strip_prefix('=') {
                    values.push(v);
                } else if rest.is_empty()
                    && let Some(v) = words.get(i + 1)
                {
                    values.push(*v);
                }
            }
        }
    }
    values
}

/// The `map_cpu:`/`mask_cpu:` list srun binds with after every
/// `--cpu-bind` of a line ([`cpu_bind_values`]), as
/// `slurm_verify_cpu_bind()` (src/common/proc_args.c) reads them, each
/// option in turn (getopt_long(3) order): a value is comma-separated
/// tokens, a number continuing the list before it; `verbose`, `quiet`
/// (`v`, `q`) and `one_thread` change no binding; `map_cpu`/`mapcpu` and
/// `mask_cpu`/`maskcpu` (`:` or `=` before the list) replace it; any
/// other type (`cores`, `none`, `rank`, `map_ldom:`, …) clears it; an
/// unknown word is an error (srun refuses it). The setting's name and
/// the list; `None` when no list is left.
fn effective_cpu_bind(line: &str) -> Option<std::result::Result<(&'static str, String), String>> {
    const FLAGS: [&str; 5] = ["q", "quiet", "v", "verbose", "one_thread"];
    const OTHER: [&str; 18] = [
        "no",
        "none",
        "rank",
        "rank_ldom",
        "sockets",
        "socket",
        "cores",
        "core",
        "threads",
        "thread",
        "ldoms",
        "ldom",
        "boards",
        "board",
        "map_ldom",
        "mapldom",
        "mask_ldom",
        "maskldom",
    ];
    let mut bind: Option<(&'static str, Vec<&str>)> = None;
    // Whether a number continues a list: the CPU list in `bind`, or
    // another type's (map_ldom's domains).
    let (mut cpu_list, mut other_list) = (false, false);
    let values = cpu_bind_values(line);
    if values.is_empty() {
        return None;
    }
    for value in values {
        for tok in value.split(',') {
            let lower = tok.to_ascii_lowercase();
            let is_value =
                !tok.is_empty() && lower.chars().all(|c| c.is_ascii_hexdigit() || c == 'x');
            if is_value && (cpu_list || other_list) {
                if let (true, Some((_, l))) = (cpu_list, bind.as_mut()) {
                    l.push(tok);
                }
                continue;
            }
            (cpu_list, other_list) = (false, false);
            if FLAGS.contains(&lower.as_str()) {
                continue;
            }
            let word = lower.split([':', '=']).next().unwrap_or_default();
            let name = match word {
                "map_cpu" | "mapcpu" => "srun --cpu-bind map_cpu",
                "mask_cpu" | "maskcpu" => "srun --cpu-bind mask_cpu",
                w if OTHER.contains(&w) => {
                    bind = None;
                    other_list = true;
                    continue;
                }
                _ => {
                    return Some(Err(format!(
                        "srun --cpu-bind {value}: {tok} is no type srun knows (it refuses the line)"
                    )));
                }
            };
            let first = tok[word.len()..].trim_start_matches([':', '=']);
            bind = Some((
                name,
                [first].into_iter().filter(|f| !f.is_empty()).collect(),
            ));
            cpu_list = true;
        }
    }
    let (name, list) = bind?;
    Some(Ok((name, list.join(","))))
}

/// The CPUs of the `--cpu-bind=...map_cpu:LIST` or `mask_cpu:LIST` on a
/// line (`srun(1)`: decimal CPU ids, or hex masks, one per task, comma
/// separated), with the setting's name; the list srun ends with counts
/// ([`effective_cpu_bind`]). `None` when there is none.
fn srun_bind(line: &str) -> Option<std::result::Result<(&'static str, CpuSet), String>> {
    let (name, list) = match effective_cpu_bind(line)? {
        Ok(b) => b,
        Err(e) => return Some(Err(e)),
    };
    let list = list.as_str();
    let mut set = CpuSet::new();
    for w in list.split(',').filter(|w| !w.is_empty()) {
        // srun reads a mask with or without its 0x.
        let bare_mask =
            name == "srun --cpu-bind mask_cpu" && !w.starts_with("0x") && !w.starts_with("0X");
        let one = if bare_mask {
            CpuSet::parse(&format!("0x{w}"))
        } else {
            CpuSet::parse(w)
        };
        match one {
            Ok(o) => set.union_with(&o),
            Err(e) => return Some(Err(format!("{name}:{list}: {w}: {e}"))),
        }
    }
    Some(Ok((name, set)))
}

/// `n` plans for `n` tasks on one node (`--emit slurm N`): each is `req`
/// planned by the launch's planner on the allowed CPUs that no earlier
/// task's cores hold, so the tasks get disjoint whole cores. Refused
/// without a placement (every task would inherit the same affinity), and
/// when a task finds no CPUs left (the error names it).
pub fn task_plans(sys: &SystemState, req: &Request, claims: &Claims, n: u32) -> Result<Vec<Plan>> {
    if !req.placement.is_requested() {
        return Err(Error::new(
            ErrorCode::Usage,
            format!("--emit slurm {n}: no placement requested, so every task would share one mask"),
        )
        .hint(format!(
            "say what one task gets, e.g. pinrun --cores 2 --emit slurm {n}"
        )));
    }
    let mut left = sys.clone();
    let mut plans = Vec::new();
    for task in 0..n {
        let taken_so_far = sys.allowed.difference(&left.allowed);
        let plan = plan_claimed(&left, req, claims).map_err(|mut e| {
            // Task 0 was planned on the whole allowed set: a later task
            // fails because the earlier ones took the CPUs it needs. Its
            // own error would speak of the cpuset as if nothing were taken
            // ("CPU 1 is outside the cpuset ... = 0-1"), so it is replaced.
            let earlier = if task == 1 {
                "task 0".to_string()
            } else {
                format!("tasks 0-{}", task - 1)
            };
            e.message = if task == 0 {
                format!("--emit slurm {n}: task 0: {}", e.message)
            } else if req.placement.cpus.is_some() || req.placement.cpus_form.is_some() {
                format!(
                    "--emit slurm {n}: task {task}: --cpus names the same CPUs for every task, and {earlier} took {}",
                    cpus_phrase(&taken_so_far)
                )
            } else {
                format!(
                    "--emit slurm {n}: task {task}: no free core left after {earlier} took {} (of the allowed CPUs {})",
                    cpus_phrase(&taken_so_far),
                    sys.allowed
                )
            };
            e.hint = Some(if task > 0 && (req.placement.cpus.is_some() || req.placement.cpus_form.is_some()) {
                "ask for a count instead (--cores N), so that each task gets its own cores".to_string()
            } else {
                format!(
                    "this placement fits {task} {} per node in the allowed CPUs {}: ask for fewer tasks or less per task",
                    if task == 1 { "task" } else { "tasks" },
                    sys.allowed
                )
            });
            e
        })?;
        if let Some(cpus) = &plan.cpus {
            let taken = cpus
                .iter()
                .fold(CpuSet::new(), |acc, c| acc.union(&sys.core_of(c)));
            left.allowed = left.allowed.difference(&taken);
        }
        plans.push(plan);
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Break test: `ExecStart = /x` (white space around `=`) was no
    /// command, and after an empty `ExecStart=` (a reset, as drop-ins
    /// write it) the command before it was checked. systemd 252's
    /// `systemd-analyze verify` runs `/tmp/no/sp` and `/tmp/no/second` for
    /// these units.
    #[test]
    fn unit_user_exec_reads_spaced_assignments_and_resets() {
        let u = unit_user_exec("[Service]\nUser = nobody\nExecStart = /tmp/no/sp a\n");
        assert_eq!(u, Some(("nobody".into(), "/tmp/no/sp".into())));
        let u = unit_user_exec(
            "[Service]\nUser=nobody\nExecStart=/tmp/no/first\nExecStart=\nExecStart=-/tmp/no/second\nExecStart=/tmp/no/third\n",
        );
        assert_eq!(u, Some(("nobody".into(), "/tmp/no/second".into())));
        assert_eq!(
            unit_user_exec("[Service]\nUser=nobody\nExecStart=/tmp/no/first\nExecStart=\n"),
            None
        );
        assert_eq!(
            unit_user_exec(
                "[Service]\nUser=nobody\nExecStartPre=/tmp/no/pre\nExecStart=/tmp/no/x\n"
            ),
            Some(("nobody".into(), "/tmp/no/x".into()))
        );
        // Continued lines (systemd-analyze verify: /tmp/no/a, /tmp/no/z).
        let u = unit_user_exec("[Service]\nUser=nobody\nExecStart=/tmp/no/a\\\nb c\n");
        assert_eq!(u, Some(("nobody".into(), "/tmp/no/a".into())));
        let u = unit_user_exec("[Service]\nUser=nobody\nExecStart=\\\n  /tmp/no/z c\n");
        assert_eq!(u, Some(("nobody".into(), "/tmp/no/z".into())));
        // Two backslashes continue nothing: the name `/tmp/no/a\` is refused.
        let u = unit_user_exec("[Service]\nUser=nobody\nExecStart=/tmp/no/a\\\\\nType=oneshot\n");
        assert_eq!(u, None);
    }
    use crate::testkit::{Machine, cpus, request};

    /// Tasks get disjoint whole cores from the same planner: on 2×4×2
    /// (siblings N and N+8), `--cores 1` for 4 tasks takes cores 0-3 of
    /// package 0, one thread each.
    #[test]
    fn slurm_tasks_are_disjoint_whole_cores() {
        let sys = Machine::new(2, 4, 2).build();
        let req = request(&["--cores", "1", "--emit", "slurm", "4"]);
        let plans = task_plans(&sys, &req, &Claims::default(), 4).unwrap();
        let got: Vec<CpuSet> = plans.iter().map(|p| p.cpus.clone().unwrap()).collect();
        assert_eq!(got, vec![cpus("0"), cpus("1"), cpus("2"), cpus("3")]);
        let smt = request(&["--cores", "2", "--smt", "--emit", "slurm", "2"]);
        let plans = task_plans(&sys, &smt, &Claims::default(), 2).unwrap();
        assert_eq!(plans[0].cpus, Some(cpus("0-1,8-9")));
        assert_eq!(plans[1].cpus, Some(cpus("2-3,10-11")));
        // 8 cores: a ninth task has none left.
        let e = task_plans(&sys, &req, &Claims::default(), 9).unwrap_err();
        assert!(e.message.contains("task 8"), "{}", e.message);
        // --cpus gives every task the same CPUs: the second is refused.
        let same = request(&["--cpus", "2", "--emit", "slurm", "2"]);
        assert!(task_plans(&sys, &same, &Claims::default(), 2).is_err());
        let none = request(&["--emit", "slurm", "2"]);
        assert!(task_plans(&sys, &none, &Claims::default(), 2).is_err());
    }

    /// Issue 33 (low): every spelling of srun's option is judged, and of
    /// two the last, which srun uses (`arg_set_cpu_bind()` replaces the
    /// value before): the list pinrun reads is the one srun would bind.
    #[test]
    fn srun_lines_are_judged_by_their_last_cpu_bind() {
        let cpus_of = |line: &str| unit_lists(line).unwrap().first().map(|l| l.3.clone());
        let map = Some(cpus("2-3"));
        assert_eq!(cpus_of("srun --cpu-bind=map_cpu:2,3 app"), map);
        assert_eq!(cpus_of("srun --cpu-bind map_cpu:2,3 app"), map);
        assert_eq!(cpus_of("srun --cpu_bind=map_cpu:2,3 app"), map);
        assert_eq!(cpus_of("srun --cpu_bind map_cpu:2,3 app"), map);
        assert_eq!(
            cpus_of("srun --cpu-bind=map_cpu:0,1 --cpu-bind=verbose,mask_cpu:0xc app"),
            map
        );
        // verbose changes no binding: the list before stays.
        assert_eq!(
            cpus_of("srun --cpu-bind=map_cpu:2,3 --cpu-bind verbose app"),
            map
        );
        assert_eq!(cpus_of("srun --cpu-bind=v,mapcpu=2,3 app"), map);
        assert_eq!(cpus_of("srun --cpu-bind=map_ldom:0,1 app"), None);
        assert!(unit_lists("srun --cpu-bind=map_cpu:2,zz app").is_err());
        assert!(unit_lists("srun --cpu-bind=map_cpu:0,1 --cpu_bind map_cpu:9x app").is_err());
        // The last one binds no list: nothing to judge on this line.
        assert_eq!(
            cpus_of("srun --cpu-bind=map_cpu:0,1 --cpu-bind=cores app"),
            None
        );
    }

    /// A unit's list read as systemd 252 reads it: the cases of systemd's
    /// own src/test/test-cpu-set-util.c (`test_parse_cpu_set`) with the
    /// sets it asserts, and the numbers `safe_atou()` takes (strtoul's
    /// base 0 and mangle_base()'s 0b/0o): 0x4 is CPU 4, 010 is CPU 8.
    #[test]
    fn unit_lists_read_as_systemd_reads_them() {
        let set = |v: &str| systemd_cpu_set(v).map(|s| s.to_list());
        assert_eq!(set("0 1 2 3 4 5 6 7"), Ok("0-7".into()));
        assert_eq!(set("0, 1, 2, 3, 4, 5, 6, 7, "), Ok("0-7".into()));
        assert_eq!(set("0-3,8-11"), Ok("0-3,8-11".into()));
        assert_eq!(set("0-3  8-11, "), Ok("0-3,8-11".into()));
        // "Negative range (returns empty cpu_set)"
        assert_eq!(set("3-0"), Ok(String::new()));
        assert_eq!(set("0-7 4-11"), Ok("0-11".into()));
        assert_eq!(set("8000-8191").map(|l| l.len()), Ok("8000-8191".len()));
        assert!(set("0 1 2 3 garbage").is_err());
        assert!(set("0-3 8-garbage").is_err());
        assert!(set("0 1 2 3 \"4 5 6 7 ").is_err());
        assert!(set("8192").is_err());
        // safe_atou(): strtoul(…, 0) and mangle_base().
        assert_eq!(set("0x4"), Ok("4".into()));
        assert_eq!(set("010"), Ok("8".into()));
        assert_eq!(set("0b11 0o17"), Ok("3,15".into()));
        assert_eq!(set("+2"), Ok("2".into()));
        // parse_range() splits at the first '-': "-0" has an empty start.
        assert!(set("-0").is_err());
        assert!(set("3-").is_err());
        assert!(set("1-2-3").is_err());
        assert!(set("08").is_err());
        // Through unit_lists: the mask reading is gone, NUMAMask=all is
        // every node, an empty assignment a reset.
        let lists = unit_lists("CPUAffinity=0x4\nNUMAMask=all\nAllowedCPUs=\n").unwrap();
        assert_eq!(lists, vec![(1, "CPUAffinity", true, cpus("4"))]);
    }

    /// The fingerprint follows the core/package/node map, and its line
    /// parses back.
    #[test]
    fn fingerprint_names_the_shape() {
        let a = fingerprint(&Machine::new(2, 4, 2).build());
        assert_eq!((a.cpus, a.cores, a.packages, a.nodes), (16, 8, 2, 2));
        assert_eq!(
            Fingerprint::find_in(&format!("x\n# {}\n", a.line())),
            Found::One(a.clone())
        );
        let b = fingerprint(&Machine::new(1, 8, 2).build());
        assert_eq!((b.cpus, b.cores, b.packages, b.nodes), (16, 8, 1, 1));
        assert_ne!(a.hash, b.hash);
        assert_eq!(fingerprint_difference(&a, &a, "this machine"), None);
        assert_eq!(
            fingerprint_difference(&a, &b, "this machine").unwrap(),
            "it was emitted for 16 CPUs in 8 cores, 2 packages, 2 nodes; this machine has 16 CPUs in 8 cores, 1 package, 1 node"
        );
        assert_eq!(Fingerprint::find_in("no line"), Found::None);
        // A line without the counts is malformed, not missing; two lines
        // are refused (which one would hold is a guess).
        assert_eq!(
            Fingerprint::find_in("a\n# pinrun-topology: fnv1a64=0123456789abcdef\n"),
            Found::Malformed(2)
        );
        assert_eq!(
            Fingerprint::find_in("# pinrun-topology: garbage\n"),
            Found::Malformed(1)
        );
        assert_eq!(
            Fingerprint::find_in(&format!("# {}\nx\n# {}\n", b.line(), a.line())),
            Found::Several(1, 3)
        );
    }
}
