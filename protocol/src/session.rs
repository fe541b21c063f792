//! The table's session rules: seats and seat tokens, the host and hand-over, absence and grace
//! periods, the turn and mulligan clocks, pause, kick, mute, bans, the chat budget, the cameras'
//! links and signals ([`camera_links`]; never events, never journaled) and when an empty table
//! closes. A deterministic state machine in the quinn-proto shape: time is an
//! input (`now` on every call), [`Session::poll_timeout`] says when it next needs to be woken,
//! and what it decides comes out as [`Effect`]s for the driver (the server's table actor) to
//! journal and deliver. No sockets, no clock, no tokio.
//!
//! It is the shell every game shares: generic over the [`Game`], it asks the game only what the
//! trait says (Grand Melee's [`Table`] is the default; `tests/seam.rs` runs another game on it).
//! The session owns the game's state, the one fold: every event it emits is applied to it first
//! (the rules core's as it decides them, the session's own here), so the table is always the
//! fold of everything published, and recovering a table is folding its journal
//! ([`Session::recover`]). Public session facts (host, presence, mutes, pause, spectators) live
//! in the fold ([`Table::facts`]); what is the session's alone — tokens, which connection holds
//! which seat, addresses, and the instants its timers count from — lives here.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::camera::{CameraPeer, Peer};
use crate::camera_links::{self, Camera, Choice, Display, Links};
use crate::client::ClientMessage;
use crate::command::{Actor, Authority, Command};
use crate::dice::DiceSecret;
use crate::error::ErrorCode;
use crate::event::Event;
use crate::game::Game;
use crate::league::SeatDeck;
use crate::limit::TokenBucket;
use crate::limits::{
    ADJOURN_INTERVAL_SECS, CALL_HOST_INTERVAL_SECS, MAX_CALL_REASON_CHARS, MAX_CLOCK_SECS,
    MAX_SIGNAL_BYTES, MAX_SPECTATORS, SIGNAL_BYTES_RECEIVED_BURST,
    SIGNAL_BYTES_RECEIVED_PER_SECOND, close,
};
use crate::rules::Table;
use crate::shell::{Stage, resume_quorum};
use crate::text::{self, TextError};
use crate::types::{Expiry, PlayerId, Ruling, SeatToken, TurnId};
use crate::view::{Settings, TableView};

pub use crate::shell::ConnectionId;

/// Chat lines a table takes at once above its per-minute budget.
pub const TABLE_CHAT_BURST: f64 = 20.0;

/// The server's settings the session rules depend on (the same for every table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// How long a disconnected player keeps his seat in the lobby, holds a running turn or a due
    /// mulligan decision, or keeps the host role, before the table goes on without him; also how
    /// long an empty table that was played at stays open.
    pub grace: Duration,
    /// How long a table nobody ever sat at stays open.
    pub unjoined: Duration,
    /// The table's chat budget in lines per minute (0: none).
    pub chat_per_minute: f64,
    /// How long an adjourned game waits to be resumed before it ends as abandoned, counted
    /// from its adjournment (`None`: for ever). The operator's `--adjourned-expiry-days`.
    pub adjourned_expiry: Option<Duration>,
}

/// What the session decided, for the driver to carry out in order: make durable, then deliver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Events numbered from `first_seq`, already applied to the table: journal them, then
    /// send them to every member.
    Events {
        /// The number of the first.
        first_seq: u64,
        /// The events.
        events: Vec<Event>,
    },
    /// A seat was taken: journal its token.
    SetSeat {
        /// Whose seat.
        player: PlayerId,
        /// Its token.
        token: SeatToken,
    },
    /// A seat was given up or taken away: its token stops working.
    RemoveSeat {
        /// Whose seat.
        player: PlayerId,
    },
    /// The addresses banned from the table changed (never put in events: everyone at the table
    /// receives those); journal the whole list.
    Banned {
        /// Every banned address.
        addresses: Vec<IpAddr>,
    },
    /// The game is over: journal the replay as complete.
    Finished,
    /// The game was adjourned now: journal when, by the driver's wall clock, so that after a
    /// restart its expiry still counts from the adjournment ([`Session::adjourned_for`]).
    Adjourned,
    /// A connection's camera links changed: send it `camera_peers` with the whole list (never
    /// journaled).
    CameraPeers {
        /// Whose list.
        connection: ConnectionId,
        /// Every link it should have now (empty: none).
        peers: Vec<CameraPeer>,
    },
    /// Relay a signal to a connection: send it `signal` (never journaled).
    Signal {
        /// The receiver's connection.
        connection: ConnectionId,
        /// Who sent it.
        from: Peer,
        /// As sent.
        payload: String,
    },
    /// Close a connection (after what was queued for it), saying why; it is no longer a member.
    Close {
        /// Which.
        connection: ConnectionId,
        /// The WebSocket close code.
        code: u16,
        /// The reason sent with it.
        reason: &'static str,
    },
}

/// Why a journal could not be folded back into a session ([`Session::recover`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecoverError {
    /// The stored settings are refused.
    #[error("settings: {0}")]
    Settings(ErrorCode),
    /// The events are not numbered one after another.
    #[error("event {seq} follows {after}")]
    Gap {
        /// The number found.
        seq: u64,
        /// The number of the event before it.
        after: u64,
    },
    /// An event does not fit the table (a corrupt or foreign journal).
    #[error("event {seq}: {reason}")]
    Event {
        /// Its number.
        seq: u64,
        /// What did not fit.
        reason: &'static str,
    },
}

/// How a connection takes part in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Seated as this player.
    Player(PlayerId),
    /// Watching.
    Spectator,
}

#[derive(Debug, Clone, PartialEq)]
struct Seat {
    player: PlayerId,
    token: SeatToken,
    connection: Option<ConnectionId>,
    /// Since when he has been disconnected (paused time shifted out).
    dropped_at: Option<Instant>,
    /// When he dropped, as it happened: a lobby seat and the host role are given up a grace
    /// period after this, paused or not (PROTOCOL.md: a pause does not hold them).
    left_at: Option<Instant>,
    /// The addresses he has connected from at this table (banned with him if the host says so).
    peers: Vec<IpAddr>,
    /// His camera, while it is on: chosen by his connection, gone with it.
    camera: Option<Choice>,
}

