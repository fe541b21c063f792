//! Property tests: random Grand Melee tables played to the end, with the rules' invariants
//! checked after every command.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use grand_melee_protocol::rules::{
    Actor, Command, SpellRange, Stage, Table, TableConfig, TurnState,
};
use grand_melee_protocol::{Event, Phase, PlayerId, Reduction, RuleSet, Ruling, TurnRemovalReason};
use proptest::prelude::*;
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Upper bound on commands per game; every game must end well before it.
const MAX_STEPS: usize = 50_000;

struct Game {
    table: Table,
    /// The fold of every accepted command's events, kept alongside the live table.
    shadow: Table,
    events: Vec<Event>,
    config: TableConfig,
    rng: ChaCha8Rng,
    /// Turn ends (anyone's) since each player last began a turn.
    waited: HashMap<PlayerId, usize>,
    longest_wait: usize,
}

impl Game {
    fn new(players: usize, range: u8, reduction: Reduction, seed: u64) -> Self {
        Self::with_rules(players, range, reduction, seed, RuleSet::Seed)
    }

    /// A game under `rules` (CR 807 always has range 1), with Combat with Dice on.
    fn with_rules(
        players: usize,
        range: u8,
        reduction: Reduction,
        seed: u64,
        rules: RuleSet,
    ) -> Self {
        let range = if rules == RuleSet::Cr807 { 1 } else { range };
        let config = TableConfig {
            seats: u8::try_from(players).unwrap(),
            spell_range: SpellRange::new(range).unwrap(),
            reduction,
            rule_set: rules,
            combat_dice: true,
            ..TableConfig::seeded(seed)
        };
        let names = (0..players).map(|i| format!("p{i}"));
        let (table, events) = Table::quick_start(config.clone(), names, None).unwrap();
        let shadow = Table::new(config.clone()).unwrap();
        let waited = table.players().iter().map(|p| (p.id, 0)).collect();
        let mut game = Self {
            table,
            shadow,
            events: Vec::new(),
            config,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15),
            waited,
            longest_wait: 0,
        };
        game.record(events);
        game
    }

    fn living(&self) -> Vec<PlayerId> {
        self.table
            .players()
            .iter()
            .filter(|p| p.status.is_alive())
            .map(|p| p.id)
            .collect()
    }

    fn running(&self) -> Vec<PlayerId> {
        self.table
            .turns()
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .map(|t| self.table.players()[t.seat].id)
            .collect()
    }

    fn any_player(&mut self) -> PlayerId {
        let players = self.table.players();
        players[self.rng.random_range(0..players.len())].id
    }

    /// Sends a command; a rejection must leave the table exactly as it was.
    fn send(&mut self, actor: Actor, command: Command) {
        let before = self.table.clone();
        match self.table.handle(actor, command.clone()) {
            Ok(events) => self.record(events),
            Err(rejection) => assert_eq!(
                self.table, before,
                "{command:?} by {actor:?} was rejected ({rejection}) but changed the table"
            ),
        }
        self.check();
    }

    fn record(&mut self, events: Vec<Event>) {
        for event in &events {
            self.shadow.apply(event).unwrap();
            match event {
                Event::TurnEnded { .. } => self.waited.values_mut().for_each(|w| *w += 1),
                Event::TurnBegan { player, .. } => {
                    self.waited.insert(*player, 0);
                }
                Event::Eliminated { players, .. } => players.iter().for_each(|p| {
                    self.waited.remove(p);
                }),
                _ => {}
            }
        }
        self.events.extend(events);
        if let Some(&w) = self.waited.values().max() {
            self.longest_wait = self.longest_wait.max(w);
        }
    }

    /// One random step: mostly turn ends, some damage, attacks, concessions and rulings, and
    /// some commands that are likely to be rejected.
    fn step(&mut self) {
        let roll = self.rng.random_range(0..100);
        let living = self.living();
        match roll {
            0..=64 => {
                let running = self.running();
                let player = *running.choose(&mut self.rng).unwrap();
                if roll < 60 {
                    self.send(Actor::Player(player), Command::EndTurn);
                } else {
                    self.send(Actor::Host, Command::Ruling(Ruling::EndTurn { player }));
                }
            }
            65..=74 => {
                let source = *living.choose(&mut self.rng).unwrap();
                let targets = self.table.damage_targets(source);
                let target = *targets.choose(&mut self.rng).unwrap();
                let life = self.table.player(target).unwrap().life.max(1);
                let amount = self.rng.random_range(1..=u32::try_from(life).unwrap() * 2);
                self.send(
                    Actor::Player(source),
                    Command::DealDamage { target, amount },
                );
            }
            75..=79 => {
                let running = self.running();
                let attacker = *running.choose(&mut self.rng).unwrap();
                self.send(
                    Actor::Player(attacker),
                    Command::SetPhase {
                        phase: Phase::Combat,
                    },
                );
                let target = self
                    .table
                    .attack_targets(attacker)
                    .choose(&mut self.rng)
                    .copied();
                if let Some(defender) = target
                    && roll >= 78
                {
                    // Combat with Dice: a roll, sometimes blocked and struck back.
                    let blockers: Vec<u32> = (0..self.rng.random_range(0..3))
                        .map(|_| self.rng.random_range(0..6))
                        .collect();
                    let blocked = !blockers.is_empty();
                    let attacker_power = self.rng.random_range(0..8);
                    self.send(
                        Actor::Player(attacker),
                        Command::AttackRoll {
                            defender,
                            attacker_power,
                            blocker_powers: blockers,
                        },
                    );
                    if blocked
                        && self
                            .table
                            .player(defender)
                            .is_some_and(|p| p.status.is_alive())
                    {
                        self.send(
                            Actor::Player(defender),
                            Command::CounterRoll {
                                attacker,
                                blocker_power: 2,
                                attacker_power,
                            },
                        );
                    }
                } else if let Some(target) = target {
                    let damage = self.rng.random_range(0..8);
                    let poison = self.rng.random_range(0..4);
                    self.send(
                        Actor::Player(attacker),
                        Command::Attack {
                            target,
                            damage,
                            poison,
                        },
                    );
                }
            }
            80..=83 => {
                let player = *living.choose(&mut self.rng).unwrap();
                self.send(Actor::Player(player), Command::Concede);
            }
            84 => {
                // Extra turns: the player taking a turn for himself, or a ruling for anyone.
                let running = self.running();
                let player = *running.choose(&mut self.rng).unwrap();
                if self.rng.random_bool(0.5) {
                    self.send(Actor::Player(player), Command::ExtraTurn);
                } else {
                    let player = *living.choose(&mut self.rng).unwrap();
                    self.send(Actor::Host, Command::Ruling(Ruling::ExtraTurn { player }));
                }
            }
            85..=87 => {
                let count = self.rng.random_range(1..=3).min(living.len());
                let players = living.sample(&mut self.rng, count).copied().collect();
                self.send(Actor::Host, Command::Ruling(Ruling::Eliminate { players }));
            }
            _ => {
                let actor = if self.rng.random_bool(0.2) {
                    Actor::Host
                } else {
                    Actor::Player(self.any_player())
                };
                let target = self.any_player();
                let command = match self.rng.random_range(0..11) {
                    9 => Command::ExtraTurn,
                    10 => Command::CounterRoll {
                        attacker: target,
                        blocker_power: 1,
                        attacker_power: 1,
                    },
                    0 => Command::EndTurn,
                    1 => Command::Attack {
                        target,
                        damage: self.rng.random_range(0..3),
                        poison: 0,
                    },
                    2 => Command::DealDamage {
                        target,
                        amount: self.rng.random_range(0..3),
                    },
                    3 => Command::ChangeLife {
                        delta: self.rng.random_range(-3..=3),
                    },
                    4 => Command::ChangePoison {
                        delta: self.rng.random_range(-2..=2),
                    },
                    5 => Command::SetPhase {
                        phase: *Phase::ALL.choose(&mut self.rng).unwrap(),
                    },
                    6 => Command::Keep,
                    7 => Command::join("late"),
                    _ => Command::Ruling(Ruling::Eliminate {
                        players: vec![target, target],
                    }),
                };
                self.send(actor, command);
            }
        }
    }

    /// The invariants that must hold after every command.
    fn check(&self) {
        let table = &self.table;
        assert_eq!(
            self.shadow, *table,
            "the fold of the events differs from the live table"
        );
        let range = self.config.spell_range.get();
        assert_eq!(
            table.living(),
            table
                .players()
                .iter()
                .filter(|p| p.status.is_alive())
                .count()
        );
        for (position, player) in table.ring().enumerate() {
            assert_eq!(player.position, position, "ring positions are consistent");
        }
        if table.stage() == Stage::Finished {
            assert!(table.living() <= 1);
            assert!(table.turns().is_empty());
            assert_eq!(table.standings().len(), table.players().len());
            return;
        }
        assert_eq!(table.stage(), Stage::Playing);
        let turns = table.turns();
        let mut holders: Vec<PlayerId> = Vec::new();
        for turn in turns {
            let holder = &table.players()[turn.seat];
            assert!(holder.status.is_alive(), "turn {turn:?} held by {holder:?}");
            assert!(
                !holders.contains(&holder.id),
                "{:?} holds two turns",
                holder.id
            );
            assert_ne!(
                turn.state,
                TurnState::Ended,
                "an ended turn was left behind"
            );
            if turn.removal_mark.is_some() {
                assert!(matches!(turn.state, TurnState::Running(_)));
            }
            holders.push(holder.id);
        }
        let running = self.running();
        assert!(!running.is_empty(), "deadlock: no running turn\n{table:#?}");
        // CR 807 has no spheres: a marker only waits for the three seats on its left.
        let spheres = self.config.rule_set == RuleSet::Seed;
        for (i, &a) in running.iter().enumerate().filter(|_| spheres) {
            for &b in &running[i + 1..] {
                let d = table.distance(a, b).unwrap();
                assert!(
                    d > 2 * range,
                    "running spheres of {a:?} and {b:?} overlap: {d}"
                );
            }
        }
        let limit = self.config.rule_set.turn_limit(
            self.config.reduction,
            table.living(),
            self.config.spell_range,
        );
        let designated: usize = turns.iter().map(|t| t.designations as usize).sum();
        let unmarked = turns.len() - designated;
        assert!(
            unmarked <= limit,
            "{unmarked} turns besides pending removals, limit {limit}"
        );
        // No starvation: with turn ends chosen at random among running turns, every living
        // player begins a turn within 6·N turn ends (anyone's). The longest wait seen in 2,000
        // games was 2.6·N.
        let bound = 6 * usize::from(self.config.seats);
        assert!(
            self.longest_wait <= bound,
            "a player waited {} turn ends (bound {bound})",
            self.longest_wait
        );
    }

    fn play_to_the_end(&mut self) -> usize {
        let mut steps = 0;
        while self.table.stage() == Stage::Playing {
            assert!(steps < MAX_STEPS, "the game did not end");
            self.step();
            steps += 1;
        }
        let replayed = Table::replay(self.config.clone(), &self.events).unwrap();
        assert_eq!(
            replayed, self.table,
            "replaying every event gives the same table"
        );
        steps
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn random_games_keep_every_invariant_until_the_end(
        players in 15usize..=40,
        range in 1u8..=3,
        eager in any::<bool>(),
        cr807 in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let reduction = if eager { Reduction::Eager } else { Reduction::Forced };
        let rules = if cr807 { RuleSet::Cr807 } else { RuleSet::Seed };
        let mut game = Game::with_rules(players, range, reduction, seed, rules);
        game.play_to_the_end();
        prop_assert!(game.table.living() <= 1);
        let winner_points = game.table.standings()[0].mana_points;
        if game.table.living() == 1 {
            prop_assert_eq!(usize::from(winner_points), players - 1);
        }
    }
}

