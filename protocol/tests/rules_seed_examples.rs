//! The examples of `shared/seeds/grand-melee.txt`, played through the rules core.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::rules::{
    Actor, Command, SpellRange, Stage, Table, TableConfig, TurnState,
};
use grand_melee_protocol::{
    EliminationCause, ErrorCode, Event, Phase, PlayerId, Reduction, Ruling, TurnRemovalReason,
};

fn config(players: usize, range: u8, reduction: Reduction) -> TableConfig {
    TableConfig {
        seats: u8::try_from(players).unwrap(),
        spell_range: SpellRange::new(range).unwrap(),
        reduction,
        seed: 7,
        ..TableConfig::default()
    }
}

fn names(players: usize) -> Vec<String> {
    (0..players).map(|i| format!("player {i}")).collect()
}

/// A started table with `players` seated; seat 0 is the first player.
fn started(players: usize, range: u8, reduction: Reduction) -> Table {
    let cfg = config(players, range, reduction);
    let (probe, _) = Table::quick_start(cfg.clone(), names(players), None).unwrap();
    // Make seat 0 the first player so seat numbers in the tests read like the seed.
    let seat0 = probe.players()[0].id;
    Table::quick_start(cfg, names(players), Some(seat0))
        .unwrap()
        .0
}

fn id(table: &Table, seat: usize) -> PlayerId {
    table.players()[seat].id
}

fn running_seats(table: &Table) -> Vec<usize> {
    table
        .turns()
        .iter()
        .filter(|t| matches!(t.state, TurnState::Running(_)))
        .map(|t| t.seat)
        .collect()
}

fn eliminate(table: &mut Table, seat: usize) -> Vec<Event> {
    let player = id(table, seat);
    table
        .handle(
            Actor::Host,
            Command::Ruling(Ruling::Eliminate {
                players: vec![player],
            }),
        )
        .unwrap()
}

fn end_turn(table: &mut Table, seat: usize) -> Vec<Event> {
    let player = id(table, seat);
    table
        .handle(Actor::Player(player), Command::EndTurn)
        .unwrap()
}

fn reduces(events: &[Event]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            Event::TurnMarkedForRemoval { .. }
                | Event::TurnRemoved {
                    reason: TurnRemovalReason::Reduced,
                    ..
                }
        )
    })
}

#[test]
fn starting_turns_follow_the_seed_chart_for_every_table_size() {
    // "Number of starting turns" chart for a spell range of two.
    let chart = |n: usize| match n {
        36..=40 => 6,
        30..=35 => 5,
        24..=29 => 4,
        18..=23 => 3,
        12..=17 => 2,
        _ => 1,
    };
    for n in 2..=40 {
        let table = started(n, 2, Reduction::Eager);
        assert_eq!(table.turns().len(), chart(n), "{n} players");
        // Turns are spaced out evenly and all of them begin at once.
        let t = chart(n);
        let seats: Vec<usize> = table.turns().iter().map(|t| t.seat).collect();
        let expected: Vec<usize> = (0..t).map(|k| k * n / t).collect();
        assert_eq!(seats, expected, "{n} players");
        assert_eq!(running_seats(&table).len(), t, "{n} players");
    }
}

#[test]
fn twenty_eight_players_start_with_four_turns() {
    // "1 + 5 players within spell range = 6, and 28 players ÷ 6 = 4.66, rounded down = 4"
    let table = started(28, 2, Reduction::Eager);
    assert_eq!(table.turns().len(), 4);
    assert_eq!(running_seats(&table), vec![0, 7, 14, 21]);
}

/// Eliminates players far from every turn, one at a time, and returns how many were left when
/// the first reduction happened.
fn living_at_first_reduction(reduction: Reduction) -> usize {
    let mut table = started(28, 2, reduction);
    // Seats 3-4, 10-11, 17-18, 24-25 lie halfway between the starting turns; then further out.
    let order = [
        3, 10, 17, 24, 4, 11, 18, 25, 5, 12, 19, 26, 2, 9, 16, 23, 1, 8, 15, 22,
    ];
    for seat in order {
        let events = eliminate(&mut table, seat);
        if reduces(&events) {
            return table.living();
        }
    }
    panic!("no reduction happened");
}

