//! A fleet: every bot of one process, table by table, against the server or the relay. It is
//! launched, steered while it runs (think time, measurement windows) and stopped.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::warn;

use crate::bot::{self, BotError, BotSettings, Group, ServerBot, TableOptions, ThinkTime};
use crate::relay_bot::RelayBot;
use crate::stats::{Window, WindowData};

/// What the bots talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The Grand Melee server (`/ws`), playing real games.
    Server,
    /// The bare relay (`/relay/<table>`), the same traffic shape without the game.
    Relay,
}

/// Starting simultaneous turns of a table: ⌊seats / (2R + 2)⌋, at least one.
pub fn starting_turns(seats: u8, spell_range: u8) -> usize {
    (usize::from(seats) / (2 * usize::from(spell_range) + 2)).max(1)
}

/// Everything a fleet needs to know.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetConfig {
    /// `ws://host:port` of the server or relay (the path is added per target).
    pub base_url: String,
    /// Server or relay.
    pub target: Target,
    /// Tables this fleet plays.
    pub tables: usize,
    /// Index of this fleet's first table in the whole run (fleets in several processes).
    pub first_table: usize,
    /// Seats per table.
    pub seats: u8,
    /// Mean think time before each move.
    pub think: Duration,
    /// The run's seed.
    pub seed: u64,
    /// Games per table before the bots stop (relay: frames per acting seat); `None`: until
    /// stopped.
    pub games: Option<u32>,
    /// Spell range of the tables.
    pub spell_range: u8,
    /// Starting life of the tables.
    pub starting_life: i32,
    /// Probability that a move is a chat line.
    pub chat_chance: f64,
    /// Whether every bot checks its mirror against the server's snapshots (`--mirror-check`).
    pub mirror_check: bool,
    /// Relay frames' size in bytes (the server's mean `events` message).
    pub relay_frame_bytes: usize,
    /// Connections opened at once while the fleet connects.
    pub connect_concurrency: usize,
    /// The tables' rules, dice and mulligans, and the bots' extra turns and dice checks.
    #[serde(default)]
    pub options: TableOptions,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            base_url: "ws://127.0.0.1:7878".into(),
            target: Target::Server,
            tables: 1,
            first_table: 0,
            seats: 15,
            think: Duration::from_millis(500),
            seed: 1,
            games: None,
            spell_range: 2,
            starting_life: 20,
            chat_chance: 0.05,
            mirror_check: false,
            relay_frame_bytes: 96,
            connect_concurrency: 128,
            options: TableOptions::default(),
        }
    }
}

/// Bots seated and bots done, for progress and readiness (never reset).
#[derive(Debug, Default)]
pub struct Live {
    /// Bots whose game is under way (seated, every hand kept; at the relay: whose whole group
    /// is connected).
    pub seated: AtomicU64,
    /// Bots that have finished, well or not.
    pub done: AtomicU64,
    /// Bots that have played all their games (runs with a number of games).
    pub played: AtomicU64,
    changed: Notify,
}

/// A running fleet.
#[derive(Debug)]
pub struct Fleet {
    config: FleetConfig,
    window: Arc<Window>,
    think: Arc<ThinkTime>,
    live: Arc<Live>,
    stop: CancellationToken,
    tasks: JoinSet<()>,
}

impl Fleet {
    /// Starts every bot; they connect (a few at a time), sit down and play.
    pub fn launch(config: FleetConfig) -> Self {
        let window = Arc::new(Window::default());
        let think = Arc::new(ThinkTime::new(config.think));
        let live = Arc::new(Live::default());
        let stop = CancellationToken::new();
        let settings = Arc::new(BotSettings {
            seats: config.seats,
            spell_range: config.spell_range,
            options: config.options,
            starting_life: config.starting_life,
            chat_chance: config.chat_chance,
            games: config.games,
            mirror_check: config.mirror_check,
            seed: config.seed,
            think: Arc::clone(&think),
            window: Arc::clone(&window),
        });
        let gate = Arc::new(Semaphore::new(config.connect_concurrency.max(1)));
        let seats = usize::from(config.seats);
        let actors = starting_turns(config.seats, config.spell_range);
        let mut tasks = JoinSet::new();
        for table in config.first_table..config.first_table + config.tables {
            let group = Arc::new(Group::new(table, seats, Arc::clone(&window)));
            for seat in 0..seats {
                let url = match config.target {
                    Target::Server => format!("{}/ws", config.base_url),
                    Target::Relay => format!("{}/relay/{table}", config.base_url),
                };
                let spec = BotSpec {
                    url,
                    target: config.target,
                    settings: Arc::clone(&settings),
                    group: Arc::clone(&group),
                    seat,
                    actors,
                    frame_bytes: config.relay_frame_bytes,
                    stop: stop.clone(),
                    gate: Arc::clone(&gate),
                    live: Arc::clone(&live),
                };
                tasks.spawn(spec.run());
            }
        }
        Self {
            config,
            window,
            think,
            live,
            stop,
            tasks,
        }
    }