/// One table's session: the table (the fold: its game's state, Grand Melee's [`Table`] unless
/// said otherwise), its members' seats and tokens, and its timers. Generic over the [`Game`]:
/// this is the shell every game shares.
#[derive(Debug, Clone)]
pub struct Session<G: Game = Table> {
    table: G,
    settings: Settings,
    timing: Timing,
    /// Number of the last event published.
    seq: u64,
    seats: Vec<Seat>,
    spectators: Vec<ConnectionId>,
    /// Since when nobody is connected.
    empty_since: Option<Instant>,
    /// Since when the host has paused the table.
    paused_since: Option<Instant>,
    /// Since when the game has been adjourned (or paused, if it was paused when adjourned):
    /// the timers count nothing from then until it is resumed.
    adjourned_since: Option<Instant>,
    /// While adjourned: when the adjournment expires and the game ends as abandoned
    /// ([`Timing::adjourned_expiry`] after it was adjourned; `None`: never).
    adjournment_expires_at: Option<Instant>,
    /// When the host last adjourned the game: the next adjournment waits
    /// [`ADJOURN_INTERVAL_SECS`] from then.
    last_adjourned_at: Option<Instant>,
    /// When the host last sent the table a request, or became host if that was later: his
    /// silence while the table waits on him counts from here.
    host_heard_at: Instant,
    /// When each running turn began (by turn and holder); paused time shifted out.
    running_since: Vec<(TurnId, PlayerId, Instant)>,
    /// The players whose mulligan decision is due, and since when.
    deciding_since: Vec<(PlayerId, Instant)>,
    /// Addresses the host has banned from this table (`kick` with `ban`).
    banned: Vec<IpAddr>,
    /// The table's chat budget, shared by all its members.
    chat_budget: Option<TokenBucket>,
    /// When each seated player last called the host (`call_host`: one call per
    /// [`CALL_HOST_INTERVAL_SECS`]).
    called_at: BTreeMap<PlayerId, Instant>,
    /// The calls of players who gave up their seat (or were kicked) less than
    /// [`CALL_HOST_INTERVAL_SECS`] ago, by the addresses they had connected from: a new seat
    /// taken from one of those addresses inherits the call (one new seat per departed one), so
    /// leaving and joining again does not start the interval over.
    departed_calls: Vec<(Vec<IpAddr>, Instant)>,
    /// Whether anyone ever sat at the table.
    ever_seated: bool,
    /// Whether the end of the game has been noted.
    game_over_noted: bool,
    /// The table's display (`camera_display`), gone with its connection.
    display: Option<Display>,
    /// Every connection's camera links, as last sent (`camera_peers`).
    links: Links,
    /// The signal bytes each linked connection may still receive
    /// ([`SIGNAL_BYTES_RECEIVED_BURST`]); forgotten with its links.
    signals_received: BTreeMap<ConnectionId, TokenBucket>,
    effects: VecDeque<Effect>,
}

impl<G: Game> Session<G> {
    /// A new table in its lobby, created at `now` with `settings` and `seed`.
    pub fn new(
        settings: Settings,
        secret: DiceSecret,
        timing: Timing,
        now: Instant,
    ) -> Result<Self, ErrorCode> {
        if settings.max_spectators > MAX_SPECTATORS {
            return Err(ErrorCode::BadSettings);
        }
        let table = G::create(&settings, secret)?;
        // Every seat at once: a table fills up, and growing by doubling would leave room for
        // up to twice its seats.
        let seats = Vec::with_capacity(usize::from(settings.seats));
        Ok(Self {
            table,
            settings,
            timing,
            seq: 0,
            seats,
            spectators: Vec::new(),
            empty_since: Some(now),
            paused_since: None,
            adjourned_since: None,
            adjournment_expires_at: None,
            last_adjourned_at: None,
            host_heard_at: now,
            running_since: Vec::new(),
            deciding_since: Vec::new(),
            banned: Vec::new(),
            chat_budget: (timing.chat_per_minute > 0.0)
                .then(|| TokenBucket::new(TABLE_CHAT_BURST, timing.chat_per_minute / 60.0, now)),
            called_at: BTreeMap::new(),
            departed_calls: Vec::new(),
            ever_seated: false,
            game_over_noted: false,
            display: None,
            links: Links::new(),
            signals_received: BTreeMap::new(),
            effects: VecDeque::new(),
        })
    }

    /// Rebuilds a table at `now` from its journal: the events (numbered from 1, in order) folded
    /// into a new table, its seat tokens and banned addresses. Everyone counts as disconnected
    /// since `now`; players the journal shows connected are announced disconnected (the
    /// returned session's first effects), and any spectator count goes back to 0.
    pub fn recover(
        settings: Settings,
        secret: DiceSecret,
        timing: Timing,
        events: impl IntoIterator<Item = (u64, Event)>,
        seats: &[(PlayerId, SeatToken)],
        banned: Vec<IpAddr>,
        now: Instant,
    ) -> Result<Self, RecoverError> {
        let mut session =
            Self::new(settings, secret, timing, now).map_err(RecoverError::Settings)?;
        session.ever_seated = true;
        for (seq, event) in events {
            if seq != session.seq + 1 {
                return Err(RecoverError::Gap {
                    seq,
                    after: session.seq,
                });
            }
            session
                .table
                .apply(&event)
                .map_err(|reason| RecoverError::Event { seq, reason })?;
            session.seq = seq;
        }
        let facts = session.table.facts().clone();
        session.seats = seats
            .iter()
            .map(|&(player, token)| Seat {
                player,
                token,
                connection: None,
                dropped_at: Some(now),
                left_at: Some(now),
                peers: Vec::new(),
                camera: None,
            })
            .collect();
        session.banned = banned;
        session.paused_since = facts.paused.then_some(now);
        session.adjourned_since = facts.adjourned.then_some(now);
        // Counted from the restart unless the driver says how long it has been adjourned
        // ([`Session::adjourned_for`]).
        session.adjournment_expires_at = facts
            .adjourned
            .then(|| session.expiry_after(Duration::ZERO, now))
            .flatten();
        // A kicked player's decision is settled in the request that makes it due, so there is
        // normally nothing to do here; if there is, it is done now rather than never.
        session.settle_kicks();
        session.after_core(now);
        let mut events: Vec<Event> = facts
            .presences()
            .filter(|&(player, presence)| presence.connected && session.seat(player).is_some())
            .map(|(player, _)| Event::ConnectionChanged {
                player,
                connected: false,
            })
            .collect();
        if facts.spectators != 0 {
            events.push(Event::SpectatorsChanged { spectators: 0 });
        }
        session.publish(events);
        Ok(session)
    }

    // ----- Queries ---------------------------------------------------------------------------

    /// The table: the one fold of every event published.
    pub fn table(&self) -> &G {
        &self.table
    }

    /// The table's settings, as created.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Number of the last event published (0: none yet).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Seated players (with or without a connection).
    pub fn seated(&self) -> usize {
        self.seats.len()
    }

    /// Connections watching.
    pub fn spectators(&self) -> u32 {
        u32::try_from(self.spectators.len()).unwrap_or(u32::MAX)
    }

    /// Whether `address` is banned from the table.
    pub fn is_banned(&self, address: IpAddr) -> bool {
        self.banned.contains(&address)
    }

    /// Whether the table was never played and nobody can come back to it: nothing worth keeping
    /// (not to be confused with a game abandoned by its players, which is kept as a replay). A
    /// league table's empty lobby is no exception: anyone may create a league, so a lobby kept
    /// for ever would let anyone fill the server with tables nobody sits at; the organiser
    /// creates another when the members are there to play.
    pub fn nothing_to_keep(&self) -> bool {
        self.table.stage() == Stage::Lobby && self.seats.is_empty()
    }

    /// A recovered adjourned game has been adjourned for `elapsed` already (the driver journals
    /// when it was adjourned, [`Effect::Adjourned`], and reads it back): its expiry counts from
    /// the adjournment, not from the restart. Nothing if the game is not adjourned.
    pub fn adjourned_for(&mut self, elapsed: Duration, now: Instant) {
        if self.adjourned() {
            self.adjournment_expires_at = self.expiry_after(elapsed, now);
        }
    }

    /// When an adjournment that began `elapsed` before `now` expires (`None`: never, or too far
    /// off to name).
    fn expiry_after(&self, elapsed: Duration, now: Instant) -> Option<Instant> {
        let expiry = self.timing.adjourned_expiry?;
        now.checked_add(expiry.saturating_sub(elapsed))
    }

    /// Whether the host has paused the table.
    pub fn paused(&self) -> bool {
        self.paused_since.is_some()
    }

