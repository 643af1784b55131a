# Scenario: an e1000e NIC (0000:81:00.0) behind a PCIe expander bridge
# (pxb-pcie) that QEMU puts on NUMA node 1 (ACPI _PXM); nodes {0-3} {4-7}.
#@ topology near
run pci sh -c 'for d in /sys/bus/pci/devices/*; do echo "${d##*/} $(cat $d/numa_node) $(cat $d/class)"; done'
run near-nic pinrun --near 0000:81:00.0 --cores 1 --membind -- sh -c '. /lib.sh; grep Cpus_allowed_list /proc/$$/status; touch_and_maps 8'
run near-nic-json pinrun --dry-run --json --near 81:00.0
run near-port pinrun --near 0000:80:00.0 -- grep Cpus_allowed_list /proc/self/status
run near-nic-show pinrun --show
