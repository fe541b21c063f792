//! Every (request, error code) pair of a `magic_tech.*` request that `protocol/src/errors_of.rs`
//! names a test of this file for is answered through a socket by that test (as in
//! `tests/tests/error_codes.rs`, which lists the pairs no test drives yet): one scripted game
//! from the lobby to the first player's second turn, and a table whose card numbers run out.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::error_codes::Seen;
use grand_melee_e2e::magic_tech as mt;
use grand_melee_e2e::{Client, TestServer, keep_all_hands};
use grand_melee_protocol::game::Game;
use grand_melee_protocol::magic_tech::MagicTech;
use grand_melee_protocol::magic_tech_types::{
    Area, Block, CardFace, CardType, Colour, Correction, Keywords, MagicTechCommand as C, ManaCost,
    MtPhase, Target, Zone,
};
use grand_melee_protocol::rules::{Actor, Command};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, Event, MAX_CARD_NUMBER, PlayerId, SeatToken,
    ServerMessage,
};
use grand_melee_server::ServerConfig;
use grand_melee_server::journal::{Durability, Journal};

/// The server's defaults, but a script's requests come faster than a person's.
fn config() -> ServerConfig {
    ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    }
}

/// The request carrying `command`.
fn tech(command: C) -> impl FnOnce(u32) -> ClientMessage {
    move |id| mt::request(&Command::MagicTech(command), id).unwrap()
}

/// `client` sends `command`, which is accepted.
async fn ok(client: &mut Client, command: C) {
    let answer = client.call(tech(command.clone())).await;
    assert!(
        matches!(answer, Ok(ServerMessage::Ack { .. })),
        "{command:?}: {answer:?}"
    );
}

/// A Forest, as a basic land is declared.
fn forest() -> CardFace {
    CardFace {
        name: "Forest".to_owned(),
        card_type: CardType::Land,
        cost: ManaCost::default(),
        power: 0,
        toughness: 0,
        basic: Some(Colour::Green),
        keywords: Keywords::default(),
    }
}

/// A card of `card_type` costing `generic`, 1/1 if a creature.
fn card(name: &str, card_type: CardType, generic: u8) -> CardFace {
    let creature = card_type == CardType::Creature;
    CardFace {
        name: name.to_owned(),
        card_type,
        cost: ManaCost {
            generic,
            coloured: Vec::new(),
        },
        power: u8::from(creature),
        toughness: u8::from(creature),
        basic: None,
        keywords: Keywords::default(),
    }
}

/// A 1/1 creature costing 2 (so one point of damage past its armour does not destroy it) with
/// haste (it may go on patrol the turn it is revealed) and regeneration for 1.
fn troll() -> CardFace {
    let mut troll = card("Troll", CardType::Creature, 2);
    troll.keywords.haste = true;
    troll.keywords.regeneration = Some(ManaCost {
        generic: 1,
        coloured: Vec::new(),
    });
    troll
}

