//! `pinrun --dump FILE.tar.gz`: the machine as pinrun reads it, in one
//! archive that `--sysroot FILE.tar.gz` replays (issue 12).
//!
//! What goes in is not a list kept by hand: while the dump reads the
//! machine, [`Root`] notes every path it is asked for ([`note`],
//! [`note_list`]), and exactly those paths are archived: the files that
//! exist and are readable, byte for byte; the directories on the way; and
//! the symbolic links on the way as links (`cpu0/cpufreq ->
//! ../cpufreq/policy0`, `/proc/self -> PID`), so that a replay walks the
//! same links. The read is [`read_everything`]: what `--show` reads, plus
//! what `--check`/`--dry-run` read for any request on every CPU (idle
//! states, governors and IRQ details of every CPU, the real-time tasks,
//! kubelet's CPU manager state).
//!
//! Live data in the dump (see DUMPS in pinrun(1)): `/proc/self` is the
//! dumping pinrun (its `status`, `stat`, `cgroup`, `limits`: the caller's
//! cgroup, allowed CPUs, capabilities and RT limit, as a launch from the
//! same shell would see them); of the other processes only the `stat` and
//! `status` of the real-time and pinned user-space threads (what the
//! `rt-competitor` check and who runs where need, [`keeps`]) and the `comm`
//! of `kthreadd` and the RCU offload kthreads;
//! `meminfo` and IRQ counts as they were at that moment. Claims in the
//! state directory (`/run/pinrun`) are not part of the machine and are not
//! dumped (below `--sysroot` they are never read).

use super::Root;
use super::root::Kind;
use super::rt_tasks::RtTask;
use crate::error::{Error, ErrorCode, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The largest file a dump stores (and [`super::archive`] unpacks): 64 MiB
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

/// One path [`Root`] was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Noted {
    /// A file, directory or link opened, read or tested.
    Path(String),
    /// A directory listed for entries named `<prefix>N`.
    List(String, String),
}

/// What a recording [`Root`] ([`Root::recording`]) was asked for, in
/// order: the recording backend of `--dump`, held by the root and the
/// directories opened from it (no global state: a root that does not
/// record has none and pays nothing).
#[derive(Debug, Default)]
pub struct Recorder(Mutex<Vec<Noted>>);

impl Recorder {
    /// Notes that `abs` was opened, read or tested.
    pub fn note(&self, abs: &str) {
        self.push(Noted::Path(abs.to_string()));
    }

    /// Notes that `abs` was listed for entries named `<prefix>N`.
    pub fn note_list(&self, abs: &str, prefix: &str) {
        self.push(Noted::List(abs.to_string(), prefix.to_string()));
    }

    fn push(&self, n: Noted) {
        if let Ok(mut v) = self.0.lock() {
            v.push(n);
        }
    }

    fn take(&self) -> Vec<Noted> {
        self.0
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }
}

/// Reads everything any mode of pinrun can read below `root`: the full
/// [`super::SystemState::read`] (`--show`), then the extras of every CPU
/// with info findings and real-time tasks (`--check`/`--dry-run` with
/// `-v`, `--fifo`, on any CPUs), and kubelet's claims. A scoped read
/// ([`super::Scope::for_request`]) reads a subset of these files.
///
/// Returns the threads whose `stat` and `status` the dump keeps: the
/// real-time and pinned user-space ones (who runs where,
/// [`super::rt_tasks::read_placed_tasks`], which holds every real-time
/// competitor too).
pub fn read_everything(root: &Root) -> Vec<RtTask> {
    let _ = root.exists("/sys/devices/system/cpu");
    let mut sys = super::SystemState::read(root);
    let every: crate::cpuset::CpuSet = sys.cpus.keys().copied().collect();
    let live = root.base() == Path::new("/");
    sys.read_extras(
        root,
        &every,
        true,
        Some(super::rt_tasks::RtScan::Here(live.then(std::process::id))),
    );
    let _ = super::kubelet::read_state(root, &sys.possible);
    super::rt_tasks::read_placed_tasks(root, &sys.online)
}

