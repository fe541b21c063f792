//! Error codes carried by the `error` message, and the codec's and mirror's own errors.

use serde::{Deserialize, Serialize};

use crate::types::{PlayerId, TurnId};

/// Why a request was refused (or, without `reply_to`, what went wrong with the connection).
/// One code per rejection of the rules core, plus the session's and the transport's own.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorCode {
    /// The frame was not a MessagePack map of a known request with the right fields.
    BadMessage,
    /// The protocol version in `hello` is not supported.
    UnsupportedVersion,
    /// The first request must be `hello`.
    HelloRequired,
    /// The connection already sits at or watches a table; `leave` first.
    AlreadyInTable,
    /// The request needs a table: `join`, `watch` or `resume` first.
    NotInTable,
    /// No table has that id.
    UnknownTable,
    /// The table's password is missing or wrong.
    WrongPassword,
    /// The seat token does not match a seat at that table.
    BadToken,
    /// A table setting is out of range (seats, spell range, starting life, password length,
    /// clocks, spectators).
    BadSettings,
    /// Every seat is taken.
    TableFull,
    /// A name must be 1–32 characters (see `bad_text` for which characters).
    BadName,
    /// Someone at the table already has that name.
    NameTaken,
    /// A game needs at least two players.
    NotEnoughPlayers,
    /// The request needs the lobby, but the game has started.
    GameStarted,
    /// The request is only possible while players decide on mulligans.
    NotMulliganing,
    /// The game is not in play.
    NotPlaying,
    /// Only the host may do this.
    NotHost,
    /// The request needs a seated player (a spectator or the host's authority cannot do it).
    NotAPlayer,
    /// No such player at this table.
    UnknownPlayer,
    /// You have been eliminated and may no longer act.
    Eliminated,
    /// The target has been eliminated.
    TargetEliminated,
    /// It is another player's turn to decide on a mulligan.
    NotYourDecision,
    /// No cards left to mulligan.
    NoCardsLeft,
    /// You are not taking a turn.
    NotYourTurn,
    /// The named player is not taking a turn.
    NoRunningTurn,
    /// Attacks are only possible in the combat phase.
    NotCombatPhase,
    /// The turn is already in that phase.
    SamePhase,
    /// A player cannot attack himself.
    SelfAttack,
    /// The target is beyond spell range.
    OutOfRange,
    /// The amount is zero, too large, or would push a counter below zero.
    BadAmount,
    /// A player is named twice in one ruling.
    DuplicatePlayer,
    /// A ruling must name at least one player.
    NoPlayers,
    /// The chat line is longer than 500 characters (or empty).
    ChatTooLong,
    /// Too many requests; slow down and retry later.
    RateLimited,
    /// The server cannot take this request now (too many tables or connections).
    ServerBusy,
    /// The host has paused the table; game requests wait until he resumes it.
    TablePaused,
    /// The host has adjourned the game; it waits until he (or a quorum of players) resumes it.
    TableAdjourned,
    /// The game is not adjourned: there is nothing to resume.
    NotAdjourned,
    /// You have already asked to resume this adjourned game.
    AlreadyAsked,
    /// No finished game with that id is kept.
    UnknownReplay,
    /// The server's journal could not be read or written; try again later.
    StorageFailed,
    /// You were removed from this table by the host and may not come back.
    Banned,
    /// The host has muted you at this table: your chat lines are refused.
    Muted,
    /// The table, or your address, has as many spectators as allowed.
    SpectatorsFull,
    /// The name is a reserved word (spectator, host, server, judge) or looks like one.
    ReservedName,
    /// The name looks like another name at this table (same letters, or characters that look alike).
    ConfusableName,
    /// Your address has as many open tables, or has created as many tables this minute, as allowed.
    TooManyTables,
    /// The text contains a control, invisible or line-breaking character.
    BadText,
    /// CR 807.2b (attack left): only the opponent nearest to the attacker's left, one seat away,
    /// may be attacked.
    NotAttackLeft,
    /// This table does not play Combat with Dice.
    DiceOff,
    /// No attack of that player on you was blocked in his current combat.
    NoCounterStrike,
    /// No league has that id.
    UnknownLeague,
    /// The member token does not belong to a member of that league.
    NotAMember,
    /// The league has as many members as a league takes
    /// ([`MAX_LEAGUE_MEMBERS`](crate::MAX_LEAGUE_MEMBERS)): no one more can join it.
    LeagueFull,
    /// Only the league's organiser (with the organiser secret) may do this.
    NotOrganiser,
    /// A league table's seats are taken by the league's members with their member token.
    LeagueSeat,
    /// That member already sits at this table.
    AlreadySeated,
    /// League rule: nobody plays the same opponent twice in a row in two-player games.
    SameOpponent,
    /// Only the player whose deck is furthest behind (5 points or more) decides who plays first.
    NotDecider,
    /// The member has not registered a deck yet.
    NoDeck,
    /// The member already has a deck in this league.
    DeckRegistered,
    /// The option cannot be bought as asked (a count out of range, lands not in pairs, a set already owned).
    BadPurchase,
    /// A limit of the seed forbids it (four expansion sets, four copies, fifteen sideboard cards).
    PurchaseLimit,
    /// The deck would hold more than 70 cards: take some out (`remove`).
    DeckFull,
    /// The deck has not enough unspent mana points.
    NotEnoughPoints,
    /// The losing-streak remedy is not open to this deck.
    NoRemedy,
    /// The `start` request's seating is not one the table can take: an `order` that is not
    /// every seated player exactly once, or an `order` without `arranged` (or none with it).
    BadSeating,
    /// There is no open call for the host to answer (from that player).
    NoOpenCall,
    /// Magic Tech: not possible in this phase of the turn (or not in one's own turn).
    WrongPhase,
    /// Magic Tech: no card in play has that number (or it is not the kind of card the request needs).
    UnknownCard,
    /// Magic Tech: the card belongs to the other player.
    NotYourCard,
    /// Magic Tech: the turn's deployments or land drops are used up.
    LimitReached,
    /// Magic Tech: the table has given out every card number (0–65,534,
    /// [`MAX_CARD_NUMBER`](crate::MAX_CARD_NUMBER)): no more cards can be deployed.
    CardNumbersUsedUp,
    /// Magic Tech: too little unspent mana, or too few counters to reveal the card.
    NotEnoughMana,
    /// Magic Tech: the card cannot do that as it stands (face up or down, tapped, its type, where it stands), or its declaration is invalid. Mountain Magic: no such card in one's forces, or it cannot do that now (unpowered, used this turn, no stored use, not a creature).
    BadCard,
    /// Magic Tech: the declarations forbid that block (evasion, a guard's card, a tapped or repeated blocker).
    IllegalBlock,
    /// Magic Tech: every player must declare his deck size before the start.
    NoDeckSize,
    /// Magic Tech: there is no mission waiting for blocks (or one is, and must be blocked first).
    NoMission,
    /// Magic Tech: there is no correction of the other player's to answer (or one is already open).
    NoProposal,
    /// The request needs a watching connection (the table's display), not a seated one.
    NotWatching,
    /// The signal's payload is larger than 12 000 bytes.
    SignalTooLarge,
    /// No camera link joins you and that peer now (out of range, a camera off, not at this
    /// table, yourself).
    NotLinked,
    /// Mountain Magic: no such place on the mountain, or the card may not go there.
    IllegalPlacement,
    /// Mountain Magic: not a path down the complete mountain (seven places, top row first, each
    /// touching the one above).
    BadPath,
    /// Mountain Magic: the land just drawn cannot go there (its colours, what the card still needs).
    BadMana,
    /// Mountain Magic: not a target that card can take.
    BadTarget,
    /// Mountain Magic: not a day (`YYYY-MM-DD`, a date that exists, or `today`).
    BadDay,
    /// Mountain Magic: a climb of today's mountain cannot be watched or replayed before its
    /// day is over (it would show the day's deal to those still to climb it).
    DayNotOver,
    /// Mountain Magic: the day of this climb of today's mountain is over: it can no longer be
    /// joined, started or played.
    DayOver,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = <Self as strum::VariantArray>::VARIANTS;

    /// The wire name (`"out_of_range"`, …): serde's (the same snake_case rule, held equal by
    /// the codec tests).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// A one-line meaning, fit for a log line or a player's screen.
    pub fn description(self) -> &'static str {
        match self {
            ErrorCode::BadMessage => {
                "the message is not a MessagePack map of a known request with valid fields"
            }
            ErrorCode::UnsupportedVersion => "the protocol version is not supported",
            ErrorCode::HelloRequired => "the first message must be hello",
            ErrorCode::AlreadyInTable => "you already sit at or watch a table; leave it first",
            ErrorCode::NotInTable => "join, watch or resume a table first",
            ErrorCode::UnknownTable => "there is no table with that id",
            ErrorCode::WrongPassword => "the table's password is missing or wrong",
            ErrorCode::BadToken => "the seat token does not match a seat at that table",
            ErrorCode::BadSettings => "a table setting is out of its allowed range",
            ErrorCode::TableFull => "the table is full",
            ErrorCode::BadName => "a name is 1–32 characters",
            ErrorCode::NameTaken => "that name is taken at this table",
            ErrorCode::NotEnoughPlayers => "at least two players are needed to start",
            ErrorCode::GameStarted => "the game has already started",
            ErrorCode::NotMulliganing => "this is only possible while players decide on mulligans",
            ErrorCode::NotPlaying => "the game is not in play",
            ErrorCode::NotHost => "only the host may do this",
            ErrorCode::NotAPlayer => "this needs a seated player",
            ErrorCode::UnknownPlayer => "there is no such player at this table",
            ErrorCode::Eliminated => "you have been eliminated",
            ErrorCode::TargetEliminated => "that player has been eliminated",
            ErrorCode::NotYourDecision => "it is another player's turn to decide on a mulligan",
            ErrorCode::NoCardsLeft => "you have no cards left to mulligan",
            ErrorCode::NotYourTurn => "you are not taking a turn",
            ErrorCode::NoRunningTurn => "that player is not taking a turn",
            ErrorCode::NotCombatPhase => "attacks are only possible in the combat phase",
            ErrorCode::SamePhase => "the turn is already in that phase",
            ErrorCode::SelfAttack => "you cannot attack yourself",
            ErrorCode::OutOfRange => "that player is out of your spell range",
            ErrorCode::BadAmount => "that amount is not allowed",
            ErrorCode::DuplicatePlayer => "a player is named twice",
            ErrorCode::NoPlayers => "name at least one player",
            ErrorCode::ChatTooLong => "a chat line is 1–500 characters",
            ErrorCode::RateLimited => "too many requests; slow down",
            ErrorCode::ServerBusy => "the server is busy; try again later",
            ErrorCode::TablePaused => "the host has paused the table",
            ErrorCode::TableAdjourned => {
                "the game is adjourned: the host (or a majority of the players) resumes it"
            }
            ErrorCode::NotAdjourned => "the game is not adjourned",
            ErrorCode::AlreadyAsked => "you have already asked to resume the game",
            ErrorCode::UnknownReplay => "no finished game with that id is kept",
            ErrorCode::StorageFailed => {
                "the server could not read or write its journal; try again later"
            }
            ErrorCode::Banned => {
                "the host has removed you from this table and you may not come back"
            }
            ErrorCode::Muted => "the host has muted you at this table",
            ErrorCode::SpectatorsFull => {
                "this table (or your address) has as many spectators as allowed"
            }
            ErrorCode::ReservedName => {
                "that name is reserved (spectator, host, server, judge) or looks like one"
            }
            ErrorCode::ConfusableName => {
                "that name looks like the name of someone already at this table"
            }
            ErrorCode::TooManyTables => {
                "your address has opened as many tables as allowed; join one or wait a minute"
            }
            ErrorCode::BadText => {
                "names and chat may not contain control, invisible or line-breaking characters"
            }
            ErrorCode::NotAttackLeft => {
                "you may attack only the opponent on your left, one seat away (CR 807.2b)"
            }
            ErrorCode::DiceOff => "this table does not play Combat with Dice",
            ErrorCode::NoCounterStrike => {
                "no attack of that player on you was blocked in his current combat"
            }
            ErrorCode::UnknownLeague => "there is no league with that id",
            ErrorCode::NotAMember => "that member token does not belong to a member of this league",
            ErrorCode::LeagueFull => {
                "this league has as many members as a league takes (1,000): start another league"
            }
            ErrorCode::NotOrganiser => "only the league's organiser may do this",
            ErrorCode::LeagueSeat => "this is a league table: join with your league member token",
            ErrorCode::AlreadySeated => {
                "you already sit at this table, or (a league member) at another league table whose game has not ended"
            }
            ErrorCode::SameOpponent => {
                "league rule: you may not play the same opponent twice in a row in a two-player game"
            }
            ErrorCode::NotDecider => {
                "only the player furthest behind in deck power decides who plays first"
            }
            ErrorCode::NoDeck => "register your deck first",
            ErrorCode::DeckRegistered => "you already have a deck in this league",
            ErrorCode::BadPurchase => "that option cannot be bought as asked",
            ErrorCode::PurchaseLimit => "a limit of the league's rules forbids that purchase",
            ErrorCode::DeckFull => "a deck holds at most 70 cards",
            ErrorCode::NotEnoughPoints => "your deck has not enough unspent mana points",
            ErrorCode::NoRemedy => "the losing-streak remedy is not open to this deck",
            ErrorCode::BadSeating => {
                "an arranged seating must list every seated player exactly once (and only with arranged)"
            }
            ErrorCode::NoOpenCall => "there is no open call for the host to answer",
            ErrorCode::WrongPhase => "that is not possible in this phase",
            ErrorCode::UnknownCard => "there is no such card in play",
            ErrorCode::NotYourCard => "that card is not yours",
            ErrorCode::LimitReached => "you have used up this turn's deployments or land drops",
            ErrorCode::CardNumbersUsedUp => {
                "the table has given out every card number (0–65,534): no more cards can be deployed"
            }
            ErrorCode::NotEnoughMana => "not enough mana (or counters) for that",
            ErrorCode::BadCard => "that card cannot do that as it stands",
            ErrorCode::IllegalBlock => "the declared cards forbid that block",
            ErrorCode::NoDeckSize => "every player must declare his deck size first",
            ErrorCode::NoMission => "no mission is waiting for blocks (or one is)",
            ErrorCode::NoProposal => "there is no proposal to answer (or one is open)",
            ErrorCode::NotWatching => {
                "only a watching connection (the table's display) may do this, not a seated one"
            }
            ErrorCode::SignalTooLarge => "the signal's payload is larger than 12000 bytes",
            ErrorCode::NotLinked => {
                "no camera link joins you and that peer now (out of range, camera off, another table)"
            }
            ErrorCode::IllegalPlacement => "the card may not go there",
            ErrorCode::BadPath => "not a path down the mountain",
            ErrorCode::BadMana => "the mana cannot go there",
            ErrorCode::BadTarget => "not a target for that card",
            ErrorCode::BadDay => "not a day: write it YYYY-MM-DD (UTC), or today",
            ErrorCode::DayNotOver => {
                "a climb of today's mountain can be watched and replayed once its day is over \
                 (00:00 UTC the next day)"
            }
            ErrorCode::DayOver => "the day of this climb is over: it can no longer be played",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.description())
    }
}

