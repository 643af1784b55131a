# Issue 20: the noise probe on a nohz_full CPU beside a housekeeping CPU.
# basic topology: isolcpus=2,3 nohz_full=2,3 irqaffinity=0,1. One spinning
# probe thread alone on CPU 2 lets the kernel stop its tick; CPU 1 keeps it.
# tsc=reliable: under TCG on a loaded host the clocksource watchdog finds
# the TSC skewed and marks it unstable (switching to hpet), and an unstable
# sched_clock is a tick dependency of every CPU (TICK_DEP_BIT_CLOCK_UNSTABLE,
# kernel/sched/clock.c): nohz_full CPUs then keep ticking (CI saw 649 LOC
# on CPU 2 against 773 on CPU 1). The clocksource is shown for the test.
#@ topology basic
#@ append tsc=reliable
#@ timeout 300
show cmdline /proc/cmdline
run probe-nohz pinrun --probe=3s --json --cpus 1,2
show clocksource /sys/devices/system/clocksource/clocksource0/current_clocksource
# Issue 31: a request with latency intent (--probe) lands on the isolated,
# nohz_full CPU 2 (the rule), where the compact rule took CPU 0; the same
# probe on CPU 0 for the side-by-side LOC count. Then --choose measured with
# CPU 2 made noisy on purpose (a SCHED_FIFO busy loop, runs of ~1s with a
# 1 ms sleep): the measured choice never takes it. 2 s, not 1 s: under TCG
# on a loaded host (CI runs two guests on two CPUs) the guest's probe
# threads wait for their vCPUs; a 1 s measurement (watchdog limit 2.2 s)
# saw three of four candidates cut short.
run choose-rule pinrun --probe=3s --json --cores 1
run choose-old pinrun --probe=3s --json --cpus 0
run choose-measured sh -c 'pinrun --quiet --cpus 2 --fifo 50 -- sh -c "while :; do i=0; while [ \$i -lt 100000 ]; do i=\$((i+1)); done; sleep 0.001; done" & h=$!; sleep 1; pinrun --dry-run --json --cores 1 --choose measured=2s; r=$?; kill $h; exit $r'
