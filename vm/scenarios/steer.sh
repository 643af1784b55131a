# Issue 21: --steer-irqs on a real kernel: 4 sockets x 4 cores x 2 threads,
# isolcpus=nohz,domain,managed_irq,4-7,12-15, 8 PCIe root ports (a PCI-MSI
# IRQ each, not kernel-managed). Claiming CPU 16 claims its core; every IRQ
# listing a claimed CPU leaves it for the command's life, exactly as the dry
# run said, and every IRQ and the default mask are back after it ends.
#@ topology big
#@ timeout 300
P='for d in /proc/irq/[0-9]*; do echo "${d#/proc/irq/} $(cat $d/smp_affinity_list)"; done; echo "default $(cat /proc/irq/default_smp_affinity)"'
run names sh -c 'for d in /sys/kernel/irq/[0-9]*; do echo "${d#/sys/kernel/irq/} $(cat $d/actions)"; done'
run before sh -c "$P"
run dry pinrun --dry-run --json --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st
run during pinrun --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st -- sh -c "$P"
run after sh -c "sleep 2; $P"
run journals sh -c 'ls -a /tmp/st; echo listed'
