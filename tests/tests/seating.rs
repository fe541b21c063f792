//! Seating as the organiser wants it and calling the host, at the socket level: the host seats
//! the table by the dice, in join order or as he arranged it; a seating that does not fit is
//! refused and changes nothing; `game_started`, the snapshot and `grand-melee verify` say which;
//! a player's call reaches the host, is rate-limited, and a ruling answers it.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, TestServer, concede_in_order, started_game};
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Event, HostCall, PlayerId, Ruling, SeatingMode, ServerMessage,
    StageName, TableId,
};

/// Four clients seated at a new table, client `i` is player `i` (client 0 the host).
async fn lobby(server: &TestServer) -> (TableId, Vec<Client>) {
    let mut clients = Vec::new();
    let mut host = server.client().await;
    let table = host.create_table("seating", 4, 7).await;
    clients.push(host);
    for _ in 1..4 {
        clients.push(server.client().await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        client.join(table, &format!("player {i}")).await.unwrap();
    }
    let seq = clients[3].view.as_ref().unwrap().seq;
    for client in &mut clients {
        client.catch_up(seq).await;
    }
    (table, clients)
}

fn start(seating: SeatingMode, order: Vec<PlayerId>) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::Start {
        id,
        first_player: None,
        seating,
        order,
    }
}

async fn catch_up_all(clients: &mut [Client]) {
    let seq = clients
        .iter()
        .filter_map(|c| c.view.as_ref().map(|v| v.seq))
        .max()
        .unwrap_or(0);
    for client in clients.iter_mut() {
        client.catch_up(seq).await;
    }
}

#[tokio::test]
async fn each_seating_gives_its_ring_says_which_and_verifies_for_what_is_random() {
    let server = TestServer::start().await;
    for (seating, order, expected) in [
        (SeatingMode::Joined, Vec::new(), Some(vec![0, 1, 2, 3])),
        (
            SeatingMode::Arranged,
            vec![2, 0, 3, 1],
            Some(vec![2, 0, 3, 1]),
        ),
        (SeatingMode::Random, Vec::new(), None),
    ] {
        let (table, mut clients) = lobby(&server).await;
        let started = clients[0].call(start(seating, order)).await;
        assert!(
            matches!(started, Ok(ServerMessage::Ack { .. })),
            "{started:?}"
        );
        // Every player is told how the table was seated.
        let (ring, mode) = clients[1]
            .until_event(|e| match e {
                Event::GameStarted {
                    seating,
                    seating_mode,
                    ..
                } => Some((seating.clone(), *seating_mode)),
                _ => None,
            })
            .await;
        assert_eq!(mode, seating);
        if let Some(expected) = &expected {
            assert_eq!(&ring, expected);
        }
        let snapshot = clients[2].fresh_snapshot().await;
        assert_eq!(snapshot.seating_mode, Some(seating));
        assert_eq!(snapshot.ring, ring);
        catch_up_all(&mut clients).await;
        assert_eq!(
            clients[3].view.as_ref().unwrap().seating_mode,
            Some(seating)
        );
        // Played to the end, the dice check out: the seating itself only if it was theirs.
        let standings = concede_in_order(&mut clients, &[ring[1], ring[2], ring[3]]).await;
        assert_eq!(standings.len(), 4);
        let events = clients[0].past_events(table).await;
        let verified =
            grand_melee_protocol::dice::verify((1u64..).zip(&events)).expect("the game verifies");
        assert_eq!(verified.seating, seating);
        assert_eq!(verified.players, 4);
    }
}

#[tokio::test]
async fn a_seating_that_does_not_fit_is_refused_and_changes_nothing() {
    let server = TestServer::start().await;
    let (_, mut clients) = lobby(&server).await;
    let before = clients[0].fresh_snapshot().await;
    for (seating, order) in [
        (SeatingMode::Arranged, vec![0, 1, 2]),    // a player missing
        (SeatingMode::Arranged, vec![0, 1, 2, 2]), // a player twice
        (SeatingMode::Arranged, vec![0, 1, 2, 9]), // nobody seated has id 9
        (SeatingMode::Arranged, Vec::new()),       // arranged without an order
        (SeatingMode::Joined, vec![3, 2, 1, 0]),   // an order without arranged
    ] {
        let refused = clients[0].call(start(seating, order.clone())).await;
        assert_eq!(refused, Err(ErrorCode::BadSeating), "{seating:?} {order:?}");
    }
    // Not the host's: refused for that first.
    let refused = clients[1]
        .call(start(SeatingMode::Arranged, vec![3, 2, 1, 0]))
        .await;
    assert_eq!(refused, Err(ErrorCode::NotHost));
    assert_eq!(clients[0].fresh_snapshot().await, before);
    assert_eq!(before.stage, StageName::Lobby);
    assert_eq!(before.seating_mode, None);
    // A good order then starts the game as arranged.
    let started = clients[0]
        .call(start(SeatingMode::Arranged, vec![3, 2, 1, 0]))
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    let view = clients[0].fresh_snapshot().await;
    assert_eq!(view.ring, [3, 2, 1, 0]);
    assert_eq!(view.seating_mode, Some(SeatingMode::Arranged));
}

