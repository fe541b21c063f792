//! Words for what happens at a table: one stable, greppable line per event for script mode and
//! a sentence per event for the terminal UI. The table-level events (seats, the host, presence,
//! chat, pause, the end) are worded here; every other event by its game
//! ([`games::wording`]), and the player's situation too ([`games::Situation`]).

use std::fmt::Write as _;

use crate::games;
use crate::safe;
use crate::words::{Wording, generic_fields};
pub use crate::words::{list, name, names, who};

pub use crate::games::grand_melee::Situation;

use grand_melee_protocol::{Event, PlayerId, TableView};

/// The script-mode line for event `seq`, worded with `view` as it was *before* the event
/// (so that a player who leaves still has his name), e.g.
/// `event 17 turn_began turn=0 player=3 "Ann"`: its fields from [`wording`].
pub fn script_line(seq: u64, event: &Event, view: &TableView) -> String {
    let fields = wording(event, view).map_or_else(|| generic_fields(event), |w| w.fields);
    format!("event {seq} {}{fields}", event.name())
}

/// The sentence for the terminal UI's log, worded with the view as it was before the event, or
/// `None` for an event the log leaves out because it tells the network, not the game: a
/// player's connection dropping, and coming back before he was reported absent
/// (`player_absent`). A return after that is one line, "X is back". Script mode and the journal
/// keep every event.
pub fn log_sentence(event: &Event, view: &TableView) -> Option<String> {
    if let Event::ConnectionChanged { player, connected } = event {
        let was_absent = view.player(*player).is_some_and(|p| p.absent);
        if !(*connected && was_absent) {
            return None;
        }
    }
    Some(sentence(event, view))
}

/// A sentence for any event, worded with the view as it was before the event: the log's
/// ([`log_sentence`]), and what a replay's step says it is. From [`wording`].
pub fn sentence(event: &Event, view: &TableView) -> String {
    wording(event, view).map_or_else(
        || {
            format!(
                "{}:{}",
                event.name().replace('_', " "),
                generic_fields(event)
            )
        },
        |w| w.sentence,
    )
}

