//! A whole 40-player Grand Melee game through the rules core: turn ends and eliminations until a
//! winner, under the seed's rules (eager and forced reduction) and under CR 807 (ten markers). Reported per turn pass (criterion's "elements" are turn passes). The baseline in the
//! same run applies the very same events to the same started table, i.e. folds without deciding.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use grand_melee_protocol::rules::{Actor, Command, Stage, Table, TableConfig, TurnState};
use grand_melee_protocol::{Event, Reduction, RuleSet};

/// Every 8th command a player concedes, otherwise the first running turn ends; this plays a full
/// game of a few hundred passes. Returns every event.
fn play(table: &mut Table) -> Vec<Event> {
    let mut all = Vec::new();
    let mut step = 0usize;
    while table.stage() == Stage::Playing {
        step += 1;
        let events = if step.is_multiple_of(8) {
            let n = table.players().len();
            let seat = (0..n)
                .map(|k| (step * 7 + k) % n)
                .find(|&s| table.players()[s].status.is_alive())
                .unwrap();
            let player = table.players()[seat].id;
            table
                .handle(Actor::Player(player), Command::Concede)
                .unwrap()
        } else {
            let turn = table
                .turns()
                .iter()
                .find(|t| matches!(t.state, TurnState::Running(_)))
                .unwrap();
            let player = table.players()[turn.seat].id;
            table
                .handle(Actor::Player(player), Command::EndTurn)
                .unwrap()
        };
        all.extend(events);
    }
    all
}

fn started(rule_set: RuleSet, reduction: Reduction) -> (Table, Vec<Event>) {
    let config = TableConfig {
        seats: 40,
        reduction,
        rule_set,
        spell_range: match rule_set {
            RuleSet::Cr807 => grand_melee_protocol::rules::SpellRange::new(1).unwrap(),
            RuleSet::Seed => TableConfig::default().spell_range,
        },
        seed: 40,
        ..TableConfig::default()
    };
    let names = (0..40).map(|i| format!("player {i}"));
    Table::quick_start(config, names, None).unwrap()
}

fn whole_game(c: &mut Criterion) {
    let mut group = c.benchmark_group("whole 40-player game");
    for (label, rule_set, reduction) in [
        ("eager", RuleSet::Seed, Reduction::Eager),
        ("forced", RuleSet::Seed, Reduction::Forced),
        ("cr807", RuleSet::Cr807, Reduction::Eager),
    ] {
        let (start, _) = started(rule_set, reduction);
        let played = play(&mut start.clone());
        let passes = played
            .iter()
            .filter(|e| matches!(e, Event::TurnPassed { .. }))
            .count();
        group.throughput(Throughput::Elements(passes as u64));
        group.bench_function(format!("{label}: play ({passes} passes)"), |b| {
            b.iter_batched(
                || start.clone(),
                |mut table| black_box(play(&mut table)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("{label}: replay the same events (baseline)"), |b| {
            b.iter_batched(
                || start.clone(),
                |mut table| {
                    for event in &played {
                        table.apply(event).unwrap();
                    }
                    black_box(table)
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, whole_game);
criterion_main!(benches);
