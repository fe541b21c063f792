//! The game seam holds a game that is not Grand Melee: "pass the turn", a toy written here
//! against the crate's public API only (as an outside game module would be), runs on the same
//! [`Session`] — seats, host, chat, kick, pause, the turn clock, absence, recovery from the
//! journal — with nothing in the shell knowing about it.

#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::game::{Game, GameKind};
use grand_melee_protocol::league::MemberId;
use grand_melee_protocol::rules::{Actor, Command};
use grand_melee_protocol::session::{Effect, Session, Timing};
use grand_melee_protocol::shell::{SessionFacts, Stage};
use grand_melee_protocol::{
    ApplyError, ClientMessage, EliminationCause, ErrorCode, Event, Expiry, Mirror, PlayerId,
    PlayerStatus, PlayerView, Ruling, SeatToken, Settings, StageName, Standing, TableId, TableView,
    TurnEndReason, TurnId, TurnStateName, TurnView, stage_name,
};

/// One turn goes round the ring; `end_turn` passes it on, the clock passes it on too; a
/// conceded or kicked player is out; the last one in wins.
#[derive(Debug, Clone)]
struct PassTheTurn {
    facts: SessionFacts,
    stage: Stage,
    seated: Vec<(PlayerId, String)>,
    next: PlayerId,
    holder: Option<PlayerId>,
    out: Vec<PlayerId>,
    standings: Vec<Standing>,
}

impl Default for PassTheTurn {
    fn default() -> Self {
        Self {
            facts: SessionFacts::default(),
            stage: Stage::Lobby,
            seated: Vec::new(),
            next: 0,
            holder: None,
            out: Vec::new(),
            standings: Vec::new(),
        }
    }
}

impl PassTheTurn {
    fn living_after(&self, player: PlayerId) -> Option<PlayerId> {
        let at = self.seated.iter().position(|(p, _)| *p == player)?;
        (1..=self.seated.len())
            .map(|k| self.seated[(at + k) % self.seated.len()].0)
            .find(|p| !self.out.contains(p) && *p != player)
    }

    fn take(&mut self, events: &mut Vec<Event>, event: Event) -> Result<(), ErrorCode> {
        self.apply(&event).map_err(|_| ErrorCode::BadMessage)?;
        events.push(event);
        Ok(())
    }

    /// `player` is out: his turn passes on, and the game ends when one is left.
    fn eliminate(&mut self, players: Vec<PlayerId>, cause: EliminationCause) -> Vec<Event> {
        let mut events = Vec::new();
        let holder = self.holder;
        self.take(&mut events, Event::Eliminated { players, cause })
            .unwrap();
        if self.living() <= 1 {
            let mut standings: Vec<Standing> = self
                .seated
                .iter()
                .filter(|(p, _)| !self.out.contains(p))
                .map(|(p, _)| Standing {
                    player: *p,
                    place: 1,
                    mana_points: 0,
                })
                .collect();
            for (place, p) in self.out.iter().rev().enumerate() {
                standings.push(Standing {
                    player: *p,
                    place: u8::try_from(place + 2).unwrap(),
                    mana_points: 0,
                });
            }
            self.take(&mut events, Event::GameOver { standings })
                .unwrap();
        } else if let Some(holder) = holder.filter(|h| self.out.contains(h)) {
            self.pass(&mut events, holder, TurnEndReason::Eliminated);
        }
        events
    }

    fn pass(&mut self, events: &mut Vec<Event>, from: PlayerId, reason: TurnEndReason) {
        let to = self.living_after(from).unwrap();
        for event in [
            Event::TurnEnded {
                turn: 0,
                player: from,
                reason,
            },
            Event::TurnPassed { turn: 0, from, to },
            Event::TurnBegan {
                turn: 0,
                player: to,
            },
        ] {
            self.take(events, event).unwrap();
        }
    }
}

impl Game for PassTheTurn {
    const KIND: GameKind = GameKind::GrandMelee;

