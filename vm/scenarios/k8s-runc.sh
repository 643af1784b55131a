# Issue 34, Kubernetes: the closest real substitute for a kubelet that
# cannot run offline. Debian 12's runc 1.1 (systemd cgroup driver, as
# kubelet and containerd use it with cgroupDriver: systemd) starts
# containers in a pod-shaped cgroup v2 path,
#   kubepods.slice/kubepods-pod<UID with _>.slice/cri-containerd-<ID>.scope,
# with a cpuset (linux.resources.cpu.cpus) and optionally a CFS quota
# (cpu.quota/period), from a bundle whose root holds only the static pinrun
# and busybox; /var/lib/kubelet/cpu_manager_state is written here in
# kubelet's checkpoint format and bind-mounted read-only, as docs/deploy.md
# says to. Nothing here is kubelet, a CRI runtime or the CPU manager: the
# assignment is written by hand and `runc update` stands for kubelet's
# UpdateContainerResources. 2 sockets x 2 cores x 2 threads (cores 0-1,
# 2-3 | 4-5, 6-7), nodes {0-3} {4-7}, isolcpus=2,3 nohz_full=2,3.
#@ topology wide
#@ rootfs runc
#@ timeout 300
UID_=4c2a9e1b-7d3f-4e8a-9b6c-1f2e3d4c5b6a
SLICE=kubepods-pod$(echo "$UID_" | tr - _).slice
EXCL=2-3,6-7
SHARED=0-1,4-5
run versions sh -c 'runc --version | head -1; systemctl is-system-running --wait; cat /sys/fs/cgroup/cgroup.controllers'
# kubelet's checkpoint (pkg/kubelet/cm/cpumanager/state/checkpoint.go,
# CPUManagerCheckpointV2). The checksum is not kubelet's (pinrun does not
# verify it; kubelet would refuse the file at its own restore).
mkdir -p /var/lib/kubelet
printf '{"policyName":"static","defaultCpuSet":"%s","entries":{"%s":{"engine":"%s"}},"checksum":1234567890}\n' \
  "$SHARED" "$UID_" "$EXCL" > /var/lib/kubelet/cpu_manager_state
show state /var/lib/kubelet/cpu_manager_state
# The image: the static pinrun and busybox, nothing else.
R=/ctr/rootfs
mkdir -p $R/bin $R/proc $R/sys $R/dev $R/tmp $R/var/lib/kubelet $R/usr/local/bin
cp /bin/busybox $R/bin/busybox
ln -s busybox $R/bin/sh; ln -s busybox $R/bin/grep; ln -s busybox $R/bin/cat
cp /usr/bin/pinrun $R/usr/local/bin/pinrun
: > $R/var/lib/kubelet/cpu_manager_state
# /app: what the kernel and runc applied to it (its own stat, read by the
# shell; its cgroup and that cgroup's CFS quota and cpuset)
cat > $R/app <<'APP'
#!/bin/sh
grep -E "^(Cpus_allowed_list|Mems_allowed_list):" /proc/self/status
read -r s < /proc/$$/stat
echo "stat: $s"
c=$(sed -n "s/^0:://p" /proc/self/cgroup)
echo "cgroup: $c"
for f in cpu.max cpuset.cpus cpuset.cpus.effective; do echo "$f: $(cat "/sys/fs/cgroup$c/$f")"; done
APP
ln -s busybox $R/bin/sed
chmod 755 $R/app
mkdir -p /ctr/spec; (cd /ctr/spec && runc spec)
run spec-args sed -n '/"args"/,/]/p;/"type": "cgroup"/p;/"readonly"/p;/"terminal"/p;/"CAP_AUDIT_WRITE"/p;/"resources"/p;/"linux"/p' /ctr/spec/config.json
# `bundle DIR ID CPUS QUOTA NS ARGS...`: a bundle in DIR from `runc spec`:
# no terminal, writable root /ctr/rootfs, CAP_SYS_NICE (the pod's
# securityContext), the pod's cgroupsPath for container ID (runc's
# systemd form slice:prefix:name), cpuset CPUS, CFS quota QUOTA us per
# 100 ms (- for none), the state file bind-mounted read-only, and the
# cgroup namespace private (NS=private, containerd's default on cgroup v2;
# pinrun then sees "/" and KUBERNETES_SERVICE_HOST, which kubelet sets)
# or the host's (NS=host: the full pod path in /proc/self/cgroup).
bundle() {
  _d=$1 _id=$2 _cpus=$3 _q=$4 _ns=$5; shift 5
  _args=; for _a in "$@"; do _args="$_args${_args:+, }\"$_a\""; done
  [ "$_q" = - ] && _quota= || _quota=", \"quota\": $_q, \"period\": 100000"
  [ "$_ns" = host ] && _nsp=', "path": "/proc/1/ns/cgroup"' || _nsp=
  # (runc 1.1's spec has a cgroup namespace; one is added if not)
  grep -q '"type": "cgroup"' /ctr/spec/config.json && _nsa= || _nsa=' { "type": "cgroup"'"$_nsp"' },'
  mkdir -p "$_d"
  sed -e 's/"terminal": true/"terminal": false/' \
    -e 's/"readonly": true/"readonly": false/' \
    -e 's|"path": "rootfs"|"path": "/ctr/rootfs"|' \
    -e '/"args": \[/,/\]/{/"sh"/d;s|"args": \[|"args": ['"$_args"'|}' \
    -e 's/"CAP_AUDIT_WRITE",/"CAP_AUDIT_WRITE", "CAP_SYS_NICE",/' \
    -e 's|"TERM=xterm"|"TERM=xterm", "KUBERNETES_SERVICE_HOST=10.96.0.1"|' \
    -e 's|"linux": {|"linux": { "cgroupsPath": "'"$SLICE"':cri-containerd:'"$_id"'",|' \
    -e 's|"resources": {|"resources": { "cpu": { "cpus": "'"$_cpus"'"'"$_quota"' },|' \
    -e 's|"type": "cgroup"|"type": "cgroup"'"$_nsp"'|' \
    -e 's|"namespaces": \[|"namespaces": ['"$_nsa"'|' \
    -e 's|"mounts": \[|"mounts": [ { "destination": "/var/lib/kubelet/cpu_manager_state", "type": "bind", "source": "/var/lib/kubelet/cpu_manager_state", "options": ["rbind", "ro"] },|' \
    /ctr/spec/config.json > "$_d/config.json"
}
# `ctr ID CPUS QUOTA NS ARGS...`: run ARGS as container ID to the end
# (--no-pivot: the guest's root is the initramfs), then delete it.
ctr() {
  bundle "/ctr/$1" "$@"
  runc --systemd-cgroup run --no-pivot -b "/ctr/$1" "$1" < /dev/null
  _rc=$?
  runc --systemd-cgroup delete -f "$1" 2> /dev/null
  return $_rc
}
P=/usr/local/bin/pinrun

