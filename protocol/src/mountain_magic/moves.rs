//! The legal moves: every request the rules accept now (a bot or a random player picks from
//! them; the page shows them).

use super::Climb;
use super::climb;
use crate::mountain_magic_types::{ForceRef, MmPhase, MountainCommand, Side};

/// Attack subsets are listed in full up to this many ready creatures; beyond, each creature
/// alone and all of them together.
const FULL_SUBSETS: usize = 8;

impl Climb {
    /// Every request accepted now. Complete for the climb, the path, the mana and single or
    /// gang attacks (up to eight ready creatures), casts and activations with every target.
    pub fn legal_moves(&self) -> Vec<MountainCommand> {
        let mut moves = Vec::new();
        if self.deal.is_none() {
            return moves;
        }
        match self.view.phase {
            MmPhase::Climbing => {
                for (row, pos) in self.placements() {
                    moves.push(MountainCommand::Place { row, pos });
                }
                if self.view.flipped.is_some() {
                    moves.push(MountainCommand::Discard);
                } else if self.view.spells_left > 0 {
                    moves.push(MountainCommand::Flip);
                }
            }
            MmPhase::Path => {
                moves.extend(
                    climb::all_paths()
                        .into_iter()
                        .map(|path| MountainCommand::Path { path }),
                );
            }
            MmPhase::Battle => self.battle_moves(&mut moves),
            MmPhase::Undealt | MmPhase::Over => {}
        }
        moves
    }

    fn battle_moves(&self, moves: &mut Vec<MountainCommand>) {
        let Some(battle) = self.view.battle.as_ref() else {
            return;
        };
        if battle.turn != Some(Side::Player) {
            return;
        }
        if battle.pending_land.is_some() {
            // A land one of one's cards can use must go on one of them; only a land none can
            // use is let go.
            let places = self.mana_places(Side::Player);
            if places.is_empty() {
                moves.push(MountainCommand::Mana { place: None });
            }
            moves.extend(
                places
                    .into_iter()
                    .map(|p| MountainCommand::Mana { place: Some(p) }),
            );
            return;
        }
        let mine = |k: usize| ForceRef {
            side: Side::Player,
            force: u8::try_from(k).unwrap_or(u8::MAX),
        };
        let theirs = |k: usize| ForceRef {
            side: Side::Opponent,
            force: u8::try_from(k).unwrap_or(u8::MAX),
        };
        let every_target: Vec<ForceRef> = (0..battle.player.len())
            .map(mine)
            .chain((0..battle.opponent.len()).map(theirs))
            .collect();
        let ready: Vec<u8> = (0..battle.player.len())
            .map(mine)
            .filter(|&a| {
                self.force(a).is_some_and(|f| f.powered && !f.used)
                    && self.card_of(a).is_some_and(|c| c.is_creature())
            })
            .map(|a| a.force)
            .collect();
        let groups: Vec<Vec<u8>> = if ready.len() <= FULL_SUBSETS {
            (1u32..1 << ready.len())
                .map(|bits| {
                    ready
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| bits & (1 << k) != 0)
                        .map(|(_, &a)| a)
                        .collect()
                })
                .collect()
        } else {
            let mut groups: Vec<Vec<u8>> = ready.iter().map(|&a| vec![a]).collect();
            groups.push(ready.clone());
            groups
        };
        for attackers in groups {
            let refs: Vec<ForceRef> = attackers.iter().map(|&a| mine(usize::from(a))).collect();
            for t in 0..battle.opponent.len() {
                if self.may_attack(&refs, theirs(t)) {
                    moves.push(MountainCommand::Attack {
                        attackers: attackers.clone(),
                        target: theirs(t).force,
                    });
                }
            }
        }
        for k in 0..battle.player.len() {
            let card = mine(k);
            for (effect, activate) in [(self.castable(card), false), (self.activatable(card), true)]
            {
                let Some(effect) = effect else { continue };
                let targets = std::iter::once(None).chain(every_target.iter().map(|&t| Some(t)));
                for target in targets {
                    if self.may_target(card, effect, target) {
                        moves.push(if activate {
                            MountainCommand::Activate {
                                force: card.force,
                                target,
                            }
                        } else {
                            MountainCommand::Cast {
                                force: card.force,
                                target,
                            }
                        });
                    }
                }
            }
        }
        moves.push(MountainCommand::EndTurn);
    }
}
