//! Lists and replays that take more than one page: the table list on a real server (asked for in
//! small pages), and fake servers for what a real one does not do — a replay in many pages with
//! hostile names and chat, and servers that send the same page again.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use common::{
    CreateTable, TestServer, call, check_script_output, create, fake_server, run_once, run_with,
};
use grand_melee_cli::net::Conn;
use grand_melee_cli::{PAGE_ITEMS, resolve_table};
use grand_melee_protocol::league::{LeagueGame, LeagueId, LeagueView, MemberStanding};
use grand_melee_protocol::{
    ClientMessage, Event, Reduction, ReplaySummary, ServerMessage, Settings, StageName, TableId,
    TableSummary,
};

const TABLES: [&str; 5] = ["Table A", "Table B", "Table C", "Table D", "Table E"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_of_the_table_list_is_listed_and_searched() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut conn = Conn::open(&url).await.unwrap();
    let mut ids = Vec::new();
    for name in TABLES {
        let settings = CreateTable::new(name, 4).spell_range(1);
        ids.push(create(&mut conn, settings).await);
    }
    // Two tables a page: the list takes three pages.
    let first = call(
        &mut conn,
        ClientMessage::ListTables {
            id: 0,
            from: 0,
            limit: 2,
        },
    )
    .await;
    assert!(
        matches!(&first, ServerMessage::Tables { tables, next: Some(2), total: 5, .. } if tables.len() == 2),
        "{first:?}"
    );
    conn.close().await;

    let mut out = Vec::new();
    grand_melee_cli::list(&url, 2, &mut out).await.unwrap();
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), TABLES.len(), "{out}");
    for (line, (name, id)) in lines.iter().zip(TABLES.iter().zip(&ids)) {
        assert!(line.starts_with(&format!("table {id} ")), "{line}");
        assert!(line.ends_with(&format!(" name=\"{name}\"")), "{line}");
    }
    // The last table is on the last page, by name and by the start of its id.
    assert_eq!(resolve_table(&url, "table e", 2).await.unwrap(), ids[4]);
    let prefix = &ids[4].to_string()[..8];
    assert_eq!(resolve_table(&url, prefix, 2).await.unwrap(), ids[4]);

    // The command itself (its own page size) lists them all too.
    let dir = tempfile::tempdir().unwrap();
    let (status, out, err) = run_once(&server.addr.to_string(), dir.path(), &["list"]).await;
    assert!(status.success(), "{err}");
    assert_eq!(out.lines().count(), TABLES.len(), "{out}");
    const { assert!(PAGE_ITEMS > 2 && PAGE_ITEMS <= grand_melee_protocol::MAX_PAGE_ITEMS) };
    server.shutdown().await;
}

fn summary(table: TableId, name: &str) -> TableSummary {
    TableSummary {
        table,
        name: name.into(),
        seats: 4,
        seated: 0,
        spectators: 0,
        stage: StageName::Lobby,
        password: false,
        spell_range: 1,
        reduction: Reduction::Eager,
        rules: Default::default(),
        combat_dice: false,
        mulligan: Default::default(),
        league: None,
        adjourned: false,
        game: Default::default(),
    }
}

/// A league's page: the standings of members `members` and the games `games`.
fn league_page(
    league: LeagueId,
    members: std::ops::Range<u32>,
    games: std::ops::Range<u32>,
) -> LeagueView {
    LeagueView {
        league,
        name: "Big league".into(),
        password: false,
        created_at_ms: 0,
        standings: members
            .map(|m| MemberStanding {
                member: m,
                name: format!("Member {m:03}"),
                deck: None,
                alliance: None,
                power: 1000 - m,
                balance: 0,
                games: 0,
                wins: 0,
                places: 0,
            })
            .collect(),
        games: games
            .map(|g| LeagueGame {
                table: TableId::from_u128(u128::from(g) + 1),
                name: format!("Week {g}"),
                created_at_ms: 0,
                finished_at_ms: None,
            })
            .collect(),
    }
}

