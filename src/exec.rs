//! Resolving and executing the command in place (`execv(3)`): same PID,
//! environment, file descriptors, signal mask and terminal.

use crate::error::{Error, ErrorCode, Exit, Result};
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Why a file found for the command cannot be executed (exit 126).
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotExecutable {
    /// A directory.
    Directory,
    /// No execute permission bit.
    NoExecBit,
    /// Not a regular file (a device, FIFO or socket: `execve(2)` answers
    /// EACCES whatever its mode): its kind in words.
    NotRegular(&'static str),
    /// The path cannot be followed: `errno(3)`'s description, lowercase.
    Path(String),
}

impl std::fmt::Display for NotExecutable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotExecutable::Directory => f.write_str("is a directory"),
            NotExecutable::NoExecBit => f.write_str("permission denied (not executable)"),
            NotExecutable::Path(why) => f.write_str(why),
            NotExecutable::NotRegular(kind) => write!(
                f,
                "is {kind}, not a regular file (execve(2) answers EACCES)"
            ),
        }
    }
}

fn not_executable(cmd: &OsStr, path: &Path, why: &NotExecutable) -> Error {
    Error::new(
        ErrorCode::CommandNotExecutable,
        format!(
            "{}: cannot execute {}: {why}",
            cmd.to_string_lossy(),
            path.display()
        ),
    )
    .exit(Exit::CannotExec)
    .hint(match why {
        NotExecutable::Directory => "give the program inside it, not the directory".to_string(),
        NotExecutable::NotRegular(_) => {
            "give a program (a regular file with execute permission)".to_string()
        }
        NotExecutable::Path(_) => "fix the path: every directory on it must exist and be searchable by this user, and links must not loop".to_string(),
        NotExecutable::NoExecBit => format!(
            "make it executable (chmod +x {}), or run it through its interpreter (pinrun ... -- sh {})",
            path.display(),
            path.display()
        ),
    })
}

/// `None` when nothing is there (ENOENT, a dangling link: exit 127);
/// otherwise whether it can be executed, and why not (exit 126), as
/// `execvp(3)` and the shells tell them apart: a directory on the path that
/// cannot be searched, a path through a file, a symlink loop are 126.
fn is_executable_file(path: &Path) -> Option<std::result::Result<(), NotExecutable>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            let errno = e.raw_os_error().map(nix::errno::Errno::from_raw);
            return Some(Err(NotExecutable::Path(
                errno.map_or_else(|| e.to_string(), |n| n.desc().to_lowercase()),
            )));
        }
    };
    Some(if meta.is_dir() {
        Err(NotExecutable::Directory)
    } else if !meta.is_file() {
        Err(NotExecutable::NotRegular(
            crate::system::state_dir::file_kind(&meta),
        ))
    } else if meta.permissions().mode() & 0o111 == 0 {
        Err(NotExecutable::NoExecBit)
    } else {
        Ok(())
    })
}

/// The search path `execvp(3)` uses when `PATH` is unset (glibc).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// `arg` as one POSIX shell word (sh(1) "Quoting"): as it is when made of
/// characters no shell treats specially, else in single quotes, a `'`
/// written `'\''`.
pub fn sh_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// This machine's online CPUs (`/sys/devices/system/cpu/online`), for
/// the hints about taskset's forms; `None` when unreadable.
pub fn online_here() -> Option<crate::cpuset::CpuSet> {
    crate::system::Root::new("/").read_list("/sys/devices/system/cpu/online")
}

/// taskset's reading of `text` as a hexadecimal cpumask (`2` is CPU 1,
/// `0x` optional, 32-bit words separated by `,`), as it would run on a
/// machine whose online CPUs are `online` ([`online_here`]): `Ok(cpus)`
/// the mask's online CPUs (`sched_setaffinity(2)` keeps those; the mask
/// as written when the online CPUs are unknown), `Err(what)` when none of
/// its CPUs is online (taskset fails with EINVAL), naming them and the
/// online ones. `None`: not a hexadecimal mask.
pub fn taskset_mask(
    text: &str,
    online: Option<&crate::cpuset::CpuSet>,
) -> Option<std::result::Result<crate::cpuset::CpuSet, String>> {
    use crate::cpuset::CpuSet;
    let hex = text.strip_prefix("0x").unwrap_or(text);
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit() || c == ',') {
        return None;
    }
    let mask = CpuSet::parse(&format!("0x{hex}"))
        .ok()
        .filter(|m| !m.is_empty())?;
    Some(match online {
        Some(on) if !mask.intersects(on) => Err(format!(
            "0x{hex} is {}, {} online here (CPUs {on})",
            crate::words::cpus_phrase(&mask),
            if mask.len() == 1 {
                "not"
            } else {
                "none of them"
            }
        )),
        Some(on) => Ok(mask.intersection(on)),
        None => Ok(mask),
    })
}

