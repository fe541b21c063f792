//! A fleet: every bot of one process, table by table, against the server or the relay. It is
//! launched, steered while it runs (think time, measurement windows) and stopped.
//!
//! Against a cluster, the fleet is given every node's URL (comma-separated): the bots of a
//! table are spread over them, bot `k` of table `t` starting at URL `(t + k) mod n`, so that
//! the players of one table sit on different nodes, and each bot fails over to the next URL
//! when its connection breaks in the middle of a game.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::warn;

use crate::bot::{BotSettings, Group, RESUME_ATTEMPTS, ServerBot, TableOptions, ThinkTime};
use crate::colyseus;
use crate::link::{self, BotError};
use crate::live::{Live, SeatedSignal, Signal};
use crate::relay_bot::{Framing, RelayBot};
use crate::stats::{Window, WindowData};
use crate::witness::Witness;

/// What the bots talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The Grand Melee server (`/ws`), playing real games.
    Server,
    /// The bare relay (`/relay/<table>`), the same traffic shape without the game.
    Relay,
    /// The floor (`/relay/<table>`): the relay's protocol, delivered by one thread with bare
    /// `write` calls, the cost of the kernel alone.
    Floor,
    /// Colyseus 0.16 (`loadtest/colyseus/server.js`): a room per table that broadcasts every
    /// message to the whole room, the relay's traffic in Colyseus's protocol.
    Colyseus,
}

impl Target {
    /// The target's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Relay => "relay",
            Self::Floor => "floor",
            Self::Colyseus => "colyseus",
        }
    }
}

/// Starting simultaneous turns of a table: ⌊seats / (2R + 2)⌋, at least one.
pub fn starting_turns(seats: u8, spell_range: u8) -> usize {
    (usize::from(seats) / (2 * usize::from(spell_range) + 2)).max(1)
}

/// Everything a fleet needs to know.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetConfig {
    /// `ws://host:port` of the server or relay (the path is added per target); against a
    /// cluster, every node's, comma-separated ([`FleetConfig::base_urls`]).
    pub base_url: String,
    /// Server, relay or floor.
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
    /// How many times a bot tries to take its seat back after its connection broke in the
    /// middle of a game (0: never).
    #[serde(default = "default_resume_attempts")]
    pub resume_attempts: u32,
    /// The certificate (PEM file) `wss://` URLs are trusted with: the bench's own, with
    /// `--tls`; `None`: `ws://` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Several server URLs (a cluster's nodes): every bot of a table starts at the node its
    /// table was created on (`table mod n`, its owner) instead of spreading over the nodes.
    #[serde(default)]
    pub at_owner: bool,
    /// Whether a bot told by `served_at` where its table's owner is moves there (cluster
    /// mode); `false`: every bot stays where it started, its requests carried by that node.
    #[serde(default = "default_follow_served_at")]
    pub follow_served_at: bool,
}

fn default_follow_served_at() -> bool {
    true
}

fn default_resume_attempts() -> u32 {
    RESUME_ATTEMPTS
}

/// One base URL as the fleet uses it: no spaces, no trailing `/`, and no `/ws` (the bots add
/// the path of their target).
fn normalize_base_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    url.strip_suffix("/ws").unwrap_or(url).to_owned()
}

impl FleetConfig {
    /// The base URLs: `base_url` split at commas, each without a trailing `/` or `/ws`; empty
    /// entries are skipped.
    pub fn base_urls(&self) -> Vec<String> {
        self.base_url
            .split(',')
            .map(normalize_base_url)
            .filter(|url| !url.is_empty())
            .collect()
    }

