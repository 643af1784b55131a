//! The one place pinrun reads files: every path is taken below a root
//! (`/` on a live system, `--sysroot DIR` for a machine dump), so any dump
//! can be replayed exactly as the live machine would be read.

use crate::cpuset::CpuSet;
use std::path::{Path, PathBuf};

/// The most [`Root::read`] reads of one file (4 MiB); a larger file is an
/// error ([`Root::over_budget`]), never parsed cut. `/proc/interrupts`,
/// which grows with CPUs × IRQs (hundreds of MB on the largest machines),
/// is streamed line by line instead ([`Root::open_regular`]).
pub const MAX_FILE: u64 = 4 << 20;

/// Files that were larger than [`MAX_FILE`] (the first one is kept), shared
/// by a [`Root`] and its [`Dir`]s: the reader turns it into an error
/// ([`Root::over_budget`]) rather than parsing a cut file.
type OverBudget = std::sync::Arc<std::sync::Mutex<Option<String>>>;

/// The size of the first read of a file (one page: every sysfs attribute,
/// and `per_cpu_count` cut at a page, fits in it).
const FIRST_READ: usize = 4096;

thread_local! {
    /// A page-sized buffer for the first read of each file, reused by every
    /// read on this thread (no allocation and no zeroing per file).
    static SCRATCH: std::cell::RefCell<Box<[u8; FIRST_READ]>> =
        std::cell::RefCell::new(Box::new([0; FIRST_READ]));
}

/// A file's bytes as [`read_raw`] hands them over: still in this thread's
/// page when the first read returned the whole file, else read on into a
/// `Vec`.
enum Bytes<'a> {
    /// The whole file, in the reading thread's page.
    Page(&'a [u8]),
    /// The whole file, read on past the first page.
    Owned(Vec<u8>),
}

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
/// The bytes go to `f` (see [`Bytes`]), which runs once when the file was
/// read.
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
/// The first read goes into a page kept per thread (no allocation and no
/// zeroing per file); `f` runs while it is borrowed, so a read that `f`
/// itself made on this thread would use a page of its own.
fn read_raw<R>(
    file: std::fs::File,
    check: bool,
    to_eof: bool,
    over: &OverBudget,
    what: &dyn Fn() -> String,
    f: impl FnOnce(Bytes<'_>) -> R,
) -> Option<R> {
    let out = read_raw_from(&file, check, to_eof, over, what, f);
    crate::ffi::close_nocancel(file.into());
    out
}

/// [`read_raw`] of an open file, which the caller closes. The first read,
/// the one most files need, is a plain `read(2)` without glibc's
/// cancellation wrapper ([`crate::ffi::read_nocancel`]).
fn read_raw_from<R>(
    file: &std::fs::File,
    check: bool,
    to_eof: bool,
    over: &OverBudget,
    what: &dyn Fn() -> String,
    f: impl FnOnce(Bytes<'_>) -> R,
) -> Option<R> {
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
    let mut f = Some(f);
    let mut done = None;
    let mut buf = Vec::new();
    let mut first = |scratch: &mut [u8; FIRST_READ]| -> Option<()> {
        let n = loop {
            match crate::ffi::read_nocancel(file.as_fd(), &mut scratch[..]) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                r => break r.ok()?,
            }
        };
        if n < FIRST_READ && size == Some(n) {
            done = f.take().map(|f| f(Bytes::Page(&scratch[..n])));
        } else {
            buf.extend_from_slice(&scratch[..n]);
        }
        Some(())
    };
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => first(&mut scratch),
        Err(_) => first(&mut Box::new([0; FIRST_READ])),
    })?;
    if done.is_some() {
        return done;
    }
    let left = (MAX_FILE + 1).saturating_sub(buf.len() as u64);
    file.take(left).read_to_end(&mut buf).ok()?;
    if buf.len() as u64 > MAX_FILE {
        if let Ok(mut o) = over.lock() {
            o.get_or_insert_with(what);
        }
        return None;
    }
    f.take().map(|f| f(Bytes::Owned(buf)))
}

