//! The session rules on a simulated clock: every instant is `t0 + n seconds`, passed in; the
//! session never reads a clock. After every step the table is checked to be the fold of every
//! event published (numbered from 1 without a gap).
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::rules::{Stage, Table, TableConfig};
use grand_melee_protocol::session::{Effect, Session, TABLE_CHAT_BURST, Timing};
use grand_melee_protocol::{
    ClientMessage, EliminationCause, ErrorCode, Event, KeepReason, PlayerId, SeatToken, Settings,
    TurnEndReason, close,
};

const GRACE: u64 = 30;
const UNJOINED: u64 = 60;

struct Harness {
    session: Session,
    t0: Instant,
    config: TableConfig,
    /// Every event published, in order.
    events: Vec<Event>,
}

fn settings(turn_clock: u32, absence_limit: u32, mulligan_clock: u32) -> Settings {
    Settings {
        seats: 8,
        turn_clock_secs: turn_clock,
        absence_limit_secs: absence_limit,
        mulligan_clock_secs: mulligan_clock,
        ..Settings::default()
    }
}

fn timing(chat_per_minute: f64) -> Timing {
    Timing {
        grace: Duration::from_secs(GRACE),
        unjoined: Duration::from_secs(UNJOINED),
        chat_per_minute,
        adjourned_expiry: None,
    }
}

/// Connection `c` holds player `c - 1`'s seat, from address 10.0.0.c.
fn peer(connection: u64) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, u8::try_from(connection).unwrap()))
}

fn token(player: PlayerId) -> SeatToken {
    SeatToken::from_u128(1000 + u128::from(player))
}

fn conn(player: PlayerId) -> u64 {
    u64::from(player) + 1
}

impl Harness {
    fn new(settings: Settings, timing: Timing) -> Self {
        let t0 = Instant::now();
        let session: Session =
            Session::new(settings, DiceSecret::from_seed(7), timing, t0).unwrap();
        let config = session.table().config().clone();
        Self {
            session,
            t0,
            config,
            events: Vec::new(),
        }
    }

    fn at(&self, secs: u64) -> Instant {
        self.t0 + Duration::from_secs(secs)
    }

    /// Takes what the session decided, checks the numbering and the fold, and returns it.
    fn drain(&mut self) -> Vec<Effect> {
        let effects = self.session.take_effects();
        for effect in &effects {
            if let Effect::Events { first_seq, events } = effect {
                assert_eq!(*first_seq, self.events.len() as u64 + 1, "numbered on");
                self.events.extend(events.iter().cloned());
            }
        }
        assert_eq!(self.session.seq(), self.events.len() as u64);
        let folded = Table::replay(self.config.clone(), &self.events).unwrap();
        assert_eq!(&folded, self.session.table(), "the table is the fold");
        effects
    }

