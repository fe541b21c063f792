//! Magic Tech's words: a sentence and script fields for each of its events (decks, phases,
//! draws, deployments, mana, reveals, relocations, missions and blocks, damage, the stockpile,
//! corrections, running out), and its cards, areas and targets as players say them.

use std::fmt::Write as _;

use grand_melee_protocol::magic_tech_types::{
    Area, CardFace, CardId, CardType, Colour, Correction, MtPhase, Target, Zone,
};
use grand_melee_protocol::{Event, TableView};

use crate::safe;
use crate::words::{Wording, name, who, wire_name};

/// A phase as players say it.
pub fn phase_words(phase: MtPhase) -> &'static str {
    match phase {
        MtPhase::Untap => "untap",
        MtPhase::Draw => "draw",
        MtPhase::Upkeep => "upkeep",
        MtPhase::Deploy => "deploy",
        MtPhase::Missions => "missions",
        MtPhase::End => "end",
    }
}

/// A colour's mana letter (`W`, `U`, `B`, `R`, `G`).
pub fn colour_letter(colour: Colour) -> char {
    match colour {
        Colour::White => 'W',
        Colour::Blue => 'U',
        Colour::Black => 'B',
        Colour::Red => 'R',
        Colour::Green => 'G',
    }
}

/// A mana cost as printed: `2GG`, `0`.
pub fn cost_words(face: &CardFace) -> String {
    let coloured: String = face
        .cost
        .coloured
        .iter()
        .map(|&c| colour_letter(c))
        .collect();
    if face.cost.generic == 0 && !coloured.is_empty() {
        coloured
    } else {
        format!("{}{coloured}", face.cost.generic)
    }
}

/// A card type as players say it.
pub fn type_words(card_type: CardType) -> &'static str {
    match card_type {
        CardType::Land => "land",
        CardType::Creature => "creature",
        CardType::Artifact => "artifact",
        CardType::Enchantment => "enchantment",
        CardType::Sorcery => "sorcery",
        CardType::Instant => "instant",
    }
}

/// A card in play by number, with its declared name if it has one: `#4 "Grizzly Bears"`, or
/// `#6 (face down)`.
pub fn card_words(view: &TableView, card: CardId) -> String {
    let face = view
        .magic_tech
        .as_ref()
        .and_then(|b| b.cards.iter().find(|c| c.card == card))
        .and_then(|c| c.face.as_ref());
    match face {
        Some(face) => format!("#{card} {}", safe::printable(&face.name)),
        None => format!("#{card} (face down)"),
    }
}

/// Where a card stands, for script lines: `deploy`, `patrol`, `guard:4`, `guard:stockpile`.
pub fn area_field(area: Area) -> String {
    match area {
        Area::Deploy => "deploy".to_owned(),
        Area::Patrol => "patrol".to_owned(),
        Area::Guard { card: Some(card) } => format!("guard:{card}"),
        Area::Guard { card: None } => "guard:stockpile".to_owned(),
    }
}

/// Where a card stands, in a sentence.
fn area_sentence(view: &TableView, area: Area) -> String {
    match area {
        Area::Deploy => "the deploy area".to_owned(),
        Area::Patrol => "patrol".to_owned(),
        Area::Guard { card: Some(card) } => format!("guarding {}", card_words(view, card)),
        Area::Guard { card: None } => "guarding the stockpile".to_owned(),
    }
}

/// A target for script lines: `card:4` or `stockpile:2`.
pub fn target_field(target: Target) -> String {
    match target {
        Target::Card { card } => format!("card:{card}"),
        Target::Stockpile { player } => format!("stockpile:{player}"),
    }
}

/// A target in a sentence.
fn target_sentence(view: &TableView, target: Target) -> String {
    match target {
        Target::Card { card } => card_words(view, card),
        Target::Stockpile { player } => format!("{}'s stockpile", name(view, player)),
    }
}

/// Card numbers, for script lines: `4,5` (`none`: empty).
pub fn cards_field(cards: &[CardId]) -> String {
    if cards.is_empty() {
        return "none".to_owned();
    }
    let cards: Vec<String> = cards.iter().map(ToString::to_string).collect();
    cards.join(",")
}

fn cards_sentence(view: &TableView, cards: &[CardId]) -> String {
    let cards: Vec<String> = cards.iter().map(|&c| card_words(view, c)).collect();
    cards.join(", ")
}

