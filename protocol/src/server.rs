//! Messages the server sends: answers to requests (with `reply_to`), snapshots and event
//! batches.

use serde::{Deserialize, Serialize};

use crate::camera::{CameraPeer, IceServer, Peer};
use crate::error::ErrorCode;
use crate::event::Event;
use crate::league::{Deck, LeagueId, LeagueSummary, LeagueView, LedgerLine, MemberId, MemberToken};
use crate::mountain_magic_types::DayClimb;
use crate::types::GameKind;
use crate::types::{
    MulliganMode, OrganiserSecret, PlayerId, Reduction, RuleSet, SeatToken, StageName, TableId,
};
use crate::view::{Settings, TableView};

/// One finished game kept as a replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// The table it was played at.
    pub table: TableId,
    /// The table's name.
    pub name: String,
    /// When the table was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When the game ended, in milliseconds since the Unix epoch.
    pub finished_at_ms: u64,
    /// How many events it has.
    pub events: u64,
    /// Whether `get_replay` needs the table's password (or a seat token of it).
    #[serde(default)]
    pub password: bool,
    /// The league it was played in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueId>,
}

/// One line of the table list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSummary {
    /// The table's id.
    pub table: TableId,
    /// Its display name.
    pub name: String,
    /// Most players who may sit.
    pub seats: u8,
    /// Players seated now.
    pub seated: u8,
    /// Connections watching.
    pub spectators: u32,
    /// Lobby, mulligan, playing or finished.
    pub stage: StageName,
    /// Whether joining or watching needs a password.
    pub password: bool,
    /// Spell range R.
    pub spell_range: u8,
    /// Turn reduction policy.
    pub reduction: Reduction,
    /// `seed` or `cr807`.
    #[serde(default)]
    pub rules: RuleSet,
    /// Whether the table plays Combat with Dice.
    #[serde(default)]
    pub combat_dice: bool,
    /// `paris` or `simultaneous` mulligans.
    #[serde(default)]
    pub mulligan: MulliganMode,
    /// The league it is played in, if any (its seats are for the league's members).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueId>,
    /// Whether its game is adjourned (waiting, without a time limit, to be resumed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adjourned: bool,
    /// Which game it plays (absent: `grand_melee`; or `magic_tech`).
    #[serde(default, skip_serializing_if = "GameKind::is_default")]
    pub game: GameKind,
}

impl TableSummary {
    /// A new table's line: its settings' part of it, nobody seated or watching yet, in the lobby.
    pub fn new(table: TableId, name: &str, settings: &Settings) -> Self {
        Self {
            table,
            name: name.to_owned(),
            seats: settings.seats,
            seated: 0,
            spectators: 0,
            stage: StageName::Lobby,
            password: settings.password,
            spell_range: settings.spell_range,
            reduction: settings.reduction,
            rules: settings.rules,
            combat_dice: settings.combat_dice,
            mulligan: settings.mulligan,
            league: settings.seat_league(),
            adjourned: false,
            game: settings.game,
        }
    }
}

