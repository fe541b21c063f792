//! The short commands a player types, parsed into protocol requests: the table's own here
//! (`say`, `start`, `kick`, `pause`, …), then the game's ([`games::parse`]: `end`,
//! `attack Ben 3`, `life -2`, … at a Grand Melee table).
//!
//! A player is named by his name (case does not matter; a unique prefix is enough; names with
//! spaces are matched word by word), by his seat number as the ring shows it (his player id
//! in the lobby), by `#id` for his player id, or by `me`.

use std::sync::LazyLock;

use grand_melee_protocol::{ClientMessage, GameKind, PlayerId, SeatingMode, TableView};

use crate::games;
pub use crate::words::CommandError;
use crate::words::Resolver;

/// What a typed line asks for. One is made per line typed and used at once: the size of a
/// request in it costs nothing worth an indirection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Show the list of commands.
    Help,
    /// Show the table and the player's situation.
    Status,
    /// Leave the program (the seat is kept; `join` or `resume` takes it back).
    Quit,
    /// A request for the server; its `id` is 0 until [`with_id`] sets it.
    Request(ClientMessage),
}

/// The table's own commands in `help`, after the game's own: chat, status and the lobby's.
const TABLE_HELP: &[(&str, &str)] = &[
    ("say <text>", "chat with the table"),
    ("status", "show every seat and your situation"),
    ("snapshot", "ask the server for a fresh copy of the table"),
    (
        "start [random|joined] [who]",
        "host: start the game, seated by the dice (default) or in join order (optionally choosing the first player)",
    ),
    (
        "start order <who>, <who>, …",
        "host: start the game with the seating you arranged (every player once, seat 0 first)",
    ),
    (
        "first <who>",
        "league table: the deck furthest behind chooses who plays first",
    ),
];

/// The host's commands every table has, and leaving, last in `help` (after the game's
/// rulings).
const SHELL_HELP: &[(&str, &str)] = &[
    ("pause / unpause", "host: pause or resume the whole table"),
    (
        "adjourn",
        "host: adjourn the game (clocks stop; everyone may leave and come back days later)",
    ),
    (
        "resume-game",
        "resume an adjourned game (host), or ask to (a majority of the players resumes it)",
    ),
    (
        "kick <who> [ban]",
        "host: remove a player (`ban`: and refuse his address at this table)",
    ),
    (
        "mute <who>|spectators",
        "host: refuse a player's (or every spectator's) chat",
    ),
    ("unmute <who>|spectators", "host: let them chat again"),
    ("host <who>", "host: hand the host role to another player"),
    (
        "call <reason>",
        "call the host (a dispute, a question): one short line, once per 30 s",
    ),
    (
        "answer [who]",
        "host: close a player's call (or every open call); a ruling closes them too",
    ),
    ("leave", "give up your seat (in the lobby) and quit"),
    ("quit", "quit; your seat is kept and `resume` takes it back"),
    ("help", "this list"),
];

/// Every command of a table of `kind` with its usage and meaning, for `help`: the game's own,
/// the table's, the game's host rulings, then the host's and leaving.
pub fn help(kind: GameKind) -> Vec<(&'static str, &'static str)> {
    let game = games::help(kind);
    [game.play, TABLE_HELP, game.host, SHELL_HELP].concat()
}

/// The commands of a table before a snapshot says its game: the default game's.
pub static HELP: LazyLock<Vec<(&str, &str)>> = LazyLock::new(|| help(GameKind::default()));

/// The first words of the table's own commands, for completion (the game adds its own).
const NAMES: &[&str] = &[
    "adjourn",
    "answer",
    "call",
    "first",
    "help",
    "host",
    "kick",
    "leave",
    "mute",
    "pause",
    "quit",
    "resume-game",
    "say",
    "snapshot",
    "start",
    "status",
    "unmute",
    "unpause",
];