    /// Whether the host has adjourned the game.
    pub fn adjourned(&self) -> bool {
        self.adjourned_since.is_some()
    }

    /// Whether the clocks stand still: the table is paused or the game adjourned.
    fn stopped(&self) -> bool {
        self.paused_since.is_some() || self.adjourned_since.is_some()
    }

    /// The role of a member connection.
    pub fn role(&self, connection: ConnectionId) -> Option<Role> {
        if self.spectators.contains(&connection) {
            return Some(Role::Spectator);
        }
        self.seats
            .iter()
            .find(|s| s.connection == Some(connection))
            .map(|s| Role::Player(s.player))
    }

    /// The snapshot of the table, as a client mirrors it.
    pub fn view(&self, table: crate::TableId, name: &str) -> TableView {
        self.table.view(table, name, self.seq, &self.settings)
    }

    /// The next thing the session has decided, in order (`None` when there is nothing left):
    /// the driver drains it after every call, as quinn drains `quinn_proto`'s transmits.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// Everything the session has decided since the last call, in order (what
    /// [`poll_effect`](Self::poll_effect) would give one by one).
    pub fn take_effects(&mut self) -> Vec<Effect> {
        self.effects.drain(..).collect()
    }

    // ----- Members ---------------------------------------------------------------------------

    /// Seats a new player on `connection` from `peer` with the (fresh, random) `token` (and at a
    /// league table, with his league deck).
    #[allow(clippy::too_many_arguments)]
    pub fn join(
        &mut self,
        now: Instant,
        connection: ConnectionId,
        peer: IpAddr,
        name: String,
        entropy: String,
        deck: Option<SeatDeck>,
        token: SeatToken,
    ) -> Result<PlayerId, ErrorCode> {
        if self.banned.contains(&peer) {
            return Err(ErrorCode::Banned);
        }
        let events = self.table.handle(
            Actor::Host,
            Command::Join {
                name,
                entropy,
                deck,
            },
        )?;
        let Some(Event::PlayerJoined { player, .. }) = events.first() else {
            return Err(ErrorCode::BadMessage);
        };
        let player = *player;
        self.ever_seated = true;
        self.inherit_call(player, peer, now);
        self.effects.push_back(Effect::SetSeat { player, token });
        self.seats.push(Seat {
            player,
            token,
            connection: Some(connection),
            dropped_at: None,
            left_at: None,
            peers: vec![peer],
            camera: None,
        });
        let mut events = events;
        if self.table.facts().host.is_none() {
            events.push(Event::HostChanged {
                player: Some(player),
            });
            self.host_heard_at = now;
        }
        self.publish(events);
        self.empty_since = None;
        self.update_links();
        Ok(player)
    }

    /// Admits a spectator on `connection` from `peer`.
    pub fn watch(
        &mut self,
        _now: Instant,
        connection: ConnectionId,
        peer: IpAddr,
    ) -> Result<(), ErrorCode> {
        if self.banned.contains(&peer) {
            return Err(ErrorCode::Banned);
        }
        if self.spectators() >= self.settings.max_spectators {
            return Err(ErrorCode::SpectatorsFull);
        }
        self.spectators.push(connection);
        self.empty_since = None;
        let spectators = self.spectators();
        self.publish(vec![Event::SpectatorsChanged { spectators }]);
        self.update_links();
        Ok(())
    }

    /// Gives the seat holding `token` to `connection` from `peer`. A connection that held it
    /// before is closed.
    pub fn resume(
        &mut self,
        now: Instant,
        connection: ConnectionId,
        peer: IpAddr,
        token: SeatToken,
    ) -> Result<PlayerId, ErrorCode> {
        let seat = self
            .seats
            .iter_mut()
            .find(|s| s.token == token)
            .ok_or(ErrorCode::BadToken)?;
        let player = seat.player;
        if self.table.facts().host == Some(player) {
            self.host_heard_at = now;
        }
        let previous = seat.connection.replace(connection);
        // A camera is the connection's choice: the new one says again if it is on.
        seat.camera = None;
        seat.dropped_at = None;
        seat.left_at = None;
        if !seat.peers.contains(&peer) {
            seat.peers.push(peer);
        }
        self.empty_since = None;
        match previous {
            // The same seat from a new connection: the old one is closed.
            Some(previous) => self.effects.push_back(Effect::Close {
                connection: previous,
                code: close::NORMAL,
                reason: close::TAKEN_OVER,
            }),
            None => {
                self.publish(vec![Event::ConnectionChanged {
                    player,
                    connected: true,
                }]);
            }
        }
        self.update_links();
        Ok(player)
    }

    /// A member leaves on purpose: a spectator goes, a player in the lobby gives up his seat,
    /// a player in a game keeps it (as if disconnected).
    pub fn leave(&mut self, now: Instant, connection: ConnectionId) {
        match self.role(connection) {
            Some(Role::Spectator) => self.spectator_left(connection),
            Some(Role::Player(player)) if self.table.stage() == Stage::Lobby => {
                self.give_up_seat(player, now);
            }
            Some(Role::Player(player)) => self.player_dropped(now, player),
            None => {}
        }
        self.note_if_empty(now);
        self.update_links();
    }

    /// A member's connection is gone: a seated player keeps his seat for the grace period.
    pub fn gone(&mut self, now: Instant, connection: ConnectionId) {
        match self.role(connection) {
            Some(Role::Spectator) => self.spectator_left(connection),
            Some(Role::Player(player)) => self.player_dropped(now, player),
            None => {}
        }
        self.note_if_empty(now);
        self.update_links();
    }

    fn spectator_left(&mut self, connection: ConnectionId) {
        self.spectators.retain(|&c| c != connection);
        if self.display.is_some_and(|d| d.connection == connection) {
            self.display = None;
        }
        let spectators = self.spectators();
        self.publish(vec![Event::SpectatorsChanged { spectators }]);
    }

    fn player_dropped(&mut self, now: Instant, player: PlayerId) {
        let Some(seat) = self.seats.iter_mut().find(|s| s.player == player) else {
            return;
        };
        seat.connection = None;
        seat.camera = None;
        seat.dropped_at = Some(now);
        seat.left_at = Some(now);
        self.publish(vec![Event::ConnectionChanged {
            player,
            connected: false,
        }]);
    }

    /// A player gives up his seat in the lobby (by leaving, or by staying away past the grace
    /// period). If he was the host, the next player in join order becomes host.
    fn give_up_seat(&mut self, player: PlayerId, now: Instant) {
        let Ok(mut events) = self.table.handle(Actor::Player(player), Command::Leave) else {
            return;
        };
        let peers = self
            .seat(player)
            .map(|s| s.peers.clone())
            .unwrap_or_default();
        self.forget_caller(player, peers, now);
        self.seats.retain(|s| s.player != player);
        self.effects.push_back(Effect::RemoveSeat { player });
        if self.table.facts().host == Some(player) {
            let next = self.seats.first().map(|s| s.player);
            events.push(Event::HostChanged { player: next });
            self.host_heard_at = now;
        }
        self.publish(events);
    }

    fn note_if_empty(&mut self, now: Instant) {
        let anyone =
            !self.spectators.is_empty() || self.seats.iter().any(|s| s.connection.is_some());
        if !anyone && self.empty_since.is_none() {
            self.empty_since = Some(now);
        }
    }

    // ----- Requests --------------------------------------------------------------------------

