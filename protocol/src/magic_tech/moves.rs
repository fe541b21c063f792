//! The moves a player may make now, for a random player (the property tests) or a bot: every
//! one is accepted by [`MagicTech::handle`](crate::game::Game::handle). Declarations are made
//! up from the card's number, so a game is reproducible from its choices alone.

use super::MagicTech;
use crate::command::Command;
use crate::game::Game;
use crate::magic_tech_types::{
    Area, Block, CardFace, CardType, Colour, Keywords, MagicTechCommand as C, ManaCost, MtPhase,
    Target,
};
use crate::shell::Stage;
use crate::types::PlayerId;

/// A basic land of the colour the card number picks.
pub fn basic_land(card: u16) -> CardFace {
    let colour = Colour::ALL[usize::from(card) % Colour::ALL.len()];
    let name = match colour {
        Colour::White => "Plains",
        Colour::Blue => "Island",
        Colour::Black => "Swamp",
        Colour::Red => "Mountain",
        Colour::Green => "Forest",
    };
    CardFace {
        name: name.to_owned(),
        card_type: CardType::Land,
        cost: ManaCost::default(),
        power: 0,
        toughness: 0,
        basic: Some(colour),
        keywords: Keywords::default(),
    }
}

/// A creature whose generic cost is `counters` (so it can be revealed with them), with power,
/// toughness and keywords made up from its number.
pub fn creature(card: u16, counters: u8) -> CardFace {
    let k = usize::from(card);
    CardFace {
        name: format!("Creature {card}"),
        card_type: CardType::Creature,
        cost: ManaCost {
            generic: counters,
            coloured: Vec::new(),
        },
        power: 1 + (counters % 4),
        toughness: 1 + (counters.wrapping_add(1) % 3),
        basic: None,
        keywords: Keywords {
            flying: k % 3 == 0,
            reach: k % 8 == 1,
            trample: k % 5 == 0,
            first_strike: k % 7 == 0,
            flanking: k % 11 == 0,
            rampage: u8::from(k % 13 == 0),
            haste: k % 4 == 0,
            regeneration: (k % 6 == 0).then(|| ManaCost {
                generic: 1,
                coloured: Vec::new(),
            }),
            ..Keywords::default()
        },
    }
}

/// A sorcery whose generic cost is `counters`.
pub fn sorcery(card: u16, counters: u8) -> CardFace {
    CardFace {
        name: format!("Sorcery {card}"),
        card_type: CardType::Sorcery,
        cost: ManaCost {
            generic: counters,
            coloured: Vec::new(),
        },
        power: 0,
        toughness: 0,
        basic: None,
        keywords: Keywords::default(),
    }
}

impl MagicTech {
    /// Moves `player` may make now (not every one: a representative set, each accepted).
    pub fn legal_moves(&self, player: PlayerId) -> Vec<Command> {
        let mut moves = Vec::new();
        match self.stage {
            Stage::Lobby if self.side(player).is_some() => {
                moves.extend(
                    [5, 12, 30, 60].map(|size| Command::MagicTech(C::DeclareDeck { size })),
                );
            }
            Stage::Mulligan { .. } if self.deciders().first() == Some(&player) => {
                moves.push(Command::Keep);
                if self.side(player).is_some_and(|s| s.hand > 0) {
                    moves.push(Command::Mulligan);
                }
            }
            Stage::Playing if self.is_alive(player) => self.playing_moves(player, &mut moves),
            _ => {}
        }
        moves
    }