/// A declared card for script lines: ` name="Grizzly Bears" type=creature cost=1G pt=2/2`.
fn face_fields(face: &CardFace) -> String {
    let mut fields = format!(
        " name={} type={} cost={}",
        safe::quoted(&face.name),
        type_words(face.card_type),
        cost_words(face)
    );
    if face.card_type == CardType::Creature {
        let _ = write!(fields, " pt={}/{}", face.power, face.toughness);
    }
    fields
}

/// A correction, for script lines and sentences.
pub fn correction_words(view: &TableView, correction: &Correction) -> (String, String) {
    match correction {
        Correction::Counters { card, counters } => (
            format!(" correction=counters card={card} counters={counters}"),
            format!("{} has {counters} mana counter(s)", card_words(view, *card)),
        ),
        Correction::Damage { card, damage } => (
            format!(" correction=damage card={card} damage={damage}"),
            format!("{} has {damage} damage counter(s)", card_words(view, *card)),
        ),
        Correction::Tapped { card, tapped } => (
            format!(" correction=tapped card={card} tapped={tapped}"),
            format!(
                "{} is {}",
                card_words(view, *card),
                if *tapped { "tapped" } else { "untapped" }
            ),
        ),
        Correction::Mana { player, mana } => (
            format!(" correction=mana player={} mana={mana}", who(view, *player)),
            format!("{} has {mana} unspent mana", name(view, *player)),
        ),
        Correction::Move {
            player,
            from,
            to,
            count,
        } => (
            format!(
                " correction=move player={} from={} to={} count={count}",
                who(view, *player),
                wire_name(from),
                wire_name(to)
            ),
            format!(
                "{count} card(s) of {} move from {} to {}",
                name(view, *player),
                zone_words(*from),
                zone_words(*to)
            ),
        ),
    }
}

/// A zone as players say it.
pub fn zone_words(zone: Zone) -> &'static str {
    match zone {
        Zone::Stockpile => "stockpile",
        Zone::Hand => "hand",
        Zone::Play => "play",
        Zone::Scrapheap => "scrapheap",
    }
}