    fn create(settings: &Settings, _secret: DiceSecret) -> Result<Self, ErrorCode> {
        if settings.seats < 2 || settings.league.is_some() {
            return Err(ErrorCode::BadSettings);
        }
        Ok(Self::default())
    }

    fn handle(&mut self, actor: Actor, command: Command) -> Result<Vec<Event>, ErrorCode> {
        let mut events = Vec::new();
        match (self.stage, actor, command) {
            (Stage::Lobby, _, Command::Join { name, .. }) => {
                let player = self.next;
                self.take(
                    &mut events,
                    Event::PlayerJoined {
                        player,
                        name,
                        entropy: String::new(),
                        deck: None,
                    },
                )?;
            }
            (Stage::Lobby, Actor::Player(player), Command::Leave) => {
                self.take(&mut events, Event::PlayerLeft { player })?;
            }
            (Stage::Lobby, _, Command::Start { .. }) => {
                if self.seated.len() < 2 {
                    return Err(ErrorCode::NotEnoughPlayers);
                }
                let seating: Vec<PlayerId> = self.seated.iter().map(|(p, _)| *p).collect();
                let first = seating[0];
                self.take(
                    &mut events,
                    Event::GameStarted {
                        seating,
                        first_player: first,
                        turn_holders: vec![first],
                        commitment: String::new(),
                        first_player_chosen: false,
                        first_decided_by: None,
                        bonuses: Vec::new(),
                        seating_mode: Default::default(),
                    },
                )?;
                self.take(
                    &mut events,
                    Event::TurnBegan {
                        turn: 0,
                        player: first,
                    },
                )?;
            }
            (Stage::Playing, Actor::Player(player), Command::EndTurn) => {
                if self.holder != Some(player) {
                    return Err(ErrorCode::NotYourTurn);
                }
                self.pass(&mut events, player, TurnEndReason::Finished);
            }
            (Stage::Playing, Actor::Host, Command::ExpireTurn { player, reason }) => {
                if self.holder != Some(player) {
                    return Err(ErrorCode::NoRunningTurn);
                }
                let reason = match reason {
                    Expiry::Clock => TurnEndReason::Clock,
                    Expiry::Absent => TurnEndReason::Absent,
                };
                self.pass(&mut events, player, reason);
            }
            (Stage::Playing, Actor::Player(player), Command::Concede) => {
                events = self.eliminate(vec![player], EliminationCause::Conceded);
            }
            (Stage::Playing, Actor::Host, Command::Ruling(Ruling::Eliminate { players })) => {
                if players.iter().any(|p| !self.is_alive(*p)) {
                    return Err(ErrorCode::Eliminated);
                }
                events = self.eliminate(players, EliminationCause::Ruling);
            }
            (Stage::Playing, Actor::Host, Command::Abandon) => {
                self.take(&mut events, Event::GameAbandoned)?;
                self.take(
                    &mut events,
                    Event::GameOver {
                        standings: Vec::new(),
                    },
                )?;
            }
            (Stage::Lobby, ..) => return Err(ErrorCode::NotPlaying),
            (Stage::Playing, Actor::Player(_), Command::Join { .. } | Command::Start { .. }) => {
                return Err(ErrorCode::GameStarted);
            }
            _ => return Err(ErrorCode::BadMessage),
        }
        Ok(events)
    }

