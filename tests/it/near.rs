//! `--near DEVICE` on a dump that keeps its devices
//! (hwloc/32em64t-2n8c+dax+nvme+mic+dimms: SOURCES.md): the CPUs chosen
//! near a NIC, an InfiniBand HCA or a disk are those of the object lstopo
//! (`--whole-io`, the dump's expected XML) attaches the device to; a
//! device whose `numa_node` is -1 is refused on this two-node machine.

use crate::common::{self, Set, dry_json, hwloc_bitmap, ids, machine};
use serde_json::Value;

const REL: &str = "hwloc/32em64t-2n8c+dax+nvme+mic+dimms";

/// The cpuset of the nearest object above the OSDev named `name` in
/// lstopo's XML (the object hwloc attaches the device's PCI tree to).
fn hwloc_locality(name: &str) -> Set {
    let xml = std::fs::read_to_string(
        machine(REL).join("expected-lstopo-32em64t-2n8c+dax+nvme+mic+dimms.xml"),
    )
    .unwrap();
    // A stack of the open objects' cpusets (None: no cpuset attribute).
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut rest = xml.as_str();
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        let end = rest.find('>').unwrap();
        let tag = &rest[..=end];
        if tag.starts_with("<object ") {
            if tag.contains(&format!("type=\"OSDev\" name=\"{name}\"")) {
                let cs = stack.iter().rev().flatten().next().unwrap();
                return hwloc_bitmap(cs);
            }
            let cpuset = tag
                .split(" cpuset=\"")
                .nth(1)
                .map(|s| s[..s.find('"').unwrap()].to_string());
            if !tag.ends_with("/>") {
                stack.push(cpuset);
            }
        } else if tag.starts_with("</object") {
            stack.pop();
        }
        rest = &rest[end + 1..];
    }
    panic!("no OSDev {name} in the XML")
}

fn chosen(args: &[&str]) -> (Set, Value) {
    let v = dry_json(REL, &[&["--dry-run"], args].concat());
    (ids(&v["cpus"]).into_iter().collect(), v)
}

#[test]
fn near_devices_choose_lstopos_locality() {
    for dev in ["eth0", "eth1", "ib0", "sda"] {
        let (cpus, v) = chosen(&["--near", dev]);
        assert_eq!(cpus, hwloc_locality(dev), "--near {dev}: {v}");
    }
    // ib0 is on node 1 (its PCI function's numa_node); by PCI address,
    // short or full, the same; with --cores inside it, --membind to it.
    let node1: Set = (8..16).collect();
    assert_eq!(hwloc_locality("ib0"), node1);
    assert_eq!(chosen(&["--near", "0000:82:00.0"]).0, node1);
    assert_eq!(chosen(&["--near", "82:00.0"]).0, node1);
    let (cpus, v) = chosen(&["--near", "ib0", "--cores", "2", "--fifo", "90", "--membind"]);
    assert!(cpus.is_subset(&node1) && cpus.len() == 2, "{v}");
    assert_eq!(v["memory"]["nodes"], serde_json::json!([1]));
    let why = v["reasons"].to_string();
    assert!(why.contains("0000:82:00.0/numa_node"), "{why}");
    assert!(why.contains("128 MSI IRQs"), "{why}");
}

#[test]
fn unknown_node_and_missing_devices_are_refused() {
    let run = |args: &[&str]| {
        let out = common::pinrun()
            .arg("--sysroot")
            .arg(machine(REL))
            .args(["--dry-run", "--json"])
            .args(args)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            out.status.code(),
            v["error"]["code"].as_str().map(String::from),
            v,
        )
    };
    // nvme0n1's PCI function reads numa_node -1: unknown, said so.
    let (code, err, v) = run(&["--near", "nvme0n1"]);
    assert_eq!(
        (code, err.as_deref()),
        (Some(125), Some("device-node-unknown")),
        "{v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("is -1"),
        "{v}"
    );
    let (code, err, _) = run(&["--near", "wlan9"]);
    assert_eq!(
        (code, err.as_deref()),
        (Some(125), Some("device-not-found"))
    );
    // A file's device can be read only on the live machine.
    let (_, err, v) = run(&["--near", "/etc/hostname"]);
    assert_eq!(err.as_deref(), Some("device-not-found"), "{v}");
}

/// `--show` lists the devices per node.
#[test]
fn show_lists_devices_per_node() {
    let out = common::pinrun()
        .arg("--sysroot")
        .arg(machine(REL))
        .arg("--show")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line_after = |node: &str| {
        let at = text.find(node).unwrap();
        text[at..].lines().take(3).collect::<Vec<_>>().join(" ")
    };
    let node0 = line_after("node 0:");
    assert!(node0.contains("devices eth0 eth1 pmem0.1"), "{text}");
    assert!(node0.contains(" sda"), "{text}");
    assert!(
        line_after("node 1:").contains("devices ib0 pmem1"),
        "{text}"
    );
    assert!(
        text.contains("devices of no known node (numa_node -1 or none): nvme0n1"),
        "{text}"
    );
}

/// `--show --json` lists the devices with their node as the kernel gives
/// it (-1 kept), and the MSI IRQs of each.
#[test]
fn show_json_lists_devices() {
    let v = common::show_json(REL);
    let dev = |name: &str| {
        v["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {}", v["devices"]))
            .clone()
    };
    assert_eq!(dev("ib0")["numa_node"], 1);
    assert_eq!(dev("ib0")["kind"], "network interface");
    assert_eq!(dev("ib0")["irqs"].as_array().unwrap().len(), 128);
    assert_eq!(dev("nvme0n1")["numa_node"], -1);
    assert_eq!(dev("sda")["numa_node"], 0);
}
