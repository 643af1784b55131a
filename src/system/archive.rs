//! `--sysroot FILE.tar.gz`: a machine dump replayed from an archive
//! without unpacking it by hand (issue 12). The archive is recognised by
//! its first bytes (gzip `1f 8b`, or a plain tar's `ustar` magic), whatever
//! its name; an xz-compressed one (`fd 37 7a 58 5a 00`) is decompressed
//! first; a directory is used as it is.
//!
//! An archive may come from anyone, so it is unpacked as untrusted input
//! into a private temporary directory (mode 0700), removed when pinrun
//! ends ([`Sysroot`]'s drop, or [`remove_unpacked`] before pinrun ends by
//! SIGPIPE; SIGINT, SIGTERM, SIGHUP and SIGQUIT are deferred from the
//! archive's opening until the directory is removed, then end pinrun as
//! they would have, and an unpack stops at the next entry when one is
//! pending): only directories, regular files and relative symbolic links
//! that stay inside the tree ([`super::dump::stays_inside`]); no absolute
//! path, no `..`, nothing written through a link, no device node, FIFO or
//! hard link; at most [`MAX_ENTRIES`] entries, [`MAX_ENTRY_BYTES`] per file
//! and [`MAX_TOTAL_BYTES`] in all (counted as unpacked, not as declared).
//! The archive's modes, owners and times are ignored.

use super::dump::{MAX_DEPTH, MAX_ENTRIES, MAX_ENTRY_BYTES, MAX_TOTAL_BYTES, stays_inside};
use crate::error::{Error, ErrorCode, Result};
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// The temporary directory of the unpacked archive, for [`remove_unpacked`].
static UNPACKED: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The directory a `--sysroot` names, or the one its archive was unpacked
/// into (removed when this is dropped).
#[derive(Debug)]
pub struct Sysroot {
    /// The directory laid out like `/`.
    dir: PathBuf,
    /// The temporary directory holding an unpacked archive.
    tmp: Option<tempfile::TempDir>,
    /// The signal mask before SIGINT, SIGTERM, SIGHUP and SIGQUIT were
    /// deferred for the unpacked directory's life (given back after it is
    /// removed, so that such a signal ends pinrun without leaving it).
    mask: Option<crate::ffi::SavedMask>,
}

impl Sysroot {
    /// The directory to read below (what [`super::Root::new`] takes).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Sysroot {
    fn drop(&mut self) {
        // The directory first, then a deferred Ctrl-C or SIGTERM ends
        // pinrun.
        if let Some(tmp) = self.tmp.take() {
            discard(tmp);
        }
        if let Some(mask) = self.mask.take() {
            crate::ffi::deliver_ending_signals(mask);
        }
    }
}

/// Whether `dir` is (below) the directory an archive was unpacked into by
/// [`open`]: a tree pinrun checked as it wrote it (no link leaving it, no
/// device, no FIFO), in a temporary directory only pinrun's user can
/// write ([`super::Root::machine`] reads it by path when the kernel
/// refuses `openat2(2)`).
pub(crate) fn unpacked_here(dir: &Path) -> bool {
    UNPACKED
        .lock()
        .ok()
        .and_then(|u| u.clone())
        .is_some_and(|t| dir.starts_with(t))
}

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT deferred while an archive is
/// unpacked and replayed ([`crate::ffi::defer_ending_signals`]): given back
/// when dropped, after the directory it guards is removed.
struct Deferred(Option<crate::ffi::SavedMask>);

impl Drop for Deferred {
    fn drop(&mut self) {
        if let Some(mask) = self.0.take() {
            crate::ffi::deliver_ending_signals(mask);
        }
    }
}

/// Memory set aside while an archive is unpacked (256 KiB, `calloc`ed:
/// mapped, never touched) and given back by [`remove_unpacked`] first:
/// when an allocation fails (`ulimit -v`), removing the directory needs
/// a little memory.
static RESERVE: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// Removes an unpacked archive's directory now: for the paths that end
/// pinrun without unwinding (death by SIGPIPE, an allocation that failed).
///
/// Never blocks: a lock already held (an allocation failing while this
/// thread holds it) is left alone, as is its directory.
pub fn remove_unpacked() {
    if let Ok(mut r) = RESERVE.try_lock() {
        drop(r.take());
    }
    if let Ok(mut u) = UNPACKED.try_lock()
        && let Some(dir) = u.take()
        && std::fs::remove_dir_all(&dir).is_err()
    {
        remove_tree(&dir);
    }
}

