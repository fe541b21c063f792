//! Adjourning a game (issue 34, item 1), at the socket level: the host adjourns a game in
//! progress, everyone leaves, nothing that would end or change a game left alone happens — not
//! before a restart and not after — and the table stays listed as adjourned; the host (or a
//! quorum of the players, when he does not come back) resumes it and play goes on where it
//! stopped. Each table here has an absence limit of two seconds and the server a grace period
//! of one, so a game everyone left that was NOT adjourned ends within seconds: a control game
//! left at the same time shows that the time has passed (no sleeps).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use grand_melee_e2e::{Client, CreateTable, PATIENCE, TestLeague, TestServer, keep_all_hands};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, Event, ServerMessage, StageName, TableId,
};
use grand_melee_server::ServerConfig;

/// The absence limit of every table here, in seconds.
const ABSENCE_LIMIT: u32 = 2;

fn config() -> ServerConfig {
    ServerConfig {
        max_tables: 20,
        max_tables_per_ip: 0,
        table_creations_per_minute: 0,
        grace_period_secs: 1,
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e8,
        ..ServerConfig::default()
    }
}

async fn create(client: &mut Client, name: &str, seats: u8) -> TableId {
    let settings = CreateTable::new(name, seats)
        .spell_range(1)
        .absence_limit_secs(ABSENCE_LIMIT);
    client.create(settings).await.unwrap()
}

