//! One client connection: the HTTP routing, then a WebSocket session split into a reader (this
//! task: decodes requests, answers session requests, forwards table requests to the table's
//! actor) and a writer task (drains a bounded queue of encoded frames, batching writes).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use bytes::Bytes;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage, close,
};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use crate::http::{self, Route};
use crate::metrics::Metrics;
use crate::room::{self, Entry, RoomMsg};
use crate::server::Shared;

/// The way a table actor (or the reader) talks to one connection: a bounded queue of encoded
/// frames and a way to close it with a code.
#[derive(Debug, Clone)]
pub(crate) struct Conn {
    pub id: u64,
    out: mpsc::Sender<Bytes>,
    kick: CancellationToken,
    close_code: Arc<AtomicU16>,
    /// Bytes queued and not yet handed to the socket.
    queued_bytes: Arc<AtomicUsize>,
    max_queued_bytes: usize,
    metrics: Arc<Metrics>,
}

impl Conn {
    /// Queues one encoded frame. A full queue means the client cannot keep up: it is closed
    /// (1008) rather than allowed to stall whoever is sending. Returns whether it was queued.
    /// The caller counts what it sends (once per batch, not once per frame: the counters are
    /// shared by every thread).
    pub fn send(&self, frame: Bytes) -> bool {
        let len = frame.len();
        let queued = self.queued_bytes.fetch_add(len, Relaxed) + len;
        let result = if queued > self.max_queued_bytes {
            Err(mpsc::error::TrySendError::Full(frame))
        } else {
            self.out.try_send(frame)
        };
        match result {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.queued_bytes.fetch_sub(len, Relaxed);
                if !self.kick.is_cancelled() {
                    Metrics::add(&self.metrics.slow_readers_dropped, 1);
                    info!(
                        connection = self.id,
                        "outgoing queue full: dropping a slow reader"
                    );
                    self.close(close::POLICY_VIOLATION);
                }
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.queued_bytes.fetch_sub(len, Relaxed);
                false
            }
        }
    }

    /// Encodes and queues one message, counting it.
    pub fn send_message(&self, message: &ServerMessage) -> bool {
        let frame = Bytes::from(wire::encode_server(message));
        let len = frame.len();
        let sent = self.send(frame);
        if sent {
            self.metrics.count_out(1, len);
        }
        sent
    }

    /// Answers a request with a typed error.
    pub fn reject(&self, request: Option<&ClientMessage>, code: ErrorCode) {
        Metrics::add(&self.metrics.rejected, 1);
        self.send_message(&ServerMessage::error(request, code));
    }

    /// Closes the connection with a WebSocket close code (the first code set wins).
    pub fn close(&self, code: u16) {
        if !self.kick.is_cancelled() {
            self.close_code.store(code, Relaxed);
            self.kick.cancel();
        }
    }
}

/// The human-readable reason sent with a close code.
fn close_reason(code: u16) -> &'static str {
    match code {
        close::NORMAL => "bye",
        close::GOING_AWAY => "server going away",
        close::PROTOCOL_ERROR => "protocol error",
        close::POLICY_VIOLATION => "outgoing queue overflow or idle",
        close::MESSAGE_TOO_BIG => "message too big",
        _ => "",
    }
}

fn websocket_config(config: &crate::ServerConfig) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(config.read_buffer_bytes.max(256))
        // tungstenite's write buffer keeps the capacity of the largest frame it ever held, for
        // the life of the connection: a small target plus `fragments` keeps it near 1 KiB.
        .write_buffer_size(FRAGMENT_BYTES)
        .max_write_buffer_size(1 << 20)
        .max_message_size(Some(config.max_message_bytes()))
        .max_frame_size(Some(config.max_message_bytes()))
}

/// A token bucket: `capacity` tokens, refilled at `per_second`.
#[derive(Debug)]
struct TokenBucket {
    capacity: f64,
    per_second: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    fn new(capacity: f64, per_second: f64, now: Instant) -> Self {
        let capacity = capacity.max(1.0);
        Self {
            capacity,
            per_second: per_second.max(0.0),
            tokens: capacity,
            last: now,
        }
    }

    /// Takes one token if there is one.
    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.capacity);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Per-connection rate limits: requests, chat lines, and strikes for requests over the limit.
#[derive(Debug)]
struct RateLimits {
    requests: TokenBucket,
    chat: TokenBucket,
    strikes: TokenBucket,
}

impl RateLimits {
    fn new(config: &crate::ServerConfig, now: Instant) -> Self {
        Self {
            requests: TokenBucket::new(config.rate_burst, config.rate_limit, now),
            chat: TokenBucket::new(5.0, config.chat_per_minute / 60.0, now),
            strikes: TokenBucket::new(config.flood_strikes, 5.0, now),
        }
    }

