//! The one place pinrun reads files: every path is taken below a root
//! (`/` on a live system, `--sysroot DIR` or `--sysroot ARCHIVE` for a
//! machine dump), so any dump can be replayed exactly as the live machine
//! would be read. A [`Root`] has a backend (live, a confined dump
//! directory, an archive in memory: [`super::archive`]) and no global
//! state (what it could not open for want of a resource is its own,
//! [`Root::starved_open`]); `--dump`'s recorder wraps any of them
//! ([`Root::recording`]).
//!
//! Below a dump every path is resolved inside the dump, as the kernel
//! resolves it for a process chrooted there: `openat2(2)` with
//! `RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS` relative to an `O_PATH`
//! descriptor of the dump's root (`Documentation/filesystems/path-lookup.rst`,
//! "RESOLVE_IN_ROOT"), so that a link leaving the dump (absolute, or `..`
//! past its top) lands inside it again. A dump another user wrote cannot
//! make pinrun open a file outside it (a FIFO, `/dev/watchdog`, a tape),
//! nor read the host's files into the dump's analysis.
//! A path without `..` is opened first following no link at all (the
//! common case, as fast as `openat(2)`); only a path with a link on the
//! way is resolved with `RESOLVE_IN_ROOT`.

use super::archive::{Archive, Node};
use crate::cpuset::CpuSet;
use nix::errno::Errno;
use nix::fcntl::{OFlag, ResolveFlag};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The resolution of a path below a dump's root (`openat2(2)`): `..` and
/// absolute links stay inside it, `/proc/PID/fd/N`-style magic links are
/// refused.
const IN_ROOT: ResolveFlag = ResolveFlag::RESOLVE_IN_ROOT.union(ResolveFlag::RESOLVE_NO_MAGICLINKS);

/// The first resolution of a relative path without `..` below a dump:
/// no symbolic link followed (`ELOOP` at the first one), so the walk
/// cannot leave the directory it starts from. Unlike `RESOLVE_BENEATH`
/// or `RESOLVE_IN_ROOT` this is not a scoped lookup, which costs a check
/// under the global `mount_lock` per open (`path_is_under` in
/// `complete_walk`, fs/namei.c): about as fast as `openat(2)`, 60-80 ns
/// less per file here, on the tens of thousands of per-IRQ and per-CPU
/// files of a large dump. A path with a link is then resolved again with
/// [`IN_ROOT`].
const NO_LINKS: ResolveFlag =
    ResolveFlag::RESOLVE_NO_SYMLINKS.union(ResolveFlag::RESOLVE_NO_MAGICLINKS);

/// How many times [`open2`] makes an `openat(2)` the kernel answers with
/// `EAGAIN` before giving up on it.
pub const EAGAIN_TRIES: u32 = 1000;

/// `openat2(2)` of `path` relative to `dir` with `flags` (`O_CLOEXEC`
/// added) and `resolve`. A scoped lookup (`RESOLVE_IN_ROOT`) that crossed
/// `..` while any rename or mount happened anywhere on the host fails with
/// `EAGAIN`: the kernel cannot prove it stayed inside, and `openat2(2)`
/// says to retry. It is retried up to [`EAGAIN_TRIES`] times (yielding the
/// CPU after the first few); beyond that `path` is recorded in
/// `interrupted` ([`Root::interrupted_lookup`]: the reader then refuses,
/// rather than let the file read as missing) and `EAGAIN` returned. Other
/// errors are returned at once.
fn open2(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlag,
    resolve: ResolveFlag,
    interrupted: &std::sync::OnceLock<String>,
) -> nix::Result<OwnedFd> {
    let how = nix::fcntl::OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC)
        .resolve(resolve);
    let mut tries = 0;
    loop {
        match nix::fcntl::openat2(dir, path, how) {
            Err(Errno::EAGAIN) if tries < EAGAIN_TRIES => {
                tries += 1;
                if tries > 8 {
                    std::thread::yield_now();
                }
            }
            Err(Errno::EAGAIN) => {
                interrupted.get_or_init(|| path.to_string());
                return Err(Errno::EAGAIN);
            }
            r => return r,
        }
    }
}

/// The first file an open failed on for want of a resource, with the
/// error, shared by a [`Root`], its clones and its [`Dir`]s: see
/// [`Root::starved_open`].
type Starved = Arc<std::sync::OnceLock<(String, Errno)>>;

/// Records `err`, from opening `what()`, in `starved` when it says the
/// process or the system ran out of something (`EMFILE`: this process's
/// open-files limit, `ulimit -n`; `ENFILE`: the system's file table;
/// `ENOMEM`), not that the file is absent or unreadable: the file was not
/// read, and the reader refuses ([`Root::starved_open`]) rather than take
/// it as missing (an IRQ's affinity, a CPU's siblings, the real-time
/// scan's `/proc`). Other errors are left to the caller.
fn note_open_error(starved: &Starved, err: Errno, what: &dyn Fn() -> String) {
    if matches!(err, Errno::EMFILE | Errno::ENFILE | Errno::ENOMEM) {
        starved.get_or_init(|| (what(), err));
    }
}

/// [`note_open_error`] for an `std::io::Error`.
fn note_io_error(starved: &Starved, err: &std::io::Error, what: &dyn Fn() -> String) {
    if let Some(n) = err.raw_os_error() {
        note_open_error(starved, Errno::from_raw(n), what);
    }
}

/// The `read-starved` error for `path`, whose open failed with `e`, when
/// `e` says the process or the system ran out of something (`EMFILE`,
/// `ENFILE`, `ENOMEM`, see [`Root::starved_open`]); `None` for another error.
pub fn starved_error_of(path: &str, e: Errno) -> Option<crate::error::Error> {
    let hint = match e {
        Errno::EMFILE => {
            let limit = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .map(|(soft, _)| format!(" (it is {soft} here)"))
                .unwrap_or_default();
            format!("raise the open-files limit and run again: ulimit -n 1024{limit}")
        }
        Errno::ENFILE | Errno::ENOMEM => {
            "the system ran out of open files or memory: run again when it has recovered"
                .to_string()
        }
        _ => return None,
    };
    Some(
        crate::error::Error::new(
            crate::error::ErrorCode::ReadStarved,
            format!(
                "reading {path}: {} ({e:?}): the file could not be opened, so what it holds is unknown",
                e.desc()
            ),
        )
        .hint(hint),
    )
}

/// `rel` opened below `dir` (a dump's root or a directory in it) without
/// following any link ([`NO_LINKS`]): `Some` with the outcome when that
/// decides it, `None` when the path must be resolved with [`IN_ROOT`]
/// instead (a link on the way, `ELOOP`; or a path that is empty,
/// absolute or holds a `..` component, which could climb out of `dir`).
fn open_linkless(
    anchor: &Anchor,
    dir: BorrowedFd<'_>,
    rel: &str,
    flags: OFlag,
) -> Option<nix::Result<OwnedFd>> {
    if rel.is_empty()
        || rel.starts_with('/')
        || (rel.contains("..") && rel.split('/').any(|c| c == ".."))
    {
        return None;
    }
    match open2(dir, rel, flags, NO_LINKS, &anchor.interrupted) {
        Err(Errno::ELOOP) => None,
        r => Some(r),
    }
}

/// A dump directory's root, opened `O_PATH` ([`Backend::Confined`]),
/// shared by its [`Root`] and [`Dir`]s, with the first path below it that
/// pinrun's user was refused ([`Root::unreadable`]) and the first whose
/// lookup kept being interrupted ([`Root::interrupted_lookup`]).
#[derive(Debug)]
struct Anchor {
    fd: OwnedFd,
    denied: std::sync::OnceLock<String>,
    interrupted: std::sync::OnceLock<String>,
}

/// `rel` opened with `flags` below a dump, from `dir` (its root or a
/// directory in it): following no link ([`open_linkless`]), else resolved
/// inside the dump from its root as `full()` (an absolute path of the
/// dump, [`IN_ROOT`]). `None` when it cannot be opened. A path the kernel
/// refuses to pinrun's user (`EACCES`: a directory on the way it may not
/// search, or a file it may not read, in a dump another user wrote) is
/// recorded in `anchor` ([`Root::unreadable`]): the reader refuses rather
/// than take the file as missing.
fn open_confined(
    anchor: &Anchor,
    dir: BorrowedFd<'_>,
    rel: &str,
    full: &dyn Fn() -> String,
    flags: OFlag,
    starved: &Starved,
) -> Option<OwnedFd> {
    let opened = match open_linkless(anchor, dir, rel, flags) {
        Some(r) => r,
        None => open2(
            anchor.fd.as_fd(),
            &full(),
            flags,
            IN_ROOT,
            &anchor.interrupted,
        ),
    };
    match opened {
        Ok(fd) => Some(fd),
        Err(Errno::EACCES) => {
            anchor.denied.get_or_init(full);
            None
        }
        Err(e) => {
            note_open_error(starved, e, full);
            None
        }
    }
}

/// The flags of a file opened for reading: non-blocking, so that a FIFO
/// opens without waiting for a writer.
const READ_FLAGS: OFlag = OFlag::O_RDONLY.union(OFlag::O_NONBLOCK);

/// The flags of a directory opened for listing.
const LIST_FLAGS: OFlag = OFlag::O_RDONLY.union(OFlag::O_DIRECTORY);

