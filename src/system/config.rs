//! The site policy file (pinrun(1) FILES): which findings a fleet accepts
//! (`allow`), whether warnings refuse (`strict`), and the state directory
//! (`state_dir`), in TOML. Read from the host, never from `--sysroot`: it
//! is the user's policy, not a property of the machine being replayed, so
//! `pinrun --sysroot DUMP --check` judges the dump by the same policy as the
//! live machine.
//!
//! Which file: `$PINRUN_CONFIG` when set (empty: none), else the first
//! that exists of `$XDG_CONFIG_HOME/pinrun/config.toml` (`~/.config` when
//! `XDG_CONFIG_HOME` is unset or empty) and `/etc/pinrun.toml`. A file that
//! exists but cannot be read, is larger than [`MAX_BYTES`], is not valid
//! TOML or has an unknown key is an error naming the file and line: a
//! policy is never ignored silently (fail closed).

use crate::error::{Error, ErrorCode};
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest policy file read, in bytes (a few lines are expected).
pub const MAX_BYTES: u64 = 64 * 1024;

/// The system-wide policy file.
pub const SYSTEM_FILE: &str = "/etc/pinrun.toml";

/// A policy file's contents, as written; validated by the application
/// layer (finding codes) against the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteConfig {
    /// Finding codes, families (`irq-*`) or `all`, as `--allow` takes them.
    #[serde(default)]
    pub allow: Vec<String>,
    /// `true`: as `--strict` on every launch.
    #[serde(default)]
    pub strict: bool,
    /// The state directory, unless `--state-dir` or `PINRUN_STATE_DIR` names one.
    pub state_dir: Option<PathBuf>,
}

/// The policy file in use and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// The file read.
    pub path: PathBuf,
    /// Its contents.
    pub config: SiteConfig,
}

/// Where the policy file is looked for, in order, given the environment
/// variable reader `var` (`std::env::var_os` on a live run). The first
/// that exists is used; `$PINRUN_CONFIG` is the only candidate when set.
pub fn candidates(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    if let Some(p) = var("PINRUN_CONFIG") {
        return if p.is_empty() {
            Vec::new()
        } else {
            vec![PathBuf::from(p)]
        };
    }
    let mut out = Vec::new();
    // XDG Base Directory Specification: XDG_CONFIG_HOME unset or empty
    // means $HOME/.config, and a relative path "is invalid and should be
    // ignored" (issue 35: a value that turns the setting off).
    let xdg = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|x| x.is_absolute())
        .or_else(|| {
            var("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".config"))
        });
    if let Some(dir) = xdg {
        out.push(dir.join("pinrun/config.toml"));
    }
    out.push(PathBuf::from(SYSTEM_FILE));
    out
}

/// Reads the first existing file of `candidates` (see the module doc);
/// `Ok(None)` when none exists. `$PINRUN_CONFIG` naming a missing file is
/// an error (`explicit`).
pub fn read(candidates: &[PathBuf], explicit: bool) -> Result<Option<Loaded>, Error> {
    for path in candidates {
        // A file in a directory this user cannot search (HOME left at
        // /root after dropping privileges) is not this user's policy: only
        // a file known to exist must be read.
        if !explicit
            && let Err(e) = std::fs::metadata(path)
            && matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            )
        {
            continue;
        }
        // O_NONBLOCK: opening a FIFO must not wait for a writer (it is
        // refused below); reads of a regular file ignore the flag (open(2)).
        let opened = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
        };
        let file = match opened {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => continue,
            Err(e) => {
                return Err(config_error(
                    path,
                    format!("cannot open it: {}", crate::error::io_words(&e)),
                ));
            }
        };
        // A FIFO, socket or device would hang the launch or feed it
        // endless bytes: a policy file is a regular file (a directory is
        // said by read(2): EISDIR).
        if let Ok(m) = file.metadata()
            && !m.is_file()
            && !m.is_dir()
        {
            use std::os::unix::fs::MetadataExt;
            let kind = crate::words::file_kind(m.mode());
            return Err(config_error(
                path,
                format!("not a regular file ({kind}): not a pinrun policy file"),
            ));
        }
        trusted(path, &file)?;
        let mut text = String::new();
        let read = file.take(MAX_BYTES + 1).read_to_string(&mut text);
        if let Err(e) = read {
            return Err(config_error(
                path,
                format!("cannot read it: {}", crate::error::io_words(&e)),
            ));
        }
        if text.len() as u64 > MAX_BYTES {
            return Err(config_error(
                path,
                format!("larger than {MAX_BYTES} bytes: not a pinrun policy file"),
            ));
        }
        let config = parse(&text).map_err(|(line, why)| {
            config_error(
                path,
                match line {
                    Some(l) => format!("line {l}: {why}"),
                    None => why,
                },
            )
        })?;
        return Ok(Some(Loaded {
            path: path.clone(),
            config,
        }));
    }
    Ok(None)
}

