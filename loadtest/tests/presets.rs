//! The rule presets played whole by the bots against a real server: a 40-seat table under the
//! official CR 807 rules with extra turns and simultaneous mulligans, and a 28-seat table
//! playing Combat with Dice; afterwards the host bot fetches each game's events and checks
//! every random outcome (seating, first player, every d20) against the revealed dice secret.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use grand_melee_loadtest::bot::TableOptions;
use grand_melee_loadtest::fleet::{Fleet, FleetConfig, Target};
use grand_melee_loadtest::stats::WindowData;
use grand_melee_protocol::{MulliganMode, RuleSet};
use grand_melee_server::{Server, ServerConfig};
use tokio::sync::oneshot;

/// A bound on a failure, not a pace: each game ends in a few seconds.
const PATIENCE: Duration = Duration::from_secs(120);

/// One table of `seats` bots playing one game with `options`, to the end.
async fn play(seats: u8, starting_life: i32, options: TableOptions) -> WindowData {
    let data = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.path().to_owned(),
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e8,
        table_chat_per_minute: 0.0,
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let fleet = Fleet::launch(FleetConfig {
        base_url: format!("ws://{addr}"),
        target: Target::Server,
        tables: 1,
        seats,
        think: Duration::from_millis(1),
        seed: 807,
        games: Some(1),
        starting_life,
        chat_chance: 0.0,
        mirror_check: true,
        options,
        ..FleetConfig::default()
    });
    assert!(fleet.played(PATIENCE).await, "the table finished its game");
    stop.send(()).unwrap();
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    fleet.stop();
    fleet.join().await
}

fn assert_clean(window: &WindowData) {
    let c = &window.counts;
    assert_eq!(c.games_finished, 1, "the game reached game_over");
    assert_eq!(c.games_with_winner, 1);
    assert_eq!(
        (c.errors, c.disconnects, c.connect_failures, c.gaps),
        (0, 0, 0, 0),
        "{:?}",
        window.error_codes
    );
    assert!(c.mirror_checks > 0);
    assert_eq!(
        c.mirror_mismatches, 0,
        "every bot's mirror equals the server's snapshot"
    );
    assert_eq!(
        c.dice_mismatches, 0,
        "every outcome matches the revealed dice"
    );
    assert_eq!(c.dice_verified, 1, "the host checked the game's dice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_bots_play_a_cr807_game_with_extra_turns_and_simultaneous_mulligans() {
    let window = play(
        40,
        20,
        TableOptions {
            rules: RuleSet::Cr807,
            mulligan: MulliganMode::Simultaneous,
            extra_turn_chance: 0.1,
            verify_dice: true,
            ..TableOptions::default()
        },
    )
    .await;
    assert_clean(&window);
    assert!(window.counts.extra_turns > 0, "the bots took extra turns");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_eight_bots_play_combat_with_dice_and_every_roll_is_verified() {
    let window = play(
        28,
        20,
        TableOptions {
            combat_dice: true,
            verify_dice: true,
            ..TableOptions::default()
        },
    )
    .await;
    assert_clean(&window);
    assert!(
        window.counts.rolls_verified > 20,
        "the game's d20s were rolled and checked: {}",
        window.counts.rolls_verified
    );
}
