//! Magic Tech's typed commands: the deck (`deck`), the mulligan (`keep`, `mulligan`), the turn
//! (`next`), deploying and paying (`deploy`, `land`, `tap`, `pay`, `reveal` with the card's
//! declaration), relocating (`patrol`, `guard`), missions (`mission`, `block`), damage and the
//! stockpile (`damage`, `heal`, `regen`, `draw`, `life`, `remove`), `concede`, and corrections
//! (`propose`, `accept`, `decline`, the host's `rule`).

use grand_melee_protocol::magic_tech_types::{
    Area, Block, CardFace, CardId, CardType, Colour, Correction, Keywords, ManaCost, Target, Zone,
};
use grand_melee_protocol::{ClientMessage, PlayerId};

use crate::games::Help;
use crate::words::{CommandError, Resolver, amount, delta};

/// The commands, with their usage and meaning, for `help`: the players' and the host's rulings.
pub const HELP: Help = Help {
    play: &[
        ("deck <n>", "lobby: declare your deck size (5 to 60)"),
        ("keep", "keep your hand (mulligan stage)"),
        ("mulligan", "Paris mulligan: redraw one card fewer"),
        (
            "next",
            "move your turn to its next phase (from end: pass the turn)",
        ),
        ("deploy", "deploy a card from your hand face down"),
        (
            "land <forest|island|…|name>",
            "deploy a land face up (a basic land by its type)",
        ),
        ("tap <card> [mana]", "tap your card for mana (a land: 1)"),
        (
            "pay <card>|ability <n>",
            "spend mana: counters on a face-down card, or an ability",
        ),
        (
            "reveal <card> <type> <cost> [P/T] [keywords…] <name>",
            "turn a card face up, e.g. `reveal 4 creature 1G 2/2 trample Grizzly Bears`",
        ),
        ("patrol <card>", "deploy phase: a creature goes on patrol"),
        (
            "guard <card> <card>|stockpile",
            "deploy phase: a creature guards one of your cards or your stockpile",
        ),
        (
            "mission <card>|stockpile <attackers…>",
            "missions phase: attack an opposing card or the stockpile",
        ),
        (
            "block none|<blocker>:<attacker>…",
            "your blocks against the mission under way",
        ),
        (
            "damage <card>|stockpile [<who>] <n>",
            "a spell or ability deals damage (stockpile: your opponent's unless named)",
        ),
        ("heal <card> <n>", "remove damage counters from a card"),
        (
            "regen <card>",
            "upkeep: pay a creature's regeneration cost, remove one damage counter",
        ),
        ("draw <n>", "a card makes you draw"),
        (
            "life ±n",
            "lose life: scrap n cards; gain life: n scrapheap cards under the stockpile",
        ),
        (
            "remove <card> hand|stockpile|scrapheap",
            "a card effect takes your card out of play",
        ),
        (
            "propose <correction>",
            "ask your opponent to correct a number: counters <card> <n> · damage <card> <n> · tapped <card> yes|no · mana <who> <n> · move <who> <from> <to> <n>",
        ),
        ("accept", "accept your opponent's correction"),
        (
            "decline",
            "decline your opponent's correction (or withdraw yours)",
        ),
        ("concede", "leave the game"),
    ],
    host: &[(
        "rule <correction>",
        "host: correct a number (as `propose` writes it)",
    )],
};

/// The commands that cannot be undone, with the question the full-screen UI asks first.
pub const CONFIRM: &[(&str, &str)] = &[
    (
        "concede",
        "Concede? You leave the game for good and cannot come back.",
    ),
    (
        "remove",
        "Take this card out of play? Only when a card effect does it.",
    ),
];

/// The first words of the commands, for completion.
pub const NAMES: &[&str] = &[
    "accept", "block", "concede", "damage", "decline", "deck", "deploy", "draw", "guard", "heal",
    "keep", "land", "life", "mission", "mulligan", "next", "patrol", "pay", "propose", "regen",
    "remove", "reveal", "rule", "tap",
];