/// Whether the dump keeps the noted path `abs`: of the per-process files
/// below `/proc/PID` only the `stat` and `status` of the `kept` threads
/// (`/proc/PID/task/TID/…`, or `/proc/PID/…` of a main thread read
/// without its `task` directory) and the `comm` that
/// [`super::rt_tasks::read_nocb_kthreads`] counts (`kthreadd`, `rcuo*/N`,
/// read again from `base`): the scans read every process's `stat` or
/// `comm`, the dump holds no other process's name. Other paths are kept.
fn keeps(root: &Root, abs: &str, kept: &[RtTask]) -> bool {
    let parts: Vec<&str> = abs.split('/').filter(|c| !c.is_empty()).collect();
    let Some(pid) = (parts.first() == Some(&"proc"))
        .then(|| parts.get(1)?.parse::<u32>().ok())
        .flatten()
    else {
        return true;
    };
    let has = |tid: u32| kept.iter().any(|t| t.pid == pid && t.tid == tid);
    match parts[2..] {
        ["comm"] => {
            use std::io::Read;
            let mut c = String::new();
            root.open_file_unnoted(abs)
                .is_some_and(|mut f| f.read_to_string(&mut c).is_ok())
                && super::rt_tasks::nocb_scan_reads(pid, c.trim_end())
        }
        ["stat" | "status"] => has(pid),
        ["task", tid, "stat" | "status"] => tid.parse().is_ok_and(has),
        _ => true,
    }
}

/// Runs [`read_everything`] through a recording copy of `root`; returns
/// what was noted that the dump [`keeps`].
fn record(root: &Root) -> Vec<Noted> {
    let recorder = std::sync::Arc::new(Recorder::default());
    let kept = read_everything(&root.recording(recorder.clone()));
    let mut noted = recorder.take();
    noted.retain(|n| match n {
        Noted::Path(p) => keeps(root, p, &kept),
        Noted::List(..) => true,
    });
    noted
}

/// One archive entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory.
    Dir,
    /// A regular file's bytes.
    File(Vec<u8>),
    /// A symbolic link and its (relative) target.
    Link(String),
}

/// The archive's contents: relative paths (no leading `/`) to entries,
/// in path order (a directory before what it holds).
pub type Tree = BTreeMap<String, Entry>;

/// An error of `--dump FILE`.
fn dump_error(file: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::DumpFailed,
        format!("--dump {}: {why}", file.display()),
    )
}

/// What [`collect`] found: the tree, and the first file too large to store.
struct Collector<'a> {
    /// The root read (its files are opened through it: inside a dump).
    root: &'a Root,
    tree: Tree,
    bytes: u64,
    too_large: Option<(String, u64)>,
}

