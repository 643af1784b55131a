#!/usr/bin/env python3
"""Synthetic machine dumps for pinrun --sysroot scaling benchmarks (issue 8).

    bench/gen_sysroot.py --cpus 4096 --nodes 16 --irqs 10000 --smt on OUTDIR

writes OUTDIR laid out like / with what a Linux 6.x kernel shows:

  sys/devices/system/cpu/{possible,present,online,isolated,nohz_full}
  sys/devices/system/cpu/cpuN/topology/{core_id,physical_package_id,die_id,
      cluster_id,core_cpus_list,thread_siblings_list,package_cpus_list,
      core_siblings_list}
  sys/devices/system/cpu/cpuN/cache/index{0..3}/{level,type,shared_cpu_list}
      (L1d, L1i, L2 per core; L3 per node)
  sys/devices/system/node/{online,possible,has_cpu,has_memory}
  sys/devices/system/node/nodeK/{cpulist,meminfo,distance}
  proc/interrupts (one column per CPU, as the kernel prints it), proc/cmdline
  proc/irq/N/{smp_affinity_list,effective_affinity_list} for every device IRQ
  sys/kernel/irq/N/{actions,per_cpu_count,chip_name,hwirq,type,name,wakeup}
      for every IRQ (Linux >= 4.17 with CONFIG_SPARSE_IRQ; written as
      kernel/irq/irqdesc.c shows them: per_cpu_count has one count per
      possible CPU and, like any sysfs attribute, is cut at PAGE_SIZE - 1
      = 4095 bytes without its newline, so 4096 CPUs do not fit)

Device IRQ N is an MSI of chip IR-PCI-MSI, hardware IRQ N, action
devK-qJ (K = N mod 64), delivered to CPU N mod CPUS (effective affinity),
where it has counted (37 N) mod 1000 interrupts.

Numbering is Intel-like: with SMT, CPU i and i + CPUS/2 are the two threads
of core i. Two packages from 64 CPUs up; nodes split the cores evenly.
"""

import argparse
import os
import shutil


def ranges(ids):
    """Kernel cpulist of a sorted id list."""
    out, start, prev = [], None, None
    for i in ids:
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ",".join(out)


def put(path, text):
    with open(path, "w") as f:
        f.write(text)


