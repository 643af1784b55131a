//! A growable set of CPU (or NUMA node) ids, and the kernel's text forms of it.
//!
//! Shapes follow the kernel's `bitmap_parselist()`/`bitmap_print_to_pagebuf()`
//! (`lib/bitmap-str.c`, `Documentation/admin-guide/kernel-parameters.rst`,
//! section "cpu lists") and util-linux `cpu_parse_list()` (strides `0-14:2`):
//!
//! * **cpulist** input: comma-separated items, each `N`, `A-B`, `A-B:S`
//!   (util-linux stride: every S-th id from A to B) or `A-B:U/G` (kernel
//!   used/group: the first U ids of every group of G ids from A to B).
//! * **cpumask** input: hexadecimal, optionally `0x`-prefixed, optionally in
//!   comma-separated 32-bit words, most significant word first
//!   (`/sys/devices/system/node/node0/cpumap`, `taskset` masks).
//! * Output for tools is the canonical kernel cpulist (`0-3,8,10-11`,
//!   [`CpuSet::to_list`] and `Display`) or the kernel's comma-grouped 32-bit
//!   mask; text for people may use [`CpuSet::to_compact_list`]'s stride
//!   form (`0-30:2`).
//!
//! There is no 1024-CPU (`CPU_SETSIZE`) limit: the set grows to the highest id
//! stored. Ids are capped at [`MAX_ID`] so that a typo cannot allocate
//! gigabytes.

use std::fmt;

/// The highest id a parsed list may name (4 194 303). Linux's `NR_CPUS`
/// tops out at 8192 today; this leaves room for growth while keeping a typo
/// such as `0-4000000000` from allocating memory for four billion bits.
pub const MAX_ID: u32 = (1 << 22) - 1;

/// A set of CPU or NUMA node ids (absolute kernel ids), stored as a growable
/// bitmap of 64-bit words. Iteration is always in ascending id order.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CpuSet {
    words: Vec<u64>,
}

/// A set of NUMA node ids; the same bitmap as [`CpuSet`].
pub type NodeSet = CpuSet;

/// Where and why a cpulist or cpumask failed to parse.
///
/// `position` is the 0-based character offset into `input` at which the
/// parser stopped; `expected` says what it wanted there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError {
    /// The text as given.
    pub input: String,
    /// 0-based character offset of the problem.
    pub position: usize,
    /// What the grammar expected at `position`, in words.
    pub expected: String,
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid list \"{}\" at character {}: {}",
            self.input,
            self.position + 1,
            self.expected
        )
    }
}

impl std::error::Error for ListError {}

