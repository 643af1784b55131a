//! The functions a launch runs are placed together at the start of
//! `.text` (issue 17, BENCHMARKS.md "Round 6: the launch's code in
//! one place").
//!
//! `link/hot-functions.txt` lists, one linker symbol per line, the
//! functions that pinrun's launches, dry runs, checks and `--show` execute
//! (`scripts/hot-functions.sh` writes it from valgrind's callgrind). Given
//! to LLD as `--symbol-ordering-file`, they are laid out first, in a few
//! hundred KB, instead of spread over the 2.8 MB of code: exec maps them
//! with a few fault-around page faults and the launch's peak RSS is ~1 MB
//! smaller. It changes where code lies, never what it does. A name the
//! build does not have (another toolchain's standard library, a renamed
//! function) is skipped (`--no-warn-symbol-ordering`).
//!
//! Only LLD (Rust's default linker on x86_64 Linux since 1.90) knows the
//! option, and GNU ld refuses it: the build first links an empty program
//! with it, the target, `RUSTC_LINKER` and the rustflags cargo gives this
//! build, and passes it to pinrun's link only if that worked; a failed probe
//! links as before. Debug builds get the same layout (fewer of their
//! functions are named: they are not inlined as in a release build), which
//! `tests/it/static_build.rs` checks.

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=link/hot-functions.txt");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let order = manifest.join("link/hot-functions.txt");
    if !order.is_file() {
        println!("cargo::rustc-env=PINRUN_SYMBOL_ORDER=not applied");
        return;
    }
    let args = [
        format!("-Clink-arg=-Wl,--symbol-ordering-file={}", order.display()),
        "-Clink-arg=-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    let applied = links_with(&args);
    // For tests/it/static_build.rs: whether this build has the order.
    println!(
        "cargo::rustc-env=PINRUN_SYMBOL_ORDER={}",
        if applied { "applied" } else { "not applied" }
    );
    if applied {
        for a in &args {
            println!(
                "cargo::rustc-link-arg-bins={}",
                a.trim_start_matches("-Clink-arg=")
            );
        }
    }
}

/// Whether rustc links an empty program for this build's target with
/// `extra`, the way cargo will link pinrun (same compiler, target, linker
/// and rustflags).
fn links_with(extra: &[String]) -> bool {
    let (Some(rustc), Some(target), Some(out)) = (
        std::env::var_os("RUSTC"),
        std::env::var_os("TARGET"),
        std::env::var_os("OUT_DIR"),
    ) else {
        return false;
    };
    let out = PathBuf::from(out);
    let mut cmd = Command::new(rustc);
    cmd.arg("-")
        .arg("--crate-name=link_probe")
        .arg("--crate-type=bin")
        .arg("--target")
        .arg(target)
        .arg("-o")
        .arg(out.join("link-probe"))
        .args(extra);
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        cmd.arg("-C")
            .arg(format!("linker={}", linker.to_string_lossy()));
    }
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    let Ok(mut child) = cmd
        .current_dir(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(b"fn main() {}\n");
    }
    child.wait().is_ok_and(|s| s.success())
}
