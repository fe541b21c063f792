//! End to end: a server in this process, and a small table where every seat is a `grand-melee`
//! process in script mode, from `create` and `list` to the end of the game, with refused
//! commands, a crash-and-`join` that takes the seat back, and the client reconnecting by itself.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{PATIENCE, Player, TestServer, field, run_once};
use grand_melee_cli::net::Conn;
use grand_melee_protocol::{ClientMessage, Reduction, ServerMessage};
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
    let created = host
        .call(ClientMessage::CreateTable {
            id: 0,
            name: "Flaky wifi".into(),
            seats: 4,
            spell_range: 2,
            reduction: Reduction::Eager,
            starting_life: 20,
            password: None,
            seed: Some(5),
            turn_clock_secs: 0,
            absence_limit_secs: 600,
            mulligan_clock_secs: 60,
            max_spectators: 100,
        })
        .await
        .unwrap();
    let ServerMessage::TableCreated { table, .. } = created else {
        panic!("{created:?}");
    };
    let joined = host
        .call(ClientMessage::Join {
            id: 0,
            table,
            name: "Hana".into(),
            password: None,
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
