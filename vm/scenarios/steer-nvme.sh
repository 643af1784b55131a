# Issue 21: --steer-irqs with an NVMe controller on a real kernel: the big
# topology (32 CPUs, isolcpus=nohz,domain,managed_irq,4-7,12-15, 8 PCIe
# root ports) plus QEMU's nvme behind root port rp1 (topology nvme; the
# driver is a module of the kernel package, loaded here). The nvme driver
# asks for one kernel-managed MSI vector per I/O queue (PCI_IRQ_AFFINITY,
# drivers/nvme/host/pci.c nvme_setup_irqs(); the admin queue's vector is
# a pre-vector, not managed): 32 queues, one CPU each. A write to a
# managed IRQ's smp_affinity_list fails with EIO (kernel/irq/proc.c
# write_irq_affinity(): irq_can_set_affinity_usr()). This kernel has no
# irq debugfs, so pinrun asks the kernel with a test write; the shell asks
# the same way (test-writes) to check it.
# The admin queue nvme0q0 is set to CPU 16 first (and fired, so that its
# effective affinity follows): steering must move it to housekeeping CPUs;
# the queue IRQs of CPUs 16 and 17 stay and are reported as managed. I/O
# during the command (/tmp/io): direct reads on CPU 17 (its managed queue
# fires there) and the controller's temperature (an admin command: nvme0q0).
#@ topology nvme
#@ module nvme
#@ timeout 600
run modules load_modules
run nvme sh -c 'i=0; while [ ! -b /dev/nvme0n1 ] && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done; ls /dev/nvme0n1 /sys/class/nvme/nvme0/hwmon*/temp1_input'
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
run debugfs sh -c 'ls /sys/kernel/debug/irq/irqs 2>&1 | head -3; echo listed'
cat > /tmp/io <<'IO'
hw=$(ls -d /sys/class/nvme/nvme0/hwmon*/temp1_input 2>/dev/null | head -1)
end=$(( $(date +%s) + $1 ))
while [ "$(date +%s)" -lt $end ]; do
  taskset -c 17 dd if=/dev/nvme0n1 of=/dev/null bs=4k count=50 iflag=direct 2>/dev/null
  [ -n "$hw" ] && cat "$hw" > /dev/null
done
IO
q0=$(awk '$NF == "nvme0q0" { sub(":", "", $1); print $1 }' /proc/interrupts)
run admin-to-16 sh -c "echo 16 > /proc/irq/$q0/smp_affinity_list; sh /tmp/io 1; echo $q0 \$(cat /proc/irq/$q0/smp_affinity_list) \$(cat /proc/irq/$q0/effective_affinity_list)"
P='for d in /proc/irq/[0-9]*; do echo "${d#/proc/irq/} $(cat $d/smp_affinity_list)"; done; echo "default $(cat /proc/irq/default_smp_affinity)"'
E='for d in /proc/irq/[0-9]*; do echo "${d#/proc/irq/} $(cat $d/effective_affinity_list)"; done'
run names sh -c 'for d in /sys/kernel/irq/[0-9]*; do echo "${d#/sys/kernel/irq/} $(cat $d/actions)"; done'
run chips sh -c 'for d in /sys/kernel/irq/[0-9]*; do echo "${d#/sys/kernel/irq/} $(cat $d/chip_name)"; done'
run before sh -c "$P"
run before-effective sh -c "$E"
# The kernel's answer to a write of "x" (not a cpulist; changes nothing)
# for every IRQ on CPUs 16-17: "N <error>".
run test-writes sh -c 'for d in /proc/irq/[0-9]*; do
  case ",$(cat $d/smp_affinity_list)," in *,16,*|*,17,*|*-*) ;; *) continue ;; esac
  echo "${d#/proc/irq/} $( (echo x > $d/smp_affinity_list) 2>&1)"
done'
run after-test-writes sh -c "$P"
run dry pinrun --dry-run --json --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st
run dry-text pinrun --dry-run --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st
# The command prints the lists, then /proc/interrupts and the effective
# affinities before and after 3 s of I/O (the shell's reads, not pinrun's).
run during pinrun --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st -- sh -c "$P; echo ===; cat /proc/interrupts; echo ===; sh /tmp/io 3; cat /proc/interrupts; echo ===; $E"
run after sh -c "sleep 2; $P"
# --probe after the steering: the probe's report on the claimed core, the
# same I/O running beside it; the command's own interrupt deltas after.
run probe sh -c "sh /tmp/io 25 & pinrun --exclusive --steer-irqs --probe=3s -v --cpus 16,17 --state-dir /tmp/st -- sh -c 'cat /proc/interrupts; echo ===; sh /tmp/io 3; cat /proc/interrupts'; wait"
run after-probe sh -c "sleep 2; $P"
run journals sh -c 'ls -a /tmp/st; echo listed'
