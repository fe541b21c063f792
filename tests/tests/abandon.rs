//! Hardening, at the socket level: a game everyone has left ends and gives its place on the
//! server back (also after a restart); a host who stays connected but silent while the table
//! waits on him loses the role, and the new host can rule; no wait a table sets is endless.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use grand_melee_e2e::{Client, CreateTable, PATIENCE, Received, TestServer, keep_all_hands};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, Event, KeepReason, Ruling, ServerMessage, StageName,
    TableId, TurnEndReason,
};
use grand_melee_server::ServerConfig;

/// The absence limit of every table here, in seconds.
const ABSENCE_LIMIT: u32 = 2;

/// A server with room for `max_tables` tables, a one-second grace period, and no limit on how
/// fast a test sends or how many tables one address opens.
fn config(max_tables: usize) -> ServerConfig {
    ServerConfig {
        max_tables,
        max_tables_per_ip: 0,
        table_creations_per_minute: 0,
        grace_period_secs: 1,
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e8,
        ..ServerConfig::default()
    }
}

/// The tests' table with these clocks.
fn settings(
    seats: u8,
    turn_clock_secs: u32,
    absence_limit_secs: u32,
    mulligan_clock_secs: u32,
) -> CreateTable {
    CreateTable::new("abandon", seats)
        .spell_range(1)
        .turn_clock_secs(turn_clock_secs)
        .absence_limit_secs(absence_limit_secs)
        .mulligan_clock_secs(mulligan_clock_secs)
}

async fn create(
    client: &mut Client,
    seats: u8,
    mulligan_clock_secs: u32,
) -> Result<TableId, ErrorCode> {
    let settings = settings(seats, 0, ABSENCE_LIMIT, mulligan_clock_secs);
    client.create(settings).await
}

/// A started table of `seats` players (client `i` is player `i`, client 0 the host, who plays
/// first), in the mulligan stage.
async fn started(
    server: &TestServer,
    seats: u8,
    mulligan_clock_secs: u32,
) -> (TableId, Vec<Client>) {
    let mut clients = vec![server.client().await];
    let table = create(&mut clients[0], seats, mulligan_clock_secs)
        .await
        .unwrap();
    for _ in 1..seats {
        clients.push(server.client().await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        assert_eq!(
            client.join(table, &format!("player {i}")).await,
            Ok(i as u16)
        );
    }
    let started = clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: Some(0),
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    let Ok(ServerMessage::Ack { seq, .. }) = started else {
        panic!("{started:?}");
    };
    for client in &mut clients {
        client.catch_up(seq).await;
    }
    (table, clients)
}

/// Every table in the list (one page is enough here).
async fn tables(client: &mut Client) -> Vec<wire::TableSummary> {
    let answer = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 100,
        })
        .await
        .unwrap();
    let ServerMessage::Tables { tables, .. } = answer else {
        panic!("{answer:?}");
    };
    tables
}

/// Asks for the table list every 50 ms until it is empty: tables close on the server's own
/// timers, which no message announces. Fails after [`PATIENCE`].
async fn until_no_table(client: &mut Client) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let listed = tables(client).await;
        if listed.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still listed: {:?}",
            listed.iter().map(|t| t.stage).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
/// The replay ends as an abandoned game does: `game_abandoned`, then `game_over` with every
/// player still in the game sharing the first place, then `dice_revealed`.
fn ends_abandoned(events: &[Event], players: u16) {
    let end = &events[events.len() - 3..];
    assert_eq!(end[0], Event::GameAbandoned, "{end:?}");
    let Event::GameOver { standings } = &end[1] else {
        panic!("{end:?}");
    };
    assert_eq!(standings.len(), usize::from(players));
    assert!(standings.iter().all(|s| s.place == 1), "{standings:?}");
    assert!(matches!(end[2], Event::DiceRevealed { .. }), "{end:?}");
}

/// Issue: three two-seat tables, started, both players of each gone: they were listed as
/// playing for good and a newcomer got `server_busy`. Now each game ends once its players have
/// been away for the absence limit, is kept as a replay, and gives its place back.
#[tokio::test]
async fn games_everyone_has_left_end_and_give_their_places_back() {
    let server = TestServer::start_with(config(3)).await;
    let mut games = Vec::new();
    for _ in 0..3 {
        games.push(started(&server, 2, 60).await);
    }
    let mut newcomer = server.client().await;
    assert_eq!(
        create(&mut newcomer, 2, 60).await,
        Err(ErrorCode::ServerBusy)
    );
    for (_, clients) in &mut games {
        for client in clients.iter_mut() {
            client.drop_connection();
            client.closed_with().await;
        }
    }
    until_no_table(&mut newcomer).await;
    for (table, _) in &games {
        let events = newcomer.replay_events(*table).await;
        ends_abandoned(&events, 2);
    }
    // The places are free again.
    for _ in 0..3 {
        create(&mut newcomer, 2, 60).await.unwrap();
    }
}

/// The same after a restart: everyone counts as disconnected since the restart, and a game
/// nobody comes back to ends one absence limit later.
#[tokio::test]
async fn after_a_restart_a_game_nobody_comes_back_to_ends_and_gives_its_place_back() {
    let server = TestServer::start_with(config(1)).await;
    let (table, mut clients) = started(&server, 2, 60).await;
    keep_all_hands(&mut clients).await;
    assert_eq!(clients[0].view.as_ref().unwrap().stage, StageName::Playing);
    drop(clients);
    let server = server.restart(config(1)).await;
    let mut newcomer = server.client().await;
    let listed = tables(&mut newcomer).await;
    assert_eq!(listed.len(), 1, "recovered");
    assert_eq!(
        create(&mut newcomer, 2, 60).await,
        Err(ErrorCode::ServerBusy)
    );
    until_no_table(&mut newcomer).await;
    ends_abandoned(&newcomer.replay_events(table).await, 2);
    create(&mut newcomer, 2, 60).await.unwrap();
}

