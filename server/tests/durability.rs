//! Durability: the real server process killed (SIGKILL) or stopped (SIGTERM) in the middle of a
//! 28-seat game, restarted on the same data directory; the bots resume and finish the game.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use grand_melee_e2e::{
    Client, PATIENCE, Received, ServerProcess, flip_a_leaf_page_holding, started_game_at,
};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, PlayerStatus, SeatToken, ServerMessage, StageName,
    TableId, TableView, TurnStateName, close,
};
use grand_melee_server::journal::{Durability, Journal};
use grand_melee_server::{Server, ServerConfig};

const BINARY: &str = env!("CARGO_BIN_EXE_grand-melee-server");
const SEATS: u8 = 28;

async fn start(data: &Path) -> ServerProcess {
    let args: [&OsStr; 4] = [
        "--data-dir".as_ref(),
        data.as_os_str(),
        "--durability".as_ref(),
        "full".as_ref(),
    ];
    ServerProcess::spawn(BINARY, &args).await
}

/// A small deterministic generator for the bots' choices.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % sides as u64) as usize
    }
}

/// 28 bots at one table, and everything any of them has ever received.
struct Bots {
    table: TableId,
    clients: Vec<Client>,
    tokens: Vec<SeatToken>,
    /// Every event any bot received, by number, across every server process.
    seen: BTreeMap<u64, wire::Event>,
    dice: Dice,
}

impl Bots {
    /// The freshest view: the one of the bot that has seen the most.
    fn view(&self) -> TableView {
        self.clients
            .iter()
            .filter_map(|c| c.view.clone())
            .max_by_key(|v| v.seq)
            .unwrap()
    }

    /// Records the events every bot received so far.
    fn record(&mut self) {
        for client in &mut self.clients {
            for (first, bytes) in client.event_frames.drain(..) {
                let ServerMessage::Events { events, .. } = wire::decode_server(&bytes).unwrap()
                else {
                    panic!("events");
                };
                for (k, event) in events.into_iter().enumerate() {
                    let seq = first + k as u64;
                    if let Some(before) = self.seen.insert(seq, event.clone()) {
                        assert_eq!(before, event, "event {seq} differs between bots");
                    }
                }
            }
        }
    }

    /// One legal move by a player taking his turn (or a concession); waits for its answer.
    async fn step(&mut self) {
        let view = self.view();
        let running: Vec<u16> = view
            .turns
            .iter()
            .filter(|t| t.state == TurnStateName::Running)
            .map(|t| t.player)
            .collect();
        let player = running[self.dice.roll(running.len())];
        let me = view.player(player).unwrap().clone();
        let roll = self.dice.roll(10);
        let (actor, request): (u16, Box<dyn FnOnce(u32) -> ClientMessage>) = match roll {
            0..=2 => {
                let target = me.may_target[self.dice.roll(me.may_target.len())];
                let amount = 3 + self.dice.roll(8) as u32;
                (
                    player,
                    Box::new(move |id| ClientMessage::DealDamage { id, target, amount }),
                )
            }
            3 => {
                let living: Vec<u16> = view
                    .players
                    .iter()
                    .filter(|p| p.status == PlayerStatus::Alive)
                    .map(|p| p.player)
                    .collect();
                let quitter = living[self.dice.roll(living.len())];
                (quitter, Box::new(|id| ClientMessage::Concede { id }))
            }
            _ => (player, Box::new(|id| ClientMessage::EndTurn { id })),
        };
        let client = &mut self.clients[usize::from(actor)];
        let answer = client.call(request).await;
        assert!(
            matches!(answer, Ok(ServerMessage::Ack { .. })),
            "{answer:?}"
        );
    }

    /// Plays `steps` moves, or until the game is over.
    async fn play(&mut self, steps: usize) {
        for _ in 0..steps {
            if self.view().stage != StageName::Playing {
                break;
            }
            self.step().await;
        }
    }

    /// Reads every bot's socket to its end (the server is gone) and records what arrived.
    async fn drain_until_closed(&mut self) -> Vec<Option<u16>> {
        let mut codes = Vec::new();
        for client in &mut self.clients {
            codes.push(client.closed_with().await);
        }
        self.record();
        codes
    }

