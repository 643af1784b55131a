//! Placement units and core types (issue 19) on the real dumps: the CPUs
//! `--llc`, `--clusters` and `--cores` choose are the last-level-cache and
//! cluster groups lstopo prints for the dump (hwloc's expected output),
//! and `--core-type` chooses the CPUs the kernel's own files name
//! (`/sys/devices/cpu_core/cpus`, `cpu_atom/cpus`, `cpu_capacity`), which
//! for the NVIDIA GB10 are also hwloc's first and last CPU kinds.

use crate::common::{self, HwObj, HwlocView, Set, dry_json, ids, machine, machines};
use crate::peers::hwloc_choice;
use serde_json::Value;

/// `pinrun --sysroot DUMP --dry-run ARGS --json`: exit status and JSON.
fn dry(rel: &str, args: &[&str]) -> (i32, Value) {
    let out = common::pinrun()
        .arg("--sysroot")
        .arg(machine(rel))
        .arg("--dry-run")
        .args(args)
        .arg("--json")
        .output()
        .expect("run");
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

/// A set as a kernel cpulist ("0-1,4").
fn compact(s: &Set) -> String {
    let v: Vec<u32> = s.iter().copied().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

fn cpus_of(v: &Value) -> Set {
    ids(&v["cpus"]).into_iter().collect()
}

/// Every hwloc dump, with hwloc's view from its expected lstopo output.
fn hwloc_views() -> Vec<(String, HwObj, HwlocView)> {
    machines("hwloc")
        .into_iter()
        .map(|rel| {
            let (_, tree) = hwloc_choice(&rel);
            let view = HwlocView::of(&tree);
            (rel, tree, view)
        })
        .collect()
}

/// `--llc N` takes N whole groups that lstopo prints as last-level caches,
/// and `--cores K` with K the cores of the first of them stays inside it
/// (on a machine with core types, inside the performance cores), on every
/// hwloc dump with two LLCs or more, all allowed.
#[test]
fn llc_groups_are_lstopos() {
    let mut compared = 0;
    for (rel, _, h) in hwloc_views() {
        // A cgroup that cuts an LLC: lstopo prints the cut group, pinrun
        // refuses it as not whole (checked by unit tests).
        let p = common::PinrunView::of(&rel);
        if h.llc.len() < 2 || !h.disallowed.is_empty() || p.allowed != p.online() {
            continue;
        }
        let (code, one) = dry(&rel, &["--llc", "1"]);
        if code != 0 {
            // A group with CPUs pinrun cannot use (an ia64 all-zero
            // shared_cpu_map, offline siblings) is refused with a reason.
            assert_eq!(code, 125, "{rel}: {one}");
            continue;
        }
        let chosen = cpus_of(&one);
        assert!(
            h.llc.contains(&chosen),
            "{rel}: --llc 1 chose {chosen:?}, not one of lstopo's LLCs {:?}",
            h.llc
        );
        let (code, two) = dry(&rel, &["--llc", "2"]);
        assert_eq!(code, 0, "{rel}: --llc 2: {two}");
        let both = cpus_of(&two);
        let parts: Vec<&Set> = h.llc.iter().filter(|g| g.is_subset(&both)).collect();
        assert_eq!(
            parts.len(),
            2,
            "{rel}: --llc 2 chose {both:?}, not two of lstopo's LLCs {:?}",
            h.llc
        );
        assert_eq!(parts[0] | parts[1], both, "{rel}");
        // As many cores as the chosen LLC has (the kernel's SMT cores,
        // which on AMD Bulldozer are hwloc's pairs of cores): all inside it.
        let cores = p.cores(&chosen).len();
        let k = cores.to_string();
        let packed = cpus_of(&dry_json(&rel, &["--dry-run", "--cores", &k]));
        // Core types come first (GB10: the X925 cores of both LLCs).
        let (typed, perf) = dry(&rel, &["--core-type", "performance"]);
        if typed == 0 {
            assert!(packed.is_subset(&cpus_of(&perf)), "{rel}: {packed:?}");
            compared += 1;
            continue;
        }
        assert!(
            h.llc.iter().any(|g| packed.is_subset(g)),
            "{rel}: --cores {k} chose {packed:?}, across lstopo's LLCs {:?}",
            h.llc
        );
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} hwloc dumps compared");
}

/// The Ryzen 9 7950X has two CCXs, each its own L3 (the kernel's
/// cache/index3/shared_cpu_list: 0-7,16-23 and 8-15,24-31): 8 cores fit
/// in one, 9 spread over the fewest, two, and the plan says so.
#[test]
fn ryzen_7950x_ccx() {
    let rel = "iree/x86_64_ryzen9_7950x";
    let read = |cpu: u32| {
        std::fs::read_to_string(machine(rel).join(format!(
            "sys/devices/system/cpu/cpu{cpu}/cache/index3/shared_cpu_list"
        )))
        .unwrap()
    };
    assert_eq!(read(0).trim(), "0-7,16-23");
    assert_eq!(read(8).trim(), "8-15,24-31");
    let ccx0: Set = (0..8).chain(16..24).collect();
    let ccx1: Set = (8..16).chain(24..32).collect();
    assert_eq!(cpus_of(&dry_json(rel, &["--dry-run", "--llc", "1"])), ccx0);
    let v = dry_json(rel, &["--dry-run", "--cores", "8"]);
    assert!(cpus_of(&v).is_subset(&ccx0));
    assert!(
        v["reasons"].as_array().unwrap().iter().any(|r| r
            .as_str()
            .unwrap()
            .contains("inside one LLC (CPUs 0-7,16-23)")),
        "{v}"
    );
    let v = dry_json(rel, &["--dry-run", "--cores", "9", "--smt"]);
    let c = cpus_of(&v);
    assert_eq!((&c & &ccx0).len(), 16, "one CCX whole: {c:?}");
    assert_eq!((&c & &ccx1).len(), 2, "one core of the other: {c:?}");
    assert!(v["reasons"].to_string().contains("over 2 LLCs"), "{v}");
    // No die list on this dump: --dies is refused, naming the file.
    let (code, e) = dry(rel, &["--dies", "1"]);
    assert_eq!(code, 125);
    assert_eq!(e["error"]["code"], "unit-unavailable");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("die_cpus_list")
    );
}

/// Kunpeng 920 (128arm-2pa2n8cluster4co): `--clusters N` takes lstopo's
/// `Group(Cluster)` objects; `--cores 4` fills one cluster and `--cores 5`
/// a whole cluster and one core of the next (the fewest clusters).
#[test]
fn kunpeng_clusters_are_lstopos() {
    let rel = "hwloc/128arm-2pa2n8cluster4co";
    let (_, tree) = hwloc_choice(rel);
    let mut clusters: Vec<Set> = Vec::new();
    tree.walk(&mut |o, _| {
        if o.kind.starts_with("Group") {
            clusters.push(o.pus());
        }
    });
    assert_eq!(clusters.len(), 32, "lstopo prints 32 clusters of 4 cores");
    let one = cpus_of(&dry_json(rel, &["--dry-run", "--clusters", "1"]));
    assert!(clusters.contains(&one), "{one:?}");
    let three = cpus_of(&dry_json(rel, &["--dry-run", "--clusters", "3"]));
    assert_eq!(
        clusters.iter().filter(|c| c.is_subset(&three)).count(),
        3,
        "{three:?}"
    );
    assert_eq!(three.len(), 12);
    let four = cpus_of(&dry_json(rel, &["--dry-run", "--cores", "4"]));
    assert!(clusters.contains(&four), "{four:?}");
    let five = cpus_of(&dry_json(rel, &["--dry-run", "--cores", "5"]));
    let touched: Vec<&Set> = clusters.iter().filter(|c| !c.is_disjoint(&five)).collect();
    assert_eq!(touched.len(), 2, "{five:?}");
    assert!(touched.iter().any(|c| c.is_subset(&five)));
    // No die on arm64 (die_id -1, die_cpus_list the CPU alone).
    let (code, e) = dry(rel, &["--dies", "1"]);
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (125, Some("unit-unavailable"))
    );
}

