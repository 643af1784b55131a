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
# Issue 33 item 8: the claim follows the process group pinrun leads (here
# a session of its own: setsid); the steering follows it too. The command
# forks "sleep 12" and exits at once: 2.5 s later CPU 16 is still claimed
# and its IRQs still off it, the journal there; after the sleep, all back.
run group-start sh -c "setsid pinrun --exclusive --steer-irqs --cpus 16 -q --state-dir /tmp/st -- sh -c 'sleep 12 & exit 0'; echo rc=\$?; cut -d' ' -f1 /proc/uptime"
run group-during sh -c "sleep 2.5; cut -d' ' -f1 /proc/uptime; $P; ls /tmp/st | grep -c '\.journal\$'; pinrun --show --json --state-dir /tmp/st | tr -d ' \n' | grep -o '\"claimed_cpus\":\[[0-9,]*\]'"
run group-after sh -c "i=0; while ls /tmp/st/steer.*.journal > /dev/null 2>&1 && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done; cut -d' ' -f1 /proc/uptime; $P; ls -a /tmp/st; echo listed"
