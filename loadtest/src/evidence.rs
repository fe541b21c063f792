//! What else a step can tell about where its time went, beside the bots' clocks: the machine's
//! own accounting (`/proc/stat`: how busy both cores were, and how much time the hypervisor
//! took away — steal), and the server's own counters (`GET /metrics`: how long a request took
//! from its arrival to its last copy queued, and what the journal's writer did).
//!
//! Together they answer the question a bad round raises: when the bots saw a slow delivery, was
//! the server slow to produce it (its own histogram says so), or did it wait somewhere outside
//! the server — in a socket, in the bots, on a machine that had no core to give (busy, steal)?

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One reading of `/proc/stat`'s first line: the whole machine's CPU time per state, in clock
/// ticks (`USER_HZ`, 100 per second).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineSample {
    /// user + nice + system + irq + softirq: time some CPU spent running something.
    pub busy: u64,
    /// Time taken by the hypervisor for other guests while this one wanted to run.
    pub steal: u64,
    /// idle + iowait.
    pub idle: u64,
}

/// Reads `/proc/stat` now.
pub fn machine_sample() -> Option<MachineSample> {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|text| parse_proc_stat(&text))
}

/// Parses the `cpu` line of `/proc/stat`.
pub fn parse_proc_stat(text: &str) -> Option<MachineSample> {
    let line = text.lines().find(|line| line.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    if fields.len() < 4 {
        return None;
    }
    Some(MachineSample {
        busy: at(0) + at(1) + at(2) + at(5) + at(6),
        steal: at(7),
        idle: at(3) + at(4),
    })
}

/// The machine over a window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MachineWindow {
    /// Cores' worth of time spent running anything (server, bots, kernel, everything else).
    pub busy_cores: f64,
    /// Share of all CPU time the hypervisor took away (0–1).
    pub steal_share: f64,
    /// Share of all CPU time nobody used (0–1): what the machine had left.
    #[serde(default)]
    pub idle_share: f64,
}

/// The machine between two readings `seconds` apart.
pub fn machine_between(
    before: MachineSample,
    after: MachineSample,
    seconds: f64,
) -> Option<MachineWindow> {
    let busy = after.busy.checked_sub(before.busy)?;
    let steal = after.steal.checked_sub(before.steal)?;
    let idle = after.idle.checked_sub(before.idle)?;
    let total = busy + steal + idle;
    if total == 0 || seconds <= 0.0 {
        return None;
    }
    Some(MachineWindow {
        busy_cores: busy as f64 / 100.0 / seconds,
        steal_share: steal as f64 / total as f64,
        idle_share: idle as f64 / total as f64,
    })
}

/// A cumulative histogram as `/metrics` gives it: `(upper bound in seconds, count at or below)`,
/// the `+Inf` bucket last.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Histogram {
    pub buckets: Vec<(f64, u64)>,
}

impl Histogram {
    /// This histogram minus an earlier reading of it (the window between them).
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        Histogram {
            buckets: self
                .buckets
                .iter()
                .map(|&(le, count)| {
                    let before = earlier
                        .buckets
                        .iter()
                        .find(|(b, _)| *b == le)
                        .map_or(0, |(_, c)| *c);
                    (le, count.saturating_sub(before))
                })
                .collect(),
        }
    }

    /// Observations in the histogram.
    pub fn count(&self) -> u64 {
        self.buckets.last().map_or(0, |(_, count)| *count)
    }

    /// The upper bound of the bucket holding quantile `q`, ms (infinite past the last finite
    /// bucket); `None` when empty.
    pub fn quantile_bound_ms(&self, q: f64) -> Option<f64> {
        self.quantile_bucket_ms(q).map(|(_, upper)| upper)
    }

    /// The bucket holding quantile `q`, as (lower, upper] bounds in ms (the lower bound of the
    /// first bucket is 0); `None` when empty.
    pub fn quantile_bucket_ms(&self, q: f64) -> Option<(f64, f64)> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = (q * total as f64).ceil().max(1.0) as u64;
        let at = self.buckets.iter().position(|(_, count)| *count >= rank)?;
        let lower = at
            .checked_sub(1)
            .map_or(0.0, |i| self.buckets[i].0 * 1000.0);
        Some((lower, self.buckets[at].0 * 1000.0))
    }
}

