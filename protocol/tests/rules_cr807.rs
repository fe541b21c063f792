//! The official variant, Comprehensive Rules 807 (`rules: "cr807"`), rule by rule: one named
//! test per subrule, with the rule's own example where it has one. `docs/RULES.md` §13 has the
//! rules' wording and these examples in words. Seats are counted from the first player: `p[k]`
//! is the player k seats to his left.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::rules::{
    Actor, Command, ConfigError, SpellRange, Table, TableConfig, TurnState,
};
use grand_melee_protocol::{
    ErrorCode, Event, Phase, PlayerId, RuleSet, Ruling, TurnEndReason, TurnRemovalReason,
};

fn config(players: usize) -> TableConfig {
    TableConfig {
        seats: u8::try_from(players).unwrap(),
        spell_range: SpellRange::new(1).unwrap(),
        rule_set: RuleSet::Cr807,
        ..TableConfig::seeded(807)
    }
}

mod common;
use common::ok;

/// A started `cr807` table of `players`, every hand kept, and its players by seats to the left
/// of the first player.
fn game(players: usize) -> (Table, Vec<PlayerId>) {
    common::game(config(players), players)
}

fn end(table: &mut Table, player: PlayerId) -> Vec<Event> {
    ok(table, Actor::Player(player), Command::EndTurn)
}

fn concede(table: &mut Table, player: PlayerId) -> Vec<Event> {
    ok(table, Actor::Player(player), Command::Concede)
}

fn rule(table: &mut Table, ruling: Ruling) -> Vec<Event> {
    ok(table, Actor::Host, Command::Ruling(ruling))
}

fn state(table: &Table, player: PlayerId) -> Option<TurnState> {
    table.turn_of(player).map(|t| t.state)
}

fn running(table: &Table, player: PlayerId) -> bool {
    matches!(state(table, player), Some(TurnState::Running(_)))
}

fn waiting(table: &Table, player: PlayerId) -> bool {
    state(table, player) == Some(TurnState::Waiting)
}

fn designations(table: &Table) -> u32 {
    table.turns().iter().map(|t| t.designations).sum()
}

#[test]
fn cr807_2a_the_range_of_influence_is_1() {
    let mut config = config(16);
    config.spell_range = SpellRange::new(2).unwrap();
    assert_eq!(config.validate(), Err(ConfigError::Cr807Range(2)));
    assert_eq!(ConfigError::Cr807Range(2).field(), "spell_range");
    let (table, p) = game(16);
    // p[1] is within range of p[0] and p[2], nobody else.
    assert_eq!(table.sphere(p[1]), vec![p[0], p[1], p[2]]);
    let mut targets = table.damage_targets(p[0]);
    targets.sort_unstable();
    let mut near = vec![p[15], p[0], p[1]];
    near.sort_unstable();
    assert_eq!(targets, near);
}

#[test]
fn cr807_2b_attack_left_only_the_opponent_one_seat_to_the_left() {
    let (mut table, p) = game(16);
    ok(
        &mut table,
        Actor::Player(p[0]),
        Command::SetPhase {
            phase: Phase::Combat,
        },
    );
    assert_eq!(table.attack_targets(p[0]), vec![p[1]]);
    // p[15] sits on his right, within range: still not his to attack.
    assert_eq!(
        table.handle(
            Actor::Player(p[0]),
            Command::Attack {
                target: p[15],
                damage: 1,
                poison: 0
            }
        ),
        Err(ErrorCode::NotAttackLeft)
    );
    ok(
        &mut table,
        Actor::Player(p[0]),
        Command::Attack {
            target: p[1],
            damage: 2,
            poison: 0,
        },
    );
    assert_eq!(table.player(p[1]).unwrap().life, 18);
}

