//! Results: one [`StepResult`] per measured window, one [`TargetResult`] per target and round,
//! the [`Summary`] over the rounds (per-round ratios, their median and spread, the verdicts),
//! and their human-readable tables (the JSON is the same structures, serialized).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::capacity::Capacity;
use crate::evidence::{MachineWindow, ServerWindow};
use crate::fleet::Target;
use crate::procfs::{self, ProcSample};
use crate::stats::{Counts, LatencySummary, WindowData};

/// The latency bound of the throughput target: p99 action → last delivery under this.
pub const P99_BOUND_MS: f64 = 50.0;

/// What a step was measured for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A fixed think time (`--think-ms`, or the `bots` command's one window).
    #[default]
    Fixed,
    /// The reference step (`--cpu-think-ms`): CPU per delivery, latency, bots' CPU.
    Reference,
    /// A probe of the capacity search.
    Probe,
    /// Every bot seated and nobody acting (`--idle-secs`): what idle seats cost.
    Idle,
}

impl StepKind {
    fn label(self) -> &'static str {
        match self {
            Self::Fixed => "step",
            Self::Reference => "ref",
            Self::Probe => "probe",
            Self::Idle => "idle",
        }
    }
}

/// One measured window of one target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepResult {
    /// What the step was for.
    #[serde(default)]
    pub kind: StepKind,
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
    /// The whole machine over the window (`/proc/stat`), if read.
    #[serde(default)]
    pub machine: Option<MachineWindow>,
    /// The server's own counters over the window (`/metrics`), when the target is the server.
    #[serde(default)]
    pub server: Option<ServerWindow>,
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
            kind: StepKind::Fixed,
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
            machine: None,
            server: None,
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

/// Everything measured against one target (in one round of a benchmark).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResult {
    /// Server, relay, floor or colyseus.
    pub target: Target,
    /// The benchmark round, from 1 (0: not part of a benchmark).
    #[serde(default)]
    pub round: usize,
    /// Size of the frames the relay bots sent (relay and floor; at Colyseus, the size of the
    /// room's broadcast of them), bytes.
    #[serde(default)]
    pub frame_bytes: Option<usize>,
    /// Seats connected.
    pub seats: usize,
    /// Seconds from launch until every bot had its seat.
    pub setup_secs: f64,
    /// Resident memory of the idle target before any bot, KiB.
    pub idle_rss_kib: Option<u64>,
    /// Resident memory with every seat connected and playing (end of the first step: the
    /// reference step in a benchmark), KiB.
    pub loaded_rss_kib: Option<u64>,
    /// Peak resident memory, KiB.
    pub peak_rss_kib: Option<u64>,
    /// The measured steps, in the order they ran.
    pub steps: Vec<StepResult>,
    /// What the capacity search found (benchmarks only).
    #[serde(default)]
    pub capacity: Option<Capacity>,
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

    /// The reference step, if one ran.
    pub fn reference(&self) -> Option<&StepResult> {
        self.steps.iter().find(|s| s.kind == StepKind::Reference)
    }

    /// The step the capacity was measured at (the heaviest passing probe), if there is one.
    pub fn capacity_step(&self) -> Option<&StepResult> {
        let think_ms = match self.capacity? {
            Capacity::None => return None,
            Capacity::AtLeast { think_ms, .. } | Capacity::Bracketed { think_ms, .. } => think_ms,
        };
        self.steps
            .iter()
            .filter(|s| matches!(s.kind, StepKind::Reference | StepKind::Probe))
            .find(|s| (s.think_ms - think_ms).abs() < 1e-6)
    }

    /// The highest delivery rate of a step that kept p99 action → last delivery under the
    /// bound, and that step.
    pub fn best_step(&self) -> Option<&StepResult> {
        self.steps
            .iter()
            .filter(|s| s.kind != StepKind::Idle && s.within_bound())
            .max_by(|a, b| a.deliveries_per_s.total_cmp(&b.deliveries_per_s))
    }

    /// The idle step's figures, if one ran: resident memory per seat above the idle process
    /// (KiB), the target's CPU (cores) and that CPU per seat (µs of CPU per second).
    pub fn idle_seats(&self) -> Option<(f64, f64, f64)> {
        let step = self.steps.iter().find(|s| s.kind == StepKind::Idle)?;
        let seats = self.seats.max(1) as f64;
        let rss = step.target_rss_kib? as f64;
        let above = (rss - self.idle_rss_kib.unwrap_or(0) as f64) / seats;
        let cores = step.target_cpu_cores?;
        Some((above, cores, cores * 1e6 / seats))
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
        "{:<5} {:>8} {:>6} {:>9} {:>11} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6} {:>6}",
        "step",
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
            "{:<5} {:>8.0} {:>6.1} {:>9.0} {:>11.0}  {:>10.0} {:>10.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.1} {:>6} {:>8} {:>8} {:>6} {:>6}{}",
            s.kind.label(),
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
            if s.within_bound() || s.kind == StepKind::Idle {
                ""
            } else {
                "  (over bound)"
            },
        );
    }
    out
}

/// "≤ 2.5" (a bucket's upper bound, ms) or "-".
fn at_most_ms(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("≤ {v}"),
        Some(_) => "> 1000".to_owned(),
        None => "-".to_owned(),
    }
}

/// Per step, what the machine and the server's own counters said (where they were read).
pub fn evidence_lines(result: &TargetResult) -> String {
    let mut out = String::new();
    for s in &result.steps {
        if s.machine.is_none() && s.server.is_none() {
            continue;
        }
        let mut parts = Vec::new();
        if let Some(server) = &s.server {
            parts.push(format!(
                "the server's own p99 received → last copy queued {} ms (slowest {} ms)",
                at_most_ms(server.broadcast_p99_ms_at_most),
                at_most_ms(server.broadcast_max_ms_at_most),
            ));
            if server.commits_per_s > 0.0 {
                parts.push(format!(
                    "journal {:.0} commits/s × {} operations, commit p99 {} ms",
                    server.commits_per_s,
                    opt(server.operations_per_commit, 2),
                    at_most_ms(server.commit_p99_ms_at_most),
                ));
            }
        }
        if let Some(machine) = &s.machine {
            parts.push(format!(
                "machine busy {:.2} cores, idle {:.1} %, steal {:.2} %",
                machine.busy_cores,
                machine.idle_share * 100.0,
                machine.steal_share * 100.0
            ));
        }
        let _ = writeln!(
            out,
            "  {} {:.0} ms: {}",
            s.kind.label(),
            s.think_ms,
            parts.join("; ")
        );
    }
    out
}

