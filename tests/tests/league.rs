//! Ascension leagues through the real server: a season of games whose standings are the sum of
//! the games' mana points, deck power bonuses in the next game's starting life and hand size,
//! purchases refused without a trace, the two-player rule, and a league that survives a restart.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use grand_melee_e2e::{Client, PATIENCE, TestLeague, TestServer, concede_in_order};
use grand_melee_protocol::league::{MemberToken, Purchase, Rarity, bonus_for};
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage, TableView};
use grand_melee_server::ServerConfig;

const NAMES: [&str; 6] = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"];

/// The member number of `player` at the table `view` shows.
fn member_of(view: &TableView, player: u16) -> u32 {
    view.player(player).unwrap().deck.as_ref().unwrap().member
}

/// Six members play five games. Before each start every seat shows its deck's power so far; at
/// the start each deck behind the strongest gets the seed's bonus (in its starting life and
/// hand size, in the snapshot and in `game_started`); the player furthest behind decides who
/// plays first. After each game the standings are the sum of the games' mana points, and the
/// league (standings, ledgers, games) survives a restart of the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_of_six_plays_five_games_and_its_standings_are_the_sum_of_their_mana_points() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Tuesday Ascension", &NAMES).await;
    // Expected deck power by member, from the games' own standings.
    let mut power: BTreeMap<u32, u32> = BTreeMap::new();
    let mut wins: BTreeMap<u32, u32> = BTreeMap::new();
    for game in 0..5u32 {
        let table = league
            .table(&mut organiser, &format!("Week {}", game + 1), 6)
            .await;
        let mut clients = Vec::new();
        for index in 0..NAMES.len() {
            let mut client = server.client().await;
            league.sit(&mut client, table, index).await.unwrap();
            clients.push(client);
        }
        let seq = clients.last().unwrap().view.as_ref().unwrap().seq;
        for c in &mut clients {
            c.catch_up(seq).await;
        }
        let lobby = clients[0].view.clone().unwrap();
        for p in &lobby.players {
            let deck = p.deck.as_ref().unwrap();
            assert_eq!(
                p.name, NAMES[deck.member as usize],
                "seated under the league name"
            );
            assert_eq!(
                deck.power,
                power.get(&deck.member).copied().unwrap_or(0),
                "game {game}: {}'s deck power",
                p.name
            );
        }
        let strongest = power.values().copied().max().unwrap_or(0);
        let behind = |member: u32| strongest - power.get(&member).copied().unwrap_or(0);
        // Fay, always out first, falls furthest behind and decides who plays first.
        let decider = lobby.first_decider;
        if game == 0 {
            assert_eq!(decider, None, "nobody is behind before the first game");
        } else {
            let fay = lobby
                .players
                .iter()
                .find(|p| p.name == "Fay")
                .unwrap()
                .player;
            assert_eq!(
                decider,
                Some(fay),
                "game {game}: the deck furthest behind decides"
            );
            // Anyone else is refused, and nothing changes.
            let bob = usize::from(
                lobby
                    .players
                    .iter()
                    .find(|p| p.name == "Bob")
                    .unwrap()
                    .player,
            );
            let refused = clients[bob]
                .call(|id| ClientMessage::ChooseFirst { id, player: 0 })
                .await;
            assert_eq!(refused, Err(ErrorCode::NotDecider));
            if game == 2 {
                // Fay chooses Bob to play first.
                let chosen = clients[usize::from(fay)]
                    .call(|id| ClientMessage::ChooseFirst {
                        id,
                        player: bob as u16,
                    })
                    .await;
                assert!(
                    matches!(chosen, Ok(ServerMessage::Ack { .. })),
                    "{chosen:?}"
                );
            }
            // The host may not choose over the decider's head.
            let host = usize::from(lobby.host.unwrap());
            let forced = clients[host]
                .call(|id| ClientMessage::Start {
                    id,
                    first_player: Some(0),
                    seating: grand_melee_protocol::SeatingMode::Random,
                    order: Vec::new(),
                })
                .await;
            assert_eq!(forced, Err(ErrorCode::NotDecider));
        }
        let host = usize::from(clients[0].view.as_ref().unwrap().host.unwrap());
        let started = clients[host]
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
        let seq = clients[host].view.as_ref().unwrap().seq;
        for c in &mut clients {
            c.catch_up(seq).await;
        }
        let view = clients[0].fresh_snapshot().await;
        assert_eq!(
            &view,
            clients[0].view.as_ref().unwrap(),
            "the mirror folds the bonuses"
        );
        for p in &view.players {
            let member = member_of(&view, p.player);
            let expected = bonus_for(p.player, behind(member));
            assert_eq!(p.bonus, expected, "game {game}: {}'s bonus", p.name);
            let (life, cards) = expected.map_or((0, 0), |b| (b.life, b.cards));
            assert_eq!(p.life, 20 + life, "game {game}: {}'s starting life", p.name);
            assert_eq!(p.hand_size, 7 + cards, "game {game}: {}'s hand", p.name);
        }
        if game > 0 {
            let fay = view
                .players
                .iter()
                .find(|p| p.name == "Fay")
                .unwrap()
                .player;
            let bob = view
                .players
                .iter()
                .find(|p| p.name == "Bob")
                .unwrap()
                .player;
            let first = if game == 2 { bob } else { fay };
            assert_eq!(
                view.first_player,
                Some(first),
                "game {game}: who plays first"
            );
            assert_eq!(view.first_decider, Some(fay));
        }
        // Fay, Eve, Dee, Cy, Bob out in that order (Ann wins); the last game the other way
        // round (Fay wins).
        let mut order: Vec<u16> = ["Fay", "Eve", "Dee", "Cy", "Bob", "Ann"]
            .iter()
            .map(|name| {
                view.players
                    .iter()
                    .find(|p| p.name == *name)
                    .unwrap()
                    .player
            })
            .collect();
        if game == 4 {
            order.reverse();
        }
        order.pop();
        let standings = concede_in_order(&mut clients, &order).await;
        assert_eq!(standings.len(), 6);
        for s in &standings {
            let member = member_of(&view, s.player);
            *power.entry(member).or_default() += u32::from(s.mana_points);
            if s.place == 1 {
                *wins.entry(member).or_default() += 1;
            }
        }
        let standings = league.view(&mut organiser).await;
        for m in &standings.standings {
            assert_eq!(
                m.power, power[&m.member],
                "after game {game}: {}'s power",
                m.name
            );
            assert_eq!(m.balance, m.power, "nothing spent yet");
            assert_eq!(m.games, game + 1);
            assert_eq!(m.wins, wins.get(&m.member).copied().unwrap_or(0));
        }
        assert_eq!(standings.games.len(), game as usize + 1);
        assert!(standings.games.iter().all(|g| g.finished_at_ms.is_some()));
    }
    // 5 + 4 + 3 + 2 + 1 a game, and the standings are sorted by power.
    let standings = league.view(&mut organiser).await;
    assert_eq!(
        standings.standings.iter().map(|m| m.power).sum::<u32>(),
        5 * 15
    );
    assert_eq!(standings.standings[0].name, "Ann");
    assert_eq!(standings.standings[0].power, 4 * 5);
    assert!(
        standings
            .standings
            .windows(2)
            .all(|w| w[0].power >= w[1].power)
    );
    // Each deck's ledger: registered, then five credits that sum to its power.
    for (member, _, _) in &league.members {
        let (deck, ledger) = league.deck(&mut organiser, *member).await;
        assert_eq!(ledger.len(), 6);
        assert_eq!(deck.power, power[member]);
        assert_eq!(deck.games, 5);
    }
    // Replays of league games name the league.
    let replays = organiser
        .call(|id| ClientMessage::ListReplays {
            id,
            from: 0,
            limit: 100,
        })
        .await
        .unwrap();
    let ServerMessage::Replays { replays, .. } = replays else {
        panic!("expected replays");
    };
    assert_eq!(replays.len(), 5);
    assert!(replays.iter().all(|r| r.league == Some(league.id)));
    drop(organiser);

    // The league survives a restart on the same journal.
    let restarted = server.restart(ServerConfig::default()).await;
    let mut reader = restarted.client().await;
    assert_eq!(league.view(&mut reader).await, standings);
}

