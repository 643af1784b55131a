# Scenario 4: 4 sockets x 4 cores x 2 threads (32 CPUs), one node per socket,
# isolcpus=nohz,domain,managed_irq,4-7,12-15, 8 PCIe root ports (PCI-MSI IRQs).
#@ topology big
show cmdline /proc/cmdline
run irq-effective irq_effective
run show-json pinrun --show --json
run isolated-cores2 pinrun --isolated --cores 2 -- grep Cpus_allowed_list /proc/self/status
run isolated-cores4-smt pinrun --isolated --cores 4 --smt -- grep Cpus_allowed_list /proc/self/status
run node1-isolated-cores1 pinrun --node 1 --isolated --cores 1 -- grep Cpus_allowed_list /proc/self/status
run node1-cores2 pinrun --node 1 --cores 2 -- grep Cpus_allowed_list /proc/self/status
run node3-cores4 pinrun --node 3 --cores 4 -- grep Cpus_allowed_list /proc/self/status
run isolated-cores5 pinrun --isolated --cores 5 -- true
run isolated-cpus pinrun --isolated --cpus 3-4 -- true
run check-cpus4 pinrun --check --json --cpus 4
run check-cpus4-5 pinrun --check --json --cpus 4-5
# IRQs: pinrun reads them from /sys/kernel/irq here (6.1 has it); the same
# IRQ findings must come from /proc/interrupts (a sysroot without
# sys/kernel/irq) and from sysfs alone (a sysroot without proc/interrupts),
# and name the IRQs that /proc/interrupts and /proc/irq/N/effective_affinity_list
# put on the checked CPUs (irq-listed). The 8 root ports of the topology
# give PCI-MSI IRQs spread over the CPUs, isolated ones included.
irq_sysroot /tmp/irq-proc interrupts
irq_sysroot /tmp/irq-sysfs sysfs
run irq-listed irq_listed
for c in 0-3 4-7 8-31; do
  run irq-check-live-$c pinrun --check --json --cpus $c
  run irq-check-proc-$c pinrun --sysroot /tmp/irq-proc --check --json --cpus $c
  run irq-check-sysfs-$c pinrun --sysroot /tmp/irq-sysfs --check --json --cpus $c
done
run irq-show-proc pinrun --sysroot /tmp/irq-proc --show --json
run irq-listed-after irq_listed
# A live SCHED_FIFO 5 competitor confined to CPU 6 (busybox has no chrt:
# pinrun itself starts it): --fifo 5 on CPU 6 would wait behind it, --fifo 6
# would not; found by sched_getscheduler(2) per process.
pinrun --cpus 6 --fifo 5 -- sh -c 'while :; do :; done' &
hog=$!
for _t in $(seq 100); do
  [ "$(cut -d' ' -f2,3,41 /proc/$hog/stat 2>/dev/null)" = "(sh) R 1" ] && break
  sleep 0.1
done
run rt-hog sh -c "echo hog-pid $hog; cat /proc/$hog/stat"
run rt-fifo5-cpus6 pinrun --dry-run --json --cpus 6 --fifo 5 -- true
run rt-fifo5-cpus6-7 pinrun --dry-run --json --cpus 6-7 --fifo 5 -- true
run rt-fifo6-cpus6 pinrun --dry-run --json --cpus 6 --fifo 6 -- true
run rt-fifo5-cpus7 pinrun --dry-run --json --cpus 7 --fifo 5 -- true
kill $hog
wait $hog
run rt-fifo5-cpus6-after pinrun --dry-run --json --cpus 6 --fifo 5 -- true
