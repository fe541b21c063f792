//! Mountain Magic in the terminal client: climbs dealt and played by the real table (the
//! protocol's `MountainMagic`, deciding from its dice), drawn at the size an 80×24 terminal
//! gives the panel at each step, the situation, `status`, the commands and the mirror.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::game::{Game, GameKind};
use grand_melee_protocol::mountain_magic::MountainMagic as Table;
use grand_melee_protocol::mountain_magic_types::{ForceRef, ManaPlace, MmPhase, MountainCommand};
use grand_melee_protocol::rules::{Actor, Command};
use grand_melee_protocol::{ClientMessage, Event, SeatingMode, Settings, TableId, TableView};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::words::card;
use super::*;
use crate::games::{GameMirror, Urgency};
use crate::words::{CommandError, Resolver};

fn settings() -> Settings {
    Settings {
        seats: 1,
        game: GameKind::MountainMagic,
        ..Settings::default()
    }
}

/// A started climb: Ann seated, the mountain dealt; the events so far.
fn started(seed: u64) -> (Table, Vec<Event>) {
    let mut table = Table::create(&settings(), DiceSecret::from_seed(seed)).unwrap();
    let mut events = table
        .handle(
            Actor::Player(0),
            Command::Join {
                name: "Ann".into(),
                entropy: "ann".into(),
                deck: None,
            },
        )
        .unwrap();
    events.extend(
        table
            .handle(
                Actor::Host,
                Command::Start {
                    first_player: None,
                    seating: SeatingMode::Random,
                    order: Vec::new(),
                },
            )
            .unwrap(),
    );
    (table, events)
}

fn view(table: &Table, seq: usize) -> TableView {
    table.view(TableId::from_u128(31), "climb", seq as u64, &settings())
}

/// The panel drawn `width`×`rows`, row by row.
fn draw(view: &TableView, width: u16, rows: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, rows)).unwrap();
    terminal
        .draw(|f| MountainMagic.render(f, Rect::new(0, 0, width, rows), view, Some(0), false))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..rows)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// The panel as an 80×24 terminal draws it.
fn drawn(view: &TableView) -> Vec<String> {
    let rows = u16::try_from(MountainMagic.rows(1, 80, false)).unwrap();
    draw(view, 80, rows)
}

/// A simple policy over the table's own legal moves: place where first allowed, discard,
/// flip; the first path; in the battle, a few actions a turn, then the end of the turn.
fn next_move(table: &Table, acted: &mut u32) -> Option<MountainCommand> {
    let moves = table.climb().legal_moves();
    if let Some(place) = moves
        .iter()
        .find(|m| matches!(m, MountainCommand::Place { .. }))
    {
        return Some(place.clone());
    }
    if *acted >= 6 {
        *acted = 0;
        return moves
            .iter()
            .find(|m| matches!(m, MountainCommand::EndTurn))
            .cloned()
            .or_else(|| moves.first().cloned());
    }
    let chosen = moves
        .iter()
        .find(|m| matches!(m, MountainCommand::Mana { place: Some(_) }))
        .or_else(|| moves.first())
        .cloned();
    if matches!(
        chosen,
        Some(MountainCommand::Cast { .. } | MountainCommand::Attack { .. })
    ) {
        *acted += 1;
    }
    if matches!(chosen, Some(MountainCommand::EndTurn)) {
        *acted = 0;
    }
    chosen
}

