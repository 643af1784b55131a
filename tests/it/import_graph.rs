//! The layering of ARCHITECTURE.md holds: `scripts/import-graph.sh` finds
//! no import cycle between pinrun's modules and no edge that runs up a layer.

/// `scripts/import-graph.sh` run over this checkout's `src`.
fn import_graph() -> std::process::Output {
    import_graph_of(&format!("{}/src", env!("CARGO_MANIFEST_DIR")))
}

/// `scripts/import-graph.sh` run over the source tree `src`.
fn import_graph_of(src: &str) -> std::process::Output {
    let root = env!("CARGO_MANIFEST_DIR");
    std::process::Command::new("bash")
        .arg(format!("{root}/scripts/import-graph.sh"))
        .arg(src)
        .output()
        .expect("run scripts/import-graph.sh")
}

/// A wing's inherent `impl` block on a core type adds methods no
/// `crate::` path names (`StateDir::records_of`, once in the claims
/// wing, called by the steer wing's `--reclaim`): a call from another
/// wing is that wing importing the other; the same call from `app`, which
/// composes the wings, is allowed.
#[test]
fn a_wing_calling_another_wings_inherent_method_is_refused() {
    let tree = |caller: &str| {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("system/mod.rs", "pub struct StateDir;\n"),
            (
                "claims/read.rs",
                "use crate::system::StateDir;\nimpl StateDir {\n    pub fn records_of(&self) -> u32 { 0 }\n}\n",
            ),
            (
                caller,
                "use crate::system::StateDir;\npub fn f(d: &StateDir) -> u32 {\n    d.records_of()\n}\n",
            ),
        ];
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    };
    let wing = tree("steer/run.rs");
    let out = import_graph_of(wing.path().to_str().unwrap());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "accepted:\n{text}");
    assert!(
        text.contains("WING IMPORTS A WING: steer/run -> claims/read"),
        "{text}"
    );
    let app = tree("app/mod.rs");
    let out = import_graph_of(app.path().to_str().unwrap());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "refused:\n{text}");
    assert!(text.contains("app -> claims/read"), "{text}");
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
