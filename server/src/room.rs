//! A table's actor: the I/O driver around one [`Session`] (the table's rules, its one fold and
//! its session rules, all pure), like `quinn::Endpoint` around `quinn_proto`. One task owns it
//! and is fed by a bounded channel: it receives, feeds the session, journals what the session
//! decided, then delivers it, and sleeps until [`Session::poll_timeout`]. No locks around game
//! state: nobody else can reach it.

use std::sync::Arc;
use std::time::Instant;

use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, GameKind, MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS,
    SeatToken, ServerMessage, TableId, TableSummary, close, text,
};
use tokio::sync::{mpsc, watch};
use tracing::{debug, error, info, warn};
use uuid::Uuid;

use futures_util::future::BoxFuture;
use grand_melee_protocol::PlayerId;
use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::game::Game;
use grand_melee_protocol::games::GameVisitor;
use grand_melee_protocol::league::{Deck, LeagueId, MemberId, SeatDeck};
use grand_melee_protocol::rules::TableConfig;
use grand_melee_protocol::session::{Effect, Role, Session, Timing};

use crate::cluster::OutItem;
use crate::conn::{Conn, Refusal};
use crate::lobby::{Entry, RoomMsg, Shared, TableEntry, TableRefusal, TableSlot};
use grand_melee_protocol::mountain_magic::day::{Day, FinishedClimb};

use crate::metrics::Metrics;
use crate::outbox::Frame;
use crate::store::{
    Credit, Flush, Progress, StoreError, StoredTable, TableLog, TableOp, TableRecord,
};

/// What the journal keeps of a table's settings: the one [`wire::Settings`] (its `password` is
/// the record's, not kept here), the creator's seed and the dice secret. Written and read in
/// the form of schema v3 ([`StoredV3`]), so journals from before `game` still load and a
/// Grand Melee table's bytes are the same as they were.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(from = "StoredV3")]
struct StoredSettings {
    settings: wire::Settings,
    seed: u64,
    secret: DiceSecret,
}

/// The journal's form of a table's settings (schema v3): the rules' [`TableConfig`] with the
/// seed and the secret, then the session's settings.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredV3 {
    config: TableConfig,
    turn_clock_secs: u32,
    absence_limit_secs: u32,
    /// Absent from journals written before mulligan clocks existed (and `max_spectators`
    /// before its limit): those tables get [`wire::Settings`]' default.
    #[serde(default)]
    mulligan_clock_secs: Option<u32>,
    #[serde(default)]
    max_spectators: Option<u32>,
    /// The league whose game this is, if any.
    #[serde(default, with = "crate::store::uuid_form::option")]
    league: Option<LeagueId>,
    /// Absent for Grand Melee (every journal from before the game seam).
    #[serde(default, skip_serializing_if = "GameKind::is_default")]
    game: GameKind,
    /// A Mountain Magic table's own settings (absent at every other table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mountain_magic: Option<wire::mountain_magic_types::MountainMagicSettings>,
}

impl From<StoredV3> for StoredSettings {
    fn from(stored: StoredV3) -> Self {
        let config = stored.config;
        let defaults = wire::Settings::default();
        Self {
            settings: wire::Settings {
                mountain_magic: stored.mountain_magic,
                seats: config.seats,
                spell_range: u8::from(config.spell_range),
                reduction: config.reduction,
                starting_life: config.starting_life,
                hand_size: config.hand_size,
                password: false,
                turn_clock_secs: stored.turn_clock_secs,
                absence_limit_secs: stored.absence_limit_secs,
                mulligan_clock_secs: stored
                    .mulligan_clock_secs
                    .unwrap_or(defaults.mulligan_clock_secs),
                max_spectators: stored.max_spectators.unwrap_or(defaults.max_spectators),
                rules: config.rule_set,
                combat_dice: config.combat_dice,
                mulligan: config.mulligan,
                league: stored.league,
                game: stored.game,
            },
            seed: config.seed,
            secret: config.secret,
        }
    }
}

impl serde::Serialize for StoredSettings {
    /// In the v3 form; settings the rules refuse are an error (a table is only created with
    /// settings they took).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let settings = &self.settings;
        let mut config = TableConfig::from_settings(settings, self.seed)
            .map_err(<S::Error as serde::ser::Error>::custom)?;
        config.secret = self.secret;
        StoredV3 {
            config,
            turn_clock_secs: settings.turn_clock_secs,
            absence_limit_secs: settings.absence_limit_secs,
            mulligan_clock_secs: Some(settings.mulligan_clock_secs),
            max_spectators: Some(settings.max_spectators),
            league: settings.league,
            game: settings.game,
            mountain_magic: settings.mountain_magic.clone(),
        }
        .serialize(s)
    }
}

impl StoredSettings {
    /// The table's settings as the protocol shows them, with the record's `password` (the seed
    /// and the secret stay here).
    fn settings(&self, password: bool) -> wire::Settings {
        wire::Settings {
            password,
            ..self.settings.clone()
        }
    }
}

/// A table's dice secret: 32 bytes from the operating system's generator (two version-4 UUIDs,
/// 244 random bits), drawn before anyone can join and committed to in every snapshot.
pub(crate) fn now_ms() -> u64 {
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
) -> Result<TableId, Refusal> {
    let (
        Some(settings),
        ClientMessage::CreateTable {
            name,
            password,
            seed,
            league,
            organiser,
            ..
        },
    ) = (wire::Settings::requested(request), request)
    else {
        return Err(ErrorCode::BadMessage.into());
    };
    if let Some(league) = league {
        crate::leagues::check_organiser(shared, peer, *league, *organiser).await?;
    }
    let name = text::normalize_name(name).map_err(|error| error.code())?;
    if password
        .as_ref()
        .is_some_and(|p| !(MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&p.chars().count()))
    {
        return Err(Refusal::settings(format!(
            "password: a password has {MIN_PASSWORD_CHARS}–{MAX_PASSWORD_CHARS} characters"
        )));
    }
    grand_melee_protocol::rules::SpellRange::new(settings.spell_range)
        .map_err(|error| Refusal::settings(error.message()))?;
    if settings.max_spectators > wire::MAX_SPECTATORS {
        return Err(Refusal::settings(format!(
            "max_spectators: at most {} spectators, not {}",
            wire::MAX_SPECTATORS,
            settings.max_spectators
        )));
    }
    for (field, secs) in [
        ("turn_clock_secs", settings.turn_clock_secs),
        ("absence_limit_secs", settings.absence_limit_secs),
        ("mulligan_clock_secs", settings.mulligan_clock_secs),
    ] {
        // No wait a table sets may be effectively endless.
        if secs > wire::MAX_CLOCK_SECS {
            return Err(Refusal::settings(format!(
                "{field}: at most {} seconds (24 hours), not {secs}",
                wire::MAX_CLOCK_SECS
            )));
        }
    }
    let seed = seed.unwrap_or_else(|| Uuid::new_v4().as_u64_pair().0);
    TableConfig::from_settings(&settings, seed)
        .map_err(|error| Refusal::settings(error.message()))?;
    let mut settings = settings;
    let secret = match crate::mountain::day_settings(shared, &mut settings).await? {
        Some(secret) => secret,
        None => crate::store::draw_secret(),
    };
    // The game's own checks, before anything is written.
    settings.game.visit(CheckCreate {
        settings: &settings,
        secret,
    })?;
    let stored = StoredSettings {
        settings,
        seed,
        secret,
    };
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
            shared
                .hasher
                .hash(password)
                .await
                .map_err(|_| ErrorCode::ServerBusy)?
                .map_err(|error| {
                    error!(%error, "hashing a table password");
                    ErrorCode::StorageFailed
                })?,
        ),
        None => None,
    };
    let id = TableId::new_random();
    let record = TableRecord {
        id,
        name: name.clone(),
        password: password.clone(),
        settings: rmp_serde::to_vec_named(&stored).map_err(|_| ErrorCode::BadSettings)?,
        created_at_ms: now_ms(),
        league: *league,
    };
    let summary = TableSummary::new(id, &name, &stored.settings);
    let log = shared
        .store
        .create_table(record, summary)
        .await
        .map_err(|error| {
            error!(%error, "journaling a new table");
            ErrorCode::StorageFailed
        })?;
    info!(table = %id, name, "table created");
    let open = Open {
        id,
        name,
        password,
        stored,
        shared: Arc::clone(shared),
        slot,
        log,
    };
    open.stored.settings.game.visit(open)?.await;
    Ok(id)
}

