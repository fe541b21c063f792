//! "Today's mountain" on the real server: every climb of the day deals the same mountain from
//! the day's secret (committed to, not revealed at the end of a climb), the day's standings
//! (one climb each, by ending then cards left), league climbs, the refusals (each changing
//! nothing), and the server's mountain secret kept across a restart.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, CreateTable, TestLeague, TestServer};
use grand_melee_loadtest::mountain_magic_bot::choose;
use grand_melee_loadtest::rng::Rng;
use grand_melee_protocol::league::LeagueId;
use grand_melee_protocol::mountain_magic::MountainMagic;
use grand_melee_protocol::mountain_magic::day::Day;
use grand_melee_protocol::mountain_magic_types::{
    ClimbEnd, DayClimb, DeckFile, DeckLine, MountainCommand, MountainMagicSettings,
};
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Event, GameKind, Mirror, ServerMessage, StageName, TableId, TableView,
};
use grand_melee_server::ServerConfig;

fn config() -> ServerConfig {
    ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    }
}

fn today() -> Day {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    Day::of(secs)
}

fn day_settings(day: &str, league: Option<LeagueId>) -> CreateTable {
    CreateTable::new("today's mountain", 1)
        .game(GameKind::MountainMagic)
        .mountain_magic(MountainMagicSettings {
            day: Some(day.to_owned()),
            league,
            ..MountainMagicSettings::default()
        })
}

/// The mirror equals a fresh snapshot.
async fn agrees(client: &mut Client) -> TableView {
    let fresh = client.fresh_snapshot().await;
    client.catch_up(fresh.seq).await;
    assert_eq!(client.view.as_ref().unwrap(), &fresh);
    fresh
}

async fn start(client: &mut Client) {
    client
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: Default::default(),
            order: Vec::new(),
        })
        .await
        .unwrap();
    let seq = client.fresh_snapshot().await.seq;
    client.catch_up(seq).await;
}

/// `name`'s started climb of today's mountain, on a new client.
async fn climber(server: &TestServer, name: &str) -> (TableId, Client) {
    let mut client = server.client().await;
    let table = client.create(day_settings("today", None)).await.unwrap();
    client.join(table, name).await.unwrap();
    start(&mut client).await;
    (table, client)
}

/// Plays the climb to its end with the load test's policy; returns the last view.
async fn play_out(client: &mut Client, seed: u64) -> TableView {
    let mut rng = Rng::new(seed, 1);
    let mut acted = 0;
    loop {
        let view = agrees(client).await;
        if view.stage == StageName::Finished {
            return view;
        }
        let mirror = Mirror::<MountainMagic>::of(&view).unwrap();
        let command = choose(mirror.table().climb(), &mut rng, acted)
            .unwrap_or_else(|| panic!("nothing to do in {:?}", mirror.table().climb().view()));
        acted = match command {
            MountainCommand::EndTurn => 0,
            MountainCommand::Attack { .. }
            | MountainCommand::Cast { .. }
            | MountainCommand::Activate { .. } => acted + 1,
            _ => acted,
        };
        client
            .call(|id| ClientMessage::mountain_magic(id, command.clone()))
            .await
            .unwrap();
    }
}

async fn ask_standings(
    client: &mut Client,
    day: &str,
    league: Option<LeagueId>,
) -> Result<(String, String, Option<String>, Vec<DayClimb>, u32), ErrorCode> {
    let answer = client
        .call(|id| ClientMessage::MountainMagicStandings {
            id,
            day: day.to_owned(),
            league,
            from: 0,
            limit: 100,
        })
        .await?;
    let ServerMessage::MountainMagicStandings {
        day,
        commitment,
        secret,
        standings,
        climbs,
        ..
    } = answer
    else {
        panic!("expected the standings: {answer:?}");
    };
    Ok((day, commitment, secret, standings, climbs))
}

/// What the climber saw dealt: the bottom row and the first cards turned over.
async fn first_cards(client: &mut Client) -> Vec<u16> {
    let mut seen: Vec<u16> = agrees(client).await.mountain_magic.unwrap().mountain[0]
        .iter()
        .flatten()
        .copied()
        .collect();
    for _ in 0..3 {
        client
            .call(|id| ClientMessage::mountain_magic(id, MountainCommand::Flip))
            .await
            .unwrap();
        let view = agrees(client).await;
        let climb = view.mountain_magic.unwrap();
        seen.push(climb.flipped.unwrap());
        client
            .call(|id| ClientMessage::mountain_magic(id, MountainCommand::Discard))
            .await
            .unwrap();
    }
    seen
}

