//! Colyseus as a target: installed with npm on first use (Node.js >= 20 and npm are needed:
//! without them these tests fail with the command that installs them), its fan-out room
//! reaches the whole room and only the room, the relay bots in its protocol get every frame,
//! and a short `bench` of the real binary measures it from the `node` process itself.
#![allow(clippy::unwrap_used)]

use std::process::Stdio;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grand_melee_loadtest::colyseus::{self, ServerMessage};
use grand_melee_loadtest::fleet::{Fleet, FleetConfig, Target, starting_turns};
use grand_melee_loadtest::link::Socket;
use grand_melee_loadtest::relay_bot::{KEY_BYTES, colyseus_frame, relay_key};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio_tungstenite::tungstenite::Message;

/// A bound on a failure, not a pace (a first `npm ci` included).
const PATIENCE: Duration = Duration::from_secs(240);

/// Installs Colyseus (if needed) and starts `node server.js`; returns it and its `ws://` base.
async fn start_colyseus() -> (Child, String) {
    let dir = tokio::task::spawn_blocking(|| colyseus::ensure_installed(|| ()))
        .await
        .unwrap()
        .unwrap_or_else(|error| panic!("{error}"));
    let mut command = colyseus::server_command(&dir, 300);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(PATIENCE, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("node exited");
            if line.starts_with("colyseus listening on 127.0.0.1:") {
                return line;
            }
        }
    })
    .await
    .unwrap();
    let addr = line.rsplit(' ').next().unwrap().to_owned();
    (child, format!("ws://{addr}"))
}

/// The key of the next broadcast on `ws`, and the broadcast's length.
async fn next_key(ws: &mut Socket) -> (u64, usize) {
    loop {
        let frame = tokio::time::timeout(PATIENCE, ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Binary(bytes) = frame {
            match colyseus::decode(&bytes).unwrap() {
                ServerMessage::Data { kind, payload } => {
                    assert_eq!(kind, colyseus::MESSAGE_TYPE);
                    let key = u64::from_be_bytes(payload[..KEY_BYTES].try_into().unwrap());
                    return (key, bytes.len());
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_reaches_all_40_of_its_room_the_sender_included_and_no_other_room() {
    let (mut node, base) = start_colyseus().await;
    let joins: Vec<_> = (0..40)
        .map(|_| {
            let base = base.clone();
            tokio::spawn(async move { colyseus::join(&base, 7, 40).await.unwrap() })
        })
        .collect();
    let mut room = Vec::new();
    for join in joins {
        room.push(join.await.unwrap());
    }
    let mut other = colyseus::join(&base, 8, 40).await.unwrap();

    let key = relay_key(13, 1);
    room[13]
        .send(Message::Binary(colyseus_frame(key, 150).into()))
        .await
        .unwrap();
    for (seat, ws) in room.iter_mut().enumerate() {
        assert_eq!(next_key(ws).await, (key, 150), "seat {seat}");
    }
    // The other table's room did not get it: the first broadcast it sees is its own.
    let own = relay_key(0, 1);
    other
        .send(Message::Binary(colyseus_frame(own, 150).into()))
        .await
        .unwrap();
    assert_eq!(next_key(&mut other).await, (own, 150));

    // The server exits by itself when its standard input closes.
    drop(node.stdin.take());
    let status = tokio::time::timeout(PATIENCE, node.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_bots_in_colyseus_protocol_get_every_frame_of_their_room() {
    let (_node, base) = start_colyseus().await;
    const FRAMES: u32 = 10;
    const SEATS: u8 = 15;
    let mut fleet = Fleet::launch(FleetConfig {
        base_url: base,
        target: Target::Colyseus,
        tables: 2,
        seats: SEATS,
        think: Duration::from_millis(1),
        games: Some(FRAMES),
        relay_frame_bytes: 111,
        ..FleetConfig::default()
    });
    assert!(fleet.finished(PATIENCE).await, "every bot got its frames");
    let window = fleet.join().await;
    let c = &window.counts;
    let frames = 2 * starting_turns(SEATS, 2) as u64 * u64::from(FRAMES);
    assert_eq!((c.errors, c.disconnects, c.gaps), (0, 0, 0));
    assert_eq!(c.connect_failures, 0);
    assert_eq!(c.actions, frames);
    assert_eq!(c.acks, frames, "every actor got its own frames back");
    assert_eq!(
        c.deliveries,
        frames * u64::from(SEATS),
        "and so did the rest"
    );
    assert_eq!(c.undelivered_actions, 0);
    assert_eq!(
        c.delivery_bytes,
        c.deliveries * 111,
        "the room's broadcasts are the frame size"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_bench_of_colyseus_measures_the_node_process() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_grand-melee-loadtest"))
        .args([
            "bench",
            "--targets",
            "colyseus",
            "--tables",
            "4",
            "--seats",
            "15",
            "--processes",
            "1",
            "--rounds",
            "1",
            "--probes",
            "2",
            "--cpu-think-ms",
            "200",
            "--think-max-ms",
            "300",
            "--think-min-ms",
            "100",
            "--step-secs",
            "1",
            "--warmup-secs",
            "0",
            "--fsync-samples",
            "5",
            "--relay-frame-bytes",
            "130",
            "--json",
        ])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(PATIENCE, output)
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let round = &result["rounds"][0];
    assert_eq!(round["frame_bytes"], 130);
    let target = &round["targets"][0];
    assert_eq!(target["target"], "colyseus");
    assert_eq!(target["seats"], 60);
    assert_eq!(
        target["mean_delivery_bytes"], 130.0,
        "broadcasts of the frame size"
    );
    let steps = target["steps"].as_array().unwrap();
    assert!(steps.len() >= 2, "the reference and at least one probe");
    for step in steps {
        assert!(step["deliveries_per_s"].as_f64().unwrap() > 0.0);
        assert!(step["target_cpu_us_per_delivery"].as_f64().unwrap() > 0.0);
        assert!(step["target_rss_kib"].as_u64().unwrap() > 0);
    }
    let totals = &target["totals"];
    assert!(totals["deliveries"].as_u64().unwrap() > 0);
    for counter in [
        "errors",
        "disconnects",
        "gaps",
        "undelivered_actions",
        "connect_failures",
    ] {
        assert_eq!(totals[counter], 0, "{counter}");
    }
    // The process measured is node itself (tens of MiB before any bot), not a wrapper.
    assert!(
        target["idle_rss_kib"].as_u64().unwrap() > 20 * 1024,
        "{target}"
    );
    let summary = &result["summary"]["targets"][0];
    assert_eq!(summary["target"], "colyseus");
    assert!(
        summary["cpu_us_per_delivery"]["per_round"][0]["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}