/// The kinds of correction, for completion after `propose` and `rule`.
pub const CORRECTIONS: &[&str] = &["counters", "damage", "mana", "move", "tapped"];

/// The basic lands, for completion after `land`.
pub const BASICS: &[&str] = &["forest", "island", "mountain", "plains", "swamp"];

/// The words that complete the argument after `word`, if it takes one of a few words.
pub fn arguments(word: &str) -> Option<&'static [&'static str]> {
    match word {
        "propose" | "rule" => Some(CORRECTIONS),
        "land" => Some(BASICS),
        _ => None,
    }
}

/// A card number: `4` or `#4`.
fn card(text: &str) -> Result<CardId, CommandError> {
    text.trim_start_matches('#')
        .parse()
        .map_err(|_| CommandError::NotAnAmount(text.to_owned()))
}

/// An amount that fits `T` (a number too large is not an amount).
fn small<T: TryFrom<u32>>(text: &str) -> Result<T, CommandError> {
    T::try_from(amount(text)?).map_err(|_| CommandError::NotAnAmount(text.to_owned()))
}

/// A mana letter.
fn colour(letter: char) -> Option<Colour> {
    Some(match letter.to_ascii_uppercase() {
        'W' => Colour::White,
        'U' => Colour::Blue,
        'B' => Colour::Black,
        'R' => Colour::Red,
        'G' => Colour::Green,
        _ => return None,
    })
}

/// Mana letters (`RG`).
fn colours(text: &str) -> Option<Vec<Colour>> {
    text.chars().map(colour).collect()
}

/// A mana cost as printed: `2GG`, `0`, `WU`, `10R`.
pub fn mana_cost(text: &str) -> Option<ManaCost> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    let generic = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let coloured = colours(&text[digits.len()..])?;
    if digits.is_empty() && coloured.is_empty() {
        return None;
    }
    Some(ManaCost { generic, coloured })
}

/// A basic land type's colour.
fn basic(word: &str) -> Option<(Colour, &'static str)> {
    Some(match word.to_ascii_lowercase().as_str() {
        "plains" => (Colour::White, "Plains"),
        "island" => (Colour::Blue, "Island"),
        "swamp" => (Colour::Black, "Swamp"),
        "mountain" => (Colour::Red, "Mountain"),
        "forest" => (Colour::Green, "Forest"),
        _ => return None,
    })
}

/// Adds a keyword (`flying`, `rampage=2`, `landwalk=G`, `regen=1G`, …) to `keywords`;
/// `false` if `word` is not one.
fn keyword(word: &str, keywords: &mut Keywords) -> bool {
    let lower = word.to_ascii_lowercase();
    let (key, value) = lower.split_once('=').unwrap_or((lower.as_str(), ""));
    match (key, value) {
        ("flying", "") => keywords.flying = true,
        ("reach", "") => keywords.reach = true,
        ("shadow", "") => keywords.shadow = true,
        ("trample", "") => keywords.trample = true,
        ("first-strike" | "first_strike" | "firststrike", "") => keywords.first_strike = true,
        ("banding", "") => keywords.banding = true,
        ("flanking", "") => keywords.flanking = true,
        ("phasing", "") => keywords.phasing = true,
        ("haste", "") => keywords.haste = true,
        ("rampage", n) => match n.parse() {
            Ok(n) => keywords.rampage = n,
            Err(_) => return false,
        },
        ("landwalk", c) => match colours(c) {
            Some(c) if !c.is_empty() => keywords.landwalk = c,
            _ => return false,
        },
        ("protection", c) => match colours(c) {
            Some(c) if !c.is_empty() => keywords.protection = c,
            _ => return false,
        },
        ("regen" | "regeneration", cost) => match mana_cost(cost) {
            Some(cost) => keywords.regeneration = Some(cost),
            None => return false,
        },
        _ => return false,
    }
    true
}

