//! Per-thread placement (issue 22), pure: the OpenMP places and
//! environment of `--omp`, and the resolved rules of `--thread-map` with
//! the decision for one thread ([`ThreadMap::decide`]), which the watcher
//! (`apply::per_thread`) asks for every new or renamed thread.
//!
//! Both work inside the plan: the process affinity stays the whole plan
//! (set before exec), so no thread can run outside it whatever a rule, a
//! runtime or the watcher does.

use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};
use crate::request::{OmpPlaces, Request, ThreadRule, ThreadSelector, ThreadTarget};
use crate::system::SystemState;

use super::Plan;

/// The positions of the plan, in plan order: per planned core (in the
/// order of [`Plan::cores`]) its planned CPUs as one position when
/// `group_siblings` (`--smt`), otherwise one position per planned CPU;
/// planned CPUs of no known core follow, one each.
pub fn positions(plan: &Plan, group_siblings: bool) -> Vec<CpuSet> {
    let Some(cpus) = &plan.cpus else {
        return Vec::new();
    };
    let mut out: Vec<CpuSet> = Vec::new();
    let mut seen = CpuSet::new();
    for core in &plan.cores {
        let mine = core.cpus.intersection(cpus).difference(&seen);
        if mine.is_empty() {
            continue;
        }
        seen.union_with(&mine);
        if group_siblings {
            out.push(mine);
        } else {
            out.extend(mine.iter().map(|c| std::iter::once(c).collect()));
        }
    }
    out.extend(
        cpus.difference(&seen)
            .iter()
            .map(|c| std::iter::once(c).collect()),
    );
    out
}

/// How often the `--thread-map` watcher scans `/proc/PID/task` for new
/// threads and renames, in microseconds (pinrun(1) THREADS): a thread runs
/// on the process affinity (the whole plan) for at most about this long
/// before it is pinned (BENCHMARKS.md).
pub const POLL_INTERVAL_US: u64 = 2000;

/// What `--omp` exports to the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpPlan {
    /// The places, in plan order.
    pub places: Vec<CpuSet>,
    /// Variables set, in this order: `OMP_PLACES`, `OMP_PROC_BIND`, and
    /// `OMP_NUM_THREADS` unless the caller set it.
    pub set: Vec<(String, String)>,
    /// Variables removed (`--omp-replace`: `KMP_AFFINITY`,
    /// `GOMP_CPU_AFFINITY` when the caller set them).
    pub unset: Vec<String>,
}

