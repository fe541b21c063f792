//! A table's actor: one task owns the table's rules state and everything around it (members,
//! seat tokens, the host, the event sequence) and is fed by a bounded channel. No locks around
//! game state: nobody else can reach it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, MAX_PASSWORD_CHARS, SeatToken, ServerMessage, TableId,
    TableSummary, close, text,
};
use tokio::sync::{mpsc, watch};
use tracing::{debug, error, info, warn};
use uuid::Uuid;

use crate::conn::Conn;
use crate::journal::{StoredTable, TableRecord};
use crate::limit::TokenBucket;
use crate::metrics::Metrics;
use crate::lobby::{
    Entry, Role, RoomMsg, Shared, TableEntry, TableRefusal, TableSlot,
};
use crate::wire::{self as edge, Authority};
use grand_melee_protocol::Expiry;
use grand_melee_protocol::rules::{Actor, Command, Stage, Table, TableConfig, TurnState};

/// What the journal keeps of a table's settings (everything besides its name and password).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct StoredSettings {
    config: TableConfig,
    turn_clock_secs: u32,
    absence_limit_secs: u32,
    /// Absent from journals written before mulligan clocks existed: those tables get the
    /// default.
    #[serde(default = "default_mulligan_clock")]
    mulligan_clock_secs: u32,
    #[serde(default = "default_max_spectators")]
    max_spectators: u32,
}

fn default_mulligan_clock() -> u32 {
    wire::DEFAULT_MULLIGAN_CLOCK_SECS
}

fn default_max_spectators() -> u32 {
    wire::DEFAULT_MAX_SPECTATORS
}