/// Asks the game whether it takes the settings (a table it would refuse is never written).
struct CheckCreate<'a> {
    settings: &'a wire::Settings,
    secret: DiceSecret,
}

impl GameVisitor for CheckCreate<'_> {
    type Output = Result<(), ErrorCode>;

    fn visit<G: Game>(self) -> Self::Output {
        G::create(self.settings, self.secret).map(drop)
    }
}

/// A new table's room, for the game its settings name: its session, its actor started.
struct Open {
    id: TableId,
    name: String,
    password: Option<String>,
    stored: StoredSettings,
    shared: Arc<Shared>,
    slot: TableSlot,
    log: Box<dyn TableLog>,
}

impl GameVisitor for Open {
    type Output = Result<BoxFuture<'static, ()>, ErrorCode>;

    fn visit<G: Game>(self) -> Self::Output {
        let session: Session<G> = Session::new(
            self.stored.settings,
            self.stored.secret,
            timing(&self.shared),
            Instant::now(),
        )?;
        let room = Room::new(
            self.id,
            self.name,
            self.password,
            session,
            &self.shared,
            self.slot,
            self.log,
        );
        Ok(Box::pin(room.start()))
    }
}

/// A table read back from the store, folded by the game its settings name.
struct Recover<'a> {
    stored: StoredTable,
    settings: StoredSettings,
    shared: &'a Arc<Shared>,
    log: Box<dyn TableLog>,
}

impl GameVisitor for Recover<'_> {
    type Output = Result<Box<dyn Recovered>, RoomError>;

    fn visit<G: Game>(self) -> Self::Output {
        let room: Room<G> = Room::recover(self.stored, self.settings, self.shared, self.log)?;
        Ok(Box::new(room))
    }
}

/// A recovered room of any game: what taking it up and starting it need.
trait Recovered: Send {
    /// The number of its last event.
    fn seq(&self) -> u64;
    /// Where its game is.
    fn stage(&self) -> wire::StageName;
    /// The league credits of its finished game.
    fn credits(&self) -> Vec<Credit>;
    /// Its finished climb of a day's mountain, if it is one.
    fn climb(&self, at_ms: u64) -> Option<FinishedClimb>;
    /// Journals what its recovery changed; `false` if the store refused it.
    fn settle(&mut self) -> BoxFuture<'_, bool>;
    /// Registers it in the lobby and starts its actor.
    fn start(self: Box<Self>) -> BoxFuture<'static, ()>;
}

impl<G: Game> Recovered for Room<G> {
    fn seq(&self) -> u64 {
        self.session.seq()
    }

    fn stage(&self) -> wire::StageName {
        wire::stage_name(self.session.table().stage())
    }

    fn credits(&self) -> Vec<Credit> {
        Room::credits(self)
    }

    fn climb(&self, at_ms: u64) -> Option<FinishedClimb> {
        FinishedClimb::of(&self.view(), self.day_climb.started_at_ms, at_ms)
    }

    fn settle(&mut self) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            self.carry_out(Instant::now());
            self.flush().await;
            !self.broken
        })
    }

    fn start(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(Room::start(*self))
    }
}

/// Reads a stored table's settings, then folds it with the game they name.
fn recover(
    stored: StoredTable,
    shared: &Arc<Shared>,
    log: Box<dyn TableLog>,
) -> Result<Box<dyn Recovered>, RoomError> {
    let settings: StoredSettings =
        rmp_serde::from_slice(&stored.record.settings).map_err(RoomError::Settings)?;
    settings.settings.game.visit(Recover {
        stored,
        settings,
        shared,
        log,
    })
}

/// Why a table read back from the store could not be taken up, or why the journal's tables
/// could not be rebuilt at start (the message is the one the operator reads).
#[derive(Debug, thiserror::Error)]
pub(crate) enum RoomError {
    /// The journal was found damaged at open, and `--allow-damaged-journal` was not given.
    #[error("{0}")]
    Damaged(crate::journal::Damage),
    /// A blocking journal task did not finish.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
    /// `--allow-damaged-journal`, but the damaged journal cannot be written.
    #[error("the damaged journal {path} cannot be opened for writing: {source}")]
    Unwritable {
        path: String,
        source: crate::journal::JournalError,
    },
    /// The journal's unfinished tables cannot be listed.
    #[error("the journal {path} cannot be read: {source}")]
    Unreadable {
        path: String,
        source: crate::journal::JournalError,
    },
    /// Tables that cannot be rebuilt, and `--allow-damaged-journal` was not given: `lines`
    /// names each with its reason, `advice` says what to do.
    #[error(
        "{count} table(s) in the journal {path} cannot be recovered:\n{lines}The server did \
         not start. {advice}"
    )]
    Unrecoverable {
        count: usize,
        path: String,
        lines: String,
        advice: String,
    },
    /// A table's settings cannot be read.
    #[error("settings: {0}")]
    Settings(rmp_serde::decode::Error),
    /// One of a table's events cannot be read.
    #[error("event {seq}: {source}")]
    Event { seq: u64, source: wire::DecodeError },
    /// A table's banned addresses cannot be read.
    #[error("banned addresses: {0}")]
    Banned(rmp_serde::decode::Error),
    /// The session does not fold the table's journal (its reason).
    #[error("{0}")]
    Fold(#[from] grand_melee_protocol::session::RecoverError),
    /// The store did not take what taking the table over changed.
    #[error("the journal refused to record the takeover")]
    TakeoverRefused,
}

/// What taking up a table read back from the store came to.
#[derive(Debug)]
pub(crate) enum TakenUp {
    /// Its actor runs here now.
    Started { seq: u64 },
    /// It was over already: its finishing mark is in the store, but its credits or its
    /// directory entry may not be (the caller finishes it there).
    Finished {
        at_ms: u64,
        seq: u64,
        stage: wire::StageName,
        credits: Vec<Credit>,
        climb: Option<FinishedClimb>,
    },
}