/// A Magic Tech table from its lobby to the first player's second turn: each refusal where
/// the game is when it can be answered. Ann hosts and plays first; her cards are numbered 0
/// (a Forest), 1 (a face-down card she reveals as a Troll) and 2 (a Forest she takes back to
/// hand); Bob's first card is 3.
#[tokio::test]
async fn magic_tech_requests() {
    let server = TestServer::start_with(config()).await;
    let mut seen = Seen::default();
    let mut host = Client::connected(server.addr).await;
    let table = host.create(mt::settings()).await.unwrap();
    let mut clients = vec![host, Client::connected(server.addr).await];
    for (client, name) in clients.iter_mut().zip(["Ann", "Bob"]) {
        client.join(table, name).await.unwrap();
    }
    let (ann, bob) = (clients[0].seat.unwrap().0, clients[1].seat.unwrap().0);

    // The lobby.
    for size in [4, 61] {
        seen.expect(
            &mut clients[0],
            tech(C::DeclareDeck { size }),
            ErrorCode::BadAmount,
        )
        .await;
    }
    let mana = |player, mana| Correction::Mana { player, mana };
    seen.expect(
        &mut clients[0],
        tech(C::Rule {
            correction: mana(ann, 0),
        }),
        ErrorCode::NotPlaying,
    )
    .await;

    // The mulligans: no Magic Tech request but the host's rulings yet, and no deck declared.
    mt::start(&mut clients, [40, 40]).await;
    seen.expect(
        &mut clients[0],
        tech(C::DeclareDeck { size: 40 }),
        ErrorCode::GameStarted,
    )
    .await;
    let in_play = [
        C::NextPhase,
        C::Deploy { land: None },
        C::Tap { card: 0, mana: 1 },
        C::Pay {
            card: None,
            amount: 1,
        },
        C::Reveal {
            card: 0,
            face: troll(),
        },
        C::Relocate {
            card: 0,
            area: Area::Patrol,
        },
        C::Mission {
            attackers: vec![0],
            target: Target::Stockpile { player: bob },
        },
        C::Block { blocks: Vec::new() },
        C::Damage {
            target: Target::Stockpile { player: bob },
            amount: 1,
        },
        C::Heal { card: 0, amount: 1 },
        C::Regenerate { card: 0 },
        C::Draw { count: 1 },
        C::Life { delta: -1 },
        C::LeavePlay {
            card: 0,
            to: Zone::Hand,
        },
        C::Propose {
            correction: mana(ann, 0),
        },
        C::Answer { accept: true },
        C::Rule {
            correction: mana(ann, 0),
        },
    ];
    for command in in_play {
        seen.expect(&mut clients[0], tech(command), ErrorCode::NotPlaying)
            .await;
    }
    keep_all_hands(&mut clients).await;
    let (a, b) = (0, 1);

    // Turn 1, Ann's upkeep.
    let wrong_phase = [
        C::Deploy { land: None },
        C::Pay {
            card: Some(0),
            amount: 1,
        },
        C::Relocate {
            card: 0,
            area: Area::Patrol,
        },
        C::Mission {
            attackers: vec![0],
            target: Target::Stockpile { player: bob },
        },
    ];
    for command in wrong_phase {
        seen.expect(&mut clients[a], tech(command), ErrorCode::WrongPhase)
            .await;
    }
    let not_your_turn = [
        C::NextPhase,
        C::Deploy { land: None },
        C::Pay {
            card: Some(0),
            amount: 1,
        },
        C::Relocate {
            card: 0,
            area: Area::Patrol,
        },
        C::Mission {
            attackers: vec![0],
            target: Target::Stockpile { player: ann },
        },
        C::Regenerate { card: 0 },
    ];
    for command in not_your_turn {
        seen.expect(&mut clients[b], tech(command), ErrorCode::NotYourTurn)
            .await;
    }
    let nowhere = 999;
    let unknown_card = [
        C::Tap {
            card: nowhere,
            mana: 1,
        },
        C::Regenerate { card: nowhere },
        C::Damage {
            target: Target::Card { card: nowhere },
            amount: 1,
        },
        C::Heal {
            card: nowhere,
            amount: 1,
        },
        C::Reveal {
            card: nowhere,
            face: troll(),
        },
        C::LeavePlay {
            card: nowhere,
            to: Zone::Hand,
        },
        C::Propose {
            correction: Correction::Damage {
                card: nowhere,
                damage: 1,
            },
        },
        C::Rule {
            correction: Correction::Tapped {
                card: nowhere,
                tapped: true,
            },
        },
    ];
    for command in unknown_card {
        seen.expect(&mut clients[a], tech(command), ErrorCode::UnknownCard)
            .await;
    }
    let unknown_player = [
        C::Damage {
            target: Target::Stockpile { player: 99 },
            amount: 1,
        },
        C::Propose {
            correction: mana(99, 1),
        },
        C::Rule {
            correction: Correction::Move {
                player: 99,
                from: Zone::Hand,
                to: Zone::Scrapheap,
                count: 1,
            },
        },
    ];
    for command in unknown_player {
        seen.expect(&mut clients[a], tech(command), ErrorCode::UnknownPlayer)
            .await;
    }
    let bad_amount = [
        C::Pay {
            card: None,
            amount: 0,
        },
        C::Damage {
            target: Target::Stockpile { player: bob },
            amount: 0,
        },
        C::Draw { count: 0 },
        C::Life { delta: 0 },
        C::Propose {
            correction: mana(ann, 1001),
        },
        C::Rule {
            correction: Correction::Move {
                player: ann,
                from: Zone::Hand,
                to: Zone::Scrapheap,
                count: 200,
            },
        },
    ];
    for command in bad_amount {
        seen.expect(&mut clients[a], tech(command), ErrorCode::BadAmount)
            .await;
    }
    seen.expect(
        &mut clients[a],
        tech(C::Pay {
            card: None,
            amount: 1,
        }),
        ErrorCode::NotEnoughMana,
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Block { blocks: Vec::new() }),
        ErrorCode::NoMission,
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Answer { accept: true }),
        ErrorCode::NoProposal,
    )
    .await;
    seen.expect(
        &mut clients[b],
        tech(C::Rule {
            correction: mana(ann, 0),
        }),
        ErrorCode::NotHost,
    )
    .await;

    // Turn 1, Ann's deploy phase: a Forest (0) and a face-down card (1); the first player's
    // first turn deploys one card besides lands.
    ok(&mut clients[a], C::NextPhase).await;
    seen.expect(
        &mut clients[a],
        tech(C::Regenerate { card: 0 }),
        ErrorCode::WrongPhase,
    )
    .await;
    let not_a_land = card("Bear", CardType::Creature, 2);
    seen.expect(
        &mut clients[a],
        tech(C::Deploy {
            land: Some(not_a_land),
        }),
        ErrorCode::BadCard,
    )
    .await;
    ok(
        &mut clients[a],
        C::Deploy {
            land: Some(forest()),
        },
    )
    .await;
    ok(&mut clients[a], C::Deploy { land: None }).await;
    seen.expect(
        &mut clients[a],
        tech(C::Deploy { land: None }),
        ErrorCode::LimitReached,
    )
    .await;
    let (land, face_down) = (0, 1);
    let bad_card = [
        // Face down.
        C::Tap {
            card: face_down,
            mana: 0,
        },
        C::Heal {
            card: face_down,
            amount: 1,
        },
        C::Relocate {
            card: face_down,
            area: Area::Patrol,
        },
        C::Propose {
            correction: Correction::Damage {
                card: face_down,
                damage: 1,
            },
        },
        C::Rule {
            correction: Correction::Damage {
                card: face_down,
                damage: 1,
            },
        },
        // Face up.
        C::Pay {
            card: Some(land),
            amount: 1,
        },
        C::Reveal {
            card: land,
            face: troll(),
        },
        // A land is deployed as one, never revealed.
        C::Reveal {
            card: face_down,
            face: forest(),
        },
        // Play is where it is.
        C::LeavePlay {
            card: face_down,
            to: Zone::Play,
        },
    ];
    for command in bad_card {
        seen.expect(&mut clients[a], tech(command), ErrorCode::BadCard)
            .await;
    }
    for command in [
        C::Tap {
            card: land,
            mana: 2,
        },
        C::Heal {
            card: land,
            amount: 1,
        },
    ] {
        seen.expect(&mut clients[a], tech(command), ErrorCode::BadAmount)
            .await;
    }
    for command in [
        C::Pay {
            card: Some(nowhere),
            amount: 1,
        },
        C::Relocate {
            card: nowhere,
            area: Area::Patrol,
        },
    ] {
        seen.expect(&mut clients[a], tech(command), ErrorCode::UnknownCard)
            .await;
    }
    seen.expect(
        &mut clients[a],
        tech(C::Reveal {
            card: face_down,
            face: card("Ogre", CardType::Creature, 3),
        }),
        ErrorCode::NotEnoughMana,
    )
    .await;

    // Proposals: one at a time, and an accepted one must still fit the board.
    let counters = |counters| Correction::Counters {
        card: face_down,
        counters,
    };
    ok(
        &mut clients[a],
        C::Rule {
            correction: counters(2),
        },
    )
    .await;
    ok(
        &mut clients[a],
        C::Propose {
            correction: counters(0),
        },
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Propose {
            correction: counters(1),
        }),
        ErrorCode::NoProposal,
    )
    .await;
    // The card is face up now: it has no mana counters to set.
    ok(
        &mut clients[a],
        C::Reveal {
            card: face_down,
            face: troll(),
        },
    )
    .await;
    let troll_card = face_down;
    seen.expect(
        &mut clients[b],
        tech(C::Answer { accept: true }),
        ErrorCode::BadCard,
    )
    .await;
    ok(&mut clients[a], C::Answer { accept: false }).await;
    // The card has left play.
    ok(
        &mut clients[a],
        C::Deploy {
            land: Some(forest()),
        },
    )
    .await;
    let gone = 2;
    ok(
        &mut clients[a],
        C::Propose {
            correction: Correction::Damage {
                card: gone,
                damage: 0,
            },
        },
    )
    .await;
    ok(
        &mut clients[a],
        C::LeavePlay {
            card: gone,
            to: Zone::Hand,
        },
    )
    .await;
    seen.expect(
        &mut clients[b],
        tech(C::Answer { accept: true }),
        ErrorCode::UnknownCard,
    )
    .await;
    ok(&mut clients[b], C::Answer { accept: false }).await;
    // The scrapheap has emptied since.
    ok(&mut clients[a], C::Life { delta: -1 }).await;
    ok(
        &mut clients[a],
        C::Propose {
            correction: Correction::Move {
                player: ann,
                from: Zone::Scrapheap,
                to: Zone::Hand,
                count: 1,
            },
        },
    )
    .await;
    ok(&mut clients[a], C::Life { delta: 1 }).await;
    seen.expect(
        &mut clients[b],
        tech(C::Answer { accept: true }),
        ErrorCode::BadAmount,
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Answer { accept: true }),
        ErrorCode::NoProposal,
    )
    .await;
    ok(&mut clients[a], C::Answer { accept: false }).await;

    // Turn 1, Ann's missions: the Troll (haste) goes on patrol and attacks Bob's stockpile.
    ok(
        &mut clients[a],
        C::Relocate {
            card: troll_card,
            area: Area::Patrol,
        },
    )
    .await;
    ok(&mut clients[a], C::NextPhase).await;
    seen.expect(
        &mut clients[a],
        tech(C::Mission {
            attackers: Vec::new(),
            target: Target::Stockpile { player: bob },
        }),
        ErrorCode::BadCard,
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Mission {
            attackers: vec![nowhere],
            target: Target::Stockpile { player: bob },
        }),
        ErrorCode::UnknownCard,
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Mission {
            attackers: vec![troll_card],
            target: Target::Stockpile { player: ann },
        }),
        ErrorCode::UnknownPlayer,
    )
    .await;
    let attack = C::Mission {
        attackers: vec![troll_card],
        target: Target::Stockpile { player: bob },
    };
    ok(&mut clients[a], attack.clone()).await;
    seen.expect(&mut clients[a], tech(attack), ErrorCode::NoMission)
        .await;
    seen.expect(&mut clients[a], tech(C::NextPhase), ErrorCode::NoMission)
        .await;
    let block = |blocker| C::Block {
        blocks: vec![Block {
            blocker,
            attacker: troll_card,
        }],
    };
    seen.expect(
        &mut clients[b],
        tech(block(nowhere)),
        ErrorCode::UnknownCard,
    )
    .await;
    // Ann's own Troll cannot block for Bob.
    seen.expect(
        &mut clients[b],
        tech(block(troll_card)),
        ErrorCode::IllegalBlock,
    )
    .await;
    ok(&mut clients[b], C::Block { blocks: Vec::new() }).await;
    ok(&mut clients[a], C::NextPhase).await;

    // Turn 2, Bob's: every one of Ann's cards is not his.
    let not_your_card = [
        C::Regenerate { card: troll_card },
        C::Tap {
            card: land,
            mana: 1,
        },
        C::Reveal {
            card: troll_card,
            face: troll(),
        },
        C::LeavePlay {
            card: land,
            to: Zone::Hand,
        },
    ];
    for command in not_your_card {
        seen.expect(&mut clients[b], tech(command), ErrorCode::NotYourCard)
            .await;
    }
    ok(&mut clients[b], C::NextPhase).await;
    for command in [
        C::Pay {
            card: Some(land),
            amount: 1,
        },
        C::Relocate {
            card: troll_card,
            area: Area::Patrol,
        },
    ] {
        seen.expect(&mut clients[b], tech(command), ErrorCode::NotYourCard)
            .await;
    }
    ok(&mut clients[b], C::Deploy { land: None }).await;
    let bobs = 3;
    ok(&mut clients[b], C::NextPhase).await;
    seen.expect(
        &mut clients[b],
        tech(C::Mission {
            attackers: vec![troll_card],
            target: Target::Stockpile { player: ann },
        }),
        ErrorCode::NotYourCard,
    )
    .await;
    // A creature is revealed in its owner's deploy phase only.
    seen.expect(
        &mut clients[b],
        tech(C::Reveal {
            card: bobs,
            face: card("Goblin", CardType::Creature, 0),
        }),
        ErrorCode::WrongPhase,
    )
    .await;
    ok(&mut clients[b], C::NextPhase).await;

    // Turn 3, Ann's upkeep.
    // A sorcery is cast in its owner's turn only.
    seen.expect(
        &mut clients[b],
        tech(C::Reveal {
            card: bobs,
            face: card("Stone Rain", CardType::Sorcery, 0),
        }),
        ErrorCode::NotYourTurn,
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Regenerate { card: land }),
        ErrorCode::BadCard,
    )
    .await;
    // Undamaged, the Troll has nothing to regenerate; damaged, it lacks the mana.
    seen.expect(
        &mut clients[a],
        tech(C::Regenerate { card: troll_card }),
        ErrorCode::BadAmount,
    )
    .await;
    ok(
        &mut clients[a],
        C::Damage {
            target: Target::Card { card: troll_card },
            amount: 2,
        },
    )
    .await;
    seen.expect(
        &mut clients[a],
        tech(C::Regenerate { card: troll_card }),
        ErrorCode::NotEnoughMana,
    )
    .await;

    seen.check("magic_tech_requests");
    drop(clients);
    server.shutdown().await;
}