    /// Every bot reconnects to the new server and resumes its seat with its token.
    async fn resume_all(&mut self, server: &ServerProcess) {
        let mut clients = Vec::with_capacity(self.clients.len());
        for (player, token) in self.tokens.iter().enumerate() {
            let mut client = Client::connected(server.addr).await;
            assert_eq!(
                client.resume(self.table, *token).await,
                Ok(player as u16),
                "player {player} resumes"
            );
            clients.push(client);
        }
        self.clients = clients;
    }
}

/// The table as the bots last saw it and as the recovered server shows it, with connection
/// status left out (everyone was disconnected by the restart and is resuming now).
fn comparable(view: &TableView) -> TableView {
    let mut view = view.clone();
    for player in &mut view.players {
        player.connected = false;
    }
    view.seq = 0;
    view
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_28_bot_game_survives_kills_and_a_restart_and_every_seen_event_is_kept() {
    let data = tempfile::tempdir().unwrap();
    let mut server = start(data.path()).await;
    let (table, clients) = started_game_at(server.addr, SEATS, 2027).await;
    let tokens = clients.iter().map(|c| c.seat.unwrap().1).collect();
    let mut bots = Bots {
        table,
        clients,
        tokens,
        seen: BTreeMap::new(),
        dice: Dice(0x2027),
    };
    bots.record();

    // Kill points: three SIGKILLs and one graceful SIGTERM, after different stretches of play.
    for (round, (steps, signal)) in [(7, "KILL"), (40, "KILL"), (23, "TERM"), (61, "KILL")]
        .into_iter()
        .enumerate()
    {
        bots.play(steps).await;
        // Every bot has the last acknowledged move before the process goes.
        let last = bots.view().seq;
        for client in &mut bots.clients {
            client.catch_up(last).await;
        }
        let before = bots.view();
        server.signal(signal);
        let codes = bots.drain_until_closed().await;
        if signal == "TERM" {
            assert!(
                codes.iter().all(|c| *c == Some(close::GOING_AWAY)),
                "{codes:?}"
            );
        }
        let status = server.wait().await;
        assert_eq!(
            status.success(),
            signal == "TERM",
            "round {round}: {status:?}"
        );

        server = start(data.path()).await;
        bots.resume_all(&server).await;
        let after = bots.view();
        assert!(
            after.seq >= before.seq,
            "round {round}: nothing seen was lost"
        );
        assert_eq!(
            comparable(&after),
            comparable(&before),
            "round {round}: the recovered table is the one the bots last saw"
        );
        bots.record();
        if after.stage != StageName::Playing {
            break;
        }
    }

    // The bots finish the game on the last server.
    bots.play(5_000).await;
    let view = bots.view();
    assert_eq!(view.stage, StageName::Finished);
    for client in &mut bots.clients {
        client.catch_up(view.seq).await;
    }
    bots.record();

    // The finished game is kept as a replay, and replaying it from scratch gives the same
    // standings.
    let client = &mut bots.clients[0];
    let listed = client
        .call(|id| ClientMessage::ListReplays {
            id,
            from: 0,
            limit: 100,
        })
        .await;
    let Ok(ServerMessage::Replays { replays, .. }) = listed else {
        panic!("{listed:?}");
    };
    assert!(replays.iter().any(|r| r.table == table));
    let fetched = client
        .call(|id| ClientMessage::GetReplay {
            id,
            table,
            from_seq: 1,
            password: None,
            token: None,
        })
        .await;
    let Ok(ServerMessage::Replay {
        name,
        settings,
        events,
        ..
    }) = fetched
    else {
        panic!("{fetched:?}");
    };
    let mut rebuilt = wire::Mirror::new(&TableView::new(table, name, settings)).unwrap();
    rebuilt.apply_batch(1, &events).unwrap();
    let rebuilt = rebuilt.view();
    assert_eq!(rebuilt.standings, view.standings);
    assert_eq!(rebuilt.stage, StageName::Finished);

    server.signal("TERM");
    for client in &mut bots.clients {
        client.closed_with().await;
    }
    assert!(server.wait().await.success());

    // Every event any bot ever received is in the journal, unchanged, with no gaps.
    let journal = Journal::open(data.path(), Durability::Full).unwrap();
    let stored = journal.table(table).unwrap().unwrap();
    assert!(stored.finished_at_ms.is_some());
    let journaled: BTreeMap<u64, wire::Event> = stored
        .events
        .iter()
        .map(|(seq, bytes)| (*seq, wire::decode_event(bytes).unwrap()))
        .collect();
    assert_eq!(
        journaled.keys().copied().collect::<Vec<_>>(),
        (1..=journaled.len() as u64).collect::<Vec<_>>()
    );
    for (seq, event) in &bots.seen {
        assert_eq!(journaled.get(seq), Some(event), "event {seq}");
    }
    journal.close().await.unwrap();
}

#[tokio::test]
async fn a_kill_with_requests_in_flight_loses_nothing_anyone_saw() {
    let data = tempfile::tempdir().unwrap();
    let server = start(data.path()).await;
    let (table, mut clients) = started_game_at(server.addr, 15, 2028).await;
    // A burst of chat from one player, not waiting for any answer, then the kill.
    for i in 0..200 {
        let text = format!("line {i}");
        clients[3].send(|id| ClientMessage::Chat { id, text });
    }
    let seen_before_kill = clients[0]
        .until_event(|e| matches!(e, wire::Event::Chat { .. }).then_some(()))
        .await;
    assert_eq!(seen_before_kill, ());
    server.signal("KILL");
    let mut seen: BTreeMap<u64, wire::Event> = BTreeMap::new();
    for client in &mut clients {
        loop {
            match client.recv().await {
                Received::Closed(_) => break,
                Received::Message(..) => {}
            }
        }
        for (first, bytes) in &client.event_frames {
            let ServerMessage::Events { events, .. } = wire::decode_server(bytes).unwrap() else {
                panic!("events");
            };
            for (k, event) in events.into_iter().enumerate() {
                seen.insert(first + k as u64, event);
            }
        }
    }
    let _ = server.wait().await;
    let journal = Journal::open(data.path(), Durability::Full).unwrap();
    let stored = journal.table(table).unwrap().unwrap();
    let journaled: BTreeMap<u64, wire::Event> = stored
        .events
        .iter()
        .map(|(seq, bytes)| (*seq, wire::decode_event(bytes).unwrap()))
        .collect();
    assert!(!seen.is_empty());
    for (seq, event) in &seen {
        assert_eq!(
            journaled.get(seq),
            Some(event),
            "event {seq} was seen, so it is kept"
        );
    }
    journal.close().await.unwrap();
}

#[tokio::test]
async fn a_journal_from_a_newer_server_is_refused_with_a_clear_message() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(grand_melee_server::journal::DB_FILE);
    let db = rusqlite::Connection::open(&path).unwrap();
    db.pragma_update(None, "user_version", 99).unwrap();
    drop(db);
    let before = std::fs::read(&path).unwrap();
    let output = std::process::Command::new(BINARY)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let log = String::from_utf8_lossy(&output.stdout);
    assert!(log.contains("99"), "the message names the version: {log}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the journal is untouched"
    );
}

