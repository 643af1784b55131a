//! The layering of ARCHITECTURE.md holds: `scripts/import-graph.sh` finds
//! no import cycle between pinrun's modules and no edge that runs up a layer.

/// `scripts/import-graph.sh` run over this checkout's `src`.
fn import_graph() -> std::process::Output {
    let root = env!("CARGO_MANIFEST_DIR");
    std::process::Command::new("bash")
        .arg(format!("{root}/scripts/import-graph.sh"))
        .arg(format!("{root}/src"))
        .output()
        .expect("run scripts/import-graph.sh")
}

#[test]
fn no_import_cycle_and_no_upward_edge() {
    let out = import_graph();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/import-graph.sh failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("-> "), "no edges found:\n{text}");
}

/// ARCHITECTURE.md §7 shows the graph as the script prints it: a new edge
/// (or module) updates the document in the same change.
#[test]
fn architecture_document_shows_the_current_graph() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = import_graph();
    let edges = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(" -> "))
            .map(str::to_string)
            .collect()
    };
    let doc = std::fs::read_to_string(format!("{root}/ARCHITECTURE.md")).unwrap();
    let section = doc
        .split("## 7.")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("ARCHITECTURE.md has a section 7");
    assert_eq!(
        edges(section),
        edges(&String::from_utf8_lossy(&out.stdout)),
        "ARCHITECTURE.md §7 differs from scripts/import-graph.sh's edges: paste its output there"
    );
}