/// Refuses a policy file another user could have written, with the state
/// directory's trust rule (issue 33): the file (`fstat(2)` of the one
/// opened) must belong to root or to this user and be writable by neither
/// group nor others, and its directory must belong to root or to this
/// user and be writable by others only with the sticky bit (else another
/// user could replace the file). A policy turns findings into info and
/// moves the state directory: one written by someone else is never
/// obeyed, as ssh(1) refuses a config file with bad owner or permissions.
fn trusted(path: &Path, file: &std::fs::File) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    let check = |what: &str, m: &std::fs::Metadata, dir: bool| -> Result<(), Error> {
        let mode = m.mode() & 0o7777;
        if m.uid() != 0 && m.uid() != me {
            return Err(config_error(
                path,
                format!("{what} belongs to uid {}, not to root or to this user (uid {me}): another user could change this policy", m.uid()),
            )
            .hint("keep the policy file where only root or you can write it (/etc/pinrun.toml, ~/.config/pinrun/config.toml), or point PINRUN_CONFIG at one"));
        }
        let open = if dir {
            mode & 0o022 != 0 && mode & 0o1000 == 0
        } else {
            mode & 0o022 != 0
        };
        if open {
            return Err(config_error(
                path,
                format!("{what} has mode {mode:04o}: other users could change this policy"),
            )
            .hint(if dir {
                "chmod go-w (or +t) the directory, as its owner".to_string()
            } else {
                format!("chmod go-w {}, as its owner", path.display())
            }));
        }
        Ok(())
    };
    let m = file.metadata().map_err(|e| {
        config_error(
            path,
            format!("cannot stat it: {}", crate::error::io_words(&e)),
        )
    })?;
    check("the file", &m, false)?;
    // The directory the file really is in (a link to it may live
    // elsewhere): the one whose writers could replace it.
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let dir = dir.as_path();
    let d = std::fs::metadata(dir).map_err(|e| {
        config_error(
            path,
            format!(
                "cannot stat its directory {}: {}",
                dir.display(),
                crate::error::io_words(&e)
            ),
        )
    })?;
    check(&format!("its directory {}", dir.display()), &d, true)
}

/// Parses a policy file's text: the config, or the line (1-based, when
/// known) and the reason.
pub fn parse(text: &str) -> Result<SiteConfig, (Option<usize>, String)> {
    toml::from_str::<SiteConfig>(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        (line, e.message().trim().to_string())
    })
}