// ----- A damaged journal, and replay retention (in-process servers on a chosen directory) -----

/// A server on `data`, on a free loopback port, with the request and chat limits out of the way.
fn config_at(data: &Path) -> ServerConfig {
    ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.to_owned(),
        durability: Durability::Normal,
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e6,
        table_chat_per_minute: 0.0,
        ..ServerConfig::default()
    }
}

/// A server running in this test's runtime, stopped by [`Running::stop`].
struct Running {
    addr: std::net::SocketAddr,
    metrics: std::sync::Arc<grand_melee_server::metrics::Metrics>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    async fn start(config: ServerConfig) -> std::io::Result<Self> {
        let server = Server::bind(config).await?;
        let addr = server.local_addr().unwrap();
        let metrics = server.metrics();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Ok(Self {
            addr,
            metrics,
            stop,
            task,
        })
    }

    /// Stops gracefully; the journal is closed when this returns.
    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .unwrap()
            .unwrap();
    }
}

fn rows_of(path: &Path, table: TableId) -> [i64; 3] {
    let conn = rusqlite::Connection::open(path).unwrap();
    [
        "melee_tables WHERE id",
        "seats WHERE table_id",
        "meta WHERE table_id",
    ]
    .map(|rows| {
        conn.query_row(
            &format!("SELECT count(*) FROM {rows} = ?1"),
            [table.as_bytes().as_slice()],
            |row| row.get(0),
        )
        .unwrap()
    })
}

