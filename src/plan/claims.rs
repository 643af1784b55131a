//! Claims in planning (issue 5): pure; the claimed CPUs come in as data
//! ([`Claims`]). `--cores` skips claimed cores, `--cpus` and `--exclusive`
//! refuse claimed CPUs.

use super::CoreChoice;
use crate::claim::Claims;
use crate::cpuset::CpuSet;
use crate::error::{Error, ErrorCode, Result};

/// The CPUs an `--exclusive` launch claims: every thread of each chosen
/// core, and the chosen CPUs themselves.
pub fn claim_set(cpus: &CpuSet, cores: &[CoreChoice]) -> CpuSet {
    let mut claim = cpus.clone();
    for c in cores {
        claim.union_with(&c.cpus);
    }
    claim
}

/// Refuses `cpus` when any of them is claimed, naming the holders.
pub(super) fn refuse_claimed(option: &str, cpus: &CpuSet, claims: &Claims) -> Result<()> {
    let taken = cpus.intersection(&claims.cpus());
    if taken.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::CpuClaimed,
        format!(
            "{option}: {} claimed: {}",
            if taken.len() == 1 {
                format!("CPU {taken} is")
            } else {
                format!("CPUs {taken} are")
            },
            claims.describe(&taken)
        ),
    )
    .hint(
        "choose other CPUs (--cores N skips claimed cores), wait with --wait, or stop the holder",
    ))
}

/// Drops the whole cores any CPU of which is claimed; refuses when fewer
/// than `n` stay free. Returns the free cores and the reason to print.
pub(super) fn skip_claimed(
    n: usize,
    candidate: &CpuSet,
    whole: Vec<CpuSet>,
    claims: &Claims,
) -> Result<(Vec<CpuSet>, Option<String>)> {
    let claimed = claims.cpus();
    let (free, taken): (Vec<CpuSet>, Vec<CpuSet>) = whole
        .into_iter()
        .partition(|c| !c.iter().any(|id| claimed.contains(id)));
    let mut taken_cpus = CpuSet::new();
    for c in &taken {
        taken_cpus.union_with(c);
    }
    let holders = claims.describe(&taken_cpus);
    if free.len() < n {
        // "no free cores" only when none is: with one free of two asked,
        // "only 1 free core".
        let short = if free.is_empty() {
            format!("no free {}", crate::words::noun(n, "core"))
        } else {
            format!("only {}", crate::words::count(free.len(), "free core"))
        };
        return Err(Error::new(
            ErrorCode::NoFreeCore,
            format!(
                "--cores {n}: {short}: {} of the {} in the candidates {candidate} {} claimed ({holders})",
                taken.len(),
                crate::words::count(taken.len() + free.len(), "whole core"),
                if taken.len() == 1 { "is" } else { "are" },
            ),
        )
        .hint("wait for a core with --wait[=DURATION], ask for fewer cores, or widen the candidates"));
    }
    let why = (!taken.is_empty()).then(|| {
        format!(
            "skipped {}: {holders}",
            crate::words::count(taken.len(), "claimed core")
        )
    });
    Ok((free, why))
}
