//! What the server reads: a client's WebSocket frames (RFC 6455), taken apart without owning a
//! socket or a buffer of their own.
//!
//! A connection's [`FrameReader`] is a few words of state: the bytes of a frame not complete
//! yet (none between frames, the usual case), and a fragmented message being put together. It
//! reads from its socket into the thread's scratch buffer ([`SCRATCH`]), takes every complete
//! frame from there, and keeps only what is left over — so an idle connection holds no read
//! buffer at all, and the reading state is plain data that could be handed to another thread.
//!
//! It reads exactly what tungstenite's reader reads, and fails exactly where it fails, with the
//! same errors (`tungstenite::Error`) and messages (`tungstenite::Message`): the frame header is
//! tungstenite's own parser ([`FrameHeader::parse`]); the rules after it (reserved bits, masking,
//! control frames, fragmentation, UTF-8, close codes, size limits) follow tungstenite's
//! `WebSocketContext::read_message_frame`, and `tests::reads_what_tungstenite_reads` holds the
//! two side by side on random byte streams cut at random places.

use std::cell::RefCell;
use std::io::Cursor;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Control, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::{FrameHeader, Utf8Bytes};

/// The most bytes one read takes from a socket: the size of every thread's scratch buffer.
/// `--read-buffer-bytes` (at most this) sets a connection's reads.
pub(crate) const MOST_READ: usize = 64 * 1024;

thread_local! {
    /// Where every connection served on this thread reads into: one buffer per thread, not one
    /// per connection.
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; MOST_READ].into_boxed_slice());
}

/// One connection's reading state.
#[derive(Debug)]
pub(crate) struct FrameReader {
    /// Bytes read but not taken yet: the start of an incomplete frame, or frames after one that
    /// was returned. Empty (and unallocated) between frames.
    held: Vec<u8>,
    /// A fragmented message being put together.
    fragments: Option<Box<Fragments>>,
    /// The largest frame, and the largest message, accepted.
    max_size: u32,
    /// Bytes one read may take (`--read-buffer-bytes`).
    read_size: u32,
    /// The client's close frame was read, the socket ended, or an error was returned: nothing
    /// more is read.
    ended: bool,
}

/// A message in several frames, so far.
#[derive(Debug)]
struct Fragments {
    text: bool,
    data: Vec<u8>,
    /// For text: how much of `data` is known to be UTF-8 (the rest is an incomplete character).
    valid: usize,
}

/// What one frame taken from a buffer gave.
enum Taken {
    /// Not a whole frame yet: nothing taken.
    Incomplete,
    /// A frame of `used` bytes that completes no message (a fragment).
    Fragment { used: usize },
    /// A frame of `used` bytes, and the message it completes.
    Message { used: usize, message: Message },
}

impl FrameReader {
    /// A reader whose first bytes are `rest` (what the client sent right after its handshake).
    pub(crate) fn new(rest: Vec<u8>, max_size: usize, read_size: usize) -> Self {
        Self {
            held: rest,
            fragments: None,
            max_size: u32::try_from(max_size).unwrap_or(u32::MAX),
            read_size: read_size.clamp(256, MOST_READ) as u32,
            ended: false,
        }
    }

    /// The next message, reading from `socket` as needed; `None` once the client has closed
    /// (after its close frame, which is returned first) or after an error. Cancel-safe: what
    /// was read is kept in the reader.
    pub(crate) async fn next<R: AsyncRead + Unpin>(
        &mut self,
        socket: &mut R,
    ) -> Option<Result<Message, Error>> {
        std::future::poll_fn(|cx| self.poll_next(socket, cx)).await
    }

