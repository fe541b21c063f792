//! The server over real sockets: rejections, resume, isolation between tables, fan-out, HTTP
//! endpoints and graceful shutdown.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, Received, TestServer, http_get, started_game};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, MAX_CLIENT_MESSAGE_BYTES, Phase, ServerMessage,
    TurnStateName, close,
};

#[tokio::test]
async fn acting_out_of_turn_is_rejected_and_changes_nothing() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 15, 1).await;
    let running = clients[0].running_players();
    let idle = (0..15u16).find(|p| !running.contains(p)).unwrap();
    let client = &mut clients[usize::from(idle)];
    let before = client.fresh_snapshot().await;
    let answer = client.call(|id| ClientMessage::EndTurn { id }).await;
    assert_eq!(answer.unwrap_err(), ErrorCode::NotYourTurn);
    let attack = client
        .call(|id| ClientMessage::Attack {
            id,
            target: running[0],
            damage: 1,
            poison: 0,
        })
        .await;
    assert_eq!(attack.unwrap_err(), ErrorCode::NotYourTurn);
    assert_eq!(client.fresh_snapshot().await, before);
}

#[tokio::test]
async fn attacking_out_of_range_is_rejected_and_changes_nothing() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 15, 2).await;
    let attacker = clients[0].running_players()[0];
    let client = &mut clients[usize::from(attacker)];
    let phase = client
        .call(|id| ClientMessage::SetPhase {
            id,
            phase: Phase::Combat,
        })
        .await;
    assert!(matches!(phase, Ok(ServerMessage::Ack { .. })));
    let before = client.fresh_snapshot().await;
    let table = grand_melee_protocol::rules::Table::from_view(&before).unwrap();
    let far = before
        .players
        .iter()
        .map(|p| p.player)
        .find(|&p| table.distance(attacker, p).unwrap() > 2)
        .unwrap();
    assert!(!before.player(attacker).unwrap().may_attack.contains(&far));
    let answer = client
        .call(|id| ClientMessage::Attack {
            id,
            target: far,
            damage: 5,
            poison: 0,
        })
        .await;
    assert_eq!(answer.unwrap_err(), ErrorCode::OutOfRange);
    assert_eq!(client.fresh_snapshot().await, before);
}

#[tokio::test]
async fn joining_a_full_table_is_rejected_and_changes_nothing() {
    let server = TestServer::start().await;
    let mut host = server.client().await;
    let table = host.create_table("two seats", 2, 3).await;
    host.join(table, "first").await.unwrap();
    let mut second = server.client().await;
    second.join(table, "second").await.unwrap();
    host.catch_up(second.view.as_ref().unwrap().seq).await;
    let before = host.fresh_snapshot().await;
    let mut third = server.client().await;
    assert_eq!(
        third.join(table, "third").await.unwrap_err(),
        ErrorCode::TableFull
    );
    assert_eq!(host.fresh_snapshot().await, before);
    // A name already taken and a bad name are typed errors too.
    let mut fourth = server.client().await;
    let other = fourth.create_table("other", 3, 4).await;
    fourth.join(other, "Ann").await.unwrap();
    let mut fifth = server.client().await;
    assert_eq!(
        fifth.join(other, "ann").await.unwrap_err(),
        ErrorCode::NameTaken
    );
    assert_eq!(
        fifth.join(other, "   ").await.unwrap_err(),
        ErrorCode::BadName
    );
}

#[tokio::test]
async fn malformed_frames_get_bad_message_and_the_connection_goes_on() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 4, 5).await;
    let client = &mut clients[1];
    let before = client.fresh_snapshot().await;
    for garbage in [
        vec![0xc1],                         // never used in MessagePack
        vec![0xdd, 0xff, 0xff, 0xff, 0xff], // an array claiming 4 billion items
        wire::encode_client(&ClientMessage::EndTurn { id: 9 })[..5].to_vec(), // truncated
        vec![
            0x81, 0xa4, b't', b'y', b'p', b'e', 0xa4, b'n', b'o', b'p', b'e',
        ], // unknown type
    ] {
        client.send_raw(garbage);
        let error = client
            .until(|r| match r {
                Received::Message(m, _) => match **m {
                    ServerMessage::Error { code, reply_to, .. } => Some((code, reply_to)),
                    _ => None,
                },
                _ => None,
            })
            .await;
        assert_eq!(error, (ErrorCode::BadMessage, None));
    }
    client.send_text("{\"type\":\"hello\"}");
    let error = client
        .until(|r| match r {
            Received::Message(m, _) => match **m {
                ServerMessage::Error { code, .. } => Some(code),
                _ => None,
            },
            _ => None,
        })
        .await;
    assert_eq!(error, ErrorCode::BadMessage);
    assert_eq!(
        client.fresh_snapshot().await,
        before,
        "still served, nothing changed"
    );
}

