//! `--sysroot FILE.tar.gz`: a machine dump replayed from an archive
//! without unpacking it by hand (issue 12). The archive is recognised by
//! its first bytes (gzip `1f 8b`, or a plain tar's `ustar` magic), whatever
//! its name; an xz-compressed one (`fd 37 7a 58 5a 00`) is decompressed
//! first; a directory is used as it is.
//!
//! An archive may come from anyone, so it is read as untrusted input into
//! memory ([`Archive`]: nothing is written anywhere, so nothing is left to
//! remove however pinrun ends; issue 32), and [`super::Root`] serves its
//! reads from there, resolving paths inside it as the confined backend
//! does below a dump directory ([`Archive::walk`]). Only directories,
//! regular files and relative symbolic links that stay inside the tree
//! ([`stays_inside`]) are accepted; no absolute path, no
//! `..`, nothing written through a link, no device node, FIFO or hard
//! link; at most [`MAX_ENTRIES`] entries, [`MAX_ENTRY_BYTES`] per file and
//! [`MAX_TOTAL_BYTES`] in all (counted as read, not as declared), paths at
//! most [`MAX_DEPTH`] deep: memory stays linear in the archive. The
//! archive's modes, owners and times are ignored.

use crate::error::{Error, ErrorCode, Result};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The largest file a dump stores (and an archive may hold): 64 MiB
/// (`/proc/interrupts` of a machine with thousands of CPUs and IRQs).
pub const MAX_ENTRY_BYTES: u64 = 64 << 20;
/// The most bytes a dump stores in all (and an archive may unpack to).
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;
/// The most entries (files, directories, links) in a dump or archive.
pub const MAX_ENTRIES: u64 = 200_000;
/// The most path components of an entry of an archive (`--sysroot`):
/// the deepest file of the 91 machine dumps in tests/data/machines is 12
/// levels down, and unpacking costs each entry one `lstat(2)` per
/// level, so a cap keeps an archive of nested directories (3 000 levels
/// in 65 KB took 80 s to refuse, issue 33) linear in its entries.
pub const MAX_DEPTH: usize = 64;
/// The most symbolic links followed while resolving one path (as Linux's
/// `MAXSYMLINKS`).
pub const MAX_LINKS: usize = 40;

/// Whether the relative link `target`, in a directory `depth` levels below
/// the root, stays inside the tree when resolved from that directory:
/// leading `..` components only (at most `depth` of them), then names.
/// This is the rule the unpacker enforces on links from others' archives.
pub fn stays_inside(depth: usize, target: &str) -> bool {
    if target.is_empty() || target.starts_with('/') {
        return false;
    }
    let mut ups = 0;
    let mut named = false;
    for c in target.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if c == ".." {
            if named {
                return false;
            }
            ups += 1;
        } else {
            named = true;
        }
    }
    ups <= depth
}

/// One entry of an archive held in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A directory: its entries by name.
    Dir(BTreeMap<String, Node>),
    /// A regular file's bytes.
    File(Vec<u8>),
    /// A symbolic link's target (relative, staying inside the tree).
    Link(String),
}

/// A `--sysroot` archive read into memory ([`open`]): the dump's root
/// directory, laid out like `/`.
#[derive(Debug, PartialEq, Eq)]
pub struct Archive {
    /// The dump's root (a [`Node::Dir`]).
    root: Node,
}

impl Archive {
    /// An archive whose root directory is `root` (for tests and
    /// [`open`]).
    pub fn new(root: BTreeMap<String, Node>) -> Self {
        Archive {
            root: Node::Dir(root),
        }
    }

