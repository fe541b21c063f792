//! A Mountain Magic climb played on a real server with the terminal's own typed commands
//! (flip, place, discard, the path, mana, casts, attacks, the end of the turn) to one of the
//! six endings, the full-screen UI drawn at 80×24 along the way, its replay stepped through,
//! the real `grand-melee watch`
//! in a real 80×24 terminal (tmux), and script mode climbing to an ending.
#![allow(clippy::unwrap_used)]

mod common;

use common::{CreateTable, Player, TestServer, call, field, run_once, snapshot};
use grand_melee_cli::command::{self, Command};
use grand_melee_cli::games::{self, GameMirror, Situation};
use grand_melee_cli::net::Conn;
use grand_melee_cli::replay::{Replay, Stepper, Viewer};
use grand_melee_cli::session::State;
use grand_melee_cli::tui::{Screen, render};
use grand_melee_protocol::mountain_magic::Climb;
use grand_melee_protocol::mountain_magic_types::{
    Colour, ForceRef, MmPhase, MountainView, Outcome, Side,
};
use grand_melee_protocol::{
    ClientMessage, GameKind, PlayerId, ServerMessage, StageName, TableView,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn climb(view: &TableView) -> &MountainView {
    view.mountain_magic.as_deref().unwrap()
}

fn letter(colour: Colour) -> &'static str {
    match colour {
        Colour::White => "w",
        Colour::Blue => "u",
        Colour::Black => "b",
        Colour::Red => "r",
        Colour::Green => "g",
    }
}

fn card_word(card: ForceRef) -> String {
    match card.side {
        Side::Player => format!("y{}", card.force),
        Side::Opponent => format!("o{}", card.force),
    }
}

