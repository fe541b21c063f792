//! Limits and defaults every client should know. The server enforces them; a client that
//! checks them first saves itself a round trip.

/// The protocol version a client announces in `hello`.
pub const PROTOCOL_VERSION: u16 = 1;

/// Largest client message, in bytes. A larger frame is refused before it is parsed (the
/// connection is closed with [`close::MESSAGE_TOO_BIG`]).
pub const MAX_CLIENT_MESSAGE_BYTES: usize = 16 * 1024;

/// Largest server message [`decode_server`](crate::decode_server) accepts, in bytes. Snapshots of
/// a full table are far smaller.
pub const MAX_SERVER_MESSAGE_BYTES: usize = 1024 * 1024;

/// Shortest display name (player or table), in characters after trimming.
pub const MIN_NAME_CHARS: usize = 1;
/// Longest display name (player or table), in characters after trimming.
pub const MAX_NAME_CHARS: usize = 32;
/// Most characters a client may contribute to a table's dice at join (`entropy`).
pub const MAX_ENTROPY_CHARS: usize = 64;
/// Most characters in a Magic Tech card's declared name.
pub const MAX_CARD_NAME_CHARS: usize = 64;
/// Most blocking creatures an attack roll may name.
pub const MAX_BLOCKERS: usize = 16;
/// Longest chat line, in characters.
pub const MAX_CHAT_CHARS: usize = 500;
/// Longest reason of a call for the host (`call_host`), in characters: one short line.
pub const MAX_CALL_REASON_CHARS: usize = 120;
/// Seconds a player waits between two calls for the host (`call_host`; sooner is refused with
/// `rate_limited`).
pub const CALL_HOST_INTERVAL_SECS: u64 = 30;
/// Seconds the host waits between two adjournments of a game (`adjourn`; sooner is refused with
/// `rate_limited`): each adjournment and each resumption is an event every member receives and
/// the journal keeps, so toggling them is paced like a call for the host.
pub const ADJOURN_INTERVAL_SECS: u64 = 60;
/// Longest table password, in characters.
pub const MAX_PASSWORD_CHARS: usize = 64;
/// Longest client name announced in `hello`, in characters.
pub const MAX_CLIENT_NAME_CHARS: usize = 64;

/// Largest `payload` of a `signal` (a session description or an ICE candidate), in bytes; a
/// larger one is refused with `signal_too_large`.
pub const MAX_SIGNAL_BYTES: usize = 12_000;
/// Signals a connection may send at once before [`SIGNALS_PER_SECOND`] paces it: signals take
/// from their own bucket, not from the general request bucket.
pub const SIGNAL_BURST: u32 = 120;
/// Signals per second a connection may send over time (more: `rate_limited`).
pub const SIGNALS_PER_SECOND: f64 = 20.0;
/// Signal bytes one connection may receive at once, from all its links together, before
/// [`SIGNAL_BYTES_RECEIVED_PER_SECOND`] paces them: a display's offers from a whole sphere fit.
/// Past it the sender's `signal` answers `rate_limited` and nothing is relayed, so no peer can
/// fill another's queue with signals.
pub const SIGNAL_BYTES_RECEIVED_BURST: f64 = 256.0 * 1024.0;
/// Signal bytes per second one connection may receive over time.
pub const SIGNAL_BYTES_RECEIVED_PER_SECOND: f64 = 32.0 * 1024.0;

/// Fewest seats a table may have.
pub const MIN_SEATS: u8 = 2;
/// Most seats a table may have.
pub const MAX_SEATS: u8 = 40;
/// Smallest spell range.
pub const MIN_SPELL_RANGE: u8 = 1;
/// Largest spell range.
pub const MAX_SPELL_RANGE: u8 = 4;
/// Spell range when `create_table` does not give one.
pub const DEFAULT_SPELL_RANGE: u8 = 2;
/// Starting life when `create_table` does not give one.
pub const DEFAULT_STARTING_LIFE: i32 = 20;
/// Largest starting life a table may choose (the smallest is 1).
pub const MAX_STARTING_LIFE: i32 = 1_000;
/// Cards in a starting hand before any mulligan.
pub const DEFAULT_HAND_SIZE: u8 = 7;
/// Seconds of disconnection after which a player is announced absent, unless the table says
/// otherwise.
pub const DEFAULT_ABSENCE_LIMIT_SECS: u32 = 600;
/// Seconds a player has for each mulligan decision before it is taken as `keep`, unless the
/// table says otherwise (0: no clock).
pub const DEFAULT_MULLIGAN_CLOCK_SECS: u32 = 60;
/// The longest a table's `turn_clock_secs`, `absence_limit_secs` and `mulligan_clock_secs` may
/// be (24 hours): no wait a table sets may be effectively endless. `create_table` refuses
/// more; a table journaled before the cap existed counts with the cap.
pub const MAX_CLOCK_SECS: u32 = 24 * 60 * 60;
/// Spectators a table admits, unless it says otherwise.
pub const DEFAULT_MAX_SPECTATORS: u32 = 100;
/// The most spectators a table may admit.
pub const MAX_SPECTATORS: u32 = 1_000;
/// Items in a page of `list_tables` or `list_replays` when the request gives no `limit`.
pub const DEFAULT_PAGE_ITEMS: u32 = 100;
/// The most items in one page of `list_tables` or `list_replays` (a larger `limit` is lowered
/// to this).
pub const MAX_PAGE_ITEMS: u32 = 500;
/// The most bytes of items (tables, replays, events) the server puts in one answer: a page ends
/// early rather than grow past this, so every answer fits a client's outgoing queue.
pub const MAX_PAGE_BYTES: usize = 128 * 1024;