/// `OMP_PLACES` as an explicit place list (OpenMP 5.2 §21.1.6): `{0,1},{2,3}`.
pub fn omp_places_value(places: &[CpuSet]) -> String {
    places
        .iter()
        .map(|p| {
            let ids: Vec<String> = p.iter().map(|c| c.to_string()).collect();
            format!("{{{}}}", ids.join(","))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The value `--omp` gives `OMP_PROC_BIND`: `close` puts thread i on place
/// i when there are as many threads as places (OpenMP 5.2 §10.1.3).
pub const OMP_PROC_BIND: &str = "close";

/// The caller's thread-binding variables that bind: all but an
/// `OMP_PLACES`, `OMP_PROC_BIND` or `GOMP_CPU_AFFINITY` that is empty or
/// only white space, which libgomp rejects as invalid and then ignores as
/// if unset (libgomp/env.c `parse_places_var`, `parse_bind_var`: `if
/// (*env == '\0') goto invalid;`; `parse_affinity`: `end == env` after
/// `strtoul` is invalid).
pub fn binding_env(env: &[(String, String)]) -> impl Iterator<Item = &(String, String)> {
    env.iter().filter(|(k, v)| {
        !(matches!(
            k.as_str(),
            "OMP_PLACES" | "OMP_PROC_BIND" | "GOMP_CPU_AFFINITY"
        ) && v.trim().is_empty())
    })
}

/// The variables of `env` (the caller's thread-binding variables) that
/// make an OpenMP runtime bind its threads itself, each read as its
/// owner's parser reads it (issue 35: a value can turn the feature off):
///
/// - `OMP_PROC_BIND` as [`omp_proc_bind`] reads it: `false` binds
///   nothing, and makes libgomp ignore `OMP_PLACES` and
///   `GOMP_CPU_AFFINITY` ("If OMP_PROC_BIND was set explicitly to false,
///   don't populate places list", `initialize_env()` in libgomp/env.c,
///   which passes `ignore` to `parse_places_var`; the LLVM runtime maps it
///   to no binding too); an invalid value (`yes`, `false,close`) is
///   ignored as if unset;
/// - `KMP_AFFINITY` whose type is `none` or `disabled` binds nothing
///   (LLVM/Intel `__kmp_parse_affinity_env()`, openmp/runtime/src/
///   kmp_settings.cpp: `none` leaves threads unbound, `disabled` turns
///   the affinity interface off);
/// - an empty `OMP_PLACES`, `OMP_PROC_BIND` or `GOMP_CPU_AFFINITY` is
///   ignored ([`binding_env`]).
///
/// Unset variables bind nothing (their defaults: no places, binding off).
pub fn rebinding_env(env: &[(String, String)]) -> impl Iterator<Item = &(String, String)> {
    let bind_off = env
        .iter()
        .any(|(k, v)| k == "OMP_PROC_BIND" && omp_proc_bind(v) == Some(false));
    binding_env(env).filter(move |(k, v)| match k.as_str() {
        "OMP_PROC_BIND" => omp_proc_bind(v) == Some(true),
        "OMP_PLACES" | "GOMP_CPU_AFFINITY" => !bind_off,
        "KMP_AFFINITY" => !kmp_affinity_off(v),
        _ => true,
    })
}

/// `OMP_PROC_BIND` as libgomp's `parse_bind_var()` (libgomp/env.c) reads
/// it: `Some(false)` for `false`, `Some(true)` for `true`, `master`,
/// `primary`, `close`, `spread` or a list of the last four (white space
/// around each, names case-insensitive, matched as prefixes with
/// `strncasecmp` as libgomp does), `None` for anything else (empty,
/// `false,close`, `yes`): libgomp says "Invalid value" and treats the
/// variable as unset.
pub fn omp_proc_bind(v: &str) -> Option<bool> {
    const KINDS: [&str; 6] = ["false", "true", "master", "primary", "close", "spread"];
    /// The index in `KINDS[from..]` matching the start of `s`, and the rest.
    fn kind(s: &str, from: usize) -> Option<(usize, &str)> {
        let s = s.trim_start();
        (from..KINDS.len()).find_map(|i| {
            let n = KINDS[i].len();
            let head = s.get(..n)?;
            head.eq_ignore_ascii_case(KINDS[i])
                .then(|| (i, s[n..].trim_start()))
        })
    }
    let (first, mut rest) = kind(v, 0)?;
    if rest.is_empty() {
        return Some(first != 0);
    }
    // A list: only of master, primary, close and spread.
    if first < 2 {
        return None;
    }
    while let Some(tail) = rest.strip_prefix(',') {
        rest = kind(tail, 2)?.1;
    }
    rest.is_empty().then_some(true)
}

/// Whether libgomp accepts an `OMP_NUM_THREADS` value
/// (`parse_unsigned_long_list()`, libgomp/env.c): a `,`-separated list of
/// decimal numbers above 0, white space around each. Anything else (empty,
/// `0`, `four`) is "Invalid value" and the variable counts as unset: the
/// runtime then starts one thread per CPU of its affinity, so `--omp` sets
/// it as when it is unset.
fn omp_num_threads_valid(v: &str) -> bool {
    v.split(',')
        .all(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
}

/// Whether a `KMP_AFFINITY` value's type is `none` or `disabled`: the
/// value is `[modifier,...]type[,permute][,offset]`, items separated by
/// `,` (a `proclist=[...]` modifier holds numbers, never a type name),
/// case-insensitive as `__kmp_match_str` compares.
fn kmp_affinity_off(v: &str) -> bool {
    v.split(',')
        .map(str::trim)
        .any(|t| t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("disabled"))
}

/// Whether the caller's value `theirs` of `key` means what pinrun's
/// `ours` means: `OMP_PLACES` compared as parsed place lists
/// ([`parse_omp_places`]: `{0}, {1}` is `{0},{1}`), `OMP_PROC_BIND` as
/// libgomp reads it (case-insensitive, white space around ignored), any
/// other variable as text.
fn same_omp_value(key: &str, theirs: &str, ours: &str) -> bool {
    match key {
        "OMP_PLACES" => match (parse_omp_places(theirs), parse_omp_places(ours)) {
            (Some(a), Some(b)) => a == b,
            _ => theirs == ours,
        },
        "OMP_PROC_BIND" => theirs.trim().eq_ignore_ascii_case(ours.trim()),
        _ => theirs == ours,
    }
}

/// An explicit `OMP_PLACES` place list as libgomp's `parse_one_place`
/// reads it (OpenMP 5.2 §21.1.6): places separated by `,`, each `{…}` of
/// numbers and intervals `n:len[:stride]`, or a bare number; a place may be
/// repeated as `place:len[:stride]` (each copy shifted by `stride`,
/// default 1); white space is allowed around every token. `None` for
/// abstract names (`cores`, `threads(4)`), exclusions (`!`), an empty
/// place or anything else libgomp would reject.
pub fn parse_omp_places(text: &str) -> Option<Vec<CpuSet>> {
    fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
        s.trim().parse().ok()
    }
    /// `a:len[:stride]` → (a, len, stride); `a` → (a, 1, 1).
    fn interval<T: std::str::FromStr + Copy>(s: &str) -> Option<(T, u32, i64)> {
        let mut it = s.split(':');
        let a = num(it.next()?)?;
        let len = it.next().map_or(Some(1), num)?;
        let stride = it.next().map_or(Some(1), num)?;
        (it.next().is_none() && len > 0).then_some((a, len, stride))
    }
    let mut places = Vec::new();
    let mut rest = text.trim();
    if rest.is_empty() || rest.contains('!') {
        return None;
    }
    while !rest.is_empty() {
        // One place and its optional `:len[:stride]`, up to the next top-level ','.
        let tail = if let Some(body) = rest.strip_prefix('{') {
            let close = body.find('}')?;
            let mut set = CpuSet::new();
            for item in body[..close].split(',') {
                let (a, len, stride) = interval::<u32>(item)?;
                for i in 0..len {
                    set.insert(u32::try_from(i64::from(a) + i64::from(i) * stride).ok()?);
                }
            }
            let after = &body[close + 1..];
            let end = after.find(',').unwrap_or(after.len());
            let (copies, stride) = match after[..end].trim() {
                "" => (1, 1),
                rep => {
                    let (_, len, stride) = interval::<u32>(&format!("0{rep}"))?;
                    (len, stride)
                }
            };
            if set.is_empty() {
                return None;
            }
            for k in 0..copies {
                let shifted: Option<CpuSet> = set
                    .iter()
                    .map(|c| u32::try_from(i64::from(c) + i64::from(k) * stride).ok())
                    .collect();
                places.push(shifted?);
            }
            &after[end..]
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let (a, len, stride) = interval::<u32>(&rest[..end])?;
            for k in 0..len {
                places.push(
                    std::iter::once(u32::try_from(i64::from(a) + i64::from(k) * stride).ok()?)
                        .collect(),
                );
            }
            &rest[end..]
        };
        rest = match tail.strip_prefix(',') {
            Some(t) if !t.trim().is_empty() => t.trim_start(),
            Some(_) => return None,
            None if tail.trim().is_empty() => "",
            None => return None,
        };
    }
    Some(places)
}

/// Plans `--omp`: `None` without it. Refuses (`omp-conflict`) when the
/// caller's `OMP_PLACES` or `OMP_PROC_BIND` differ from pinrun's, or
/// `KMP_AFFINITY` (Intel/LLVM runtimes, which then ignore `OMP_PLACES`)
/// or `GOMP_CPU_AFFINITY` (libgomp, which then ignores `OMP_PLACES`) is
/// set, unless `--omp-replace`.
pub fn plan_omp(sys: &SystemState, req: &Request, plan: &Plan) -> Result<Option<OmpPlan>> {
    let Some(kind) = req.threads.omp else {
        return Ok(None);
    };
    let places = positions(plan, kind == OmpPlaces::Cores && req.placement.smt);
    let value = omp_places_value(&places);
    let ours = [
        ("OMP_PLACES", value.as_str()),
        ("OMP_PROC_BIND", OMP_PROC_BIND),
    ];
    let conflicts: Vec<String> = binding_env(&sys.env_affinity)
        .filter(|(k, v)| {
            ours.iter()
                .find(|(o, _)| o == k)
                .is_none_or(|(_, mine)| !same_omp_value(k, v, mine))
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !conflicts.is_empty() && !req.threads.omp_replace {
        return Err(Error::new(
            ErrorCode::OmpConflict,
            format!(
                "--omp: the environment already sets OpenMP's binding ({}), and the runtime would follow it, not OMP_PLACES={value}",
                conflicts.join(", ")
            ),
        )
        .hint(format!(
            "add --omp-replace to replace them, or unset {} first",
            binding_env(&sys.env_affinity)
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        )));
    }
    let mut set: Vec<(String, String)> = ours
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if !sys
        .env_omp_num_threads
        .as_deref()
        .is_some_and(omp_num_threads_valid)
    {
        set.push(("OMP_NUM_THREADS".into(), places.len().to_string()));
    }
    let unset = sys
        .env_affinity
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| !ours.iter().any(|(o, _)| o == k))
        .collect();
    Ok(Some(OmpPlan { places, set, unset }))
}

/// One `--thread-map` rule with its CPUs resolved on the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapRule {
    /// The rule as given.
    pub rule: ThreadRule,
    /// The CPUs a matching thread gets; for `each`, every position's
    /// CPUs (one position per thread is chosen by [`ThreadMap::decide`]).
    pub cpus: CpuSet,
}

/// The resolved `--thread-map`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadMap {
    /// The rules, in order.
    pub rules: Vec<MapRule>,
    /// The plan's positions (see [`positions`]).
    pub positions: Vec<CpuSet>,
}

/// A thread as the watcher sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Whether it is the main thread (TID = PID).
    pub main: bool,
    /// Creation order: 0 for the main thread, then 1, 2… in the order the
    /// watcher first saw the TIDs (ascending TIDs within one scan).
    pub order: u32,
    /// Its name (`comm`).
    pub name: String,
}

/// Where [`ThreadMap::decide`] puts a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Index of the matching rule in [`ThreadMap::rules`].
    pub rule: usize,
    /// The CPUs.
    pub cpus: CpuSet,
}

