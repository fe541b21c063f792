//! Today's mountain from the terminal: `grand-melee standings` (a day's standings, its
//! commitment and, after the day, its secret) written for an 80×24 terminal (a real one, in
//! tmux) and as script lines, its refusals; a day climb and a league climb made with `create
//! --day` on the real server and drawn at 80×24; `grand-melee verify` of a day climb (its dice
//! are the day's: the day's secret, no climber's entropy; the secret comes with the day's
//! standings once the day is over, and before that verify says when).
#![allow(clippy::unwrap_used)]

mod common;

use common::{Player, TestServer, fake_server, field, run_once};
use grand_melee_cli::games::GameMirror;
use grand_melee_cli::replay::{Access, Stepper};
use grand_melee_cli::session::State;
use grand_melee_cli::tui::{Screen, render};
use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::game::{Game, GameKind};
use grand_melee_protocol::mountain_magic::MountainMagic;
use grand_melee_protocol::mountain_magic::day::Day;
use grand_melee_protocol::mountain_magic_types::{
    ClimbEnd, DayClimb, MountainCommand, MountainMagicSettings,
};
use grand_melee_protocol::rules::{Actor, Command};
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage, Settings, TableId};
use grand_melee_protocol::{Event, TableView};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The commitment the fake server gives every day.
const COMMITMENT: &str = "5e1f0a9c3b7d2e4f6a8b0c1d2e3f405162738495a6b7c8d9eafb0c1d2e3f4051";

/// The secret of a day that is over.
const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// Climbs of every kind: every ending, a long name, a member, a shared place.
fn climbs() -> Vec<DayClimb> {
    let climb = |place, climber: &str, member, end, cards_left, table: u128| DayClimb {
        place,
        climber: climber.to_owned(),
        member,
        end,
        cards_left,
        table: TableId::from_u128(table),
        finished_at_ms: 1_764_115_200_000 + u64::from(place) * 60_000,
    };
    vec![
        climb(1, "Ada", None, ClimbEnd::TotalVictory, 4, 0xa1 << 96),
        climb(
            2,
            "Bartholomew the Long-Named",
            Some(3),
            ClimbEnd::Victory,
            2,
            0xb2 << 96,
        ),
        climb(2, "Cai", None, ClimbEnd::Victory, 2, 0xc3 << 96),
        climb(4, "Dee", None, ClimbEnd::DrawNoCreatures, 0, 0xd4 << 96),
        climb(5, "Eve", None, ClimbEnd::DrawBothCreatures, 1, 0xe5 << 96),
        climb(6, "Fay", None, ClimbEnd::Defeat, 0, 0xf6 << 96),
        climb(7, "Gus", None, ClimbEnd::HumiliatingDefeat, 0, 0x17 << 96),
        climb(8, "Hal", None, ClimbEnd::FailedClimb, 19, 0x28 << 96),
        climb(9, "Ivy", None, ClimbEnd::GaveUp, 0, 0x39 << 96),
    ]
}

/// A server that knows two days: today (2026-11-26, going on: no secret) and yesterday (over:
/// its secret); any other day is `bad_day`. It answers two climbs a page, whatever the
/// `limit`, so the client has to ask for every page.
async fn day_server() -> String {
    let addr = fake_server(|request| match request {
        ClientMessage::MountainMagicStandings {
            id,
            day,
            league,
            from,
            ..
        } => {
            let (day, secret) = match day.as_str() {
                "today" | "2026-11-26" => ("2026-11-26", None),
                "2026-11-25" => ("2026-11-25", Some(SECRET.to_owned())),
                _ => {
                    return vec![ServerMessage::Error {
                        reply_to: Some(id),
                        request: Some("mountain_magic.standings".into()),
                        code: ErrorCode::BadDay,
                        message: ErrorCode::BadDay.description().into(),
                    }];
                }
            };
            vec![ServerMessage::MountainMagicStandings {
                reply_to: id,
                day: day.to_owned(),
                league,
                commitment: COMMITMENT.to_owned(),
                secret,
                standings: climbs().into_iter().skip(from as usize).take(2).collect(),
                climbers: climbs().len() as u32,
                climbs: 12,
                next: (from as usize + 2 < climbs().len()).then_some(from + 2),
            }]
        }
        _ => Vec::new(),
    })
    .await;
    addr.to_string()
}

