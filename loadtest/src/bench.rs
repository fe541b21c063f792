//! The benchmark: the same traffic shape against the server, the relay, the floor and
//! Colyseus, in one invocation, with the bots spread over worker processes.
//!
//! The benchmark runs in rounds. Before each round it measures the latency of small synced
//! appends in the directory that holds the server's data directory. In each round it runs every
//! target in turn (the server first): it starts the target process (the `grand-melee-server`
//! binary, this binary's `relay` or `floor`, or `node server.js` of Colyseus, installed on first
//! use by [`crate::colyseus`]), starts the workers (this binary's hidden
//! `worker` command, each a [`Fleet`] steered over its stdin/stdout with one JSON line per
//! command and per reply), waits until every seat is taken, then runs the steps, each a warm-up
//! and a measured window during which it reads the target's CPU time and memory from `/proc`:
//! the reference step (`cpu_think_ms`), any fixed steps, then the probes of the capacity search
//! ([`Bisection`]). The relay, the floor and Colyseus get frames the size of that round's
//! server's mean broadcast. The per-round ratios, their median and spread are in [`Summary`].
//!
//! With [`BenchConfig::tls`] everything runs over `wss://`: the bench makes a fresh
//! self-signed certificate for `127.0.0.1` and `localhost` ([`crate::tls`]) in a temporary
//! directory of the run, starts the server with `--tls-cert` and `--tls-key` and the relay and
//! the floor with the same flags, and hands the certificate's path to the workers, whose bots
//! trust it alone.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tracing::{info, warn};

use crate::capacity::Bisection;
use crate::colyseus;
use crate::fleet::{Fleet, FleetConfig, Target};
use crate::procfs::{self, ProcSample};
use crate::progress::Progress;
use crate::report::{FsyncLatency, RoundResult, StepKind, StepResult, Summary, TargetResult};
use crate::stats::WindowData;

/// What can stop a benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Starting or talking to a process failed.
    #[error("{what}: {error}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        error: std::io::Error,
    },
    /// A process did not answer in time or said something unexpected.
    #[error("{0}")]
    Process(String),
    /// Colyseus could not be installed.
    #[error("{0}")]
    Colyseus(#[from] colyseus::InstallError),
    /// The certificate for `--tls` could not be made.
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
    let what = what.into();
    move |error| BenchError::Io { what, error }
}

/// A command from the coordinator to a worker (one JSON line on its stdin).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum WorkerCommand {
    /// Set the mean think time.
    Think {
        /// Milliseconds.
        ms: f64,
    },
    /// Reply with the window since the last take, and start a new one.
    Take,
    /// Stop every bot, wait for them, reply with the last window and exit.
    Stop,
}

/// A reply from a worker (one JSON line on its stdout).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum WorkerReply {
    /// Every bot took its seat (or setup ran out of time: `complete` false).
    Seated {
        /// Bots seated.
        seated: u64,
        /// Bots in this worker.
        bots: u64,
        /// Whether all of them did.
        complete: bool,
    },
    /// A window, with the worker's own CPU time so far.
    Window {
        /// What the bots measured.
        window: WindowData,
        /// The worker process's CPU seconds so far.
        cpu_seconds: f64,
    },
    /// The last window, after every bot has finished.
    Final {
        /// What the bots measured.
        window: WindowData,
        /// The worker process's CPU seconds so far.
        cpu_seconds: f64,
    },
}

fn own_cpu_seconds() -> f64 {
    procfs::sample(std::process::id()).map_or(0.0, |s| s.cpu_seconds)
}

async fn write_line<W: AsyncWrite + Unpin, T: Serialize>(
    out: &mut W,
    value: &T,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line).await?;
    out.flush().await
}