/// No unpacked directory for [`remove_unpacked`] (it is being removed by
/// its owner), and no memory set aside for it.
fn forget_unpacked() {
    if let Ok(mut u) = UNPACKED.lock() {
        *u = None;
    }
    if let Ok(mut r) = RESERVE.lock() {
        *r = None;
    }
}

/// Removes the temporary directory `tmp` and what it holds, with
/// [`remove_tree`] where `remove_dir_all` fails.
fn discard(tmp: tempfile::TempDir) {
    forget_unpacked();
    let path = tmp.path().to_path_buf();
    if tmp.close().is_err() {
        remove_tree(&path);
    }
}

/// Removes the unpacked tree `dir` holding one descriptor at a time (each
/// directory's names are read whole and its descriptor closed before
/// going down): what `remove_dir_all`, which keeps one open per level,
/// leaves behind under a small `ulimit -n` (it left the whole 6.7 MB tree
/// in /tmp at `ulimit -n 4` to 12). By path, links not followed: the tree
/// is pinrun's own, in a directory only its user can write. Best effort.
fn remove_tree(dir: &Path) {
    let Ok(list) = std::fs::read_dir(dir) else {
        let _ = std::fs::remove_dir(dir);
        return;
    };
    // Names and kinds only: a `DirEntry` keeps its directory open.
    let entries: Vec<(PathBuf, bool)> = list
        .flatten()
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    for (path, is_dir) in entries {
        if is_dir {
            remove_tree(&path);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
    let _ = std::fs::remove_dir(dir);
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

fn archive_error(file: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::SysrootArchive,
        format!("--sysroot {}: {why}", file.display()),
    )
}

/// `--sysroot PATH`: a directory as it is, or an archive unpacked into a
/// temporary directory. `None` (no `--sysroot`) is the live machine, `/`.
pub fn open(path: Option<&Path>) -> Result<Sysroot> {
    let Some(path) = path else {
        return Ok(Sysroot {
            dir: PathBuf::from("/"),
            tmp: None,
            mask: None,
        });
    };
    let plain = || {
        Ok(Sysroot {
            dir: path.to_path_buf(),
            tmp: None,
            mask: None,
        })
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        // Directories, and missing paths (reported by the caller as a
        // directory that is not a dump), as before.
        _ => return plain(),
    }
    // Declared before the directory: on an error return the directory is
    // removed first, then a deferred signal ends pinrun.
    let mut deferred = Deferred(crate::ffi::defer_ending_signals());
    let mut file = std::fs::File::open(path).map_err(|e| {
        super::root::note_io_error(&e, &|| path.display().to_string());
        super::root::starved_error().unwrap_or_else(|| {
            archive_error(path, format!("cannot open: {}", crate::error::io_words(&e)))
        })
    })?;
    let mut head = Vec::with_capacity(512);
    (&mut file)
        .take(512)
        .read_to_end(&mut head)
        .map_err(|e| archive_error(path, format!("cannot read: {}", crate::error::io_words(&e))))?;
    let k = kind(&head);
    let input: Box<dyn Read> = {
        use std::io::Seek;
        file.rewind().map_err(|e| {
            archive_error(path, format!("cannot read: {}", crate::error::io_words(&e)))
        })?;
        match k {
            Kind::Gzip => Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
                file,
            ))),
            Kind::Tar => Box::new(std::io::BufReader::new(file)),
            Kind::Xz => Box::new(unxz(file).map_err(|why| {
                archive_error(path, why)
                    .hint("a .tar.xz must hold a tar archive, as tar cJf writes")
            })?),
            Kind::Other => {
                return Err(archive_error(
                    path,
                    "neither a directory nor a .tar.gz or .tar archive",
                )
                .hint("give a dump directory laid out like /, or an archive made by pinrun --dump FILE.tar.gz"));
            }
        }
    };
    // Allocated before the directory exists (an allocation failing in
    // between would leave it) and before the locks are taken (see
    // remove_unpacked): the reserve, and room for the directory's path.
    let reserve = vec![0u8; 256 << 10];
    let mut path_copy = PathBuf::with_capacity(std::env::temp_dir().as_os_str().len() + 64);
    let tmp = tempfile::Builder::new()
        .prefix("pinrun-sysroot-")
        .tempdir()
        .map_err(|e| {
            archive_error(
                path,
                format!(
                    "cannot create a temporary directory: {}",
                    crate::error::io_words(&e)
                ),
            )
        })?;
    // Known before a byte is written, so that a pinrun ended before its
    // drop (an allocation failing while unpacking) removes it too.
    path_copy.push(tmp.path());
    if let Ok(mut u) = UNPACKED.lock() {
        *u = Some(path_copy);
    }
    if let Ok(mut r) = RESERVE.lock() {
        *r = Some(reserve);
    }
    if let Err(why) = unpack(input, tmp.path(), Limits::SYSROOT) {
        discard(tmp);
        // Out of descriptors (a small `ulimit -n`): not the archive's fault.
        if let Some(e) = super::root::starved_error() {
            return Err(e);
        }
        return Err(archive_error(path, why).hint(
            "a pinrun dump holds only directories, regular files and links inside the tree; make one with pinrun --dump FILE.tar.gz",
        ));
    }
    let Some(dir) = dump_root(tmp.path()) else {
        discard(tmp);
        return Err(archive_error(path, "not a machine dump (no sys/devices/system/cpu in it)")
            .hint("the archive must hold sys/ and proc/ laid out like /, as pinrun --dump FILE.tar.gz writes"));
    };

    Ok(Sysroot {
        dir,
        tmp: Some(tmp),
        mask: deferred.0.take(),
    })
}

