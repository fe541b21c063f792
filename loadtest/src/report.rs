//! Results: one [`StepResult`] per measured window, the comparison of server and relay, and
//! their human-readable tables (the JSON is the same structures, serialized).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::fleet::Target;
use crate::procfs::{self, ProcSample};
use crate::stats::{Counts, LatencySummary, WindowData};

/// The latency bound of the throughput target: p99 action → last delivery under this.
pub const P99_BOUND_MS: f64 = 50.0;

/// One measured window of one target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepResult {
    /// Mean think time of the step, ms.
    pub think_ms: f64,
    /// Length of the window, s.
    pub seconds: f64,
    /// Actions (game requests, or relay frames sent) per second.
    pub actions_per_s: f64,
    /// Table broadcasts delivered per second (summed over seats).
    pub deliveries_per_s: f64,
    /// Messages received by the bots per second.
    pub frames_in_per_s: f64,
    /// Bytes received by the bots per second.
    pub bytes_in_per_s: f64,
    /// Messages sent by the bots per second.
    pub frames_out_per_s: f64,
    /// Bytes sent by the bots per second.
    pub bytes_out_per_s: f64,
    /// Action → acknowledgement at the actor.
    pub ack: LatencySummary,
    /// Action → delivery at the last seat of the table.
    pub last_delivery: LatencySummary,
    /// The raw counts.
    pub counts: Counts,
    /// The target process's CPU, in cores (1.0 = one core busy), if it was watched.
    pub target_cpu_cores: Option<f64>,
    /// The target's CPU time per delivered broadcast, µs.
    pub target_cpu_us_per_delivery: Option<f64>,
    /// The target's resident memory at the end of the window, KiB.
    pub target_rss_kib: Option<u64>,
    /// The bot processes' CPU, in cores.
    pub bots_cpu_cores: Option<f64>,
}

impl StepResult {
    /// A step from its window and, if watched, readings of the target before and after.
    pub fn new(
        think_ms: f64,
        window: &WindowData,
        target: Option<(ProcSample, ProcSample)>,
        bots_cpu_seconds: Option<f64>,
    ) -> Self {
        let c = &window.counts;
        let target_cpu = target.map(|(before, after)| procfs::cpu_between(&before, &after));
        Self {
            think_ms,
            seconds: window.seconds,
            actions_per_s: window.per_second(c.actions),
            deliveries_per_s: window.per_second(c.deliveries),
            frames_in_per_s: window.per_second(c.frames_in),
            bytes_in_per_s: window.per_second(c.bytes_in),
            frames_out_per_s: window.per_second(c.frames_out),
            bytes_out_per_s: window.per_second(c.bytes_out),
            ack: window.ack_us.summary(),
            last_delivery: window.last_delivery_us.summary(),
            counts: c.clone(),
            target_cpu_cores: target_cpu.map(|(share, _)| share),
            target_cpu_us_per_delivery: target_cpu
                .filter(|_| c.deliveries > 0)
                .map(|(_, cpu)| cpu * 1e6 / c.deliveries as f64),
            target_rss_kib: target.map(|(_, after)| after.rss_kib),
            bots_cpu_cores: bots_cpu_seconds
                .filter(|_| window.seconds > 0.0)
                .map(|cpu| cpu / window.seconds),
        }
    }

    /// Whether the step was healthy (no errors, disconnects or lost broadcasts) and kept p99
    /// action → last delivery under the bound.
    pub fn within_bound(&self) -> bool {
        self.healthy() && self.last_delivery.count > 0 && self.last_delivery.p99_ms < P99_BOUND_MS
    }

    /// No errors, disconnects, gaps or undelivered broadcasts, no mirror that differs from the
    /// server's snapshot and no game whose dice do not verify.
    pub fn healthy(&self) -> bool {
        let c = &self.counts;
        c.errors == 0
            && c.disconnects == 0
            && c.gaps == 0
            && c.undelivered_actions == 0
            && c.connect_failures == 0
            && c.mirror_mismatches == 0
            && c.dice_mismatches == 0
    }
}

/// Everything measured against one target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResult {
    /// Server or relay.
    pub target: Target,
    /// Seats connected.
    pub seats: usize,
    /// Seconds from launch until every bot had its seat.
    pub setup_secs: f64,
    /// Resident memory of the idle target before any bot, KiB.
    pub idle_rss_kib: Option<u64>,
    /// Resident memory with every seat connected and playing (end of the first step), KiB.
    pub loaded_rss_kib: Option<u64>,
    /// Peak resident memory, KiB.
    pub peak_rss_kib: Option<u64>,
    /// The measured steps, lightest load first.
    pub steps: Vec<StepResult>,
    /// Everything the bots counted over the whole run, setup and teardown included.
    pub totals: Counts,
    /// Mean size of a broadcast message, bytes.
    pub mean_delivery_bytes: f64,
}

