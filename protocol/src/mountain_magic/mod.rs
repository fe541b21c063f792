//! Mountain Magic (`docs/RULES.md`, "Mountain Magic"): the solitaire climb and battle, on the
//! game seam. [`MountainMagic`] ([`table`]) is the table: one seat, the shell's commands, the
//! standings. [`Climb`] is the climb itself: the fold of its events ([`Climb::apply`], the only
//! place it changes) over the secret [`Deal`] the server holds; [`decide`] holds the decisions
//! (every check first, then the events one at a time, each applied as it is emitted) and the
//! automatic opponent, [`moves`] the legal moves, [`climb`] the climb's rules, [`pool`] the card
//! pool and the deck recipe. Its vocabulary is [`crate::mountain_magic_types`]; its events are
//! the `mountain_magic.*` variants of [`Event`].
//!
//! One player climbs at a table; a group shares "today's mountain" by dealing from the same
//! dice ([`Deal::from_dice`] is a pure function of them).

pub mod climb;
pub mod day;
mod decide;
mod moves;
pub mod pool;
mod table;
mod verify;

pub use table::MountainMagic;
pub use verify::{DealVerified, verify_deal};

use crate::dice::Dice;
use crate::event::Event;
use crate::mountain_magic_types::{
    BattleView, Card, CardNo, ClimbEnd, Colour, ForceRef, ForceView, Kind, MmPhase, MountainView,
    OCCUPIERS, Outcome, ROWS, Side, Spot,
};
use pool::{Deck, Pool};

/// What the server deals from the dice and keeps face down: the spell deck (its first seven
/// cards are the bottom row, the rest are drawn from the front), the land deck (drawn from the
/// front) and the occupying forces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Deal {
    /// The spell deck, shuffled.
    pub spells: Vec<CardNo>,
    /// The land deck, shuffled.
    pub lands: Vec<CardNo>,
    /// The five occupying forces.
    pub occupiers: Vec<CardNo>,
}

/// Fisher–Yates from the back under `label`: the swap for place i (n−1 down to 1) is with
/// j = `below(label, n−1−i, i+1)`, as [`Dice::shuffle`] does for the seating.
fn shuffle<T>(dice: &Dice, label: &str, items: &mut [T]) {
    let n = items.len();
    for (k, i) in (1..n).rev().enumerate() {
        let j = usize::try_from(dice.below(label, k as u64, i as u64 + 1)).unwrap_or(0);
        items.swap(i, j);
    }
}

impl Deal {
    /// The deal of `deck` from the dice: the lands and the other cards shuffled apart (labels
    /// `mm.lands` and `mm.spells`), and five cards for the occupying forces from the pool's
    /// non-land, non-artifact cards, outside the deck (label `mm.occupiers`: the pool's
    /// candidates shuffled, the first five). The same dice deal the same mountain.
    pub fn from_dice(pool: &Pool, deck: &Deck, dice: &Dice) -> Deal {
        let (mut lands, mut spells): (Vec<CardNo>, Vec<CardNo>) = deck
            .cards
            .iter()
            .partition(|&&n| pool.get(n).kind == Kind::Land);
        shuffle(dice, "mm.lands", &mut lands);
        shuffle(dice, "mm.spells", &mut spells);
        let mut candidates: Vec<CardNo> = pool
            .cards()
            .filter(|(_, c)| !matches!(c.kind, Kind::Land | Kind::Artifact))
            .map(|(n, _)| n)
            .collect();
        shuffle(dice, "mm.occupiers", &mut candidates);
        candidates.truncate(OCCUPIERS);
        Deal {
            spells,
            lands,
            occupiers: candidates,
        }
    }
}

/// A Mountain Magic climb: the public state (the fold of its events) and, where the rules
/// decide, the deal. A [`MountainMagic`] table holds one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Climb {
    /// The deal (`None` in a mirror, which only folds).
    deal: Option<Deal>,
    view: MountainView,
}

impl Climb {
    /// A climb over `deal`, not dealt yet: [`Climb::begin`] deals it.
    pub fn new(deal: Deal) -> Self {
        Self {
            deal: Some(deal),
            view: MountainView::default(),
        }
    }

    /// A mirror: folds events, decides nothing.
    pub fn mirror() -> Self {
        Self {
            deal: None,
            view: MountainView::default(),
        }
    }

    /// A mirror of a snapshot.
    pub fn from_view(view: MountainView) -> Self {
        Self { deal: None, view }
    }