impl StoredSettings {
    fn room(&self) -> edge::RoomSettings {
        edge::RoomSettings {
            turn_clock_secs: self.turn_clock_secs,
            absence_limit_secs: self.absence_limit_secs,
            mulligan_clock_secs: self.mulligan_clock_secs,
            max_spectators: self.max_spectators,
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Creates a table from a `create_table` request sent from `peer`, journals it, and starts its
/// actor.
pub(crate) async fn create(
    request: &ClientMessage,
    shared: &Arc<Shared>,
    peer: std::net::IpAddr,
) -> Result<TableId, ErrorCode> {
    let ClientMessage::CreateTable {
        name,
        seats,
        spell_range,
        reduction,
        starting_life,
        password,
        seed,
        turn_clock_secs,
        absence_limit_secs,
        mulligan_clock_secs,
        max_spectators,
        ..
    } = request
    else {
        return Err(ErrorCode::BadMessage);
    };
    let name = text::normalize_name(name).map_err(edge::text_error)?;
    if password
        .as_ref()
        .is_some_and(|p| p.is_empty() || p.chars().count() > MAX_PASSWORD_CHARS)
    {
        return Err(ErrorCode::BadSettings);
    }
    let spell_range = grand_melee_protocol::rules::SpellRange::new(*spell_range)
        .map_err(|_| ErrorCode::BadSettings)?;
    let settings = StoredSettings {
        config: TableConfig {
            seats: *seats,
            spell_range,
            reduction: *reduction,
            starting_life: *starting_life,
            seed: seed.unwrap_or_else(|| Uuid::new_v4().as_u64_pair().0),
            ..TableConfig::default()
        },
        turn_clock_secs: *turn_clock_secs,
        absence_limit_secs: *absence_limit_secs,
        mulligan_clock_secs: *mulligan_clock_secs,
        max_spectators: *max_spectators,
    };
    if settings.max_spectators > wire::MAX_SPECTATORS {
        return Err(ErrorCode::BadSettings);
    }
    settings
        .config
        .validate()
        .map_err(|_| ErrorCode::BadSettings)?;
    // Every check that could refuse the request comes first, so a refused request costs the
    // sender no place under the caps.
    let slot =
        shared
            .reserve_table(Some(peer), Instant::now())
            .map_err(|refusal| match refusal {
                TableRefusal::ServerFull => ErrorCode::ServerBusy,
                TableRefusal::TooManyFromAddress => ErrorCode::TooManyTables,
            })?;
    let password = match password.clone() {
        Some(password) => Some(
            tokio::task::spawn_blocking(move || crate::password::hash(&password))
                .await
                .map_err(|_| ErrorCode::StorageFailed)?
                .map_err(|error| {
                    error!(%error, "hashing a table password");
                    ErrorCode::StorageFailed
                })?,
        ),
        None => None,
    };
    let id = Uuid::new_v4();
    let record = TableRecord {
        id,
        name: name.clone(),
        password: password.clone(),
        settings: rmp_serde::to_vec_named(&settings).map_err(|_| ErrorCode::BadSettings)?,
        created_at_ms: now_ms(),
    };
    shared.journal.create_table(record).await.map_err(|error| {
        error!(%error, "journaling a new table");
        ErrorCode::StorageFailed
    })?;
    info!(table = %id, name, "table created");
    let room = Room::new(id, name, password, settings, shared, slot)?;
    room.start();
    Ok(id)
}

/// Rebuilds every unfinished table from the journal and starts its actor. Players who were
/// connected when the server stopped are marked disconnected (an event everyone will see); they
/// come back with `resume`.
///
/// A journal found damaged at open (`PRAGMA quick_check`) is refused with a message saying what
/// to do, and so is one with a table that cannot be read or rebuilt, unless
/// `--allow-damaged-journal`. With it, every such table is logged as an error, counted in
/// `gm_tables_unrecoverable` and kept untouched in the journal (never written, never pruned);
/// the other tables start. No table is ever dropped silently.
pub(crate) async fn recover_all(shared: &Arc<Shared>) -> Result<(), String> {
    use std::fmt::Write as _;

    let journal = shared.journal.clone();
    let path = journal.path().display().to_string();
    let allow_damage = shared.config.allow_damaged_journal;
    if let Some(damage) = journal.damage() {
        if !allow_damage {
            return Err(damage.to_string());
        }
        error!(
            path,
            findings = ?damage.findings,
            "the journal is damaged; starting anyway (--allow-damaged-journal): restore it from a \
             backup as soon as you can"
        );
        let accepting = journal.clone();
        tokio::task::spawn_blocking(move || accepting.accept_damage())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("the damaged journal {path} cannot be opened for writing: {e}"))?;
    }
    let reading = journal.clone();
    let read = tokio::task::spawn_blocking(move || reading.unfinished_tables())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("the journal {path} cannot be read: {e}"))?;

    let mut lost: Vec<(Option<Uuid>, String)> = read
        .unreadable
        .into_iter()
        .map(|table| (table.id, table.reason))
        .collect();
    let mut rooms = Vec::new();
    for table in read.tables {
        let id = table.record.id;
        match Room::recover(table, shared) {
            Ok(recovered) => rooms.push(recovered),
            Err(reason) => lost.push((Some(id), format!("it cannot be rebuilt: {reason}"))),
        }
    }
    let name =
        |id: &Option<Uuid>| id.map_or_else(|| "(id unreadable)".to_owned(), |id| id.to_string());
    if !lost.is_empty() && !allow_damage {
        let mut message = format!(
            "{} table(s) in the journal {path} cannot be recovered:\n",
            lost.len()
        );
        for (id, reason) in &lost {
            let _ = writeln!(message, "  table {}: {reason}", name(id));
        }
        message.push_str("The server did not start. ");
        message.push_str(&crate::journal::damaged_journal_advice(journal.path()));
        return Err(message);
    }
    journal.keep_untouched(lost.iter().filter_map(|(id, _)| *id));
    for (id, reason) in &lost {
        error!(
            table = name(id),
            reason,
            "a table in the journal cannot be recovered: it is left out, its rows kept untouched"
        );
    }

    for (mut room, dropped) in rooms {
        let id = room.id;
        let now = Instant::now();
        let mut events: Vec<wire::Event> = dropped
            .into_iter()
            .map(|player| wire::Event::ConnectionChanged {
                player,
                connected: false,
            })
            .collect();
        if room.core.facts().spectators != 0 {
            events.push(wire::Event::SpectatorsChanged { spectators: 0 });
        }
        room.publish(events, now);
        room.flush().await;
        if room.broken {
            let reason = "the journal refused to record its recovery".to_owned();
            error!(
                table = %id,
                reason,
                "a table in the journal cannot be recovered: it is left out, its rows kept untouched"
            );
            journal.keep_untouched([id]);
            lost.push((Some(id), reason));
            continue;
        }
        info!(table = %id, seq = room.seq, "table recovered");
        room.start();
    }

    shared.metrics.tables_unrecoverable.store(
        i64::try_from(lost.len()).unwrap_or(i64::MAX),
        std::sync::atomic::Ordering::Relaxed,
    );
    if !lost.is_empty() {
        error!(
            count = lost.len(),
            path,
            "tables left out of this start (see the errors above; gm_tables_unrecoverable in \
             /metrics): restore the journal from a backup as soon as you can"
        );
    }
    Ok(())
}

/// Chat lines a table takes at once above its per-minute budget.
const TABLE_CHAT_BURST: f64 = 20.0;

/// What the journal has still to record for the current request, before any frame goes out.
#[derive(Debug)]
enum JournalOp {
    SetSeat { player: u16, token: Uuid },
    RemoveSeat { player: u16 },
    SetMeta { key: &'static str, value: Vec<u8> },
    Finish,
}

/// The journal's per-table metadata key of the addresses banned from the table (a MessagePack
/// list of strings). Addresses are never put in events: everyone at the table receives those.
const BANNED_META: &str = "banned_addresses";

#[derive(Debug)]
struct Member {
    conn: Conn,
    role: Role,
    /// The number of the last event its snapshot included: it gets only later events.
    since_seq: u64,
}

/// A frame waiting for the end of the current request, when the outbox is flushed.
#[derive(Debug)]
enum Outgoing {
    /// An events batch for every member whose snapshot does not already include it.
    Events { last_seq: u64, frame: Bytes },
    /// A frame for one connection.
    Direct { conn: Conn, frame: Bytes },
    /// Close a connection, after what was queued for it before, saying why.
    Close {
        conn: Conn,
        code: u16,
        reason: &'static str,
    },
}

#[derive(Debug)]
struct Seat {
    player: wire::PlayerId,
    token: SeatToken,
    connection: Option<u64>,
    dropped_at: Option<Instant>,
    /// Whether everyone has been told he is absent (since he dropped).
    absent: bool,
    /// The addresses he has connected from at this table (banned with him if the host says so).
    peers: Vec<std::net::IpAddr>,
}

#[derive(Debug)]
struct Room {
    id: TableId,
    name: String,
    password: Option<String>,
    core: Table,
    /// Number of the last event published.
    seq: u64,
    members: Vec<Member>,
    seats: Vec<Seat>,
    host: Option<wire::PlayerId>,
    /// Since when nobody is connected (the table closes after the grace period if it cannot be
    /// resumed: an empty lobby or a finished game; after `--unjoined-table-secs` if nobody ever
    /// sat at it).
    empty_since: Option<Instant>,
    turn_clock: Option<Duration>,
    /// The table's clocks and limits, as chosen at its creation.
    settings: edge::RoomSettings,
    /// Players whose chat the host has muted.
    muted: Vec<wire::PlayerId>,
    /// Whether the host has muted the spectators' chat.
    spectators_muted: bool,
    /// Since when the host has paused the table.
    paused_since: Option<Instant>,
    /// When each running turn began, by turn and holder. Time lives here, not in the core.
    running_since: Vec<(wire::TurnId, wire::PlayerId, Instant)>,
    shared: Arc<Shared>,
    summary: watch::Sender<TableSummary>,
    /// What the current request produced, delivered together by `flush`.
    outbox: Vec<Outgoing>,
    /// When the oldest request with events in the outbox arrived (for the latency metric).
    outbox_since: Option<Instant>,
    /// Events published by the current request, encoded one by one for the journal: the number
    /// of the first, and the events.
    unjournaled: Option<(u64, Vec<Vec<u8>>)>,
    /// Seat and game-over records to journal with them.
    journal_ops: Vec<JournalOp>,
    /// The journal refused a write: the table stops (it recovers from the journal on restart).
    broken: bool,
    /// The game-over mark is in the journal: the replay is complete, and what happens at the
    /// table afterwards (chat, people leaving) is not journaled.
    finish_journaled: bool,
    /// The player whose mulligan decision is due, and since when (time lives here, not in the
    /// core: the mulligan clock and the absent decider's grace period count from it).
    deciding_since: Option<(wire::PlayerId, Instant)>,
    /// Players the host kicked during mulligans: their decision is taken as `keep` when it comes
    /// up, and they are eliminated as play begins.
    kicked_in_mulligan: Vec<wire::PlayerId>,
    /// Addresses the host has banned from this table (`kick` with `ban`).
    banned: Vec<std::net::IpAddr>,
    /// The table's chat budget, shared by all its members (`--table-chat-per-minute`).
    chat_budget: Option<TokenBucket>,
    /// Whether the end of the game has been noted (journaled as finished).
    game_over_noted: bool,
    /// Whether anyone ever sat at the table. One nobody sat at closes after
    /// `--unjoined-table-secs` instead of the grace period.
    ever_seated: bool,
    /// The table's place under `--max-tables` and its creator's `--max-tables-per-ip`, given
    /// back when the actor ends.
    _slot: TableSlot,
}

impl Room {
    fn new(
        id: TableId,
        name: String,
        password: Option<String>,
        settings: StoredSettings,
        shared: &Arc<Shared>,
        slot: TableSlot,
    ) -> Result<Self, ErrorCode> {
        let room_settings = settings.room();
        let core = Table::new(settings.config).map_err(|_| ErrorCode::BadSettings)?;
        let summary = TableSummary {
            table: id,
            name: name.clone(),
            seats: core.config().seats,
            seated: 0,
            spectators: 0,
            stage: wire::StageName::Lobby,
            password: password.is_some(),
            spell_range: u8::from(core.config().spell_range),
            reduction: core.config().reduction,
        };
        Ok(Self {
            id,
            name,
            password,
            core,
            seq: 0,
            members: Vec::new(),
            seats: Vec::new(),
            host: None,
            empty_since: Some(Instant::now()),
            turn_clock: (settings.turn_clock_secs > 0)
                .then(|| Duration::from_secs(settings.turn_clock_secs.into())),
            settings: room_settings,
            muted: Vec::new(),
            spectators_muted: false,
            paused_since: None,
            running_since: Vec::new(),
            shared: Arc::clone(shared),
            summary: watch::channel(summary).0,
            outbox: Vec::new(),
            outbox_since: None,
            unjournaled: None,
            journal_ops: Vec::new(),
            broken: false,
            finish_journaled: false,
            ever_seated: false,
            game_over_noted: false,
            deciding_since: None,
            kicked_in_mulligan: Vec::new(),
            banned: Vec::new(),
            chat_budget: (shared.config.table_chat_per_minute > 0.0).then(|| {
                TokenBucket::new(
                    TABLE_CHAT_BURST,
                    shared.config.table_chat_per_minute / 60.0,
                    Instant::now(),
                )
            }),
            _slot: slot,
        })
    }

