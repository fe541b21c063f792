//! `bench --growth`: how a target's cost grows with the number of seats. Every round runs each
//! size in turn (1,600, 4,000, 8,000, 16,000 seats, say), each in a fresh process with fresh
//! bots, at the same think time; the summary sets CPU per delivery and RSS per seat at the
//! reference step side by side, with how far apart the sizes are.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::bench::BenchResult;
use crate::fleet::Target;
use crate::report::{Spread, TargetResult, spread};

/// The cost per delivery and per seat is "flat" when the sizes stay within this share of
/// each other (largest over smallest median, minus one).
pub const FLAT_WITHIN: f64 = 0.10;

/// One size in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrowthRun {
    /// The round, from 1.
    pub round: usize,
    /// Tables at this size.
    pub tables: usize,
    /// Seats at this size.
    pub seats: usize,
    /// The bench's result for this size and round (one round).
    pub result: BenchResult,
}

/// One target at one size, over the rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrowthRow {
    /// The target.
    pub target: Target,
    /// Tables.
    pub tables: usize,
    /// Seats.
    pub seats: usize,
    /// Deliveries per second at the reference step.
    pub deliveries_per_s: Option<Spread>,
    /// CPU per delivery at the reference step, µs.
    pub cpu_us_per_delivery: Option<Spread>,
    /// Resident memory per seat, KiB.
    pub rss_per_seat_kib: Option<Spread>,
    /// p99 action → last delivery at the reference step, ms.
    pub last_delivery_p99_ms: Option<Spread>,
}

/// How one target's figures grow across the sizes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrowthTrend {
    /// The target.
    pub target: Target,
    /// Largest over smallest median CPU per delivery across the sizes.
    pub cpu_max_over_min: Option<f64>,
    /// Largest over smallest median RSS per seat across the sizes.
    pub rss_max_over_min: Option<f64>,
    /// Whether both stay within [`FLAT_WITHIN`].
    pub flat: Option<bool>,
    /// The largest size's median CPU per delivery over the smallest's: below 1, the cost per
    /// delivery falls as the load grows.
    #[serde(default)]
    pub cpu_largest_over_smallest: Option<f64>,
    /// The same for RSS per seat.
    #[serde(default)]
    pub rss_largest_over_smallest: Option<f64>,
}

/// Every size's row, and the trend per target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrowthSummary {
    /// Rounds run.
    pub rounds: usize,
    /// Per target, per size (in the order given).
    pub rows: Vec<GrowthRow>,
    /// Per target.
    pub trends: Vec<GrowthTrend>,
}

fn max_over_min(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let values: Vec<f64> = values.collect::<Option<_>>()?;
    let max = values.iter().copied().fold(f64::NAN, f64::max);
    let min = values.iter().copied().fold(f64::NAN, f64::min);
    (values.len() >= 2 && min > 0.0).then(|| max / min)
}

