#!/bin/sh
# vm/setup.sh: install QEMU, static busybox and cpio (apt-get) when missing,
# and fetch the Debian kernel into $PINRUN_VM_CACHE (apt-get download +
# dpkg-deb -x; nothing is installed into /boot). Idempotent; prints the path
# of the PVH-bootable ELF vmlinux. KERNEL_SUITE=trixie fetches Debian 13's;
# KERNEL_SUITE=trixie-rt its PREEMPT_RT flavour (linux-image-rt-amd64, the
# one Debian builds with CONFIG_OSNOISE_TRACER and CONFIG_TIMERLAT_TRACER:
# linux-config-6.12's config.amd64_rt_amd64, not config.amd64_none_amd64).
set -eu
. "$(dirname "$(readlink -f "$0")")/lib.sh"
exec 9>"$PINRUN_VM_CACHE/setup.lock"
flock 9   # tests boot in parallel: one setup at a time
export DEBIAN_FRONTEND=noninteractive
need=
command -v qemu-system-x86_64 >/dev/null 2>&1 || need="$need qemu-system-x86"
[ -x /bin/busybox ] && file -L /bin/busybox | grep -q 'statically linked' || need="$need busybox-static"
for t in cpio:cpio xz:xz-utils zstd:zstd file:file; do
  command -v "${t%%:*}" >/dev/null 2>&1 || need="$need ${t#*:}"
done
if [ -n "$need" ]; then
  echo "vm/setup: apt-get install$need" >&2
  apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $need >&2
fi
kernel=${KERNEL_SUITE:-host}
suite=${kernel%-rt}   # the Debian suite; a -rt suffix names the flavour
meta=linux-image-amd64; [ "$suite" = "$kernel" ] || meta=linux-image-rt-amd64
# Another suite's apt state (for vm/run.sh's "#@ debs SUITE ..."), without
# its kernel: `KERNEL_SUITE=SUITE vm/setup.sh --apt`.
apt_state() {
  A=$PINRUN_VM_CACHE/apt-$suite; mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" > "$A/sources.list"
  O=$(kernel_apt_opts "$suite")
  apt-get $O update -qq >&2
}
if [ "${1:-}" = --apt ]; then
  [ "$suite" = host ] && exit 0
  ls "$PINRUN_VM_CACHE/apt-$suite/lists/"*_Packages* > /dev/null 2>&1 || apt_state
  exit 0
fi
K=$PINRUN_VM_CACHE/kernel-$kernel
if [ ! -s "$K/vmlinux" ]; then
  rm -rf "$K"; mkdir -p "$K/tmp"
  if [ "$suite" = host ]; then
    O=
  else  # another Debian suite, through a private apt state: the host's apt is untouched
    apt_state
  fi
  pkg=$(apt-cache $O depends $meta | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  if [ -z "$pkg" ] && [ "$suite" = host ]; then
    apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
    pkg=$(apt-cache depends $meta | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  fi
  [ -n "$pkg" ] || { echo "vm/setup: no linux-image package found" >&2; exit 1; }
  echo "vm/setup: downloading $pkg" >&2
  (cd "$K/tmp" && apt-get $O download "$pkg" >&2)
  dpkg-deb -x "$K"/tmp/"$pkg"_*.deb "$K/tmp/root"
  "$VM_DIR/extract-vmlinux.sh" "$K"/tmp/root/boot/vmlinuz-* "$K/vmlinux.new" >&2
  echo "$pkg" > "$K/package"
  rm -rf "$K/tmp"; mv "$K/vmlinux.new" "$K/vmlinux"
fi
echo "$K/vmlinux"