    /// Rebuilds a table from its journal by folding every event into the table, and the room's
    /// own state (host, pause, absences, mutes, who was connected) from the fold's session facts.
    /// Returns the room and the players who were connected when the server stopped.
    fn recover(
        stored: StoredTable,
        shared: &Arc<Shared>,
    ) -> Result<(Self, Vec<wire::PlayerId>), String> {
        let settings: StoredSettings =
            rmp_serde::from_slice(&stored.record.settings).map_err(|e| format!("settings: {e}"))?;
        let record = stored.record;
        let slot = shared.recovered_table();
        let mut room = Self::new(
            record.id,
            record.name,
            record.password,
            settings,
            shared,
            slot,
        )
        .map_err(|code| format!("settings: {code}"))?;
        room.ever_seated = true;
        // Recovery is one fold: every event, game and table-level alike, through the same
        // `Table::apply` that built the live table.
        for (seq, bytes) in &stored.events {
            if *seq != room.seq + 1 {
                return Err(format!("event {seq} follows {}", room.seq));
            }
            let event = wire::decode_event(bytes).map_err(|e| format!("event {seq}: {e}"))?;
            room.core
                .apply(&event)
                .map_err(|e| format!("event {seq}: {e}"))?;
            room.seq = *seq;
        }
        let facts = room.core.facts().clone();
        room.host = facts.host;
        room.muted = facts
            .presences()
            .filter(|(_, presence)| presence.muted)
            .map(|(player, _)| player)
            .collect();
        room.spectators_muted = facts.spectators_muted;
        if matches!(room.core.stage(), Stage::Mulligan { .. }) {
            room.kicked_in_mulligan = facts.kicked_in_mulligan.clone();
        }
        let paused = facts.paused;
        let absent: Vec<wire::PlayerId> = facts
            .presences()
            .filter(|(_, presence)| presence.absent)
            .map(|(player, _)| player)
            .collect();
        let mut connected: Vec<wire::PlayerId> = facts
            .presences()
            .filter(|(_, presence)| presence.connected)
            .map(|(player, _)| player)
            .collect();
        let now = Instant::now();
        room.seats = stored
            .seats
            .iter()
            .map(|&(player, token)| Seat {
                player: player,
                token,
                connection: None,
                dropped_at: Some(now),
                absent: absent.contains(&player),
                peers: Vec::new(),
            })
            .collect();
        if let Some((_, value)) = stored.meta.iter().find(|(key, _)| key == BANNED_META) {
            let banned: Vec<String> =
                rmp_serde::from_slice(value).map_err(|e| format!("banned addresses: {e}"))?;
            room.banned = banned.iter().filter_map(|a| a.parse().ok()).collect();
        }
        room.paused_since = paused.then_some(now);
        // A kicked player's decision is settled in the flush that makes it due, so there is
        // normally nothing to do here; if there is, it is done now rather than never.
        room.settle_kicks(now);
        room.after_core(now);
        connected.retain(|p| room.seats.iter().any(|s| s.player == *p));
        Ok((room, connected))
    }

    /// Registers the table in the lobby and starts its actor.
    fn start(self) {
        let shared = Arc::clone(&self.shared);
        let (tx, rx) = mpsc::channel(shared.config.table_queue.max(1));
        self.publish_summary();
        shared.tables.insert(
            self.id,
            TableEntry {
                tx,
                summary: self.summary.subscribe(),
                password: self.password.as_deref().map(Arc::from),
            },
        );
        shared
            .metrics
            .tables
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        shared.table_tasks.spawn(self.run(rx));
    }