#[test]
fn cr807_3_players_are_seated_at_random() {
    // The seating is a shuffle of the join order by the table's dice: different secrets give
    // different seatings.
    let seating = |seed: u64| {
        let names = (0..16).map(|i| format!("P{i}"));
        let config = TableConfig {
            secret: grand_melee_protocol::dice::DiceSecret::from_seed(seed),
            ..config(16)
        };
        let (table, _) = Table::quick_start(config, names, None).unwrap();
        table.players().iter().map(|p| p.id).collect::<Vec<_>>()
    };
    assert_ne!(seating(1), seating(2));
    assert_ne!(seating(1), (0..16).collect::<Vec<_>>());
}

#[test]
fn cr807_4a_one_turn_marker_for_each_full_four_players() {
    // "A Grand Melee game with sixteen players has four turn markers. A game with fifteen
    // players has three turn markers."
    assert_eq!(game(16).0.turns().len(), 4);
    assert_eq!(game(15).0.turns().len(), 3);
    // Fewer than four players still play with one marker (our reading: a game needs a turn).
    assert_eq!(game(7).0.turns().len(), 1);
    assert_eq!(game(3).0.turns().len(), 1);
}

#[test]
fn cr807_4b_markers_go_to_the_starting_player_and_every_fourth_seat_and_all_begin() {
    let (table, p) = game(16);
    for (k, turn) in table.turns().iter().enumerate() {
        // Marker number k+1 is turn k.
        assert_eq!(usize::from(turn.id), k);
        assert_eq!(table.players()[turn.seat].id, p[4 * k]);
        assert!(matches!(turn.state, TurnState::Running(_)));
    }
}

#[test]
fn cr807_4c_the_marker_passes_left_also_when_its_holder_leaves() {
    // Nineteen players: four markers (p0, p4, p8, p12), and three may leave before a marker
    // must go (807.4e).
    let (mut table, p) = game(19);
    let events = end(&mut table, p[0]);
    assert!(events.contains(&Event::TurnPassed {
        turn: 0,
        from: p[0],
        to: p[1]
    }));
    // p4 leaves during his turn: the turn ends, then the player to his left receives it.
    let events = concede(&mut table, p[4]);
    let ended = events
        .iter()
        .position(|e| matches!(e, Event::TurnEnded { player, reason: TurnEndReason::Eliminated, .. } if *player == p[4]))
        .unwrap();
    let passed = events
        .iter()
        .position(|e| {
            *e == Event::TurnPassed {
                turn: 1,
                from: p[4],
                to: p[5],
            }
        })
        .unwrap();
    assert!(ended < passed);
    // p1 holds a marker he has not begun (p5 is within his three seats to the left now that
    // p4 is gone): he leaves, and p2 receives it at once.
    assert!(waiting(&table, p[1]));
    let events = concede(&mut table, p[1]);
    assert!(events.contains(&Event::TurnPassed {
        turn: 0,
        from: p[1],
        to: p[2]
    }));
    assert!(!events.iter().any(|e| matches!(e, Event::TurnEnded { .. })));
}

#[test]
fn cr807_4d_a_player_waits_while_a_marker_is_in_the_three_seats_to_his_left() {
    let (mut table, p) = game(19);
    end(&mut table, p[0]);
    // p4, three seats to p1's left, holds a marker: p1 waits.
    assert!(waiting(&table, p[1]));
    // p4 passes his marker to p5, four seats to p1's left: p1 begins.
    let events = end(&mut table, p[4]);
    assert!(events.contains(&Event::TurnBegan {
        turn: 0,
        player: p[1]
    }));
    // p5 waits in turn for p8.
    assert!(waiting(&table, p[5]));
}

