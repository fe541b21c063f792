//! The command line of `grand-melee-loadtest`: `bots`, `relay`, `floor`, `bench` (and the
//! hidden `worker` that `bench` starts). Everything runs here; `main` only parses and prints.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use tokio::io::BufReader;

use crate::bench::{self, BenchConfig, Machine};
use crate::bot::{RESUME_ATTEMPTS, TableOptions};
use crate::fleet::{Fleet, FleetConfig, Target};
use crate::floor::{Floor, FloorConfig};
use crate::procfs;
use crate::progress::Progress;
use crate::relay::{Relay, RelayConfig};
use crate::report::{self, StepResult, TargetResult};
use crate::stats::{Counts, WindowData};
use grand_melee_protocol::{GameKind, MulliganMode, RuleSet};

/// Bots that play whole Grand Melee games over WebSockets, and a benchmark of the server
/// against a bare fan-out relay, the kernel's own floor and Colyseus.
#[derive(Debug, Parser)]
#[command(name = "grand-melee-loadtest", version, about, long_about = None)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: CliCommand,

    /// Log filter for the harness's own messages (on stderr).
    #[arg(long, global = true, env = "GM_LOADTEST_LOG", default_value = "warn")]
    pub log: String,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Run bots against a server (or a relay or floor) that is already running, and print
    /// what they measured.
    Bots(BotsArgs),
    /// Run the bare fan-out relay: every frame a client sends to `/relay/<group>` goes to every
    /// connection of the group.
    Relay(RelayArgs),
    /// Run the floor: the relay's protocol, delivered by one thread with bare `write` calls
    /// (no runtime, no WebSocket library), the cost of the kernel alone.
    Floor(FloorArgs),
    /// Start the server, the relay, the floor and Colyseus in rounds, run the same load
    /// against each (bots in worker processes), find each one's capacity, and print the ratios
    /// with their spread over the rounds.
    #[command(long_about = BENCH_ABOUT)]
    Bench(BenchArgs),
    /// One bot process of a benchmark, steered over stdin/stdout (started by `bench`).
    #[command(hide = true)]
    Worker(WorkerArgs),
}

/// The shape of the load: tables, seats and how the bots play.
#[derive(Debug, Clone, Args)]
pub struct ShapeArgs {
    /// Tables (each fully seated by bots).
    #[arg(long, env = "GM_LOADTEST_TABLES", default_value_t = 10)]
    pub tables: usize,

    /// Seats per table (15–40).
    #[arg(long, env = "GM_LOADTEST_SEATS", default_value_t = 40,
          value_parser = clap::value_parser!(u8).range(15..=40))]
    pub seats: u8,

    /// Seed of the bots' choices and of the tables' seating.
    #[arg(long, env = "GM_LOADTEST_SEED", default_value_t = 1)]
    pub seed: u64,

    /// Spell range of the tables (1–4).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub spell_range: u8,

    /// Starting life at the tables (1–1000). Higher makes longer games.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i32).range(1..=1000))]
    pub starting_life: i32,

    /// Probability that a move is a chat line instead (0–1).
    #[arg(long, default_value_t = 0.05)]
    pub chat_chance: f64,

    /// Connections opened at once while connecting.
    #[arg(long, default_value_t = 128)]
    pub connect_concurrency: usize,

    /// The tables' rules: `seed` or `cr807` (range 1, a turn marker per four players).
    #[arg(long, default_value = "seed", value_parser = parse_rules)]
    pub rules: RuleSet,

    /// Combat with Dice at the tables: the bots roll their attacks.
    #[arg(long)]
    pub combat_dice: bool,

    /// Everyone decides on mulligans at once instead of one at a time.
    #[arg(long)]
    pub simultaneous_mulligans: bool,

    /// Probability that a bot takes an extra turn as its turn begins (0–1).
    #[arg(long, default_value_t = 0.0)]
    pub extra_turn_chance: f64,

    /// The host bot of each finished game checks its dice (seating, first player, every d20)
    /// against the revealed secret; mismatches are counted (and must be 0).
    #[arg(long)]
    pub verify_dice: bool,
}

/// A `--rules` that names neither rule set (what was typed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: the rules are `seed` or `cr807`")]
pub struct UnknownRules(pub String);

fn parse_rules(text: &str) -> Result<RuleSet, UnknownRules> {
    match text {
        "seed" => Ok(RuleSet::Seed),
        "cr807" => Ok(RuleSet::Cr807),
        other => Err(UnknownRules(other.to_owned())),
    }
}

impl ShapeArgs {
    fn fleet(&self, base_url: String, target: Target, think_ms: f64) -> FleetConfig {
        FleetConfig {
            base_url,
            target,
            tables: self.tables,
            first_table: 0,
            seats: self.seats,
            think: Duration::from_secs_f64(think_ms.max(0.0) / 1000.0),
            seed: self.seed,
            games: None,
            spell_range: self.spell_range,
            starting_life: self.starting_life,
            chat_chance: self.chat_chance.clamp(0.0, 1.0),
            mirror_check: false,
            relay_frame_bytes: 96,
            connect_concurrency: self.connect_concurrency,
            options: TableOptions {
                rules: self.rules,
                combat_dice: self.combat_dice,
                mulligan: if self.simultaneous_mulligans {
                    MulliganMode::Simultaneous
                } else {
                    MulliganMode::Paris
                },
                extra_turn_chance: self.extra_turn_chance.clamp(0.0, 1.0),
                verify_dice: self.verify_dice,
            },
            resume_attempts: RESUME_ATTEMPTS,
            ca_cert: None,
            at_owner: false,
            follow_served_at: true,
        }
    }
}

