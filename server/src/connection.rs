//! One client connection: the HTTP routing, then a WebSocket session, one future for both
//! directions, run by a host (`hosts`): it decodes requests, answers session requests, forwards
//! table requests to the table's actor, and writes what the connection's outbox could not write
//! at once (a TLS connection's writing has a task of its own: every frame waits for it).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::task::{Context, Poll};
use std::time::Instant;

use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage, close, text,
};
use tokio::io::ReadHalf;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tracing::{debug, info, warn};

use crate::conn::{Conn, Link, Refusal, close_reason};
use crate::frames::FrameReader;
use crate::hosts::Alarm;
use crate::http;
use crate::lobby::{self, Entry, RoomMsg, Shared};
use crate::metrics::Metrics;
use crate::outbox::{Frame, Outbox, WriteSide};
use crate::room;
use grand_melee_protocol::limit::{Level, Rate};
use grand_melee_protocol::server_limits as limits;

/// Per-connection rate limits: requests, chat lines, camera signals, and strikes for requests
/// over the limit. What each bucket holds, kept small (a connection keeps it for as long as it
/// lasts); their rates come from the settings on each look.
#[derive(Debug)]
struct RateLimits {
    /// (The buckets' times are offsets from the sessions' epoch, `Alarms::epoch`: kept by the
    /// hosts, not by each connection.)
    requests: Level,
    chat: Level,
    /// `signal`s take from their own bucket, not from `requests`: a camera link's offer, answer
    /// and ICE candidates come in bursts.
    signals: Level,
    strikes: Level,
}

/// The rates of a connection's buckets, from the settings.
struct Rates {
    requests: Rate,
    chat: Rate,
    signals: Rate,
    strikes: Rate,
}

impl Rates {
    fn of(config: &crate::ServerConfig) -> Self {
        Self {
            requests: Rate::new(config.rate_burst, config.rate_limit),
            chat: Rate::new(limits::CHAT_BURST, config.chat_per_minute / 60.0),
            signals: Rate::new(
                f64::from(grand_melee_protocol::SIGNAL_BURST),
                grand_melee_protocol::SIGNALS_PER_SECOND,
            ),
            strikes: Rate::new(
                config.flood_strikes,
                limits::FLOOD_STRIKES_FORGIVEN_PER_SECOND,
            ),
        }
    }
}

impl RateLimits {
    /// Every bucket full at `now` (times counted from `epoch`).
    fn new(config: &crate::ServerConfig, epoch: Instant, now: Instant) -> Self {
        let (rates, at) = (Rates::of(config), now.saturating_duration_since(epoch));
        Self {
            requests: Level::full(rates.requests, at),
            chat: Level::full(rates.chat, at),
            signals: Level::full(rates.signals, at),
            strikes: Level::full(rates.strikes, at),
        }
    }

    /// Whether a request may go through now. A `signal` also takes its bytes from the sender's
    /// address (`signal_bytes`: `--signal-bytes-per-second`).
    fn request(
        &mut self,
        config: &crate::ServerConfig,
        request: &ClientMessage,
        (epoch, now): (Instant, Instant),
        signal_bytes: impl FnOnce(usize) -> bool,
    ) -> Verdict {
        let (rates, at) = (Rates::of(config), now.saturating_duration_since(epoch));
        if let ClientMessage::Signal { payload, .. } = request {
            return if self.signals.take(rates.signals, at) && signal_bytes(payload.len()) {
                Verdict::Admit
            } else {
                self.over(&rates, at)
            };
        }
        let chat_ok =
            !matches!(request, ClientMessage::Chat { .. }) || self.chat.take(rates.chat, at);
        if chat_ok && self.requests.take(rates.requests, at) {
            Verdict::Admit
        } else {
            self.over(&rates, at)
        }
    }

    /// Whether a frame that is not a request (garbage, text, a ping) may go through now.
    fn frame(&mut self, config: &crate::ServerConfig, (epoch, now): (Instant, Instant)) -> Verdict {
        let (rates, at) = (Rates::of(config), now.saturating_duration_since(epoch));
        if self.requests.take(rates.requests, at) {
            Verdict::Admit
        } else {
            self.over(&rates, at)
        }
    }

    /// A frame over the limit: refused, or the last strike of a flooder.
    fn over(&mut self, rates: &Rates, at: std::time::Duration) -> Verdict {
        if self.strikes.take(rates.strikes, at) {
            Verdict::Refuse
        } else {
            Verdict::Close
        }
    }
}

/// What the rate limits say of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Within the limits.
    Admit,
    /// Over the limit: answered `rate_limited`, not carried out.
    Refuse,
    /// Over the limit once too often: the connection is closed.
    Close,
}

/// Closes a connection that kept sending over the rate limit.
fn close_flooder(conn: &Conn) {
    info!(connection = conn.id, peer = %conn.peer, "flooding: disconnected");
    conn.close_because(
        close::POLICY_VIOLATION,
        "flooding: too many requests over the rate limit",
    );
}