    /// Bots in this fleet.
    pub fn bots(&self) -> usize {
        self.config.tables * usize::from(self.config.seats)
    }

    /// Seated and finished bots.
    pub fn live(&self) -> &Live {
        &self.live
    }

    /// Waits until every bot has taken its seat (or finished), or until `patience` is over;
    /// returns whether every bot did.
    pub async fn seated(&self, patience: Duration) -> bool {
        let bots = self.bots() as u64;
        let all = async {
            loop {
                let changed = self.live.changed.notified();
                let (seated, done) = (self.live.seated.load(Relaxed), self.live.done.load(Relaxed));
                if seated + done >= bots || seated >= bots {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(patience, all).await.is_ok() && self.live.seated.load(Relaxed) >= bots
    }

    /// Waits until every bot has played all its games (or finished), or until `patience` is
    /// over; returns whether every bot played them all.
    pub async fn played(&self, patience: Duration) -> bool {
        let bots = self.bots() as u64;
        let all = async {
            loop {
                let changed = self.live.changed.notified();
                let (played, done) = (self.live.played.load(Relaxed), self.live.done.load(Relaxed));
                if played + done >= bots || played >= bots {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(patience, all).await.is_ok() && self.live.played.load(Relaxed) >= bots
    }

    /// Sets the mean think time from now on.
    pub fn set_think(&self, think: Duration) {
        self.think.set(think);
    }

    /// Takes the measurement window (everything since the last take) and starts a new one.
    pub fn take_window(&self) -> WindowData {
        self.window.take()
    }

    /// Tells every bot to finish its move, leave and close.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Waits until every bot has finished (after `stop`, or by itself when the games are
    /// done), and returns the last window.
    pub async fn join(mut self) -> WindowData {
        while self.tasks.join_next().await.is_some() {}
        self.window.take()
    }

    /// Waits until every bot has finished by itself (a run with a number of games) or
    /// `patience` is over; returns whether they all did.
    pub async fn finished(&mut self, patience: Duration) -> bool {
        let all = async { while self.tasks.join_next().await.is_some() {} };
        tokio::time::timeout(patience, all).await.is_ok()
    }
}

/// One bot to start.
struct BotSpec {
    url: String,
    target: Target,
    settings: Arc<BotSettings>,
    group: Arc<Group>,
    seat: usize,
    actors: usize,
    frame_bytes: usize,
    stop: CancellationToken,
    gate: Arc<Semaphore>,
    live: Arc<Live>,
}

impl BotSpec {
    async fn run(self) {
        let window = Arc::clone(&self.settings.window);
        let live = Arc::clone(&self.live);
        let table = self.group.index;
        let seat = self.seat;
        let group = Arc::clone(&self.group);
        let result = self.play().await;
        group.bot_done();
        match result {
            Ok(()) => {}
            Err(BotError::Refused { request, code }) => {
                warn!(table, seat, request, code, "request refused: bot stops");
            }
            Err(error) => {
                Window::bump(&window.counters.disconnects);
                warn!(table, seat, %error, "bot lost its connection");
            }
        }
        live.done.fetch_add(1, Relaxed);
        live.changed.notify_waiters();
    }

    async fn play(self) -> Result<(), BotError> {
        let connected = {
            let _permit = self.gate.acquire().await;
            bot::connect(&self.url).await
        };
        let ws = match connected {
            Ok(ws) => ws,
            Err(error) => {
                Window::bump(&self.settings.window.counters.connect_failures);
                warn!(url = self.url, %error, "cannot connect");
                return Ok(());
            }
        };
        let seated = SeatedSignal(Arc::clone(&self.live), Signal::Seated);
        let played = SeatedSignal(Arc::clone(&self.live), Signal::Played);
        match self.target {
            Target::Server => {
                ServerBot::new(ws, self.settings, self.group, self.seat, self.stop)
                    .with_seated_signal(seated)
                    .with_done_signal(played)
                    .run()
                    .await
            }
            Target::Relay => {
                RelayBot::new(
                    ws,
                    self.settings,
                    self.group,
                    self.seat,
                    self.actors,
                    self.frame_bytes,
                    self.stop,
                )
                .with_seated_signal(seated)
                .run()
                .await
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Seated,
    Played,
}

/// Tells the fleet that a bot has taken its seat, or has played all its games.
#[derive(Debug)]
pub struct SeatedSignal(Arc<Live>, Signal);

impl SeatedSignal {
    /// It happened.
    pub fn fire(&self) {
        let counter = match self.1 {
            Signal::Seated => &self.0.seated,
            Signal::Played => &self.0.played,
        };
        counter.fetch_add(1, Relaxed);
        self.0.changed.notify_waiters();
    }
}
