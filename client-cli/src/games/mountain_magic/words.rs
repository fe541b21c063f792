//! Mountain Magic's words: a sentence and script fields for each of its events, so that a log
//! or a replay of a climb reads in words; its cards are named from the protocol's built-in
//! pool ([`card`]).

use grand_melee_protocol::mountain_magic::pool::Pool;
use grand_melee_protocol::mountain_magic_types::{CardNo, Ending, ForceRef, Removal, Side, Spot};
use grand_melee_protocol::{Event, TableView};

use crate::words::{Wording, wire_name};

/// A card of the pool by its name (`#12` if the pool has no such card).
pub fn card(no: CardNo) -> String {
    Pool::builtin()
        .card(no)
        .map_or_else(|| format!("#{no}"), |c| c.name.clone())
}

fn cards(list: &[CardNo]) -> String {
    list.iter().map(|&c| card(c)).collect::<Vec<_>>().join(", ")
}

fn numbers<T: ToString>(list: &[T]) -> String {
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Whose, as players say it.
pub fn side_words(side: Side) -> &'static str {
    match side {
        Side::Player => "the climber",
        Side::Opponent => "the occupying forces",
    }
}

/// A card in the battle, for script lines: `player:2`.
fn force_field(card: ForceRef) -> String {
    format!("{}:{}", wire_name(&card.side), card.force)
}

/// A card in the battle, for sentences: `the climber's card 2`.
fn force_words(card: ForceRef) -> String {
    format!("{}'s card {}", side_words(card.side), card.force)
}

fn removal_words(why: Removal) -> &'static str {
    match why {
        Removal::Killed => "killed",
        Removal::Countered => "countered",
        Removal::TappedAway => "tapped away",
        Removal::WalkedOff => "walked off (upkeep unpaid)",
    }
}

fn spots(list: &[Spot]) -> String {
    list.iter()
        .map(|s| format!("{}:{}", s.row, s.pos))
        .collect::<Vec<_>>()
        .join(",")
}