    async fn run(mut self, mut rx: mpsc::Receiver<RoomMsg>) {
        let shutdown = self.shared.stop_tables.clone();
        loop {
            if self.broken {
                break;
            }
            let deadline = self.next_deadline();
            let message = tokio::select! {
                () = shutdown.cancelled() => break,
                message = rx.recv() => match message {
                    Some(message) => message,
                    None => break,
                },
                () = sleep_until(deadline) => {
                    let close = self.expire();
                    self.flush().await;
                    if close {
                        break;
                    }
                    continue;
                }
            };
            match message {
                RoomMsg::Enter {
                    conn,
                    request_id,
                    entry,
                    reply,
                } => {
                    let result = self.enter(conn, request_id, entry);
                    let _ = reply.send(result);
                }
                RoomMsg::Request {
                    connection,
                    request,
                    received,
                } => self.request(connection, request, received),
                RoomMsg::Leave {
                    connection,
                    request_id,
                    reply,
                } => {
                    self.leave(connection, request_id);
                    let _ = reply.send(());
                }
                RoomMsg::Gone { connection } => self.gone(connection),
            }
            self.flush().await;
            self.publish_summary();
        }
        self.shared.tables.remove(&self.id);
        self.shared
            .metrics
            .tables
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        if self.core.stage() == Stage::Lobby && self.seats.is_empty() && !self.broken {
            // Never played and nobody to come back: nothing worth keeping.
            if let Err(error) = self.shared.journal.delete_table(self.id).await {
                warn!(table = %self.id, %error, "deleting an abandoned table from the journal");
            }
        }
        info!(table = %self.id, "table closed");
    }

    // ----- Membership ------------------------------------------------------------------------

    fn enter(&mut self, conn: Conn, request_id: u32, entry: Entry) -> Result<Role, ErrorCode> {
        if !matches!(entry, Entry::Resume { .. }) && self.banned.contains(&conn.peer) {
            return Err(ErrorCode::Banned);
        }
        match entry {
            Entry::Join { name } => {
                let events = self.core.handle(Actor::Host, Command::Join { name })?;
                let Some(wire::Event::PlayerJoined { player, .. }) = events.first() else {
                    return Err(ErrorCode::BadMessage);
                };
                let player = *player;
                self.ever_seated = true;
                let token = Uuid::new_v4();
                self.journal_ops.push(JournalOp::SetSeat {
                    player: player,
                    token,
                });
                self.seats.push(Seat {
                    player,
                    token,
                    connection: Some(conn.id),
                    dropped_at: None,
                    absent: false,
                    peers: vec![conn.peer],
                });
                let mut wire_events: Vec<wire::Event> = events;
                if self.host.is_none() {
                    self.host = Some(player);
                    wire_events.push(wire::Event::HostChanged {
                        player: Some(player),
                    });
                }
                // Everyone already here hears of the newcomer; the newcomer gets a snapshot that
                // includes himself.
                self.publish(wire_events, Instant::now());
                self.admit(conn, Role::Player(player), request_id, Some(token));
                info!(table = %self.id, player = player, "player joined");
                Ok(Role::Player(player))
            }
            Entry::Watch => {
                if self.spectators() >= self.settings.max_spectators {
                    return Err(ErrorCode::SpectatorsFull);
                }
                self.admit(conn, Role::Spectator, request_id, None);
                let spectators = self.spectators();
                self.publish(
                    vec![wire::Event::SpectatorsChanged { spectators }],
                    Instant::now(),
                );
                Ok(Role::Spectator)
            }
            Entry::Resume { token } => {
                let seat = self
                    .seats
                    .iter_mut()
                    .find(|s| s.token == token)
                    .ok_or(ErrorCode::BadToken)?;
                let player = seat.player;
                let previous = seat.connection.replace(conn.id);
                seat.dropped_at = None;
                seat.absent = false;
                if !seat.peers.contains(&conn.peer) {
                    seat.peers.push(conn.peer);
                }
                if let Some(previous) = previous {
                    // The same seat from a new connection: the old one is closed.
                    if let Some(i) = self.members.iter().position(|m| m.conn.id == previous) {
                        let old = self.members.swap_remove(i);
                        self.outbox.push(Outgoing::Close {
                            conn: old.conn,
                            code: close::NORMAL,
                            reason: "your seat was taken over by a newer connection",
                        });
                    }
                } else {
                    self.publish(
                        vec![wire::Event::ConnectionChanged {
                            player: player,
                            connected: true,
                        }],
                        Instant::now(),
                    );
                }
                self.admit(conn, Role::Player(player), request_id, Some(token));
                info!(table = %self.id, player = player, "player resumed");
                Ok(Role::Player(player))
            }
        }
    }

    /// Adds a member and queues its answer and a snapshot (in that order, on its own queue).
    fn admit(&mut self, conn: Conn, role: Role, request_id: u32, token: Option<SeatToken>) {
        let answer = match (role, token) {
            (Role::Player(player), Some(token)) => ServerMessage::Seated {
                reply_to: request_id,
                table: self.id,
                player: player,
                token,
            },
            _ => ServerMessage::Watching {
                reply_to: request_id,
                table: self.id,
            },
        };
        self.send(&conn, &answer);
        let snapshot = ServerMessage::Snapshot {
            reply_to: None,
            view: self.view(),
        };
        self.send(&conn, &snapshot);
        self.members.push(Member {
            conn,
            role,
            since_seq: self.seq,
        });
        self.empty_since = None;
    }

    fn leave(&mut self, connection: u64, request_id: u32) {
        let Some(i) = self.members.iter().position(|m| m.conn.id == connection) else {
            return;
        };
        let member = self.members.swap_remove(i);
        self.send(
            &member.conn,
            &ServerMessage::Left {
                reply_to: request_id,
            },
        );
        match member.role {
            Role::Spectator => self.spectator_left(),
            Role::Player(player) if self.core.stage() == Stage::Lobby => {
                self.give_up_seat(player);
            }
            Role::Player(player) => self.player_dropped(player),
        }
        self.note_if_empty();
    }

    fn gone(&mut self, connection: u64) {
        let Some(i) = self.members.iter().position(|m| m.conn.id == connection) else {
            return;
        };
        let member = self.members.swap_remove(i);
        match member.role {
            Role::Spectator => self.spectator_left(),
            Role::Player(player) => self.player_dropped(player),
        }
        self.note_if_empty();
    }

    fn spectator_left(&mut self) {
        let spectators = self.spectators();
        self.publish(
            vec![wire::Event::SpectatorsChanged { spectators }],
            Instant::now(),
        );
    }

    /// A seated player's connection went away: the seat stays reserved for him.
    fn player_dropped(&mut self, player: wire::PlayerId) {
        let Some(seat) = self.seats.iter_mut().find(|s| s.player == player) else {
            return;
        };
        seat.connection = None;
        seat.dropped_at = Some(Instant::now());
        self.publish(
            vec![wire::Event::ConnectionChanged {
                player,
                connected: false,
            }],
            Instant::now(),
        );
    }