/// Serves one TCP connection: TLS first if the server has a certificate, then HTTP (pages,
/// health, metrics), then, if it asked for one, the WebSocket session, handed to a host (this
/// task ends there). `peer` is the socket's; the session's client is the one a
/// `--trusted-proxy` forwards, if it is one. `held` (the connection's places under the caps) is
/// dropped when the connection ends.
pub(crate) async fn serve<H: Send + 'static>(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    held: H,
) {
    let metrics = Arc::clone(&shared.metrics);
    metrics.connections_open.fetch_add(1, Relaxed);
    let _ = stream.set_nodelay(true);
    if shared.config.send_buffer_bytes > 0 {
        let socket = socket2::SockRef::from(&stream);
        if let Err(error) = socket.set_send_buffer_size(shared.config.send_buffer_bytes) {
            debug!(%error, "cannot set the send buffer size");
        }
    }
    let site = http::Site {
        origins: Arc::clone(&shared.origins),
        arrival: crate::origin::Arrival {
            local: stream.local_addr().ok(),
            secure: tls.is_some(),
            forwarded: false,
        },
        peer,
        trusted_proxies: Arc::clone(&shared.trusted_proxies),
        admit: {
            let shared = Arc::clone(&shared);
            http::Admit(Arc::new(move |client| {
                shared
                    .admit_ip(client)
                    .map(|slot| Box::new(slot) as http::Place)
            }))
        },
        web_dir: shared.config.web_dir.clone(),
        metrics: Arc::clone(&metrics),
        qr: Arc::clone(&shared.qr),
        invite: Arc::clone(&shared.invite),
        handshake_timeout: shared.config.handshake_timeout(),
        connect_elsewhere: shared.cluster.as_ref().map(|cluster| {
            let cluster = Arc::clone(cluster);
            http::ConnectElsewhere(Arc::new(move || cluster.websocket_origins_elsewhere()))
        }),
    };
    // Boxed: the TLS and HTTP state is freed once the WebSocket takes over.
    let upgraded = Box::pin(handshake(
        stream,
        peer,
        tls,
        site,
        shared.config.handshake_timeout(),
    ));
    // Taken apart in the statement that awaits it.
    let (stream, rest, client, slot) = match upgraded.await {
        Some(http::Upgraded {
            io,
            rest,
            client,
            slot,
        }) => (io, rest, client, slot),
        None => {
            metrics.connections_open.fetch_sub(1, Relaxed);
            return;
        }
    };
    metrics.websockets_open.fetch_add(1, Relaxed);
    if client != peer.ip().to_canonical() {
        debug!(%client, proxy = %peer, "forwarded by a trusted proxy");
    }
    // The session goes to a host (`hosts`: a task polling many sessions) and this task ends:
    // nothing of the handshake (this function's own state) stays with the connection.
    // From a trusted proxy, `slot` is the client's place under the per-address cap.
    let (io, conn) = match open(stream, rest, client, &shared) {
        Ok(opened) => opened,
        Err(error) => {
            warn!(%peer, %error, "cannot watch a connection's socket: closed");
            metrics.websockets_open.fetch_sub(1, Relaxed);
            metrics.connections_open.fetch_sub(1, Relaxed);
            return;
        }
    };
    // At the shutdown, its host kicks the connection (1001).
    let stop = conn.stopper();
    let session = Box::pin(session(io, conn, Arc::clone(&shared), (slot, held)));
    shared
        .hosts
        .run(stop, session, &shared.tasks, &shared.shutdown);
}

/// How long one connection may stay in plain HTTP (page loads, kept alive between requests)
/// before it is closed: long enough for any page load, short enough that idle browsers do not
/// hold connection slots.
const HTTP_PHASE: std::time::Duration =
    std::time::Duration::from_secs(limits::HTTP_CONNECTION_SECS);

/// TLS (if the server has a certificate), then HTTP until a request upgrades the connection to
/// a WebSocket: its stream and the bytes the client sent after the handshake.
async fn handshake(
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<tokio_rustls::TlsAcceptor>,
    site: http::Site,
    timeout: std::time::Duration,
) -> Option<http::Upgraded<Stream>> {
    let upgraded = match tls {
        Some(acceptor) => {
            let stream = match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
                Ok(Ok(stream)) if crate::acme::is_challenge(stream.get_ref().1.alpn_protocol()) => {
                    debug!(%peer, "the ACME directory's TLS-ALPN-01 check: answered");
                    return None;
                }
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    debug!(%peer, %error, "TLS handshake failed");
                    return None;
                }
                Err(_) => {
                    debug!(%peer, "TLS handshake timed out");
                    return None;
                }
            };
            tokio::time::timeout(HTTP_PHASE, http::serve(stream, site))
                .await
                .map(|u| u.map(|u| u.map_io(|s| Stream::Tls(Box::new(s)))))
        }
        None => tokio::time::timeout(HTTP_PHASE, http::serve(stream, site))
            .await
            .map(|u| u.map(|u| u.map_io(Stream::Plain))),
    };
    upgraded.unwrap_or_else(|_| {
        debug!(%peer, "http connection kept too long: closed");
        None
    })
}

/// What a WebSocket runs on: the TCP stream, or the TLS stream over it (boxed: it is large, and
/// most connections are plain).
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

/// What a WebSocket's frames are read from, which the connection's [`FrameReader`] reads: a
/// plain connection's socket is in its outbox (read through a shared reference, not split in
/// two halves), a TLS connection's read half is here. Everything the server sends goes through
/// the connection's outbox; the session answers pings and closes itself.
#[derive(Debug)]
enum ReadSide {
    Plain,
    Tls(ReadHalf<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl ReadSide {
    /// The stream to read from now (`outbox`: the connection's).
    fn with<'a>(&'a mut self, outbox: &'a Outbox) -> Reading<'a> {
        match self {
            ReadSide::Plain => Reading::Plain(outbox),
            ReadSide::Tls(stream) => Reading::Tls(stream),
        }
    }
}

/// A connection's stream, borrowed for a read.
enum Reading<'a> {
    /// The plain socket, in the connection's outbox.
    Plain(&'a Outbox),
    Tls(&'a mut ReadHalf<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl tokio::io::AsyncRead for Reading<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Reading::Plain(outbox) => {
                let n = std::task::ready!(outbox.poll_read(cx, buf.initialize_unfilled()))?;
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
            Reading::Tls(stream) => Pin::new(&mut **stream).poll_read(cx, buf),
        }
    }
}

/// Where the session stands: before `hello`, in the lobby, or in a table.
#[derive(Debug)]
enum State {
    New,
    Lobby,
    InTable(lobby::Membership),
}

/// What one connection's requests may change of its session: where it stands, and the
/// password-protected replays it has opened.
struct Session<'a> {
    state: &'a mut State,
    opened: &'a mut OpenedReplays,
}

/// The password-protected replays a connection has opened with their password: it pages on
/// through them (or reads them again) without another Argon2 check, so a replay of many pages
/// costs one hash, not one a page. A finished game's password never changes. At most
/// [`OpenedReplays::MOST`] are remembered, the oldest forgotten first (it then needs its
/// password again).
///
/// Boxed, and only once one is opened: most connections never open one, and every connection
/// keeps this for as long as it lives.
#[derive(Debug, Default)]
// The box is the point: 8 bytes in every session rather than a `VecDeque`'s 32.
#[allow(clippy::box_collection)]
struct OpenedReplays(Option<Box<std::collections::VecDeque<wire::TableId>>>);

