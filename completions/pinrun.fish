complete -c pinrun -s C -l cpus -l physcpubind -l cpu-list -d 'Run on exactly these CPUs: a cpulist (0-3,8,0-14:2,0-15:2/4) or a hex cpumask (0xff, 0xff,00000000). Every CPU must exist, be online and allowed by the cgroup cpuset; all, !LIST (all but) and +LIST (indices among the task\'s CPUs, its inherited affinity) as numactl. Aliases: -C, -c, --physcpubind (numactl), --cpu-list (taskset -c)' -r -f
complete -c pinrun -l node -d 'Take CPUs from these NUMA nodes (a node list such as 0 or 0,2; all, !LIST, +LIST as numactl)' -r -f
complete -c pinrun -s N -l cpunodebind -d 'Run on every allowed CPU of NODES: the same as --node NODES alone, and therefore not combined with --cores, --cpus, --node or --isolated (which choose among them). Unlike numactl --cpunodebind (-N), which sets the nodes\' CPUs whatever the caller\'s affinity (under taskset -c 1, numactl -N 0 runs on all of node 0), the CPUs are those of NODES the caller may use (there, CPU 1 only); --within cgroup takes every CPU of NODES its cpuset allows, as numactl does' -r -f
complete -c pinrun -l cores -d 'Choose N whole physical cores (all SMT siblings allowed), one CPU of each. With latency intent (--fifo/--rr/--deadline, --exclusive, --isolated, --probe, --steer-irqs) the quietest: isolated and nohz_full first, no device IRQs, never the boot CPU while others fit; without it, housekeeping cores first. Then compactly (pinrun(1) CHOOSING CORES)' -r
complete -c pinrun -l llc -d 'Choose N whole last-level-cache groups (the CPUs sharing an L3 or the highest cache: an AMD CCX, an Intel package): every allowed CPU of each, or, with --cores, cores inside them. Compactly, in the order node, package, die' -r
complete -c pinrun -l dies -d 'Choose N whole dies (die_cpus_list), as --llc does for caches; refused where the kernel exposes no dies' -r
complete -c pinrun -l clusters -d 'Choose N whole clusters (cluster_cpus_list: CPUs sharing an L2 or a firmware cluster), as --llc does for caches; refused where the kernel exposes no clusters' -r
complete -c pinrun -l core-type -d 'Choose only CPUs of this core type: Intel hybrids\' /sys/devices/cpu_core/cpus (performance) and cpu_atom/cpus (efficiency), else arm64\'s cpu_capacity (the highest is performance); refused on a machine with one core type. With --cpus, refuse any of another type' -r -f -a "performance\t'Performance cores: cpu_core on Intel hybrids, the highest cpu_capacity on arm64/RISC-V'
efficiency\t'Efficiency cores: cpu_atom on Intel hybrids, a cpu_capacity below the highest on arm64/RISC-V'"
complete -c pinrun -l near -d 'Choose CPUs of the NUMA node of DEVICE: a network interface (eth0), a PCI address (0000:3b:00.0 or 3b:00.0), a block device (nvme0n1) or a file (/data/x: the block device it is on), from the device\'s numa_node in sysfs (-1, unknown, is said so); --membind without NODES binds to that node. Combines with --cores, --llc, --isolated' -r -f
complete -c pinrun -l near-irqs -d 'With --near, leave out (avoid) or choose only (share) the CPUs the device\'s MSI IRQs (a NIC\'s queues) are steered to; by default they are only named in the plan' -r -f -a "avoid\t'Leave them out of the placement'
share\t'Choose only among them'"
complete -c pinrun -l within -d 'Where --cores, --node and --isolated choose: inside the inherited CPU affinity (taskset, systemd CPUAffinity=, a batch scheduler\'s per-task binding) or across the cgroup\'s CPUs. Default: inside the inherited affinity when it is narrower than the cgroup\'s CPUs minus the isolated ones, else across the cgroup (see SOURCES). --cpus may leave the inherited affinity (with a finding)' -r -f -a "inherited\t'The affinity pinrun inherited (taskset, systemd CPUAffinity=, a batch scheduler\'s binding): Cpus_allowed_list of /proc/self/status'
cgroup\t'The caller\'s cgroup cpuset (its online effective CPUs)'"
complete -c pinrun -l choose -d 'How --cores ranks cores: rule (default: by what pinrun reads, pinrun(1) CHOOSING CORES) or measured[=DURATION]: run the spin probe (SCHED_OTHER) on every candidate core at once, for 1s by default (10ms to 10s; --dry-run measures too), and take the N with the smallest worst gap. Live machine only. Not with --cpus, which names the CPUs (nothing to choose)' -r
complete -c pinrun -l wait -d 'Wait for claimed cores to become free instead of refusing, printing what it waits for; without DURATION as long as it takes (--wait=30s; units ns, us, ms, s, m, h)' -r
complete -c pinrun -l state-dir -d 'Directory of the claim records (default: PINRUN_STATE_DIR when set and not empty, else /run/pinrun, created with mode 1777 like /tmp)' -r -F
complete -c pinrun -l irq-housekeeping -d 'With --steer-irqs: the CPUs an IRQ goes to when none of its own is left (default: online CPUs not isolated, not nohz_full, not claimed; the device\'s node first)' -r
complete -c pinrun -s m -l membind -d 'Allocate memory only on NODES (default: the nodes of the chosen CPUs, or of the task\'s CPUs without a placement). Write --membind=NODES, or put -- before the command, when COMMAND could be read as a node list' -r -f
complete -c pinrun -l preferred -d 'Prefer memory on NODE, falling back to others' -r -f
complete -c pinrun -l preferred-many -d 'Prefer memory on any of NODES (Linux 5.15+)' -r -f
complete -c pinrun -l interleave -d 'Interleave memory across NODES, or all nodes with memory' -r -f
complete -c pinrun -l weighted-interleave -d 'Interleave by the kernel\'s per-node weights (Linux 6.9+)' -r -f
complete -c pinrun -s f -l fifo -d 'SCHED_FIFO with priority PRIO (1-99)' -r
complete -c pinrun -s r -l rr -d 'SCHED_RR with priority PRIO (1-99)' -r
complete -c pinrun -l sched-runtime -d 'Deadline runtime T, with a unit: ns, us, ms, s, m or h' -r
complete -c pinrun -l sched-deadline -d 'Deadline relative deadline T (default: the period)' -r
complete -c pinrun -l sched-period -d 'Deadline period T (default: the deadline)' -r
complete -c pinrun -l nice -d 'Nice value N (-20..19); default: keep the current one' -r
complete -c pinrun -l pid -d 'A running process instead of a command (`taskset -p`, `chrt -p`): alone, print each thread\'s CPUs, last CPU, scheduling policy and memory; with placement or scheduling options, apply them to every thread (all or none). PID is a process id, or `self` (pinrun itself, as `numactl --show`). See RUNNING PROCESSES in pinrun(1)' -r -f
complete -c pinrun -l tid -d 'With --pid: only this thread of the process (`taskset -p` without -a)' -r
complete -c pinrun -l migrate-limit -d 'With --migrate: refuse to move more than SIZE (bytes, or with K, M, G, T: KiB, MiB, GiB, TiB), counted from numa_maps before moving' -r
complete -c pinrun -l probe -d 'Measure the noise on the chosen CPUs, with the chosen scheduling policy and priority, before running COMMAND (default 1s, at most 60s; --probe=5s): per CPU the gaps above the threshold (spin: a histogram, their count, the time lost, the largest) or the wake-up latencies (wakeup: min, p50, p99, p99.9, max, a histogram), and what interrupted the CPU (IRQs, the timer tick, softirqs, tasks). Without COMMAND, only report (--json for JSON). Not with --deadline (a deadline task cannot be pinned to one CPU of its root domain). See PROBE in pinrun(1)' -r
complete -c pinrun -l probe-mode -d 'What --probe measures: spin (default) or wakeup' -r -f -a "spin\t'A tight loop reading a clock on each CPU; every gap between two reads is a sample (oslat, sysjitter): what a polling program sees'
wakeup\t'Sleeps to an absolute deadline every --probe-interval; a sample is how late the wake-up was (cyclictest): what an event-driven program sees'"
complete -c pinrun -l probe-threshold -d 'Gaps (or wake-up latencies) above T are counted and their time is lost time (default 1us; wakeup: 100us, above a SCHED_OTHER thread\'s 50us timer slack)' -r
complete -c pinrun -l probe-interval -d 'Wake-up interval of --probe-mode wakeup (default 1ms, as cyclictest; at least 10us, below which the timer slack and the hrtimer\'s own expiry are all the probe would see)' -r
complete -c pinrun -l probe-max -d 'Refuse the launch (exit 125) when a probed CPU\'s worst gap (wakeup: latest wake-up) exceeds T, naming the CPU, the gap and its most likely source' -r
complete -c pinrun -l probe-dma-latency -d 'Hold /dev/cpu_dma_latency open with US microseconds written (default 0, as cyclictest does) during the probe only, closed before COMMAND runs: idle states slower than US to leave are not entered meanwhile. Never by default (the probe then sees the idle states COMMAND gets)' -r
complete -c pinrun -l probe-tracer -d 'Also run the kernel\'s osnoise tracer on the probed CPUs (default osnoise, the only one), in a tracefs instance of pinrun\'s own that is removed afterwards, and name for each large gap the IRQ, softirq, thread or NMI the kernel saw in it. Root, tracefs mounted, a kernel with osnoise in available_tracers and tracing not in use; otherwise the report says why in one line and the sampler alone attributes. Signals that end pinrun wait until the instance is removed' -r -f -a "osnoise\t'The osnoise tracer without its workload, in a tracefs instance of pinrun\'s own: every IRQ, softirq, thread and NMI on the probed CPUs, timed (Documentation/trace/osnoise-tracer.rst)'"
complete -c pinrun -l emit -d 'Print the plan as native directives of FORMAT instead of running (systemd: CPUAffinity=, NUMAPolicy=, CPUSchedulingPolicy=, ...)' -r -f -a "systemd\t'systemd `[Service]` directives (`systemd.exec(5)`)'
k8s\t'A Kubernetes container resources stanza for kubelet\'s static CPU manager, with the CRI-O annotations as comments'
slurm\t'srun --cpu-bind=map_cpu:/mask_cpu: for N tasks per node: `--emit slurm N`'"
complete -c pinrun -l unit-user -d 'With --emit systemd: the unit\'s User=; warns when that user cannot run the ExecStart= binary (a bare name as systemd finds it on its fixed search path): a directory above it it cannot search, the file it cannot execute, or no such binary' -r
complete -c pinrun -l check-emitted -d 'Refuse (exit 125) when this machine\'s topology fingerprint differs from the one FILE (a unit, pod spec or script pinrun emitted) carries: a CPU list chosen on one machine type is not rolled out to another. Also refused: FILE with no, a malformed or more than one fingerprint line, a CPUAffinity=, AllowedCPUs=, NUMAMask= or AllowedMemoryNodes= (or an srun --cpu-bind= list) naming a CPU or node the machine lacks, a unit whose User= cannot run its ExecStart= binary here (as --unit-user warns), and a FILE that is not a regular file of at most 1 MiB' -r -F
complete -c pinrun -l settle -d 'In a Kubernetes container: when kubelet\'s CPU manager state assigns this container CPUs its cpuset does not show yet, wait up to DURATION for them (--settle=10s; units ns, us, ms, s, m, h) before planning. Outside Kubernetes there is nothing to wait for (-v says so)' -r
complete -c pinrun -l sysroot -d 'Read sysfs, procfs and cgroupfs below DIR (a machine dump), or from a .tar.gz, .tar.xz or .tar archive of one (read into memory, never unpacked); only with --dry-run, --check, --show, --emit, --plan-host or --dump' -r -F
complete -c pinrun -l dump -d 'Save the files pinrun reads of this machine (or of --sysroot) to FILE, a .tar.gz that --sysroot FILE replays: attach it to a bug report. Never replaces an existing FILE. See DUMPS in pinrun(1)' -r -F
complete -c pinrun -l housekeeping-count -d 'With --plan-host: keep N CPUs for housekeeping, whole cores, taken from the boot CPU\'s core and node on (OpenShift\'s reserved-cpu-count)' -r
complete -c pinrun -l latency-cores -d 'With --plan-host: make N whole cores latency CPUs; every other core is housekeeping' -r
complete -c pinrun -l offline-count -d 'With --plan-host: take N CPUs offline: whole packages without housekeeping first, then the SMT siblings of latency cores, then any latency CPU (OpenShift\'s offlined-cpu-count)' -r
complete -c pinrun -l allow -d 'Accept these finding codes (comma-separated: codes such as rt-throttling, families such as irq-*, or all): they become info, so --strict and --check pass over them' -r -f -a "all\t''
bind-*\t''
cfs-*\t''
claim-*\t''
cpu-*\t''
cpufreq-*\t''
cpuidle-*\t''
cpuset-*\t''
deadline-*\t''
default-*\t''
efficiency-*\t''
env-*\t''
firmware-*\t''
irq-*\t''
isolated-*\t''
isolation-*\t''
isolcpus-*\t''
k8s-*\t''
managed-*\t''
memory-*\t''
nice-*\t''
no-*\t''
not-*\t''
numa-*\t''
outside-*\t''
partition-*\t''
preempt-*\t''
rt-*\t''
sibling-*\t''
slurm-*\t''
smt-*\t''
sources-*\t''
topology-*\t''
bind-low-memory\t''
cfs-quota\t''
claim-record-unusable\t''
claim-state-unusable\t''
cpu-claimed\t''
cpufreq-governor\t''
cpuidle-deep-states\t''
cpuset-resets-affinity\t''
deadline-cannot-fork\t''
default-irq-affinity\t''
efficiency-core\t''
env-thread-binding\t''
firmware-data\t''
irq-on-cpu\t''
isolated-no-balancing\t''
isolated-without-intent\t''
isolation-mixed\t''
isolation-not-applied\t''
isolcpus-unknown-flag\t''
k8s-cpuset-unsettled\t''
k8s-pool\t''
k8s-shared-pool\t''
managed-irq-on-cpu\t''
memory-partly-remote\t''
memory-remote\t''
nice-ignored\t''
no-numa\t''
not-isolated\t''
not-nohz-full\t''
not-rcu-nocbs\t''
numa-balancing\t''
outside-inherited-affinity\t''
partition-invalid\t''
preempt-model\t''
rt-competitor\t''
rt-priority-99\t''
rt-throttling\t''
rt-time-limit\t''
sibling-not-isolated\t''
slurm-shared-mask\t''
smt-siblings-shared\t''
sources-disagree\t''
topology-inconsistent\t''"
complete -c pinrun -l omp -d 'Export OMP_PLACES (one place per planned core in plan order; with --smt its SMT siblings; --omp=threads: one per planned CPU), OMP_PROC_BIND=close and, unless set, OMP_NUM_THREADS (the number of places) to the command. Refused when the caller set a different OMP_PLACES or OMP_PROC_BIND, or KMP_AFFINITY or GOMP_CPU_AFFINITY (--omp-replace replaces them)' -r -f -a "cores\t'One place per planned core, in plan order (with --smt: its planned SMT siblings)'
threads\t'One place per planned CPU'"
complete -c pinrun -l thread-map -d 'Pin each thread of the command by rules matched in order, SELECTOR=TARGET[,...]: selector main, #N (the N-th thread created) or a name glob (w*); target @N or @N-M (positions in the plan: planned CPUs, or cores with --smt), each (one position per thread, round-robin), housekeeping or rest. A watcher process follows new threads and renames (THREADS in pinrun(1))' -r
complete -c pinrun -l thread-log -d 'Append each --thread-map decision to FILE as a JSON line (a regular file; a symlink, FIFO or device is refused)' -r -F
complete -c pinrun -l generate -d 'Write the man page or a shell completion script to stdout, e.g. `pinrun --generate man > /usr/local/share/man/man1/pinrun.1` (INSTALLATION in pinrun(1))' -r -f -a "man\t'The man page pinrun(1) (man/pinrun.1)'
bash\t'bash completion (completions/pinrun.bash)'
zsh\t'zsh completion (completions/_pinrun)'
fish\t'fish completion (completions/pinrun.fish)'"
complete -c pinrun -l smt -d 'With --cores, use every SMT thread of each chosen core'
complete -c pinrun -l isolated -d 'Choose only isolated CPUs (isolcpus=, cgroup v2 isolated partitions); with --cpus, refuse if any is not isolated'
complete -c pinrun -l housekeeping -d 'Choose only housekeeping CPUs: allowed CPUs that are neither isolated nor nohz_full (the kernel\'s domain and tick housekeeping), the opposite of --isolated; with --cpus, refuse any that is not'
complete -c pinrun -l exclusive -d 'Claim the chosen cores (every SMT sibling of each) while COMMAND lives: other pinrun launches skip them (--cores), refuse them (--cpus) or warn. Choosing and claiming are one atomic step (a lock on the state directory); see CLAIMS in pinrun(1)'
complete -c pinrun -l steer-irqs -d 'With --exclusive (root): move every movable IRQ off the claimed CPUs while COMMAND lives and put it back after (a write-ahead journal in the state directory; kernel-managed IRQs are reported, never written); see IRQ STEERING in pinrun(1)'
complete -c pinrun -l irqbalance-config -d 'With --steer-irqs, when irqbalance runs without its control socket: ban the claimed CPUs in irqbalance.service\'s configuration file (its EnvironmentFile=) and restart it, and put the file back and restart it again when COMMAND ends; see IRQ STEERING in pinrun(1)'
complete -c pinrun -l localalloc -d 'Allocate on the node of the CPU that touches the memory'
complete -c pinrun -l other -d 'SCHED_OTHER (the default time-sharing policy)'
complete -c pinrun -l batch -d 'SCHED_BATCH'
complete -c pinrun -l idle -d 'SCHED_IDLE'
complete -c pinrun -l deadline -d 'SCHED_DEADLINE; needs --sched-runtime and --sched-deadline or --sched-period'
complete -c pinrun -s R -l reset-on-fork -d 'Set SCHED_RESET_ON_FORK: children start with SCHED_OTHER and nice 0 or above'
complete -c pinrun -l migrate -d 'With --pid: move the process\'s pages to the chosen memory nodes (`migrate_pages(2)`, as migratepages(8)) from the nodes it has; the only way to change where another process\'s memory is, since no system call sets another process\'s memory policy'
complete -c pinrun -l dry-run -d 'Print the plan and findings, change nothing, run nothing'
complete -c pinrun -l check -d 'Print findings only; exit 0 when clean, 1 when not'
complete -c pinrun -l show -d 'Print the machine: nodes, packages, cores, CPUs'
complete -c pinrun -l cgroup -d 'With --emit systemd: add AllowedCPUs= and AllowedMemoryNodes=, so that the unit\'s cgroup holds exactly the planned CPUs and nodes'
complete -c pinrun -l json -d 'Machine-readable output: one JSON object on stdout (errors too, as {"error": {...}}); with --dry-run, --check, --show or --probe without a command, and with --pid (the view, or what a change did). Refused, with the reason, with --emit (its output is unit directives) and with a launch (stdout belongs to the command)'
complete -c pinrun -l reclaim -d 'Undo the IRQ steering of every ended --steer-irqs launch (its journal in the state directory) and exit; prints "nothing to reclaim in DIR" when there is none'
complete -c pinrun -l plan-host -d 'Plan the boot-time split of this host into housekeeping and latency CPUs (whole cores; the boot CPU\'s core is housekeeping) and print every setting that makes it so, each in its owner\'s form: the kernel command line (each parameter checked against this kernel), systemd\'s CPUAffinity=, irqbalance\'s ban list, tuned\'s cpu-partitioning variables, a cgroup v2 isolated partition, kubelet\'s reservedSystemCPUs and OpenShift\'s PerformanceProfile spec.cpu. With --check: how the running host differs from the split (exit 1 when it does). Needs --housekeeping-count N or --latency-cores N, but with --check (then the split is the one the running kernel isolates). See PREPARE THE HOST in pinrun(1)'
complete -c pinrun -l no-smt -d 'With --plan-host: boot with nosmt, so only the first CPU of each core stays (OpenShift\'s disable-ht)'
complete -c pinrun -l split-numa -d 'With --plan-host: spread the housekeeping CPUs evenly over the NUMA nodes (OpenShift\'s split-reserved-cpus-across-numa)'
complete -c pinrun -l strict -d 'Refuse the launch (exit 125) on any warning'
complete -c pinrun -l omp-replace -d 'With --omp: replace the caller\'s OMP_PLACES, OMP_PROC_BIND, KMP_AFFINITY and GOMP_CPU_AFFINITY instead of refusing'
complete -c pinrun -s q -l quiet -d 'Print no warnings'
complete -c pinrun -s v -l verbose -d 'Print the plan to stderr before running the command'
complete -c pinrun -s h -l help -d 'Print help (see more with \'--help\')'
complete -c pinrun -s V -l version -d 'Print version'

# pinrun: CPU and node numbers of this machine.
function __pinrun_ids
    for item in (string split , -- (cat $argv[1] 2>/dev/null))
        set -l ab (string split - -- $item)
        if test (count $ab) -eq 2
            seq $ab[1] $ab[2]
        else if test -n "$item"
            echo $item
        end
    end
end
complete -c pinrun -l cpus -x -a '(__pinrun_ids /sys/devices/system/cpu/online) all'
complete -c pinrun -s C -x -a '(__pinrun_ids /sys/devices/system/cpu/online) all'
complete -c pinrun -s c -x -a '(__pinrun_ids /sys/devices/system/cpu/online) all'
complete -c pinrun -l physcpubind -x -a '(__pinrun_ids /sys/devices/system/cpu/online) all'
complete -c pinrun -l cpu-list -x -a '(__pinrun_ids /sys/devices/system/cpu/online) all'
complete -c pinrun -l node -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -l cpunodebind -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -s N -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -l membind -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -s m -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -l preferred -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -l preferred-many -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -l interleave -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
complete -c pinrun -l weighted-interleave -x -a '(__pinrun_ids /sys/devices/system/node/online) all'
