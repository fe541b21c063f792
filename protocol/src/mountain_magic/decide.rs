//! The decisions: every check first, then the events one at a time, each applied as it is
//! emitted; and the automatic opponent, whose every choice the text's order fixes
//! (`docs/RULES.md`, "Mountain Magic", "The opponent").

use super::Climb;
use super::pool::Pool;
use crate::event::Event;
use crate::mountain_magic_types::{
    Card, CardNo, Effect, Ending, ForceRef, Kind, ManaPlace, MmPhase, MountainCommand,
    MountainError, OTHER_X, Removal, Side, Spot,
};

type Decision = Result<(), MountainError>;

/// Refusals are decided before any event; a fold that refuses an emitted event is a bug in the
/// decisions, reported as the request's refusal (the copy is dropped: nothing changed).
fn folded(result: Result<(), &'static str>) -> Decision {
    result.map_err(|_| MountainError::NotNow)
}

/// The order of the opponent's choices: counterspells, damage-dealing spells, creatures,
/// anything else.
pub(super) fn rank(card: &Card) -> u8 {
    match (card.kind, card.effect) {
        (_, Some(Effect::Counter)) => 0,
        (_, Some(Effect::Damage { .. })) => 1,
        (Kind::Creature, _) => 2,
        _ => 3,
    }
}

impl Climb {
    /// Deals the climb: the bottom row face up (the [`Event::MountainMagicDealt`] event).
    pub fn begin(&mut self) -> Result<Vec<Event>, MountainError> {
        let deal = self.deal.as_ref().ok_or(MountainError::NotNow)?;
        if self.view.phase != MmPhase::Undealt || deal.spells.len() < 7 {
            return Err(MountainError::NotNow);
        }
        let event = Event::MountainMagicDealt {
            bottom: deal.spells[..7].to_vec(),
            spells: u16::try_from(deal.spells.len() - 7).unwrap_or(u16::MAX),
            lands: u16::try_from(deal.lands.len()).unwrap_or(u16::MAX),
        };
        let mut out = Vec::new();
        self.emit(&mut out, event)?;
        Ok(out)
    }

    /// Decides a request: the events it caused, already applied, or the refusal (which
    /// changed nothing).
    pub fn handle(&mut self, command: MountainCommand) -> Result<Vec<Event>, MountainError> {
        let mut next = self.clone();
        let mut out = Vec::new();
        next.decide(command, &mut out)?;
        *self = next;
        Ok(out)
    }

    fn emit(&mut self, out: &mut Vec<Event>, event: Event) -> Decision {
        folded(self.apply(&event))?;
        out.push(event);
        Ok(())
    }

    fn decide(&mut self, command: MountainCommand, out: &mut Vec<Event>) -> Decision {
        use MountainCommand as C;
        let deal = self.deal.clone().ok_or(MountainError::NotNow)?;
        match (self.view.phase, command) {
            (MmPhase::Climbing, C::Flip) => {
                if self.view.flipped.is_some() || self.view.spells_left == 0 {
                    return Err(MountainError::NotNow);
                }
                let next = deal
                    .spells
                    .len()
                    .checked_sub(usize::from(self.view.spells_left))
                    .ok_or(MountainError::NotNow)?;
                let card = *deal.spells.get(next).ok_or(MountainError::NotNow)?;
                self.emit(out, Event::MountainMagicFlipped { card })
            }
            (MmPhase::Climbing, C::Place { row, pos }) => {
                let card = self.card_to_place().ok_or(MountainError::NotNow)?;
                if !self.may_place_at(card, row, pos) {
                    return Err(MountainError::IllegalPlacement);
                }
                let from_discard = self.view.flipped.is_none();
                self.emit(
                    out,
                    Event::MountainMagicPlaced {
                        card,
                        row,
                        pos,
                        from_discard,
                    },
                )?;
                self.fail_if_stuck(out)
            }
            (MmPhase::Climbing, C::Discard) => {
                let card = self.view.flipped.ok_or(MountainError::NotNow)?;
                self.emit(out, Event::MountainMagicDiscarded { card })?;
                self.fail_if_stuck(out)
            }
            (MmPhase::Path, C::Path { path }) => {
                if !super::climb::is_path(&path) {
                    return Err(MountainError::BadPath);
                }
                self.emit(out, Event::MountainMagicPathChosen { path })?;
                self.emit(
                    out,
                    Event::MountainMagicOccupiersRevealed {
                        cards: deal.occupiers.clone(),
                    },
                )?;
                self.begin_turn(Side::Player, out)
            }
            (MmPhase::Battle, command) => self.decide_battle(command, out),
            _ => Err(MountainError::NotNow),
        }
    }

