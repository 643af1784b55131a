//! `--plan-host` (issue 38): read the host's facts, split it, and print
//! the settings that realise the split, or (`--check`) how the running
//! host differs from it.

use crate::error::{Error, Exit};
use crate::output::print_out;
use crate::request::Request;
use crate::system::{Root, SystemState};
use crate::{check, plan, report};

/// Runs `--plan-host`: exit 0, or with `--check` 1 when the host differs.
pub fn run(root: &Root, sys: &SystemState, req: &Request) -> Result<Exit, Error> {
    let Some(host) = &req.host else {
        return Ok(Exit::Failure);
    };
    let facts = crate::system::host::read(root, &sys.present);
    let split = plan::host::split(sys, &facts, host)?;
    plan::host::check_offline(&split, &facts)?;
    let params = plan::host::boot_params(sys, &facts, &split);
    if !host.verify {
        let warnings =
            plan::host::cmdline_warnings(sys, &params, &report::host::kernel_cmdline(&params));
        let text = if req.output.json {
            format!(
                "{}\n",
                report::host::json(&split, &params, &facts, &warnings)
            )
        } else {
            report::host::text(&split, &params, &facts, &warnings)
        };
        print_out(&text)?;
        return Ok(Exit::Success);
    }
    let differences = check::host::verify(sys, &facts, host, &split, &params);
    let mut split = split;
    split.unjudged.extend(check::host::unreadable(sys));
    let text = if req.output.json {
        format!("{}\n", report::host::verify_json(&split, &differences))
    } else if req.output.quiet {
        String::new()
    } else {
        report::host::verify_text(&split, &differences)
    };
    print_out(&text)?;
    // What could not be judged is not a match (never fail open).
    Ok(if differences.is_empty() && split.unjudged.is_empty() {
        Exit::Success
    } else {
        Exit::Findings
    })
}
