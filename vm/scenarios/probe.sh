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
