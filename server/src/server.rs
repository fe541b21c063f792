//! The accept loop and what every task shares.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use dashmap::DashMap;
use grand_melee_protocol::{TableId, TableSummary};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, info, warn};

use crate::config::ServerConfig;
use crate::connection;
use crate::journal::Journal;
use crate::limit::TokenBucket;
use crate::metrics::Metrics;
use crate::room::RoomMsg;

/// A table in the lobby registry: the way into its actor, its latest summary, and the hash of
/// its password (checked by the connection, off the actor, before it asks to enter).
#[derive(Debug)]
pub(crate) struct TableEntry {
    pub tx: mpsc::Sender<RoomMsg>,
    pub summary: watch::Receiver<TableSummary>,
    pub password: Option<Arc<str>>,
}

/// What every connection and table task shares. Game state is not here: each table's state
/// belongs to its own task.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: ServerConfig,
    pub metrics: Arc<Metrics>,
    pub tables: DashMap<TableId, TableEntry>,
    /// Stops every connection (each has a child token).
    pub shutdown: CancellationToken,
    /// Stops every table actor; cancelled first, so that no table publishes while connections
    /// are closing.
    pub stop_tables: CancellationToken,
    /// Connection tasks.
    pub tasks: TaskTracker,
    /// Table actors.
    pub table_tasks: TaskTracker,
    /// Where every table's events are made durable before anyone sees them.
    pub journal: Journal,
    next_connection: AtomicU64,
    /// Open connections per peer address, for the per-IP cap.
    per_ip: DashMap<IpAddr, usize>,
    /// Tables open or reserved, for `--max-tables`: reserved before anything is written, so
    /// concurrent creations can never pass the cap.
    open_tables: AtomicUsize,
    /// Open tables per creating address, for `--max-tables-per-ip`.
    tables_per_ip: DashMap<IpAddr, usize>,
    /// Table creations per address, for `--table-creations-per-minute`.
    creations: DashMap<IpAddr, TokenBucket>,
    /// Spectating connections per address, for `--max-spectators-per-ip`.
    spectators_per_ip: DashMap<IpAddr, usize>,
    /// Wrong-password guesses per address and table, for `--wrong-passwords-per-minute`.
    guesses: DashMap<(IpAddr, TableId), TokenBucket>,
    /// Starts of watching per address, for `--watches-per-minute`.
    watches: DashMap<IpAddr, TokenBucket>,
}

impl Shared {
    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Relaxed)
    }

    /// Counts a connection from `ip` against the per-IP cap; `None` if the cap is reached.
    fn admit_ip(self: &Arc<Self>, ip: IpAddr) -> Option<IpSlot> {
        let cap = self.config.max_connections_per_ip;
        let mut count = self.per_ip.entry(ip).or_insert(0);
        if cap != 0 && *count >= cap {
            return None;
        }
        *count += 1;
        Some(IpSlot {
            shared: Arc::clone(self),
            ip,
        })
    }
}

/// Why a table cannot be created now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableRefusal {
    /// `--max-tables` tables are open.
    ServerFull,
    /// The address has `--max-tables-per-ip` open tables, or has created
    /// `--table-creations-per-minute` this minute.
    TooManyFromAddress,
}

impl Shared {
    /// Reserves a place for a new table created from `ip`, or says why not. The place is taken
    /// atomically (concurrent creations can never pass the caps) and given back when the
    /// returned slot is dropped: when creation fails, or when the table's actor ends.
    pub(crate) fn reserve_table(
        self: &Arc<Self>,
        ip: Option<IpAddr>,
        now: std::time::Instant,
    ) -> Result<TableSlot, TableRefusal> {
        let cap = self.config.max_tables;
        if self
            .open_tables
            .fetch_update(Relaxed, Relaxed, |n| (n < cap).then_some(n + 1))
            .is_err()
        {
            return Err(TableRefusal::ServerFull);
        }
        let mut slot = TableSlot {
            shared: Arc::clone(self),
            ip: None,
        };
        let Some(ip) = ip else { return Ok(slot) };
        let per_ip = self.config.max_tables_per_ip;
        {
            let mut count = self.tables_per_ip.entry(ip).or_insert(0);
            if per_ip != 0 && *count >= per_ip {
                return Err(TableRefusal::TooManyFromAddress);
            }
            let per_minute = self.config.table_creations_per_minute;
            if per_minute != 0 {
                let per_minute = f64::from(per_minute);
                let mut bucket = self
                    .creations
                    .entry(ip)
                    .or_insert_with(|| TokenBucket::new(per_minute, per_minute / 60.0, now));
                if !bucket.take(now) {
                    return Err(TableRefusal::TooManyFromAddress);
                }
            }
            *count += 1;
        }
        slot.ip = Some(ip);
        Ok(slot)
    }

