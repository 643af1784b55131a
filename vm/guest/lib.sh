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
# The IRQs /proc/interrupts lists (its numbered rows), as the /proc
# reading sees them: "IRQ CPULIST NAME" with the effective affinity from
# /proc/irq/IRQ (- without that directory) and the device name, the row's
# last word.
irq_listed() {
  awk 'NR > 1 && $1 ~ /^[0-9]+:$/ {
    n = substr($1, 1, length($1) - 1); eff = "-"
    f = "/proc/irq/" n "/effective_affinity_list"
    if ((getline l < f) > 0 && l != "") eff = l
    close(f)
    print n, eff, $NF
  }' /proc/interrupts
}
# `irq_sysroot DIR interrupts|sysfs`: a directory for `pinrun --sysroot`
# laid out like / with one IRQ source: the live CPU and node trees and
# /proc/irq bind-mounted, plus /proc/interrupts (and no sys/kernel/irq:
# pinrun reads the IRQs from /proc/interrupts) or /sys/kernel/irq (and no
# proc/interrupts: the sysfs path must not need it); the few /proc files
# pinrun reads besides are copies (/proc/self/status with every online CPU
# allowed: below a sysroot it stands for the cgroup's cpuset, which lets
# the live pinrun use the isolated CPUs that init's affinity lacks).
irq_sysroot() {
  _r=$1
  mkdir -p "$_r/sys/devices/system/cpu" "$_r/sys/devices/system/node" \
    "$_r/proc/irq" "$_r/proc/self" "$_r/proc/sys/kernel"
  mount --bind /sys/devices/system/cpu "$_r/sys/devices/system/cpu"
  mount --bind /sys/devices/system/node "$_r/sys/devices/system/node"
  mount --bind /proc/irq "$_r/proc/irq"
  case $2 in
  interrupts) : > "$_r/proc/interrupts"; mount --bind /proc/interrupts "$_r/proc/interrupts" ;;
  sysfs) mkdir -p "$_r/sys/kernel/irq"; mount --bind /sys/kernel/irq "$_r/sys/kernel/irq" ;;
  *) echo "irq_sysroot: $2?" >&2; return 2 ;;
  esac
  cat /proc/cmdline > "$_r/proc/cmdline"
  taskset -c "$(cat /sys/devices/system/cpu/online)" cat /proc/self/status > "$_r/proc/self/status"
  for _f in osrelease sched_rt_period_us sched_rt_runtime_us numa_balancing; do
    cat "/proc/sys/kernel/$_f" > "$_r/proc/sys/kernel/$_f" 2>/dev/null
  done
  return 0
}
# Load the modules vm/run.sh put in /lib/modules ("#@ module NAME"), in
# the order of /lib/modules/order (dependencies first); prints each.
load_modules() {
  while read -r _m; do
    insmod "/lib/modules/$_m" || return 1
    echo "loaded $_m"
  done < /lib/modules/order
}
