# The second kernel: Debian 13's 6.12 has MPOL_WEIGHTED_INTERLEAVE (6.9+),
# which Debian 12's 6.1 refuses (scenario basic checks that refusal).
#@ topology basic
#@ kernel trixie
show uname /proc/version
run weights sh -c 'for f in /sys/kernel/mm/mempolicy/weighted_interleave/node*; do echo "$f $(cat $f)"; done'
run weighted-all pinrun --weighted-interleave all -- sh -c '. /lib.sh; touch_and_maps 16'
run weighted-1 pinrun --node 0 --cores 1 --weighted-interleave 1 -- sh -c '. /lib.sh; grep Cpus_allowed_list /proc/$$/status; touch_and_maps 8'
run show-json pinrun --show --json
run node1-cores2 pinrun --node 1 --cores 2 -- grep Cpus_allowed_list /proc/self/status
