//! The table options besides the rule set, example by example (`docs/RULES.md` §§ 12–15):
//! extra turns under the seed's rules, Combat with Dice and its verifiable dice, simultaneous
//! mulligans, and which turn a reduction removes.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::dice::{Dice, DiceSecret, entropy_digest};
use grand_melee_protocol::rules::{Actor, Command, SpellRange, Table, TableConfig, TurnState};
use grand_melee_protocol::{
    ErrorCode, Event, MulliganMode, Phase, PlayerId, RollResult, Ruling, TableId,
    TurnRemovalReason, TurnStateName,
};

fn seeded(players: usize, range: u8) -> TableConfig {
    TableConfig {
        seats: u8::try_from(players).unwrap(),
        spell_range: SpellRange::new(range).unwrap(),
        ..TableConfig::seeded(14)
    }
}

mod common;
use common::{game, ok};

// ----- Extra turns under the seed's rules ------------------------------------------------------

#[test]
fn seed_extra_turn_begins_again_at_once_when_nothing_overlaps() {
    // 28 players, R = 2: turns at p0, p7, p14, p21, 7 apart: nothing within 2R = 4 of p7.
    let (mut table, p) = game(seeded(28, 2), 28);
    ok(&mut table, Actor::Player(p[7]), Command::ExtraTurn);
    let events = ok(&mut table, Actor::Player(p[7]), Command::EndTurn);
    assert!(events.contains(&Event::TurnKept {
        turn: 1,
        player: p[7]
    }));
    assert!(events.contains(&Event::TurnBegan {
        turn: 1,
        player: p[7]
    }));
    assert_eq!(table.player(p[7]).unwrap().extra_turns, 0);
}

#[test]
fn seed_extra_turn_is_taken_before_the_next_turn_when_a_waiting_turn_is_near() {
    // 24 players, R = 2: turns at p0, p6, p12 and p18.
    let (mut table, p) = game(seeded(24, 2), 24);
    // p6 ends: his turn passes to p7, 5 from p12: begins. p7 ends: p8 is 4 from p12 → waits.
    ok(&mut table, Actor::Player(p[6]), Command::EndTurn);
    ok(&mut table, Actor::Player(p[7]), Command::EndTurn);
    assert_eq!(table.turn_of(p[8]).unwrap().state, TurnState::Waiting);
    // p12 takes an extra turn: keeping his turn would hold p8 up, so he passes it.
    ok(&mut table, Actor::Player(p[12]), Command::ExtraTurn);
    let events = ok(&mut table, Actor::Player(p[12]), Command::EndTurn);
    assert!(events.contains(&Event::ExtraTurnDeferred { player: p[12] }));
    assert!(events.contains(&Event::TurnPassed {
        turn: 2,
        from: p[12],
        to: p[13]
    }));
    assert_eq!(table.player(p[12]).unwrap().extra_next, 1);
}

#[test]
fn extra_turns_are_refused_to_players_not_taking_a_turn_and_granted_by_the_host() {
    let (mut table, p) = game(seeded(12, 2), 12);
    assert_eq!(
        table.handle(Actor::Player(p[1]), Command::ExtraTurn),
        Err(ErrorCode::NotYourTurn)
    );
    let events = ok(
        &mut table,
        Actor::Host,
        Command::Ruling(Ruling::ExtraTurn { player: p[1] }),
    );
    assert_eq!(
        events,
        vec![Event::ExtraTurnGranted {
            player: p[1],
            before_next: true
        }]
    );
    assert_eq!(
        table.handle(
            Actor::Player(p[1]),
            Command::Ruling(Ruling::ExtraTurn { player: p[1] })
        ),
        Err(ErrorCode::NotHost)
    );
}

// ----- Combat with Dice ---------------------------------------------------------------------------