/// `bots`: bots against a running server or relay.
#[derive(Debug, Clone, Args)]
pub struct BotsArgs {
    /// Base address of the server or relay (the bots add `/ws` or `/relay/<table>`). Against
    /// a cluster, every node's, comma-separated: the bots of a table are spread over them
    /// (bot k of table t at URL (t + k) mod n), and a bot whose connection breaks in the
    /// middle of a game resumes its seat at the next URL. With the relay, each table's bots
    /// use URL t mod n.
    #[arg(long, env = "GM_LOADTEST_URL", default_value = "ws://127.0.0.1:7878")]
    pub url: String,

    /// What the bots talk to.
    #[arg(long, value_enum, default_value_t = Target::Server)]
    pub target: Target,

    /// The shape of the load.
    #[command(flatten)]
    pub shape: ShapeArgs,

    /// Mean think time before each move, ms (each draw is 0.5–1.5× this).
    #[arg(long, env = "GM_LOADTEST_THINK_MS", default_value_t = 500.0)]
    pub think_ms: f64,

    /// Longest run after every bot is seated, s; the bots then leave and close.
    #[arg(long, env = "GM_LOADTEST_DURATION", default_value_t = 60)]
    pub duration_secs: u64,

    /// Games per table; the run ends when every table has played them (or at the duration).
    /// Without it, tables start a new game after each one until the duration is over.
    #[arg(long)]
    pub games: Option<u32>,

    /// Longest time to seat every bot, s.
    #[arg(long, default_value_t = 300)]
    pub setup_timeout_secs: u64,

    /// The certificate (PEM) to trust for `wss://` URLs (e.g. a server's self-signed
    /// `--tls-cert`); `wss://` needs it.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// The server's (or relay's) process id, to report its CPU time and memory from /proc.
    #[arg(long)]
    pub server_pid: Option<u32>,

    /// Relay frames' size in bytes (relay, floor and colyseus targets only).
    #[arg(long, default_value_t = 96)]
    pub relay_frame_bytes: usize,

    /// Every bot also asks for a snapshot every 50 event batches and counts any difference
    /// with its own mirror at the same event (extra requests; for checking, not for
    /// benchmarks).
    #[arg(long)]
    pub mirror_check: bool,

    /// Tries a bot makes to take its seat back (connect, `hello`, `resume`) after its
    /// connection broke in the middle of a game, 50 ms more apart each time up to half a
    /// second; 0: the bot stops instead.
    #[arg(long, default_value_t = RESUME_ATTEMPTS)]
    pub resume_attempts: u32,

    /// Runtime threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,

    /// Print the result as JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// The game the tables play: `grand_melee`, `magic_tech` (two bots a table playing
    /// random legal games to the end, as fast as the server answers: `--tables`, `--seed` and
    /// `--deck` apply; the think time, duration and Grand Melee settings do not), or
    /// `mountain_magic` (one bot a table climbing to an ending: `--tables`, `--seed` and
    /// `--day`).
    #[arg(long, value_name = "GAME", default_value = "grand_melee", value_parser = parse_game)]
    pub game: GameKind,

    /// Mountain Magic: every bot climbs today's mountain (the same deal at every table), and
    /// the day's standings are read at the end.
    #[arg(long)]
    pub day: bool,

    /// Magic Tech: the deck size every bot declares (5–60); smaller decks end sooner.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u8).range(
        i64::from(grand_melee_protocol::magic_tech_types::STARTING_HAND)
            ..=i64::from(grand_melee_protocol::magic_tech_types::MAX_DECK)
    ))]
    pub deck: u8,
}

/// A game by its wire name (`grand_melee`, `magic_tech`): the protocol's names, defined once.
fn parse_game(name: &str) -> Result<GameKind, String> {
    serde_json::from_value(serde_json::Value::String(name.to_owned()))
        .map_err(|_| format!("no game called `{name}` (grand_melee, magic_tech, mountain_magic)"))
}

/// `--tls-cert` and `--tls-key` of the relay and the floor.
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// Serve `wss://` (TLS with rustls) with this certificate chain (PEM), with `--tls-key`.
    #[arg(long, requires = "tls_key", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of `--tls-cert`.
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
}

impl TlsArgs {
    fn server_config(
        &self,
    ) -> Result<Option<std::sync::Arc<tokio_rustls::rustls::ServerConfig>>, CliError> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Ok(Some(crate::tls::server_config(cert, key)?)),
            _ => Ok(None),
        }
    }

    fn scheme(&self) -> &'static str {
        if self.tls_cert.is_some() { "wss" } else { "ws" }
    }
}

/// `relay`: the baseline relay.
#[derive(Debug, Clone, Args)]
pub struct RelayArgs {
    /// Address and port to listen on (port 0 picks one; the address is printed).
    #[arg(long, env = "GM_RELAY_LISTEN", default_value = "127.0.0.1:7879")]
    pub listen: SocketAddr,

    /// WebSocket read buffer per connection, bytes (the server's default).
    #[arg(long, default_value_t = 4096)]
    pub read_buffer_bytes: usize,

    /// Frames queued per connection before further ones are dropped.
    #[arg(long, default_value_t = 256)]
    pub queue: usize,

    /// Stop after this many seconds (or at Ctrl-C).
    #[arg(long, default_value_t = 3600)]
    pub duration_secs: u64,

    /// Runtime threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,