/// A whole target's result: header, steps and totals.
pub fn target_text(result: &TargetResult) -> String {
    let mut out = String::new();
    let target = result.target.name();
    let t = &result.totals;
    let round = if result.round > 0 {
        format!("round {} · ", result.round)
    } else {
        String::new()
    };
    let frames = result
        .frame_bytes
        .map(|b| format!(" (frames of {b} bytes sent)"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "== {round}{target}: {} seats, seated in {:.1} s, mean broadcast {:.0} bytes{frames}",
        result.seats, result.setup_secs, result.mean_delivery_bytes
    );
    out.push_str(&steps_table(result));
    out.push_str(&evidence_lines(result));
    if let Some((total, above_idle)) = result.rss_per_seat_kib() {
        let _ = writeln!(
            out,
            "RSS per seat: {total:.2} KiB ({above_idle:.2} KiB above the idle process; peak {} MiB)",
            result.peak_rss_kib.unwrap_or(0) / 1024
        );
    }
    if let Some((above_idle, cores, per_seat)) = result.idle_seats() {
        let _ = writeln!(
            out,
            "idle seats ({} seated, nobody acting): {above_idle:.2} KiB per seat above the idle process, target CPU {cores:.3} cores ({per_seat:.2} µs of CPU per seat per second)",
            result.seats
        );
    }
    let _ = writeln!(
        out,
        "totals: {} msgs in, {} msgs out, {} broadcasts, {} games finished ({} with one winner), {} errors ({} raced moves not counted), {} disconnects, {} connect failures, {} gaps, {} undelivered",
        t.frames_in,
        t.frames_out,
        t.deliveries,
        t.games_finished,
        t.games_with_winner,
        t.errors,
        t.raced,
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
    if let Some(capacity) = &result.capacity {
        let _ = writeln!(
            out,
            "capacity (p99 action → last delivery < {P99_BOUND_MS} ms): {}",
            capacity_text(capacity)
        );
        if let Some(step) = result.capacity_step() {
            let _ = writeln!(out, "  at that probe: {}", harness_text(step));
        }
        return out;
    }
    match result.best_step() {
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

/// Below this share of the machine left idle at the capacity's probe, the bots and the target
/// were fighting for the last of the CPU: the capacity is then the harness's ceiling as much as
/// the target's.
pub const HARNESS_CEILING_IDLE: f64 = 0.10;

/// What the harness itself took at a probe, and whether the machine was full:
/// `bots 0.62 cores, machine idle 23.0 %` (+ a warning under [`HARNESS_CEILING_IDLE`]).
pub fn harness_text(step: &StepResult) -> String {
    let bots = step.bots_cpu_cores.map_or_else(
        || "bots' CPU not read".to_owned(),
        |c| format!("bots {c:.2} cores"),
    );
    match step.machine {
        None => format!("{bots}, machine not read"),
        Some(m) if m.idle_share < HARNESS_CEILING_IDLE => format!(
            "{bots}, machine idle {:.1} %: the machine was full, so this is the harness's ceiling as much as the target's (a bound: ≥)",
            m.idle_share * 100.0
        ),
        Some(m) => format!("{bots}, machine idle {:.1} %", m.idle_share * 100.0),
    }
}

/// A capacity in words: `12345 deliveries/s (think 1265 ms; over the bound at 949 ms)`.
pub fn capacity_text(capacity: &Capacity) -> String {
    match *capacity {
        Capacity::None => "none (over the bound at the lightest load probed)".to_owned(),
        Capacity::AtLeast {
            deliveries_per_s,
            think_ms,
        } => format!(
            "≥ {deliveries_per_s:.0} deliveries/s (within the bound at the heaviest load probed, think {think_ms:.0} ms)"
        ),
        Capacity::Bracketed {
            deliveries_per_s,
            think_ms,
            failing_think_ms,
        } => format!(
            "{deliveries_per_s:.0} deliveries/s (think {think_ms:.0} ms; over the bound at {failing_think_ms:.0} ms)"
        ),
    }
}

/// The latency of small synced appends on the disk that holds the server's data directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FsyncLatency {
    /// The directory written in.
    pub dir: String,
    /// Appends, each followed by `fdatasync`.
    pub samples: usize,
    /// Bytes per append.
    pub bytes: usize,
    /// Median write + `fdatasync`, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
}

/// One round of a benchmark: every target once, each in a fresh process with fresh bots.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoundResult {
    /// The round, from 1.
    pub round: usize,
    /// The disk's fsync latency, measured before the round.
    pub fsync: Option<FsyncLatency>,
    /// The relay's and the floor's frame size this round (the server's mean broadcast), bytes.
    pub frame_bytes: usize,
    /// One result per target, in the order they ran.
    pub targets: Vec<TargetResult>,
}

impl RoundResult {
    /// The result of `target` this round.
    pub fn target(&self, target: Target) -> Option<&TargetResult> {
        self.targets.iter().find(|t| t.target == target)
    }
}

/// The middle and the spread of a few values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Values.
    pub n: usize,
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// (max − min) / median, in %; `None` when the median is 0.
    pub spread_pct: Option<f64>,
}

/// The median, range and relative spread of the finite `values`; `None` if there are none.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let (min, max) = (sorted[0], sorted[n - 1]);
    Some(Spread {
        n,
        median,
        min,
        max,
        spread_pct: (median != 0.0).then(|| (max - min) / median.abs() * 100.0),
    })
}

/// What a figure is: the value itself, or only a bound on it (a capacity search that ended
/// within the bound at its heaviest load gives a lower bound).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The value.
    #[default]
    Exact,
    /// The true figure is at least this.
    AtLeast,
    /// The true figure is at most this.
    AtMost,
    /// Both sides are lower bounds: the ratio says little.
    Unknown,
}

impl Bound {
    fn prefix(self) -> &'static str {
        match self {
            Self::Exact => "",
            Self::AtLeast => "≥",
            Self::AtMost => "≤",
            Self::Unknown => "?",
        }
    }

    /// The bound of a ratio of a figure bounded by `self` over one bounded by `other`.
    fn over(self, other: Self) -> Self {
        match (self, other) {
            (Self::Exact, Self::Exact) => Self::Exact,
            (Self::AtLeast | Self::Exact, Self::AtMost | Self::Exact) => Self::AtLeast,
            (Self::AtMost | Self::Exact, Self::AtLeast | Self::Exact) => Self::AtMost,
            _ => Self::Unknown,
        }
    }

    /// The bound of a median of figures with these bounds.
    fn of_all(bounds: impl IntoIterator<Item = Self>) -> Self {
        bounds
            .into_iter()
            .fold(Self::Exact, |acc, b| match (acc, b) {
                (Self::Exact, b) | (b, Self::Exact) => b,
                (a, b) if a == b => a,
                _ => Self::Unknown,
            })
    }
}

