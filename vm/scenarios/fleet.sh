# Scenario 9 (issue 23): two Slurm-like ranks of one job step, started by
# taskset with masks 4-5 and 6-7 in one cgroup v2 cpuset 4-7, each running
# `pinrun --cores 1`; `--emit slurm 4` on the whole machine; an emitted
# unit's fingerprint checked on the machine it was emitted on.
#@ topology basic
show siblings /sys/devices/system/cpu/cpu0/topology/core_cpus_list /sys/devices/system/cpu/cpu2/topology/core_cpus_list /sys/devices/system/cpu/cpu4/topology/core_cpus_list /sys/devices/system/cpu/cpu6/topology/core_cpus_list
echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/job
echo 4-7 > /sys/fs/cgroup/job/cpuset.cpus
echo 0-1 > /sys/fs/cgroup/job/cpuset.mems
# rank R MASK ARGS...: task R of job 77 step 0 (2 tasks on this node, bound
# by Slurm's mask_cpu), in the job's cgroup, with the affinity MASK (hex).
rank() {
  _r=$1; _m=$2; shift 2
  sh -c 'echo $$ > /sys/fs/cgroup/job/cgroup.procs && exec "$@"' sh \
    env SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_PROCID=$_r SLURM_LOCALID=$_r \
    SLURM_STEP_TASKS_PER_NODE=2 SLURM_CPU_BIND_TYPE=mask_cpu: \
    taskset "$_m" "$@"
}
both() {
  rank 0 0x30 pinrun --cores 1 -- sh -c 'sleep 1; echo "rank 0 $(grep Cpus_allowed_list /proc/self/status)"' &
  rank 1 0xc0 pinrun --cores 1 -- sh -c 'sleep 1; echo "rank 1 $(grep Cpus_allowed_list /proc/self/status)"' &
  wait
}
run ranks both
run rank1-dry rank 1 0xc0 pinrun --dry-run --cores 1
run rank1-cores2 rank 1 0xc0 pinrun --dry-run --cores 2
run emit-slurm4 pinrun --cores 1 --emit slurm 4
run emit-slurm4-smt pinrun --cores 1 --smt --emit slurm 4
pinrun --cores 1 --emit systemd -- /bin/true > /tmp/unit.service
run check-emitted pinrun --check-emitted /tmp/unit.service
sed 's/cpus=8 /cpus=16 /' /tmp/unit.service > /tmp/other.service
run check-emitted-other pinrun --check-emitted /tmp/other.service
