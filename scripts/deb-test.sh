#!/usr/bin/env bash
# scripts/deb-test.sh [DEB]: install the Debian package in a clean Debian
# root, use it, remove it, and check that nothing it installed is left.
# DEB defaults to what scripts/deb.sh builds. Needs root (chroot, mount,
# dpkg into another root); the host's own dpkg database and mounts are not
# touched: the root is a debootstrap'ed Debian 12 (minbase, with man-db for
# `man -w` and systemd-standalone-tmpfiles, systemd's tmpfiles.d without
# the rest) unpacked afresh from a tarball cached in $PINRUN_VM_CACHE
# (vm/lib.sh: /var/cache/pinrun-vm when writable), made once (~1.5 min).
#
# In the root:
#  1. dpkg -i with systemd-tmpfiles moved away (a minimal image): the
#     postinst must succeed and create nothing;
#  2. dpkg -i again with it: the postinst creates /run/pinrun 1777 root root
#     (pinrun(1) SECURITY), as the tmpfiles.d entry says;
#  3. pinrun --version, man -w pinrun, the completions and the example unit
#     from the installed paths; one launch as root (/usr/bin/pinrun --cpus C
#     -- cat /proc/self/status: Cpus_allowed_list C, C the first CPU this
#     script may use, 0 on most hosts) and one --exclusive launch as nobody,
#     which needs the state directory the package made;
#  4. dpkg -r: no path `dpkg -L` listed is left unless it was there before,
#     and the root's file list equals the one before step 1 but for man-db's
#     index and the state directory /run/pinrun (a tmpfs on a real host: it
#     holds live claims and goes at the next boot).
# /proc (systemd-tmpfiles refuses to work without it) and a read-only /sys
# (for the launches) are mounted in the root from step 1 to the end of step
# 3, in a private mount namespace, and unmounted on any exit.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
self="$repo/scripts/deb-test.sh"
suite=bookworm
mirror=http://deb.debian.org/debian
include=man-db,systemd-standalone-tmpfiles
path_in_root=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "deb-test: $*" >&2; exit 1; }
say() { echo "deb-test: $*" >&2; }

in_root() {   # in_root CMD...: run CMD in $root with a clean environment
  chroot "$root" /usr/bin/env -i PATH="$path_in_root" HOME=/root LC_ALL=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}

# The root's file list (path and type), but man-db's index, which its
# trigger rebuilds at dpkg -i and -r (it adds CACHEDIR.TAG files).
snapshot() {
  (cd "$root" && find . -xdev -printf '%p %y\n') | grep -Ev '^\./var/cache/man(/| )' | LC_ALL=C sort
}

