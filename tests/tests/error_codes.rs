//! Every (request, error code) pair `protocol/src/errors_of.rs` names a test of this file for is
//! answered through a socket by that test: each test records the pairs it saw answered and
//! compares them with the table's. `every_pair_is_driven` lists the pairs no test drives yet.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::error_codes::Seen;
use grand_melee_e2e::magic_tech as mt;
use grand_melee_e2e::nats::NatsCluster;
use grand_melee_e2e::unthrottled;
use grand_melee_e2e::{
    Client, CreateTable, TestLeague, TestServer, concede_in_order, keep_all_hands, started_game,
};
use grand_melee_protocol::errors_of::{self, Coverage};
use grand_melee_protocol::league::{
    Alliance, DeckSpec, LeagueId, MemberToken, Purchase, Rarity, Remedy,
};
use grand_melee_protocol::mountain_magic::day::Day;
use grand_melee_protocol::mountain_magic_types::MountainMagicSettings;
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, GameKind, OrganiserSecret, PROTOCOL_VERSION, Peer,
    Phase, PlayerView, RuleSet, Ruling, SeatToken, SeatingMode, ServerMessage, StageName, TableId,
    TurnStateName, close, examples,
};
use grand_melee_server::ServerConfig;

fn join(table: TableId, name: &str, password: Option<&str>) -> impl FnOnce(u32) -> ClientMessage {
    let (name, password) = (name.to_owned(), password.map(str::to_owned));
    move |id| ClientMessage::Join {
        id,
        table,
        name,
        password,
        entropy: None,
        member_token: None,
    }
}

fn start(first_player: Option<u16>, seating: SeatingMode) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::Start {
        id,
        first_player,
        seating,
        order: Vec::new(),
    }
}

#[tokio::test]
async fn session_requests() {
    let server = TestServer::start().await;
    let mut seen = Seen::default();
    let mut fresh = Client::connect(server.addr).await;
    seen.expect(
        &mut fresh,
        |id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 10,
        },
        ErrorCode::HelloRequired,
    )
    .await;
    seen.expect(
        &mut fresh,
        |id| ClientMessage::Hello {
            id,
            protocol: PROTOCOL_VERSION + 1,
            client: "e2e".into(),
        },
        ErrorCode::UnsupportedVersion,
    )
    .await;
    let mut client = server.client().await;
    seen.expect(
        &mut client,
        |id| ClientMessage::Hello {
            id,
            protocol: PROTOCOL_VERSION,
            client: "e2e".into(),
        },
        ErrorCode::BadMessage,
    )
    .await;
    seen.expect(
        &mut client,
        |id| ClientMessage::Leave { id },
        ErrorCode::NotInTable,
    )
    .await;
    for (settings, code) in [
        (CreateTable::new("", 4), ErrorCode::BadName),
        (CreateTable::new("a\u{7}b", 4), ErrorCode::BadText),
        (CreateTable::new("t", 41), ErrorCode::BadSettings),
    ] {
        seen.expect(&mut client, |id| settings.request(id), code)
            .await;
    }
    let nowhere = TableId::new_random();
    seen.expect(
        &mut client,
        join(nowhere, "a", None),
        ErrorCode::UnknownTable,
    )
    .await;
    seen.expect(
        &mut client,
        |id| ClientMessage::Watch {
            id,
            table: nowhere,
            password: None,
        },
        ErrorCode::UnknownTable,
    )
    .await;
    seen.expect(
        &mut client,
        |id| ClientMessage::Resume {
            id,
            table: nowhere,
            token: SeatToken::new_random(),
        },
        ErrorCode::UnknownTable,
    )
    .await;
    seen.expect(
        &mut client,
        |id| ClientMessage::GetReplay {
            id,
            table: nowhere,
            from_seq: 1,
            password: None,
            token: None,
        },
        ErrorCode::UnknownReplay,
    )
    .await;
    // The request limit: a burst past it is refused (the connection is not closed at once).
    let mut flooder = server.client().await;
    let ids: Vec<u32> = (0..400)
        .map(|_| flooder.send(|id| ClientMessage::Snapshot { id }))
        .collect();
    let mut limited = false;
    for id in ids {
        if flooder.reply(id).await == Err(ErrorCode::RateLimited) {
            limited = true;
            break;
        }
    }
    assert!(limited, "400 requests at once were never rate_limited");
    seen.saw("any request", ErrorCode::RateLimited);
    seen.check("session_requests");
    drop((fresh, client, flooder));
    server.shutdown().await;
}

#[tokio::test]
async fn seats_and_lobby() {
    let server = TestServer::start().await;
    let mut seen = Seen::default();
    let mut host = server.client().await;
    let table = host.create_table("lobby", 2, 1).await;
    host.join(table, "Alice").await.unwrap();
    seen.expect(
        &mut host,
        join(table, "Bob", None),
        ErrorCode::AlreadyInTable,
    )
    .await;
    seen.expect(
        &mut host,
        |id| ClientMessage::Watch {
            id,
            table,
            password: None,
        },
        ErrorCode::AlreadyInTable,
    )
    .await;
    seen.expect(
        &mut host,
        |id| ClientMessage::Resume {
            id,
            table,
            token: SeatToken::new_random(),
        },
        ErrorCode::AlreadyInTable,
    )
    .await;
    let mut other = server.client().await;
    for (name, code) in [
        ("", ErrorCode::BadName),
        ("B\u{7}b", ErrorCode::BadText),
        ("alice", ErrorCode::NameTaken),
        ("host", ErrorCode::ReservedName),
        ("\u{410}lice", ErrorCode::ConfusableName),
    ] {
        seen.expect(&mut other, join(table, name, None), code).await;
    }
    seen.expect(
        &mut other,
        |id| ClientMessage::Resume {
            id,
            table,
            token: SeatToken::new_random(),
        },
        ErrorCode::BadToken,
    )
    .await;
    seen.expect(
        &mut host,
        start(None, SeatingMode::Random),
        ErrorCode::NotEnoughPlayers,
    )
    .await;
    for (build, code) in [
        (
            (|id| ClientMessage::Mulligan { id }) as fn(u32) -> ClientMessage,
            ErrorCode::NotMulliganing,
        ),
        (|id| ClientMessage::Keep { id }, ErrorCode::NotMulliganing),
        (
            |id| ClientMessage::SetPhase {
                id,
                phase: Phase::Combat,
            },
            ErrorCode::NotPlaying,
        ),
        (|id| ClientMessage::EndTurn { id }, ErrorCode::NotPlaying),
        (|id| ClientMessage::Concede { id }, ErrorCode::NotPlaying),
        (
            |id| ClientMessage::ChooseFirst { id, player: 0 },
            ErrorCode::NotDecider,
        ),
        (
            |id| ClientMessage::Chat {
                id,
                text: String::new(),
            },
            ErrorCode::ChatTooLong,
        ),
        (
            |id| ClientMessage::Chat {
                id,
                text: "\u{7}".into(),
            },
            ErrorCode::BadText,
        ),
    ] {
        seen.expect(&mut host, build, code).await;
    }
    other.join(table, "Bob").await.unwrap();
    let mut third = server.client().await;
    seen.expect(&mut third, join(table, "Carol", None), ErrorCode::TableFull)
        .await;
    seen.expect(
        &mut other,
        start(None, SeatingMode::Random),
        ErrorCode::NotHost,
    )
    .await;
    seen.expect(
        &mut host,
        start(None, SeatingMode::Arranged),
        ErrorCode::BadSeating,
    )
    .await;
    seen.expect(
        &mut host,
        start(Some(99), SeatingMode::Random),
        ErrorCode::UnknownPlayer,
    )
    .await;
    let started = host.call(start(None, SeatingMode::Random)).await;
    assert!(started.is_ok(), "{started:?}");
    seen.expect(
        &mut host,
        start(None, SeatingMode::Random),
        ErrorCode::GameStarted,
    )
    .await;
    seen.expect(
        &mut third,
        join(table, "Carol", None),
        ErrorCode::GameStarted,
    )
    .await;
    // A table with a password, and one nobody may watch.
    let guarded = third
        .create(
            CreateTable::new("guarded", 4)
                .password("secret")
                .max_spectators(0),
        )
        .await
        .unwrap();
    seen.expect(
        &mut third,
        join(guarded, "Carol", Some("wrong")),
        ErrorCode::WrongPassword,
    )
    .await;
    seen.expect(
        &mut third,
        |id| ClientMessage::Watch {
            id,
            table: guarded,
            password: Some("secret".into()),
        },
        ErrorCode::SpectatorsFull,
    )
    .await;
    let locked = third
        .create(CreateTable::new("locked", 4).password("secret"))
        .await
        .unwrap();
    seen.expect(
        &mut third,
        |id| ClientMessage::Watch {
            id,
            table: locked,
            password: Some("wrong".into()),
        },
        ErrorCode::WrongPassword,
    )
    .await;
    seen.check("seats_and_lobby");
    drop((host, other, third));
    server.shutdown().await;
}

