//! Where a Magic Tech player stands: the lobby and his deck, his mulligan decision, his turn
//! and what he may still do in it, blocks he owes, a correction he must answer, the end.

use grand_melee_protocol::magic_tech_types::{DEPLOYMENTS_PER_TURN, LANDS_PER_TURN, MtPhase};
use grand_melee_protocol::{PlayerId, StageName, TableView};

use super::words::phase_words;
use crate::games::Urgency;
use crate::safe;
use crate::words::raw_name;

/// Where the player stands right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Situation {
    /// Watching as a spectator (or not seated).
    Spectating,
    /// In the lobby.
    Lobby {
        /// Whether the player is the host (and may `start`).
        host: bool,
        /// His declared deck size, if he has declared it.
        deck: Option<u8>,
    },
    /// The player decides on a mulligan now.
    MulliganDecide {
        /// Cards in hand.
        hand: u8,
    },
    /// The other player decides on a mulligan.
    MulliganWait {
        /// Who decides.
        decider: String,
    },
    /// The opponent's correction waits for the player's answer.
    Answer {
        /// Who proposed it.
        proposer: String,
    },
    /// A mission against the player waits for his blocks.
    Block {
        /// Its attackers.
        attackers: usize,
    },
    /// The player's turn.
    YourTurn {
        /// Its phase.
        phase: Option<MtPhase>,
        /// Non-land deployments left this turn.
        deploys: u8,
        /// Land drops left this turn.
        lands: u8,
    },
    /// The player's mission waits for the defender's blocks.
    AwaitingBlocks {
        /// The defender.
        defender: String,
    },
    /// The opponent's turn.
    TheirTurn {
        /// Whose.
        player: String,
        /// Its phase.
        phase: Option<MtPhase>,
    },
    /// The game is over.
    GameOver {
        /// The player's place, if he has one.
        place: Option<u8>,
    },
}

impl Situation {
    /// How pressing it is: his turn, his mulligan, his blocks and his answer are his to act
    /// on; the other's are someone else's.
    pub fn urgency(&self) -> Urgency {
        match self {
            Situation::YourTurn { .. }
            | Situation::MulliganDecide { .. }
            | Situation::Block { .. }
            | Situation::Answer { .. } => Urgency::Act,
            Situation::MulliganWait { .. }
            | Situation::AwaitingBlocks { .. }
            | Situation::TheirTurn { .. } => Urgency::Wait,
            _ => Urgency::Calm,
        }
    }

    /// Works out the situation of `me` (`None` for a spectator).
    pub fn of(view: &TableView, me: Option<PlayerId>) -> Self {
        let Some(me) = me else {
            return Situation::Spectating;
        };
        let board = view.magic_tech.as_deref();
        match view.stage {
            StageName::Lobby => Situation::Lobby {
                host: view.host == Some(me),
                deck: board
                    .and_then(|b| b.sides.iter().find(|s| s.player == me))
                    .and_then(|s| s.deck),
            },
            StageName::Finished => Situation::GameOver {
                place: view
                    .standings
                    .iter()
                    .find(|s| s.player == me)
                    .map(|s| s.place),
            },
            StageName::Mulligan if view.mulligan_deciders.contains(&me) => {
                Situation::MulliganDecide {
                    hand: board
                        .and_then(|b| b.sides.iter().find(|s| s.player == me))
                        .map_or(0, |s| s.hand),
                }
            }
            StageName::Mulligan => Situation::MulliganWait {
                decider: view
                    .mulligan_deciders
                    .first()
                    .map_or_else(String::new, |&d| raw_name(view, d)),
            },
            StageName::Playing => {
                let Some(board) = board else {
                    return Situation::TheirTurn {
                        player: String::new(),
                        phase: None,
                    };
                };
                if let Some(proposal) = board.proposal.as_ref().filter(|p| p.player != me) {
                    return Situation::Answer {
                        proposer: raw_name(view, proposal.player),
                    };
                }
                if let Some(mission) = &board.mission {
                    if mission.player == me {
                        let defender = board
                            .sides
                            .iter()
                            .find(|s| s.player != me)
                            .map_or_else(String::new, |s| raw_name(view, s.player));
                        return Situation::AwaitingBlocks { defender };
                    }
                    return Situation::Block {
                        attackers: mission.attackers.len(),
                    };
                }
                match board.active {
                    Some(active) if active == me => {
                        let allowed = if board.turn_number <= 1 {
                            1
                        } else {
                            DEPLOYMENTS_PER_TURN
                        };
                        Situation::YourTurn {
                            phase: board.phase,
                            deploys: allowed.saturating_sub(board.deployed),
                            lands: LANDS_PER_TURN.saturating_sub(board.lands),
                        }
                    }
                    Some(active) => Situation::TheirTurn {
                        player: raw_name(view, active),
                        phase: board.phase,
                    },
                    None => Situation::TheirTurn {
                        player: String::new(),
                        phase: None,
                    },
                }
            }
        }
    }

