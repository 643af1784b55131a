# Issue 21 item 4: --steer-irqs while the real irqbalance (Debian trixie's
# 1.9.4) runs with its control socket and a 1 s rebalance interval, on the
# big topology (isolcpus=...,4-7,12-15: its own ban). One PCIe root port
# IRQ is banned from irqbalance (--banirq, so only pinrun moves it), the
# others are irqbalance's. While `pinrun --exclusive --steer-irqs --cpus 16`
# runs, irqbalance's own `setup` reply (read by tests/helpers/
# irqbalance_query.c, a client written after irqbalance-ui) bans the
# claimed CPUs too and, after 3 rebalance intervals, no IRQ is on them;
# after it ends the ban is the original again, the banned IRQ is back and
# no journal is left.
#@ topology big
#@ timeout 300
#@ helper irqbalance_query -O2
#@ debs trixie /usr/sbin/irqbalance irqbalance libc6 libcap-ng0 libglib2.0-0t64 libnuma1 libsystemd0 libpcre2-8-0 libcap2 libatomic1
P='for d in /proc/irq/[0-9]*; do echo "${d#/proc/irq/} $(cat $d/smp_affinity_list)"; done'
X=$(for d in /sys/kernel/irq/[0-9]*; do case "$(cat $d/actions)" in *aerdrv*) echo "${d#/sys/kernel/irq/}" ;; esac; done | head -1)
echo 0-31 > /proc/irq/$X/smp_affinity_list
mkdir -p /run/irqbalance
/usr/sbin/irqbalance --foreground --interval=1 --banirq="$X" > /tmp/irqbalance.log 2>&1 &
B=$!
S=/run/irqbalance/irqbalance$B.sock
i=0; while [ ! -S "$S" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
sleep 3
run banned-irq echo "$X"
run setup-before irqbalance_query "$S" setup
run before sh -c "$P"
run dry pinrun --dry-run --json --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st
run during pinrun --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st -- sh -c "irqbalance_query $S setup; sleep 3; irqbalance_query $S setup; $P"
run after sh -c "sleep 5; irqbalance_query $S setup; $P"
run journals sh -c 'ls -a /tmp/st; echo listed'
run irqbalance-alive kill -0 "$B"
kill "$B"
show irqbalance-log /tmp/irqbalance.log