    fn apply(&mut self, event: &Event) -> Result<(), &'static str> {
        match event {
            Event::PlayerJoined { player, name, .. } => {
                self.seated.push((*player, name.clone()));
                self.next = player + 1;
                self.facts.seat(*player);
            }
            Event::PlayerLeft { player } => {
                self.seated.retain(|(p, _)| p != player);
                self.facts.unseat(*player)?;
            }
            Event::GameStarted { .. } => self.stage = Stage::Playing,
            Event::TurnBegan { player, .. } => self.holder = Some(*player),
            Event::TurnEnded { .. } => self.holder = None,
            Event::TurnPassed { .. } | Event::GameAbandoned => {}
            Event::Eliminated { players, .. } => self.out.extend(players),
            Event::GameOver { standings } => {
                self.stage = Stage::Finished;
                self.holder = None;
                self.standings = standings.clone();
            }
            shell => return self.facts.apply(shell, self.stage),
        }
        Ok(())
    }

    fn view(&self, table: TableId, name: &str, seq: u64, settings: &Settings) -> TableView {
        let mut view = TableView::new(table, name, settings.clone());
        view.seq = seq;
        view.stage = stage_name(self.stage);
        view.set_facts(&self.facts);
        view.standings = self.standings.clone();
        view.players = self
            .seated
            .iter()
            .map(|(player, name)| PlayerView {
                status: if self.out.contains(player) {
                    PlayerStatus::Eliminated
                } else {
                    PlayerStatus::Alive
                },
                ..PlayerView::seated(*player, name.clone(), self.facts.presence(*player))
            })
            .collect();
        view.turns = self
            .holder
            .map(|player| TurnView {
                turn: 0,
                player,
                state: TurnStateName::Running,
                phase: None,
                marked_for_removal: false,
                designations: 0,
                sphere: Vec::new(),
            })
            .into_iter()
            .collect();
        view
    }

    fn from_view(view: &TableView) -> Result<Self, ApplyError> {
        let mut game = Self {
            facts: view.facts(),
            stage: match view.stage {
                StageName::Lobby => Stage::Lobby,
                StageName::Mulligan => return Err(ApplyError::Invalid("no mulligans here")),
                StageName::Playing => Stage::Playing,
                StageName::Finished => Stage::Finished,
            },
            seated: view
                .players
                .iter()
                .map(|p| (p.player, p.name.clone()))
                .collect(),
            standings: view.standings.clone(),
            ..Self::default()
        };
        game.next = view.players.iter().map(|p| p.player + 1).max().unwrap_or(0);
        game.holder = view.turns.first().map(|t| t.player);
        game.out = view
            .players
            .iter()
            .filter(|p| !p.status.is_alive())
            .map(|p| p.player)
            .collect();
        Ok(game)
    }

    fn facts(&self) -> &SessionFacts {
        &self.facts
    }

    fn stage(&self) -> Stage {
        self.stage
    }

    fn name_of(&self, player: PlayerId) -> Option<&str> {
        self.seated
            .iter()
            .find(|(p, _)| *p == player)
            .map(|(_, n)| n.as_str())
    }

    fn is_alive(&self, player: PlayerId) -> bool {
        self.seated.iter().any(|(p, _)| *p == player) && !self.out.contains(&player)
    }

    fn living(&self) -> usize {
        self.seated.len() - self.out.len()
    }

    fn running(&self) -> Vec<(TurnId, PlayerId)> {
        self.holder.map(|h| (0, h)).into_iter().collect()
    }

    fn deciders(&self) -> Vec<PlayerId> {
        Vec::new()
    }

    fn league_members(&self) -> Vec<MemberId> {
        Vec::new()
    }
}

const TURN_CLOCK: u64 = 30;

fn settings() -> Settings {
    Settings {
        seats: 4,
        turn_clock_secs: TURN_CLOCK as u32,
        absence_limit_secs: 120,
        ..Settings::default()
    }
}

fn timing() -> Timing {
    Timing {
        grace: Duration::from_secs(60),
        unjoined: Duration::from_secs(600),
        chat_per_minute: 0.0,
        adjourned_expiry: None,
    }
}

fn peer() -> IpAddr {
    IpAddr::V4(Ipv4Addr::LOCALHOST)
}

/// Every event the session published, in order, with its number.
fn drain(session: &mut Session<PassTheTurn>, journal: &mut Vec<(u64, Event)>) -> Vec<Effect> {
    let mut effects = Vec::new();
    while let Some(effect) = session.poll_effect() {
        if let Effect::Events { first_seq, events } = &effect {
            for (k, event) in events.iter().enumerate() {
                journal.push((first_seq + k as u64, event.clone()));
            }
        }
        effects.push(effect);
    }
    effects
}