    /// The climb is lost when the spell deck is empty, no card is turned over, the mountain
    /// is not complete and the discard pile's top card cannot be placed now.
    fn fail_if_stuck(&mut self, out: &mut Vec<Event>) -> Decision {
        if self.view.phase != MmPhase::Climbing
            || self.view.spells_left > 0
            || self.view.flipped.is_some()
        {
            return Ok(());
        }
        if self.placements().is_empty() {
            self.emit(out, Event::MountainMagicClimbFailed)?;
        }
        Ok(())
    }

    /// Every place the card to place may go now.
    pub fn placements(&self) -> Vec<(u8, u8)> {
        let Some(card) = self.card_to_place() else {
            return Vec::new();
        };
        let mut places = Vec::new();
        for row in 1..crate::mountain_magic_types::ROWS {
            for pos in 0..super::climb::row_len(row) {
                if self.may_place_at(card, row, pos) {
                    places.push((row, pos));
                }
            }
        }
        places
    }

    fn next_land(&self) -> Option<CardNo> {
        let deal = self.deal.as_ref()?;
        let next = deal
            .lands
            .len()
            .checked_sub(usize::from(self.view.lands_left))?;
        deal.lands.get(next).copied()
    }

    fn next_lands(&self, count: usize) -> Vec<CardNo> {
        let Some(deal) = self.deal.as_ref() else {
            return Vec::new();
        };
        let next = deal
            .lands
            .len()
            .saturating_sub(usize::from(self.view.lands_left));
        deal.lands
            .get(next..)
            .unwrap_or_default()
            .iter()
            .take(count)
            .copied()
            .collect()
    }

    fn over(&self) -> bool {
        self.view.phase != MmPhase::Battle
    }

    /// A wizard's turn begins: he draws the land deck's top card (none left: the battle
    /// ends), which a land destruction may destroy.
    fn begin_turn(&mut self, side: Side, out: &mut Vec<Event>) -> Decision {
        let Some(land) = self.next_land() else {
            return self.end_by_mana(out);
        };
        self.emit(out, Event::MountainMagicManaDrawn { side, land })?;
        let doomed = self.battle().map(|b| b.doomed[side.index()]).unwrap_or(0);
        if doomed > 0 {
            self.emit(out, Event::MountainMagicLandDestroyed { side })?;
        }
        Ok(())
    }

    /// The last mana card is drawn: the ending by who has creatures.
    fn end_by_mana(&mut self, out: &mut Vec<Event>) -> Decision {
        let ending = match (
            self.has_creatures(Side::Player),
            self.has_creatures(Side::Opponent),
        ) {
            (true, false) => Ending::Victory,
            (false, false) => Ending::DrawNoCreatures,
            (true, true) => Ending::DrawBothCreatures,
            (false, true) => Ending::Defeat,
        };
        self.emit(out, Event::MountainMagicEnded { ending })
    }

    /// After a wizard's action: all of one side's cards gone ends the battle (both at once:
    /// the acting wizard's side wins).
    fn check_end(&mut self, actor: Side, out: &mut Vec<Event>) -> Decision {
        if self.over() {
            return Ok(());
        }
        let ending = match (self.all_gone(Side::Opponent), self.all_gone(Side::Player)) {
            (true, true) if actor == Side::Player => Ending::TotalVictory,
            (true, true) => Ending::HumiliatingDefeat,
            (true, false) => Ending::TotalVictory,
            (false, true) => Ending::HumiliatingDefeat,
            (false, false) => return Ok(()),
        };
        self.emit(out, Event::MountainMagicEnded { ending })
    }

