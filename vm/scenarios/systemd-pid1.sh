# Issue 34: systemd 252 (Debian 12) as PID 1 runs the docs/deploy.md
# recipes (vm/guest/systemd/units/, installed in /etc/systemd/system; the
# stand-in /usr/local/bin/engine marks /tmp/engine.PID and sleeps), and each
# unit's main process is read back from the kernel (/proc/PID/status,
# stat, numa_maps) and from systemd (systemctl show, the cgroup's files,
# the journal). 2 sockets x 2 cores x 2 threads, nodes {0-3} {4-7} with
# 512 MiB each, isolcpus=2,3 nohz_full=2,3 irqaffinity=0,1.
#@ topology wide
#@ rootfs systemd
#@ timeout 300
show cmdline /proc/cmdline
run pid1 sh -c 'cat /proc/1/comm; systemctl --version | head -1; systemctl is-system-running --wait'
# The main PID of unit $1 once its command runs (the engine marks it).
main_pid() {
  _i=0
  while [ $_i -lt 300 ]; do
    _p=$(systemctl show -p MainPID --value "$1")
    [ "$_p" -gt 0 ] && [ -e "/tmp/engine.$_p" ] && { echo "$_p"; return 0; }
    sleep 0.1; _i=$((_i + 1))
  done
  echo "main_pid: $1 has no running engine" >&2; return 1
}
# `kernel_view PID`: what the kernel applied to the process.
kernel_view() {
  grep -E '^(Name|Uid|Cpus_allowed_list|Mems_allowed_list):' "/proc/$1/status"
  echo "stat: $(cat "/proc/$1/stat")"
  echo "numa_maps: $(wc -l < "/proc/$1/numa_maps") mappings, $(grep -c ' bind:1 ' "/proc/$1/numa_maps") bind:1, $(grep -c ' default ' "/proc/$1/numa_maps") default"
}
props=ActiveState,SubState,Result,MainPID,ExecMainStatus,NRestarts,StatusText
# `started NAME`: start unit NAME and read its main process back.
started() {
  run "$1-start" systemctl start "$1"
  _pid=$(main_pid "$1") || _pid=0
  run "$1-unit" systemctl show -p "$props" "$1"
  run "$1-kernel" kernel_view "$_pid"
}
# `refused NAME`: start unit NAME, which must fail (Type=simple: the start
# job succeeds, then the main process exits); its state and journal.
refused() {
  run "$1-start" systemctl start "$1"
  _i=0
  while [ "$(systemctl show -p ActiveState --value "$1")" != failed ] && [ $_i -lt 300 ]; do
    sleep 0.1; _i=$((_i + 1))
  done
  run "$1-unit" systemctl show -p "$props" "$1"
  # pinrun's stderr reaches journald on a stream of its own: wait for it
  # and for systemd's own line
  _i=0
  until { journalctl -u "$1" -o cat --no-pager > /tmp/.j; grep -q '^pinrun: ' /tmp/.j && grep -q 'status=125' /tmp/.j; } || [ $_i -ge 100 ]; do
    journalctl --sync 2> /dev/null; sleep 0.1; _i=$((_i + 1))
  done
  run "$1-journal" journalctl -u "$1" -o cat --no-pager
}

# 1. pinrun as the ExecStart= prefix.
started engine
run engine-stop systemctl stop engine

# 2. the emitted unit, guarded by --check-emitted (/recipes/engine-native.sh).
run emit sh -c 'set -e; . /recipes/engine-native.sh; cat /etc/systemd/system/engine-native.service'
started engine-native
run engine-native-props systemctl show -p CPUAffinity,AllowedCPUs,AllowedMemoryNodes,NUMAPolicy,NUMAMask,CPUSchedulingPolicy,CPUSchedulingPriority,ControlGroup engine-native
run engine-native-cgroup sh -c 'd=/sys/fs/cgroup$(systemctl show -p ControlGroup --value engine-native); for f in cpuset.cpus cpuset.cpus.effective cpuset.mems cpuset.mems.effective; do echo "$f: $(cat $d/$f)"; done'
run engine-native-stop systemctl stop engine-native

# 3. User=nobody: SCHED_FIFO 50 with LimitRTPRIO=50; refused without.
started engine-user
run engine-user-stop systemctl stop engine-user
refused engine-user-nolimit

# 4. Type=notify, NotifyAccess=main: the engine's own systemd-notify.
started engine-notify
run engine-notify-stop systemctl stop engine-notify

# 5. the unit's own CPUAffinity=: narrowing (6-7), excluding (0-1).
started engine-narrow
run engine-narrow-stop systemctl stop engine-narrow
refused engine-disjoint

# 6. `systemctl stop` during a steered launch: every movable IRQ is first
# allowed on all CPUs; while the engine runs none lists its claimed core;
# when `systemctl stop` returns, every IRQ and the default mask are back
# (pinrun's helper restores them in the unit's cgroup, SIGTERM blocked).
irqs() {
  for d in /proc/irq/[0-9]*; do echo "${d#/proc/irq/} $(cat "$d/smp_affinity_list")"; done
  echo "default $(cat /proc/irq/default_smp_affinity)"
}
run steer-widen sh -c 'for d in /proc/irq/[0-9]*; do echo 0-7 > $d/smp_affinity_list 2>/dev/null && echo "${d#/proc/irq/}"; done; true'
run steer-before irqs
started engine-steer
run steer-during irqs
run steer-claims sh -c 'ls /run/pinrun; pinrun --show --json | tr -d " \n" | grep -o "\"claimed_cpus\":\[[0-9,]*\]"'
run engine-steer-stop systemctl stop engine-steer
run steer-after irqs
run steer-after-state sh -c 'ls -a /run/pinrun; systemctl show -p ActiveState,Result engine-steer; pinrun --show --json | tr -d " \n" | grep -o "\"claimed_cpus\":\[[0-9,]*\]"'
run failed systemctl --failed --no-legend --plain
