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
use std::time::Instant;

type Action = Box<dyn FnOnce() + Send>;

/// Actions by deadline; the number tells apart two of the same instant.
#[derive(Default)]
struct Pending {
    actions: BTreeMap<(Instant, u64), Action>,
    next: u64,
}

/// The deadlines' thread and what waits on it.
pub struct Alarm {
    pending: Mutex<Pending>,
    changed: Condvar,
}

impl Alarm {
    /// Starts the thread; it lives as long as the process.
    pub fn start() -> Arc<Alarm> {
        let alarm = Arc::new(Alarm {
            pending: Mutex::new(Pending::default()),
            changed: Condvar::new(),
        });
        let ringing = Arc::clone(&alarm);
        std::thread::Builder::new()
            .name("edge-alarm".into())
            .spawn(move || loop {
                for action in ringing.next_due() {
                    action();
                }
            })
            .expect("cannot start the edge's alarm thread at startup");
        alarm
    }

    /// Runs `action` on the alarm's thread at `deadline` (at once if it has passed).
    pub fn at(&self, deadline: Instant, action: impl FnOnce() + Send + 'static) {
        let mut pending = self.pending.lock();
        let number = pending.next;
        pending.next += 1;
        pending.actions.insert((deadline, number), Box::new(action));
        let earliest = pending.actions.keys().next() == Some(&(deadline, number));
        drop(pending);
        if earliest {
            self.changed.notify_one();
        }
    }

    /// Sleeps until some actions are due and takes them out.
    fn next_due(&self) -> Vec<Action> {
        let mut pending = self.pending.lock();
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(entry) = pending.actions.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                due.push(entry.remove());
            }
            if !due.is_empty() {
                return due;
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
}