    /// Where `path` leads inside the archive, resolved as the kernel
    /// resolves it for a process chrooted there (`openat2(2)`
    /// `RESOLVE_IN_ROOT`): from the directory `from` (the names below the
    /// root of a directory [`Archive::walk`] returned) or, for an
    /// absolute path, from the root; `..` at the root stays there; a
    /// link's absolute target starts again from the root, a relative one
    /// from the link's directory; the last component's link is followed
    /// only when `follow`. The names on the way from the root (no link,
    /// no `..` among them) and the entry; `None` when a component is
    /// missing, a component before the last (or before a `..`) is not a
    /// directory, or more than [`MAX_LINKS`] links are met (a loop).
    pub fn walk<'a, 'b>(
        &'a self,
        from: &'b [String],
        path: &'b str,
        follow: bool,
    ) -> Option<(Vec<&'a str>, &'a Node)>
    where
        'a: 'b,
    {
        let mut names: Vec<&'a str> = Vec::new();
        let mut nodes: Vec<&'a Node> = vec![&self.root];
        let parts = |p: &'b str| p.split('/').filter(|c| !c.is_empty() && *c != ".").rev();
        let from = from.iter().rev().map(String::as_str);
        let from = from.filter(|_| !path.starts_with('/'));
        // A stack: the first component to walk on top.
        let mut rest: Vec<&'b str> = parts(path).chain(from).collect();
        let mut links = 0;
        while let Some(c) = rest.pop() {
            let Node::Dir(entries) = nodes.last()? else {
                return None;
            };
            if c == ".." {
                if names.pop().is_some() {
                    nodes.pop();
                }
                continue;
            }
            let (name, node) = entries.get_key_value(c)?;
            match node {
                Node::Link(t) if follow || !rest.is_empty() => {
                    links += 1;
                    if links > MAX_LINKS || t.is_empty() {
                        return None;
                    }
                    if t.starts_with('/') {
                        names.clear();
                        nodes.truncate(1);
                    }
                    rest.extend(parts(t));
                }
                _ => {
                    names.push(name);
                    nodes.push(node);
                }
            }
        }
        Some((names, nodes.last()?))
    }
}
/// Kinds of input by their first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gzip,
    Xz,
    Tar,
    Other,
}

/// The archive kind of a file from its first 512 bytes (`head`).
fn kind(head: &[u8]) -> Kind {
    if head.starts_with(&[0x1f, 0x8b]) {
        Kind::Gzip
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Kind::Xz
    } else if head.len() >= 262 && &head[257..262] == b"ustar" {
        Kind::Tar
    } else {
        Kind::Other
    }
}

/// `n` bytes for a message: in MiB when a whole number of them.
fn bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// `--sysroot FILE: WHY`, the cause's control and bidirectional
/// characters (an entry's name, the tar reader's words on a hostile
/// header) shown as `?` ([`crate::claim::printable`]): an archive's text
/// never reaches a terminal as escape sequences.
fn archive_error(file: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::SysrootArchive,
        format!(
            "--sysroot {}: {}",
            file.display(),
            crate::claim::printable(&why.to_string())
        ),
    )
}

/// `--sysroot PATH`: the archive at `path` read into memory; `Ok(None)`
/// when `path` is not a regular file (a directory, used as it is, or a
/// missing path, which the caller reports). Errors: `sysroot-archive`
/// naming the file and the cause (not an archive, damaged, refused by the
/// rules of this module), with a hint; `read-starved` when it cannot be
/// opened for want of descriptors or memory.
pub fn open(path: &Path) -> Result<Option<Archive>> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        _ => return Ok(None),
    }
    let cannot = |what: &str, e: &std::io::Error| {
        archive_error(
            path,
            format!("cannot {what}: {}", crate::error::io_words(e)),
        )
    };
    let mut file = std::fs::File::open(path).map_err(|e| {
        let errno = nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(0));
        super::root::starved_error_of(&path.display().to_string(), errno)
            .unwrap_or_else(|| cannot("open", &e))
    })?;
    let mut head = Vec::with_capacity(512);
    (&mut file)
        .take(512)
        .read_to_end(&mut head)
        .map_err(|e| cannot("read", &e))?;
    {
        use std::io::Seek;
        file.rewind().map_err(|e| cannot("read", &e))?;
    }
    let tar_error = |why: String| {
        archive_error(path, why).hint(
            "a pinrun dump holds only directories, regular files and links inside the tree; make one with pinrun --dump FILE.tar.gz",
        )
    };
    let tree = match kind(&head) {
        Kind::Gzip => unpack(
            flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)),
            Limits::SYSROOT,
        )
        .map_err(tar_error)?,
        Kind::Tar => unpack(std::io::BufReader::new(file), Limits::SYSROOT).map_err(tar_error)?,
        Kind::Xz => unpack_xz(file).map_err(|e| match e {
            XzFailure::Xz(why) => archive_error(path, why)
                .hint("a .tar.xz must hold a tar archive, as tar cJf writes"),
            XzFailure::Memory(why) => archive_error(path, why).hint(
                "compress the dump with xz -9 or a lower preset (tar cJf uses -6), or give the .tar.gz pinrun --dump writes",
            ),
            XzFailure::Tar(why) => tar_error(why),
        })?,
        Kind::Other => {
            return Err(archive_error(
                path,
                "neither a directory nor a .tar.gz, .tar.xz or .tar archive",
            )
            .hint("give a dump directory laid out like /, or an archive made by pinrun --dump FILE.tar.gz"));
        }
    };
    let Some(root) = dump_root(tree) else {
        return Err(archive_error(path, "not a machine dump (no sys/devices/system/cpu in it)")
            .hint("the archive must hold sys/ and proc/ laid out like /, as pinrun --dump FILE.tar.gz writes"));
    };
    Ok(Some(Archive { root }))
}

