//! What the server sends on one connection, and how it reaches the socket.
//!
//! Every outgoing message is a WebSocket [`Frame`] built once, header and payload in one buffer:
//! a table's broadcast is framed once and the same bytes are shared by every member (no framing,
//! copying or buffering per connection).
//!
//! Each connection has an [`Outbox`]: its frames not yet written, in order, behind a lock that
//! belongs to this connection alone. Whoever produces a frame (a table's actor, the
//! connection's reader) writes it straight to the socket when nothing is waiting before it and
//! the kernel takes it: one `write` and no task wake-up, the usual case (uWebSockets' "cork and
//! flush"). Only what the kernel would not take now waits in the queue, for the connection's
//! session, which writes everything waiting with one vectored `write` when the socket is
//! writable again. TLS connections are written by their writer task only. A queue past its
//! limit means a reader too slow to keep up: it is refused, and the caller drops the
//! connection rather than let it stall anyone.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, IoSlice, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures_util::task::AtomicWaker;
use std::task::{Context, Poll};
use tokio::io::{AsyncWriteExt, WriteHalf};
use tokio::net::TcpStream;

use crate::reactor::{Events, Socket};

/// One WebSocket frame as the server sends it (final, unmasked): header and payload in one
/// buffer, cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    bytes: Bytes,
    header: u8,
}

const OP_BINARY: u8 = 0x2;
const OP_CLOSE: u8 = 0x8;
const OP_PING: u8 = 0x9;
const OP_PONG: u8 = 0xA;
/// A close frame's reason: a control frame carries at most 125 bytes, two of them the code.
const MAX_CLOSE_REASON: usize = 123;

impl Frame {
    /// A binary message (every message of the protocol is one).
    pub fn binary(payload: &[u8]) -> Self {
        Self::build(OP_BINARY, &[payload])
    }

    /// A ping with no payload.
    pub fn ping() -> Self {
        Self::build(OP_PING, &[])
    }

    /// The answer to a client's ping, with its payload (at most 125 bytes: the reader refuses
    /// longer control frames).
    pub fn pong(payload: &[u8]) -> Self {
        Self::build(OP_PONG, &[&payload[..payload.len().min(125)]])
    }

    /// A close frame: the code, then the reason cut to fit a control frame (at a character
    /// boundary, so it stays UTF-8).
    pub fn close(code: u16, reason: &str) -> Self {
        let mut end = reason.len().min(MAX_CLOSE_REASON);
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        Self::build(OP_CLOSE, &[&code.to_be_bytes(), &reason.as_bytes()[..end]])
    }

    fn build(opcode: u8, parts: &[&[u8]]) -> Self {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let mut buf = BytesMut::with_capacity(len + 10);
        buf.put_u8(0x80 | opcode);
        if len < 126 {
            buf.put_u8(len as u8);
        } else if let Ok(len) = u16::try_from(len) {
            buf.put_u8(126);
            buf.put_u16(len);
        } else {
            buf.put_u8(127);
            buf.put_u64(len as u64);
        }
        let header = buf.len() as u8;
        for part in parts {
            buf.extend_from_slice(part);
        }
        Self {
            bytes: buf.freeze(),
            header,
        }
    }

    /// The message inside the frame.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[usize::from(self.header)..]
    }

    /// The frame as written, header included.
    #[cfg(test)]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Why a frame was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The queue is past its limit: the reader is too slow.
    Full,
    /// The connection has said goodbye, or its socket failed.
    Finished,
    /// A frame that may be left out ([`Outbox::push_unless_busy`]) was: the queue is half
    /// full.
    Shed,
}

