//! No mutable static outside `ffi` (issue 32): pinrun's state lives in
//! values passed down (`Root` and its backends, the plan, the wings'
//! plans), not in globals. `src/ffi.rs` may hold the few that the C
//! runtime forces (what the process inherited at its start, the signal
//! handlers' flags); elsewhere, test modules included, a `static` is a
//! constant: not `static mut`, and not of a type that changes behind a
//! shared reference (atomics, locks, cells, once-cells).

use crate::common;

/// The types whose statics can change: interior mutability.
const MUTABLE: [&str; 12] = [
    "Atomic",
    "Mutex",
    "RwLock",
    "OnceLock",
    "OnceCell",
    "LazyLock",
    "LazyCell",
    "Cell<",
    "RefCell",
    "UnsafeCell",
    "Once ",
    "Once;",
];

/// The mutable statics of `text` (a source file), by line number:
/// `static mut`, or a `static` whose type or value names one of
/// [`MUTABLE`]; `//` comments are left out.
fn mutable_statics(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| {
            let t = l.trim_start();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            let t = t.strip_prefix("pub(crate) ").unwrap_or(t);
            t.starts_with("static mut ")
                || (t.starts_with("static ") && MUTABLE.iter().any(|m| t.contains(m)))
        })
        .map(|(n, l)| (n + 1, l.trim().to_string()))
        .collect()
}

#[test]
fn the_scan_finds_mutable_statics_and_leaves_constants() {
    let src = "static A: u32 = 1;\nstatic mut B: u32 = 0;\n    static N: AtomicU32 = AtomicU32::new(0);\npub static M: Mutex<()> = Mutex::new(());\n// static C: AtomicBool\nstatic O: std::sync::Once = std::sync::Once::new();\nstatic ALLOC: pinrun::ffi::ExitOnOom = pinrun::ffi::ExitOnOom;\n";
    let found: Vec<usize> = mutable_statics(src).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, [2, 3, 4, 6]);
}

#[test]
fn no_mutable_static_outside_ffi() {
    let found = common::src_findings("ffi.rs", mutable_statics);
    assert!(
        found.is_empty(),
        "mutable statics outside src/ffi.rs (pass the state down, or put what the C runtime forces in ffi):\n{}",
        found.join("\n")
    );
}
