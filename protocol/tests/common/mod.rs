//! Helpers the rule-example tests share.
#![allow(clippy::unwrap_used, dead_code)]

use grand_melee_protocol::rules::{Actor, Command, Table, TableConfig};
use grand_melee_protocol::{Event, PlayerId};

/// A started table of `players`, every hand kept, and its players by seats to the left of the
/// first player (`p[0]` is the first player, `p[1]` the next seat to his left, …).
pub fn game(config: TableConfig, players: usize) -> (Table, Vec<PlayerId>) {
    let names = (0..players).map(|i| format!("P{i}"));
    let (table, _) = Table::quick_start(config, names, None).unwrap();
    let first = table.seat_of(table.first_player().unwrap()).unwrap();
    let p = (0..players)
        .map(|k| table.players()[(first + k) % players].id)
        .collect();
    (table, p)
}

/// A command that must be accepted, and its events.
pub fn ok(table: &mut Table, actor: Actor, command: Command) -> Vec<Event> {
    table.handle(actor, command).unwrap()
}
