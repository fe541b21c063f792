//! Hardening round 2, at the socket level: no table waits forever on one absent or silent
//! person, in any stage; the host's powers reach every stage; a public table can be protected
//! from a flooder; names and chat cannot carry control or invisible characters.
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};

use grand_melee_e2e::{Client, CreateTable, TestServer};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, Event, KeepReason, PlayerStatus, Ruling, ServerMessage,
    StageName, TableId, close,
};
use grand_melee_server::ServerConfig;

/// A second loopback address: another client's machine, as far as the server can tell.
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// Table settings the tests choose.
#[derive(Clone, Copy)]
struct Clocks {
    mulligan_clock_secs: u32,
    max_spectators: u32,
    absence_limit_secs: u32,
}

const NO_MULLIGAN_CLOCK: Clocks = Clocks {
    mulligan_clock_secs: 0,
    max_spectators: 100,
    absence_limit_secs: 600,
};

/// A server whose grace period is one second, and who lets a test send as fast as it likes.
async fn server() -> TestServer {
    TestServer::start_with(ServerConfig {
        grace_period_secs: 1,
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e8,
        ..ServerConfig::default()
    })
    .await
}

async fn create(host: &mut Client, clocks: Clocks) -> TableId {
    let settings = CreateTable::new("stalls", 8)
        .spell_range(1)
        .seed(11)
        .absence_limit_secs(clocks.absence_limit_secs)
        .mulligan_clock_secs(clocks.mulligan_clock_secs)
        .max_spectators(clocks.max_spectators);
    host.create(settings).await.unwrap()
}