    /// A player gives up his seat in the lobby (by leaving, or by staying away past the grace
    /// period). If he was the host, the next player in join order becomes host.
    fn give_up_seat(&mut self, player: wire::PlayerId) {
        let Ok(events) = self.core.handle(Actor::Player(player), Command::Leave) else {
            return;
        };
        self.seats.retain(|s| s.player != player);
        self.journal_ops
            .push(JournalOp::RemoveSeat { player: player });
        let mut wire_events: Vec<wire::Event> = events;
        if self.host == Some(player) {
            self.host = self.seats.first().map(|s| s.player);
            wire_events.push(wire::Event::HostChanged { player: self.host });
        }
        self.publish(wire_events, Instant::now());
    }

    fn note_if_empty(&mut self) {
        if self.members.is_empty() && self.empty_since.is_none() {
            self.empty_since = Some(Instant::now());
        }
    }

    fn spectators(&self) -> u32 {
        let count = self
            .members
            .iter()
            .filter(|m| m.role == Role::Spectator)
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    // ----- Timers ----------------------------------------------------------------------------

    fn grace(&self) -> Duration {
        self.shared.config.grace_period()
    }

    fn closable(&self) -> bool {
        self.core.stage() == Stage::Finished
            || (self.core.stage() == Stage::Lobby && self.seats.is_empty())
    }

    fn seat(&self, player: wire::PlayerId) -> Option<&Seat> {
        self.seats.iter().find(|s| s.player == player)
    }

    fn alive(&self, player: wire::PlayerId) -> bool {
        self.core
            .player(player)
            .is_some_and(|p| p.status.is_alive())
    }

    /// When each running turn expires: by the turn clock, or because its player has been away
    /// for the grace period while it runs (his turn waits that long, then is skipped).
    fn turn_deadlines(&self) -> impl Iterator<Item = (wire::PlayerId, Expiry, Instant)> + '_ {
        let playing = self.core.stage() == Stage::Playing && self.paused_since.is_none();
        self.running_since
            .iter()
            .filter(move |_| playing)
            .flat_map(move |&(_, player, since)| {
                let clock = self.turn_clock.map(|c| (player, Expiry::Clock, since + c));
                let absent = self
                    .seat(player)
                    .and_then(|s| s.dropped_at)
                    .map(|dropped| (player, Expiry::Absent, since.max(dropped) + self.grace()));
                clock.into_iter().chain(absent)
            })
    }

    /// When the due mulligan decision is taken as `keep`: by the mulligan clock, or because the
    /// decider has been away for the grace period while it is due (counted from when it came up
    /// or when he dropped, whichever is later). Paused time does not count.
    fn mulligan_deadline(&self) -> Option<(wire::PlayerId, Expiry, Instant)> {
        if self.paused_since.is_some() {
            return None;
        }
        let (player, since) = self.deciding_since?;
        let clock = (self.settings.mulligan_clock_secs > 0).then(|| {
            let clock = Duration::from_secs(self.settings.mulligan_clock_secs.into());
            (player, Expiry::Clock, since + clock)
        });
        let absent = self
            .seat(player)
            .and_then(|s| s.dropped_at)
            .map(|dropped| (player, Expiry::Absent, since.max(dropped) + self.grace()));
        clock.into_iter().chain(absent).min_by_key(|&(_, _, at)| at)
    }

    /// Players due to be announced absent, with the moment.
    fn absence_deadlines(&self) -> impl Iterator<Item = (wire::PlayerId, Instant)> + '_ {
        let limit = Duration::from_secs(self.settings.absence_limit_secs.into());
        let counting = self.core.stage() == Stage::Playing && self.paused_since.is_none();
        self.seats
            .iter()
            .filter(move |s| counting && !s.absent && self.alive(s.player))
            .filter_map(move |s| s.dropped_at.map(|t| (s.player, t + limit)))
    }

    /// When the host role passes to someone else: the host has been away for the grace period
    /// and another seated player is connected.
    fn host_deadline(&self) -> Option<Instant> {
        let host = self.seat(self.host?)?;
        let dropped = host.dropped_at?;
        self.seats
            .iter()
            .any(|s| s.connection.is_some())
            .then(|| dropped + self.grace())
    }

    /// When a pause ends by itself: one person may not hold the whole table still for longer
    /// than the table lets an absent player hold it up (its absence limit, and never less than
    /// the grace period). The host may pause again.
    fn pause_deadline(&self) -> Option<Instant> {
        let limit = Duration::from_secs(self.settings.absence_limit_secs.into()).max(self.grace());
        self.paused_since.map(|since| since + limit)
    }

