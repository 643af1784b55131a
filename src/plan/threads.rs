//! Deciding for a running process (`--pid`, issue 18): who may change it
//! (the ownership rule of `sched_setattr(2)`/`sched_setaffinity(2)`), and
//! what `--migrate` moves (`migrate_pages(2)`). Pure.

use crate::cpuset::NodeSet;
use crate::error::{Error, ErrorCode, Result};
use std::collections::BTreeMap;

/// Refuses to change process `pid` when the kernel would answer EPERM for
/// its owner: without CAP_SYS_NICE, the caller's effective uid must be the
/// target's real or effective uid (`check_same_owner()`,
/// kernel/sched/syscalls.c; the same for `sched_setaffinity(2)`). `None`
/// for an unknown fact: the kernel then decides.
pub fn check_owner(
    pid: u32,
    caller_euid: u32,
    target_uids: Option<(u32, u32)>,
    cap_sys_nice: Option<bool>,
) -> Result<()> {
    let Some((ruid, euid)) = target_uids else {
        return Ok(());
    };
    if cap_sys_nice == Some(true) || caller_euid == ruid || caller_euid == euid {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::PidNotPermitted,
        format!(
            "--pid {pid}: the process belongs to uid {euid} and pinrun runs as uid {caller_euid} without CAP_SYS_NICE; the kernel refuses to change another user's threads (EPERM)"
        ),
    )
    .hint(format!(
        "run pinrun as uid {euid} (sudo -u '#{euid}' pinrun ...), or with CAP_SYS_NICE"
    )))
}

/// What `--migrate` moves with `migrate_pages(2)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The nodes pages move from: those holding pages of the process that
    /// are not among the destination nodes.
    pub from: NodeSet,
    /// The destination nodes.
    pub to: NodeSet,
    /// The resident bytes on `from` (from `numa_maps`): every page there
    /// moves, since `from` and `to` do not overlap (`do_migrate_pages()`,
    /// mm/mempolicy.c, moves each source node to a destination node).
    pub bytes: u64,
}

/// The migration of a process whose resident bytes per node are
/// `bytes_per_node` (`numa_maps`) to `to`; refused when `to` is empty or
/// the bytes exceed `limit` (`--migrate-limit`).
pub fn migration(
    pid: u32,
    bytes_per_node: &BTreeMap<u32, u64>,
    to: &NodeSet,
    limit: Option<u64>,
) -> Result<Migration> {
    if to.is_empty() {
        return Err(Error::new(
            ErrorCode::MigrateFailed,
            format!("--migrate: no destination node for process {pid}"),
        )
        .hint("say where: --membind NODES, or a placement (--node, --cpus) whose nodes take the pages"));
    }
    let from: NodeSet = bytes_per_node
        .iter()
        .filter(|(n, b)| **b > 0 && !to.contains(**n))
        .map(|(n, _)| *n)
        .collect();
    let bytes = from
        .iter()
        .map(|n| bytes_per_node.get(&n).copied().unwrap_or(0))
        .sum();
    if let Some(limit) = limit
        && bytes > limit
    {
        return Err(Error::new(
            ErrorCode::MigrateFailed,
            format!(
                "--migrate: process {pid} has {bytes} bytes on nodes {from}, more than --migrate-limit {limit}"
            ),
        )
        .hint("raise --migrate-limit, or move fewer nodes' pages"));
    }
    Ok(Migration {
        from,
        to: to.clone(),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(v: &[u32]) -> NodeSet {
        v.iter().copied().collect()
    }

    /// check_same_owner(): euid == the target's uid or euid, or CAP_SYS_NICE.
    #[test]
    fn owner_rule() {
        assert!(check_owner(7, 1000, Some((1000, 1000)), Some(false)).is_ok());
        assert!(check_owner(7, 1000, Some((1000, 0)), Some(false)).is_ok());
        assert!(check_owner(7, 1000, Some((0, 1000)), Some(false)).is_ok());
        assert!(check_owner(7, 0, Some((1000, 1000)), Some(true)).is_ok());
        assert!(check_owner(7, 1000, None, Some(false)).is_ok());
        let e = check_owner(7, 1000, Some((1001, 1001)), Some(false)).unwrap_err();
        assert_eq!(e.code, ErrorCode::PidNotPermitted);
        assert!(e.message.contains("uid 1001"), "{}", e.message);
    }

    #[test]
    fn migration_moves_what_is_off_the_destination() {
        let per: BTreeMap<u32, u64> = [(0, 4096), (1, 8192), (2, 0)].into_iter().collect();
        let m = migration(1, &per, &nodes(&[1]), None).unwrap();
        assert_eq!((m.from, m.bytes), (nodes(&[0]), 4096));
        let m = migration(1, &per, &nodes(&[0, 1]), None).unwrap();
        assert_eq!((m.from.is_empty(), m.bytes), (true, 0));
        let m = migration(1, &per, &nodes(&[2]), None).unwrap();
        assert_eq!((m.from, m.bytes), (nodes(&[0, 1]), 12288));
        assert_eq!(
            migration(1, &per, &nodes(&[2]), Some(12287))
                .unwrap_err()
                .code,
            ErrorCode::MigrateFailed
        );
        assert!(migration(1, &per, &nodes(&[2]), Some(12288)).is_ok());
        assert!(migration(1, &per, &nodes(&[]), None).is_err());
    }
}