/// `seats` players seated (client `i` is player `i`, client 0 the host), in the lobby.
async fn lobby(server: &TestServer, seats: usize, clocks: Clocks) -> (TableId, Vec<Client>) {
    let mut clients = vec![server.client().await];
    let table = create(&mut clients[0], clocks).await;
    for _ in 1..seats {
        clients.push(server.client().await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        client.join(table, &format!("player {i}")).await.unwrap();
    }
    (table, clients)
}

/// The host starts with player 0 first: the mulligan decisions go round from player 0.
async fn start(clients: &mut [Client]) {
    let started = clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: Some(0),
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
}

fn decider(client: &Client) -> Option<u16> {
    client.view.as_ref().and_then(|v| v.mulligan_decider)
}

/// The players in the order they decide on mulligans (seating order from the first player).
fn deciding_order(client: &Client) -> Vec<u16> {
    let view = client.view.as_ref().unwrap();
    let first = view.first_player.unwrap();
    let ring = &view.ring;
    let at = ring.iter().position(|&p| p == first).unwrap();
    (0..ring.len())
        .map(|k| ring[(at + k) % ring.len()])
        .collect()
}

/// The client of a player (client `i` is player `i`).
fn of(player: u16) -> usize {
    usize::from(player)
}

/// The first event `pick` chooses among those the client has received already, or else the
/// next one it receives.
async fn event<T>(client: &mut Client, mut pick: impl FnMut(&Event) -> Option<T>) -> T {
    let seen = client.event_frames.iter().find_map(|(_, bytes)| {
        match wire::decode_server(bytes).unwrap() {
            ServerMessage::Events { events, .. } => events.iter().find_map(&mut pick),
            _ => None,
        }
    });
    match seen {
        Some(found) => found,
        None => client.until_event(pick).await,
    }
}

/// `player`'s keep (received already or next) and its reason.
async fn kept(client: &mut Client, player: u16) -> KeepReason {
    event(client, |e| match e {
        Event::Kept {
            player: p, reason, ..
        } if *p == player => Some(*reason),
        _ => None,
    })
    .await
}

async fn keep(client: &mut Client) {
    let answer = client.call(|id| ClientMessage::Keep { id }).await;
    assert!(
        matches!(answer, Ok(ServerMessage::Ack { .. })),
        "{answer:?}"
    );
}

#[tokio::test]
async fn a_decider_who_drops_during_mulligans_keeps_after_the_grace_period() {
    let server = server().await;
    let (_, mut clients) = lobby(&server, 4, NO_MULLIGAN_CLOCK).await;
    start(&mut clients).await;
    let order = deciding_order(&clients[0]);
    assert_eq!(order[0], 0);
    keep(&mut clients[0]).await;
    // The second decider must decide now, and closes his connection.
    let gone = order[1];
    assert_eq!(decider(&clients[0]), Some(gone));
    clients[of(gone)].drop_connection();
    // No mulligan clock: only his absence past the grace period ends the wait.
    assert_eq!(kept(&mut clients[0], gone).await, KeepReason::Absent);
    assert_eq!(decider(&clients[0]), Some(order[2]));
    keep(&mut clients[of(order[2])]).await;
    keep(&mut clients[of(order[3])]).await;
    let last = clients[of(order[3])].view.as_ref().unwrap().seq;
    clients[0].catch_up(last).await;
    assert_eq!(clients[0].view.as_ref().unwrap().stage, StageName::Playing);
}

#[tokio::test]
async fn a_silent_decider_keeps_when_the_mulligan_clock_runs_out() {
    let server = server().await;
    let clocks = Clocks {
        mulligan_clock_secs: 1,
        ..NO_MULLIGAN_CLOCK
    };
    let (_, mut clients) = lobby(&server, 3, clocks).await;
    start(&mut clients).await;
    let order = deciding_order(&clients[0]);
    let watcher = of(order[1]);
    // Player 0, the first to decide, stays connected and says nothing.
    assert_eq!(kept(&mut clients[watcher], 0).await, KeepReason::Clock);
    assert_eq!(decider(&clients[watcher]), Some(order[1]));
    // The clock starts again for the next decider, who answers in time.
    keep(&mut clients[watcher]).await;
    assert_eq!(
        kept(&mut clients[watcher], order[2]).await,
        KeepReason::Clock
    );
    assert_eq!(
        clients[watcher].view.as_ref().unwrap().stage,
        StageName::Playing
    );
}

#[tokio::test]
async fn the_host_rules_keep_for_the_decider_and_only_for_him() {
    let server = server().await;
    let (_, mut clients) = lobby(&server, 3, NO_MULLIGAN_CLOCK).await;
    start(&mut clients).await;
    let order = deciding_order(&clients[0]);
    keep(&mut clients[0]).await;
    let (due, later) = (order[1], order[2]);
    let rule = |player| {
        move |id| ClientMessage::Ruling {
            id,
            ruling: Ruling::Keep { player },
        }
    };
    assert_eq!(
        clients[0].call(rule(later)).await,
        Err(ErrorCode::NotYourDecision)
    );
    assert_eq!(
        clients[of(later)].call(rule(due)).await,
        Err(ErrorCode::NotHost)
    );
    let ruled = clients[0].call(rule(due)).await;
    assert!(matches!(ruled, Ok(ServerMessage::Ack { .. })), "{ruled:?}");
    assert_eq!(kept(&mut clients[0], due).await, KeepReason::Ruling);
    assert_eq!(decider(&clients[0]), Some(later));
}

#[tokio::test]
async fn the_host_kicks_during_mulligans_and_the_kicked_are_out_when_play_begins() {
    let server = server().await;
    let (table, mut clients) = lobby(&server, 5, NO_MULLIGAN_CLOCK).await;
    start(&mut clients).await;
    let order = deciding_order(&clients[0]);
    let kick = |player| {
        move |id| ClientMessage::Kick {
            id,
            player,
            ban: false,
        }
    };
    // The host decides first. He kicks the fourth decider, whose decision is not due yet; then
    // he keeps and kicks the second decider, whose decision is due.
    let (due, later) = (order[1], order[3]);
    let kicked = clients[0].call(kick(later)).await;
    assert!(
        matches!(kicked, Ok(ServerMessage::Ack { .. })),
        "{kicked:?}"
    );
    assert_eq!(
        clients[of(later)].closed_with().await,
        Some(close::POLICY_VIOLATION)
    );
    let reason = clients[of(later)].close_reason().unwrap_or_default();
    assert!(reason.contains("removed"), "{reason}");
    keep(&mut clients[0]).await;
    clients[0].call(kick(due)).await.unwrap();
    assert_eq!(kept(&mut clients[0], due).await, KeepReason::Ruling);
    keep(&mut clients[of(order[2])]).await;
    // The fourth decider's decision comes up and is taken at once.
    assert_eq!(kept(&mut clients[0], later).await, KeepReason::Ruling);
    keep(&mut clients[of(order[4])]).await;
    let out = event(&mut clients[0], |e| match e {
        Event::Eliminated { players, .. } => Some(players.clone()),
        _ => None,
    })
    .await;
    let mut out = out;
    out.sort_unstable();
    let mut expected = vec![due, later];
    expected.sort_unstable();
    assert_eq!(out, expected);
    let view = clients[0].fresh_snapshot().await;
    assert_eq!(view.stage, StageName::Playing);
    for player in view.players {
        let alive = player.status == PlayerStatus::Alive;
        assert_eq!(alive, !expected.contains(&player.player), "{player:?}");
    }
    // The kicked players' seat tokens no longer work.
    let (_, token) = clients[of(due)].seat.unwrap();
    let mut back = server.client().await;
    assert_eq!(back.resume(table, token).await, Err(ErrorCode::BadToken));
}

#[tokio::test]
async fn a_paused_table_whose_host_is_gone_gets_a_new_host_who_can_resume_it() {
    let server = server().await;
    let (_, mut clients) = lobby(&server, 3, NO_MULLIGAN_CLOCK).await;
    start(&mut clients).await;
    let paused = clients[0]
        .call(|id| ClientMessage::Pause { id, paused: true })
        .await;
    assert!(
        matches!(paused, Ok(ServerMessage::Ack { .. })),
        "{paused:?}"
    );
    clients[0].drop_connection();
    let host = clients[1]
        .until_event(|e| match e {
            Event::HostChanged { player } => Some(*player),
            _ => None,
        })
        .await;
    assert_eq!(host, Some(1));
    let resumed = clients[1]
        .call(|id| ClientMessage::Pause { id, paused: false })
        .await;
    assert!(
        matches!(resumed, Ok(ServerMessage::Ack { .. })),
        "{resumed:?}"
    );
    assert!(!clients[1].view.as_ref().unwrap().paused);
}

#[tokio::test]
async fn a_lobby_whose_host_is_gone_gets_a_new_host_who_can_start() {
    let server = server().await;
    let (_, mut clients) = lobby(&server, 3, NO_MULLIGAN_CLOCK).await;
    clients[0].drop_connection();
    let host = clients[1]
        .until_event(|e| match e {
            Event::HostChanged { player } => Some(*player),
            _ => None,
        })
        .await;
    assert_eq!(host, Some(1));
    let started = clients[1]
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
}

#[tokio::test]
async fn the_host_mutes_a_player_and_the_spectators() {
    let server = server().await;
    let (table, mut clients) = lobby(&server, 2, NO_MULLIGAN_CLOCK).await;
    let mut spectator = server.client().await;
    spectator.watch(table).await;
    let chat = |id| ClientMessage::Chat {
        id,
        text: "hello".into(),
    };
    let mute = |player, muted| move |id| ClientMessage::Mute { id, player, muted };
    assert_eq!(
        clients[1].call(mute(Some(0), true)).await,
        Err(ErrorCode::NotHost)
    );
    assert_eq!(
        clients[0].call(mute(Some(9), true)).await,
        Err(ErrorCode::UnknownPlayer)
    );
    clients[0].call(mute(Some(1), true)).await.unwrap();
    clients[0].call(mute(None, true)).await.unwrap();
    assert_eq!(clients[1].call(chat).await, Err(ErrorCode::Muted));
    assert_eq!(spectator.call(chat).await, Err(ErrorCode::Muted));
    assert!(clients[0].call(chat).await.is_ok(), "the host is not muted");
    let view = clients[0].fresh_snapshot().await;
    assert!(view.spectators_muted);
    assert!(view.players[1].muted && !view.players[0].muted);
    assert_eq!(clients[0].view.as_ref(), Some(&view), "the mirror agrees");
    clients[0].call(mute(Some(1), false)).await.unwrap();
    assert!(clients[1].call(chat).await.is_ok());
}

#[tokio::test]
async fn a_banned_player_cannot_come_back_under_another_name_from_his_address() {
    let server = server().await;
    let mut host = server.client().await;
    let table = create(&mut host, NO_MULLIGAN_CLOCK).await;
    host.join(table, "Ann").await.unwrap();
    let mut pest = Client::connected_from(server.addr, OTHER).await;
    pest.join(table, "Pest").await.unwrap();
    let kicked = host
        .call(|id| ClientMessage::Kick {
            id,
            player: 1,
            ban: true,
        })
        .await;
    assert!(
        matches!(kicked, Ok(ServerMessage::Ack { .. })),
        "{kicked:?}"
    );
    assert_eq!(pest.closed_with().await, Some(close::POLICY_VIOLATION));
    let banned = event(&mut host, |e| match e {
        Event::PlayerKicked { player: 1, banned } => Some(*banned),
        _ => None,
    })
    .await;
    assert!(banned);
    let mut again = Client::connected_from(server.addr, OTHER).await;
    assert_eq!(again.join(table, "Nice Guy").await, Err(ErrorCode::Banned));
    let watch = again
        .call(|id| ClientMessage::Watch {
            id,
            table,
            password: None,
        })
        .await;
    assert_eq!(watch, Err(ErrorCode::Banned));
    // Everyone else may still sit down.
    let mut friend = server.client().await;
    friend.join(table, "Friend").await.unwrap();
}

#[tokio::test]
async fn a_table_admits_no_more_spectators_than_it_allows() {
    let server = server().await;
    let clocks = Clocks {
        mulligan_clock_secs: 60,
        max_spectators: 2,
        ..NO_MULLIGAN_CLOCK
    };
    let (table, _clients) = lobby(&server, 2, clocks).await;
    let watch = |id| ClientMessage::Watch {
        id,
        table,
        password: None,
    };
    let mut watchers = Vec::new();
    for _ in 0..2 {
        let mut watcher = server.client().await;
        assert!(matches!(
            watcher.call(watch).await,
            Ok(ServerMessage::Watching { .. })
        ));
        watchers.push(watcher);
    }
    let mut third = server.client().await;
    assert_eq!(third.call(watch).await, Err(ErrorCode::SpectatorsFull));
}

#[tokio::test]
async fn names_and_chat_with_control_or_invisible_characters_are_refused() {
    let server = server().await;
    let mut host = server.client().await;
    let table = create(&mut host, NO_MULLIGAN_CLOCK).await;
    host.join(table, "Ann").await.unwrap();
    let mut other = server.client().await;
    for (name, code) in [
        ("Eve\u{1b}]0;owned\u{7}", ErrorCode::BadText),
        ("Eve\u{202e}nnA", ErrorCode::BadText),
        ("E\u{200b}ve", ErrorCode::BadText),
        ("Eve\u{2028}event 9 game_over", ErrorCode::BadText),
        ("host", ErrorCode::ReservedName),
        ("SERVER", ErrorCode::ReservedName),
        ("ANN", ErrorCode::NameTaken),
        ("\u{410}nn", ErrorCode::ConfusableName),
        ("   ", ErrorCode::BadName),
    ] {
        assert_eq!(other.join(table, name).await, Err(code), "{name:?}");
    }
    // Nothing changed: still one player.
    assert_eq!(host.fresh_snapshot().await.players.len(), 1);
    // A name typed in decomposed form is kept composed (NFC).
    other.join(table, "Rene\u{301}").await.unwrap();
    let view = host.fresh_snapshot().await;
    assert_eq!(view.players[1].name, "Ren\u{e9}");
    for text in [
        "\u{1b}[2J",
        "a\u{7}b",
        "line\u{85}event 1 forged",
        "x\u{feff}",
    ] {
        let said = host
            .call(|id| ClientMessage::Chat {
                id,
                text: text.into(),
            })
            .await;
        assert_eq!(said, Err(ErrorCode::BadText), "{text:?}");
    }
    let long = "x".repeat(wire::MAX_CHAT_CHARS + 1);
    assert_eq!(
        host.call(|id| ClientMessage::Chat { id, text: long }).await,
        Err(ErrorCode::ChatTooLong)
    );
}

#[tokio::test]
async fn a_table_takes_only_so_much_chat_from_all_its_members_together() {
    let server = TestServer::start_with(ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e8,
        table_chat_per_minute: 1.0,
        ..ServerConfig::default()
    })
    .await;
    let (_, mut clients) = lobby(&server, 2, NO_MULLIGAN_CLOCK).await;
    let chat = |id| ClientMessage::Chat {
        id,
        text: "spam".into(),
    };
    // A burst of 20 lines is taken, split between two people; the 21st is refused.
    for i in 0..20 {
        let said = clients[i % 2].call(chat).await;
        assert!(
            matches!(said, Ok(ServerMessage::Ack { .. })),
            "line {i}: {said:?}"
        );
    }
    assert_eq!(clients[0].call(chat).await, Err(ErrorCode::RateLimited));
    assert_eq!(clients[1].call(chat).await, Err(ErrorCode::RateLimited));
}

