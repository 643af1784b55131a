# Scenario 8: the differential of issue 14 on a real kernel (2 sockets x 2
# cores x 2 threads, isolcpus=2,3: two root domains): every request below is
# run with --dry-run --json and for real, as root and as uid 1000 (no
# capabilities, RLIMIT_RTPRIO 0); the launched shell prints its own
# /proc/self status, stat and first numa_maps line with builtins only (no
# fork). tests/vm.rs compares verdict, message and applied values.
# 720 s: alone it takes 380-445 s under TCG, beside another guest (CI runs
# two at a time on two CPUs) more than 480 s, which CI's first tries of
# sessions 8 and 9 ran out of (the second, alone, passed).
#@ topology basic
#@ timeout 720
cat > /tmp/rb.sh <<'RB'
while IFS= read -r l; do printf '%s\n' "$l"; done </proc/self/status
read -r s </proc/self/stat; printf 'STAT %s\n' "$s"
read -r n </proc/self/numa_maps; printf 'NUMA %s\n' "$n"
RB
chmod 644 /tmp/rb.sh
as_test() { su -s /bin/sh test -c "$1"; }
run own-root pinrun -- sh /tmp/rb.sh
run own-test as_test 'pinrun -- sh /tmp/rb.sh'
i=0
while read -r args; do
  i=$((i + 1))
  run "$i-args" echo "$args"
  # shellcheck disable=SC2086 # the words of one request
  run "$i-root-dry" pinrun --dry-run --json $args -- sh /tmp/rb.sh
  # shellcheck disable=SC2086
  run "$i-root-run" pinrun $args -- sh /tmp/rb.sh
  run "$i-test-dry" as_test "pinrun --dry-run --json $args -- sh /tmp/rb.sh"
  run "$i-test-run" as_test "pinrun $args -- sh /tmp/rb.sh"
done <<'REQUESTS'
--cpus 0
--cpus 2
--cpus 2-3
--cpus 0-7
--cpus 8
--cpus 4095
--node 0
--node 1
--node 2
--cores 1
--isolated --cores 1
--membind=0
--membind=1
--membind=2
--preferred=1
--preferred-many=0-1
--interleave=all
--weighted-interleave=all
--localalloc
--fifo 0
--fifo 1
--fifo 99
--fifo 100
--rr 1
--rr 99
--other
--batch
--idle
--nice -20
--nice -1
--nice 19
--nice 20
--fifo 10 --nice 5
--reset-on-fork
--deadline --sched-runtime 1024ns --sched-period 1ms --reset-on-fork
--deadline --sched-runtime 1023ns --sched-period 100us --reset-on-fork
--deadline --sched-runtime 1024ns --sched-period 99999ns --reset-on-fork
--deadline --sched-runtime 2s --sched-period 4194304us --reset-on-fork
--deadline --sched-runtime 1ms --sched-period 4194305us --reset-on-fork
--deadline --sched-runtime 10ms --sched-period 5s --reset-on-fork
--deadline --sched-runtime 20us --sched-period 50us --reset-on-fork
--deadline --sched-runtime 2ms --sched-deadline 1ms --sched-period 10ms
--deadline --sched-runtime 1ms --sched-deadline 5ms --sched-period 10ms
--deadline --sched-runtime 10ms --sched-period 10ms --reset-on-fork
--cpus 0 --deadline --sched-runtime 1ms --sched-period 10ms --reset-on-fork
--cpus 2 --deadline --sched-runtime 1ms --sched-period 10ms --reset-on-fork
--cpus 2-3 --deadline --sched-runtime 1ms --sched-period 10ms --reset-on-fork
--cpus 0-1,4-7 --deadline --sched-runtime 1ms --sched-period 10ms --reset-on-fork
--node 1 --fifo 10 --membind
--cpus 2 --rr 5 --interleave=all
--cores 2 --batch --nice 5 --preferred=0
REQUESTS
