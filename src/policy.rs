//! Scheduling policies (`sched(7)`): each [`Policy`] knows its kernel name
//! (SCHED_FIFO…), its short name, its kernel number and whether it is
//! real-time, so that adding a policy is one variant the compiler follows.

/// A scheduling policy (`sched(7)`). Priorities are 1–99; deadline
/// parameters are in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `SCHED_OTHER` (`SCHED_NORMAL`).
    Other,
    /// `SCHED_BATCH`.
    Batch,
    /// `SCHED_IDLE`.
    Idle,
    /// `SCHED_FIFO` with a static priority.
    Fifo(u32),
    /// `SCHED_RR` with a static priority.
    Rr(u32),
    /// `SCHED_DEADLINE` with runtime ≤ deadline ≤ period, in ns.
    Deadline {
        /// `sched_runtime`, ns.
        runtime: u64,
        /// `sched_deadline`, ns.
        deadline: u64,
        /// `sched_period`, ns.
        period: u64,
    },
}

impl Policy {
    /// `SCHED_OTHER`'s number (`include/uapi/linux/sched.h`).
    pub const SCHED_OTHER: u32 = 0;
    /// `SCHED_FIFO`'s number.
    pub const SCHED_FIFO: u32 = 1;
    /// `SCHED_RR`'s number.
    pub const SCHED_RR: u32 = 2;
    /// `SCHED_BATCH`'s number.
    pub const SCHED_BATCH: u32 = 3;
    /// `SCHED_IDLE`'s number.
    pub const SCHED_IDLE: u32 = 5;
    /// `SCHED_DEADLINE`'s number.
    pub const SCHED_DEADLINE: u32 = 6;

    /// The kernel's name, `SCHED_FIFO` (sched(7)).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo(_) => "SCHED_FIFO",
            Policy::Rr(_) => "SCHED_RR",
            Policy::Deadline { .. } => "SCHED_DEADLINE",
        }
    }

    /// The short name of the option and of `--json`'s `sched.policy`
    /// (`fifo`); see [`Policy::systemd_name`] for systemd's.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo(_) => "fifo",
            Policy::Rr(_) => "rr",
            Policy::Deadline { .. } => "deadline",
        }
    }

    /// The kernel's number for `sched_setattr(2)`'s `sched_policy`.
    pub fn number(self) -> u32 {
        match self {
            Policy::Other => Self::SCHED_OTHER,
            Policy::Batch => Self::SCHED_BATCH,
            Policy::Idle => Self::SCHED_IDLE,
            Policy::Fifo(_) => Self::SCHED_FIFO,
            Policy::Rr(_) => Self::SCHED_RR,
            Policy::Deadline { .. } => Self::SCHED_DEADLINE,
        }
    }

    /// The kernel's name of policy number `n` (`SCHED_DEADLINE` for 6), or
    /// `None` for a number sched(7) does not define.
    pub fn kernel_name_of(n: u32) -> Option<&'static str> {
        Some(match n {
            Self::SCHED_OTHER => "SCHED_OTHER",
            Self::SCHED_FIFO => "SCHED_FIFO",
            Self::SCHED_RR => "SCHED_RR",
            Self::SCHED_BATCH => "SCHED_BATCH",
            Self::SCHED_IDLE => "SCHED_IDLE",
            Self::SCHED_DEADLINE => "SCHED_DEADLINE",
            _ => return None,
        })
    }

    /// Whether it is a real-time policy with a static priority
    /// (`SCHED_FIFO`, `SCHED_RR`).
    pub fn is_rt(self) -> bool {
        self.rt_priority().is_some()
    }

    /// Whether the kernel's policy number `n` (`/proc/<pid>/stat` field 41,
    /// `sched_getscheduler(2)`) is a real-time one.
    pub fn is_rt_number(n: i64) -> bool {
        n == i64::from(Self::SCHED_FIFO) || n == i64::from(Self::SCHED_RR)
    }

    /// Whether it is `SCHED_DEADLINE`.
    pub fn is_deadline(self) -> bool {
        matches!(self, Policy::Deadline { .. })
    }

    /// Whether the nice value has no effect under it (real-time and deadline).
    pub fn ignores_nice(self) -> bool {
        self.is_rt() || self.is_deadline()
    }

    /// The static priority (1–99) of a real-time policy.
    pub fn rt_priority(self) -> Option<u32> {
        match self {
            Policy::Fifo(p) | Policy::Rr(p) => Some(p),
            Policy::Other | Policy::Batch | Policy::Idle | Policy::Deadline { .. } => None,
        }
    }

    /// systemd's `CPUSchedulingPolicy=` value (systemd.exec(5): `other`,
    /// `batch`, `idle`, `fifo`, `rr`), or `None` for a policy systemd
    /// cannot set (`SCHED_DEADLINE`): `--emit systemd` then keeps pinrun as
    /// the `ExecStart=` prefix.
    pub fn systemd_name(self) -> Option<&'static str> {
        match self {
            Policy::Other | Policy::Batch | Policy::Idle | Policy::Fifo(_) | Policy::Rr(_) => {
                Some(self.name())
            }
            Policy::Deadline { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_knows_its_names_number_and_kind() {
        let dl = Policy::Deadline {
            runtime: 1,
            deadline: 2,
            period: 3,
        };
        let all = [
            (Policy::Other, "SCHED_OTHER", "other", 0, false),
            (Policy::Batch, "SCHED_BATCH", "batch", 3, false),
            (Policy::Idle, "SCHED_IDLE", "idle", 5, false),
            (Policy::Fifo(10), "SCHED_FIFO", "fifo", 1, true),
            (Policy::Rr(98), "SCHED_RR", "rr", 2, true),
            (dl, "SCHED_DEADLINE", "deadline", 6, false),
        ];
        for (p, kernel, short, number, rt) in all {
            assert_eq!(
                (p.kernel_name(), p.name(), p.number(), p.is_rt()),
                (kernel, short, number, rt)
            );
            assert_eq!(Policy::is_rt_number(i64::from(p.number())), rt);
            assert_eq!(Policy::kernel_name_of(p.number()), Some(kernel));
            assert_eq!(p.ignores_nice(), rt || p.is_deadline());
        }
        assert_eq!(Policy::Rr(98).rt_priority(), Some(98));
        assert_eq!(dl.rt_priority(), None);
        assert_eq!(Policy::kernel_name_of(4), None);
    }
}