/// The hint for taskset's `taskset MASK COMMAND [ARG]...` form given to
/// pinrun (`command[0]` is the mask): taskset(1) reads MASK as a
/// hexadecimal cpumask ([`taskset_mask`]: `2` is CPU 1) unless `-c` makes
/// it a cpulist, so the exact pinrun command names the mask's CPUs; the
/// list reading is offered second, only when its CPUs are online, and
/// chrt's `PRIO COMMAND` reading (SCHED_RR) last for 1 to 99; the
/// commands from the habits table's forms ([`crate::habits::form`]).
/// `None` when `command[0]` is neither.
pub fn taskset_form_hint(command: &[std::ffi::OsString]) -> Option<String> {
    use crate::cpuset::CpuSet;
    let name = command.first()?.to_str()?;
    // `pinrun 1 -- true`: the `--` was taken as the command's first word.
    let args = match command.get(1) {
        Some(a) if a == "--" => &command[2..],
        _ => &command[1..],
    };
    let rest: Vec<String> = args.iter().map(|a| sh_word(&a.to_string_lossy())).collect();
    let tail = if rest.is_empty() {
        "COMMAND".to_string()
    } else {
        rest.join(" ")
    };
    let online = online_here();
    let list = CpuSet::parse(name)
        .ok()
        .filter(|l| !name.starts_with("0x") && online.as_ref().is_none_or(|on| l.is_subset(on)));
    let template = crate::habits::form(crate::habits::Tool::Taskset, "MASK COMMAND");
    let with = |cpus: &str| {
        template
            .command_with(cpus)
            .unwrap_or_default()
            .replace("COMMAND", &tail)
    };
    let as_list = |l: &CpuSet| format!("pinrun {}", with(&l.to_list()));
    // chrt PRIO COMMAND: a real-time priority (SCHED_RR, chrt's default).
    let chrt = name
        .parse::<u32>()
        .ok()
        .filter(|p| (1..=99).contains(p) && !name.starts_with('0'))
        .and_then(|p| {
            let row = crate::habits::form(crate::habits::Tool::Chrt, "PRIO COMMAND");
            Some(format!(
                "; as chrt reads it, a SCHED_RR priority: pinrun {}",
                row.command_with(&p.to_string())?.replace("COMMAND", &tail)
            ))
        })
        .unwrap_or_default();
    let hint = match (taskset_mask(name, online.as_ref()), list) {
        (Some(Ok(m)), Some(l)) if m != l => format!(
            "taskset's MASK form: taskset reads {name} as a hexadecimal mask: pinrun {} (as a list, as taskset -c reads it: {})",
            with(&m.to_list()),
            as_list(&l)
        ),
        (Some(Ok(m)), _) => format!(
            "taskset's MASK form: taskset reads {name} as a hexadecimal mask: pinrun {}",
            with(&m.to_list())
        ),
        (Some(Err(why)), Some(l)) => format!(
            "taskset's MASK form: {why}; as a list, as taskset -c reads it: {}",
            as_list(&l)
        ),
        (Some(Err(why)), None) => format!("taskset's MASK form: {why}"),
        (None, Some(l)) => format!(
            "taskset -c's list form: pinrun takes the CPUs as an option: {}",
            as_list(&l)
        ),
        (None, None) => return None,
    };
    Some(format!("{hint}{chrt}"))
}