    fn playing_moves(&self, player: PlayerId, moves: &mut Vec<Command>) {
        let mt = |c: C| Command::MagicTech(c);
        let Some(side) = self.side(player) else {
            return;
        };
        let Some(opponent) = self.opponent(player) else {
            return;
        };
        // Corrections: the other player answers an open proposal.
        if let Some(proposal) = &self.board.proposal
            && proposal.player != player
        {
            if self.check_correction(&proposal.correction).is_ok() {
                moves.push(mt(C::Answer { accept: true }));
            }
            moves.push(mt(C::Answer { accept: false }));
        }
        if let Some(mission) = &self.board.mission {
            if mission.player != player {
                moves.push(mt(C::Block { blocks: Vec::new() }));
                let mut all: Vec<Block> = Vec::new();
                for blocker in self.board.cards.iter().filter(|c| c.owner == player) {
                    for &attacker in &mission.attackers {
                        if self.may_block(blocker.card, attacker) {
                            let block = Block {
                                blocker: blocker.card,
                                attacker,
                            };
                            moves.push(mt(C::Block {
                                blocks: vec![block],
                            }));
                            if !all.iter().any(|b| b.blocker == blocker.card) {
                                all.push(block);
                            }
                        }
                    }
                }
                if all.len() > 1 {
                    moves.push(mt(C::Block { blocks: all }));
                }
            }
            return;
        }
        if self.board.active != Some(player) {
            return;
        }
        moves.push(mt(C::NextPhase));
        let own = || self.board.cards.iter().filter(move |c| c.owner == player);
        if self.board.proposal.is_none()
            && let Some(card) = own().next()
        {
            let correction = crate::magic_tech_types::Correction::Tapped {
                card: card.card,
                tapped: !card.tapped,
            };
            moves.push(mt(C::Propose { correction }));
            // A card effect returns it to hand.
            moves.push(mt(C::LeavePlay {
                card: card.card,
                to: crate::magic_tech_types::Zone::Hand,
            }));
        }
        // Lands make mana in any phase; other effects now and then.
        for card in own() {
            if !card.tapped
                && side.mana < crate::limits::MAX_UNSPENT_MANA
                && card
                    .face
                    .as_ref()
                    .is_some_and(|f| f.card_type == CardType::Land)
            {
                moves.push(mt(C::Tap {
                    card: card.card,
                    mana: 1,
                }));
            }
            if card.damage > 0 {
                moves.push(mt(C::Heal {
                    card: card.card,
                    amount: 1,
                }));
            }
        }
        if side.stockpile > 0 {
            moves.push(mt(C::Life { delta: -1 }));
        }
        if side.scrapheap > 0 {
            moves.push(mt(C::Life { delta: 1 }));
        }
        moves.push(mt(C::Draw { count: 1 }));
        let target = Target::Stockpile { player: opponent };
        moves.push(mt(C::Damage { target, amount: 1 }));
        // A spell's damage on one of the opponent's cards: one past its armour.
        if let Some(card) = self.board.cards.iter().find(|c| c.owner == opponent) {
            let amount = card.face.as_ref().map_or(2, CardFace::armour) + 1;
            let target = Target::Card { card: card.card };
            moves.push(mt(C::Damage { target, amount }));
        }
        match self.board.phase {
            Some(MtPhase::Upkeep) => {
                for card in own() {
                    let Some(face) = &card.face else { continue };
                    if let Some(cost) = &face.keywords.regeneration
                        && card.damage > 0
                        && side.mana >= cost.to_pay(&self.basics(player))
                    {
                        moves.push(mt(C::Regenerate { card: card.card }));
                    }
                }
            }
            Some(MtPhase::Deploy) => self.deploy_moves(player, moves),
            Some(MtPhase::Missions) => {
                let ready: Vec<u16> = own()
                    .filter(|c| {
                        !c.tapped
                            && c.area != Area::Deploy
                            && c.face
                                .as_ref()
                                .is_some_and(|f| f.card_type == CardType::Creature)
                    })
                    .map(|c| c.card)
                    .collect();
                for &attacker in &ready {
                    moves.push(mt(C::Mission {
                        attackers: vec![attacker],
                        target,
                    }));
                    for card in self.board.cards.iter().filter(|c| c.owner == opponent) {
                        if card.area != Area::Patrol || card.tapped {
                            moves.push(mt(C::Mission {
                                attackers: vec![attacker],
                                target: Target::Card { card: card.card },
                            }));
                        }
                    }
                }
                if ready.len() > 1 {
                    moves.push(mt(C::Mission {
                        attackers: ready,
                        target,
                    }));
                }
            }
            _ => {}
        }
    }

    fn deploy_moves(&self, player: PlayerId, moves: &mut Vec<Command>) {
        let mt = |c: C| Command::MagicTech(c);
        let Some(side) = self.side(player) else {
            return;
        };
        if side.hand > 0 {
            if self.board.deployed < self.deployments_allowed() {
                moves.push(mt(C::Deploy { land: None }));
            }
            if self.board.lands < crate::magic_tech_types::LANDS_PER_TURN {
                moves.push(mt(C::Deploy {
                    land: Some(basic_land(self.board.next_card)),
                }));
            }
        }
        for card in self.board.cards.iter().filter(|c| c.owner == player) {
            match &card.face {
                None => {
                    if side.mana > 0 && card.counters < u8::MAX {
                        moves.push(mt(C::Pay {
                            card: Some(card.card),
                            amount: 1,
                        }));
                    }
                    moves.push(mt(C::Reveal {
                        card: card.card,
                        face: creature(card.card, card.counters),
                    }));
                    moves.push(mt(C::Reveal {
                        card: card.card,
                        face: sorcery(card.card, card.counters),
                    }));
                }
                Some(face) if face.card_type == CardType::Creature => {
                    if card.fresh && !face.keywords.haste {
                        continue;
                    }
                    let mut areas = vec![Area::Patrol, Area::Guard { card: None }];
                    if let Some(other) = self
                        .board
                        .cards
                        .iter()
                        .find(|c| c.owner == player && c.card != card.card)
                    {
                        areas.push(Area::Guard {
                            card: Some(other.card),
                        });
                    }
                    for area in areas {
                        if area != card.area {
                            moves.push(mt(C::Relocate {
                                card: card.card,
                                area,
                            }));
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }
}
