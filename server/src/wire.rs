//! The edge between a connection's requests and the table: which requests are game commands
//! and with whose authority, and the snapshot of a table (its settings and state as a client
//! sees them).

use grand_melee_protocol as wire;

use grand_melee_protocol::rules::{self, Command};

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
                first_player: *first_player,
            },
        ),
        M::Mulligan { .. } => (Authority::Player, Command::Mulligan),
        M::Keep { .. } => (Authority::Player, Command::Keep),
        M::SetPhase { phase, .. } => (Authority::Player, Command::SetPhase { phase: *phase }),
        M::EndTurn { .. } => (Authority::Player, Command::EndTurn),
        M::Attack {
            target,
            damage,
            poison,
            ..
        } => (
            Authority::Player,
            Command::Attack {
                target: *target,
                damage: *damage,
                poison: *poison,
            },
        ),
        M::DealDamage { target, amount, .. } => (
            Authority::Player,
            Command::DealDamage {
                target: *target,
                amount: *amount,
            },
        ),
        M::ChangeLife { delta, .. } => (Authority::Player, Command::ChangeLife { delta: *delta }),
        M::ChangePoison { delta, .. } => {
            (Authority::Player, Command::ChangePoison { delta: *delta })
        }
        M::Concede { .. } => (Authority::Player, Command::Concede),
        M::Ruling { ruling, .. } => (Authority::Host, Command::Ruling(ruling.clone())),
        _ => return None,
    })
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
        reduction: config.reduction,
        starting_life: config.starting_life,
        hand_size: config.hand_size,
        password,
        turn_clock_secs,
        absence_limit_secs,
        mulligan_clock_secs,
        max_spectators,
    }
}

/// The error code for a name or chat line the server refuses.
pub(crate) fn text_error(error: wire::text::TextError) -> wire::ErrorCode {
    match error {
        wire::text::TextError::Empty | wire::text::TextError::TooLong => wire::ErrorCode::BadName,
        wire::text::TextError::Forbidden(_) => wire::ErrorCode::BadText,
    }
}
