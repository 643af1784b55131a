//! pinrun's entry point: [`pinrun::app::main`] runs the request; this only
//! hands its exit status to the process (ARCHITECTURE.md §2: `main` only maps the
//! result to an exit code).

fn main() -> std::process::ExitCode {
    pinrun::app::main()
}