    /// Where the pending land's mana may go for `side`: each card (or ability) that still
    /// needs one of its colours.
    pub fn mana_places(&self, side: Side) -> Vec<ManaPlace> {
        let pool = Pool::builtin();
        let Some(land) = self.battle().ok().and_then(|b| b.pending_land) else {
            return Vec::new();
        };
        let produces = &pool.get(land).produces;
        let mut places = Vec::new();
        for (k, force) in self.forces(side).iter().enumerate() {
            let Ok(k) = u8::try_from(k) else { break };
            if force.gone.is_some() {
                continue;
            }
            let card = ForceRef { side, force: k };
            for ability in [false, true] {
                if !ability && force.powered {
                    continue;
                }
                let needs = self.needs(card, ability);
                for &colour in produces {
                    if needs.contains(&colour) {
                        places.push(ManaPlace {
                            force: k,
                            ability,
                            colour,
                        });
                    }
                }
            }
        }
        places
    }

    /// Puts mana on a card; a creature powered by it pays its upkeep at once.
    fn place_mana(&mut self, side: Side, place: ManaPlace, out: &mut Vec<Event>) -> Decision {
        self.emit(out, Event::MountainMagicManaPlaced { side, place })?;
        let card = ForceRef {
            side,
            force: place.force,
        };
        if !place.ability && self.force(card).is_some_and(|f| f.powered) {
            self.pay_upkeep(card, out)?;
        }
        Ok(())
    }

    /// A creature just powered pays its upkeep from the top of the land deck, one land per
    /// symbol, each making the symbol's colour; the first that does not (or an empty deck)
    /// makes it walk from the battlefield, that land going out of play.
    fn pay_upkeep(&mut self, card: ForceRef, out: &mut Vec<Event>) -> Decision {
        let pool = Pool::builtin();
        let Some(face) = self.card_of(card) else {
            return Ok(());
        };
        for colour in &face.upkeep {
            match self.next_land() {
                Some(land) if pool.get(land).produces.contains(colour) => {
                    self.emit(out, Event::MountainMagicUpkeepPaid { card, land })?;
                }
                Some(land) => {
                    self.emit(
                        out,
                        Event::MountainMagicLandsDiscarded {
                            side: card.side,
                            lands: vec![land],
                        },
                    )?;
                    return self.walk_off(card, out);
                }
                None => return self.walk_off(card, out),
            }
        }
        Ok(())
    }

    fn walk_off(&mut self, card: ForceRef, out: &mut Vec<Event>) -> Decision {
        self.emit(
            out,
            Event::MountainMagicRemoved {
                card,
                why: Removal::WalkedOff,
            },
        )?;
        self.check_end(card.side.other(), out)
    }