#[tokio::test]
async fn standings_in_script_mode_name_every_climb_and_the_secret_after_the_day() {
    let addr = day_server().await;
    let data = tempfile::tempdir().unwrap();
    let (status, out, err) = run_once(&addr, data.path(), &["--plain", "standings"]).await;
    assert!(status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let day = lines[0];
    assert!(day.starts_with("day "), "{out}");
    assert_eq!(field(day, "day"), Some("2026-11-26"));
    assert_eq!(field(day, "commitment"), Some(COMMITMENT));
    // Today: not revealed, and when it will be.
    assert_eq!(field(day, "secret"), Some("-"));
    assert_eq!(field(day, "revealed_at"), Some("2026-11-27T00:00:00Z"));
    assert_eq!(
        (field(day, "climbers"), field(day, "climbs")),
        (Some("9"), Some("12"))
    );
    let expected = climbs();
    assert_eq!(lines.len(), 1 + expected.len(), "{out}");
    for (line, climb) in lines[1..].iter().zip(&expected) {
        assert!(line.starts_with("climb "), "{line}");
        assert_eq!(field(line, "place"), Some(climb.place.to_string().as_str()));
        assert_eq!(
            field(line, "cards_left"),
            Some(climb.cards_left.to_string().as_str())
        );
        assert_eq!(field(line, "table"), Some(climb.table.to_string().as_str()));
        let end = serde_json::to_value(climb.end).unwrap();
        assert_eq!(field(line, "end"), end.as_str());
        assert!(
            line.ends_with(&format!("ending=\"{}\"", climb.end.name())),
            "{line}"
        );
        assert!(
            line.contains(&format!("climber=\"{}\"", climb.climber)),
            "{line}"
        );
        assert_eq!(
            field(line, "member"),
            climb.member.map(|m| m.to_string()).as_deref()
        );
    }
    // A day that is over: its secret.
    let (status, out, err) = run_once(
        &addr,
        data.path(),
        &["--plain", "standings", "--day", "2026-11-25"],
    )
    .await;
    assert!(status.success(), "{err}");
    let day = out.lines().next().unwrap();
    assert_eq!(field(day, "day"), Some("2026-11-25"));
    assert_eq!(field(day, "secret"), Some(SECRET));
    // Not a day: the server's refusal, named.
    let (status, out, err) = run_once(
        &addr,
        data.path(),
        &["--plain", "standings", "--day", "someday"],
    )
    .await;
    assert!(!status.success());
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("mountain_magic.standings refused") && err.contains("bad_day"),
        "{err}"
    );
}

#[tokio::test]
async fn standings_are_documented_by_help() {
    let data = tempfile::tempdir().unwrap();
    let (status, out, _) = run_once("127.0.0.1:9", data.path(), &["--help"]).await;
    assert!(status.success());
    assert!(out.contains("standings"), "{out}");
    let (status, out, _) = run_once("127.0.0.1:9", data.path(), &["standings", "--help"]).await;
    assert!(status.success());
    for needed in [
        "--day",
        "[default: today]",
        "--league",
        "commitment",
        "secret",
        "80 columns",
        "create --game mountain_magic --seats 1 --day today",
    ] {
        assert!(out.contains(needed), "{needed}: {out}");
    }
    let (status, out, _) = run_once("127.0.0.1:9", data.path(), &["create", "--help"]).await;
    assert!(status.success());
    assert!(out.contains("--day <today|YYYY-MM-DD>"), "{out}");
}

