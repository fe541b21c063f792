//! The Grand Melee server.
//!
//! - [`rules`]: the pure rules core (no I/O, no clock); every table runs on it.
//!
//! The network server (lobby, table actors, WebSocket protocol) is built on top of this core.

pub mod rules;
