//! What the bots measure: counters (relaxed atomics, shared by every bot of a process) and two
//! HDR histograms (action → acknowledgement at the actor, action → delivery at the last seat).
//! A [`Window`] is taken and reset at every measurement step; the taken [`WindowData`] is plain
//! data that serializes to JSON and merges across bot processes.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Largest latency a histogram holds, in microseconds (longer ones are clamped to it).
const MAX_LATENCY_US: u64 = 120_000_000;

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Event counts of one window (or of a whole run), as plain numbers.
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct Counts {
            $($(#[$doc])* pub $name: u64,)*
        }

        /// The live counters behind [`Counts`], bumped by every bot.
        #[derive(Debug, Default)]
        pub struct Counters {
            $($(#[$doc])* pub $name: AtomicU64,)*
        }

        impl Counters {
            /// Reads every counter and sets it back to zero.
            pub fn take(&self) -> Counts {
                Counts { $($name: self.$name.swap(0, Relaxed),)* }
            }
        }

        impl Counts {
            /// Adds another window's counts to these.
            pub fn add(&mut self, other: &Counts) {
                $(self.$name += other.$name;)*
            }
        }
    };
}

counters! {
    /// WebSocket messages the bots received.
    frames_in,
    /// Payload bytes the bots received.
    bytes_in,
    /// WebSocket messages the bots sent.
    frames_out,
    /// Payload bytes the bots sent.
    bytes_out,
    /// Table broadcasts received (server: `events` messages; relay: relayed frames).
    deliveries,
    /// Bytes of those broadcasts.
    delivery_bytes,
    /// Events received in those broadcasts (server only).
    events_in,
    /// Game requests sent that expect an acknowledgement (relay: frames sent).
    actions,
    /// Acknowledgements received (relay: a bot's own frame coming back).
    acks,
    /// `error` answers received (there must be none in a healthy run).
    errors,
    /// `error` answers to a game move that the bot's own mirror, by the time the answer came,
    /// also refuses: another player's event (an elimination, a turn that ended) crossed the move
    /// on the wire. A race of a live game, as a person at the table has it; not an error.
    raced,
    /// Connections that closed or failed before the bot was done.
    disconnects,
    /// Connections that could not be opened.
    connect_failures,
    /// Sequence gaps or events that did not fit a bot's mirror.
    gaps,
    /// Snapshots compared with a bot's mirror (`--mirror-check`).
    mirror_checks,
    /// Differences between a bot's mirror (the protocol's one fold) and the server's snapshot
    /// at the same event (`--mirror-check`).
    mirror_mismatches,
    /// Games that reached `game_over` (counted once per table, by its host).
    games_finished,
    /// Finished games with exactly one player in first place.
    games_with_winner,
    /// Acknowledged actions whose broadcast did not reach every seat.
    undelivered_actions,
    /// Chat lines sent.
    chats,
    /// Extra turns taken (`extra_turn` requests sent).
    extra_turns,
    /// d20 rolls in finished games whose dice were checked (`verify_dice`).
    rolls_verified,
    /// Finished games whose every random outcome matched the revealed dice (`verify_dice`).
    dice_verified,
    /// Finished games with an outcome their revealed dice do not give (must stay 0).
    dice_mismatches,
    /// Bots whose game is under way (seated, every hand kept), or, at the relay, whose whole
    /// group is connected.
    seated,
    /// Seats taken back with `resume` after a connection broke in the middle of a game (a
    /// node of a cluster died, say).
    reconnects,
    /// Resume tries that failed (no connection, or a refusal such as `unknown_table` while
    /// another node takes the table over) before a seat was taken back or given up.
    resume_retries,
    /// Snapshots nobody asked for while seated (the table moved to another node).
    table_moves,
    /// Seats moved to their table's owner after a `served_at` (cluster mode): resumed on a
    /// connection to the owner, the connection through another node dropped.
    moved_to_owner,
    /// Game requests forgotten unanswered because a resume or a table move replaced the
    /// mirror (their answers will never come).
    lost_requests,
}

/// A latency histogram as plain data: `(value in µs, count)` for every recorded bucket.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HistData(pub Vec<(u64, u64)>);

fn new_histogram() -> Histogram<u64> {
    // Three significant digits from 1 µs to two minutes. The bounds are constants that
    // hdrhistogram accepts, so this cannot fail at run time.
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds")
}

impl HistData {
    fn from_histogram(h: &Histogram<u64>) -> Self {
        Self(
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        )
    }

    /// The histogram these buckets describe.
    pub fn to_histogram(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for &(value, count) in &self.0 {
            let _ = h.record_n(value.clamp(1, MAX_LATENCY_US), count);
        }
        h
    }

    /// Adds another histogram's buckets.
    pub fn merge(&mut self, other: &HistData) {
        let mut h = self.to_histogram();
        let _ = h.add(other.to_histogram());
        *self = Self::from_histogram(&h);
    }

    /// Count and percentiles, in milliseconds.
    pub fn summary(&self) -> LatencySummary {
        let h = self.to_histogram();
        let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        LatencySummary {
            count: h.len(),
            p50_ms: ms(0.50),
            p90_ms: ms(0.90),
            p99_ms: ms(0.99),
            p999_ms: ms(0.999),
            max_ms: h.max() as f64 / 1000.0,
        }
    }
}

/// A latency distribution in a few numbers (milliseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// Largest sample.
    pub max_ms: f64,
}

/// One measurement window as plain data.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WindowData {
    /// Length of the window in seconds.
    pub seconds: f64,
    /// What was counted.
    pub counts: Counts,
    /// Action → acknowledgement at the actor, µs.
    pub ack_us: HistData,
    /// Action → delivery at the last seat of the table, µs.
    pub last_delivery_us: HistData,
    /// `error` answers by code.
    pub error_codes: BTreeMap<String, u64>,
}

