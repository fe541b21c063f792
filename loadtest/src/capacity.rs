//! The capacity search: the highest delivery rate at which p99 action → last delivery stays
//! under the bound, found by bisection on the bots' think time. No I/O here: [`Bisection`] says
//! which think time to probe next and is told how each probe went; the benchmark runs them.
//!
//! The light end (the longest think time) is probed first: over the bound there, the target has
//! no capacity in the range. Then the heavy end. Within the bound there, the search goes on past
//! it, halving the think time until a probe fails: the heavy end is a first guess, not a
//! ceiling, so each target's own limit is found rather than the range's. Once a probe has failed,
//! each further probe is the geometric mean of the lightest failing and the heaviest passing
//! think time, and replaces one of them, until the two are within [`PRECISION`] of each other
//! (or the probes run out). The capacity is the delivery rate of the heaviest passing probe; if
//! no probe failed before the probes ran out, it is only a lower bound (printed `≥`).

use serde::{Deserialize, Serialize};

/// The search ends once the lightest failing think time is within this share of the heaviest
/// passing one (5 %): the capacity is then known to within about that much.
pub const PRECISION: f64 = 0.05;

/// What a capacity search found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Capacity {
    /// Even the lightest load was over the bound (or no probe ran).
    None,
    /// The heaviest load probed was within the bound: the capacity is at least this.
    AtLeast {
        /// Deliveries per second of that probe.
        deliveries_per_s: f64,
        /// Its think time, ms.
        think_ms: f64,
    },
    /// Between the heaviest passing probe and the lightest failing one.
    Bracketed {
        /// Deliveries per second of the heaviest passing probe (the capacity).
        deliveries_per_s: f64,
        /// Its think time, ms.
        think_ms: f64,
        /// The think time of the lightest failing probe, ms.
        failing_think_ms: f64,
    },
}

impl Capacity {
    /// The delivery rate, if there is one.
    pub fn deliveries_per_s(&self) -> Option<f64> {
        match *self {
            Self::None => None,
            Self::AtLeast {
                deliveries_per_s, ..
            }
            | Self::Bracketed {
                deliveries_per_s, ..
            } => Some(deliveries_per_s),
        }
    }

    /// Whether the rate is only a lower bound.
    pub fn is_lower_bound(&self) -> bool {
        matches!(self, Self::AtLeast { .. })
    }
}

/// One bisection on the think time, between a light and a heavy end, in a number of probes.
#[derive(Debug, Clone, PartialEq)]
pub struct Bisection {
    light_ms: f64,
    heavy_ms: f64,
    probes_left: usize,
    /// The heaviest passing probe: think time and rate.
    passing: Option<(f64, f64)>,
    /// The lightest failing think time.
    failing: Option<f64>,
    /// Whether the search is over before its probes ran out.
    settled: bool,
}

impl Bisection {
    /// A search from `light_ms` (the longest think time, probed first) down to `heavy_ms` in at
    /// most `probes` probes.
    pub fn new(light_ms: f64, heavy_ms: f64, probes: usize) -> Self {
        Self {
            light_ms,
            heavy_ms,
            probes_left: probes,
            passing: None,
            failing: None,
            settled: false,
        }
    }

    /// The think time to probe next, ms; `None` once the search is over.
    pub fn next(&self) -> Option<f64> {
        if self.settled || self.probes_left == 0 {
            return None;
        }
        Some(match (self.passing, self.failing) {
            (None, _) => self.light_ms,
            // Past the heavy end while every probe passes: twice the load each time.
            (Some((pass, _)), None) if pass <= self.heavy_ms => pass / 2.0,
            (Some(_), None) => self.heavy_ms,
            (Some((pass, _)), Some(fail)) => (pass * fail).sqrt(),
        })
    }

    /// Records how the probe at `think_ms` went: within the bound or not, and its delivery rate.
    pub fn record(&mut self, think_ms: f64, within_bound: bool, deliveries_per_s: f64) {
        self.probes_left = self.probes_left.saturating_sub(1);
        if within_bound {
            if self.passing.is_none_or(|(pass, _)| think_ms < pass) {
                self.passing = Some((think_ms, deliveries_per_s));
            }
        } else {
            if self.failing.is_none_or(|fail| think_ms > fail) {
                self.failing = Some(think_ms);
            }
            // Over the bound at the light end: nothing lighter to look for.
            if self.passing.is_none() {
                self.settled = true;
            }
        }
        // The bracket is narrow enough.
        if let (Some((pass, _)), Some(fail)) = (self.passing, self.failing)
            && pass <= fail * (1.0 + PRECISION)
        {
            self.settled = true;
        }
    }