/// Receives on `client` until its mirror shows `player` with the given connection status.
async fn until_connected_is(client: &mut Client, player: u16, connected: bool) {
    while client
        .view
        .as_ref()
        .unwrap()
        .player(player)
        .unwrap()
        .connected
        != connected
    {
        if let Received::Closed(code) = client.recv().await {
            panic!("closed ({code:?})");
        }
    }
}

#[tokio::test]
async fn an_oversized_frame_closes_with_1009_and_others_are_unaffected() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 4, 6).await;
    let before = clients[0].fresh_snapshot().await;
    clients[2].send_raw(vec![0x90; MAX_CLIENT_MESSAGE_BYTES + 1]);
    assert_eq!(clients[2].closed_with().await, Some(close::MESSAGE_TOO_BIG));
    // The others see the player disconnected, and nothing else changed.
    until_connected_is(&mut clients[0], 2, false).await;
    let mut expected = before.clone();
    expected.seq += 1;
    expected
        .players
        .iter_mut()
        .filter(|p| p.player == 2)
        .for_each(|p| p.connected = false);
    assert_eq!(clients[0].fresh_snapshot().await, expected);
}

#[tokio::test]
async fn a_wrong_protocol_version_gets_an_error_and_a_close() {
    let server = TestServer::start().await;
    let mut client = Client::connect(server.addr).await;
    // Anything before hello is refused.
    let early = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 100,
        })
        .await;
    assert_eq!(early.unwrap_err(), ErrorCode::HelloRequired);
    let answer = client
        .call(|id| ClientMessage::Hello {
            id,
            protocol: 99,
            client: "from the future".into(),
        })
        .await;
    assert_eq!(answer.unwrap_err(), ErrorCode::UnsupportedVersion);
    assert_eq!(client.closed_with().await, Some(close::PROTOCOL_ERROR));
    // The server goes on serving others.
    let mut other = server.client().await;
    let tables = other
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 100,
        })
        .await;
    assert!(matches!(tables, Ok(ServerMessage::Tables { .. })));
}

#[tokio::test]
async fn a_dropped_player_resumes_with_his_token_and_plays_on() {
    let server = TestServer::start().await;
    let (table, mut clients) = started_game(&server, 6, 7).await;
    let runner = clients[0].running_players()[0];
    let watcher: u16 = if runner == 0 { 1 } else { 0 };
    let (player, token) = clients[usize::from(runner)].seat.unwrap();
    assert_eq!(player, runner);
    clients[usize::from(runner)].drop_connection();
    until_connected_is(&mut clients[usize::from(watcher)], runner, false).await;

    // A bad token and a token for another table are refused.
    let mut back = server.client().await;
    let bad = back
        .call(|id| ClientMessage::Resume {
            id,
            table,
            token: grand_melee_protocol::SeatToken::new_random(),
        })
        .await;
    assert_eq!(bad.unwrap_err(), ErrorCode::BadToken);
    let other = back.create_table("elsewhere", 4, 8).await;
    let wrong_table = back
        .call(|id| ClientMessage::Resume {
            id,
            table: other,
            token,
        })
        .await;
    assert_eq!(wrong_table.unwrap_err(), ErrorCode::BadToken);

    // The right token puts him back in his seat with a fresh snapshot.
    assert_eq!(back.resume(table, token).await, Ok(runner));
    let view = back.view.clone().unwrap();
    assert!(view.player(runner).unwrap().connected);
    assert_eq!(view.turn_of(runner).unwrap().state, TurnStateName::Running);
    until_connected_is(&mut clients[usize::from(watcher)], runner, true).await;
    // And he continues his turn.
    let ended = back.call(|id| ClientMessage::EndTurn { id }).await;
    assert!(matches!(ended, Ok(ServerMessage::Ack { .. })), "{ended:?}");
}

