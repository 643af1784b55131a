//! The fleet wing's emitters. `--emit systemd`: the plan as native `[Service]` directives
//! (`systemd.exec(5)`: CPUAffinity=, NUMAPolicy=, NUMAMask=,
//! CPUSchedulingPolicy=, CPUSchedulingPriority=, CPUSchedulingResetOnFork=,
//! Nice=), with a comment line for each thing systemd cannot express;
//! `--emit k8s` and `--emit slurm N` (issue 23). Every emitted text
//! carries the machine's topology fingerprint as a comment
//! ([`super::plan::Fingerprint`]), which `--check-emitted` compares.
//! Pure: returns the text.

use super::plan::Fingerprint;
use crate::check::{Finding, Severity};
use crate::cpuset::CpuSet;
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
    quoted_word(&arg.replace('$', "$$"))
}

/// [`systemd_word`] for `ExecStart=`'s first word, the executable's path:
/// systemd expands specifiers in it (`%%` is `%`) but no variable, so a
/// `$` is written as itself (systemd 252, `systemd-analyze verify`:
/// `ExecStart=/tmp/no/a$$b` runs `/tmp/no/a$$b`).
pub fn systemd_path_word(path: &str) -> String {
    quoted_word(path)
}

/// `t` with `%` doubled, quoted and C-escaped for a systemd command line.
fn quoted_word(t: &str) -> String {
    let t = t.replace('%', "%%");
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
/// With `--cgroup`, `AllowedCPUs=` and `AllowedMemoryNodes=`
/// (`systemd.resource-control(5)`, cgroup v2 only) make the unit's cpuset
/// the plan's CPUs and the nodes of its CPUs and memory policy. With
/// `--exclusive` neither `CPUAffinity=` nor `AllowedCPUs=` is fixed: the
/// `pinrun --exclusive` of `ExecStart=` chooses and claims free cores at
/// each start, so two units from the same request do not collide. The
/// first comment is the topology fingerprint `fp`. `path_var`, the
/// caller's `PATH`, tells whether a pinrun baked into `ExecStart=` is an
/// installed one ([`transient_pinrun`]).
pub fn systemd(
    req: &Request,
    plan: &Plan,
    findings: &[Finding],
    pinrun_invocation: &[String],
    fp: &Fingerprint,
    path_var: Option<&str>,
) -> String {
    let mut s = format!("[Service]\n# {}\n", fp.line());
    let inexpressible = req.claims.exclusive
        || plan
            .sched
            .policy
            .is_some_and(|p| p.systemd_name().is_none())
        || plan.memory.as_ref().is_some_and(|m| {
            matches!(m.mode, MemMode::PreferredMany | MemMode::WeightedInterleave)
        });
    // --exclusive: the cores are chosen and claimed at launch by the
    // ExecStart= pinrun; fixed lists here would pin every instance of the
    // unit to the cores chosen now, and two would collide on them.
    let exclusive = req.claims.exclusive;
    match &plan.cpus {
        Some(_) if exclusive => line(&mut s, "# no CPUAffinity=: with --exclusive, pinrun in ExecStart= chooses and claims free cores at each start (fixed CPUs would make two such units collide)".into()),
        Some(cpus) => line(&mut s, format!("CPUAffinity={}", cpus.to_list().replace(',', " "))),
        None => line(&mut s, "# CPU affinity unchanged (no placement requested)".into()),
    }
    memory_lines(&mut s, plan, exclusive);
    sched_lines(&mut s, plan);
    if req.fleet.cgroup {
        cgroup_lines(&mut s, plan, exclusive);
    }
    if let Some(n) = plan.sched.nice {
        line(&mut s, format!("Nice={n}"));
    }
    if !exclusive
        && (req.placement.cores.is_some()
            || req.placement.nodes.is_some()
            || req.placement.isolated)
    {
        line(&mut s, "# the CPUs above were chosen on this machine now; systemd will not re-resolve --cores/--node/--isolated on another machine or after hotplug".into());
    }
    if req.claims.exclusive {
        line(&mut s, "# --exclusive has no systemd directive: keep `pinrun --exclusive` as the ExecStart= prefix so the cores are claimed".into());
    }
    if req.output.strict {
        line(&mut s, "# --strict: systemd cannot refuse on findings; add ExecStartPre=pinrun --check with the same options (it exits 1 on warnings)".into());
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
        let quoted: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| match i {
                0 => systemd_path_word(w),
                _ => systemd_word(w),
            })
            .collect();
        line(&mut s, format!("ExecStart={}", quoted.join(" ")));
        if let Some(user) = &req.fleet.unit_user {
            line(&mut s, format!("User={user}"));
            user_lines(&mut s, user, words.first(), inexpressible);
        }
        if let Some(w) = inexpressible
            .then(|| {
                words
                    .first()
                    .and_then(|exe| transient_pinrun(exe, path_var))
            })
            .flatten()
        {
            line(&mut s, w);
        }
    }
    line(&mut s, "# systemd does not run pinrun's checks (isolation, IRQs, RT throttling); run `pinrun --check` with the same options at deploy time".into());
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    if warnings > 0 {
        line(
            &mut s,
            format!(
                "# {} for this placement now: see `pinrun --check`",
                crate::words::count(warnings, "warning")
            ),
        );
    }
    s
}

