//! The MessagePack codec: one message is one MessagePack map with named fields.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::ClientMessage;
use crate::error::DecodeError;
use crate::event::Event;
use crate::limits::{MAX_CLIENT_MESSAGE_BYTES, MAX_SERVER_MESSAGE_BYTES};
use crate::server::ServerMessage;

/// The depth `rmp_serde` refuses a container at: one past the deepest nesting of MessagePack
/// containers a message may have ([`MAX_MESSAGE_DEPTH`](crate::MAX_MESSAGE_DEPTH) levels). The
/// deepest real message (a snapshot) nests four levels; anything far deeper is refused before
/// it can exhaust the stack.
const MAX_DEPTH: usize = crate::limits::MAX_MESSAGE_DEPTH + 1;

/// Encodes a client message: a MessagePack map with named fields and a `type` tag.
pub fn encode_client(message: &ClientMessage) -> Vec<u8> {
    encode(message)
}

/// Encodes a server message: a MessagePack map with named fields and a `type` tag.
pub fn encode_server(message: &ServerMessage) -> Vec<u8> {
    encode(message)
}

/// Decodes a client message. Frames over [`MAX_CLIENT_MESSAGE_BYTES`] are refused unparsed.
/// Never panics, whatever the bytes.
/// A request is a map with named fields, and so is every record inside it: an array where a
/// map belongs is refused, not read positionally.
pub fn decode_client(bytes: &[u8]) -> Result<ClientMessage, DecodeError> {
    let message = decode(bytes, MAX_CLIENT_MESSAGE_BYTES)?;
    check_maps(bytes, &message)?;
    Ok(message)
}

/// Decodes a server message. Frames over [`MAX_SERVER_MESSAGE_BYTES`] are refused unparsed.
/// Never panics, whatever the bytes.
pub fn decode_server(bytes: &[u8]) -> Result<ServerMessage, DecodeError> {
    decode(bytes, MAX_SERVER_MESSAGE_BYTES)
}

/// Encodes one event on its own (as it appears inside an `events` message): the form journals
/// and replay exports store.
pub fn encode_event(event: &Event) -> Vec<u8> {
    encode(event)
}

/// Decodes one event encoded by [`encode_event`]. Never panics, whatever the bytes.
pub fn decode_event(bytes: &[u8]) -> Result<Event, DecodeError> {
    decode(bytes, MAX_SERVER_MESSAGE_BYTES)
}

/// What can be read of a request that does not decode: its `id` (if it is a map with an
/// integer `id` that fits a `u32`) and its `type` tag (if it names a known request). The server
/// echoes them in its `bad_message` answer so a client waiting for that id is not left hanging.
/// The other fields are stepped over without recursion, so a value nested however deep (too deep
/// for the decoder) does not hide the top-level `id`. Never panics, whatever the bytes.
pub fn peek_request(bytes: &[u8]) -> (Option<u32>, Option<&'static str>) {
    if bytes.len() > MAX_CLIENT_MESSAGE_BYTES {
        return (None, None);
    }
    let mut reader = Reader { bytes, pos: 0 };
    let Some(Head::Map(entries)) = reader.head() else {
        return (None, None);
    };
    let (mut id, mut request) = (None, None);
    for _ in 0..entries {
        let key = match reader.head() {
            Some(Head::Str(key)) => Some(key),
            Some(head) => {
                if reader.skip_within(head).is_none() {
                    break;
                }
                None
            }
            None => break,
        };
        let Some(value) = reader.head() else { break };
        match (key, value) {
            (Some(b"id"), Head::Int(Some(value))) if id.is_none() => {
                id = u32::try_from(value).ok();
            }
            (Some(b"type"), Head::Str(name)) if request.is_none() => {
                request = ClientMessage::NAMES
                    .iter()
                    .copied()
                    .find(|known| known.as_bytes() == name);
            }
            (_, value) => {
                if reader.skip_within(value).is_none() {
                    break;
                }
            }
        }
    }
    (id, request)
}

