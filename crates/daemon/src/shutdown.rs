//! Shutdown: set once (by SIGINT or SIGTERM, or when a command's own solve ends), seen by
//! every thread of the daemon at once. It is a channel whose only sender is dropped: every
//! receiver then wakes, so a thread waiting for work (`crossbeam_channel::select!`) or for
//! the signal itself wakes without polling.

use std::sync::Mutex;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};

pub struct Shutdown {
    /// Dropped by `trigger`; nothing is ever sent.
    sender: Mutex<Option<Sender<()>>>,
    signal: Receiver<()>,
}

impl Default for Shutdown {
    fn default() -> Shutdown {
        Shutdown::new()
    }
}

impl Shutdown {
    pub fn new() -> Shutdown {
        let (sender, signal) = crossbeam_channel::bounded(0);
        Shutdown {
            sender: Mutex::new(Some(sender)),
            signal,
        }
    }

    /// Tells every thread to finish.
    pub fn trigger(&self) {
        self.sender.lock().expect("shutdown lock").take();
    }

    pub fn is_set(&self) -> bool {
        matches!(self.signal.try_recv(), Err(TryRecvError::Disconnected))
    }

    /// Waits until it is set.
    pub fn wait(&self) {
        let _ = self.signal.recv();
    }

    /// Waits until it is set, at most `timeout`; whether it is.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        matches!(
            self.signal.recv_timeout(timeout),
            Err(RecvTimeoutError::Disconnected)
        )
    }

    /// Ready (disconnected) once it is set: for `select!` beside the channels of work.
    pub fn signal(&self) -> &Receiver<()> {
        &self.signal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_waiter_wakes_once_it_is_set() {
        let shutdown = Shutdown::new();
        assert!(!shutdown.is_set());
        assert!(!shutdown.wait_timeout(Duration::from_millis(1)));
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..3).map(|_| s.spawn(|| shutdown.wait())).collect();
            shutdown.trigger();
            for w in waiters {
                w.join().unwrap();
            }
        });
        assert!(shutdown.is_set());
        assert!(shutdown.wait_timeout(Duration::from_secs(60)));
    }
}
