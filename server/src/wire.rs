//! The edge between the rules core and the wire: core types are not wire types, and this is the
//! one place that maps between them (so the protocol can stay stable while the core changes).

use grand_melee_protocol as wire;
use grand_melee_protocol::ErrorCode;

use crate::rules::{self, Command, Rejection, Stage, Table, TurnState};

/// The error code a rejection is reported with.
pub(crate) fn rejection_code(rejection: &Rejection) -> ErrorCode {
    match rejection {
        Rejection::GameStarted => ErrorCode::GameStarted,
        Rejection::NotMulliganing => ErrorCode::NotMulliganing,
        Rejection::NotPlaying => ErrorCode::NotPlaying,
        Rejection::NotAPlayer => ErrorCode::NotAPlayer,
        Rejection::NotHost => ErrorCode::NotHost,
        Rejection::TableFull => ErrorCode::TableFull,
        Rejection::BadName => ErrorCode::BadName,
        Rejection::BadText => ErrorCode::BadText,
        Rejection::ReservedName => ErrorCode::ReservedName,
        Rejection::NameTaken => ErrorCode::NameTaken,
        Rejection::ConfusableName => ErrorCode::ConfusableName,
        Rejection::NotEnoughPlayers => ErrorCode::NotEnoughPlayers,
        Rejection::UnknownPlayer(_) => ErrorCode::UnknownPlayer,
        Rejection::Eliminated => ErrorCode::Eliminated,
        Rejection::TargetEliminated => ErrorCode::TargetEliminated,
        Rejection::NotYourDecision => ErrorCode::NotYourDecision,
        Rejection::NoCardsLeft => ErrorCode::NoCardsLeft,
        Rejection::NotYourTurn => ErrorCode::NotYourTurn,
        Rejection::NoRunningTurn => ErrorCode::NoRunningTurn,
        Rejection::NotCombatPhase => ErrorCode::NotCombatPhase,
        Rejection::SamePhase => ErrorCode::SamePhase,
        Rejection::SelfAttack => ErrorCode::SelfAttack,
        Rejection::OutOfRange => ErrorCode::OutOfRange,
        Rejection::BadAmount => ErrorCode::BadAmount,
        Rejection::DuplicatePlayer => ErrorCode::DuplicatePlayer,
        Rejection::NoPlayers => ErrorCode::NoPlayers,
    }
}

fn player(id: rules::PlayerId) -> wire::PlayerId {
    id.0
}

fn players(ids: &[rules::PlayerId]) -> Vec<wire::PlayerId> {
    ids.iter().map(|p| p.0).collect()
}

fn core_player(id: wire::PlayerId) -> rules::PlayerId {
    rules::PlayerId(id)
}

pub(crate) fn phase(phase: rules::Phase) -> wire::Phase {
    match phase {
        rules::Phase::Beginning => wire::Phase::Beginning,
        rules::Phase::PrecombatMain => wire::Phase::PrecombatMain,
        rules::Phase::Combat => wire::Phase::Combat,
        rules::Phase::PostcombatMain => wire::Phase::PostcombatMain,
        rules::Phase::Ending => wire::Phase::Ending,
    }
}

fn core_phase(phase: wire::Phase) -> rules::Phase {
    match phase {
        wire::Phase::Beginning => rules::Phase::Beginning,
        wire::Phase::PrecombatMain => rules::Phase::PrecombatMain,
        wire::Phase::Combat => rules::Phase::Combat,
        wire::Phase::PostcombatMain => rules::Phase::PostcombatMain,
        wire::Phase::Ending => rules::Phase::Ending,
    }
}

pub(crate) fn reduction(policy: rules::ReductionPolicy) -> wire::Reduction {
    match policy {
        rules::ReductionPolicy::Eager => wire::Reduction::Eager,
        rules::ReductionPolicy::Forced => wire::Reduction::Forced,
    }
}

pub(crate) fn core_reduction(policy: wire::Reduction) -> rules::ReductionPolicy {
    match policy {
        wire::Reduction::Eager => rules::ReductionPolicy::Eager,
        wire::Reduction::Forced => rules::ReductionPolicy::Forced,
    }
}

pub(crate) fn stage(stage: Stage) -> wire::StageName {
    match stage {
        Stage::Lobby => wire::StageName::Lobby,
        Stage::Mulligan { .. } => wire::StageName::Mulligan,
        Stage::Playing => wire::StageName::Playing,
        Stage::Finished => wire::StageName::Finished,
    }
}

fn standing(s: &rules::Standing) -> wire::Standing {
    wire::Standing {
        player: player(s.player),
        place: s.place,
        mana_points: s.mana_points,
    }
}

