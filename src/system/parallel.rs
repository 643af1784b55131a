//! Reading many small files on several threads (issue 17): a machine with
//! thousands of IRQs has thousands of `/proc/irq/N` and `/sys/kernel/irq/N`
//! files, each an open + read + close of some microseconds, independent of
//! each other. [`map`] spreads such reads over scoped threads on the CPUs
//! this process may run on (`sched_getaffinity(2)`), all joined before it
//! returns, so nothing runs beside the launch's `execve(2)` and the result
//! is the sequential one, in order. What tests impose (a thread count,
//! the helper of [`ahead`] on or off) is carried by the [`Root`] read
//! ([`Root::with_threads`], [`Root::overlapping`]): no global state.

use super::Root;

/// Items per thread below which a thread is not worth its start (about
/// 30–60 µs to create and join; one small procfs/sysfs file costs 5–8 µs).
pub const MIN_ITEMS_PER_THREAD: usize = 256;

/// The most threads [`map`] starts, the caller's included.
pub const MAX_THREADS: usize = 16;

/// How many CPUs this process may run on (`sched_getaffinity(2)` of the
/// calling thread, up to 8192 CPUs); 1 when the kernel does not say.
pub fn allowed_cpus() -> usize {
    crate::ffi::sched_getaffinity(1024)
        .map(|mask| mask.iter().map(|b| b.count_ones() as usize).sum())
        .unwrap_or(1)
        .max(1)
}

/// How many threads [`map`] uses for `items` items on `cpus` allowed CPUs:
/// one per [`MIN_ITEMS_PER_THREAD`] items, at most one per CPU and
/// [`MAX_THREADS`], at least 1.
pub fn threads_for(items: usize, cpus: usize) -> usize {
    (items / MIN_ITEMS_PER_THREAD)
        .min(cpus)
        .clamp(1, MAX_THREADS)
}

/// `items.iter().map(f).collect()`, for reads through `root` (and its
/// [`super::root::Dir`]s), computed on up to
/// [`threads_for`]`(items.len(), `[`allowed_cpus`]`())` threads (the
/// caller's included; see `map_in_blocks` for how the work is shared), or on
/// the count `root` imposes ([`Root::with_threads`], blocks of one item).
/// Fewer than `2 × MIN_ITEMS_PER_THREAD` items are mapped on the caller's
/// thread without asking the kernel anything. A thread that cannot be
/// started (`EAGAIN` under `RLIMIT_NPROC`) leaves its share to the others;
/// nothing panics. Every thread has ended when this returns.
///
/// A file over budget ([`Root::over_budget`]) met by the threads, when
/// `root` had none before, may not be the one a read on one thread meets
/// first: the record is cleared and the items mapped again on the
/// caller's thread, in order (an error path: the read is refused anyway).
pub fn map<T: Sync, R: Send>(root: &Root, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let (threads, block) = match root.threads() {
        Some(n) => (n, 1),
        None if items.len() < 2 * MIN_ITEMS_PER_THREAD => (1, BLOCK),
        None => (threads_for(items.len(), allowed_cpus()), BLOCK),
    };
    if threads <= 1 || items.len() < 2 {
        return items.iter().map(f).collect();
    }
    let clean = root.over_budget().is_none();
    let out = map_in_blocks(items, threads, block, &f);
    if clean && root.over_budget().is_some() {
        root.clear_over_budget();
        return items.iter().map(f).collect();
    }
    out
}

/// Items in a block of [`map`]: what a thread takes at a time. Small
/// enough that threads slowed by something else (another task on their
/// CPU, a slower file) end within a block's time of each other; large
/// enough that taking one (an atomic add) is nothing beside its reads
/// (32 small sysfs files: some 100 µs).
pub const BLOCK: usize = 32;