/// The most tar data an `.tar.xz` may decode to: 64 MiB (a machine dump
/// holds a few MiB).
pub const XZ_STREAM_BYTES: u64 = 64 << 20;

/// What is decoded after the tar stream's end-of-archive blocks: 1 MiB
/// (`tar` pads to 10 KiB records).
const XZ_TRAILER_BYTES: u64 = 1 << 20;

/// The most memory the xz decoder may use: 80 MiB, liblzma's own
/// accounting (`lzma_stream_decoder(3)` memlimit), nearly all of it the
/// dictionary its header declares. `xz -9`, the largest preset, needs
/// 65 MiB (`tar cJf` uses `-6`: 9 MiB); a larger dictionary gains nothing
/// for the [`XZ_STREAM_BYTES`] an archive may decode to.
pub const XZ_MEMORY_BYTES: u64 = 80 << 20;

/// Why an xz archive was refused: its xz data, the memory its decoder
/// needs, or its tar stream.
enum XzFailure {
    /// `damaged xz data: ...` (the decoder's words), or the file unread.
    Xz(String),
    /// The decoder needs more than [`XZ_MEMORY_BYTES`].
    Memory(String),
    /// The tar stream's refusal ([`unpack`]'s words), or more than
    /// [`XZ_STREAM_BYTES`] decoded.
    Tar(String),
}

/// An xz stream's decoded bytes, decoded as they are read by liblzma's
/// streaming decoder: it holds its dictionary (at most
/// [`XZ_MEMORY_BYTES`], checked from the block header before it is
/// allocated) and never a whole block, and it produces at most `left`
/// more bytes. Concatenated streams are read as one, as xz(1) does. When
/// it stops it says why in `failure`, which comes before the tar reader's
/// words (the tar reader sees only an I/O error).
struct XzReader<R> {
    input: R,
    stream: liblzma::stream::Stream,
    left: u64,
    failure: Option<XzFailure>,
}

impl<R: std::io::BufRead> XzReader<R> {
    /// A reader of the xz data in `input` (the file, buffered).
    fn new(input: R) -> std::result::Result<Self, XzFailure> {
        let flags = liblzma::stream::CONCATENATED;
        let stream = liblzma::stream::Stream::new_stream_decoder(XZ_MEMORY_BYTES, flags)
            .map_err(|e| XzFailure::Xz(format!("cannot start the xz decoder: {e}")))?;
        Ok(XzReader {
            input,
            stream,
            left: XZ_STREAM_BYTES,
            failure: None,
        })
    }

    /// Records `why` as the cause and returns the I/O error the tar reader
    /// gets.
    fn fail(&mut self, why: XzFailure) -> std::io::Error {
        self.failure = Some(why);
        std::io::Error::other("the xz decoder stopped")
    }
}

impl<R: std::io::BufRead> Read for XzReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use liblzma::stream::{Action, Error as XzError, Status};
        if buf.is_empty() || self.failure.is_some() {
            return Ok(0);
        }
        // One byte more than may be produced: more is refused, not cut.
        let room = buf
            .len()
            .min(usize::try_from(self.left + 1).unwrap_or(usize::MAX));
        loop {
            let input = match self.input.fill_buf() {
                Ok(input) => input,
                Err(e) => {
                    let why = format!("cannot read: {}", crate::error::io_words(&e));
                    return Err(self.fail(XzFailure::Xz(why)));
                }
            };
            let eof = input.is_empty();
            let (in0, out0) = (self.stream.total_in(), self.stream.total_out());
            let action = if eof { Action::Finish } else { Action::Run };
            let ret = self.stream.process(input, &mut buf[..room], action);
            let made = self.stream.total_out() - out0;
            self.input.consume((self.stream.total_in() - in0) as usize);
            let status = match ret {
                Ok(status) => status,
                Err(XzError::MemLimit) => {
                    return Err(self.fail(XzFailure::Memory(format!(
                        "an .xz whose decoder needs more than {} of memory (its dictionary; xz -9 needs 65 MiB)",
                        bytes(XZ_MEMORY_BYTES)
                    ))));
                }
                Err(e) => return Err(self.fail(XzFailure::Xz(format!("damaged xz data: {e}")))),
            };
            if made > self.left {
                return Err(self.fail(XzFailure::Tar(format!(
                    "more than {} of tar data in an .xz (a dump holds a few MiB)",
                    bytes(XZ_STREAM_BYTES)
                ))));
            }
            self.left -= made;
            if made > 0 || status == Status::StreamEnd {
                return Ok(made as usize);
            }
            if eof || self.stream.total_in() == in0 {
                let why = "damaged xz data: it ends before its stream does (cut short)";
                return Err(self.fail(XzFailure::Xz(why.into())));
            }
        }
    }
}

