//! Decoding never panics, whatever the bytes.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::dice::{Dice, DiceSecret};
use grand_melee_protocol::examples;
use grand_melee_protocol::game::{Game, GameKind};
use grand_melee_protocol::league::LeagueId;
use grand_melee_protocol::mountain_magic::MountainMagic;
use grand_melee_protocol::mountain_magic::day::Day;
use grand_melee_protocol::mountain_magic::pool::{Deck, Pool};
use grand_melee_protocol::mountain_magic_types::{
    Colour, DeckFile, DeckLine, ForceRef, ManaPlace, MountainMagicSettings, Side,
};
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Phase, Ruling, Settings, decode_client, decode_server, encode_client,
};
use proptest::prelude::*;

fn valid_encodings() -> Vec<Vec<u8>> {
    examples::all()
        .into_iter()
        .map(|(_, e)| e.encode())
        .collect()
}

fn phase() -> impl Strategy<Value = Phase> {
    proptest::sample::select(Phase::ALL.to_vec())
}

fn client_message() -> impl Strategy<Value = ClientMessage> {
    prop_oneof![
        (any::<u32>(), any::<u16>(), ".{0,40}").prop_map(|(id, protocol, client)| {
            ClientMessage::Hello {
                id,
                protocol,
                client,
            }
        }),
        (
            any::<u32>(),
            ".{0,40}",
            any::<u8>(),
            any::<u8>(),
            any::<i32>(),
            proptest::option::of(".{0,10}"),
            proptest::option::of(any::<u64>()),
            proptest::option::of(mountain_magic_settings().prop_map(|(settings, _)| settings)),
        )
            .prop_map(
                |(id, name, seats, spell_range, starting_life, password, seed, mountain_magic)| {
                    ClientMessage::CreateTable {
                        mountain_magic,
                        id,
                        name,
                        seats,
                        spell_range,
                        reduction: grand_melee_protocol::Reduction::Forced,
                        starting_life,
                        password,
                        seed,
                        turn_clock_secs: seats.into(),
                        absence_limit_secs: spell_range.into(),
                        mulligan_clock_secs: starting_life.unsigned_abs(),
                        max_spectators: seats.into(),
                        rules: Default::default(),
                        combat_dice: false,
                        mulligan: Default::default(),
                        game: Default::default(),
                        league: None,
                        organiser: None,
                    }
                }
            ),
        (any::<u32>(), phase()).prop_map(|(id, phase)| ClientMessage::SetPhase { id, phase }),
        (any::<u32>(), any::<u16>(), any::<u32>(), any::<u32>()).prop_map(
            |(id, target, damage, poison)| ClientMessage::Attack {
                id,
                target,
                damage,
                poison
            }
        ),
        (any::<u32>(), any::<i32>())
            .prop_map(|(id, delta)| ClientMessage::ChangeLife { id, delta }),
        (any::<u32>(), proptest::collection::vec(any::<u16>(), 0..8)).prop_map(|(id, players)| {
            ClientMessage::Ruling {
                id,
                ruling: Ruling::Eliminate { players },
            }
        }),
        (any::<u32>(), any::<u16>(), any::<i32>()).prop_map(|(id, player, life)| {
            ClientMessage::Ruling {
                id,
                ruling: Ruling::SetLife { player, life },
            }
        }),
        (any::<u32>(), ".{0,200}").prop_map(|(id, text)| ClientMessage::Chat { id, text }),
        mountain_magic_create().prop_map(|(create, _)| create),
        mountain_magic_request(),
    ]
}

/// A deck file good by the recipe (the default deck some dice draw), or one broken a way a
/// player might break it (a card short or too many, a name not in the pool, a line lost, an
/// empty file, lines of anything): the file, and whether it is good.
fn deck_file() -> impl Strategy<Value = (DeckFile, bool)> {
    let drawn = (any::<u64>(), any::<u8>()).prop_map(|(seed, entropy)| {
        let pool = Pool::builtin();
        Deck::default_from_dice(pool, &Dice::new(DiceSecret::from_seed(seed), [entropy; 32]))
            .to_file(pool)
    });
    let broken = (
        drawn.clone(),
        any::<prop::sample::Index>(),
        0u8..5,
        ".{0,24}",
    )
        .prop_map(|(mut file, at, how, name)| {
            let i = at.index(file.cards.len());
            match how {
                0 => file.cards[i].count -= 1,
                1 => file.cards[i].count += 1,
                2 => file.cards[i].name = format!("No Such Card {name}"),
                3 => {
                    file.cards.remove(i);
                }
                _ => file.cards.clear(),
            }
            (file, false)
        });
    let anything = proptest::collection::vec((".{0,24}", any::<u8>()), 0..70).prop_map(|lines| {
        let cards = lines
            .into_iter()
            .map(|(name, count)| DeckLine { name, count })
            .collect();
        (DeckFile { cards }, false)
    });
    prop_oneof![
        2 => drawn.prop_map(|file| (file, true)),
        2 => broken,
        1 => anything,
    ]
}

