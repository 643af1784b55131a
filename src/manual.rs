//! Hand-written sections of pinrun(1), appended by `--generate man` to the
//! synopsis and options clap_mangen generates from the clap definition.
//! The text is raw roff (man(7) macros) in `man/*.roff`, read at build
//! time (`include_str!`, as ripgrep reads its man template); `man/pinrun.1`
//! is the generated page (`pinrun --generate man`).

/// The sections after OPTIONS up to CHECKS' introduction, in
/// man-pages(7) order; [`sections`] adds the list of codes and the rest.
pub const SECTIONS_BEFORE_CODES: &str = include_str!("../man/sections-before-codes.roff");

/// The sections after the list of finding codes, from SYSTEMD on.
pub const SECTIONS_AFTER_CHECKS: &str = include_str!("../man/sections-after-checks.roff");

/// pinrun(1)'s PROBE section (`--probe`, issue 20).
pub const PROBE_SECTION: &str = include_str!("../man/probe.roff");

/// pinrun(1)'s PREPARE THE HOST section (`--plan-host`, issue 38).
pub const HOST_SECTION: &str = include_str!("../man/host.roff");

/// Every hand-written section: [`SECTIONS_BEFORE_CODES`], the finding
/// codes ([`crate::finding::Code::man_list`]), [`PROBE_SECTION`], [`HOST_SECTION`],
/// [`SECTIONS_AFTER_CHECKS`].
pub fn sections() -> String {
    format!(
        "{SECTIONS_BEFORE_CODES}{}{PROBE_SECTION}{HOST_SECTION}{SECTIONS_AFTER_CHECKS}",
        crate::finding::Code::man_list()
    )
}