/// Takes up a table read back from the store (a takeover in cluster mode): folds it, and if it
/// is not over, records what its recovery changed through `log` and starts its actor.
pub(crate) async fn take_up(
    shared: &Arc<Shared>,
    stored: StoredTable,
    log: Box<dyn TableLog>,
) -> Result<TakenUp, RoomError> {
    let finished = stored.finished_at_ms;
    let mut room = recover(stored, shared, log)?;
    if let Some(at_ms) = finished {
        return Ok(TakenUp::Finished {
            at_ms,
            seq: room.seq(),
            stage: room.stage(),
            credits: room.credits(),
            climb: room.climb(at_ms),
        });
    }
    if !room.settle().await {
        return Err(RoomError::TakeoverRefused);
    }
    let seq = room.seq();
    room.start().await;
    Ok(TakenUp::Started { seq })
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
pub(crate) async fn recover_all(shared: &Arc<Shared>) -> Result<(), RoomError> {
    use std::fmt::Write as _;

    let journal = shared.journal.clone();
    let path = journal.path().display().to_string();
    let allow_damage = shared.config.allow_damaged_journal;
    if let Some(damage) = journal.damage() {
        if !allow_damage {
            return Err(RoomError::Damaged(damage.clone()));
        }
        error!(
            path,
            findings = ?damage.findings,
            "the journal is damaged; starting anyway (--allow-damaged-journal): restore it from a \
             backup as soon as you can"
        );
        let accepting = journal.clone();
        tokio::task::spawn_blocking(move || accepting.accept_damage())
            .await?
            .map_err(|source| RoomError::Unwritable {
                path: path.clone(),
                source,
            })?;
    }
    let reading = journal.clone();
    let read = tokio::task::spawn_blocking(move || reading.unfinished_tables())
        .await?
        .map_err(|source| RoomError::Unreadable {
            path: path.clone(),
            source,
        })?;

    let mut lost: Vec<(Option<TableId>, String)> = read
        .unreadable
        .into_iter()
        .map(|table| (table.id, table.reason))
        .collect();
    let mut rooms = Vec::new();
    for table in read.tables {
        let id = table.record.id;
        match recover(table, shared, journal.table_log(id)) {
            Ok(recovered) => rooms.push((id, recovered)),
            Err(reason) => lost.push((Some(id), format!("it cannot be rebuilt: {reason}"))),
        }
    }
    let name =
        |id: &Option<TableId>| id.map_or_else(|| "(id unreadable)".to_owned(), |id| id.to_string());
    if !lost.is_empty() && !allow_damage {
        let mut lines = String::new();
        for (id, reason) in &lost {
            let _ = writeln!(lines, "  table {}: {reason}", name(id));
        }
        return Err(RoomError::Unrecoverable {
            count: lost.len(),
            path,
            lines,
            advice: crate::journal::damaged_journal_advice(journal.path()),
        });
    }
    journal.keep_untouched(lost.iter().filter_map(|(id, _)| *id));
    for (id, reason) in &lost {
        error!(
            table = name(id),
            reason,
            "a table in the journal cannot be recovered: it is left out, its rows kept untouched"
        );
    }

    for (id, mut room) in rooms {
        if !room.settle().await {
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
        info!(table = %id, seq = room.seq(), "table recovered");
        room.start().await;
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

/// The journal's per-table metadata key of the addresses banned from the table (a MessagePack
/// list of strings). Addresses are never put in events: everyone at the table receives those.
const BANNED_META: &str = "banned_addresses";

/// The journal's per-table metadata key of when the game was last adjourned (a MessagePack
/// number of milliseconds since the Unix epoch): a restart does not start its expiry over.
const ADJOURNED_META: &str = "adjourned_at_ms";
/// A climb of today's mountain: when its game started (milliseconds since 1970-01-01 UTC, as
/// 8 bytes big-endian), for "the first climb counts" (`FinishedClimb::started_at_ms`).
const STARTED_META: &str = "climb_started_ms";

#[derive(Debug)]
struct Member {
    conn: Conn,
    /// The number of the last event its snapshot included: it gets only later events.
    since_seq: u64,
    /// Until when (Unix seconds) the TURN credentials it was last given last; 0: none.
    turn_until: u64,
}

/// A frame waiting for the end of the current request, when the outbox is flushed.
#[derive(Debug)]
enum Outgoing {
    /// An events batch for every member whose snapshot does not already include it.
    Events {
        first_seq: u64,
        last_seq: u64,
        frame: Frame,
    },
    /// A member on another node was admitted with a snapshot up to `since_seq`.
    Admitted { conn: Conn, since_seq: u64 },
    /// A frame for one connection.
    Direct { conn: Conn, frame: Frame },
    /// A camera signal for one connection: left out if its queue is half full.
    Signal { conn: Conn, frame: Frame },
    /// Close a connection, after what was queued for it before, saying why.
    Close {
        conn: Conn,
        code: u16,
        reason: &'static str,
    },
}

/// A table's actor: the I/O driver around its [`Session`] (which holds the rules, the fold and
/// every timer). It receives, feeds the session, journals what it decided, delivers it, and
/// sleeps until the session's next timeout.
///
/// Generic over the table's [`Game`]: the registry ([`GameKind::visit`]) picks the state type
/// when a table is opened or recovered, and nothing here knows which game it is.
#[derive(Debug)]
struct Room<G: Game> {
    id: TableId,
    name: String,
    password: Option<String>,
    session: Session<G>,
    members: Vec<Member>,
    shared: Arc<Shared>,
    summary: watch::Sender<TableSummary>,
    /// What the current request produced, delivered together by `flush`.
    outbox: Vec<Outgoing>,
    /// When the oldest request with events in the outbox arrived (for the latency metric).
    outbox_since: Option<Instant>,
    /// Events published by the current request, encoded one by one for the journal: the number
    /// of the first, and the events.
    unjournaled: Option<(u64, Vec<Vec<u8>>)>,
    /// Seat, ban and game-over records to journal with them.
    journal_ops: Vec<TableOp>,
    /// The journal refused a write: the table stops (it recovers from the journal on restart).
    broken: bool,
    /// The game-over mark is in the journal: the replay is complete, and what happens at the
    /// table afterwards (chat, people leaving) is not journaled.
    finish_journaled: bool,
    /// The table's place under `--max-tables` and its creator's `--max-tables-per-ip`, given
    /// back when the actor ends.
    _slot: TableSlot,
    /// Where the table's records go (the store's place for it).
    log: Box<dyn TableLog>,
    /// Cluster mode: another node has the table now; this actor stops without touching it.
    given_up: bool,
    /// Stops the tasks that serve the table to other nodes when the actor ends.
    _peer_tasks: Option<tokio_util::sync::DropGuard>,
    /// At a league table: the members whose one unfinished league seat is here (held in the
    /// store: `Store::hold_league_seat`), until they leave the lobby or the game ends.
    league_held: Vec<MemberId>,
    /// While the game is adjourned: the place it takes under `--max-adjourned-per-ip`, for the
    /// address of the host who adjourned it (none for a game adjourned before a restart).
    adjourned_place: Option<crate::budget::Held<std::net::IpAddr>>,
    /// Read back from the store (a restart, a takeover), not created here.
    read_back: bool,
    /// A climb of today's mountain: its day, and when its game started.
    day_climb: DayClimb,
}

/// What a table keeps of a climb of today's mountain (nothing at any other table). The day
/// rules its life: nobody watches it until the day is over (the deal is the same for every
/// climb of the day), and at the day's end it ends as it stands, adjourned or not, so that no
/// climb of the day can move once the day's secret is out.
#[derive(Debug, Default)]
struct DayClimb {
    day: Option<Day>,
    started_at_ms: Option<u64>,
    /// Wakes the table when the server's clock is moved (tests), to look at the day again.
    clock: Option<watch::Receiver<i64>>,
}

/// Why the journal did not take what the current request produced.
#[derive(Debug, thiserror::Error)]
enum FlushError {
    /// Cluster mode: another node has written to the table: this node lost it.
    #[error("another node took the table over")]
    Fenced,
    #[error("the store: {0}")]
    Store(String),
}

/// The server's settings the session rules depend on.
fn timing(shared: &Shared) -> Timing {
    Timing {
        grace: shared.config.grace_period(),
        unjoined: shared.config.unjoined_table(),
        chat_per_minute: shared.config.table_chat_per_minute,
        adjourned_expiry: shared.config.adjourned_expiry(),
    }
}

impl<G: Game> Room<G> {
    fn new(
        id: TableId,
        name: String,
        password: Option<String>,
        session: Session<G>,
        shared: &Arc<Shared>,
        slot: TableSlot,
        log: Box<dyn TableLog>,
    ) -> Self {
        let summary = TableSummary::new(id, &name, session.settings());
        let day = crate::mountain::climb_day(session.settings());
        Self {
            id,
            name,
            password,
            // Room for every seat at once (spectators beyond it grow it).
            members: Vec::with_capacity(usize::from(session.settings().seats)),
            session,
            shared: Arc::clone(shared),
            summary: watch::channel(summary).0,
            outbox: Vec::new(),
            outbox_since: None,
            unjournaled: None,
            journal_ops: Vec::new(),
            broken: false,
            finish_journaled: false,
            _slot: slot,
            log,
            given_up: false,
            _peer_tasks: None,
            league_held: Vec::new(),
            adjourned_place: None,
            read_back: false,
            day_climb: DayClimb {
                day,
                started_at_ms: None,
                clock: day.map(|_| shared.config.clock.subscribe()),
            },
        }
    }

    /// Rebuilds a table from its journal: the session folds every event (one path for game and
    /// table-level events alike) and takes the seat tokens and bans; players who were connected
    /// are announced disconnected.
    fn recover(
        stored: StoredTable,
        settings: StoredSettings,
        shared: &Arc<Shared>,
        log: Box<dyn TableLog>,
    ) -> Result<Self, RoomError> {
        let record = stored.record;
        let mut events = Vec::with_capacity(stored.events.len());
        for (seq, bytes) in &stored.events {
            let event = wire::decode_event(bytes)
                .map_err(|source| RoomError::Event { seq: *seq, source })?;
            events.push((*seq, event));
        }
        let banned = match stored.meta.iter().find(|(key, _)| key == BANNED_META) {
            Some((_, value)) => {
                let banned: Vec<String> =
                    rmp_serde::from_slice(value).map_err(RoomError::Banned)?;
                // As client addresses (an older journal may hold whole IPv6 addresses).
                let mut banned: Vec<std::net::IpAddr> = banned
                    .iter()
                    .filter_map(|a| a.parse().ok())
                    .map(|a| shared.key(a))
                    .collect();
                banned.sort_unstable();
                banned.dedup();
                banned
            }
            None => Vec::new(),
        };
        let now = Instant::now();
        let mut session = Session::recover(
            settings.settings(record.password.is_some()),
            settings.secret,
            timing(shared),
            events,
            &stored.seats,
            banned,
            now,
        )
        .map_err(RoomError::Fold)?;
        // An adjourned game's expiry counts from its adjournment (a journal from before the
        // time was kept: from now).
        let adjourned_at_ms = stored
            .meta
            .iter()
            .find(|(key, _)| key == ADJOURNED_META)
            .and_then(|(_, value)| rmp_serde::from_slice::<u64>(value).ok());
        if let Some(at_ms) = adjourned_at_ms {
            let elapsed = std::time::Duration::from_millis(now_ms().saturating_sub(at_ms));
            session.adjourned_for(elapsed, now);
        }
        let slot = shared.recovered_table();
        let started_at_ms = stored
            .meta
            .iter()
            .find(|(key, _)| key == STARTED_META)
            .and_then(|(_, value)| <[u8; 8]>::try_from(value.as_slice()).ok())
            .map(u64::from_be_bytes);
        let mut room = Self::new(
            record.id,
            record.name,
            record.password,
            session,
            shared,
            slot,
            log,
        );
        room.read_back = true;
        room.day_climb.started_at_ms = started_at_ms;
        Ok(room)
    }

    /// Registers the table in the lobby and starts its actor (in cluster mode, with the tasks
    /// that serve it to other nodes and keep its directory entry).
    async fn start(mut self) {
        let shared = Arc::clone(&self.shared);
        let (tx, rx) = mpsc::channel(shared.config.table_queue.max(1));
        // A table read back (a restart, a takeover) holds its members' league seats again
        // before anyone can enter, and forgets any other seat its last run left behind.
        if self.read_back
            && let Some(league) = self.session.settings().league
        {
            let seated = self.session.table().league_members();
            let forgot = self
                .shared
                .store
                .release_league_seats_but(league, self.id, seated)
                .await;
            if let Err(error) = forgot {
                warn!(table = %self.id, %error, "giving back the league seats of members gone");
            }
        }
        self.sync_league_seats(false).await;
        self.publish_summary();
        self._peer_tasks = shared
            .peers
            .serve(&shared, self.id, tx.downgrade(), self.summary.subscribe())
            .await;
        let me = tx.downgrade();
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
        shared.table_tasks.spawn(self.run(rx, me));
    }

    async fn run(mut self, mut rx: mpsc::Receiver<RoomMsg>, me: mpsc::WeakSender<RoomMsg>) {
        let shutdown = self.shared.stop_tables.clone();
        let mut clock = self.day_climb.clock.take();
        loop {
            if self.broken {
                break;
            }
            if self.end_of_day() {
                self.flush().await;
                self.publish_summary();
                continue;
            }
            let deadline = self
                .session
                .poll_timeout()
                .into_iter()
                .chain(self.day_end_deadline())
                .min();
            let message = tokio::select! {
                () = shutdown.cancelled() => break,
                message = rx.recv() => match message {
                    Some(message) => message,
                    None => break,
                },
                // The clock was moved (tests): the day's end is looked at again.
                () = clock_moved(&mut clock) => continue,
                () = sleep_until(deadline) => {
                    let now = Instant::now();
                    let close = self.session.handle_timeout(now);
                    self.carry_out(now);
                    self.flush().await;
                    self.publish_summary();
                    if close {
                        break;
                    }
                    continue;
                }
            };
            // Whatever arrives after the day's end finds the day's climb ended.
            self.end_of_day();
            match message {
                RoomMsg::Enter(enter) => {
                    let enter = *enter;
                    let result = self
                        .enter(enter.conn, enter.request_id, enter.entry, enter.quiet)
                        .await;
                    let _ = enter.reply.send(result);
                }
                RoomMsg::Lost => {
                    self.give_up();
                    break;
                }
                RoomMsg::Request {
                    connection,
                    request,
                    received,
                } => self.request(connection, *request, received),
                RoomMsg::Leave {
                    connection,
                    request_id,
                    reply,
                } => {
                    if let Some(i) = self.members.iter().position(|m| m.conn.id == connection) {
                        let member = self.members.swap_remove(i);
                        self.session.leave(Instant::now(), connection);
                        self.send(
                            &member.conn,
                            &ServerMessage::Left {
                                reply_to: request_id,
                            },
                        );
                        self.carry_out(Instant::now());
                    }
                    let _ = reply.send(());
                }
                RoomMsg::Gone { connection } => {
                    if let Some(i) = self.members.iter().position(|m| m.conn.id == connection) {
                        self.members.swap_remove(i);
                        self.session.gone(Instant::now(), connection);
                        self.carry_out(Instant::now());
                    }
                }
            }
            self.send_away_day_watchers();
            self.flush().await;
            self.publish_summary();
        }
        self.sync_league_seats(true).await;
        // Unless a newer actor or stand-in took the table's place in the registry.
        self.shared.tables.remove_if(&self.id, |_, entry| {
            me.upgrade().is_some_and(|tx| tx.same_channel(&entry.tx))
        });
        self.shared
            .metrics
            .tables
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        if self.finish_journaled && !self.given_up {
            // A finished table that closes leaves the list: nobody runs it any more.
            self.shared.peers.closed(self.id).await;
        }
        if self.session.nothing_to_keep() && !self.broken && !self.given_up {
            // Never played and nobody to come back: nothing worth keeping.
            let deleted = self.shared.store.delete_table(self.id).await;
            if let Err(error) = deleted {
                warn!(table = %self.id, %error, "deleting an abandoned table from the journal");
            }
        }
        info!(table = %self.id, "table closed");
    }

    // ----- Today's mountain ------------------------------------------------------------------

    /// A climb of today's mountain whose day is over ends as it stands (`game_abandoned`: a
    /// climb given up), adjourned, paused or not: the day's secret is revealed after it, and a
    /// climb that could still move then could be played with the deal known. Whether it ended
    /// now (its events are to be flushed).
    fn end_of_day(&mut self) -> bool {
        let Some(day) = self.day_climb.day else {
            return false;
        };
        if !day.is_over(self.shared.config.clock.now_ms()) {
            return false;
        }
        let now = Instant::now();
        // Refused outside play: a climb not started has nothing to end, a finished one ended.
        if self.session.abandon(now).is_err() {
            return false;
        }
        info!(table = %self.id, %day, "the day is over: the climb ends as it stands");
        self.carry_out(now);
        true
    }

    /// A climb of today's mountain that has begun shows the day's deal: whoever watched its
    /// lobby is sent away (closed, 1000, saying why; watching it again is `day_not_over` until
    /// the day is over).
    fn send_away_day_watchers(&mut self) {
        if self.day_climb.day.is_none()
            || self.day_over()
            || self.session.table().stage() == grand_melee_protocol::shell::Stage::Lobby
        {
            return;
        }
        let now = Instant::now();
        let mut sent_away = false;
        while let Some(i) = self
            .members
            .iter()
            .position(|m| self.session.role(m.conn.id) == Some(Role::Spectator))
        {
            let member = self.members.swap_remove(i);
            self.session.gone(now, member.conn.id);
            info!(table = %self.id, connection = member.conn.id, "a day climb began: its watcher is sent away");
            self.outbox.push(Outgoing::Close {
                conn: member.conn,
                code: close::NORMAL,
                reason: "a climb of today's mountain can be watched once its day is over",
            });
            sent_away = true;
        }
        if sent_away {
            self.carry_out(now);
        }
    }

    /// When a climb of today's mountain that is being played must end: its day's end.
    fn day_end_deadline(&self) -> Option<Instant> {
        let day = self.day_climb.day?;
        if !matches!(
            self.session.table().stage(),
            grand_melee_protocol::shell::Stage::Mulligan { .. }
                | grand_melee_protocol::shell::Stage::Playing
        ) {
            return None;
        }
        let left = day
            .ends_at()
            .saturating_mul(1000)
            .saturating_sub(self.shared.config.clock.now_ms());
        // Past it, `end_of_day` has ended the climb (or cannot): no deadline to spin on.
        (left > 0).then(|| Instant::now() + std::time::Duration::from_millis(left))
    }

    /// Whether the day of a climb of today's mountain is over (`false` at any other table).
    fn day_over(&self) -> bool {
        self.day_climb
            .day
            .is_some_and(|day| day.is_over(self.shared.config.clock.now_ms()))
    }

    // ----- Membership ------------------------------------------------------------------------

    async fn enter(
        &mut self,
        conn: Conn,
        request_id: u32,
        entry: Entry,
        quiet: bool,
    ) -> Result<(Role, Option<SeatToken>), ErrorCode> {
        let now = Instant::now();
        let (role, token) = match entry {
            Entry::Join {
                name,
                entropy,
                league,
                ..
            } => {
                if self.day_over() {
                    return Err(ErrorCode::DayOver);
                }
                let token = SeatToken::new_random();
                let deck = league.map(|seat| seat.deck);
                if let Some(deck) = &deck {
                    self.check_duel(deck, 1)?;
                    self.hold_league_seat(deck.member).await?;
                }
                let player = self
                    .session
                    .join(now, conn.id, conn.peer, name, entropy, deck, token)?;
                info!(table = %self.id, player, "player joined");
                (Role::Player(player), Some(token))
            }
            Entry::Watch => {
                // Watching a climb of today's mountain would show the day's deal to those
                // still to climb it: not before the day is over, but in its lobby, where
                // nothing is dealt yet (whoever watches it then is sent away at its start).
                if self.day_climb.day.is_some()
                    && !self.day_over()
                    && self.session.table().stage() != grand_melee_protocol::shell::Stage::Lobby
                {
                    return Err(ErrorCode::DayNotOver);
                }
                self.session.watch(now, conn.id, conn.peer)?;
                (Role::Spectator, None)
            }
            Entry::Resume { token } => {
                let player = self.session.resume(now, conn.id, conn.peer, token)?;
                info!(table = %self.id, player, "player resumed");
                (Role::Player(player), Some(token))
            }
        };
        // Everyone already here hears of the newcomer; the newcomer gets a snapshot that
        // includes what this entry changed.
        self.carry_out(now);
        self.admit(conn, role, request_id, token, quiet);
        Ok((role, token))
    }

    /// A member holds one unfinished league seat at a time (or he could play the same opponent
    /// at two two-player tables started before either ends): takes his seat in the store for
    /// this table (on every node in cluster mode), or refuses if another table holds it.
    /// `sync_league_seats` gives it back if the join fails after all.
    async fn hold_league_seat(&mut self, member: MemberId) -> Result<(), ErrorCode> {
        let Some(league) = self.session.settings().league else {
            return Ok(());
        };
        match self
            .shared
            .store
            .hold_league_seat(league, member, self.id)
            .await
        {
            Ok(true) => {
                if !self.league_held.contains(&member) {
                    self.league_held.push(member);
                }
                Ok(())
            }
            Ok(false) => Err(ErrorCode::AlreadySeated),
            Err(error) => {
                warn!(table = %self.id, %error, "taking a league seat");
                Err(ErrorCode::ServerBusy)
            }
        }
    }

    /// Keeps the store's league seats held for this table equal to the members seated here
    /// while the game is unfinished: a member who leaves the lobby, or every member once the
    /// game ends (or the actor stops, `closing`), is free to sit elsewhere. Called once a flush
    /// is journaled, before its frames go out, so a member told he left is free already. An
    /// actor that stops because the server stops, its journal failed or another node took the
    /// table keeps the seats held: the table comes back (here or there) with the same seats.
    async fn sync_league_seats(&mut self, closing: bool) {
        let Some(league) = self.session.settings().league else {
            return;
        };
        if closing && (self.given_up || self.broken || self.shared.stop_tables.is_cancelled()) {
            self.league_held.clear();
            return;
        }
        let table = self.session.table();
        let seated: Vec<MemberId> =
            if closing || table.stage() == grand_melee_protocol::shell::Stage::Finished {
                Vec::new()
            } else {
                table.league_members()
            };
        let id = self.id;
        let store = Arc::clone(&self.shared.store);
        for member in self.league_held.iter().filter(|m| !seated.contains(m)) {
            if let Err(error) = store.release_league_seat(league, *member, id).await {
                // Nothing stays blocked: a seat whose table ended is taken over.
                warn!(table = %id, member, %error, "giving a league seat back");
            }
        }
        self.league_held.retain(|m| seated.contains(m));
        for member in seated {
            if !self.league_held.contains(&member) {
                // A table read back from the journal: its seats are held again.
                match store.hold_league_seat(league, member, id).await {
                    Ok(true) => {}
                    Ok(false) => {
                        warn!(table = %id, member, "a recovered league seat is held by another table");
                    }
                    Err(error) => warn!(table = %id, member, %error, "taking a league seat again"),
                }
                self.league_held.push(member);
            }
        }
    }

    /// The league rule: in a two-player league game nobody plays the opponent of his last game
    /// if that was a two-player game too. `mine` (a deck seated or joining) would make the
    /// table's players `seated + joining`. Each seat's last duel is in its `player_joined`, so
    /// the rule holds after a restart too.
    fn check_duel(&self, mine: &SeatDeck, joining: usize) -> Result<(), ErrorCode> {
        let seats = usize::from(self.session.settings().seats);
        let players = self.session.seated() + joining;
        if !(seats == 2 || (joining == 0 && players == 2)) {
            return Ok(());
        }
        let decks = self.session.view(self.id, &self.name).players;
        for other in decks
            .iter()
            .filter_map(|p| p.deck.as_ref().map(|d| (p.player, d)))
        {
            let (_, deck) = other;
            if deck.member == mine.member {
                continue;
            }
            if mine.last_duel == Some(deck.member) || deck.last_duel == Some(mine.member) {
                return Err(ErrorCode::SameOpponent);
            }
        }
        Ok(())
    }

    /// A league table that would start as a two-player game between last game's opponents.
    fn league_start_refusal(&self, request: &ClientMessage) -> Option<ErrorCode> {
        if !matches!(request, ClientMessage::Start { .. })
            || self.session.settings().league.is_none()
        {
            return None;
        }
        let view = self.session.view(self.id, &self.name);
        let first = view.players.first()?.deck.clone()?;
        self.check_duel(&first, 0).err()
    }

    /// The credits of a finished league game: each deck's mana points, place and opponents.
    fn credits(&self) -> Vec<crate::journal::leagues::Credit> {
        let Some(league) = self.session.settings().league else {
            return Vec::new();
        };
        let view = self.session.view(self.id, &self.name);
        let players = u8::try_from(view.players.len()).unwrap_or(u8::MAX);
        let members: Vec<(PlayerId, MemberId)> = view
            .players
            .iter()
            .filter_map(|p| Some((p.player, p.deck.as_ref()?.member)))
            .collect();
        view.standings
            .iter()
            .filter_map(|standing| {
                let (_, member) = members.iter().find(|(p, _)| *p == standing.player)?;
                let opponents = members
                    .iter()
                    .filter(|(p, _)| *p != standing.player)
                    .map(|(_, m)| *m)
                    .collect();
                Some(crate::journal::leagues::Credit {
                    league,
                    member: *member,
                    entry: Deck::credit(self.id, &self.name, standing, players, opponents),
                })
            })
            .collect()
    }

    /// Adds a member and queues its answer and a snapshot (in that order, on its own queue).
    fn admit(
        &mut self,
        conn: Conn,
        role: Role,
        request_id: u32,
        token: Option<SeatToken>,
        quiet: bool,
    ) {
        if conn.remote.is_some() {
            self.outbox.push(Outgoing::Admitted {
                conn: conn.clone(),
                since_seq: self.session.seq(),
            });
        }
        let answer = match (role, token) {
            (Role::Player(player), Some(token)) => ServerMessage::Seated {
                reply_to: request_id,
                table: self.id,
                player,
                token,
            },
            _ => ServerMessage::Watching {
                reply_to: request_id,
                table: self.id,
            },
        };
        if !quiet {
            self.send(&conn, &answer);
        }
        let snapshot = ServerMessage::Snapshot {
            reply_to: None,
            view: self.view(),
        };
        self.send(&conn, &snapshot);
        self.members.push(Member {
            turn_until: 0,
            conn,
            since_seq: self.session.seq(),
        });
    }

    // ----- Requests --------------------------------------------------------------------------

    fn request(&mut self, connection: u64, request: ClientMessage, received: Instant) {
        let Some(member) = self.members.iter().find(|m| m.conn.id == connection) else {
            return;
        };
        let conn = member.conn.clone();
        if let ClientMessage::Snapshot { id } = request {
            let snapshot = ServerMessage::Snapshot {
                reply_to: Some(id),
                view: self.view(),
            };
            self.send(&conn, &snapshot);
            return;
        }
        // An adjournment takes a place of the host's address under `--max-adjourned-per-ip`
        // (given back when the game is no longer adjourned); checked before the session, so a
        // refusal changes nothing.
        let mut adjourning = None;
        if matches!(request, ClientMessage::Adjourn { .. })
            && !self.session.adjourned()
            && self.adjourned_place.is_none()
            && self.session.role(connection).is_some_and(|role| {
                matches!(role, Role::Player(p) if self.session.table().facts().host == Some(p))
            })
        {
            match self.shared.budgets.adjourned.hold(conn.peer) {
                Some(place) => adjourning = Some(place),
                None => {
                    Metrics::add(&self.shared.metrics.rejected, 1);
                    let mut answer = ServerMessage::error(Some(&request), ErrorCode::TooManyTables);
                    if let ServerMessage::Error { message, .. } = &mut answer {
                        *message = "your address holds as many adjourned games as allowed: \
                                    resume or finish one first"
                            .into();
                    }
                    self.send(&conn, &answer);
                    return;
                }
            }
        }
        let day_over = matches!(request, ClientMessage::Start { .. }) && self.day_over();
        let result = match self.league_start_refusal(&request) {
            Some(code) => Err(code),
            // A climb of a day that is over is not started (its secret is out).
            None if day_over => Err(ErrorCode::DayOver),
            None => self.session.request(received, connection, &request),
        };
        if self.session.adjourned() && adjourning.is_some() {
            self.adjourned_place = adjourning;
        }
        if result.is_ok()
            && matches!(
                request,
                ClientMessage::Camera { .. } | ClientMessage::CameraDisplay { .. }
            )
        {
            // Answered with the ICE servers, before the links they are for; TURN credentials
            // only for a connection that has a link now (the others get them when one opens).
            let servers = self.ice_servers(connection);
            self.send(
                &conn,
                &ServerMessage::IceServers {
                    reply_to: Some(request.id()),
                    servers,
                },
            );
            self.carry_out(received);
            return;
        }
        self.carry_out(received);
        match result {
            Ok(seq) => self.send(
                &conn,
                &ServerMessage::Ack {
                    reply_to: request.id(),
                    seq,
                },
            ),
            Err(code) => {
                Metrics::add(&self.shared.metrics.rejected, 1);
                self.send(&conn, &ServerMessage::error(Some(&request), code));
            }
        }
    }

    /// The ICE servers for `connection`: TURN credentials are minted (for
    /// `gm-<table>-<player>`, or `gm-<table>-display`) only if it has a camera link now and its
    /// address is within `--turn-credentials-per-minute`; otherwise TURN servers are left out.
    fn ice_servers(&mut self, connection: u64) -> Vec<grand_melee_protocol::IceServer> {
        let now = now_ms() / 1000;
        let linked = self
            .session
            .camera_links()
            .get(&connection)
            .is_some_and(|peers| !peers.is_empty());
        let user = match self.session.role(connection) {
            Some(Role::Player(player)) => format!("gm-{}-{player}", self.id),
            Some(Role::Spectator) => format!("gm-{}-display", self.id),
            None => return self.shared.ice.servers(None, now),
        };
        let ice = &self.shared.ice;
        let minted = linked
            && ice.mints()
            && self
                .members
                .iter_mut()
                .find(|m| m.conn.id == connection)
                .is_some_and(|member| {
                    let allowed = self
                        .shared
                        .budgets
                        .turn_credentials
                        .take(member.conn.peer, Instant::now());
                    if allowed {
                        member.turn_until = now.saturating_add(ice.ttl_secs());
                        Metrics::add(&self.shared.metrics.turn_credentials, 1);
                    } else {
                        debug!(table = %self.id, connection, "TURN credentials: the address's budget is spent");
                    }
                    allowed
                });
        ice.servers(minted.then_some(user.as_str()), now)
    }

    /// Whether `connection`, whose links are opening, needs fresh TURN credentials: the server
    /// mints them, and the ones it was given (if any) are past half their life.
    fn needs_turn(&self, connection: u64) -> bool {
        let now = now_ms() / 1000;
        let ice = &self.shared.ice;
        ice.mints()
            && self.members.iter().any(|m| {
                m.conn.id == connection && m.turn_until < now.saturating_add(ice.ttl_secs() / 2)
            })
    }

    // ----- Output ----------------------------------------------------------------------------

    /// Turns what the session decided into journal records and queued frames, in its order.
    fn carry_out(&mut self, received: Instant) {
        while let Some(effect) = self.session.poll_effect() {
            match effect {
                Effect::Events { first_seq, events } => {
                    self.note_climb_start(&events);
                    self.publish(first_seq, events, received);
                }
                Effect::SetSeat { player, token } => {
                    self.journal_ops.push(TableOp::SetSeat { player, token });
                }
                Effect::RemoveSeat { player } => {
                    self.journal_ops.push(TableOp::RemoveSeat { player });
                }
                Effect::Banned { addresses } => {
                    let addresses: Vec<String> =
                        addresses.iter().map(ToString::to_string).collect();
                    if let Ok(value) = rmp_serde::to_vec(&addresses) {
                        self.journal_ops.push(TableOp::SetMeta {
                            key: BANNED_META.to_owned(),
                            value,
                        });
                    }
                }
                Effect::Finished => {
                    info!(table = %self.id, "game over");
                    let credits = self.credits();
                    let at_ms = self.shared.config.clock.now_ms();
                    let climb =
                        FinishedClimb::of(&self.view(), self.day_climb.started_at_ms, at_ms);
                    self.journal_ops.push(TableOp::Finish {
                        at_ms,
                        credits,
                        climb,
                    });
                }
                Effect::Adjourned => {
                    if let Ok(value) = rmp_serde::to_vec(&now_ms()) {
                        self.journal_ops.push(TableOp::SetMeta {
                            key: ADJOURNED_META.to_owned(),
                            value,
                        });
                    }
                }
                Effect::CameraPeers { connection, peers } => {
                    if !peers.is_empty() && self.needs_turn(connection) {
                        // Fresh credentials before the links they are for (none past the
                        // address's budget: then nothing is sent).
                        let servers = self.ice_servers(connection);
                        if servers.iter().any(|s| s.credential.is_some()) {
                            self.send_to(
                                connection,
                                &ServerMessage::IceServers {
                                    reply_to: None,
                                    servers,
                                },
                            );
                        }
                    }
                    self.send_to(connection, &ServerMessage::CameraPeers { peers });
                }
                Effect::Signal {
                    connection,
                    from,
                    payload,
                } => {
                    // Left out rather than queued behind a slow reader: a signal is never worth
                    // a player's place (the pages negotiate again).
                    if let Some(member) = self.members.iter().find(|m| m.conn.id == connection) {
                        let frame = Frame::binary(&wire::encode_server(&ServerMessage::Signal {
                            from,
                            payload,
                        }));
                        self.outbox.push(Outgoing::Signal {
                            conn: member.conn.clone(),
                            frame,
                        });
                    }
                }
                Effect::Close {
                    connection,
                    code,
                    reason,
                } => {
                    if let Some(i) = self.members.iter().position(|m| m.conn.id == connection) {
                        let member = self.members.swap_remove(i);
                        info!(table = %self.id, connection, reason, "closing a member");
                        self.outbox.push(Outgoing::Close {
                            conn: member.conn,
                            code,
                            reason,
                        });
                    }
                }
            }
        }
    }

    /// A climb of today's mountain notes when its game started, with the events (the day's
    /// standings count each climber's first climb by it).
    fn note_climb_start(&mut self, events: &[wire::Event]) {
        if self.day_climb.day.is_none()
            || self.day_climb.started_at_ms.is_some()
            || !events
                .iter()
                .any(|e| matches!(e, wire::Event::GameStarted { .. }))
        {
            return;
        }
        let at_ms = self.shared.config.clock.now_ms();
        self.day_climb.started_at_ms = Some(at_ms);
        self.journal_ops.push(TableOp::SetMeta {
            key: STARTED_META.to_owned(),
            value: at_ms.to_be_bytes().to_vec(),
        });
    }

    /// Encodes a batch of events once; `flush` hands the same bytes to every member.
    fn publish(&mut self, first_seq: u64, events: Vec<wire::Event>, received: Instant) {
        let last_seq = first_seq + events.len() as u64 - 1;
        Metrics::add(&self.shared.metrics.events, events.len() as u64);
        let (_, journal) = self
            .unjournaled
            .get_or_insert_with(|| (first_seq, Vec::new()));
        journal.extend(events.iter().map(wire::encode_event));
        debug!(table = %self.id, first_seq, last_seq, ?events, "published");
        let frame = Frame::binary(&wire::encode_server(&ServerMessage::Events {
            table: self.id,
            seq: first_seq,
            events,
        }));
        self.outbox.push(Outgoing::Events {
            first_seq,
            last_seq,
            frame,
        });
        self.outbox_since.get_or_insert(received);
    }

    /// What the current request produced, to be written as one record: its events (none
    /// once the game-over mark is in: what happens at a finished table is not journaled) and
    /// its seat, ban and game-over records.
    fn take_flush(&mut self) -> Flush {
        let (first_seq, events) = match self.unjournaled.take() {
            Some((first, events)) if !self.finish_journaled => (first, events),
            _ => (self.session.seq() + 1, Vec::new()),
        };
        Flush {
            first_seq,
            events,
            ops: std::mem::take(&mut self.journal_ops),
        }
    }

    /// Writes what the current request produced as one record, all or nothing, through the
    /// store: one savepoint of the SQLite writer's transaction (which commits it with every
    /// other table's that waits), or in cluster mode one record appended to the table's
    /// subject, expecting its end where this node left it.
    async fn journal_pending(&mut self) -> Result<(), FlushError> {
        let flush = self.take_flush();
        if flush.is_empty() {
            return Ok(());
        }
        let finished = flush.finished_at_ms().is_some();
        let progress = Progress {
            seq: self.session.seq(),
            stage: wire::stage_name(self.session.table().stage()),
        };
        match self.log.append(flush, progress).await {
            Ok(()) => {}
            Err(StoreError::Fenced) => return Err(FlushError::Fenced),
            Err(error) => return Err(FlushError::Store(error.to_string())),
        }
        if finished {
            self.finish_journaled = true;
        }
        Ok(())
    }

    /// Cluster mode: another node has the table. Its members here are told to come back
    /// (their seats are kept: they resume, on any node); nothing is written.
    fn give_up(&mut self) {
        warn!(table = %self.id, "another node took the table over: giving it up");
        Metrics::add(&self.shared.metrics.tables_given_up, 1);
        for member in self.members.drain(..) {
            if member.conn.remote.is_none() {
                member.conn.close(close::TABLE_MOVED);
            }
        }
        self.outbox.clear();
        self.unjournaled = None;
        self.journal_ops.clear();
        self.given_up = true;
        self.broken = true;
    }

    /// Queues a message for one member, by its connection (nothing if it is no longer one).
    fn send_to(&mut self, connection: u64, message: &ServerMessage) {
        if let Some(member) = self.members.iter().find(|m| m.conn.id == connection) {
            let conn = member.conn.clone();
            self.send(&conn, message);
        }
    }

    /// Queues one message for one connection (delivered by `flush`, in order with the rest).
    fn send(&mut self, conn: &Conn, message: &ServerMessage) {
        self.shared.metrics.check_reply(message);
        self.outbox.push(Outgoing::Direct {
            conn: conn.clone(),
            frame: Frame::binary(&wire::encode_server(message)),
        });
    }

    /// Makes what the last request produced durable, then delivers it, in order: nothing a
    /// client sees can be lost. A member whose queue is full is closed by `Conn::send`; its
    /// reader then reports `Gone`.
    async fn flush(&mut self) {
        match self.journal_pending().await {
            Ok(()) => self.sync_league_seats(false).await,
            Err(FlushError::Fenced) => {
                self.give_up();
                return;
            }
            Err(error) => {
                // The state has moved on but is not durable, and nobody has seen it: stop the
                // table here; it recovers from its last durable event when the server (or, in
                // cluster mode, another node) takes it up again.
                error!(table = %self.id, %error, "the journal refused a write: stopping the table");
                for member in self.members.drain(..) {
                    member.conn.close(close::INTERNAL_ERROR);
                }
                self.outbox.clear();
                self.broken = true;
                return;
            }
        }
        let (mut frames, mut bytes) = (0, 0);
        // What members on other nodes receive, published once for every node.
        let mut remote = Vec::new();
        for outgoing in self.outbox.drain(..) {
            let sheddable = matches!(outgoing, Outgoing::Signal { .. });
            match outgoing {
                Outgoing::Events {
                    first_seq,
                    last_seq,
                    frame,
                } => {
                    let mut elsewhere = false;
                    for member in self.members.iter().filter(|m| m.since_seq < last_seq) {
                        if member.conn.remote.is_some() {
                            elsewhere = true;
                        } else if member.conn.send(&frame) {
                            frames += 1;
                            bytes += frame.payload().len();
                        }
                    }
                    if elsewhere {
                        remote.push(OutItem::Events {
                            first_seq,
                            last_seq,
                            frame: frame.payload().to_vec(),
                        });
                    }
                }
                Outgoing::Admitted { conn, since_seq } => {
                    if let Some(at) = &conn.remote {
                        remote.push(OutItem::Admitted {
                            node: at.node.to_string(),
                            conn: at.id,
                            since_seq,
                        });
                    }
                }
                Outgoing::Direct { conn, frame } | Outgoing::Signal { conn, frame } => {
                    if let Some(at) = &conn.remote {
                        remote.push(OutItem::Direct {
                            node: at.node.to_string(),
                            conn: at.id,
                            frame: frame.payload().to_vec(),
                        });
                        continue;
                    }
                    let sent = if sheddable {
                        conn.send_unless_busy(&frame)
                    } else {
                        conn.send(&frame)
                    };
                    if sent {
                        frames += 1;
                        bytes += frame.payload().len();
                    }
                }
                Outgoing::Close { conn, code, reason } => match &conn.remote {
                    Some(at) => remote.push(OutItem::Close {
                        node: at.node.to_string(),
                        conn: at.id,
                        code,
                        reason: reason.to_owned(),
                    }),
                    None => conn.close_because(code, reason),
                },
            }
        }
        if !remote.is_empty() {
            self.shared.peers.publish(self.id, remote).await;
        }
        self.shared.metrics.count_out(frames, bytes);
        if let Some(received) = self.outbox_since.take() {
            self.shared.metrics.observe_broadcast(received.elapsed());
        }
    }

    /// The snapshot: the one fold's projection, the same a client's mirror computes.
    fn view(&self) -> wire::TableView {
        self.session.view(self.id, &self.name)
    }

    /// Updates the lobby's summary of this table. The fixed parts (name, settings) are set once
    /// in `new`; this only touches what changes, and wakes nobody when nothing did.
    fn publish_summary(&mut self) {
        if !self.session.adjourned() {
            self.adjourned_place = None;
        }
        let seated = u8::try_from(self.session.seated()).unwrap_or(u8::MAX);
        let spectators = self.session.spectators();
        let stage = wire::stage_name(self.session.table().stage());
        let adjourned = self.session.adjourned();
        let now = (seated, spectators, stage, adjourned);
        self.summary.send_if_modified(|current| {
            let before = (
                current.seated,
                current.spectators,
                current.stage,
                current.adjourned,
            );
            (
                current.seated,
                current.spectators,
                current.stage,
                current.adjourned,
            ) = now;
            before != now
        });
    }
}

/// Wakes when the server's clock is moved (tests); never at a table that is no day climb.
async fn clock_moved(clock: &mut Option<watch::Receiver<i64>>) {
    if let Some(clock) = clock.as_mut()
        && clock.changed().await.is_ok()
    {
        return;
    }
    std::future::pending().await
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
    /// The settings its table was played with.
    pub(crate) fn settings(&self) -> &wire::Settings {
        &self.settings
    }

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
        settings: settings.settings(page.record.password.is_some()),
        events,
        total_events: page.total_events,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use grand_melee_protocol::rules::SpellRange;
    use grand_melee_protocol::{MulliganMode, Reduction, RuleSet};

    /// The settings bytes of a league table with no field at its default, as the server wrote
    /// them before the one settings type (schema v3, generated with that code).
    const LEAGUE_TABLE: [&str; 8] = [
        "86a6636f6e6669678ba5736561747311ab7370656c6c5f72616e676501a9726564756374696f6ea6666f7263",
        "6564ad7374617274696e675f6c69666521a968616e645f73697a6509a872756c655f736574a56372383037ab",
        "636f6d6261745f64696365c3a86d756c6c6967616eac73696d756c74616e656f7573a66c6561677565c3a473",
        "656564cf0000deadbeef1234a6736563726574d9403037303730373037303730373037303730373037303730",
        "3730373037303730373037303730373037303730373037303730373037303730373037303730373037af7475",
        "726e5f636c6f636b5f736563735ab2616273656e63655f6c696d69745f73656373cd012cb36d756c6c696761",
        "6e5f636c6f636b5f736563732dae6d61785f737065637461746f72730ca66c6561677565c4100123456789ab",
        "cdef0123456789abcdef",
    ];

    /// The same for `TableConfig::seeded(5)` (every rules field at its default) with the
    /// clocks 90/300/45, 12 spectators and no league.
    const SEEDED_TABLE: [&str; 7] = [
        "86a6636f6e6669678ba5736561747328ab7370656c6c5f72616e676502a9726564756374696f6ea565616765",
        "72ad7374617274696e675f6c69666514a968616e645f73697a6507a872756c655f736574a473656564ab636f",
        "6d6261745f64696365c2a86d756c6c6967616ea57061726973a66c6561677565c2a47365656405a673656372",
        "6574d94035646565346464363066663864306261393930306665393165393065306463663635663035373064",
        "343263343331663732376430333030646437306463343331af7475726e5f636c6f636b5f736563735ab26162",
        "73656e63655f6c696d69745f73656373cd012cb36d756c6c6967616e5f636c6f636b5f736563732dae6d6178",
        "5f737065637461746f72730ca66c6561677565c0",
    ];

    fn bytes(hex: &[&str]) -> Vec<u8> {
        hex::decode(hex.concat()).unwrap()
    }

    fn league() -> LeagueId {
        LeagueId::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef)
    }

    #[test]
    fn a_v3_journal_reads_into_the_settings_field_for_field() {
        let stored: StoredSettings = rmp_serde::from_slice(&bytes(&LEAGUE_TABLE)).unwrap();
        assert_eq!(
            stored,
            StoredSettings {
                settings: wire::Settings {
                    mountain_magic: None,
                    seats: 17,
                    spell_range: 1,
                    reduction: Reduction::Forced,
                    starting_life: 33,
                    hand_size: 9,
                    password: false,
                    turn_clock_secs: 90,
                    absence_limit_secs: 300,
                    mulligan_clock_secs: 45,
                    max_spectators: 12,
                    rules: RuleSet::Cr807,
                    combat_dice: true,
                    mulligan: MulliganMode::Simultaneous,
                    league: Some(league()),
                    game: GameKind::GrandMelee,
                },
                seed: 0xdead_beef_1234,
                secret: DiceSecret([7; 32]),
            }
        );
        let seeded: StoredSettings = rmp_serde::from_slice(&bytes(&SEEDED_TABLE)).unwrap();
        let config = TableConfig::seeded(5);
        assert_eq!(
            seeded,
            StoredSettings {
                settings: wire::Settings {
                    seats: config.seats,
                    spell_range: u8::from(SpellRange::default()),
                    turn_clock_secs: 90,
                    absence_limit_secs: 300,
                    mulligan_clock_secs: 45,
                    max_spectators: 12,
                    ..wire::Settings::default()
                },
                seed: 5,
                secret: config.secret,
            }
        );
    }

    #[test]
    fn a_grand_melee_table_is_written_as_before() {
        for hex in [&LEAGUE_TABLE[..], &SEEDED_TABLE[..]] {
            let stored: StoredSettings = rmp_serde::from_slice(&bytes(hex)).unwrap();
            assert_eq!(rmp_serde::to_vec_named(&stored).unwrap(), bytes(hex));
        }
    }

    #[test]
    fn a_journal_from_before_the_mulligan_clock_gets_the_defaults() {
        #[derive(serde::Serialize)]
        struct Older {
            config: TableConfig,
            turn_clock_secs: u32,
            absence_limit_secs: u32,
        }
        let older = rmp_serde::to_vec_named(&Older {
            config: TableConfig::seeded(9),
            turn_clock_secs: 0,
            absence_limit_secs: 600,
        })
        .unwrap();
        let stored: StoredSettings = rmp_serde::from_slice(&older).unwrap();
        assert_eq!(stored.settings, wire::Settings::default());
        assert_eq!(stored.seed, 9);
    }

    #[test]
    fn settings_the_rules_refuse_are_not_written() {
        let stored = StoredSettings {
            settings: wire::Settings {
                seats: 1,
                ..wire::Settings::default()
            },
            seed: 0,
            secret: DiceSecret::default(),
        };
        let error = rmp_serde::to_vec_named(&stored).unwrap_err();
        assert!(error.to_string().contains("seats"), "{error}");
    }
}