/// The rules core refuses a command with the code the client receives.
impl std::error::Error for ErrorCode {}

/// A frame that is not a valid message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The frame is larger than the limit; it was not parsed.
    #[error("message of {size} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// The frame's size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The frame holds one message followed by more bytes.
    #[error("{0} bytes after the end of the message")]
    TrailingBytes(usize),
    /// The bytes are not MessagePack, or not a known message, or a field is missing or of the
    /// wrong type.
    #[error("malformed message: {0}")]
    Malformed(String),
}

impl DecodeError {
    /// The error code the server answers a bad frame with.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::BadMessage
    }
}

/// An event that cannot be applied to a [`TableView`](crate::TableView).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// The event is not the next one: events were missed (or arrived out of order). Ask for a
    /// fresh `snapshot`.
    #[error("sequence gap: expected event {expected}, got {got}")]
    Gap {
        /// `view.seq + 1`.
        expected: u64,
        /// The sequence number of the event.
        got: u64,
    },
    /// The event names a player the view does not know.
    #[error("unknown player {0}")]
    UnknownPlayer(PlayerId),
    /// The event names a turn the view does not know.
    #[error("unknown turn {0}")]
    UnknownTurn(TurnId),
    /// The event does not fit the view's state (wrong stage, bad seating, …).
    #[error("event does not fit the table: {0}")]
    Invalid(&'static str),
}
