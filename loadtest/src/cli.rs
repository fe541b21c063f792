//! The command line of `grand-melee-loadtest`: `bots`, `relay`, `bench` (and the hidden
//! `worker` that `bench` starts). Everything runs here; `main` only parses and prints.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tokio::io::BufReader;

use crate::bench::{self, BenchConfig, Machine};
use crate::bot::{RESUME_ATTEMPTS, TableOptions};
use crate::fleet::{Fleet, FleetConfig, Target};
use crate::procfs;
use crate::relay::{Relay, RelayConfig};
use crate::report::{self, StepResult, TargetResult};
use crate::stats::{Counts, WindowData};
use grand_melee_protocol::{MulliganMode, RuleSet};

/// Bots that play whole Grand Melee games over WebSockets, and a benchmark of the server
/// against a bare fan-out relay.
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
    /// Run bots against a server (or relay) that is already running, and print what they
    /// measured.
    Bots(BotsArgs),
    /// Run the bare fan-out relay: every frame a client sends to `/relay/<group>` goes to every
    /// connection of the group.
    Relay(RelayArgs),
    /// Start the server and the relay, run the same load against each (bots in worker
    /// processes), and print both with their ratios.
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

fn parse_rules(text: &str) -> Result<RuleSet, String> {
    match text {
        "seed" => Ok(RuleSet::Seed),
        "cr807" => Ok(RuleSet::Cr807),
        other => Err(format!("`{other}`: the rules are `seed` or `cr807`")),
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

    /// The server's (or relay's) process id, to report its CPU time and memory from /proc.
    #[arg(long)]
    pub server_pid: Option<u32>,

    /// Relay frames' size in bytes (relay target only).
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
}

/// `bench`: server against relay.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// The shape of the load.
    #[command(flatten)]
    pub shape: ShapeArgs,

    /// Think times of the load steps, ms, lightest load first.
    #[arg(long, value_delimiter = ',', default_value = "2000,1000,500,250")]
    pub think_ms: Vec<f64>,

    /// Measured seconds per step.
    #[arg(long, default_value_t = 20)]
    pub step_secs: u64,

    /// Warm-up seconds before each step's measurement.
    #[arg(long, default_value_t = 5)]
    pub warmup_secs: u64,

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

    /// Targets, in order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "server,relay"
    )]
    pub targets: Vec<Target>,

    /// Longest time to seat every bot, s.
    #[arg(long, default_value_t = 300)]
    pub setup_timeout_secs: u64,

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
        CliCommand::Bench(args) => runtime(1)?.block_on(bench(args, print)),
        CliCommand::Worker(args) => runtime(args.threads)?.block_on(worker(args)),
    }
}

async fn relay(args: RelayArgs, print: &mut dyn FnMut(&str)) -> Result<(), CliError> {
    let relay = Relay::bind(RelayConfig {
        listen: args.listen,
        read_buffer_bytes: args.read_buffer_bytes,
        queue: args.queue,
    })
    .await?;
    print(&format!("relay listening on {}", relay.local_addr()?));
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
    if args.think_ms.is_empty() {
        return Err(CliError::Usage("--think-ms needs at least one step".into()));
    }
    let config = BenchConfig {
        server_bin,
        server_args: args.server_arg,
        self_exe,
        fleet: args
            .shape
            .fleet(String::new(), Target::Server, args.think_ms[0]),
        think_ms: args.think_ms,
        step: Duration::from_secs(args.step_secs.max(1)),
        warmup: Duration::from_secs(args.warmup_secs),
        processes: args.processes.max(1),
        worker_threads: args.worker_threads.max(1),
        targets: args.targets,
        setup_timeout: Duration::from_secs(args.setup_timeout_secs),
    };
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
        for target in &result.targets {
            print(&report::target_text(target));
        }
        if let Some(comparison) = &result.comparison {
            print(&report::comparison_text(comparison));
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
    let fleet = Fleet::launch(config.clone());
    let bots = fleet.bots() as u64;
    let progress = ProgressBar::new(bots);
    progress.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    progress.set_message("seated");
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
        progress.set_message("s playing");
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
    progress.set_message("leaving");
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