    /// Counts a spectator from `ip` against `--max-spectators-per-ip`; `None` if the cap is
    /// reached. The place is given back when the slot is dropped.
    pub(crate) fn admit_spectator(self: &Arc<Self>, ip: IpAddr) -> Option<SpectatorSlot> {
        let cap = self.config.max_spectators_per_ip;
        let mut count = self.spectators_per_ip.entry(ip).or_insert(0);
        if cap != 0 && *count >= cap {
            return None;
        }
        *count += 1;
        Some(SpectatorSlot {
            shared: Arc::clone(self),
            ip,
        })
    }

    /// Whether `ip` may start watching a table now (`--watches-per-minute`); takes a token.
    pub(crate) fn may_watch(&self, ip: IpAddr, now: std::time::Instant) -> bool {
        let per_minute = self.config.watches_per_minute;
        if per_minute <= 0.0 {
            return true;
        }
        self.watches
            .entry(ip)
            .or_insert_with(|| TokenBucket::new(10.0, per_minute / 60.0, now))
            .take(now)
    }

    /// Whether `ip` may try a password at `table` now (wrong guesses are limited per address
    /// and table; a right one costs nothing).
    pub(crate) fn may_guess(&self, ip: IpAddr, table: TableId, now: std::time::Instant) -> bool {
        let per_minute = self.config.wrong_passwords_per_minute;
        if per_minute <= 0.0 {
            return true;
        }
        let bucket = self
            .guesses
            .entry((ip, table))
            .or_insert_with(|| TokenBucket::new(5.0, per_minute / 60.0, now));
        bucket.peek(now)
    }

    /// Records a wrong password from `ip` at `table`.
    pub(crate) fn wrong_guess(&self, ip: IpAddr, table: TableId, now: std::time::Instant) {
        let per_minute = self.config.wrong_passwords_per_minute;
        self.guesses
            .entry((ip, table))
            .or_insert_with(|| TokenBucket::new(5.0, per_minute / 60.0, now))
            .take(now);
    }

    /// Forgets rate-limit state that has refilled completely (so the maps do not grow with every
    /// address ever seen).
    pub(crate) fn prune_limits(&self, now: std::time::Instant) {
        self.guesses.retain(|_, bucket| !bucket.is_full(now));
        self.creations.retain(|_, bucket| !bucket.is_full(now));
        self.watches.retain(|_, bucket| !bucket.is_full(now));
    }

    /// A place for a table recovered from the journal: counted, but never refused (the tables
    /// were open before the restart).
    pub(crate) fn recovered_table(self: &Arc<Self>) -> TableSlot {
        self.open_tables.fetch_add(1, Relaxed);
        TableSlot {
            shared: Arc::clone(self),
            ip: None,
        }
    }
}

/// A table's place under `--max-tables` (and its creator's under `--max-tables-per-ip`), given
/// back when dropped.
#[derive(Debug)]
pub(crate) struct TableSlot {
    shared: Arc<Shared>,
    ip: Option<IpAddr>,
}

impl Drop for TableSlot {
    fn drop(&mut self) {
        self.shared.open_tables.fetch_sub(1, Relaxed);
        if let Some(ip) = self.ip {
            self.shared.tables_per_ip.remove_if_mut(&ip, |_, count| {
                *count -= 1;
                *count == 0
            });
        }
    }
}

/// A spectator's place under `--max-spectators-per-ip`, given back when dropped.
#[derive(Debug)]
pub(crate) struct SpectatorSlot {
    shared: Arc<Shared>,
    ip: IpAddr,
}

impl Drop for SpectatorSlot {
    fn drop(&mut self) {
        self.shared
            .spectators_per_ip
            .remove_if_mut(&self.ip, |_, count| {
                *count -= 1;
                *count == 0
            });
    }
}