/// Purchases against the seed's limits through the server: what is refused changes nothing in
/// the ledger, what is accepted is recorded with its cost, and spending never lowers power.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_purchases_leave_the_ledger_untouched() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Spenders", &NAMES[..4]).await;
    let (_, mut clients) = league.started(server.addr, "Week 1", &[0, 1, 2, 3]).await;
    // Bob, Cy, Dee out: Ann earns 3.
    let view = clients[0].view.clone().unwrap();
    let order: Vec<u16> = ["Bob", "Cy", "Dee"]
        .iter()
        .map(|n| view.players.iter().find(|p| p.name == *n).unwrap().player)
        .collect();
    concede_in_order(&mut clients, &order).await;
    let ann = league.members[0].2;
    let (before, ledger_before) = league.deck(&mut organiser, 0).await;
    assert_eq!(before.power, 3);
    let buy = |purchase: Purchase, remove: u8, token: MemberToken| {
        let league = league.id;
        move |id| ClientMessage::Buy {
            id,
            league,
            token,
            purchase,
            remove,
        }
    };
    for (purchase, remove, token, code) in [
        // Three rares cost 12 of Ann's 3 points.
        (
            Purchase::Cards {
                rarity: Rarity::Rare,
                count: 1,
                gold: false,
                legend: true,
                card: Some("Tetsuo Umezawa".into()),
                set: Some("Mirage".into()),
            },
            0,
            ann,
            ErrorCode::NotEnoughPoints,
        ),
        (
            Purchase::ExpansionSet {
                name: "Weatherlight".into(),
            },
            0,
            ann,
            ErrorCode::NotEnoughPoints,
        ),
        (
            Purchase::ExpansionSet {
                name: "visions".into(),
            },
            0,
            ann,
            ErrorCode::BadPurchase,
        ),
        (
            Purchase::BasicLands { count: 3 },
            0,
            ann,
            ErrorCode::BadPurchase,
        ),
        (
            Purchase::Cards {
                rarity: Rarity::Common,
                count: 3,
                gold: false,
                legend: false,
                card: Some("Shock".into()),
                set: Some("Visions".into()),
            },
            0,
            ann,
            ErrorCode::PurchaseLimit,
        ),
        (
            Purchase::BasicLands { count: 2 },
            5,
            ann,
            ErrorCode::BadPurchase,
        ),
        (
            Purchase::Sideboard,
            0,
            MemberToken::new_random(),
            ErrorCode::NotAMember,
        ),
    ] {
        let answer = organiser.call(buy(purchase.clone(), remove, token)).await;
        assert_eq!(answer.err(), Some(code), "{purchase:?}");
        let (after, ledger) = league.deck(&mut organiser, 0).await;
        assert_eq!(
            (&after, &ledger),
            (&before, &ledger_before),
            "{purchase:?} left a trace"
        );
    }
    // What Ann can afford: two lands (1) and an uncommon gold card (3 − 1 = 2 … 2 + 1 = 3 > 2).
    let lands = organiser
        .call(buy(Purchase::BasicLands { count: 2 }, 0, ann))
        .await
        .unwrap();
    let ServerMessage::Deck { deck, ledger, .. } = lands else {
        panic!("expected deck");
    };
    assert_eq!(
        (deck.power, deck.spent, deck.balance(), deck.cards),
        (3, 1, 2, 47)
    );
    assert_eq!(ledger.len(), ledger_before.len() + 1);
    let gold = Purchase::Cards {
        rarity: Rarity::Uncommon,
        count: 1,
        gold: true,
        legend: false,
        card: Some("Lim-Dûl's Vault".into()),
        set: Some("Visions".into()),
    };
    let refused = organiser.call(buy(gold, 0, ann)).await;
    assert_eq!(refused.err(), Some(ErrorCode::NotEnoughPoints), "2 + 1 > 2");
    let uncommon = Purchase::Cards {
        rarity: Rarity::Uncommon,
        count: 1,
        gold: false,
        legend: false,
        card: Some("Man-o'-War".into()),
        set: Some("Visions".into()),
    };
    let bought = organiser.call(buy(uncommon, 0, ann)).await.unwrap();
    let ServerMessage::Deck { deck, .. } = bought else {
        panic!("expected deck");
    };
    assert_eq!((deck.power, deck.balance(), deck.cards), (3, 0, 48));
    // A second registration is refused too.
    let again = organiser
        .call(|id| ClientMessage::RegisterDeck {
            id,
            league: league.id,
            token: ann,
            deck: grand_melee_protocol::league::DeckSpec {
                name: "Another".into(),
                alliance: grand_melee_protocol::league::Alliance::BlackRed,
                basic_set: "Tempest".into(),
                expansion_set: "Stronghold".into(),
            },
        })
        .await;
    assert_eq!(again.err(), Some(ErrorCode::DeckRegistered));
}

