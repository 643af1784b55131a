# Issue 38, second boot: the kernel command line host-plan's pinrun emitted
# (PINRUN_VM_APPEND, from tests/vm.rs) and tsc=reliable (vm/scenarios/probe.sh
# says why). PID 1 takes the housekeeping CPUs as systemd's CPUAffinity=
# would (this guest's init is a shell); then the host is checked against
# the split, a latency launch lands on the latency CPUs, and the probe
# counts the local timer on a latency and a housekeeping CPU side by side.
#@ topology plain
#@ append tsc=reliable
#@ timeout 300
show cmdline /proc/cmdline
hk=$(sed -n 's/.*irqaffinity=\([^ ]*\).*/\1/p' /proc/cmdline)
run init-affinity pinrun --pid 1 --cpus "$hk"
run check-host pinrun --plan-host --latency-cores 2 --check --json
run check-isolated1 pinrun --check --json --isolated --cores 1
run check-isolated2 pinrun --check --json --isolated --cores 2
run launch pinrun --isolated --cores 2 -- grep Cpus_allowed_list /proc/self/status
run probe-latency pinrun --probe=3s --json --isolated --cores 1
run probe-housekeeping pinrun --probe=3s --json --cpus 0
show clocksource /sys/devices/system/clocksource/clocksource0/current_clocksource