/// A ratio, or a bound on it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// The value.
    pub value: f64,
    /// Whether it is the ratio or a bound on it.
    pub bound: Bound,
}

impl Ratio {
    /// `a / b` of two figures with their bounds; `None` if either is missing or `b` is not
    /// positive.
    pub fn of(a: Option<(f64, Bound)>, b: Option<(f64, Bound)>) -> Option<Self> {
        let ((a, a_bound), (b, b_bound)) = (a?, b?);
        (b > 0.0 && a.is_finite() && b.is_finite()).then(|| Self {
            value: a / b,
            bound: a_bound.over(b_bound),
        })
    }
}

/// One figure over the rounds: each round's value, their median and spread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Each round's figure (`None`: not measured that round).
    pub per_round: Vec<Option<Ratio>>,
    /// Median, range and spread of the measured ones.
    pub spread: Option<Spread>,
    /// Whether the median is the figure or a bound on it.
    pub bound: Bound,
}

impl Series {
    /// The series of `per_round`.
    pub fn new(per_round: Vec<Option<Ratio>>) -> Self {
        let values: Vec<f64> = per_round.iter().flatten().map(|r| r.value).collect();
        let bound = Bound::of_all(per_round.iter().flatten().map(|r| r.bound));
        Self {
            spread: spread(&values),
            bound,
            per_round,
        }
    }

    /// The median, with its bound.
    pub fn median(&self) -> Option<Ratio> {
        self.spread.map(|s| Ratio {
            value: s.median,
            bound: self.bound,
        })
    }
}

/// One target's figures over the rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetSummary {
    /// The target.
    pub target: Target,
    /// CPU per delivery at the reference step, µs.
    pub cpu_us_per_delivery: Series,
    /// p99 action → last delivery at the reference step, ms.
    pub last_delivery_p99_ms: Series,
    /// The bots' CPU at the reference step, cores.
    pub bots_cpu_cores: Series,
    /// The capacity, deliveries/s.
    pub capacity: Series,
    /// The bots' CPU at the capacity's probe, cores.
    #[serde(default)]
    pub bots_cpu_cores_at_capacity: Series,
    /// What the machine had left at the capacity's probe, % of its CPU time: near 0, the
    /// capacity is the harness's ceiling as much as the target's.
    #[serde(default)]
    pub idle_percent_at_capacity: Series,
    /// Resident memory per seat, KiB.
    pub rss_per_seat_kib: Series,
    /// The server's own p99 request received → last copy queued at the reference step, the
    /// upper bound of its histogram bucket, ms (the server only).
    #[serde(default)]
    pub own_p99_ms_at_most: Series,
    /// The hypervisor's steal at the reference step, % of the machine's CPU time.
    #[serde(default)]
    pub steal_percent: Series,
}

/// The ratios of one pair of targets over the rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairSummary {
    /// The numerator.
    pub a: Target,
    /// The denominator.
    pub b: Target,
    /// CPU per delivery at the reference step.
    pub cpu_per_delivery: Series,
    /// Capacity (deliveries/s within the latency bound).
    pub capacity: Series,
    /// Resident memory per seat.
    pub rss_per_seat: Series,
}

/// Whether a target was met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Met.
    Met,
    /// Missed.
    Missed,
    /// Only a bound was measured, on the wrong side to tell.
    Undetermined,
    /// Not measured.
    #[default]
    NotMeasured,
}

impl Verdict {
    fn text(self) -> &'static str {
        match self {
            Self::Met => "met",
            Self::Missed => "MISSED",
            Self::Undetermined => "undetermined (only a bound)",
            Self::NotMeasured => "not measured",
        }
    }

    /// Whether `ratio` (with its bound) is at most `target`.
    pub fn at_most(ratio: Option<Ratio>, target: f64) -> Self {
        let Some(Ratio { value, bound }) = ratio else {
            return Self::NotMeasured;
        };
        match (value <= target, bound) {
            (true, Bound::Exact | Bound::AtMost) => Self::Met,
            (false, Bound::Exact | Bound::AtLeast) => Self::Missed,
            _ => Self::Undetermined,
        }
    }

    /// Whether `ratio` (with its bound) is at least `target`.
    pub fn at_least(ratio: Option<Ratio>, target: f64) -> Self {
        let Some(Ratio { value, bound }) = ratio else {
            return Self::NotMeasured;
        };
        match (value >= target, bound) {
            (true, Bound::Exact | Bound::AtLeast) => Self::Met,
            (false, Bound::Exact | Bound::AtMost) => Self::Missed,
            _ => Self::Undetermined,
        }
    }
}

/// The server's latency at the reference step against what its durability allows: the time
/// of one synced append plus 10 ms.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyVerdict {
    /// The reference think time, ms.
    pub think_ms: f64,
    /// Each round's server p99 action → last delivery at the reference step, ms.
    pub server_p99_ms: Vec<Option<f64>>,
    /// Each round's fsync p99 + 10 ms.
    pub bound_ms: Vec<Option<f64>>,
    /// Median server p99, ms.
    pub median_server_p99_ms: Option<f64>,
    /// Median bound, ms.
    pub median_bound_ms: Option<f64>,
    /// Met when every round's p99 is within its round's bound.
    pub verdict: Verdict,
    /// Each round's p99 of the server's own time (request received → last copy queued), the
    /// upper bound of its bucket, ms: a round over the bound whose own p99 is within it waited
    /// outside the server.
    #[serde(default)]
    pub server_own_p99_ms: Vec<Option<f64>>,
    /// The lower bound of each round's bucket of the server's own p99, ms.
    #[serde(default)]
    pub server_own_p99_ms_above: Vec<Option<f64>>,
}

/// The server against Colyseus, issue 35's targets on the medians of server / colyseus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColyseusVerdicts {
    /// CPU per delivery at the reference step ≤ [`COLYSEUS_CPU_RATIO`].
    pub cpu_per_delivery: Verdict,
    /// Capacity ≥ [`COLYSEUS_CAPACITY_RATIO`].
    pub capacity: Verdict,
    /// RSS per seat ≤ [`COLYSEUS_RSS_RATIO`].
    pub rss_per_seat: Verdict,
}