    /// Whether a request may go through now.
    fn admit(&mut self, request: &ClientMessage, now: Instant) -> bool {
        let chat_ok = !matches!(request, ClientMessage::Chat { .. }) || self.chat.take(now);
        chat_ok && self.requests.take(now)
    }
}

/// Serves one TCP connection to the end.
pub(crate) async fn serve(mut stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) {
    let metrics = Arc::clone(&shared.metrics);
    metrics.connections_open.fetch_add(1, Relaxed);
    let _ = stream.set_nodelay(true);
    if shared.config.send_buffer_bytes > 0 {
        let socket = socket2::SockRef::from(&stream);
        if let Err(error) = socket.set_send_buffer_size(shared.config.send_buffer_bytes) {
            debug!(%error, "cannot set the send buffer size");
        }
    }
    let routed = tokio::time::timeout(
        shared.config.handshake_timeout(),
        // Boxed: the routing state (request buffer, headers) is freed once routed instead of
        // living in the connection's task for as long as the connection.
        Box::pin(http::route(
            &mut stream,
            &shared.config.allowed_origins,
            || metrics.render(),
        )),
    )
    .await;
    if let Ok(Ok(Route::WebSocket { rest })) = routed {
        let ws = WebSocketStream::from_partially_read(
            stream,
            rest,
            Role::Server,
            Some(websocket_config(&shared.config)),
        )
        .await;
        metrics.websockets_open.fetch_add(1, Relaxed);
        session(ws, peer, &shared).await;
        metrics.websockets_open.fetch_sub(1, Relaxed);
    } else if routed.is_err() {
        debug!(%peer, "handshake timed out");
    }
    metrics.connections_open.fetch_sub(1, Relaxed);
}

/// Where the session stands: before `hello`, in the lobby, or in a table.
#[derive(Debug)]
enum State {
    New,
    Lobby,
    InTable(room::Membership),
}

