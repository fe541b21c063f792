//! Mountain Magic tables on the real server, with no code of their own in it: a one-seat table
//! created and climbed over a socket, its refusals, and a climb that goes on across a restart.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, CreateTable, TestServer};
use grand_melee_protocol::mountain_magic_types::{
    DeckFile, DeckLine, MmPhase, MountainCommand, MountainMagicSettings, MountainView,
};
use grand_melee_protocol::{ClientMessage, ErrorCode, GameKind, StageName, TableId, TableView};
use grand_melee_server::ServerConfig;

fn config() -> ServerConfig {
    ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    }
}

fn climb(view: &TableView) -> &MountainView {
    view.mountain_magic.as_deref().unwrap()
}

async fn send(client: &mut Client, command: MountainCommand) -> Result<(), ErrorCode> {
    client
        .call(|id| ClientMessage::mountain_magic(id, command.clone()))
        .await
        .map(|_| ())
}

/// Ann's seated, started climb at a new table.
async fn started(server: &TestServer) -> (TableId, Client) {
    let mut ann = server.client().await;
    let table = ann
        .create(CreateTable::new("climb", 1).game(GameKind::MountainMagic))
        .await
        .unwrap();
    ann.join(table, "Ann").await.unwrap();
    ann.call(|id| ClientMessage::Start {
        id,
        first_player: None,
        seating: Default::default(),
        order: Vec::new(),
    })
    .await
    .unwrap();
    let seq = ann.fresh_snapshot().await.seq;
    ann.catch_up(seq).await;
    (table, ann)
}

/// The mirror equals a fresh snapshot.
async fn agrees(client: &mut Client) -> TableView {
    let fresh = client.fresh_snapshot().await;
    client.catch_up(fresh.seq).await;
    assert_eq!(client.view.as_ref().unwrap(), &fresh);
    fresh
}

#[tokio::test]
async fn a_mountain_magic_table_has_one_seat_and_is_climbed_over_a_socket() {
    let server = TestServer::start_with(config()).await;
    let mut host = server.client().await;
    for seats in [2, 40] {
        let settings = CreateTable::new("climb", seats).game(GameKind::MountainMagic);
        assert_eq!(host.create(settings).await, Err(ErrorCode::BadSettings));
    }
    // A deck of its own that breaks the recipe makes no table.
    let short = DeckFile {
        cards: vec![DeckLine {
            name: "Kerr Crag".to_owned(),
            count: 4,
        }],
    };
    let settings = CreateTable::new("climb", 1)
        .game(GameKind::MountainMagic)
        .mountain_magic(MountainMagicSettings { deck: Some(short) });
    assert_eq!(host.create(settings).await, Err(ErrorCode::BadSettings));
    let (table, mut ann) = started(&server).await;
    let mut bob = server.client().await;
    assert_eq!(bob.join(table, "Bob").await, Err(ErrorCode::GameStarted));
    let view = agrees(&mut ann).await;
    assert_eq!(view.stage, StageName::Playing);
    assert_eq!(climb(&view).phase, MmPhase::Climbing);
    assert_eq!(climb(&view).mountain[0].iter().flatten().count(), 7);
    let spells = climb(&view).spells_left;
    // Nothing turned over: nothing to place; a Magic Tech request is another game's.
    assert_eq!(
        send(&mut ann, MountainCommand::Place { row: 1, pos: 0 }).await,
        Err(ErrorCode::WrongPhase)
    );
    assert_eq!(
        ann.call(|id| ClientMessage::MagicTechNextPhase { id })
            .await
            .err(),
        Some(ErrorCode::BadMessage)
    );
    // Turn over and place (or discard) a few cards, as a player would from his mirror.
    for _ in 0..5 {
        send(&mut ann, MountainCommand::Flip).await.unwrap();
        let view = agrees(&mut ann).await;
        let card = climb(&view).flipped.unwrap();
        let mirror = grand_melee_protocol::Mirror::<
            grand_melee_protocol::mountain_magic::MountainMagic,
        >::of(&view)
        .unwrap();
        let place = (1..7u8)
            .flat_map(|row| (0..7 - row).map(move |pos| (row, pos)))
            .find(|&(row, pos)| mirror.table().climb().may_place_at(card, row, pos));
        let command = match place {
            Some((row, pos)) => MountainCommand::Place { row, pos },
            None => MountainCommand::Discard,
        };
        send(&mut ann, command).await.unwrap();
    }
    let view = agrees(&mut ann).await;
    assert_eq!(climb(&view).spells_left, spells - 5);
    let kept = climb(&view).discard.len()
        + climb(&view)
            .mountain
            .iter()
            .skip(1)
            .flatten()
            .filter(|c| c.is_some())
            .count();
    assert_eq!(kept, 5, "every card turned over was placed or discarded");
    // Conceding ends the climb: one standing, the dice revealed.
    ann.call(|id| ClientMessage::Concede { id }).await.unwrap();
    let end = agrees(&mut ann).await;
    assert_eq!(end.stage, StageName::Finished);
    assert_eq!(end.standings.len(), 1);
    assert!(end.dice_secret.is_some());
}

#[tokio::test]
async fn a_climb_goes_on_across_a_restart() {
    let server = TestServer::start_with(config()).await;
    let (table, mut ann) = started(&server).await;
    send(&mut ann, MountainCommand::Flip).await.unwrap();
    let before = agrees(&mut ann).await;
    let token = ann.seat.unwrap().1;
    drop(ann);
    let server = server.restart(config()).await;
    let mut ann = server.client().await;
    ann.resume(table, token).await.unwrap();
    let after = agrees(&mut ann).await;
    assert_eq!(climb(&after), climb(&before));
    assert_eq!(after.players.len(), 1);
    // The turned-over card is still to be placed or discarded.
    send(&mut ann, MountainCommand::Discard).await.unwrap();
    let view = agrees(&mut ann).await;
    assert_eq!(climb(&view).flipped, None);
    assert_eq!(climb(&view).discard.len(), climb(&before).discard.len() + 1);
}