/// [`read_raw`] into a `String`: valid UTF-8 is taken as it is (read on
/// past the first page: no second pass, no copy), anything else gets
/// U+FFFD.
fn read_open(
    file: std::fs::File,
    check: bool,
    to_eof: bool,
    over: &OverBudget,
    what: &dyn Fn() -> String,
) -> Option<String> {
    read_raw(file, check, to_eof, over, what, |bytes| match bytes {
        Bytes::Page(b) => text_of(b).into_owned(),
        Bytes::Owned(v) => {
            String::from_utf8(v).unwrap_or_else(|e| text_of(e.as_bytes()).into_owned())
        }
    })
}

/// A directory below a [`Root`] (see [`Root::dir`]): its files are opened
/// with `openat(2)` relative to it, read as [`Root::read`] reads them.
#[derive(Debug)]
pub struct Dir {
    fd: std::os::fd::OwnedFd,
    /// Whether file types are checked (see [`Root::new`]).
    check: bool,
    /// Whether every file is read to end of file ([`Root::reading_to_eof`]).
    to_eof: bool,
    /// Its absolute path, kept only while `--dump` records reads.
    rec: Option<String>,
    /// The directory's path below the root, for [`Root::over_budget`].
    abs: String,
    over: OverBudget,
}

impl Dir {
    /// The text of the file `rel` (a path relative to this directory),
    /// like [`Root::read`].
    pub fn read(&self, rel: &str) -> Option<String> {
        read_open(
            self.open(rel)?,
            self.check,
            self.to_eof,
            &self.over,
            &|| format!("{}/{rel}", self.abs),
        )
    }

    /// `f` of the text of the file `rel`, read as [`Dir::read`] reads it
    /// (the same text, the same bounds) but, for a file that one read
    /// returns whole, without a `String` made for it: for the many small
    /// per-IRQ files, parsed where they were read (issue 17). `None` when
    /// the file cannot be read, as [`Dir::read`].
    pub fn read_with<R>(&self, rel: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        read_raw(
            self.open(rel)?,
            self.check,
            self.to_eof,
            &self.over,
            &|| format!("{}/{rel}", self.abs),
            |bytes| match bytes {
                Bytes::Page(b) => f(&text_of(b)),
                Bytes::Owned(v) => f(&text_of(&v)),
            },
        )
    }

    /// The file `rel` opened for reading (non-blocking, close-on-exec),
    /// noted when `--dump` records reads.
    fn open(&self, rel: &str) -> Option<std::fs::File> {
        use std::os::fd::AsFd;
        if let Some(dir) = &self.rec {
            super::dump::note(&format!("{dir}/{rel}"));
        }
        let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
        let fd = crate::ffi::openat_nocancel(self.fd.as_fd(), rel, flags).ok()?;
        Some(std::fs::File::from(fd))
    }

    /// Like [`Root::read_value`], relative to this directory.
    pub fn read_value(&self, rel: &str) -> Option<String> {
        self.read_with(rel, first_line)
    }

