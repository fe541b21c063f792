//! Mountain Magic's rules (docs/RULES.md, "Mountain Magic"): the deck recipe, the deal, a test
//! per rule of the climb and the battle (accepted and refused: a refusal changes nothing), the
//! six endings, and property tests over random deals and random legal play.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::Event as E;
use grand_melee_protocol::dice::{Dice, DiceSecret};
use grand_melee_protocol::mountain_magic::climb::{self, in_common, may_place, natural_enemies};
use grand_melee_protocol::mountain_magic::pool::{Deck, DeckError, Pool};
use grand_melee_protocol::mountain_magic::{Climb, Deal};
use grand_melee_protocol::mountain_magic_types::{
    Card, CardNo, Class, Colour, Effect, Ending, ForceRef, Kind, ManaPlace, MmPhase,
    MountainCommand as C, MountainError, Outcome, Removal, Side, Spot,
};
use proptest::prelude::*;
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn pool() -> &'static Pool {
    Pool::builtin()
}

fn no(name: &str) -> CardNo {
    pool()
        .find(name)
        .unwrap_or_else(|| panic!("no card {name}"))
}

fn card(name: &str) -> &'static Card {
    pool().card(no(name)).unwrap()
}

fn dice(seed: u64) -> Dice {
    Dice::new(DiceSecret::from_seed(seed), [0; 32])
}

/// A climb and its journal: every accepted request is checked against the replay of the
/// journal, every refusal against the state before it.
struct Run {
    game: Climb,
    journal: Vec<E>,
}

impl Run {
    fn dealt(deal: Deal) -> Self {
        let mut game = Climb::new(deal);
        let journal = game.begin().unwrap();
        Self { game, journal }
    }

    fn ok(&mut self, command: C) -> Vec<E> {
        let events = self
            .game
            .handle(command.clone())
            .unwrap_or_else(|e| panic!("{command:?} refused: {e:?}"));
        self.journal.extend(events.iter().cloned());
        let replayed = Climb::replay(self.game.deal().cloned(), self.journal.iter()).unwrap();
        assert_eq!(
            &replayed, &self.game,
            "the replay differs after {command:?}"
        );
        events
    }

    fn refused(&mut self, command: C, error: MountainError) {
        let before = self.game.clone();
        assert_eq!(self.game.handle(command), Err(error));
        assert_eq!(self.game, before, "a refusal changed something");
    }
}

// ---------------------------------------------------------------- the deck recipe

/// A deck by hand: for each colour four of its basic land, three of its first creature, two
/// of its first sorcery and enchantment; ten fast effects.
fn hand_deck() -> Vec<CardNo> {
    let mut cards = Vec::new();
    for colour in Colour::ALL {
        let first = |class: Class| {
            pool()
                .cards()
                .find(|(_, c)| c.kind.class() == Some(class) && c.colours() == [colour])
                .unwrap()
                .0
        };
        let basic = pool()
            .cards()
            .find(|(_, c)| c.kind == Kind::Land && c.produces == [colour])
            .unwrap()
            .0;
        cards.extend([basic; 4]);
        cards.extend([first(Class::Creature); 3]);
        cards.extend([first(Class::Sorcery); 2]);
        cards.extend([first(Class::Enchantment); 2]);
    }
    cards.extend([no("Spark Lash"); 10]);
    cards
}

fn check(cards: Vec<CardNo>) -> Result<(), DeckError> {
    Deck { cards }.check(pool())
}

fn replace(cards: &mut [CardNo], old: &str, new: &str, count: usize) {
    let (old, new) = (no(old), no(new));
    let mut left = count;
    for c in cards.iter_mut() {
        if left > 0 && *c == old {
            *c = new;
            left -= 1;
        }
    }
    assert_eq!(left, 0, "not enough copies to replace");
}

#[test]
fn the_recipe_holds_65_cards_with_20_lands() {
    assert_eq!(check(hand_deck()), Ok(()));
    let mut short = hand_deck();
    short.pop();
    assert_eq!(check(short), Err(DeckError::Size { found: 64 }));
    let mut few_lands = hand_deck();
    replace(&mut few_lands, "Dawn Meadow", "Spark Lash", 1);
    assert_eq!(check(few_lands), Err(DeckError::Lands { found: 19 }));
}

#[test]
fn four_lands_of_each_colour_and_a_multiland_stands_for_either_of_its_colours() {
    let mut three_white = hand_deck();
    replace(&mut three_white, "Dawn Meadow", "Kerr Crag", 1);
    assert_eq!(
        check(three_white),
        Err(DeckError::LandColours {
            colours: vec![Colour::White],
            found: 3,
            needed: 4
        })
    );
    let mut multiland = hand_deck();
    replace(&mut multiland, "Dawn Meadow", "Sunroot Vale", 1);
    assert_eq!(check(multiland.clone()), Ok(()));
    // One multiland cannot stand for a white land and a green land at once: each colour
    // alone has four, the two together seven of eight.
    replace(&mut multiland, "Deepwood Glade", "Kerr Crag", 1);
    assert_eq!(
        check(multiland),
        Err(DeckError::LandColours {
            colours: vec![Colour::White, Colour::Green],
            found: 7,
            needed: 8
        })
    );
}

#[test]
fn creatures_sorceries_and_enchantments_come_three_two_two_per_colour() {
    let mut four_red = hand_deck();
    replace(&mut four_red, "Cinderfall", "Crag Goblin", 1);
    assert_eq!(
        check(four_red),
        Err(DeckError::TooMany {
            class: Class::Creature,
            colours: vec![Colour::Red],
            found: 4,
            allowed: 3
        })
    );
    let mut three_sorceries = hand_deck();
    replace(&mut three_sorceries, "Crag Goblin", "Cinderfall", 1);
    assert_eq!(
        check(three_sorceries),
        Err(DeckError::TooMany {
            class: Class::Sorcery,
            colours: vec![Colour::Red],
            found: 3,
            allowed: 2
        })
    );
    let mut eleven_fast = hand_deck();
    replace(&mut eleven_fast, "Cinderfall", "Spark Lash", 1);
    assert_eq!(
        check(eleven_fast),
        Err(DeckError::FastEffects { found: 11 })
    );
}

#[test]
fn up_to_four_artifacts_stand_in_for_any_non_land_cards() {
    let mut four = hand_deck();
    replace(&mut four, "Crag Goblin", "Ghazban Idol", 1);
    replace(&mut four, "Cinderfall", "Brass Sentinel", 1);
    replace(&mut four, "Spark Lash", "Hourglass of Kerr", 2);
    assert_eq!(check(four.clone()), Ok(()));
    replace(&mut four, "Spark Lash", "Clockwork Owl", 1);
    assert_eq!(check(four), Err(DeckError::Artifacts { found: 5 }));
}

#[test]
fn a_deck_file_names_pool_cards_and_is_checked() {
    let file = Deck { cards: hand_deck() }.to_file(pool());
    let text = serde_json::to_string(&file).unwrap();
    assert_eq!(Deck::from_json(pool(), &text).unwrap().cards.len(), 65);
    let unknown = text.replace("Spark Lash", "Lightning Something");
    assert_eq!(
        Deck::from_json(pool(), &unknown),
        Err(DeckError::UnknownCard {
            name: "Lightning Something".to_owned()
        })
    );
    assert!(matches!(
        Deck::from_json(pool(), "{\"cards\": 3}"),
        Err(DeckError::Unreadable { .. })
    ));
    let mut bad = file.clone();
    bad.cards[0].count = 3;
    let text = serde_json::to_string(&bad).unwrap();
    assert_eq!(
        Deck::from_json(pool(), &text),
        Err(DeckError::Size { found: 64 })
    );
}

// ---------------------------------------------------------------- the deal

