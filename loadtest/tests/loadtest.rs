//! A short load test against a real server on a loopback port: a few full tables of bots play
//! one whole game each, and everything the bots sent and received is held against the
//! server's own counters.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use std::sync::atomic::Ordering::Relaxed;

use grand_melee_loadtest::evidence;
use grand_melee_loadtest::fleet::{Fleet, FleetConfig, Target, starting_turns};
use grand_melee_loadtest::relay::{Relay, RelayConfig};
use grand_melee_server::{Server, ServerConfig};
use tokio::sync::oneshot;

/// How long the bots may take before the test fails. A bound on a failure, not a pace: the
/// games end in about a second.
const PATIENCE: Duration = Duration::from_secs(60);

const TABLES: usize = 3;
const SEATS: u8 = 15;

/// One counter from the server's Prometheus text.
fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the metrics"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_play_whole_games_and_every_message_is_accounted_for() {
    let data = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.path().to_owned(),
        // The bots think for a millisecond: far above a person's request rate.
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e8,
        table_chat_per_minute: 0.0,
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr().unwrap();
    let metrics = server.metrics();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    // What the bench reads of the server's own counters, before and after.
    let base_url = format!("ws://{addr}");
    let counters_before = evidence::read_server(&base_url, None).await.unwrap();

    let fleet = Fleet::launch(FleetConfig {
        base_url: base_url.clone(),
        target: Target::Server,
        tables: TABLES,
        seats: SEATS,
        think: Duration::from_millis(1),
        seed: 5,
        games: Some(1),
        chat_chance: 0.1,
        mirror_check: true,
        ..FleetConfig::default()
    });
    assert!(
        fleet.played(PATIENCE).await,
        "every table finished its game"
    );

    // The server goes away first: the bots, their game done, take that as the end.
    stop.send(()).unwrap();
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    fleet.stop();
    let window = fleet.join().await;
    let c = &window.counts;

    assert_eq!(c.seated, (TABLES * usize::from(SEATS)) as u64);
    assert_eq!(
        c.games_finished, TABLES as u64,
        "every game reached game_over"
    );
    assert_eq!(
        c.games_with_winner, TABLES as u64,
        "every game has one winner"
    );
    assert_eq!(
        (c.errors, c.disconnects, c.connect_failures),
        (0, 0, 0),
        "{:?}",
        window.error_codes
    );
    assert_eq!(c.gaps, 0, "no sequence gaps");
    assert!(
        c.mirror_checks > 0,
        "the bots compared their mirrors with snapshots"
    );
    assert_eq!(
        c.mirror_mismatches, 0,
        "every bot's mirror equals the server's snapshot at the same event"
    );
    assert!(c.chats > 0, "the bots chatted");
    assert!(
        c.actions > 0 && c.acks == c.actions,
        "every action acknowledged"
    );
    // Every acknowledged action's broadcast reached every seat of its table.
    assert_eq!(c.undelivered_actions, 0);
    assert_eq!(window.last_delivery_us.summary().count, c.acks);
    assert_eq!(window.ack_us.summary().count, c.acks);

    // What the bots received is exactly what the server queued, and the other way round.
    let text = metrics.render();
    assert_eq!(metric(&text, "gm_messages_out_total"), c.frames_in);
    assert_eq!(metric(&text, "gm_messages_in_total"), c.frames_out);
    assert_eq!(metric(&text, "gm_bytes_out_total"), c.bytes_in);
    assert_eq!(metric(&text, "gm_bytes_in_total"), c.bytes_out);
    assert_eq!(metric(&text, "gm_rejected_total"), 0);
    assert!(c.events_in >= metric(&text, "gm_events_total"));

    // The server's own view, as `bench` reads it (before the bots, over HTTP; after everything,
    // the same text): every acknowledged action was a journal operation (its flush) and a
    // broadcast, in transactions of one or more.
    let counters_after = evidence::parse_metrics(&text);
    let own = evidence::server_between(&counters_before, &counters_after, 1.0);
    assert!(own.broadcasts >= c.acks, "{own:?} {c:?}");
    assert!(own.broadcast_p99_ms_at_most.is_some());
    let operations = counters_after.journal_operations - counters_before.journal_operations;
    assert!(
        operations >= c.acks,
        "{operations} operations, {} acks",
        c.acks
    );
    assert!(own.commits_per_s >= 1.0 && own.operations_per_commit.unwrap() >= 1.0);
    assert_eq!(
        counters_after.journal_commit.count(),
        metric(&text, "gm_journal_commits_total")
    );
    assert_eq!(
        counters_before.broadcast.count(),
        0,
        "read before any table"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_bots_get_every_frame_of_their_group() {
    let relay = Relay::bind(RelayConfig::default()).await.unwrap();
    let addr = relay.local_addr().unwrap();
    let stats = relay.stats();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(relay.run(async {
        let _ = stopped.await;
    }));
    const FRAMES: u32 = 20;
    let mut fleet = Fleet::launch(FleetConfig {
        base_url: format!("ws://{addr}"),
        target: Target::Relay,
        tables: 2,
        seats: SEATS,
        think: Duration::from_millis(1),
        games: Some(FRAMES),
        relay_frame_bytes: 100,
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
    assert_eq!(c.actions, frames);
    assert_eq!(c.acks, frames, "every actor got its own frames back");
    assert_eq!(
        c.deliveries,
        frames * u64::from(SEATS),
        "and so did everyone else"
    );
    assert_eq!(c.delivery_bytes, c.deliveries * 100);
    assert_eq!(c.undelivered_actions, 0);
    assert_eq!(window.last_delivery_us.summary().count, frames);
    assert_eq!(stats.dropped.load(Relaxed), 0);
    assert_eq!(stats.frames_in.load(Relaxed), frames);
    assert_eq!(stats.frames_out.load(Relaxed), c.deliveries);
    stop.send(()).unwrap();
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
}
