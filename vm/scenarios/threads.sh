# Issue 22: --omp and --thread-map on a real kernel, 2 sockets x 2 cores x 2
# threads, nodes {0-3},{4-7}: a static libgomp program's threads on sibling
# pairs, a program that names its threads after creation pinned by name, and
# no helper process left behind (a zombie not yet reaped by init has exited
# and holds nothing).
#@ topology basic
#@ helper omp_cpus -O2 -fopenmp
#@ helper named_threads -O2 -pthread
run siblings sh -c 'for c in 4 5 6 7; do echo "cpu$c $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list)"; done'
run omp-smt pinrun --node 1 --cores 2 --smt --omp -- /bin/omp_cpus
run omp-dry pinrun --dry-run --json --node 1 --cores 2 --smt --omp
run thread-map pinrun --cpus 4,6 --thread-map 'w1=@0,w2=@1,*=rest' --thread-log /tmp/threads.jsonl -- /bin/named_threads 5000
show thread-log /tmp/threads.jsonl
run helpers-left sh -c 'sleep 1; for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = pinrun-helper ] && grep State $p/status | grep -v zombie; done; echo checked'