#[test]
fn twenty_eight_players_forced_reduction_happens_at_nineteen_left() {
    // "you'll have to move from four simultaneous turns to three when there are nineteen
    // players left in the game (4 turns x 5 players within spell range > 19 players)"
    assert_eq!(living_at_first_reduction(Reduction::Forced), 19);
}

#[test]
fn twenty_eight_players_eager_reduction_happens_at_twenty_three_left() {
    // "you'd be better off eliminating a turn when there are twenty-three players left"
    assert_eq!(living_at_first_reduction(Reduction::Eager), 23);
}

#[test]
fn twenty_four_players_the_turn_in_range_of_the_eliminated_player_disappears() {
    // "In a game with twenty-four players and four simultaneous turns, the next person to be
    // eliminated will reduce the turns to three. The turn in that player's spell range will
    // disappear after the player currently using it completes his or her turn."
    let mut table = started(24, 2, Reduction::Eager);
    assert_eq!(running_seats(&table), vec![0, 6, 12, 18]);
    // Seat 8 is two to the left of the running turn at seat 6.
    let events = eliminate(&mut table, 8);
    let marked = events.iter().find_map(|e| match e {
        Event::TurnMarkedForRemoval { turn } => Some(*turn),
        _ => None,
    });
    let turn6 = table.turn_of(id(&table, 6)).unwrap().id;
    assert_eq!(marked, Some(turn6));
    assert_eq!(table.turns().len(), 4, "the turn is still being used");
    // The player at seat 6 completes his turn: it is removed instead of being passed.
    let events = end_turn(&mut table, 6);
    assert!(events.contains(&Event::TurnRemoved {
        turn: turn6,
        player: id(&table, 6),
        reason: TurnRemovalReason::Reduced,
    }));
    assert!(
        !events.iter().any(|e| matches!(e, Event::TurnPassed { .. })),
        "the turn is not passed on"
    );
    assert_eq!(table.turns().len(), 3);
    assert!(
        table.turn_of(id(&table, 7)).is_none(),
        "seat 7 gets one less turn"
    );
    // Bob's position (seat 8) lay within range of the removed turn and goes with it.
    assert!(events.contains(&Event::PositionsRemoved {
        players: vec![id(&table, 8)]
    }));
}

#[test]
fn bob_susan_and_ted() {
    // "Bob is to your left and Susan two to your left. Ted is three to your left, which is
    // outside of your spell range. During your main phase you eliminated Bob with direct
    // damage. Now during your combat phase you may attack Susan with your creatures."
    let mut table = started(28, 2, Reduction::Eager);
    let (you, bob, susan, ted) = (id(&table, 0), id(&table, 1), id(&table, 2), id(&table, 3));
    let act = |table: &mut Table, command| table.handle(Actor::Player(you), command);

    act(
        &mut table,
        Command::SetPhase {
            phase: Phase::PrecombatMain,
        },
    )
    .unwrap();
    let events = act(
        &mut table,
        Command::DealDamage {
            target: bob,
            amount: 20,
        },
    )
    .unwrap();
    assert!(events.contains(&Event::Eliminated {
        players: vec![bob],
        cause: EliminationCause::Life
    }));
    assert_eq!(
        table.distance(you, susan),
        Some(2),
        "Bob's position still counts"
    );
    act(
        &mut table,
        Command::SetPhase {
            phase: Phase::Combat,
        },
    )
    .unwrap();
    assert_eq!(
        act(
            &mut table,
            Command::Attack {
                target: bob,
                damage: 1,
                poison: 0
            }
        ),
        Err(ErrorCode::TargetEliminated)
    );
    assert_eq!(
        act(
            &mut table,
            Command::Attack {
                target: ted,
                damage: 1,
                poison: 0
            }
        ),
        Err(ErrorCode::OutOfRange),
        "Ted is three positions away"
    );
    assert!(!table.attack_targets(you).contains(&ted));
    act(
        &mut table,
        Command::Attack {
            target: susan,
            damage: 3,
            poison: 0,
        },
    )
    .unwrap();
    assert_eq!(table.player(susan).unwrap().life, 17);

    // "If you'd also eliminated Susan with direct damage, you still couldn't attack Ted."
    let mut what_if = table.clone();
    what_if
        .handle(
            Actor::Player(you),
            Command::DealDamage {
                target: susan,
                amount: 17,
            },
        )
        .unwrap();
    assert_eq!(
        what_if.handle(
            Actor::Player(you),
            Command::Attack {
                target: ted,
                damage: 1,
                poison: 0
            }
        ),
        Err(ErrorCode::OutOfRange)
    );

    // "after eliminating Bob and attacking Susan with your creatures but not eliminating her,
    // the turn would pass to Susan. Then, Bob's position would be removed, and Susan would
    // become the player to your immediate left. Ted would then be in your spell range."
    let events = end_turn(&mut table, 0);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::TurnPassed { from, to, .. } if *from == you && *to == susan
    )));
    assert!(events.contains(&Event::PositionsRemoved { players: vec![bob] }));
    assert_eq!(table.distance(you, susan), Some(1));
    assert_eq!(table.distance(you, ted), Some(2));
    assert!(table.damage_targets(you).contains(&ted));
}

