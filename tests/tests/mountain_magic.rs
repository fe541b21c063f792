//! Mountain Magic tables on the real server, with no code of their own in it: a one-seat table
//! created and climbed over a socket, its refusals, a climb that goes on across a restart, a
//! climb watched by a spectator and replayed step by step, and its deal verified from the
//! revealed dice.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, CreateTable, TestServer};
use grand_melee_protocol::mountain_magic_types::{
    DeckFile, DeckLine, MmPhase, MountainCommand, MountainMagicSettings, MountainView,
};
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Event, GameKind, StageName, TableId, TableView,
};
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
        .mountain_magic(MountainMagicSettings {
            deck: Some(short),
            ..MountainMagicSettings::default()
        });
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
/// Climbs from the mirror until the mountain is complete or the deck ran out: the card to place
/// (the one turned over, or right after a placement the discard pile's top) goes to the first
/// place it may; a turned-over card that fits nowhere is discarded, and otherwise the next card
/// is turned over. (Flipping while the discard pile's top may be placed is refused once the
/// deck is empty: the climb then goes on from the discard pile.)
async fn climb_up(ann: &mut Client) {
    use grand_melee_protocol::Mirror;
    use grand_melee_protocol::mountain_magic::MountainMagic;
    loop {
        let view = agrees(ann).await;
        let mountain = climb(&view);
        if mountain.phase != MmPhase::Climbing {
            return;
        }
        let mirror = Mirror::<MountainMagic>::of(&view).unwrap();
        let climbing = mirror.table().climb();
        let command = match (climbing.placements().first(), mountain.flipped) {
            (Some(&(row, pos)), _) => MountainCommand::Place { row, pos },
            (None, Some(_)) => MountainCommand::Discard,
            (None, None) => MountainCommand::Flip,
        };
        send(ann, command).await.unwrap();
    }
}

#[tokio::test]
async fn a_climb_is_watched_replayed_step_by_step_and_its_deal_verified() {
    use grand_melee_protocol::Mirror;
    use grand_melee_protocol::dice::DiceSecret;
    use grand_melee_protocol::game::Game;
    use grand_melee_protocol::mountain_magic::{MountainMagic, verify_deal};
    let server = TestServer::start_with(config()).await;
    let (table, mut ann) = started(&server).await;
    let mut watcher = server.client().await;
    watcher.watch(table).await;
    // A spectator's request changes nothing.
    assert_eq!(
        send(&mut watcher, MountainCommand::Flip).await,
        Err(ErrorCode::NotAPlayer)
    );
    climb_up(&mut ann).await;
    let view = agrees(&mut ann).await;
    if climb(&view).phase == MmPhase::Path {
        let path = grand_melee_protocol::mountain_magic::climb::all_paths()
            .into_iter()
            .next()
            .unwrap();
        send(&mut ann, MountainCommand::Path { path })
            .await
            .unwrap();
    }
    let view = agrees(&mut ann).await;
    if view.stage == StageName::Playing {
        ann.call(|id| ClientMessage::Concede { id }).await.unwrap();
    }
    let end = agrees(&mut ann).await;
    assert_eq!(end.stage, StageName::Finished);
    // The spectator saw every step: his mirror is the end.
    watcher.catch_up(end.seq).await;
    assert_eq!(watcher.view.as_ref().unwrap(), &end);

    // The replay, folded one event at a time from the empty table, shows the climb growing
    // (the deal first, then one card turned over after another) and ends at the table's end.
    let events = server.client().await.replay_events(table).await;
    assert_eq!(events.len() as u64, end.seq);
    let empty = MountainMagic::create(&end.settings, DiceSecret::from_seed(0))
        .unwrap()
        .view(end.table, &end.name, 0, &end.settings);
    let mut mirror = Mirror::<MountainMagic>::of(&empty).unwrap();
    let mut turned = 0u16;
    for (seq, event) in (1u64..).zip(&events) {
        mirror
            .apply_batch(seq, std::slice::from_ref(event))
            .unwrap();
        let step = mirror.view();
        assert_eq!(step.seq, seq);
        match event {
            Event::MountainMagicDealt { bottom, .. } => {
                let row: Vec<_> = climb(&step).mountain[0].iter().flatten().copied().collect();
                assert_eq!(&row, bottom);
            }
            Event::MountainMagicFlipped { card } => {
                turned += 1;
                assert_eq!(climb(&step).flipped, Some(*card));
            }
            _ => {}
        }
    }
    assert!(turned > 0);
    assert_eq!(mirror.view(), end);

    // The deal is the revealed dice's: every card turned over is checked.
    let numbered = || (1u64..).zip(&events);
    let verified = grand_melee_protocol::dice::verify(numbered()).unwrap();
    let deal = verify_deal(&verified.dice, None, numbered())
        .unwrap()
        .unwrap();
    assert!(!deal.own_deck);
    assert_eq!(u32::from(turned), deal.flipped);
    // A deal the dice do not give is caught, at its event: another card turned over, another
    // bottom row.
    let (at, first) = (1u64..)
        .zip(&events)
        .find_map(|(seq, e)| match e {
            Event::MountainMagicFlipped { card } => Some((seq, *card)),
            _ => None,
        })
        .unwrap();
    let mut forged = events.clone();
    forged[at as usize - 1] = Event::MountainMagicFlipped {
        card: if first == 0 { 1 } else { first - 1 },
    };
    let caught = verify_deal(&verified.dice, None, (1u64..).zip(&forged)).unwrap_err();
    assert_eq!(caught.seq, at);
    let mut forged = events.clone();
    let dealt = forged
        .iter_mut()
        .position(|e| matches!(e, Event::MountainMagicDealt { .. }))
        .unwrap();
    if let Event::MountainMagicDealt { bottom, .. } = &mut forged[dealt] {
        bottom.swap(0, 1);
        if bottom[0] == bottom[1] {
            bottom[0] = bottom[0].wrapping_add(1);
        }
    }
    let caught = verify_deal(&verified.dice, None, (1u64..).zip(&forged)).unwrap_err();
    assert_eq!(caught.seq, dealt as u64 + 1);
    // Another game's events hold no deal.
    let other: Vec<Event> = events
        .iter()
        .filter(|e| !matches!(e, Event::MountainMagicDealt { .. }))
        .cloned()
        .collect();
    assert_eq!(
        verify_deal(&verified.dice, None, (1u64..).zip(&other)),
        Ok(None)
    );
}