async fn table_names(addr: std::net::SocketAddr) -> Vec<TableId> {
    let mut client = Client::connected(addr).await;
    let answer = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 100,
        })
        .await
        .unwrap();
    let ServerMessage::Tables { tables, .. } = answer else {
        panic!("tables expected: {answer:?}");
    };
    tables.into_iter().map(|t| t.table).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_refuses_the_start_and_with_the_flag_only_the_damaged_table_is_left_out() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(grand_melee_server::journal::DB_FILE);
    let server = Running::start(config_at(data.path())).await.unwrap();
    // Table `damaged` fills several pages of events with chat; `sound` is a game in play.
    let (damaged, mut damaged_clients) = started_game_at(server.addr, 4, 11).await;
    for i in 0..40 {
        let text = format!("damaged-table-chat-{i:03} {}", "y".repeat(400));
        let said = damaged_clients[0]
            .call(|id| ClientMessage::Chat { id, text })
            .await;
        assert!(matches!(said, Ok(ServerMessage::Ack { .. })), "{said:?}");
    }
    let (sound, sound_clients) = started_game_at(server.addr, 4, 12).await;
    let damaged_token = damaged_clients[1].seat.unwrap().1;
    let sound_token = sound_clients[1].seat.unwrap().1;
    drop((damaged_clients, sound_clients));
    server.stop().await;

    let rows_before = rows_of(&path, damaged);
    assert_eq!(rows_before[..2], [1, 4]);
    let page = flip_a_leaf_page_holding(&path, b"damaged-table-chat-", sound.as_bytes());
    let flipped = std::fs::read(&path).unwrap();

    // Refused, with a message that says what and what to do; the file is left as it was.
    let error = Running::start(config_at(data.path()))
        .await
        .err()
        .expect("a damaged journal must not start silently")
        .to_string();
    for needle in [
        path.display().to_string().as_str(),
        "damaged",
        "quick_check",
        "backup",
        "-wal",
        "--allow-damaged-journal",
        "GM_ALLOW_DAMAGED_JOURNAL=true",
    ] {
        assert!(error.contains(needle), "{needle:?} in {error}");
    }
    assert!(
        std::fs::read(&path).unwrap() == flipped,
        "the refused start changed the file"
    );

    // With the flag: the sound table is back, the damaged one is counted, never dropped.
    let mut config = config_at(data.path());
    config.allow_damaged_journal = true;
    let server = Running::start(config).await.unwrap();
    let metrics = server.metrics.render();
    assert!(
        metrics.contains("\ngm_tables_unrecoverable 1\n"),
        "{metrics}"
    );
    assert_eq!(table_names(server.addr).await, vec![sound]);
    let mut back = Client::connected(server.addr).await;
    assert_eq!(back.resume(sound, sound_token).await, Ok(1));
    let mut lost = Client::connected(server.addr).await;
    assert_eq!(
        lost.resume(damaged, damaged_token).await,
        Err(ErrorCode::UnknownTable)
    );
    drop((back, lost));
    server.stop().await;

    // Its rows are all still there, and its damaged page was not written.
    assert_eq!(rows_of(&path, damaged), rows_before);
    assert!(std::fs::read(&path).unwrap()[page.clone()] == flipped[page]);
}

