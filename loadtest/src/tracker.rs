//! Action → last delivery, measured in one process with one monotonic clock: every bot of a
//! table reports each broadcast it receives, the actor reports when it sent the action that
//! caused it, and the broadcast's latency is recorded once every seat has it.
//!
//! A broadcast is identified by a key both sides can compute: against the server, the table's
//! generation and the number of the broadcast's last event (which the actor learns from its
//! `ack`); against the relay, the sender's seat and its frame counter (carried in the frame).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::stats::Window;

/// How long a broadcast may wait for its last seat or its actor before it is forgotten (lobby
/// events reach only the players already seated, so they never complete).
const FORGET_AFTER: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Copy)]
struct Record {
    deliveries: usize,
    first: Instant,
    last: Instant,
    sent: Option<Instant>,
}

/// The broadcasts of one table in flight.
#[derive(Debug)]
pub struct Tracker {
    seats: usize,
    window: Arc<Window>,
    records: Mutex<HashMap<u64, Record>>,
}

impl Tracker {
    /// A tracker for a table of `seats` seats recording into `window`.
    pub fn new(seats: usize, window: Arc<Window>) -> Self {
        Self {
            seats,
            window,
            records: Mutex::new(HashMap::new()),
        }
    }

    /// The key of a broadcast against the server: table generation and last event number.
    pub fn server_key(generation: u32, last_seq: u64) -> u64 {
        (u64::from(generation) << 40) | (last_seq & ((1 << 40) - 1))
    }

    /// A seat received broadcast `key` at `now`.
    pub fn delivered(&self, key: u64, now: Instant) {
        let Ok(mut records) = self.records.lock() else {
            return;
        };
        let record = records.entry(key).or_insert(Record {
            deliveries: 0,
            first: now,
            last: now,
            sent: None,
        });
        record.deliveries += 1;
        record.last = record.last.max(now);
        self.complete(&mut records, key);
    }

    /// The actor learned that its action sent at `sent` caused broadcast `key`.
    pub fn acted(&self, key: u64, sent: Instant, now: Instant) {
        let Ok(mut records) = self.records.lock() else {
            return;
        };
        let record = records.entry(key).or_insert(Record {
            deliveries: 0,
            first: now,
            last: now,
            sent: None,
        });
        record.sent = Some(sent);
        self.complete(&mut records, key);
        if records.len() > 4 * self.seats + 64 {
            self.forget_old(&mut records, now);
        }
    }

    fn complete(&self, records: &mut HashMap<u64, Record>, key: u64) {
        if let Some(record) = records.get(&key)
            && record.deliveries >= self.seats
            && let Some(sent) = record.sent
        {
            self.window
                .record_last_delivery(record.last.saturating_duration_since(sent));
            records.remove(&key);
        }
    }

    fn forget_old(&self, records: &mut HashMap<u64, Record>, now: Instant) {
        let window = &self.window;
        records.retain(|_, r| {
            let keep = now.saturating_duration_since(r.first) < FORGET_AFTER;
            if !keep && r.sent.is_some() {
                Window::bump(&window.counters.undelivered_actions);
            }
            keep
        });
    }

    /// Forgets everything once the table's bots are gone. Broadcasts still short of a seat
    /// then are not counted: at the end of a run the seats close one by one, so the last
    /// actions cannot reach everyone.
    pub fn finish(&self) {
        if let Ok(mut records) = self.records.lock() {
            records.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn records_once_every_seat_has_it_whatever_the_order() {
        let window = Arc::new(Window::default());
        let tracker = Tracker::new(3, Arc::clone(&window));
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        // Ack before the last delivery.
        tracker.delivered(1, ms(1));
        tracker.acted(1, t0, ms(2));
        tracker.delivered(1, ms(3));
        tracker.delivered(1, ms(7));
        // Ack after every delivery.
        for n in [4, 5, 6] {
            tracker.delivered(2, ms(n));
        }
        tracker.acted(2, ms(1), ms(8));
        // Never reaches the third seat: forgotten (and counted) once it is old.
        tracker.delivered(3, ms(1));
        tracker.acted(3, t0, ms(2));
        tracker.forget_old(
            &mut tracker.records.lock().unwrap(),
            t0 + FORGET_AFTER + Duration::from_secs(1),
        );
        tracker.finish();
        let data = window.take();
        let summary = data.last_delivery_us.summary();
        assert_eq!(summary.count, 2);
        assert!((summary.max_ms - 7.0).abs() < 0.01, "{summary:?}");
        assert!((summary.p50_ms - 5.0).abs() < 0.01, "{summary:?}");
        assert_eq!(data.counts.undelivered_actions, 1);
    }
}