impl CpuSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set of `a..=b` (`a <= b`) in one allocation of exactly the
    /// words up to `b`: what [`CpuSet::insert_range`] makes of an empty
    /// set, without its growth path.
    fn of_range(a: u32, b: u32) -> Self {
        let mut set = Self {
            words: vec![0; b as usize / 64 + 1],
        };
        set.insert_range(a, b);
        set
    }

    /// Adds `id` to the set, growing the bitmap as needed.
    pub fn insert(&mut self, id: u32) {
        let (w, b) = (id as usize / 64, id % 64);
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << b;
    }

    /// Adds every id of `a..=b` (`a <= b`), a 64-bit word at a time: the
    /// cost is the words the range covers, not its ids.
    pub fn insert_range(&mut self, a: u32, b: u32) {
        debug_assert!(a <= b);
        let (wa, wb) = (a as usize / 64, b as usize / 64);
        if self.words.len() <= wb {
            self.words.resize(wb + 1, 0);
        }
        let lo = !0u64 << (a % 64);
        let hi = !0u64 >> (63 - b % 64);
        if wa == wb {
            self.words[wa] |= lo & hi;
            return;
        }
        self.words[wa] |= lo;
        for w in &mut self.words[wa + 1..wb] {
            *w = !0;
        }
        self.words[wb] |= hi;
    }

    /// Removes `id` if present.
    pub fn remove(&mut self, id: u32) {
        let (w, b) = (id as usize / 64, id % 64);
        if let Some(word) = self.words.get_mut(w) {
            *word &= !(1 << b);
        }
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: u32) -> bool {
        let (w, b) = (id as usize / 64, id % 64);
        self.words.get(w).is_some_and(|word| word & (1 << b) != 0)
    }

    /// Number of ids in the set.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set holds no id.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The lowest id, if any.
    pub fn first(&self) -> Option<u32> {
        self.iter().next()
    }

    /// The highest id, if any.
    pub fn last(&self) -> Option<u32> {
        let (i, w) = self
            .words
            .iter()
            .enumerate()
            .rev()
            .find(|(_, w)| **w != 0)?;
        Some(i as u32 * 64 + 63 - w.leading_zeros())
    }

    /// Ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut rest = w;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let b = rest.trailing_zeros();
                rest &= rest - 1;
                Some(i as u32 * 64 + b)
            })
        })
    }

    /// Ids in ascending order, collected.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    fn zip_with(&self, other: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        let n = self.words.len().max(other.words.len());
        let get = |v: &Vec<u64>, i: usize| v.get(i).copied().unwrap_or(0);
        let mut words: Vec<u64> = (0..n)
            .map(|i| f(get(&self.words, i), get(&other.words, i)))
            .collect();
        while words.last() == Some(&0) {
            words.pop();
        }
        Self { words }
    }

    /// Ids in either set.
    pub fn union(&self, other: &Self) -> Self {
        self.zip_with(other, |a, b| a | b)
    }

    /// Adds every id of `other` to `self` in place (`self |= other`),
    /// growing the bitmap up to `other`'s highest id when needed. Unlike
    /// [`CpuSet::union`] it allocates no new set: accumulating k sets into
    /// one costs the sum of their sizes in 64-bit words, not k new bitmaps
    /// of the accumulated size. The result equals `self.union(other)`.
    pub fn union_with(&mut self, other: &Self) {
        // Only up to `other`'s last non-zero word, so that `self` gains no
        // trailing zero words (sets compare by their words).
        let n = other
            .words
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |i| i + 1);
        if self.words.len() < n {
            self.words.resize(n, 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words[..n]) {
            *a |= b;
        }
    }

    /// Ids in both sets. Costs the smaller set's size in 64-bit words, and
    /// the result holds no more than that (a set of `0-4194303` clipped to
    /// a machine's CPUs keeps a few words, not 512 KiB).
    pub fn intersection(&self, other: &Self) -> Self {
        let n = self.words.len().min(other.words.len());
        let mut words: Vec<u64> = self.words[..n]
            .iter()
            .zip(&other.words[..n])
            .map(|(a, b)| a & b)
            .collect();
        while words.last() == Some(&0) {
            words.pop();
        }
        words.shrink_to_fit();
        Self { words }
    }

    /// Ids in `self` but not in `other`.
    pub fn difference(&self, other: &Self) -> Self {
        self.zip_with(other, |a, b| a & !b)
    }

    /// Whether every id of `self` is in `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        self.difference(other).is_empty()
    }

    /// Whether the sets share at least one id (no allocation: a check of
    /// 10 000 IRQs asks it once per IRQ, issue 17).
    pub fn intersects(&self, other: &Self) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// The set as a node mask with its `maxnode` for `set_mempolicy(2)`
    /// and `migrate_pages(2)`: the kernel reads `maxnode - 1` bits, so
    /// `maxnode` is the highest node id + 2 (≥ 2 on a one-node machine);
    /// the buffer is whole 64-bit words.
    pub fn to_kernel_nodemask(&self) -> (Vec<u8>, u64) {
        let maxnode = u64::from(self.last().unwrap_or(0)) + 2;
        let bytes = (maxnode - 1).div_ceil(64) as usize * 8;
        (self.to_kernel_bytes(bytes), maxnode)
    }

    /// The set as bytes in the kernel's `unsigned long` bitmap layout
    /// (little-endian 64-bit words), padded with zeros to `len` bytes.
    /// Used for `sched_setaffinity(2)` and `set_mempolicy(2)` masks.
    pub fn to_kernel_bytes(&self, len: usize) -> Vec<u8> {
        let mut out: Vec<u8> = self.words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        out.resize(len.max(out.len()), 0);
        out
    }

    /// The inverse of [`CpuSet::to_kernel_bytes`]: reads a native-endian
    /// `unsigned long` bitmap as returned by `sched_getaffinity(2)`.
    pub fn from_kernel_bytes(bytes: &[u8]) -> Self {
        let mut words: Vec<u64> = bytes
            .chunks(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_ne_bytes(b)
            })
            .collect();
        while words.last() == Some(&0) {
            words.pop();
        }
        Self { words }
    }

    /// Canonical kernel cpulist: ascending, ranges of 2 or more collapsed
    /// (`0-3,8,10-11`); the empty set is the empty string.
    pub fn to_list(&self) -> String {
        let mut out = String::new();
        let mut iter = self.iter().peekable();
        while let Some(start) = iter.next() {
            let mut end = start;
            while iter.peek() == Some(&(end + 1)) {
                end = iter.next().unwrap_or(end);
            }
            if !out.is_empty() {
                out.push(',');
            }
            if end == start {
                out.push_str(&start.to_string());
            } else {
                out.push_str(&format!("{start}-{end}"));
            }
        }
        out
    }

    /// A shorter cpulist for people: arithmetic runs of 3 or more ids with
    /// a step above 1 use the util-linux stride form (`0-78:2`), which
    /// [`CpuSet::parse`] reads back; otherwise as [`CpuSet::to_list`].
    pub fn to_compact_list(&self) -> String {
        let ids = self.to_vec();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < ids.len() {
            let mut j = i + 1;
            let step = ids.get(i + 1).map(|n| n - ids[i]);
            while let Some(st) = step {
                if j < ids.len() && ids[j] - ids[j - 1] == st {
                    j += 1;
                } else {
                    break;
                }
            }
            let (a, b) = (ids[i], ids[j - 1]);
            match (step, j - i) {
                (Some(1), n) if n >= 2 => parts.push(format!("{a}-{b}")),
                (Some(st), n) if n >= 3 => parts.push(format!("{a}-{b}:{st}")),
                _ => {
                    parts.push(a.to_string());
                    j = i + 1;
                }
            }
            i = j;
        }
        parts.join(",")
    }

    /// Kernel cpumask text: 32-bit hex words, most significant first,
    /// separated by commas (`00000001,00000000`); the empty set is `0`.
    pub fn to_mask(&self) -> String {
        let Some(last) = self.last() else {
            return "0".to_string();
        };
        let nwords = last as usize / 32 + 1;
        (0..nwords)
            .rev()
            .map(|i| {
                let w = self.words[i / 2];
                let half = if i % 2 == 0 {
                    w as u32
                } else {
                    (w >> 32) as u32
                };
                format!("{half:08x}")
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Parses a cpulist or, when it starts with `0x`/`0X`, a cpumask, as a
    /// user types it on the command line. Strict: empty input, empty items,
    /// trailing commas, reversed ranges and stride 0 are errors.
    pub fn parse(input: &str) -> Result<Self, ListError> {
        let t = input.trim();
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            // The digits' character offset: leading whitespace and `0x`.
            let lead = input.len() - input.trim_start().len();
            let offset = input[..lead].chars().count() + 2;
            let set = parse_mask_digits(input, hex, offset)?;
            if set.is_empty() {
                return Err(ListError {
                    input: input.to_string(),
                    position: offset - 2,
                    expected: "the mask selects nothing; give at least one set bit".into(),
                });
            }
            return Ok(set);
        }
        parse_list(input, None, MAX_ID)
    }

    /// Parses a cpulist as the kernel writes it in sysfs or on the command
    /// line: surrounding whitespace and trailing NUL bytes are ignored, and
    /// an empty file or the `(null)` that some kernels print for an empty
    /// `nohz_full` is the empty set. `last` (the highest possible id) enables
    /// the kernel's `N` alias for the last id (`isolcpus=1-N`).
    pub fn parse_sysfs_list(text: &str, last: Option<u32>) -> Result<Self, ListError> {
        let t = clean_sysfs(text);
        if t.is_empty() || t == "(null)" {
            return Ok(Self::new());
        }
        parse_list(t, last, MAX_ID)
    }

    /// [`CpuSet::parse_sysfs_list`] for a list from an untrusted file
    /// (kubelet's state): ids above `upto` (the highest possible CPU) are
    /// dropped while parsing, so the set costs at most `upto / 8` bytes
    /// however wide the ranges it names (`0-4194303` would be 512 KiB).
    /// Syntax errors are the same.
    pub fn parse_sysfs_list_upto(text: &str, upto: u32) -> Result<Self, ListError> {
        let t = clean_sysfs(text);
        if t.is_empty() || t == "(null)" {
            return Ok(Self::new());
        }
        parse_list(t, None, upto)
    }

    /// Parses a kernel cpumask file (`cpumap`, `thread_siblings`, `smp_affinity`):
    /// comma-separated 32-bit hex words, most significant first.
    pub fn parse_sysfs_mask(text: &str) -> Result<Self, ListError> {
        let t = clean_sysfs(text);
        if t.is_empty() {
            return Ok(Self::new());
        }
        parse_mask_digits(t, t, 0)
    }
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut s = Self::new();
        for id in iter {
            s.insert(id);
        }
        s
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({})", self.to_list())
    }
}

