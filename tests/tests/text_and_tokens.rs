//! Hardening defect 7, at the socket level: a join's `entropy` follows the names' and chat's
//! character rules, a name needs a visible character, `get_league` is paged, and a token (any
//! UUID) is read only in its one canonical spelling.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, CreateTable, TestLeague, TestServer};
use grand_melee_protocol::league::{Alliance, DeckSpec, Purchase};
use grand_melee_protocol::{self as wire, ClientMessage, ErrorCode, ServerMessage, TableId, Uuid};
use grand_melee_server::ServerConfig;

/// A join with these settings.
fn join(id: u32, table: TableId, name: &str, entropy: Option<&str>) -> ClientMessage {
    ClientMessage::Join {
        id,
        table,
        name: name.into(),
        password: None,
        entropy: entropy.map(str::to_owned),
        member_token: None,
    }
}

/// The players seated at `table`, by name, as a fresh snapshot shows them.
async fn seated_names(client: &mut Client) -> Vec<String> {
    let view = client.fresh_snapshot().await;
    view.players.iter().map(|p| p.name.clone()).collect()
}

#[tokio::test]
async fn entropy_with_bidi_zero_width_separator_or_private_use_characters_is_refused() {
    let server = TestServer::start().await;
    let mut host = server.client().await;
    let table = host.create_table("Entropy", 8, 1).await;
    host.join(table, "Hana").await.unwrap();
    for bad in [
        "dice\u{202e}eciv",
        "rtl\u{2067}isolate",
        "zero\u{200b}width",
        "joiner\u{200d}",
        "bom\u{feff}",
        "line\u{2028}separator",
        "para\u{2029}graph",
        "private\u{e000}use",
        "unassigned\u{378}",
        "escape\u{1b}[2J",
    ] {
        let mut other = server.client().await;
        let answer = other.call(|id| join(id, table, "Ann", Some(bad))).await;
        assert_eq!(answer.err(), Some(ErrorCode::BadText), "entropy {bad:?}");
    }
    // Nobody was seated by a refused join; ordinary text, symbols and emoji are fine.
    assert_eq!(seated_names(&mut host).await, ["Hana"]);
    let mut ann = server.client().await;
    let seated = ann
        .call(|id| join(id, table, "Ann", Some("  kitchen table 7 ✓ é 🎲 ")))
        .await;
    assert!(
        matches!(seated, Ok(ServerMessage::Seated { .. })),
        "{seated:?}"
    );
    let too_long = "x".repeat(wire::MAX_ENTROPY_CHARS + 1);
    let mut bob = server.client().await;
    let answer = bob.call(|id| join(id, table, "Bob", Some(&too_long))).await;
    assert_eq!(answer.err(), Some(ErrorCode::BadText));
    assert_eq!(seated_names(&mut host).await, ["Hana", "Ann"]);
}

/// Names that draw as nothing at all: Hangul fillers, the braille blank, marks alone.
const BLANK_NAMES: [&str; 7] = [
    "\u{3164}",
    "\u{3164}\u{3164}\u{3164}",
    "\u{115f}\u{1160}",
    "\u{ffa0}",
    "\u{2800}\u{2800}",
    " \u{3164} \u{2800} ",
    "\u{301}\u{301}",
];

