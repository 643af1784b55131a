#!/usr/bin/env bash
# Packs machine dumps into the test archives, reproducibly: one .tar.gz per
# machine, holding the directory `<machine>/` with the dump and the peer
# tools' expected outputs beside it, byte for byte. Entries are sorted by
# name, owned by 0:0, dated 2000-01-01 00:00 UTC, with the write bit for the
# owner only (the trees were read-only); symlinks are kept as symlinks, empty
# files and trailing NUL bytes as they are. gzip -n stores no name or date,
# so packing the same tree twice gives the same bytes (with the same gzip).
#
# Symlinks flattened by a copy are restored first: a regular file whose
# whole content is a relative path starting with `../` (no newline; no
# sysfs or procfs file reads like that) and that resolves to an existing
# path inside its own machine becomes that symlink again (`cpuN/nodeM ->
# ../../node/nodeM`, `nodeM/cpuN`, `cpuN/cpufreq -> ../cpufreq/policyK`,
# `sys/bus/*/devices/*`). The team's copy of the dumps had every link
# flattened this way; a tree that has its links is packed as it is.
#
#   tests/data/pack.sh machines FIXTURES_DIR   # FIXTURES_DIR/<source>/<machine>/
#                                              #   -> tests/data/machines/<source>/<machine>.tar.gz
#   tests/data/pack.sh cases CASES_DIR         # CASES_DIR/<case>/
#                                              #   -> tests/data/cases/<case>.tar.gz
#
# Directories starting with `_` (e.g. nto/_ppc-expected-profiles) are packed
# the same way; the tests' machines() skips them. SOURCES.md (provenance)
# and cases/README.md are written by hand, not by this script.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kind=${1:?usage: pack.sh machines|cases DIR}
src=$(cd "${2:?usage: pack.sh machines|cases DIR}" && pwd)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

relink() { # dir: restores flattened symlinks below dir (see above)
  python3 - "$1" <<'PY'
import os, re, sys
top = os.path.realpath(sys.argv[1])
for root, _, files in os.walk(top):
    for f in files:
        p = os.path.join(root, f)
        if os.path.islink(p) or os.path.getsize(p) > 4096:
            continue
        with open(p, "rb") as fh:
            b = fh.read()
        if not re.fullmatch(rb"(\.\./)+[A-Za-z0-9_.:+-]+(/[A-Za-z0-9_.:+-]+)*", b):
            continue
        t = os.path.normpath(os.path.join(root, b.decode()))
        if t.startswith(top + "/") and os.path.exists(t):
            os.remove(p)
            os.symlink(b.decode(), p)
PY
}

pack() { # parent-dir name out.tar.gz
  local tmp="$3.tmp"
  rm -rf "${stage:?}"/*
  cp -a "$1/$2" "$stage/$2"
  chmod -R u+w "$stage/$2"
  relink "$stage/$2"
  tar --sort=name --format=gnu --mtime='2000-01-01 00:00:00Z' \
    --owner=0 --group=0 --numeric-owner --mode='u+w,go-w' \
    --no-acls --no-xattrs --no-selinux \
    -C "$stage" -cf - "$2" | gzip -9 -n >"$tmp"
  mv "$tmp" "$3"
}

case $kind in
machines)
  out=$here/machines
  for s in "$src"/*/; do
    s=$(basename "$s")
    mkdir -p "$out/$s"
    for m in "$src/$s"/*/; do
      m=$(basename "$m")
      pack "$src/$s" "$m" "$out/$s/$m.tar.gz"
    done
  done
  ;;
cases)
  out=$here/cases
  mkdir -p "$out"
  for c in "$src"/*/; do
    c=$(basename "$c")
    pack "$src" "$c" "$out/$c.tar.gz"
  done
  ;;
*)
  echo "usage: pack.sh machines|cases DIR" >&2
  exit 2
  ;;
esac