/// The warning line when `user` (the unit's `User=`) cannot run `exec`
/// (the `ExecStart=` first word, `pinrun` itself when `is_pinrun`): see
/// [`user_problem`].
fn user_lines(s: &mut String, user: &str, exec: Option<&String>, is_pinrun: bool) {
    if let Some(why) = exec.and_then(|w| user_problem(user, w, is_pinrun)) {
        line(s, format!("# warning: {why}"));
    }
}

/// The install hint for a binary a unit's user cannot run or that may be
/// gone: pinrun itself (`is_pinrun`, README's install step) or the
/// command.
fn install_fix(is_pinrun: bool) -> &'static str {
    if is_pinrun {
        "install pinrun where every user can reach it: cargo install --locked --path . --root /usr/local (/usr/local/bin/pinrun), or the Debian package (/usr/bin/pinrun)"
    } else {
        "install the command where that user can search every directory, or choose another User="
    }
}

/// Why a unit's `User=user` cannot run its `ExecStart=` whose first word
/// is `word` (unquoted, without systemd's prefixes): no such user; a bare
/// name found nowhere on systemd's fixed search path
/// ([`super::access::systemd_exec`]); or the directory or file that
/// denies `user` search or execute permission, its mode and owner
/// ([`super::access::blocked_exec`]), and the fix. `None` when the user
/// can run it. `--emit systemd --unit-user` says it as a `# warning:`
/// line, `--check-emitted` refuses with it.
pub fn user_problem(user: &str, word: &str, is_pinrun: bool) -> Option<String> {
    let Some((uid, gids)) = super::access::user_ids(user) else {
        return Some(format!(
            "User={user}: no such user on this machine (/etc/passwd); systemd refuses to start the unit without it"
        ));
    };
    let Some(path) = super::access::systemd_exec(word) else {
        return Some(format!(
            "ExecStart={word}: no executable {word} in systemd's search path ({}; systemd.service(5)): the unit fails to start (status=203/EXEC); name the command by its absolute path",
            super::access::SYSTEMD_PATH.join(":")
        ));
    };
    let b = super::access::blocked_exec(&path, uid, &gids)?;
    let found = if word.starts_with('/') {
        String::new()
    } else {
        format!(" (ExecStart={word}, found on systemd's search path)")
    };
    let (verb, lacks, source) = if b.dir == path {
        ("execute", "execute", "execve(2)")
    } else {
        ("reach", "search", "path_resolution(7)")
    };
    Some(format!(
        "User={user} cannot {verb} {}{found}: {} is mode {:04o}, owner uid {} gid {} (no {lacks} permission for uid {uid}; {source}); {}",
        path.display(),
        b.dir.display(),
        b.mode,
        b.uid,
        b.gid,
        install_fix(is_pinrun)
    ))
}

/// The warning line when the `ExecStart=` of a unit names this pinrun by
/// `exe`, the path of the binary that ran, and that binary is neither on
/// `path_var` (the caller's `PATH`) nor under a system directory
/// ([`super::access::installed`]): a build tree or `/tmp` may be gone when
/// the unit starts.
pub fn transient_pinrun(exe: &str, path_var: Option<&str>) -> Option<String> {
    let p = std::path::Path::new(exe);
    (!super::access::installed(p, path_var)).then(|| {
        format!(
            "# warning: ExecStart= runs {exe}, the pinrun that wrote this unit, which is neither on PATH nor under /usr, /bin, /sbin or /opt (a build or temporary path may be gone when the unit starts); {}, then emit again",
            install_fix(true)
        )
    })
}