#[tokio::test]
async fn two_tables_play_at_once_without_seeing_each_others_events() {
    let server = TestServer::start().await;
    let (table_a, mut a) = started_game(&server, 5, 9).await;
    let (table_b, mut b) = started_game(&server, 5, 10).await;
    for round in 0..6 {
        for (clients, _) in [(&mut a, table_a), (&mut b, table_b)] {
            let runner = clients[0].running_players()[0];
            let ended = clients[usize::from(runner)]
                .call(|id| ClientMessage::EndTurn { id })
                .await;
            assert!(
                matches!(ended, Ok(ServerMessage::Ack { .. })),
                "round {round}"
            );
            let last = clients[usize::from(runner)].view.as_ref().unwrap().seq;
            for client in clients.iter_mut() {
                client.catch_up(last).await;
            }
        }
    }
    for (clients, table) in [(&a, table_a), (&b, table_b)] {
        for client in clients {
            let mut expected_seq = None;
            for (seq, bytes) in &client.event_frames {
                let ServerMessage::Events {
                    table: t, events, ..
                } = wire::decode_server(bytes).unwrap()
                else {
                    panic!("an events frame");
                };
                assert_eq!(t, table, "only its own table's events");
                if let Some(expected) = expected_seq {
                    assert_eq!(*seq, expected, "sequence numbers are consecutive");
                }
                expected_seq = Some(seq + events.len() as u64);
            }
        }
    }
}

#[tokio::test]
async fn one_action_reaches_28_seats_and_a_spectator_with_identical_bytes() {
    let server = TestServer::start().await;
    let (table, mut clients) = started_game(&server, 28, 11).await;
    let mut spectator = server.client().await;
    spectator.watch(table).await;
    let runner = clients[0].running_players()[0];
    let ended = clients[usize::from(runner)]
        .call(|id| ClientMessage::EndTurn { id })
        .await;
    let Ok(ServerMessage::Ack { seq, .. }) = ended else {
        panic!("{ended:?}");
    };
    clients.push(spectator);
    let mut frames = Vec::new();
    for client in &mut clients {
        client.catch_up(seq).await;
        let (_, bytes) = client
            .event_frames
            .iter()
            .rev()
            .find(|(first, _)| *first <= seq)
            .unwrap()
            .clone();
        frames.push(bytes);
    }
    assert_eq!(frames.len(), 29);
    assert!(
        frames.iter().all(|f| *f == frames[0]),
        "every member got the same bytes"
    );
    let ServerMessage::Events { events, .. } = wire::decode_server(&frames[0]).unwrap() else {
        panic!("an events frame");
    };
    assert!(
        events
            .iter()
            .any(|e| matches!(e, wire::Event::TurnEnded { player, .. } if *player == runner))
    );
}

#[tokio::test]
async fn health_and_metrics_over_plain_http() {
    let server = TestServer::start().await;
    let health = http_get(server.addr, "/healthz").await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.ends_with("ok\n"));
    let mut client = server.client().await;
    client.create_table("counted", 4, 12).await;
    let metrics = http_get(server.addr, "/metrics").await;
    assert!(metrics.contains("\ngm_tables 1\n"), "{metrics}");
    assert!(metrics.contains("\ngm_websockets_open 1\n"), "{metrics}");
    assert!(metrics.contains("gm_broadcast_latency_seconds_bucket"));
    // The journal's writer: creating the table was at least one transaction, and every
    // transaction is in the histogram of commit times.
    let counter = |name: &str| -> u64 {
        let prefix = format!("\n{name} ");
        let at = metrics
            .find(&prefix)
            .unwrap_or_else(|| panic!("{name}: {metrics}"));
        metrics[at + prefix.len()..]
            .lines()
            .next()
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{name}: {metrics}"))
    };
    let commits = counter("gm_journal_commits_total");
    assert!(commits >= 1, "{metrics}");
    assert!(counter("gm_journal_operations_total") >= commits);
    assert_eq!(counter("gm_journal_commit_seconds_count"), commits);
    assert_eq!(
        counter("gm_journal_commit_seconds_bucket{le=\"+Inf\"}"),
        commits
    );
    let missing = http_get(server.addr, "/nope").await;
    assert!(missing.starts_with("HTTP/1.1 404"));
}