/// The `host_changed` naming `player` (received already or next).
async fn host_changed_to(client: &mut Client, player: u16) {
    client
        .until_event(|e| {
            matches!(e, Event::HostChanged { player: Some(p) } if *p == player).then_some(())
        })
        .await;
}

/// Issue: mulligan clock 0 and the host deciding first, silent but connected: the table sat in
/// mulligans and nobody else could rule. Now the role passes after the absence limit of
/// silence and the new host rules `keep` for him.
#[tokio::test]
async fn a_silent_host_deciding_first_without_a_mulligan_clock_hands_the_role_on() {
    let server = TestServer::start_with(config(10)).await;
    let (_, mut clients) = started(&server, 3, 0).await;
    assert_eq!(clients[1].view.as_ref().unwrap().mulligan_decider, Some(0));
    let keep_for_host = |id| ClientMessage::Ruling {
        id,
        ruling: Ruling::Keep { player: 0 },
    };
    // (That the others get `not_host` until then is checked on a simulated clock in
    // protocol/tests/session_clock.rs: here the hand-over comes after two seconds.)
    host_changed_to(&mut clients[1], 1).await;
    let ruled = clients[1].call(keep_for_host).await;
    assert!(matches!(ruled, Ok(ServerMessage::Ack { .. })), "{ruled:?}");
    let reason = clients[2]
        .until_event(|e| match e {
            Event::Kept {
                player: 0, reason, ..
            } => Some(*reason),
            _ => None,
        })
        .await;
    assert_eq!(reason, KeepReason::Ruling);
    // The old host is a player like the others now.
    let kick = clients[0]
        .call(|id| ClientMessage::Kick {
            id,
            player: 2,
            ban: false,
        })
        .await;
    assert_eq!(kick, Err(ErrorCode::NotHost));
}

/// Issue: turn clock off (the default) and the host's own turn running, silent but connected:
/// the turn never ended and the others got `not_host`. Now the role passes after the absence
/// limit of silence and the new host ends the turn by ruling.
#[tokio::test]
async fn a_silent_host_whose_turn_runs_without_a_turn_clock_hands_the_role_on() {
    let server = TestServer::start_with(config(10)).await;
    let (_, mut clients) = started(&server, 3, 60).await;
    keep_all_hands(&mut clients).await;
    assert_eq!(clients[1].running_players(), [0]);
    let end_hosts_turn = |id| ClientMessage::Ruling {
        id,
        ruling: Ruling::EndTurn { player: 0 },
    };
    host_changed_to(&mut clients[1], 1).await;
    let ruled = clients[1].call(end_hosts_turn).await;
    assert!(matches!(ruled, Ok(ServerMessage::Ack { .. })), "{ruled:?}");
    let reason = clients[2]
        .until_event(|e| match e {
            Event::TurnEnded {
                player: 0, reason, ..
            } => Some(*reason),
            _ => None,
        })
        .await;
    assert_eq!(reason, TurnEndReason::Ruling);
}

/// The `bad_settings` error answering a `create_table` with these clocks, and its message.
async fn refused_settings(client: &mut Client, turn: u32, absence: u32, mulligan: u32) -> String {
    let id = client.send(|id| settings(4, turn, absence, mulligan).request(id));
    client
        .until(|r| match r {
            Received::Message(m, _) => match &**m {
                ServerMessage::Error {
                    reply_to: Some(r),
                    code,
                    message,
                    ..
                } if *r == id => {
                    assert_eq!(*code, ErrorCode::BadSettings, "{message}");
                    Some(message.clone())
                }
                ServerMessage::TableCreated { reply_to, .. } if *reply_to == id => {
                    panic!("created with clocks {turn}/{absence}/{mulligan}")
                }
                _ => None,
            },
            Received::Closed(_) => None,
        })
        .await
}

/// Issue: `absence_limit_secs` at u32::MAX made a pause last 136 years. Every clock a table
/// sets is at most 24 hours; more is refused, naming the setting.
#[tokio::test]
async fn endless_clocks_are_refused_naming_the_setting() {
    let server = TestServer::start_with(config(10)).await;
    let mut client = server.client().await;
    let cap = wire::MAX_CLOCK_SECS;
    let message = refused_settings(&mut client, 0, u32::MAX, 60).await;
    assert!(message.starts_with("absence_limit_secs: "), "{message}");
    assert!(message.contains(&u32::MAX.to_string()), "{message}");
    let message = refused_settings(&mut client, cap + 1, 600, 60).await;
    assert!(message.starts_with("turn_clock_secs: "), "{message}");
    let message = refused_settings(&mut client, 0, 600, cap + 1).await;
    assert!(message.starts_with("mulligan_clock_secs: "), "{message}");
    // The cap itself is allowed, and the refusals left nothing behind.
    assert!(tables(&mut client).await.is_empty());
    let created = client
        .call(|id| settings(4, cap, cap, cap).request(id))
        .await;
    assert!(
        matches!(created, Ok(ServerMessage::TableCreated { .. })),
        "{created:?}"
    );
}