const REVEAL: &str = "reveal <card> <creature|artifact|enchantment|sorcery|instant|land> <cost like 2GG> [P/T] [flying reach shadow trample first-strike banding flanking phasing haste rampage=N landwalk=G protection=R regen=1G] <name>";

/// What `reveal` declares: the card's type, cost, power/toughness, keywords and name.
fn declaration(words: &[&str]) -> Result<CardFace, CommandError> {
    let [kind, cost, rest @ ..] = words else {
        return Err(CommandError::Usage(REVEAL));
    };
    let card_type = match kind.to_ascii_lowercase().as_str() {
        "creature" => CardType::Creature,
        "artifact" => CardType::Artifact,
        "enchantment" => CardType::Enchantment,
        "sorcery" => CardType::Sorcery,
        "instant" => CardType::Instant,
        "land" => CardType::Land,
        _ => return Err(CommandError::Usage(REVEAL)),
    };
    let cost = mana_cost(cost).ok_or(CommandError::Usage(REVEAL))?;
    let mut rest = rest;
    let (mut power, mut toughness) = (0, 0);
    if card_type == CardType::Creature {
        let Some((pt, after)) = rest.split_first() else {
            return Err(CommandError::Usage(REVEAL));
        };
        let (p, t) = pt.split_once('/').ok_or(CommandError::Usage(REVEAL))?;
        power = small(p)?;
        toughness = small(t)?;
        rest = after;
    }
    let mut keywords = Keywords::default();
    while let Some((word, after)) = rest.split_first() {
        if !keyword(word, &mut keywords) {
            break;
        }
        rest = after;
    }
    if rest.is_empty() {
        return Err(CommandError::Usage(REVEAL));
    }
    Ok(CardFace {
        name: rest.join(" "),
        card_type,
        cost,
        power,
        toughness,
        basic: None,
        keywords,
    })
}

/// The opponent of the player who typed: the other side of the board.
fn opponent(resolve: &Resolver<'_>) -> Result<PlayerId, CommandError> {
    let view = resolve.view.ok_or(CommandError::NoTable)?;
    let me = resolve.me.ok_or(CommandError::NoSeat)?;
    view.magic_tech
        .as_ref()
        .and_then(|b| b.sides.iter().map(|s| s.player).find(|&p| p != me))
        .or_else(|| view.players.iter().map(|p| p.player).find(|&p| p != me))
        .ok_or(CommandError::NoPlayerNamed)
}

fn zone(word: &str, usage: &'static str) -> Result<Zone, CommandError> {
    Ok(match word.to_ascii_lowercase().as_str() {
        "hand" => Zone::Hand,
        "stockpile" | "library" => Zone::Stockpile,
        "scrapheap" | "graveyard" => Zone::Scrapheap,
        "play" => Zone::Play,
        _ => return Err(CommandError::Usage(usage)),
    })
}

const CORRECTION: &str = "counters <card> <n> | damage <card> <n> | tapped <card> yes|no | mana <who> <n> | move <who> <from> <to> <n>";

/// A correction as `propose` and `rule` write it.
fn correction(words: &[&str], resolve: &Resolver<'_>) -> Result<Correction, CommandError> {
    let Some((&kind, args)) = words.split_first() else {
        return Err(CommandError::Usage(CORRECTION));
    };
    Ok(match (kind.to_ascii_lowercase().as_str(), args) {
        ("counters", [c, n]) => Correction::Counters {
            card: card(c)?,
            counters: small(n)?,
        },
        ("damage", [c, n]) => Correction::Damage {
            card: card(c)?,
            damage: small(n)?,
        },
        ("tapped", [c, yes]) => Correction::Tapped {
            card: card(c)?,
            tapped: match yes.to_ascii_lowercase().as_str() {
                "yes" | "true" | "tapped" => true,
                "no" | "false" | "untapped" => false,
                _ => return Err(CommandError::Usage(CORRECTION)),
            },
        },
        ("mana", args) => {
            let (player, rest) = resolve.take(args)?;
            let [n] = rest else {
                return Err(CommandError::Usage(CORRECTION));
            };
            Correction::Mana {
                player,
                mana: small(n)?,
            }
        }
        ("move", args) => {
            let (player, rest) = resolve.take(args)?;
            let [from, to, n] = rest else {
                return Err(CommandError::Usage(CORRECTION));
            };
            Correction::Move {
                player,
                from: zone(from, CORRECTION)?,
                to: zone(to, CORRECTION)?,
                count: small(n)?,
            }
        }
        _ => return Err(CommandError::Usage(CORRECTION)),
    })
}

