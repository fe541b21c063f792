//! Bad input, floods, slow readers and absent players: the table keeps going.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::unthrottled;
use grand_melee_e2e::{
    Client, CreateTable, PATIENCE, Received, SilentClient, TestServer, http_get, silent_spectator,
    started_game,
};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, Event, ServerMessage, TurnEndReason, close,
};
use grand_melee_server::ServerConfig;
use tokio::io::AsyncWriteExt;

async fn first_error(client: &mut Client) -> ErrorCode {
    client
        .until(|r| match r {
            Received::Message(m, _) => match **m {
                ServerMessage::Error { code, .. } => Some(code),
                _ => None,
            },
            Received::Closed(_) => None,
        })
        .await
}

/// Whether another client can still do a full round trip.
async fn server_still_serves(server: &TestServer) {
    let mut other = server.client().await;
    let tables = other
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 100,
        })
        .await;
    assert!(
        matches!(tables, Ok(ServerMessage::Tables { .. })),
        "{tables:?}"
    );
}

#[tokio::test]
async fn hostile_bytes_get_typed_errors_or_a_close_and_the_server_keeps_serving() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 4, 21).await;
    let before = clients[0].fresh_snapshot().await;
    let mut nested_within_limit = vec![0x91; 15_000];
    nested_within_limit.push(0xc0);
    let typed_error_inputs: Vec<Vec<u8>> = vec![
        b"\x00\x01\x02 not msgpack at all".to_vec(),
        wire::encode_client(&ClientMessage::Attack {
            id: 1,
            target: 1,
            damage: 1,
            poison: 0,
        })[..9]
            .to_vec(),
        // bin 32 claiming 4 GiB of payload.
        vec![0xc6, 0xff, 0xff, 0xff, 0xff, 0x00],
        // A map claiming 4 billion entries.
        vec![0xdf, 0xff, 0xff, 0xff, 0xff],
        nested_within_limit,
        // Wrong types: `id` is a string, `target` a negative number.
        rmp_like_attack_with_wrong_types(),
    ];
    let client = &mut clients[1];
    for input in typed_error_inputs {
        client.send_raw(input);
        assert_eq!(first_error(client).await, ErrorCode::BadMessage);
    }
    // 100,000 nested arrays do not even fit the frame limit: closed with 1009.
    let mut deep = vec![0x91; 100_000];
    deep.push(0xc0);
    clients[3].send_raw(deep);
    assert_eq!(clients[3].closed_with().await, Some(close::MESSAGE_TOO_BIG));
    server_still_serves(&server).await;
    let after = clients[0].fresh_snapshot().await;
    assert_eq!(after.players.len(), before.players.len());
    assert_eq!(after.turns, before.turns, "the game itself did not move");
}

/// `{"type": "attack", "id": "seven", "target": -1}` packed by hand.
fn rmp_like_attack_with_wrong_types() -> Vec<u8> {
    let mut out = vec![0x83];
    for (key, value) in [
        ("type", vec![0xa6, b'a', b't', b't', b'a', b'c', b'k']),
        ("id", vec![0xa5, b's', b'e', b'v', b'e', b'n']),
        ("target", vec![0xff]),
    ] {
        out.push(0xa0 | key.len() as u8);
        out.extend_from_slice(key.as_bytes());
        out.extend(value);
    }
    out
}

/// Mountain Magic's requests with settings for the fuzz-like test to mutate: climbs of today's
/// mountain (`today`, a date, a league's), a climb of an own deck file (good by the recipe, or
/// a card short), a day with a deck, and a day's standings (a league's).
fn mountain_magic_requests(id: u32, today: &str) -> Vec<ClientMessage> {
    use wire::dice::{Dice, DiceSecret};
    use wire::league::LeagueId;
    use wire::mountain_magic::pool::{Deck, Pool};
    use wire::mountain_magic_types::MountainMagicSettings;
    let pool = Pool::builtin();
    let good =
        Deck::default_from_dice(pool, &Dice::new(DiceSecret::from_seed(31), [3; 32])).to_file(pool);
    let mut short = good.clone();
    short.cards[0].count -= 1;
    let climb = |settings: MountainMagicSettings| {
        CreateTable::new("climb", 1)
            .game(wire::GameKind::MountainMagic)
            .mountain_magic(settings)
            .request(id)
    };
    let day = |day: &str, league| MountainMagicSettings {
        day: Some(day.to_owned()),
        league,
        ..MountainMagicSettings::default()
    };
    let deck = |deck| MountainMagicSettings {
        deck: Some(deck),
        ..MountainMagicSettings::default()
    };
    vec![
        climb(day("today", None)),
        climb(day(today, None)),
        climb(day("today", Some(LeagueId::from_u128(7)))),
        climb(deck(good.clone())),
        climb(deck(short)),
        climb(MountainMagicSettings {
            deck: Some(good),
            ..day("today", None)
        }),
        ClientMessage::MountainMagicStandings {
            id,
            day: "today".into(),
            league: Some(LeagueId::from_u128(7)),
            from: 0,
            limit: 100,
        },
    ]
}

