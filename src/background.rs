//! Threads of ours beside the service (the fragment cache's refresher, the report's flusher,
//! the token-use writer, the pool's probe), each stopped through its handle, the way mini-redis
//! stops its tasks: the handle holds the sending side of a channel nothing is ever sent on.
//! Dropping the handle, or [`Background::stop`], disconnects it, which ends whatever wait the
//! thread is in ([`Stop`]), and then waits until the thread has returned.

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use parking_lot::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running thread of ours; it ends when this is dropped or stopped.
pub struct Background {
    stop: Mutex<Option<Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The thread's side: its waits end when the stop comes.
pub struct Stop(Receiver<()>);

/// What ended a wait for a message.
pub enum Woken<T> {
    Message(T),
    /// The period passed without one.
    Period,
    /// The stop came, or every sender of the messages has gone.
    Stop,
}

impl Background {
    /// Starts `work` on a thread named `name`; it is to return soon after its [`Stop`] says so.
    pub fn spawn(name: &str, work: impl FnOnce(Stop) + Send + 'static) -> Background {
        let (stop, stopped) = channel::bounded(0);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || work(Stop(stopped)))
            .unwrap_or_else(|error| panic!("cannot start the {name} thread at startup: {error}"));
        Background {
            stop: Mutex::new(Some(stop)),
            thread: Mutex::new(Some(thread)),
        }
    }

    /// Tells the thread to stop and waits until it has; returns at once when it has already.
    pub fn stop(&self) {
        drop(self.stop.lock().take());
        let Some(thread) = self.thread.lock().take() else {
            return;
        };
        // Dropped on its own thread (which held the last reference to what owns the handle),
        // the thread cannot wait for itself: it is returning anyway.
        if thread.thread().id() != std::thread::current().id() {
            let _ = thread.join();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Stop {
    /// Whether the stop has come.
    pub fn has_come(&self) -> bool {
        matches!(self.0.try_recv(), Err(TryRecvError::Disconnected))
    }

    /// Waits `period`, less when the stop comes first: `true` when it has.
    pub fn wait(&self, period: Duration) -> bool {
        matches!(
            self.0.recv_timeout(period),
            Err(RecvTimeoutError::Disconnected)
        )
    }

    /// The next of `messages`, or `None` once the stop has come or every sender has gone.
    pub fn next<T>(&self, messages: &Receiver<T>) -> Option<T> {
        channel::select! {
            recv(messages) -> message => message.ok(),
            recv(self.0) -> _ => None,
        }
    }

    /// The next of `messages` within `period`.
    pub fn next_within<T>(&self, messages: &Receiver<T>, period: Duration) -> Woken<T> {
        channel::select! {
            recv(messages) -> message => message.map_or(Woken::Stop, Woken::Message),
            recv(self.0) -> _ => Woken::Stop,
            default(period) => Woken::Period,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn dropping_the_handle_ends_every_wait_and_joins_the_thread() {
        let ended = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&ended);
        let (silent, nothing) = channel::unbounded::<u32>();
        let (messages, received) = channel::unbounded::<u32>();
        let (reached, waiting) = channel::bounded::<()>(0);
        let thread = Background::spawn("test", move |stop| {
            let period = stop.next_within(&nothing, Duration::ZERO);
            assert!(matches!(period, Woken::Period));
            assert_eq!(stop.next(&received), Some(7));
            assert!(!stop.has_come());
            reached.send(()).unwrap();
            // Far longer than any test: only the stop ends this wait.
            assert!(stop.wait(Duration::from_secs(3600)));
            assert!(matches!(
                stop.next_within(&nothing, Duration::ZERO),
                Woken::Stop
            ));
            seen.store(true, Ordering::Release);
        });
        messages.send(7).unwrap();
        waiting.recv().unwrap();
        drop(thread);
        assert!(ended.load(Ordering::Acquire), "the thread had returned");
        drop(silent);
    }
}