/// The names of the entries of the open directory `fd`, without `.` and
/// `..`, unsorted; those that are not UTF-8 are left out.
fn list_fd(fd: OwnedFd) -> Option<Vec<String>> {
    let mut dir = nix::dir::Dir::from_fd(fd).ok()?;
    Some(
        dir.iter()
            .map_while(Result::ok)
            .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
            .filter(|n| n != "." && n != "..")
            .collect(),
    )
}

/// The most [`Root::read`] reads of one file (4 MiB); a larger file is an
/// error ([`Root::over_budget`]), never parsed cut. `/proc/interrupts`,
/// which grows with CPUs × IRQs (hundreds of MB on the largest machines),
/// is streamed line by line instead ([`Root::open_regular`]).
pub const MAX_FILE: u64 = 4 << 20;

/// Files that were larger than [`MAX_FILE`] (the first one is kept), shared
/// by a [`Root`] and its [`Dir`]s: the reader turns it into an error
/// ([`Root::over_budget`]) rather than parsing a cut file. Within one
/// [`super::parallel::map`] on several threads the first in time may not
/// be the first in order: the map then reads its items again on one thread.
type OverBudget = std::sync::Arc<std::sync::Mutex<Option<String>>>;

/// Records a file over budget in `over` unless one is already.
fn record_over(over: &OverBudget, what: &dyn Fn() -> String) {
    if let Ok(mut o) = over.lock() {
        o.get_or_insert_with(what);
    }
}

/// The size of the first read of a file (one page: every sysfs attribute,
/// and `per_cpu_count` cut at a page, fits in it).
const FIRST_READ: usize = 4096;

/// The text of `bytes`: valid UTF-8 (every sysfs/procfs file pinrun
/// reads) as it is, anything else with U+FFFD.
fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    // `from_utf8` first: its validation runs a word at a time over ASCII,
    // where `from_utf8_lossy`'s chunking goes byte by byte (a 4096-CPU
    // `per_cpu_count` is a page of ASCII per IRQ).
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Reads an open file as [`Root::read`] does: at most [`MAX_FILE`] bytes,
/// and, when `check`, only a regular file (its type checked on the
/// descriptor with `fstat(2)`, not by a second lookup of the path). A
/// larger file reads as missing and is recorded in `over` under `what`.
/// The file is closed without glibc's cancellation wrapper.
///
/// When `check` (a dump), the `st_size` of that same `fstat` ends the read
/// early: a first read that returns exactly `st_size` bytes, fewer than it
/// asked, is the whole regular file, so the read that would only see end of
/// file is not made (issue 17: one syscall less per dump file). Anything
/// else (a short read of a file whose `st_size` differs, as a live sysfs or
/// procfs file bind-mounted below `--sysroot` reports 4096 or 0) reads on
/// to end of file as before; on the live root, without the `fstat`, every
/// file is read to end of file (seq files may return short reads before
/// it), and so is every file when `to_eof` ([`Root::reading_to_eof`]).
///
/// The first read, the one most files need, is a plain `read(2)` without
/// glibc's cancellation wrapper into a page that is not zeroed first
/// ([`crate::ffi::read_nocancel_spare`]).
fn read_raw(
    file: std::fs::File,
    check: bool,
    to_eof: bool,
    over: &OverBudget,
    what: &dyn Fn() -> String,
) -> Option<Vec<u8>> {
    let out = read_raw_from(&file, check, to_eof, over, what);
    crate::ffi::close_nocancel(file.into());
    out
}

/// [`read_raw`] of an open file, which the caller closes.
fn read_raw_from(
    file: &std::fs::File,
    check: bool,
    to_eof: bool,
    over: &OverBudget,
    what: &dyn Fn() -> String,
) -> Option<Vec<u8>> {
    use std::io::{ErrorKind, Read};
    use std::os::fd::AsFd;
    let mut size = None;
    if check {
        let st = nix::sys::stat::fstat(file).ok()?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        size = usize::try_from(st.st_size).ok().filter(|_| !to_eof);
    }
    let mut buf = Vec::with_capacity(FIRST_READ);
    let n = loop {
        match crate::ffi::read_nocancel_spare(file.as_fd(), &mut buf) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            r => break r.ok()?,
        }
    };
    if n < FIRST_READ && size == Some(n) {
        return Some(buf);
    }
    let left = (MAX_FILE + 1).saturating_sub(buf.len() as u64);
    file.take(left).read_to_end(&mut buf).ok()?;
    within_budget(buf, over, what)
}

/// `bytes` when at most [`MAX_FILE`] long; else `None`, recorded in `over`
/// under `what`.
fn within_budget<B: AsRef<[u8]>>(
    bytes: B,
    over: &OverBudget,
    what: &dyn Fn() -> String,
) -> Option<B> {
    if bytes.as_ref().len() as u64 > MAX_FILE {
        record_over(over, what);
        return None;
    }
    Some(bytes)
}

/// A file's bytes as text ([`text_of`]): valid UTF-8 taken as it is (no
/// second pass, no copy), anything else with U+FFFD.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| text_of(e.as_bytes()).into_owned())
}

/// The live file `path` read whole as [`Root::read`] bounds a file: at
/// most [`MAX_FILE`] bytes, for the readers of `/proc` that do without a
/// `Root` (the liveness of a state directory's writers, `/proc/locks`,
/// another process's `environ` or `status`: files the kernel or another
/// user sizes). Errors: the open's and the read's, as `read(2)` gives
/// them (`ENOENT`, `ESRCH` of a process gone); a file larger than
/// [`MAX_FILE`] is `ErrorKind::FileTooLarge`, "larger than 4 MiB" (never
/// parsed cut); bytes that are not UTF-8 are `ErrorKind::InvalidData`, as
/// `std::fs::read_to_string` refuses them.
pub fn read_bounded(path: impl AsRef<std::path::Path>) -> std::io::Result<String> {
    String::from_utf8(read_bounded_bytes(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// [`read_bounded`]'s bytes, not taken as text (`/proc/PID/environ`).
pub fn read_bounded_bytes(path: impl AsRef<std::path::Path>) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("larger than {} MiB", MAX_FILE >> 20),
        ));
    }
    Ok(buf)
}

/// A file opened for reading: a descriptor, or an archive's bytes in
/// memory ([`Root::open_regular`]).
pub type Reader<'a> = Box<dyn std::io::Read + 'a>;

/// A directory below a [`Root`] (see [`Root::dir`]): its files are read as
/// [`Root::read`] reads them, relative to it. On the live root with
/// `openat(2)` from its descriptor. Below a dump directory with
/// `openat2(2)` following no link ([`NO_LINKS`]), and when there is one on
/// the way (`ELOOP`: a sysfs link to a sibling such as `cpu0/cpufreq ->
/// ../cpufreq/policy0`, an absolute link), once more from the dump's root
/// with the directory's path below it and `RESOLVE_IN_ROOT`: as the kernel
/// would resolve it for a process chrooted in the dump. In an archive,
/// walked from the directory in memory the same way ([`Archive::walk`]).
#[derive(Debug)]
pub struct Dir {
    at: At,
    /// Whether every file is read to end of file ([`Root::reading_to_eof`]).
    to_eof: bool,
    /// Its absolute path and the root's recorder, only while `--dump`
    /// records reads ([`Root::recording`]).
    rec: Option<(String, Arc<dyn Recorder>)>,
    /// The directory's path below the root, for [`Root::over_budget`].
    abs: String,
    over: OverBudget,
    /// Its root's ([`Root::starved_open`]).
    starved: Starved,
}

/// Where a [`Dir`] is, by backend.
#[derive(Debug)]
enum At {
    /// A directory of the live root, opened `O_PATH`.
    Live(OwnedFd),
    /// A directory of a dump, opened `O_PATH`, and the dump's root.
    Confined(OwnedFd, Arc<Anchor>),
    /// A directory of an archive: the names on the way to it from the root
    /// (no link among them).
    Archive(Arc<Archive>, Vec<String>),
}

impl Dir {
    /// The text of the file `rel` (a path relative to this directory),
    /// like [`Root::read`].
    pub fn read(&self, rel: &str) -> Option<String> {
        self.read_with(rel, str::to_string)
    }

    /// `f` of the text of the file `rel`, read as [`Dir::read`] reads it
    /// (the same text, the same bounds) but without a `String` made for
    /// it: for the many small per-IRQ files, parsed where they were read
    /// (issue 17). `None` when the file cannot be read, as [`Dir::read`].
    pub fn read_with<R>(&self, rel: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        if let At::Archive(a, names) = &self.at {
            return self.in_archive(a, names, rel, f);
        }
        let bytes = read_raw(
            self.open(rel)?,
            self.check(),
            self.to_eof,
            &self.over,
            &|| format!("{}/{rel}", self.abs),
        )?;
        Some(f(&text_of(&bytes)))
    }

    /// Whether file types are checked: below a dump, not on `/`.
    fn check(&self) -> bool {
        !matches!(self.at, At::Live(_))
    }

    /// Notes `rel` when `--dump` records reads.
    fn note(&self, rel: &str) {
        if let Some((dir, r)) = &self.rec {
            r.note(&format!("{dir}/{rel}"));
        }
    }

    /// `f` of the text of the archive's file `rel` below the directory
    /// `names` (at most [`MAX_FILE`] bytes, noted as [`Dir::open`] notes).
    fn in_archive<R>(
        &self,
        a: &Archive,
        names: &[String],
        rel: &str,
        f: impl FnOnce(&str) -> R,
    ) -> Option<R> {
        self.note(rel);
        let Some((_, Node::File(bytes))) = a.walk(names, rel, true) else {
            return None;
        };
        let bytes = within_budget(bytes, &self.over, &|| format!("{}/{rel}", self.abs))?;
        Some(f(&text_of(bytes)))
    }