impl TargetResult {
    /// Resident memory per connected seat, KiB: total, and above the idle process.
    pub fn rss_per_seat_kib(&self) -> Option<(f64, f64)> {
        let loaded = self.loaded_rss_kib? as f64;
        let idle = self.idle_rss_kib.unwrap_or(0) as f64;
        let seats = self.seats.max(1) as f64;
        Some((loaded / seats, (loaded - idle) / seats))
    }

    /// The highest delivery rate of a step that kept p99 action → last delivery under the
    /// bound, and that step.
    pub fn capacity(&self) -> Option<&StepResult> {
        self.steps
            .iter()
            .filter(|s| s.within_bound())
            .max_by(|a, b| a.deliveries_per_s.total_cmp(&b.deliveries_per_s))
    }
}

/// Server against relay, with the ratios the targets are stated in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// Server deliveries/s within the latency bound over the relay's (target ≥ 0.8).
    pub throughput_ratio: Option<f64>,
    /// Server CPU per delivery over the relay's, at the heaviest think time both kept within
    /// the bound (target ≤ 1.25).
    pub cpu_per_delivery_ratio: Option<f64>,
    /// The think time that ratio was taken at, ms.
    pub cpu_ratio_think_ms: Option<f64>,
    /// Server RSS per seat over the relay's.
    pub rss_per_seat_ratio: Option<f64>,
    /// Server RSS per seat, KiB (target ≤ 12).
    pub server_rss_per_seat_kib: Option<f64>,
}

impl Comparison {
    /// Compares a server run with a relay run of the same shape.
    pub fn new(server: &TargetResult, relay: &TargetResult) -> Self {
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let throughput_ratio = ratio(
            server.capacity().map(|s| s.deliveries_per_s),
            relay.capacity().map(|s| s.deliveries_per_s),
        );
        // The CPU comparison at one think time: the busiest one both kept within the bound, or
        // failing that the lightest one both ran.
        let pairs: Vec<(&StepResult, &StepResult)> = server
            .steps
            .iter()
            .filter_map(|s| {
                relay
                    .steps
                    .iter()
                    .find(|r| (r.think_ms - s.think_ms).abs() < 1e-9)
                    .map(|r| (s, r))
            })
            .collect();
        let chosen = pairs
            .iter()
            .filter(|(s, r)| s.within_bound() && r.within_bound())
            .min_by(|a, b| a.0.think_ms.total_cmp(&b.0.think_ms))
            .or_else(|| pairs.first());
        let cpu_per_delivery_ratio = chosen
            .and_then(|(s, r)| ratio(s.target_cpu_us_per_delivery, r.target_cpu_us_per_delivery));
        let server_rss = server.rss_per_seat_kib().map(|(total, _)| total);
        let relay_rss = relay.rss_per_seat_kib().map(|(total, _)| total);
        Self {
            throughput_ratio,
            cpu_per_delivery_ratio,
            cpu_ratio_think_ms: chosen.map(|(s, _)| s.think_ms),
            rss_per_seat_ratio: ratio(server_rss, relay_rss),
            server_rss_per_seat_kib: server_rss,
        }
    }
}

fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// The steps of one target as a table.
pub fn steps_table(result: &TargetResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>8} {:>6} {:>9} {:>11} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6} {:>6}",
        "think ms",
        "secs",
        "actions/s",
        "deliveries/s",
        "msgs in/s",
        "KiB in/s",
        "ack p50",
        "ack p99",
        "last p50",
        "last p99",
        "last max",
        "cpu",
        "µs/deliv",
        "RSS MiB",
        "bots",
        "errors",
    );
    for s in &result.steps {
        let c = &s.counts;
        let _ = writeln!(
            out,
            "{:>8.0} {:>6.1} {:>9.0} {:>11.0}  {:>10.0} {:>10.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.1} {:>6} {:>8} {:>8} {:>6} {:>6}{}",
            s.think_ms,
            s.seconds,
            s.actions_per_s,
            s.deliveries_per_s,
            s.frames_in_per_s,
            s.bytes_in_per_s / 1024.0,
            s.ack.p50_ms,
            s.ack.p99_ms,
            s.last_delivery.p50_ms,
            s.last_delivery.p99_ms,
            s.last_delivery.max_ms,
            opt(s.target_cpu_cores, 2),
            opt(s.target_cpu_us_per_delivery, 2),
            opt(s.target_rss_kib.map(|k| k as f64 / 1024.0), 1),
            opt(s.bots_cpu_cores, 2),
            c.errors + c.disconnects + c.gaps + c.undelivered_actions,
            if s.within_bound() {
                ""
            } else {
                "  (over bound)"
            },
        );
    }
    out
}

