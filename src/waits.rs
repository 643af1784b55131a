//! The bound of a wait that runs out on purpose in the tests.
//!
//! pinrun waits a fixed time for a few things it cannot be told about (a
//! process's change lock held by another pinrun, the state directory's
//! lock, irqbalance coming back after a restart) and then refuses or goes
//! on without, naming what it waited for. The tests that
//! check those refusals would each spend the whole wait; in a test build
//! (`debug_assertions`) they may ask for a tenth of it.

use std::time::Duration;

/// `limit`, or in a debug build run with `PINRUN_TEST_SHORT_WAITS=1` in
/// its environment a tenth of it (10 s: 1 s; 5 s: 500 ms), so that the
/// refusal a test checks comes after the shorter wait and names it.
/// Release builds never read the variable.
pub fn bound(limit: Duration) -> Duration {
    if cfg!(debug_assertions)
        && std::env::var_os("PINRUN_TEST_SHORT_WAITS").is_some_and(|v| v == "1")
    {
        limit / 10
    } else {
        limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_variable_the_bound_is_the_limit() {
        // The unit tests run without PINRUN_TEST_SHORT_WAITS.
        assert_eq!(bound(Duration::from_secs(5)), Duration::from_secs(5));
    }
}