/// `grand-melee standings` in a real 80×24 terminal (tmux): every climber, the endings by
/// their names, cards left and tables on lines that fit, the commitment, and when the secret
/// comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standings_fit_a_real_80_by_24_terminal() {
    let addr = day_server().await;
    let pane = common::in_tmux(&addr, &["standings"], "Ivy").await;
    let lines: Vec<&str> = pane.lines().collect();
    assert!(
        lines[0].starts_with("2026-11-26's mountain: 9 climber(s), 12 climb(s)"),
        "{pane}"
    );
    assert_eq!(lines[1], format!("commitment {COMMITMENT}"), "{pane}");
    assert_eq!(
        lines[2],
        "secret     revealed when the day is over, at 2026-11-27T00:00:00Z"
    );
    assert!(
        lines[3].contains("climber") && lines[3].contains("ending"),
        "{pane}"
    );
    for (line, climb) in lines[4..].iter().zip(climbs()) {
        let short: String = climb.climber.chars().take(15).collect();
        assert!(line.contains(&short), "{line}");
        assert!(line.contains(climb.end.name()), "{line}");
        assert!(
            line.ends_with(&format!(
                "{}  {}",
                climb.cards_left,
                &climb.table.to_string()[..8]
            )),
            "{line}"
        );
    }
    // Nothing wrapped: each climb is on its own line.
    assert!(lines[5].contains("Bartholomew the…"), "{pane}");
    assert!(lines[12].contains("Ivy"), "{pane}");
    let pane = common::in_tmux(&addr, &["standings", "--day", "2026-11-25"], "Ivy").await;
    assert!(pane.contains(&format!("secret     {SECRET}")), "{pane}");
}
/// The whole screen at 80×24 as the climber sees `view`.
fn draw(url: &str, view: &TableView) -> Vec<String> {
    let state = State {
        server: url.to_owned(),
        table: view.table,
        me: Some(0),
        spectator: false,
        mirror: Some(GameMirror::of(view).unwrap()),
        view: Some(view.clone()),
        connected: true,
    };
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|f| render(f, &Screen::new(), &state))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..24)
        .map(|y| {
            (0..80)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect()
}

/// Today's date (UTC), as the server resolves `today`.
fn today() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    Day::of(now).to_string()
}

/// A one-shot command that must succeed; its standard output.
async fn ok(addr: &str, dir: &std::path::Path, args: &[&str]) -> String {
    let (status, out, err) = run_once(addr, dir, args).await;
    assert!(status.success(), "{args:?}: {out}{err}");
    out
}

/// A one-shot command that must fail; its standard error.
async fn refused(addr: &str, dir: &std::path::Path, args: &[&str]) -> String {
    let (status, out, err) = run_once(addr, dir, args).await;
    assert!(!status.success(), "{args:?}: {out}");
    err
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

/// The `seq=` of an `ok` line.
fn seq_of(answer: &str) -> u64 {
    field(answer, "seq").unwrap().parse().unwrap()
}

/// From the table at `dealt` (the `start`'s answer, already read), climbs by the `you …`
/// lines (the first place offered, discard, flip, a path, lands unused, the end of each
/// turn) to an ending; returns it (quoted, as the line has it). Each request's own answer is
/// read before the next is sent, so an answer is never taken for another's.
async fn climb_to_an_ending(p: &mut Player, dealt: u64) -> String {
    let mut situation = status_situation(p, dealt).await;
    assert!(
        situation.starts_with("flip"),
        "a fresh climb turns a card over first: {situation}"
    );
    let mut moves = 0;
    loop {
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
            s if s.starts_with("over ending=") => return s["over ending=".len()..].to_owned(),
            other => panic!("unexpected situation `{other}`"),
        };
        p.send(&line).await;
        let answer = p
            .expect("an answer", |l| {
                l.starts_with("ok ") || l.starts_with("error ")
            })
            .await;
        assert!(answer.starts_with("ok "), "{line}: {answer}");
        situation = status_situation(p, seq_of(&answer)).await;
        moves += 1;
        assert!(moves < 3_000, "the climb ends");
    }
}

