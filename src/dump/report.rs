//! The dump wing's render layer: the collected [`Tree`] as the bytes of
//! a `.tar.gz`.

use super::{Entry, Tree};

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
