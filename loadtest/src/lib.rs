//! Bots that play whole Grand Melee games over real WebSockets, and the benchmark harness that
//! measures the server against a bare fan-out relay.
//!
//! Reading order:
//! - [`model`]: a bot's view of its table: the protocol's one fold (`Mirror`), asked the
//!   rules core's own questions to choose legal moves.
//! - [`link`]: a bot's WebSocket (`connect`), `BotError`, the answer patience.
//! - [`live`]: a fleet's live counts and the signals a bot fires into them.
//! - [`witness`]: what every bot was told, event by event, to hold against the server's journal.
//! - [`bot`]: one bot at the server: session, table, the move policy ([`bot::choose_move`]).
//! - [`magic_tech_bot`]: two bots a Magic Tech table, playing random legal games (the rules
//!   core's `legal_moves`) through the server (`bots --game magic_tech`).
//! - [`mountain_magic_bot`]: one bot a Mountain Magic table, climbing with a simple policy
//!   through the server (`bots --game mountain_magic`).
//! - [`colyseus`]: Colyseus 0.16 as a target: its installation (npm, on first use) and the
//!   client side of its protocol (matchmaking, `JOIN_ROOM`, `room.send`, broadcasts).
//! - [`relay`] and [`relay_bot`]: the baseline relay and its bots (same traffic shape, no game;
//!   against Colyseus, the same bots in its protocol).
//! - [`floor`]: the relay's protocol delivered by one thread with bare `write` calls (the cost
//!   of the kernel alone), for the same relay bots.
//! - [`tls`]: `bench --tls`: a fresh self-signed certificate, the relay's and the floor's
//!   rustls server side and the bots' client side that trusts it alone.
//! - [`tracker`]: action → last-seat delivery, in one process on one monotonic clock.
//! - [`stats`]: counters and HDR histograms, taken per measurement window, mergeable across
//!   processes.
//! - [`fleet`]: every bot of one process, launched, steered (think time, windows) and stopped.
//! - [`mod@play`]: a whole run in this process for tests: tables of bots play their games to the
//!   end against one server or a cluster, and the outcome is returned.
//! - [`procfs`]: CPU time and resident memory of a process, from `/proc`.
//! - [`capacity`]: the search for the highest load within the latency bound (bisection on the
//!   think time), as a pure decision procedure.
//! - [`mod@bench`]: the benchmark: rounds of server, relay, floor and Colyseus, each started fresh, the
//!   bots spread over worker processes; a reference step and a capacity search per target, and
//!   the ratios with their spread over the rounds.
//! - [`report`]: the human-readable tables and the JSON.
//! - [`cli`]: the command line of `grand-melee-loadtest`.

pub mod bench;
pub mod bot;
pub mod capacity;
pub mod cli;
pub mod colyseus;
pub mod evidence;
pub mod fleet;
pub mod floor;
pub mod growth;
pub mod link;
pub mod live;
pub mod magic_tech_bot;
pub mod model;
pub mod mountain_magic_bot;
pub mod play;
pub mod procfs;
pub mod progress;
pub mod relay;
pub mod relay_bot;
pub mod report;
pub mod rng;
pub mod stats;
pub mod tls;
pub mod tracker;
pub mod witness;

pub use play::{PlayConfig, PlayError, PlayOutcome, TableOutcome, play};

/// Raises this process's soft limit on open files as far as the hard limit allows and returns
/// the new soft limit (thousands of connections need thousands of descriptors).
pub fn raise_open_file_limit() -> std::io::Result<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
}
