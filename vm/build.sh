#!/bin/sh
# vm/build.sh: build a static pinrun for the guest (gnu target, +crt-static)
# in its own target dir, so the ordinary build is not invalidated; print its path.
# PINRUN_VM_TARGET_DIR overrides the dir (default: ${CARGO_TARGET_DIR:-target}/vm-static).
set -eu
. "$(dirname "$(readlink -f "$0")")/lib.sh"
cd "$REPO_DIR"
T=${PINRUN_VM_TARGET_DIR:-${CARGO_TARGET_DIR:-$REPO_DIR/target}/vm-static}
CARGO_TARGET_DIR=$T RUSTFLAGS='-C target-feature=+crt-static' \
  cargo build --quiet --release --target x86_64-unknown-linux-gnu --bin pinrun >&2
bin=$T/x86_64-unknown-linux-gnu/release/pinrun
file "$bin" | grep -q 'static' || { echo "vm/build: $bin is not static" >&2; exit 1; }
echo "$bin"
