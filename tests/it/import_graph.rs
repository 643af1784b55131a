//! The layering of ARCHITECTURE.md holds: `scripts/import-graph.sh` finds
//! no import cycle between pinrun's modules and no edge that runs up a layer.

#[test]
fn no_import_cycle_and_no_upward_edge() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("bash")
        .arg(format!("{root}/scripts/import-graph.sh"))
        .arg(format!("{root}/src"))
        .output()
        .expect("run scripts/import-graph.sh");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/import-graph.sh failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("-> "), "no edges found:\n{text}");
}