    /// TLS (`wss://`).
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// `floor`: the kernel-only baseline.
#[derive(Debug, Clone, Args)]
pub struct FloorArgs {
    /// Address and port to listen on (port 0 picks one; the address is printed).
    #[arg(long, env = "GM_FLOOR_LISTEN", default_value = "127.0.0.1:7880")]
    pub listen: SocketAddr,

    /// Stop after this many seconds.
    #[arg(long, default_value_t = 3600)]
    pub duration_secs: u64,

    /// Bytes a connection may owe (frames it could not take yet) before it is dropped.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_backlog_bytes: usize,

    /// Largest frame a client may send, bytes (the relay's limit).
    #[arg(long, default_value_t = 16 * 1024)]
    pub max_frame_bytes: usize,

    /// Threads reading the HTTP upgrade requests, and with TLS doing the TLS handshakes
    /// (delivery is always one thread).
    #[arg(long, default_value_t = 2)]
    pub handshake_threads: usize,

    /// TLS (`wss://`): the delivery thread encrypts through each socket's own rustls
    /// connection.
    #[command(flatten)]
    pub tls: TlsArgs,
}

const BENCH_ABOUT: &str = "\
Start the server, the relay, the floor and Colyseus in rounds, run the same load against each
(bots in worker processes), find each one's capacity, and print the ratios with their spread
over the rounds.

Colyseus (0.16.5, ws transport, one process: `node server.js`, one \"fanout\" room per table)
needs Node.js >= 20 and npm (apt-get install -y nodejs npm). On first use the bench writes its
package.json, package-lock.json and server.js to $XDG_CACHE_HOME/grand-melee-loadtest/
colyseus-0.16.5 (or ~/.cache/...) and runs `npm ci` there (again when the lock changed).

Each round runs every target once (the server first), each in a fresh process with fresh bots:
a reference step at --cpu-think-ms, any --think-ms steps, then up to --probes probes of a
search on the think time for the highest deliveries/s with p99 action -> last delivery under
50 ms: --think-max-ms first (when the reference step is there, as by default, it is the first
probe), then --think-min-ms; a target still within the bound there gets twice the load at each
probe until one fails; then bisection until the lightest failing and the heaviest passing
think times are within 5 %. Beside each capacity: the bots' CPU and the machine's idle share
at that probe (under 10 % idle, the figure is the harness's ceiling as much as the target's). Every step is a warm-up and a measured
window. Before each round, the latency of 4 KiB appends + fdatasync is measured in the
directory that holds the server's data directory.

With --tls the run is over wss://: a fresh self-signed certificate for 127.0.0.1 and localhost,
the server (--tls-cert/--tls-key), the relay and the floor terminating TLS with rustls, the bots
trusting that certificate alone. Colyseus is measured on ws only (refused with --tls).

Duration: at most rounds x targets x (seating + (probes + fixed steps) x (warm-up + step)),
plus one step per target if the reference is not the first probe. With the defaults (3 rounds,
4 targets, at most 10 probes, 4 + 10 s) that is at most 1,680 s of steps, plus the seating:
under 30 minutes at 400 tables x 40 seats (about 25 s to seat 16,000 bots). A target whose
limit lies between 2000 and 700 ms needs 7 probes (the two ends, then 5 halvings of the
bracket: (2000/700)^(1/32), about 3 %); one past 700 ms needs one more per doubling of the
load.";

/// `bench`: server, relay, floor and Colyseus.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// The shape of the load.
    #[command(flatten)]
    pub shape: ShapeArgs,

    /// Rounds: each runs every target once, in a fresh process with fresh bots; the ratios are
    /// given per round, with their median and spread.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,

    /// Colyseus's ping sweep, ms: every this often its WebSocket transport pings every client
    /// at once (its `pingInterval`; 3000, Colyseus's default; 0: off). With 16,000 clients the
    /// sweep holds the process for ~150 ms (BENCHMARKS.md, "Performance, round 3").
    #[arg(long, default_value_t = 3000)]
    pub colyseus_ping_ms: u64,

    /// How the cost grows: table counts to run (comma-separated, e.g. `40,100,200,400` for
    /// 1,600 to 16,000 seats of 40). Each round runs every size in turn (interleaved), each in a
    /// fresh process; the summary compares CPU per delivery and RSS per seat across the sizes
    /// at the reference step. `--tables` is then not used; `--probes 1` skips the capacity
    /// search.
    #[arg(long, value_delimiter = ',', value_name = "TABLES")]
    pub growth: Vec<usize>,

    /// Think time of the reference step, ms: CPU per delivery, latency and the bots' CPU are
    /// compared there.
    #[arg(long, default_value_t = 2000.0)]
    pub cpu_think_ms: f64,

    /// The capacity search's light end (probed first), ms: over the bound there, the capacity
    /// is "none".
    #[arg(long, default_value_t = 2000.0)]
    pub think_max_ms: f64,

    /// The capacity search's heavy end (probed second), ms: within the bound there, the
    /// search goes on with twice the load at each probe until one fails.
    #[arg(long, default_value_t = 700.0)]
    pub think_min_ms: f64,

    /// Probes of the capacity search per target and round, at most (the two ends, doublings
    /// of the load past the heavy end, then bisection by the geometric mean until the bracket
    /// is within 5 %); a search whose probes run out before any failed gives a lower bound (≥).
    #[arg(long, default_value_t = 10)]
    pub probes: usize,

    /// Extra fixed steps after the reference step, think times in ms (comma-separated; none by
    /// default).
    #[arg(long, value_delimiter = ',')]
    pub think_ms: Vec<f64>,

    /// Measured seconds per step.
    #[arg(long, default_value_t = 10)]
    pub step_secs: u64,

    /// Warm-up seconds before each step's measurement.
    #[arg(long, default_value_t = 4)]
    pub warmup_secs: u64,

    /// Frame size of the relay, the floor and Colyseus when the server does not run, bytes
    /// (otherwise they take the server's mean broadcast of the same round).
    #[arg(long, default_value_t = 96)]
    pub relay_frame_bytes: usize,

    /// Appends of 4 KiB + fdatasync per fsync measurement (before each round; 0: none).
    #[arg(long, default_value_t = 200)]
    pub fsync_samples: usize,

    /// Worker processes for the bots (each must stay under the open-file limit).
    #[arg(long, default_value_t = 2)]
    pub processes: usize,

    /// Runtime threads per worker process.
    #[arg(long, default_value_t = 1)]
    pub worker_threads: usize,

    /// The `grand-melee-server` binary (default: next to this one).
    #[arg(long, env = "GM_SERVER_BIN")]
    pub server_bin: Option<PathBuf>,

    /// An extra flag for the server, e.g. `--server-arg=--outgoing-queue=64` (repeatable).
    #[arg(long, allow_hyphen_values = true)]
    pub server_arg: Vec<String>,

    /// Targets (the server always runs first in a round: the others take its frame size).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "server,relay,floor,colyseus"
    )]
    pub targets: Vec<Target>,

    /// Longest time to seat every bot, s.
    #[arg(long, default_value_t = 300)]
    pub setup_timeout_secs: u64,

    /// Measure over `wss://` instead of `ws://`: the bench makes a fresh self-signed
    /// certificate for 127.0.0.1 and localhost; the server (`--tls-cert`, `--tls-key`), the
    /// relay (tokio-rustls) and the floor (rustls's sans-IO connection on its one delivery
    /// thread) terminate TLS with it, and the bots speak wss with rustls, trusting it alone.
    /// Colyseus is measured on ws only: it is refused with --tls.
    #[arg(long)]
    pub tls: bool,

    /// After each target's capacity search, a window of this many seconds with every bot
    /// seated and nobody acting: the target's resident memory per idle seat and its CPU while
    /// idle (0: no such step).
    #[arg(long, default_value_t = 0)]
    pub idle_secs: u64,

    /// Print the result as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// `worker`: one bot process of a benchmark.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// The fleet's configuration, as JSON.
    #[arg(long)]
    pub config: String,

    /// Runtime threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,

    /// Longest time to seat every bot, s.
    #[arg(long, default_value_t = 300)]
    pub setup_timeout_secs: u64,
}

