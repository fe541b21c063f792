//! A league game's credits are written once: the real server process killed (SIGKILL) as the
//! game ends, restarted on the same journal, never credits a deck twice or not at all; and a
//! journal left between the game's last event and its finishing mark (the window a crash can
//! leave) is credited exactly once when the table is recovered.
#![allow(clippy::unwrap_used)]

use std::ffi::OsStr;
use std::path::Path;

use grand_melee_e2e::{
    Client, Received, ServerProcess, TestLeague, concede, concede_in_order, keep_all_hands,
};
use grand_melee_protocol::league::LedgerEntry;
use grand_melee_protocol::{ClientMessage, ServerMessage, TableId};

const BINARY: &str = env!("CARGO_BIN_EXE_grand-melee-server");
const NAMES: [&str; 3] = ["Ann", "Bob", "Cy"];

async fn start(data: &Path) -> ServerProcess {
    let args: [&OsStr; 4] = [
        "--data-dir".as_ref(),
        data.as_os_str(),
        "--durability".as_ref(),
        "full".as_ref(),
    ];
    ServerProcess::spawn(BINARY, &args).await
}

/// How many credits each member's ledger holds for `table`, and each deck's power.
async fn credits(
    addr: std::net::SocketAddr,
    league: &TestLeague,
    table: TableId,
) -> Vec<(usize, u32)> {
    let mut reader = Client::connected(addr).await;
    let mut out = Vec::new();
    for (member, _, _) in &league.members {
        let (deck, ledger) = league.deck(&mut reader, *member).await;
        let count = ledger
            .iter()
            .filter(|l| matches!(&l.entry, LedgerEntry::Credited { table: t, .. } if *t == table))
            .count();
        out.push((count, deck.power));
    }
    out
}

/// Whether `table` is a finished game kept as a replay.
async fn finished(addr: std::net::SocketAddr, table: TableId) -> bool {
    let mut reader = Client::connected(addr).await;
    let answer = reader
        .call(|id| ClientMessage::ListReplays {
            id,
            from: 0,
            limit: 500,
        })
        .await
        .unwrap();
    let ServerMessage::Replays { replays, .. } = answer else {
        panic!("expected replays");
    };
    replays.iter().any(|r| r.table == table)
}

