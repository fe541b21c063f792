//! The accept loop and what every task shares.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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
use crate::metrics::Metrics;
use crate::room::RoomMsg;

/// A table in the lobby registry: the way into its actor, and its latest summary.
#[derive(Debug)]
pub(crate) struct TableEntry {
    pub tx: mpsc::Sender<RoomMsg>,
    pub summary: watch::Receiver<TableSummary>,
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
            journal,
        });
        crate::room::recover_all(&shared)
            .await
            .map_err(|error| std::io::Error::other(format!("recovering tables: {error}")))?;
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

/// Answers a connection over the cap with 503 and closes it.
async fn refuse(mut stream: TcpStream) {
    let answer = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 12\r\nConnection: close\r\n\r\nserver full\n";
    if let Err(error) = stream.write_all(answer).await {
        debug!(%error, "refusing a connection");
    }
    let _ = stream.shutdown().await;
}