    fn decide_battle(&mut self, command: MountainCommand, out: &mut Vec<Event>) -> Decision {
        use MountainCommand as C;
        let battle = self.battle().map_err(|_| MountainError::NotNow)?;
        if battle.turn != Some(Side::Player) {
            return Err(MountainError::NotNow);
        }
        let pending = battle.pending_land.is_some();
        match command {
            C::Mana { place } => {
                if !pending {
                    return Err(MountainError::NotNow);
                }
                match place {
                    // The seed: "If any of your cards are able to use that colored mana place
                    // it on the card" — a land goes unused only when no card can use it.
                    None if !self.mana_places(Side::Player).is_empty() => {
                        Err(MountainError::BadMana)
                    }
                    None => self.emit(out, Event::MountainMagicManaUnused { side: Side::Player }),
                    Some(place) => {
                        if !self.mana_places(Side::Player).contains(&place) {
                            return Err(MountainError::BadMana);
                        }
                        self.place_mana(Side::Player, place, out)
                    }
                }
            }
            _ if pending => Err(MountainError::NotNow),
            C::Attack { attackers, target } => {
                let attackers: Vec<ForceRef> = attackers
                    .iter()
                    .map(|&force| ForceRef {
                        side: Side::Player,
                        force,
                    })
                    .collect();
                let target = ForceRef {
                    side: Side::Opponent,
                    force: target,
                };
                // The attackers are the request's cards (`bad_card`, as a cast's card is),
                // the enemy creature its target (`bad_target`).
                if !self.ready_attackers(&attackers) {
                    return Err(MountainError::BadCard);
                }
                if !self.may_attack(&attackers, target) {
                    return Err(MountainError::BadTarget);
                }
                self.attack(&attackers, target, out)?;
                self.check_end(Side::Player, out)
            }
            C::Cast { force, target } => {
                let card = ForceRef {
                    side: Side::Player,
                    force,
                };
                let effect = self.castable(card).ok_or(MountainError::BadCard)?;
                if !self.may_target(card, effect, target) {
                    return Err(MountainError::BadTarget);
                }
                self.resolve(card, false, effect, target, out)?;
                self.check_end(Side::Player, out)
            }
            C::Activate { force, target } => {
                let card = ForceRef {
                    side: Side::Player,
                    force,
                };
                let effect = self.activatable(card).ok_or(MountainError::BadCard)?;
                if !self.may_target(card, effect, target) {
                    return Err(MountainError::BadTarget);
                }
                self.resolve(card, true, effect, target, out)?;
                self.check_end(Side::Player, out)
            }
            C::EndTurn => {
                self.emit(out, Event::MountainMagicTurnEnded { side: Side::Player })?;
                self.opponent_turn(out)?;
                if !self.over() {
                    self.begin_turn(Side::Player, out)?;
                }
                Ok(())
            }
            C::Flip | C::Place { .. } | C::Discard | C::Path { .. } => Err(MountainError::NotNow),
        }
    }

    /// A powered non-creature card not used this turn: its effect.
    pub fn castable(&self, card: ForceRef) -> Option<Effect> {
        let force = self.force(card)?;
        let face = Pool::builtin().get(force.card);
        if face.is_creature() || !force.powered || force.used {
            return None;
        }
        face.effect
    }

    /// A powered creature's activated ability with a stored use: its effect.
    pub fn activatable(&self, card: ForceRef) -> Option<Effect> {
        let force = self.force(card)?;
        let face = Pool::builtin().get(force.card);
        let ability = face.ability.as_ref()?;
        (force.powered && force.uses > 0).then_some(ability.effect)
    }

    /// Whether `target` fits `effect` used by `user`: damage an enemy creature, counter an
    /// enemy sorcery, instant or interrupt, tap any enemy card, untap another of one's own
    /// unpowered cards (not an artifact); other effects take none.
    pub fn may_target(&self, user: ForceRef, effect: Effect, target: Option<ForceRef>) -> bool {
        let Some(side) = effect.target() else {
            return target.is_none();
        };
        let Some(target) = target else {
            return false;
        };
        let Some(face) = self.card_of(target) else {
            return false;
        };
        let enemy = target.side != user.side;
        match effect {
            Effect::Damage { .. } => enemy && face.is_creature(),
            Effect::Counter => enemy && face.kind.counterable(),
            Effect::Tap => enemy,
            Effect::Untap => {
                !enemy
                    && side
                    && target != user
                    && face.kind != Kind::Artifact
                    && self.force(target).is_some_and(|f| !f.powered)
            }
            _ => false,
        }
    }

    /// Whether `attackers` are at least one creature, each once, of one side, in the battle,
    /// powered and not used this turn: what may attack at all, whatever the target.
    pub fn ready_attackers(&self, attackers: &[ForceRef]) -> bool {
        !attackers.is_empty()
            && attackers.iter().enumerate().all(|(k, a)| {
                a.side == attackers[0].side
                    && !attackers[..k].contains(a)
                    && self.force(*a).is_some_and(|f| f.powered && !f.used)
                    && self.card_of(*a).is_some_and(|c| c.is_creature())
            })
    }