/// Finds the command (`command[0]`) as `execvp(3)` would: a name with a
/// `/` is a path; otherwise the first executable match in `$PATH` (the
/// `which` crate). Not found: exit 127 (with taskset's positional form
/// recognised, [`taskset_form_hint`]); found but not executable: exit 126.
pub fn resolve(command: &[std::ffi::OsString]) -> Result<PathBuf> {
    let empty = std::ffi::OsString::new();
    let cmd: &OsStr = command.first().unwrap_or(&empty);
    let not_found = || {
        let name = cmd.to_string_lossy();
        let is_path = cmd.as_bytes().contains(&b'/');
        let hint = if let Some(h) = taskset_form_hint(command).filter(|_| !is_path) {
            h
        } else if is_path && cmd.as_bytes().starts_with(b"/") {
            "no file at that path: check the path".to_string()
        } else if is_path {
            let cwd = std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_else(|_| "the working directory".into());
            format!("no file at that path (relative paths start from {cwd}): check the path")
        } else if name.starts_with('-') {
            format!(
                "everything after -- is the command, and {name} is not one: put pinrun's options before --"
            )
        } else if std::fs::metadata(Path::new(".").join(cmd))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        {
            format!(
                "./{name} is in the working directory, which PATH does not search (as execvp(3)): write ./{name}"
            )
        } else {
            "check the name, give a path (./app), or extend PATH".to_string()
        };
        Error::new(
            ErrorCode::CommandNotFound,
            format!("{name}: command not found"),
        )
        .exit(Exit::NotFound)
        .hint(hint)
    };
    if cmd.is_empty() {
        // As a shell answers '' (bash: "command not found", 127).
        return Err(Error::new(
            ErrorCode::CommandNotFound,
            "the command is empty (an empty word after pinrun's options, e.g. an unset variable)",
        )
        .exit(Exit::NotFound)
        .hint("give the program to run, e.g. pinrun --cores 1 -- ./app"));
    }
    if cmd.as_bytes().contains(&b'/') {
        let path = PathBuf::from(cmd);
        return match is_executable_file(&path) {
            None => Err(not_found()),
            Some(Err(why)) => Err(not_executable(cmd, &path, &why)),
            Some(Ok(())) => Ok(path),
        };
    }
    // execvp(3) searches "/bin:/usr/bin" (glibc's default) when PATH is unset.
    let path_var = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    if let Ok(path) = which::which_in(cmd, Some(&path_var), cwd) {
        return Ok(path);
    }
    // which only returns executables; a non-executable match is exit 126.
    for dir in std::env::split_paths(&path_var) {
        let p = dir.join(cmd);
        if let Some(Err(why)) = is_executable_file(&p) {
            return Err(not_executable(cmd, &p, &why));
        }
    }
    Err(not_found())
}

/// `BINPRM_BUF_SIZE` (include/uapi/linux/binfmts.h): the bytes of a file
/// the kernel reads to find its format, `#!` line included.
const BINPRM_BUF_SIZE: usize = 256;

/// The deepest file of a chain of `#!` interpreters that `execve(2)`
/// still loads (fs/exec.c `exec_binprm()`: `if (depth > 5) return
/// -ELOOP;`, Linux 5.8 and later): scripts at depths 0 to 5 each name the
/// next; a script at depth 5 is ELOOP once its interpreter is opened.
const MAX_SCRIPT_DEPTH: usize = 5;

/// The interpreter of a script's `#!` line as `load_script()`
/// (fs/binfmt_script.c, Linux 5.1 and later) takes it from the first
/// [`BINPRM_BUF_SIZE`] bytes `buf`: `None` when the kernel answers ENOEXEC
/// (no `#!`, no interpreter name, or a line without a newline whose name
/// has no space, tab or NUL after it within the buffer: a truncated path),
/// after which `execvp(3)` (and pinrun) run the file with `/bin/sh`.
fn script_interpreter(buf: &[u8]) -> Option<&[u8]> {
    let buf = &buf[..buf.len().min(BINPRM_BUF_SIZE)];
    if !buf.starts_with(b"#!") {
        return None;
    }
    let spacetab = |b: u8| b == b' ' || b == b'\t';
    let terminator = |b: u8| spacetab(b) || b == 0;
    // The kernel's buffer is zero-filled past a short file; its last byte
    // is never part of the line (`buf_end`).
    let mut full = [0u8; BINPRM_BUF_SIZE];
    full[..buf.len()].copy_from_slice(buf);
    let buf_end = BINPRM_BUF_SIZE - 1;
    // strnchr() stops at a NUL too.
    let newline = full
        .iter()
        .take_while(|&&b| b != 0)
        .position(|&b| b == b'\n');
    let mut i_end = match newline {
        Some(n) => n,
        None => {
            let start = (2..buf_end).find(|&i| !spacetab(full[i]))?;
            (start..buf_end).find(|&i| terminator(full[i]))?;
            buf_end
        }
    };
    while i_end > 2 && spacetab(full[i_end - 1]) {
        i_end -= 1;
    }
    let i_name = (2..i_end).find(|&i| !spacetab(full[i]))?;
    let i_sep = (i_name..i_end)
        .find(|&i| terminator(full[i]))
        .unwrap_or(i_end);
    buf.get(i_name..i_sep.min(buf.len()))
}

