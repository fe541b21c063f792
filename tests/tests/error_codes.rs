//! Every (request, error code) pair `protocol/src/errors_of.rs` names a test of this file for is
//! answered through a socket by that test: each test records the pairs it saw answered and
//! compares them with the table's. `every_pair_is_driven` lists the pairs no test drives yet.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::error_codes::Seen;
use grand_melee_e2e::{Client, CreateTable, TestServer, started_game};
use grand_melee_protocol::errors_of::{self, Coverage};
use grand_melee_protocol::{
    ClientMessage, ErrorCode, PROTOCOL_VERSION, Phase, Ruling, SeatToken, SeatingMode, TableId,
};

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
