# Issue 34, Slurm part: the real daemons of Debian 12's slurm-wlm 22.05
# (slurmctld, slurmd, munge; started by their Debian units under systemd
# 252 as PID 1) on one node, pinrun-slurm, shaped as the guest: 2 sockets
# x 2 cores x 2 threads, node 0 = CPUs 0-3, node 1 = CPUs 4-7
# (vm/guest/root-slurm/: slurm.conf with select/cons_tres CR_Core,
# task/affinity,task/cgroup, proctrack/cgroup on cgroup v2; /job/rank).
# Topology wideplain: no isolcpus, so every CPU is alike to slurmd, to
# the tasks and to pinrun's planner, and what each rank gets follows from
# Slurm's binding alone. Every rank is /job/rank, which prints what the
# kernel applied to it (Cpus_allowed_list, Mems_allowed_list, stat's
# policy and rt_priority, numa_maps' policies) and srun's binding.
#@ topology wideplain
#@ rootfs slurm
#@ timeout 420
show cmdline /proc/cmdline
run pid1 sh -c 'cat /proc/1/comm; systemctl is-system-running --wait; hostname; getent hosts pinrun-slurm'
run daemons systemctl show -p Id,ActiveState,SubState munge slurmctld slurmd
# slurmd registers with slurmctld: the node is idle within seconds, else
# the daemons' logs and an early end (every srun would wait).
wait_idle() {
  _end=$(($(cut -d. -f1 /proc/uptime) + 90))
  until [ "$(sinfo -h -N -o %T 2> /dev/null)" = idle ]; do
    [ "$(cut -d. -f1 /proc/uptime)" -lt $_end ] || return 1
    sleep 1
  done
  sinfo --version; sinfo -N -o '%N %T %c %X %Y %Z'
}
run idle wait_idle
if ! grep -q idle /tmp/.o; then
  run slurm-logs sh -c 'sinfo -N -l; tail -n 30 /var/log/slurm/slurmd.log /var/log/slurm/slurmctld.log; journalctl -u munge -u slurmd -u slurmctld --no-pager | tail -n 30'
  exit 1
fi
run slurmd-C slurmd -C
cd /job
# job CMD...: a Slurm command that cannot hang the guest.
job() { timeout 120 "$@"; }

# 1. srun's --cpu-bind types, pinrun inside each task. cores: -n2 is one
# core's 2 CPUs under CR_Core, both tasks bound to it (the shared mask
# warns); -c2 gives each task a core of its own.
run cores job srun -n2 --cpu-bind=cores pinrun --cores 1 -- ./rank
run cores-c2 job srun -n2 -c2 --cpu-bind=cores sh -c 'pinrun --cores 1 -- ./rank; pinrun --cores 1 --dry-run | sed "s/^/$SLURM_PROCID: /"'
# threads: each task one CPU; --cores 1 has no whole core there (refused,
# naming the task's mask); with no placement pinrun plans on the task's CPU
run threads job srun -n2 --cpu-bind=threads pinrun --cores 1 -- ./rank
run threads-task job srun -n2 --cpu-bind=threads sh -c 'pinrun --fifo 50 --membind -- ./rank; pinrun --fifo 50 --membind --dry-run | sed "s/^/$SLURM_PROCID: /"'
# map_cpu and mask_cpu name CPU ids: an exclusive allocation
run map job salloc --exclusive -n2 srun --cpu-bind=map_cpu:5,2 pinrun --fifo 50 --membind -- ./rank
run mask job salloc --exclusive -n2 srun --cpu-bind=mask_cpu:0x30,0xc sh -c 'pinrun --cores 1 --membind -- ./rank; pinrun --cores 1 --membind --dry-run | sed "s/^/$SLURM_PROCID: /"'
run none job srun -n2 --cpu-bind=none pinrun --cores 1 -- ./rank

# 2. docs/deploy.md's recipe as written (/job/recipe.sbatch; the guest is
# one node: --nodes=1 on the command line overrides its #SBATCH --nodes=2)
run recipe sh -c 'timeout 120 sbatch --nodes=1 --wait --output=/tmp/recipe.out /job/recipe.sbatch; rc=$?; cat /tmp/recipe.out; exit $rc'

# 3. the line --emit slurm prints, run as printed in an exclusive
# allocation; in a partial one srun refuses it, as the output says
run emit pinrun --cores 1 --emit slurm 4 -- ./rank
line=$(pinrun --cores 1 --emit slurm 4 -- ./rank | tail -n 1)
run emitted job salloc --exclusive -n4 sh -c "$line"
run emitted-partial job salloc -n4 sh -c "$line"

# 4. --cpus +0 counts from the task's CPUs (issue 34 item 3)
run plus0 job srun -n4 --cpu-bind=threads pinrun --cpus +0 -- ./rank

run slurmd-log sh -c 'grep -E "lllp|outside" /var/log/slurm/slurmd.log'
run failed systemctl --failed --no-legend --plain
