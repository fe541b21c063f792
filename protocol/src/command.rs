//! What can be asked of a table.

use serde::{Deserialize, Serialize};

use crate::client::ClientMessage;
use crate::league::SeatDeck;
use crate::magic_tech_types::MagicTechCommand;
use crate::mountain_magic_types::MountainCommand;
use crate::types::{Expiry, Phase, PlayerId, Ruling, SeatingMode};

/// Who issues a command. The server authenticates connections; the core only checks that the
/// actor is allowed to do what he asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Actor {
    /// A seated player.
    Player(PlayerId),
    /// The table's host (or the server acting with the host's authority, e.g. to seat players).
    Host,
}

/// A request to the table. Every command is either accepted, producing events, or rejected with
/// a [`ErrorCode`](crate::ErrorCode) that changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    /// Seat a new player (lobby only; issued by the host/server for a joining connection).
    Join {
        /// Display name, 1–32 characters, unique at the table.
        name: String,
        /// What his client contributes to the table's dice (0–64 characters).
        entropy: String,
        /// His league deck, at a league table (the server looks it up from his member token).
        deck: Option<SeatDeck>,
    },
    /// Give up a seat before the game has started.
    Leave,
    /// Shuffle the seating, draw or set the first player and deal the starting turns.
    Start {
        /// The first player, if the host chooses; otherwise drawn from the table's seed.
        first_player: Option<PlayerId>,
        /// Random (the dice), join order, or the host's `order`.
        seating: SeatingMode,
        /// With [`SeatingMode::Arranged`]: every lobby player exactly once, seat 0 first;
        /// empty otherwise.
        order: Vec<PlayerId>,
    },
    /// At a league table, the player whose deck is furthest behind (5 points or more) chooses
    /// who plays first (lobby only).
    ChooseFirst {
        /// Who plays first.
        player: PlayerId,
    },
    /// Paris mulligan: redraw one card fewer.
    Mulligan,
    /// Keep the current hand; the decision passes to the next player.
    Keep,
    /// Move the running turn's phase indicator.
    SetPhase {
        /// The new phase.
        phase: Phase,
    },
    /// End the player's running turn; it passes to the left.
    EndTurn,
    /// Attack an opponent in range during combat.
    Attack {
        /// The defending player.
        target: PlayerId,
        /// Combat damage dealt (0 if fully blocked).
        damage: u32,
        /// Poison counters dealt.
        poison: u32,
    },
    /// Deal damage to a player in range (a spell or ability).
    DealDamage {
        /// The player who is dealt damage.
        target: PlayerId,
        /// How much (at least 1).
        amount: u32,
    },
    /// Change one's own life total.
    ChangeLife {
        /// Amount gained (positive) or lost (negative), not 0.
        delta: i32,
    },
    /// Change one's own poison counters (never below 0).
    ChangePoison {
        /// Counters added (positive) or removed (negative), not 0.
        delta: i32,
    },
    /// Leave the game.
    Concede,
    /// Take an extra turn after the one he is taking (Time Walk and friends).
    ExtraTurn,
    /// Combat with Dice: roll for an attack during his combat.
    AttackRoll {
        /// The defending player.
        defender: PlayerId,
        /// The attacking creature's power.
        attacker_power: u32,
        /// The blocking creatures' powers (empty: undefended).
        blocker_powers: Vec<u32>,
    },
    /// Combat with Dice: the blocking player's defensive counter strike.
    CounterRoll {
        /// The attacking player whose attack he blocked.
        attacker: PlayerId,
        /// The blocking creature's power.
        blocker_power: u32,
        /// The attacking creature's power.
        attacker_power: u32,
    },
    /// A ruling by the host.
    Ruling(Ruling),
    /// The table ends a running turn by itself (turn clock, absent player). The caller decides
    /// when: the core has no clock. Needs the host's authority.
    ExpireTurn {
        /// Whose turn.
        player: PlayerId,
        /// Why.
        reason: Expiry,
    },
    /// The table takes the deciding player's mulligan decision as `keep` by itself (mulligan
    /// clock, absent player). The caller decides when: the core has no clock. Needs the host's
    /// authority.
    ExpireMulligan {
        /// The deciding player.
        player: PlayerId,
        /// Why.
        reason: Expiry,
    },
    /// The table ends a game nobody is left at, as it stands (`game_abandoned`, `game_over`
    /// with the living players sharing the best place, `dice_revealed`). The caller decides
    /// when (every living player away for the absence limit): the core has no clock. Needs the
    /// host's authority; only the session issues it.
    Abandon,
    /// A Magic Tech request (refused by every other game).
    MagicTech(MagicTechCommand),
    /// A Mountain Magic request (refused by every other game).
    MountainMagic(MountainCommand),
}

impl Command {
    /// Start with a random seating, the first player as given or drawn.
    pub fn start(first_player: Option<PlayerId>) -> Self {
        Command::Start {
            first_player,
            seating: SeatingMode::Random,
            order: Vec::new(),
        }
    }

    /// Seat `name` with no dice entropy.
    pub fn join(name: impl Into<String>) -> Self {
        Command::Join {
            name: name.into(),
            entropy: String::new(),
            deck: None,
        }
    }
}

/// Whose authority a game request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Authority {
    /// The table's host.
    Host,
    /// The seated player who sends it.
    Player,
}

