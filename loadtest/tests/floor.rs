//! The floor on a loopback port: the relay bots run against it unchanged, every frame reaches
//! every member of its group exactly once whatever its length form, pings are answered, what
//! the floor does not take closes the connection, and a member that stops reading is dropped
//! once its backlog passes the limit without holding up the others. Over TLS (`wss://`, rustls
//! on the one delivery thread), the same: relay bots get every frame, a wss client its group's
//! frames, and a plain client, or garbage in place of a record, closes that connection only.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use grand_melee_loadtest::fleet::{Fleet, FleetConfig, Target, starting_turns};
use grand_melee_loadtest::floor::{Floor, FloorConfig};
use grand_melee_loadtest::tls::{SelfSigned, client_config_pem, server_config_pem};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio_rustls::rustls;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// A bound on a failure, not a pace.
const PATIENCE: Duration = Duration::from_secs(60);

type Ws = WebSocketStream<TcpStream>;

async fn connect(addr: SocketAddr, group: &str) -> Ws {
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let url = format!("ws://{addr}/relay/{group}");
    tokio_tungstenite::client_async(url, stream)
        .await
        .unwrap()
        .0
}

/// The next binary frame (pongs skipped), over ws or wss.
async fn next_binary<S>(ws: &mut WebSocketStream<S>) -> Vec<u8>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        match ws.next().await.unwrap().unwrap() {
            Message::Binary(bytes) => return bytes.to_vec(),
            Message::Pong(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Relay bots (2 tables of 15, each actor sending `frames` frames of `frame_bytes`) against a
/// floor, over wss when `tls` is given: every bot seats, every frame reaches every member of its
/// group, and the floor's own counters agree (read once its threads have stopped).
async fn relay_bots_against_the_floor(tls: Option<&Pair>, frames: u32, frame_bytes: usize) {
    const SEATS: u8 = 15;
    let dir = tempfile::tempdir().unwrap();
    let ca_cert = tls.map(|t| t.certificate.write_to(dir.path()).unwrap().0);
    let floor = Floor::bind(FloorConfig {
        tls: tls.map(|t| Arc::clone(&t.server)),
        ..FloorConfig::default()
    })
    .unwrap();
    let addr = floor.local_addr().unwrap();
    let stats = floor.stats();
    let handle = floor.start().unwrap();
    let scheme = if tls.is_some() { "wss" } else { "ws" };
    let mut fleet = Fleet::launch(FleetConfig {
        base_url: format!("{scheme}://{addr}"),
        target: Target::Floor,
        tables: 2,
        seats: SEATS,
        think: Duration::from_millis(1),
        games: Some(frames),
        relay_frame_bytes: frame_bytes,
        ca_cert,
        ..FleetConfig::default()
    });
    assert!(
        fleet.finished(PATIENCE).await,
        "every relay bot got its frames"
    );
    let window = fleet.join().await;
    let c = &window.counts;
    let actors = starting_turns(SEATS, 2) as u64;
    let sent = 2 * actors * u64::from(frames);
    assert_eq!((c.errors, c.disconnects, c.gaps), (0, 0, 0));
    assert_eq!(c.connect_failures, 0);
    assert_eq!(
        c.seated,
        2 * u64::from(SEATS),
        "every bot seated over {scheme}"
    );
    assert_eq!(c.actions, sent);
    assert_eq!(c.acks, sent, "every actor got its own frames back");
    assert_eq!(
        c.deliveries,
        sent * u64::from(SEATS),
        "and so did everyone else"
    );
    assert_eq!(c.delivery_bytes, c.deliveries * frame_bytes as u64);
    assert_eq!(c.undelivered_actions, 0);
    assert_eq!(window.last_delivery_us.summary().count, sent);
    handle.shutdown();
    assert_eq!(stats.frames_in.load(Relaxed), sent);
    assert_eq!(stats.frames_out.load(Relaxed), c.deliveries);
    assert_eq!(stats.dropped.load(Relaxed), 0);
    assert_eq!(stats.rejected.load(Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_bots_get_every_frame_of_their_group_from_the_floor() {
    relay_bots_against_the_floor(None, 20, 127).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_member_gets_every_frame_exactly_once() {
    let floor = Floor::bind(FloorConfig {
        // Room for the 64-bit length form.
        max_frame_bytes: 128 * 1024,
        ..FloorConfig::default()
    })
    .unwrap();
    let addr = floor.local_addr().unwrap();
    let stats = floor.stats();
    let handle = floor.start().unwrap();
    const GROUPS: usize = 3;
    const MEMBERS: usize = 4;
    const FRAMES: usize = 28;
    // Every length form: 7-bit, 16-bit (126..=65535) and 64-bit.
    const SIZES: [usize; 7] = [8, 125, 126, 1000, 65_535, 65_536, 70_000];

    // Everyone connects (the upgrade means membership) before anyone sends.
    let mut sockets = Vec::new();
    for group in 0..GROUPS {
        for member in 0..MEMBERS {
            sockets.push((group, member, connect(addr, &format!("g{group}")).await));
        }
    }
    let mut tasks = Vec::new();
    for (group, member, ws) in sockets {
        tasks.push(tokio::spawn(async move {
            let (mut sink, mut stream) = ws.split();
            let sender = tokio::spawn(async move {
                for n in 0..FRAMES {
                    let size = SIZES[(n + member) % SIZES.len()];
                    let mut frame = vec![(n % 251) as u8; size];
                    frame[..8].copy_from_slice(&[
                        group as u8,
                        member as u8,
                        n as u8,
                        0,
                        0,
                        0,
                        0,
                        0,
                    ]);
                    sink.send(Message::Binary(frame.into())).await.unwrap();
                }
                sink
            });
            let mut seen: HashMap<(u8, u8, u8), usize> = HashMap::new();
            while seen.values().sum::<usize>() < MEMBERS * FRAMES {
                let Message::Binary(bytes) = stream.next().await.unwrap().unwrap() else {
                    panic!("only binary frames are relayed");
                };
                assert_eq!(usize::from(bytes[0]), group, "a frame of another group");
                let (from, n) = (usize::from(bytes[1]), usize::from(bytes[2]));
                assert_eq!(bytes.len(), SIZES[(n + from) % SIZES.len()]);
                assert!(
                    bytes[8..].iter().all(|&b| usize::from(b) == n % 251),
                    "payload intact"
                );
                *seen.entry((bytes[0], bytes[1], bytes[2])).or_default() += 1;
            }
            let mut sink = sender.await.unwrap();
            // Nothing more: a ping comes back as the next frame, not another copy.
            sink.send(Message::Ping(b"hi"[..].into())).await.unwrap();
            match stream.next().await.unwrap().unwrap() {
                Message::Pong(payload) => assert_eq!(&payload[..], b"hi"),
                other => panic!("expected the pong, got {other:?}"),
            }
            seen
        }));
    }
    for task in tasks {
        let seen = tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
        assert_eq!(seen.len(), MEMBERS * FRAMES, "every frame of the group");
        assert!(seen.values().all(|&n| n == 1), "each exactly once");
    }
    let sent = (GROUPS * MEMBERS * FRAMES) as u64;
    assert_eq!(stats.frames_in.load(Relaxed), sent);
    assert_eq!(stats.frames_out.load(Relaxed), sent * MEMBERS as u64);
    assert_eq!(stats.dropped.load(Relaxed), 0);
    assert_eq!(stats.rejected.load(Relaxed), 0);

    // A text frame is not taken: the floor closes with 1003.
    let mut ws = connect(addr, "text").await;
    ws.send(Message::Text("hello".into())).await.unwrap();
    match ws.next().await.unwrap().unwrap() {
        Message::Close(Some(CloseFrame { code, .. })) => assert_eq!(code, CloseCode::Unsupported),
        other => panic!("expected a close, got {other:?}"),
    }
    assert_eq!(stats.rejected.load(Relaxed), 1);

    // A close is answered, and the others of the group go on.
    let mut leaving = connect(addr, "close").await;
    let mut staying = connect(addr, "close").await;
    leaving.close(None).await.unwrap();
    assert!(matches!(
        leaving.next().await.unwrap().unwrap(),
        Message::Close(_)
    ));
    staying
        .send(Message::Binary(vec![7u8; 10].into()))
        .await
        .unwrap();
    assert_eq!(next_binary(&mut staying).await, vec![7u8; 10]);
    handle.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_stops_reading_is_dropped_and_the_others_go_on() {
    const BACKLOG: usize = 256 * 1024;
    let floor = Floor::bind(FloorConfig {
        max_backlog_bytes: BACKLOG,
        ..FloorConfig::default()
    })
    .unwrap();
    let addr = floor.local_addr().unwrap();
    let stats = floor.stats();
    let handle = floor.start().unwrap();

    // A member with a small receive buffer that never reads.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let (_asleep, _) = tokio_tungstenite::client_async(format!("ws://{addr}/relay/slow"), stream)
        .await
        .unwrap();
    let ws = connect(addr, "slow").await;
    // 12 MiB: well past what the kernel buffers for the sleeper (its 4 KiB receive buffer and
    // the floor's send buffer, at most 4 MiB here) plus the backlog limit.
    const FRAMES: usize = 768;
    const SIZE: usize = 16 * 1024;
    let (mut sink, mut stream) = ws.split();
    let sender = tokio::spawn(async move {
        for n in 0..FRAMES {
            let mut frame = vec![0u8; SIZE];
            frame[..2].copy_from_slice(&(n as u16).to_be_bytes());
            sink.send(Message::Binary(frame.into())).await.unwrap();
        }
        sink
    });
    let reader = async {
        for n in 0..FRAMES {
            let Message::Binary(bytes) = stream.next().await.unwrap().unwrap() else {
                panic!("only binary frames");
            };
            assert_eq!(
                u16::from_be_bytes([bytes[0], bytes[1]]),
                n as u16,
                "in order"
            );
        }
    };
    tokio::time::timeout(PATIENCE, reader).await.unwrap();
    let _sink = sender.await.unwrap();
    // The floor wrote each frame to the sleeper before (or instead of) the next ones to the
    // sender: by the last frame back, the sleeper's backlog has overflowed.
    assert_eq!(stats.dropped.load(Relaxed), 1, "the sleeper was dropped");
    assert_eq!(stats.frames_in.load(Relaxed), FRAMES as u64);
    handle.shutdown();
}

/// A fresh certificate: the floor's side, and a client's that trusts it alone.
struct Pair {
    server: Arc<rustls::ServerConfig>,
    client: Arc<rustls::ClientConfig>,
    certificate: SelfSigned,
}

fn pair() -> Pair {
    let certificate = SelfSigned::generate().unwrap();
    let server = server_config_pem(
        certificate.cert_pem.as_bytes(),
        certificate.key_pem.as_bytes(),
    )
    .unwrap();
    let client = client_config_pem(certificate.cert_pem.as_bytes()).unwrap();
    Pair {
        server,
        client,
        certificate,
    }
}

type Wss = WebSocketStream<tokio_rustls::client::TlsStream<TcpStream>>;

/// A `wss://` client of `group`, checking the certificate's name `localhost`.
async fn connect_wss(addr: SocketAddr, group: &str, client: &Arc<rustls::ClientConfig>) -> Wss {
    let tcp = TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::clone(client))
        .connect(name, tcp)
        .await
        .unwrap();
    let url = format!("wss://localhost:{}/relay/{group}", addr.port());
    tokio_tungstenite::client_async(url, tls).await.unwrap().0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_relay_bots_get_every_frame_of_their_group() {
    relay_bots_against_the_floor(Some(&pair()), 10, 300).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_a_wss_client_gets_its_groups_frames_and_plain_or_garbage_is_dropped() {
    let tls = pair();
    let floor = Floor::bind(FloorConfig {
        tls: Some(Arc::clone(&tls.server)),
        ..FloorConfig::default()
    })
    .unwrap();
    let addr = floor.local_addr().unwrap();
    let stats = floor.stats();
    let handle = floor.start().unwrap();

    // A plain ws client of a TLS floor: its request is not a TLS record; it is dropped.
    let plain = TcpStream::connect(addr).await.unwrap();
    let refused = tokio::time::timeout(
        PATIENCE,
        tokio_tungstenite::client_async(format!("ws://{addr}/relay/a"), plain),
    )
    .await
    .unwrap();
    assert!(refused.is_err(), "a plain client is not upgraded");

    let mut a1 = connect_wss(addr, "a", &tls.client).await;
    let mut a2 = connect_wss(addr, "a", &tls.client).await;
    let mut b1 = connect_wss(addr, "b", &tls.client).await;
    assert_eq!(stats.open.load(Relaxed), 3, "the plain client never joined");

    // Every length form the floor takes (16 KiB at most), tagged and in order.
    const SIZES: [usize; 6] = [8, 125, 126, 1000, 16_000, 16 * 1024];
    for (n, &size) in SIZES.iter().enumerate() {
        let mut frame = vec![n as u8 ^ 0x5A; size];
        frame[0] = n as u8;
        a1.send(Message::Binary(frame.into())).await.unwrap();
    }
    for ws in [&mut a1, &mut a2] {
        for (n, &size) in SIZES.iter().enumerate() {
            let frame = next_binary(ws).await;
            assert_eq!(
                (frame.len(), frame[0]),
                (size, n as u8),
                "frame {n} in order"
            );
            assert!(frame[1..].iter().all(|&b| b == n as u8 ^ 0x5A), "intact");
        }
    }
    // The other group saw none of them: its next frame is its own.
    b1.send(Message::Binary(b"group b"[..].into()))
        .await
        .unwrap();
    assert_eq!(next_binary(&mut b1).await, b"group b");

    // Garbage in place of a TLS record closes that connection only.
    let mut a3 = connect_wss(addr, "a", &tls.client).await;
    a3.get_mut()
        .get_mut()
        .0
        .write_all(b"GET / HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let after = tokio::time::timeout(PATIENCE, a3.next()).await.unwrap();
    assert!(
        !matches!(after, Some(Ok(Message::Binary(_)))),
        "the garbled connection is closed: {after:?}"
    );
    a2.send(Message::Binary(b"still here"[..].into()))
        .await
        .unwrap();
    for ws in [&mut a1, &mut a2] {
        assert_eq!(next_binary(ws).await, b"still here");
    }
    // A ping is answered over TLS too.
    b1.send(Message::Ping(b"hi"[..].into())).await.unwrap();
    match b1.next().await.unwrap().unwrap() {
        Message::Pong(payload) => assert_eq!(&payload[..], b"hi"),
        other => panic!("expected the pong, got {other:?}"),
    }

    handle.shutdown();
    // Every thread has stopped: the counters are final.
    let sent = SIZES.len() as u64 + 2;
    assert_eq!(stats.frames_in.load(Relaxed), sent);
    assert_eq!(
        stats.frames_out.load(Relaxed),
        2 * SIZES.len() as u64 + 1 + 2
    );
    assert_eq!(stats.dropped.load(Relaxed), 0);
    assert_eq!(
        stats.rejected.load(Relaxed),
        2,
        "the plain client and the garbled one"
    );
}
