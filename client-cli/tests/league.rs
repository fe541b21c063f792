//! `grand-melee league …` against the real server: an organiser and two members on three
//! computers (data folders) create a league, join it, register decks, play a league game (a seat
//! taken with the kept member token, under the league name), read the standings and ledgers,
//! buy an option, and are refused clearly where the league's rules say no.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Player, TestServer, call, run_once, snapshot};
use grand_melee_cli::net::{Conn, endpoint};
use grand_melee_cli::store::TokenStore;
use grand_melee_protocol::{ClientMessage, ServerMessage, TableId};

/// Runs a command that must succeed; returns its output.
async fn ok(addr: &str, dir: &std::path::Path, args: &[&str]) -> String {
    let (status, out, err) = run_once(addr, dir, args).await;
    assert!(status.success(), "{args:?} failed: {err}");
    out
}

/// Runs a command that must fail; returns its standard error.
async fn refused(addr: &str, dir: &std::path::Path, args: &[&str]) -> String {
    let (status, out, err) = run_once(addr, dir, args).await;
    assert!(!status.success(), "{args:?} succeeded: {out}");
    err
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_game_from_the_command_line() {
    let server = TestServer::start().await;
    let addr = server.url();
    let org = tempfile::tempdir().unwrap();
    let ann = tempfile::tempdir().unwrap();
    let bob = tempfile::tempdir().unwrap();

    let out = ok(
        &addr,
        org.path(),
        &[
            "league",
            "create",
            "Tuesday Ascension",
            "--password",
            "swordfish",
        ],
    )
    .await;
    let league = out
        .lines()
        .find_map(|l| l.strip_prefix("league_created "))
        .unwrap()
        .to_owned();
    assert!(out.contains("organiser secret is kept in"), "{out}");

    let err = refused(&addr, ann.path(), &["league", "join", "Tuesday", "Ann"]).await;
    assert!(err.contains("wrong_password"), "{err}");
    let out = ok(
        &addr,
        ann.path(),
        &[
            "league",
            "join",
            "tuesday",
            "Ann",
            "--password",
            "swordfish",
        ],
    )
    .await;
    assert!(
        out.contains(&format!("league_joined {league} member=0")),
        "{out}"
    );
    let err = refused(
        &addr,
        ann.path(),
        &[
            "league",
            "join",
            "Tuesday",
            "Annie",
            "--password",
            "swordfish",
        ],
    )
    .await;
    assert!(err.contains("already member 0"), "{err}");
    ok(
        &addr,
        bob.path(),
        &[
            "league",
            "join",
            &league[..8],
            "Bob",
            "--password",
            "swordfish",
        ],
    )
    .await;

    let err = refused(&addr, ann.path(), &["league", "buy", "Tuesday", "common"]).await;
    assert!(err.contains("no_deck"), "register first: {err}");
    let out = ok(
        &addr,
        ann.path(),
        &[
            "league",
            "register",
            "Tuesday",
            "--deck",
            "Crusade",
            "--alliance",
            "green-white",
            "--basic-set",
            "Mirage",
            "--expansion-set",
            "Visions",
        ],
    )
    .await;
    assert!(
        out.contains("deck member=0 name=\"Ann\" deck=\"Crusade\" alliance=green_white"),
        "{out}"
    );
    assert!(out.contains("cards=45") && out.contains("power=0"), "{out}");
    assert!(
        out.contains("#1 ") && out.contains("registered \"Crusade\""),
        "{out}"
    );
    ok(
        &addr,
        bob.path(),
        &[
            "league",
            "register",
            "Tuesday",
            "--deck",
            "Pirates",
            "--alliance",
            "blue-black-red",
            "--basic-set",
            "Tempest",
            "--expansion-set",
            "Exodus",
        ],
    )
    .await;

    // Only the organiser's computer creates league tables.
    let err = refused(
        &addr,
        ann.path(),
        &[
            "create", "--league", "Tuesday", "--name", "Week 1", "--seats", "2",
        ],
    )
    .await;
    assert!(err.contains("organiser secret"), "{err}");
    let out = ok(
        &addr,
        org.path(),
        &[
            "create", "--league", "Tuesday", "--name", "Week 1", "--seats", "2",
        ],
    )
    .await;
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap()
        .to_owned();
    let table_id = table.parse::<TableId>().unwrap();

    // Ann sits down from her computer under whatever name she types: her league name is used.
    let mut ann_cli = Player::spawn("ann", &addr, ann.path(), &["join", "Week 1", "Whoever"]);
    ann_cli.expect_prefix("seated ").await;
    ann_cli.expect_prefix("you lobby host").await;
    // Bob sits with the token his computer kept.
    let bob_token = TokenStore::new(bob.path())
        .load_league(&endpoint(&addr), league.parse().unwrap())
        .member
        .unwrap()
        .2;
    let mut bob_conn = Conn::open(&addr).await.unwrap();
    let seated = call(
        &mut bob_conn,
        ClientMessage::Join {
            id: 0,
            table: table_id,
            name: "x".into(),
            password: None,
            entropy: None,
            member_token: Some(bob_token),
        },
    )
    .await;
    let ServerMessage::Seated {
        player: bob_player, ..
    } = seated
    else {
        panic!("{seated:?}");
    };
    ann_cli
        .expect_all(&[
            "player_joined",
            "\"Bob\"",
            "member=1",
            "deck=\"Pirates\"",
            "power=0",
        ])
        .await;
    ann_cli.send("start").await;
    ann_cli.expect_prefix("ok start").await;
    for _ in 0..2 {
        let view = snapshot(&mut bob_conn).await;
        match view.mulligan_decider {
            Some(p) if p == bob_player => {
                call(&mut bob_conn, ClientMessage::Keep { id: 0 }).await;
            }
            Some(_) => {
                ann_cli.send("keep").await;
                ann_cli.expect_prefix("ok keep").await;
            }
            None => break,
        }
    }
    let view = snapshot(&mut bob_conn).await;
    assert_eq!(view.stage, grand_melee_protocol::StageName::Playing);
    call(&mut bob_conn, ClientMessage::Concede { id: 0 }).await;
    ann_cli.expect_all(&["you", "game_over place=1"]).await;
    drop(bob_conn);
    let (status, _) = ann_cli.finish().await;
    assert!(status.success());

    // The standings and the ledgers.
    let out = ok(&addr, org.path(), &["league", "show", "Tuesday"]).await;
    assert!(out.contains("members=2 games=1"), "{out}");
    let ann_row = out.lines().find(|l| l.contains(" Ann ")).unwrap();
    let words: Vec<&str> = ann_row.split_whitespace().collect();
    assert_eq!(words[0], "1", "Ann leads: {out}");
    assert!(
        ann_row.contains("Crusade") && ann_row.contains("green_white"),
        "{ann_row}"
    );
    assert_eq!(
        &words[words.len() - 5..],
        ["1", "1", "1", "1", "1.0"],
        "{ann_row}"
    );
    assert!(out.contains(&format!("game {table} finished")), "{out}");
    let out = ok(&addr, ann.path(), &["league", "deck", "Tuesday"]).await;
    assert!(
        out.contains("+1 mana points: place 1 of 2 at \"Week 1\""),
        "{out}"
    );
    let out = ok(&addr, org.path(), &["league", "deck", "Tuesday", "bob"]).await;
    assert!(out.contains("+0 mana points: place 2 of 2"), "{out}");
    assert!(out.contains("losing_streak=1"), "{out}");

    // Spending: too dear is refused with the numbers; two lands for 1 are bought.
    let err = refused(
        &addr,
        ann.path(),
        &["league", "buy", "Tuesday", "set", "--set", "Weatherlight"],
    )
    .await;
    assert!(
        err.contains("this costs 10 mana points and the deck has 1 unspent (not_enough_points)"),
        "{err}"
    );
    let out = ok(
        &addr,
        ann.path(),
        &["league", "buy", "Tuesday", "lands", "--count", "2"],
    )
    .await;
    assert!(out.contains("bought 2 basic lands for 1"), "{out}");
    assert!(out.contains("power=1 spent=1 unspent=0 cards=47"), "{out}");
    let out = ok(&addr, org.path(), &["league", "list"]).await;
    assert!(
        out.contains("members=2 games=1 password=yes name=\"Tuesday Ascension\""),
        "{out}"
    );

    // The league rule: Bob may not meet Ann again at a two-seat table right away.
    let out = ok(
        &addr,
        org.path(),
        &[
            "create", "--league", "Tuesday", "--name", "Week 2", "--seats", "2",
        ],
    )
    .await;
    assert!(out.contains("table_created"));
    let mut ann_again = Player::spawn("ann", &addr, ann.path(), &["join", "Week 2", "Ann"]);
    ann_again.expect_prefix("seated ").await;
    let err = refused(&addr, bob.path(), &["--plain", "join", "Week 2", "Bob"]).await;
    assert!(err.contains("same_opponent"), "{err}");
}
