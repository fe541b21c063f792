//! Magic Tech tables on the real server, with no code of their own in it: a whole random legal
//! game over sockets, the refusals, and a game that goes on across a restart (issue 30, "How it
//! is checked").
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::magic_tech::{self as mt, Dice};
use grand_melee_e2e::{Client, CreateTable, TestServer, keep_all_hands, started_game};
use grand_melee_protocol::magic_tech_types::MtPhase;
use grand_melee_protocol::rules::Command;
use grand_melee_protocol::{ClientMessage, ErrorCode, GameKind, ServerMessage, StageName};
use grand_melee_server::ServerConfig;

/// The server's defaults, but a random player's requests come faster than a person's.
fn config() -> ServerConfig {
    ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    }
}

/// Every client's mirror equals a fresh snapshot.
async fn mirrors_agree(clients: &mut [Client]) {
    mt::catch_up_all(clients).await;
    for client in clients.iter_mut() {
        let fresh = client.fresh_snapshot().await;
        assert_eq!(client.view.as_ref().unwrap(), &fresh);
    }
}

/// The first decider takes a mulligan, then both keep.
async fn mulligan_then_keep(clients: &mut [Client]) {
    let view = clients[0].view.clone().unwrap();
    assert_eq!(view.stage, StageName::Mulligan);
    let first = view.mulligan_decider.unwrap();
    assert_eq!(
        Some(first),
        view.first_player,
        "the first player decides first"
    );
    let answer = mt::send(clients, first, &Command::Mulligan).await;
    assert!(
        matches!(answer, Ok(ServerMessage::Ack { .. })),
        "{answer:?}"
    );
    for _ in 0..2 {
        mt::catch_up_all(clients).await;
        let decider = clients[0].view.as_ref().unwrap().mulligan_decider.unwrap();
        let answer = mt::send(clients, decider, &Command::Keep).await;
        assert!(
            matches!(answer, Ok(ServerMessage::Ack { .. })),
            "{answer:?}"
        );
    }
    mt::catch_up_all(clients).await;
    assert_eq!(clients[0].view.as_ref().unwrap().stage, StageName::Playing);
}

/// `client`'s request is refused with `code`, and its table's snapshot is what it was.
async fn refused(client: &mut Client, message: impl Fn(u32) -> ClientMessage, code: ErrorCode) {
    let before = client.fresh_snapshot().await;
    let answer = client.call(&message).await;
    assert_eq!(answer.err(), Some(code), "{:?}", message(0));
    let after = client.fresh_snapshot().await;
    assert_eq!(after.seq, before.seq);
    assert_eq!(after, before, "{:?} changed the table", message(0));
}

/// The active player moves on to his deploy phase.
async fn to_deploy(client: &mut Client) {
    let phase = |c: &Client| c.view.as_ref().unwrap().magic_tech.as_ref().unwrap().phase;
    while phase(client) != Some(MtPhase::Deploy) {
        let next = client
            .call(|id| ClientMessage::MagicTechNextPhase { id })
            .await;
        let Ok(ServerMessage::Ack { seq, .. }) = next else {
            panic!("{next:?}");
        };
        client.catch_up(seq).await;
    }
}

#[tokio::test]
async fn a_random_legal_magic_tech_game_is_played_to_its_end_over_sockets() {
    let server = TestServer::start_with(config()).await;
    let mut host = server.client().await;
    for seats in [1, 3, 40] {
        let settings = CreateTable::new("tech", seats).game(GameKind::MagicTech);
        assert_eq!(host.create(settings).await, Err(ErrorCode::BadSettings));
    }
    let (table, mut clients) = mt::started(server.addr, [40, 30]).await;
    let mut watcher = server.client().await;
    watcher.watch(table).await;
    mulligan_then_keep(&mut clients).await;
    let mut dice = Dice::new(4);
    let made = mt::play(&mut clients, &mut dice, 5000).await;
    assert!(made < 5000, "the game ended");
    let end = clients[0].view.clone().unwrap();
    assert_eq!(end.stage, StageName::Finished);
    assert_eq!(end.standings.len(), 2);
    mirrors_agree(&mut clients).await;
    watcher.catch_up(end.seq).await;
    assert_eq!(watcher.view.as_ref().unwrap(), &end);
    // The game was played, not just passed: cards were revealed and destroyed, a mission was
    // blocked, numbers corrected (this seed's game, the same every run: Ann goes first).
    let journal = clients[0].past_events(table).await;
    for kind in [
        "magic_tech.revealed",
        "magic_tech.mission_began",
        "magic_tech.blocked",
        "magic_tech.destroyed",
        "magic_tech.corrected",
        "magic_tech.ran_out",
    ] {
        assert!(journal.iter().any(|e| e.name() == kind), "no {kind}");
    }
    // The journal folds to the final view.
    assert_eq!(mt::fold(&end, &journal), end);
}