/// A small deterministic generator for the fuzz-like test.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[tokio::test]
async fn thousands_of_random_and_mutated_messages_never_break_the_server() {
    let server = TestServer::start_with(unthrottled()).await;
    let (_, mut clients) = started_game(&server, 6, 22).await;
    let valid: Vec<Vec<u8>> = wire::examples::client()
        .iter()
        .filter(|m| !matches!(m, ClientMessage::Hello { .. } | ClientMessage::Leave { .. }))
        .chain(&mountain_magic_requests(0, "2026-11-26"))
        .map(wire::encode_client)
        .collect();
    let mut dice = Dice(0x5eed);
    let fuzzer = &mut clients[2];
    // Unmutated, Mountain Magic's requests are decided as their settings say.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let today = wire::mountain_magic::day::Day::of(now).to_string();
    let expected = [
        Ok("table_created"),
        Ok("table_created"),
        Err(ErrorCode::UnknownLeague),
        Ok("table_created"),
        Err(ErrorCode::BadSettings),
        Err(ErrorCode::BadSettings),
        Err(ErrorCode::UnknownLeague),
    ];
    for (k, want) in expected.into_iter().enumerate() {
        let got = fuzzer
            .call(|id| mountain_magic_requests(id, &today).swap_remove(k))
            .await
            .map(|answer| answer.name());
        assert_eq!(got, want, "request {k}");
    }
    // The fuzzer's own requests use ids far from the examples' (which the mutations keep).
    fuzzer.set_next_id(3_000_000_000);
    let sent = 3_000;
    for i in 0..sent {
        let frame = match dice.next() % 3 {
            0 => {
                let len = (dice.next() % 64) as usize;
                (0..len).map(|_| dice.next() as u8).collect()
            }
            1 => {
                let mut frame = valid[(dice.next() as usize) % valid.len()].clone();
                for _ in 0..1 + dice.next() % 4 {
                    let at = (dice.next() as usize) % frame.len();
                    frame[at] = dice.next() as u8;
                }
                frame
            }
            _ => {
                let frame = &valid[(dice.next() as usize) % valid.len()];
                frame[..(dice.next() as usize) % frame.len()].to_vec()
            }
        };
        fuzzer.send_raw(frame);
        if i % 100 == 0 {
            // Keep the request stream and the answers roughly in step: every frame is answered,
            // and a client that leaves more answers unread than its outgoing queue holds (256
            // frames) is dropped as a slow reader. This test runs on one thread, so the client
            // reads nothing until it waits for this snapshot.
            fuzzer.fresh_snapshot().await;
        }
    }
    let last = fuzzer.fresh_snapshot().await;
    assert!(last.players.len() == 6);
    assert!(
        fuzzer.closed.is_none(),
        "the fuzzing client is still connected"
    );
    // Everyone else still gets a consistent table.
    for client in clients.iter_mut().filter(|c| c.closed.is_none()) {
        client.catch_up(last.seq).await;
        let snapshot = client.fresh_snapshot().await;
        assert_eq!(
            client.view.as_ref().map(|v| &v.turns),
            Some(&snapshot.turns)
        );
    }
    server_still_serves(&server).await;
}

