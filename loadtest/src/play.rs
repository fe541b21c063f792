//! A whole run in this process, for tests: `tables` tables of `seats` bots each play `games`
//! games to the end against one server or a cluster (a list of URLs, the bots of a table
//! spread over them and failing over from one to the next), and [`play`] returns what
//! happened: each table's winner, the errors the server answered, the seats taken back after
//! a broken connection, and the [`Witness`] of every event the bots received.
//!
//! The tables are set up as in every run ([`crate::fleet`]): each table's first bot creates
//! it and hosts it, the others join. The run stops by itself: every bot must be seated within
//! the setup timeout and have played within the overall patience, or [`play`] stops the bots
//! and returns an error (carrying what was seen so far) rather than hang.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use grand_melee_protocol::{PlayerId, Standing, TableId};

use crate::bot::{RESUME_ATTEMPTS, TableOptions};
use crate::fleet::{Fleet, FleetConfig, Target};
use crate::stats::Counts;
use crate::witness::Witness;

/// How long the bots may take to leave once their games are done before they are aborted.
const CLOSE_PATIENCE: Duration = Duration::from_secs(30);

/// What [`play`] runs.
#[derive(Debug, Clone)]
pub struct PlayConfig {
    /// The server's URLs, one per node of a cluster: `ws://host:port` (a trailing `/ws` is
    /// allowed). Bot `k` of table `t` starts at `urls[(t + k) % n]`.
    pub urls: Vec<String>,
    /// Tables.
    pub tables: usize,
    /// Seats per table, every one a bot (2–40).
    pub seats: u8,
    /// Games each table plays (at least 1); each game is at a new table.
    pub games: u32,
    /// Starting life (1–1000): higher makes longer games.
    pub starting_life: i32,
    /// Spell range (1–4).
    pub spell_range: u8,
    /// Mean think time before each game move (each draw is 0.5–1.5× this).
    pub think: Duration,
    /// Probability that a move is a chat line instead.
    pub chat_chance: f64,
    /// The run's seed (the bots' choices).
    pub seed: u64,
    /// The tables' rules, dice and mulligans.
    pub options: TableOptions,
    /// Whether every bot also compares its mirror with a snapshot every 50 batches.
    pub mirror_check: bool,
    /// How many times a bot tries to take its seat back after its connection broke in the
    /// middle of a game.
    pub resume_attempts: u32,
    /// Longest time until every bot is seated with the game under way.
    pub setup_timeout: Duration,
    /// Longest time for the whole run, from the start until every bot has played its games
    /// (the setup included).
    pub patience: Duration,
    /// Where the bots record every event they receive. Pass your own to watch the run while
    /// it goes ([`Witness::wait_until`]); [`PlayOutcome::witness`] is this one.
    pub witness: Arc<Witness>,
}

impl Default for PlayConfig {
    fn default() -> Self {
        Self {
            urls: vec!["ws://127.0.0.1:7878".into()],
            tables: 1,
            seats: 15,
            games: 1,
            starting_life: 20,
            spell_range: 2,
            think: Duration::from_millis(30),
            chat_chance: 0.05,
            seed: 1,
            options: TableOptions::default(),
            mirror_check: false,
            resume_attempts: RESUME_ATTEMPTS,
            setup_timeout: Duration::from_secs(60),
            patience: Duration::from_secs(300),
            witness: Arc::new(Witness::new()),
        }
    }
}

/// One game of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOutcome {
    /// The table's index in the run.
    pub index: usize,
    /// The game's number at that index (0 for the first game).
    pub generation: u32,
    /// The table the game was played at, once created.
    pub table: Option<TableId>,
    /// Whether a bot saw the game end (`game_over`).
    pub finished: bool,
    /// Everyone in first place at the end.
    pub winners: Vec<PlayerId>,
    /// The final standings, best place first (as the first bot to see the end saw them).
    pub standings: Vec<Standing>,
    /// Bots that saw the game end.
    pub reports: usize,
    /// Bots that saw other standings than the first (must be 0).
    pub disagreements: usize,
}

impl TableOutcome {
    /// The winner, if the game ended with exactly one player in first place.
    pub fn winner(&self) -> Option<PlayerId> {
        match self.winners.as_slice() {
            [winner] => Some(*winner),
            _ => None,
        }
    }
}

/// What [`play`] saw.
#[derive(Debug, Clone)]
pub struct PlayOutcome {
    /// Every game of every table, by index then generation.
    pub tables: Vec<TableOutcome>,
    /// Bots in the run.
    pub bots: usize,
    /// Whether every bot played all its games to the end.
    pub all_finished: bool,
    /// Whether every bot closed its connection in time afterwards.
    pub all_closed: bool,
    /// `error` answers the server gave to the bots' requests (resume refusals while a node
    /// takes a table over are not among them: they are in `counts.resume_retries`).
    pub errors: u64,
    /// Those errors by code.
    pub error_codes: BTreeMap<String, u64>,
    /// Seats taken back with `resume` after a broken connection.
    pub reconnects: u64,
    /// Everything the bots counted.
    pub counts: Counts,
    /// Every event the bots received.
    pub witness: Arc<Witness>,
    /// How long the run took.
    pub elapsed: Duration,
}

