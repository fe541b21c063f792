//! Rate limits: token buckets, shared by connections (requests, chat, strikes), tables (their
//! chat budget, a session rule) and the server (table creations and password guesses per
//! address). Pure: time is an argument.
//!
//! A bucket is its [`Rate`] (how it refills) and what it holds. A [`TokenBucket`] keeps both,
//! with the time it was last looked at; a [`Level`] keeps only what it holds, and that time as
//! an offset from an epoch its owner keeps, for owners with many buckets of known rates (a
//! connection: 16 bytes a bucket, where a `TokenBucket` is 40).

use std::time::{Duration, Instant};

/// How a bucket refills: `capacity` tokens at most, `per_second` more each second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    capacity: f64,
    per_second: f64,
}

impl Rate {
    /// At most `capacity` tokens (at least 1), refilled at `per_second` (at least 0).
    pub fn new(capacity: f64, per_second: f64) -> Self {
        Self {
            capacity: capacity.max(1.0),
            per_second: per_second.max(0.0),
        }
    }

    /// What a bucket that held `tokens` holds `elapsed` later.
    fn refilled(self, tokens: f64, elapsed: Duration) -> f64 {
        (tokens + elapsed.as_secs_f64() * self.per_second).min(self.capacity)
    }
}

/// Takes `n` of `tokens` if there are that many, none otherwise.
fn take_from(tokens: &mut f64, n: f64) -> bool {
    if *tokens >= n {
        *tokens -= n;
        true
    } else {
        false
    }
}

/// A token bucket: `capacity` tokens, refilled at `per_second`.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    rate: Rate,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `capacity` tokens (at least 1), refilled at `per_second`.
    pub fn new(capacity: f64, per_second: f64, now: Instant) -> Self {
        let rate = Rate::new(capacity, per_second);
        Self {
            rate,
            tokens: rate.capacity,
            last: now,
        }
    }

    /// Whether a token is there now (without taking it).
    pub fn peek(&self, now: Instant) -> bool {
        self.tokens_at(now) >= 1.0
    }

    /// Whether the bucket has refilled completely: it then holds no state worth keeping.
    pub fn is_full(&self, now: Instant) -> bool {
        self.tokens_at(now) >= self.rate.capacity
    }

    fn tokens_at(&self, now: Instant) -> f64 {
        self.rate
            .refilled(self.tokens, now.saturating_duration_since(self.last))
    }

    /// Takes one token if there is one.
    pub fn take(&mut self, now: Instant) -> bool {
        self.take_n(1.0, now)
    }

    /// Takes `n` tokens if there are that many (a byte budget takes a message's size), none
    /// otherwise. More than the capacity is never there.
    pub fn take_n(&mut self, n: f64, now: Instant) -> bool {
        self.tokens = self.tokens_at(now);
        self.last = now;
        take_from(&mut self.tokens, n)
    }
}

/// What one bucket holds, without its rate (its owner passes it) and with its time as an
/// offset from an epoch its owner keeps: the same bucket as a [`TokenBucket`], in 16 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    tokens: f64,
    /// When it was last looked at, in nanoseconds after the owner's epoch.
    last: u64,
}

impl Level {
    /// A full bucket of `rate`, at `at` after the epoch.
    pub fn full(rate: Rate, at: Duration) -> Self {
        Self {
            tokens: rate.capacity,
            last: nanos(at),
        }
    }

    /// Takes one token if there is one at `at` after the epoch.
    pub fn take(&mut self, rate: Rate, at: Duration) -> bool {
        let at = nanos(at);
        let elapsed = Duration::from_nanos(at.saturating_sub(self.last));
        self.tokens = rate.refilled(self.tokens, elapsed);
        self.last = at;
        take_from(&mut self.tokens, 1.0)
    }
}

/// `at` in nanoseconds (saturating: 584 years).
fn nanos(at: Duration) -> u64 {
    u64::try_from(at.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A `Level` with its rate and epoch is the same bucket as a `TokenBucket`: the same
        /// answers to the same takes at the same times.
        #[test]
        fn a_level_is_a_token_bucket(
            capacity in 0.0f64..50.0,
            per_second in 0.0f64..1000.0,
            gaps in proptest::collection::vec(0u64..200_000_000, 1..200),
        ) {
            let epoch = Instant::now();
            let rate = Rate::new(capacity, per_second);
            let mut bucket = TokenBucket::new(capacity, per_second, epoch);
            let mut level = Level::full(rate, Duration::ZERO);
            let mut now = epoch;
            for gap in gaps {
                now += Duration::from_nanos(gap);
                prop_assert_eq!(level.take(rate, now - epoch), bucket.take(now));
            }
        }
    }
}