/// Runs one worker: launches `config`'s bots, reports when they are seated, then obeys
/// commands from `input` and replies on `output` until `Stop` (or the end of `input`).
pub async fn run_worker<R, W>(
    config: FleetConfig,
    setup_timeout: Duration,
    input: R,
    mut output: W,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let fleet = Fleet::launch(config);
    let complete = fleet.seated(setup_timeout).await;
    let seated = fleet
        .live()
        .seated
        .load(std::sync::atomic::Ordering::Relaxed);
    let bots = fleet.bots() as u64;
    write_line(
        &mut output,
        &WorkerReply::Seated {
            seated,
            bots,
            complete,
        },
    )
    .await?;
    let mut lines = input.lines();
    while let Some(line) = lines.next_line().await? {
        match serde_json::from_str::<WorkerCommand>(&line) {
            Ok(WorkerCommand::Think { ms }) => {
                fleet.set_think(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
            }
            Ok(WorkerCommand::Take) => {
                let reply = WorkerReply::Window {
                    window: fleet.take_window(),
                    cpu_seconds: own_cpu_seconds(),
                };
                write_line(&mut output, &reply).await?;
            }
            Ok(WorkerCommand::Stop) => break,
            Err(error) => warn!(%error, line, "unknown worker command"),
        }
    }
    fleet.stop();
    let window = fleet.join().await;
    let reply = WorkerReply::Final {
        window,
        cpu_seconds: own_cpu_seconds(),
    };
    write_line(&mut output, &reply).await
}

/// The think time of the idle step: longer than any run, so no bot acts (each bot's move
/// already drawn comes within the warm-up).
const IDLE_THINK_MS: f64 = 1.0e9;

/// The benchmark's settings.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// The `grand-melee-server` binary.
    pub server_bin: PathBuf,
    /// Extra flags for the server (after the harness's own).
    pub server_args: Vec<String>,
    /// This binary (for `relay`, `floor` and `worker`).
    pub self_exe: PathBuf,
    /// The shape: tables, seats, seed, range, life, chat (the URL and think time are set per
    /// target and step). Its `relay_frame_bytes` is the relay's and the floor's frame size when
    /// the server does not run.
    pub fleet: FleetConfig,
    /// Rounds; each runs every target once, in a fresh process with fresh bots.
    pub rounds: usize,
    /// Which targets (the server runs first in each round: the others take its frame size).
    pub targets: Vec<Target>,
    /// Think time of the reference step, ms (CPU per delivery, latency, bots' CPU).
    pub cpu_think_ms: f64,
    /// Extra fixed steps after the reference step, think times in ms.
    pub think_ms: Vec<f64>,
    /// The capacity search's light end (longest think time, probed first), ms.
    pub think_max_ms: f64,
    /// The capacity search's heavy end, ms.
    pub think_min_ms: f64,
    /// Probes of the capacity search per target and round.
    pub probes: usize,
    /// Measured length of each step.
    pub step: Duration,
    /// Warm-up before each step's window.
    pub warmup: Duration,
    /// Worker processes for the bots.
    pub processes: usize,
    /// Runtime threads per worker.
    pub worker_threads: usize,
    /// Longest time to seat every bot.
    pub setup_timeout: Duration,
    /// Synced appends per fsync measurement (0: none).
    pub fsync_samples: usize,
    /// Colyseus's WebSocket transport's ping sweep, ms (`pingInterval`; 0: off).
    pub colyseus_ping_ms: u64,
    /// Measure over `wss://` (Colyseus is not offered TLS).
    pub tls: bool,
    /// After the capacity search, a step this long with every bot seated and nobody acting
    /// (`--idle-secs`; zero: none).
    pub idle: Duration,
}

impl BenchConfig {
    /// Steps per target and round, at most: the reference, the fixed ones and the probes.
    pub fn steps_per_target(&self) -> usize {
        1 + self.think_ms.len() + self.probes
    }

    /// Seconds of warm-ups and measured windows of the whole run, at most (seating, starting
    /// and stopping come on top).
    pub fn measured_secs(&self) -> u64 {
        let idle = if self.idle.is_zero() {
            0
        } else {
            (self.idle + self.warmup).as_secs()
        };
        (self.rounds * self.targets.len()) as u64
            * (self.steps_per_target() as u64 * (self.step + self.warmup).as_secs() + idle)
    }
}

/// The machine a benchmark ran on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    /// Logical CPUs available.
    pub cpus: usize,
    /// `/proc/cpuinfo`'s model name.
    pub cpu_model: String,
    /// The kernel release.
    pub kernel: String,
    /// Total memory, KiB.
    pub memory_kib: u64,
}

