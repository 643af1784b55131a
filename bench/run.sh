#!/usr/bin/env bash
# Reproduces BENCHMARKS.md: builds pinrun (release; static by default,
# .cargo/config.toml), then runs bench/launch.sh and bench/scale.sh.
# Under 5 minutes with a warm cargo cache (the first static build compiles
# the dependencies once more, ~2 minutes on 2 cores). Needs root (SCHED_FIFO),
# hyperfine, numactl, strace, jq, python3:
#   apt-get install -y hyperfine numactl strace jq linux-perf
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
start=$SECONDS
cargo build --release --bin pinrun --example plan_bench --example read_cost
# .cargo/config.toml builds for the host triple, statically (issue 17): the
# default build is the static one, in target/<triple>/release.
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
PINRUN=$CARGO_TARGET_DIR/$TRIPLE/release/pinrun
{
  echo "## machine"
  echo
  echo '```'
  uname -srm
  grep -m1 'model name' /proc/cpuinfo
  echo "CPUs: $(nproc)  memory: $(free -h | awk '/Mem:/{print $2}')  load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  hyperfine --version; taskset --version; echo "numactl $(dpkg-query -W -f '${Version}' numactl 2>/dev/null)"; rustc --version
  # Not `git status | grep -q .`: grep leaves at the first line and git,
  # with more to write, dies by SIGPIPE: under pipefail a dirty tree read clean.
  echo "pinrun: $(git rev-parse --short HEAD) $([ -n "$(git status --porcelain)" ] && echo '(dirty)')"
  echo '```'
} | tee "$OUT/machine.md"
echo "## launch"
bench/launch.sh "$PINRUN" "$OUT"
echo "## scaling"
bench/scale.sh "$PINRUN" "$CARGO_TARGET_DIR/$TRIPLE/release/examples/plan_bench" "$OUT"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); total $((SECONDS - start)) s" | tee -a "$OUT/machine.md"