/// What `day` may say: a real date (`YYYY-MM-DD`), `today`, a date that does not exist, or
/// anything.
fn day() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..2_932_896).prop_map(|n| Day(n).to_string()),
        Just("today".to_owned()),
        Just("2026-02-30".to_owned()),
        Just("1969-12-31".to_owned()),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}",
        ".{0,12}",
    ]
}

/// Mountain Magic's settings: an own deck file (good or bad), today's mountain or another
/// day, a league; with whether the core takes them (a good deck alone, or a real date with no
/// deck, a league only with a day). The server resolves `today` before the core sees it.
fn mountain_magic_settings() -> impl Strategy<Value = (MountainMagicSettings, bool)> {
    (
        proptest::option::of(deck_file()),
        proptest::option::of(day()),
        proptest::option::of(any::<u128>().prop_map(LeagueId::from_u128)),
    )
        .prop_map(|(deck, day, league)| {
            let deck_good = deck.as_ref().is_none_or(|(_, good)| *good);
            let day_good = match &day {
                Some(day) => Day::parse(day).is_some() && deck.is_none(),
                None => league.is_none(),
            };
            let settings = MountainMagicSettings {
                deck: deck.map(|(file, _)| file),
                day,
                league,
            };
            (settings, deck_good && day_good)
        })
}

/// A `create_table` for a climb (mostly one seat, sometimes a league or Combat with Dice a
/// climb refuses), with whether the core takes it.
fn mountain_magic_create() -> impl Strategy<Value = (ClientMessage, bool)> {
    (
        any::<u32>(),
        ".{0,40}",
        prop_oneof![4 => Just(1u8), 1 => any::<u8>()],
        proptest::option::weighted(0.1, any::<u128>().prop_map(LeagueId::from_u128)),
        proptest::bool::weighted(0.1),
        proptest::option::weighted(0.9, mountain_magic_settings()),
    )
        .prop_map(|(id, name, seats, league, combat_dice, settings)| {
            let good = seats == 1
                && league.is_none()
                && !combat_dice
                && settings.as_ref().is_none_or(|(_, good)| *good);
            let create = ClientMessage::CreateTable {
                id,
                name,
                seats,
                spell_range: 0,
                reduction: grand_melee_protocol::Reduction::Eager,
                starting_life: 20,
                password: None,
                seed: None,
                turn_clock_secs: 0,
                absence_limit_secs: 60,
                mulligan_clock_secs: 0,
                max_spectators: 8,
                rules: Default::default(),
                combat_dice,
                mulligan: Default::default(),
                game: GameKind::MountainMagic,
                league,
                organiser: None,
                mountain_magic: settings.map(|(settings, _)| settings),
            };
            (create, good)
        })
}

fn force_ref() -> impl Strategy<Value = ForceRef> {
    (
        prop_oneof![Just(Side::Player), Just(Side::Opponent)],
        any::<u8>(),
    )
        .prop_map(|(side, force)| ForceRef { side, force })
}