    /// The file `rel` opened for reading (non-blocking, close-on-exec),
    /// noted when `--dump` records reads; `None` in an archive.
    fn open(&self, rel: &str) -> Option<std::fs::File> {
        self.note(rel);
        let fd = match &self.at {
            At::Confined(fd, anchor) => self.open_in(fd, anchor, rel, READ_FLAGS)?,
            At::Live(fd) => {
                let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
                crate::ffi::openat_nocancel(fd.as_fd(), rel, flags)
                    .map_err(|e| {
                        note_io_error(&self.starved, &e, &|| format!("{}/{rel}", self.abs))
                    })
                    .ok()?
            }
            At::Archive(..) => return None,
        };
        Some(std::fs::File::from(fd))
    }

    /// `rel` opened below a dump's directory `fd` with `flags`: from it,
    /// following no link (one short walk, [`open_linkless`]), else, for a
    /// path with a link or `..`, from the dump's root as `<this
    /// directory>/<rel>`, confined to the dump ([`IN_ROOT`]: the same
    /// file the kernel reaches from this directory, its own path
    /// resolved again).
    fn open_in(&self, fd: &OwnedFd, anchor: &Anchor, rel: &str, flags: OFlag) -> Option<OwnedFd> {
        let full = || format!("{}/{rel}", self.abs);
        open_confined(anchor, fd.as_fd(), rel, &full, flags, &self.starved)
    }

    /// Like [`Root::read_value`], relative to this directory.
    pub fn read_value(&self, rel: &str) -> Option<String> {
        self.read_with(rel, first_line)
    }

    /// Like [`Root::numbered_entries`], for the directory `rel` relative
    /// to this one (one `openat(2)` from here, then `getdents64(2)`);
    /// empty when it cannot be read.
    pub fn numbered_entries(&self, rel: &str, prefix: &str) -> Vec<u32> {
        use nix::fcntl::openat;
        if let Some((dir, r)) = &self.rec {
            r.note_list(&format!("{dir}/{rel}"), prefix);
        }
        let fd = match &self.at {
            At::Confined(fd, anchor) => self.open_in(fd, anchor, rel, LIST_FLAGS),
            At::Live(fd) => {
                let flags = LIST_FLAGS | OFlag::O_CLOEXEC;
                openat(fd, rel, flags, nix::sys::stat::Mode::empty())
                    .map_err(|e| {
                        note_open_error(&self.starved, e, &|| format!("{}/{rel}", self.abs))
                    })
                    .ok()
            }
            At::Archive(a, names) => {
                return match a.walk(names, rel, true) {
                    Some((_, Node::Dir(entries))) => {
                        numbered(entries.keys(), key_name, prefix, u32::MAX).0
                    }
                    _ => Vec::new(),
                };
            }
        };
        let Some(fd) = fd else {
            return Vec::new();
        };
        let Ok(mut dir) = nix::dir::Dir::from_fd(fd) else {
            return Vec::new();
        };
        numbered(
            dir.iter().map_while(Result::ok),
            entry_name,
            prefix,
            u32::MAX,
        )
        .0
    }

    /// Whether `rel` (relative to this directory) exists; below a dump,
    /// resolved inside it (an `O_PATH` open: no file is opened for
    /// reading).
    pub fn exists(&self, rel: &str) -> bool {
        match &self.at {
            At::Confined(fd, anchor) => self.open_in(fd, anchor, rel, OFlag::O_PATH).is_some(),
            At::Live(fd) => nix::sys::stat::fstatat(fd, rel, nix::fcntl::AtFlags::empty()).is_ok(),
            At::Archive(a, names) => a.walk(names, rel, true).is_some(),
        }
    }

    /// Like [`Root::read_list`], relative to this directory.
    pub fn read_list(&self, rel: &str) -> Option<CpuSet> {
        self.read_with(rel, |t| CpuSet::parse_sysfs_list(t, None).ok())?
    }

    /// Like [`Root::read_mask`], relative to this directory.
    pub fn read_mask(&self, rel: &str) -> Option<CpuSet> {
        self.read_with(rel, |t| CpuSet::parse_sysfs_mask(t).ok())?
    }

    /// Like [`Root::read_int`], relative to this directory.
    pub fn read_int(&self, rel: &str) -> Option<i64> {
        self.read_with(rel, |t| first_line(t).parse().ok())?
    }

    /// Like [`Root::read_list_or_mask`], relative to this directory.
    pub fn read_list_or_mask(&self, dir: &str, name: &str) -> Option<CpuSet> {
        self.read(&format!("{dir}/{name}_list"))
            .and_then(|t| CpuSet::parse_sysfs_list(&t, None).ok())
            .or_else(|| CpuSet::parse_sysfs_mask(&self.read(&format!("{dir}/{name}"))?).ok())
    }
}

/// Why the directories `<prefix>N` of `dir` with the ids `far` (the ones
/// beyond `what`, [`Root::numbered_entries_below`]) are ignored, the first
/// four named: `/sys/devices/system/cpu: 2 directories beyond possible
/// (CPU 7): cpu8, cpu9; ignoring them`.
pub fn beyond_words(dir: &str, prefix: &str, far: &[u64], what: &str) -> String {
    let shown: Vec<String> = far.iter().take(4).map(|i| format!("{prefix}{i}")).collect();
    format!(
        "{dir}: {} director{} beyond {what}: {}{}; ignoring {}",
        far.len(),
        if far.len() == 1 { "y" } else { "ies" },
        shown.join(", "),
        if far.len() > 4 { ", …" } else { "" },
        if far.len() == 1 { "it" } else { "them" },
    )
}

/// The first line of `text`, trimmed of whitespace and NUL bytes.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    line.trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .to_string()
}

/// The ids `N` of the names `<prefix>N` among `names`, split at `bound`
/// ([`Root::numbered_entries_below`]): canonical decimal only (`cpu1`, not
/// `cpu+1` or `cpu01`), ascending, each once.
///
/// The entries (named by `name_of`) are an archive directory's keys, or
/// `getdents64(2)` records read in place (`nix::dir`): no
/// allocation per entry, unlike `std::fs::read_dir` (a `CString` each),
/// which a listing of `/proc/irq` with 10 000 IRQs notices (issue 17).
/// Callers pass the entries up to the first error (`map_while`): `nix`'s
/// iterator repeats a failing `getdents64` forever, where `std`'s ends
/// the listing after it.
fn numbered<E>(
    entries: impl Iterator<Item = E>,
    name_of: impl Fn(&E) -> &[u8],
    prefix: &str,
    bound: u32,
) -> (Vec<u32>, Vec<u64>) {
    let mut far: Vec<u64> = Vec::new();
    let mut ids: Vec<u32> = entries
        .filter_map(|entry| {
            // Bytes throughout (a name of ASCII digits after a `&str`
            // prefix is UTF-8), the prefix compared only when there is one:
            // `/proc/irq` and `/sys/kernel/irq` list 10 000 names.
            let name = name_of(&entry);
            let digits = if prefix.is_empty() {
                name
            } else {
                name.strip_prefix(prefix.as_bytes())?
            };
            let canonical = !digits.is_empty()
                && digits.iter().all(u8::is_ascii_digit)
                && (digits.len() == 1 || digits[0] != b'0');
            if !canonical {
                return None;
            }
            // The value, u64::MAX past it.
            let value = digits.iter().try_fold(0u64, |v, &d| {
                v.checked_mul(10)?.checked_add(u64::from(d - b'0'))
            });
            match value.map(u32::try_from) {
                Some(Ok(id)) if id <= bound => Some(id),
                _ => {
                    far.push(value.unwrap_or(u64::MAX));
                    None
                }
            }
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    far.sort_unstable();
    far.dedup();
    (ids, far)
}

/// A directory entry's name, for [`numbered`].
fn entry_name(e: &nix::dir::Entry) -> &[u8] {
    e.file_name().to_bytes()
}

/// An archive directory's key, for [`numbered`].
fn key_name<'r>(k: &'r &String) -> &'r [u8] {
    k.as_bytes()
}

/// What a recording [`Root`] ([`Root::recording`]) tells of every path
/// it and its [`Dir`]s are asked for, as they are asked: the recording
/// backend of `--dump`, implemented by the dump wing (`dump::read`), so
/// that the core does not import it. Called from the threads that read.
pub trait Recorder: Send + Sync + std::fmt::Debug {
    /// `abs` (an absolute path below the root) was opened, read or tested.
    fn note(&self, abs: &str);
    /// `abs` was listed for entries named `<prefix>N`.
    fn note_list(&self, abs: &str, prefix: &str);
}

/// A file-system root under which absolute sysfs/procfs/cgroupfs paths are
/// resolved: the live machine (`/`), a dump directory, or an archive read
/// into memory (its [`Backend`]). Below a dump every path is resolved
/// inside it, as for a process chrooted there (see the module's text).
#[derive(Debug, Clone)]
pub struct Root {
    /// The directory read, or the archive's file (for messages).
    base: PathBuf,
    backend: Backend,
    /// Whether every file is read to end of file ([`Root::reading_to_eof`]).
    to_eof: bool,
    over: OverBudget,
    /// The first file not opened for want of a resource
    /// ([`Root::starved_open`]), shared with its clones and [`Dir`]s.
    starved: Starved,
    /// `--dump`'s recorder ([`Root::recording`]); `None` otherwise.
    recorder: Option<Arc<dyn Recorder>>,
    /// The thread count tests impose on [`super::parallel::map`]
    /// ([`Root::with_threads`]); `None`: as the machine allows.
    threads: Option<usize>,
    /// Whether tests impose [`super::parallel::ahead`]'s helper
    /// ([`Root::overlapping`]); `None`: as the machine allows.
    ahead: Option<bool>,
}