/// Parses a typed line. `Ok(None)` for a blank line; `Err` holds a short explanation (usage).
pub fn parse(
    line: &str,
    view: Option<&TableView>,
    me: Option<PlayerId>,
) -> Result<Option<Command>, CommandError> {
    let line = line.trim();
    let Some((word, rest)) = split_word(line) else {
        return Ok(None);
    };
    let words: Vec<&str> = rest.split_whitespace().collect();
    let resolve = Resolver { view, me };
    let kind = games::kind(view);
    let request = match word.to_ascii_lowercase().as_str() {
        "help" | "?" => return Ok(Some(Command::Help)),
        "status" | "who" => return Ok(Some(Command::Status)),
        "quit" | "exit" => return Ok(Some(Command::Quit)),
        "snapshot" | "refresh" => ClientMessage::Snapshot { id: 0 },
        "leave" => ClientMessage::Leave { id: 0 },
        "pause" => ClientMessage::Pause {
            id: 0,
            paused: true,
        },
        "unpause" => ClientMessage::Pause {
            id: 0,
            paused: false,
        },
        "adjourn" => ClientMessage::Adjourn { id: 0 },
        "resume-game" => ClientMessage::ResumeGame { id: 0 },
        "say" | "chat" => {
            if rest.is_empty() {
                return Err(CommandError::Usage("say <text>"));
            }
            ClientMessage::Chat {
                id: 0,
                text: rest.to_owned(),
            }
        }
        "first" => ClientMessage::ChooseFirst {
            id: 0,
            player: resolve.whole(&words)?,
        },
        "start" => parse_start(&words, rest, &resolve)?,
        "call" => {
            if rest.is_empty() {
                return Err(CommandError::Usage(
                    "call <reason> (one short line for the host)",
                ));
            }
            ClientMessage::CallHost {
                id: 0,
                reason: rest.to_owned(),
            }
        }
        "answer" => ClientMessage::AnswerCall {
            id: 0,
            player: if words.is_empty() {
                None
            } else {
                Some(resolve.whole(&words)?)
            },
        },
        "kick" => {
            let (who, ban) = match words.split_last() {
                Some((last, who)) if last.eq_ignore_ascii_case("ban") && !who.is_empty() => {
                    (who, true)
                }
                _ => (&words[..], false),
            };
            ClientMessage::Kick {
                id: 0,
                player: resolve.whole(who)?,
                ban,
            }
        }
        "mute" | "unmute" => {
            let muted = word.eq_ignore_ascii_case("mute");
            let player = match words[..] {
                [] => return Err(CommandError::MuteUsage(word.to_owned())),
                [one] if one.eq_ignore_ascii_case("spectators") => None,
                _ => Some(resolve.whole(&words)?),
            };
            ClientMessage::Mute {
                id: 0,
                player,
                muted,
            }
        }
        "host" => ClientMessage::TransferHost {
            id: 0,
            player: resolve.whole(&words)?,
        },
        other => match games::parse(kind, other, &words, rest, &resolve)? {
            Some(request) => request,
            None => return Err(CommandError::UnknownCommand(other.to_owned())),
        },
    };
    Ok(Some(Command::Request(request)))
}

fn split_word(line: &str) -> Option<(&str, &str)> {
    if line.is_empty() {
        return None;
    }
    Some(match line.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (line, ""),
    })
}

/// `start [random|joined] [who]` or `start order <who>, <who>, …`.
fn parse_start(
    words: &[&str],
    rest: &str,
    resolve: &Resolver<'_>,
) -> Result<ClientMessage, CommandError> {
    let (seating, who) = match words.split_first() {
        Some((first, who)) if first.eq_ignore_ascii_case("random") => (SeatingMode::Random, who),
        Some((first, who)) if first.eq_ignore_ascii_case("joined") => (SeatingMode::Joined, who),
        Some((first, _)) if first.eq_ignore_ascii_case("order") => {
            let after = rest
                .split_once(char::is_whitespace)
                .map_or("", |(_, a)| a.trim());
            let mut order = Vec::new();
            for part in after.split(',') {
                let part: Vec<&str> = part.split_whitespace().collect();
                if part.is_empty() {
                    return Err(CommandError::Usage(
                        "start order <who>, <who>, … (every player once)",
                    ));
                }
                order.push(resolve.whole(&part)?);
            }
            return Ok(ClientMessage::Start {
                id: 0,
                first_player: None,
                seating: SeatingMode::Arranged,
                order,
            });
        }
        _ => (SeatingMode::Random, words),
    };
    Ok(ClientMessage::Start {
        id: 0,
        first_player: if who.is_empty() {
            None
        } else {
            Some(resolve.whole(who)?)
        },
        seating,
        order: Vec::new(),
    })
}