impl WindowData {
    /// Adds another process's window over the same period (the length is the longer one).
    pub fn merge(&mut self, other: &WindowData) {
        self.seconds = self.seconds.max(other.seconds);
        self.counts.add(&other.counts);
        self.ack_us.merge(&other.ack_us);
        self.last_delivery_us.merge(&other.last_delivery_us);
        for (code, n) in &other.error_codes {
            *self.error_codes.entry(code.clone()).or_default() += n;
        }
    }

    /// Appends a later window of the same processes (lengths add up).
    pub fn append(&mut self, later: &WindowData) {
        let seconds = self.seconds + later.seconds;
        self.merge(later);
        self.seconds = seconds;
    }

    /// `count / seconds`, 0 for an empty window.
    pub fn per_second(&self, count: u64) -> f64 {
        if self.seconds > 0.0 {
            count as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The live measurement window every bot of a process records into.
#[derive(Debug)]
pub struct Window {
    /// The counters.
    pub counters: Counters,
    ack: Mutex<Histogram<u64>>,
    last_delivery: Mutex<Histogram<u64>>,
    error_codes: Mutex<BTreeMap<String, u64>>,
    since: Mutex<Instant>,
}

impl Default for Window {
    fn default() -> Self {
        Self {
            counters: Counters::default(),
            ack: Mutex::new(new_histogram()),
            last_delivery: Mutex::new(new_histogram()),
            error_codes: Mutex::new(BTreeMap::new()),
            since: Mutex::new(Instant::now()),
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros())
        .unwrap_or(u64::MAX)
        .clamp(1, MAX_LATENCY_US)
}

impl Window {
    /// Adds one to a counter.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    /// Adds `n` to a counter.
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    /// Records an action → acknowledgement time.
    pub fn record_ack(&self, latency: Duration) {
        if let Ok(mut h) = self.ack.lock() {
            let _ = h.record(micros(latency));
        }
    }

    /// Records an action → last delivery time.
    pub fn record_last_delivery(&self, latency: Duration) {
        if let Ok(mut h) = self.last_delivery.lock() {
            let _ = h.record(micros(latency));
        }
    }

    /// Counts an `error` answer by its code.
    pub fn record_error(&self, code: &str) {
        Self::bump(&self.counters.errors);
        if let Ok(mut codes) = self.error_codes.lock() {
            *codes.entry(code.to_owned()).or_default() += 1;
        }
    }

    /// Takes everything recorded since the last take (or the start) and starts a new window.
    pub fn take(&self) -> WindowData {
        let now = Instant::now();
        let seconds = self
            .since
            .lock()
            .map(|mut since| {
                let seconds = now.saturating_duration_since(*since).as_secs_f64();
                *since = now;
                seconds
            })
            .unwrap_or_default();
        let drain = |h: &Mutex<Histogram<u64>>| {
            h.lock()
                .map(|mut h| {
                    let data = HistData::from_histogram(&h);
                    h.reset();
                    data
                })
                .unwrap_or_default()
        };
        WindowData {
            seconds,
            counts: self.counters.take(),
            ack_us: drain(&self.ack),
            last_delivery_us: drain(&self.last_delivery),
            error_codes: self
                .error_codes
                .lock()
                .map(|mut codes| std::mem::take(&mut *codes))
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_take_reset_and_merge() {
        let window = Window::default();
        Window::add(&window.counters.deliveries, 40);
        window.record_last_delivery(Duration::from_millis(3));
        window.record_last_delivery(Duration::from_millis(30));
        window.record_error("out_of_range");
        let mut first = window.take();
        assert_eq!(first.counts.deliveries, 40);
        assert_eq!(first.counts.errors, 1);
        assert_eq!(first.last_delivery_us.summary().count, 2);
        let second = window.take();
        assert_eq!(second.counts, Counts::default(), "taking resets");
        assert_eq!(second.last_delivery_us.summary().count, 0);

        let mut other = WindowData::default();
        other.counts.deliveries = 2;
        other.last_delivery_us.merge(&HistData(vec![(100_000, 1)]));
        other.error_codes.insert("out_of_range".into(), 2);
        first.merge(&other);
        assert_eq!(first.counts.deliveries, 42);
        assert_eq!(first.error_codes["out_of_range"], 3);
        let summary = first.last_delivery_us.summary();
        assert_eq!(summary.count, 3);
        assert!((summary.max_ms - 100.0).abs() < 0.1, "{summary:?}");
        assert!((summary.p50_ms - 30.0).abs() < 0.1, "{summary:?}");
    }
}