/// What can go wrong on the command line.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A process or socket failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The benchmark failed.
    #[error("{0}")]
    Bench(#[from] bench::BenchError),
    /// A bad argument.
    #[error("{0}")]
    Usage(String),
    /// The run finished but was not healthy (errors, disconnects, lost broadcasts).
    #[error("the run was not healthy: {0}")]
    Unhealthy(String),
    /// A certificate or key could not be used.
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
}

fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
}

/// Runs a parsed command line; `print` receives the report (and the relay's address).
pub fn run(cli: Cli, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    match cli.command {
        CliCommand::Bots(args) => runtime(args.threads)?.block_on(bots(args, print)),
        CliCommand::Relay(args) => runtime(args.threads)?.block_on(relay(args, print)),
        CliCommand::Floor(args) => floor(&args, print),
        CliCommand::Bench(args) => runtime(1)?.block_on(bench(args, print)),
        CliCommand::Worker(args) => runtime(args.threads)?.block_on(worker(args)),
    }
}

async fn relay(args: RelayArgs, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    let relay = Relay::bind(RelayConfig {
        listen: args.listen,
        read_buffer_bytes: args.read_buffer_bytes,
        queue: args.queue,
        tls: args.tls.server_config()?,
    })
    .await?;
    // The last word of this line is the address (`bench` reads it).
    print(&format!(
        "relay ({}) listening on {}",
        args.tls.scheme(),
        relay.local_addr()?
    ));
    let bound = Duration::from_secs(args.duration_secs);
    relay
        .run(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = tokio::time::sleep(bound) => {}
            }
        })
        .await;
    Ok(())
}

fn floor(args: &FloorArgs, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    let floor = Floor::bind(FloorConfig {
        listen: args.listen,
        max_backlog_bytes: args.max_backlog_bytes,
        max_frame_bytes: args.max_frame_bytes,
        handshake_threads: args.handshake_threads.max(1),
        run_for: Some(Duration::from_secs(args.duration_secs)),
        tls: args.tls.server_config()?,
    })?;
    // The last word of this line is the address (`bench` reads it).
    print(&format!(
        "floor ({}) listening on {}",
        args.tls.scheme(),
        floor.local_addr()?
    ));
    // Stops by itself after the duration (Ctrl-C ends the process).
    floor.start()?.join();
    Ok(())
}

async fn worker(args: WorkerArgs) -> Result<(), CliError> {
    let config: FleetConfig = serde_json::from_str(&args.config)
        .map_err(|e| CliError::Usage(format!("--config: {e}")))?;
    bench::run_worker(
        config,
        Duration::from_secs(args.setup_timeout_secs),
        BufReader::new(tokio::io::stdin()),
        tokio::io::stdout(),
    )
    .await?;
    Ok(())
}