impl OpenedReplays {
    const MOST: usize = limits::OPENED_REPLAYS;

    fn contains(&self, table: wire::TableId) -> bool {
        self.0
            .as_ref()
            .is_some_and(|opened| opened.contains(&table))
    }

    fn insert(&mut self, table: wire::TableId) {
        let opened = self.0.get_or_insert_default();
        if opened.contains(&table) {
            return;
        }
        if opened.len() >= Self::MOST {
            opened.pop_front();
        }
        opened.push_back(table);
    }
}

/// A WebSocket's parts, from its stream and the bytes the client sent after the handshake:
/// its reading and writing, and its handle. Fails only if a plain connection's socket cannot
/// be registered with the server's readiness loop (`reactor.rs`).
fn open(
    stream: Stream,
    rest: Vec<u8>,
    peer: IpAddr,
    shared: &Arc<Shared>,
) -> std::io::Result<(Io, Conn)> {
    let (read, write, socket) = match stream {
        Stream::Plain(tcp) => (ReadSide::Plain, WriteSide::Plain, Some(tcp)),
        Stream::Tls(tls) => {
            let (read, write) = tokio::io::split(*tls);
            (ReadSide::Tls(read), WriteSide::tls(write), None)
        }
    };
    // Holds no buffer of its own: it reads into the thread's scratch buffer, and keeps bytes
    // only while a frame is incomplete.
    let frames = FrameReader::new(
        rest,
        shared.config.max_message_bytes(),
        shared.config.read_buffer_bytes,
    );
    let reactor = match socket {
        Some(_) => Some(shared.hosts.reactor(&shared.shutdown)?),
        None => None,
    };
    let mut registered = Ok(());
    let conn = Conn::new_cyclic(|link| {
        // The socket's events wake this connection's session.
        let socket = socket.zip(reactor).and_then(|(socket, reactor)| {
            let ready: std::sync::Weak<dyn crate::reactor::Ready> = link.clone();
            reactor
                .register(socket, ready)
                .map_err(|error| registered = Err(error))
                .ok()
        });
        Link {
            id: shared.next_connection_id(),
            // Caps, throttles and bans count the client's address as its key (an IPv6 /64).
            peer: shared.key(peer),
            outbox: Outbox::new(
                socket,
                shared.config.outgoing_queue,
                shared.config.outgoing_queue_bytes.max(1024),
            ),
            metrics: Arc::clone(&shared.metrics),
            remote: None,
        }
    });
    registered?;
    debug!(%peer, connection = conn.id, "websocket open");
    let writes = match write {
        WriteSide::Plain => Writes::Here,
        WriteSide::Tls { .. } => Writes::task(write, conn.clone()),
    };
    let io = Io {
        read,
        frames,
        writer: writes,
    };
    Ok((io, conn))
}

/// A WebSocket session with `peer`, the client (forwarded by a trusted proxy or not), run by a
/// host; `held` (the connection's places under the caps) is dropped at its end.
///
/// One future does everything for the connection: it reads and answers, writes what its outbox
/// could not write at once (only while something waits: the usual frame is written straight to
/// the socket by whoever produced it; on TLS a writer task does), sends the pings and notices
/// silence, with one timer. What lives across its awaits is kept small (`Serving`; the rarer
/// requests' futures and the goodbye are boxed), since it lives as long as the connection.
///
/// Not an `async fn`: an `async fn` copies its arguments into locals of its own, and both
/// copies would live in the session for as long as the connection; a block that captures them
/// holds them once (measured: BENCHMARKS.md, round 4, step 6b).
#[allow(clippy::manual_async_fn)]
fn session<H: Send + 'static>(
    mut io: Io,
    conn: Conn,
    shared: Arc<Shared>,
    held: H,
) -> impl Future<Output = ()> + Send {
    async move {
        let state = Serving::new(&mut io, &conn, &shared).await;
        // Boxed: the goodbye's futures are large and needed once.
        Box::pin(goodbye(io, state, &conn)).await;
        debug!(connection = conn.id, "websocket closed");
        drop(held);
        shared.metrics.websockets_open.fetch_sub(1, Relaxed);
        shared.metrics.connections_open.fetch_sub(1, Relaxed);
    }
}

/// Both directions of one WebSocket: the reading side and its frames, and the writing.
struct Io {
    read: ReadSide,
    frames: FrameReader,
    writer: Writes,
}

/// Who writes what waits in a connection's outbox.
enum Writes {
    /// A plain TCP connection: its session (`WriteSide::Plain`: the socket is in the outbox).
    /// The usual frame is written straight to the socket by whoever produced it, so the
    /// session is rarely woken to write.
    Here,
    /// A TLS connection: a task of its own. Every frame waits for it (rustls encrypts in
    /// order), and a task woken once per frame sent should not poll the reader each time.
    /// It gives the writing side back when the connection is closed (or the socket failed).
    Task(tokio::task::JoinHandle<WriteSide>),
}

impl Writes {
    fn task(mut side: WriteSide, conn: Conn) -> Self {
        Writes::Task(tokio::spawn(async move {
            let outbox = &conn.outbox;
            tokio::select! {
                biased;
                () = std::future::poll_fn(|cx| outbox.poll_kicked_writing(cx)) => {}
                () = side.keep_writing(outbox) => {}
            }
            side
        }))
    }

    /// Writes what waits in the outbox while the socket takes it (a plain connection: its
    /// session does; a TLS connection's task does, so this stays pending). `Ready` only if the
    /// socket failed: the outbox is then abandoned and the connection kicked.
    fn poll_writing(&self, outbox: &Outbox, cx: &mut Context<'_>) -> Poll<()> {
        match self {
            Writes::Here => outbox.poll_write(cx),
            Writes::Task(_) => Poll::Pending,
        }
    }

    /// The writing side, once the connection is closed.
    async fn into_side(self) -> Option<WriteSide> {
        match self {
            Writes::Here => Some(WriteSide::Plain),
            Writes::Task(task) => task.await.ok(),
        }
    }
}

