#!/bin/sh
# vm/run.sh SCENARIO [LOG]: boot one scenario (vm/scenarios/SCENARIO.sh) under
# QEMU with the static pinrun, and write the guest's console to LOG (default
# $PINRUN_VM_CACHE/logs/SCENARIO.log). Exit 0 when the guest ran the scenario
# to the end (the host test judges the output); 2 when it did not boot or hung
# (after one retry), with the console's tail on stderr.
# Env: PINRUN_VM_BIN (static pinrun; default: vm/build.sh builds one),
#      PINRUN_VM_TIMEOUT (seconds per boot, default 120), PINRUN_VM_CACHE,
#      PINRUN_VM_APPEND (kernel parameters after the scenario's own: a
#      command line the host test learnt from an earlier boot).
# Header lines of a scenario: "#@ topology NAME" (vm/boot.sh), "#@ append ARGS"
# (extra kernel parameters), "#@ kernel SUITE" (host = this Debian's, or e.g. trixie),
# "#@ timeout SECONDS" (a scenario that runs longer than the default 120 s;
# PINRUN_VM_TIMEOUT overrides every scenario's), "#@ helper NAME GCC-FLAGS"
# (each such line: tests/helpers/NAME.c built with gcc -static GCC-FLAGS into
# the guest's /bin/NAME), "#@ module NAME" (each such line: the kernel's module
# NAME and its dependencies in the guest's /lib/modules, vm/modules.sh; the
# scenario loads them with load_modules), "#@ rootfs NAME" (a Debian root
# from vm/rootfs.sh instead of busybox, booted with rdinit=/lib/systemd/systemd:
# systemd 252 is PID 1 and runs the scenario as pinrun-scenario.service,
# vm/guest/systemd/; give it RAM: topology wide or wideplain; the files of
# vm/guest/root-NAME/, when there is one, go over the root), "#@ accel ARGS"
# (QEMU's -accel instead of tcg, e.g. tcg,thread=single) and "#@ qemu ARGS"
# (more QEMU options, e.g. -icount shift=auto,sleep=off); PINRUN_VM_ACCEL and
# PINRUN_VM_QEMU override these two for every scenario (for trying one).
# "#@ serial-feed BYTES QUIET_MS": a second serial port, the guest's ttyS1
# (16550A at I/O 0x2f8, IRQ 3), whose input comes from the host at a set
# rate and whose output is discarded (a QEMU pipe chardev over a FIFO and a
# /dev/null symlink beside this run's root): vm/serial-feed.c, built with
# gcc and run for the whole boot, writes BYTES zero bytes into the FIFO,
# waits until QEMU has read them all, sleeps QUIET_MS, and again; QEMU
# reads only while ttyS1's receive FIFO has room, and the guest takes the
# bytes only while it holds ttyS1 open (closed, the 8250 driver leaves its
# interrupts off): receive interrupts with no guest CPU writing, and after
# each burst QUIET_MS with none, however slowly the guest runs. Its line
# (how many bursts, how long each took) goes to stderr at the end.
set -eu
. "$(dirname "$(readlink -f "$0")")/lib.sh"
name=$1
scen=$VM_DIR/scenarios/$name.sh
[ -f "$scen" ] || { echo "vm/run: no scenario $scen" >&2; exit 2; }
mkdir -p "$PINRUN_VM_CACHE/logs"
log=${2:-$PINRUN_VM_CACHE/logs/$name.log}
hdr() { sed -n "s/^#@ $1 //p" "$scen" | head -1; }
topo=$(hdr topology); topo=${topo:-basic}
VM_ACCEL=${PINRUN_VM_ACCEL:-$(hdr accel)}; VM_QEMU=${PINRUN_VM_QEMU-$(hdr qemu)}
export VM_ACCEL VM_QEMU
append="$(hdr append) ${PINRUN_VM_APPEND:-}"
suite=$(hdr kernel); suite=${suite:-host}
kernel=$(KERNEL_SUITE=$suite "$VM_DIR/setup.sh")
bin=${PINRUN_VM_BIN:-$("$VM_DIR/build.sh")}