/// Appends `text` and a newline to `s`: one line of a unit.
fn line(s: &mut String, text: String) {
    let _ = writeln!(s, "{text}");
}

/// The memory policy's lines of a unit for `plan`: `NUMAPolicy=` and
/// `NUMAMask=` (`systemd.exec(5)`), or a comment for a mode systemd has
/// not, or, with `exclusive`, for the policy `pinrun` in `ExecStart=`
/// sets for the cores it chooses.
fn memory_lines(s: &mut String, plan: &Plan, exclusive: bool) {
    if let Some(m) = plan.memory.as_ref().filter(|_| exclusive) {
        line(
            s,
            format!(
                "# no NUMAPolicy=: with --exclusive, pinrun in ExecStart= sets the {} memory policy for the nodes of the cores it chooses",
                m.mode.name()
            ),
        );
    } else if let Some(m) = &plan.memory {
        let nodes = m.nodes.to_list().replace(',', " ");
        match m.mode {
            MemMode::Bind | MemMode::Preferred | MemMode::Interleave => {
                let name = match m.mode {
                    MemMode::Bind => "bind",
                    MemMode::Preferred => "preferred",
                    _ => "interleave",
                };
                line(s, format!("NUMAPolicy={name}"));
                line(s, format!("NUMAMask={nodes}"));
            }
            MemMode::Local => line(s, "NUMAPolicy=local".into()),
            MemMode::PreferredMany | MemMode::WeightedInterleave => line(
                s,
                format!(
                    "# NUMAPolicy= has no {} mode: keep pinrun as the ExecStart= prefix for it (nodes {nodes})",
                    m.mode.name()
                ),
            ),
        }
    }
}

/// The scheduling lines of a unit for `plan`: `CPUSchedulingPolicy=`,
/// `CPUSchedulingPriority=` and `CPUSchedulingResetOnFork=`
/// (`systemd.exec(5)`), or a comment for a policy systemd has not.
fn sched_lines(s: &mut String, plan: &Plan) {
    let sched = &plan.sched;
    match sched.policy {
        Some(Policy::Deadline {
            runtime,
            deadline,
            period,
        }) => line(
            s,
            format!(
                "# SCHED_DEADLINE (runtime {runtime}ns, deadline {deadline}ns, period {period}ns) has no systemd directive: keep pinrun as the ExecStart= prefix"
            ),
        ),
        Some(p) if p.systemd_name().is_none() => line(
            s,
            format!(
                "# {} has no systemd directive: keep pinrun as the ExecStart= prefix",
                p.kernel_name()
            ),
        ),
        Some(p) => {
            line(
                s,
                format!(
                    "CPUSchedulingPolicy={}",
                    p.systemd_name().unwrap_or(p.name())
                ),
            );
            if let Some(prio) = p.rt_priority() {
                line(s, format!("CPUSchedulingPriority={prio}"));
                line(s, "# systemd sets the policy before dropping privileges: these directives need no LimitRTPRIO=".into());
            }
        }
        None => {}
    }
    if sched.reset_on_fork {
        line(s, "CPUSchedulingResetOnFork=yes".into());
    }
}

/// `--cgroup`'s lines of a unit for `plan`: `AllowedCPUs=` and
/// `AllowedMemoryNodes=` (`systemd.resource-control(5)`: the nodes of the
/// CPUs and of the memory policy), or a comment when there is no
/// placement or, with `exclusive`, the cores are chosen at each start.
fn cgroup_lines(s: &mut String, plan: &Plan, exclusive: bool) {
    match &plan.cpus {
        Some(_) if exclusive => line(s, "# --cgroup with --exclusive: no AllowedCPUs=/AllowedMemoryNodes=, the cores are chosen at each start".into()),
        Some(cpus) => {
            line(s, format!("AllowedCPUs={}", cpus.to_list().replace(',', " ")));
            let mut nodes = plan.nodes.clone();
            if let Some(m) = &plan.memory {
                nodes.union_with(&m.nodes);
            }
            if !nodes.is_empty() {
                line(s, format!(
                    "AllowedMemoryNodes={}",
                    nodes.to_list().replace(',', " ")
                ));
            }
            line(s, "# AllowedCPUs=/AllowedMemoryNodes= need cgroup v2 with the cpuset controller (systemd.resource-control(5))".into());
        }
        None => line(s, "# --cgroup: no placement requested, so no AllowedCPUs=".into()),
    }
}

