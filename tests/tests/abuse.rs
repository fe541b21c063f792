//! Hardening round 2, at the socket level: no one client or address can fill the server, lock
//! others out, blind a client waiting for an answer, or get round the limits with garbage.
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use grand_melee_e2e::{Client, CreateTable, PATIENCE, Received, TestServer};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, ServerMessage, TableId, TableView, close,
};
use grand_melee_server::ServerConfig;

/// A second loopback address: another client's machine, as far as the server can tell.
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// Settings that let one test client send as fast as it likes, with no per-address caps.
fn unthrottled() -> ServerConfig {
    ServerConfig {
        max_tables_per_ip: 0,
        table_creations_per_minute: 0,
        ..grand_melee_e2e::unthrottled()
    }
}

/// The tests' table: four seats, R = 1.
fn settings(name: &str) -> CreateTable {
    CreateTable::new(name, 4).spell_range(1).seed(7)
}

async fn create_table(client: &mut Client, name: &str) -> Result<TableId, ErrorCode> {
    client.create(settings(name)).await
}

/// Every page of the table list, following `next`.
async fn all_tables(client: &mut Client, limit: u32) -> Vec<wire::TableSummary> {
    let mut tables = Vec::new();
    let mut from = 0;
    loop {
        let page = client
            .call(|id| ClientMessage::ListTables { id, from, limit })
            .await
            .unwrap();
        let ServerMessage::Tables {
            tables: page, next, ..
        } = page
        else {
            panic!("expected tables, got {page:?}");
        };
        assert!(page.len() <= limit as usize);
        tables.extend(page);
        match next {
            Some(next) => {
                assert!(next > from, "the next page starts further on");
                from = next;
            }
            None => return tables,
        }
    }
}

/// Asks for the table list every 50 ms until it holds `count` tables: for tables the server
/// closes on its own timers, which no message announces. Fails after [`PATIENCE`].
async fn until_table_count(client: &mut Client, count: usize) -> Vec<wire::TableSummary> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let tables = all_tables(client, 100).await;
        if tables.len() == count {
            return tables;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} tables, not {count}",
            tables.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn one_address_cannot_fill_the_server_with_tables_and_others_still_get_in() {
    let server = TestServer::start_with(ServerConfig {
        max_tables_per_ip: 3,
        table_creations_per_minute: 100,
        ..ServerConfig::default()
    })
    .await;
    let mut flooder = server.client().await;
    for i in 0..3 {
        create_table(&mut flooder, &format!("mine {i}"))
            .await
            .unwrap();
    }
    assert_eq!(
        create_table(&mut flooder, "one too many").await,
        Err(ErrorCode::TooManyTables)
    );
    // Another connection from the same address is the same address.
    let mut again = server.client().await;
    assert_eq!(
        create_table(&mut again, "sneaky").await,
        Err(ErrorCode::TooManyTables)
    );
    // Someone else is not locked out.
    let mut other = Client::connected_from(server.addr, OTHER).await;
    create_table(&mut other, "theirs").await.unwrap();
    assert_eq!(all_tables(&mut other, 100).await.len(), 4);
}

