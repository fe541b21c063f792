//! One bot playing the real protocol against the server: `hello`, then game after game at its
//! table: the table's first bot creates the table and hosts it, the others join; everyone
//! keeps or mulligans in turn; a player holding a running turn moves through the phases,
//! attacks and deals damage in range, chats now and then, and ends the turn, each step after a
//! think time; after `game_over` everyone leaves and, if more games are wanted, the next one
//! starts at a new table.
//!
//! A bot sends one game request at a time and waits for its answer before choosing the next
//! move on its mirrored table, so every move it makes is legal on the table as the server has
//! it (running turns' spheres never overlap, and distances only shrink as positions are
//! removed). Any `error` answer is counted: a healthy run has none.
//!
//! Against a cluster (several server URLs), a bot whose connection breaks while its game is
//! under way fails over: it connects to the next URL of its list, says `hello`, takes its seat
//! back with `resume` and its seat token, rebuilds its mirror from the snapshot that follows
//! and plays on; the request it had in flight is forgotten (its answer will never come). A
//! `snapshot` nobody asked for (the table moved to another node) replaces the mirror the same
//! way. Every event a bot receives can be fed to a shared [`Witness`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::{
    self as wire, ClientMessage, Event, MulliganMode, PROTOCOL_VERSION, Phase, PlayerId, Reduction,
    RuleSet, SeatToken, ServerMessage, StageName, Standing, TableId, TableView, close,
};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::link::{ANSWER_PATIENCE, BotError, Socket, connect_tls, sleep_until};
use crate::live::SeatedSignal;
use crate::model::BotModel;
use crate::witness::{Observer, Witness};

/// With `--mirror-check`, how many batches a bot folds between two comparisons with a snapshot.
pub const MIRROR_CHECK_EVERY: u32 = 50;
use crate::rng::Rng;
use crate::stats::Window;
use crate::tracker::Tracker;

/// How many times a seated bot tries to take its seat back after its connection broke in the
/// middle of a game, by default (each try: connect, `hello`, `resume`).
pub const RESUME_ATTEMPTS: u32 = 50;

/// How long one resume try waits for the connection and for each answer. A bound on a dead or
/// stuck node, not a pace.
pub const RESUME_PATIENCE: Duration = Duration::from_secs(10);

/// The pause before resume try `attempt` (0 for the first): 50 ms more per try, at most half
/// a second. A node that has just died may take a moment to be replaced as its tables' owner
/// (`unknown_table` meanwhile).
pub fn resume_backoff(attempt: u32) -> Duration {
    Duration::from_millis((50 * u64::from(attempt)).min(500))
}

/// Chat lines the bots pick from.
const CHAT_LINES: [&str; 6] = ["gl hf", "nice one", "ouch", "who's next?", "gg", "brb"];

/// The think time every bot of a process uses, changed while they run (benchmark steps).
#[derive(Debug, Default)]
pub struct ThinkTime(AtomicU64);

impl ThinkTime {
    /// A think time.
    pub fn new(mean: Duration) -> Self {
        let think = Self::default();
        think.set(mean);
        think
    }

    /// Sets the mean think time.
    pub fn set(&self, think: Duration) {
        self.0.store(
            u64::try_from(think.as_micros()).unwrap_or(u64::MAX),
            Relaxed,
        );
    }

    /// The mean think time.
    pub fn get(&self) -> Duration {
        Duration::from_micros(self.0.load(Relaxed))
    }

    /// A think time drawn uniformly between half and one and a half times the mean, so that
    /// bots do not move in lockstep.
    pub fn draw(&self, rng: &mut Rng) -> Duration {
        self.get().mul_f64(0.5 + rng.unit())
    }
}

/// What every bot of a run shares.
#[derive(Debug)]
pub struct BotSettings {
    /// Seats per table (every seat is a bot).
    pub seats: u8,
    /// Spell range of the tables the bots create.
    pub spell_range: u8,
    /// The tables' rules, dice and mulligans.
    pub options: TableOptions,
    /// Starting life of the tables the bots create.
    pub starting_life: i32,
    /// Probability that a move is a chat line instead.
    pub chat_chance: f64,
    /// Games each table plays before its bots stop; `None`: until told to stop.
    pub games: Option<u32>,
    /// Whether every bot also checks its mirror against the server: every
    /// [`MIRROR_CHECK_EVERY`] batches it asks for a snapshot and compares it with its own
    /// projection of the fold at the same event.
    pub mirror_check: bool,
    /// The run's seed.
    pub seed: u64,
    /// The think time.
    pub think: Arc<ThinkTime>,
    /// Where to record.
    pub window: Arc<Window>,
    /// Where every bot records every event it receives, if anywhere.
    pub witness: Option<Arc<Witness>>,
    /// How many times a bot tries to take its seat back after its connection broke in the
    /// middle of a game (0: it does not try).
    pub resume_attempts: u32,
    /// What `wss://` URLs are trusted with (`None`: `ws://` only).
    pub tls: Option<Arc<tokio_rustls::rustls::ClientConfig>>,
    /// Whether a bot told by `served_at` where its table's owner is (cluster mode) moves there:
    /// a second connection resumes the seat at the owner, then the first one is dropped.
    pub follow_served_at: bool,
}

/// What kind of game the bots' tables play, and which of its moves the bots make.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TableOptions {
    /// `seed` or `cr807`.
    pub rules: RuleSet,
    /// Combat with Dice: attacks are rolled (`attack_roll`) instead of declared.
    pub combat_dice: bool,
    /// Paris or simultaneous mulligans.
    pub mulligan: MulliganMode,
    /// Probability that a bot takes an extra turn (once per turn, as it begins).
    pub extra_turn_chance: f64,
    /// Whether the host bot checks every random outcome of each finished game
    /// ([`grand_melee_protocol::dice::verify`] on its events from the server).
    pub verify_dice: bool,
}