/// The server's CPU per delivery against Colyseus's, at most.
pub const COLYSEUS_CPU_RATIO: f64 = 1.0;
/// The server's capacity against Colyseus's, at least.
pub const COLYSEUS_CAPACITY_RATIO: f64 = 1.0;
/// The server's memory per seat against Colyseus's, at most.
pub const COLYSEUS_RSS_RATIO: f64 = 0.2;

/// Added to the fsync p99 for the server's latency target.
pub const FSYNC_SLACK_MS: f64 = 10.0;

/// Issue 35: the server's CPU per delivery, durable journal included, at most this many times
/// the floor's (the kernel's own cost of the same deliveries).
pub const FLOOR_CPU_RATIO: f64 = 1.15;

/// Everything over the rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Rounds.
    pub rounds: usize,
    /// The disk's fsync p99 over the rounds, ms.
    pub fsync_p99_ms: Option<Spread>,
    /// Per target.
    pub targets: Vec<TargetSummary>,
    /// Per pair: server / relay, server / floor, server / colyseus, relay / floor (those that
    /// ran).
    pub pairs: Vec<PairSummary>,
    /// The server's p99 at the reference step against fsync p99 + 10 ms.
    pub latency: LatencyVerdict,
    /// The median capacity ratio server / relay against 1.0.
    pub capacity_server_relay: Verdict,
    /// The median CPU per delivery server / floor against [`FLOOR_CPU_RATIO`].
    #[serde(default)]
    pub cpu_server_floor: Verdict,
    /// Server / colyseus against issue 35's targets (when both ran).
    #[serde(default)]
    pub server_colyseus: Option<ColyseusVerdicts>,
}

fn exact(value: Option<f64>) -> Option<Ratio> {
    value.filter(|v| v.is_finite()).map(|value| Ratio {
        value,
        bound: Bound::Exact,
    })
}

fn capacity_figure(result: &TargetResult) -> Option<(f64, Bound)> {
    let capacity = result.capacity.as_ref()?;
    let bound = if capacity.is_lower_bound() {
        Bound::AtLeast
    } else {
        Bound::Exact
    };
    capacity.deliveries_per_s().map(|v| (v, bound))
}

fn exact_figure(value: Option<f64>) -> Option<(f64, Bound)> {
    value.map(|v| (v, Bound::Exact))
}

/// The server against `other`, if both ran.
fn pair(pairs: &[PairSummary], other: Target) -> Option<&PairSummary> {
    pairs.iter().find(|p| (p.a, p.b) == (Target::Server, other))
}

impl Summary {
    /// The summary of `rounds`, with `think_ms` the reference think time.
    pub fn new(rounds: &[RoundResult], think_ms: f64) -> Self {
        let order = [
            Target::Server,
            Target::Relay,
            Target::Floor,
            Target::Colyseus,
        ];
        let ran: Vec<Target> = order
            .into_iter()
            .filter(|&t| rounds.iter().any(|r| r.target(t).is_some()))
            .collect();
        let per_round = |target: Target, figure: &dyn Fn(&TargetResult) -> Option<Ratio>| {
            Series::new(
                rounds
                    .iter()
                    .map(|r| r.target(target).and_then(figure))
                    .collect(),
            )
        };
        let targets = ran
            .iter()
            .map(|&target| TargetSummary {
                target,
                cpu_us_per_delivery: per_round(target, &|t| {
                    exact(t.reference().and_then(|s| s.target_cpu_us_per_delivery))
                }),
                last_delivery_p99_ms: per_round(target, &|t| {
                    exact(t.reference().map(|s| s.last_delivery.p99_ms))
                }),
                bots_cpu_cores: per_round(target, &|t| {
                    exact(t.reference().and_then(|s| s.bots_cpu_cores))
                }),
                capacity: per_round(target, &|t| {
                    capacity_figure(t).map(|(value, bound)| Ratio { value, bound })
                }),
                bots_cpu_cores_at_capacity: per_round(target, &|t| {
                    exact(t.capacity_step().and_then(|s| s.bots_cpu_cores))
                }),
                idle_percent_at_capacity: per_round(target, &|t| {
                    exact(
                        t.capacity_step()
                            .and_then(|s| s.machine)
                            .map(|m| m.idle_share * 100.0),
                    )
                }),
                rss_per_seat_kib: per_round(target, &|t| {
                    exact(t.rss_per_seat_kib().map(|(total, _)| total))
                }),
                own_p99_ms_at_most: per_round(target, &|t| {
                    exact(
                        t.reference()
                            .and_then(|s| s.server)
                            .and_then(|s| s.broadcast_p99_ms_at_most),
                    )
                }),
                steal_percent: per_round(target, &|t| {
                    exact(
                        t.reference()
                            .and_then(|s| s.machine)
                            .map(|m| m.steal_share * 100.0),
                    )
                }),
            })
            .collect();
        let pair_list = [
            (Target::Server, Target::Relay),
            (Target::Server, Target::Floor),
            (Target::Server, Target::Colyseus),
            (Target::Relay, Target::Floor),
        ];
        let pairs: Vec<PairSummary> = pair_list
            .into_iter()
            .filter(|(a, b)| ran.contains(a) && ran.contains(b))
            .map(|(a, b)| {
                let ratio = |figure: &dyn Fn(&TargetResult) -> Option<(f64, Bound)>| {
                    Series::new(
                        rounds
                            .iter()
                            .map(|r| {
                                Ratio::of(
                                    r.target(a).and_then(figure),
                                    r.target(b).and_then(figure),
                                )
                            })
                            .collect(),
                    )
                };
                PairSummary {
                    a,
                    b,
                    cpu_per_delivery: ratio(&|t| {
                        exact_figure(t.reference().and_then(|s| s.target_cpu_us_per_delivery))
                    }),
                    capacity: ratio(&capacity_figure),
                    rss_per_seat: ratio(&|t| exact_figure(t.rss_per_seat_kib().map(|(v, _)| v))),
                }
            })
            .collect();
        let server_p99_ms: Vec<Option<f64>> = rounds
            .iter()
            .map(|r| {
                r.target(Target::Server)
                    .and_then(TargetResult::reference)
                    .filter(|s| s.last_delivery.count > 0)
                    .map(|s| s.last_delivery.p99_ms)
            })
            .collect();
        let bound_ms: Vec<Option<f64>> = rounds
            .iter()
            .map(|r| r.fsync.as_ref().map(|f| f.p99_ms + FSYNC_SLACK_MS))
            .collect();
        let median = |values: &[Option<f64>]| {
            spread(&values.iter().flatten().copied().collect::<Vec<_>>()).map(|s| s.median)
        };
        let (median_server_p99_ms, median_bound_ms) = (median(&server_p99_ms), median(&bound_ms));
        let judged: Vec<bool> = server_p99_ms
            .iter()
            .zip(&bound_ms)
            .filter_map(|(p99, bound)| Some(p99.as_ref()? <= bound.as_ref()?))
            .collect();
        let verdict = if judged.is_empty() {
            Verdict::NotMeasured
        } else if judged.iter().all(|&within| within) {
            Verdict::Met
        } else {
            Verdict::Missed
        };
        let server_own_p99_ms: Vec<Option<f64>> = rounds
            .iter()
            .map(|r| {
                r.target(Target::Server)
                    .and_then(TargetResult::reference)
                    .and_then(|s| s.server)
                    .and_then(|s| s.broadcast_p99_ms_at_most)
            })
            .collect();
        let server_own_p99_ms_above: Vec<Option<f64>> = rounds
            .iter()
            .map(|r| {
                r.target(Target::Server)
                    .and_then(TargetResult::reference)
                    .and_then(|s| s.server)
                    .and_then(|s| s.broadcast_p99_ms_above)
            })
            .collect();
        let capacity_server_relay = pair(&pairs, Target::Relay).map_or(Verdict::NotMeasured, |p| {
            Verdict::at_least(p.capacity.median(), 1.0)
        });
        let cpu_server_floor = pair(&pairs, Target::Floor).map_or(Verdict::NotMeasured, |p| {
            Verdict::at_most(p.cpu_per_delivery.median(), FLOOR_CPU_RATIO)
        });
        let server_colyseus = pair(&pairs, Target::Colyseus).map(|p| ColyseusVerdicts {
            cpu_per_delivery: Verdict::at_most(p.cpu_per_delivery.median(), COLYSEUS_CPU_RATIO),
            capacity: Verdict::at_least(p.capacity.median(), COLYSEUS_CAPACITY_RATIO),
            rss_per_seat: Verdict::at_most(p.rss_per_seat.median(), COLYSEUS_RSS_RATIO),
        });
        let fsync: Vec<f64> = rounds
            .iter()
            .filter_map(|r| r.fsync.as_ref().map(|f| f.p99_ms))
            .collect();
        Self {
            rounds: rounds.len(),
            fsync_p99_ms: spread(&fsync),
            targets,
            pairs,
            latency: LatencyVerdict {
                think_ms,
                server_p99_ms,
                bound_ms,
                median_server_p99_ms,
                median_bound_ms,
                verdict,
                server_own_p99_ms,
                server_own_p99_ms_above,
            },
            capacity_server_relay,
            cpu_server_floor,
            server_colyseus,
        }
    }
}

