//! The floor: the relay's protocol at the cost of the kernel alone. A connection to
//! `/relay/<group>` joins the group, and every binary frame a client sends is delivered to every
//! connection of its group, the sender included, exactly as by the [relay](crate::relay), so the
//! relay bots run against it unchanged.
//!
//! What differs is the delivery path: no runtime, no tasks, no WebSocket library. After the
//! handshake, ONE thread owns every socket. It waits for readiness with `mio` (epoll,
//! edge-triggered), reads client frames with a minimal parser (masked binary frames; a close is
//! answered and the socket dropped, a ping answered with a pong, anything else closes the
//! connection), builds each server frame once (header and unmasked payload in one buffer) and
//! `write`s those same bytes to every member of the group. Bytes a socket cannot take at once
//! wait in that socket's backlog until it is writable again (same thread); a socket whose
//! backlog passes [`FloorConfig::max_backlog_bytes`] is dropped.
//!
//! The HTTP upgrade is read on other threads (a minimal parse, blocking, with a timeout); the
//! socket is then handed to the delivery thread over a channel and a `mio` waker. The delivery
//! thread joins it to its group before it writes the `101` answer, so a client that sees the
//! upgrade receives every later frame of its group.
//!
//! With [`FloorConfig::tls`] (`wss://`), each socket also has its own rustls
//! [`ServerConnection`], used sans-IO. The TLS handshake and the upgrade request are done on the
//! handshake threads (blocking, with the same timeout), through [`rustls::Stream`]: the
//! handshake's public-key work (a signature and a key exchange per connection) then never
//! delays a delivery, and a client that stalls or sends garbage in its handshake costs the
//! delivery thread nothing. The socket and its connection are then handed over together. On the
//! delivery thread the model is unchanged: input is `read_tls`, `process_new_packets`, then the
//! plaintext from `reader()` into the same frame parser; output is each frame, still built
//! once, written into every member's `writer()` (encrypted once per recipient: inherent in TLS)
//! then `write_tls` to the socket, a bare non-blocking `writev`. A socket's backlog is then the
//! encrypted records rustls holds for it, bounded by [`FloorConfig::max_backlog_bytes`] through
//! rustls's own buffer limit (a frame that does not fit drops the connection). A bad record
//! closes that connection only.

use std::collections::HashMap;
use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use tokio_rustls::rustls::{self, ServerConfig, ServerConnection};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tracing::{debug, info, warn};

/// WebSocket opcodes.
const OP_TEXT: u8 = 0x1;
const OP_BINARY: u8 = 0x2;
const OP_CLOSE: u8 = 0x8;
const OP_PING: u8 = 0x9;
const OP_PONG: u8 = 0xA;

/// Close codes the floor sends.
const CLOSE_PROTOCOL_ERROR: u16 = 1002;
const CLOSE_UNSUPPORTED: u16 = 1003;
const CLOSE_TOO_BIG: u16 = 1009;

/// Longest HTTP upgrade request read, bytes.
const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// How long a handshake may take before the connection is dropped.
const HANDSHAKE_PATIENCE: Duration = Duration::from_secs(5);
/// Bytes read at once by the delivery thread.
const READ_CHUNK: usize = 64 * 1024;
/// A backlog's buffer larger than this is given back once it has drained.
const KEEP_BACKLOG_CAPACITY: usize = 16 * 1024;

const WAKER: Token = Token(0);
const LISTENER: Token = Token(1);

/// The floor's settings.
#[derive(Debug, Clone)]
pub struct FloorConfig {
    /// Address to listen on (port 0 picks one).
    pub listen: SocketAddr,
    /// Bytes a socket may owe before it is dropped.
    pub max_backlog_bytes: usize,
    /// Largest client frame payload accepted, bytes (the relay's limit: 16 KiB).
    pub max_frame_bytes: usize,
    /// Threads reading HTTP upgrade requests.
    pub handshake_threads: usize,
    /// Stop by itself after this long (`None`: only when told).
    pub run_for: Option<Duration>,
    /// Terminate TLS with this configuration (`wss://`); `None`: plain `ws://`.
    pub tls: Option<Arc<ServerConfig>>,
}

impl Default for FloorConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            max_backlog_bytes: 1 << 20,
            max_frame_bytes: 16 * 1024,
            handshake_threads: 2,
            run_for: None,
            tls: None,
        }
    }
}

/// The floor's counters.
#[derive(Debug, Default)]
pub struct FloorStats {
    /// Binary frames received from clients.
    pub frames_in: AtomicU64,
    /// Frames delivered to clients (written, or queued in a backlog).
    pub frames_out: AtomicU64,
    /// Connections dropped because their backlog grew past the limit.
    pub dropped: AtomicU64,
    /// Connections refused or closed for a bad handshake (HTTP or TLS), a bad TLS record or a
    /// frame the floor does not take.
    pub rejected: AtomicU64,
    /// Connections open now (handed to the delivery thread and not yet dropped).
    pub open: AtomicU64,
}