/// Plans `--thread-map`: `None` without it. Refuses (`thread-map-target`)
/// SCHED_DEADLINE (whose threads cannot be pinned narrower than their
/// root domain), a position beyond the plan and `housekeeping` when no planned CPU is a
/// housekeeping CPU. `rest` is the positions no `@` target names, or the
/// whole plan when they name every position (as `--cpus 0-1
/// --thread-map 'w1=@0,w2=@1,*=rest'`: the other threads keep the
/// process affinity).
pub fn plan_thread_map(sys: &SystemState, req: &Request, plan: &Plan) -> Result<Option<ThreadMap>> {
    if req.threads.thread_map.is_empty() {
        return Ok(None);
    }
    if plan
        .sched
        .policy
        .is_some_and(crate::policy::Policy::is_deadline)
    {
        // __sched_setaffinity() (kernel/sched/core.c): a SCHED_DEADLINE
        // task's new mask must span its root domain, else EBUSY.
        return Err(Error::new(
            ErrorCode::ThreadMapTarget,
            "--thread-map: SCHED_DEADLINE threads cannot be pinned to fewer CPUs than their root domain (the kernel refuses with EBUSY)",
        )
        .hint("drop --thread-map, or use --fifo/--rr with it"));
    }
    let positions = positions(plan, req.placement.smt);
    let all: CpuSet = positions.iter().fold(CpuSet::new(), |a, p| a.union(p));
    let refuse = |rule: &ThreadRule, why: String, hint: String| {
        Error::new(
            ErrorCode::ThreadMapTarget,
            format!("--thread-map: {}: {why}", rule.text),
        )
        .hint(hint)
    };
    let mut named = CpuSet::new();
    for r in &req.threads.thread_map {
        if let ThreadTarget::Positions(a, b) = r.target {
            if b as usize >= positions.len() {
                return Err(refuse(
                    r,
                    format!(
                        "the plan has {} (@0-{}: {}), so @{b} names none",
                        crate::words::count(positions.len(), "position"),
                        positions.len().saturating_sub(1),
                        omp_places_value(&positions)
                    ),
                    "name positions within the plan, or plan more CPUs (--cores N, --cpus LIST)"
                        .into(),
                ));
            }
            for p in &positions[a as usize..=b as usize] {
                named.union_with(p);
            }
        }
    }
    let mut rules = Vec::new();
    for r in &req.threads.thread_map {
        let cpus = match r.target {
            ThreadTarget::Positions(a, b) => positions[a as usize..=b as usize]
                .iter()
                .fold(CpuSet::new(), |acc, p| acc.union(p)),
            ThreadTarget::Each => all.clone(),
            ThreadTarget::Housekeeping => all.intersection(&super::placement::housekeeping(sys)),
            // Nothing left: the whole plan, as the process affinity.
            ThreadTarget::Rest if all.difference(&named).is_empty() => all.clone(),
            ThreadTarget::Rest => all.difference(&named),
        };
        if cpus.is_empty() {
            let (why, hint) = match r.target {
                ThreadTarget::Housekeeping => (
                    format!(
                        "no planned CPU ({all}) is a housekeeping CPU (isolated: {}, nohz_full: {})",
                        crate::words::or_none(&sys.isolated),
                        crate::words::or_none(&sys.nohz_full)
                    ),
                    "plan a housekeeping CPU too (threads never leave the plan), or target a position".to_string(),
                ),
                _ => (
                    format!("the plan ({all}) gives it no CPU"),
                    "plan more CPUs".to_string(),
                ),
            };
            return Err(refuse(r, why, hint));
        }
        rules.push(MapRule {
            rule: r.clone(),
            cpus,
        });
    }
    Ok(Some(ThreadMap { rules, positions }))
}