    /// Whether `attackers` (powered creatures of one side, not used this turn, each once) may
    /// attack `target` (an enemy creature): only flyers attack a powered flyer, only
    /// landwalkers of its land type a powered landwalker.
    pub fn may_attack(&self, attackers: &[ForceRef], target: ForceRef) -> bool {
        let Some(defender) = self.card_of(target) else {
            return false;
        };
        let powered = self.force(target).is_some_and(|f| f.powered);
        !attackers.is_empty()
            && defender.is_creature()
            && attackers.iter().enumerate().all(|(k, a)| {
                let ready = self.force(*a).is_some_and(|f| f.powered && !f.used);
                let Some(face) = self.card_of(*a) else {
                    return false;
                };
                ready
                    && a.side != target.side
                    && face.is_creature()
                    && !attackers[..k].contains(a)
                    && (!powered || !defender.flying || face.flying)
                    && (!powered
                        || defender.landwalk.is_none()
                        || face.landwalk == defender.landwalk)
            })
    }

    /// Creatures attack: the attackers are used (unpowered); their power together against the
    /// target's toughness; the target's power assigned to kill the most attackers (the lowest
    /// toughness first; among equals, the strongest, then the first).
    fn attack(
        &mut self,
        attackers: &[ForceRef],
        target: ForceRef,
        out: &mut Vec<Event>,
    ) -> Decision {
        let faces: Vec<(ForceRef, &Card)> = attackers
            .iter()
            .filter_map(|a| self.card_of(*a).map(|c| (*a, c)))
            .collect();
        let Some(defender) = self.card_of(target) else {
            return Err(MountainError::BadTarget);
        };
        self.emit(
            out,
            Event::MountainMagicAttacked {
                attackers: attackers.to_vec(),
                target,
            },
        )?;
        for &card in attackers {
            self.emit(
                out,
                Event::MountainMagicUsed {
                    card,
                    ability: false,
                    target: Some(target),
                },
            )?;
        }
        let power: u32 = faces.iter().map(|(_, c)| u32::from(c.power)).sum();
        let mut by_toughness = faces.clone();
        by_toughness.sort_by_key(|(a, c)| (c.toughness, std::cmp::Reverse(c.power), a.force));
        let mut left = u32::from(defender.power);
        let mut killed = Vec::new();
        for (a, c) in by_toughness {
            if u32::from(c.toughness) <= left {
                left -= u32::from(c.toughness);
                killed.push(a);
            }
        }
        killed.sort();
        for card in killed {
            self.emit(
                out,
                Event::MountainMagicRemoved {
                    card,
                    why: Removal::Killed,
                },
            )?;
        }
        if power >= u32::from(defender.toughness) {
            self.emit(
                out,
                Event::MountainMagicRemoved {
                    card: target,
                    why: Removal::Killed,
                },
            )?;
        }
        Ok(())
    }

    /// A card (or its ability) is used on `target`: its effect.
    fn resolve(
        &mut self,
        user: ForceRef,
        ability: bool,
        effect: Effect,
        target: Option<ForceRef>,
        out: &mut Vec<Event>,
    ) -> Decision {
        self.emit(
            out,
            Event::MountainMagicUsed {
                card: user,
                ability,
                target,
            },
        )?;
        let other = user.side.other();
        match (effect, target) {
            (Effect::Damage { amount }, Some(target)) => {
                let toughness = self.card_of(target).map_or(0, |c| c.toughness);
                // X is exactly enough to kill the creature.
                if amount.is_none_or(|n| n >= toughness) {
                    self.emit(
                        out,
                        Event::MountainMagicRemoved {
                            card: target,
                            why: Removal::Killed,
                        },
                    )?;
                }
            }
            (Effect::Counter, Some(target)) => self.emit(
                out,
                Event::MountainMagicRemoved {
                    card: target,
                    why: Removal::Countered,
                },
            )?,
            (Effect::Tap, Some(target)) => {
                if self.force(target).is_some_and(|f| f.powered) {
                    self.emit(out, Event::MountainMagicUnpowered { card: target })?;
                } else {
                    self.emit(
                        out,
                        Event::MountainMagicRemoved {
                            card: target,
                            why: Removal::TappedAway,
                        },
                    )?;
                }
            }
            (Effect::Untap, Some(target)) => {
                self.emit(out, Event::MountainMagicUntapped { card: target })?;
                if self.card_of(target).is_some_and(|c| c.is_creature()) {
                    self.pay_upkeep(target, out)?;
                }
            }
            (Effect::Draw { amount }, None) => {
                let n = usize::from(amount.unwrap_or(OTHER_X));
                if user.side == Side::Player {
                    let cards: Vec<Spot> = self.mountain_left().into_iter().take(n).collect();
                    if !cards.is_empty() {
                        self.emit(out, Event::MountainMagicDrewFromMountain { cards })?;
                    }
                } else {
                    // The opponent picks up from the land deck: extras, discarded at once.
                    let lands = self.next_lands(n);
                    if !lands.is_empty() {
                        self.emit(
                            out,
                            Event::MountainMagicLandsDiscarded {
                                side: user.side,
                                lands,
                            },
                        )?;
                    }
                }
            }
            (Effect::Discard { amount }, None) => {
                let lands = self.next_lands(usize::from(amount.unwrap_or(OTHER_X)));
                if !lands.is_empty() {
                    self.emit(
                        out,
                        Event::MountainMagicLandsDiscarded { side: other, lands },
                    )?;
                }
            }
            (Effect::DestroyLand, None) => {
                self.emit(out, Event::MountainMagicLandDoomed { side: other })?
            }
            (Effect::EmptyPool, None) => {
                self.emit(out, Event::MountainMagicPoolEmptied { side: other })?
            }
            _ => return Err(MountainError::BadTarget),
        }
        Ok(())
    }
}

