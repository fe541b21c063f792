//! Wire types and codec of the Grand Melee protocol, shared by every Rust client.
//!
//! The message definitions arrive with the server issue; this crate is the place they live.