    /// Decides a table request from a member: chat, the host's powers (pause, mute, hand-over,
    /// kick) and every game command. Returns the number of the last event it published (what
    /// the `ack` carries). Snapshots are the driver's (see [`view`](Self::view)). A refused
    /// request changes nothing.
    pub fn request(
        &mut self,
        now: Instant,
        connection: ConnectionId,
        request: &ClientMessage,
    ) -> Result<u64, ErrorCode> {
        let result = self.decide(now, connection, request);
        self.update_links();
        result
    }

    /// [`request`](Self::request), before the camera links follow what it changed.
    fn decide(
        &mut self,
        now: Instant,
        connection: ConnectionId,
        request: &ClientMessage,
    ) -> Result<u64, ErrorCode> {
        let role = self.role(connection).ok_or(ErrorCode::NotInTable)?;
        if let Role::Player(me) = role
            && self.table.facts().host == Some(me)
        {
            // Any request from the host, accepted or not, shows he is there.
            self.host_heard_at = now;
        }
        match request {
            ClientMessage::Chat { text, .. } => return self.chat(now, role, text),
            &ClientMessage::Camera {
                on, stream, stay, ..
            } => return self.camera(role, on.then_some(Choice { stream, stay })),
            &ClientMessage::CameraDisplay { token, center, .. } => {
                return self.camera_display(connection, role, token, center);
            }
            ClientMessage::Signal { to, payload, .. } => {
                return self.signal(now, connection, role, *to, payload);
            }
            _ => {}
        }
        let Role::Player(me) = role else {
            return Err(ErrorCode::NotAPlayer);
        };
        let host = self.table.facts().host == Some(me);
        let host_only = |host: bool| {
            if host {
                Ok(())
            } else {
                Err(ErrorCode::NotHost)
            }
        };
        match request {
            ClientMessage::Pause { paused, .. } => {
                host_only(host)?;
                if self.adjourned() {
                    return Err(ErrorCode::TableAdjourned);
                }
                Ok(self.pause(*paused, now))
            }
            ClientMessage::Adjourn { .. } => {
                host_only(host)?;
                self.adjourn(now)
            }
            ClientMessage::ResumeGame { .. } => self.resume_game(me, host, now),
            ClientMessage::Mute { player, muted, .. } => {
                host_only(host)?;
                if let Some(player) = player
                    && self.seat(*player).is_none()
                {
                    return Err(ErrorCode::UnknownPlayer);
                }
                Ok(self.publish(vec![Event::PlayerMuted {
                    player: *player,
                    muted: *muted,
                }]))
            }
            ClientMessage::TransferHost { player, .. } => {
                host_only(host)?;
                if self.seat(*player).is_none() {
                    return Err(ErrorCode::UnknownPlayer);
                }
                self.set_host(Some(*player), now);
                Ok(self.seq)
            }
            ClientMessage::Kick { player, ban, .. } => {
                host_only(host)?;
                if self.adjourned() {
                    // The game stands still: nobody is eliminated until it is resumed.
                    return Err(ErrorCode::TableAdjourned);
                }
                self.kick(now, *player, *ban)
            }
            ClientMessage::CallHost { reason, .. } => self.call_host(now, me, reason),
            ClientMessage::AnswerCall { player, .. } => {
                host_only(host)?;
                self.answer_call(*player)
            }
            _ => {
                let (authority, command) = request.command().ok_or(ErrorCode::BadMessage)?;
                let actor = match authority {
                    Authority::Player => Actor::Player(me),
                    Authority::Host if host => Actor::Host,
                    Authority::Host => return Err(ErrorCode::NotHost),
                };
                if self.adjourned() {
                    return Err(ErrorCode::TableAdjourned);
                }
                if self.paused_since.is_some() {
                    return Err(ErrorCode::TablePaused);
                }
                if matches!(request, ClientMessage::Ruling { .. }) {
                    return self.rule(actor, command, now);
                }
                self.run_core(actor, command, now)
            }
        }
    }

    // ----- Cameras ---------------------------------------------------------------------------

    /// `camera`: a seated player's camera is on with `choice`, or off (`None`). In every stage;
    /// the links follow (`update_links`).
    fn camera(&mut self, role: Role, choice: Option<Choice>) -> Result<u64, ErrorCode> {
        let Role::Player(me) = role else {
            return Err(ErrorCode::NotAPlayer);
        };
        let seat = self
            .seats
            .iter_mut()
            .find(|s| s.player == me)
            .ok_or(ErrorCode::NotAPlayer)?;
        seat.camera = choice;
        Ok(self.seq)
    }

    /// `camera_display`: a watching connection shows the cameras of `center`'s sphere (or
    /// stops, `None`), with the host's seat token as proof the host chose it. One display per
    /// table: it replaces any other.
    fn camera_display(
        &mut self,
        connection: ConnectionId,
        role: Role,
        token: SeatToken,
        center: Option<PlayerId>,
    ) -> Result<u64, ErrorCode> {
        if role != Role::Spectator {
            return Err(ErrorCode::NotWatching);
        }
        let host_token = self
            .table
            .facts()
            .host
            .and_then(|host| self.seat(host))
            .map(|seat| seat.token);
        if host_token != Some(token) {
            return Err(ErrorCode::NotHost);
        }
        if let Some(center) = center
            && self.seat(center).is_none()
        {
            return Err(ErrorCode::UnknownPlayer);
        }
        self.display = center.map(|center| Display { connection, center });
        Ok(self.seq)
    }

    /// `signal`: relays `payload` to `to` if the sender and `to` are linked now, and `to` may
    /// receive that many more signal bytes ([`SIGNAL_BYTES_RECEIVED_BURST`]).
    fn signal(
        &mut self,
        now: Instant,
        connection: ConnectionId,
        role: Role,
        to: Peer,
        payload: &str,
    ) -> Result<u64, ErrorCode> {
        if payload.len() > MAX_SIGNAL_BYTES {
            return Err(ErrorCode::SignalTooLarge);
        }
        let from = match role {
            Role::Player(me) => Peer::Player(me),
            Role::Spectator if self.display.is_some_and(|d| d.connection == connection) => {
                Peer::Display
            }
            Role::Spectator => return Err(ErrorCode::NotAPlayer),
        };
        let linked = self
            .links
            .get(&connection)
            .is_some_and(|peers| peers.iter().any(|p| p.peer == to));
        let receiver = match to {
            Peer::Player(player) => self.seat(player).and_then(|s| s.connection),
            Peer::Display => self.display.map(|d| d.connection),
        };
        let (true, Some(receiver)) = (linked, receiver) else {
            return Err(ErrorCode::NotLinked);
        };
        let budget = self.signals_received.entry(receiver).or_insert_with(|| {
            TokenBucket::new(
                SIGNAL_BYTES_RECEIVED_BURST,
                SIGNAL_BYTES_RECEIVED_PER_SECOND,
                now,
            )
        });
        if !budget.take_n(payload.len() as f64, now) {
            return Err(ErrorCode::RateLimited);
        }
        self.effects.push_back(Effect::Signal {
            connection: receiver,
            from,
            payload: payload.to_owned(),
        });
        Ok(self.seq)
    }