    fn drain_events(&mut self) -> Vec<Event> {
        self.drain()
            .into_iter()
            .filter_map(|e| match e {
                Effect::Events { events, .. } => Some(events),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// `n` players join at t0 + 0 (player p on connection p + 1).
    fn seat(&mut self, n: u16) {
        for p in 0..n {
            let now = self.at(0);
            let player = self
                .session
                .join(
                    now,
                    conn(p),
                    peer(conn(p)),
                    format!("P{p}"),
                    String::new(),
                    None,
                    token(p),
                )
                .unwrap();
            assert_eq!(player, p);
        }
        self.drain();
    }

    fn request(
        &mut self,
        secs: u64,
        player: PlayerId,
        request: ClientMessage,
    ) -> Result<u64, ErrorCode> {
        let now = self.at(secs);
        self.session.request(now, conn(player), &request)
    }

    /// A refused request changes nothing and decides nothing.
    fn refused(&mut self, secs: u64, player: PlayerId, request: ClientMessage, code: ErrorCode) {
        let before = self.session.table().clone();
        let seq = self.session.seq();
        assert_eq!(self.request(secs, player, request), Err(code));
        assert_eq!(self.session.table(), &before);
        assert_eq!(self.session.seq(), seq);
        assert!(self.session.take_effects().is_empty());
    }

    /// The host starts the game at t0 with `first` as the first player.
    fn start(&mut self, first: PlayerId) {
        let start = ClientMessage::Start {
            id: 1,
            first_player: Some(first),
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        };
        self.request(0, 0, start).unwrap();
        self.drain();
    }

    /// Seats `n`, starts with `first` at t0 and keeps every hand at `kept_at`.
    fn playing(&mut self, n: u16, first: PlayerId, kept_at: u64) {
        self.seat(n);
        self.start(first);
        while let Some(decider) = self.session.table().mulligan_decider() {
            self.request(kept_at, decider, ClientMessage::Keep { id: 2 })
                .unwrap();
        }
        assert_eq!(self.session.table().stage(), Stage::Playing);
        self.drain();
    }

    fn running_holders(&self) -> Vec<PlayerId> {
        let table = self.session.table();
        table
            .turns()
            .iter()
            .filter(|t| matches!(t.state, grand_melee_protocol::rules::TurnState::Running(_)))
            .map(|t| table.players()[t.seat].id)
            .collect()
    }

    fn timeout(&mut self, secs: u64) -> (bool, Vec<Event>) {
        let close = self.session.handle_timeout(self.at(secs));
        (close, self.drain_events())
    }
}

#[test]
fn a_running_turn_ends_exactly_when_the_turn_clock_runs_out() {
    let mut h = Harness::new(settings(60, 600, 0), timing(0.0));
    h.playing(4, 1, 10);
    assert_eq!(h.running_holders(), [1]);
    assert_eq!(h.session.poll_timeout(), Some(h.at(70)));
    let (_, events) = h.timeout(69);
    assert!(events.is_empty(), "not yet: {events:?}");
    let (close, events) = h.timeout(70);
    assert!(!close);
    assert!(
        events.contains(&Event::TurnEnded {
            turn: 0,
            player: 1,
            reason: TurnEndReason::Clock
        }),
        "{events:?}"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::TurnPassed {
            turn: 0,
            from: 1,
            ..
        }
    )));
    // The next holder's clock counts from when his turn began.
    let next = h.running_holders();
    assert_eq!(next.len(), 1);
    assert_eq!(h.session.poll_timeout(), Some(h.at(130)));
}

#[test]
fn an_absent_players_turn_is_skipped_after_the_grace_period() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(4, 1, 10);
    assert_eq!(h.session.poll_timeout(), None, "no clock, nobody away");
    h.session.gone(h.at(20), conn(1));
    assert_eq!(
        h.drain_events(),
        [Event::ConnectionChanged {
            player: 1,
            connected: false
        }]
    );
    // max(turn began at 10, dropped at 20) + grace.
    assert_eq!(h.session.poll_timeout(), Some(h.at(20 + GRACE)));
    let (_, events) = h.timeout(20 + GRACE);
    assert!(
        events.contains(&Event::TurnEnded {
            turn: 0,
            player: 1,
            reason: TurnEndReason::Absent
        }),
        "{events:?}"
    );
}

#[test]
fn the_mulligan_clock_keeps_and_an_absent_decider_keeps_after_the_grace_period() {
    let mut h = Harness::new(settings(0, 600, 60), timing(0.0));
    h.seat(4);
    h.start(0);
    assert_eq!(h.session.table().mulligan_decider(), Some(0));
    assert_eq!(h.session.poll_timeout(), Some(h.at(60)));
    let (_, events) = h.timeout(59);
    assert!(events.is_empty());
    let (_, events) = h.timeout(60);
    assert_eq!(
        events,
        [Event::Kept {
            player: 0,
            hand_size: 7,
            reason: KeepReason::Clock
        }]
    );
    // The next decision came up at 60; its decider drops at 70: the grace period (70 + 30)
    // ends before the clock (60 + 60).
    let next = h.session.table().mulligan_decider().unwrap();
    assert_eq!(h.session.poll_timeout(), Some(h.at(120)));
    h.session.gone(h.at(70), conn(next));
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(70 + GRACE)));
    let (_, events) = h.timeout(70 + GRACE);
    assert_eq!(
        events,
        [Event::Kept {
            player: next,
            hand_size: 7,
            reason: KeepReason::Absent
        }]
    );
}

