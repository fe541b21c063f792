//! The page's fold (`server/web/fold.js`) held to the Rust fold (`Table::apply`).
//!
//! Random tables are played through the protocol crate's own `Session` — every table option,
//! joins and departures, spectators, disconnections and resumptions, the clocks, the host's
//! powers, rulings, calls for the host, league decks — on a simulated clock. Every event the
//! session publishes is folded by a `Mirror` (the Rust client's copy: `Table::apply`), and its
//! view after EVERY event is written next to the event, both as the wire's serde types encode
//! them (JSON here, MessagePack on the wire: the same names and shapes). One `node` process then
//! runs `tests/fold/check.js` over all the games: it folds each game's events with `fold.js`
//! from `emptyView` and reports the first difference per game (`GMFold.diff`), derived fields
//! included (`may_attack`, `may_target`, `stacks`, spheres, the mulligan deciders, …).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::{Duration, Instant};

use grand_melee_loadtest::rng::Rng;
use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::league::SeatDeck;
use grand_melee_protocol::rules::{Stage, TurnState};
use grand_melee_protocol::session::{ConnectionId, Effect, Role, Session, Timing};
use grand_melee_protocol::{
    ClientMessage, Mirror, MulliganMode, Phase, PlayerId, Reduction, RuleSet, Ruling, SeatToken,
    SeatingMode, Settings, examples,
};
use serde_json::{Value, json};

/// Games played; each is checked after every one of its events.
const GAMES: u64 = 100;
/// Requests (and clock ticks) per game at most: a game that has not ended by then is checked
/// as far as it went.
const MAX_STEPS: usize = 800;

/// One random table driven through the session on a simulated clock.
struct Game {
    session: Session,
    mirror: Mirror,
    rng: Rng,
    now: Instant,
    /// Every connection ever opened (the session says which are still members).
    connections: Vec<ConnectionId>,
    /// Seat tokens, by player (from the session's `SetSeat` / `RemoveSeat`).
    tokens: Vec<(PlayerId, SeatToken)>,
    next_connection: ConnectionId,
    /// `[event, view after it]` for every event, in order (JSON).
    frames: Vec<String>,
    /// The kinds of event seen.
    kinds: BTreeSet<String>,
    /// The view before any event.
    initial: Value,
    league: bool,
}

fn settings(rng: &mut Rng, game: u64) -> Settings {
    let league = game % 5 == 3;
    // Mostly small tables (every event's view is written out); a quarter of full ones, mostly
    // under the seed's rules with short ranges, where turns merge and reductions are withdrawn.
    let big = game % 4 == 1;
    let cr807 = rng.chance(if big { 0.2 } else { 0.4 });
    let seats = if big {
        15 + rng.below(26)
    } else {
        2 + rng.below(13)
    };
    let range = if cr807 {
        1
    } else if big {
        1 + rng.below(2)
    } else {
        1 + rng.below(4)
    };
    Settings {
        mountain_magic: None,
        seats: u8::try_from(seats).unwrap(),
        spell_range: u8::try_from(range).unwrap(),
        reduction: if rng.chance(0.5) {
            Reduction::Eager
        } else {
            Reduction::Forced
        },
        starting_life: [20, 20, 30, 1, 40][usize::try_from(rng.below(5)).unwrap()],
        hand_size: 7,
        password: false,
        turn_clock_secs: [0, 60, 300][usize::try_from(rng.below(3)).unwrap()],
        absence_limit_secs: [60, 600][usize::try_from(rng.below(2)).unwrap()],
        mulligan_clock_secs: [0, 60][usize::try_from(rng.below(2)).unwrap()],
        max_spectators: 3,
        rules: if cr807 { RuleSet::Cr807 } else { RuleSet::Seed },
        combat_dice: rng.chance(0.5),
        mulligan: if rng.chance(0.5) {
            MulliganMode::Paris
        } else {
            MulliganMode::Simultaneous
        },
        league: league.then_some(examples::LEAGUE),
        game: Default::default(),
    }
}

impl Game {
    fn new(game: u64) -> Self {
        let mut rng = Rng::new(0xf01d, game);
        let settings = settings(&mut rng, game);
        let league = settings.league.is_some();
        let now = Instant::now();
        let timing = Timing {
            grace: Duration::from_secs(30),
            unjoined: Duration::from_secs(3_600),
            chat_per_minute: 30.0,
            adjourned_expiry: None,
        };
        let session = Session::new(settings, DiceSecret::from_seed(game), timing, now).unwrap();
        let view = session.view(examples::TABLE, "fold");
        let initial = serde_json::to_value(&view).unwrap();
        let mirror = Mirror::new(&view).unwrap();
        Self {
            session,
            mirror,
            rng,
            now,
            connections: Vec::new(),
            tokens: Vec::new(),
            next_connection: 1,
            frames: Vec::new(),
            kinds: BTreeSet::new(),
            initial,
            league,
        }
    }