/// Whose authority a game request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Authority {
    /// The table's host.
    Host,
    /// The seated player who sends it.
    Player,
}

/// A game request as a core command, if it is one. Table-level requests (snapshot, chat) and
/// session requests are `None`.
pub(crate) fn command(message: &wire::ClientMessage) -> Option<(Authority, Command)> {
    use wire::ClientMessage as M;
    Some(match message {
        M::Start { first_player, .. } => (
            Authority::Host,
            Command::Start {
                first_player: first_player.map(core_player),
            },
        ),
        M::Mulligan { .. } => (Authority::Player, Command::Mulligan),
        M::Keep { .. } => (Authority::Player, Command::Keep),
        M::SetPhase { phase, .. } => (
            Authority::Player,
            Command::SetPhase {
                phase: core_phase(*phase),
            },
        ),
        M::EndTurn { .. } => (Authority::Player, Command::EndTurn),
        M::Attack {
            target,
            damage,
            poison,
            ..
        } => (
            Authority::Player,
            Command::Attack {
                target: core_player(*target),
                damage: *damage,
                poison: *poison,
            },
        ),
        M::DealDamage { target, amount, .. } => (
            Authority::Player,
            Command::DealDamage {
                target: core_player(*target),
                amount: *amount,
            },
        ),
        M::ChangeLife { delta, .. } => (Authority::Player, Command::ChangeLife { delta: *delta }),
        M::ChangePoison { delta, .. } => {
            (Authority::Player, Command::ChangePoison { delta: *delta })
        }
        M::Concede { .. } => (Authority::Player, Command::Concede),
        M::Ruling { ruling, .. } => (Authority::Host, Command::Ruling(core_ruling(ruling))),
        _ => return None,
    })
}

fn core_ruling(ruling: &wire::Ruling) -> rules::Ruling {
    match ruling {
        wire::Ruling::Eliminate { players } => rules::Ruling::Eliminate {
            players: players.iter().copied().map(core_player).collect(),
        },
        wire::Ruling::SetLife { player, life } => rules::Ruling::SetLife {
            player: core_player(*player),
            life: *life,
        },
        wire::Ruling::SetPoison { player, poison } => rules::Ruling::SetPoison {
            player: core_player(*player),
            poison: *poison,
        },
        wire::Ruling::EndTurn { player } => rules::Ruling::EndTurn {
            player: core_player(*player),
        },
        wire::Ruling::Keep { player } => rules::Ruling::Keep {
            player: core_player(*player),
        },
    }
}

/// A core event on the wire.
pub(crate) fn event(event: &rules::Event) -> wire::Event {
    use rules::Event as E;
    use wire::Event as W;
    match event {
        E::PlayerJoined { player: p, name } => W::PlayerJoined {
            player: player(*p),
            name: name.clone(),
        },
        E::PlayerLeft { player: p } => W::PlayerLeft { player: player(*p) },
        E::GameStarted {
            seating,
            first_player,
            turn_holders,
        } => W::GameStarted {
            seating: players(seating),
            first_player: player(*first_player),
            turn_holders: players(turn_holders),
        },
        E::Mulliganed {
            player: p,
            hand_size,
        } => W::Mulliganed {
            player: player(*p),
            hand_size: *hand_size,
        },
        E::Kept {
            player: p,
            hand_size,
            reason,
        } => W::Kept {
            player: player(*p),
            hand_size: *hand_size,
            reason: keep_reason(*reason),
        },
        E::TurnBegan { turn, player: p } => W::TurnBegan {
            turn: turn.0,
            player: player(*p),
        },
        E::PhaseChanged { turn, phase: ph } => W::PhaseChanged {
            turn: turn.0,
            phase: phase(*ph),
        },
        E::Attacked {
            attacker,
            defender,
            damage,
            poison,
        } => W::Attacked {
            attacker: player(*attacker),
            defender: player(*defender),
            damage: *damage,
            poison: *poison,
        },
        E::DamageDealt {
            source,
            target,
            amount,
        } => W::DamageDealt {
            source: player(*source),
            target: player(*target),
            amount: *amount,
        },
        E::LifeChanged { player: p, life } => W::LifeChanged {
            player: player(*p),
            life: *life,
        },
        E::PoisonChanged { player: p, poison } => W::PoisonChanged {
            player: player(*p),
            poison: *poison,
        },
        E::Eliminated { players: ps, cause } => W::Eliminated {
            players: players(ps),
            cause: match cause {
                rules::EliminationCause::Life => wire::EliminationCause::Life,
                rules::EliminationCause::Poison => wire::EliminationCause::Poison,
                rules::EliminationCause::Conceded => wire::EliminationCause::Conceded,
                rules::EliminationCause::Ruling => wire::EliminationCause::Ruling,
            },
        },
        E::TurnMarkedForRemoval { turn } => W::TurnMarkedForRemoval { turn: turn.0 },
        E::TurnRemovalCancelled { turn } => W::TurnRemovalCancelled { turn: turn.0 },
        E::TurnEnded {
            turn,
            player: p,
            reason,
        } => W::TurnEnded {
            turn: turn.0,
            player: player(*p),
            reason: match reason {
                rules::TurnEndReason::Finished => wire::TurnEndReason::Finished,
                rules::TurnEndReason::Eliminated => wire::TurnEndReason::Eliminated,
                rules::TurnEndReason::Ruling => wire::TurnEndReason::Ruling,
                rules::TurnEndReason::Clock => wire::TurnEndReason::Clock,
                rules::TurnEndReason::Absent => wire::TurnEndReason::Absent,
            },
        },
        E::TurnPassed { turn, from, to } => W::TurnPassed {
            turn: turn.0,
            from: player(*from),
            to: player(*to),
        },
        E::TurnRemoved {
            turn,
            player: p,
            reason,
        } => W::TurnRemoved {
            turn: turn.0,
            player: player(*p),
            reason: match reason {
                rules::TurnRemovalReason::Merged => wire::TurnRemovalReason::Merged,
                rules::TurnRemovalReason::Reduced => wire::TurnRemovalReason::Reduced,
            },
        },
        E::PositionsRemoved { players: ps } => W::PositionsRemoved {
            players: players(ps),
        },
        E::GameOver { standings } => W::GameOver {
            standings: standings.iter().map(standing).collect(),
        },
    }
}