/// The answer to request `id`: its error code and message (it must be refused).
async fn refusal(client: &mut Client, id: u32) -> (ErrorCode, String) {
    client
        .until(|r| match r {
            grand_melee_e2e::Received::Message(message, _) => match &**message {
                grand_melee_protocol::ServerMessage::Error {
                    reply_to,
                    code,
                    message,
                    ..
                } if *reply_to == Some(id) => Some((*code, message.clone())),
                other if other.reply_to() == Some(id) => panic!("accepted: {other:?}"),
                _ => None,
            },
            _ => None,
        })
        .await
}

fn own_deck(lines: Vec<DeckLine>) -> CreateTable {
    CreateTable::new("climb", 1)
        .game(GameKind::MountainMagic)
        .mountain_magic(MountainMagicSettings {
            deck: Some(DeckFile { cards: lines }),
            ..MountainMagicSettings::default()
        })
}

fn line(name: &str, count: u8) -> DeckLine {
    DeckLine {
        name: name.to_owned(),
        count,
    }
}

#[tokio::test]
async fn an_oversized_deck_file_is_named_by_its_real_size_and_an_array_line_is_refused() {
    let server = TestServer::start_with(config()).await;
    let mut host = server.client().await;
    // 300 lines of one card, and 265 cards in lines of 53: the message counts them all.
    for (lines, found) in [
        (vec![line("Kerr Crag", 1); 300], 300),
        (vec![line("Kerr Crag", 53); 5], 265),
    ] {
        let settings = own_deck(lines);
        let id = host.send(|id| settings.request(id));
        let (code, message) = refusal(&mut host, id).await;
        assert_eq!(code, ErrorCode::BadSettings);
        assert!(
            message.contains(&format!("a deck has 65 cards, not {found}")),
            "{message}"
        );
    }
    // A line written as an array, `["Kerr Crag", 4]`, is refused and says why.
    let settings = own_deck(vec![line("Kerr Crag", 4)]);
    let id = host.id();
    let bytes = grand_melee_protocol::encode_client(&settings.request(id));
    let map: Vec<u8> = [
        &[0x82, 0xa4][..],
        b"name",
        &[0xa9],
        b"Kerr Crag",
        &[0xa5],
        b"count",
        &[4],
    ]
    .concat();
    let array: Vec<u8> = [&[0x92, 0xa9][..], b"Kerr Crag", &[4]].concat();
    let at = bytes
        .windows(map.len())
        .position(|w| w == map.as_slice())
        .unwrap();
    let patched = [&bytes[..at], &array[..], &bytes[at + map.len()..]].concat();
    host.send_raw(patched);
    let (code, message) = refusal(&mut host, id).await;
    assert_eq!(code, ErrorCode::BadMessage);
    assert!(message.contains("a deck line is a map"), "{message}");
    assert!(host.list_tables().await.is_empty(), "no table was made");
}