/// Poison counters that eliminate a player.
pub const LETHAL_POISON: u32 = 10;
/// Largest amount of damage, poison or life change one request may carry.
pub const MAX_AMOUNT: u32 = 1_000_000;

/// WebSocket close codes the server uses.
pub mod close {
    /// Normal closure: the client or the server ended the session.
    pub const NORMAL: u16 = 1000;
    /// The reason of the [`NORMAL`] close that tells a client another connection resumed its
    /// seat (it should not take the seat back by itself).
    pub const TAKEN_OVER: &str = "your seat was taken over by a newer connection";
    /// The server is going away (shutting down or restarting).
    pub const GOING_AWAY: u16 = 1001;
    /// Protocol error: the first message was not a valid `hello`, or its version is not
    /// supported.
    pub const PROTOCOL_ERROR: u16 = 1002;
    /// A text frame that is not valid UTF-8 (the protocol itself only uses binary frames).
    pub const INVALID_PAYLOAD: u16 = 1007;
    /// Policy violation: the client read too slowly (its queue overflowed), flooded the server
    /// with requests, stayed silent past the idle timeout, or was removed by the host. The close
    /// frame's reason says which.
    pub const POLICY_VIOLATION: u16 = 1008;
    /// A client frame was larger than [`MAX_CLIENT_MESSAGE_BYTES`](super::MAX_CLIENT_MESSAGE_BYTES).
    pub const MESSAGE_TOO_BIG: u16 = 1009;
    /// The server hit an internal failure (its journal refused a write); reconnect later.
    pub const INTERNAL_ERROR: u16 = 1011;
    /// Cluster mode: the table moved to another server node (this one lost it). The seat is
    /// kept: resume with the seat token, on any node.
    pub const TABLE_MOVED: u16 = 1012;
    /// The reason sent with [`TABLE_MOVED`].
    pub const TABLE_MOVED_REASON: &str = "the table moved to another server node: resume your seat";
}

/// Starting life when a request leaves it out.
pub(crate) fn default_starting_life() -> i32 {
    DEFAULT_STARTING_LIFE
}

/// Seconds of disconnection before a player is absent, when a request leaves it out.
pub(crate) fn default_absence_limit() -> u32 {
    DEFAULT_ABSENCE_LIMIT_SECS
}

/// The mulligan clock when a request (or a snapshot from before it existed) leaves it out.
pub(crate) fn default_mulligan_clock() -> u32 {
    DEFAULT_MULLIGAN_CLOCK_SECS
}

/// Most spectators when a request (or a snapshot from before the limit existed) leaves it out.
pub(crate) fn default_max_spectators() -> u32 {
    DEFAULT_MAX_SPECTATORS
}

// Magic Tech limits (issue 46)

/// Magic Tech: the most damage one `magic_tech.damage` deals, the most mana one
/// `magic_tech.pay` spends, and the most damage counters a correction sets (more: `bad_amount`).
/// Far above any card's numbers: a deck of 60 paper cards never comes near it.
pub const MAX_MAGIC_TECH_AMOUNT: u16 = 1_000;
/// Magic Tech: the most unspent mana a player holds. A `magic_tech.tap` that would take him
/// past it, and a correction of his mana to more, are refused (`bad_amount`): the one bound
/// every way of changing unspent mana keeps.
pub const MAX_UNSPENT_MANA: u16 = 1_000;
/// Magic Tech: the most mana one card makes when tapped (a basic land makes at most 1).
pub const MAX_TAP_MANA: u8 = 20;
/// Magic Tech: the most mana counters a face-down card holds (a `magic_tech.pay` past it is
/// `bad_amount`; the count is a byte).
pub const MAX_COUNTERS: u8 = u8::MAX;
/// Magic Tech: the largest life change of one `magic_tech.life`, lost or gained (more:
/// `bad_amount`): each point is a card, and a side's zones are counted in bytes.
pub const MAX_LIFE_CHANGE: u32 = 255;
/// Magic Tech: the last number a card put into play gets (cards are numbered from 0 in
/// deployment order, a card returned to hand and deployed again gets a new one). Once every
/// number is given out, `magic_tech.deploy` is refused with `card_numbers_used_up`.
pub const MAX_CARD_NUMBER: u16 = u16::MAX - 1;