/// A message from the server to a client.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames,
)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ServerMessage {
    /// Answer to `hello`.
    Welcome {
        /// The `hello`'s id.
        reply_to: u32,
        /// The protocol version the server speaks.
        protocol: u16,
        /// The server's name and version.
        server: String,
    },
    /// Answer to `list_tables`: one page of the tables, sorted by name then id.
    Tables {
        /// The request's id.
        reply_to: u32,
        /// The tables of this page.
        tables: Vec<TableSummary>,
        /// How many tables the server holds in all.
        total: u32,
        /// The `from` of the next page, or `None` if this page is the last.
        next: Option<u32>,
    },
    /// Answer to `create_table`.
    TableCreated {
        /// The request's id.
        reply_to: u32,
        /// The new table's id.
        table: TableId,
    },
    /// Answer to `join` or `resume`: the connection holds a seat. A `snapshot` follows.
    Seated {
        /// The request's id.
        reply_to: u32,
        /// The table.
        table: TableId,
        /// The player's id at that table.
        player: PlayerId,
        /// The token to `resume` the seat with after a disconnection. Keep it secret.
        token: SeatToken,
    },
    /// Answer to `watch`: the connection watches a table. A `snapshot` follows.
    Watching {
        /// The request's id.
        reply_to: u32,
        /// The table.
        table: TableId,
    },
    /// Answer to `leave`.
    Left {
        /// The request's id.
        reply_to: u32,
    },
    /// A request was accepted (game commands, `chat`).
    Ack {
        /// The request's id.
        reply_to: u32,
        /// Sequence number of the last event the request caused (or the table's current
        /// sequence number if it caused none).
        seq: u64,
    },
    /// The whole state of the table.
    Snapshot {
        /// The `snapshot` request's id, or `None` when the server sends one of its own accord
        /// (after `seated` / `watching`).
        #[serde(default)]
        reply_to: Option<u32>,
        /// The table; `view.seq` is the number of the last event it includes.
        view: TableView,
    },
    /// Events that happened at the table, numbered consecutively from `seq`.
    Events {
        /// The table.
        table: TableId,
        /// Sequence number of the first event in the batch.
        seq: u64,
        /// The events, in order.
        events: Vec<Event>,
    },
    /// A request was refused, or the connection is about to close.
    Error {
        /// The refused request's id, if known.
        #[serde(default)]
        reply_to: Option<u32>,
        /// The refused request's `type` tag, if known.
        #[serde(default)]
        request: Option<String>,
        /// Why.
        code: ErrorCode,
        /// A human-readable explanation.
        message: String,
    },
    /// Answer to `list_replays`: one page of the finished games, newest first.
    Replays {
        /// The request's id.
        reply_to: u32,
        /// The finished games of this page.
        replays: Vec<ReplaySummary>,
        /// How many finished games are kept in all.
        total: u32,
        /// The `from` of the next page, or `None` if this page is the last.
        next: Option<u32>,
    },
    /// Answer to `get_replay`: one page of a finished game's events. The pages together are
    /// everything needed to rebuild the game from scratch: a [`Mirror`](crate::Mirror) of
    /// `TableView::new(table, name, settings)`, then `apply_batch(first_seq, &events)` for each
    /// page in order.
    Replay {
        /// The request's id.
        reply_to: u32,
        /// The table.
        table: TableId,
        /// Its name.
        name: String,
        /// Its settings.
        settings: crate::Settings,
        /// The number of the first event in `events` (the request's `from_seq`).
        first_seq: u64,
        /// Events `first_seq`, `first_seq + 1`, … (at least one unless the game has none from
        /// `first_seq` on; the page ends before it would pass
        /// [`MAX_PAGE_BYTES`](crate::MAX_PAGE_BYTES)).
        events: Vec<Event>,
        /// How many events the game has in all.
        total_events: u64,
        /// The `from_seq` of the next page, or `None` if this page ends with the last event.
        next_seq: Option<u64>,
    },
    /// Answer to `get_events`: one page of your table's events so far.
    PastEvents {
        /// The request's id.
        reply_to: u32,
        /// The table.
        table: TableId,
        /// The number of the first event in `events` (the request's `from_seq`, 1 if it was 0).
        first_seq: u64,
        /// Events `first_seq`, `first_seq + 1`, … (empty if the table has none from `first_seq`
        /// on yet).
        events: Vec<Event>,
        /// The `from_seq` of the next page, or `None` if this page ends with the table's last
        /// event so far.
        next_seq: Option<u64>,
    },
    /// Answer to `create_league`.
    LeagueCreated {
        /// The request's id.
        reply_to: u32,
        /// The new league's id.
        league: LeagueId,
        /// The organiser's secret: needed to create the league's tables. Keep it secret.
        organiser: OrganiserSecret,
    },
    /// Answer to `join_league`.
    LeagueJoined {
        /// The request's id.
        reply_to: u32,
        /// The league.
        league: LeagueId,
        /// Your member number.
        member: MemberId,
        /// Your member token: show it to register and improve your deck and to sit at the
        /// league's tables. Keep it secret.
        token: MemberToken,
    },
    /// Answer to `list_leagues`: one page of the leagues, sorted by name.
    Leagues {
        /// The request's id.
        reply_to: u32,
        /// The leagues of this page.
        leagues: Vec<LeagueSummary>,
        /// How many leagues there are in all.
        total: u32,
        /// The `from` of the next page, or `None` if this page is the last.
        next: Option<u32>,
    },
    /// Answer to `get_league`.
    League {
        /// The request's id.
        reply_to: u32,
        /// The league, with one page of its standings and of its games.
        league: LeagueView,
        /// Every member of the league (the standings of every page together).
        total_members: u32,
        /// Every game of the league.
        total_games: u32,
        /// The `from` of the next page, or `None` after the last.
        next: Option<u32>,
    },
    /// Answer to `get_deck`, `register_deck`, `buy` and `take_remedy`: a member's deck (the
    /// fold of its ledger) and the ledger itself, oldest line first.
    Deck {
        /// The request's id.
        reply_to: u32,
        /// The league.
        league: LeagueId,
        /// The member.
        member: MemberId,
        /// His name.
        name: String,
        /// The deck.
        deck: Deck,
        /// Every credit, purchase and remedy, in order.
        ledger: Vec<LedgerLine>,
    },
    /// Answer to `camera` and `camera_display`: the STUN/TURN servers to use for the links.
    /// Also sent unasked (`reply_to` nil), just before a `camera_peers` that opens links, when
    /// the server mints TURN credentials: TURN servers come only with a link to use them for.
    IceServers {
        /// The request's id, or `None` when the server sends fresh credentials of its own
        /// accord.
        #[serde(default)]
        reply_to: Option<u32>,
        /// The servers (empty: none needed, as on a LAN).
        servers: Vec<IceServer>,
    },
    /// The whole list of camera links this connection should have now; sent whenever it
    /// changes (also when it becomes empty). It is also who can see you.
    CameraPeers {
        /// The links.
        peers: Vec<CameraPeer>,
    },
    /// Cluster mode: this connection reaches `table` through a node that does not own it, and
    /// the owner is at `url`. A client that can move opens a connection there and enters the
    /// table again (`resume` with its seat token, or `watch`), then closes this one; one that
    /// cannot stays: every request still works here, one hop longer. Sent after `seated` /
    /// `watching` (and again after the table moved to another owner).
    ServedAt {
        /// The table.
        table: TableId,
        /// The owner's WebSocket URL (`ws://…/ws` or `wss://…/ws`).
        url: String,
    },
    /// A signal relayed from a linked peer.
    Signal {
        /// Who sent it.
        from: Peer,
        /// Its payload, as sent.
        payload: String,
    },
    /// Answer to `mountain_magic.standings`: a day's mountain.
    #[serde(rename = "mountain_magic.standings")]
    #[strum(serialize = "mountain_magic.standings")]
    MountainMagicStandings {
        /// The request's id.
        reply_to: u32,
        /// The day, `YYYY-MM-DD` (UTC).
        day: String,
        /// The league asked for, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        league: Option<LeagueId>,
        /// SHA-256 of the day's dice secret (hex), the same before, during and after the day:
        /// every climb of the day shows it as its `dice_commitment`.
        commitment: String,
        /// The day's dice secret (hex), once the day is over (UTC); `None` until then.
        secret: Option<String>,
        /// One page of the standings, from the `from`-th: each climber's first finished climb
        /// of the day, best first (by end, then by cards left; equal climbs share a place).
        standings: Vec<DayClimb>,
        /// Climbers in the standings in all (every page).
        climbers: u32,
        /// Finished climbs of the day in all (a climber's later climbs are not in the
        /// standings).
        climbs: u32,
        /// The `from` of the next page, or `None` if this page is the last.
        next: Option<u32>,
    },
}