/// Intel hybrid (nri-plugins/sample1): the kernel's cpu_core and cpu_atom
/// PMUs list 0-7 and 8-15.
#[test]
fn hybrid_pmus_choose_core_types() {
    let rel = "nri-plugins/sample1";
    let file = |name: &str| -> Set {
        let t =
            std::fs::read_to_string(machine(rel).join(format!("sys/devices/{name}/cpus"))).unwrap();
        let (a, b) = t.trim().split_once('-').unwrap();
        (a.parse().unwrap()..=b.parse().unwrap()).collect()
    };
    let p = cpus_of(&dry_json(rel, &["--dry-run", "--core-type", "performance"]));
    assert_eq!(p, file("cpu_core"));
    let e = cpus_of(&dry_json(rel, &["--dry-run", "--core-type", "efficiency"]));
    assert_eq!(e, file("cpu_atom"));
    let show = common::show_json(rel);
    assert_eq!(show["core_types"]["performance"]["kernel_name"], "cpu_core");
    assert_eq!(
        ids(&show["core_types"]["efficiency"]["cpus"]),
        (8..16).collect::<Vec<u32>>()
    );
    let v = dry_json(
        rel,
        &["--dry-run", "--core-type", "performance", "--cores", "2"],
    );
    assert!(cpus_of(&v).is_subset(&file("cpu_core")));
    assert!(v["reasons"].to_string().contains("(cpu_core)"), "{v}");
    // --cpus of the other type is refused, the kernel's names given.
    let (code, err) = dry(rel, &["--core-type", "performance", "--cpus", "7-8"]);
    assert_eq!(code, 125);
    assert_eq!(err["error"]["code"], "no-cpus-of-core-type");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cpu_atom")
    );
}

