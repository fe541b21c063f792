//! Every (request, error code) pair `protocol/src/errors_of.rs` declares for the Mountain Magic
//! requests (`mountain_magic.*`) answered through a socket, as `tests/tests/error_codes.rs` does
//! for the others: the refusals before the climb looks at a request (a spectator's, a paused or
//! adjourned table's, a climb not under way), the climb's own from the first flip to the
//! battle, and the day's standings'. Each refusal is checked to change nothing.
//!
//! The battle's refusals need a battle: the climb is played from the view (the first place a
//! card may go, else the discard pile, else a flip; the path with the most creatures with
//! abilities and spells; each land where it powers what is still missing), table after table,
//! until every pair has been seen. A table's deal comes from its dice, which nobody can choose:
//! played so, four climbs in five reach the battle and 44% a stored use of an ability (the
//! rarest; measured over 400 deals of the default deck), so [`TABLES`] tables leave a pair
//! unseen with a chance below one in 10^12 (0.56^60).
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::error_codes::Seen;
use grand_melee_e2e::{Client, CreateTable, TestServer};
use grand_melee_protocol::league::LeagueId;
use grand_melee_protocol::mountain_magic::Climb;
use grand_melee_protocol::mountain_magic::climb::all_paths;
use grand_melee_protocol::mountain_magic::pool::Pool;
use grand_melee_protocol::mountain_magic_types::{
    Colour, Effect, ForceRef, ManaPlace, MmPhase, MountainCommand as C, MountainView, Side,
};
use grand_melee_protocol::{ClientMessage, ErrorCode, GameKind, StageName, TableId, TableView};
use grand_melee_server::ServerConfig;

/// The most tables [`mountain_magic_climb_and_battle`] climbs before it gives up.
const TABLES: usize = 60;

fn config() -> ServerConfig {
    ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    }
}

fn mm(command: C) -> impl FnOnce(u32) -> ClientMessage {
    move |id| ClientMessage::mountain_magic(id, command)
}

/// One of each Mountain Magic request (the climb's state decides whether it is taken).
fn every_request() -> Vec<C> {
    vec![
        C::Flip,
        C::Place { row: 1, pos: 0 },
        C::Discard,
        C::Path { path: vec![0; 7] },
        C::Mana { place: None },
        C::Attack {
            attackers: vec![0],
            target: 0,
        },
        C::Cast {
            force: 0,
            target: None,
        },
        C::Activate {
            force: 0,
            target: None,
        },
        C::EndTurn,
    ]
}

fn climb(view: &TableView) -> &MountainView {
    view.mountain_magic.as_deref().unwrap()
}

fn mine(force: u8) -> ForceRef {
    ForceRef {
        side: Side::Player,
        force,
    }
}

/// Sends `request` and expects it refused with `code`, the table unchanged.
async fn refused(seen: &mut Seen, client: &mut Client, request: C, code: ErrorCode) {
    let before = client.fresh_snapshot().await;
    seen.expect(client, mm(request.clone()), code).await;
    let after = client.fresh_snapshot().await;
    assert_eq!(
        after.seq, before.seq,
        "{request:?} refused, yet an event followed"
    );
    assert_eq!(after.mountain_magic, before.mountain_magic, "{request:?}");
}

/// A new Mountain Magic table with Ann seated (and its host), in the lobby.
async fn seated(server: &TestServer) -> (TableId, Client) {
    let mut ann = server.client().await;
    let table = ann
        .create(CreateTable::new("climb", 1).game(GameKind::MountainMagic))
        .await
        .unwrap();
    ann.join(table, "Ann").await.unwrap();
    (table, ann)
}

