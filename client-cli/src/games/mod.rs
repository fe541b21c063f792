//! What a game gives the terminal client, and the one place the client picks it: the frame
//! (connecting, seats, reconnecting, the log, chat, the shell's commands, replays' stepping)
//! is the same for every game and reaches a game only through this module.
//!
//! A game gives: its mirror (a variant of [`GameMirror`], chosen by the snapshot's game), and
//! its words, commands and panel. `ARCHITECTURE.md` ("How to add a
//! game") lists the rest of what a new game touches.

use grand_melee_protocol::{ApplyError, Event, GameKind, Mirror, TableView};

/// The game a snapshot's table plays. Settings carry no `game` yet: every table is Grand
/// Melee's (`game` absent means `grand_melee` on the wire).
pub fn kind(view: &TableView) -> GameKind {
    let _ = view;
    GameKind::default()
}

/// A client's copy of a table of any game: the protocol's [`Mirror`] of the snapshot's game,
/// folded forward with the server's own fold.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GameMirror {
    /// A Grand Melee table.
    GrandMelee(Mirror),
}

impl GameMirror {
    /// A mirror of the table a `snapshot` shows, of the game it plays; a game this client does
    /// not know is [`ApplyError::Invalid`].
    pub fn of(snapshot: &TableView) -> Result<Self, ApplyError> {
        match kind(snapshot) {
            GameKind::GrandMelee => Ok(Self::GrandMelee(Mirror::of(snapshot)?)),
            _ => Err(ApplyError::Invalid("a game this client does not know")),
        }
    }

    /// Number of the last event included (0: none yet).
    pub fn seq(&self) -> u64 {
        match self {
            Self::GrandMelee(mirror) => mirror.seq(),
        }
    }

    /// The current snapshot, exactly as the server would send it now.
    pub fn view(&self) -> TableView {
        match self {
            Self::GrandMelee(mirror) => mirror.view(),
        }
    }

    /// Applies event number `seq` (see [`Mirror::apply`]: a gap or an event that does not fit
    /// is an error, and the mirror is to be rebuilt from a fresh snapshot).
    pub fn apply(&mut self, seq: u64, event: &Event) -> Result<(), ApplyError> {
        match self {
            Self::GrandMelee(mirror) => mirror.apply(seq, event),
        }
    }
}

impl From<Mirror> for GameMirror {
    fn from(mirror: Mirror) -> Self {
        Self::GrandMelee(mirror)
    }
}