    /// Folds what the session published since the last call, writing the view after each event;
    /// notes seat tokens.
    fn collect(&mut self) {
        let effects = self.session.take_effects();
        if effects.is_empty() {
            return;
        }
        for effect in effects {
            match effect {
                Effect::Events { first_seq, events } => {
                    for (seq, event) in (first_seq..).zip(&events) {
                        self.mirror.apply(seq, event).unwrap();
                        let view = serde_json::to_string(&self.mirror.view()).unwrap();
                        let event = serde_json::to_value(event).unwrap();
                        self.kinds
                            .insert(event["kind"].as_str().unwrap().to_owned());
                        self.frames.push(format!("[{event},{view}]"));
                    }
                }
                Effect::SetSeat { player, token } => self.tokens.push((player, token)),
                Effect::RemoveSeat { player } => self.tokens.retain(|(p, _)| *p != player),
                _ => {}
            }
        }
    }

    fn peer(&mut self) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(
            10,
            0,
            0,
            u8::try_from(self.rng.below(250)).unwrap(),
        ))
    }

    fn open(&mut self) -> ConnectionId {
        let c = self.next_connection;
        self.next_connection += 1;
        self.connections.push(c);
        c
    }

    fn members(&self) -> Vec<(ConnectionId, Role)> {
        self.connections
            .iter()
            .filter_map(|&c| self.session.role(c).map(|r| (c, r)))
            .collect()
    }

    fn player_connection(&self, player: PlayerId) -> Option<ConnectionId> {
        self.members()
            .into_iter()
            .find(|(_, r)| *r == Role::Player(player))
            .map(|(c, _)| c)
    }

    fn any_player(&mut self) -> PlayerId {
        let ids: Vec<PlayerId> = self
            .session
            .table()
            .lobby()
            .iter()
            .map(|(p, _)| *p)
            .collect();
        self.rng.pick(&ids).unwrap_or(0)
    }

    fn request_from(&mut self, connection: Option<ConnectionId>, request: &ClientMessage) {
        if let Some(c) = connection {
            let before = self.session.seq();
            if self.session.request(self.now, c, request).is_err() {
                assert_eq!(self.session.seq(), before, "a refusal published events");
            }
        }
    }

    /// A request from `player`; one who is away mostly comes back to make it.
    fn as_player(&mut self, player: PlayerId, request: &ClientMessage) {
        let token = self
            .tokens
            .iter()
            .find(|(p, _)| *p == player)
            .map(|(_, t)| *t);
        if self.player_connection(player).is_none()
            && let Some(token) = token
            && self.rng.chance(0.7)
        {
            let c = self.open();
            let peer = self.peer();
            let _ = self.session.resume(self.now, c, peer, token);
        }
        let c = self.player_connection(player);
        self.request_from(c, request);
    }

    fn as_host(&mut self, request: &ClientMessage) {
        if let Some(host) = self.session.table().facts().host {
            self.as_player(host, request);
        }
    }

    fn join(&mut self) {
        let c = self.open();
        let peer = self.peer();
        let n = self.next_connection;
        let deck = self.league.then(|| SeatDeck {
            member: u32::try_from(n).unwrap(),
            deck: format!("deck {n}"),
            power: u32::try_from(self.rng.below(30)).unwrap(),
            last_duel: None,
        });
        let token = SeatToken::from_u128(0x5ea7_0000_0000 + u128::from(n));
        let _ = self.session.join(
            self.now,
            c,
            peer,
            format!("Player {n}"),
            format!("entropy {n}"),
            deck,
            token,
        );
    }

    /// Connections come and go: spectators watch and leave, players drop and come back.
    fn churn(&mut self) {
        let members = self.members();
        match self.rng.below(6) {
            0 => {
                let c = self.open();
                let peer = self.peer();
                let _ = self.session.watch(self.now, c, peer);
            }
            1 | 2 => {
                if let Some((c, _)) = self.rng.pick(&members) {
                    if self.rng.chance(0.5) {
                        self.session.gone(self.now, c);
                    } else {
                        self.session.leave(self.now, c);
                    }
                }
            }
            _ => {
                // Mostly the seats nobody holds.
                let facts = self.session.table().facts();
                let tokens: Vec<SeatToken> = self
                    .tokens
                    .iter()
                    .filter(|(p, _)| !facts.presence(*p).connected || self.rng.chance(0.1))
                    .map(|(_, t)| *t)
                    .collect();
                if let Some(token) = self.rng.pick(&tokens) {
                    let c = self.open();
                    let peer = self.peer();
                    let _ = self.session.resume(self.now, c, peer, token);
                }
            }
        }
    }

    /// Time passes: a few seconds, or up to the session's next deadline.
    fn tick(&mut self) {
        match self.session.poll_timeout() {
            Some(deadline) if self.rng.chance(0.5) => self.now = self.now.max(deadline),
            _ => self.now += Duration::from_secs(self.rng.below(20)),
        }
        self.session.handle_timeout(self.now);
    }

    /// The host's powers and the table's talk, in any stage.
    fn social(&mut self) {
        let target = self.any_player();
        let request = match self.rng.below(10) {
            // A pause or an adjournment is soon over.
            _ if self.session.paused() && self.rng.chance(0.5) => ClientMessage::Pause {
                id: 1,
                paused: false,
            },
            _ if self.session.adjourned() && self.rng.chance(0.5) => {
                ClientMessage::ResumeGame { id: 2 }
            }
            0 => ClientMessage::Pause {
                id: 1,
                paused: true,
            },
            1 => ClientMessage::Mute {
                id: 3,
                player: self.rng.chance(0.7).then_some(target),
                muted: self.rng.chance(0.6),
            },
            2 => ClientMessage::TransferHost {
                id: 4,
                player: target,
            },
            3 => ClientMessage::Kick {
                id: 5,
                player: target,
                ban: self.rng.chance(0.3),
            },
            4 => ClientMessage::AnswerCall {
                id: 6,
                player: self.rng.chance(0.6).then_some(target),
            },
            5 => ClientMessage::Adjourn { id: 7 },
            6 => ClientMessage::ResumeGame { id: 2 },
            7 => ClientMessage::CallHost {
                id: 8,
                reason: "a question".into(),
            },
            _ => ClientMessage::Chat {
                id: 9,
                text: "gg".into(),
            },
        };
        // The host's powers mostly from the host; talk, and some refusals, from anyone.
        let anyone = matches!(
            request,
            ClientMessage::CallHost { .. }
                | ClientMessage::Chat { .. }
                | ClientMessage::ResumeGame { .. }
        );
        if anyone && self.rng.chance(0.7) || self.rng.chance(0.2) {
            let player = self.any_player();
            self.as_player(player, &request);
        } else {
            self.as_host(&request);
        }
    }

    fn lobby_step(&mut self) {
        let seated = self.session.table().lobby().len();
        let seats = usize::from(self.session.settings().seats);
        let roll = self.rng.below(100);
        match roll {
            0..=69 if seated < seats => self.join(),
            // Mostly full tables, and some that start early.
            0..=72 => {
                let ids: Vec<PlayerId> = self
                    .session
                    .table()
                    .lobby()
                    .iter()
                    .map(|(p, _)| *p)
                    .collect();
                let mut order = ids.clone();
                for i in (1..order.len()).rev() {
                    let j = usize::try_from(self.rng.below(u64::try_from(i + 1).unwrap())).unwrap();
                    order.swap(i, j);
                }
                let seating = match self.rng.below(3) {
                    0 => SeatingMode::Random,
                    1 => SeatingMode::Joined,
                    _ => SeatingMode::Arranged,
                };
                let request = ClientMessage::Start {
                    id: 10,
                    first_player: if self.rng.chance(0.5) {
                        self.rng.pick(&ids)
                    } else {
                        None
                    },
                    seating,
                    order: if seating == SeatingMode::Arranged {
                        order
                    } else {
                        Vec::new()
                    },
                };
                self.as_host(&request);
            }
            73..=77 if self.league => {
                let by = self.session.table().first_decider().unwrap_or(0);
                let player = self.any_player();
                self.as_player(by, &ClientMessage::ChooseFirst { id: 11, player });
            }
            73..=84 => self.churn(),
            85..=92 => self.social(),
            _ => self.tick(),
        }
    }

    fn mulligan_step(&mut self) {
        let deciders = self.session.table().mulligan_deciders();
        let roll = self.rng.below(100);
        match (roll, self.rng.pick(&deciders)) {
            (0..=74, Some(p)) => {
                let request = if self.rng.chance(0.3) {
                    ClientMessage::Mulligan { id: 12 }
                } else {
                    ClientMessage::Keep { id: 13 }
                };
                self.as_player(p, &request);
            }
            (75..=80, Some(player)) => {
                self.as_host(&ClientMessage::Ruling {
                    id: 14,
                    ruling: Ruling::Keep { player },
                });
            }
            (81..=86, _) => self.churn(),
            (87..=92, _) => self.social(),
            _ => self.tick(),
        }
    }

    fn playing_step(&mut self) {
        let table = self.session.table();
        let running: Vec<PlayerId> = table
            .turns()
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .map(|t| table.players()[t.seat].id)
            .collect();
        let living: Vec<PlayerId> = table
            .players()
            .iter()
            .filter(|p| p.status.is_alive())
            .map(|p| p.id)
            .collect();
        let Some(&me) = self
            .rng
            .pick(&running)
            .as_ref()
            .or(self.rng.pick(&living).as_ref())
        else {
            self.tick();
            return;
        };
        let may_target = table.damage_targets(me);
        let may_attack = table.attack_targets(me);
        let roll = self.rng.below(100);
        let target = self.rng.pick(&may_target);
        let defender = self.rng.pick(&may_attack);
        match roll {
            0..=49 => self.as_player(me, &ClientMessage::EndTurn { id: 20 }),
            50..=54 => {
                let phase =
                    Phase::ALL[usize::try_from(self.rng.below(6)).unwrap() % Phase::ALL.len()];
                self.as_player(me, &ClientMessage::SetPhase { id: 21, phase });
            }
            55..=59 => self.as_player(
                me,
                &ClientMessage::SetPhase {
                    id: 22,
                    phase: Phase::Combat,
                },
            ),
            60..=64 => {
                if let Some(target) = defender {
                    let damage = u32::try_from(self.rng.below(8)).unwrap();
                    let poison = u32::try_from(self.rng.below(4)).unwrap();
                    self.as_player(
                        me,
                        &ClientMessage::Attack {
                            id: 23,
                            target,
                            damage,
                            poison,
                        },
                    );
                }
            }
            65..=67 => {
                if let Some(defender) = defender {
                    let blocker_powers: Vec<u32> = (0..self.rng.below(3))
                        .map(|_| u32::try_from(self.rng.below(6)).unwrap())
                        .collect();
                    let attacker_power = u32::try_from(self.rng.below(8)).unwrap();
                    self.as_player(
                        me,
                        &ClientMessage::AttackRoll {
                            id: 24,
                            defender,
                            attacker_power,
                            blocker_powers,
                        },
                    );
                    self.as_player(
                        defender,
                        &ClientMessage::CounterRoll {
                            id: 25,
                            attacker: me,
                            blocker_power: 2,
                            attacker_power,
                        },
                    );
                }
            }
            68..=71 => {
                if let Some(target) = target {
                    let amount = u32::try_from(self.rng.below(12)).unwrap();
                    self.as_player(
                        me,
                        &ClientMessage::DealDamage {
                            id: 26,
                            target,
                            amount,
                        },
                    );
                }
            }
            72..=73 => {
                let delta = i32::try_from(self.rng.below(7)).unwrap() - 3;
                let request = if self.rng.chance(0.5) {
                    ClientMessage::ChangeLife { id: 27, delta }
                } else {
                    ClientMessage::ChangePoison { id: 28, delta }
                };
                self.as_player(me, &request);
            }
            74..=77 => {
                let p = self.rng.pick(&living).unwrap_or(me);
                self.as_player(p, &ClientMessage::Concede { id: 29 });
            }
            78 => self.as_player(me, &ClientMessage::ExtraTurn { id: 30 }),
            79..=85 => {
                let player = self.rng.pick(&living).unwrap_or(me);
                let ruling = match self.rng.below(6) {
                    0 | 5 => Ruling::Eliminate {
                        players: vec![player],
                    },
                    1 => Ruling::SetLife {
                        player,
                        life: i32::try_from(self.rng.below(10)).unwrap(),
                    },
                    2 => Ruling::SetPoison {
                        player,
                        poison: u32::try_from(self.rng.below(12)).unwrap(),
                    },
                    3 => Ruling::ExtraTurn { player },
                    _ => Ruling::EndTurn { player: me },
                };
                self.as_host(&ClientMessage::Ruling { id: 31, ruling });
            }
            86..=89 => self.churn(),
            90..=93 => self.social(),
            _ => self.tick(),
        }
    }

    /// Everyone goes and nobody comes back: the game is abandoned when the absence limit runs
    /// out.
    fn desert(&mut self) {
        for (c, _) in self.members() {
            self.session.gone(self.now, c);
        }
        self.collect();
        for _ in 0..50 {
            let Some(deadline) = self.session.poll_timeout() else {
                break;
            };
            self.now = self.now.max(deadline);
            self.session.handle_timeout(self.now);
            self.collect();
            if self.session.table().stage() == Stage::Finished {
                break;
            }
        }
    }

    /// Plays the table until its game is over (or `MAX_STEPS`); some tables are deserted in
    /// the middle of their game.
    fn play(&mut self, deserted: bool) {
        for step in 0..MAX_STEPS {
            if deserted && step >= 200 && self.session.table().stage() == Stage::Playing {
                self.desert();
            }
            let stopped = self.session.paused() || self.session.adjourned();
            match self.session.table().stage() {
                _ if stopped && self.rng.chance(0.3) => self.social(),
                Stage::Lobby => self.lobby_step(),
                Stage::Mulligan { .. } => self.mulligan_step(),
                Stage::Playing => self.playing_step(),
                Stage::Finished => break,
            }
            self.collect();
            let session = &self.session;
            self.connections.retain(|&c| session.role(c).is_some());
        }
        // The mirror (the fold of every event from the empty table) is the session's table.
        assert_eq!(
            self.mirror.view(),
            self.session.view(examples::TABLE, "fold")
        );
    }

    fn to_json(&self) -> String {
        format!(
            r#"{{"initial":{},"frames":[{}]}}"#,
            self.initial,
            self.frames.join(",")
        )
    }
}

