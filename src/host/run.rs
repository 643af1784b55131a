//! `--plan-host` (issue 38): read the host's facts, split it, and print
//! the settings that realise the split, or (`--check`) how the running
//! host differs from it.

use crate::error::{Error, Exit};
use crate::host::{check, plan, report};
use crate::output::print_out;
use crate::request::Request;
use crate::system::{Root, SystemState};

/// Runs `--plan-host`: exit 0, or with `--check` 1 when the host differs.
pub fn run(root: &Root, sys: &SystemState, req: &Request) -> Result<Exit, Error> {
    let Some(host) = &req.host else {
        return Ok(Exit::Failure);
    };
    let facts = crate::host::read::read(root, &sys.present);
    let split = plan::split(sys, &facts, host)?;
    plan::check_offline(&split, &facts)?;
    let params = plan::boot_params(sys, &facts, &split);
    if !host.verify {
        let warnings = plan::cmdline_warnings(sys, &params, &report::kernel_cmdline(&params));
        let text = if req.output.json {
            format!("{}\n", report::json(&split, &params, &facts, &warnings))
        } else {
            report::text(&split, &params, &facts, &warnings)
        };
        print_out(&text)?;
        return Ok(Exit::Success);
    }
    let differences = check::verify(sys, &facts, host, &split, &params);
    let mut split = split;
    split.unjudged.extend(check::unreadable(sys));
    let text = if req.output.json {
        format!("{}\n", report::verify_json(&split, &differences))
    } else if req.output.quiet {
        String::new()
    } else {
        report::verify_text(&split, &differences)
    };
    print_out(&text)?;
    // What could not be judged is not a match (never fail open).
    Ok(if differences.is_empty() && split.unjudged.is_empty() {
        Exit::Success
    } else {
        Exit::Findings
    })
}
