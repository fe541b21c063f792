//! A whole 28-seat Grand Melee game played through WebSockets by scripted clients, from the lobby
//! to the winner.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, TestServer};
use grand_melee_protocol::rules::{Actor, Command, Table, TableConfig};
use grand_melee_protocol::{
    ClientMessage, Phase, PlayerStatus, ServerMessage, StageName, TableView, TurnStateName,
};

const SEATS: usize = 28;
const SEED: u64 = 2026;

/// A tiny deterministic generator for the script's choices.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

/// Sends one game request from `player` and records it for the local rules core.
async fn act(
    clients: &mut [Client],
    log: &mut Vec<(Actor, Command)>,
    player: u16,
    as_host: bool,
    request: impl FnOnce(u32) -> ClientMessage,
    command: Command,
) -> TableView {
    let client = &mut clients[usize::from(player)];
    let answer = client.call(request).await;
    assert!(
        matches!(answer, Ok(ServerMessage::Ack { .. })),
        "{command:?} by {player}: {answer:?}"
    );
    let actor = if as_host {
        Actor::Host
    } else {
        Actor::Player(player)
    };
    log.push((actor, command));
    // The actor has read everything up to its own acknowledgement: its mirror is current.
    client.view.clone().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_28_seat_game_from_lobby_to_winner_keeps_every_mirror_exact() {
    let server = TestServer::start().await;
    let mut clients = Vec::new();
    let mut log: Vec<(Actor, Command)> = Vec::new();
    let mut host = server.client().await;
    let table = host.create_table("Friday evening", SEATS as u8, SEED).await;
    clients.push(host);
    for _ in 1..SEATS {
        clients.push(server.client().await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        let name = format!("player {i}");
        let player = client.join(table, &name).await.unwrap();
        assert_eq!(usize::from(player), i, "players are numbered in join order");
        log.push((Actor::Host, Command::join(name)));
    }
    let mut spectator = server.client().await;
    spectator.watch(table).await;

    // The host starts: seating is shuffled from the table's seed.
    let mut view = act(
        &mut clients,
        &mut log,
        0,
        true,
        |id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        },
        Command::start(None),
    )
    .await;
    assert_eq!(view.stage, StageName::Mulligan);
    assert_eq!(view.turns.len(), 4, "28 players, range 2: four turns");

    // Paris mulligans, one player at a time from the first player.
    let mut dice = Dice(SEED);
    let mut decisions = 0;
    while let Some(decider) = view.mulligan_decider {
        decisions += 1;
        view = if dice.roll(4) == 0 {
            act(
                &mut clients,
                &mut log,
                decider,
                false,
                |id| ClientMessage::Mulligan { id },
                Command::Mulligan,
            )
            .await
        } else {
            act(
                &mut clients,
                &mut log,
                decider,
                false,
                |id| ClientMessage::Keep { id },
                Command::Keep,
            )
            .await
        };
    }
    assert!(decisions >= SEATS);
    assert_eq!(view.stage, StageName::Playing);

    // Play: running players attack in range, deal damage, concede now and then, end turns.
    let mut steps = 0;
    while view.stage == StageName::Playing {
        steps += 1;
        assert!(steps < 5_000, "the game ends");
        let running: Vec<(u16, Option<Phase>)> = view
            .turns
            .iter()
            .filter(|t| t.state == TurnStateName::Running)
            .map(|t| (t.player, t.phase))
            .collect();
        assert!(!running.is_empty(), "a turn is always running");
        let (player, phase) = running[dice.roll(running.len() as u64) as usize];
        let me = view.player(player).unwrap().clone();
        match dice.roll(10) {
            0..=2 if phase != Some(Phase::Combat) => {
                view = act(
                    &mut clients,
                    &mut log,
                    player,
                    false,
                    |id| ClientMessage::SetPhase {
                        id,
                        phase: Phase::Combat,
                    },
                    Command::SetPhase {
                        phase: grand_melee_protocol::Phase::Combat,
                    },
                )
                .await;
            }
            0..=2 if !me.may_attack.is_empty() => {
                let target = me.may_attack[dice.roll(me.may_attack.len() as u64) as usize];
                let damage = 2 + dice.roll(6) as u32;
                view = act(
                    &mut clients,
                    &mut log,
                    player,
                    false,
                    |id| ClientMessage::Attack {
                        id,
                        target,
                        damage,
                        poison: 0,
                    },
                    Command::Attack {
                        target,
                        damage,
                        poison: 0,
                    },
                )
                .await;
            }
            3 => {
                let target = me.may_target[dice.roll(me.may_target.len() as u64) as usize];
                let amount = 4 + dice.roll(12) as u32;
                view = act(
                    &mut clients,
                    &mut log,
                    player,
                    false,
                    |id| ClientMessage::DealDamage { id, target, amount },
                    Command::DealDamage { target, amount },
                )
                .await;
            }
            4 if dice.roll(3) == 0 => {
                let living: Vec<u16> = view
                    .players
                    .iter()
                    .filter(|p| p.status == PlayerStatus::Alive)
                    .map(|p| p.player)
                    .collect();
                let quitter = living[dice.roll(living.len() as u64) as usize];
                view = act(
                    &mut clients,
                    &mut log,
                    quitter,
                    false,
                    |id| ClientMessage::Concede { id },
                    Command::Concede,
                )
                .await;
            }
            _ => {
                view = act(
                    &mut clients,
                    &mut log,
                    player,
                    false,
                    |id| ClientMessage::EndTurn { id },
                    Command::EndTurn,
                )
                .await;
            }
        }
    }
    assert_eq!(view.stage, StageName::Finished);
    assert_eq!(view.standings.len(), SEATS);

    // Every client's mirror equals a fresh snapshot from the server.
    let last = view.seq;
    clients.push(spectator);
    for client in &mut clients {
        client.catch_up(last).await;
        let snapshot = client.fresh_snapshot().await;
        assert_eq!(client.view.as_ref(), Some(&snapshot));
    }

    // The standings match the rules core fed the same requests, with the table's dice secret
    // as the game revealed it at its end.
    let secret = view
        .dice_secret
        .as_deref()
        .expect("the secret is revealed at the end");
    let config = TableConfig {
        seats: SEATS as u8,
        seed: SEED,
        secret: grand_melee_protocol::dice::DiceSecret::from_hex(secret).unwrap(),
        ..TableConfig::default()
    };
    let mut core = Table::new(config).unwrap();
    for (actor, command) in log {
        core.handle(actor, command).unwrap();
    }
    let expected: Vec<(u16, u8, u8)> = core
        .standings()
        .iter()
        .map(|s| (s.player, s.place, s.mana_points))
        .collect();
    let got: Vec<(u16, u8, u8)> = view
        .standings
        .iter()
        .map(|s| (s.player, s.place, s.mana_points))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(got[0].2 as usize, SEATS - 1, "the winner beat everyone");

    // The table lives on after the game: people chat and leave, and nobody is thrown out.
    let chat = clients[0]
        .call(|id| ClientMessage::Chat {
            id,
            text: "gg".into(),
        })
        .await;
    assert!(matches!(chat, Ok(ServerMessage::Ack { .. })), "{chat:?}");
    clients[5].drop_connection();
    let gone = clients[0]
        .until_event(|e| match e {
            grand_melee_protocol::Event::ConnectionChanged {
                player: 5,
                connected: false,
            } => Some(()),
            _ => None,
        })
        .await;
    assert_eq!(gone, ());
    assert!(clients[0].closed.is_none());
    server.shutdown().await;
}