/// A bound floor, ready to start.
#[derive(Debug)]
pub struct Floor {
    listener: TcpListener,
    config: FloorConfig,
    stats: Arc<FloorStats>,
}

/// A running floor: its threads, and how to stop them.
#[derive(Debug)]
pub struct FloorHandle {
    stop: Arc<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
    threads: Vec<JoinHandle<()>>,
}

impl Floor {
    /// Binds the listening socket.
    pub fn bind(config: FloorConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(config.listen)?;
        Ok(Self {
            listener,
            config,
            stats: Arc::default(),
        })
    }

    /// The address the floor listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The floor's counters.
    pub fn stats(&self) -> Arc<FloorStats> {
        Arc::clone(&self.stats)
    }

    /// Starts the acceptor, the handshake threads and the delivery thread.
    pub fn start(self) -> io::Result<FloorHandle> {
        let Self {
            mut listener,
            config,
            stats,
        } = self;
        let stop = Arc::new(AtomicBool::new(false));
        let deadline = config.run_for.map(|d| Instant::now() + d);

        let delivery_poll = Poll::new()?;
        let delivery_waker = Arc::new(Waker::new(delivery_poll.registry(), WAKER)?);
        let accept_poll = Poll::new()?;
        let accept_waker = Arc::new(Waker::new(accept_poll.registry(), WAKER)?);
        accept_poll
            .registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;

        let (conn_tx, conn_rx) = mpsc::channel::<NewConn>();
        let (accepted_tx, accepted_rx) = mpsc::channel::<std::net::TcpStream>();
        let accepted_rx = Arc::new(Mutex::new(accepted_rx));
        let mut threads = Vec::new();

        let delivery = Delivery::new(delivery_poll, conn_rx, &config, Arc::clone(&stats));
        let delivery_stop = Arc::clone(&stop);
        threads.push(
            std::thread::Builder::new()
                .name("floor-delivery".into())
                .spawn(move || delivery.run(&delivery_stop, deadline))?,
        );
        for i in 0..config.handshake_threads.max(1) {
            let accepted = Arc::clone(&accepted_rx);
            let conn_tx = conn_tx.clone();
            let waker = Arc::clone(&delivery_waker);
            let stats = Arc::clone(&stats);
            let tls = config.tls.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("floor-handshake-{i}"))
                    .spawn(move || handshakes(&accepted, &conn_tx, &waker, &stats, tls.as_ref()))?,
            );
        }
        drop(conn_tx);
        let accept_stop = Arc::clone(&stop);
        threads.push(
            std::thread::Builder::new()
                .name("floor-accept".into())
                .spawn(move || {
                    accept_loop(accept_poll, listener, &accepted_tx, &accept_stop, deadline);
                })?,
        );
        Ok(FloorHandle {
            stop,
            wakers: vec![delivery_waker, accept_waker],
            threads,
        })
    }
}

impl FloorHandle {
    /// Tells every thread to stop (they close every connection) and waits for them.
    pub fn shutdown(self) {
        self.stop.store(true, Relaxed);
        for waker in &self.wakers {
            if let Err(error) = waker.wake() {
                warn!(%error, "cannot wake a floor thread");
            }
        }
        self.join();
    }

    /// Waits until the floor stops by itself ([`FloorConfig::run_for`]).
    pub fn join(self) {
        for thread in self.threads {
            if thread.join().is_err() {
                warn!("a floor thread panicked");
            }
        }
    }
}

/// Time left until `deadline`, and whether it has passed.
fn remaining(deadline: Option<Instant>) -> (Option<Duration>, bool) {
    match deadline {
        None => (None, false),
        Some(deadline) => {
            let left = deadline.saturating_duration_since(Instant::now());
            (Some(left), left.is_zero())
        }
    }
}

fn accept_loop(
    mut poll: Poll,
    listener: TcpListener,
    accepted: &Sender<std::net::TcpStream>,
    stop: &AtomicBool,
    deadline: Option<Instant>,
) {
    let mut events = Events::with_capacity(64);
    loop {
        let (timeout, over) = remaining(deadline);
        if over || stop.load(Relaxed) {
            break;
        }
        if let Err(error) = poll.poll(&mut events, timeout) {
            if error.kind() == ErrorKind::Interrupted {
                continue;
            }
            warn!(%error, "the floor's acceptor cannot wait");
            break;
        }
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    if accepted.send(std::net::TcpStream::from(stream)).is_err() {
                        return;
                    }
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => {
                    warn!(%error, "accept failed");
                    break;
                }
            }
        }
    }
    info!("floor shutting down");
}

