//! The baseline: a bare tokio-tungstenite fan-out relay. No rules, no protocol checks: a
//! connection to `/relay/<group>` joins the group, and every frame a client sends is forwarded
//! to every connection of its group (the sender included, which stands for the `ack`).
//!
//! It is built the way the server is built, so the difference between them is the server's
//! own work: the same WebSocket buffer settings, a reader per connection, and a writer task per
//! connection that drains a bounded queue of shared `Bytes` with `feed` and one `flush`.
//!
//! With [`RelayConfig::tls`] it terminates TLS as the server does (tokio-rustls, in the
//! connection's own task, before the WebSocket upgrade): `wss://` on the same paths.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, info};

/// The relay's settings.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// Address to listen on (port 0 picks one).
    pub listen: SocketAddr,
    /// WebSocket read buffer per connection, bytes (the server's default: 4 KiB).
    pub read_buffer_bytes: usize,
    /// Frames queued per connection before further ones are dropped (the server's default: 256).
    pub queue: usize,
    /// Terminate TLS with this configuration (`wss://`); `None`: plain `ws://`.
    pub tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
}

/// How long a TLS handshake may take before the connection is dropped.
const TLS_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

impl Default for RelayConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            read_buffer_bytes: 4 * 1024,
            queue: 256,
            tls: None,
        }
    }
}

/// The relay's counters.
#[derive(Debug, Default)]
pub struct RelayStats {
    /// Frames received from clients.
    pub frames_in: AtomicU64,
    /// Frames queued to clients.
    pub frames_out: AtomicU64,
    /// Frames dropped because a client's queue was full.
    pub dropped: AtomicU64,
    /// Connections open now.
    pub open: AtomicU64,
}

type Members = RwLock<Vec<(u64, mpsc::Sender<Bytes>)>>;

#[derive(Debug, Default)]
struct Groups {
    groups: Mutex<HashMap<String, Arc<Members>>>,
    next_id: AtomicU64,
}

impl Groups {
    fn join(&self, name: &str, id: u64, tx: mpsc::Sender<Bytes>) -> Option<Arc<Members>> {
        let mut groups = self.groups.lock().ok()?;
        let members = Arc::clone(groups.entry(name.to_owned()).or_default());
        members.write().ok()?.push((id, tx));
        Some(members)
    }

    fn leave(&self, name: &str, id: u64) {
        let Ok(mut groups) = self.groups.lock() else {
            return;
        };
        let empty = groups.get(name).is_some_and(|members| {
            members.write().is_ok_and(|mut members| {
                members.retain(|(member, _)| *member != id);
                members.is_empty()
            })
        });
        if empty {
            groups.remove(name);
        }
    }
}

/// A bound relay, ready to run.
#[derive(Debug)]
pub struct Relay {
    listener: TcpListener,
    config: RelayConfig,
    stats: Arc<RelayStats>,
}

impl Relay {
    /// Binds the listening socket.
    pub async fn bind(config: RelayConfig) -> std::io::Result<Self> {
        let listener = TcpListener::bind(config.listen).await?;
        Ok(Self {
            listener,
            config,
            stats: Arc::default(),
        })
    }

    /// The address the relay listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The relay's counters.
    pub fn stats(&self) -> Arc<RelayStats> {
        Arc::clone(&self.stats)
    }

    /// Relays until `shutdown` completes, then closes every connection and returns once they
    /// have all finished.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let Self {
            listener,
            config,
            stats,
        } = self;
        let groups = Arc::new(Groups::default());
        let tasks = TaskTracker::new();
        let stop = CancellationToken::new();
        let ws_config = WebSocketConfig::default()
            .read_buffer_size(config.read_buffer_bytes.max(256))
            .write_buffer_size(16 * 1024)
            .max_write_buffer_size(1 << 20)
            .max_message_size(Some(16 * 1024))
            .max_frame_size(Some(16 * 1024));
        let acceptor = config.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        tokio::pin!(shutdown);
        loop {
            let (stream, _) = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(error) => {
                        debug!(%error, "accept failed");
                        continue;
                    }
                },
            };
            let _ = stream.set_nodelay(true);
            let (groups, stats, queue, stop) = (
                Arc::clone(&groups),
                Arc::clone(&stats),
                config.queue.max(1),
                stop.clone(),
            );
            match &acceptor {
                None => {
                    tasks.spawn(serve(stream, groups, stats, ws_config, queue, stop));
                }
                Some(acceptor) => {
                    let accept = acceptor.accept(stream);
                    tasks.spawn(async move {
                        let tls = tokio::select! {
                            () = stop.cancelled() => return,
                            tls = tokio::time::timeout(TLS_PATIENCE, accept) => tls,
                        };
                        match tls {
                            Ok(Ok(tls)) => serve(tls, groups, stats, ws_config, queue, stop).await,
                            Ok(Err(error)) => debug!(%error, "TLS handshake failed"),
                            Err(_) => debug!("TLS handshake timed out"),
                        }
                    });
                }
            }
        }
        info!("relay shutting down");
        drop(listener);
        stop.cancel();
        tasks.close();
        tasks.wait().await;
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    stream: S,
    groups: Arc<Groups>,
    stats: Arc<RelayStats>,
    ws_config: WebSocketConfig,
    queue: usize,
    stop: CancellationToken,
) {
    let id = groups.next_id.fetch_add(1, Relaxed);
    let (tx, mut rx) = mpsc::channel::<Bytes>(queue);
    let mut group: Option<(String, Arc<Members>)> = None;
    // tungstenite fixes the callback's error type.
    #[allow(clippy::result_large_err)]
    let register = |request: &Request, response: Response| {
        let name = request
            .uri()
            .path()
            .trim_start_matches("/relay/")
            .to_owned();
        // Joining before the handshake completes: once the client sees the upgrade, it is in
        // its group and receives every later frame.
        group = groups.join(&name, id, tx).map(|members| (name, members));
        Ok(response)
    };
    let ws =
        tokio_tungstenite::accept_hdr_async_with_config(stream, register, Some(ws_config)).await;
    let (Ok(ws), Some((name, members))) = (ws, group) else {
        return;
    };
    stats.open.fetch_add(1, Relaxed);
    let (mut sink, mut source) = ws.split();
    let writer_stop = stop.clone();
    let writer = tokio::spawn(async move {
        loop {
            let frame = tokio::select! {
                () = writer_stop.cancelled() => break,
                frame = rx.recv() => frame,
            };
            let Some(frame) = frame else { break };
            let write = async {
                sink.feed(Message::Binary(frame)).await?;
                while let Ok(frame) = rx.try_recv() {
                    sink.feed(Message::Binary(frame)).await?;
                }
                sink.flush().await
            };
            if write.await.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    });
    loop {
        let frame = tokio::select! {
            () = stop.cancelled() => break,
            frame = source.next() => frame,
        };
        match frame {
            Some(Ok(Message::Binary(bytes))) => {
                stats.frames_in.fetch_add(1, Relaxed);
                let Ok(members) = members.read() else { break };
                for (_, member) in members.iter() {
                    if member.try_send(bytes.clone()).is_ok() {
                        stats.frames_out.fetch_add(1, Relaxed);
                    } else {
                        stats.dropped.fetch_add(1, Relaxed);
                    }
                }
            }
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => {}
        }
    }
    groups.leave(&name, id);
    drop(members);
    // The writer ends when every sender is gone (this connection's entry left the group) or
    // at shutdown.
    let _ = writer.await;
    stats.open.fetch_sub(1, Relaxed);
}
