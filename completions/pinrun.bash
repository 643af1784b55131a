_pinrun() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="pinrun"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        pinrun)
            opts="-C -N -m -f -r -R -q -v -h -V --physcpubind --cpu-list --cpus --node --cpunodebind --cores --llc --dies --clusters --core-type --near --near-irqs --smt --isolated --within --choose --housekeeping --exclusive --wait --state-dir --steer-irqs --irq-housekeeping --irqbalance-config --membind --preferred --preferred-many --interleave --weighted-interleave --localalloc --fifo --rr --other --batch --idle --deadline --sched-runtime --sched-deadline --sched-period --nice --reset-on-fork --pid --tid --migrate --migrate-limit --probe --probe-mode --probe-threshold --probe-interval --probe-max --probe-dma-latency --probe-tracer --dry-run --check --show --emit --cgroup --unit-user --check-emitted --settle --json --sysroot --dump --reclaim --plan-host --housekeeping-count --latency-cores --offline-count --no-smt --split-numa --strict --allow --omp --omp-replace --thread-map --thread-log --quiet --verbose --generate --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --cpus)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --physcpubind)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cpu-list)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -C)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --node)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cpunodebind)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -N)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --llc)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dies)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clusters)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --core-type)
                    COMPREPLY=($(compgen -W "performance efficiency" -- "${cur}"))
                    return 0
                    ;;
                --near)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --near-irqs)
                    COMPREPLY=($(compgen -W "avoid share" -- "${cur}"))
                    return 0
                    ;;
                --within)
                    COMPREPLY=($(compgen -W "inherited cgroup" -- "${cur}"))
                    return 0
                    ;;
                --choose)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --irq-housekeeping)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --membind)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -m)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --preferred)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --preferred-many)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --interleave)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --weighted-interleave)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --fifo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -f)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -r)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sched-runtime)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sched-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sched-period)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nice)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pid)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --tid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --migrate-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-mode)
                    COMPREPLY=($(compgen -W "spin wakeup" -- "${cur}"))
                    return 0
                    ;;
                --probe-threshold)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-max)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-dma-latency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-tracer)
                    COMPREPLY=($(compgen -W "osnoise" -- "${cur}"))
                    return 0
                    ;;
                --emit)
                    COMPREPLY=($(compgen -W "systemd k8s slurm" -- "${cur}"))
                    return 0
                    ;;
                --unit-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --check-emitted)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --settle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sysroot)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dump)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --housekeeping-count)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --latency-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --offline-count)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allow)
                    COMPREPLY=($(compgen -W "all bind-* cfs-* claim-* cpu-* cpufreq-* cpuidle-* cpuset-* deadline-* default-* efficiency-* env-* firmware-* irq-* isolated-* isolation-* isolcpus-* k8s-* managed-* memory-* nice-* no-* not-* numa-* outside-* partition-* preempt-* rt-* sibling-* slurm-* smt-* sources-* topology-* bind-low-memory cfs-quota claim-record-unusable claim-state-unusable cpu-claimed cpufreq-governor cpuidle-deep-states cpuset-resets-affinity deadline-cannot-fork default-irq-affinity efficiency-core env-thread-binding firmware-data irq-on-cpu isolated-no-balancing isolated-without-intent isolation-mixed isolation-not-applied isolcpus-unknown-flag k8s-cpuset-unsettled k8s-pool k8s-shared-pool managed-irq-on-cpu memory-partly-remote memory-remote nice-ignored no-numa not-isolated not-nohz-full not-rcu-nocbs numa-balancing outside-inherited-affinity partition-invalid preempt-model rt-competitor rt-priority-99 rt-throttling rt-time-limit sibling-not-isolated slurm-shared-mask smt-siblings-shared sources-disagree topology-inconsistent" -- "${cur}"))
                    return 0
                    ;;
                --omp)
                    COMPREPLY=($(compgen -W "cores threads" -- "${cur}"))
                    return 0
                    ;;
                --thread-map)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --thread-log)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --generate)
                    COMPREPLY=($(compgen -W "man bash zsh fish" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _pinrun -o nosort -o bashdefault -o default pinrun
else
    complete -F _pinrun -o bashdefault -o default pinrun
fi

# pinrun: CPU and node numbers of this machine, and the command after --.
_pinrun_ids() {
    local list item a b
    read -r list < "$1" 2>/dev/null || return 0
    for item in ${list//,/ }; do
        if [[ $item == *-* ]]; then
            a=${item%-*} b=${item#*-}
            while (( a <= b )); do echo "$a"; (( a++ )); done
        else
            echo "$item"
        fi
    done
}
_pinrun_live() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" i
    for (( i = 1; i < COMP_CWORD; i++ )); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            if (( i + 1 == COMP_CWORD )); then
                COMPREPLY=( $(compgen -c -- "$cur") )
            elif declare -F _command_offset >/dev/null; then
                _command_offset $(( i + 1 ))
            else
                COMPREPLY=( $(compgen -f -- "$cur") )
            fi
            return 0
        fi
    done
    case "$prev" in
        --cpus|-C|-c|--physcpubind|--cpu-list)
            COMPREPLY=( $(compgen -W "all $(_pinrun_ids /sys/devices/system/cpu/online)" -- "$cur") )
            return 0 ;;
        --node|--cpunodebind|-N|--membind|-m|--preferred|--preferred-many|--interleave|--weighted-interleave)
            COMPREPLY=( $(compgen -W "all $(_pinrun_ids /sys/devices/system/node/online)" -- "$cur") )
            return 0 ;;
        --pid)
            COMPREPLY=( $(compgen -W "self $(cd /proc && echo [1-9]*)" -- "$cur") )
            return 0 ;;
    esac
    _pinrun "$@"
}
if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _pinrun_live -o nosort -o bashdefault -o default pinrun
else
    complete -F _pinrun_live -o bashdefault -o default pinrun
fi
