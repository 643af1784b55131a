#!/bin/sh
# vm/rootfs.sh NAME: build once, cache and print the path of a Debian root
# file system for the guests' "#@ rootfs NAME" (vm/run.sh), a tarball in
# $PINRUN_VM_CACHE whose name carries its suite and package list, so that a
# changed list builds a new one. Idempotent; installs debootstrap with
# apt-get when missing. Roots:
#   systemd   Debian 12 (bookworm) minbase with systemd 252 as /sbin/init
#             (systemd-sysv), dbus, and procps; ~230 MB unpacked,
#             ~1.5-3 min to build from a cold cache (network bound)
#   runc      systemd plus Debian's runc 1.1 (OCI runtime; its systemd
#             cgroup driver creates kubelet-shaped slices and scopes over
#             D-Bus) and busybox-static (a container's only tool besides
#             pinrun, vm/scenarios/k8s-runc.sh)
#   slurm     systemd's root plus slurm-wlm 22.05 (slurmctld, slurmd,
#             slurm-client), munge with its key (munge's postinst makes
#             one; else 1 KiB of urandom here) and iproute2; their Debian
#             units are enabled, their configuration comes with each boot
#             (vm/guest/root-slurm/); ~120 MB unpacked, 43 MB packed,
#             ~2-3 min from a cold cache
# The documentation, man pages, locales and apt's package lists are left
# out (the guests unpack the root into RAM on every boot).
set -eu
. "$(dirname "$(readlink -f "$0")")/lib.sh"
name=${1:?usage: vm/rootfs.sh NAME}
mirror=${PINRUN_VM_MIRROR:-http://deb.debian.org/debian}
case $name in
systemd) suite=bookworm include=systemd,systemd-sysv,dbus,procps ;;
runc) suite=bookworm include=systemd,systemd-sysv,dbus,procps,runc,busybox-static ;;
slurm) suite=bookworm include=systemd,systemd-sysv,dbus,procps,iproute2,munge,slurmctld,slurmd,slurm-client ;;
*) echo "vm/rootfs: unknown root $name" >&2; exit 2 ;;
esac
out=$PINRUN_VM_CACHE/rootfs-$suite-minbase-$(echo "$include" | tr , +).tar.gz
exec 9>"$PINRUN_VM_CACHE/rootfs.lock"
flock 9   # tests boot in parallel: one build at a time
if [ ! -s "$out" ]; then
  start=$(date +%s)
  if ! command -v debootstrap > /dev/null 2>&1; then
    echo "vm/rootfs: apt-get install debootstrap" >&2
    apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends debootstrap >&2
  fi
  [ -r /usr/share/keyrings/debian-archive-keyring.gpg ] || {
    apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends debian-archive-keyring >&2
  }
  echo "vm/rootfs: debootstrap --variant=minbase --include=$include $suite (once, into $out)" >&2
  tmp=$(mktemp -d "$PINRUN_VM_CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  if ! debootstrap --variant=minbase --include="$include" \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
    "$suite" "$tmp/root" "$mirror" > "$tmp/debootstrap.log" 2>&1; then
    tail -n 20 "$tmp/debootstrap.log" >&2
    [ -f "$tmp/root/debootstrap/debootstrap.log" ] && tail -n 20 "$tmp/root/debootstrap/debootstrap.log" >&2
    echo "vm/rootfs: debootstrap $suite from $mirror failed (its log's end above)" >&2
    exit 1
  fi
  r=$tmp/root
  if [ -d "$r/etc/munge" ] && [ ! -s "$r/etc/munge/munge.key" ]; then
    # munge's postinst makes none when it cannot: 1 KiB of urandom, the
    # munge user's alone (numeric ids: the root's, not this host's)
    dd if=/dev/urandom of="$r/etc/munge/munge.key" bs=1024 count=1 2> /dev/null
    ids=$(awk -F: '$1 == "munge" {print $3 ":" $4}' "$r/etc/passwd")
    chown "$ids" "$r/etc/munge/munge.key"; chmod 400 "$r/etc/munge/munge.key"
  fi
  rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/*_* "$r"/var/cache/apt/*.bin \
    "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/* \
    "$r"/var/log/*.log "$r"/debootstrap
  tar -C "$r" --numeric-owner -czf "$tmp/root.tar.gz" .
  mv "$tmp/root.tar.gz" "$out"
  echo "vm/rootfs: $out built in $(($(date +%s) - start))s ($(du -m "$out" | cut -f1) MB)" >&2
fi
echo "$out"