#[test]
fn with_simultaneous_mulligans_the_clock_runs_for_everyone_at_once() {
    let mut h = Harness::new(
        Settings {
            mulligan: grand_melee_protocol::MulliganMode::Simultaneous,
            ..settings(0, 600, 60)
        },
        timing(0.0),
    );
    h.seat(4);
    h.start(0);
    assert_eq!(h.session.table().mulligan_deciders().len(), 4);
    // Player 2 keeps at 10 and player 3 mulligans; player 1 drops at 20.
    h.request(10, 2, ClientMessage::Keep { id: 2 }).unwrap();
    h.request(11, 3, ClientMessage::Mulligan { id: 3 }).unwrap();
    h.drain();
    h.session.gone(h.at(20), conn(1));
    h.drain();
    // Player 1's grace period (20 + 30) ends first.
    assert_eq!(h.session.poll_timeout(), Some(h.at(20 + GRACE)));
    let (_, events) = h.timeout(20 + GRACE);
    assert_eq!(
        events,
        [Event::Kept {
            player: 1,
            hand_size: 7,
            reason: KeepReason::Absent
        }]
    );
    // At 60 everyone still deciding keeps, together, and play begins.
    assert_eq!(h.session.poll_timeout(), Some(h.at(60)));
    let (_, events) = h.timeout(60);
    let mut kept: Vec<(PlayerId, u8, KeepReason)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Kept {
                player,
                hand_size,
                reason,
            } => Some((*player, *hand_size, *reason)),
            _ => None,
        })
        .collect();
    kept.sort_unstable_by_key(|&(player, ..)| player);
    assert_eq!(kept, [(0, 7, KeepReason::Clock), (3, 6, KeepReason::Clock)]);
    assert_eq!(h.session.table().stage(), Stage::Playing);
}

#[test]
fn a_player_away_past_the_absence_limit_is_announced_and_cleared_when_he_returns() {
    let mut h = Harness::new(settings(0, 120, 0), timing(0.0));
    // Player 1 plays first: the table does not wait on the (silent) host.
    h.playing(4, 1, 10);
    h.session.gone(h.at(20), conn(2));
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(140)));
    let (_, events) = h.timeout(140);
    assert_eq!(events, [Event::PlayerAbsent { player: 2 }]);
    assert!(h.session.table().facts().presence(2).absent);
    assert_eq!(h.session.poll_timeout(), None, "announced once");
    // He comes back on a new connection with his token.
    let player = h.session.resume(h.at(150), 99, peer(3), token(2)).unwrap();
    assert_eq!(player, 2);
    assert_eq!(
        h.drain_events(),
        [Event::ConnectionChanged {
            player: 2,
            connected: true
        }]
    );
    let presence = h.session.table().facts().presence(2);
    assert!(presence.connected && !presence.absent);
}

#[test]
fn the_host_role_passes_on_after_the_grace_period_only_to_someone_connected() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(3, 1, 10);
    assert_eq!(h.session.table().facts().host, Some(0));
    h.session.gone(h.at(20), conn(0));
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(20 + GRACE)));
    let (_, events) = h.timeout(20 + GRACE);
    assert_eq!(events, [Event::HostChanged { player: Some(1) }]);

    // Nobody else connected: the host keeps the role, however long he is away.
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(3, 1, 10);
    h.session.gone(h.at(11), conn(1));
    h.session.gone(h.at(12), conn(2));
    h.session.gone(h.at(20), conn(0));
    h.drain();
    let (_, events) = h.timeout(10_000);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::HostChanged { .. })),
        "{events:?}"
    );
    assert_eq!(h.session.table().facts().host, Some(0));
}

#[test]
fn a_pause_freezes_the_clocks_refuses_play_and_ends_by_itself() {
    let mut h = Harness::new(settings(60, 100, 0), timing(0.0));
    h.playing(4, 1, 10);
    assert_eq!(h.session.poll_timeout(), Some(h.at(70)));
    h.refused(
        20,
        1,
        ClientMessage::Pause {
            id: 3,
            paused: true,
        },
        ErrorCode::NotHost,
    );
    h.request(
        20,
        0,
        ClientMessage::Pause {
            id: 3,
            paused: true,
        },
    )
    .unwrap();
    assert_eq!(h.drain_events(), [Event::TablePaused { paused: true }]);
    h.refused(
        25,
        1,
        ClientMessage::EndTurn { id: 4 },
        ErrorCode::TablePaused,
    );
    // Paused: only the pause's own end is due, after max(absence limit, grace).
    assert_eq!(h.session.poll_timeout(), Some(h.at(120)));
    h.request(
        50,
        0,
        ClientMessage::Pause {
            id: 5,
            paused: false,
        },
    )
    .unwrap();
    h.drain();
    // 30 s paused: the turn clock runs out 30 s later.
    assert_eq!(h.session.poll_timeout(), Some(h.at(100)));

    h.request(
        60,
        0,
        ClientMessage::Pause {
            id: 6,
            paused: true,
        },
    )
    .unwrap();
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(160)));
    let (_, events) = h.timeout(159);
    assert!(events.is_empty());
    let (_, events) = h.timeout(160);
    assert_eq!(events, [Event::TablePaused { paused: false }]);
    assert!(!h.session.paused());
    // The turn had 40 s left when the second pause began.
    assert_eq!(h.session.poll_timeout(), Some(h.at(200)));
}