impl PlayOutcome {
    /// A few lines for a test's failure message.
    pub fn summary(&self) -> String {
        let c = &self.counts;
        let mut out = format!(
            "{} bots, all finished: {}, all closed: {}, {:.1} s; {} errors {:?}, {} reconnects \
             ({} resume retries), {} table moves, {} lost requests, {} disconnects, {} connect \
             failures, {} gaps, {} mirror mismatches, {} witness conflicts\n",
            self.bots,
            self.all_finished,
            self.all_closed,
            self.elapsed.as_secs_f64(),
            self.errors,
            self.error_codes,
            self.reconnects,
            c.resume_retries,
            c.table_moves,
            c.lost_requests,
            c.disconnects,
            c.connect_failures,
            c.gaps,
            c.mirror_mismatches,
            self.witness.conflicts().len(),
        );
        for t in &self.tables {
            out.push_str(&format!(
                "table {}.{} {:?}: finished {}, winners {:?}, {} reports, {} disagreements\n",
                t.index, t.generation, t.table, t.finished, t.winners, t.reports, t.disagreements
            ));
        }
        out
    }
}

/// Why [`play`] gave up; each carries what was seen until then.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// No URL to play at.
    #[error("no server URL to play at")]
    NoUrl,
    /// Not every bot was seated with its game under way in time.
    #[error("only {seated} of {bots} bots seated within {waited:?}")]
    Setup {
        /// Bots seated.
        seated: u64,
        /// Bots in the run.
        bots: u64,
        /// How long the setup waited.
        waited: Duration,
        /// What was seen.
        outcome: Box<PlayOutcome>,
    },
    /// Not every bot played its games within the patience.
    #[error("only {played} of {bots} bots played their games within {waited:?}")]
    Patience {
        /// Bots done with their games.
        played: u64,
        /// Bots in the run.
        bots: u64,
        /// How long the run waited.
        waited: Duration,
        /// What was seen.
        outcome: Box<PlayOutcome>,
    },
}

impl PlayError {
    /// What was seen before giving up, if the bots ran.
    pub fn outcome(&self) -> Option<&PlayOutcome> {
        match self {
            Self::NoUrl => None,
            Self::Setup { outcome, .. } | Self::Patience { outcome, .. } => Some(outcome),
        }
    }
}

/// Runs `config.tables` tables of `config.seats` bots in this process against
/// `config.urls` until every table has played `config.games` games to the end, then stops
/// the bots and returns what they saw. Never waits longer than the setup timeout for the
/// seating, nor than the patience for the whole run (plus half a minute for the bots to
/// leave): it returns [`PlayError`] instead. Bots that end early (an error they cannot get
/// past) do not make it wait; [`PlayOutcome::all_finished`] is then false.
pub async fn play(config: PlayConfig) -> Result<PlayOutcome, PlayError> {
    let started = Instant::now();
    let fleet_config = FleetConfig {
        base_url: config.urls.join(","),
        target: Target::Server,
        tables: config.tables,
        first_table: 0,
        seats: config.seats,
        think: config.think,
        seed: config.seed,
        games: Some(config.games.max(1)),
        spell_range: config.spell_range,
        starting_life: config.starting_life,
        chat_chance: config.chat_chance.clamp(0.0, 1.0),
        mirror_check: config.mirror_check,
        options: config.options,
        resume_attempts: config.resume_attempts,
        ..FleetConfig::default()
    };
    if fleet_config.base_urls().is_empty() {
        return Err(PlayError::NoUrl);
    }
    let fleet = Fleet::launch_with_witness(fleet_config, Some(Arc::clone(&config.witness)));
    let bots = fleet.bots() as u64;
    let setup = config.setup_timeout.min(config.patience);
    let seated = fleet.seated(setup).await;
    let live = fleet.live();
    let seated_now = live.seated.load(Relaxed);
    let setup_stuck = !seated && seated_now + live.unseated.load(Relaxed) < bots;
    let mut played_all = false;
    let mut patience_over = false;
    if !setup_stuck {
        let rest = config.patience.saturating_sub(started.elapsed());
        played_all = fleet.played(rest).await;
        patience_over =
            !played_all && live.played.load(Relaxed) + live.unplayed.load(Relaxed) < bots;
    }
    let played_now = live.played.load(Relaxed);
    let waited = started.elapsed();
    let outcome = finish(fleet, &config, played_all, started).await;
    if setup_stuck {
        return Err(PlayError::Setup {
            seated: seated_now,
            bots,
            waited,
            outcome: Box::new(outcome),
        });
    }
    if patience_over {
        return Err(PlayError::Patience {
            played: played_now,
            bots,
            waited,
            outcome: Box::new(outcome),
        });
    }
    Ok(outcome)
}

/// Stops the bots, waits for them to leave, and gathers what they saw.
async fn finish(
    fleet: Fleet,
    config: &PlayConfig,
    all_finished: bool,
    started: Instant,
) -> PlayOutcome {
    let bots = fleet.bots();
    let groups = fleet.groups().to_vec();
    fleet.stop();
    let (window, all_closed) = fleet.join_within(CLOSE_PATIENCE).await;
    let games = config.games.max(1);
    let mut tables = Vec::new();
    for group in &groups {
        let records = group.games();
        let announced = *group.table.borrow();
        for generation in 0..games {
            tables.push(match records.get(&generation) {
                Some(record) => TableOutcome {
                    index: group.index,
                    generation,
                    table: Some(record.table),
                    finished: true,
                    winners: record.winners(),
                    standings: record.standings.clone(),
                    reports: record.reports,
                    disagreements: record.disagreements,
                },
                None => TableOutcome {
                    index: group.index,
                    generation,
                    table: announced
                        .filter(|(g, _)| *g == generation)
                        .map(|(_, table)| table),
                    finished: false,
                    winners: Vec::new(),
                    standings: Vec::new(),
                    reports: 0,
                    disagreements: 0,
                },
            });
        }
    }
    PlayOutcome {
        tables,
        bots,
        all_finished,
        all_closed,
        errors: window.counts.errors,
        error_codes: window.error_codes,
        reconnects: window.counts.reconnects,
        counts: window.counts,
        witness: Arc::clone(&config.witness),
        elapsed: started.elapsed(),
    }
}
