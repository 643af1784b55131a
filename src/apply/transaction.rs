//! A launch as one transaction (issue 32): every change a launch makes
//! (the claim record, the helper, the IRQ steering, pinrun's own memory
//! policy, scheduling policy and affinity) is a step whose undo is
//! registered before the change is made. A failure anywhere, or a
//! [`Transaction`] dropped without [`Transaction::commit`], undoes what
//! was done, the last change first; the failure's error then says what
//! was put back and what could not be. What can outlive pinrun (the IRQ
//! steering) is also undone by the helper armed before the first change,
//! should pinrun die at any point ([`crate::apply::helper`]).

use crate::error::{Error, Result};

/// How the undo of one step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undone {
    /// Put back (or nothing to put back), and nothing to say: a change no
    /// one else saw (a claim record under the state directory's lock,
    /// pinrun's own attributes, which end with it).
    Quiet,
    /// Put back: the error says "STEP was put back".
    PutBack,
    /// Put back, with a detail the error adds in parentheses (an IRQ left
    /// alone because someone changed it since).
    PutBackWith(String),
    /// Not (all) put back: why, which the error says.
    Failed(String),
}

/// One registered step: what it changes (a noun phrase: "the IRQ
/// steering off CPU 3"), and its undo.
struct Change<'a> {
    what: String,
    undo: Box<dyn FnOnce() -> Undone + 'a>,
}

/// The steps of a launch made so far, each with its undo, in order. Run
/// in reverse on a failure ([`Transaction::step`], [`Transaction::run`])
/// or when dropped without [`Transaction::commit`] (pinrun returning
/// early by any path). The undos may borrow what lives longer than the
/// transaction (`'a`).
#[derive(Default)]
pub struct Transaction<'a> {
    steps: Vec<Change<'a>>,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let steps: Vec<&str> = self.steps.iter().map(|s| s.what.as_str()).collect();
        f.debug_struct("Transaction")
            .field("steps", &steps)
            .finish()
    }
}

impl<'a> Transaction<'a> {
    /// An empty transaction: nothing made, nothing to undo.
    pub fn new() -> Self {
        Self::default()
    }

    /// One step: registers `undo` for the change `what` (a noun phrase,
    /// for the error), then makes it with `make`. When `make` fails, the
    /// earlier steps are undone, the last first ([`Transaction::rollback`]),
    /// and its error is returned with what was put back; `make` itself
    /// must leave nothing of its own changed on `Err` (or say in its error
    /// what it left: the steering puts back its own writes), so its own
    /// undo is not run.
    pub fn step<T>(
        &mut self,
        what: impl Into<String>,
        undo: impl FnOnce() -> Undone + 'a,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        self.steps.push(Change {
            what: what.into(),
            undo: Box::new(undo),
        });
        make().map_err(|e| {
            self.steps.pop();
            self.fail(e)
        })
    }

    /// An action between steps that changes nothing (`--probe`, handing
    /// descriptors to the helper): when it fails, every step made is
    /// undone as for a failed [`Transaction::step`].
    pub fn run<T>(&mut self, make: impl FnOnce() -> Result<T>) -> Result<T> {
        make().map_err(|e| self.fail(e))
    }

    /// Undoes every step made (the last first) and returns `e` with what
    /// was put back and what could not be ([`with_undo`]).
    pub fn fail(&mut self, e: Error) -> Error {
        with_undo(e, &self.rollback())
    }

    /// Undoes every step made so far, the last first, each undo run even
    /// when an earlier one failed. Returns each step's name and how its
    /// undo ended, in the order they ran. The transaction is then empty.
    pub fn rollback(&mut self) -> Vec<(String, Undone)> {
        let mut out = Vec::new();
        while let Some(c) = self.steps.pop() {
            out.push((c.what, (c.undo)()));
        }
        out
    }

    /// The launch goes ahead: the undos are dropped unrun (exec follows;
    /// what outlives pinrun is the helper's from now on).
    pub fn commit(mut self) {
        self.steps.clear();
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        let _ = self.rollback();
    }
}