/// The bots of one table.
#[derive(Debug)]
pub struct Group {
    /// The table's index in the run (names and seeds derive from it).
    pub index: usize,
    /// Broadcast tracking for the table's bots.
    pub tracker: Tracker,
    /// The current table and its generation, published by the host bot once it is seated.
    pub table: watch::Sender<Option<(u32, TableId)>>,
    /// Bots of the table connected (the relay bots start once all are).
    pub connected: watch::Sender<usize>,
    seats: usize,
    finished: std::sync::atomic::AtomicUsize,
    games: std::sync::Mutex<std::collections::BTreeMap<u32, GameRecord>>,
}

/// A finished game of a group, as its bots saw it at `game_over`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// The game's table.
    pub table: TableId,
    /// The standings the first bot to report saw, best place first.
    pub standings: Vec<Standing>,
    /// Bots that reported the game.
    pub reports: usize,
    /// Bots whose standings differed from the first report's (must be 0).
    pub disagreements: usize,
}

impl GameRecord {
    /// Everyone in first place.
    pub fn winners(&self) -> Vec<PlayerId> {
        self.standings
            .iter()
            .filter(|s| s.place == 1)
            .map(|s| s.player)
            .collect()
    }
}

impl Group {
    /// The group of table `index` with `seats` bots, recording into `window`.
    pub fn new(index: usize, seats: usize, window: Arc<Window>) -> Self {
        Self {
            index,
            tracker: Tracker::new(seats, window),
            table: watch::Sender::new(None),
            connected: watch::Sender::new(0),
            seats,
            finished: std::sync::atomic::AtomicUsize::new(0),
            games: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        }
    }

    /// A bot of the group saw game `generation` at `table` end with `standings`.
    pub fn record_game(&self, generation: u32, table: TableId, standings: &[Standing]) {
        if let Ok(mut games) = self.games.lock() {
            let record = games.entry(generation).or_insert_with(|| GameRecord {
                table,
                standings: standings.to_vec(),
                reports: 0,
                disagreements: 0,
            });
            record.reports += 1;
            if record.table != table || record.standings != standings {
                record.disagreements += 1;
            }
        }
    }

    /// The group's finished games by generation.
    pub fn games(&self) -> std::collections::BTreeMap<u32, GameRecord> {
        self.games.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// A bot of the group is done: once the last one is, broadcasts still in flight are
    /// counted as undelivered and forgotten.
    pub fn bot_done(&self) {
        if self.finished.fetch_add(1, Relaxed) + 1 == self.seats {
            self.tracker.finish();
        }
    }
}

/// The game request in flight: its id and when it was sent.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    id: u32,
    sent: Instant,
}

/// One bot at the server.
#[derive(Debug)]
pub struct ServerBot {
    ws: Socket,
    /// The server's WebSocket URLs (one per node of a cluster), to fail over to in turn.
    urls: Arc<[String]>,
    /// The URL of the current connection in `urls`.
    url_index: usize,
    /// The bot's connections so far, less one (0 until the first resume).
    connection: u32,
    settings: Arc<BotSettings>,
    group: Arc<Group>,
    seat: usize,
    rng: Rng,
    next_id: u32,
    stop: CancellationToken,
    /// The current table, its generation and my player id there.
    table: Option<(TableId, u32)>,
    /// The seat token at the current table, once seated.
    token: Option<SeatToken>,
    model: Option<BotModel>,
    /// The mirror was just replaced by a fresh state (a resume, or a snapshot nobody asked
    /// for): the move being thought about is dropped and the next one chosen anew.
    fresh: bool,
    /// The snapshot request whose answer is compared with the mirror (`--mirror-check`).
    check: Option<u32>,
    /// Batches folded since the last check.
    batches: u32,
    resync: Option<u32>,
    in_flight: Option<InFlight>,
    /// The game command of the move in flight, to tell a raced refusal from a fault.
    in_flight_command: Option<(
        grand_melee_protocol::rules::Authority,
        grand_melee_protocol::rules::Command,
    )>,
    start_sent: bool,
    attacks_this_turn: u32,
    dealt_this_turn: bool,
    extra_this_turn: bool,
    mismatch_logged: bool,
    seated_signal: Option<SeatedSignal>,
    done_signal: Option<SeatedSignal>,
    /// The index in `urls` of the owner a `served_at` named, until the bot has moved there.
    move_to: Option<usize>,
}

impl ServerBot {
    /// Tells the fleet through `signal` when the bot has played all its games.
    pub fn with_done_signal(mut self, signal: SeatedSignal) -> Self {
        self.done_signal = Some(signal);
        self
    }

    /// Tells the fleet through `signal` when the bot first takes its seat.
    pub fn with_seated_signal(mut self, signal: SeatedSignal) -> Self {
        self.seated_signal = Some(signal);
        self
    }

    /// Fails over to `urls` (the server's WebSocket URLs, one per node; `ws` is connected to
    /// `urls[current]`): after its connection breaks in the middle of a game, the bot resumes
    /// its seat at the URL after the one that failed, round robin (with a single URL, at that
    /// URL again). Without URLs a broken connection ends the bot.
    pub fn with_urls(mut self, urls: Arc<[String]>, current: usize) -> Self {
        self.url_index = current.min(urls.len().saturating_sub(1));
        self.urls = urls;
        self
    }