#[tokio::test]
async fn grand_melee_play() {
    let server = TestServer::start().await;
    let mut seen = Seen::default();
    let (_table, mut clients) = started_game(&server, 2, 7).await;
    let running = clients[0].running_players();
    let active = usize::from(running[0]);
    let idle = 1 - active;
    seen.expect(
        &mut clients[idle],
        |id| ClientMessage::SetPhase {
            id,
            phase: Phase::Combat,
        },
        ErrorCode::NotYourTurn,
    )
    .await;
    let me = &mut clients[active];
    let phase = |phase| move |id| ClientMessage::SetPhase { id, phase };
    let moved = me.call(phase(Phase::PrecombatMain)).await;
    assert!(moved.is_ok(), "{moved:?}");
    seen.expect(me, phase(Phase::PrecombatMain), ErrorCode::SamePhase)
        .await;
    let attack = |target, damage| {
        move |id| ClientMessage::Attack {
            id,
            target,
            damage,
            poison: 0,
        }
    };
    let other = u16::try_from(idle).unwrap();
    seen.expect(me, attack(other, 1), ErrorCode::NotCombatPhase)
        .await;
    let moved = me.call(phase(Phase::Combat)).await;
    assert!(moved.is_ok(), "{moved:?}");
    let myself = u16::try_from(active).unwrap();
    seen.expect(me, attack(myself, 1), ErrorCode::SelfAttack)
        .await;
    seen.expect(me, attack(99, 1), ErrorCode::UnknownPlayer)
        .await;
    seen.expect(me, attack(other, 2_000_000), ErrorCode::BadAmount)
        .await;
    for (build, code) in [
        (
            (|id| ClientMessage::DealDamage {
                id,
                target: 99,
                amount: 1,
            }) as fn(u32) -> ClientMessage,
            ErrorCode::UnknownPlayer,
        ),
        (
            |id| ClientMessage::DealDamage {
                id,
                target: 0,
                amount: 0,
            },
            ErrorCode::BadAmount,
        ),
        (
            |id| ClientMessage::ChangeLife { id, delta: 0 },
            ErrorCode::BadAmount,
        ),
        (
            |id| ClientMessage::ChangePoison { id, delta: 0 },
            ErrorCode::BadAmount,
        ),
        (
            |id| ClientMessage::AttackRoll {
                id,
                defender: 0,
                attacker_power: 1,
                blocker_powers: Vec::new(),
            },
            ErrorCode::DiceOff,
        ),
        (
            |id| ClientMessage::CounterRoll {
                id,
                attacker: 0,
                blocker_power: 1,
                attacker_power: 1,
            },
            ErrorCode::DiceOff,
        ),
    ] {
        seen.expect(me, build, code).await;
    }
    // Player 0 is the host (the first to join): the other may not rule.
    seen.expect(
        &mut clients[1],
        |id| ClientMessage::Ruling {
            id,
            ruling: Ruling::EndTurn { player: 0 },
        },
        ErrorCode::NotHost,
    )
    .await;
    seen.check("grand_melee_play");
    drop(clients);
    server.shutdown().await;
}

#[tokio::test]
async fn host_requests() {
    let server = TestServer::start().await;
    let mut seen = Seen::default();
    let mut lobby = server.client().await;
    let waiting = lobby.create_table("waiting", 4, 3).await;
    lobby.join(waiting, "Dana").await.unwrap();
    seen.expect(
        &mut lobby,
        |id| ClientMessage::Adjourn { id },
        ErrorCode::NotPlaying,
    )
    .await;
    let (_table, mut clients) = started_game(&server, 2, 9).await;
    for build in [
        (|id| ClientMessage::Pause { id, paused: true }) as fn(u32) -> ClientMessage,
        |id| ClientMessage::Adjourn { id },
        |id| ClientMessage::Kick {
            id,
            player: 0,
            ban: false,
        },
        |id| ClientMessage::Mute {
            id,
            player: Some(0),
            muted: true,
        },
        |id| ClientMessage::TransferHost { id, player: 1 },
        |id| ClientMessage::AnswerCall {
            id,
            player: Some(0),
        },
    ] {
        seen.expect(&mut clients[1], build, ErrorCode::NotHost)
            .await;
    }
    let host = &mut clients[0];
    for (build, code) in [
        (
            (|id| ClientMessage::Kick {
                id,
                player: 99,
                ban: false,
            }) as fn(u32) -> ClientMessage,
            ErrorCode::UnknownPlayer,
        ),
        (
            |id| ClientMessage::Mute {
                id,
                player: Some(99),
                muted: true,
            },
            ErrorCode::UnknownPlayer,
        ),
        (
            |id| ClientMessage::TransferHost { id, player: 99 },
            ErrorCode::UnknownPlayer,
        ),
        (
            |id| ClientMessage::ResumeGame { id },
            ErrorCode::NotAdjourned,
        ),
        (
            |id| ClientMessage::AnswerCall { id, player: None },
            ErrorCode::NoOpenCall,
        ),
    ] {
        seen.expect(host, build, code).await;
    }
    let muted = host
        .call(|id| ClientMessage::Mute {
            id,
            player: Some(1),
            muted: true,
        })
        .await;
    assert!(muted.is_ok(), "{muted:?}");
    seen.expect(
        &mut clients[1],
        |id| ClientMessage::Chat {
            id,
            text: "hello".into(),
        },
        ErrorCode::Muted,
    )
    .await;
    seen.check("host_requests");
    drop((lobby, clients));
    server.shutdown().await;
}

/// `message`, numbered by the client that sends it.
fn numbered(message: &ClientMessage) -> impl FnOnce(u32) -> ClientMessage {
    let mut message = message.clone();
    move |id| {
        *message.id_mut() = id;
        message
    }
}

/// One request of every kind a table's game decides (each `ruling` too): every request the
/// session hands to the game as a command, of every game. The session refuses each of them the
/// same way before any game sees it (`not_a_player`, `table_adjourned`, `table_paused`), so one
/// Grand Melee table answers them all.
fn every_game_request() -> Vec<ClientMessage> {
    let requests: Vec<ClientMessage> = examples::client()
        .into_iter()
        .filter(|request| request.command().is_some())
        .collect();
    // Every request the table gives the game's three codes is among them.
    for errors in errors_of::REQUESTS {
        let game = errors
            .codes
            .iter()
            .any(|&(code, _)| code == ErrorCode::TablePaused);
        assert_eq!(
            game,
            requests.iter().any(|r| r.name() == errors.request),
            "{}",
            errors.request
        );
    }
    requests
}