#[tokio::test]
async fn replays_past_their_retention_are_deleted_by_the_maintenance_at_start() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(grand_melee_server::journal::DB_FILE);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    const DAY_MS: u64 = 86_400_000;
    let (old, recent) = (TableId::new_random(), TableId::new_random());
    {
        let journal = Journal::open(data.path(), Durability::Normal).unwrap();
        for (id, finished) in [(old, now_ms - 10 * DAY_MS), (recent, now_ms - DAY_MS)] {
            journal
                .create_table(grand_melee_server::journal::TableRecord {
                    id,
                    name: "finished".into(),
                    password: None,
                    settings: vec![0],
                    created_at_ms: finished - 1,
                    league: None,
                })
                .await
                .unwrap();
            journal.append(id, 1, vec![vec![1], vec![2]]).await.unwrap();
            journal
                .set_seat(id, 0, SeatToken::new_random())
                .await
                .unwrap();
            journal.finish(id, finished, Vec::new()).await.unwrap();
        }
        journal.close().await.unwrap();
    }
    let replays = || {
        let journal = Journal::open(data.path(), Durability::Normal).unwrap();
        journal
            .replays()
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect::<Vec<_>>()
    };

    // Kept forever with 0; the first round of maintenance runs even on an immediate stop.
    let mut config = config_at(data.path());
    config.replay_retention_days = 0;
    Server::bind(config).await.unwrap().run(async {}).await;
    assert_eq!(replays(), vec![recent, old]);

    let mut config = config_at(data.path());
    config.replay_retention_days = 7;
    let server = Server::bind(config).await.unwrap();
    let metrics = server.metrics();
    server.run(async {}).await;
    assert_eq!(replays(), vec![recent]);
    assert_eq!(rows_of(&path, old), [0, 0, 0]);
    assert_eq!(rows_of(&path, recent), [1, 1, 0]);
    assert!(metrics.render().contains("\ngm_replays_pruned_total 1\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_in_the_index_no_longer_hides_a_live_table() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(grand_melee_server::journal::DB_FILE);
    let server = Running::start(config_at(data.path())).await.unwrap();
    let (table, clients) = started_game_at(server.addr, 4, 13).await;
    let token = clients[2].seat.unwrap().1;
    drop(clients);
    server.stop().await;

    // One bit of the table's id flipped in the index of finished times: the index no longer
    // leads to the table (the server used to start without it, without a word).
    let root: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = 'melee_tables_finished'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let page = (usize::try_from(root).unwrap() - 1) * 4096..usize::try_from(root).unwrap() * 4096;
    let at = page.start
        + bytes[page]
            .windows(16)
            .position(|window| window == table.as_bytes())
            .unwrap();
    bytes[at + 15] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    // PRAGMA integrity_check finds it (and the check at start with it)…
    let error = Running::start(config_at(data.path()))
        .await
        .err()
        .expect("a stale index must not start silently")
        .to_string();
    assert!(error.contains("melee_tables_finished"), "{error}");
    // …and with the flag, the table is still listed and its players get their seats back.
    let mut config = config_at(data.path());
    config.allow_damaged_journal = true;
    let server = Running::start(config).await.unwrap();
    assert_eq!(table_names(server.addr).await, vec![table]);
    let mut back = Client::connected(server.addr).await;
    assert_eq!(back.resume(table, token).await, Ok(2));
    assert!(
        server
            .metrics
            .render()
            .contains("\ngm_tables_unrecoverable 0\n")
    );
    drop(back);
    server.stop().await;
}

#[tokio::test]
async fn a_table_that_cannot_be_rebuilt_is_refused_then_counted_and_kept() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(grand_melee_server::journal::DB_FILE);
    // A sound database whose one table cannot be rebuilt (settings this server cannot read).
    let broken = TableId::new_random();
    {
        let journal = Journal::open(data.path(), Durability::Normal).unwrap();
        journal
            .create_table(grand_melee_server::journal::TableRecord {
                id: broken,
                name: "broken".into(),
                password: None,
                settings: vec![0xc1],
                created_at_ms: 1,
                league: None,
            })
            .await
            .unwrap();
        journal
            .set_seat(broken, 0, SeatToken::new_random())
            .await
            .unwrap();
        journal.close().await.unwrap();
    }
    let error = Running::start(config_at(data.path()))
        .await
        .err()
        .expect("a table that cannot be rebuilt must not be dropped silently")
        .to_string();
    for needle in [&broken.to_string(), "settings", "--allow-damaged-journal"] {
        assert!(error.contains(needle), "{needle:?} in {error}");
    }
    let mut config = config_at(data.path());
    config.allow_damaged_journal = true;
    let server = Running::start(config).await.unwrap();
    assert!(
        server
            .metrics
            .render()
            .contains("\ngm_tables_unrecoverable 1\n")
    );
    assert_eq!(table_names(server.addr).await, Vec::<TableId>::new());
    server.stop().await;
    assert_eq!(rows_of(&path, broken), [1, 1, 0]);
}

