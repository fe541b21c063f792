//! Why a command was refused. A rejected command changes nothing.

use serde::{Deserialize, Serialize};

use super::types::PlayerId;

/// The reason a command was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum Rejection {
    /// The command needs the lobby (before the start).
    #[error("the game has already started")]
    GameStarted,
    /// The command needs the mulligan decisions to be under way.
    #[error("this is only possible while players decide on mulligans")]
    NotMulliganing,
    /// The command needs the game to be in play.
    #[error("the game is not in play")]
    NotPlaying,
    /// This needs a seated player, not the host's authority.
    #[error("this needs a seated player")]
    NotAPlayer,
    /// Only the host may do this.
    #[error("only the host may do this")]
    NotHost,
    /// Every seat is taken.
    #[error("the table is full")]
    TableFull,
    /// Display names must be 1–32 characters.
    #[error("a name is 1–32 characters")]
    BadName,
    /// A name with a control, format, separator, private-use or unassigned character.
    #[error("a name may not contain control or invisible characters")]
    BadText,
    /// A reserved word (`spectator`, `host`, `server`, `judge`) or a look-alike.
    #[error("that name is reserved")]
    ReservedName,
    /// Someone at the table already has this name (ignoring case).
    #[error("that name is taken at this table")]
    NameTaken,
    /// The name looks like the name of someone at the table (UTS #39 confusables).
    #[error("that name looks like the name of someone at this table")]
    ConfusableName,
    /// A game needs at least two players.
    #[error("at least two players are needed to start")]
    NotEnoughPlayers,
    /// No such player at this table.
    #[error("no player {0:?} at this table")]
    UnknownPlayer(PlayerId),
    /// The player has been eliminated and may no longer act.
    #[error("you have been eliminated")]
    Eliminated,
    /// The target has been eliminated and may no longer be attacked or targeted.
    #[error("that player has been eliminated")]
    TargetEliminated,
    /// It is another player's turn to decide on a mulligan.
    #[error("it is another player's turn to decide on a mulligan")]
    NotYourDecision,
    /// No cards left to mulligan.
    #[error("you have no cards left to mulligan")]
    NoCardsLeft,
    /// The player is not taking a turn.
    #[error("you are not taking a turn")]
    NotYourTurn,
    /// The named player is not taking a turn.
    #[error("that player is not taking a turn")]
    NoRunningTurn,
    /// Attacks happen in the combat phase.
    #[error("attacks are only possible in the combat phase")]
    NotCombatPhase,
    /// The turn is already in that phase.
    #[error("the turn is already in that phase")]
    SamePhase,
    /// A player cannot attack himself.
    #[error("you cannot attack yourself")]
    SelfAttack,
    /// The target is beyond spell range.
    #[error("that player is out of your spell range")]
    OutOfRange,
    /// An amount that is zero, too large, or would push a counter below zero.
    #[error("that amount is not allowed")]
    BadAmount,
    /// A player named twice in one ruling.
    #[error("a player is named twice")]
    DuplicatePlayer,
    /// A ruling must name at least one player.
    #[error("name at least one player")]
    NoPlayers,
}