#[test]
fn a_kick_in_the_lobby_takes_the_seat_and_closes_the_connection() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.seat(3);
    h.refused(
        1,
        1,
        ClientMessage::Kick {
            id: 1,
            player: 2,
            ban: false,
        },
        ErrorCode::NotHost,
    );
    h.refused(
        1,
        0,
        ClientMessage::Kick {
            id: 1,
            player: 9,
            ban: false,
        },
        ErrorCode::UnknownPlayer,
    );
    h.request(
        1,
        0,
        ClientMessage::Kick {
            id: 1,
            player: 2,
            ban: false,
        },
    )
    .unwrap();
    let effects = h.drain();
    assert!(effects.contains(&Effect::RemoveSeat { player: 2 }));
    assert!(effects.contains(&Effect::Close {
        connection: conn(2),
        code: close::POLICY_VIOLATION,
        reason: "removed from the table by the host",
    }));
    let events: Vec<&Event> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Events { events, .. } => Some(events),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        events,
        [
            &Event::PlayerKicked {
                player: 2,
                banned: false
            },
            &Event::PlayerLeft { player: 2 }
        ]
    );
    assert_eq!(h.session.seated(), 2);
    // His token no longer works.
    assert_eq!(
        h.session.resume(h.at(2), 50, peer(3), token(2)),
        Err(ErrorCode::BadToken)
    );
}

#[test]
fn a_kick_with_a_ban_in_play_eliminates_and_refuses_the_address() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(4, 1, 10);
    h.request(
        20,
        0,
        ClientMessage::Kick {
            id: 1,
            player: 3,
            ban: true,
        },
    )
    .unwrap();
    let effects = h.drain();
    assert!(effects.contains(&Effect::Banned {
        addresses: vec![peer(conn(3))]
    }));
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::Events { events, .. } if events.contains(&Event::Eliminated {
            players: vec![3],
            cause: EliminationCause::Ruling,
        })
    )));
    assert!(h.session.is_banned(peer(conn(3))));
    assert_eq!(
        h.session.watch(h.at(21), 60, peer(conn(3))),
        Err(ErrorCode::Banned)
    );
    assert!(h.session.take_effects().is_empty());
}

#[test]
fn a_player_kicked_during_mulligans_keeps_when_due_and_is_eliminated_as_play_begins() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.seat(4);
    h.start(0);
    // The player whose decision comes second is kicked before it comes up.
    let order: Vec<PlayerId> = {
        let table = h.session.table();
        let first = table.players().iter().position(|p| p.id == 0).unwrap();
        let n = table.players().len();
        (0..n)
            .map(|k| table.players()[(first + k) % n].id)
            .collect()
    };
    let kicked = order[1];
    h.request(
        1,
        0,
        ClientMessage::Kick {
            id: 2,
            player: kicked,
            ban: false,
        },
    )
    .unwrap();
    let events = h.drain_events();
    assert_eq!(
        events,
        [Event::PlayerKicked {
            player: kicked,
            banned: false
        }],
        "nobody is eliminated during mulligans"
    );
    h.request(2, 0, ClientMessage::Keep { id: 3 }).unwrap();
    let events = h.drain_events();
    assert!(
        events.contains(&Event::Kept {
            player: kicked,
            hand_size: 7,
            reason: KeepReason::Ruling
        }),
        "{events:?}"
    );
    for &p in &order[2..] {
        h.request(3, p, ClientMessage::Keep { id: 4 }).unwrap();
    }
    let events = h.drain_events();
    assert!(
        events.contains(&Event::Eliminated {
            players: vec![kicked],
            cause: EliminationCause::Ruling
        }),
        "{events:?}"
    );
    assert_eq!(h.session.table().stage(), Stage::Playing);
}