/// In two-player league games nobody plays the same opponent twice in a row; a table of more
/// seats, or another opponent, is fine; and a league table takes members only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_player_league_games_never_repeat_an_opponent_in_a_row() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Duels", &NAMES[..3]).await;
    let table = league.table(&mut organiser, "Ann v Bob", 2).await;
    let mut ann = server.client().await;
    let mut bob = server.client().await;
    // A league table takes members only, with their token.
    let mut stranger = server.client().await;
    assert_eq!(
        stranger.join(table, "Zed").await,
        Err(ErrorCode::LeagueSeat)
    );
    league.sit(&mut ann, table, 0).await.unwrap();
    assert_eq!(
        league.sit(&mut stranger, table, 0).await,
        Err(ErrorCode::AlreadySeated),
        "a member sits once"
    );
    league.sit(&mut bob, table, 1).await.unwrap();
    let seq = bob.view.as_ref().unwrap().seq;
    ann.catch_up(seq).await;
    let started = ann
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(matches!(started, Ok(ServerMessage::Ack { .. })));
    let bob_player = bob.seat.unwrap().0;
    let mut clients = vec![ann, bob];
    concede_in_order(&mut clients, &[bob_player]).await;

    // Bob then plays Cy: his last opponent is Cy now, but Ann's is still Bob.
    let (_, mut clients) = league.started(server.addr, "Bob v Cy", &[1, 2]).await;
    let cy_player = clients[1].seat.unwrap().0;
    concede_in_order(&mut clients, &[cy_player]).await;

    let rematch = league.table(&mut organiser, "Rematch", 2).await;
    let mut ann = server.client().await;
    league.sit(&mut ann, rematch, 0).await.unwrap();
    let ann_seat = ann.seat.unwrap();
    // Across a restart (the rule reads the seats' last duels from the journal): Bob may not
    // sit with Ann, because Ann's last opponent was Bob; Cy may.
    drop((ann, organiser));
    let server = server.restart(ServerConfig::default()).await;
    let mut organiser = server.client().await;
    let mut bob = server.client().await;
    let mut cy = server.client().await;
    assert_eq!(
        league.sit(&mut bob, rematch, 1).await,
        Err(ErrorCode::SameOpponent)
    );
    league.sit(&mut cy, rematch, 2).await.unwrap();
    // A member holds one unfinished league seat at a time: Ann leaves the rematch first.
    let mut ann = server.client().await;
    assert_eq!(ann.resume(rematch, ann_seat.1).await, Ok(ann_seat.0));
    let left = ann.call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    // A bigger table is no two-player game: Bob may sit with Ann there.
    let bigger = league.table(&mut organiser, "Three", 3).await;
    let mut ann2 = server.client().await;
    let mut bob2 = server.client().await;
    league.sit(&mut ann2, bigger, 0).await.unwrap();
    league.sit(&mut bob2, bigger, 1).await.unwrap();
    // … but it may not start as a two-player game between them.
    let seq = bob2.view.as_ref().unwrap().seq;
    ann2.catch_up(seq).await;
    let host = ann2.view.as_ref().unwrap().host.unwrap();
    let starter = if ann2.seat.unwrap().0 == host {
        &mut ann2
    } else {
        &mut bob2
    };
    let start = starter
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert_eq!(start.err(), Some(ErrorCode::SameOpponent));
}

