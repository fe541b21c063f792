//! Cluster mode against real `nats-server` processes (installed by the harness when missing):
//! server nodes as child processes, clients on several nodes at one table, a node killed or
//! paused mid-game.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::time::Duration;

use grand_melee_e2e::nats::{CutProxy, NatsCluster, ServerNode};
use grand_melee_e2e::{Client, Received, concede, keep_all_hands};
use grand_melee_protocol::{self as wire, ClientMessage, ErrorCode, ServerMessage, TableId};

const BINARY: &str = env!("CARGO_BIN_EXE_grand-melee-server");

/// How long a test waits for a condition the cluster must reach by itself.
const PATIENCE: Duration = Duration::from_secs(60);

/// A node of the cluster under test.
async fn node(nats: &NatsCluster, name: &str, replicas: usize, lease_ms: u64) -> ServerNode {
    ServerNode::cluster(BINARY, nats, name, replicas, lease_ms).await
}

/// Waits until `check` holds, asking again every 50 ms, for at most [`PATIENCE`].
async fn eventually<F: AsyncFnMut() -> bool>(what: &str, mut check: F) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every client's mirror equals a fresh snapshot from its own node.
async fn mirrors_agree(clients: &mut [Client]) {
    let seq = clients
        .iter()
        .filter_map(|c| c.view.as_ref().map(|v| v.seq))
        .max()
        .unwrap();
    for client in clients.iter_mut() {
        client.catch_up(seq).await;
        let fresh = client.fresh_snapshot().await;
        assert_eq!(client.view.as_ref().unwrap(), &fresh);
    }
}

/// Every event frame a client received is, byte for byte, the journal's event.
fn seen_events_are_journaled(clients: &[Client], journal: &[wire::Event]) {
    for client in clients {
        for (seq, bytes) in &client.event_frames {
            let Ok(ServerMessage::Events { events, .. }) = wire::decode_server(bytes) else {
                panic!("an events frame");
            };
            for (i, event) in events.iter().enumerate() {
                let at = usize::try_from(seq + i as u64 - 1).unwrap();
                assert_eq!(Some(event), journal.get(at), "event {}", seq + i as u64);
            }
        }
    }
}

/// Joins `names` at `table`, each client on the node given with it.
async fn seat(table: TableId, at: &[(SocketAddr, &str)]) -> Vec<Client> {
    let mut clients = Vec::new();
    for (addr, name) in at {
        let mut client = Client::connected(*addr).await;
        client.join(table, name).await.unwrap();
        clients.push(client);
    }
    clients
}

