//! The Grand Melee rules core: a pure, deterministic state machine.
//!
//! It seats players, deals and schedules simultaneous turns by spheres of influence, checks every
//! action against the rules (range, whose turn), eliminates players, removes positions and turns,
//! reduces the number of turns, and computes the result — exactly as `docs/RULES.md` describes.
//!
//! **Contract.** No I/O, no tokio, no clock, no global randomness. Randomness enters as the
//! table's seed ([`TableConfig::seed`]); time belongs to the session rules
//! ([`crate::session`]), which tell the core when a turn or a decision has expired.
//! [`Table::handle`] takes an [`Actor`] and a [`Command`] and returns the [`Event`](crate::Event)s it caused,
//! already applied, or an [`ErrorCode`](crate::ErrorCode) that changed nothing. [`Table::apply`] is the only place
//! the state changes, so `Table::replay(config, &events)` rebuilds the live state exactly: this is
//! what journaling and recovery rely on.
//!
//! The vocabulary is the protocol's own: [`Event`](crate::Event), the value types in the crate
//! root, and [`ErrorCode`](crate::ErrorCode) for a refused command. Reading order: [`config`]
//! (settings and the rule-set seam), [`Command`] (in the crate's vocabulary), then [`table`] (state, decisions, scheduling,
//! application).

pub mod config;
mod grand_melee;
pub mod table;

pub use crate::command::{Actor, Authority, Command};
pub use crate::shell::{Presence, SessionFacts, Stage, check_seat_text, resume_quorum};
pub use config::{ConfigError, RuleSet, SpellRange, TableConfig};
pub(crate) use table::{LeagueSeats, TableParts};
pub use table::{Player, QuickStartError, ReplayError, Seat, Table, Turn, TurnState};
