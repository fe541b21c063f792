//! A client's mirror follows the table from its events, derived fields included. Every check
//! here goes through the protocol's one fold: a `Mirror` built from the view (`Table::from_view`),
//! the rules core's `Table::apply`, and the projection back to a view (`Table::view`).
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::examples;
use grand_melee_protocol::rules::Table;
use grand_melee_protocol::{
    ApplyError, EliminationCause, Event, Mirror, Phase, PlayerId, PlayerStatus, Reduction,
    Settings, StageName, Standing, TableView, TurnEndReason, TurnRemovalReason, TurnStateName,
};

/// A view followed through the one fold: each step takes the view into a fresh [`Mirror`],
/// applies the event with the core's `apply`, and projects the view back, so a refused event
/// leaves the view as it was.
trait Fold {
    fn apply(&mut self, seq: u64, event: &Event) -> Result<(), ApplyError>;
    fn apply_batch(&mut self, first_seq: u64, events: &[Event]) -> Result<(), ApplyError>;
    fn refresh_derived(&mut self);
    /// The core's sphere of `player` at the table the view shows.
    fn sphere(&self, player: PlayerId) -> Vec<PlayerId>;
    /// The core's distance between two players at the table the view shows.
    fn distance(&self, a: PlayerId, b: PlayerId) -> Option<usize>;
}

impl Fold for TableView {
    fn apply(&mut self, seq: u64, event: &Event) -> Result<(), ApplyError> {
        let mut mirror = Mirror::new(self)?;
        mirror.apply(seq, event)?;
        *self = mirror.view();
        Ok(())
    }

    fn apply_batch(&mut self, first_seq: u64, events: &[Event]) -> Result<(), ApplyError> {
        for (seq, event) in (first_seq..).zip(events) {
            if seq <= self.seq {
                continue;
            }
            Fold::apply(self, seq, event)?;
        }
        Ok(())
    }

    fn refresh_derived(&mut self) {
        *self = Mirror::new(self).unwrap().view();
    }

    fn sphere(&self, player: PlayerId) -> Vec<PlayerId> {
        Table::from_view(self).unwrap().sphere(player)
    }

    fn distance(&self, a: PlayerId, b: PlayerId) -> Option<usize> {
        Table::from_view(self).unwrap().distance(a, b)
    }
}

fn settings(spell_range: u8) -> Settings {
    Settings {
        seats: 40,
        spell_range,
        reduction: Reduction::Eager,
        starting_life: 20,
        hand_size: 7,
        password: false,
        ..Settings::default()
    }
}

/// Applies events one after another, numbered on from the view's seq.
fn feed(view: &mut TableView, events: &[Event]) {
    for event in events {
        let seq = view.seq + 1;
        view.apply(seq, event).unwrap();
    }
}

/// A table of `n` players (ids 0..n, seated in id order), started with the given turn holders,
/// everyone kept: play has begun but no turn has.
fn playing(n: u16, spell_range: u8, turn_holders: Vec<PlayerId>) -> TableView {
    let mut view = TableView::new(examples::TABLE, "test", settings(spell_range));
    let mut events: Vec<Event> = (0..n)
        .map(|player| Event::PlayerJoined {
            player,
            name: format!("P{player}"),
            entropy: String::new(),
            deck: None,
        })
        .collect();
    events.push(Event::GameStarted {
        seating: (0..n).collect(),
        first_player: 0,
        turn_holders,
        commitment: String::new(),
        first_player_chosen: false,
        bonuses: Vec::new(),
        first_decided_by: None,
        seating_mode: grand_melee_protocol::SeatingMode::Random,
    });
    events.extend((0..n).map(|player| Event::Kept {
        player,
        hand_size: 7,
        reason: grand_melee_protocol::KeepReason::Decided,
    }));
    feed(&mut view, &events);
    view
}

#[test]
fn a_gap_is_reported_and_changes_nothing() {
    let mut view = TableView::new(examples::TABLE, "t", settings(2));
    let event = Event::PlayerJoined {
        player: 0,
        name: "A".to_owned(),
        entropy: String::new(),
        deck: None,
    };
    let before = view.clone();
    assert_eq!(
        view.apply(2, &event),
        Err(ApplyError::Gap {
            expected: 1,
            got: 2
        })
    );
    assert_eq!(view, before);
    view.apply(1, &event).unwrap();
    assert_eq!(view.seq, 1);
    // Replaying the same number is a gap too (apply is strict).
    assert_eq!(
        view.apply(1, &event),
        Err(ApplyError::Gap {
            expected: 2,
            got: 1
        })
    );
}