fn keep_reason(reason: rules::KeepReason) -> wire::KeepReason {
    match reason {
        rules::KeepReason::Decided => wire::KeepReason::Decided,
        rules::KeepReason::Clock => wire::KeepReason::Clock,
        rules::KeepReason::Absent => wire::KeepReason::Absent,
        rules::KeepReason::Ruling => wire::KeepReason::Ruling,
    }
}

fn core_keep_reason(reason: wire::KeepReason) -> rules::KeepReason {
    match reason {
        wire::KeepReason::Decided => rules::KeepReason::Decided,
        wire::KeepReason::Clock => rules::KeepReason::Clock,
        wire::KeepReason::Absent => rules::KeepReason::Absent,
        wire::KeepReason::Ruling => rules::KeepReason::Ruling,
    }
}

/// The room's own table settings (the ones the rules core does not know): clocks and limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoomSettings {
    pub turn_clock_secs: u32,
    pub absence_limit_secs: u32,
    pub mulligan_clock_secs: u32,
    pub max_spectators: u32,
}

/// A table's settings on the wire.
pub(crate) fn settings(
    config: &rules::TableConfig,
    password: bool,
    room: RoomSettings,
) -> wire::Settings {
    let RoomSettings {
        turn_clock_secs,
        absence_limit_secs,
        mulligan_clock_secs,
        max_spectators,
    } = room;
    wire::Settings {
        seats: config.seats,
        spell_range: u8::from(config.spell_range),
        reduction: reduction(config.reduction),
        starting_life: config.starting_life,
        hand_size: config.hand_size,
        password,
        turn_clock_secs,
        absence_limit_secs,
        mulligan_clock_secs,
        max_spectators,
    }
}

/// What the room adds to the core's state in a snapshot.
#[derive(Debug)]
pub(crate) struct RoomFacts<'a> {
    pub table: wire::TableId,
    pub name: &'a str,
    pub password: bool,
    pub seq: u64,
    pub host: Option<wire::PlayerId>,
    pub spectators: u32,
    /// Seated players with a live connection.
    pub connected: &'a [rules::PlayerId],
    /// Players announced absent (`player_absent`) and not back yet.
    pub absent: &'a [rules::PlayerId],
    /// Players whose chat the host has muted.
    pub muted: &'a [rules::PlayerId],
    pub spectators_muted: bool,
    pub paused: bool,
    pub settings: RoomSettings,
}