    /// The URLs bot `seat` of table `table` may use, and the one it starts at. At the server:
    /// every node's `/ws`, starting at `(table + seat) mod n`. At the relay, one group lives in
    /// one relay process: the table's URL only, `table mod n`. At Colyseus, the base URL itself
    /// (the bot asks the matchmaker for its table's room).
    pub fn bot_urls(&self, table: usize, seat: usize) -> (Vec<String>, usize) {
        let mut bases = self.base_urls();
        if bases.is_empty() {
            bases.push(normalize_base_url(&self.base_url));
        }
        let n = bases.len();
        match self.target {
            Target::Server => (
                bases.iter().map(|base| format!("{base}/ws")).collect(),
                if self.at_owner {
                    table % n
                } else {
                    (table + seat) % n
                },
            ),
            Target::Relay | Target::Floor => {
                (vec![format!("{}/relay/{table}", bases[table % n])], 0)
            }
            Target::Colyseus => (vec![bases[table % n].clone()], 0),
        }
    }
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
            resume_attempts: RESUME_ATTEMPTS,
            ca_cert: None,
            at_owner: false,
            follow_served_at: true,
        }
    }
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
    groups: Vec<Arc<Group>>,
}

impl Fleet {
    /// Starts every bot; they connect (a few at a time), sit down and play.
    pub fn launch(config: FleetConfig) -> Self {
        Self::launch_with_witness(config, None)
    }

