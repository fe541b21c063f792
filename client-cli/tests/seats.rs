//! A seat cannot be lost by a slip: a second name on the same computer is refused with the ways
//! forward, a seat taken over by another client is reported (and not fought for), a finished
//! game says so; tables are found by a unique start of their name; a refused setting is named;
//! and a resumed full-screen client rebuilds its log from the events before the drop.
#![allow(clippy::unwrap_used)]

mod common;

use common::{PATIENCE, Player, TestServer, call, run_once};
use grand_melee_cli::net::Conn;
use grand_melee_cli::session::{self, Action, Frontend, Input, Mode, Note, Options, State};
use grand_melee_cli::store::TokenStore;
use grand_melee_cli::tui::Tui;
use grand_melee_protocol::{ClientMessage, ServerMessage, TableId};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

/// `grand-melee create` → the new table's id.
async fn create(addr: &str, dir: &std::path::Path, name: &str, seats: &str) -> String {
    let (status, out, err) =
        run_once(addr, dir, &["create", "--name", name, "--seats", seats]).await;
    assert!(status.success(), "{err}");
    out.lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_name_is_refused_and_a_takeover_is_reported_not_fought() {
    let server = TestServer::start().await;
    let addr = server.url();
    let couch = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let table = create(&addr, couch.path(), "Couch game", "4").await;
    create(&addr, couch.path(), "Friday", "4").await;

    // Tables are found by a unique start of their name, in any case.
    let mut ann = Player::spawn("ann", &addr, couch.path(), &["join", "couch", "Ann"]);
    ann.expect_all(&["seated", "player=0", "resumed=false"])
        .await;
    ann.expect_prefix("snapshot ").await;

    // Bob on the same computer: refused, with the ways forward, and nothing changes.
    let (status, out, err) = run_once(&addr, couch.path(), &["join", "Couch", "Bob"]).await;
    assert!(!status.success(), "{out}");
    for part in [
        "already holds \"Ann's\" seat",
        "grand-melee resume",
        "--takeover",
        "--data-dir",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    let (_, list, _) = run_once(&addr, other.path(), &["list"]).await;
    assert!(
        list.lines()
            .any(|l| l.contains(&table) && l.contains("seated=1/4")),
        "{list}"
    );
    // With his own folder he sits down next to Ann (and `Cou` is enough for the table).
    let (status, out, err) = run_once(&addr, other.path(), &["join", "Cou", "Bob"]).await;
    assert!(status.success(), "{err}");
    assert!(out.contains("player=1 resumed=false"), "{out}");
    // Two tables start with `F`… no, one: `Friday`; but `x` matches none, and a common start of
    // two names is refused.
    create(&addr, couch.path(), "Fun night", "4").await;
    let (status, _, err) = run_once(&addr, other.path(), &["watch", "F"]).await;
    assert!(
        !status.success() && err.contains("several tables match `F`"),
        "{err}"
    );

    // `--takeover`: this computer's other window takes Ann's seat. Ann's client says so and
    // stops instead of taking it back.
    let mut takeover = Player::spawn(
        "takeover",
        &addr,
        couch.path(),
        &["join", &table, "Bob", "--takeover"],
    );
    takeover
        .expect_all(&["seated", "player=0", "resumed=true"])
        .await;
    ann.expect_all(&[
        "stderr:",
        "taken over by another client",
        "grand-melee resume",
    ])
    .await;
    let (status, lines) = ann.finish().await;
    assert!(!status.success());
    assert!(
        !lines.iter().any(|l| l.starts_with("reconnecting")),
        "no tug of war: {lines:#?}"
    );
    takeover.send("status").await;
    takeover.expect_prefix("status ").await;
    let (status, _) = takeover.finish().await;
    assert!(status.success());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_answers_join_with_its_replay_and_bad_settings_are_named() {
    let server = TestServer::start().await;
    let addr = server.url();
    let dir = tempfile::tempdir().unwrap();
    let table = create(&addr, dir.path(), "Short game", "2").await;
    let id = table.parse::<TableId>().unwrap();
    let mut seats = Vec::new();
    for name in ["Ann", "Ben"] {
        let mut conn = Conn::open(&addr).await.unwrap();
        let seated = call(
            &mut conn,
            ClientMessage::Join {
                id: 0,
                table: id,
                name: name.into(),
                password: None,
                entropy: None,
                member_token: None,
            },
        )
        .await;
        assert!(matches!(seated, ServerMessage::Seated { .. }), "{seated:?}");
        seats.push(conn);
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
    for _ in 0..2 {
        let view = common::snapshot(&mut seats[0]).await;
        let decider = view.mulligan_decider.unwrap();
        call(
            &mut seats[usize::from(decider)],
            ClientMessage::Keep { id: 0 },
        )
        .await;
    }
    call(&mut seats[1], ClientMessage::Concede { id: 0 }).await;
    let view = common::snapshot(&mut seats[0]).await;
    assert_eq!(view.stage, grand_melee_protocol::StageName::Finished);

    let (status, _, err) = run_once(&addr, dir.path(), &["join", &table, "Cid"]).await;
    assert!(!status.success());
    assert!(
        err.contains(&format!(
            "the game is over (see `grand-melee replay watch {table}`)"
        )),
        "{err}"
    );
    assert!(!err.contains("started"), "{err}");

    // A setting out of range: the command line names it and its range before asking; the
    // server names it too.
    let (status, _, err) = run_once(
        &addr,
        dir.path(),
        &["create", "--name", "Big", "--seats", "41"],
    )
    .await;
    assert!(!status.success());
    assert!(err.contains("--seats") && err.contains("1..=40"), "{err}");
    let long = "p".repeat(65);
    let (status, _, err) = run_once(
        &addr,
        dir.path(),
        &[
            "create",
            "--name",
            "Big",
            "--seats",
            "4",
            "--password",
            &long,
        ],
    )
    .await;
    assert!(!status.success());
    assert!(
        err.contains("create_table refused: password") && err.contains("(bad_settings)"),
        "{err}"
    );
    for conn in seats {
        conn.close().await;
    }
    server.shutdown().await;
}

/// The full-screen front end on a test backend that ends the session (end of input) once its
/// log holds every one of `wanted`.
struct Watcher {
    tui: Tui<TestBackend>,
    wanted: Vec<String>,
    quit: mpsc::Sender<Input>,
    done: bool,
}

impl Frontend for Watcher {
    fn note(&mut self, state: &State, note: Note) -> std::io::Result<()> {
        self.tui.note(state, note)?;
        let log = self.tui.screen.log_lines().join("\n");
        if !self.done && self.wanted.iter().all(|w| log.contains(w.as_str())) {
            self.done = true;
            let _ = self.quit.try_send(Input::Eof);
        }
        Ok(())
    }

    fn input(&mut self, state: &State, input: Input) -> std::io::Result<Option<Action>> {
        self.tui.input(state, input)
    }

    fn wants_history(&self) -> bool {
        self.tui.wants_history()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_client_rebuilds_its_log_from_the_events_before_the_drop() {
    let server = TestServer::start().await;
    let addr = server.url();
    let dir = tempfile::tempdir().unwrap();
    let table = create(&addr, dir.path(), "History", "4").await;
    let id = table.parse::<TableId>().unwrap();
    let store = TokenStore::new(dir.path());
    let server_url = grand_melee_cli::net::endpoint(&addr);

    // Ann sits down with the full-screen front end, says hello, and quits.
    let mut ann = Player::spawn("ann", &addr, dir.path(), &["join", &table, "Ann"]);
    ann.expect_all(&["seated", "player=0"]).await;
    ann.send("say hello before the drop").await;
    ann.expect_all(&["event", "chat", "hello before the drop"])
        .await;
    let (status, _) = ann.finish().await;
    assert!(status.success());

    // While she is away, Ben sits down and chats.
    let mut ben = Conn::open(&addr).await.unwrap();
    call(
        &mut ben,
        ClientMessage::Join {
            id: 0,
            table: id,
            name: "Ben".into(),
            password: None,
            entropy: None,
            member_token: None,
        },
    )
    .await;
    call(
        &mut ben,
        ClientMessage::Chat {
            id: 0,
            text: "said while Ann was away".into(),
        },
    )
    .await;

    // Ann resumes in the full-screen UI: her log holds what happened before, in order, and
    // the chat too.
    let (tx, mut rx) = mpsc::channel(8);
    let mut watcher = Watcher {
        tui: Tui::new(Terminal::new(TestBackend::new(100, 30)).unwrap()),
        wanted: vec![
            "Ann sat down".into(),
            "Ann: hello before the drop".into(),
            "Ben sat down".into(),
            "Ben: said while Ann was away".into(),
        ],
        quit: tx,
        done: false,
    };
    let played = tokio::time::timeout(
        PATIENCE,
        session::play(
            server_url,
            Mode::Resume { table: id },
            &store,
            &mut rx,
            &mut watcher,
            &Options::default(),
        ),
    )
    .await
    .expect("the log was rebuilt in time");
    played.unwrap();
    let log = watcher.tui.screen.log_lines();
    let at = |text: &str| {
        log.iter()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("{text} in {log:#?}"))
    };
    assert!(at("Ann sat down") < at("hello before the drop"));
    assert!(at("hello before the drop") < at("Ben sat down"));
    assert!(at("Ben sat down") < at("said while Ann was away"));
    // Each event once, numbered.
    assert_eq!(log.iter().filter(|l| l.contains("Ben sat down")).count(), 1);
    assert!(
        log.iter().any(|l| l.starts_with("#1 Ann sat down")),
        "{log:#?}"
    );
    ben.close().await;
    server.shutdown().await;
}