/// The moves of a game that gives out every card number, decided by the game itself from
/// `game`'s board (Ann's first turn, in her upkeep): turn after turn, the player taking it
/// deploys what he may (two cards and two Forests) and takes each card back from play at once
/// (to his hand while it holds fewer than five, else onto his stockpile, so neither runs out),
/// until cards 0–65,534 have been deployed; then the turns pass to Ann's next, and she moves on
/// to her deploy phase. Returns the events, as the server would have journaled them.
fn give_out_every_card_number(game: &mut MagicTech, ann: PlayerId) -> Vec<Event> {
    let mut out = Vec::new();
    let mut act = |game: &mut MagicTech, command: C| {
        let player = game.board().active.unwrap();
        let events = game.handle(Actor::Player(player), Command::MagicTech(command.clone()));
        out.extend(events.unwrap_or_else(|code| panic!("{command:?}: {code:?}")));
    };
    while game.board().next_card <= MAX_CARD_NUMBER {
        let player = game.board().active.unwrap();
        act(game, C::NextPhase);
        let first_turn = game.board().turn_number == 1;
        let deployments = if first_turn { 1 } else { 2 };
        let lands = std::iter::repeat_n(None, deployments).chain([Some(forest()), Some(forest())]);
        for land in lands {
            let card = game.board().next_card;
            if card > MAX_CARD_NUMBER {
                break;
            }
            act(game, C::Deploy { land });
            let hand = game.side(player).unwrap().hand;
            let to = if hand < 5 {
                Zone::Hand
            } else {
                Zone::Stockpile
            };
            act(game, C::LeavePlay { card, to });
        }
        act(game, C::NextPhase);
        act(game, C::NextPhase);
    }
    while game.board().active != Some(ann) {
        for _ in 0..3 {
            act(game, C::NextPhase);
        }
    }
    act(game, C::NextPhase);
    out
}