fn ratio_cell(ratio: Option<Ratio>, digits: usize) -> String {
    ratio.map_or_else(
        || "-".to_owned(),
        |r| format!("{}{:.digits$}", r.bound.prefix(), r.value),
    )
}

fn spread_cells(series: &Series, digits: usize) -> String {
    match series.spread {
        Some(s) => format!(
            "{:>9} {:>21} {:>7}",
            ratio_cell(series.median(), digits),
            format!("{:.digits$}–{:.digits$}", s.min, s.max),
            opt(s.spread_pct, 1) + "%"
        ),
        None => format!("{:>9} {:>21} {:>7}", "-", "-", "-"),
    }
}

/// The fsync line of a round.
pub fn fsync_text(round: usize, fsync: Option<&FsyncLatency>) -> String {
    match fsync {
        Some(f) => format!(
            "round {round}: {} appends of {} bytes + fdatasync in {}: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            f.samples, f.bytes, f.dir, f.p50_ms, f.p99_ms, f.max_ms
        ),
        None => format!("round {round}: fsync latency not measured"),
    }
}

/// The summary over the rounds: per target, per pair, and the verdicts.
pub fn summary_text(summary: &Summary) -> String {
    let mut out = String::new();
    let rounds = summary.rounds;
    let round_heads: String = (1..=rounds)
        .map(|r| format!(" {:>9}", format!("round {r}")))
        .collect();
    let head = |out: &mut String, first: &str| {
        let _ = writeln!(
            out,
            "{first:<16} {:<26}{round_heads} | {:>9} {:>21} {:>7}",
            "figure", "median", "min–max", "spread"
        );
    };
    let row = |out: &mut String, first: &str, name: &str, series: &Series, digits: usize| {
        let cells: String = (0..rounds)
            .map(|i| {
                format!(
                    " {:>9}",
                    ratio_cell(series.per_round.get(i).copied().flatten(), digits)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "{first:<16} {name:<26}{cells} | {}",
            spread_cells(series, digits)
        );
    };
    // A row only for a figure some round measured (the server's own counters, the machine's).
    let measured_row = |out: &mut String, name: &str, series: &Series, digits: usize| {
        if series.per_round.iter().any(Option::is_some) {
            row(out, "", name, series, digits);
        }
    };
    let _ = writeln!(
        out,
        "== per target over {rounds} round(s): each round, median, min–max, spread = (max − min) / median"
    );
    head(&mut out, "target");
    for t in &summary.targets {
        let name = t.target.name();
        row(
            &mut out,
            name,
            "µs CPU/delivery (ref)",
            &t.cpu_us_per_delivery,
            2,
        );
        row(
            &mut out,
            "",
            "last p99 ms (ref)",
            &t.last_delivery_p99_ms,
            2,
        );
        row(&mut out, "", "bots CPU cores (ref)", &t.bots_cpu_cores, 2);
        row(&mut out, "", "capacity deliveries/s", &t.capacity, 0);
        measured_row(
            &mut out,
            "bots CPU cores (cap)",
            &t.bots_cpu_cores_at_capacity,
            2,
        );
        measured_row(
            &mut out,
            "machine idle % (cap)",
            &t.idle_percent_at_capacity,
            1,
        );
        row(&mut out, "", "RSS KiB/seat", &t.rss_per_seat_kib, 2);
        measured_row(
            &mut out,
            "own p99 ms at most (ref)",
            &t.own_p99_ms_at_most,
            1,
        );
        measured_row(&mut out, "machine steal % (ref)", &t.steal_percent, 2);
    }
    if !summary.pairs.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "== ratios over {rounds} round(s) (≥/≤: a capacity search ended within the bound at its heaviest load, so only a bound)"
        );
        head(&mut out, "pair");
        for p in &summary.pairs {
            let name = format!("{} / {}", p.a.name(), p.b.name());
            row(
                &mut out,
                &name,
                "CPU per delivery (ref)",
                &p.cpu_per_delivery,
                2,
            );
            row(&mut out, "", "capacity", &p.capacity, 2);
            row(&mut out, "", "RSS per seat", &p.rss_per_seat, 2);
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "== verdicts");
    if let Some(f) = &summary.fsync_p99_ms {
        let _ = writeln!(
            out,
            "disk: fsync p99 median {:.3} ms (min–max {:.3}–{:.3})",
            f.median, f.min, f.max
        );
    }
    let l = &summary.latency;
    let per_round: Vec<String> = l
        .server_p99_ms
        .iter()
        .zip(&l.bound_ms)
        .enumerate()
        .map(|(i, (p99, bound))| {
            let own = l.server_own_p99_ms.get(i).copied().flatten();
            let above = l.server_own_p99_ms_above.get(i).copied().flatten();
            let why = match (p99, bound, own) {
                (Some(p99), Some(bound), Some(own)) if p99 > bound => {
                    let range = match above {
                        Some(above) if above > 0.0 => {
                            format!("{above}–{}", at_most_ms(Some(own)).trim_start_matches("≤ "))
                        }
                        _ => at_most_ms(Some(own)),
                    };
                    let part = if own <= p99 / 2.0 {
                        "most of the wait was outside the server (sockets, bots, machine)"
                    } else if above.is_some_and(|above| above >= p99 / 2.0) {
                        "most of the wait was in the server"
                    } else {
                        "part of the wait was in the server"
                    };
                    format!(" — the server's own p99 was {range} ms: {part}")
                }
                _ => String::new(),
            };
            format!(
                "round {}: {} vs {}{why}",
                i + 1,
                opt(*p99, 2),
                opt(*bound, 2)
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "server p99 action → last delivery at think {:.0} ms (target for --durability full: ≤ fsync p99 + {FSYNC_SLACK_MS} ms in every round): median {} ms against {} ms: {} ({})",
        l.think_ms,
        opt(l.median_server_p99_ms, 2),
        opt(l.median_bound_ms, 2),
        l.verdict.text(),
        per_round.join(", ")
    );
    let capacity = pair(&summary.pairs, Target::Relay).and_then(|p| p.capacity.median());
    let _ = writeln!(
        out,
        "capacity server / relay (target ≥ 1.0): {}x: {}",
        ratio_cell(capacity, 2),
        summary.capacity_server_relay.text()
    );
    let floor_cpu = pair(&summary.pairs, Target::Floor).and_then(|p| p.cpu_per_delivery.median());
    let _ = writeln!(
        out,
        "CPU per delivery server / floor (target ≤ {FLOOR_CPU_RATIO}): {}x: {}",
        ratio_cell(floor_cpu, 2),
        summary.cpu_server_floor.text()
    );
    if let (Some(v), Some(p)) = (
        summary.server_colyseus,
        pair(&summary.pairs, Target::Colyseus),
    ) {
        let _ = writeln!(
            out,
            "server / colyseus: CPU per delivery (target ≤ {COLYSEUS_CPU_RATIO}) {}x: {}; capacity (target ≥ {COLYSEUS_CAPACITY_RATIO}) {}x: {}; RSS per seat (target ≤ {COLYSEUS_RSS_RATIO}) {}x: {}",
            ratio_cell(p.cpu_per_delivery.median(), 2),
            v.cpu_per_delivery.text(),
            ratio_cell(p.capacity.median(), 2),
            v.capacity.text(),
            ratio_cell(p.rss_per_seat.median(), 2),
            v.rss_per_seat.text(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn median_and_spread() {
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[f64::NAN]), None);
        let one = spread(&[2.0]).unwrap();
        assert_eq!((one.n, one.median, one.min, one.max), (1, 2.0, 2.0, 2.0));
        assert_eq!(one.spread_pct, Some(0.0));
        let odd = spread(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((odd.median, odd.min, odd.max), (2.0, 1.0, 3.0));
        assert!((odd.spread_pct.unwrap() - 100.0).abs() < 1e-9);
        let even = spread(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert!((even.median - 2.5).abs() < 1e-12);
        assert!((even.spread_pct.unwrap() - 120.0).abs() < 1e-9);
        assert_eq!(spread(&[-1.0, 0.0, 1.0]).unwrap().spread_pct, None);
    }

    #[test]
    fn ratios_of_bounds_are_bounds() {
        let exact = |v| Some((v, Bound::Exact));
        let lower = |v| Some((v, Bound::AtLeast));
        assert_eq!(
            Ratio::of(exact(3.0), exact(2.0)),
            Some(Ratio {
                value: 1.5,
                bound: Bound::Exact
            })
        );
        assert_eq!(
            Ratio::of(lower(3.0), exact(2.0)).unwrap().bound,
            Bound::AtLeast
        );
        assert_eq!(
            Ratio::of(exact(3.0), lower(2.0)).unwrap().bound,
            Bound::AtMost
        );
        assert_eq!(
            Ratio::of(lower(3.0), lower(2.0)).unwrap().bound,
            Bound::Unknown
        );
        assert_eq!(Ratio::of(exact(3.0), exact(0.0)), None);
        assert_eq!(Ratio::of(None, exact(1.0)), None);

        let r = |value, bound| Some(Ratio { value, bound });
        let series = Series::new(vec![r(0.8, Bound::Exact), None, r(0.9, Bound::AtMost)]);
        assert_eq!(
            series.bound,
            Bound::AtMost,
            "a median of upper bounds and values"
        );
        assert!((series.median().unwrap().value - 0.85).abs() < 1e-12);
        assert_eq!(Verdict::at_least(series.median(), 1.0), Verdict::Missed);
        let mixed = Series::new(vec![r(1.2, Bound::AtLeast), r(0.9, Bound::AtMost)]);
        assert_eq!(mixed.bound, Bound::Unknown);
        assert_eq!(
            Verdict::at_least(mixed.median(), 1.0),
            Verdict::Undetermined
        );
        assert_eq!(Verdict::at_least(r(1.1, Bound::AtLeast), 1.0), Verdict::Met);
        assert_eq!(
            Verdict::at_least(r(0.9, Bound::AtLeast), 1.0),
            Verdict::Undetermined
        );
        assert_eq!(Verdict::at_least(None, 1.0), Verdict::NotMeasured);
    }

    fn target(target: Target, cpu_us: f64, capacity: Capacity, rss_kib: u64) -> TargetResult {
        let mut reference = StepResult::new(2000.0, &WindowData::default(), None, None);
        reference.kind = StepKind::Reference;
        reference.target_cpu_us_per_delivery = Some(cpu_us);
        reference.last_delivery.p99_ms = cpu_us;
        reference.last_delivery.count = 1;
        TargetResult {
            target,
            round: 1,
            frame_bytes: None,
            seats: 100,
            setup_secs: 1.0,
            idle_rss_kib: None,
            loaded_rss_kib: Some(rss_kib),
            peak_rss_kib: None,
            steps: vec![reference],
            capacity: Some(capacity),
            totals: Counts::default(),
            mean_delivery_bytes: 100.0,
        }
    }

    #[test]
    fn the_idle_step_gives_memory_and_cpu_per_seat_and_is_no_probe() {
        let mut result = target(Target::Server, 10.0, Capacity::None, 5_000);
        assert_eq!(result.idle_seats(), None);
        result.idle_rss_kib = Some(1_000);
        let mut idle = StepResult::new(1.0e9, &WindowData::default(), None, None);
        idle.kind = StepKind::Idle;
        idle.target_rss_kib = Some(1_200);
        idle.target_cpu_cores = Some(0.002);
        idle.last_delivery.count = 0;
        result.steps.push(idle);
        let (above_idle, cores, per_seat) = result.idle_seats().unwrap();
        assert!((above_idle - 2.0).abs() < 1e-9, "{above_idle}");
        assert!((cores - 0.002).abs() < 1e-12);
        assert!((per_seat - 20.0).abs() < 1e-9, "{per_seat}");
        // Neither the capacity's step nor the best one.
        assert!(result.best_step().is_none_or(|s| s.kind != StepKind::Idle));
        let text = target_text(&result);
        assert!(
            text.contains("idle seats (100 seated, nobody acting): 2.00 KiB per seat"),
            "{text}"
        );
        assert!(
            !text.contains("over bound"),
            "nobody acted: no bound to be over\n{text}"
        );
    }

    #[test]
    fn the_capacity_names_its_probe_and_says_when_the_machine_was_full() {
        let capacity = Capacity::Bracketed {
            deliveries_per_s: 90_000.0,
            think_ms: 900.0,
            failing_think_ms: 870.0,
        };
        let mut result = target(Target::Floor, 8.0, capacity, 100);
        let probe = |think_ms, bots, idle_share| {
            let mut step = StepResult::new(think_ms, &WindowData::default(), None, Some(bots));
            step.kind = StepKind::Probe;
            step.bots_cpu_cores = Some(bots);
            step.machine = Some(MachineWindow {
                busy_cores: 2.0 * (1.0 - idle_share),
                steal_share: 0.0,
                idle_share,
            });
            step
        };
        result.steps.push(probe(870.0, 0.9, 0.01));
        result.steps.push(probe(900.0, 0.8, 0.05));
        let step = result.capacity_step().unwrap();
        assert_eq!(
            step.think_ms, 900.0,
            "the heaviest passing probe, not the failing one"
        );
        let text = harness_text(step);
        assert!(
            text.starts_with("bots 0.80 cores, machine idle 5.0 %"),
            "{text}"
        );
        assert!(text.contains("harness's ceiling"), "{text}");
        result.steps[2] = probe(900.0, 0.5, 0.30);
        let text = harness_text(result.capacity_step().unwrap());
        assert_eq!(text, "bots 0.50 cores, machine idle 30.0 %");
        let rounds = [RoundResult {
            round: 1,
            fsync: None,
            frame_bytes: 120,
            targets: vec![result],
        }];
        let summary = Summary::new(&rounds, 2000.0);
        let t = &summary.targets[0];
        assert_eq!(
            t.bots_cpu_cores_at_capacity.median().map(|r| r.value),
            Some(0.5)
        );
        assert_eq!(
            t.idle_percent_at_capacity.median().map(|r| r.value),
            Some(30.0)
        );
        let text = summary_text(&summary);
        assert!(text.contains("bots CPU cores (cap)"), "{text}");
        assert!(text.contains("machine idle % (cap)"), "{text}");
        // No capacity, no probe to name.
        assert!(
            target(Target::Floor, 8.0, Capacity::None, 100)
                .capacity_step()
                .is_none()
        );
    }

    #[test]
    fn summary_ratios_per_round_and_verdicts() {
        let bracketed = |rate| Capacity::Bracketed {
            deliveries_per_s: rate,
            think_ms: 1000.0,
            failing_think_ms: 900.0,
        };
        let at_least = |rate| Capacity::AtLeast {
            deliveries_per_s: rate,
            think_ms: 400.0,
        };
        let fsync = |p99_ms| FsyncLatency {
            dir: "/tmp".into(),
            samples: 200,
            bytes: 4096,
            p50_ms: 0.0,
            p99_ms,
            max_ms: p99_ms,
        };
        let rounds: Vec<RoundResult> = [(20.0, 900.0, 5.0), (24.0, 1100.0, 15.0)]
            .into_iter()
            .enumerate()
            .map(
                |(i, (server_cpu, server_capacity, fsync_p99))| RoundResult {
                    round: i + 1,
                    fsync: Some(fsync(fsync_p99)),
                    frame_bytes: 120,
                    targets: vec![
                        target(Target::Server, server_cpu, bracketed(server_capacity), 1600),
                        target(Target::Relay, 10.0, bracketed(1000.0), 800),
                        target(Target::Floor, 4.0, at_least(4000.0), 100),
                    ],
                },
            )
            .collect();
        let summary = Summary::new(&rounds, 2000.0);
        assert_eq!(summary.targets.len(), 3);
        assert_eq!(summary.pairs.len(), 3);
        let server_relay = &summary.pairs[0];
        assert_eq!(
            (server_relay.a, server_relay.b),
            (Target::Server, Target::Relay)
        );
        let cpu = server_relay.cpu_per_delivery.spread.unwrap();
        assert!((cpu.median - 2.2).abs() < 1e-12);
        assert!((cpu.min - 2.0).abs() < 1e-12 && (cpu.max - 2.4).abs() < 1e-12);
        assert!((cpu.spread_pct.unwrap() - 0.4 / 2.2 * 100.0).abs() < 1e-9);
        assert_eq!(server_relay.capacity.bound, Bound::Exact);
        assert!((server_relay.capacity.spread.unwrap().median - 1.0).abs() < 1e-12);
        assert_eq!(summary.capacity_server_relay, Verdict::Met);
        assert!((server_relay.rss_per_seat.spread.unwrap().median - 2.0).abs() < 1e-12);
        let server_floor = &summary.pairs[1];
        assert_eq!(
            server_floor.capacity.bound,
            Bound::AtMost,
            "the floor's is a lower bound"
        );
        // Server p99 (here = its CPU figure) 20 and 24 ms, against 15 and 25 ms: medians 22
        // against 20.
        assert_eq!(summary.latency.server_p99_ms, [Some(20.0), Some(24.0)]);
        assert_eq!(summary.latency.bound_ms, [Some(15.0), Some(25.0)]);
        assert_eq!(summary.latency.verdict, Verdict::Missed);
        let text = summary_text(&summary);
        assert!(text.contains("server / relay"), "{text}");
        assert!(text.contains("relay / floor"), "{text}");
        assert!(text.contains("≤"), "{text}");
        assert_eq!(summary.server_colyseus, None, "Colyseus did not run");
        assert!(!text.contains("colyseus"), "{text}");
    }

    /// Issue 35: the latency target holds in every round, not on the medians; a round over its
    /// bound says whether the server's own histogram had the wait; server / floor ≤ 1.15.
    #[test]
    fn the_latency_target_is_judged_per_round_and_a_miss_is_placed() {
        let fsync = |p99_ms| FsyncLatency {
            dir: "/tmp".into(),
            samples: 200,
            bytes: 4096,
            p50_ms: 0.0,
            p99_ms,
            max_ms: p99_ms,
        };
        let capacity = Capacity::AtLeast {
            deliveries_per_s: 1000.0,
            think_ms: 700.0,
        };
        // (server p99 = its CPU figure, fsync p99, the server's own p99 bucket bound)
        let rounds: Vec<RoundResult> = [
            (20.0, 5.0, 2.5),
            (24.0, 25.0, 2.5),
            (240.0, 5.0, 250.0),
            (11.0, 0.2, 10.0),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, (p99, fsync_p99, own))| {
            let mut server = target(Target::Server, p99, capacity, 1600);
            server.steps[0].server = Some(ServerWindow {
                broadcasts: 100,
                broadcast_p99_ms_at_most: Some(own),
                broadcast_p99_ms_above: Some(own / 2.0),
                broadcast_max_ms_at_most: Some(own),
                commits_per_s: 10.0,
                operations_per_commit: Some(1.0),
                commit_p99_ms_at_most: Some(1.0),
            });
            RoundResult {
                round: i + 1,
                fsync: Some(fsync(fsync_p99)),
                frame_bytes: 120,
                targets: vec![server, target(Target::Floor, 20.0, capacity, 100)],
            }
        })
        .collect();
        let summary = Summary::new(&rounds[..2], 2000.0);
        // Medians 22 against 25 would pass; round 1 (20 against 15) does not.
        assert_eq!(summary.latency.median_server_p99_ms, Some(22.0));
        assert_eq!(summary.latency.median_bound_ms, Some(25.0));
        assert_eq!(summary.latency.verdict, Verdict::Missed);
        let text = summary_text(&summary);
        assert!(
            text.contains("round 1: 20.00 vs 15.00 — the server's own p99 was 1.25–2.5 ms: most of the wait was outside the server"),
            "{text}"
        );
        assert!(
            text.contains("round 2: 24.00 vs 35.00,") || text.contains("round 2: 24.00 vs 35.00)"),
            "{text}"
        );
        let slow = summary_text(&Summary::new(&rounds[2..3], 2000.0));
        assert!(
            slow.contains(
                "the server's own p99 was 125–250 ms: most of the wait was in the server"
            ),
            "{slow}"
        );
        // Own p99 in (5, 10] ms of an 11 ms p99: neither mostly in nor mostly out.
        let part = summary_text(&Summary::new(&rounds[3..], 2000.0));
        assert!(
            part.contains("the server's own p99 was 5–10 ms: part of the wait was in the server"),
            "{part}"
        );
        let within = Summary::new(&rounds[1..2], 2000.0);
        assert_eq!(within.latency.verdict, Verdict::Met);
        // Server 20 and 24 µs against the floor's 20: 1.0 and 1.2, median 1.1 ≤ 1.15.
        assert_eq!(summary.cpu_server_floor, Verdict::Met);
        assert_eq!(
            Summary::new(&rounds[1..2], 2000.0).cpu_server_floor,
            Verdict::Missed,
            "1.2 > 1.15"
        );
        assert!(text.contains("own p99 ms at most (ref)"), "{text}");
    }

    #[test]
    fn the_server_against_colyseus_is_held_to_issue_35s_targets() {
        let bracketed = |rate| Capacity::Bracketed {
            deliveries_per_s: rate,
            think_ms: 1000.0,
            failing_think_ms: 900.0,
        };
        let rounds = vec![RoundResult {
            round: 1,
            fsync: None,
            frame_bytes: 120,
            targets: vec![
                target(Target::Server, 10.0, bracketed(900.0), 1600),
                target(Target::Relay, 8.0, bracketed(1000.0), 800),
                target(Target::Colyseus, 12.5, bracketed(1000.0), 10_000),
            ],
        }];
        let summary = Summary::new(&rounds, 2000.0);
        let names: Vec<Target> = summary.targets.iter().map(|t| t.target).collect();
        assert_eq!(names, [Target::Server, Target::Relay, Target::Colyseus]);
        let pairs: Vec<(Target, Target)> = summary.pairs.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(
            pairs,
            [
                (Target::Server, Target::Relay),
                (Target::Server, Target::Colyseus)
            ]
        );
        let cpu = summary.pairs[1].cpu_per_delivery.median().unwrap();
        assert!((cpu.value - 0.8).abs() < 1e-12);
        assert_eq!(
            summary.server_colyseus,
            Some(ColyseusVerdicts {
                cpu_per_delivery: Verdict::Met,
                capacity: Verdict::Missed,
                rss_per_seat: Verdict::Met,
            }),
            "0.8x the CPU, 0.9x the capacity, 0.16x the memory"
        );
        let text = summary_text(&summary);
        assert!(text.contains("server / colyseus"), "{text}");
        assert!(
            text.contains("RSS per seat (target ≤ 0.2) 0.16x: met"),
            "{text}"
        );

        let r = |value, bound| Some(Ratio { value, bound });
        assert_eq!(Verdict::at_most(r(0.9, Bound::AtMost), 1.0), Verdict::Met);
        assert_eq!(
            Verdict::at_most(r(0.9, Bound::AtLeast), 1.0),
            Verdict::Undetermined
        );
        assert_eq!(
            Verdict::at_most(r(1.1, Bound::AtLeast), 1.0),
            Verdict::Missed
        );
        assert_eq!(
            Verdict::at_most(r(1.1, Bound::AtMost), 1.0),
            Verdict::Undetermined
        );
        assert_eq!(Verdict::at_most(None, 1.0), Verdict::NotMeasured);
    }
}
