complete -c pinrun -s C -l cpus -l physcpubind -l cpu-list -d 'Run on exactly these CPUs: a cpulist (0-3,8,0-14:2,0-15:2/4) or a hex cpumask (0xff, 0xff,00000000). Every CPU must exist, be online and allowed by the cgroup cpuset; all, !LIST (all but) and +LIST (indices among the allowed) as numactl. Aliases: -C, -c, --physcpubind (numactl), --cpu-list (taskset -c)' -r -f
complete -c pinrun -l node -d 'Take CPUs from these NUMA nodes (a node list such as 0 or 0,2; all, !LIST, +LIST as numactl)' -r -f
complete -c pinrun -s N -l cpunodebind -d 'Run on every allowed CPU of NODES, as numactl --cpunodebind (-N) does: the same as --node NODES alone, and therefore not combined with --cores, --cpus, --node or --isolated (which choose among them)' -r -f
complete -c pinrun -l cores -d 'Choose N whole physical cores (all SMT siblings allowed), one CPU (the lowest-numbered thread) of each' -r
complete -c pinrun -l within -d 'Where --cores, --node and --isolated choose: inside the inherited CPU affinity (taskset, systemd CPUAffinity=, a batch scheduler\'s per-task binding) or across the cgroup\'s CPUs. Default: inside the inherited affinity when it is narrower than the cgroup\'s CPUs minus the isolated ones, else across the cgroup (see SOURCES). --cpus may leave the inherited affinity (with a finding)' -r -f -a "inherited\t'The affinity pinrun inherited (taskset, systemd CPUAffinity=, a batch scheduler\'s binding): Cpus_allowed_list of /proc/self/status'
cgroup\t'The caller\'s cgroup cpuset (its online effective CPUs)'"
complete -c pinrun -l wait -d 'Wait for claimed cores to become free instead of refusing, printing what it waits for; without DURATION as long as it takes (--wait=30s; units ns, us, ms, s, m, h)' -r
complete -c pinrun -l state-dir -d 'Directory of the claim records (default: PINRUN_STATE_DIR when set and not empty, else /run/pinrun, created with mode 1777 like /tmp)' -r -F
complete -c pinrun -l irq-housekeeping -d 'With --steer-irqs: the CPUs an IRQ goes to when none of its own is left (default: online CPUs not isolated, not nohz_full, not claimed; the device\'s node first)' -r
complete -c pinrun -s m -l membind -d 'Allocate memory only on NODES (default: the nodes of the chosen CPUs). Write --membind=NODES, or put -- before the command, when COMMAND could be read as a node list' -r -f
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
complete -c pinrun -l emit -d 'Print the plan as native directives of FORMAT instead of running (systemd: CPUAffinity=, NUMAPolicy=, CPUSchedulingPolicy=, ...)' -r -f -a "systemd\t'systemd `[Service]` directives (`systemd.exec(5)`)'"
complete -c pinrun -l sysroot -d 'Read sysfs, procfs and cgroupfs below DIR (a machine dump), or from a .tar.gz, .tar.xz or .tar archive of one (unpacked into a temporary directory, removed at exit); only with --dry-run, --check, --show, --emit or --dump' -r -F
complete -c pinrun -l dump -d 'Save the files pinrun reads of this machine (or of --sysroot) to FILE, a .tar.gz that --sysroot FILE replays: attach it to a bug report. Never replaces an existing FILE. See DUMPS in pinrun(1)' -r -F
complete -c pinrun -l allow -d 'Accept these finding codes (comma-separated: codes such as rt-throttling, families such as irq-*, or all): they become info, so --strict and --check pass over them' -r -f -a "all\t''
bind-*\t''
claim-*\t''
cpu-*\t''
cpufreq-*\t''
cpuidle-*\t''
deadline-*\t''
default-*\t''
env-*\t''
firmware-*\t''
irq-*\t''
isolated-*\t''
isolation-*\t''
isolcpus-*\t''
managed-*\t''
memory-*\t''
nice-*\t''
no-*\t''
not-*\t''
numa-*\t''
outside-*\t''
partition-*\t''
rt-*\t''
sibling-*\t''
smt-*\t''
sources-*\t''
topology-*\t''
bind-low-memory\t''
claim-record-unusable\t''
claim-state-unusable\t''
cpu-claimed\t''
cpufreq-governor\t''
cpuidle-deep-states\t''
deadline-cannot-fork\t''
default-irq-affinity\t''
env-thread-binding\t''
firmware-data\t''
irq-on-cpu\t''
isolated-no-balancing\t''
isolation-not-applied\t''
isolcpus-unknown-flag\t''
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
rt-competitor\t''
rt-priority-99\t''
rt-throttling\t''
sibling-not-isolated\t''
smt-siblings-shared\t''
sources-disagree\t''
topology-inconsistent\t''"
complete -c pinrun -l omp -d 'Export OMP_PLACES (one place per planned core in plan order; with --smt its SMT siblings; --omp=threads: one per planned CPU), OMP_PROC_BIND=close and, unless set, OMP_NUM_THREADS (the number of places) to the command. Refused when the caller set a different OMP_PLACES or OMP_PROC_BIND, or KMP_AFFINITY or GOMP_CPU_AFFINITY (--omp-replace replaces them)' -r -f -a "cores\t'One place per planned core, in plan order (with --smt: its planned SMT siblings)'
threads\t'One place per planned CPU'"
complete -c pinrun -l thread-map -d 'Pin each thread of the command by rules matched in order, SELECTOR=TARGET[,...]: selector main, #N (the N-th thread created) or a name glob (w*); target @N or @N-M (positions in the plan: planned CPUs, or cores with --smt), each (one position per thread, round-robin), housekeeping or rest. A watcher process follows new threads and renames (THREADS in pinrun(1))' -r
complete -c pinrun -l thread-log -d 'Append each --thread-map decision to FILE as a JSON line' -r -F
complete -c pinrun -l generate -d 'Write the man page or a shell completion script to stdout, e.g. `pinrun --generate man > /usr/local/share/man/man1/pinrun.1` (INSTALLATION in pinrun(1))' -r -f -a "man\t'The man page pinrun(1) (man/pinrun.1)'
bash\t'bash completion (completions/pinrun.bash)'
zsh\t'zsh completion (completions/_pinrun)'
fish\t'fish completion (completions/pinrun.fish)'"
complete -c pinrun -l smt -d 'With --cores, use every SMT thread of each chosen core'
complete -c pinrun -l isolated -d 'Choose only isolated CPUs (isolcpus=, cgroup v2 isolated partitions); with --cpus, refuse if any is not isolated'
complete -c pinrun -l housekeeping -d 'Choose only housekeeping CPUs: allowed CPUs that are neither isolated nor nohz_full (the kernel\'s domain and tick housekeeping), the opposite of --isolated; with --cpus, refuse any that is not'
complete -c pinrun -l exclusive -d 'Claim the chosen cores (every SMT sibling of each) while COMMAND lives: other pinrun launches skip them (--cores), refuse them (--cpus) or warn. Choosing and claiming are one atomic step (a lock on the state directory); see CLAIMS in pinrun(1)'
complete -c pinrun -l steer-irqs -d 'With --exclusive (root): move every movable IRQ off the claimed CPUs while COMMAND lives and put it back after (a write-ahead journal in the state directory; kernel-managed IRQs are reported, never written); see IRQ STEERING in pinrun(1)'
complete -c pinrun -l localalloc -d 'Allocate on the node of the CPU that touches the memory'
complete -c pinrun -l other -d 'SCHED_OTHER (the default time-sharing policy)'
complete -c pinrun -l batch -d 'SCHED_BATCH'
complete -c pinrun -l idle -d 'SCHED_IDLE'
complete -c pinrun -l deadline -d 'SCHED_DEADLINE; needs --sched-runtime and --sched-deadline or --sched-period'
complete -c pinrun -s R -l reset-on-fork -d 'Set SCHED_RESET_ON_FORK: children start with SCHED_OTHER and nice 0 or above'
complete -c pinrun -l dry-run -d 'Print the plan and findings, change nothing, run nothing'
complete -c pinrun -l check -d 'Print findings only; exit 0 when clean, 1 when not'
complete -c pinrun -l show -d 'Print the machine: nodes, packages, cores, CPUs'
complete -c pinrun -l json -d 'Machine-readable output: one JSON object on stdout (errors too, as {"error": {...}}); with --dry-run, --check or --show. Refused, with the reason, with --emit (its output is unit directives) and with a launch (stdout belongs to the command)'
complete -c pinrun -l reclaim -d 'Undo the IRQ steering of every ended --steer-irqs launch (its journal in the state directory) and exit'
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