#[test]
fn unknown_players_and_turns_are_errors_and_change_nothing() {
    let mut view = playing(4, 1, vec![0]);
    let before = view.clone();
    let seq = view.seq + 1;
    assert_eq!(
        view.apply(seq, &Event::LifeChanged { player: 9, life: 3 }),
        Err(ApplyError::Invalid("unknown player"))
    );
    assert_eq!(
        view.apply(seq, &Event::TurnBegan { turn: 5, player: 0 }),
        Err(ApplyError::Invalid("unknown turn"))
    );
    // One unknown player among known ones: nobody is eliminated.
    assert_eq!(
        view.apply(
            seq,
            &Event::Eliminated {
                players: vec![1, 9],
                cause: EliminationCause::Ruling
            }
        ),
        Err(ApplyError::Invalid("unknown player"))
    );
    assert!(matches!(
        view.apply(seq, &Event::PositionsRemoved { players: vec![1] }),
        Err(ApplyError::Invalid(_))
    ));
    assert!(matches!(
        view.apply(
            seq,
            &Event::PlayerJoined {
                player: 7,
                name: "Late".to_owned(),
                entropy: String::new(),
                deck: None,
            }
        ),
        Err(ApplyError::Invalid(_))
    ));
    assert_eq!(view, before);
}

