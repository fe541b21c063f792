//! Mountain Magic's typed commands: the climb (`flip`, `place`, `discard`), the path (`path`),
//! the battle (`mana`, `cast`, `activate`, `attack`, `end`) and `concede`. The battle's cards
//! are named as the panel shows them: `y2` your card 2, `o1` the occupying forces' card 1 (a
//! bare number is one's own card, or for `attack`'s target the opponent's).

use grand_melee_protocol::ClientMessage;
use grand_melee_protocol::mountain_magic_types::{
    Colour, ForceRef, ManaPlace, MountainCommand, ROWS, Side,
};

use crate::games::Help;
use crate::words::{CommandError, Resolver};

/// The commands, with their usage and meaning, for `help`.
pub const HELP: Help = Help {
    play: &[
        ("flip", "turn over the top card of the spell deck"),
        (
            "place <row>:<pos>",
            "put the card to place on the mountain (row 1 is above the bottom row 0)",
        ),
        ("discard", "put the turned-over card on the discard pile"),
        (
            "path <p6> … <p0>",
            "your forces: the place in each row from the top card down, e.g. `path 0 0 1 1 2 2 3`",
        ),
        (
            "mana none|<card> [ability] <w|u|b|r|g>",
            "where the land you drew goes: on a card (or its ability), or unused",
        ),
        (
            "cast <card> [target]",
            "use a powered card's effect, e.g. `cast y3 o1`",
        ),
        (
            "activate <card> [target]",
            "use a stored use of a creature's ability",
        ),
        (
            "attack <target> <attackers…>",
            "your powered creatures attack one occupying card, e.g. `attack o2 y0 y4`",
        ),
        ("end", "end your battle turn: the occupying forces act"),
        ("concede", "give up the climb"),
    ],
    host: &[],
};

/// The first words, for completion.
pub const NAMES: &[&str] = &[
    "activate", "attack", "cast", "concede", "discard", "end", "flip", "mana", "path", "place",
];

/// The commands that cannot be undone, with the question asked before sending one.
pub const CONFIRM: &[(&str, &str)] = &[("concede", "Give up the climb?")];

/// The words completing a command's argument.
pub fn arguments(word: &str) -> Option<&'static [&'static str]> {
    match word {
        "mana" => Some(&["none", "ability", "w", "u", "b", "r", "g"]),
        _ => None,
    }
}

fn number(word: &str, usage: &'static str) -> Result<u8, CommandError> {
    word.parse().map_err(|_| CommandError::Usage(usage))
}

/// A card in the battle: `y2`, `o1`, or a bare number on `bare`'s side.
fn force(word: &str, bare: Side, usage: &'static str) -> Result<ForceRef, CommandError> {
    let word = word.to_ascii_lowercase();
    let (side, digits) = match word.as_bytes().first() {
        Some(b'y') => (Side::Player, &word[1..]),
        Some(b'o') => (Side::Opponent, &word[1..]),
        _ => (bare, word.as_str()),
    };
    Ok(ForceRef {
        side,
        force: number(digits, usage)?,
    })
}

fn own(word: &str, usage: &'static str) -> Result<u8, CommandError> {
    match force(word, Side::Player, usage)? {
        ForceRef {
            side: Side::Player,
            force,
        } => Ok(force),
        _ => Err(CommandError::Usage(usage)),
    }
}

fn colour(word: &str, usage: &'static str) -> Result<Colour, CommandError> {
    Ok(match word.to_ascii_lowercase().as_str() {
        "w" | "white" => Colour::White,
        "u" | "blue" => Colour::Blue,
        "b" | "black" => Colour::Black,
        "r" | "red" => Colour::Red,
        "g" | "green" => Colour::Green,
        _ => return Err(CommandError::Usage(usage)),
    })
}

const PLACE: &str = "place <row>:<pos>";
const PATH: &str = "path <p6> … <p0> (7 places, top first)";
const MANA: &str = "mana none|<card> [ability] <w|u|b|r|g>";
const CAST: &str = "cast <card> [target]";
const ACTIVATE: &str = "activate <card> [target]";
const ATTACK: &str = "attack <target> <attackers…>";

/// Parses a command whose first word (lower-cased) is `word`: `Ok(None)` if it is not one.
pub fn parse(
    word: &str,
    words: &[&str],
    _rest: &str,
    _resolve: &Resolver<'_>,
) -> Result<Option<ClientMessage>, CommandError> {
    let command = match word {
        "concede" => return Ok(Some(ClientMessage::Concede { id: 0 })),
        "flip" => MountainCommand::Flip,
        "discard" => MountainCommand::Discard,
        "end" => MountainCommand::EndTurn,
        "place" => {
            let joined = words.join(":");
            let mut parts = joined.split(':').filter(|p| !p.is_empty());
            let (Some(row), Some(pos), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(CommandError::Usage(PLACE));
            };
            MountainCommand::Place {
                row: number(row, PLACE)?,
                pos: number(pos, PLACE)?,
            }
        }
        "path" => {
            let joined = words.join(" ");
            let path: Vec<u8> = if words.len() == 1 && !joined.contains(',') {
                joined
                    .chars()
                    .map(|c| c.to_digit(10).and_then(|d| u8::try_from(d).ok()))
                    .collect::<Option<_>>()
                    .ok_or(CommandError::Usage(PATH))?
            } else {
                joined
                    .split([' ', ','])
                    .filter(|p| !p.is_empty())
                    .map(|p| number(p, PATH))
                    .collect::<Result<_, _>>()?
            };
            if path.len() != usize::from(ROWS) {
                return Err(CommandError::Usage(PATH));
            }
            MountainCommand::Path { path }
        }
        "mana" => match words {
            [none] if none.eq_ignore_ascii_case("none") => MountainCommand::Mana { place: None },
            [card, colour_word] => MountainCommand::Mana {
                place: Some(ManaPlace {
                    force: own(card, MANA)?,
                    ability: false,
                    colour: colour(colour_word, MANA)?,
                }),
            },
            [card, ability, colour_word] if ability.eq_ignore_ascii_case("ability") => {
                MountainCommand::Mana {
                    place: Some(ManaPlace {
                        force: own(card, MANA)?,
                        ability: true,
                        colour: colour(colour_word, MANA)?,
                    }),
                }
            }
            _ => return Err(CommandError::Usage(MANA)),
        },
        "cast" | "activate" => {
            let usage = if word == "cast" { CAST } else { ACTIVATE };
            let (card, target) = match words {
                [card] => (own(card, usage)?, None),
                [card, target] => (
                    own(card, usage)?,
                    Some(force(target, Side::Opponent, usage)?),
                ),
                _ => return Err(CommandError::Usage(usage)),
            };
            if word == "cast" {
                MountainCommand::Cast {
                    force: card,
                    target,
                }
            } else {
                MountainCommand::Activate {
                    force: card,
                    target,
                }
            }
        }
        "attack" => {
            let [target, attackers @ ..] = words else {
                return Err(CommandError::Usage(ATTACK));
            };
            if attackers.is_empty() {
                return Err(CommandError::Usage(ATTACK));
            }
            let target = match force(target, Side::Opponent, ATTACK)? {
                ForceRef {
                    side: Side::Opponent,
                    force,
                } => force,
                _ => return Err(CommandError::Usage(ATTACK)),
            };
            MountainCommand::Attack {
                attackers: attackers
                    .iter()
                    .map(|a| own(a, ATTACK))
                    .collect::<Result<_, _>>()?,
                target,
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(ClientMessage::mountain_magic(0, command)))
}