    /// Brings the camera links in step with the table after any change: every connection whose
    /// list changed gets it whole ([`Effect::CameraPeers`]). Nothing to do, at once, while no
    /// camera is on and no display is set.
    fn update_links(&mut self) {
        let cameras: Vec<Camera> = self
            .seats
            .iter()
            .filter_map(|s| {
                Some(Camera {
                    player: s.player,
                    connection: s.connection?,
                    choice: s.camera?,
                })
            })
            .collect();
        if cameras.is_empty() && self.links.is_empty() {
            return;
        }
        let links = camera_links::links(&self.table, &cameras, self.display);
        let old = std::mem::replace(&mut self.links, links);
        let linked = &self.links;
        self.signals_received.retain(|c, _| linked.contains_key(c));
        let changed: BTreeSet<ConnectionId> = old
            .iter()
            .filter(|&(c, peers)| self.links.get(c) != Some(peers))
            .chain(
                self.links
                    .iter()
                    .filter(|&(c, peers)| old.get(c) != Some(peers)),
            )
            .map(|(&c, _)| c)
            .collect();
        for connection in changed {
            if self.role(connection).is_some() {
                let peers = self.links.get(&connection).cloned().unwrap_or_default();
                self.effects
                    .push_back(Effect::CameraPeers { connection, peers });
            }
        }
    }

    /// Every connection's camera links now.
    pub fn camera_links(&self) -> &Links {
        &self.links
    }

    fn chat(&mut self, now: Instant, role: Role, text: &str) -> Result<u64, ErrorCode> {
        // Shown on every screen at the table: see `crate::text`.
        let text = text::normalize_chat(text).map_err(|error| match error {
            TextError::Forbidden(_) => ErrorCode::BadText,
            _ => ErrorCode::ChatTooLong,
        })?;
        let facts = self.table.facts();
        let muted = match role {
            Role::Player(player) => facts.presence(player).muted,
            Role::Spectator => facts.spectators_muted,
        };
        if muted {
            return Err(ErrorCode::Muted);
        }
        if let Some(budget) = &mut self.chat_budget
            && !budget.take(now)
        {
            return Err(ErrorCode::RateLimited);
        }
        let (from, name) = match role {
            Role::Player(player) => (
                Some(player),
                self.table
                    .name_of(player)
                    .map(str::to_owned)
                    .unwrap_or_default(),
            ),
            Role::Spectator => (None, "spectator".to_owned()),
        };
        Ok(self.publish(vec![Event::Chat { from, name, text }]))
    }

    /// A seated player calls the host: one line, once per [`CALL_HOST_INTERVAL_SECS`].
    fn call_host(
        &mut self,
        now: Instant,
        player: PlayerId,
        reason: &str,
    ) -> Result<u64, ErrorCode> {
        // Shown on the host's screen: the chat's rules, one short line.
        let reason = text::normalize_chat(reason).map_err(|error| match error {
            TextError::Forbidden(_) => ErrorCode::BadText,
            _ => ErrorCode::ChatTooLong,
        })?;
        if reason.chars().count() > MAX_CALL_REASON_CHARS {
            return Err(ErrorCode::ChatTooLong);
        }
        if let Some(&last) = self.called_at.get(&player)
            && now.saturating_duration_since(last) < Self::call_interval()
        {
            return Err(ErrorCode::RateLimited);
        }
        self.called_at.insert(player, now);
        Ok(self.publish(vec![Event::HostCalled { player, reason }]))
    }

    /// How long a player waits between two calls for the host.
    fn call_interval() -> Duration {
        Duration::from_secs(CALL_HOST_INTERVAL_SECS)
    }

    /// A seat is gone (given up or kicked) at `now`: a call of its player's within the interval
    /// stays with the addresses he connected from, for the next seat taken from one of them.
    fn forget_caller(&mut self, player: PlayerId, peers: Vec<IpAddr>, now: Instant) {
        let interval = Self::call_interval();
        self.departed_calls
            .retain(|&(_, at)| now.saturating_duration_since(at) < interval);
        if let Some(at) = self.called_at.remove(&player)
            && now.saturating_duration_since(at) < interval
            && !peers.is_empty()
        {
            self.departed_calls.push((peers, at));
        }
    }

    /// A new seat taken from `peer` at `now`: it inherits the latest recent call of a departed
    /// seat from that address, if any (that seat's call is then used up).
    fn inherit_call(&mut self, player: PlayerId, peer: IpAddr, now: Instant) {
        let interval = Self::call_interval();
        self.departed_calls
            .retain(|&(_, at)| now.saturating_duration_since(at) < interval);
        let latest = self
            .departed_calls
            .iter()
            .enumerate()
            .filter(|(_, (peers, _))| peers.contains(&peer))
            .max_by_key(|&(_, &(_, at))| at)
            .map(|(index, _)| index);
        if let Some(index) = latest {
            let (_, at) = self.departed_calls.swap_remove(index);
            self.called_at.insert(player, at);
        }
    }

    /// The host answers one player's open call, or every open call.
    fn answer_call(&mut self, player: Option<PlayerId>) -> Result<u64, ErrorCode> {
        let calls = &self.table.facts().calls;
        let open = match player {
            Some(player) => calls.iter().any(|c| c.player == player),
            None => !calls.is_empty(),
        };
        if !open {
            return Err(ErrorCode::NoOpenCall);
        }
        Ok(self.publish(vec![Event::HostAnswered { player }]))
    }

    /// A host's ruling: run through the rules core, it answers every open call too
    /// (`host_answered` after the ruling's events, in the same batch).
    fn rule(&mut self, actor: Actor, command: Command, now: Instant) -> Result<u64, ErrorCode> {
        self.run_core_then(actor, command, now, |table| {
            (!table.facts().calls.is_empty()).then_some(Event::HostAnswered { player: None })
        })
    }

    /// Runs a command through the rules core and publishes its events; returns the number of the
    /// last event.
    fn run_core(&mut self, actor: Actor, command: Command, now: Instant) -> Result<u64, ErrorCode> {
        self.run_core_then(actor, command, now, |_| None)
    }

    /// [`run_core`](Self::run_core), with a table-level event `then` adds to the same batch.
    fn run_core_then(
        &mut self,
        actor: Actor,
        command: Command,
        now: Instant,
        then: impl FnOnce(&G) -> Option<Event>,
    ) -> Result<u64, ErrorCode> {
        let mut events = self.table.handle(actor, command)?;
        events.extend(then(&self.table));
        self.publish(events);
        self.settle_kicks();
        self.after_core(now);
        Ok(self.seq)
    }

    /// Brings the timers in step with the table after it changed: running turns, the mulligan
    /// decider, and the end of the game.
    fn after_core(&mut self, now: Instant) {
        self.track_running_turns(now);
        self.track_decider(now);
        if self.table.stage() == Stage::Finished && !self.game_over_noted {
            self.game_over_noted = true;
            self.effects.push_back(Effect::Finished);
            self.note_if_empty(now);
        }
    }

    /// Notes when each mulligan decision comes up: the mulligan clock and an absent decider's
    /// grace period count from then.
    fn track_decider(&mut self, now: Instant) {
        let deciders = self.table.deciders();
        self.deciding_since.retain(|(p, _)| deciders.contains(p));
        for player in deciders {
            if !self.deciding_since.iter().any(|&(p, _)| p == player) {
                self.deciding_since.push((player, now));
            }
        }
    }