#[test]
fn the_deal_is_a_pure_function_of_the_dice() {
    let deck = Deck::default_from_dice(pool(), &dice(5));
    let a = Deal::from_dice(pool(), &deck, &dice(9));
    assert_eq!(
        a,
        Deal::from_dice(pool(), &deck, &dice(9)),
        "today's mountain"
    );
    assert_ne!(a, Deal::from_dice(pool(), &deck, &dice(10)));
    assert_eq!(
        (a.spells.len(), a.lands.len(), a.occupiers.len()),
        (45, 20, 5)
    );
    assert!(a.lands.iter().all(|&n| kind_of(n) == Kind::Land));
    assert!(a.spells.iter().all(|&n| kind_of(n) != Kind::Land));
    let mut sorted = a.spells.clone();
    sorted.sort();
    let mut deck_spells: Vec<CardNo> = deck
        .cards
        .iter()
        .copied()
        .filter(|&n| kind_of(n) != Kind::Land)
        .collect();
    deck_spells.sort();
    assert_eq!(
        sorted, deck_spells,
        "the spell deck is the deck's non-land cards"
    );
    let mut occupiers = a.occupiers.clone();
    occupiers.dedup();
    assert_eq!(occupiers.len(), 5);
    assert!(
        a.occupiers
            .iter()
            .all(|&n| !matches!(kind_of(n), Kind::Land | Kind::Artifact))
    );
    let climb = Run::dealt(a.clone());
    let view = climb.game.view();
    assert_eq!(
        view.mountain[0],
        a.spells[..7].iter().map(|&c| Some(c)).collect::<Vec<_>>()
    );
    assert_eq!((view.spells_left, view.lands_left), (38, 20));
    assert_eq!(view.phase, MmPhase::Climbing);
}

fn kind_of(no: CardNo) -> Kind {
    pool().card(no).unwrap().kind
}

// ---------------------------------------------------------------- the climb's rules

#[test]
fn a_thing_in_common_is_a_colour_a_type_or_a_named_trait() {
    // Two creatures of enemy colours: the type.
    assert!(in_common(card("Kiln Brute"), card("Thicket Boar")));
    // A red instant and a white sorcery: both deal damage.
    assert!(in_common(card("Spark Lash"), card("Verdict of Dawn")));
    // Instants and interrupts are both fast effects.
    assert!(in_common(card("Spark Lash"), card("Word of Refusal")));
    // A colour.
    assert!(in_common(card("Cinderfall"), card("Crag Goblin")));
    // Flyers of different colours and types? Only flying: a flying creature and a flying
    // creature share the type anyway; a blue flyer and a black flyer share flying.
    assert!(in_common(card("Reef Skimmer"), card("Carrion Kite")));
    // Nothing: a white enchantment that taps and a red sorcery dealing X damage.
    assert!(!in_common(card("Ward of Quiet"), card("Cinderfall")));
    assert!(!in_common(card("Veil of Frost"), card("Kiln Brute")));
}

#[test]
fn natural_enemies_are_the_two_colours_opposite_on_the_wheel() {
    assert_eq!(natural_enemies(Colour::White), [Colour::Black, Colour::Red]);
    assert_eq!(natural_enemies(Colour::Blue), [Colour::Red, Colour::Green]);
    assert_eq!(
        natural_enemies(Colour::Black),
        [Colour::Green, Colour::White]
    );
    assert_eq!(natural_enemies(Colour::Red), [Colour::White, Colour::Blue]);
    assert_eq!(
        natural_enemies(Colour::Green),
        [Colour::Blue, Colour::Black]
    );
    for colour in Colour::ALL {
        for enemy in natural_enemies(colour) {
            assert!(natural_enemies(enemy).contains(&colour), "enmity is mutual");
        }
    }
}

#[test]
fn a_card_goes_on_two_cards_it_shares_something_with_or_completes_a_set_with() {
    // In common with each.
    assert!(may_place(
        card("Kiln Brute"),
        card("Crag Goblin"),
        card("Thicket Boar")
    ));
    // In common with one only, and no set: refused.
    assert!(!may_place(
        card("Kiln Brute"),
        card("Crag Goblin"),
        card("Veil of Frost")
    ));
    // A set of natural enemies: a white card on a black card and a red card, nothing shared.
    assert!(!in_common(card("Sunlit Oath"), card("Fen Lurker")));
    assert!(!in_common(card("Sunlit Oath"), card("Cinderfall")));
    assert!(may_place(
        card("Sunlit Oath"),
        card("Fen Lurker"),
        card("Cinderfall")
    ));
    assert!(may_place(
        card("Sunlit Oath"),
        card("Cinderfall"),
        card("Fen Lurker")
    ));
    // Two cards of the same enemy colour are not a set.
    assert!(!may_place(
        card("Sunlit Oath"),
        card("Cinderfall"),
        card("Kiln Brute")
    ));
    // A set of the three spell types: a blue enchantment on a black sorcery and a green
    // instant, nothing shared.
    assert!(!in_common(card("Veil of Frost"), card("Withering Word")));
    assert!(!in_common(card("Veil of Frost"), card("Hunter's Snap")));
    assert!(may_place(
        card("Veil of Frost"),
        card("Withering Word"),
        card("Hunter's Snap")
    ));
    assert!(!may_place(
        card("Veil of Frost"),
        card("Withering Word"),
        card("Kiln Brute")
    ));
}

#[test]
fn artifacts_are_wild_both_ways() {
    let idol = card("Ghazban Idol");
    assert!(may_place(idol, card("Veil of Frost"), card("Kiln Brute")));
    // On an artifact, a card needs a thing in common with the other card only.
    assert!(may_place(card("Kiln Brute"), idol, card("Crag Goblin")));
    assert!(may_place(card("Kiln Brute"), card("Crag Goblin"), idol));
    assert!(!may_place(card("Kiln Brute"), idol, card("Veil of Frost")));
    assert!(may_place(
        card("Veil of Frost"),
        idol,
        card("Brass Sentinel")
    ));
}

#[test]
fn paths_go_down_touching_cards() {
    assert_eq!(climb::all_paths().len(), 64);
    assert!(climb::all_paths().iter().all(|p| climb::is_path(p)));
    assert!(climb::is_path(&[0, 1, 2, 3, 4, 5, 6]));
    assert!(!climb::is_path(&[0, 2, 2, 3, 4, 5, 6]));
    assert!(!climb::is_path(&[1, 1, 2, 3, 4, 5, 6]));
    assert!(!climb::is_path(&[0, 0, 0, 0, 0, 0]));
}

// ---------------------------------------------------------------- the climb, played

fn artifacts(n: usize) -> Vec<CardNo> {
    vec![no("Ghazban Idol"); n]
}

/// A deal whose mountain is the seven `path` cards (top first) down its left edge and
/// artifacts everywhere else, flipped in the order they are placed (row by row, left to
/// right).
fn edge_deal(path: [&str; 7], lands: &[&str], occupiers: [&str; 5]) -> Deal {
    let mut spells = vec![no(path[6])];
    spells.extend(artifacts(6));
    for row in 1..7 {
        spells.push(no(path[6 - row]));
        spells.extend(artifacts(6 - row));
    }
    Deal {
        spells,
        lands: lands.iter().map(|l| no(l)).collect(),
        occupiers: occupiers.iter().map(|o| no(o)).collect(),
    }
}

/// Climbs an [`edge_deal`] and chooses the left edge: the battle's first turn, the player's
/// first land drawn.
fn battle(path: [&str; 7], lands: &[&str], occupiers: [&str; 5]) -> Run {
    let mut climb = Run::dealt(edge_deal(path, lands, occupiers));
    for row in 1..7u8 {
        for pos in 0..7 - row {
            climb.ok(C::Flip);
            climb.ok(C::Place { row, pos });
        }
    }
    assert_eq!(climb.game.view().phase, MmPhase::Path);
    climb.ok(C::Path { path: vec![0; 7] });
    climb
}

