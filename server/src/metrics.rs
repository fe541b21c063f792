//! Counters for `GET /metrics`, in the Prometheus text format.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Upper bounds of the broadcast-latency histogram buckets, in microseconds.
/// Fine enough at the tail to tell a slow fsync (milliseconds) from a stalled process (tenths
/// of a second).
const LATENCY_BUCKETS_US: [u64; 15] = [
    10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000,
    1_000_000,
];

/// Server-wide counters. Everything is a relaxed atomic: these are statistics, not state.
#[derive(Debug, Default)]
pub struct Metrics {
    pub(crate) connections_open: AtomicI64,
    pub(crate) connections_total: AtomicU64,
    pub(crate) connections_refused: AtomicU64,
    /// WebSocket handshakes at `/ws` refused (400, 403, 426).
    pub(crate) handshakes_refused: AtomicU64,
    pub(crate) websockets_open: AtomicI64,
    pub(crate) tables: AtomicI64,
    pub(crate) messages_in: AtomicU64,
    pub(crate) messages_out: AtomicU64,
    pub(crate) bytes_in: AtomicU64,
    pub(crate) bytes_out: AtomicU64,
    pub(crate) rejected: AtomicU64,
    /// Error replies whose (request, code) pair `grand_melee_protocol::errors_of` does not
    /// declare: PROTOCOL.md's table of errors would not say what the server does.
    pub(crate) undeclared_error_codes: AtomicU64,
    /// The first undeclared pairs seen (`request code`), for a test or an operator to name.
    undeclared_pairs: std::sync::Mutex<Vec<String>>,
    pub(crate) slow_readers_dropped: AtomicU64,
    /// Password checks computed (one Argon2id hash each).
    pub(crate) password_checks: AtomicU64,
    /// Password checks refused because the hashing pool's queue was full.
    pub(crate) password_checks_refused: AtomicU64,
    pub(crate) events: AtomicU64,
    /// `/qr.svg` codes drawn (not served from the cache).
    pub(crate) qr_codes_drawn: AtomicU64,
    /// `/qr.svg` requests refused for their cost: the address's budget (429) or the server's
    /// (503).
    pub(crate) qr_codes_refused: AtomicU64,
    /// TURN credentials minted for camera links.
    pub(crate) turn_credentials: AtomicU64,
    /// Camera signals not relayed because the receiver's queue was filling.
    pub(crate) signals_shed: AtomicU64,
    /// Tables found in the journal at start that could not be read or rebuilt.
    pub(crate) tables_unrecoverable: AtomicI64,
    /// Finished games deleted by replay retention.
    pub(crate) replays_pruned: AtomicU64,
    /// Scheduled backups made (`--backup-dir`).
    pub(crate) backups: AtomicU64,
    /// Scheduled backups that failed.
    pub(crate) backup_failures: AtomicU64,
    /// Certificates obtained from the ACME directory (`--acme-domain`), renewals included.
    pub(crate) acme_certificates: AtomicU64,
    /// Failed attempts to obtain or keep a certificate (the log says why and what to check).
    pub(crate) acme_failures: AtomicU64,
    broadcast: Histogram,
    /// Cluster mode: requests forwarded to the node that owns the table.
    pub(crate) routed_requests: AtomicU64,
    /// Cluster mode: this node's lease renewals.
    pub(crate) lease_renewals: AtomicU64,
    /// Cluster mode: tables this node took over from a dead node.
    pub(crate) takeovers: AtomicU64,
    /// Cluster mode: appends refused because another node wrote to the table.
    pub(crate) fenced_appends: AtomicU64,
    /// Cluster mode: tables this node gave up because another node had taken them.
    pub(crate) tables_given_up: AtomicU64,
    /// Cluster mode: stand-ins started for tables owned by other nodes.
    pub(crate) proxies_started: AtomicU64,
    /// Cluster mode: `served_at`s sent (clients told where their table's owner is).
    pub(crate) clients_sent_to_owner: AtomicU64,
    /// Cluster mode: time from an append to the engine's acknowledgement.
    journal_ack: Histogram,
    /// The SQLite journal's writer (single-node mode).
    pub(crate) journal: Arc<JournalStats>,
}