#[test]
fn muted_players_and_spectators_and_the_chat_budget() {
    let mut h = Harness::new(settings(0, 600, 0), timing(60.0));
    h.seat(2);
    h.session.watch(h.at(0), 50, peer(50)).unwrap();
    h.drain();
    let chat = |text: &str| ClientMessage::Chat {
        id: 1,
        text: text.to_owned(),
    };
    h.request(
        1,
        0,
        ClientMessage::Mute {
            id: 1,
            player: Some(1),
            muted: true,
        },
    )
    .unwrap();
    h.request(
        1,
        0,
        ClientMessage::Mute {
            id: 1,
            player: None,
            muted: true,
        },
    )
    .unwrap();
    h.drain();
    h.refused(2, 1, chat("hi"), ErrorCode::Muted);
    let seq = h.session.seq();
    assert_eq!(
        h.session.request(h.at(2), 50, &chat("hi")),
        Err(ErrorCode::Muted)
    );
    assert_eq!(h.session.seq(), seq);
    // The table's budget: a burst, then one line a second (60 a minute).
    let burst = TABLE_CHAT_BURST as u32;
    for _ in 0..burst {
        h.request(3, 0, chat("hello")).unwrap();
    }
    h.drain();
    h.refused(3, 0, chat("one too many"), ErrorCode::RateLimited);
    h.request(4, 0, chat("a second later")).unwrap();
    assert_eq!(
        h.drain_events(),
        [Event::Chat {
            from: Some(0),
            name: "P0".into(),
            text: "a second later".into()
        }]
    );
}

#[test]
fn a_lobby_seat_is_given_up_after_the_grace_period_and_the_host_moves_on() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.seat(3);
    h.session.gone(h.at(5), conn(0));
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(5 + GRACE)));
    let (_, events) = h.timeout(5 + GRACE - 1);
    assert!(events.is_empty());
    let close = h.session.handle_timeout(h.at(5 + GRACE));
    assert!(!close);
    let effects = h.drain();
    assert!(effects.contains(&Effect::RemoveSeat { player: 0 }));
    let events: Vec<Event> = effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Events { events, .. } => Some(events),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        events,
        [
            Event::PlayerLeft { player: 0 },
            Event::HostChanged { player: Some(1) }
        ]
    );
}

#[test]
fn empty_tables_close_when_nothing_can_come_back() {
    // Nobody ever sat down: open for the unjoined time.
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    assert_eq!(h.session.poll_timeout(), Some(h.at(UNJOINED)));
    assert!(!h.session.handle_timeout(h.at(UNJOINED - 1)));
    assert!(h.session.handle_timeout(h.at(UNJOINED)));
    assert!(h.session.nothing_to_keep());

    // A game in play with everyone away does not close while they may come back: it ends (and
    // then closes) once they have all been away for the absence limit.
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(2, 0, 10);
    h.session.gone(h.at(20), conn(0));
    h.session.gone(h.at(20), conn(1));
    h.drain();
    let (close, _) = h.timeout(619);
    assert!(!close);
    assert_eq!(h.session.table().stage(), Stage::Playing);
    let (close, events) = h.timeout(620);
    assert!(close);
    assert_eq!(events.first(), Some(&Event::GameAbandoned), "{events:?}");
    assert_eq!(h.session.table().stage(), Stage::Finished);

    // A finished game closes a grace period after the last one left.
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(2, 0, 10);
    h.request(20, 1, ClientMessage::Concede { id: 9 }).unwrap();
    let effects = h.drain();
    assert!(effects.contains(&Effect::Finished));
    assert_eq!(h.session.table().stage(), Stage::Finished);
    h.session.gone(h.at(30), conn(0));
    h.session.gone(h.at(40), conn(1));
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(40 + GRACE)));
    assert!(!h.session.handle_timeout(h.at(40 + GRACE - 1)));
    assert!(h.session.handle_timeout(h.at(40 + GRACE)));
}

#[test]
fn a_resume_from_a_new_connection_takes_the_seat_over_and_a_bad_token_changes_nothing() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.seat(2);
    let before = h.session.table().clone();
    assert_eq!(
        h.session.resume(h.at(1), 70, peer(70), SeatToken::nil()),
        Err(ErrorCode::BadToken)
    );
    assert!(h.session.take_effects().is_empty());
    assert_eq!(h.session.table(), &before);
    assert_eq!(h.session.resume(h.at(1), 70, peer(70), token(1)), Ok(1));
    assert_eq!(
        h.drain(),
        [Effect::Close {
            connection: conn(1),
            code: close::NORMAL,
            reason: "your seat was taken over by a newer connection",
        }]
    );
    // The new connection acts for him; the old one is no member any more.
    assert_eq!(
        h.session.role(70),
        Some(grand_melee_protocol::session::Role::Player(1))
    );
    assert_eq!(h.session.role(conn(1)), None);
}