/// What a climber types next, read from the table as it stands (the mirror's `Climb` and its
/// public questions): the first place allowed, discard, flip; the path straight down the left;
/// a land where it first powers something; casts and single attacks (`acted` this turn, at
/// most a few); the end of the turn.
fn typed_move(view: &TableView, acted: &mut u32) -> Option<String> {
    let climb = Climb::from_view(climb(view).clone());
    let mm = climb.view();
    match mm.phase {
        MmPhase::Climbing => Some(match climb.placements().first() {
            Some((row, pos)) if climb.card_to_place().is_some() => format!("place {row}:{pos}"),
            _ if mm.flipped.is_some() => "discard".to_owned(),
            _ => "flip".to_owned(),
        }),
        MmPhase::Path => Some("path 0 0 0 0 0 0 0".to_owned()),
        MmPhase::Battle => {
            let battle = mm.battle.as_ref()?;
            if battle.turn != Some(Side::Player) {
                return None;
            }
            if battle.pending_land.is_some() {
                return Some(match climb.mana_places(Side::Player).first() {
                    Some(place) => format!(
                        "mana y{}{} {}",
                        place.force,
                        if place.ability { " ability" } else { "" },
                        letter(place.colour)
                    ),
                    None => "mana none".to_owned(),
                });
            }
            if *acted < 6 {
                let mine = |k: usize| ForceRef {
                    side: Side::Player,
                    force: u8::try_from(k).unwrap(),
                };
                let theirs = |k: usize| ForceRef {
                    side: Side::Opponent,
                    force: u8::try_from(k).unwrap(),
                };
                let targets: Vec<ForceRef> = (0..battle.opponent.len())
                    .map(theirs)
                    .chain((0..battle.player.len()).map(mine))
                    .collect();
                for k in 0..battle.player.len() {
                    let Some(effect) = climb.castable(mine(k)) else {
                        continue;
                    };
                    let target = targets
                        .iter()
                        .map(|&t| Some(t))
                        .chain(std::iter::once(None))
                        .find(|&t| climb.may_target(mine(k), effect, t));
                    if let Some(target) = target {
                        *acted += 1;
                        return Some(match target {
                            Some(t) => format!("cast y{k} {}", card_word(t)),
                            None => format!("cast y{k}"),
                        });
                    }
                }
                for k in 0..battle.player.len() {
                    for t in 0..battle.opponent.len() {
                        if climb.may_attack(&[mine(k)], theirs(t)) {
                            *acted += 1;
                            return Some(format!("attack o{t} y{k}"));
                        }
                    }
                }
            }
            *acted = 0;
            Some("end".to_owned())
        }
        MmPhase::Undealt | MmPhase::Over => None,
    }
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

fn state(url: &str, view: &TableView, me: PlayerId) -> State {
    State {
        server: url.to_owned(),
        table: view.table,
        me: Some(me),
        spectator: false,
        mirror: Some(GameMirror::of(view).unwrap()),
        view: Some(view.clone()),
        connected: true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_climb_is_played_with_typed_commands_to_an_ending_and_drawn_at_80_by_24() {
    // Every typed command is checked against a fresh snapshot: more requests than a person's.
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..grand_melee_server::ServerConfig::default()
    })
    .await;
    let url = server.url();
    let mut conn = Conn::open(&url).await.unwrap();
    let settings = CreateTable::new("climb", 1).game(GameKind::MountainMagic);
    let table = settings.created(call(&mut conn, settings.request(0)).await);
    let seated = call(
        &mut conn,
        ClientMessage::Join {
            id: 0,
            table,
            name: "Ann".into(),
            password: None,
            entropy: None,
            member_token: None,
        },
    )
    .await;
    let ServerMessage::Seated { player: me, .. } = seated else {
        panic!("{seated:?}");
    };
    let typed = async |conn: &mut Conn, line: &str| -> TableView {
        let view = snapshot(conn).await;
        let parsed = command::parse(line, Some(&view), Some(me));
        let Ok(Some(Command::Request(message))) = parsed else {
            panic!("{line}: {parsed:?}");
        };
        let answer = call(conn, message).await;
        assert!(
            !matches!(answer, ServerMessage::Error { .. }),
            "{line}: {answer:?}"
        );
        snapshot(conn).await
    };
    let mut view = typed(&mut conn, "start").await;
    assert_eq!(games::kind(Some(&view)), GameKind::MountainMagic);
    assert_eq!(climb(&view).phase, MmPhase::Climbing);

    // The first screen: the mountain's bottom row dealt, `flip` to begin.
    let screen = draw(80, 24, &state(&url, &view, me));
    let text = screen.join("\n");
    assert!(
        !text.contains("too small") && !text.contains("cannot show"),
        "{text}"
    );
    for needle in [
        "Mountain · spell deck",
        "6:0",
        "1:5",
        "To place: none · `flip`",
    ] {
        assert!(text.contains(needle), "`{needle}` missing:\n{text}");
    }
    assert!(text.contains("Climbing: `flip`"), "the situation:\n{text}");

    // The real `grand-melee` in a real 80×24 terminal (tmux), watching the climb begin: the
    // mountain with its empty places, the bottom row dealt, the card to place.
    let first = view.mountain_magic.as_deref().unwrap().mountain[0][0].unwrap();
    let first = grand_melee_cli::games::mountain_magic::words::card(first);
    let first: String = first.chars().take(8).collect();
    let pane = common::in_tmux(
        &server.addr.to_string(),
        &["watch", &table.to_string()],
        "To place",
    )
    .await;
    for needle in [
        "Mountain · spell deck",
        "6:0",
        "1:5",
        "To place: none",
        first.as_str(),
    ] {
        assert!(pane.contains(needle), "`{needle}` missing:\n{pane}");
    }
    assert!(pane.lines().count() <= 24, "{pane}");

    let mut acted = 0;
    let mut screens = [false; 3];
    let mut moves = 0;
    while let Some(line) = typed_move(&view, &mut acted) {
        view = typed(&mut conn, &line).await;
        moves += 1;
        assert!(moves < 3_000, "the climb ends");
        let phase = climb(&view).phase;
        let index = match phase {
            MmPhase::Path => 0,
            MmPhase::Battle => 1,
            _ => continue,
        };
        if !screens[index] {
            screens[index] = true;
            let text = draw(80, 24, &state(&url, &view, me)).join("\n");
            let needle = ["choose your path", "Occupying o0 "][index];
            assert!(text.contains(needle), "`{needle}` missing:\n{text}");
        }
    }
    assert_eq!(view.stage, StageName::Finished, "{:?}", climb(&view));
    let outcome = climb(&view).outcome.unwrap();
    let ending = match outcome {
        Outcome::FailedClimb => "the climb failed".to_owned(),
        Outcome::Battle { ending } => ending.name().to_owned(),
    };
    let screen = draw(80, 24, &state(&url, &view, me));
    let text = screen.join("\n");
    assert!(
        text.contains(&format!("The climb is over: {ending}")),
        "{text}"
    );
    let situation = Situation::of(&view, Some(me)).unwrap();
    assert_eq!(
        situation.script(),
        format!("over ending={}", grand_melee_cli::safe::quoted(&ending))
    );

    // The climb's history, stepped through as `replay watch` does: every event worded, the
    // last step the table's end, the replay view at 80×24 showing the ending.
    let mut events = Vec::new();
    let mut from_seq = 1;
    loop {
        let page = call(
            &mut conn,
            ClientMessage::GetEvents {
                id: 0,
                table,
                from_seq,
                limit: 500,
            },
        )
        .await;
        let ServerMessage::PastEvents {
            events: got,
            next_seq,
            ..
        } = page
        else {
            panic!("{page:?}");
        };
        events.extend(got);
        match next_seq {
            Some(next) => from_seq = next,
            None => break,
        }
    }
    let replay = Replay {
        table,
        name: "climb".into(),
        settings: view.settings.clone(),
        events,
    };
    let mut stepper = Stepper::new(replay).unwrap();
    let last = stepper.last();
    assert_eq!(last, view.seq);
    for seq in 1..=last {
        let event = stepper.event(seq).unwrap();
        if event.name().starts_with("mountain_magic.") {
            assert!(!stepper.sentence(seq).unwrap().is_empty(), "{seq}");
        }
    }
    stepper.goto(last);
    assert_eq!(stepper.view().mountain_magic, view.mountain_magic);
    let viewer = Viewer::new(stepper, url.clone());
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    viewer.draw(&mut terminal).unwrap();
    let buffer = terminal.backend().buffer();
    let text: String = (0..24)
        .map(|y| {
            (0..80)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(
        text.contains(&format!("The climb is over: {ending}")),
        "{text}"
    );

    // The real `grand-melee` in a real 80×24 terminal (tmux), watching: the same ending.
    let pane = common::in_tmux(
        &server.addr.to_string(),
        &["watch", &table.to_string()],
        &ending,
    )
    .await;
    assert!(
        pane.contains(&format!("The climb is over: {ending}")),
        "{pane}"
    );
    assert!(pane.lines().count() <= 24, "{pane}");
}
/// Script mode: `create --game mountain_magic --seats 1`, one `grand-melee` process that
/// joins, starts and climbs by its `you …` lines (the first place offered, discard, flip,
/// a path, lands unused, the end of each turn) to an ending; a refused placement is a typed
/// error line that changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_mode_climbs_to_an_ending() {
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..grand_melee_server::ServerConfig::default()
    })
    .await;
    let addr = server.addr.to_string();
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let (status, out, err) = run_once(
        &addr,
        dirs[1].path(),
        &[
            "create",
            "--name",
            "Climb",
            "--seats",
            "1",
            "--game",
            "mountain_magic",
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
    let mut p = Player::spawn("Ann", &addr, dirs[0].path(), &["join", &table, "Ann"]);
    p.expect_all(&["seated", "player=0"]).await;
    p.expect_prefix("snapshot ").await;
    p.expect_prefix("you lobby host").await;
    p.send("start").await;
    p.expect_all(&["event", "mountain_magic.dealt"]).await;
    // Nothing is on row 1 yet: a placement on row 2 is refused, and nothing changes.
    p.send("flip").await;
    p.expect_all(&["event", "mountain_magic.flipped"]).await;
    p.send("place 2:0").await;
    p.expect_prefix("error ").await;

    let mut situation = status_situation(&mut p, 0).await;
    let mut moves = 0;
    let ending = loop {
        let line = match situation.as_str() {
            "flip" => "flip".to_owned(),
            "path" => "path 0 0 1 1 2 2 3".to_owned(),
            "your_turn" => "end".to_owned(),
            // A land a card can use must go on one: the first place offered.
            s if s.starts_with("your_turn land=") => match field(s, "places") {
                Some("none") | None => "mana none".to_owned(),
                Some(places) => format!(
                    "mana {}",
                    places.split(',').next().unwrap().replace(':', " ")
                ),
            },
            s if s.starts_with("place ") => match field(s, "places") {
                Some("none") | None => "discard".to_owned(),
                Some(places) => format!("place {}", places.split(',').next().unwrap()),
            },
            s if s.starts_with("over ending=") => break s["over ending=".len()..].to_owned(),
            other => panic!("unexpected situation `{other}`"),
        };
        p.send(&line).await;
        let answer = p
            .expect("an answer", |l| {
                l.starts_with("ok ") || l.starts_with("error ")
            })
            .await;
        assert!(answer.starts_with("ok "), "{line}: {answer}");
        let seq: u64 = field(&answer, "seq").unwrap().parse().unwrap();
        situation = status_situation(&mut p, seq).await;
        moves += 1;
        assert!(moves < 3_000, "the climb ends");
    };
    assert!(ending.starts_with('"') && ending.len() > 2, "{ending}");
    p.send("status").await;
    let climb = p.expect_prefix("climb phase=over ").await;
    assert!(climb.ends_with(&format!(" ending={ending}")), "{climb}");
    let (status, _) = p.finish().await;
    assert!(status.success());
}

/// `status` until the table has folded event `seq`; the situation (after `you `) then.
async fn status_situation(p: &mut Player, seq: u64) -> String {
    loop {
        p.send("status").await;
        let head = p.expect_prefix("status table=").await;
        let now: u64 = field(&head, "seq").unwrap().parse().unwrap();
        let you = p.expect_prefix("you ").await;
        if now >= seq {
            return you.strip_prefix("you ").unwrap().to_owned();
        }
    }
}