/// The words of one of Mountain Magic's events; `None` for any other event.
pub fn wording(event: &Event, _view: &TableView) -> Option<Wording> {
    let (fields, sentence) = match event {
        Event::MountainMagicDealt {
            bottom,
            spells,
            lands,
        } => (
            format!(" bottom={} spells={spells} lands={lands}", numbers(bottom)),
            format!(
                "The mountain was dealt: {}; {spells} spells and {lands} lands face down",
                cards(bottom)
            ),
        ),
        Event::MountainMagicFlipped { card: no } => {
            (format!(" card={no}"), format!("Turned over {}", card(*no)))
        }
        Event::MountainMagicPlaced {
            card: no,
            row,
            pos,
            from_discard,
        } => (
            format!(
                " card={no} row={row} pos={pos}{}",
                if *from_discard { " from_discard" } else { "" }
            ),
            format!(
                "Placed {}{} on row {row}, place {pos}",
                card(*no),
                if *from_discard {
                    " from the discard pile"
                } else {
                    ""
                }
            ),
        ),
        Event::MountainMagicDiscarded { card: no } => {
            (format!(" card={no}"), format!("Discarded {}", card(*no)))
        }
        Event::MountainMagicClimbFailed => (
            String::new(),
            "The spell deck ran out before the mountain was complete: the climb failed".to_owned(),
        ),
        Event::MountainMagicPathChosen { path } => (
            format!(" path={}", numbers(path)),
            format!("The path down the mountain: {}", numbers(path)),
        ),
        Event::MountainMagicOccupiersRevealed { cards: list } => (
            format!(" cards={}", numbers(list)),
            format!("The occupying forces: {}", cards(list)),
        ),
        Event::MountainMagicManaDrawn { side, land } => (
            format!(" side={} land={land}", wire_name(side)),
            format!("{} drew {}", capital(side_words(*side)), card(*land)),
        ),
        Event::MountainMagicLandDestroyed { side } => (
            format!(" side={}", wire_name(side)),
            format!("{}'s land was destroyed", capital(side_words(*side))),
        ),
        Event::MountainMagicManaPlaced { side, place } => (
            format!(
                " side={} force={} colour={}{}",
                wire_name(side),
                place.force,
                wire_name(&place.colour),
                if place.ability { " ability" } else { "" }
            ),
            format!(
                "{} put {} mana on card {}{}",
                capital(side_words(*side)),
                wire_name(&place.colour),
                place.force,
                if place.ability { "'s ability" } else { "" }
            ),
        ),
        Event::MountainMagicManaUnused { side } => (
            format!(" side={}", wire_name(side)),
            format!("{} let the land go", capital(side_words(*side))),
        ),
        Event::MountainMagicUpkeepPaid { card: force, land } => (
            format!(" card={} land={land}", force_field(*force)),
            format!(
                "{} paid its upkeep with {}",
                capital(&force_words(*force)),
                card(*land)
            ),
        ),
        Event::MountainMagicUsed {
            card: force,
            ability,
            target,
        } => (
            format!(
                " card={}{}{}",
                force_field(*force),
                if *ability { " ability" } else { "" },
                target.map_or(String::new(), |t| format!(" target={}", force_field(t)))
            ),
            format!(
                "{} {}{}",
                capital(&force_words(*force)),
                if *ability {
                    "used its ability"
                } else {
                    "was used"
                },
                target.map_or(String::new(), |t| format!(" on {}", force_words(t)))
            ),
        ),
        Event::MountainMagicAttacked { attackers, target } => (
            format!(
                " attackers={} target={}",
                attackers
                    .iter()
                    .map(|a| force_field(*a))
                    .collect::<Vec<_>>()
                    .join(","),
                force_field(*target)
            ),
            format!(
                "{} creature(s) attacked {}",
                attackers.len(),
                force_words(*target)
            ),
        ),
        Event::MountainMagicRemoved { card: force, why } => (
            format!(" card={} why={}", force_field(*force), wire_name(why)),
            format!(
                "{} was {}",
                capital(&force_words(*force)),
                removal_words(*why)
            ),
        ),
        Event::MountainMagicUnpowered { card: force } => (
            format!(" card={}", force_field(*force)),
            format!("{} was tapped: unpowered", capital(&force_words(*force))),
        ),
        Event::MountainMagicUntapped { card: force } => (
            format!(" card={}", force_field(*force)),
            format!("{} was untapped: powered", capital(&force_words(*force))),
        ),
        Event::MountainMagicLandsDiscarded { side, lands } => (
            format!(" side={} lands={}", wire_name(side), numbers(lands)),
            format!(
                "{} lost {} land(s) from the land deck",
                capital(side_words(*side)),
                lands.len()
            ),
        ),
        Event::MountainMagicLandDoomed { side } => (
            format!(" side={}", wire_name(side)),
            format!(
                "{}'s next land will be destroyed",
                capital(side_words(*side))
            ),
        ),
        Event::MountainMagicPoolEmptied { side } => (
            format!(" side={}", wire_name(side)),
            format!("{}'s mana pool was emptied", capital(side_words(*side))),
        ),
        Event::MountainMagicDrewFromMountain { cards: list } => (
            format!(" cards={}", spots(list)),
            format!("The climber drew {} card(s) from the mountain", list.len()),
        ),
        Event::MountainMagicTurnEnded { side } => (
            format!(" side={}", wire_name(side)),
            format!("{}'s turn ended", capital(side_words(*side))),
        ),
        Event::MountainMagicEnded { ending } => (
            format!(" ending={}", wire_name(ending)),
            format!("The battle ended: {}", ending_words(*ending)),
        ),
        _ => return None,
    };
    Some(Wording::new(fields, sentence))
}

fn ending_words(ending: Ending) -> &'static str {
    ending.name()
}

/// The first letter in capitals.
fn capital(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grand_melee_protocol::examples;

    #[test]
    fn every_mountain_magic_event_has_words_and_no_other_event() {
        let view = examples::view();
        for event in examples::events() {
            let words = wording(&event, &view);
            assert_eq!(
                words.is_some(),
                event.name().starts_with("mountain_magic."),
                "{}",
                event.name()
            );
            if let Some(words) = words {
                assert!(!words.sentence.is_empty());
            }
        }
        let ended = Event::MountainMagicEnded {
            ending: Ending::Victory,
        };
        assert_eq!(
            wording(&ended, &view).map(|w| w.sentence).as_deref(),
            Some("The battle ended: victory")
        );
    }
}
