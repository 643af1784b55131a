//! The committed man page and completions are generated from the clap
//! definition (`pinrun --generate ...`); this test fails when they are stale.

use crate::common;
use common::pinrun;

#[test]
fn generated_files_are_fresh() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (what, file) in [
        ("man", "man/pinrun.1"),
        ("bash", "completions/pinrun.bash"),
        ("zsh", "completions/_pinrun"),
        ("fish", "completions/pinrun.fish"),
    ] {
        let out = pinrun().args(["--generate", what]).output().unwrap();
        assert!(out.status.success());
        let committed = std::fs::read(root.join(file)).unwrap_or_default();
        assert!(
            committed == out.stdout,
            "{file} is stale: run `cargo run -- --generate {what} > {file}`"
        );
    }
}
