//! The MessagePack codec: one message is one MessagePack map with named fields.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::ClientMessage;
use crate::error::DecodeError;
use crate::event::Event;
use crate::limits::{MAX_CLIENT_MESSAGE_BYTES, MAX_SERVER_MESSAGE_BYTES};
use crate::server::ServerMessage;

/// Deepest nesting of MessagePack containers a message may have. The deepest real message (a
/// snapshot) nests four levels; anything far deeper is refused before it can exhaust the stack.
const MAX_DEPTH: usize = 16;

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
pub fn decode_client(bytes: &[u8]) -> Result<ClientMessage, DecodeError> {
    decode(bytes, MAX_CLIENT_MESSAGE_BYTES)
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
/// Never panics, whatever the bytes.
pub fn peek_request(bytes: &[u8]) -> (Option<u32>, Option<&'static str>) {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Field {
        Id(u64),
        Text(String),
        Other(serde::de::IgnoredAny),
    }
    if bytes.len() > MAX_CLIENT_MESSAGE_BYTES {
        return (None, None);
    }
    let mut deserializer = rmp_serde::Deserializer::new(std::io::Cursor::new(bytes));
    deserializer.set_max_depth(MAX_DEPTH);
    let Ok(map) = <std::collections::BTreeMap<String, Field> as serde::Deserialize>::deserialize(
        &mut deserializer,
    ) else {
        return (None, None);
    };
    let id = match map.get("id") {
        Some(Field::Id(id)) => u32::try_from(*id).ok(),
        _ => None,
    };
    let request = match map.get("type") {
        Some(Field::Text(name)) => ClientMessage::NAMES
            .iter()
            .copied()
            .find(|known| known == name),
        _ => None,
    };
    (id, request)
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
