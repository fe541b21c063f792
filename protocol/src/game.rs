//! What a game is, to the shell that hosts it.
//!
//! The shell — seats and tokens, the host, absence, clocks, pause, kick, mute, spectators,
//! chat ([`crate::session`]), the server's table actor, the journal and the cluster, replays,
//! leagues' crediting, the page's frame and the terminal client's frame — is the same for every
//! game. A game is a pure state machine behind the [`Game`] trait, registered by a
//! [`GameKind`], which a table's settings name. `ARCHITECTURE.md` ("How to add a game") lists
//! the places a new game touches.

use serde::{Deserialize, Serialize};

/// Which game a table plays: every game the server knows, by its wire name (`game` in
/// `create_table`, a table's settings and the lobby's summaries; absent means `grand_melee`,
/// so tables and journals from before the seam read as they were).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum GameKind {
    /// Grand Melee (`docs/RULES.md`): 2–40 players in a ring, simultaneous turns by spheres of
    /// influence.
    #[default]
    GrandMelee,
}

impl GameKind {
    /// The wire name: serde's.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Whether this is the default game (`grand_melee`), which the wire leaves out.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}
