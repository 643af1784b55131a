# Issue 20: the noise probe on a nohz_full CPU beside a housekeeping CPU.
# basic topology: isolcpus=2,3 nohz_full=2,3 irqaffinity=0,1. One spinning
# probe thread alone on CPU 2 lets the kernel stop its tick; CPU 1 keeps it.
#@ topology basic
#@ timeout 300
show cmdline /proc/cmdline
run probe-nohz pinrun --probe=3s --json --cpus 1,2