impl Collector<'_> {
    /// Adds `rel`'s ancestors as directories.
    fn add_dirs(&mut self, parts: &[String]) {
        for i in 1..=parts.len() {
            self.tree.entry(parts[..i].join("/")).or_insert(Entry::Dir);
        }
    }

    /// Adds the path `abs` as pinrun resolves it below the base: every
    /// directory on the way, every link on the way (and its target), and
    /// the file or directory at the end. Missing or unreadable paths add
    /// only what exists on the way; a link leaving the base is not followed.
    fn add(&mut self, abs: &str) {
        let mut rest = components_to_walk(abs);
        let mut cur: Vec<String> = Vec::new();
        let mut links = 0;
        while let Some(comp) = rest.pop() {
            if comp == ".." {
                // At the top it stays there (the in-root resolution).
                cur.pop();
                continue;
            }
            cur.push(comp);
            let rel = cur.join("/");
            let Some(kind) = self.root.entry_unnoted(&format!("/{rel}")) else {
                return;
            };
            if let Kind::Link(target) = kind {
                links += 1;
                if links > MAX_LINKS {
                    return;
                }
                cur.pop();
                // An absolute target is taken below the base (on the live
                // machine, the base is `/`), stored as the relative link
                // that reaches the same place.
                let up = "../".repeat(cur.len());
                let lexical = match target.strip_prefix('/') {
                    Some(t) => (format!("{up}{t}"), Some(t.to_string())),
                    None => (target.clone(), None),
                };
                // The unpacker accepts only links that stay inside the tree
                // lexically from their directory. One it would refuse but
                // pinrun reads (climbing past the top, where the in-root
                // resolution stays at it; a `..` after a name) is stored
                // as the link from the top to where it resolves here.
                let (stored, from_top) = if stays_inside(cur.len(), &lexical.0) {
                    lexical
                } else {
                    let Some(to) = self.resolve_link(&cur, &target) else {
                        return;
                    };
                    let to = to.join("/");
                    (format!("{up}{to}"), Some(to))
                };
                self.add_dirs(&cur);
                self.tree.insert(rel, Entry::Link(stored));
                let t = match from_top {
                    Some(t) => {
                        cur.clear();
                        t
                    }
                    None => target,
                };
                rest.extend(components_to_walk(&t));
                continue;
            }
            if kind == Kind::Other {
                return;
            }
            if !rest.is_empty() {
                if kind != Kind::Dir {
                    return;
                }
                continue;
            }
            if kind == Kind::Dir {
                self.add_dirs(&cur);
            } else if let Some(bytes) = self.read_file(&rel) {
                self.add_dirs(&cur[..cur.len() - 1]);
                if !self.tree.contains_key(&rel) {
                    self.bytes += bytes.len() as u64;
                }
                self.tree.insert(rel, Entry::File(bytes));
            }
        }
    }

    /// Where the link `target`, in the directory `dir` (components below
    /// the base), resolves below the base as the kernel resolves it inside
    /// a dump (`RESOLVE_IN_ROOT`): an absolute target from the top, `..`
    /// at the top staying there, every link on the way followed (at most
    /// [`MAX_LINKS`]). The components of a path holding no link; `None`
    /// when a component before the last is missing or not a directory
    /// (the read fails there: nothing to store), or on too many links.
    fn resolve_link(&self, dir: &[String], target: &str) -> Option<Vec<String>> {
        let mut cur: Vec<String> = if target.starts_with('/') {
            Vec::new()
        } else {
            dir.to_vec()
        };
        let mut rest = components_to_walk(target);
        let mut links = 0;
        while let Some(comp) = rest.pop() {
            if comp == ".." {
                cur.pop();
                continue;
            }
            cur.push(comp);
            let Some(kind) = self.root.entry_unnoted(&format!("/{}", cur.join("/"))) else {
                // A missing last component: the link names it (read as
                // missing, as pinrun's read).
                return rest.is_empty().then_some(cur);
            };
            if let Kind::Link(t) = kind {
                links += 1;
                if links > MAX_LINKS {
                    return None;
                }
                cur.pop();
                if t.starts_with('/') {
                    cur.clear();
                }
                rest.extend(components_to_walk(&t));
            } else if !rest.is_empty() && kind != Kind::Dir {
                return None;
            }
        }
        Some(cur)
    }

    /// The bytes of the regular file `rel` (opened through the root, so
    /// inside a dump, non-blocking, its type checked on the descriptor),
    /// at most [`MAX_ENTRY_BYTES`]; `None` when unreadable (as pinrun's
    /// own read would fail) or larger (noted).
    fn read_file(&mut self, rel: &str) -> Option<Vec<u8>> {
        use std::io::Read;
        let file = self.root.open_file_unnoted(&format!("/{rel}"))?;
        let mut buf = Vec::new();
        file.take(MAX_ENTRY_BYTES + 1).read_to_end(&mut buf).ok()?;
        if buf.len() as u64 > MAX_ENTRY_BYTES {
            self.too_large
                .get_or_insert((rel.to_string(), buf.len() as u64));
            return None;
        }
        Some(buf)
    }

    /// Adds the entries of `abs` named `<prefix>N` (each as a directory
    /// or link only: their files are added as they are read). Not for the
    /// process list of `/proc` nor a process's thread list
    /// (`/proc/PID/task`): only the processes and threads kept are dumped.
    fn add_list(&mut self, abs: &str, prefix: &str) {
        let trimmed = abs.trim_matches('/');
        let threads = trimmed
            .strip_prefix("proc/")
            .and_then(|r| r.strip_suffix("/task"))
            .is_some_and(|pid| pid.bytes().all(|b| b.is_ascii_digit()));
        if (trimmed == "proc" || threads) && prefix.is_empty() {
            return;
        }
        let Some(names) = self.root.list_unnoted(&format!("/{trimmed}")) else {
            return;
        };
        let mut names: Vec<String> = names
            .into_iter()
            .filter(|n| {
                n.strip_prefix(prefix)
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect();
        names.sort();
        for n in names {
            self.add(&format!("/{trimmed}/{n}"));
        }
    }
}

/// The components of `path` (empty ones and `.` left out) in reverse
/// order: a stack whose top is the first component, as the walks of
/// [`Collector::add`] and [`Collector::resolve_link`] pop them (a link's
/// target is pushed onto the rest the same way).
fn components_to_walk(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .rev()
        .map(str::to_string)
        .collect()
}

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

/// What `--dump` reads below `root` and stores: the recorded paths, with
/// their directories and links. Errors when a file exceeds
/// [`MAX_ENTRY_BYTES`] or the whole [`MAX_TOTAL_BYTES`]/[`MAX_ENTRIES`]
/// (which `--sysroot` would refuse to unpack).
pub fn collect(root: &Root, file: &Path) -> Result<Tree> {
    let noted = record(root);
    let mut c = Collector {
        root,
        tree: Tree::new(),
        bytes: 0,
        too_large: None,
    };
    for n in &noted {
        match n {
            Noted::Path(p) => c.add(p),
            Noted::List(p, prefix) => c.add_list(p, prefix),
        }
    }
    // A file that could not be opened for want of a resource (EMFILE
    // under a small `ulimit -n`), or refused below a dump, is not in the
    // tree: the archive would replay as a machine without it.
    if let Some(e) = root.starved_error().or_else(|| root.unreadable_error()) {
        return Err(e);
    }
    if let Some((rel, len)) = c.too_large {
        return Err(dump_error(
            file,
            format!(
                "/{rel} is larger than {} MiB ({len} bytes or more)",
                MAX_ENTRY_BYTES >> 20
            ),
        )
        .hint("a dump stores files of up to 64 MiB; report the machine's size with the bug"));
    }
    if c.bytes > MAX_TOTAL_BYTES || c.tree.len() as u64 > MAX_ENTRIES {
        return Err(dump_error(
            file,
            format!(
                "{} entries, {} bytes: more than a dump may hold ({MAX_ENTRIES} entries, {} MiB)",
                c.tree.len(),
                c.bytes,
                MAX_TOTAL_BYTES >> 20
            ),
        ));
    }
    Ok(c.tree)
}

/// Writes `tree` as a gzip-compressed tar archive to `out` (plain `ustar`
/// and GNU long names; owner root, mode 0644/0755, time 0: the same
/// machine gives the same bytes).
pub fn write_tar_gz(tree: &Tree, out: impl std::io::Write) -> std::io::Result<()> {
    let gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    let mut b = tar::Builder::new(gz);
    b.mode(tar::HeaderMode::Deterministic);
    for (path, entry) in tree {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        match entry {
            Entry::Dir => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                b.append_data(&mut h, format!("{path}/"), std::io::empty())?;
            }
            Entry::File(bytes) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(0o644);
                h.set_size(bytes.len() as u64);
                b.append_data(&mut h, path, bytes.as_slice())?;
            }
            Entry::Link(target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_size(0);
                b.append_link(&mut h, path, target)?;
            }
        }
    }
    b.into_inner()?.finish()?.flush()
}

