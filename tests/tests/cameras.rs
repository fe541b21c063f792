//! Cameras between the players within range (issue 32), at the socket level: who is linked
//! with whom (`camera_peers`), the signals relayed between linked peers only — every refusal
//! relayed to nobody —, the links following eliminations and removed positions, the display,
//! and the ICE servers with minted TURN credentials, which a real coturn (docs/src/turn.md's set-up)
//! accepts.
//!
//! "Relayed to nobody" is proved without waiting: after a refused signal, a chat line (the
//! marker) is sent at the table; every would-be receiver's next message must be that line, so
//! nothing reached it in between (the actor handles one request after the other, and a relayed
//! signal would have been queued before the marker's events).
#![allow(clippy::unwrap_used)]

use base64::Engine;
use clap::Parser;
use grand_melee_e2e::{Client, CreateTable, Received, TestServer, keep_all_hands};
use grand_melee_protocol::{
    CameraPeer, ClientMessage, ErrorCode, Event, MAX_SIGNAL_BYTES, Peer, PlayerId, SIGNAL_BURST,
    SeatToken, SeatingMode, ServerMessage, StageName, TableId,
};
use grand_melee_server::ServerConfig;
use hmac::{KeyInit, Mac};

fn config() -> ServerConfig {
    ServerConfig {
        max_tables_per_ip: 0,
        table_creations_per_minute: 0,
        rate_limit: 1e6,
        rate_burst: 1e6,
        flood_strikes: 1e6,
        chat_per_minute: 1e8,
        table_chat_per_minute: 0.0,
        ..ServerConfig::default()
    }
}

/// A client and what it was told of its camera links.
struct Member {
    client: Client,
    /// The last `camera_peers` it received.
    peers: Vec<CameraPeer>,
}

impl Member {
    fn new(client: Client) -> Self {
        Self {
            client,
            peers: Vec::new(),
        }
    }

    /// The next message (noting `camera_peers`).
    async fn next(&mut self) -> ServerMessage {
        let message = self
            .client
            .until(|r| match r {
                Received::Message(message, _) => Some((**message).clone()),
                Received::Closed(_) => None,
            })
            .await;
        if let ServerMessage::CameraPeers { peers } = &message {
            self.peers = peers.clone();
        }
        message
    }

    /// Sends a request and waits for its answer, noting what comes before it.
    async fn call(
        &mut self,
        build: impl FnOnce(u32) -> ClientMessage,
    ) -> Result<ServerMessage, ErrorCode> {
        let id = self.client.send(build);
        loop {
            match self.next().await {
                ServerMessage::Error {
                    reply_to: Some(r),
                    code,
                    ..
                } if r == id => return Err(code),
                message if message.reply_to() == Some(id) => return Ok(message),
                _ => {}
            }
        }
    }

    /// Waits until its links are `expected` (by peer).
    async fn until_linked(&mut self, expected: &[Peer]) {
        while self.linked() != expected {
            self.next().await;
        }
    }

    fn linked(&self) -> Vec<Peer> {
        self.peers.iter().map(|p| p.peer).collect()
    }

    async fn catch_up(&mut self, seq: u64) {
        while self.client.view.as_ref().map_or(0, |v| v.seq) < seq {
            self.next().await;
        }
    }

    /// Turns the camera on or off; answered by `ice_servers`.
    async fn camera(&mut self, on: bool, stream: bool) -> ServerMessage {
        let answer = self
            .call(|id| ClientMessage::Camera {
                id,
                on,
                stream,
                stay: false,
            })
            .await
            .unwrap();
        assert!(
            matches!(answer, ServerMessage::IceServers { .. }),
            "{answer:?}"
        );
        answer
    }

    async fn signal(&mut self, to: Peer, payload: &str) -> Result<ServerMessage, ErrorCode> {
        self.call(|id| ClientMessage::Signal {
            id,
            to,
            payload: payload.to_owned(),
        })
        .await
    }

    /// Says `text` at the table (the marker); returns once it is acknowledged.
    async fn say(&mut self, text: &str) {
        let said = self
            .call(|id| ClientMessage::Chat {
                id,
                text: text.to_owned(),
            })
            .await;
        assert!(matches!(said, Ok(ServerMessage::Ack { .. })), "{said:?}");
    }

    /// Its next message is the marker `text`: nothing came before it.
    async fn next_is_marker(&mut self, text: &str) {
        let next = self.next().await;
        let ServerMessage::Events { events, .. } = &next else {
            panic!("expected the marker {text:?}, got {next:?}");
        };
        assert!(
            matches!(events.as_slice(), [Event::Chat { text: t, .. }] if t == text),
            "expected the marker {text:?}, got {next:?}"
        );
    }
}

