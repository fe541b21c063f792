//! A Magic Tech table played on a real server with the terminal's own typed commands (decks,
//! lands, a face-down deployment paid for and revealed with its declaration, a patrol, a
//! mission against the stockpile and the defender's blocks), then the full-screen UI drawn at
//! 80×24 from the table's snapshot and its script-mode `status` and situation.
#![allow(clippy::unwrap_used)]

mod common;

use common::{CreateTable, Player, TestServer, call, field, run_once, snapshot};
use grand_melee_cli::command::{self, Command};
use grand_melee_cli::games::{self, GameMirror, Situation};
use grand_melee_cli::net::Conn;
use grand_melee_cli::session::State;
use grand_melee_cli::tui::{Screen, render};
use grand_melee_protocol::magic_tech_types::{Area, MtPhase};
use grand_melee_protocol::{
    ClientMessage, GameKind, PlayerId, ServerMessage, StageName, TableView,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// A seat: its connection and player id.
struct Seat {
    conn: Conn,
    me: PlayerId,
}

impl Seat {
    /// Types `line` as the terminal does (parsed against the table as it is now) and sends it;
    /// a refusal fails the test.
    async fn typed(&mut self, line: &str) -> TableView {
        let view = snapshot(&mut self.conn).await;
        let parsed = command::parse(line, Some(&view), Some(self.me));
        let Ok(Some(Command::Request(message))) = parsed else {
            panic!("{line}: {parsed:?}");
        };
        call(&mut self.conn, message).await;
        snapshot(&mut self.conn).await
    }
}

fn board(view: &TableView) -> &grand_melee_protocol::magic_tech_types::MagicTechView {
    view.magic_tech.as_deref().unwrap()
}

/// The seat whose turn it is.
fn active<'a>(seats: &'a mut [Seat], view: &TableView) -> &'a mut Seat {
    let active = board(view).active.unwrap();
    seats.iter_mut().find(|s| s.me == active).unwrap()
}

/// `next` until the active player's turn is in `phase`.
async fn to(seats: &mut [Seat], mut view: TableView, phase: MtPhase) -> TableView {
    while board(&view).phase != Some(phase) {
        view = active(seats, &view).typed("next").await;
    }
    view
}

/// `next` until the turn passes.
async fn pass(seats: &mut [Seat], mut view: TableView) -> TableView {
    let was = board(&view).active;
    while board(&view).active == was {
        view = active(seats, &view).typed("next").await;
    }
    view
}

fn draw(width: u16, height: u16, state: &State) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| render(f, &Screen::new(), state)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect()
}