impl ThreadMap {
    /// The first rule matching `t`, and its CPUs; `next_each[i]` counts the
    /// threads `each` rule `i` has placed (round-robin over the positions).
    /// `None`: no rule matches, and the thread keeps its affinity.
    pub fn decide(&self, t: &ThreadInfo, next_each: &mut Vec<usize>) -> Option<Decision> {
        next_each.resize(self.rules.len(), 0);
        let i = self.rules.iter().position(|r| match &r.rule.selector {
            ThreadSelector::Main => t.main,
            ThreadSelector::Nth(n) => !t.main && t.order == *n,
            ThreadSelector::Name(glob) => crate::ffi::fnmatch(glob, &t.name),
        })?;
        let cpus = match self.rules[i].rule.target {
            ThreadTarget::Each => {
                let p = self.positions[next_each[i] % self.positions.len()].clone();
                next_each[i] += 1;
                p
            }
            _ => self.rules[i].cpus.clone(),
        };
        Some(Decision { rule: i, cpus })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Machine, cpus, request};

    fn planned(sys: &SystemState, args: &[&str]) -> (Request, Plan) {
        let req = request(args);
        let plan = super::super::plan(sys, &req).expect("a plan");
        (req, plan)
    }

    fn refused(sys: &SystemState, args: &[&str]) -> ErrorCode {
        super::super::plan(sys, &request(args))
            .expect_err("a refusal")
            .code
    }