/// A connection whose upgrade was read, for the delivery thread.
#[derive(Debug)]
struct NewConn {
    stream: std::net::TcpStream,
    group: String,
    /// The `101` answer, written by the delivery thread once the connection is in its group.
    response: Vec<u8>,
    /// Bytes that followed the request (plaintext).
    leftover: Vec<u8>,
    /// The socket's TLS connection, its handshake done (`wss://`).
    tls: Option<Box<ServerConnection>>,
}

fn handshakes(
    accepted: &Mutex<Receiver<std::net::TcpStream>>,
    conns: &Sender<NewConn>,
    waker: &Waker,
    stats: &FloorStats,
    tls: Option<&Arc<ServerConfig>>,
) {
    loop {
        let next = match accepted.lock() {
            Ok(accepted) => accepted.recv(),
            Err(_) => return,
        };
        let Ok(mut stream) = next else { return };
        let mut secure = None;
        let read = match tls.map(|config| ServerConnection::new(Arc::clone(config))) {
            None => prepare(&stream).and_then(|()| handshake(&mut stream)),
            Some(Err(error)) => Err(HandshakeError::Io(io::Error::other(error))),
            Some(Ok(connection)) => {
                let connection = secure.insert(Box::new(connection));
                // The TLS handshake happens in the first read.
                prepare(&stream).and_then(|()| {
                    handshake(&mut rustls::Stream::new(connection.as_mut(), &mut stream))
                })
            }
        };
        match read {
            Ok((group, response, leftover)) => {
                let conn = NewConn {
                    stream,
                    group,
                    response,
                    leftover,
                    tls: secure,
                };
                if conns.send(conn).is_err() {
                    return;
                }
                if let Err(error) = waker.wake() {
                    warn!(%error, "cannot wake the delivery thread");
                }
            }
            // rustls's errors (a bad record, a failed handshake) come as invalid data; it has
            // sent its alert.
            Err(HandshakeError::Io(error))
                if secure.is_some() && error.kind() == ErrorKind::InvalidData =>
            {
                stats.rejected.fetch_add(1, Relaxed);
                debug!(%error, "TLS handshake failed");
            }
            Err(HandshakeError::Io(error)) => {
                debug!(%error, "handshake failed");
            }
            Err(HandshakeError::Refused(status)) => {
                stats.rejected.fetch_add(1, Relaxed);
                debug!(status, "handshake refused");
                let answer =
                    format!("HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
                let _ = match secure.as_deref_mut() {
                    Some(connection) => {
                        let mut tls = rustls::Stream::new(connection, &mut stream);
                        tls.write_all(answer.as_bytes()).and_then(|()| tls.flush())
                    }
                    None => stream.write_all(answer.as_bytes()),
                };
            }
        }
    }
}

#[derive(Debug)]
enum HandshakeError {
    Io(io::Error),
    /// The request is not an upgrade to `/relay/<group>`: the status line to answer with.
    Refused(&'static str),
}

/// Makes an accepted socket blocking, with the handshake's timeout.
fn prepare(stream: &std::net::TcpStream) -> Result<(), HandshakeError> {
    // Accepted non-blocking (by mio): the upgrade is read blocking, with a timeout.
    stream.set_nonblocking(false).map_err(HandshakeError::Io)?;
    stream
        .set_read_timeout(Some(HANDSHAKE_PATIENCE))
        .map_err(HandshakeError::Io)?;
    stream
        .set_write_timeout(Some(HANDSHAKE_PATIENCE))
        .map_err(HandshakeError::Io)
}

/// Reads the upgrade request from a blocking `stream` (the socket, or its TLS stream) and
/// returns the group, the `101` answer and any bytes read after the request.
fn handshake(stream: &mut impl Read) -> Result<(String, Vec<u8>, Vec<u8>), HandshakeError> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let end = loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) => {
                return Err(HandshakeError::Io(ErrorKind::UnexpectedEof.into()));
            }
            Ok(n) => n,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(HandshakeError::Io(error)),
        };
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            break from + at + 4;
        }
        if buf.len() > MAX_REQUEST_BYTES {
            return Err(HandshakeError::Refused(
                "431 Request Header Fields Too Large",
            ));
        }
    };
    let (group, response) = upgrade_response(&buf[..end])?;
    Ok((group, response, buf[end..].to_vec()))
}