#[tokio::test]
async fn every_climb_of_the_day_deals_the_same_mountain_and_keeps_the_secret() {
    let server = TestServer::start_with(config()).await;
    let (first, mut ann) = climber(&server, "Ann").await;
    let (second, mut bob) = climber(&server, "Bob").await;
    let ann_view = agrees(&mut ann).await;
    let own = ann_view.settings.mountain_magic.as_ref().unwrap();
    assert_eq!(own.day.as_deref(), Some(today().to_string().as_str()));
    // The same commitment at both tables, the day's; the climbers' entropy differs and is not
    // mixed in: the same cards.
    let bob_view = agrees(&mut bob).await;
    assert_eq!(ann_view.dice_commitment, bob_view.dice_commitment);
    let mut lookup = server.client().await;
    let (day, commitment, secret, _, _) = ask_standings(&mut lookup, "today", None).await.unwrap();
    assert_eq!(day, today().to_string());
    assert_eq!(commitment, ann_view.dice_commitment);
    assert_eq!(secret, None, "the day is not over");
    assert_eq!(first_cards(&mut ann).await, first_cards(&mut bob).await);
    // A climb of one's own deals another mountain, with another commitment.
    let mut cai = server.client().await;
    let own_table = cai
        .create(CreateTable::new("mine", 1).game(GameKind::MountainMagic))
        .await
        .unwrap();
    cai.join(own_table, "Cai").await.unwrap();
    start(&mut cai).await;
    assert_ne!(agrees(&mut cai).await.dice_commitment, commitment);
    // Over: no dice revealed at either table (that would give the day's deal away).
    for (client, table) in [(&mut ann, first), (&mut bob, second)] {
        client
            .call(|id| ClientMessage::Concede { id })
            .await
            .unwrap();
        let end = agrees(client).await;
        assert_eq!(end.stage, StageName::Finished);
        assert_eq!(end.dice_secret, None);
        let events = client
            .call(|id| ClientMessage::GetEvents {
                id,
                table,
                from_seq: 1,
                limit: 500,
            })
            .await
            .unwrap();
        let ServerMessage::PastEvents { events, .. } = events else {
            panic!("{events:?}");
        };
        assert!(events.iter().any(|e| matches!(e, Event::GameOver { .. })));
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::DiceRevealed { .. }))
        );
    }
    // The climb of one's own reveals its dice as always.
    cai.call(|id| ClientMessage::Concede { id }).await.unwrap();
    assert!(agrees(&mut cai).await.dice_secret.is_some());
}