#[test]
fn a_climb_is_drawn_at_every_step_in_the_rows_an_80_by_24_terminal_leaves_it() {
    let mut seen = [false; 4];
    for seed in 0..12 {
        let (mut table, mut events) = started(seed);
        let mut acted = 0;
        for _ in 0..3_000 {
            let now = view(&table, events.len());
            let mm = now.mountain_magic.as_deref().unwrap().clone();
            let rows = drawn(&now);
            assert!(rows.len() <= 10 && rows.iter().all(|r| r.chars().count() <= 80));
            let situation = Situation::of(&now, Some(0));
            match mm.phase {
                MmPhase::Climbing => {
                    seen[0] = true;
                    assert!(rows[0].starts_with("Mountain · spell deck"), "{rows:#?}");
                    // The seven rows of the mountain, the top first; the bottom row's seven
                    // cards by name.
                    assert!(rows[1].starts_with("6 "), "{rows:#?}");
                    assert!(rows[7].starts_with("0 "), "{rows:#?}");
                    let bottom = table.climb().at(0, 0).unwrap();
                    assert!(
                        rows[7].contains(&card(bottom).chars().take(5).collect::<String>()),
                        "{rows:#?}"
                    );
                    let places = table.climb().placements();
                    match table.climb().card_to_place() {
                        Some(no) => {
                            assert!(rows[8].starts_with("To place: "), "{rows:#?}");
                            assert!(rows[8].contains(&card(no)), "{rows:#?}");
                            for (row, pos) in &places {
                                assert!(
                                    rows.iter().any(|r| r.contains(&format!("▸{row}:{pos}"))),
                                    "{row}:{pos} marked: {rows:#?}"
                                );
                            }
                            assert_eq!(situation.urgency(), Urgency::Act);
                        }
                        None => assert!(rows[8].contains("`flip`"), "{rows:#?}"),
                    }
                    // What the situation offers is what the table accepts now.
                    let legal = table.climb().legal_moves();
                    let script = situation.script();
                    let offered = if script == "flip" {
                        vec![MountainCommand::Flip]
                    } else if script.ends_with("from=deck") {
                        vec![MountainCommand::Discard]
                    } else {
                        assert!(script.ends_with("from=discard_pile"), "{script}");
                        assert!(!places.is_empty(), "{script}");
                        vec![MountainCommand::Flip]
                    };
                    for command in offered {
                        assert!(legal.contains(&command), "{script}: {legal:?}");
                    }
                    for (row, pos) in places {
                        assert!(script.contains(&format!("{row}:{pos}")), "{script}");
                        let place = MountainCommand::Place { row, pos };
                        assert!(legal.contains(&place), "{script}: {legal:?}");
                    }
                    assert!(rows[9].starts_with("Discard pile: "), "{rows:#?}");
                }
                MmPhase::Path => {
                    seen[1] = true;
                    assert!(rows[8].contains("choose your path"), "{rows:#?}");
                    assert_eq!(situation.script(), "path");
                }
                MmPhase::Battle => {
                    seen[2] = true;
                    assert!(rows[0].starts_with("Battle · "), "{rows:#?}");
                    assert!(rows.iter().any(|r| r.starts_with("Occupying o0 ")));
                    assert!(rows.iter().any(|r| r.starts_with("Yours     y0 ")));
                    // The path's cards are marked on no mountain now: the forces are named.
                    let first = mm.battle.as_ref().unwrap().player[0].card;
                    assert!(
                        rows.iter()
                            .any(|r| r.contains(&card(first).chars().take(8).collect::<String>()))
                    );
                }
                MmPhase::Over => {
                    seen[3] = true;
                    let ending = situation::outcome_words(table.climb()).unwrap();
                    assert_eq!(rows[0], format!("The climb is over: {ending}"));
                    assert_eq!(situation.script(), format!("over ending=\"{ending}\""));
                    assert_eq!(situation.urgency(), Urgency::Calm);
                    break;
                }
                MmPhase::Undealt => panic!("a started climb is dealt"),
            }
            let command = next_move(&table, &mut acted).expect("a move until the end");
            events.extend(
                table
                    .handle(Actor::Player(0), Command::MountainMagic(command))
                    .unwrap(),
            );
        }
        assert_eq!(table.climb().view().phase, MmPhase::Over, "seed {seed}");
    }
    assert_eq!(
        seen, [true; 4],
        "climbing, the path, the battle and an ending"
    );
}

