//! Replays on a real server: a three-player game is played to the end (the host rules the two
//! others out, one after the other), then `grand-melee replay list`, `replay export` (JSON lines
//! and MessagePack, read back and re-applied) and `replay watch` (script mode and the
//! full-screen view on ratatui's test backend) are checked against it.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{CreateTable, Player, TestServer, call, run_once, run_with, snapshot};
use grand_melee_cli::PAGE_ITEMS;
use grand_melee_cli::net::Conn;
use grand_melee_cli::replay::{self, Stepper, Viewer};
use grand_melee_cli::store::{SavedSeat, TokenStore};
use grand_melee_protocol::{
    ClientMessage, Event, PlayerId, PlayerStatus, Ruling, SeatToken, ServerMessage, Settings,
    StageName, TableId, TableView,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde::Deserialize;

const NAME: &str = "Replay melee";

const PASSWORD: &str = "open sesame";

async fn create(conn: &mut Conn, name: &str) -> TableId {
    create_with(conn, name, 3, None).await
}

async fn create_with(conn: &mut Conn, name: &str, seats: u8, password: Option<&str>) -> TableId {
    let settings = CreateTable::new(name, seats)
        .spell_range(1)
        .password(password)
        .seed(7);
    common::create(conn, settings).await
}

/// A server holding one finished game (and one open table under the same name, which replay
/// commands must not pick).
struct Finished {
    server: TestServer,
    table: TableId,
    open_table: TableId,
    /// The game's last state, as the host's snapshot shows it.
    end: TableView,
    /// The player ruled out first (before the game ended).
    first_out: PlayerId,
    /// The seat tokens of Ann, Ben and Cid.
    tokens: Vec<SeatToken>,
    data: tempfile::TempDir,
}

impl Finished {
    fn url(&self) -> String {
        self.server.url()
    }

    fn dir(&self) -> &Path {
        self.data.path()
    }
}

async fn finished_game() -> Finished {
    // Small outgoing queues make the server page replays at 2 KiB: this short game takes several
    // pages, so every replay test here also checks that the client follows them all.
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        outgoing_queue_bytes: 8 * 1024,
        ..grand_melee_server::ServerConfig::default()
    })
    .await;
    finished_game_on(server, None, 5).await
}

/// A game played to the end on `server` at a table with `password`, with `chat` lines from
/// each player before it starts.
async fn finished_game_on(server: TestServer, password: Option<&str>, chat: usize) -> Finished {
    let url = server.url();
    let mut seats = Vec::new();
    for _ in 0..3 {
        seats.push(Conn::open(&url).await.unwrap());
    }
    let table = create_with(&mut seats[0], NAME, 3, password).await;
    let mut tokens = Vec::new();
    for (conn, name) in seats.iter_mut().zip(["Ann", "Ben", "Cid"]) {
        let seated = call(
            conn,
            ClientMessage::Join {
                id: 0,
                table,
                name: name.into(),
                password: password.map(Into::into),
                entropy: None,
                member_token: None,
            },
        )
        .await;
        let ServerMessage::Seated { token, .. } = seated else {
            panic!("{seated:?}");
        };
        tokens.push(token);
    }
    // Some table talk (within each player's chat burst), so the replay needs several pages.
    for conn in &mut seats {
        for _ in 0..chat {
            let said = call(
                conn,
                ClientMessage::Chat {
                    id: 0,
                    text: "gl hf ".repeat(30),
                },
            )
            .await;
            assert!(matches!(said, ServerMessage::Ack { .. }), "{said:?}");
        }
    }
    call(
        &mut seats[0],
        ClientMessage::Start {
            id: 0,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        },
    )
    .await;
    let mut view = snapshot(&mut seats[0]).await;
    while let Some(decider) = view.mulligan_decider {
        call(
            &mut seats[usize::from(decider)],
            ClientMessage::Keep { id: 0 },
        )
        .await;
        view = snapshot(&mut seats[0]).await;
    }
    assert_eq!(view.stage, StageName::Playing);
    // The host (player 0) rules out Cid, then Ben: Ann wins.
    for player in [2, 1] {
        call(
            &mut seats[0],
            ClientMessage::Ruling {
                id: 0,
                ruling: Ruling::Eliminate {
                    players: vec![player],
                },
            },
        )
        .await;
    }
    let end = snapshot(&mut seats[0]).await;
    assert_eq!(end.stage, StageName::Finished, "{end:?}");
    assert_eq!(end.standings.len(), 3);
    // An open table with the same name: not a replay.
    let open_table = create(&mut seats[0], NAME).await;
    for conn in seats {
        conn.close().await;
    }
    Finished {
        server,
        table,
        open_table,
        end,
        first_out: 2,
        tokens,
        data: tempfile::tempdir().unwrap(),
    }
}