#[tokio::test]
async fn a_magic_tech_table_is_played_with_typed_commands_and_drawn_at_80_by_24() {
    // Every typed command is checked against a fresh snapshot: more requests than a person's.
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..grand_melee_server::ServerConfig::default()
    })
    .await;
    let url = server.url();
    let mut host = Conn::open(&url).await.unwrap();
    let settings = CreateTable::new("duel", 2);
    let mut request = settings.request(0);
    if let ClientMessage::CreateTable { game, .. } = &mut request {
        *game = GameKind::MagicTech;
    }
    let table = settings.created(call(&mut host, request).await);
    host.close().await;

    let mut seats = Vec::new();
    for name in ["Ann", "Ben"] {
        let mut conn = Conn::open(&url).await.unwrap();
        let seated = call(
            &mut conn,
            ClientMessage::Join {
                id: 0,
                table,
                name: name.into(),
                password: None,
                entropy: None,
                member_token: None,
            },
        )
        .await;
        let ServerMessage::Seated { player, .. } = seated else {
            panic!("{seated:?}");
        };
        seats.push(Seat { conn, me: player });
    }
    let (ann, ben) = (seats[0].me, seats[1].me);
    for seat in &mut seats {
        seat.typed("deck 20").await;
    }
    let view = seats[0].typed("start").await;
    assert_eq!(games::kind(Some(&view)), GameKind::MagicTech);
    // The dice draw the first player; both keep.
    let mut view = view;
    while let Some(decider) = view.mulligan_decider {
        let seat = seats.iter_mut().find(|s| s.me == decider).unwrap();
        view = seat.typed("keep").await;
    }
    assert_eq!(view.stage, StageName::Playing);
    let first = board(&view).active.unwrap();
    let (second, first_name, second_name) = if first == ann {
        (ben, "Ann", "Ben")
    } else {
        (ann, "Ben", "Ann")
    };

    // The first turn: a land and one face-down card.
    view = to(&mut seats, view, MtPhase::Deploy).await;
    view = active(&mut seats, &view).typed("land forest").await;
    view = active(&mut seats, &view).typed("deploy").await;
    view = pass(&mut seats, view).await;
    // The second player's: a land and two face-down cards.
    view = to(&mut seats, view, MtPhase::Deploy).await;
    view = active(&mut seats, &view).typed("land mountain").await;
    view = active(&mut seats, &view).typed("deploy").await;
    view = active(&mut seats, &view).typed("deploy").await;
    view = pass(&mut seats, view).await;
    // The first player's second turn: tap the Forest, pay the card, reveal it as a green
    // haste creature (the Forest makes {G} cost one), patrol, and a mission.
    view = to(&mut seats, view, MtPhase::Deploy).await;
    view = active(&mut seats, &view).typed("tap 0").await;
    view = active(&mut seats, &view).typed("pay 1 1").await;
    view = active(&mut seats, &view)
        .typed("reveal #1 creature G 1/1 haste Llanowar Elves")
        .await;
    view = active(&mut seats, &view).typed("patrol 1").await;
    let elves = board(&view).cards.iter().find(|c| c.card == 1).unwrap();
    assert_eq!(elves.face.as_ref().unwrap().name, "Llanowar Elves");
    assert_eq!(elves.area, Area::Patrol);
    let stockpile = |view: &TableView, p| {
        board(view)
            .sides
            .iter()
            .find(|s| s.player == p)
            .unwrap()
            .stockpile
    };
    let before = stockpile(&view, second);
    view = to(&mut seats, view, MtPhase::Missions).await;
    view = active(&mut seats, &view).typed("mission stockpile 1").await;
    assert!(board(&view).mission.is_some());
    let defender = seats.iter_mut().find(|s| s.me == second).unwrap();
    view = defender.typed("block none").await;
    assert!(board(&view).mission.is_none());
    assert_eq!(stockpile(&view, second), before - 1, "one card per point");

    // The table's history folded from the empty table (as a replay and the log's history fold
    // it) comes to the same board.
    let mut folded = GameMirror::of(&TableView::new(table, "duel", view.settings.clone())).unwrap();
    let mut from_seq = 1;
    loop {
        let page = call(
            &mut seats[0].conn,
            ClientMessage::GetEvents {
                id: 0,
                table,
                from_seq,
                limit: 500,
            },
        )
        .await;
        let ServerMessage::PastEvents {
            first_seq,
            events,
            next_seq,
            ..
        } = page
        else {
            panic!("{page:?}");
        };
        for (k, event) in events.iter().enumerate() {
            folded.apply(first_seq + k as u64, event).unwrap();
        }
        match next_seq {
            Some(next) => from_seq = next,
            None => break,
        }
    }
    let current = snapshot(&mut seats[0].conn).await;
    assert_eq!(folded.view().magic_tech, current.magic_tech);
    assert_eq!(folded.seq(), current.seq);

    // The full-screen UI at 80×24 for the first player.
    let state = State {
        server: url.clone(),
        table,
        me: Some(first),
        spectator: false,
        mirror: Some(GameMirror::of(&view).unwrap()),
        view: Some(view.clone()),
        connected: true,
    };
    assert_eq!(state.mirror.as_ref().unwrap().view(), view);
    let screen = draw(80, 24, &state);
    let text = screen.join("\n");
    assert!(!text.contains("too small"), "{text}");
    let row = |needle: &str| {
        screen
            .iter()
            .position(|r| r.contains(needle))
            .unwrap_or_else(|| panic!("`{needle}` missing:\n{text}"))
    };
    let theirs = row(&format!(
        " {second_name} · stockpile {}",
        stockpile(&view, second)
    ));
    let mine = row(&format!("▶{first_name} · stockpile"));
    assert!(theirs < mine, "{text}");
    // The revealed creature on patrol, tapped by its mission; the lands; the face-down cards.
    row("patrol  #1 Llanowar Elves 1/1/1↷");
    row("#0 Forest↷");
    row("#2 Mountain");
    row("#3 ▫c0");
    row("#4 ▫c0");
    row("missions");

    // Script mode: the seats' lines and the situation.
    let status = games::status_lines(GameKind::MagicTech, &view, Some(first));
    assert!(
        status.iter().any(|l| l.starts_with("card 1 ")
            && l.contains("name=\"Llanowar Elves\"")
            && l.contains("area=patrol")
            && l.contains("tapped=true")),
        "{status:?}"
    );
    let situation = Situation::of(&view, Some(first)).unwrap();
    assert_eq!(
        situation.script(),
        "your_turn phase=missions deploys=2 lands=2"
    );
    let theirs = Situation::of(&view, Some(second)).unwrap();
    assert!(
        theirs.script().starts_with("their_turn"),
        "{}",
        theirs.script()
    );

    // The real `grand-melee` in a real 80×24 terminal (tmux), watching: the same board.
    let pane = common::in_tmux(
        &server.addr.to_string(),
        &["watch", &table.to_string()],
        "Llanowar Elves",
    )
    .await;
    for needle in [
        format!(" {second_name} · stockpile {}", stockpile(&view, second)),
        "patrol  #1 Llanowar Elves 1/1/1↷".to_owned(),
        "#0 Forest↷".to_owned(),
        "#3 ▫c0".to_owned(),
    ] {
        assert!(pane.contains(&needle), "`{needle}` missing:\n{pane}");
    }
    assert!(pane.lines().count() <= 24, "{pane}");
}
/// Script mode: `create --game magic_tech`, two `grand-melee` processes that declare their
/// decks, keep, and play the first turn's land and face-down card with typed commands; a
/// refused reveal is a typed error line; `status` lists the board.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_mode_plays_a_magic_tech_table() {
    let server = TestServer::start().await;
    let addr = server.addr.to_string();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let (status, out, err) = run_once(
        &addr,
        dirs[2].path(),
        &[
            "create",
            "--name",
            "Duel",
            "--seats",
            "2",
            "--game",
            "magic_tech",
        ],
    )
    .await;
    assert!(status.success(), "{out}{err}");
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap()
        .trim()
        .to_owned();
    let mut players = Vec::new();
    for (i, name) in ["Ann", "Ben"].iter().enumerate() {
        let mut p = Player::spawn(name, &addr, dirs[i].path(), &["join", &table, name]);
        p.expect_all(&["seated", &format!("player={i}")]).await;
        p.expect_prefix("snapshot ").await;
        players.push(p);
    }
    players[0].expect_prefix("you lobby host deck=none").await;
    for (i, p) in players.iter_mut().enumerate() {
        // Each waits for his own declaration (the other's is on his stream too).
        p.send("deck 8").await;
        p.expect_all(&[
            "magic_tech.deck_declared",
            &format!("player={i} "),
            "size=8",
        ])
        .await;
    }
    players[0].send("start").await;
    let started = players[0].expect_all(&["event", "game_started"]).await;
    let first: usize = field(&started, "first").unwrap().parse().unwrap();
    let other = 1 - first;
    for who in [first, other] {
        players[who].expect_prefix("you mulligan_decide").await;
        players[who].send("keep").await;
    }
    players[first].expect_prefix("you your_turn").await;

    // `next` until the deploy phase, read from `status`'s turn line.
    for _ in 0..6 {
        players[first].send("status").await;
        let turn = players[first].expect_prefix("turn number=1 ").await;
        if field(&turn, "phase") == Some("deploy") {
            break;
        }
        players[first].send("next").await;
        players[first]
            .expect_all(&["event", "magic_tech.phase_began"])
            .await;
    }
    let p = &mut players[first];
    p.send("land forest").await;
    p.expect_all(&[
        "event",
        "magic_tech.deployed",
        "card=0",
        "name=\"Forest\"",
        "type=land",
    ])
    .await;
    p.send("deploy").await;
    p.expect_all(&["event", "magic_tech.deployed", "card=1", "face_down"])
        .await;
    // No counters on it yet: the reveal is refused with a typed error, and nothing changes.
    p.send("reveal 1 creature G 1/1 Llanowar Elves").await;
    p.expect_prefix("error ").await;
    p.send("status").await;
    p.expect_prefix("card 0 ").await;
    let card = p.expect_prefix("card 1 ").await;
    assert!(card.contains("area=deploy face_down counters=0"), "{card}");
    for p in players {
        let (status, _) = p.finish().await;
        assert!(status.success());
    }
}
