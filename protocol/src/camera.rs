//! The cameras' wire vocabulary: who a camera link is with ([`Peer`]), one link as a connection
//! sees it ([`CameraPeer`]) and the STUN/TURN servers a page may use ([`IceServer`]). The media
//! go between the browsers; the server only relays the signals between linked peers.

use serde::{Deserialize, Serialize};

use crate::types::PlayerId;

/// One end of a camera link: a seated player, or the table's display (the host's `?display`
/// page). On the wire `{"player": 3}` or the string `"display"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Peer {
    /// A seated player.
    Player(PlayerId),
    /// The table's display.
    Display,
}

/// One link a connection should have now, in `camera_peers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CameraPeer {
    /// Who is at the other end.
    pub peer: Peer,
    /// The player's name, or `"display"`.
    pub name: String,
    /// Whether this connection makes the offer (true on exactly one side of each link: the
    /// lower player id between two players, the player between a player and the display).
    pub offer: bool,
}

/// A STUN or TURN server for the page's `RTCPeerConnection` (the shape of the browser's
/// `RTCIceServer`; absent fields are left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IceServer {
    /// Its URLs (`stun:`, `stuns:`, `turn:`, `turns:`).
    pub urls: Vec<String>,
    /// The TURN user name, if it needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The TURN password, if it needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
}