/// `node`, installed with apt if it is missing.
fn node() -> PathBuf {
    let works = |p: &Path| {
        Process::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let node = PathBuf::from(std::env::var("GM_NODE").unwrap_or_else(|_| "node".into()));
    if works(&node) {
        return node;
    }
    let lock_path = std::env::temp_dir().join("grand-melee-node-install.lock");
    let installed = std::fs::File::create(&lock_path)
        .and_then(|lock| lock.lock().map(|()| lock))
        .map_err(|e| e.to_string())
        .and_then(|_lock| {
            if works(&node) {
                Ok(())
            } else {
                grand_melee_e2e::apt_install(&["nodejs"])
            }
        });
    match installed {
        Ok(()) if works(&node) => node,
        outcome => panic!(
            "the fold test runs server/web/fold.js under Node and could not install it ({outcome:?}). \
             Install it with `sudo apt-get install -y nodejs` (Debian/Ubuntu), or point GM_NODE at \
             a `node` binary"
        ),
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs the checker over the games in `dir`: its exit status and its report.
fn check(dir: &Path) -> (bool, String) {
    run_node("tests/fold/check.js", Some(dir))
}

/// Runs one of the fold's node scripts on the page's `fold.js` (and `dir`, if given): its exit
/// status and what it printed.
fn run_node(script: &str, dir: Option<&Path>) -> (bool, String) {
    let root = workspace();
    let mut command = Process::new(node());
    command
        .arg(root.join(script))
        .arg(root.join("server/web/fold.js"));
    if let Some(dir) = dir {
        command.arg(dir);
    }
    let output = command.output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), report)
}

#[test]
fn fold_js_agrees_with_the_rust_fold_after_every_event_of_random_games() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = 0;
    let mut kinds = BTreeSet::new();
    let mut finished = 0;
    for game in 0..GAMES {
        let mut g = Game::new(game);
        g.play(game % 10 == 6);
        if g.session.table().stage() == Stage::Finished {
            finished += 1;
        }
        events += g.frames.len();
        kinds.extend(g.kinds.iter().cloned());
        let path = dir.path().join(format!("game-{game:03}.json"));
        std::fs::write(path, g.to_json()).unwrap();
    }
    // The games are only worth something if they reach every kind of event the fold knows.
    let every: Vec<String> = examples::events()
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Magic Tech's and Mountain Magic's events come from their own games (below).
    let missing: Vec<&String> = every
        .iter()
        .filter(|k| {
            !k.starts_with("magic_tech.")
                && !k.starts_with("mountain_magic.")
                && !kinds.contains(*k)
        })
        .collect();
    assert!(missing.is_empty(), "no {missing:?} in {GAMES} games");
    assert!(
        finished * 10 >= GAMES * 9,
        "only {finished} of {GAMES} games finished"
    );

    let (ok, report) = check(dir.path());
    assert!(ok, "fold.js disagrees with Table::apply:\n{report}");
    assert!(
        report.contains(&format!("{GAMES} games, {events} events: fold.js agrees")),
        "{report}"
    );

    // The checker itself: one derived field of one view changed must be reported.
    let path = dir.path().join("game-000.json");
    let mut game: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let frames = game["frames"].as_array_mut().unwrap();
    let frame = frames
        .iter_mut()
        .rev()
        .find(|f| f[1]["players"].as_array().is_some_and(|p| !p.is_empty()))
        .unwrap();
    frame[1]["players"][0]["may_target"] = json!([999]);
    std::fs::write(&path, serde_json::to_vec(&game).unwrap()).unwrap();
    let (ok, report) = check(dir.path());
    assert!(!ok, "a changed view went unnoticed:\n{report}");
    assert!(
        report.contains("game-000.json") && report.contains("may_target"),
        "{report}"
    );
}

