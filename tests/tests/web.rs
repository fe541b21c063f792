//! What the browser seat needs from the server, over real sockets: the pages and assets with
//! their caching and security headers, the origin rules, and `get_events` (the paged past of a
//! table, from which a reloaded page rebuilds its log and chat).
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{SelfSigned, TestServer, http_get, http_request, started_game};
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

/// A WebSocket handshake at `/ws` with `origin` (none if empty) and the `Host` `host`.
fn handshake(origin: &str, host: &str) -> String {
    let origin = if origin.is_empty() {
        String::new()
    } else {
        format!("Origin: {origin}\r\n")
    };
    format!(
        "GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{origin}\r\n"
    )
}

/// The two ways a handshake reaches the server: as a connection's first request (answered
/// without hyper), and after a page request on a kept-alive connection (answered by hyper).
const PATHS: [&str; 2] = ["first request", "after a page request"];

/// The answer to `request` sent on a fresh connection, first or after a `GET /healthz` (see
/// [`PATHS`]): its status code and body.
async fn handshake_answer(addr: std::net::SocketAddr, path: &str, request: &str) -> (u16, String) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    answer_on(stream, path, request).await
}

/// [`handshake_answer`] on a connection already made (plain or TLS).
async fn answer_on<S>(stream: S, path: &str, request: &str) -> (u16, String)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::io::BufReader::new(stream);
    if path == PATHS[1] {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(
            read_answer(&mut stream, false).await,
            (200, "ok\n".to_owned())
        );
    }
    stream.write_all(request.as_bytes()).await.unwrap();
    read_answer(&mut stream, request.starts_with("HEAD ")).await
}

/// Reads one answer: its status code and its body (none for `101`, or for a `HEAD`).
async fn read_answer<S>(stream: &mut tokio::io::BufReader<S>, head_only: bool) -> (u16, String)
where
    S: tokio::io::AsyncRead + Unpin,
{
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut status = String::new();
    stream.read_line(&mut status).await.unwrap();
    let code = status
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {status:?}"));
    let mut length = 0;
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).await.unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    if code == 101 || head_only {
        return (code, String::new());
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.unwrap();
    (code, String::from_utf8(body).unwrap())
}