impl ClientMessage {
    /// The game command a request asks for, and whose authority it needs; `None` for session
    /// and table-level requests (hello, join, chat, pause, …).
    pub fn command(&self) -> Option<(Authority, Command)> {
        use ClientMessage as M;
        use MagicTechCommand as MT;
        use MountainCommand as MM;
        Some(match self {
            M::Start {
                first_player,
                seating,
                order,
                ..
            } => (
                Authority::Host,
                Command::Start {
                    first_player: *first_player,
                    seating: *seating,
                    order: order.clone(),
                },
            ),
            M::ChooseFirst { player, .. } => {
                (Authority::Player, Command::ChooseFirst { player: *player })
            }
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
            M::ChangeLife { delta, .. } => {
                (Authority::Player, Command::ChangeLife { delta: *delta })
            }
            M::ChangePoison { delta, .. } => {
                (Authority::Player, Command::ChangePoison { delta: *delta })
            }
            M::Concede { .. } => (Authority::Player, Command::Concede),
            M::ExtraTurn { .. } => (Authority::Player, Command::ExtraTurn),
            M::AttackRoll {
                defender,
                attacker_power,
                blocker_powers,
                ..
            } => (
                Authority::Player,
                Command::AttackRoll {
                    defender: *defender,
                    attacker_power: *attacker_power,
                    blocker_powers: blocker_powers.clone(),
                },
            ),
            M::CounterRoll {
                attacker,
                blocker_power,
                attacker_power,
                ..
            } => (
                Authority::Player,
                Command::CounterRoll {
                    attacker: *attacker,
                    blocker_power: *blocker_power,
                    attacker_power: *attacker_power,
                },
            ),
            M::Ruling { ruling, .. } => (Authority::Host, Command::Ruling(ruling.clone())),
            M::MagicTechDeclareDeck { size, .. } => (
                Authority::Player,
                Command::MagicTech(MT::DeclareDeck { size: *size }),
            ),
            M::MagicTechNextPhase { .. } => (Authority::Player, Command::MagicTech(MT::NextPhase)),
            M::MagicTechDeploy { land, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Deploy { land: land.clone() }),
            ),
            M::MagicTechTap { card, mana, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Tap {
                    card: *card,
                    mana: *mana,
                }),
            ),
            M::MagicTechPay { card, amount, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Pay {
                    card: *card,
                    amount: *amount,
                }),
            ),
            M::MagicTechReveal { card, face, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Reveal {
                    card: *card,
                    face: face.clone(),
                }),
            ),
            M::MagicTechRelocate { card, area, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Relocate {
                    card: *card,
                    area: *area,
                }),
            ),
            M::MagicTechMission {
                attackers, target, ..
            } => (
                Authority::Player,
                Command::MagicTech(MT::Mission {
                    attackers: attackers.clone(),
                    target: *target,
                }),
            ),
            M::MagicTechBlock { blocks, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Block {
                    blocks: blocks.clone(),
                }),
            ),
            M::MagicTechDamage { target, amount, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Damage {
                    target: *target,
                    amount: *amount,
                }),
            ),
            M::MagicTechHeal { card, amount, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Heal {
                    card: *card,
                    amount: *amount,
                }),
            ),
            M::MagicTechRegenerate { card, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Regenerate { card: *card }),
            ),
            M::MagicTechDraw { count, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Draw { count: *count }),
            ),
            M::MagicTechLife { delta, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Life { delta: *delta }),
            ),
            M::MagicTechLeavePlay { card, to, .. } => (
                Authority::Player,
                Command::MagicTech(MT::LeavePlay {
                    card: *card,
                    to: *to,
                }),
            ),
            M::MagicTechPropose { correction, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Propose {
                    correction: correction.clone(),
                }),
            ),
            M::MagicTechAnswer { accept, .. } => (
                Authority::Player,
                Command::MagicTech(MT::Answer { accept: *accept }),
            ),
            M::MagicTechRule { correction, .. } => (
                Authority::Host,
                Command::MagicTech(MT::Rule {
                    correction: correction.clone(),
                }),
            ),
            M::MountainMagicFlip { .. } => (Authority::Player, Command::MountainMagic(MM::Flip)),
            M::MountainMagicPlace { row, pos, .. } => (
                Authority::Player,
                Command::MountainMagic(MM::Place {
                    row: *row,
                    pos: *pos,
                }),
            ),
            M::MountainMagicDiscard { .. } => {
                (Authority::Player, Command::MountainMagic(MM::Discard))
            }
            M::MountainMagicPath { path, .. } => (
                Authority::Player,
                Command::MountainMagic(MM::Path { path: path.clone() }),
            ),
            M::MountainMagicMana { place, .. } => (
                Authority::Player,
                Command::MountainMagic(MM::Mana { place: *place }),
            ),
            M::MountainMagicAttack {
                attackers, target, ..
            } => (
                Authority::Player,
                Command::MountainMagic(MM::Attack {
                    attackers: attackers.clone(),
                    target: *target,
                }),
            ),
            M::MountainMagicCast { force, target, .. } => (
                Authority::Player,
                Command::MountainMagic(MM::Cast {
                    force: *force,
                    target: *target,
                }),
            ),
            M::MountainMagicActivate { force, target, .. } => (
                Authority::Player,
                Command::MountainMagic(MM::Activate {
                    force: *force,
                    target: *target,
                }),
            ),
            M::MountainMagicEndTurn { .. } => {
                (Authority::Player, Command::MountainMagic(MM::EndTurn))
            }
            _ => return None,
        })
    }
}
