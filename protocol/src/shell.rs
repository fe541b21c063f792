//! The shell's part of every table, whatever its game: the stages of a game's life, and the
//! public session facts (host, presence, pause, adjournment, spectators, mutes, calls for the
//! host) folded from the table-level events the session emits. Every game embeds a
//! [`SessionFacts`] and hands it the events that are not its own ([`SessionFacts::apply`]), so
//! these are defined and folded once for all games.

use std::collections::BTreeMap;

use crate::error::ErrorCode;
use crate::event::Event;
use crate::text::{self, TextError};
use crate::types::{HostCall, PlayerId, SeatingMode};

/// A connection, as the driver numbers them.
pub type ConnectionId = u64;

/// Where the table is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Players are joining.
    Lobby,
    /// Players decide on mulligans one at a time; `kept` of them have kept.
    Mulligan {
        /// How many players have kept so far.
        kept: usize,
    },
    /// Turns are being played.
    Playing,
    /// One player or none is left, or the game was abandoned.
    Finished,
}

/// What everyone sees of a seated player besides the game: his connection, absence and mute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Presence {
    /// Whether a connection holds his seat.
    pub connected: bool,
    /// Whether he has been announced absent (`player_absent`) and has not come back.
    pub absent: bool,
    /// Whether the host has muted his chat.
    pub muted: bool,
}

/// The table's public session facts, folded from its table-level events (the session rules
/// decide them; see [`crate::session`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionFacts {
    /// The player with host rights, if a seated player holds them.
    pub host: Option<PlayerId>,
    /// Connections watching.
    pub spectators: u32,
    /// Whether the host has paused the table.
    pub paused: bool,
    /// Whether the host has adjourned the game.
    pub adjourned: bool,
    /// While adjourned: the players who have asked to resume it, in the order they asked.
    pub resume_asks: Vec<PlayerId>,
    /// Whether the host has muted the spectators' chat.
    pub spectators_muted: bool,
    /// Players the host kicked while mulligans were under way: their decision is taken as
    /// `keep`, and they are eliminated as play begins (not part of a snapshot: the session
    /// acts on it, clients see the events).
    pub kicked_in_mulligan: Vec<PlayerId>,
    /// Open calls for the host (`host_called`), oldest first, one per player, until the host
    /// answers them (`host_answered`).
    pub calls: Vec<HostCall>,
    /// Every seated player's presence, by id.
    pub(crate) presence: BTreeMap<PlayerId, Presence>,
}

impl SessionFacts {
    /// A seated player's presence (the default for an unknown id).
    pub fn presence(&self, player: PlayerId) -> Presence {
        self.presence.get(&player).copied().unwrap_or_default()
    }

    /// Seated players and their presence, by id.
    pub fn presences(&self) -> impl Iterator<Item = (PlayerId, Presence)> + '_ {
        self.presence.iter().map(|(&p, &presence)| (p, presence))
    }

    /// A player sat down (`player_joined`): present, connected, not absent, not muted.
    pub fn seat(&mut self, player: PlayerId) {
        self.presence.insert(
            player,
            Presence {
                connected: true,
                ..Presence::default()
            },
        );
    }

    /// A player gave up his seat in the lobby (`player_left` before the start): his presence
    /// and any open call of his go.
    pub fn unseat(&mut self, player: PlayerId) -> Result<(), &'static str> {
        self.known(player)?;
        self.calls.retain(|c| c.player != player);
        self.presence.remove(&player);
        Ok(())
    }

    /// Whether `player` is seated at the table (has a presence).
    pub fn is_seated(&self, player: PlayerId) -> bool {
        self.presence.contains_key(&player)
    }

    pub(crate) fn known(&mut self, player: PlayerId) -> Result<&mut Presence, &'static str> {
        self.presence.get_mut(&player).ok_or("unknown player")
    }
}

