# Sourced by the vm/ scripts: where things are cached.
# PINRUN_VM_CACHE: kernels and the packages' state (default /var/cache/pinrun-vm
# when writable, else ${XDG_CACHE_HOME:-~/.cache}/pinrun-vm).
if [ -z "${PINRUN_VM_CACHE:-}" ]; then
  if mkdir -p /var/cache/pinrun-vm 2>/dev/null && [ -w /var/cache/pinrun-vm ]; then
    PINRUN_VM_CACHE=/var/cache/pinrun-vm
  else
    PINRUN_VM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/pinrun-vm
  fi
fi
mkdir -p "$PINRUN_VM_CACHE"
export PINRUN_VM_CACHE
VM_DIR=$(dirname "$(readlink -f "$0")")
REPO_DIR=$(dirname "$VM_DIR")
# The apt-get options for the kernel of SUITE: none for the host's, else a
# private apt state under $PINRUN_VM_CACHE/apt-SUITE (vm/setup.sh makes it).
kernel_apt_opts() {
  [ "$1" = host ] && return 0
  _A=$PINRUN_VM_CACHE/apt-$1
  echo "-o Dir::Etc::SourceList=$_A/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$_A/lists -o Dir::Cache=$_A/cache -o Dir::State::status=/dev/null"
}
