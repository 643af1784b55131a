//! The dump wing's read layer: what `--dump` records of the machine
//! ([`Recorder`], the recording backend of [`Root`]) and collects from it
//! ([`collect`]).

use super::{Entry, Tree, dump_error};
use crate::error::Result;
use crate::system::Root;
use crate::system::archive::{
    MAX_ENTRIES, MAX_ENTRY_BYTES, MAX_LINKS, MAX_TOTAL_BYTES, stays_inside,
};
use crate::system::root::Kind;
use crate::system::rt_tasks::RtTask;
use std::path::Path;
use std::sync::Mutex;

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

impl crate::system::root::Recorder for Recorder {
    fn note(&self, abs: &str) {
        self.push(Noted::Path(abs.to_string()));
    }

    fn note_list(&self, abs: &str, prefix: &str) {
        self.push(Noted::List(abs.to_string(), prefix.to_string()));
    }
}

impl Recorder {
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
/// [`crate::system::SystemState::read`] (`--show`), then the extras of every CPU
/// with info findings and real-time tasks (`--check`/`--dry-run` with
/// `-v`, `--fifo`, on any CPUs), and kubelet's claims. A scoped read
/// ([`crate::system::Scope::for_request`]) reads a subset of these files.
///
/// Returns the threads whose `stat` and `status` the dump keeps: the
/// real-time and pinned user-space ones (who runs where,
/// [`crate::system::rt_tasks::read_placed_tasks`], which holds every real-time
/// competitor too).
pub fn read_everything(root: &Root) -> Vec<RtTask> {
    let _ = root.exists("/sys/devices/system/cpu");
    let mut sys = crate::system::SystemState::read(root);
    let every: crate::cpuset::CpuSet = sys.cpus.keys().copied().collect();
    let live = root.base() == Path::new("/");
    sys.read_extras(
        root,
        &every,
        true,
        Some(crate::system::rt_tasks::RtScan::Here(
            live.then(std::process::id),
        )),
    );
    let _ = crate::system::kubelet::read_state(root, &sys.possible);
    crate::system::rt_tasks::read_placed_tasks(root, &sys.online)
}

/// Whether the dump keeps the noted path `abs`: of the per-process files
/// below `/proc/PID` only the `stat` and `status` of the `kept` threads
/// (`/proc/PID/task/TID/…`, or `/proc/PID/…` of a main thread read
/// without its `task` directory) and the `comm` that
/// [`crate::system::rt_tasks::read_nocb_kthreads`] counts (`kthreadd`, `rcuo*/N`,
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
            // A comm is at most TASK_COMM_LEN (16) bytes; a dump's file
            // may be anything: read a page at most.
            root.open_file_unnoted(abs)
                .is_some_and(|f| f.take(4096).read_to_string(&mut c).is_ok())
                && crate::system::rt_tasks::nocb_scan_reads(pid, c.trim_end())
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
        let root = self.root;
        let mut links = Vec::new();
        let end = walk(root, Vec::new(), abs, |dir, name, target| {
            // An absolute target is taken below the base (on the live
            // machine, the base is `/`), stored as the relative link
            // that reaches the same place.
            let up = "../".repeat(dir.len());
            let lexical = match target.strip_prefix('/') {
                Some(t) => (format!("{up}{t}"), Some(t.to_string())),
                None => (target.to_string(), None),
            };
            // The unpacker accepts only links that stay inside the tree
            // lexically from their directory. One it would refuse but
            // pinrun reads (climbing past the top, where the in-root
            // resolution stays at it; a `..` after a name) is stored
            // as the link from the top to where it resolves here.
            let (stored, from_top) = if stays_inside(dir.len(), &lexical.0) {
                lexical
            } else {
                let to = walk(root, dir.to_vec(), target, |_, _, t| Some(t.to_string()))?
                    .0
                    .join("/");
                (format!("{up}{to}"), Some(to))
            };
            links.push((dir.to_vec(), name.to_string(), stored));
            Some(from_top.map_or_else(|| target.to_string(), |t| format!("/{t}")))
        });
        for (dir, name, stored) in links {
            self.add_dirs(&dir);
            let rel = dir.iter().chain([&name]).cloned().collect::<Vec<_>>();
            self.tree.insert(rel.join("/"), Entry::Link(stored));
        }
        let Some((cur, Some(kind))) = end else {
            return;
        };
        let rel = cur.join("/");
        if kind == Kind::Dir {
            self.add_dirs(&cur);
        } else if kind == Kind::File
            && let Some(bytes) = self.read_file(&rel)
        {
            self.add_dirs(&cur[..cur.len() - 1]);
            if !self.tree.contains_key(&rel) {
                self.bytes += bytes.len() as u64;
            }
            self.tree.insert(rel, Entry::File(bytes));
        }
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

/// Walks `path` from the directory `cur` (components below the base) as
/// the kernel resolves it inside a dump (`RESOLVE_IN_ROOT`): `..` at the
/// top stays there, at most [`MAX_LINKS`] links, each given to `at_link`
/// with its directory, its name and its target, which returns the path to
/// walk on from that directory (an absolute one from the top), or `None`
/// to stop. The components reached, with the kind of the last (`None`:
/// missing, or the path ended on `..`); `None` when a component before
/// the last is missing or not a directory, on too many links, or when
/// `at_link` stopped.
fn walk(
    root: &Root,
    mut cur: Vec<String>,
    path: &str,
    mut at_link: impl FnMut(&[String], &str, &str) -> Option<String>,
) -> Option<(Vec<String>, Option<Kind>)> {
    let mut rest = components_to_walk(path);
    let mut links = 0;
    while let Some(comp) = rest.pop() {
        if comp == ".." {
            cur.pop();
            continue;
        }
        cur.push(comp);
        let Some(kind) = root.entry_unnoted(&format!("/{}", cur.join("/"))) else {
            // A missing last component: the path names it (read as
            // missing, as pinrun's read).
            return rest.is_empty().then_some((cur, None));
        };
        if let Kind::Link(target) = kind {
            links += 1;
            if links > MAX_LINKS {
                return None;
            }
            let name = cur.pop().unwrap_or_default();
            let next = at_link(&cur, &name, &target)?;
            if next.starts_with('/') {
                cur.clear();
            }
            rest.extend(components_to_walk(&next));
        } else if rest.is_empty() {
            return Some((cur, Some(kind)));
        } else if kind != Kind::Dir {
            return None;
        }
    }
    Some((cur, None))
}

/// The components of `path` (empty ones and `.` left out) in reverse
/// order: a stack whose top is the first component, as [`walk`] pops
/// them (a link's
/// target is pushed onto the rest the same way).
fn components_to_walk(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .rev()
        .map(str::to_string)
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

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
