# Issue 33 items 3 and 4 with Debian bookworm's irqbalance 1.9.2, the
# version a steered launch killed: before 1.9.4 (commit de0fe4a) a pass
# that rescans the CPU tree, as the first one after every "settings cpus"
# does, sleeps its whole interval inside scan() with its socket unserved,
# and its send() of a reply to a connection the client dropped kills it by
# SIGPIPE. Big topology (isolcpus=...,4-7,12-15: its own ban f0f0),
# interval 4 s (longer than the 3 s after which pinrun used to drop an
# unanswered connection). Blocks:
# - launch: a steered launch whose command reads irqbalance's setup (the
#   claimed CPUs 16-17 banned), with the guest's uptime before and after;
#   after-launch: the ban, the IRQs and the default mask as before;
# - stopped: irqbalance stopped (SIGSTOP): the launch is refused after its
#   bound (interval + 3 s), nothing changed; once continued, irqbalance
#   answers the refused launch's setup (kept open by pinrun-drain) and
#   lives (after-stopped);
# - kill-ban-TERM, kill-ban-KILL: pinrun killed 1 s after its journal
#   appeared (the ban sent, pinrun waiting for 1.9.2's rescan to show it);
#   kill-probe-TERM, kill-probe-KILL: killed in --probe, after every IRQ
#   and the default mask were written. After each (the helper alone, no
#   --reclaim): the ban, every IRQ and the default mask as before, no
#   journal, irqbalance alive.
# - kill-stopped-KILL: pinrun killed by SIGKILL while its exchange waits
#   on irqbalance, stopped for it: continued, irqbalance answers the dead
#   client (pinrun-drain reads the reply) and lives; CI had it die of
#   SIGPIPE in kill-ban-KILL when the kill fell inside an exchange.
#@ topology big
#@ timeout 420
#@ helper irqbalance_query -O2
#@ debs bookworm /usr/sbin/irqbalance irqbalance libc6 libcap-ng0 libglib2.0-0 libnuma1 libsystemd0 libpcre2-8-0 libcap2 libgcrypt20 libgpg-error0 liblz4-1 liblzma5 libzstd1
P='for d in /proc/irq/[0-9]*; do echo "${d#/proc/irq/} $(cat $d/smp_affinity_list)"; done; echo "default $(cat /proc/irq/default_smp_affinity)"'
# The PCIe root ports' IRQs are banned from irqbalance (--banirq) and set to
# 0-31: only pinrun moves them, so their lists are compared (irqbalance
# moves the others at will).
X=$(for d in /sys/kernel/irq/[0-9]*; do case "$(cat $d/actions)" in *aerdrv*|*pcie*) echo "${d#/sys/kernel/irq/}" ;; esac; done)
BAN=
for x in $X; do echo 0-31 > /proc/irq/$x/smp_affinity_list; BAN="$BAN --banirq=$x"; done
mkdir -p /run/irqbalance
# shellcheck disable=SC2086  # the options are words
/usr/sbin/irqbalance --foreground --interval=4 $BAN > /tmp/irqbalance.log 2>&1 &
B=$!
S=/run/irqbalance/irqbalance$B.sock
i=0; while [ ! -S "$S" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2
up() { cut -d' ' -f1 /proc/uptime; }
# The state as the blocks compare it: irqbalance's setup, every IRQ and the
# default mask, the journals, irqbalance alive.
state() {
  irqbalance_query "$S" setup; echo
  sh -c "$P"
  echo "journals: $(ls /tmp/st 2>/dev/null | grep -c '\.journal$')"
  kill -0 "$B" && echo "irqbalance alive"
}
# Waits until no steering journal is left in /tmp/st (the helper's undo
# done), up to 60 s; prints how long it took.
settle() {
  _t=$(up); _i=0
  while ls /tmp/st/steer.*.journal > /dev/null 2>&1 && [ $_i -lt 600 ]; do sleep 0.1; _i=$((_i + 1)); done
  echo "settled in $(echo "$(up) $_t" | awk '{printf "%.1f", $1 - $2}') s"
}
run version sh -c '/usr/sbin/irqbalance --version 2>&1 | head -1'
run banned-irqs echo $X
run before state
run dry pinrun --dry-run --json --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st
cat > /tmp/during <<EOF
echo "command at \$(cut -d' ' -f1 /proc/uptime)"
irqbalance_query $S setup; echo
EOF
run launch sh -c "echo \"start at \$(cut -d' ' -f1 /proc/uptime)\"; pinrun --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st -- sh /tmp/during; rc=\$?; echo \"end at \$(cut -d' ' -f1 /proc/uptime)\"; exit \$rc"
run settle-launch settle
run after-launch state
# A stopped daemon: refused after interval + 3 s, nothing changed; the
# unanswered setup is read once it continues.
kill -STOP "$B"
run stopped sh -c "echo \"start at \$(cut -d' ' -f1 /proc/uptime)\"; pinrun --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st -- touch /tmp/ran; rc=\$?; echo \"end at \$(cut -d' ' -f1 /proc/uptime)\"; exit \$rc"
run stopped-unchanged sh -c "$P; ls /tmp/ran 2>&1; grep -qx pinrun-drain /proc/[0-9]*/comm && echo drain waits; exit 0"
kill -CONT "$B"
sleep 2
run after-stopped state
# pinrun killed while the ban is sent (waiting for 1.9.2 to show it), and
# in --probe (everything written).
kill_ban() {
  pinrun --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st -- sleep 30 &
  _p=$!; _i=0
  while ! ls /tmp/st/steer.*.journal > /dev/null 2>&1 && [ $_i -lt 300 ]; do sleep 0.05; _i=$((_i + 1)); done
  sleep 1
  echo "killed with SIG$1 at $(up): $(grep -c '"irqbalance"' /tmp/st/steer.*.journal) journal(s) with the ban"
  kill -"$1" "$_p"; wait "$_p"; echo "pinrun rc=$?"
  settle
}
kill_probe() {
  _d=$(cat /proc/irq/default_smp_affinity)
  pinrun --exclusive --steer-irqs --probe=30s --cpus 16 --state-dir /tmp/st -- true > /dev/null 2>&1 &
  _p=$!; _i=0
  while [ "$(cat /proc/irq/default_smp_affinity)" = "$_d" ] && [ $_i -lt 600 ]; do sleep 0.05; _i=$((_i + 1)); done
  sleep 1
  echo "killed with SIG$1 at $(up): default_smp_affinity $(cat /proc/irq/default_smp_affinity) (was $_d)"
  kill -"$1" "$_p"; wait "$_p"; echo "pinrun rc=$?"
  settle
}
for s in TERM KILL; do
  run "kill-ban-$s" kill_ban "$s"
  run "after-kill-ban-$s" state
  run "kill-probe-$s" kill_probe "$s"
  run "after-kill-probe-$s" state
done
# pinrun killed by SIGKILL in the middle of an exchange, every time:
# irqbalance is stopped once the journal exists, so pinrun's next setup
# (or the ban itself) waits on it; continued after the kill, it answers
# the dead client's connection, which pinrun-drain reads, and lives.
kill_stopped() {
  pinrun --exclusive --steer-irqs --cpus 16 --state-dir /tmp/st -- sleep 30 &
  _p=$!; _i=0
  while ! ls /tmp/st/steer.*.journal > /dev/null 2>&1 && [ $_i -lt 300 ]; do sleep 0.05; _i=$((_i + 1)); done
  kill -STOP "$B"
  sleep 1
  _d=$(grep -lx pinrun-drain /proc/[0-9]*/comm 2>/dev/null | wc -l)
  echo "killed with SIGKILL at $(up), irqbalance stopped, $_d pinrun-drain"
  kill -KILL "$_p"; wait "$_p"; echo "pinrun rc=$?"
  sleep 0.5
  kill -CONT "$B"
  settle
}
run kill-stopped-KILL kill_stopped
run after-kill-stopped-KILL state
# Two intervals later: no ban left pending in irqbalance (a taken
# "settings cpus" shows in setup only from its next rescan).
run final sleep 9
run final-state state
run irqbalance-alive kill -0 "$B"
kill "$B"
show irqbalance-log /tmp/irqbalance.log
