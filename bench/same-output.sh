#!/usr/bin/env bash
# Issue 17: two builds must print the same thing (stdout, stderr, exit
# status) on every machine dump of tests/data/machines for `--check`,
# `--check --cpus 0` and a full latency-critical dry run, and on the
# synthetic 4096-CPU, 10 000-IRQ dump when bench/run has generated it.
# Usage: bench/same-output.sh BEFORE_PINRUN NOW_PINRUN
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# = 2 ] || { echo "usage: bench/same-output.sh BEFORE NOW" >&2; exit 2; }
dumps=(tests/data/machines/*/*.tar.gz)
big=${SYSROOTS:-bench/out/sysroots}/c4096-n16-i10000-smt
[ -d "$big" ] && dumps+=("$big")
n=0 bad=0
for d in "${dumps[@]}"; do
  for args in "--check --json" "--check --cpus 0 --json" "--dry-run --json --node 0 --cores 1 --fifo 10 --membind -- true"; do
    # shellcheck disable=SC2086
    a=$("$1" --sysroot "$d" $args 2>&1; echo "exit $?")
    # shellcheck disable=SC2086
    b=$("$2" --sysroot "$d" $args 2>&1; echo "exit $?")
    n=$((n + 1))
    [ "$a" = "$b" ] || { bad=$((bad + 1)); echo "differs: $d $args"; }
  done
done
echo "$n runs compared, $bad differ"
[ "$bad" = 0 ]
