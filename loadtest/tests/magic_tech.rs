//! Magic Tech bots against a real server on a loopback port: a few tables of two bots play
//! random legal games (the rules core's `legal_moves`) to the end, with no error.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use clap::Parser;
use grand_melee_loadtest::cli::{Cli, run};
use grand_melee_loadtest::magic_tech_bot::{MtConfig, play};
use grand_melee_server::{Server, ServerConfig};
use tokio::sync::oneshot;

/// How long the games may take before the test fails. A bound on a failure, not a pace.
const PATIENCE: Duration = Duration::from_secs(120);

const TABLES: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn magic_tech_bots_play_random_legal_games_to_the_end() {
    let data = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.path().to_owned(),
        // The bots do not think: far above a person's request rate.
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));

    let config = MtConfig {
        url: format!("ws://{addr}"),
        tables: TABLES,
        seed: 30,
        deck: 12,
        max_moves: 5_000,
    };
    let tables = tokio::time::timeout(PATIENCE, play(&config))
        .await
        .expect("the games ended in time")
        .expect("no bot failed");
    stop.send(()).unwrap();
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();

    assert_eq!(tables.len(), TABLES);
    let mut ids: Vec<_> = tables.iter().map(|t| t.table).collect();
    ids.dedup();
    assert_eq!(ids.len(), TABLES, "one table each");
    for table in &tables {
        // Two players, one winner, each placed once.
        let mut places: Vec<u8> = table.standings.iter().map(|s| s.place).collect();
        places.sort_unstable();
        assert_eq!(places, [1, 2], "{table:?}");
        // Random moves through the server: many, and the events folded by both bots' mirrors.
        assert!(
            table.moves > 20 && table.events > table.moves / 2,
            "{table:?}"
        );
        // Twelve-card decks run out long before the bots concede.
        assert!(
            table.ran_out,
            "the game ended by a stockpile running out: {table:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_take_the_game_from_the_command_line() {
    let data = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.path().to_owned(),
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let cli = Cli::try_parse_from([
        "grand-melee-loadtest",
        "bots",
        "--game",
        "magic_tech",
        "--url",
        &format!("ws://{addr}"),
        "--tables",
        "2",
        "--deck",
        "8",
    ])
    .unwrap();
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
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("magic_tech: 2 tables played to the end")),
        "{lines:?}"
    );
    // A game the protocol does not know is refused before anything runs.
    assert!(Cli::try_parse_from(["grand-melee-loadtest", "bots", "--game", "chess"]).is_err());
}