root=$(mktemp -d); chmod 755 "$root"   # mktemp's 0700 would keep uid 1000 out
feeder=
cleanup() {
  [ -z "$feeder" ] || { kill "$feeder" 2>/dev/null || true; wait "$feeder" || true; }
  rm -rf "$root" "$root.debs" "$root.cpio.gz" "$root.feeder" "$root.feed.in" "$root.feed.out"
}
trap cleanup EXIT
# shellcheck disable=SC2046  # the header's two words
set -- $(hdr serial-feed)
if [ $# -gt 0 ]; then
  [ $# -eq 2 ] || { echo "vm/run: #@ serial-feed: want BYTES QUIET_MS, got: $*" >&2; exit 2; }
  gcc -O2 "$VM_DIR/serial-feed.c" -o "$root.feeder" ||
    { echo "vm/run: gcc could not build vm/serial-feed.c (apt-get install gcc)" >&2; exit 2; }
  # QEMU's pipe chardev PATH opens PATH.in (read) and PATH.out (written)
  mkfifo "$root.feed.in"; ln -s /dev/null "$root.feed.out"
  VM_FEED=$root.feed feed_rate="$1 $2"
else
  VM_FEED=
fi
export VM_FEED
rootfs=$(hdr rootfs)
if [ -n "$rootfs" ]; then
  # "#@ rootfs NAME": a Debian root from vm/rootfs.sh (cached) whose own init
  # is PID 1: for systemd, /lib/systemd/systemd runs pinrun-scenario.service
  # (vm/guest/systemd/), which runs /scenario and powers off.
  tarball=$("$VM_DIR/rootfs.sh" "$rootfs")
  tar -C "$root" --numeric-owner -xpzf "$tarball"
  cp "$bin" "$root/usr/bin/pinrun"   # /bin/pinrun: /bin is usr/bin
  ln -s /usr/bin/pinrun "$root/usr/local/bin/pinrun"   # the docs' path
  cp "$VM_DIR/guest/systemd/engine" "$root/usr/local/bin/engine"; chmod 755 "$root/usr/local/bin/engine"
  cp "$VM_DIR/guest/systemd/run-scenario" "$root/run-scenario"
  S=$root/etc/systemd/system
  # docs/deploy.md's recipes: the units (not enabled) and the emission
  # commands (/recipes/NAME.sh) the scenario runs
  cp "$VM_DIR"/guest/systemd/units/*.service "$VM_DIR/guest/systemd/pinrun-scenario.service" "$S/"
  mkdir "$root/recipes"; cp "$VM_DIR"/guest/systemd/units/*.sh "$root/recipes/"
  # vm/guest/root-NAME/, when there is one, goes over root NAME (the
  # Slurm guest's configuration, host name and job files)
  [ ! -d "$VM_DIR/guest/root-$rootfs" ] || cp -R "$VM_DIR/guest/root-$rootfs/." "$root/"
  mkdir -p "$S/multi-user.target.wants"
  ln -s ../pinrun-scenario.service "$S/multi-user.target.wants/"
  # No logins on the console the scenario prints to; no devices to wait for.
  for u in getty@tty1.service serial-getty@ttyS0.service; do ln -sfn /dev/null "$S/$u"; done
  rm -f "$S/getty.target.wants/getty@tty1.service"
  append="rdinit=/lib/systemd/systemd $append"
else
  mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/etc"
  cp /bin/busybox "$root/bin/busybox"
  cp "$bin" "$root/bin/pinrun"
  cp "$VM_DIR/guest/init" "$root/init"; chmod 755 "$root/init"
  printf 'root:x:0:0:root:/:/bin/sh\ntest:x:1000:1000:test:/tmp:/bin/sh\n' > "$root/etc/passwd"
  printf 'root:x:0:\ntest:x:1000:\n' > "$root/etc/group"
fi
cp "$VM_DIR/guest/lib.sh" "$root/lib.sh"
cp "$scen" "$root/scenario"
sed -n 's/^#@ helper //p' "$scen" | while read -r hname hflags; do
  # shellcheck disable=SC2086  # the flags are words
  gcc -static $hflags "$REPO_DIR/tests/helpers/$hname.c" -o "$root/bin/$hname" ||
    { echo "vm/run: gcc could not build helper $hname (apt-get install gcc libgomp1)" >&2; exit 2; }
done
# "#@ debs SUITE PROGRAM PKG...": PROGRAM (an absolute path) from Debian
# SUITE's packages PKG... (the program's and its libraries'), fetched once
# into $PINRUN_VM_CACHE/debs-SUITE through setup.sh's private apt state;
# the program, the libraries its own ld.so lists and that ld.so go into
# the guest (/lib64 -> usr/lib64).
sed -n 's/^#@ debs //p' "$scen" | while read -r dsuite dprog dpkgs; do
  D=$PINRUN_VM_CACHE/debs-$dsuite; A=$PINRUN_VM_CACHE/apt-$dsuite
  O="-o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$A/lists -o Dir::Cache=$A/cache -o Dir::State::status=/dev/null"
  KERNEL_SUITE=$dsuite "$VM_DIR/setup.sh" --apt   # the apt state (no kernel)
  mkdir -p "$D/debs"
  for p in $dpkgs; do
    ls "$D/debs/${p}_"*.deb > /dev/null 2>&1 && continue
    # shellcheck disable=SC2086  # the options are words
    (cd "$D/debs" && { apt-get $O download "$p" || { apt-get $O update -qq && apt-get $O download "$p"; }; } >&2 2>/dev/null) ||
      { echo "vm/run: cannot download $p from Debian $dsuite" >&2; exit 2; }
  done
  # Unpacked beside this run's root, not in the shared cache: two scenarios
  # booting at once (cargo test's threads) would unpack into each other's.
  X=$root.debs; rm -rf "$X"; for f in "$D"/debs/*.deb; do dpkg-deb -x "$f" "$X"; done
  # usr-merged packages (trixie) ship /usr/lib64 and /usr/lib/...; bookworm's
  # /lib64 and /lib/x86_64-linux-gnu.
  ld=$(ls "$X"/usr/lib64/ld-linux-x86-64.so.2 "$X"/lib64/ld-linux-x86-64.so.2 2>/dev/null | head -1)
  mkdir -p "$root$(dirname "$dprog")" "$root/usr/lib64"
  cp "$X$dprog" "$root$dprog"; cp "$ld" "$root/usr/lib64/"; ln -sfn usr/lib64 "$root/lib64"
  "$ld" --library-path "$X/usr/lib/x86_64-linux-gnu:$X/lib/x86_64-linux-gnu" --list "$X$dprog" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
    while read -r l; do mkdir -p "$root$(dirname "${l#"$X"}")"; cp -L "$l" "$root${l#"$X"}"; done
done
mods=$(sed -n 's/^#@ module //p' "$scen")
# shellcheck disable=SC2086  # the names are words
[ -z "$mods" ] || "$VM_DIR/modules.sh" "$suite" "$root" $mods ||
  { echo "vm/run: vm/modules.sh could not provide modules $mods" >&2; exit 2; }
chmod 644 "$root/lib.sh" "$root/scenario"
# A Debian root goes in uncompressed: the guest's kernel would gunzip its
# ~110 MB under TCG at every boot.
[ -n "$rootfs" ] && z=cat || z="gzip -1"
# (written beside the root, not in it: find would list a file being written)
(cd "$root" && find . | cpio -o -H newc --quiet | $z > "$root.cpio.gz")

# the feeder runs across both tries: QEMU reads whatever burst is left
# shellcheck disable=SC2086  # BYTES QUIET_MS
[ -z "$VM_FEED" ] || { "$root.feeder" "$root.feed.in" $feed_rate & feeder=$!; }
for try in 1 2; do
  start=$(date +%s.%N)
  timeout "${PINRUN_VM_TIMEOUT:-$(hdr timeout | grep -x '[0-9]*' || echo 120)}" "$VM_DIR/boot.sh" "$topo" "$kernel" "$root.cpio.gz" "$append" \
    > "$log" 2>&1 < /dev/null || true
  secs=$(echo "$(date +%s.%N) $start" | awk '{printf "%.1f", $1 - $2}')
  if grep -q '^=== done' "$log"; then
    echo "vm/run: $name: booted and ran in ${secs}s (try $try; topology $topo; kernel $(basename "$(dirname "$kernel")")); log $log" >&2
    exit 0
  fi
  echo "vm/run: $name: the guest did not finish in ${secs}s (try $try); console:" >&2
  tail -n 40 "$log" | sed 's/^/  | /' >&2
done
echo "vm/run: $name: FAILED to boot or hung twice; full console log: $log" >&2
exit 2