#[test]
fn the_attack_table_as_the_seed_gives_it() {
    // Natural 1: critical miss, the attacker's creature takes half its power (rounded down);
    // a 3 modified by -2 to 1 is not a natural 1, only a miss.
    assert_eq!(RollResult::of(1, 6, 5), (RollResult::CriticalMiss, 0, 2));
    assert_eq!(RollResult::of(3, 1, 5), (RollResult::Miss, 0, 0));
    // Negative totals are possible: a miss.
    assert_eq!(RollResult::of(2, -3, 0), (RollResult::Miss, 0, 0));
    // The seed's gap: a total of exactly 5 is a miss (RULES.md §14).
    assert_eq!(RollResult::of(4, 5, 1), (RollResult::Miss, 0, 0));
    // 6–10: partial hit, half damage rounded down; a creature of power 1 deals 1.
    assert_eq!(RollResult::of(4, 6, 5), (RollResult::PartialHit, 2, 0));
    assert_eq!(RollResult::of(9, 10, 1), (RollResult::PartialHit, 1, 0));
    // 11 and more: hit, full damage.
    assert_eq!(RollResult::of(8, 11, 3), (RollResult::Hit, 3, 0));
    assert_eq!(RollResult::of(19, 25, 6), (RollResult::Hit, 6, 0));
    // Natural 20: critical hit, double damage from the power before the roll.
    assert_eq!(RollResult::of(20, 18, 4), (RollResult::CriticalHit, 8, 0));
}

fn dice_game() -> (Table, Vec<PlayerId>) {
    let config = TableConfig {
        combat_dice: true,
        ..seeded(12, 2)
    };
    let (mut table, p) = game(config, 12);
    ok(
        &mut table,
        Actor::Player(p[0]),
        Command::SetPhase {
            phase: Phase::Combat,
        },
    );
    (table, p)
}

#[test]
fn an_undefended_roll_changes_the_defenders_life_in_the_same_request() {
    let (mut table, p) = dice_game();
    let natural = table.game_dice().d20(0);
    let events = ok(
        &mut table,
        Actor::Player(p[0]),
        Command::AttackRoll {
            defender: p[1],
            attacker_power: 4,
            blocker_powers: vec![],
        },
    );
    let total = i64::from(natural) + 4;
    let (result, damage, self_damage) = RollResult::of(natural, total, 4);
    assert_eq!(
        events[0],
        Event::AttackRolled {
            roll: 0,
            roller: p[0],
            opponent: p[1],
            counter: false,
            power: 4,
            opposing: vec![],
            natural,
            modifier: 4,
            total,
            result,
            damage,
            self_damage,
        }
    );
    let life = table.player(p[1]).unwrap().life;
    assert_eq!(life, 20 - i32::try_from(damage).unwrap());
    if damage > 0 {
        assert_eq!(
            events[1],
            Event::Attacked {
                attacker: p[0],
                defender: p[1],
                damage,
                poison: 0
            }
        );
    }
    assert_eq!(table.rolls(), 1);
}

#[test]
fn a_resisted_roll_uses_the_blockers_average_and_opens_the_counter_strike() {
    let (mut table, p) = dice_game();
    // Nothing was blocked yet: no counter strike.
    assert_eq!(
        table.handle(
            Actor::Player(p[1]),
            Command::CounterRoll {
                attacker: p[0],
                blocker_power: 2,
                attacker_power: 3
            }
        ),
        Err(ErrorCode::NoCounterStrike)
    );
    let events = ok(
        &mut table,
        Actor::Player(p[0]),
        Command::AttackRoll {
            defender: p[1],
            attacker_power: 3,
            blocker_powers: vec![2, 3],
        },
    );
    // Average of 2 and 3, rounded down: 2; modifier 3 - 2 = 1. Creatures only: no life change.
    assert!(matches!(
        events.as_slice(),
        [Event::AttackRolled { modifier: 1, .. }]
    ));
    assert_eq!(table.player(p[1]).unwrap().life, 20);
    // The blocking player strikes back, resolved the same way (the attacker is now defender).
    let natural = table.game_dice().d20(1);
    let events = ok(
        &mut table,
        Actor::Player(p[1]),
        Command::CounterRoll {
            attacker: p[0],
            blocker_power: 2,
            attacker_power: 3,
        },
    );
    assert!(matches!(
        events.as_slice(),
        [Event::AttackRolled { roll: 1, counter: true, modifier: -1, natural: n, .. }] if *n == natural
    ));
    // Once the attacker's combat is over, no more counter strikes.
    ok(
        &mut table,
        Actor::Player(p[0]),
        Command::SetPhase {
            phase: Phase::PostcombatMain,
        },
    );
    assert_eq!(
        table.handle(
            Actor::Player(p[1]),
            Command::CounterRoll {
                attacker: p[0],
                blocker_power: 2,
                attacker_power: 3
            }
        ),
        Err(ErrorCode::NoCounterStrike)
    );
}