#[tokio::test]
async fn the_days_standings_rank_each_climbers_first_climb() {
    let server = TestServer::start_with(config()).await;
    let mut played = Vec::new();
    for (k, name) in ["Ann", "Bob", "Cai"].into_iter().enumerate() {
        let (table, mut client) = climber(&server, name).await;
        let end = play_out(&mut client, k as u64).await;
        played.push((name, table, end));
    }
    // Ann climbs again: practice, not in the standings; Dee gives up.
    let (_, mut again) = climber(&server, "ANN").await;
    play_out(&mut again, 9).await;
    let (dee_table, mut dee) = climber(&server, "Dee").await;
    dee.call(|id| ClientMessage::Concede { id }).await.unwrap();
    let mut lookup = server.client().await;
    let (_, _, _, standings, climbs) = ask_standings(&mut lookup, &today().to_string(), None)
        .await
        .unwrap();
    assert_eq!(climbs, 5);
    let names: Vec<&str> = standings.iter().map(|s| s.climber.as_str()).collect();
    assert_eq!(standings.len(), 4, "{names:?}");
    // Each line is the climb's end as its table shows it.
    for (name, table, end) in &played {
        let line = standings.iter().find(|s| s.climber == *name).unwrap();
        assert_eq!(line.table, *table);
        let climb = Mirror::<MountainMagic>::of(end).unwrap();
        let (ending, cards) = climb.table().climb().standing_key().unwrap();
        assert_eq!((line.end, line.cards_left), (ending, cards.0), "{name}");
    }
    let dee_line = standings.iter().find(|s| s.climber == "Dee").unwrap();
    assert_eq!(
        (dee_line.end, dee_line.cards_left, dee_line.table),
        (ClimbEnd::GaveUp, 0, dee_table)
    );
    // In order: by end, then by cards left; equal climbs share a place.
    for pair in standings.windows(2) {
        let key = |s: &DayClimb| (s.end, std::cmp::Reverse(s.cards_left));
        assert!(key(&pair[0]) <= key(&pair[1]), "{pair:?}");
        if key(&pair[0]) == key(&pair[1]) {
            assert_eq!(pair[0].place, pair[1].place);
        } else {
            assert!(pair[0].place < pair[1].place);
        }
    }
    assert_eq!(standings[0].place, 1);
    // Page by page: the same lines, in the same order.
    let mut paged = Vec::new();
    let mut from = 0;
    loop {
        let page = lookup
            .call(|id| ClientMessage::MountainMagicStandings {
                id,
                day: "today".to_owned(),
                league: None,
                from,
                limit: 3,
            })
            .await
            .unwrap();
        let ServerMessage::MountainMagicStandings {
            standings: lines,
            climbers,
            next,
            ..
        } = page
        else {
            panic!("{page:?}");
        };
        assert_eq!(climbers, 4);
        assert!(lines.len() <= 3);
        paged.extend(lines);
        match next {
            Some(next) => from = next,
            None => break,
        }
    }
    assert_eq!(paged, standings);
    // Another day has its own commitment and nobody's climbs; a past day shows its secret,
    // which is the commitment's.
    let yesterday = Day(today().0 - 1).to_string();
    let (_, commitment, secret, past, none) =
        ask_standings(&mut lookup, &yesterday, None).await.unwrap();
    assert!(past.is_empty());
    assert_eq!(none, 0);
    let secret = grand_melee_protocol::dice::DiceSecret::from_hex(&secret.unwrap()).unwrap();
    assert_eq!(secret.commitment(), commitment);
    // Not a day: refused.
    for bad in ["yesterday", "2026-02-30", "26-11-2026", ""] {
        assert_eq!(
            ask_standings(&mut lookup, bad, None).await.err(),
            Some(ErrorCode::BadDay),
            "{bad}"
        );
    }
    assert_eq!(
        ask_standings(&mut lookup, "today", Some(LeagueId::from_u128(3)))
            .await
            .err(),
        Some(ErrorCode::UnknownLeague)
    );
}