fn kick(player: u16, ban: bool) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::Kick { id, player, ban }
}

async fn acked(client: &mut Client, build: impl FnOnce(u32) -> ClientMessage) {
    let answer = client.call(build).await;
    assert!(
        matches!(answer, Ok(ServerMessage::Ack { .. })),
        "{answer:?}"
    );
}

/// Every player keeps, in turn: play begins.
async fn keep_all(clients: &mut [Client]) {
    for player in deciding_order(&clients[0]) {
        keep(&mut clients[of(player)]).await;
    }
}

#[tokio::test]
async fn the_host_kicks_an_eliminated_player_and_anyone_after_the_game() {
    let server = server().await;
    let (table, mut clients) = lobby(&server, 3, NO_MULLIGAN_CLOCK).await;
    start(&mut clients).await;
    keep_all(&mut clients).await;
    // Player 2 concedes: out of the game, but still seated (he may watch from his seat).
    acked(&mut clients[2], |id| ClientMessage::Concede { id }).await;
    acked(&mut clients[0], kick(2, false)).await;
    assert_eq!(
        clients[2].closed_with().await,
        Some(close::POLICY_VIOLATION)
    );
    let (_, token) = clients[2].seat.unwrap();
    let mut back = server.client().await;
    assert_eq!(back.resume(table, token).await, Err(ErrorCode::BadToken));
    // Player 1 concedes: the game is over; the host can still remove him.
    acked(&mut clients[1], |id| ClientMessage::Concede { id }).await;
    event(&mut clients[0], |e| {
        matches!(e, Event::GameOver { .. }).then_some(())
    })
    .await;
    acked(&mut clients[0], kick(1, false)).await;
    assert_eq!(
        clients[1].closed_with().await,
        Some(close::POLICY_VIOLATION)
    );
    let (_, token) = clients[1].seat.unwrap();
    let mut back = server.client().await;
    assert_eq!(back.resume(table, token).await, Err(ErrorCode::BadToken));
    // Nobody left to kick but the host himself.
    assert_eq!(
        clients[0].call(kick(1, false)).await,
        Err(ErrorCode::UnknownPlayer)
    );
}

