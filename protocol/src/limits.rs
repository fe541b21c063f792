//! Limits and defaults every client should know. The server enforces them; a client that
//! checks them first saves itself a round trip.
//!
//! Every limit a client can meet is declared once, as a constant here or next to the rules it
//! belongs to (a game's own limits in its module), and the code uses that constant. The table
//! [`crate::limits_of::LIMITS`] names each one with its value, the requests it applies to and
//! the code that answers it past its value; PROTOCOL.md's section "Limits" is rendered from it.
//! The server's own limits, the defaults of its flags, are in [`server_limits`].

/// The protocol version a client announces in `hello`.
pub const PROTOCOL_VERSION: u16 = 1;

/// Largest client message, in bytes. A larger frame is refused before it is parsed (the
/// connection is closed with [`close::MESSAGE_TOO_BIG`]).
pub const MAX_CLIENT_MESSAGE_BYTES: usize = 16 * 1024;

/// Deepest nesting of MessagePack maps and arrays in a client message, its own map counted as
/// the first level (deeper: `bad_message`). The deepest real message nests four levels.
pub const MAX_MESSAGE_DEPTH: usize = 15;

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
/// Shortest table or league password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 1;
/// Longest table or league password, in characters.
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
/// Smallest starting life a table may choose.
pub const MIN_STARTING_LIFE: i32 = 1;
/// Largest starting life a table may choose.
pub const MAX_STARTING_LIFE: i32 = 1_000;
/// Cards in a starting hand before any mulligan.
pub const DEFAULT_HAND_SIZE: u8 = 7;
/// Fewest cards in a starting hand a table's settings may hold (a journaled table's).
pub const MIN_HAND_SIZE: u8 = 1;
/// Most cards in a starting hand a table's settings may hold (a journaled table's).
pub const MAX_HAND_SIZE: u8 = 20;
/// Seats at a Magic Tech table: a duel.
pub const MAGIC_TECH_SEATS: u8 = 2;
/// Seats at a Mountain Magic table: a solitaire.
pub const MOUNTAIN_MAGIC_SEATS: u8 = 1;
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
/// The fewest bytes of items a page may hold before it ends, however small the server's
/// outgoing queues ([`server_limits::PAGE_SHARE_OF_QUEUE`]).
pub const MIN_PAGE_BYTES: usize = 1024;

/// Poison counters that eliminate a player.
pub const LETHAL_POISON: u32 = 10;
/// Largest amount of damage, poison or life change one request may carry.
pub const MAX_AMOUNT: u32 = 1_000_000;

/// The most members a league has (one more: `join_league` answers `server_busy`).
pub const MAX_LEAGUE_MEMBERS: u32 = 1_000;