/// Any client's turn-taking move that keeps the game going: the first running turn's player
/// passes his phase.
async fn play_a_little(clients: &mut [Client], moves: usize) {
    let mut done = 0;
    // Whether a request went unanswered: after a resync it may never be answered, but it may
    // also still be carried out, after a later choice was made from a view without it.
    let mut unanswered = false;
    while done < moves {
        let seq = clients
            .iter()
            .filter_map(|c| c.view.as_ref().map(|v| v.seq))
            .max()
            .unwrap();
        for c in clients.iter_mut() {
            c.catch_up(seq).await;
        }
        let running = clients[0].running_players();
        let Some(&player) = running.first() else {
            return;
        };
        let client = clients
            .iter_mut()
            .find(|c| c.seat.map(|(p, _)| p) == Some(player))
            .unwrap();
        let id = client.send(|id| ClientMessage::EndTurn { id });
        // The answer, or a snapshot nobody asked for: the table was resynchronised (it moved,
        // or messages between nodes may have been lost) and the request may never be answered
        // (PROTOCOL.md): choose again from the new view.
        let answer = client
            .until(|r| match r {
                Received::Message(m, _) => match &**m {
                    ServerMessage::Error { reply_to, code, .. } if *reply_to == Some(id) => {
                        Some(Some(Err(*code)))
                    }
                    ServerMessage::Snapshot { reply_to: None, .. } => Some(None),
                    m if m.reply_to() == Some(id) => Some(Some(Ok(m.clone()))),
                    _ => None,
                },
                Received::Closed(_) => None,
            })
            .await;
        match answer {
            Some(Ok(ServerMessage::Ack { .. })) => done += 1,
            None => unanswered = true,
            // The unanswered request was carried out after all, and this one was chosen from
            // a view without it (the turn it ends had ended): choose again.
            Some(Err(ErrorCode::NotYourTurn | ErrorCode::NoRunningTurn)) if unanswered => {}
            Some(other) => panic!("{other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_table_played_from_two_nodes_survives_its_owner() {
    let nats = NatsCluster::start(1).await;
    let mut a = node(&nats, "a", 1, 1500).await;
    let b = node(&nats, "b", 1, 1500).await;

    let mut host = Client::connected(a.addr).await;
    let table = host.create_table("across nodes", 4, 7).await;
    // Node b lists it (from the directory).
    let mut lobby_b = Client::connected(b.addr).await;
    eventually("node b lists the table", async || {
        lobby_b.list_tables().await.iter().any(|t| t.table == table)
    })
    .await;
    host.join(table, "Ann").await.unwrap();
    let mut clients = vec![host];
    clients.extend(seat(table, &[(b.addr, "Bob"), (a.addr, "Cid"), (b.addr, "Dee")]).await);
    let mut watcher = Client::connected(b.addr).await;
    watcher.watch(table).await;

    let started = clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    keep_all_hands(&mut clients).await;
    play_a_little(&mut clients, 3).await;
    mirrors_agree(&mut clients).await;
    assert!(b.metric("gm_cluster_routed_requests_total").await >= 1.0);
    assert_eq!(a.metric("gm_tables").await, 1.0, "node a owns the table");
    assert_eq!(b.metric("gm_tables").await, 0.0);

    // Node a dies. Node b takes the table over; b's clients keep their connections and get a
    // fresh snapshot; a's clients come back through b with their seat tokens.
    let before = clients[1].view.as_ref().unwrap().seq;
    a.kill().await;
    eventually("node b owns the table", async || {
        b.metric("gm_tables").await == 1.0
    })
    .await;
    assert_eq!(b.metric("gm_cluster_takeovers_total").await, 1.0);
    for i in [1, 3] {
        // A snapshot without a request: the table moved.
        clients[i]
            .until(|r| match r {
                Received::Message(m, _) => {
                    matches!(**m, ServerMessage::Snapshot { reply_to: None, .. }).then_some(())
                }
                Received::Closed(_) => None,
            })
            .await;
        assert!(clients[i].closed.is_none());
        assert!(clients[i].view.as_ref().unwrap().seq >= before);
    }
    for i in [0, 2] {
        let (_, token) = clients[i].seat.unwrap();
        let mut back = Client::connected(b.addr).await;
        back.resume(table, token).await.unwrap();
        back.event_frames = std::mem::take(&mut clients[i].event_frames);
        clients[i] = back;
    }
    mirrors_agree(&mut clients).await;
    play_a_little(&mut clients, 3).await;

    // The game ends with one winner.
    let order: Vec<u16> = clients.iter().map(|c| c.seat.unwrap().0).take(3).collect();
    for player in order {
        concede(&mut clients, player).await;
    }
    let view = clients[3].view.clone().unwrap();
    assert_eq!(view.stage, wire::StageName::Finished);
    assert_eq!(
        view.standings.iter().filter(|s| s.place == 1).count(),
        1,
        "{:?}",
        view.standings
    );
    let journal = clients[3].past_events(table).await;
    seen_events_are_journaled(&clients, &journal);
    // The replay is listed on the surviving node.
    let replays = lobby_b
        .call(|id| ClientMessage::ListReplays {
            id,
            from: 0,
            limit: 10,
        })
        .await
        .unwrap();
    let ServerMessage::Replays { replays, .. } = replays else {
        panic!("replays");
    };
    assert!(
        replays
            .iter()
            .any(|r| r.table == table && r.events == journal.len() as u64)
    );
    drop(watcher);
}

/// The URL of the `served_at` for `table` a client received, waiting for it at most `patience`.
async fn served_at(client: &mut Client, table: TableId, patience: Duration) -> Option<String> {
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if let Some((t, url)) = &client.served_at
            && *t == table
        {
            return Some(url.clone());
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match client.recv_within(left).await? {
            Received::Message(..) => {}
            Received::Closed(_) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_told_where_the_owner_is_moves_there_and_keeps_its_seat() {
    let nats = NatsCluster::start(1).await;
    let a = node(&nats, "a", 1, 1500).await;
    let b = node(&nats, "b", 1, 1500).await;

    let mut host = Client::connected(a.addr).await;
    let table = host.create_table("go to the owner", 4, 7).await;
    host.join(table, "Ann").await.unwrap();
    let mut lobby_b = Client::connected(b.addr).await;
    eventually("node b lists the table", async || {
        lobby_b.list_tables().await.iter().any(|t| t.table == table)
    })
    .await;

    // Bob joins through node b (a proxy) and is told where the owner is; a watcher on b too.
    let mut bob = Client::connected(b.addr).await;
    bob.join(table, "Bob").await.unwrap();
    let owner = format!("ws://{}/ws", a.addr);
    assert_eq!(
        served_at(&mut bob, table, PATIENCE).await.as_deref(),
        Some(owner.as_str())
    );
    let mut watcher = Client::connected(b.addr).await;
    watcher.watch(table).await;
    assert_eq!(
        served_at(&mut watcher, table, PATIENCE).await.as_deref(),
        Some(owner.as_str())
    );
    assert_eq!(
        b.metric("gm_cluster_clients_sent_to_owner_total").await,
        2.0
    );
    // The page node b serves may connect to node a (its Content-Security-Policy says so), and
    // to nothing else but itself.
    let page = grand_melee_e2e::http_get(b.addr, &format!("/t/{}", table.as_uuid())).await;
    let policy = page
        .lines()
        .find_map(|l| l.strip_prefix("content-security-policy: "))
        .unwrap_or_else(|| panic!("a policy: {page}"));
    assert!(
        policy.contains(&format!("connect-src 'self' ws://{};", a.addr)),
        "{policy}"
    );
    // At the owner nobody is sent anywhere.
    assert_eq!(
        served_at(&mut host, table, Duration::from_millis(300)).await,
        None
    );
    assert_eq!(
        a.metric("gm_cluster_clients_sent_to_owner_total").await,
        0.0
    );

    // Bob moves: a second connection at the owner resumes his seat, the first one is closed
    // with "taken over" (the seat never lacked a connection).
    let (player, token) = bob.seat.unwrap();
    let mut moved = Client::connected(a.addr).await;
    assert_eq!(moved.resume(table, token).await.unwrap(), player);
    bob.until(|r| matches!(r, Received::Closed(_)).then_some(()))
        .await;
    assert_eq!(bob.close_reason().as_deref(), Some(wire::close::TAKEN_OVER));
    assert_eq!(
        served_at(&mut moved, table, Duration::from_millis(300)).await,
        None,
        "at the owner, no served_at"
    );

    // From now on his requests reach the table without node b.
    let routed = b.metric("gm_cluster_routed_requests_total").await;
    let said = moved
        .call(|id| ClientMessage::Chat {
            id,
            text: "straight to the owner".into(),
        })
        .await;
    assert!(matches!(said, Ok(ServerMessage::Ack { .. })), "{said:?}");
    for client in [&mut host, &mut watcher] {
        client
            .until_batch(
                |e| matches!(e, wire::Event::Chat { text, .. } if text == "straight to the owner"),
            )
            .await;
    }
    assert_eq!(b.metric("gm_cluster_routed_requests_total").await, routed);
    let mut clients = vec![host, moved];
    mirrors_agree(&mut clients).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_magic_tech_table_survives_its_owner_and_is_played_to_its_end() {
    use grand_melee_e2e::magic_tech::{self as mt, Dice};
    let nats = NatsCluster::start(1).await;
    let mut a = node(&nats, "a", 1, 1500).await;
    let b = node(&nats, "b", 1, 1500).await;

    // Ann plays on node a, which owns the table, Bob on node b.
    let mut ann = Client::connected(a.addr).await;
    let table = ann.create(mt::settings()).await.unwrap();
    let mut lobby_b = Client::connected(b.addr).await;
    eventually("node b lists the table", async || {
        lobby_b
            .list_tables()
            .await
            .iter()
            .any(|t| t.table == table && t.game == wire::GameKind::MagicTech)
    })
    .await;
    ann.join(table, "Ann").await.unwrap();
    let mut clients = vec![ann];
    clients.extend(seat(table, &[(b.addr, "Bob")]).await);
    mt::start(&mut clients, [40, 30]).await;
    keep_all_hands(&mut clients).await;
    let mut dice = Dice::new(4);
    assert_eq!(mt::play(&mut clients, &mut dice, 80).await, 80);
    mirrors_agree(&mut clients).await;
    assert!(b.metric("gm_cluster_routed_requests_total").await >= 1.0);
    assert_eq!(a.metric("gm_tables").await, 1.0, "node a owns the table");

    // Node a dies: node b takes the table over, Bob gets a fresh snapshot, Ann comes back
    // through node b with her seat token; the game goes on to its end.
    let board = clients[1].view.as_ref().unwrap().magic_tech.clone();
    a.kill().await;
    eventually("node b owns the table", async || {
        b.metric("gm_tables").await == 1.0
    })
    .await;
    until_moved(&mut clients[1]).await;
    let (_, token) = clients[0].seat.unwrap();
    let mut back = Client::connected(b.addr).await;
    back.resume(table, token).await.unwrap();
    back.event_frames = std::mem::take(&mut clients[0].event_frames);
    clients[0] = back;
    mirrors_agree(&mut clients).await;
    assert_eq!(clients[0].view.as_ref().unwrap().magic_tech, board);
    let made = mt::play(&mut clients, &mut dice, 5000).await;
    assert!(made < 5000, "the game ended");
    mirrors_agree(&mut clients).await;
    let end = clients[1].view.clone().unwrap();
    assert_eq!(end.stage, wire::StageName::Finished);
    let journal = Client::connected(b.addr).await.replay_events(table).await;
    assert_eq!(
        journal.len() as u64,
        end.seq,
        "the journal holds every event once"
    );
    seen_events_are_journaled(&clients, &journal);
    assert_eq!(mt::fold(&end, &journal), end);
}

/// `steps` moves of a Mountain Magic climb from the climber's mirror: turn a card over, then
/// place it at the first place it may go, else discard it.
async fn climb_steps(client: &mut Client, steps: usize) {
    use grand_melee_protocol::mountain_magic::MountainMagic;
    use grand_melee_protocol::mountain_magic_types::{MmPhase, MountainCommand};
    for _ in 0..steps {
        let view = client.fresh_snapshot().await;
        client.catch_up(view.seq).await;
        let mountain = view.mountain_magic.as_deref().unwrap();
        if mountain.phase != MmPhase::Climbing {
            return;
        }
        let command = match mountain.flipped {
            None => MountainCommand::Flip,
            Some(card) => {
                let mirror = wire::Mirror::<MountainMagic>::of(&view).unwrap();
                (1..7u8)
                    .flat_map(|row| (0..7 - row).map(move |pos| (row, pos)))
                    .find(|&(row, pos)| mirror.table().climb().may_place_at(card, row, pos))
                    .map_or(MountainCommand::Discard, |(row, pos)| {
                        MountainCommand::Place { row, pos }
                    })
            }
        };
        let answer = client
            .call(|id| ClientMessage::mountain_magic(id, command.clone()))
            .await;
        let Ok(ServerMessage::Ack { seq, .. }) = answer else {
            panic!("{command:?}: {answer:?}");
        };
        client.catch_up(seq).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mountain_magic_climb_survives_its_owner_watched_from_another_node() {
    let nats = NatsCluster::start(1).await;
    let mut a = node(&nats, "a", 1, 1500).await;
    let b = node(&nats, "b", 1, 1500).await;

    // Ann climbs on node a, which owns the table; Wes watches from node b.
    let mut ann = Client::connected(a.addr).await;
    let settings =
        grand_melee_e2e::CreateTable::new("climb", 1).game(wire::GameKind::MountainMagic);
    let table = ann.create(settings).await.unwrap();
    ann.join(table, "Ann").await.unwrap();
    let started = ann
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: Default::default(),
            order: Vec::new(),
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    let mut watcher = Client::connected(b.addr).await;
    eventually("node b lists the table", async || {
        watcher
            .list_tables()
            .await
            .iter()
            .any(|t| t.table == table && t.game == wire::GameKind::MountainMagic)
    })
    .await;
    watcher.watch(table).await;
    climb_steps(&mut ann, 8).await;
    let mut clients = vec![ann, watcher];
    mirrors_agree(&mut clients).await;
    let mountain = clients[0].view.as_ref().unwrap().mountain_magic.clone();
    assert!(mountain.as_ref().unwrap().spells_left > 0);

    // Node a dies: node b takes the table over, Wes gets a fresh snapshot, Ann comes back
    // through node b with her seat token and climbs on from where she was.
    a.kill().await;
    eventually("node b owns the table", async || {
        b.metric("gm_tables").await == 1.0
    })
    .await;
    until_moved(&mut clients[1]).await;
    let (_, token) = clients[0].seat.unwrap();
    let mut back = Client::connected(b.addr).await;
    back.resume(table, token).await.unwrap();
    back.event_frames = std::mem::take(&mut clients[0].event_frames);
    clients[0] = back;
    mirrors_agree(&mut clients).await;
    assert_eq!(clients[0].view.as_ref().unwrap().mountain_magic, mountain);
    climb_steps(&mut clients[0], 6).await;
    let conceded = clients[0].call(|id| ClientMessage::Concede { id }).await;
    assert!(
        matches!(conceded, Ok(ServerMessage::Ack { .. })),
        "{conceded:?}"
    );
    mirrors_agree(&mut clients).await;
    let end = clients[1].view.clone().unwrap();
    assert_eq!(end.stage, wire::StageName::Finished);
    assert_ne!(
        end.mountain_magic, mountain,
        "the climb went on after the takeover"
    );
    let journal = Client::connected(b.addr).await.replay_events(table).await;
    assert_eq!(
        journal.len() as u64,
        end.seq,
        "the journal holds every event once"
    );
    seen_events_are_journaled(&clients, &journal);
}

/// The day's standings asked at a node: its commitment and its climbers, in order.
async fn day_standings(client: &mut Client) -> (String, Vec<String>) {
    let answer = client
        .call(|id| ClientMessage::MountainMagicStandings {
            id,
            day: "today".to_owned(),
            league: None,
            from: 0,
            limit: 100,
        })
        .await
        .unwrap();
    let ServerMessage::MountainMagicStandings {
        commitment,
        standings,
        ..
    } = answer
    else {
        panic!("{answer:?}");
    };
    let mut names: Vec<String> = standings.into_iter().map(|s| s.climber).collect();
    names.sort();
    (commitment, names)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_node_deals_the_same_days_mountain_and_keeps_one_standings() {
    let nats = NatsCluster::start(1).await;
    let a = node(&nats, "a", 1, 1500).await;
    let b = node(&nats, "b", 1, 1500).await;
    // Both nodes ask for the mountain secret at once: one makes it, both use it.
    let (mut at_a, mut at_b) = (
        Client::connected(a.addr).await,
        Client::connected(b.addr).await,
    );
    let ((commitment, none), (other, _)) =
        tokio::join!(day_standings(&mut at_a), day_standings(&mut at_b));
    assert_eq!(commitment, other);
    assert!(none.is_empty());
    let mut bottoms = Vec::new();
    let mut climbers = Vec::new();
    for (addr, name) in [(a.addr, "Ann"), (b.addr, "Bob")] {
        let mut client = Client::connected(addr).await;
        let settings = grand_melee_e2e::CreateTable::new("today", 1)
            .game(wire::GameKind::MountainMagic)
            .mountain_magic(wire::mountain_magic_types::MountainMagicSettings {
                day: Some("today".to_owned()),
                ..Default::default()
            });
        let table = client.create(settings).await.unwrap();
        client.join(table, name).await.unwrap();
        client
            .call(|id| ClientMessage::Start {
                id,
                first_player: None,
                seating: Default::default(),
                order: Vec::new(),
            })
            .await
            .unwrap();
        let view = client.fresh_snapshot().await;
        assert_eq!(view.dice_commitment, commitment);
        bottoms.push(view.mountain_magic.unwrap().mountain[0].clone());
        climbers.push(client);
    }
    assert_eq!(bottoms[0], bottoms[1], "the same deal on both nodes");
    for client in &mut climbers {
        client
            .call(|id| ClientMessage::Concede { id })
            .await
            .unwrap();
    }
    // Each node's climb is in the one standings, whichever node is asked.
    for client in [&mut at_a, &mut at_b] {
        let (_, names) = day_standings(client).await;
        assert_eq!(names, ["Ann", "Bob"]);
    }
}

/// A started 4-seat table created on `owner`, players alternating between `owner` and `other`.
async fn table_across(owner: SocketAddr, other: SocketAddr, name: &str) -> (TableId, Vec<Client>) {
    let mut host = Client::connected(owner).await;
    let table = host.create_table(name, 4, 11).await;
    host.join(table, "Ann").await.unwrap();
    let mut clients = vec![host];
    clients.extend(seat(table, &[(other, "Bob"), (owner, "Cid"), (other, "Dee")]).await);
    let started = clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    keep_all_hands(&mut clients).await;
    (table, clients)
}

/// Waits for a snapshot sent without a request (the table moved) and checks the connection is
/// still open.
async fn until_moved(client: &mut Client) {
    client
        .until(|r| match r {
            Received::Message(m, _) => {
                matches!(**m, ServerMessage::Snapshot { reply_to: None, .. }).then_some(())
            }
            Received::Closed(_) => None,
        })
        .await;
    assert!(client.closed.is_none());
}

/// Concedes until one player is left; checks the one winner and that every event any client saw
/// is the journal's, numbered without a gap or a repeat.
async fn finish_and_check(table: TableId, clients: &mut [Client]) {
    let players: Vec<u16> = clients.iter().map(|c| c.seat.unwrap().0).collect();
    for &player in &players[..players.len() - 1] {
        concede(clients, player).await;
    }
    let view = clients[players.len() - 1].view.clone().unwrap();
    assert_eq!(view.stage, wire::StageName::Finished);
    assert_eq!(view.standings.iter().filter(|s| s.place == 1).count(), 1);
    let journal = clients[0].past_events(table).await;
    assert_eq!(
        journal.len() as u64,
        view.seq,
        "the journal holds every event once"
    );
    seen_events_are_journaled(clients, &journal);
}

/// The clients `which` come back through the node at `addr` (which forwards to the table's new
/// owner), keeping what they saw; once every mirror agrees, the table's journal.
async fn resume_through(
    addr: SocketAddr,
    table: TableId,
    clients: &mut [Client],
    which: &[usize],
) -> Vec<wire::Event> {
    for &i in which {
        let (_, token) = clients[i].seat.unwrap();
        let mut back = Client::connected(addr).await;
        back.resume(table, token).await.unwrap();
        back.event_frames = std::mem::take(&mut clients[i].event_frames);
        clients[i] = back;
    }
    mirrors_agree(clients).await;
    clients[0].past_events(table).await
}

/// The chat lines of a journal.
fn chats(journal: &[wire::Event]) -> Vec<&str> {
    journal
        .iter()
        .filter_map(|e| match e {
            wire::Event::Chat { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// While node a (the owner) is away from the engine: node b takes the table over and its
/// clients (1 and 3) see it move; client 0, on a, says `lost`, which a cannot get written, and
/// client 1 says `kept`, which b does.
async fn b_takes_over_while_a_is_away(
    b: &ServerNode,
    clients: &mut [Client],
    lost: &str,
    kept: &str,
) {
    eventually("node b owns the table", async || {
        b.metric("gm_tables").await == 1.0
    })
    .await;
    for i in [1, 3] {
        until_moved(&mut clients[i]).await;
    }
    let lost = lost.to_owned();
    clients[0].send(|id| ClientMessage::Chat { id, text: lost });
    let kept = kept.to_owned();
    let said = clients[1]
        .call(|id| ClientMessage::Chat { id, text: kept })
        .await;
    assert!(matches!(said, Ok(ServerMessage::Ack { .. })), "{said:?}");
}

/// Node a hears the engine again: its write is refused (another node wrote to the table), it
/// gives the table up and tells its clients (0 and 2) to come back.
async fn a_gives_up(a: &ServerNode, clients: &mut [Client]) {
    for i in [0, 2] {
        let code = clients[i].closed_with().await;
        assert_eq!(code, Some(wire::close::TABLE_MOVED));
    }
    eventually("node a gave the table up", async || {
        a.metric("gm_tables").await == 0.0
    })
    .await;
    assert_eq!(a.metric("gm_cluster_tables_given_up_total").await, 1.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_owner_is_fenced_and_gives_its_table_up() {
    let nats = NatsCluster::start(1).await;
    let a = node(&nats, "a", 1, 1000).await;
    let b = node(&nats, "b", 1, 1000).await;
    let (table, mut clients) = table_across(a.addr, b.addr, "fenced").await;
    play_a_little(&mut clients, 2).await;

    // Node a stops past its lease; node b takes the table over and play goes on there. A
    // player on node a acts while a is stopped: the request waits in a's socket.
    a.signal("STOP");
    b_takes_over_while_a_is_away(&b, &mut clients, "still here?", "a is gone").await;
    // Node a wakes up: its append expects the subject where a left it and is refused.
    a.signal("CONT");
    a_gives_up(&a, &mut clients).await;
    assert!(a.metric("gm_cluster_fenced_appends_total").await >= 1.0);
    // They resume through node a, which now forwards to b.
    let journal = resume_through(a.addr, table, &mut clients, &[0, 2]).await;
    let chats = chats(&journal);
    assert_eq!(chats, ["a is gone"], "the fenced write is nowhere");
    play_a_little(&mut clients, 2).await;
    finish_and_check(table, &mut clients).await;
}

/// The owner cut off from the engine — not killed: a TCP proxy between it and the nats-server
/// keeps its connection open and drops every byte — while it keeps its clients: another node
/// takes the table over; what the cut-off owner tried to write meanwhile is nowhere, it gives the
/// table up once it hears the engine again, and nothing any client saw is lost.
#[tokio::test(flavor = "multi_thread")]
async fn an_owner_cut_off_from_the_engine_gives_its_table_up_and_loses_nothing_seen() {
    let nats = NatsCluster::start(1).await;
    let proxy = CutProxy::start(&nats.url(0)).await;
    let extra = [
        "--cluster".to_owned(),
        proxy.url(),
        "--node-id".to_owned(),
        "a".to_owned(),
        "--cluster-replicas".to_owned(),
        "1".to_owned(),
        "--lease-ms".to_owned(),
        "1000".to_owned(),
    ];
    let a = ServerNode::start(BINARY, "a", &extra).await;
    let b = node(&nats, "b", 1, 1000).await;
    let (table, mut clients) = table_across(a.addr, b.addr, "cut off").await;
    play_a_little(&mut clients, 2).await;

    proxy.set_cut(true);
    b_takes_over_while_a_is_away(&b, &mut clients, "anyone there?", "a is cut off").await;
    proxy.set_cut(false);
    a_gives_up(&a, &mut clients).await;
    // They resume through the node they used: a, just back on the engine, may not have caught
    // up with the directory yet (its copy still names itself), so it asks the directory, and
    // proxies them to b, which tells them so.
    let journal = resume_through(a.addr, table, &mut clients, &[0, 2]).await;
    for i in [0, 2] {
        let owner = format!("ws://{}/ws", b.addr);
        assert_eq!(
            served_at(&mut clients[i], table, PATIENCE).await.as_deref(),
            Some(owner.as_str())
        );
    }
    let chats = chats(&journal);
    assert_eq!(
        chats,
        ["a is cut off"],
        "the cut-off owner's write is nowhere"
    );
    play_a_little(&mut clients, 2).await;
    finish_and_check(table, &mut clients).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn play_goes_on_when_the_streams_nats_leader_dies() {
    let mut nats = NatsCluster::start(3).await;
    let a = node(&nats, "a", 3, 2000).await;
    let b = node(&nats, "b", 3, 2000).await;
    let (table, mut clients) = table_across(a.addr, b.addr, "engine fault").await;
    play_a_little(&mut clients, 2).await;
    let acknowledged = clients[0].view.as_ref().unwrap().seq;

    let leader = nats.wait_for_stream_leader("GM_TABLES", None).await;
    nats.kill(leader);
    // Every move is answered once the engine has a new leader; nothing acknowledged is lost.
    play_a_little(&mut clients, 4).await;
    let new_leader = nats.wait_for_stream_leader("GM_TABLES", Some(leader)).await;
    assert_ne!(new_leader, leader);
    mirrors_agree(&mut clients).await;
    assert!(clients[0].view.as_ref().unwrap().seq > acknowledged);
    finish_and_check(table, &mut clients).await;
    assert_eq!(
        a.metric("gm_tables").await + b.metric("gm_tables").await,
        1.0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_league_game_across_nodes_credits_each_deck_once() {
    use grand_melee_e2e::TestLeague;
    use grand_melee_protocol::league::{LedgerEntry, Purchase, Rarity};

    let nats = NatsCluster::start(1).await;
    let a = node(&nats, "a", 1, 1000).await;
    let b = node(&nats, "b", 1, 1000).await;
    let mut at_a = Client::connected(a.addr).await;
    let mut at_b = Client::connected(b.addr).await;
    let league =
        TestLeague::create(&mut at_a, "Cluster league", &["Ann", "Bob", "Cid", "Dee"]).await;
    // Every node sees the same league.
    assert_eq!(league.view(&mut at_a).await, league.view(&mut at_b).await);
    let listed = at_b
        .call(|id| ClientMessage::ListLeagues {
            id,
            from: 0,
            limit: 10,
        })
        .await
        .unwrap();
    assert!(
        matches!(&listed, ServerMessage::Leagues { leagues, .. } if leagues.iter().any(|l| l.league == league.id && l.members == 4)),
        "{listed:?}"
    );
    // The league table lives on b; members sit down on both nodes.
    let table = league.table(&mut at_b, "league game", 4).await;
    let mut clients = Vec::new();
    for (index, addr) in [(0, a.addr), (1, b.addr), (2, a.addr), (3, b.addr)] {
        let mut client = Client::connected(addr).await;
        league.sit(&mut client, table, index).await.unwrap();
        clients.push(client);
    }
    let seq = clients[3].view.as_ref().unwrap().seq;
    for client in &mut clients {
        client.catch_up(seq).await;
    }
    let view = clients[0].view.clone().unwrap();
    assert!(
        view.players.iter().all(|p| p.deck.is_some()),
        "every seat has its deck"
    );
    let host = view.host.unwrap();
    let starter = clients
        .iter_mut()
        .find(|c| c.seat.unwrap().0 == host)
        .unwrap();
    let started = starter
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    keep_all_hands(&mut clients).await;
    let players: Vec<u16> = clients.iter().map(|c| c.seat.unwrap().0).collect();
    for &player in &players[..3] {
        concede(&mut clients, player).await;
    }
    // Each deck has one credit from the game, seen alike from both nodes: 0 + 1 + 2 + 3 mana
    // points in a four-player game.
    let mut total = 0;
    for member in 0..4 {
        let (deck, ledger) = league.deck(&mut at_a, member).await;
        assert_eq!(
            (deck.clone(), ledger.clone()),
            league.deck(&mut at_b, member).await
        );
        let credits = ledger
            .iter()
            .filter(|l| matches!(&l.entry, LedgerEntry::Credited { table: t, .. } if *t == table))
            .count();
        assert_eq!(credits, 1, "member {member}");
        total += deck.power - deck.spent;
    }
    assert_eq!(total, 6);
    let standings = league.view(&mut at_b).await;
    assert!(
        standings
            .games
            .iter()
            .any(|g| g.table == table && g.finished_at_ms.is_some())
    );

    // The winner (3 points) buys two uncommons (2 points each) at once, one on each node: the
    // league store lets exactly one through.
    let (winner, _, token) = league
        .members
        .iter()
        .find(|(m, _, _)| {
            standings
                .standings
                .iter()
                .any(|s| s.member == *m && s.power == 3)
        })
        .cloned()
        .unwrap();
    let buy = |id| ClientMessage::Buy {
        id,
        league: league.id,
        token,
        purchase: Purchase::Cards {
            rarity: Rarity::Uncommon,
            count: 1,
            gold: false,
            legend: false,
            card: Some("Lightning Bolt".into()),
            set: Some("Mirage".into()),
        },
        remove: 0,
    };
    let first = at_a.send(buy);
    let second = at_b.send(buy);
    let answers = [at_a.reply(first).await, at_b.reply(second).await];
    let bought = answers.iter().filter(|a| a.is_ok()).count();
    assert_eq!(bought, 1, "{answers:?}");
    assert!(
        answers.contains(&Err(wire::ErrorCode::NotEnoughPoints)),
        "{answers:?}"
    );
    let (deck, _) = league.deck(&mut at_b, winner).await;
    assert_eq!(deck.power - deck.spent, 1);
}
#[tokio::test(flavor = "multi_thread")]
async fn twenty_tables_of_28_bots_survive_the_node_that_owns_the_most() {
    use grand_melee_loadtest::PlayConfig;
    use grand_melee_loadtest::witness::Witness;
    use std::sync::Arc;

    const TABLES: usize = 20;
    let nats = NatsCluster::start(3).await;
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
        nodes.push(node(&nats, name, 3, 2000).await);
    }
    let witness = Arc::new(Witness::new());
    let config = PlayConfig {
        urls: nodes.iter().map(|n| format!("ws://{}", n.addr)).collect(),
        tables: TABLES,
        seats: 28,
        games: 1,
        starting_life: 40,
        think: Duration::from_millis(60),
        seed: 16,
        setup_timeout: Duration::from_secs(120),
        patience: Duration::from_secs(400),
        witness: Arc::clone(&witness),
        ..PlayConfig::default()
    };
    let run = tokio::spawn(grand_melee_loadtest::play(config));

    // Mid-game: every table has begun playing.
    let under_way = witness
        .wait_until(Duration::from_secs(180), |w| {
            let tables = w.tables();
            tables.len() == TABLES && tables.iter().all(|t| w.table(*t).len() >= 120)
        })
        .await;
    assert!(under_way, "every table under way");
    let mut owned = Vec::new();
    for node in &nodes {
        owned.push(node.metric("gm_tables").await);
    }
    let victim = (0..nodes.len())
        .max_by(|a, b| owned[*a].total_cmp(&owned[*b]))
        .unwrap();
    assert!(owned[victim] >= 1.0, "{owned:?}");
    nodes[victim].kill().await;

    let outcome = run.await.unwrap().unwrap_or_else(|e| panic!("{e}"));
    assert!(outcome.all_finished, "{}", outcome.summary());
    assert_eq!(outcome.errors, 0, "{}", outcome.summary());
    assert!(
        outcome.witness.conflicts().is_empty(),
        "a number issued twice"
    );
    assert!(outcome.reconnects > 0, "{}", outcome.summary());
    let mut takeovers = 0.0;
    for (i, node) in nodes.iter().enumerate() {
        if i != victim {
            takeovers += node.metric("gm_cluster_takeovers_total").await;
        }
    }
    assert!(
        takeovers >= 1.0 && takeovers <= owned[victim],
        "{takeovers} takeovers of {} tables",
        owned[victim]
    );
    let survivor = nodes[(victim + 1) % nodes.len()].addr;
    assert_eq!(outcome.tables.len(), TABLES);
    for game in &outcome.tables {
        assert!(game.finished, "{game:?}");
        assert!(game.winner().is_some(), "one winner: {game:?}");
        assert_eq!(game.disagreements, 0);
        let table = game.table.unwrap();
        let journal = Client::connected(survivor).await.replay_events(table).await;
        assert!(
            journal
                .iter()
                .any(|e| matches!(e, wire::Event::GameOver { .. })),
            "{table}: the journal holds the game's end"
        );
        let check = witness.check_journal(table, &journal);
        // What bots saw after the game-over mark (players leaving) is not journaled, by design.
        assert!(check.differing.is_empty(), "{table}: {check:?}");
        assert!(check.matching > journal.len() / 2, "{table}: {check:?}");
    }
}

/// Issue 34 (adjourning) in cluster mode: an adjourned table is taken over like any table when
/// its owner dies — still adjourned, listed as adjourned on the surviving node, the asks kept —
/// and its host resumes it there with his seat token.
#[tokio::test(flavor = "multi_thread")]
async fn an_adjourned_table_survives_its_owner_and_is_resumed_on_another_node() {
    let nats = NatsCluster::start(1).await;
    let mut a = node(&nats, "a", 1, 1500).await;
    let b = node(&nats, "b", 1, 1500).await;
    let (table, mut clients) = table_across(a.addr, b.addr, "adjourned across nodes").await;
    play_a_little(&mut clients, 2).await;
    let adjourned = clients[0].call(|id| ClientMessage::Adjourn { id }).await;
    let Ok(ServerMessage::Ack { seq, .. }) = adjourned else {
        panic!("{adjourned:?}");
    };
    for client in &mut clients {
        client.catch_up(seq).await;
    }
    // Bob (on node b) asks to resume.
    let asked = clients[1].call(|id| ClientMessage::ResumeGame { id }).await;
    assert!(matches!(asked, Ok(ServerMessage::Ack { .. })), "{asked:?}");
    let before = clients[1].view.clone().unwrap();
    assert!(before.adjourned);
    assert_eq!(before.resume_asks, [1]);
    let mut lobby_b = Client::connected(b.addr).await;
    eventually("node b lists the table adjourned", async || {
        lobby_b
            .list_tables()
            .await
            .iter()
            .any(|t| t.table == table && t.adjourned)
    })
    .await;

    a.kill().await;
    eventually("node b owns the table", async || {
        b.metric("gm_tables").await == 1.0
    })
    .await;
    until_moved(&mut clients[1]).await;
    let view = clients[1].view.clone().unwrap();
    assert!(view.adjourned, "still adjourned after the takeover");
    assert_eq!(view.resume_asks, [1]);
    assert_eq!(view.turns, before.turns);
    assert!(
        lobby_b
            .list_tables()
            .await
            .iter()
            .any(|t| t.table == table && t.adjourned)
    );
    // The host comes back through node b and resumes the game.
    let (_, token) = clients[0].seat.unwrap();
    let mut host = Client::connected(b.addr).await;
    host.resume(table, token).await.unwrap();
    let resumed = host.call(|id| ClientMessage::ResumeGame { id }).await;
    let Ok(ServerMessage::Ack { seq, .. }) = resumed else {
        panic!("{resumed:?}");
    };
    clients[1].catch_up(seq).await;
    let view = clients[1].view.clone().unwrap();
    assert!(!view.adjourned);
    assert_eq!(view.turns, before.turns, "play goes on where it stopped");
    eventually("node b lists the table in play", async || {
        lobby_b
            .list_tables()
            .await
            .iter()
            .any(|t| t.table == table && !t.adjourned)
    })
    .await;
}

/// Turns a client's camera on and waits until its `camera_peers` lists `expected` (player ids).
async fn camera_linked(client: &mut Client, expected: &[u16]) {
    let answer = client
        .call(|id| ClientMessage::Camera {
            id,
            on: true,
            stream: false,
            stay: false,
        })
        .await;
    assert!(
        matches!(answer, Ok(ServerMessage::IceServers { .. })),
        "{answer:?}"
    );
    if !expected.is_empty() {
        // (A list that stays empty is not sent.)
        until_peers(client, expected).await;
    }
}

/// Receives until a `camera_peers` lists exactly `expected` (player ids).
async fn until_peers(client: &mut Client, expected: &[u16]) {
    let want: Vec<wire::Peer> = expected.iter().map(|&p| wire::Peer::Player(p)).collect();
    client
        .until(|r| match r {
            Received::Message(m, _) => match &**m {
                ServerMessage::CameraPeers { peers } => {
                    let got: Vec<wire::Peer> = peers.iter().map(|p| p.peer).collect();
                    (got == want).then_some(())
                }
                _ => None,
            },
            Received::Closed(_) => None,
        })
        .await;
}

/// Every client turns its camera on, one after the other; at the end each is linked with every
/// other (`ids`: the clients' player ids, everyone within everyone's range).
async fn all_cameras_on(clients: &mut [Client], ids: &[u16]) {
    let sorted = |mut v: Vec<u16>| {
        v.sort_unstable();
        v
    };
    for (i, client) in clients.iter_mut().enumerate() {
        camera_linked(client, &sorted(ids[..i].to_vec())).await;
    }
    // (The last one's whole list came with its own camera.)
    let last = clients.len() - 1;
    for (i, client) in clients.iter_mut().enumerate().take(last) {
        let others = ids.iter().copied().filter(|&p| p != ids[i]).collect();
        until_peers(client, &sorted(others)).await;
    }
}

/// Sends a signal from `from` to `to` and waits until `to` receives it, byte for byte.
async fn signal_arrives(clients: &mut [Client], from: usize, to: usize, payload: &str) {
    let sender = clients[from].seat.unwrap().0;
    let target = clients[to].seat.unwrap().0;
    let sent = clients[from]
        .call(|id| ClientMessage::Signal {
            id,
            to: wire::Peer::Player(target),
            payload: payload.to_owned(),
        })
        .await;
    assert!(matches!(sent, Ok(ServerMessage::Ack { .. })), "{sent:?}");
    clients[to]
        .until(|r| match r {
            Received::Message(m, _) => match &**m {
                ServerMessage::Signal { from, payload: p } => {
                    assert_eq!(*from, wire::Peer::Player(sender));
                    assert_eq!(p, payload);
                    Some(())
                }
                _ => None,
            },
            Received::Closed(_) => None,
        })
        .await;
}

/// Cameras in cluster mode: players connected to the node that does not own the table are
/// linked and signalled through it like the owner's own; after a takeover (the camera state is
/// not journaled, so it starts empty) the pages send `camera` again, as PROTOCOL.md says, and
/// the links and signals work on the new owner.
#[tokio::test(flavor = "multi_thread")]
async fn camera_links_and_signals_cross_nodes_and_come_back_after_a_takeover() {
    let nats = NatsCluster::start(1).await;
    let mut a = node(&nats, "a", 1, 1500).await;
    let b = node(&nats, "b", 1, 1500).await;
    // Four players, spell range 2: everyone is within everyone's range. Ann and Cid are on a
    // (the owner), Bob and Dee on b.
    let (table, mut clients) = table_across(a.addr, b.addr, "cameras across").await;
    let ids: Vec<u16> = clients.iter().map(|c| c.seat.unwrap().0).collect();
    all_cameras_on(&mut clients, &ids).await;
    signal_arrives(&mut clients, 1, 2, "{\"description\":\"b to a\"}").await;
    signal_arrives(&mut clients, 0, 3, "{\"description\":\"a to b\"}").await;
    signal_arrives(&mut clients, 3, 1, "{\"candidate\":\"b to b\"}").await;

    a.kill().await;
    eventually("node b owns the table", async || {
        b.metric("gm_tables").await == 1.0
    })
    .await;
    for i in [1, 3] {
        until_moved(&mut clients[i]).await;
    }
    for i in [0, 2] {
        let (_, token) = clients[i].seat.unwrap();
        let mut back = Client::connected(b.addr).await;
        back.resume(table, token).await.unwrap();
        clients[i] = back;
    }
    // Nothing of the cameras came across: each page turns its camera on again.
    all_cameras_on(&mut clients, &ids).await;
    signal_arrives(
        &mut clients,
        2,
        1,
        "{\"description\":\"after the takeover\"}",
    )
    .await;
    signal_arrives(&mut clients, 1, 0, "{\"candidate\":\"after the takeover\"}").await;
}

/// A member holds one unfinished league seat at a time across the whole cluster, not per node:
/// Eve sits at "one" (owned by node a) and is refused at "two" (owned by node b), whichever
/// node she asks through; once she leaves "one"'s lobby she may sit at "two", and then "one"
/// refuses her. Gus, seated nowhere, sits at "two" at once. When node a dies, node b takes
/// "one" over with its seats: Fay, seated there, is still refused elsewhere until she leaves.
#[tokio::test(flavor = "multi_thread")]
async fn a_league_member_holds_one_unfinished_seat_across_the_nodes() {
    use grand_melee_e2e::TestLeague;

    let nats = NatsCluster::start(1).await;
    let mut a = node(&nats, "a", 1, 1000).await;
    let b = node(&nats, "b", 1, 1000).await;
    let mut at_a = Client::connected(a.addr).await;
    let mut at_b = Client::connected(b.addr).await;
    let league = TestLeague::create(&mut at_a, "Two nodes", &["Eve", "Fay", "Gus"]).await;
    let one = league.table(&mut at_a, "one", 2).await;
    let two = league.table(&mut at_b, "two", 2).await;
    assert_eq!(a.metric("gm_tables").await, 1.0, "node a owns one");
    assert_eq!(b.metric("gm_tables").await, 1.0, "node b owns two");

    let mut eve = Client::connected(a.addr).await;
    league.sit(&mut eve, one, 0).await.unwrap();
    for addr in [b.addr, a.addr] {
        let mut eve2 = Client::connected(addr).await;
        assert_eq!(
            league.sit(&mut eve2, two, 0).await,
            Err(ErrorCode::AlreadySeated),
            "through {addr}"
        );
    }
    let mut gus = Client::connected(b.addr).await;
    league.sit(&mut gus, two, 2).await.unwrap();

    // Eve leaves "one": her seat is free, and she sits at "two"; now "one" refuses her.
    let left = eve.call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    let mut eve2 = Client::connected(b.addr).await;
    league.sit(&mut eve2, two, 0).await.unwrap();
    let mut eve3 = Client::connected(a.addr).await;
    assert_eq!(
        league.sit(&mut eve3, one, 0).await,
        Err(ErrorCode::AlreadySeated),
        "now she sits at two"
    );
    // Fay, seated nowhere, sits at "one".
    let mut fay = Client::connected(b.addr).await;
    league.sit(&mut fay, one, 1).await.unwrap();

    // Node a dies; node b takes "one" over, and Fay's seat there with it.
    let three = league.table(&mut at_b, "three", 2).await;
    drop((eve, eve3, at_a));
    a.kill().await;
    until_moved(&mut fay).await;
    assert_eq!(
        b.metric("gm_tables").await,
        3.0,
        "node b owns one, two, three"
    );
    let mut fay2 = Client::connected(b.addr).await;
    assert_eq!(
        league.sit(&mut fay2, three, 1).await,
        Err(ErrorCode::AlreadySeated),
        "she still sits at one"
    );
    let left = fay.call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    league.sit(&mut fay2, three, 1).await.unwrap();
}