#[test]
fn recovery_folds_the_journal_and_announces_who_was_connected() {
    let mut h = Harness::new(settings(60, 600, 0), timing(0.0));
    h.playing(4, 1, 10);
    h.session.watch(h.at(11), 50, peer(50)).unwrap();
    h.session.gone(h.at(12), conn(3));
    h.request(
        13,
        0,
        ClientMessage::Mute {
            id: 1,
            player: Some(2),
            muted: true,
        },
    )
    .unwrap();
    h.drain();
    let journal: Vec<(u64, Event)> = (1..).zip(h.events.iter().cloned()).collect();
    let seats: Vec<(PlayerId, SeatToken)> = (0..4).map(|p| (p, token(p))).collect();
    let settings = h.session.settings().clone();
    let now = h.at(500);
    let mut recovered: Session = Session::recover(
        settings,
        DiceSecret::from_seed(7),
        timing(0.0),
        journal,
        &seats,
        vec![peer(9)],
        now,
    )
    .unwrap();
    let effects = recovered.take_effects();
    let Some(Effect::Events { first_seq, events }) = effects.first() else {
        panic!("{effects:?}");
    };
    assert_eq!(*first_seq, h.session.seq() + 1);
    assert_eq!(
        events,
        &[
            Event::ConnectionChanged {
                player: 0,
                connected: false
            },
            Event::ConnectionChanged {
                player: 1,
                connected: false
            },
            Event::ConnectionChanged {
                player: 2,
                connected: false
            },
            Event::SpectatorsChanged { spectators: 0 },
        ]
    );
    // The recovered table is the live one with those events folded in.
    let mut live = h.session.table().clone();
    for event in events {
        live.apply(event).unwrap();
    }
    assert_eq!(recovered.table(), &live);
    assert!(recovered.table().facts().presence(2).muted);
    assert!(recovered.is_banned(peer(9)));
    // Everyone counts as away since the restart: the running turn is skipped a grace period
    // later (its clock, counted from the restart, would end later).
    assert_eq!(
        recovered.poll_timeout(),
        Some(now + Duration::from_secs(GRACE))
    );
    assert_eq!(recovered.resume(now, 80, peer(80), token(1)), Ok(1));
}

fn standing(player: PlayerId, place: u8, mana_points: u8) -> grand_melee_protocol::Standing {
    grand_melee_protocol::Standing {
        player,
        place,
        mana_points,
    }
}

#[test]
fn a_game_every_living_player_has_left_ends_as_it_stands_after_the_absence_limit() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(4, 1, 10);
    h.request(15, 3, ClientMessage::Concede { id: 9 }).unwrap();
    h.drain();
    // Player 3 is out and stays connected: he does not hold the game up.
    h.session.gone(h.at(20), conn(0));
    h.session.gone(h.at(25), conn(1));
    h.session.gone(h.at(30), conn(2));
    h.drain();
    // Player 1 comes back for a moment: the limit counts from the last to drop.
    h.session.resume(h.at(100), 70, peer(70), token(1)).unwrap();
    h.session.gone(h.at(110), 70);
    h.drain();
    let (_, events) = h.timeout(709);
    assert!(!events.contains(&Event::GameAbandoned), "{events:?}");
    assert_eq!(h.session.table().stage(), Stage::Playing);
    assert_eq!(h.session.poll_timeout(), Some(h.at(710)));
    let close = h.session.handle_timeout(h.at(710));
    // Player 3 is still at the table: it closes once he has gone too.
    assert!(!close);
    let effects = h.drain();
    assert!(effects.contains(&Effect::Finished), "{effects:?}");
    let events: Vec<Event> = effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Events { events, .. } => Some(events),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        events,
        [
            Event::GameAbandoned,
            Event::GameOver {
                standings: vec![
                    standing(0, 1, 1),
                    standing(1, 1, 1),
                    standing(2, 1, 1),
                    standing(3, 4, 0)
                ]
            },
            Event::DiceRevealed {
                secret: DiceSecret::from_seed(7).to_hex()
            },
        ]
    );
    assert_eq!(h.session.table().stage(), Stage::Finished);
    h.session.gone(h.at(720), conn(3));
    h.drain();
    assert!(!h.session.handle_timeout(h.at(720 + GRACE - 1)));
    assert!(h.session.handle_timeout(h.at(720 + GRACE)));
}