/// Where a [`Root`]'s files are.
#[derive(Debug, Clone)]
enum Backend {
    /// The live machine, `/`: opened by path, file types not checked.
    Live,
    /// A dump directory: every path resolved inside it from its root,
    /// opened `O_PATH` (`None`: it could not be opened, and nothing below
    /// it reads).
    Confined(Option<Arc<Anchor>>),
    /// An archive read into memory ([`super::archive`]).
    Archive(Arc<Archive>),
}

/// What a path is, its last link not followed ([`Root::entry_unnoted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link, and its target (UTF-8).
    Link(String),
    /// Anything else (a FIFO, a device, a link whose target is not UTF-8).
    Other,
}

impl Root {
    /// The root `--sysroot PATH` names (`None`: the live machine, `/`): an
    /// archive read into memory ([`super::archive::open`]), else a
    /// directory ([`Root::machine`]). Errors: those of both.
    pub fn sysroot(path: Option<&std::path::Path>) -> Result<Root, crate::error::Error> {
        let Some(path) = path else {
            return Root::machine(std::path::Path::new("/"));
        };
        match super::archive::open(path)? {
            Some(archive) => Ok(Root::archive(path.to_path_buf(), archive)),
            None => Root::machine(path),
        }
    }

    /// The root of a machine: `dir` must exist and hold
    /// `sys/devices/system/cpu` (`/` always does; a `--sysroot` directory
    /// may not). Errors: `sysroot-missing`, naming the path, with a hint.
    ///
    /// Below a dump every file is opened with `openat2(2)`
    /// (`RESOLVE_IN_ROOT`, Linux 5.6). A kernel that refuses it (`ENOSYS`
    /// before 5.6, `EPERM` from a seccomp filter) leaves no way to open a
    /// dump directory's files confined to it: the directory is refused
    /// (`sysroot-unconfined`), rather than read with links that may leave
    /// it. An archive (`--sysroot ARCHIVE`) is read into memory and needs
    /// no `openat2` ([`Root::sysroot`]).
    pub fn machine(dir: &std::path::Path) -> Result<Root, crate::error::Error> {
        use crate::error::{Error, ErrorCode};
        let root = Root::new(dir);
        if let Err(e) = std::fs::metadata(dir) {
            return Err(Error::new(
                ErrorCode::SysrootMissing,
                format!(
                    "--sysroot: {}: {}",
                    dir.display(),
                    crate::error::io_words(&e)
                ),
            )
            .hint(
                "name a machine dump: a directory laid out like / (sys/, proc/) or its .tar.gz",
            ));
        }
        if let Backend::Confined(Some(anchor)) = &root.backend {
            // The dump's root itself, which exists (it was just opened):
            // any error is the kernel refusing `openat2` or its flags.
            let probe = open2(
                anchor.fd.as_fd(),
                "/",
                OFlag::O_PATH,
                IN_ROOT,
                &anchor.interrupted,
            );
            if let Err(e) = probe {
                root.note_open_error(e, &|| dir.display().to_string());
                if let Some(starved) = root.starved_error() {
                    return Err(starved);
                }
                return Err(Error::new(
                    ErrorCode::SysrootUnconfined,
                    format!(
                        "--sysroot {}: this kernel refuses openat2(2) ({}), which pinrun needs to read a dump directory without following its links out of it",
                        dir.display(),
                        e.desc()
                    ),
                )
                .hint("run on Linux 5.6 or later without a seccomp filter on openat2, or pack the directory (tar czf dump.tar.gz -C DIR .) and pass the archive, which pinrun checks as it reads it"));
            }
        }
        let has_cpus = root.exists("/sys/devices/system/cpu");
        if let Some(e) = root.unreadable_error().or_else(|| root.starved_error()) {
            return Err(e);
        }
        if !has_cpus {
            return Err(Error::new(
                ErrorCode::SysrootMissing,
                format!(
                    "--sysroot: {}: not a machine dump (no sys/devices/system/cpu below it)",
                    root.base().display()
                ),
            )
            .hint("point --sysroot at a directory laid out like / with sys/ and proc/"));
        }
        Ok(root)
    }

    /// A root at `base` (a directory laid out like `/`). Below a dump every
    /// file is checked to be a regular file before it is read (a FIFO or a
    /// link to `/dev/zero` in a dump reads as missing). On the live root
    /// (`/`) the files read are the kernel's own (sysfs, procfs, cgroupfs)
    /// or root-owned (`/boot`, `/var/lib/kubelet`), so the check, an
    /// `fstat` per file (about a fifth of a sysfs read), is skipped there;
    /// `O_NONBLOCK` and the [`MAX_FILE`] cap still apply.
    ///
    /// Below a dump, the root directory is opened here (`O_PATH`, following
    /// links in `base` itself, which the caller named) and every path below
    /// it is resolved inside it (`openat2(2)`, `RESOLVE_IN_ROOT`): a link
    /// in the dump, absolute or climbing with `..`, reads what the dumped
    /// machine's link names inside the dump, never a file of this host.
    /// When `base` cannot be opened, nothing below it reads.
    pub fn new(base: impl Into<PathBuf>) -> Self {
        let base = base.into();
        if base != Path::new("/") {
            return Self::confined(base);
        }
        Self::with(base, Backend::Live)
    }

    /// The root of `archive`, read from the file `file` ([`Root::sysroot`]).
    pub fn archive(file: PathBuf, archive: Archive) -> Self {
        Self::with(file, Backend::Archive(Arc::new(archive)))
    }

    fn with(base: PathBuf, backend: Backend) -> Self {
        Self {
            base,
            backend,
            to_eof: false,
            over: OverBudget::default(),
            starved: Starved::default(),
            recorder: None,
            threads: None,
            ahead: None,
        }
    }

    /// This root, noting every path it and the directories opened from it
    /// are asked for in `recorder` (`--dump`: the dump wing's recorder).
    pub fn recording(&self, recorder: Arc<dyn Recorder>) -> Root {
        Root {
            recorder: Some(recorder),
            ..self.clone()
        }
    }

    fn note(&self, abs: &str) {
        if let Some(r) = &self.recorder {
            r.note(abs);
        }
    }

    fn note_list(&self, abs: &str, prefix: &str) {
        if let Some(r) = &self.recorder {
            r.note_list(abs, prefix);
        }
    }

    /// A root at `base` read as a dump (file types checked, every path
    /// resolved inside it), `/` too: for tests that read the kernel's
    /// files as a dump would hold them.
    fn confined(base: PathBuf) -> Self {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let starved = Starved::default();
        let anchor = nix::fcntl::open(&base, flags, nix::sys::stat::Mode::empty())
            .map_err(|e| note_open_error(&starved, e, &|| base.display().to_string()))
            .ok()
            .map(|fd| {
                Arc::new(Anchor {
                    fd,
                    denied: std::sync::OnceLock::new(),
                    interrupted: std::sync::OnceLock::new(),
                })
            });
        Root {
            starved,
            ..Self::with(base, Backend::Confined(anchor))
        }
    }

    /// Records `err`, from opening `what()` for this root's reader (a
    /// file it opens itself, as `--pid`'s `pidfd_open(2)`), when it says
    /// the process or the system ran out of something: see
    /// [`Root::starved_open`].
    pub fn note_open_error(&self, err: Errno, what: &dyn Fn() -> String) {
        note_open_error(&self.starved, err, what);
    }

    /// [`Root::note_open_error`] for an `std::io::Error`.
    pub fn note_io_error(&self, err: &std::io::Error, what: &dyn Fn() -> String) {
        note_io_error(&self.starved, err, what);
    }

    /// The first file (an absolute path; relative to the directory it was
    /// opened from for a [`Dir`]'s) that this root, its clones or its
    /// directories could not open for want of a resource (`EMFILE`,
    /// `ENFILE`, `ENOMEM`), with the error; `None` when none did. Such a
    /// file was not read: the reader refuses (exit 125) rather than use
    /// the machine's state without it.
    pub fn starved_open(&self) -> Option<(&str, Errno)> {
        self.starved.get().map(|(p, e)| (p.as_str(), *e))
    }

    /// The error for [`Root::starved_open`] (`read-starved`, exit 125),
    /// naming the file, the error and, for `EMFILE`, the open-files limit.
    pub fn starved_error(&self) -> Option<crate::error::Error> {
        let (path, e) = self.starved_open()?;
        starved_error_of(path, e)
    }

    /// Whether file types are checked: below a dump, not on `/`.
    fn check(&self) -> bool {
        !matches!(self.backend, Backend::Live)
    }

    /// Whether this is the live machine (`/`).
    pub fn is_live(&self) -> bool {
        matches!(self.backend, Backend::Live)
    }

