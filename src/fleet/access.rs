//! Whether a unit's `User=` can reach its `ExecStart=` binary: the search
//! (execute) permission of every directory on the path, as the kernel's
//! path walk checks it (path_resolution(7): "search permission is
//! required on each of the directories of the path prefix"; the owner's,
//! else a group's, else the others' bits, inode_permission() in
//! fs/namei.c). ACLs and capabilities are not read: a user other than
//! root has no CAP_DAC_OVERRIDE under systemd's `User=`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The directory that denies a user search permission on a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The directory (absolute), the nearest to `/` that blocks.
    pub dir: PathBuf,
    /// Its permission bits (`st_mode & 0o7777`, stat(2)).
    pub mode: u32,
    /// Its owner's uid.
    pub uid: u32,
    /// Its group's gid.
    pub gid: u32,
}

/// The first directory above `path` (from `/` down) on which `uid`, with
/// the groups `gids` (the primary one among them), lacks search
/// permission; `None` when every one grants it, when `uid` is 0 (root
/// passes with CAP_DAC_OVERRIDE) or when a directory cannot be read (the
/// kernel's answer is unknown, so nothing is claimed).
pub fn blocked_dir(path: &Path, uid: u32, gids: &[u32]) -> Option<Blocked> {
    if uid == 0 {
        return None;
    }
    let mut dirs: Vec<&Path> = path.ancestors().skip(1).collect();
    dirs.reverse();
    dirs.into_iter().find_map(|dir| denied(dir, uid, gids))
}

/// The first of the directories above `path` and then `path` itself on
/// which `uid` (groups `gids`) lacks the execute bit: what execve(2)
/// needs of a binary (EACCES: "search permission is denied on a component
/// of the path prefix" or "execute permission is denied for the file").
/// `None` for root or when everything grants it or cannot be read.
pub fn blocked_exec(path: &Path, uid: u32, gids: &[u32]) -> Option<Blocked> {
    if uid == 0 {
        return None;
    }
    blocked_dir(path, uid, gids).or_else(|| denied(path, uid, gids))
}

/// `path` as [`Blocked`] when the owner's, else a group's, else the
/// others' execute bit of its mode is off for `uid`; `None` when it is on
/// or `path` cannot be read.
fn denied(path: &Path, uid: u32, gids: &[u32]) -> Option<Blocked> {
    let m = std::fs::metadata(path).ok()?;
    let bits = m.mode();
    let x = if m.uid() == uid {
        bits & 0o100
    } else if gids.contains(&m.gid()) {
        bits & 0o010
    } else {
        bits & 0o001
    };
    (x == 0).then(|| Blocked {
        dir: path.to_path_buf(),
        mode: bits & 0o7777,
        uid: m.uid(),
        gid: m.gid(),
    })
}

/// systemd's fixed search path for an `ExecStart=` command that is not an
/// absolute path (systemd.service(5), COMMAND LINES: "/usr/local/bin/,
/// /usr/bin/, /bin/ on systems using split /usr/bin/ and /bin/
/// directories, and their sbin/ counterparts"), in systemd's order
/// (`DEFAULT_PATH`, sbin before bin).
pub const SYSTEMD_PATH: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// The binary `ExecStart=` runs for its first word `word`: `word` itself
/// when absolute, else the first regular file named `word` with an
/// execute bit in [`SYSTEMD_PATH`] (as the manager, root, finds it);
/// `None` when there is none.
pub fn systemd_exec(word: &str) -> Option<PathBuf> {
    if word.starts_with('/') {
        return Some(PathBuf::from(word));
    }
    SYSTEMD_PATH
        .iter()
        .map(|d| Path::new(d).join(word))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// Whether the binary at `exe` will still be there for a unit that names
/// it: its directory is on `path_var` (a `PATH` value) or it is under a
/// system directory (`/usr`, `/bin`, `/sbin`, `/opt`), where installs go,
/// not under a build tree (`target/…`) or `/tmp`.
pub fn installed(exe: &Path, path_var: Option<&str>) -> bool {
    let under_system = ["/usr/", "/bin/", "/sbin/", "/opt/"]
        .iter()
        .any(|d| exe.starts_with(d));
    let on_path = exe.parent().is_some_and(|dir| {
        path_var
            .unwrap_or_default()
            .split(':')
            .any(|p| !p.is_empty() && Path::new(p) == dir)
    });
    under_system || on_path
}

/// `user`'s uid and groups (its primary gid and every group of
/// /etc/group naming it, getgrouplist(3)); `None` for an unknown user.
pub fn user_ids(user: &str) -> Option<(u32, Vec<u32>)> {
    let u = nix::unistd::User::from_name(user).ok()??;
    let name = std::ffi::CString::new(user).ok()?;
    let gids = nix::unistd::getgrouplist(&name, u.gid)
        .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
        .unwrap_or_else(|_| vec![u.gid.as_raw()]);
    Some((u.uid.as_raw(), gids))
}
