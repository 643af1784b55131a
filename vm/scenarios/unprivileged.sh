# Scenario 6: an unprivileged user (uid 1000, no capabilities) with
# RLIMIT_RTPRIO 0 and 20, and a cgroup v2 cpuset of CPUs 4-5 and mems 1.
#@ topology basic
as_test() { su -s /bin/sh test -c "$1"; }
run unpriv-fifo10 as_test 'pinrun --fifo 10 -- cat /proc/self/stat'
run unpriv-rtprio20-fifo10 sh -c 'ulimit -r 20; su -s /bin/sh test -c "pinrun --fifo 10 -- sh -c \"grep -E ^Uid:\|^CapEff: /proc/\\\$\\\$/status; cat /proc/\\\$\\\$/stat\""'
run unpriv-rtprio20-fifo30 sh -c 'ulimit -r 20; su -s /bin/sh test -c "pinrun --fifo 30 -- true"'
echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/pin
echo 4-5 > /sys/fs/cgroup/pin/cpuset.cpus
echo 1 > /sys/fs/cgroup/pin/cpuset.mems
in_cg() { sh -c 'echo $$ > /sys/fs/cgroup/pin/cgroup.procs && exec "$@"' sh "$@"; }
run cg-show-json in_cg pinrun --show --json
run cg-cores1 in_cg pinrun --cores 1 -- grep -E 'Cpus_allowed_list|Mems_allowed_list' /proc/self/status
run cg-cores1-smt in_cg pinrun --cores 1 --smt -- grep Cpus_allowed_list /proc/self/status
run cg-cpus0 in_cg pinrun --cpus 0 -- true
run cg-membind0 in_cg pinrun --membind=0 -- true
