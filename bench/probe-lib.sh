# bench/probe-lib.sh: what the probe benchmarks (probe.sh, probe-rt.sh,
# probe-worst-gap.sh) share; sourced, not run.

# bench_files BLOCKS: the traps, then $out (a temporary directory) and
# $blocks (the file BLOCKS, or a new temporary one when BLOCKS is empty)
# for the loop of O_DIRECT reads, not yet written ([`blocks_write`]). On
# exit, whatever ended the script: the load and the tool running (each runs
# in the background, waited for), then the files. Ctrl-C, a hang-up, a
# SIGTERM to the script alone: exit with 130/129/143 (and the EXIT trap);
# oslat and cyclictest end on SIGINT with status 0, so without the trap
# the script went on with its next run.
bench_files() {
    out=
    blocks=
    trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$out" "$blocks"' EXIT
    trap 'exit 130' INT
    trap 'exit 129' HUP
    trap 'exit 143' TERM
    out=$(mktemp -d)
    blocks=${1:-$(mktemp -p "${TMPDIR:-/var/tmp}" probe-bench.XXXXXX)}
}

# blocks_write: BLOCKS_MB MiB (default 64) into $blocks, with O_DIRECT (a
# disk file system: tmpfs refuses it).
blocks_write() {
    dd if=/dev/zero of="$blocks" bs=1M count="${BLOCKS_MB:-64}" oflag=direct status=none
}

# read_loop: 4 KiB O_DIRECT reads of $blocks in a loop, in the background
# (a device interrupt per read). Its dd runs in the background, waited
# for, and is killed on SIGTERM: a shell runs its trap only once a command
# in the foreground ends (64 MiB of 4 KiB reads ran on after the script).
read_loop() {
    (
        trap 'kill $! 2>/dev/null; wait $! 2>/dev/null; exit 0' TERM
        while :; do
            dd if="$blocks" of=/dev/null bs=4k iflag=direct status=none &
            wait $!
        done
    ) &
}

# load_off: ends every background job (the load) and waits for them.
load_off() {
    kill $(jobs -p) 2>/dev/null || true
    wait 2>/dev/null || true
}