/// The group and the `101` answer of an upgrade request (the bytes up to the blank line).
fn upgrade_response(request: &[u8]) -> Result<(String, Vec<u8>), HandshakeError> {
    let bad = HandshakeError::Refused("400 Bad Request");
    let text =
        std::str::from_utf8(request).map_err(|_| HandshakeError::Refused("400 Bad Request"))?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split_whitespace();
    let (Some("GET"), Some(target), Some(_version)) = (first.next(), first.next(), first.next())
    else {
        return Err(bad);
    };
    let path = target.split('?').next().unwrap_or_default();
    let Some(group) = path.strip_prefix("/relay/") else {
        return Err(HandshakeError::Refused("404 Not Found"));
    };
    let mut key = None;
    let mut upgrade = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("sec-websocket-key") {
            key = Some(value);
        } else if name.eq_ignore_ascii_case("upgrade") {
            upgrade = value.eq_ignore_ascii_case("websocket");
        } else if name.eq_ignore_ascii_case("sec-websocket-version") && value != "13" {
            return Err(HandshakeError::Refused("426 Upgrade Required"));
        }
    }
    let (Some(key), true) = (key, upgrade) else {
        return Err(bad);
    };
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        derive_accept_key(key.as_bytes())
    );
    Ok((group.to_owned(), response.into_bytes()))
}

/// A client frame's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    /// The last (here: only) frame of its message.
    pub fin: bool,
    /// The opcode.
    pub opcode: u8,
    /// The masking key.
    pub mask: [u8; 4],
    /// Bytes of the header.
    pub header_len: usize,
    /// Bytes of the payload.
    pub payload_len: usize,
}

/// Why a client frame is refused: the close code to answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Violation {
    /// Unmasked, reserved bits set, a fragmented or oversized control frame.
    Protocol,
    /// Longer than the floor takes.
    TooBig,
}

impl Violation {
    fn code(self) -> u16 {
        match self {
            Self::Protocol => CLOSE_PROTOCOL_ERROR,
            Self::TooBig => CLOSE_TOO_BIG,
        }
    }
}

/// Parses the header of the client frame at the start of `buf`: `Ok(None)` while the header is
/// incomplete (the payload may still be; compare `header_len + payload_len` with `buf.len()`).
pub fn parse_client_head(buf: &[u8], max_payload: usize) -> Result<Option<FrameHead>, Violation> {
    let (Some(&b0), Some(&b1)) = (buf.first(), buf.get(1)) else {
        return Ok(None);
    };
    let fin = b0 & 0x80 != 0;
    let opcode = b0 & 0x0F;
    if b0 & 0x70 != 0 || b1 & 0x80 == 0 {
        return Err(Violation::Protocol);
    }
    let (payload_len, at) = match b1 & 0x7F {
        126 => {
            let Some(bytes) = buf.get(2..4) else {
                return Ok(None);
            };
            (usize::from(u16::from_be_bytes([bytes[0], bytes[1]])), 4)
        }
        127 => {
            let Some(bytes) = buf.get(2..10).and_then(|b| <[u8; 8]>::try_from(b).ok()) else {
                return Ok(None);
            };
            let len = u64::from_be_bytes(bytes);
            (usize::try_from(len).unwrap_or(usize::MAX), 10)
        }
        short => (usize::from(short), 2),
    };
    if opcode >= OP_CLOSE && (!fin || payload_len > 125) {
        return Err(Violation::Protocol);
    }
    if payload_len > max_payload {
        return Err(Violation::TooBig);
    }
    let Some(mask) = buf
        .get(at..at + 4)
        .and_then(|m| <[u8; 4]>::try_from(m).ok())
    else {
        return Ok(None);
    };
    Ok(Some(FrameHead {
        fin,
        opcode,
        mask,
        header_len: at + 4,
        payload_len,
    }))
}

/// Appends a server frame (final, unmasked) with `opcode` and `payload_len` bytes of payload
/// to come: the 2-, 4- or 10-byte header.
pub fn push_server_head(out: &mut Vec<u8>, opcode: u8, payload_len: usize) {
    out.push(0x80 | opcode);
    if payload_len < 126 {
        out.push(payload_len as u8);
    } else if let Ok(len) = u16::try_from(payload_len) {
        out.push(126);
        out.extend_from_slice(&len.to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(payload_len as u64).to_be_bytes());
    }
}

/// Appends `payload` unmasked with `mask`.
fn push_unmasked(out: &mut Vec<u8>, payload: &[u8], mask: [u8; 4]) {
    out.extend(
        payload
            .iter()
            .zip(mask.iter().cycle())
            .map(|(byte, key)| byte ^ key),
    );
}

/// One connection owned by the delivery thread.
#[derive(Debug)]
struct Conn {
    stream: TcpStream,
    /// Its TLS connection (`wss://`): then the backlog is the records rustls holds.
    tls: Option<Box<ServerConnection>>,
    /// TLS only: the socket took less than rustls had for it; wait until it is writable.
    stalled: bool,
    group: usize,
    /// The start of a frame not yet complete.
    pending: Vec<u8>,
    /// Bytes owed to the socket, from `sent` on.
    backlog: Vec<u8>,
    sent: usize,
    /// Set once the connection is to be dropped (at the end of the event batch).
    dead: bool,
}