impl Machine {
    /// Reads the machine's description.
    pub fn describe() -> Self {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let meminfo = read("/proc/meminfo");
        Self {
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_owned())
                .unwrap_or_default(),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
            memory_kib: meminfo
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
        }
    }
}

/// A benchmark's results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchResult {
    /// Where it ran.
    pub machine: Machine,
    /// Tables, seats and the other shape settings.
    pub shape: FleetConfig,
    /// Think time of the reference step, ms.
    pub cpu_think_ms: f64,
    /// Fixed steps' think times, ms.
    pub think_ms: Vec<f64>,
    /// The capacity search's light and heavy ends, ms, and its probes.
    pub think_max_ms: f64,
    /// The heavy end, ms.
    pub think_min_ms: f64,
    /// Probes per target and round.
    pub probes: usize,
    /// Measured seconds per step.
    pub step_secs: f64,
    /// Warm-up seconds per step.
    pub warmup_secs: f64,
    /// Worker processes.
    pub processes: usize,
    /// Whether it ran over `wss://` (TLS) rather than `ws://`.
    #[serde(default)]
    pub tls: bool,
    /// Every round, in order.
    pub rounds: Vec<RoundResult>,
    /// The ratios over the rounds and the verdicts.
    pub summary: Summary,
}

/// Runs the benchmark.
pub async fn run(config: &BenchConfig) -> Result<BenchResult, BenchError> {
    let progress = Progress::new(
        config.measured_secs().max(1),
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len}s of steps {msg}",
    );
    let mut targets = config.targets.clone();
    // The server first: the others take its frame size.
    targets.sort_by_key(|&t| t != Target::Server);
    let data_parent = std::env::temp_dir();
    // The run's certificate (removed with the directory when the run ends, however it ends).
    let certificate = match config.tls {
        true => Some(Certificate::new()?),
        false => None,
    };
    let colyseus_dir = if targets.contains(&Target::Colyseus) {
        Some(install_colyseus(&progress).await?)
    } else {
        None
    };
    let mut rounds = Vec::new();
    for round in 1..=config.rounds {
        let label = format!("round {round}/{}", config.rounds);
        let fsync = if config.fsync_samples > 0 {
            progress.status(format!("{label} · fsync latency"));
            let dir = data_parent.clone();
            let samples = config.fsync_samples;
            match tokio::task::spawn_blocking(move || fsync_latency(&dir, samples)).await {
                Ok(Ok(fsync)) => {
                    progress.line(crate::report::fsync_text(round, Some(&fsync)));
                    Some(fsync)
                }
                Ok(Err(error)) => {
                    warn!(%error, "cannot measure the fsync latency");
                    None
                }
                Err(error) => {
                    warn!(%error, "the fsync measurement failed");
                    None
                }
            }
        } else {
            None
        };
        let mut frame_bytes = config.fleet.relay_frame_bytes;
        let mut results: Vec<TargetResult> = Vec::new();
        for &target in &targets {
            let which = Which {
                round,
                label: match config.tls {
                    true => format!("{label} · {} (wss)", target.name()),
                    false => format!("{label} · {}", target.name()),
                },
            };
            let result = run_target(
                config,
                &which,
                target,
                frame_bytes,
                colyseus_dir.as_deref(),
                certificate.as_ref(),
                &progress,
            )
            .await?;
            if target == Target::Server && result.mean_delivery_bytes > 0.0 {
                frame_bytes = result.mean_delivery_bytes.round() as usize;
            }
            results.push(result);
        }
        rounds.push(RoundResult {
            round,
            fsync,
            frame_bytes,
            targets: results,
        });
    }
    progress.finish_and_clear();
    let summary = Summary::new(&rounds, config.cpu_think_ms);
    Ok(BenchResult {
        machine: Machine::describe(),
        shape: config.fleet.clone(),
        cpu_think_ms: config.cpu_think_ms,
        think_ms: config.think_ms.clone(),
        think_max_ms: config.think_max_ms,
        think_min_ms: config.think_min_ms,
        probes: config.probes,
        step_secs: config.step.as_secs_f64(),
        warmup_secs: config.warmup.as_secs_f64(),
        processes: config.processes,
        tls: config.tls,
        rounds,
        summary,
    })
}