    pub(crate) fn poll_next<R: AsyncRead + Unpin>(
        &mut self,
        socket: &mut R,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, Error>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        loop {
            if !self.held.is_empty() {
                let mut held = std::mem::take(&mut self.held);
                let (used, found) = self.take_all(&mut held);
                held.drain(..used);
                // Kept only while bytes are left: an emptied buffer is freed.
                if !held.is_empty() {
                    self.held = held;
                }
                if let Some(found) = found {
                    return Poll::Ready(self.end_on_error(found));
                }
            }
            let read = SCRATCH.with_borrow_mut(|scratch| {
                let mut buf = ReadBuf::new(&mut scratch[..self.read_size as usize]);
                match Pin::new(&mut *socket).poll_read(cx, &mut buf) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(error)) => return Poll::Ready(Some(Err(Error::Io(error)))),
                    Poll::Ready(Ok(())) => {}
                }
                let filled = buf.filled().len();
                if filled == 0 {
                    // The socket ended before the client's close frame (after it, nothing is
                    // read): a reset, as tungstenite says.
                    let reset = ProtocolError::ResetWithoutClosingHandshake;
                    return Poll::Ready(Some(Err(Error::Protocol(reset))));
                }
                if !self.held.is_empty() {
                    // The rest of an incomplete frame: taken from the held bytes next.
                    self.held.extend_from_slice(&scratch[..filled]);
                    return Poll::Ready(None);
                }
                let fresh = &mut scratch[..filled];
                let (used, found) = self.take_all(fresh);
                // Whatever is left (an incomplete frame, or the frames after a message) is
                // kept: the only bytes a connection holds between reads.
                self.held.extend_from_slice(&fresh[used..]);
                Poll::Ready(found)
            });
            match read {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(found)) => return Poll::Ready(self.end_on_error(found)),
                Poll::Ready(None) => {}
            }
        }
    }

    /// Nothing is read after an error, or after the client's close frame.
    fn end_on_error(&mut self, found: Result<Message, Error>) -> Option<Result<Message, Error>> {
        if found.is_err() || matches!(found, Ok(Message::Close(_))) {
            self.ended = true;
            self.held = Vec::new();
            self.fragments = None;
        }
        Some(found)
    }

    /// Takes frames from the start of `buf` until one completes a message, an error, or the
    /// bytes run out: how many bytes were taken, and the message or error if any.
    fn take_all(&mut self, buf: &mut [u8]) -> (usize, Option<Result<Message, Error>>) {
        let mut used = 0;
        loop {
            match self.take(&mut buf[used..]) {
                Ok(Taken::Incomplete) => return (used, None),
                Ok(Taken::Fragment { used: n }) => used += n,
                Ok(Taken::Message { used: n, message }) => return (used + n, Some(Ok(message))),
                Err(error) => return (used, Some(Err(error))),
            }
        }
    }

    /// Takes one frame from the start of `buf` (unmasking it in place).
    fn take(&mut self, buf: &mut [u8]) -> Result<Taken, Error> {
        let mut cursor = Cursor::new(&*buf);
        let Some((header, length)) = FrameHeader::parse(&mut cursor)? else {
            return Ok(Taken::Incomplete);
        };
        let start = cursor.position() as usize;
        if length > u64::from(self.max_size) {
            return Err(Error::Capacity(CapacityError::MessageTooLong {
                size: usize::try_from(length).unwrap_or(usize::MAX),
                max_size: self.max_size as usize,
            }));
        }
        let end = start + length as usize;
        if buf.len() < end {
            return Ok(Taken::Incomplete);
        }
        let payload = &mut buf[start..end];
        // A server MUST close the connection upon receiving a frame that is not masked.
        let Some(mask) = header.mask else {
            return Err(Error::Protocol(ProtocolError::UnmaskedFrameFromClient));
        };
        unmask(payload, mask);
        // MUST be 0 unless an extension is negotiated (none is).
        if header.rsv1 || header.rsv2 || header.rsv3 {
            return Err(Error::Protocol(ProtocolError::NonZeroReservedBits));
        }
        let message = match header.opcode {
            OpCode::Control(control) => self.control(control, header.is_final, payload)?,
            OpCode::Data(data) => self.data(data, header.is_final, payload)?,
        };
        Ok(match message {
            Some(message) => Taken::Message { used: end, message },
            None => Taken::Fragment { used: end },
        })
    }

    /// A control frame: at most 125 bytes and never fragmented.
    fn control(
        &mut self,
        control: Control,
        is_final: bool,
        payload: &[u8],
    ) -> Result<Option<Message>, Error> {
        if !is_final {
            return Err(Error::Protocol(ProtocolError::FragmentedControlFrame));
        }
        if payload.len() > 125 {
            return Err(Error::Protocol(ProtocolError::ControlFrameTooBig));
        }
        Ok(Some(match control {
            Control::Close => Message::Close(close_frame(payload)?),
            Control::Ping => Message::Ping(Bytes::copy_from_slice(payload)),
            Control::Pong => Message::Pong(Bytes::copy_from_slice(payload)),
            Control::Reserved(opcode) => {
                return Err(Error::Protocol(ProtocolError::UnknownControlFrameType(
                    opcode,
                )));
            }
        }))
    }

    /// A data frame: a whole message, or a fragment of one.
    fn data(
        &mut self,
        data: Data,
        is_final: bool,
        payload: &[u8],
    ) -> Result<Option<Message>, Error> {
        let max = self.max_size as usize;
        match (data, self.fragments.as_mut()) {
            (Data::Continue, None) => Err(Error::Protocol(ProtocolError::UnexpectedContinueFrame)),
            (Data::Continue, Some(fragments)) => {
                fragments.extend(payload, max)?;
                if !is_final {
                    return Ok(None);
                }
                let fragments = self.fragments.take().map(|f| *f);
                fragments.map(Fragments::complete).transpose()
            }
            (_, Some(_)) => Err(Error::Protocol(ProtocolError::ExpectedFragment(data))),
            (Data::Reserved(opcode), None) => {
                Err(Error::Protocol(ProtocolError::UnknownDataFrameType(opcode)))
            }
            (Data::Text | Data::Binary, None) if !is_final => {
                let mut fragments = Fragments {
                    text: data == Data::Text,
                    data: Vec::new(),
                    valid: 0,
                };
                fragments.extend(payload, max)?;
                self.fragments = Some(Box::new(fragments));
                Ok(None)
            }
            (Data::Text, None) => Ok(Some(Message::Text(text(payload)?))),
            (Data::Binary, None) => Ok(Some(Message::Binary(Bytes::copy_from_slice(payload)))),
        }
    }
}