fn seat(session: &mut Session<PassTheTurn>, at: Instant, name: &str) -> PlayerId {
    let connection = u64::from(session.seated() as u16) + 1;
    session
        .join(
            at,
            connection,
            peer(),
            name.to_owned(),
            String::new(),
            None,
            SeatToken::new_random(),
        )
        .unwrap()
}

#[test]
fn another_game_gets_seats_host_chat_clocks_kick_and_recovery_from_the_shell() {
    let t0 = Instant::now();
    let at = |secs: u64| t0 + Duration::from_secs(secs);
    let mut journal = Vec::new();
    let mut session: Session<PassTheTurn> =
        Session::new(settings(), DiceSecret::from_seed(1), timing(), t0).unwrap();

    // Seats and the host: the first to sit is host.
    let ann = seat(&mut session, t0, "Ann");
    let bob = seat(&mut session, t0, "Bob");
    let cat = seat(&mut session, t0, "Cat");
    assert_eq!(session.table().facts().host, Some(ann));
    let effects = drain(&mut session, &mut journal);
    assert_eq!(
        effects
            .iter()
            .filter(|e| matches!(e, Effect::SetSeat { .. }))
            .count(),
        3
    );

    // Chat, with the game's own names.
    session
        .request(
            t0,
            2,
            &ClientMessage::Chat {
                id: 1,
                text: "hi".into(),
            },
        )
        .unwrap();
    drain(&mut session, &mut journal);
    assert!(journal.iter().any(|(_, e)| matches!(
        e,
        Event::Chat { from: Some(p), name, .. } if *p == bob && name == "Bob"
    )));

    // Only the host starts; the game's own command then runs on the shell's request path.
    let start = ClientMessage::Start {
        id: 2,
        first_player: None,
        seating: Default::default(),
        order: Vec::new(),
    };
    assert_eq!(session.request(t0, 2, &start), Err(ErrorCode::NotHost));
    session.request(t0, 1, &start).unwrap();
    assert_eq!(session.table().stage(), Stage::Playing);
    assert_eq!(session.table().running(), vec![(0, ann)]);
    assert_eq!(
        session.request(t0, 2, &ClientMessage::EndTurn { id: 3 }),
        Err(ErrorCode::NotYourTurn)
    );
    session
        .request(at(5), 1, &ClientMessage::EndTurn { id: 4 })
        .unwrap();
    assert_eq!(session.table().running(), vec![(0, bob)]);

    // A client's mirror of this game, from a snapshot, follows the session event for event.
    let id = TableId::new_random();
    drain(&mut session, &mut journal);
    let mut mirror: Mirror<PassTheTurn> = Mirror::of(&session.view(id, "toy")).unwrap();
    let followed = journal.len();

    // The turn clock runs for this game too: Bob's turn began at 5 s.
    assert_eq!(session.poll_timeout(), Some(at(5 + TURN_CLOCK)));
    // A pause stops it: 10 s paused move it on by 10 s.
    session
        .request(
            at(10),
            1,
            &ClientMessage::Pause {
                id: 5,
                paused: true,
            },
        )
        .unwrap();
    assert_eq!(
        session.request(at(11), 2, &ClientMessage::EndTurn { id: 6 }),
        Err(ErrorCode::TablePaused)
    );
    session
        .request(
            at(20),
            1,
            &ClientMessage::Pause {
                id: 7,
                paused: false,
            },
        )
        .unwrap();
    assert_eq!(session.poll_timeout(), Some(at(15 + TURN_CLOCK)));
    assert!(!session.handle_timeout(at(15 + TURN_CLOCK)));
    assert_eq!(session.table().running(), vec![(0, cat)]);
    drain(&mut session, &mut journal);
    assert!(journal.iter().any(|(_, e)| matches!(
        e,
        Event::TurnEnded { player, reason: TurnEndReason::Clock, .. } if *player == bob
    )));

    // Kicking the player whose turn it is rules him out: the game's elimination, the shell's
    // seat and connection.
    session
        .request(
            at(50),
            1,
            &ClientMessage::Kick {
                id: 8,
                player: cat,
                ban: false,
            },
        )
        .unwrap();
    let effects = drain(&mut session, &mut journal);
    assert!(effects.contains(&Effect::RemoveSeat { player: cat }));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Close { connection: 3, .. }))
    );
    assert!(!session.table().is_alive(cat));
    assert_eq!(session.table().running(), vec![(0, ann)]);

    for (seq, event) in &journal[followed..] {
        mirror.apply(*seq, event).unwrap();
    }
    assert_eq!(mirror.view(), session.view(id, "toy"));

    // Recovery: the journal folds back into the same game.
    let seats: Vec<(PlayerId, SeatToken)> = Vec::new();
    let recovered: Session<PassTheTurn> = Session::recover(
        settings(),
        DiceSecret::from_seed(1),
        timing(),
        journal.clone(),
        &seats,
        Vec::new(),
        at(60),
    )
    .unwrap();
    assert_eq!(recovered.table().running(), vec![(0, ann)]);
    assert_eq!(recovered.table().facts().host, Some(ann));
    assert_eq!(recovered.seq(), session.seq());

    // Bob concedes: one left, the game is over and the shell notes it for the journal.
    session
        .request(at(70), 2, &ClientMessage::Concede { id: 9 })
        .unwrap();
    assert_eq!(session.table().stage(), Stage::Finished);
    let effects = drain(&mut session, &mut journal);
    assert!(effects.contains(&Effect::Finished));
    let view = session.view(TableId::new_random(), "toy");
    assert_eq!(view.standings.first().map(|s| s.player), Some(ann));
    assert_eq!(view.host, Some(ann));
}