/// Reads, answers and writes until the connection ends (the client leaves or closes, a close
/// of the server's, silence, a flood); gives where the session stood.
///
/// Polled by hand rather than written as an `async fn` with a `select!`: what a seated
/// connection's session holds for as long as the connection lasts is this struct and nothing else
/// (no futures of its own branches, no second copy of its locals). In order, as a biased
/// `select!` would: the connection's kick (a close of the server's, or its shutdown), the
/// writing (a plain connection's, only while something waits), the timer (pings, silence), the
/// next frame. A request being handled (its future boxed: the rarer ones are large) runs alone
/// with the writing: nothing is read meanwhile.
struct Serving<'a> {
    io: &'a mut Io,
    conn: &'a Conn,
    shared: &'a Arc<Shared>,
    state: State,
    opened: OpenedReplays,
    limits: RateLimits,
    clock: Clock,
    /// The clock's next look (a ping, or silence), on the hosts' clock.
    alarm: Alarm,
    handling: Option<Handling<'a>>,
    /// The socket failed while a request was being handled: nothing more is written.
    failed: bool,
}

/// A request being handled: it owns where the session stands and gives it back.
type Handling<'a> = Pin<Box<dyn Future<Output = (State, OpenedReplays)> + Send + 'a>>;

/// What one frame read means for the session (a value handed back, never kept: its size does
/// not matter).
#[allow(clippy::large_enum_variant)]
enum Heard {
    /// Answered (or refused) already.
    Done,
    /// The session ends.
    End,
    /// An admitted request, to be handled, and when it was received.
    Request(ClientMessage, Instant),
}

impl<'a> Serving<'a> {
    /// A new session's state (before `hello`), its clock started now.
    fn new(io: &'a mut Io, conn: &'a Conn, shared: &'a Arc<Shared>) -> Self {
        let now = Instant::now();
        let config = &shared.config;
        let epoch = shared.hosts.alarms.epoch();
        let clock = Clock::new(Beat::of(config), epoch, now);
        Self {
            io,
            conn,
            shared,
            state: State::New,
            opened: OpenedReplays::default(),
            limits: RateLimits::new(config, epoch, now),
            clock,
            alarm: Alarm::default(),
            handling: None,
            failed: false,
        }
    }

    /// The frame (or the end) the reader gave: counted, limited, decoded, answered when the
    /// session itself answers it.
    fn hear(&mut self, next: Option<Result<Message, WsError>>) -> Heard {
        let Self {
            conn,
            shared,
            limits,
            clock,
            ..
        } = self;
        let (conn, shared) = (*conn, *shared);
        let message = match next {
            None => return Heard::End,
            Some(Err(WsError::Capacity(_))) => {
                conn.reject(None, ErrorCode::BadMessage);
                conn.close(close::MESSAGE_TOO_BIG);
                return Heard::End;
            }
            Some(Err(WsError::Protocol(_))) => {
                conn.close(close::PROTOCOL_ERROR);
                return Heard::End;
            }
            Some(Err(WsError::Utf8(_))) => {
                // RFC 6455 §8.1: a text frame that is not UTF-8 fails the connection with 1007.
                conn.close(close::INVALID_PAYLOAD);
                return Heard::End;
            }
            Some(Err(_)) => return Heard::End,
            Some(Ok(message)) => message,
        };
        let received = Instant::now();
        let epoch = shared.hosts.alarms.epoch();
        clock.heard(epoch, received);
        let admitted = match message {
            Message::Binary(bytes) => {
                Metrics::add(&shared.metrics.messages_in, 1);
                Metrics::add(&shared.metrics.bytes_in, bytes.len() as u64);
                let decoded = wire::decode_client(&bytes);
                // Every frame counts against the limits, decodable or not: garbage must not be
                // a way round them.
                let verdict = match &decoded {
                    Ok(request) => {
                        limits.request(&shared.config, request, (epoch, received), |bytes| {
                            shared
                                .budgets
                                .signal_bytes
                                .take_n(conn.peer, bytes as f64, received)
                        })
                    }
                    Err(_) => limits.frame(&shared.config, (epoch, received)),
                };
                match (verdict, decoded) {
                    (Verdict::Close, _) => {
                        close_flooder(conn);
                        return Heard::End;
                    }
                    (Verdict::Refuse, Ok(request)) => {
                        conn.reject(Some(&request), ErrorCode::RateLimited);
                        None
                    }
                    (Verdict::Refuse, Err(_)) => {
                        reject_undecodable(conn, &bytes, ErrorCode::RateLimited, None);
                        None
                    }
                    (Verdict::Admit, Ok(request)) => Some(request),
                    (Verdict::Admit, Err(error)) => {
                        debug!(connection = conn.id, %error, "undecodable message");
                        reject_undecodable(conn, &bytes, error.code(), Some(&error));
                        None
                    }
                }
            }
            // The protocol is binary only; a text frame counts against the limits too.
            Message::Text(_) => {
                match limits.frame(&shared.config, (epoch, received)) {
                    Verdict::Close => {
                        close_flooder(conn);
                        return Heard::End;
                    }
                    Verdict::Refuse => conn.reject(None, ErrorCode::RateLimited),
                    Verdict::Admit => conn.reject(None, ErrorCode::BadMessage),
                }
                None
            }
            Message::Close(frame) => {
                conn.close(close_answer(frame.as_ref()));
                return Heard::End;
            }
            // Every ping is answered with a pong: a flood of pings is a flood of writes, so
            // pings count against the request limit like any frame.
            Message::Ping(payload) => {
                match limits.frame(&shared.config, (epoch, received)) {
                    Verdict::Close => {
                        close_flooder(conn);
                        return Heard::End;
                    }
                    Verdict::Refuse => {}
                    Verdict::Admit => {
                        conn.send(&Frame::pong(&payload));
                    }
                }
                None
            }
            Message::Pong(_) | Message::Frame(_) => None,
        };
        match admitted {
            Some(request) => Heard::Request(request, received),
            None => Heard::Done,
        }
    }