    fn thread(order: u32, name: &str) -> ThreadInfo {
        ThreadInfo {
            main: order == 0,
            order,
            name: name.into(),
        }
    }

    /// Issue 35 class 3: each variable read as libgomp's and the LLVM
    /// runtime's parsers read it (libgomp/env.c `parse_bind_var`,
    /// `parse_affinity`, `initialize_env`; kmp_settings.cpp).
    #[test]
    fn rebinding_env_reads_values_as_their_runtimes_do() {
        let keys = |env: &[(&str, &str)]| -> Vec<String> {
            let env: Vec<(String, String)> = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            rebinding_env(&env).map(|(k, _)| k.clone()).collect()
        };
        assert_eq!(omp_proc_bind(" False "), Some(false));
        assert_eq!(omp_proc_bind("spread, CLOSE ,primary"), Some(true));
        assert_eq!(omp_proc_bind("TRUE"), Some(true));
        // A list may not start with true or false; unknown words and
        // trailing text are invalid (ignored as unset).
        assert_eq!(omp_proc_bind("false,close"), None);
        assert_eq!(omp_proc_bind("true,spread"), None);
        assert_eq!(omp_proc_bind("yes"), None);
        assert_eq!(omp_proc_bind("falsey"), None);
        assert_eq!(omp_proc_bind("close,"), None);
        assert_eq!(omp_proc_bind(""), None);
        assert!(keys(&[("OMP_PROC_BIND", "false,close")]).is_empty());
        assert!(keys(&[("OMP_PROC_BIND", "yes")]).is_empty());
        // Invalid OMP_PROC_BIND is unset: OMP_PLACES then binds.
        assert_eq!(
            keys(&[("OMP_PROC_BIND", "yes"), ("OMP_PLACES", "cores")]),
            ["OMP_PLACES"]
        );
        assert_eq!(
            keys(&[("OMP_PROC_BIND", "close,spread")]),
            ["OMP_PROC_BIND"]
        );
        // An empty GOMP_CPU_AFFINITY: strtoul reads nothing, invalid.
        assert!(keys(&[("GOMP_CPU_AFFINITY", "")]).is_empty());
        assert!(keys(&[("GOMP_CPU_AFFINITY", "  ")]).is_empty());
        assert_eq!(keys(&[("GOMP_CPU_AFFINITY", "0-3")]), ["GOMP_CPU_AFFINITY"]);
        assert!(keys(&[("OMP_PROC_BIND", "false"), ("GOMP_CPU_AFFINITY", "0-3")]).is_empty());
        assert!(keys(&[("KMP_AFFINITY", "granularity=fine,none")]).is_empty());
        assert_eq!(
            keys(&[("KMP_AFFINITY", "granularity=fine,compact")]),
            ["KMP_AFFINITY"]
        );
    }

