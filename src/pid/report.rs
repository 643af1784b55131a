//! A running process as `pinrun --pid PID` prints it (issue 18): one line
//! per thread (TID, name, allowed CPUs, last CPU, scheduling), the memory
//! (`Mems_allowed_list`, `numa_maps` summarised) and the findings of its
//! CPUs; as text or as one JSON object.

use crate::finding::Finding;
use crate::policy::Policy;
use crate::system::threads::{NumaMaps, ThreadState};
use crate::words::ns_words;
use serde_json::{Value, json};

/// What `--pid` shows about one process.
#[derive(Debug, Clone, Default)]
pub struct ProcessView {
    /// The process id.
    pub pid: u32,
    /// The process's name (`/proc/PID/comm`: its main thread's), even when
    /// `--tid` shows another thread.
    pub name: String,
    /// Its start time (field 22 of `/proc/PID/stat`, clock ticks after boot).
    pub start_time: Option<u64>,
    /// Its threads (or the one `--tid` names), ascending by TID.
    pub threads: Vec<ThreadState>,
    /// Passes over `/proc/PID/task` until one found no new thread.
    pub passes: usize,
    /// `/proc/PID/numa_maps` summarised; `None` when unreadable.
    pub numa_maps: Option<NumaMaps>,
    /// The findings of the threads' CPUs (as `--check --cpus` of them).
    pub findings: Vec<Finding>,
}

/// The scheduling of a thread as `chrt -p` names it: `SCHED_FIFO
/// priority 10`, `SCHED_DEADLINE runtime 1ms deadline 10ms period 10ms`,
/// `SCHED_OTHER nice 5`, with `, reset-on-fork` when set.
pub fn sched_words(t: &ThreadState) -> String {
    let Some(policy) = t.policy else {
        return "unknown".into();
    };
    let name =
        Policy::kernel_name_of(policy).map_or_else(|| format!("policy {policy}"), str::to_string);
    let mut s = match policy {
        Policy::SCHED_FIFO | Policy::SCHED_RR => {
            format!("{name} priority {}", t.rt_priority.unwrap_or(0))
        }
        Policy::SCHED_DEADLINE => match t.deadline {
            Some((r, d, p)) => format!(
                "{name} runtime {} deadline {} period {}",
                ns_words(r),
                ns_words(d),
                ns_words(p)
            ),
            None => name,
        },
        _ => format!("{name} nice {}", t.nice.unwrap_or(0)),
    };
    if t.reset_on_fork == Some(true) {
        s.push_str(", reset-on-fork");
    }
    s
}