/// Parses a Magic Tech command whose first word (lower-cased) is `word`: `Ok(None)` if it is
/// not one of them.
pub fn parse(
    word: &str,
    words: &[&str],
    _rest: &str,
    resolve: &Resolver<'_>,
) -> Result<Option<ClientMessage>, CommandError> {
    Ok(Some(match word {
        "deck" => {
            let [n] = words else {
                return Err(CommandError::Usage("deck <n>"));
            };
            ClientMessage::MagicTechDeclareDeck {
                id: 0,
                size: small(n)?,
            }
        }
        "keep" => ClientMessage::Keep { id: 0 },
        "mulligan" | "mull" => ClientMessage::Mulligan { id: 0 },
        "concede" => ClientMessage::Concede { id: 0 },
        "next" | "n" => ClientMessage::MagicTechNextPhase { id: 0 },
        "deploy" => ClientMessage::MagicTechDeploy { id: 0, land: None },
        "land" => {
            let face = match words {
                [] => return Err(CommandError::Usage("land <forest|island|…|name>")),
                [one] if basic(one).is_some() => {
                    let (colour, name) = basic(one).ok_or(CommandError::Usage("land"))?;
                    CardFace {
                        name: name.to_owned(),
                        card_type: CardType::Land,
                        cost: ManaCost::default(),
                        power: 0,
                        toughness: 0,
                        basic: Some(colour),
                        keywords: Keywords::default(),
                    }
                }
                name => CardFace {
                    name: name.join(" "),
                    card_type: CardType::Land,
                    cost: ManaCost::default(),
                    power: 0,
                    toughness: 0,
                    basic: None,
                    keywords: Keywords::default(),
                },
            };
            ClientMessage::MagicTechDeploy {
                id: 0,
                land: Some(face),
            }
        }
        "tap" => {
            let (c, mana) = match words {
                [c] => (card(c)?, 1),
                [c, m] => (card(c)?, small(m)?),
                _ => return Err(CommandError::Usage("tap <card> [mana]")),
            };
            ClientMessage::MagicTechTap {
                id: 0,
                card: c,
                mana,
            }
        }
        "pay" => {
            let [what, n] = words else {
                return Err(CommandError::Usage("pay <card>|ability <n>"));
            };
            let target = if what.eq_ignore_ascii_case("ability") {
                None
            } else {
                Some(card(what)?)
            };
            ClientMessage::MagicTechPay {
                id: 0,
                card: target,
                amount: small(n)?,
            }
        }
        "reveal" => {
            let Some((c, rest)) = words.split_first() else {
                return Err(CommandError::Usage(REVEAL));
            };
            ClientMessage::MagicTechReveal {
                id: 0,
                card: card(c)?,
                face: declaration(rest)?,
            }
        }
        "patrol" => {
            let [c] = words else {
                return Err(CommandError::Usage("patrol <card>"));
            };
            ClientMessage::MagicTechRelocate {
                id: 0,
                card: card(c)?,
                area: Area::Patrol,
            }
        }
        "guard" => {
            let [c, what] = words else {
                return Err(CommandError::Usage("guard <card> <card>|stockpile"));
            };
            let guarded = if what.eq_ignore_ascii_case("stockpile") {
                None
            } else {
                Some(card(what)?)
            };
            ClientMessage::MagicTechRelocate {
                id: 0,
                card: card(c)?,
                area: Area::Guard { card: guarded },
            }
        }
        "mission" | "m" => {
            const USAGE: &str = "mission <card>|stockpile <attackers…>";
            let Some((what, attackers)) = words.split_first() else {
                return Err(CommandError::Usage(USAGE));
            };
            if attackers.is_empty() {
                return Err(CommandError::Usage(USAGE));
            }
            let target = if what.eq_ignore_ascii_case("stockpile") {
                Target::Stockpile {
                    player: opponent(resolve)?,
                }
            } else {
                Target::Card { card: card(what)? }
            };
            ClientMessage::MagicTechMission {
                id: 0,
                attackers: attackers
                    .iter()
                    .map(|a| card(a))
                    .collect::<Result<_, _>>()?,
                target,
            }
        }
        "block" => {
            const USAGE: &str = "block none|<blocker>:<attacker>…";
            let blocks = match words {
                [] => return Err(CommandError::Usage(USAGE)),
                [none] if none.eq_ignore_ascii_case("none") => Vec::new(),
                pairs => pairs
                    .iter()
                    .map(|pair| {
                        let (blocker, attacker) =
                            pair.split_once(':').ok_or(CommandError::Usage(USAGE))?;
                        Ok(Block {
                            blocker: card(blocker)?,
                            attacker: card(attacker)?,
                        })
                    })
                    .collect::<Result<_, CommandError>>()?,
            };
            ClientMessage::MagicTechBlock { id: 0, blocks }
        }
        "damage" | "dmg" => {
            const USAGE: &str = "damage <card>|stockpile [<who>] <n>";
            let (target, n) = match words {
                [what, n] if what.eq_ignore_ascii_case("stockpile") => (
                    Target::Stockpile {
                        player: opponent(resolve)?,
                    },
                    n,
                ),
                [what, who @ .., n] if what.eq_ignore_ascii_case("stockpile") => (
                    Target::Stockpile {
                        player: resolve.whole(who)?,
                    },
                    n,
                ),
                [c, n] => (Target::Card { card: card(c)? }, n),
                _ => return Err(CommandError::Usage(USAGE)),
            };
            ClientMessage::MagicTechDamage {
                id: 0,
                target,
                amount: small(n)?,
            }
        }
        "heal" => {
            let [c, n] = words else {
                return Err(CommandError::Usage("heal <card> <n>"));
            };
            ClientMessage::MagicTechHeal {
                id: 0,
                card: card(c)?,
                amount: small(n)?,
            }
        }
        "regen" | "regenerate" => {
            let [c] = words else {
                return Err(CommandError::Usage("regen <card>"));
            };
            ClientMessage::MagicTechRegenerate {
                id: 0,
                card: card(c)?,
            }
        }
        "draw" => {
            let [n] = words else {
                return Err(CommandError::Usage("draw <n>"));
            };
            ClientMessage::MagicTechDraw {
                id: 0,
                count: small(n)?,
            }
        }
        "life" => {
            let [n] = words else {
                return Err(CommandError::Usage("life ±n (for instance `life -3`)"));
            };
            ClientMessage::MagicTechLife {
                id: 0,
                delta: delta(n)?,
            }
        }
        "remove" => {
            const USAGE: &str = "remove <card> hand|stockpile|scrapheap";
            let [c, to] = words else {
                return Err(CommandError::Usage(USAGE));
            };
            ClientMessage::MagicTechLeavePlay {
                id: 0,
                card: card(c)?,
                to: zone(to, USAGE)?,
            }
        }
        "propose" => ClientMessage::MagicTechPropose {
            id: 0,
            correction: correction(words, resolve)?,
        },
        "accept" => ClientMessage::MagicTechAnswer {
            id: 0,
            accept: true,
        },
        "decline" => ClientMessage::MagicTechAnswer {
            id: 0,
            accept: false,
        },
        "rule" | "ruling" => ClientMessage::MagicTechRule {
            id: 0,
            correction: correction(words, resolve)?,
        },
        _ => return Ok(None),
    }))
}