/// A full snapshot of a table. The derived fields (spheres, whom each player may attack or
/// target, the mulligan decider) come from the rules core itself, so a client's mirrored view is
/// checked against the core, not against a second copy of the derivation.
pub(crate) fn view(core: &Table, facts: &RoomFacts<'_>) -> wire::TableView {
    let config = core.config();
    let settings = settings(config, facts.password, facts.settings);
    let mut view = wire::TableView::new(facts.table, facts.name, settings);
    view.seq = facts.seq;
    view.stage = stage(core.stage());
    view.host = facts.host;
    view.spectators = facts.spectators;
    view.paused = facts.paused;
    view.spectators_muted = facts.spectators_muted;
    if core.stage() == Stage::Lobby {
        view.players = core
            .lobby()
            .iter()
            .map(|(id, name)| wire::PlayerView {
                player: player(*id),
                name: name.clone(),
                seat: None,
                life: config.starting_life,
                poison: 0,
                status: wire::PlayerStatus::Alive,
                hand_size: config.hand_size,
                kept: false,
                connected: facts.connected.contains(id),
                absent: facts.absent.contains(id),
                muted: facts.muted.contains(id),
                may_attack: Vec::new(),
                may_target: Vec::new(),
            })
            .collect();
        return view;
    }
    view.first_player = core.first_player().map(player);
    view.mulligan_decider = core.mulligan_decider().map(player);
    view.players = core
        .players()
        .iter()
        .enumerate()
        .map(|(seat, p)| wire::PlayerView {
            player: player(p.id),
            name: p.name.clone(),
            seat: u8::try_from(seat).ok(),
            life: p.life,
            poison: p.poison,
            status: match p.status {
                rules::PlayerStatus::Alive => wire::PlayerStatus::Alive,
                rules::PlayerStatus::Eliminated => wire::PlayerStatus::Eliminated,
                rules::PlayerStatus::Removed => wire::PlayerStatus::Removed,
            },
            hand_size: p.hand_size,
            kept: p.kept,
            connected: facts.connected.contains(&p.id),
            absent: facts.absent.contains(&p.id),
            muted: facts.muted.contains(&p.id),
            may_attack: players(&core.attack_targets(p.id)),
            may_target: players(&core.damage_targets(p.id)),
        })
        .collect();
    view.ring = core.ring().map(|p| player(p.id)).collect();
    view.turns = core
        .turns()
        .iter()
        .map(|t| {
            let holder = core.players()[t.seat].id;
            let (state, ph) = match t.state {
                TurnState::Waiting => (wire::TurnStateName::Waiting, None),
                TurnState::Running(p) => (wire::TurnStateName::Running, Some(phase(p))),
                TurnState::Ended => (wire::TurnStateName::Ended, None),
            };
            wire::TurnView {
                turn: t.id.0,
                player: player(holder),
                state,
                phase: ph,
                marked_for_removal: t.removal_mark.is_some(),
                sphere: players(&core.sphere(holder)),
            }
        })
        .collect();
    view.standings = core.standings().iter().map(standing).collect();
    view
}