async fn session(ws: WebSocketStream<TcpStream>, peer: SocketAddr, shared: &Arc<Shared>) {
    let (sink, mut stream) = ws.split();
    let (out, rx) = mpsc::channel(shared.config.outgoing_queue.max(1));
    let kick = shared.shutdown.child_token();
    let conn = Conn {
        id: shared.next_connection_id(),
        out,
        kick: kick.clone(),
        close_code: Arc::new(AtomicU16::new(close::GOING_AWAY)),
        queued_bytes: Arc::new(AtomicUsize::new(0)),
        max_queued_bytes: shared.config.outgoing_queue_bytes.max(1024),
        metrics: Arc::clone(&shared.metrics),
    };
    debug!(%peer, connection = conn.id, "websocket open");
    let writer = tokio::spawn(write_frames(
        sink,
        rx,
        kick.clone(),
        Arc::clone(&conn.close_code),
        Arc::clone(&conn.queued_bytes),
        shared.config.ping_interval(),
    ));
    let mut state = State::New;
    let mut limits = RateLimits::new(&shared.config, Instant::now());
    let idle = shared.config.idle_timeout();
    // Made once, not on every message: each costs a registration.
    let cancelled = kick.cancelled();
    tokio::pin!(cancelled);
    let silence = tokio::time::sleep(idle);
    tokio::pin!(silence);
    loop {
        let next = tokio::select! {
            () = &mut cancelled => break,
            () = &mut silence => {
                debug!(connection = conn.id, "idle: no frame or pong in time");
                conn.close(close::POLICY_VIOLATION);
                break;
            }
            next = stream.next() => next,
        };
        let message = match next {
            None => break,
            Some(Err(WsError::Capacity(_))) => {
                conn.reject(None, ErrorCode::BadMessage);
                conn.close(close::MESSAGE_TOO_BIG);
                break;
            }
            Some(Err(WsError::Protocol(_))) => {
                conn.close(close::PROTOCOL_ERROR);
                break;
            }
            Some(Err(_)) => break,
            Some(Ok(message)) => message,
        };
        let received = Instant::now();
        silence
            .as_mut()
            .reset(tokio::time::Instant::from_std(received) + idle);
        match message {
            Message::Binary(bytes) => {
                Metrics::add(&shared.metrics.messages_in, 1);
                Metrics::add(&shared.metrics.bytes_in, bytes.len() as u64);
                match wire::decode_client(&bytes) {
                    Ok(request) if !limits.admit(&request, received) => {
                        conn.reject(Some(&request), ErrorCode::RateLimited);
                        if !limits.strikes.take(received) {
                            info!(connection = conn.id, %peer, "flooding: disconnected");
                            conn.close(close::POLICY_VIOLATION);
                            break;
                        }
                    }
                    Ok(request) => handle(request, &mut state, &conn, shared, received).await,
                    Err(error) => {
                        debug!(connection = conn.id, %error, "undecodable message");
                        conn.reject(None, error.code());
                    }
                }
            }
            Message::Text(_) => conn.reject(None, ErrorCode::BadMessage),
            Message::Close(_) => {
                conn.close(close::NORMAL);
                break;
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
    if let State::InTable(membership) = state {
        let _ = membership
            .tx
            .send(RoomMsg::Gone {
                connection: conn.id,
            })
            .await;
    }
    conn.close(close::NORMAL);
    let _ = writer.await;
    debug!(connection = conn.id, "websocket closed");
}

/// Answers one decoded request.
async fn handle(
    request: ClientMessage,
    state: &mut State,
    conn: &Conn,
    shared: &Arc<Shared>,
    received: Instant,
) {
    match (&*state, request) {
        (State::New, ClientMessage::Hello { id, protocol, .. }) => {
            if protocol != PROTOCOL_VERSION {
                let request = ClientMessage::Hello {
                    id,
                    protocol,
                    client: String::new(),
                };
                conn.reject(Some(&request), ErrorCode::UnsupportedVersion);
                conn.close(close::PROTOCOL_ERROR);
                return;
            }
            *state = State::Lobby;
            conn.send_message(&ServerMessage::Welcome {
                reply_to: id,
                protocol: PROTOCOL_VERSION,
                server: format!("grand-melee-server {}", env!("CARGO_PKG_VERSION")),
            });
        }
        (State::New, request) => conn.reject(Some(&request), ErrorCode::HelloRequired),
        (_, request @ ClientMessage::Hello { .. }) => {
            conn.reject(Some(&request), ErrorCode::BadMessage)
        }
        (_, ClientMessage::ListReplays { id }) => {
            let journal = shared.journal.clone();
            match tokio::task::spawn_blocking(move || journal.replays()).await {
                Ok(Ok(replays)) => {
                    let replays = replays
                        .into_iter()
                        .map(|r| wire::ReplaySummary {
                            table: r.id,
                            name: r.name,
                            created_at_ms: r.created_at_ms,
                            finished_at_ms: r.finished_at_ms,
                            events: r.events,
                        })
                        .collect();
                    conn.send_message(&ServerMessage::Replays {
                        reply_to: id,
                        replays,
                    });
                }
                _ => conn.reject(
                    Some(&ClientMessage::ListReplays { id }),
                    ErrorCode::StorageFailed,
                ),
            }
        }
        (_, request @ ClientMessage::GetReplay { .. }) => {
            let ClientMessage::GetReplay { id, table } = request else {
                return;
            };
            match room::replay(shared, table).await {
                Ok(replay) => {
                    conn.send_message(&replay.answering(id));
                }
                Err(code) => conn.reject(Some(&request), code),
            }
        }
        (_, ClientMessage::ListTables { id }) => {
            let mut tables: Vec<_> = shared
                .tables
                .iter()
                .map(|entry| entry.summary.borrow().clone())
                .collect();
            tables.sort_by(|a, b| a.name.cmp(&b.name).then(a.table.cmp(&b.table)));
            conn.send_message(&ServerMessage::Tables {
                reply_to: id,
                tables,
            });
        }
        (_, request @ ClientMessage::CreateTable { .. }) => {
            match room::create(&request, shared).await {
                Ok(table) => {
                    conn.send_message(&ServerMessage::TableCreated {
                        reply_to: request.id(),
                        table,
                    });
                }
                Err(code) => conn.reject(Some(&request), code),
            }
        }
        (
            State::InTable(_),
            request @ (ClientMessage::Join { .. }
            | ClientMessage::Watch { .. }
            | ClientMessage::Resume { .. }),
        ) => {
            conn.reject(Some(&request), ErrorCode::AlreadyInTable);
        }
        (
            State::Lobby,
            request @ (ClientMessage::Join { .. }
            | ClientMessage::Watch { .. }
            | ClientMessage::Resume { .. }),
        ) => {
            let (table, entry) = match &request {
                ClientMessage::Join {
                    table,
                    name,
                    password,
                    ..
                } => (
                    *table,
                    Entry::Join {
                        name: name.clone(),
                        password: password.clone(),
                    },
                ),
                ClientMessage::Watch {
                    table, password, ..
                } => (
                    *table,
                    Entry::Watch {
                        password: password.clone(),
                    },
                ),
                ClientMessage::Resume { table, token, .. } => {
                    (*table, Entry::Resume { token: *token })
                }
                _ => return,
            };
            let Some(tx) = shared.tables.get(&table).map(|e| e.tx.clone()) else {
                conn.reject(Some(&request), ErrorCode::UnknownTable);
                return;
            };
            let (reply, answer) = oneshot::channel();
            let enter = RoomMsg::Enter {
                conn: conn.clone(),
                request_id: request.id(),
                entry,
                reply,
            };
            if tx.send(enter).await.is_err() {
                conn.reject(Some(&request), ErrorCode::UnknownTable);
                return;
            }
            match answer.await {
                Ok(Ok(_role)) => *state = State::InTable(room::Membership { tx }),
                Ok(Err(code)) => conn.reject(Some(&request), code),
                Err(_) => conn.reject(Some(&request), ErrorCode::UnknownTable),
            }
        }
        (State::InTable(membership), ClientMessage::Leave { id }) => {
            let (reply, answer) = oneshot::channel();
            let leave = RoomMsg::Leave {
                connection: conn.id,
                request_id: id,
                reply,
            };
            if membership.tx.send(leave).await.is_ok() {
                let _ = answer.await;
            } else {
                conn.send_message(&ServerMessage::Left { reply_to: id });
            }
            *state = State::Lobby;
        }
        (State::InTable(membership), request) => {
            let tx = membership.tx.clone();
            let forward = RoomMsg::Request {
                connection: conn.id,
                request,
                received,
            };
            if let Err(mpsc::error::SendError(RoomMsg::Request { request, .. })) =
                tx.send(forward).await
            {
                conn.reject(Some(&request), ErrorCode::NotInTable);
                *state = State::Lobby;
            }
        }
        (State::Lobby, request) => conn.reject(Some(&request), ErrorCode::NotInTable),
    }
}

/// The writer task: drains the queue, feeding every frame that is ready and flushing once, sends
/// pings, and closes with the connection's close code when told to.
async fn write_frames(
    mut sink: SplitSink<WebSocketStream<TcpStream>, Message>,
    mut rx: mpsc::Receiver<Bytes>,
    kick: CancellationToken,
    close_code: Arc<AtomicU16>,
    queued_bytes: Arc<AtomicUsize>,
    ping_interval: std::time::Duration,
) {
    let take = |frame: Bytes| {
        queued_bytes.fetch_sub(frame.len(), Relaxed);
        frame
    };
    let mut ping = tokio::time::interval(ping_interval);
    ping.reset();
    // Made once, not on every wake-up: each costs a registration.
    let cancelled = kick.cancelled();
    tokio::pin!(cancelled);
    loop {
        let written = tokio::select! {
            biased;
            () = &mut cancelled => break,
            frame = rx.recv() => {
                let Some(frame) = frame else { break };
                let write = async {
                    feed_fragments(&mut sink, take(frame)).await?;
                    while let Ok(frame) = rx.try_recv() {
                        feed_fragments(&mut sink, take(frame)).await?;
                    }
                    sink.flush().await
                };
                tokio::select! {
                    () = &mut cancelled => break,
                    written = write => written,
                }
            }
            _ = ping.tick() => sink.send(Message::Ping(Bytes::new())).await,
        };
        if written.is_err() {
            kick.cancel();
            return;
        }
    }
    let code = close_code.load(Relaxed);
    let goodbye = async {
        // Deliver what was already queued (the last events before a shutdown, the errors that
        // explain a close). A reader too slow to take them runs into the timeout below.
        while let Ok(frame) = rx.try_recv() {
            feed_fragments(&mut sink, take(frame)).await?;
        }
        sink.send(Message::Close(Some(CloseFrame {
            code: CloseCode::from(code),
            reason: close_reason(code).into(),
        })))
        .await
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), goodbye).await;
}

/// The largest WebSocket frame the server writes. Longer messages (snapshots of big tables) go
/// out as a binary frame and continuation frames of at most this size, which every WebSocket
/// library reassembles into one message; this keeps tungstenite's write buffer small for the
/// life of each connection.
const FRAGMENT_BYTES: usize = 1024;

/// Feeds one binary message to the sink, in fragments of at most [`FRAGMENT_BYTES`].
async fn feed_fragments(
    sink: &mut SplitSink<WebSocketStream<TcpStream>, Message>,
    message: Bytes,
) -> Result<(), WsError> {
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    if message.len() <= FRAGMENT_BYTES {
        return sink.feed(Message::Binary(message)).await;
    }
    let mut start = 0;
    while start < message.len() {
        let end = (start + FRAGMENT_BYTES).min(message.len());
        let opcode = if start == 0 {
            OpCode::Data(Data::Binary)
        } else {
            OpCode::Data(Data::Continue)
        };
        let frame = Frame::message(message.slice(start..end), opcode, end == message.len());
        sink.feed(Message::Frame(frame)).await?;
        start = end;
    }
    Ok(())
}