/// The automatic opponent.
impl Climb {
    /// The opponent's turn: he draws, puts the mana where the text's order says, and uses
    /// every powered card that has a target, in that order.
    fn opponent_turn(&mut self, out: &mut Vec<Event>) -> Decision {
        self.begin_turn(Side::Opponent, out)?;
        if self.over() {
            return Ok(());
        }
        if self.battle().is_ok_and(|b| b.pending_land.is_some()) {
            match self.opponent_mana() {
                Some(place) => self.place_mana(Side::Opponent, place, out)?,
                None => self.emit(
                    out,
                    Event::MountainMagicManaUnused {
                        side: Side::Opponent,
                    },
                )?,
            }
        }
        if self.over() {
            return Ok(());
        }
        for force in self.opponent_order() {
            if self.over() {
                return Ok(());
            }
            self.opponent_use(force, out)?;
        }
        if self.over() {
            return Ok(());
        }
        self.emit(
            out,
            Event::MountainMagicTurnEnded {
                side: Side::Opponent,
            },
        )
    }

    /// The opponent's cards in the order of his choices: by [`rank`], then by place.
    pub(super) fn opponent_order(&self) -> Vec<u8> {
        let pool = Pool::builtin();
        let mut order: Vec<(u8, u8)> = self
            .forces(Side::Opponent)
            .iter()
            .enumerate()
            .filter_map(|(k, f)| u8::try_from(k).ok().map(|k| (rank(pool.get(f.card)), k)))
            .collect();
        order.sort();
        order.into_iter().map(|(_, k)| k).collect()
    }

    /// Where the opponent's mana goes: the card first in his order of choices that can use
    /// it (among equals, the one needing the fewest more), then creatures' abilities; the
    /// land's first colour that card needs.
    pub fn opponent_mana(&self) -> Option<ManaPlace> {
        let places = self.mana_places(Side::Opponent);
        places.into_iter().min_by_key(|p| {
            let card = ForceRef {
                side: Side::Opponent,
                force: p.force,
            };
            let rank = if p.ability {
                4
            } else {
                self.card_of(card).map_or(4, rank)
            };
            (rank, self.needs(card, p.ability).len(), p.force)
        })
    }

    fn opponent_use(&mut self, force: u8, out: &mut Vec<Event>) -> Decision {
        let card = ForceRef {
            side: Side::Opponent,
            force,
        };
        let Some(face) = self.card_of(card) else {
            return Ok(());
        };
        if face.is_creature() {
            // Its ability first (each stored use with a target), then its attack.
            while let Some(effect) = self.activatable(card) {
                let Some(target) = self.opponent_target(card, effect) else {
                    break;
                };
                self.resolve(card, true, effect, target, out)?;
                self.check_end(Side::Opponent, out)?;
                if self.over() {
                    return Ok(());
                }
            }
            if let Some(target) = self.opponent_attack_target(card) {
                self.attack(&[card], target, out)?;
                self.check_end(Side::Opponent, out)?;
            }
            return Ok(());
        }
        if let Some(effect) = self.castable(card)
            && let Some(target) = self.opponent_target(card, effect)
        {
            self.resolve(card, false, effect, target, out)?;
            self.check_end(Side::Opponent, out)?;
        }
        Ok(())
    }