    /// Like [`Root::numbered_entries`], for the directory `rel` relative
    /// to this one (one `openat(2)` from here, then `getdents64(2)`);
    /// empty when it cannot be read.
    pub fn numbered_entries(&self, rel: &str, prefix: &str) -> Vec<u32> {
        use nix::fcntl::{OFlag, openat};
        if let Some(dir) = &self.rec {
            super::dump::note_list(&format!("{dir}/{rel}"), prefix);
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let Ok(fd) = openat(&self.fd, rel, flags, nix::sys::stat::Mode::empty()) else {
            return Vec::new();
        };
        let Ok(mut dir) = nix::dir::Dir::from_fd(fd) else {
            return Vec::new();
        };
        numbered(dir.iter().map_while(Result::ok), prefix, u32::MAX).0
    }

    /// Whether `rel` (relative to this directory) exists.
    pub fn exists(&self, rel: &str) -> bool {
        nix::sys::stat::fstatat(&self.fd, rel, nix::fcntl::AtFlags::empty()).is_ok()
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
/// The entries are `getdents64(2)` records read in place (`nix::dir`): no
/// allocation per entry, unlike `std::fs::read_dir` (a `CString` each),
/// which a listing of `/proc/irq` with 10 000 IRQs notices (issue 17).
/// Callers pass the entries up to the first error (`map_while`): `nix`'s
/// iterator repeats a failing `getdents64` forever, where `std`'s ends
/// the listing after it.
fn numbered(
    entries: impl Iterator<Item = nix::dir::Entry>,
    prefix: &str,
    bound: u32,
) -> (Vec<u32>, Vec<u64>) {
    let mut far: Vec<u64> = Vec::new();
    let mut ids: Vec<u32> = entries
        .filter_map(|entry| {
            // Bytes throughout (a name of ASCII digits after a `&str`
            // prefix is UTF-8), the prefix compared only when there is one:
            // `/proc/irq` and `/sys/kernel/irq` list 10 000 names.
            let name = entry.file_name().to_bytes();
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

/// A file-system root under which absolute sysfs/procfs/cgroupfs paths are
/// resolved. `Root::new("/")` reads the live machine.
#[derive(Debug, Clone)]
pub struct Root {
    base: PathBuf,
    /// Whether file types are checked: below a `--sysroot` dump, not on `/`.
    check: bool,
    /// Whether every file is read to end of file ([`Root::reading_to_eof`]).
    to_eof: bool,
    over: OverBudget,
}

impl Root {
    /// The root of a machine: `dir` must exist and hold
    /// `sys/devices/system/cpu` (`/` always does; a `--sysroot` directory
    /// or unpacked archive may not). Errors: `sysroot-missing`, naming the
    /// path, with a hint.
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
        if !root.exists("/sys/devices/system/cpu") {
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
    pub fn new(base: impl Into<PathBuf>) -> Self {
        let base = base.into();
        let check = base != Path::new("/");
        Self {
            base,
            check,
            to_eof: false,
            over: OverBudget::default(),
        }
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

    /// The directory this root reads from.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// `abs` (an absolute path such as `/sys/devices/system/cpu/online`)
    /// resolved below the root.
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
    pub fn read(&self, abs: &str) -> Option<String> {
        use std::os::unix::fs::OpenOptionsExt;
        super::dump::note(abs);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.path(abs))
            .ok()?;
        read_open(file, self.check, self.to_eof, &self.over, &|| {
            abs.to_string()
        })
    }

    /// The file `abs` opened for reading when it is a regular file (as
    /// [`Root::read`] opens it: non-blocking, its type checked on the
    /// descriptor), for a caller that streams it without the [`MAX_FILE`]
    /// cap; `None` when it is missing, unreadable or not a regular file.
    pub fn open_regular(&self, abs: &str) -> Option<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        super::dump::note(abs);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.path(abs))
            .ok()?;
        file.metadata().ok()?.is_file().then_some(file)
    }

    /// The directory `abs`, opened once so that the files below it are
    /// opened relative to it (a short path walk each, instead of the
    /// whole path from `/`); `None` when it cannot be opened.
    pub fn dir(&self, abs: &str) -> Option<Dir> {
        use nix::fcntl::{OFlag, open};
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        super::dump::note(abs);
        let fd = open(&self.path(abs), flags, nix::sys::stat::Mode::empty()).ok()?;
        Some(Dir {
            fd,
            check: self.check,
            to_eof: self.to_eof,
            rec: super::dump::recording().then(|| abs.trim_end_matches('/').to_string()),
            abs: abs.trim_end_matches('/').to_string(),
            over: self.over.clone(),
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
        use nix::fcntl::OFlag;
        super::dump::note_list(abs, prefix);
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        match nix::dir::Dir::open(&self.path(abs), flags, nix::sys::stat::Mode::empty()) {
            Ok(mut dir) => numbered(dir.iter().map_while(Result::ok), prefix, bound),
            Err(_) => (Vec::new(), Vec::new()),
        }
    }

    /// Whether the path exists below the root.
    pub fn exists(&self, abs: &str) -> bool {
        super::dump::note(abs);
        self.path(abs).exists()
    }

    /// `abs` with every symbolic link resolved (`realpath(3)`), as an
    /// absolute path below the root: `/sys/class/net/eth0` →
    /// `/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0`. `None`
    /// when it does not exist or resolves outside the root (a dump's link
    /// that escapes it).
    pub fn resolve(&self, abs: &str) -> Option<String> {
        super::dump::note(abs);
        let base = self.base.canonicalize().ok()?;
        let real = self.path(abs).canonicalize().ok()?;
        let rel = real.strip_prefix(&base).ok()?;
        Some(format!("/{}", rel.to_str()?))
    }

    /// The names in the directory `abs`, sorted; empty when it cannot be
    /// read.
    pub fn names(&self, abs: &str) -> Vec<String> {
        super::dump::note_list(abs, "");
        let mut v: Vec<String> = std::fs::read_dir(self.path(abs))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(String::from))
            .collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file larger than MAX_FILE reads as missing and is reported by
    /// `over_budget` (through a `Dir` too), never parsed cut.
    #[test]
    fn files_beyond_the_budget_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("d")).unwrap();
        std::fs::write(p.join("d/big"), vec![b'1'; MAX_FILE as usize + 1]).unwrap();
        std::fs::write(p.join("d/max"), vec![b'1'; MAX_FILE as usize]).unwrap();
        let root = Root::new(p);
        assert_eq!(
            root.read("/d/max").map(|t| t.len()),
            Some(MAX_FILE as usize)
        );
        assert_eq!(root.over_budget(), None);
        assert_eq!(root.dir("/d").unwrap().read("big"), None);
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
    /// read to end of file, through a `Dir` too; and kernel files linked
    /// into a dump, whose `st_size` is not their length (procfs 0, sysfs
    /// 4096), are still read whole, a seq file that returns short reads
    /// before its end too.
    #[test]
    fn dump_files_end_at_their_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let sizes = SIZES_AROUND_A_PAGE;
        write_sized(p, b"0123456789");
        std::os::unix::fs::symlink("/proc/self/status", p.join("status")).unwrap();
        std::os::unix::fs::symlink("/sys/devices/system/cpu/online", p.join("online")).unwrap();
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
        let status = root.read("/status").unwrap();
        assert!(status.ends_with('\n') && status.contains("Cpus_allowed_list:"));
        assert!(status.len() > 100, "{status}");
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        assert_eq!(d.read("online"), Some(online));
        // A seq file longer than a page (`/proc/self/smaps` of this test
        // process) returns whole records, fewer bytes than asked, before
        // its end: the text goes on past the first read.
        std::os::unix::fs::symlink("/proc/self/smaps", p.join("smaps")).unwrap();
        let live = std::fs::read_to_string("/proc/self/smaps").unwrap();
        assert!(live.len() > 2 * FIRST_READ, "{}", live.len());
        let maps = d.read("smaps").unwrap();
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
    /// file linked into the dump (read to its end), a read made from
    /// inside `f` (its own page: the outer text is intact), a FIFO and a
    /// file past the budget (`None`, the latter recorded).
    #[test]
    fn read_with_sees_what_read_returns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let sizes = SIZES_AROUND_A_PAGE;
        write_sized(p, b"abcdefghijklmnopqrstuvwxyz");
        std::fs::write(p.join("bad"), b"0-3\xff\xfe,7\n").unwrap();
        std::os::unix::fs::symlink("/proc/self/smaps", p.join("smaps")).unwrap();
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
        let maps = d.read_with("smaps", str::to_string).unwrap();
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
        assert!(root.check);
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
        assert!(!live.check);
        assert!(
            live.read("/proc/self/status")
                .unwrap()
                .contains("Cpus_allowed_list:")
        );
    }
}