/// The head of one MessagePack value: a container with its length, a string with its bytes, an
/// integer (`None` if negative), or any other scalar (its payload already stepped over).
#[derive(Debug, Clone, Copy)]
enum Head<'a> {
    Map(u64),
    Array(u64),
    Str(&'a [u8]),
    Int(Option<u64>),
    Scalar,
}

/// Reads MessagePack heads one at a time, without recursion: what [`peek_request`] and the
/// array check of [`decode_client`] walk with. Every read that runs past the end is `None`.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let taken = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(taken)
    }

    fn uint(&mut self, n: usize) -> Option<u64> {
        Some(
            self.take(n)?
                .iter()
                .fold(0u64, |sum, &b| (sum << 8) | u64::from(b)),
        )
    }

    fn int(&mut self, n: usize) -> Option<Option<u64>> {
        let raw = self.uint(n)?;
        let shift = 64 - 8 * u32::try_from(n).ok()?;
        // Sign-extend the n-byte value: a negative integer has no `u64`.
        #[allow(clippy::cast_possible_wrap)]
        let value = ((raw << shift) as i64) >> shift;
        Some(u64::try_from(value).ok())
    }

    fn sized(&mut self, n: usize) -> Option<usize> {
        usize::try_from(self.uint(n)?).ok()
    }

    /// The next value's head; a string's bytes and a scalar's payload are consumed with it.
    fn head(&mut self) -> Option<Head<'a>> {
        let marker = *self.take(1)?.first()?;
        Some(match marker {
            0x00..=0x7f => Head::Int(Some(u64::from(marker))),
            0x80..=0x8f => Head::Map(u64::from(marker & 0x0f)),
            0x90..=0x9f => Head::Array(u64::from(marker & 0x0f)),
            0xa0..=0xbf => Head::Str(self.take(usize::from(marker & 0x1f))?),
            0xc0 | 0xc2 | 0xc3 => Head::Scalar,
            0xc1 => return None,
            0xc4..=0xc6 => {
                let n = self.sized(1 << (marker - 0xc4))?;
                self.take(n)?;
                Head::Scalar
            }
            0xc7..=0xc9 => {
                let n = self.sized(1 << (marker - 0xc7))?;
                self.take(n.checked_add(1)?)?;
                Head::Scalar
            }
            0xca => {
                self.take(4)?;
                Head::Scalar
            }
            0xcb => {
                self.take(8)?;
                Head::Scalar
            }
            0xcc..=0xcf => Head::Int(Some(self.uint(1 << (marker - 0xcc))?)),
            0xd0..=0xd3 => Head::Int(self.int(1 << (marker - 0xd0))?),
            0xd4..=0xd8 => {
                self.take((1 << (marker - 0xd4)) + 1)?;
                Head::Scalar
            }
            0xd9..=0xdb => {
                let n = self.sized(1 << (marker - 0xd9))?;
                Head::Str(self.take(n)?)
            }
            0xdc | 0xdd => Head::Array(self.uint(2 << (marker - 0xdc))?),
            0xde | 0xdf => Head::Map(self.uint(2 << (marker - 0xde))?),
            0xe0..=0xff => Head::Int(None),
        })
    }

    /// Steps over what is left of a value whose head was just read (its elements, if it is a
    /// container), counting the values still to skip instead of recursing: any depth costs no
    /// stack. Each value read consumes at least one byte, so this ends within the input.
    fn skip_within(&mut self, head: Head<'a>) -> Option<()> {
        let mut pending = Self::children(head);
        while pending > 0 {
            pending = pending - 1 + Self::children(self.head()?);
        }
        Some(())
    }

    fn children(head: Head<'a>) -> u64 {
        match head {
            Head::Map(n) => n.saturating_mul(2),
            Head::Array(n) => n,
            Head::Str(_) | Head::Int(_) | Head::Scalar => 0,
        }
    }

    /// Whether an array appears anywhere in the value (strings' and binaries' bytes are not
    /// looked into).
    fn has_array(&mut self) -> Option<bool> {
        let mut pending = 1u64;
        while pending > 0 {
            let head = self.head()?;
            if matches!(head, Head::Array(_)) {
                return Some(true);
            }
            pending = pending - 1 + Self::children(head);
        }
        Some(false)
    }

    /// The value's outline: where its maps and arrays are, with the maps' string keys. Recursive,
    /// so only called on a message that already decoded (within [`MAX_DEPTH`]); deeper is `None`.
    fn outline(&mut self, depth: usize) -> Option<Outline<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match self.head()? {
            Head::Array(n) => Outline::Array(
                (0..n)
                    .map(|_| self.outline(depth + 1))
                    .collect::<Option<_>>()?,
            ),
            Head::Map(n) => Outline::Map(
                (0..n)
                    .map(|_| {
                        let key = match self.head()? {
                            Head::Str(key) => Some(key),
                            head => {
                                self.skip_within(head)?;
                                None
                            }
                        };
                        Some((key, self.outline(depth + 1)?))
                    })
                    .collect::<Option<_>>()?,
            ),
            Head::Str(_) | Head::Int(_) | Head::Scalar => Outline::Scalar,
        })
    }
}

