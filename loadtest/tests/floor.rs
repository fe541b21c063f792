//! The floor on a loopback port: the relay bots run against it unchanged, every frame reaches
//! every member of its group exactly once whatever its length form, pings are answered, what
//! the floor does not take closes the connection, and a member that stops reading is dropped
//! once its backlog passes the limit without holding up the others.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grand_melee_loadtest::fleet::{Fleet, FleetConfig, Target, starting_turns};
use grand_melee_loadtest::floor::{Floor, FloorConfig};
use tokio::net::{TcpSocket, TcpStream};
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

/// The next binary frame (pongs skipped).
async fn next_binary(ws: &mut Ws) -> Vec<u8> {
    loop {
        match ws.next().await.unwrap().unwrap() {
            Message::Binary(bytes) => return bytes.to_vec(),
            Message::Pong(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_bots_get_every_frame_of_their_group_from_the_floor() {
    let floor = Floor::bind(FloorConfig::default()).unwrap();
    let addr = floor.local_addr().unwrap();
    let stats = floor.stats();
    let handle = floor.start().unwrap();
    const FRAMES: u32 = 20;
    const SEATS: u8 = 15;
    let mut fleet = Fleet::launch(FleetConfig {
        base_url: format!("ws://{addr}"),
        target: Target::Floor,
        tables: 2,
        seats: SEATS,
        think: Duration::from_millis(1),
        games: Some(FRAMES),
        relay_frame_bytes: 127,
        ..FleetConfig::default()
    });
    assert!(
        fleet.finished(PATIENCE).await,
        "every relay bot got its frames"
    );
    let window = fleet.join().await;
    let c = &window.counts;
    let actors = starting_turns(SEATS, 2) as u64;
    let frames = 2 * actors * u64::from(FRAMES);
    assert_eq!((c.errors, c.disconnects, c.gaps), (0, 0, 0));
    assert_eq!(c.connect_failures, 0);
    assert_eq!(c.actions, frames);
    assert_eq!(c.acks, frames, "every actor got its own frames back");
    assert_eq!(
        c.deliveries,
        frames * u64::from(SEATS),
        "and so did everyone else"
    );
    assert_eq!(c.delivery_bytes, c.deliveries * 127);
    assert_eq!(c.undelivered_actions, 0);
    assert_eq!(window.last_delivery_us.summary().count, frames);
    assert_eq!(stats.frames_in.load(Relaxed), frames);
    assert_eq!(stats.frames_out.load(Relaxed), c.deliveries);
    assert_eq!(stats.dropped.load(Relaxed), 0);
    assert_eq!(stats.rejected.load(Relaxed), 0);
    handle.shutdown();
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