    /// The next moment something expires.
    fn next_deadline(&self) -> Option<Instant> {
        let grace = self.grace();
        let lobby_seat = if self.core.stage() == Stage::Lobby {
            self.seats
                .iter()
                .filter_map(|s| s.dropped_at)
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
        [
            lobby_seat,
            empty,
            self.host_deadline(),
            mulligan,
            self.pause_deadline(),
        ]
        .into_iter()
        .flatten()
        .chain(self.turn_deadlines().map(|(_, _, t)| t))
        .chain(self.absence_deadlines().map(|(_, t)| t))
        .min()
    }

    /// Acts on everything that has expired; returns whether the table should close.
    fn expire(&mut self) -> bool {
        let grace = self.grace();
        let now = Instant::now();
        if self.pause_deadline().is_some_and(|t| t <= now) {
            info!(table = %self.id, "the pause has lasted the table's absence limit: resuming");
            self.pause(false, now);
        }
        if self.core.stage() == Stage::Lobby {
            let expired: Vec<wire::PlayerId> = self
                .seats
                .iter()
                .filter(|s| s.dropped_at.is_some_and(|t| t + grace <= now))
                .map(|s| s.player)
                .collect();
            for player in expired {
                info!(table = %self.id, player = player, "seat given up after the grace period");
                self.give_up_seat(player);
            }
        }
        if let Some((player, reason, at)) = self.mulligan_deadline()
            && at <= now
        {
            info!(table = %self.id, player = player, ?reason, "mulligan decision taken as keep");
            let command = Command::ExpireMulligan { player, reason };
            if let Err(code) = self.run_core(Actor::Host, command, now) {
                // Cannot happen (the decider is tracked after every change); if it does, the
                // clock starts again rather than the table waiting forever.
                warn!(table = %self.id, %code, "an expired mulligan decision was refused");
                self.deciding_since = None;
                self.track_decider(now);
            }
        }
        let due: Vec<(wire::PlayerId, Expiry)> = self
            .turn_deadlines()
            .filter(|&(_, _, t)| t <= now)
            .map(|(player, expiry, _)| (player, expiry))
            .collect();
        for (player, reason) in due {
            info!(table = %self.id, player = player, ?reason, "turn expired");
            let command = Command::ExpireTurn { player, reason };
            if self.run_core(Actor::Host, command, now).is_err() {
                // Already ended by an earlier expiry in this round: forget it either way.
                self.running_since.retain(|&(_, p, _)| p != player);
            }
        }
        let absent: Vec<wire::PlayerId> = self
            .absence_deadlines()
            .filter(|&(_, t)| t <= now)
            .map(|(player, _)| player)
            .collect();
        for player in absent {
            if let Some(seat) = self.seats.iter_mut().find(|s| s.player == player) {
                seat.absent = true;
            }
            self.publish(vec![wire::Event::PlayerAbsent { player: player }], now);
        }
        if self.host_deadline().is_some_and(|t| t <= now) {
            let next = self
                .seats
                .iter()
                .find(|s| s.connection.is_some())
                .map(|s| s.player);
            info!(table = %self.id, "host away: the role passes on");
            self.set_host(next);
        }
        self.closable()
            && self
                .empty_since
                .is_some_and(|t| t + self.empty_delay() <= now)
    }

    /// How long an empty, closable table stays open.
    fn empty_delay(&self) -> Duration {
        if self.ever_seated {
            self.grace()
        } else {
            self.shared.config.unjoined_table()
        }
    }

    /// Mutes or unmutes a player's chat.
    fn set_muted(&mut self, player: wire::PlayerId, muted: bool) {
        self.muted.retain(|&p| p != player);
        if muted {
            self.muted.push(player);
        }
    }

    fn set_host(&mut self, host: Option<wire::PlayerId>) {
        if self.host != host {
            self.host = host;
            self.publish(
                vec![wire::Event::HostChanged { player: host }],
                Instant::now(),
            );
        }
    }

    // ----- Requests --------------------------------------------------------------------------

    fn request(&mut self, connection: u64, request: ClientMessage, received: Instant) {
        let Some(member) = self.members.iter().find(|m| m.conn.id == connection) else {
            return;
        };
        let (conn, role) = (member.conn.clone(), member.role);
        if let Err(code) = self.decide(&conn, role, &request, received) {
            Metrics::add(&self.shared.metrics.rejected, 1);
            self.send(&conn, &ServerMessage::error(Some(&request), code));
        }
    }

    fn decide(
        &mut self,
        conn: &Conn,
        role: Role,
        request: &ClientMessage,
        received: Instant,
    ) -> Result<(), ErrorCode> {
        match request {
            ClientMessage::Snapshot { id } => {
                let snapshot = ServerMessage::Snapshot {
                    reply_to: Some(*id),
                    view: self.view(),
                };
                self.send(conn, &snapshot);
                return Ok(());
            }
            ClientMessage::Chat { id, text } => {
                // Shown on every screen at the table: see `grand_melee_protocol::text`.
                let text = text::normalize_chat(text).map_err(|error| match error {
                    text::TextError::Forbidden(_) => ErrorCode::BadText,
                    _ => ErrorCode::ChatTooLong,
                })?;
                let muted = match role {
                    Role::Player(player) => self.muted.contains(&player),
                    Role::Spectator => self.spectators_muted,
                };
                if muted {
                    return Err(ErrorCode::Muted);
                }
                if let Some(budget) = &mut self.chat_budget
                    && !budget.take(received)
                {
                    return Err(ErrorCode::RateLimited);
                }
                let (from, name) = match role {
                    Role::Player(player) => (
                        Some(player),
                        self.core
                            .lobby()
                            .iter()
                            .find(|(p, _)| *p == player)
                            .map(|(_, name)| name.clone())
                            .unwrap_or_default(),
                    ),
                    Role::Spectator => (None, "spectator".to_owned()),
                };
                let event = wire::Event::Chat { from, name, text };
                let seq = self.publish(vec![event], received);
                self.send(conn, &ServerMessage::Ack { reply_to: *id, seq });
                return Ok(());
            }
            _ => {}
        }
        let Role::Player(me) = role else {
            return Err(ErrorCode::NotAPlayer);
        };
        let host = self.host == Some(me);
        let ack = |room: &mut Self, seq| {
            room.send(
                conn,
                &ServerMessage::Ack {
                    reply_to: request.id(),
                    seq,
                },
            );
        };
        match request {
            ClientMessage::Pause { paused, .. } => {
                if !host {
                    return Err(ErrorCode::NotHost);
                }
                let seq = self.pause(*paused, received);
                ack(self, seq);
                return Ok(());
            }
            ClientMessage::Mute { player, muted, .. } => {
                if !host {
                    return Err(ErrorCode::NotHost);
                }
                match player {
                    Some(player) => {
                        let player = *player;
                        if self.seat(player).is_none() {
                            return Err(ErrorCode::UnknownPlayer);
                        }
                        self.set_muted(player, *muted);
                    }
                    None => self.spectators_muted = *muted,
                }
                let event = wire::Event::PlayerMuted {
                    player: player.as_ref().copied(),
                    muted: *muted,
                };
                let seq = self.publish(vec![event], received);
                ack(self, seq);
                return Ok(());
            }
            ClientMessage::TransferHost { player, .. } => {
                if !host {
                    return Err(ErrorCode::NotHost);
                }
                let player = *player;
                if self.seat(player).is_none() {
                    return Err(ErrorCode::UnknownPlayer);
                }
                self.set_host(Some(player));
                ack(self, self.seq);
                return Ok(());
            }
            ClientMessage::Kick { player, ban, .. } => {
                if !host {
                    return Err(ErrorCode::NotHost);
                }
                let seq = self.kick(*player, *ban, received)?;
                ack(self, seq);
                return Ok(());
            }
            _ => {}
        }
        let (authority, command) = edge::command(request).ok_or(ErrorCode::BadMessage)?;
        let actor = match authority {
            Authority::Player => Actor::Player(me),
            Authority::Host if host => Actor::Host,
            Authority::Host => return Err(ErrorCode::NotHost),
        };
        if self.paused_since.is_some() {
            return Err(ErrorCode::TablePaused);
        }
        let seq = self.run_core(actor, command, received)?;
        ack(self, seq);
        Ok(())
    }

    /// Runs a command through the rules core and publishes its events; returns the number of the
    /// last event.
    fn run_core(
        &mut self,
        actor: Actor,
        command: Command,
        received: Instant,
    ) -> Result<u64, ErrorCode> {
        let events = self.core.handle(actor, command)?;
        let seq = self.publish(events, received);
        let seq = seq.max(self.settle_kicks(received));
        self.after_core(received);
        Ok(seq)
    }

    /// Brings the room's bookkeeping in step with the core after it changed: running turns, the
    /// mulligan decider, and the end of the game.
    fn after_core(&mut self, now: Instant) {
        self.track_running_turns(now);
        self.track_decider(now);
        if self.core.stage() == Stage::Finished && !self.game_over_noted {
            self.game_over_noted = true;
            info!(table = %self.id, "game over");
            self.journal_ops.push(JournalOp::Finish);
            self.note_if_empty();
        }
    }

    /// Notes when each mulligan decision comes up: the mulligan clock and an absent decider's
    /// grace period count from then.
    fn track_decider(&mut self, now: Instant) {
        let decider = match self.core.stage() {
            Stage::Mulligan { .. } => self.core.mulligan_decider(),
            _ => None,
        };
        match (decider, self.deciding_since) {
            (Some(player), Some((noted, _))) if player == noted => {}
            (Some(player), _) => self.deciding_since = Some((player, now)),
            (None, _) => self.deciding_since = None,
        }
    }

    /// Players kicked during mulligans: a kicked player's decision is taken as `keep` as soon as
    /// it is due (the host's ruling), and as play begins every kicked player still alive is
    /// eliminated by ruling. Returns the number of the last event published.
    fn settle_kicks(&mut self, now: Instant) -> u64 {
        let mut seq = self.seq;
        loop {
            let command = match self.core.stage() {
                Stage::Mulligan { .. } => match self.core.mulligan_decider() {
                    Some(decider) if self.kicked_in_mulligan.contains(&decider) => {
                        wire::Ruling::Keep { player: decider }
                    }
                    _ => break,
                },
                Stage::Playing => {
                    let kicked = std::mem::take(&mut self.kicked_in_mulligan);
                    let players: Vec<wire::PlayerId> =
                        kicked.into_iter().filter(|&p| self.alive(p)).collect();
                    if players.is_empty() {
                        break;
                    }
                    wire::Ruling::Eliminate { players }
                }
                _ => {
                    self.kicked_in_mulligan.clear();
                    break;
                }
            };
            let playing = self.core.stage() == Stage::Playing;
            match self.core.handle(Actor::Host, Command::Ruling(command)) {
                Ok(events) => seq = self.publish(events, now),
                Err(rejection) => {
                    warn!(table = %self.id, %rejection, "settling a kicked player");
                    break;
                }
            }
            if playing {
                break;
            }
        }
        seq
    }

    /// Keeps `running_since` in step with the core: new running periods start now, ended ones
    /// are forgotten.
    fn track_running_turns(&mut self, now: Instant) {
        let core = &self.core;
        let running: Vec<(wire::TurnId, wire::PlayerId)> = core
            .turns()
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .map(|t| (t.id, core.players()[t.seat].id))
            .collect();
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
                for (_, _, started) in &mut self.running_since {
                    *started = unpaused(*started, since, now);
                }
                if let Some((_, decided)) = &mut self.deciding_since {
                    *decided = unpaused(*decided, since, now);
                }
                for seat in &mut self.seats {
                    if let Some(dropped) = &mut seat.dropped_at {
                        *dropped = unpaused(*dropped, since, now);
                    }
                }
                self.paused_since = None;
            }
            _ => return self.seq,
        }
        info!(table = %self.id, paused, "pause");
        self.publish(vec![wire::Event::TablePaused { paused }], now)
    }