#[test]
fn the_shells_events_are_refused_by_the_shell_fold_when_they_do_not_fit() {
    let mut game = PassTheTurn::create(&settings(), DiceSecret::from_seed(1)).unwrap();
    // Nobody is seated: a connection change of an unknown player does not fit.
    assert!(
        game.apply(&Event::ConnectionChanged {
            player: 7,
            connected: true
        })
        .is_err()
    );
    // Adjourning outside a game does not fit either.
    assert!(
        game.apply(&Event::TableAdjourned { adjourned: true })
            .is_err()
    );
    assert_eq!(game.facts(), &SessionFacts::default());
}

/// Cameras (issue 32) are the shell's: a game that says nothing of range (`within_range`'s
/// default) still takes `camera` from its players, and links nobody.
#[test]
fn a_game_without_range_takes_cameras_and_links_nobody() {
    let t0 = Instant::now();
    let mut journal = Vec::new();
    let mut session: Session<PassTheTurn> =
        Session::new(settings(), DiceSecret::from_seed(1), timing(), t0).unwrap();
    seat(&mut session, t0, "Ann");
    seat(&mut session, t0, "Bob");
    let start = ClientMessage::Start {
        id: 2,
        first_player: None,
        seating: Default::default(),
        order: Vec::new(),
    };
    session.request(t0, 1, &start).unwrap();
    assert_eq!(session.table().stage(), Stage::Playing);
    drain(&mut session, &mut journal);
    for connection in [1, 2] {
        let camera = ClientMessage::Camera {
            id: 3,
            on: true,
            stream: false,
            stay: false,
        };
        session.request(t0, connection, &camera).unwrap();
    }
    assert_eq!(drain(&mut session, &mut journal), []);
    assert!(session.camera_links().is_empty());
    let signal = ClientMessage::Signal {
        id: 4,
        to: grand_melee_protocol::Peer::Player(1),
        payload: "{}".to_owned(),
    };
    assert_eq!(session.request(t0, 1, &signal), Err(ErrorCode::NotLinked));
}
