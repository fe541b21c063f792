//! The interactive UI rendered on ratatui's test backend for a 28-seat table in the middle of a
//! game played on a real server: running turns with their spheres, a waiting turn, an eliminated
//! seat, and the player's own seat and range must all be on screen.
#![allow(clippy::unwrap_used)]

mod common;

use common::{TestServer, call, snapshot};
use grand_melee_cli::describe::Situation;
use grand_melee_cli::net::Conn;
use grand_melee_cli::session::{Action, Note, State};
use grand_melee_cli::tui::{Screen, render};
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Phase, PlayerId, PlayerStatus, Reduction, Ruling, ServerMessage,
    StageName, TableId, TableView, TurnStateName,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const NAMES: [&str; 28] = [
    "Ann", "Ben", "Cid", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon", "Kim", "Lea", "Max",
    "Ned", "Oli", "Pam", "Quinn", "Ray", "Sue", "Tom", "Uma", "Val", "Wes", "Xia", "Yan", "Zoe",
    "Abe", "Bea",
];

const WIDTH: u16 = 160;
const HEIGHT: u16 = 46;

/// Plays a 28-seat game on a real server up to a point where one turn waits for another, a
/// player has been eliminated and a player has been attacked. Returns the table as a fresh
/// snapshot shows it.
async fn mid_game() -> (TableId, TableView) {
    let server = TestServer::start().await;
    let url = server.url();
    let mut seats = Vec::new();
    for _ in 0..NAMES.len() {
        seats.push(Conn::open(&url).await.unwrap());
    }
    let created = call(
        &mut seats[0],
        ClientMessage::CreateTable {
            id: 0,
            name: "Friday melee".into(),
            seats: 28,
            spell_range: 2,
            reduction: Reduction::Eager,
            starting_life: 20,
            password: None,
            seed: Some(2026),
            turn_clock_secs: 0,
            absence_limit_secs: 600,
            mulligan_clock_secs: 60,
            max_spectators: 100,
        },
    )
    .await;
    let ServerMessage::TableCreated { table, .. } = created else {
        panic!("{created:?}");
    };
    for (conn, name) in seats.iter_mut().zip(NAMES) {
        let seated = call(
            conn,
            ClientMessage::Join {
                id: 0,
                table,
                name: name.into(),
                password: None,
            },
        )
        .await;
        assert!(matches!(seated, ServerMessage::Seated { .. }), "{seated:?}");
    }
    let mut spectator = Conn::open(&url).await.unwrap();
    call(
        &mut spectator,
        ClientMessage::Watch {
            id: 0,
            table,
            password: None,
        },
    )
    .await;
    call(
        &mut seats[0],
        ClientMessage::Start {
            id: 0,
            first_player: None,
        },
    )
    .await;
    let mut view = snapshot(&mut spectator).await;
    while let Some(decider) = view.mulligan_decider {
        call(
            &mut seats[usize::from(decider)],
            ClientMessage::Keep { id: 0 },
        )
        .await;
        view = snapshot(&mut spectator).await;
    }
    assert_eq!(view.stage, StageName::Playing);
    assert_eq!(
        view.turns.len(),
        4,
        "28 players at range 2 play 4 turns at once"
    );

    // Turn 0 is ended again and again, so it passes left until it comes too close to the next
    // running turn and has to wait.
    for _ in 0..7 {
        let turn = view.turn(0).unwrap().clone();
        if turn.state == TurnStateName::Waiting {
            break;
        }
        call(
            &mut seats[usize::from(turn.player)],
            ClientMessage::EndTurn { id: 0 },
        )
        .await;
        view = snapshot(&mut spectator).await;
    }
    let waiting = view.turn(0).unwrap().clone();
    assert_eq!(waiting.state, TurnStateName::Waiting, "{view:?}");

    // Turn 2's player attacks someone in range.
    let attacker = view.turn(2).unwrap().player;
    call(
        &mut seats[usize::from(attacker)],
        ClientMessage::SetPhase {
            id: 0,
            phase: Phase::Combat,
        },
    )
    .await;
    view = snapshot(&mut spectator).await;
    let defender = view.player(attacker).unwrap().may_attack[0];
    call(
        &mut seats[usize::from(attacker)],
        ClientMessage::Attack {
            id: 0,
            target: defender,
            damage: 3,
            poison: 1,
        },
    )
    .await;

    // The host rules out a player far from every turn (so his position stays in the ring).
    let folded = grand_melee_protocol::rules::Table::from_view(&view).unwrap();
    let far = view
        .ring
        .iter()
        .copied()
        .find(|&p| {
            p != 0
                && view
                    .turns
                    .iter()
                    .all(|t| folded.distance(p, t.player).is_some_and(|d| d > 2))
        })
        .unwrap();
    call(
        &mut seats[0],
        ClientMessage::Ruling {
            id: 0,
            ruling: Ruling::Eliminate { players: vec![far] },
        },
    )
    .await;
    let view = snapshot(&mut spectator).await;
    assert_eq!(view.player(far).unwrap().status, PlayerStatus::Eliminated);
    for conn in seats {
        conn.close().await;
    }
    spectator.close().await;
    server.shutdown().await;
    (table, view)
}

