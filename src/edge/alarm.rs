//! The card budget's deadlines, kept by one thread of ours: at each page's deadline it runs what
//! the page asked for (telling it that no card came in time), to the microsecond the kernel
//! gives a sleeping thread.
//!
//! Not `may`'s timers: a coroutine parked with a time-out waits for whole milliseconds and parks
//! again when it wakes early (about twice the time), and a coroutine woken from may's io timer
//! handler can sit in its worker's queue until that worker's next timer, seconds later. A
//! wake-up sent from a thread outside the workers goes through may's global queue and wakes a
//! worker at once.

use parking_lot::{Condvar, Mutex};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

type Action = Box<dyn FnOnce() + Send>;

/// Actions by deadline; the number tells apart two of the same instant.
#[derive(Default)]
struct Pending {
    actions: BTreeMap<(Instant, u64), Action>,
    next: u64,
    /// The handle has been dropped: the thread returns, dropping what has not rung.
    stopping: bool,
}

/// What the handle and the thread share.
#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    changed: Condvar,
}

/// The deadlines' thread and what waits on it; dropping it stops the thread and waits for it.
pub struct Alarm {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Alarm {
    /// Starts the thread; it lives as long as this handle.
    pub fn start() -> Alarm {
        let shared = Arc::new(Shared::default());
        let ringing = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("edge-alarm".into())
            .spawn(move || {
                while let Some(due) = ringing.next_due() {
                    due.into_iter().for_each(|action| action());
                }
            })
            .expect("cannot start the edge's alarm thread at startup");
        Alarm {
            shared,
            thread: Some(thread),
        }
    }

    /// Runs `action` on the alarm's thread at `deadline` (at once if it has passed).
    pub fn at(&self, deadline: Instant, action: impl FnOnce() + Send + 'static) {
        let mut pending = self.shared.pending.lock();
        let number = pending.next;
        pending.next += 1;
        pending.actions.insert((deadline, number), Box::new(action));
        let earliest = pending.actions.keys().next() == Some(&(deadline, number));
        drop(pending);
        if earliest {
            self.shared.changed.notify_one();
        }
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        self.shared.pending.lock().stopping = true;
        self.shared.changed.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    /// Sleeps until some actions are due and takes them out; `None` once the handle is gone.
    fn next_due(&self) -> Option<Vec<Action>> {
        let mut pending = self.pending.lock();
        loop {
            if pending.stopping {
                return None;
            }
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(entry) = pending.actions.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                due.push(entry.remove());
            }
            if !due.is_empty() {
                return Some(due);
            }
            match pending.actions.keys().next() {
                Some(&(deadline, _)) => {
                    self.changed.wait_until(&mut pending, deadline);
                }
                None => self.changed.wait(&mut pending),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn actions_run_at_their_deadlines_in_order() {
        let alarm = Alarm::start();
        let (sender, rang) = mpsc::channel();
        let start = Instant::now();
        for (name, after) in [("b", 60), ("a", 20), ("c", 120)] {
            let sender = sender.clone();
            alarm.at(start + Duration::from_millis(after), move || {
                sender.send((name, Instant::now())).unwrap();
            });
        }
        let order: Vec<(&str, Instant)> = (0..3).map(|_| rang.recv().unwrap()).collect();
        let names: Vec<&str> = order.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["a", "b", "c"]);
        // Never early (how late depends on the machine's load: not asserted).
        for ((_, at), after) in order.iter().zip([20, 60, 120]) {
            assert!(*at >= start + Duration::from_millis(after));
        }
    }

    #[test]
    fn dropping_the_alarm_stops_its_thread_without_running_what_is_left() {
        let alarm = Alarm::start();
        let (sender, rang) = mpsc::channel::<()>();
        alarm.at(Instant::now() + Duration::from_secs(3600), move || {
            sender.send(()).unwrap();
        });
        // Returns once the thread has (a thread left waiting would hang the test here).
        drop(alarm);
        assert_eq!(
            rang.recv(),
            Err(mpsc::RecvError),
            "the action was dropped unrun"
        );
    }
}
