//! Mountain Magic bots against a real server on a loopback port: several climbs at once, one
//! bot a table, each played to its ending with no error (every request the bots send is
//! accepted: a refusal fails the run).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use clap::Parser;
use grand_melee_loadtest::cli::{Cli, run};
use grand_melee_loadtest::mountain_magic_bot::{MmConfig, day_standings, play};
use grand_melee_server::{Server, ServerConfig};
use tokio::sync::oneshot;

/// How long the climbs may take before the test fails. A bound on a failure, not a pace.
const PATIENCE: Duration = Duration::from_secs(120);

const TABLES: usize = 32;

async fn server() -> (
    std::net::SocketAddr,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
    tempfile::TempDir,
) {
    let data = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.path().to_owned(),
        // The bots do not think: far above a person's request rate.
        rate_limit: 1e6,
        rate_burst: 1e6,
        // Every climb's table is created from this one address.
        max_tables_per_ip: 4 * TABLES,
        table_creations_per_minute: 4 * TABLES as u32,
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    (addr, stop, task, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simultaneous_climbs_reach_their_endings_with_no_error() {
    let (addr, stop, task, _data) = server().await;
    let config = MmConfig {
        url: format!("ws://{addr}"),
        tables: TABLES,
        seed: 31,
        max_moves: 5_000,
        day: false,
    };
    let climbs = tokio::time::timeout(PATIENCE, play(&config))
        .await
        .expect("the climbs ended in time")
        .expect("no bot failed and no request was refused");
    stop.send(()).unwrap();
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();

    assert_eq!(climbs.len(), TABLES);
    let mut ids: Vec<_> = climbs.iter().map(|c| c.table).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), TABLES, "one table each");
    for climb in &climbs {
        // One climber, placed once; the climb ended by the rules, not by a concession.
        assert_eq!(climb.standings.len(), 1, "{climb:?}");
        assert!(climb.outcome.is_some(), "an ending: {climb:?}");
        // Flips, placements and the path at least: many moves, every event folded.
        assert!(climb.moves > 20 && climb.events > climb.moves, "{climb:?}");
    }
    // The policy reaches the battle in some of the climbs (the rest fail the climb).
    assert!(
        climbs.iter().any(|c| c.ending().is_some()),
        "some climb reached the battle's end: {climbs:?}"
    );
}

/// Runs `grand-melee-loadtest bots --game mountain_magic --tables 3` with `extra` flags against
/// a server of its own; returns the lines it printed (the run must succeed).
async fn bots_from_the_command_line(extra: &[&str]) -> Vec<String> {
    let (addr, stop, task, _data) = server().await;
    let url = format!("ws://{addr}");
    let mut args = vec!["grand-melee-loadtest", "bots", "--game", "mountain_magic"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--url", &url, "--tables", "3"]);
    let cli = Cli::try_parse_from(args).unwrap();
    // `run` makes its own runtime: on a thread of its own.
    let (done, result) = oneshot::channel();
    std::thread::spawn(move || {
        let mut lines = Vec::new();
        let outcome = run(cli, &mut |line| lines.push(line.to_owned()));
        let _ = done.send((outcome.map_err(|e| e.to_string()), lines));
    });
    let (outcome, lines) = tokio::time::timeout(PATIENCE, result)
        .await
        .unwrap()
        .unwrap();
    stop.send(()).unwrap();
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    outcome.unwrap();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_climb_from_the_command_line() {
    let lines = bots_from_the_command_line(&[]).await;
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("mountain_magic: 3 climbs played to their endings")),
        "{lines:?}"
    );
}

/// Today's mountain: several bots climb it at once, each at its own table, all dealt the same
/// mountain (the day's commitment, the same bottom row); each reaches an ending, and the day's
/// standings then list every climber once, ranked, with his table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simultaneous_climbs_of_today_s_mountain_all_end_in_the_standings() {
    const CLIMBERS: usize = 12;
    let (addr, stop, task, _data) = server().await;
    let config = MmConfig {
        url: format!("ws://{addr}"),
        tables: CLIMBERS,
        seed: 26,
        max_moves: 5_000,
        day: true,
    };
    let climbs = tokio::time::timeout(PATIENCE, play(&config))
        .await
        .expect("the climbs ended in time")
        .expect("no bot failed and no request was refused");
    let (day, standings, all) = tokio::time::timeout(PATIENCE, day_standings(&config.url))
        .await
        .unwrap()
        .unwrap();
    stop.send(()).unwrap();
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();

    assert_eq!(climbs.len(), CLIMBERS);
    let first = &climbs[0];
    assert_eq!(first.bottom_row.len(), 7, "{first:?}");
    assert!(!first.commitment.is_empty());
    for climb in &climbs {
        // One deal for all: the day's commitment and the same bottom row at every table.
        assert_eq!(climb.commitment, first.commitment, "{climb:?}");
        assert_eq!(climb.bottom_row, first.bottom_row, "{climb:?}");
        assert!(climb.outcome.is_some(), "an ending: {climb:?}");
    }
    assert_eq!(day.len(), 10, "{day}");
    assert_eq!(all as usize, CLIMBERS);
    assert_eq!(standings.len(), CLIMBERS, "{standings:?}");
    for climb in &climbs {
        let line = standings
            .iter()
            .find(|s| s.climber == climb.climber)
            .unwrap_or_else(|| panic!("{} is in the standings: {standings:?}", climb.climber));
        assert_eq!(line.table, climb.table);
    }
    // Ranked: places never go down, the first is 1, and equal climbs share a place.
    assert_eq!(standings[0].place, 1);
    for pair in standings.windows(2) {
        assert!(pair[0].place <= pair[1].place, "{standings:?}");
        assert!(
            (pair[0].end, std::cmp::Reverse(pair[0].cards_left))
                <= (pair[1].end, std::cmp::Reverse(pair[1].cards_left))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_climb_today_s_mountain_from_the_command_line() {
    let lines = bots_from_the_command_line(&["--day"]).await;
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("mountain_magic: today's mountain (")
                && l.contains(
                    "one deal for all: 3 climber(s) in the standings, 3 climb(s) finished today"
                )),
        "{lines:?}"
    );
}