/// The seam of the page's fold (`tests/fold/seam.js`): a toy game registered in
/// `GMFold.games` is handed its own events only, the shell folds the table-level ones for it
/// (presence, host, spectators, pause, adjournment, calls), a view naming no game is Grand
/// Melee's, and an unknown game is refused.
#[test]
fn the_shell_folds_the_table_level_events_and_each_game_only_its_own() {
    let (passed, report) = run_node("tests/fold/seam.js", None);
    assert!(passed, "{report}");
    assert!(report.contains("the seam holds"), "{report}");
}

/// Magic Tech's page fold (`tests/fold/magic_tech.js`): a scripted game through every
/// `magic_tech.*` event keeps each player's card count equal to his declared deck, no count or
/// counter negative, destroyed cards out of play with their guards on patrol, and refuses events
/// that do not fit. (The random games above hold it to the Rust fold once the rules core gives
/// them Magic Tech tables.)
#[test]
fn the_magic_tech_fold_keeps_the_card_count_and_refuses_what_does_not_fit() {
    let (passed, report) = run_node("tests/fold/magic_tech.js", None);
    assert!(passed, "{report}");
    assert!(report.contains("the Magic Tech fold holds"), "{report}");
}

/// Magic Tech games played through `MagicTech`'s own legal moves (`legal_moves`, what its bots
/// pick from): each event's view as a client's `Mirror` folds it, for `tests/fold/check.js`.
fn magic_tech_game(seed: u64) -> (String, BTreeSet<String>, bool) {
    use grand_melee_protocol::game::{Game as _, GameKind};
    use grand_melee_protocol::magic_tech::MagicTech;
    use grand_melee_protocol::magic_tech_types::{MagicTechCommand as C, Target};
    use grand_melee_protocol::rules::{Actor, Command};
    use grand_melee_protocol::shell::Stage as Shell;

    let mut rng = Rng::new(0x7ec4, seed);
    let settings = Settings {
        seats: 2,
        game: GameKind::MagicTech,
        ..Settings::default()
    };
    let mut game = MagicTech::create(&settings, DiceSecret::from_seed(seed)).unwrap();
    let lobby = game.view(examples::TABLE, "fold", 0, &settings);
    let initial = serde_json::to_value(&lobby).unwrap();
    let mut mirror: grand_melee_protocol::Mirror<MagicTech> = Mirror::of(&lobby).unwrap();
    let mut frames = Vec::new();
    let mut kinds = BTreeSet::new();
    let mut seq = 0;
    let mut run = |game: &mut MagicTech, actor: Actor, command: Command| {
        let events = game.handle(actor, command).unwrap();
        for event in &events {
            seq += 1;
            mirror.apply(seq, event).unwrap();
            let view = serde_json::to_string(&mirror.view()).unwrap();
            let event = serde_json::to_value(event).unwrap();
            kinds.insert(event["kind"].as_str().unwrap().to_owned());
            frames.push(format!("[{event},{view}]"));
        }
    };
    run(&mut game, Actor::Host, Command::join("Ann"));
    run(&mut game, Actor::Host, Command::join("Bob"));
    for player in [0, 1] {
        let size = u8::try_from(5 + rng.below(56)).unwrap();
        run(
            &mut game,
            Actor::Player(player),
            Command::MagicTech(C::DeclareDeck { size }),
        );
    }
    run(&mut game, Actor::Host, Command::start(None));
    for _ in 0..4_000 {
        if game.stage() == Shell::Finished {
            break;
        }
        let board = game.board();
        let player = match (&board.mission, &board.proposal, game.stage()) {
            (Some(m), _, _) => game.opponent(m.player).unwrap(),
            (None, Some(p), _) if rng.chance(0.5) => game.opponent(p.player).unwrap(),
            (None, _, Shell::Mulligan { .. }) => game.deciders()[0],
            _ => board.active.unwrap(),
        };
        let moves = game.legal_moves(player);
        // What empties a stockpile at once comes rarely, so that boards are built and fought.
        let slow: Vec<Command> = moves
            .iter()
            .filter(|c| {
                !matches!(
                    c,
                    Command::MagicTech(
                        C::Draw { .. }
                            | C::Life { delta: ..0 }
                            | C::Damage {
                                target: Target::Stockpile { .. },
                                ..
                            }
                    )
                )
            })
            .cloned()
            .collect();
        let pool = if slow.is_empty() || rng.chance(0.03) {
            &moves
        } else {
            &slow
        };
        let len = u64::try_from(pool.len()).unwrap();
        let command = pool[usize::try_from(rng.below(len)).unwrap()].clone();
        run(&mut game, Actor::Player(player), command);
    }
    let finished = game.stage() == Shell::Finished;
    let json = format!(
        r#"{{"initial":{},"frames":[{}]}}"#,
        initial,
        frames.join(",")
    );
    (json, kinds, finished)
}

