#!/bin/sh
# vm/boot.sh TOPOLOGY KERNEL INITRD [EXTRA_APPEND]: exec QEMU (TCG) with an
# emulated topology; the guest's console is on stdout.
#   basic     2 sockets x 2 cores x 2 threads, nodes {0-3} {4-7}, 256M each
#   plain     basic without isolcpus/nohz_full/irqaffinity: the host
#             --plan-host prepares (its parameters come with EXTRA_APPEND)
#   wide      basic with 512M per node (for possible_cpus=1100's per-CPU areas,
#             and "#@ rootfs" guests: a Debian root unpacked into RAM)
#   wideplain wide without isolcpus/nohz_full/irqaffinity (the Slurm guest:
#             every CPU alike to slurmd and to the tasks it starts)
#   memless   basic, but node 1 = CPUs 4-5 and node 2 = CPUs 6-7 without memory;
#             distances 0-1 20, 0-2 30, 1-2 15 (node 1 is node 2's nearest memory)
#   cpuless   basic plus node 2 with 256M and no CPUs, distances 0-1 21, x-2 30
#   near      basic plus a PCIe expander bridge (pxb-pcie, bus 0x80) on node 1
#             with a root port (0000:80:00.0) and an e1000e NIC behind it
#             (0000:81:00.0) on a hub port that leads nowhere
#   big       4 sockets x 4 cores x 2 threads (32 CPUs), one node per socket,
#             8 PCIe root ports (pcieport is built in: a PCI-MSI IRQ each,
#             spread over the CPUs; Debian 12's kernel has no built-in virtio)
#   nvme      big plus an NVMe controller (QEMU's nvme, 1 GiB null-co namespace
#             that reads without storage) behind root port rp1 (the nvme
#             driver is a module: "#@ module nvme" and load_modules)
# isolcpus=2,3 nohz_full=2,3 irqaffinity=0,1 on all but plain, wideplain and big, which has
# isolcpus=nohz,domain,managed_irq,4-7,12-15 (and nvme).
# Env: VM_ACCEL, QEMU's -accel (default tcg: multi-threaded TCG, a host thread
# per vCPU), and VM_QEMU, more QEMU options (vm/run.sh: a scenario's "#@ accel"
# and "#@ qemu" lines), and VM_FEED, when set, the path of a QEMU pipe chardev
# (VM_FEED.in read, VM_FEED.out written) behind a second serial port, the
# guest's ttyS1 (vm/run.sh: a scenario's "#@ serial-feed").
set -eu
topo=$1 kernel=$2 initrd=$3 extra=${4:-}
ram() { echo "-object memory-backend-ram,id=m$1,size=$2"; }
iso="isolcpus=2,3 nohz_full=2,3 irqaffinity=0,1"
smp8="-smp 8,sockets=2,cores=2,threads=2"
case $topo in
basic|wide|plain|wideplain)
  case $topo in wide*) M=512M ;; *) M=256M ;; esac
  args="$smp8 -m $((2 * ${M%M}))M $(ram 0 $M) $(ram 1 $M)
    -numa node,nodeid=0,cpus=0-3,memdev=m0 -numa node,nodeid=1,cpus=4-7,memdev=m1"
  case $topo in *plain) append= ;; *) append=$iso ;; esac ;;
near)
  args="$smp8 -m 512M $(ram 0 256M) $(ram 1 256M)
    -numa node,nodeid=0,cpus=0-3,memdev=m0 -numa node,nodeid=1,cpus=4-7,memdev=m1
    -device pxb-pcie,id=pxb1,bus_nr=128,numa_node=1,bus=pcie.0
    -device pcie-root-port,id=rpn1,bus=pxb1,chassis=30,slot=0
    -netdev hubport,id=n1,hubid=0 -device e1000e,bus=rpn1,netdev=n1"
  append=$iso ;;
memless)
  args="$smp8 -m 512M $(ram 0 256M) $(ram 1 256M)
    -numa node,nodeid=0,cpus=0-3,memdev=m0 -numa node,nodeid=1,cpus=4-5,memdev=m1
    -numa node,nodeid=2,cpus=6-7
    -numa dist,src=0,dst=1,val=20 -numa dist,src=0,dst=2,val=30 -numa dist,src=1,dst=2,val=15"
  append=$iso ;;
cpuless)
  args="$smp8 -m 768M $(ram 0 256M) $(ram 1 256M) $(ram 2 256M)
    -numa node,nodeid=0,cpus=0-3,memdev=m0 -numa node,nodeid=1,cpus=4-7,memdev=m1
    -numa node,nodeid=2,memdev=m2
    -numa dist,src=0,dst=1,val=21 -numa dist,src=0,dst=2,val=30 -numa dist,src=1,dst=2,val=30"
  append=$iso ;;
big|nvme)
  args="-smp 32,sockets=4,cores=4,threads=2 -m 1024M
    $(ram 0 256M) $(ram 1 256M) $(ram 2 256M) $(ram 3 256M)
    -numa node,nodeid=0,cpus=0-7,memdev=m0 -numa node,nodeid=1,cpus=8-15,memdev=m1
    -numa node,nodeid=2,cpus=16-23,memdev=m2 -numa node,nodeid=3,cpus=24-31,memdev=m3
    $(rp=1; while [ $rp -le 8 ]; do echo "-device pcie-root-port,id=rp$rp,chassis=$rp,slot=$rp"; rp=$((rp + 1)); done)"
  [ "$topo" = nvme ] && args="$args
    -drive file=null-co://,format=raw,if=none,id=nvd0 -device nvme,serial=pinrun0,drive=nvd0,bus=rp1"
  append="isolcpus=nohz,domain,managed_irq,4-7,12-15" ;;
*) echo "boot.sh: unknown topology $topo" >&2; exit 2 ;;
esac
[ -z "${VM_FEED:-}" ] || args="$args -chardev pipe,id=feed,path=$VM_FEED -device isa-serial,chardev=feed,index=1"
# vendor=GenuineIntel: TCG's plain "max" CPU looks like an AMD CPU without
# topoext, and the guest then shows every thread as its own core.
# shellcheck disable=SC2086
exec qemu-system-x86_64 -accel "${VM_ACCEL:-tcg}" ${VM_QEMU:-} -machine q35 -cpu max,vendor=GenuineIntel $args \
  -kernel "$kernel" -initrd "$initrd" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3 $append $extra" \
  -nographic -no-reboot -nodefaults -serial stdio -net none -display none