/// The server's counters that the bench reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerCounters {
    /// Request received → its last copy queued, per request that broadcast.
    pub broadcast: Histogram,
    /// The journal writer's transactions, each one `fsync` with durability `full`.
    pub journal_commit: Histogram,
    /// Operations in those transactions.
    pub journal_operations: u64,
}

/// Parses the Prometheus text of `GET /metrics`.
pub fn parse_metrics(text: &str) -> ServerCounters {
    let mut counters = ServerCounters::default();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let Some((key, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let bucket = |name: &str| -> Option<f64> {
            let le = key
                .strip_prefix(name)?
                .strip_prefix("_bucket{le=\"")?
                .strip_suffix("\"}")?;
            if le == "+Inf" {
                Some(f64::INFINITY)
            } else {
                le.parse().ok()
            }
        };
        if let Some(le) = bucket("gm_broadcast_latency_seconds") {
            counters.broadcast.buckets.push((le, value as u64));
        } else if let Some(le) = bucket("gm_journal_commit_seconds") {
            counters.journal_commit.buckets.push((le, value as u64));
        } else if key == "gm_journal_operations_total" {
            counters.journal_operations = value as u64;
        }
    }
    counters
}

/// Reads the server's `/metrics` at `base_url` (`ws://host:port`, or `wss://host:port` over
/// https trusting what `tls` trusts); `None` if it does not
/// answer in time or answers something else.
pub async fn read_server(
    base_url: &str,
    tls: Option<&std::sync::Arc<tokio_rustls::rustls::ClientConfig>>,
) -> Option<ServerCounters> {
    let base = base_url.split(',').next()?;
    let authority = base
        .strip_prefix("ws://")
        .or_else(|| base.strip_prefix("wss://"))?
        .split('/')
        .next()?
        .to_owned();
    let fetch = async {
        // Over https when the server speaks wss (the same port, the same certificate).
        let mut stream = crate::link::open_stream(base, tls).await.ok()?;
        let request = format!("GET /metrics HTTP/1.0\r\nHost: {authority}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut reply = Vec::new();
        match stream.read_to_end(&mut reply).await {
            Ok(_) => {}
            // A TLS peer that closes without its close_notify: the answer is whole all the same
            // (HTTP/1.0 ends at the close).
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {}
            Err(_) => return None,
        }
        let reply = String::from_utf8(reply).ok()?;
        let (head, body) = reply.split_once("\r\n\r\n")?;
        // hyper answers an HTTP/1.0 request in HTTP/1.0.
        let status = head.split_whitespace().nth(1);
        (head.starts_with("HTTP/1.") && status == Some("200")).then(|| parse_metrics(body))
    };
    tokio::time::timeout(Duration::from_secs(5), fetch)
        .await
        .ok()
        .flatten()
}

/// The server's own view of a window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServerWindow {
    /// Requests that broadcast in the window.
    pub broadcasts: u64,
    /// The p99 of request received → last copy queued, as the upper bound of its bucket, ms
    /// (journal included).
    pub broadcast_p99_ms_at_most: Option<f64>,
    /// The lower bound of that bucket, ms: the p99 is above it.
    #[serde(default)]
    pub broadcast_p99_ms_above: Option<f64>,
    /// The slowest such request's bucket bound, ms.
    pub broadcast_max_ms_at_most: Option<f64>,
    /// The journal writer's transactions per second.
    pub commits_per_s: f64,
    /// Operations (tables' flushes and others) per transaction.
    pub operations_per_commit: Option<f64>,
    /// The p99 of one transaction's time (its statements, commit and `fsync`), bucket bound, ms.
    pub commit_p99_ms_at_most: Option<f64>,
}

/// The server's counters between two readings `seconds` apart.
pub fn server_between(
    before: &ServerCounters,
    after: &ServerCounters,
    seconds: f64,
) -> ServerWindow {
    let broadcast = after.broadcast.since(&before.broadcast);
    let commit = after.journal_commit.since(&before.journal_commit);
    let commits = commit.count();
    let operations = after
        .journal_operations
        .saturating_sub(before.journal_operations);
    ServerWindow {
        broadcasts: broadcast.count(),
        broadcast_p99_ms_at_most: broadcast.quantile_bound_ms(0.99),
        broadcast_p99_ms_above: broadcast.quantile_bucket_ms(0.99).map(|(lower, _)| lower),
        broadcast_max_ms_at_most: broadcast.quantile_bound_ms(1.0),
        commits_per_s: if seconds > 0.0 {
            commits as f64 / seconds
        } else {
            0.0
        },
        operations_per_commit: (commits > 0).then(|| operations as f64 / commits as f64),
        commit_p99_ms_at_most: commit.quantile_bound_ms(0.99),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn proc_stat_is_read_and_windowed() {
        let before =
            parse_proc_stat("cpu  100 10 50 1000 5 1 2 3 0 0\ncpu0 50 5 25 500 2 0 1 1 0 0\n")
                .unwrap();
        assert_eq!(
            before,
            MachineSample {
                busy: 163,
                steal: 3,
                idle: 1005
            }
        );
        let after = MachineSample {
            busy: 163 + 150,
            steal: 3 + 10,
            idle: 1005 + 40,
        };
        let window = machine_between(before, after, 1.0).unwrap();
        assert!((window.busy_cores - 1.5).abs() < 1e-9);
        assert!((window.steal_share - 10.0 / 200.0).abs() < 1e-9);
        assert_eq!(parse_proc_stat("intr 1 2 3\n"), None);
        assert_eq!(
            machine_between(after, before, 1.0),
            None,
            "a clock going back"
        );
    }

    const METRICS: &str = "# HELP gm_tables Tables hosted.\n# TYPE gm_tables gauge\ngm_tables 3\n\
        gm_broadcast_latency_seconds_bucket{le=\"0.001\"} 90\n\
        gm_broadcast_latency_seconds_bucket{le=\"0.01\"} 99\n\
        gm_broadcast_latency_seconds_bucket{le=\"0.25\"} 100\n\
        gm_broadcast_latency_seconds_bucket{le=\"+Inf\"} 100\n\
        gm_broadcast_latency_seconds_count 100\n\
        gm_journal_operations_total 150\n\
        gm_journal_commit_seconds_bucket{le=\"0.0005\"} 80\n\
        gm_journal_commit_seconds_bucket{le=\"0.001\"} 100\n\
        gm_journal_commit_seconds_bucket{le=\"+Inf\"} 100\n";

    #[test]
    fn metrics_give_the_servers_own_p99_and_the_journals_batches() {
        let after = parse_metrics(METRICS);
        assert_eq!(after.broadcast.count(), 100);
        assert_eq!(after.broadcast.quantile_bound_ms(0.99), Some(10.0));
        assert_eq!(after.broadcast.quantile_bound_ms(0.5), Some(1.0));
        assert_eq!(after.broadcast.quantile_bound_ms(1.0), Some(250.0));
        let before = ServerCounters {
            broadcast: Histogram {
                buckets: vec![(0.001, 40), (0.01, 40), (0.25, 40), (f64::INFINITY, 40)],
            },
            journal_commit: Histogram {
                buckets: vec![(0.0005, 40), (0.001, 50), (f64::INFINITY, 50)],
            },
            journal_operations: 50,
        };
        let window = server_between(&before, &after, 10.0);
        assert_eq!(window.broadcasts, 60);
        // 50 of the window's 60 under 1 ms, 59 under 10 ms: p99 rank 60 is in the 0.25 s bucket.
        assert_eq!(window.broadcast_p99_ms_at_most, Some(250.0));
        assert_eq!(window.broadcast_p99_ms_above, Some(10.0));
        assert_eq!(after.broadcast.quantile_bucket_ms(0.5), Some((0.0, 1.0)));
        assert!((window.commits_per_s - 5.0).abs() < 1e-9);
        assert_eq!(window.operations_per_commit, Some(2.0));
        // 40 of the window's 50 commits within 0.5 ms, the rest within 1 ms.
        assert_eq!(window.commit_p99_ms_at_most, Some(1.0));
        let empty = server_between(&after, &after, 10.0);
        assert_eq!(
            (
                empty.broadcasts,
                empty.broadcast_p99_ms_at_most,
                empty.operations_per_commit
            ),
            (0, None, None)
        );
    }
}