/// The tree of an xz-compressed tar `file`, read as [`unpack`] reads any
/// tar stream from an [`XzReader`]: the decoder's memory is bounded by
/// [`XZ_MEMORY_BYTES`], what it decodes by [`XZ_STREAM_BYTES`] (a
/// hostile block's data is refused as it is decoded). Once the tar stream
/// has ended, at most [`XZ_TRAILER_BYTES`] more are decoded, which checks
/// the stream's end when it is there. The decoder's refusal is the cause
/// when there is one.
fn unpack_xz(file: std::fs::File) -> std::result::Result<Node, XzFailure> {
    let mut xz = XzReader::new(std::io::BufReader::new(file))?;
    let limits = Limits {
        stream_bytes: XZ_STREAM_BYTES,
        ..Limits::SYSROOT
    };
    let tree = unpack(&mut xz, limits);
    if tree.is_ok() {
        // tar's record padding after its end-of-archive blocks.
        let _ = std::io::copy(&mut (&mut xz).take(XZ_TRAILER_BYTES), &mut std::io::sink());
    }
    match xz.failure {
        Some(why) => Err(why),
        None => tree.map_err(XzFailure::Tar),
    }
}

/// Whether the directory `tree` holds the directory
/// `sys/devices/system/cpu` (no link followed).
fn is_dump(tree: &Node) -> bool {
    let mut cur = tree;
    for name in ["sys", "devices", "system", "cpu"] {
        match cur {
            Node::Dir(entries) => match entries.get(name) {
                Some(n) => cur = n,
                None => return false,
            },
            _ => return false,
        }
    }
    matches!(cur, Node::Dir(_))
}

/// The dump's root in the archive's tree: the tree itself, or its only
/// top-level directory (`tar czf m.tar.gz machine/`).
fn dump_root(tree: Node) -> Option<Node> {
    if is_dump(&tree) {
        return Some(tree);
    }
    let Node::Dir(mut top) = tree else {
        return None;
    };
    let (_, only) = top.pop_first()?;
    (top.is_empty() && matches!(only, Node::Dir(_)) && is_dump(&only)).then_some(only)
}

/// The components of an entry's path, or why it is refused: absolute,
/// `..`, not UTF-8, or more than [`MAX_DEPTH`] levels (`.` components are
/// dropped).
/// The longest name of one path component (`NAME_MAX`, limits.h).
const NAME_MAX: usize = 255;

fn components(raw: &Path) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    for c in raw.components() {
        if out.len() == MAX_DEPTH {
            return Err(format!(
                "{}...: a path deeper than {MAX_DEPTH} levels (a machine dump is under 20)",
                raw.iter().take(4).collect::<PathBuf>().display()
            ));
        }
        match c {
            Component::Normal(n) if n.len() > NAME_MAX => {
                return Err(format!(
                    "a name of {} bytes (sysfs and procfs names are at most {NAME_MAX})",
                    n.len()
                ));
            }
            Component::Normal(n) => out.push(
                n.to_str()
                    .ok_or_else(|| format!("{}: a name that is not UTF-8", raw.display()))?
                    .to_string(),
            ),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("{}: an absolute path", raw.display()));
            }
            Component::ParentDir => {
                return Err(format!("{}: a path with '..'", raw.display()));
            }
        }
    }
    Ok(out)
}

