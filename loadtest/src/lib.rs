//! Bots that play whole Grand Melee games, and the benchmark harness.
//!
//! The harness arrives with its own issue; this crate is the place it lives.