#[test]
fn paris_mulligan_goes_round_from_the_first_player_and_keeping_is_final() {
    let cfg = config(4, 2, Reduction::Eager);
    let mut table = Table::new(cfg).unwrap();
    for name in names(4) {
        table.handle(Actor::Host, Command::join(name)).unwrap();
    }
    table.handle(Actor::Host, Command::start(None)).unwrap();
    let first = table.first_player().unwrap();
    let first_seat = table.seat_of(first).unwrap();
    assert_eq!(table.mulligan_decider(), Some(first));
    // Someone else may not decide yet.
    let other = table.players()[(first_seat + 1) % 4].id;
    assert_eq!(
        table.handle(Actor::Player(other), Command::Keep),
        Err(ErrorCode::NotYourDecision)
    );
    // The first player mulligans down to zero cards, then must keep.
    for expected in (0..7).rev() {
        let events = table
            .handle(Actor::Player(first), Command::Mulligan)
            .unwrap();
        assert_eq!(
            events,
            vec![Event::Mulliganed {
                player: first,
                hand_size: expected
            }]
        );
    }
    assert_eq!(
        table.handle(Actor::Player(first), Command::Mulligan),
        Err(ErrorCode::NoCardsLeft)
    );
    table.handle(Actor::Player(first), Command::Keep).unwrap();
    // Keeping is final: the decision has passed to the left.
    assert_eq!(
        table.handle(Actor::Player(first), Command::Mulligan),
        Err(ErrorCode::NotYourDecision)
    );
    assert_eq!(table.mulligan_decider(), Some(other));
    for seat in 1..4 {
        let player = table.players()[(first_seat + seat) % 4].id;
        table.handle(Actor::Player(player), Command::Keep).unwrap();
    }
    assert_eq!(table.stage(), Stage::Playing);
    assert!(
        table
            .turns()
            .iter()
            .all(|t| t.state == TurnState::Running(Phase::Beginning))
    );
}