/// The directory `parts` below `root` for the entry `shown`, made where
/// missing, refusing to go through anything that is not a directory (a
/// link, a file).
fn dir_at<'t>(
    root: &'t mut Node,
    parts: &[String],
    shown: &str,
) -> std::result::Result<&'t mut BTreeMap<String, Node>, String> {
    let through = || format!("{shown}: written through a link or a file");
    let mut cur = root;
    for c in parts {
        let Node::Dir(entries) = cur else {
            return Err(through());
        };
        if !entries.contains_key(c.as_str()) {
            entries.insert(c.clone(), Node::Dir(BTreeMap::new()));
        }
        cur = entries.get_mut(c.as_str()).ok_or_else(through)?;
    }
    match cur {
        Node::Dir(entries) => Ok(entries),
        _ => Err(through()),
    }
}

/// Puts `node` at `name` in `dir`, refusing a name already there: a
/// directory, or a file or link of an earlier entry (tar(1) extracts both
/// and the last copy wins; a dump holding two versions of one sysfs file
/// cannot say which the kernel showed, so it is refused, naming the path).
fn put(
    dir: &mut BTreeMap<String, Node>,
    name: &str,
    node: Node,
    shown: &str,
) -> std::result::Result<(), String> {
    match dir.get(name) {
        Some(Node::Dir(_)) => return Err(format!("{shown}: both a directory and a file")),
        Some(_) => {
            return Err(format!(
                "{shown}: in the archive twice (tar keeps the last copy; a dump with two versions of one file is not one machine's state)"
            ));
        }
        None => {}
    }
    dir.insert(name.to_string(), node);
    Ok(())
}

/// The most bytes read from the (decompressed) tar stream: the files'
/// [`MAX_TOTAL_BYTES`] plus a header and padding for each of
/// [`MAX_ENTRIES`] entries, rounded up. Bounds what the tar reader holds
/// in memory for a long name or pax header too, and a gzip bomb's time.
pub const MAX_STREAM_BYTES: u64 = 512 << 20;

/// A reader failing once more than `left` bytes were read from it.
struct Capped<R> {
    inner: R,
    left: u64,
    /// The stream ended where tar wanted more: a tar archive ends with
    /// zero blocks, read before its end, so this is an archive cut short.
    ended: bool,
    /// Bytes read so far.
    pos: u64,
    /// Where the next header block starts.
    next_header: u64,
    /// The header block being read (it may come in several reads).
    header: Vec<u8>,
}

/// The most bytes of one metadata entry: a GNU long name or link (`L`,
/// `K`) or a pax header (`x`, `g`). The tar reader holds such an entry in
/// memory whole before the file it describes; a path is at most 4096
/// bytes (`PATH_MAX`), so 64 KiB is plenty.
pub const MAX_META_BYTES: u64 = 64 << 10;

impl<R> Capped<R> {
    fn new(inner: R, left: u64) -> Self {
        Capped {
            inner,
            left,
            ended: false,
            pos: 0,
            next_header: 0,
            header: Vec::with_capacity(512),
        }
    }

    /// Follows the tar headers in `bytes` (read at `self.pos`): refuses a
    /// metadata entry over [`MAX_META_BYTES`] before the tar reader
    /// allocates it (`tar(5)` ustar: type flag at offset 156, size at 124
    /// in octal, or base-256 when its first byte has the high bit).
    fn watch(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let end = self.pos + bytes.len() as u64;
        let mut at = self.pos;
        while at < end {
            if at < self.next_header {
                at = self.next_header.min(end);
                continue;
            }
            let from = (at - self.pos) as usize;
            let take = (512 - self.header.len()).min((end - at) as usize);
            self.header.extend_from_slice(&bytes[from..from + take]);
            at += take as u64;
            if self.header.len() < 512 {
                break;
            }
            let h = std::mem::take(&mut self.header);
            let size = tar_size(&h[124..136]);
            if matches!(h[156], b'L' | b'K' | b'x' | b'g') && size > MAX_META_BYTES {
                return Err(std::io::Error::other(format!(
                    "a long name or pax header of {size} bytes (at most {MAX_META_BYTES})"
                )));
            }
            // A base-256 size can pass any offset: saturating, so the
            // stream's own cap ends it (never an overflow).
            self.next_header = at.saturating_add(size.div_ceil(512).saturating_mul(512));
        }
        Ok(())
    }
}