/// Everyone catches up with the newest event any of them has seen.
async fn catch_up(clients: &mut [Client]) {
    let seq = clients
        .iter()
        .filter_map(|c| c.view.as_ref().map(|v| v.seq))
        .max()
        .unwrap_or(0);
    for client in clients.iter_mut() {
        client.catch_up(seq).await;
    }
}

/// `request` is accepted (`ack`); everyone catches up with it.
async fn accepted(clients: &mut [Client], who: usize, request: impl FnOnce(u32) -> ClientMessage) {
    let answer = clients[who].call(request).await;
    assert!(
        matches!(answer, Ok(ServerMessage::Ack { .. })),
        "{answer:?}"
    );
    catch_up(clients).await;
}

/// The session's refusals before a table's game sees a request: a spectator's request
/// (`not_a_player`, for every request only a seated player may make), every game request at a
/// paused table (`table_paused`) and at an adjourned one (`table_adjourned`, with the host's
/// powers an adjourned game refuses), the asks to resume it, and an address holding as many
/// adjourned games as allowed.
#[tokio::test]
async fn game_requests_before_their_game() {
    let server = TestServer::start_with(ServerConfig {
        max_adjourned_per_ip: 1,
        ..unthrottled()
    })
    .await;
    let mut seen = Seen::default();
    let requests = every_game_request();
    let (table, mut clients) = started_game(&server, 3, 11).await;
    let mut watcher = server.client().await;
    watcher.watch(table).await;
    let only_players = [
        ClientMessage::Pause {
            id: 0,
            paused: true,
        },
        ClientMessage::Adjourn { id: 0 },
        ClientMessage::ResumeGame { id: 0 },
        ClientMessage::Kick {
            id: 0,
            player: 1,
            ban: false,
        },
        ClientMessage::TransferHost { id: 0, player: 1 },
        ClientMessage::Mute {
            id: 0,
            player: Some(1),
            muted: true,
        },
        ClientMessage::CallHost {
            id: 0,
            reason: "a ruling, please".into(),
        },
        ClientMessage::AnswerCall {
            id: 0,
            player: None,
        },
        ClientMessage::Camera {
            id: 0,
            on: true,
            stream: true,
            stay: false,
        },
        ClientMessage::Signal {
            id: 0,
            to: Peer::Player(0),
            payload: "{}".into(),
        },
    ];
    for request in requests.iter().chain(&only_players) {
        seen.expect(&mut watcher, numbered(request), ErrorCode::NotAPlayer)
            .await;
    }

    // Paused: no game request goes through, the host's neither.
    accepted(&mut clients, 0, |id| ClientMessage::Pause {
        id,
        paused: true,
    })
    .await;
    for request in &requests {
        seen.expect(&mut clients[0], numbered(request), ErrorCode::TablePaused)
            .await;
    }
    accepted(&mut clients, 0, |id| ClientMessage::Pause {
        id,
        paused: false,
    })
    .await;

    // Player 2 leaves the game; the host adjourns it.
    accepted(&mut clients, 2, |id| ClientMessage::Concede { id }).await;
    accepted(&mut clients, 0, |id| ClientMessage::Adjourn { id }).await;
    for request in &requests {
        seen.expect(
            &mut clients[0],
            numbered(request),
            ErrorCode::TableAdjourned,
        )
        .await;
    }
    for build in [
        (|id| ClientMessage::Adjourn { id }) as fn(u32) -> ClientMessage,
        |id| ClientMessage::Pause { id, paused: true },
        |id| ClientMessage::Kick {
            id,
            player: 1,
            ban: false,
        },
    ] {
        seen.expect(&mut clients[0], build, ErrorCode::TableAdjourned)
            .await;
    }
    seen.expect(
        &mut clients[2],
        |id| ClientMessage::ResumeGame { id },
        ErrorCode::Eliminated,
    )
    .await;
    // Two players are left: one ask is not the majority, and a second ask of the same player
    // is refused.
    accepted(&mut clients, 1, |id| ClientMessage::ResumeGame { id }).await;
    assert!(clients[1].view.as_ref().unwrap().adjourned);
    seen.expect(
        &mut clients[1],
        |id| ClientMessage::ResumeGame { id },
        ErrorCode::AlreadyAsked,
    )
    .await;

    // The same address adjourns a second game: past `--max-adjourned-per-ip`.
    let (_, mut second) = started_game(&server, 2, 12).await;
    seen.expect(
        &mut second[0],
        |id| ClientMessage::Adjourn { id },
        ErrorCode::TooManyTables,
    )
    .await;
    assert!(!second[0].fresh_snapshot().await.adjourned);
    seen.check("game_requests_before_their_game");
    drop((clients, watcher, second));
    server.shutdown().await;
}

