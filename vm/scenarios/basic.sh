# Scenario 1: 2 sockets x 2 cores x 2 threads, nodes {0-3},{4-7},
# isolcpus=2,3 nohz_full=2,3 irqaffinity=0,1.
#@ topology basic
show cmdline /proc/cmdline
# the test bed itself: irqaffinity=0,1 took (for IRQ findings to come)
show irq-default-affinity /proc/irq/default_smp_affinity
run init-affinity grep Cpus_allowed_list /proc/self/status
show possible /sys/devices/system/cpu/possible
run irq-effective irq_effective
run show-json pinrun --show --json
run node1-cores2 pinrun --node 1 --cores 2 -- grep Cpus_allowed_list /proc/self/status
run node1-cores2-smt pinrun --node 1 --cores 2 --smt -- grep Cpus_allowed_list /proc/self/status
run isolated-cores1 pinrun --isolated --cores 1 -- grep Cpus_allowed_list /proc/self/status
run isolated-cores1-smt pinrun --isolated --cores 1 --smt -- grep Cpus_allowed_list /proc/self/status
run membind1 pinrun --membind 1 -- sh -c '. /lib.sh; touch_and_maps 16'
# the exec'd shell (same PID as pinrun) and a child it forks; "; true" keeps
# busybox sh from exec'ing the last command in place
run fifo90-rof sh -c 'echo "pinrun-pid $$"; exec pinrun --fifo 90 --reset-on-fork -- sh -c "cat /proc/\$\$/stat; cat /proc/self/stat; true"'
run check-cpus2 pinrun --check --json --cpus 2
run check-cpus2-text pinrun --check --cpus 2
run dry-run-cpus2 pinrun --dry-run --json --cpus 2
# Debian 12's 6.1 kernel has no MPOL_WEIGHTED_INTERLEAVE (6.9+): refused, explained
run weighted-interleave pinrun --weighted-interleave all -- true