/// On the real server: Ann climbs today's mountain from `create --day today --join`, Bob (a
/// league member) makes a league climb the way league tables are joined (his kept member
/// token, his league name) and gives it up; `standings` lists both, `standings --league`
/// only Bob; a non-member and a `--day` that is not a climb are refused clearly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_day_climb_and_a_league_climb_from_the_command_line() {
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..grand_melee_server::ServerConfig::default()
    })
    .await;
    let addr = server.addr.to_string();
    let (ann, bob, org) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let today = today();

    // `--day` is a climb's.
    let err = refused(
        &addr,
        ann.path(),
        &["create", "--name", "X", "--seats", "4", "--day", "today"],
    )
    .await;
    assert!(err.contains("add --game mountain_magic --seats 1"), "{err}");

    let climb_args = |name: &'static str| {
        vec![
            "create",
            "--game",
            "mountain_magic",
            "--seats",
            "1",
            "--day",
            "today",
            "--name",
            name,
        ]
    };
    let mut args = climb_args("Ann's climb");
    args.extend(["--join", "Ann"]);
    let mut p = Player::spawn("Ann", &addr, ann.path(), &args);
    let created = p.expect_prefix("table_created ").await;
    let ann_table = created["table_created ".len()..].trim().to_owned();
    p.expect_all(&["seated", "player=0"]).await;
    p.expect_prefix("you lobby host").await;
    p.send("start").await;
    // The answer is read before the climb: the ack may come after the deal's events, and
    // a late `ok start` would be taken for the first flip's answer.
    let started = p.expect_prefix("ok start ").await;
    let ending = climb_to_an_ending(&mut p, seq_of(&started)).await;
    p.send("status").await;
    let climb = p.expect_prefix("climb phase=over ").await;
    assert!(climb.contains(&format!(" day={today} ending=")), "{climb}");
    let (status, _) = p.finish().await;
    assert!(status.success());

    // The climb drawn at 80×24 from its replay: its day on the title bar, and where the
    // standings are. Before the day is over only its climber replays it, by the seat token
    // kept where he climbed from.
    let access = Access {
        password: None,
        store: Some(grand_melee_cli::store::TokenStore::new(ann.path())),
    };
    let replay = grand_melee_cli::replay::fetch(&server.url(), &ann_table, &access, 100)
        .await
        .unwrap();
    assert_eq!(
        replay
            .settings
            .mountain_magic
            .as_ref()
            .and_then(|m| m.day.clone()),
        Some(today.clone()),
        "the server wrote the date"
    );
    // No secret at the end: it would give the day's deal away.
    assert!(
        !replay
            .events
            .iter()
            .any(|e| matches!(e, Event::DiceRevealed { .. }))
    );
    let mut stepper = Stepper::new(replay).unwrap();
    let last = stepper.last();
    stepper.goto(last);
    let view = stepper.view().clone();
    let screen = draw(&addr, &view).join("\n");
    assert!(
        screen.contains(&format!("{today}'s mountain · ")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!(
            "{today}'s mountain · standings: grand-melee standings --day {today}"
        )),
        "{screen}"
    );
    // Its deal cannot be checked before the day is over: verify says when.
    let (status, out, err) = run_once(&addr, ann.path(), &["verify", &ann_table]).await;
    assert!(!status.success(), "{out}");
    let tomorrow = Day(Day::parse(&today).unwrap().0 + 1);
    assert!(
        err.contains(&format!("this is a climb of {today}'s mountain"))
            && err.contains(&format!(
                "the day's secret is revealed when the day is over, at {tomorrow}T00:00:00Z"
            ))
            && !err.contains("NOT VERIFIED"),
        "{err}"
    );

    // Bob joins the league; a league climb seats him under his league name.
    let out = ok(&addr, org.path(), &["league", "create", "Tuesday"]).await;
    let league = out
        .lines()
        .find_map(|l| l.strip_prefix("league_created "))
        .unwrap()
        .to_owned();
    ok(&addr, bob.path(), &["league", "join", "Tuesday", "Bob"]).await;
    let mut args = climb_args("Bob's climb");
    args.extend(["--league", "Tuesday", "--join", "Whoever"]);
    // Ann is no member: refused before anything is made.
    let err = refused(&addr, ann.path(), &args).await;
    assert!(
        err.contains("not a member of league") && err.contains("league join"),
        "{err}"
    );
    let mut p = Player::spawn("Bob", &addr, bob.path(), &args);
    let created = p.expect_prefix("table_created ").await;
    let bob_table = created["table_created ".len()..].trim().to_owned();
    p.expect_prefix("seated ").await;
    p.expect_prefix("you lobby host").await;
    p.send("status").await;
    let head = p.expect_prefix("status table=").await;
    assert!(head.contains("host=0 \"Bob\""), "his league name: {head}");
    p.send("start").await;
    p.expect_all(&["event", "mountain_magic.dealt"]).await;
    p.send("concede").await;
    p.expect_all(&["event", "game_over"]).await;
    let (status, _) = p.finish().await;
    assert!(status.success());

    // Today's standings: both climbs, the day's commitment, no secret yet.
    let out = ok(&addr, org.path(), &["--plain", "standings"]).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(field(lines[0], "day"), Some(today.as_str()), "{out}");
    assert_eq!(field(lines[0], "secret"), Some("-"), "{out}");
    assert_eq!(field(lines[0], "climbs"), Some("2"), "{out}");
    let ann_line = lines
        .iter()
        .find(|l| l.contains("climber=\"Ann\""))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(field(ann_line, "table"), Some(ann_table.as_str()));
    assert!(
        ann_line.ends_with(&format!("ending={ending}")) || ending.contains("failed"),
        "{ann_line} {ending}"
    );
    let bob_line = lines
        .iter()
        .find(|l| l.contains("climber=\"Bob\""))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(field(bob_line, "table"), Some(bob_table.as_str()));
    assert_eq!(field(bob_line, "end"), Some("gave_up"));
    assert_eq!(field(bob_line, "member"), Some("0"));
    // The league's: only Bob.
    let out = ok(
        &addr,
        ann.path(),
        &[
            "--plain",
            "standings",
            "--league",
            "Tuesday",
            "--day",
            &today,
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(field(lines[0], "league"), Some(league.as_str()), "{out}");
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[1].contains("climber=\"Bob\""), "{out}");
}