    /// Players kicked during mulligans: a kicked player's decision is taken as `keep` as soon as
    /// it is due (the host's ruling), and as play begins every kicked player still alive is
    /// eliminated by ruling.
    fn settle_kicks(&mut self) {
        loop {
            let kicked = &self.table.facts().kicked_in_mulligan;
            let ruling = match self.table.stage() {
                Stage::Mulligan { .. } => match self
                    .table
                    .deciders()
                    .into_iter()
                    .find(|d| kicked.contains(d))
                {
                    Some(decider) => Ruling::Keep { player: decider },
                    None => break,
                },
                Stage::Playing => {
                    let players: Vec<PlayerId> =
                        kicked.iter().copied().filter(|&p| self.alive(p)).collect();
                    if players.is_empty() {
                        break;
                    }
                    Ruling::Eliminate { players }
                }
                _ => break,
            };
            let playing = self.table.stage() == Stage::Playing;
            match self.table.handle(Actor::Host, Command::Ruling(ruling)) {
                Ok(events) => {
                    self.publish(events);
                }
                Err(_) => break,
            }
            if playing {
                break;
            }
        }
    }

    /// Keeps `running_since` in step with the table: new running periods start now, ended ones
    /// are forgotten.
    fn track_running_turns(&mut self, now: Instant) {
        let running = self.table.running();
        self.running_since
            .retain(|(turn, player, _)| running.contains(&(*turn, *player)));
        for (turn, player) in running {
            if !self
                .running_since
                .iter()
                .any(|&(t, p, _)| t == turn && p == player)
            {
                self.running_since.push((turn, player, now));
            }
        }
    }

    /// Pauses or resumes the table. Time spent paused does not count against turn clocks or
    /// absences. Returns the number of the last event.
    fn pause(&mut self, paused: bool, now: Instant) -> u64 {
        match (paused, self.paused_since) {
            (true, None) => self.paused_since = Some(now),
            (false, Some(since)) => {
                self.restart_clocks(since, now);
                self.paused_since = None;
            }
            _ => return self.seq,
        }
        self.publish(vec![Event::TablePaused { paused }])
    }

    /// The timers go on at `now` after standing still since `since`: what they count from
    /// moves on by the time they stood still.
    fn restart_clocks(&mut self, since: Instant, now: Instant) {
        for (_, _, started) in &mut self.running_since {
            *started = unpaused(*started, since, now);
        }
        for (_, decided) in &mut self.deciding_since {
            *decided = unpaused(*decided, since, now);
        }
        for seat in &mut self.seats {
            if let Some(dropped) = &mut seat.dropped_at {
                *dropped = unpaused(*dropped, since, now);
            }
        }
    }

    /// The host adjourns the game (during mulligans or play): every clock stops until it is
    /// resumed, however long that takes. A pause ends with it (its time is not counted either).
    fn adjourn(&mut self, now: Instant) -> Result<u64, ErrorCode> {
        if self.adjourned() {
            return Err(ErrorCode::TableAdjourned);
        }
        if !matches!(self.table.stage(), Stage::Mulligan { .. } | Stage::Playing) {
            return Err(ErrorCode::NotPlaying);
        }
        let interval = Duration::from_secs(ADJOURN_INTERVAL_SECS);
        if self
            .last_adjourned_at
            .is_some_and(|last| now.saturating_duration_since(last) < interval)
        {
            return Err(ErrorCode::RateLimited);
        }
        self.last_adjourned_at = Some(now);
        self.adjourned_since = Some(self.paused_since.take().unwrap_or(now));
        self.adjournment_expires_at = self.expiry_after(Duration::ZERO, now);
        self.effects.push_back(Effect::Adjourned);
        Ok(self.publish(vec![Event::TableAdjourned { adjourned: true }]))
    }

    /// The adjournment has expired: nobody resumed the game in time, and it ends as it stands,
    /// as a game everyone left does (`table_adjourned` with `adjourned: false`, then
    /// `game_abandoned`, `game_over` and `dice_revealed`): kept as a replay, league credits paid.
    fn expire_adjournment(&mut self, now: Instant) {
        self.adjourned_since = None;
        self.adjournment_expires_at = None;
        self.publish(vec![Event::TableAdjourned { adjourned: false }]);
        // Cannot be refused (an adjourned game is in mulligans or play).
        let _ = self.run_core(Actor::Host, Command::Abandon, now);
    }

    /// The driver ends the game as it stands (`game_abandoned`), for a reason of its own rather
    /// than the players' absence: a climb of today's mountain at the end of its day. An
    /// adjourned or paused game ends too (its adjournment or pause is lifted in the same batch,
    /// so nothing is left waiting to be resumed). `not_playing` outside mulligans and play.
    pub fn abandon(&mut self, now: Instant) -> Result<u64, ErrorCode> {
        if !matches!(self.table.stage(), Stage::Mulligan { .. } | Stage::Playing) {
            return Err(ErrorCode::NotPlaying);
        }
        let mut lifted = Vec::new();
        if self.adjourned() {
            lifted.push(Event::TableAdjourned { adjourned: false });
        }
        if self.paused() {
            lifted.push(Event::TablePaused { paused: false });
        }
        // Decided on a copy, so a refusal changes nothing.
        let mut trial = self.table.clone();
        for event in &lifted {
            trial.apply(event).map_err(|_| ErrorCode::NotPlaying)?;
        }
        trial.handle(Actor::Host, Command::Abandon)?;
        self.adjourned_since = None;
        self.adjournment_expires_at = None;
        self.paused_since = None;
        self.publish(lifted);
        self.run_core(Actor::Host, Command::Abandon, now)
    }

    /// `resume_game` from player `me`: the host resumes the adjourned game; another player
    /// still in the game asks to, once, and the ask that makes the quorum resumes it.
    fn resume_game(&mut self, me: PlayerId, host: bool, now: Instant) -> Result<u64, ErrorCode> {
        let Some(since) = self.adjourned_since else {
            return Err(ErrorCode::NotAdjourned);
        };
        let mut events = Vec::new();
        if !host {
            if !self.alive(me) {
                return Err(ErrorCode::Eliminated);
            }
            if self.table.facts().resume_asks.contains(&me) {
                return Err(ErrorCode::AlreadyAsked);
            }
            events.push(Event::ResumeRequested { player: me });
            let asks = self.table.facts().resume_asks.len() + 1;
            if asks < resume_quorum(self.table.living()) {
                return Ok(self.publish(events));
            }
        }
        self.restart_clocks(since, now);
        self.adjourned_since = None;
        self.adjournment_expires_at = None;
        events.push(Event::TableAdjourned { adjourned: false });
        Ok(self.publish(events))
    }