    /// Starts handling an admitted request.
    fn handle(&mut self, request: ClientMessage, received: Instant) {
        let mut state = std::mem::replace(&mut self.state, State::New);
        let mut opened = std::mem::take(&mut self.opened);
        let (conn, shared) = (self.conn, self.shared);
        self.handling = Some(Box::pin(async move {
            let session = Session {
                state: &mut state,
                opened: &mut opened,
            };
            handle(request, session, conn, shared, received).await;
            (state, opened)
        }));
    }

    /// The timer fired: a ping, or the end of a silent connection.
    fn tick(&mut self) -> Heard {
        let now = Instant::now();
        let beat = Beat::of(&self.shared.config);
        match self.clock.tick(beat, self.shared.hosts.alarms.epoch(), now) {
            Tick::Silent => {
                debug!(connection = self.conn.id, "idle: no frame or pong in time");
                self.conn.close_because(
                    close::POLICY_VIOLATION,
                    "idle: no message or pong within the idle timeout",
                );
                return Heard::End;
            }
            // A full queue is a slow reader, which the next frame for it reports.
            Tick::Ping => drop(self.conn.outbox.push(&Frame::ping())),
            Tick::Nothing => {}
        }
        Heard::Done
    }

    fn end(&mut self) -> Poll<State> {
        Poll::Ready(std::mem::replace(&mut self.state, State::New))
    }
}

impl Future for Serving<'_> {
    type Output = State;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<State> {
        let this = self.get_mut();
        loop {
            if let Some(handling) = this.handling.as_mut() {
                match handling.as_mut().poll(cx) {
                    Poll::Ready((state, opened)) => {
                        this.state = state;
                        this.opened = opened;
                        this.handling = None;
                    }
                    Poll::Pending => {
                        // What waits in the outbox meanwhile still goes out.
                        if !this.failed {
                            let outbox = &this.conn.outbox;
                            this.failed = this.io.writer.poll_writing(outbox, cx).is_ready();
                        }
                        return Poll::Pending;
                    }
                }
            }
            if this.conn.outbox.poll_kicked(cx).is_ready() {
                return this.end();
            }
            // The socket failed: the outbox is abandoned and the connection kicked.
            if this.failed
                || this
                    .io
                    .writer
                    .poll_writing(&this.conn.outbox, cx)
                    .is_ready()
            {
                return this.end();
            }
            let alarms = &this.shared.hosts.alarms;
            let next = this
                .clock
                .next(Beat::of(&this.shared.config), alarms.epoch());
            let heard = if this.alarm.poll_until(alarms, next, cx).is_ready() {
                this.tick()
            } else {
                let Io { read, frames, .. } = &mut *this.io;
                match frames.poll_next(&mut read.with(&this.conn.outbox), cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(next) => this.hear(next),
                }
            };
            match heard {
                Heard::Done => {}
                Heard::End => return this.end(),
                Heard::Request(request, received) => this.handle(request, received),
            }
        }
    }
}

/// The end of a session: the table hears the connection is gone, what was queued goes out
/// (the last events before a shutdown, the errors that explain a close), then the close frame,
/// while what the client still sends is read and discarded.
async fn goodbye(io: Io, state: State, conn: &Conn) {
    let Io {
        mut read,
        mut frames,
        writer,
    } = io;
    if let State::InTable(membership) = state {
        let _ = membership
            .tx
            .send(RoomMsg::Gone {
                connection: conn.id,
            })
            .await;
    }
    conn.close(close::NORMAL);
    // A writer task stops once the connection is closed, and gives its side back.
    let Some(mut write) = writer.into_side().await else {
        return;
    };
    let outbox = &conn.outbox;
    let (code, reason) = outbox
        .close
        .get()
        .map(|close| (**close).clone())
        .unwrap_or((close::GOING_AWAY, close_reason(close::GOING_AWAY).into()));
    outbox.finish(&Frame::close(code, &reason));
    let farewell = async {
        if write.drain(outbox).await.is_ok() {
            write.shutdown(outbox).await;
        }
    };
    // Keep reading (and discarding) while the close frame goes out: closing a socket with
    // unread bytes in it makes the kernel reset the connection, and a reset can destroy the
    // close frame (and the errors before it) on its way to a client that is still sending.
    let drain = async {
        let mut read = read.with(outbox);
        while let Some(Ok(_)) = frames.next(&mut read).await {}
    };
    // A reader too slow to take the last frames runs into the timeout.
    if tokio::time::timeout(CLOSE_DRAIN, async {
        tokio::join!(farewell, drain);
    })
    .await
    .is_err()
    {
        outbox.abandon();
    }
}

/// The connection's one timer: when the next ping is due, and when silence ends it. Its two
/// intervals come from the settings ([`Beat`]) on each look: a connection keeps only its times,
/// as nanoseconds from the sessions' epoch (8 bytes each; an `Instant` is 16).
#[derive(Debug)]
struct Clock {
    /// When the client was last heard from (any frame, pongs included).
    heard: u64,
    next_ping: u64,
}

/// Nanoseconds from `epoch` to `at` (0 if before it).
fn nanos_since(epoch: Instant, at: Instant) -> u64 {
    nanos(at.saturating_duration_since(epoch))
}

/// A duration in nanoseconds (584 years fit; longer is the most that fits).
fn nanos(duration: std::time::Duration) -> u64 {
    duration
        .as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(duration.subsec_nanos()))
}

/// A connection's two intervals: silence that ends it, and the pings.
#[derive(Debug, Clone, Copy)]
struct Beat {
    idle: std::time::Duration,
    ping_every: std::time::Duration,
}

impl Beat {
    fn of(config: &crate::ServerConfig) -> Self {
        Self {
            idle: config.idle_timeout(),
            ping_every: config.ping_interval(),
        }
    }
}

/// What the timer's firing means.
#[derive(Debug, PartialEq, Eq)]
enum Tick {
    /// Nothing heard within the idle timeout: the connection ends.
    Silent,
    /// Time to send a ping.
    Ping,
    /// Neither (the client was heard from since the timer was set).
    Nothing,
}