/// One connection's place under the per-IP cap, given back when dropped.
#[derive(Debug)]
struct IpSlot {
    shared: Arc<Shared>,
    ip: IpAddr,
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        self.shared.per_ip.remove_if_mut(&self.ip, |_, count| {
            *count -= 1;
            *count == 0
        });
    }
}

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Server {
    /// Opens the journal in `config.data_dir`, rebuilds every unfinished table from it, and binds
    /// the listening socket (port 0 picks a free port).
    pub async fn bind(config: ServerConfig) -> std::io::Result<Self> {
        let (dir, durability) = (config.data_dir.clone(), config.durability);
        let journal = tokio::task::spawn_blocking(move || Journal::open(&dir, durability))
            .await
            .map_err(std::io::Error::other)?
            .map_err(|error| {
                std::io::Error::other(format!("journal in {}: {error}", config.data_dir.display()))
            })?;
        let listener = TcpListener::bind(config.listen).await?;
        let shared = Arc::new(Shared {
            config,
            metrics: Arc::new(Metrics::default()),
            tables: DashMap::new(),
            shutdown: CancellationToken::new(),
            stop_tables: CancellationToken::new(),
            table_tasks: TaskTracker::new(),
            tasks: TaskTracker::new(),
            next_connection: AtomicU64::new(1),
            per_ip: DashMap::new(),
            open_tables: AtomicUsize::new(0),
            tables_per_ip: DashMap::new(),
            creations: DashMap::new(),
            spectators_per_ip: DashMap::new(),
            guesses: DashMap::new(),
            watches: DashMap::new(),
            journal,
        });
        crate::room::recover_all(&shared)
            .await
            .map_err(std::io::Error::other)?;
        Ok(Self { listener, shared })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The server's counters (the same ones `GET /metrics` shows).
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.shared.metrics)
    }

    /// Serves until `shutdown` completes, then stops accepting, stops every table, closes every
    /// WebSocket with 1001 (going away) after what was queued for it, and returns once every
    /// task has finished and the journal is closed.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let Self { listener, shared } = self;
        let permits = Arc::new(Semaphore::new(shared.config.max_connections));
        match listener.local_addr() {
            Ok(addr) => info!(%addr, "listening"),
            Err(error) => warn!(%error, "listening on an unknown address"),
        }
        tokio::pin!(shutdown);
        shared
            .tasks
            .spawn(maintenance(Arc::clone(&shared), shared.shutdown.clone()));
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Out of file descriptors and the like: back off briefly instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            Metrics::add(&shared.metrics.connections_total, 1);
            let admitted = Arc::clone(&permits)
                .try_acquire_owned()
                .ok()
                .and_then(|permit| Some((permit, shared.admit_ip(peer.ip())?)));
            let Some((permit, slot)) = admitted else {
                Metrics::add(&shared.metrics.connections_refused, 1);
                shared.tasks.spawn(refuse(stream));
                continue;
            };
            let shared2 = Arc::clone(&shared);
            shared.tasks.spawn(async move {
                connection::serve(stream, peer, shared2).await;
                drop(slot);
                drop(permit);
            });
        }
        info!("shutting down");
        drop(listener);
        // Tables first: each finishes the request in hand (its events made durable and queued),
        // then stops. Then the connections: each delivers what is queued and closes with 1001.
        shared.stop_tables.cancel();
        shared.table_tasks.close();
        shared.table_tasks.wait().await;
        shared.shutdown.cancel();
        shared.tasks.close();
        shared.tasks.wait().await;
        if let Err(error) = shared.journal.clone().close().await {
            warn!(%error, "closing the journal");
        }
        info!("stopped");
    }
}

/// How often the server tidies up: forgets rate-limit state that has refilled and deletes
/// replays past `--replay-retention-days`.
const MAINTENANCE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

/// Tidies up at start and then every [`MAINTENANCE_INTERVAL`] until the server stops: forgets
/// refilled rate-limit state, and deletes the finished games older than
/// `--replay-retention-days` (0: kept forever). The first round always runs to its end, even if
/// the server is stopping already.
async fn maintenance(shared: Arc<Shared>, stop: CancellationToken) {
    let mut interval = tokio::time::interval(MAINTENANCE_INTERVAL);
    // The first tick completes at once.
    interval.tick().await;
    loop {
        shared.prune_limits(std::time::Instant::now());
        let days = shared.config.replay_retention_days;
        if days > 0 {
            if shared.journal.damage().is_some() {
                warn!(
                    retention_days = days,
                    "replay retention is suspended while the journal is damaged"
                );
            } else {
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |now| u64::try_from(now.as_millis()).unwrap_or(u64::MAX));
                let cutoff = now_ms.saturating_sub(u64::from(days) * 86_400_000);
                match shared.journal.prune_replays(cutoff).await {
                    Ok(0) => debug!(retention_days = days, "no replay past its retention"),
                    Ok(count) => {
                        Metrics::add(&shared.metrics.replays_pruned, count);
                        info!(
                            count,
                            retention_days = days,
                            "deleted replays past their retention"
                        );
                    }
                    Err(error) => warn!(%error, retention_days = days, "pruning old replays"),
                }
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            _ = interval.tick() => {}
        }
    }
}

/// Answers a connection over the cap with 503 and closes it.
async fn refuse(mut stream: TcpStream) {
    let answer = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 12\r\nConnection: close\r\n\r\nserver full\n";
    if let Err(error) = stream.write_all(answer).await {
        debug!(%error, "refusing a connection");
    }
    let _ = stream.shutdown().await;
}