/// The server's mountain secret in these tests.
fn mountain() -> DiceSecret {
    DiceSecret::from_seed(31)
}

/// A climb of `day`'s mountain dealt by `secret` (the day's, or another), played by the core
/// table: a few placements and discards, then a concession. Its settings and events.
fn core_climb(day: &str, secret: DiceSecret) -> (Settings, Vec<Event>) {
    let settings = Settings {
        seats: 1,
        game: GameKind::MountainMagic,
        mountain_magic: Some(MountainMagicSettings {
            day: Some(day.to_owned()),
            ..MountainMagicSettings::default()
        }),
        ..Settings::default()
    };
    let mut game = MountainMagic::create(&settings, secret).unwrap();
    let mut events = Vec::new();
    let mut play = |game: &mut MountainMagic, actor, command| {
        events.extend(game.handle(actor, command).unwrap());
    };
    play(&mut game, Actor::Host, Command::join("Ann"));
    play(&mut game, Actor::Host, Command::start(None));
    for _ in 0..30 {
        let climb = game.climb();
        let command = match climb.placements().first() {
            Some(&(row, pos)) if climb.card_to_place().is_some() => {
                MountainCommand::Place { row, pos }
            }
            _ if climb.view().flipped.is_some() => MountainCommand::Discard,
            _ => MountainCommand::Flip,
        };
        play(&mut game, Actor::Player(0), Command::MountainMagic(command));
    }
    play(&mut game, Actor::Player(0), Command::Concede);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::DiceRevealed { .. })),
        "a day climb reveals nothing at its end"
    );
    (settings, events)
}

/// The climb as `replay export` writes it: a header with the settings, then the events.
fn export(settings: &Settings, events: &[Event]) -> String {
    let mut text = format!("{}\n", serde_json::json!({ "settings": settings }));
    for (seq, event) in (1u64..).zip(events) {
        text.push_str(&format!(
            "{}\n",
            serde_json::json!({ "seq": seq, "event": event })
        ));
    }
    text
}

/// A server whose mountain secret is [`mountain`]: 2026-11-25 is over (its secret given),
/// 2026-11-26 is today (no secret yet).
async fn secret_server() -> String {
    let addr = fake_server(|request| match request {
        ClientMessage::MountainMagicStandings {
            id, day, league, ..
        } => {
            let parsed = Day::parse(&day).unwrap();
            let secret = parsed.secret(&mountain());
            vec![ServerMessage::MountainMagicStandings {
                reply_to: id,
                day,
                league,
                commitment: secret.commitment(),
                secret: (parsed < Day::parse("2026-11-26").unwrap()).then(|| secret.to_hex()),
                standings: Vec::new(),
                climbers: 0,
                climbs: 0,
                next: None,
            }]
        }
        _ => Vec::new(),
    })
    .await;
    addr.to_string()
}

