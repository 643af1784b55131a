# Issue 38, first boot: the guest (2 sockets x 2 cores x 2 threads, nodes
# {0-3} {4-7}, nothing isolated) plans its own split for 2 latency cores;
# the host test boots host-ready with the kernel command line it printed.
# irqbalance (Debian bookworm's 1.9.2) reads the IRQBALANCE_BANNED_CPULIST=
# line pinrun printed, as from /etc/default/irqbalance: its setup reply
# names the CPUs it bans (nothing else bans them on this boot).
#@ topology plain
#@ timeout 240
#@ helper irqbalance_query -O2
#@ debs bookworm /usr/sbin/irqbalance irqbalance libc6 libcap-ng0 libglib2.0-0 libnuma1 libsystemd0 libpcre2-8-0 libcap2 libgcrypt20 libgpg-error0 liblz4-1 liblzma5 libzstd1
show cmdline /proc/cmdline
run plan pinrun --plan-host --latency-cores 2 --json
run check-before pinrun --plan-host --latency-cores 2 --check --json
line=$(pinrun --plan-host --latency-cores 2 --json | grep -o 'IRQBALANCE_BANNED_CPULIST=[^"\\]*')
mkdir -p /run/irqbalance
env "$line" /usr/sbin/irqbalance --foreground --interval=1 > /tmp/irqbalance.log 2>&1 &
B=$!
S=/run/irqbalance/irqbalance$B.sock
i=0; while [ ! -S "$S" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2
run irqbalance-line echo "$line"
run irqbalance-setup irqbalance_query "$S" setup
kill "$B"
