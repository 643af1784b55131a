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
then picks N whole cores (every SMT sibling a candidate) compactly: the lowest
node that can hold all N, in it the lowest package that can, then the lowest
cores; one CPU of each (its lowest-numbered thread), or every thread with
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
array (holder, pid, start_time, uid, command, cpus, since, age_s, record; kubelet's
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
It must belong to root or to the user, and be sticky if others may write it.
Each claim is one small JSON file named
.IR <pid>.<starttime> ,
mode 0644, created with O_EXCL|O_NOFOLLOW relative to the directory: pid,
start time, uid, CPUs, command line, time. A record whose process is gone, a
zombie, or has another start time is stale and silently reclaimed; one that
cannot be removed (another user's) is ignored and never blocks anyone. A record
counts only when its file's owner is root or a UID of its process, so no user
can forge a claim in another's name; the sticky bit keeps users from deleting
each other's records. Symlinks, FIFOs, oversized, unparsable or unreadable
records give the warning
.B claim\-record\-unusable
and are reclaimed only when their PID is provably dead. With
.BR \-\-sysroot ,
no records are read (a dump has no live processes).
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
.SH "MEMORY POLICIES"
Set with
.BR set_mempolicy (2)
before exec, inherited by the command:
.B bind
(allocate only on the nodes; without NODES, the nodes of the chosen CPUs),
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
memory by distance) or lie outside Mems_allowed are refused.
.SH SCHEDULING
Set with
.BR sched_setattr (2);
what is not given (priority, nice, flags) is kept. SCHED_FIFO and SCHED_RR take
priorities 1\-99; 99 draws a warning, since it equals the kernel's own per-CPU
threads. SCHED_DEADLINE needs CAP_SYS_NICE and an affinity that covers its
whole root domain, so
.B \-\-deadline
with a narrower placement is refused: create an exclusive cpuset partition
(cgroup v2 cpuset.cpus.partition=root) and run inside it.
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
A launch prints its warnings (message and hint) to standard error as
.B "pinrun: warning:"
and one line counting the notices, then runs the command;
.B \-\-strict
refuses on a warning instead (exit 125, nothing applied);
.B \-\-quiet
silences them in every mode (the exit status still says);
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
.SH "EXIT STATUS"
The command's own status once it runs (pinrun execs in place).
.TP
.B 0
--dry-run, --show, --emit, or --check without warnings (info findings do
not count).
.TP
.B 1
--check with warnings.
.TP
.B 125
pinrun refused or failed; the command did not run.
.TP
.B 126
the command was found but cannot be executed.
.TP
.B 127
the command was not found.
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
.SH INSTALLATION
.B cargo install \-\-locked \-\-path .
in a checkout installs pinrun (add
.B \-\-root /usr/local
for /usr/local/bin). The man page and the shell completions come from
the binary itself,
.BR "pinrun \-\-generate man" | bash | zsh | fish ,
written to stdout:
.PP
.nf
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
from the same shell); of other processes only the stat (and for
user-space ones the status) of the real-time ones;
.I /proc/cmdline
as it is. Claim records (the state directory) are not part of the machine
and are not dumped. A replay with
.B "\-\-show \-\-json"
gives the live output except
.B nodes[].mem_free_kb
and
.BR claims ", " claimed_cpus ", " claim_warnings .
.PP
.B "\-\-sysroot ARCHIVE"
reads a gzip- or xz-compressed or plain tar archive (recognised by its
first bytes, whatever its name) of a dump, with or without one top directory.
It is unpacked into a private temporary directory (in
.BR TMPDIR ,
mode 0700) removed when pinrun ends. An archive is untrusted input: only
directories, regular files and relative symbolic links that stay inside
the tree are accepted; absolute paths,
.IR .. ,
links leaving the tree, writing through a link, hard links, device nodes
and FIFOs are refused, as are more than 200000 entries, a file over 64 MiB
or more than 256 MiB in all (exit 125,
.IR "pinrun: \-\-sysroot FILE: <cause>" ).
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
taskset \-p, chrt \-p, \-a	none	a running process: pinrun starts COMMAND
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
/proc (sched_getscheduler(2) per process), /proc/PID/stat of the real-time ones and
  status of the user-space ones (only with --fifo/--rr; a dump: every PID's stat)
<cgroup v1 cpu>/cpu.rt_runtime_us, /boot/config-RELEASE (RT group scheduling;
  the config only to explain an EPERM)
/run/pinrun/<pid>.<starttime> (claim records), /var/lib/kubelet/cpu_manager_state
<cgroup>/cpuset.cpus.effective (v2), cpuset.effective_cpus, cpuset.cpus (v1)
.fi
.SH ENVIRONMENT
.B PINRUN_CONFIG
names the policy file (empty: none; see POLICY FILE).
.B PINRUN_STATE_DIR
is the state directory of claims when
.B \-\-state\-dir
is not given.
.BR OMP_PROC_BIND ", " OMP_PLACES ", " GOMP_CPU_AFFINITY ", " KMP_AFFINITY
are reported (env-thread-binding) since they make the program re-bind its threads.
.B TMPDIR
is where
.B "\-\-sysroot ARCHIVE"
is unpacked (default /tmp).
.B PATH
is searched for COMMAND as
.BR execvp (3)
does. The environment is passed to the command unchanged.
.SH EXAMPLES
.nf
pinrun \-\-node 0 \-\-cores 4 \-\-fifo 90 \-\- ./app
pinrun \-\-cpus 2\-7 \-\-cores 2 \-\-smt \-\-membind \-\- ./worker
pinrun \-\-interleave all \-\- postgres \-D /var/lib/postgresql/data
pinrun \-\-dry\-run \-\-json \-\-node 1 \-\-cores 2 | jq \-er .cpulist
pinrun \-\-dump machine.tar.gz
pinrun \-\-sysroot machine.tar.gz \-\-dry\-run \-\-node 0 \-\-cores 4 \-\-fifo 90
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

/// Every hand-written section: [`SECTIONS_BEFORE_CODES`], the finding
/// codes ([`crate::finding::Code::man_list`]), [`SECTIONS_AFTER_CHECKS`].
pub fn sections() -> String {
    format!(
        "{SECTIONS_BEFORE_CODES}{}{SECTIONS_AFTER_CHECKS}",
        crate::finding::Code::man_list()
    )
}