    /// The climb over `deal` folded from `events` (a replay, or a recovery).
    pub fn replay<'a>(
        deal: Option<Deal>,
        events: impl IntoIterator<Item = &'a Event>,
    ) -> Result<Self, &'static str> {
        let mut climb = Self {
            deal,
            view: MountainView::default(),
        };
        for event in events {
            climb.apply(event)?;
        }
        Ok(climb)
    }

    /// The public state.
    pub fn view(&self) -> &MountainView {
        &self.view
    }

    /// The deal, where the rules decide.
    pub fn deal(&self) -> Option<&Deal> {
        self.deal.as_ref()
    }

    /// The card at a place of the mountain.
    pub fn at(&self, row: u8, pos: u8) -> Option<CardNo> {
        self.view
            .mountain
            .get(usize::from(row))
            .and_then(|r| r.get(usize::from(pos)))
            .copied()
            .flatten()
    }

    /// Whether every place of the mountain has been filled.
    fn complete(&self) -> bool {
        self.view.mountain.len() == usize::from(ROWS)
            && self
                .view
                .mountain
                .iter()
                .all(|r| r.iter().all(Option::is_some))
    }

    /// The card to place now: the turned-over one, or right after a placement the discard
    /// pile's top card.
    pub fn card_to_place(&self) -> Option<CardNo> {
        match self.view.flipped {
            Some(card) => Some(card),
            None if self.view.may_recover => self.view.discard.last().copied(),
            None => None,
        }
    }

    /// Whether `card` may go at (`row`, `pos`): the place is empty, the two cards below it
    /// are there, and the climb's rules allow it ([`climb::may_place`]).
    pub fn may_place_at(&self, card: CardNo, row: u8, pos: u8) -> bool {
        if row == 0 || row >= ROWS || pos >= climb::row_len(row) {
            return false;
        }
        let pool = Pool::builtin();
        let (Some(a), Some(b)) = (self.at(row - 1, pos), self.at(row - 1, pos + 1)) else {
            return false;
        };
        self.at(row, pos).is_none()
            && self.view.phase == MmPhase::Climbing
            && climb::may_place(pool.get(card), pool.get(a), pool.get(b))
    }

    fn battle(&self) -> Result<&BattleView, &'static str> {
        self.view.battle.as_ref().ok_or("no battle")
    }

    fn battle_mut(&mut self) -> Result<&mut BattleView, &'static str> {
        self.view.battle.as_mut().ok_or("no battle")
    }

    /// A side's forces in the battle.
    pub fn forces(&self, side: Side) -> &[ForceView] {
        match (&self.view.battle, side) {
            (Some(b), Side::Player) => &b.player,
            (Some(b), Side::Opponent) => &b.opponent,
            (None, _) => &[],
        }
    }

    /// A card in the battle, if it is still in it.
    pub fn force(&self, card: ForceRef) -> Option<&ForceView> {
        self.forces(card.side)
            .get(usize::from(card.force))
            .filter(|f| f.gone.is_none())
    }

    fn force_mut(&mut self, card: ForceRef) -> Result<&mut ForceView, &'static str> {
        let battle = self.battle_mut()?;
        let forces = match card.side {
            Side::Player => &mut battle.player,
            Side::Opponent => &mut battle.opponent,
        };
        forces
            .get_mut(usize::from(card.force))
            .filter(|f| f.gone.is_none())
            .ok_or("no such card in the battle")
    }

    /// The coloured mana a card still needs to be powered (its ability's, with `ability`).
    pub fn needs(&self, card: ForceRef, ability: bool) -> Vec<Colour> {
        let Some(force) = self.force(card) else {
            return Vec::new();
        };
        let face = Pool::builtin().get(force.card);
        let (cost, paid) = if ability {
            match &face.ability {
                Some(a) => (a.cost.clone(), &force.ability_mana),
                None => return Vec::new(),
            }
        } else {
            (face.cost.coloured.clone(), &force.mana)
        };
        let mut needs = cost;
        for colour in paid {
            if let Some(k) = needs.iter().position(|c| c == colour) {
                needs.remove(k);
            }
        }
        needs
    }

    /// Whether a wizard has a creature left in the battle.
    pub fn has_creatures(&self, side: Side) -> bool {
        self.forces(side)
            .iter()
            .any(|f| f.gone.is_none() && Pool::builtin().get(f.card).is_creature())
    }

    /// Where a finished climb stands among a group's climbs of the same mountain, best first
    /// when sorted: the end (total victory first, the humiliating defeat sixth, a failed
    /// climb after them), then the most cards left — the player's forces still in the battle,
    /// or for a failed climb the cards he placed on the mountain. `None` before the end.
    pub fn standing_key(&self) -> Option<(ClimbEnd, std::cmp::Reverse<u16>)> {
        let count = |n: usize| std::cmp::Reverse(u16::try_from(n).unwrap_or(u16::MAX));
        match self.view.outcome? {
            Outcome::Battle { ending } => {
                let left = self
                    .forces(Side::Player)
                    .iter()
                    .filter(|f| f.gone.is_none())
                    .count();
                Some((ClimbEnd::of(ending), count(left)))
            }
            Outcome::FailedClimb => {
                let placed = self
                    .view
                    .mountain
                    .iter()
                    .skip(1)
                    .flatten()
                    .filter(|c| c.is_some())
                    .count();
                Some((ClimbEnd::FailedClimb, count(placed)))
            }
        }
    }

    /// Whether all of a wizard's cards have left the battle.
    pub fn all_gone(&self, side: Side) -> bool {
        self.forces(side).iter().all(|f| f.gone.is_some())
    }

    /// The cards left in the mountain (not on the path, not drawn), top row first, left to
    /// right: where the player's draws come from.
    pub fn mountain_left(&self) -> Vec<Spot> {
        let mut left = Vec::new();
        for row in (0..ROWS).rev() {
            for pos in 0..climb::row_len(row) {
                if self.at(row, pos).is_some() {
                    left.push(Spot { row, pos });
                }
            }
        }
        left
    }

    fn card_of(&self, card: ForceRef) -> Option<&'static Card> {
        self.force(card).map(|f| Pool::builtin().get(f.card))
    }
}