    /// 2×4×2: CPU 0's sibling is 8. --cores 2 --smt plans cores {0,8} and
    /// {1,9}: one place per core with --smt, one per CPU with =threads.
    #[test]
    fn omp_places_follow_the_planned_cores() {
        let sys = Machine::new(2, 4, 2).build();
        let omp = |args: &[&str]| {
            let (req, plan) = planned(&sys, args);
            plan_omp(&sys, &req, &plan).unwrap().unwrap()
        };
        let o = omp(&["--dry-run", "--cores", "2", "--smt", "--omp"]);
        assert_eq!(o.set[0].1, "{0,8},{1,9}");
        assert_eq!(o.set[1], ("OMP_PROC_BIND".into(), "close".into()));
        assert_eq!(o.set[2], ("OMP_NUM_THREADS".into(), "2".into()));
        let o = omp(&["--dry-run", "--cores", "2", "--smt", "--omp=threads"]);
        // Plan order: a core's SMT siblings next to each other, as libgomp's
        // OMP_PLACES=threads orders them.
        assert_eq!(o.set[0].1, "{0},{8},{1},{9}");
        assert_eq!(o.set[2].1, "4");
        let o = omp(&["--dry-run", "--cores", "2", "--omp"]);
        assert_eq!(o.set[0].1, "{0},{1}");
        // --node 1: the second package's cores, 4-7.
        let o = omp(&["--dry-run", "--node", "1", "--cores", "2", "--smt", "--omp"]);
        assert_eq!(o.set[0].1, "{4,12},{5,13}");
    }