/// Installs Colyseus if it is not yet (saying so first: `npm ci` takes a while); returns its
/// directory.
async fn install_colyseus(progress: &Progress) -> Result<PathBuf, BenchError> {
    let blocking = |what: &str, error: tokio::task::JoinError| {
        BenchError::Process(format!("{what} failed: {error}"))
    };
    tokio::task::spawn_blocking(colyseus::check_node)
        .await
        .map_err(|e| blocking("checking Node.js", e))??;
    if !colyseus::is_installed(&colyseus::install_dir()) {
        progress.line(format!(
            "installing Colyseus {} with npm (first use) in {}…",
            colyseus::VERSION,
            colyseus::install_dir().display()
        ));
    }
    let dir = tokio::task::spawn_blocking(|| colyseus::ensure_installed(|| ()))
        .await
        .map_err(|e| blocking("installing Colyseus", e))??;
    Ok(dir)
}

/// Bytes per synced append of the fsync measurement (a journal's small write).
pub const FSYNC_BYTES: usize = 4096;

/// The value at quantile `q` of `sorted` (nearest rank), 0 if empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Appends [`FSYNC_BYTES`] to a new file in `dir` and `fdatasync`s it, `samples` times, and
/// returns the latencies of write + sync. The file is removed afterwards.
pub fn fsync_latency(dir: &Path, samples: usize) -> std::io::Result<FsyncLatency> {
    let path = dir.join(format!(
        "grand-melee-loadtest-fsync-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    ));
    let measure = || {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let block = vec![0x5Au8; FSYNC_BYTES];
        let mut ms = Vec::with_capacity(samples);
        for _ in 0..samples {
            let started = Instant::now();
            file.write_all(&block)?;
            file.sync_data()?;
            ms.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        Ok::<_, std::io::Error>(ms)
    };
    let measured = measure();
    let _ = std::fs::remove_file(&path);
    let mut ms = measured?;
    ms.sort_by(f64::total_cmp);
    Ok(FsyncLatency {
        dir: dir.display().to_string(),
        samples,
        bytes: FSYNC_BYTES,
        p50_ms: quantile(&ms, 0.50),
        p99_ms: quantile(&ms, 0.99),
        max_ms: ms.last().copied().unwrap_or(0.0),
    })
}

/// The certificate of a `--tls` run, in its own temporary directory.
#[derive(Debug)]
pub struct Certificate {
    /// The certificate (PEM): the server's, the relay's and the floor's, and what the bots trust.
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The bots' side (for the server's `/metrics` over https).
    pub client: std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
    _dir: tempfile::TempDir,
}

impl Certificate {
    /// A fresh self-signed certificate for 127.0.0.1 and localhost, written to a new
    /// temporary directory.
    pub fn new() -> Result<Self, BenchError> {
        let dir = tempfile::Builder::new()
            .prefix("grand-melee-loadtest-tls-")
            .tempdir()
            .map_err(io("creating the certificate's directory"))?;
        let pair = crate::tls::SelfSigned::generate()?;
        let (cert, key) = pair.write_to(dir.path())?;
        let client = crate::tls::client_config_pem(pair.cert_pem.as_bytes())?;
        Ok(Self {
            cert,
            key,
            client,
            _dir: dir,
        })
    }
}

/// Which round and target a run is, for the progress line.
#[derive(Debug)]
struct Which {
    round: usize,
    label: String,
}

/// A started server, relay, floor or Colyseus process.
#[derive(Debug)]
struct TargetProcess {
    child: Child,
    pid: u32,
    base_url: String,
    /// The server's journal directory, removed afterwards.
    data_dir: Option<PathBuf>,
}

impl TargetProcess {
    fn sample(&self) -> Option<ProcSample> {
        procfs::sample(self.pid).ok()
    }
}

fn free_port() -> Result<u16, BenchError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(io("finding a free port"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(io("finding a free port"))
}

/// Starts `command`, waits until a line of its stdout contains `ready` (returning that line),
/// and keeps draining its stdout afterwards. With `stdin_pipe`, its standard input is a pipe
/// that stays open as long as the child is not dropped (Colyseus exits when it closes).
async fn start_process(
    mut command: Command,
    what: &str,
    ready: &str,
    stdin_pipe: bool,
) -> Result<(Child, String), BenchError> {
    command
        .stdin(if stdin_pipe {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env("NO_COLOR", "1")
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(io(format!("starting {what}")))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| BenchError::Process(format!("{what}: no stdout")))?;
    let mut lines = BufReader::new(stdout).lines();
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await? {
            if line.contains(ready) {
                return Ok(Some(line));
            }
        }
        Ok::<_, std::io::Error>(None)
    })
    .await
    .map_err(|_| BenchError::Process(format!("{what} did not start in 30 s")))?
    .map_err(io(format!("reading {what}'s output")))?
    .ok_or_else(|| BenchError::Process(format!("{what} exited before it was ready")))?;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, found))
}