fn fresh(card: CardNo) -> ForceView {
    ForceView {
        card,
        mana: Vec::new(),
        powered: false,
        ability_mana: Vec::new(),
        uses: 0,
        used: false,
        gone: None,
    }
}

fn unpower(force: &mut ForceView) {
    force.powered = false;
    force.mana.clear();
}

impl Climb {
    /// Folds one event: the only place the state changes. An event that does not fit the
    /// state is refused (the journal is corrupt or foreign) and changes nothing.
    pub fn apply(&mut self, event: &Event) -> Result<(), &'static str> {
        let mut next = self.clone();
        next.fold(event)?;
        *self = next;
        Ok(())
    }

    fn take_land(&mut self, count: usize) -> Result<(), &'static str> {
        let count = u16::try_from(count).map_err(|_| "too many lands")?;
        self.view.lands_left = self
            .view
            .lands_left
            .checked_sub(count)
            .ok_or("the land deck is empty")?;
        Ok(())
    }

    fn fold(&mut self, event: &Event) -> Result<(), &'static str> {
        use Event as E;
        let pool = Pool::builtin();
        let phase = self.view.phase;
        match event {
            E::MountainMagicDealt {
                bottom,
                spells,
                lands,
            } => {
                if phase != MmPhase::Undealt || bottom.len() != usize::from(ROWS) {
                    return Err("a deal out of place");
                }
                if bottom.iter().any(|&c| pool.card(c).is_none()) {
                    return Err("a card not in the pool");
                }
                self.view.mountain = (0..ROWS)
                    .map(|row| vec![None; usize::from(climb::row_len(row))])
                    .collect();
                self.view.mountain[0] = bottom.iter().map(|&c| Some(c)).collect();
                self.view.spells_left = *spells;
                self.view.lands_left = *lands;
                self.view.phase = MmPhase::Climbing;
            }
            E::MountainMagicFlipped { card } => {
                if phase != MmPhase::Climbing || self.view.flipped.is_some() {
                    return Err("a card turned over out of place");
                }
                pool.card(*card).ok_or("a card not in the pool")?;
                self.view.spells_left = self
                    .view
                    .spells_left
                    .checked_sub(1)
                    .ok_or("the spell deck is empty")?;
                self.view.flipped = Some(*card);
                self.view.may_recover = false;
            }
            E::MountainMagicPlaced {
                card,
                row,
                pos,
                from_discard,
            } => {
                let placing = if *from_discard {
                    self.view
                        .discard
                        .last()
                        .filter(|_| self.view.may_recover && self.view.flipped.is_none())
                } else {
                    self.view.flipped.as_ref()
                };
                if placing != Some(card) || !self.may_place_at(*card, *row, *pos) {
                    return Err("a placement the rules do not allow");
                }
                if *from_discard {
                    self.view.discard.pop();
                } else {
                    self.view.flipped = None;
                }
                self.view.mountain[usize::from(*row)][usize::from(*pos)] = Some(*card);
                self.view.may_recover = true;
                if self.complete() {
                    self.view.may_recover = false;
                    self.view.phase = MmPhase::Path;
                }
            }
            E::MountainMagicDiscarded { card } => {
                if phase != MmPhase::Climbing || self.view.flipped != Some(*card) {
                    return Err("discarded a card not turned over");
                }
                self.view.flipped = None;
                self.view.discard.push(*card);
                self.view.may_recover = false;
            }
            E::MountainMagicClimbFailed => {
                if phase != MmPhase::Climbing || self.view.spells_left != 0 {
                    return Err("the climb failed with cards left");
                }
                self.view.phase = MmPhase::Over;
                self.view.outcome = Some(Outcome::FailedClimb);
            }
            E::MountainMagicPathChosen { path } => {
                if phase != MmPhase::Path || !climb::is_path(path) || self.view.battle.is_some() {
                    return Err("not a path down the mountain");
                }
                let mut forces = Vec::new();
                for (k, &pos) in path.iter().enumerate() {
                    let row = ROWS - 1 - u8::try_from(k).map_err(|_| "path too long")?;
                    let slot = &mut self.view.mountain[usize::from(row)][usize::from(pos)];
                    forces.push(fresh(slot.take().ok_or("an empty place on the path")?));
                }
                self.view.path = path.clone();
                self.view.battle = Some(BattleView {
                    player: forces,
                    ..BattleView::default()
                });
            }
            E::MountainMagicOccupiersRevealed { cards } => {
                let battle = self.battle_mut()?;
                if phase != MmPhase::Path || !battle.opponent.is_empty() || cards.is_empty() {
                    return Err("occupiers revealed out of place");
                }
                if cards.iter().any(|&c| pool.card(c).is_none()) {
                    return Err("a card not in the pool");
                }
                battle.opponent = cards.iter().map(|&c| fresh(c)).collect();
                self.view.phase = MmPhase::Battle;
            }
            E::MountainMagicManaDrawn { side, land } => {
                if phase != MmPhase::Battle || pool.card(*land).map(|c| c.kind) != Some(Kind::Land)
                {
                    return Err("a land drawn out of place");
                }
                self.take_land(1)?;
                let battle = self.battle_mut()?;
                if battle.turn.is_some() || battle.pending_land.is_some() {
                    return Err("a turn is under way");
                }
                battle.turn = Some(*side);
                battle.pending_land = Some(*land);
                let turns = &mut battle.turns[side.index()];
                *turns = turns.saturating_add(1);
            }
            E::MountainMagicLandDestroyed { side } => {
                let battle = self.battle_mut()?;
                let doomed = &mut battle.doomed[side.index()];
                if battle.turn != Some(*side) || battle.pending_land.is_none() || *doomed == 0 {
                    return Err("no land to destroy");
                }
                *doomed -= 1;
                battle.pending_land = None;
            }
            E::MountainMagicManaPlaced { side, place } => {
                let battle = self.battle()?;
                let land = battle.pending_land.ok_or("no land drawn")?;
                if battle.turn != Some(*side) || !pool.get(land).produces.contains(&place.colour) {
                    return Err("mana placed out of turn");
                }
                let card = ForceRef {
                    side: *side,
                    force: place.force,
                };
                if !self.needs(card, place.ability).contains(&place.colour)
                    || (!place.ability && self.force(card).is_some_and(|f| f.powered))
                {
                    return Err("that card cannot use that mana");
                }
                let ability_cost = self
                    .card_of(card)
                    .and_then(|c| c.ability.as_ref())
                    .map(|a| a.cost.len());
                let force = self.force_mut(card)?;
                if place.ability {
                    force.ability_mana.push(place.colour);
                    if Some(force.ability_mana.len()) == ability_cost {
                        force.ability_mana.clear();
                        force.uses = force.uses.saturating_add(1);
                    }
                } else {
                    force.mana.push(place.colour);
                }
                if !place.ability && self.needs(card, false).is_empty() {
                    self.force_mut(card)?.powered = true;
                }
                self.battle_mut()?.pending_land = None;
            }
            E::MountainMagicManaUnused { side } => {
                let battle = self.battle_mut()?;
                if battle.turn != Some(*side) || battle.pending_land.take().is_none() {
                    return Err("no land to let go");
                }
            }
            E::MountainMagicUpkeepPaid { card, land } => {
                let face = self.card_of(*card).ok_or("no such card")?;
                if face.upkeep.is_empty() || pool.card(*land).map(|c| c.kind) != Some(Kind::Land) {
                    return Err("no upkeep to pay");
                }
                self.take_land(1)?;
            }
            E::MountainMagicUsed {
                card,
                ability,
                target,
            } => {
                let face = self.card_of(*card).ok_or("no such card")?;
                if let Some(target) = target {
                    self.force(*target).ok_or("no such target")?;
                }
                let force = self.force_mut(*card)?;
                if *ability {
                    let tap = face.ability.as_ref().ok_or("no ability")?.tap;
                    if !force.powered || force.uses == 0 {
                        return Err("no stored use");
                    }
                    force.uses -= 1;
                    if tap {
                        unpower(force);
                    }
                } else {
                    if !force.powered || force.used {
                        return Err("an unpowered card used");
                    }
                    unpower(force);
                    force.used = true;
                }
            }
            E::MountainMagicAttacked { attackers, target } => {
                if attackers.is_empty() || self.card_of(*target).is_none_or(|c| !c.is_creature()) {
                    return Err("no attack");
                }
                if attackers.iter().any(|a| self.force(*a).is_none()) {
                    return Err("an attacker not in the battle");
                }
            }
            E::MountainMagicRemoved { card, why } => {
                let force = self.force_mut(*card)?;
                unpower(force);
                force.ability_mana.clear();
                force.uses = 0;
                force.gone = Some(*why);
            }
            E::MountainMagicUnpowered { card } => {
                let force = self.force_mut(*card)?;
                if !force.powered {
                    return Err("not powered");
                }
                unpower(force);
            }
            E::MountainMagicUntapped { card } => {
                let artifact = self
                    .card_of(*card)
                    .is_some_and(|c| c.kind == Kind::Artifact);
                let force = self.force_mut(*card)?;
                if force.powered || artifact {
                    return Err("cannot be untapped");
                }
                force.powered = true;
            }
            E::MountainMagicLandsDiscarded { lands, .. } => {
                if lands.is_empty() {
                    return Err("no lands discarded");
                }
                self.battle()?;
                self.take_land(lands.len())?;
            }
            E::MountainMagicLandDoomed { side } => {
                let doomed = &mut self.battle_mut()?.doomed[side.index()];
                *doomed = doomed.saturating_add(1);
            }
            E::MountainMagicPoolEmptied { side } => {
                let battle = self.battle_mut()?;
                let forces = match side {
                    Side::Player => &mut battle.player,
                    Side::Opponent => &mut battle.opponent,
                };
                for force in forces.iter_mut().filter(|f| f.gone.is_none()) {
                    unpower(force);
                    force.ability_mana.clear();
                    force.uses = 0;
                }
            }
            E::MountainMagicDrewFromMountain { cards } => {
                if phase != MmPhase::Battle || cards.is_empty() {
                    return Err("no draw from the mountain");
                }
                let left = self.mountain_left();
                if cards.as_slice() != &left[..cards.len().min(left.len())] {
                    return Err("the mountain is drawn top row first, left to right");
                }
                for &Spot { row, pos } in cards {
                    let slot = &mut self.view.mountain[usize::from(row)][usize::from(pos)];
                    let card = slot.take().ok_or("an empty place")?;
                    self.battle_mut()?.player.push(fresh(card));
                }
            }
            E::MountainMagicTurnEnded { side } => {
                let battle = self.battle_mut()?;
                if battle.turn != Some(*side) || battle.pending_land.is_some() {
                    return Err("ended a turn not under way");
                }
                battle.turn = None;
                for force in battle.player.iter_mut().chain(battle.opponent.iter_mut()) {
                    force.used = false;
                }
            }
            E::MountainMagicEnded { ending } => {
                if phase != MmPhase::Battle {
                    return Err("the battle ended outside the battle");
                }
                self.view.phase = MmPhase::Over;
                self.view.outcome = Some(Outcome::Battle { ending: *ending });
                let battle = self.battle_mut()?;
                battle.turn = None;
                battle.pending_land = None;
            }
            _ => return Err("not a Mountain Magic event"),
        }
        Ok(())
    }
}
