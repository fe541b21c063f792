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

/// Issue 43: a config whose clock the test moves (the server reads the day from it).
fn clocked() -> (ServerConfig, grand_melee_server::config::WallClock) {
    let config = config();
    let clock = config.clock.clone();
    (config, clock)
}

/// Moves `clock` to `secs` seconds past the end of `day`.
fn past_the_end(clock: &grand_melee_server::config::WallClock, day: Day, secs: u64) {
    let now = clock.now_ms();
    let target = day.ends_at() * 1000 + secs * 1000;
    clock.advance(std::time::Duration::from_millis(target.saturating_sub(now)));
}

/// `get_replay` of `table`'s first page: the answer, or the refusal's code and message.
async fn replay(
    client: &mut Client,
    table: TableId,
    token: Option<grand_melee_protocol::SeatToken>,
) -> Result<u64, (ErrorCode, String)> {
    let id = client.send(|id| ClientMessage::GetReplay {
        id,
        table,
        from_seq: 1,
        password: None,
        token,
    });
    client
        .until(|r| match r {
            grand_melee_e2e::Received::Message(message, _) => match &**message {
                ServerMessage::Error {
                    reply_to: Some(to),
                    code,
                    message,
                    ..
                } if *to == id => Some(Err((*code, message.clone()))),
                ServerMessage::Replay {
                    reply_to,
                    total_events,
                    ..
                } if *reply_to == id => Some(Ok(*total_events)),
                _ => None,
            },
            _ => None,
        })
        .await
}

/// `watch` of `table` from a new client: `Ok` if watching.
async fn watch(server: &TestServer, table: TableId) -> Result<(), ErrorCode> {
    let mut client = server.client().await;
    client
        .call(|id| ClientMessage::Watch {
            id,
            table,
            password: None,
        })
        .await
        .map(drop)
}

/// Issue 43: a finished day climb's replay told a stranger the day's deal, and watching a
/// climb showed its cards. Both wait for the day's end (the refusal says when); the climber
/// replays his own climb by his seat token.
#[tokio::test]
async fn a_day_climb_is_neither_replayed_nor_watched_before_its_day_is_over() {
    let (config, clock) = clocked();
    let server = TestServer::start_with(config).await;
    let day = Day::of(clock.now_ms() / 1000);
    let (done, mut ann) = climber(&server, "Ann").await;
    let (running, mut bob) = climber(&server, "Bob").await;
    first_cards(&mut bob).await;
    let ann_token = ann.seat.unwrap().1;
    ann.call(|id| ClientMessage::Concede { id }).await.unwrap();
    agrees(&mut ann).await;
    let mut stranger = server.client().await;
    let (code, message) = replay(&mut stranger, done, None).await.unwrap_err();
    assert_eq!(code, ErrorCode::DayNotOver);
    let opens = format!("{} 00:00 UTC", Day(day.0 + 1));
    assert!(message.contains(&opens), "{message}");
    assert!(replay(&mut stranger, done, Some(ann_token)).await.is_ok());
    assert_eq!(watch(&server, running).await, Err(ErrorCode::DayNotOver));
    // A climb of one's own deal is watched and replayed as any table.
    let mut cai = server.client().await;
    let own = cai
        .create(CreateTable::new("mine", 1).game(GameKind::MountainMagic))
        .await
        .unwrap();
    cai.join(own, "Cai").await.unwrap();
    start(&mut cai).await;
    assert_eq!(watch(&server, own).await, Ok(()));
    cai.call(|id| ClientMessage::Concede { id }).await.unwrap();
    agrees(&mut cai).await;
    assert!(replay(&mut stranger, own, None).await.is_ok());
    // The day is over: both open to anyone.
    past_the_end(&clock, day, 1);
    assert!(replay(&mut stranger, done, None).await.is_ok());
    assert_eq!(watch(&server, running).await, Ok(()));
}

/// Issue 43: at midnight the day's secret was revealed while a climb started at 23:59 could
/// still be played with it, and an adjourned climb was resumed after midnight. Every climb of
/// the day ends at its end, as it stands (given up), and is in the day's standings; a climb
/// not started by then is not started at all; the secret is revealed once no climb of the
/// day can move.
#[tokio::test]
async fn at_the_days_end_every_climb_of_the_day_ends_before_its_secret_is_out() {
    let (config, clock) = clocked();
    let server = TestServer::start_with(config).await;
    let day = Day::of(clock.now_ms() / 1000);
    let (playing, mut ann) = climber(&server, "Ann").await;
    first_cards(&mut ann).await;
    let (adjourned, mut bob) = climber(&server, "Bob").await;
    bob.call(|id| ClientMessage::Adjourn { id }).await.unwrap();
    let mut late = server.client().await;
    let unstarted = late.create(day_settings("today", None)).await.unwrap();
    late.join(unstarted, "Cai").await.unwrap();
    let mut lookup = server.client().await;
    let date = day.to_string();
    assert_eq!(
        ask_standings(&mut lookup, &date, None).await.unwrap().2,
        None
    );
    past_the_end(&clock, day, 1);
    // Each climb ends by itself at the day's end: nobody needs to ask.
    for client in [&mut ann, &mut bob] {
        client
            .until_event(|e| matches!(e, Event::GameAbandoned).then_some(()))
            .await;
        let view = agrees(client).await;
        assert_eq!(view.stage, StageName::Finished);
        assert!(!view.adjourned, "{view:?}");
    }
    assert_eq!(
        ann.call(|id| ClientMessage::mountain_magic(id, MountainCommand::Flip))
            .await
            .err(),
        Some(ErrorCode::NotPlaying)
    );
    assert!(
        bob.call(|id| ClientMessage::ResumeGame { id })
            .await
            .is_err()
    );
    assert_eq!(
        late.call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: Default::default(),
            order: Vec::new(),
        })
        .await
        .err(),
        Some(ErrorCode::DayOver)
    );
    let mut newcomer = server.client().await;
    let unseated = newcomer.create(day_settings("today", None)).await;
    assert!(unseated.is_ok(), "today is a new day: {unseated:?}");
    // The ended climbs stand as given up; the day's secret is out, no climb of it can move.
    let (_, commitment, secret, standings, climbs) =
        ask_standings(&mut lookup, &date, None).await.unwrap();
    assert_eq!(climbs, 2);
    let mut lines: Vec<(TableId, ClimbEnd)> = standings.iter().map(|s| (s.table, s.end)).collect();
    lines.sort();
    let mut expected = vec![(playing, ClimbEnd::GaveUp), (adjourned, ClimbEnd::GaveUp)];
    expected.sort();
    assert_eq!(lines, expected);
    let secret = secret.unwrap();
    let secret = grand_melee_protocol::dice::DiceSecret::from_hex(&secret).unwrap();
    assert_eq!(secret.commitment(), commitment);
}

