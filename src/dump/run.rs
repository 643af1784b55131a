//! The dump wing's run layer: `pinrun --dump FILE`.

use super::{Entry, dump_error};
use crate::error::Result;
use crate::system::Root;
use std::path::{Path, PathBuf};

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
    let tree = super::read::collect(root, file)?;
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
    super::report::write_tar_gz(&tree, &mut w)
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
