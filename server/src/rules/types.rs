//! Small value types shared by commands, events and the table state.

use serde::{Deserialize, Serialize};

/// A player, numbered by the table in join order. Stable for the whole life of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlayerId(pub u16);

/// One of the table's simultaneous turns, numbered 0.. at the start of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TurnId(pub u8);

/// The phase indicator of a running turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Untap, upkeep and draw. Every turn begins here.
    Beginning,
    /// The main phase before combat.
    PrecombatMain,
    /// Combat: the only phase in which the player may attack.
    Combat,
    /// The main phase after combat.
    PostcombatMain,
    /// End step and cleanup.
    Ending,
}

impl Phase {
    /// Every phase in turn order.
    pub const ALL: [Phase; 5] = [
        Phase::Beginning,
        Phase::PrecombatMain,
        Phase::Combat,
        Phase::PostcombatMain,
        Phase::Ending,
    ];
}

/// Where a player stands in the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerStatus {
    /// In the game.
    Alive,
    /// Out of the game, but his position still counts for spell range.
    Eliminated,
    /// Out of the game and his position has been taken out of the ring.
    Removed,
}

impl PlayerStatus {
    /// Whether the player is still in the game.
    pub fn is_alive(self) -> bool {
        self == PlayerStatus::Alive
    }
}

/// What a turn is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnState {
    /// Held by a player who may not begin it yet (or before the game has begun).
    Waiting,
    /// Being taken, in the given phase.
    Running(Phase),
    /// Just finished; the next event passes it on or removes it.
    Ended,
}

/// Why a player left the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EliminationCause {
    /// Life fell to 0 or below.
    Life,
    /// Ten or more poison counters.
    Poison,
    /// The player conceded.
    Conceded,
    /// The host ruled the player out.
    Ruling,
}

/// Why a running turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// Its player ended it.
    Finished,
    /// Its player was eliminated during it.
    Eliminated,
    /// The host ended it.
    Ruling,
    /// It ran past the table's turn clock.
    Clock,
    /// Its player was away for longer than the grace period, so it was skipped.
    Absent,
}

/// Why the server ends a running turn by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expiry {
    /// The turn ran past the table's turn clock.
    Clock,
    /// Its player has been disconnected for longer than the grace period.
    Absent,
}

/// Why a player kept his hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeepReason {
    /// He chose to.
    Decided,
    /// His mulligan clock ran out.
    Clock,
    /// He was disconnected past the grace period.
    Absent,
    /// The host ruled it.
    Ruling,
}

impl From<Expiry> for KeepReason {
    fn from(expiry: Expiry) -> Self {
        match expiry {
            Expiry::Clock => KeepReason::Clock,
            Expiry::Absent => KeepReason::Absent,
        }
    }
}

impl From<Expiry> for TurnEndReason {
    fn from(expiry: Expiry) -> Self {
        match expiry {
            Expiry::Clock => TurnEndReason::Clock,
            Expiry::Absent => TurnEndReason::Absent,
        }
    }
}

/// Why a turn left the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnRemovalReason {
    /// It would have been passed to a player who already holds a turn.
    Merged,
    /// It was chosen to reduce the number of simultaneous turns.
    Reduced,
}

/// One line of the final result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Standing {
    /// The player.
    pub player: PlayerId,
    /// 1 for the winner; players eliminated together share a place.
    pub place: u8,
    /// Ascension mana points: one per opponent eliminated before him.
    pub mana_points: u8,
}