/// The frames of one connection that the kernel has not taken yet, and what closes it.
#[derive(Debug)]
pub(crate) struct Outbox {
    /// A plain TCP connection's socket, written by whoever holds the queue's lock (and read by
    /// its session, through a shared reference: the socket is not split in two halves, which
    /// would cost an allocation per connection), registered with the server's own readiness
    /// loop (`reactor.rs`), not tokio's; `None` for TLS (its writer task holds the stream) and
    /// for stand-ins of connections on other nodes.
    socket: Option<Socket>,
    /// The socket's readiness events so far (the session reads and writes until the kernel
    /// would block, and waits only if none came meanwhile).
    events: Events,
    queue: Mutex<Queue>,
    /// Wakes the connection's writing (its session or writer task) when the queue stops being
    /// empty, or when the connection is kicked: whoever waits registers here, then looks again.
    wake: AtomicWaker,
    /// Wakes the connection's session when it is kicked.
    session: AtomicWaker,
    /// Set (once, never cleared) to close the connection: a close with a reason, a slow
    /// reader, a failed socket, the server's shutdown (its session's host kicks it).
    kicked: AtomicBool,
    /// The close code and the reason sent with it; the first close wins. Boxed: every
    /// connection keeps its outbox, and only a closed one needs these.
    pub(crate) close: OnceLock<Box<(u16, Cow<'static, str>)>>,
    max_frames: u32,
    max_bytes: u32,
}

#[derive(Debug, Default)]
struct Queue {
    /// Frames not written yet, oldest first; the first may be partly written.
    frames: VecDeque<Bytes>,
    /// Their length.
    bytes: usize,
    /// Nothing more is accepted: the close frame is queued, or the socket failed.
    finished: bool,
}

impl Queue {
    /// Forgets the first `written` bytes.
    fn advance(&mut self, mut written: usize) {
        self.bytes -= written;
        while written > 0 {
            let Some(front) = self.frames.front_mut() else {
                return;
            };
            if written < front.len() {
                front.advance(written);
                return;
            }
            written -= front.len();
            self.frames.pop_front();
        }
    }