/// The words of one of Magic Tech's events, worded with the view as it was before it, or
/// `None` for an event that is not Magic Tech's.
pub fn wording(event: &Event, view: &TableView) -> Option<Wording> {
    let w = |p| who(view, p);
    let n = |p| name(view, p);
    let c = |card| card_words(view, card);
    let (fields, sentence) = match event {
        Event::MagicTechDeckDeclared { player, size } => (
            format!(" player={} size={size}", w(*player)),
            format!("{} declared a deck of {size} cards", n(*player)),
        ),
        Event::MagicTechPhaseBegan { player, phase } => (
            format!(" player={} phase={}", w(*player), wire_name(phase)),
            format!("{}'s {} phase", n(*player), phase_words(*phase)),
        ),
        Event::MagicTechDrew { player, count } => (
            format!(" player={} count={count}", w(*player)),
            format!("{} drew {count} card(s)", n(*player)),
        ),
        Event::MagicTechDeployed { player, card, land } => match land {
            Some(face) => (
                format!(" player={} card={card}{}", w(*player), face_fields(face)),
                format!(
                    "{} played land #{card} {}",
                    n(*player),
                    safe::printable(&face.name)
                ),
            ),
            None => (
                format!(" player={} card={card} face_down", w(*player)),
                format!("{} deployed #{card} face down", n(*player)),
            ),
        },
        Event::MagicTechTapped { card, mana } => (
            format!(" card={card} mana={mana}"),
            if *mana > 0 {
                format!("{} tapped for {mana} mana", c(*card))
            } else {
                format!("{} tapped", c(*card))
            },
        ),
        Event::MagicTechPaid {
            player,
            card,
            amount,
        } => match card {
            Some(card) => (
                format!(" player={} card={card} amount={amount}", w(*player)),
                format!("{} put {amount} counter(s) on {}", n(*player), c(*card)),
            ),
            None => (
                format!(" player={} ability amount={amount}", w(*player)),
                format!("{} paid {amount} for an ability", n(*player)),
            ),
        },
        Event::MagicTechRevealed { card, face, cost } => (
            format!(" card={card}{} paid={cost}", face_fields(face)),
            format!(
                "#{card} revealed: {} ({} {}) for {cost}",
                safe::printable(&face.name),
                type_words(face.card_type),
                cost_words(face)
            ),
        ),
        Event::MagicTechRelocated { card, area } => (
            format!(" card={card} area={}", area_field(*area)),
            format!("{} moved to {}", c(*card), area_sentence(view, *area)),
        ),
        Event::MagicTechMissionBegan {
            player,
            attackers,
            target,
        } => (
            format!(
                " player={} attackers={} target={}",
                w(*player),
                cards_field(attackers),
                target_field(*target)
            ),
            format!(
                "{} sends {} on a mission against {}",
                n(*player),
                cards_sentence(view, attackers),
                target_sentence(view, *target)
            ),
        ),
        Event::MagicTechBlocked { blocks } => {
            let fields = if blocks.is_empty() {
                " blocks=none".to_owned()
            } else {
                let pairs: Vec<String> = blocks
                    .iter()
                    .map(|b| format!("{}:{}", b.blocker, b.attacker))
                    .collect();
                format!(" blocks={}", pairs.join(","))
            };
            let sentence = if blocks.is_empty() {
                "No blocks".to_owned()
            } else {
                let pairs: Vec<String> = blocks
                    .iter()
                    .map(|b| format!("{} blocks {}", c(b.blocker), c(b.attacker)))
                    .collect();
                pairs.join("; ")
            };
            (fields, sentence)
        }
        Event::MagicTechDamaged {
            target,
            amount,
            effect,
        } => {
            let what = match target {
                Target::Stockpile { .. } => format!("{effect} card(s) discarded"),
                Target::Card { card } => {
                    let face_down = view
                        .magic_tech
                        .as_ref()
                        .and_then(|b| b.cards.iter().find(|x| x.card == *card))
                        .is_some_and(|x| x.face.is_none());
                    if face_down {
                        format!("{effect} mana counter(s) removed")
                    } else {
                        format!("{effect} damage counter(s)")
                    }
                }
            };
            (
                format!(
                    " target={} amount={amount} effect={effect}",
                    target_field(*target)
                ),
                format!(
                    "{} took {amount} damage: {what}",
                    target_sentence(view, *target)
                ),
            )
        }
        Event::MagicTechDestroyed { card, buried } => (
            format!(" card={card} buried={buried}"),
            if *buried {
                format!("{} was buried", c(*card))
            } else {
                format!("{} was destroyed", c(*card))
            },
        ),
        Event::MagicTechMissionEnded { tapped } => (
            format!(" tapped={}", cards_field(tapped)),
            "The mission is over".to_owned(),
        ),
        Event::MagicTechScrapped { player, count } => (
            format!(" player={} count={count}", w(*player)),
            format!("{} scrapped {count} card(s) from the stockpile", n(*player)),
        ),
        Event::MagicTechRecovered { player, count } => (
            format!(" player={} count={count}", w(*player)),
            format!(
                "{} put {count} card(s) from the scrapheap under the stockpile",
                n(*player)
            ),
        ),
        Event::MagicTechHealed { card, amount } => (
            format!(" card={card} amount={amount}"),
            format!("{} lost {amount} damage counter(s)", c(*card)),
        ),
        Event::MagicTechLeftPlay { card, to } => (
            format!(" card={card} to={}", wire_name(to)),
            format!("{} left play for the {}", c(*card), zone_words(*to)),
        ),
        Event::MagicTechProposed { player, correction } => {
            let (fields, sentence) = correction_words(view, correction);
            (
                format!(" player={}{fields}", w(*player)),
                format!("{} proposes: {sentence}", n(*player)),
            )
        }
        Event::MagicTechDeclined { player } => (
            format!(" player={}", w(*player)),
            format!("{} declined the correction", n(*player)),
        ),
        Event::MagicTechCorrected { correction, by } => {
            let (fields, sentence) = correction_words(view, correction);
            match by {
                Some(by) => (
                    format!("{fields} by={}", w(*by)),
                    format!("Corrected ({} accepted): {sentence}", n(*by)),
                ),
                None => (
                    format!("{fields} by=host"),
                    format!("The host ruled: {sentence}"),
                ),
            }
        }
        Event::MagicTechRanOut { player } => (
            format!(" player={}", w(*player)),
            format!("{} ran out of cards and loses", n(*player)),
        ),
        _ => return None,
    };
    Some(Wording::new(fields, sentence))
}