async fn bench(args: BenchArgs, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    check_bench_args(&args)?;
    let self_exe = std::env::current_exe()?;
    let server_bin = match args.server_bin {
        Some(path) => path,
        None => self_exe.with_file_name("grand-melee-server"),
    };
    if !server_bin.exists() && args.targets.contains(&Target::Server) {
        return Err(CliError::Usage(format!(
            "no server binary at {} (build it: cargo build --release -p grand-melee-server, or pass --server-bin)",
            server_bin.display()
        )));
    }
    let config = BenchConfig {
        server_bin,
        server_args: args.server_arg,
        self_exe,
        fleet: FleetConfig {
            relay_frame_bytes: args.relay_frame_bytes,
            ..args
                .shape
                .fleet(String::new(), Target::Server, args.cpu_think_ms)
        },
        rounds: args.rounds,
        targets: args.targets,
        cpu_think_ms: args.cpu_think_ms,
        think_ms: args.think_ms,
        think_max_ms: args.think_max_ms,
        think_min_ms: args.think_min_ms,
        probes: args.probes,
        step: Duration::from_secs(args.step_secs),
        warmup: Duration::from_secs(args.warmup_secs),
        processes: args.processes.max(1),
        worker_threads: args.worker_threads.max(1),
        setup_timeout: Duration::from_secs(args.setup_timeout_secs),
        fsync_samples: args.fsync_samples,
        colyseus_ping_ms: args.colyseus_ping_ms,
        tls: args.tls,
        idle: Duration::from_secs(args.idle_secs),
    };
    if !args.growth.is_empty() {
        return growth(&config, &args.growth, args.json, print).await;
    }
    let result = bench::run(&config).await?;
    if args.json {
        print(&serde_json::to_string_pretty(&result).map_err(std::io::Error::other)?);
    } else {
        let m = &result.machine;
        print(&format!(
            "machine: {} CPUs ({}), {} MiB, Linux {}; bots in {} processes on the same machine",
            m.cpus,
            m.cpu_model,
            m.memory_kib / 1024,
            m.kernel,
            result.processes
        ));
        print(&format!(
            "shape: {} tables x {} seats, starting life {}, over {}; {} round(s); reference think {:.0} ms; capacity search {:.0} -> {:.0} ms in {} probes; steps {:.0} s after {:.0} s of warm-up",
            result.shape.tables,
            result.shape.seats,
            result.shape.starting_life,
            transport(result.tls),
            result.rounds.len(),
            result.cpu_think_ms,
            result.think_max_ms,
            result.think_min_ms,
            result.probes,
            result.step_secs,
            result.warmup_secs
        ));
        for round in &result.rounds {
            print(&report::fsync_text(round.round, round.fsync.as_ref()));
        }
        for round in &result.rounds {
            for target in &round.targets {
                print(&report::target_text(target));
            }
        }
        print(&format!("summary, over {}:", transport(result.tls)));
        print(&report::summary_text(&result.summary));
    }
    Ok(())
}

/// What a bench measured over: `wss` (TLS) or `ws`.
fn transport(tls: bool) -> &'static str {
    if tls {
        "wss (TLS, rustls, every target)"
    } else {
        "ws"
    }
}

/// Checks the benchmark's flags.
/// `bench --growth`: every round runs each size in turn; then how the figures grow.
async fn growth(
    config: &BenchConfig,
    sizes: &[usize],
    json: bool,
    print: &mut dyn FnMut(&str),
) -> Result<(), CliError> {
    let mut runs: Vec<crate::growth::GrowthRun> = Vec::new();
    for round in 1..=config.rounds {
        for &tables in sizes {
            if !json {
                print(&format!(
                    "== growth: round {round} of {}, {tables} tables x {} seats, over {}",
                    config.rounds,
                    config.fleet.seats,
                    transport(config.tls)
                ));
            }
            let mut one = config.clone();
            one.rounds = 1;
            one.fleet.tables = tables;
            let result = bench::run(&one).await?;
            if !json {
                for target in result.rounds.iter().flat_map(|r| &r.targets) {
                    print(&report::target_text(target));
                }
            }
            runs.push(crate::growth::GrowthRun {
                round,
                tables,
                seats: tables * usize::from(config.fleet.seats),
                result,
            });
        }
    }
    let summary = crate::growth::GrowthSummary::new(&runs);
    if json {
        let out = serde_json::json!({ "runs": runs, "summary": summary });
        print(&serde_json::to_string_pretty(&out).map_err(std::io::Error::other)?);
    } else {
        print(&crate::growth::growth_text(&summary));
    }
    Ok(())
}

