//! Counters for `GET /metrics`, in the Prometheus text format.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Upper bounds of the broadcast-latency histogram buckets, in microseconds.
const LATENCY_BUCKETS_US: [u64; 10] = [10, 25, 50, 100, 250, 500, 1_000, 2_500, 10_000, 50_000];

/// Server-wide counters. Everything is a relaxed atomic: these are statistics, not state.
#[derive(Debug, Default)]
pub struct Metrics {
    pub(crate) connections_open: AtomicI64,
    pub(crate) connections_total: AtomicU64,
    pub(crate) connections_refused: AtomicU64,
    pub(crate) websockets_open: AtomicI64,
    pub(crate) tables: AtomicI64,
    pub(crate) messages_in: AtomicU64,
    pub(crate) messages_out: AtomicU64,
    pub(crate) bytes_in: AtomicU64,
    pub(crate) bytes_out: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) slow_readers_dropped: AtomicU64,
    pub(crate) events: AtomicU64,
    /// Tables found in the journal at start that could not be read or rebuilt.
    pub(crate) tables_unrecoverable: AtomicI64,
    /// Finished games deleted by replay retention.
    pub(crate) replays_pruned: AtomicU64,
    latency_buckets: [AtomicU64; LATENCY_BUCKETS_US.len()],
    latency_count: AtomicU64,
    latency_sum_us: AtomicU64,
}

impl Metrics {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    /// Counts messages queued for clients (one call per batch keeps the shared counters cool).
    pub(crate) fn count_out(&self, messages: u64, bytes: usize) {
        self.messages_out.fetch_add(messages, Relaxed);
        self.bytes_out.fetch_add(bytes as u64, Relaxed);
    }

    /// Records how long one broadcast took from receiving the request to queueing the last copy.
    pub(crate) fn observe_broadcast(&self, elapsed: Duration) {
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        if let Some(i) = LATENCY_BUCKETS_US.iter().position(|&b| us <= b) {
            self.latency_buckets[i].fetch_add(1, Relaxed);
        }
        self.latency_count.fetch_add(1, Relaxed);
        self.latency_sum_us.fetch_add(us, Relaxed);
    }

    /// The Prometheus text exposition of every counter.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(2048);
        let gauges: [(&str, &str, i64); 4] = [
            (
                "gm_connections_open",
                "Open TCP connections (WebSocket and HTTP).",
                self.connections_open.load(Relaxed),
            ),
            (
                "gm_websockets_open",
                "Open WebSocket sessions.",
                self.websockets_open.load(Relaxed),
            ),
            ("gm_tables", "Tables hosted.", self.tables.load(Relaxed)),
            (
                "gm_tables_unrecoverable",
                "Tables found in the journal at start that could not be read or rebuilt (left out, their rows kept untouched).",
                self.tables_unrecoverable.load(Relaxed),
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        let counters: [(&str, &str, &AtomicU64); 10] = [
            (
                "gm_connections_total",
                "Connections accepted.",
                &self.connections_total,
            ),
            (
                "gm_connections_refused_total",
                "Connections refused at the connection cap.",
                &self.connections_refused,
            ),
            (
                "gm_messages_in_total",
                "WebSocket messages received.",
                &self.messages_in,
            ),
            (
                "gm_messages_out_total",
                "WebSocket messages queued for sending.",
                &self.messages_out,
            ),
            (
                "gm_bytes_in_total",
                "Bytes of WebSocket messages received.",
                &self.bytes_in,
            ),
            (
                "gm_bytes_out_total",
                "Bytes of WebSocket messages queued.",
                &self.bytes_out,
            ),
            (
                "gm_rejected_total",
                "Requests answered with an error.",
                &self.rejected,
            ),
            (
                "gm_slow_readers_dropped_total",
                "Connections dropped because their outgoing queue overflowed.",
                &self.slow_readers_dropped,
            ),
            ("gm_events_total", "Table events published.", &self.events),
            (
                "gm_replays_pruned_total",
                "Finished games deleted after --replay-retention-days.",
                &self.replays_pruned,
            ),
        ];
        for (name, help, value) in counters {
            let value = value.load(Relaxed);
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        let name = "gm_broadcast_latency_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Time from receiving a request to queueing its events for every member.\n# TYPE {name} histogram"
        );
        let mut cumulative = 0;
        for (bound, bucket) in LATENCY_BUCKETS_US.iter().zip(&self.latency_buckets) {
            cumulative += bucket.load(Relaxed);
            let le = *bound as f64 / 1e6;
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
        }
        let count = self.latency_count.load(Relaxed);
        let sum = self.latency_sum_us.load(Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
        out
    }
}