#[tokio::test]
async fn a_pause_ends_by_itself_after_the_tables_absence_limit() {
    // A host who pauses and then says nothing more cannot hold the table still forever.
    let server = server().await;
    let clocks = Clocks {
        absence_limit_secs: 1,
        ..NO_MULLIGAN_CLOCK
    };
    let (_, mut clients) = lobby(&server, 2, clocks).await;
    start(&mut clients).await;
    acked(&mut clients[0], |id| ClientMessage::Pause {
        id,
        paused: true,
    })
    .await;
    assert_eq!(
        clients[0].call(|id| ClientMessage::Keep { id }).await,
        Err(ErrorCode::TablePaused)
    );
    let paused = event(&mut clients[1], |e| match e {
        Event::TablePaused { paused } => (!paused).then_some(*paused),
        _ => None,
    })
    .await;
    assert!(!paused);
    assert!(!clients[1].view.as_ref().unwrap().paused);
    keep(&mut clients[0]).await;
}

/// A server in this test's runtime on a chosen journal directory, so that it can be restarted.
struct Restartable {
    addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Restartable {
    async fn start(data: &std::path::Path) -> Self {
        let config = ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data.to_owned(),
            durability: grand_melee_server::journal::Durability::Normal,
            rate_limit: 1e6,
            rate_burst: 1e6,
            chat_per_minute: 1e8,
            ..ServerConfig::default()
        };
        let server = grand_melee_server::Server::bind(config).await.unwrap();
        let addr = server.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Self { addr, stop, task }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(grand_melee_e2e::PATIENCE, self.task)
            .await
            .unwrap()
            .unwrap();
    }
}