#[test]
fn fold_js_agrees_with_the_rust_fold_after_every_event_of_random_magic_tech_games() {
    const MT_GAMES: u64 = 40;
    let dir = tempfile::tempdir().unwrap();
    let mut kinds = BTreeSet::new();
    let mut finished = 0;
    for seed in 0..MT_GAMES {
        let (json, seen, done) = magic_tech_game(seed);
        kinds.extend(seen);
        finished += u64::from(done);
        std::fs::write(dir.path().join(format!("mt-{seed:03}.json")), json).unwrap();
    }
    let every: Vec<String> = examples::events()
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .filter(|k| k.starts_with("magic_tech."))
        .collect();
    let missing: Vec<&String> = every.iter().filter(|k| !kinds.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "no {missing:?} in {MT_GAMES} Magic Tech games"
    );
    assert!(
        finished * 10 >= MT_GAMES * 9,
        "only {finished} of {MT_GAMES} Magic Tech games finished"
    );
    let (ok, report) = check(dir.path());
    assert!(ok, "fold.js disagrees with MagicTech's fold:\n{report}");
    assert!(report.contains(&format!("{MT_GAMES} games")), "{report}");
}

/// Mountain Magic climbs played through the climb's own legal moves (`Climb::legal_moves`,
/// what its bots pick from), now and then a refused request or a concession: each event's view
/// as a client's `Mirror` folds it, for `tests/fold/check.js`. The page's fold reads the card
/// pool from `protocol/data/mountain_magic/pool.json`, as the page fetches it.
fn mountain_magic_climb(seed: u64) -> (String, BTreeSet<String>, bool) {
    use grand_melee_protocol::game::{Game as _, GameKind};
    use grand_melee_protocol::mountain_magic::MountainMagic;
    use grand_melee_protocol::rules::{Actor, Command};
    use grand_melee_protocol::shell::Stage as Shell;

    let mut rng = Rng::new(0x3a61, seed);
    let settings = Settings {
        seats: 1,
        game: GameKind::MountainMagic,
        ..Settings::default()
    };
    let mut game = MountainMagic::create(&settings, DiceSecret::from_seed(seed)).unwrap();
    let lobby = game.view(examples::TABLE, "fold", 0, &settings);
    let initial = serde_json::to_value(&lobby).unwrap();
    let mut mirror: grand_melee_protocol::Mirror<MountainMagic> = Mirror::of(&lobby).unwrap();
    let mut frames = Vec::new();
    let mut kinds = BTreeSet::new();
    let mut seq = 0;
    let mut run = |game: &mut MountainMagic, actor: Actor, command: Command| {
        let events = game.handle(actor, command).unwrap();
        for event in &events {
            seq += 1;
            mirror.apply(seq, event).unwrap();
            let view = serde_json::to_string(&mirror.view()).unwrap();
            let event = serde_json::to_value(event).unwrap();
            kinds.insert(event["kind"].as_str().unwrap().to_owned());
            frames.push(format!("[{event},{view}]"));
        }
        // After the last event of a request: the requests the climb accepts now, as the wire
        // carries them, which the page's own list (fold.js's `legalMoves`) must equal.
        if let Some(last) = frames.last_mut() {
            let moves: Vec<Value> = game
                .climb()
                .legal_moves()
                .into_iter()
                .map(|m| {
                    let mut wire =
                        serde_json::to_value(ClientMessage::mountain_magic(0, m)).unwrap();
                    wire.as_object_mut().unwrap().remove("id");
                    wire
                })
                .collect();
            let moves = serde_json::to_string(&moves).unwrap();
            // And, wider than the moves (every card left in the battle, powered or not, of
            // either side): each target its effect or ability may take.
            let targets = serde_json::to_string(&targets_of(game.climb())).unwrap();
            last.truncate(last.len() - 1);
            last.push_str(&format!(",{moves},{targets}]"));
        }
    };
    run(&mut game, Actor::Host, Command::join("Ann"));
    if seed % 7 == 3 {
        run(&mut game, Actor::Player(0), Command::Leave);
        run(&mut game, Actor::Host, Command::join("Bea"));
    }
    let player = game.player().unwrap();
    run(&mut game, Actor::Host, Command::start(None));
    for _ in 0..5_000 {
        if game.stage() == Shell::Finished {
            break;
        }
        if seed % 11 == 5 && rng.chance(0.01) {
            run(&mut game, Actor::Player(player), Command::Concede);
            continue;
        }
        let moves = game.climb().legal_moves();
        let len = u64::try_from(moves.len()).unwrap();
        assert!(len > 0, "a climb under way has a move");
        let command = moves[usize::try_from(rng.below(len)).unwrap()].clone();
        run(
            &mut game,
            Actor::Player(player),
            Command::MountainMagic(command),
        );
    }
    let finished = game.stage() == Shell::Finished;
    let json = format!(
        r#"{{"initial":{},"frames":[{}]}}"#,
        initial,
        frames.join(",")
    );
    (json, kinds, finished)
}

