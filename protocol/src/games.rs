//! The registry: which state type plays each [`GameKind`]. This is the one place a game is
//! registered in the protocol crate; the shell reaches a table's game through
//! [`GameKind::visit`], generically, so a new game needs no change in the server.

use crate::game::{Game, GameKind};
use crate::magic_tech::MagicTech;
use crate::mountain_magic::MountainMagic;
use crate::rules::Table;

/// Something done with the game a table plays, generic over it: [`GameKind::visit`] calls
/// `visit` with the registered state type (the server opens and recovers tables this way).
pub trait GameVisitor {
    /// What it gives back.
    type Output;

    /// Does it with `G`, the game's state type.
    fn visit<G: Game>(self) -> Self::Output;
}

impl GameKind {
    /// Calls `visitor` with the state type registered for this game.
    pub fn visit<V: GameVisitor>(self, visitor: V) -> V::Output {
        match self {
            GameKind::GrandMelee => visitor.visit::<Table>(),
            GameKind::MagicTech => visitor.visit::<MagicTech>(),
            GameKind::MountainMagic => visitor.visit::<MountainMagic>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    struct Kind;

    impl GameVisitor for Kind {
        type Output = GameKind;

        fn visit<G: Game>(self) -> GameKind {
            G::KIND
        }
    }

    #[test]
    fn every_game_is_registered_with_its_own_state_type() {
        for &kind in GameKind::VARIANTS {
            assert_eq!(
                kind.visit(Kind),
                kind,
                "{} visits another game",
                kind.name()
            );
        }
    }
}