    /// A caller's OMP_NUM_THREADS is kept; its binding variables refuse
    /// unless --omp-replace, which removes KMP_AFFINITY/GOMP_CPU_AFFINITY;
    /// a caller's OMP_PLACES equal to pinrun's is no conflict.
    #[test]
    fn omp_conflicts_refuse_unless_replaced() {
        let mut sys = Machine::new(1, 4, 1).build();
        sys.env_omp_num_threads = Some("3".into());
        let (req, plan) = planned(&sys, &["--dry-run", "--cpus", "0-1", "--omp"]);
        let o = plan_omp(&sys, &req, &plan).unwrap().unwrap();
        assert_eq!(o.set.len(), 2);
        // A value libgomp rejects (parse_unsigned_long_list) is unset:
        // pinrun sets OMP_NUM_THREADS to the number of places.
        for bad in ["", " ", "0", "four", "2,"] {
            sys.env_omp_num_threads = Some(bad.into());
            let o = plan_omp(&sys, &req, &plan).unwrap().unwrap();
            assert_eq!(o.set[2], ("OMP_NUM_THREADS".into(), "2".into()), "{bad:?}");
        }
        sys.env_omp_num_threads = Some(" 4,2 ".into());
        assert_eq!(plan_omp(&sys, &req, &plan).unwrap().unwrap().set.len(), 2);
        sys.env_omp_num_threads = Some("3".into());
        sys.env_affinity = vec![("OMP_PLACES".into(), "{0},{1}".into())];
        assert!(plan_omp(&sys, &req, &plan).is_ok());
        // The same places written otherwise (libgomp's parse_one_place
        // skips white space; `{0}:2` is two places from 0, stride 1), an
        // empty OMP_PLACES or OMP_PROC_BIND (libgomp: invalid, ignored as
        // unset), and OMP_PROC_BIND in another case are no conflict.
        for (k, v) in [
            ("OMP_PLACES", "{0}, {1}"),
            ("OMP_PLACES", " { 0 } ,{1 } "),
            ("OMP_PLACES", "{0}:2"),
            ("OMP_PLACES", "{0}:2:1"),
            ("OMP_PLACES", "0,1"),
            ("OMP_PLACES", "0:2"),
            ("OMP_PLACES", ""),
            ("OMP_PLACES", "  "),
            ("OMP_PROC_BIND", ""),
            ("OMP_PROC_BIND", "CLOSE"),
        ] {
            sys.env_affinity = vec![(k.into(), v.into())];
            let o = plan_omp(&sys, &req, &plan);
            assert!(o.is_ok(), "{k}={v:?}: {:?}", o.err());
            assert!(o.unwrap().unwrap().unset.is_empty());
        }
        for (k, v) in [
            ("OMP_PLACES", "cores"),
            ("OMP_PLACES", "{1},{0}"),
            ("OMP_PLACES", "{0,1}"),
            ("OMP_PLACES", "{0}:2:2"),
            ("OMP_PLACES", "{0},{1},!{1}"),
            ("GOMP_CPU_AFFINITY", "0-1"),
            ("KMP_AFFINITY", "compact"),
            ("OMP_PROC_BIND", "false"),
        ] {
            sys.env_affinity = vec![(k.into(), v.into())];
            let e = plan_omp(&sys, &req, &plan).unwrap_err();
            assert_eq!(e.code, ErrorCode::OmpConflict, "{k}");
            assert!(e.message.contains(&format!("{k}={v}")), "{}", e.message);
        }
        sys.env_affinity = vec![
            ("OMP_PLACES".into(), "cores".into()),
            ("KMP_AFFINITY".into(), "compact".into()),
        ];
        let (req, plan) = planned(
            &sys,
            &["--dry-run", "--cpus", "0-1", "--omp", "--omp-replace"],
        );
        let o = plan_omp(&sys, &req, &plan).unwrap().unwrap();
        assert_eq!(o.unset, vec!["KMP_AFFINITY".to_string()]);
    }

    /// libgomp's place syntax (OpenMP 5.2 §21.1.6), values from the
    /// specification's own examples: `{0:4}` is 0-3, `{0:4}:4:4` four
    /// places of four CPUs 4 apart; abstract names and exclusions are not
    /// an explicit list.
    #[test]
    fn omp_places_parse_as_libgomp() {
        let sets =
            |v: &[&str]| -> Vec<CpuSet> { v.iter().map(|s| CpuSet::parse(s).unwrap()).collect() };
        assert_eq!(parse_omp_places("{0:4}").unwrap(), sets(&["0-3"]));
        assert_eq!(
            parse_omp_places("{0:4}:4:4").unwrap(),
            sets(&["0-3", "4-7", "8-11", "12-15"])
        );
        assert_eq!(
            parse_omp_places("{0,1,2,3},{4,5,6,7},{8,9,10,11},{12,13,14,15}").unwrap(),
            parse_omp_places("{0:4}:4:4").unwrap()
        );
        assert_eq!(parse_omp_places("{0:2:2}, 5").unwrap(), sets(&["0,2", "5"]));
        for v in [
            "",
            "cores",
            "threads(4)",
            "{0},",
            "{}",
            "{0",
            "{1},!{1}",
            "{a}",
            "{0}:0",
        ] {
            assert_eq!(parse_omp_places(v), None, "{v:?}");
        }
    }