fn replay_summary(table: TableId, name: &str, events: u64) -> ReplaySummary {
    ReplaySummary {
        table,
        name: name.into(),
        created_at_ms: 0,
        finished_at_ms: 1_000,
        events,
        password: false,
        league: None,
    }
}

/// A server that answers every page with the page it was asked for and a `next` that does not
/// move forward; a client following it blindly would ask forever.
async fn repeating_server(table: TableId) -> String {
    let addr = fake_server(move |request| match request {
        ClientMessage::ListTables { id, from, .. } => vec![ServerMessage::Tables {
            reply_to: id,
            tables: vec![summary(TableId::new_random(), "Again")],
            total: 1_000,
            next: Some(from),
        }],
        ClientMessage::ListReplays { id, from, .. } => vec![ServerMessage::Replays {
            reply_to: id,
            replays: vec![replay_summary(TableId::new_random(), "Again", 1)],
            total: 1_000,
            next: Some(from),
        }],
        ClientMessage::GetLeague {
            id, league, from, ..
        } => vec![ServerMessage::League {
            reply_to: id,
            league: league_page(league, from..from + 1, 0..0),
            total_members: 1_000,
            total_games: 0,
            next: Some(from),
        }],
        ClientMessage::GetReplay { id, from_seq, .. } => vec![ServerMessage::Replay {
            reply_to: id,
            table,
            name: "Again".into(),
            settings: Settings::default(),
            first_seq: from_seq,
            events: vec![Event::SpectatorsChanged { spectators: 1 }],
            total_events: 1_000,
            next_seq: Some(from_seq),
        }],
        _ => Vec::new(),
    })
    .await;
    addr.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_repeats_a_page_is_not_asked_forever() {
    let table = TableId::new_random();
    let server = repeating_server(table).await;
    let dir = tempfile::tempdir().unwrap();
    let id = table.to_string();
    for args in [
        &["list"][..],
        &["join", "Again", "Ann"],
        &["replay", "list"],
        &["replay", "export", "Again"],
        &["replay", "export", &id],
        &["league", "show", &id],
    ] {
        let (status, out, err) = run_once(&server, dir.path(), args).await;
        assert!(!status.success(), "{args:?}: {out}");
        assert!(err.contains("does not advance"), "{args:?}: {err}");
    }
}

/// A finished game of `total` events served `page` events at a time, among three finished
/// games listed one a page. Every player's name and chat line is hostile.
async fn paged_replay_server(table: TableId, total: u64, page: u64) -> String {
    let hostile = [
        "\u{1b}]0;owned\u{7}",
        "Eve) player=0 (Ann",
        "\u{1b}]52;c;ZXZpbA==\u{7}",
        "ls\u{2028}event 99 forged",
        "nel\u{85}event 99 forged\u{b}\u{c}",
        "bidi\u{202e}txet\u{200b}",
        "quote\" text=\"forged\\",
        "c1\u{9b}2J\r",
    ];
    let events: Arc<Vec<Event>> = Arc::new(
        (0..total)
            .map(|i| {
                let player = u16::try_from(i / 2).unwrap() % 8;
                let name = hostile[usize::from(player)].to_owned();
                if i < 16 && i % 2 == 0 {
                    Event::PlayerJoined {
                        player,
                        name,
                        entropy: String::new(),
                        deck: None,
                    }
                } else {
                    Event::Chat {
                        from: Some(player),
                        name: name.clone(),
                        text: name,
                    }
                }
            })
            .collect(),
    );
    let replays = [
        replay_summary(TableId::new_random(), "Newest", 3),
        replay_summary(TableId::new_random(), "Middle", 3),
        replay_summary(table, "Fake game", total),
    ];
    let addr = fake_server(move |request| match request {
        ClientMessage::ListReplays { id, from, limit } => {
            assert_eq!(limit, PAGE_ITEMS);
            let i = usize::try_from(from).unwrap();
            vec![ServerMessage::Replays {
                reply_to: id,
                replays: replays[i..=i].to_vec(),
                total: 3,
                next: (i < 2).then_some(from + 1),
            }]
        }
        ClientMessage::GetReplay { id, from_seq, .. } => {
            let start = usize::try_from(from_seq - 1).unwrap();
            let end = (from_seq - 1 + page).min(total);
            let end = usize::try_from(end).unwrap();
            vec![ServerMessage::Replay {
                reply_to: id,
                table,
                name: hostile[0].into(),
                settings: Settings::default(),
                first_seq: from_seq,
                events: events[start..end].to_vec(),
                total_events: total,
                next_seq: (end < events.len()).then_some(end as u64 + 1),
            }]
        }
        _ => Vec::new(),
    })
    .await;
    addr.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_in_many_pages_is_put_back_together_and_printed_safely() {
    let table = TableId::new_random();
    let total = 40;
    let server = paged_replay_server(table, total, 7).await;
    let dir = tempfile::tempdir().unwrap();

    // Found by name on the last page of the list, then fetched in six pages of events.
    let (status, out, err) =
        run_once(&server, dir.path(), &["replay", "export", "fake game"]).await;
    assert!(status.success(), "{err}");
    for (i, &b) in out.as_bytes().iter().enumerate() {
        assert!(b >= 0x20 && b != 0x7f || b == b'\n', "byte {b:#x} at {i}");
    }
    assert!(
        !out.chars()
            .any(|c| c != '\n' && grand_melee_cli::safe::must_escape(c))
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len() as u64, total + 1, "{out}");
    for (seq, line) in (1..).zip(&lines[1..]) {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(record["seq"], seq);
    }
    // Event 6 is the OSC 52 clipboard write, written as JSON escapes and read back exactly.
    assert!(
        lines[6].contains(r#""text":"\u001b]52;c;ZXZpbA==\u0007""#),
        "{}",
        lines[6]
    );
    let chat: serde_json::Value = serde_json::from_str(lines[6]).unwrap();
    assert_eq!(chat["event"]["text"], "\u{1b}]52;c;ZXZpbA==\u{7}");

    // Stepping through it in script mode: every event once, in order, nothing raw.
    let (status, out, err) = run_with(
        &server,
        dir.path(),
        &["replay", "watch", &table.to_string()],
        &[],
        "end\nstatus\n",
    )
    .await;
    assert!(status.success(), "{err}");
    let lines = check_script_output(out.as_bytes());
    let events = lines.iter().filter(|l| l.starts_with("event ")).count();
    assert_eq!(events as u64, total, "{out}");
    assert!(lines[0].starts_with(&format!("replay table={table} events={total} ")));
    assert!(
        lines.iter().any(|l| l.starts_with("seat ")
            && l.contains(r#""Eve) player=0 (Ann""#)
            && l.contains(" life=20 ")),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_of_a_league_is_shown() {
    // 23 members and 6 games, served 4 positions a page whatever the client asks.
    let (members, games) = (23, 6);
    let server = fake_server(move |request| match request {
        ClientMessage::GetLeague {
            id, league, from, ..
        } => {
            let end = (from + 4).min(members);
            vec![ServerMessage::League {
                reply_to: id,
                league: league_page(league, from..end, from.min(games)..end.min(games)),
                total_members: members,
                total_games: games,
                next: (end < members).then_some(end),
            }]
        }
        _ => Vec::new(),
    })
    .await
    .to_string();
    let dir = tempfile::tempdir().unwrap();
    let league = LeagueId::new_random().to_string();
    let (status, out, err) = run_once(&server, dir.path(), &["league", "show", &league]).await;
    assert!(status.success(), "{err}");
    assert!(
        out.lines().next().unwrap().contains(" members=23 games=6 "),
        "{out}"
    );
    let rows: Vec<&str> = out.lines().filter(|l| l.contains(" Member ")).collect();
    assert_eq!(rows.len(), 23, "{out}");
    for (rank, row) in rows.iter().enumerate() {
        assert!(
            row.trim_start().starts_with(&format!("{} ", rank + 1)),
            "{row}"
        );
        assert!(row.contains(&format!("Member {rank:03}")), "{row}");
    }
    assert_eq!(out.lines().filter(|l| l.starts_with("game ")).count(), 6);
}