    /// The script-mode words, e.g. `your_turn phase=deploy deploys=2 lands=1`.
    pub fn script(&self) -> String {
        match self {
            Situation::Spectating => "spectating".to_owned(),
            Situation::Lobby { host, deck } => {
                let host = if *host { " host" } else { "" };
                match deck {
                    Some(deck) => format!("lobby{host} deck={deck}"),
                    None => format!("lobby{host} deck=none"),
                }
            }
            Situation::MulliganDecide { hand } => format!("mulligan_decide hand={hand}"),
            Situation::MulliganWait { decider } => {
                format!("mulligan_wait decider={}", safe::quoted(decider))
            }
            Situation::Answer { proposer } => {
                format!("answer proposer={}", safe::quoted(proposer))
            }
            Situation::Block { attackers } => format!("block attackers={attackers}"),
            Situation::YourTurn {
                phase,
                deploys,
                lands,
            } => format!(
                "your_turn phase={} deploys={deploys} lands={lands}",
                phase.map_or("none", phase_words)
            ),
            Situation::AwaitingBlocks { defender } => {
                format!("awaiting_blocks defender={}", safe::quoted(defender))
            }
            Situation::TheirTurn { player, phase } => format!(
                "their_turn player={} phase={}",
                safe::quoted(player),
                phase.map_or("none", phase_words)
            ),
            Situation::GameOver { place } => match place {
                Some(place) => format!("game_over place={place}"),
                None => "game_over".to_owned(),
            },
        }
    }

    /// The words for the terminal UI.
    pub fn text(&self) -> String {
        match self {
            Situation::Spectating => "Watching as a spectator".to_owned(),
            Situation::Lobby { host, deck } => {
                let deck = match deck {
                    Some(deck) => format!("your deck: {deck} cards"),
                    None => "declare your deck: `deck <n>`".to_owned(),
                };
                if *host {
                    format!("In the lobby — {deck}; you are the host: `start` when both are in")
                } else {
                    format!("In the lobby — {deck}; waiting for the host to start")
                }
            }
            Situation::MulliganDecide { hand } => {
                format!("Your mulligan decision ({hand} cards): `keep` or `mulligan`")
            }
            Situation::MulliganWait { decider } => format!(
                "Waiting for {} to decide on a mulligan",
                safe::printable(decider)
            ),
            Situation::Answer { proposer } => format!(
                "{} proposes a correction: `accept` or `decline`",
                safe::printable(proposer)
            ),
            Situation::Block { attackers } => format!(
                "MISSION against you ({attackers} attacker(s)): `block none` or `block <blocker>:<attacker>…`"
            ),
            Situation::YourTurn {
                phase,
                deploys,
                lands,
            } => match phase {
                Some(MtPhase::Deploy) => format!(
                    "YOUR TURN — deploy: {deploys} deployment(s), {lands} land(s) left; `next` for missions"
                ),
                Some(phase) => format!("YOUR TURN — {}; `next` when done", phase_words(*phase)),
                None => "YOUR TURN".to_owned(),
            },
            Situation::AwaitingBlocks { defender } => format!(
                "Waiting for {} to declare blocks",
                safe::printable(defender)
            ),
            Situation::TheirTurn { player, phase } => match phase {
                Some(phase) => format!(
                    "{}'s turn — {}",
                    safe::printable(player),
                    phase_words(*phase)
                ),
                None => format!("{}'s turn", safe::printable(player)),
            },
            Situation::GameOver { place: Some(1) } => "Game over — you won".to_owned(),
            Situation::GameOver { place: Some(_) } => "Game over — you lost".to_owned(),
            Situation::GameOver { place: None } => "Game over".to_owned(),
        }
    }
}