/// The one list of the terminal's words for each event kind ([`script_line`] and [`sentence`]
/// both come from it), or `None` for a kind this client has no words for (a newer server's):
/// both then fall back to the event's wire fields.
fn wording(event: &Event, view: &TableView) -> Option<Wording> {
    let w = |p: PlayerId| who(view, p);
    let n = |p: PlayerId| name(view, p);
    // Writing to a String cannot fail.
    let words = match event {
        Event::PlayerJoined {
            player, name, deck, ..
        } => {
            let mut fields = format!(" player={player} {}", safe::quoted(name));
            let sentence = match deck {
                Some(d) => {
                    let _ = write!(
                        fields,
                        " member={} deck={} power={}",
                        d.member,
                        safe::quoted(&d.deck),
                        d.power
                    );
                    format!(
                        "{} sat down with {} (deck power {})",
                        safe::printable(name),
                        safe::printable(&d.deck),
                        d.power
                    )
                }
                None => format!("{} sat down", safe::printable(name)),
            };
            Wording::new(fields, sentence)
        }
        Event::FirstPlayerChosen { by, player } => Wording::new(
            format!(" by={} player={}", w(*by), w(*player)),
            format!("{} chose {} to play first", n(*by), n(*player)),
        ),
        Event::PlayerLeft { player } => Wording::new(
            format!(" player={}", w(*player)),
            format!("{} left the table", n(*player)),
        ),
        Event::PlayerAbsent { player } => Wording::new(
            format!(" player={}", w(*player)),
            format!("{} is absent", n(*player)),
        ),
        Event::ResumeRequested { player } => Wording::new(
            format!(" player={}", w(*player)),
            format!(
                "{} asks to resume the game ({} of {} asks needed)",
                n(*player),
                view.resume_asks.len() + 1,
                view.resume_quorum()
            ),
        ),
        Event::PlayerKicked { player, banned } => Wording::new(
            format!(" player={} banned={banned}", w(*player)),
            if *banned {
                format!("{} was removed and banned by the host", n(*player))
            } else {
                format!("{} was removed by the host", n(*player))
            },
        ),
        Event::GameOver { standings } => {
            let parts: Vec<String> = standings
                .iter()
                .map(|s| format!("{}:{}:{}", s.place, s.player, s.mana_points))
                .collect();
            let first: Vec<PlayerId> = standings
                .iter()
                .filter(|s| s.place == 1)
                .map(|s| s.player)
                .collect();
            let winner = first
                .first()
                .map(|&p| format!(" winner={}", w(p)))
                .unwrap_or_default();
            Wording::new(
                format!("{winner} standings={}", parts.join(",")),
                match first.as_slice() {
                    [] => "Game over: nobody wins".to_owned(),
                    [winner] => format!("Game over: {} wins", n(*winner)),
                    // An abandoned game: the players still in it share the first place.
                    shared => format!("Game over: {} share first place", names(view, shared)),
                },
            )
        }
        Event::GameAbandoned => Wording::new(
            generic_fields(event),
            "Everyone still in the game has been away for the table's absence limit: the game \
             ends as it stands"
                .to_owned(),
        ),
        Event::ConnectionChanged { player, connected } => Wording::new(
            format!(" player={} connected={connected}", w(*player)),
            if *connected {
                format!("{} is back", n(*player))
            } else {
                format!("{} lost the connection", n(*player))
            },
        ),
        Event::HostChanged { player } => match player {
            Some(p) => Wording::new(
                format!(" player={}", w(*p)),
                format!("{} is the host", n(*p)),
            ),
            None => Wording::new(" player=none".to_owned(), "Nobody is host".to_owned()),
        },
        Event::SpectatorsChanged { spectators } => Wording::new(
            format!(" spectators={spectators}"),
            format!("{spectators} spectator(s)"),
        ),
        Event::Chat { from, name, text } => Wording::new(
            format!(
                " from={} {} text={}",
                from.map_or_else(|| "none".to_owned(), |p| p.to_string()),
                safe::quoted(name),
                safe::quoted(text)
            ),
            format!("{}: {}", safe::printable(name), safe::printable(text)),
        ),
        Event::TablePaused { paused } => Wording::new(
            format!(" paused={paused}"),
            if *paused {
                "The host paused the table".to_owned()
            } else {
                "The table resumed".to_owned()
            },
        ),
        Event::TableAdjourned { adjourned } => Wording::new(
            format!(" adjourned={adjourned}"),
            if *adjourned {
                "The host adjourned the game: everyone may leave, and it waits for the host \
                 (`resume-game`) or a majority of the players (`resume-game` from each) to \
                 resume it"
                    .to_owned()
            } else {
                "The game resumed where it stopped".to_owned()
            },
        ),
        Event::PlayerMuted { player, muted } => {
            let who = player.map_or_else(|| "The spectators".to_owned(), n);
            Wording::new(
                match player {
                    Some(p) => format!(" player={} muted={muted}", w(*p)),
                    None => format!(" player=spectators muted={muted}"),
                },
                if *muted {
                    format!("{who}: muted by the host")
                } else {
                    format!("{who}: no longer muted")
                },
            )
        }
        Event::HostCalled { player, reason } => Wording::new(
            format!(" player={} reason={}", w(*player), safe::quoted(reason)),
            format!("{} calls the host: {}", n(*player), safe::printable(reason)),
        ),
        Event::HostAnswered { player } => match player {
            Some(p) => Wording::new(
                format!(" player={}", w(*p)),
                format!("The host answered {}'s call", n(*p)),
            ),
            None => Wording::new(
                " player=all".to_owned(),
                "The host answered every open call".to_owned(),
            ),
        },
        Event::DiceRevealed { .. } => Wording::new(
            generic_fields(event),
            "The dice secret is revealed: check every roll with grand-melee verify".to_owned(),
        ),

        // Every other event is a game's own.
        _ => return games::wording(event, view),
    };
    Some(words)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use grand_melee_protocol::{Event, KeepReason, Settings, TableId, TableView};

    use grand_melee_protocol::examples;

    use super::{Situation, log_sentence, script_line, sentence, wording};
    use crate::safe::{self, tests::HOSTILE, tests::is_inert};
    use crate::script::status_lines;
    use crate::session::State;

    /// A table of two players with honest names (Ann, Ben) and one with `hostile` as his name,
    /// in the mulligan stage with the hostile player deciding.
    fn table_with(hostile: &str) -> TableView {
        let mut view = TableView::new(TableId::nil(), hostile, Settings::default());
        let events = [
            Event::PlayerJoined {
                player: 0,
                name: "Ann".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 1,
                name: "Ben".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 2,
                name: hostile.into(),
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
        view = view.folded(1, &events).unwrap();
        view
    }

    /// Events naming player 2 or carrying `hostile` text.
    fn events_with(hostile: &str) -> Vec<Event> {
        vec![
            Event::Chat {
                from: Some(2),
                name: hostile.into(),
                text: hostile.into(),
            },
            Event::Chat {
                from: None,
                name: hostile.into(),
                text: hostile.into(),
            },
            Event::Kept {
                player: 2,
                hand_size: 7,
                reason: KeepReason::Clock,
            },
            Event::PlayerMuted {
                player: Some(2),
                muted: true,
            },
            Event::PlayerKicked {
                player: 2,
                banned: true,
            },
            Event::PlayerJoined {
                player: 3,
                name: hostile.into(),
                entropy: String::new(),
                deck: None,
            },
        ]
    }

    #[test]
    fn script_lines_sentences_and_status_escape_every_hostile_name_and_chat_line() {
        for hostile in HOSTILE {
            let view = table_with(hostile);
            let mut state = State::new("ws://h/ws", TableId::nil());
            state.me = Some(0);
            state.view = Some(view.clone());
            let mut out: Vec<String> = status_lines(&state);
            out.push(Situation::of(&view, Some(0)).script());
            out.push(Situation::of(&view, Some(0)).text());
            for (seq, event) in (5..).zip(&events_with(hostile)) {
                out.push(script_line(seq, event, &view));
                out.push(sentence(event, &view));
            }
            for line in &out {
                assert!(is_inert(line), "{hostile:?} came out as {line:?}");
            }
        }
    }

    #[test]
    fn no_hostile_name_or_chat_line_can_forge_a_field() {
        for hostile in HOSTILE {
            let view = table_with(hostile);
            let events = events_with(hostile);
            // The fields read back exactly, and nothing follows that the name did not put there.
            let line = script_line(5, &events[0], &view);
            let value = line.strip_prefix("event 5 chat from=2 ").unwrap();
            let (name, rest) = safe::unquote(value).unwrap();
            assert_eq!(name, hostile);
            let (text, rest) = safe::unquote(rest.strip_prefix(" text=").unwrap()).unwrap();
            assert_eq!((text.as_str(), rest), (hostile, ""), "{line}");
            let line = script_line(7, &events[2], &view);
            let value = line.strip_prefix("event 7 kept player=2 ").unwrap();
            let (name, rest) = safe::unquote(value).unwrap();
            assert_eq!((name.as_str(), rest), (hostile, " hand=7 reason=clock"));
            let line = script_line(10, &events[5], &view);
            let value = line
                .strip_prefix("event 10 player_joined player=3 ")
                .unwrap();
            assert_eq!(safe::unquote(value).unwrap(), (hostile.to_owned(), ""));
            let line = script_line(
                4,
                &Event::GameStarted {
                    seating: vec![2, 0, 1],
                    first_player: 2,
                    turn_holders: vec![2, 0],
                    commitment: String::new(),
                    first_player_chosen: false,
                    bonuses: Vec::new(),
                    first_decided_by: None,
                    seating_mode: grand_melee_protocol::SeatingMode::Random,
                },
                &view,
            );
            let quoted = safe::quoted(hostile);
            assert_eq!(
                line,
                format!(
                    "event 4 game_started first=2 {quoted} seating=2,0,1 {quoted},\"Ann\",\"Ben\" turns=2,0 {quoted},\"Ann\""
                )
            );
        }
    }

    #[test]
    fn the_log_tells_a_return_only_after_the_player_was_reported_absent() {
        let mut view = table_with("Eve");
        let mut seq = 5;
        // Each event's log line (worded before it) and script line, then the event folded.
        let mut step = |event: Event| {
            let logged = log_sentence(&event, &view);
            let line = script_line(seq, &event, &view);
            view = view.folded(seq, std::slice::from_ref(&event)).unwrap();
            seq += 1;
            (logged, line)
        };
        let drop = |player| Event::ConnectionChanged {
            player,
            connected: false,
        };
        let back = |player| Event::ConnectionChanged {
            player,
            connected: true,
        };
        // A drop and a return within the grace period (a restart, a tunnel): nothing in the log,
        // while script mode still has every event.
        for event in [drop(1), back(1)] {
            let (logged, line) = step(event);
            assert_eq!(logged, None);
            assert!(
                line.contains("connection_changed player=1 \"Ben\""),
                "{line}"
            );
        }
        // Away past the absence limit: the absence is told, and so is the return, once.
        assert_eq!(step(drop(1)).0, None);
        assert_eq!(
            step(Event::PlayerAbsent { player: 1 }).0.as_deref(),
            Some("Ben is absent")
        );
        assert_eq!(step(back(1)).0.as_deref(), Some("Ben is back"));
        // Back means no longer absent: the next drop and return are quiet again.
        assert_eq!(step(drop(1)).0, None);
        assert_eq!(step(back(1)).0, None);
        // Every other event keeps its line.
        assert_eq!(
            step(Event::TablePaused { paused: true }).0.as_deref(),
            Some("The host paused the table")
        );
    }

    /// The one list has words for every kind of event the protocol has: no script line or
    /// sentence of this client falls back to the wire fields.
    #[test]
    fn every_event_kind_has_a_wording() {
        let view = table_with("Eve");
        let events = examples::events();
        for kind in Event::NAMES {
            let event = events
                .iter()
                .find(|e| e.name() == *kind)
                .unwrap_or_else(|| panic!("no example of {kind}"));
            let words = wording(event, &view).unwrap_or_else(|| panic!("no words for {kind}"));
            assert!(!words.sentence.is_empty(), "{kind}");
            assert_eq!(
                script_line(4, event, &view),
                format!("event 4 {kind}{}", words.fields)
            );
            assert_eq!(sentence(event, &view), words.sentence);
        }
    }

    #[test]
    fn new_events_have_words_in_both_modes() {
        let view = table_with("Eve");
        let words = |event: Event| (script_line(9, &event, &view), sentence(&event, &view));
        for (reason, script, text) in [
            (KeepReason::Decided, "decided", "Eve kept 6"),
            (
                KeepReason::Clock,
                "clock",
                "Eve kept 6 (mulligan clock ran out)",
            ),
            (KeepReason::Absent, "absent", "Eve kept 6 (away too long)"),
            (KeepReason::Ruling, "ruling", "Eve kept 6 (host's ruling)"),
        ] {
            let (line, sentence) = words(Event::Kept {
                player: 2,
                hand_size: 6,
                reason,
            });
            assert_eq!(
                line,
                format!("event 9 kept player=2 \"Eve\" hand=6 reason={script}")
            );
            assert_eq!(sentence, text);
        }
        assert_eq!(
            words(Event::PlayerKicked {
                player: 1,
                banned: true
            }),
            (
                "event 9 player_kicked player=1 \"Ben\" banned=true".to_owned(),
                "Ben was removed and banned by the host".to_owned()
            )
        );
        assert_eq!(
            words(Event::PlayerKicked {
                player: 1,
                banned: false
            }),
            (
                "event 9 player_kicked player=1 \"Ben\" banned=false".to_owned(),
                "Ben was removed by the host".to_owned()
            )
        );
        assert_eq!(
            words(Event::PlayerMuted {
                player: Some(0),
                muted: true
            }),
            (
                "event 9 player_muted player=0 \"Ann\" muted=true".to_owned(),
                "Ann: muted by the host".to_owned()
            )
        );
        assert_eq!(
            words(Event::HostCalled {
                player: 1,
                reason: "is \"Wrath\" resolved?".to_owned()
            }),
            (
                "event 9 host_called player=1 \"Ben\" reason=\"is \\\"Wrath\\\" resolved?\""
                    .to_owned(),
                "Ben calls the host: is \"Wrath\" resolved?".to_owned()
            )
        );
        assert_eq!(
            words(Event::HostAnswered { player: None }),
            (
                "event 9 host_answered player=all".to_owned(),
                "The host answered every open call".to_owned()
            )
        );
        assert_eq!(
            words(Event::PlayerMuted {
                player: None,
                muted: false
            }),
            (
                "event 9 player_muted player=spectators muted=false".to_owned(),
                "The spectators: no longer muted".to_owned()
            )
        );
    }

    #[test]
    fn status_shows_who_is_muted() {
        let mut view = table_with("Eve");
        view = view
            .folded(
                5,
                &[
                    Event::PlayerMuted {
                        player: Some(1),
                        muted: true,
                    },
                    Event::PlayerMuted {
                        player: None,
                        muted: true,
                    },
                ],
            )
            .unwrap();
        let mut state = State::new("ws://h/ws", TableId::nil());
        state.view = Some(view);
        let lines = status_lines(&state);
        assert!(lines[0].contains(" spectators_muted=true "), "{}", lines[0]);
        let seat = |name: &str| {
            lines
                .iter()
                .find(|l| l.contains(&format!("\"{name}\"")))
                .unwrap()
                .clone()
        };
        assert!(seat("Ben").contains(" muted=true "), "{}", seat("Ben"));
        assert!(seat("Ann").contains(" muted=false "), "{}", seat("Ann"));
    }
}
