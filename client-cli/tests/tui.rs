//! The interactive UI rendered on ratatui's test backend for a 28-seat table in the middle of a
//! game played on a real server: running turns with their spheres, a waiting turn, an eliminated
//! seat, and the player's own seat and range must all be on screen.
#![allow(clippy::unwrap_used)]

mod common;

use common::{CreateTable, TestServer, call, create, snapshot};
use grand_melee_cli::describe::Situation;
use grand_melee_cli::net::Conn;
use grand_melee_cli::session::{Action, Note, State};
use grand_melee_cli::tui::{Screen, render};
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Phase, PlayerId, PlayerStatus, Ruling, ServerMessage, StageName,
    TableId, TableView, TurnStateName,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const WIDTH: u16 = 160;
const HEIGHT: u16 = 46;

/// A name of 13 characters whose first 8 are unique: `Player07-Long`.
fn long_name(i: usize) -> String {
    format!("Player{i:02}-Long")
}

/// Plays a game of `seats` players (range 2) on a real server up to a point where one turn
/// waits for another, a player has been eliminated, a player has been attacked and one player
/// is disconnected. Returns the table as a fresh snapshot shows it.
async fn mid_game(seats: u8) -> (TableId, TableView) {
    let server = TestServer::start().await;
    let url = server.url();
    let mut conns = Vec::new();
    for _ in 0..seats {
        conns.push(Some(Conn::open(&url).await.unwrap()));
    }
    let settings = CreateTable::new("Friday melee", seats).seed(2026);
    let table = create(conns[0].as_mut().unwrap(), settings).await;
    for (i, conn) in conns.iter_mut().enumerate() {
        let seated = call(
            conn.as_mut().unwrap(),
            ClientMessage::Join {
                id: 0,
                table,
                name: long_name(i),
                password: None,
                entropy: None,
                member_token: None,
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
        conns[0].as_mut().unwrap(),
        ClientMessage::Start {
            id: 0,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        },
    )
    .await;
    let mut view = snapshot(&mut spectator).await;
    while let Some(decider) = view.mulligan_decider {
        // Each decider looks for himself: no connection goes over its request rate.
        let conn = conns[usize::from(decider)].as_mut().unwrap();
        call(conn, ClientMessage::Keep { id: 0 }).await;
        view = snapshot(conn).await;
    }
    assert_eq!(view.stage, StageName::Playing);
    assert_eq!(
        usize::from(seats) / 6,
        view.turns.len(),
        "eager turns at range 2"
    );

    // Turn 0 is ended again and again, so it passes left until it comes too close to the next
    // running turn and has to wait.
    for _ in 0..12 {
        let turn = view.turn(0).unwrap().clone();
        if turn.state == TurnStateName::Waiting {
            break;
        }
        call(
            conns[usize::from(turn.player)].as_mut().unwrap(),
            ClientMessage::EndTurn { id: 0 },
        )
        .await;
        view = snapshot(&mut spectator).await;
    }
    let waiting = view.turn(0).unwrap().clone();
    assert_eq!(waiting.state, TurnStateName::Waiting, "{view:?}");

    // Turn 1's player attacks someone in range.
    let attacker = view.turn(1).unwrap().player;
    call(
        conns[usize::from(attacker)].as_mut().unwrap(),
        ClientMessage::SetPhase {
            id: 0,
            phase: Phase::Combat,
        },
    )
    .await;
    view = snapshot(&mut spectator).await;
    let defender = view.player(attacker).unwrap().may_attack[0];
    call(
        conns[usize::from(attacker)].as_mut().unwrap(),
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
        conns[0].as_mut().unwrap(),
        ClientMessage::Ruling {
            id: 0,
            ruling: Ruling::Eliminate { players: vec![far] },
        },
    )
    .await;
    // One player drops: the table marks him disconnected.
    let gone = view
        .players
        .iter()
        .map(|p| p.player)
        .find(|&p| p != 0 && p != far && view.turns.iter().all(|t| t.player != p))
        .unwrap();
    conns[usize::from(gone)].take().unwrap().close().await;
    loop {
        let message = tokio::time::timeout(common::PATIENCE, spectator.recv())
            .await
            .expect("the table notices the drop")
            .unwrap();
        if let ServerMessage::Events { events, .. } = message
            && events.iter().any(|e| {
                matches!(e, grand_melee_protocol::Event::ConnectionChanged { player, connected: false } if *player == gone)
            })
        {
            break;
        }
    }
    let view = snapshot(&mut spectator).await;
    assert!(!view.player(gone).unwrap().connected);
    assert_eq!(view.player(far).unwrap().status, PlayerStatus::Eliminated);
    for conn in conns.into_iter().flatten() {
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

/// Every seat's cell on screen: the text from its seat number to the next cell (or the end of
/// the row), found by the first 8 characters of its name right after its seat number and mark.
fn cells(screen: &[String], view: &TableView) -> Vec<(PlayerId, String)> {
    let mut found = Vec::new();
    for p in &view.players {
        let name8: String = p.name.chars().take(8).collect();
        let number = format!("{:>2}", p.seat.map_or(p.player, u16::from));
        let mut hits = Vec::new();
        for (y, row) in screen.iter().enumerate() {
            let chars: Vec<char> = row.chars().collect();
            for x in 3..chars.len() {
                let here: String = chars[x..].iter().take(8).collect();
                let before: String = chars[x - 3..x - 1].iter().collect();
                if here == name8 && before == number && " @»".contains(chars[x - 1]) {
                    hits.push((y, x - 3));
                }
            }
        }
        assert_eq!(
            hits.len(),
            1,
            "one cell for {}:\n{}",
            p.name,
            screen.join("\n")
        );
        found.push((p.player, hits[0]));
    }
    found
        .iter()
        .map(|&(player, (y, x))| {
            // The next cell on the same row starts at the nearest start to the right.
            let end = found
                .iter()
                .filter(|(_, (y2, x2))| *y2 == y && *x2 > x)
                .map(|(_, (_, x2))| *x2)
                .min()
                .unwrap_or(usize::MAX);
            let text: Vec<char> = screen[y].chars().skip(x).take(end - x).collect();
            // A cell ends 6 columns after its connection mark (host, turn, sphere), or 18 for
            // a full cell (which shows the whole of these 13-character names): what follows
            // belongs to the ring's middle.
            let name = &view.player(player).unwrap().name;
            let full = text.iter().collect::<String>().contains(name.as_str());
            let mark = text.iter().position(|c| "●○◌".contains(*c)).unwrap_or(0);
            let len = (mark + if full { 19 } else { 7 }).min(text.len());
            (player, text[..len].iter().collect())
        })
        .collect()
}

/// Checks that every seat of `view` is on screen with at least 8 characters of its name, its
/// life (or `OUT`), poison, connection, host mark, turn and sphere marks.
fn check_every_seat(screen: &[String], view: &TableView, what: &str) {
    for (player, cell) in cells(screen, view) {
        let p = view.player(player).unwrap();
        let tokens: Vec<&str> = cell.split_whitespace().collect();
        let life = match p.status {
            PlayerStatus::Alive => p.life.to_string(),
            PlayerStatus::Eliminated => "OUT".into(),
            PlayerStatus::Removed => "---".into(),
        };
        assert!(
            tokens.contains(&life.as_str()),
            "{what}: life {life} in {cell:?}"
        );
        assert!(
            cell.contains(&format!("{}p", p.poison)),
            "{what}: poison in {cell:?}"
        );
        let connection = if p.absent {
            '◌'
        } else if p.connected {
            '●'
        } else {
            '○'
        };
        assert!(
            cell.contains(connection),
            "{what}: {connection} in {cell:?}"
        );
        assert_eq!(
            cell.contains('★'),
            view.host == Some(player),
            "{what}: host mark of {}: {cell:?}",
            p.name
        );
        for t in &view.turns {
            let holder = t.player == player;
            // Under CR 807 turns show as their marker numbers (turn 0 is marker 1).
            let n = grand_melee_cli::tui::turn_number(view, t.turn);
            let (mark, expected) = match t.state {
                TurnStateName::Running => (format!("▶{n}"), holder),
                TurnStateName::Waiting => (format!("…{n}"), holder),
                TurnStateName::Ended => (format!("■{n}"), holder),
            };
            assert_eq!(cell.contains(&mark), expected, "{what}: {mark} on {cell:?}");
            // The holder's `▶n` stands for his own sphere mark.
            let in_sphere = t.state == TurnStateName::Running
                && t.sphere.contains(&player)
                && t.player != player;
            assert_eq!(
                cell.contains(&format!("{n}┃")),
                in_sphere,
                "{what}: sphere {n} on {cell:?}"
            );
        }
    }
}

fn draw(width: u16, height: u16, screen: &Screen, state: &State) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| render(f, screen, state)).unwrap();
    rows(terminal.backend().buffer(), 0, width)
}

fn state_of(table: TableId, view: &TableView, me: PlayerId) -> State {
    State {
        server: "ws://127.0.0.1:7878/ws".into(),
        table,
        me: Some(me),
        spectator: false,
        mirror: Some(grand_melee_protocol::Mirror::new(view).unwrap().into()),
        view: Some(view.clone()),
        connected: true,
    }
}

/// A screen whose log has many long lines (reconnections with long reasons, wrapped events),
/// then `help` and `status` opened and closed, then the newest line.
fn busy_screen(state: &State) -> Screen {
    let mut screen = Screen::new();
    for i in 0..40 {
        screen.note(
            state,
            Note::Disconnected {
                reason: format!(
                    "attempt {i}: the connection dropped because the network went away for a while (close code 1006)"
                ),
            },
        );
        screen.note(state, Note::Seated { resumed: true });
    }
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    for command in [Note::Help, Note::Status] {
        screen.note(state, command);
        assert!(screen.overlay.is_some());
        screen.key(state, key(KeyCode::Esc));
        assert!(screen.overlay.is_none(), "Esc closes the overlay");
    }
    screen.note(
        state,
        Note::Event {
            seq: 999,
            event: grand_melee_protocol::Event::TablePaused { paused: false },
            line: String::new(),
            sentence: Some("The newest line of the log, long enough to wrap on a narrow terminal, the one that must always show".into()),
        },
    );
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_seat_and_the_newest_line_show_at_every_size() {
    for seats in [15, 28, 40] {
        let (table, view) = mid_game(seats).await;
        // The player is the one whose turn waits.
        let me = view.turn(0).unwrap().player;
        let state = state_of(table, &view, me);
        let screen = busy_screen(&state);
        for (width, height) in [(80, 24), (120, 40), (200, 50)] {
            let what = format!("{seats} seats at {width}×{height}");
            let shown = draw(width, height, &screen, &state);
            let all = shown.join("\n");
            // For people to look at: target/tmp/tui-screens/.
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("tui-screens");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join(format!("{seats}-seats-{width}x{height}.txt")),
                &all,
            )
            .unwrap();
            check_every_seat(&shown, &view, &what);
            assert!(all.contains("always show"), "{what}: newest line:\n{all}");
            assert!(!all.contains("too small"), "{what}:\n{all}");
            // The waiting player's situation, his own seat and range.
            let Situation::WaitingFor { holders } = Situation::of(&view, Some(me)) else {
                panic!("the player waits");
            };
            assert!(
                all.contains(&format!("Waiting for {} to finish", holders.join(" and "))),
                "{what}:\n{all}"
            );
            let range = &view.player(me).unwrap().may_target;
            for (player, cell) in cells(&shown, &view) {
                let mark = cell.chars().nth(2).unwrap();
                let expected = if player == me {
                    '@'
                } else if range.contains(&player) {
                    '»'
                } else {
                    ' '
                };
                assert_eq!(mark, expected, "{what}: range mark on {cell:?}");
            }
        }
        // The ring is drawn as a ring when there is room: seats on the top row, down both
        // sides and on the bottom row, with the turns in the middle.
        let shown = draw(200, 50, &screen, &state);
        // Where each seat's cell starts (its number, mark and name: the header and the log may
        // name the same players elsewhere on the screen).
        let starts: Vec<(usize, usize)> = cells(&shown, &view)
            .iter()
            .map(|(_, cell)| {
                let cell = cell.trim_end();
                shown
                    .iter()
                    .enumerate()
                    .find_map(|(y, row)| row.find(cell).map(|x| (y, row[..x].chars().count())))
                    .unwrap()
            })
            .collect();
        let rows_used: std::collections::BTreeSet<usize> = starts.iter().map(|s| s.0).collect();
        let columns_used: std::collections::BTreeSet<usize> = starts.iter().map(|s| s.1).collect();
        assert!(
            columns_used.len() >= 4,
            "{seats}: cells across:\n{}",
            shown.join("\n")
        );
        assert!(
            rows_used.len() >= 8,
            "{seats}: cells down:\n{}",
            shown.join("\n")
        );
        let all = shown.join("\n");
        assert!(all.contains("Turns pass clockwise"), "{all}");
        for t in view
            .turns
            .iter()
            .filter(|t| t.state == TurnStateName::Running)
        {
            assert!(all.contains(&format!("▶ Turn {}:", t.turn)), "{all}");
        }
        // Below the size it needs, the UI says so instead of drawing garbage.
        let shown = draw(50, 15, &screen, &state).join("\n");
        assert!(shown.contains("window too small (need 80×"), "{shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrolling_reaches_every_line_and_comes_back_to_the_newest() {
    let (table, view) = mid_game(12).await;
    let state = state_of(table, &view, 0);
    let mut screen = busy_screen(&state);
    // Back in the seat: the `✖ disconnected` message is gone.
    let (bad, text) = screen.message().unwrap();
    assert!(!bad && text.contains("Back in your seat"), "{text}");
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    let first = "Disconnected: attempt 0:";
    let all = draw(80, 24, &screen, &state).join("\n");
    assert!(!all.contains(first), "{all}");
    // PgUp again and again reaches the oldest line.
    let mut reached = false;
    for _ in 0..200 {
        screen.key(&state, key(KeyCode::PageUp));
        if draw(80, 24, &screen, &state).join("\n").contains(first) {
            reached = true;
            break;
        }
    }
    assert!(reached, "PgUp reaches the first line");
    let all = draw(80, 24, &screen, &state).join("\n");
    assert!(all.contains("newer rows below"), "{all}");
    // New lines while scrolled back do not move what is read.
    let before = draw(80, 24, &screen, &state);
    screen.note(&state, Note::Seated { resumed: true });
    let after = draw(80, 24, &screen, &state);
    let log_rows = |rows: &[String]| -> Vec<String> { rows[8..20].to_vec() };
    assert_eq!(log_rows(&before)[3..], log_rows(&after)[3..]);
    screen.key(&state, key(KeyCode::End));
    let all = draw(80, 24, &screen, &state).join("\n");
    assert!(all.contains("always show"), "{all}");
    screen.key(&state, key(KeyCode::Home));
    assert!(draw(80, 24, &screen, &state).join("\n").contains(first));
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
            entropy: String::new(),
            deck: None,
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
            entropy: String::new(),
            deck: None,
        })
        .collect();
    events.push(Event::GameStarted {
        seating: vec![0, 1, 2, 3],
        first_player: 1,
        turn_holders: vec![1],
        commitment: String::new(),
        first_player_chosen: false,
        bonuses: Vec::new(),
        first_decided_by: None,
        seating_mode: grand_melee_protocol::SeatingMode::Random,
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
                sentence: grand_melee_cli::describe::log_sentence(&event, &view),
                event,
            },
        );
    }
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
    // The status window writes every name in full.
    screen.note(&state, Note::Status);

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

/// The view after `events` (numbered from `view.seq + 1`), folded by the protocol's mirror.
fn folded(view: &TableView, events: &[grand_melee_protocol::Event]) -> TableView {
    let mut mirror = grand_melee_protocol::Mirror::new(view).unwrap();
    mirror.apply_batch(view.seq + 1, events).unwrap();
    mirror.view()
}

/// Ann, Ben and Cid at a started table: Ann decides on her mulligan.
fn three_players() -> TableView {
    use grand_melee_protocol::{Event, Settings};
    let view = TableView::new(TableId::nil(), "Couch", Settings::default());
    let mut events: Vec<Event> = (0..)
        .zip(["Ann", "Ben", "Cid"])
        .map(|(player, name)| Event::PlayerJoined {
            player,
            name: name.into(),
            entropy: String::new(),
            deck: None,
        })
        .collect();
    events.push(Event::HostChanged { player: Some(0) });
    events.push(Event::GameStarted {
        seating: vec![0, 1, 2],
        first_player: 0,
        turn_holders: vec![0],
        commitment: String::new(),
        first_player_chosen: false,
        bonuses: Vec::new(),
        first_decided_by: None,
        seating_mode: grand_melee_protocol::SeatingMode::Random,
    });
    folded(&view, &events)
}

/// Ben's connected client at [`three_players`].
fn ben_at_three_players() -> State {
    State {
        view: Some(three_players()),
        me: Some(1),
        connected: true,
        ..State::new("ws://x/ws", TableId::nil())
    }
}

#[test]
fn help_reads_top_down_in_an_overlay_that_esc_closes() {
    use grand_melee_cli::command::HELP;
    let state = ben_at_three_players();
    let mut screen = Screen::new();
    screen.note(&state, Note::Help);
    let shown = draw(120, 40, &screen, &state);
    let row = |text: &str| {
        shown
            .iter()
            .position(|r| r.contains(text))
            .unwrap_or_else(|| panic!("{text} on screen:\n{}", shown.join("\n")))
    };
    // In reading order: the first command above the second, the last at the bottom.
    let (first, second, last) = (HELP[0].0, HELP[1].0, HELP[HELP.len() - 1].0);
    assert!(row("Commands") < row(first), "{}", shown.join("\n"));
    assert!(row(first) < row(second) && row(second) < row(last));
    assert!(row("Help — Esc closes") < row("Commands"));
    // At 80×24 it does not fit at once: it scrolls to its end.
    let all = draw(80, 24, &screen, &state).join("\n");
    assert!(
        all.contains(first) && !all.contains("in turn 0's sphere"),
        "{all}"
    );
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    screen.key(&state, key(KeyCode::End));
    let all = draw(80, 24, &screen, &state).join("\n");
    assert!(all.contains("in turn 0's sphere"), "{all}");
    screen.key(&state, key(KeyCode::Esc));
    assert!(screen.overlay.is_none());
    assert!(!draw(80, 24, &screen, &state).join("\n").contains("Help —"));
}

#[test]
fn status_is_written_for_people() {
    let state = ben_at_three_players();
    let mut screen = Screen::new();
    screen.note(&state, Note::Status);
    screen.note(
        &state,
        Note::Rejected {
            code: ErrorCode::NotYourTurn,
            command: "end".into(),
            message: ErrorCode::NotYourTurn.description().into(),
        },
    );
    let all = draw(120, 40, &screen, &state).join("\n");
    assert!(
        all.contains("end: you are not taking a turn (not_your_turn)"),
        "the refusal in plain words:\n{all}"
    );
    for text in [
        "Couch: mulligans, 3 of 3 players alive, spell range 2",
        "Seat 0: Ann · 20 life, 0 poison · connected · host",
        "Seat 1: Ben (you) · 20 life, 0 poison · connected",
        "Waiting for Ann to decide on a mulligan",
    ] {
        assert!(all.contains(text), "{text}:\n{all}");
    }
    assert!(!all.contains("player="), "no script fields:\n{all}");
}

#[test]
fn concede_and_leave_wait_for_a_yes() {
    let state = ben_at_three_players();
    let mut screen = Screen::new();
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    let type_line = |screen: &mut Screen, line: &str| {
        for c in line.chars() {
            screen.key(&state, key(KeyCode::Char(c)));
        }
        screen.key(&state, key(KeyCode::Enter))
    };
    for command in ["concede", "leave"] {
        assert_eq!(
            type_line(&mut screen, command),
            None,
            "{command} asks first"
        );
        let all = draw(80, 24, &screen, &state).join("\n");
        assert!(all.contains("Press y to do it"), "{all}");
        // A slip (Enter again, or any other key) does nothing.
        assert_eq!(screen.key(&state, key(KeyCode::Enter)), None);
        assert!(screen.overlay.is_none());
        assert_eq!(type_line(&mut screen, command), None);
        assert_eq!(
            screen.key(&state, key(KeyCode::Char('y'))),
            Some(Action::Line(command.into()))
        );
    }
    // Other commands go at once.
    assert_eq!(
        type_line(&mut screen, "keep"),
        Some(Action::Line("keep".into()))
    );
}

#[test]
fn the_bell_rings_when_the_decision_comes_up_and_the_standings_show_at_the_end() {
    use grand_melee_cli::session::Frontend;
    use grand_melee_cli::tui::{Overlay, Tui};
    use grand_melee_protocol::{Event, Standing};
    let view = three_players();
    let mut tui = Tui::new(Terminal::new(TestBackend::new(80, 24)).unwrap());
    // Ben waits while Ann decides: no bell.
    let mut state = ben_at_three_players();
    tui.note(&state, Note::Snapshot).unwrap();
    assert_eq!(tui.bells(), 0);
    // Ann keeps: Ben's decision comes up, the bell rings once, and the header says so.
    let kept = [Event::Kept {
        player: 0,
        hand_size: 7,
        reason: grand_melee_protocol::KeepReason::Decided,
    }];
    let view = folded(&view, &kept);
    state.view = Some(view.clone());
    tui.note(&state, Note::Applied).unwrap();
    tui.note(&state, Note::Applied).unwrap();
    assert_eq!(tui.bells(), 1);
    let all = rows(tui.terminal().backend().buffer(), 0, 80).join("\n");
    assert!(all.contains("▶▶ Your mulligan decision"), "{all}");
    // The game ends: the standings open by themselves.
    let over = Event::GameOver {
        standings: vec![
            Standing {
                player: 2,
                place: 1,
                mana_points: 2,
            },
            Standing {
                player: 1,
                place: 2,
                mana_points: 1,
            },
            Standing {
                player: 0,
                place: 3,
                mana_points: 0,
            },
        ],
    };
    let before = view.clone();
    let view = folded(&view, std::slice::from_ref(&over));
    state.view = Some(view);
    tui.note(
        &state,
        Note::Event {
            seq: 99,
            line: String::new(),
            sentence: grand_melee_cli::describe::log_sentence(&over, &before),
            event: over,
        },
    )
    .unwrap();
    assert_eq!(tui.screen.overlay, Some(Overlay::Standings));
    let all = rows(tui.terminal().backend().buffer(), 0, 80).join("\n");
    assert!(all.contains("Game over — standings"), "{all}");
    let place = |name: &str| {
        all.lines()
            .find(|l| l.contains(name) && l.contains('.'))
            .unwrap_or_else(|| panic!("{name}:\n{all}"))
            .to_owned()
    };
    assert!(
        place("Cid").contains("1.") && place("Cid").contains(" 2"),
        "{all}"
    );
    assert!(
        place("Ben").contains("2.") && place("Ben").contains("← you"),
        "{all}"
    );
}

#[test]
fn a_cr807_table_shows_numbered_markers_designations_and_extra_turns() {
    use grand_melee_protocol::rules::{Actor, Command, SpellRange, Table, TableConfig};
    // 16 players under CR 807: markers 1–4 at the first player and every fourth seat to his
    // left. One player leaves (marker designated), one takes an extra turn.
    let config = TableConfig {
        seats: 16,
        spell_range: SpellRange::new(1).unwrap(),
        rule_set: grand_melee_protocol::RuleSet::Cr807,
        ..TableConfig::seeded(16)
    };
    let (mut table, _) =
        Table::quick_start(config, (0..16).map(|i| format!("Marker{i:02}")), None).unwrap();
    let holder = |t: &Table, turn: usize| t.players()[t.turns()[turn].seat].id;
    let first = holder(&table, 0);
    table
        .handle(Actor::Player(first), Command::ExtraTurn)
        .unwrap();
    let left_of_first = table.players()[(table.turns()[0].seat + 2) % 16].id;
    table
        .handle(Actor::Player(left_of_first), Command::Concede)
        .unwrap();
    let settings = grand_melee_protocol::Settings {
        seats: 16,
        spell_range: 1,
        rules: grand_melee_protocol::RuleSet::Cr807,
        ..grand_melee_protocol::Settings::default()
    };
    let view = table.view(TableId::nil(), "Official", 40, &settings);
    let state = state_of(TableId::nil(), &view, first);
    let mut screen = Screen::new();
    let ring = draw(80, 24, &screen, &state);
    check_every_seat(&ring, &view, "a cr807 table at 80×24");
    let cells = cells(&ring, &view);
    for (k, turn) in view.turns.iter().enumerate() {
        let (_, cell) = cells.iter().find(|(p, _)| *p == turn.player).unwrap();
        assert!(
            cell.contains(&format!("▶{}", k + 1)),
            "marker {} shows as ▶{}: {cell}",
            k + 1,
            k + 1
        );
    }
    screen.note(&state, Note::Status);
    let all = draw(120, 40, &screen, &state).join("\n");
    for text in [
        "taking marker 1",
        "removed when it ends",
        "1 extra turn(s) to come",
        "in marker 1's range",
    ] {
        assert!(all.contains(text), "{text}:\n{all}");
    }
}

#[test]
fn the_host_sees_a_call_in_his_status_line_and_his_terminal_rings() {
    use grand_melee_cli::session::Frontend;
    use grand_melee_cli::tui::Tui;
    use grand_melee_protocol::Event;
    let view = three_players();
    // Ann is the host; Ann decides first, so her bell rings for the decision.
    let mut ann = State {
        view: Some(view.clone()),
        me: Some(0),
        connected: true,
        ..State::new("ws://x/ws", TableId::nil())
    };
    // 80 columns: the alert comes first on the top line, so the window's width does not cut it.
    let mut tui = Tui::new(Terminal::new(TestBackend::new(80, 24)).unwrap());
    tui.note(&ann, Note::Snapshot).unwrap();
    let before = tui.bells();
    let called = folded(
        &view,
        &[Event::HostCalled {
            player: 2,
            reason: "is Wrath resolved?".into(),
        }],
    );
    ann.view = Some(called.clone());
    tui.note(&ann, Note::Applied).unwrap();
    assert_eq!(tui.bells(), before + 1, "a new call rings once");
    tui.note(&ann, Note::Applied).unwrap();
    assert_eq!(tui.bells(), before + 1, "and only once");
    let all = rows(tui.terminal().backend().buffer(), 0, 80);
    assert!(
        all[0].contains("CALL from Cid: is Wrath resolved?"),
        "{}",
        all.join("\n")
    );
    // Ben is not the host: no alert on his screen.
    let ben = State {
        view: Some(called.clone()),
        ..ben_at_three_players()
    };
    let shown = draw(100, 24, &Screen::new(), &ben).join("\n");
    assert!(!shown.contains("CALL from"), "{shown}");
    // Answered, the alert is gone.
    ann.view = Some(folded(&called, &[Event::HostAnswered { player: None }]));
    tui.note(&ann, Note::Applied).unwrap();
    let all = rows(tui.terminal().backend().buffer(), 0, 80).join("\n");
    assert!(!all.contains("CALL from"), "{all}");
}

/// The rows of the window (`help`) drawn on `screen`: the text between its side borders, and
/// its footer's `first–last of total`.
fn window_rows(screen: &str) -> (Vec<String>, Option<(usize, usize)>) {
    let mut rows = Vec::new();
    let mut range = None;
    for line in screen.lines() {
        let chars: Vec<char> = line.chars().collect();
        let Some(left) = chars.iter().position(|&c| c == '│' || c == '└') else {
            continue;
        };
        if chars[left] == '└' {
            let footer: String = chars[left..].iter().collect();
            let numbers: Vec<usize> = footer
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            if let [_, last, total, ..] = numbers[..] {
                range = Some((last, total));
            }
            continue;
        }
        let right = chars.iter().rposition(|&c| c == '│').unwrap_or(chars.len());
        if right > left {
            rows.push(chars[left + 1..right].iter().collect());
        }
    }
    (rows, range)
}

/// Help at 80 columns, as a newcomer reads it: `grand-melee --help` and the subcommands'
/// (long and short) in a real 80×24 terminal write no line the terminal has to wrap, and what
/// a flag means starts by column 40, so it reads in lines of 40 columns or more; the in-client
/// `help` window, paged to its end, names every command of the game, and what each means starts
/// by column 34 of the window (no column of a few words a row beside the longest usage).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_fits_80_columns_without_a_narrow_column() {
    use grand_melee_protocol::GameKind;
    let server = TestServer::start().await;
    let addr = server.addr.to_string();
    for args in [
        &["--help"][..],
        &["-h"],
        &["create", "--help"],
        &["create", "-h"],
        &["join", "--help"],
        &["standings", "--help"],
        &["verify", "--help"],
        &["replay", "export", "--help"],
    ] {
        let tmux = common::Tmux::start(&addr, args);
        tmux.wait_for("the end of the help", |s| s.contains(common::EXITED))
            .await;
        let written = tmux.written();
        let help: Vec<&str> = written
            .lines()
            .take_while(|l| !l.starts_with(common::EXITED))
            .collect();
        assert!(help.len() > 10, "{args:?}:\n{written}");
        for line in &help {
            assert!(
                unicode_width::UnicodeWidthStr::width(*line) <= 80,
                "{args:?}: a line wider than 80 columns: {line:?}"
            );
            let indent = line.len() - line.trim_start().len();
            assert!(
                line.trim().is_empty() || indent <= 40,
                "{args:?}: a description in a narrow column: {line:?}"
            );
        }
    }

    // The in-client help of each game, at a table of it, paged to its end.
    for (game, seats) in [
        (GameKind::GrandMelee, "2"),
        (GameKind::MagicTech, "2"),
        (GameKind::MountainMagic, "1"),
    ] {
        let tmux = common::Tmux::start(
            &addr,
            &[
                "create",
                "--name",
                "Help",
                "--seats",
                seats,
                "--game",
                game.name(),
                "--join",
                "Ann",
            ],
        );
        tmux.wait_for("the table", |s| s.contains("Ann is the host"))
            .await;
        tmux.type_line("help");
        let mut seen: Vec<String> = Vec::new();
        loop {
            let screen = tmux
                .wait_for("the help window", |s| {
                    s.contains("Help — Esc closes") && window_rows(s).1.is_some()
                })
                .await;
            let (rows, range) = window_rows(&screen);
            let (last, total) = range.unwrap_or_else(|| panic!("{game:?}: a footer:\n{screen}"));
            for row in rows {
                let indent = row.chars().take_while(|&c| c == ' ').count();
                assert!(
                    row.trim().is_empty() || indent <= 34,
                    "{game:?}: a meaning in a narrow column:\n{screen}"
                );
                seen.push(row);
            }
            if last >= total {
                break;
            }
            tmux.press(&["PageDown"]);
            tmux.wait_for("the next page", |s| {
                window_rows(s).1.is_some_and(|(l, _)| l > last)
            })
            .await;
        }
        let all = seen.join("\n");
        for (usage, _) in grand_melee_cli::command::help(game) {
            assert!(all.contains(usage), "{game:?}: `{usage}` in help:\n{all}");
        }
    }
    server.shutdown().await;
}

/// `grand-melee list` on an 80-column terminal: one line per table, none wider than 80 columns
/// (the start of the id, the name, stage, seats, spectators and settings, abbreviated), for
/// tables with long names and every setting changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_writes_one_table_a_line_at_80_columns() {
    let server = TestServer::start().await;
    let addr = server.addr.to_string();
    let data = tempfile::tempdir().unwrap();
    let mut ids = Vec::new();
    for (name, extra) in [
        (
            "A table name of 32 characters!!!",
            &["--seats", "40", "--password", "pw"][..],
        ),
        (
            "Tuesday's official variant",
            &[
                "--seats",
                "12",
                "--rules",
                "cr807",
                "--spell-range",
                "1",
                "--reduction",
                "forced",
                "--mulligan",
                "simultaneous",
                "--combat-dice",
            ],
        ),
        ("Climb", &["--seats", "1", "--game", "mountain_magic"]),
    ] {
        let mut args = vec!["create", "--name", name];
        args.extend(extra);
        let (status, out, err) = common::run_once(&addr, data.path(), &args).await;
        assert!(status.success(), "{out}{err}");
        let id = out
            .lines()
            .find_map(|l| l.strip_prefix("table_created "))
            .unwrap()
            .trim()
            .to_owned();
        ids.push((id, name));
    }
    let tmux = common::Tmux::start(&addr, &["list"]);
    tmux.wait_for("the list", |s| s.contains(common::EXITED))
        .await;
    let written = tmux.written();
    let lines: Vec<&str> = written
        .lines()
        .take_while(|l| !l.starts_with(common::EXITED))
        .collect();
    for line in &lines {
        assert!(
            unicode_width::UnicodeWidthStr::width(*line) <= 80,
            "a line wider than 80 columns: {line:?}\n{written}"
        );
    }
    for (id, name) in &ids {
        let start: String = name.chars().take(12).collect();
        let holding: Vec<&&str> = lines.iter().filter(|l| l.contains(&id[..8])).collect();
        assert_eq!(holding.len(), 1, "{id} on one line:\n{written}");
        assert!(holding[0].contains(&start), "{name} with {id}:\n{written}");
    }
    let cr807 = lines.iter().find(|l| l.contains("Tuesday")).unwrap();
    assert!(cr807.contains("cr807"), "{cr807}");
    let locked = lines.iter().find(|l| l.contains("A table")).unwrap();
    assert!(locked.contains("password"), "{locked}");
    server.shutdown().await;
}

