//! An allocation that fails (an address-space limit, `ulimit -v`, or a
//! machine out of memory) ends pinrun with its own message and exit 125:
//! `pinrun: allocating N bytes: out of memory` and a `hint:` line. Rust's
//! default handler printed "memory allocation of N bytes failed" and
//! aborted (SIGABRT, exit 134; session 7's break test, `ulimit -v 4000`).

use std::os::unix::process::ExitStatusExt;

/// `pinrun ARGS` under `ulimit -v KB`, killed if it hangs.
fn with_address_space(kb: u32, args: &[&str]) -> std::process::Output {
    crate::common::pinrun_under_ulimit("-v", kb)
        .args(args)
        .output()
        .unwrap()
}

/// Limits from where the binary cannot even be mapped (the kernel kills
/// it with SIGSEGV before `main`) to where the run succeeds: no run
/// aborts, every refusal is the out-of-memory one, and some limit hits an
/// allocation (which one depends on the build: a debug build maps more).
#[test]
fn an_allocation_that_fails_ends_with_exit_125_and_a_message() {
    let archive = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/machines/nto/bare-metal-worker1.internal.tar.gz");
    let args = ["--sysroot", archive.to_str().unwrap(), "--show", "--json"];
    let mut refused = 0;
    let mut seen = Vec::new();
    // 500 KB apart: between the limit too small to map the binary and the
    // one the run fits in there can be less than 2 MB (steps of 2 MB missed
    // every failing allocation once the binary grew).
    for kb in (2_000..=80_000).step_by(500) {
        let out = with_address_space(kb, &args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        seen.push((kb, out.status.code(), out.status.signal()));
        assert_ne!(
            out.status.signal(),
            Some(libc::SIGABRT),
            "ulimit -v {kb}: {err}"
        );
        assert!(!err.contains("panicked"), "ulimit -v {kb}: {err}");
        if out.status.code() == Some(125) {
            assert!(
                err.starts_with("pinrun: allocating ")
                    && err.contains(" bytes: out of memory\nhint: raise the address-space limit"),
                "ulimit -v {kb}: {err}"
            );
            refused += 1;
        }
        if out.status.code() == Some(0) {
            break;
        }
    }
    assert!(refused > 0, "no limit made an allocation fail: {seen:?}");
}