#[tokio::test]
async fn shutdown_closes_every_client_with_1001() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 3, 13).await;
    let mut idle = server.client().await;
    let shutdown = tokio::spawn(server.shutdown());
    for client in &mut clients {
        assert_eq!(client.closed_with().await, Some(close::GOING_AWAY));
    }
    assert_eq!(idle.closed_with().await, Some(close::GOING_AWAY));
    shutdown.await.unwrap();
}

/// A plain WebSocket connection's session (reading, answering and writing what the kernel did
/// not take at once) runs in one of the server's hosts, many sessions to a task: 20
/// connections in the lobby add no task of their own (a task each, or a reader and a writer
/// each, would add 20 or 40).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_sessions_run_in_hosts_not_tasks_of_their_own() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let server = TestServer::start().await;
    let url = format!("ws://{}/ws", server.addr);
    let hello = |id| {
        wire::encode_client(&ClientMessage::Hello {
            id,
            protocol: wire::PROTOCOL_VERSION,
            client: "tasks".into(),
        })
    };
    // Connected and welcomed: the session is in its steady state.
    async fn welcomed(
        url: &str,
        hello: Vec<u8>,
    ) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>
    {
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        ws.send(Message::Binary(hello.into())).await.unwrap();
        loop {
            match ws.next().await.unwrap().unwrap() {
                Message::Binary(bytes) => {
                    let message = wire::decode_server(&bytes).unwrap();
                    assert!(
                        matches!(message, ServerMessage::Welcome { .. }),
                        "{message:?}"
                    );
                    return ws;
                }
                _ => continue,
            }
        }
    }
    // One first, so that whatever the server starts lazily has started.
    let first = welcomed(&url, hello(1)).await;
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let mut open = vec![first];
    for id in 0..20 {
        open.push(welcomed(&url, hello(id)).await);
    }
    // (A handshake's task may still be ending as its session starts: a few at most.)
    let added = metrics.num_alive_tasks().saturating_sub(before);
    assert!(
        added < 5,
        "20 connections added {added} tasks (their sessions run in the hosts)"
    );
    drop(open);
}

/// Over TLS too (where a writer task of its own writes each connection's frames), the shutdown
/// closes every WebSocket with 1001 and the server stops: the hosts kick each session, and
/// each writer task ends with its connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_shutdown_closes_every_client_with_1001() {
    use futures_util::{SinkExt, StreamExt};
    use grand_melee_e2e::SelfSigned;
    use tokio_rustls::rustls::pki_types;
    use tokio_tungstenite::tungstenite::Message;

    let certificate = SelfSigned::new();
    let server = TestServer::start_with(certificate.config()).await;
    let connector = certificate.connector();
    let url = format!("wss://localhost:{}/ws", server.addr.port());
    let mut clients = Vec::new();
    for id in 0..5 {
        let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let name = pki_types::ServerName::try_from("localhost").unwrap();
        let tls = connector.connect(name, tcp).await.unwrap();
        let (mut ws, _) = tokio_tungstenite::client_async(url.as_str(), tls)
            .await
            .unwrap();
        let hello = wire::encode_client(&ClientMessage::Hello {
            id,
            protocol: wire::PROTOCOL_VERSION,
            client: "tls".into(),
        });
        ws.send(Message::Binary(hello.into())).await.unwrap();
        // Welcomed: the session is in its hosts, its writer task running.
        loop {
            if let Message::Binary(bytes) = ws.next().await.unwrap().unwrap() {
                let message = wire::decode_server(&bytes).unwrap();
                assert!(
                    matches!(message, ServerMessage::Welcome { .. }),
                    "{message:?}"
                );
                break;
            }
        }
        clients.push(ws);
    }
    let shutdown = tokio::spawn(server.shutdown());
    for ws in &mut clients {
        let closed = async {
            loop {
                match ws.next().await {
                    Some(Ok(Message::Close(frame))) => break frame.map(|f| u16::from(f.code)),
                    Some(Ok(_)) => continue,
                    other => panic!("no close frame: {other:?}"),
                }
            }
        };
        let code = tokio::time::timeout(std::time::Duration::from_secs(20), closed)
            .await
            .expect("no close frame within 20 s of the shutdown");
        assert_eq!(code, Some(close::GOING_AWAY));
    }
    shutdown.await.unwrap();
}