#[tokio::test]
async fn two_hundred_slow_handshakes_do_not_keep_a_real_client_waiting() {
    let config = ServerConfig {
        // Far longer than the test's patience: a real client stuck behind the slow sockets
        // would make the test fail.
        handshake_timeout_secs: 600,
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let mut stalled = Vec::new();
    for _ in 0..200 {
        let mut socket = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        socket
            .write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        stalled.push(socket);
    }
    let mut client = server.client().await;
    let table = client.create_table("busy night", 4, 23).await;
    client.join(table, "on time").await.unwrap();
    drop(stalled);
}

#[tokio::test]
async fn one_of_28_seats_stops_reading_is_dropped_and_the_others_get_every_event_in_order() {
    let config = ServerConfig {
        outgoing_queue: 64,
        outgoing_queue_bytes: 64 * 1024,
        send_buffer_bytes: 8 * 1024,
        ..unthrottled()
    };
    let server = TestServer::start_with(config).await;
    // 27 players who read everything, and a 28th seat: a raw socket with a tiny receive buffer
    // that sits down and never reads again (it still writes its decisions).
    let mut clients = Vec::new();
    let mut host = server.client().await;
    let table = host.create_table("one slow seat", 28, 24).await;
    clients.push(host);
    for _ in 1..27 {
        clients.push(server.client().await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        client.join(table, &format!("player {i}")).await.unwrap();
    }
    let mut stalled = SilentClient::connect(server.addr, Some(2048)).await;
    stalled
        .send(&ClientMessage::Join {
            id: 2,
            table,
            name: "stalled".into(),
            password: None,
            entropy: None,
            member_token: None,
        })
        .await;
    let slow = clients[0]
        .until_event(|e| match e {
            Event::PlayerJoined { player, name, .. } if name == "stalled" => Some(*player),
            _ => None,
        })
        .await;
    assert_eq!(slow, 27);
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
    let mut decider = clients[0].view.as_ref().and_then(|v| v.mulligan_decider);
    while let Some(player) = decider {
        if player == slow {
            stalled.send(&ClientMessage::Keep { id: 3 }).await;
            clients[0]
                .until_event(|e| {
                    matches!(e, Event::Kept { player, .. } if *player == slow).then_some(())
                })
                .await;
            decider = clients[0].view.as_ref().and_then(|v| v.mulligan_decider);
        } else {
            let client = &mut clients[usize::from(player)];
            let kept = client.call(|id| ClientMessage::Keep { id }).await;
            assert!(matches!(kept, Ok(ServerMessage::Ack { .. })), "{kept:?}");
            decider = client.view.as_ref().and_then(|v| v.mulligan_decider);
        }
    }
    let last = clients
        .iter()
        .filter_map(|c| c.view.as_ref().map(|v| v.seq))
        .max()
        .unwrap();
    for client in &mut clients {
        client.catch_up(last).await;
    }
    // A chatty player sends large lines in rounds of 25 (he gets an event and an ack for each:
    // less than the queue bound), and everyone who reads catches up after each round, so only
    // the stalled seat falls behind. Every round before the drop shows the others getting
    // every event while the stalled seat is still connected: the table never waits for it.
    let line = "x".repeat(450);
    let mut lines = 0;
    let mut dropped = false;
    for _ in 0..800 {
        for _ in 0..25 {
            let text = line.clone();
            clients[1].send(|id| ClientMessage::Chat { id, text });
        }
        lines += 25;
        let last = clients[1].fresh_snapshot().await;
        for client in &mut clients {
            client.catch_up(last.seq).await;
        }
        if !last.player(slow).unwrap().connected {
            dropped = true;
            break;
        }
    }
    // The bound: the queue's 64 KiB plus the two kernel buffers (8 KiB sent, 2 KiB received,
    // each of which Linux doubles) and one round in flight.
    assert!(
        dropped,
        "the stalled seat was not dropped after {lines} lines"
    );
    assert!(
        lines * 500 <= 64 * 1024 + 2 * (8 + 2) * 1024 + 25 * 500,
        "{lines} lines"
    );
    let last = clients[0].fresh_snapshot().await.seq;
    for client in &mut clients {
        client.catch_up(last).await;
        // Every event arrived, in order, with no gap: apply_batch would have failed otherwise,
        // and the frames are numbered consecutively.
        let mut next = None;
        let mut chats = 0;
        for (seq, bytes) in &client.event_frames {
            let ServerMessage::Events { events, .. } = wire::decode_server(bytes).unwrap() else {
                panic!("events");
            };
            if let Some(expected) = next {
                assert_eq!(*seq, expected);
            }
            next = Some(seq + events.len() as u64);
            chats += events
                .iter()
                .filter(|e| matches!(e, Event::Chat { .. }))
                .count();
        }
        assert_eq!(chats, lines);
        assert!(client.closed.is_none());
    }
    drop(stalled);
}

#[tokio::test]
async fn a_flooding_client_is_rate_limited_then_disconnected_and_the_others_play_on() {
    let server = TestServer::start().await;
    let (_, mut clients) = started_game(&server, 5, 25).await;
    let runner = clients[0].running_players()[0];
    let flooder_index = if runner == 4 { 3 } else { 4 };
    let flooder = &mut clients[flooder_index];
    for _ in 0..400 {
        flooder.send(|id| ClientMessage::Snapshot { id });
    }
    assert_eq!(first_error(flooder).await, ErrorCode::RateLimited);
    assert_eq!(flooder.closed_with().await, Some(close::POLICY_VIOLATION));
    // The others are unaffected.
    let ended = clients[usize::from(runner)]
        .call(|id| ClientMessage::EndTurn { id })
        .await;
    assert!(matches!(ended, Ok(ServerMessage::Ack { .. })), "{ended:?}");
}

#[tokio::test]
async fn a_player_who_drops_as_his_turn_starts_is_skipped_after_the_grace_period_and_comes_back() {
    let config = ServerConfig {
        grace_period_secs: 1,
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let (table, mut clients) = started_game(&server, 6, 26).await;
    let runner = clients[0].running_players()[0];
    let watcher = usize::from(if runner == 0 { 1u16 } else { 0 });
    let (_, token) = clients[usize::from(runner)].seat.unwrap();
    clients[usize::from(runner)].drop_connection();
    // Everyone is told why the turn moved on.
    let batch = clients[watcher]
        .until_batch(|e| matches!(e, Event::TurnEnded { .. }))
        .await;
    assert!(batch.iter().any(|e| matches!(
        e,
        Event::TurnEnded { player, reason: TurnEndReason::Absent, .. } if *player == runner
    )));
    assert!(batch.iter().any(|e| matches!(
        e,
        Event::TurnPassed { from, to, .. } if *from == runner && *to != runner
    )));
    // Later he comes back with his token and is in his seat again.
    let mut back = server.client().await;
    assert_eq!(back.resume(table, token).await, Ok(runner));
    assert!(
        back.view
            .as_ref()
            .unwrap()
            .player(runner)
            .unwrap()
            .connected
    );
    let life = back
        .call(|id| ClientMessage::ChangeLife { id, delta: 1 })
        .await;
    assert!(matches!(life, Ok(ServerMessage::Ack { .. })), "{life:?}");
}

#[tokio::test]
async fn a_turn_past_the_clock_ends_by_itself_and_everyone_is_told_why() {
    let server = TestServer::start().await;
    let mut host = server.client().await;
    let settings = CreateTable::new("blitz", 3)
        .spell_range(1)
        .seed(27)
        .turn_clock_secs(1);
    let table = host.create(settings).await.unwrap();
    let mut clients = [host, server.client().await, server.client().await];
    for (i, client) in clients.iter_mut().enumerate() {
        client.join(table, &format!("p{i}")).await.unwrap();
    }
    clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: Some(1),
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await
        .unwrap();
    let mut decider = clients[0].view.as_ref().and_then(|v| v.mulligan_decider);
    while let Some(player) = decider {
        let client = &mut clients[usize::from(player)];
        client.call(|id| ClientMessage::Keep { id }).await.unwrap();
        decider = client.view.as_ref().and_then(|v| v.mulligan_decider);
    }
    let reason = clients[0]
        .until_event(|e| match e {
            Event::TurnEnded {
                player: 1, reason, ..
            } => Some(*reason),
            _ => None,
        })
        .await;
    assert_eq!(reason, TurnEndReason::Clock);
}

#[tokio::test]
async fn the_host_pauses_kicks_and_hands_over_the_table() {
    let server = TestServer::start().await;
    let (table, mut clients) = started_game(&server, 5, 28).await;
    let runner = usize::from(clients[0].running_players()[0]);
    // Only the host may pause.
    let other = if runner == 1 { 2 } else { 1 };
    let refused = clients[other]
        .call(|id| ClientMessage::Pause { id, paused: true })
        .await;
    assert_eq!(refused.unwrap_err(), ErrorCode::NotHost);
    clients[0]
        .call(|id| ClientMessage::Pause { id, paused: true })
        .await
        .unwrap();
    assert!(clients[0].view.as_ref().unwrap().paused);
    let paused = clients[runner]
        .call(|id| ClientMessage::EndTurn { id })
        .await;
    assert_eq!(paused.unwrap_err(), ErrorCode::TablePaused);
    let chat = clients[runner]
        .call(|id| ClientMessage::Chat {
            id,
            text: "coffee?".into(),
        })
        .await;
    assert!(
        matches!(chat, Ok(ServerMessage::Ack { .. })),
        "chat still works"
    );
    clients[0]
        .call(|id| ClientMessage::Pause { id, paused: false })
        .await
        .unwrap();
    let ended = clients[runner]
        .call(|id| ClientMessage::EndTurn { id })
        .await;
    assert!(matches!(ended, Ok(ServerMessage::Ack { .. })), "{ended:?}");

    // Kick: player 4 is eliminated by ruling, closed, and his token stops working.
    let (_, token) = clients[4].seat.unwrap();
    clients[0]
        .call(|id| ClientMessage::Kick {
            id,
            player: 4,
            ban: false,
        })
        .await
        .unwrap();
    let view = clients[0].view.clone().unwrap();
    assert_ne!(view.player(4).unwrap().status, wire::PlayerStatus::Alive);
    assert_eq!(
        clients[4].closed_with().await,
        Some(close::POLICY_VIOLATION)
    );
    let mut back = server.client().await;
    let refused = back
        .call(|id| ClientMessage::Resume { id, table, token })
        .await;
    assert_eq!(refused.unwrap_err(), ErrorCode::BadToken);

    // Hand the host role to player 3: the old host may no longer rule.
    clients[0]
        .call(|id| ClientMessage::TransferHost { id, player: 3 })
        .await
        .unwrap();
    assert_eq!(clients[0].view.as_ref().unwrap().host, Some(3));
    let ruling = clients[0]
        .call(|id| ClientMessage::Pause { id, paused: true })
        .await;
    assert_eq!(ruling.unwrap_err(), ErrorCode::NotHost);
}

#[tokio::test]
async fn an_absent_host_hands_over_after_the_grace_period() {
    let config = ServerConfig {
        grace_period_secs: 1,
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let (_, mut clients) = started_game(&server, 4, 29).await;
    clients[0].drop_connection();
    let host = clients[2]
        .until_event(|e| match e {
            Event::HostChanged { player } => Some(*player),
            _ => None,
        })
        .await;
    assert_eq!(host, Some(1), "the first connected player in join order");
}

#[tokio::test]
async fn connection_caps_and_the_origin_allow_list_refuse_cleanly() {
    let config = ServerConfig {
        max_connections_per_ip: 3,
        allowed_origins: vec!["https://melee.example".into()],
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let _a = server.client().await;
    let _b = server.client().await;
    // The third connection is the HTTP request itself; the fourth is refused.
    let ok = http_get(server.addr, "/healthz").await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let _c = server.client().await;
    let refused = http_get(server.addr, "/healthz").await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    drop((_a, _b, _c));

    let server = TestServer::start_with(ServerConfig {
        allowed_origins: vec!["https://melee.example".into()],
        ..ServerConfig::default()
    })
    .await;
    let request = |origin: &str| {
        let mut request =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
                format!("ws://{}/ws", server.addr),
            )
            .unwrap();
        request
            .headers_mut()
            .insert("Origin", origin.parse().unwrap());
        request
    };
    let evil = tokio_tungstenite::connect_async(request("https://evil.example")).await;
    assert!(
        matches!(&evil, Err(tokio_tungstenite::tungstenite::Error::Http(r)) if r.status() == 403),
        "{evil:?}"
    );
    let good = tokio_tungstenite::connect_async(request("https://melee.example")).await;
    assert!(good.is_ok());
    let _ = PATIENCE;
}

#[tokio::test]
async fn a_client_that_stops_answering_pings_is_disconnected() {
    let config = ServerConfig {
        ping_interval_secs: 1,
        idle_timeout_secs: 2,
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let (table, mut clients) = started_game(&server, 3, 30).await;
    // A spectator that says hello, starts watching, and then never reads or writes again (so
    // it never answers a ping).
    let silent = silent_spectator(server.addr, table, None).await;
    let joined = clients[0]
        .until_event(|e| match e {
            Event::SpectatorsChanged { spectators: 1 } => Some(()),
            _ => None,
        })
        .await;
    assert_eq!(joined, ());
    // The players keep answering pings (their clients read all the time) and stay.
    let gone = clients[0]
        .until_event(|e| match e {
            Event::SpectatorsChanged { spectators: 0 } => Some(()),
            _ => None,
        })
        .await;
    assert_eq!(gone, ());
    assert!(clients.iter().all(|c| c.closed.is_none()));
    drop(silent);
}

/// RFC 6455 §7.4: a close frame may not carry a code below 1000, one of 1004–1006 and 1015
/// (reserved for endpoints' own reports, never sent), one of the unassigned 1016–2999, or one
/// from 5000 up; an endpoint receiving one fails the connection with 1002. Codes 3000–4999
/// are for libraries and applications, and a normal close is answered with 1000.
#[tokio::test]
async fn a_close_frame_with_a_code_the_rfc_forbids_on_the_wire_is_answered_with_1002() {
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let server = TestServer::start().await;
    let cases: [(u16, u16); 15] = [
        (0, close::PROTOCOL_ERROR),
        (999, close::PROTOCOL_ERROR),
        (1004, close::PROTOCOL_ERROR),
        (1005, close::PROTOCOL_ERROR),
        (1006, close::PROTOCOL_ERROR),
        (1015, close::PROTOCOL_ERROR),
        (1016, close::PROTOCOL_ERROR),
        (1100, close::PROTOCOL_ERROR),
        (2000, close::PROTOCOL_ERROR),
        (2999, close::PROTOCOL_ERROR),
        (5000, close::PROTOCOL_ERROR),
        (1000, close::NORMAL),
        (1001, close::NORMAL),
        (3000, close::NORMAL),
        (4999, close::NORMAL),
    ];
    for (sent, expected) in cases {
        let mut client = server.client().await;
        client.send_frame(Frame::close(Some(CloseFrame {
            code: sent.into(),
            reason: "done".into(),
        })));
        assert_eq!(
            client.closed_with().await,
            Some(expected),
            "a client's close with {sent}"
        );
    }
    server_still_serves(&server).await;
}

/// A request is a map with named fields (PROTOCOL.md): an array is refused with `bad_message`,
/// not read positionally (`[1, 2, 3]` was answered as `list_tables` with `reply_to` 2). And a
/// request nested too deep is refused with its own id, however deep the nesting, so the client
/// waiting for it is answered.
#[tokio::test]
async fn arrays_are_not_requests_and_deep_requests_keep_their_id() {
    let server = TestServer::start_with(unthrottled()).await;
    let mut client = server.client().await;
    // `[1, 2, 3]` and `["snapshot", 9]`, packed by hand.
    for array in [
        b"\x93\x01\x02\x03".to_vec(),
        b"\x92\xa8snapshot\x09".to_vec(),
    ] {
        client.send_raw(array.clone());
        match client.recv().await {
            Received::Message(message, _) => match *message {
                ServerMessage::Error { code, reply_to, .. } => {
                    assert_eq!((code, reply_to), (ErrorCode::BadMessage, None), "{array:?}")
                }
                other => panic!("{array:?} was answered with {other:?}"),
            },
            Received::Closed(code) => panic!("{array:?} closed the connection ({code:?})"),
        }
    }
    for depth in [15, 40, 1000] {
        // `{"type": "list_tables", "id": 70 + depth, "junk": [[[…nil…]]]}`
        let id = 70 + depth;
        let mut bytes = vec![0x83];
        bytes.extend(b"\xa4type\xablist_tables\xa2id\xcd");
        bytes.extend(u16::try_from(id).unwrap().to_be_bytes());
        bytes.extend(b"\xa4junk");
        bytes.extend(std::iter::repeat_n(0x91, depth as usize));
        bytes.push(0xc0);
        client.send_raw(bytes);
        assert_eq!(
            client.reply(id).await,
            Err(ErrorCode::BadMessage),
            "{depth}"
        );
    }
    server_still_serves(&server).await;
}