#[test]
fn an_abandoned_game_waits_at_least_the_grace_period_and_paused_time_does_not_count() {
    // An absence limit below the grace period: the grace period counts.
    let mut h = Harness::new(settings(0, 5, 0), timing(0.0));
    h.playing(2, 1, 10);
    h.session.gone(h.at(20), conn(0));
    h.session.gone(h.at(20), conn(1));
    h.drain();
    let (_, events) = h.timeout(20 + GRACE - 1);
    assert!(!events.contains(&Event::GameAbandoned), "{events:?}");
    let (close, events) = h.timeout(20 + GRACE);
    assert!(close);
    assert_eq!(events.first(), Some(&Event::GameAbandoned), "{events:?}");

    // The host pauses, then everyone leaves: the pause ends by itself after the absence limit,
    // and only then does their absence count.
    let mut h = Harness::new(settings(0, 100, 0), timing(0.0));
    h.playing(2, 1, 10);
    h.request(
        20,
        0,
        ClientMessage::Pause {
            id: 3,
            paused: true,
        },
    )
    .unwrap();
    h.session.gone(h.at(30), conn(0));
    h.session.gone(h.at(30), conn(1));
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(120)));
    let (_, events) = h.timeout(120);
    assert_eq!(events, [Event::TablePaused { paused: false }]);
    let (_, events) = h.timeout(219);
    assert!(!events.contains(&Event::GameAbandoned), "{events:?}");
    let (close, events) = h.timeout(220);
    assert!(close);
    assert_eq!(events.first(), Some(&Event::GameAbandoned), "{events:?}");
}

#[test]
fn a_game_in_mulligans_everyone_has_left_ends_too() {
    let mut h = Harness::new(settings(0, 60, 0), timing(0.0));
    h.seat(3);
    h.start(0);
    for p in 0..3 {
        h.session.gone(h.at(5), conn(p));
    }
    h.drain();
    // Deciders away past the grace period keep, and play begins with their turns skipped, but
    // the game ends once they have all been away for the absence limit.
    let mut abandoned = false;
    let mut now = 5;
    while let Some(at) = h.session.poll_timeout() {
        now = (at - h.t0).as_secs();
        assert!(now <= 65, "nothing ended the game: at {now}");
        let (_, events) = h.timeout(now);
        if events.contains(&Event::GameAbandoned) {
            abandoned = true;
            break;
        }
    }
    assert!(abandoned);
    assert_eq!(now, 65);
    let standings = h.session.table().standings().to_vec();
    assert_eq!(
        standings,
        [standing(0, 1, 0), standing(1, 1, 0), standing(2, 1, 0)]
            .into_iter()
            .filter(|s| standings.iter().any(|t| t.player == s.player))
            .collect::<Vec<_>>()
    );
    assert!(standings.iter().all(|s| s.place == 1 && s.mana_points == 0));
    assert_eq!(standings.len(), 3);
}

#[test]
fn after_a_restart_a_game_nobody_comes_back_to_ends_one_absence_limit_later() {
    let mut h = Harness::new(settings(0, 600, 0), timing(0.0));
    h.playing(3, 1, 10);
    h.drain();
    let journal: Vec<(u64, Event)> = (1..).zip(h.events.iter().cloned()).collect();
    let seats: Vec<(PlayerId, SeatToken)> = (0..3).map(|p| (p, token(p))).collect();
    let now = h.at(5_000);
    let mut recovered: Session = Session::recover(
        h.session.settings().clone(),
        DiceSecret::from_seed(7),
        timing(0.0),
        journal,
        &seats,
        Vec::new(),
        now,
    )
    .unwrap();
    recovered.take_effects();
    let limit = Duration::from_secs(600);
    let mut ended = false;
    while let Some(at) = recovered.poll_timeout() {
        assert!(at <= now + limit, "nothing ended the game by the limit");
        let close = recovered.handle_timeout(at);
        let effects = recovered.take_effects();
        if effects.contains(&Effect::Finished) {
            assert_eq!(at, now + limit);
            assert!(close, "nobody is there: it closes at once");
            ended = true;
            break;
        }
    }
    assert!(ended);
    assert_eq!(recovered.table().stage(), Stage::Finished);
}