impl Clock {
    /// Started at `now`; every time here is counted from `epoch`.
    fn new(beat: Beat, epoch: Instant, now: Instant) -> Self {
        let now = nanos_since(epoch, now);
        Self {
            heard: now,
            next_ping: now.saturating_add(nanos(beat.ping_every)),
        }
    }

    /// The client was heard from (a frame arrived): it costs no timer change.
    fn heard(&mut self, epoch: Instant, now: Instant) {
        self.heard = nanos_since(epoch, now);
    }

    /// When the timer should next fire.
    fn next(&self, beat: Beat, epoch: Instant) -> Instant {
        let next = self.silent_at(beat).min(self.next_ping);
        epoch + std::time::Duration::from_nanos(next)
    }

    fn silent_at(&self, beat: Beat) -> u64 {
        self.heard.saturating_add(nanos(beat.idle))
    }

    /// The timer fired at `now`.
    fn tick(&mut self, beat: Beat, epoch: Instant, now: Instant) -> Tick {
        let now = nanos_since(epoch, now);
        if now >= self.silent_at(beat) {
            Tick::Silent
        } else if now >= self.next_ping {
            // Late firings do not pile up pings: the next is one interval from now.
            self.next_ping = now.saturating_add(nanos(beat.ping_every));
            Tick::Ping
        } else {
            Tick::Nothing
        }
    }
}

/// The code a client's close frame is answered with. RFC 6455 §7.4 forbids some codes on the
/// wire: below 1000, 1004–1006 and 1015 (reserved for an endpoint's own reports), the unassigned
/// 1016–2999, and 5000 up; receiving one fails the connection with 1002. tungstenite puts 1002
/// in place of such a code when it reads the frame (`CloseCode::is_allowed`), and a client that
/// closes with 1002 itself is answered with its own code, as §5.5.1 suggests. Every other close
/// (or one without a code) is answered with 1000.
fn close_answer(frame: Option<&CloseFrame>) -> u16 {
    match frame {
        Some(frame) if frame.code == CloseCode::Protocol || !frame.code.is_allowed() => {
            close::PROTOCOL_ERROR
        }
        _ => close::NORMAL,
    }
}

/// Answers a frame that does not decode with `code`, echoing its `id` and `type` when they can
/// be read, so a client waiting for that id gets its answer.
fn reject_undecodable(
    conn: &Conn,
    bytes: &[u8],
    code: ErrorCode,
    error: Option<&wire::DecodeError>,
) {
    let (id, request) = wire::peek_request(bytes);
    Metrics::add(&conn.metrics.rejected, 1);
    let mut answer = ServerMessage::error_for(id, request, code);
    // What did not decode (a field of the wrong type, an unknown value such as an alliance),
    // in printable characters and at most 300 of them: it may quote the sender's own bytes.
    if let (ServerMessage::Error { message, .. }, Some(error)) = (&mut answer, error) {
        let detail: String = error
            .to_string()
            .chars()
            .map(|c| if text::is_forbidden_char(c) { '?' } else { c })
            .take(300)
            .collect();
        *message = format!("{message}: {detail}");
    }
    conn.send_message(&answer);
}