#[tokio::test]
async fn a_name_with_no_visible_character_is_refused_everywhere_names_are_given() {
    let server = TestServer::start().await;
    let mut host = server.client().await;
    let table = host.create_table("Visible", 8, 2).await;
    host.join(table, "Ann").await.unwrap();
    for blank in BLANK_NAMES {
        // A player name.
        let mut other = server.client().await;
        let answer = other.call(|id| join(id, table, blank, None)).await;
        assert_eq!(answer.err(), Some(ErrorCode::BadName), "player {blank:?}");
        // A table name.
        let answer = other
            .call(|id| CreateTable::new(blank, 4).request(id))
            .await;
        assert_eq!(answer.err(), Some(ErrorCode::BadName), "table {blank:?}");
        // A league name.
        let answer = other
            .call(|id| ClientMessage::CreateLeague {
                id,
                name: blank.into(),
                password: None,
            })
            .await;
        assert_eq!(answer.err(), Some(ErrorCode::BadName), "league {blank:?}");
    }
    // A blank after a seated name looks like that name.
    let mut other = server.client().await;
    let answer = other.call(|id| join(id, table, "Ann\u{3164}", None)).await;
    assert_eq!(answer.err(), Some(ErrorCode::ConfusableName));
    assert_eq!(seated_names(&mut host).await, ["Ann"]);

    // A league member's name (and a deck's).
    let league = TestLeague::create(&mut host, "Visible league", &["Bob"]).await;
    for blank in BLANK_NAMES {
        let answer = host
            .call(|id| ClientMessage::JoinLeague {
                id,
                league: league.id,
                name: blank.into(),
                password: None,
            })
            .await;
        assert_eq!(answer.err(), Some(ErrorCode::BadName), "member {blank:?}");
    }
    let joined = host
        .call(|id| ClientMessage::JoinLeague {
            id,
            league: league.id,
            name: "Cy".into(),
            password: None,
        })
        .await
        .unwrap();
    let ServerMessage::LeagueJoined { token, .. } = joined else {
        panic!("{joined:?}");
    };
    let deck = host
        .call(|id| ClientMessage::RegisterDeck {
            id,
            league: league.id,
            token,
            deck: DeckSpec {
                name: "\u{3164}".into(),
                alliance: Alliance::ALL[0],
                basic_set: "Mirage".into(),
                expansion_set: "Visions".into(),
            },
        })
        .await;
    assert_eq!(deck.err(), Some(ErrorCode::BadText));
    let view = league.view(&mut host).await;
    let names: Vec<&str> = view.standings.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["Bob", "Cy"]);
    assert_eq!(view.standings[1].deck, None);
}

/// A request encoded with `id` spelled `spelling` instead of its canonical string.
fn respelled(message: &ClientMessage, id: Uuid, spelling: &[u8]) -> Vec<u8> {
    let bytes = wire::encode_client(message);
    let mut canonical = vec![0xd9, 36];
    canonical.extend_from_slice(id.to_string().as_bytes());
    let at = bytes
        .windows(canonical.len())
        .position(|w| w == canonical)
        .expect("the id is in the message as a 36-character string");
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(spelling);
    out.extend_from_slice(&bytes[at + canonical.len()..]);
    out
}

/// Every other way to write `id`: as MessagePack strings (upper case, no hyphens, braces, URN,
/// mixed case) and as 16 raw bytes.
fn other_spellings(id: Uuid) -> Vec<Vec<u8>> {
    let text = |s: String| {
        let mut out = vec![0xd9, u8::try_from(s.len()).unwrap()];
        out.extend_from_slice(s.as_bytes());
        out
    };
    let canonical = id.to_string();
    let mut mixed = canonical.clone().into_bytes();
    let letter = mixed.iter().position(u8::is_ascii_alphabetic).unwrap();
    mixed[letter] = mixed[letter].to_ascii_uppercase();
    let mut bin = vec![0xc4, 16];
    bin.extend_from_slice(id.as_bytes());
    vec![
        text(canonical.to_uppercase()),
        text(id.simple().to_string()),
        text(id.braced().to_string()),
        text(id.urn().to_string()),
        text(String::from_utf8(mixed).unwrap()),
        bin,
    ]
}

/// Sends `message` with `id` in each other spelling: each is refused as `bad_message`, answered
/// with the request's id.
async fn every_other_spelling_is_refused(
    client: &mut Client,
    message: &ClientMessage,
    id: impl Into<Uuid>,
) {
    let id = id.into();
    for spelling in other_spellings(id) {
        let request = client.id();
        let mut message = message.clone();
        *message.id_mut() = request;
        client.send_raw(respelled(&message, id, &spelling));
        let answer = client.reply(request).await;
        assert_eq!(
            answer.err(),
            Some(ErrorCode::BadMessage),
            "{} with {:?}",
            message.name(),
            String::from_utf8_lossy(&spelling[2..])
        );
    }
}

