//! [`grand_melee_loadtest::play`] against a real server in this process: whole games to the
//! end with every event the bots received held against the server's journal; bots whose
//! connection is cut in the middle of the game taking their seats back with `resume` (through
//! a URL list of two entries: a TCP proxy that the test shuts, then the server itself); and
//! bots told the table anew by a `snapshot` they did not ask for, instead of the answer to
//! their request (what a cluster does when a table moves to another node), playing on.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};

use grand_melee_loadtest::witness::{Witness, fetch_journal};
use grand_melee_loadtest::{PlayConfig, PlayOutcome, play};
use grand_melee_protocol::{self as wire, ClientMessage, Event, ServerMessage, TableId};
use grand_melee_server::{Server, ServerConfig};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// A bound on a failure, not a pace: a game here lasts a few seconds.
const PATIENCE: Duration = Duration::from_secs(120);

const TABLES: usize = 2;
const SEATS: u8 = 6;

/// A server on a loopback port, stopped when dropped.
struct TestServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    _data: tempfile::TempDir,
}

impl TestServer {
    async fn start() -> Self {
        let data = tempfile::tempdir().unwrap();
        let config = ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data.path().to_owned(),
            durability: grand_melee_server::journal::Durability::Normal,
            // The bots think for a few milliseconds: far above a person's request rate.
            rate_limit: 1e6,
            rate_burst: 1e6,
            chat_per_minute: 1e8,
            table_chat_per_minute: 0.0,
            ..ServerConfig::default()
        };
        let server = Server::bind(config).await.unwrap();
        let addr = server.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            stop: Some(stop),
            task: Some(task),
            _data: data,
        }
    }

    fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
        }
    }
}

/// A TCP proxy to `target` on a loopback port: every connection is piped through until
/// [`Proxy::cut`], which drops them all (both ends) and stops accepting.
struct Proxy {
    addr: SocketAddr,
    cut: CancellationToken,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = CancellationToken::new();
        let accepting = cut.clone();
        tokio::spawn(async move {
            loop {
                let (mut client, _) = tokio::select! {
                    () = accepting.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(_) => return,
                    },
                };
                let piping = accepting.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        () = piping.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                    }
                });
            }
        });
        Self { addr, cut }
    }

    fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    fn cut(&self) {
        self.cut.cancel();
    }
}

/// A WebSocket go-between to the server that plays a table move on every connection once:
/// it swallows the answer to the connection's first game move and sends, instead, a fresh
/// snapshot of the table with no `reply_to` (which it asked the server for itself).
struct Mover {
    addr: SocketAddr,
    /// Snapshots sent in place of an answer.
    moves: Arc<AtomicU64>,
}

/// The id the mover's own snapshot requests carry (the bots count from 1).
const MOVER_ID: u32 = u32::MAX;

impl Mover {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let moves = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&moves);
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(Self::serve(tcp, target, Arc::clone(&counted)));
            }
        });
        Self { addr, moves }
    }

    async fn serve(tcp: TcpStream, target: SocketAddr, moves: Arc<AtomicU64>) {
        let Ok(client) = tokio_tungstenite::accept_async(tcp).await else {
            return;
        };
        let Ok((server, _)) = tokio_tungstenite::connect_async(format!("ws://{target}/ws")).await
        else {
            return;
        };
        let (mut to_client, mut from_client) = client.split();
        let (mut to_server, mut from_server) = server.split();
        // The request whose answer is swallowed, once chosen; whether it has been.
        let mut swallow = None;
        let mut moved = false;
        loop {
            tokio::select! {
                frame = from_client.next() => {
                    let Some(Ok(frame)) = frame else { return };
                    if let Message::Binary(bytes) = &frame
                        && !moved
                        && swallow.is_none()
                        && let Ok(request) = wire::decode_client(bytes)
                        && matches!(
                            request,
                            ClientMessage::SetPhase { .. }
                                | ClientMessage::Attack { .. }
                                | ClientMessage::DealDamage { .. }
                                | ClientMessage::EndTurn { .. }
                        )
                    {
                        swallow = Some(request.id());
                    }
                    if to_server.send(frame).await.is_err() {
                        return;
                    }
                }
                frame = from_server.next() => {
                    let Some(Ok(frame)) = frame else { return };
                    let message = match &frame {
                        Message::Binary(bytes) => wire::decode_server(bytes).ok(),
                        _ => None,
                    };
                    let reply_to = message.as_ref().and_then(ServerMessage::reply_to);
                    let forward = if reply_to.is_some() && reply_to == swallow {
                        // The answer never comes: the table "moves" instead.
                        swallow = None;
                        moved = true;
                        let ask = ClientMessage::Snapshot { id: MOVER_ID };
                        let ask = Message::Binary(wire::encode_client(&ask).into());
                        if to_server.send(ask).await.is_err() {
                            return;
                        }
                        None
                    } else if reply_to == Some(MOVER_ID) {
                        let Some(ServerMessage::Snapshot { view, .. }) = message else {
                            return;
                        };
                        moves.fetch_add(1, Relaxed);
                        let moved = ServerMessage::Snapshot { reply_to: None, view };
                        Some(Message::Binary(wire::encode_server(&moved).into()))
                    } else {
                        Some(frame)
                    };
                    if let Some(frame) = forward
                        && to_client.send(frame).await.is_err()
                    {
                        return;
                    }
                }
            }
        }
    }

    fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }
}