/// Strips whitespace and the NUL bytes some kernels leave after the newline.
fn clean_sysfs(text: &str) -> &str {
    text.trim_matches(|c: char| c == '\0' || c.is_whitespace())
}

/// The cpumask `digits` (a part of `input` starting at character `offset`);
/// an error's position is in characters of `input`.
fn parse_mask_digits(input: &str, digits: &str, offset: usize) -> Result<CpuSet, ListError> {
    let err = |pos: usize, what: &str| ListError {
        input: input.to_string(),
        position: pos,
        expected: what.to_string(),
    };
    if digits.is_empty() {
        return Err(err(offset, "expected hexadecimal digits after 0x"));
    }
    let mut set = CpuSet::new();
    let mut bit: u32 = 0;
    let chars: Vec<char> = digits.chars().collect();
    let mut prev_comma = true;
    for (i, &c) in chars.iter().enumerate().rev() {
        if c == ',' {
            if prev_comma || i == 0 {
                return Err(err(offset + i, "expected hexadecimal digits around ','"));
            }
            // A comma closes a 32-bit word: pad to the next word boundary.
            bit = bit.div_ceil(32) * 32;
            prev_comma = true;
            continue;
        }
        prev_comma = false;
        let Some(v) = c.to_digit(16) else {
            return Err(err(offset + i, "expected a hexadecimal digit or ','"));
        };
        for b in 0..4 {
            if v & (1 << b) != 0 {
                let id = bit + b;
                if id > MAX_ID {
                    return Err(err(offset + i, "mask is too long"));
                }
                set.insert(id);
            }
        }
        bit += 4;
    }
    Ok(set)
}