/// A table of `n` players with spell range 1, seated in join order (the ring is 0, 1, …, n - 1;
/// member `i` is player `i`, member 0 the host), started with every hand kept, and one more
/// connection watching it.
async fn ring(server: &TestServer, n: u8) -> (TableId, Vec<Member>, Member) {
    let mut clients = vec![server.client().await];
    let table = clients[0]
        .create(CreateTable::new("cameras", n).spell_range(1))
        .await
        .unwrap();
    for _ in 1..n {
        clients.push(server.client().await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        assert_eq!(client.join(table, &format!("P{i}")).await, Ok(i as u16));
    }
    let started = clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: Some(0),
            seating: SeatingMode::Arranged,
            order: (0..u16::from(n)).collect(),
        })
        .await;
    let Ok(ServerMessage::Ack { seq, .. }) = started else {
        panic!("{started:?}");
    };
    for client in &mut clients {
        client.catch_up(seq).await;
    }
    keep_all_hands(&mut clients).await;
    assert_eq!(clients[0].view.as_ref().unwrap().stage, StageName::Playing);
    let mut watcher = server.client().await;
    watcher.watch(table).await;
    let seq = watcher.view.as_ref().unwrap().seq;
    let mut members: Vec<Member> = clients.into_iter().map(Member::new).collect();
    for member in &mut members {
        member.catch_up(seq).await;
    }
    (table, members, Member::new(watcher))
}

fn neighbours(p: u16, n: u16) -> Vec<Peer> {
    let mut out = vec![Peer::Player((p + 1) % n), Peer::Player((p + n - 1) % n)];
    out.sort();
    out
}

/// Every member turns his camera on, and each is linked with exactly his two neighbours.
async fn all_on(members: &mut [Member]) {
    let n = members.len() as u16;
    for member in members.iter_mut() {
        member.camera(true, false).await;
    }
    for (p, member) in members.iter_mut().enumerate() {
        member.until_linked(&neighbours(p as u16, n)).await;
    }
}

#[tokio::test]
async fn each_player_is_linked_with_exactly_his_neighbours_and_signals_go_to_them_only() {
    let server = TestServer::start_with(config()).await;
    let (_, mut m, mut watcher) = ring(&server, 6).await;
    all_on(&mut m).await;
    // The lower id offers, with the names.
    assert_eq!(
        m[0].peers
            .iter()
            .map(|p| (p.peer, p.name.as_str(), p.offer))
            .collect::<Vec<_>>(),
        [(Peer::Player(1), "P1", true), (Peer::Player(5), "P5", true)]
    );
    assert!(m[5].peers.iter().all(|p| !p.offer), "{:?}", m[5].peers);

    // A signal to a neighbour is relayed byte for byte.
    let payload =
        r#"{"description":{"type":"offer","sdp":"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n"},"é":"✓"}"#;
    let ack = m[0].signal(Peer::Player(1), payload).await;
    assert!(matches!(ack, Ok(ServerMessage::Ack { .. })), "{ack:?}");
    assert_eq!(
        m[1].next().await,
        ServerMessage::Signal {
            from: Peer::Player(0),
            payload: payload.to_owned(),
        }
    );

    // Out of range (3 is three seats away), himself, nobody, the display (there is none): refused.
    for to in [
        Peer::Player(3),
        Peer::Player(0),
        Peer::Player(40),
        Peer::Display,
    ] {
        assert_eq!(
            m[0].signal(to, "{}").await,
            Err(ErrorCode::NotLinked),
            "{to:?}"
        );
    }
    // From a spectator.
    assert_eq!(
        watcher.signal(Peer::Player(1), "{}").await,
        Err(ErrorCode::NotAPlayer)
    );
    // Over the size limit, to a neighbour.
    let big = "x".repeat(MAX_SIGNAL_BYTES + 1);
    assert_eq!(
        m[0].signal(Peer::Player(1), &big).await,
        Err(ErrorCode::SignalTooLarge)
    );
    // Relayed to nobody: everyone's next message is the marker.
    m[2].say("marker 1").await;
    for (p, member) in m.iter_mut().enumerate() {
        if p != 2 {
            member.next_is_marker("marker 1").await;
        }
    }
    watcher.next_is_marker("marker 1").await;
}