#[test]
fn the_mirror_follows_a_whole_climb_from_the_lobby() {
    let lobby = Table::create(&settings(), DiceSecret::from_seed(5)).unwrap();
    let mut mirror = GameMirror::of(&view(&lobby, 0)).unwrap();
    let (mut table, mut events) = started(5);
    let mut acted = 0;
    while table.climb().view().phase != MmPhase::Over {
        let command = next_move(&table, &mut acted).unwrap();
        events.extend(
            table
                .handle(Actor::Player(0), Command::MountainMagic(command))
                .unwrap(),
        );
    }
    for (k, event) in events.iter().enumerate() {
        mirror.apply(k as u64 + 1, event).unwrap();
    }
    let mirrored = mirror.view();
    let truth = view(&table, events.len());
    assert_eq!(mirrored.mountain_magic, truth.mountain_magic);
    assert_eq!(
        MountainMagic.status_lines(&mirrored, Some(0)),
        MountainMagic.status_lines(&truth, Some(0))
    );
    assert!(MountainMagic.status_lines(&truth, Some(0))[0].starts_with("climb phase=over"));
}

#[test]
fn the_climb_starts_with_flip_and_the_lobby_with_start() {
    let lobby = Table::create(&settings(), DiceSecret::from_seed(1)).unwrap();
    let mut seated = lobby.clone();
    seated
        .handle(
            Actor::Player(0),
            Command::Join {
                name: "Ann".into(),
                entropy: String::new(),
                deck: None,
            },
        )
        .unwrap();
    let mut at_lobby = view(&seated, 1);
    at_lobby.host = Some(0);
    assert_eq!(Situation::of(&at_lobby, Some(0)).script(), "lobby host");
    assert_eq!(Situation::of(&at_lobby, None), Situation::Spectating);
    let (table, events) = started(1);
    let now = view(&table, events.len());
    let situation = Situation::of(&now, Some(0));
    assert_eq!(situation.script(), "flip");
    assert!(situation.text().contains("`flip`"));
    assert!(MountainMagic.header_facts(&now).starts_with("climbing · "));
    let status = MountainMagic.status_lines(&now, Some(0));
    assert!(status[0].starts_with("climb phase=climbing "), "{status:?}");
    assert!(status[7].starts_with("row 0: \""), "{status:?}");
    assert!(status[1].starts_with("row 6: -"), "{status:?}");
}

fn parsed(line: &str) -> Result<Option<ClientMessage>, CommandError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let resolve = Resolver {
        view: None,
        me: Some(0),
    };
    commands::parse(words[0], &words[1..], "", &resolve)
}

fn request(command: MountainCommand) -> Result<Option<ClientMessage>, CommandError> {
    Ok(Some(ClientMessage::mountain_magic(0, command)))
}

