# Scenario 4: 4 sockets x 4 cores x 2 threads (32 CPUs), one node per socket,
# isolcpus=nohz,domain,managed_irq,4-7,12-15.
#@ topology big
show cmdline /proc/cmdline
run irq-effective irq_effective
run show-json pinrun --show --json
run isolated-cores2 pinrun --isolated --cores 2 -- grep Cpus_allowed_list /proc/self/status
run isolated-cores4-smt pinrun --isolated --cores 4 --smt -- grep Cpus_allowed_list /proc/self/status
run node1-isolated-cores1 pinrun --node 1 --isolated --cores 1 -- grep Cpus_allowed_list /proc/self/status
run node1-cores2 pinrun --node 1 --cores 2 -- grep Cpus_allowed_list /proc/self/status
run node3-cores4 pinrun --node 3 --cores 4 -- grep Cpus_allowed_list /proc/self/status
run isolated-cores5 pinrun --isolated --cores 5 -- true
run isolated-cpus pinrun --isolated --cpus 3-4 -- true
run check-cpus4 pinrun --check --json --cpus 4
run check-cpus4-5 pinrun --check --json --cpus 4-5