struct Cursor<'a> {
    input: &'a str,
    bytes: &'a [u8],
    pos: usize,
    last: Option<u32>,
}

impl Cursor<'_> {
    fn err(&self, what: &str) -> ListError {
        ListError {
            input: self.input.to_string(),
            position: self.input[..self.pos.min(self.input.len())].chars().count(),
            expected: what.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn number(&mut self, what: &str) -> Result<u32, ListError> {
        if self.last.is_some() && self.eat(b'N') {
            return Ok(self.last.unwrap_or(0));
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.err(what));
        }
        match self.input[start..self.pos].parse::<u32>() {
            Ok(v) if v <= MAX_ID => Ok(v),
            _ => {
                self.pos = start;
                Err(self.err(&format!("id is larger than the maximum {MAX_ID}")))
            }
        }
    }
}

/// The most ids the stride items (`A-B:S`, `A-B:U/G`) of one list may
/// expand to, in groups (each group is one word-wise range fill). No real
/// list comes near it (a whole `0-4194303:1/2` is 2 097 152 groups); it
/// keeps a list of many such items from costing seconds.
pub const MAX_STRIDE_GROUPS: u64 = 1 << 23;

/// `N` or `A-B` (ASCII digits, `A <= B <= MAX_ID`): a list of one id or
/// one range, as every per-IRQ affinity file holds; `None` for anything
/// else, which the general parser takes (and gives its errors for).
fn one_range(bytes: &[u8]) -> Option<(u32, u32)> {
    fn id(digits: &[u8]) -> Option<u32> {
        // At most 7 digits (`MAX_ID` has 7): no overflow below.
        if digits.is_empty() || digits.len() > 7 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let v = digits
            .iter()
            .fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
        (v <= MAX_ID).then_some(v)
    }
    match bytes.iter().position(|&c| c == b'-') {
        None => id(bytes).map(|a| (a, a)),
        Some(dash) => {
            let (a, b) = (id(&bytes[..dash])?, id(&bytes[dash + 1..])?);
            (a <= b).then_some((a, b))
        }
    }
}

/// Parses a cpulist; ids above `clip` are dropped (`MAX_ID`: none).
fn parse_list(input: &str, last: Option<u32>, clip: u32) -> Result<CpuSet, ListError> {
    let trimmed = input.trim_end();
    let c = Cursor {
        input,
        bytes: trimmed.as_bytes(),
        pos: input.len() - input.trim_start().len(),
        last,
    };
    // A blank input (" ") is as empty as "": its error is at character 1,
    // never past its end.
    if trimmed.trim_start().is_empty() {
        return Err(Cursor { pos: 0, ..c }.err("expected a CPU number, the list is empty"));
    }
    if let Some((a, b)) = trimmed.as_bytes().get(c.pos..).and_then(one_range)
        && a <= clip
    {
        return Ok(CpuSet::of_range(a, b.min(clip)));
    }
    parse_items(c, clip)
}

