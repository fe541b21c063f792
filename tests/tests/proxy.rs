//! Behind a reverse proxy (`--trusted-proxy`): from a trusted proxy's address the client is the
//! one `Forwarded` / `X-Forwarded-For` names and its scheme the one `X-Forwarded-Proto` names,
//! for every per-address cap, ban and origin check; from any other address those headers are
//! ignored.
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, SocketAddr};

use grand_melee_e2e::{Client, PATIENCE, TestServer, contains};
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage};
use grand_melee_server::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The reverse proxy of these tests.
const PROXY: [u8; 4] = [127, 0, 0, 2];
/// Another address that sends the same headers, but is no trusted proxy.
const STRANGER: [u8; 4] = [127, 0, 0, 3];

fn config_trusting_the_proxy() -> ServerConfig {
    ServerConfig {
        trusted_proxies: vec!["127.0.0.2/32".parse().unwrap()],
        ..ServerConfig::default()
    }
}

/// A raw WebSocket handshake from `from` with extra `headers`, after the requests in `before`
/// on the same connection (kept alive: the handshake then goes through hyper rather than the
/// fast path): the status of the handshake's answer, and the connection (kept open by the
/// caller, it holds its place under the caps).
async fn handshake(
    server: SocketAddr,
    from: [u8; 4],
    before: &str,
    headers: &[(&str, &str)],
) -> (u16, TcpStream) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::from(from), 0)).unwrap();
    let mut stream = socket.connect(server).await.unwrap();
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let request = format!(
        "{before}GET /ws HTTP/1.1\r\nHost: melee.test\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    // One answer per request, the handshake's last; or one refusal of the whole connection,
    // which the server then closes.
    let answers = 1 + before.matches("HTTP/1.1\r\n").count();
    let mut read = Vec::new();
    let status = tokio::time::timeout(PATIENCE, async {
        loop {
            let text = String::from_utf8_lossy(&read);
            let starts: Vec<usize> = text.match_indices("HTTP/1.1 ").map(|(i, _)| i).collect();
            let mut chunk = [0u8; 1024];
            let status = |nth: usize| text[starts[nth] + 9..starts[nth] + 12].parse::<u16>();
            if starts.len() >= answers && text[starts[answers - 1]..].contains("\r\n\r\n") {
                return status(answers - 1).unwrap();
            }
            let n = stream.read(&mut chunk).await.unwrap();
            if n == 0 {
                assert_eq!(starts.len(), 1, "closed before answering: {text}");
                return status(0).unwrap();
            }
            read.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .unwrap();
    (status, stream)
}

/// A page request kept alive, to send before a handshake on the same connection.
const KEEP_ALIVE: &str = "GET /healthz HTTP/1.1\r\nHost: melee.test\r\n\r\n";

#[tokio::test]
async fn each_forwarded_client_has_its_own_connection_cap() {
    let server = TestServer::start_with(ServerConfig {
        max_connections_per_ip: 1,
        ..config_trusting_the_proxy()
    })
    .await;
    let mut open = Vec::new();
    let mut expect = async |from, before, headers: &[(&str, &str)], status: u16, why: &str| {
        let (got, stream) = handshake(server.addr, from, before, headers).await;
        assert_eq!(got, status, "{why}");
        open.push(stream);
    };
    let xff = |client| [("X-Forwarded-For", client)];
    expect(PROXY, "", &xff("198.51.100.1"), 101, "a first client").await;
    expect(PROXY, "", &xff("198.51.100.2"), 101, "a second client").await;
    expect(PROXY, "", &xff("198.51.100.1"), 503, "the first one again").await;
    // The hyper path counts the same way.
    expect(
        PROXY,
        KEEP_ALIVE,
        &xff("198.51.100.1"),
        503,
        "again, via hyper",
    )
    .await;
    expect(
        PROXY,
        KEEP_ALIVE,
        &xff("198.51.100.3"),
        101,
        "a third, via hyper",
    )
    .await;
    // The client's own claim left of the proxy's entry is not believed.
    expect(
        PROXY,
        "",
        &xff("198.51.100.4, 198.51.100.1"),
        503,
        "the first one, claiming to be another",
    )
    .await;
    // Forwarded wins over X-Forwarded-For, and IPv6 counts by its /64.
    let both = [
        ("Forwarded", r#"for="[2001:db8:1:2::1]:4711";proto=https"#),
        ("X-Forwarded-For", "198.51.100.1"),
    ];
    expect(PROXY, "", &both, 101, "an IPv6 client in Forwarded").await;
    let same_home = [("Forwarded", r#"for="[2001:db8:1:2::99]""#)];
    expect(PROXY, "", &same_home, 503, "the same /64").await;
    let other_home = [("Forwarded", r#"for="[2001:db8:1:3::1]""#)];
    expect(PROXY, "", &other_home, 101, "another /64").await;
    // Malformed or unknown: the proxy's own address, which then has its one place.
    expect(PROXY, "", &xff("not-an-address"), 101, "garbage: the proxy").await;
    expect(PROXY, "", &[], 503, "no header: the proxy again").await;
    let hidden = [("Forwarded", "for=unknown")];
    expect(PROXY, "", &hidden, 503, "unknown: the proxy again").await;
    let broken = [("Forwarded", "for=\"198.51.100.9")];
    expect(PROXY, "", &broken, 503, "unparsable: the proxy again").await;
    // From an untrusted address the headers are ignored: the cap counts that address.
    expect(STRANGER, "", &xff("198.51.100.5"), 101, "a stranger").await;
    expect(
        STRANGER,
        "",
        &xff("198.51.100.6"),
        503,
        "the stranger again",
    )
    .await;
    expect(
        STRANGER,
        KEEP_ALIVE,
        &xff("198.51.100.7"),
        503,
        "and via hyper",
    )
    .await;
    // A closed connection gives its client's place back.
    let (status, first) = handshake(server.addr, PROXY, "", &xff("198.51.100.8")).await;
    assert_eq!(status, 101);
    drop(first);
    let again = async {
        loop {
            let (status, stream) = handshake(server.addr, PROXY, "", &xff("198.51.100.8")).await;
            if status == 101 {
                return stream;
            }
            assert_eq!(status, 503);
            tokio::task::yield_now().await;
        }
    };
    open.push(tokio::time::timeout(PATIENCE, again).await.unwrap());
    drop(open);
    server.shutdown().await;
}

#[tokio::test]
async fn a_ban_holds_for_the_forwarded_client_only() {
    let server = TestServer::start_with(config_trusting_the_proxy()).await;
    let via_proxy = async |client: &str| {
        Client::connect_with(server.addr, PROXY.into(), &[("X-Forwarded-For", client)]).await
    };
    let mut host = Client::connected(server.addr).await;
    let table = host.create_table("behind a proxy", 8, 1).await;
    host.join(table, "Alice").await.unwrap();
    let mut pest = via_proxy("198.51.100.7").await;
    pest.hello().await;
    let pest_id = pest.join(table, "Pest").await.unwrap();
    let kicked = host
        .call(|id| ClientMessage::Kick {
            id,
            player: pest_id,
            ban: true,
        })
        .await;
    assert!(
        matches!(kicked, Ok(ServerMessage::Ack { .. })),
        "{kicked:?}"
    );
    let mut again = via_proxy("198.51.100.7").await;
    again.hello().await;
    assert_eq!(again.join(table, "Pest").await, Err(ErrorCode::Banned));
    let mut neighbour = via_proxy("198.51.100.8").await;
    neighbour.hello().await;
    assert!(neighbour.join(table, "Neighbour").await.is_ok());
    // The proxy's own address is not banned either.
    let mut local = Client::connect_from(server.addr, PROXY.into()).await;
    local.hello().await;
    assert!(local.join(table, "Proxy Admin").await.is_ok());
    // A stranger claiming to be the banned client is not believed, in either direction.
    let mut stranger = Client::connect_with(
        server.addr,
        STRANGER.into(),
        &[("X-Forwarded-For", "198.51.100.7")],
    )
    .await;
    stranger.hello().await;
    assert!(stranger.join(table, "Stranger").await.is_ok());
    server.shutdown().await;
}

#[tokio::test]
async fn a_trusted_proxy_names_the_scheme_of_the_public_address() {
    let server = TestServer::start_with(ServerConfig {
        allowed_origins: vec!["https://friends.example".to_owned()],
        public_url: Some("http://melee.test".to_owned()),
        ..config_trusting_the_proxy()
    })
    .await;
    let page = ("Origin", "https://melee.test");
    let https = ("X-Forwarded-Proto", "https");
    let status =
        async |from, headers: &[(&str, &str)]| handshake(server.addr, from, "", headers).await.0;
    assert_eq!(status(PROXY, &[page, https]).await, 101);
    assert_eq!(
        status(
            PROXY,
            &[page, ("Forwarded", "for=198.51.100.1;proto=https")]
        )
        .await,
        101
    );
    // Through hyper too.
    let (via_hyper, _) = handshake(server.addr, PROXY, KEEP_ALIVE, &[page, https]).await;
    assert_eq!(via_hyper, 101);
    // The proxy did not say https, or said something else, or is no trusted proxy.
    assert_eq!(status(PROXY, &[page]).await, 403);
    assert_eq!(
        status(PROXY, &[page, ("X-Forwarded-Proto", "http")]).await,
        403
    );
    assert_eq!(
        status(PROXY, &[page, ("X-Forwarded-Proto", "gopher")]).await,
        403
    );
    assert_eq!(status(STRANGER, &[page, https]).await, 403);
    let (via_hyper, _) = handshake(server.addr, STRANGER, KEEP_ALIVE, &[page, https]).await;
    assert_eq!(via_hyper, 403);
    // The public URL's own origin stays allowed, and the listed one.
    assert_eq!(
        status(STRANGER, &[("Origin", "http://melee.test")]).await,
        101
    );
    assert_eq!(
        status(STRANGER, &[("Origin", "https://friends.example")]).await,
        101
    );
    // Another page is refused whatever the proxy says.
    assert_eq!(
        status(PROXY, &[("Origin", "https://evil.example"), https]).await,
        403
    );
    server.shutdown().await;
}

#[tokio::test]
async fn refusals_over_the_forwarded_cap_say_why() {
    let server = TestServer::start_with(ServerConfig {
        max_connections_per_ip: 1,
        ..config_trusting_the_proxy()
    })
    .await;
    let xff = [("X-Forwarded-For", "198.51.100.1")];
    let (first, _open) = handshake(server.addr, PROXY, "", &xff).await;
    assert_eq!(first, 101);
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(PROXY.into(), 0)).unwrap();
    let mut stream = socket.connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"GET /ws HTTP/1.1\r\nHost: melee.test\r\nUpgrade: websocket\r\n\
              Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Forwarded-For: 198.51.100.1\r\n\
              Connection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert!(
        contains(&answer, b"too many connections from this address"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let metrics = grand_melee_e2e::http_get(server.addr, "/metrics").await;
    assert!(
        metrics.contains("gm_connections_refused_total 1"),
        "{metrics}"
    );
    server.shutdown().await;
}