#[tokio::test]
async fn table_creations_per_minute_are_capped_per_address() {
    let server = TestServer::start_with(ServerConfig {
        max_tables_per_ip: 0,
        table_creations_per_minute: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    create_table(&mut client, "a").await.unwrap();
    create_table(&mut client, "b").await.unwrap();
    assert_eq!(
        create_table(&mut client, "c").await,
        Err(ErrorCode::TooManyTables)
    );
    // A refused creation left nothing behind.
    assert_eq!(all_tables(&mut client, 100).await.len(), 2);
    let mut other = Client::connected_from(server.addr, OTHER).await;
    create_table(&mut other, "d").await.unwrap();
}

#[tokio::test]
async fn a_table_nobody_ever_joins_closes_and_stops_counting() {
    let server = TestServer::start_with(ServerConfig {
        max_tables_per_ip: 1,
        table_creations_per_minute: 0,
        unjoined_table_secs: 1,
        // Far longer than the test: only the unjoined rule can close the table.
        grace_period_secs: 3600,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let table = create_table(&mut client, "empty").await.unwrap();
    assert_eq!(
        create_table(&mut client, "second").await,
        Err(ErrorCode::TooManyTables)
    );
    let mut lister = server.client().await;
    until_table_count(&mut lister, 0).await;
    let join = client
        .call(|id| ClientMessage::Join {
            id,
            table,
            name: "Late".into(),
            password: None,
            entropy: None,
            member_token: None,
        })
        .await;
    assert_eq!(join, Err(ErrorCode::UnknownTable));
    create_table(&mut client, "second").await.unwrap();
}

#[tokio::test]
async fn a_table_someone_sat_at_is_not_closed_as_unjoined() {
    let server = TestServer::start_with(ServerConfig {
        unjoined_table_secs: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut host = server.client().await;
    let table = create_table(&mut host, "kept").await.unwrap();
    host.join(table, "Ann").await.unwrap();
    // A second table nobody joins closes after a second; the joined one is still there after.
    let mut other = server.client().await;
    create_table(&mut other, "gone").await.unwrap();
    let tables = until_table_count(&mut other, 1).await;
    assert_eq!(tables[0].table, table);
}

#[tokio::test]
async fn concurrent_creations_never_pass_max_tables() {
    let server = TestServer::start_with(ServerConfig {
        max_tables: 50,
        ..unthrottled()
    })
    .await;
    let mut clients = Vec::new();
    for _ in 0..25 {
        clients.push(server.client().await);
    }
    // 25 connections send 10 creations each without waiting: 250 at once.
    let mut ids = Vec::new();
    for (c, client) in clients.iter_mut().enumerate() {
        let sent: Vec<u32> = (0..10)
            .map(|i| client.send(|id| settings(&format!("t{c}.{i}")).request(id)))
            .collect();
        ids.push(sent);
    }
    let (mut created, mut busy) = (0, 0);
    for (client, sent) in clients.iter_mut().zip(ids) {
        for id in sent {
            match client.reply(id).await {
                Ok(ServerMessage::TableCreated { .. }) => created += 1,
                Err(ErrorCode::ServerBusy) => busy += 1,
                other => panic!("unexpected answer {other:?}"),
            }
        }
    }
    assert_eq!((created, busy), (50, 200));
    let mut lister = server.client().await;
    let tables = all_tables(&mut lister, 500).await;
    assert_eq!(tables.len(), 50);
}

#[tokio::test]
async fn the_table_list_is_paged_in_a_stable_order() {
    let server = TestServer::start_with(unthrottled()).await;
    let mut client = server.client().await;
    let mut made = Vec::new();
    for i in 0..7 {
        made.push(
            create_table(&mut client, &format!("table {i}"))
                .await
                .unwrap(),
        );
    }
    let first = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 3,
        })
        .await
        .unwrap();
    let ServerMessage::Tables {
        tables,
        total,
        next,
        ..
    } = first
    else {
        panic!("{first:?}");
    };
    assert_eq!((tables.len(), total, next), (3, 7, Some(3)));
    let paged = all_tables(&mut client, 3).await;
    let names: Vec<&str> = paged.iter().map(|t| t.name.as_str()).collect();
    let expected: Vec<String> = (0..7).map(|i| format!("table {i}")).collect();
    assert_eq!(names, expected);
    // A `from` past the end is an empty last page, not an error; a `limit` of 0 still gets one.
    let past = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 99,
            limit: 3,
        })
        .await
        .unwrap();
    assert!(matches!(
        past,
        ServerMessage::Tables { ref tables, next: None, total: 7, .. } if tables.is_empty()
    ));
    let one = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 0,
        })
        .await
        .unwrap();
    assert!(
        matches!(one, ServerMessage::Tables { ref tables, next: Some(1), .. } if tables.len() == 1)
    );
}

