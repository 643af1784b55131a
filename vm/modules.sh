#!/bin/sh
# vm/modules.sh SUITE DEST MODULE...: put the named kernel modules of the
# guest's kernel (KERNEL_SUITE SUITE, vm/setup.sh) and every module they
# depend on (their `depends=` modinfo field, transitively) into
# DEST/lib/modules, uncompressed (busybox insmod reads plain ELF), with
# DEST/lib/modules/order: one file name a line, dependencies first (the
# guest's `load_modules`, vm/guest/lib.sh, insmods them in that order).
# The kernel package's lib/modules tree is extracted once into
# $PINRUN_VM_CACHE/kernel-SUITE/modules (apt-get download + dpkg-deb, as
# vm/setup.sh; nothing is installed).
set -eu
. "$(dirname "$(readlink -f "$0")")/lib.sh"
suite=$1 dest=$2; shift 2
K=$PINRUN_VM_CACHE/kernel-$suite
[ -s "$K/package" ] || { echo "vm/modules: no kernel in $K (run vm/setup.sh)" >&2; exit 2; }
exec 9>"$PINRUN_VM_CACHE/setup.lock"
flock 9
if [ ! -d "$K/modules" ]; then
  pkg=$(cat "$K/package")
  rm -rf "$K/mtmp"; mkdir -p "$K/mtmp"
  # shellcheck disable=SC2046  # the options are words
  (cd "$K/mtmp" && apt-get $(kernel_apt_opts "$suite") download "$pkg" >&2)
  dpkg-deb --fsys-tarfile "$K"/mtmp/"$pkg"_*.deb | tar -x -C "$K/mtmp" ./lib/modules
  mv "$K"/mtmp/lib/modules/* "$K/modules.new"
  rm -rf "$K/mtmp"; mv "$K/modules.new" "$K/modules"
fi
flock -u 9
mkdir -p "$dest/lib/modules"
: > "$dest/lib/modules/order"
# The module file of NAME (- and _ are the same in module names).
file_of() {
  local _p
  _p=$(printf '%s' "$1" | sed 's/[-_]/[-_]/g')
  find "$K/modules/kernel" -regex ".*/$_p\.ko\(\.xz\|\.zst\|\.gz\)?" | head -1
}
plain() {
  case $1 in
  *.xz) xz -dc "$1" ;; *.zst) zstd -qdc "$1" ;; *.gz) gzip -dc "$1" ;; *) cat "$1" ;;
  esac
}
# Depth first: a module's dependencies are written before it.
add() {
  local _n _f _d
  _n=$(printf '%s' "$1" | tr - _)
  grep -qx "$_n.ko" "$dest/lib/modules/order" && return 0
  _f=$(file_of "$1")
  [ -n "$_f" ] || { echo "vm/modules: no module $1 in $K/modules" >&2; exit 2; }
  plain "$_f" > "$dest/lib/modules/$_n.ko"
  for _d in $(tr '\0' '\n' < "$dest/lib/modules/$_n.ko" | sed -n 's/^depends=//p' | tr , ' '); do
    add "$_d"
  done
  echo "$_n.ko" >> "$dest/lib/modules/order"
}
for m in "$@"; do add "$m"; done