def generate(out, ncpus, nnodes, nirqs, smt):
    threads = 2 if smt and ncpus > 1 else 1
    ncores = ncpus // threads
    assert ncores * threads == ncpus, "CPUS must be even with SMT"
    npkgs = 2 if ncpus >= 64 else 1
    assert ncores % nnodes == 0 and ncores % npkgs == 0, "cores must split evenly"
    cores_per_pkg = ncores // npkgs
    cores_per_node = ncores // nnodes

    def core_cpus(core):
        return [core + t * ncores for t in range(threads)]

    def cpus_of(cores):
        return sorted(c for core in cores for c in core_cpus(core))

    if os.path.exists(out):
        shutil.rmtree(out)
    cpu_dir = os.path.join(out, "sys/devices/system/cpu")
    node_dir = os.path.join(out, "sys/devices/system/node")
    os.makedirs(cpu_dir)
    os.makedirs(node_dir)
    all_cpus = f"0-{ncpus - 1}\n" if ncpus > 1 else "0\n"
    for name in ("possible", "present", "online"):
        put(os.path.join(cpu_dir, name), all_cpus)
    put(os.path.join(cpu_dir, "isolated"), "\n")
    put(os.path.join(cpu_dir, "nohz_full"), "(null)\n")

    pkg_list = [ranges(cpus_of(range(p * cores_per_pkg, (p + 1) * cores_per_pkg))) + "\n"
                for p in range(npkgs)]
    node_list = [ranges(cpus_of(range(n * cores_per_node, (n + 1) * cores_per_node))) + "\n"
                 for n in range(nnodes)]
    for cpu in range(ncpus):
        core = cpu % ncores
        pkg = core // cores_per_pkg
        node = core // cores_per_node
        siblings = ranges(core_cpus(core)) + "\n"
        t = os.path.join(cpu_dir, f"cpu{cpu}", "topology")
        os.makedirs(t)
        for name, text in (
            ("core_id", f"{core % cores_per_pkg}\n"),
            ("physical_package_id", f"{pkg}\n"),
            ("die_id", "0\n"),
            ("cluster_id", f"{core % cores_per_pkg}\n"),
            ("core_cpus_list", siblings),
            ("thread_siblings_list", siblings),
            ("package_cpus_list", pkg_list[pkg]),
            ("core_siblings_list", pkg_list[pkg]),
        ):
            put(os.path.join(t, name), text)
        for k, (level, kind, shared) in enumerate((
            (1, "Data", siblings),
            (1, "Instruction", siblings),
            (2, "Unified", siblings),
            (3, "Unified", node_list[node]),
        )):
            d = os.path.join(cpu_dir, f"cpu{cpu}", "cache", f"index{k}")
            os.makedirs(d)
            put(os.path.join(d, "level"), f"{level}\n")
            put(os.path.join(d, "type"), f"{kind}\n")
            put(os.path.join(d, "shared_cpu_list"), shared)

    nodes = f"0-{nnodes - 1}\n" if nnodes > 1 else "0\n"
    for name in ("online", "possible", "has_cpu", "has_memory"):
        put(os.path.join(node_dir, name), nodes)
    for n in range(nnodes):
        d = os.path.join(node_dir, f"node{n}")
        os.makedirs(d)
        put(os.path.join(d, "cpulist"), node_list[n])
        put(os.path.join(d, "meminfo"),
            f"Node {n} MemTotal:       16777216 kB\nNode {n} MemFree:        8388608 kB\n")
        put(os.path.join(d, "distance"),
            " ".join("10" if m == n else "20" for m in range(nnodes)) + "\n")

    proc = os.path.join(out, "proc")
    os.makedirs(os.path.join(proc, "irq"))
    put(os.path.join(proc, "cmdline"), "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n")

    def target(irq):
        return irq % ncpus, (37 * irq) % 1000

    # kernel/irq/proc.c show_interrupts: the IRQ column is prec wide, prec
    # growing from 3 with nr_irqs; counts "%10u " per online CPU; the chip
    # "%8s", " %*lu" hwirq, "-%-8s" desc->name, "  " and the actions.
    prec, j = 3, 1000
    while prec < 10 and j <= nirqs:
        prec, j = prec + 1, j * 10
    with open(os.path.join(proc, "interrupts"), "w") as f:
        f.write(" " * (prec + 8) + "".join(f"CPU{c:<8d}" for c in range(ncpus)) + "\n")
        zeros = "         0 " * ncpus
        for irq in range(nirqs):
            cpu, count = target(irq)
            counts = zeros[:cpu * 11] + f"{count:>10} " + zeros[(cpu + 1) * 11:]
            f.write(f"{irq:>{prec}}: {counts}IR-PCI-MSI {irq:>{prec}}-edge      "
                    f"dev{irq % 64}-q{irq // 64}\n")
        for name, what in (("LOC", "Local timer interrupts"),
                           ("RES", "Rescheduling interrupts"),
                           ("CAL", "Function call interrupts"),
                           ("TLB", "TLB shootdowns")):
            f.write(f"{name:>{prec + 1}}: {zeros} {what}\n")
    for irq in range(nirqs):
        d = os.path.join(proc, "irq", str(irq))
        os.makedirs(d)
        put(os.path.join(d, "smp_affinity_list"), all_cpus)
        put(os.path.join(d, "effective_affinity_list"), f"{irq % ncpus}\n")

    # kernel/irq/irqdesc.c: per_cpu_count_show prints "%u" per possible
    # CPU joined by "," then "\n", each piece by scnprintf into the
    # remaining page: past 4095 bytes the text is cut (mid-number too) and
    # the newline dropped.
    page = 4096
    zero_counts = ["0"] * ncpus
    sysirq = os.path.join(out, "sys/kernel/irq")
    for irq in range(nirqs):
        d = os.path.join(sysirq, str(irq))
        os.makedirs(d)
        cpu, count = target(irq)
        counts = list(zero_counts)
        counts[cpu] = str(count)
        text = ",".join(counts) + "\n"
        if len(text) > page - 1:
            text = text[:page - 1]
        for name, value in (("per_cpu_count", text),
                            ("actions", f"dev{irq % 64}-q{irq // 64}\n"),
                            ("chip_name", "IR-PCI-MSI\n"),
                            ("hwirq", f"{irq}\n"),
                            ("type", "edge\n"),
                            ("name", "edge\n"),
                            ("wakeup", "disabled\n")):
            put(os.path.join(d, name), value)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--irqs", type=int, default=100)
    ap.add_argument("--smt", choices=("on", "off"), default="on")
    ap.add_argument("out")
    a = ap.parse_args()
    generate(a.out, a.cpus, a.nodes, a.irqs, a.smt == "on")


if __name__ == "__main__":
    main()