/// [`parse_list`] past its one-range fast path: any list, from `c`'s
/// position (the first non-blank byte).
fn parse_items(mut c: Cursor<'_>, clip: u32) -> Result<CpuSet, ListError> {
    // Plain ranges are collected, sorted and merged, then filled a word at
    // a time: the cost is linear in the text (plus the sort) and in the
    // bitmap's words, however often a range repeats (`0-4194303` 6 400
    // times in 64 KB is one fill).
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut set = CpuSet::new();
    let mut groups: u64 = 0;
    loop {
        let item_start = c.pos;
        let a = c.number("expected a number")?;
        let (mut b, mut used, mut group) = (a, 1, 1);
        // Each error points at its offending token: the range's end, the
        // zero size, the used size larger than its group.
        if c.eat(b'-') {
            let b_start = c.pos;
            b = c.number("expected a number after '-'")?;
            if b < a {
                c.pos = b_start;
                return Err(c.err(&format!("range {a}-{b} is reversed")));
            }
            if c.eat(b':') {
                let u_start = c.pos;
                let u = c.number("expected a stride or used/group after ':'")?;
                let mut g_start = u_start;
                if c.eat(b'/') {
                    g_start = c.pos;
                    group = c.number("expected a group size after '/'")?;
                    used = u;
                } else {
                    group = u;
                }
                if used == 0 {
                    c.pos = u_start;
                    return Err(c.err("stride, used and group sizes must be at least 1"));
                }
                if group == 0 {
                    c.pos = g_start;
                    return Err(c.err("stride, used and group sizes must be at least 1"));
                }
                if used > group {
                    c.pos = u_start;
                    return Err(c.err("used size must not exceed the group size"));
                }
            }
        }
        if a > clip {
            // Dropped: above the highest id kept.
        } else if used == group {
            ranges.push((a, b.min(clip)));
        } else {
            groups += u64::from((b - a) / group) + 1;
            if groups > MAX_STRIDE_GROUPS {
                c.pos = item_start;
                return Err(c.err(&format!(
                    "the stride items expand to more than {MAX_STRIDE_GROUPS} groups"
                )));
            }
            let mut start = a;
            let b = b.min(clip);
            loop {
                set.insert_range(start, start.saturating_add(used - 1).min(b));
                match start.checked_add(group) {
                    Some(next) if next <= b => start = next,
                    _ => break,
                }
            }
        }
        match c.peek() {
            None => break,
            Some(b',') => {
                if c.bytes.len() == c.pos + 1 {
                    // At the comma itself: nothing follows it.
                    return Err(c.err("expected a number after ',' (trailing comma)"));
                }
                c.pos += 1;
            }
            Some(_) => return Err(c.err("expected ',', '-' or the end of the list")),
        }
    }
    ranges.sort_unstable();
    let mut it = ranges.into_iter();
    if let Some((mut a, mut b)) = it.next() {
        for (x, y) in it {
            if x <= b.saturating_add(1) {
                b = b.max(y);
            } else {
                set.insert_range(a, b);
                (a, b) = (x, y);
            }
        }
        set.insert_range(a, b);
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    /// A set of every id a cpulist may name, clipped to two CPUs, keeps
    /// one word (claim records are clipped so, finding 4).
    #[test]
    fn intersection_is_as_small_as_the_smaller_set() {
        let big = CpuSet::parse_sysfs_list("0-4194303", None).unwrap();
        let two: CpuSet = [0, 1].into_iter().collect();
        for i in [big.intersection(&two), two.intersection(&big)] {
            assert_eq!(i.to_list(), "0-1");
            assert!(i.words.capacity() <= 1, "{}", i.words.capacity());
        }
    }

    use super::*;
    use proptest::prelude::*;

    /// `parse_list` (with its one-range fast path) equals the general
    /// parser alone on `text`: the same set with the same words, or the
    /// same error.
    fn fast_path_equals_general(text: &str, last: Option<u32>, clip: u32) {
        let trimmed = text.trim_end();
        let c = Cursor {
            input: text,
            bytes: trimmed.as_bytes(),
            pos: text.len() - text.trim_start().len(),
            last,
        };
        let general = if trimmed.trim_start().is_empty() {
            Err(Cursor { pos: 0, ..c }.err("expected a CPU number, the list is empty"))
        } else {
            parse_items(c, clip)
        };
        let fast = parse_list(text, last, clip);
        if let (Ok(f), Ok(g)) = (&fast, &general) {
            assert_eq!(f.words, g.words, "{text:?}");
        }
        assert_eq!(fast, general, "{text:?} last {last:?} clip {clip}");
    }

    /// The fast path's edges, one by one.
    #[test]
    fn one_range_fast_path_edges() {
        for text in [
            "0",
            "1",
            "63",
            "64",
            "63-64",
            "5-5",
            "1-0",
            "01",
            "007-9",
            "+1",
            "1-+2",
            "-1",
            "1-",
            "4194303",
            "4194304",
            "0-4194303",
            "0-4194304",
            "9999999",
            "99999999",
            "4294967296",
            "N",
            "1-N",
            " 5 ",
            "\t3-4\n",
            " ",
            "",
            "1 ",
            "1 -2",
            "1,2",
            "1-3:2",
            "\u{a0}7",
            "7\u{a0}",
            "٣",
        ] {
            for last in [None, Some(4095)] {
                for clip in [MAX_ID, 4095, 64, 63, 0] {
                    fast_path_equals_general(text, last, clip);
                }
            }
        }
    }

    fn l(s: &str) -> String {
        CpuSet::parse(s).unwrap().to_list()
    }

    #[test]
    fn ranges_and_singles() {
        assert_eq!(l("0-3,8,10-11"), "0-3,8,10-11");
        assert_eq!(l("3,2,1,0"), "0-3");
        assert_eq!(l(" 5 "), "5");
    }

    // util-linux tests/expected/schedutils/cpuset: "0-14:2" and its mask 0x5555.
    #[test]
    fn util_linux_stride() {
        assert_eq!(l("0-14:2"), "0,2,4,6,8,10,12,14");
        assert_eq!(CpuSet::parse("0-14:2").unwrap().to_mask(), "00005555");
    }

    // Documentation/admin-guide/kernel-parameters.rst: "100-2550:25/250" and
    // the example 0-15:2/4 = 0,1,4,5,8,9,12,13.
    #[test]
    fn kernel_used_group() {
        assert_eq!(l("0-15:2/4"), "0-1,4-5,8-9,12-13");
        assert_eq!(l("100-2550:25/250").split(',').next(), Some("100-124"));
    }

    #[test]
    fn masks() {
        assert_eq!(l("0x3"), "0-1");
        assert_eq!(l("0xf0"), "4-7");
        assert_eq!(l("0x1,00000000"), "32");
        assert_eq!(
            CpuSet::parse_sysfs_mask("00000000,00000000,00000000,ffffffff\n")
                .unwrap()
                .to_list(),
            "0-31"
        );
        // A short middle word is still a whole 32-bit word.
        assert_eq!(l("0x1,1"), "0,32");
    }

    /// Every blank list (spaces, tabs, a newline, as a shell's unquoted
    /// variable leaves them) is "the list is empty" at character 1, as
    /// the empty one is; never a position past the input's end.
    #[test]
    fn a_blank_list_is_empty() {
        for blank in ["", " ", "  ", "\t", " \n", "\n"] {
            let e = CpuSet::parse(blank).unwrap_err();
            assert_eq!(e.position, 0, "{blank:?}: {e}");
            assert!(e.expected.ends_with("the list is empty"), "{blank:?}: {e}");
            assert!(e.position <= blank.chars().count());
        }
    }

    /// Every error's position is the character of its offending token
    /// (1-based in the message), past the end only when what is missing is
    /// at the end; non-ASCII text before counts as one character each.
    #[test]
    fn error_positions_point_at_the_offending_token() {
        for (bad, at) in [
            ("0-1:0", 5),
            ("0-7:0/4", 5),
            ("0-7:2/0", 7),
            ("0-7:3/2", 5),
            ("0-7:0", 5),
            ("2,5-3", 5),
            ("0-3,8-6:2", 7),
            ("0,1,", 4),
            (" 0,,1", 4),
            ("0,1x", 4),
            ("0-", 3),
            ("0-7:", 5),
            ("0-7:1/", 7),
            ("1,99999999999", 3),
            ("0xfg", 4),
            (" 0x1,,1", 5),
            ("0x1z ", 4),
            ("  0x0", 3),
        ] {
            let e = CpuSet::parse(bad).unwrap_err();
            assert_eq!(e.position + 1, at, "{bad:?}: {e}");
            assert!(
                e.to_string().contains(&format!("at character {at}:")),
                "{e}"
            );
        }
        let e = CpuSet::parse_sysfs_mask("ff,é").unwrap_err();
        assert_eq!(e.position, 3, "{e}");
    }

    #[test]
    fn errors_quote_input_and_position() {
        let e = CpuSet::parse("0-").unwrap_err();
        assert_eq!(e.position, 2);
        assert_eq!(
            e.to_string(),
            "invalid list \"0-\" at character 3: expected a number after '-'"
        );
        for bad in [
            "0x0",
            "0x00000000,0",
            "",
            "5-2",
            "0-7:0",
            "1,,2",
            "1,",
            "a",
            "0-3:2/0",
            "0-3:3/2",
            "0x",
            "0xg",
            "1 2",
        ] {
            assert!(CpuSet::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(CpuSet::parse("99999999999").is_err());
        assert!(
            CpuSet::parse("5-2")
                .unwrap_err()
                .expected
                .contains("reversed")
        );
    }

    #[test]
    fn sysfs_tolerance() {
        assert_eq!(
            CpuSet::parse_sysfs_list("0-63\n\0", None)
                .unwrap()
                .to_list(),
            "0-63"
        );
        assert!(CpuSet::parse_sysfs_list("\0\n", None).unwrap().is_empty());
        assert!(
            CpuSet::parse_sysfs_list("  (null)\n", None)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            CpuSet::parse_sysfs_list("1-N", Some(7)).unwrap().to_list(),
            "1-7"
        );
    }

    #[test]
    fn compact_lists_use_strides() {
        let even: CpuSet = (0..80).step_by(2).collect();
        assert_eq!(even.to_compact_list(), "0-78:2");
        assert_eq!(
            CpuSet::parse("0-3,8,10,12").unwrap().to_compact_list(),
            "0-3,8-12:2"
        );
        assert_eq!(CpuSet::parse("1,5").unwrap().to_compact_list(), "1,5");
        assert_eq!(CpuSet::parse(&even.to_compact_list()).unwrap(), even);
    }

    #[test]
    fn beyond_1024() {
        let s = CpuSet::parse("0,1023,1024,1099").unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s.last(), Some(1099));
        let bytes = s.to_kernel_bytes(1100 / 8);
        assert_eq!(bytes.len(), 144); // whole 64-bit words
        assert_eq!(CpuSet::from_kernel_bytes(&bytes), s);
        assert_eq!(s.to_mask().split(',').count(), 35);
    }

    #[test]
    fn union_with_in_place() {
        let mut a = CpuSet::parse("1-3").unwrap();
        a.union_with(&CpuSet::parse("2,4000").unwrap());
        assert_eq!(a, CpuSet::parse("1-3,4000").unwrap());
        // A smaller set leaves the bitmap's length alone.
        a.union_with(&CpuSet::parse("0").unwrap());
        assert_eq!(a.to_list(), "0-3,4000");
        // An emptied high word of `other` does not grow `self`.
        let mut b = CpuSet::parse("5,300").unwrap();
        b.remove(300);
        let mut c = CpuSet::parse("7").unwrap();
        c.union_with(&b);
        assert_eq!(c, CpuSet::parse("5,7").unwrap());
        let mut e = CpuSet::new();
        e.union_with(&CpuSet::new());
        assert_eq!(e, CpuSet::new());
    }

    /// Issue 15: a 64 KB list repeating the largest range 6 400 times (a
    /// damaged record) parses to that one range; it took 50-80 s when ids
    /// were inserted one at a time (the timing is in BENCHMARKS.md, made by
    /// `examples/parse_cost.rs`; this test is the guard).
    #[test]
    fn hostile_repeated_ranges() {
        let huge = vec!["0-4194303"; 6400].join(",");
        assert!(huge.len() >= 63_999);
        let s = CpuSet::parse_sysfs_list(&huge, None).unwrap();
        assert_eq!(s.len(), 1 << 22);
        assert_eq!(s.to_list(), "0-4194303");
        // One beyond the largest id is refused, with its position.
        let over = format!("{huge},0-4194304");
        let e = CpuSet::parse_sysfs_list(&over, None).unwrap_err();
        assert!(e.expected.contains("larger than the maximum"), "{e}");
        assert_eq!(e.position, huge.len() + 3);
        // Many distinct, overlapping and unordered ranges merge exactly.
        let many: Vec<String> = (0..20_000u32)
            .rev()
            .map(|i| format!("{}-{}", 3 * i, 3 * i + 1 + i % 2))
            .collect();
        let s = CpuSet::parse(&many.join(",")).unwrap();
        let want: CpuSet = (0..20_000u32)
            .flat_map(|i| 3 * i..=3 * i + 1 + i % 2)
            .collect();
        assert_eq!(s, want);
        // Stride items beyond the budget are refused, not expanded for
        // seconds; within it they are exact.
        let strides = ["0-4194303:1/2"; 5].join(",");
        let e = CpuSet::parse(&strides).unwrap_err();
        assert!(e.expected.contains("groups"), "{e}");
        let s = CpuSet::parse("0-4194303:1/2").unwrap();
        assert_eq!(s.len(), 1 << 21);
        assert_eq!(s.last(), Some(4_194_302));
        assert_eq!(l("4194300-4194303:3/4"), "4194300-4194302");
    }

    proptest! {
        /// Issue 17: `intersects` without allocating says what a non-empty
        /// `intersection` says, for sets of different lengths in words.
        #[test]
        fn intersects_is_a_non_empty_intersection(
            a in proptest::collection::btree_set(0u32..700, 0..20),
            b in proptest::collection::btree_set(0u32..300, 0..20),
        ) {
            let (a, b): (CpuSet, CpuSet) = (a.into_iter().collect(), b.into_iter().collect());
            prop_assert_eq!(a.intersects(&b), !a.intersection(&b).is_empty());
            prop_assert_eq!(b.intersects(&a), !b.intersection(&a).is_empty());
        }

        /// Issue 17: the one-range fast path of `parse_list` gives what
        /// the general parser gives (set, words, error) for lists of one
        /// id or range, with blanks, leading zeros, `N`, reversed or
        /// oversized ids, and clipping.
        #[test]
        fn one_range_fast_path_equals_general_parser(
            text in "[ \\t]{0,2}[0-9N+]{0,8}(-[0-9N]{0,8})?(,[0-9]{1,3}|:[0-9]{1,2})?[ \\t\\n]{0,2}",
            last in proptest::option::of(0u32..5000),
            clip in prop_oneof![Just(MAX_ID), 0u32..5000],
        ) {
            fast_path_equals_general(&text, last, clip);
        }

        /// The same near `MAX_ID` (ids of 7 digits, one past it).
        #[test]
        fn one_range_fast_path_near_max_id(
            a in (MAX_ID - 70)..=(MAX_ID + 70),
            b in proptest::option::of((MAX_ID - 70)..=(MAX_ID + 70)),
            clip in prop_oneof![Just(MAX_ID), (MAX_ID - 70)..=MAX_ID],
        ) {
            let text = b.map_or(a.to_string(), |b| format!("{a}-{b}"));
            fast_path_equals_general(&text, None, clip);
        }

        #[test]
        fn insert_range_equals_inserts(a in 0u32..700, len in 0u32..300, pre in proptest::collection::btree_set(0u32..1100, 0..20)) {
            let mut s: CpuSet = pre.iter().copied().collect();
            let mut t = s.clone();
            s.insert_range(a, a + len);
            for id in a..=a + len {
                t.insert(id);
            }
            prop_assert_eq!(s, t);
        }

        #[test]
        fn list_round_trip(ids in proptest::collection::btree_set(0u32..5000, 0..200)) {
            let s: CpuSet = ids.iter().copied().collect();
            prop_assume!(!s.is_empty());
            prop_assert_eq!(CpuSet::parse(&s.to_list()).unwrap(), s.clone());
            prop_assert_eq!(CpuSet::parse(&format!("0x{}", s.to_mask())).unwrap(), s.clone());
            prop_assert_eq!(s.to_vec(), ids.into_iter().collect::<Vec<_>>());
        }

        #[test]
        fn union_with_equals_union(
            a in proptest::collection::btree_set(0u32..5000, 0..100),
            b in proptest::collection::btree_set(0u32..5000, 0..100),
        ) {
            let (a, b): (CpuSet, CpuSet) = (a.into_iter().collect(), b.into_iter().collect());
            let mut c = a.clone();
            c.union_with(&b);
            prop_assert_eq!(c, a.union(&b));
        }

        #[test]
        fn compact_list_round_trip(ids in proptest::collection::btree_set(0u32..500, 1..100)) {
            let s: CpuSet = ids.into_iter().collect();
            prop_assert_eq!(CpuSet::parse(&s.to_compact_list()).unwrap(), s);
        }

        #[test]
        fn stride_matches_definition(a in 0u32..300, len in 0u32..300, g in 1u32..20, u in 1u32..20) {
            prop_assume!(u <= g);
            let b = a + len;
            let s = CpuSet::parse(&format!("{a}-{b}:{u}/{g}")).unwrap();
            let want: CpuSet = (a..=b).filter(|i| (i - a) % g < u).collect();
            prop_assert_eq!(s, want);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,20}") {
            let _ = CpuSet::parse(&s);
            let _ = CpuSet::parse_sysfs_list(&s, Some(10));
            let _ = CpuSet::parse_sysfs_mask(&s);
        }
    }
}