impl Conn {
    fn owed(&self) -> usize {
        self.backlog.len() - self.sent
    }

    /// Writes `bytes` after whatever is owed; keeps what the socket cannot take. `Err` with
    /// `true`: the backlog overflowed; `false`: the socket failed.
    fn send(&mut self, bytes: &[u8], max_backlog: usize) -> Result<(), bool> {
        if let Some(tls) = &mut self.tls {
            // Encrypted into rustls's buffer, bounded by its limit (set to `max_backlog`): a
            // frame it takes only in part overflows.
            if !matches!(tls.writer().write(bytes), Ok(n) if n == bytes.len()) {
                return Err(true);
            }
            return match self.stalled || self.flush() {
                true => Ok(()),
                false => Err(false),
            };
        }
        let mut written = 0;
        if self.owed() == 0 {
            while written < bytes.len() {
                match self.stream.write(&bytes[written..]) {
                    Ok(0) => return Err(false),
                    Ok(n) => written += n,
                    Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                    Err(error) if error.kind() == ErrorKind::Interrupted => {}
                    Err(_) => return Err(false),
                }
            }
        }
        let rest = &bytes[written..];
        if rest.is_empty() {
            return Ok(());
        }
        if self.owed() + rest.len() > max_backlog {
            return Err(true);
        }
        self.backlog.extend_from_slice(rest);
        Ok(())
    }