/// The host's decisions outlive a restart: they are rebuilt from the journal like everything
/// else (mutes from `player_muted` events, kicks during mulligans from `player_kicked`, bans
/// from the table's metadata, never from events, which everyone receives).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutes_bans_and_kicks_during_mulligans_survive_a_restart() {
    use std::net::{IpAddr, Ipv4Addr};
    let other: IpAddr = Ipv4Addr::new(127, 0, 0, 2).into();
    let data = tempfile::tempdir().unwrap();
    let server = Running::start(config_at(data.path())).await.unwrap();
    let mut host = Client::connected(server.addr).await;
    let table = host.create_table("kept decisions", 5, 31).await;
    host.join(table, "Ann").await.unwrap();
    let mut players = vec![];
    for name in ["Ben", "Cid", "Dee"] {
        let mut player = Client::connected(server.addr).await;
        player.join(table, name).await.unwrap();
        players.push(player);
    }
    let mut pest = Client::connected_from(server.addr, other).await;
    pest.join(table, "Pest").await.unwrap();
    let ok = |answer: Result<ServerMessage, ErrorCode>| {
        assert!(
            matches!(answer, Ok(ServerMessage::Ack { .. })),
            "{answer:?}"
        );
    };
    ok(host
        .call(|id| ClientMessage::Kick {
            id,
            player: 4,
            ban: true,
        })
        .await);
    ok(host
        .call(|id| ClientMessage::Mute {
            id,
            player: Some(1),
            muted: true,
        })
        .await);
    ok(host
        .call(|id| ClientMessage::Start {
            id,
            first_player: Some(0),
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await);
    // Player 3 is kicked while the decisions are under way; his is not due yet (unless it is,
    // in which case it is taken at once: either way he must be out as play begins).
    ok(host
        .call(|id| ClientMessage::Kick {
            id,
            player: 3,
            ban: false,
        })
        .await);
    let tokens: Vec<_> = players.iter().map(|p| p.seat.unwrap().1).collect();
    let host_token = host.seat.unwrap().1;
    drop((host, players, pest));
    server.stop().await;

    let server = Running::start(config_at(data.path())).await.unwrap();
    let mut host = Client::connected(server.addr).await;
    assert_eq!(host.resume(table, host_token).await, Ok(0));
    let mut ben = Client::connected(server.addr).await;
    assert_eq!(ben.resume(table, tokens[0]).await, Ok(1));
    let mut cid = Client::connected(server.addr).await;
    assert_eq!(cid.resume(table, tokens[1]).await, Ok(2));
    // Still muted; still banned; still kicked.
    let said = ben
        .call(|id| ClientMessage::Chat {
            id,
            text: "let me talk".into(),
        })
        .await;
    assert_eq!(said, Err(ErrorCode::Muted));
    let mut again = Client::connected_from(server.addr, other).await;
    let watched = again
        .call(|id| ClientMessage::Watch {
            id,
            table,
            password: None,
        })
        .await;
    assert_eq!(watched, Err(ErrorCode::Banned));
    let mut dee = Client::connected(server.addr).await;
    assert_eq!(dee.resume(table, tokens[2]).await, Err(ErrorCode::BadToken));
    // The remaining decisions: player 3's is taken as keep when due, and he is out as play
    // begins.
    let mut seats = [host, ben, cid];
    loop {
        let view = seats[0].fresh_snapshot().await;
        let Some(decider) = view.mulligan_decider.filter(|d| *d != 3) else {
            break;
        };
        let client = &mut seats[usize::from(decider)];
        ok(client.call(|id| ClientMessage::Keep { id }).await);
        let seq = client.view.as_ref().unwrap().seq;
        seats[0].catch_up(seq).await;
    }
    let view = loop {
        let view = seats[0].fresh_snapshot().await;
        if view.stage == StageName::Playing {
            break view;
        }
        let seq = view.seq + 1;
        seats[0].catch_up(seq).await;
    };
    let dee = view.players.iter().find(|p| p.player == 3).unwrap();
    assert_eq!(dee.status, PlayerStatus::Eliminated, "{view:?}");
    assert!(view.players.iter().find(|p| p.player == 1).unwrap().muted);
    drop(seats);
    server.stop().await;
}