fn config_error(path: &Path, why: String) -> Error {
    Error::new(
        ErrorCode::BadConfig,
        format!("policy file {}: {why}", path.display()),
    )
    .hint(format!(
        "fix or remove {} (keys: allow = [\"CODE\", \"irq-*\"], strict = true|false, state_dir = \"DIR\"), or set PINRUN_CONFIG= to use none",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_environment_chooses_the_candidates() {
        assert_eq!(
            candidates(env(&[("PINRUN_CONFIG", "/x.toml"), ("HOME", "/h")])),
            vec![PathBuf::from("/x.toml")]
        );
        assert!(candidates(env(&[("PINRUN_CONFIG", "")])).is_empty());
        assert_eq!(
            candidates(env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")])),
            vec![
                PathBuf::from("/x/pinrun/config.toml"),
                PathBuf::from(SYSTEM_FILE)
            ]
        );
        // XDG Base Directory: an empty XDG_CONFIG_HOME means unset, and a
        // relative one is invalid and ignored.
        for xdg in ["", "conf", "./conf"] {
            assert_eq!(
                candidates(env(&[("XDG_CONFIG_HOME", xdg), ("HOME", "/h")])),
                vec![
                    PathBuf::from("/h/.config/pinrun/config.toml"),
                    PathBuf::from(SYSTEM_FILE)
                ],
                "{xdg:?}"
            );
        }
    }

    #[test]
    fn keys_parse_and_unknown_keys_name_their_line() {
        let c = parse(
            "allow = [\"irq-*\", \"rt-throttling\"]\nstrict = true\nstate_dir = \"/run/x\"\n",
        )
        .unwrap();
        assert_eq!(c.allow, vec!["irq-*", "rt-throttling"]);
        assert!(c.strict);
        assert_eq!(c.state_dir, Some(PathBuf::from("/run/x")));
        let (line, why) = parse("strict = false\n\nalow = [\"all\"]\n").unwrap_err();
        assert_eq!(line, Some(3));
        assert!(why.contains("alow"), "{why}");
        let (line, _) = parse("strict = \"yes\"\n").unwrap_err();
        assert_eq!(line, Some(1));
    }

    #[test]
    fn a_file_that_exists_is_never_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.toml");
        assert_eq!(read(std::slice::from_ref(&missing), false).unwrap(), None);
        assert!(read(std::slice::from_ref(&missing), true).is_err());
        let big = dir.path().join("big.toml");
        std::fs::write(&big, "#".repeat(MAX_BYTES as usize + 1)).unwrap();
        let e = read(std::slice::from_ref(&big), false).unwrap_err();
        assert!(e.message.contains("big.toml"), "{}", e.message);
        // A directory where the file should be: opened, then unreadable.
        let e = read(&[dir.path().to_path_buf()], false).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadConfig);
    }

    /// Issue 33: a policy file another user could write is refused, as
    /// the state directory is: group- or world-writable, in a directory
    /// others may write without the sticky bit, or (as root) owned by
    /// another user.
    #[test]
    fn a_policy_others_could_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("config.toml");
        std::fs::write(&f, "strict = true\n").unwrap();
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode(&f, 0o644);
        assert!(
            read(std::slice::from_ref(&f), true)
                .unwrap()
                .unwrap()
                .config
                .strict
        );
        mode(&f, 0o666);
        let e = read(std::slice::from_ref(&f), true).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadConfig);
        assert!(
            e.message
                .ends_with("the file has mode 0666: other users could change this policy"),
            "{}",
            e.message
        );
        mode(&f, 0o644);
        mode(dir.path(), 0o777);
        let e = read(std::slice::from_ref(&f), true).unwrap_err();
        assert!(
            e.message
                .contains("has mode 0777: other users could change"),
            "{}",
            e.message
        );
        // Sticky, as /tmp: others cannot replace a file they do not own.
        mode(dir.path(), 0o1777);
        assert!(read(std::slice::from_ref(&f), true).is_ok());
        mode(dir.path(), 0o755);
        if nix::unistd::geteuid().is_root() {
            nix::unistd::chown(&f, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            let e = read(std::slice::from_ref(&f), true).unwrap_err();
            assert!(
                e.message
                    .contains("the file belongs to uid 65534, not to root or to this user"),
                "{}",
                e.message
            );
        }
    }

    /// The directory checked is the one the file really is in: a link in
    /// a safe directory to a file in a world-writable one (non-sticky) is
    /// refused (the break test's case: the link's directory was checked).
    #[test]
    fn a_link_to_a_policy_in_an_open_directory_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        let f = open.join("c.toml");
        std::fs::write(&f, "strict = true\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let link = t.path().join("link.toml");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let e = read(std::slice::from_ref(&link), true).unwrap_err();
        assert!(e.message.contains("has mode 0777"), "{}", e.message);
    }
}