/// A real-time launch on an efficiency core gets `efficiency-core`; on a
/// performance core, or when `--core-type efficiency` asked for it, not.
#[test]
fn realtime_on_efficiency_core_is_a_finding() {
    let rel = "nri-plugins/sample1";
    let codes = |args: &[&str]| -> Vec<String> {
        let v = dry_json(rel, &[&["--dry-run"], args].concat());
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_string())
            .collect()
    };
    let on_atom = codes(&["--fifo", "10", "--cpus", "8"]);
    assert!(
        on_atom.contains(&"efficiency-core".to_string()),
        "{on_atom:?}"
    );
    assert!(!codes(&["--fifo", "10", "--cpus", "0"]).contains(&"efficiency-core".to_string()));
    assert!(!codes(&["--cpus", "8"]).contains(&"efficiency-core".to_string()));
    assert!(
        !codes(&["--fifo", "10", "--core-type", "efficiency", "--cores", "1"])
            .contains(&"efficiency-core".to_string())
    );
}

/// arm64 by cpu_capacity: the most capable class is performance, the
/// least efficiency, a class holding every capacity within the scheduler's
/// fits_capacity() margin (25%) of its highest (Pixel 6 Tensor: 1024 and
/// 820 | 280; Dimensity-class A510/A710/A715/X3: 1024 and 855 | 280;
/// Apple M1 Pro: 1024 | 485), as the kernel's files of each dump say.
#[test]
fn capacity_chooses_core_types() {
    for (rel, perf, eff, caps) in [
        (
            "iree/arm64_pixel6_tensor",
            "0-3",
            "4-7",
            [1024, 1024, 820, 820, 280, 280, 280, 280],
        ),
        (
            "util-linux/arm-A510-A710-A715-X3",
            "3-7",
            "0-2",
            [280, 280, 280, 855, 855, 855, 855, 1024],
        ),
        (
            "util-linux-chcpu/aarch64_Apple_Icestorm-M1-Pro",
            "2-7",
            "0-1",
            [485, 485, 1024, 1024, 1024, 1024, 1024, 1024],
        ),
    ] {
        for (c, want) in caps.iter().enumerate() {
            let t = std::fs::read_to_string(
                machine(rel).join(format!("sys/devices/system/cpu/cpu{c}/cpu_capacity")),
            )
            .unwrap();
            assert_eq!(t.trim().parse::<u32>().unwrap(), *want, "{rel} cpu{c}");
        }
        let p = cpus_of(&dry_json(rel, &["--dry-run", "--core-type", "performance"]));
        let e = cpus_of(&dry_json(rel, &["--dry-run", "--core-type", "efficiency"]));
        assert_eq!(
            (compact(&p).as_str(), compact(&e).as_str()),
            (perf, eff),
            "{rel}"
        );
        // --cores packs the performance class first.
        let two = cpus_of(&dry_json(rel, &["--dry-run", "--cores", "2"]));
        assert!(two.is_subset(&p), "{rel}: --cores 2 chose {two:?}");
    }
}

/// NVIDIA DGX GB10: hwloc's cpukinds by core part (MIDR_EL1, the expected
/// XML of its default test): the X925 kind (capacities 997-1024, CPU 19
/// the highest) is performance, the A725 kind (718, 731) efficiency;
/// cpu_capacity's frequency binning within a part stays one class.
#[test]
fn gb10_core_types_are_hwlocs_cpu_parts() {
    let rel = "hwloc/nvidia-dgx-gb10";
    let xml =
        std::fs::read_to_string(machine(rel).join("expected-lstopo-nvidia-dgx-gb10.xml")).unwrap();
    let kinds: Vec<Set> = xml
        .split("<cpukind ")
        .skip(1)
        .map(|k| {
            let s = k.split("cpuset=\"").nth(1).unwrap();
            common::hwloc_bitmap(&s[..s.find('"').unwrap()])
        })
        .collect();
    assert_eq!(kinds.len(), 2, "hwloc groups the CPUs by part: {kinds:?}");
    let kind_of = |cpu: u32| kinds.iter().find(|k| k.contains(&cpu)).unwrap().clone();
    let p = cpus_of(&dry_json(rel, &["--dry-run", "--core-type", "performance"]));
    let e = cpus_of(&dry_json(rel, &["--dry-run", "--core-type", "efficiency"]));
    assert_eq!(p, kind_of(19));
    assert_eq!(e, kind_of(0));
    let v = dry_json(rel, &["--dry-run", "--core-type", "performance"]);
    assert!(
        v["reasons"].to_string().contains("cpu_capacity 997-1024"),
        "{v}"
    );
}

/// A machine with one core type (Lakefield's 5.3 kernel predates the
/// hybrid PMUs; hwloc read its kinds from a cpuid dump, not sysfs) and an
/// x86 server: `--core-type` is refused with the reason.
#[test]
fn one_core_type_is_refused() {
    for rel in [
        "hwloc/5intel64-hybrid-lakefield",
        "iree/x86_64_ryzen9_7950x",
    ] {
        let (code, e) = dry(rel, &["--core-type", "performance"]);
        assert_eq!(code, 125, "{rel}");
        assert_eq!(e["error"]["code"], "no-core-types", "{rel}");
    }
}