#[test]
fn cr807_4e_the_marker_to_the_departed_players_right_is_designated() {
    // Twelve players, markers at p0, p4, p8. p2 leaves: eleven players need two markers, and
    // the marker immediately to p2's right (p0's, which he is taking) is designated.
    let (mut table, p) = game(12);
    let events = concede(&mut table, p[2]);
    assert!(events.contains(&Event::TurnMarkedForRemoval { turn: 0 }));
    assert_eq!(table.turn_of(p[0]).unwrap().designations, 1);
    // Two leave at once (p6 and p10): of the markers to their right (p4's, number 2, and
    // p8's, number 3), the lower number is designated.
    let (mut table, p) = game(12);
    let events = rule(
        &mut table,
        Ruling::Eliminate {
            players: vec![p[10], p[6]],
        },
    );
    let designated: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::TurnMarkedForRemoval { turn } => Some(*turn),
            _ => None,
        })
        .collect();
    assert_eq!(designated, vec![1]);
}

#[test]
fn cr807_4f_designated_markers_are_disregarded_when_counting() {
    let (mut table, p) = game(12);
    concede(&mut table, p[2]);
    assert_eq!(designations(&table), 1);
    // Ten, nine and eight players still need two: disregarding the designated marker, there
    // are two.
    for k in [3, 5, 6] {
        concede(&mut table, p[k]);
        assert_eq!(designations(&table), 1);
    }
    // Seven players need one: another designation.
    concede(&mut table, p[7]);
    assert_eq!(designations(&table), 2);
}

#[test]
fn cr807_4g_removed_at_the_end_of_the_turn_or_at_once_and_extra_designations_pass_right() {
    // p0's marker designated twice (p2, then p3 leaving with p9, p10 and p1 gone between).
    let (mut table, p) = game(12);
    for k in [2, 9, 10, 1, 3] {
        concede(&mut table, p[k]);
    }
    assert_eq!(table.turn_of(p[0]).unwrap().designations, 2);
    // He is taking his turn: the marker is removed when it ends, not passed, and the second
    // designation goes to the marker on its right: p8's.
    let events = end(&mut table, p[0]);
    assert!(events.contains(&Event::TurnRemoved {
        turn: 0,
        player: p[0],
        reason: TurnRemovalReason::Reduced
    }));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::TurnPassed { turn: 0, .. }))
    );
    assert_eq!(table.turn_of(p[8]).unwrap().designations, 1);
    assert_eq!(table.turn_of(p[4]).unwrap().designations, 0);
    // A designated marker whose holder is not taking a turn goes at once.
    let (mut table, p) = game(12);
    end(&mut table, p[0]);
    assert!(waiting(&table, p[1]));
    let events = concede(&mut table, p[3]);
    assert!(events.contains(&Event::TurnRemoved {
        turn: 0,
        player: p[1],
        reason: TurnRemovalReason::Reduced
    }));
    assert_eq!(table.turns().len(), 2);
}

#[test]
fn cr807_4h_neighbours_of_a_departed_seat_meet_only_when_the_next_turn_begins() {
    let (mut table, p) = game(19);
    concede(&mut table, p[5]);
    // p4 and p6 are still two positions apart: out of each other's range.
    assert_eq!(
        table.handle(
            Actor::Player(p[4]),
            Command::DealDamage {
                target: p[6],
                amount: 1
            }
        ),
        Err(ErrorCode::OutOfRange)
    );
    ok(
        &mut table,
        Actor::Player(p[4]),
        Command::SetPhase {
            phase: Phase::Combat,
        },
    );
    assert!(table.attack_targets(p[4]).is_empty());
    // p12 passes to p13, who begins: the departed seat goes as that turn begins.
    let events = end(&mut table, p[12]);
    let removed = events
        .iter()
        .position(|e| {
            *e == Event::PositionsRemoved {
                players: vec![p[5]],
            }
        })
        .unwrap();
    let began = events
        .iter()
        .position(|e| {
            *e == Event::TurnBegan {
                turn: 3,
                player: p[13],
            }
        })
        .unwrap();
    assert!(removed < began);
    assert_eq!(table.attack_targets(p[4]), vec![p[6]]);
}