/// Completes the last word of `line`: a command name for the first word; after it a player's
/// name, and also the kind of ruling after `rule`, `spectators` after `mute` and `unmute`, and
/// `ban` after `kick <who>`. Returns the completed line, or `None` if nothing (or several
/// things) fit.
pub fn complete(line: &str, view: Option<&TableView>) -> Option<String> {
    let (head, last) = match line.rfind(' ') {
        Some(i) => (&line[..=i], &line[i + 1..]),
        None => ("", line),
    };
    let lower = last.to_lowercase();
    let before: Vec<String> = head.split_whitespace().map(str::to_lowercase).collect();
    let kind = games::kind(view);
    let names: Vec<&str>;
    let words: &[&str] = match before.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => {
            names = [NAMES, games::names(kind)].concat();
            &names
        }
        [word] if games::arguments(kind, word).is_some() => {
            games::arguments(kind, word).unwrap_or_default()
        }
        ["mute" | "unmute"] => &["spectators"],
        ["kick", _, ..] => &["ban"],
        _ => &[],
    };
    let mut candidates: Vec<String> = words
        .iter()
        .filter(|n| n.starts_with(&lower))
        .map(|n| format!("{n} "))
        .collect();
    if let Some(view) = view
        && !before.is_empty()
        && !matches!(before[..], [ref word] if games::arguments(kind, word).is_some())
    {
        candidates.extend(
            view.players
                .iter()
                .filter(|p| p.name.to_lowercase().starts_with(&lower))
                .map(|p| format!("{} ", p.name)),
        );
    }
    match &candidates[..] {
        [one] => Some(format!("{head}{one}")),
        _ => None,
    }
}