const REDS: [&str; 7] = [
    "Kiln Brute",
    "Crag Goblin",
    "Ridge Raptor",
    "Spark Lash",
    "Cinderfall",
    "Wildfire Banner",
    "Shatter the Chant",
];

#[test]
fn a_flipped_card_goes_where_it_may_or_to_the_discard_pile() {
    let mut deal = edge_deal(REDS, &["Kerr Crag"], ["Veil of Frost"; 5]);
    // The first card flipped: a blue enchantment that shares nothing with the red card.
    deal.spells[7] = no("Veil of Frost");
    let mut climb = Run::dealt(deal);
    climb.refused(C::Place { row: 1, pos: 0 }, MountainError::NotNow);
    climb.refused(C::Discard, MountainError::NotNow);
    climb.ok(C::Flip);
    climb.refused(C::Flip, MountainError::NotNow);
    climb.refused(C::Place { row: 1, pos: 0 }, MountainError::IllegalPlacement);
    climb.refused(C::Place { row: 2, pos: 0 }, MountainError::IllegalPlacement);
    assert_eq!(
        climb.game.placements(),
        vec![(1, 1), (1, 2), (1, 3), (1, 4), (1, 5)]
    );
    assert_eq!(
        climb.ok(C::Discard),
        vec![E::MountainMagicDiscarded {
            card: no("Veil of Frost")
        }]
    );
    // Not right after a placement: the discard pile's card waits.
    climb.refused(C::Place { row: 1, pos: 1 }, MountainError::NotNow);
    climb.ok(C::Flip);
    climb.ok(C::Place { row: 1, pos: 1 });
    // Right after a placement, the pile's first face-up card may go.
    assert!(climb.game.view().may_recover);
    climb.ok(C::Place { row: 1, pos: 2 });
    assert!(climb.game.view().discard.is_empty());
    assert_eq!(climb.game.at(1, 2), Some(no("Veil of Frost")));
}

#[test]
fn the_spell_deck_running_out_loses_the_climb_at_once() {
    let deal = Deal {
        spells: [vec!["Kiln Brute"; 7], vec!["Veil of Frost"]]
            .concat()
            .iter()
            .map(|n| no(n))
            .collect(),
        lands: vec![no("Kerr Crag")],
        occupiers: vec![no("Kiln Brute"); 5],
    };
    let mut climb = Run::dealt(deal.clone());
    climb.ok(C::Flip);
    // The last card shares nothing with the red creatures and makes no set: only the pile.
    assert_eq!(climb.game.legal_moves(), vec![C::Discard]);
    assert_eq!(
        climb.ok(C::Discard),
        vec![
            E::MountainMagicDiscarded {
                card: no("Veil of Frost")
            },
            E::MountainMagicClimbFailed
        ]
    );
    assert_eq!(climb.game.view().outcome, Some(Outcome::FailedClimb));
    assert!(climb.game.legal_moves().is_empty());
    // Placed, but the mountain incomplete and the pile's card unplaceable: lost too.
    let mut last_placed = deal;
    last_placed.spells[7] = no("Kiln Brute");
    let mut climb = Run::dealt(last_placed);
    climb.ok(C::Flip);
    let events = climb.ok(C::Place { row: 1, pos: 0 });
    assert_eq!(events.last(), Some(&E::MountainMagicClimbFailed));
}

#[test]
fn the_path_becomes_the_forces_and_the_occupiers_are_revealed() {
    let mut climb = Run::dealt(edge_deal(REDS, &["Kerr Crag"; 4], ["Veil of Frost"; 5]));
    for row in 1..7u8 {
        for pos in 0..7 - row {
            climb.ok(C::Flip);
            climb.ok(C::Place { row, pos });
        }
    }
    climb.refused(
        C::Path {
            path: vec![0, 2, 2, 2, 2, 2, 2],
        },
        MountainError::BadPath,
    );
    climb.refused(C::Flip, MountainError::NotNow);
    let events = climb.ok(C::Path { path: vec![0; 7] });
    assert_eq!(
        events[1],
        E::MountainMagicOccupiersRevealed {
            cards: vec![no("Veil of Frost"); 5]
        }
    );
    let forces: Vec<CardNo> = climb
        .game
        .forces(Side::Player)
        .iter()
        .map(|f| f.card)
        .collect();
    assert_eq!(forces, REDS.iter().map(|n| no(n)).collect::<Vec<_>>());
    assert_eq!(climb.game.mountain_left().len(), 21);
    assert_eq!(
        events[2],
        E::MountainMagicManaDrawn {
            side: Side::Player,
            land: no("Kerr Crag")
        }
    );
}

// ---------------------------------------------------------------- the battle

fn mine(force: u8) -> ForceRef {
    ForceRef {
        side: Side::Player,
        force,
    }
}

fn theirs(force: u8) -> ForceRef {
    ForceRef {
        side: Side::Opponent,
        force,
    }
}

fn red(force: u8) -> C {
    C::Mana {
        place: Some(ManaPlace {
            force,
            ability: false,
            colour: Colour::Red,
        }),
    }
}

#[test]
fn a_card_is_powered_when_its_coloured_requirement_is_met_one_land_a_turn() {
    // Kiln Brute {2}{R}: one red mana powers it (generic is ignored).
    let mut climb = battle(REDS, &["Kerr Crag"; 6], ["Veil of Frost"; 5]);
    climb.refused(
        C::Mana {
            place: Some(ManaPlace {
                force: 0,
                ability: false,
                colour: Colour::Blue,
            }),
        },
        MountainError::BadMana,
    );
    climb.refused(C::EndTurn, MountainError::NotNow);
    climb.ok(red(0));
    assert!(climb.game.force(mine(0)).unwrap().powered);
    // One land a turn.
    climb.refused(red(1), MountainError::NotNow);
    // A powered card takes no more mana.
    climb.ok(C::EndTurn);
    assert!(
        !climb
            .game
            .mana_places(Side::Player)
            .iter()
            .any(|p| p.force == 0)
    );
}

#[test]
fn artifacts_cannot_be_powered() {
    let path = [
        "Kiln Brute",
        "Ghazban Idol",
        "Crag Goblin",
        "Spark Lash",
        "Cinderfall",
        "Wildfire Banner",
        "Shatter the Chant",
    ];
    let mut climb = battle(path, &["Kerr Crag"; 4], ["Veil of Frost"; 5]);
    assert!(
        climb
            .game
            .mana_places(Side::Player)
            .iter()
            .all(|p| p.force != 1)
    );
    climb.refused(red(1), MountainError::BadMana);
}

#[test]
fn the_opponent_powers_counterspells_then_damage_spells_then_creatures() {
    let mut climb = battle(
        REDS,
        &[
            "Dawn Meadow",
            "Kerr Crag",
            "Dawn Meadow",
            "Kerr Crag",
            "Dawn Meadow",
            "Kerr Crag",
        ],
        [
            "Kiln Brute",
            "Spark Lash",
            "Shatter the Chant",
            "Crag Goblin",
            "Cinderfall",
        ],
    );
    climb.ok(C::Mana { place: None });
    let events = climb.ok(C::EndTurn);
    assert!(events.contains(&E::MountainMagicManaPlaced {
        side: Side::Opponent,
        place: ManaPlace {
            force: 2,
            ability: false,
            colour: Colour::Red
        }
    }));
}

