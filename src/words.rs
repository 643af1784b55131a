//! Wording shared by the layers that explain themselves (plan refusals,
//! check findings, claims, `--show`): how a set of CPUs or nodes is named in
//! a sentence. Pure; below every layer that writes messages.

use crate::cpuset::{CpuSet, NodeSet};

/// "CPU 3" / "CPUs 3-5" (a kernel cpulist after the word).
pub fn cpus_phrase(set: &CpuSet) -> String {
    if set.len() == 1 {
        format!("CPU {set}")
    } else {
        format!("CPUs {set}")
    }
}

/// `n` of `noun`, its plural by the count: "1 CPU", "2 CPUs", "0 IRQs",
/// "1 warning". The one place a report counts CPUs, warnings, notices,
/// findings, IRQs, cores or nodes (`noun` singular, its plural an "s").
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// [`count`] for a noun whose plural is not `noun` + "s": "1 pass" /
/// "2 passes".
pub fn count_as(n: usize, noun: &str, plural: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {plural}")
    }
}

/// The first `max` of `items` joined by ", ", then how many were left
/// out: "24 nvme0q1, 25 nvme0q2 and 3 more".
pub fn first_of(items: impl ExactSizeIterator<Item = String>, max: usize) -> String {
    let more = items.len().saturating_sub(max);
    let shown = items.take(max).collect::<Vec<_>>().join(", ");
    if more > 0 {
        format!("{shown} and {more} more")
    } else {
        shown
    }
}

/// `noun` or its plural by the count `n`, without the number: "IRQ" /
/// "IRQs" (for "IRQs 24 25").
pub fn noun(n: usize, noun: &str) -> String {
    if n == 1 {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}

/// "node 1" / "nodes 0-1".
pub fn nodes_phrase(set: &NodeSet) -> String {
    if set.len() == 1 {
        format!("node {set}")
    } else {
        format!("nodes {set}")
    }
}

/// The set as a cpulist, or "none" when empty.
pub fn or_none(set: &CpuSet) -> String {
    if set.is_empty() {
        "none".into()
    } else {
        set.to_list()
    }
}

/// The set as a cpulist, or "no CPU" when empty (in a sentence: "bans
/// 4-7 (was no CPU)").
pub fn or_no_cpu(set: &CpuSet) -> String {
    if set.is_empty() {
        "no CPU".into()
    } else {
        set.to_list()
    }
}

/// What kind of file a `st_mode` (`stat(2)`, `inode(7)`: its `S_IFMT`
/// bits) names, for messages that refuse anything but a regular file:
/// "a FIFO", "a character device", "a block device", "a socket", "a
/// directory", "a symbolic link", "a regular file", else "not a file".
pub fn file_kind(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFIFO => "a FIFO",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFREG => "a regular file",
        _ => "not a file",
    }
}

/// An optional id, or "-" when unknown (sysfs ids the kernel reports as -1).
pub fn or_dash(v: Option<u32>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// `s` cut to `max` characters, the last one `…` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A duration in ns as the shortest exact unit: `5s`, `50us`, `1024ns`.
pub fn ns_words(ns: u64) -> String {
    for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= scale && ns.checked_rem(scale) == Some(0) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// A duration in ns in words with three significant digits, for measured
/// values: `850ns`, `12.3us`, `4.56ms`, `1.20s` (exact durations the user
/// gave are [`ns_words`]).
pub fn duration_approx(ns: u64) -> String {
    if ns < 1_000 {
        return format!("{ns}ns");
    }
    let f = ns as f64;
    let (v, unit) = if ns < 1_000_000 {
        (f / 1e3, "us")
    } else if ns < 1_000_000_000 {
        (f / 1e6, "ms")
    } else {
        (f / 1e9, "s")
    };
    let digits = if v < 10.0 {
        2
    } else if v < 100.0 {
        1
    } else {
        0
    };
    format!("{v:.digits$}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_words() {
        assert_eq!(ns_words(5_000_000_000), "5s");
        assert_eq!(ns_words(50_000), "50us");
        assert_eq!(ns_words(1024), "1024ns");
    }

    #[test]
    fn measured_durations_in_words() {
        assert_eq!(duration_approx(850), "850ns");
        assert_eq!(duration_approx(12_345), "12.3us");
        assert_eq!(duration_approx(4_560_000), "4.56ms");
        assert_eq!(duration_approx(1_200_000_000), "1.20s");
    }
}