/// `pinrun --dump FILE [--sysroot DIR|ARCHIVE]`: records what pinrun reads
/// of the machine below `root` and writes it to `file` as a `.tar.gz`,
/// through a temporary file in the same directory renamed into place only
/// when complete; an existing `file` is never replaced (refused, exit 125).
/// Prints `pinrun: dumped N files, M directories, L links (B bytes) to
/// FILE` on stderr; returns that line.
pub fn dump(root: &Root, file: &Path) -> Result<String> {
    if std::fs::symlink_metadata(file).is_ok() {
        return Err(dump_error(file, "exists; a dump never replaces a file")
            .hint("remove it or name another file"));
    }
    // The archive is a tar.gz: a name that says otherwise would mislead
    // whoever gets it (and `--sysroot` recognises the bytes, not the name).
    let name = file.to_string_lossy();
    if !(name.ends_with(".tar.gz") || name.ends_with(".tgz")) {
        return Err(dump_error(file, "a dump is a gzip-compressed tar archive")
            .hint("name it FILE.tar.gz (or .tgz)"));
    }
    let tree = collect(root, file)?;
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".pinrun-dump-")
        .tempfile_in(&parent)
        .map_err(|e| {
            // tempfile's message adds the temporary name, which the user
            // never chose: the error's kind alone.
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "no such directory".to_string(),
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                kind => kind.to_string(),
            };
            dump_error(
                file,
                format!("cannot create a file in {}: {why}", parent.display()),
            )
            .hint(if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "name a FILE in an existing directory you can write (mkdir -p {} first, or --dump /tmp/machine.tar.gz)",
                    parent.display()
                )
            } else {
                "name a FILE in a directory you can write (e.g. --dump /tmp/machine.tar.gz)".to_string()
            })
        })?;
    let mut w = std::io::BufWriter::new(tmp.as_file());
    write_tar_gz(&tree, &mut w)
        .and_then(|()| std::io::Write::flush(&mut w))
        .map_err(|e| dump_error(file, format!("writing: {}", crate::error::io_words(&e))))?;
    drop(w);
    tmp.as_file()
        .sync_all()
        .map_err(|e| dump_error(file, format!("writing: {}", crate::error::io_words(&e))))?;
    // Readable by others: the dump is meant to be sent.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist_noclobber(file).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            dump_error(file, "exists; a dump never replaces a file")
                .hint("remove it or name another file")
        } else {
            dump_error(file, e.error)
        }
    })?;
    let (mut files, mut dirs, mut links, mut bytes) = (0usize, 0usize, 0usize, 0u64);
    for e in tree.values() {
        match e {
            Entry::Dir => dirs += 1,
            Entry::File(b) => {
                files += 1;
                bytes += b.len() as u64;
            }
            Entry::Link(_) => links += 1,
        }
    }
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    Ok(format!(
        "pinrun: dumped {}, {}, {} ({}) to {}\n",
        n(files, "file", "files"),
        n(dirs, "directory", "directories"),
        n(links, "link", "links"),
        n(
            usize::try_from(bytes).unwrap_or(usize::MAX),
            "byte",
            "bytes"
        ),
        file.display()
    ))
}