/// The server's own limits a client meets: the defaults of the server's flags (an operator may
/// change them; the manual's "Server settings", `docs/src/settings.md`), and a few numbers no flag changes. The server's
/// flags take their defaults from here.
pub mod server_limits {
    /// Most simultaneous connections, WebSocket and HTTP (`--max-connections`; more: HTTP 503).
    pub const MAX_CONNECTIONS: usize = 18_000;
    /// Most simultaneous connections from one client address (`--max-connections-per-ip`).
    pub const MAX_CONNECTIONS_PER_IP: usize = 256;
    /// Most tables at once (`--max-tables`; more: `create_table` answers `server_busy`).
    pub const MAX_TABLES: usize = 2_000;
    /// Most open tables created from one client address (`--max-tables-per-ip`).
    pub const MAX_TABLES_PER_IP: usize = 20;
    /// Tables one client address may create per minute, in bursts of as many
    /// (`--table-creations-per-minute`).
    pub const TABLE_CREATIONS_PER_MINUTE: u32 = 10;
    /// Seconds a table nobody ever sat at stays open (`--unjoined-table-secs`).
    pub const UNJOINED_TABLE_SECS: u64 = 60;
    /// Most spectators from one client address across all tables (`--max-spectators-per-ip`).
    pub const MAX_SPECTATORS_PER_IP: usize = 20;
    /// Starts of watching one client address may make per minute (`--watches-per-minute`).
    pub const WATCHES_PER_MINUTE: f64 = 30.0;
    /// Starts of watching one client address may make at once.
    pub const WATCH_BURST: f64 = 10.0;
    /// Chat lines per minute one table takes from all its members together
    /// (`--table-chat-per-minute`), in bursts of
    /// [`TABLE_CHAT_BURST`](crate::session::TABLE_CHAT_BURST).
    pub const TABLE_CHAT_PER_MINUTE: f64 = 120.0;
    /// Wrong passwords one client address may try per minute at one table or league
    /// (`--wrong-passwords-per-minute`).
    pub const WRONG_PASSWORDS_PER_MINUTE: f64 = 10.0;
    /// Wrong passwords one client address may try at once at one table or league.
    pub const WRONG_PASSWORD_BURST: f64 = 5.0;
    /// Password checks, right or wrong, one client address may ask for per minute, in bursts of
    /// as many (`--password-checks-per-minute`).
    pub const PASSWORD_CHECKS_PER_MINUTE: f64 = 30.0;
    /// Password checks waiting per hashing thread before `server_busy`.
    pub const PASSWORD_CHECKS_QUEUED_PER_THREAD: usize = 16;
    /// League joins one client address may make per minute, in bursts of as many
    /// (`--league-joins-per-minute`).
    pub const LEAGUE_JOINS_PER_MINUTE: f64 = 20.0;
    /// Most members one client address may add to one league (`--max-league-members-per-ip`).
    pub const MAX_LEAGUE_MEMBERS_PER_IP: usize = 40;
    /// Most adjourned games one client address may hold as host (`--max-adjourned-per-ip`).
    pub const MAX_ADJOURNED_PER_IP: usize = 10;
    /// QR codes one client address may have drawn per minute (`--qr-codes-per-minute`).
    pub const QR_CODES_PER_MINUTE: f64 = 30.0;
    /// QR codes one client address may have drawn at once.
    pub const QR_CODE_BURST: f64 = 10.0;
    /// TURN credentials one client address may be given per minute, in bursts of as many
    /// (`--turn-credentials-per-minute`; past it, `ice_servers` carries no TURN server).
    pub const TURN_CREDENTIALS_PER_MINUTE: f64 = 20.0;
    /// QR codes the server draws per second for all clients together, in bursts of twice as
    /// many (past it `/qr.svg` answers HTTP 503; a cached code is never refused).
    pub const QR_CODES_PER_SECOND: f64 = 16.0;
    /// Longest link `/qr.svg` draws, in bytes (longer: HTTP 400).
    pub const MAX_QR_TEXT_BYTES: usize = 512;
    /// Camera signal bytes one client address may send per second
    /// (`--signal-bytes-per-second`), in bursts of [`SIGNAL_BYTES_BURST_SECS`] seconds' worth.
    pub const SIGNAL_BYTES_PER_SECOND: f64 = 32_768.0;
    /// Seconds' worth of `--signal-bytes-per-second` one client address may send at once.
    pub const SIGNAL_BYTES_BURST_SECS: f64 = 8.0;
    /// Leading bits of an IPv6 address that name one client address (`--ipv6-prefix`).
    pub const IPV6_PREFIX: u8 = 64;
    /// Leading bits of an IPv4 address that name one client address (`--ipv4-prefix`).
    pub const IPV4_PREFIX: u8 = 32;
    /// Days a finished game is kept as a replay (`--replay-retention-days`; 0: forever).
    pub const REPLAY_RETENTION_DAYS: u32 = 90;
    /// Days an adjourned game waits to be resumed (`--adjourned-expiry-days`; 0: forever).
    pub const ADJOURNED_EXPIRY_DAYS: u32 = 30;
    /// Seconds a client has to complete the HTTP/WebSocket handshake (`--handshake-timeout`).
    pub const HANDSHAKE_TIMEOUT_SECS: u64 = 10;
    /// Largest head (request line and headers) of an HTTP request or WebSocket handshake, in
    /// bytes.
    pub const MAX_HTTP_HEAD_BYTES: usize = 8 * 1024;
    /// Most headers of an HTTP request or WebSocket handshake.
    pub const MAX_HTTP_HEADERS: usize = 32;
    /// Seconds one connection may stay in plain HTTP (page loads, kept alive between requests)
    /// before it is closed, unless it upgrades to a WebSocket.
    pub const HTTP_CONNECTION_SECS: u64 = 120;
    /// Seconds between the server's WebSocket pings (`--ping-interval`).
    pub const PING_INTERVAL_SECS: u64 = 15;
    /// Seconds without any frame from a client before it is closed (`--idle-timeout`).
    pub const IDLE_TIMEOUT_SECS: u64 = 45;
    /// Seconds a disconnected player's lobby seat, running turn or mulligan decision waits
    /// (`--grace-period`).
    pub const GRACE_PERIOD_SECS: u64 = 120;
    /// Frames queued for one client before it counts as a slow reader (`--outgoing-queue`).
    pub const OUTGOING_QUEUE: usize = 256;
    /// Bytes queued for one client before it counts as a slow reader
    /// (`--outgoing-queue-bytes`).
    pub const OUTGOING_QUEUE_BYTES: usize = 1 << 20;
    /// A page holds at most this fraction (1/N) of the outgoing queue's bytes, when that is
    /// less than [`MAX_PAGE_BYTES`](super::MAX_PAGE_BYTES).
    pub const PAGE_SHARE_OF_QUEUE: usize = 4;
    /// Requests per second one connection may send on average (`--rate-limit`).
    pub const RATE_LIMIT: f64 = 20.0;
    /// Requests one connection may send in a burst (`--rate-burst`).
    pub const RATE_BURST: f64 = 40.0;
    /// Chat lines per minute one connection may send on average (`--chat-per-minute`).
    pub const CHAT_PER_MINUTE: f64 = 30.0;
    /// Chat lines one connection may send at once.
    pub const CHAT_BURST: f64 = 5.0;
    /// Rate-limited frames after which a connection is closed for flooding
    /// (`--flood-strikes`).
    pub const FLOOD_STRIKES: f64 = 50.0;
    /// Flood strikes forgiven per second.
    pub const FLOOD_STRIKES_FORGIVEN_PER_SECOND: f64 = 5.0;
    /// Password-protected replays one connection remembers having opened: it pages through
    /// them without giving the password again. Opening one more forgets the oldest (its next
    /// page needs the password again).
    pub const OPENED_REPLAYS: usize = 16;
}

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
/// Magic Tech: the most mana one card makes when tapped (a basic land makes at most
/// [`MAX_BASIC_LAND_MANA`]).
pub const MAX_TAP_MANA: u8 = 20;
/// Magic Tech: the most mana a basic land makes when tapped.
pub const MAX_BASIC_LAND_MANA: u8 = 1;
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
