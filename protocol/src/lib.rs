//! The games, pure: the wire vocabulary, the shell every table shares ([`session`], [`shell`]),
//! the game seam ([`game`]: what a game is to the shell) and Grand Melee behind it ([`rules`]),
//! the one fold every table runs on and every client mirrors ([`Mirror`]), and the MessagePack
//! codec. No I/O: the server is the driver around it, as `quinn` drives `quinn-proto`.
//!
//! Every message is one binary WebSocket frame holding one MessagePack map with named fields
//! and a `type` tag ([`ClientMessage`], [`ServerMessage`]); nested enums carrying data are
//! tagged by `kind` ([`Event`], [`Ruling`]). Field names and enum values are snake_case, ids are
//! plain integers (players `u16`, turns `u8`) and UUIDs are strings, so any stock MessagePack
//! library can read them. `PROTOCOL.md` at the top of the repository is the full description.
//!
//! A client builds a [`Mirror`] from the `snapshot` it receives and folds every `events` batch
//! into it with [`Mirror::apply_batch`] — the server's own [`rules::Table::apply`]; a gap in the
//! sequence numbers means events were missed, and the client asks for a fresh `snapshot`.

pub mod camera;
pub mod camera_links;
mod client;
mod codec;
mod command;
pub mod dice;
mod error;
pub mod errors_of;
mod event;
pub mod examples;
pub mod game;
pub mod games;
pub mod league;
pub mod limit;
mod limits;
pub mod magic_tech;
pub mod magic_tech_types;
mod mirror;
pub mod mountain_magic;
pub mod mountain_magic_types;
pub mod rules;
mod server;
pub mod session;
pub mod shell;
pub mod text;
mod types;
mod view;

pub use camera::{CameraPeer, IceServer, Peer};
pub use client::ClientMessage;
pub use codec::{
    decode_client, decode_event, decode_server, encode_client, encode_event, encode_server,
    peek_request,
};
pub use error::{ApplyError, DecodeError, ErrorCode};
pub use event::Event;
pub use limits::*;
pub use mirror::{Mirror, stage_name};
pub use server::{ReplaySummary, ServerMessage, TableSummary};
pub use types::GameKind;
pub use types::{
    EliminationCause, Expiry, HostCall, KeepReason, MulliganMode, OrganiserSecret, Phase, PlayerId,
    PlayerStatus, Reduction, RollResult, RuleSet, Ruling, SeatToken, SeatingMode, StageName,
    Standing, TableId, TurnEndReason, TurnId, TurnRemovalReason, TurnStateName, UuidFormError,
    parse_uuid,
};
pub use uuid::Uuid;
pub use view::{PlayerView, Settings, TableView, TurnView};