#[test]
fn every_rule_of_the_battle_is_exercised_by_random_play() {
    // The kinds of events random battles reach (each special rule leaves its own event).
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..60 {
        for event in random_climb(seed, true).1 {
            let json = serde_json::to_value(&event).unwrap();
            seen.insert(json["kind"].as_str().unwrap().to_owned());
        }
    }
    for kind in [
        "mountain_magic.placed",
        "mountain_magic.discarded",
        "mountain_magic.path_chosen",
        "mountain_magic.mana_placed",
        "mountain_magic.used",
        "mountain_magic.attacked",
        "mountain_magic.removed",
        "mountain_magic.ended",
    ] {
        assert!(
            seen.contains(kind),
            "random play never reached {kind}: {seen:?}"
        );
    }
}

fn mana(force: u8, colour: Colour) -> C {
    C::Mana {
        place: Some(ManaPlace {
            force,
            ability: false,
            colour,
        }),
    }
}

/// The player puts his land on the first card that can use it (the rules make him), or lets
/// it go if none can, and ends his turn: the opponent's turn is the events.
fn pass(climb: &mut Run) -> Vec<E> {
    if climb
        .game
        .view()
        .battle
        .as_ref()
        .unwrap()
        .pending_land
        .is_some()
    {
        let place = climb.game.mana_places(Side::Player).first().copied();
        climb.ok(C::Mana { place });
    }
    climb.ok(C::EndTurn)
}

fn removed(card: ForceRef, why: Removal) -> E {
    E::MountainMagicRemoved { card, why }
}

const CREATURES: [&str; 7] = [
    "Reef Skimmer",
    "Crag Goblin",
    "Kiln Brute",
    "Thicket Boar",
    "Fen Lurker",
    "Lantern Warden",
    "Shoal Strider",
];

#[test]
fn the_opponents_creature_attacks_your_strongest_creature_it_survives_never_a_powered_flyer() {
    let green = [
        "Thicket Boar",
        "Verdant Pulse",
        "Stranglevine",
        "Wild Fecundity",
        "Rootsurge",
    ];
    let lands = [
        "Tide Shoal",
        "Deepwood Glade",
        "Tide Shoal",
        "Deepwood Glade",
    ];
    // The Boar (2/2) survives only creatures of power 1: the first of them, the Skimmer (the
    // player's blue land powers the Strider, a blue landwalker the Boar may not attack).
    let mut climb = battle(CREATURES, &lands, green);
    climb.ok(mana(6, Colour::Blue));
    let events = climb.ok(C::EndTurn);
    assert!(events.contains(&E::MountainMagicAttacked {
        attackers: vec![theirs(0)],
        target: mine(0)
    }));
    assert!(events.contains(&removed(mine(0), Removal::Killed)));
    assert!(climb.game.force(theirs(0)).is_some(), "the Boar survives");
    // A powered flyer can only be attacked by flyers: the Boar takes the Goblin instead.
    let mut climb = battle(CREATURES, &lands, green);
    climb.ok(mana(0, Colour::Blue));
    let events = climb.ok(C::EndTurn);
    assert!(events.contains(&E::MountainMagicAttacked {
        attackers: vec![theirs(0)],
        target: mine(1)
    }));
    assert!(climb.game.force(mine(0)).is_some());
}

#[test]
fn powered_flyers_and_landwalkers_are_attacked_only_by_their_kind() {
    let path = [
        "Kiln Brute",
        "Ridge Raptor",
        "Ember Drake",
        "Elder Oakheart",
        "Bastion Colossus",
        "Leviathan of the Mere",
        "Gravebound Knight",
    ];
    let occupiers = [
        "Mosswalker",
        "Carrion Kite",
        "Ward of Quiet",
        "Glint Mend",
        "Sunlit Oath",
    ];
    let lands = [
        "Kerr Crag",
        "Deepwood Glade",
        "Kerr Crag",
        "Ash Fen",
        "Kerr Crag",
        "Ash Fen",
    ];
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(red(0));
    climb.ok(C::EndTurn);
    // The Mosswalker (2/3) survives none of your creatures (power 3 and more): it waits.
    assert!(climb.game.force(theirs(0)).unwrap().powered);
    climb.ok(red(1));
    climb.ok(C::EndTurn);
    assert!(climb.game.force(theirs(1)).unwrap().powered);
    // The red land must go on a card that can use it: the Drake, half powered.
    climb.refused(C::Mana { place: None }, MountainError::BadMana);
    climb.ok(mana(2, Colour::Red));
    climb.refused(
        C::Attack {
            attackers: vec![0],
            target: 0,
        },
        MountainError::BadTarget,
    );
    climb.refused(
        C::Attack {
            attackers: vec![0],
            target: 1,
        },
        MountainError::BadTarget,
    );
    climb.refused(
        C::Attack {
            attackers: vec![1],
            target: 0,
        },
        MountainError::BadTarget,
    );
    climb.refused(
        C::Attack {
            attackers: vec![0, 1],
            target: 1,
        },
        MountainError::BadTarget,
    );
    let attacks: Vec<C> = climb
        .game
        .legal_moves()
        .into_iter()
        .filter(|m| matches!(m, C::Attack { .. }))
        .collect();
    assert_eq!(
        attacks,
        vec![C::Attack {
            attackers: vec![1],
            target: 1
        }]
    );
    let events = climb.ok(C::Attack {
        attackers: vec![1],
        target: 1,
    });
    assert!(events.contains(&removed(theirs(1), Removal::Killed)));
    // The Kite's power 2 kills the Raptor (toughness 2) too.
    assert!(events.contains(&removed(mine(1), Removal::Killed)));
}

#[test]
fn creatures_attack_together_and_the_defender_kills_the_most() {
    let path = [
        "Crag Goblin",
        "Thicket Boar",
        "Kiln Brute",
        "Fen Lurker",
        "Lantern Warden",
        "Reef Skimmer",
        "Shoal Strider",
    ];
    let occupiers = [
        "Elder Oakheart",
        "Verdict of Dawn",
        "Ward of Quiet",
        "Sunlit Oath",
        "Word of Refusal",
    ];
    let lands = [
        "Kerr Crag",
        "Tide Shoal",
        "Deepwood Glade",
        "Tide Shoal",
        "Kerr Crag",
        "Tide Shoal",
    ];
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(red(0));
    climb.ok(C::EndTurn);
    climb.ok(mana(1, Colour::Green));
    climb.ok(C::EndTurn);
    climb.ok(red(2));
    // 1 + 2 + 3 against the Oakheart's toughness 5; its power 5 kills the Goblin and the
    // Boar (two), not the Brute.
    let events = climb.ok(C::Attack {
        attackers: vec![0, 1, 2],
        target: 0,
    });
    assert!(events.contains(&removed(mine(0), Removal::Killed)));
    assert!(events.contains(&removed(mine(1), Removal::Killed)));
    assert!(events.contains(&removed(theirs(0), Removal::Killed)));
    assert!(climb.game.force(mine(2)).is_some());
    assert!(
        !climb.game.force(mine(2)).unwrap().powered,
        "used: unpowered"
    );
}

#[test]
fn the_opponents_counterspells_take_your_counterspells_then_your_damage_spells() {
    let path = [
        "Kiln Brute",
        "Spark Lash",
        "Word of Refusal",
        "Glint Mend",
        "Lantern Warden",
        "Crag Goblin",
        "Thicket Boar",
    ];
    let occupiers = [
        "Cinderfall",
        "Shatter the Chant",
        "Ward of Quiet",
        "Sunlit Oath",
        "Halo of Thorns",
    ];
    let lands: Vec<&str> = ["Tide Shoal", "Kerr Crag"].repeat(5);
    let mut climb = battle(path, &lands, occupiers);
    // The counterspell is powered first (before the damage spell) and counters yours.
    let events = pass(&mut climb);
    assert!(events.contains(&E::MountainMagicManaPlaced {
        side: Side::Opponent,
        place: ManaPlace {
            force: 1,
            ability: false,
            colour: Colour::Red
        }
    }));
    assert!(events.contains(&removed(mine(2), Removal::Countered)));
    // Then the counterspell again, first in the order: no counterspell of yours left, your
    // damage spell.
    let events = pass(&mut climb);
    assert!(events.contains(&removed(mine(1), Removal::Countered)));
    // Again: nothing left to counter, it waits powered.
    pass(&mut climb);
    assert!(climb.game.force(theirs(1)).unwrap().powered);
    // Then the X damage spell: your strongest creature, X exactly enough to kill it.
    let events = pass(&mut climb);
    assert!(events.contains(&E::MountainMagicUsed {
        card: theirs(0),
        ability: false,
        target: Some(mine(0))
    }));
    assert!(events.contains(&removed(mine(0), Removal::Killed)));
}