/// A table with `settings` and a seat for each of `seats` new clients: client `i` is player
/// `i`, client 0 the host.
async fn seated(server: &TestServer, settings: CreateTable, seats: u8) -> Vec<Client> {
    let mut host = server.client().await;
    let table = host.create(settings).await.unwrap();
    let mut clients = vec![host];
    for _ in 1..seats {
        clients.push(server.client().await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        let player = client.join(table, &format!("player {i}")).await.unwrap();
        assert_eq!(usize::from(player), i);
    }
    catch_up(&mut clients).await;
    clients
}

/// The host starts the game (random seating); everyone catches up.
async fn start_game(clients: &mut [Client]) {
    accepted(clients, 0, start(None, SeatingMode::Random)).await;
}

/// The mirrored view of a player.
fn player_view(client: &Client, player: u16) -> PlayerView {
    let view = client.view.as_ref().unwrap();
    view.players
        .iter()
        .find(|p| p.player == player)
        .unwrap()
        .clone()
}

/// A Grand Melee game's own refusals, as its rules decide them: before the start, during the
/// mulligans, out of turn, out of combat, out of range, not to the left (CR 807), a player out of
/// the game acting or targeted, the counter-strikes of combat with dice, and the host's rulings.
#[tokio::test]
async fn grand_melee_rules() {
    let server = TestServer::start_with(unthrottled()).await;
    let mut seen = Seen::default();
    // Four players, spells reaching one seat either way: the one opposite is out of range.
    let settings = CreateTable::new("rules", 4)
        .spell_range(1)
        .combat_dice()
        .mulligan_clock_secs(0)
        .seed(21);
    let mut clients = seated(&server, settings, 4).await;

    // In the lobby nobody plays yet.
    for (build, code) in [
        (
            (|id| ClientMessage::Attack {
                id,
                target: 1,
                damage: 1,
                poison: 0,
            }) as fn(u32) -> ClientMessage,
            ErrorCode::NotPlaying,
        ),
        (
            |id| ClientMessage::DealDamage {
                id,
                target: 1,
                amount: 1,
            },
            ErrorCode::NotPlaying,
        ),
        (
            |id| ClientMessage::ChangeLife { id, delta: -1 },
            ErrorCode::NotPlaying,
        ),
        (
            |id| ClientMessage::ChangePoison { id, delta: 1 },
            ErrorCode::NotPlaying,
        ),
        (|id| ClientMessage::ExtraTurn { id }, ErrorCode::NotPlaying),
        (
            |id| ClientMessage::AttackRoll {
                id,
                defender: 1,
                attacker_power: 1,
                blocker_powers: Vec::new(),
            },
            ErrorCode::NotPlaying,
        ),
        (
            |id| ClientMessage::CounterRoll {
                id,
                attacker: 1,
                blocker_power: 1,
                attacker_power: 1,
            },
            ErrorCode::NotPlaying,
        ),
        (
            |id| ClientMessage::Ruling {
                id,
                ruling: Ruling::EndTurn { player: 1 },
            },
            ErrorCode::NotPlaying,
        ),
    ] {
        seen.expect(&mut clients[0], build, code).await;
    }

    // The mulligans: one decision at a time, and a hand cannot shrink below nothing.
    start_game(&mut clients).await;
    seen.expect(
        &mut clients[1],
        |id| ClientMessage::ChooseFirst { id, player: 0 },
        ErrorCode::GameStarted,
    )
    .await;
    let deciders = clients[0].view.as_ref().unwrap().mulligan_deciders.clone();
    let waiting = (0..4u16).find(|p| !deciders.contains(p)).unwrap();
    let decider = deciders[0];
    for build in [
        (|id| ClientMessage::Mulligan { id }) as fn(u32) -> ClientMessage,
        |id| ClientMessage::Keep { id },
    ] {
        seen.expect(
            &mut clients[usize::from(waiting)],
            build,
            ErrorCode::NotYourDecision,
        )
        .await;
    }
    seen.expect(
        &mut clients[0],
        |id| ClientMessage::Ruling {
            id,
            ruling: Ruling::Keep { player: waiting },
        },
        ErrorCode::NotYourDecision,
    )
    .await;
    let d = usize::from(decider);
    for _ in 0..=wire::DEFAULT_HAND_SIZE {
        if player_view(&clients[d], decider).hand_size == 0 {
            break;
        }
        accepted(&mut clients, d, |id| ClientMessage::Mulligan { id }).await;
    }
    assert_eq!(player_view(&clients[d], decider).hand_size, 0);
    seen.expect(
        &mut clients[d],
        |id| ClientMessage::Mulligan { id },
        ErrorCode::NoCardsLeft,
    )
    .await;
    keep_all_hands(&mut clients).await;
    seen.expect(
        &mut clients[0],
        |id| ClientMessage::Ruling {
            id,
            ruling: Ruling::Keep { player: 0 },
        },
        ErrorCode::NotMulliganing,
    )
    .await;

    // Play: one turn runs (4 players, range 1).
    let running = clients[0].running_players();
    assert_eq!(running.len(), 1, "{running:?}");
    let active = running[0];
    let a = usize::from(active);
    let me = player_view(&clients[a], active);
    let far = (0..4u16)
        .find(|p| *p != active && !me.may_target.contains(p))
        .unwrap();
    let near = *me.may_target.iter().find(|&&p| p != active).unwrap();
    let idle = (0..4u16).find(|p| *p != active).unwrap();
    let attack = |target: u16| {
        move |id| ClientMessage::Attack {
            id,
            target,
            damage: 1,
            poison: 0,
        }
    };
    let roll = |defender: u16, power: u32| {
        move |id| ClientMessage::AttackRoll {
            id,
            defender,
            attacker_power: power,
            blocker_powers: vec![1],
        }
    };
    for (build, code) in [
        (
            Box::new(|id| ClientMessage::EndTurn { id }) as Box<dyn FnOnce(u32) -> ClientMessage>,
            ErrorCode::NotYourTurn,
        ),
        (
            Box::new(|id| ClientMessage::ExtraTurn { id }),
            ErrorCode::NotYourTurn,
        ),
        (Box::new(attack(active)), ErrorCode::NotYourTurn),
        (Box::new(roll(active, 1)), ErrorCode::NotYourTurn),
        (
            Box::new(move |id| ClientMessage::CounterRoll {
                id,
                attacker: active,
                blocker_power: 1,
                attacker_power: 1,
            }),
            ErrorCode::NoCounterStrike,
        ),
    ] {
        seen.expect(&mut clients[usize::from(idle)], build, code)
            .await;
    }
    seen.expect(&mut clients[a], roll(near, 1), ErrorCode::NotCombatPhase)
        .await;
    accepted(&mut clients, a, |id| ClientMessage::SetPhase {
        id,
        phase: Phase::Combat,
    })
    .await;
    for (build, code) in [
        (
            Box::new(roll(active, 1)) as Box<dyn FnOnce(u32) -> ClientMessage>,
            ErrorCode::SelfAttack,
        ),
        (Box::new(roll(99, 1)), ErrorCode::UnknownPlayer),
        (Box::new(roll(far, 1)), ErrorCode::OutOfRange),
        (Box::new(roll(near, 2_000_000)), ErrorCode::BadAmount),
        (Box::new(attack(far)), ErrorCode::OutOfRange),
        (
            Box::new(move |id| ClientMessage::DealDamage {
                id,
                target: far,
                amount: 1,
            }),
            ErrorCode::OutOfRange,
        ),
    ] {
        seen.expect(&mut clients[a], build, code).await;
    }
    // A roll against a blocked attack gives the blocker a counter-strike; its powers are
    // bounded like the attack's.
    accepted(&mut clients, a, roll(near, 1)).await;
    seen.expect(
        &mut clients[usize::from(near)],
        move |id| ClientMessage::CounterRoll {
            id,
            attacker: active,
            blocker_power: 2_000_000,
            attacker_power: 1,
        },
        ErrorCode::BadAmount,
    )
    .await;

    // The host's rulings.
    let alive = clients[0]
        .view
        .as_ref()
        .unwrap()
        .players
        .iter()
        .filter(|p| p.status.is_alive())
        .map(|p| p.player)
        .collect::<Vec<_>>();
    let waiting = *alive.iter().find(|&&p| p != active).unwrap();
    for (ruling, code) in [
        (Ruling::Eliminate { players: vec![] }, ErrorCode::NoPlayers),
        (
            Ruling::Eliminate {
                players: vec![waiting, waiting],
            },
            ErrorCode::DuplicatePlayer,
        ),
        (Ruling::EndTurn { player: 99 }, ErrorCode::UnknownPlayer),
        (
            Ruling::EndTurn { player: waiting },
            ErrorCode::NoRunningTurn,
        ),
        (
            Ruling::SetLife {
                player: waiting,
                life: 2_000_000,
            },
            ErrorCode::BadAmount,
        ),
    ] {
        seen.expect(
            &mut clients[0],
            move |id| ClientMessage::Ruling { id, ruling },
            code,
        )
        .await;
    }

    // A player out of the game may do nothing, and nobody may target him.
    let gone = (1..4u16).find(|p| *p != active).unwrap();
    let g = usize::from(gone);
    accepted(&mut clients, g, |id| ClientMessage::Concede { id }).await;
    assert_eq!(clients[0].view.as_ref().unwrap().stage, StageName::Playing);
    for build in [
        Box::new(|id| ClientMessage::SetPhase {
            id,
            phase: Phase::Combat,
        }) as Box<dyn FnOnce(u32) -> ClientMessage>,
        Box::new(|id| ClientMessage::EndTurn { id }),
        Box::new(attack(active)),
        Box::new(move |id| ClientMessage::DealDamage {
            id,
            target: active,
            amount: 1,
        }),
        Box::new(|id| ClientMessage::ChangeLife { id, delta: -1 }),
        Box::new(|id| ClientMessage::ChangePoison { id, delta: 1 }),
        Box::new(|id| ClientMessage::Concede { id }),
        Box::new(|id| ClientMessage::ExtraTurn { id }),
        Box::new(roll(active, 1)),
        Box::new(move |id| ClientMessage::CounterRoll {
            id,
            attacker: active,
            blocker_power: 1,
            attacker_power: 1,
        }),
    ] {
        seen.expect(&mut clients[g], build, ErrorCode::Eliminated)
            .await;
    }
    // The active player still attacks (his turn may have moved on to another phase).
    let phase = clients[a]
        .view
        .as_ref()
        .unwrap()
        .turns
        .iter()
        .find(|t| t.player == active && t.state == TurnStateName::Running)
        .and_then(|t| t.phase);
    if phase != Some(Phase::Combat) {
        accepted(&mut clients, a, |id| ClientMessage::SetPhase {
            id,
            phase: Phase::Combat,
        })
        .await;
    }
    for (build, code) in [
        (
            Box::new(attack(gone)) as Box<dyn FnOnce(u32) -> ClientMessage>,
            ErrorCode::TargetEliminated,
        ),
        (Box::new(roll(gone, 1)), ErrorCode::TargetEliminated),
        (
            Box::new(move |id| ClientMessage::DealDamage {
                id,
                target: gone,
                amount: 1,
            }),
            ErrorCode::TargetEliminated,
        ),
    ] {
        seen.expect(&mut clients[a], build, code).await;
    }
    seen.expect(
        &mut clients[0],
        move |id| ClientMessage::Ruling {
            id,
            ruling: Ruling::EndTurn { player: gone },
        },
        ErrorCode::TargetEliminated,
    )
    .await;

    // CR 807: a player attacks only the opponent to his left.
    let settings = CreateTable::new("cr807", 3)
        .rules(RuleSet::Cr807)
        .spell_range(1)
        .combat_dice()
        .mulligan_clock_secs(0)
        .seed(22);
    let mut cr = seated(&server, settings, 3).await;
    start_game(&mut cr).await;
    keep_all_hands(&mut cr).await;
    let active = cr[0].running_players()[0];
    let a = usize::from(active);
    accepted(&mut cr, a, |id| ClientMessage::SetPhase {
        id,
        phase: Phase::Combat,
    })
    .await;
    let me = player_view(&cr[a], active);
    let right = *me
        .may_target
        .iter()
        .find(|&&p| p != active && !me.may_attack.contains(&p))
        .unwrap();
    seen.expect(&mut cr[a], attack(right), ErrorCode::NotAttackLeft)
        .await;
    seen.expect(&mut cr[a], roll(right, 1), ErrorCode::NotAttackLeft)
        .await;
    seen.check("grand_melee_rules");
    drop((clients, cr));
    server.shutdown().await;
}

/// A `join` of a league table with `token` as the member token (none: `None`).
fn sit(table: TableId, token: Option<MemberToken>) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::Join {
        id,
        table,
        name: "a member".into(),
        password: None,
        entropy: None,
        member_token: token,
    }
}