#[tokio::test]
async fn tokens_and_ids_are_read_only_in_their_canonical_spelling() {
    let server = TestServer::start().await;

    // resume: a seat token.
    let mut ann = server.client().await;
    let table = ann.create_table("Tokens", 4, 3).await;
    ann.join(table, "Ann").await.unwrap();
    let (player, token) = ann.seat.unwrap();
    let mut back = server.client().await;
    let resume = ClientMessage::Resume {
        id: 0,
        table,
        token,
    };
    every_other_spelling_is_refused(&mut back, &resume, token).await;
    // The table id too.
    every_other_spelling_is_refused(&mut back, &resume, table).await;
    // Nothing was taken over: the canonical spelling is the one that works.
    assert_eq!(back.resume(table, token).await, Ok(player));

    // get_replay: a seat token (read, then refused because the game is not finished).
    let replay = ClientMessage::GetReplay {
        id: 0,
        table,
        from_seq: 1,
        password: None,
        token: Some(token),
    };
    every_other_spelling_is_refused(&mut back, &replay, token).await;
    let answer = back.call(|id| replay_with_id(&replay, id)).await;
    assert_eq!(answer.err(), Some(ErrorCode::UnknownReplay));

    // League requests: member tokens and league ids.
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Canonical", &["Bob", "Cy"]).await;
    let member = league.members[0].2;
    let buy = ClientMessage::Buy {
        id: 0,
        league: league.id,
        token: member,
        purchase: Purchase::Sideboard,
        remove: 0,
    };
    every_other_spelling_is_refused(&mut organiser, &buy, member).await;
    every_other_spelling_is_refused(&mut organiser, &buy, league.id).await;
    let get_league = ClientMessage::GetLeague {
        id: 0,
        league: league.id,
        from: 0,
        limit: 100,
    };
    every_other_spelling_is_refused(&mut organiser, &get_league, league.id).await;
    let register = ClientMessage::RegisterDeck {
        id: 0,
        league: league.id,
        token: member,
        deck: DeckSpec {
            name: "Second deck".into(),
            alliance: Alliance::ALL[1],
            basic_set: "Mirage".into(),
            expansion_set: "Visions".into(),
        },
    };
    every_other_spelling_is_refused(&mut organiser, &register, member).await;
    // Nothing was bought: every mana point is still unspent.
    let view = league.view(&mut organiser).await;
    let bob = view.standings.iter().find(|m| m.name == "Bob").unwrap();
    assert_eq!(bob.balance, bob.power);

    // join's member_token, at a league table.
    let league_table = league.table(&mut organiser, "League game", 2).await;
    let mut bob_client = server.client().await;
    let sit = ClientMessage::Join {
        id: 0,
        table: league_table,
        name: "ignored".into(),
        password: None,
        entropy: None,
        member_token: Some(member),
    };
    every_other_spelling_is_refused(&mut bob_client, &sit, member).await;
    assert_eq!(league.sit(&mut bob_client, league_table, 0).await, Ok(0));
}

fn replay_with_id(message: &ClientMessage, id: u32) -> ClientMessage {
    let mut message = message.clone();
    *message.id_mut() = id;
    message
}