    /// A bot for `seat` of `group`, on an open WebSocket.
    pub fn new(
        ws: Socket,
        settings: Arc<BotSettings>,
        group: Arc<Group>,
        seat: usize,
        stop: CancellationToken,
    ) -> Self {
        let stream = ((group.index as u64) << 8) | seat as u64;
        let rng = Rng::new(settings.seed, stream);
        Self {
            ws,
            urls: Arc::from(Vec::new()),
            url_index: 0,
            connection: 0,
            settings,
            group,
            seat,
            rng,
            next_id: 1,
            stop,
            table: None,
            token: None,
            model: None,
            fresh: false,
            check: None,
            batches: 0,
            resync: None,
            in_flight: None,
            in_flight_command: None,
            start_sent: false,
            attacks_this_turn: 0,
            dealt_this_turn: false,
            extra_this_turn: false,
            mismatch_logged: false,
            seated_signal: None,
            done_signal: None,
            move_to: None,
        }
    }

    fn window(&self) -> &Window {
        &self.settings.window
    }

    async fn send(&mut self, build: impl FnOnce(u32) -> ClientMessage) -> Result<u32, BotError> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let bytes = wire::encode_client(&build(id));
        let counters = &self.settings.window.counters;
        Window::bump(&counters.frames_out);
        Window::add(&counters.bytes_out, bytes.len() as u64);
        self.ws.send(Message::Binary(bytes.into())).await?;
        Ok(id)
    }

    /// The next server message, with the bookkeeping every message gets (counting, mirroring
    /// events, gap recovery). `None` when the connection is gone.
    async fn recv(&mut self) -> Result<ServerMessage, BotError> {
        loop {
            let frame = match self.ws.next().await {
                None => return Err(BotError::Closed(None)),
                Some(frame) => frame?,
            };
            let bytes = match frame {
                Message::Binary(bytes) => bytes,
                Message::Close(frame) => {
                    return Err(BotError::Closed(frame.map(|f| u16::from(f.code))));
                }
                _ => continue,
            };
            let counters = &self.settings.window.counters;
            Window::bump(&counters.frames_in);
            Window::add(&counters.bytes_in, bytes.len() as u64);
            let message = wire::decode_server(&bytes)?;
            if matches!(message, ServerMessage::Events { .. }) {
                Window::add(&counters.delivery_bytes, bytes.len() as u64);
            }
            self.absorb(&message).await?;
            return Ok(message);
        }
    }

    /// Folds what every message may change into the mirror.
    async fn absorb(&mut self, message: &ServerMessage) -> Result<(), BotError> {
        match message {
            ServerMessage::Events { table, seq, events } => {
                let now = Instant::now();
                let counters = &self.settings.window.counters;
                Window::bump(&counters.deliveries);
                Window::add(&counters.events_in, events.len() as u64);
                if let Some(witness) = &self.settings.witness {
                    witness.record_batch(self.observer(), *table, *seq, events);
                }
                let Some((current, generation)) = self.table else {
                    return Ok(());
                };
                if *table != current {
                    return Ok(());
                }
                let last = seq.saturating_add(events.len().saturating_sub(1) as u64);
                self.group
                    .tracker
                    .delivered(Tracker::server_key(generation, last), now);
                self.mirror(*seq, events).await?;
            }
            ServerMessage::ServedAt { table, url }
                if self.settings.follow_served_at
                    && self.table.is_some_and(|(current, _)| current == *table) =>
            {
                let url = url.trim_end_matches('/');
                self.move_to = self
                    .urls
                    .iter()
                    .position(|known| known.trim_end_matches('/') == url)
                    .filter(|&index| index != self.url_index);
            }
            ServerMessage::Snapshot {
                reply_to: None,
                view,
            } if self.model.is_some() => self.moved(view),
            ServerMessage::Snapshot {
                reply_to: Some(id),
                view,
            } if self.resync == Some(*id) => {
                self.resync = None;
                if let Some(model) = &self.model {
                    self.model = BotModel::from_view(view, model.me()).ok();
                }
            }
            ServerMessage::Snapshot {
                reply_to: Some(id),
                view,
            } if self.check == Some(*id) => {
                self.check = None;
                Window::bump(&self.settings.window.counters.mirror_checks);
                // Every event up to the snapshot's was delivered before it: the mirror is at
                // the same event, and its projection must be the server's snapshot exactly.
                let differs = match &self.model {
                    // A gap was found since the request: the mirror is being rebuilt.
                    _ if self.resync.is_some() => None,
                    Some(model) if model.seq() == view.seq && model.view() != *view => Some(
                        format!("the mirror differs from the snapshot at event {}", view.seq),
                    ),
                    Some(model) if model.seq() != view.seq => Some(format!(
                        "the mirror is at event {} when the snapshot is at {}",
                        model.seq(),
                        view.seq
                    )),
                    _ => None,
                };
                self.note_mismatch(differs);
            }
            _ => {}
        }
        Ok(())
    }

    async fn mirror(&mut self, seq: u64, events: &[Event]) -> Result<(), BotError> {
        if self.resync.is_some() {
            return Ok(());
        }
        let Some(model) = &mut self.model else {
            return Ok(());
        };
        let me = model.me();
        if let Err(error) = model.apply_batch(seq, events) {
            debug!(table = self.group.index, seat = self.seat, %error, "mirror lost: resync");
            Window::bump(&self.settings.window.counters.gaps);
            self.resync = Some(self.send(|id| ClientMessage::Snapshot { id }).await?);
            return Ok(());
        }
        if events
            .iter()
            .any(|e| matches!(e, Event::TurnBegan { player, .. } if *player == me))
        {
            self.attacks_this_turn = 0;
            self.dealt_this_turn = false;
            self.extra_this_turn = false;
        }
        if self.settings.mirror_check && self.check.is_none() {
            self.batches += 1;
            if self.batches >= MIRROR_CHECK_EVERY {
                self.batches = 0;
                self.check = Some(self.send(|id| ClientMessage::Snapshot { id }).await?);
            }
        }
        Ok(())
    }

    /// Which bot this is, for the witness.
    fn observer(&self) -> Observer {
        Observer {
            table_index: self.group.index,
            seat: self.seat,
            connection: self.connection,
        }
    }

    /// A snapshot nobody asked for while seated: the table moved to another node, which tells
    /// the table as it has it. It replaces the mirror; the request in flight may never be
    /// answered, so it is forgotten, and the next move is chosen from the new state.
    fn moved(&mut self, view: &TableView) {
        let Some(me) = self.model.as_ref().map(BotModel::me) else {
            return;
        };
        if self.table.is_none_or(|(table, _)| table != view.table) {
            return;
        }
        debug!(
            table = self.group.index,
            seat = self.seat,
            seq = view.seq,
            "unsolicited snapshot: the table moved"
        );
        Window::bump(&self.settings.window.counters.table_moves);
        self.model = BotModel::from_view(view, me).ok();
        self.fresh_state();
    }

    /// The mirror was just rebuilt from a snapshot the server sent by itself (a resume or a
    /// move): nothing sent before is owed an answer any more.
    fn fresh_state(&mut self) {
        if self.in_flight.take().is_some() {
            self.in_flight_command = None;
            Window::bump(&self.settings.window.counters.lost_requests);
        }
        self.check = None;
        self.resync = None;
        self.batches = 0;
        // A `start` that was lost is sent again.
        if self
            .model
            .as_ref()
            .is_some_and(|m| m.stage() == StageName::Lobby)
        {
            self.start_sent = false;
        }
        self.fresh = true;
    }

    /// Counts (and logs once) a difference between the mirror and the server.
    fn note_mismatch(&mut self, differs: Option<String>) {
        if let Some(what) = differs {
            Window::bump(&self.settings.window.counters.mirror_mismatches);
            if !self.mismatch_logged {
                self.mismatch_logged = true;
                tracing::warn!(table = self.group.index, seat = self.seat, %what, "mirror mismatch");
            }
        }
    }

    /// Sends a request and waits up to `patience` for its answer, whatever it is.
    async fn exchange(
        &mut self,
        request: &'static str,
        patience: Duration,
        build: impl FnOnce(u32) -> ClientMessage,
    ) -> Result<ServerMessage, BotError> {
        let id = self.send(build).await?;
        let answer = async {
            loop {
                let message = self.recv().await?;
                if message.reply_to() == Some(id) {
                    return Ok::<_, BotError>(message);
                }
            }
        };
        tokio::time::timeout(patience, answer)
            .await
            .map_err(|_| BotError::Timeout(request))?
    }

    /// Sends a session request and waits for its answer; an `error` answer is `Refused`.
    async fn call(
        &mut self,
        request: &'static str,
        build: impl FnOnce(u32) -> ClientMessage,
    ) -> Result<ServerMessage, BotError> {
        let message = self.exchange(request, ANSWER_PATIENCE, build).await?;
        if let ServerMessage::Error { code, .. } = &message {
            self.settings.window.record_error(code.name());
            return Err(BotError::Refused {
                request,
                code: code.name().to_owned(),
            });
        }
        Ok(message)
    }

    /// Plays until the games are done or the bot is told to stop, then closes its connection
    /// (its seat stays reserved, as for any client that goes away).
    pub async fn run(mut self) -> Result<(), BotError> {
        let server_gone = self.play().await?;
        if server_gone {
            return Ok(());
        }
        self.ws.close(None).await?;
        // Read until the server's close: everything it sent before is counted.
        let drain = async {
            while let Some(frame) = self.ws.next().await {
                if let Ok(Message::Binary(bytes)) = frame {
                    let counters = &self.settings.window.counters;
                    Window::bump(&counters.frames_in);
                    Window::add(&counters.bytes_in, bytes.len() as u64);
                }
            }
        };
        let _ = tokio::time::timeout(ANSWER_PATIENCE, drain).await;
        Ok(())
    }

    /// Plays game after game. Returns whether the server went away (close 1001) while the
    /// bot, its games done, was waiting to be stopped.
    async fn play(&mut self) -> Result<bool, BotError> {
        self.call("hello", |id| ClientMessage::Hello {
            id,
            protocol: PROTOCOL_VERSION,
            client: "grand-melee-loadtest".into(),
        })
        .await?;
        for generation in 0u32.. {
            if self.stop.is_cancelled() {
                return Ok(false);
            }
            let Some(table) = self.find_table(generation).await? else {
                return Ok(false);
            };
            self.sit(table, generation).await?;
            self.play_game().await?;
            let finished = self
                .model
                .as_ref()
                .is_some_and(|m| m.stage() == StageName::Finished);
            if !finished {
                // Told to stop in the middle of a game.
                return Ok(false);
            }
            if let Some(signal) = self.seated_signal.take() {
                // The game went by without the bot seeing it under way (it came back to a
                // finished table): it was ready all the same.
                Window::bump(&self.settings.window.counters.seated);
                signal.fire();
            }
            if let (Some(model), Some((table, _))) = (&self.model, self.table) {
                self.group.record_game(generation, table, model.standings());
            }
            if self.seat == 0 {
                let counters = &self.settings.window.counters;
                Window::bump(&counters.games_finished);
                let winners = self
                    .model
                    .as_ref()
                    .map_or(0, |m| m.standings().iter().filter(|s| s.place == 1).count());
                if winners == 1 {
                    Window::bump(&counters.games_with_winner);
                }
                if self.settings.options.verify_dice
                    && let Some((table, _)) = self.table
                {
                    self.verify_dice(table).await?;
                }
            }
            let more = self
                .settings
                .games
                .is_none_or(|games| generation + 1 < games);
            if !more || self.stop.is_cancelled() {
                return self.idle().await;
            }
            self.table = None;
            self.token = None;
            self.call("leave", |id| ClientMessage::Leave { id }).await?;
            self.model = None;
            self.check = None;
        }
        Ok(false)
    }

    /// Fetches every event of the finished game at `table` and checks its dice: the seating,
    /// the first player and every d20 against the revealed secret.
    async fn verify_dice(&mut self, table: TableId) -> Result<(), BotError> {
        let mut events = Vec::new();
        let mut from_seq = 1;
        loop {
            let page = self
                .call("get_events", |id| ClientMessage::GetEvents {
                    id,
                    table,
                    from_seq,
                    limit: wire::MAX_PAGE_ITEMS,
                })
                .await?;
            let ServerMessage::PastEvents {
                events: page,
                next_seq,
                ..
            } = page
            else {
                return Err(BotError::Refused {
                    request: "get_events",
                    code: format!("unexpected answer {}", page.name()),
                });
            };
            events.extend(page);
            match next_seq {
                Some(next) => from_seq = next,
                None => break,
            }
        }
        let counters = &self.settings.window.counters;
        match wire::dice::verify((1u64..).zip(&events)) {
            Ok(verified) => {
                Window::bump(&counters.dice_verified);
                Window::add(&counters.rolls_verified, u64::from(verified.rolls));
            }
            Err(mismatch) => {
                tracing::warn!(table = self.group.index, %mismatch, "dice mismatch");
                Window::bump(&counters.dice_mismatches);
            }
        }
        Ok(())
    }

    /// Its games done, the bot stays at its table until it is told to stop; the server going
    /// away meanwhile (close 1001) is a normal end, and so is any loss of the connection when
    /// the bot plays against a cluster (its node may die after the game). Returns whether it
    /// did.
    async fn idle(&mut self) -> Result<bool, BotError> {
        if let Some(done) = &self.done_signal {
            done.fire();
        }
        let stop = self.stop.clone();
        let cluster = self.urls.len() > 1;
        loop {
            tokio::select! {
                () = stop.cancelled() => return Ok(false),
                message = self.recv() => match message {
                    Ok(_) => {}
                    Err(BotError::Closed(Some(close::GOING_AWAY))) => return Ok(true),
                    Err(error) if cluster && error.is_connection_loss() => return Ok(true),
                    Err(error) => return Err(error),
                },
            }
        }
    }

    /// The table of this generation: created by the group's first bot, announced to the others.
    /// `None` if the bot was told to stop while waiting.
    async fn find_table(&mut self, generation: u32) -> Result<Option<TableId>, BotError> {
        if self.seat == 0 {
            let settings = Arc::clone(&self.settings);
            let name = format!("bots {}.{generation}", self.group.index);
            let seed = settings.seed ^ ((self.group.index as u64) << 20) ^ u64::from(generation);
            let created = self
                .call("create_table", |id| ClientMessage::CreateTable {
                    mountain_magic: None,
                    id,
                    name,
                    seats: settings.seats,
                    spell_range: match settings.options.rules {
                        RuleSet::Cr807 => 1,
                        RuleSet::Seed => settings.spell_range,
                    },
                    reduction: Reduction::Eager,
                    starting_life: settings.starting_life,
                    password: None,
                    seed: Some(seed),
                    turn_clock_secs: 0,
                    absence_limit_secs: 600,
                    mulligan_clock_secs: 0,
                    max_spectators: grand_melee_protocol::DEFAULT_MAX_SPECTATORS,
                    rules: settings.options.rules,
                    combat_dice: settings.options.combat_dice,
                    mulligan: settings.options.mulligan,
                    game: Default::default(),
                    league: None,
                    organiser: None,
                })
                .await?;
            let ServerMessage::TableCreated { table, .. } = created else {
                return Err(BotError::Refused {
                    request: "create_table",
                    code: format!("unexpected answer {}", created.name()),
                });
            };
            return Ok(Some(table));
        }
        let mut announced = self.group.table.subscribe();
        let wait = announced.wait_for(|t| t.is_some_and(|(g, _)| g >= generation));
        let stop = self.stop.clone();
        tokio::select! {
            () = stop.cancelled() => Ok(None),
            found = wait => Ok(found.ok().and_then(|t| *t).map(|(_, table)| table)),
        }
    }

    async fn sit(&mut self, table: TableId, generation: u32) -> Result<(), BotError> {
        let name = format!("bot {}", self.seat);
        let entropy = format!("bot {} of table {}", self.seat, self.group.index);
        self.table = Some((table, generation));
        let seated = self
            .call("join", |id| ClientMessage::Join {
                id,
                table,
                name,
                password: None,
                entropy: Some(entropy),
                member_token: None,
            })
            .await?;
        let ServerMessage::Seated { player, token, .. } = seated else {
            return Err(BotError::Refused {
                request: "join",
                code: format!("unexpected answer {}", seated.name()),
            });
        };
        self.token = Some(token);
        self.start_sent = false;
        match self.seated_snapshot(ANSWER_PATIENCE).await {
            Ok(snapshot) => {
                self.model = BotModel::from_view(&snapshot, player).ok();
                self.check = None;
            }
            Err(error) if error.is_connection_loss() && !self.stop.is_cancelled() => {
                self.failover(error).await?;
            }
            Err(error) => return Err(error),
        }
        if self.seat == 0 {
            self.group.table.send_replace(Some((generation, table)));
        }
        Ok(())
    }

    /// The snapshot that follows `seated`.
    async fn seated_snapshot(&mut self, patience: Duration) -> Result<TableView, BotError> {
        tokio::time::timeout(patience, async {
            loop {
                if let ServerMessage::Snapshot { view, .. } = self.recv().await? {
                    return Ok::<_, BotError>(view);
                }
            }
        })
        .await
        .map_err(|_| BotError::Timeout("snapshot"))?
    }

    /// Whether the bot has something to do at its table now.
    fn wants_to_act(&self) -> bool {
        let Some(model) = &self.model else {
            return false;
        };
        match model.stage() {
            StageName::Lobby => {
                !self.start_sent
                    && model.host() == Some(model.me())
                    && model.player_count() >= usize::from(self.settings.seats)
            }
            StageName::Mulligan => model.mulligan_deciders().contains(&model.me()),
            StageName::Playing => model.my_running_phase().is_some(),
            StageName::Finished => false,
        }
    }

    /// Plays the current game until `game_over` or until told to stop.
    async fn play_game(&mut self) -> Result<(), BotError> {
        let stop = self.stop.clone();
        let mut stopping = false;
        let mut next_move: Option<Instant> = None;
        loop {
            let finished = self
                .model
                .as_ref()
                .is_none_or(|m| m.stage() == StageName::Finished);
            // Every request gets its answer before the game is left, snapshot checks too:
            // what the bots sent is then exactly what the server read.
            let answered =
                self.in_flight.is_none() && self.check.is_none() && self.resync.is_none();
            if answered && (finished || stopping) {
                return Ok(());
            }
            if answered && !stopping && self.move_to.is_some() {
                self.go_to_owner().await?;
                next_move = None;
                continue;
            }
            let playing = self
                .model
                .as_ref()
                .is_some_and(|m| m.stage() == StageName::Playing);
            if playing && let Some(signal) = self.seated_signal.take() {
                // Ready: seated, every hand kept, the game running.
                Window::bump(&self.settings.window.counters.seated);
                signal.fire();
            }
            if next_move.is_none() && self.in_flight.is_none() && self.wants_to_act() {
                // Think before game moves; starting and mulligans are decided at once, so that
                // the load steps measure tables in play.
                let think = if playing {
                    self.settings.think.draw(&mut self.rng)
                } else {
                    Duration::ZERO
                };
                next_move = Some(Instant::now() + think);
            }
            let in_flight = self.in_flight;
            let patience = in_flight.map(|f| f.sent + ANSWER_PATIENCE);
            tokio::select! {
                biased;
                () = stop.cancelled(), if !stopping => stopping = true,
                message = self.recv() => match message {
                    Ok(message) => self.on_answer(&message),
                    Err(error) => self.recover(error, stopping).await?,
                },
                () = sleep_until(next_move), if next_move.is_some() && in_flight.is_none() && !stopping => {
                    next_move = None;
                    if let Err(error) = self.act().await {
                        self.recover(error, stopping).await?;
                    }
                }
                () = sleep_until(patience), if patience.is_some() => {
                    return Err(BotError::Timeout("game request"));
                }
            }
            if std::mem::take(&mut self.fresh) {
                // A new state: the move thought about on the old one is dropped.
                next_move = None;
            }
        }
    }

    /// A message could not be read or sent during a game: fails over if the connection is
    /// gone, the game is not over and the bot is not stopping; otherwise that is the end.
    async fn recover(&mut self, error: BotError, stopping: bool) -> Result<(), BotError> {
        let over = self
            .model
            .as_ref()
            .is_none_or(|m| m.stage() == StageName::Finished);
        if stopping || over || !error.is_connection_loss() {
            return Err(error);
        }
        self.failover(error).await
    }

    /// The connection broke while the bot holds a seat: connects to the next URL (round robin
    /// from the one that failed), says `hello` and `resume`s the seat with its token, up to
    /// `resume_attempts` times with a growing pause in between; every refusal (`unknown_table`
    /// while another node takes the table over, say) is tried again. Then the mirror is the
    /// snapshot that follows, and the request in flight is forgotten. A bot without a seat
    /// token (still creating or joining) cannot fail over.
    async fn failover(&mut self, cause: BotError) -> Result<(), BotError> {
        let (Some((table, _)), Some(token)) = (self.table, self.token) else {
            return Err(cause);
        };
        let attempts = self.settings.resume_attempts;
        if self.urls.is_empty() || attempts == 0 {
            return Err(cause);
        }
        debug!(table = self.group.index, seat = self.seat, error = %cause, "connection lost: resuming");
        let me = self.model.as_ref().map(BotModel::me);
        let stop = self.stop.clone();
        let mut last = cause;
        for attempt in 0..attempts {
            let pause = resume_backoff(attempt);
            if !pause.is_zero() {
                tokio::select! {
                    () = stop.cancelled() => return Err(last),
                    () = tokio::time::sleep(pause) => {}
                }
            }
            self.url_index = (self.url_index + 1) % self.urls.len();
            match self.resume_at(table, token, me).await {
                Ok(()) => {
                    Window::bump(&self.settings.window.counters.reconnects);
                    debug!(
                        table = self.group.index,
                        seat = self.seat,
                        url = self.urls[self.url_index],
                        attempt,
                        "seat resumed"
                    );
                    return Ok(());
                }
                Err(error) => {
                    Window::bump(&self.settings.window.counters.resume_retries);
                    debug!(
                        table = self.group.index,
                        seat = self.seat,
                        url = self.urls[self.url_index],
                        attempt,
                        %error,
                        "resume failed"
                    );
                    last = error;
                }
            }
        }
        Err(BotError::ResumeFailed {
            attempts,
            last: Box::new(last),
        })
    }

    /// Moves to the node a `served_at` named: a new connection there resumes the seat (taking
    /// it over from the old one, which is then dropped). If that fails, the bot fails over as
    /// after a broken connection (the old connection, unread meanwhile, is not trusted).
    async fn go_to_owner(&mut self) -> Result<(), BotError> {
        let Some(index) = self.move_to.take() else {
            return Ok(());
        };
        let (Some((table, _)), Some(token)) = (self.table, self.token) else {
            return Ok(());
        };
        let me = self.model.as_ref().map(BotModel::me);
        let from = self.url_index;
        self.url_index = index;
        match self.resume_at(table, token, me).await {
            Ok(()) => {
                Window::bump(&self.settings.window.counters.moved_to_owner);
                debug!(
                    table = self.group.index,
                    seat = self.seat,
                    url = self.urls[index],
                    "moved to the table's owner"
                );
                Ok(())
            }
            Err(error) => {
                debug!(table = self.group.index, seat = self.seat, %error, "moving to the table's owner failed");
                self.url_index = from;
                self.failover(error).await
            }
        }
    }

    /// One resume try at the current URL: connect, `hello`, `resume`, the snapshot. A refusal
    /// is not counted as an error (it is expected while a node takes the table over).
    async fn resume_at(
        &mut self,
        table: TableId,
        token: SeatToken,
        me: Option<PlayerId>,
    ) -> Result<(), BotError> {
        let url = self.urls[self.url_index].clone();
        let tls = self.settings.tls.as_ref();
        let ws = tokio::time::timeout(RESUME_PATIENCE, connect_tls(&url, tls))
            .await
            .map_err(|_| BotError::Timeout("connect"))??;
        // Nothing sent on the old connection is owed an answer any more; it is dropped once
        // this try is over (after a move to the owner, once the seat is taken over here).
        let _old = std::mem::replace(&mut self.ws, ws);
        self.connection += 1;
        self.model = None;
        let refused = |request: &'static str, answer: &ServerMessage| match answer {
            ServerMessage::Error { code, .. } => BotError::Refused {
                request,
                code: code.name().to_owned(),
            },
            other => BotError::Refused {
                request,
                code: format!("unexpected answer {}", other.name()),
            },
        };
        let welcome = self
            .exchange("hello", RESUME_PATIENCE, |id| ClientMessage::Hello {
                id,
                protocol: PROTOCOL_VERSION,
                client: "grand-melee-loadtest".into(),
            })
            .await?;
        if !matches!(welcome, ServerMessage::Welcome { .. }) {
            return Err(refused("hello", &welcome));
        }
        let seated = self
            .exchange("resume", RESUME_PATIENCE, |id| ClientMessage::Resume {
                id,
                table,
                token,
            })
            .await?;
        let ServerMessage::Seated { player, .. } = seated else {
            return Err(refused("resume", &seated));
        };
        if me.is_some_and(|me| me != player) {
            tracing::warn!(
                table = self.group.index,
                seat = self.seat,
                ?me,
                player,
                "resumed as another player"
            );
        }
        let snapshot = self.seated_snapshot(RESUME_PATIENCE).await?;
        self.model = BotModel::from_view(&snapshot, player).ok();
        self.fresh_state();
        Ok(())
    }

    /// Handles the answer to the request in flight, if this is it.
    fn on_answer(&mut self, message: &ServerMessage) {
        let Some(in_flight) = self.in_flight else {
            return;
        };
        if message.reply_to() != Some(in_flight.id) {
            return;
        }
        let now = Instant::now();
        self.in_flight = None;
        match message {
            ServerMessage::Ack { seq, .. } => {
                let window = &self.settings.window;
                Window::bump(&window.counters.acks);
                window.record_ack(now.saturating_duration_since(in_flight.sent));
                if let Some((_, generation)) = self.table {
                    self.group.tracker.acted(
                        Tracker::server_key(generation, *seq),
                        in_flight.sent,
                        now,
                    );
                }
            }
            ServerMessage::Error { code, message, .. } => {
                let raced = self
                    .in_flight_command
                    .take()
                    .is_some_and(|(authority, command)| {
                        self.model
                            .as_ref()
                            .is_some_and(|model| model.would_refuse(authority, command))
                    });
                debug!(
                    table = self.group.index,
                    seat = self.seat,
                    code = code.name(),
                    message,
                    raced,
                    "refused"
                );
                if raced {
                    Window::bump(&self.settings.window.counters.raced);
                } else {
                    self.settings.window.record_error(code.name());
                }
            }
            _ => {}
        }
    }

    /// Chooses and sends one legal move, if there is one now.
    async fn act(&mut self) -> Result<(), BotError> {
        let Some(model) = &self.model else {
            return Ok(());
        };
        let Some(request) = choose_move(
            model,
            &mut self.rng,
            usize::from(self.settings.seats),
            self.settings.chat_chance,
            &self.settings.options,
            TurnMemory {
                attacks: self.attacks_this_turn,
                dealt: self.dealt_this_turn,
                extra: self.extra_this_turn,
            },
        ) else {
            return Ok(());
        };
        match request {
            Move::Start => self.start_sent = true,
            Move::Attack { .. } | Move::AttackRoll { .. } => self.attacks_this_turn += 1,
            Move::DealDamage { .. } => self.dealt_this_turn = true,
            Move::ExtraTurn => {
                self.extra_this_turn = true;
                Window::bump(&self.window().counters.extra_turns);
            }
            Move::Chat(_) => Window::bump(&self.window().counters.chats),
            _ => {}
        }
        let sent = Instant::now();
        let id = self.send(|id| request.message(id)).await?;
        Window::bump(&self.window().counters.actions);
        self.in_flight = Some(InFlight { id, sent });
        self.in_flight_command = request.message(id).command();
        Ok(())
    }
}