    /// Removes a player on the host's word: his seat token stops working and his connection is
    /// closed; in the lobby he loses his seat, during a game he is eliminated.
    fn kick(&mut self, player: wire::PlayerId, ban: bool, now: Instant) -> Result<u64, ErrorCode> {
        let Some(index) = self.seats.iter().position(|s| s.player == player) else {
            return Err(ErrorCode::UnknownPlayer);
        };
        let mut events = vec![wire::Event::PlayerKicked {
            player: player,
            banned: ban,
        }];
        match self.core.stage() {
            Stage::Lobby => {
                let left = self.core.handle(Actor::Player(player), Command::Leave)?;
                events.extend(left);
            }
            Stage::Playing if self.alive(player) => {
                let ruling = wire::Ruling::Eliminate {
                    players: vec![player],
                };
                let out = self.core.handle(Actor::Host, Command::Ruling(ruling))?;
                events.extend(out);
            }
            // Nobody is eliminated during mulligans: his decision is taken as `keep` when it is
            // due, and he is eliminated as play begins (`settle_kicks`).
            Stage::Mulligan { .. } if self.alive(player) => self.kicked_in_mulligan.push(player),
            // An eliminated player, or a finished game: only the seat goes.
            _ => {}
        }
        let seat = self.seats.remove(index);
        self.journal_ops
            .push(JournalOp::RemoveSeat { player: player });
        if ban {
            for peer in &seat.peers {
                if !self.banned.contains(peer) {
                    self.banned.push(*peer);
                }
            }
            let addresses: Vec<String> = self.banned.iter().map(ToString::to_string).collect();
            if let Ok(value) = rmp_serde::to_vec(&addresses) {
                self.journal_ops.push(JournalOp::SetMeta {
                    key: BANNED_META,
                    value,
                });
            }
        }
        info!(table = %self.id, player = player, ban, "kicked");
        let seq = self.publish(events, now);
        let seq = seq.max(self.settle_kicks(now));
        self.after_core(now);
        if let Some(connection) = seat.connection
            && let Some(i) = self.members.iter().position(|m| m.conn.id == connection)
        {
            let member = self.members.swap_remove(i);
            self.outbox.push(Outgoing::Close {
                conn: member.conn,
                code: close::POLICY_VIOLATION,
                reason: if ban {
                    "removed and banned from the table by the host"
                } else {
                    "removed from the table by the host"
                },
            });
        }
        if self.host == Some(player) {
            let next = self
                .seats
                .iter()
                .find(|s| s.connection.is_some())
                .map(|s| s.player);
            self.set_host(next);
        }
        Ok(self.seq.max(seq))
    }