/// Plays a two-player game with `chat` lines of 500 characters to the end; returns the table.
async fn finished_game_with_chat(
    server: &TestServer,
    chat: usize,
    password: Option<&str>,
) -> (TableId, Vec<Client>) {
    let mut host = server.client().await;
    let table = host
        .create(settings("chatty").password(password))
        .await
        .unwrap();
    let mut guest = server.client().await;
    for (client, name) in [(&mut host, "Ann"), (&mut guest, "Ben")] {
        let joined = client
            .call(|id| ClientMessage::Join {
                id,
                table,
                name: name.into(),
                password: password.map(str::to_owned),
                entropy: None,
                member_token: None,
            })
            .await;
        assert!(
            matches!(joined, Ok(ServerMessage::Seated { .. })),
            "{joined:?}"
        );
    }
    let line = "x".repeat(wire::MAX_CHAT_CHARS);
    for _ in 0..chat {
        host.call(|id| ClientMessage::Chat {
            id,
            text: line.clone(),
        })
        .await
        .unwrap();
    }
    host.call(|id| ClientMessage::Start {
        id,
        first_player: Some(0),
        seating: grand_melee_protocol::SeatingMode::Random,
        order: Vec::new(),
    })
    .await
    .unwrap();
    host.call(|id| ClientMessage::Keep { id }).await.unwrap();
    guest.call(|id| ClientMessage::Keep { id }).await.unwrap();
    guest
        .call(|id| ClientMessage::Concede { id })
        .await
        .unwrap();
    (table, vec![host, guest])
}

/// Fetches every page of a replay; returns the settings header and all events.
async fn whole_replay(
    client: &mut Client,
    table: TableId,
    password: Option<&str>,
    token: Option<grand_melee_protocol::SeatToken>,
) -> Result<(TableView, usize), ErrorCode> {
    let mut from_seq = 1;
    let mut view: Option<TableView> = None;
    let mut pages = 0;
    loop {
        let answer = client
            .call(|id| ClientMessage::GetReplay {
                id,
                table,
                from_seq,
                password: password.map(str::to_owned),
                token,
            })
            .await?;
        let ServerMessage::Replay {
            name,
            settings,
            first_seq,
            events,
            total_events,
            next_seq,
            ..
        } = answer
        else {
            panic!("{answer:?}");
        };
        pages += 1;
        assert_eq!(first_seq, from_seq);
        let view = view.get_or_insert_with(|| TableView::new(table, name, settings));
        *view = view.folded(first_seq, &events).unwrap();
        match next_seq {
            Some(next) => {
                assert_eq!(next, first_seq + events.len() as u64);
                from_seq = next;
            }
            None => {
                assert_eq!(view.seq, total_events);
                return Ok((view.clone(), pages));
            }
        }
    }
}

#[tokio::test]
async fn a_replay_larger_than_the_outgoing_queue_is_fetched_in_pages() {
    // An outgoing queue of 64 KiB and a game with ~150 KB of chat: before paging, asking for the
    // replay overflowed the asker's queue and closed him with 1008.
    let server = TestServer::start_with(ServerConfig {
        outgoing_queue_bytes: 64 * 1024,
        ..unthrottled()
    })
    .await;
    let (table, _players) = finished_game_with_chat(&server, 300, None).await;
    let mut reader = server.client().await;
    let (view, pages) = whole_replay(&mut reader, table, None, None).await.unwrap();
    assert!(pages > 2, "{pages} pages");
    assert_eq!(view.stage, wire::StageName::Finished);
    assert_eq!(view.standings.len(), 2);
    assert_eq!(reader.closed, None, "the reader is still connected");
}

