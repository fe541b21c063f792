//! Grand Melee's typed commands: a turn's (`end`, `phase`), combat (`attack`, `damage`, `roll`,
//! `counter`), life and poison, the mulligan (`keep`, `mulligan`), `concede`, `extra`, and the
//! host's rulings (`rule …`).

use grand_melee_protocol::{ClientMessage, Phase, PlayerId, Ruling, TableView};

use crate::games::Help;
use crate::words::{CommandError, Resolver, amount, delta};

/// The commands, with their usage and meaning, for `help`: the players' and the host's rulings.
pub const HELP: Help = Help {
    play: &[
        ("end", "end your running turn (it passes to the left)"),
        (
            "phase <name>|next",
            "move your turn to beginning, main1, combat, main2 or end",
        ),
        (
            "attack <who> [damage] [poison]",
            "attack a player in range (combat only)",
        ),
        (
            "damage <who> <n>",
            "deal n damage to a player in range (a spell or ability)",
        ),
        ("life ±n", "gain or lose life, e.g. `life -3`, `life +2`"),
        ("poison ±n", "add or remove your poison counters"),
        ("keep", "keep your hand (mulligan stage)"),
        ("mulligan", "Paris mulligan: redraw one card fewer"),
        ("concede", "leave the game"),
        (
            "extra",
            "take an extra turn after this one (Time Walk and friends)",
        ),
        (
            "roll <who> <power> [blocker powers…]",
            "Combat with Dice: roll for an attacking creature (no blockers: undefended)",
        ),
        (
            "counter <who> <your power> <their power>",
            "Combat with Dice: your blocker strikes back at the attacker",
        ),
    ],
    host: &[
        (
            "rule eliminate <who>[, <who>…]",
            "host: eliminate players together",
        ),
        ("rule life <who> <n>", "host: set a player's life total"),
        (
            "rule poison <who> <n>",
            "host: set a player's poison counters",
        ),
        ("rule end <who>", "host: end a player's running turn"),
        (
            "rule extra <who>",
            "host: a player takes an extra turn (after his current one, or before his next)",
        ),
        (
            "rule keep <who>",
            "host: keep the hand of the player whose mulligan decision it is",
        ),
    ],
};

/// The commands that cannot be undone, with the question the full-screen UI asks first.
pub const CONFIRM: &[(&str, &str)] = &[
    (
        "concede",
        "Concede? You leave the game for good and cannot come back.",
    ),
    (
        "extra",
        "Take an extra turn after this one? Only when a card gives you one (Time Walk…).",
    ),
    (
        "roll",
        "Roll the d20 for this attack? The roll is final and everyone sees it.",
    ),
];

/// The first words of the commands, for completion.
pub const NAMES: &[&str] = &[
    "attack", "concede", "counter", "damage", "end", "extra", "keep", "life", "mulligan", "phase",
    "poison", "roll", "rule",
];

/// The kinds of `rule`, for completion.
pub const RULINGS: &[&str] = &["eliminate", "end", "keep", "life", "poison"];

/// The names of `phase`, for completion (a unique start of one is accepted too).
pub const PHASES: &[&str] = &["beginning", "main1", "combat", "main2", "end", "next"];

/// The words that complete the argument after `word` (the kinds of `rule`, the phases), if it
/// takes one of a few words rather than a player.
pub fn arguments(word: &str) -> Option<&'static [&'static str]> {
    match word {
        "rule" => Some(RULINGS),
        "phase" => Some(PHASES),
        _ => None,
    }
}

