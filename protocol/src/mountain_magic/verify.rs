//! A finished climb's deal, dealt again from its revealed dice (`grand-melee verify`): the
//! deck (the default one the dice draw, or the table's own), the bottom row, every card turned
//! over, every land that left the land deck and the occupying forces must be the dice's
//! (PROTOCOL.md, "Verifiable dice").

use super::Deal;
use super::pool::{Deck, Pool};
use crate::dice::{Dice, Mismatch};
use crate::event::Event;
use crate::mountain_magic_types::{CardNo, DeckFile};

/// What [`verify_deal`] checked in a climb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DealVerified {
    /// Whether the table dealt its own deck (else the default deck the dice draw).
    pub own_deck: bool,
    /// Spell cards turned over and checked, beyond the bottom row.
    pub flipped: u32,
    /// Lands that left the land deck (drawn, paid as upkeep, discarded), checked.
    pub lands: u32,
    /// Whether the occupying forces were turned over (and checked).
    pub occupiers: bool,
}

/// Deals a Mountain Magic climb again from `dice` (a verified game's,
/// [`crate::dice::Verified::dice`]) and the table's own deck if it had one, and checks every
/// card its events show against that deal. `Ok(None)`: the events hold no deal (another game).
pub fn verify_deal<'a>(
    dice: &Dice,
    own_deck: Option<&DeckFile>,
    events: impl IntoIterator<Item = (u64, &'a Event)>,
) -> Result<Option<DealVerified>, Mismatch> {
    let mismatch = |seq: u64, what: String| Mismatch { seq, what };
    let pool = Pool::builtin();
    let deck = match own_deck {
        Some(file) => Deck::from_file(pool, file)
            .map_err(|e| mismatch(0, format!("the table's own deck does not deal: {e}")))?,
        None => Deck::default_from_dice(pool, dice),
    };
    let deal = Deal::from_dice(pool, &deck, dice);
    let mut checked = DealVerified {
        own_deck: own_deck.is_some(),
        flipped: 0,
        lands: 0,
        occupiers: false,
    };
    let mut dealt = false;
    let mut next_spell = 7usize;
    let mut next_land = 0usize;
    let mut land = |seq: u64, card: CardNo, checked: &mut DealVerified| {
        let want = deal.lands.get(next_land).copied();
        if want != Some(card) {
            return Err(mismatch(
                seq,
                format!(
                    "land {} of the land deck is card {card}, the dice give {want:?}",
                    next_land + 1
                ),
            ));
        }
        next_land += 1;
        checked.lands += 1;
        Ok(())
    };
    for (seq, event) in events {
        match event {
            Event::MountainMagicDealt {
                bottom,
                spells,
                lands,
            } => {
                let want = deal.spells.get(..7).unwrap_or_default();
                let sizes = (deal.spells.len().saturating_sub(7), deal.lands.len());
                if bottom.as_slice() != want || (usize::from(*spells), usize::from(*lands)) != sizes
                {
                    return Err(mismatch(
                        seq,
                        format!(
                            "the deal is {bottom:?} with {spells} spell and {lands} land cards face down, the dice give {want:?} with {} and {}",
                            sizes.0, sizes.1
                        ),
                    ));
                }
                dealt = true;
            }
            Event::MountainMagicFlipped { card } => {
                let want = deal.spells.get(next_spell).copied();
                if want != Some(*card) {
                    return Err(mismatch(
                        seq,
                        format!(
                            "card {} of the spell deck is {card}, the dice give {want:?}",
                            next_spell + 1
                        ),
                    ));
                }
                next_spell += 1;
                checked.flipped += 1;
            }
            Event::MountainMagicManaDrawn { land: card, .. }
            | Event::MountainMagicUpkeepPaid { land: card, .. } => {
                land(seq, *card, &mut checked)?;
            }
            Event::MountainMagicLandsDiscarded { lands, .. } => {
                for card in lands {
                    land(seq, *card, &mut checked)?;
                }
            }
            Event::MountainMagicOccupiersRevealed { cards } => {
                if *cards != deal.occupiers {
                    return Err(mismatch(
                        seq,
                        format!(
                            "the occupying forces are {cards:?}, the dice give {:?}",
                            deal.occupiers
                        ),
                    ));
                }
                checked.occupiers = true;
            }
            _ => {}
        }
    }
    Ok(dealt.then_some(checked))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::dice::{DiceSecret, entropy_digest};
    use crate::mountain_magic::Climb;
    use crate::mountain_magic_types::{DeckLine, MountainCommand};

    fn dice(seed: u64) -> Dice {
        Dice::new(DiceSecret::from_seed(seed), entropy_digest(["climber"]))
    }

    /// The events of a climb over `deal` to its end: a placement whenever there is one, else
    /// a move drawn by `seed`.
    fn climb(deal: Deal, seed: u64) -> Vec<Event> {
        let mut climb = Climb::new(deal);
        let mut events = climb.begin().unwrap();
        let mut state = seed;
        for _ in 0..5000 {
            let moves = climb.legal_moves();
            if moves.is_empty() {
                break;
            }
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let pick = moves
                .iter()
                .find(|m| matches!(m, MountainCommand::Place { .. }))
                .cloned()
                .unwrap_or_else(|| {
                    moves[usize::try_from(state >> 33).unwrap() % moves.len()].clone()
                });
            events.extend(climb.handle(pick).unwrap());
        }
        events
    }

    /// A climb from the default deck that reached the battle and drew lands.
    fn a_battle() -> (Dice, Vec<Event>) {
        for seed in 0..200 {
            let dice = dice(seed);
            let pool = Pool::builtin();
            let deal = Deal::from_dice(pool, &Deck::default_from_dice(pool, &dice), &dice);
            let events = climb(deal, seed);
            let drew = events
                .iter()
                .any(|e| matches!(e, Event::MountainMagicManaDrawn { .. }));
            if drew {
                return (dice, events);
            }
        }
        panic!("no climb of 200 reached the battle");
    }

    fn numbered(events: &[Event]) -> impl Iterator<Item = (u64, &Event)> {
        (1u64..).zip(events)
    }

    #[test]
    fn a_climb_to_the_battle_verifies_and_a_forged_land_or_occupier_is_caught() {
        let (dice, events) = a_battle();
        let checked = verify_deal(&dice, None, numbered(&events))
            .unwrap()
            .unwrap();
        assert!(checked.occupiers);
        assert!(checked.lands > 0);
        let flips = events
            .iter()
            .filter(|e| matches!(e, Event::MountainMagicFlipped { .. }))
            .count();
        assert_eq!(checked.flipped as usize, flips);
        // Another land drawn.
        let at = events
            .iter()
            .position(|e| matches!(e, Event::MountainMagicManaDrawn { .. }))
            .unwrap();
        let mut forged = events.clone();
        if let Event::MountainMagicManaDrawn { land, .. } = &mut forged[at] {
            let others: Vec<CardNo> = Pool::builtin()
                .cards()
                .filter(|(n, c)| c.kind == crate::mountain_magic_types::Kind::Land && n != land)
                .map(|(n, _)| n)
                .collect();
            *land = others[0];
        }
        let caught = verify_deal(&dice, None, numbered(&forged)).unwrap_err();
        assert_eq!(caught.seq, at as u64 + 1);
        assert!(caught.what.contains("land 1 "), "{}", caught.what);
        // The occupying forces in another order.
        let at = events
            .iter()
            .position(|e| matches!(e, Event::MountainMagicOccupiersRevealed { .. }))
            .unwrap();
        let mut forged = events.clone();
        if let Event::MountainMagicOccupiersRevealed { cards } = &mut forged[at] {
            cards.rotate_left(1);
        }
        let caught = verify_deal(&dice, None, numbered(&forged)).unwrap_err();
        assert_eq!(caught.seq, at as u64 + 1);
        // Other dice deal another mountain: caught at the deal.
        let caught = verify_deal(&self::dice(9999), None, numbered(&events)).unwrap_err();
        assert_eq!(caught.seq, 1);
    }

    #[test]
    fn a_climb_of_the_tables_own_deck_verifies_only_with_that_deck() {
        let pool = Pool::builtin();
        let dice = dice(3);
        // The default deck written as a deck file, one line per card in pool order: the same
        // cards, in another order, so another deal.
        let mut cards = Deck::default_from_dice(pool, &dice).cards;
        cards.sort_unstable();
        let mut file = DeckFile { cards: Vec::new() };
        for card in cards {
            let name = &pool.get(card).name;
            match file.cards.last_mut() {
                Some(line) if &line.name == name => line.count += 1,
                _ => file.cards.push(DeckLine {
                    name: name.clone(),
                    count: 1,
                }),
            }
        }
        let own = Deck::from_file(pool, &file).unwrap();
        let events = climb(Deal::from_dice(pool, &own, &dice), 3);
        let checked = verify_deal(&dice, Some(&file), numbered(&events))
            .unwrap()
            .unwrap();
        assert!(checked.own_deck);
        assert!(verify_deal(&dice, None, numbered(&events)).is_err());
        // A deck file that breaks the recipe deals nothing.
        let short = DeckFile {
            cards: file.cards[..1].to_vec(),
        };
        let refused = verify_deal(&dice, Some(&short), numbered(&events)).unwrap_err();
        assert!(refused.what.contains("own deck"), "{}", refused.what);
    }
}
