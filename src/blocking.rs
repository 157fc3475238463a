//! A pool of OS threads for blocking work (database queries), so that a slow query never
//! stalls the coroutine workers that serve `/fragment`.
//!
//! A coroutine hands a job over a crossbeam channel and parks on a `may` channel until a pool
//! thread sends the result back; only that coroutine waits, its worker thread moves on.

use crossbeam::channel::{self, Sender, TrySendError};
use std::panic::{self, AssertUnwindSafe};
use std::thread;

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Debug, thiserror::Error)]
pub enum BlockingError {
    #[error("blocking pool queue is full")]
    Busy,
    #[error("blocking job panicked")]
    Panicked,
}

#[derive(Clone)]
pub struct BlockingPool {
    jobs: Sender<Job>,
}

impl BlockingPool {
    /// Starts `threads` workers behind a queue of `queue` waiting jobs.
    pub fn new(threads: usize, queue: usize) -> BlockingPool {
        let (jobs, incoming) = channel::bounded::<Job>(queue);
        for index in 0..threads {
            let incoming = incoming.clone();
            thread::Builder::new()
                .name(format!("blocking-{index}"))
                .spawn(move || {
                    for job in incoming {
                        job();
                    }
                })
                .expect("cannot start a blocking-pool thread at startup");
        }
        BlockingPool { jobs }
    }

    /// Runs `work` on a pool thread and waits for its result without blocking the caller's
    /// worker thread (when called from a coroutine). A panic in `work` is caught and reported.
    pub fn run<T, F>(&self, work: F) -> Result<T, BlockingError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (reply, result) = may::sync::mpsc::channel();
        let job: Job = Box::new(move || {
            let outcome = panic::catch_unwind(AssertUnwindSafe(work));
            let _ = reply.send(outcome);
        });
        match self.jobs.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(BlockingError::Busy),
            Err(TrySendError::Disconnected(_)) => return Err(BlockingError::Panicked),
        }
        match result.recv() {
            Ok(Ok(value)) => Ok(value),
            _ => Err(BlockingError::Panicked),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_panics_come_back() {
        let pool = BlockingPool::new(2, 8);
        assert_eq!(pool.run(|| 40 + 2).unwrap(), 42);
        let panicked = pool.run(|| -> u32 { panic!("boom") });
        assert!(matches!(panicked, Err(BlockingError::Panicked)));
        assert_eq!(pool.run(|| "still serving").unwrap(), "still serving");
    }
}
