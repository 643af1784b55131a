//! Issue 15: `--show --json` is written CPU by CPU (memory linear in the
//! machine) and stays byte for byte what the whole value printed.

use crate::common;
use common::*;
use pinrun::report::{show_json, write_show_json};
use pinrun::system::{Root, SystemState};

#[test]
fn streamed_show_json_is_the_same_bytes() {
    let mut machines = all_machines();
    machines.retain(|m| machine(m).join("sys/devices/system/cpu").is_dir());
    for m in machines.iter().step_by(3) {
        let sys = SystemState::read(&Root::new(machine(m)));
        let extra = serde_json::json!({"claims": [], "claimed_cpus": [], "claim_warnings": ["w"]});
        let mut whole = show_json(&sys);
        for (k, v) in extra.as_object().unwrap() {
            whole[k] = v.clone();
        }
        let mut out = Vec::new();
        write_show_json(&sys, extra, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("{whole}\n"), "{m}");
    }
}