#[tokio::test]
async fn refused_requests_at_magic_tech_and_grand_melee_tables_change_nothing() {
    let server = TestServer::start_with(config()).await;
    // A Magic Tech request at a Grand Melee table.
    let (_, mut melee) = started_game(&server, 2, 5).await;
    let running = melee[0].running_players()[0];
    let runner = melee
        .iter_mut()
        .find(|c| c.seat.map(|(p, _)| p) == Some(running))
        .unwrap();
    refused(
        runner,
        |id| ClientMessage::MagicTechNextPhase { id },
        ErrorCode::BadMessage,
    )
    .await;

    let (table, mut clients) = mt::started(server.addr, [40, 30]).await;
    let mut watcher = server.client().await;
    watcher.watch(table).await;
    keep_all_hands(&mut clients).await;
    let (ann, bob) = (clients[0].seat.unwrap().0, clients[1].seat.unwrap().0);
    assert_eq!(
        clients[0]
            .view
            .as_ref()
            .unwrap()
            .magic_tech
            .as_ref()
            .unwrap()
            .active,
        Some(ann)
    );
    // A Grand Melee request at a Magic Tech table.
    refused(
        &mut clients[0],
        |id| ClientMessage::Attack {
            id,
            target: bob,
            damage: 1,
            poison: 0,
        },
        ErrorCode::BadMessage,
    )
    .await;
    // Out of turn.
    refused(
        &mut clients[1],
        |id| ClientMessage::MagicTechNextPhase { id },
        ErrorCode::NotYourTurn,
    )
    .await;
    // A spectator's request.
    refused(
        &mut watcher,
        |id| ClientMessage::MagicTechNextPhase { id },
        ErrorCode::NotAPlayer,
    )
    .await;
    // Over the deploy limit: the first player's first turn deploys one card.
    to_deploy(&mut clients[0]).await;
    let deployed = clients[0]
        .call(|id| ClientMessage::MagicTechDeploy { id, land: None })
        .await;
    assert!(
        matches!(deployed, Ok(ServerMessage::Ack { .. })),
        "{deployed:?}"
    );
    refused(
        &mut clients[0],
        |id| ClientMessage::MagicTechDeploy { id, land: None },
        ErrorCode::LimitReached,
    )
    .await;
    mirrors_agree(&mut clients).await;
}
#[tokio::test]
async fn a_magic_tech_game_goes_on_across_a_restart_and_its_replay_folds_to_the_end() {
    let server = TestServer::start_with(config()).await;
    let (table, mut clients) = mt::started(server.addr, [40, 30]).await;
    mulligan_then_keep(&mut clients).await;
    let mut dice = Dice::new(6);
    assert_eq!(mt::play(&mut clients, &mut dice, 120).await, 120);
    let before = clients[0].fresh_snapshot().await;
    assert_eq!(before.stage, StageName::Playing);
    let tokens: Vec<_> = clients.iter().map(|c| c.seat.unwrap().1).collect();

    let server = server.restart(config()).await;
    let mut clients = Vec::new();
    for token in tokens {
        let mut client = server.client().await;
        client.resume(table, token).await.unwrap();
        clients.push(client);
    }
    mt::catch_up_all(&mut clients).await;
    let after = clients[0].view.clone().unwrap();
    // The board is where it was (only who is connected has changed since).
    assert_eq!(after.magic_tech, before.magic_tech);
    assert_eq!(after.stage, StageName::Playing);
    let made = mt::play(&mut clients, &mut dice, 5000).await;
    assert!(made < 5000, "the game ended");
    mirrors_agree(&mut clients).await;
    let end = clients[0].view.clone().unwrap();
    assert_eq!(end.stage, StageName::Finished);

    let replayed = server.client().await.replay_events(table).await;
    assert_eq!(replayed.len() as u64, end.seq);
    assert_eq!(replayed, clients[1].past_events(table).await);
    assert_eq!(mt::fold(&end, &replayed), end);
}

