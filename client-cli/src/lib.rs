//! The terminal client for one Grand Melee seat (and for watching a table).
//!
//! The client arrives with its own issue; this crate is the place it lives.