#[test]
fn tapping_unpowers_a_powered_card_and_removes_an_unpowered_one() {
    let path = [
        "Blinding Flare",
        "Glint Mend",
        "Lantern Warden",
        "Vale Shepherd",
        "Skyward Lancer",
        "Bastion Colossus",
        "Ghazban Idol",
    ];
    let occupiers = [
        "Night's Denial",
        "Verdant Pulse",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let lands = [
        "Dawn Meadow",
        "Ash Fen",
        "Tide Shoal",
        "Tide Shoal",
        "Dawn Meadow",
        "Tide Shoal",
    ];
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(mana(0, Colour::White));
    climb.ok(C::EndTurn);
    // The opponent's counterspell has nothing to counter: it waits, powered.
    assert!(climb.game.force(theirs(0)).unwrap().powered);
    climb.ok(C::Mana { place: None });
    climb.refused(
        C::Cast {
            force: 0,
            target: Some(mine(1)),
        },
        MountainError::BadTarget,
    );
    climb.refused(
        C::Cast {
            force: 0,
            target: None,
        },
        MountainError::BadTarget,
    );
    let events = climb.ok(C::Cast {
        force: 0,
        target: Some(theirs(0)),
    });
    assert!(events.contains(&E::MountainMagicUnpowered { card: theirs(0) }));
    assert!(climb.game.force(theirs(0)).is_some());
    climb.refused(
        C::Cast {
            force: 0,
            target: Some(theirs(1)),
        },
        MountainError::BadCard,
    );
    climb.ok(C::EndTurn);
    climb.ok(mana(0, Colour::White));
    let events = climb.ok(C::Cast {
        force: 0,
        target: Some(theirs(1)),
    });
    assert!(events.contains(&removed(theirs(1), Removal::TappedAway)));
}

#[test]
fn untapping_powers_an_unpowered_card_never_a_powered_one_or_an_artifact() {
    let path = [
        "Glint Mend",
        "Lantern Warden",
        "Vale Shepherd",
        "Skyward Lancer",
        "Blinding Flare",
        "Sunlit Oath",
        "Ghazban Idol",
    ];
    let occupiers = [
        "Verdant Pulse",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let lands = ["Dawn Meadow", "Tide Shoal", "Dawn Meadow", "Tide Shoal"];
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(mana(0, Colour::White));
    climb.refused(
        C::Cast {
            force: 0,
            target: Some(mine(0)),
        },
        MountainError::BadTarget,
    );
    climb.refused(
        C::Cast {
            force: 0,
            target: Some(mine(6)),
        },
        MountainError::BadTarget,
    );
    climb.refused(
        C::Cast {
            force: 0,
            target: Some(theirs(0)),
        },
        MountainError::BadTarget,
    );
    let events = climb.ok(C::Cast {
        force: 0,
        target: Some(mine(1)),
    });
    assert!(events.contains(&E::MountainMagicUntapped { card: mine(1) }));
    assert!(climb.game.force(mine(1)).unwrap().powered);
    // A card is used once a turn, even powered again.
    climb.ok(C::EndTurn);
    climb.ok(mana(0, Colour::White));
    climb.refused(
        C::Cast {
            force: 0,
            target: Some(mine(1)),
        },
        MountainError::BadTarget,
    );
}

#[test]
fn the_players_draws_come_from_what_is_left_of_his_mountain() {
    let path = [
        "Pilgrim's Tally",
        "Lantern Warden",
        "Vale Shepherd",
        "Skyward Lancer",
        "Blinding Flare",
        "Sunlit Oath",
        "Glint Mend",
    ];
    let occupiers = [
        "Verdant Pulse",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let mut climb = battle(path, &["Dawn Meadow", "Tide Shoal"], occupiers);
    climb.ok(mana(0, Colour::White));
    let events = climb.ok(C::Cast {
        force: 0,
        target: None,
    });
    assert!(events.contains(&E::MountainMagicDrewFromMountain {
        cards: vec![Spot { row: 5, pos: 1 }, Spot { row: 4, pos: 1 }]
    }));
    assert_eq!(climb.game.forces(Side::Player).len(), 9);
    assert_eq!(climb.game.mountain_left().len(), 19);
}

#[test]
fn discards_and_the_opponents_pick_ups_come_off_the_land_deck() {
    let path = [
        "Ashen Harvest",
        "Withering Word",
        "Fen Lurker",
        "Carrion Kite",
        "Bleak Tithe",
        "Drain the Wellspring",
        "Mindwash",
    ];
    let occupiers = [
        "Dark Bargain",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let lands = [
        "Ash Fen",
        "Tide Shoal",
        "Tide Shoal",
        "Kerr Crag",
        "Kerr Crag",
        "Ash Fen",
        "Dawn Meadow",
        "Tide Shoal",
        "Deepwood Glade",
        "Kerr Crag",
        "Kerr Crag",
        "Kerr Crag",
    ];
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(mana(0, Colour::Black));
    let events = climb.ok(C::Cast {
        force: 0,
        target: None,
    });
    assert!(events.contains(&E::MountainMagicLandsDiscarded {
        side: Side::Opponent,
        lands: vec![no("Tide Shoal"), no("Tide Shoal")]
    }));
    assert_eq!(climb.game.view().lands_left, 9);
    // The discarded cards include the one the opponent would have drawn.
    let events = climb.ok(C::EndTurn);
    assert_eq!(
        events[1],
        E::MountainMagicManaDrawn {
            side: Side::Opponent,
            land: no("Kerr Crag")
        }
    );
    // The opponent's own draw effect picks up from the land deck: an extra, discarded.
    let events = pass(&mut climb);
    assert!(events.contains(&E::MountainMagicLandsDiscarded {
        side: Side::Opponent,
        lands: vec![no("Dawn Meadow")]
    }));
    // X that neither damages nor counters is three.
    climb.ok(mana(6, Colour::Blue));
    let events = climb.ok(C::Cast {
        force: 6,
        target: None,
    });
    assert!(events.contains(&E::MountainMagicLandsDiscarded {
        side: Side::Opponent,
        lands: vec![no("Deepwood Glade"), no("Kerr Crag"), no("Kerr Crag")]
    }));
}

#[test]
fn land_destruction_destroys_the_next_land_the_target_draws() {
    let path = [
        "Bleak Tithe",
        "Ashen Harvest",
        "Fen Lurker",
        "Carrion Kite",
        "Withering Word",
        "Famine Sigil",
        "Creeping Rot",
    ];
    let occupiers = [
        "Kiln Brute",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let lands = ["Ash Fen", "Kerr Crag", "Tide Shoal", "Kerr Crag"];
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(mana(0, Colour::Black));
    let events = climb.ok(C::Cast {
        force: 0,
        target: None,
    });
    assert_eq!(
        events.last(),
        Some(&E::MountainMagicLandDoomed {
            side: Side::Opponent
        })
    );
    let events = climb.ok(C::EndTurn);
    assert!(events.contains(&E::MountainMagicLandDestroyed {
        side: Side::Opponent
    }));
    assert!(
        !climb.game.force(theirs(0)).unwrap().powered,
        "the Brute got no mana"
    );
}

#[test]
fn emptying_a_mana_pool_unpowers_all_the_targets_cards() {
    let path = [
        "Hour of Stillness",
        "Lantern Warden",
        "Vale Shepherd",
        "Skyward Lancer",
        "Blinding Flare",
        "Sunlit Oath",
        "Glint Mend",
    ];
    let occupiers = [
        "Night's Denial",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let lands = ["Dawn Meadow", "Ash Fen", "Dawn Meadow", "Tide Shoal"];
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(mana(0, Colour::White));
    climb.ok(C::EndTurn);
    assert!(climb.game.force(theirs(0)).unwrap().powered);
    climb.ok(mana(0, Colour::White));
    let events = climb.ok(C::Cast {
        force: 0,
        target: None,
    });
    assert!(events.contains(&E::MountainMagicPoolEmptied {
        side: Side::Opponent
    }));
    assert!(climb.game.forces(Side::Opponent).iter().all(|f| !f.powered));
}

#[test]
fn upkeep_is_paid_on_powering_from_the_land_deck_or_the_creature_walks() {
    let path = [
        "Bastion Colossus",
        "Lantern Warden",
        "Vale Shepherd",
        "Skyward Lancer",
        "Blinding Flare",
        "Sunlit Oath",
        "Glint Mend",
    ];
    let occupiers = [
        "Verdant Pulse",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let paid = [
        "Dawn Meadow",
        "Tide Shoal",
        "Dawn Meadow",
        "Sunroot Vale",
        "Tide Shoal",
    ];
    let mut climb = battle(path, &paid, occupiers);
    climb.ok(mana(0, Colour::White));
    climb.ok(C::EndTurn);
    let events = climb.ok(mana(0, Colour::White));
    assert_eq!(
        events.last(),
        Some(&E::MountainMagicUpkeepPaid {
            card: mine(0),
            land: no("Sunroot Vale")
        })
    );
    assert!(climb.game.force(mine(0)).unwrap().powered);
    let unpaid = [
        "Dawn Meadow",
        "Tide Shoal",
        "Dawn Meadow",
        "Kerr Crag",
        "Tide Shoal",
    ];
    let mut climb = battle(path, &unpaid, occupiers);
    climb.ok(mana(0, Colour::White));
    climb.ok(C::EndTurn);
    let events = climb.ok(mana(0, Colour::White));
    assert!(events.ends_with(&[
        E::MountainMagicLandsDiscarded {
            side: Side::Player,
            lands: vec![no("Kerr Crag")]
        },
        removed(mine(0), Removal::WalkedOff)
    ]));
}

#[test]
fn activated_abilities_are_powered_apart_and_stack() {
    let path = [
        "Hollow Mage",
        "Fen Lurker",
        "Carrion Kite",
        "Gravebound Knight",
        "Crag Goblin",
        "Kiln Brute",
        "Thicket Boar",
    ];
    let occupiers = [
        "Crag Goblin",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let lands = [
        "Ash Fen",
        "Tide Shoal",
        "Ash Fen",
        "Tide Shoal",
        "Ash Fen",
        "Tide Shoal",
        "Ash Fen",
    ];
    let mut climb = battle(path, &lands, occupiers);
    let on_ability = |force| C::Mana {
        place: Some(ManaPlace {
            force,
            ability: true,
            colour: Colour::Black,
        }),
    };
    climb.ok(mana(0, Colour::Black));
    climb.ok(C::EndTurn);
    climb.ok(on_ability(0));
    climb.ok(C::EndTurn);
    climb.ok(on_ability(0));
    assert_eq!(climb.game.force(mine(0)).unwrap().uses, 1);
    let events = climb.ok(C::Activate {
        force: 0,
        target: Some(theirs(0)),
    });
    assert!(events.contains(&removed(theirs(0), Removal::Killed)));
    assert!(
        climb.game.force(mine(0)).unwrap().powered,
        "no tap in its cost"
    );
    climb.refused(
        C::Activate {
            force: 0,
            target: Some(theirs(1)),
        },
        MountainError::BadCard,
    );
}

#[test]
fn a_tapping_cost_unpowers_the_creature_and_uses_stack() {
    let path = [
        "Canopy Archer",
        "Thicket Boar",
        "Mosswalker",
        "Crag Goblin",
        "Kiln Brute",
        "Fen Lurker",
        "Lantern Warden",
    ];
    let occupiers = [
        "Crag Goblin",
        "Thicket Boar",
        "Ward of Quiet",
        "Sunlit Oath",
        "Word of Refusal",
    ];
    let lands: Vec<&str> = ["Deepwood Glade", "Tide Shoal"].repeat(4);
    let mut climb = battle(path, &lands, occupiers);
    let on_ability = C::Mana {
        place: Some(ManaPlace {
            force: 0,
            ability: true,
            colour: Colour::Green,
        }),
    };
    // Two uses stored before the creature is powered.
    climb.ok(on_ability.clone());
    climb.ok(C::EndTurn);
    climb.ok(on_ability);
    assert_eq!(climb.game.force(mine(0)).unwrap().uses, 2);
    // A use needs the creature powered.
    climb.refused(
        C::Activate {
            force: 0,
            target: Some(theirs(0)),
        },
        MountainError::BadCard,
    );
    climb.ok(C::EndTurn);
    climb.ok(mana(0, Colour::Green));
    let events = climb.ok(C::Activate {
        force: 0,
        target: Some(theirs(0)),
    });
    assert!(events.contains(&removed(theirs(0), Removal::Killed)));
    // Its cost taps it: unpowered, one use left, which waits for the next powering.
    let archer = climb.game.force(mine(0)).unwrap();
    assert_eq!((archer.powered, archer.uses), (false, 1));
    climb.refused(
        C::Activate {
            force: 0,
            target: Some(theirs(1)),
        },
        MountainError::BadCard,
    );
}

#[test]
fn counterspells_take_sorceries_instants_and_interrupts_powered_or_not() {
    let path = [
        "Unmake the Weave",
        "Mana Undertow",
        "Fraying Spell",
        "Ebbing Thought",
        "Shoal Strider",
        "Reef Skimmer",
        "Tidecaller Adept",
    ];
    let occupiers = [
        "Kiln Brute",
        "Wildfire Banner",
        "Spark Lash",
        "Cinderfall",
        "Shatter the Chant",
    ];
    let lands: Vec<&str> = ["Tide Shoal", "Dawn Meadow"].repeat(4);
    let mut climb = battle(path, &lands, occupiers);
    climb.ok(mana(1, Colour::Blue));
    for target in [0, 1] {
        climb.refused(
            C::Cast {
                force: 1,
                target: Some(theirs(target)),
            },
            MountainError::BadTarget,
        );
    }
    climb.refused(
        C::Cast {
            force: 1,
            target: Some(mine(0)),
        },
        MountainError::BadTarget,
    );
    // An X counter: X exactly enough, the unpowered instant is countered.
    let events = climb.ok(C::Cast {
        force: 1,
        target: Some(theirs(2)),
    });
    assert!(events.contains(&removed(theirs(2), Removal::Countered)));
    assert!(climb.game.force(theirs(2)).is_none());
}

// ---------------------------------------------------------------- the six endings

fn ending(climb: &Run) -> Option<Ending> {
    match climb.game.view().outcome {
        Some(Outcome::Battle { ending }) => Some(ending),
        _ => None,
    }
}

const RED_SPELLS: [&str; 7] = [
    "Spark Lash",
    "Cinderfall",
    "Wildfire Banner",
    "Shatter the Chant",
    "Flash Arc",
    "Scorching Ruin",
    "Quake the Passes",
];

const SPELLS: [&str; 5] = [
    "Verdant Pulse",
    "Stranglevine",
    "Ward of Quiet",
    "Sunlit Oath",
    "Rootsurge",
];

#[test]
fn the_last_mana_card_ends_the_battle_by_who_has_creatures() {
    let lands = ["Tide Shoal", "Tide Shoal"];
    let with_creature = [
        "Thicket Boar",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    for (path, occupiers, expected) in [
        (REDS, SPELLS, Ending::Victory),
        (REDS, with_creature, Ending::DrawBothCreatures),
        (RED_SPELLS, SPELLS, Ending::DrawNoCreatures),
        (RED_SPELLS, with_creature, Ending::Defeat),
    ] {
        let mut climb = battle(path, &lands, occupiers);
        let events = pass(&mut climb);
        assert_eq!(
            events.last(),
            Some(&E::MountainMagicEnded { ending: expected })
        );
        assert_eq!(ending(&climb), Some(expected));
        assert!(climb.game.legal_moves().is_empty());
        climb.refused(C::EndTurn, MountainError::NotNow);
    }
}

#[test]
fn destroying_every_enemy_card_is_total_victory() {
    let path = [
        "Spark Lash",
        "Flash Arc",
        "Cinderfall",
        "Spark Lash",
        "Flash Arc",
        "Cinderfall",
        "Kiln Brute",
    ];
    let lands: Vec<&str> = ["Kerr Crag", "Tide Shoal"].repeat(6);
    let mut climb = battle(path, &lands, ["Thicket Boar"; 5]);
    for k in 0..5u8 {
        climb.ok(red(k));
        climb.ok(C::Cast {
            force: k,
            target: Some(theirs(k)),
        });
        if k < 4 {
            climb.ok(C::EndTurn);
        }
    }
    assert_eq!(ending(&climb), Some(Ending::TotalVictory));
}

#[test]
fn losing_every_card_is_the_humiliating_defeat() {
    let lands: Vec<&str> = ["Tide Shoal", "Kerr Crag"].repeat(8);
    let mut climb = battle(CREATURES, &lands, ["Flash Arc"; 5]);
    for _ in 0..7 {
        if ending(&climb).is_none() {
            pass(&mut climb);
        }
    }
    assert_eq!(ending(&climb), Some(Ending::HumiliatingDefeat));
    assert!(climb.game.all_gone(Side::Player));
}

#[test]
fn a_groups_climbs_stand_by_ending_then_by_cards_left() {
    let lands = ["Tide Shoal", "Tide Shoal"];
    let mut victory = battle(REDS, &lands, SPELLS);
    assert_eq!(victory.game.standing_key(), None, "not over");
    pass(&mut victory);
    let with_creature = [
        "Thicket Boar",
        "Stranglevine",
        "Ward of Quiet",
        "Sunlit Oath",
        "Rootsurge",
    ];
    let mut draw = battle(REDS, &lands, with_creature);
    pass(&mut draw);
    let mut failed = Run::dealt(Deal {
        spells: [vec!["Kiln Brute"; 7], vec!["Veil of Frost"]]
            .concat()
            .iter()
            .map(|n| no(n))
            .collect(),
        lands: lands.iter().map(|l| no(l)).collect(),
        occupiers: vec![no("Kiln Brute"); 5],
    });
    failed.ok(C::Flip);
    failed.ok(C::Discard);
    let keys = [&victory, &draw, &failed].map(|c| c.game.standing_key().unwrap());
    use grand_melee_protocol::mountain_magic_types::ClimbEnd;
    assert_eq!(keys[0], (ClimbEnd::Victory, std::cmp::Reverse(7)));
    assert_eq!(keys[1], (ClimbEnd::DrawBothCreatures, std::cmp::Reverse(7)));
    assert_eq!(keys[2], (ClimbEnd::FailedClimb, std::cmp::Reverse(0)));
    assert!(keys[0] < keys[1] && keys[1] < keys[2]);
    // Among equal endings, more cards left stands higher.
    assert!((ClimbEnd::Victory, std::cmp::Reverse(7)) < (ClimbEnd::Victory, std::cmp::Reverse(5)));
    assert!(
        (ClimbEnd::FailedClimb, std::cmp::Reverse(28)) < (ClimbEnd::GaveUp, std::cmp::Reverse(0))
    );
}

// ---------------------------------------------------------------- random play

/// Whether `new` may go on `a` and `b`, checked apart from the rules' code: the text's rule
/// with docs/RULES.md's definitions, written again.
fn independent_fit(new: &Card, a: &Card, b: &Card) -> bool {
    fn shares(x: &Card, y: &Card) -> bool {
        let colour = x.colours().iter().any(|c| y.colours().contains(c));
        let class = x.kind.class().is_some() && x.kind.class() == y.kind.class();
        let flying = x.flying && y.flying;
        let walk = x.landwalk.is_some() && x.landwalk == y.landwalk;
        let upkeep = !x.upkeep.is_empty() && !y.upkeep.is_empty();
        let ability = x.ability.is_some() && y.ability.is_some();
        let effects = |c: &Card| -> Vec<std::mem::Discriminant<Effect>> {
            c.effect
                .iter()
                .chain(c.ability.as_ref().map(|a| &a.effect))
                .map(std::mem::discriminant)
                .collect()
        };
        let effect = effects(x).iter().any(|e| effects(y).contains(e));
        colour || class || flying || walk || upkeep || ability || effect
    }
    let art = |c: &Card| c.kind == Kind::Artifact;
    if art(new) || (art(a) && art(b)) {
        return true;
    }
    if art(a) {
        return shares(new, b);
    }
    if art(b) {
        return shares(new, a);
    }
    let mut classes = vec![new.kind.class(), a.kind.class(), b.kind.class()];
    classes.sort();
    let types = classes
        == vec![
            Some(Class::Sorcery),
            Some(Class::Enchantment),
            Some(Class::FastEffect),
        ];
    let enemies = new.colours().iter().any(|&c| {
        let enemies: Vec<Colour> = Colour::ALL
            .into_iter()
            .filter(|&e| e != c && !is_ally(c, e))
            .collect();
        (a.colours().contains(&enemies[0]) && b.colours().contains(&enemies[1]))
            || (a.colours().contains(&enemies[1]) && b.colours().contains(&enemies[0]))
    });
    (shares(new, a) && shares(new, b)) || types || enemies
}

/// Neighbours on the wheel W–U–B–R–G are allies; the other two are enemies.
fn is_ally(a: Colour, b: Colour) -> bool {
    let at = |c: Colour| Colour::ALL.iter().position(|&x| x == c).unwrap();
    let d = (at(a) + 5 - at(b)) % 5;
    d == 1 || d == 4
}

/// A message survives MessagePack with named fields (as the wire carries them) and JSON.
fn round_trip<T>(message: &T)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let bytes = rmp_serde::to_vec_named(message).unwrap();
    assert_eq!(&rmp_serde::from_slice::<T>(&bytes).unwrap(), message);
    let text = serde_json::to_string(message).unwrap();
    assert_eq!(&serde_json::from_str::<T>(&text).unwrap(), message);
}

/// Plays a random climb from the default deck of the seed's dice, random legal requests
/// (placing preferred if `greedy`) until it ends; checks at each step that every request
/// offered is accepted and that every placement is accepted exactly when it is legal by the
/// independent check. Its outcome and journal.
fn random_climb(seed: u64, greedy: bool) -> (Outcome, Vec<E>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let deck = Deck::default_from_dice(pool(), &dice(seed));
    let deal = Deal::from_dice(pool(), &deck, &dice(seed ^ 0x5eed));
    let mut game = Climb::new(deal.clone());
    let mut journal = game.begin().unwrap();
    for _ in 0..5_000 {
        if let Some(outcome) = game.view().outcome {
            let replayed = Climb::replay(Some(deal), journal.iter()).unwrap();
            assert_eq!(replayed, game);
            let mirror = Climb::replay(None, journal.iter()).unwrap();
            assert_eq!(mirror.view(), game.view());
            round_trip(game.view());
            return (outcome, journal);
        }
        let moves = game.legal_moves();
        assert!(!moves.is_empty(), "no move before the end");
        for m in &moves {
            assert!(
                game.clone().handle(m.clone()).is_ok(),
                "{m:?} offered, refused"
            );
        }
        if let Some(new) = game.card_to_place() {
            for row in 0..8u8 {
                for pos in 0..8u8 {
                    let legal = (1..7).contains(&row)
                        && pos < 7 - row
                        && game.at(row, pos).is_none()
                        && match (game.at(row - 1, pos), game.at(row - 1, pos + 1)) {
                            (Some(a), Some(b)) => independent_fit(
                                pool().card(new).unwrap(),
                                pool().card(a).unwrap(),
                                pool().card(b).unwrap(),
                            ),
                            _ => false,
                        };
                    let accepted = game.clone().handle(C::Place { row, pos }).is_ok();
                    assert_eq!(accepted, legal, "place at ({row}, {pos})");
                }
            }
        }
        let garbage = [
            C::Place {
                row: rng.random_range(0..9),
                pos: rng.random_range(0..9),
            },
            C::Path {
                path: (0..rng.random_range(0..9))
                    .map(|_| rng.random_range(0..8))
                    .collect(),
            },
            C::Attack {
                attackers: (0..rng.random_range(0..4))
                    .map(|_| rng.random_range(0..9))
                    .collect(),
                target: rng.random_range(0..7),
            },
            C::Cast {
                force: rng.random_range(0..9),
                target: Some(ForceRef {
                    side: if rng.random_bool(0.5) {
                        Side::Player
                    } else {
                        Side::Opponent
                    },
                    force: rng.random_range(0..9),
                }),
            },
            C::Activate {
                force: rng.random_range(0..9),
                target: None,
            },
        ];
        for command in garbage {
            let mut copy = game.clone();
            if copy.handle(command.clone()).is_err() {
                assert_eq!(copy, game, "{command:?} was refused but changed something");
            } else {
                assert!(
                    moves.contains(&command),
                    "{command:?} accepted but not offered"
                );
            }
        }
        let places: Vec<&C> = moves
            .iter()
            .filter(|m| {
                matches!(
                    m,
                    C::Place { .. } | C::Attack { .. } | C::Cast { .. } | C::Activate { .. }
                )
            })
            .collect();
        let mana: Vec<&C> = moves
            .iter()
            .filter(|m| matches!(m, C::Mana { place: Some(_) }))
            .collect();
        let pick = if greedy && !places.is_empty() && rng.random_bool(0.9) {
            (*places.choose(&mut rng).unwrap()).clone()
        } else if greedy && !mana.is_empty() && rng.random_bool(0.9) {
            (*mana.choose(&mut rng).unwrap()).clone()
        } else {
            moves.choose(&mut rng).unwrap().clone()
        };
        round_trip(&pick);
        let events = game.handle(pick).unwrap();
        events.iter().for_each(round_trip);
        journal.extend(events);
    }
    panic!("the climb did not end in 5000 requests");
}

#[test]
fn random_climbs_end_failed_or_in_one_of_the_six_endings() {
    let mut outcomes = std::collections::BTreeMap::new();
    for seed in 0..120 {
        let (outcome, _) = random_climb(seed, true);
        *outcomes.entry(format!("{outcome:?}")).or_insert(0) += 1;
        if let Outcome::Battle { ending } = outcome {
            assert!(Ending::ALL.contains(&ending));
        }
    }
    assert!(
        outcomes.keys().any(|k| k.starts_with("Battle")),
        "no random climb reached the battle: {outcomes:?}"
    );
    // Random play reaches failed climbs and most endings (the humiliating defeat and total
    // victory have their own tests).
    assert!(outcomes.contains_key("FailedClimb"), "{outcomes:?}");
    assert!(outcomes.len() >= 5, "{outcomes:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn random_legal_climbs_end_and_replay(seed in any::<u64>(), greedy in any::<bool>()) {
        let (outcome, journal) = random_climb(seed, greedy);
        let last = journal.last().unwrap();
        match outcome {
            Outcome::FailedClimb => prop_assert_eq!(last, &E::MountainMagicClimbFailed),
            Outcome::Battle { ending } => prop_assert_eq!(last, &E::MountainMagicEnded { ending }),
        }
    }
}

// ---------------------------------------------------------------- issue 46: what PROTOCOL.md says

#[test]
fn attackers_that_cannot_attack_are_bad_card_a_target_they_cannot_take_bad_target() {
    // Kiln Brute (0) powered; Crag Goblin (1) unpowered; Spark Lash (3) a spell.
    let mut climb = battle(REDS, &["Kerr Crag"; 6], ["Kiln Brute"; 5]);
    climb.ok(red(0));
    let attack = |attackers: Vec<u8>, target: u8| C::Attack { attackers, target };
    for attackers in [vec![1], vec![3], vec![40], vec![], vec![0, 0], vec![0, 1]] {
        climb.refused(attack(attackers, 0), MountainError::BadCard);
    }
    // Ready attackers, a target they cannot take: not there, out of range.
    climb.refused(attack(vec![0], 40), MountainError::BadTarget);
    // A card gone from the battle is no attacker either: the Brute (3/3) and the enemy's
    // Brute kill each other.
    let events = climb.ok(attack(vec![0], 0));
    assert!(events.contains(&removed(mine(0), Removal::Killed)));
    climb.refused(attack(vec![0], 1), MountainError::BadCard);
    climb.refused(attack(vec![0], 0), MountainError::BadCard);
}

#[test]
fn a_land_a_card_can_use_must_be_placed_one_none_can_use_is_let_go() {
    // A red land and red cards: it must go on one of them.
    let mut climb = battle(REDS, &["Kerr Crag"; 6], ["Veil of Frost"; 5]);
    climb.refused(C::Mana { place: None }, MountainError::BadMana);
    assert!(!climb.game.legal_moves().contains(&C::Mana { place: None }));
    climb.ok(red(0));
    // A blue land and no blue card: it is let go (the only move until then).
    let mut climb = battle(REDS, &["Tide Shoal"; 6], ["Veil of Frost"; 5]);
    assert!(climb.game.mana_places(Side::Player).is_empty());
    assert_eq!(climb.game.legal_moves(), vec![C::Mana { place: None }]);
    climb.ok(C::Mana { place: None });
}

#[test]
fn an_oversized_deck_file_is_named_by_its_real_size_and_an_array_line_is_refused() {
    let one = |count: u8, lines: usize| {
        let line = serde_json::json!({"name": "Kerr Crag", "count": count});
        serde_json::json!({ "cards": vec![line; lines] }).to_string()
    };
    assert_eq!(
        Deck::from_json(pool(), &one(1, 300)),
        Err(DeckError::Size { found: 300 })
    );
    assert_eq!(
        Deck::from_json(pool(), &one(53, 5)),
        Err(DeckError::Size { found: 265 })
    );
    // A line of 200 in a deck file otherwise good: all its lines counted.
    let mut file = Deck { cards: hand_deck() }.to_file(pool());
    file.cards[0].count = 200;
    let text = serde_json::to_string(&file).unwrap();
    assert_eq!(
        Deck::from_json(pool(), &text),
        Err(DeckError::Size {
            found: 65 - 4 + 200
        })
    );
    let text = r#"{"cards": [["Kerr Crag", 4]]}"#;
    match Deck::from_json(pool(), text) {
        Err(DeckError::Unreadable { reason }) => {
            assert!(reason.contains("a deck line is a map"), "{reason}")
        }
        other => panic!("an array line was taken: {other:?}"),
    }
}
