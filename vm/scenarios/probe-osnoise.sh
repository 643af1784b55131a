# Issue 36: --probe-tracer on a kernel with the osnoise tracer (Debian 13's
# PREEMPT_RT flavour: its none flavour, the suite's other kernel, is built
# without CONFIG_OSNOISE_TRACER). basic topology: isolcpus=2,3 nohz_full=2,3
# irqaffinity=0,1. On isolated CPU 2, two injected sources in turn, each
# under a 3 s SCHED_OTHER spin probe with the tracer: a pinned SCHED_FIFO 1
# hog (noise_hog: 3 ms every 40 ms), then the serial port's IRQ 4 moved to
# CPU 2 with console traffic written from CPU 0 (its output goes to a file
# and is shown after the writer stops, so that the traffic never lands
# inside a block). The host is left as it was: osnoise/options, the
# instances and current_tracer are shown after each. Then rt-tests from the
# archive beside pinrun on idle CPU 2: oslat against the spin probe,
# cyclictest (FIFO 90, 1 ms) against the wakeup probe (/usr/bin: not on the
# busybox guest's PATH). The console is given 3 s to drain before power-off.
# Single-threaded TCG (#@ accel): under QEMU's multi-threaded TCG this kernel
# oopsed at boot (int3 in ttwu_do_activate, text patching) twice in CI beside
# another VM; one host thread for all vCPUs has no cross-vCPU patching race.
#@ topology basic
#@ kernel trixie-rt
#@ accel tcg,thread=single
#@ append tsc=reliable
#@ timeout 600
#@ helper noise_hog -O2
#@ debs trixie /usr/bin/oslat rt-tests libc6 libnuma1
#@ debs trixie /usr/bin/cyclictest rt-tests libc6 libnuma1
mount -t tracefs nodev /sys/kernel/tracing
show tracers /sys/kernel/tracing/available_tracers
show options-before /sys/kernel/tracing/osnoise/options
noise_hog 2 3000 40000 & hog=$!
sleep 0.5
run hog-pid echo "$hog"
run traced-hog pinrun --probe=3s --json --cpus 2 --probe-tracer
kill "$hog"; wait "$hog"
show options-after-hog /sys/kernel/tracing/osnoise/options
run instances-after-hog ls -A /sys/kernel/tracing/instances
show current-after-hog /sys/kernel/tracing/current_tracer
show irq4-before /proc/irq/4/smp_affinity_list
echo 2 > /proc/irq/4/smp_affinity_list
taskset -c 0 sh -c 'while :; do echo ...............................................................; done' > /dev/ttyS0 & w=$!
sleep 0.5
pinrun --probe=3s --json --cpus 2 --probe-tracer > /tmp/irq.json 2> /tmp/irq.err; echo "rc=$?" >> /tmp/irq.err
kill "$w"; wait "$w"
echo 1 > /proc/irq/4/smp_affinity_list
echo
show traced-irq /tmp/irq.json
show traced-irq-err /tmp/irq.err
run irq4-threads sh -c 'for p in /proc/[0-9]*; do c=$(cat "$p/comm" 2>/dev/null); case $c in irq/4-*) echo "${p#/proc/} $c";; esac; done'
show options-after-irq /sys/kernel/tracing/osnoise/options
run instances-after-irq ls -A /sys/kernel/tracing/instances
run oslat /usr/bin/oslat --cpu-list 2 --duration 3s
run spin pinrun --probe=3s --json --cpus 2
run cyclictest /usr/bin/cyclictest -q -m -a 2 -t 1 -p 90 -i 1000 -D 3 -h 2000
run wakeup pinrun --probe=3s --probe-mode wakeup --fifo 90 --json --cpus 2
sleep 3