/// A league table cannot be made without the organiser's secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_organiser_creates_league_tables() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut league = TestLeague::create(&mut client, "Closed", &NAMES[..2]).await;
    league.organiser = grand_melee_protocol::OrganiserSecret::new_random();
    let created = league.create_table(&mut client, "Sneaky", 4).await;
    assert_eq!(created.err(), Some(ErrorCode::NotOrganiser));
    let unknown = client
        .call(|id| ClientMessage::GetLeague {
            id,
            league: grand_melee_protocol::league::LeagueId::new_random(),
            from: 0,
            limit: 100,
        })
        .await;
    assert_eq!(unknown.err(), Some(ErrorCode::UnknownLeague));
    let buy_elsewhere = client
        .call(|id| ClientMessage::Buy {
            id,
            league: grand_melee_protocol::league::LeagueId::new_random(),
            token: league.members[0].2,
            purchase: Purchase::Sideboard,
            remove: 0,
        })
        .await;
    assert_eq!(buy_elsewhere.err(), Some(ErrorCode::UnknownLeague));
    let mut other = Client::connected(server.addr).await;
    let taken = other
        .call(|id| ClientMessage::CreateLeague {
            id,
            name: "closed".into(),
            password: None,
        })
        .await;
    assert_eq!(taken.err(), Some(ErrorCode::NameTaken));
}

/// The player ids of `names` at the table `view` shows.
fn players_named(view: &TableView, names: &[&str]) -> Vec<u16> {
    names
        .iter()
        .map(|n| view.players.iter().find(|p| p.name == *n).unwrap().player)
        .collect()
}