#[test]
fn dice_requests_are_refused_where_they_do_not_apply_and_change_nothing() {
    let (mut table, p) = game(seeded(12, 2), 12);
    ok(
        &mut table,
        Actor::Player(p[0]),
        Command::SetPhase {
            phase: Phase::Combat,
        },
    );
    let roll = Command::AttackRoll {
        defender: p[1],
        attacker_power: 1,
        blocker_powers: vec![],
    };
    let before = table.clone();
    assert_eq!(
        table.handle(Actor::Player(p[0]), roll),
        Err(ErrorCode::DiceOff)
    );
    let (mut table, p) = dice_game();
    let before_dice = table.clone();
    for (actor, command, code) in [
        (
            p[1],
            Command::AttackRoll {
                defender: p[2],
                attacker_power: 1,
                blocker_powers: vec![],
            },
            ErrorCode::NotYourTurn,
        ),
        (
            p[0],
            Command::AttackRoll {
                defender: p[5],
                attacker_power: 1,
                blocker_powers: vec![],
            },
            ErrorCode::OutOfRange,
        ),
        (
            p[0],
            Command::AttackRoll {
                defender: p[1],
                attacker_power: 1,
                blocker_powers: vec![0; 17],
            },
            ErrorCode::BadAmount,
        ),
        (
            p[0],
            Command::AttackRoll {
                defender: p[1],
                attacker_power: 1_000_001,
                blocker_powers: vec![],
            },
            ErrorCode::BadAmount,
        ),
    ] {
        assert_eq!(table.handle(Actor::Player(actor), command), Err(code));
        assert_eq!(table, before_dice);
    }
    assert_ne!(before, before_dice);
}

#[test]
fn every_random_outcome_is_recomputed_from_the_revealed_secret_and_the_players_entropy() {
    let config = TableConfig {
        combat_dice: true,
        ..seeded(6, 1)
    };
    let mut table = Table::new(config.clone()).unwrap();
    let contributions = ["kitchen table", "", "🎲 42", "x", "", "late"];
    for (i, entropy) in contributions.iter().enumerate() {
        ok(
            &mut table,
            Actor::Host,
            Command::Join {
                name: format!("P{i}"),
                entropy: (*entropy).to_owned(),
                deck: None,
            },
        );
    }
    // The commitment is there before anyone joins (the lobby) and at the start.
    let commitment = table.dice_commitment().to_owned();
    assert_eq!(commitment, config.secret.commitment());
    let events = ok(&mut table, Actor::Host, Command::start(None));
    let Event::GameStarted {
        seating,
        first_player,
        commitment: published,
        ..
    } = &events[0]
    else {
        panic!("{events:?}");
    };
    assert_eq!(*published, commitment);
    // A verifier with the secret and the contributions gets the same seating and first player.
    let dice = Dice::new(
        DiceSecret::from_hex(&config.secret.to_hex()).unwrap(),
        entropy_digest(contributions),
    );
    let mut expected: Vec<PlayerId> = (0..6).collect();
    dice.shuffle(&mut expected);
    assert_eq!(*seating, expected);
    assert_eq!(*first_player, expected[dice.first_seat(6)]);
    // One contribution more or less changes the seating: the players' entropy counts.
    let other = Dice::new(config.secret, entropy_digest(["kitchen table"; 6]));
    let mut changed: Vec<PlayerId> = (0..6).collect();
    other.shuffle(&mut changed);
    assert_ne!(changed, expected);
    // Entropy longer than 64 characters, or with control characters, is refused.
    let mut lobby = Table::new(config).unwrap();
    for bad in ["x".repeat(65), "a\u{1b}[2J".to_owned()] {
        assert_eq!(
            lobby.handle(
                Actor::Host,
                Command::Join {
                    name: "Z".into(),
                    entropy: bad,
                    deck: None,
                }
            ),
            Err(ErrorCode::BadText)
        );
    }
}