/// The value of one counter of `/metrics`.
async fn counter(addr: std::net::SocketAddr, name: &str) -> u64 {
    let metrics = http_get(addr, "/metrics").await;
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

#[tokio::test]
async fn the_origin_check_trusts_the_socket_and_the_configuration_not_the_host_header() {
    let config = ServerConfig {
        allowed_origins: vec!["https://good.example".to_owned()],
        public_url: Some("https://play.example".to_owned()),
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let port = server.addr.port();
    let at = |host: &str| format!("{host}:{port}");
    let cases = [
        // The case: a page whose Host is its own name is not the server's page.
        (
            "http://evil.example".to_owned(),
            "evil.example".to_owned(),
            403,
        ),
        // DNS rebinding: evil.example resolves to this server, on this port.
        (at("http://evil.example"), at("evil.example"), 403),
        // The address the client connected to is the server's own, whatever the Host says.
        (at("http://127.0.0.1"), at("evil.example"), 101),
        (at("http://localhost"), at("localhost"), 101),
        (at("https://127.0.0.1"), at("127.0.0.1"), 403),
        (
            format!("http://127.0.0.1:{}", port ^ 1),
            at("127.0.0.1"),
            403,
        ),
        // --public-url is the server's own, with its scheme; --allowed-origins is listed.
        ("https://play.example".to_owned(), at("127.0.0.1"), 101),
        (
            "https://play.example:443".to_owned(),
            "play.example".to_owned(),
            101,
        ),
        (
            "http://play.example".to_owned(),
            "play.example".to_owned(),
            403,
        ),
        ("https://good.example".to_owned(), at("127.0.0.1"), 101),
        (
            "https://evil.example".to_owned(),
            "good.example".to_owned(),
            403,
        ),
        ("null".to_owned(), at("127.0.0.1"), 403),
        // No Origin: not a browser (a bot, the terminal client).
        (String::new(), "evil.example".to_owned(), 101),
    ];
    for path in PATHS {
        for (origin, host, expected) in &cases {
            let (code, body) = handshake_answer(server.addr, path, &handshake(origin, host)).await;
            assert_eq!(code, *expected, "{origin} at {host}, {path}: {body}");
            if code == 403 {
                assert_eq!(body, "origin not allowed\n");
            }
        }
    }
    let refused = cases.iter().filter(|c| c.2 == 403).count() * PATHS.len();
    assert_eq!(
        counter(server.addr, "gm_handshakes_refused_total").await,
        refused as u64
    );
}

#[tokio::test]
async fn malformed_handshakes_are_refused_with_400_and_counted() {
    let server = TestServer::start().await;
    let valid = handshake("", "localhost");
    let cases = [
        (
            valid.replace(
                "Host: localhost\r\n",
                "Host: localhost\r\nHost: evil.example\r\n",
            ),
            "more than one Host header",
        ),
        (
            valid.replace("Host: localhost", "Host:"),
            "empty Host header",
        ),
        (
            valid.replace("Host: localhost", "Host:  "),
            "empty Host header",
        ),
        (valid.replace("Host: localhost\r\n", ""), "no Host header"),
        (
            valid.replacen("GET", "HEAD", 1),
            "a WebSocket handshake must be a GET request",
        ),
        (
            valid.replace("HTTP/1.1", "HTTP/1.0"),
            "a WebSocket handshake needs HTTP/1.1",
        ),
        (
            valid.replace("dGhlIHNhbXBsZSBub25jZQ==", ""),
            "Sec-WebSocket-Key must be the base64 of 16 bytes",
        ),
        (
            // Ten bytes, not sixteen.
            valid.replace("dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZQ=="),
            "Sec-WebSocket-Key must be the base64 of 16 bytes",
        ),
        (
            valid.replace("dGhlIHNhbXBsZSBub25jZQ==", "not base64 at all, 24 ch"),
            "Sec-WebSocket-Key must be the base64 of 16 bytes",
        ),
        (
            valid.replace(
                "\r\n\r\n",
                "\r\nOrigin: http://a.example\r\nOrigin: http://b.example\r\n\r\n",
            ),
            "more than one Origin header",
        ),
    ];
    for path in PATHS {
        for (request, reason) in &cases {
            let (code, body) = handshake_answer(server.addr, path, request).await;
            assert_eq!(code, 400, "{reason}, {path}: {body}");
            if !request.starts_with("HEAD ") {
                assert_eq!(body, format!("{reason}\n"), "{path}");
            }
        }
        // The same request, well formed, is accepted.
        assert_eq!(handshake_answer(server.addr, path, &valid).await.0, 101);
    }
    assert_eq!(
        counter(server.addr, "gm_handshakes_refused_total").await,
        (cases.len() * PATHS.len()) as u64
    );
}

#[tokio::test]
async fn over_tls_the_certificates_names_are_the_servers_own_origins() {
    use tokio_rustls::rustls::pki_types;
    let certificate = SelfSigned::for_names(&["melee.test", "*.tables.test"]);
    let config = ServerConfig {
        allowed_origins: vec!["https://elsewhere.example".to_owned()],
        ..certificate.config()
    };
    let server = TestServer::start_with(config).await;
    let port = server.addr.port();
    let connector = certificate.connector();
    for (name, origin, expected) in [
        ("melee.test", format!("https://melee.test:{port}"), 101),
        (
            "east.tables.test",
            format!("https://east.tables.test:{port}"),
            101,
        ),
        // The page the browser test loads: https://localhost:PORT, on loopback.
        ("melee.test", format!("https://localhost:{port}"), 101),
        ("melee.test", format!("https://other.test:{port}"), 403),
        ("melee.test", format!("https://a.b.tables.test:{port}"), 403),
        ("melee.test", format!("http://melee.test:{port}"), 403),
        ("melee.test", "https://melee.test".to_owned(), 403),
    ] {
        let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let server_name = pki_types::ServerName::try_from(name.to_owned()).unwrap();
        let tls = connector.connect(server_name, tcp).await.unwrap();
        let (code, body) = answer_on(tls, PATHS[0], &handshake(&origin, name)).await;
        assert_eq!(code, expected, "{origin} over TLS to {name}: {body}");
    }
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

/// A table, replay or league id has one spelling (docs/src/public-server.md, PROTOCOL.md "Encoding"): the page's
/// routes serve only the lower-case hyphenated one, and every other spelling of the same id
/// (upper case, braces, `urn:uuid:`, no hyphens) is an unknown path like any other: 404.
#[tokio::test]
async fn page_routes_take_an_id_in_its_one_spelling_only() {
    let server = TestServer::start().await;
    let id = "1ea90e00-aaaa-4bbb-8ccc-0dddeeeeff01";
    for route in ["/leagues/", "/t/", "/replays/"] {
        let page = http_get(server.addr, &format!("{route}{id}")).await;
        assert!(page.starts_with("HTTP/1.1 200"), "{route}{id}: {page}");
        for spelling in [
            id.to_uppercase(),
            format!("{{{id}}}"),
            format!("urn:uuid:{id}"),
            id.replace('-', ""),
        ] {
            let path = format!("{route}{spelling}");
            let page = http_get(server.addr, &path).await;
            assert!(page.starts_with("HTTP/1.1 404"), "{path}: {page}");
        }
    }
}