/// Four games, each ended by a concede that races a SIGKILL (sent at once, or after the
/// concede's answer). After each restart, a finished game has exactly one credit per deck and
/// an unfinished one none; the unfinished one is then played to its end on the restarted
/// server and credited once; a second restart changes nothing. Deck power is always the sum of
/// the credited games' mana points.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_as_a_league_game_ends_never_credits_twice_or_not_at_all() {
    let data = tempfile::tempdir().unwrap();
    let mut server = start(data.path()).await;
    let mut organiser = Client::connected(server.addr).await;
    let league = TestLeague::create(&mut organiser, "Crash league", &NAMES).await;
    drop(organiser);
    let mut total = 0;
    for round in 0..4 {
        let (table, mut clients) = league
            .started(server.addr, &format!("Game {round}"), &[0, 1, 2])
            .await;
        // Keep every hand, and let one player concede: two are left.
        let view = clients[0].view.clone().unwrap();
        let first_out = view.players[0].player;
        keep_all_hands(&mut clients).await;
        concede(&mut clients, first_out).await;
        let tokens: Vec<(u16, grand_melee_protocol::SeatToken)> =
            clients.iter().map(|c| c.seat.unwrap()).collect();
        let last = clients
            .iter_mut()
            .find(|c| c.seat.map(|s| s.0) != Some(first_out))
            .unwrap();
        let (last_player, _) = last.seat.unwrap();
        // The game-ending concede, and the kill.
        if round % 2 == 0 {
            last.send(|id| ClientMessage::Concede { id });
        } else {
            let answer = last.call(|id| ClientMessage::Concede { id }).await;
            assert!(matches!(answer, Ok(ServerMessage::Ack { .. })));
        }
        server.signal("KILL");
        for c in &mut clients {
            while !matches!(c.recv().await, Received::Closed(_)) {}
        }
        let _ = server.wait().await;
        server = start(data.path()).await;
        let done = finished(server.addr, table).await;
        let counts = credits(server.addr, &league, table).await;
        if done {
            assert!(
                counts.iter().all(|(n, _)| *n == 1),
                "round {round}: {counts:?}"
            );
        } else {
            assert!(
                counts.iter().all(|(n, _)| *n == 0),
                "round {round}: {counts:?}"
            );
            // Back in their seats, the last concede again, and the game ends for good.
            let mut back = Vec::new();
            for (player, token) in &tokens {
                let mut c = Client::connected(server.addr).await;
                c.resume(table, *token).await.unwrap();
                c.seat = Some((*player, *token));
                back.push(c);
            }
            let conceder = back
                .iter_mut()
                .find(|c| c.seat.map(|s| s.0) == Some(last_player))
                .unwrap();
            let answer = conceder.call(|id| ClientMessage::Concede { id }).await;
            assert!(
                matches!(answer, Ok(ServerMessage::Ack { .. })),
                "{answer:?}"
            );
            assert!(finished(server.addr, table).await);
            let counts = credits(server.addr, &league, table).await;
            assert!(
                counts.iter().all(|(n, _)| *n == 1),
                "round {round}: {counts:?}"
            );
        }
        total += 2 + 1; // three players: 2 for the winner, 1 for the second, 0 for the first out
        let counts = credits(server.addr, &league, table).await;
        assert_eq!(
            counts.iter().map(|(_, p)| p).sum::<u32>(),
            total,
            "round {round}"
        );
    }
    // A second start on the same journal finishes nothing again.
    server.signal("TERM");
    let _ = server.wait().await;
    let server = start(data.path()).await;
    let mut reader = Client::connected(server.addr).await;
    let standings = league.view(&mut reader).await;
    assert_eq!(
        standings.standings.iter().map(|m| m.power).sum::<u32>(),
        total
    );
    assert!(standings.standings.iter().all(|m| m.games == 4));
    server.signal("KILL");
    let _ = server.wait().await;
}

/// The window a crash can leave: the game's last event is in the journal but the table is not
/// marked finished and no credit is written (the server wrote them in two steps). Made by hand
/// from a finished game; the restarted server recovers the table, sees the game over, and
/// credits every deck exactly once. A table marked unfinished whose credits are already in is
/// not credited again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_over_journaled_without_its_finishing_mark_is_credited_once_at_recovery() {
    let data = tempfile::tempdir().unwrap();
    let server = start(data.path()).await;
    let mut organiser = Client::connected(server.addr).await;
    let league = TestLeague::create(&mut organiser, "Window", &NAMES).await;
    drop(organiser);
    let (table, mut clients) = league.started(server.addr, "Only game", &[0, 1, 2]).await;
    let order: Vec<u16> = clients[0].view.as_ref().unwrap().players[..2]
        .iter()
        .map(|p| p.player)
        .collect();
    let standings = concede_in_order(&mut clients, &order).await;
    let expected: u32 = standings.iter().map(|s| u32::from(s.mana_points)).sum();
    assert_eq!(expected, 3);
    let before = credits(server.addr, &league, table).await;
    assert!(before.iter().all(|(n, _)| *n == 1));
    server.signal("TERM");
    let _ = server.wait().await;
    drop(clients);

    let db = data.path().join(grand_melee_server::journal::DB_FILE);
    for credits_kept in [false, true] {
        {
            let conn = rusqlite::Connection::open(&db).unwrap();
            let id = table.as_bytes().to_vec();
            conn.execute(
                "UPDATE melee_tables SET finished_at_ms = NULL WHERE id = ?1",
                [&id],
            )
            .unwrap();
            if !credits_kept {
                conn.execute("DELETE FROM ledger WHERE table_id = ?1", [&id])
                    .unwrap();
            }
        }
        let server = start(data.path()).await;
        assert!(
            finished(server.addr, table).await,
            "recovery finishes the game"
        );
        let after = credits(server.addr, &league, table).await;
        assert_eq!(
            after, before,
            "credits_kept={credits_kept}: once, with the same points"
        );
        server.signal("TERM");
        let _ = server.wait().await;
    }
}