#[tokio::test]
async fn the_replay_list_is_paged_newest_first() {
    let server = TestServer::start_with(unthrottled()).await;
    for _ in 0..3 {
        finished_game_with_chat(&server, 0, None).await;
    }
    let mut client = server.client().await;
    let mut seen = Vec::new();
    let mut from = 0;
    loop {
        let page = client
            .call(|id| ClientMessage::ListReplays { id, from, limit: 2 })
            .await
            .unwrap();
        let ServerMessage::Replays {
            replays,
            total,
            next,
            ..
        } = page
        else {
            panic!("{page:?}");
        };
        assert_eq!(total, 3);
        assert!(replays.len() <= 2);
        seen.extend(replays);
        match next {
            Some(next) => from = next,
            None => break,
        }
    }
    assert_eq!(seen.len(), 3);
    assert!(
        seen.windows(2)
            .all(|w| w[0].finished_at_ms >= w[1].finished_at_ms)
    );
    let mut ids: Vec<TableId> = seen.iter().map(|r| r.table).collect();
    ids.dedup();
    assert_eq!(ids.len(), 3);
}

#[tokio::test]
async fn passwords_are_kept_hashed_and_wrong_guesses_are_throttled() {
    let server = TestServer::start_with(ServerConfig {
        wrong_passwords_per_minute: 10.0,
        ..unthrottled()
    })
    .await;
    let mut host = server.client().await;
    let table = host
        .create(settings("secret").password("correct horse"))
        .await
        .unwrap();
    let join = |password: &str| {
        let password = password.to_owned();
        move |id| ClientMessage::Join {
            id,
            table,
            name: "Guesser".into(),
            password: Some(password),
            entropy: None,
            member_token: None,
        }
    };
    let mut guesser = server.client().await;
    // Five wrong guesses are answered as such; after them the address is throttled, even with
    // the right password.
    for i in 0..5 {
        let answer = guesser.call(join(&format!("guess {i}"))).await;
        assert_eq!(answer, Err(ErrorCode::WrongPassword), "guess {i}");
    }
    assert_eq!(
        guesser.call(join("guess 5")).await,
        Err(ErrorCode::RateLimited)
    );
    assert_eq!(
        guesser.call(join("correct horse")).await,
        Err(ErrorCode::RateLimited)
    );
    // Another address is not throttled.
    let mut friend = Client::connected_from(server.addr, OTHER).await;
    let seated = friend.call(join("correct horse")).await;
    assert!(
        matches!(seated, Ok(ServerMessage::Seated { .. })),
        "{seated:?}"
    );
    // The password is nowhere in the data directory in plain text.
    for entry in std::fs::read_dir(server.data_dir()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes
                .windows(b"correct horse".len())
                .any(|w| w == b"correct horse"),
            "{} holds the password in plain text",
            path.display()
        );
    }
}

#[tokio::test]
async fn the_replay_of_a_password_table_needs_the_password_or_a_seat_token() {
    let server = TestServer::start_with(unthrottled()).await;
    let (table, players) = finished_game_with_chat(&server, 1, Some("pw")).await;
    let token = players[0].seat.unwrap().1;
    let mut reader = server.client().await;
    let listed = reader
        .call(|id| ClientMessage::ListReplays {
            id,
            from: 0,
            limit: 10,
        })
        .await
        .unwrap();
    assert!(
        matches!(listed, ServerMessage::Replays { ref replays, .. } if replays[0].password),
        "{listed:?}"
    );
    assert_eq!(
        whole_replay(&mut reader, table, None, None).await.err(),
        Some(ErrorCode::WrongPassword)
    );
    assert_eq!(
        whole_replay(&mut reader, table, Some("nope"), None)
            .await
            .err(),
        Some(ErrorCode::WrongPassword)
    );
    assert_eq!(
        whole_replay(
            &mut reader,
            table,
            None,
            Some(grand_melee_protocol::SeatToken::new_random())
        )
        .await
        .err(),
        Some(ErrorCode::WrongPassword)
    );
    let (by_password, _) = whole_replay(&mut reader, table, Some("pw"), None)
        .await
        .unwrap();
    let (by_token, _) = whole_replay(&mut reader, table, None, Some(token))
        .await
        .unwrap();
    assert_eq!(by_password, by_token);
    assert_eq!(by_password.stage, wire::StageName::Finished);
}