    /// The map on --cpus 0-1: w1 on CPU 0, w2 on CPU 1, the rest
    /// (nothing left) on the whole plan — and with three CPUs, the rest is
    /// CPU 2. Rules match in order; renames decide anew.
    #[test]
    fn thread_map_rules_match_in_order() {
        let sys = Machine::new(1, 4, 1).build();
        let (req, plan) = planned(
            &sys,
            &[
                "--dry-run",
                "--cpus",
                "0-1",
                "--thread-map",
                "w1=@0,w2=@1,*=rest",
            ],
        );
        let m = plan_thread_map(&sys, &req, &plan).unwrap().unwrap();
        assert_eq!(m.rules[2].cpus, cpus("0-1"));
        let (req, plan) = planned(
            &sys,
            &[
                "--dry-run",
                "--cpus",
                "0-2",
                "--thread-map",
                "w1=@0,w2=@1,main=@0,*=rest",
            ],
        );
        let m = plan_thread_map(&sys, &req, &plan).unwrap().unwrap();
        let mut each = Vec::new();
        let cpus_of = |t: &ThreadInfo, each: &mut Vec<usize>| m.decide(t, each).map(|d| d.cpus);
        assert_eq!(cpus_of(&thread(1, "w1"), &mut each), Some(cpus("0")));
        assert_eq!(cpus_of(&thread(2, "w2"), &mut each), Some(cpus("1")));
        assert_eq!(cpus_of(&thread(3, "app"), &mut each), Some(cpus("2")));
        assert_eq!(cpus_of(&thread(0, "app"), &mut each), Some(cpus("0")));
        // A thread named w1 after creation (it was "app" a moment ago).
        assert_eq!(cpus_of(&thread(3, "w1"), &mut each), Some(cpus("0")));
        assert_eq!(
            refused(
                &sys,
                &["--dry-run", "--cpus", "0-1", "--thread-map", "w1=@2"]
            ),
            ErrorCode::ThreadMapTarget
        );
    }

    /// each: round-robin over the positions; #N by creation order; globs
    /// as fnmatch(3); housekeeping = the planned CPUs neither isolated nor
    /// nohz_full, refused when there is none.
    #[test]
    fn each_nth_glob_and_housekeeping() {
        let sys = Machine::new(1, 4, 1).isolated("2-3").build();
        let (req, plan) = planned(
            &sys,
            &[
                "--dry-run",
                "--cpus",
                "0-3",
                "--thread-map",
                "#1=housekeeping,poll[0-9]=each",
            ],
        );
        let m = plan_thread_map(&sys, &req, &plan).unwrap().unwrap();
        let mut each = Vec::new();
        let d = |t: ThreadInfo, each: &mut Vec<usize>| m.decide(&t, each).map(|d| d.cpus);
        assert_eq!(d(thread(1, "x"), &mut each), Some(cpus("0-1")));
        let got: Vec<_> = (2..7)
            .map(|i| d(thread(i, &format!("poll{}", i % 10)), &mut each))
            .collect();
        assert_eq!(
            got,
            [cpus("0"), cpus("1"), cpus("2"), cpus("3"), cpus("0")]
                .map(Some)
                .to_vec()
        );
        assert_eq!(d(thread(8, "pollx"), &mut each), None);
        assert_eq!(d(thread(0, "poll1"), &mut each).unwrap(), cpus("1"));
        assert_eq!(
            refused(
                &sys,
                &[
                    "--dry-run",
                    "--cpus",
                    "2-3",
                    "--thread-map",
                    "log=housekeeping"
                ]
            ),
            ErrorCode::ThreadMapTarget
        );
    }
}