/// A choice of the first player lasts only while its maker is the decider: Eve (5 behind)
/// chooses Ann, Fay (6 behind) sits down and decides instead, a spectator arrives, Fay leaves.
/// Eve decides again, but her old choice is gone: the spectator's fold of the events equals a
/// fresh snapshot (the snapshot he started from could not have told him of a hidden choice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_choice_is_dropped_when_its_maker_stops_deciding_so_folds_match_snapshots() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Choosers", &NAMES).await;
    // Week 1: Fay, Eve, Dee, Cy, Bob out in that order: Ann 5, Bob 4, Cy 3, Dee 2, Eve 1, Fay 0.
    let (_, mut clients) = league
        .started(server.addr, "Week 1", &[0, 1, 2, 3, 4, 5])
        .await;
    let order = players_named(
        clients[0].view.as_ref().unwrap(),
        &["Fay", "Eve", "Dee", "Cy", "Bob"],
    );
    concede_in_order(&mut clients, &order).await;
    // Week 2: Ann beats Bob: Ann 6.
    let (_, mut clients) = league.started(server.addr, "Week 2", &[0, 1]).await;
    let bob = clients[1].seat.unwrap().0;
    concede_in_order(&mut clients, &[bob]).await;

    let table = league.table(&mut organiser, "Week 3", 4).await;
    let mut seated = Vec::new();
    for index in [0, 2, 4] {
        let mut client = server.client().await;
        league.sit(&mut client, table, index).await.unwrap();
        seated.push(client);
    }
    let seq = seated[2].view.as_ref().unwrap().seq;
    let (ann, eve) = (seated[0].seat.unwrap().0, seated[2].seat.unwrap().0);
    assert_eq!(seated[2].view.as_ref().unwrap().first_decider, Some(eve));
    seated[0].catch_up(seq).await;
    let chosen = seated[2]
        .call(|id| ClientMessage::ChooseFirst { id, player: ann })
        .await;
    assert!(
        matches!(chosen, Ok(ServerMessage::Ack { .. })),
        "{chosen:?}"
    );
    assert_eq!(seated[2].view.as_ref().unwrap().first_choice, Some(ann));
    let mut fay = server.client().await;
    let fay_player = league.sit(&mut fay, table, 5).await.unwrap();
    let lobby = fay.view.clone().unwrap();
    assert_eq!(lobby.first_decider, Some(fay_player));
    assert_eq!(lobby.first_choice, None, "Fay has not chosen");
    let mut spectator = server.client().await;
    spectator.watch(table).await;
    let left = fay.call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    spectator
        .until_event(|e| matches!(e, grand_melee_protocol::Event::PlayerLeft { .. }).then_some(()))
        .await;
    let fresh = spectator.fresh_snapshot().await;
    assert_eq!(
        &fresh,
        spectator.view.as_ref().unwrap(),
        "the spectator's fold equals a fresh snapshot"
    );
    assert_eq!(fresh.first_decider, Some(eve), "Eve decides again");
    assert_eq!(
        fresh.first_choice, None,
        "her choice was dropped with Fay's arrival"
    );
    // Eve chooses again, and the start follows her new choice.
    let chosen = seated[2]
        .call(|id| ClientMessage::ChooseFirst { id, player: eve })
        .await;
    assert!(
        matches!(chosen, Ok(ServerMessage::Ack { .. })),
        "{chosen:?}"
    );
    let seq = seated[2].view.as_ref().unwrap().seq;
    spectator.catch_up(seq).await;
    assert_eq!(spectator.view.as_ref().unwrap().first_choice, Some(eve));
}

/// A member holds one unfinished league seat at a time: Eve and Fay sit at the two-player table
/// "one"; neither may also sit at "two" (or they could play each other twice in a row, both
/// games started before either ended). Leaving a lobby frees the seat; the rule holds across a
/// restart (the tables' seats are read back from the journal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_holds_one_unfinished_league_seat_at_a_time() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Duellists", &["Eve", "Fay", "Gus"]).await;
    let one = league.table(&mut organiser, "one", 2).await;
    let two = league.table(&mut organiser, "two", 2).await;
    let mut eve = server.client().await;
    let mut fay = server.client().await;
    league.sit(&mut eve, one, 0).await.unwrap();
    league.sit(&mut fay, one, 1).await.unwrap();
    let mut eve2 = server.client().await;
    let mut fay2 = server.client().await;
    assert_eq!(
        league.sit(&mut eve2, two, 0).await,
        Err(ErrorCode::AlreadySeated)
    );
    assert_eq!(
        league.sit(&mut fay2, two, 1).await,
        Err(ErrorCode::AlreadySeated)
    );
    // Gus may: he sits nowhere else.
    let mut gus = server.client().await;
    league.sit(&mut gus, two, 2).await.unwrap();
    // Fay leaves "one": her seat is free, and she may sit at "two" (not against Eve).
    let left = fay.call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    league.sit(&mut fay2, two, 1).await.unwrap();
    let mut fay3 = server.client().await;
    assert_eq!(
        league.sit(&mut fay3, one, 1).await,
        Err(ErrorCode::AlreadySeated),
        "now she sits at two"
    );
    let seats = [fay2.seat.unwrap(), gus.seat.unwrap()];
    drop((eve, fay, eve2, fay2, fay3, gus, organiser));
    let server = server.restart(ServerConfig::default()).await;
    let mut fay = server.client().await;
    assert_eq!(
        league.sit(&mut fay, one, 1).await,
        Err(ErrorCode::AlreadySeated),
        "after a restart too"
    );
    // A finished game frees its seats: Fay and Gus play at "two", then Fay may sit at "one".
    let mut clients = Vec::new();
    for (player, token) in seats {
        let mut client = server.client().await;
        assert_eq!(client.resume(two, token).await, Ok(player));
        client.seat = Some((player, token));
        clients.push(client);
    }
    let seq = clients[1].view.as_ref().unwrap().seq;
    clients[0].catch_up(seq).await;
    let host = clients[0].view.as_ref().unwrap().host.unwrap();
    let starter = clients
        .iter_mut()
        .find(|c| c.seat.map(|s| s.0) == Some(host))
        .unwrap();
    let started = starter
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
    let gus = seats[1].0;
    concede_in_order(&mut clients, &[gus]).await;
    league.sit(&mut fay, one, 1).await.unwrap();
}