// ----- Simultaneous mulligans -----------------------------------------------------------------

#[test]
fn simultaneous_mulligans_let_everyone_decide_at_once_and_play_begins_when_all_have_kept() {
    let config = TableConfig {
        mulligan: MulliganMode::Simultaneous,
        ..seeded(6, 1)
    };
    let mut table = Table::new(config).unwrap();
    for i in 0..6 {
        ok(&mut table, Actor::Host, Command::join(format!("P{i}")));
    }
    ok(&mut table, Actor::Host, Command::start(Some(0)));
    assert_eq!(table.mulligan_decider(), None);
    assert_eq!(table.mulligan_deciders().len(), 6);
    // The last seat goes first, mulligans twice and keeps; others in any order.
    let order: Vec<PlayerId> = table.players().iter().rev().map(|p| p.id).collect();
    ok(&mut table, Actor::Player(order[0]), Command::Mulligan);
    ok(&mut table, Actor::Player(order[0]), Command::Mulligan);
    ok(&mut table, Actor::Player(order[3]), Command::Keep);
    assert_eq!(
        table.handle(Actor::Player(order[3]), Command::Mulligan),
        Err(ErrorCode::NotYourDecision),
        "a player who kept may not change his mind"
    );
    for &player in &order {
        if player != order[3] {
            ok(&mut table, Actor::Player(player), Command::Keep);
        }
    }
    assert_eq!(table.player(order[0]).unwrap().hand_size, 5);
    assert!(
        table
            .turns()
            .iter()
            .any(|t| matches!(t.state, TurnState::Running(_)))
    );
    // The host may keep for any undecided player (and nobody else) during simultaneous
    // mulligans too.
    let config = TableConfig {
        mulligan: MulliganMode::Simultaneous,
        ..seeded(4, 1)
    };
    let mut table = Table::new(config).unwrap();
    for i in 0..4 {
        ok(&mut table, Actor::Host, Command::join(format!("P{i}")));
    }
    ok(&mut table, Actor::Host, Command::start(None));
    ok(&mut table, Actor::Player(2), Command::Keep);
    assert_eq!(
        table.handle(Actor::Host, Command::Ruling(Ruling::Keep { player: 2 })),
        Err(ErrorCode::NotYourDecision)
    );
    ok(
        &mut table,
        Actor::Host,
        Command::Ruling(Ruling::Keep { player: 3 }),
    );
}

// ----- Which turn a reduction removes ---------------------------------------------------------

#[test]
fn the_eliminated_players_own_waiting_turn_is_the_one_removed() {
    // 12 players, R = 2, eager: turns at p0 and p6. Make p6's turn a waiting one (as if it
    // had just been passed to him and were blocked), then the host rules p6 out: 11 living
    // allow one turn. The nearest turn within R of p6 is his own (distance 0), waiting: it is
    // removed at once, and p0's running turn is left alone.
    let (table, p) = game(seeded(12, 2), 12);
    let mut view = table.view(TableId::nil(), "t", 0, &Default::default());
    let turn = view.turns.iter_mut().find(|t| t.player == p[6]).unwrap();
    turn.state = TurnStateName::Waiting;
    turn.phase = None;
    let mut table = Table::from_view(&view).unwrap();
    let events = ok(
        &mut table,
        Actor::Host,
        Command::Ruling(Ruling::Eliminate {
            players: vec![p[6]],
        }),
    );
    assert!(events.contains(&Event::TurnRemoved {
        turn: 1,
        player: p[6],
        reason: TurnRemovalReason::Reduced
    }));
    assert!(!events.iter().any(|e| matches!(e, Event::TurnPassed { .. })));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::TurnMarkedForRemoval { .. }))
    );
    assert_eq!(table.turns().len(), 1);
}

