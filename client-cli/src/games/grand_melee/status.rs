//! A Grand Melee table in script mode's `status`: one line per seat (life, poison, presence,
//! hand, the turn he holds) and the player's range.

use grand_melee_protocol::{PlayerId, PlayerStatus, TableView, TurnStateName};

use crate::words::{list, who};

/// The `status` lines for the seats, then whom `me` may attack and target.
pub fn script_lines(view: &TableView, me: Option<PlayerId>) -> Vec<String> {
    let mut lines = Vec::new();
    for p in &view.players {
        let seat = p.seat.map_or_else(|| "-".to_owned(), |s| s.to_string());
        let status = match p.status {
            PlayerStatus::Alive => "alive",
            PlayerStatus::Eliminated => "eliminated",
            PlayerStatus::Removed => "removed",
        };
        let turn = view.turn_of(p.player).map_or_else(
            || "none".to_owned(),
            |t| {
                let state = match t.state {
                    TurnStateName::Waiting => "waiting",
                    TurnStateName::Running => "running",
                    TurnStateName::Ended => "ended",
                };
                let phase = t.phase.map_or("", |p| p.name());
                format!("{}:{state}:{phase}", t.turn)
            },
        );
        lines.push(format!(
            "seat {seat} player={} life={} poison={} status={status} connected={} muted={} hand={} turn={turn}",
            who(view, p.player),
            p.life,
            p.poison,
            p.connected,
            p.muted,
            p.hand_size,
        ));
    }
    if let Some(me) = me.and_then(|me| view.player(me)) {
        lines.push(format!(
            "range may_attack={} may_target={}",
            list_or_none(view, &me.may_attack),
            list_or_none(view, &me.may_target)
        ));
    }
    lines
}

fn list_or_none(view: &TableView, players: &[u16]) -> String {
    if players.is_empty() {
        "none".to_owned()
    } else {
        list(view, players)
    }
}
