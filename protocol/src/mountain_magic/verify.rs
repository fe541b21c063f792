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