#[test]
fn placements_follow_elimination_order_and_award_ascension_mana_points() {
    let mut table = started(5, 1, Reduction::Eager);
    let ids: Vec<PlayerId> = (0..5).map(|s| id(&table, s)).collect();
    eliminate(&mut table, 3);
    // Two players out together share a place.
    table
        .handle(
            Actor::Host,
            Command::Ruling(Ruling::Eliminate {
                players: vec![ids[1], ids[4]],
            }),
        )
        .unwrap();
    let events = eliminate(&mut table, 2);
    assert_eq!(table.stage(), Stage::Finished);
    let standings: Vec<(PlayerId, u8, u8)> = table
        .standings()
        .iter()
        .map(|s| (s.player, s.place, s.mana_points))
        .collect();
    let mut shared = [ids[1], ids[4]];
    shared.sort();
    assert_eq!(
        standings,
        vec![
            (ids[0], 1, 4),
            (ids[2], 2, 3),
            (shared[0], 3, 1),
            (shared[1], 3, 1),
            (ids[3], 5, 0),
        ]
    );
    assert!(matches!(
        events.as_slice(),
        [.., Event::GameOver { .. }, Event::DiceRevealed { .. }]
    ));
    // Nothing more can happen.
    assert_eq!(
        table.handle(Actor::Player(ids[0]), Command::EndTurn),
        Err(ErrorCode::NotPlaying)
    );
}

#[test]
fn a_turn_passed_to_a_player_who_holds_one_is_removed() {
    // 12 players, R = 2: two turns at seats 0 and 6. Eliminate seats 1-5 together: seat 0's
    // next living player to the left is seat 6, who already holds a turn.
    let mut table = started(12, 2, Reduction::Forced);
    let out: Vec<PlayerId> = (1..=5).map(|s| id(&table, s)).collect();
    table
        .handle(
            Actor::Host,
            Command::Ruling(Ruling::Eliminate { players: out }),
        )
        .unwrap();
    // 7 living, forced limit floor(7/5) = 1: the reduction marks the running turn nearest the
    // last eliminated player (seat 5, one right of seat 6).
    let turn6 = table.turn_of(id(&table, 6)).unwrap();
    assert!(turn6.removal_mark.is_some());
    let events = end_turn(&mut table, 0);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::TurnRemoved {
            reason: TurnRemovalReason::Merged,
            ..
        }
    )));
    // The merge already brought the table to one turn: the pending reduction is cancelled.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::TurnRemovalCancelled { .. }))
    );
    assert_eq!(table.turns().len(), 1);
    assert!(table.turns()[0].removal_mark.is_none());
}

#[test]
fn a_waiting_turn_waits_for_overlapping_spheres_and_for_the_waiting_turn_ahead() {
    // 18 players, R = 2: turns at seats 0, 6 and 12.
    let mut table = started(18, 2, Reduction::Eager);
    let state = |table: &Table, seat: usize| table.turn_of(id(table, seat)).map(|t| t.state);
    for seat in [12, 6, 7, 8] {
        end_turn(&mut table, seat);
    }
    // Rule (a): seat 9 is 4 positions from the running turn at seat 13.
    assert_eq!(state(&table, 9), Some(TurnState::Waiting));
    for seat in [0, 1, 2, 3, 4] {
        end_turn(&mut table, seat);
    }
    // Rule (b): no running sphere overlaps seat 5's (seat 13 is 8 away), but the waiting turn
    // at seat 9 is among his next four living players to the left, so he may not overtake it.
    assert_eq!(running_seats(&table), vec![13]);
    assert_eq!(state(&table, 5), Some(TurnState::Waiting));
    assert_eq!(
        table.handle(Actor::Player(id(&table, 5)), Command::EndTurn),
        Err(ErrorCode::NotYourTurn)
    );
    // Seat 13 finishes: seat 9 begins, and seat 5, now 4 from a running turn, still waits.
    end_turn(&mut table, 13);
    assert_eq!(state(&table, 9), Some(TurnState::Running(Phase::Beginning)));
    assert_eq!(
        state(&table, 14),
        Some(TurnState::Running(Phase::Beginning))
    );
    assert_eq!(state(&table, 5), Some(TurnState::Waiting));
    // Seat 9 finishes: the turn ahead moves to seat 10, which waits for seat 14 (4 away); it is
    // 5 positions from seat 5 and out of his next four living players, so seat 5 begins.
    end_turn(&mut table, 9);
    assert_eq!(state(&table, 10), Some(TurnState::Waiting));
    assert_eq!(state(&table, 5), Some(TurnState::Running(Phase::Beginning)));
}