fn list(set: &Option<crate::cpuset::CpuSet>) -> String {
    set.as_ref().map_or_else(|| "?".into(), |s| s.to_string())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// How many threads of process `pid` were read, and in how many passes
/// over `/proc/PID/task` (the one wording of `--pid`'s text, `-v` and
/// `--dry-run`): `3 threads, read in 2 passes over /proc/42/task`.
pub fn threads_read(pid: u32, threads: usize, passes: usize) -> String {
    format!(
        "{}, read in {} over /proc/{pid}/task",
        crate::words::count(threads, "thread"),
        crate::words::count_as(passes, "pass", "passes")
    )
}

/// The text of `pinrun --pid PID`.
pub fn process_text(v: &ProcessView) -> String {
    // Names are the program's: control characters would reach the
    // terminal (crate::claim::printable, as for other programs' text).
    let name = crate::claim::printable(&v.name);
    let mut s = format!(
        "process {} ({name}): {}\n",
        v.pid,
        threads_read(v.pid, v.threads.len(), v.passes)
    );
    s.push_str(&format!(
        "{:>8}  {:<16} {:<12} {:>4}  {}\n",
        "TID", "NAME", "CPUS", "LAST", "SCHEDULING"
    ));
    for t in &v.threads {
        s.push_str(&format!(
            "{:>8}  {:<16} {:<12} {:>4}  {}\n",
            t.tid,
            crate::claim::printable(&t.name),
            list(&t.cpus_allowed),
            t.last_cpu.map_or_else(|| "?".into(), |c| c.to_string()),
            sched_words(t)
        ));
    }
    if let Some(t) = v.threads.iter().find(|t| t.exited()) {
        s.push_str(&format!(
            "the main thread {} has exited (state {}: a zombie until the last thread exits); the process is its {}\n",
            t.tid,
            t.state.unwrap_or('Z'),
            crate::words::count(
                v.threads.iter().filter(|t| !t.exited()).count(),
                "live thread"
            )
        ));
    }
    let mems = v
        .threads
        .iter()
        .find(|t| !t.exited())
        .or(v.threads.first())
        .map(|t| list(&t.mems_allowed));
    s.push_str(&format!(
        "memory: nodes allowed {}",
        mems.as_deref().unwrap_or("?")
    ));
    match &v.numa_maps {
        None => s.push_str(
            "; numa_maps unreadable (no NUMA in the kernel, or no ptrace read access to the process)\n",
        ),
        Some(m) => {
            let policies: Vec<String> = m
                .policies
                .iter()
                .map(|(p, n)| format!("{p} ({n} mappings)"))
                .collect();
            let nodes: Vec<String> = m
                .bytes_per_node
                .iter()
                .map(|(n, b)| format!("node {n} {}", mib(*b)))
                .collect();
            s.push_str(&format!(
                "; policy {}; resident {}\n",
                if policies.is_empty() { "none".into() } else { policies.join(", ") },
                if nodes.is_empty() { "none".into() } else { nodes.join(", ") },
            ));
        }
    }
    if v.findings.is_empty() {
        s.push_str("its CPUs: no findings\n");
    } else {
        for f in &v.findings {
            s.push_str(&crate::report::finding_text(f));
        }
    }
    s
}

/// One thread as JSON: ids, CPUs, last CPU, policy and its parameters.
pub fn thread_json(t: &ThreadState) -> Value {
    json!({
        "tid": t.tid,
        "name": t.name,
        "cpus": t.cpus_allowed.as_ref().map(|c| c.to_vec()),
        "cpulist": t.cpus_allowed.as_ref().map(|c| c.to_list()),
        "mems_allowed": t.mems_allowed.as_ref().map(|c| c.to_vec()),
        "last_cpu": t.last_cpu,
        "policy": t.policy.and_then(Policy::kernel_name_of),
        "priority": t.rt_priority,
        "nice": t.nice,
        "runtime_ns": t.deadline.map(|d| d.0),
        "deadline_ns": t.deadline.map(|d| d.1),
        "period_ns": t.deadline.map(|d| d.2),
        "reset_on_fork": t.reset_on_fork,
        "start_time": t.start_time,
        "state": t.state.map(String::from),
    })
}

/// `pinrun --pid PID --json`: one object.
pub fn process_json(v: &ProcessView) -> Value {
    json!({
        "pid": v.pid,
        "name": v.name,
        "start_time": v.start_time,
        "passes": v.passes,
        "threads": v.threads.iter().map(thread_json).collect::<Vec<_>>(),
        "numa_maps": v.numa_maps.as_ref().map(|m| json!({
            "policies": m.policies,
            "bytes_per_node": m.bytes_per_node,
        })),
        "findings": crate::report::findings_json(&v.findings),
    })
}

/// What a change of a process adds to its plan's JSON (`--dry-run
/// --json`, and the change's `--json`): `memory` with the process's
/// policy unchanged (no system call sets another process's memory policy;
/// the words of `sched`'s `"policy": "unchanged"`), and `migrate`: what
/// `--migrate` moves, from and to which nodes and how many bytes (`null`
/// without it).
pub fn add_change_json(v: &mut Value, migration: Option<&crate::pid::plan::Migration>) {
    v["memory"] = json!({"policy": "unchanged", "nodes": []});
    v["migrate"] = migration.map_or(
        Value::Null,
        |m| json!({"from": m.from.to_vec(), "to": m.to.to_vec(), "bytes": m.bytes}),
    );
}

/// `--migrate` in words: what moves, and that the memory policy does not
/// change.
pub fn migration_text(pid: u32, m: &crate::pid::plan::Migration) -> String {
    let what = if m.from.is_empty() {
        format!("nothing to move: every resident page is on nodes {}", m.to)
    } else {
        format!(
            "{} bytes ({:.1} MiB) from nodes {} to nodes {}",
            m.bytes,
            m.bytes as f64 / (1024.0 * 1024.0),
            m.from,
            m.to
        )
    };
    format!(
        "pinrun: --pid {pid} --migrate: {what} (migrate_pages(2)); the process's memory policy stays as it is: no system call sets another process's memory policy\n"
    )
}

/// What a change sets on each thread, in words (`CPU 1, SCHED_RR 3, nice
/// 2`; `CPUs 4-7`); empty when it sets nothing (`--migrate` alone).
pub fn changed_words(plan: &crate::plan::Plan) -> String {
    let mut parts = Vec::new();
    if let Some(cpus) = &plan.cpus {
        parts.push(crate::words::cpus_phrase(cpus));
    }
    if let Some(policy) = plan.sched.policy {
        parts.push(match policy.rt_priority() {
            Some(prio) => format!("{} {prio}", policy.kernel_name()),
            None => policy.kernel_name().to_string(),
        });
    }
    if let Some(n) = plan.sched.nice {
        parts.push(format!("nice {n}"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(policy: u32, prio: u32, nice: i32) -> ThreadState {
        ThreadState {
            policy: Some(policy),
            rt_priority: Some(prio),
            nice: Some(nice),
            ..Default::default()
        }
    }

    /// `--pid`'s text, `-v` and `--dry-run` say the threads read in one
    /// wording (tests/live.rs holds `-v`'s to it on a live process).
    #[test]
    fn threads_read_is_one_sentence() {
        assert_eq!(
            threads_read(42, 303, 2),
            "303 threads, read in 2 passes over /proc/42/task"
        );
        assert_eq!(
            threads_read(42, 1, 1),
            "1 thread, read in 1 pass over /proc/42/task"
        );
    }

    /// A change's one line names its CPUs as every other sentence does
    /// (`crate::words::cpus_phrase`): "CPU 1" for one, "CPUs 4-7" for
    /// several; it said "CPUs 1" (`pinrun --pid P --cpus 1 --fifo 20`:
    /// `pinrun: --pid P: CPUs 1, SCHED_FIFO 20 for 4 threads`).
    #[test]
    fn changed_words_count_the_cpus() {
        use crate::request::SchedRequest;
        let plan = |cpus: &str, policy: Option<Policy>, nice: Option<i32>| {
            crate::testkit::plan_on(
                cpus,
                SchedRequest {
                    policy,
                    nice,
                    ..Default::default()
                },
            )
        };
        assert_eq!(
            changed_words(&plan("1", Some(Policy::Fifo(20)), None)),
            "CPU 1, SCHED_FIFO 20"
        );
        assert_eq!(
            changed_words(&plan("4-7", None, Some(2))),
            "CPUs 4-7, nice 2"
        );
        assert_eq!(changed_words(&plan("0,2", None, None)), "CPUs 0,2");
    }

    /// The policy names chrt(1) prints for each SCHED_* number
    /// (include/uapi/linux/sched.h), with the parameter that matters.
    #[test]
    fn scheduling_as_chrt_names_it() {
        assert_eq!(sched_words(&thread(0, 0, 5)), "SCHED_OTHER nice 5");
        assert_eq!(sched_words(&thread(1, 10, 0)), "SCHED_FIFO priority 10");
        assert_eq!(sched_words(&thread(2, 3, 0)), "SCHED_RR priority 3");
        assert_eq!(sched_words(&thread(3, 0, 19)), "SCHED_BATCH nice 19");
        assert_eq!(sched_words(&thread(5, 0, 0)), "SCHED_IDLE nice 0");
        let mut dl = thread(6, 0, 0);
        dl.deadline = Some((1_000_000, 10_000_000, 20_000_000));
        dl.reset_on_fork = Some(true);
        assert_eq!(
            sched_words(&dl),
            "SCHED_DEADLINE runtime 1ms deadline 10ms period 20ms, reset-on-fork"
        );
        assert_eq!(sched_words(&ThreadState::default()), "unknown");
    }
}