/// What `execve(2)` of the resolved `path` would answer because of its
/// `#!` interpreter, found without executing anything (`--dry-run`,
/// `--check`): the interpreter is opened by `open_exec()`, so a missing
/// one is ENOENT (exit 127), one that is not a regular file or has no
/// execute permission for this user is EACCES (exit 126); an interpreter
/// that is itself a script is followed, ELOOP past the kernel's depth. A
/// file that cannot be read here, or that the kernel would not run as a
/// script (ENOEXEC: pinrun runs it with `/bin/sh`), is not refused. The
/// error is the launch's, same message and exit status.
pub fn predict_exec(cmd: &OsStr, path: &Path) -> Result<()> {
    use nix::errno::Errno;
    use std::io::Read;
    let fail = |err, interp: Option<&Path>| {
        let e = exec_error(&cmd.to_string_lossy(), path, err);
        Err(match interp {
            Some(i) => interpreter_error(e, path, i, err),
            None => e,
        })
    };
    let mut file = path.to_path_buf();
    for _ in 0..=MAX_SCRIPT_DEPTH {
        let mut buf = Vec::with_capacity(BINPRM_BUF_SIZE);
        let Ok(f) = std::fs::File::open(&file) else {
            return Ok(());
        };
        if f.take(BINPRM_BUF_SIZE as u64)
            .read_to_end(&mut buf)
            .is_err()
        {
            return Ok(());
        }
        let Some(interp) = script_interpreter(&buf) else {
            return Ok(());
        };
        let interp = PathBuf::from(OsStr::from_bytes(interp));
        match nix::sys::stat::stat(&interp) {
            Err(e) => return fail(e, Some(&interp)),
            Ok(st) if st.st_mode & nix::libc::S_IFMT != nix::libc::S_IFREG => {
                return fail(Errno::EACCES, Some(&interp));
            }
            Ok(_) => {}
        }
        if let Err(e) = nix::unistd::faccessat(
            nix::fcntl::AT_FDCWD,
            &interp,
            nix::unistd::AccessFlags::X_OK,
            nix::fcntl::AtFlags::AT_EACCESS,
        ) {
            return fail(e, Some(&interp));
        }
        file = interp;
    }
    fail(Errno::ELOOP, None)
}

fn cstring(s: &OsStr) -> Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        Error::new(
            ErrorCode::BadArgument,
            format!("argument {:?} contains a NUL byte", s.to_string_lossy()),
        )
    })
}

/// The environment for `execve(2)`: this process's, with `set` replacing or
/// adding variables and `unset` removed; `None` when both are empty (the
/// environment is passed unchanged).
pub fn environment(set: &[(String, String)], unset: &[String]) -> Option<Vec<CString>> {
    if set.is_empty() && unset.is_empty() {
        return None;
    }
    let mut out: Vec<CString> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            !unset.iter().any(|u| *u == k) && !set.iter().any(|(s, _)| *s == k)
        })
        .filter_map(|(k, v)| {
            let mut b = k.as_bytes().to_vec();
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            CString::new(b).ok()
        })
        .collect();
    out.extend(
        set.iter()
            .filter_map(|(k, v)| CString::new(format!("{k}={v}")).ok()),
    );
    Some(out)
}