/// The table list, one page of up to 100.
async fn listed(client: &mut Client) -> Vec<grand_melee_protocol::TableSummary> {
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
    while !listed(client).await.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still listed: {:?}",
            listed(client).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Asks for the league's games every 50 ms until there are none: a closed table leaves the
/// journal just after it leaves the table list. Fails after [`PATIENCE`].
async fn until_no_game(league: &TestLeague, client: &mut Client) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let games = league.view(client).await.games;
        if games.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "an unplayed lobby is no game of the league: {games:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Issue 43, item 1: anyone may create a league, and a league table's empty lobby was kept
/// for ever, across restarts: three of them filled `--max-tables 3` for good. Now an empty
/// league lobby closes like any other (the unjoined-table time, or the grace period once
/// someone sat at it), leaves the journal and the league's games, and gives its place back;
/// a restart does not bring it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_league_lobby_closes_and_gives_its_place_back_across_a_restart() {
    let config = || ServerConfig {
        max_tables: 3,
        max_tables_per_ip: 0,
        table_creations_per_minute: 0,
        unjoined_table_secs: 5,
        grace_period_secs: 3,
        ..ServerConfig::default()
    };
    let server = TestServer::start_with(config()).await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Anyone's", &NAMES[..2]).await;
    for name in ["one", "two", "three"] {
        league.table(&mut organiser, name, 2).await;
    }
    assert_eq!(
        league.create_table(&mut organiser, "four", 2).await,
        Err(ErrorCode::ServerBusy)
    );
    // A member sits at one and leaves again: it is an empty lobby like the others.
    let games = league.view(&mut organiser).await.games;
    assert_eq!(games.len(), 3);
    let mut ann = server.client().await;
    league.sit(&mut ann, games[0].table, 0).await.unwrap();
    let left = ann.call(|id| ClientMessage::Leave { id }).await;
    assert!(matches!(left, Ok(ServerMessage::Left { .. })), "{left:?}");
    drop((organiser, ann));

    let mut newcomer = server.client().await;
    until_no_table(&mut newcomer).await;
    until_no_game(&league, &mut newcomer).await;
    // The places are free again; three lobbies are left empty across a restart: none is
    // left after it (a lobby nobody sits at is not kept).
    for name in ["one", "two", "three"] {
        league.table(&mut newcomer, name, 2).await;
    }
    drop(newcomer);
    let server = server.restart(config()).await;
    let mut reader = server.client().await;
    until_no_table(&mut reader).await;
    until_no_game(&league, &mut reader).await;
    for name in ["one", "two", "three"] {
        league.table(&mut reader, name, 2).await;
    }
}

