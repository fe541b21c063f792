//! `grand-melee verify` on a finished Mountain Magic climb dealt from the table's own deck: the
//! deal is checked from the server (the replay's settings give the deck) and from an export
//! file (its header gives them), and a forged card turned over is named.
#![allow(clippy::unwrap_used)]

mod common;

use common::{CreateTable, TestServer, call, run_once};
use grand_melee_cli::net::Conn;
use grand_melee_protocol::dice::{Dice, DiceSecret, entropy_digest};
use grand_melee_protocol::mountain_magic::pool::{Deck, Pool};
use grand_melee_protocol::mountain_magic_types::{
    DeckFile, DeckLine, MountainCommand, MountainMagicSettings,
};
use grand_melee_protocol::{ClientMessage, GameKind, ServerMessage};

const NAME: &str = "Own deck climb";

/// A deck file that follows the recipe: a default deck, one line per card.
fn own_deck() -> DeckFile {
    let pool = Pool::builtin();
    let dice = Dice::new(DiceSecret::from_seed(11), entropy_digest([""]));
    let mut cards = Deck::default_from_dice(pool, &dice).cards;
    cards.sort_unstable();
    let name = |no: u16| {
        pool.cards()
            .find(|(n, _)| *n == no)
            .map(|(_, c)| c.name.clone())
            .unwrap()
    };
    let mut file = DeckFile { cards: Vec::new() };
    for card in cards {
        let name = name(card);
        match file.cards.last_mut() {
            Some(line) if line.name == name => line.count += 1,
            _ => file.cards.push(DeckLine { name, count: 1 }),
        }
    }
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_checks_a_mountain_magic_deal_of_the_tables_own_deck() {
    let server = TestServer::start().await;
    let data = tempfile::tempdir().unwrap();
    let url = server.url();
    let mut ann = Conn::open(&url).await.unwrap();
    let settings = CreateTable::new(NAME, 1)
        .game(GameKind::MountainMagic)
        .mountain_magic(MountainMagicSettings {
            deck: Some(own_deck()),
            ..MountainMagicSettings::default()
        });
    let table = common::create(&mut ann, settings).await;
    let seated = call(
        &mut ann,
        ClientMessage::Join {
            id: 0,
            table,
            name: "Ann".into(),
            password: None,
            entropy: Some("ann's entropy".into()),
            member_token: None,
        },
    )
    .await;
    assert!(matches!(seated, ServerMessage::Seated { .. }), "{seated:?}");
    let started = call(
        &mut ann,
        ClientMessage::Start {
            id: 0,
            first_player: None,
            seating: Default::default(),
            order: Vec::new(),
        },
    )
    .await;
    assert!(matches!(started, ServerMessage::Ack { .. }), "{started:?}");
    // Three cards turned over, each to the discard pile; then Ann concedes.
    for _ in 0..3 {
        for command in [MountainCommand::Flip, MountainCommand::Discard] {
            let answer = call(&mut ann, ClientMessage::mountain_magic(0, command)).await;
            assert!(matches!(answer, ServerMessage::Ack { .. }), "{answer:?}");
        }
    }
    let conceded = call(&mut ann, ClientMessage::Concede { id: 0 }).await;
    assert!(
        matches!(conceded, ServerMessage::Ack { .. }),
        "{conceded:?}"
    );

    let (status, out, err) = run_once(&url, data.path(), &["verify", NAME]).await;
    assert!(status.success(), "{out}{err}");
    assert!(
        out.contains(
            "verified: the Mountain Magic deal of the table's own deck: the bottom row, 3 card(s) turned over"
        ),
        "{out}"
    );
    // From an export file; then the same file with the first card turned over changed.
    let (status, export, err) = run_once(&url, data.path(), &["replay", "export", NAME]).await;
    assert!(status.success(), "{err}");
    let file = data.path().join("climb.jsonl");
    std::fs::write(&file, &export).unwrap();
    let path = file.to_str().unwrap();
    let (status, out, err) = run_once(&url, data.path(), &["verify", "--file", path]).await;
    assert!(status.success(), "{out}{err}");
    assert!(out.contains("the table's own deck"), "{out}");
    let mut forged_one = false;
    let forged: String = export
        .lines()
        .map(|line| {
            let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
            if record["event"]["kind"] == "mountain_magic.flipped" && !forged_one {
                forged_one = true;
                let card = record["event"]["card"].as_u64().unwrap();
                record["event"]["card"] = serde_json::json!(if card == 0 { 1 } else { card - 1 });
            }
            format!("{record}\n")
        })
        .collect();
    assert!(forged_one);
    std::fs::write(&file, forged).unwrap();
    let (status, out, err) = run_once(&url, data.path(), &["verify", "--file", path]).await;
    assert!(!status.success(), "{out}");
    assert!(err.contains("NOT VERIFIED: event"), "{err}");
    assert!(err.contains("card 8 of the spell deck"), "{err}");
    server.shutdown().await;
}