#[tokio::test]
async fn refused_day_settings_make_no_table() {
    let server = TestServer::start_with(config()).await;
    let mut host = server.client().await;
    let tomorrow = Day(today().0 + 1).to_string();
    let deck = DeckFile {
        cards: vec![DeckLine {
            name: "Kerr Crag".to_owned(),
            count: 4,
        }],
    };
    let refused = [
        (day_settings(&tomorrow, None), ErrorCode::BadSettings),
        (day_settings("2026-13-01", None), ErrorCode::BadDay),
        (day_settings("soon", None), ErrorCode::BadDay),
        (
            CreateTable::new("league, no day", 1)
                .game(GameKind::MountainMagic)
                .mountain_magic(MountainMagicSettings {
                    league: Some(LeagueId::from_u128(1)),
                    ..MountainMagicSettings::default()
                }),
            ErrorCode::BadSettings,
        ),
        (
            day_settings("today", None).mountain_magic(MountainMagicSettings {
                day: Some("today".to_owned()),
                deck: Some(deck.clone()),
                league: None,
            }),
            ErrorCode::BadSettings,
        ),
        (
            day_settings("today", Some(LeagueId::from_u128(2))),
            ErrorCode::UnknownLeague,
        ),
        (
            CreateTable::new("a short deck", 1)
                .game(GameKind::MountainMagic)
                .mountain_magic(MountainMagicSettings {
                    deck: Some(deck),
                    ..MountainMagicSettings::default()
                }),
            ErrorCode::BadSettings,
        ),
    ];
    for (settings, code) in refused {
        assert_eq!(
            host.create(settings.clone()).await,
            Err(code),
            "{settings:?}"
        );
    }
    // Nothing was created, and nothing was written: the journal holds no table.
    let tables = host.list_tables().await;
    assert!(tables.is_empty(), "{tables:?}");
    let journal = rusqlite::Connection::open_with_flags(
        server.data_dir().join(grand_melee_server::journal::DB_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let written: i64 = journal
        .query_row("SELECT count(*) FROM melee_tables", [], |row| row.get(0))
        .unwrap();
    assert_eq!(written, 0, "a refused table was written to the journal");
}

#[tokio::test]
async fn the_mountain_secret_and_the_days_climbs_outlive_a_restart() {
    let server = TestServer::start_with(config()).await;
    let (_, mut ann) = climber(&server, "Ann").await;
    let dealt = first_cards(&mut ann).await;
    ann.call(|id| ClientMessage::Concede { id }).await.unwrap();
    agrees(&mut ann).await;
    let mut lookup = server.client().await;
    let before = ask_standings(&mut lookup, "today", None).await.unwrap();
    assert_eq!(before.3.len(), 1);
    drop((ann, lookup));
    let server = server.restart(config()).await;
    let mut lookup = server.client().await;
    let after = ask_standings(&mut lookup, "today", None).await.unwrap();
    assert_eq!(after, before);
    // The same day's mountain is dealt after the restart.
    let (_, mut bob) = climber(&server, "Bob").await;
    assert_eq!(first_cards(&mut bob).await, dealt);
}

#[tokio::test]
async fn a_league_member_climbs_for_his_leagues_standings() {
    let server = TestServer::start_with(config()).await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Climbers", &["Ann"]).await;
    // A member with no deck registered may climb too.
    let mut joiner = server.client().await;
    let joined = joiner
        .call(|id| ClientMessage::JoinLeague {
            id,
            league: league.id,
            name: "Bob".into(),
            password: None,
        })
        .await
        .unwrap();
    let ServerMessage::LeagueJoined { member, token, .. } = joined else {
        panic!("{joined:?}");
    };
    let mut climbs = Vec::new();
    for (name, token) in [("Ann", league.members[0].2), ("Bob", token)] {
        let mut client = server.client().await;
        // Anyone may open a league climb: no organiser secret.
        let table = client
            .create(day_settings("today", Some(league.id)))
            .await
            .unwrap();
        let join = |token| {
            move |id| ClientMessage::Join {
                id,
                table,
                name: "whoever".into(),
                password: None,
                entropy: None,
                member_token: token,
            }
        };
        assert_eq!(
            client.call(join(None)).await.err(),
            Some(ErrorCode::LeagueSeat)
        );
        assert_eq!(
            client
                .call(join(Some(
                    grand_melee_protocol::league::MemberToken::from_u128(77)
                )))
                .await
                .err(),
            Some(ErrorCode::NotAMember)
        );
        let seated = client.call(join(Some(token))).await.unwrap();
        let ServerMessage::Seated { player, token, .. } = seated else {
            panic!("{seated:?}");
        };
        client.seat = Some((player, token));
        client.until_snapshot().await;
        start(&mut client).await;
        let view = agrees(&mut client).await;
        assert_eq!(
            view.players[0].name, name,
            "the seat takes the member's name"
        );
        climbs.push((name, table, client));
    }
    // A stranger's climb of the same day is not the league's.
    let (_, mut stranger) = climber(&server, "Zed").await;
    for (_, _, client) in &mut climbs {
        client
            .call(|id| ClientMessage::Concede { id })
            .await
            .unwrap();
    }
    stranger
        .call(|id| ClientMessage::Concede { id })
        .await
        .unwrap();
    let mut lookup = server.client().await;
    let (_, _, _, mine, count) = ask_standings(&mut lookup, "today", Some(league.id))
        .await
        .unwrap();
    assert_eq!(count, 2);
    // Both gave up: they share a place, in the order they finished (within the same
    // millisecond, by table): compared as a set.
    let mut members: Vec<(Option<u32>, &str)> = mine
        .iter()
        .map(|c| (c.member, c.climber.as_str()))
        .collect();
    members.sort();
    assert!(mine.iter().all(|c| c.place == 1));
    assert_eq!(
        members,
        vec![(Some(league.members[0].0), "Ann"), (Some(member), "Bob")]
    );
    let (_, _, _, everyone, count) = ask_standings(&mut lookup, "today", None).await.unwrap();
    assert_eq!((everyone.len(), count), (3, 3));
}