/// Answers one decoded request.
async fn handle(
    request: ClientMessage,
    session: Session<'_>,
    conn: &Conn,
    shared: &Arc<Shared>,
    received: Instant,
) {
    let Session { state, opened } = session;
    match (&*state, request) {
        (State::New, request @ ClientMessage::Hello { .. }) => {
            let ClientMessage::Hello {
                id,
                protocol,
                client,
            } = &request
            else {
                return;
            };
            if text::check_client_name(client).is_err() {
                // Refused, and nothing changes: the client may send a better `hello`.
                conn.reject(Some(&request), ErrorCode::BadMessage);
                return;
            }
            if *protocol != PROTOCOL_VERSION {
                conn.reject(Some(&request), ErrorCode::UnsupportedVersion);
                conn.close(close::PROTOCOL_ERROR);
                return;
            }
            debug!(connection = conn.id, client, "hello");
            *state = State::Lobby;
            conn.send_message(&ServerMessage::Welcome {
                reply_to: *id,
                protocol: PROTOCOL_VERSION,
                server: server_name(),
            });
        }
        (State::New, request) => conn.reject(Some(&request), ErrorCode::HelloRequired),
        (_, request @ ClientMessage::Hello { .. }) => {
            conn.reject(Some(&request), ErrorCode::BadMessage)
        }
        (_, request @ ClientMessage::ListReplays { .. }) => {
            match list_replays(&request, shared).await {
                Ok(answer) => {
                    conn.send_message(&answer);
                }
                Err(code) => conn.reject(Some(&request), code),
            }
        }
        (_, request @ ClientMessage::GetReplay { .. }) => {
            match get_replay(&request, conn.peer, opened, shared).await {
                Ok(answer) => {
                    conn.send_message(&answer);
                }
                Err(code) => conn.reject(Some(&request), code),
            }
        }
        (
            _,
            request @ (ClientMessage::CreateLeague { .. }
            | ClientMessage::ListLeagues { .. }
            | ClientMessage::JoinLeague { .. }
            | ClientMessage::GetLeague { .. }
            | ClientMessage::GetDeck { .. }
            | ClientMessage::RegisterDeck { .. }
            | ClientMessage::Buy { .. }
            | ClientMessage::TakeRemedy { .. }),
        ) => match crate::leagues::answer(&request, conn.peer, shared).await {
            Ok(answer) => {
                conn.send_message(&answer);
            }
            Err(refusal) => conn.reject(Some(&request), refusal),
        },
        (_, request @ ClientMessage::MountainMagicStandings { .. }) => {
            match crate::mountain::standings(&request, shared).await {
                Ok(answer) => {
                    conn.send_message(&answer);
                }
                Err(refusal) => conn.reject(Some(&request), refusal),
            }
        }
        (_, ClientMessage::ListTables { id, from, limit }) => {
            conn.send_message(&list_tables(shared, id, from, limit));
        }
        (_, request @ ClientMessage::CreateTable { .. }) => {
            match room::create(&request, shared, conn.peer).await {
                Ok(table) => {
                    conn.send_message(&ServerMessage::TableCreated {
                        reply_to: request.id(),
                        table,
                    });
                }
                Err(refusal) => conn.reject(Some(&request), refusal),
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
        ) => match enter(&request, conn, shared).await {
            Ok(membership) => *state = State::InTable(membership),
            Err(code) => conn.reject(Some(&request), code),
        },
        (State::InTable(membership), request @ ClientMessage::GetEvents { .. }) => {
            match get_events(&request, membership.table, shared).await {
                Ok(answer) => {
                    conn.send_message(&answer);
                }
                Err(code) => conn.reject(Some(&request), code),
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
                request: Box::new(request),
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

/// The server's name and version, as `welcome` gives it.
pub(crate) fn server_name() -> String {
    format!("grand-melee-server {}", env!("CARGO_PKG_VERSION"))
}

/// One page of the table list, sorted by name then id.
fn list_tables(shared: &Shared, id: u32, from: u32, limit: u32) -> ServerMessage {
    // Every node's tables if the store keeps a directory (cluster mode), else this node's.
    let mut tables = shared.store.table_directory().unwrap_or_else(|| {
        shared
            .tables
            .iter()
            .map(|entry| entry.summary.borrow().clone())
            .collect()
    });
    tables.sort_by(|a, b| a.name.cmp(&b.name).then(a.table.cmp(&b.table)));
    let total = u32::try_from(tables.len()).unwrap_or(u32::MAX);
    let start = usize::try_from(from)
        .unwrap_or(usize::MAX)
        .min(tables.len());
    let page = lobby::fill_page(
        tables.into_iter().skip(start),
        lobby::page_items(limit),
        shared.page_bytes(),
    );
    let end = start + page.len();
    ServerMessage::Tables {
        reply_to: id,
        tables: page,
        total,
        next: (end < usize::try_from(total).unwrap_or(usize::MAX))
            .then(|| u32::try_from(end).unwrap_or(u32::MAX)),
    }
}

/// One page of the finished games, newest first.
async fn list_replays(
    request: &ClientMessage,
    shared: &Arc<Shared>,
) -> Result<ServerMessage, ErrorCode> {
    let &ClientMessage::ListReplays { id, from, limit } = request else {
        return Err(ErrorCode::BadMessage);
    };
    let max = lobby::page_items(limit);
    let (rows, total) = shared
        .store
        .replays_page(from, u32::try_from(max).unwrap_or(wire::MAX_PAGE_ITEMS))
        .await
        .map_err(|error| {
            warn!(%error, "listing replays");
            ErrorCode::StorageFailed
        })?;
    let summaries = rows.into_iter().map(|r| wire::ReplaySummary {
        table: r.id,
        name: r.name,
        created_at_ms: r.created_at_ms,
        finished_at_ms: r.finished_at_ms,
        events: r.events,
        password: r.password,
        league: r.league,
    });
    let replays = lobby::fill_page(summaries, max, shared.page_bytes());
    let end = from.saturating_add(u32::try_from(replays.len()).unwrap_or(u32::MAX));
    Ok(ServerMessage::Replays {
        reply_to: id,
        replays,
        total,
        next: (end < total).then_some(end),
    })
}

/// One page of a finished game's events. A game played at a table with a password needs that
/// password (wrong guesses are limited per address and table) or one of its seat tokens; a
/// climb of today's mountain is not shown before its day is over (`day_not_over`, saying when),
/// but to its climber (by his seat token).
async fn get_replay(
    request: &ClientMessage,
    peer: IpAddr,
    opened: &mut OpenedReplays,
    shared: &Arc<Shared>,
) -> Result<ServerMessage, Refusal> {
    let ClientMessage::GetReplay {
        id,
        table,
        from_seq,
        password,
        token,
    } = request
    else {
        return Err(ErrorCode::BadMessage.into());
    };
    let (id, table, token) = (*id, *table, *token);
    let from_seq = (*from_seq).max(1);
    let budget = shared.page_bytes();
    let (page, by_token) = shared
        .store
        .replay_page(table, from_seq, budget, token)
        .await
        .map_err(|error| {
            warn!(%error, %table, "reading a replay");
            ErrorCode::StorageFailed
        })?
        .ok_or(ErrorCode::UnknownReplay)?;
    let hash = page.record.password.clone();
    let replay = room::replay_page(table, page)?;
    if !by_token {
        crate::mountain::may_show(shared, replay.settings())?;
    }
    if let Some(hash) = &hash
        && !by_token
        && !opened.contains(table)
    {
        lobby::check_password(
            shared,
            peer,
            table,
            Arc::from(hash.as_str()),
            password.clone(),
        )
        .await?;
        opened.insert(table);
    }
    Ok(replay.answering(id, from_seq))
}

/// One page of the events of the table this connection sits at or watches, read from the
/// journal (every event a member has been sent is in it: events are made durable before they
/// are published).
async fn get_events(
    request: &ClientMessage,
    mine: wire::TableId,
    shared: &Arc<Shared>,
) -> Result<ServerMessage, ErrorCode> {
    let &ClientMessage::GetEvents {
        id,
        table,
        from_seq,
        limit,
    } = request
    else {
        return Err(ErrorCode::BadMessage);
    };
    if table != mine {
        return Err(ErrorCode::NotInTable);
    }
    let from_seq = from_seq.max(1);
    let (max, budget) = (lobby::page_items(limit), shared.page_bytes());
    let (rows, more) = shared
        .store
        .events_page(table, from_seq, max, budget)
        .await
        .map_err(|error| {
            warn!(%error, %table, "reading a table's events");
            ErrorCode::StorageFailed
        })?;
    let events = rows
        .iter()
        .map(|(_, bytes)| wire::decode_event(bytes))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| ErrorCode::StorageFailed)?;
    let next = from_seq.saturating_add(events.len() as u64);
    Ok(ServerMessage::PastEvents {
        reply_to: id,
        table,
        first_seq: from_seq,
        events,
        next_seq: more.then_some(next),
    })
}

/// Asks a table's actor to seat, admit or resume this connection. The password, if the table
/// has one, is checked here first; a spectator takes a place under the per-address cap first.
async fn enter(
    request: &ClientMessage,
    conn: &Conn,
    shared: &Arc<Shared>,
) -> Result<lobby::Membership, Refusal> {
    let (table, password, entry) = match request {
        ClientMessage::Join {
            table,
            name,
            password,
            entropy,
            member_token,
            ..
        } => (
            *table,
            password.clone(),
            Entry::Join {
                name: name.clone(),
                entropy: entropy.clone().unwrap_or_default(),
                league: None,
                member_token: *member_token,
            },
        ),
        ClientMessage::Watch {
            table, password, ..
        } => (*table, password.clone(), Entry::Watch),
        ClientMessage::Resume { table, token, .. } => {
            (*table, None, Entry::Resume { token: *token })
        }
        _ => return Err(ErrorCode::BadMessage.into()),
    };
    if !shared.tables.contains_key(&table) {
        // Another node may run it (cluster mode): then it is entered through its stand-in here.
        shared.peers.reach(shared, table).await;
    }
    let (tx, hash, league, climb, in_lobby, full) = shared
        .tables
        .get(&table)
        .map(|e| {
            let summary = e.summary.borrow();
            (
                e.tx.clone(),
                e.password.clone(),
                summary.league,
                summary.game == wire::GameKind::MountainMagic,
                summary.stage == wire::StageName::Lobby,
                summary.seated >= summary.seats,
            )
        })
        .ok_or(ErrorCode::UnknownTable)?;
    // Everything the connection can check without the table comes before the password, whose
    // hash is the expensive step (and before a league member's lookup): the table's stage and
    // seats (from its summary), the seat's name, the watch budget and the spectator caps.
    if matches!(entry, Entry::Join { .. }) {
        if !in_lobby {
            return Err(ErrorCode::GameStarted.into());
        }
        if full {
            return Err(ErrorCode::TableFull.into());
        }
    }
    // At a league table the member sits down with his name and deck, found by his token.
    let mut entry = entry;
    if let (
        Entry::Join {
            name,
            league: seat,
            member_token,
            ..
        },
        Some(league),
    ) = (&mut entry, league)
    {
        let found = if climb {
            crate::leagues::climber(shared, conn.peer, league, *member_token).await?
        } else {
            crate::leagues::seat(shared, conn.peer, league, *member_token).await?
        };
        name.clone_from(&found.name);
        *seat = Some(found);
    }
    if let Entry::Join { name, entropy, .. } = &entry {
        grand_melee_protocol::shell::check_seat_text(name, entropy)?;
    }
    let spectator = match entry {
        Entry::Watch => {
            if !shared.budgets.watches.take(conn.peer, Instant::now()) {
                return Err(ErrorCode::RateLimited.into());
            }
            Some(
                shared
                    .admit_spectator(conn.peer)
                    .ok_or(ErrorCode::SpectatorsFull)?,
            )
        }
        _ => None,
    };
    if let Some(hash) = hash
        && !matches!(entry, Entry::Resume { .. })
    {
        lobby::check_password(shared, conn.peer, table, hash, password).await?;
    }
    let (reply, answer) = oneshot::channel();
    let enter = RoomMsg::Enter(Box::new(lobby::Enter {
        conn: conn.clone(),
        request_id: request.id(),
        entry,
        reply,
        quiet: false,
    }));
    if tx.send(enter).await.is_err() {
        return Err(ErrorCode::UnknownTable.into());
    }
    match answer.await {
        Ok(Ok(_role)) => Ok(lobby::Membership {
            tx,
            table,
            _spectator: spectator.map(Box::new),
        }),
        Ok(Err(code)) => Err(code.into()),
        Err(_) => Err(ErrorCode::UnknownTable.into()),
    }
}

/// How long a closing connection keeps reading what the client still sends, while its close
/// frame goes out.
const CLOSE_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// What a seated connection's session holds for as long as the connection lasts is mostly
    /// its `Serving` (BENCHMARKS.md, round 4, "a seat's state"): kept small.
    #[test]
    fn a_seated_connections_state_stays_small() {
        let serving = std::mem::size_of::<Serving<'static>>();
        let reader = std::mem::size_of::<FrameReader>();
        assert!(serving <= 184, "Serving is {serving} bytes");
        let outbox = std::mem::size_of::<Outbox>();
        assert!(outbox <= 176, "Outbox is {outbox} bytes");
        let limits = std::mem::size_of::<RateLimits>();
        assert!(limits <= 64, "RateLimits is {limits} bytes");
        assert!(reader <= 64, "FrameReader is {reader} bytes");
    }

    #[test]
    fn one_timer_sends_the_pings_and_notices_silence() {
        let secs = Duration::from_secs;
        let start = Instant::now();
        let beat = Beat {
            idle: secs(60),
            ping_every: secs(20),
        };
        // The sessions' epoch, some time before this connection.
        let epoch = start.checked_sub(secs(7)).unwrap_or(start);
        let mut clock = Clock::new(beat, epoch, start);
        assert_eq!(clock.next(beat, epoch), start + secs(20));
        assert_eq!(clock.tick(beat, epoch, start + secs(20)), Tick::Ping);
        assert_eq!(clock.next(beat, epoch), start + secs(40));
        // Heard from: nothing to do until the next ping, and silence is counted from then.
        clock.heard(epoch, start + secs(30));
        assert_eq!(clock.tick(beat, epoch, start + secs(35)), Tick::Nothing);
        // A late firing sends one ping, and the next is an interval later.
        assert_eq!(clock.tick(beat, epoch, start + secs(55)), Tick::Ping);
        assert_eq!(clock.next(beat, epoch), start + secs(75));
        assert_eq!(clock.tick(beat, epoch, start + secs(75)), Tick::Ping);
        // 60 s after the last frame heard: silent, whatever a ping is due.
        assert_eq!(clock.next(beat, epoch), start + secs(90));
        assert_eq!(clock.tick(beat, epoch, start + secs(90)), Tick::Silent);
        // An idle timeout shorter than the ping interval fires first.
        let beat = Beat {
            idle: secs(5),
            ping_every: secs(20),
        };
        let clock = Clock::new(beat, epoch, start);
        assert_eq!(clock.next(beat, epoch), start + secs(5));
    }
}