/// The header's `seq N` on `screen`.
fn screen_seq(screen: &str) -> Option<u64> {
    let first = screen.lines().next()?;
    let at = first.find("seq ")? + 4;
    first[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A Mountain Magic climb in a real 80×24 terminal, played by typing: the lobby's header has no
/// empty field (`· ·`); a card whose old prompt (name, every place, both commands) was wider
/// than 80 columns is prompted whole, with a command that places it; a placement the rules
/// refuse says where the card may go (the places `Climb::placements` gives).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_climb_at_80_columns_prompts_whole_and_says_where_a_card_may_go() {
    use grand_melee_protocol::mountain_magic::Climb;
    use grand_melee_protocol::mountain_magic_types::MmPhase;
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..grand_melee_server::ServerConfig::default()
    })
    .await;
    let addr = server.addr.to_string();
    let mut spectator = Conn::open(&server.url()).await.unwrap();
    let (mut prompted, mut refused) = (false, false);
    for climb_no in 0..5 {
        let name = format!("Climb {climb_no}");
        let tmux = common::Tmux::start(
            &addr,
            &[
                "create",
                "--name",
                &name,
                "--seats",
                "1",
                "--game",
                "mountain_magic",
                "--join",
                "Ann",
            ],
        );
        let lobby = tmux
            .wait_for("the lobby", |s| s.contains("`start` to deal"))
            .await;
        let header = lobby.lines().next().unwrap();
        assert!(header.contains("lobby"), "{lobby}");
        assert!(
            !header.replace(' ', "").contains("··"),
            "an empty field in the header: {header:?}"
        );
        let tables = grand_melee_cli::all_tables(&mut spectator, 500)
            .await
            .unwrap();
        let table = tables.iter().find(|t| t.name == name).unwrap().table;
        call(
            &mut spectator,
            ClientMessage::Watch {
                id: 0,
                table,
                password: None,
            },
        )
        .await;
        // The client has drawn every event so far (the spectator's arrival too).
        let mut seq = snapshot(&mut spectator).await.seq;
        tmux.wait_for("the spectator", |s| {
            screen_seq(s).is_some_and(|now| now >= seq)
        })
        .await;
        let mut line = "start".to_owned();
        loop {
            tmux.type_line(&line);
            // A refused command never moves the table on: this waits out its time and shows it.
            tmux.wait_for(&format!("the table moved on by `{line}`"), |s| {
                screen_seq(s).is_some_and(|now| now > seq)
            })
            .await;
            let view = snapshot(&mut spectator).await;
            seq = view.seq;
            let climb = Climb::from_view(view.mountain_magic.as_deref().cloned().unwrap());
            if climb.view().phase != MmPhase::Climbing {
                break;
            }
            let places = climb.placements();
            let Some(card) = climb
                .card_to_place()
                .filter(|_| climb.view().flipped.is_some())
            else {
                line = "flip".to_owned();
                continue;
            };
            if places.is_empty() {
                line = "discard".to_owned();
                continue;
            }
            let (row, pos) = places[0];
            let words = grand_melee_cli::games::mountain_magic::words::card(card);
            let all = places
                .iter()
                .map(|(r, p)| format!("{r}:{p}"))
                .collect::<Vec<_>>()
                .join(",");
            let old = format!(
                "▶▶ Climbing: {words} may go at {all}: `place <row>:<pos>` or `discard` ◀◀"
            );
            if unicode_width::UnicodeWidthStr::width(old.as_str()) > 80 && !prompted {
                let screen = tmux
                    .wait_for("the prompt", |s| {
                        s.contains(&format!("`place {row}:{pos}`"))
                    })
                    .await;
                let prompt = screen.lines().nth(1).unwrap().trim_end();
                assert!(
                    prompt.starts_with("▶▶ ") && prompt.ends_with(" ◀◀"),
                    "the whole prompt: {prompt:?}\n{screen}"
                );
                assert!(prompt.contains("`discard`"), "{prompt}");
                prompted = true;
            }
            if !refused {
                // A place the rules refuse: the lowest empty one the card may not go to.
                let wrong = (1..6u8)
                    .flat_map(|r| (0..7 - r).map(move |p| (r, p)))
                    .find(|place| !places.contains(place))
                    .unwrap();
                tmux.type_line(&format!("place {}:{}", wrong.0, wrong.1));
                let screen = tmux
                    .wait_for("the refusal", |s| s.contains("illegal_placement"))
                    .await;
                let message = screen
                    .lines()
                    .nth(22)
                    .unwrap_or_else(|| panic!("the message row:\n{screen}"));
                assert!(message.contains("illegal_placement"), "{screen}");
                for (r, p) in &places {
                    assert!(
                        message.contains(&format!("{r}:{p}")),
                        "the refusal names {r}:{p}: {message:?}\n{screen}"
                    );
                }
                refused = true;
            }
            if prompted && refused {
                break;
            }
            line = format!("place {row}:{pos}");
        }
        if prompted && refused {
            break;
        }
    }
    assert!(
        prompted && refused,
        "a card with a prompt wider than 80 columns in five climbs"
    );
    spectator.close().await;
    server.shutdown().await;
}
