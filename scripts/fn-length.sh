#!/usr/bin/env bash
# No function in src/ longer than a person can hold (issue 32): prints every
# function of more than MAX lines (default 120), counted from its `fn` line
# to its closing brace at the same indentation, and fails (exit 1) when
# there is one. Test code (a file's `#[cfg(test)]` module, last in the file)
# is not counted. Usage: scripts/fn-length.sh [SRC_DIR] [MAX]
set -euo pipefail
src=${1:-"$(dirname "$0")/../src"}
max=${2:-120}
find "$src" -name '*.rs' | sort | xargs awk -v max="$max" '
    FNR == 1 { open = 0; test = 0 }
    /^#\[cfg\(test\)\]/ { test = 1 }
    test { next }
    !open && match($0, /^[ \t]*(pub(\([^)]*\))? )?(const )?(unsafe )?(extern "C" )?fn [A-Za-z_][A-Za-z0-9_]*/) {
        line = substr($0, RSTART, RLENGTH)
        indent = $0; sub(/[^ \t].*$/, "", indent)
        name = line; sub(/.*fn /, "", name)
        # A declaration without a body, or a body on this one line.
        if ($0 ~ /;[ \t]*$/ && $0 !~ /\{/) next
        if ($0 ~ /\}[ \t]*$/ && $0 ~ /\{/) next
        open = 1; start = FNR
        next
    }
    open && $0 == indent "}" {
        n = FNR - start + 1
        if (n > max) { printf "%d %s %s:%d\n", n, name, FILENAME, start; bad++ }
        open = 0
    }
    END { if (bad) { printf "%d function(s) over %d lines\n", bad, max; exit 1 } }
'
echo "ok: no function over $max lines"