    /// Removes a player on the host's word: his seat token stops working and his connection is
    /// closed; in the lobby he loses his seat, during play he is eliminated, during mulligans his
    /// decision is taken as `keep` when due and he is eliminated as play begins.
    fn kick(&mut self, now: Instant, player: PlayerId, ban: bool) -> Result<u64, ErrorCode> {
        let Some(index) = self.seats.iter().position(|s| s.player == player) else {
            return Err(ErrorCode::UnknownPlayer);
        };
        // Decided on a copy of the table, so a refusal changes nothing; the copy, with the kick
        // and what follows from it applied in order, then becomes the table.
        let kicked = Event::PlayerKicked {
            player,
            banned: ban,
        };
        let mut table = self.table.clone();
        table.apply(&kicked).map_err(|_| ErrorCode::UnknownPlayer)?;
        let mut events = vec![kicked];
        if table.facts().calls.iter().any(|c| c.player == player) {
            // His open call goes with him: nobody is left to answer.
            let answered = Event::HostAnswered {
                player: Some(player),
            };
            table
                .apply(&answered)
                .map_err(|_| ErrorCode::UnknownPlayer)?;
            events.push(answered);
        }
        match table.stage() {
            Stage::Lobby => events.extend(table.handle(Actor::Player(player), Command::Leave)?),
            Stage::Playing if self.alive(player) => {
                let ruling = Ruling::Eliminate {
                    players: vec![player],
                };
                events.extend(table.handle(Actor::Host, Command::Ruling(ruling))?);
            }
            // Nobody is eliminated during mulligans: the fold notes the kick, and
            // `settle_kicks` acts on it. An eliminated player, or a finished game: only the
            // seat goes.
            _ => {}
        }
        self.table = table;
        let seat = self.seats.remove(index);
        self.forget_caller(player, seat.peers.clone(), now);
        self.effects.push_back(Effect::RemoveSeat { player });
        if ban {
            for peer in &seat.peers {
                if !self.banned.contains(peer) {
                    self.banned.push(*peer);
                }
            }
            self.effects.push_back(Effect::Banned {
                addresses: self.banned.clone(),
            });
        }
        self.announce(events);
        self.settle_kicks();
        self.after_core(now);
        if let Some(connection) = seat.connection {
            self.effects.push_back(Effect::Close {
                connection,
                code: close::POLICY_VIOLATION,
                reason: if ban {
                    "removed and banned from the table by the host"
                } else {
                    "removed from the table by the host"
                },
            });
            self.note_if_empty(now);
        }
        if self.table.facts().host == Some(player) {
            self.set_host(self.first_connected(), now);
        }
        Ok(self.seq)
    }

    /// The first seated player (in join order) with a connection: who takes the host role on.
    fn first_connected(&self) -> Option<PlayerId> {
        self.seats
            .iter()
            .find(|s| s.connection.is_some())
            .map(|s| s.player)
    }

    fn set_host(&mut self, host: Option<PlayerId>, now: Instant) {
        if self.table.facts().host != host {
            self.host_heard_at = now;
            self.publish(vec![Event::HostChanged { player: host }]);
        }
    }

    // ----- Timers ----------------------------------------------------------------------------

    fn seat(&self, player: PlayerId) -> Option<&Seat> {
        self.seats.iter().find(|s| s.player == player)
    }

    fn alive(&self, player: PlayerId) -> bool {
        self.table.is_alive(player)
    }

    fn closable(&self) -> bool {
        self.table.stage() == Stage::Finished || self.nothing_to_keep()
    }

    /// A table's clock setting as a duration, never longer than [`MAX_CLOCK_SECS`] (a table
    /// journaled before the cap existed may hold more).
    fn secs(secs: u32) -> Duration {
        Duration::from_secs(secs.min(MAX_CLOCK_SECS).into())
    }

    /// The table's absence limit (`absence_limit_secs`, at most [`MAX_CLOCK_SECS`]).
    fn absence_limit(&self) -> Duration {
        Self::secs(self.settings.absence_limit_secs)
    }

    /// How long one person may hold the whole table up: the absence limit, and never less than
    /// the grace period. The longest a pause lasts, the silence after which a host the table
    /// waits on loses the role, and how long a game everyone has left waits for them.
    fn holdup_limit(&self) -> Duration {
        self.absence_limit().max(self.timing.grace)
    }