/// A game of `seats` players in play (client `i` is player `i`; client 0 the host, who plays
/// first).
async fn playing(server: &TestServer, name: &str, seats: u8) -> (TableId, Vec<Client>) {
    let mut clients = vec![server.client().await];
    let table = create(&mut clients[0], name, seats).await;
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
    keep_all_hands(&mut clients).await;
    assert_eq!(clients[0].view.as_ref().unwrap().stage, StageName::Playing);
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

/// Polls the table list (every 50 ms) until `table` is gone from it: tables close on the
/// server's own timers, which no message announces. Fails after [`PATIENCE`].
async fn until_gone(client: &mut Client, table: TableId) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while tables(client).await.iter().any(|t| t.table == table) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{table} still listed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A control game of two that everyone leaves now: it is abandoned the absence limit later.
/// Returns once it is gone, so at least that long has passed for every table left before it.
async fn a_left_game_is_abandoned_meanwhile(server: &TestServer, observer: &mut Client) {
    let (control, clients) = playing(server, "control", 2).await;
    for mut client in clients {
        client.drop_connection();
        client.closed_with().await;
    }
    until_gone(observer, control).await;
    let answer = observer
        .call(|id| ClientMessage::GetReplay {
            id,
            table: control,
            from_seq: 1,
            password: None,
            token: None,
        })
        .await
        .unwrap();
    let ServerMessage::Replay { events, .. } = answer else {
        panic!("{answer:?}");
    };
    assert!(events.contains(&Event::GameAbandoned), "{events:?}");
}

/// The summary of `table` in the list.
async fn listed(client: &mut Client, table: TableId) -> wire::TableSummary {
    tables(client)
        .await
        .into_iter()
        .find(|t| t.table == table)
        .unwrap_or_else(|| panic!("{table} not listed"))
}

async fn ack(client: &mut Client, build: impl FnOnce(u32) -> ClientMessage) -> u64 {
    match client.call(build).await {
        Ok(ServerMessage::Ack { seq, .. }) => seq,
        other => panic!("{other:?}"),
    }
}

fn adjourn(id: u32) -> ClientMessage {
    ClientMessage::Adjourn { id }
}

fn resume_game(id: u32) -> ClientMessage {
    ClientMessage::ResumeGame { id }
}

/// The host adjourns, everyone leaves, a left game beside it is abandoned, the server restarts,
/// another left game is abandoned; the adjourned game is still there, listed as adjourned, with
/// nobody absent, and the host resumes it with his seat token: play goes on from the same
/// state. In the journal (and the replay) adjourning and resuming are one event each.
#[tokio::test]
async fn an_adjourned_game_outlives_everyone_leaving_and_a_restart_and_the_host_resumes_it() {
    let server = TestServer::start_with(config()).await;
    let (table, mut clients) = playing(&server, "long game", 3).await;
    assert_eq!(
        clients[1].call(adjourn).await,
        Err(ErrorCode::NotHost),
        "only the host adjourns"
    );
    assert_eq!(
        clients[1].call(resume_game).await,
        Err(ErrorCode::NotAdjourned)
    );
    let seq = ack(&mut clients[0], adjourn).await;
    for client in &mut clients {
        client.catch_up(seq).await;
        assert!(client.view.as_ref().unwrap().adjourned);
    }
    let before = clients[0].view.clone().unwrap();
    assert_eq!(
        clients[0].call(|id| ClientMessage::EndTurn { id }).await,
        Err(ErrorCode::TableAdjourned),
        "the game stands still"
    );
    assert_eq!(
        clients[0]
            .call(|id| ClientMessage::Pause { id, paused: true })
            .await,
        Err(ErrorCode::TableAdjourned)
    );
    assert_eq!(
        clients[0].call(adjourn).await,
        Err(ErrorCode::TableAdjourned)
    );
    let tokens: Vec<grand_melee_protocol::SeatToken> =
        clients.iter().map(|c| c.seat.unwrap().1).collect();
    for mut client in clients {
        client.drop_connection();
        client.closed_with().await;
    }

    let mut observer = server.client().await;
    a_left_game_is_abandoned_meanwhile(&server, &mut observer).await;
    let summary = listed(&mut observer, table).await;
    assert!(summary.adjourned, "{summary:?}");
    assert_eq!(summary.stage, StageName::Playing);
    drop(observer);

    let server = server.restart(config()).await;
    let mut observer = server.client().await;
    let summary = listed(&mut observer, table).await;
    assert!(summary.adjourned, "after the restart: {summary:?}");
    a_left_game_is_abandoned_meanwhile(&server, &mut observer).await;
    assert!(listed(&mut observer, table).await.adjourned);

    // The host comes back with his seat token.
    let mut host = server.client().await;
    assert_eq!(host.resume(table, tokens[0]).await, Ok(0));
    let mut other = server.client().await;
    assert_eq!(other.resume(table, tokens[1]).await, Ok(1));
    let view = host.view.clone().unwrap();
    assert!(view.adjourned);
    assert_eq!(view.host, Some(0), "the host, back first, keeps the role");
    assert!(
        view.players.iter().all(|p| !p.absent),
        "nobody is judged absent: {:?}",
        view.players
    );
    let seq = ack(&mut host, resume_game).await;
    other.catch_up(seq).await;
    let view = other.view.clone().unwrap();
    assert!(!view.adjourned);
    assert_eq!(view.stage, StageName::Playing);
    assert_eq!(view.turns, before.turns, "play goes on where it stopped");
    let lives: Vec<_> = view.players.iter().map(|p| (p.player, p.life)).collect();
    let lives_before: Vec<_> = before.players.iter().map(|p| (p.player, p.life)).collect();
    assert_eq!(lives, lives_before);
    assert!(!listed(&mut observer, table).await.adjourned);
    // And it does go on: the host ends his turn, which passes to the left.
    let seq = ack(&mut host, |id| ClientMessage::EndTurn { id }).await;
    other.catch_up(seq).await;
    assert_ne!(other.running_players(), [0]);

    let events = other.past_events(table).await;
    let adjournments: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::TableAdjourned { .. }))
        .collect();
    assert_eq!(
        adjournments,
        [
            &Event::TableAdjourned { adjourned: true },
            &Event::TableAdjourned { adjourned: false }
        ]
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PlayerAbsent { .. } | Event::GameAbandoned)),
        "{events:?}"
    );
}

