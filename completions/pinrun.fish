complete -c pinrun -s C -l cpus -l physcpubind -l cpu-list -d 'Run on exactly these CPUs: a cpulist (0-3,8,0-14:2,0-15:2/4) or a hex cpumask (0xff, 0xff,00000000). Every CPU must exist, be online and allowed by the cgroup cpuset. Aliases: -C, -c, --physcpubind (numactl), --cpu-list (taskset -c)' -r
complete -c pinrun -l node -d 'Take CPUs from these NUMA nodes (a node list such as 0 or 0,2)' -r
complete -c pinrun -s N -l cpunodebind -d 'Run on every allowed CPU of NODES, as numactl --cpunodebind (-N) does: the same as --node NODES alone, and therefore not combined with --cores, --cpus, --node or --isolated (which choose among them)' -r
complete -c pinrun -l cores -d 'Choose N whole physical cores (all SMT siblings allowed), one CPU (the lowest-numbered thread) of each' -r
complete -c pinrun -l wait -d 'Wait for claimed cores to become free instead of refusing, printing what it waits for; without DURATION as long as it takes (--wait=30s; units ns, us, ms, s)' -r
complete -c pinrun -l state-dir -d 'Directory of the claim records (default /run/pinrun, created with mode 1777 like /tmp)' -r -F
complete -c pinrun -s m -l membind -d 'Allocate memory only on NODES (default: the nodes of the chosen CPUs). Write --membind=NODES, or put -- before the command, when COMMAND could be read as a node list' -r
complete -c pinrun -l preferred -d 'Prefer memory on NODE, falling back to others' -r
complete -c pinrun -l preferred-many -d 'Prefer memory on any of NODES (Linux 5.15+)' -r
complete -c pinrun -l interleave -d 'Interleave memory across NODES, or all nodes with memory' -r
complete -c pinrun -l weighted-interleave -d 'Interleave by the kernel\'s per-node weights (Linux 6.9+)' -r
complete -c pinrun -s f -l fifo -d 'SCHED_FIFO with priority PRIO (1-99)' -r
complete -c pinrun -s r -l rr -d 'SCHED_RR with priority PRIO (1-99)' -r
complete -c pinrun -l sched-runtime -d 'Deadline runtime T, with a unit: ns, us, ms or s' -r
complete -c pinrun -l sched-deadline -d 'Deadline relative deadline T (default: the period)' -r
complete -c pinrun -l sched-period -d 'Deadline period T (default: the deadline)' -r
complete -c pinrun -l nice -d 'Nice value N (-20..19); default: keep the current one' -r
complete -c pinrun -l emit -d 'Print the plan as native directives of FORMAT instead of running (systemd: CPUAffinity=, NUMAPolicy=, CPUSchedulingPolicy=, ...)' -r -f -a "systemd\t'systemd `[Service]` directives (`systemd.exec(5)`)'"
complete -c pinrun -l sysroot -d 'Read sysfs, procfs and cgroupfs below DIR (a machine dump), or from a .tar.gz, .tar.xz or .tar archive of one (unpacked into a temporary directory, removed at exit); only with --dry-run, --check, --show, --emit or --dump' -r -F
complete -c pinrun -l dump -d 'Save the files pinrun reads of this machine (or of --sysroot) to FILE, a .tar.gz that --sysroot FILE replays: attach it to a bug report. Never replaces an existing FILE. See DUMPS in pinrun(1)' -r -F
complete -c pinrun -l allow -d 'Accept these finding codes (comma-separated: codes such as rt-throttling, families such as irq-*, or all): they become info, so --strict and --check pass over them' -r
complete -c pinrun -l generate -d 'Write the man page or a shell completion script to stdout, e.g. `pinrun --generate man > /usr/local/share/man/man1/pinrun.1` (INSTALLATION in pinrun(1))' -r -f -a "man\t'The man page pinrun(1) (man/pinrun.1)'
bash\t'bash completion (completions/pinrun.bash)'
zsh\t'zsh completion (completions/_pinrun)'
fish\t'fish completion (completions/pinrun.fish)'"
complete -c pinrun -l smt -d 'With --cores, use every SMT thread of each chosen core'
complete -c pinrun -l isolated -d 'Choose only isolated CPUs (isolcpus=, cgroup v2 isolated partitions); with --cpus, refuse if any is not isolated'
complete -c pinrun -l exclusive -d 'Claim the chosen cores (every SMT sibling of each) while COMMAND lives: other pinrun launches skip them (--cores), refuse them (--cpus) or warn. Choosing and claiming are one atomic step (a lock on the state directory); see CLAIMS below'
complete -c pinrun -l localalloc -d 'Allocate on the node of the CPU that touches the memory'
complete -c pinrun -l other -d 'SCHED_OTHER (the default time-sharing policy)'
complete -c pinrun -l batch -d 'SCHED_BATCH'
complete -c pinrun -l idle -d 'SCHED_IDLE'
complete -c pinrun -l deadline -d 'SCHED_DEADLINE; needs --sched-runtime and --sched-deadline or --sched-period'
complete -c pinrun -s R -l reset-on-fork -d 'Set SCHED_RESET_ON_FORK: children start with SCHED_OTHER and nice 0 or above'
complete -c pinrun -l dry-run -d 'Print the plan and findings, change nothing, run nothing'
complete -c pinrun -l check -d 'Print findings only; exit 0 when clean, 1 when not'
complete -c pinrun -l show -d 'Print the machine: nodes, packages, cores, CPUs'
complete -c pinrun -l json -d 'Machine-readable output: one JSON object on stdout (errors too, as {"error": {...}}); with --dry-run, --check or --show'
complete -c pinrun -l strict -d 'Refuse the launch (exit 125) on any warning'
complete -c pinrun -s q -l quiet -d 'Print no warnings'
complete -c pinrun -s v -l verbose -d 'Print the plan to stderr before running the command'
complete -c pinrun -s h -l help -d 'Print help (see more with \'--help\')'
complete -c pinrun -s V -l version -d 'Print version'