/// The CPUs a container needs for `plan` from kubelet's static CPU
/// manager: every thread of the chosen cores (the static policy hands out
/// CPUs, and under SMT `full-pcpus-only` hands out whole cores only).
fn whole_core_cpus(plan: &Plan) -> CpuSet {
    let mut all = CpuSet::new();
    for c in &plan.cores {
        all.union_with(&c.cpus);
    }
    if all.is_empty()
        && let Some(cpus) = &plan.cpus
    {
        all = cpus.clone();
    }
    all
}

/// `--emit k8s`: the container `resources` stanza that gets `plan`'s CPUs
/// exclusively from kubelet's static CPU manager (kubelet docs "Control
/// CPU Management Policies on the Node": integer CPU requests equal to
/// the limits in a Guaranteed pod; `full-pcpus-only` for whole cores),
/// the container `command` running pinrun inside them
/// (`pinrun_invocation`, when a command is given), and as comments the
/// CRI-O annotations of a performance runtime class that disable the CFS
/// quota and IRQ and load balancing on those CPUs. The fingerprint is the
/// first comment. When the plan's scheduling needs `CAP_SYS_NICE`
/// ([`needs_sys_nice`]), a `securityContext` adds it (containerd and CRI-O
/// drop it by default, and pinrun then exits 125 on `sched_setattr`
/// EPERM). `CAP_IPC_LOCK` is never added: pinrun locks no memory for the
/// command.
pub fn k8s(plan: &Plan, fp: &Fingerprint, pinrun_invocation: &[String], command: bool) -> String {
    let cpus = whole_core_cpus(plan);
    let n = cpus.len();
    let smt = plan.cores.iter().any(|c| c.cpus.len() > 1);
    let mut s = format!("# {}\n", fp.line());
    s.push_str(&format!(
        "# {n} {} ({} whole {}) from kubelet's static CPU manager: kubelet --cpu-manager-policy=static{}\n",
        if n == 1 { "CPU" } else { "CPUs" },
        plan.cores.len().max(1),
        if plan.cores.len() == 1 { "core" } else { "cores" },
        if smt {
            " --cpu-manager-policy-options=full-pcpus-only=true (SMT: whole cores only)"
        } else {
            ""
        }
    ));
    s.push_str("# kubelet chooses which CPUs; pinrun, the entrypoint, plans inside them\n");
    s.push_str("resources:\n");
    for part in ["requests", "limits"] {
        s.push_str(&format!(
            "  {part}:\n    cpu: \"{n}\"\n    memory: \"1Gi\"  # any value, the same in requests and limits (Guaranteed QoS)\n"
        ));
    }
    if command {
        let words: Vec<String> = std::iter::once("pinrun".to_string())
            .chain(pinrun_invocation.iter().skip(1).cloned())
            .map(|w| k8s_word(&w))
            .collect();
        s.push_str(&format!("command: [{}]\n", words.join(", ")));
    }
    if let Some(why) = needs_sys_nice(plan) {
        s.push_str(&format!(
            "# {why}: needs CAP_SYS_NICE, which container runtimes drop by default\nsecurityContext:\n  capabilities:\n    add: [\"SYS_NICE\"]\n"
        ));
    }
    s.push_str(
        "# pod metadata.annotations (CRI-O, with a runtimeClassName whose handler allows them):\n",
    );
    s.push_str("#   cpu-quota.crio.io: \"disable\"\n");
    s.push_str("#   cpu-load-balancing.crio.io: \"disable\"\n");
    s.push_str("#   irq-load-balancing.crio.io: \"disable\"\n");
    s
}