#[tokio::test]
async fn a_signal_to_a_player_id_of_another_table_reaches_nobody() {
    let server = TestServer::start_with(config()).await;
    let (_, mut m, _watcher) = ring(&server, 6).await;
    all_on(&mut m).await;
    // Another table, whose player 6 exists (only there), with his camera on.
    let mut others = vec![Member::new(server.client().await)];
    let other = others[0]
        .client
        .create(CreateTable::new("elsewhere", 8).spell_range(1))
        .await
        .unwrap();
    for _ in 1..7 {
        others.push(Member::new(server.client().await));
    }
    for (i, member) in others.iter_mut().enumerate() {
        assert_eq!(
            member.client.join(other, &format!("Q{i}")).await,
            Ok(i as u16)
        );
    }
    let seq = others[0].client.view.as_ref().unwrap().seq;
    others[6].catch_up(seq).await;
    others[6].camera(true, true).await;
    assert_eq!(
        m[0].signal(Peer::Player(6), "{}").await,
        Err(ErrorCode::NotLinked)
    );
    others[0].say("marker 2").await;
    others[6].next_is_marker("marker 2").await;
    m[1].say("marker 3").await;
    m[0].next_is_marker("marker 3").await;
    m[5].next_is_marker("marker 3").await;
}

#[tokio::test]
async fn signals_over_their_rate_are_refused_and_relayed_to_nobody() {
    let server = TestServer::start_with(config()).await;
    let (_, mut m, _watcher) = ring(&server, 6).await;
    all_on(&mut m).await;
    // Far more than the bucket holds, at once: the first ones go, the rest are refused.
    let count = 4 * SIGNAL_BURST;
    let ids: Vec<u32> = (0..count)
        .map(|k| {
            m[0].client.send(|id| ClientMessage::Signal {
                id,
                to: Peer::Player(1),
                payload: format!("signal {k}"),
            })
        })
        .collect();
    // Refusals are answered by the connection at once, acks by the table: in any order.
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < ids.len() {
        match m[0].next().await {
            ServerMessage::Ack { reply_to, .. } => {
                answers.insert(reply_to, Ok(()));
            }
            ServerMessage::Error {
                reply_to: Some(r),
                code,
                ..
            } => {
                answers.insert(r, Err(code));
            }
            _ => {}
        }
    }
    let mut relayed_expected = Vec::new();
    let mut refused = 0;
    for (k, id) in ids.iter().enumerate() {
        match answers[id] {
            Ok(()) => relayed_expected.push(format!("signal {k}")),
            Err(code) => {
                assert_eq!(code, ErrorCode::RateLimited);
                refused += 1;
            }
        }
    }
    assert!(refused > 0, "none of {count} signals was refused");
    assert!(
        relayed_expected.len() >= SIGNAL_BURST as usize / 2,
        "{relayed_expected:?}"
    );
    // The receiver got exactly the accepted ones, in order, then the marker; his other
    // neighbour nothing.
    m[2].say("marker 4").await;
    let mut relayed = Vec::new();
    loop {
        match m[1].next().await {
            ServerMessage::Signal { from, payload } => {
                assert_eq!(from, Peer::Player(0));
                relayed.push(payload);
            }
            ServerMessage::Events { events, .. } => {
                assert!(
                    matches!(events.as_slice(), [Event::Chat { text, .. }] if text == "marker 4")
                );
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(relayed, relayed_expected);
    m[5].next_is_marker("marker 4").await;
}

#[tokio::test]
async fn an_elimination_and_a_removed_position_relink_and_a_camera_off_unlinks() {
    let server = TestServer::start_with(config()).await;
    let (_, mut m, _watcher) = ring(&server, 6).await;
    all_on(&mut m).await;
    // P3 is eliminated: his links go at once; P2 and P4 are still two positions apart.
    let ruled = m[0]
        .call(|id| ClientMessage::Ruling {
            id,
            ruling: grand_melee_protocol::Ruling::Eliminate { players: vec![3] },
        })
        .await;
    assert!(matches!(ruled, Ok(ServerMessage::Ack { .. })), "{ruled:?}");
    m[3].until_linked(&[]).await;
    m[2].until_linked(&[Peer::Player(1)]).await;
    m[4].until_linked(&[Peer::Player(5)]).await;
    assert_eq!(
        m[2].signal(Peer::Player(3), "{}").await,
        Err(ErrorCode::NotLinked)
    );
    assert_eq!(
        m[2].signal(Peer::Player(4), "{}").await,
        Err(ErrorCode::NotLinked)
    );
    // Turns end until his position is removed: P2 and P4 come into range and are linked.
    for _ in 0..100 {
        let view = m[0].client.view.clone().unwrap();
        if view.ring.len() == 5 {
            break;
        }
        let holder = m[0].client.running_players()[0];
        let ended = m[usize::from(holder)]
            .call(|id| ClientMessage::EndTurn { id })
            .await;
        let Ok(ServerMessage::Ack { seq, .. }) = ended else {
            panic!("{ended:?}");
        };
        m[0].catch_up(seq).await;
    }
    assert!(!m[0].client.view.as_ref().unwrap().ring.contains(&3));
    m[2].until_linked(&[Peer::Player(1), Peer::Player(4)]).await;
    m[4].until_linked(&[Peer::Player(2), Peer::Player(5)]).await;
    let ack = m[4].signal(Peer::Player(2), "now in range").await;
    assert!(matches!(ack, Ok(ServerMessage::Ack { .. })), "{ack:?}");
    assert_eq!(
        m[2].next().await,
        ServerMessage::Signal {
            from: Peer::Player(4),
            payload: "now in range".to_owned(),
        }
    );
    // A camera turned off unlinks it from both neighbours, and him from them.
    m[1].camera(false, false).await;
    m[1].until_linked(&[]).await;
    m[0].until_linked(&[Peer::Player(5)]).await;
    m[2].until_linked(&[Peer::Player(4)]).await;
    assert_eq!(
        m[0].signal(Peer::Player(1), "{}").await,
        Err(ErrorCode::NotLinked)
    );
    m[5].say("marker 5").await;
    m[1].next_is_marker("marker 5").await;
}

#[tokio::test]
async fn the_hosts_display_gets_the_stream_players_of_the_chosen_sphere_only() {
    let server = TestServer::start_with(config()).await;
    let (_, mut m, mut display) = ring(&server, 6).await;
    let host_token: SeatToken = m[0].client.seat.unwrap().1;
    let other_token: SeatToken = m[1].client.seat.unwrap().1;
    // P0, P1, P2 and P4 stream; P5's camera is on without it; P3's is off.
    for p in [0, 1, 2, 4] {
        m[p].camera(true, true).await;
    }
    m[5].camera(true, false).await;
    // A wrong token, a seated connection, an unknown centre: refused.
    let show = |token: SeatToken, center: Option<PlayerId>| {
        move |id| ClientMessage::CameraDisplay { id, token, center }
    };
    assert_eq!(
        display.call(show(other_token, Some(1))).await,
        Err(ErrorCode::NotHost)
    );
    assert_eq!(
        m[0].call(show(host_token, Some(1))).await,
        Err(ErrorCode::NotWatching)
    );
    assert_eq!(
        display.call(show(host_token, Some(9))).await,
        Err(ErrorCode::UnknownPlayer)
    );
    // P1's sphere: P0, P1, P2 (P5 does not stream, P4 is out of it).
    let answer = display.call(show(host_token, Some(1))).await;
    assert!(
        matches!(answer, Ok(ServerMessage::IceServers { .. })),
        "{answer:?}"
    );
    display
        .until_linked(&[Peer::Player(0), Peer::Player(1), Peer::Player(2)])
        .await;
    assert!(display.peers.iter().all(|p| !p.offer));
    m[1].until_linked(&[Peer::Player(0), Peer::Player(2), Peer::Display])
        .await;
    assert!(
        m[1].peers
            .iter()
            .any(|p| p.peer == Peer::Display && p.offer)
    );
    // The player offers to the display, which answers him; nobody else is reached.
    let ack = m[1].signal(Peer::Display, "offer").await;
    assert!(matches!(ack, Ok(ServerMessage::Ack { .. })), "{ack:?}");
    assert_eq!(
        display.next().await,
        ServerMessage::Signal {
            from: Peer::Player(1),
            payload: "offer".to_owned(),
        }
    );
    let ack = display.signal(Peer::Player(1), "answer").await;
    assert!(matches!(ack, Ok(ServerMessage::Ack { .. })), "{ack:?}");
    assert_eq!(
        m[1].next().await,
        ServerMessage::Signal {
            from: Peer::Display,
            payload: "answer".to_owned(),
        }
    );
    assert_eq!(
        display.signal(Peer::Player(4), "{}").await,
        Err(ErrorCode::NotLinked)
    );
    assert_eq!(
        m[4].signal(Peer::Display, "{}").await,
        Err(ErrorCode::NotLinked)
    );
    m[3].say("marker 6").await;
    m[4].next_is_marker("marker 6").await;
    // Stopped: the players lose the display.
    let answer = display.call(show(host_token, None)).await;
    assert!(matches!(answer, Ok(ServerMessage::IceServers { .. })));
    display.until_linked(&[]).await;
    m[1].until_linked(&[Peer::Player(0), Peer::Player(2)]).await;
}

#[tokio::test]
async fn ice_servers_carry_the_configured_servers_with_minted_turn_credentials() {
    let secret = "north-hall-secret";
    let flags = ServerConfig::try_parse_from([
        "grand-melee-server",
        "--ice-server",
        "stun:stun.example.org:3478",
        "--ice-server",
        "turn:turn.example.org:3478?transport=udp",
        "--turn-secret",
        secret,
        "--turn-ttl-secs",
        "600",
    ])
    .unwrap();
    let server = TestServer::start_with(ServerConfig {
        ice_servers: flags.ice_servers,
        turn_secret: flags.turn_secret,
        turn_ttl_secs: flags.turn_ttl_secs,
        ..config()
    })
    .await;
    let (table, mut m, mut display) = ring(&server, 3).await;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Issue 43: no link yet (both neighbours' cameras are off), so no TURN credentials: the
    // STUN server only.
    let alone = m[1].camera(true, true).await;
    let ServerMessage::IceServers { servers, .. } = &alone else {
        panic!("{alone:?}");
    };
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0].urls, ["stun:stun.example.org:3478"]);
    // Player 2's camera links him with player 1: his answer carries credentials, and player 1
    // gets his own, unasked, just before the link.
    let answer = m[2].camera(true, true).await;
    let refreshed = loop {
        match m[1].next().await {
            ServerMessage::IceServers { reply_to, servers } => {
                assert_eq!(reply_to, None);
                break ServerMessage::IceServers { reply_to, servers };
            }
            ServerMessage::CameraPeers { peers } => panic!("links before credentials: {peers:?}"),
            _ => {}
        }
    };
    m[1].until_linked(&[Peer::Player(2)]).await;
    let host_token = m[0].client.seat.unwrap().1;
    let shown = display
        .call(|id| ClientMessage::CameraDisplay {
            id,
            token: host_token,
            center: Some(0),
        })
        .await
        .unwrap();
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for (answer, user) in [
        (answer, format!("gm-{table}-2")),
        (refreshed, format!("gm-{table}-1")),
        (shown, format!("gm-{table}-display")),
    ] {
        let ServerMessage::IceServers { servers, .. } = answer else {
            panic!("{answer:?}");
        };
        assert_eq!(servers.len(), 2, "{servers:?}");
        assert_eq!(servers[0].urls, ["stun:stun.example.org:3478"]);
        assert_eq!(
            (&servers[0].username, &servers[0].credential),
            (&None, &None)
        );
        assert_eq!(
            servers[1].urls,
            ["turn:turn.example.org:3478?transport=udp"]
        );
        let username = servers[1].username.clone().unwrap();
        let (expiry, name) = username.split_once(':').unwrap();
        assert_eq!(name, user);
        let expiry: u64 = expiry.parse().unwrap();
        assert!(
            (before + 600..=after + 600).contains(&expiry),
            "{expiry} not {before}+600..={after}+600"
        );
        // The scheme: base64(HMAC-SHA1(secret, username)).
        let mut mac = hmac::Hmac::<sha1::Sha1>::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(username.as_bytes());
        let expected =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        assert_eq!(servers[1].credential.as_deref(), Some(expected.as_str()));
    }
    // A spectator may not turn a camera on.
    assert_eq!(
        display
            .call(|id| ClientMessage::Camera {
                id,
                on: true,
                stream: false,
                stay: false,
            })
            .await,
        Err(ErrorCode::NotAPlayer)
    );
}

#[tokio::test]
async fn a_server_without_ice_servers_answers_an_empty_list() {
    let server = TestServer::start_with(config()).await;
    let (_, mut m, _watcher) = ring(&server, 2).await;
    let answer = m[0].camera(true, false).await;
    assert!(
        matches!(&answer, ServerMessage::IceServers { servers, .. } if servers.is_empty()),
        "{answer:?}"
    );
}

#[tokio::test]
async fn the_server_refuses_to_start_with_bad_ice_settings_and_says_why() {
    let data = tempfile::tempdir().unwrap();
    for (flags, says) in [
        (
            vec!["--ice-server", "turn.example.org"],
            "--ice-server \"turn.example.org\": not a STUN or TURN URL",
        ),
        (
            vec![
                "--ice-server",
                "stun:stun.example.org",
                "--turn-secret",
                "s3cret",
            ],
            "--turn-secret needs at least one --ice-server turn:",
        ),
    ] {
        let mut config = ServerConfig::try_parse_from(
            std::iter::once("grand-melee-server").chain(flags.iter().copied()),
        )
        .unwrap();
        config.listen = "127.0.0.1:0".parse().unwrap();
        config.data_dir = data.path().to_owned();
        let error = grand_melee_server::Server::bind(config).await.unwrap_err();
        assert!(error.to_string().contains(says), "{error}");
    }
}

/// coturn's `turnserver` and its test client, installed from Debian's `coturn` when missing
/// (serialised across test processes with a lock file), or the exact command to run.
fn coturn() -> (std::path::PathBuf, std::path::PathBuf) {
    const INSTALL: &str = "apt-get install coturn";
    let find = |name: &str| {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    };
    let found = || Some((find("turnserver")?, find("turnutils_uclient")?));
    if let Some(both) = found() {
        return both;
    }
    let lock_path = std::env::temp_dir().join("grand-melee-coturn-install.lock");
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.lock().unwrap();
    if let Some(both) = found() {
        return both;
    }
    if let Err(error) = grand_melee_e2e::apt_install(&["coturn"]) {
        panic!("the TURN test needs coturn ({error}); install it with: {INSTALL}");
    }
    found().unwrap_or_else(|| panic!("coturn installed but not on PATH; run: {INSTALL}"))
}

/// A coturn on loopback with `use-auth-secret`, as docs/src/turn.md configures it, stopped on drop.
struct Coturn {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Coturn {
    /// Starts it and waits until its log says it is serving (its user database opened last).
    fn start(turnserver: &std::path::Path, secret: &str) -> Self {
        use std::io::BufRead;
        let port = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The relay ports: a small range of this process's own, away from other test runs.
        let relay = 50_000 + (std::process::id() % 1_000) as u16 * 10;
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(turnserver)
            .args([
                "-n".to_owned(),
                "-v".to_owned(),
                "--listening-ip=127.0.0.1".to_owned(),
                format!("--listening-port={port}"),
                "--relay-ip=127.0.0.1".to_owned(),
                format!("--min-port={relay}"),
                format!("--max-port={}", relay + 9),
                "--fingerprint".to_owned(),
                "--use-auth-secret".to_owned(),
                format!("--static-auth-secret={secret}"),
                "--realm=melee.test".to_owned(),
                "--no-cli".to_owned(),
                "--no-tls".to_owned(),
                "--no-dtls".to_owned(),
                "--allow-loopback-peers".to_owned(),
                "--log-file=stdout".to_owned(),
                "--simple-log".to_owned(),
                format!("--userdb={}", dir.path().join("turndb").display()),
                format!("--pidfile={}", dir.path().join("pid").display()),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = std::io::BufReader::new(stdout).lines();
        let mut seen = Vec::new();
        loop {
            match lines.next() {
                Some(Ok(line)) => {
                    let ready = line.contains("DB connection success");
                    seen.push(line);
                    if ready {
                        break;
                    }
                }
                _ => panic!("turnserver stopped before serving:\n{}", seen.join("\n")),
            }
        }
        // Keep reading its log, or it would block on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self {
            child,
            port,
            _dir: dir,
        }
    }

    /// Whether coturn's own client gets relay allocations with these credentials and exchanges
    /// packets through them (two clients relaying to each other, `-y`).
    fn allocates(&self, uclient: &std::path::Path, username: &str, password: &str) -> bool {
        let out = std::process::Command::new(uclient)
            .args(["-y", "-n", "2", "-m", "1", "-l", "64"])
            .args(["-u", username, "-w", password, "-p", &self.port.to_string()])
            .arg("127.0.0.1")
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stdout);
        out.status.success() && log.contains("Total lost packets 0")
    }
}

impl Drop for Coturn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// docs/src/turn.md's TURN set-up, end to end: a real coturn with `use-auth-secret` and the same
/// secret accepts the credentials `ice_servers` hands out, and refuses them altered (another
/// password, another user, an expiry moved) — what a browser would meet over the internet.
#[tokio::test]
async fn a_real_coturn_takes_the_credentials_the_server_mints_and_no_altered_ones() {
    let (turnserver, uclient) = coturn();
    let secret = "a-shared-secret-for-the-test";
    let coturn = Coturn::start(&turnserver, secret);
    let url = format!("turn:127.0.0.1:{}?transport=udp", coturn.port);
    let flags = ServerConfig::try_parse_from([
        "grand-melee-server",
        "--ice-server",
        &url,
        "--turn-secret",
        secret,
    ])
    .unwrap();
    let server = TestServer::start_with(ServerConfig {
        ice_servers: flags.ice_servers,
        turn_secret: flags.turn_secret,
        turn_ttl_secs: flags.turn_ttl_secs,
        ..config()
    })
    .await;
    let (_, mut m, _) = ring(&server, 3).await;
    m[0].camera(true, false).await;
    let answer = m[1].camera(true, false).await;
    let ServerMessage::IceServers { servers, .. } = answer else {
        panic!("{answer:?}");
    };
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0].urls, [url]);
    let username = servers[0].username.clone().unwrap();
    let password = servers[0].credential.clone().unwrap();
    // The server is not needed any more: coturn's client may block this thread.
    let uclient = uclient.as_path();
    assert!(
        coturn.allocates(uclient, &username, &password),
        "coturn refused {username} / {password}"
    );
    let (expiry, user) = username.split_once(':').unwrap();
    let later = format!("{}:{user}", expiry.parse::<u64>().unwrap() + 3600);
    for (username, password) in [
        (username.clone(), format!("x{password}")),
        (format!("{expiry}:{user}x"), password.clone()),
        (later, password.clone()),
    ] {
        let refused = !coturn.allocates(uclient, &username, &password);
        assert!(
            refused,
            "coturn took an altered credential: {username} / {password}"
        );
    }
}

/// Issue 43: a linked peer sending the largest signals within the signal bucket to a player who
/// reads slowly filled the player's outgoing queue, and the server dropped the player as a slow
/// reader. Now each connection may receive only so many signal bytes (past them the sender's
/// `signal` answers `rate_limited`), and a signal is left out rather than queued behind a
/// half-full queue: the player who does not read at all keeps his seat and his connection.
#[tokio::test]
async fn a_peer_flooding_signals_cannot_get_a_slow_reader_dropped() {
    let server = TestServer::start_with(ServerConfig {
        outgoing_queue: 64,
        outgoing_queue_bytes: 64 * 1024,
        send_buffer_bytes: 8 * 1024,
        // The sender's own address budget is another test's: this one is about the receiver.
        signal_bytes_per_second: 0.0,
        ..config()
    })
    .await;
    let mut host = Member::new(server.client().await);
    let table = host
        .client
        .create(CreateTable::new("slow link", 2).spell_range(1))
        .await
        .unwrap();
    assert_eq!(host.client.join(table, "sender").await, Ok(0));
    // The victim: a raw socket with a tiny receive buffer that sits down and never reads.
    let mut victim = grand_melee_e2e::SilentClient::connect(server.addr, Some(2048)).await;
    victim
        .send(&ClientMessage::Join {
            id: 2,
            table,
            name: "slow reader".into(),
            password: None,
            entropy: None,
            member_token: None,
        })
        .await;
    host.client
        .until_event(|e| matches!(e, Event::PlayerJoined { player: 1, .. }).then_some(()))
        .await;
    let started = host
        .call(|id| ClientMessage::Start {
            id,
            first_player: Some(0),
            seating: SeatingMode::Arranged,
            order: vec![0, 1],
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    let mut id = 3;
    while let Some(decider) = host.client.view.as_ref().and_then(|v| v.mulligan_decider) {
        if decider == 1 {
            victim.send(&ClientMessage::Keep { id }).await;
            id += 1;
            host.client
                .until_event(|e| matches!(e, Event::Kept { player: 1, .. }).then_some(()))
                .await;
        } else {
            let kept = host.call(|id| ClientMessage::Keep { id }).await;
            assert!(matches!(kept, Ok(ServerMessage::Ack { .. })), "{kept:?}");
        }
    }
    host.camera(true, false).await;
    victim
        .send(&ClientMessage::Camera {
            id,
            on: true,
            stream: false,
            stay: false,
        })
        .await;
    host.until_linked(&[Peer::Player(1)]).await;

    // 200 of the largest signals: 2.4 MB, 37 times the victim's whole queue.
    let payload = "s".repeat(MAX_SIGNAL_BYTES);
    let flood_began = std::time::Instant::now();
    let ids: Vec<u32> = (0..200)
        .map(|_| {
            let payload = payload.clone();
            host.client.send(|id| ClientMessage::Signal {
                id,
                to: Peer::Player(1),
                payload,
            })
        })
        .collect();
    let (mut acked, mut refused) = (0, 0);
    while acked + refused < ids.len() {
        match host.next().await {
            ServerMessage::Ack { reply_to, .. } if ids.contains(&reply_to) => acked += 1,
            ServerMessage::Error {
                reply_to: Some(r),
                code,
                ..
            } if ids.contains(&r) => {
                assert_eq!(code, ErrorCode::RateLimited);
                refused += 1;
            }
            _ => {}
        }
    }
    assert!(
        acked > 0 && refused > 0,
        "{acked} relayed, {refused} refused"
    );
    // The receiving connection's budget: its burst, and what the flood's time refilled.
    let refilled = flood_began.elapsed().as_secs_f64()
        * grand_melee_protocol::SIGNAL_BYTES_RECEIVED_PER_SECOND;
    assert!(
        (acked * MAX_SIGNAL_BYTES) as f64
            <= grand_melee_protocol::SIGNAL_BYTES_RECEIVED_BURST + refilled,
        "{acked} signals relayed to one connection"
    );
    let snapshot = host.client.fresh_snapshot().await;
    assert!(
        snapshot.player(1).unwrap().connected,
        "the slow reader was dropped: {:?}",
        snapshot.player(1)
    );
    let metrics = grand_melee_e2e::http_request_bytes(
        server.addr,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    let metrics = String::from_utf8_lossy(&metrics);
    let shed: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("gm_signals_shed_total "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(shed > 0, "no signal was left out: {metrics}");
    assert!(
        !metrics.contains("gm_slow_readers_dropped_total 1"),
        "{metrics}"
    );
    drop(victim);
}

/// Issue 43: a one-seat table's player (or anyone without a camera link) was handed TURN
/// credentials valid a day: the operator's relay was anyone's. Now credentials come only with
/// a link, and each address gets at most `--turn-credentials-per-minute`.
#[tokio::test]
async fn turn_credentials_come_only_with_a_link_and_within_the_address_budget() {
    let flags = ServerConfig::try_parse_from([
        "grand-melee-server",
        "--ice-server",
        "turn:turn.example.org:3478",
        "--turn-secret",
        "s3cret",
        "--turn-credentials-per-minute",
        "0.01",
    ])
    .unwrap();
    assert_eq!(
        flags.turn_ttl_secs, 14_400,
        "an evening by default, not a day"
    );
    let server = TestServer::start_with(ServerConfig {
        ice_servers: flags.ice_servers,
        turn_secret: flags.turn_secret,
        turn_credentials_per_minute: flags.turn_credentials_per_minute,
        ..config()
    })
    .await;
    let turn = |answer: &ServerMessage| match answer {
        ServerMessage::IceServers { servers, .. } => servers.iter().any(|s| s.credential.is_some()),
        other => panic!("{other:?}"),
    };
    // A table of one, in its lobby: nobody to link with.
    let mut lonely = Member::new(server.client().await);
    let table = lonely
        .client
        .create(CreateTable::new("alone", 2))
        .await
        .unwrap();
    lonely.client.join(table, "Solo").await.unwrap();
    let answer = lonely.camera(true, false).await;
    assert!(!turn(&answer), "{answer:?}");
    let ServerMessage::IceServers { servers, .. } = &answer else {
        unreachable!()
    };
    assert!(
        servers.is_empty(),
        "no TURN URL without credentials: {servers:?}"
    );

    // A ring of four at spell range 1, everyone from one address: the burst of 0.01 a minute
    // is one credential (a bucket holds at least one), so of the links that open only the
    // first connection gets credentials.
    let (_, mut m, _) = ring(&server, 4).await;
    assert!(!turn(&m[0].camera(true, false).await), "no link yet");
    let linked = m[1].camera(true, false).await;
    assert!(turn(&linked), "linked with player 0: {linked:?}");
    // Player 0's links opened too, but his address has no credential left: no unasked answer,
    // just the link.
    let next = m[0].next().await;
    assert!(
        matches!(&next, ServerMessage::CameraPeers { peers } if peers.len() == 1),
        "{next:?}"
    );
    assert!(
        !turn(&m[2].camera(true, false).await),
        "the address's budget is spent"
    );
    let metrics = grand_melee_e2e::http_request_bytes(
        server.addr,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(
        String::from_utf8_lossy(&metrics).contains("gm_turn_credentials_total 1\n"),
        "{}",
        String::from_utf8_lossy(&metrics)
    );
}