/// A tar header's size field: octal digits (NUL or space ended), or
/// base-256 (GNU) when the first byte's high bit is set; saturating.
fn tar_size(field: &[u8]) -> u64 {
    if field[0] & 0x80 != 0 {
        return field[1..].iter().fold(u64::from(field[0] & 0x7f), |n, b| {
            n.saturating_mul(256).saturating_add(u64::from(*b))
        });
    }
    field
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(*b))
        .fold(0u64, |n, b| {
            n.saturating_mul(8).saturating_add(u64::from(b - b'0'))
        })
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.ended |= n == 0 && !buf.is_empty();
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other("more tar data than the limit (a dump holds a few MiB)")
        })?;
        self.watch(&buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The bounds [`unpack`] enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most entries.
    pub entries: u64,
    /// The most bytes of one file.
    pub entry_bytes: u64,
    /// The most bytes of all files.
    pub total_bytes: u64,
    /// The most bytes of the tar stream itself.
    pub stream_bytes: u64,
}

impl Limits {
    /// `--sysroot`'s: [`MAX_ENTRIES`], [`MAX_ENTRY_BYTES`],
    /// [`MAX_TOTAL_BYTES`], [`MAX_STREAM_BYTES`].
    pub const SYSROOT: Limits = Limits {
        entries: MAX_ENTRIES,
        entry_bytes: MAX_ENTRY_BYTES,
        total_bytes: MAX_TOTAL_BYTES,
        stream_bytes: MAX_STREAM_BYTES,
    };
}