/// A writer failing once more than `left` bytes were written to it.
struct CappedWriter<W> {
    inner: W,
    left: u64,
}

impl<W: std::io::Write> std::io::Write for CappedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.left = self.left.checked_sub(buf.len() as u64).ok_or_else(|| {
            std::io::Error::other("more tar data than the limit (a dump holds a few MiB)")
        })?;
        self.inner.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The tar stream of an xz-compressed `file`, decompressed (at most
/// [`MAX_STREAM_BYTES`]) into an unnamed temporary file (`O_TMPFILE`: gone
/// with pinrun however it ends), rewound for reading.
fn unxz(file: std::fs::File) -> std::result::Result<std::fs::File, String> {
    use std::io::{Seek, Write};
    let out = tempfile::tempfile().map_err(|e| {
        format!(
            "cannot create a temporary file: {}",
            crate::error::io_words(&e)
        )
    })?;
    let mut w = CappedWriter {
        inner: std::io::BufWriter::new(out),
        left: MAX_STREAM_BYTES,
    };
    lzma_rs::xz_decompress(&mut std::io::BufReader::new(file), &mut w)
        .map_err(|e| format!("damaged xz data: {e}"))?;
    w.flush().map_err(|e| {
        format!(
            "cannot write a temporary file: {}",
            crate::error::io_words(&e)
        )
    })?;
    let mut out = w.inner.into_inner().map_err(|e| {
        format!(
            "cannot write a temporary file: {}",
            crate::error::io_words(e.error())
        )
    })?;
    out.rewind().map_err(|e| {
        format!(
            "cannot read a temporary file: {}",
            crate::error::io_words(&e)
        )
    })?;
    Ok(out)
}

/// The dump's root in the unpacked tree: the tree itself, or its only
/// top-level directory (`tar czf m.tar.gz machine/`).
fn dump_root(tree: &Path) -> Option<PathBuf> {
    let is_dump = |d: &Path| {
        std::fs::symlink_metadata(d.join("sys/devices/system/cpu")).is_ok_and(|m| m.is_dir())
    };
    if is_dump(tree) {
        return Some(tree.to_path_buf());
    }
    let mut entries = std::fs::read_dir(tree).ok()?.flatten();
    let only = entries.next()?;
    if entries.next().is_some() || !only.file_type().ok()?.is_dir() {
        return None;
    }
    let dir = only.path();
    is_dump(&dir).then_some(dir)
}

/// The components of an entry's path, or why it is refused: absolute,
/// `..`, not UTF-8, or more than [`MAX_DEPTH`] levels (`.` components are
/// dropped).
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

/// Creates the directories `parts` below `root` for the entry `shown`,
/// refusing to go through anything that is not a real directory (a link,
/// a file). `known` holds the directories (relative paths) already
/// checked or made: each is looked at once per archive, so the cost is
/// linear in the entries however deep they are (199 990 entries 63 deep
/// took 121 s to refuse, issue 33's break test). A directory checked
/// stays one: a later entry of its name is refused by [`clear`].
fn make_dirs(
    root: &Path,
    parts: &[String],
    shown: &str,
    known: &mut std::collections::HashSet<String>,
) -> std::result::Result<(), String> {
    let mut p = root.to_path_buf();
    let mut rel = String::new();
    for c in parts {
        p.push(c);
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(c);
        if known.contains(&rel) {
            continue;
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(format!("{shown}: written through a link or a file"));
            }
            Err(_) => std::fs::create_dir(&p)
                .map_err(|e| format!("{shown}: {}", crate::error::io_words(&e)))?,
        }
        known.insert(rel.clone());
    }
    Ok(())
}