impl GrowthSummary {
    /// Gathers `runs` by target and size.
    pub fn new(runs: &[GrowthRun]) -> Self {
        let mut sizes: Vec<(usize, usize)> = Vec::new();
        let mut targets: Vec<Target> = Vec::new();
        for run in runs {
            if !sizes.contains(&(run.tables, run.seats)) {
                sizes.push((run.tables, run.seats));
            }
            for t in run.result.rounds.iter().flat_map(|r| &r.targets) {
                if !targets.contains(&t.target) {
                    targets.push(t.target);
                }
            }
        }
        let mut rows = Vec::new();
        for &target in &targets {
            for &(tables, seats) in &sizes {
                let results: Vec<&TargetResult> = runs
                    .iter()
                    .filter(|run| run.tables == tables)
                    .flat_map(|run| &run.result.rounds)
                    .filter_map(|round| round.target(target))
                    .collect();
                let figure = |f: &dyn Fn(&TargetResult) -> Option<f64>| {
                    spread(&results.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
                };
                rows.push(GrowthRow {
                    target,
                    tables,
                    seats,
                    deliveries_per_s: figure(&|r| r.reference().map(|s| s.deliveries_per_s)),
                    cpu_us_per_delivery: figure(&|r| {
                        r.reference().and_then(|s| s.target_cpu_us_per_delivery)
                    }),
                    rss_per_seat_kib: figure(&|r| r.rss_per_seat_kib().map(|(total, _)| total)),
                    last_delivery_p99_ms: figure(&|r| {
                        r.reference().map(|s| s.last_delivery.p99_ms)
                    }),
                });
            }
        }
        let trends = targets
            .iter()
            .map(|&target| trend_of(target, &rows))
            .collect();
        Self {
            rounds: runs.iter().map(|run| run.round).max().unwrap_or(0),
            rows,
            trends,
        }
    }
}

/// How `target`'s rows change from size to size.
fn trend_of(target: Target, rows: &[GrowthRow]) -> GrowthTrend {
    let mine = || rows.iter().filter(move |row| row.target == target);
    let cpu = max_over_min(mine().map(|r| r.cpu_us_per_delivery.map(|s| s.median)));
    let rss = max_over_min(mine().map(|r| r.rss_per_seat_kib.map(|s| s.median)));
    let smallest = mine().min_by_key(|r| r.seats);
    let largest = mine().max_by_key(|r| r.seats);
    let largest_over_smallest = |figure: fn(&GrowthRow) -> Option<Spread>| {
        let (small, large) = (figure(smallest?)?.median, figure(largest?)?.median);
        (small > 0.0).then(|| large / small)
    };
    GrowthTrend {
        target,
        cpu_max_over_min: cpu,
        rss_max_over_min: rss,
        flat: cpu
            .zip(rss)
            .map(|(c, r)| c <= 1.0 + FLAT_WITHIN && r <= 1.0 + FLAT_WITHIN),
        cpu_largest_over_smallest: largest_over_smallest(|r| r.cpu_us_per_delivery),
        rss_largest_over_smallest: largest_over_smallest(|r| r.rss_per_seat_kib),
    }
}

fn cell(spread: Option<Spread>, digits: usize) -> String {
    spread.map_or_else(
        || "-".to_owned(),
        |s| {
            if s.n > 1 {
                format!(
                    "{:.digits$} ({:.digits$}–{:.digits$})",
                    s.median, s.min, s.max
                )
            } else {
                format!("{:.digits$}", s.median)
            }
        },
    )
}

/// The growth summary as text.
pub fn growth_text(summary: &GrowthSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== how the cost grows, reference step, median (min–max) over {} round(s)",
        summary.rounds
    );
    let _ = writeln!(
        out,
        "{:<9} {:>7} {:>6} {:>24} {:>24} {:>24} {:>24}",
        "target",
        "seats",
        "tables",
        "deliveries/s",
        "µs CPU/delivery",
        "RSS KiB/seat",
        "last p99 ms"
    );
    for row in &summary.rows {
        let _ = writeln!(
            out,
            "{:<9} {:>7} {:>6} {:>24} {:>24} {:>24} {:>24}",
            row.target.name(),
            row.seats,
            row.tables,
            cell(row.deliveries_per_s, 0),
            cell(row.cpu_us_per_delivery, 2),
            cell(row.rss_per_seat_kib, 2),
            cell(row.last_delivery_p99_ms, 2),
        );
    }
    for trend in &summary.trends {
        let ratio = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"));
        let grows = [
            trend.cpu_largest_over_smallest,
            trend.rss_largest_over_smallest,
        ]
        .iter()
        .any(|r| r.is_some_and(|r| r > 1.0 + FLAT_WITHIN));
        let verdict = match trend.flat {
            Some(true) => "flat".to_owned(),
            Some(false) if !grows => format!(
                "not flat, but falling as the load grows (largest size / smallest: CPU per delivery {}, RSS per seat {}): costs per action or per process are shared by more",
                ratio(trend.cpu_largest_over_smallest),
                ratio(trend.rss_largest_over_smallest)
            ),
            Some(false) => format!(
                "NOT flat: GROWS with the load (largest size / smallest: CPU per delivery {}, RSS per seat {}): say why",
                ratio(trend.cpu_largest_over_smallest),
                ratio(trend.rss_largest_over_smallest)
            ),
            None => "not measured".to_owned(),
        };
        let _ = writeln!(
            out,
            "{}: largest / smallest across the sizes: CPU per delivery {}, RSS per seat {} (target: within {:.0} %): {verdict}",
            trend.target.name(),
            ratio(trend.cpu_max_over_min),
            ratio(trend.rss_max_over_min),
            FLAT_WITHIN * 100.0
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn row(seats: usize, cpu: f64, rss: f64) -> GrowthRow {
        let one = |v: f64| spread(&[v]);
        GrowthRow {
            target: Target::Server,
            tables: seats / 40,
            seats,
            deliveries_per_s: one(seats as f64 * 3.0),
            cpu_us_per_delivery: one(cpu),
            rss_per_seat_kib: one(rss),
            last_delivery_p99_ms: one(3.0),
        }
    }

    fn summary(rows: Vec<GrowthRow>) -> GrowthSummary {
        GrowthSummary {
            rounds: 1,
            trends: vec![trend_of(Target::Server, &rows)],
            rows,
        }
    }

    #[test]
    fn a_cost_that_falls_with_the_load_is_told_from_one_that_grows() {
        let falls = growth_text(&summary(vec![row(1600, 20.0, 16.0), row(16000, 14.0, 7.2)]));
        assert!(
            falls.contains("not flat, but falling as the load grows"),
            "{falls}"
        );
        assert!(falls.contains("CPU per delivery 0.70x"), "{falls}");
        let grows = growth_text(&summary(vec![row(1600, 14.0, 7.0), row(16000, 20.0, 7.1)]));
        assert!(grows.contains("NOT flat: GROWS with the load"), "{grows}");
        let flat = growth_text(&summary(vec![row(1600, 14.0, 7.0), row(16000, 14.5, 7.2)]));
        assert!(flat.contains(": flat"), "{flat}");
    }

    #[test]
    fn max_over_min_needs_two_sizes_and_every_figure() {
        assert_eq!(
            max_over_min([Some(10.0), Some(12.0)].into_iter()),
            Some(1.2)
        );
        assert_eq!(max_over_min([Some(10.0)].into_iter()), None);
        assert_eq!(max_over_min([Some(10.0), None].into_iter()), None);
    }
}
