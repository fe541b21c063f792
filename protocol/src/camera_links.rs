//! Who sees whose camera (issue 32): the links rule, pure. The [`Session`](crate::session::Session)
//! owns the cameras' state (each seat's [`Choice`], the table's [`Display`]) and asks [`links`]
//! for the whole set of links after every change; nothing of it is journaled.
//!
//! - Two players A ≠ B are linked iff the game is in its opening decisions or in play, the table
//!   is not adjourned, both are connected with the camera on, [`Game::within_range`] holds, and
//!   each is still in the game ([`Game::is_alive`]) or has [`Choice::stay`].
//! - The display is linked with player P iff a display is set (its connection and its centre C),
//!   P is connected with the camera on and [`Choice::stream`], P is C or within range of C, P is
//!   still in the game or has `stay`, the game is in its opening decisions or in play, and the
//!   table is not adjourned.
//!
//! Between two players the lower player id makes the offer; between a player and the display,
//! the player does.

use std::collections::BTreeMap;

use crate::camera::{CameraPeer, Peer};
use crate::game::Game;
use crate::shell::{ConnectionId, Stage};
use crate::types::PlayerId;

/// What a player chose with `camera` (his camera is on while he has a choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The table's display may show him too.
    pub stream: bool,
    /// Once eliminated, he keeps his links while his position is in the ring.
    pub stay: bool,
}

/// The table's display: the watching connection the host pointed at one player's sphere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Display {
    /// The display page's connection.
    pub connection: ConnectionId,
    /// The player whose sphere it shows.
    pub center: PlayerId,
}

/// A connected player whose camera is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Camera {
    /// Who.
    pub player: PlayerId,
    /// His connection.
    pub connection: ConnectionId,
    /// What he chose.
    pub choice: Choice,
}

/// Every connection's links, sorted by peer (players by id, then the display); a connection
/// without links is absent.
pub type Links = BTreeMap<ConnectionId, Vec<CameraPeer>>;

/// The links `game`'s table has now, with these cameras on and this display.
pub fn links<G: Game>(game: &G, cameras: &[Camera], display: Option<Display>) -> Links {
    let mut out = Links::new();
    if cameras.is_empty() || !matches!(game.stage(), Stage::Mulligan { .. } | Stage::Playing) {
        return out;
    }
    let present = |c: &Camera| game.is_alive(c.player) || c.choice.stay;
    let name = |player: PlayerId| game.name_of(player).unwrap_or_default().to_owned();
    let mut link = |connection: ConnectionId, peer: Peer, name: String, offer: bool| {
        out.entry(connection)
            .or_default()
            .push(CameraPeer { peer, name, offer });
    };
    if !game.facts().adjourned {
        for (i, a) in cameras.iter().enumerate() {
            for b in &cameras[i + 1..] {
                if a.player != b.player
                    && present(a)
                    && present(b)
                    && game.within_range(a.player, b.player)
                {
                    let offer = a.player < b.player;
                    link(a.connection, Peer::Player(b.player), name(b.player), offer);
                    link(b.connection, Peer::Player(a.player), name(a.player), !offer);
                }
            }
        }
    }
    if let Some(display) = display.filter(|_| !game.facts().adjourned) {
        for c in cameras {
            if c.choice.stream
                && present(c)
                && (c.player == display.center || game.within_range(display.center, c.player))
            {
                link(c.connection, Peer::Display, "display".to_owned(), true);
                link(
                    display.connection,
                    Peer::Player(c.player),
                    name(c.player),
                    false,
                );
            }
        }
    }
    for peers in out.values_mut() {
        peers.sort_by_key(|p| p.peer);
    }
    out
}