    /// [`Fleet::launch`], every bot feeding `witness` (if any) with every event it receives.
    pub fn launch_with_witness(config: FleetConfig, witness: Option<Arc<Witness>>) -> Self {
        let window = Arc::new(Window::default());
        let think = Arc::new(ThinkTime::new(config.think));
        let live = Arc::new(Live::default());
        let stop = CancellationToken::new();
        // One client configuration for every bot of the process (its session cache shared).
        let tls =
            config
                .ca_cert
                .as_deref()
                .and_then(|path| match crate::tls::client_config(path) {
                    Ok(tls) => Some(tls),
                    Err(error) => {
                        warn!(%error, "no certificate to trust: wss:// connections will fail");
                        None
                    }
                });
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
            witness,
            resume_attempts: config.resume_attempts,
            tls,
            follow_served_at: config.follow_served_at,
        });
        let gate = Arc::new(Semaphore::new(config.connect_concurrency.max(1)));
        let seats = usize::from(config.seats);
        let actors = starting_turns(config.seats, config.spell_range);
        let mut tasks = JoinSet::new();
        let mut groups = Vec::new();
        for table in config.first_table..config.first_table + config.tables {
            let group = Arc::new(Group::new(table, seats, Arc::clone(&window)));
            groups.push(Arc::clone(&group));
            for seat in 0..seats {
                let (urls, first) = config.bot_urls(table, seat);
                let spec = BotSpec {
                    urls: urls.into(),
                    first,
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
            groups,
        }
    }

    /// The groups of bots, one per table, in order.
    pub fn groups(&self) -> &[Arc<Group>] {
        &self.groups
    }

    /// Bots in this fleet.
    pub fn bots(&self) -> usize {
        self.config.tables * usize::from(self.config.seats)
    }

    /// Seated and finished bots.
    pub fn live(&self) -> &Live {
        &self.live
    }

    /// Waits until every bot has taken its seat (or finished without), or until `patience`
    /// is over; returns whether every bot did.
    pub async fn seated(&self, patience: Duration) -> bool {
        let bots = self.bots() as u64;
        let all = async {
            loop {
                let changed = self.live.changed();
                let (seated, never) = (
                    self.live.seated.load(Relaxed),
                    self.live.unseated.load(Relaxed),
                );
                if seated + never >= bots {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(patience, all).await.is_ok() && self.live.seated.load(Relaxed) >= bots
    }

    /// Waits until every bot has played all its games (or finished without), or until
    /// `patience` is over; returns whether every bot played them all.
    pub async fn played(&self, patience: Duration) -> bool {
        let bots = self.bots() as u64;
        let all = async {
            loop {
                let changed = self.live.changed();
                let (played, never) = (
                    self.live.played.load(Relaxed),
                    self.live.unplayed.load(Relaxed),
                );
                if played + never >= bots {
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

    /// [`Fleet::join`] for at most `patience`; bots still running then are aborted. Returns
    /// the last window and whether every bot finished in time.
    pub async fn join_within(mut self, patience: Duration) -> (WindowData, bool) {
        let all = async { while self.tasks.join_next().await.is_some() {} };
        let in_time = tokio::time::timeout(patience, all).await.is_ok();
        if !in_time {
            self.tasks.shutdown().await;
        }
        (self.window.take(), in_time)
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
    /// The URLs it may use (failing over from one to the next).
    urls: Arc<[String]>,
    /// The one it connects to first.
    first: usize,
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
        let seated = SeatedSignal::new(Arc::clone(&live), Signal::Seated);
        let played = SeatedSignal::new(Arc::clone(&live), Signal::Played);
        let (was_seated, has_played) = (seated.fired_flag(), played.fired_flag());
        let result = self.play(seated, played).await;
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
        if !was_seated.load(Relaxed) {
            live.unseated.fetch_add(1, Relaxed);
        }
        if !has_played.load(Relaxed) {
            live.unplayed.fetch_add(1, Relaxed);
        }
        live.done.fetch_add(1, Relaxed);
        live.notify();
    }

    async fn play(self, seated: SeatedSignal, played: SeatedSignal) -> Result<(), BotError> {
        let url = self.urls.get(self.first).cloned().unwrap_or_default();
        let connected = {
            let _permit = self.gate.acquire().await;
            match self.target {
                Target::Colyseus => {
                    let seats = usize::from(self.settings.seats);
                    colyseus::join(&url, self.group.index, seats).await
                }
                Target::Server | Target::Relay | Target::Floor => {
                    link::connect_tls(&url, self.settings.tls.as_ref()).await
                }
            }
        };
        let ws = match connected {
            Ok(ws) => ws,
            Err(error) => {
                Window::bump(&self.settings.window.counters.connect_failures);
                warn!(url, %error, "cannot connect");
                return Ok(());
            }
        };
        match self.target {
            Target::Server => {
                ServerBot::new(ws, self.settings, self.group, self.seat, self.stop)
                    .with_urls(self.urls, self.first)
                    .with_seated_signal(seated)
                    .with_done_signal(played)
                    .run()
                    .await
            }
            Target::Relay | Target::Floor | Target::Colyseus => {
                let framing = if self.target == Target::Colyseus {
                    Framing::Colyseus
                } else {
                    Framing::Bare
                };
                RelayBot::new(
                    ws,
                    self.settings,
                    self.group,
                    self.seat,
                    self.actors,
                    self.frame_bytes,
                    self.stop,
                )
                .with_framing(framing)
                .with_seated_signal(seated)
                .run()
                .await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bots_of_a_table_are_spread_over_the_urls() {
        let config = FleetConfig {
            base_url: " ws://a:1/ , ws://b:2/ws,,ws://c:3".into(),
            ..FleetConfig::default()
        };
        assert_eq!(config.base_urls(), ["ws://a:1", "ws://b:2", "ws://c:3"]);
        let (urls, first) = config.bot_urls(1, 0);
        assert_eq!(urls, ["ws://a:1/ws", "ws://b:2/ws", "ws://c:3/ws"]);
        assert_eq!(first, 1);
        let starts: Vec<usize> = (0..4).map(|seat| config.bot_urls(2, seat).1).collect();
        assert_eq!(
            starts,
            [2, 0, 1, 2],
            "bot k of table t starts at (t + k) mod n"
        );
        let at_owner = FleetConfig {
            at_owner: true,
            ..config.clone()
        };
        let starts: Vec<usize> = (0..4).map(|seat| at_owner.bot_urls(2, seat).1).collect();
        assert_eq!(
            starts,
            [2, 2, 2, 2],
            "at the owner: every bot of table t at t mod n"
        );

        let relay = FleetConfig {
            target: Target::Relay,
            ..config.clone()
        };
        assert_eq!(
            relay.bot_urls(4, 3),
            (vec!["ws://b:2/relay/4".to_owned()], 0)
        );
        let colyseus = FleetConfig {
            target: Target::Colyseus,
            ..config.clone()
        };
        assert_eq!(
            colyseus.bot_urls(4, 3),
            (vec!["ws://b:2".to_owned()], 0),
            "the matchmaker finds the table's room"
        );

        let single = FleetConfig {
            base_url: "ws://127.0.0.1:7878/".into(),
            ..FleetConfig::default()
        };
        assert_eq!(
            single.bot_urls(5, 7),
            (vec!["ws://127.0.0.1:7878/ws".to_owned()], 0),
            "one URL: as before"
        );
    }
}