#[tokio::test]
async fn a_day_climb_verifies_with_the_day_s_secret_once_the_day_is_over() {
    let addr = secret_server().await;
    let data = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = data.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let past = Day::parse("2026-11-25").unwrap();
    let (settings, events) = core_climb("2026-11-25", past.secret(&mountain()));
    let flipped = events
        .iter()
        .filter(|e| e.name() == "mountain_magic.flipped")
        .count();
    assert!(flipped >= 3, "{flipped}");
    let good = export(&settings, &events);

    // The day is over: the deal is the day's dice's.
    let path = file("past.jsonl", &good);
    let (status, out, err) = run_once(&addr, data.path(), &["verify", "--file", &path]).await;
    assert!(status.success(), "{out}{err}");
    assert!(
        out.contains(
            "verified: the climb's commitment is the day's; the secret of 2026-11-25's mountain matches it"
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "verified: the Mountain Magic deal of 2026-11-25's mountain (the default deck the day's dice draw): the bottom row, {flipped} card(s) turned over"
        )),
        "{out}"
    );

    // A card turned over that the day's dice do not give is caught at its event.
    let mut forged_one = false;
    let forged: String = good
        .lines()
        .map(|line| {
            let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
            if record["event"]["kind"] == "mountain_magic.flipped" && !forged_one {
                forged_one = true;
                let card = record["event"]["card"].as_u64().unwrap();
                record["event"]["card"] = serde_json::json!(if card == 0 { 1 } else { card - 1 });
            }
            format!("{record}\n")
        })
        .collect();
    assert!(forged_one);
    let path = file("forged.jsonl", &forged);
    let (status, out, err) = run_once(&addr, data.path(), &["verify", "--file", &path]).await;
    assert!(!status.success(), "{out}");
    assert!(
        err.contains("NOT VERIFIED: event") && err.contains("card 8 of the spell deck"),
        "{err}"
    );

    // A climb dealt by other dice than the day's: its commitment is not the day's.
    let (settings, events) = core_climb("2026-11-25", DiceSecret::from_seed(7));
    let path = file("other.jsonl", &export(&settings, &events));
    let (status, out, err) = run_once(&addr, data.path(), &["verify", "--file", &path]).await;
    assert!(!status.success(), "{out}");
    assert!(
        err.contains("NOT VERIFIED")
            && err.contains("is not the commitment of 2026-11-25's mountain"),
        "{err}"
    );

    // Today's climb: the commitment is the day's, and the secret comes after the day.
    let today = Day::parse("2026-11-26").unwrap();
    let (settings, events) = core_climb("2026-11-26", today.secret(&mountain()));
    let path = file("today.jsonl", &export(&settings, &events));
    let (status, out, err) = run_once(&addr, data.path(), &["verify", "--file", &path]).await;
    assert!(!status.success(), "{out}");
    assert!(!err.contains("NOT VERIFIED"), "{err}");
    assert!(
        err.contains("this is a climb of 2026-11-26's mountain")
            && err
                .contains("revealed when the day is over, at 2026-11-27T00:00:00Z; verify it then"),
        "{err}"
    );
}

/// A server's words are printed harmlessly: a day or a climber's name carrying terminal
/// escapes changes nothing on the screen, and cannot forge a script line's fields.
#[tokio::test]
async fn hostile_standings_are_printed_harmlessly() {
    let addr = fake_server(|request| match request {
        ClientMessage::MountainMagicStandings { id, .. } => {
            vec![ServerMessage::MountainMagicStandings {
                reply_to: id,
                day: "2026-11-26\u{1b}[2J secret=forged".to_owned(),
                league: None,
                commitment: COMMITMENT.to_owned(),
                secret: None,
                standings: vec![DayClimb {
                    climber: "\u{1b}[31mEve\" end=total_victory".to_owned(),
                    ..climbs()[0].clone()
                }],
                climbers: 1,
                climbs: 1,
                next: None,
            }]
        }
        _ => Vec::new(),
    })
    .await
    .to_string();
    let data = tempfile::tempdir().unwrap();
    for args in [&["--plain", "standings"][..], &["standings"][..]] {
        let (status, out, err) = run_once(&addr, data.path(), args).await;
        assert!(status.success(), "{err}");
        assert!(!out.contains('\u{1b}'), "{out:?}");
        if args[0] == "--plain" {
            // Read as the documented format is read: each field once, the values as sent.
            let fields = |line: &str| -> Vec<(String, String)> {
                let (_, rest) = line.split_once(' ').unwrap();
                common::tokens(rest)
                    .unwrap_or_else(|| panic!("malformed: {line:?}"))
                    .into_iter()
                    .filter_map(|t| match t {
                        common::Token::Field(k, v) => Some((k, v)),
                        _ => None,
                    })
                    .collect()
            };
            let lines: Vec<&str> = out.lines().collect();
            let day = fields(lines[0]);
            let get = |fields: &[(String, String)], key: &str| -> Vec<String> {
                fields
                    .iter()
                    .filter(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .collect()
            };
            assert_eq!(get(&day, "secret"), ["-"], "{out}");
            assert_eq!(
                get(&day, "day"),
                ["2026-11-26\u{1b}[2J secret=forged"],
                "{out}"
            );
            assert_eq!(get(&day, "revealed_at"), ["-"], "{out}");
            let climb = fields(lines[1]);
            assert_eq!(get(&climb, "end"), ["total_victory"], "{out}");
            assert_eq!(
                get(&climb, "climber"),
                ["\u{1b}[31mEve\" end=total_victory"],
                "{out}"
            );
        }
    }
}
