# Guest-side helpers for vm/scenarios/*.sh. Each `run NAME CMD...` prints a
# block the host test (tests/vm.rs) parses:
#   @@@ NAME rc=N
#   @o <stdout line>...
#   @e <stderr line>...
#   @@@ end (uptime SECONDS)
run() {
  _n=$1; shift
  "$@" >/tmp/.o 2>/tmp/.e
  _rc=$?
  echo "@@@ $_n rc=$_rc"
  sed 's/^/@o /' /tmp/.o
  sed 's/^/@e /' /tmp/.e
  echo "@@@ end (uptime $(cut -d' ' -f1 /proc/uptime))"
}
# `show NAME FILE...`: the contents of files, as a block with rc=0.
show() { _n=$1; shift; run "$_n" cat "$@"; }
# Touch N MiB of anonymous memory in the current shell, then print its
# numa_maps: run as `pinrun ... -- sh -c ". /lib.sh; touch_and_maps 16"`.
touch_and_maps() {
  _x=$(head -c $(( $1 * 1024 * 1024 )) /dev/zero | tr '\0' a)
  cat /proc/$$/numa_maps
  echo "len=${#_x}"
}
# Every IRQ with an effective affinity: "IRQ CPULIST" lines.
irq_effective() {
  for d in /proc/irq/*/; do
    _i=${d#/proc/irq/}; _i=${_i%/}
    [ -r "$d/effective_affinity_list" ] && echo "$_i $(cat "$d/effective_affinity_list")"
  done
  return 0
}