    /// `abs` opened with `flags` (`O_CLOEXEC` added): by path on the live
    /// root, else resolved inside the dump (following no link, else
    /// [`IN_ROOT`]: [`open_linkless`]); not noted for `--dump`. `None`
    /// when it cannot be opened, and in an archive.
    fn open_below(&self, abs: &str, flags: OFlag) -> Option<OwnedFd> {
        match &self.backend {
            Backend::Live => {
                let flags = flags | OFlag::O_CLOEXEC;
                nix::fcntl::open(&self.path(abs), flags, nix::sys::stat::Mode::empty())
                    .map_err(|e| self.note_open_error(e, &|| abs.to_string()))
                    .ok()
            }
            Backend::Confined(anchor) => {
                let anchor = anchor.as_ref()?;
                let rel = abs.trim_start_matches('/');
                let abs = || abs.to_string();
                open_confined(anchor, anchor.fd.as_fd(), rel, &abs, flags, &self.starved)
            }
            Backend::Archive(_) => None,
        }
    }

    /// Where `abs` leads in this root's archive ([`Archive::walk`], the
    /// last link followed when `follow`); `None` when it leads nowhere or
    /// this is no archive.
    fn walk(&self, abs: &str, follow: bool) -> Option<(Vec<&str>, &Node)> {
        match &self.backend {
            Backend::Archive(a) => a.walk(&[], abs, follow),
            _ => None,
        }
    }

    /// The regular file `abs` opened for reading (non-blocking), without
    /// noting it for `--dump`: for the writer of a dump, which copies the
    /// files it noted. `None` when it is missing, unreadable or not a
    /// regular file.
    pub(crate) fn open_file_unnoted(&self, abs: &str) -> Option<Reader<'_>> {
        if let Backend::Archive(_) = &self.backend {
            let Some((_, Node::File(bytes))) = self.walk(abs, true) else {
                return None;
            };
            return Some(Box::new(bytes.as_slice()));
        }
        let file = std::fs::File::from(self.open_below(abs, READ_FLAGS)?);
        file.metadata()
            .ok()?
            .is_file()
            .then(|| Box::new(file) as Reader<'_>)
    }

    /// The names in the directory `abs` (without `.` and `..`), unsorted,
    /// without noting it for `--dump`; `None` when it cannot be listed.
    pub(crate) fn list_unnoted(&self, abs: &str) -> Option<Vec<String>> {
        match &self.backend {
            Backend::Live => {
                let rd = std::fs::read_dir(self.path(abs))
                    .map_err(|e| self.note_io_error(&e, &|| abs.to_string()))
                    .ok()?;
                Some(
                    rd.flatten()
                        .filter_map(|e| e.file_name().to_str().map(String::from))
                        .collect(),
                )
            }
            Backend::Confined(_) => list_fd(self.open_below(abs, LIST_FLAGS)?),
            Backend::Archive(_) => match self.walk(abs, true)? {
                (_, Node::Dir(entries)) => Some(entries.keys().cloned().collect()),
                _ => None,
            },
        }
    }

    /// What `abs` is, its last component's link not followed (those
    /// before it are: the dump's writer walks paths holding none), without
    /// noting it for `--dump`; `None` when it does not exist.
    pub(crate) fn entry_unnoted(&self, abs: &str) -> Option<Kind> {
        if let Backend::Archive(_) = &self.backend {
            return Some(match self.walk(abs, false)?.1 {
                Node::Dir(_) => Kind::Dir,
                Node::File(_) => Kind::File,
                Node::Link(t) => Kind::Link(t.clone()),
            });
        }
        let path = self.path(abs);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        Some(if meta.file_type().is_symlink() {
            match std::fs::read_link(&path).ok()?.to_str() {
                Some(t) => Kind::Link(t.to_string()),
                None => Kind::Other,
            }
        } else if meta.is_dir() {
            Kind::Dir
        } else if meta.is_file() {
            Kind::File
        } else {
            Kind::Other
        })
    }

    /// This root, with every file (its [`Dir`]s' too) read until `read(2)`
    /// returns 0, as before issue 17, instead of ending a dump's file at
    /// its `st_size` (see [`Root::read`]). For tests, which compare what
    /// both ways read: it must be the same.
    pub fn reading_to_eof(mut self) -> Self {
        self.to_eof = true;
        self
    }

    /// The first file read through this root (or its [`Dir`]s) that was
    /// larger than [`MAX_FILE`], as an absolute path: such a file reads as
    /// missing, and the reader refuses with this error (exit 125) rather
    /// than use a cut or absent file.
    pub fn over_budget(&self) -> Option<String> {
        self.over.lock().ok()?.clone()
    }

    /// Forgets this root's file over budget ([`Root::over_budget`]): for
    /// [`super::parallel::map`], which reads its items again in order.
    pub(crate) fn clear_over_budget(&self) {
        if let Ok(mut o) = self.over.lock() {
            *o = None;
        }
    }

    /// This root, with every [`super::parallel::map`] of its reads (its
    /// clones' too) on exactly `threads` threads (at least 1) in blocks of
    /// one item, the finest interleaving of the threads' reads, whatever
    /// the item count: for tests, which compare a read on one thread with
    /// the same read on several (they must be equal).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// The thread count [`Root::with_threads`] imposes, if any.
    pub fn threads(&self) -> Option<usize> {
        self.threads
    }

    /// This root, with [`super::parallel::ahead`] starting its helper
    /// (`true`) or declining (`false`) for it, whatever the allowed CPUs:
    /// for tests, which compare both (the results must be equal).
    pub fn overlapping(mut self, on: bool) -> Self {
        self.ahead = Some(on);
        self
    }

    /// The choice [`Root::overlapping`] imposes, if any.
    pub fn ahead(&self) -> Option<bool> {
        self.ahead
    }

    /// This root with a record of files over budget of its own, empty:
    /// for reads on another thread ([`super::parallel::ahead`]), whose
    /// over-budget file must not become the caller's before the point where
    /// the caller would have read it ([`Root::adopt_over_budget`]).
    pub fn with_own_budget(&self) -> Root {
        Root {
            over: OverBudget::default(),
            ..self.clone()
        }
    }

    /// Records `other`'s first file over budget ([`Root::over_budget`]) as
    /// this root's when this root has none yet: the reads made through
    /// `other` then count as made after this root's so far.
    pub fn adopt_over_budget(&self, other: &Root) {
        if let (Some(f), Ok(mut o)) = (other.over_budget(), self.over.lock()) {
            o.get_or_insert(f);
        }
    }

    /// The first path below this dump (absolute, as the dumped machine
    /// names it) that the kernel refused to pinrun's user (`EACCES`): a
    /// directory it may not search or a file it may not read. Such a file
    /// read as missing; the reader refuses with
    /// [`Root::unreadable_error`] rather than use the state without it.
    /// `None` on the live root, where a file pinrun may not read (debugfs
    /// as another user than root) is one it does without, and in an
    /// archive (read whole by pinrun).
    pub fn unreadable(&self) -> Option<&str> {
        self.anchor()?.denied.get().map(String::as_str)
    }

    /// The first path below this dump directory whose confined lookup was
    /// interrupted [`EAGAIN_TRIES`] times in a row by renames or mounts on
    /// this host (`EAGAIN` from `openat2(2)`), as given to it (relative to
    /// the dump's root or to a directory in it); `None` when none was.
    /// Such a file was not read: the reader refuses (`sysroot-unconfined`,
    /// exit 125) rather than take it as missing.
    pub fn interrupted_lookup(&self) -> Option<&str> {
        self.anchor()?.interrupted.get().map(String::as_str)
    }

    /// The dump directory's root ([`Backend::Confined`]).
    fn anchor(&self) -> Option<&Anchor> {
        match &self.backend {
            Backend::Confined(a) => a.as_deref(),
            _ => None,
        }
    }

    /// The error for [`Root::unreadable`] (`sysroot-unreadable`, exit 125),
    /// naming the dump and the path.
    pub fn unreadable_error(&self) -> Option<crate::error::Error> {
        let path = self.unreadable()?;
        Some(
            crate::error::Error::new(
                crate::error::ErrorCode::SysrootUnreadable,
                format!(
                    "--sysroot {}: reading {path}: permission denied: a dump read in part would give another machine's answers",
                    self.base.display()
                ),
            )
            .hint(format!(
                "run as the user who wrote the dump, or make it readable: chmod -R a+rX {}",
                self.base.display()
            )),
        )
    }

    /// The directory this root reads from (an archive's file for an
    /// archive).
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// `abs` (an absolute path such as `/sys/devices/system/cpu/online`)
    /// below the root's directory (for an archive, shown below its file).
    pub fn path(&self, abs: &str) -> PathBuf {
        self.base.join(abs.trim_start_matches('/'))
    }

    /// The file's text, or `None` when it is missing or unreadable. Bytes
    /// that are not UTF-8 are replaced (sysfs files are ASCII).
    /// At most [`MAX_FILE`] bytes are read, and below a dump only regular
    /// files ([`Root::new`]): a FIFO or a link to `/dev/zero` in a dump
    /// cannot hang pinrun.
    ///
    /// One path lookup per file: the file is opened non-blocking (so a FIFO
    /// opens without waiting for a writer) and its type checked on the open
    /// descriptor, not by a second lookup of the path. Below a dump a file
    /// whose first read returns its whole `st_size` is not read again to
    /// see end of file: `openat`, `fstat`, `read`, `close` per file.
    ///
    /// Below a dump the path is resolved inside it (`openat2(2)`,
    /// `RESOLVE_IN_ROOT`, or [`Archive::walk`] in an archive): a link to
    /// `/sys/…` reads the dump's `/sys/…`, a link climbing above the
    /// dump's top stays at it, and nothing outside the dump is opened (a
    /// link to a FIFO or a device elsewhere reads as the missing file it
    /// is inside the dump).
    pub fn read(&self, abs: &str) -> Option<String> {
        self.note(abs);
        if let Backend::Archive(_) = &self.backend {
            let Some((_, Node::File(bytes))) = self.walk(abs, true) else {
                return None;
            };
            let bytes = within_budget(bytes, &self.over, &|| abs.to_string())?;
            return Some(text_of(bytes).into_owned());
        }
        let file = self.open_read(abs)?;
        let bytes = read_raw(file, self.check(), self.to_eof, &self.over, &|| {
            abs.to_string()
        })?;
        Some(into_text(bytes))
    }

