//! End to end: a server in this process, and a small table where every seat is a `grand-melee`
//! process in script mode, from `create` and `list` to the end of the game, with refused
//! commands, a crash-and-`join` that takes the seat back, and the client reconnecting by itself.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{CreateTable, PATIENCE, Player, TestServer, create, field, run_once};
use grand_melee_cli::ClientError;
use grand_melee_cli::net::Conn;
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

const NAMES: [&str; 3] = ["Ann", "Ben", "Cid"];

/// The ids in a list field like `seating=2,0,1`.
fn ids(line: &str, key: &str) -> Vec<u16> {
    field(line, key)
        .unwrap_or_else(|| panic!("no {key}= in {line}"))
        .split(',')
        .map(|id| id.parse().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_of_script_mode_clients_plays_a_game_to_the_end() {
    let server = TestServer::start().await;
    let addr = server.addr.to_string();
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();

    // The organiser creates the table; `list` shows it.
    let (status, out, err) = run_once(
        &addr,
        dirs[3].path(),
        &[
            "create",
            "--name",
            "Script night",
            "--seats",
            "3",
            "--spell-range",
            "1",
            "--seed",
            "11",
        ],
    )
    .await;
    assert!(status.success(), "{out}{err}");
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap_or_else(|| panic!("no table_created line in {out}"))
        .trim()
        .to_owned();
    let (status, out, _) = run_once(&addr, dirs[3].path(), &["list"]).await;
    assert!(status.success());
    assert!(
        out.lines().any(
            |l| l.starts_with(&format!("table {table} stage=lobby seated=0/3"))
                && l.ends_with(r#"name="Script night""#)
        ),
        "{out}"
    );

    // Three players sit down: by table name, by the start of its id, and by its id.
    let prefix = &table[..8];
    let how = ["Script night", prefix, table.as_str()];
    let mut players = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let mut p = Player::spawn(name, &addr, dirs[i].path(), &["join", how[i], name]);
        p.expect_all(&[
            "seated",
            &format!("table={table}"),
            &format!("player={i}"),
            "resumed=false",
        ])
        .await;
        p.expect_prefix("snapshot ").await;
        players.push(p);
    }
    players[0].expect_prefix("you lobby host").await;
    players[0]
        .expect_all(&["player_joined", r#"player=2 "Cid""#])
        .await;
    for (i, dir) in dirs.iter().take(3).enumerate() {
        assert!(
            dir.path().join("seats").exists(),
            "player {i}'s token is saved in his data directory"
        );
    }

    // Only the host may start; unknown commands are explained, not sent.
    players[1].send("start").await;
    players[1]
        .expect_prefix("error not_host: only the host may do this (start)")
        .await;
    players[0].send("frobnicate").await;
    players[0]
        .expect_prefix("error usage: unknown command")
        .await;
    players[0].send("start").await;
    let started = players[0].expect_all(&["event", "game_started"]).await;
    let first = ids(&started, "first")[0];
    let seating = ids(&started, "seating");
    assert_eq!(seating.len(), 3, "{started}");
    for p in &mut players[1..] {
        p.expect_all(&["event", "game_started"]).await;
    }

    // Mulligans in seating order from the first player; deciding out of turn is refused.
    let at = seating.iter().position(|&p| p == first).unwrap();
    let order: Vec<usize> = (0..3).map(|k| usize::from(seating[(at + k) % 3])).collect();
    players[order[1]].send("keep").await;
    players[order[1]]
        .expect_prefix(
            "error not_your_decision: it is another player's turn to decide on a mulligan (keep)",
        )
        .await;
    players[order[0]]
        .expect_prefix("you mulligan_decide hand=7")
        .await;
    players[order[0]].send("mulligan").await;
    players[order[0]]
        .expect_all(&["mulliganed", &format!("player={}", order[0]), "hand=6"])
        .await;
    for &p in &order {
        players[p].send("keep").await;
        players[p]
            .expect_all(&["event", "kept", &format!("player={p} ")])
            .await;
    }

    // Play: the first player's turn begins; everyone sees it.
    let holder = usize::from(first);
    let others: Vec<usize> = (0..3).filter(|&p| p != holder).collect();
    for p in &mut players {
        p.expect_all(&["turn_began", "turn=0", &format!("player={holder} ")])
            .await;
    }
    players[holder]
        .expect_prefix("you your_turn phase=beginning")
        .await;
    players[others[0]]
        .expect_prefix(&format!("you in_sphere \"{}\"", NAMES[holder]))
        .await;

    // Refusals come back in plain words.
    players[others[0]].send("end").await;
    players[others[0]]
        .expect_prefix("error not_your_turn: you are not taking a turn (end)")
        .await;
    let victim = others[1];
    players[holder]
        .send(&format!("attack {} 3", NAMES[victim]))
        .await;
    players[holder]
        .expect_prefix("error not_combat_phase: attacks are only possible in the combat phase")
        .await;

    // Combat, an attack, direct damage and a life change, seen by everyone.
    players[holder].send("phase combat").await;
    players[holder]
        .send(&format!("attack {} 3", NAMES[victim].to_lowercase()))
        .await;
    players[holder]
        .send(&format!("damage {} 2", NAMES[victim]))
        .await;
    for p in &mut players {
        p.expect_all(&[
            "phase_changed",
            "phase=combat",
            &format!("player={holder} "),
        ])
        .await;
        p.expect_all(&[
            "attacked",
            &format!("attacker={holder} "),
            &format!("defender={victim} "),
            "damage=3",
        ])
        .await;
        p.expect_all(&["damage_dealt", &format!("target={victim} "), "amount=2"])
            .await;
    }
    players[victim].send("life +1").await;
    players[victim]
        .expect_all(&["life_changed", &format!("player={victim} "), "life=16"])
        .await;
    players[victim].send("status").await;
    players[victim]
        .expect_all(&[
            &format!("player={victim} \"{}\"", NAMES[victim]),
            "life=16",
            "status=alive",
        ])
        .await;
    players[victim].send("say good game").await;
    for p in &mut players {
        p.expect_all(&[
            "chat",
            &format!("from={victim} \"{}\"", NAMES[victim]),
            "text=\"good game\"",
        ])
        .await;
    }

    // The victim's client goes away; running `join` again puts him back in his seat.
    let crashed = players.remove(victim);
    let (status, _) = crashed.finish().await;
    assert!(status.success());
    for p in &mut players {
        p.expect_all(&[
            "connection_changed",
            &format!("player={victim} "),
            "connected=false",
        ])
        .await;
    }
    let mut back = Player::spawn(
        NAMES[victim],
        &addr,
        dirs[victim].path(),
        &["join", &table, NAMES[victim]],
    );
    back.expect_all(&["seated", &format!("player={victim}"), "resumed=true"])
        .await;
    back.expect_prefix("snapshot ").await;
    players.insert(victim, back);
    for p in others.iter().filter(|&&p| p != victim) {
        players[*p]
            .expect_all(&[
                "connection_changed",
                &format!("player={victim} "),
                "connected=true",
            ])
            .await;
    }
    let (status, _, err) = run_once(&addr, dirs[3].path(), &["resume", &table]).await;
    assert!(!status.success());
    assert!(err.contains("no seat saved"), "{err}");

    // The turn passes to the left.
    players[holder].send("end").await;
    let next = usize::from(
        seating[(seating
            .iter()
            .position(|&p| usize::from(p) == holder)
            .unwrap()
            + 1)
            % 3],
    );
    for p in &mut players {
        p.expect_all(&[
            "turn_ended",
            &format!("player={holder} "),
            "reason=finished",
        ])
        .await;
        p.expect_all(&["turn_passed", &format!("to={next} ")]).await;
        p.expect_all(&["turn_began", &format!("player={next} ")])
            .await;
    }

    // Two players concede; the last one wins.
    let survivor = (0..3).find(|&p| p != victim && p != holder).unwrap();
    players[victim].send("concede").await;
    for p in &mut players {
        p.expect_all(&[
            "eliminated",
            &format!("players={victim} "),
            "cause=conceded",
        ])
        .await;
    }
    players[victim].send("end").await;
    players[victim]
        .expect_prefix("error eliminated: you have been eliminated (end)")
        .await;
    players[holder].send("concede").await;
    for p in &mut players {
        p.expect_all(&["game_over", &format!("winner={survivor} ")])
            .await;
    }
    players[survivor]
        .expect_prefix("you game_over place=1")
        .await;

    for p in players {
        let label = p.label.clone();
        let (status, lines) = p.finish().await;
        assert!(status.success(), "{label}: {lines:?}");
        assert!(
            !lines.iter().any(|l| l.starts_with("stderr:")),
            "{label} wrote to stderr: {lines:?}"
        );
    }
    server.shutdown().await;
}

/// A TCP proxy whose connections the test can cut.
struct Proxy {
    addr: std::net::SocketAddr,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    async fn start(upstream: std::net::SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let list = Arc::clone(&connections);
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let task = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                list.lock().unwrap().push(task.abort_handle());
            }
        });
        Self { addr, connections }
    }

    /// Drops every connection open now (both sockets close).
    fn cut(&self) -> usize {
        let mut list = self.connections.lock().unwrap();
        let n = list.len();
        for task in list.drain(..) {
            task.abort();
        }
        n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_resumed_by_itself() {
    let server = TestServer::start().await;
    let proxy = Proxy::start(server.addr).await;
    let dir = tempfile::tempdir().unwrap();

    let mut host = Conn::open(&server.url()).await.unwrap();
    let table = create(&mut host, CreateTable::new("Flaky wifi", 4).seed(5)).await;
    let joined = host
        .call(ClientMessage::Join {
            id: 0,
            table,
            name: "Hana".into(),
            password: None,
            entropy: None,
            member_token: None,
        })
        .await
        .unwrap();
    assert!(matches!(joined, ServerMessage::Seated { player: 0, .. }));

    let table = table.to_string();
    let mut ann = Player::spawn(
        "Ann",
        &proxy.addr.to_string(),
        dir.path(),
        &["join", &table, "Ann"],
    );
    ann.expect_all(&["seated", "player=1", "resumed=false"])
        .await;
    ann.expect_prefix("snapshot ").await;

    // The network drops: the client notices, waits a moment and takes its seat back.
    assert!(proxy.cut() >= 1);
    ann.expect_prefix("disconnected").await;
    ann.expect_prefix("reconnecting in=").await;
    ann.expect_prefix("connected ").await;
    ann.expect_all(&["seated", "player=1", "resumed=true"])
        .await;
    ann.expect_prefix("snapshot ").await;
    ann.send("say still here").await;
    ann.expect_all(&["event", "chat", r#"from=1 "Ann""#, r#"text="still here""#])
        .await;

    // `leave` gives the seat up and forgets the token.
    ann.send("leave").await;
    ann.expect_prefix("left").await;
    let (status, lines) = tokio::time::timeout(PATIENCE, ann.finish()).await.unwrap();
    assert!(status.success(), "{lines:?}");
    let saved = std::fs::read_dir(dir.path().join("seats"))
        .unwrap()
        .flat_map(|server| std::fs::read_dir(server.unwrap().path()).unwrap())
        .count();
    assert_eq!(saved, 0, "the token is forgotten after leave");
    host.close().await;
    server.shutdown().await;
}

/// Creates a table over the library's connection (default settings but these).
async fn create_table(conn: &mut Conn, name: &str, seats: u8) -> grand_melee_protocol::TableId {
    let settings = CreateTable::new(name, seats)
        .spell_range(1)
        .seed(3)
        .mulligan_clock_secs(0);
    create(conn, settings).await
}

/// Names and chat lines made to forge fields and lines, or to act on a terminal. The server
/// refuses the ones with control and format characters (`bad_text`); the others go through and
/// must come out quoted.
const HOSTILE_NAMES: [&str; 5] = [
    "Eve) player=0 (Ann",
    "Eve\" player=0 \"Ann",
    "Bob \\u{1b}]0;x \\",
    "Mal\u{1b}]0;owned\u{7}",
    "Kim\u{2028}event 99 game_over",
];
const HOSTILE_CHAT: [&str; 10] = [
    "x\" text=\"forged",
    "event 99 game_over winner=0",
    "\"quoted\" \\\"escaped\\\" \\u{1b}[2J \\",
    "from=0 \"Ann\" text=\"hi\"",
    "\u{1b}]52;c;ZXZpbA==\u{7}",
    "line\u{2028}event 99 forged",
    "nel\u{85}event 99 forged",
    "vt\u{b}ff\u{c}bs\u{8}nul\u{0}",
    "bidi\u{202e}txet\u{200b}",
    "c1\u{9b}2J\r\nevent 99 forged",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_and_chat_cannot_forge_lines_or_fields_or_reach_the_terminal() {
    use common::{Token, check_script_output, keys, tokens};
    let server = TestServer::start().await;
    let url = server.url();
    let addr = server.addr.to_string();
    let table_name = "Night\" name=x \\ (Eve) player=0";
    let mut host = Conn::open(&url).await.unwrap();
    let table = create_table(&mut host, table_name, 8).await;
    host.call(ClientMessage::Join {
        id: 0,
        table,
        name: "Hana".into(),
        password: None,
        entropy: None,
        member_token: None,
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut ann = Player::spawn(
        "Ann",
        &addr,
        dir.path(),
        &["join", &table.to_string(), "Ann"],
    );
    ann.expect_all(&["seated", "player=1"]).await;
    ann.expect_prefix("snapshot ").await;

    // The hostile players sit down (those the server lets in) and talk.
    let mut names = vec![(0, "Hana".to_owned()), (1, "Ann".to_owned())];
    let mut said = Vec::new();
    let mut hostile = Vec::new();
    for name in HOSTILE_NAMES {
        let mut conn = Conn::open(&url).await.unwrap();
        match conn
            .call(ClientMessage::Join {
                id: 0,
                table,
                name: name.into(),
                password: None,
                entropy: None,
                member_token: None,
            })
            .await
        {
            Ok(ServerMessage::Seated { player, .. }) => {
                names.push((player, name.to_owned()));
                hostile.push((player, conn));
            }
            Ok(other) => panic!("{other:?}"),
            Err(ClientError::Rejected { code, .. }) => {
                assert_eq!(code, ErrorCode::BadText, "{name:?}");
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert!(
        hostile.len() >= 3,
        "the names without control characters sit down"
    );
    for (i, text) in HOSTILE_CHAT.iter().enumerate() {
        let (player, conn) = &mut hostile[i % 3];
        match conn
            .call(ClientMessage::Chat {
                id: 0,
                text: (*text).into(),
            })
            .await
        {
            Ok(_) => said.push((*player, (*text).to_owned())),
            Err(ClientError::Rejected { code, .. }) => {
                assert_eq!(code, ErrorCode::BadText, "{text:?}");
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert!(
        said.len() >= 4,
        "the lines without control characters are said"
    );

    // Ann answers, names a player ambiguously, and looks at the table; her own chat comes
    // back after everything the others said.
    ann.send("attack eve 3").await;
    ann.expect_prefix("error usage: `eve` could be").await;
    ann.send("say done \"really\" \\").await;
    ann.expect_all(&["event", "chat", "from=1 \"Ann\""]).await;
    said.push((1, "done \"really\" \\".to_owned()));
    ann.send("status").await;
    ann.expect_prefix("you lobby").await;
    let bytes_so_far = ann.stdout_bytes();
    let (status, _) = ann.finish().await;
    assert!(status.success());

    let lines = check_script_output(&bytes_so_far);
    let name_of = |id: &str| -> &str {
        let id: u16 = id.parse().unwrap();
        &names.iter().find(|(p, _)| *p == id).unwrap().1
    };
    let mut chats = Vec::new();
    for line in &lines {
        let rest = line.splitn(4, ' ').nth(3).unwrap_or_default();
        let fields = || tokens(rest).unwrap_or_else(|| panic!("malformed: {line}"));
        if line.starts_with("event ") && line.split(' ').nth(2) == Some("chat") {
            let fields = fields();
            let [
                Token::Field(from, id),
                Token::Quoted(name),
                Token::Field(text, value),
            ] = &fields[..]
            else {
                panic!("a forged chat line: {line}");
            };
            assert_eq!((from.as_str(), text.as_str()), ("from", "text"), "{line}");
            assert_eq!(name, &[name_of(id).to_owned()], "{line}");
            chats.push((id.parse::<u16>().unwrap(), value.clone()));
        } else if line.starts_with("event ") && line.split(' ').nth(2) == Some("player_joined") {
            let fields = fields();
            let [Token::Field(key, id), Token::Quoted(name)] = &fields[..] else {
                panic!("a forged player_joined line: {line}");
            };
            assert_eq!(key, "player");
            assert_eq!(name, &[name_of(id).to_owned()], "{line}");
        } else if line.starts_with("seat ") {
            let fields = tokens(line.strip_prefix("seat - ").unwrap()).unwrap();
            assert_eq!(
                keys(&fields),
                [
                    "player",
                    "life",
                    "poison",
                    "status",
                    "connected",
                    "muted",
                    "hand",
                    "turn"
                ],
                "{line}"
            );
            let (Token::Field(_, id), Token::Quoted(name)) = (&fields[0], &fields[1]) else {
                panic!("{line}");
            };
            assert_eq!(name, &[name_of(id).to_owned()], "{line}");
        } else if line.starts_with("status ") {
            let fields = tokens(line.strip_prefix("status ").unwrap()).unwrap();
            assert_eq!(
                fields.last(),
                Some(&Token::Field("name".into(), table_name.into())),
                "{line}"
            );
        }
    }
    assert_eq!(chats, said, "every chat line once, exactly as said");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("seat ")).count(),
        names.len()
    );
    // The text `event 99 game_over …` stays inside its chat line.
    assert!(
        lines
            .iter()
            .all(|l| { l.split(' ').nth(2) != Some("game_over") && !l.starts_with("event 99 ") })
    );

    // `list` quotes the table's name the same way.
    let (status, out, _) = run_once(&addr, dir.path(), &["list"]).await;
    assert!(status.success());
    let line = check_script_output(out.as_bytes()).remove(0);
    let fields = tokens(line.strip_prefix("table ").unwrap()).unwrap();
    assert_eq!(
        fields.last(),
        Some(&Token::Field("name".into(), table_name.into())),
        "{line}"
    );
    server.shutdown().await;
}

/// What a server that let everything through could send: the real one refuses control and
/// format characters, so a fake one sends them (a table name, player names and chat lines with
/// terminal escapes, clipboard writes, line separators, C1 controls, bidi overrides), and the
/// events that are new in this protocol.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_from_a_server_that_lets_it_through_is_escaped() {
    use grand_melee_protocol::{Event, SeatToken, Settings, TableId, TableView};
    const RAW: [&str; 8] = [
        "\u{1b}]0;owned\u{7}",
        "\u{1b}]52;c;ZXZpbA==\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "ls\u{2028}event 99 forged",
        "nel\u{85}event 99 forged\u{b}\u{c}",
        "c1\u{9b}2J\r\nevent 99 forged",
        "bidi\u{202e}txet\u{200b}\u{feff}",
        "nul\u{0}bs\u{8}del\u{7f}",
    ];
    let table = TableId::new_random();
    let mut view = TableView::new(table, RAW[0], Settings::default());
    let mut joined = vec![Event::PlayerJoined {
        player: 0,
        name: "Ann".into(),
        entropy: String::new(),
        deck: None,
    }];
    for (player, name) in (1..).zip(RAW) {
        joined.push(Event::PlayerJoined {
            player,
            name: name.into(),
            entropy: String::new(),
            deck: None,
        });
    }
    let mut mirror = grand_melee_protocol::Mirror::new(&view).unwrap();
    mirror.apply_batch(1, &joined).unwrap();
    view = mirror.view();
    let first = view.seq + 1;
    let mut events: Vec<Event> = (1..)
        .zip(RAW)
        .map(|(player, text)| Event::Chat {
            from: Some(player),
            name: RAW[usize::from(player) % RAW.len()].into(),
            text: text.into(),
        })
        .collect();
    events.extend([
        Event::PlayerMuted {
            player: Some(2),
            muted: true,
        },
        Event::PlayerMuted {
            player: None,
            muted: true,
        },
        Event::PlayerKicked {
            player: 3,
            banned: true,
        },
        Event::PlayerJoined {
            player: 9,
            name: RAW[1].into(),
            entropy: String::new(),
            deck: None,
        },
    ]);
    let last = first + events.len() as u64 - 1;
    let addr = common::fake_server(move |request| match request {
        ClientMessage::Join { id, .. } => vec![
            ServerMessage::Seated {
                reply_to: id,
                table,
                player: 0,
                token: SeatToken::new_random(),
            },
            ServerMessage::Snapshot {
                reply_to: None,
                view: view.clone(),
            },
            ServerMessage::Events {
                table,
                seq: first,
                events: events.clone(),
            },
        ],
        ClientMessage::Snapshot { id } => vec![ServerMessage::Snapshot {
            reply_to: Some(id),
            view: view.clone(),
        }],
        _ => Vec::new(),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut ann = Player::spawn(
        "Ann",
        &addr.to_string(),
        dir.path(),
        &["join", &table.to_string(), "Ann"],
    );
    ann.expect_prefix(&format!("event {last} ")).await;
    ann.send("status").await;
    ann.expect_prefix("you lobby").await;
    let bytes = ann.stdout_bytes();
    let (status, history) = ann.finish().await;
    assert!(status.success(), "{history:?}");
    let lines = common::check_script_output(&bytes);
    assert!(!lines.iter().any(|l| l.contains("resync")), "{lines:#?}");
    let text = lines.join("\n");
    // What was sent is still there to read, escaped.
    for visible in [
        r#"event 11 chat from=2 "\u{1b}[2J\u{1b}[H" text="\u{1b}]52;c;ZXZpbA==\u{7}""#,
        r#"text="c1\u{9b}2J\u{d}\u{a}event 99 forged""#,
        r#"event 18 player_muted player=2 "\u{1b}]52;c;ZXZpbA==\u{7}" muted=true"#,
        "event 19 player_muted player=spectators muted=true",
        r#"event 20 player_kicked player=3 "\u{1b}[2J\u{1b}[H" banned=true"#,
        r#"name="\u{1b}]0;owned\u{7}""#,
        r#"player=7 "bidi\u{202e}txet\u{200b}\u{feff}" life=20"#,
    ] {
        assert!(text.contains(visible), "no {visible} in\n{text}");
    }
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("event ")).count(),
        RAW.len() + 4
    );
}

/// The host's new powers from script mode, against a real server: a table created with a
/// spectator cap of one, `mute` (the muted player's chat is refused with `muted`, `status`
/// shows it), `mute spectators`, `unmute`, `kick … ban` (the banned address cannot sit down
/// again under a new name), and `rule keep` for the mulligan decider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_mutes_kicks_with_a_ban_and_rules_keep() {
    let server = TestServer::start().await;
    let addr = server.addr.to_string();
    let dirs: Vec<tempfile::TempDir> = (0..5).map(|_| tempfile::tempdir().unwrap()).collect();
    let (status, out, err) = run_once(
        &addr,
        dirs[4].path(),
        &[
            "create",
            "--name",
            "Host powers",
            "--seats",
            "3",
            "--seed",
            "4",
            "--mulligan-clock",
            "0",
            "--max-spectators",
            "1",
        ],
    )
    .await;
    assert!(status.success(), "{out}{err}");
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap()
        .to_owned();
    let mut players = Vec::new();
    for (i, name) in ["Hana", "Ann", "Ben"].iter().enumerate() {
        let mut p = Player::spawn(name, &addr, dirs[i].path(), &["join", &table, name]);
        p.expect_all(&["seated", &format!("player={i} ")]).await;
        p.expect_prefix("snapshot ").await;
        players.push(p);
    }
    let [host, ann, ben] = &mut players[..] else {
        unreachable!()
    };

    // One spectator fits; the second is refused.
    let mut watcher = Player::spawn("watcher", &addr, dirs[3].path(), &["watch", &table]);
    watcher.expect_prefix("watching ").await;
    watcher.expect_prefix("snapshot ").await;
    let (status, _, err) = run_once(&addr, dirs[4].path(), &["watch", &table]).await;
    assert!(!status.success());
    assert!(err.contains("spectators_full"), "{err}");

    // Mute: Ann's chat is refused, and everyone sees it.
    host.send("mute ann").await;
    for p in [&mut *host, &mut *ann, &mut *ben] {
        p.expect_all(&["event ", "player_muted", r#"player=1 "Ann" muted=true"#])
            .await;
    }
    host.expect_prefix("ok mute ").await;
    ann.send("say can you hear me").await;
    ann.expect_prefix("error muted: the host has muted you at this table (say can you hear me)")
        .await;
    host.send("status").await;
    host.expect_all(&["seat ", r#"player=1 "Ann""#, " muted=true "])
        .await;
    host.expect_all(&["seat ", r#"player=2 "Ben""#, " muted=false "])
        .await;

    // The spectators as a whole.
    host.send("mute spectators").await;
    watcher
        .expect_all(&["player_muted", "player=spectators muted=true"])
        .await;
    watcher.send("say hello").await;
    watcher.expect_prefix("error muted: ").await;
    // `status` shows the host's own copy of the table: once his mute is answered.
    host.expect_prefix("ok mute ").await;
    host.send("status").await;
    host.expect_all(&["status ", " spectators_muted=true "])
        .await;

    // Unmuted, Ann talks again.
    host.send("unmute Ann").await;
    ann.expect_all(&["player_muted", r#"player=1 "Ann" muted=false"#])
        .await;
    ann.send("say thanks").await;
    host.expect_all(&["chat", r#"from=1 "Ann" text="thanks""#])
        .await;

    // Kick with a ban: Ben's address may not sit down again, under any name.
    host.send("kick ben ban").await;
    for p in [&mut *host, &mut *ann] {
        p.expect_all(&["player_kicked", r#"player=2 "Ben" banned=true"#])
            .await;
    }
    let (status, _, err) = run_once(&addr, dirs[4].path(), &["join", &table, "Bert"]).await;
    assert!(!status.success());
    assert!(err.contains("(banned)"), "{err}");

    // The host keeps for the mulligan decider; the other decides himself.
    host.send("start").await;
    let started = host.expect_all(&["event", "game_started"]).await;
    let first = ids(&started, "first")[0];
    let (decider, other) = if first == 0 { (0, 1) } else { (1, 0) };
    let name = ["Hana", "Ann"][decider];
    host.send(&format!("rule keep {name}")).await;
    for p in [&mut *host, &mut *ann] {
        p.expect_all(&[
            "kept",
            &format!("player={decider} \"{name}\""),
            "hand=7 reason=ruling",
        ])
        .await;
    }
    [&mut *host, &mut *ann][other].send("keep").await;
    host.expect_all(&["kept", &format!("player={other} "), "reason=decided"])
        .await;
    host.expect_prefix("you ").await;
    drop(players);
    drop(watcher);
    server.shutdown().await;
}

/// A mulligan clock set with `create --mulligan-clock`: a decider who says nothing keeps when
/// it runs out, and script mode says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_decider_keeps_when_the_mulligan_clock_runs_out() {
    let server = TestServer::start().await;
    let addr = server.addr.to_string();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let (status, out, err) = run_once(
        &addr,
        dirs[2].path(),
        &[
            "create",
            "--name",
            "Quick hands",
            "--seats",
            "2",
            "--mulligan-clock",
            "1",
            "--join",
            "Hana",
        ],
    )
    .await;
    assert!(status.success(), "{out}{err}");
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap()
        .to_owned();
    let mut ann = Player::spawn("Ann", &addr, dirs[1].path(), &["join", &table, "Ann"]);
    ann.expect_prefix("snapshot ").await;
    let mut host = Player::spawn("Hana", &addr, dirs[2].path(), &["resume", &table]);
    host.expect_all(&["seated", "player=0 ", "resumed=true"])
        .await;
    host.send("start").await;
    host.expect_all(&["event", "game_started"]).await;
    // Nobody decides: each decision is taken as keep when the clock runs out.
    for _ in 0..2 {
        ann.expect_all(&["event", "kept", "hand=7 reason=clock"])
            .await;
    }
    ann.expect_prefix("event ").await;
    drop((ann, host));
    server.shutdown().await;
}

/// Issue 34 (adjourning) from the terminal client: `adjourn` is refused in the lobby, adjourns
/// a game in progress (game commands then wait, `list` and `status` say adjourned), another
/// player's `resume-game` is an ask counted once, and the host's `resume-game` resumes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_adjourns_and_resumes_and_the_others_ask() {
    let server = TestServer::start().await;
    let addr = server.addr.to_string();
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let (status, out, err) = run_once(
        &addr,
        dirs[3].path(),
        &["create", "--name", "Night", "--seats", "3", "--seed", "5"],
    )
    .await;
    assert!(status.success(), "{out}{err}");
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap()
        .to_owned();
    let mut players = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let mut p = Player::spawn(name, &addr, dirs[i].path(), &["join", &table, name]);
        p.expect_all(&["seated", &format!("player={i} ")]).await;
        p.expect_prefix("snapshot ").await;
        players.push(p);
    }
    let [ann, ben, cid] = &mut players[..] else {
        unreachable!()
    };
    ann.send("adjourn").await;
    ann.expect_prefix("error not_playing: ").await;
    ann.send("start").await;
    let started = ann.expect_all(&["event", "game_started"]).await;
    // Everyone keeps, in seating order from the first player.
    let mut order = ids(&started, "seating");
    let first = ids(&started, "first")[0];
    let at = order.iter().position(|&p| p == first).unwrap();
    order.rotate_left(at);
    for player in order {
        let p = match player {
            0 => &mut *ann,
            1 => &mut *ben,
            _ => &mut *cid,
        };
        p.send("keep").await;
        p.expect_all(&["kept", &format!("player={player} ")]).await;
    }
    ann.expect_all(&["event", "turn_began"]).await;

    ann.send("adjourn").await;
    for p in [&mut *ann, &mut *ben, &mut *cid] {
        p.expect_all(&["event ", "table_adjourned", "adjourned=true"])
            .await;
    }
    ann.expect_prefix("ok adjourn ").await;
    ben.send("life -1").await;
    ben.expect_prefix("error table_adjourned: ").await;
    let (status, out, err) = run_once(&addr, dirs[3].path(), &["list"]).await;
    assert!(status.success(), "{err}");
    assert!(out.contains(" adjourned=yes "), "{out}");
    ann.send("status").await;
    ann.expect_all(&["status ", " adjourned=true "]).await;

    // Ben asks (1 of 2), once.
    ben.send("resume-game").await;
    for p in [&mut *ann, &mut *ben] {
        p.expect_all(&["resume_requested", r#"player=1 "Ben""#])
            .await;
    }
    ben.expect_prefix("ok resume_game ").await;
    ben.send("resume-game").await;
    ben.expect_prefix("error already_asked: ").await;

    // The host resumes.
    ann.send("resume-game").await;
    for p in [&mut *ann, &mut *ben, &mut *cid] {
        p.expect_all(&["event ", "table_adjourned", "adjourned=false"])
            .await;
    }
    let (status, out, err) = run_once(&addr, dirs[3].path(), &["list"]).await;
    assert!(status.success(), "{err}");
    assert!(out.contains(" adjourned=no "), "{out}");
    drop(players);
    server.shutdown().await;
}