/// The same request with its id set.
pub fn with_id(mut message: ClientMessage, new_id: u32) -> ClientMessage {
    *message.id_mut() = new_id;
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use grand_melee_protocol::{Event, Phase, Ruling, Settings, TableId};

    /// A started table of three: seating Cid (seat 0), Ann (1), "Big Ben" (2).
    fn table() -> TableView {
        let mut view = TableView::new(TableId::nil(), "t", Settings::default());
        let events = [
            Event::PlayerJoined {
                player: 0,
                name: "Ann".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 1,
                name: "Big Ben".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 2,
                name: "Cid".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::GameStarted {
                seating: vec![2, 0, 1],
                first_player: 2,
                turn_holders: vec![2],
                commitment: String::new(),
                first_player_chosen: false,
                bonuses: Vec::new(),
                first_decided_by: None,
                seating_mode: grand_melee_protocol::SeatingMode::Random,
            },
        ];
        view = view.folded(1, &events).expect("events apply");
        view
    }

    fn request(line: &str) -> ClientMessage {
        match parse(line, Some(&table()), Some(0)) {
            Ok(Some(Command::Request(m))) => m,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn extra_turns_rolls_and_counter_strikes_are_typed_like_attacks() {
        assert_eq!(request("extra"), ClientMessage::ExtraTurn { id: 0 });
        assert_eq!(
            request("roll big ben 4 2 3"),
            ClientMessage::AttackRoll {
                id: 0,
                defender: 1,
                attacker_power: 4,
                blocker_powers: vec![2, 3],
            }
        );
        assert_eq!(
            request("roll cid 5"),
            ClientMessage::AttackRoll {
                id: 0,
                defender: 2,
                attacker_power: 5,
                blocker_powers: vec![],
            }
        );
        assert_eq!(
            request("counter cid 2 5"),
            ClientMessage::CounterRoll {
                id: 0,
                attacker: 2,
                blocker_power: 2,
                attacker_power: 5,
            }
        );
        assert_eq!(
            request("rule extra cid"),
            ClientMessage::Ruling {
                id: 0,
                ruling: Ruling::ExtraTurn { player: 2 }
            }
        );
        let table = table();
        for bad in [
            "roll",
            "roll cid",
            "roll cid x",
            "counter cid 2",
            "roll cid 2 -1",
        ] {
            assert!(parse(bad, Some(&table), Some(0)).is_err(), "{bad}");
        }
    }

    #[test]
    fn players_are_named_by_name_prefix_seat_id_or_me() {
        assert_eq!(
            request("attack cid 3"),
            ClientMessage::Attack {
                id: 0,
                target: 2,
                damage: 3,
                poison: 0
            }
        );
        assert_eq!(
            request("attack big ben 2 1"),
            ClientMessage::Attack {
                id: 0,
                target: 1,
                damage: 2,
                poison: 1
            }
        );
        assert_eq!(
            request("damage Bi 4"),
            ClientMessage::DealDamage {
                id: 0,
                target: 1,
                amount: 4
            }
        );
        // Seat 0 is Cid; #0 is Ann's player id.
        assert_eq!(
            request("damage 0 1"),
            ClientMessage::DealDamage {
                id: 0,
                target: 2,
                amount: 1
            }
        );
        assert_eq!(
            request("damage #0 1"),
            ClientMessage::DealDamage {
                id: 0,
                target: 0,
                amount: 1
            }
        );
        assert_eq!(
            request("damage me 1"),
            ClientMessage::DealDamage {
                id: 0,
                target: 0,
                amount: 1
            }
        );
    }

    #[test]
    fn life_and_poison_take_signed_changes() {
        assert_eq!(
            request("life -3"),
            ClientMessage::ChangeLife { id: 0, delta: -3 }
        );
        assert_eq!(
            request("life +2"),
            ClientMessage::ChangeLife { id: 0, delta: 2 }
        );
        assert_eq!(
            request("poison 1"),
            ClientMessage::ChangePoison { id: 0, delta: 1 }
        );
        assert!(parse("life lots", Some(&table()), Some(0)).is_err());
    }

    #[test]
    fn rulings_name_one_or_several_players() {
        assert_eq!(
            request("rule eliminate Ann, Big Ben"),
            ClientMessage::Ruling {
                id: 0,
                ruling: Ruling::Eliminate {
                    players: vec![0, 1]
                }
            }
        );
        assert_eq!(
            request("rule eliminate ann cid"),
            ClientMessage::Ruling {
                id: 0,
                ruling: Ruling::Eliminate {
                    players: vec![0, 2]
                }
            }
        );
        assert_eq!(
            request("rule life cid 12"),
            ClientMessage::Ruling {
                id: 0,
                ruling: Ruling::SetLife {
                    player: 2,
                    life: 12
                }
            }
        );
        assert_eq!(
            request("rule end Big Ben"),
            ClientMessage::Ruling {
                id: 0,
                ruling: Ruling::EndTurn { player: 1 }
            }
        );
    }

    #[test]
    fn host_commands_kick_with_ban_mute_and_rule_keep() {
        assert_eq!(
            request("kick big ben"),
            ClientMessage::Kick {
                id: 0,
                player: 1,
                ban: false
            }
        );
        assert_eq!(
            request("kick Big Ben ban"),
            ClientMessage::Kick {
                id: 0,
                player: 1,
                ban: true
            }
        );
        assert_eq!(
            request("mute cid"),
            ClientMessage::Mute {
                id: 0,
                player: Some(2),
                muted: true
            }
        );
        assert_eq!(
            request("unmute spectators"),
            ClientMessage::Mute {
                id: 0,
                player: None,
                muted: false
            }
        );
        assert_eq!(
            request("rule keep ann"),
            ClientMessage::Ruling {
                id: 0,
                ruling: Ruling::Keep { player: 0 }
            }
        );
        for line in ["mute", "kick ban", "rule keep", "mute Zed"] {
            assert!(parse(line, Some(&table()), Some(0)).is_err(), "{line}");
        }
    }

    #[test]
    fn mistakes_are_explained_not_sent() {
        let view = table();
        for line in [
            "attack",
            "attack Zed 3",
            "fly",
            "phase lunch",
            "damage Cid",
            "say",
        ] {
            let result = parse(line, Some(&view), Some(0));
            assert!(result.is_err(), "{line}: {result:?}");
        }
        assert_eq!(parse("   ", Some(&view), Some(0)), Ok(None));
        assert_eq!(parse("help", None, None), Ok(Some(Command::Help)));
    }

    #[test]
    fn phases_have_short_names() {
        assert_eq!(
            request("phase combat"),
            ClientMessage::SetPhase {
                id: 0,
                phase: Phase::Combat
            }
        );
        assert_eq!(
            request("phase main2"),
            ClientMessage::SetPhase {
                id: 0,
                phase: Phase::PostcombatMain
            }
        );
    }

    #[test]
    fn phases_are_completed_and_taken_by_a_unique_start() {
        let view = table();
        assert_eq!(
            complete("phase co", Some(&view)),
            Some("phase combat ".into())
        );
        assert_eq!(
            complete("phase b", Some(&view)),
            Some("phase beginning ".into())
        );
        assert_eq!(complete("phase m", Some(&view)), None, "main1, main2");
        assert_eq!(
            complete("phase main2", Some(&view)),
            Some("phase main2 ".into())
        );
        assert_eq!(
            request("phase co"),
            ClientMessage::SetPhase {
                id: 0,
                phase: Phase::Combat
            }
        );
        assert_eq!(
            request("phase beg"),
            ClientMessage::SetPhase {
                id: 0,
                phase: Phase::Beginning
            }
        );
        assert!(parse("phase m", Some(&view), Some(0)).is_err(), "ambiguous");
    }

    #[test]
    fn completion_finishes_commands_and_names() {
        let view = table();
        assert_eq!(complete("att", Some(&view)), Some("attack ".into()));
        assert_eq!(
            complete("attack bi", Some(&view)),
            Some("attack Big Ben ".into())
        );
        assert_eq!(complete("p", Some(&view)), None, "pause, phase, poison");
        assert_eq!(complete("mu", Some(&view)), None, "mulligan, mute");
        assert_eq!(complete("mut", Some(&view)), Some("mute ".into()));
        assert_eq!(complete("unm", Some(&view)), Some("unmute ".into()));
        assert_eq!(
            complete("mute sp", Some(&view)),
            Some("mute spectators ".into())
        );
        assert_eq!(
            complete("unmute sp", None),
            Some("unmute spectators ".into())
        );
        assert_eq!(complete("mute c", Some(&view)), Some("mute Cid ".into()));
        assert_eq!(complete("rule k", Some(&view)), Some("rule keep ".into()));
        assert_eq!(complete("rule e", Some(&view)), None, "eliminate, end");
        assert_eq!(complete("rule a", Some(&view)), None, "rulings, not names");
        assert_eq!(
            complete("rule keep a", Some(&view)),
            Some("rule keep Ann ".into())
        );
        assert_eq!(
            complete("kick b", Some(&view)),
            Some("kick Big Ben ".into())
        );
        assert_eq!(complete("kick cid b", Some(&view)), None, "ban, Big Ben");
        assert_eq!(
            complete("kick cid ba", Some(&view)),
            Some("kick cid ban ".into())
        );
    }

    #[test]
    fn ids_are_set_on_any_request() {
        assert_eq!(with_id(request("keep"), 9), ClientMessage::Keep { id: 9 });
        let list = |id| ClientMessage::ListReplays {
            id,
            from: 3,
            limit: 7,
        };
        assert_eq!(with_id(list(0), 9), list(9));
        let table = TableId::nil();
        let get = |id| ClientMessage::GetReplay {
            id,
            table,
            from_seq: 5,
            password: None,
            token: None,
        };
        assert_eq!(with_id(get(0), 9), get(9));
    }

    #[test]
    fn start_takes_a_seating_and_call_and_answer_reach_the_host() {
        use grand_melee_protocol::SeatingMode::{Arranged, Joined, Random};
        let start = |first_player, seating, order: Vec<PlayerId>| ClientMessage::Start {
            id: 0,
            first_player,
            seating,
            order,
        };
        assert_eq!(request("start"), start(None, Random, Vec::new()));
        assert_eq!(request("start cid"), start(Some(2), Random, Vec::new()));
        assert_eq!(request("start joined"), start(None, Joined, Vec::new()));
        assert_eq!(
            request("start random big ben"),
            start(Some(1), Random, Vec::new())
        );
        assert_eq!(
            request("start order Cid, big ben, #0"),
            start(None, Arranged, vec![2, 1, 0])
        );
        assert!(parse("start order Cid,, Ann", Some(&table()), Some(0)).is_err());
        assert!(parse("start order Cid, Zed", Some(&table()), Some(0)).is_err());
        assert_eq!(
            request("call  is Wrath resolved?"),
            ClientMessage::CallHost {
                id: 0,
                reason: "is Wrath resolved?".into()
            }
        );
        assert!(parse("call", Some(&table()), Some(0)).is_err());
        assert_eq!(
            request("answer"),
            ClientMessage::AnswerCall {
                id: 0,
                player: None
            }
        );
        assert_eq!(
            request("answer ann"),
            ClientMessage::AnswerCall {
                id: 0,
                player: Some(0)
            }
        );
    }

    #[test]
    fn a_bad_line_says_what_was_wrong() {
        let view = table();
        // (line, table, me, the error, its words)
        type Case<'a> = (
            &'a str,
            Option<&'a TableView>,
            Option<PlayerId>,
            CommandError,
            &'a str,
        );
        let cases: &[Case] = &[
            (
                "frobnicate",
                Some(&view),
                Some(0),
                CommandError::UnknownCommand("frobnicate".into()),
                "unknown command `frobnicate`; type `help` for the list",
            ),
            (
                "say",
                Some(&view),
                Some(0),
                CommandError::Usage("say <text>"),
                "usage: say <text>",
            ),
            (
                "MUTE",
                Some(&view),
                Some(0),
                CommandError::MuteUsage("MUTE".into()),
                "usage: MUTE <who>|spectators",
            ),
            (
                "damage ann lots",
                Some(&view),
                Some(0),
                CommandError::NotAnAmount("lots".into()),
                "`lots` is not an amount",
            ),
            (
                "life lots",
                Some(&view),
                Some(0),
                CommandError::NotAChange("lots".into()),
                "`lots` is not a change like +3 or -2",
            ),
            (
                "rule life ann x",
                Some(&view),
                Some(0),
                CommandError::NotALifeTotal("x".into()),
                "`x` is not a life total",
            ),
            (
                "phase sideways",
                Some(&view),
                Some(0),
                CommandError::UnknownPhase("sideways".into()),
                "unknown phase `sideways`: beginning, main1, combat, main2, end or next",
            ),
            (
                "phase next",
                Some(&view),
                Some(0),
                CommandError::NoRunningTurn,
                "you have no running turn",
            ),
            (
                "host cid now",
                Some(&view),
                Some(0),
                CommandError::Unexpected("now".into()),
                "unexpected `now`",
            ),
            (
                "first",
                Some(&view),
                Some(0),
                CommandError::NoPlayerNamed,
                "name a player (name, seat number, #id or me)",
            ),
            (
                "kick ann",
                None,
                Some(0),
                CommandError::NoTable,
                "no table yet",
            ),
            (
                "kick me",
                Some(&view),
                None,
                CommandError::NoSeat,
                "you have no seat",
            ),
            (
                "kick #x",
                Some(&view),
                Some(0),
                CommandError::NotAPlayerId("#x".into()),
                "`#x` is not a player id",
            ),
            (
                "kick #9",
                Some(&view),
                Some(0),
                CommandError::NoPlayerId(9),
                "no player #9",
            ),
            (
                "kick 7",
                Some(&view),
                Some(0),
                CommandError::NoSuchSeat(7),
                "no seat 7",
            ),
            (
                "kick zed",
                Some(&view),
                Some(0),
                CommandError::NoSuchName("zed".into()),
                "no player called `zed`",
            ),
        ];
        for (line, view, me, error, text) in cases {
            assert_eq!(parse(line, *view, *me), Err(error.clone()), "{line}");
            assert_eq!(error.to_string(), *text, "{line}");
        }
    }

    #[test]
    fn a_name_several_players_start_with_lists_them_quoted_in_the_tables_order() {
        let mut view = table();
        let cid = view
            .players
            .iter_mut()
            .find(|p| p.name == "Cid")
            .expect("Cid is seated");
        cid.name = "Bob".into();
        let error = parse("kick b", Some(&view), Some(0)).expect_err("two names start with b");
        assert_eq!(
            error,
            CommandError::Ambiguous {
                typed: "b".into(),
                names: vec!["Bob".into(), "Big Ben".into()],
            }
        );
        assert_eq!(error.to_string(), "`b` could be \"Bob\", \"Big Ben\"");
    }
}