/// A deck registered as `name` (Mirage, with `expansion` as its expansion set).
fn deck(name: &str, expansion: &str) -> DeckSpec {
    DeckSpec {
        name: name.into(),
        alliance: Alliance::ALL[0],
        basic_set: "Mirage".into(),
        expansion_set: expansion.into(),
    }
}

/// A league member's requests, as the member with `token` (of `league`) would send them.
fn buy(
    league: LeagueId,
    token: MemberToken,
    purchase: Purchase,
) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::Buy {
        id,
        league,
        token,
        purchase,
        remove: 0,
    }
}

fn remedy(
    league: LeagueId,
    token: MemberToken,
    remedy: Remedy,
) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::TakeRemedy {
        id,
        league,
        token,
        remedy,
    }
}

fn register(
    league: LeagueId,
    token: MemberToken,
    deck: DeckSpec,
) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::RegisterDeck {
        id,
        league,
        token,
        deck,
    }
}

/// `count` copies of a common card named `card` from Mirage.
fn cards(card: &str, count: u8) -> Purchase {
    Purchase::Cards {
        rarity: Rarity::Common,
        count,
        gold: false,
        legend: false,
        card: Some(card.into()),
        set: Some("Mirage".into()),
    }
}

/// A league game of the members `members` (indices in join order) played to its end: the
/// players concede in the order of `losers` (indices too), the last one left wins.
async fn league_game(
    server: &TestServer,
    league: &TestLeague,
    members: &[usize],
    losers: &[usize],
) {
    let (_, mut clients) = league.started(server.addr, "a league game", members).await;
    let player = |index: usize| {
        let at = members.iter().position(|&m| m == index).unwrap();
        clients[at].seat.unwrap().0
    };
    let order: Vec<u16> = losers.iter().map(|&i| player(i)).collect();
    concede_in_order(&mut clients, &order).await;
}