#[tokio::test]
async fn one_address_cannot_fill_tables_with_spectators() {
    let server = TestServer::start_with(ServerConfig {
        max_spectators_per_ip: 2,
        ..unthrottled()
    })
    .await;
    let mut host = server.client().await;
    let table = create_table(&mut host, "watched").await.unwrap();
    host.join(table, "Ann").await.unwrap();
    let watch = |id| ClientMessage::Watch {
        id,
        table,
        password: None,
    };
    let mut watchers = Vec::new();
    for _ in 0..2 {
        let mut watcher = server.client().await;
        let answer = watcher.call(watch).await;
        assert!(
            matches!(answer, Ok(ServerMessage::Watching { .. })),
            "{answer:?}"
        );
        watchers.push(watcher);
    }
    let mut third = server.client().await;
    assert_eq!(third.call(watch).await, Err(ErrorCode::SpectatorsFull));
    let mut elsewhere = Client::connected_from(server.addr, OTHER).await;
    assert!(matches!(
        elsewhere.call(watch).await,
        Ok(ServerMessage::Watching { .. })
    ));
    // One leaves: his place is free again.
    let left = watchers[0].call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    assert!(matches!(
        third.call(watch).await,
        Ok(ServerMessage::Watching { .. })
    ));
}

#[tokio::test]
async fn a_long_client_name_in_hello_is_refused_and_changes_nothing() {
    let server = TestServer::start().await;
    let mut client = Client::connect(server.addr).await;
    let answer = client
        .call(|id| ClientMessage::Hello {
            id,
            protocol: wire::PROTOCOL_VERSION,
            client: "c".repeat(5_000),
        })
        .await;
    assert_eq!(answer, Err(ErrorCode::BadMessage));
    // Still before hello: a table request needs hello first.
    let early = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 1,
        })
        .await;
    assert_eq!(early, Err(ErrorCode::HelloRequired));
    let escape = client
        .call(|id| ClientMessage::Hello {
            id,
            protocol: wire::PROTOCOL_VERSION,
            client: "bot\u{1b}]0;x\u{7}".into(),
        })
        .await;
    assert_eq!(escape, Err(ErrorCode::BadMessage));
    let welcome = client
        .call(|id| ClientMessage::Hello {
            id,
            protocol: wire::PROTOCOL_VERSION,
            client: "c".repeat(64),
        })
        .await
        .unwrap();
    // The welcome says what the protocol's own example says (PROTOCOL.md shows it).
    let Some(wire::examples::Example::Server(example)) = wire::examples::get("server/welcome")
    else {
        panic!("no welcome example");
    };
    let (ServerMessage::Welcome { server: sent, .. }, ServerMessage::Welcome { server: shown, .. }) =
        (welcome, example)
    else {
        panic!("not welcomes");
    };
    assert_eq!(sent, shown);
}

#[tokio::test]
async fn a_malformed_request_is_answered_with_its_id() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // `{"type": "attack", "id": 77, "target": "x"}`: the target has the wrong type.
    let mut bad = vec![0x83];
    for (key, value) in [
        ("type", vec![0xa6, b'a', b't', b't', b'a', b'c', b'k']),
        ("id", vec![0x4d]),
        ("target", vec![0xa1, b'x']),
    ] {
        bad.push(0xa0 | key.len() as u8);
        bad.extend_from_slice(key.as_bytes());
        bad.extend(value);
    }
    client.send_raw(bad);
    let answer = client
        .until(|r| match r {
            Received::Message(m, _) => match &**m {
                ServerMessage::Error {
                    reply_to,
                    request,
                    code,
                    ..
                } => Some((*reply_to, request.clone(), *code)),
                _ => None,
            },
            Received::Closed(_) => None,
        })
        .await;
    assert_eq!(
        answer,
        (Some(77), Some("attack".to_owned()), ErrorCode::BadMessage)
    );
}