/// Wrong member tokens and organiser secrets are guesses, limited per address and league like
/// wrong passwords: past the burst the server answers `rate_limited` without looking. Another
/// address is not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guessed_member_tokens_and_organiser_secrets_are_throttled() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Guarded", &NAMES[..2]).await;
    let table = league.table(&mut organiser, "Week 1", 2).await;
    let mut guesser = Client::connected_from(server.addr, "127.0.0.7".parse().unwrap()).await;
    let mut codes = Vec::new();
    for _ in 0..10 {
        let answer = guesser
            .call(|id| ClientMessage::Buy {
                id,
                league: league.id,
                token: MemberToken::new_random(),
                purchase: Purchase::Sideboard,
                remove: 0,
            })
            .await;
        codes.push(answer.err().unwrap());
    }
    assert_eq!(codes[0], ErrorCode::NotAMember);
    assert_eq!(codes.last(), Some(&ErrorCode::RateLimited), "{codes:?}");
    // Seat guesses at the league's table count against the same budget.
    let seat = guesser
        .call(|id| ClientMessage::Join {
            id,
            table,
            name: "Guess".into(),
            password: None,
            entropy: None,
            member_token: Some(MemberToken::new_random()),
        })
        .await;
    assert_eq!(seat.err(), Some(ErrorCode::RateLimited));
    // Organiser secrets, from another address.
    let mut forger = Client::connected_from(server.addr, "127.0.0.8".parse().unwrap()).await;
    let mut codes = Vec::new();
    for _ in 0..10 {
        let mut forged = league.clone();
        forged.organiser = grand_melee_protocol::OrganiserSecret::new_random();
        codes.push(
            forged
                .create_table(&mut forger, "Forged", 2)
                .await
                .err()
                .unwrap(),
        );
    }
    assert_eq!(codes[0], ErrorCode::NotOrganiser);
    assert_eq!(codes.last(), Some(&ErrorCode::RateLimited), "{codes:?}");
    // The members and the organiser, elsewhere, are not affected.
    let mut ann = server.client().await;
    league.sit(&mut ann, table, 0).await.unwrap();
    league.table(&mut organiser, "Week 2", 2).await;
}

/// A card bought names its set: the deck's basic set or one of its expansion sets, nothing else
/// (the seed: "he can only buy cards from that expansion until he buys another expansion"); and
/// the copies of a card add up over the ledger: 2 + 2 copies with the limit at 2 are refused.
/// Refusals change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_come_from_the_decks_sets_and_their_copies_add_up_over_the_ledger() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Collectors", &NAMES[..5]).await;
    let (_, mut clients) = league
        .started(server.addr, "Week 1", &[0, 1, 2, 3, 4])
        .await;
    let order = players_named(
        clients[0].view.as_ref().unwrap(),
        &["Eve", "Dee", "Cy", "Bob"],
    );
    concede_in_order(&mut clients, &order).await;
    let ann = league.members[0].2;
    let buy = |purchase: Purchase| {
        let league = league.id;
        move |id| ClientMessage::Buy {
            id,
            league,
            token: ann,
            purchase,
            remove: 0,
        }
    };
    let common = |count: u8, card: &str, set: Option<&str>| Purchase::Cards {
        rarity: Rarity::Common,
        count,
        gold: false,
        legend: false,
        card: Some(card.into()),
        set: set.map(Into::into),
    };
    // Ann earned 4. Two Shocks from her basic set, Mirage: 2 points.
    let bought = organiser
        .call(buy(common(2, "Shock", Some("Mirage"))))
        .await;
    assert!(
        matches!(bought, Ok(ServerMessage::Deck { .. })),
        "{bought:?}"
    );
    let (before, ledger_before) = league.deck(&mut organiser, 0).await;
    assert_eq!(before.balance(), 2);
    for (purchase, code) in [
        // Two more Shocks: 2 + 2 copies, and the deck may hold 2.
        (common(2, "shock", Some("Mirage")), ErrorCode::PurchaseLimit),
        (
            common(1, "Shock", Some("Visions")),
            ErrorCode::PurchaseLimit,
        ),
        // A set the deck has not bought.
        (
            common(1, "Mogg Fanatic", Some("Tempest")),
            ErrorCode::BadPurchase,
        ),
        // No set named.
        (common(1, "Mogg Fanatic", None), ErrorCode::BadPurchase),
    ] {
        let answer = organiser.call(buy(purchase.clone())).await;
        assert_eq!(answer.err(), Some(code), "{purchase:?}");
        let after = league.deck(&mut organiser, 0).await;
        assert_eq!(
            after,
            (before.clone(), ledger_before.clone()),
            "{purchase:?} left a trace"
        );
    }
    // Her expansion set, in any case, is fine.
    let bought = organiser
        .call(buy(common(2, "Quirion Elves", Some("visions"))))
        .await;
    let Ok(ServerMessage::Deck { deck, .. }) = bought else {
        panic!("expected deck, got {bought:?}");
    };
    assert_eq!((deck.balance(), deck.cards), (0, 49));
    assert_eq!(deck.copies.get("shock"), Some(&2));
}

