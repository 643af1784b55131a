# Scenario 5: possible_cpus=1100, so the kernel's affinity masks (nr_cpu_ids)
# are wider than 1024 bits: a fixed 128-byte cpu_set_t gets EINVAL from
# sched_getaffinity. pinrun's own reading and setting must work.
#@ topology wide
#@ append possible_cpus=1100
show possible /sys/devices/system/cpu/possible
show kernel-max /sys/devices/system/cpu/kernel_max
run show-json pinrun --show --json
# the init shell lacks 2-3 (isolcpus): widening to 0-7 and reading it back
run cpus-all pinrun --cpus 0-7 -- grep Cpus_allowed_list /proc/self/status
run cpus5 pinrun --cpus 5 -- grep Cpus_allowed_list /proc/self/status
run node1-cores2 pinrun --node 1 --cores 2 -- grep Cpus_allowed_list /proc/self/status
run isolated-cores1 pinrun --isolated --cores 1 -- grep Cpus_allowed_list /proc/self/status
# possible but not present
run cpus1099 pinrun --cpus 1099 -- true