#[tokio::test]
async fn a_kick_during_mulligans_a_ban_and_mutes_survive_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let server = Restartable::start(data.path()).await;
    // Player i connects from 127.0.0.(i+1): one address each.
    let address = |player: usize| IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + player as u8));
    let mut clients = vec![Client::connected_from(server.addr, address(0)).await];
    let table = create(&mut clients[0], NO_MULLIGAN_CLOCK).await;
    for player in 1..4 {
        clients.push(Client::connected_from(server.addr, address(player)).await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        client.join(table, &format!("player {i}")).await.unwrap();
    }
    start(&mut clients).await;
    let order = deciding_order(&clients[0]);
    keep(&mut clients[0]).await;
    // The host bans the third decider (not due yet) and mutes the second and the spectators.
    let (muted, banned) = (order[1], order[2]);
    acked(&mut clients[0], kick(banned, true)).await;
    acked(&mut clients[0], move |id| ClientMessage::Mute {
        id,
        player: Some(muted),
        muted: true,
    })
    .await;
    acked(&mut clients[0], |id| ClientMessage::Mute {
        id,
        player: None,
        muted: true,
    })
    .await;
    let tokens: Vec<Option<grand_melee_protocol::SeatToken>> = clients
        .iter()
        .map(|c| c.seat.map(|(_, token)| token))
        .collect();
    drop(clients);
    server.stop().await;

    let server = Restartable::start(data.path()).await;
    let mut clients = Vec::new();
    for (player, token) in tokens.iter().enumerate() {
        let mut client = Client::connected_from(server.addr, address(player)).await;
        if of(banned) != player {
            assert_eq!(
                client.resume(table, token.unwrap()).await,
                Ok(player as u16)
            );
        }
        clients.push(client);
    }
    // The ban: his address is refused, the others' are not.
    let watch = |id| ClientMessage::Watch {
        id,
        table,
        password: None,
    };
    assert_eq!(
        clients[of(banned)].call(watch).await,
        Err(ErrorCode::Banned)
    );
    let mut stranger = Client::connected_from(server.addr, address(9)).await;
    stranger.watch(table).await;
    // The mutes.
    let view = clients[0].fresh_snapshot().await;
    assert!(view.spectators_muted);
    assert!(view.player(muted).unwrap().muted);
    let chat = |id| ClientMessage::Chat {
        id,
        text: "hello".into(),
    };
    assert_eq!(clients[of(muted)].call(chat).await, Err(ErrorCode::Muted));
    assert_eq!(stranger.call(chat).await, Err(ErrorCode::Muted));
    // The kick: the banned player's decision is taken at once when it comes up, and he is out
    // as play begins.
    keep(&mut clients[of(muted)]).await;
    assert_eq!(kept(&mut clients[0], banned).await, KeepReason::Ruling);
    keep(&mut clients[of(order[3])]).await;
    let (out, cause) = event(&mut clients[0], |e| match e {
        Event::Eliminated { players, cause } => Some((players.clone(), *cause)),
        _ => None,
    })
    .await;
    assert_eq!(out, vec![banned]);
    assert_eq!(cause, wire::EliminationCause::Ruling);
    let view = clients[0].fresh_snapshot().await;
    assert_eq!(view.stage, StageName::Playing);
    drop(clients);
    drop(stranger);
    server.stop().await;
}