#[test]
fn the_random_games_exercise_every_mechanism() {
    // The generator above is only worth something if it reaches the rare paths: merges,
    // cancelled reductions, reductions of waiting and running turns, and position removals.
    let mut seen: HashMap<&'static str, usize> = HashMap::new();
    for seed in 0..500u64 {
        let players = 15 + (seed as usize * 7) % 26;
        let range = 1 + (seed % 3) as u8;
        let reduction = if seed % 2 == 0 {
            Reduction::Eager
        } else {
            Reduction::Forced
        };
        let mut game = Game::new(players, range, reduction, seed);
        game.play_to_the_end();
        for event in &game.events {
            let kind = match event {
                Event::TurnRemoved {
                    reason: TurnRemovalReason::Merged,
                    ..
                } => "merged",
                Event::TurnRemoved {
                    reason: TurnRemovalReason::Reduced,
                    ..
                } => "reduced",
                Event::TurnMarkedForRemoval { .. } => "marked",
                Event::TurnRemovalCancelled { .. } => "cancelled",
                Event::PositionsRemoved { .. } => "positions removed",
                Event::Attacked { .. } => "attacked",
                _ => continue,
            };
            *seen.entry(kind).or_default() += 1;
        }
    }
    for kind in [
        "merged",
        "reduced",
        "marked",
        "cancelled",
        "positions removed",
        "attacked",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} in 500 games"
        );
    }
}

