//! Hand-written sections of pinrun(1), appended by `--generate man` to the
//! synopsis and options clap_mangen generates from the clap definition.
//! The text is raw roff (man(7) macros) in `man/*.roff`, read at build
//! time (`include_str!`, as ripgrep reads its man template); `man/pinrun.1`
//! is the generated page (`pinrun --generate man`).

/// The sections after OPTIONS up to CHECKS' introduction, in
/// man-pages(7) order; [`sections`] adds the list of codes and the rest.
pub const SECTIONS_BEFORE_CODES: &str = include_str!("../man/sections-before-codes.roff");

/// The sections after the list of finding codes, from SYSTEMD on.
pub const SECTIONS_AFTER_CHECKS: &str = include_str!("../man/sections-after-checks.roff");

/// pinrun(1)'s PROBE section (`--probe`, issue 20).
pub const PROBE_SECTION: &str = include_str!("../man/probe.roff");

/// pinrun(1)'s PREPARE THE HOST section (`--plan-host`, issue 38).
pub const HOST_SECTION: &str = include_str!("../man/host.roff");

/// The line of [`SECTIONS_AFTER_CHECKS`] that [`habits_list`] replaces.
const HABITS_MARK: &str = ".\\\" HABITS\n";

/// Every hand-written section: [`SECTIONS_BEFORE_CODES`], the finding
/// codes ([`crate::finding::Code::man_list`]), [`PROBE_SECTION`], [`HOST_SECTION`],
/// [`SECTIONS_AFTER_CHECKS`] with the habits table ([`habits_list`]) in
/// its NUMACTL, TASKSET AND CHRT section.
pub fn sections() -> String {
    format!(
        "{SECTIONS_BEFORE_CODES}{}{PROBE_SECTION}{HOST_SECTION}{}",
        crate::finding::Code::man_list(),
        SECTIONS_AFTER_CHECKS.replacen(HABITS_MARK, &habits_list(), 1)
    )
}

/// `text` as roff text (man(7), groff(7)): `\` as `\e`, `-` as `\-` (a
/// minus, as options are written), and `\&` before a `.` or `'` that would
/// start a line (troff would read the line as a request, issue 37 item 4).
pub fn escape(text: &str) -> String {
    text.replace('\\', "\\e")
        .replace('-', "\\-")
        .lines()
        .map(|l| {
            if l.starts_with(['.', '\'']) {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// pinrun(1)'s list of numactl(8), taskset(1) and chrt(1) options and
/// forms, one `.TP` entry per row of [`crate::habits::HABITS`]: the tool
/// and its spellings, then pinrun's command (or why there is none), the
/// spellings pinrun takes with that meaning, those it reads otherwise,
/// and the row's note.
pub fn habits_list() -> String {
    use crate::habits::{HABITS, Pinrun};
    let mut out = String::new();
    for h in HABITS {
        let arg = h.arg.map(|a| format!(" {}", a.name)).unwrap_or_default();
        let tag = format!("{} {}{arg}", h.tool.name(), h.spellings.join(", "));
        let mut body = match h.pinrun {
            Pinrun::Use(_) => {
                // A form row (`taskset MASK COMMAND`) names its argument
                // in its shape: the first placeholder that is not the
                // command or the process.
                let name = h.arg.map(|a| a.name).or_else(|| {
                    h.spellings.first().and_then(|shape| {
                        shape.split(' ').find(|w| {
                            w.len() > 1
                                && w.chars().all(|c| c.is_ascii_uppercase())
                                && !matches!(*w, "COMMAND" | "PID")
                        })
                    })
                });
                format!(
                    "pinrun {}",
                    h.command_with(name.unwrap_or("")).unwrap_or_default()
                )
            }
            Pinrun::Default(why) => format!("pinrun's default: {why}"),
            Pinrun::None(why) => format!("no pinrun equivalent: {why}"),
        };
        if !h.accepted.is_empty() {
            body.push_str(&format!("; pinrun takes {}", h.accepted.join(", ")));
        }
        for (spelling, meaning) in h.taken {
            body.push_str(&format!("; pinrun reads {spelling} as {meaning}"));
        }
        if !h.note.is_empty() {
            body.push_str(&format!("; {}", h.note));
        }
        out.push_str(&format!(".TP\n.B {}\n{}\n", escape(&tag), escape(&body)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::habits_list;

    /// Every habit row's pinrun command carries its argument's name: a form
    /// row (`taskset MASK COMMAND`, `chrt -p PRIO PID`) names it in its
    /// shape, and the man page printed `pinrun --cpus  -- COMMAND` with
    /// none (a new user's trial). No command line has an empty argument:
    /// no double space, no space before `;`.
    #[test]
    fn every_habit_command_names_its_argument() {
        let list = habits_list();
        let commands: Vec<&str> = list.lines().filter(|l| l.starts_with("pinrun ")).collect();
        assert!(commands.len() > 20, "{list}");
        for c in &commands {
            assert!(!c.contains("  ") && !c.contains(" ;"), "{c}");
        }
        let row = |tag: &str| {
            let i = list.find(&format!(".B {tag}\n")).expect(tag);
            list[i..].lines().nth(1).unwrap().to_string()
        };
        assert!(
            row("taskset MASK COMMAND").starts_with(r"pinrun \-\-cpus MASK \-\- COMMAND;"),
            "{}",
            row("taskset MASK COMMAND")
        );
        assert!(row(r"taskset \-pc LIST PID").starts_with(r"pinrun \-\-pid PID \-\-cpus LIST"));
        assert!(row(r"chrt \-p PRIO PID").starts_with(r"pinrun \-\-pid PID \-\-rr PRIO"));
    }
}