    // ----- Output ----------------------------------------------------------------------------

    /// Numbers the events and encodes their batch once; `flush` hands the same bytes to every
    /// member. Returns the number of the last event.
    fn publish(&mut self, events: Vec<wire::Event>, received: Instant) -> u64 {
        if events.is_empty() {
            return self.seq;
        }
        // The core's own events are applied as it decides them; the table-level events the
        // room decides are folded here, so the table stays the fold of everything published.
        for event in events.iter().filter(|e| !e.is_game_event()) {
            if let Err(reason) = self.core.apply(event) {
                error!(table = %self.id, reason, ?event, "a table-level event does not apply");
            }
        }
        let first = self.seq + 1;
        self.seq += events.len() as u64;
        Metrics::add(&self.shared.metrics.events, events.len() as u64);
        let (_, journal) = self.unjournaled.get_or_insert_with(|| (first, Vec::new()));
        journal.extend(events.iter().map(wire::encode_event));
        let frame = Bytes::from(wire::encode_server(&ServerMessage::Events {
            table: self.id,
            seq: first,
            events,
        }));
        self.outbox.push(Outgoing::Events {
            last_seq: self.seq,
            frame,
        });
        self.outbox_since.get_or_insert(received);
        debug!(table = %self.id, first, last = self.seq, "published");
        self.seq
    }

    /// Writes the current request's events, seats and game-over mark to the journal, as one
    /// group of operations (the journal's writer commits them together when it can).
    async fn journal_pending(&mut self) -> Result<(), crate::journal::JournalError> {
        let journal = &self.shared.journal;
        let table = self.id;
        if let Some((first, events)) = self.unjournaled.take()
            && !self.finish_journaled
        {
            journal.append(table, first, events).await?;
        }
        for op in std::mem::take(&mut self.journal_ops) {
            match op {
                JournalOp::SetSeat { player, token } => {
                    journal.set_seat(table, player, token).await?;
                }
                JournalOp::RemoveSeat { player } => journal.remove_seat(table, player).await?,
                JournalOp::SetMeta { key, value } => journal.set_meta(table, key, value).await?,
                JournalOp::Finish => {
                    journal.finish(table, now_ms()).await?;
                    self.finish_journaled = true;
                }
            }
        }
        Ok(())
    }

    /// Queues one message for one connection (delivered by `flush`, in order with the rest).
    fn send(&mut self, conn: &Conn, message: &ServerMessage) {
        self.outbox.push(Outgoing::Direct {
            conn: conn.clone(),
            frame: Bytes::from(wire::encode_server(message)),
        });
    }

    /// Makes what the last request produced durable, then delivers it, in order: nothing a
    /// client sees can be lost. A member whose queue is full is closed by `Conn::send`; its
    /// reader then reports `Gone`.
    async fn flush(&mut self) {
        if let Err(error) = self.journal_pending().await {
            // The state has moved on but is not durable, and nobody has seen it: stop the table
            // here; it recovers from its last durable event when the server restarts.
            error!(table = %self.id, %error, "the journal refused a write: stopping the table");
            for member in self.members.drain(..) {
                member.conn.close(close::INTERNAL_ERROR);
            }
            self.outbox.clear();
            self.broken = true;
            return;
        }
        let (mut frames, mut bytes) = (0, 0);
        for outgoing in self.outbox.drain(..) {
            match outgoing {
                Outgoing::Events { last_seq, frame } => {
                    for member in self.members.iter().filter(|m| m.since_seq < last_seq) {
                        if member.conn.send(frame.clone()) {
                            frames += 1;
                            bytes += frame.len();
                        }
                    }
                }
                Outgoing::Direct { conn, frame } => {
                    let len = frame.len();
                    if conn.send(frame) {
                        frames += 1;
                        bytes += len;
                    }
                }
                Outgoing::Close { conn, code, reason } => conn.close_because(code, reason),
            }
        }
        self.shared.metrics.count_out(frames, bytes);
        if let Some(received) = self.outbox_since.take() {
            self.shared.metrics.observe_broadcast(received.elapsed());
        }
    }

    /// The snapshot: the one fold's projection, the same a client's mirror computes.
    fn view(&self) -> wire::TableView {
        let settings = edge::settings(self.core.config(), self.password.is_some(), self.settings);
        self.core.view(self.id, &self.name, self.seq, &settings)
    }

    /// Updates the lobby's summary of this table. The fixed parts (name, settings) are set once
    /// in `new`; this only touches what changes, and wakes nobody when nothing did.
    fn publish_summary(&self) {
        let seated = u8::try_from(self.seats.len()).unwrap_or(u8::MAX);
        let spectators = self.spectators();
        let stage = wire::stage_name(self.core.stage());
        self.summary.send_if_modified(|current| {
            let changed =
                (current.seated, current.spectators, current.stage) != (seated, spectators, stage);
            (current.seated, current.spectators, current.stage) = (seated, spectators, stage);
            changed
        });
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

/// Sleeps until the deadline, or forever if there is none.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// One page of a finished game read back from the journal, ready to send.
#[derive(Debug)]
pub(crate) struct Replay {
    table: TableId,
    name: String,
    settings: wire::Settings,
    events: Vec<wire::Event>,
    total_events: u64,
}

impl Replay {
    /// The `replay` message answering request `id` for events from `first_seq` on.
    pub(crate) fn answering(self, id: u32, first_seq: u64) -> ServerMessage {
        let after = first_seq.saturating_add(self.events.len() as u64);
        ServerMessage::Replay {
            reply_to: id,
            table: self.table,
            name: self.name,
            settings: self.settings,
            first_seq,
            events: self.events,
            total_events: self.total_events,
            next_seq: (after <= self.total_events).then_some(after),
        }
    }
}

/// Decodes a page of a finished game read from the journal.
pub(crate) fn replay_page(
    table: TableId,
    page: crate::journal::ReplayPage,
) -> Result<Replay, ErrorCode> {
    let settings: StoredSettings =
        rmp_serde::from_slice(&page.record.settings).map_err(|_| ErrorCode::StorageFailed)?;
    let events = page
        .events
        .iter()
        .map(|(_, bytes)| wire::decode_event(bytes))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| ErrorCode::StorageFailed)?;
    Ok(Replay {
        table,
        name: page.record.name,
        settings: edge::settings(
            &settings.config,
            page.record.password.is_some(),
            settings.room(),
        ),
        events,
        total_events: page.total_events,
    })
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
