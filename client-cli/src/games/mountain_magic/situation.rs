//! Where a climber stands: the lobby, the card to place (and where it may go), the path to
//! choose, his turn in the battle (a land to place, or his cards to use), the occupying
//! forces' turn, the end.

use grand_melee_protocol::mountain_magic::Climb;
use grand_melee_protocol::mountain_magic_types::{Colour, MmPhase, Side};
use grand_melee_protocol::{ErrorCode, PlayerId, StageName, TableView};

use super::words::card;
use crate::games::Urgency;
use crate::safe;

/// Where the climber stands right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Situation {
    /// Watching as a spectator (or not seated).
    Spectating,
    /// In the lobby.
    Lobby {
        /// Whether the player is the host (and may `start`).
        host: bool,
    },
    /// Climbing: a card to place, or one to flip.
    Climb {
        /// The card to place now, if any (else `flip`).
        card: Option<String>,
        /// Places it may go (`row:pos`).
        places: Vec<(u8, u8)>,
        /// Whether the card is the discard pile's top, placeable right after a placement
        /// (the choice is then `place` or `flip`; for a turned-over card, `place` or
        /// `discard`).
        recovered: bool,
    },
    /// The mountain is complete: the path to choose.
    Path,
    /// The climber's battle turn.
    YourTurn {
        /// The land drawn, waiting for `mana`.
        land: Option<String>,
        /// Where it may go, as `mana`'s words joined by `:` (`y0:r`, `y2:ability:r`): empty,
        /// it is let go (`mana none`); otherwise it must go on one of them.
        places: Vec<String>,
    },
    /// The occupying forces act.
    TheirTurn,
    /// The climb is over.
    Over {
        /// The ending's name (or the failed climb).
        ending: String,
    },
}

/// The ending's words for a finished climb.
pub fn outcome_words(climb: &Climb) -> Option<String> {
    use grand_melee_protocol::mountain_magic_types::Outcome;
    climb.view().outcome.map(|outcome| match outcome {
        Outcome::FailedClimb => "the climb failed".to_owned(),
        Outcome::Battle { ending } => ending.name().to_owned(),
    })
}

impl Situation {
    /// How pressing it is: everything but the opponent's turn is the climber's to act on.
    pub fn urgency(&self) -> Urgency {
        match self {
            Situation::Climb { .. } | Situation::Path | Situation::YourTurn { .. } => Urgency::Act,
            Situation::TheirTurn => Urgency::Wait,
            _ => Urgency::Calm,
        }
    }

    /// Works out the situation of `me` (`None` for a spectator).
    pub fn of(view: &TableView, me: Option<PlayerId>) -> Self {
        let Some(me) = me.filter(|me| view.players.iter().any(|p| p.player == *me)) else {
            return Situation::Spectating;
        };
        if view.stage == StageName::Lobby {
            return Situation::Lobby {
                host: view.host == Some(me),
            };
        }
        let climb = Climb::from_view(view.mountain_magic.as_deref().cloned().unwrap_or_default());
        if view.stage == StageName::Finished || climb.view().phase == MmPhase::Over {
            return Situation::Over {
                ending: outcome_words(&climb).unwrap_or_else(|| "conceded".to_owned()),
            };
        }
        match climb.view().phase {
            MmPhase::Undealt | MmPhase::Over => Situation::Lobby { host: false },
            MmPhase::Climbing => {
                let places = climb.placements();
                let recovered = climb.view().flipped.is_none();
                // The discard pile's top that fits nowhere is no choice: `flip`.
                let offered = !(recovered && places.is_empty());
                Situation::Climb {
                    card: climb.card_to_place().filter(|_| offered).map(card),
                    places,
                    recovered,
                }
            }
            MmPhase::Path => Situation::Path,
            MmPhase::Battle => match climb.view().battle.as_ref() {
                Some(b) if b.turn == Some(Side::Player) => Situation::YourTurn {
                    land: b.pending_land.map(card),
                    places: climb
                        .mana_places(Side::Player)
                        .iter()
                        .map(|p| {
                            let colour = match p.colour {
                                Colour::White => 'w',
                                Colour::Blue => 'u',
                                Colour::Black => 'b',
                                Colour::Red => 'r',
                                Colour::Green => 'g',
                            };
                            let ability = if p.ability { ":ability" } else { "" };
                            format!("y{}{ability}:{colour}", p.force)
                        })
                        .collect(),
                },
                _ => Situation::TheirTurn,
            },
        }
    }

    /// The script-mode words (after `you `).
    pub fn script(&self) -> String {
        match self {
            Situation::Spectating => "spectating".to_owned(),
            Situation::Lobby { host } => {
                format!("lobby{}", if *host { " host" } else { "" })
            }
            Situation::Climb {
                card,
                places,
                recovered,
            } => match card {
                Some(card) => format!(
                    "place card={} places={} from={}",
                    safe::quoted(card),
                    places_field(places),
                    if *recovered { "discard_pile" } else { "deck" }
                ),
                None => "flip".to_owned(),
            },
            Situation::Path => "path".to_owned(),
            Situation::YourTurn {
                land: Some(land),
                places,
            } => {
                let places = if places.is_empty() {
                    "none".to_owned()
                } else {
                    places.join(",")
                };
                format!("your_turn land={} places={places}", safe::quoted(land))
            }
            Situation::YourTurn { land: None, .. } => "your_turn".to_owned(),
            Situation::TheirTurn => "their_turn".to_owned(),
            Situation::Over { ending } => format!("over ending={}", safe::quoted(ending)),
        }
    }