impl ServerMessage {
    /// The `type` tag (`"welcome"`, …).
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// The id of the request this answers, if any.
    pub fn reply_to(&self) -> Option<u32> {
        match self {
            ServerMessage::Welcome { reply_to, .. }
            | ServerMessage::Tables { reply_to, .. }
            | ServerMessage::TableCreated { reply_to, .. }
            | ServerMessage::Seated { reply_to, .. }
            | ServerMessage::Watching { reply_to, .. }
            | ServerMessage::Left { reply_to }
            | ServerMessage::Ack { reply_to, .. }
            | ServerMessage::Replays { reply_to, .. }
            | ServerMessage::Replay { reply_to, .. }
            | ServerMessage::PastEvents { reply_to, .. }
            | ServerMessage::LeagueCreated { reply_to, .. }
            | ServerMessage::LeagueJoined { reply_to, .. }
            | ServerMessage::Leagues { reply_to, .. }
            | ServerMessage::League { reply_to, .. }
            | ServerMessage::Deck { reply_to, .. }
            | ServerMessage::MountainMagicStandings { reply_to, .. } => Some(*reply_to),
            ServerMessage::Snapshot { reply_to, .. }
            | ServerMessage::Error { reply_to, .. }
            | ServerMessage::IceServers { reply_to, .. } => *reply_to,
            ServerMessage::Events { .. }
            | ServerMessage::CameraPeers { .. }
            | ServerMessage::ServedAt { .. }
            | ServerMessage::Signal { .. } => None,
        }
    }

    /// An `error` answering `request` with `code` and its standard description.
    pub fn error(request: Option<&crate::ClientMessage>, code: ErrorCode) -> Self {
        Self::error_for(
            request.map(crate::ClientMessage::id),
            request.map(crate::ClientMessage::name),
            code,
        )
    }

    /// An `error` answering `request` with `code` and an explanation of this refusal.
    pub fn error_because(request: &crate::ClientMessage, code: ErrorCode, message: String) -> Self {
        ServerMessage::Error {
            reply_to: Some(request.id()),
            request: Some(request.name().to_owned()),
            code,
            message,
        }
    }

    /// An `error` answering a request known only by its id and `type` tag (a malformed request
    /// whose `id` and `type` could still be read: see [`peek_request`](crate::peek_request)).
    pub fn error_for(reply_to: Option<u32>, request: Option<&str>, code: ErrorCode) -> Self {
        ServerMessage::Error {
            reply_to,
            request: request.map(str::to_owned),
            code,
            message: code.description().to_owned(),
        }
    }

    /// Every `type` tag the server may send, in declaration order: serde's names (the same
    /// snake_case rule, held equal by the codec tests).
    pub const NAMES: &'static [&'static str] = <Self as strum::VariantNames>::VARIANTS;
}