/// The text of the buffer's rows between columns `from` and `to`.
fn rows(buffer: &Buffer, from: u16, to: u16) -> Vec<String> {
    (0..buffer.area.height)
        .map(|y| (from..to).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

/// The ring row of the player called `name`.
fn row_of<'a>(ring: &'a [String], name: &str) -> &'a str {
    let found: Vec<&String> = ring
        .iter()
        .filter(|r| {
            r.split_whitespace()
                .any(|w| w.trim_start_matches(['@', '»']).trim_end_matches('★') == name)
        })
        .collect();
    assert_eq!(found.len(), 1, "one ring row for {name}: {ring:#?}");
    found[0]
}

/// The view after `events` (numbered from `view.seq + 1`), folded by the protocol's mirror.
fn folded(view: &TableView, events: &[grand_melee_protocol::Event]) -> TableView {
    let mut mirror = grand_melee_protocol::Mirror::new(view).unwrap();
    mirror.apply_batch(view.seq + 1, events).unwrap();
    mirror.view()
}

fn name(view: &TableView, player: PlayerId) -> &str {
    &view.player(player).unwrap().name
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_28_seat_table_mid_game_shows_turns_spheres_the_eliminated_and_my_range() {
    let (table, view) = mid_game().await;
    // The player is the one whose turn waits.
    let me = view.turn(0).unwrap().player;
    let state = State {
        server: "ws://127.0.0.1:7878/ws".into(),
        table,
        me: Some(me),
        spectator: false,
        mirror: Some(grand_melee_protocol::Mirror::new(&view).unwrap()),
        view: Some(view.clone()),
        connected: true,
    };
    let mut screen = Screen::new();
    screen.note(
        &state,
        Note::Rejected {
            code: ErrorCode::NotYourTurn,
            command: "end".into(),
        },
    );
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    terminal.draw(|f| render(f, &screen, &state)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let all = rows(&buffer, 0, WIDTH).join("\n");
    // The ring is the left 58% of the middle of the screen.
    let ring: Vec<String> = rows(&buffer, 0, WIDTH * 58 / 100)
        .into_iter()
        .skip(5)
        .take(usize::from(HEIGHT) - 9)
        .collect();

    // Every running turn is marked on its holder's row, and its sphere is banded.
    let running: Vec<_> = view
        .turns
        .iter()
        .filter(|t| t.state == TurnStateName::Running)
        .collect();
    assert!(running.len() >= 2, "{:?}", view.turns);
    for turn in &running {
        let row = row_of(&ring, name(&view, turn.player));
        assert!(row.contains(&format!("▶T{}", turn.turn)), "{row}");
        for &p in &turn.sphere {
            let row = row_of(&ring, name(&view, p));
            assert!(
                row.trim_start_matches(['│', ' '])
                    .starts_with(&format!("{}┃", turn.turn)),
                "{} is in turn {}'s sphere: {row}",
                name(&view, p),
                turn.turn
            );
        }
    }
    // The waiting turn, and why it waits.
    let my_row = row_of(&ring, name(&view, me));
    assert!(my_row.contains("…T0 waiting"), "{my_row}");
    assert!(my_row.contains('@'), "{my_row}");
    let Situation::WaitingFor { holders } = Situation::of(&view, Some(me)) else {
        panic!("the player waits");
    };
    assert!(!holders.is_empty());
    assert!(
        all.contains(&format!("Waiting for {} to finish", holders.join(" and "))),
        "{all}"
    );
    // The eliminated seat.
    let out: Vec<_> = view
        .players
        .iter()
        .filter(|p| p.status == PlayerStatus::Eliminated)
        .collect();
    assert_eq!(out.len(), 1);
    let out_row = row_of(&ring, &out[0].name);
    assert!(out_row.contains("OUT"), "{out_row}");
    // The player's range: marked in the ring and listed in the header.
    let range = &view.player(me).unwrap().may_target;
    assert!(range.len() >= 3, "{range:?}");
    for p in &view.players {
        let row = row_of(&ring, &p.name);
        let marked = row.contains(&format!("»{}", p.name));
        let in_range = p.player != me && range.contains(&p.player);
        assert_eq!(marked, in_range, "range mark of {}: {row}", p.name);
    }
    let targets: Vec<&str> = range.iter().map(|&p| name(&view, p)).collect();
    assert!(
        all.contains(&format!("may target: {}", targets.join(", "))),
        "{all}"
    );
    // The attacked player's life and poison.
    let hurt = view.players.iter().find(|p| p.life == 17).unwrap();
    let hurt_row = row_of(&ring, &hurt.name);
    assert!(hurt_row.contains("17  1p"), "{hurt_row}");
    // The refusal, in plain words.
    assert!(
        all.contains("end: you are not taking a turn (not_your_turn)"),
        "{all}"
    );
    check_small_terminal(&state, &view);
}

/// The same table on a small terminal: every seat still shows, with its turn marks.
fn check_small_terminal(state: &State, view: &TableView) {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| render(f, &Screen::new(), state)).unwrap();
    let screen = rows(terminal.backend().buffer(), 0, 80).join("\n");
    for p in &view.players {
        let prefix: String = p.name.chars().take(3).collect();
        assert!(screen.contains(&prefix), "{} on screen:\n{screen}", p.name);
    }
    for turn in &view.turns {
        let mark = match turn.state {
            TurnStateName::Running => format!("▶{}", turn.turn),
            _ => format!("…{}", turn.turn),
        };
        assert!(screen.contains(&mark), "{mark} on screen:\n{screen}");
    }
    assert!(screen.contains(" OUT"), "{screen}");
}

#[test]
fn the_command_line_edits_completes_and_submits() {
    let mut view = TableView::new(
        TableId::nil(),
        "t",
        grand_melee_protocol::Settings::default(),
    );
    view = folded(
        &view,
        &[grand_melee_protocol::Event::PlayerJoined {
            player: 0,
            name: "Bartholomew".into(),
        }],
    );
    let state = State {
        view: Some(view),
        me: Some(0),
        ..State::new("ws://x/ws", TableId::nil())
    };
    let mut screen = Screen::new();
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    for c in "att".chars() {
        assert_eq!(screen.key(&state, key(KeyCode::Char(c))), None);
    }
    screen.key(&state, key(KeyCode::Tab));
    assert_eq!(screen.input, "attack ");
    for c in "bar".chars() {
        screen.key(&state, key(KeyCode::Char(c)));
    }
    screen.key(&state, key(KeyCode::Tab));
    assert_eq!(screen.input, "attack Bartholomew ");
    screen.key(&state, key(KeyCode::Char('2')));
    assert_eq!(
        screen.key(&state, key(KeyCode::Enter)),
        Some(Action::Line("attack Bartholomew 2".into()))
    );
    assert_eq!(screen.input, "");
    screen.key(&state, key(KeyCode::Up));
    assert_eq!(screen.input, "attack Bartholomew 2", "history");
    assert_eq!(
        screen.key(
            &state,
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
        ),
        Some(Action::Quit)
    );
}

/// Names, a table name and chat lines that would act on a terminal (the real server refuses
/// them; the UI escapes them anyway): nothing reaches the screen's cells but printable text,
/// and what was sent shows as visible escapes, in the header, the ring, the log, the chat, the
/// message line and the command line (a name completed with Tab).
#[test]
fn hostile_text_reaches_the_screen_only_as_visible_escapes() {
    use grand_melee_protocol::{Event, Settings};
    let osc52 = "\u{1b}]52;c;ZXZpbA==\u{7}";
    let title = "\u{1b}]0;owned\u{7}";
    let names = [
        "Ann",
        title,
        "Mal\u{9b}2J\u{2028}x",
        "bidi\u{202e}txet\u{200b}",
    ];
    let mut view = TableView::new(TableId::nil(), title, Settings::default());
    let mut events: Vec<Event> = (0..)
        .zip(names)
        .map(|(player, name)| Event::PlayerJoined {
            player,
            name: name.into(),
        })
        .collect();
    events.push(Event::GameStarted {
        seating: vec![0, 1, 2, 3],
        first_player: 1,
        turn_holders: vec![1],
    });
    view = folded(&view, &events);
    let state = State {
        view: Some(view.clone()),
        me: Some(0),
        connected: true,
        ..State::new("ws://x/ws", TableId::nil())
    };
    let mut screen = Screen::new();
    let notes = [
        Event::Chat {
            from: Some(1),
            name: title.into(),
            text: osc52.into(),
        },
        Event::PlayerMuted {
            player: Some(2),
            muted: true,
        },
        Event::Chat {
            from: None,
            name: "nel\u{85}\u{b}\u{c}".into(),
            text: "c1\u{9b}2J\r\nline".into(),
        },
    ];
    for (seq, event) in (6..).zip(notes) {
        screen.note(
            &state,
            Note::Event {
                seq,
                line: grand_melee_cli::describe::script_line(seq, &event, &view),
                sentence: grand_melee_cli::describe::sentence(&event, &view),
                event,
            },
        );
    }
    screen.note(&state, Note::Status);
    screen.note(
        &state,
        Note::Problem {
            kind: "protocol",
            message: format!("ignored {osc52}"),
        },
    );
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    for c in "attack m".chars() {
        screen.key(&state, key(KeyCode::Char(c)));
    }
    screen.key(&state, key(KeyCode::Tab));
    assert_eq!(screen.input, format!("attack {} ", names[2]), "completed");

    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    terminal.draw(|f| render(f, &screen, &state)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    for cell in buffer.content() {
        assert!(
            !cell
                .symbol()
                .chars()
                .any(grand_melee_cli::safe::must_escape),
            "{:?} on screen",
            cell.symbol()
        );
    }
    let all = rows(&buffer, 0, WIDTH).join("\n");
    for visible in [
        r"\u{1b}]0;owned\u{7}",
        r"\u{1b}]52;c;ZXZpbA==\u{7}",
        r"Mal\u{9b}2J\u{2028}x",
        r"bidi\u{202e}txet\u{200b}",
        r"c1\u{9b}2J\u{d}\u{a}line",
        r"ignored \u{1b}]52",
        r"attack Mal\u{9b}2J\u{2028}x",
    ] {
        assert!(all.contains(visible), "no {visible} on screen:\n{all}");
    }
}
