#!/usr/bin/env bash
# The import graph of pinrun's modules (ARCHITECTURE.md §2 and §7), on two
# levels. The core: one node per top-level module of src/, each in a layer.
# A wing (issue 32, listed in WINGS below): a folder src/WING/ whose files are its layers (mod.rs
# the vocabulary, read.rs, plan.rs and check.rs, report.rs, apply.rs, run.rs), one node
# per file (`steer/plan`). An edge `from -> to` is every `crate::to` path
# (in a `use` line or a path; `//` comments and the `#[cfg(test)]` module,
# last in a file, are left out); a path into a wing names its file
# (`crate::steer::plan::X` is `steer/plan`, `crate::steer::Journal` is
# `steer/mod`), and so does a wing file's `super::`. Fails (exit 1) on a
# cycle, an edge that runs up a layer (a wing's file sits in the layer of
# its name, for edges inside the wing and to the core alike), an unknown
# module, or a core module other than the run layer's `app` importing a
# wing. Usage: scripts/import-graph.sh [SRC_DIR]; prints the edges, the
# layers, then "ok" or the faults.
set -euo pipefail
src=${1:-"$(dirname "$0")/../src"}
exec python3 - "$src" <<'PY'
import os, re, subprocess, sys

src = sys.argv[1]
# Layers, lowest first: a module may use modules of its own layer (without
# a cycle) or of lower layers only.
CORE = {
    0: "cpuset error words ffi request policy claim finding boot_params noise habits waits",  # vocabulary, FFI
    1: "system",                                       # reads
    2: "plan check",                                   # decides (pure)
    3: "report show manual completion output",         # renders, prints
    4: "apply exec",                                   # changes the process
    5: "cli app testkit lib main",                     # the run
}
NAMES = ["vocabulary", "system", "decide", "render", "apply", "run"]
WING_FILES = {"mod": 0, "read": 1, "plan": 2, "check": 2, "report": 3, "apply": 4, "run": 5}
# Wings: folders whose files are layers (ARCHITECTURE.md §3). Only `app`
# may import them; a wing imports the core and its own files.
WINGS = {"steer", "host", "probe", "fleet", "dump", "claims", "pid"}
core_layer = {m: l for l, ms in CORE.items() for m in ms.split()}

def layer(node):
    if "/" in node:
        return WING_FILES.get(node.split("/")[1], 9)
    return core_layer.get(node, 9)

def node_of(rel):
    parts = rel[:-3].split("/")
    if parts[0] in WINGS:
        return f"{parts[0]}/{parts[1] if len(parts) > 1 else 'mod'}"
    return parts[0]

PATH = re.compile(r"\b(crate|super)::((?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|[A-Za-z_][A-Za-z0-9_]*)(?:::[A-Za-z_{][^\s;,()<>]*)?)")

def targets(frm, kind, path):
    """The nodes a `crate::PATH` (or a wing file's `super::PATH`) names."""
    if kind == "super":
        if "/" not in frm:
            return []
        path = frm.split("/")[0] + "::" + path
    head, _, rest = path.partition("::")
    if head.startswith("{"):
        inner = head[1:-1]
        out = []
        depth, cur = 0, ""
        for ch in inner + ",":
            if ch == "{": depth += 1
            if ch == "}": depth -= 1
            if ch == "," and depth == 0:
                if cur.strip(): out += targets(frm, "crate", cur.strip())
                cur = ""
            else:
                cur += ch
        return out
    if head in WINGS:
        sub = re.match(r"\{?\s*([A-Za-z_][A-Za-z0-9_]*)", rest or "")
        if rest.startswith("{"):
            names = [n.strip().split("::")[0] for n in rest.strip("{}").split(",") if n.strip()]
            return [f"{head}/{n if n in WING_FILES else 'mod'}" for n in names]
        name = sub.group(1) if sub else "mod"
        return [f"{head}/{name if name in WING_FILES else 'mod'}"]
    return [head] if re.match(r"[a-z_]", head) else []