    /// When each running turn expires: by the turn clock, or because its player has been away
    /// for the grace period while it runs (his turn waits that long, then is skipped).
    fn turn_deadlines(&self) -> impl Iterator<Item = (PlayerId, Expiry, Instant)> + '_ {
        let playing = self.table.stage() == Stage::Playing && !self.stopped();
        let clock =
            (self.settings.turn_clock_secs > 0).then(|| Self::secs(self.settings.turn_clock_secs));
        self.running_since
            .iter()
            .filter(move |_| playing)
            .flat_map(move |&(_, player, since)| {
                let clock = clock.map(|c| (player, Expiry::Clock, since + c));
                let absent = self.seat(player).and_then(|s| s.dropped_at).map(|dropped| {
                    (
                        player,
                        Expiry::Absent,
                        since.max(dropped) + self.timing.grace,
                    )
                });
                clock.into_iter().chain(absent)
            })
    }

    /// When the due mulligan decision is taken as `keep`: by the mulligan clock, or because the
    /// decider has been away for the grace period while it is due (counted from when it came up
    /// or when he dropped, whichever is later). Paused time does not count.
    fn mulligan_deadline(&self) -> Option<(PlayerId, Expiry, Instant)> {
        if self.stopped() {
            return None;
        }
        self.deciding_since
            .iter()
            .flat_map(|&(player, since)| {
                let clock = (self.settings.mulligan_clock_secs > 0).then(|| {
                    let clock = Self::secs(self.settings.mulligan_clock_secs);
                    (player, Expiry::Clock, since + clock)
                });
                let absent = self.seat(player).and_then(|s| s.dropped_at).map(|dropped| {
                    (
                        player,
                        Expiry::Absent,
                        since.max(dropped) + self.timing.grace,
                    )
                });
                clock.into_iter().chain(absent)
            })
            .min_by_key(|&(_, _, at)| at)
    }

    /// Players due to be announced absent, with the moment.
    fn absence_deadlines(&self) -> impl Iterator<Item = (PlayerId, Instant)> + '_ {
        let limit = self.absence_limit();
        let counting = self.table.stage() == Stage::Playing && !self.stopped();
        let facts = self.table.facts();
        self.seats
            .iter()
            .filter(move |s| counting && !facts.presence(s.player).absent && self.alive(s.player))
            .filter_map(move |s| s.dropped_at.map(|t| (s.player, t + limit)))
    }

    /// When the host role passes to someone else because the host is away: he has been
    /// disconnected for the grace period and another seated player is connected. In every
    /// stage, an adjourned game's too: the game waits for its players, but the host's powers
    /// (resuming it among them) go to whoever is there, as they do in play; otherwise a
    /// two-player game whose host never comes back could never be resumed (the quorum is both).
    fn host_deadline(&self) -> Option<Instant> {
        let host = self.seat(self.table.facts().host?)?;
        let dropped = host.left_at?;
        self.seats
            .iter()
            .any(|s| s.connection.is_some())
            .then(|| dropped + self.timing.grace)
    }

    /// When the host role passes to someone else because the host is silent: he is connected,
    /// the table waits on him — his mulligan decision is due or a turn of his is running, and
    /// the table is neither paused nor adjourned — and he has sent the table nothing (no request of any kind) for
    /// the hold-up limit since it began waiting on him or he became host, whichever is later;
    /// and another seated player is connected to take the role. Then, like an absent host, he
    /// hands it to the first connected player in join order (other than himself), who can rule
    /// `keep` or `end_turn` for him.
    fn host_silence_deadline(&self) -> Option<Instant> {
        let host = self.table.facts().host?;
        self.seat(host)?.connection?;
        if self.stopped() {
            return None;
        }
        let waiting = self
            .deciding_since
            .iter()
            .filter(|&&(p, _)| p == host)
            .map(|&(_, since)| since)
            .chain(
                self.running_since
                    .iter()
                    .filter(|&&(_, p, _)| p == host)
                    .map(|&(_, _, since)| since),
            )
            .min()?;
        self.next_host(host)?;
        Some(waiting.max(self.host_heard_at) + self.holdup_limit())
    }

    /// The first connected seated player in join order other than `host`.
    fn next_host(&self, host: PlayerId) -> Option<PlayerId> {
        self.seats
            .iter()
            .find(|s| s.player != host && s.connection.is_some())
            .map(|s| s.player)
    }

    /// When a pause ends by itself: one person may not hold the whole table still for longer
    /// than the hold-up limit. The host may pause again.
    fn pause_deadline(&self) -> Option<Instant> {
        self.paused_since.map(|since| since + self.holdup_limit())
    }

    /// When a game nobody is left at ends as it stands (`game_abandoned`): every living seated
    /// player has been disconnected for the hold-up limit (counted from the last of them to
    /// drop, paused time left out; after a restart everyone counts as dropped at the restart),
    /// during mulligans or play, and the table is neither paused (a pause ends by itself first)
    /// nor adjourned (that waits until it is resumed, or until the adjournment expires).
    fn abandon_deadline(&self) -> Option<Instant> {
        // An adjourned game waits for its players however long they are away.
        if !matches!(self.table.stage(), Stage::Mulligan { .. } | Stage::Playing) || self.stopped()
        {
            return None;
        }
        let mut last_dropped = None;
        for seat in self.seats.iter().filter(|s| self.alive(s.player)) {
            let dropped = seat.dropped_at?;
            last_dropped = last_dropped.max(Some(dropped));
        }
        last_dropped.map(|t| t + self.holdup_limit())
    }

    /// How long an empty, closable table stays open.
    fn empty_delay(&self) -> Duration {
        if self.ever_seated {
            self.timing.grace
        } else {
            self.timing.unjoined
        }
    }

    /// The next moment something expires, if anything can: the driver wakes the session then
    /// with [`handle_timeout`](Self::handle_timeout).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let grace = self.timing.grace;
        let lobby_seat = if self.table.stage() == Stage::Lobby {
            self.seats
                .iter()
                .filter_map(|s| s.left_at)
                .min()
                .map(|t| t + grace)
        } else {
            None
        };
        let empty = self
            .empty_since
            .filter(|_| self.closable())
            .map(|t| t + self.empty_delay());
        let mulligan = self.mulligan_deadline().map(|(_, _, at)| at);
        let adjournment = self.adjournment_expires_at.filter(|_| self.adjourned());
        [
            adjournment,
            lobby_seat,
            empty,
            self.host_deadline(),
            self.host_silence_deadline(),
            mulligan,
            self.pause_deadline(),
            self.abandon_deadline(),
        ]
        .into_iter()
        .flatten()
        .chain(self.turn_deadlines().map(|(_, _, t)| t))
        .chain(self.absence_deadlines().map(|(_, t)| t))
        .min()
    }

    /// Acts on everything that has expired by `now`; returns whether the table should close
    /// (empty and nothing to come back to).
    pub fn handle_timeout(&mut self, now: Instant) -> bool {
        let grace = self.timing.grace;
        if self.adjourned() && self.adjournment_expires_at.is_some_and(|t| t <= now) {
            // Nobody resumed the adjourned game within the operator's expiry.
            self.expire_adjournment(now);
        }
        if self.pause_deadline().is_some_and(|t| t <= now) {
            // The pause has lasted the table's absence limit: play resumes.
            self.pause(false, now);
        }
        if self.abandon_deadline().is_some_and(|t| t <= now) {
            // Nobody has been left at the game for the absence limit: it ends as it stands.
            // Cannot be refused (the deadline exists only during mulligans and play).
            let _ = self.run_core(Actor::Host, Command::Abandon, now);
        }
        if self.table.stage() == Stage::Lobby {
            let expired: Vec<PlayerId> = self
                .seats
                .iter()
                .filter(|s| s.left_at.is_some_and(|t| t + grace <= now))
                .map(|s| s.player)
                .collect();
            for player in expired {
                self.give_up_seat(player, now);
            }
        }
        // Every decision due by now (with simultaneous mulligans, many expire together).
        while let Some((player, reason, at)) = self.mulligan_deadline()
            && at <= now
        {
            let command = Command::ExpireMulligan { player, reason };
            if self.run_core(Actor::Host, command, now).is_err() {
                // Cannot happen (the deciders are tracked after every change); if it does, the
                // clock starts again rather than the table waiting forever.
                self.deciding_since.retain(|&(p, _)| p != player);
                self.deciding_since.push((player, now));
                break;
            }
        }
        let due: Vec<(PlayerId, Expiry)> = self
            .turn_deadlines()
            .filter(|&(_, _, t)| t <= now)
            .map(|(player, expiry, _)| (player, expiry))
            .collect();
        for (player, reason) in due {
            let command = Command::ExpireTurn { player, reason };
            if self.run_core(Actor::Host, command, now).is_err() {
                // Already ended by an earlier expiry in this round: forget it either way.
                self.running_since.retain(|&(_, p, _)| p != player);
            }
        }
        let absent: Vec<PlayerId> = self
            .absence_deadlines()
            .filter(|&(_, t)| t <= now)
            .map(|(player, _)| player)
            .collect();
        for player in absent {
            self.publish(vec![Event::PlayerAbsent { player }]);
        }
        if self.host_deadline().is_some_and(|t| t <= now) {
            self.set_host(self.first_connected(), now);
        }
        if let Some(host) = self.table.facts().host
            && self.host_silence_deadline().is_some_and(|t| t <= now)
        {
            self.set_host(self.next_host(host), now);
        }
        self.update_links();
        self.closable()
            && self
                .empty_since
                .is_some_and(|t| t + self.empty_delay() <= now)
    }

    // ----- Output ----------------------------------------------------------------------------

    /// Numbers the events and hands them to the driver. The core's events are applied as it
    /// decides them; the session's own are folded here, so the table stays the fold of
    /// everything published. Returns the number of the last event.
    fn publish(&mut self, events: Vec<Event>) -> u64 {
        if events.is_empty() {
            return self.seq;
        }
        for event in events.iter().filter(|e| !e.is_game_event()) {
            // The session only emits events about members it knows: this cannot fail.
            let _ = self.table.apply(event);
        }
        for event in &events {
            if let Some((turn, player)) = G::restarts_clock(event) {
                // An extra turn is a new turn: its clock starts when it begins.
                self.running_since
                    .retain(|&(t, p, _)| (t, p) != (turn, player));
            }
        }
        self.announce(events)
    }

    /// Numbers events already applied to the table and hands them to the driver.
    fn announce(&mut self, events: Vec<Event>) -> u64 {
        let first_seq = self.seq + 1;
        self.seq += events.len() as u64;
        self.effects.push_back(Effect::Events { first_seq, events });
        self.seq
    }
}

/// An instant from which a timer counts, moved on so that the pause from `since` to `now` does
/// not count: one noted before the pause moves on by the pause's length, one noted during it
/// (a turn begun or a decision come up after a kick, a player dropped) counts from `now`.
fn unpaused(instant: Instant, since: Instant, now: Instant) -> Instant {
    if instant < since {
        instant + now.saturating_duration_since(since)
    } else {
        instant.max(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_time_does_not_count_for_timers_noted_before_or_during_a_pause() {
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        // Paused from 10 s to 30 s.
        let (since, now) = (at(10), at(30));
        // Noted before the pause: moved on by the pause's length.
        assert_eq!(unpaused(at(4), since, now), at(24));
        // Noted during the pause (a player dropped, a turn begun after a kick): counts from the
        // end of the pause, not from later still.
        assert_eq!(unpaused(at(10), since, now), at(30));
        assert_eq!(unpaused(at(25), since, now), at(30));
        assert_eq!(unpaused(at(30), since, now), at(30));
    }
}