#[test]
fn the_cr807_games_exercise_every_mechanism() {
    // The same for the official variant, extra turns and Combat with Dice: designations (twice
    // on one marker too), removals, departed positions going as a turn begins, extra turns kept
    // and deferred, rolls and counter strikes.
    let mut seen: HashMap<&'static str, usize> = HashMap::new();
    for seed in 0..300u64 {
        let players = 15 + (seed as usize * 7) % 26;
        let mut game = Game::with_rules(players, 1, Reduction::Eager, seed, RuleSet::Cr807);
        game.play_to_the_end();
        for event in &game.events {
            let kind = match event {
                Event::TurnRemoved {
                    reason: TurnRemovalReason::Reduced,
                    ..
                } => "reduced",
                Event::TurnMarkedForRemoval { .. } => "designated",
                Event::PositionsRemoved { .. } => "positions removed",
                Event::TurnKept { .. } => "kept",
                Event::ExtraTurnDeferred { .. } => "deferred",
                Event::ExtraTurnGranted {
                    before_next: true, ..
                } => "before next",
                Event::AttackRolled { counter: false, .. } => "rolled",
                Event::AttackRolled { counter: true, .. } => "counter strike",
                Event::DiceRevealed { .. } => "revealed",
                _ => continue,
            };
            *seen.entry(kind).or_default() += 1;
        }
        let twice = game.events.windows(2).any(|w| {
            matches!(w, [Event::TurnMarkedForRemoval { turn: a }, Event::TurnMarkedForRemoval { turn: b }] if a == b)
        });
        if twice {
            *seen.entry("designated twice").or_default() += 1;
        }
    }
    for kind in [
        "reduced",
        "designated",
        "positions removed",
        "kept",
        "deferred",
        "before next",
        "rolled",
        "counter strike",
        "revealed",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} in 300 games: {seen:?}"
        );
    }
}