/// [`map`] on exactly `threads` threads (at least 1; the caller's and
/// `threads - 1` scoped ones), with blocks of `block` items (at least 1).
///
/// The items are cut into blocks, which the threads take in
/// turn from a shared counter until none is left (the caller starts
/// before the others have): a thread that is slowed takes fewer blocks,
/// where a fixed share per thread left the others waiting for it at the
/// end (issue 17: on 2 CPUs the dump check's helper thread ran its half
/// several ms after the caller had ended its own). Each block's results
/// are put back at its place, so the result is the sequential map's,
/// whatever thread mapped what.
fn map_in_blocks<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    block: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    if threads <= 1 || items.len() < 2 {
        return items.iter().map(&f).collect();
    }
    let block = block.max(1);
    let blocks: Vec<&[T]> = items.chunks(block).collect();
    let next = AtomicUsize::new(0);
    // Blocks taken in turn: (index, results) of each block this thread
    // mapped.
    let work = || {
        let mut done: Vec<(usize, Vec<R>)> = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(items) = blocks.get(i) else {
                return done;
            };
            done.push((i, items.iter().map(&f).collect()));
        }
    };
    let work = &work;
    let mut slots: Vec<Option<Vec<R>>> =
        std::iter::repeat_with(|| None).take(blocks.len()).collect();
    std::thread::scope(|s| {
        // At most one thread per block beside the caller's.
        let handles: Vec<_> = (1..threads.min(blocks.len()))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let mut place = |done: Vec<(usize, Vec<R>)>| {
            for (i, r) in done {
                slots[i] = Some(r);
            }
        };
        place(work());
        for h in handles {
            // A panic in `f` (none is expected: readers return None) is
            // re-raised here rather than lost.
            place(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
    });
    // Every block was taken by one thread, which returned its results.
    slots.into_iter().flatten().flatten().collect()
}

/// A read started on one helper thread by [`ahead`]: [`Ahead::join`]
/// waits for its result. Dropped without being joined (the caller returned
/// early with an error), it is joined by the drop: the helper never
/// outlives its owner, so nothing runs beside what follows.
#[derive(Debug)]
pub struct Ahead<T> {
    handle: Option<std::thread::JoinHandle<T>>,
}

impl<T> Ahead<T> {
    /// The helper's result, once it has ended (its thread joined). A panic
    /// on the helper (none is expected: readers return `None`) is re-raised
    /// here rather than lost.
    #[inline(never)]
    pub fn join(mut self) -> T {
        match self.handle.take().map(std::thread::JoinHandle::join) {
            Some(Ok(out)) => out,
            Some(Err(e)) => std::panic::resume_unwind(e),
            // `handle` is only taken here and by the drop.
            None => unreachable!("an Ahead is joined once"),
        }
    }
}

impl<T> Drop for Ahead<T> {
    #[inline(never)]
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// How many tasks are runnable on the machine now, this thread included
/// (`nr_running`, the numerator of the fourth field of `/proc/loadavg`,
/// proc(5)); `None` when it cannot be read.
fn runnable_tasks() -> Option<usize> {
    use std::io::Read;
    // One read: the line is under 100 bytes (three loads, two counts, a pid).
    let mut buf = [0u8; 128];
    let n = std::fs::File::open("/proc/loadavg")
        .ok()?
        .read(&mut buf)
        .ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    text.split_whitespace()
        .nth(3)?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// Starts `f` on one helper thread, to run while the caller reads
/// something else, when this process may run on at least 2 CPUs
/// ([`allowed_cpus`]) and fewer tasks are runnable than that (this one
/// included: another allowed CPU is idle now); `None` otherwise, or when
/// the thread cannot be started (`EAGAIN` under `RLIMIT_NPROC`): the
/// caller then does the read itself, on its own thread, as before. On one
/// CPU the helper would only take turns with the caller; with every CPU
/// busy the scheduler queues it behind another task (no wake-up
/// preemption of a running task for a new thread), and the caller, which
/// needs its result, waits for that task's slice: measured here, a full
/// launch 1.5× slower under load without this test (BENCHMARKS.md,
/// round 4). The helper only reads: whatever is applied to this process
/// (affinity, memory policy, scheduling: per thread) must wait until it is
/// joined. `forced` is what a test imposes instead ([`Root::ahead`]).
#[inline(never)]
pub fn ahead<T: Send + 'static>(
    forced: Option<bool>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<Ahead<T>> {
    if !forced.unwrap_or_else(|| {
        let cpus = allowed_cpus();
        cpus >= 2 && runnable_tasks().is_some_and(|n| n < cpus)
    }) {
        return None;
    }
    let handle = std::thread::Builder::new().spawn(f).ok()?;
    Some(Ahead {
        handle: Some(handle),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_result_in_order_on_any_thread_count() {
        let items: Vec<u32> = (0..1000).collect();
        let seq: Vec<u64> = items.iter().map(|&i| u64::from(i) * 3).collect();
        for threads in [1, 2, 3, 7, 16, 1000, 5000] {
            assert_eq!(
                map_in_blocks(&items, threads, BLOCK, |&i| u64::from(i) * 3),
                seq,
                "{threads}"
            );
        }
        let root = Root::new("/");
        assert_eq!(map(&root, &items, |&i| u64::from(i) * 3), seq);
        let forced = root.with_threads(7);
        assert_eq!(map(&forced, &items, |&i| u64::from(i) * 3), seq);
        assert!(map_in_blocks(&[] as &[u32], 4, BLOCK, |&i| i).is_empty());
    }

    /// Blocks of any size, on any thread count, give the sequential map.
    #[test]
    fn same_result_in_any_blocks() {
        let items: Vec<u32> = (0..300).collect();
        let seq: Vec<u32> = items.iter().map(|&i| i ^ 0x55).collect();
        for block in [1, 2, 31, 32, 33, 299, 300, 301] {
            for threads in [2, 3, 16] {
                let got = map_in_blocks(&items, threads, block, |&i| i ^ 0x55);
                assert_eq!(got, seq, "block {block}, {threads} threads");
            }
        }
    }

    /// A thread held up on its first block does not hold up the others:
    /// they take every other block meanwhile. With a fixed share per
    /// thread (the map before issue 17's round 5) the caller ended its
    /// half and then waited, and the held thread's wait below ran into
    /// its 10 s limit.
    #[test]
    fn a_slowed_thread_leaves_its_share_to_the_others() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::time::{Duration, Instant};
        let n = BLOCK * 8;
        let items: Vec<usize> = (0..n).collect();
        let caller = std::thread::current().id();
        let mapped = AtomicUsize::new(0);
        let by_caller = AtomicUsize::new(0);
        let start = Instant::now();
        let out = map_in_blocks(&items, 2, BLOCK, |&i| {
            if std::thread::current().id() == caller {
                by_caller.fetch_add(1, Ordering::SeqCst);
            } else {
                // Held until every block but this thread's one is mapped.
                while mapped.load(Ordering::SeqCst) < n - BLOCK
                    && start.elapsed() < Duration::from_secs(10)
                {
                    std::thread::yield_now();
                }
            }
            mapped.fetch_add(1, Ordering::SeqCst);
            i * 2
        });
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert!(by_caller.load(Ordering::SeqCst) >= n - BLOCK);
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn ahead_runs_on_another_thread_and_is_joined() {
        let me = std::thread::current().id();
        let a = ahead(Some(true), move || std::thread::current().id() != me);
        assert!(a.expect("forced on").join());
        assert!(ahead(Some(false), || 1).is_none());
        // Dropped unjoined: the drop waits for the helper to end.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        drop(ahead(Some(true), move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }));
        assert!(done.load(std::sync::atomic::Ordering::SeqCst));
        // The thread count imposed on a root's maps holds on the helper,
        // which reads through a clone of it.
        let root = Root::new("/").with_threads(3).overlapping(true);
        let helper = root.clone();
        let forced = ahead(root.ahead(), move || helper.threads());
        assert_eq!(forced.expect("forced on").join(), Some(3));
        assert!(runnable_tasks().is_some_and(|n| n >= 1));
    }

    #[test]
    fn thread_counts() {
        assert_eq!(threads_for(10, 64), 1);
        assert_eq!(threads_for(10_000, 2), 2);
        assert_eq!(threads_for(10_000, 1), 1);
        assert_eq!(threads_for(10_000, 4096), MAX_THREADS);
        assert_eq!(threads_for(600, 64), 2);
        assert!(allowed_cpus() >= 1);
    }
}