/// After cards 0–65,534 have been deployed, every deployment is refused: there is no number
/// left to give a card. Deploying them over a socket takes some 180,000 requests (two
/// deployments and two lands a turn, each card taken back to be deployed again): over a minute
/// in a test build, where this test takes seconds. So the game deploys them itself from the
/// board the socket left (the same decisions the server makes, on the same board), the events
/// go into the table's journal, and the server, restarted on it, takes the table up where they
/// leave it and answers the next deployment over the socket.
#[tokio::test]
async fn magic_tech_card_numbers() {
    let server = TestServer::start_with(config()).await;
    let mut seen = Seen::default();
    let (table, mut clients) = mt::started(server.addr, [40, 40]).await;
    keep_all_hands(&mut clients).await;
    let ann = clients[0].seat.unwrap().0;
    let tokens: Vec<SeatToken> = clients.iter().map(|c| c.seat.unwrap().1).collect();
    let view = clients[0].view.clone().unwrap();
    drop(clients);
    let data = server.stop().await;

    let journal = Journal::open(data.path(), Durability::Normal).unwrap();
    let journaled = journal.events(table).unwrap();
    let past: Vec<Event> = journaled
        .iter()
        .map(|(_, bytes)| wire::decode_event(bytes).unwrap())
        .collect();
    let mut game = mt::table_of(&mt::fold(&view, &past));
    let events = give_out_every_card_number(&mut game, ann);
    assert_eq!(game.board().next_card, MAX_CARD_NUMBER + 1);
    let first_seq = journaled.last().unwrap().0 + 1;
    let encoded = events.iter().map(wire::encode_event).collect();
    journal.append(table, first_seq, encoded).await.unwrap();
    journal.close().await.unwrap();

    let server = TestServer::start_on_journal(config(), data).await;
    let mut clients = Vec::new();
    for token in tokens {
        let mut client = Client::connected(server.addr).await;
        client.resume(table, token).await.unwrap();
        clients.push(client);
    }
    let board = clients[0]
        .view
        .as_ref()
        .unwrap()
        .magic_tech
        .clone()
        .unwrap();
    assert_eq!(board.next_card, MAX_CARD_NUMBER + 1);
    assert_eq!(board.active, Some(ann));
    assert_eq!(board.phase, Some(MtPhase::Deploy));
    assert_eq!((board.deployed, board.lands), (0, 0));
    assert!(game.side(ann).unwrap().hand > 0);
    let before = clients[0].fresh_snapshot().await;
    for land in [None, Some(forest())] {
        seen.expect(
            &mut clients[0],
            tech(C::Deploy { land }),
            ErrorCode::CardNumbersUsedUp,
        )
        .await;
    }
    assert_eq!(clients[0].fresh_snapshot().await, before);
    // Only deployments have run out: the turn goes on.
    ok(&mut clients[0], C::NextPhase).await;
    seen.check("magic_tech_card_numbers");
    drop(clients);
    server.shutdown().await;
}