/// The league requests' refusals, and a league table's: who may sit, the same opponent twice in
/// a row, who decides the first player, and a deck's purchases and remedy.
#[tokio::test]
async fn leagues_and_decks() {
    let server = TestServer::start_with(ServerConfig {
        table_creations_per_minute: 0,
        max_tables_per_ip: 0,
        wrong_passwords_per_minute: 0.0,
        password_checks_per_minute: 0.0,
        league_joins_per_minute: 0.0,
        max_league_members_per_ip: 0,
        ..unthrottled()
    })
    .await;
    let mut seen = Seen::default();
    let mut org = server.client().await;
    let create = |name: &str, password: Option<&str>| {
        let (name, password) = (name.to_owned(), password.map(str::to_owned));
        move |id| ClientMessage::CreateLeague { id, name, password }
    };
    for (name, password, code) in [
        ("", None, ErrorCode::BadName),
        ("a\u{7}b", None, ErrorCode::BadText),
        ("host", None, ErrorCode::ReservedName),
        ("Guarded", Some(""), ErrorCode::BadSettings),
    ] {
        seen.expect(&mut org, create(name, password), code).await;
    }
    let guarded = org.call(create("Guarded", Some("secret"))).await.unwrap();
    let ServerMessage::LeagueCreated {
        league: guarded, ..
    } = guarded
    else {
        panic!("{guarded:?}");
    };
    seen.expect(&mut org, create("guarded", None), ErrorCode::NameTaken)
        .await;
    let league = TestLeague::create(&mut org, "Club", &["Ann", "Bob", "Cid", "Dee"]).await;
    let (id, nowhere) = (league.id, LeagueId::new_random());
    let join_league = |league: LeagueId, name: &str, password: Option<&str>| {
        let (name, password) = (name.to_owned(), password.map(str::to_owned));
        move |id| ClientMessage::JoinLeague {
            id,
            league,
            name,
            password,
        }
    };
    for (league, name, password, code) in [
        (nowhere, "Eve", None, ErrorCode::UnknownLeague),
        (guarded, "Eve", Some("wrong"), ErrorCode::WrongPassword),
        (id, "", None, ErrorCode::BadName),
        (id, "E\u{7}ve", None, ErrorCode::BadText),
        (id, "host", None, ErrorCode::ReservedName),
        (id, "ann", None, ErrorCode::NameTaken),
        (id, "\u{410}nn", None, ErrorCode::ConfusableName),
    ] {
        seen.expect(&mut org, join_league(league, name, password), code)
            .await;
    }
    seen.expect(
        &mut org,
        |id| ClientMessage::GetLeague {
            id,
            league: nowhere,
            from: 0,
            limit: 10,
        },
        ErrorCode::UnknownLeague,
    )
    .await;
    for (league, member, code) in [
        (nowhere, 0, ErrorCode::UnknownLeague),
        (id, 99, ErrorCode::UnknownPlayer),
    ] {
        seen.expect(
            &mut org,
            move |id| ClientMessage::GetDeck { id, league, member },
            code,
        )
        .await;
    }

    // Decks: Eve has none yet.
    let (_, eve) = league.join(&mut org, "Eve").await;
    let ann = league.members[0].2;
    let stranger = MemberToken::new_random();
    for (league, token, spec, code) in [
        (
            nowhere,
            eve,
            deck("Eve's", "Visions"),
            ErrorCode::UnknownLeague,
        ),
        (
            id,
            stranger,
            deck("Eve's", "Visions"),
            ErrorCode::NotAMember,
        ),
        (id, ann, deck("Ann's", "Visions"), ErrorCode::DeckRegistered),
        (id, eve, deck("E\u{7}", "Visions"), ErrorCode::BadText),
        (id, eve, deck("Eve's", "mirage"), ErrorCode::BadPurchase),
    ] {
        seen.expect(&mut org, register(league, token, spec), code)
            .await;
    }
    let cid = league.members[2].2;
    for (league, token, purchase, code) in [
        (nowhere, cid, cards("Lion", 1), ErrorCode::UnknownLeague),
        (id, stranger, cards("Lion", 1), ErrorCode::NotAMember),
        (id, eve, cards("Lion", 1), ErrorCode::NoDeck),
        (id, cid, cards("Lion", 0), ErrorCode::BadPurchase),
        (id, cid, cards("Li\u{7}on", 1), ErrorCode::BadText),
        (id, cid, cards("Lion", 3), ErrorCode::PurchaseLimit),
        (
            id,
            cid,
            Purchase::BasicLands { count: 2 },
            ErrorCode::NotEnoughPoints,
        ),
    ] {
        seen.expect(&mut org, buy(league, token, purchase), code)
            .await;
    }
    for (league, token, code) in [
        (nowhere, cid, ErrorCode::UnknownLeague),
        (id, stranger, ErrorCode::NotAMember),
        (id, eve, ErrorCode::NoDeck),
        (id, cid, ErrorCode::NoRemedy),
    ] {
        seen.expect(&mut org, remedy(league, token, Remedy::SwapFive), code)
            .await;
    }

    // Five three-player games: Dee loses each (the losing streak), Bob is second, Ann wins.
    for _ in 0..5 {
        league_game(&server, &league, &[0, 1, 3], &[3, 1]).await;
    }
    let dee = league.members[3].2;
    for (spec, code) in [
        (deck("D\u{7}", "Visions"), ErrorCode::BadText),
        (deck("Dee's second", "Mirage"), ErrorCode::BadPurchase),
    ] {
        seen.expect(
            &mut org,
            remedy(id, dee, Remedy::NewDeck { deck: spec }),
            code,
        )
        .await;
    }
    // Ann has won points: two basic lands make 47 cards, and 24 more would pass 70.
    let bought = org
        .call(buy(id, ann, Purchase::BasicLands { count: 2 }))
        .await;
    assert!(
        matches!(bought, Ok(ServerMessage::Deck { .. })),
        "{bought:?}"
    );
    seen.expect(
        &mut org,
        buy(id, ann, Purchase::BasicLands { count: 24 }),
        ErrorCode::DeckFull,
    )
    .await;

    // League tables: who may sit.
    let table = league.table(&mut org, "lobby", 3).await;
    let mut other = server.client().await;
    for (token, code) in [
        (None, ErrorCode::LeagueSeat),
        (Some(stranger), ErrorCode::NotAMember),
        (Some(eve), ErrorCode::NoDeck),
    ] {
        seen.expect(&mut other, sit(table, token), code).await;
    }
    // Ann (far ahead) and Cid (far behind): Cid decides who plays first.
    let mut seats = vec![server.client().await, server.client().await];
    league.sit(&mut seats[0], table, 0).await.unwrap();
    league.sit(&mut seats[1], table, 2).await.unwrap();
    catch_up(&mut seats).await;
    let view = seats[0].view.clone().unwrap();
    let decider = view
        .first_decider
        .expect("a deck far enough behind decides");
    assert_eq!(Some(decider), seats[1].seat.map(|s| s.0));
    seen.expect(
        &mut seats[1],
        |id| ClientMessage::ChooseFirst { id, player: 99 },
        ErrorCode::UnknownPlayer,
    )
    .await;
    let host = seats[0].seat.unwrap().0;
    seen.expect(
        &mut seats[0],
        start(Some(host), SeatingMode::Random),
        ErrorCode::NotDecider,
    )
    .await;
    // The same member twice at one table.
    seen.expect(&mut other, sit(table, Some(ann)), ErrorCode::AlreadySeated)
        .await;
    for seat in &mut seats {
        let left = seat.call(|id| ClientMessage::Leave { id }).await;
        assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    }

    // Dee loses a two-player game to Ann: they may not meet again at once.
    league_game(&server, &league, &[3, 0], &[3]).await;
    let duel = league.table(&mut org, "rematch", 2).await;
    league.sit(&mut seats[0], duel, 3).await.unwrap();
    seen.expect(&mut seats[1], sit(duel, Some(ann)), ErrorCode::SameOpponent)
        .await;
    // At three seats they may sit together, but the game would be a duel of the same two.
    league.sit(&mut seats[1], table, 0).await.unwrap();
    seen.expect(&mut other, sit(table, Some(dee)), ErrorCode::AlreadySeated)
        .await;
    let left = seats[0].call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    league.sit(&mut seats[0], table, 3).await.unwrap();
    seen.expect(
        &mut seats[1],
        start(None, SeatingMode::Random),
        ErrorCode::SameOpponent,
    )
    .await;
    seen.check("leagues_and_decks");
    drop((org, other, seats));
    server.shutdown().await;
}

/// A league takes `MAX_LEAGUE_MEMBERS` members: the last place is taken, and one more is
/// `league_full` (not `server_busy`: waiting would not help), with nothing written.
#[tokio::test]
async fn a_full_league() {
    let server = TestServer::start_with(ServerConfig {
        league_joins_per_minute: 0.0,
        max_league_members_per_ip: 0,
        // A thousand joins, each its own commit: without an fsync each.
        durability: grand_melee_server::durability::Durability::Normal,
        ..unthrottled()
    })
    .await;
    let mut seen = Seen::default();
    let mut org = server.client().await;
    let league = TestLeague::create(&mut org, "Crowd", &["Ann"]).await;
    let join = |index: u32| {
        let league = league.id;
        move |id| ClientMessage::JoinLeague {
            id,
            league,
            name: format!("Member {index}"),
            password: None,
        }
    };
    // The places left, all asked for at once.
    let most = grand_melee_protocol::MAX_LEAGUE_MEMBERS;
    let ids: Vec<u32> = (1..most).map(|index| org.send(join(index))).collect();
    for id in ids {
        let answer = org.reply(id).await;
        assert!(
            matches!(answer, Ok(ServerMessage::LeagueJoined { .. })),
            "{answer:?}"
        );
    }
    seen.expect(&mut org, join(most), ErrorCode::LeagueFull)
        .await;
    let members = |answer: Result<ServerMessage, ErrorCode>| match answer {
        Ok(ServerMessage::League { total_members, .. }) => total_members,
        other => panic!("{other:?}"),
    };
    let get = |league: LeagueId| {
        move |id| ClientMessage::GetLeague {
            id,
            league,
            from: 0,
            limit: 10,
        }
    };
    let total = members(org.call(get(league.id)).await);
    assert_eq!(total, most, "the league's members after the refusal");
    seen.check("a_full_league");
    drop(org);
    server.shutdown().await;
}

