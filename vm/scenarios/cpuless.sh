# Scenario 3: node 2 has 256M of memory and no CPUs (CXL/HBM-like),
# distances 0-1 21, 0-2 30, 1-2 30.
#@ topology cpuless
run show-json pinrun --show --json
run node0-membind2 pinrun --node 0 --cores 1 --membind 2 -- sh -c '. /lib.sh; grep Cpus_allowed_list /proc/$$/status; touch_and_maps 4'
run node2-cores1 pinrun --node 2 --cores 1 -- true
run interleave-all pinrun --interleave all -- sh -c '. /lib.sh; touch_and_maps 12'