    /// The file `abs` opened for reading when it is a regular file (as
    /// [`Root::read`] opens it: non-blocking, its type checked on the
    /// descriptor), for a caller that streams it without the [`MAX_FILE`]
    /// cap; `None` when it is missing, unreadable or not a regular file.
    /// Below a dump, resolved inside it as [`Root::read`] resolves paths.
    pub fn open_regular(&self, abs: &str) -> Option<Reader<'_>> {
        self.note(abs);
        self.open_file_unnoted(abs)
    }

    /// `abs` opened for reading, non-blocking ([`Root::open_below`]: by
    /// path on the live root, `openat(AT_FDCWD, …)` as `std` opens it; else
    /// inside the dump).
    fn open_read(&self, abs: &str) -> Option<std::fs::File> {
        self.open_below(abs, READ_FLAGS).map(std::fs::File::from)
    }

    /// The directory `abs`, opened once so that the files below it are
    /// opened relative to it (a short path walk each, instead of the
    /// whole path from `/`); `None` when it cannot be opened.
    /// Below a dump it is resolved inside it, and so are the paths
    /// below it ([`Dir`]).
    pub fn dir(&self, abs: &str) -> Option<Dir> {
        self.note(abs);
        let at = match &self.backend {
            Backend::Archive(a) => match a.walk(&[], abs, true)? {
                (names, Node::Dir(_)) => {
                    At::Archive(a.clone(), names.into_iter().map(String::from).collect())
                }
                _ => return None,
            },
            Backend::Live => At::Live(self.open_below(abs, OFlag::O_PATH | OFlag::O_DIRECTORY)?),
            Backend::Confined(anchor) => At::Confined(
                self.open_below(abs, OFlag::O_PATH | OFlag::O_DIRECTORY)?,
                anchor.clone()?,
            ),
        };
        let abs = abs.trim_end_matches('/').to_string();
        Some(Dir {
            at,
            to_eof: self.to_eof,
            rec: self.recorder.as_ref().map(|r| (abs.clone(), r.clone())),
            abs,
            over: self.over.clone(),
            starved: self.starved.clone(),
        })
    }

    /// The file's first line, trimmed of whitespace and NUL bytes.
    pub fn read_value(&self, abs: &str) -> Option<String> {
        Some(first_line(&self.read(abs)?))
    }

    /// The file parsed as a decimal integer (kernel ids may be `-1`).
    pub fn read_int(&self, abs: &str) -> Option<i64> {
        self.read_value(abs)?.parse().ok()
    }

    /// The file parsed as a kernel cpulist (tolerating NULs and `(null)`);
    /// `None` when missing or malformed.
    pub fn read_list(&self, abs: &str) -> Option<CpuSet> {
        CpuSet::parse_sysfs_list(&self.read(abs)?, None).ok()
    }

    /// The file parsed as a kernel cpumask; `None` when missing or malformed.
    pub fn read_mask(&self, abs: &str) -> Option<CpuSet> {
        CpuSet::parse_sysfs_mask(&self.read(abs)?).ok()
    }

    /// `<dir>/<name>_list` as a cpulist, else `<dir>/<name>` as a cpumask
    /// (kernels before 4.x and some dumps have only the mask files).
    pub fn read_list_or_mask(&self, dir: &str, name: &str) -> Option<CpuSet> {
        self.read_list(&format!("{dir}/{name}_list"))
            .or_else(|| self.read_mask(&format!("{dir}/{name}")))
    }

    /// Ids `N` of the directory entries named `<prefix>N` in `abs`
    /// (e.g. `cpu` in `/sys/devices/system/cpu`), ascending, each once.
    /// `N` is canonical decimal as the kernel prints it (`cpu1`, not
    /// `cpu+1` or `cpu01`, which a damaged dump may hold).
    pub fn numbered_entries(&self, abs: &str, prefix: &str) -> Vec<u32> {
        self.numbered_entries_below(abs, prefix, u32::MAX).0
    }

    /// [`Root::numbered_entries`] split at `bound`: the ids up to it, and
    /// those beyond it (ids that do not fit a `u32` count as beyond), each
    /// ascending, so that a caller sizes its bitmaps by `bound` and reports
    /// the rest.
    pub fn numbered_entries_below(
        &self,
        abs: &str,
        prefix: &str,
        bound: u32,
    ) -> (Vec<u32>, Vec<u64>) {
        self.note_list(abs, prefix);
        if let Backend::Archive(_) = &self.backend {
            return match self.walk(abs, true) {
                Some((_, Node::Dir(entries))) => numbered(entries.keys(), key_name, prefix, bound),
                _ => (Vec::new(), Vec::new()),
            };
        }
        let dir = match self.open_below(abs, LIST_FLAGS) {
            Some(fd) => nix::dir::Dir::from_fd(fd).ok(),
            None => None,
        };
        match dir {
            Some(mut dir) => numbered(dir.iter().map_while(Result::ok), entry_name, prefix, bound),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Whether the path exists below the root (below a dump, resolved
    /// inside it: an `O_PATH` open, which opens no file for reading).
    pub fn exists(&self, abs: &str) -> bool {
        self.note(abs);
        match &self.backend {
            Backend::Live => self.path(abs).exists(),
            Backend::Confined(_) => self.open_below(abs, OFlag::O_PATH).is_some(),
            Backend::Archive(_) => self.walk(abs, true).is_some(),
        }
    }

    /// Whether the path is a directory below the root (resolved as
    /// [`Root::exists`] resolves it).
    pub fn is_dir(&self, abs: &str) -> bool {
        match &self.backend {
            Backend::Live => self.path(abs).is_dir(),
            Backend::Confined(_) => self
                .open_below(abs, OFlag::O_PATH | OFlag::O_DIRECTORY)
                .is_some(),
            Backend::Archive(_) => matches!(self.walk(abs, true), Some((_, Node::Dir(_)))),
        }
    }

    /// The target of the symbolic link `abs` (`readlink(2)`; the link
    /// itself is not followed, the directories above it are, inside the
    /// dump below one); `None` when it is not a link or cannot be read.
    pub fn read_link(&self, abs: &str) -> Option<PathBuf> {
        match &self.backend {
            Backend::Live => std::fs::read_link(self.path(abs)).ok(),
            Backend::Confined(_) => {
                let (dir, name) = abs.rsplit_once('/').unwrap_or(("", abs));
                let dir = if dir.is_empty() { "/" } else { dir };
                let fd = self.open_below(dir, OFlag::O_PATH | OFlag::O_DIRECTORY)?;
                nix::fcntl::readlinkat(&fd, name).ok().map(PathBuf::from)
            }
            Backend::Archive(_) => match self.walk(abs, false)? {
                (_, Node::Link(t)) => Some(PathBuf::from(t)),
                _ => None,
            },
        }
    }

    /// `abs` with every symbolic link resolved (`realpath(3)`), as an
    /// absolute path below the root: `/sys/class/net/eth0` →
    /// `/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0`. `None`
    /// when it does not exist or resolves outside the root (a dump's link
    /// that escapes it).
    ///
    /// Below a dump the links are resolved inside it (an absolute link
    /// names a path of the dump): the path the kernel reports for the
    /// `O_PATH` descriptor it opened (`/proc/self/fd/N`), or the names
    /// [`Archive::walk`] went through.
    pub fn resolve(&self, abs: &str) -> Option<String> {
        self.note(abs);
        let real = match &self.backend {
            Backend::Archive(_) => return Some(format!("/{}", self.walk(abs, true)?.0.join("/"))),
            Backend::Live => self.path(abs).canonicalize().ok()?,
            Backend::Confined(_) => {
                use std::os::fd::AsRawFd;
                let fd = self.open_below(abs, OFlag::O_PATH)?;
                std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?
            }
        };
        let base = self.base.canonicalize().ok()?;
        let rel = real.strip_prefix(&base).ok()?;
        Some(format!("/{}", rel.to_str()?))
    }

    /// The names in the directory `abs`, sorted; empty when it cannot be
    /// read.
    pub fn names(&self, abs: &str) -> Vec<String> {
        self.note_list(abs, "");
        let mut v = self.list_unnoted(abs).unwrap_or_default();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The directory `dir` as an archive in memory: its directories,
    /// regular files and links (whatever their targets, absolute or
    /// climbing: what a hand-made [`Archive`] may hold beyond what the
    /// unpacker accepts); anything else left out.
    fn archive_of(dir: &Path) -> Archive {
        fn entries(dir: &Path) -> BTreeMap<String, Node> {
            let mut out = BTreeMap::new();
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                let t = e.file_type().unwrap();
                let node = if t.is_symlink() {
                    Node::Link(std::fs::read_link(&p).unwrap().to_str().unwrap().into())
                } else if t.is_dir() {
                    Node::Dir(entries(&p))
                } else if t.is_file() {
                    Node::File(std::fs::read(&p).unwrap())
                } else {
                    continue;
                };
                out.insert(e.file_name().into_string().unwrap(), node);
            }
            out
        }
        Archive::new(entries(dir))
    }

    /// The directory `p` read both ways: as a dump directory (confined
    /// opens) and as an archive in memory ([`archive_of`]).
    fn both_backends(p: &Path) -> [Root; 2] {
        [Root::new(p), Root::archive(p.into(), archive_of(p))]
    }

    /// A file larger than MAX_FILE reads as missing and is reported by
    /// `over_budget` (through a `Dir` too), never parsed cut; in a dump
    /// directory and in an archive alike.
    #[test]
    fn files_beyond_the_budget_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("d")).unwrap();
        std::fs::write(p.join("d/big"), vec![b'1'; MAX_FILE as usize + 1]).unwrap();
        std::fs::write(p.join("d/max"), vec![b'1'; MAX_FILE as usize]).unwrap();
        for root in both_backends(p) {
            assert_eq!(
                root.read("/d/max").map(|t| t.len()),
                Some(MAX_FILE as usize)
            );
            assert_eq!(root.over_budget(), None);
            assert_eq!(root.dir("/d").unwrap().read("big"), None);
            assert_eq!(root.over_budget().as_deref(), Some("/d/big"));
        }
        let root = both_backends(p)[1].clone();
        assert_eq!(root.read("/d/big"), None);
        assert_eq!(root.over_budget().as_deref(), Some("/d/big"));
    }

    /// File sizes around the first read's page: empty, 1, 4095, 4096,
    /// 4097 and 10 000 bytes.
    const SIZES_AROUND_A_PAGE: [usize; 6] = [0, 1, 4095, 4096, 4097, 10_000];

    /// Writes `p/fN` for each of [`SIZES_AROUND_A_PAGE`]: N bytes cycling
    /// through `alphabet`.
    fn write_sized(p: &std::path::Path, alphabet: &[u8]) {
        for n in SIZES_AROUND_A_PAGE {
            let text: Vec<u8> = (0..n).map(|i| alphabet[i % alphabet.len()]).collect();
            std::fs::write(p.join(format!("f{n}")), text).unwrap();
        }
    }

    /// Issue 17: a dump's file ends at its `st_size` when the first read
    /// returns all of it; files of every size around the first read's page
    /// (empty, 1, 4095, 4096, 4097 and 10 000 bytes) read the same as when
    /// read to end of file, through a `Dir` too; and kernel files read as
    /// a dump's (a root over `/` read as a dump: every path resolved inside
    /// it, types checked), whose `st_size` is not their length (procfs 0,
    /// sysfs 4096), are still read whole, a seq file that returns short
    /// reads before its end too. (A link in a dump to them no longer
    /// reaches them: it resolves inside the dump.)
    #[test]
    fn dump_files_end_at_their_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let sizes = SIZES_AROUND_A_PAGE;
        write_sized(p, b"0123456789");
        let kernel = Root::confined("/".into());
        assert!(kernel.check() && !kernel.is_live());
        let root = Root::new(p);
        let eof = Root::new(p).reading_to_eof();
        let (d, d_eof) = (root.dir("/").unwrap(), eof.dir("/").unwrap());
        for n in sizes {
            let f = format!("f{n}");
            let want = std::fs::read_to_string(p.join(&f)).unwrap();
            assert_eq!(root.read(&format!("/{f}")).as_deref(), Some(&*want), "{f}");
            assert_eq!(d.read(&f).as_deref(), Some(&*want), "{f}");
            assert_eq!(d_eof.read(&f).as_deref(), Some(&*want), "{f}");
        }
        let status = kernel.read("/proc/self/status").unwrap();
        assert!(status.ends_with('\n') && status.contains("Cpus_allowed_list:"));
        assert!(status.len() > 100, "{status}");
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        let cpu = kernel.dir("/sys/devices/system/cpu").unwrap();
        assert_eq!(cpu.read("online"), Some(online.clone()));
        assert_eq!(kernel.read("/sys/devices/system/cpu/online"), Some(online));
        // A seq file longer than a page (`/proc/self/smaps` of this test
        // process) returns whole records, fewer bytes than asked, before
        // its end: the text goes on past the first read.
        let live = std::fs::read_to_string("/proc/self/smaps").unwrap();
        assert!(live.len() > 2 * FIRST_READ, "{}", live.len());
        let maps = kernel.dir("/proc/self").unwrap().read("smaps").unwrap();
        assert!(
            maps.len() > 2 * FIRST_READ && maps.ends_with('\n'),
            "{}",
            maps.len()
        );
    }

    /// Numbered names, read as bytes (issue 17): canonical decimal only,
    /// split at the bound, ids past `u32` (and past `u64`: `u64::MAX`)
    /// beyond it; with a prefix and without.
    #[test]
    fn numbered_names_canonical_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for name in [
            "0",
            "1",
            "7",
            "01",
            "+1",
            "1x",
            "4294967295",
            "4294967296",
            "99999999999999999999999",
            "cpu5",
            "cpu05",
            "cpu",
            "cpu12",
            "x",
        ] {
            std::fs::create_dir(p.join(name)).unwrap();
        }
        let root = Root::new(p);
        assert_eq!(
            root.numbered_entries_below("/", "", 7),
            (vec![0, 1, 7], vec![4_294_967_295, 4_294_967_296, u64::MAX])
        );
        assert_eq!(root.numbered_entries("/", ""), vec![0, 1, 7, 4_294_967_295]);
        assert_eq!(
            root.numbered_entries_below("/", "cpu", 5),
            (vec![5], vec![12])
        );
        assert_eq!(
            root.dir("/").unwrap().numbered_entries(".", "cpu"),
            vec![5, 12]
        );
    }

    /// Issue 17: `Dir::read_with` hands `f` the text `Dir::read` returns,
    /// for files parsed where they were read (one page, no `String`) and
    /// for longer ones (read on into a `Vec`): empty, 1, 4095, 4096, 4097
    /// and 10 000 bytes, invalid UTF-8 (replaced alike), a live procfs
    /// file read as a dump's (read to its end), a read made from
    /// inside `f` (its own page: the outer text is intact), a FIFO and a
    /// file past the budget (`None`, the latter recorded).
    #[test]
    fn read_with_sees_what_read_returns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let sizes = SIZES_AROUND_A_PAGE;
        write_sized(p, b"abcdefghijklmnopqrstuvwxyz");
        std::fs::write(p.join("bad"), b"0-3\xff\xfe,7\n").unwrap();
        nix::unistd::mkfifo(&p.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::write(p.join("big"), vec![b'1'; MAX_FILE as usize + 1]).unwrap();
        let root = Root::new(p);
        let d = root.dir("/").unwrap();
        for f in sizes.iter().map(|n| format!("f{n}")).chain(["bad".into()]) {
            let want = d.read(&f).unwrap();
            assert_eq!(
                d.read_with(&f, str::to_string).as_deref(),
                Some(&*want),
                "{f}"
            );
        }
        assert_eq!(
            d.read_with("bad", str::to_string).as_deref(),
            Some("0-3\u{fffd}\u{fffd},7\n")
        );
        let proc_self = Root::confined("/".into()).dir("/proc/self").unwrap();
        let maps = proc_self.read_with("smaps", str::to_string).unwrap();
        assert!(
            maps.len() > 2 * FIRST_READ && maps.ends_with('\n'),
            "{}",
            maps.len()
        );
        let nested = d.read_with("f4095", |outer| {
            let inner = d.read_with("f10000", |t| t.len());
            (outer.len(), outer.as_bytes()[4094], inner)
        });
        assert_eq!(nested, Some((4095, b'a' + (4094 % 26) as u8, Some(10_000))));
        assert_eq!(d.read_with("fifo", str::to_string), None);
        assert_eq!(root.over_budget(), None);
        assert_eq!(d.read_with("big", |t| t.len()), None);
        assert_eq!(root.over_budget().as_deref(), Some("/big"));
        assert_eq!(d.read_with("missing", str::to_string), None);
        // Opened without glibc's wrapper: a NUL byte is refused, a path
        // longer than the stack buffer (256 bytes) still opens.
        assert_eq!(d.read_with("f1\0x", str::to_string), None);
        let long = format!("{}f1", "./".repeat(200));
        assert_eq!(d.read_with(&long, str::to_string).as_deref(), Some("a"));
    }

    /// Below a dump, a FIFO, a directory and a link to a character device
    /// read as missing; a regular file reads; the live root skips the type
    /// check and reads the kernel's files.
    #[test]
    fn dumps_read_regular_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("plain"), "0-3\n").unwrap();
        nix::unistd::mkfifo(&p.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::create_dir(p.join("dir")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", p.join("zero")).unwrap();
        let root = Root::new(p);
        assert!(root.check());
        assert_eq!(root.read("/plain").as_deref(), Some("0-3\n"));
        for f in ["/fifo", "/dir", "/zero"] {
            assert_eq!(root.read(f), None, "{f}");
        }
        let d = root.dir("/").unwrap();
        assert_eq!(d.read("zero"), None);
        assert_eq!(
            d.read_list("plain").map(|s| s.to_list()).as_deref(),
            Some("0-3")
        );
        let live = Root::new("/");
        assert!(!live.check());
        assert!(
            live.read("/proc/self/status")
                .unwrap()
                .contains("Cpus_allowed_list:")
        );
    }

    /// Below a dump every path resolves inside it, as for a process
    /// chrooted there: an absolute link reads the dump's file (not the
    /// host's), a relative link climbing past the top stops at it, a
    /// sysfs link leaving a `Dir` (`cpu0/cpufreq -> ../cpufreq/policy0`)
    /// reads as before, and a link to a FIFO or a directory outside reads,
    /// lists and exists as the missing path it is inside the dump; the
    /// same through `Dir`, listings, `exists`, `is_dir`, `read_link`,
    /// `resolve` and `open_regular`.
    /// Renames elsewhere on the host make a confined lookup that crosses
    /// `..` fail with `EAGAIN` now and then (`openat2(2)`: "retry"); the
    /// file must still be read, every time, and no lookup recorded as
    /// interrupted. With two retries only (the first version) one of
    /// these 20 000 reads came back missing in about a third of the runs
    /// here.
    #[test]
    fn renames_on_the_host_do_not_make_files_missing() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dump = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dump.path().join("a/b")).unwrap();
        std::fs::write(dump.path().join("a/f"), "0-3\n").unwrap();
        let root = Root::new(dump.path());
        let elsewhere = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for k in 0..3 {
                let (x, y) = (
                    elsewhere.path().join(format!("x{k}")),
                    elsewhere.path().join(format!("y{k}")),
                );
                std::fs::create_dir(&x).unwrap();
                let stop = &stop;
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let _ = std::fs::rename(&x, &y);
                        let _ = std::fs::rename(&y, &x);
                    }
                });
            }
            // A long walk with many `..` (a wide window for a rename).
            let path = format!("/a{}/f", "/b/..".repeat(16));
            let read: Vec<Option<String>> = (0..20_000).map(|_| root.read(&path)).collect();
            stop.store(true, Ordering::Relaxed);
            assert!(read.iter().all(|r| r.as_deref() == Some("0-3\n")));
        });
        assert_eq!(root.interrupted_lookup(), None);
    }

    #[test]
    fn links_resolve_inside_the_dump() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let p = dir.path();
        let cpu = p.join("sys/devices/system/cpu");
        std::fs::create_dir_all(cpu.join("cpu0")).unwrap();
        std::fs::create_dir_all(cpu.join("cpufreq/policy0")).unwrap();
        std::fs::create_dir_all(p.join("proc/7")).unwrap();
        std::fs::create_dir_all(p.join("a/b")).unwrap();
        // A value no host has, and a dump /proc holding only pid 7.
        std::fs::write(cpu.join("online"), "0-2,9999\n").unwrap();
        std::fs::write(cpu.join("cpufreq/policy0/scaling_governor"), "gov\n").unwrap();
        symlink("7", p.join("proc/self")).unwrap();
        symlink("../cpufreq/policy0", cpu.join("cpu0/cpufreq")).unwrap();
        symlink("/sys/devices/system/cpu/online", p.join("a/abs")).unwrap();
        symlink(
            "../../../../../../sys/devices/system/cpu/online",
            p.join("a/b/up"),
        )
        .unwrap();
        symlink("/proc", p.join("a/proc")).unwrap();
        symlink("/sys/devices/system/cpu", cpu.join("cpu0/all")).unwrap();
        let fifo = outside.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        symlink(&fifo, p.join("a/fifo")).unwrap();
        symlink(outside.path(), p.join("a/out")).unwrap();
        std::fs::write(outside.path().join("7"), "x").unwrap();
        symlink("loop", p.join("a/loop")).unwrap();
        std::fs::write(p.join("a/x..y"), "dots\n").unwrap();
        // A dump directory (confined opens) and the same tree as an archive
        // in memory: the same answers.
        for root in both_backends(p) {
            let dump = "0-2,9999\n";
            assert_eq!(root.read("/a/abs").as_deref(), Some(dump));
            assert_eq!(root.read("/a/b/up").as_deref(), Some(dump));
            assert_eq!(root.read("/a/b/../../a/b/up").as_deref(), Some(dump));
            let a = root.dir("/a").unwrap();
            assert_eq!(a.read("abs").as_deref(), Some(dump));
            assert_eq!(a.read("b/up").as_deref(), Some(dump));
            assert_eq!(
                a.read("../sys/devices/system/cpu/online").as_deref(),
                Some(dump)
            );
            let cpu0 = root.dir("/sys/devices/system/cpu/cpu0").unwrap();
            assert_eq!(
                cpu0.read_value("cpufreq/scaling_governor").as_deref(),
                Some("gov")
            );
            assert_eq!(cpu0.read("all/online").as_deref(), Some(dump));
            assert!(cpu0.exists("all/online") && cpu0.exists("cpufreq"));
            assert_eq!(
                root.dir("/a/proc").unwrap().numbered_entries(".", ""),
                vec![7]
            );
            // Outside the dump: nothing there (the FIFO is not opened: a
            // blocking open would hang this test; the type check comes after).
            assert_eq!(root.read("/a/fifo"), None);
            assert_eq!(a.read("fifo"), None);
            assert!(root.open_regular("/a/fifo").is_none());
            assert!(!root.exists("/a/fifo") && !a.exists("fifo"));
            assert!(root.dir("/a/out").is_none() && !root.is_dir("/a/out"));
            assert_eq!(root.names("/a/out"), Vec::<String>::new());
            assert_eq!(root.numbered_entries("/a/out", ""), Vec::<u32>::new());
            assert_eq!(root.read("/a/out/7"), None);
            // Listings through an absolute link list the dump's directory.
            assert_eq!(root.numbered_entries("/a/proc", ""), vec![7]);
            assert_eq!(root.names("/a/proc"), vec!["7", "self"]);
            assert!(root.is_dir("/a/proc") && root.is_dir("/sys"));
            assert_eq!(
                root.read_link("/a/proc/self").as_deref(),
                Some(std::path::Path::new("7"))
            );
            assert_eq!(
                root.read_link("/a/abs").unwrap(),
                PathBuf::from("/sys/devices/system/cpu/online")
            );
            assert_eq!(
                root.resolve("/a/abs").as_deref(),
                Some("/sys/devices/system/cpu/online")
            );
            assert_eq!(
                root.resolve("/sys/devices/system/cpu/cpu0/cpufreq")
                    .as_deref(),
                Some("/sys/devices/system/cpu/cpufreq/policy0")
            );
            assert_eq!(root.resolve("/a/fifo"), None);
            // A loop of links fails both ways; a name with two dots is a name.
            assert_eq!(root.read("/a/loop"), None);
            assert_eq!(a.read("loop"), None);
            assert_eq!(a.read_value("x..y").as_deref(), Some("dots"));
            assert_eq!(root.read_value("/a/./x..y").as_deref(), Some("dots"));
            // A file is no directory: not gone through, nor climbed from.
            assert_eq!(root.read("/sys/devices/system/cpu/online/.."), None);
            assert!(!root.exists("/sys/devices/system/cpu/online/x"));
            assert_eq!(a.read("abs/x"), None);
            assert_eq!(root.read_link("/a/b"), None);
            assert_eq!(root.resolve("/a/b/..").as_deref(), Some("/a"));
        }
    }

    /// The live root still opens by path and follows every link (its
    /// files are the kernel's).
    #[test]
    fn the_live_root_opens_by_path() {
        let live = Root::new("/");
        assert!(live.is_live() && live.anchor().is_none() && !live.check());
        assert!(live.is_dir("/proc/self"));
        assert_eq!(
            live.read_link("/proc/self"),
            Some(PathBuf::from(std::process::id().to_string()))
        );
        let d = live.dir("/proc/self").unwrap();
        assert!(matches!(d.at, At::Live(_)));
        assert!(d.read("status").unwrap().contains("Cpus_allowed_list:"));
    }

    /// The readers of `/proc` that do without a `Root` read at most
    /// `MAX_FILE` bytes, as `Root::read` does: a file one byte larger is
    /// refused with its own error (never parsed cut), one of exactly
    /// `MAX_FILE` bytes is read whole; non-UTF-8 text is refused as
    /// `read_to_string` refuses it; a missing file is `ENOENT`.
    #[test]
    fn bounded_reads_refuse_a_file_over_the_cap_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; MAX_FILE as usize + 1]).unwrap();
        let e = read_bounded(&big).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "larger than 4 MiB");
        assert_eq!(
            read_bounded_bytes(&big).unwrap_err().kind(),
            std::io::ErrorKind::FileTooLarge
        );
        let edge = dir.path().join("edge");
        std::fs::write(&edge, vec![b'x'; MAX_FILE as usize]).unwrap();
        assert_eq!(read_bounded(&edge).unwrap().len(), MAX_FILE as usize);
        let bad = dir.path().join("bad");
        std::fs::write(&bad, b"\xff\xfe").unwrap();
        assert_eq!(
            read_bounded(&bad).unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
        assert_eq!(read_bounded_bytes(&bad).unwrap(), b"\xff\xfe");
        let gone = read_bounded(dir.path().join("gone")).unwrap_err();
        assert_eq!(gone.raw_os_error(), Some(libc::ENOENT));
        // The kernel's own: /proc/self/stat names this process.
        let stat = read_bounded("/proc/self/stat").unwrap();
        assert!(stat.starts_with(&format!("{} (", std::process::id())));
    }
}