/// Every `mountain_magic.*` request, its fields anything (most places out of range).
fn mountain_magic_request() -> impl Strategy<Value = ClientMessage> {
    let mana = (
        any::<u8>(),
        any::<bool>(),
        proptest::sample::select(Colour::ALL.to_vec()),
    )
        .prop_map(|(force, ability, colour)| ManaPlace {
            force,
            ability,
            colour,
        });
    prop_oneof![
        any::<u32>().prop_map(|id| ClientMessage::MountainMagicFlip { id }),
        (any::<u32>(), any::<u8>(), any::<u8>())
            .prop_map(|(id, row, pos)| ClientMessage::MountainMagicPlace { id, row, pos }),
        any::<u32>().prop_map(|id| ClientMessage::MountainMagicDiscard { id }),
        (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..10))
            .prop_map(|(id, path)| ClientMessage::MountainMagicPath { id, path }),
        (any::<u32>(), proptest::option::of(mana))
            .prop_map(|(id, place)| ClientMessage::MountainMagicMana { id, place }),
        (
            any::<u32>(),
            proptest::collection::vec(any::<u8>(), 0..6),
            any::<u8>()
        )
            .prop_map(
                |(id, attackers, target)| ClientMessage::MountainMagicAttack {
                    id,
                    attackers,
                    target
                }
            ),
        (any::<u32>(), any::<u8>(), proptest::option::of(force_ref()))
            .prop_map(|(id, force, target)| ClientMessage::MountainMagicCast { id, force, target }),
        (any::<u32>(), any::<u8>(), proptest::option::of(force_ref())).prop_map(
            |(id, force, target)| ClientMessage::MountainMagicActivate { id, force, target }
        ),
        any::<u32>().prop_map(|id| ClientMessage::MountainMagicEndTurn { id }),
        (
            any::<u32>(),
            day(),
            proptest::option::of(any::<u128>().prop_map(LeagueId::from_u128)),
            any::<u32>(),
            any::<u32>()
        )
            .prop_map(|(id, day, league, from, limit)| {
                ClientMessage::MountainMagicStandings {
                    id,
                    day,
                    league,
                    from,
                    limit,
                }
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_client(&bytes);
        let _ = decode_server(&bytes);
    }

    #[test]
    fn mutated_encodings_never_panic(
        index in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let all = valid_encodings();
        let mut bytes = index.get(&all).clone();
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => {
                    bytes.remove(i);
                }
            }
        }
        let _ = decode_client(&bytes);
        let _ = decode_server(&bytes);
    }

    #[test]
    fn truncated_encodings_are_errors(index in any::<prop::sample::Index>(), cut in any::<prop::sample::Index>()) {
        let all = valid_encodings();
        let bytes = index.get(&all);
        let cut = cut.index(bytes.len());
        prop_assert!(decode_client(&bytes[..cut]).is_err());
        prop_assert!(decode_server(&bytes[..cut]).is_err());
    }

    #[test]
    fn client_messages_round_trip(message in client_message()) {
        let bytes = encode_client(&message);
        prop_assert_eq!(decode_client(&bytes).unwrap(), message);
    }

    /// A climb's `create_table`, sent as bytes, makes a table exactly when its settings are
    /// good (a deck by the recipe, a real day without a deck, a league only with a day, one
    /// seat); anything else is `bad_settings`.
    #[test]
    fn mountain_magic_tables_are_made_exactly_from_good_settings(
        (create, good) in mountain_magic_create(),
        seed in any::<u64>(),
    ) {
        let decoded = decode_client(&encode_client(&create)).unwrap();
        prop_assert_eq!(&decoded, &create);
        let settings = Settings::requested(&decoded).unwrap();
        let made = MountainMagic::create(&settings, DiceSecret::from_seed(seed));
        if good {
            prop_assert!(made.is_ok(), "refused: {:?}", settings.mountain_magic);
        } else {
            prop_assert_eq!(made.err(), Some(ErrorCode::BadSettings));
        }
    }
}

/// The generator makes both: deck files good and bad, days real and not, settings the core
/// takes and settings it refuses, and every `mountain_magic.*` request.
#[test]
fn the_generator_reaches_every_mountain_magic_case() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut decks = [false; 2];
    let mut creates = [false; 2];
    let mut days = [false; 3];
    let mut requests = std::collections::BTreeSet::new();
    let deck_files = deck_file();
    let creations = mountain_magic_create();
    let all = client_message();
    for _ in 0..2_000 {
        let (_, good) = deck_files.new_tree(&mut runner).unwrap().current();
        decks[usize::from(good)] = true;
        let (create, good) = creations.new_tree(&mut runner).unwrap().current();
        creates[usize::from(good)] = true;
        if let ClientMessage::CreateTable {
            mountain_magic: Some(MountainMagicSettings { day: Some(day), .. }),
            ..
        } = &create
        {
            let k = match day.as_str() {
                "today" => 0,
                day if Day::parse(day).is_some() => 1,
                _ => 2,
            };
            days[k] = true;
        }
        let message = all.new_tree(&mut runner).unwrap().current();
        let kind: &'static str = (&message).into();
        if kind.starts_with("mountain_magic.") {
            requests.insert(kind);
        }
        if let ClientMessage::CreateTable {
            mountain_magic: Some(_),
            ..
        } = message
        {
            requests.insert("create_table with mountain_magic");
        }
    }
    assert_eq!(decks, [true; 2]);
    assert_eq!(creates, [true; 2]);
    assert_eq!(days, [true; 3]);
    assert_eq!(requests.len(), 11, "{requests:?}");
}
