//! What happened at a table. The state of a table is the fold of its events: applying them in
//! order to a new table reproduces the live state exactly.

use serde::{Deserialize, Serialize};

use super::types::{
    EliminationCause, KeepReason, Phase, PlayerId, Standing, TurnEndReason, TurnId,
    TurnRemovalReason,
};

/// One fact about a table, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// A player took a seat in the lobby.
    PlayerJoined {
        /// His id (join order).
        player: PlayerId,
        /// His display name.
        name: String,
    },
    /// A player gave up his seat before the start.
    PlayerLeft {
        /// Who.
        player: PlayerId,
    },
    /// The host started the game: seating, first player and starting turns are fixed.
    GameStarted {
        /// Players in seating order (seat 0 first; the next seat is to the left).
        seating: Vec<PlayerId>,
        /// Who plays (and decides on mulligans) first.
        first_player: PlayerId,
        /// Holders of the starting turns, turn 0 first.
        turn_holders: Vec<PlayerId>,
    },
    /// The deciding player mulliganed.
    Mulliganed {
        /// Who.
        player: PlayerId,
        /// His new hand size.
        hand_size: u8,
    },
    /// The deciding player kept; after the last keep, play begins.
    Kept {
        /// Who.
        player: PlayerId,
        /// The hand size he kept.
        hand_size: u8,
        /// Why: his own decision, his mulligan clock, his absence, or the host's ruling.
        reason: KeepReason,
    },
    /// A player began the turn he holds.
    TurnBegan {
        /// Which turn.
        turn: TurnId,
        /// Whose.
        player: PlayerId,
    },
    /// The phase indicator of a running turn moved.
    PhaseChanged {
        /// Which turn.
        turn: TurnId,
        /// The new phase.
        phase: Phase,
    },
    /// A player attacked an opponent in range.
    Attacked {
        /// The player taking his turn.
        attacker: PlayerId,
        /// The defending player.
        defender: PlayerId,
        /// Combat damage dealt; the defender's life goes down by it.
        damage: u32,
        /// Poison counters dealt.
        poison: u32,
    },
    /// A spell or ability dealt damage.
    DamageDealt {
        /// Who dealt it.
        source: PlayerId,
        /// Who took it.
        target: PlayerId,
        /// How much.
        amount: u32,
    },
    /// A life total was set (a player's own change, or a ruling).
    LifeChanged {
        /// Whose.
        player: PlayerId,
        /// The new total.
        life: i32,
    },
    /// Poison counters were set.
    PoisonChanged {
        /// Whose.
        player: PlayerId,
        /// The new count.
        poison: u32,
    },
    /// Players left the game together.
    Eliminated {
        /// Who (their positions still count for range until removed).
        players: Vec<PlayerId>,
        /// Why.
        cause: EliminationCause,
    },
    /// A turn is marked to be removed when it ends (a pending reduction).
    TurnMarkedForRemoval {
        /// Which turn.
        turn: TurnId,
    },
    /// A pending reduction was made unnecessary by a merge; the turn will pass again.
    TurnRemovalCancelled {
        /// Which turn.
        turn: TurnId,
    },
    /// A running turn ended; the next event passes it on or removes it.
    TurnEnded {
        /// Which turn.
        turn: TurnId,
        /// Whose it was.
        player: PlayerId,
        /// Why.
        reason: TurnEndReason,
    },
    /// A turn passed to the left; its new holder waits until he may begin it.
    TurnPassed {
        /// Which turn.
        turn: TurnId,
        /// Previous holder.
        from: PlayerId,
        /// New holder.
        to: PlayerId,
    },
    /// A turn left the table: one fewer simultaneous turn.
    TurnRemoved {
        /// Which turn.
        turn: TurnId,
        /// Its last holder.
        player: PlayerId,
        /// Why.
        reason: TurnRemovalReason,
    },
    /// Eliminated players' positions were taken out of the ring.
    PositionsRemoved {
        /// Whose positions, in ring order.
        players: Vec<PlayerId>,
    },
    /// One player or none is left.
    GameOver {
        /// Everyone's place and mana points, best place first.
        standings: Vec<Standing>,
    },
}
