//! The rules core before play: names at the door, and mulligan decisions taken by the player, by
//! the host's ruling, or by the server when the mulligan clock runs out or the decider is away
//! (docs/RULES.md §9 and §11). Random sequences check that a rejected command changes nothing and
//! that the fold of the events is the live table.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::rules::{Actor, Command, SpellRange, Stage, Table, TableConfig};
use grand_melee_protocol::{ErrorCode, Event, Expiry, KeepReason, PlayerId, Reduction, Ruling};
use proptest::prelude::*;
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn config(seats: u8, seed: u64) -> TableConfig {
    TableConfig {
        seats,
        spell_range: SpellRange::new(1).unwrap(),
        reduction: Reduction::Eager,
        seed,
        ..TableConfig::default()
    }
}

/// A table of `players` in the lobby (names `p0`, `p1`, …).
fn lobby(players: u8, seed: u64) -> Table {
    let mut table = Table::new(config(players, seed)).unwrap();
    for i in 0..players {
        let name = format!("p{i}");
        table.handle(Actor::Host, Command::join(name)).unwrap();
    }
    table
}

/// A table of `players` deciding on mulligans.
fn mulliganing(players: u8, seed: u64) -> Table {
    let mut table = lobby(players, seed);
    table.handle(Actor::Host, Command::start(None)).unwrap();
    table
}

/// Sends a command that must be refused with `expected`, and checks it changed nothing.
fn refused(table: &mut Table, actor: Actor, command: Command, expected: ErrorCode) {
    let before = table.clone();
    assert_eq!(
        table.handle(actor, command.clone()),
        Err(expected),
        "{command:?} by {actor:?}"
    );
    assert_eq!(*table, before, "the refused {command:?} changed the table");
}

fn kept(player: PlayerId, hand_size: u8, reason: KeepReason) -> Event {
    Event::Kept {
        player,
        hand_size,
        reason,
    }
}

#[test]
fn the_host_rules_keep_only_for_the_decider_and_only_during_mulligans() {
    let mut table = lobby(4, 3);
    let someone = table.lobby()[1].0;
    let keep = |player| Command::Ruling(Ruling::Keep { player });
    refused(
        &mut table,
        Actor::Host,
        keep(someone),
        ErrorCode::NotMulliganing,
    );
    table.handle(Actor::Host, Command::start(None)).unwrap();
    let decider = table.mulligan_decider().unwrap();
    let seat = table.seat_of(decider).unwrap();
    let next = table.players()[(seat + 1) % 4].id;
    refused(
        &mut table,
        Actor::Player(next),
        keep(decider),
        ErrorCode::NotHost,
    );
    refused(
        &mut table,
        Actor::Host,
        keep(next),
        ErrorCode::NotYourDecision,
    );
    refused(&mut table, Actor::Host, keep(99), ErrorCode::UnknownPlayer);
    // He has mulliganed once: the ruling keeps the hand he has.
    table
        .handle(Actor::Player(decider), Command::Mulligan)
        .unwrap();
    let events = table.handle(Actor::Host, keep(decider)).unwrap();
    assert_eq!(events, vec![kept(decider, 6, KeepReason::Ruling)]);
    assert_eq!(table.mulligan_decider(), Some(next));
    // Keeping is final, whoever decided it.
    refused(
        &mut table,
        Actor::Player(decider),
        Command::Mulligan,
        ErrorCode::NotYourDecision,
    );
    for _ in 1..4 {
        let decider = table.mulligan_decider().unwrap();
        table.handle(Actor::Host, keep(decider)).unwrap();
    }
    assert_eq!(table.stage(), Stage::Playing);
    refused(
        &mut table,
        Actor::Host,
        keep(decider),
        ErrorCode::NotMulliganing,
    );
}

#[test]
fn an_expired_decision_is_a_keep_with_its_reason_and_only_the_server_expires_one() {
    let mut table = mulliganing(3, 5);
    let first = table.mulligan_decider().unwrap();
    refused(
        &mut table,
        Actor::Player(first),
        Command::ExpireMulligan {
            player: first,
            reason: Expiry::Clock,
        },
        ErrorCode::NotHost,
    );
    let events = table
        .handle(
            Actor::Host,
            Command::ExpireMulligan {
                player: first,
                reason: Expiry::Clock,
            },
        )
        .unwrap();
    assert_eq!(events, vec![kept(first, 7, KeepReason::Clock)]);
    let second = table.mulligan_decider().unwrap();
    // An expiry for someone whose decision is not due (a late timer) is refused.
    refused(
        &mut table,
        Actor::Host,
        Command::ExpireMulligan {
            player: first,
            reason: Expiry::Absent,
        },
        ErrorCode::NotYourDecision,
    );
    let events = table
        .handle(
            Actor::Host,
            Command::ExpireMulligan {
                player: second,
                reason: Expiry::Absent,
            },
        )
        .unwrap();
    assert_eq!(events, vec![kept(second, 7, KeepReason::Absent)]);
    let third = table.mulligan_decider().unwrap();
    let events = table.handle(Actor::Player(third), Command::Keep).unwrap();
    // The last keep begins play in the same command.
    assert_eq!(events[0], kept(third, 7, KeepReason::Decided));
    assert_eq!(table.stage(), Stage::Playing);
    assert!(events.iter().any(|e| matches!(e, Event::TurnBegan { .. })));
    refused(
        &mut table,
        Actor::Host,
        Command::ExpireMulligan {
            player: third,
            reason: Expiry::Clock,
        },
        ErrorCode::NotMulliganing,
    );
}

