//! Counting on the request path without a write another core reads: each worker thread adds
//! to a slot of its own, and a scrape sums the slots.
//!
//! Why not one atomic per counter: an atomic add that both worker threads make moves its cache
//! line from core to core on every request, which is what the fragment cache and the report
//! take care to avoid. A slot's counters are written by its thread only, so an add is a plain
//! load and store (`Relaxed`); a scrape may read a count one request old, never a torn one.
//!
//! Threads get an index at their first count, in order. The first `threads` indexes (the
//! coroutine workers, in practice) have a slot each; a thread past them shares the last slot,
//! where adds are atomic read-modify-writes, so that no count is ever lost, only made slower.

use crossbeam::utils::CachePadded;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Indexes handed out so far, to threads in the order of their first count.
static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's index, the same in every `PerThread` of the process.
    static THREAD: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
}

/// A counter in a slot; only [`Slot`] adds to it.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    pub const fn new() -> Counter {
        Counter(AtomicU64::new(0))
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The upper bounds of a histogram's buckets, in nanoseconds, ascending, fewer than
/// [`MAX_BUCKETS`]: each histogram chooses the ones its durations need.
pub trait Bounds: 'static {
    const NANOS: &'static [u64];
}

/// The bounds of the service's answers: from the `/fragment` answers (tens of microseconds)
/// to a management write waiting on a slow database (seconds).
#[derive(Debug)]
pub struct RequestBounds;

impl Bounds for RequestBounds {
    const NANOS: &'static [u64] = &[
        50_000,
        100_000,
        250_000,
        500_000,
        1_000_000,
        2_500_000,
        5_000_000,
        10_000_000,
        25_000_000,
        50_000_000,
        100_000_000,
        250_000_000,
        500_000_000,
        1_000_000_000,
        2_500_000_000,
        5_000_000_000,
        10_000_000_000,
    ];
}

/// Buckets a histogram holds room for: one per bound and one past them all. A fixed array,
/// so that a slot's histogram stays inside the slot's own cache lines.
pub const MAX_BUCKETS: usize = 18;

/// Durations counted per bucket (the one after the last bound past every bound), and their
/// sum.
#[derive(Debug)]
pub struct Histogram<B: Bounds = RequestBounds> {
    buckets: [Counter; MAX_BUCKETS],
    sum_nanos: Counter,
    bounds: PhantomData<B>,
}

impl<B: Bounds> Default for Histogram<B> {
    fn default() -> Self {
        const { assert!(B::NANOS.len() < MAX_BUCKETS) };
        Histogram {
            buckets: [const { Counter::new() }; MAX_BUCKETS],
            sum_nanos: Counter::new(),
            bounds: PhantomData,
        }
    }
}

/// A histogram summed over the slots: each bucket's own count (not cumulative), with its upper
/// bound in seconds (infinite for the last), and the sum of the durations in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramReading {
    pub buckets: Vec<(f64, u64)>,
    pub sum_seconds: f64,
}

impl HistogramReading {
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|(_, n)| n).sum()
    }
}

/// One set of counters `T` per worker thread, and one shared by any further thread.
pub struct PerThread<T> {
    slots: Box<[CachePadded<T>]>,
}

impl<T: Default> PerThread<T> {
    /// Slots for `threads` threads of their own, and the shared one.
    pub fn new(threads: usize) -> PerThread<T> {
        PerThread {
            slots: (0..=threads)
                .map(|_| CachePadded::new(T::default()))
                .collect(),
        }
    }
}

impl<T> PerThread<T> {
    /// The calling thread's slot. Not to be kept across a point where a coroutine may yield
    /// (it may resume on another thread).
    pub fn slot(&self) -> Slot<'_, T> {
        let shared = self.slots.len() - 1;
        let index = THREAD.with(|thread| *thread);
        Slot {
            counters: &self.slots[index.min(shared)],
            own: index < shared,
        }
    }

    /// The sum over every slot of the counter `pick` chooses.
    pub fn sum(&self, pick: impl Fn(&T) -> &Counter) -> u64 {
        self.slots.iter().map(|slot| pick(slot).get()).sum()
    }

    /// The sum over every slot of the histogram `pick` chooses.
    pub fn histogram<B: Bounds>(&self, pick: impl Fn(&T) -> &Histogram<B>) -> HistogramReading {
        let bounds = B::NANOS
            .iter()
            .map(|&nanos| nanos as f64 / 1e9)
            .chain([f64::INFINITY]);
        let buckets = bounds
            .enumerate()
            .map(|(i, bound)| (bound, self.sum(|slot| &pick(slot).buckets[i])))
            .collect();
        let sum_nanos = self.sum(|slot| &pick(slot).sum_nanos);
        HistogramReading {
            buckets,
            sum_seconds: sum_nanos as f64 / 1e9,
        }
    }
}

/// A thread's access to its slot.
pub struct Slot<'a, T> {
    counters: &'a T,
    /// The thread's own slot (plain stores), or the shared one (atomic adds).
    own: bool,
}

impl<'a, T> Slot<'a, T> {
    /// Adds `n` to the counter `pick` chooses.
    pub fn add(&self, pick: impl FnOnce(&'a T) -> &'a Counter, n: u64) {
        self.add_to(pick(self.counters), n);
    }

    /// Counts `duration` in the histogram `pick` chooses.
    pub fn observe<B: Bounds>(
        &self,
        pick: impl FnOnce(&'a T) -> &'a Histogram<B>,
        duration: Duration,
    ) {
        let histogram = pick(self.counters);
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        let bucket = B::NANOS.partition_point(|&bound| bound < nanos);
        self.add_to(&histogram.buckets[bucket], 1);
        self.add_to(&histogram.sum_nanos, nanos);
    }

    fn add_to(&self, counter: &Counter, n: u64) {
        if self.own {
            let value = counter.0.load(Ordering::Relaxed);
            counter.0.store(value.wrapping_add(n), Ordering::Relaxed);
        } else {
            counter.0.fetch_add(n, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Default)]
    struct Counts {
        requests: Counter,
        durations: Histogram,
    }

    #[test]
    fn threads_past_their_own_slots_share_one_and_lose_no_count() {
        // One slot of its own for the whole test binary: most of these threads share.
        let counts = Arc::new(PerThread::<Counts>::new(1));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let counts = Arc::clone(&counts);
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        counts.slot().add(|c| &c.requests, 1);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(counts.sum(|c| &c.requests), 40_000);
    }

    #[test]
    fn durations_fall_in_the_first_bucket_whose_bound_they_do_not_pass() {
        let counts = PerThread::<Counts>::new(2);
        for micros in [10, 50, 51, 3_000, 20_000_000] {
            counts
                .slot()
                .observe(|c| &c.durations, Duration::from_micros(micros));
        }
        let reading = counts.histogram(|c| &c.durations);
        let filled: Vec<(f64, u64)> = reading
            .buckets
            .iter()
            .copied()
            .filter(|(_, n)| *n > 0)
            .collect();
        assert_eq!(
            filled,
            [(0.00005, 2), (0.0001, 1), (0.005, 1), (f64::INFINITY, 1)]
        );
        assert_eq!(reading.count(), 5);
        assert!((reading.sum_seconds - 20.003111).abs() < 1e-9);
    }
}
