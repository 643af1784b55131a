#!/usr/bin/env bash
# The import graph between pinrun's top-level modules (ARCHITECTURE.md):
# one edge `from -> to` per module of src/ that names `crate::to` (in a
# `use` line or a path; `//` comments are ignored, and so is test code: a
# file's `#[cfg(test)]` module, last in the file, may use anything). Fails (exit 1) on a
# cycle or on an edge that runs up a layer. Usage: scripts/import-graph.sh
# [SRC_DIR]; prints the edges, then the layers, then "ok" or the faults.
set -euo pipefail
src=${1:-"$(dirname "$0")/../src"}

# Layers, lowest first: a module may use modules of its own layer (without
# a cycle) or of lower layers only.
layer_of() {
    case $1 in
        cpuset | error | words | ffi | request | policy | claim | finding | boot_params | fleet | noise | steer) echo 0 ;; # vocabulary, FFI
        system) echo 1 ;;                                                      # reads
        plan | check) echo 2 ;;                                                # decides (pure)
        report | show | emit | manual | completion | output) echo 3 ;;                     # renders, prints
        apply | exec | probe) echo 4 ;;                                             # changes the process
        cli | app | testkit | lib | main) echo 5 ;;                            # the run
        *) echo 9 ;;                                                           # unknown: fails
    esac
}
names=(vocabulary system decide render apply run "" "" "" UNKNOWN)

edges=$(
    find "$src" -name '*.rs' | sort | while read -r f; do
        rel=${f#"$src"/}
        from=${rel%%/*}
        from=${from%.rs}
        # Strip comments, join lines, then every `crate::x` and every name of
        # a `crate::{a, b::c}` group.
        sed -e '/^#\[cfg(test)\]/,$d' -e 's://.*$::' "$f" | tr '\n' ' ' |
            grep -oE 'crate::(\{[^}]*\}|[a-z_][a-z0-9_]*)' |
            sed -e 's/^crate:://' -e 's/[{}]//g' | tr ',' '\n' |
            sed -e 's/^ *//' -e 's/::.*//' -e 's/ .*//' | grep -E '^[a-z_]' |
            while read -r to; do
                [ "$to" != "$from" ] && echo "$from $to"
            done
    done | sort -u
)

echo "# edges (from -> to)"
echo "$edges" | awk 'NF { print $1 " -> " $2 }'
echo "# layers"
for m in $(echo "$edges" | tr ' ' '\n' | sort -u); do
    l=$(layer_of "$m")
    echo "$l ${names[$l]} $m"
done | sort -k1,1n -k3 | awk '{ k = $1 " " $2; if (k != last) { if (last != "") print line; line = k ":"; last = k } line = line " " $3 } END { print line }'

fail=0
while read -r from to; do
    [ -z "$from" ] && continue
    for m in "$from" "$to"; do
        if [ "$(layer_of "$m")" = 9 ]; then
            echo "UNKNOWN: module $m has no layer in $0"
            fail=1
        fi
    done
    if [ "$(layer_of "$from")" -lt "$(layer_of "$to")" ]; then
        echo "UPWARD: $from (layer $(layer_of "$from")) -> $to (layer $(layer_of "$to"))"
        fail=1
    fi
done <<<"$edges"
if ! echo "$edges" | tsort >/dev/null 2>/tmp/import-graph.$$; then
    echo "CYCLE:"; cat /tmp/import-graph.$$
    fail=1
elif [ -s /tmp/import-graph.$$ ]; then
    echo "CYCLE:"; cat /tmp/import-graph.$$
    fail=1
fi
rm -f /tmp/import-graph.$$
if [ $fail = 0 ]; then echo "ok: no cycle, no upward edge"; fi
exit $fail
