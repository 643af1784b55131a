//! pinrun's entry point: [`pinrun::app::main`] runs the request; this only
//! hands its exit status to the process (ARCHITECTURE.md §2: `main` only maps the
//! result to an exit code).
//!
//! `#![no_main]`: the C runtime calls this `main` directly, without the
//! Rust runtime's start (std's `rt::init`: reopening closed fds 0-2,
//! ignoring SIGPIPE, the main thread's stack-overflow guard read from
//! `/proc/self/maps` and its alternate signal stack). What pinrun relies on
//! of it, `pinrun::ffi`'s `.init_array` constructor does before `main` (BENCHMARKS.md "Round
//! 4: the quiet launch's fixed costs"). `std::process::exit` runs std's
//! cleanup (flushing stdout), as returning from a Rust `main` does.
#![cfg_attr(not(test), no_main)]

/// The system's allocator, ending pinrun with exit 125 and a message
/// where an allocation fails ([`pinrun::ffi::ExitOnOom`]; no state).
#[cfg(not(test))]
#[global_allocator]
static ALLOC: pinrun::ffi::ExitOnOom = pinrun::ffi::ExitOnOom;

/// The process's `main(argc, argv)`; std reads the arguments itself (glibc
/// passes them to its `.init_array` hook).
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    std::process::exit(i32::from(pinrun::app::main().code()))
}