impl Fragments {
    /// Adds a fragment; fails at once on bytes that can never be UTF-8 in a text message.
    fn extend(&mut self, tail: &[u8], max: usize) -> Result<(), Error> {
        let len = self.data.len();
        if len > max || tail.len() > max - len {
            return Err(Error::Capacity(CapacityError::MessageTooLong {
                size: len + tail.len(),
                max_size: max,
            }));
        }
        self.data.extend_from_slice(tail);
        if self.text {
            match std::str::from_utf8(&self.data[self.valid..]) {
                Ok(_) => self.valid = self.data.len(),
                // An incomplete character at the end: the next fragment may complete it.
                Err(error) if error.error_len().is_none() => self.valid += error.valid_up_to(),
                Err(_) => return Err(utf8_error()),
            }
        }
        Ok(())
    }

    fn complete(self) -> Result<Message, Error> {
        if !self.text {
            return Ok(Message::Binary(self.data.into()));
        }
        if self.valid != self.data.len() {
            return Err(utf8_error());
        }
        Ok(Message::Text(text(&self.data)?))
    }
}

/// A text message's payload, which must be UTF-8.
fn text(payload: &[u8]) -> Result<Utf8Bytes, Error> {
    Utf8Bytes::try_from(Bytes::copy_from_slice(payload)).map_err(|_| utf8_error())
}

fn utf8_error() -> Error {
    Error::Utf8("invalid UTF-8 in a text message".into())
}

/// A close frame's code and reason. A code RFC 6455 forbids on the wire is read as 1002, as
/// tungstenite reads it (`connection::close_answer` answers it).
fn close_frame(payload: &[u8]) -> Result<Option<CloseFrame>, Error> {
    match payload {
        [] => Ok(None),
        [_] => Err(Error::Protocol(ProtocolError::InvalidCloseSequence)),
        [high, low, reason @ ..] => {
            let code = CloseCode::from(u16::from_be_bytes([*high, *low]));
            let reason = Utf8Bytes::try_from(Bytes::copy_from_slice(reason))
                .map_err(|_| Error::Utf8("invalid UTF-8 in a close reason".into()))?;
            Ok(Some(if code.is_allowed() {
                CloseFrame { code, reason }
            } else {
                CloseFrame {
                    code: CloseCode::Protocol,
                    reason: Utf8Bytes::from_static("Protocol violation"),
                }
            }))
        }
    }
}