# 1. The exclusive CPUs with a CFS quota of 2 CPUs, the pod path visible.
run dry-quota ctr c0ffee01 "$EXCL" 200000 host $P --cores 1 --fifo 10 --dry-run --json -- /app
run launch-quota ctr c0ffee03 "$EXCL" 200000 host $P --cores 1 --fifo 10 -- /app
# 2. No quota: no cfs-quota finding.
run dry-noquota ctr c0ffee04 "$EXCL" - host $P --cores 1 --fifo 10 --dry-run --json -- /app
# 3. A private cgroup namespace (containerd's default): "/" in
# /proc/self/cgroup, the pool found by the cpuset alone.
run dry-cgroupns ctr c0ffee05 "$EXCL" - private $P --cores 1 --fifo 10 --dry-run --json -- /app
run launch-cgroupns ctr c0ffee06 "$EXCL" - private $P --cores 1 --fifo 10 -- /app
# 4. kubelet's state names CPUs the cpuset does not show: --settle=1s
# times out with the documented hint ...
run settle-timeout ctr c0ffee07 "$SHARED" - host $P --cores 1 --settle=1s --dry-run --json -- /app
# ... and a --settle=60s launch waits until `runc update` (kubelet's
# UpdateContainerResources) writes the assigned cpuset, then plans in it.
settle_update() {
  bundle /ctr/c0ffee08 c0ffee08 "$SHARED" - host $P --cores 1 --fifo 10 --settle=60s -- /app
  runc --systemd-cgroup run --no-pivot -b /ctr/c0ffee08 c0ffee08 < /dev/null > /tmp/settle.out 2>&1 &
  _bg=$!
  # wait until the container's process is pinrun, and still pinrun 1 s
  # later: waiting, not yet exec'd into /app
  _i=0 _pid=
  while [ $_i -lt 300 ]; do
    _pid=$(runc --systemd-cgroup state c0ffee08 2> /dev/null | sed -n 's/^ *"pid": \([0-9]*\),$/\1/p')
    [ -n "$_pid" ] && [ "$(cat "/proc/$_pid/comm" 2> /dev/null)" = pinrun ] && break
    sleep 0.1; _i=$((_i + 1))
  done
  sleep 1
  echo "before update: $(cat "/proc/$_pid/comm") $(grep Cpus_allowed_list "/proc/$_pid/status")"
  runc --systemd-cgroup update --cpuset-cpus "$EXCL" c0ffee08
  echo "update rc=$?"
  wait $_bg
  echo "container rc=$?"
  cat /tmp/settle.out
  runc --systemd-cgroup delete -f c0ffee08 2> /dev/null
  return 0
}
run settle-update settle_update
# 5. --emit k8s in the container: the stanza for what was run.
run emit ctr c0ffee09 "$EXCL" - host $P --cores 1 --fifo 10 --emit k8s -- /app
cp /tmp/.o /tmp/emit.yaml   # (run's stdout file)
# ... run as printed: its command in a container of the size it asks
# for, one whole core (kubelet's full-pcpus-only choice, written by hand:
# CPUs 6-7, the rest the shared pool).
printf '{"policyName":"static","defaultCpuSet":"0-5","entries":{"%s":{"engine":"6-7"}},"checksum":1234567890}\n' \
  "$UID_" > /var/lib/kubelet/cpu_manager_state
emitted=$(sed -n 's/^command: \[\(.*\)\]$/\1/p' /tmp/emit.yaml | tr -d '",')
# shellcheck disable=SC2086  # the emitted words (no blanks in them)
run emitted-run ctr c0ffee0a 6-7 - host $emitted
# Every container gone (runc delete), no scope left in the pod's slice.
run leftovers sh -c "runc --systemd-cgroup list -q; find /sys/fs/cgroup/kubepods.slice -name '*.scope'"