#[test]
fn cr807_4i_an_extra_turn_keeps_the_marker_waits_or_passes() {
    // Nobody within three seats either side of p12: he keeps the marker and begins again.
    let (mut table, p) = game(19);
    let events = ok(&mut table, Actor::Player(p[12]), Command::ExtraTurn);
    assert_eq!(
        events,
        vec![Event::ExtraTurnGranted {
            player: p[12],
            before_next: false
        }]
    );
    let events = end(&mut table, p[12]);
    assert!(events.contains(&Event::TurnKept {
        turn: 3,
        player: p[12]
    }));
    assert!(events.contains(&Event::TurnBegan {
        turn: 3,
        player: p[12]
    }));
    assert!(running(&table, p[12]));

    // A marker within three seats on his right (p1's, waiting behind p4): he passes the
    // marker and takes the extra turn just before his next turn.
    let (mut table, p) = game(19);
    end(&mut table, p[0]);
    ok(&mut table, Actor::Player(p[4]), Command::ExtraTurn);
    let events = end(&mut table, p[4]);
    assert!(events.contains(&Event::ExtraTurnDeferred { player: p[4] }));
    assert!(events.contains(&Event::TurnPassed {
        turn: 1,
        from: p[4],
        to: p[5]
    }));
    assert_eq!(table.player(p[4]).unwrap().extra_next, 1);

    // A marker within three seats on his left only (p12's, once p9 and p10 are gone): he
    // keeps the marker and waits as 807.4d says, then takes the extra turn.
    let (mut table, p) = game(19);
    rule(
        &mut table,
        Ruling::Eliminate {
            players: vec![p[9], p[10]],
        },
    );
    ok(&mut table, Actor::Player(p[8]), Command::ExtraTurn);
    let events = end(&mut table, p[8]);
    assert!(events.contains(&Event::TurnKept {
        turn: 2,
        player: p[8]
    }));
    assert!(waiting(&table, p[8]));
    end(&mut table, p[12]);
    assert!(waiting(&table, p[8]), "p13 is now within his three seats");
    let events = end(&mut table, p[13]);
    assert!(events.contains(&Event::TurnBegan {
        turn: 2,
        player: p[8]
    }));
}

#[test]
fn cr807_4j_a_player_without_a_marker_takes_the_extra_turn_just_before_his_next_turn() {
    let (mut table, p) = game(19);
    let events = rule(&mut table, Ruling::ExtraTurn { player: p[13] });
    assert_eq!(
        events,
        vec![Event::ExtraTurnGranted {
            player: p[13],
            before_next: true
        }]
    );
    // The marker reaches him: the extra turn first…
    let events = end(&mut table, p[12]);
    assert!(events.contains(&Event::TurnBegan {
        turn: 3,
        player: p[13]
    }));
    // …then he keeps the marker for his normal turn…
    let events = end(&mut table, p[13]);
    assert!(events.contains(&Event::TurnKept {
        turn: 3,
        player: p[13]
    }));
    assert!(events.contains(&Event::TurnBegan {
        turn: 3,
        player: p[13]
    }));
    // …and after that it passes on.
    let events = end(&mut table, p[13]);
    assert!(events.contains(&Event::TurnPassed {
        turn: 3,
        from: p[13],
        to: p[14]
    }));
}

#[test]
fn cr807_5a_each_player_is_told_whose_stacks_he_may_act_on() {
    let (table, p) = game(16);
    let view = table.view(
        grand_melee_protocol::TableId::nil(),
        "t",
        0,
        &Default::default(),
    );
    let stacks = |q: PlayerId| view.player(q).unwrap().stacks.clone();
    // p0 and p4 are taking turns (markers 1 and 2): p1 is next to p0 only, p3 next to p4.
    assert_eq!(stacks(p[1]), vec![0]);
    assert_eq!(stacks(p[3]), vec![1]);
    assert_eq!(stacks(p[2]), Vec::<u8>::new());
    assert_eq!(stacks(p[0]), vec![0]);
}