async fn start_target(
    config: &BenchConfig,
    target: Target,
    colyseus_dir: Option<&Path>,
    certificate: Option<&Certificate>,
) -> Result<TargetProcess, BenchError> {
    let scheme = if certificate.is_some() { "wss" } else { "ws" };
    let tls_args = |command: &mut Command| {
        if let Some(certificate) = certificate {
            command
                .arg("--tls-cert")
                .arg(&certificate.cert)
                .arg("--tls-key")
                .arg(&certificate.key);
        }
    };
    let seats = config.fleet.tables * usize::from(config.fleet.seats);
    let mut data_dir = None;
    // A bound on a relay's, floor's or Colyseus's life, should the harness die: everything
    // this target runs, with room to spare.
    let steps = u32::try_from(config.steps_per_target()).unwrap_or(u32::MAX);
    let bound = (config.setup_timeout * 2
        + (config.step + config.warmup) * steps.saturating_add(2))
    .as_secs();
    let address = |line: &str| {
        line.rsplit(' ')
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let (child, base_url) = match target {
        Target::Server => {
            let port = free_port()?;
            let dir = std::env::temp_dir().join(format!(
                "grand-melee-loadtest-{}-{port}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).map_err(io("creating the server's data directory"))?;
            let mut command = Command::new(&config.server_bin);
            let tables = (config.fleet.tables * 8 + 64).to_string();
            let connections = (seats + 1024).to_string();
            command
                .arg("--listen")
                .arg(format!("127.0.0.1:{port}"))
                .args(["--log", "warn,grand_melee_server::server=info"])
                .args(["--max-connections", &connections])
                .args(["--max-connections-per-ip", "0"])
                .args(["--max-tables", &tables])
                .args(["--rate-limit", "100000", "--rate-burst", "100000"])
                .args(["--chat-per-minute", "1000000"])
                .args(["--table-chat-per-minute", "0"])
                .args([
                    "--max-tables-per-ip",
                    "0",
                    "--table-creations-per-minute",
                    "0",
                ])
                .arg("--data-dir")
                .arg(&dir);
            tls_args(&mut command);
            command.args(&config.server_args);
            data_dir = Some(dir);
            let (child, _) = start_process(command, "the server", "listening", false).await?;
            (child, format!("{scheme}://127.0.0.1:{port}"))
        }
        Target::Relay | Target::Floor => {
            let name = target.name();
            let mut command = Command::new(&config.self_exe);
            let bound = bound.to_string();
            command.args([name, "--listen", "127.0.0.1:0", "--duration-secs", &bound]);
            tls_args(&mut command);
            let (child, line) = start_process(
                command,
                &format!("the {name}"),
                &format!("{name} ({scheme}) listening on"),
                false,
            )
            .await?;
            (child, format!("{scheme}://{}", address(&line)))
        }
        Target::Colyseus if certificate.is_some() => {
            return Err(BenchError::Process(
                "Colyseus is measured on ws only, not with --tls".into(),
            ));
        }
        Target::Colyseus => {
            let dir = colyseus_dir
                .ok_or_else(|| BenchError::Process("Colyseus is not installed".into()))?;
            let mut command = colyseus::server_command(dir, bound);
            command.env("PING_MS", config.colyseus_ping_ms.to_string());
            let (child, line) =
                start_process(command, "Colyseus", "colyseus listening on", true).await?;
            (child, format!("ws://{}", address(&line)))
        }
    };
    let pid = child
        .id()
        .ok_or_else(|| BenchError::Process("the target exited at once".into()))?;
    Ok(TargetProcess {
        child,
        pid,
        base_url,
        data_dir,
    })
}

/// One worker process and its pipes.
#[derive(Debug)]
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    cpu_seconds: f64,
}

impl Worker {
    async fn send(&mut self, command: &WorkerCommand) -> Result<(), BenchError> {
        write_line(&mut self.stdin, command)
            .await
            .map_err(io("writing to a worker"))
    }

    async fn reply(&mut self, patience: Duration) -> Result<WorkerReply, BenchError> {
        let line = tokio::time::timeout(patience, self.lines.next_line())
            .await
            .map_err(|_| BenchError::Process("a worker did not answer in time".into()))?
            .map_err(io("reading from a worker"))?
            .ok_or_else(|| BenchError::Process("a worker exited".into()))?;
        serde_json::from_str(&line)
            .map_err(|e| BenchError::Process(format!("a worker said {line:?}: {e}")))
    }
}

/// Tells every worker `command` and gathers their windows: the merged window and the CPU
/// seconds the workers used since the previous gathering.
async fn gather(
    workers: &mut [Worker],
    command: &WorkerCommand,
) -> Result<(WindowData, f64), BenchError> {
    for worker in workers.iter_mut() {
        worker.send(command).await?;
    }
    let mut merged: Option<WindowData> = None;
    let mut cpu = 0.0;
    for worker in workers.iter_mut() {
        let (window, cpu_seconds) = match worker.reply(Duration::from_secs(180)).await? {
            WorkerReply::Window {
                window,
                cpu_seconds,
            }
            | WorkerReply::Final {
                window,
                cpu_seconds,
            } => (window, cpu_seconds),
            WorkerReply::Seated { .. } => {
                return Err(BenchError::Process("a worker answered out of turn".into()));
            }
        };
        cpu += cpu_seconds - worker.cpu_seconds;
        worker.cpu_seconds = cpu_seconds;
        match &mut merged {
            Some(m) => m.merge(&window),
            None => merged = Some(window),
        }
    }
    Ok((merged.unwrap_or_default(), cpu))
}

async fn run_target(
    config: &BenchConfig,
    which: &Which,
    target: Target,
    frame_bytes: usize,
    colyseus_dir: Option<&Path>,
    certificate: Option<&Certificate>,
    progress: &Progress,
) -> Result<TargetResult, BenchError> {
    let name = &which.label;
    progress.status(format!("{name} · starting"));
    let process = start_target(config, target, colyseus_dir, certificate).await?;
    let idle = process.sample();
    let processes = config.processes.clamp(1, config.fleet.tables.max(1));
    let started = Instant::now();
    let mut workers = Vec::new();
    let mut first_table = 0;
    for i in 0..processes {
        let tables =
            config.fleet.tables / processes + usize::from(i < config.fleet.tables % processes);
        let fleet = FleetConfig {
            base_url: process.base_url.clone(),
            target,
            tables,
            first_table,
            think: Duration::from_secs_f64(config.cpu_think_ms / 1000.0),
            relay_frame_bytes: frame_bytes,
            ca_cert: certificate.map(|c| c.cert.clone()),
            ..config.fleet.clone()
        };
        first_table += tables;
        let fleet_json = serde_json::to_string(&fleet)
            .map_err(|e| BenchError::Process(format!("worker config: {e}")))?;
        let mut child = Command::new(&config.self_exe)
            .args(["worker", "--config", &fleet_json])
            .arg("--threads")
            .arg(config.worker_threads.to_string())
            .arg("--setup-timeout-secs")
            .arg(config.setup_timeout.as_secs().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(io("starting a worker"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(BenchError::Process("a worker has no pipes".into()));
        };
        workers.push(Worker {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            cpu_seconds: 0.0,
        });
    }
    progress.status(format!(
        "{name} · seating {} bots",
        config.fleet.tables * usize::from(config.fleet.seats)
    ));
    let mut seats = 0;
    for worker in &mut workers {
        match worker
            .reply(config.setup_timeout + Duration::from_secs(30))
            .await?
        {
            WorkerReply::Seated {
                seated,
                bots,
                complete,
            } => {
                if !complete {
                    warn!(
                        seated,
                        bots, "not every bot of a worker took its seat in time"
                    );
                }
                seats += usize::try_from(seated).unwrap_or(0);
            }
            other => {
                return Err(BenchError::Process(format!(
                    "a worker answered {other:?} instead of seated"
                )));
            }
        }
    }
    let setup_secs = started.elapsed().as_secs_f64();
    info!(
        target = target.name(),
        round = which.round,
        seats,
        setup_secs,
        "every bot seated"
    );
    let (totals, _) = gather(&mut workers, &WorkerCommand::Take).await?;
    let mut run = TargetRun {
        config,
        tls: certificate.map(|c| std::sync::Arc::clone(&c.client)),
        name,
        progress,
        process: &process,
        target,
        workers,
        totals,
    };
    let mut steps = Vec::new();
    let reference = run
        .step(StepKind::Reference, config.cpu_think_ms, "reference")
        .await?;
    let loaded_rss = reference.target_rss_kib;
    steps.push(reference);
    for &think_ms in &config.think_ms {
        steps.push(run.step(StepKind::Fixed, think_ms, "step").await?);
    }
    let mut search = Bisection::new(config.think_max_ms, config.think_min_ms, config.probes);
    let mut probes = 0;
    // The reference step at the search's light end is its first probe.
    if let Some(reference) = steps
        .first()
        .filter(|r| (r.think_ms - config.think_max_ms).abs() < 1e-6)
    {
        probes += 1;
        search.record(
            reference.think_ms,
            reference.within_bound(),
            reference.deliveries_per_s,
        );
    }
    while let Some(think_ms) = search.next() {
        probes += 1;
        let what = format!("probe {probes}/{}", config.probes);
        let step = run.step(StepKind::Probe, think_ms, &what).await?;
        search.record(think_ms, step.within_bound(), step.deliveries_per_s);
        steps.push(step);
    }
    // Probes the search did not need: their time is not coming.
    progress.inc((config.probes - probes) as u64 * (config.step + config.warmup).as_secs());
    if !config.idle.is_zero() {
        // Last, so that no bot has to be woken from its long think again.
        steps.push(
            run.step_for(StepKind::Idle, IDLE_THINK_MS, "idle seats", config.idle)
                .await?,
        );
    }
    let capacity = search.outcome();
    progress.line(format!(
        "{name}: capacity {}",
        crate::report::capacity_text(&capacity)
    ));
    progress.status(format!("{name} · stopping"));
    let peak = process.sample().map(|s| s.peak_rss_kib);
    let TargetRun {
        mut workers,
        mut totals,
        ..
    } = run;
    let (last, _) = gather(&mut workers, &WorkerCommand::Stop).await?;
    totals.append(&last);
    for mut worker in workers {
        let _ = tokio::time::timeout(Duration::from_secs(30), worker.child.wait()).await;
    }
    let mut process = process;
    let _ = process.child.start_kill();
    let _ = process.child.wait().await;
    if let Some(dir) = &process.data_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    let mean_delivery_bytes = if totals.counts.deliveries > 0 {
        totals.counts.delivery_bytes as f64 / totals.counts.deliveries as f64
    } else {
        0.0
    };
    Ok(TargetResult {
        target,
        round: which.round,
        frame_bytes: (target != Target::Server).then_some(frame_bytes),
        seats,
        setup_secs,
        idle_rss_kib: idle.map(|s| s.rss_kib),
        loaded_rss_kib: loaded_rss,
        peak_rss_kib: peak,
        steps,
        capacity: Some(capacity),
        totals: totals.counts,
        mean_delivery_bytes,
    })
}

/// One target's seated bots, stepping through their loads.
struct TargetRun<'a> {
    config: &'a BenchConfig,
    /// What the server's `/metrics` is read over https with (`--tls`).
    tls: Option<std::sync::Arc<tokio_rustls::rustls::ClientConfig>>,
    name: &'a str,
    progress: &'a Progress,
    process: &'a TargetProcess,
    target: Target,
    workers: Vec<Worker>,
    /// Everything the bots counted so far.
    totals: WindowData,
}

impl TargetRun<'_> {
    /// One step: the think time set, a warm-up, then a measured window.
    async fn step(
        &mut self,
        kind: StepKind,
        think_ms: f64,
        what: &str,
    ) -> Result<StepResult, BenchError> {
        self.step_for(kind, think_ms, what, self.config.step).await
    }

    /// [`step`](Self::step) with a window of `length`.
    async fn step_for(
        &mut self,
        kind: StepKind,
        think_ms: f64,
        what: &str,
        length: Duration,
    ) -> Result<StepResult, BenchError> {
        let (name, progress) = (self.name, self.progress);
        for worker in &mut self.workers {
            worker.send(&WorkerCommand::Think { ms: think_ms }).await?;
        }
        progress.status(format!(
            "{name} · {what} · think {think_ms:.0} ms · warming up"
        ));
        tick(progress, self.config.warmup).await;
        let (warmup, _) = gather(&mut self.workers, &WorkerCommand::Take).await?;
        self.totals.append(&warmup);
        let server = self.target == Target::Server;
        let server_before = match server {
            true => crate::evidence::read_server(&self.process.base_url, self.tls.as_ref()).await,
            false => None,
        };
        let machine_before = crate::evidence::machine_sample();
        let before = self.process.sample();
        progress.status(format!(
            "{name} · {what} · think {think_ms:.0} ms · measuring"
        ));
        tick(progress, length).await;
        let (window, bots_cpu) = gather(&mut self.workers, &WorkerCommand::Take).await?;
        let after = self.process.sample();
        let machine_after = crate::evidence::machine_sample();
        let server_after = match server {
            true => crate::evidence::read_server(&self.process.base_url, self.tls.as_ref()).await,
            false => None,
        };
        self.totals.append(&window);
        let mut step = StepResult::new(think_ms, &window, before.zip(after), Some(bots_cpu));
        step.kind = kind;
        step.machine = machine_before
            .zip(machine_after)
            .and_then(|(b, a)| crate::evidence::machine_between(b, a, window.seconds));
        step.server = server_before
            .zip(server_after)
            .map(|(b, a)| crate::evidence::server_between(&b, &a, window.seconds));
        progress.line(format!(
            "{name}: {what}, think {think_ms:.0} ms: {:.0} deliveries/s, last-seat p99 {:.2} ms{}, target CPU {:.2} cores, bots CPU {:.2} cores",
            step.deliveries_per_s,
            step.last_delivery.p99_ms,
            if step.within_bound() || kind == StepKind::Idle { "" } else { " (over the bound)" },
            step.target_cpu_cores.unwrap_or(0.0),
            step.bots_cpu_cores.unwrap_or(0.0),
        ));
        Ok(step)
    }
}

/// Waits `length`, moving the progress bar one tick per second. (A measurement window, not a
/// synchronisation: the bots run on their own meanwhile.)
async fn tick(progress: &Progress, length: Duration) {
    let end = tokio::time::Instant::now() + length;
    let mut second = tokio::time::interval(Duration::from_secs(1));
    second.tick().await;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(end) => return,
            _ = second.tick() => progress.inc(1),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        assert_eq!(quantile(&[], 0.5), 0.0);
        let values: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(quantile(&values, 0.50), 100.0);
        assert_eq!(quantile(&values, 0.99), 198.0);
        assert_eq!(quantile(&values, 1.0), 200.0);
        assert_eq!(quantile(&[7.0], 0.99), 7.0);
    }

    #[test]
    fn fsync_latency_is_measured_and_its_file_removed() {
        let dir = std::env::temp_dir().join(format!("gm-fsync-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fsync = fsync_latency(&dir, 5).unwrap();
        assert_eq!((fsync.samples, fsync.bytes), (5, FSYNC_BYTES));
        assert!(fsync.p50_ms <= fsync.p99_ms && fsync.p99_ms <= fsync.max_ms);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing left");
        std::fs::remove_dir(&dir).unwrap();
    }
}