/// What the bot remembers about its current turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnMemory {
    /// Attacks made this turn.
    pub attacks: u32,
    /// Whether it dealt damage this turn.
    pub dealt: bool,
    /// Whether it took an extra turn this turn.
    pub extra: bool,
}

/// A move a bot makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Start the game (host).
    Start,
    /// Redraw one card fewer.
    Mulligan,
    /// Keep the hand.
    Keep,
    /// Move the phase indicator.
    SetPhase(Phase),
    /// Attack a player in range.
    Attack {
        /// Whom.
        target: PlayerId,
        /// Combat damage.
        damage: u32,
    },
    /// Deal damage to a player in range.
    DealDamage {
        /// Whom.
        target: PlayerId,
        /// How much.
        amount: u32,
    },
    /// Say something.
    Chat(&'static str),
    /// End the running turn.
    EndTurn,
    /// Take an extra turn after this one.
    ExtraTurn,
    /// Combat with Dice: roll for an attacking creature.
    AttackRoll {
        /// Whom.
        defender: PlayerId,
        /// The attacking creature's power.
        power: u32,
        /// Powers of up to two blockers (0: no blocker there).
        blockers: [u32; 2],
    },
}

impl Move {
    /// The request for this move.
    pub fn message(self, id: u32) -> ClientMessage {
        match self {
            Move::Start => ClientMessage::Start {
                id,
                first_player: None,
                seating: grand_melee_protocol::SeatingMode::Random,
                order: Vec::new(),
            },
            Move::Mulligan => ClientMessage::Mulligan { id },
            Move::Keep => ClientMessage::Keep { id },
            Move::SetPhase(phase) => ClientMessage::SetPhase { id, phase },
            Move::Attack { target, damage } => ClientMessage::Attack {
                id,
                target,
                damage,
                poison: 0,
            },
            Move::DealDamage { target, amount } => ClientMessage::DealDamage { id, target, amount },
            Move::Chat(text) => ClientMessage::Chat {
                id,
                text: text.to_owned(),
            },
            Move::EndTurn => ClientMessage::EndTurn { id },
            Move::ExtraTurn => ClientMessage::ExtraTurn { id },
            Move::AttackRoll {
                defender,
                power,
                blockers,
            } => ClientMessage::AttackRoll {
                id,
                defender,
                attacker_power: power,
                blocker_powers: blockers.into_iter().filter(|&b| b > 0).collect(),
            },
        }
    }
}