/// A lobby folded from the empty view (`get_events` from event 1, as a replay is rebuilt) equals
/// the lobby's snapshot except for `dice_commitment`, which no event carries before
/// `game_started` (the empty view starts with it empty, `spectators_muted` false and
/// `mulligan_deciders` empty); from `game_started` on the fold equals the snapshot exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_folded_from_the_empty_view_lacks_only_the_dice_commitment() {
    let server = TestServer::start().await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Folders", &NAMES[..2]).await;
    let table = league.table(&mut organiser, "Week 1", 2).await;
    let mut clients = Vec::new();
    for index in 0..2 {
        let mut client = server.client().await;
        league.sit(&mut client, table, index).await.unwrap();
        clients.push(client);
    }
    let fold = |view: &TableView, events: &[grand_melee_protocol::Event]| {
        let empty = TableView::new(table, view.name.clone(), view.settings.clone());
        assert_eq!(
            (
                empty.dice_commitment.as_str(),
                empty.spectators_muted,
                empty.mulligan_deciders.len()
            ),
            ("", false, 0),
            "the empty view"
        );
        let mut mirror = grand_melee_protocol::Mirror::new(&empty).unwrap();
        mirror.apply_batch(1, events).unwrap();
        mirror.view()
    };
    let lobby = clients[1].fresh_snapshot().await;
    let events = clients[1].past_events(table).await;
    assert_eq!(events.len() as u64, lobby.seq);
    let mut folded = fold(&lobby, &events);
    assert_eq!(folded.dice_commitment, "", "no event carries it yet");
    assert_eq!(lobby.dice_commitment.len(), 64, "the snapshot shows it");
    folded.dice_commitment.clone_from(&lobby.dice_commitment);
    assert_eq!(folded, lobby, "the rest is the lobby's snapshot");
    let seq = lobby.seq;
    clients[0].catch_up(seq).await;
    let host = clients[0].view.as_ref().unwrap().host.unwrap();
    let starter = clients
        .iter_mut()
        .find(|c| c.seat.map(|s| s.0) == Some(host))
        .unwrap();
    let started = starter
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
    let now = starter.fresh_snapshot().await;
    let events = starter.past_events(table).await;
    assert_eq!(
        fold(&now, &events),
        now,
        "game_started carries the commitment"
    );
}

/// An alliance that is not one of the seed's ten is refused (`bad_message`, with the request's
/// id) with a message that names the field and the ten names; nothing is registered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_alliance_is_refused_with_a_message_naming_the_field() {
    use grand_melee_protocol::league::{Alliance, DeckSpec};
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let league = TestLeague::create(&mut client, "Colours", &[]).await;
    let (member, token) = league.join(&mut client, "Ann").await;
    let id = 900;
    let valid = grand_melee_protocol::encode_client(&ClientMessage::RegisterDeck {
        id,
        league: league.id,
        token,
        deck: DeckSpec {
            name: "Crusade".into(),
            alliance: Alliance::WhiteBlue,
            basic_set: "Mirage".into(),
            expansion_set: "Visions".into(),
        },
    });
    // The same request with "black_blue", which is no alliance, in place of "white_blue".
    let at = valid.windows(10).position(|w| w == b"white_blue").unwrap();
    let mut bad = valid.clone();
    bad[at..at + 10].copy_from_slice(b"black_blue");
    client.send_raw(bad);
    let (code, message) = client
        .until(|r| match r {
            grand_melee_e2e::Received::Message(m, _) => match &**m {
                ServerMessage::Error {
                    reply_to: Some(r),
                    code,
                    message,
                    ..
                } if *r == id => Some((*code, message.clone())),
                _ => None,
            },
            _ => None,
        })
        .await;
    assert_eq!(code, ErrorCode::BadMessage);
    assert!(message.contains("alliance"), "{message}");
    assert!(message.contains("green_white_blue"), "{message}");
    let (deck, ledger) = league.deck(&mut client, member).await;
    assert!(
        deck.spec.is_none() && ledger.is_empty(),
        "nothing registered"
    );
}

/// Issue 43: `register_deck` took an expansion set that is the basic set again. Now it is
/// `bad_purchase`, in any case or look-alike letters, and nothing is registered: the member
/// registers a real pair afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deck_whose_expansion_set_is_its_basic_set_is_refused() {
    use grand_melee_protocol::league::{Alliance, DeckSpec};
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let league = TestLeague::create(&mut client, "Sets", &[]).await;
    let (_, token) = league.join(&mut client, "Ann").await;
    let register = |expansion: &str| {
        let expansion = expansion.to_owned();
        move |id| ClientMessage::RegisterDeck {
            id,
            league: league.id,
            token,
            deck: DeckSpec {
                name: "Crusade".into(),
                alliance: Alliance::WhiteBlue,
                basic_set: "Mirage".into(),
                expansion_set: expansion,
            },
        }
    };
    for same in ["Mirage", "MIRAGE", "Mіrage"] {
        let answer = client.call(register(same)).await;
        assert_eq!(answer.err(), Some(ErrorCode::BadPurchase), "{same}");
    }
    let answer = client.call(register("Visions")).await;
    assert!(
        matches!(answer, Ok(ServerMessage::Deck { .. })),
        "{answer:?}"
    );
}