/// Issue 43: Magic Tech faces were unchecked over the wire: a land with a 1,300-colour
/// `protection` list was accepted (104 of them grew the snapshot past a terminal client's 1 MiB),
/// and so was a name with a right-to-left override. Both are `bad_card` now, and change nothing.
#[tokio::test]
async fn an_oversized_or_misnamed_face_is_refused_over_the_wire() {
    use grand_melee_protocol::magic_tech_types::{CardFace, CardType, Colour, Keywords, ManaCost};
    let server = TestServer::start_with(config()).await;
    let (_, mut clients) = mt::started(server.addr, [40, 30]).await;
    keep_all_hands(&mut clients).await;
    to_deploy(&mut clients[0]).await;
    let land = |name: &str, keywords: Keywords| CardFace {
        name: name.to_owned(),
        card_type: CardType::Land,
        cost: ManaCost::default(),
        power: 0,
        toughness: 0,
        basic: Some(Colour::Green),
        keywords,
    };
    let huge = land(
        "Forest",
        Keywords {
            protection: vec![Colour::Red; 1300],
            ..Keywords::default()
        },
    );
    let bidi = land("\u{202E}tseroF", Keywords::default());
    for face in [huge, bidi] {
        refused(
            &mut clients[0],
            |id| ClientMessage::MagicTechDeploy {
                id,
                land: Some(face.clone()),
            },
            ErrorCode::BadCard,
        )
        .await;
    }
    // The same land, well formed, is deployed.
    let forest = land("Forest", Keywords::default());
    let deployed = clients[0]
        .call(|id| ClientMessage::MagicTechDeploy {
            id,
            land: Some(forest.clone()),
        })
        .await;
    assert!(
        matches!(deployed, Ok(ServerMessage::Ack { .. })),
        "{deployed:?}"
    );
    mirrors_agree(&mut clients).await;
}

/// Issue 46: over the wire, the host's `ruling {end_turn}` naming his opponent during his own
/// turn answers `no_running_turn` (as at a Grand Melee table; it was `not_your_turn`), and a tap
/// that would take a player past the most unspent mana the host's correction may set is
/// `bad_amount` (it was accepted, to 1020). Neither changes anything.
#[tokio::test]
async fn a_ruling_for_a_player_not_taking_the_turn_and_a_tap_past_the_mana_bound_are_refused() {
    use grand_melee_protocol::magic_tech_types::{CardFace, CardType, Colour, Correction};
    use grand_melee_protocol::{MAX_UNSPENT_MANA, Ruling};
    let server = TestServer::start_with(config()).await;
    let (_, mut clients) = mt::started(server.addr, [40, 30]).await;
    keep_all_hands(&mut clients).await;
    let (ann, bob) = (clients[0].seat.unwrap().0, clients[1].seat.unwrap().0);
    // Ann hosts and takes the first turn.
    refused(
        &mut clients[0],
        |id| ClientMessage::Ruling {
            id,
            ruling: Ruling::EndTurn { player: bob },
        },
        ErrorCode::NoRunningTurn,
    )
    .await;
    to_deploy(&mut clients[0]).await;
    let forest = CardFace {
        name: "Forest".to_owned(),
        card_type: CardType::Land,
        cost: Default::default(),
        power: 0,
        toughness: 0,
        basic: Some(Colour::Green),
        keywords: Default::default(),
    };
    let card = clients[0]
        .view
        .as_ref()
        .unwrap()
        .magic_tech
        .as_ref()
        .unwrap()
        .next_card;
    let deployed = clients[0]
        .call(|id| ClientMessage::MagicTechDeploy {
            id,
            land: Some(forest.clone()),
        })
        .await;
    assert!(
        matches!(deployed, Ok(ServerMessage::Ack { .. })),
        "{deployed:?}"
    );
    let ruled = clients[0]
        .call(|id| ClientMessage::MagicTechRule {
            id,
            correction: Correction::Mana {
                player: ann,
                mana: MAX_UNSPENT_MANA,
            },
        })
        .await;
    assert!(matches!(ruled, Ok(ServerMessage::Ack { .. })), "{ruled:?}");
    refused(
        &mut clients[0],
        |id| ClientMessage::MagicTechTap { id, card, mana: 1 },
        ErrorCode::BadAmount,
    )
    .await;
    mirrors_agree(&mut clients).await;
}