async fn start(ann: &mut Client) {
    ann.call(|id| ClientMessage::Start {
        id,
        first_player: None,
        seating: Default::default(),
        order: Vec::new(),
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn mountain_magic_gates() {
    let server = TestServer::start_with(config()).await;
    let mut seen = Seen::default();
    let (table, mut ann) = seated(&server).await;
    // In the lobby: no climb under way.
    for request in every_request() {
        refused(&mut seen, &mut ann, request, ErrorCode::NotPlaying).await;
    }
    // A spectator's requests.
    let mut watcher = server.client().await;
    watcher.watch(table).await;
    start(&mut ann).await;
    for request in every_request() {
        refused(&mut seen, &mut watcher, request, ErrorCode::NotAPlayer).await;
    }
    // The host (Ann) pauses the table, then adjourns it: nothing is taken until it goes on.
    let paused = ann
        .call(|id| ClientMessage::Pause { id, paused: true })
        .await;
    assert!(paused.is_ok(), "{paused:?}");
    for request in every_request() {
        refused(&mut seen, &mut ann, request, ErrorCode::TablePaused).await;
    }
    let adjourned = ann.call(|id| ClientMessage::Adjourn { id }).await;
    assert!(adjourned.is_ok(), "{adjourned:?}");
    for request in every_request() {
        refused(&mut seen, &mut ann, request, ErrorCode::TableAdjourned).await;
    }
    let resumed = ann.call(|id| ClientMessage::ResumeGame { id }).await;
    assert!(resumed.is_ok(), "{resumed:?}");
    // The climb goes on; conceded, it is over: not under way again.
    let flipped = ann.call(mm(C::Flip)).await;
    assert!(flipped.is_ok(), "{flipped:?}");
    let conceded = ann.call(|id| ClientMessage::Concede { id }).await;
    assert!(conceded.is_ok(), "{conceded:?}");
    assert_eq!(ann.fresh_snapshot().await.stage, StageName::Finished);
    for request in every_request() {
        refused(&mut seen, &mut ann, request, ErrorCode::NotPlaying).await;
    }
    seen.check("mountain_magic_gates");
    drop((ann, watcher));
    server.shutdown().await;
}

/// Which of the climb's refusals [`mountain_magic_climb_and_battle`] has yet to see.
#[derive(Debug, Default)]
struct Left {
    climbing: bool,
    path: bool,
    mana: bool,
    cards: bool,
    attack_target: bool,
    cast_target: bool,
    activate_target: bool,
}

impl Left {
    fn all() -> Self {
        Self {
            climbing: true,
            path: true,
            mana: true,
            cards: true,
            attack_target: true,
            cast_target: true,
            activate_target: true,
        }
    }

    fn none(&self) -> bool {
        !(self.climbing
            || self.path
            || self.mana
            || self.cards
            || self.attack_target
            || self.cast_target
            || self.activate_target)
    }
}

/// A target `effect` does not take: none where it takes one, one where it takes none.
fn wrong_target(effect: Effect) -> Option<ForceRef> {
    match effect.target() {
        Some(_) => None,
        None => Some(ForceRef {
            side: Side::Opponent,
            force: 0,
        }),
    }
}

/// The path whose cards serve the battle's refusals best: creatures with abilities, then other
/// creatures and spells, fewer coloured symbols first.
fn best_path(game: &Climb) -> Vec<u8> {
    let pool = Pool::builtin();
    let score = |path: &Vec<u8>| -> i32 {
        (0u8..)
            .zip(path)
            .map(|(k, &pos)| {
                let card = pool.card(game.at(6 - k, pos).unwrap()).unwrap();
                let worth = match (card.is_creature(), card.ability.is_some()) {
                    (true, true) => 5,
                    (true, false) => 2,
                    (false, _) if card.effect.is_some() => 2,
                    _ => 0,
                };
                worth - i32::try_from(card.cost.coloured.len()).unwrap()
            })
            .sum()
    };
    all_paths().into_iter().max_by_key(score).unwrap()
}

/// Where the drawn land goes: toward what is still missing — a stored use of a powered
/// creature's ability, a creature with an ability, a creature, a spell — the card nearest to
/// being powered first.
fn best_place(game: &Climb, left: &Left) -> Option<ManaPlace> {
    let pool = Pool::builtin();
    let worth = |place: &ManaPlace| -> i32 {
        let card = mine(place.force);
        let force = game.force(card).unwrap();
        let face = pool.card(force.card).unwrap();
        let mut worth = -i32::try_from(game.needs(card, place.ability).len()).unwrap();
        if place.ability && force.powered && left.activate_target {
            worth += 20;
        }
        if !place.ability && face.is_creature() {
            if face.ability.is_some() && left.activate_target {
                worth += 10;
            }
            if left.attack_target {
                worth += 5;
            }
        }
        if !place.ability && !face.is_creature() && left.cast_target {
            worth += 5;
        }
        worth
    };
    game.mana_places(Side::Player)
        .into_iter()
        .max_by_key(|place| worth(place))
}

/// Climbs Ann's started climb, sending on the way each refusal still `left`, until the table
/// is finished or nothing is left.
async fn climb_and_refuse(seen: &mut Seen, ann: &mut Client, left: &mut Left) {
    for _ in 0..3_000 {
        let view = ann.fresh_snapshot().await;
        if view.stage != StageName::Playing || left.none() {
            return;
        }
        let mountain = climb(&view);
        let game = Climb::from_view(mountain.clone());
        let next = match mountain.phase {
            MmPhase::Climbing => {
                if left.climbing && mountain.flipped.is_none() && mountain.discard.is_empty() {
                    // Nothing turned over: nothing to place or discard, and no path or
                    // battle yet.
                    for request in every_request().into_iter().skip(1) {
                        refused(seen, ann, request, ErrorCode::WrongPhase).await;
                    }
                    let flipped = ann.call(mm(C::Flip)).await;
                    assert!(flipped.is_ok(), "{flipped:?}");
                    // A card turned over: not another, and not where nothing is below.
                    refused(seen, ann, C::Flip, ErrorCode::WrongPhase).await;
                    let top = C::Place { row: 6, pos: 0 };
                    refused(seen, ann, top, ErrorCode::IllegalPlacement).await;
                    left.climbing = false;
                    continue;
                }
                match (game.placements().first(), mountain.flipped) {
                    (Some(&(row, pos)), _) => C::Place { row, pos },
                    (None, Some(_)) => C::Discard,
                    (None, None) => C::Flip,
                }
            }
            MmPhase::Path => {
                if left.path {
                    for path in [vec![1; 7], vec![0; 6], vec![0, 1, 3, 3, 3, 3, 3]] {
                        refused(seen, ann, C::Path { path }, ErrorCode::BadPath).await;
                    }
                    left.path = false;
                }
                C::Path {
                    path: best_path(&game),
                }
            }
            MmPhase::Battle => {
                let battle = mountain.battle.as_ref().unwrap();
                assert_eq!(
                    battle.turn,
                    Some(Side::Player),
                    "the player's turn between requests"
                );
                if battle.pending_land.is_some() {
                    if left.mana {
                        // No card at place 40; and letting go a land a card can use (the
                        // seed: "place it on the card").
                        let nowhere = ManaPlace {
                            force: 40,
                            ability: false,
                            colour: Colour::Red,
                        };
                        let place = Some(nowhere);
                        refused(seen, ann, C::Mana { place }, ErrorCode::BadMana).await;
                        if !game.mana_places(Side::Player).is_empty() {
                            let place = None;
                            refused(seen, ann, C::Mana { place }, ErrorCode::BadMana).await;
                        }
                        left.mana = false;
                    }
                    C::Mana {
                        place: best_place(&game, left),
                    }
                } else {
                    if left.cards {
                        let attackers = vec![40];
                        let requests = [
                            C::Attack {
                                attackers,
                                target: 0,
                            },
                            C::Cast {
                                force: 40,
                                target: None,
                            },
                            C::Activate {
                                force: 40,
                                target: None,
                            },
                        ];
                        for request in requests {
                            refused(seen, ann, request, ErrorCode::BadCard).await;
                        }
                        left.cards = false;
                    }
                    for force in (0..battle.player.len()).map(|k| u8::try_from(k).unwrap()) {
                        if left.attack_target && game.ready_attackers(&[mine(force)]) {
                            let attack = C::Attack {
                                attackers: vec![force],
                                target: 40,
                            };
                            refused(seen, ann, attack, ErrorCode::BadTarget).await;
                            left.attack_target = false;
                        }
                        if let Some(effect) = game.castable(mine(force))
                            && left.cast_target
                        {
                            let target = wrong_target(effect);
                            let cast = C::Cast { force, target };
                            refused(seen, ann, cast, ErrorCode::BadTarget).await;
                            left.cast_target = false;
                        }
                        if let Some(effect) = game.activatable(mine(force))
                            && left.activate_target
                        {
                            let target = wrong_target(effect);
                            let activate = C::Activate { force, target };
                            refused(seen, ann, activate, ErrorCode::BadTarget).await;
                            left.activate_target = false;
                        }
                    }
                    C::EndTurn
                }
            }
            other => panic!("a climb under way in phase {other:?}"),
        };
        let taken = ann.call(mm(next.clone())).await;
        assert!(taken.is_ok(), "{next:?}: {taken:?}");
    }
    panic!("a climb went on for 3000 requests");
}

#[tokio::test]
async fn mountain_magic_climb_and_battle() {
    let server = TestServer::start_with(config()).await;
    let mut seen = Seen::default();
    let mut left = Left::all();
    let mut tables = 0;
    while !left.none() {
        assert!(tables < TABLES, "{TABLES} climbs left {left:?}");
        tables += 1;
        let (_, mut ann) = seated(&server).await;
        start(&mut ann).await;
        climb_and_refuse(&mut seen, &mut ann, &mut left).await;
    }
    seen.check("mountain_magic_climb_and_battle");
    server.shutdown().await;
}

#[tokio::test]
async fn mountain_magic_standings() {
    let server = TestServer::start().await;
    let mut seen = Seen::default();
    let mut client = server.client().await;
    let standings = |day: &str, league: Option<LeagueId>| {
        let day = day.to_owned();
        move |id| ClientMessage::MountainMagicStandings {
            id,
            day,
            league,
            from: 0,
            limit: 10,
        }
    };
    for day in ["2026-02-30", "yesterday", ""] {
        seen.expect(&mut client, standings(day, None), ErrorCode::BadDay)
            .await;
    }
    let nowhere = Some(LeagueId::new_random());
    seen.expect(
        &mut client,
        standings("today", nowhere),
        ErrorCode::UnknownLeague,
    )
    .await;
    seen.check("mountain_magic_standings");
    drop(client);
    server.shutdown().await;
}