#[tokio::test]
async fn a_call_reaches_the_host_is_rate_limited_and_a_ruling_answers_it() {
    let server = TestServer::start().await;
    let (table, mut clients) = started_game(&server, 4, 3).await;
    let mut spectator = server.client().await;
    spectator.watch(table).await;
    let called = clients[2]
        .call(|id| ClientMessage::CallHost {
            id,
            reason: "is Wrath resolved before Regrowth?".into(),
        })
        .await;
    assert!(
        matches!(called, Ok(ServerMessage::Ack { .. })),
        "{called:?}"
    );
    // The host is told who called and why.
    let call = clients[0]
        .until_event(|e| match e {
            Event::HostCalled { player, reason } => Some((*player, reason.clone())),
            _ => None,
        })
        .await;
    assert_eq!(call, (2, "is Wrath resolved before Regrowth?".to_owned()));
    let open = vec![HostCall {
        player: 2,
        reason: "is Wrath resolved before Regrowth?".into(),
    }];
    assert_eq!(clients[0].view.as_ref().unwrap().calls, open);
    assert_eq!(clients[1].fresh_snapshot().await.calls, open);
    // Once per 30 seconds per player; a spectator may not call; the reason is one short line.
    let again = clients[2]
        .call(|id| ClientMessage::CallHost {
            id,
            reason: "hello?".into(),
        })
        .await;
    assert_eq!(again, Err(ErrorCode::RateLimited));
    let watcher = spectator
        .call(|id| ClientMessage::CallHost {
            id,
            reason: "me too".into(),
        })
        .await;
    assert_eq!(watcher, Err(ErrorCode::NotAPlayer));
    let long = clients[1]
        .call(|id| ClientMessage::CallHost {
            id,
            reason: "x".repeat(121),
        })
        .await;
    assert_eq!(long, Err(ErrorCode::ChatTooLong));
    let not_host = clients[1]
        .call(|id| ClientMessage::AnswerCall { id, player: None })
        .await;
    assert_eq!(not_host, Err(ErrorCode::NotHost));
    assert_eq!(clients[1].fresh_snapshot().await.calls, open);
    // A ruling answers it: `host_answered` comes in the ruling's batch.
    let ruled = clients[0]
        .call(|id| ClientMessage::Ruling {
            id,
            ruling: Ruling::SetLife {
                player: 2,
                life: 17,
            },
        })
        .await;
    assert!(matches!(ruled, Ok(ServerMessage::Ack { .. })), "{ruled:?}");
    let batch = clients[2]
        .until_batch(|e| matches!(e, Event::HostAnswered { .. }))
        .await;
    assert!(
        matches!(
            batch.as_slice(),
            [
                Event::LifeChanged {
                    player: 2,
                    life: 17
                },
                Event::HostAnswered { player: None }
            ]
        ),
        "{batch:?}"
    );
    assert!(clients[2].view.as_ref().unwrap().calls.is_empty());
    assert!(clients[0].fresh_snapshot().await.calls.is_empty());
    let nothing = clients[0]
        .call(|id| ClientMessage::AnswerCall { id, player: None })
        .await;
    assert_eq!(nothing, Err(ErrorCode::NoOpenCall));
    // The call is in the table's record (a replay shows it).
    let events = clients[0].past_events(table).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::HostCalled { player: 2, .. }))
    );
}

/// Issue 43, item 11: leaving a lobby and joining again (a new seat, a new player number)
/// started the 30-second call interval over: 20 alerts in 20 cycles. Now the new seat from the
/// same address inherits the call; a player from another address is not held up.
#[tokio::test]
async fn leaving_and_joining_again_does_not_reset_the_call_interval() {
    let server = TestServer::start().await;
    let (table, mut clients) = lobby(&server).await;
    let call = |reason: &'static str| {
        move |id| ClientMessage::CallHost {
            id,
            reason: reason.into(),
        }
    };
    let called = clients[3].call(call("when do we start?")).await;
    assert!(
        matches!(called, Ok(ServerMessage::Ack { .. })),
        "{called:?}"
    );
    for _ in 0..3 {
        let left = clients[3].call(|id| ClientMessage::Leave { id }).await;
        assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
        clients[3].join(table, "player 3").await.unwrap();
        assert_eq!(
            clients[3].call(call("hello?")).await,
            Err(ErrorCode::RateLimited)
        );
    }
    // Player 1 gives his seat to a neighbour on another network.
    let left = clients[1].call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    let mut elsewhere = Client::connected_from(server.addr, "127.0.0.9".parse().unwrap()).await;
    elsewhere.join(table, "neighbour").await.unwrap();
    let called = elsewhere.call(call("me too")).await;
    assert!(
        matches!(called, Ok(ServerMessage::Ack { .. })),
        "{called:?}"
    );
}

/// Issue 43, item 11: a kicked player's open call stayed in the table's `calls`, where nobody
/// could answer it. Now it goes with him: `host_answered` in the kick's batch.
#[tokio::test]
async fn a_kicked_players_call_leaves_the_open_calls() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 4, 3).await;
    let called = clients[2]
        .call(|id| ClientMessage::CallHost {
            id,
            reason: "look".into(),
        })
        .await;
    assert!(
        matches!(called, Ok(ServerMessage::Ack { .. })),
        "{called:?}"
    );
    clients[0]
        .until_event(|e| matches!(e, Event::HostCalled { player: 2, .. }).then_some(()))
        .await;
    let kicked = clients[0]
        .call(|id| ClientMessage::Kick {
            id,
            player: 2,
            ban: false,
        })
        .await;
    assert!(
        matches!(kicked, Ok(ServerMessage::Ack { .. })),
        "{kicked:?}"
    );
    let batch = clients[1]
        .until_batch(|e| matches!(e, Event::PlayerKicked { .. }))
        .await;
    assert!(
        batch.contains(&Event::HostAnswered { player: Some(2) }),
        "{batch:?}"
    );
    assert!(clients[1].view.as_ref().unwrap().calls.is_empty());
    assert!(clients[0].fresh_snapshot().await.calls.is_empty());
}
