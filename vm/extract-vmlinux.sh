#!/bin/sh
# vm/extract-vmlinux.sh VMLINUZ OUT: unpack the ELF vmlinux (it has the PVH
# entry note, so QEMU boots it without decompressing under TCG) from a
# bzImage, like linux/scripts/extract-vmlinux. xz (Debian 12), zstd (13), gzip.
set -eu
in=$1; out=$2
try() {  # $1 = magic (grep -P form), $2 = decompressor
  for off in $(LC_ALL=C grep -obUaP "$1" "$in" | cut -d: -f1); do
    tail -c +$((off + 1)) "$in" | $2 > "$out" 2>/dev/null || true
    if file "$out" | grep -q ELF; then return 0; fi
  done
  return 1
}
try '\xFD\x37\x7A\x58\x5A\x00' 'xz -dc' || try '\x28\xB5\x2F\xFD' 'zstd -dc' ||
  try '\x1F\x8B\x08' 'gzip -dc' || { rm -f "$out"; echo "extract-vmlinux: no kernel payload in $in" >&2; exit 1; }