/// One word of a container's `command` as kubelet will pass it to the
/// runtime: a YAML double-quoted scalar (YAML 1.2 §7.3.1; JSON's escapes
/// are a subset) in which every `$` is doubled, because kubelet expands
/// `$(VAR)` in `command` and `args` and reduces `$$` to `$` (the
/// Kubernetes API's `Container.command`; `third_party/forked/golang/
/// expansion`), and every character a YAML reader may fold or reject is
/// escaped: `"`, `\`, the C0 and C1 controls (U+0085, NEL, is a line
/// break to YAML 1.1 readers), DEL, U+2028, U+2029 and U+FEFF.
pub fn k8s_word(w: &str) -> String {
    let mut out = String::with_capacity(w.len() + 2);
    out.push('"');
    for c in w.chars() {
        match c {
            '$' => out.push_str("$$"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Why `plan` needs `CAP_SYS_NICE` in a container, as the words for a
/// comment; `None` when it does not. `sched(7)` "Privileges and resource
/// limits": a real-time policy or SCHED_DEADLINE without an
/// RLIMIT_RTPRIO, and a negative nice value without an RLIMIT_NICE (a
/// container's limits are 0); and a memory policy: the RuntimeDefault
/// seccomp profile (containerd's and CRI-O's, from Docker's
/// `profiles/seccomp/default.json`) allows `set_mempolicy(2)` and
/// `mbind(2)` only with CAP_SYS_NICE.
pub fn needs_sys_nice(plan: &Plan) -> Option<String> {
    let sched = match plan.sched.policy {
        Some(p) if p.is_rt() || p.is_deadline() => Some(p.kernel_name().to_string()),
        _ => plan
            .sched
            .nice
            .filter(|n| *n < 0)
            .map(|n| format!("nice {n}")),
    };
    let memory = plan.memory.as_ref().map(|m| {
        format!(
            "the {} memory policy (set_mempolicy, which the RuntimeDefault seccomp profile allows only with CAP_SYS_NICE)",
            m.mode.name()
        )
    });
    match (sched, memory) {
        (Some(a), Some(b)) => Some(format!("{a} and {b}")),
        (a, b) => a.or(b),
    }
}

/// `0x` and the cpumask of `cpus` as one hex number (`mask_cpu:` of
/// `srun(1)` `--cpu-bind`).
fn slurm_mask(cpus: &CpuSet) -> String {
    let hex = cpus.to_mask().replace(',', "");
    let trimmed = hex.trim_start_matches('0');
    format!("0x{}", if trimmed.is_empty() { "0" } else { trimmed })
}

/// `--emit slurm N`: the `srun(1)` options that bind N tasks per node to
/// `plans` (one per task, from [`super::plan::task_plans`]):
/// `--cpu-bind=map_cpu:` when every task has one CPU, `mask_cpu:`
/// otherwise, and the command (`command`, or `COMMAND`). The fingerprint
/// is the first comment. `policies`: the request also sets a scheduling or
/// memory policy, which srun cannot: a comment says to keep pinrun before
/// the command for it.
pub fn slurm(plans: &[Plan], fp: &Fingerprint, command: &[String], policies: bool) -> String {
    let mut s = format!("# {}\n", fp.line());
    let sets: Vec<CpuSet> = plans.iter().filter_map(|p| p.cpus.clone()).collect();
    for (i, c) in sets.iter().enumerate() {
        s.push_str(&format!("# task {i}: CPUs {c}\n"));
    }
    let bind = if sets.iter().all(|c| c.len() == 1) {
        let cpus: Vec<String> = sets
            .iter()
            .filter_map(|c| c.first())
            .map(|c| c.to_string())
            .collect();
        format!("map_cpu:{}", cpus.join(","))
    } else {
        let masks: Vec<String> = sets.iter().map(slurm_mask).collect();
        format!("mask_cpu:{}", masks.join(","))
    };
    // `--` ends srun's options (getopt_long): a command word starting
    // with `-` is the program, never an srun option.
    let cmd = if command.is_empty() {
        "COMMAND".to_string()
    } else {
        std::iter::once(&"--".to_string())
            .chain(command.iter())
            .map(|w| {
                if w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-=:,+@%".contains(c))
                    && !w.is_empty()
                {
                    w.clone()
                } else {
                    format!("'{}'", w.replace('\'', "'\\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    // What the line needs to run as printed (issue 34 item 4).
    s.push_str("# the masks name CPU ids: the job must hold the whole node (sbatch/salloc --exclusive); in a partial allocation srun refuses them (\"CPU binding outside of job step allocation\")\n");
    let partial = plans.iter().any(|p| {
        let whole: CpuSet = p.cores.iter().flat_map(|c| c.cpus.iter()).collect();
        p.cpus
            .as_ref()
            .is_some_and(|c| !p.cores.is_empty() && *c != whole)
    });
    if partial {
        s.push_str("# each task's mask is part of its cores (no --smt): inside a task run pinrun without a placement, which plans on the task's CPUs; for whole-core masks emit with --smt\n");
    }
    if policies {
        s.push_str("# srun sets no scheduling or memory policy: run `pinrun` with those options and without a placement before the command; it plans inside each task's mask\n");
    }
    s.push_str(&format!(
        "srun --ntasks-per-node={} --cpu-bind=verbose,{bind} {cmd}\n",
        plans.len()
    ));
    s
}