#[tokio::test]
async fn undecodable_frames_count_against_the_rate_limit_and_a_flood_is_closed() {
    // Default limits: 20 requests/s, bursts of 40, 50 strikes.
    let server = TestServer::start().await;
    let mut flooder = server.client().await;
    for i in 0..2_000u32 {
        flooder.send_raw(i.to_be_bytes().to_vec());
    }
    let mut limited = 0;
    let code = loop {
        match flooder.recv().await {
            Received::Message(m, _) => {
                if matches!(
                    *m,
                    ServerMessage::Error {
                        code: ErrorCode::RateLimited,
                        ..
                    }
                ) {
                    limited += 1;
                }
            }
            Received::Closed(code) => break code,
        }
    };
    assert_eq!(code, Some(close::POLICY_VIOLATION));
    assert!(limited > 0);
    let reason = flooder.close_reason().unwrap_or_default();
    assert!(reason.contains("flooding"), "{reason}");
    // Text frames too.
    let mut texter = server.client().await;
    for _ in 0..2_000 {
        texter.send_text("{}");
    }
    assert_eq!(texter.closed_with().await, Some(close::POLICY_VIOLATION));
    // And pings, which the server must answer with pongs.
    let pinger = server.client().await;
    for _ in 0..2_000 {
        pinger.send_frame(tokio_tungstenite::tungstenite::protocol::frame::Frame::ping(Vec::new()));
    }
    let mut pinger = pinger;
    assert_eq!(pinger.closed_with().await, Some(close::POLICY_VIOLATION));
    // And everyone else is served.
    let mut other = server.client().await;
    assert!(all_tables(&mut other, 10).await.is_empty());
}

#[tokio::test]
async fn a_text_frame_that_is_not_utf8_is_closed_with_1007() {
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    let server = TestServer::start().await;
    let client = server.client().await;
    client.send_frame(Frame::message(
        vec![0x66, 0x6f, 0xff, 0xfe],
        OpCode::Data(Data::Text),
        true,
    ));
    let mut client = client;
    assert_eq!(client.closed_with().await, Some(close::INVALID_PAYLOAD));
}

#[tokio::test]
async fn one_address_cannot_churn_spectators_into_someone_elses_journal() {
    let server = TestServer::start_with(ServerConfig {
        watches_per_minute: 1.0,
        ..unthrottled()
    })
    .await;
    let mut host = server.client().await;
    let table = create_table(&mut host, "watched").await.unwrap();
    host.join(table, "Ann").await.unwrap();
    let watch = |id| ClientMessage::Watch {
        id,
        table,
        password: None,
    };
    // Each start and end of watching is a journaled `spectators_changed`: a burst of ten starts
    // is taken, then the address waits.
    let mut churner = server.client().await;
    for i in 0..10 {
        let answer = churner.call(watch).await;
        assert!(
            matches!(answer, Ok(ServerMessage::Watching { .. })),
            "start {i}: {answer:?}"
        );
        let left = churner.call(|id| ClientMessage::Leave { id }).await;
        assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    }
    assert_eq!(churner.call(watch).await, Err(ErrorCode::RateLimited));
    let mut elsewhere = Client::connected_from(server.addr, OTHER).await;
    assert!(matches!(
        elsewhere.call(watch).await,
        Ok(ServerMessage::Watching { .. })
    ));
}