/// Calls for the host and the cameras' requests: a reason that is no line of chat, a camera
/// display asked for by a player, with another token than the host's or centred on nobody, and
/// signals too large or to nobody linked.
#[tokio::test]
async fn cameras_and_calls() {
    let server = TestServer::start_with(unthrottled()).await;
    let mut seen = Seen::default();
    let (table, mut clients) = started_game(&server, 2, 31).await;
    let mut display = server.client().await;
    display.watch(table).await;
    let call = |reason: String| move |id| ClientMessage::CallHost { id, reason };
    for (reason, code) in [
        ("\u{7}".to_owned(), ErrorCode::BadText),
        (String::new(), ErrorCode::ChatTooLong),
        (
            "x".repeat(wire::MAX_CALL_REASON_CHARS + 1),
            ErrorCode::ChatTooLong,
        ),
    ] {
        seen.expect(&mut clients[1], call(reason), code).await;
    }
    let host_token = clients[0].seat.unwrap().1;
    let show = |token: SeatToken, center: Option<u16>| {
        move |id| ClientMessage::CameraDisplay { id, token, center }
    };
    seen.expect(
        &mut clients[0],
        show(host_token, Some(0)),
        ErrorCode::NotWatching,
    )
    .await;
    let players = clients[1].seat.unwrap().1;
    seen.expect(&mut display, show(players, Some(0)), ErrorCode::NotHost)
        .await;
    seen.expect(
        &mut display,
        show(host_token, Some(99)),
        ErrorCode::UnknownPlayer,
    )
    .await;
    let signal = |payload: String| {
        move |id| ClientMessage::Signal {
            id,
            to: Peer::Player(1),
            payload,
        }
    };
    seen.expect(
        &mut clients[0],
        signal("x".repeat(wire::MAX_SIGNAL_BYTES + 1)),
        ErrorCode::SignalTooLarge,
    )
    .await;
    // No camera is on: nobody is linked.
    seen.expect(&mut clients[0], signal("{}".into()), ErrorCode::NotLinked)
        .await;
    seen.check("cameras_and_calls");
    drop((clients, display));
    server.shutdown().await;
}

/// What requests every game shares answer at a Magic Tech table: a start before the decks are
/// declared, and the end of a turn while a mission waits for its blocks.
#[tokio::test]
async fn magic_tech_tables() {
    let server = TestServer::start_with(unthrottled()).await;
    let mut seen = Seen::default();
    let mut undeclared = seated(&server, mt::settings(), 2).await;
    seen.expect(
        &mut undeclared[0],
        start(None, SeatingMode::Random),
        ErrorCode::NoDeckSize,
    )
    .await;
    // A random legal game (the same every run) until a mission is launched.
    let (_, mut clients) = mt::started(server.addr, [40, 30]).await;
    keep_all_hands(&mut clients).await;
    let mut dice = mt::Dice::new(4);
    let mission = |clients: &[Client]| {
        let view = clients[0].view.as_ref().unwrap();
        view.magic_tech.as_ref().unwrap().mission.clone()
    };
    let mut moves = 0;
    while mission(&clients).is_none() {
        assert!(moves < 2000, "no mission in {moves} moves");
        assert_eq!(
            mt::play(&mut clients, &mut dice, 1).await,
            1,
            "the game ended"
        );
        moves += 1;
    }
    let attacker = mission(&clients).unwrap().player;
    let client = clients
        .iter_mut()
        .find(|c| c.seat.map(|s| s.0) == Some(attacker))
        .unwrap();
    seen.expect(
        client,
        |id| ClientMessage::EndTurn { id },
        ErrorCode::NoMission,
    )
    .await;
    seen.check("magic_tech_tables");
    drop((undeclared, clients));
    server.shutdown().await;
}

/// A climb of today's mountain (`day`: `today`, or a date).
fn climb(day: &str) -> CreateTable {
    CreateTable::new("today's mountain", 1)
        .game(GameKind::MountainMagic)
        .mountain_magic(MountainMagicSettings {
            day: Some(day.to_owned()),
            ..MountainMagicSettings::default()
        })
}

/// Today's mountain: a day that is no date, a climb nobody may watch or replay before its day
/// is over, and one nobody may join or start after it.
#[tokio::test]
async fn todays_mountain() {
    let config = unthrottled();
    let clock = config.clock.clone();
    let server = TestServer::start_with(config).await;
    let mut seen = Seen::default();
    let mut climber = server.client().await;
    seen.expect(
        &mut climber,
        |id| climb("2026-02-30").request(id),
        ErrorCode::BadDay,
    )
    .await;
    let table = climber.create(climb("today")).await.unwrap();
    climber.join(table, "Ann").await.unwrap();
    let started = climber.call(start(None, SeatingMode::Random)).await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    let mut other = server.client().await;
    seen.expect(
        &mut other,
        |id| ClientMessage::Watch {
            id,
            table,
            password: None,
        },
        ErrorCode::DayNotOver,
    )
    .await;
    let conceded = climber.call(|id| ClientMessage::Concede { id }).await;
    assert!(
        matches!(conceded, Ok(ServerMessage::Ack { .. })),
        "{conceded:?}"
    );
    seen.expect(
        &mut other,
        |id| ClientMessage::GetReplay {
            id,
            table,
            from_seq: 1,
            password: None,
            token: None,
        },
        ErrorCode::DayNotOver,
    )
    .await;

    // Two climbs of today, one with its climber seated: then the day ends.
    let mut late = server.client().await;
    let seated = late.create(climb("today")).await.unwrap();
    late.join(seated, "Bob").await.unwrap();
    let empty = other.create(climb("today")).await.unwrap();
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let end_ms = Day::of(secs).ends_at() * 1000;
    clock.advance(std::time::Duration::from_millis(
        end_ms.saturating_sub(clock.now_ms()) + 1000,
    ));
    seen.expect(&mut other, join(empty, "Cid", None), ErrorCode::DayOver)
        .await;
    seen.expect(
        &mut late,
        start(None, SeatingMode::Random),
        ErrorCode::DayOver,
    )
    .await;
    seen.check("todays_mountain");
    drop((climber, other, late));
    server.shutdown().await;
}

/// The caps on tables and on creations, and a ban: an address past its creations (tables and
/// leagues), a server holding as many tables as it may, a league table asked for without the
/// league or its organiser's secret, and a banned address at the table that banned it.
#[tokio::test]
async fn lobby_caps_and_bans() {
    let server = TestServer::start_with(ServerConfig {
        max_tables: 12,
        table_creations_per_minute: 10,
        ..unthrottled()
    })
    .await;
    let mut seen = Seen::default();
    // A league, and a ban, from addresses of their own.
    let mut organiser = Client::connected_from(server.addr, [127, 0, 0, 2].into()).await;
    let league = TestLeague::create(&mut organiser, "Caps", &[]).await;
    for (settings, code) in [
        (
            CreateTable::new("t", 2).league(LeagueId::new_random(), league.organiser),
            ErrorCode::UnknownLeague,
        ),
        (
            CreateTable::new("t", 2).league(league.id, OrganiserSecret::new_random()),
            ErrorCode::NotOrganiser,
        ),
    ] {
        seen.expect(&mut organiser, |id| settings.request(id), code)
            .await;
    }
    let mut host = server.client().await;
    let table = host.create_table("bans", 4, 1).await;
    host.join(table, "Ann").await.unwrap();
    let mut banned = Client::connected_from(server.addr, [127, 0, 0, 3].into()).await;
    let player = banned.join(table, "Bob").await.unwrap();
    let kicked = host
        .call(|id| ClientMessage::Kick {
            id,
            player,
            ban: true,
        })
        .await;
    assert!(
        matches!(kicked, Ok(ServerMessage::Ack { .. })),
        "{kicked:?}"
    );
    assert_eq!(banned.closed_with().await, Some(close::POLICY_VIOLATION));
    let mut banned = Client::connected_from(server.addr, [127, 0, 0, 3].into()).await;
    seen.expect(&mut banned, join(table, "Bob", None), ErrorCode::Banned)
        .await;
    seen.expect(
        &mut banned,
        |id| ClientMessage::Watch {
            id,
            table,
            password: None,
        },
        ErrorCode::Banned,
    )
    .await;

    // 127.0.0.1 creates as many as it may this minute (the table above was one).
    for i in 1..10 {
        host.create_table(&format!("mine {i}"), 2, 1).await;
    }
    seen.expect(
        &mut host,
        |id| CreateTable::new("one more", 2).request(id),
        ErrorCode::TooManyTables,
    )
    .await;
    seen.expect(
        &mut host,
        |id| ClientMessage::CreateLeague {
            id,
            name: "one more".into(),
            password: None,
        },
        ErrorCode::TooManyTables,
    )
    .await;
    // 10 tables open: two more fill the server.
    let mut other = Client::connected_from(server.addr, [127, 0, 0, 4].into()).await;
    for i in 0..2 {
        other.create_table(&format!("theirs {i}"), 2, 1).await;
    }
    seen.expect(
        &mut other,
        |id| CreateTable::new("full", 2).request(id),
        ErrorCode::ServerBusy,
    )
    .await;
    seen.check("lobby_caps_and_bans");
    drop((organiser, host, banned, other));
    server.shutdown().await;
}