# ---- inside a private mount namespace: the steps ----------------------------
inside() {
  root=$1 work=$2
  local deb_in_root=/tmp/pinrun.deb
  mounted=()
  umount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
      umount "${mounted[i]}" || echo "deb-test: umount ${mounted[i]} failed" >&2
    done
    mounted=()
  }
  trap umount_all EXIT

  snapshot > "$work/before.txt"
  # /proc as on any host (systemd-tmpfiles refuses to work without it) and a
  # read-only /sys for the launches, until the removal.
  mount -t proc -o nosuid,nodev,noexec proc "$root/proc" || die "mount proc on $root/proc failed"
  mounted+=("$root/proc")
  mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys" || die "mount sysfs (read-only) on $root/sys failed"
  mounted+=("$root/sys")

  # 1. no systemd-tmpfiles: the postinst skips it and succeeds.
  local tmpfiles_bin=usr/bin/systemd-tmpfiles
  [ -x "$root/$tmpfiles_bin" ] || die "the base root has no /$tmpfiles_bin (systemd-standalone-tmpfiles)"
  mv "$root/$tmpfiles_bin" "$work/systemd-tmpfiles.aside"
  if ! in_root dpkg -i "$deb_in_root" > "$work/dpkg-i-1.log" 2>&1; then
    mv "$work/systemd-tmpfiles.aside" "$root/$tmpfiles_bin"
    cat "$work/dpkg-i-1.log" >&2
    die "dpkg -i without systemd-tmpfiles failed (its output above)"
  fi
  mv "$work/systemd-tmpfiles.aside" "$root/$tmpfiles_bin"
  [ ! -e "$root/run/pinrun" ] || die "dpkg -i without systemd-tmpfiles: /run/pinrun exists, nothing should have made it"
  say "1. dpkg -i without systemd-tmpfiles: ok, postinst exit 0, no /run/pinrun"

  # 2. with systemd-tmpfiles: the postinst creates the state directory.
  in_root dpkg -i "$deb_in_root" > "$work/dpkg-i-2.log" 2>&1 ||
    { cat "$work/dpkg-i-2.log" >&2; die "dpkg -i with systemd-tmpfiles failed (its output above)"; }
  if grep -i 'warning\|error\|failed' "$work/dpkg-i-1.log" "$work/dpkg-i-2.log" >&2; then
    die "dpkg -i printed the warning or error above"
  fi
  local st
  st=$(in_root stat -c '%a %U %G %F' /run/pinrun) || die "after dpkg -i: no /run/pinrun (the postinst's systemd-tmpfiles --create pinrun.conf made none)"
  [ "$st" = "1777 root root directory" ] || die "/run/pinrun is '$st', not '1777 root root directory' (pinrun(1) SECURITY)"
  in_root grep -qx 'd /run/pinrun 1777 root root -' /usr/lib/tmpfiles.d/pinrun.conf ||
    die "/usr/lib/tmpfiles.d/pinrun.conf lacks the line 'd /run/pinrun 1777 root root -'"
  say "2. dpkg -i with systemd-tmpfiles: /run/pinrun is $st"

  # 3. the installed paths.
  local status version depends
  status=$(in_root dpkg-query -W -f='${Status}' pinrun)
  [ "$status" = "install ok installed" ] || die "dpkg-query: pinrun is '$status', not 'install ok installed'"
  version=$(in_root dpkg-query -W -f='${Version}' pinrun)
  depends=$(in_root dpkg-query -W -f='${Depends}${Pre-Depends}' pinrun)
  [ -z "$depends" ] || die "the package depends on '$depends': the binary should be static and need nothing (.cargo/config.toml)"
  local where out
  where=$(in_root sh -c 'command -v pinrun') || die "pinrun is not on PATH in the root"
  [ "$where" = /usr/bin/pinrun ] || die "pinrun on PATH is $where, not /usr/bin/pinrun"
  out=$(in_root pinrun --version) || die "pinrun --version failed"
  [ "$out" = "pinrun ${version%-*}" ] || die "pinrun --version says '$out', the package is $version"
  out=$(in_root man -w pinrun) || die "man -w pinrun failed"
  [ "$out" = /usr/share/man/man1/pinrun.1.gz ] || die "man -w pinrun gives '$out', not /usr/share/man/man1/pinrun.1.gz"
  out=$(in_root sh -c 'MANWIDTH=80 man -P cat pinrun 2>&1') || die "man pinrun failed: $out"
  grep -q '^INSTALLATION' <<<"$out" || die "man pinrun did not render its INSTALLATION section"
  local comp
  comp=$(in_root bash -c '. /usr/share/bash-completion/completions/pinrun && complete -p pinrun') ||
    die "the bash completion does not load"
  case "$comp" in *' pinrun') ;; *) die "the bash completion registers '$comp', not pinrun's" ;; esac
  in_root grep -q '^#compdef pinrun' /usr/share/zsh/vendor-completions/_pinrun ||
    die "/usr/share/zsh/vendor-completions/_pinrun is not pinrun's zsh completion"
  in_root grep -q '^complete -c pinrun' /usr/share/fish/vendor_completions.d/pinrun.fish ||
    die "/usr/share/fish/vendor_completions.d/pinrun.fish is not pinrun's fish completion"
  in_root grep -q '^ExecStart=.*pinrun' /usr/share/doc/pinrun/examples/trading-engine.service ||
    die "the example unit is not in /usr/share/doc/pinrun/examples/"
  [ -s "$root/usr/share/doc/pinrun/copyright" ] || die "/usr/share/doc/pinrun/copyright is missing"
  say "3. pinrun --version: pinrun ${version%-*}; man -w pinrun: /usr/share/man/man1/pinrun.1.gz; bash, zsh, fish completions; example unit; Depends: none"

  local cpu
  cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
  out=$(in_root /usr/bin/pinrun --cpus "$cpu" -- cat /proc/self/status) ||
    die "/usr/bin/pinrun --cpus $cpu -- cat /proc/self/status failed (exit $?)"
  grep -qx $'Cpus_allowed_list:\t'"$cpu" <<<"$out" ||
    die "the launch ran on '$(grep Cpus_allowed_list <<<"$out")', not CPU $cpu"
  out=$(chroot --userspec=nobody:nogroup "$root" /usr/bin/env -i PATH="$path_in_root" LC_ALL=C.UTF-8 \
    /usr/bin/pinrun --exclusive --cpus "$cpu" -- cat /proc/self/status) ||
    die "as nobody, /usr/bin/pinrun --exclusive --cpus $cpu failed (exit $?): the state directory /run/pinrun should let any user claim"
  grep -qx $'Cpus_allowed_list:\t'"$cpu" <<<"$out" ||
    die "nobody's --exclusive launch ran on '$(grep Cpus_allowed_list <<<"$out")', not CPU $cpu"
  grep -qx $'Uid:\t65534\t65534\t65534\t65534' <<<"$out" || die "the --exclusive launch did not run as nobody"
  umount_all
  say "   launches from /usr/bin/pinrun: --cpus $cpu as root and --exclusive --cpus $cpu as nobody: Cpus_allowed_list $cpu"

  # 4. dpkg -r leaves nothing it installed.
  in_root dpkg -L pinrun > "$work/dpkg-L.txt" || die "dpkg -L pinrun failed"
  in_root dpkg -r pinrun > "$work/dpkg-r.log" 2>&1 ||
    { cat "$work/dpkg-r.log" >&2; die "dpkg -r pinrun failed (its output above)"; }
  status=$(in_root dpkg-query -W -f='${Status}' pinrun 2>/dev/null || true)
  case "$status" in "" | *not-installed) ;; *) die "after dpkg -r, pinrun is '$status'" ;; esac
  local p left=()
  while IFS= read -r p; do
    [ -e "$root$p" ] || [ -L "$root$p" ] || continue
    grep -qxF ".$p d" "$work/before.txt" || left+=("$p")
  done < <(grep -v '^/\.$' "$work/dpkg-L.txt")
  [ ${#left[@]} -eq 0 ] || die "dpkg -r left what the package installed: ${left[*]}"
  snapshot | grep -Ev '^\./run/pinrun(/| )' > "$work/after.txt"
  if ! diff "$work/before.txt" "$work/after.txt" > "$work/tree.diff"; then
    cat "$work/tree.diff" >&2
    die "after dpkg -r the root differs from before dpkg -i (diff before after above)"
  fi
  say "4. dpkg -r: none of the $(grep -vc '^/\.$' "$work/dpkg-L.txt") paths of dpkg -L left but directories there before; the root's $(wc -l < "$work/before.txt") paths as before, but /run/pinrun"
}

if [ "${1:-}" = --inside ]; then
  shift
  inside "$@"
  exit 0
fi

# ---- outside: the package, the base root, the namespace ---------------------
start=$(date +%s)
[ "$(id -u)" = 0 ] || die "needs root: it unpacks a Debian root, mounts /proc and /sys in it and runs dpkg there"
for t in chroot unshare mount tar gzip flock dpkg-deb; do
  command -v "$t" >/dev/null 2>&1 || die "$t is missing (coreutils, util-linux, tar, gzip, dpkg)"
done
deb=${1:-}
if [ -z "$deb" ]; then
  deb=$("$repo/scripts/deb.sh") || die "scripts/deb.sh failed"
fi
[ -f "$deb" ] || die "$deb: no such package"
say "package $deb ($(stat -c %s "$deb") bytes)"

. "$repo/vm/lib.sh"   # PINRUN_VM_CACHE, as for the VM kernels
base="$PINRUN_VM_CACHE/chroot-$suite-minbase-${include//,/+}.tar.gz"
exec 9>"$PINRUN_VM_CACHE/chroot.lock"
flock 9
if [ ! -s "$base" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    say "apt-get install debootstrap"
    apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends debootstrap >&2 ||
      die "apt-get install debootstrap failed"
  fi
  say "debootstrap --variant=minbase --include=$include $suite (once, into $base)"
  tmp=$(mktemp -d "$PINRUN_VM_CACHE/chroot.XXXXXX")
  if ! debootstrap --variant=minbase --include="$include" "$suite" "$tmp/root" "$mirror" > "$tmp/debootstrap.log" 2>&1; then
    tail -n 20 "$tmp/debootstrap.log" >&2
    [ -f "$tmp/root/debootstrap/debootstrap.log" ] && tail -n 20 "$tmp/root/debootstrap/debootstrap.log" >&2
    rm -rf "$tmp"
    die "debootstrap $suite from $mirror failed (its log's end above)"
  fi
  rm -rf "$tmp"/root/var/cache/apt/archives/*.deb "$tmp"/root/var/lib/apt/lists/*_Packages* "$tmp"/root/var/cache/apt/*.bin
  tar -C "$tmp/root" --numeric-owner -czf "$tmp/base.tar.gz" . || { rm -rf "$tmp"; die "packing the base root failed"; }
  mv "$tmp/base.tar.gz" "$base"
  rm -rf "$tmp"
fi
exec 9>&-   # unlock

work=$(mktemp -d "${TMPDIR:-/tmp}/pinrun-deb-test.XXXXXX")
cleanup() {
  # The mounts lived in the namespace of the --inside run, gone with it;
  # never delete through one that is somehow still there.
  if grep -qF " $work/" /proc/self/mountinfo; then
    echo "deb-test: something is still mounted under $work: left in place" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
root="$work/root"
mkdir "$root"
tar -C "$root" --numeric-owner -xpzf "$base" || die "unpacking $base into $root failed"
cp "$deb" "$root/tmp/pinrun.deb"
unshare --mount --propagation private -- "$self" --inside "$root" "$work" ||
  die "FAILED (the step above says why)"
say "passed in $(($(date +%s) - start))s"