/// Reads the tar stream `input` into memory under the rules of this
/// module and `limits`: the tree of its entries (a [`Node::Dir`]); the
/// error is the cause, for `--sysroot FILE: <cause>`.
pub fn unpack(input: impl Read, limits: Limits) -> std::result::Result<Node, String> {
    use tar::EntryType;
    let mut ar = tar::Archive::new(Capped::new(input, limits.stream_bytes));
    let mut tree = Node::Dir(BTreeMap::new());
    let mut count: u64 = 0;
    let mut total: u64 = 0;
    let damaged = |e: std::io::Error| format!("damaged archive: {}", crate::error::io_words(&e));
    let entries = ar
        .entries()
        .map_err(|e| format!("not a tar archive: {}", crate::error::io_words(&e)))?;
    for entry in entries {
        let mut entry = entry.map_err(damaged)?;
        let ty = entry.header().entry_type();
        if matches!(ty, EntryType::XGlobalHeader) {
            continue;
        }
        count += 1;
        if count > limits.entries {
            return Err(format!(
                "more than {} entries (a dump holds a few thousand)",
                limits.entries
            ));
        }
        let parts = components(&entry.path().map_err(damaged)?)?;
        let shown = parts.join("/");
        // Every entry's name is held too: counted with the files' bytes.
        total = total.saturating_add(shown.len() as u64);
        if total > limits.total_bytes {
            return Err(format!(
                "more than {} unpacked (a dump holds a few MiB)",
                bytes(limits.total_bytes)
            ));
        }
        let Some((name, parent)) = parts.split_last() else {
            // The archive's own top directory (`./`).
            continue;
        };
        let size = entry.header().entry_size().unwrap_or(u64::MAX);
        if size > 0 && matches!(ty, EntryType::Directory | EntryType::Symlink) {
            return Err(format!(
                "{shown}: {size} bytes of data in an entry that holds none"
            ));
        }
        let node = match ty {
            EntryType::Directory => {
                dir_at(&mut tree, &parts, &shown)?;
                continue;
            }
            EntryType::Regular | EntryType::Continuous => {
                if size > limits.entry_bytes {
                    return Err(format!(
                        "{shown}: {size} bytes, more than the {} a file may hold",
                        bytes(limits.entry_bytes)
                    ));
                }
                if total.saturating_add(size) > limits.total_bytes {
                    return Err(format!(
                        "more than {} unpacked (a dump holds a few MiB)",
                        bytes(limits.total_bytes)
                    ));
                }
                // Never more than declared, whatever the stream holds.
                let mut data = Vec::with_capacity(size.min(1 << 20) as usize);
                (&mut entry)
                    .take(size)
                    .read_to_end(&mut data)
                    .map_err(|e| {
                        format!("damaged archive: {shown}: {}", crate::error::io_words(&e))
                    })?;
                if data.len() as u64 != size {
                    return Err(format!("damaged archive: {shown}: truncated"));
                }
                total += size;
                Node::File(data)
            }
            EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(damaged)?
                    .ok_or_else(|| format!("{shown}: a link without a target"))?;
                let t = target
                    .to_str()
                    .ok_or_else(|| format!("{shown}: a link target that is not UTF-8"))?;
                if !stays_inside(parent.len(), t) {
                    return Err(format!(
                        "{shown}: a link that may leave the tree (-> {t}): only relative links whose .. come first, no more of them than the link is deep, are accepted"
                    ));
                }
                Node::Link(t.to_string())
            }
            EntryType::Link => return Err(format!("{shown}: a hard link")),
            EntryType::Char | EntryType::Block => {
                return Err(format!("{shown}: a device node"));
            }
            EntryType::Fifo => return Err(format!("{shown}: a FIFO")),
            other => return Err(format!("{shown}: an entry of type {other:?}")),
        };
        put(dir_at(&mut tree, parent, &shown)?, name, node, &shown)?;
    }
    if ar.into_inner().ended {
        return Err(
            "damaged archive: it ends before tar's end-of-archive blocks (cut short)".to_string(),
        );
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Links stay inside: leading `..` no deeper than the link's directory,
    /// then names; nothing absolute, no `..` after a name.
    #[test]
    fn link_rule() {
        assert!(stays_inside(5, "../../node/node0"));
        assert!(stays_inside(4, "../cpufreq/policy0"));
        assert!(stays_inside(1, "12345"));
        assert!(!stays_inside(1, "../../x"));
        assert!(!stays_inside(3, "/etc/passwd"));
        assert!(!stays_inside(3, "a/../.."));
        assert!(!stays_inside(3, ""));
        assert!(stays_inside(0, "x"));
        assert!(!stays_inside(0, ".."));
    }

    #[test]
    fn kinds_by_magic() {
        assert_eq!(kind(&[0x1f, 0x8b, 8, 0]), Kind::Gzip);
        assert_eq!(kind(&[0xfd, b'7', b'z', b'X', b'Z', 0, 0]), Kind::Xz);
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(kind(&tar), Kind::Tar);
        assert_eq!(kind(b"0-3\n"), Kind::Other);
    }

    /// A GNU long name (`L`) or pax header (`x`) entry of more than
    /// MAX_META_BYTES is refused from its header, before the tar reader
    /// holds it in memory (a 400 MiB one made pinrun use 2.3 GB); one of
    /// 300 bytes, a real long path, unpacks; so does a file whose size is
    /// written in base-256.
    #[test]
    fn metadata_entries_are_bounded_by_their_header() {
        for (ty, size, ok) in [
            (tar::EntryType::GNULongName, MAX_META_BYTES + 1, false),
            (tar::EntryType::XHeader, 1 << 20, false),
            (tar::EntryType::GNULongName, 300, true),
        ] {
            let mut b = tar::Builder::new(Vec::new());
            let mut h = tar::Header::new_gnu();
            h.set_path("././@LongLink").unwrap();
            h.set_entry_type(ty);
            h.set_size(size);
            h.set_mode(0o644);
            h.set_cksum();
            let body = if ty == tar::EntryType::XHeader {
                let rec =
                    |n: usize| format!("{n} path=d/{}\n", "a".repeat(n - 9 - n.to_string().len()));
                rec(size as usize).into_bytes()
            } else {
                // Components of 50 bytes (a name is at most 255), then the
                // file's name, and the NUL.
                let dirs = "a".repeat(49) + "/";
                let head = format!("d/{}", dirs.repeat(((size as usize - 3) / 50).min(5)));
                let mut v =
                    format!("{head}{}", "b".repeat(size as usize - 1 - head.len())).into_bytes();
                v.push(0);
                v
            };
            assert_eq!(body.len() as u64, size);
            b.append(&h, body.as_slice()).unwrap();
            let mut f = tar::Header::new_gnu();
            f.set_path("x").unwrap();
            f.set_size(2);
            f.set_mode(0o644);
            f.set_cksum();
            b.append(&f, &b"1\n"[..]).unwrap();
            let tar = b.into_inner().unwrap();
            let r = unpack(tar.as_slice(), Limits::SYSROOT);
            if ok {
                assert!(r.is_ok(), "{r:?}");
            } else {
                let e = r.unwrap_err();
                assert!(
                    e.contains(&format!("a long name or pax header of {size} bytes")),
                    "{e}"
                );
            }
        }
        let mut field = [0u8; 12];
        field[0] = 0x80;
        field[11] = 5;
        assert_eq!(tar_size(&field), 5);
        assert_eq!(tar_size(b"00000001000\0"), 512);
    }

    /// A tar of `n` files of `len` bytes each.
    fn tar_of(n: usize, len: usize) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for i in 0..n {
            let mut h = tar::Header::new_gnu();
            h.set_size(len as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut h, format!("f{i}"), &vec![b'x'; len][..])
                .unwrap();
        }
        b.into_inner().unwrap()
    }

    /// Each bound refuses one more than it allows, and allows that much.
    #[test]
    fn limits_are_enforced() {
        let lim = Limits {
            entries: 3,
            entry_bytes: 100,
            total_bytes: 250,
            stream_bytes: 1 << 20,
        };
        let run = |tar: Vec<u8>, lim: Limits| unpack(tar.as_slice(), lim).map(|_| ());
        assert_eq!(run(tar_of(3, 10), lim), Ok(()));
        assert_eq!(
            run(tar_of(4, 10), lim),
            Err("more than 3 entries (a dump holds a few thousand)".into())
        );
        assert_eq!(
            run(tar_of(1, 101), lim),
            Err("f0: 101 bytes, more than the 100 bytes a file may hold".into())
        );
        assert_eq!(run(tar_of(2, 100), lim), Ok(()));
        assert_eq!(
            run(tar_of(3, 100), lim),
            Err("more than 250 bytes unpacked (a dump holds a few MiB)".into())
        );
        let small = Limits {
            stream_bytes: 2048,
            ..lim
        };
        let e = run(tar_of(3, 10), small).unwrap_err();
        assert!(e.contains("more tar data than the limit"), "{e}");
    }

    /// A path twice (`./x` and `x` name the same one, as for tar(1)) is
    /// refused, naming it; tar(1) itself extracts both and keeps the last
    /// (checked with the system's tar when it is installed). A directory
    /// listed twice is one directory.
    #[test]
    fn a_duplicated_path_is_refused() {
        let mut b = tar::Builder::new(Vec::new());
        for (path, data) in [
            ("sys/devices/system/cpu/online", &b"0-1\n"[..]),
            ("./sys/devices/system/cpu/online", b"0-7\n"),
        ] {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut h, path, data).unwrap();
        }
        let tar = b.into_inner().unwrap();
        let e = unpack(tar.as_slice(), Limits::SYSROOT).unwrap_err();
        assert!(
            e.starts_with("sys/devices/system/cpu/online: in the archive twice"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("d.tar");
        std::fs::write(&file, &tar).unwrap();
        if let Ok(o) = std::process::Command::new("tar")
            .arg("-xf")
            .arg(&file)
            .arg("-C")
            .arg(dir.path())
            .output()
            && o.status.success()
        {
            let got = std::fs::read_to_string(dir.path().join("sys/devices/system/cpu/online"));
            assert_eq!(got.unwrap(), "0-7\n", "tar keeps the last copy");
        }
        let mut b = tar::Builder::new(Vec::new());
        for _ in 0..2 {
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            h.set_mode(0o755);
            h.set_entry_type(tar::EntryType::Directory);
            b.append_data(&mut h, "sys/", &b""[..]).unwrap();
        }
        let tar = b.into_inner().unwrap();
        assert!(unpack(tar.as_slice(), Limits::SYSROOT).is_ok());
    }

    /// A file cut short is an error, not a short file.
    #[test]
    fn truncated_entries_are_refused() {
        let mut tar = tar_of(1, 100);
        tar.truncate(512 + 50);
        let e = unpack(tar.as_slice(), Limits::SYSROOT).unwrap_err();
        assert!(e.starts_with("damaged archive: f0"), "{e}");
    }

    #[test]
    fn entry_paths() {
        assert_eq!(components(Path::new("./sys/x")).unwrap(), vec!["sys", "x"]);
        // At most MAX_DEPTH levels: a nested archive is refused at once.
        let deep = |n: usize| vec!["d"; n].join("/");
        assert_eq!(
            components(Path::new(&deep(MAX_DEPTH))).unwrap().len(),
            MAX_DEPTH
        );
        let e = components(Path::new(&deep(3000))).unwrap_err();
        assert_eq!(
            e,
            format!(
                "d/d/d/d...: a path deeper than {MAX_DEPTH} levels (a machine dump is under 20)"
            )
        );
        assert!(
            components(Path::new("/etc/x"))
                .unwrap_err()
                .contains("absolute")
        );
        assert!(
            components(Path::new("a/../../x"))
                .unwrap_err()
                .contains("'..'")
        );
    }
}