/// The host does not resume: a majority of the players still in the game asks, each ask
/// counted once, and the last ask resumes the game (the role passes as usual once he is gone).
/// Adjourning needs a game in progress.
#[tokio::test]
async fn a_quorum_of_the_players_resumes_a_game_whose_host_does_not_come_back() {
    let server = TestServer::start_with(config()).await;
    let mut lobby = server.client().await;
    let waiting = create(&mut lobby, "not yet", 3).await;
    assert_eq!(lobby.join(waiting, "early").await, Ok(0));
    assert_eq!(
        lobby.call(adjourn).await,
        Err(ErrorCode::NotPlaying),
        "nothing to adjourn in the lobby"
    );
    assert!(!listed(&mut lobby, waiting).await.adjourned);

    let (table, mut clients) = playing(&server, "hostless", 3).await;
    let seq = ack(&mut clients[0], adjourn).await;
    // The host stays (asleep, his page open) and does not resume: the quorum does without
    // his word. (Once he has been away for the grace period, the role passes on instead.)
    let mut host = clients.remove(0);
    for client in &mut clients {
        client.catch_up(seq).await;
    }
    // Three players in the game: two asks resume it.
    assert_eq!(clients[0].view.as_ref().unwrap().resume_quorum(), 2);
    let seq = ack(&mut clients[0], resume_game).await;
    clients[1].catch_up(seq).await;
    assert_eq!(clients[1].view.as_ref().unwrap().resume_asks, [1]);
    assert_eq!(
        clients[0].call(resume_game).await,
        Err(ErrorCode::AlreadyAsked),
        "an ask counts once"
    );
    assert!(listed(&mut clients[0], table).await.adjourned);
    let seq = ack(&mut clients[1], resume_game).await;
    clients[1].catch_up(seq).await;
    assert!(!clients[1].view.as_ref().unwrap().adjourned);
    let events = clients[1].past_events(table).await;
    assert_eq!(
        events[events.len() - 2..],
        [
            Event::ResumeRequested { player: 2 },
            Event::TableAdjourned { adjourned: false }
        ],
        "the ask that makes the quorum resumes the game"
    );
    assert!(!listed(&mut clients[0], table).await.adjourned);
    // Play goes on without the host: the role passes a grace period after he left.
    host.drop_connection();
    host.closed_with().await;
    clients[0]
        .until_event(|e| matches!(e, Event::HostChanged { player: Some(1) }).then_some(()))
        .await;
}

/// The host of `clients`' table, by the first client's view.
fn host_of(clients: &mut [Client]) -> &mut Client {
    let host = clients[0].view.as_ref().unwrap().host.unwrap();
    clients
        .iter_mut()
        .find(|c| c.seat.map(|s| s.0) == Some(host))
        .unwrap()
}

/// Issue 43, item 2: adjourned games held their places for ever. Now an adjourned game nobody
/// resumes ends as abandoned once the operator's expiry (`--adjourned-expiry-days`; seconds
/// here) has passed since it was adjourned: `game_abandoned` in its journal, kept as a replay,
/// its league credits paid (each member has played one game), its place given back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adjourned_game_nobody_resumes_ends_abandoned_when_its_adjournment_expires() {
    let config = ServerConfig {
        max_tables: 1,
        adjourned_expiry_secs: Some(4),
        ..config()
    };
    let server = TestServer::start_with(config).await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Slow", &["Ann", "Bob"]).await;
    let (table, mut clients) = league.started(server.addr, "week 1", &[0, 1]).await;
    ack(host_of(&mut clients), adjourn).await;
    for client in &mut clients {
        client.drop_connection();
        client.closed_with().await;
    }
    let mut newcomer = server.client().await;
    assert_eq!(
        newcomer.create(CreateTable::new("newcomer", 2)).await,
        Err(ErrorCode::ServerBusy)
    );
    assert!(listed(&mut newcomer, table).await.adjourned);
    until_gone(&mut newcomer, table).await;
    let events = newcomer.replay_events(table).await;
    let end = &events[events.len() - 4..];
    assert_eq!(
        end[..2],
        [
            Event::TableAdjourned { adjourned: false },
            Event::GameAbandoned
        ],
        "{end:?}"
    );
    assert!(matches!(end[2], Event::GameOver { .. }), "{end:?}");
    let view = league.view(&mut newcomer).await;
    assert!(view.games[0].finished_at_ms.is_some(), "{:?}", view.games);
    assert!(
        view.standings.iter().all(|s| s.games == 1),
        "credited: {:?}",
        view.standings
    );
    newcomer
        .create(CreateTable::new("newcomer", 2))
        .await
        .unwrap();
}

