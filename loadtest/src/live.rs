//! The live counts of a fleet (bots seated, done, played) and the signals a bot fires into
//! them once, whichever kind of bot it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// Bots seated and bots done, for progress and readiness (never reset).
#[derive(Debug, Default)]
pub struct Live {
    /// Bots whose game is under way (seated, every hand kept; at the relay: whose whole group
    /// is connected).
    pub seated: AtomicU64,
    /// Bots that have finished, well or not.
    pub done: AtomicU64,
    /// Bots that have played all their games (runs with a number of games).
    pub played: AtomicU64,
    /// Bots that finished without ever taking their seat.
    pub unseated: AtomicU64,
    /// Bots that finished without playing all their games.
    pub unplayed: AtomicU64,
    changed: Notify,
}

impl Live {
    /// A future that completes at the next change of the counts (create it before reading them).
    pub fn changed(&self) -> Notified<'_> {
        self.changed.notified()
    }

    /// Wakes whoever waits for a change of the counts.
    pub fn notify(&self) {
        self.changed.notify_waiters();
    }
}

/// What a [`SeatedSignal`] counts.
#[derive(Debug, Clone, Copy)]
pub enum Signal {
    /// The bot took its seat ([`Live::seated`]).
    Seated,
    /// The bot played all its games ([`Live::played`]).
    Played,
}

/// Tells the fleet that a bot has taken its seat, or has played all its games.
#[derive(Debug)]
pub struct SeatedSignal(Arc<Live>, Signal, Arc<AtomicBool>);

impl SeatedSignal {
    /// A signal that counts `signal` in `live`, not fired yet.
    pub fn new(live: Arc<Live>, signal: Signal) -> Self {
        Self(live, signal, Arc::new(AtomicBool::new(false)))
    }

    /// Set once the signal has fired.
    pub fn fired_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.2)
    }

    /// It happened.
    pub fn fire(&self) {
        let counter = match self.1 {
            Signal::Seated => &self.0.seated,
            Signal::Played => &self.0.played,
        };
        // Before the count: whoever sees the count sees the flag.
        self.2.store(true, Relaxed);
        counter.fetch_add(1, Relaxed);
        self.0.notify();
    }
}