/// `e` with what a rollback did (`undone`, as [`Transaction::rollback`]
/// returns it): "; STEP was put back" for each step put back (with its
/// detail), "; STEP could not be put back: WHY" for each that failed, in
/// the order they ran; quiet steps say nothing. When one could not be
/// put back, the error's own "; nothing was changed" is no longer true
/// and is dropped.
pub fn with_undo(mut e: Error, undone: &[(String, Undone)]) -> Error {
    let mut clauses = Vec::new();
    let mut failed = false;
    for (what, how) in undone {
        match how {
            Undone::Quiet => {}
            Undone::PutBack => clauses.push(format!("{what} was put back")),
            Undone::PutBackWith(d) => clauses.push(format!("{what} was put back ({d})")),
            Undone::Failed(why) => {
                failed = true;
                clauses.push(format!("{what} could not be put back: {why}"));
            }
        }
    }
    if failed {
        e.message = e.message.replace("; nothing was changed", "");
    }
    for c in clauses {
        e.message = format!("{}; {c}", e.message);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use std::cell::RefCell;

    fn err(m: &str) -> Error {
        Error::new(ErrorCode::SchedFailed, m)
    }

    /// Runs steps 0..n with step `fails` failing (none: all made, then
    /// `end`); returns the log of makes and undos, and the error.
    fn run(n: usize, fails: Option<usize>, commit: bool) -> (Vec<String>, Option<Error>) {
        let log = RefCell::new(Vec::new());
        let mut e = None;
        {
            let mut tx = Transaction::new();
            for i in 0..n {
                let log = &log;
                let r = tx.step(
                    format!("step {i}"),
                    move || {
                        log.borrow_mut().push(format!("undo {i}"));
                        Undone::Quiet
                    },
                    || {
                        if fails == Some(i) {
                            return Err(err(&format!("step {i} failed")));
                        }
                        log.borrow_mut().push(format!("make {i}"));
                        Ok(())
                    },
                );
                if let Err(x) = r {
                    e = Some(x);
                    break;
                }
            }
            if commit && e.is_none() {
                tx.commit();
            }
        }
        (log.into_inner(), e)
    }

    #[test]
    fn a_failure_at_each_step_undoes_exactly_the_earlier_steps_in_reverse() {
        for k in 0..4 {
            let (log, e) = run(4, Some(k), true);
            let mut want: Vec<String> = (0..k).map(|i| format!("make {i}")).collect();
            want.extend((0..k).rev().map(|i| format!("undo {i}")));
            assert_eq!(log, want, "failing at step {k}");
            // Quiet undos add nothing to the message.
            assert_eq!(e.unwrap().message, format!("step {k} failed"));
        }
    }

    #[test]
    fn a_commit_undoes_nothing_and_a_drop_without_it_undoes_all() {
        let (log, e) = run(3, None, true);
        assert!(e.is_none());
        assert_eq!(log, ["make 0", "make 1", "make 2"]);
        let (log, _) = run(3, None, false);
        assert_eq!(
            log,
            ["make 0", "make 1", "make 2", "undo 2", "undo 1", "undo 0"]
        );
    }

    #[test]
    fn a_failed_action_between_steps_undoes_the_steps_made() {
        let log = RefCell::new(Vec::<u32>::new());
        let mut tx = Transaction::new();
        tx.step(
            "the claim",
            || {
                log.borrow_mut().push(0);
                Undone::Quiet
            },
            || Ok(()),
        )
        .unwrap();
        let e = tx
            .run(|| -> Result<()> { Err(err("probe gated")) })
            .unwrap_err();
        assert_eq!(e.message, "probe gated");
        assert_eq!(*log.borrow(), [0]);
        // Nothing left to undo at the drop.
        drop(tx);
        assert_eq!(*log.borrow(), [0]);
    }

    #[test]
    fn the_error_says_what_was_put_back_and_what_could_not_be() {
        let mut tx = Transaction::new();
        tx.step("the claim record", || Undone::Quiet, || Ok(()))
            .unwrap();
        tx.step("the IRQ steering off CPU 3", || Undone::PutBack, || Ok(()))
            .unwrap();
        let e = tx
            .step(
                "pinrun's scheduling policy",
                || Undone::Quiet,
                || -> Result<()> { Err(err("sched_setattr(SCHED_FIFO priority 99): EPERM")) },
            )
            .unwrap_err();
        assert_eq!(
            e.message,
            "sched_setattr(SCHED_FIFO priority 99): EPERM; the IRQ steering off CPU 3 was put back"
        );
        let mut tx = Transaction::new();
        tx.step(
            "the IRQ steering off CPUs 2-3",
            || Undone::Failed("IRQ 24: Input/output error".into()),
            || Ok(()),
        )
        .unwrap();
        tx.step(
            "irqbalance's ban",
            || Undone::PutBackWith("IRQ 30 changed since, left alone".into()),
            || Ok(()),
        )
        .unwrap();
        let e = tx
            .run(|| -> Result<()> { Err(err("cannot start the helper; nothing was changed")) })
            .unwrap_err();
        assert_eq!(
            e.message,
            "cannot start the helper; irqbalance's ban was put back (IRQ 30 changed since, left alone); the IRQ steering off CPUs 2-3 could not be put back: IRQ 24: Input/output error"
        );
    }
}