/// Every (card, its effect or its ability, target or none) the climb's `may_target` accepts, for
/// every card still in the battle on either side.
fn targets_of(climb: &grand_melee_protocol::mountain_magic::Climb) -> Vec<Value> {
    use grand_melee_protocol::mountain_magic::pool::Pool;
    use grand_melee_protocol::mountain_magic_types::{ForceRef, Side};
    let Some(battle) = climb.view().battle.as_ref() else {
        return Vec::new();
    };
    let refs: Vec<ForceRef> = [
        (Side::Player, battle.player.len()),
        (Side::Opponent, battle.opponent.len()),
    ]
    .into_iter()
    .flat_map(|(side, n)| {
        (0..n).map(move |k| ForceRef {
            side,
            force: u8::try_from(k).unwrap(),
        })
    })
    .collect();
    let mut out = Vec::new();
    for &user in &refs {
        let Some(force) = climb.force(user) else {
            continue;
        };
        let face = Pool::builtin().card(force.card).unwrap();
        for (effect, ability) in [
            (face.effect, false),
            (face.ability.as_ref().map(|a| a.effect), true),
        ] {
            let Some(effect) = effect else { continue };
            for target in std::iter::once(None).chain(refs.iter().copied().map(Some)) {
                if climb.may_target(user, effect, target) {
                    out.push(json!({"user": user, "ability": ability, "target": target}));
                }
            }
        }
    }
    out
}

#[test]
fn fold_js_agrees_with_the_rust_fold_after_every_event_of_random_mountain_magic_climbs() {
    const CLIMBS: u64 = 60;
    let dir = tempfile::tempdir().unwrap();
    let mut kinds = BTreeSet::new();
    let mut finished = 0;
    for seed in 0..CLIMBS {
        let (json, seen, done) = mountain_magic_climb(seed);
        kinds.extend(seen);
        finished += u64::from(done);
        std::fs::write(dir.path().join(format!("mm-{seed:03}.json")), json).unwrap();
    }
    let every: Vec<String> = examples::events()
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .filter(|k| k.starts_with("mountain_magic."))
        .collect();
    let missing: Vec<&String> = every.iter().filter(|k| !kinds.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "no {missing:?} in {CLIMBS} Mountain Magic climbs"
    );
    assert_eq!(finished, CLIMBS, "every climb reaches its end");
    let (ok, report) = check(dir.path());
    assert!(ok, "fold.js disagrees with MountainMagic's fold:\n{report}");
    assert!(report.contains(&format!("{CLIMBS} games")), "{report}");
}