/// A wire event back as a core event, for rebuilding a table from its journal. Table-level
/// events (connections, host, chat, …) are not the core's and give `None`.
pub(crate) fn core_event(event: &wire::Event) -> Option<rules::Event> {
    use rules::Event as E;
    use wire::Event as W;
    let ids = |players: &[wire::PlayerId]| players.iter().copied().map(core_player).collect();
    Some(match event {
        W::PlayerJoined { player, name } => E::PlayerJoined {
            player: core_player(*player),
            name: name.clone(),
        },
        W::PlayerLeft { player } => E::PlayerLeft {
            player: core_player(*player),
        },
        W::GameStarted {
            seating,
            first_player,
            turn_holders,
        } => E::GameStarted {
            seating: ids(seating),
            first_player: core_player(*first_player),
            turn_holders: ids(turn_holders),
        },
        W::Mulliganed { player, hand_size } => E::Mulliganed {
            player: core_player(*player),
            hand_size: *hand_size,
        },
        W::Kept {
            player,
            hand_size,
            reason,
        } => E::Kept {
            player: core_player(*player),
            hand_size: *hand_size,
            reason: core_keep_reason(*reason),
        },
        W::TurnBegan { turn, player } => E::TurnBegan {
            turn: rules::TurnId(*turn),
            player: core_player(*player),
        },
        W::PhaseChanged { turn, phase } => E::PhaseChanged {
            turn: rules::TurnId(*turn),
            phase: core_phase(*phase),
        },
        W::Attacked {
            attacker,
            defender,
            damage,
            poison,
        } => E::Attacked {
            attacker: core_player(*attacker),
            defender: core_player(*defender),
            damage: *damage,
            poison: *poison,
        },
        W::DamageDealt {
            source,
            target,
            amount,
        } => E::DamageDealt {
            source: core_player(*source),
            target: core_player(*target),
            amount: *amount,
        },
        W::LifeChanged { player, life } => E::LifeChanged {
            player: core_player(*player),
            life: *life,
        },
        W::PoisonChanged { player, poison } => E::PoisonChanged {
            player: core_player(*player),
            poison: *poison,
        },
        W::Eliminated { players, cause } => E::Eliminated {
            players: ids(players),
            cause: match cause {
                wire::EliminationCause::Life => rules::EliminationCause::Life,
                wire::EliminationCause::Poison => rules::EliminationCause::Poison,
                wire::EliminationCause::Conceded => rules::EliminationCause::Conceded,
                wire::EliminationCause::Ruling => rules::EliminationCause::Ruling,
            },
        },
        W::TurnMarkedForRemoval { turn } => E::TurnMarkedForRemoval {
            turn: rules::TurnId(*turn),
        },
        W::TurnRemovalCancelled { turn } => E::TurnRemovalCancelled {
            turn: rules::TurnId(*turn),
        },
        W::TurnEnded {
            turn,
            player,
            reason,
        } => E::TurnEnded {
            turn: rules::TurnId(*turn),
            player: core_player(*player),
            reason: match reason {
                wire::TurnEndReason::Finished => rules::TurnEndReason::Finished,
                wire::TurnEndReason::Eliminated => rules::TurnEndReason::Eliminated,
                wire::TurnEndReason::Ruling => rules::TurnEndReason::Ruling,
                wire::TurnEndReason::Clock => rules::TurnEndReason::Clock,
                wire::TurnEndReason::Absent => rules::TurnEndReason::Absent,
            },
        },
        W::TurnPassed { turn, from, to } => E::TurnPassed {
            turn: rules::TurnId(*turn),
            from: core_player(*from),
            to: core_player(*to),
        },
        W::TurnRemoved {
            turn,
            player,
            reason,
        } => E::TurnRemoved {
            turn: rules::TurnId(*turn),
            player: core_player(*player),
            reason: match reason {
                wire::TurnRemovalReason::Merged => rules::TurnRemovalReason::Merged,
                wire::TurnRemovalReason::Reduced => rules::TurnRemovalReason::Reduced,
            },
        },
        W::PositionsRemoved { players } => E::PositionsRemoved {
            players: ids(players),
        },
        W::GameOver { standings } => E::GameOver {
            standings: standings
                .iter()
                .map(|s| rules::Standing {
                    player: core_player(s.player),
                    place: s.place,
                    mana_points: s.mana_points,
                })
                .collect(),
        },
        W::ConnectionChanged { .. }
        | W::HostChanged { .. }
        | W::SpectatorsChanged { .. }
        | W::Chat { .. }
        | W::TablePaused { .. }
        | W::PlayerAbsent { .. }
        | W::PlayerKicked { .. }
        | W::PlayerMuted { .. } => return None,
    })
}

/// The error code for a name or chat line the server refuses.
pub(crate) fn text_error(error: wire::text::TextError) -> wire::ErrorCode {
    match error {
        wire::text::TextError::Empty | wire::text::TextError::TooLong => wire::ErrorCode::BadName,
        wire::text::TextError::Forbidden(_) => wire::ErrorCode::BadText,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Actor, Command, TableConfig};

    /// Every core event of a whole game maps to the wire and back to itself.
    #[test]
    fn core_events_survive_the_round_trip_through_the_wire() {
        let config = TableConfig {
            seats: 20,
            seed: 5,
            ..TableConfig::default()
        };
        let names = (0..20).map(|i| format!("p{i}"));
        let (mut table, mut events) = Table::quick_start(config, names, None).unwrap_or_else(|e| {
            panic!("quick start: {e}");
        });
        let mut step = 0usize;
        while table.stage() == Stage::Playing && step < 10_000 {
            step += 1;
            let living: Vec<_> = table
                .players()
                .iter()
                .filter(|p| p.status.is_alive())
                .map(|p| p.id)
                .collect();
            let command = if step.is_multiple_of(5) {
                (Actor::Player(living[step % living.len()]), Command::Concede)
            } else {
                let turn = table
                    .turns()
                    .iter()
                    .find(|t| matches!(t.state, TurnState::Running(_)));
                let Some(turn) = turn else { break };
                (
                    Actor::Player(table.players()[turn.seat].id),
                    Command::EndTurn,
                )
            };
            if let Ok(out) = table.handle(command.0, command.1) {
                events.extend(out);
            }
        }
        assert_eq!(table.stage(), Stage::Finished);
        for e in &events {
            assert_eq!(core_event(&event(e)).as_ref(), Some(e));
        }
    }
}