#[tokio::test]
async fn a_league_of_many_members_is_read_in_pages_that_fit_the_queue() {
    // Pages of at most 4 KiB of items.
    let server = TestServer::start_with(ServerConfig {
        outgoing_queue_bytes: 16 * 1024,
        ..ServerConfig::default()
    })
    .await;
    let mut organiser = server.client().await;
    let league = TestLeague::create(&mut organiser, "Big league", &["Ann", "Bob", "Cy"]).await;
    // Three games, and 117 more members, each from his own address.
    for week in 1..=3 {
        league
            .table(&mut organiser, &format!("Week {week}"), 2)
            .await;
    }
    league.join_many(server.addr, 117).await;

    // One answer asked for up to 500 members holds fewer than all of them: the page ends at
    // the byte budget, and says where the next starts.
    let first = organiser
        .call(|id| ClientMessage::GetLeague {
            id,
            league: league.id,
            from: 0,
            limit: 500,
        })
        .await
        .unwrap();
    let bytes = wire::encode_server(&first).len();
    let ServerMessage::League {
        league: page,
        total_members,
        total_games,
        next,
        ..
    } = first
    else {
        panic!("{first:?}");
    };
    assert_eq!((total_members, total_games), (120, 3));
    assert!(page.standings.len() < 120, "{}", page.standings.len());
    assert_eq!(next, Some(u32::try_from(page.standings.len()).unwrap()));
    assert_eq!(page.games.len(), 3);
    assert!(bytes <= 4096 + 512, "{bytes} bytes");

    // Every page together is the whole league, in order, once; small pages give the same.
    let (whole, pages) = league.view_in_pages(&mut organiser, 500).await;
    assert!(pages >= 2, "{pages}");
    assert_eq!(whole.standings.len(), 120);
    let mut members: Vec<u32> = whole.standings.iter().map(|m| m.member).collect();
    members.sort_unstable();
    assert_eq!(members, (0..120).collect::<Vec<_>>());
    assert_eq!(whole.games.len(), 3);
    let (small, pages) = league.view_in_pages(&mut organiser, 7).await;
    assert_eq!(pages, 120_usize.div_ceil(7));
    assert_eq!(small, whole);
    let mut games: Vec<&str> = small.games.iter().map(|g| g.name.as_str()).collect();
    games.sort_unstable();
    assert_eq!(games, ["Week 1", "Week 2", "Week 3"]);

    // A `from` past the end is an empty last page, not an error.
    let past = organiser
        .call(|id| ClientMessage::GetLeague {
            id,
            league: league.id,
            from: 1000,
            limit: 10,
        })
        .await
        .unwrap();
    assert!(
        matches!(&past, ServerMessage::League { league, next: None, total_members: 120, .. }
            if league.standings.is_empty() && league.games.is_empty()),
        "{past:?}"
    );
}

#[tokio::test]
async fn the_league_list_is_paged_in_bytes_too() {
    // A small outgoing queue makes a page hold at most 1 KiB of leagues.
    let server = TestServer::start_with(ServerConfig {
        outgoing_queue_bytes: 4 * 1024,
        ..ServerConfig::default()
    })
    .await;
    let long = "L".repeat(30);
    for n in 0..24u8 {
        // League creations share the per-address creation budget: one address per league.
        let mut organiser = Client::connected_from(server.addr, [127, 0, 3, n + 1].into()).await;
        let created = organiser
            .call(|id| ClientMessage::CreateLeague {
                id,
                name: format!("{long}{n:02}"),
                password: None,
            })
            .await;
        assert!(
            matches!(created, Ok(ServerMessage::LeagueCreated { .. })),
            "{created:?}"
        );
    }
    let mut reader = server.client().await;
    let (mut from, mut names, mut pages) = (Some(0), Vec::new(), 0);
    while let Some(at) = from {
        let page = reader
            .call(|id| ClientMessage::ListLeagues {
                id,
                from: at,
                limit: 500,
            })
            .await
            .unwrap();
        let bytes = wire::encode_server(&page).len();
        let ServerMessage::Leagues {
            leagues,
            total,
            next,
            ..
        } = page
        else {
            panic!("{page:?}");
        };
        assert_eq!(total, 24);
        // 1 KiB of leagues, and the answer's own few fields.
        assert!(bytes <= 1024 + 64, "a page of {bytes} bytes");
        names.extend(leagues.into_iter().map(|l| l.name));
        pages += 1;
        from = next;
    }
    assert!(pages > 1, "one page held all 24 leagues");
    let mut expected: Vec<String> = (0..24).map(|n| format!("{long}{n:02}")).collect();
    expected.sort();
    assert_eq!(names, expected);
}