/// The expiry counts from the adjournment, which the journal keeps: a restart does not start
/// it over. The journal says the game was adjourned two days ago; the server restarts with an
/// expiry of one day, and the game ends at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_does_not_start_an_adjournments_expiry_over() {
    let server = TestServer::start_with(config()).await;
    let (table, mut clients) = playing(&server, "old news", 2).await;
    ack(&mut clients[0], adjourn).await;
    drop(clients);
    let journal =
        rusqlite::Connection::open(server.data_dir().join(grand_melee_server::journal::DB_FILE))
            .unwrap();
    journal.busy_timeout(PATIENCE).unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let two_days_ago = u64::try_from(now_ms).unwrap() - 2 * 86_400_000;
    // MessagePack's unsigned 64-bit integer.
    let mut value = vec![0xcf];
    value.extend(two_days_ago.to_be_bytes());
    let changed = journal
        .execute(
            "UPDATE meta SET value = ?1 WHERE key = 'adjourned_at_ms'",
            [value],
        )
        .unwrap();
    assert_eq!(changed, 1, "the journal keeps when the game was adjourned");
    drop(journal);
    let server = server
        .restart(ServerConfig {
            adjourned_expiry_days: 1,
            ..config()
        })
        .await;
    let mut observer = server.client().await;
    until_gone(&mut observer, table).await;
    let events = observer.replay_events(table).await;
    assert!(events.contains(&Event::GameAbandoned), "{events:?}");
}

/// Issue 43, item 3: a two-player game is adjourned and its host leaves for good. The other
/// player's ask counts once and is no quorum (both players are), and the host's powers answered
/// `not_host`: the game was stuck for ever. Now the host role passes to him a grace period after
/// the host left, as it does in play, and he resumes the game.
#[tokio::test]
async fn a_two_player_game_whose_host_leaves_while_adjourned_is_resumed_by_the_next_host() {
    let server = TestServer::start_with(config()).await;
    let (table, mut clients) = playing(&server, "duel", 2).await;
    ack(&mut clients[0], adjourn).await;
    let mut host = clients.remove(0);
    host.drop_connection();
    host.closed_with().await;
    let mut other = clients.remove(0);
    ack(&mut other, resume_game).await;
    assert_eq!(other.call(resume_game).await, Err(ErrorCode::AlreadyAsked));
    other
        .until_event(|e| matches!(e, Event::HostChanged { player: Some(1) }).then_some(()))
        .await;
    assert!(listed(&mut other, table).await.adjourned);
    assert_eq!(
        other
            .call(|id| ClientMessage::Kick {
                id,
                player: 0,
                ban: false
            })
            .await,
        Err(ErrorCode::TableAdjourned),
        "nobody is eliminated while adjourned"
    );
    let seq = ack(&mut other, resume_game).await;
    other.catch_up(seq).await;
    assert!(!other.view.as_ref().unwrap().adjourned);
    assert!(!listed(&mut other, table).await.adjourned);
}

/// Issue 43, item 11: a host toggling `adjourn` and `resume_game` journaled an event per
/// request without bound. The host adjourns at most once per `ADJOURN_INTERVAL_SECS`; sooner is
/// refused with `rate_limited` and changes nothing; resuming is not paced.
#[tokio::test]
async fn adjourning_is_paced() {
    let server = TestServer::start_with(config()).await;
    let (table, mut clients) = playing(&server, "toggled", 2).await;
    ack(&mut clients[0], adjourn).await;
    let seq = ack(&mut clients[0], resume_game).await;
    assert_eq!(clients[0].call(adjourn).await, Err(ErrorCode::RateLimited));
    assert_eq!(
        clients[0].fresh_snapshot().await.seq,
        seq,
        "nothing journaled"
    );
    assert!(!listed(&mut clients[0], table).await.adjourned);
}