/// `pinrun --dump FILE [--sysroot DIR|ARCHIVE]`: [`dump`] of the live
/// machine, or of a dump (a directory or an archive: converts it), with
/// the summary line on stderr.
pub fn run(file: &Path, sysroot: Option<&Path>) -> Result<()> {
    let root = Root::sysroot(sysroot)?;
    let line = dump(&root, file)?;
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    Ok(())
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

    /// Only what is read is collected: a read file with its directories, a
    /// link on the way as a link and its target, a listed directory's
    /// numbered entries; an unread file and a missing one are left out.
    #[test]
    fn collects_what_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let w = |rel: &str, t: &str| {
            let f = p.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        };
        w(
            "sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "performance\n",
        );
        w("sys/devices/system/cpu/cpu0/online", "1\n");
        w("sys/devices/system/cpu/cpu0/unread", "x\n");
        std::os::unix::fs::symlink(
            "../cpufreq/policy0",
            p.join("sys/devices/system/cpu/cpu0/cpufreq"),
        )
        .unwrap();
        let root = Root::new(p);
        let mut c = Collector {
            root: &root,
            tree: Tree::new(),
            bytes: 0,
            too_large: None,
        };
        c.add("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
        c.add("/sys/devices/system/cpu/cpu0/absent");
        c.add_list("/sys/devices/system/cpu", "cpu");
        let got: Vec<(&str, &Entry)> = c.tree.iter().map(|(k, v)| (k.as_str(), v)).collect();
        assert_eq!(
            got,
            vec![
                ("sys", &Entry::Dir),
                ("sys/devices", &Entry::Dir),
                ("sys/devices/system", &Entry::Dir),
                ("sys/devices/system/cpu", &Entry::Dir),
                ("sys/devices/system/cpu/cpu0", &Entry::Dir),
                (
                    "sys/devices/system/cpu/cpu0/cpufreq",
                    &Entry::Link("../cpufreq/policy0".into())
                ),
                ("sys/devices/system/cpu/cpufreq", &Entry::Dir),
                ("sys/devices/system/cpu/cpufreq/policy0", &Entry::Dir),
                (
                    "sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
                    &Entry::File(b"performance\n".to_vec())
                ),
            ]
        );
        assert_eq!(c.bytes, 12);
    }
}