edges = set()
for dirpath, _, files in os.walk(src):
    for f in files:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, src)
        frm = node_of(rel)
        text = open(path, encoding="utf-8").read()
        text = text.split("\n#[cfg(test)]", 1)[0]
        text = "\n".join(l.split("//", 1)[0] for l in text.splitlines())
        text = re.sub(r"\s+", " ", text)
        for m in PATH.finditer(text):
            for to in targets(frm, m.group(1), m.group(2)):
                if to != frm and to != "self":
                    edges.add((frm, to))

# A wing's inherent `impl X { .. }` on a type the wing does not define (a
# core type, `impl StateDir` in claims/read.rs) adds methods that callers
# reach as `x.method(..)` or `X::method`, with no `crate::` path naming the
# wing. A call of such a method (`pub`, and named by no other `fn` in src,
# so that the name tells whose it is) from outside the wing is an edge to
# the wing's file: from another wing it is a wing importing a wing.
texts = {}
for dirpath, _, files in os.walk(src):
    for f in files:
        if f.endswith(".rs"):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)
            body = open(path, encoding="utf-8").read().split("\n#[cfg(test)]", 1)[0]
            texts[rel] = "\n".join(l.split("//", 1)[0] for l in body.splitlines())
wing_types = {}
for rel, body in texts.items():
    w = rel.split("/")[0]
    if w in WINGS:
        wing_types.setdefault(w, set()).update(
            re.findall(r"\b(?:struct|enum|type|trait|union)\s+([A-Z][A-Za-z0-9_]*)", body))
fn_count = {}
for body in texts.values():
    for n in re.findall(r"\bfn\s+([a-z_][a-z0-9_]*)", body):
        fn_count[n] = fn_count.get(n, 0) + 1
IMPL = re.compile(r"\bimpl(?:\s*<[^{]*?>)?\s+([A-Z][A-Za-z0-9_]*)(?:<[^{]*?>)?\s*\{")
inherent = {}  # method -> (wing file node, type)
for rel, body in texts.items():
    w = rel.split("/")[0]
    if w not in WINGS:
        continue
    for m in IMPL.finditer(body):
        if m.group(1) in wing_types.get(w, ()):
            continue
        depth, i = 1, m.end()
        while depth and i < len(body):
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            i += 1
        for n in re.findall(r"\bpub(?:\([^)]*\))?\s+fn\s+([a-z_][a-z0-9_]*)", body[m.end():i]):
            if fn_count.get(n) == 1:
                inherent[n] = (node_of(rel), m.group(1))
for rel, body in texts.items():
    frm = node_of(rel)
    for n, (to, ty) in inherent.items():
        if frm.split("/")[0] != to.split("/")[0] and re.search(rf"(?:\.|::)\s*{n}\s*\(", body):
            edges.add((frm, to))
            print(f"# inherent: {frm} calls {ty}::{n}, which {to} defines")

print("# edges (from -> to)")
for a, b in sorted(edges):
    print(f"{a} -> {b}")
print("# layers")
nodes = sorted({n for e in edges for n in e})
by_layer = {}
for n in nodes:
    by_layer.setdefault(layer(n), []).append(n)
for l in sorted(by_layer):
    name = NAMES[l] if l < len(NAMES) else "UNKNOWN"
    print(f"{l} {name}: " + " ".join(by_layer[l]))

fail = False
for a, b in sorted(edges):
    for n in (a, b):
        if layer(n) == 9:
            print(f"UNKNOWN: module {n} has no layer in scripts/import-graph.sh")
            fail = True
    if layer(a) < layer(b):
        print(f"UPWARD: {a} (layer {layer(a)}) -> {b} (layer {layer(b)})")
        fail = True
    if "/" in b and "/" not in a and a != "app":
        print(f"CORE IMPORTS A WING: {a} -> {b} (only app composes wings)")
        fail = True
    if "/" in a and "/" in b and a.split("/")[0] != b.split("/")[0]:
        print(f"WING IMPORTS A WING: {a} -> {b}")
        fail = True
tsort = subprocess.run(["tsort"], input="\n".join(f"{a} {b}" for a, b in sorted(edges)) + "\n",
                       capture_output=True, text=True)
if tsort.returncode != 0 or tsort.stderr.strip():
    print("CYCLE:")
    print(tsort.stderr, end="")
    fail = True
if not fail:
    print("ok: no cycle, no upward edge, no core module imports a wing")
sys.exit(1 if fail else 0)
PY