    /// Writes what waits with vectored writes until the queue is empty (`true`) or the kernel
    /// takes no more (`false`).
    fn write_to(&mut self, socket: &Socket) -> io::Result<bool> {
        while !self.frames.is_empty() {
            let mut slices = [IoSlice::new(&[]); MAX_IOVECS];
            let mut count = 0;
            for (slot, frame) in slices.iter_mut().zip(&self.frames) {
                *slot = IoSlice::new(frame);
                count += 1;
            }
            match socket.stream().write_vectored(&slices[..count]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.advance(n),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(true)
    }
}

/// The most frames handed to one vectored write.
const MAX_IOVECS: usize = 64;

impl Outbox {
    /// The outbox of a connection: `socket` is a plain connection's socket (`None` for TLS).
    /// `max_frames` and `max_bytes` bound what may wait in the queue.
    pub fn new(socket: Option<Socket>, max_frames: usize, max_bytes: usize) -> Self {
        Self {
            socket,
            events: Events::default(),
            queue: Mutex::new(Queue::default()),
            wake: AtomicWaker::new(),
            session: AtomicWaker::new(),
            kicked: AtomicBool::new(false),
            close: OnceLock::new(),
            max_frames: u32::try_from(max_frames.max(1)).unwrap_or(u32::MAX),
            max_bytes: u32::try_from(max_bytes).unwrap_or(u32::MAX),
        }
    }

    /// An outbox that accepts nothing: the stand-in of a connection held by another node,
    /// whose frames go through the table's outbound subject instead.
    pub fn detached() -> Self {
        let outbox = Self::new(None, 1, 0);
        outbox.lock().finished = true;
        outbox
    }

    /// A plain connection's session reads its socket: `Ready` with what the kernel had
    /// (nothing: the end of the stream, as with no socket at all), or `Pending` until the
    /// socket's next event wakes `cx`.
    pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let Some(socket) = &self.socket else {
            return Poll::Ready(Ok(0));
        };
        loop {
            let before = self.events.now();
            match socket.stream().read(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    if self.events.would_block(before, &self.session, cx) {
                        return Poll::Pending;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }

    /// The socket had an event (`reactor.rs`): the session looks again.
    pub fn socket_event(&self) {
        self.events.arrived(&self.session);
    }

    /// Writes what waits until the queue is empty (`Ready(Ok)`), or `Pending` until the
    /// socket's next event wakes `cx` (the kernel takes no more now).
    fn poll_write_queued(&self, socket: &Socket, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let before = self.events.now();
            if self.write_queued(socket)? {
                return Poll::Ready(Ok(()));
            }
            if self.events.would_block(before, &self.session, cx) {
                return Poll::Pending;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing panics while holding the lock; if something did, the queue is still sound.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends one frame: written at once when nothing waits before it and the kernel takes it,
    /// queued otherwise (the connection's writing finishes it).
    pub fn push(&self, frame: &Frame) -> Result<(), Refused> {
        let mut queue = self.lock();
        if queue.finished {
            return Err(Refused::Finished);
        }
        let mut rest = frame.bytes.clone();
        let was_empty = queue.frames.is_empty();
        if was_empty && let Some(socket) = &self.socket {
            match socket.stream().write(&rest) {
                Ok(n) if n == rest.len() => return Ok(()),
                Ok(n) => rest.advance(n),
                // (Interrupted: the writing tries again, woken below.)
                Err(error)
                    if matches!(
                        error.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => {
                    // The connection's writing meets the same error next; nothing more
                    // can be sent.
                    queue.finished = true;
                    drop(queue);
                    self.kick();
                    return Err(Refused::Finished);
                }
            }
        } else if queue.frames.len() >= self.max_frames as usize
            || queue.bytes + rest.len() > self.max_bytes as usize
        {
            return Err(Refused::Full);
        }
        queue.bytes += rest.len();
        queue.frames.push_back(rest);
        drop(queue);
        if was_empty {
            self.wake.wake();
        }
        Ok(())
    }

    /// Sends a frame that may be left out (a camera signal): as [`push`](Self::push), but
    /// refused with [`Refused::Shed`] when the queue is already half full, so that what may be
    /// left out never makes a slow reader a dropped one.
    pub fn push_unless_busy(&self, frame: &Frame) -> Result<(), Refused> {
        {
            let queue = self.lock();
            if !queue.finished
                && !queue.frames.is_empty()
                && (2 * (queue.frames.len() + 1) > self.max_frames as usize
                    || 2 * (queue.bytes + frame.bytes.len()) > self.max_bytes as usize)
            {
                return Err(Refused::Shed);
            }
        }
        self.push(frame)
    }

    /// Ready when the queue has something to write; otherwise the next frame queued wakes `cx`.
    /// One waiter at a time: the connection's writing.
    pub fn poll_woken(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.wake.register(cx.waker());
        if self.lock().frames.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    /// A plain connection's writing, polled by its session: writes what waits while the kernel
    /// takes it, and is woken when more is queued or the socket can take more. `Ready` only if
    /// the socket failed: the outbox is then abandoned and the connection kicked (nothing more
    /// can be sent). Pending for ever without a socket of its own (TLS: its writer task writes).
    pub fn poll_write(&self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(socket) = &self.socket else {
            return Poll::Pending;
        };
        loop {
            let failed = match self.poll_write_queued(socket, cx) {
                Poll::Ready(Ok(())) => {
                    self.wake.register(cx.waker());
                    if self.lock().frames.is_empty() {
                        return Poll::Pending;
                    }
                    continue;
                }
                // The kernel took what it could: woken when it can take more.
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(error)) => error,
            };
            tracing::debug!(%failed, "writing to a connection failed");
            self.abandon();
            self.kick();
            return Poll::Ready(());
        }
    }

    /// Queues the close frame after everything else; nothing more is accepted after it.
    pub fn finish(&self, close: &Frame) {
        let mut queue = self.lock();
        if !queue.finished {
            queue.finished = true;
            queue.bytes += close.bytes.len();
            queue.frames.push_back(close.bytes.clone());
        }
    }

    /// Accepts nothing more and drops what waits (the socket failed).
    pub fn abandon(&self) {
        let mut queue = self.lock();
        queue.finished = true;
        queue.frames.clear();
        queue.bytes = 0;
    }

    /// Plain connections: writes what waits until the queue is empty (`true`) or the kernel
    /// takes no more (`false`).
    fn write_queued(&self, socket: &Socket) -> io::Result<bool> {
        self.lock().write_to(socket)
    }

    /// Takes everything that waits (TLS connections, whose writer task writes it).
    fn take(&self) -> Vec<Bytes> {
        let mut queue = self.lock();
        queue.bytes = 0;
        queue.frames.drain(..).collect()
    }

    /// Closes the connection with a WebSocket close code and a reason (the first close wins).
    pub fn close_because(&self, code: u16, reason: impl Into<Cow<'static, str>>) {
        // Kicked already (by an earlier close, or by the server's shutdown, which means
        // 1001): the first reason stands.
        if !self.is_kicked() {
            let _ = self.close.set(Box::new((code, reason.into())));
            self.kick();
        }
    }

    /// Closes the connection (without a reason of its own: 1001 if none was given before).
    /// Wakes its session, and its writer task if it has one.
    pub fn kick(&self) {
        if !self.kicked.swap(true, Ordering::AcqRel) {
            self.session.wake();
            self.wake.wake();
        }
    }

    /// Whether the connection has been kicked.
    pub fn is_kicked(&self) -> bool {
        self.kicked.load(Ordering::Acquire)
    }

    /// Ready once the connection is kicked; until then a kick wakes `cx` (the session's).
    pub fn poll_kicked(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_kicked_through(&self.session, cx)
    }

    /// As [`poll_kicked`](Self::poll_kicked), for the writing (a TLS connection's writer
    /// task): a kick wakes `cx` through the writing's waker.
    pub fn poll_kicked_writing(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_kicked_through(&self.wake, cx)
    }

    fn poll_kicked_through(&self, waker: &AtomicWaker, cx: &mut Context<'_>) -> Poll<()> {
        if !self.is_kicked() {
            waker.register(cx.waker());
            if !self.is_kicked() {
                return Poll::Pending;
            }
        }
        Poll::Ready(())
    }
}

/// What a connection's session writes what waits in its outbox to.
#[derive(Debug)]
pub(crate) enum WriteSide {
    /// A plain TCP connection: the socket is in the outbox.
    Plain,
    /// A TLS connection's write half, and the frames taken from the outbox and not yet handed
    /// to TLS whole (the first may be partly handed over).
    Tls {
        stream: WriteHalf<tokio_rustls::server::TlsStream<TcpStream>>,
        taken: VecDeque<Bytes>,
    },
}

impl WriteSide {
    /// The writing side of a TLS connection.
    pub fn tls(stream: WriteHalf<tokio_rustls::server::TlsStream<TcpStream>>) -> Self {
        WriteSide::Tls {
            stream,
            taken: VecDeque::new(),
        }
    }

    /// Writes what waits in `outbox` whenever something does, for as long as the connection
    /// lasts. Returns only if the socket failed, after abandoning the outbox and kicking the
    /// connection: nothing more can be sent. Cancel-safe, as [`drain`](Self::drain).
    pub async fn keep_writing(&mut self, outbox: &Outbox) {
        // What a drain cut short left behind goes first; draining an empty queue costs a check.
        while self.drain(outbox).await.is_ok() {
            std::future::poll_fn(|cx| outbox.poll_woken(cx)).await;
        }
        outbox.abandon();
        outbox.kick();
    }

    /// Writes everything that waits in `outbox`, waiting for the socket as long as it takes.
    /// Cancel-safe: a frame is never written twice nor lost, whatever await it is dropped at.
    pub async fn drain(&mut self, outbox: &Outbox) -> io::Result<()> {
        match self {
            WriteSide::Plain => {
                let Some(socket) = &outbox.socket else {
                    return Ok(());
                };
                std::future::poll_fn(|cx| outbox.poll_write_queued(socket, cx)).await
            }
            WriteSide::Tls { stream, taken } => loop {
                if taken.is_empty() {
                    taken.extend(outbox.take());
                    if taken.is_empty() {
                        // Cancel-safe too: what TLS holds stays with it for the next flush.
                        return stream.flush().await;
                    }
                }
                while let Some(front) = taken.front_mut() {
                    // `write` writes nothing when it is cancelled.
                    match stream.write(front).await? {
                        0 => return Err(io::ErrorKind::WriteZero.into()),
                        n if n == front.len() => drop(taken.pop_front()),
                        n => front.advance(n),
                    }
                }
            },
        }
    }

    /// Ends the sending direction (after the close frame): the client reads the end of the
    /// stream.
    pub async fn shutdown(&mut self, outbox: &Outbox) {
        match self {
            WriteSide::Plain => {
                if let Some(socket) = &outbox.socket {
                    let _ = socket.stream().shutdown(std::net::Shutdown::Write);
                }
            }
            WriteSide::Tls { stream, .. } => {
                let _ = stream.shutdown().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_util::sync::CancellationToken;

    #[test]
    fn frames_have_the_shortest_header_for_their_length() {
        for (len, header) in [(0, 2), (125, 2), (126, 4), (65_535, 4), (65_536, 10)] {
            let payload = vec![7u8; len];
            let frame = Frame::binary(&payload);
            assert_eq!(frame.as_bytes().len(), len + header, "{len}");
            assert_eq!(frame.as_bytes()[0], 0x82);
            assert_eq!(frame.payload(), &payload[..]);
            // The length as the header states it.
            let bytes = frame.as_bytes();
            let stated = match bytes[1] {
                126 => usize::from(u16::from_be_bytes([bytes[2], bytes[3]])),
                127 => bytes[2..10]
                    .iter()
                    .fold(0usize, |n, &b| (n << 8) | usize::from(b)),
                n => usize::from(n),
            };
            assert_eq!(stated, len);
        }
    }

    #[test]
    fn a_close_reason_is_cut_at_a_character_boundary() {
        let reason = "é".repeat(100); // 200 bytes
        let frame = Frame::close(1008, &reason);
        let payload = frame.payload();
        assert!(payload.len() <= 125);
        assert_eq!(&payload[..2], &1008u16.to_be_bytes());
        let text = std::str::from_utf8(&payload[2..]).expect("UTF-8");
        assert_eq!(text.len(), 122);
        assert_eq!(frame.as_bytes()[0], 0x88);
        assert_eq!(Frame::ping().as_bytes(), &[0x89, 0]);
        assert_eq!(Frame::pong(b"ab").as_bytes(), &[0x8A, 2, b'a', b'b']);
    }

    #[test]
    fn a_queue_forgets_exactly_what_was_written() {
        let mut queue = Queue::default();
        for part in [&b"abc"[..], b"de", b"fghi"] {
            queue.bytes += part.len();
            queue.frames.push_back(Bytes::copy_from_slice(part));
        }
        queue.advance(4);
        assert_eq!(queue.bytes, 5);
        assert_eq!(queue.frames.front().map(|f| &f[..]), Some(&b"e"[..]));
        queue.advance(5);
        assert!(queue.frames.is_empty());
        assert_eq!(queue.bytes, 0);
    }

    #[tokio::test]
    async fn frames_go_straight_to_the_socket_and_queue_only_what_the_kernel_refuses() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("loopback");
        let mut client = TcpStream::connect(listener.local_addr().expect("address"))
            .await
            .expect("loopback");
        let (server, _) = listener.accept().await.expect("loopback");
        // The socket registered with a readiness loop of its own, its events reaching the
        // outbox (as they reach a connection's).
        let reactor = crate::reactor::Reactor::start(CancellationToken::new()).expect("epoll");
        let outbox = std::sync::Arc::new_cyclic(|me: &std::sync::Weak<Outbox>| {
            let me: std::sync::Weak<dyn crate::reactor::Ready> = me.clone();
            let socket = reactor.register(server, me).expect("registered");
            Outbox::new(Some(socket), 1 << 20, 1 << 30)
        });
        let (one, two) = (Frame::binary(b"events"), Frame::binary(b"ack"));
        assert_eq!(outbox.push(&one), Ok(()));
        assert_eq!(outbox.push(&two), Ok(()));
        // Nothing waited: both were written at once, in order.
        assert!(outbox.lock().frames.is_empty());
        let expected = [one.as_bytes(), two.as_bytes()].concat();
        let mut got = vec![0; expected.len()];
        tokio::io::AsyncReadExt::read_exact(&mut client, &mut got)
            .await
            .expect("the frames");
        assert_eq!(got, expected);
        // A client that does not read: the kernel's buffers fill, then frames wait in order.
        let big = Frame::binary(&[1u8; 60_000]);
        let mut sent = 0;
        while outbox.lock().frames.is_empty() {
            assert_eq!(outbox.push(&big), Ok(()));
            sent += big.as_bytes().len();
        }
        let waiting = outbox.lock().bytes;
        assert!(waiting > 0 && waiting <= big.as_bytes().len());
        assert_eq!(outbox.push(&two), Ok(()));
        sent += two.as_bytes().len();
        assert_eq!(outbox.lock().frames.len(), 2);
        assert_eq!(outbox.lock().bytes, waiting + two.as_bytes().len());
        // The client reads again: the socket's events wake the writing, which writes what
        // waited, in order, to the last byte.
        let reading = tokio::spawn(async move {
            let mut all = Vec::new();
            let mut buf = vec![0; 1 << 16];
            while all.len() < sent {
                let n = tokio::io::AsyncReadExt::read(&mut client, &mut buf)
                    .await
                    .expect("reading");
                assert!(n > 0, "the stream ended early");
                all.extend_from_slice(&buf[..n]);
            }
            all
        });
        // (The sleep first: the timer's own wake-up must not be what lets the writing finish.)
        let mut side = WriteSide::Plain;
        tokio::select! {
            biased;
            () = tokio::time::sleep(std::time::Duration::from_secs(30)) => {
                panic!("the writing was never woken to finish")
            }
            drained = side.drain(&outbox) => assert!(drained.is_ok()),
        }
        assert!(outbox.lock().frames.is_empty());
        let all = reading.await.expect("the reader");
        assert_eq!(all.len(), sent);
        assert!(all.ends_with(two.as_bytes()));
        assert!(all.starts_with(&big.as_bytes()[..1000]));
    }

    impl crate::reactor::Ready for Outbox {
        fn ready(&self) {
            self.socket_event();
        }
    }

    #[test]
    fn a_detached_outbox_accepts_nothing() {
        let outbox = Outbox::detached();
        assert_eq!(outbox.push(&Frame::ping()), Err(Refused::Finished));
    }

    #[test]
    fn a_queue_past_its_limit_refuses_and_keeps_what_it_has() {
        // No socket: everything waits for the writer.
        let outbox = Outbox::new(None, 2, 1 << 20);
        assert_eq!(outbox.push(&Frame::binary(b"one")), Ok(()));
        assert_eq!(outbox.push(&Frame::binary(b"two")), Ok(()));
        assert_eq!(outbox.push(&Frame::binary(b"three")), Err(Refused::Full));
        let frames = outbox.take();
        assert_eq!(frames.len(), 2);
        assert_eq!(&frames[1][2..], b"two");
        let small = Outbox::new(None, 100, 8);
        assert_eq!(small.push(&Frame::binary(b"12345")), Ok(()));
        assert_eq!(small.push(&Frame::binary(b"6")), Err(Refused::Full));
        small.finish(&Frame::close(1000, "bye"));
        assert_eq!(small.push(&Frame::binary(b"6")), Err(Refused::Finished));
        let frames = small.take();
        assert_eq!(frames.last().map(|f| f[0]), Some(0x88));
    }
}
