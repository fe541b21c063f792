//! What the browser seat needs from the server, over real sockets: the pages and assets with
//! their caching and security headers, the origin rules, and `get_events` (the paged past of a
//! table, from which a reloaded page rebuilds its log and chat).
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{TestServer, http_get, http_request, started_game};
use grand_melee_protocol::{ClientMessage, ErrorCode, Mirror, Phase, ServerMessage, TableView};
use grand_melee_server::ServerConfig;

fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[tokio::test]
async fn every_route_of_the_page_serves_it_with_a_strict_policy() {
    let server = TestServer::start().await;
    for path in [
        "/",
        "/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50",
        "/replays",
        "/replays/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50",
    ] {
        let page = http_get(server.addr, path).await;
        assert!(page.starts_with("HTTP/1.1 200"), "{path}: {page}");
        assert_eq!(
            header(&page, "content-type"),
            Some("text/html; charset=utf-8")
        );
        let policy = header(&page, "content-security-policy").unwrap();
        assert!(policy.contains("default-src 'none'"), "{policy}");
        assert!(policy.contains("script-src 'self'"), "{policy}");
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        assert!(!policy.contains("http"), "nothing external: {policy}");
        assert_eq!(header(&page, "x-content-type-options"), Some("nosniff"));
        assert_eq!(header(&page, "cache-control"), Some("no-cache"));
    }
    let script = http_get(server.addr, "/assets/app.js").await;
    assert!(script.starts_with("HTTP/1.1 200"), "{script}");
    assert_eq!(
        header(&script, "content-type"),
        Some("text/javascript; charset=utf-8")
    );
    for missing in ["/t/not-a-table", "/assets/../Cargo.toml", "/assets/nope.js"] {
        let answer = http_get(server.addr, missing).await;
        assert!(answer.starts_with("HTTP/1.1 404"), "{missing}: {answer}");
    }
    let post = http_request(
        server.addr,
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(post.starts_with("HTTP/1.1 405"), "{post}");
    assert_eq!(header(&post, "allow"), Some("GET, HEAD"));
}

#[tokio::test]
async fn assets_are_revalidated_by_entity_tag_and_gzipped_on_request() {
    let server = TestServer::start().await;
    let first = http_get(server.addr, "/assets/app.css").await;
    let etag = header(&first, "etag").unwrap().to_owned();
    assert!(etag.starts_with('"'), "{etag}");
    let again = http_request(
        server.addr,
        &format!(
            "GET /assets/app.css HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(again.starts_with("HTTP/1.1 304"), "{again}");
    let other = http_request(
        server.addr,
        "GET /assets/app.css HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: \"stale\"\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(other.starts_with("HTTP/1.1 200"), "{other}");
    let gzipped = http_request(
        server.addr,
        "GET /assets/vendor/msgpack-3.1.3.min.js HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: br, gzip;q=0.8\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(header(&gzipped, "content-encoding"), Some("gzip"));
    let length: usize = header(&gzipped, "content-length").unwrap().parse().unwrap();
    let plain = http_get(server.addr, "/assets/vendor/msgpack-3.1.3.min.js").await;
    assert_eq!(header(&plain, "content-encoding"), None);
    let plain_length: usize = header(&plain, "content-length").unwrap().parse().unwrap();
    assert!(length < plain_length / 2, "{length} vs {plain_length}");
}

#[tokio::test]
async fn the_servers_own_page_may_connect_under_an_origin_allow_list() {
    let config = ServerConfig {
        allowed_origins: vec!["https://melee.example".to_owned()],
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let handshake = |origin: &str, host: &str| {
        format!(
            "GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Origin: {origin}\r\n\r\n"
        )
    };
    let own = format!("http://{}", server.addr);
    for (origin, host, allowed) in [
        (own.as_str(), server.addr.to_string(), true),
        ("https://melee.example", server.addr.to_string(), true),
        ("https://evil.example", server.addr.to_string(), false),
        // The page of another host (or another scheme) is not the server's own.
        (own.as_str(), "other.example:7878".to_owned(), false),
        (
            &format!("https://{}", server.addr),
            server.addr.to_string(),
            false,
        ),
    ] {
        let answer = first_line(server.addr, &handshake(origin, &host)).await;
        let expected = if allowed {
            "HTTP/1.1 101"
        } else {
            "HTTP/1.1 403"
        };
        assert!(answer.starts_with(expected), "{origin} at {host}: {answer}");
    }
}

/// The first line of the answer to `request` (a WebSocket handshake keeps the connection open,
/// so the whole answer never ends).
async fn first_line(addr: std::net::SocketAddr, request: &str) -> String {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).await.unwrap();
    line
}

#[tokio::test]
async fn get_events_pages_rebuild_the_table_for_players_and_spectators() {
    let server = TestServer::start().await;
    let (table, mut clients) = started_game(&server, 4, 31).await;
    let runner = clients[0].running_players()[0];
    let client = &mut clients[usize::from(runner)];
    for phase in [Phase::PrecombatMain, Phase::Combat] {
        let answer = client
            .call(|id| ClientMessage::SetPhase { id, phase })
            .await;
        assert!(
            matches!(answer, Ok(ServerMessage::Ack { .. })),
            "{answer:?}"
        );
    }
    let chat = client
        .call(|id| ClientMessage::Chat {
            id,
            text: "good game".to_owned(),
        })
        .await;
    assert!(chat.is_ok(), "{chat:?}");
    let now = client.fresh_snapshot().await;
    assert!(now.seq > 10, "{}", now.seq);

    let mut spectator = server.client().await;
    spectator.watch(table).await;
    let watched = spectator.fresh_snapshot().await;
    for (who, asker) in [("player", client), ("spectator", &mut spectator)] {
        // Small pages, so the paging itself is exercised.
        let (mut from_seq, mut events) = (0u64, Vec::new());
        loop {
            let answer = asker
                .call(|id| ClientMessage::GetEvents {
                    id,
                    table,
                    from_seq,
                    limit: 3,
                })
                .await
                .unwrap();
            let ServerMessage::PastEvents {
                table: answered,
                first_seq,
                events: page,
                next_seq,
                ..
            } = answer
            else {
                panic!("{who}: {answer:?}");
            };
            assert_eq!(answered, table);
            assert_eq!(first_seq, from_seq.max(1), "{who}");
            assert!(page.len() <= 3, "{who}");
            events.extend(page);
            match next_seq {
                Some(next) => from_seq = next,
                None => break,
            }
        }
        assert!(events.len() as u64 >= now.seq, "{who}: {}", events.len());
        assert!(
            events
                .iter()
                .any(|e| matches!(e, grand_melee_protocol::Event::Chat { text, .. } if text == "good game")),
            "{who}: the chat is in the log"
        );
        let empty = TableView::new(table, now.name.clone(), now.settings.clone());
        let mut mirror = Mirror::new(&empty).unwrap();
        mirror.apply_batch(1, &events).unwrap();
        let rebuilt = mirror.view();
        // The spectator's own arrival is the last event; the folded past is the table now.
        assert_eq!(rebuilt, watched, "{who}");
    }
}

#[tokio::test]
async fn get_events_is_refused_outside_the_table_and_changes_nothing() {
    let server = TestServer::start().await;
    let (table, mut clients) = started_game(&server, 3, 32).await;
    let (other, _others) = started_game(&server, 3, 33).await;
    let before = clients[0].fresh_snapshot().await;
    let mut outsider = server.client().await;
    for (asker, asked) in [(&mut outsider, table), (&mut clients[0], other)] {
        let answer = asker
            .call(|id| ClientMessage::GetEvents {
                id,
                table: asked,
                from_seq: 1,
                limit: 100,
            })
            .await;
        assert_eq!(answer.unwrap_err(), ErrorCode::NotInTable);
    }
    assert_eq!(clients[0].fresh_snapshot().await, before);
    // Past the end: an empty last page, not an error.
    let answer = clients[1]
        .call(|id| ClientMessage::GetEvents {
            id,
            table,
            from_seq: before.seq + 100,
            limit: 100,
        })
        .await
        .unwrap();
    assert!(
        matches!(answer, ServerMessage::PastEvents { ref events, next_seq: None, .. } if events.is_empty()),
        "{answer:?}"
    );
}

#[tokio::test]
async fn a_websocket_after_a_page_request_on_the_same_connection_works() {
    use futures_util::{SinkExt, StreamExt};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start().await;
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    // The whole answer to the first request (its body is "ok\n").
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).ends_with("ok\n") {
        let mut chunk = [0u8; 512];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed after {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&chunk[..n]);
    }
    assert!(seen.starts_with(b"HTTP/1.1 200"));
    // The same connection, kept alive, becomes a WebSocket.
    let (mut ws, response) =
        tokio_tungstenite::client_async(format!("ws://{}/ws", server.addr), stream)
            .await
            .unwrap();
    assert_eq!(response.status(), 101);
    let hello = ClientMessage::Hello {
        id: 1,
        protocol: grand_melee_protocol::PROTOCOL_VERSION,
        client: "keep-alive".to_owned(),
    };
    ws.send(tokio_tungstenite::tungstenite::Message::Binary(
        grand_melee_protocol::encode_client(&hello).into(),
    ))
    .await
    .unwrap();
    let answer = ws.next().await.unwrap().unwrap().into_data();
    let welcome = grand_melee_protocol::decode_server(&answer).unwrap();
    assert!(
        matches!(welcome, ServerMessage::Welcome { reply_to: 1, .. }),
        "{welcome:?}"
    );
}
