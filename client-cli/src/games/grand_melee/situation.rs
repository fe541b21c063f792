//! Where a Grand Melee player stands: the lobby, his mulligan decision, his turn, the turns he
//! waits for, the sphere he is in, the end.

use grand_melee_protocol::{Phase, PlayerId, PlayerStatus, StageName, TableView, TurnStateName};

use super::words::phase_words;
use crate::games::Urgency;
use crate::safe;
use crate::words::raw_name;

/// Where the player stands right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Situation {
    /// Watching as a spectator (or not seated).
    Spectating,
    /// In the lobby, waiting for the host to start.
    Lobby {
        /// Whether the player is the host (and may `start`).
        host: bool,
    },
    /// The player decides on a mulligan now.
    MulliganDecide {
        /// Cards in hand.
        hand: u8,
    },
    /// Another player decides on a mulligan.
    MulliganWait {
        /// Who decides.
        decider: String,
    },
    /// The player's turn is running.
    YourTurn {
        /// Its phase.
        phase: Option<Phase>,
    },
    /// The player holds a turn that may not begin yet because of these running turns.
    WaitingFor {
        /// Holders of the running turns whose spheres would overlap.
        holders: Vec<String>,
    },
    /// The player is in a running turn's sphere of influence.
    InSphere {
        /// The turn's holder.
        holder: String,
    },
    /// No turn concerns the player right now.
    Idle,
    /// The player is out of the game.
    Eliminated,
    /// The game is over.
    GameOver {
        /// The player's place, if he has one.
        place: Option<u8>,
    },
}

impl Situation {
    /// How pressing it is: the player's turn or mulligan decision is his to act on; a turn or
    /// a decision he waits for is someone else's.
    pub fn urgency(&self) -> Urgency {
        match self {
            Situation::YourTurn { .. } | Situation::MulliganDecide { .. } => Urgency::Act,
            Situation::WaitingFor { .. } | Situation::MulliganWait { .. } => Urgency::Wait,
            _ => Urgency::Calm,
        }
    }

    /// Works out the situation of `me` (`None` for a spectator).
    pub fn of(view: &TableView, me: Option<PlayerId>) -> Self {
        let Some(me) = me else {
            return Situation::Spectating;
        };
        match view.stage {
            StageName::Lobby => Situation::Lobby {
                host: view.host == Some(me),
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
                    hand: view.player(me).map_or(0, |p| p.hand_size),
                }
            }
            StageName::Mulligan => match view.mulligan_deciders.first() {
                // Paris mulligans: one decider; simultaneous: the others are still deciding.
                Some(&d) if view.mulligan_deciders.len() == 1 => Situation::MulliganWait {
                    decider: raw_name(view, d),
                },
                Some(_) => Situation::MulliganWait {
                    decider: format!("{} players", view.mulligan_deciders.len()),
                },
                None => Situation::Idle,
            },
            StageName::Playing => {
                if view
                    .player(me)
                    .is_some_and(|p| p.status != PlayerStatus::Alive)
                {
                    return Situation::Eliminated;
                }
                if let Some(turn) = view.turn_of(me) {
                    match turn.state {
                        TurnStateName::Running => {
                            return Situation::YourTurn { phase: turn.phase };
                        }
                        TurnStateName::Waiting => {
                            let mine = &turn.sphere;
                            let holders = view
                                .turns
                                .iter()
                                .filter(|t| t.state == TurnStateName::Running && t.player != me)
                                .filter(|t| t.sphere.iter().any(|p| mine.contains(p)))
                                .map(|t| raw_name(view, t.player))
                                .collect();
                            return Situation::WaitingFor { holders };
                        }
                        TurnStateName::Ended => {}
                    }
                }
                view.turns
                    .iter()
                    .find(|t| t.state == TurnStateName::Running && t.sphere.contains(&me))
                    .map_or(Situation::Idle, |t| Situation::InSphere {
                        holder: raw_name(view, t.player),
                    })
            }
        }
    }

    /// The script-mode words, e.g. `your_turn phase=combat` or `waiting_for "Ben"`.
    pub fn script(&self) -> String {
        match self {
            Situation::Spectating => "spectating".to_owned(),
            Situation::Lobby { host: true } => "lobby host".to_owned(),
            Situation::Lobby { host: false } => "lobby".to_owned(),
            Situation::MulliganDecide { hand } => format!("mulligan_decide hand={hand}"),
            Situation::MulliganWait { decider } => {
                format!("mulligan_wait decider={}", safe::quoted(decider))
            }
            Situation::YourTurn { phase } => {
                format!("your_turn phase={}", phase.map_or("none", Phase::name))
            }
            Situation::WaitingFor { holders } => {
                let holders: Vec<String> = holders.iter().map(|h| safe::quoted(h)).collect();
                format!("waiting_for {}", holders.join(","))
            }
            Situation::InSphere { holder } => format!("in_sphere {}", safe::quoted(holder)),
            Situation::Idle => "idle".to_owned(),
            Situation::Eliminated => "eliminated".to_owned(),
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
            Situation::Lobby { host: true } => {
                "In the lobby — you are the host: type `start` when everyone is here".to_owned()
            }
            Situation::Lobby { host: false } => {
                "In the lobby — waiting for the host to start".to_owned()
            }
            Situation::MulliganDecide { hand } => {
                format!("Your mulligan decision ({hand} cards): `keep` or `mulligan`")
            }
            Situation::MulliganWait { decider } => {
                format!(
                    "Waiting for {} to decide on a mulligan",
                    safe::printable(decider)
                )
            }
            Situation::YourTurn { phase } => match phase {
                Some(phase) => format!("YOUR TURN — {}", phase_words(*phase)),
                None => "YOUR TURN".to_owned(),
            },
            Situation::WaitingFor { holders } if holders.is_empty() => {
                "Your turn is about to begin".to_owned()
            }
            Situation::WaitingFor { holders } => {
                let holders: Vec<String> = holders.iter().map(|h| safe::printable(h)).collect();
                format!("Waiting for {} to finish", holders.join(" and "))
            }
            Situation::InSphere { holder } => format!("In {}'s sphere", safe::printable(holder)),
            Situation::Idle => "No turn near you".to_owned(),
            Situation::Eliminated => "You have been eliminated".to_owned(),
            Situation::GameOver { place } => match place {
                Some(1) => "Game over — you won!".to_owned(),
                Some(place) => format!("Game over — you finished #{place}"),
                None => "Game over".to_owned(),
            },
        }
    }
}
