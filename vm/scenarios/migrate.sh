# Issue 18: `pinrun --pid PID --migrate` moves a running process's pages
# between the two memory nodes with migrate_pages(2), read back from its
# numa_maps; --dry-run says how much would move, --migrate-limit refuses more.
#@ topology basic
# The holder: a shell on node 0's CPUs (default policy: its pages come from
# node 0) holding a 16 MiB string, then waiting.
pinrun --node 0 -- sh -c '_x=$(head -c 16777216 /dev/zero | tr "\0" a); echo ready > /tmp/holder-ready; while :; do sleep 1; done' &
holder=$!
for _t in $(seq 600); do
  [ -e /tmp/holder-ready ] && break
  sleep 0.1
done
run migrate-before cat /proc/$holder/numa_maps
run migrate-dry pinrun --pid $holder --migrate --membind 1 --dry-run --json
run migrate-limit pinrun --pid $holder --migrate --membind 1 --migrate-limit 1M
run migrate-limit-after cat /proc/$holder/numa_maps
run migrate pinrun --pid $holder --migrate --membind 1
run migrate-after cat /proc/$holder/numa_maps
run migrate-query pinrun --pid $holder --json
run migrate-policy pinrun --pid $holder --membind 1
kill $holder
