#!/usr/bin/env bash
# scripts/deb.sh: build the Debian package of pinrun and print its path
# (target/debian/pinrun_<version>-1_<arch>.deb, under CARGO_TARGET_DIR when
# set). What goes in it is [package.metadata.deb] in Cargo.toml; the
# maintainer script and the tmpfiles.d entry are in pkg/deb/.
#
# It needs cargo-deb: when `cargo deb` does not run it installs the version
# below into cargo's own bin directory (`cargo install --locked --force`,
# --force for a binary deleted but still in cargo's records; a few minutes'
# build, once). Everything else comes from the repository.
#
# The build is the static one of .cargo/config.toml for the host's own
# target. cargo-deb looks for binaries in target/release/ unless told the
# target, so it is named here: the binary is then
# target/<host triple>/release/pinrun, the one `cargo build --release` and
# `cargo install --path .` make. cargo-deb strips its symbol table in the
# package. Depends is empty: the binary links no shared library, so
# cargo-deb's $auto finds none (and warns "No $auto deps" for it).
set -euo pipefail
CARGO_DEB_VERSION=3.8.0
cd "$(dirname "$(readlink -f "$0")")/.."

if ! cargo deb --version >/dev/null 2>&1; then
  echo "deb.sh: cargo-deb is not installed: cargo install --locked --force cargo-deb@$CARGO_DEB_VERSION" >&2
  cargo install --quiet --locked --force "cargo-deb@$CARGO_DEB_VERSION" >&2 ||
    { echo "deb.sh: installing cargo-deb $CARGO_DEB_VERSION failed (see cargo's error above)" >&2; exit 1; }
fi
host=$(rustc -vV | sed -n 's/^host: //p')
[ -n "$host" ] || { echo "deb.sh: rustc -vV names no host target" >&2; exit 1; }

# cargo-deb prints the .deb's path as its last line of stdout.
out=$(cargo deb --target "$host") ||
  { echo "deb.sh: cargo deb --target $host failed (see its error above)" >&2; exit 1; }
deb=$(printf '%s\n' "$out" | tail -n 1)
case "$deb" in
  *.deb) [ -f "$deb" ] || { echo "deb.sh: cargo deb named $deb, which does not exist" >&2; exit 1; } ;;
  *) echo "deb.sh: cargo deb printed no .deb path (its output: $out)" >&2; exit 1 ;;
esac
echo "$deb"
