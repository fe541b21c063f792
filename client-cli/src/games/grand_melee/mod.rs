//! Grand Melee, as the terminal client shows and plays it: its words for its events
//! ([`words`]), the player's situation ([`situation`]) and its typed commands ([`commands`]).

pub mod commands;
pub mod situation;
pub mod words;

pub use situation::Situation;