/// What the SQLite journal's writer thread did: its transactions (one per batch of operations
/// from any tables), how many operations they carried, and how long each took.
#[derive(Debug, Default)]
pub struct JournalStats {
    commit: Histogram,
    commits: AtomicU64,
    operations: AtomicU64,
}

impl JournalStats {
    /// Transactions committed so far.
    pub fn commits(&self) -> u64 {
        self.commits.load(Relaxed)
    }

    /// Records one committed transaction of `operations` operations that took `elapsed` (its
    /// statements, the commit and the commit's `fsync`).
    pub(crate) fn observe_commit(&self, elapsed: Duration, operations: usize) {
        self.commit.observe(elapsed);
        self.commits.fetch_add(1, Relaxed);
        self.operations.fetch_add(operations as u64, Relaxed);
    }
}

/// A latency histogram with the buckets of [`LATENCY_BUCKETS_US`].
#[derive(Debug, Default)]
struct Histogram {
    buckets: [AtomicU64; LATENCY_BUCKETS_US.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        if let Some(i) = LATENCY_BUCKETS_US.iter().position(|&b| us <= b) {
            self.buckets[i].fetch_add(1, Relaxed);
        }
        self.count.fetch_add(1, Relaxed);
        self.sum_us.fetch_add(us, Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (bound, bucket) in LATENCY_BUCKETS_US.iter().zip(&self.buckets) {
            cumulative += bucket.load(Relaxed);
            let le = *bound as f64 / 1e6;
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
        }
        let count = self.count.load(Relaxed);
        let sum = self.sum_us.load(Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

impl Metrics {
    /// Counters that show the figures of the journal's writer `journal` too.
    pub fn with_journal(journal: Arc<JournalStats>) -> Self {
        Self {
            journal,
            ..Self::default()
        }
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    /// Counts messages queued for clients (one call per batch keeps the shared counters cool).
    /// Checks an outgoing message: an `error` whose request and code the protocol's table of
    /// errors ([`errors_of`](grand_melee_protocol::errors_of)) does not declare is counted and
    /// logged at error level (the reply still goes out: the table, not the client, is wrong).
    pub(crate) fn check_reply(&self, message: &grand_melee_protocol::ServerMessage) {
        let grand_melee_protocol::ServerMessage::Error { request, code, .. } = message else {
            return;
        };
        if grand_melee_protocol::errors_of::declares(request.as_deref(), *code) {
            return;
        }
        Self::add(&self.undeclared_error_codes, 1);
        let request = request.as_deref().unwrap_or("(unknown request)");
        tracing::error!(
            request,
            code = code.name(),
            "an error reply the protocol's table of errors does not declare (protocol/src/errors_of.rs)"
        );
        if let Ok(mut pairs) = self.undeclared_pairs.lock()
            && pairs.len() < 100
        {
            pairs.push(format!("{request} {}", code.name()));
        }
    }

    /// The undeclared (request, code) pairs answered so far (see
    /// [`check_reply`](Self::check_reply)), at most the first 100, as `request code`.
    pub fn undeclared_replies(&self) -> Vec<String> {
        self.undeclared_pairs
            .lock()
            .map(|pairs| pairs.clone())
            .unwrap_or_default()
    }

    pub(crate) fn count_out(&self, messages: u64, bytes: usize) {
        self.messages_out.fetch_add(messages, Relaxed);
        self.bytes_out.fetch_add(bytes as u64, Relaxed);
    }

    /// Records how long one broadcast took from receiving the request to queueing the last copy.
    pub(crate) fn observe_broadcast(&self, elapsed: Duration) {
        self.broadcast.observe(elapsed);
    }

    /// Cluster mode: records how long the engine took to acknowledge an append.
    pub(crate) fn observe_journal_ack(&self, elapsed: Duration) {
        self.journal_ack.observe(elapsed);
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
        let counters: [(&str, &str, &AtomicU64); 31] = [
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
                "gm_handshakes_refused_total",
                "WebSocket handshakes refused (400 malformed, 403 origin not allowed, 426 not a WebSocket version 13 upgrade).",
                &self.handshakes_refused,
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
                "gm_undeclared_error_codes_total",
                "Error replies whose request and code the protocol's table of errors does not declare.",
                &self.undeclared_error_codes,
            ),
            (
                "gm_slow_readers_dropped_total",
                "Connections dropped because their outgoing queue overflowed.",
                &self.slow_readers_dropped,
            ),
            (
                "gm_password_checks_total",
                "Password checks computed, right or wrong (one Argon2id hash each).",
                &self.password_checks,
            ),
            (
                "gm_password_checks_refused_total",
                "Password checks answered server_busy: the hashing pool's queue was full.",
                &self.password_checks_refused,
            ),
            ("gm_events_total", "Table events published.", &self.events),
            (
                "gm_qr_codes_drawn_total",
                "QR codes drawn for /qr.svg (cached codes are not drawn again).",
                &self.qr_codes_drawn,
            ),
            (
                "gm_qr_codes_refused_total",
                "/qr.svg requests refused for their cost (429: the address's budget; 503: the server's).",
                &self.qr_codes_refused,
            ),
            (
                "gm_turn_credentials_total",
                "TURN credentials minted for camera links.",
                &self.turn_credentials,
            ),
            (
                "gm_signals_shed_total",
                "Camera signals not relayed because the receiver's outgoing queue was filling.",
                &self.signals_shed,
            ),
            (
                "gm_replays_pruned_total",
                "Finished games deleted after --replay-retention-days.",
                &self.replays_pruned,
            ),
            (
                "gm_backups_total",
                "Scheduled backups of the journal made into --backup-dir.",
                &self.backups,
            ),
            (
                "gm_backup_failures_total",
                "Scheduled backups of the journal that failed (the log says why).",
                &self.backup_failures,
            ),
            (
                "gm_acme_certificates_total",
                "Certificates obtained from the ACME directory (--acme-domain), renewals included.",
                &self.acme_certificates,
            ),
            (
                "gm_acme_failures_total",
                "Failed attempts to obtain a certificate or keep it in the data directory (the log says what to check).",
                &self.acme_failures,
            ),
            (
                "gm_cluster_routed_requests_total",
                "Cluster mode: requests forwarded to the node that owns the table.",
                &self.routed_requests,
            ),
            (
                "gm_cluster_lease_renewals_total",
                "Cluster mode: renewals of this node's lease.",
                &self.lease_renewals,
            ),
            (
                "gm_cluster_takeovers_total",
                "Cluster mode: tables taken over from a dead node.",
                &self.takeovers,
            ),
            (
                "gm_cluster_fenced_appends_total",
                "Cluster mode: appends refused because another node had written to the table.",
                &self.fenced_appends,
            ),
            (
                "gm_cluster_tables_given_up_total",
                "Cluster mode: tables given up because another node had taken them.",
                &self.tables_given_up,
            ),
            (
                "gm_cluster_proxies_started_total",
                "Cluster mode: stand-ins started for tables owned by other nodes.",
                &self.proxies_started,
            ),
            (
                "gm_cluster_clients_sent_to_owner_total",
                "Cluster mode: clients told the address of their table's owner (served_at), to go there themselves.",
                &self.clients_sent_to_owner,
            ),
            (
                "gm_journal_commits_total",
                "Transactions the journal's writer committed (each one fsync with durability full).",
                &self.journal.commits,
            ),
            (
                "gm_journal_operations_total",
                "Operations (a table's flush, a creation, a league write) in those transactions.",
                &self.journal.operations,
            ),
        ];
        for (name, help, value) in counters {
            let value = value.load(Relaxed);
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        self.broadcast.render(
            &mut out,
            "gm_broadcast_latency_seconds",
            "Time from receiving a request to queueing its events for every member.",
        );
        self.journal_ack.render(
            &mut out,
            "gm_cluster_journal_ack_seconds",
            "Cluster mode: time from appending a table's record to the engine's acknowledgement (a majority of the stream's replicas has it).",
        );
        self.journal.commit.render(
            &mut out,
            "gm_journal_commit_seconds",
            "Time the journal's writer took for one transaction: its statements, the commit and its fsync.",
        );
        out
    }
}
