//! Rate limits: token buckets, shared by connections (requests, chat, strikes), tables (their
//! chat budget, a session rule) and the server (table creations and password guesses per
//! address). Pure: time is an argument.

use std::time::Instant;

/// A token bucket: `capacity` tokens, refilled at `per_second`.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    capacity: f64,
    per_second: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `capacity` tokens (at least 1), refilled at `per_second`.
    pub fn new(capacity: f64, per_second: f64, now: Instant) -> Self {
        let capacity = capacity.max(1.0);
        Self {
            capacity,
            per_second: per_second.max(0.0),
            tokens: capacity,
            last: now,
        }
    }

    /// Whether a token is there now (without taking it).
    pub fn peek(&self, now: Instant) -> bool {
        self.tokens_at(now) >= 1.0
    }

    /// Whether the bucket has refilled completely: it then holds no state worth keeping.
    pub fn is_full(&self, now: Instant) -> bool {
        self.tokens_at(now) >= self.capacity
    }

    fn tokens_at(&self, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        (self.tokens + elapsed * self.per_second).min(self.capacity)
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
        if self.tokens >= n {
            self.tokens -= n;
            true
        } else {
            false
        }
    }
}
