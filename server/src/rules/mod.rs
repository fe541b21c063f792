//! The Grand Melee rules core: a pure, deterministic state machine.
//!
//! It seats players, deals and schedules simultaneous turns by spheres of influence, checks every
//! action against the rules (range, whose turn), eliminates players, removes positions and turns,
//! reduces the number of turns, and computes the result — exactly as `docs/RULES.md` describes.
//!
//! **Contract.** No I/O, no tokio, no clock, no global randomness. Randomness enters as the
//! table's seed ([`TableConfig::seed`]); time will enter as an argument when a rule needs it.
//! [`Table::handle`] takes an [`Actor`] and a [`Command`] and returns the [`Event`]s it caused,
//! already applied, or a [`Rejection`] that changed nothing. [`Table::apply`] is the only place
//! the state changes, so `Table::replay(config, &events)` rebuilds the live state exactly: this is
//! what journaling and recovery rely on.
//!
//! Reading order: [`config`] (settings and the rule-set seam), [`types`], [`command`], [`event`],
//! [`rejection`], then [`table`] (state, decisions, scheduling, application).

pub mod command;
pub mod config;
pub mod event;
pub mod rejection;
pub mod table;
pub mod types;

pub use command::{Actor, Command, Ruling};
pub use config::{ConfigError, ReductionPolicy, RuleSet, SpellRange, TableConfig};
pub use event::Event;
pub use rejection::Rejection;
pub use table::{
    MAX_AMOUNT, MAX_NAME_CHARS, Player, QuickStartError, ReplayError, Seat, Stage, Table, Turn,
};
pub use types::{
    EliminationCause, Expiry, KeepReason, Phase, PlayerId, PlayerStatus, Standing, TurnEndReason,
    TurnId, TurnRemovalReason, TurnState,
};
