//! Durability: the real server process killed (SIGKILL) or stopped (SIGTERM) in the middle of a
//! 28-seat game, restarted on the same data directory; the bots resume and finish the game.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use grand_melee_e2e::{Client, Received, ServerProcess, started_game_at};
use grand_melee_protocol::{
    self as wire, ClientMessage, PlayerStatus, ServerMessage, StageName, TableId, TableView,
    TurnStateName, close,
};
use grand_melee_server::journal::{Durability, Journal};

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
    tokens: Vec<uuid::Uuid>,
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
    let mut rebuilt = TableView::new(table, name, settings);
    rebuilt.apply_batch(1, &events).unwrap();
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