#[test]
fn the_commands_make_their_requests() {
    use grand_melee_protocol::mountain_magic_types::{Colour, Side};
    assert_eq!(parsed("flip"), request(MountainCommand::Flip));
    assert_eq!(parsed("discard"), request(MountainCommand::Discard));
    assert_eq!(parsed("end"), request(MountainCommand::EndTurn));
    assert_eq!(
        parsed("concede"),
        Ok(Some(ClientMessage::Concede { id: 0 }))
    );
    for line in ["place 2:3", "place 2 3"] {
        assert_eq!(
            parsed(line),
            request(MountainCommand::Place { row: 2, pos: 3 })
        );
    }
    let path = vec![0, 0, 1, 1, 2, 2, 3];
    for line in ["path 0 0 1 1 2 2 3", "path 0011223", "path 0,0,1,1,2,2,3"] {
        assert_eq!(
            parsed(line),
            request(MountainCommand::Path { path: path.clone() })
        );
    }
    assert_eq!(
        parsed("mana none"),
        request(MountainCommand::Mana { place: None })
    );
    assert_eq!(
        parsed("mana y2 r"),
        request(MountainCommand::Mana {
            place: Some(ManaPlace {
                force: 2,
                ability: false,
                colour: Colour::Red
            })
        })
    );
    assert_eq!(
        parsed("mana 4 ability green"),
        request(MountainCommand::Mana {
            place: Some(ManaPlace {
                force: 4,
                ability: true,
                colour: Colour::Green
            })
        })
    );
    assert_eq!(
        parsed("cast y3 o1"),
        request(MountainCommand::Cast {
            force: 3,
            target: Some(ForceRef {
                side: Side::Opponent,
                force: 1
            })
        })
    );
    assert_eq!(
        parsed("activate 1 y0"),
        request(MountainCommand::Activate {
            force: 1,
            target: Some(ForceRef {
                side: Side::Player,
                force: 0
            })
        })
    );
    assert_eq!(
        parsed("cast 5"),
        request(MountainCommand::Cast {
            force: 5,
            target: None
        })
    );
    assert_eq!(
        parsed("attack o2 y0 4"),
        request(MountainCommand::Attack {
            attackers: vec![0, 4],
            target: 2
        })
    );
    for bad in [
        "place 2",
        "place x:1",
        "path 0 0 1",
        "mana y2 purple",
        "mana o1 r",
        "cast o1",
        "attack o2",
        "attack y1 y0",
    ] {
        assert!(
            matches!(parsed(bad), Err(CommandError::Usage(_))),
            "{bad}: {:?}",
            parsed(bad)
        );
    }
    assert_eq!(parsed("fly"), Ok(None));
}

#[test]
fn every_command_has_a_help_line_and_parses_to_a_request_or_a_usage() {
    for name in commands::NAMES {
        assert!(
            commands::HELP
                .play
                .iter()
                .any(|(usage, _)| usage.split(' ').next() == Some(name)),
            "{name}"
        );
        assert!(
            !matches!(parsed(name), Ok(None)),
            "{name} is Mountain Magic's"
        );
    }
}

/// A climb of a day's mountain says so: its day on the title bar and in `status`, and at its
/// end, drawn at 80×24, where its standings are.
#[test]
fn a_day_climb_names_its_day_and_at_the_end_its_standings() {
    let day_settings = Settings {
        mountain_magic: Some(
            grand_melee_protocol::mountain_magic_types::MountainMagicSettings {
                day: Some("2026-11-26".into()),
                ..Default::default()
            },
        ),
        ..settings()
    };
    let mut table = Table::create(&day_settings, DiceSecret::from_seed(26)).unwrap();
    table
        .handle(Actor::Player(0), Command::join("Ann"))
        .unwrap();
    table.handle(Actor::Host, Command::start(None)).unwrap();
    let at = |table: &Table| table.view(TableId::from_u128(26), "day", 1, &day_settings);
    assert_eq!(
        MountainMagic.header_facts(&at(&table)),
        format!(
            "2026-11-26's mountain · climbing · {} spells left",
            table.climb().view().spells_left
        )
    );
    assert!(
        MountainMagic.status_lines(&at(&table), Some(0))[0]
            .contains(" day=2026-11-26 ending=\"none\""),
        "{:?}",
        MountainMagic.status_lines(&at(&table), Some(0))
    );
    // The same climb at a table of one's own names no day.
    let own = view(&table, 1);
    assert!(!MountainMagic.header_facts(&own).contains("mountain"));
    table.handle(Actor::Player(0), Command::Concede).unwrap();
    let rows = drawn(&at(&table));
    assert!(
        rows.iter()
            .any(|r| r
                == "2026-11-26's mountain · standings: grand-melee standings --day 2026-11-26"),
        "{rows:#?}"
    );
    assert!(rows.iter().all(|r| r.chars().count() <= 80));
    let rows = drawn(&view(&table, 1));
    assert!(!rows.iter().any(|r| r.contains("standings")), "{rows:#?}");
}