/// Removes whatever is at `p` unless it is a directory (a later entry of
/// the same name replaces an earlier one, as tar does).
fn clear(p: &Path, shown: &str) -> std::result::Result<(), String> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => Err(format!("{shown}: both a directory and a file")),
        Ok(_) => {
            std::fs::remove_file(p).map_err(|e| format!("{shown}: {}", crate::error::io_words(&e)))
        }
        Err(_) => Ok(()),
    }
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
            self.next_header = at + size.div_ceil(512).saturating_mul(512);
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

/// Unpacks the tar stream `input` into `dest` under the rules of this
/// module and `limits`; the error is the cause, for `--sysroot FILE:
/// <cause>`.
pub fn unpack(input: impl Read, dest: &Path, limits: Limits) -> std::result::Result<(), String> {
    use tar::EntryType;
    let mut ar = tar::Archive::new(Capped::new(input, limits.stream_bytes));
    let mut count: u64 = 0;
    let mut total: u64 = 0;
    let mut dirs = std::collections::HashSet::new();
    let entries = ar
        .entries()
        .map_err(|e| format!("not a tar archive: {}", crate::error::io_words(&e)))?;
    for entry in entries {
        if crate::ffi::ending_signal_pending() {
            return Err("interrupted by a signal".to_string());
        }
        let mut entry =
            entry.map_err(|e| format!("damaged archive: {}", crate::error::io_words(&e)))?;
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
        let raw = entry
            .path()
            .map_err(|e| format!("damaged archive: {}", crate::error::io_words(&e)))?;
        let parts = components(&raw)?;
        let shown = parts.join("/");
        let Some((_, parent)) = parts.split_last() else {
            // The archive's own top directory (`./`).
            continue;
        };
        let size = entry.header().entry_size().unwrap_or(u64::MAX);
        if size > 0 && matches!(ty, EntryType::Directory | EntryType::Symlink) {
            return Err(format!(
                "{shown}: {size} bytes of data in an entry that holds none"
            ));
        }
        match ty {
            EntryType::Directory => make_dirs(dest, &parts, &shown, &mut dirs)?,
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
                make_dirs(dest, parent, &shown, &mut dirs)?;
                let p = dest.join(&shown);
                clear(&p, &shown)?;
                let mut out = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&p)
                    .map_err(|e| {
                        super::root::note_io_error(&e, &|| p.display().to_string());
                        format!("{shown}: {}", crate::error::io_words(&e))
                    })?;
                // Never more than declared, whatever the stream holds.
                let n = std::io::copy(&mut (&mut entry).take(size), &mut out).map_err(|e| {
                    format!("damaged archive: {shown}: {}", crate::error::io_words(&e))
                })?;
                if n != size {
                    return Err(format!("damaged archive: {shown}: truncated"));
                }
                total += n;
            }
            EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|e| format!("damaged archive: {}", crate::error::io_words(&e)))?
                    .ok_or_else(|| format!("{shown}: a link without a target"))?;
                let t = target
                    .to_str()
                    .ok_or_else(|| format!("{shown}: a link target that is not UTF-8"))?;
                if !stays_inside(parent.len(), t) {
                    return Err(format!(
                        "{shown}: a link that may leave the tree (-> {t}): only relative links whose .. come first, no more of them than the link is deep, are accepted"
                    ));
                }
                make_dirs(dest, parent, &shown, &mut dirs)?;
                let p = dest.join(&shown);
                clear(&p, &shown)?;
                std::os::unix::fs::symlink(t, &p)
                    .map_err(|e| format!("{shown}: {}", crate::error::io_words(&e)))?;
            }
            EntryType::Link => return Err(format!("{shown}: a hard link")),
            EntryType::Char | EntryType::Block => {
                return Err(format!("{shown}: a device node"));
            }
            EntryType::Fifo => return Err(format!("{shown}: a FIFO")),
            other => return Err(format!("{shown}: an entry of type {other:?}")),
        }
    }
    if ar.into_inner().ended {
        return Err(
            "damaged archive: it ends before tar's end-of-archive blocks (cut short)".to_string(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let dir = tempfile::tempdir().unwrap();
            let r = unpack(tar.as_slice(), dir.path(), Limits::SYSROOT);
            if ok {
                assert_eq!(r, Ok(()));
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
        let run = |tar: Vec<u8>, lim: Limits| {
            let dir = tempfile::tempdir().unwrap();
            unpack(tar.as_slice(), dir.path(), lim)
        };
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

    /// A file cut short is an error, not a short file.
    #[test]
    fn truncated_entries_are_refused() {
        let mut tar = tar_of(1, 100);
        tar.truncate(512 + 50);
        let dir = tempfile::tempdir().unwrap();
        let e = unpack(tar.as_slice(), dir.path(), Limits::SYSROOT).unwrap_err();
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