/// The bots' policy: a legal move for `model`'s player now, if he has one.
pub fn choose_move(
    model: &BotModel,
    rng: &mut Rng,
    seats: usize,
    chat_chance: f64,
    options: &TableOptions,
    turn: TurnMemory,
) -> Option<Move> {
    let me = model.me();
    match model.stage() {
        StageName::Lobby => {
            (model.host() == Some(me) && model.player_count() >= seats).then_some(Move::Start)
        }
        StageName::Mulligan => {
            if !model.mulligan_deciders().contains(&me) {
                None
            } else if model.my_hand() > 5 && rng.chance(0.2) {
                Some(Move::Mulligan)
            } else {
                Some(Move::Keep)
            }
        }
        StageName::Finished => None,
        StageName::Playing => {
            let phase = model.my_running_phase()?;
            if rng.chance(chat_chance) {
                return rng.pick(&CHAT_LINES).map(Move::Chat);
            }
            Some(match phase {
                Phase::Beginning if !turn.extra && rng.chance(options.extra_turn_chance) => {
                    Move::ExtraTurn
                }
                Phase::Beginning if rng.chance(0.3) => Move::SetPhase(Phase::PrecombatMain),
                Phase::Beginning | Phase::PrecombatMain => Move::SetPhase(Phase::Combat),
                Phase::Combat => {
                    let targets = model.may_attack();
                    let again = turn.attacks == 0 || (turn.attacks < 3 && rng.chance(0.5));
                    match rng.pick(&targets) {
                        Some(defender) if again && options.combat_dice => Move::AttackRoll {
                            defender,
                            power: 1 + rng.below(6) as u32,
                            blockers: if rng.chance(0.4) {
                                [1 + rng.below(4) as u32, rng.below(3) as u32]
                            } else {
                                [0, 0]
                            },
                        },
                        Some(target) if again => Move::Attack {
                            target,
                            damage: 2 + rng.below(6) as u32,
                        },
                        _ if rng.chance(0.4) => Move::SetPhase(Phase::PostcombatMain),
                        _ => Move::EndTurn,
                    }
                }
                Phase::PostcombatMain => {
                    let mut targets = model.may_target();
                    targets.retain(|&q| q != me);
                    match rng.pick(&targets) {
                        Some(target) if !turn.dealt && rng.chance(0.3) => Move::DealDamage {
                            target,
                            amount: 1 + rng.below(3) as u32,
                        },
                        _ if rng.chance(0.3) => Move::SetPhase(Phase::Ending),
                        _ => Move::EndTurn,
                    }
                }
                Phase::Ending => Move::EndTurn,
            })
        }
    }
}