/// Replaces this process with `path`, argv `args` (`argv[0]` as typed),
/// environment `env` (`None`: unchanged, see [`environment`]); a
/// file without a `#!` line is run by `/bin/sh`, as `execvp(3)` does.
/// Returns only on failure. SIGPIPE, which pinrun ignores (`ffi`'s
/// constructor, before `main`), is first given back the disposition the
/// caller left ([`crate::ffi::reset_sigpipe`]), and the standard
/// descriptors the caller closed are closed again.
pub fn exec(path: &Path, args: &[OsString], env: Option<&[CString]>) -> Error {
    let argv: Result<Vec<CString>> = args.iter().map(|a| cstring(a)).collect();
    let (argv, prog) = match (argv, cstring(path.as_os_str())) {
        (Ok(a), Ok(p)) => (a, p),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    crate::ffi::reset_sigpipe();
    crate::ffi::restore_std_fds();
    let run = |prog: &CString, argv: &[CString]| match env {
        None => nix::unistd::execv(prog, argv),
        Some(env) => nix::unistd::execve(prog, argv, env),
    };
    let mut err = match run(&prog, &argv) {
        Err(e) => e,
        Ok(never) => match never {},
    };
    if err == nix::errno::Errno::ENOEXEC {
        // execvp(3): a file the kernel cannot execute (no "#!") is run by
        // /bin/sh, as `/bin/sh FILE ARGS...`.
        let sh = c"/bin/sh".to_owned();
        let mut sh_argv = vec![sh.clone(), prog.clone()];
        sh_argv.extend(argv.iter().skip(1).cloned());
        err = match run(&sh, &sh_argv) {
            Err(e) => e,
            Ok(never) => match never {},
        };
    }
    let cmd = args
        .first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A file that is there but fails for its `#!` interpreter: the
    // prediction names the interpreter (same errno, same exit status).
    if matches!(err, nix::errno::Errno::ENOENT | nix::errno::Errno::EACCES)
        && path.is_file()
        && let Err(e) = predict_exec(OsStr::new(&cmd), path)
        && e.errno() == Some(err)
    {
        return e;
    }
    exec_error(&cmd, path, err)
}

/// `e` (the `execve(2)` failure `err` of the script `path`) said of its
/// `#!` interpreter `interp`, which is missing (ENOENT) or not an
/// executable regular file (EACCES): the kernel's `open_exec()` of the
/// interpreter failed, not the script's (fs/binfmt_script.c).
fn interpreter_error(mut e: Error, path: &Path, interp: &Path, err: nix::errno::Errno) -> Error {
    let (what, fix) = if err == nix::errno::Errno::ENOENT {
        ("does not exist", "install it")
    } else {
        ("is not an executable regular file", "make it executable")
    };
    e.message = format!(
        "{}: its interpreter {} (the #! line) {what}",
        e.message.split(": execv ").next().unwrap_or(&e.message),
        interp.display()
    );
    e.hint = Some(format!(
        "{fix}, or correct the first line of {} (#!/path/to/interpreter)",
        path.display()
    ));
    e
}

/// The failure of `execv(path)` with `err` for the command named `cmd`:
/// exit 127 for ENOENT, 126 otherwise (as the shells).
fn exec_error(cmd: &str, path: &Path, err: nix::errno::Errno) -> Error {
    let exit = if err == nix::errno::Errno::ENOENT {
        Exit::NotFound
    } else {
        Exit::CannotExec
    };
    let cause = crate::error::Step::Exec.cause(err);
    Error::new(
        ErrorCode::ExecFailed,
        format!(
            "{cmd}: execv {}: {}: {}",
            path.display(),
            crate::error::errno_words(err),
            cause.words
        ),
    )
    .exit(exit)
    .hint(cause.hint)
    .syscall(
        crate::error::Step::Exec,
        &std::io::Error::from_raw_os_error(err as i32),
    )
}

#[cfg(test)]
mod script_tests {
    use super::script_interpreter;

    /// fs/binfmt_script.c `load_script()` (Linux 5.1+) on the first 256
    /// bytes: the interpreter name, or ENOEXEC (`None`).
    #[test]
    fn interpreter_as_load_script_takes_it() {
        let name =
            |b: &[u8]| script_interpreter(b).map(|n| String::from_utf8_lossy(n).into_owned());
        assert_eq!(name(b"#!/bin/sh\n"), Some("/bin/sh".into()));
        assert_eq!(
            name(b"#! \t/usr/bin/env python3 -u\n"),
            Some("/usr/bin/env".into())
        );
        assert_eq!(name(b"#!/bin/sh"), Some("/bin/sh".into()));
        assert_eq!(name(b"#!/bin/sh   \n"), Some("/bin/sh".into()));
        assert_eq!(name(b"\x7fELF\x02\x01"), None);
        assert_eq!(name(b"#!\n"), None);
        assert_eq!(name(b"#!   \t\n"), None);
        // No newline in the buffer: a name without a space after it
        // within 255 bytes is truncated, ENOEXEC; with one, it is whole.
        let mut long = b"#!/".to_vec();
        long.extend([b'a'; 300]);
        assert_eq!(name(&long), None);
        let mut arg = b"#!/bin/sh ".to_vec();
        arg.extend([b'x'; 300]);
        assert_eq!(name(&arg), Some("/bin/sh".into()));
        // A NUL ends the line (strnchr() stops there).
        assert_eq!(name(b"#!/bin/sh\0\n"), Some("/bin/sh".into()));
    }
}