/// The table after applying `events` (numbered from 1) to an empty one.
fn rebuild(table: TableId, name: &str, settings: Settings, events: &[Event]) -> TableView {
    let mut mirror =
        grand_melee_protocol::Mirror::new(&TableView::new(table, name, settings)).unwrap();
    mirror.apply_batch(1, events).unwrap();
    mirror.view()
}

/// The number of the event that eliminated `player`.
fn elimination_seq(events: &[Event], player: PlayerId) -> u64 {
    let index = events
        .iter()
        .position(|e| matches!(e, Event::Eliminated { players, .. } if players.contains(&player)))
        .expect("an elimination event");
    u64::try_from(index).unwrap() + 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_list_shows_each_finished_game_with_times_and_event_count() {
    let game = finished_game().await;
    let (status, out, err) = run_once(&game.url(), game.dir(), &["replay", "list"]).await;
    assert!(status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "only the finished game: {out}");
    let line = lines[0];
    assert!(
        line.starts_with(&format!("replay {} ", game.table)),
        "{line}"
    );
    assert!(line.ends_with(&format!(" name=\"{NAME}\"")), "{line}");
    assert!(
        line.contains(&format!(" events={} ", game.end.seq)),
        "{line}"
    );
    assert!(line.contains(" password=no "), "{line}");
    for key in ["created", "finished"] {
        let time = common::field(line, key).unwrap();
        // 2026-11-20T18:00:00Z
        assert_eq!(time.len(), 20, "{time}");
        assert!(time.ends_with('Z') && time.as_bytes()[10] == b'T', "{time}");
    }
    assert!(!out.contains(&game.open_table.to_string()), "{out}");
    game.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_lines_export_rebuilds_the_game_to_its_final_standings() {
    let game = finished_game().await;
    // By name, in another case: the open table of the same name is not a replay.
    let (status, out, err) = run_once(
        &game.url(),
        game.dir(),
        &["replay", "export", "replay MELEE"],
    )
    .await;
    assert!(status.success(), "{err}");
    let mut lines = out.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["table"], game.table.to_string());
    assert_eq!(header["name"], NAME);
    let settings: Settings = serde_json::from_value(header["settings"].clone()).unwrap();
    assert_eq!(settings, game.end.settings);
    let mut events = Vec::new();
    for (expected, line) in (1..).zip(lines) {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(record["seq"], expected, "{line}");
        let event: Event = serde_json::from_value(record["event"].clone()).unwrap();
        events.push(event);
    }
    assert_eq!(events.len() as u64, game.end.seq);
    let view = rebuild(game.table, NAME, settings, &events);
    assert_eq!(view.stage, StageName::Finished);
    assert_eq!(view.standings, game.end.standings);
    assert_eq!(view.standings[0].player, 0, "the host won");
    game.server.shutdown().await;
}

#[derive(Debug, Deserialize)]
struct Header {
    table: String,
    name: String,
    settings: Settings,
}

#[derive(Debug, Deserialize)]
struct Record {
    seq: u64,
    event: Event,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_msgpack_export_to_a_file_rebuilds_the_game_to_its_final_standings() {
    let game = finished_game().await;
    let path = game.dir().join("game.msgpack");
    let prefix = &game.table.to_string()[..8];
    let (status, out, err) = run_once(
        &game.url(),
        game.dir(),
        &[
            "replay",
            "export",
            prefix,
            "--format",
            "msgpack",
            "--output",
            path.to_str().unwrap(),
        ],
    )
    .await;
    assert!(status.success(), "{err}");
    assert!(out.is_empty(), "nothing on standard output: {out}");
    let bytes = std::fs::read(&path).unwrap();
    let mut reader = std::io::Cursor::new(&bytes[..]);
    let header: Header = rmp_serde::from_read(&mut reader).unwrap();
    assert_eq!(header.table, game.table.to_string());
    assert_eq!(header.name, NAME);
    let mut events = Vec::new();
    while usize::try_from(reader.position()).unwrap() < bytes.len() {
        let record: Record = rmp_serde::from_read(&mut reader).unwrap();
        assert_eq!(record.seq, events.len() as u64 + 1);
        events.push(record.event);
    }
    assert_eq!(events.len() as u64, game.end.seq);
    let view = rebuild(game.table, &header.name, header.settings, &events);
    assert_eq!(view.standings, game.end.standings);
    assert_eq!(
        view.player(game.first_out).unwrap().status,
        game.end.player(game.first_out).unwrap().status
    );
    game.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_errors_are_said_in_plain_words() {
    let game = finished_game().await;
    let url = game.url();
    let unknown = "00000000-0000-4000-8000-000000000000";
    let (status, out, err) = run_once(&url, game.dir(), &["replay", "export", unknown]).await;
    assert!(!status.success());
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("no finished game") && err.contains("unknown_replay"),
        "{err}"
    );
    // The open table is not a finished game, by id or by name.
    let open = game.open_table.to_string();
    let (status, _, err) = run_once(&url, game.dir(), &["replay", "watch", &open]).await;
    assert!(!status.success());
    assert!(err.contains("unknown_replay"), "{err}");
    let (status, _, err) = run_once(&url, game.dir(), &["replay", "export", "Nope"]).await;
    assert!(!status.success());
    assert!(
        err.contains("no finished game called `Nope`") && err.contains("grand-melee replay list"),
        "{err}"
    );
    // A file that cannot be written.
    let path = game.dir().join("missing-dir").join("out.jsonl");
    let (status, _, err) = run_once(
        &url,
        game.dir(),
        &[
            "replay",
            "export",
            &game.table.to_string(),
            "-o",
            path.to_str().unwrap(),
        ],
    )
    .await;
    assert!(!status.success());
    assert!(
        err.contains("cannot write") && err.contains("out.jsonl"),
        "{err}"
    );
    game.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_watch_in_script_mode_steps_forward_and_back() {
    let game = finished_game().await;
    let replay = replay::fetch(
        &game.url(),
        &game.table.to_string(),
        &Default::default(),
        PAGE_ITEMS,
    )
    .await
    .unwrap();
    let out_seq = elimination_seq(&replay.events, game.first_out);
    let last = game.end.seq;
    let table = game.table.to_string();
    let mut watch = Player::spawn(
        "watch",
        &game.url(),
        game.dir(),
        &["replay", "watch", &table],
    );
    watch
        .expect_all(&[
            "replay",
            &format!("table={table}"),
            &format!("events={last}"),
        ])
        .await;
    watch.expect("step seq=0", |l| l == "step seq=0").await;
    watch.send("next").await;
    watch
        .expect_prefix(r#"event 1 player_joined player=0 "Ann""#)
        .await;
    watch.expect("step seq=1", |l| l == "step seq=1").await;
    watch.send("next 3").await;
    watch.expect_prefix("event 4 ").await;
    watch.expect("step seq=4", |l| l == "step seq=4").await;
    watch.send("back 2").await;
    watch.expect("step seq=2", |l| l == "step seq=2").await;
    watch.send(&format!("goto {out_seq}")).await;
    let line = watch
        .expect_prefix(&format!("event {out_seq} eliminated"))
        .await;
    assert!(line.contains(r#"players=2 "Cid""#), "{line}");
    watch
        .expect(&format!("step seq={out_seq}"), |l| {
            l == format!("step seq={out_seq}")
        })
        .await;
    watch.send("end").await;
    // The game's last events: the end, then the dice secret (PROTOCOL.md, "Verifiable dice").
    let line = watch.expect_prefix(&format!("event {} ", last - 1)).await;
    assert!(line.contains(r#"game_over winner=0 "Ann""#), "{line}");
    let line = watch.expect_prefix(&format!("event {last} ")).await;
    assert!(line.contains("dice_revealed secret="), "{line}");
    watch.send("next").await;
    watch.send("back 1000").await;
    watch.send("quit").await;
    let (status, lines) = watch.finish().await;
    assert!(status.success(), "{lines:#?}");
    let steps: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("step "))
        .map(String::as_str)
        .collect();
    let expected: Vec<String> = [0, 1, 4, 2, out_seq, last, last, 0]
        .iter()
        .map(|s| format!("step seq={s}"))
        .collect();
    assert_eq!(steps, expected);
    // Stepping back prints no events: after `step seq=4` comes `step seq=2` directly.
    let four = lines.iter().position(|l| l == "step seq=4").unwrap();
    assert_eq!(lines[four + 1], "step seq=2");
    // Every event of the game was printed once on the way forward, in order.
    let printed: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("event "))
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect();
    let mut expected_events: Vec<u64> = (1..=4).collect();
    expected_events.extend(3..=last);
    assert_eq!(printed, expected_events);
    game.server.shutdown().await;
}

/// The ring row naming `name` on a 160×46 screen.
fn ring_row(viewer: &Viewer, name: &str) -> (String, Vec<String>) {
    let mut terminal = Terminal::new(TestBackend::new(160, 46)).unwrap();
    viewer.draw(&mut terminal).unwrap();
    let buffer = terminal.backend().buffer();
    let rows: Vec<String> = (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect()
        })
        .collect();
    // The ring is under its title row and takes the left 58% of the screen.
    let title = rows
        .iter()
        .position(|r| r.contains("─ Ring"))
        .expect("the ring panel has a title");
    let found: Vec<String> = rows
        .iter()
        .skip(title + 1)
        .map(|r| r.chars().take(92).collect::<String>())
        .filter(|r| {
            r.split_whitespace()
                .any(|w| w.trim_end_matches('★') == name)
        })
        .collect();
    assert_eq!(found.len(), 1, "one ring row for {name}: {rows:#?}");
    (found[0].clone(), rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_view_shows_a_seat_out_only_from_its_elimination_step() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let game = finished_game().await;
    let replay = replay::fetch(&game.url(), NAME, &Default::default(), PAGE_ITEMS)
        .await
        .unwrap();
    assert_eq!(replay.table, game.table);
    // The game did not fit one page, and the client put the pages back together.
    let mut conn = Conn::open(&game.url()).await.unwrap();
    let first = call(
        &mut conn,
        ClientMessage::GetReplay {
            id: 0,
            table: game.table,
            from_seq: 1,
            password: None,
            token: None,
        },
    )
    .await;
    let ServerMessage::Replay {
        events,
        total_events,
        next_seq,
        ..
    } = first
    else {
        panic!("{first:?}");
    };
    assert!(next_seq.is_some() && (events.len() as u64) < total_events);
    assert_eq!(replay.len(), total_events);
    let out_seq = elimination_seq(&replay.events, game.first_out);
    let last = replay.len();
    let mut stepper = Stepper::new(replay).unwrap();
    stepper.goto(out_seq - 1);
    let mut viewer = Viewer::new(stepper, game.url());

    let (cid, rows) = ring_row(&viewer, "Cid");
    assert!(!cid.contains("OUT"), "{cid}");
    let screen = rows.join("\n");
    assert!(
        screen.contains(&format!("step {} of {last}", out_seq - 1)),
        "{screen}"
    );
    assert!(screen.contains(&format!("{NAME} — replay")), "{screen}");
    assert!(screen.contains("q quit"), "{screen}");
    assert_eq!(
        viewer.stepper().view().player(2).unwrap().status,
        PlayerStatus::Alive
    );

    // → steps onto the elimination.
    assert!(!viewer.key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE)));
    assert_eq!(viewer.stepper().step(), out_seq);
    let (cid, rows) = ring_row(&viewer, "Cid");
    assert!(cid.contains("OUT"), "{cid}");
    let (ben, _) = ring_row(&viewer, "Ben");
    assert!(!ben.contains("OUT"), "{ben}");
    let screen = rows.join("\n");
    assert!(
        screen.contains(&format!("#{out_seq} Cid eliminated")),
        "{screen}"
    );

    // ← goes back: Cid is in again.
    assert!(!viewer.key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE)));
    let (cid, _) = ring_row(&viewer, "Cid");
    assert!(!cid.contains("OUT"), "{cid}");

    // End: the game is over and both others are out.
    assert!(!viewer.key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE)));
    assert_eq!(viewer.stepper().step(), last);
    assert_eq!(viewer.stepper().view().standings, game.end.standings);
    let (ben, rows) = ring_row(&viewer, "Ben");
    assert!(ben.contains("OUT"), "{ben}");
    let screen = rows.join("\n");
    assert!(screen.contains("finished"), "{screen}");
    assert!(screen.contains("Game over: Ann wins"), "{screen}");
    assert!(viewer.key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE)));
    game.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_with_a_password_opens_with_the_password_or_a_saved_seat_token() {
    // Default pages: the game fits one, so each fetch checks the password once.
    let game = finished_game_on(TestServer::start().await, Some(PASSWORD), 0).await;
    let url = game.url();
    let id = game.table.to_string();
    let events = usize::try_from(game.end.seq).unwrap();

    let (status, out, err) = run_once(&url, game.dir(), &["replay", "list"]).await;
    assert!(status.success(), "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("replay {id} ")) && l.contains(" password=yes ")),
        "{out}"
    );

    // Neither a password nor a seat token: a clear refusal, nothing written.
    let (status, out, err) = run_once(&url, game.dir(), &["replay", "export", &id]).await;
    assert!(!status.success());
    assert!(out.is_empty(), "{out}");
    for part in [
        "password",
        "--password",
        "GM_TABLE_PASSWORD",
        "no seat token",
        "wrong_password",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    // A wrong one.
    let (status, _, err) = run_once(
        &url,
        game.dir(),
        &["replay", "export", &id, "--password", "nope"],
    )
    .await;
    assert!(!status.success());
    assert!(err.contains("the password given is wrong"), "{err}");
    // A saved token that is not a seat of that table, and no password.
    let stale = tempfile::tempdir().unwrap();
    TokenStore::new(stale.path())
        .save(
            &url,
            game.table,
            &SavedSeat {
                player: 1,
                name: "Ben".into(),
                token: SeatToken::new_random(),
            },
        )
        .unwrap();
    let (status, _, err) = run_once(&url, stale.path(), &["replay", "export", &id]).await;
    assert!(!status.success());
    assert!(err.contains("does not open it"), "{err}");

    // The password, given on the command line or in the environment.
    let (status, out, err) = run_once(
        &url,
        game.dir(),
        &["replay", "export", &id, "--password", PASSWORD],
    )
    .await;
    assert!(status.success(), "{err}");
    assert_eq!(out.lines().count(), events + 1, "{out}");
    let (status, out, err) = run_with(
        &url,
        game.dir(),
        &["replay", "watch", "replay melee"],
        &[("GM_TABLE_PASSWORD", PASSWORD)],
        "end\n",
    )
    .await;
    assert!(status.success(), "{err}");
    assert!(
        out.lines().any(|l| l == format!("step seq={events}")),
        "{out}"
    );

    // A player who sat at the table: his saved seat token opens it, with no password.
    let ben = tempfile::tempdir().unwrap();
    TokenStore::new(ben.path())
        .save(
            &url,
            game.table,
            &SavedSeat {
                player: 1,
                name: "Ben".into(),
                token: game.tokens[1],
            },
        )
        .unwrap();
    let (status, out, err) = run_once(&url, ben.path(), &["replay", "export", NAME]).await;
    assert!(status.success(), "{err}");
    assert_eq!(out.lines().count(), events + 1, "{out}");
    let replay = replay::fetch(
        &url,
        &id,
        &replay::Access {
            password: None,
            store: Some(TokenStore::new(ben.path())),
        },
        PAGE_ITEMS,
    )
    .await
    .unwrap();
    assert_eq!(replay.len(), game.end.seq);
    game.server.shutdown().await;
}

/// Plays a two-player game named `name` to the end on `url`: the host rules the other out.
async fn quick_game(url: &str, name: &str) -> TableId {
    let mut seats = vec![
        Conn::open(url).await.unwrap(),
        Conn::open(url).await.unwrap(),
    ];
    let table = create_with(&mut seats[0], name, 2, None).await;
    for (conn, player) in seats.iter_mut().zip(["Ann", "Ben"]) {
        call(
            conn,
            ClientMessage::Join {
                id: 0,
                table,
                name: player.into(),
                password: None,
                entropy: None,
                member_token: None,
            },
        )
        .await;
    }
    call(
        &mut seats[0],
        ClientMessage::Start {
            id: 0,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        },
    )
    .await;
    let mut view = snapshot(&mut seats[0]).await;
    while let Some(decider) = view.mulligan_decider {
        call(
            &mut seats[usize::from(decider)],
            ClientMessage::Keep { id: 0 },
        )
        .await;
        view = snapshot(&mut seats[0]).await;
    }
    call(
        &mut seats[0],
        ClientMessage::Ruling {
            id: 0,
            ruling: Ruling::Eliminate { players: vec![1] },
        },
    )
    .await;
    assert_eq!(snapshot(&mut seats[0]).await.stage, StageName::Finished);
    for conn in seats {
        conn.close().await;
    }
    table
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_of_the_replay_list_is_listed_and_searched() {
    let game = finished_game().await;
    let url = game.url();
    let later = [
        quick_game(&url, "Quick one").await,
        quick_game(&url, "Quick two").await,
    ];
    // One game a page: three pages, newest first.
    let mut conn = Conn::open(&url).await.unwrap();
    let first = call(
        &mut conn,
        ClientMessage::ListReplays {
            id: 0,
            from: 0,
            limit: 1,
        },
    )
    .await;
    assert!(
        matches!(&first, ServerMessage::Replays { replays, next: Some(1), total: 3, .. } if replays.len() == 1),
        "{first:?}"
    );
    conn.close().await;
    let mut out = Vec::new();
    replay::list(&url, 1, &mut out).await.unwrap();
    let out = String::from_utf8(out).unwrap();
    let ids: Vec<&str> = out.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    let expected = [later[1], later[0], game.table].map(|t| t.to_string());
    assert_eq!(ids, expected, "{out}");
    // The oldest game is on the last page: found by name and by the start of its id.
    let by_name = replay::fetch(&url, "replay melee", &Default::default(), 1)
        .await
        .unwrap();
    assert_eq!(by_name.table, game.table);
    let prefix = &game.table.to_string()[..8];
    let by_prefix = replay::fetch(&url, prefix, &Default::default(), 1)
        .await
        .unwrap();
    assert_eq!(by_prefix.len(), game.end.seq);
    game.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_checks_a_finished_games_dice_from_the_server_or_an_export() {
    let game = finished_game().await;
    // From the server, by name: the seating and the first player are what the dice give.
    let (status, out, err) = run_once(&game.url(), game.dir(), &["verify", "Replay melee"]).await;
    assert!(status.success(), "{out}{err}");
    assert!(
        out.starts_with("verified: the secret matches its commitment; the seating of 3 players"),
        "{out}"
    );
    // From an export file; then the same file with two seats swapped names the start.
    let (status, export, err) = run_once(
        &game.url(),
        game.dir(),
        &["replay", "export", "Replay melee"],
    )
    .await;
    assert!(status.success(), "{err}");
    let file = game.dir().join("game.jsonl");
    std::fs::write(&file, &export).unwrap();
    let path = file.to_str().unwrap();
    let (status, out, err) = run_once(&game.url(), game.dir(), &["verify", "--file", path]).await;
    assert!(status.success(), "{out}{err}");
    let forged: String = export
        .lines()
        .map(|line| {
            let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
            if record["event"]["kind"] == "game_started" {
                let seating = record["event"]["seating"].as_array_mut().unwrap();
                seating.swap(0, 1);
            }
            format!("{record}\n")
        })
        .collect();
    std::fs::write(&file, forged).unwrap();
    let (status, out, err) = run_once(&game.url(), game.dir(), &["verify", "--file", path]).await;
    assert!(!status.success(), "{out}");
    assert!(err.contains("NOT VERIFIED: event"), "{err}");
    assert!(err.contains("the seating is"), "{err}");
    game.server.shutdown().await;
}