/// Issue 43: a climb left unfinished did not count, so a name could peek, walk away and climb
/// again; and "Dеv" (a Cyrillic е) and "Dev" were two climbers. A climber's first climb is the
/// one he started first, whatever its ending; names are folded as every name comparison is.
#[tokio::test]
async fn a_climbers_first_climb_counts_however_it_ends_and_names_fold_look_alikes() {
    let (config, clock) = clocked();
    let server = TestServer::start_with(config).await;
    let day = Day::of(clock.now_ms() / 1000);
    // Eve peeks and walks away (her climb stays open); she climbs again and plays it out.
    let (peek, mut eve) = climber(&server, "Eve").await;
    first_cards(&mut eve).await;
    let (_, mut again) = climber(&server, "eve").await;
    play_out(&mut again, 3).await;
    // A stranger climbs first as "D\u{435}v" and concedes; the real Dev plays it out.
    let (stranger, mut fake) = climber(&server, "D\u{435}v").await;
    fake.call(|id| ClientMessage::Concede { id }).await.unwrap();
    agrees(&mut fake).await;
    let (_, mut dev) = climber(&server, "Dev").await;
    play_out(&mut dev, 4).await;
    past_the_end(&clock, day, 1);
    eve.until_event(|e| matches!(e, Event::GameAbandoned).then_some(()))
        .await;
    agrees(&mut eve).await;
    let mut lookup = server.client().await;
    let (_, _, _, standings, climbs) = ask_standings(&mut lookup, &day.to_string(), None)
        .await
        .unwrap();
    assert_eq!(climbs, 4);
    let mut lines: Vec<(TableId, ClimbEnd)> = standings.iter().map(|s| (s.table, s.end)).collect();
    lines.sort();
    let mut expected = vec![(peek, ClimbEnd::GaveUp), (stranger, ClimbEnd::GaveUp)];
    expected.sort();
    assert_eq!(lines, expected, "{standings:?}");
}

/// Issue 43: the climb's start and the day's end outlive a restart: an adjourned climb read
/// back after midnight ends as it stands, and a peek's start still makes it the first climb.
#[tokio::test]
async fn a_day_climb_read_back_after_its_day_ends_and_keeps_its_start() {
    let (config, clock) = clocked();
    let server = TestServer::start_with(config.clone()).await;
    let day = Day::of(clock.now_ms() / 1000);
    let (peek, mut fay) = climber(&server, "Fay").await;
    first_cards(&mut fay).await;
    fay.call(|id| ClientMessage::Adjourn { id }).await.unwrap();
    let (_, mut again) = climber(&server, "Fay").await;
    again
        .call(|id| ClientMessage::Concede { id })
        .await
        .unwrap();
    agrees(&mut again).await;
    drop((fay, again));
    past_the_end(&clock, day, 1);
    let server = server.restart(config).await;
    let mut lookup = server.client().await;
    // The read-back climb ends at once; its line comes with it.
    let read_back = async {
        loop {
            let (_, _, _, standings, climbs) = ask_standings(&mut lookup, &day.to_string(), None)
                .await
                .unwrap();
            if climbs == 2 {
                break standings;
            }
            tokio::task::yield_now().await;
        }
    };
    let standings = tokio::time::timeout(std::time::Duration::from_secs(20), read_back)
        .await
        .expect("the read-back climb never ended");
    assert_eq!(standings.len(), 1);
    assert_eq!(standings[0].table, peek);
}

/// A day climb's lobby may be watched (nothing is dealt yet: the page shows a newcomer the table
/// that way, and tells a stranger a league climb is for its members), but its watchers are sent
/// away when the climb begins, and nobody watches it again before the day is over.
#[tokio::test]
async fn whoever_watches_a_day_climbs_lobby_is_sent_away_when_it_begins() {
    let (config, _clock) = clocked();
    let server = TestServer::start_with(config).await;
    let mut climber = server.client().await;
    let table = climber.create(day_settings("today", None)).await.unwrap();
    let mut watcher = server.client().await;
    watcher
        .call(|id| ClientMessage::Watch {
            id,
            table,
            password: None,
        })
        .await
        .unwrap();
    climber.join(table, "Dee").await.unwrap();
    start(&mut climber).await;
    assert_eq!(watcher.closed_with().await, Some(1000));
    let reason = watcher
        .close_reason
        .lock()
        .unwrap()
        .clone()
        .unwrap_or_default();
    assert!(reason.contains("once its day is over"), "{reason}");
    assert_eq!(watch(&server, table).await, Err(ErrorCode::DayNotOver));
    let view = agrees(&mut climber).await;
    assert_eq!(view.spectators, 0);
}
