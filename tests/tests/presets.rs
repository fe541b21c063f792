//! Rule presets through the real server: the settings as `create_table` takes them and
//! `list_tables` shows them, and the dice of a Combat with Dice game under the CR 807 rules —
//! committed to before anyone joins, kept secret across a server restart, revealed at the end,
//! and matching every outcome of the game.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, CreateTable};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, Event, MulliganMode, Phase, RuleSet, Ruling,
    ServerMessage, StageName, TableId,
};
use grand_melee_server::{Server, ServerConfig};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

async fn start(config: ServerConfig) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let server = Server::bind(config).await.unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    (stop, task)
}

fn create(rules: RuleSet, spell_range: u8, seats: u8) -> impl FnOnce(u32) -> ClientMessage {
    let settings = CreateTable::new("Official night", seats)
        .spell_range(spell_range)
        .seed(1)
        .mulligan_clock_secs(0)
        .rules(rules)
        .combat_dice()
        .mulligan(MulliganMode::Simultaneous);
    move |id| settings.request(id)
}

/// Receives (mirroring) until the client's view satisfies `done`.
async fn until_view(client: &mut Client, done: impl Fn(&wire::TableView) -> bool) {
    while !client.view.as_ref().is_some_and(&done) {
        client.recv().await;
    }
}

async fn roll(host: &mut Client, table: TableId) -> Event {
    let view = host.view.clone().unwrap();
    let me = host.seat.unwrap().0;
    assert_eq!(host.running_players(), vec![me], "{view:?}");
    let turn = view.turn_of(me).unwrap();
    if turn.phase != Some(Phase::Combat) {
        host.call(|id| ClientMessage::SetPhase {
            id,
            phase: Phase::Combat,
        })
        .await
        .unwrap();
    }
    until_view(host, |v| {
        v.turn_of(me).unwrap().phase == Some(Phase::Combat)
    })
    .await;
    let defender = host.view.as_ref().unwrap().player(me).unwrap().may_attack[0];
    let answer = host
        .call(|id| ClientMessage::AttackRoll {
            id,
            defender,
            attacker_power: 3,
            blocker_powers: vec![1],
        })
        .await
        .unwrap();
    let ServerMessage::Ack { seq, .. } = answer else {
        panic!("{answer:?}");
    };

    // The roll is the acknowledged event: fetch it from the table's history.
    let page = host
        .call(|id| ClientMessage::GetEvents {
            id,
            table,
            from_seq: seq,
            limit: 1,
        })
        .await
        .unwrap();
    let ServerMessage::PastEvents { events, .. } = page else {
        panic!("{page:?}");
    };
    events.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cr807_dice_game_keeps_its_secret_across_a_restart_and_verifies_at_the_end() {
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = ServerConfig {
        listen: format!("127.0.0.1:{port}").parse().unwrap(),
        data_dir: data.path().to_owned(),
        durability: grand_melee_server::journal::Durability::Normal,
        ..ServerConfig::default()
    };
    let addr = config.listen;
    let (stop, task) = start(config.clone()).await;
    let mut host = Client::connected(addr).await;

    // CR 807.2a: range 1 and no other; left out, the rules' own range is taken.
    assert_eq!(
        host.call(create(RuleSet::Cr807, 2, 4)).await.unwrap_err(),
        ErrorCode::BadSettings
    );
    let created = host.call(create(RuleSet::Cr807, 0, 4)).await.unwrap();
    let ServerMessage::TableCreated { table, .. } = created else {
        panic!("{created:?}");
    };
    let listed = host
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 10,
        })
        .await
        .unwrap();
    let ServerMessage::Tables { tables, .. } = listed else {
        panic!("{listed:?}");
    };
    let summary = tables.iter().find(|t| t.table == table).unwrap();
    assert_eq!(
        (
            summary.rules,
            summary.spell_range,
            summary.combat_dice,
            summary.mulligan
        ),
        (RuleSet::Cr807, 1, true, MulliganMode::Simultaneous)
    );

    // Four players join, each contributing entropy; the commitment is there from the lobby.
    let mut players = vec![host];
    for _ in 1..4 {
        players.push(Client::connected(addr).await);
    }
    for (k, client) in players.iter_mut().enumerate() {
        let answer = client
            .call(|id| ClientMessage::Join {
                id,
                table,
                name: format!("P{k}"),
                password: None,
                entropy: Some(format!("dice from {k}")),
                member_token: None,
            })
            .await
            .unwrap();
        let ServerMessage::Seated { player, token, .. } = answer else {
            panic!("{answer:?}");
        };
        client.seat = Some((player, token));
        client.until_snapshot().await;
    }
    let lobby = players[3].view.clone().unwrap();
    assert_eq!(lobby.dice_commitment.len(), 64);
    assert_eq!(lobby.dice_secret, None);
    let first_player = players[0].seat.unwrap().0;
    players[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: Some(first_player),
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await
        .unwrap();
    // Simultaneous mulligans: everyone decides at once, in any order.
    until_view(&mut players[0], |v| v.stage == StageName::Mulligan).await;
    assert_eq!(players[0].view.as_ref().unwrap().mulligan_deciders.len(), 4);
    for client in players.iter_mut().rev() {
        client.call(|id| ClientMessage::Keep { id }).await.unwrap();
    }
    until_view(&mut players[0], |v| v.stage == StageName::Playing).await;
    let first = roll(&mut players[0], table).await;
    assert!(matches!(first, Event::AttackRolled { roll: 0, .. }));

    // The server goes down and comes back: the table, and its secret, come back from the
    // journal.
    let tokens: Vec<_> = players.iter().map(|c| c.seat.unwrap().1).collect();
    drop(players);
    stop.send(()).unwrap();
    task.await.unwrap();
    let (stop, task) = start(config).await;
    let mut host = Client::connected(addr).await;
    host.resume(table, tokens[0]).await.unwrap();
    let me = host
        .view
        .as_ref()
        .unwrap()
        .players
        .iter()
        .find(|p| p.name == "P0")
        .unwrap()
        .player;
    host.seat = Some((me, tokens[0]));
    assert_eq!(
        host.view.as_ref().unwrap().dice_commitment,
        lobby.dice_commitment
    );
    let second = roll(&mut host, table).await;
    assert!(matches!(second, Event::AttackRolled { roll: 1, .. }));

    // The host rules the others out: the game ends and the secret comes out.
    let others: Vec<u16> = host
        .view
        .as_ref()
        .unwrap()
        .players
        .iter()
        .filter(|p| p.player != me && p.status == wire::PlayerStatus::Alive)
        .map(|p| p.player)
        .collect();
    host.call(|id| ClientMessage::Ruling {
        id,
        ruling: Ruling::Eliminate { players: others },
    })
    .await
    .unwrap();
    until_view(&mut host, |v| v.dice_secret.is_some()).await;
    let view = host.view.clone().unwrap();
    assert_eq!(view.stage, StageName::Finished);
    let secret = view.dice_secret.unwrap();
    let secret = wire::dice::DiceSecret::from_hex(&secret).unwrap();
    assert_eq!(secret.commitment(), lobby.dice_commitment);
    // Every outcome of the game, from its journal, is what the dice give.
    let events = host.past_events(table).await;
    let verified = wire::dice::verify((1u64..).zip(&events)).unwrap();
    assert_eq!((verified.players, verified.rolls), (4, 2));
    assert!(
        !verified.first_player_drawn,
        "the host chose the first player"
    );
    stop.send(()).unwrap();
    task.await.unwrap();
}