/// A `create_table` refused for a setting names the setting and its range in the error's
/// message, and creates nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_setting_is_named_with_its_range_and_nothing_is_created() {
    let server = TestServer::start_with(unthrottled()).await;
    let mut client = server.client().await;
    let long = "p".repeat(wire::MAX_PASSWORD_CHARS + 1);
    type Breaker = Box<dyn Fn(&mut ClientMessage)>;
    let cases: [(&str, &str, Breaker); 5] = [
        (
            "seats: ",
            "2–40",
            Box::new(|m| {
                if let ClientMessage::CreateTable { seats, .. } = m {
                    *seats = 41;
                }
            }),
        ),
        (
            "spell_range: ",
            "1–4",
            Box::new(|m| {
                if let ClientMessage::CreateTable { spell_range, .. } = m {
                    *spell_range = 9;
                }
            }),
        ),
        (
            "starting_life: ",
            "1–1000",
            Box::new(|m| {
                if let ClientMessage::CreateTable { starting_life, .. } = m {
                    *starting_life = 0;
                }
            }),
        ),
        (
            "max_spectators: ",
            "at most 1000",
            Box::new(|m| {
                if let ClientMessage::CreateTable { max_spectators, .. } = m {
                    *max_spectators = 5000;
                }
            }),
        ),
        (
            "password: ",
            "1–64",
            Box::new(move |m| {
                if let ClientMessage::CreateTable { password, .. } = m {
                    *password = Some(long.clone());
                }
            }),
        ),
    ];
    for (field, range, break_it) in cases {
        let id = client.send(|id| {
            let mut request = settings("Bad").request(id);
            break_it(&mut request);
            request
        });
        let (code, message) = client
            .until(|r| match r {
                Received::Message(m, _) => match &**m {
                    ServerMessage::Error {
                        reply_to: Some(to),
                        code,
                        message,
                        ..
                    } if *to == id => Some((*code, message.clone())),
                    _ => None,
                },
                Received::Closed(_) => None,
            })
            .await;
        assert_eq!(code, ErrorCode::BadSettings, "{field}");
        assert!(
            message.starts_with(field) && message.contains(range),
            "{field}{range}: {message}"
        );
    }
    assert!(all_tables(&mut client, 100).await.is_empty());
    server.shutdown().await;
}

/// Paging through a password-protected replay costs one Argon2 check per connection, not one
/// per page: the connection remembers the replays it opened with their password. Another
/// connection pays its own check, and one that never gave the password is still refused.
#[tokio::test]
async fn paging_a_password_replay_costs_one_password_check_per_connection() {
    async fn password_checks(server: &TestServer) -> u64 {
        let page = grand_melee_e2e::http_get(server.addr, "/metrics").await;
        page.lines()
            .find_map(|line| {
                line.strip_prefix("gm_password_checks_total")?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap()
    }
    let server = TestServer::start_with(ServerConfig {
        outgoing_queue_bytes: 64 * 1024,
        ..unthrottled()
    })
    .await;
    let (table, _players) = finished_game_with_chat(&server, 300, Some("pw")).await;
    let before = password_checks(&server).await;
    let mut reader = server.client().await;
    let (view, pages) = whole_replay(&mut reader, table, Some("pw"), None)
        .await
        .unwrap();
    assert!(pages > 2, "{pages} pages");
    assert_eq!(view.stage, wire::StageName::Finished);
    assert_eq!(password_checks(&server).await, before + 1, "{pages} pages");
    // Reading it again on the same connection costs nothing more.
    whole_replay(&mut reader, table, Some("pw"), None)
        .await
        .unwrap();
    assert_eq!(password_checks(&server).await, before + 1);
    let mut stranger = server.client().await;
    assert_eq!(
        whole_replay(&mut stranger, table, None, None).await.err(),
        Some(ErrorCode::WrongPassword)
    );
    let mut other = server.client().await;
    whole_replay(&mut other, table, Some("pw"), None)
        .await
        .unwrap();
    assert_eq!(password_checks(&server).await, before + 2);
}
