# Scenario 2: node 2 has CPUs 6-7 and no memory; node 1 (distance 15) is its
# nearest memory, node 0 is at 30.
#@ topology memless
run show-json pinrun --show --json
run node2-cores1 pinrun --node 2 --cores 1 -- grep Cpus_allowed_list /proc/self/status
run membind2 pinrun --membind=2 -- true
run node2-membind pinrun --node 2 --cores 1 --membind -- true
run node2-membind1 pinrun --node 2 --cores 1 --membind=1 -- sh -c '. /lib.sh; grep Cpus_allowed_list /proc/$$/status; touch_and_maps 8'