/// Parses a Grand Melee command whose first word (lower-cased) is `word`: `Ok(None)` if it is
/// not one of them.
pub fn parse(
    word: &str,
    words: &[&str],
    rest: &str,
    resolve: &Resolver<'_>,
) -> Result<Option<ClientMessage>, CommandError> {
    let (view, me) = (resolve.view, resolve.me);
    Ok(Some(match word {
        "end" | "done" | "pass" => ClientMessage::EndTurn { id: 0 },
        "keep" => ClientMessage::Keep { id: 0 },
        "mulligan" | "mull" => ClientMessage::Mulligan { id: 0 },
        "concede" => ClientMessage::Concede { id: 0 },
        "extra" | "extra-turn" => ClientMessage::ExtraTurn { id: 0 },
        "roll" => {
            let (defender, rest) = resolve.take(words)?;
            let Some((power, blockers)) = rest.split_first() else {
                return Err(CommandError::Usage("roll <who> <power> [blocker powers…]"));
            };
            ClientMessage::AttackRoll {
                id: 0,
                defender,
                attacker_power: amount(power)?,
                blocker_powers: blockers
                    .iter()
                    .map(|b| amount(b))
                    .collect::<Result<_, _>>()?,
            }
        }
        "counter" => {
            let (attacker, rest) = resolve.take(words)?;
            let [mine, theirs] = rest else {
                return Err(CommandError::Usage(
                    "counter <who> <your power> <their power>",
                ));
            };
            ClientMessage::CounterRoll {
                id: 0,
                attacker,
                blocker_power: amount(mine)?,
                attacker_power: amount(theirs)?,
            }
        }
        "phase" => {
            let [name] = words[..] else {
                return Err(CommandError::Usage(
                    "phase <beginning|main1|combat|main2|end|next>",
                ));
            };
            ClientMessage::SetPhase {
                id: 0,
                phase: parse_phase(name, view, me)?,
            }
        }
        "attack" | "a" => {
            let (target, rest) = resolve.take(words)?;
            let (damage, poison) = match rest {
                [] => (0, 0),
                [d] => (amount(d)?, 0),
                [d, p] => (amount(d)?, amount(p)?),
                _ => return Err(CommandError::Usage("attack <who> [damage] [poison]")),
            };
            ClientMessage::Attack {
                id: 0,
                target,
                damage,
                poison,
            }
        }
        "damage" | "dmg" => {
            let (target, rest) = resolve.take(words)?;
            let [n] = rest else {
                return Err(CommandError::Usage("damage <who> <n>"));
            };
            ClientMessage::DealDamage {
                id: 0,
                target,
                amount: amount(n)?,
            }
        }
        "life" => {
            let [n] = words[..] else {
                return Err(CommandError::Usage("life ±n (for instance `life -3`)"));
            };
            ClientMessage::ChangeLife {
                id: 0,
                delta: delta(n)?,
            }
        }
        "poison" => {
            let [n] = words[..] else {
                return Err(CommandError::Usage("poison ±n (for instance `poison +1`)"));
            };
            ClientMessage::ChangePoison {
                id: 0,
                delta: delta(n)?,
            }
        }
        "rule" | "ruling" => ClientMessage::Ruling {
            id: 0,
            ruling: parse_ruling(words, rest, resolve)?,
        },
        _ => return Ok(None),
    }))
}

fn parse_ruling(
    words: &[&str],
    rest: &str,
    resolve: &Resolver<'_>,
) -> Result<Ruling, CommandError> {
    const USAGE: &str = "rule eliminate <who>[, <who>…] | rule life <who> <n> | rule poison <who> <n> | rule end <who> | rule extra <who> | rule keep <who>";
    let Some((&kind, args)) = words.split_first() else {
        return Err(CommandError::Usage(USAGE));
    };
    match kind.to_ascii_lowercase().as_str() {
        "eliminate" | "elim" | "out" => {
            let after = rest
                .split_once(char::is_whitespace)
                .map_or("", |(_, a)| a.trim());
            let mut players = Vec::new();
            if after.contains(',') {
                for part in after.split(',') {
                    let part: Vec<&str> = part.split_whitespace().collect();
                    players.push(resolve.whole(&part)?);
                }
            } else {
                let mut left = args;
                while !left.is_empty() {
                    let (player, rest) = resolve.take(left)?;
                    players.push(player);
                    left = rest;
                }
            }
            if players.is_empty() {
                return Err(CommandError::Usage(USAGE));
            }
            Ok(Ruling::Eliminate { players })
        }
        "life" => {
            let (player, rest) = resolve.take(args)?;
            let [n] = rest else {
                return Err(CommandError::Usage("rule life <who> <n>"));
            };
            let life = n
                .parse::<i32>()
                .map_err(|_| CommandError::NotALifeTotal((*n).to_owned()))?;
            Ok(Ruling::SetLife { player, life })
        }
        "poison" => {
            let (player, rest) = resolve.take(args)?;
            let [n] = rest else {
                return Err(CommandError::Usage("rule poison <who> <n>"));
            };
            Ok(Ruling::SetPoison {
                player,
                poison: amount(n)?,
            })
        }
        "end" => Ok(Ruling::EndTurn {
            player: resolve.whole(args)?,
        }),
        "keep" => Ok(Ruling::Keep {
            player: resolve.whole(args)?,
        }),
        "extra" => Ok(Ruling::ExtraTurn {
            player: resolve.whole(args)?,
        }),
        _ => Err(CommandError::Usage(USAGE)),
    }
}

fn parse_phase(
    name: &str,
    view: Option<&TableView>,
    me: Option<PlayerId>,
) -> Result<Phase, CommandError> {
    let lower = name.to_ascii_lowercase();
    // A unique start of a phase's name is enough (`co` for combat).
    let named = PHASES
        .iter()
        .filter(|p| p.starts_with(lower.as_str()))
        .collect::<Vec<_>>();
    let lower = match named[..] {
        [one] => (*one).to_owned(),
        _ => lower,
    };
    Ok(match lower.as_str() {
        "beginning" | "begin" | "upkeep" | "draw" => Phase::Beginning,
        "main" | "main1" | "precombat" | "precombat_main" => Phase::PrecombatMain,
        "combat" | "attack" => Phase::Combat,
        "main2" | "postcombat" | "postcombat_main" => Phase::PostcombatMain,
        "end" | "ending" | "cleanup" => Phase::Ending,
        "next" => {
            let current = view
                .zip(me)
                .and_then(|(v, me)| v.turn_of(me))
                .and_then(|t| t.phase)
                .ok_or(CommandError::NoRunningTurn)?;
            current.next().ok_or(CommandError::LastPhase)?
        }
        other => {
            return Err(CommandError::UnknownPhase(other.to_owned()));
        }
    })
}
