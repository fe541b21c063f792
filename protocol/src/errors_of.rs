//! Which error codes each request can answer: one declared table, read from the server's code
//! paths (`server/src/connection.rs`, `room.rs`, `lobby.rs`, `leagues.rs`, `mountain.rs`, the
//! [`session`](crate::session) and each game's `decide`). The server checks every error it
//! sends against it (an undeclared pair is counted in `gm_undeclared_error_codes_total` and
//! logged), PROTOCOL.md's section "Errors of every request" is rendered from it
//! ([`render_markdown`]), and `tests/tests/error_codes*.rs` drive each pair a test is named for.
//!
//! Adding a code to a request is one line in [`REQUESTS`]: the code and how it is covered —
//! the socket-level test (in `tests/tests/error_codes*.rs`) that drives it, why it cannot be
//! reached, or that no test drives it yet (which the coverage test reports, failing).

use crate::ErrorCode::{self, *};

/// How a declared (request, code) pair is known to be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// The test of that name in `tests/tests/error_codes*.rs` drives it through a socket.
    Driven(&'static str),
    /// The server's code can answer it, but no test drives it yet: the coverage test lists it
    /// and fails.
    NotYetDriven,
    /// No client can make the server answer it at will (the journal failing, a node answering
    /// what this one cannot read, the moment of a takeover), for the reason given.
    Unreachable(&'static str),
}

/// One declared code of a request.
pub type Declared = (ErrorCode, Coverage);

/// What a group of requests (or one request) may answer.
#[derive(Debug, Clone, Copy)]
pub struct Errors {
    /// The `type` tags, or a name of the group for the common sets.
    pub request: &'static str,
    /// The codes, each with its coverage.
    pub codes: &'static [Declared],
}

const SESSION: Coverage = Coverage::Driven("session_requests");
const SEATS: Coverage = Coverage::Driven("seats_and_lobby");
const PLAY: Coverage = Coverage::Driven("grand_melee_play");
const HOST: Coverage = Coverage::Driven("host_requests");
/// Cluster mode: a table whose node is gone, before another takes it over.
const MOVING: Coverage = Coverage::Driven("a_table_on_a_node_gone");
/// The caps on tables and creations, and bans.
const CAPS: Coverage = Coverage::Driven("lobby_caps_and_bans");
/// The password hashing pool's queue, full.
const HASHING: Coverage = Coverage::Driven("password_hashing_busy");
/// Today's mountain, before and after its day's end.
const DAYS: Coverage = Coverage::Driven("todays_mountain");
/// Calls for the host and the cameras' requests.
const CAMERAS: Coverage = Coverage::Driven("cameras_and_calls");
/// What the requests every game shares answer at a Magic Tech table.
const MAGIC_TECH: Coverage = Coverage::Driven("magic_tech_tables");
/// The league requests' refusals, and a league table's.
const LEAGUES: Coverage = Coverage::Driven("leagues_and_decks");
/// A Grand Melee game's own refusals.
const RULES: Coverage = Coverage::Driven("grand_melee_rules");
/// The session's refusals of a game request before its game sees it.
const BEFORE_THE_GAME: Coverage = Coverage::Driven("game_requests_before_their_game");

/// Why `storage_failed` cannot be caused by a client at `watch` and `resume`.
const UNREADABLE_NODE: &str =
    "only in cluster mode, when the node running the table answers what this node cannot read";
/// Why `storage_failed` cannot be caused by a client at `join`.
const STORE_OR_NODE: &str = "only when the store fails, or in cluster mode when the node \
                             running the table answers what this node cannot read";
/// Magic Tech requests, in `tests/tests/error_codes_magic_tech.rs`.
const MT: Coverage = Coverage::Driven("magic_tech_requests");

/// Codes every request may answer, whatever its `type` (also a frame whose `type` is unknown).
pub const ANY_REQUEST: &[Declared] = &[
    (BadMessage, SESSION),
    (RateLimited, SESSION),
    (HelloRequired, SESSION),
];

/// Codes every table request (every request not in [`SESSION_REQUESTS`]) may answer: without
/// a table `not_in_table`; in cluster mode `server_busy` while the table moves to another node.
pub const ANY_TABLE_REQUEST: &[Declared] = &[
    (NotInTable, SESSION),
    (
        ServerBusy,
        // `proxy.rs`, `Target::Pending`: a node's death is no client's doing, and the window
        // lasts a few round trips to the engine, which no test can time.
        Coverage::Unreachable(
            "only in cluster mode, in the moment between this node claiming a table whose node \
             died and the table's actor starting here",
        ),
    ),
];

/// The requests that need no table; every other request is a table request.
pub const SESSION_REQUESTS: &[&str] = &[
    "hello",
    "list_tables",
    "create_table",
    "join",
    "watch",
    "resume",
    "list_replays",
    "get_replay",
    "create_league",
    "list_leagues",
    "join_league",
    "get_league",
    "get_deck",
    "register_deck",
    "buy",
    "take_remedy",
    "mountain_magic.standings",
];

/// The codes a game request (one the table's game decides) may answer before its game sees it.
macro_rules! game_request {
    ($($more:expr),* $(,)?) => {
        &[
            (NotAPlayer, BEFORE_THE_GAME),
            (TableAdjourned, BEFORE_THE_GAME),
            (TablePaused, BEFORE_THE_GAME),
            $($more),*
        ]
    };
}

/// Every request's own codes, besides [`ANY_REQUEST`] and (for table requests)
/// [`ANY_TABLE_REQUEST`], in the order of `ClientMessage`.
pub const REQUESTS: &[Errors] = &[
    Errors {
        request: "hello",
        codes: &[(UnsupportedVersion, SESSION)],
    },
    Errors {
        request: "list_tables",
        codes: &[],
    },
    Errors {
        request: "create_table",
        codes: &[
            (BadName, SESSION),
            (BadText, SESSION),
            (BadSettings, SESSION),
            (BadDay, DAYS),
            (TooManyTables, CAPS),
            (ServerBusy, CAPS),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
            (UnknownLeague, CAPS),
            (NotOrganiser, CAPS),
        ],
    },
    Errors {
        request: "join",
        codes: &[
            (AlreadyInTable, SEATS),
            (UnknownTable, SESSION),
            (WrongPassword, SEATS),
            (ServerBusy, HASHING),
            (Banned, CAPS),
            (GameStarted, SEATS),
            (TableFull, SEATS),
            (DayOver, DAYS),
            (BadName, SEATS),
            (BadText, SEATS),
            (NameTaken, SEATS),
            (ReservedName, SEATS),
            (ConfusableName, SEATS),
            (LeagueSeat, LEAGUES),
            (NotAMember, LEAGUES),
            (NoDeck, LEAGUES),
            (AlreadySeated, LEAGUES),
            (SameOpponent, LEAGUES),
            (StorageFailed, Coverage::Unreachable(STORE_OR_NODE)),
        ],
    },
    Errors {
        request: "watch",
        codes: &[
            (AlreadyInTable, SEATS),
            (UnknownTable, SESSION),
            (WrongPassword, SEATS),
            (ServerBusy, HASHING),
            (Banned, CAPS),
            (SpectatorsFull, SEATS),
            (DayNotOver, DAYS),
            (StorageFailed, Coverage::Unreachable(UNREADABLE_NODE)),
        ],
    },
    Errors {
        request: "resume",
        codes: &[
            (AlreadyInTable, SEATS),
            (UnknownTable, SESSION),
            (BadToken, SEATS),
            (ServerBusy, MOVING),
            (StorageFailed, Coverage::Unreachable(UNREADABLE_NODE)),
        ],
    },
    Errors {
        request: "leave",
        codes: &[],
    },
    Errors {
        request: "start",
        codes: game_request![
            (NotHost, SEATS),
            (GameStarted, SEATS),
            (NotEnoughPlayers, SEATS),
            (BadSeating, SEATS),
            (UnknownPlayer, SEATS),
            (NotDecider, LEAGUES),
            (SameOpponent, LEAGUES),
            (DayOver, DAYS),
            (NoDeckSize, MAGIC_TECH),
        ],
    },
    Errors {
        request: "snapshot",
        codes: &[],
    },
    Errors {
        request: "choose_first",
        codes: game_request![
            (GameStarted, RULES),
            (NotDecider, SEATS),
            (UnknownPlayer, LEAGUES),
        ],
    },
    Errors {
        request: "mulligan",
        codes: game_request![
            (NotMulliganing, SEATS),
            (NotYourDecision, RULES),
            (NoCardsLeft, RULES),
        ],
    },
    Errors {
        request: "keep",
        codes: game_request![(NotMulliganing, SEATS), (NotYourDecision, RULES)],
    },
    Errors {
        request: "set_phase",
        codes: game_request![
            (NotPlaying, SEATS),
            (Eliminated, RULES),
            (NotYourTurn, PLAY),
            (SamePhase, PLAY),
        ],
    },
    Errors {
        request: "end_turn",
        codes: game_request![
            (NotPlaying, SEATS),
            (Eliminated, RULES),
            (NotYourTurn, RULES),
            (NoMission, MAGIC_TECH),
        ],
    },
    Errors {
        request: "attack",
        codes: game_request![
            (NotPlaying, RULES),
            (Eliminated, RULES),
            (NotYourTurn, RULES),
            (NotCombatPhase, PLAY),
            (SelfAttack, PLAY),
            (NotAttackLeft, RULES),
            (UnknownPlayer, PLAY),
            (TargetEliminated, RULES),
            (OutOfRange, RULES),
            (BadAmount, PLAY),
        ],
    },
    Errors {
        request: "deal_damage",
        codes: game_request![
            (NotPlaying, RULES),
            (Eliminated, RULES),
            (UnknownPlayer, PLAY),
            (TargetEliminated, RULES),
            (OutOfRange, RULES),
            (BadAmount, PLAY),
        ],
    },
    Errors {
        request: "change_life",
        codes: game_request![(NotPlaying, RULES), (Eliminated, RULES), (BadAmount, PLAY)],
    },
    Errors {
        request: "change_poison",
        codes: game_request![(NotPlaying, RULES), (Eliminated, RULES), (BadAmount, PLAY)],
    },
    Errors {
        request: "concede",
        codes: game_request![(NotPlaying, SEATS), (Eliminated, RULES)],
    },
    Errors {
        request: "extra_turn",
        codes: game_request![
            (NotPlaying, RULES),
            (Eliminated, RULES),
            (NotYourTurn, RULES)
        ],
    },
    Errors {
        request: "attack_roll",
        codes: game_request![
            (NotPlaying, RULES),
            (Eliminated, RULES),
            (DiceOff, PLAY),
            (NotYourTurn, RULES),
            (NotCombatPhase, RULES),
            (SelfAttack, RULES),
            (NotAttackLeft, RULES),
            (UnknownPlayer, RULES),
            (TargetEliminated, RULES),
            (OutOfRange, RULES),
            (BadAmount, RULES),
        ],
    },
    Errors {
        request: "counter_roll",
        codes: game_request![
            (NotPlaying, RULES),
            (Eliminated, RULES),
            (DiceOff, PLAY),
            (NoCounterStrike, RULES),
            (BadAmount, RULES),
        ],
    },
    Errors {
        request: "ruling",
        codes: game_request![
            (NotHost, PLAY),
            (NotPlaying, RULES),
            (NotMulliganing, RULES),
            (NotYourDecision, RULES),
            (NoPlayers, RULES),
            (DuplicatePlayer, RULES),
            (NoRunningTurn, RULES),
            (UnknownPlayer, RULES),
            (TargetEliminated, RULES),
            (BadAmount, RULES),
        ],
    },
    Errors {
        request: "chat",
        codes: &[(ChatTooLong, SEATS), (BadText, SEATS), (Muted, HOST)],
    },
    Errors {
        request: "pause",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (NotHost, HOST),
            (TableAdjourned, BEFORE_THE_GAME),
        ],
    },
    Errors {
        request: "adjourn",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (NotHost, HOST),
            (NotPlaying, HOST),
            (TableAdjourned, BEFORE_THE_GAME),
            (TooManyTables, BEFORE_THE_GAME),
        ],
    },
    Errors {
        request: "resume_game",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (NotAdjourned, HOST),
            (Eliminated, BEFORE_THE_GAME),
            (AlreadyAsked, BEFORE_THE_GAME),
        ],
    },
    Errors {
        request: "kick",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (NotHost, HOST),
            (TableAdjourned, BEFORE_THE_GAME),
            (UnknownPlayer, HOST),
        ],
    },
    Errors {
        request: "transfer_host",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (NotHost, HOST),
            (UnknownPlayer, HOST),
        ],
    },
    Errors {
        request: "mute",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (NotHost, HOST),
            (UnknownPlayer, HOST),
        ],
    },
    Errors {
        request: "list_replays",
        codes: &[(
            StorageFailed,
            Coverage::Unreachable("only when the journal fails"),
        )],
    },
    Errors {
        request: "get_replay",
        codes: &[
            (UnknownReplay, SESSION),
            (WrongPassword, HASHING),
            (ServerBusy, HASHING),
            (DayNotOver, DAYS),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "get_events",
        codes: &[(
            StorageFailed,
            Coverage::Unreachable("only when the journal fails"),
        )],
    },
    Errors {
        request: "create_league",
        codes: &[
            (BadName, LEAGUES),
            (BadText, LEAGUES),
            (ReservedName, LEAGUES),
            (NameTaken, LEAGUES),
            (BadSettings, LEAGUES),
            (TooManyTables, CAPS),
            (ServerBusy, HASHING),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "list_leagues",
        codes: &[(
            StorageFailed,
            Coverage::Unreachable("only when the journal fails"),
        )],
    },
    Errors {
        request: "join_league",
        codes: &[
            (UnknownLeague, LEAGUES),
            (WrongPassword, LEAGUES),
            (BadName, LEAGUES),
            (BadText, LEAGUES),
            (ReservedName, LEAGUES),
            (NameTaken, LEAGUES),
            (ConfusableName, LEAGUES),
            (LeagueFull, Coverage::Driven("a_full_league")),
            (ServerBusy, HASHING),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "get_league",
        codes: &[
            (UnknownLeague, LEAGUES),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "get_deck",
        codes: &[
            (UnknownLeague, LEAGUES),
            (UnknownPlayer, LEAGUES),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "register_deck",
        codes: &[
            (UnknownLeague, LEAGUES),
            (NotAMember, LEAGUES),
            (DeckRegistered, LEAGUES),
            (BadText, LEAGUES),
            (BadPurchase, LEAGUES),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "buy",
        codes: &[
            (UnknownLeague, LEAGUES),
            (NotAMember, LEAGUES),
            (NoDeck, LEAGUES),
            (BadPurchase, LEAGUES),
            (PurchaseLimit, LEAGUES),
            (DeckFull, LEAGUES),
            (NotEnoughPoints, LEAGUES),
            (BadText, LEAGUES),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "take_remedy",
        codes: &[
            (UnknownLeague, LEAGUES),
            (NotAMember, LEAGUES),
            (NoDeck, LEAGUES),
            (NoRemedy, LEAGUES),
            (BadText, LEAGUES),
            (BadPurchase, LEAGUES),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
    Errors {
        request: "call_host",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (BadText, CAMERAS),
            (ChatTooLong, CAMERAS),
        ],
    },
    Errors {
        request: "answer_call",
        codes: &[
            (NotAPlayer, BEFORE_THE_GAME),
            (NotHost, HOST),
            (NoOpenCall, HOST),
        ],
    },
    Errors {
        request: "camera",
        codes: &[(NotAPlayer, BEFORE_THE_GAME)],
    },
    Errors {
        request: "camera_display",
        codes: &[
            (NotWatching, CAMERAS),
            (NotHost, CAMERAS),
            (UnknownPlayer, CAMERAS),
        ],
    },
    Errors {
        request: "signal",
        codes: &[
            (SignalTooLarge, CAMERAS),
            (NotAPlayer, BEFORE_THE_GAME),
            (NotLinked, CAMERAS),
        ],
    },
    // Magic Tech's own requests. A Magic Tech table seats two players and its game is over as
    // soon as one is out, so its decisions' `eliminated` (the sender out of the game) cannot be
    // answered: such a sender gets `not_playing` first. Nor can their `unknown_player` for the
    // sender himself, who is always one of the game's players (a seat leaves the game only with
    // the connection's place at the table); `unknown_player` is listed where a request names a
    // player.
    Errors {
        request: "magic_tech.declare_deck",
        codes: game_request![(GameStarted, MT), (BadAmount, MT),],
    },
    Errors {
        request: "magic_tech.next_phase",
        codes: game_request![(NotPlaying, MT), (NotYourTurn, MT), (NoMission, MT),],
    },
    Errors {
        request: "magic_tech.deploy",
        codes: game_request![
            (NotPlaying, MT),
            (NotYourTurn, MT),
            (WrongPhase, MT),
            (LimitReached, MT),
            (
                CardNumbersUsedUp,
                Coverage::Driven("magic_tech_card_numbers")
            ),
            (BadCard, MT),
        ],
    },
    Errors {
        request: "magic_tech.tap",
        codes: game_request![
            (NotPlaying, MT),
            (UnknownCard, MT),
            (NotYourCard, MT),
            (BadCard, MT),
            (BadAmount, MT),
        ],
    },
    Errors {
        request: "magic_tech.pay",
        codes: game_request![
            (NotPlaying, MT),
            (NotYourTurn, MT),
            (WrongPhase, MT),
            (NotEnoughMana, MT),
            (UnknownCard, MT),
            (NotYourCard, MT),
            (BadCard, MT),
            (BadAmount, MT),
        ],
    },
    Errors {
        request: "magic_tech.reveal",
        codes: game_request![
            (NotPlaying, MT),
            (NotYourTurn, MT),
            (WrongPhase, MT),
            (NotEnoughMana, MT),
            (UnknownCard, MT),
            (NotYourCard, MT),
            (BadCard, MT),
        ],
    },
    Errors {
        request: "magic_tech.relocate",
        codes: game_request![
            (NotPlaying, MT),
            (NotYourTurn, MT),
            (WrongPhase, MT),
            (UnknownCard, MT),
            (NotYourCard, MT),
            (BadCard, MT),
        ],
    },
    Errors {
        request: "magic_tech.mission",
        codes: game_request![
            (NotPlaying, MT),
            (UnknownPlayer, MT),
            (NotYourTurn, MT),
            (WrongPhase, MT),
            (NoMission, MT),
            (UnknownCard, MT),
            (NotYourCard, MT),
            (BadCard, MT),
        ],
    },
    Errors {
        request: "magic_tech.block",
        codes: game_request![
            (NotPlaying, MT),
            (NoMission, MT),
            (IllegalBlock, MT),
            (UnknownCard, MT),
        ],
    },
    Errors {
        request: "magic_tech.damage",
        codes: game_request![
            (NotPlaying, MT),
            (UnknownPlayer, MT),
            (UnknownCard, MT),
            (BadAmount, MT),
        ],
    },
    Errors {
        request: "magic_tech.heal",
        codes: game_request![
            (NotPlaying, MT),
            (UnknownCard, MT),
            (BadCard, MT),
            (BadAmount, MT),
        ],
    },
    Errors {
        request: "magic_tech.regenerate",
        codes: game_request![
            (NotPlaying, MT),
            (NotYourTurn, MT),
            (WrongPhase, MT),
            (UnknownCard, MT),
            (NotYourCard, MT),
            (BadCard, MT),
            (BadAmount, MT),
            (NotEnoughMana, MT),
        ],
    },
    Errors {
        request: "magic_tech.draw",
        codes: game_request![(NotPlaying, MT), (BadAmount, MT),],
    },
    Errors {
        request: "magic_tech.life",
        codes: game_request![(NotPlaying, MT), (BadAmount, MT),],
    },
    Errors {
        request: "magic_tech.leave_play",
        codes: game_request![
            (NotPlaying, MT),
            (UnknownCard, MT),
            (NotYourCard, MT),
            (BadCard, MT),
        ],
    },
    Errors {
        request: "magic_tech.propose",
        codes: game_request![
            (NotPlaying, MT),
            (UnknownPlayer, MT),
            (NoProposal, MT),
            (UnknownCard, MT),
            (BadCard, MT),
            (BadAmount, MT),
        ],
    },
    Errors {
        request: "magic_tech.answer",
        codes: game_request![
            (NotPlaying, MT),
            (NoProposal, MT),
            (UnknownCard, MT),
            (BadCard, MT),
            (BadAmount, MT),
        ],
    },
    Errors {
        request: "magic_tech.rule",
        codes: game_request![
            (NotHost, MT),
            (NotPlaying, MT),
            (UnknownCard, MT),
            (BadCard, MT),
            (UnknownPlayer, MT),
            (BadAmount, MT),
        ],
    },
    // Mountain Magic's requests: `game_request!`'s three codes written out, with the
    // tests of `tests/tests/error_codes_mountain_magic.rs` that drive them.
    // Mountain Magic's requests. A climber is out only by conceding or by the host's ruling,
    // and either ends the climb in the same step (`eliminated`, then `game_over`): his next
    // request finds the game over (`not_playing`), so none of them answers `eliminated`.
    Errors {
        request: "mountain_magic.flip",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.place",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
            (IllegalPlacement, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.discard",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.path",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
            (BadPath, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.mana",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
            (BadMana, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.attack",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
            (BadCard, MM_PLAY),
            (BadTarget, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.cast",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
            (BadCard, MM_PLAY),
            (BadTarget, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.activate",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
            (BadCard, MM_PLAY),
            (BadTarget, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.end_turn",
        codes: &[
            (NotAPlayer, MM_GATES),
            (TableAdjourned, MM_GATES),
            (TablePaused, MM_GATES),
            (NotPlaying, MM_GATES),
            (WrongPhase, MM_PLAY),
        ],
    },
    Errors {
        request: "mountain_magic.standings",
        codes: &[
            (BadDay, Coverage::Driven("mountain_magic_standings")),
            (UnknownLeague, Coverage::Driven("mountain_magic_standings")),
            (
                StorageFailed,
                Coverage::Unreachable("only when the journal fails"),
            ),
        ],
    },
];

/// Mountain Magic's refusals before the climb looks at a request: a spectator's, a paused or
/// adjourned table's, a climb not under way (`tests/tests/error_codes_mountain_magic.rs`).
const MM_GATES: Coverage = Coverage::Driven("mountain_magic_gates");
/// Mountain Magic's refusals by the climb's own rules, from the climb to the battle.
const MM_PLAY: Coverage = Coverage::Driven("mountain_magic_climb_and_battle");

/// Whether `request` is a table request (one that needs a table).
pub fn is_table_request(request: &str) -> bool {
    !SESSION_REQUESTS.contains(&request)
}

/// The request's own declared codes (`None`: no request has that `type`).
pub fn own_codes(request: &str) -> Option<&'static [Declared]> {
    REQUESTS
        .iter()
        .find(|errors| errors.request == request)
        .map(|errors| errors.codes)
}

/// Whether the table declares that `request` (its `type` tag, or `None` when the frame's could
/// not be read) may answer `code`: the check the server makes on every error it sends.
pub fn declares(request: Option<&str>, code: ErrorCode) -> bool {
    if ANY_REQUEST.iter().any(|&(c, _)| c == code) {
        return true;
    }
    let Some(request) = request else {
        return false;
    };
    let Some(own) = own_codes(request) else {
        return false;
    };
    own.iter().any(|&(c, _)| c == code)
        || (is_table_request(request) && ANY_TABLE_REQUEST.iter().any(|&(c, _)| c == code))
}

/// Every declared pair with its coverage: the common sets under the names `any request` and
/// `any table request`, then each request's own.
pub fn pairs() -> Vec<(&'static str, ErrorCode, Coverage)> {
    let common = [
        ("any request", ANY_REQUEST),
        ("any table request", ANY_TABLE_REQUEST),
    ];
    common
        .into_iter()
        .chain(REQUESTS.iter().map(|errors| (errors.request, errors.codes)))
        .flat_map(|(request, codes)| codes.iter().map(move |&(code, how)| (request, code, how)))
        .collect()
}

/// The block between `<!-- generated: errors -->` and `<!-- end generated: errors -->` in
/// PROTOCOL.md's section "Errors of every request".
pub fn render_markdown() -> String {
    fn codes(list: &[Declared]) -> String {
        if list.is_empty() {
            return "—".to_owned();
        }
        list.iter()
            .map(|&(code, how)| match how {
                Coverage::Unreachable(why) => {
                    format!("`{}` (no client can cause it: {why})", code.name())
                }
                _ => format!("`{}`", code.name()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
    let mut out = String::new();
    out.push_str(&format!(
        "Any request may get {}. Any table request (every request but {}) may also get {}.\n\n",
        codes(ANY_REQUEST),
        SESSION_REQUESTS
            .iter()
            .map(|r| format!("`{r}`"))
            .collect::<Vec<_>>()
            .join(", "),
        codes(ANY_TABLE_REQUEST),
    ));
    out.push_str("| request | its own error codes |\n| --- | --- |\n");
    for &name in crate::ClientMessage::NAMES {
        let own = own_codes(name).unwrap_or(&[]);
        out.push_str(&format!("| `{name}` | {} |\n", codes(own)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_is_declared_once() {
        for &name in crate::ClientMessage::NAMES {
            let n = REQUESTS.iter().filter(|e| e.request == name).count();
            assert_eq!(n, 1, "{name} is declared {n} times in errors_of::REQUESTS");
        }
        for errors in REQUESTS {
            assert!(
                crate::ClientMessage::NAMES.contains(&errors.request),
                "{} is not a request",
                errors.request
            );
        }
        for name in SESSION_REQUESTS {
            assert!(crate::ClientMessage::NAMES.contains(name), "{name}");
        }
    }

    #[test]
    fn no_code_is_declared_twice_for_one_request() {
        for errors in REQUESTS {
            let mut seen = std::collections::HashSet::new();
            for &(code, _) in errors.codes {
                assert!(
                    seen.insert(code),
                    "{} declares {code:?} twice",
                    errors.request
                );
                assert!(
                    !ANY_REQUEST.iter().any(|&(c, _)| c == code),
                    "{} declares {code:?}, which any request may get",
                    errors.request
                );
            }
        }
    }
}