    /// The target the opponent's `effect` takes (`Some(None)`: an effect without a target;
    /// `None`: nothing to target, the card waits powered).
    pub fn opponent_target(&self, user: ForceRef, effect: Effect) -> Option<Option<ForceRef>> {
        if effect.target().is_none() {
            return Some(None);
        }
        let pool = Pool::builtin();
        let yours = |keep: &dyn Fn(&Card, ForceRef) -> bool| -> Vec<ForceRef> {
            let side = if effect == Effect::Untap {
                user.side
            } else {
                user.side.other()
            };
            self.forces(side)
                .iter()
                .enumerate()
                .filter(|(_, f)| f.gone.is_none())
                .filter_map(|(k, f)| {
                    let r = ForceRef {
                        side,
                        force: u8::try_from(k).ok()?,
                    };
                    keep(pool.get(f.card), r).then_some(r)
                })
                .collect()
        };
        let strongest = |cards: Vec<ForceRef>| {
            cards.into_iter().min_by_key(|r| {
                (
                    std::cmp::Reverse(self.card_of(*r).map_or(0, |c| c.power)),
                    r.force,
                )
            })
        };
        let in_order = |cards: Vec<ForceRef>| {
            cards
                .into_iter()
                .min_by_key(|r| (self.card_of(*r).map_or(4, rank), r.force))
        };
        let target = match effect {
            // The creature with the highest power (X: always killed); a fixed amount takes
            // the strongest it kills, else the strongest.
            Effect::Damage { amount } => {
                let kills = |c: &Card| amount.is_none_or(|n| n >= c.toughness);
                strongest(yours(&|c, _| c.is_creature() && kills(c)))
                    .or_else(|| strongest(yours(&|c, _| c.is_creature())))
            }
            // Your counterspells first, then your damage-dealing spells.
            Effect::Counter => {
                let counterable = |c: &Card| c.kind.counterable();
                yours(&|c, _| counterable(c) && c.effect == Some(Effect::Counter))
                    .first()
                    .copied()
                    .or_else(|| {
                        yours(&|c, _| {
                            counterable(c) && matches!(c.effect, Some(Effect::Damage { .. }))
                        })
                        .first()
                        .copied()
                    })
            }
            // An unpowered card first (it leaves the game), then a powered one; each in the
            // order of choices.
            Effect::Tap => {
                let powered = |r: ForceRef| self.force(r).is_some_and(|f| f.powered);
                in_order(yours(&|_, r| !powered(r))).or_else(|| in_order(yours(&|_, _| true)))
            }
            // Another of his unpowered cards, in the order of choices.
            Effect::Untap => in_order(yours(&|c, r| {
                c.kind != Kind::Artifact && r != user && self.force(r).is_some_and(|f| !f.powered)
            })),
            _ => None,
        };
        let target = target?;
        self.may_target(user, effect, Some(target))
            .then_some(Some(target))
    }

    /// The creature the opponent's powered creature attacks: yours with the highest power
    /// among those it may attack and survives (their power below its toughness); none: it
    /// waits powered.
    pub fn opponent_attack_target(&self, attacker: ForceRef) -> Option<ForceRef> {
        let face = self.card_of(attacker)?;
        let side = attacker.side.other();
        (0..self.forces(side).len())
            .filter_map(|k| {
                Some(ForceRef {
                    side,
                    force: u8::try_from(k).ok()?,
                })
            })
            .filter(|&t| self.may_attack(&[attacker], t))
            .filter(|&t| self.card_of(t).is_some_and(|c| c.power < face.toughness))
            .min_by_key(|&t| {
                (
                    std::cmp::Reverse(self.card_of(t).map_or(0, |c| c.power)),
                    t.force,
                )
            })
    }
}