#[test]
fn lobby_joins_and_leaves() {
    let mut view = TableView::new(examples::TABLE, "t", settings(2));
    feed(
        &mut view,
        &[
            Event::PlayerJoined {
                player: 0,
                name: "A".to_owned(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 1,
                name: "B".to_owned(),
                entropy: String::new(),
                deck: None,
            },
            Event::HostChanged { player: Some(0) },
            Event::PlayerJoined {
                player: 2,
                name: "C".to_owned(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerLeft { player: 1 },
            Event::ConnectionChanged {
                player: 2,
                connected: false,
            },
            Event::SpectatorsChanged { spectators: 3 },
            Event::Chat {
                from: None,
                name: "server".to_owned(),
                text: "hi".to_owned(),
            },
        ],
    );
    assert_eq!(view.stage, StageName::Lobby);
    assert_eq!(view.host, Some(0));
    assert_eq!(view.spectators, 3);
    let ids: Vec<PlayerId> = view.players.iter().map(|p| p.player).collect();
    assert_eq!(ids, [0, 2]);
    let c = view.player(2).unwrap();
    assert_eq!(
        (c.life, c.hand_size, c.seat, c.connected),
        (20, 7, None, false)
    );
    assert!(view.ring.is_empty() && view.turns.is_empty());
    assert!(view.players.iter().all(|p| p.may_target.is_empty()));
    assert_eq!(view.seq, 8);
}

#[test]
fn game_start_seats_players_and_mulligans_go_round_from_the_first_player() {
    let mut view = TableView::new(examples::TABLE, "t", settings(1));
    feed(
        &mut view,
        &(0..4)
            .map(|player| Event::PlayerJoined {
                player,
                name: format!("P{player}"),
                entropy: String::new(),
                deck: None,
            })
            .collect::<Vec<_>>(),
    );
    feed(
        &mut view,
        &[Event::GameStarted {
            seating: vec![2, 0, 3, 1],
            first_player: 3,
            turn_holders: vec![3],
            commitment: String::new(),
            first_player_chosen: false,
            bonuses: Vec::new(),
            first_decided_by: None,
            seating_mode: grand_melee_protocol::SeatingMode::Random,
        }],
    );
    assert_eq!(view.stage, StageName::Mulligan);
    let order: Vec<PlayerId> = view.players.iter().map(|p| p.player).collect();
    assert_eq!(order, [2, 0, 3, 1]);
    let seats: Vec<Option<u8>> = view.players.iter().map(|p| p.seat).collect();
    assert_eq!(seats, [Some(0), Some(1), Some(2), Some(3)]);
    assert_eq!(view.ring, [2, 0, 3, 1]);
    assert_eq!(view.first_player, Some(3));
    assert_eq!(view.mulligan_decider, Some(3));
    assert_eq!(view.turns.len(), 1);
    assert_eq!(view.turns[0].state, TurnStateName::Waiting);
    assert_eq!(view.turns[0].sphere, [0, 3, 1]);
    feed(
        &mut view,
        &[
            Event::Mulliganed {
                player: 3,
                hand_size: 6,
            },
            Event::Kept {
                player: 3,
                hand_size: 6,
                reason: grand_melee_protocol::KeepReason::Decided,
            },
        ],
    );
    // Next seat to the left of seat 2 is seat 3, then wrapping round to seat 0.
    assert_eq!(view.mulligan_decider, Some(1));
    feed(
        &mut view,
        &[Event::Kept {
            player: 1,
            hand_size: 7,
            reason: grand_melee_protocol::KeepReason::Decided,
        }],
    );
    assert_eq!(view.mulligan_decider, Some(2));
    feed(
        &mut view,
        &[Event::Kept {
            player: 2,
            hand_size: 7,
            reason: grand_melee_protocol::KeepReason::Decided,
        }],
    );
    assert_eq!(view.mulligan_decider, Some(0));
    assert!(view.players.iter().all(|p| p.may_target.is_empty()));
    feed(
        &mut view,
        &[Event::Kept {
            player: 0,
            hand_size: 7,
            reason: grand_melee_protocol::KeepReason::Decided,
        }],
    );
    assert_eq!(view.stage, StageName::Playing);
    assert_eq!(view.mulligan_decider, None);
    assert_eq!(view.player(3).unwrap().hand_size, 6);
    assert!(view.players.iter().all(|p| p.kept));
    // Range 1 on a ring of 4: each player reaches himself and his two neighbours.
    assert_eq!(view.player(0).unwrap().may_target, [2, 0, 3]);
    assert!(view.player(0).unwrap().may_attack.is_empty());
}

#[test]
fn spheres_on_small_rings_have_no_duplicates() {
    // Ring of m players, range 2: sphere of player 0 starting R positions to his right.
    let expected: [(u16, &[PlayerId]); 6] = [
        (2, &[1, 0]),
        (3, &[2, 0, 1]),
        (4, &[2, 3, 0, 1]),
        (5, &[3, 4, 0, 1, 2]),
        (6, &[4, 5, 0, 1, 2]),
        (8, &[6, 7, 0, 1, 2]),
    ];
    for (m, sphere) in expected {
        let view = playing(m, 2, vec![0]);
        assert_eq!(view.turns[0].sphere, sphere, "ring of {m}");
        assert_eq!(view.sphere(0), sphere);
    }
}

#[test]
fn targets_and_attacks_follow_range_turns_and_phases() {
    let mut view = playing(6, 1, vec![0, 3]);
    assert_eq!(view.distance(0, 3), Some(3));
    assert_eq!(view.distance(0, 5), Some(1));
    assert_eq!(view.player(0).unwrap().may_target, [0, 1, 5]);
    feed(&mut view, &[Event::TurnBegan { turn: 0, player: 0 }]);
    assert_eq!(view.turns[0].state, TurnStateName::Running);
    assert_eq!(view.turns[0].phase, Some(Phase::Beginning));
    assert!(view.player(0).unwrap().may_attack.is_empty());
    feed(
        &mut view,
        &[Event::PhaseChanged {
            turn: 0,
            phase: Phase::Combat,
        }],
    );
    assert_eq!(view.player(0).unwrap().may_attack, [1, 5]);
    // Player 3 holds a waiting turn: no attacks for him.
    assert!(view.player(3).unwrap().may_attack.is_empty());
    feed(
        &mut view,
        &[
            Event::Attacked {
                attacker: 0,
                defender: 1,
                damage: 25,
                poison: 2,
            },
            Event::Eliminated {
                players: vec![1],
                cause: EliminationCause::Life,
            },
        ],
    );
    let p1 = view.player(1).unwrap();
    assert_eq!(
        (p1.life, p1.poison, p1.status),
        (-5, 2, PlayerStatus::Eliminated)
    );
    assert!(p1.may_target.is_empty());
    // Player 1's position still counts: player 2 is still 2 positions from player 0.
    assert_eq!(view.player(0).unwrap().may_attack, [5]);
    assert_eq!(view.player(2).unwrap().may_target, [2, 3]);
    feed(
        &mut view,
        &[Event::PhaseChanged {
            turn: 0,
            phase: Phase::Ending,
        }],
    );
    assert!(view.player(0).unwrap().may_attack.is_empty());
    feed(
        &mut view,
        &[
            Event::TurnEnded {
                turn: 0,
                player: 0,
                reason: TurnEndReason::Finished,
            },
            Event::TurnPassed {
                turn: 0,
                from: 0,
                to: 2,
            },
            Event::PositionsRemoved { players: vec![1] },
        ],
    );
    let p1 = view.player(1).unwrap();
    assert_eq!(p1.status, PlayerStatus::Removed);
    assert_eq!(view.ring, [0, 2, 3, 4, 5]);
    assert_eq!(view.distance(0, 2), Some(1));
    assert_eq!(view.distance(0, 1), None);
    assert_eq!(view.player(0).unwrap().may_target, [0, 2, 5]);
    let turn = view.turn(0).unwrap();
    assert_eq!(turn.player, 2);
    assert_eq!(turn.state, TurnStateName::Waiting);
    assert_eq!(turn.phase, None);
    assert_eq!(turn.sphere, [0, 2, 3]);
    assert_eq!(view.turn_of(2).unwrap().turn, 0);
}

#[test]
fn an_ended_turn_has_no_sphere_until_it_passes() {
    let mut view = playing(4, 1, vec![0]);
    feed(
        &mut view,
        &[
            Event::TurnBegan { turn: 0, player: 0 },
            Event::TurnEnded {
                turn: 0,
                player: 0,
                reason: TurnEndReason::Ruling,
            },
        ],
    );
    assert_eq!(view.turns[0].state, TurnStateName::Ended);
    assert!(view.turns[0].sphere.is_empty());
}

#[test]
fn turn_marks_removals_and_game_over() {
    let mut view = playing(8, 1, vec![0, 4]);
    feed(
        &mut view,
        &[
            Event::TurnBegan { turn: 0, player: 0 },
            Event::TurnMarkedForRemoval { turn: 1 },
        ],
    );
    assert!(view.turn(1).unwrap().marked_for_removal);
    feed(&mut view, &[Event::TurnRemovalCancelled { turn: 1 }]);
    assert!(!view.turn(1).unwrap().marked_for_removal);
    feed(
        &mut view,
        &[
            Event::TurnRemoved {
                turn: 1,
                player: 4,
                reason: TurnRemovalReason::Reduced,
            },
            Event::DamageDealt {
                source: 0,
                target: 1,
                amount: 3,
            },
            Event::LifeChanged {
                player: 2,
                life: 30,
            },
            Event::PoisonChanged {
                player: 2,
                poison: 4,
            },
        ],
    );
    assert_eq!(view.turns.len(), 1);
    assert_eq!(view.turn(1), None);
    assert_eq!(view.player(1).unwrap().life, 17);
    assert_eq!(view.player(2).unwrap().life, 30);
    assert_eq!(view.player(2).unwrap().poison, 4);
    let standings: Vec<Standing> = (0..8)
        .map(|player| Standing {
            player,
            place: if player == 0 { 1 } else { 2 },
            mana_points: if player == 0 { 7 } else { 0 },
        })
        .collect();
    feed(
        &mut view,
        &[
            Event::Eliminated {
                players: (1..8).collect(),
                cause: EliminationCause::Ruling,
            },
            Event::GameOver {
                standings: standings.clone(),
            },
        ],
    );
    assert_eq!(view.stage, StageName::Finished);
    assert_eq!(view.standings, standings);
    assert!(view.turns.is_empty());
    assert!(view.players.iter().all(|p| p.may_target.is_empty()));
    assert_eq!(view.living(), 1);
}

#[test]
fn batches_skip_events_already_included_and_stop_at_gaps() {
    let events = examples::view_events();
    let mut full = TableView::new(examples::TABLE, "Friday melee", examples::view().settings);
    full.apply_batch(1, &events).unwrap();
    assert_eq!(full, examples::view());
    assert_eq!(full.seq, events.len() as u64);

    // A client that got a snapshot at seq 5, then a batch from 3: events 3..5 are skipped.
    let mut mirror = TableView::new(examples::TABLE, "Friday melee", examples::view().settings);
    mirror.apply_batch(1, &events[..5]).unwrap();
    mirror.apply_batch(3, &events[2..]).unwrap();
    assert_eq!(mirror, full);

    // A batch that starts past the next number is a gap.
    let mut mirror = TableView::new(examples::TABLE, "Friday melee", examples::view().settings);
    mirror.apply_batch(1, &events[..5]).unwrap();
    assert_eq!(
        mirror.apply_batch(7, &events[6..]),
        Err(ApplyError::Gap {
            expected: 6,
            got: 7
        })
    );
    assert_eq!(mirror.seq, 5);
}

#[test]
fn the_example_snapshot_has_its_derived_fields() {
    let view = examples::view();
    assert_eq!(view.stage, StageName::Playing);
    assert_eq!(view.host, Some(0));
    assert_eq!(view.spectators, 1);
    assert_eq!(view.ring, [2, 0, 3, 1]);
    let alice = view.player(0).unwrap();
    assert_eq!(alice.seat, Some(1));
    assert_eq!(alice.may_attack, [2, 3]);
    assert_eq!(alice.may_target, [2, 0, 3]);
    assert_eq!(view.player(1).unwrap().may_target, [2, 3, 1]);
    assert_eq!(view.player(1).unwrap().hand_size, 6);
    assert!(!view.player(3).unwrap().connected);
    assert_eq!(view.turns[0].sphere, [2, 0, 3]);
    assert_eq!(view.turns[0].phase, Some(Phase::Combat));

    // A fresh computation of the derived fields changes nothing.
    let mut again = view.clone();
    for p in &mut again.players {
        p.may_attack.clear();
        p.may_target.clear();
    }
    for t in &mut again.turns {
        t.sphere.clear();
    }
    again.refresh_derived();
    assert_eq!(again, view);
}

#[test]
fn player_left_after_the_start_changes_nothing() {
    let mut view = playing(3, 1, vec![0]);
    let before = view.clone();
    feed(&mut view, &[Event::PlayerLeft { player: 1 }]);
    assert_eq!(view.players, before.players);
    assert_eq!(
        view.apply(view.seq + 1, &Event::PlayerLeft { player: 9 }),
        Err(ApplyError::Invalid("unknown player"))
    );
}

#[test]
fn a_second_start_or_a_bad_seating_is_refused() {
    let mut view = TableView::new(examples::TABLE, "t", settings(1));
    feed(
        &mut view,
        &[
            Event::PlayerJoined {
                player: 0,
                name: "A".to_owned(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 1,
                name: "B".to_owned(),
                entropy: String::new(),
                deck: None,
            },
        ],
    );
    let bad = [
        Event::GameStarted {
            seating: vec![0, 0],
            first_player: 0,
            turn_holders: vec![0],
            commitment: String::new(),
            first_player_chosen: false,
            bonuses: Vec::new(),
            first_decided_by: None,
            seating_mode: grand_melee_protocol::SeatingMode::Random,
        },
        Event::GameStarted {
            seating: vec![0],
            first_player: 0,
            turn_holders: vec![0],
            commitment: String::new(),
            first_player_chosen: false,
            bonuses: Vec::new(),
            first_decided_by: None,
            seating_mode: grand_melee_protocol::SeatingMode::Random,
        },
        Event::GameStarted {
            seating: vec![0, 1],
            first_player: 5,
            turn_holders: vec![0],
            commitment: String::new(),
            first_player_chosen: false,
            bonuses: Vec::new(),
            first_decided_by: None,
            seating_mode: grand_melee_protocol::SeatingMode::Random,
        },
        Event::GameStarted {
            seating: vec![0, 1],
            first_player: 0,
            turn_holders: vec![6],
            commitment: String::new(),
            first_player_chosen: false,
            bonuses: Vec::new(),
            first_decided_by: None,
            seating_mode: grand_melee_protocol::SeatingMode::Random,
        },
        Event::Kept {
            player: 0,
            hand_size: 7,
            reason: grand_melee_protocol::KeepReason::Decided,
        },
    ];
    let before = view.clone();
    for event in &bad {
        assert!(view.apply(3, event).is_err(), "{event:?}");
        assert_eq!(view, before);
    }
    let start = Event::GameStarted {
        seating: vec![1, 0],
        first_player: 0,
        turn_holders: vec![0],
        commitment: String::new(),
        first_player_chosen: false,
        bonuses: Vec::new(),
        first_decided_by: None,
        seating_mode: grand_melee_protocol::SeatingMode::Random,
    };
    view.apply(3, &start).unwrap();
    assert!(view.apply(4, &start).is_err());
}

mod fold_against_the_live_table {
    use grand_melee_protocol::rules::{Actor, Command, Stage, Table, TableConfig};
    use grand_melee_protocol::{Event, Mirror, Phase, Reduction, Settings, TableView, examples};
    use proptest::prelude::*;
    use rand::seq::IndexedRandom;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A table-level event about a random seated player, as the session would publish it.
    fn session_event(table: &Table, rng: &mut ChaCha8Rng) -> Option<Event> {
        let ids: Vec<u16> = table.lobby().iter().map(|(p, _)| *p).collect();
        let player = *ids.choose(rng)?;
        Some(match rng.random_range(0..7) {
            0 => Event::ConnectionChanged {
                player,
                connected: rng.random(),
            },
            1 => Event::HostChanged {
                player: Some(player),
            },
            2 => Event::PlayerAbsent { player },
            3 => Event::PlayerMuted {
                player: Some(player),
                muted: rng.random(),
            },
            4 => Event::PlayerMuted {
                player: None,
                muted: rng.random(),
            },
            5 => Event::SpectatorsChanged {
                spectators: rng.random_range(0..5),
            },
            _ => Event::TablePaused {
                paused: rng.random(),
            },
        })
    }

    /// A random command that is often legal: keep, mulligan, move the phase, attack, end the
    /// turn, concede; refusals are simply skipped.
    fn command(table: &Table, rng: &mut ChaCha8Rng) -> Option<(Actor, Command)> {
        if let Some(decider) = table.mulligan_decider() {
            let command = if rng.random_bool(0.2) {
                Command::Mulligan
            } else {
                Command::Keep
            };
            return Some((Actor::Player(decider), command));
        }
        let living: Vec<u16> = table
            .players()
            .iter()
            .filter(|p| p.status.is_alive())
            .map(|p| p.id)
            .collect();
        let me = *living.choose(rng)?;
        let command = match rng.random_range(0..10) {
            0 => Command::Concede,
            1..=3 => Command::SetPhase {
                phase: *Phase::ALL.choose(rng)?,
            },
            4..=6 => Command::Attack {
                target: *table.attack_targets(me).choose(rng)?,
                damage: rng.random_range(0..8),
                poison: rng.random_range(0..3),
            },
            _ => Command::EndTurn,
        };
        Some((Actor::Player(me), command))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// After every accepted command and every table-level event of random games: a
        /// snapshot taken back into a mirror projects to itself, and a mirror built from an
        /// earlier snapshot and fed every later event equals the live table's snapshot.
        #[test]
        fn a_mirror_equals_the_live_table_after_every_event(
            seed in any::<u64>(),
            players in 2u16..=40,
            range in 1u8..=4,
            forced in any::<bool>(),
        ) {
            let settings = Settings {
                seats: 40,
                spell_range: range,
                reduction: if forced { Reduction::Forced } else { Reduction::Eager },
                ..Settings::default()
            };
            let config = TableConfig::from_settings(&settings, seed).unwrap();
            let mut live = Table::new(config).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let snapshot = |table: &Table, seq: u64| -> TableView {
                table.view(examples::TABLE, "t", seq, &settings)
            };
            let mut seq = 0u64;
            let mut follower = Mirror::new(&snapshot(&live, 0)).unwrap();
            let mut publish = |live: &mut Table, follower: &mut Mirror, events: Vec<Event>,
                               applied: bool| -> Result<(), TestCaseError> {
                for event in events {
                    if !applied {
                        live.apply(&event).unwrap();
                    }
                    seq += 1;
                    follower.apply(seq, &event).unwrap();
                }
                let view = snapshot(live, seq);
                prop_assert_eq!(&follower.view(), &view);
                prop_assert_eq!(&Mirror::new(&view).unwrap().view(), &view);
                Ok(())
            };
            for p in 0..players {
                let events = live
                    .handle(Actor::Host, Command::join(format!("p{p}")))
                    .unwrap();
                publish(&mut live, &mut follower, events, true)?;
            }
            let events = live.handle(Actor::Host, Command::start(None)).unwrap();
            publish(&mut live, &mut follower, events, true)?;
            let mut steps = 0;
            while live.stage() != Stage::Finished && steps < 3_000 {
                steps += 1;
                if rng.random_bool(0.1) {
                    if let Some(event) = session_event(&live, &mut rng) {
                        publish(&mut live, &mut follower, vec![event], false)?;
                    }
                    continue;
                }
                // Now and then a client joins late: a new mirror from the current snapshot.
                if rng.random_bool(0.02) {
                    follower = Mirror::new(&snapshot(&live, follower.seq())).unwrap();
                }
                let Some((actor, command)) = command(&live, &mut rng) else { continue };
                if let Ok(events) = live.handle(actor, command) {
                    publish(&mut live, &mut follower, events, true)?;
                }
            }
            prop_assert_eq!(live.stage(), Stage::Finished);
        }
    }
}