    /// Writes what is owed, as far as the socket takes it. `false`: the socket failed.
    fn flush(&mut self) -> bool {
        if let Some(tls) = &mut self.tls {
            self.stalled = false;
            while tls.wants_write() {
                match tls.write_tls(&mut self.stream) {
                    Ok(0) => return false,
                    Ok(_) => {}
                    Err(error) if error.kind() == ErrorKind::WouldBlock => {
                        self.stalled = true;
                        return true;
                    }
                    Err(error) if error.kind() == ErrorKind::Interrupted => {}
                    Err(_) => return false,
                }
            }
            return true;
        }
        while self.owed() > 0 {
            match self.stream.write(&self.backlog[self.sent..]) {
                Ok(0) => return false,
                Ok(n) => self.sent += n,
                Err(error) if error.kind() == ErrorKind::WouldBlock => return true,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.backlog.clear();
        self.sent = 0;
        if self.backlog.capacity() > KEEP_BACKLOG_CAPACITY {
            self.backlog = Vec::new();
        }
        true
    }

    /// Best effort: a close frame with `code`, if the socket takes it now.
    fn send_close(&mut self, code: Option<[u8; 2]>) {
        let mut frame = Vec::with_capacity(4);
        push_server_head(&mut frame, OP_CLOSE, code.map_or(0, |c| c.len()));
        if let Some(code) = code {
            frame.extend_from_slice(&code);
        }
        let _ = self.send(&frame, usize::MAX);
    }
}

/// The delivery thread's state.
#[derive(Debug)]
struct Delivery {
    poll: Poll,
    incoming: Receiver<NewConn>,
    stats: Arc<FloorStats>,
    max_backlog: usize,
    max_frame: usize,
    /// Connections by slot (token = slot + 2).
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    group_ids: HashMap<String, usize>,
    /// Members (slots) of each group.
    members: Vec<Vec<usize>>,
    /// Slots to drop at the end of the event batch.
    doomed: Vec<usize>,
    /// The frame being delivered, built once.
    out: Vec<u8>,
    scratch: Vec<u8>,
}

impl Delivery {
    fn new(
        poll: Poll,
        incoming: Receiver<NewConn>,
        config: &FloorConfig,
        stats: Arc<FloorStats>,
    ) -> Self {
        Self {
            poll,
            incoming,
            stats,
            max_backlog: config.max_backlog_bytes,
            max_frame: config.max_frame_bytes,
            conns: Vec::new(),
            free: Vec::new(),
            group_ids: HashMap::new(),
            members: Vec::new(),
            doomed: Vec::new(),
            out: Vec::with_capacity(16 * 1024),
            scratch: vec![0; READ_CHUNK],
        }
    }

    fn run(mut self, stop: &AtomicBool, deadline: Option<Instant>) {
        let mut events = Events::with_capacity(1024);
        loop {
            let (timeout, over) = remaining(deadline);
            if over || stop.load(Relaxed) {
                break;
            }
            if let Err(error) = self.poll.poll(&mut events, timeout) {
                if error.kind() == ErrorKind::Interrupted {
                    continue;
                }
                warn!(%error, "the floor's delivery thread cannot wait");
                break;
            }
            let mut woken = false;
            for event in &events {
                if event.token() == WAKER {
                    woken = true;
                    continue;
                }
                let slot = event.token().0 - 2;
                if event.is_writable() {
                    self.on_writable(slot);
                }
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    self.on_readable(slot);
                }
            }
            self.bury();
            if woken {
                self.admit();
                self.bury();
            }
        }
        let open = self.conns.iter().flatten().count();
        info!(open, "floor delivery thread done");
        self.stats.open.store(0, Relaxed);
    }

    fn live(&mut self, slot: usize) -> Option<&mut Conn> {
        self.conns
            .get_mut(slot)
            .and_then(Option::as_mut)
            .filter(|c| !c.dead)
    }

    fn doom(&mut self, slot: usize) {
        if let Some(conn) = self.live(slot) {
            conn.dead = true;
            self.doomed.push(slot);
        }
    }

    /// Drops the connections doomed during the batch.
    fn bury(&mut self) {
        for slot in std::mem::take(&mut self.doomed) {
            let Some(conn) = self.conns.get_mut(slot).and_then(Option::take) else {
                continue;
            };
            if let Some(members) = self.members.get_mut(conn.group) {
                members.retain(|&m| m != slot);
            }
            self.free.push(slot);
            self.stats.open.fetch_sub(1, Relaxed);
            // Dropping the stream closes it (and takes it out of the poll).
        }
    }

    /// Takes the connections the handshake threads handed over.
    fn admit(&mut self) {
        while let Ok(new) = self.incoming.try_recv() {
            let NewConn {
                stream,
                group,
                response,
                leftover,
                mut tls,
            } = new;
            if let Err(error) = stream
                .set_nonblocking(true)
                .and_then(|()| stream.set_nodelay(true))
            {
                debug!(%error, "cannot set up a connection");
                continue;
            }
            let mut stream = TcpStream::from_std(stream);
            let slot = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            if let Err(error) = self.poll.registry().register(
                &mut stream,
                Token(slot + 2),
                Interest::READABLE | Interest::WRITABLE,
            ) {
                warn!(%error, "cannot watch a connection");
                self.free.push(slot);
                continue;
            }
            let next_id = self.members.len();
            let group = *self.group_ids.entry(group).or_insert(next_id);
            if group == next_id {
                self.members.push(Vec::new());
            }
            self.members[group].push(slot);
            if let Some(tls) = &mut tls {
                tls.set_buffer_limit(Some(self.max_backlog));
            }
            let secure = tls.is_some();
            self.conns[slot] = Some(Conn {
                stream,
                tls,
                stalled: false,
                group,
                pending: Vec::new(),
                backlog: Vec::new(),
                sent: 0,
                dead: false,
            });
            self.stats.open.fetch_add(1, Relaxed);
            let max = self.max_backlog;
            if let Some(conn) = self.live(slot)
                && conn.send(&response, max).is_err()
            {
                self.doom(slot);
                continue;
            }
            if !leftover.is_empty() && !self.absorb(slot, &leftover) {
                continue;
            }
            // Plaintext rustls decrypted beyond the request waits in it: no readiness event
            // will say so.
            if secure {
                self.on_readable(slot);
            }
        }
    }

    fn on_writable(&mut self, slot: usize) {
        if let Some(conn) = self.live(slot)
            && !conn.flush()
        {
            self.doom(slot);
        }
    }

    fn on_readable(&mut self, slot: usize) {
        if self.live(slot).is_some_and(|c| c.tls.is_some()) {
            return self.on_readable_tls(slot);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        while let Some(conn) = self.live(slot) {
            match conn.stream.read(&mut scratch) {
                Ok(0) => {
                    self.doom(slot);
                    break;
                }
                Ok(n) => {
                    if !self.absorb(slot, &scratch[..n]) {
                        break;
                    }
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => {
                    debug!(%error, "read failed");
                    self.doom(slot);
                    break;
                }
            }
        }
        self.scratch = scratch;
    }

    /// [`Delivery::on_readable`] through the socket's TLS connection: the plaintext it holds,
    /// then what the socket has, record by record, until the socket would block.
    fn on_readable_tls(&mut self, slot: usize) {
        let mut scratch = std::mem::take(&mut self.scratch);
        while let Some(tls) = self.live(slot).and_then(|c| c.tls.as_mut()) {
            match tls.reader().read(&mut scratch) {
                // The client's close_notify.
                Ok(0) => {
                    self.doom(slot);
                    break;
                }
                Ok(n) => {
                    if !self.absorb(slot, &scratch[..n]) {
                        break;
                    }
                    continue;
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => {}
                Err(error) => {
                    debug!(%error, "TLS read failed");
                    self.doom(slot);
                    break;
                }
            }
            let Some(Conn {
                stream,
                tls: Some(tls),
                ..
            }) = self.live(slot)
            else {
                break;
            };
            match tls.read_tls(stream) {
                Ok(0) => {
                    self.doom(slot);
                    break;
                }
                Ok(_) => {}
                Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => {
                    debug!(%error, "read failed");
                    self.doom(slot);
                    break;
                }
            }
            if let Err(error) = tls.process_new_packets() {
                debug!(%error, "bad TLS record: connection closed");
                // Best effort: the alert rustls queued.
                let _ = tls.write_tls(stream);
                self.stats.rejected.fetch_add(1, Relaxed);
                self.doom(slot);
                break;
            }
            // What the records asked for (a key update's answer, an alert).
            if let Some(conn) = self.live(slot)
                && conn.tls.as_ref().is_some_and(|t| t.wants_write())
                && !conn.stalled
                && !conn.flush()
            {
                self.doom(slot);
                break;
            }
        }
        self.scratch = scratch;
    }

    /// Handles `bytes` read from `slot`: every complete frame, keeping the start of an
    /// incomplete one. Returns whether the connection is still live.
    fn absorb(&mut self, slot: usize, bytes: &[u8]) -> bool {
        let Some(conn) = self.live(slot) else {
            return false;
        };
        let mut pending = std::mem::take(&mut conn.pending);
        let joined = !pending.is_empty();
        if joined {
            pending.extend_from_slice(bytes);
        }
        let data: &[u8] = if joined { &pending } else { bytes };
        let mut at = 0;
        let live = loop {
            let head = match parse_client_head(&data[at..], self.max_frame) {
                Ok(Some(head)) => head,
                Ok(None) => break true,
                Err(violation) => {
                    self.reject(slot, violation.code());
                    break false;
                }
            };
            let end = at + head.header_len + head.payload_len;
            if data.len() < end {
                break true;
            }
            let payload = &data[at + head.header_len..end];
            at = end;
            if !self.on_frame(slot, head, payload) {
                break false;
            }
        };
        if !live {
            return false;
        }
        let rest = if joined {
            pending.drain(..at);
            pending
        } else {
            bytes[at..].to_vec()
        };
        match self.live(slot) {
            Some(conn) => {
                conn.pending = rest;
                true
            }
            None => false,
        }
    }

    /// Handles one complete client frame; returns whether the sender is still live.
    fn on_frame(&mut self, slot: usize, head: FrameHead, payload: &[u8]) -> bool {
        match (head.opcode, head.fin) {
            (OP_BINARY, true) => {
                self.stats.frames_in.fetch_add(1, Relaxed);
                let mut out = std::mem::take(&mut self.out);
                out.clear();
                push_server_head(&mut out, OP_BINARY, payload.len());
                push_unmasked(&mut out, payload, head.mask);
                let group = self.live(slot).map(|c| c.group);
                if let Some(group) = group {
                    self.deliver(group, &out);
                }
                self.out = out;
                self.live(slot).is_some()
            }
            (OP_PING, _) => {
                let mut pong = Vec::with_capacity(2 + payload.len());
                push_server_head(&mut pong, OP_PONG, payload.len());
                push_unmasked(&mut pong, payload, head.mask);
                let max = self.max_backlog;
                let sent = self.live(slot).map(|conn| conn.send(&pong, max).is_ok());
                if sent == Some(false) {
                    self.doom(slot);
                }
                sent == Some(true)
            }
            (OP_PONG, _) => true,
            (OP_CLOSE, _) => {
                let mut code = [0u8; 2];
                let echoed = (payload.len() >= 2).then(|| {
                    code[0] = payload[0] ^ head.mask[0];
                    code[1] = payload[1] ^ head.mask[1];
                    code
                });
                if let Some(conn) = self.live(slot) {
                    conn.send_close(echoed);
                }
                self.doom(slot);
                false
            }
            (OP_TEXT, _) => {
                self.reject(slot, CLOSE_UNSUPPORTED);
                false
            }
            // Continuations and unfinished messages (the floor takes whole frames only), and
            // unknown opcodes.
            _ => {
                self.reject(slot, CLOSE_PROTOCOL_ERROR);
                false
            }
        }
    }

    /// Closes `slot` with `code` and drops it.
    fn reject(&mut self, slot: usize, code: u16) {
        self.stats.rejected.fetch_add(1, Relaxed);
        if let Some(conn) = self.live(slot) {
            debug!(
                code,
                "closing a connection for a frame the floor does not take"
            );
            conn.send_close(Some(code.to_be_bytes()));
        }
        self.doom(slot);
    }

    /// Writes `frame` to every live member of `group`.
    fn deliver(&mut self, group: usize, frame: &[u8]) {
        let Self {
            conns,
            members,
            doomed,
            stats,
            max_backlog,
            ..
        } = self;
        let Some(members) = members.get(group) else {
            return;
        };
        for &member in members {
            let Some(conn) = conns
                .get_mut(member)
                .and_then(Option::as_mut)
                .filter(|c| !c.dead)
            else {
                continue;
            };
            match conn.send(frame, *max_backlog) {
                Ok(()) => {
                    stats.frames_out.fetch_add(1, Relaxed);
                }
                Err(overflow) => {
                    if overflow {
                        stats.dropped.fetch_add(1, Relaxed);
                        debug!(member, "backlog over the limit: connection dropped");
                    }
                    conn.dead = true;
                    doomed.push(member);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn client_frame(opcode: u8, fin: bool, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
        let mut frame = Vec::new();
        push_server_head(&mut frame, opcode, payload.len());
        if !fin {
            frame[0] &= 0x7F;
        }
        frame[1] |= 0x80;
        frame.extend_from_slice(&mask);
        push_unmasked(&mut frame, payload, mask);
        frame
    }

    #[test]
    fn parses_masked_client_frames_of_every_length_form() {
        let mask = [1, 2, 3, 4];
        for len in [0, 5, 125, 126, 300, 65_535, 65_536, 70_000] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let frame = client_frame(OP_BINARY, true, &payload, mask);
            let head = parse_client_head(&frame, 1 << 20).unwrap().unwrap();
            assert_eq!(head.opcode, OP_BINARY);
            assert!(head.fin);
            assert_eq!(head.payload_len, len);
            assert_eq!(head.header_len + len, frame.len(), "length {len}");
            let mut unmasked = Vec::new();
            push_unmasked(&mut unmasked, &frame[head.header_len..], head.mask);
            assert_eq!(unmasked, payload);
            // Any prefix shorter than the header is incomplete, never an error.
            for cut in 0..head.header_len {
                assert_eq!(parse_client_head(&frame[..cut], 1 << 20), Ok(None));
            }
        }
    }

    #[test]
    fn refuses_what_the_floor_does_not_take() {
        let mut unmasked = Vec::new();
        push_server_head(&mut unmasked, OP_BINARY, 3);
        unmasked.extend_from_slice(b"abc");
        assert_eq!(parse_client_head(&unmasked, 100), Err(Violation::Protocol));
        let mut reserved = client_frame(OP_BINARY, true, b"abc", [0; 4]);
        reserved[0] |= 0x40;
        assert_eq!(parse_client_head(&reserved, 100), Err(Violation::Protocol));
        let long_ping = client_frame(OP_PING, true, &[0; 126], [0; 4]);
        assert_eq!(
            parse_client_head(&long_ping, 1000),
            Err(Violation::Protocol)
        );
        let split_close = client_frame(OP_CLOSE, false, &[], [0; 4]);
        assert_eq!(
            parse_client_head(&split_close, 100),
            Err(Violation::Protocol)
        );
        let big = client_frame(OP_BINARY, true, &[0; 200], [0; 4]);
        assert_eq!(parse_client_head(&big, 199), Err(Violation::TooBig));
        let mut huge = vec![0x82, 0xFF];
        huge.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(parse_client_head(&huge, 1 << 20), Err(Violation::TooBig));
    }

    #[test]
    fn server_headers_take_the_shortest_form() {
        for (len, header) in [(0, 2), (125, 2), (126, 4), (65_535, 4), (65_536, 10)] {
            let mut out = Vec::new();
            push_server_head(&mut out, OP_BINARY, len);
            assert_eq!(out.len(), header, "length {len}");
            assert_eq!(out[0], 0x82);
            assert_eq!(out[1] & 0x80, 0, "unmasked");
        }
    }

    #[test]
    fn answers_upgrades_to_relay_groups_only() {
        let request = b"GET /relay/7 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
        let (group, response) = upgrade_response(request).unwrap();
        assert_eq!(group, "7");
        let response = String::from_utf8(response).unwrap();
        assert!(response.starts_with("HTTP/1.1 101 "));
        // RFC 6455's own example.
        assert!(response.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
        let elsewhere = b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Key: a\r\n\r\n";
        assert!(matches!(
            upgrade_response(elsewhere),
            Err(HandshakeError::Refused("404 Not Found"))
        ));
        let no_key = b"GET /relay/1 HTTP/1.1\r\nUpgrade: websocket\r\n\r\n";
        assert!(matches!(
            upgrade_response(no_key),
            Err(HandshakeError::Refused(_))
        ));
        assert!(matches!(
            upgrade_response(b"\xff\xfe\r\n\r\n"),
            Err(HandshakeError::Refused(_))
        ));
    }
}