/// Removes a client's mask from a payload (RFC 6455 §5.3).
fn unmask(payload: &mut [u8], mask: [u8; 4]) {
    let word = u32::from_ne_bytes(mask);
    let mut chunks = payload.chunks_exact_mut(4);
    for chunk in &mut chunks {
        let value = u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) ^ word;
        chunk.copy_from_slice(&value.to_ne_bytes());
    }
    for (byte, key) in chunks.into_remainder().iter_mut().zip(mask) {
        *byte ^= key;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use futures_util::FutureExt;
    use proptest::prelude::*;
    use std::collections::VecDeque;
    use std::io::{Read, Write};
    use tokio_tungstenite::tungstenite::protocol::{Role, WebSocket, WebSocketConfig};

    const MAX: usize = 1024;

    /// A socket that gives its bytes in the pieces it was cut into, then ends.
    struct Pieces(VecDeque<Vec<u8>>);

    impl Pieces {
        fn give(&mut self, into: &mut [u8]) -> usize {
            let Some(front) = self.0.front_mut() else {
                return 0;
            };
            let n = front.len().min(into.len());
            into[..n].copy_from_slice(&front[..n]);
            front.drain(..n);
            if front.is_empty() {
                self.0.pop_front();
            }
            n
        }
    }

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            Ok(self.give(buf))
        }
    }

    impl Write for Pieces {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl AsyncRead for Pieces {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let into = buf.initialize_unfilled();
            let n = self.get_mut().give(into);
            buf.advance(n);
            Poll::Ready(Ok(()))
        }
    }

    /// What a reader gave, in order: messages, then the error it ended with (if any).
    #[derive(Debug, PartialEq)]
    enum Seen {
        Message(Message),
        Failed(String),
    }

    /// The kind of an error, as the connection acts on it (`Protocol` by its exact cause).
    fn kind(error: &Error) -> String {
        match error {
            Error::Capacity(_) => "too big".into(),
            Error::Protocol(cause) => format!("protocol: {cause:?}"),
            Error::Utf8(_) => "utf-8".into(),
            Error::Io(_) => "io".into(),
            other => format!("other: {other:?}"),
        }
    }

    fn tungstenite_reads(pieces: Vec<Vec<u8>>, rest: Vec<u8>) -> Vec<Seen> {
        let config = WebSocketConfig::default()
            .read_buffer_size(512)
            .max_message_size(Some(MAX))
            .max_frame_size(Some(MAX));
        let mut socket =
            WebSocket::from_partially_read(Pieces(pieces.into()), rest, Role::Server, Some(config));
        let mut seen = Vec::new();
        loop {
            match socket.read() {
                Ok(message) => seen.push(Seen::Message(message)),
                Err(Error::ConnectionClosed | Error::AlreadyClosed) => return seen,
                Err(error) => {
                    seen.push(Seen::Failed(kind(&error)));
                    return seen;
                }
            }
        }
    }

    fn ours_reads(pieces: Vec<Vec<u8>>, rest: Vec<u8>) -> Vec<Seen> {
        let mut socket = Pieces(pieces.into());
        let mut reader = FrameReader::new(rest, MAX, 256);
        let mut seen = Vec::new();
        while let Some(next) = reader
            .next(&mut socket)
            .now_or_never()
            .expect("never waits")
        {
            seen.push(match next {
                Ok(message) => Seen::Message(message),
                Err(error) => Seen::Failed(kind(&error)),
            });
        }
        assert!(
            reader.held.is_empty() || !reader.ended,
            "nothing held once ended"
        );
        seen
    }

    /// One frame as a client might send it, well formed or not.
    #[derive(Debug, Clone)]
    struct RawFrame {
        first: u8,
        masked: bool,
        mask: [u8; 4],
        payload: Vec<u8>,
        /// A length claimed beyond the payload (a frame too big, never sent whole).
        claim: Option<u64>,
    }

    impl RawFrame {
        fn bytes(&self) -> Vec<u8> {
            let len = self.claim.unwrap_or(self.payload.len() as u64);
            let mut out = vec![self.first];
            let mask_bit = if self.masked { 0x80 } else { 0 };
            if len < 126 {
                out.push(mask_bit | len as u8);
            } else if let Ok(short) = u16::try_from(len) {
                out.push(mask_bit | 126);
                out.extend_from_slice(&short.to_be_bytes());
            } else {
                out.push(mask_bit | 127);
                out.extend_from_slice(&len.to_be_bytes());
            }
            if self.masked {
                out.extend_from_slice(&self.mask);
            }
            out.extend(self.payload.iter().enumerate().map(|(i, byte)| {
                if self.masked {
                    byte ^ self.mask[i % 4]
                } else {
                    *byte
                }
            }));
            out
        }
    }

    fn payload() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => proptest::collection::vec(any::<u8>(), 0..40),
            // Text, with characters of several bytes to split between fragments.
            4 => "[a-zé€😀]{0,30}".prop_map(String::into_bytes),
            // Close payloads: a code (allowed or not) and a reason.
            2 => (any::<u16>(), "[a-z€]{0,10}").prop_map(|(code, reason)| {
                let mut out = code.to_be_bytes().to_vec();
                out.extend_from_slice(reason.as_bytes());
                out
            }),
            1 => proptest::collection::vec(any::<u8>(), 100..300),
            1 => proptest::collection::vec(any::<u8>(), MAX - 10..MAX + 10),
        ]
    }

    fn frame() -> impl Strategy<Value = RawFrame> {
        let opcode = prop_oneof![
            6 => Just(0x2u8), 4 => Just(0x1), 5 => Just(0x0), 2 => Just(0x9), 1 => Just(0xA),
            1 => Just(0x8), 1 => 0u8..16,
        ];
        let flags = prop_oneof![10 => Just(0u8), 1 => 0u8..8];
        (
            any::<bool>(),
            flags,
            opcode,
            prop::bool::weighted(0.97),
            any::<[u8; 4]>(),
            payload(),
            prop::option::weighted(0.03, prop_oneof![Just(MAX as u64 + 1), any::<u64>()]),
        )
            .prop_map(
                |(fin, rsv, opcode, masked, mask, payload, claim)| RawFrame {
                    first: if fin { 0x80 } else { 0 } | (rsv << 4) | opcode,
                    masked,
                    mask,
                    payload,
                    claim,
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Any bytes, cut anywhere, read as tungstenite reads them: the same messages, then the
        /// same kind of failure (or the same clean end).
        #[test]
        fn reads_what_tungstenite_reads(
            frames in proptest::collection::vec(frame(), 0..12),
            cuts in proptest::collection::vec(1usize..64, 1..20),
            rest_len in 0usize..20,
            garbage in proptest::collection::vec(any::<u8>(), 0..3),
        ) {
            let mut stream: Vec<u8> = frames.iter().flat_map(RawFrame::bytes).collect();
            stream.extend(garbage);
            let rest_len = rest_len.min(stream.len());
            let rest = stream[..rest_len].to_vec();
            let mut pieces = Vec::new();
            let mut at = rest_len;
            for cut in cuts.iter().cycle() {
                if at >= stream.len() {
                    break;
                }
                let end = (at + cut).min(stream.len());
                pieces.push(stream[at..end].to_vec());
                at = end;
            }
            prop_assert_eq!(ours_reads(pieces.clone(), rest.clone()), tungstenite_reads(pieces, rest));
        }
    }

    #[test]
    fn between_frames_a_connection_holds_no_bytes() {
        let frame = |payload: &[u8]| RawFrame {
            first: 0x82,
            masked: true,
            mask: [1, 2, 3, 4],
            payload: payload.to_vec(),
            claim: None,
        };
        let two: Vec<u8> = [frame(b"one").bytes(), frame(b"two").bytes()].concat();
        let split = two.len() - 2;
        let mut socket = Pieces(vec![two[..split].to_vec(), two[split..].to_vec()].into());
        let mut reader = FrameReader::new(Vec::new(), MAX, 512);
        let first = reader.next(&mut socket).now_or_never().unwrap();
        assert_eq!(
            first.unwrap().unwrap(),
            Message::Binary(Bytes::from_static(b"one"))
        );
        assert!(!reader.held.is_empty(), "the incomplete second frame waits");
        let second = reader.next(&mut socket).now_or_never().unwrap();
        assert_eq!(
            second.unwrap().unwrap(),
            Message::Binary(Bytes::from_static(b"two"))
        );
        assert_eq!(reader.held.capacity(), 0, "nothing held, nothing allocated");
        let end = reader.next(&mut socket).now_or_never().unwrap();
        assert!(matches!(
            end,
            Some(Err(Error::Protocol(
                ProtocolError::ResetWithoutClosingHandshake
            )))
        ));
        assert!(reader.next(&mut socket).now_or_never().unwrap().is_none());
    }

    #[test]
    fn a_fragmented_text_with_a_bad_byte_fails_before_it_is_finished() {
        let fragment = |first: u8, payload: &[u8]| RawFrame {
            first,
            masked: true,
            mask: [9, 8, 7, 6],
            payload: payload.to_vec(),
            claim: None,
        };
        // "é" split between two fragments is fine; 0xff never is.
        let good = [
            fragment(0x01, b"caf\xc3").bytes(),
            fragment(0x80, b"\xa9").bytes(),
        ]
        .concat();
        let mut socket = Pieces(vec![good].into());
        let mut reader = FrameReader::new(Vec::new(), MAX, 512);
        let message = reader
            .next(&mut socket)
            .now_or_never()
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(message, Message::Text("café".into()));
        let bad = fragment(0x01, b"ok\xff").bytes();
        let mut socket = Pieces(vec![bad].into());
        let mut reader = FrameReader::new(Vec::new(), MAX, 512);
        let failed = reader.next(&mut socket).now_or_never().unwrap().unwrap();
        assert!(matches!(failed, Err(Error::Utf8(_))), "{failed:?}");
    }
}