/// Where a value's maps and arrays are ([`Reader::outline`]).
enum Outline<'a> {
    Map(Vec<(Option<&'a [u8]>, Outline<'a>)>),
    Array(Vec<Outline<'a>>),
    Scalar,
}

impl Outline<'_> {
    /// Whether every array in `self` (what a client sent) stands where `canonical` (the decoded
    /// message encoded again, with named fields) has an array too: a list. An array anywhere
    /// else stood for a record (or an id) read positionally. Fields the message does not keep
    /// (unknown ones, or left out because they are empty) are not compared.
    fn arrays_only_for_lists(&self, canonical: &Outline<'_>) -> bool {
        match (self, canonical) {
            (Outline::Array(sent), Outline::Array(kept)) => sent
                .iter()
                .zip(kept)
                .all(|(sent, kept)| sent.arrays_only_for_lists(kept)),
            (Outline::Array(_), _) => false,
            (Outline::Map(sent), Outline::Map(kept)) => sent.iter().all(|(key, sent)| {
                let kept = kept
                    .iter()
                    .find(|(kept_key, _)| key.is_some() && kept_key == key);
                kept.is_none_or(|(_, kept)| sent.arrays_only_for_lists(kept))
            }),
            _ => true,
        }
    }
}

/// Refuses a decoded request whose bytes hold an array where PROTOCOL.md has a map. rmp-serde
/// (like serde's internally tagged enums) reads a struct from an array of its fields in order;
/// the protocol has named fields only. Most requests hold no array at all and cost one flat scan.
fn check_maps(bytes: &[u8], message: &ClientMessage) -> Result<(), DecodeError> {
    let refused =
        || DecodeError::Malformed("an array where a map with named fields belongs".into());
    if (Reader { bytes, pos: 0 }).has_array() != Some(true) {
        return Ok(());
    }
    let canonical_bytes = encode(message);
    let sent = Reader { bytes, pos: 0 }.outline(0);
    let canonical = Reader {
        bytes: &canonical_bytes,
        pos: 0,
    }
    .outline(0);
    match (sent, canonical) {
        (Some(sent), Some(canonical)) if sent.arrays_only_for_lists(&canonical) => Ok(()),
        _ => Err(refused()),
    }
}

pub(crate) fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    // Every message type is a map of known length made of integers, strings, booleans, nils
    // and arrays, which MessagePack always encodes: this cannot fail.
    rmp_serde::to_vec_named(message).unwrap_or_default()
}

fn decode<T: DeserializeOwned>(bytes: &[u8], max: usize) -> Result<T, DecodeError> {
    if bytes.len() > max {
        return Err(DecodeError::TooLarge {
            size: bytes.len(),
            max,
        });
    }
    let mut deserializer = rmp_serde::Deserializer::new(std::io::Cursor::new(bytes));
    deserializer.set_max_depth(MAX_DEPTH);
    let message =
        T::deserialize(&mut deserializer).map_err(|e| DecodeError::Malformed(e.to_string()))?;
    let read = usize::try_from(deserializer.position()).unwrap_or(usize::MAX);
    if read < bytes.len() {
        return Err(DecodeError::TrailingBytes(bytes.len() - read));
    }
    Ok(message)
}