#[test]
fn names_are_normalised_and_unsafe_reserved_taken_or_look_alike_names_are_refused() {
    let mut table = Table::new(config(8, 1)).unwrap();
    let join = |name: &str| Command::join(name);
    // Decomposed "René", with spaces around: kept composed (NFC) and trimmed.
    let events = table.handle(Actor::Host, join("  Rene\u{301} ")).unwrap();
    assert_eq!(
        events,
        vec![Event::PlayerJoined {
            player: 0,
            name: "Ren\u{e9}".into(),
            entropy: String::new(),
            deck: None,
        }]
    );
    table.handle(Actor::Host, join("Ann")).unwrap();
    for (name, rejection) in [
        ("", ErrorCode::BadName),
        ("   ", ErrorCode::BadName),
        (&"x".repeat(33) as &str, ErrorCode::BadName),
        ("Eve\u{1b}[2J", ErrorCode::BadText),
        ("Eve\u{7}", ErrorCode::BadText),
        ("Eve\u{202e}", ErrorCode::BadText),
        ("E\u{200b}ve", ErrorCode::BadText),
        ("Eve\u{2028}x", ErrorCode::BadText),
        ("Eve\u{a0}x", ErrorCode::BadText),
        ("host", ErrorCode::ReservedName),
        ("Judge", ErrorCode::ReservedName),
        ("SPECTATOR", ErrorCode::ReservedName),
        ("h\u{43e}st", ErrorCode::ReservedName),
        ("ANN", ErrorCode::NameTaken),
        ("ren\u{e9}", ErrorCode::NameTaken),
        ("\u{410}nn", ErrorCode::ConfusableName),
    ] {
        refused(&mut table, Actor::Host, join(name), rejection);
    }
    // Look-alikes by the confusables skeleton, not by a hand-made table.
    table.handle(Actor::Host, join("Bill")).unwrap();
    refused(
        &mut table,
        Actor::Host,
        join("BiII"),
        ErrorCode::ConfusableName,
    );
    table.handle(Actor::Host, join("modern")).unwrap();
    refused(
        &mut table,
        Actor::Host,
        join("rnodern"),
        ErrorCode::ConfusableName,
    );
    assert_eq!(table.lobby().len(), 4);
}

/// One random pre-play sequence: joins (some refused), a start, and mulligan decisions by every
/// means, from right and wrong actors.
fn random_mulligans(players: u8, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let config = config(players, seed);
    let mut table = Table::new(config.clone()).unwrap();
    let mut events: Vec<Event> = Vec::new();
    let send = |table: &mut Table, events: &mut Vec<Event>, actor, command: Command| {
        let before = table.clone();
        match table.handle(actor, command.clone()) {
            Ok(out) => {
                for event in &out {
                    if let Event::Kept { player, .. } = event {
                        assert_eq!(
                            before.mulligan_decider(),
                            Some(*player),
                            "only the decider keeps"
                        );
                    }
                }
                events.extend(out);
            }
            Err(rejection) => assert_eq!(
                *table, before,
                "{command:?} by {actor:?} was refused ({rejection}) but changed the table"
            ),
        }
        let replayed = Table::replay(config.clone(), &*events).unwrap();
        assert_eq!(replayed, *table, "the fold of the events is the live table");
    };
    let names = ["Ann", "ann", "Ben", "B\u{435}n", "host", "Cal", "C\u{0}al"];
    let mut i = 0;
    while table.lobby().len() < usize::from(players) {
        let name = if rng.random_bool(0.3) {
            (*names.choose(&mut rng).unwrap()).to_owned()
        } else {
            i += 1;
            format!("player {i}")
        };
        send(&mut table, &mut events, Actor::Host, Command::join(name));
    }
    send(&mut table, &mut events, Actor::Host, Command::start(None));
    let ids: Vec<PlayerId> = table.players().iter().map(|p| p.id).collect();
    let first = table.seat_of(table.first_player().unwrap()).unwrap();
    let mut keeps = 0;
    let mut steps = 0;
    while let Stage::Mulligan { .. } = table.stage() {
        steps += 1;
        assert!(steps < 10_000, "the mulligans never ended");
        let decider = table.mulligan_decider().unwrap();
        assert_eq!(
            table.seat_of(decider).unwrap(),
            (first + keeps) % ids.len(),
            "decisions go round to the left from the first player"
        );
        let anyone = *ids.choose(&mut rng).unwrap();
        let target = if rng.random_bool(0.7) {
            decider
        } else {
            anyone
        };
        let actor = if rng.random_bool(0.5) {
            Actor::Host
        } else if rng.random_bool(0.8) {
            Actor::Player(decider)
        } else {
            Actor::Player(anyone)
        };
        let reason = if rng.random_bool(0.5) {
            Expiry::Clock
        } else {
            Expiry::Absent
        };
        let command = match rng.random_range(0..8) {
            0..=2 => Command::Mulligan,
            3 => Command::Keep,
            4 => Command::Ruling(Ruling::Keep { player: target }),
            5 => Command::ExpireMulligan {
                player: target,
                reason,
            },
            6 => Command::Ruling(Ruling::Eliminate {
                players: vec![target],
            }),
            _ => Command::join("late"),
        };
        let before = table.mulligan_decider();
        send(&mut table, &mut events, actor, command);
        if table.mulligan_decider() != before {
            keeps += 1;
        }
    }
    assert_eq!(table.stage(), Stage::Playing);
    assert_eq!(keeps, ids.len(), "everyone kept exactly once");
    assert_eq!(
        table.living(),
        ids.len(),
        "nobody is eliminated before play"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_mulligans_by_every_means_keep_the_invariants(
        players in 2u8..=12,
        seed in any::<u64>(),
    ) {
        random_mulligans(players, seed);
    }
}