    /// What the probes so far found.
    pub fn outcome(&self) -> Capacity {
        match (self.passing, self.failing) {
            (None, _) => Capacity::None,
            (Some((think_ms, deliveries_per_s)), None) => Capacity::AtLeast {
                deliveries_per_s,
                think_ms,
            },
            (Some((think_ms, deliveries_per_s)), Some(failing_think_ms)) => Capacity::Bracketed {
                deliveries_per_s,
                think_ms,
                failing_think_ms,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a target that stays within the bound down to `limit_ms` and
    /// delivers `1e6 / think` per second; returns the probes and the outcome.
    fn search(light: f64, heavy: f64, probes: usize, limit_ms: f64) -> (Vec<f64>, Capacity) {
        let mut bisection = Bisection::new(light, heavy, probes);
        let mut seen = Vec::new();
        while let Some(think) = bisection.next() {
            seen.push(think);
            bisection.record(think, think >= limit_ms, 1e6 / think);
        }
        (seen, bisection.outcome())
    }

    #[test]
    fn over_the_bound_at_the_light_end_is_none_after_one_probe() {
        let (probes, outcome) = search(4000.0, 400.0, 5, 5000.0);
        assert_eq!(probes, [4000.0]);
        assert_eq!(outcome, Capacity::None);
        assert_eq!(outcome.deliveries_per_s(), None);
    }

    #[test]
    fn within_the_bound_at_the_heavy_end_goes_on_doubling_the_load_until_a_probe_fails() {
        // Passes down to 100 ms: 400, 200 and 100 pass, 50 fails, then the bracket narrows.
        let (probes, outcome) = search(4000.0, 400.0, 12, 100.0);
        assert_eq!(&probes[..5], &[4000.0, 400.0, 200.0, 100.0, 50.0]);
        let Capacity::Bracketed {
            think_ms,
            failing_think_ms,
            ..
        } = outcome
        else {
            panic!("{outcome:?}");
        };
        assert!(think_ms >= 100.0 && failing_think_ms < 100.0, "{outcome:?}");
        assert!(
            think_ms / failing_think_ms <= 1.0 + PRECISION,
            "{outcome:?}"
        );
    }

    #[test]
    fn a_target_that_never_fails_is_a_lower_bound_when_the_probes_run_out() {
        let (probes, outcome) = search(4000.0, 400.0, 4, 1.0);
        assert_eq!(probes, [4000.0, 400.0, 200.0, 100.0]);
        assert_eq!(
            outcome,
            Capacity::AtLeast {
                deliveries_per_s: 10_000.0,
                think_ms: 100.0
            }
        );
        assert!(outcome.is_lower_bound());
    }

    #[test]
    fn the_search_stops_once_the_bracket_is_within_five_percent() {
        for limit in [450.0, 700.0, 1000.0, 1900.0, 2500.0, 3900.0] {
            let (probes, outcome) = search(4000.0, 400.0, 50, limit);
            let Capacity::Bracketed {
                think_ms,
                failing_think_ms,
                ..
            } = outcome
            else {
                panic!("{limit}: {outcome:?}");
            };
            assert!(think_ms >= limit && failing_think_ms < limit, "{limit}");
            assert!(think_ms / failing_think_ms <= 1.0 + PRECISION, "{limit}");
            // The bracket before the last probe was wider: no probe was wasted.
            assert!(probes.len() <= 2 + 6, "{limit}: {probes:?}");
        }
    }

    #[test]
    fn otherwise_bisects_geometrically_keeping_the_bracket() {
        let (probes, outcome) = search(4000.0, 400.0, 5, 1000.0);
        // sqrt(4000 * 400) = 1264.9 passes; sqrt(1264.9 * 400) = 711.3 fails;
        // sqrt(1264.9 * 711.3) = 948.5 fails.
        assert_eq!(probes.len(), 5);
        assert_eq!(&probes[..2], &[4000.0, 400.0]);
        let close = |a: f64, b: f64| (a - b).abs() < 0.1;
        assert!(close(probes[2], 1264.9), "{probes:?}");
        assert!(close(probes[3], 711.3), "{probes:?}");
        assert!(close(probes[4], 948.5), "{probes:?}");
        let Capacity::Bracketed {
            deliveries_per_s,
            think_ms,
            failing_think_ms,
        } = outcome
        else {
            panic!("{outcome:?}");
        };
        assert!(close(think_ms, 1264.9));
        assert!(close(failing_think_ms, 948.5));
        assert!(close(deliveries_per_s, 1e6 / think_ms));
        assert!(!outcome.is_lower_bound());
    }

    #[test]
    fn the_capacity_is_the_heaviest_passing_probe_whatever_its_rate() {
        // Rates need not grow with the load: the heaviest passing probe is reported.
        let mut bisection = Bisection::new(4000.0, 400.0, 4);
        bisection.record(4000.0, true, 900.0);
        bisection.record(400.0, false, 5000.0);
        assert_eq!(bisection.next(), Some((4000.0f64 * 400.0).sqrt()));
        bisection.record(1264.9, true, 800.0);
        let next = bisection.next().unwrap_or_default();
        assert!((next - (1264.9f64 * 400.0).sqrt()).abs() < 1e-9);
        bisection.record(next, false, 3000.0);
        assert_eq!(bisection.next(), None, "probes used up");
        assert_eq!(
            bisection.outcome(),
            Capacity::Bracketed {
                deliveries_per_s: 800.0,
                think_ms: 1264.9,
                failing_think_ms: next
            }
        );
    }

    #[test]
    fn one_probe_gives_a_lower_bound_at_the_light_end_or_none() {
        assert_eq!(search(2000.0, 500.0, 1, 1000.0).0, [2000.0]);
        assert!(search(2000.0, 500.0, 1, 1000.0).1.is_lower_bound());
        assert_eq!(search(2000.0, 500.0, 1, 3000.0).1, Capacity::None);
        assert_eq!(search(2000.0, 500.0, 0, 1000.0), (vec![], Capacity::None));
    }
}