fn check_bench_args(args: &BenchArgs) -> Result<(), CliError> {
    let usage = |m: String| Err(CliError::Usage(m));
    if let Some(zero) = args.growth.iter().find(|&&tables| tables == 0) {
        return usage(format!(
            "--growth sizes are table counts of at least 1, not {zero}"
        ));
    }
    for (i, tables) in args.growth.iter().enumerate() {
        if args.growth[..i].contains(tables) {
            return usage(format!("--growth names {tables} tables twice"));
        }
    }
    if args.rounds == 0 {
        return usage("--rounds must be at least 1".into());
    }
    if args.probes == 0 {
        return usage("--probes must be at least 1 (the light end)".into());
    }
    if args.targets.is_empty() {
        return usage("--targets needs at least one target".into());
    }
    for (i, target) in args.targets.iter().enumerate() {
        if args.targets[..i].contains(target) {
            return usage(format!("--targets names {} twice", target.name()));
        }
    }
    let positive = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(CliError::Usage(format!(
                "{name} must be a positive number of ms, not {v}"
            )))
        }
    };
    positive("--cpu-think-ms", args.cpu_think_ms)?;
    positive("--think-max-ms", args.think_max_ms)?;
    positive("--think-min-ms", args.think_min_ms)?;
    for &think in &args.think_ms {
        positive("--think-ms", think)?;
    }
    if args.think_min_ms >= args.think_max_ms {
        return usage(format!(
            "--think-min-ms ({}) must be below --think-max-ms ({}): the heavy end of the search has the shorter think time",
            args.think_min_ms, args.think_max_ms
        ));
    }
    if args.step_secs == 0 {
        return usage("--step-secs must be at least 1".into());
    }
    if args.shape.tables == 0 {
        return usage("--tables must be at least 1".into());
    }
    if args.tls && args.targets.contains(&Target::Colyseus) {
        return usage(
            "--tls: Colyseus is measured on ws only; leave it out (--targets server,relay,floor)"
                .into(),
        );
    }
    if args.relay_frame_bytes < crate::relay_bot::KEY_BYTES {
        return usage(format!(
            "--relay-frame-bytes must be at least {} (the frame's key)",
            crate::relay_bot::KEY_BYTES
        ));
    }
    Ok(())
}

/// `bots --game magic_tech`: Magic Tech tables of two bots, each played to the end.
async fn magic_tech_bots(args: &BotsArgs, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    if args.target != Target::Server {
        return Err(CliError::Usage(
            "--game magic_tech plays against the server only".into(),
        ));
    }
    let url = args.url.split(',').next().unwrap_or_default().trim();
    let config = crate::magic_tech_bot::MtConfig {
        url: url.trim_end_matches('/').trim_end_matches("/ws").to_owned(),
        tables: args.shape.tables,
        seed: args.shape.seed,
        deck: args.deck,
        ..crate::magic_tech_bot::MtConfig::default()
    };
    let started = Instant::now();
    let tables = crate::magic_tech_bot::play(&config)
        .await
        .map_err(|e| CliError::Unhealthy(e.to_string()))?;
    let secs = started.elapsed().as_secs_f64();
    let moves: u64 = tables.iter().map(|t| t.moves).sum();
    let races: u64 = tables.iter().map(|t| t.races).sum();
    let ran_out = tables.iter().filter(|t| t.ran_out).count();
    if args.json {
        let report = serde_json::json!({
            "game": "magic_tech",
            "tables": tables.len(),
            "ran_out": ran_out,
            "moves": moves,
            "races": races,
            "secs": secs,
        });
        print(&serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?);
    } else {
        print(&format!(
            "magic_tech: {} tables played to the end in {secs:.2} s ({ran_out} by a stockpile running out, the rest by a concession): {moves} moves, {races} crossed on the wire",
            tables.len()
        ));
    }
    Ok(())
}

/// `bots --game mountain_magic`: Mountain Magic climbs, one bot a table, each to its end.
async fn mountain_magic_bots(args: &BotsArgs, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    if args.target != Target::Server {
        return Err(CliError::Usage(
            "--game mountain_magic plays against the server only".into(),
        ));
    }
    let url = args.url.split(',').next().unwrap_or_default().trim();
    let config = crate::mountain_magic_bot::MmConfig {
        url: url.trim_end_matches('/').trim_end_matches("/ws").to_owned(),
        tables: args.shape.tables,
        seed: args.shape.seed,
        day: args.day,
        ..crate::mountain_magic_bot::MmConfig::default()
    };
    let started = Instant::now();
    let climbs = crate::mountain_magic_bot::play(&config)
        .await
        .map_err(|e| CliError::Unhealthy(e.to_string()))?;
    let secs = started.elapsed().as_secs_f64();
    let moves: u64 = climbs.iter().map(|c| c.moves).sum();
    let battles = climbs.iter().filter(|c| c.ending().is_some()).count();
    // Today's mountain: one deal for all, and the day's standings afterwards.
    let day = if args.day {
        let deals = climbs
            .iter()
            .map(|c| (&c.commitment, &c.bottom_row))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        if deals > 1 {
            return Err(CliError::Unhealthy(format!(
                "today's mountain was dealt {deals} different ways"
            )));
        }
        Some(
            crate::mountain_magic_bot::day_standings(&config.url)
                .await
                .map_err(|e| CliError::Unhealthy(e.to_string()))?,
        )
    } else {
        None
    };
    if args.json {
        let mut report = serde_json::json!({
            "game": "mountain_magic",
            "climbs": climbs.len(),
            "battles": battles,
            "moves": moves,
            "secs": secs,
        });
        if let Some((day, standings, all)) = &day {
            report["day"] = serde_json::json!({
                "day": day,
                "climbers": standings.len(),
                "climbs": all,
            });
        }
        print(&serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?);
    } else {
        print(&format!(
            "mountain_magic: {} climbs played to their endings in {secs:.2} s ({battles} reached the battle's end, the rest failed the climb or conceded): {moves} moves",
            climbs.len()
        ));
        if let Some((day, standings, all)) = &day {
            let best = standings.first().map_or_else(String::new, |c| {
                format!(
                    ", first: {} ({}, {} card(s) left)",
                    c.climber,
                    c.end.name(),
                    c.cards_left
                )
            });
            print(&format!(
                "mountain_magic: today's mountain ({day}), one deal for all: {} climber(s) in the standings, {all} climb(s) finished today{best}",
                standings.len()
            ));
        }
    }
    Ok(())
}

