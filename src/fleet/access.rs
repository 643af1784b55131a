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
    dirs.into_iter().find_map(|dir| {
        let m = std::fs::metadata(dir).ok()?;
        let bits = m.mode();
        let x = if m.uid() == uid {
            bits & 0o100
        } else if gids.contains(&m.gid()) {
            bits & 0o010
        } else {
            bits & 0o001
        };
        (x == 0).then(|| Blocked {
            dir: dir.to_path_buf(),
            mode: bits & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
        })
    })
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