/// What one password hashing thread cannot take: every request that checks or hashes a
/// password, sent at once from many connections, is answered `server_busy` past the pool's
/// queue (16 a thread). And a wrong password for a finished game's replay.
#[tokio::test]
async fn password_hashing_busy() {
    let server = TestServer::start_with(ServerConfig {
        password_hash_threads: 1,
        password_checks_per_minute: 0.0,
        wrong_passwords_per_minute: 0.0,
        league_joins_per_minute: 0.0,
        max_league_members_per_ip: 0,
        table_creations_per_minute: 0,
        max_tables_per_ip: 0,
        watches_per_minute: 0.0,
        max_spectators_per_ip: 0,
        max_connections_per_ip: 0,
        ..unthrottled()
    })
    .await;
    let mut seen = Seen::default();
    let mut host = server.client().await;
    let guarded = || CreateTable::new("guarded", 2).password("pw").seed(1);
    let table = host.create(guarded()).await.unwrap();
    let seated = host.call(join(table, "Ann", Some("pw"))).await;
    assert!(
        matches!(seated, Ok(ServerMessage::Seated { .. })),
        "{seated:?}"
    );
    // A finished game at a table with a password.
    let mut players = vec![server.client().await, server.client().await];
    let finished = players[0].create(guarded()).await.unwrap();
    for (client, name) in players.iter_mut().zip(["Ann", "Bob"]) {
        let seated = client.call(join(finished, name, Some("pw"))).await;
        assert!(
            matches!(seated, Ok(ServerMessage::Seated { .. })),
            "{seated:?}"
        );
        client.until_snapshot().await;
    }
    catch_up(&mut players).await;
    start_game(&mut players).await;
    keep_all_hands(&mut players).await;
    concede_in_order(&mut players, &[1]).await;
    let replay = |password: &str| {
        let password = Some(password.to_owned());
        move |id| ClientMessage::GetReplay {
            id,
            table: finished,
            from_seq: 1,
            password,
            token: None,
        }
    };
    seen.expect(&mut host, replay("wrong"), ErrorCode::WrongPassword)
        .await;
    let created = host
        .call(|id| ClientMessage::CreateLeague {
            id,
            name: "Guarded".into(),
            password: Some("pw".into()),
        })
        .await
        .unwrap();
    let ServerMessage::LeagueCreated { league, .. } = created else {
        panic!("{created:?}");
    };

    // Twelve of each at once, each from its connection: the first few are hashed, the others
    // find the queue full.
    let kinds = [
        "join",
        "watch",
        "get_replay",
        "join_league",
        "create_league",
    ];
    let request = |kind: &str, i: usize| -> ClientMessage {
        let password = Some("pw".to_owned());
        match kind {
            "join" => join(table, "Ann", Some("pw"))(0),
            "watch" => ClientMessage::Watch {
                id: 0,
                table,
                password,
            },
            "get_replay" => replay("pw")(0),
            "join_league" => ClientMessage::JoinLeague {
                id: 0,
                league,
                name: "Ann".into(),
                password,
            },
            _ => ClientMessage::CreateLeague {
                id: 0,
                name: format!("League {i}"),
                password,
            },
        }
    };
    let mut flood = Vec::new();
    for i in 0..12 {
        for kind in kinds {
            let mut client = server.client().await;
            let id = client.send(numbered(&request(kind, i)));
            flood.push((kind, client, id));
        }
    }
    let mut busy: std::collections::BTreeMap<&str, usize> = Default::default();
    for (kind, client, id) in &mut flood {
        match client.reply(*id).await {
            Err(ErrorCode::ServerBusy) => {
                *busy.entry(kind).or_default() += 1;
                seen.saw(kind, ErrorCode::ServerBusy);
            }
            // Hashed: what the request asks for, or the table's or league's own refusal.
            Ok(_) | Err(ErrorCode::NameTaken) => {}
            other => panic!("{kind}: {other:?}"),
        }
    }
    assert_eq!(busy.len(), kinds.len(), "{busy:?}");
    seen.check("password_hashing_busy");
    drop((host, players, flood));
    server.shutdown().await;
}

/// A node of a cluster on `nats`, named `name`, in this process. Its lease is the longest
/// allowed: no other node takes its tables over while a test runs.
async fn cluster_node(nats: &NatsCluster, name: &str) -> TestServer {
    TestServer::start_with(ServerConfig {
        cluster: Some(nats.urls()),
        node_id: Some(name.into()),
        lease_ms: 600_000,
        ..unthrottled()
    })
    .await
}

/// Cluster mode: a table whose node has stopped is still its node's until that node's lease
/// runs out, and another node cannot enter anyone there meanwhile (the table is moving).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_on_a_node_gone() {
    let nats = NatsCluster::start(1).await;
    let a = cluster_node(&nats, "a").await;
    let b = cluster_node(&nats, "b").await;
    let mut seen = Seen::default();
    let mut ann = a.client().await;
    let table = ann.create_table("moving", 4, 1).await;
    ann.join(table, "Ann").await.unwrap();
    let (_, token) = ann.seat.unwrap();
    drop(ann);
    a.shutdown().await;
    let mut back = b.client().await;
    seen.expect(
        &mut back,
        |id| ClientMessage::Resume { id, table, token },
        ErrorCode::ServerBusy,
    )
    .await;
    seen.expect(&mut back, join(table, "Bob", None), ErrorCode::ServerBusy)
        .await;
    seen.expect(
        &mut back,
        |id| ClientMessage::Watch {
            id,
            table,
            password: None,
        },
        ErrorCode::ServerBusy,
    )
    .await;
    seen.check("a_table_on_a_node_gone");
    drop(back);
    b.shutdown().await;
}

/// Every test the table names is a test of this file, and every pair a client can cause is
/// driven by one: the pairs still `not yet driven` are listed.
#[test]
fn every_pair_is_driven() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut source = String::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("error_codes") && name.ends_with(".rs") {
            source.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    let mut not_yet = Vec::new();
    for (request, code, how) in errors_of::pairs() {
        match how {
            Coverage::Driven(test) => assert!(
                source.contains(&format!("async fn {test}()")),
                "errors_of names `{test}` for {request} {}, but no tests/tests/error_codes*.rs has such a test",
                code.name()
            ),
            Coverage::NotYetDriven => not_yet.push(format!("{request} {}", code.name())),
            Coverage::Unreachable(_) => {}
        }
    }
    assert!(
        not_yet.is_empty(),
        "{} (request, code) pairs are not yet driven by a test of tests/tests/error_codes*.rs: \
         {not_yet:?}",
        not_yet.len()
    );
}
