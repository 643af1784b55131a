//! `--emit systemd`: the plan as native `[Service]` directives
//! (`systemd.exec(5)`: CPUAffinity=, NUMAPolicy=, NUMAMask=,
//! CPUSchedulingPolicy=, CPUSchedulingPriority=, CPUSchedulingResetOnFork=,
//! Nice=), with a comment line for each thing systemd cannot express.
//! Pure: returns the text.

use crate::check::{Finding, Severity};
use crate::plan::{MemMode, Plan};
use crate::policy::Policy;
use crate::request::Request;
use std::fmt::Write;

/// One `ExecStart=` word, quoted for systemd (`systemd.service(5)`
/// "Command lines", `systemd.syntax(7)`): `%` and `$` are doubled (no
/// specifier or variable expansion), a lone `;` is written `\;`, and a word
/// that is empty or holds white space, quotes or a backslash is
/// double-quoted with `\` and `"` escaped.
pub fn systemd_word(arg: &str) -> String {
    let t = arg.replace('%', "%%").replace('$', "$$");
    if t == ";" {
        // systemd.service(5): a lone ";" separates commands; "\;" is literal.
        return "\\;".into();
    }
    let plain = !t.is_empty()
        && !t
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '\\'));
    if plain {
        return t;
    }
    let mut q = String::from('"');
    for c in t.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            c if c.is_control() => q.push_str(&format!("\\x{:02x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// The `[Service]` section equivalent to `plan`. `pinrun_invocation` is
/// this pinrun's own command line without `--emit systemd` (`argv[0]` the
/// binary's path): it becomes `ExecStart=` when systemd cannot express the
/// request, so that pasting the output never loses a claim or a policy.
pub fn systemd(
    req: &Request,
    plan: &Plan,
    findings: &[Finding],
    pinrun_invocation: &[String],
) -> String {
    let mut s = String::from("[Service]\n");
    let inexpressible = req.claims.exclusive
        || plan
            .sched
            .policy
            .is_some_and(|p| p.systemd_name().is_none())
        || plan.memory.as_ref().is_some_and(|m| {
            matches!(m.mode, MemMode::PreferredMany | MemMode::WeightedInterleave)
        });
    let mut line = |text: String| {
        let _ = writeln!(s, "{text}");
    };
    match &plan.cpus {
        Some(cpus) => line(format!("CPUAffinity={}", cpus.to_list().replace(',', " "))),
        None => line("# CPU affinity unchanged (no placement requested)".into()),
    }
    if let Some(m) = &plan.memory {
        let nodes = m.nodes.to_list().replace(',', " ");
        match m.mode {
            MemMode::Bind | MemMode::Preferred | MemMode::Interleave => {
                let name = match m.mode {
                    MemMode::Bind => "bind",
                    MemMode::Preferred => "preferred",
                    _ => "interleave",
                };
                line(format!("NUMAPolicy={name}"));
                line(format!("NUMAMask={nodes}"));
            }
            MemMode::Local => line("NUMAPolicy=local".into()),
            MemMode::PreferredMany | MemMode::WeightedInterleave => line(format!(
                "# NUMAPolicy= has no {} mode: keep pinrun as the ExecStart= prefix for it (nodes {nodes})",
                m.mode.name()
            )),
        }
    }
    let sched = &plan.sched;
    match sched.policy {
        Some(Policy::Deadline {
            runtime,
            deadline,
            period,
        }) => line(format!(
            "# SCHED_DEADLINE (runtime {runtime}ns, deadline {deadline}ns, period {period}ns) has no systemd directive: keep pinrun as the ExecStart= prefix"
        )),
        Some(p) if p.systemd_name().is_none() => line(format!(
            "# {} has no systemd directive: keep pinrun as the ExecStart= prefix",
            p.kernel_name()
        )),
        Some(p) => {
            line(format!(
                "CPUSchedulingPolicy={}",
                p.systemd_name().unwrap_or(p.name())
            ));
            if let Some(prio) = p.rt_priority() {
                line(format!("CPUSchedulingPriority={prio}"));
                line("# systemd sets the policy before dropping privileges: these directives need no LimitRTPRIO=".into());
            }
        }
        None => {}
    }
    if sched.reset_on_fork {
        line("CPUSchedulingResetOnFork=yes".into());
    }
    if let Some(n) = sched.nice {
        line(format!("Nice={n}"));
    }
    if req.placement.cores.is_some() || req.placement.nodes.is_some() || req.placement.isolated {
        line("# the CPUs above were chosen on this machine now; systemd will not re-resolve --cores/--node/--isolated on another machine or after hotplug".into());
    }
    if req.claims.exclusive {
        line("# --exclusive has no systemd directive: keep `pinrun --exclusive` as the ExecStart= prefix so the cores are claimed".into());
    }
    if req.output.strict {
        line("# --strict: systemd cannot refuse on findings; add ExecStartPre=pinrun --check with the same options (it exits 1 on warnings)".into());
    }
    if !req.command.is_empty() {
        let words: Vec<String> = if inexpressible {
            pinrun_invocation.to_vec()
        } else {
            req.command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let quoted: Vec<String> = words.iter().map(|w| systemd_word(w)).collect();
        line(format!("ExecStart={}", quoted.join(" ")));
    }
    line("# systemd does not run pinrun's checks (isolation, IRQs, RT throttling); run `pinrun --check` with the same options at deploy time".into());
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    if warnings > 0 {
        line(format!(
            "# {warnings} warning(s) for this placement now: see `pinrun --check`"
        ));
    }
    s
}