#[test]
fn verify_accepts_a_fair_game_and_names_the_first_outcome_that_was_tampered_with() {
    use grand_melee_protocol::dice::verify;
    let config = TableConfig {
        combat_dice: true,
        ..seeded(6, 1)
    };
    let mut table = Table::new(config).unwrap();
    let mut events = Vec::new();
    for i in 0..6 {
        let entropy = format!("client {i}");
        events.extend(ok(
            &mut table,
            Actor::Host,
            Command::Join {
                name: format!("P{i}"),
                entropy,
                deck: None,
            },
        ));
    }
    events.extend(ok(&mut table, Actor::Host, Command::start(None)));
    while let Some(&p) = table.mulligan_deciders().first() {
        events.extend(ok(&mut table, Actor::Player(p), Command::Keep));
    }
    // Roll until the game is over: every running player attacks his neighbours with dice.
    let mut guard = 0;
    while table.stage() == grand_melee_protocol::rules::Stage::Playing {
        guard += 1;
        assert!(guard < 2_000);
        let running: Vec<PlayerId> = table
            .turns()
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .map(|t| table.players()[t.seat].id)
            .collect();
        let p = running[guard % running.len()];
        if table.turn_of(p).map(|t| t.state) != Some(TurnState::Running(Phase::Combat)) {
            events.extend(ok(
                &mut table,
                Actor::Player(p),
                Command::SetPhase {
                    phase: Phase::Combat,
                },
            ));
        }
        let Some(&defender) = table.attack_targets(p).first() else {
            events.extend(ok(&mut table, Actor::Player(p), Command::EndTurn));
            continue;
        };
        let blockers = if guard % 3 == 0 { vec![1, 2] } else { vec![] };
        events.extend(ok(
            &mut table,
            Actor::Player(p),
            Command::AttackRoll {
                defender,
                attacker_power: 7,
                blocker_powers: blockers,
            },
        ));
        if guard % 4 == 0 && table.stage() == grand_melee_protocol::rules::Stage::Playing {
            events.extend(ok(&mut table, Actor::Player(p), Command::EndTurn));
        }
    }
    let numbered = |events: &[Event]| -> Vec<(u64, Event)> {
        events
            .iter()
            .cloned()
            .zip(1u64..)
            .map(|(e, n)| (n, e))
            .collect()
    };
    let fair = numbered(&events);
    let verified = verify(fair.iter().map(|(n, e)| (*n, e))).unwrap();
    assert_eq!(verified.players, 6);
    assert!(verified.first_player_drawn);
    assert!(verified.rolls > 5, "{verified:?}");
    // A roll changed after the fact is named, with its event number.
    let mut forged = fair.clone();
    let (seq, roll) = forged
        .iter_mut()
        .filter(|(_, e)| matches!(e, Event::AttackRolled { .. }))
        .nth(3)
        .map(|(n, e)| (*n, e))
        .unwrap();
    if let Event::AttackRolled { natural, .. } = roll {
        *natural = if *natural == 20 { 19 } else { *natural + 1 };
    }
    let error = verify(forged.iter().map(|(n, e)| (*n, e))).unwrap_err();
    assert_eq!(error.seq, seq);
    assert!(error.what.starts_with("roll 3: natural"), "{error}");
    // Another secret than the one committed to, or another seating, is caught too.
    let mut forged = fair.clone();
    for (_, e) in &mut forged {
        if let Event::DiceRevealed { secret } = e {
            *secret = DiceSecret::from_seed(1).to_hex();
        }
    }
    let error = verify(forged.iter().map(|(n, e)| (*n, e))).unwrap_err();
    assert!(error.what.contains("committed"), "{error}");
    let mut forged = fair;
    for (_, e) in &mut forged {
        if let Event::GameStarted { seating, .. } = e {
            seating.swap(0, 1);
        }
    }
    let error = verify(forged.iter().map(|(n, e)| (*n, e))).unwrap_err();
    assert!(error.what.contains("seating"), "{error}");
}
