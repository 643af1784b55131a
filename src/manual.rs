//! Hand-written sections of pinrun(1), appended by `--generate man` to the
//! synopsis and options clap_mangen generates from the clap definition.
//! Raw roff (man(7) macros).

/// The sections after OPTIONS up to CHECKS' introduction, in
/// man-pages(7) order; [`sections`] adds the list of codes and the rest.
pub const SECTIONS_BEFORE_CODES: &str = r#".SH "CPU LISTS"
A cpulist is a comma-separated list of items, each
.BR N ,
.B A\-B
(a range),
.B A\-B:S
(util-linux stride: every S\-th CPU from A to B) or
.B A\-B:U/G
(kernel used/group form: the first U CPUs of every group of G).
A value starting with
.B 0x
is a hexadecimal cpumask, optionally in comma-separated 32-bit words, most
significant first. Output is always canonical kernel ranges.
.PP
.nf
0\-3,8          CPUs 0, 1, 2, 3 and 8
0\-14:2         0,2,4,6,8,10,12,14
0\-15:2/4       0,1,4,5,8,9,12,13
0xff,00000000   CPUs 32\-39
.fi
.PP
Reversed ranges, stride 0, empty items and trailing commas are errors; the
message quotes the input and names the character where parsing stopped.
.PP
Wherever a CPU or node list is taken
.RB ( \-\-cpus ", " \-\-node ", " \-\-membind ", " \-\-interleave ),
numactl's forms work too:
.B all
(every allowed CPU, or every node the process may use),
.BI ! LIST
(all of them but LIST) and
.BI + LIST
(LIST as indices among them: +0 is the lowest allowed CPU), resolved as
libnuma's numa_parse_cpustring does, against the allowed CPUs and the nodes
of Mems_allowed (for memory, those with memory). A result with no CPU or node is refused.
.SH PLACEMENT
Each placement option narrows the candidate CPUs: the allowed CPUs (online
CPUs inside the caller's cgroup cpuset), then
.B \-\-cpus
and
.BR \-\-node ,
then
.BR \-\-isolated .
.B \-\-cores N
then picks N whole cores (every SMT sibling a candidate) by the rule of
CHOOSING CORES, ties compactly: the lowest
node that can hold all N, in it the lowest package that can, then the lowest
die, LLC and cluster that can (PLACEMENT UNITS), then the lowest
cores; one CPU of each, or every thread with
.BR \-\-smt .
SMT siblings are read from
.I topology/core_cpus_list
(fallback
.IR thread_siblings_list ),
never computed.
.PP
Example, on 2 sockets \(mu 4 cores \(mu 2 threads with siblings (N, N+8) and one
node per socket:
.B \-\-node 1 \-\-cores 2
gives CPUs 4,5;
.B \-\-node 1 \-\-cores 2 \-\-smt
gives 4,5,12,13.
.B \-\-cpus 20
on that machine is refused: CPU 20 does not exist.
.PP
The inherited CPU affinity (what
.BR sched_getaffinity (2)
returns:
.I Cpus_allowed_list
of /proc/self/status, set by taskset, systemd
.BR CPUAffinity= ,
or a batch scheduler's per-task binding) bounds what
.BR \-\-cores ,
.B \-\-node
and
.B \-\-isolated
choose when it is an explicit narrowing: when it lacks an allowed CPU that is
not isolated, and does not hold PID 1's affinity. The mask a shell started by
init inherits (every CPU but the isolcpus ones, or systemd's
.BR CPUAffinity= )
is not a narrowing, so
.B \-\-isolated
still reaches the isolated CPUs from a login shell. Two ranks of one job
started with their own masks thus get different cores, as with
.BR numactl .
.B \-\-within inherited
always chooses inside the inherited affinity,
.B \-\-within cgroup
always across the cgroup's CPUs.
.B \-\-cpus
may name CPUs outside the inherited affinity (finding
.BR outside\-inherited\-affinity ).
.SH "CHOOSING CORES"
A request carries latency intent when it asks for a real-time or deadline
policy
.RB ( \-\-fifo ", " \-\-rr ", " \-\-deadline ),
.BR \-\-exclusive ,
.BR \-\-isolated ,
.B \-\-probe
or
.BR \-\-steer\-irqs .
The mode plays no part:
.BR \-\-dry\-run ,
.BR \-\-check ,
.B \-\-emit
and the launch choose alike. The plan's first
.B why:
line and its JSON
.B choice
object
.RB ( intent ", " rule ", " compact )
say which intent was read and which rule chose.
.PP
.B With latency intent
(rule
.BR quietest ),
.B \-\-cores N
takes the quietest whole cores among the candidates (node, LLC, core type,
.BR \-\-within ,
claims narrow them as before), ranking each core by all its threads:
.IP 1. 4
cores with a CPU the host names for housekeeping come last, the boot CPU
(CPU 0) last of all: CPUs in
.BR irqaffinity= ,
in a /proc/irq/default_smp_affinity narrower than the online CPUs, in the
affinity of PID 1 when narrower than the CPUs pinrun may use (systemd's
.B CPUAffinity=
on a host; in a container PID 1 runs on the container's cpuset and names
nothing),
or outside a non-empty nohz_full set;
.IP 2. 4
then the fewest CPUs that are not domain-isolated (cpu/isolated and cgroup v2
isolated partitions), then not nohz_full, then not in rcu_nocbs= (nohz_full=
implies it);
.IP 3. 4
then no device IRQ routed there (effective affinity, else smp_affinity_list,
else where its counts show it fired);
.IP 4. 4
then the fewest interrupts those IRQs delivered there, by order of magnitude
(3 and 5 since boot are a tie).
.PP
Cores that tie are chosen compactly, near the ones already taken (the same
LLC, else node); without
.BR \-\-smt ,
the quietest thread of each core runs the command.
.BR \-\-node ,
.BR \-\-llc ,
.B \-\-near
and the cgroup stay constraints; inside them the rule decides.
.PP
.B Without latency intent
(rule
.BR housekeeping\-first ),
.B \-\-cores N
takes the cores with the fewest isolated or nohz_full threads first (then
compactly), and a placement without
.B \-\-cores
.RB ( \-\-node ,
.BR \-\-llc )
leaves the isolated and nohz_full CPUs out of its mask while others remain, as
init's affinity does under isolcpus=. An isolated CPU is used only when named
.RB ( \-\-cpus ", " \-\-isolated )
or when nothing else fits, and then with the notice
.BR isolated\-without\-intent ;
a mask mixing isolated and housekeeping CPUs is the warning
.BR isolation\-mixed .
.PP
.B \-\-choose measured\fR[\fB=\fIDURATION\fR]
chooses by measurement instead: pinrun plans every free whole candidate
core (the quietest thread of each, every thread with
.BR \-\-smt ),
runs the spin probe of PROBE on all of them at once for DURATION (default 1s,
10ms to 10s) under SCHED_OTHER whatever the request asks (a real-time spin
on every candidate would take every CPU from the host for that long), and
takes the N cores whose threads had the smallest worst gap; gaps within a
factor of two tie, and the rule above breaks ties. A CPU whose probe thread
could not measure its whole time (held off it by a real-time task until the
probe's watchdog stopped it, then moved it off that CPU) ranks last, its gap
null in the JSON; when the choice would still need such a CPU (every
candidate held off, on a host too loaded for the probe), pinrun refuses
(exit 125) rather than choose by the rule alone. Each
probed CPU's worst gap is in the
.B why:
lines and in the JSON as
.BR choice.measured .
It is refused below
.B \-\-sysroot
(a dump cannot be measured) and with
.BR \-\-pid ,
.BR \-\-cpus ,
.B \-\-emit
(emitted files run at another time) and
.BR \-\-deadline ;
it carries latency intent. A dry run measures too, and as a measurement it
may choose otherwise than a later launch.
.PP
When the rule moves the choice away from the compact, lowest-numbered CPUs
(what taskset users and kubelet's static policy expect), a launch says so on
its first stderr line, e.g. on a 2-CPU host:
.PP
.RS
.nf
pinrun: chose CPU 1 by the quietest rule (\-\-fifo), not CPU 0: \-\-dry\-run says why
.fi
.RE
.PP
Hints name what works on this host first ("CPUs 2\-3 are isolated and
free: \-\-isolated, or \-\-cpus 2"), and never the boot CPU in a boot
parameter: it keeps the kernel's housekeeping, and kernels before 6.5 clear
it from nohz_full= (tick_nohz_init()).
.SH "PLACEMENT UNITS"
The compact-choice order is node, package, die, LLC, cluster, core: each
level is the lowest one that holds everything asked for, and where none
does, the fewest of them (the fullest first, then the lowest), each filled
the same way. On a machine with core types (see
.BR \-\-core\-type )
core types come first: they are filled the most capable first
(performance cores, then by falling
.IR cpu_capacity ,
capacities within the scheduler's
.B fits_capacity()
margin of 25% being one class),
so that packing never moves a choice onto efficiency cores while
performance cores are free. The units are the kernel's lists:
.I cache/index*/shared_cpu_list
of the highest cache level that is not an instruction cache (the LLC: an L3,
an AMD CCX;
.IR Documentation/ABI/testing/sysfs-devices-system-cpu ),
.I topology/die_cpus_list
and
.I topology/cluster_cpus_list
.RI ( Documentation/admin-guide/cputopology.rst ).
A die or cluster whose
.I die_id
or
.I cluster_id
is \-1 (the architecture has none: arm64 dies) is no unit. Clusters pack
only where all are of one size: on Intel hybrids a P\-core is a cluster of
its own and E\-cores share one by four, and packing there would move the
choice onto E\-cores. The group that holds everything is the lowest in CPU
order, a node or package the kernel does not name last. The plan says
whether the chosen cores are inside one LLC or over how many.
.TP
.BI \-\-llc " N" ", \-\-dies " N ", \-\-clusters " N
N whole groups (every online CPU of each a candidate and none claimed),
chosen compactly by node, package and die; every CPU of them, or, with
.BR \-\-cores ,
cores inside them. A unit the kernel does not list for the candidates is
refused
.RB ( unit\-unavailable ),
so are fewer whole groups than N
.RB ( not\-enough\-units ).
.TP
.BI \-\-core\-type " performance" | efficiency
Only CPUs of that core type: on Intel hybrids the CPUs of the
.I cpu_core
(performance) and
.I cpu_atom
(efficiency) PMUs,
.I /sys/devices/cpu_core/cpus
and
.IR cpu_atom/cpus ;
elsewhere (arm64, RISC\-V)
.IR cpuN/cpu_capacity :
the CPUs of the highest capacity are performance cores, those of the lowest
efficiency cores, CPUs between (a middle tier) neither. A machine with one
type (no PMU file, equal or no capacities) refuses it
.RB ( no\-core\-types ).
A real\-time or
.B \-\-isolated
launch on CPUs that are not performance cores gets the finding
.BR efficiency\-core .
.TP
.BI \-\-near " DEVICE"
The CPUs of the NUMA node of a network interface
.RI ( eth0 ),
a PCI function
.RI ( 0000:3b:00.0 " or " 3b:00.0 ),
a block device
.RI ( nvme0n1 )
or a file's block device (a path; live only): the
.I numa_node
of the nearest directory with one on the device's sysfs path, as numactl's
.BR \-\-cpunodebind=netdev: ,
.BR pci: ,
.B block:
and
.B file:
read it. \-1 is the kernel's "unknown" and is said so: on a machine with one
node every CPU is as near, on several it is refused
.RB ( device\-node\-unknown ;
choose with
.BR \-\-node ).
.B \-\-membind
without NODES then binds to that node. The plan names the CPUs the device's
MSI IRQs
.RI ( msi_irqs/ )
are steered to;
.B \-\-near\-irqs avoid
leaves them out,
.B \-\-near\-irqs share
chooses only among them.
.B \-\-show
lists the network interfaces and block devices per node.
.SH CLAIMS
.B \-\-exclusive
claims the chosen cores, every SMT sibling of each (even when only one thread
is used), for as long as the command lives, so that two pinrun launches never
share a core, without a daemon. Under an exclusive
.BR flock (2)
on the state directory, pinrun reads the claims, chooses, and writes its
record; the lock is released when the command is exec'd (the descriptor is
close-on-exec and never reaches the command). The record names pinrun's PID,
which is the command's PID after exec, and its start time (field 22 of
.IR /proc/<pid>/stat ),
so a reused PID is never mistaken for the holder.
.PP
Every launch sees the claims:
.B \-\-cores N
skips claimed cores (and says so in
.BR \-\-dry\-run ),
refusing with
.B no free core
when too few stay free;
.B \-\-cpus
with a claimed CPU, and
.B \-\-exclusive
on a core any thread of which is claimed, are refused (exit 125) naming the
holder's PID and command. Other launches that would run on claimed CPUs (no
placement,
.BR \-\-node )
get the warning
.BR cpu\-claimed ,
a refusal under
.BR \-\-strict .
.B \-\-wait[=DURATION]
waits for the cores instead of refusing, saying on standard error what it waits
for.
.B \-\-show
lists the live claims (PID, CPUs, age, command);
.B \-\-show \-\-json
in the
.B claims
array (holder, pid, start_time, uid, pgid, group_only (the PID exited, its process group holds the claim), command, cpus, since, age_s, record; kubelet's
with pod and container), with
.B claimed_cpus
and
.BR claim_warnings .
.PP
The state directory is
.I /run/pinrun
(or
.BR \-\-state\-dir ,
.BR PINRUN_STATE_DIR ),
created with mode 1777 like /tmp; a user who cannot create it needs it created
once by root:
.BR "install \-d \-m 1777 /run/pinrun" ,
or the tmpfiles.d(5) line
.BR "d /run/pinrun 1777 root root \-" .
It must belong to root or to the user, be sticky if others may write it,
and not be a symlink (see SECURITY).
Each claim is one JSON file of at most 32 KiB named
.IR <pid>.<starttime>.<random> ,
16 hexadecimal digits from
.BR getrandom (2)
that no one can pre-create, mode 0644, created with O_EXCL|O_NOFOLLOW relative
to the directory: pid, start time, uid, process group, CPUs, command line
(shortened to fit), time. A record whose process is gone, a zombie, or has
another start time is stale; pinrun removes only its own stale records (a file
that parses as a record, owned by the uid it names: this user's, or any as
root), never other files however they are named. One that cannot be removed
(another user's) is ignored and never blocks anyone. Symlinks, FIFOs, oversized
or unparsable files named like records give
.B claim\-record\-unusable
(info when another user owns them) and claim nothing. With
.BR \-\-sysroot ,
no records are read (a dump has no live processes).
.PP
A claim follows the PID pinrun execs in place. When the launch leads its
process group (a job of an interactive shell, a systemd service, a
.BR setsid (1)
command) it also follows that group: a command that forks and exits (a
daemon, \fBsh \-c 'cmd &'\fR) keeps its cores while any process of the group
lives (its PID cannot be reused meanwhile). A child that leaves the group
.RB ( setsid (2),
.BR setpgid (2))
is not followed, nor are children of a launch that does not lead its group (a
command inside a script): run those under
.BR setsid (1)
.RB ( "setsid \-w pinrun \-\-exclusive ..." )
or as a systemd service.
.PP
CPUs that kubelet's static CPU manager assigned exclusively to containers
(the
.B entries
of
.IR /var/lib/kubelet/cpu_manager_state ,
below
.B \-\-sysroot
too) count as claimed; pinrun never writes that file. A core with any claimed
thread is skipped by
.B \-\-cores
and refused by
.BR \-\-exclusive .
.SH SECURITY
The state directory is shared by every user, so a claim is a promise between
users that pinrun keeps, not a kernel guarantee: a process that does not use
pinrun can still run anywhere its cpuset allows. pinrun trusts the kernel
(\fI/proc\fR, file owners) and never the text of a record alone.
.PP
.B Who may claim what.
A record counts only when its file's owner is root or a UID of the process it
names (checked in
.IR /proc/<pid>/status );
a record naming another user's process, or saying another uid than its
file's owner, is ignored.
Root's records hold any CPU. A record of another user holds only the CPUs its
process may run on: its
.B Cpus_allowed_list
and their SMT siblings (a claim covers whole cores); CPUs beyond are ignored,
with a
.B claim\-record\-unusable
finding naming them. A CPU that does not exist cannot be claimed: each
record's CPUs are clipped to the possible CPUs as it is read, with a
warning naming the record (one of only such CPUs claims nothing), so a
record of 0\-4194303, which any user can write, costs what a record of
the machine's CPUs costs. Every message names the uid of a claim that is not root's
(\fBpid 123 (engine) of uid 1000\fR), so a record cannot pass for another
command's. Control and bidirectional-formatting characters (U+202A\(enU+202E,
U+2066\(enU+2069) in a record are printed as
.BR ? .
.PP
.B What an unprivileged user can and cannot do to root's launches.
It can claim cores its own processes may use, first come first served, as root
can; it can hold the directory's lock, and then every
.B \-\-exclusive
launch refuses after 10 seconds naming the holder (PID, command and uid, from
.IR /proc/locks );
it can make every launch refuse by filling the directory beyond 1048576
entries. It cannot hide another user's claim (the directory is always read
completely, or not at all: a listing error or too many entries refuses the
launch; a user with more than 4096 records has them all ignored, which hides
only its own), forge a claim in another user's name, claim CPUs its process
cannot use, delete or replace another user's record (the sticky bit), make a
launch follow a symlink or block on a FIFO, stall it with a large record
(records are at most 32 KiB), pre-create the name a launch will write, or make
pinrun delete a file that is not a record of its own. A pinrun never prints while
it holds the lock, so a stuck terminal or pipe holds no one else.
.PP
.B When the directory cannot be read.
An
.B \-\-exclusive
launch refuses (exit 125) whenever it cannot prove the cores free: the
directory cannot be listed completely, a record cannot be opened or read for a
reason that says nothing about it (EMFILE, ENOMEM, EIO), or the lock is held
beyond 10 seconds. It never fails open. Launches without
.B \-\-exclusive
and
.B \-\-show
read what they can and warn
.RB ( claim\-state\-unusable ).
.PP
.B The directory itself.
It must not be a symlink (not followed, even with a trailing slash), must
belong to root or to the user, and must not be writable by group or others
unless sticky.
.PP
.B A private state directory.
Launches that must not depend on other users share a directory only they can
write, e.g. for a service user:
.B "install \-d \-m 0755 \-o engine /run/pinrun\-engine"
(or the tmpfiles.d line
.BR "d /run/pinrun\-engine 0755 engine engine \-" )
and
.B \-\-state\-dir /run/pinrun\-engine
(or
.BR PINRUN_STATE_DIR ).
No other user can then claim, lock or flood it; claims in it are invisible to
launches using other directories, so give every cooperating launch the same
one.
.SH "MEMORY POLICIES"
Set with
.BR set_mempolicy (2)
before exec, inherited by the command:
.B bind
(allocate only on the nodes; without NODES, the nodes of the chosen CPUs, which needs
a placement option),
.B preferred
(one node first),
.B preferred-many
(Linux 5.15+),
.B interleave
and
.B weighted-interleave
(Linux 6.9+; weights in /sys/kernel/mm/mempolicy/weighted_interleave),
.BR local .
Nodes that do not exist, have no memory (the hint names the nearest node with
memory by distance) or lie outside Mems_allowed are refused, and so is a mode
the running kernel (/proc/sys/kernel/osrelease) does not have.
.SH SCHEDULING
Set with
.BR sched_setattr (2);
what is not given (priority, nice, flags) is kept. SCHED_FIFO and SCHED_RR take
priorities 1\-99; 99 draws a warning, since it equals the kernel's own per-CPU
threads. SCHED_DEADLINE needs CAP_SYS_NICE and an affinity that covers its
whole root domain, so
.B \-\-deadline
with a narrower placement (or, without one, a narrower inherited affinity) is
refused: create an exclusive cpuset partition
(cgroup v2 cpuset.cpus.partition=root) and run inside it.
.PP
Every refusal of
.BR sched_setattr (2)
and
.BR setpriority (2)
that follows from readable state is made by the plan, so that \-\-dry\-run
and \-\-check give the launch's verdict: SCHED_DEADLINE parameters as the
kernel's __checkparam_dl() checks them (runtime at least 1024 ns, runtime <=
deadline <= period, the period within
kernel.sched_deadline_period_min_us..max_us, which Linux 5.9 introduced;
earlier kernels have no bound), no deadline bandwidth
(kernel.sched_rt_runtime_us = 0), a request larger than its whole root domain
admits (sched_rt_runtime_us / sched_rt_period_us per CPU), RLIMIT_RTPRIO
(a task that keeps its real-time policy may always lower its priority),
RLIMIT_NICE (a lower nice value, leaving SCHED_IDLE), CAP_SYS_NICE, RT group
scheduling (cgroup v1 cpu.rt_runtime_us = 0). The bandwidth other
SCHED_DEADLINE tasks already reserve is not readable: the plan then says that
admission cannot be predicted, and a refusal at launch (EBUSY) is explained
with the numbers pinrun can read. With kernel.sched_rt_runtime_us = \-1 the
kernel checks neither the root domain nor the bandwidth, and neither does
pinrun.
.SH THREADS
The process affinity is always the whole plan, set before exec: no thread of
the command can run outside it, whatever a rule, a runtime or the watcher
does. Within it:
.PP
.B \-\-omp
exports to the command
.B OMP_PLACES
(one place per planned core in plan order, its planned SMT siblings with
.BR \-\-smt ;
.B \-\-omp=threads
one place per planned CPU, a core's siblings next to each other),
.B OMP_PROC_BIND=close
(thread i on place i when there are as many threads as places) and, unless the
caller set it,
.B OMP_NUM_THREADS
(the number of places). A caller's
.B KMP_AFFINITY
or
.B GOMP_CPU_AFFINITY
(which the runtimes follow instead of OMP_PLACES), or a different
.B OMP_PLACES
or
.BR OMP_PROC_BIND ,
refuses the launch (omp\-conflict); places are compared as lists
({0}, {1} is {0},{1}; {0}:2 too), and an empty OMP_PLACES or OMP_PROC_BIND,
which libgomp ignores as invalid, counts as unset;
.B \-\-omp\-replace
replaces them.
.B "\-\-dry\-run \-\-json"
shows the variables under "omp": {"places", "set", "unset"}.
.PP
.B "\-\-thread\-map RULES"
pins each thread of the command by the first rule that matches it, as
.IR SELECTOR = TARGET [, ...].
Selectors:
.B main
(the thread whose TID is the PID),
.B #N
(the N-th thread created, from 1, in the order the watcher first sees the
TIDs), or a glob on the thread's name
.RB ( fnmatch (3):
*, ?, [...]; the comm of /proc/PID/task/TID/comm, 15 bytes at most). Targets
are positions in the plan (a planned CPU, or a planned core with
.BR \-\-smt ,
in the order of \-\-omp's places):
.B @N
or
.BR @N\-M ;
.B each
(one position per matching thread, round-robin);
.B housekeeping
(the planned CPUs that are neither isolated nor nohz_full: threads never
leave the plan, so plan one);
.B rest
(the positions no @ target names; the whole plan when they name every
position). A thread no rule matches keeps the affinity it inherited from the
thread that created it. Example:
.B "\-\-cpus 2\-5 \-\-thread\-map 'main=@0,poll*=each,log=housekeeping,*=rest'".
.PP
The rules are applied by a watcher: before anything is applied, pinrun
double-forks a helper process (the command gets no child; the helper is
re-parented to the nearest subreaper or init, stays in pinrun's cgroup so
that systemd stops it with the unit, and keeps pinrun's original scheduling
policy and affinity, not the plan's). Once the command is exec'd it learns of
new threads and renames
.RB ( pthread_setname_np (3)
after creation) from perf events: one
.BR perf_event_open (2)
dummy software event per planned CPU, opened on pinrun before exec and
inherited by every thread, records each thread's creation and each rename
and wakes the watcher, which then scans /proc/PID/task (and every 100 ms
regardless; the events stay on the command's threads and processes while
it runs, at the cost perf charges a task with events at each context switch,
and its creations and renames cost a record each). Where perf_event_open(2)
is refused (perf_event_paranoid 3,
seccomp, a container), the plan has more than 512 CPUs, or
.B PINRUN_THREAD_WATCH=poll
is set, it polls /proc/PID/task every 2 ms instead (a thread then runs on the
whole plan for about that long before it is pinned; BENCHMARKS.md). It pins
each thread with
.BR sched_setaffinity (2)
on its TID and reads the affinity back. It exits when the command's pidfd
.RB ( pidfd_open (2),
Linux 5.3) says it ended; it holds no descriptor of the command's but
stderr, where it reports a thread it could not pin.
.B "\-\-thread\-log FILE"
appends a first line {"event": "start", "mechanism": "perf"|"poll",
"interval_us"} and each decision as a JSON line: {"t_us" (since exec),
"tid", "name", "order", "event": "new"|"rename", "rule", "cpus",
"read_back", "error"}. FILE must be a regular file (created 0644 when
missing): it is opened with O_NOFOLLOW and O_NONBLOCK, so a symbolic link,
a FIFO, a device or a directory is refused (watcher\-failed, exit 125), as is
another user's file in a sticky world\-writable directory such as /tmp
(the kernel's fs.protected_regular rule); \-\-dry\-run makes the same
checks without creating the file. A failed write (a full file system) is
said once on stderr; the threads are still pinned. SCHED_DEADLINE is refused: the kernel does not pin
a deadline thread to fewer CPUs than its root domain.
Not yet: running processes (\-\-pid).
.SH "IRQ STEERING"
.B "\-\-exclusive \-\-steer\-irqs"
(root) moves every movable device IRQ off the claimed CPUs (every thread of
the chosen cores) while the command lives, and puts it back after. Under the
claim lock, after choosing: an IRQ whose
.I /proc/irq/N/smp_affinity_list
includes a claimed CPU gets what remains of it among the online CPUs; when
nothing remains, the housekeeping CPUs (online, not isolated, not
nohz_full, not claimed by another launch), those of the device's node
.RI ( /proc/irq/N/node )
first;
.B "\-\-irq\-housekeeping LIST"
overrides them.
.I /proc/irq/default_smp_affinity
loses the claimed CPUs too. Kernel-managed IRQs (debugfs
IRQD_AFFINITY_MANAGED) are listed and never written: the kernel keeps them
(isolcpus=managed_irq is their switch). Without debugfs (most distribution
kernels), pinrun asks the kernel about each IRQ on a claimed CPU, in the
dry run too: it writes "x", not a cpulist, to its
.IR smp_affinity_list ,
which changes nothing; write_irq_affinity() (kernel/irq/proc.c) refuses it
with EIO (EPERM on some kernels) before parsing when
irq_can_set_affinity_usr() is false, and with the parser's EINVAL
otherwise. Refused: the IRQ is listed as unmovable, "kernel-managed" for an
MSI IRQ (an NVMe or virtio queue), "the kernel keeps it" for another (the
timer); parsed: it is a move known not to be managed.
.PP
A
.I /proc/irq
this process may not write
.RB ( faccessat (2)
W_OK with AT_EACCESS: the effective uid and capabilities, as open(2)
judges them; the files are root's, mode 0644, so uid 0 or CAP_DAC_OVERRIDE)
refuses the launch, and
.B \-\-dry\-run
predicts it (steer\-not\-permitted). Every IRQ file is then opened before
anything is written: EACCES or EPERM there refuses with nothing changed. Then a journal,
.IR STATE_DIR /steer. PID . START .journal
(JSON: the claimed CPUs, each IRQ's number, name, original and written
cpulists and effective affinity, the original default mask; root-owned, at most 4 MiB), is written
and fsync'ed with its directory before the first IRQ is written. A write
that fails with EIO or EPERM (kernel-managed or per-CPU) is skipped and
reported; ENOSPC (no vector left on the target) tries the housekeeping CPUs
of the node, all of them, then each alone; EINVAL (a CPU went offline)
reads the online CPUs again and retries once; any other errno puts back
every IRQ written, removes the journal and exits 125 (steer\-failed). The
written lists are read back; an
.I effective_affinity_list
still on a claimed CPU is reported pending (x86 moves an IRQ at its next
interrupt), as are threaded handlers
.RI ( irq/N\- ...)
that follow at that interrupt. IRQs that stay for the same reason on the
same CPUs are listed on one line (the dry run's "cannot move IRQs ...", the
launch's "IRQs ... stay on ..."); when no IRQ can move because every online
CPU outside the claimed ones is isolated, nohz_full or held by another
steering launch, both say first "no IRQ moved: no housekeeping CPU left
outside the claimed CPUs".
.PP
The undo: a helper process (with \-\-thread\-map the same one, which watches
the threads first; forked after \-\-probe and before any policy is applied,
in the command's cgroup, with SIGTERM blocked so that systemd stopping the
unit still lets it restore) waits on the command's pidfd and restores when
it ends. If the helper
is killed, the next
.B \-\-exclusive
launch restores the steering of ended launches under the claim lock, and
.B "pinrun \-\-reclaim"
does it on demand (and says "pinrun: nothing to reclaim in DIR" on stderr,
exit 0, when no ended launch left a journal there). A restore is composed with the live steering claims: an
IRQ gets its original minus the CPUs other live steering launches still
hold (the others' journals are updated), and an IRQ whose affinity is
neither what a live steering launch wrote nor its original was changed by
someone else: it is left alone and reported. When an undo narrows an IRQ
(or the default mask) for a live claim, that claim's journal takes it over
(the true original and what stays), synced before the write, so whichever
launch ends last, in any order and after a crash, restores the original.
A rollback step that fails (an IRQ write, irqbalance's ban) keeps the
journal and the message names what was not put back;
.B "pinrun \-\-reclaim"
retries it. Files in the state directory owned by another user than root
are not pinrun's journals: ignored, named in one line by
.BR \-\-reclaim .
IRQs are host-wide: launches with different
.B \-\-state\-dir
directories do not see each other's journals and do not compose; use one
state directory per host for steering. Only an irqbalance run by root (real
and effective uid 0) counts as the daemon.
.PP
The journal also holds each IRQ's
.I effective_affinity_list
before the launch (the CPU it fired on). x86 keeps an IRQ on its current
CPU when that CPU is in the new list (assign_vector_locked() in
arch/x86/kernel/apic/vector.c), so restoring the list alone would leave it
on the CPU steering moved it to. When the CPU(s) it fired on are online,
inside the list being restored and not where it fires now, the undo first
writes them, waits (every 10 ms, up to 2 s) until its effective affinity
shows them (it moves at its next interrupt), then writes the restored list,
which the kernel then keeps there. An IRQ that did not fire in that time
still gets the restored list, and is reported: "IRQ N (name) now fires on
CPU X (was CPU Y before steering): its next interrupt did not come within
2000 ms". A crash in between leaves the journal, and
.B \-\-reclaim
finishes the restore. Journals of older pinrun versions (no effective
affinity) restore the list only.
.PP
irqbalance moves IRQs on its own schedule; pinrun never fights it. When it
runs with its control socket
.RI ( /run/irqbalance/irqbalance PID .sock ,
irqbalance 1.5.0 and later built with its UI), the launch and its dry run
ask it for its ban (its
.B setup
command: SLEEP, the banned IRQs and the BANNED CPU mask); the launch
journals that ban, then, before any IRQ is written, sends
.B "settings cpus"
with its ban plus the claimed CPUs (the command replaces the ban: CPUs it
bans on its own, isolcpus and nohz_full or
.BR IRQBALANCE_BANNED_CPULIST ,
stay banned) and waits until its
.B setup
reply shows them, which happens at its next rebalance pass (at most its
interval, 10 s by default). When the claim ends the ban goes back to the
original plus the CPUs other live steering launches still hold
.RB ( "settings cpus NULL"
when that is what irqbalance bans on its own, so it follows isolcpus again);
a ban someone else changed in between is left alone and reported, and an
irqbalance that has ended (or restarted: it starts from its configuration)
needs no restore. A socket
that does not answer in 3 s, answers what irqbalance never says, or a ban
that does not show up in time refuses the launch with nothing changed
(irqbalance\-socket, exit 125; a ban already sent is put back). irqbalance
without its socket (before 1.5.0, or when it fell back to its abstract
socket, whose name does not tell which daemon answers), or more than one
irqbalance, refuses the launch and its dry run (irqbalance\-runs: it would
move the IRQs back) with a hint naming
.BR \-\-irqbalance\-config .
.PP
.B \-\-irqbalance\-config
is that explicit opt\-in, for one irqbalance without its socket run by
systemd
.RI ( /run/systemd/system
exists,
.B irqbalance.service
is active and its MainPID is that daemon): pinrun edits the last existing
.B EnvironmentFile=
of the unit, as
.B "systemctl show \-p MainPID \-p ActiveState \-p EnvironmentFiles irqbalance.service"
lists them (Debian: /etc/default/irqbalance; RHEL/Fedora:
/etc/sysconfig/irqbalance; the last one loaded wins). The file's ban
variables must be what the daemon runs with (its
.IR /proc/PID/environ ;
otherwise it was edited since the daemon started: refused). The edit sets
.B IRQBALANCE_BANNED_CPULIST
and the hex
.B IRQBALANCE_BANNED_CPUS
(irqbalance 1.2\-1.7 read only the latter; 1.8 and later prefer it when it
is set) to the daemon's own ban (those variables, else isolcpus and
nohz_full) plus the claimed CPUs, each replacing the last assignment of its
variable or added after its commented template, every other line kept byte
for byte; a file with a backslash or an unmatched quote, or larger than
64 KiB, is refused. The original bytes are journalled (fsync'ed) first; the
file is replaced atomically (a temporary file in its directory with its
owner and mode, fsync, rename), then
.B "systemctl try\-restart irqbalance.service"
runs and the launch waits up to 10 s for a new main process whose
environment has the ban, before any IRQ is written (otherwise the file is
put back, irqbalance restarted, and the launch refused). When the claim
ends, the file goes back to its original bytes (or, while other live
steering launches edited the same file, to the original banning their CPUs)
and irqbalance is restarted again; a file someone else edited since is left
alone and reported. The dry run shows the lines written and the restart.
Without systemd, another unit state, no environment file: refused, nothing
changed. The edit, the journal, the restart and the verification are
tested with a stand\-in daemon and a stub
.B systemctl
in a private mount and PID namespace; the real irqbalance's socket in a VM.
.PP
The helper that undoes the steering when the command ends writes one line
per IRQ, ban or file it left alone (changed since) or could not restore to
the stderr it inherited from the command (a terminal, the unit's journal),
as
.BR "pinrun: ..." ;
nothing when everything was restored.
.PP
.B "\-\-dry\-run \-\-json"
lists the plan under "steer_irqs": {"cpus", "housekeeping", "move": [{"irq",
"name", "from", "to", "housekeeping", "managed": false|null}], "unmovable": [{"irq", "name", "cpus",
"why", "managed": true|false|null}], "irqbalance": [PID], "irqbalance_ban":
{"pid", "socket", "now", "default", "to", "command"}|null,
"irqbalance_config": {"pid", "path", "now", "to", "lines", "restart"}|null,
"default_smp_affinity"}.
With
.BR \-\-probe ,
the probe runs after the steering: a device IRQ it still sees on a claimed
CPU is a kernel-managed one (named "kernel-managed", JSON "managed": true:
a queue of that CPU fires for I/O submitted there) or a move still pending
(named "steered, move pending", JSON "pending": true: its last
interrupts on the old CPU, until the move takes effect).
.SH CHECKS
Before exec, pinrun checks what will still disturb the chosen CPUs. Each
finding has a stable code, a severity, the CPUs (nodes, IRQs) concerned, a
message and a hint: one finding per problem, not per object (every IRQ
delivered to the chosen CPUs is in one irq\-on\-cpu finding, the most active
named first, with one command line that moves them all;
.B \-\-json
lists each in
.IR irq_details ).
.PP
Severity matches the harm. For a latency-critical launch (a real-time or
deadline policy,
.BR \-\-isolated ,
or
.B \-\-check
itself):
.B warning
is what will disturb the chosen CPUs now (an IRQ that fired there, a
runnable real-time task, the tick) or endangers the command (memory that
will OOM, a fork that fails, priority 99);
.B notice
is what only could (an IRQ routed there that never fired, the default IRQ
affinity, the scheduler balancing tasks onto a CPU that is not isolated, RCU
callbacks, throttling of a task that never yields);
.B info
is a fact of the machine (governors, idle states, NUMA balancing). For any
other launch, disturbances are info. Codes below without a mark are
warnings; an
.B \-\-allow
ed code is info.
.PP
A launch prints at most two lines of at most 160 characters to standard
error: the CPUs chosen, when the rule of CHOOSING CORES moved away from the
lowest-numbered ones, then one line counting its warnings and notices by
code, e.g.
.B "pinrun: CPU 1: 1 warning (irq\-on\-cpu); 5 notices: pinrun \-v or \-\-check shows them" ;
then it runs the command. A fact no launch on the host can change (a kernel
built without NO_HZ_FULL) is a notice.
.B \-\-strict
refuses on a warning instead (exit 125, nothing applied);
.B \-\-quiet
silences them in every mode's text (the exit status still says):
.B "\-\-check \-\-quiet"
prints nothing and exits 1 on a warning,
.B "\-\-dry\-run \-\-quiet"
prints the plan without its findings, and
.B \-\-json
output keeps them;
.B \-v
shows everything.
.B \-\-check
prints one line per finding for the placement given (or every allowed CPU)
and a count line, with
.B \-v
every hint, with
.B \-\-json
every detail; it exits 1 when there is a warning.
.B \-\-allow
takes codes, families (a prefix ending in *:
.B irq\-*
is irq\-on\-cpu,
.B not\-*
the three isolation codes) and
.BR all . Kernel sysfs is authoritative; the kernel command line
is a cross-check, and the source when a dump lacks the sysfs files.
"#;

/// The sections after the list of finding codes, from SYSTEMD on.
pub const SECTIONS_AFTER_CHECKS: &str = r#".SH SYSTEMD
pinrun is an
.B ExecStart=
prefix: it execs the service in place, so the main PID and
.B NOTIFY_SOCKET
are the service's own and
.B Type=notify
works. Give a non-root service
.B LimitRTPRIO=
at least the priority (preferred over
.BR AmbientCapabilities=CAP_SYS_NICE ,
which the service would keep), add
.B RestartPreventExitStatus=125
so a refusal does not restart-loop, and do not set
.B CPUAffinity=
as well (pinrun replaces it). Comments in units must be on lines of their own.
.B pinrun \-\-emit systemd
prints the equivalent native directives, with a comment for what systemd
cannot express.
.SH CONTAINERS
Run pinrun inside the container (as the entrypoint, from the image or a
bind mount); it plans inside the container's cgroup cpuset and names the
cgroup when a request falls outside it.
.B \-\-cores
needs whole cores inside the cpuset. Real-time policies need
.B "\-\-cap\-add SYS_NICE"
or
.BR "\-\-ulimit rtprio=N:N" ;
Docker's default seccomp profile allows
.BR set_mempolicy (2)
only with CAP_SYS_NICE, so the memory options need it too.
.SH "KUBERNETES, SLURM AND SYSTEMD"
In a Kubernetes container pinrun recognises the pod and its QoS class from
.I /proc/self/cgroup
(both kubelet cgroup drivers; the cgroup v2 line, else the v1 cpuset and
cpu lines) and, when
.I /var/lib/kubelet/cpu_manager_state
is mounted, which CPU pool the container is in (finding k8s\-pool). A
container whose cpuset does not show the CPUs the state file assigns it yet
gets k8s\-cpuset\-unsettled;
.B \-\-settle DURATION
waits for them (re-reading every 100 ms) before planning.
.B \-\-emit k8s
prints the container resources stanza for kubelet's static CPU manager
(integer CPUs, requests = limits, whole cores under SMT), a securityContext
adding SYS_NICE when the plan needs it (a real-time or deadline policy, a
negative nice value, a memory policy), and the CRI-O annotations as
comments. It refuses
.B \-\-cpus
and
.BR \-\-node :
kubelet chooses which CPUs the container gets; ask for a count.
.PP
In a Slurm job step
.RB ( SLURM_JOB_ID )
pinrun plans inside the task's CPU mask and names it ("Slurm task 3 mask 4\-7").
.B "\-\-emit slurm N"
prints
.B srun \-\-cpu\-bind=map_cpu:
or
.B mask_cpu:
for N tasks per node: disjoint whole cores, each planned as a launch would.
.PP
.B "\-\-emit systemd \-\-cgroup"
adds
.B AllowedCPUs=
and
.BR AllowedMemoryNodes= .
With
.B \-\-exclusive
no CPU or node list is fixed: the
.B pinrun \-\-exclusive
of ExecStart= chooses and claims free cores at each start.
Every emitted file carries a comment line
.B "pinrun\-topology: fnv1a64=HASH cpus=N cores=N packages=N nodes=N" :
FNV\-1a 64 of one line per core of the online CPUs, by its lowest CPU,
"core CPULIST package P node N".
.B "pinrun \-\-check\-emitted FILE"
exits 0 when this machine's fingerprint is FILE's and refuses (125) otherwise,
naming both shapes; it also refuses a FILE with no, a malformed or several
fingerprint lines, a unit whose CPUAffinity=, AllowedCPUs=, NUMAMask= or
AllowedMemoryNodes= (or an srun \-\-cpu\-bind= map_cpu:/mask_cpu: list)
names a CPU or node the machine lacks, and anything but
a regular file of at most 1 MiB. See docs/deploy.md.
.SH SOURCES
For each fact, where pinrun reads it, in order: the kernel-enforced source
first, the kernel command line only where the kernel exports nothing, and the
command line parsed as the parameter's own kernel parser does. When two
sources disagree, the finding
.B sources\-disagree
names both and the one used; no refusal or hint is based on the weaker one.
.TP
.B online CPUs
.IR /sys/devices/system/cpu/online ,
fallback the
.I cpuN/online
files. A CPU that the caller's cgroup effective set
.RI ( cpuset.cpus.effective ,
v1
.IR cpuset.effective_cpus :
the kernel keeps it a subset of the online CPUs) lists while
.I online
does not is online when its own
.I cpuN/online
does not say 0: inside a container with lxcfs,
.I online
is virtualised and the per-CPU files are not
.RB ( sources\-disagree ).
Without a cgroup cpuset, a CPU of
.I Cpus_allowed_list
counts only when its
.I cpuN/online
says 1 (an affinity mask may name offline CPUs).
.TP
.B allowed CPUs
online \(ca the caller's cgroup effective CPUs; without a cpuset, online \(ca
.I Cpus_allowed_list
of /proc/self/status. The inherited affinity
.RI ( Cpus_allowed_list )
bounds the choice as PLACEMENT says.
.TP
.B node CPUs, node memory
.IR /sys/devices/system/node/nodeN/cpulist " (fallback " cpumap ),
.IR meminfo ,
.IR has_memory ;
memory nodes allowed:
.I Mems_allowed_list
of /proc/self/status, fallback the cgroup's effective mems. A node's offline
CPUs come from their
.I cpuM/nodeN
links (its cpulist lists only online CPUs): such a node is refused naming its
offline CPUs and
.BR "chcpu \-e" ,
not as a memory-only node. Without
.I /sys/devices/system/node
(a kernel without NUMA) there is one node 0 with every online CPU, as hwloc
reports it, and memory options are not applied (finding
.BR no\-numa ).
.TP
.B isolated CPUs (domain isolation)
.I /sys/devices/system/cpu/isolated
\(cu the root cgroup's
.IR cpuset.cpus.isolated ;
without the sysfs file, the
.B isolcpus=
CPUs when the parameter has the domain flag (parsed as
.B housekeeping_isolcpus_setup()
in kernel/sched/isolation.c: flags while the value starts with a letter,
unknown flag rejects the parameter, no flag means domain; the boot CPU stays
housekeeping). When sysfs and the command line disagree, sysfs wins
.RB ( isolation\-not\-applied ).
.TP
.B nohz_full CPUs
.IR /sys/devices/system/cpu/nohz_full .
Without it but with
.I cpu/isolated
(both since Linux 4.1; the kernel creates
.I nohz_full
only with CONFIG_NO_HZ_FULL): none, whatever the command line asks
.RB ( sources\-disagree
when it asks). Without both (an older kernel, or a dump without them),
.B nohz_full=
(parsed as
.B housekeeping_nohz_full_setup()
does, with
.B cpulist_parse()
grammar: ranges, strides
.IR a\-b:u/g ,
.I N
for the last CPU) \(cu the
.B isolcpus=nohz
CPUs.
.TP
.B RCU no-callbacks CPUs
the kernel exports no list: the
.B rcu_nocbs
command-line parameter as
.B rcu_nocb_setup()
(kernel/rcu/tree_nocb.h) reads it: a bare
.B rcu_nocbs
or an empty list offloads no CPU (since 5.17 it only allows offloading at run
time), a list
.B cpulist_parse()
rejects offloads every CPU, and
.B rcu_init_nohz()
adds the nohz_full CPUs. First, where kernel threads are visible (kthreadd is pid 2) and with
.B \-\-check
or
.BR \-\-show :
a CPU without an
.I rcuo[pbs]/N
kthread is not offloaded whatever the command line says
.RB ( sources\-disagree ;
a kernel without CONFIG_RCU_NOCB_CPU). The kthreads are no proof of
offloading: since 5.17 the kernel spawns them for every CPU once
.B rcu_nocbs
or
.B nohz_full
is given. A dry run and a launch do not scan the processes, so they read
the command line alone.
.TP
.B IRQ affinity
.IR /proc/irq/N/effective_affinity_list ,
fallback
.IR smp_affinity_list ,
.IR smp_affinity ,
then the CPUs with counts in /proc/interrupts; names and counts from
.IR /sys/kernel/irq ,
fallback /proc/interrupts. Kernel-managed: the
.B IRQD_AFFINITY_MANAGED
flag of debugfs
.IR /sys/kernel/debug/irq/irqs/N ;
without debugfs it is unknown, the
.B irq\-on\-cpu
hint says what EIO (EPERM on some kernels) from the write means, and queue
IRQs (nvme, virtio-blk, SAS HBAs) are said to be possibly managed. Default
affinity:
.IR /proc/irq/default_smp_affinity ,
fallback
.B irqaffinity=
.RB ( irq_affinity_setup() ,
kernel/irq/irqdesc.c).
.TP
.B real-time limits
RLIMIT_RTPRIO and CapEff of /proc/self/status,
.IR /proc/sys/kernel/sched_rt_runtime_us " and " sched_rt_period_us ,
the caller's cgroup
.I cpu.rt_runtime_us
(RT group scheduling).
.SH "EXIT STATUS"
The command's own status once it runs (pinrun execs in place).
.TP
.B 0
--show, --emit, --pid PID alone (the view), a --pid change
that was applied, --check without warnings (info findings do not count),
or --dry-run when the launch would run the command; otherwise --dry-run
exits with the launch's status: 125 for what it refuses (--strict with a
warning, a state directory --exclusive cannot use), 126 or 127 for a
command, or a script's #! interpreter, that execve(2) would refuse.
.TP
.B 1
--check with warnings (--pid PID --check too).
.TP
.B 125
pinrun refused or failed; the command did not run. This includes a file
of the machine pinrun could not open for want of a resource (EMFILE under
a small
.BR "ulimit \-n" ,
ENFILE, ENOMEM: code read\-starved, naming the file), which is never
taken as missing, and an allocation that failed
.RB ( "ulimit \-v" ,
no memory left):
.IR "pinrun: allocating N bytes: out of memory" .
.TP
.B 126
the command was found but cannot be executed.
.TP
.B 127
the command was not found.
.PP
\-\-dry\-run and \-\-check look the command up as the launch does (126 and
127 with the launch's message; \-\-json names the file in "exec"). With
\-\-sysroot it is not looked up ("exec": null): a dump holds no programs, and
this host's PATH is not the dumped machine's.
.PP
Output into a pipe whose reader has gone (pinrun --show | head -1) ends
pinrun by SIGPIPE, without a message, as it ends other tools (when the caller
ignores SIGPIPE, it is a write error: 125). The command inherits SIGPIPE as the
caller left it, and the caller's file descriptors as they were (one the
caller closed stays closed). A closed stdout or a full device is a write
error: 125.
.SH PERMISSIONS
Real-time policies need CAP_SYS_NICE or RLIMIT_RTPRIO at least the priority
(systemd LimitRTPRIO=, limits.conf rtprio); pinrun refuses before changing
anything when neither allows it. Lowering the nice value needs CAP_SYS_NICE or
RLIMIT_NICE. With RT group scheduling the cgroup also needs cpu.rt_runtime_us.
Affinity is limited to the caller's cgroup cpuset (docker --cpuset-cpus,
systemd AllowedCPUs=); pinrun plans inside it and names the cgroup when a
request falls outside.
.SH "RUNNING PROCESSES"
.B \-\-pid PID
works on a running process instead of a command (PID a process id, or
.B self
for pinrun itself).
Alone, it prints each thread (TID, name, Cpus_allowed_list, the CPU it last
ran on, its policy with priority, nice or SCHED_DEADLINE runtime, deadline
and period), the memory (Mems_allowed_list; numa_maps summarised: mappings
per policy, resident MiB per node) and the findings of its CPUs, as
.B \-\-check \-\-cpus
of them gives them;
.B \-\-json
gives the same as one object.
.PP
With placement or scheduling options the change is planned exactly as a
launch (the process's own affinity, memory nodes, policy and RLIMIT_RTPRIO
in place of pinrun's, its current affinity bounding the choice only with
.BR "\-\-within inherited" ,
since it is what is being replaced; the same checks,
.BR \-\-dry\-run ", " \-\-check ", " \-\-strict )
and applied to every thread
.RB ( \-\-tid
for one), all or nothing: each thread's affinity and attributes are saved
first, and a failure restores every thread already changed, then names the
thread and why (and any thread the kernel would not let pinrun restore: a
raised nice value cannot be lowered back without CAP_SYS_NICE or
RLIMIT_NICE). Threads that appear meanwhile are found by passes over
/proc/PID/task, repeated until one finds no new thread (at most 16; \-v
says how many); a thread created by a changed thread inherits the change.
The process is named by a pidfd (pidfd_open(2), Linux 5.3) and its start
time: if it exits, or its PID names another process, between planning and
applying, nothing is changed (pid\-reused, 125). Before each thread,
pinrun checks that its TID is still a thread of the process
(/proc/PID/task/TID, its Tgid, and for a planned thread its start time): a
thread that exited is skipped, and with
.B \-\-tid
the change is refused (no\-such\-process, 125) rather than made on a TID
another process now has.
The permission checks weigh the strictest thread (highest nice value,
SCHED_IDLE, lowest real-time priority), so the dry run refuses what the
kernel would refuse on any thread. A rollback restores each attribute on
its own, the nice value with setpriority(2) (sched_setattr(2) ignores it
under SCHED_FIFO, SCHED_RR and SCHED_DEADLINE), and touches only what
changed.
.PP
Refused before anything is planned: a zombie (state Z), a kernel thread
(PF_KTHREAD in /proc/PID/stat; their placement is the kernel's),
.B \-\-pid self
with a change (pinrun exits right after), and
.BR \-\-thread\-map ", " \-\-omp ", " \-\-probe
(not supported with \-\-pid yet). A thread under SCHED_DEADLINE refuses
a new affinity that does not include its current one (its root domain;
the kernel answers EBUSY), dry run included. The plan is made inside the
process's own cgroup (/proc/PID/cgroup and its cpuset's effective CPUs),
not pinrun's. A thread's SCHED_RESET_ON_FORK is kept under a new policy
without \-\-reset\-on\-fork (as sched_setattr(2) keeps it); the dry run
names those threads (\-\-json: "keeps_reset_on_fork").
.PP
A change prints one line on stderr, what was set and on how many threads
.RB ( \-q :
nothing; \-v: the plan and the passes);
.B \-\-json
prints the plan with "changed" (the TIDs) on stdout.
Thread names are the kernel's comm; control characters are shown as ? in
text.
.B \-\-exclusive
claims the cores for the lifetime of that process (the record carries its
PID and start time); one record per process: a new claim replaces the
old, the process's own claim never counts against it, a change without
\-\-exclusive removes it, and \-\-wait stops when the process exits.
.PP
No system call sets another process's memory policy: a memory policy option
with
.B \-\-pid
is refused, unless
.B \-\-migrate
is given, which moves the process's pages with migrate_pages(2) (as
migratepages(8)) from the nodes that hold them to the policy's nodes (or
the chosen CPUs' nodes); the process's policy itself is unchanged.
\-\-dry\-run shows the bytes that would move (from numa_maps);
.B \-\-migrate\-limit SIZE
refuses to move more.
.PP
Permissions are the kernel's: without CAP_SYS_NICE, pinrun's effective uid
must be the process's real or effective uid (refused before anything is
changed, pid\-not\-permitted); RLIMIT_RTPRIO and RLIMIT_NICE are the
process's; reading another user's numa_maps needs ptrace read access.
.PP
.B \-\-show
adds who runs where (on the live machine, or from a dump below
\-\-sysroot): for each CPU, the real-time (rt PRIORITY) and pinned (an
affinity narrower than the online CPUs) user-space threads allowed on
it, every thread of every process
.RI ( /proc/PID/task/TID :
a real-time application's real-time threads are seldom its main
thread), named PID for a main thread and PID/TID for another, from the
scan of the rt\-competitor check (\-\-json: "tasks", each with pid and
tid).
.SH INSTALLATION
.B cargo install \-\-locked \-\-path .
in a checkout installs pinrun (add
.B \-\-root /usr/local
for /usr/local/bin); the repository's
.I .cargo/config.toml
makes the build static (glibc linked in: no dynamic loader at each
launch) for the host's own target, so
.B cargo build \-\-release
writes target/<triple>/release/pinrun. Where the linker is LLD (Rust's
default on x86_64 Linux), the build lays the code a launch runs out in one
place (build.rs, link/hot-functions.txt): fewer page faults at exec. The man page and the shell completions come from
the binary itself,
.BR "pinrun \-\-generate man" | bash | zsh | fish ,
written to stdout:
.PP
.nf
install \-d /usr/local/share/man/man1 /usr/local/share/bash\-completion/completions \\
  /usr/local/share/zsh/site\-functions /usr/local/share/fish/vendor_completions.d
pinrun \-\-generate man  > /usr/local/share/man/man1/pinrun.1
pinrun \-\-generate bash > /usr/local/share/bash\-completion/completions/pinrun
pinrun \-\-generate zsh  > /usr/local/share/zsh/site\-functions/_pinrun
pinrun \-\-generate fish > /usr/local/share/fish/vendor_completions.d/pinrun.fish
.fi
.SH DUMPS
.B "pinrun \-\-dump FILE.tar.gz"
saves the machine as pinrun reads it, so that a bug report can carry it:
while it reads everything any mode reads (what
.B \-\-show
prints, and what
.B \-\-check
and
.B \-\-dry\-run
read for any request on every CPU: IRQs, idle states, governors,
real-time tasks, RT throttling, the caller's cgroup and limits), it
records each path opened, listed or tested, and archives exactly those
that exist and are readable: files byte for byte, the directories on the
way, and symbolic links as links (so
.I cpuN/cpufreq
and
.I /proc/self
resolve in the replay as on the machine). Nothing is changed. The summary
.I "pinrun: dumped N files, D directories, L links (B bytes) to FILE"
goes to stderr; exit 0. FILE is written to a temporary file in its
directory and renamed into place only when complete; an existing FILE is
never replaced (exit 125). With
.BR "\-\-sysroot DIR|ARCHIVE" ,
the dump is of that machine (a dump directory becomes an archive).
.PP
Live data in a dump: free memory and IRQ counts of that moment;
.I /proc/self
is the dumping pinrun (its status, stat, cgroup, mountinfo and limits:
the allowed CPUs and memory nodes, capabilities and RT limits of a launch
from the same shell); of other processes only the stat and status of
the user-space threads that are real-time or pinned (who runs where,
which the rt\-competitor check and the replay need; they hold the
thread's name and allowed CPUs), and the comm of kthreadd and of the RCU
offload kthreads (rcuop/N); the other processes' files, read by the
scans, are left out;
.I /proc/cmdline
as it is. Claim records (the state directory) are not part of the machine
and are not dumped. A replay with
.B "\-\-show \-\-json"
gives the live output except
.B nodes[].mem_free_kb
and
.BR claims ", " claimed_cpus ", " claim_warnings ;
its "tasks" (and the text's who runs where) are those of the moment of
the dump.
.PP
.B "\-\-sysroot ARCHIVE"
reads a gzip- or xz-compressed or plain tar archive (recognised by its
first bytes, whatever its name) of a dump, with or without one top directory.
It is unpacked into a private temporary directory (in
.BR TMPDIR ,
mode 0700, named pinrun\-sysroot\-*) removed when pinrun ends, on errors
and on death by SIGPIPE too; a pinrun killed by another signal (SIGINT,
SIGTERM, SIGHUP) leaves it behind, as an interrupted --dump leaves its
\&.pinrun\-dump\-* temporary file. An archive is untrusted input: only
directories, regular files and relative symbolic links that stay inside
the tree are accepted; absolute paths,
.IR .. ,
links leaving the tree, writing through a link, hard links, device nodes
and FIFOs are refused, as are more than 200000 entries, a file over 64 MiB
or more than 256 MiB in all (exit 125,
.IR "pinrun: \-\-sysroot FILE: <cause>" ).
.PP
Below
.B "\-\-sysroot DIR"
(which another user may have written) every path is resolved inside DIR,
as the kernel resolves it for a process chrooted there
.RB ( openat2 (2)
with RESOLVE_IN_ROOT and RESOLVE_NO_MAGICLINKS, from DIR opened once): an
absolute link or one climbing past DIR's top with
.I ..
names a path of the dump, never a file of this host, and nothing outside
DIR is opened, listed or read (opening a FIFO wakes its writer, a device's
open can arm a watchdog or rewind a tape). A link whose target is missing
inside the dump reads as that missing file; only regular files are read.
A mount inside DIR (a bind mount, which only root can make) is part of
the dump as the kernel sees it, and is crossed. A FIFO or device node
inside DIR is opened (non-blocking) before its type is checked.
A lookup interrupted again and again by renames or mounts elsewhere on
the host (EAGAIN, retried 1000 times) refuses the dump rather than read
that file as missing (code sysroot\-unconfined).
A directory below DIR that pinrun's user may not search or list, or a
file it may not read (EACCES: a dump written with a private umask, or
another user's), refuses the dump too (exit 125,
.IR "pinrun: \-\-sysroot DIR: reading PATH: permission denied ..." ,
code sysroot\-unreadable, hint: chmod \-R a+rX DIR): read in part, a
dump would give another machine's answers (a CPU directory that cannot be
searched reads as no CPUs at all).
A kernel that refuses
.BR openat2 (2)
(before Linux 5.6, or a seccomp filter) cannot confine these reads: DIR is
refused (exit 125,
.IR "pinrun: \-\-sysroot DIR: this kernel refuses openat2(2) ..." ,
code sysroot\-unconfined) with a hint; an archive, checked as it is
unpacked, is still read there.
.SH "POLICY FILE"
A fleet accepts its known state once, in TOML:
.PP
.nf
allow = ["irq\-*", "not\-rcu\-nocbs"]   # as \-\-allow, added to it
strict = true                        # as \-\-strict
state_dir = "/run/pinrun"            # unless \-\-state\-dir or PINRUN_STATE_DIR
.fi
.PP
The file is
.B $PINRUN_CONFIG
when set (empty: no file), else the first that exists of
.B $XDG_CONFIG_HOME/pinrun/config.toml
(~/.config when unset) and
.BR /etc/pinrun.toml .
It is read from the host even with
.BR \-\-sysroot :
it is the user's policy, not the dumped machine's.
.B \-\-show
names the file used. A file that exists but cannot be read, is over 64 KiB,
is not TOML, has an unknown key or an unknown code is refused (exit 125,
bad\-config) naming the file and line: a policy is never ignored.
.SH "NUMACTL, TASKSET AND CHRT"
Their options are accepted where the meaning is the same:
.PP
.TS
l l l.
numactl/taskset/chrt	pinrun	note
numactl \-C, \-\-physcpubind	\-C, \-\-cpus	exactly these CPUs
taskset \-c, \-\-cpu\-list	\-c, \-\-cpus	taskset's positional form is not taken
numactl \-N, \-\-cpunodebind	\-N, \-\-cpunodebind	every allowed CPU of the nodes (= \-\-node alone)
numactl \-m, \-\-membind	\-m, \-\-membind	the node list may be omitted
numactl \-i, \-\-interleave	\-\-interleave	\-i collides with chrt \-i (idle)
numactl \-p, \-\-preferred	\-\-preferred	\-p collides with taskset/chrt \-p (a PID)
numactl \-l, \-\-localalloc	\-\-localalloc	\-l left out (rarely typed; the hint says)
chrt \-f, \-\-fifo PRIO	\-f, \-\-fifo PRIO	priority after the option, as chrt \-f 10 cmd
chrt \-r, \-\-rr PRIO	\-r, \-\-rr PRIO	
chrt \-o, \-b, \-i	\-\-other, \-\-batch, \-\-idle	short forms collide or are rare
chrt \-d, \-\-deadline	\-\-deadline	
chrt \-T, \-D, \-P (ns)	\-\-sched\-runtime, \-deadline, \-period	pinrun's take a unit (500us)
chrt \-R, \-\-reset\-on\-fork	\-R, \-\-reset\-on\-fork	
taskset \-p [MASK] TID	\-\-pid PID \-\-tid TID [\-\-cpus LIST]	one thread; PID is its process (TID itself for the main thread); read-only without options
taskset \-a \-p [MASK] PID	\-\-pid PID [\-\-cpus LIST]	every thread (all or none); read-only without options
chrt \-p PID	\-\-pid PID	every thread's policy, priority, nice, deadline parameters
chrt \-a \-p PRIO PID	\-\-pid PID \-\-fifo PRIO	every thread; \-\-tid TID for one (chrt \-p without \-a)
migratepages PID FROM TO	\-\-pid PID \-\-migrate \-\-membind TO	FROM: the nodes holding its pages (numa_maps)
numactl \-\-show	\-\-pid self	pinrun's own (inherited) placement and policy
numactl \-\-cpunodebind=netdev:eth0	\-\-near eth0	also pci:, block:, file: (a path)
.TE
.PP
.B \-\-node
differs from numactl's
.BR \-\-cpunodebind :
combined with
.B \-\-cores
it chooses among the nodes' CPUs, so it is not an alias. An unknown short
option of these tools gets a hint naming pinrun's option.
.SH FILES
.nf
$PINRUN_CONFIG, ~/.config/pinrun/config.toml, /etc/pinrun.toml (POLICY FILE)
/sys/devices/system/cpu/{online,possible,present,isolated,nohz_full}
/sys/devices/system/cpu/cpuN/topology/*, cpuN/cache/indexK/*, cpuN/online
/sys/devices/system/node/{online,has_memory}, nodeN/{cpulist,cpumap,meminfo,distance}
/proc/self/{status,cgroup,cpuset,mountinfo,limits,stat}, /proc/mounts, /proc/cmdline
/proc/sys/kernel/sched_rt_{runtime,period}_us, /proc/sys/kernel/numa_balancing
/sys/kernel/irq (IRQ numbers), /sys/kernel/irq/N/{actions,per_cpu_count} of the
  IRQs on the checked CPUs (chip_name, hwirq, type, name when it has no handler),
  else /proc/interrupts; all only for latency-critical launches, -v and the modes
/proc/irq/N/{effective_affinity_list,smp_affinity_list,smp_affinity}
/proc/irq/default_smp_affinity, /sys/kernel/debug/irq/irqs/N
/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor, cpuN/cpuidle/stateK/{name,latency,disable}
/proc/PID/task (sched_getscheduler(2) per thread), /proc/PID/task/TID/stat of the
  real-time ones and status of the user-space ones (only with --fifo/--rr; below
  a dump: every thread's stat; /proc/PID/stat when a dump has no task directory)
/proc/PID/task/TID/{status,stat}, /proc/PID/{stat,status,limits,numa_maps} (\-\-pid);
  /proc/PID/task/TID/stat of every thread and status of the user-space ones (\-\-show)
<cgroup v1 cpu>/cpu.rt_runtime_us, /boot/config-RELEASE (RT group scheduling;
  the config only to explain an EPERM)
/run/pinrun/<pid>.<starttime>.<random> (claim records), /var/lib/kubelet/cpu_manager_state
<cgroup>/cpuset.cpus.effective (v2), cpuset.effective_cpus, cpuset.cpus (v1)
.fi
.SH ENVIRONMENT
.B PINRUN_CONFIG
names the policy file (empty: none; see POLICY FILE).
.B PINRUN_STATE_DIR
is the state directory of claims when
.B \-\-state\-dir
is not given; set but empty, it is ignored.
.BR OMP_PROC_BIND ", " OMP_PLACES ", " GOMP_CPU_AFFINITY ", " KMP_AFFINITY
are reported (env-thread-binding) since they make the program re-bind its threads;
under
.B \-\-omp
pinrun sets them itself (THREADS).
.B PINRUN_THREAD_WATCH=poll
makes the \-\-thread\-map watcher poll instead of trying perf events
(THREADS).
.BR SLURM_JOB_ID ", " SLURM_STEP_ID ", " SLURM_PROCID ", " SLURM_LOCALID ", " SLURM_STEP_TASKS_PER_NODE ", " SLURM_TASKS_PER_NODE ", " SLURM_CPU_BIND_TYPE ", " SLURM_CPU_BIND_LIST
describe the Slurm task (KUBERNETES, SLURM AND SYSTEMD);
.B KUBERNETES_SERVICE_HOST
marks a Kubernetes container whose cgroup path is hidden by a cgroup namespace.
.B TMPDIR
is where
.B "\-\-sysroot ARCHIVE"
is unpacked (default /tmp).
.B PATH
is searched for COMMAND as
.BR execvp (3)
does. The environment is passed to the command unchanged, except for
.BR \-\-omp 's
variables.
.SH EXAMPLES
.nf
pinrun \-\-node 0 \-\-cores 4 \-\-fifo 90 \-\- ./app
pinrun \-\-cpus 2\-7 \-\-cores 2 \-\-smt \-\-membind \-\- ./worker
pinrun \-\-interleave all \-\- postgres \-D /var/lib/postgresql/data
pinrun \-\-dry\-run \-\-json \-\-node 1 \-\-cores 2 | jq \-er .cpulist
pinrun \-\-node 1 \-\-cores 8 \-\-smt \-\-omp \-\- ./solver
pinrun \-\-cpus 2\-5 \-\-thread\-map 'main=@0,w*=each' \-\- ./engine
pinrun \-\-near eth0 \-\-cores 4 \-\-fifo 90 \-\-membind \-\- ./feed
pinrun \-\-llc 1 \-\-cores 4 \-\- ./shared\-cache\-workers
pinrun \-\-dump machine.tar.gz
pinrun \-\-cores 1 \-\-fifo 90 \-\-probe=2s \-\-probe\-max 50us \-\- ./app
pinrun \-\-sysroot machine.tar.gz \-\-dry\-run \-\-node 0 \-\-cores 4 \-\-fifo 90
pinrun \-\-pid $(pgrep \-o engine)
pinrun \-\-pid $(pgrep \-o engine) \-\-cpus 4\-7 \-\-fifo 80 \-\-dry\-run
pinrun \-\-pid $(pgrep \-o engine) \-\-migrate \-\-membind 1 \-\-migrate\-limit 8G
.fi
.SH "SEE ALSO"
.BR taskset (1),
.BR chrt (1),
.BR numactl (8),
.BR sched (7),
.BR cpuset (7),
.BR set_mempolicy (2),
.BR sched_setattr (2),
.BR systemd.exec (5)
"#;

/// pinrun(1)'s PROBE section (`--probe`, issue 20).
pub const PROBE_SECTION: &str = r#".SH PROBE
.B \-\-probe[=DURATION]
measures, after the plan and the checks and before anything is applied to
pinrun itself, what the chosen CPUs do to a program: one thread per CPU,
pinned to it, with exactly the planned memory policy, scheduling policy,
priority and nice value, runs for DURATION (default 1s, at most 60s) after a
100 ms pre-heat; then the threads are joined and COMMAND is executed as
without \-\-probe (same PID, one thread). Without COMMAND, pinrun only prints
the report (stdout; \-\-json for one object). With COMMAND the report goes to
stderr (nothing with \-\-quiet). Without a placement the CPUs of the
inherited affinity are probed. \-\-deadline cannot be probed: the kernel
refuses SCHED_DEADLINE to a thread pinned to one CPU of a wider root domain.
.PP
Two modes (\-\-probe\-mode). \fBspin\fR (default), as oslat and sysjitter: a
tight loop reads a clock and every difference between two reads is a sample;
a large one is time the CPU was taken away (what a polling program sees).
\fBwakeup\fR, as cyclictest: clock_nanosleep(2) to an absolute
CLOCK_MONOTONIC deadline every \-\-probe\-interval (default 1ms, at least
10us: below it a wake-up is within the timer slack and the hrtimer's own
expiry and the probe would measure itself); a sample is how late the thread
woke (what an event-driven program sees). The spin
clock is the TSC when it is invariant (constant_tsc and nonstop_tsc in
/proc/cpuinfo) and the kernel's clocksource is tsc, converted to ns by a
calibration against CLOCK_MONOTONIC_RAW over the probe itself; otherwise
CLOCK_MONOTONIC_RAW. Memory is locked (mlockall(2)) during the probe only and
unlocked before exec. PM QoS (/dev/cpu_dma_latency) is never touched: the idle
states the probe sees are the command's.
.PP
Per CPU: samples, min, p50, p99, p99.9 and max (nearest rank, within 1.6%),
the samples above \-\-probe\-threshold (default 1us in spin mode; 100us in
wakeup mode, since every wake-up is late by the hrtimer's expiry and, for
SCHED_OTHER, up to its 50us timer slack (prctl(2) PR_SET_TIMERSLACK), and
100us is the bound cyclictest users hold PREEMPT_RT to), their sum (time lost),
the available share (100 x (duration \- lost) / duration) and the ten
largest gaps with their time after the start. Attribution needs no root:
the per-CPU deltas of /proc/interrupts (device IRQs by number and name, the
local timer LOC, IPIs), /proc/softirqs, steal time (the 8th value of each
cpuN line of /proc/stat, proc_stat(5): on a virtual machine, the time the
hypervisor ran something else; 10 ms resolution), and the tasks whose last CPU was a
probed one and whose run time (/proc/PID/task/TID/schedstat, else
utime + stime of stat) grew, pinrun's own threads left out; the counters are
read before the pre-heat and after the probe. The likely source of the worst
gap is steal time or a task that ran at least half as long as that gap
(the longer of the two; under SCHED_FIFO
or SCHED_RR, only a task of at least the probe's priority), else RT throttling
when a spinning SCHED_FIFO/SCHED_RR probe's gap is between 1 ms and 110% of
the time throttling stops it (sched_rt_period_us \- sched_rt_runtime_us;
less when RT_RUNTIME_SHARE lends it runtime), else, for a gap under 1 ms
only, the busiest device IRQ, else an IPI, the local timer, a softirq;
otherwise none. The time lost that neither the tasks' run time nor steal
time explains is printed as "unattributed" (JSON unattributed_ns) when it
reaches 1 ms: preemption by tasks that lived between the two readings,
interrupts (counted, never timed), SMIs, or a hypervisor that reports no
steal time. Tasks are attributed by the CPU they
last ran on in either reading: a task that moved may be named on a CPU where
it ran only part of its time.
.PP
\-\-probe\-max T refuses the launch (exit 125, probe\-over\-max) when a
CPU's worst gap exceeds T, naming the CPU, the gap and its likely source,
with a fix for that kind of source. A spinning SCHED_FIFO or SCHED_RR probe
on a CPU that is not isolated while RT throttling is off
(kernel.sched_rt_runtime_us = \-1) is refused (probe\-unsafe): nothing else
could run there. A watchdog thread, on a housekeeping CPU outside the probed
ones when there is one, stops the probe at twice its duration and its 100 ms
pre-heat, and never less than 1 s after them, so that a short probe on a
loaded machine is not stopped for waiting to be scheduled
(probe\-failed, exit 125); a probe thread that still does not stop ends
pinrun (125) without running the command. The osnoise tracer is not used.
"#;

/// Every hand-written section: [`SECTIONS_BEFORE_CODES`], the finding
/// codes ([`crate::finding::Code::man_list`]), [`PROBE_SECTION`],
/// [`SECTIONS_AFTER_CHECKS`].
pub fn sections() -> String {
    format!(
        "{SECTIONS_BEFORE_CODES}{}{PROBE_SECTION}{SECTIONS_AFTER_CHECKS}",
        crate::finding::Code::man_list()
    )
}