/// A whole target's result: header, steps and totals.
pub fn target_text(result: &TargetResult) -> String {
    let mut out = String::new();
    let target = match result.target {
        Target::Server => "server",
        Target::Relay => "relay",
    };
    let t = &result.totals;
    let _ = writeln!(
        out,
        "== {target}: {} seats, seated in {:.1} s, mean broadcast {:.0} bytes",
        result.seats, result.setup_secs, result.mean_delivery_bytes
    );
    out.push_str(&steps_table(result));
    if let Some((total, above_idle)) = result.rss_per_seat_kib() {
        let _ = writeln!(
            out,
            "RSS per seat: {total:.2} KiB ({above_idle:.2} KiB above the idle process; peak {} MiB)",
            result.peak_rss_kib.unwrap_or(0) / 1024
        );
    }
    let _ = writeln!(
        out,
        "totals: {} msgs in, {} msgs out, {} broadcasts, {} games finished ({} with one winner), {} errors, {} disconnects, {} connect failures, {} gaps, {} undelivered",
        t.frames_in,
        t.frames_out,
        t.deliveries,
        t.games_finished,
        t.games_with_winner,
        t.errors,
        t.disconnects,
        t.connect_failures,
        t.gaps,
        t.undelivered_actions
    );
    if t.reconnects > 0 || t.resume_retries > 0 || t.table_moves > 0 || t.lost_requests > 0 {
        let _ = writeln!(
            out,
            "failover: {} seats resumed after a broken connection ({} failed tries), {} table moves, {} requests lost unanswered",
            t.reconnects, t.resume_retries, t.table_moves, t.lost_requests
        );
    }
    if t.mirror_checks > 0 {
        let _ = writeln!(
            out,
            "mirror checks: {} snapshots compared, {} differences",
            t.mirror_checks, t.mirror_mismatches
        );
    }
    if t.extra_turns > 0 || t.dice_verified > 0 || t.dice_mismatches > 0 {
        let _ = writeln!(
            out,
            "rule presets: {} extra turns taken; dice of {} games verified ({} d20 rolls), {} games with a mismatch",
            t.extra_turns, t.dice_verified, t.rolls_verified, t.dice_mismatches
        );
    }
    match result.capacity() {
        Some(step) => {
            let _ = writeln!(
                out,
                "throughput within p99 < {P99_BOUND_MS} ms: {:.0} deliveries/s (think {:.0} ms)",
                step.deliveries_per_s, step.think_ms
            );
        }
        None => {
            let _ = writeln!(out, "no step kept p99 under {P99_BOUND_MS} ms");
        }
    }
    out
}

/// The ratios, with the targets they are measured against.
pub fn comparison_text(c: &Comparison) -> String {
    let mut out = String::new();
    let verdict = |ok: Option<bool>| match ok {
        Some(true) => "met",
        Some(false) => "MISSED",
        None => "not measured",
    };
    let _ = writeln!(out, "== server / relay");
    let _ = writeln!(
        out,
        "throughput at p99 < {P99_BOUND_MS} ms: {}x (target >= 0.8: {})",
        opt(c.throughput_ratio, 2),
        verdict(c.throughput_ratio.map(|r| r >= 0.8))
    );
    let _ = writeln!(
        out,
        "CPU per delivered message (think {} ms): {}x (target <= 1.25: {})",
        opt(c.cpu_ratio_think_ms, 0),
        opt(c.cpu_per_delivery_ratio, 2),
        verdict(c.cpu_per_delivery_ratio.map(|r| r <= 1.25))
    );
    let _ = writeln!(
        out,
        "RSS per seat: server {} KiB (target <= 12: {}), {}x the relay's",
        opt(c.server_rss_per_seat_kib, 2),
        verdict(c.server_rss_per_seat_kib.map(|k| k <= 12.0)),
        opt(c.rss_per_seat_ratio, 2)
    );
    out
}