    /// The words for the terminal UI.
    pub fn text(&self) -> String {
        self.texts().swap_remove(0)
    }

    /// The words for the terminal UI in at most `width` columns: the fullest wording that fits
    /// (a prompt that names the card, every place it may go and the commands is too wide for
    /// an 80-column terminal with a long name or many places; the panel below names them all
    /// anyway), else the shortest, whole.
    pub fn text_within(&self, width: usize) -> String {
        let mut texts = self.texts();
        let fits = texts
            .iter()
            .position(|t| unicode_width::UnicodeWidthStr::width(t.as_str()) <= width);
        match fits {
            Some(i) => texts.swap_remove(i),
            None => texts.pop().unwrap_or_default(),
        }
    }

    /// Its wordings for the terminal UI, fullest first.
    fn texts(&self) -> Vec<String> {
        match self {
            Situation::Spectating => vec!["Watching a climb as a spectator".to_owned()],
            Situation::Lobby { host: true } => {
                vec!["In the lobby: `start` to deal your mountain".to_owned()]
            }
            Situation::Lobby { host: false } => {
                vec!["In the lobby: waiting for the deal".to_owned()]
            }
            Situation::Climb { card: None, .. } => {
                vec!["Climbing: `flip` the top spell card".to_owned()]
            }
            Situation::Climb {
                card: Some(card),
                places,
                ..
            } if places.is_empty() => vec![
                format!(
                    "Climbing: {} fits nowhere: `discard` it",
                    safe::printable(card)
                ),
                "Climbing: the card fits nowhere: `discard` it".to_owned(),
            ],
            Situation::Climb {
                card: Some(card),
                places,
                recovered,
            } => {
                let card = safe::printable(card);
                let other = if *recovered { "flip" } else { "discard" };
                let (row, pos) = places[0];
                let all = places_words(places);
                vec![
                    format!("Climbing: {card} may go at {all}: `place {row}:{pos}` or `{other}`"),
                    format!("{card} may go at {all}: `place {row}:{pos}` or `{other}`"),
                    format!("Climbing: `place {row}:{pos}` (or another ▸ place) or `{other}`"),
                    format!("`place {row}:{pos}` or `{other}`"),
                ]
            }
            Situation::Path => vec![
                "The mountain is complete: choose your path, `path <7 places, top first>`"
                    .to_owned(),
                "Choose your path: `path <7 places, top first>`".to_owned(),
            ],
            Situation::YourTurn {
                land: Some(land),
                places,
            } if places.is_empty() => {
                let land = safe::printable(land);
                vec![
                    format!(
                        "Your turn: you drew {land}, which no card of yours can use: `mana none`"
                    ),
                    format!("You drew {land}, no card can use it: `mana none`"),
                    "A land no card can use: `mana none`".to_owned(),
                ]
            }
            // A land a card can use must go on one (the seed: "place it on the card").
            Situation::YourTurn {
                land: Some(land), ..
            } => {
                let land = safe::printable(land);
                vec![
                    format!("Your turn: you drew {land}: `mana <card> [ability] <colour>`"),
                    format!("You drew {land}: `mana <card> [ability] <colour>`"),
                    "A land to place: `mana <card> [ability] <colour>`".to_owned(),
                ]
            }
            Situation::YourTurn { land: None, .. } => {
                vec!["Your turn: `cast`, `activate`, `attack`, then `end`".to_owned()]
            }
            Situation::TheirTurn => vec!["The occupying forces act".to_owned()],
            Situation::Over { ending } => {
                vec![format!("The climb is over: {}", safe::printable(ending))]
            }
        }
    }
}

/// Places for people: `1:0`, `1:0 or 1:3`, `1:0, 1:3 or 2:1`.
pub fn places_words(places: &[(u8, u8)]) -> String {
    let words: Vec<String> = places.iter().map(|(r, p)| format!("{r}:{p}")).collect();
    match words.split_last() {
        None => "nowhere".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Places as `row:pos,…` (`none` for none).
pub fn places_field(places: &[(u8, u8)]) -> String {
    if places.is_empty() {
        return "none".to_owned();
    }
    places
        .iter()
        .map(|(row, pos)| format!("{row}:{pos}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Where the card to place may go, for a refused placement (`illegal_placement`): the places
/// the rules allow now ([`Climb::placements`], as the server decides them), or that it fits
/// nowhere and what to do instead. `None` for any other refusal, or with no card to place.
pub fn refusal_hint(code: ErrorCode, view: &TableView) -> Option<String> {
    if code != ErrorCode::IllegalPlacement {
        return None;
    }
    let climb = Climb::from_view(view.mountain_magic.as_deref().cloned()?);
    climb.card_to_place()?;
    let places = climb.placements();
    Some(if places.is_empty() {
        let instead = if climb.view().flipped.is_some() {
            "discard"
        } else {
            "flip"
        };
        format!("it fits nowhere now: `{instead}`")
    } else {
        format!("it fits only at {}", places_words(&places))
    })
}