#[test]
fn a_silent_host_whose_mulligan_decision_is_due_hands_the_role_on() {
    // Mulligan clock off, the host decides first and sends nothing.
    let mut h = Harness::new(settings(0, 300, 0), timing(0.0));
    h.seat(3);
    h.start(0);
    assert_eq!(h.session.table().mulligan_decider(), Some(0));
    let keep_for_host = || ClientMessage::Ruling {
        id: 7,
        ruling: grand_melee_protocol::Ruling::Keep { player: 0 },
    };
    h.refused(100, 1, keep_for_host(), ErrorCode::NotHost);
    // Any request of his counts: a chat line at 100 moves the hand-over to 400.
    h.request(
        100,
        0,
        ClientMessage::Chat {
            id: 8,
            text: "thinking".into(),
        },
    )
    .unwrap();
    h.drain();
    assert_eq!(h.session.poll_timeout(), Some(h.at(400)));
    let (_, events) = h.timeout(399);
    assert!(events.is_empty(), "{events:?}");
    let (_, events) = h.timeout(400);
    assert_eq!(events, [Event::HostChanged { player: Some(1) }]);
    // The new host rules for him.
    h.request(401, 1, keep_for_host()).unwrap();
    let events = h.drain_events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Kept {
                player: 0,
                reason: KeepReason::Ruling,
                ..
            }
        )),
        "{events:?}"
    );
    assert_eq!(h.session.table().mulligan_decider(), Some(1));
}

#[test]
fn a_silent_host_whose_turn_runs_hands_the_role_on_and_the_new_host_ends_it() {
    // Turn clock off; the host plays first, keeps at 10 and then sends nothing.
    let mut h = Harness::new(settings(0, 300, 0), timing(0.0));
    h.playing(3, 0, 10);
    assert_eq!(h.running_holders(), [0]);
    let end_hosts_turn = || ClientMessage::Ruling {
        id: 7,
        ruling: grand_melee_protocol::Ruling::EndTurn { player: 0 },
    };
    h.refused(200, 2, end_hosts_turn(), ErrorCode::NotHost);
    assert_eq!(h.session.poll_timeout(), Some(h.at(310)));
    let (_, events) = h.timeout(310);
    assert_eq!(events, [Event::HostChanged { player: Some(1) }]);
    h.request(311, 1, end_hosts_turn()).unwrap();
    let events = h.drain_events();
    assert!(
        events.contains(&Event::TurnEnded {
            turn: 0,
            player: 0,
            reason: TurnEndReason::Ruling
        }),
        "{events:?}"
    );
    // The turn passed to player 1, the new host: his own silence counts from his ruling.
    assert_eq!(h.running_holders(), [1]);
    assert_eq!(h.session.poll_timeout(), Some(h.at(611)));
}

#[test]
fn a_silent_host_keeps_the_role_while_the_table_does_not_wait_on_him_or_nobody_can_take_it() {
    // Another player's turn runs: the host's silence holds nothing up.
    let mut h = Harness::new(settings(0, 300, 0), timing(0.0));
    h.playing(3, 1, 10);
    assert_eq!(h.running_holders(), [1]);
    assert_eq!(h.session.poll_timeout(), None);
    let (_, events) = h.timeout(100_000);
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(h.session.table().facts().host, Some(0));

    // His turn runs, but nobody else is connected to take the role.
    let mut h = Harness::new(settings(0, 300, 0), timing(0.0));
    h.playing(2, 0, 10);
    h.session.gone(h.at(11), conn(1));
    h.drain();
    let (_, events) = h.timeout(10_000);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::HostChanged { .. })),
        "{events:?}"
    );
    assert_eq!(h.session.table().facts().host, Some(0));
}

#[test]
fn an_absurd_absence_limit_counts_as_the_cap() {
    let mut h = Harness::new(settings(u32::MAX, u32::MAX, u32::MAX), timing(0.0));
    h.seat(2);
    h.start(1);
    let cap = u64::from(grand_melee_protocol::MAX_CLOCK_SECS);
    // The mulligan clock counts as 24 hours.
    assert_eq!(h.session.poll_timeout(), Some(h.at(cap)));
    h.request(
        5,
        0,
        ClientMessage::Pause {
            id: 3,
            paused: true,
        },
    )
    .unwrap();
    h.drain();
    // A pause ends after 24 hours, not 136 years.
    assert_eq!(h.session.poll_timeout(), Some(h.at(5 + cap)));
    let (_, events) = h.timeout(5 + cap);
    assert_eq!(events, [Event::TablePaused { paused: false }]);
}