fn config(urls: Vec<String>, witness: Arc<Witness>) -> PlayConfig {
    PlayConfig {
        urls,
        tables: TABLES,
        seats: SEATS,
        games: 1,
        starting_life: 20,
        think: Duration::from_millis(30),
        chat_chance: 0.05,
        seed: 11,
        setup_timeout: Duration::from_secs(60),
        patience: PATIENCE,
        witness,
        ..PlayConfig::default()
    }
}

fn decode(bytes: &[u8]) -> Event {
    wire::decode_event(bytes).unwrap()
}

/// Every table finished with one winner that every bot saw, and the witness agrees with each
/// table's journal: same number, same bytes, no conflict, and no event missed in between.
async fn check_tables(outcome: &PlayOutcome, server: &TestServer) {
    let summary = outcome.summary();
    assert!(outcome.all_finished, "{summary}");
    assert_eq!(outcome.tables.len(), TABLES, "{summary}");
    assert!(
        outcome.witness.conflicts().is_empty(),
        "{summary}{:#?}",
        outcome.witness.conflicts()
    );
    for table in &outcome.tables {
        assert!(table.finished, "{summary}");
        assert!(table.winner().is_some(), "exactly one winner: {summary}");
        assert_eq!(table.reports, usize::from(SEATS), "{summary}");
        assert_eq!(table.disagreements, 0, "{summary}");
        let id: TableId = table.table.unwrap();
        let url = format!("{}/ws", server.url());
        let journal = tokio::time::timeout(PATIENCE, fetch_journal(&url, id))
            .await
            .unwrap()
            .unwrap();
        let check = outcome.witness.check_journal(id, &journal);
        let seen = outcome.witness.table(id);
        let decoded = |seqs: &[u64]| {
            seqs.iter()
                .map(|seq| decode(&seen[seq]))
                .collect::<Vec<_>>()
        };
        assert!(
            check.differing.is_empty(),
            "table {}: {check:?}: {:?}",
            table.index,
            decoded(&check.differing)
        );
        assert_eq!(check.matching, journal.len() - check.unseen.len());
        // The journal ends with the game: what the bots were told after it (people leaving)
        // is not journaled.
        assert!(
            journal.iter().any(|e| matches!(e, Event::GameOver { .. })),
            "table {}",
            table.index
        );
        let after_the_game = decoded(&check.beyond_journal);
        assert!(
            after_the_game.iter().all(|e| matches!(
                e,
                Event::ConnectionChanged { .. }
                    | Event::HostChanged { .. }
                    | Event::SpectatorsChanged { .. }
                    | Event::Chat { .. }
            )),
            "table {}: {check:?}: {after_the_game:?}",
            table.index
        );
        // Only the first player's own arrival (in his snapshot) went unseen.
        let first = *seen.keys().next().unwrap();
        assert!(first <= 3, "table {}: first seen {first}", table.index);
        assert!(
            check.unseen.iter().all(|&seq| seq < first),
            "table {}: events missed: {check:?}",
            table.index
        );
        // The winner is the journal's.
        let standings = journal
            .iter()
            .find_map(|event| match event {
                Event::GameOver { standings } => Some(standings.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(standings, table.standings, "table {}", table.index);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_sees_every_event_as_the_journal_has_it() {
    let server = TestServer::start().await;
    let witness = Arc::new(Witness::new());
    let outcome = play(config(vec![server.url()], Arc::clone(&witness)))
        .await
        .unwrap_or_else(|e| {
            panic!(
                "{e}: {}",
                e.outcome().map(PlayOutcome::summary).unwrap_or_default()
            )
        });
    let summary = outcome.summary();
    assert_eq!(outcome.errors, 0, "{summary}");
    assert_eq!(outcome.reconnects, 0, "{summary}");
    assert_eq!(outcome.counts.disconnects, 0, "{summary}");
    check_tables(&outcome, &server).await;
    assert_eq!(witness.tables().len(), TABLES);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_whose_connection_is_cut_resume_and_the_games_end() {
    let server = TestServer::start().await;
    let proxy = Proxy::start(server.addr).await;
    let witness = Arc::new(Witness::new());
    // Bot k of table t starts at URL (t + k) mod 2: half the bots of each table go through
    // the proxy, and fail over to the server itself when it is cut.
    let mut run = config(vec![proxy.url(), server.url()], Arc::clone(&witness));
    run.starting_life = 40;
    let running = tokio::spawn(play(run));

    // Cut once both games are under way (an attack at each table) and neither is over.
    let attacked = |w: &Witness| {
        let tables = w.tables();
        tables.len() == TABLES
            && tables.iter().all(|&t| {
                w.table(t)
                    .values()
                    .any(|bytes| matches!(decode(bytes), Event::Attacked { .. }))
            })
    };
    assert!(
        witness.wait_until(PATIENCE, attacked).await,
        "both games got under way"
    );
    let over = witness
        .events()
        .values()
        .any(|bytes| matches!(decode(bytes), Event::GameOver { .. }));
    proxy.cut();
    assert!(!over, "a game ended before the cut: make the games longer");

    let outcome = tokio::time::timeout(PATIENCE * 2, running)
        .await
        .unwrap()
        .unwrap()
        .unwrap_or_else(|e| {
            panic!(
                "{e}: {}",
                e.outcome().map(PlayOutcome::summary).unwrap_or_default()
            )
        });
    let summary = outcome.summary();
    assert!(outcome.reconnects >= 1, "{summary}");
    assert_eq!(
        outcome.reconnects,
        (TABLES * usize::from(SEATS) / 2) as u64,
        "every bot behind the proxy resumed: {summary}"
    );
    assert_eq!(outcome.errors, 0, "{summary}");
    assert_eq!(outcome.counts.disconnects, 0, "{summary}");
    check_tables(&outcome, &server).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_told_the_table_anew_forget_their_request_and_play_on() {
    let server = TestServer::start().await;
    let mover = Mover::start(server.addr).await;
    let mut run = config(vec![mover.url()], Arc::new(Witness::new()));
    // The mirrors are also compared with the server's snapshots along the way.
    run.mirror_check = true;
    let outcome = play(run).await.unwrap_or_else(|e| {
        panic!(
            "{e}: {}",
            e.outcome().map(PlayOutcome::summary).unwrap_or_default()
        )
    });
    let summary = outcome.summary();
    let moves = mover.moves.load(Relaxed);
    assert!(moves >= 2, "{moves} moves: {summary}");
    let c = &outcome.counts;
    assert_eq!(c.table_moves, moves, "{summary}");
    assert_eq!(
        c.lost_requests, moves,
        "every move cost its request: {summary}"
    );
    assert_eq!(c.acks + c.lost_requests, c.actions, "{summary}");
    assert_eq!((outcome.errors, outcome.reconnects), (0, 0), "{summary}");
    assert_eq!(
        (c.disconnects, c.gaps, c.mirror_mismatches),
        (0, 0, 0),
        "{summary}"
    );
    check_tables(&outcome, &server).await;
    server.shutdown().await;
}