impl SessionFacts {
    /// Folds one table-level event (the session's: connections, host, spectators, pause,
    /// adjournment, mutes, kicks, chat, calls) at a table in `stage`. Any other event is not the
    /// shell's: it is refused, so a game that forgets one of its own finds out in its tests.
    pub fn apply(&mut self, event: &Event, stage: Stage) -> Result<(), &'static str> {
        match event {
            Event::ConnectionChanged { player, connected } => {
                let presence = self.known(*player)?;
                presence.connected = *connected;
                if *connected {
                    presence.absent = false;
                }
            }
            Event::PlayerAbsent { player } => self.known(*player)?.absent = true,
            Event::PlayerMuted {
                player: Some(player),
                muted,
            } => self.known(*player)?.muted = *muted,
            Event::PlayerMuted {
                player: None,
                muted,
            } => self.spectators_muted = *muted,
            Event::HostChanged { player } => {
                if let Some(player) = player {
                    self.known(*player)?;
                }
                self.host = *player;
            }
            Event::SpectatorsChanged { spectators } => self.spectators = *spectators,
            Event::TablePaused { paused } => self.paused = *paused,
            Event::TableAdjourned { adjourned } => {
                if *adjourned && !matches!(stage, Stage::Mulligan { .. } | Stage::Playing) {
                    return Err("game adjourned outside a game");
                }
                self.adjourned = *adjourned;
                self.resume_asks.clear();
                if *adjourned {
                    // Adjourning ends a pause.
                    self.paused = false;
                }
            }
            Event::ResumeRequested { player } => {
                self.known(*player)?;
                if !self.adjourned {
                    return Err("resume asked of a game that is not adjourned");
                }
                if !self.resume_asks.contains(player) {
                    self.resume_asks.push(*player);
                }
            }
            Event::PlayerKicked { player, .. } => {
                // His connection is closed with the kick.
                self.known(*player)?.connected = false;
                let in_mulligan = matches!(stage, Stage::Mulligan { .. });
                if in_mulligan && !self.kicked_in_mulligan.contains(player) {
                    self.kicked_in_mulligan.push(*player);
                }
            }
            Event::Chat {
                from: Some(player), ..
            } => {
                self.known(*player)?;
            }
            Event::Chat { from: None, .. } => {}
            Event::HostCalled { player, reason } => {
                self.known(*player)?;
                self.calls.retain(|c| c.player != *player);
                self.calls.push(HostCall {
                    player: *player,
                    reason: reason.clone(),
                });
            }
            Event::HostAnswered { player: None } => self.calls.clear(),
            Event::HostAnswered {
                player: Some(player),
            } => self.calls.retain(|c| c.player != *player),
            _ => return Err("not a table-level event"),
        }
        Ok(())
    }
}

/// How many players' asks resume an adjourned game without its host: a majority of the
/// `living` players still in the game (more than half of them; the asker counts).
pub fn resume_quorum(living: usize) -> usize {
    living / 2 + 1
}

/// The text a player sits down with, checked as `join` checks it (before anything about the
/// table): his entropy, and his name, returned normalized. The server runs it before the
/// password's hash too, so a bad name costs no hash.
pub fn check_seat_text(name: &str, entropy: &str) -> Result<String, ErrorCode> {
    // Published in `player_joined` and shown: the names' and chat's character rules.
    text::check_entropy(entropy).map_err(|_| ErrorCode::BadText)?;
    // Names are shown on every other player's screen: see `grand_melee_protocol::text`.
    let name = text::normalize_name(name).map_err(TextError::code)?;
    debug_assert!(name.chars().count() <= crate::limits::MAX_NAME_CHARS);
    if text::is_reserved_name(&name) {
        return Err(ErrorCode::ReservedName);
    }
    Ok(name)
}

/// A `start`'s seating order against the players seated in the lobby (`joined`), for every
/// game: an arranged seating names each of them exactly once; any other names nobody.
pub fn check_seating_order(
    mode: SeatingMode,
    order: &[PlayerId],
    joined: &[PlayerId],
) -> Result<(), ErrorCode> {
    let fits = if mode == SeatingMode::Arranged {
        order.len() == joined.len()
            && order
                .iter()
                .enumerate()
                .all(|(k, id)| !order[..k].contains(id) && joined.contains(id))
    } else {
        order.is_empty()
    };
    if fits {
        Ok(())
    } else {
        Err(ErrorCode::BadSeating)
    }
}