/// What `bots` reports.
#[derive(Debug, Serialize)]
struct BotsReport {
    machine: Machine,
    config: FleetConfig,
    setup_secs: f64,
    seated: u64,
    run: StepResult,
    totals: Counts,
}

async fn bots(args: BotsArgs, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    if args.game == GameKind::MagicTech {
        return magic_tech_bots(&args, print).await;
    }
    if args.game == GameKind::MountainMagic {
        return mountain_magic_bots(&args, print).await;
    }
    if args.day {
        return Err(CliError::Usage(
            "--day climbs today's mountain: add --game mountain_magic".into(),
        ));
    }
    if args.game != GameKind::GrandMelee {
        return Err(CliError::Usage(format!(
            "--game {}: the bots do not play it yet (grand_melee, magic_tech, mountain_magic)",
            args.game.name()
        )));
    }
    let mut config = args
        .shape
        .fleet(args.url.clone(), args.target, args.think_ms);
    if config.base_urls().is_empty() {
        return Err(CliError::Usage(format!("--url {:?}: no URL", args.url)));
    }
    config.resume_attempts = args.resume_attempts;
    config.games = args.games;
    config.mirror_check = args.mirror_check;
    config.relay_frame_bytes = args.relay_frame_bytes;
    if let Some(ca) = &args.ca_cert {
        // Read now, so a bad file is a clear error rather than every bot failing.
        crate::tls::client_config(ca)?;
        config.ca_cert = Some(ca.clone());
    } else if config
        .base_urls()
        .iter()
        .any(|url| url.starts_with("wss://"))
    {
        return Err(CliError::Usage(
            "a wss:// --url needs --ca-cert: the certificate the bots trust".into(),
        ));
    }
    let fleet = Fleet::launch(config.clone());
    let bots = fleet.bots() as u64;
    let progress = Progress::new(
        bots,
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
    );
    progress.status(if progress.is_plain() {
        format!("seating {bots} bots")
    } else {
        "seated".to_owned()
    });
    let started = Instant::now();
    let seated = {
        let wait = fleet.seated(Duration::from_secs(args.setup_timeout_secs));
        tokio::pin!(wait);
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tokio::select! {
                done = &mut wait => break done,
                _ = tick.tick() => progress.set_position(
                    fleet.live().seated.load(std::sync::atomic::Ordering::Relaxed)),
            }
        }
    };
    let setup_secs = started.elapsed().as_secs_f64();
    let seated_bots = fleet
        .live()
        .seated
        .load(std::sync::atomic::Ordering::Relaxed);
    progress.set_position(seated_bots);
    let mut totals: WindowData = fleet.take_window();
    let before = args.server_pid.and_then(|pid| procfs::sample(pid).ok());
    let own_before = procfs::sample(std::process::id()).ok();
    if seated {
        let length = Duration::from_secs(args.duration_secs);
        progress.set_length(args.duration_secs.max(1));
        progress.set_position(0);
        progress.status(if progress.is_plain() {
            format!(
                "{seated_bots} bots seated; playing for {} s",
                args.duration_secs
            )
        } else {
            "s playing".to_owned()
        });
        let end = tokio::time::Instant::now() + length;
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        let games = args.games.is_some();
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(end) => break,
                all_done = fleet.played(Duration::from_millis(500)), if games => {
                    if all_done { break; }
                }
                _ = tick.tick() => {
                    progress.set_position(started.elapsed().as_secs().saturating_sub(setup_secs as u64));
                }
            }
        }
    }
    let window = fleet.take_window();
    let after = args.server_pid.and_then(|pid| procfs::sample(pid).ok());
    let own_after = procfs::sample(std::process::id()).ok();
    progress.status("leaving");
    fleet.stop();
    let last = fleet.join().await;
    progress.finish_and_clear();
    totals.append(&window);
    totals.append(&last);
    let bots_cpu = own_before
        .zip(own_after)
        .map(|(b, a)| procfs::cpu_between(&b, &a).1);
    let run = StepResult::new(args.think_ms, &window, before.zip(after), bots_cpu);
    let healthy = seated && run.healthy() && {
        let t = &totals.counts;
        t.errors == 0 && t.disconnects == 0 && t.gaps == 0 && t.mirror_mismatches == 0
    };
    if args.json {
        let report = BotsReport {
            machine: Machine::describe(),
            config,
            setup_secs,
            seated: seated_bots,
            run,
            totals: totals.counts.clone(),
        };
        print(&serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?);
    } else {
        let result = TargetResult {
            target: args.target,
            round: 0,
            frame_bytes: (args.target != Target::Server).then_some(args.relay_frame_bytes),
            capacity: None,
            seats: usize::try_from(seated_bots).unwrap_or(0),
            setup_secs,
            idle_rss_kib: None,
            loaded_rss_kib: after.map(|a| a.rss_kib),
            peak_rss_kib: after.map(|a| a.peak_rss_kib),
            mean_delivery_bytes: if totals.counts.deliveries > 0 {
                totals.counts.delivery_bytes as f64 / totals.counts.deliveries as f64
            } else {
                0.0
            },
            steps: vec![run],
            totals: totals.counts.clone(),
        };
        print(&report::target_text(&result));
    }
    if healthy {
        Ok(())
    } else {
        Err(CliError::Unhealthy(format!(
            "{seated_bots}/{bots} seated, {} errors, {} disconnects, {} gaps, {} mirror mismatches ({} reconnects)",
            totals.counts.errors,
            totals.counts.disconnects,
            totals.counts.gaps,
            totals.counts.mirror_mismatches,
            totals.counts.reconnects
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_args(extra: &[&str]) -> Result<BenchArgs, clap::Error> {
        let cli = Cli::try_parse_from(["grand-melee-loadtest", "bench"].iter().chain(extra))?;
        match cli.command {
            CliCommand::Bench(args) => Ok(args),
            other => panic!("`bench` parsed as {other:?}"),
        }
    }

    fn refusal(extra: &[&str]) -> String {
        match bench_args(extra).map(|args| check_bench_args(&args)) {
            Ok(Ok(())) => panic!("{extra:?} accepted"),
            Ok(Err(error)) => error.to_string(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn colyseus_keeps_its_own_ping_sweep_unless_told() {
        let default = bench_args(&[]).expect("parses");
        assert_eq!(default.colyseus_ping_ms, 3000, "Colyseus's own default");
        let off = bench_args(&["--colyseus-ping-ms", "0"]).expect("parses");
        assert_eq!(off.colyseus_ping_ms, 0);
    }

    #[test]
    fn growth_sizes_are_table_counts_named_once() {
        assert!(refusal(&["--growth", "40,0"]).contains("at least 1"));
        assert!(refusal(&["--growth", "40,100,40"]).contains("40 tables twice"));
        let args = bench_args(&["--growth", "40,100"]).expect("parses");
        assert_eq!(args.growth, [40, 100]);
        assert!(check_bench_args(&args).is_ok());
    }

    #[test]
    fn rules_are_read_by_name_and_any_other_is_refused_with_both_names() {
        assert_eq!(parse_rules("seed"), Ok(RuleSet::Seed));
        assert_eq!(parse_rules("cr807"), Ok(RuleSet::Cr807));
        let error = parse_rules("cr808").expect_err("no such rules");
        assert_eq!(error, UnknownRules("cr808".to_owned()));
        assert_eq!(
            error.to_string(),
            "`cr808`: the rules are `seed` or `cr807`"
        );
        // Through the command line, clap keeps the reason.
        let refused = bench_args(&["--rules", "cr808"])
            .map(|_| ())
            .expect_err("no such rules");
        assert!(
            refused
                .to_string()
                .contains("`cr808`: the rules are `seed` or `cr807`"),
            "{refused}"
        );
    }

    #[test]
    fn bench_defaults_fit_the_budget() {
        let args = bench_args(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(check_bench_args(&args).is_ok());
        assert_eq!(
            args.targets,
            [
                Target::Server,
                Target::Relay,
                Target::Floor,
                Target::Colyseus
            ]
        );
        assert_eq!((args.rounds, args.probes), (3, 10));
        assert!(args.think_ms.is_empty());
        // The reference step is the search's first probe.
        assert_eq!(args.cpu_think_ms, args.think_max_ms);
        // Rounds × targets × (seating + probes × (warm-up + step)), with about 25 s to seat
        // 16,000 bots: under 35 minutes even if every search used all its probes (a limit
        // inside the default range takes 7).
        let per_target = 25 + args.probes as u64 * (args.warmup_secs + args.step_secs);
        let total = args.rounds as u64 * args.targets.len() as u64 * per_target;
        assert!(total < 35 * 60, "{total} s");
    }

    #[test]
    fn day_climbs_are_mountain_magic_s() {
        let cli = Cli::try_parse_from([
            "grand-melee-loadtest",
            "bots",
            "--day",
            "--url",
            "ws://127.0.0.1:9/ws",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let error = run(cli, &mut |_| {}).expect_err("no day at a Grand Melee table");
        assert!(
            error.to_string().contains("add --game mountain_magic"),
            "{error}"
        );
    }

    #[test]
    fn mountain_magic_bots_play_against_the_server_only() {
        let cli = Cli::try_parse_from([
            "grand-melee-loadtest",
            "bots",
            "--game",
            "mountain_magic",
            "--target",
            "relay",
            "--url",
            "ws://127.0.0.1:9/ws",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let error = run(cli, &mut |_| {}).expect_err("no relay climbs");
        assert!(
            error.to_string().contains("--game mountain_magic"),
            "{error}"
        );
    }

    #[test]
    fn tls_leaves_colyseus_out_before_anything_starts() {
        let error = refusal(&["--tls"]);
        assert!(error.contains("Colyseus is measured on ws only"), "{error}");
        let args = bench_args(&["--tls", "--targets", "server,relay,floor"]).expect("parses");
        assert!(args.tls);
        assert!(check_bench_args(&args).is_ok());
        assert!(!bench_args(&[]).expect("parses").tls, "ws by default");
    }

    #[test]
    fn bad_bench_flags_are_refused_clearly() {
        assert!(refusal(&["--rounds", "0"]).contains("--rounds"));
        assert!(refusal(&["--probes", "0"]).contains("--probes"));
        assert!(
            refusal(&["--think-min-ms", "4000", "--think-max-ms", "400"])
                .contains("--think-min-ms")
        );
        assert!(refusal(&["--think-min-ms", "500", "--think-max-ms", "500"]).contains("below"));
        assert!(refusal(&["--think-min-ms=-1"]).contains("positive"));
        assert!(refusal(&["--cpu-think-ms", "0"]).contains("--cpu-think-ms"));
        assert!(refusal(&["--targets", "relay,relay"]).contains("twice"));
        assert!(refusal(&["--targets", "nothing"]).contains("nothing"));
        assert!(refusal(&["--step-secs", "0"]).contains("--step-secs"));
    }
}
