//! The session rules (`grand_melee_protocol::session::Session`) driven on a simulated clock.
//!
//! Every instant is `t0 + n seconds`, with `t0` read once per table; the session never reads a
//! clock and nothing here sleeps. Deadlines are checked to the second through `poll_timeout`, and
//! `handle_timeout` is called a second early (nothing happens) and on the dot.
//!
//! After every step the harness checks that the events published so far are numbered from 1
//! without a gap and that folding them on a new table (`Table::replay`) gives the live table;
//! every refused call is checked to change nothing (table, sequence number, timers, members) and
//! to decide nothing (no effects).
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::rules::{Stage, Table, TableConfig, TurnState};
use grand_melee_protocol::session::{
    ConnectionId, Effect, Role, Session, TABLE_CHAT_BURST, Timing,
};
use grand_melee_protocol::{
    ClientMessage, EliminationCause, ErrorCode, Event, KeepReason, Phase, PlayerId, Ruling,
    SeatToken, Settings, TableId, TurnEndReason, TurnId, close,
};

const SEED: u64 = 42;
/// The server's grace period, in seconds.
const GRACE: u64 = 30;
/// How long a table nobody ever sat at stays open, in seconds.
const UNJOINED: u64 = 60;
/// Player names, by id (join order).
const NAMES: [&str; 8] = ["Ann", "Ben", "Cal", "Dee", "Eve", "Fay", "Gus", "Hal"];
/// A spectator's connection.
const SPECTATOR: ConnectionId = 900;

fn settings(turn_clock_secs: u32, absence_limit_secs: u32, mulligan_clock_secs: u32) -> Settings {
    Settings {
        seats: 8,
        turn_clock_secs,
        absence_limit_secs,
        mulligan_clock_secs,
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

/// Player `p` joins on connection `100 + p`…
fn conn(player: PlayerId) -> ConnectionId {
    100 + u64::from(player)
}

/// …from address 10.0.0.(p + 1)…
fn peer(player: PlayerId) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, u8::try_from(player + 1).unwrap()))
}

/// …with this seat token.
fn token(player: PlayerId) -> SeatToken {
    SeatToken::from_u128(0x5ea7_0000 + u128::from(player))
}

fn address(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

fn name(player: PlayerId) -> String {
    NAMES[usize::from(player)].to_owned()
}

// ----- Requests ------------------------------------------------------------------------------

fn start(first_player: PlayerId) -> ClientMessage {
    ClientMessage::Start {
        id: 1,
        first_player: Some(first_player),
        seating: grand_melee_protocol::SeatingMode::Random,
        order: Vec::new(),
    }
}

fn keep() -> ClientMessage {
    ClientMessage::Keep { id: 2 }
}

fn mulligan() -> ClientMessage {
    ClientMessage::Mulligan { id: 3 }
}

fn end_turn() -> ClientMessage {
    ClientMessage::EndTurn { id: 4 }
}

fn set_phase(phase: Phase) -> ClientMessage {
    ClientMessage::SetPhase { id: 5, phase }
}

fn concede() -> ClientMessage {
    ClientMessage::Concede { id: 6 }
}

fn pause(paused: bool) -> ClientMessage {
    ClientMessage::Pause { id: 7, paused }
}

fn kick(player: PlayerId, ban: bool) -> ClientMessage {
    ClientMessage::Kick { id: 8, player, ban }
}

fn mute(player: Option<PlayerId>, muted: bool) -> ClientMessage {
    ClientMessage::Mute {
        id: 9,
        player,
        muted,
    }
}

fn transfer_host(player: PlayerId) -> ClientMessage {
    ClientMessage::TransferHost { id: 10, player }
}

fn chat(text: &str) -> ClientMessage {
    ClientMessage::Chat {
        id: 11,
        text: text.to_owned(),
    }
}

fn ruling(ruling: Ruling) -> ClientMessage {
    ClientMessage::Ruling { id: 12, ruling }
}

// ----- Effects -------------------------------------------------------------------------------

/// The events in `effects`, in order, whatever batches they came in.
fn events(effects: &[Effect]) -> Vec<Event> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Events { events, .. } => Some(events.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The effects other than events, in order.
fn others(effects: &[Effect]) -> Vec<Effect> {
    effects
        .iter()
        .filter(|effect| !matches!(effect, Effect::Events { .. }))
        .cloned()
        .collect()
}

fn connection_changed(player: PlayerId, connected: bool) -> Event {
    Event::ConnectionChanged { player, connected }
}

fn turn_ended(turn: TurnId, player: PlayerId, reason: TurnEndReason) -> Event {
    Event::TurnEnded {
        turn,
        player,
        reason,
    }
}

fn kept(player: PlayerId, hand_size: u8, reason: KeepReason) -> Event {
    Event::Kept {
        player,
        hand_size,
        reason,
    }
}

fn kicked_close(player: PlayerId, ban: bool) -> Effect {
    Effect::Close {
        connection: conn(player),
        code: close::POLICY_VIOLATION,
        reason: if ban {
            "removed and banned from the table by the host"
        } else {
            "removed from the table by the host"
        },
    }
}

/// The seating of `n` players at a table of this seed (the same whoever plays first).
fn seating(n: u16) -> Vec<PlayerId> {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(n);
    sim.start(0, 0);
    sim.seating()
}

// ----- The harness ---------------------------------------------------------------------------

/// One table's session on a simulated clock, with everything it has published.
struct Sim {
    session: Session,
    t0: Instant,
    config: TableConfig,
    /// Every event published, in order (event `n` at index `n - 1`).
    published: Vec<Event>,
}

impl Sim {
    fn new(settings: Settings, timing: Timing) -> Self {
        let t0 = Instant::now();
        let session: Session =
            Session::new(settings, DiceSecret::from_seed(SEED), timing, t0).unwrap();
        let config = session.table().config().clone();
        let sim = Self {
            session,
            t0,
            config,
            published: Vec::new(),
        };
        assert_eq!(sim.session.seq(), 0);
        sim
    }

    /// `t0 + secs`.
    fn at(&self, secs: u64) -> Instant {
        self.t0 + Duration::from_secs(secs)
    }

    /// The whole number of seconds from `t0` to `instant` (which must be exactly that).
    fn secs(&self, instant: Instant) -> u64 {
        let since = instant
            .checked_duration_since(self.t0)
            .expect("a deadline before the table was created");
        let secs = since.as_secs();
        assert_eq!(self.at(secs), instant, "a deadline between two seconds");
        secs
    }

    /// When the session next needs waking, in seconds from `t0`.
    fn deadline(&self) -> Option<u64> {
        self.session.poll_timeout().map(|at| self.secs(at))
    }

    /// Takes what the session decided and checks the numbering and the fold.
    fn drain(&mut self) -> Vec<Effect> {
        let effects = self.session.take_effects();
        for effect in &effects {
            if let Effect::Events { first_seq, events } = effect {
                assert!(!events.is_empty(), "an empty batch of events");
                assert_eq!(
                    *first_seq,
                    self.published.len() as u64 + 1,
                    "events are numbered on from 1 without a gap: {effects:?}"
                );
                self.published.extend(events.iter().cloned());
            }
        }
        assert_eq!(self.session.seq(), self.published.len() as u64);
        let fold = Table::replay(self.config.clone(), &self.published)
            .expect("everything published folds");
        assert_eq!(
            &fold,
            self.session.table(),
            "the table is the fold of everything published"
        );
        assert!(self.session.poll_effect().is_none());
        effects
    }

    /// Runs a step that may be refused: accepted, its effects (checked); refused, it must have
    /// changed nothing and decided nothing.
    fn attempt<T>(
        &mut self,
        step: impl FnOnce(&mut Session) -> Result<T, ErrorCode>,
    ) -> Result<(T, Vec<Effect>), ErrorCode> {
        let table = self.session.table().clone();
        let seq = self.session.seq();
        let deadline = self.session.poll_timeout();
        let seated = self.session.seated();
        let spectators = self.session.spectators();
        let paused = self.session.paused();
        match step(&mut self.session) {
            Ok(value) => Ok((value, self.drain())),
            Err(code) => {
                assert_eq!(self.session.table(), &table, "{code:?} changed the table");
                assert_eq!(self.session.seq(), seq, "{code:?} published");
                assert_eq!(
                    self.session.poll_timeout(),
                    deadline,
                    "{code:?} moved a timer"
                );
                assert_eq!(self.session.seated(), seated);
                assert_eq!(self.session.spectators(), spectators);
                assert_eq!(self.session.paused(), paused);
                assert_eq!(
                    self.session.take_effects(),
                    [],
                    "{code:?} decided something"
                );
                Err(code)
            }
        }
    }

    /// A request from `connection` at `t0 + secs`; accepted, its effects.
    fn request(
        &mut self,
        secs: u64,
        connection: ConnectionId,
        request: ClientMessage,
    ) -> Result<Vec<Effect>, ErrorCode> {
        let now = self.at(secs);
        let (seq, effects) = self.attempt(|s| s.request(now, connection, &request))?;
        assert_eq!(
            seq,
            self.session.seq(),
            "the ack carries the last event's number"
        );
        Ok(effects)
    }

    /// A request that must be accepted: the events it caused.
    fn ok(&mut self, secs: u64, connection: ConnectionId, request: ClientMessage) -> Vec<Event> {
        let what = format!("{request:?}");
        match self.request(secs, connection, request) {
            Ok(effects) => events(&effects),
            Err(code) => panic!("{what} from {connection} refused: {code:?}"),
        }
    }

    /// A request that must be refused with `code` (and change nothing: see `attempt`).
    fn refused(
        &mut self,
        secs: u64,
        connection: ConnectionId,
        request: ClientMessage,
        code: ErrorCode,
    ) {
        let what = format!("{request:?}");
        assert_eq!(
            self.request(secs, connection, request),
            Err(code),
            "{what} from {connection}"
        );
    }

    fn join_from(
        &mut self,
        secs: u64,
        connection: ConnectionId,
        peer: IpAddr,
        name: &str,
        token: SeatToken,
    ) -> Result<(PlayerId, Vec<Effect>), ErrorCode> {
        let now = self.at(secs);
        let name = name.to_owned();
        self.attempt(|s| s.join(now, connection, peer, name, String::new(), None, token))
    }

    /// Player `player` (the next id) joins on his connection, from his address.
    fn join(&mut self, secs: u64, player: PlayerId) -> Vec<Effect> {
        let (id, effects) = self
            .join_from(
                secs,
                conn(player),
                peer(player),
                &name(player),
                token(player),
            )
            .unwrap();
        assert_eq!(id, player);
        effects
    }

    fn watch(
        &mut self,
        secs: u64,
        connection: ConnectionId,
        peer: IpAddr,
    ) -> Result<Vec<Effect>, ErrorCode> {
        let now = self.at(secs);
        self.attempt(|s| s.watch(now, connection, peer))
            .map(|((), effects)| effects)
    }

    fn resume(
        &mut self,
        secs: u64,
        connection: ConnectionId,
        peer: IpAddr,
        token: SeatToken,
    ) -> Result<(PlayerId, Vec<Effect>), ErrorCode> {
        let now = self.at(secs);
        self.attempt(|s| s.resume(now, connection, peer, token))
    }

    /// A connection drops.
    fn gone(&mut self, secs: u64, connection: ConnectionId) -> Vec<Effect> {
        self.session.gone(self.at(secs), connection);
        self.drain()
    }

    /// A member leaves on purpose.
    fn leave(&mut self, secs: u64, connection: ConnectionId) -> Vec<Effect> {
        self.session.leave(self.at(secs), connection);
        self.drain()
    }

    /// The driver wakes the session: whether the table should close, and what it decided.
    fn timeout(&mut self, secs: u64) -> (bool, Vec<Effect>) {
        let close = self.session.handle_timeout(self.at(secs));
        (close, self.drain())
    }

    /// Waking the session at `t0 + secs` does nothing at all.
    fn quiet(&mut self, secs: u64) {
        let deadline = self.deadline();
        let seq = self.session.seq();
        let (close, effects) = self.timeout(secs);
        assert!(!close, "closes at {secs}");
        assert_eq!(effects, [], "at {secs}");
        assert_eq!(self.session.seq(), seq);
        assert_eq!(self.deadline(), deadline, "at {secs}");
    }

    /// The events of waking the session at `t0 + secs` (which must not close the table).
    fn expire(&mut self, secs: u64) -> Vec<Event> {
        let (close, effects) = self.timeout(secs);
        assert!(!close, "closes at {secs}");
        assert_eq!(others(&effects), [], "at {secs}");
        events(&effects)
    }

    // ----- Game set-ups and queries ------------------------------------------------------------

    /// `n` players join at `t0` in id order; player 0 is the host.
    fn lobby(&mut self, n: u16) {
        for player in 0..n {
            let effects = self.join(0, player);
            let mut expected = vec![Event::PlayerJoined {
                player,
                name: name(player),
                entropy: String::new(),
                deck: None,
            }];
            if player == 0 {
                expected.push(Event::HostChanged { player: Some(0) });
            }
            assert_eq!(
                others(&effects),
                [Effect::SetSeat {
                    player,
                    token: token(player)
                }]
            );
            assert_eq!(events(&effects), expected);
        }
        assert_eq!(self.session.seated(), usize::from(n));
        assert_eq!(self.session.table().facts().host, Some(0));
    }

    /// The host starts at `t0 + secs` with `first` deciding and playing first.
    fn start(&mut self, secs: u64, first: PlayerId) {
        let events = self.ok(secs, conn(0), start(first));
        assert!(
            matches!(
                events.as_slice(),
                [Event::GameStarted { first_player, .. }] if *first_player == first
            ),
            "{events:?}"
        );
        assert_eq!(self.session.table().mulligan_decider(), Some(first));
    }

    /// `n` players, `first` first, every hand kept at `t0 + kept_at`: turn 0 begins for `first`.
    fn play(&mut self, n: u16, first: PlayerId, kept_at: u64) {
        self.lobby(n);
        self.start(0, first);
        let order = self.deciding_order();
        for (k, &player) in order.iter().enumerate() {
            let events = self.ok(kept_at, conn(player), keep());
            let mut expected = vec![kept(player, 7, KeepReason::Decided)];
            if k + 1 == order.len() {
                expected.push(Event::TurnBegan {
                    turn: 0,
                    player: first,
                });
            }
            assert_eq!(events, expected);
        }
        assert_eq!(self.session.table().stage(), Stage::Playing);
        assert_eq!(self.running(), [(0, first)]);
    }

    /// Players in seating order (the next seat is to the left).
    fn seating(&self) -> Vec<PlayerId> {
        self.session
            .table()
            .players()
            .iter()
            .map(|p| p.id)
            .collect()
    }

    /// Players in the order they decide on mulligans: seating order from the first player.
    fn deciding_order(&self) -> Vec<PlayerId> {
        let mut seating = self.seating();
        let first = self.session.table().first_player().unwrap();
        let at = seating.iter().position(|&p| p == first).unwrap();
        seating.rotate_left(at);
        seating
    }

    /// The next player to the left (everyone alive).
    fn left_of(&self, player: PlayerId) -> PlayerId {
        let seating = self.seating();
        let at = seating.iter().position(|&p| p == player).unwrap();
        seating[(at + 1) % seating.len()]
    }

    /// Running turns and their holders.
    fn running(&self) -> Vec<(TurnId, PlayerId)> {
        let table = self.session.table();
        table
            .turns()
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .map(|t| (t.id, table.players()[t.seat].id))
            .collect()
    }

    /// The events of turn 0 passing on from `from` (who held it) to the next player, who
    /// begins it at once.
    fn passes_on(&self, from: PlayerId, reason: TurnEndReason) -> Vec<Event> {
        let to = self.left_of(from);
        vec![
            turn_ended(0, from, reason),
            Event::TurnPassed { turn: 0, from, to },
            Event::TurnBegan {
                turn: 0,
                player: to,
            },
        ]
    }
}

// ----- 1. Turn clock -------------------------------------------------------------------------

#[test]
fn the_turn_clock_ends_a_running_turn_exactly_when_it_runs_out() {
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(4, 1, 10);
    // Turn 0 began at 10 for player 1.
    assert_eq!(sim.deadline(), Some(70));
    sim.quiet(69);
    let expected = sim.passes_on(1, TurnEndReason::Clock);
    assert_eq!(sim.expire(70), expected);
    let second = sim.left_of(1);
    assert_eq!(sim.running(), [(0, second)]);
    // The next holder's clock counts from when his turn began; moving the phase does not
    // restart it.
    assert_eq!(sim.deadline(), Some(130));
    assert_eq!(
        sim.ok(80, conn(second), set_phase(Phase::Combat)),
        [Event::PhaseChanged {
            turn: 0,
            phase: Phase::Combat
        }]
    );
    assert_eq!(sim.deadline(), Some(130));
    // Ended by its player: the next one's clock starts then.
    let expected = sim.passes_on(second, TurnEndReason::Finished);
    assert_eq!(sim.ok(100, conn(second), end_turn()), expected);
    let third = sim.left_of(second);
    assert_eq!(sim.deadline(), Some(160));
    sim.quiet(159);
    // Woken late: the turn ends then, and the next clock counts from then.
    let expected = sim.passes_on(third, TurnEndReason::Clock);
    assert_eq!(sim.expire(175), expected);
    assert_eq!(sim.deadline(), Some(235));
}

#[test]
fn without_a_turn_clock_a_connected_players_turn_never_expires() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(4, 1, 10);
    assert_eq!(sim.deadline(), None);
    sim.quiet(1_000_000);
    assert_eq!(sim.running(), [(0, 1)]);
}

// ----- 2. Absent turn holders ----------------------------------------------------------------

#[test]
fn an_absent_players_turn_is_skipped_a_grace_period_after_it_began_or_he_dropped() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    // The turn goes round from the player to the host's left, so that it reaches the host
    // (whose absence has its own consequence) last.
    let seating = seating(4);
    let first = seating[(seating.iter().position(|&p| p == 0).unwrap() + 1) % 4];
    sim.play(4, first, 10);
    let second = sim.left_of(first);
    // The second holder drops before his turn comes up; the first while his turn runs.
    assert_eq!(
        events(&sim.gone(15, conn(second))),
        [connection_changed(second, false)]
    );
    assert_eq!(sim.deadline(), Some(15 + 600), "only his absence limit");
    assert_eq!(
        events(&sim.gone(20, conn(first))),
        [connection_changed(first, false)]
    );
    // max(began 10, dropped 20) + grace.
    assert_eq!(sim.deadline(), Some(20 + GRACE));
    sim.quiet(20 + GRACE - 1);
    let expected = sim.passes_on(first, TurnEndReason::Absent);
    assert_eq!(sim.expire(20 + GRACE), expected);
    // His turn began at 50, he dropped at 15: max(50, 15) + grace.
    assert_eq!(sim.deadline(), Some(50 + GRACE));
    sim.quiet(50 + GRACE - 1);
    let expected = sim.passes_on(second, TurnEndReason::Absent);
    assert_eq!(sim.expire(50 + GRACE), expected);
    let third = sim.left_of(second);
    // A connected holder's turn waits; the next deadline is the first one away's absence.
    assert_eq!(sim.deadline(), Some(15 + 600));
    // One who comes back within the grace period keeps his turn.
    sim.gone(90, conn(third));
    assert_eq!(sim.deadline(), Some(90 + GRACE));
    let (player, effects) = sim
        .resume(100, conn(third), peer(third), token(third))
        .unwrap();
    assert_eq!(player, third);
    assert_eq!(events(&effects), [connection_changed(third, true)]);
    assert_eq!(sim.deadline(), Some(15 + 600));
    sim.quiet(90 + GRACE);
    assert_eq!(sim.running(), [(0, third)]);
}

#[test]
fn when_the_turn_clock_and_the_grace_period_end_together_the_clock_is_the_reason() {
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(4, 1, 10);
    // Dropped at 40: skipped at 40 + 30 = 70, the clock's own end.
    sim.gone(40, conn(1));
    assert_eq!(sim.deadline(), Some(70));
    let expected = sim.passes_on(1, TurnEndReason::Clock);
    assert_eq!(sim.expire(70), expected);
}

// ----- 3. Mulligan decisions -----------------------------------------------------------------

#[test]
fn the_mulligan_clock_and_an_absent_decider_keep_whichever_comes_first() {
    let mut sim = Sim::new(settings(0, 600, 60), timing(0.0));
    sim.lobby(4);
    sim.start(0, 0);
    let order = sim.deciding_order();
    let [first, second, third, fourth] = order[..] else {
        panic!("{order:?}")
    };
    assert_eq!(first, 0);
    // The first decision came up at 0.
    assert_eq!(sim.deadline(), Some(60));
    // A mulligan is part of the same decision: the clock does not restart.
    assert_eq!(
        sim.ok(20, conn(first), mulligan()),
        [Event::Mulliganed {
            player: first,
            hand_size: 6
        }]
    );
    assert_eq!(sim.deadline(), Some(60));
    // The third decider drops long before his decision comes up: nothing counts yet.
    sim.gone(50, conn(third));
    assert_eq!(sim.deadline(), Some(60));
    sim.quiet(59);
    assert_eq!(sim.expire(60), [kept(first, 6, KeepReason::Clock)]);
    // The second decision came up at 60: its clock ends at 120, but its decider drops at 70.
    assert_eq!(sim.deadline(), Some(120));
    sim.gone(70, conn(second));
    assert_eq!(sim.deadline(), Some(70 + GRACE));
    sim.quiet(70 + GRACE - 1);
    assert_eq!(
        sim.expire(70 + GRACE),
        [kept(second, 7, KeepReason::Absent)]
    );
    // The third came up at 100, its decider away since 50: max(100, 50) + grace, before the
    // clock (160).
    assert_eq!(sim.deadline(), Some(100 + GRACE));
    sim.quiet(100 + GRACE - 1);
    assert_eq!(
        sim.expire(100 + GRACE),
        [kept(third, 7, KeepReason::Absent)]
    );
    // The fourth came up at 130; he drops at 170: the clock (190) comes before his grace
    // period (200).
    sim.gone(170, conn(fourth));
    assert_eq!(sim.deadline(), Some(190));
    sim.quiet(189);
    assert_eq!(
        sim.expire(190),
        [
            kept(fourth, 7, KeepReason::Clock),
            Event::TurnBegan {
                turn: 0,
                player: first
            }
        ]
    );
    assert_eq!(sim.session.table().stage(), Stage::Playing);
    // Play: only the absence limits of those away are left (the third's, from 50, first).
    assert_eq!(sim.deadline(), Some(50 + 600));
}

#[test]
fn without_a_mulligan_clock_only_an_absent_decider_is_waited_out() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(3);
    sim.start(0, 1);
    assert_eq!(sim.deadline(), None);
    sim.quiet(10_000);
    sim.gone(10_000, conn(1));
    assert_eq!(sim.deadline(), Some(10_000 + GRACE));
    assert_eq!(sim.expire(10_000 + GRACE), [kept(1, 7, KeepReason::Absent)]);
    // A connected decider is not waited out, unless he is the host (then his silence hands the
    // role on after the absence limit: section 5).
    let next = sim.session.table().mulligan_decider();
    assert_eq!(
        sim.deadline(),
        (next == Some(0)).then_some(10_000 + GRACE + 600)
    );
}

// ----- 4. Absence announcements --------------------------------------------------------------

#[test]
fn a_player_is_announced_absent_after_the_absence_limit_in_play_and_cleared_when_he_resumes() {
    // An absence limit (10 s) shorter than the grace period, so the lobby's own timer shows.
    let mut sim = Sim::new(settings(0, 10, 0), timing(0.0));
    sim.lobby(3);
    // In the lobby nobody is announced absent: only the seat is given up, after the grace
    // period.
    sim.gone(1, conn(2));
    assert_eq!(sim.deadline(), Some(1 + GRACE));
    sim.quiet(11);
    sim.resume(12, conn(2), peer(2), token(2)).unwrap();
    assert_eq!(sim.deadline(), None);
    // Player 1 plays first: the table does not wait on the host (section 5).
    sim.start(13, 1);
    for player in sim.deciding_order() {
        sim.ok(20, conn(player), keep());
    }
    assert_eq!(sim.running(), [(0, 1)]);
    // During play: dropped at 30, announced at 30 + 10.
    let away = 2;
    sim.gone(30, conn(away));
    assert_eq!(sim.deadline(), Some(40));
    sim.quiet(39);
    assert_eq!(sim.expire(40), [Event::PlayerAbsent { player: away }]);
    let presence = sim.session.table().facts().presence(away);
    assert!(presence.absent && !presence.connected);
    // Announced once.
    assert_eq!(sim.deadline(), None);
    sim.quiet(1_000);
    // Back on a new connection: the absence is cleared by the resume itself.
    let (player, effects) = sim
        .resume(1_001, 777, address(192, 168, 0, 7), token(away))
        .unwrap();
    assert_eq!(player, away);
    assert_eq!(
        effects,
        [Effect::Events {
            first_seq: sim.session.seq(),
            events: vec![connection_changed(away, true)]
        }]
    );
    let presence = sim.session.table().facts().presence(away);
    assert!(presence.connected && !presence.absent);
    assert_eq!(sim.session.role(777), Some(Role::Player(away)));
    // Away again: counted again from the new drop.
    sim.gone(1_010, 777);
    assert_eq!(sim.deadline(), Some(1_020));
    assert_eq!(sim.expire(1_020), [Event::PlayerAbsent { player: away }]);
}

#[test]
fn an_eliminated_player_is_never_announced_absent() {
    let mut sim = Sim::new(settings(0, 10, 0), timing(0.0));
    // Player 2 plays first: the table does not wait on the host (section 5).
    sim.play(3, 2, 10);
    assert_eq!(
        sim.ok(20, conn(1), concede()),
        [Event::Eliminated {
            players: vec![1],
            cause: EliminationCause::Conceded
        }]
    );
    sim.gone(21, conn(1));
    assert_eq!(sim.deadline(), None);
    sim.quiet(1_000);
    assert!(!sim.session.table().facts().presence(1).absent);
}

// ----- 5. Host hand-over ---------------------------------------------------------------------

#[test]
fn an_absent_host_hands_over_to_the_first_connected_seat_after_the_grace_period() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    // Player 3 holds the running turn; players 0 (the host) and 1 drop.
    sim.play(4, 3, 10);
    sim.gone(15, conn(1));
    sim.gone(20, conn(0));
    assert_eq!(sim.deadline(), Some(20 + GRACE));
    sim.quiet(20 + GRACE - 1);
    // The first seat in join order with a connection: player 2 (1 is away).
    assert_eq!(
        sim.expire(20 + GRACE),
        [Event::HostChanged { player: Some(2) }]
    );
    assert_eq!(sim.session.table().facts().host, Some(2));
    assert_eq!(sim.deadline(), Some(15 + 600));
    // The old host, back, is an ordinary player.
    sim.resume(60, conn(0), peer(0), token(0)).unwrap();
    sim.refused(61, conn(0), pause(true), ErrorCode::NotHost);
    assert_eq!(
        sim.ok(62, conn(2), transfer_host(0)),
        [Event::HostChanged { player: Some(0) }]
    );
    sim.refused(63, conn(2), pause(true), ErrorCode::NotHost);
}

#[test]
fn a_host_who_comes_back_within_the_grace_period_keeps_the_role() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(4, 3, 10);
    sim.gone(20, conn(0));
    assert_eq!(sim.deadline(), Some(20 + GRACE));
    sim.resume(49, conn(0), peer(0), token(0)).unwrap();
    assert_eq!(sim.deadline(), None);
    sim.quiet(20 + GRACE);
    assert_eq!(sim.session.table().facts().host, Some(0));
}

#[test]
fn with_nobody_else_connected_the_host_keeps_the_role_until_someone_is() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(2, 0, 10);
    let events = sim.ok(20, conn(1), concede());
    assert_eq!(
        events,
        [
            Event::Eliminated {
                players: vec![1],
                cause: EliminationCause::Conceded
            },
            Event::GameOver {
                standings: sim.session.table().standings().to_vec()
            },
            // The dice secret, whose SHA-256 every snapshot showed, comes out with the end.
            Event::DiceRevealed {
                secret: sim.session.table().config().secret.to_hex()
            }
        ]
    );
    assert_eq!(sim.session.table().stage(), Stage::Finished);
    // A spectator keeps the finished table open (spectators never take the host role).
    sim.watch(25, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    sim.gone(30, conn(1));
    sim.gone(40, conn(0));
    // Nobody seated is connected: no hand-over to wait for, and nothing else either.
    assert_eq!(sim.deadline(), None);
    sim.quiet(40 + GRACE);
    sim.quiet(10_000);
    assert_eq!(sim.session.table().facts().host, Some(0));
    // Someone is back: the host has been away longer than the grace period, so the role
    // passes at once (the deadline, 40 + grace, is already behind).
    sim.resume(10_001, conn(1), peer(1), token(1)).unwrap();
    assert_eq!(sim.deadline(), Some(40 + GRACE));
    assert_eq!(sim.expire(10_001), [Event::HostChanged { player: Some(1) }]);
    assert_eq!(sim.deadline(), None);
}

#[test]
fn a_paused_tables_absent_host_still_hands_over() {
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(3, 1, 10);
    sim.ok(11, conn(0), pause(true));
    sim.gone(12, conn(0));
    // The host's grace period runs while paused; the clocks do not.
    assert_eq!(sim.deadline(), Some(12 + GRACE));
    assert_eq!(
        sim.expire(12 + GRACE),
        [Event::HostChanged { player: Some(1) }]
    );
    assert!(sim.session.paused());
    // The new host resumes play: the turn had 59 s left.
    assert_eq!(
        sim.ok(50, conn(1), pause(false)),
        [Event::TablePaused { paused: false }]
    );
    assert_eq!(sim.deadline(), Some(50 + 59));
}

/// PROTOCOL.md ("Absent and silent players"): "An absent host hands the role on after the grace
/// period, paused or not." The host's grace period runs through a pause, so a pause that ends
/// before it does not push the hand-over back.
/// (Once broken: unpausing shifted the host's drop time too, so the role passed at 80, the
/// pause's end + grace, instead of 55.)
#[test]
fn a_pause_that_ends_before_the_hosts_grace_period_does_not_delay_the_hand_over() {
    // Absence limit = grace: the pause ends by itself 30 s after it began.
    let mut sim = Sim::new(settings(0, 30, 0), timing(0.0));
    sim.play(3, 1, 10);
    sim.ok(20, conn(0), pause(true));
    sim.gone(25, conn(0));
    assert_eq!(sim.deadline(), Some(50), "the pause's own end comes first");
    assert_eq!(sim.expire(50), [Event::TablePaused { paused: false }]);
    // Away since 25: the role passes at 25 + grace (his absence limit, which the pause did
    // stop, ends at 50 + 30).
    assert_eq!(sim.deadline(), Some(25 + GRACE));
    assert_eq!(
        sim.expire(25 + GRACE),
        [Event::HostChanged { player: Some(1) }]
    );
}

// ----- 6. Pause ------------------------------------------------------------------------------

#[test]
fn a_pause_refuses_game_requests_freezes_the_timers_and_ends_by_itself() {
    let mut sim = Sim::new(settings(60, 100, 0), timing(0.0));
    sim.play(4, 1, 10);
    assert_eq!(sim.deadline(), Some(70));
    sim.refused(15, conn(1), pause(true), ErrorCode::NotHost);
    // Player 2 drops before the pause: announced absent at 115 if nothing stops the clock.
    sim.gone(15, conn(2));
    assert_eq!(
        sim.ok(20, conn(0), pause(true)),
        [Event::TablePaused { paused: true }]
    );
    assert!(sim.session.paused() && sim.session.table().facts().paused);
    // Only the pause's own end is due: 20 + max(absence limit 100, grace 30).
    assert_eq!(sim.deadline(), Some(120));
    // Game requests are refused, whoever sends them; the host's others and chat still work.
    sim.refused(25, conn(1), end_turn(), ErrorCode::TablePaused);
    sim.refused(
        25,
        conn(1),
        set_phase(Phase::Combat),
        ErrorCode::TablePaused,
    );
    sim.refused(25, conn(3), concede(), ErrorCode::TablePaused);
    sim.refused(
        25,
        conn(0),
        ruling(Ruling::EndTurn { player: 1 }),
        ErrorCode::TablePaused,
    );
    sim.refused(25, conn(1), start(1), ErrorCode::NotHost);
    assert_eq!(
        sim.request(26, conn(0), pause(true)),
        Ok(vec![]),
        "already paused"
    );
    assert_eq!(
        sim.ok(27, conn(1), chat("brb")),
        [Event::Chat {
            from: Some(1),
            name: name(1),
            text: "brb".into()
        }]
    );
    // Player 3 drops during the pause: his absence counts from the end of the pause.
    sim.gone(30, conn(3));
    assert_eq!(sim.deadline(), Some(120));
    // Nothing runs out while paused (the turn clock would have at 70, player 2's absence
    // limit at 115).
    sim.quiet(70);
    sim.quiet(89);
    assert_eq!(
        sim.ok(90, conn(0), pause(false)),
        [Event::TablePaused { paused: false }]
    );
    // 70 s paused: the turn clock runs out 70 s later (140), player 2's limit too (185), and
    // player 3's counts from 90 (190).
    assert_eq!(sim.deadline(), Some(140));
    // Paused again at 100 with 40 s left on the turn clock.
    assert_eq!(
        sim.ok(100, conn(0), pause(true)),
        [Event::TablePaused { paused: true }]
    );
    assert_eq!(sim.deadline(), Some(200));
    sim.quiet(199);
    assert_eq!(sim.expire(200), [Event::TablePaused { paused: false }]);
    assert!(!sim.session.paused() && !sim.session.table().facts().paused);
    // 100 s more paused: the turn clock at 240, the absences at 285 and 290.
    assert_eq!(sim.deadline(), Some(240));
    sim.quiet(239);
    let expected = sim.passes_on(1, TurnEndReason::Clock);
    assert_eq!(sim.expire(240), expected);
    let holder = sim.left_of(1);
    // The new holder's clock (300), or his grace period if he is one of those away (270).
    let expected = if holder == 2 || holder == 3 { 270 } else { 285 };
    assert_eq!(sim.deadline(), Some(expected));
    if expected == 285 {
        assert_eq!(sim.expire(285), [Event::PlayerAbsent { player: 2 }]);
        assert_eq!(sim.deadline(), Some(290));
        assert_eq!(sim.expire(290), [Event::PlayerAbsent { player: 3 }]);
    }
}

#[test]
fn a_pause_ends_after_the_grace_period_when_the_absence_limit_is_shorter() {
    let mut sim = Sim::new(settings(0, 10, 0), timing(0.0));
    sim.lobby(2);
    sim.ok(5, conn(0), pause(true));
    assert_eq!(sim.deadline(), Some(5 + GRACE));
    // Start is a game request.
    sim.refused(6, conn(0), start(0), ErrorCode::TablePaused);
    sim.quiet(5 + GRACE - 1);
    assert_eq!(
        sim.expire(5 + GRACE),
        [Event::TablePaused { paused: false }]
    );
    assert_eq!(sim.deadline(), None);
    // The host may pause again.
    assert_eq!(
        sim.ok(36, conn(0), pause(true)),
        [Event::TablePaused { paused: true }]
    );
    assert_eq!(sim.deadline(), Some(36 + GRACE));
    assert_eq!(
        sim.request(37, conn(0), pause(false)).map(|e| events(&e)),
        Ok(vec![Event::TablePaused { paused: false }])
    );
    assert_eq!(
        sim.request(38, conn(0), pause(false)),
        Ok(vec![]),
        "not paused"
    );
}

#[test]
fn a_pause_freezes_the_mulligan_clock() {
    let mut sim = Sim::new(settings(0, 600, 60), timing(0.0));
    sim.lobby(3);
    sim.start(0, 0);
    assert_eq!(sim.deadline(), Some(60));
    sim.ok(10, conn(0), pause(true));
    assert_eq!(sim.deadline(), Some(610));
    sim.refused(11, conn(0), keep(), ErrorCode::TablePaused);
    sim.refused(11, conn(0), mulligan(), ErrorCode::TablePaused);
    sim.refused(
        11,
        conn(0),
        ruling(Ruling::Keep { player: 0 }),
        ErrorCode::TablePaused,
    );
    sim.quiet(60);
    sim.quiet(69);
    sim.ok(70, conn(0), pause(false));
    // 60 s paused.
    assert_eq!(sim.deadline(), Some(120));
    sim.quiet(119);
    assert_eq!(sim.expire(120), [kept(0, 7, KeepReason::Clock)]);
    assert_eq!(sim.deadline(), Some(180));
}

// ----- 7. Kick -------------------------------------------------------------------------------

#[test]
fn a_kick_in_the_lobby_takes_the_seat_and_closes_the_connection() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(3);
    sim.refused(1, conn(1), kick(2, false), ErrorCode::NotHost);
    sim.refused(1, conn(0), kick(9, false), ErrorCode::UnknownPlayer);
    let effects = sim.request(2, conn(0), kick(2, false)).unwrap();
    assert_eq!(
        effects,
        [
            Effect::RemoveSeat { player: 2 },
            Effect::Events {
                first_seq: sim.session.seq() - 1,
                events: vec![
                    Event::PlayerKicked {
                        player: 2,
                        banned: false
                    },
                    Event::PlayerLeft { player: 2 }
                ]
            },
            kicked_close(2, false),
        ]
    );
    assert_eq!(sim.session.seated(), 2);
    assert_eq!(sim.session.role(conn(2)), None);
    assert_eq!(sim.session.table().lobby().len(), 2);
    // His connection closing changes nothing more; his token no longer works.
    assert_eq!(sim.gone(3, conn(2)), []);
    sim.refused(3, conn(2), chat("hey"), ErrorCode::NotInTable);
    assert_eq!(
        sim.resume(4, 300, peer(2), token(2)).map(|(p, _)| p),
        Err(ErrorCode::BadToken)
    );
    sim.refused(4, conn(0), kick(2, false), ErrorCode::UnknownPlayer);
    // Not banned: he may sit down again, as a new player.
    let (player, _) = sim
        .join_from(5, 300, peer(2), "Zed", SeatToken::from_u128(7))
        .unwrap();
    assert_eq!(player, 3);
    // A disconnected player kicked: no connection to close.
    sim.gone(6, conn(1));
    let effects = sim.request(7, conn(0), kick(1, false)).unwrap();
    assert_eq!(others(&effects), [Effect::RemoveSeat { player: 1 }]);
    assert_eq!(
        events(&effects),
        [
            Event::PlayerKicked {
                player: 1,
                banned: false
            },
            Event::PlayerLeft { player: 1 }
        ]
    );
    assert_eq!(
        sim.deadline(),
        None,
        "his lobby seat's grace period went with it"
    );
}

#[test]
fn a_kick_with_a_ban_during_play_eliminates_and_refuses_every_address_of_his() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(4, 1, 10);
    // Player 3 (no turn) comes back from a second address before he is kicked.
    let elsewhere = address(172, 16, 0, 3);
    sim.gone(12, conn(3));
    sim.resume(13, 333, elsewhere, token(3)).unwrap();
    let effects = sim.request(20, conn(0), kick(3, true)).unwrap();
    assert_eq!(
        effects,
        [
            Effect::RemoveSeat { player: 3 },
            Effect::Banned {
                addresses: vec![peer(3), elsewhere]
            },
            Effect::Events {
                first_seq: sim.session.seq() - 1,
                events: vec![
                    Event::PlayerKicked {
                        player: 3,
                        banned: true
                    },
                    Event::Eliminated {
                        players: vec![3],
                        cause: EliminationCause::Ruling
                    }
                ]
            },
            Effect::Close {
                connection: 333,
                code: close::POLICY_VIOLATION,
                reason: "removed and banned from the table by the host",
            },
        ]
    );
    assert!(sim.session.is_banned(peer(3)) && sim.session.is_banned(elsewhere));
    assert_eq!(sim.running(), [(0, 1)], "the running turn goes on");
    // His connection is closed with the kick: the fold shows him disconnected from then on.
    assert!(!sim.session.table().facts().presence(3).connected);
    let view = sim.session.view(TableId::nil(), "Table");
    assert!(!view.player(3).unwrap().connected);
    // Refused from either address, under any name, as player or spectator.
    for address in [peer(3), elsewhere] {
        assert_eq!(sim.watch(21, 400, address), Err(ErrorCode::Banned));
        assert_eq!(
            sim.join_from(21, 400, address, "Yan", SeatToken::from_u128(9))
                .map(|(p, _)| p),
            Err(ErrorCode::Banned)
        );
    }
    assert_eq!(
        sim.resume(21, 400, address(8, 8, 8, 8), token(3))
            .map(|(p, _)| p),
        Err(ErrorCode::BadToken)
    );
    // Others still may.
    sim.watch(22, 401, address(8, 8, 8, 8)).unwrap();
    // A second ban adds to the list.
    let effects = sim.request(23, conn(0), kick(2, true)).unwrap();
    assert!(effects.contains(&Effect::Banned {
        addresses: vec![peer(3), elsewhere, peer(2)]
    }));
    assert!(effects.contains(&kicked_close(2, true)));
}

#[test]
fn kicking_an_eliminated_player_or_anyone_after_the_game_only_takes_the_seat() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(3, 0, 10);
    sim.ok(20, conn(2), concede());
    let effects = sim.request(21, conn(0), kick(2, false)).unwrap();
    assert_eq!(
        effects,
        [
            Effect::RemoveSeat { player: 2 },
            Effect::Events {
                first_seq: sim.session.seq(),
                events: vec![Event::PlayerKicked {
                    player: 2,
                    banned: false
                }]
            },
            kicked_close(2, false),
        ]
    );
    let effects = sim.request(30, conn(1), concede()).unwrap();
    assert!(effects.contains(&Effect::Finished));
    assert_eq!(sim.session.table().stage(), Stage::Finished);
    let effects = sim.request(31, conn(0), kick(1, false)).unwrap();
    assert_eq!(
        effects,
        [
            Effect::RemoveSeat { player: 1 },
            Effect::Events {
                first_seq: sim.session.seq(),
                events: vec![Event::PlayerKicked {
                    player: 1,
                    banned: false
                }]
            },
            kicked_close(1, false),
        ]
    );
    // `Finished` is decided once.
    let effects = sim.request(32, conn(0), chat("gg")).unwrap();
    assert!(!effects.contains(&Effect::Finished));
}

/// The example of `docs/RULES.md` ("Kick during mulligans"): 5 players deciding in the order
/// Ann (the host), Ben, Cal, Dee, Eve (here: by seat, whoever they are).
#[test]
fn players_kicked_during_mulligans_keep_when_due_and_are_eliminated_together_as_play_begins() {
    let mut sim = Sim::new(settings(0, 600, 60), timing(0.0));
    sim.lobby(5);
    sim.start(0, 0);
    let order = sim.deciding_order();
    let [ann, ben, cal, dee, eve] = order[..] else {
        panic!("{order:?}")
    };
    assert_eq!(ann, 0);
    assert_eq!(sim.deadline(), Some(60));
    // While Ann decides, she kicks Dee: nobody is eliminated during mulligans.
    let effects = sim.request(5, conn(ann), kick(dee, false)).unwrap();
    assert_eq!(
        effects,
        [
            Effect::RemoveSeat { player: dee },
            Effect::Events {
                first_seq: sim.session.seq(),
                events: vec![Event::PlayerKicked {
                    player: dee,
                    banned: false
                }]
            },
            kicked_close(dee, false),
        ]
    );
    assert_eq!(sim.session.table().facts().kicked_in_mulligan, [dee]);
    assert_eq!(sim.deadline(), Some(60), "Ann's decision is still hers");
    assert_eq!(
        sim.ok(6, conn(ann), keep()),
        [kept(ann, 7, KeepReason::Decided)]
    );
    // She kicks Ben, whose decision is due: he keeps at once, by ruling.
    let effects = sim.request(7, conn(ann), kick(ben, false)).unwrap();
    assert_eq!(
        others(&effects),
        [Effect::RemoveSeat { player: ben }, kicked_close(ben, false)]
    );
    assert_eq!(
        events(&effects),
        [
            Event::PlayerKicked {
                player: ben,
                banned: false
            },
            kept(ben, 7, KeepReason::Ruling)
        ]
    );
    // Cal's decision came up at 7.
    assert_eq!(sim.session.table().mulligan_decider(), Some(cal));
    assert_eq!(sim.deadline(), Some(67));
    // Cal keeps; Dee's decision comes up and is taken at once.
    assert_eq!(
        sim.ok(8, conn(cal), keep()),
        [
            kept(cal, 7, KeepReason::Decided),
            kept(dee, 7, KeepReason::Ruling)
        ]
    );
    assert_eq!(sim.session.table().mulligan_decider(), Some(eve));
    assert_eq!(sim.deadline(), Some(68));
    // Eve keeps: play begins, and Ben and Dee are eliminated together.
    assert_eq!(
        sim.ok(9, conn(eve), keep()),
        [
            kept(eve, 7, KeepReason::Decided),
            Event::TurnBegan {
                turn: 0,
                player: ann
            },
            Event::Eliminated {
                players: vec![dee, ben],
                cause: EliminationCause::Ruling
            }
        ]
    );
    assert_eq!(sim.session.table().stage(), Stage::Playing);
    assert_eq!(sim.session.table().living(), 3);
    // Only Ann's own silence while her turn runs: she is the host (section 5).
    assert_eq!(sim.deadline(), Some(9 + 600));
}

#[test]
fn a_decider_kicked_while_the_table_is_paused_keeps_at_once() {
    let mut sim = Sim::new(settings(0, 600, 60), timing(0.0));
    sim.lobby(3);
    sim.start(0, 0);
    sim.ok(1, conn(0), keep());
    let second = sim.session.table().mulligan_decider().unwrap();
    sim.ok(2, conn(0), pause(true));
    let effects = sim.request(3, conn(0), kick(second, false)).unwrap();
    assert_eq!(
        events(&effects),
        [
            Event::PlayerKicked {
                player: second,
                banned: false
            },
            kept(second, 7, KeepReason::Ruling)
        ]
    );
    // The next decision came up during the pause: its clock starts when the pause ends.
    assert_eq!(sim.deadline(), Some(2 + 600));
    sim.ok(20, conn(0), pause(false));
    assert_eq!(sim.deadline(), Some(20 + 60));
}

// ----- 8. Mute and the chat budget -----------------------------------------------------------

#[test]
fn muted_players_and_spectators_cannot_chat() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(3);
    sim.watch(1, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    assert_eq!(
        sim.ok(2, SPECTATOR, chat("  hello all  ")),
        [Event::Chat {
            from: None,
            name: "spectator".into(),
            text: "hello all".into()
        }]
    );
    sim.refused(3, conn(1), mute(Some(2), true), ErrorCode::NotHost);
    sim.refused(3, conn(0), mute(Some(7), true), ErrorCode::UnknownPlayer);
    sim.refused(3, SPECTATOR, mute(Some(2), true), ErrorCode::NotAPlayer);
    assert_eq!(
        sim.ok(4, conn(0), mute(Some(2), true)),
        [Event::PlayerMuted {
            player: Some(2),
            muted: true
        }]
    );
    assert!(sim.session.table().facts().presence(2).muted);
    sim.refused(5, conn(2), chat("let me speak"), ErrorCode::Muted);
    // Others still may.
    sim.ok(5, conn(1), chat("quiet now"));
    assert_eq!(
        sim.ok(6, conn(0), mute(None, true)),
        [Event::PlayerMuted {
            player: None,
            muted: true
        }]
    );
    assert!(sim.session.table().facts().spectators_muted);
    sim.refused(7, SPECTATOR, chat("hello?"), ErrorCode::Muted);
    // Unmuted, they speak again; a mute does not stop the rest of what a player does.
    sim.ok(8, conn(0), mute(Some(2), false));
    sim.ok(8, conn(0), mute(None, false));
    sim.ok(9, conn(2), chat("thanks"));
    sim.ok(9, SPECTATOR, chat("thanks"));
}

#[test]
fn the_tables_chat_budget_refuses_after_the_burst_and_refills_with_time() {
    // 30 lines a minute: a line every 2 s once the burst is spent.
    let mut sim = Sim::new(settings(0, 600, 0), timing(30.0));
    sim.lobby(2);
    sim.watch(0, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    let burst = TABLE_CHAT_BURST as usize;
    assert_eq!(burst, 20);
    // The budget is the table's, shared by all its members.
    for k in 0..burst {
        let from = [conn(0), conn(1), SPECTATOR][k % 3];
        sim.ok(100, from, chat("spam"));
    }
    sim.refused(100, conn(0), chat("one too many"), ErrorCode::RateLimited);
    sim.refused(100, SPECTATOR, chat("me too"), ErrorCode::RateLimited);
    // Half a line a second.
    sim.refused(101, conn(1), chat("now?"), ErrorCode::RateLimited);
    sim.ok(102, conn(1), chat("now"));
    sim.refused(102, conn(1), chat("again"), ErrorCode::RateLimited);
    // A muted member is refused as muted, whatever the budget.
    sim.ok(104, conn(0), mute(Some(1), true));
    sim.refused(105, conn(1), chat("x"), ErrorCode::Muted);
    // 40 s later the whole burst is back, and no more.
    for _ in 0..burst {
        sim.ok(144, conn(0), chat("again"));
    }
    sim.refused(144, conn(0), chat("over"), ErrorCode::RateLimited);
}

#[test]
fn without_a_chat_budget_chat_is_never_rate_limited_and_bad_lines_are_refused() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(2);
    for _ in 0..200 {
        sim.ok(1, conn(1), chat("hi"));
    }
    sim.refused(2, conn(1), chat("   "), ErrorCode::ChatTooLong);
    sim.refused(2, conn(1), chat(&"x".repeat(501)), ErrorCode::ChatTooLong);
    sim.refused(2, conn(1), chat("bell\u{7}"), ErrorCode::BadText);
    sim.ok(2, conn(1), chat(&"x".repeat(500)));
}

// ----- 9. Lobby seats ------------------------------------------------------------------------

#[test]
fn a_lobby_seat_is_given_up_after_the_grace_period_and_the_host_role_moves_on() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(4);
    // The host drops at 5, player 1 at 8.
    sim.gone(5, conn(0));
    sim.gone(8, conn(1));
    assert_eq!(sim.deadline(), Some(5 + GRACE));
    sim.quiet(5 + GRACE - 1);
    let (close, effects) = sim.timeout(5 + GRACE);
    assert!(!close);
    // The next seat in join order takes the role on, connected or not.
    assert_eq!(
        effects,
        [
            Effect::RemoveSeat { player: 0 },
            Effect::Events {
                first_seq: sim.session.seq() - 1,
                events: vec![
                    Event::PlayerLeft { player: 0 },
                    Event::HostChanged { player: Some(1) }
                ]
            }
        ]
    );
    assert_eq!(sim.deadline(), Some(8 + GRACE));
    sim.quiet(8 + GRACE - 1);
    let (close, effects) = sim.timeout(8 + GRACE);
    assert!(!close);
    assert_eq!(
        effects,
        [
            Effect::RemoveSeat { player: 1 },
            Effect::Events {
                first_seq: sim.session.seq() - 1,
                events: vec![
                    Event::PlayerLeft { player: 1 },
                    Event::HostChanged { player: Some(2) }
                ]
            }
        ]
    );
    assert_eq!(sim.deadline(), None);
    assert_eq!(sim.session.seated(), 2);
    assert_eq!(
        sim.resume(50, 500, peer(0), token(0)).map(|(p, _)| p),
        Err(ErrorCode::BadToken)
    );
    // Back within the grace period: the seat is kept.
    sim.gone(60, conn(3));
    let (player, effects) = sim
        .resume(60 + GRACE - 1, conn(3), peer(3), token(3))
        .unwrap();
    assert_eq!(player, 3);
    assert_eq!(events(&effects), [connection_changed(3, true)]);
    assert_eq!(sim.deadline(), None);
    sim.quiet(60 + GRACE);
    // Leaving on purpose gives the seat up at once.
    let effects = sim.leave(100, conn(2));
    assert_eq!(others(&effects), [Effect::RemoveSeat { player: 2 }]);
    assert_eq!(
        events(&effects),
        [
            Event::PlayerLeft { player: 2 },
            Event::HostChanged { player: Some(3) }
        ]
    );
}

#[test]
fn a_lobby_seat_is_given_up_while_the_table_is_paused() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(3);
    sim.gone(0, conn(2));
    sim.ok(5, conn(0), pause(true));
    assert_eq!(sim.deadline(), Some(GRACE));
    let (_, effects) = sim.timeout(GRACE);
    assert_eq!(others(&effects), [Effect::RemoveSeat { player: 2 }]);
    assert_eq!(events(&effects), [Event::PlayerLeft { player: 2 }]);
    assert!(sim.session.paused());
}

/// PROTOCOL.md: while the table is paused "a lobby seat is still given up": the lobby's grace
/// period runs through a pause, whether the pause ends before the seat's deadline or after.
/// (Once broken: unpausing shifted the seat's drop time by the pause's length, so a shorter
/// pause gave the player more time than a longer one.)
#[test]
fn a_pause_that_ended_does_not_delay_the_giving_up_of_a_lobby_seat() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(3);
    sim.gone(0, conn(2));
    sim.ok(5, conn(0), pause(true));
    sim.ok(15, conn(0), pause(false));
    assert_eq!(sim.deadline(), Some(GRACE));
    let (_, effects) = sim.timeout(GRACE);
    assert_eq!(others(&effects), [Effect::RemoveSeat { player: 2 }]);
    assert_eq!(events(&effects), [Event::PlayerLeft { player: 2 }]);
}

// ----- 10. Empty tables ----------------------------------------------------------------------

#[test]
fn a_table_nobody_ever_sat_at_closes_after_the_unjoined_time() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    assert!(sim.session.nothing_to_keep());
    assert_eq!(sim.deadline(), Some(UNJOINED));
    assert!(!sim.session.handle_timeout(sim.at(0)));
    assert!(!sim.session.handle_timeout(sim.at(UNJOINED - 1)));
    assert!(sim.session.handle_timeout(sim.at(UNJOINED)));
    assert!(sim.session.handle_timeout(sim.at(UNJOINED + 1)));
    assert_eq!(sim.drain(), []);

    // A spectator keeps it open; the count starts again when he goes.
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.watch(10, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    assert_eq!(sim.deadline(), None);
    assert!(!sim.session.handle_timeout(sim.at(UNJOINED)));
    assert_eq!(
        events(&sim.gone(20, SPECTATOR)),
        [Event::SpectatorsChanged { spectators: 0 }]
    );
    assert_eq!(sim.deadline(), Some(20 + UNJOINED));
    assert!(!sim.session.handle_timeout(sim.at(20 + UNJOINED - 1)));
    assert!(sim.session.handle_timeout(sim.at(20 + UNJOINED)));

    // Someone sat down and left again: an empty lobby closes after the grace period.
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(1);
    sim.leave(10, conn(0));
    assert!(sim.session.nothing_to_keep());
    assert_eq!(sim.deadline(), Some(10 + GRACE));
    assert!(!sim.session.handle_timeout(sim.at(10 + GRACE - 1)));
    assert!(sim.session.handle_timeout(sim.at(10 + GRACE)));
}

#[test]
fn a_lobby_whose_players_all_stay_away_closes_as_their_last_seat_is_given_up() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(2);
    sim.gone(5, conn(0));
    sim.gone(8, conn(1));
    let (close, _) = sim.timeout(5 + GRACE);
    assert!(!close);
    assert_eq!(sim.deadline(), Some(8 + GRACE));
    let (close, effects) = sim.timeout(8 + GRACE);
    assert!(close);
    assert_eq!(
        events(&effects),
        [
            Event::PlayerLeft { player: 1 },
            Event::HostChanged { player: None }
        ]
    );
}

#[test]
fn a_finished_game_closes_a_grace_period_after_the_last_member_left() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(2, 0, 10);
    let effects = sim.request(20, conn(1), concede()).unwrap();
    assert_eq!(others(&effects), [Effect::Finished]);
    assert_eq!(sim.session.table().stage(), Stage::Finished);
    assert_eq!(sim.deadline(), None, "everyone is still here");
    sim.gone(30, conn(1));
    assert_eq!(sim.deadline(), None);
    sim.gone(40, conn(0));
    assert_eq!(sim.deadline(), Some(40 + GRACE));
    // A spectator drops in and out: the count starts again.
    sim.watch(50, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    assert_eq!(sim.deadline(), None);
    sim.quiet(40 + GRACE);
    sim.leave(80, SPECTATOR);
    assert_eq!(sim.deadline(), Some(80 + GRACE));
    assert!(!sim.session.handle_timeout(sim.at(80 + GRACE - 1)));
    assert!(sim.session.handle_timeout(sim.at(80 + GRACE)));
    assert_eq!(sim.drain(), []);
}

#[test]
fn a_game_in_play_does_not_close_while_its_players_are_away_and_ends_after_the_absence_limit() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(2, 0, 10);
    sim.gone(20, conn(0));
    sim.gone(20, conn(1));
    // Nobody connected: no hand-over. The running turn is skipped a grace period after it
    // begins, again and again, and the table does not close: they may come back.
    let mut holder = 0;
    for now in (20 + GRACE..620).step_by(30) {
        assert_eq!(sim.deadline(), Some(now));
        let (close, effects) = sim.timeout(now);
        assert!(!close);
        let expected = sim.passes_on(holder, TurnEndReason::Absent);
        assert_eq!(events(&effects), expected, "at {now}");
        holder = sim.left_of(holder);
    }
    assert_eq!(sim.session.table().stage(), Stage::Playing);
    // Both have been away for the absence limit at 20 + 600: the game ends as it stands (no
    // more skips, no absence announcements) and the empty table closes.
    assert_eq!(sim.deadline(), Some(620));
    let (close, effects) = sim.timeout(620);
    assert!(close);
    assert_eq!(others(&effects), [Effect::Finished]);
    let events = events(&effects);
    assert_eq!(events.first(), Some(&Event::GameAbandoned), "{events:?}");
    assert!(
        matches!(&events[1], Event::GameOver { standings }
            if standings.iter().all(|s| s.place == 1 && s.mana_points == 0)),
        "{events:?}"
    );
    assert!(matches!(events[2], Event::DiceRevealed { .. }));
    assert_eq!(events.len(), 3);
    assert_eq!(sim.session.table().stage(), Stage::Finished);
    assert!(!sim.session.nothing_to_keep(), "kept as a replay");
}

// ----- 11. Resume ----------------------------------------------------------------------------

#[test]
fn resuming_from_a_new_connection_closes_the_old_one_and_a_bad_token_changes_nothing() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(2);
    assert_eq!(
        sim.resume(1, 70, address(9, 9, 9, 9), SeatToken::nil())
            .map(|(p, _)| p),
        Err(ErrorCode::BadToken)
    );
    assert_eq!(sim.session.role(70), None);
    // The same seat from a second connection, the first still connected.
    let (player, effects) = sim.resume(2, 70, address(9, 9, 9, 9), token(1)).unwrap();
    assert_eq!(player, 1);
    assert_eq!(
        effects,
        [Effect::Close {
            connection: conn(1),
            code: close::NORMAL,
            reason: "your seat was taken over by a newer connection",
        }]
    );
    assert_eq!(sim.session.role(70), Some(Role::Player(1)));
    assert_eq!(sim.session.role(conn(1)), None);
    assert!(sim.session.table().facts().presence(1).connected);
    // The old connection going away (the driver closing it) does not unseat the new one.
    assert_eq!(sim.gone(3, conn(1)), []);
    assert!(sim.session.table().facts().presence(1).connected);
    assert_eq!(sim.deadline(), None);
    sim.refused(4, conn(1), chat("old"), ErrorCode::NotInTable);
    sim.ok(4, 70, chat("new"));
}

// ----- 12. Recovery --------------------------------------------------------------------------

#[test]
fn recovery_folds_the_journal_into_the_same_table_and_numbers_on() {
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(4, 1, 10);
    sim.watch(11, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    sim.gone(12, conn(3));
    sim.ok(13, conn(0), mute(Some(2), true));
    sim.ok(14, conn(1), set_phase(Phase::PrecombatMain));
    sim.ok(15, conn(0), chat("before the restart"));
    let live = sim.session.clone();

    let journal: Vec<(u64, Event)> = (1..).zip(sim.published.iter().cloned()).collect();
    let seats: Vec<(PlayerId, SeatToken)> = (0..4).map(|p| (p, token(p))).collect();
    let banned = vec![address(6, 6, 6, 6)];
    let restart = sim.at(500);
    let recovered = Session::recover(
        live.settings().clone(),
        DiceSecret::from_seed(SEED),
        timing(0.0),
        journal.clone(),
        &seats,
        banned,
        restart,
    )
    .unwrap();
    let mut sim = Sim {
        session: recovered,
        t0: sim.t0,
        config: sim.config.clone(),
        published: sim.published.clone(),
    };
    // The first effects: who was connected is announced disconnected, the spectators are gone.
    let effects = sim.drain();
    assert_eq!(
        effects,
        [Effect::Events {
            first_seq: live.seq() + 1,
            events: vec![
                connection_changed(0, false),
                connection_changed(1, false),
                connection_changed(2, false),
                Event::SpectatorsChanged { spectators: 0 },
            ]
        }]
    );
    // The same table, apart from presence.
    let id = TableId::from_u128(77);
    let mut expected = live.view(id, "Table");
    for player in &mut expected.players {
        player.connected = false;
    }
    expected.spectators = 0;
    expected.seq = live.seq() + 4;
    assert_eq!(sim.session.view(id, "Table"), expected);
    assert_eq!(sim.session.seated(), 4);
    assert_eq!(sim.session.spectators(), 0);
    assert!(sim.session.table().facts().presence(2).muted);
    assert!(sim.session.is_banned(address(6, 6, 6, 6)));
    // Everyone counts as away since the restart: the running turn (began 10, clock 60) is
    // counted from the restart and skipped a grace period later, unless its player is back.
    assert_eq!(sim.deadline(), Some(500 + GRACE));
    let (player, effects) = sim.resume(505, 1000, peer(0), token(0)).unwrap();
    assert_eq!(player, 0);
    assert_eq!(
        effects,
        [Effect::Events {
            first_seq: live.seq() + 5,
            events: vec![connection_changed(0, true)]
        }]
    );
    sim.resume(506, 1001, peer(1), token(1)).unwrap();
    assert_eq!(sim.deadline(), Some(560));
    let expected = sim.passes_on(1, TurnEndReason::Clock);
    assert_eq!(sim.expire(560), expected);
    // Mutes, bans and the host survive.
    sim.resume(561, 1002, peer(2), token(2)).unwrap();
    sim.refused(562, 1002, chat("hi"), ErrorCode::Muted);
    assert_eq!(
        sim.watch(562, 1003, address(6, 6, 6, 6)),
        Err(ErrorCode::Banned)
    );
    sim.ok(563, 1000, pause(true));

    // A journal with a gap is refused.
    let gap = journal.iter().skip(1).cloned();
    assert!(
        Session::<Table>::recover(
            live.settings().clone(),
            DiceSecret::from_seed(SEED),
            timing(0.0),
            gap,
            &seats,
            vec![],
            restart
        )
        .is_err()
    );
}

#[test]
fn a_recovered_paused_table_in_its_mulligans_counts_every_timer_from_the_restart() {
    let mut sim = Sim::new(settings(0, 200, 60), timing(0.0));
    sim.lobby(3);
    sim.start(0, 0);
    sim.ok(5, conn(0), pause(true));
    let journal: Vec<(u64, Event)> = (1..).zip(sim.published.iter().cloned()).collect();
    let seats: Vec<(PlayerId, SeatToken)> = (0..3).map(|p| (p, token(p))).collect();
    let settings = sim.session.settings().clone();
    let recovered = Session::recover(
        settings,
        DiceSecret::from_seed(SEED),
        timing(0.0),
        journal,
        &seats,
        vec![],
        sim.at(1_000),
    )
    .unwrap();
    let mut sim = Sim {
        session: recovered,
        ..sim
    };
    assert_eq!(
        events(&sim.drain()),
        [
            connection_changed(0, false),
            connection_changed(1, false),
            connection_changed(2, false),
        ]
    );
    assert!(sim.session.paused());
    // The pause ends 200 s after the restart; then the decider, away since the restart (the
    // pause shifted out), keeps after the grace period, before his clock.
    assert_eq!(sim.deadline(), Some(1_200));
    sim.quiet(1_199);
    assert_eq!(sim.expire(1_200), [Event::TablePaused { paused: false }]);
    assert_eq!(sim.deadline(), Some(1_200 + GRACE));
    assert_eq!(sim.expire(1_200 + GRACE), [kept(0, 7, KeepReason::Absent)]);
}

// ----- 13. Refusals --------------------------------------------------------------------------

#[test]
fn every_refused_request_changes_nothing_and_decides_nothing() {
    let mut sim = Sim::new(
        Settings {
            max_spectators: 1,
            ..settings(60, 100, 0)
        },
        timing(60.0),
    );
    sim.play(4, 1, 10);
    sim.watch(11, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    sim.ok(12, conn(0), mute(Some(3), true));
    sim.gone(13, conn(2));
    // Player 1 takes turn 0; player 3 (muted) takes none.
    let other = 3;
    let cases: Vec<(ConnectionId, ClientMessage, ErrorCode)> = vec![
        // Not a member, not a player.
        (999, chat("hi"), ErrorCode::NotInTable),
        (999, end_turn(), ErrorCode::NotInTable),
        (SPECTATOR, end_turn(), ErrorCode::NotAPlayer),
        (SPECTATOR, pause(true), ErrorCode::NotAPlayer),
        // The wrong actor.
        (conn(other), end_turn(), ErrorCode::NotYourTurn),
        (
            conn(other),
            set_phase(Phase::Combat),
            ErrorCode::NotYourTurn,
        ),
        (conn(1), keep(), ErrorCode::NotMulliganing),
        (conn(1), set_phase(Phase::Beginning), ErrorCode::SamePhase),
        (
            conn(1),
            ClientMessage::Attack {
                id: 1,
                target: other,
                damage: 3,
                poison: 0,
            },
            ErrorCode::NotCombatPhase,
        ),
        (
            conn(1),
            ClientMessage::ChangeLife { id: 1, delta: 0 },
            ErrorCode::BadAmount,
        ),
        // Host only.
        (conn(1), start(1), ErrorCode::NotHost),
        (
            conn(1),
            ruling(Ruling::EndTurn { player: 1 }),
            ErrorCode::NotHost,
        ),
        (conn(1), pause(true), ErrorCode::NotHost),
        (conn(1), kick(0, false), ErrorCode::NotHost),
        (conn(1), mute(None, true), ErrorCode::NotHost),
        (conn(1), transfer_host(1), ErrorCode::NotHost),
        // Unknown players.
        (conn(0), kick(9, true), ErrorCode::UnknownPlayer),
        (conn(0), mute(Some(9), true), ErrorCode::UnknownPlayer),
        (conn(0), transfer_host(9), ErrorCode::UnknownPlayer),
        (
            conn(0),
            ruling(Ruling::SetLife { player: 9, life: 1 }),
            ErrorCode::UnknownPlayer,
        ),
        (conn(0), start(0), ErrorCode::GameStarted),
        // Chat.
        (conn(3), chat("hush"), ErrorCode::Muted),
        (conn(1), chat(""), ErrorCode::ChatTooLong),
        // Not a table request at all.
        (
            conn(1),
            ClientMessage::ListTables {
                id: 1,
                from: 0,
                limit: 10,
            },
            ErrorCode::BadMessage,
        ),
    ];
    for (connection, request, code) in cases.iter().cloned() {
        sim.refused(20, connection, request, code);
    }
    // Joining, watching and resuming.
    assert_eq!(
        sim.join_from(20, 500, address(1, 2, 3, 4), "Zed", SeatToken::from_u128(1))
            .map(|(p, _)| p),
        Err(ErrorCode::GameStarted)
    );
    assert_eq!(
        sim.watch(20, 501, address(1, 2, 3, 4)),
        Err(ErrorCode::SpectatorsFull)
    );
    assert_eq!(
        sim.resume(20, 502, address(1, 2, 3, 4), SeatToken::from_u128(1))
            .map(|(p, _)| p),
        Err(ErrorCode::BadToken)
    );
    // Paused: every game request, whoever sends it, whatever it asks.
    sim.ok(21, conn(0), pause(true));
    for (connection, request) in [
        (conn(1), end_turn()),
        (conn(other), end_turn()),
        (conn(1), set_phase(Phase::Combat)),
        (conn(1), concede()),
        (conn(0), ruling(Ruling::EndTurn { player: 1 })),
        (conn(0), ruling(Ruling::SetLife { player: 9, life: 1 })),
    ] {
        sim.refused(22, connection, request, ErrorCode::TablePaused);
    }
    // The same refusals again while paused (the host's own ones aside).
    for (connection, request, code) in cases {
        let game = request.command().is_some()
            && !matches!(
                code,
                ErrorCode::NotInTable | ErrorCode::NotAPlayer | ErrorCode::NotHost
            );
        let code = if game { ErrorCode::TablePaused } else { code };
        sim.refused(23, connection, request, code);
    }
    // A table in the lobby: the rules core's refusals.
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(1);
    sim.refused(1, conn(0), start(0), ErrorCode::NotEnoughPlayers);
    sim.refused(1, conn(0), keep(), ErrorCode::NotMulliganing);
    sim.refused(1, conn(0), end_turn(), ErrorCode::NotPlaying);
    assert_eq!(
        sim.join_from(1, 500, address(1, 2, 3, 4), "ann", SeatToken::from_u128(1))
            .map(|(p, _)| p),
        Err(ErrorCode::NameTaken)
    );
    assert_eq!(
        sim.join_from(1, 500, address(1, 2, 3, 4), "", SeatToken::from_u128(1))
            .map(|(p, _)| p),
        Err(ErrorCode::BadName)
    );
}

// ----- Seating and calling the host ----------------------------------------------------------

fn start_seated(seating: grand_melee_protocol::SeatingMode, order: Vec<PlayerId>) -> ClientMessage {
    ClientMessage::Start {
        id: 0,
        first_player: None,
        seating,
        order,
    }
}

fn call_host(reason: &str) -> ClientMessage {
    ClientMessage::CallHost {
        id: 0,
        reason: reason.to_owned(),
    }
}

fn answer_call(player: Option<PlayerId>) -> ClientMessage {
    ClientMessage::AnswerCall { id: 0, player }
}

#[test]
fn the_host_seats_the_table_by_the_dice_in_join_order_or_as_he_arranged() {
    use grand_melee_protocol::SeatingMode::{Arranged, Joined, Random};
    let started = |seating, order: Vec<PlayerId>| {
        let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
        sim.lobby(5);
        let events = sim.ok(1, conn(0), start_seated(seating, order));
        let [
            Event::GameStarted {
                seating: ring,
                seating_mode,
                ..
            },
        ] = events.as_slice()
        else {
            panic!("{events:?}");
        };
        assert_eq!(*seating_mode, seating);
        assert_eq!(sim.seating(), *ring);
        let view = sim.session.view(TableId::nil(), "t");
        assert_eq!(view.seating_mode, Some(seating));
        assert_eq!(view.ring, *ring);
        // The whole game so far verifies: the dice's part of it at least.
        ring.clone()
    };
    assert_eq!(started(Joined, Vec::new()), [0, 1, 2, 3, 4]);
    assert_eq!(started(Arranged, vec![3, 1, 4, 0, 2]), [3, 1, 4, 0, 2]);
    let random = started(Random, Vec::new());
    let mut sorted = random.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [0, 1, 2, 3, 4]);
    // The random seating is the dice's: the same as `start` without a seating.
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(5);
    sim.ok(
        1,
        conn(0),
        ClientMessage::Start {
            id: 0,
            first_player: None,
            seating: Random,
            order: Vec::new(),
        },
    );
    assert_eq!(sim.seating(), random);
    assert_eq!(
        sim.session.view(TableId::nil(), "t").seating_mode,
        Some(Random)
    );
}

#[test]
fn a_seating_that_does_not_fit_is_refused_and_changes_nothing() {
    use grand_melee_protocol::SeatingMode::{Arranged, Joined, Random};
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(4);
    for (seating, order) in [
        (Arranged, vec![0, 1, 2]),       // a player missing
        (Arranged, vec![0, 1, 2, 2]),    // a player twice
        (Arranged, vec![0, 1, 2, 7]),    // nobody seated has id 7
        (Arranged, vec![0, 1, 2, 3, 3]), // too many
        (Arranged, Vec::new()),          // arranged, but no order
        (Random, vec![0, 1, 2, 3]),      // an order without arranged
        (Joined, vec![0, 1, 2, 3]),
    ] {
        sim.refused(
            1,
            conn(0),
            start_seated(seating, order),
            ErrorCode::BadSeating,
        );
    }
    // Only the host arranges.
    sim.refused(
        1,
        conn(1),
        start_seated(Arranged, vec![3, 2, 1, 0]),
        ErrorCode::NotHost,
    );
    assert_eq!(sim.session.table().stage(), Stage::Lobby);
    assert_eq!(sim.session.view(TableId::nil(), "t").seating_mode, None);
    sim.ok(2, conn(0), start_seated(Arranged, vec![3, 2, 1, 0]));
    assert_eq!(sim.seating(), [3, 2, 1, 0]);
}

#[test]
fn a_call_reaches_the_host_is_rate_limited_and_a_ruling_or_an_answer_closes_it() {
    use grand_melee_protocol::HostCall;
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(4, 0, 1);
    sim.watch(2, SPECTATOR, address(10, 9, 9, 9)).unwrap();
    let call = |player: PlayerId, reason: &str| HostCall {
        player,
        reason: reason.to_owned(),
    };
    assert_eq!(
        sim.ok(10, conn(2), call_host("  is Wrath resolved?  ")),
        [Event::HostCalled {
            player: 2,
            reason: "is Wrath resolved?".into()
        }]
    );
    let calls = |sim: &Sim| sim.session.view(TableId::nil(), "t").calls;
    assert_eq!(calls(&sim), [call(2, "is Wrath resolved?")]);
    // Once per 30 seconds per player; others may call meanwhile.
    sim.refused(39, conn(2), call_host("again"), ErrorCode::RateLimited);
    sim.ok(39, conn(1), call_host("a question"));
    sim.ok(40, conn(2), call_host("still waiting"));
    // His new call replaces his open one.
    assert_eq!(
        calls(&sim),
        [call(1, "a question"), call(2, "still waiting")]
    );
    // Spectators may not call; bad lines are refused.
    sim.refused(41, SPECTATOR, call_host("hi"), ErrorCode::NotAPlayer);
    sim.refused(41, conn(3), call_host("   "), ErrorCode::ChatTooLong);
    sim.refused(
        41,
        conn(3),
        call_host(&"x".repeat(121)),
        ErrorCode::ChatTooLong,
    );
    sim.refused(41, conn(3), call_host("a\nb"), ErrorCode::BadText);
    sim.ok(41, conn(3), call_host(&"x".repeat(120)));
    // Only the host answers, and only an open call.
    sim.refused(42, conn(1), answer_call(Some(1)), ErrorCode::NotHost);
    assert_eq!(
        sim.ok(42, conn(0), answer_call(Some(1))),
        [Event::HostAnswered { player: Some(1) }]
    );
    // (The host's refused requests come right after an accepted one: any request of his
    // shows he is there, which the harness would see as a moved timer.)
    sim.refused(42, conn(0), answer_call(Some(1)), ErrorCode::NoOpenCall);
    assert_eq!(calls(&sim).len(), 2);
    // A ruling answers every open call, after its own events.
    let events = sim.ok(
        43,
        conn(0),
        ruling(Ruling::SetLife {
            player: 2,
            life: 18,
        }),
    );
    assert_eq!(
        events.last(),
        Some(&Event::HostAnswered { player: None }),
        "{events:?}"
    );
    assert!(calls(&sim).is_empty());
    sim.refused(43, conn(0), answer_call(None), ErrorCode::NoOpenCall);
    // A ruling with no open call adds nothing.
    let events = sim.ok(
        44,
        conn(0),
        ruling(Ruling::SetLife {
            player: 2,
            life: 17,
        }),
    );
    assert!(!events.contains(&Event::HostAnswered { player: None }));
    // An eliminated player may still call (a dispute about his elimination).
    sim.ok(45, conn(0), ruling(Ruling::Eliminate { players: vec![3] }));
    sim.ok(80, conn(3), call_host("I was not dead"));
    assert_eq!(calls(&sim), [call(3, "I was not dead")]);
    // A snapshot's mirror shows the calls too.
    let view = sim.session.view(TableId::nil(), "t");
    assert_eq!(
        Table::from_view(&view)
            .unwrap()
            .view(TableId::nil(), "t", view.seq, &view.settings),
        view
    );
}

// ----- Adjourning ----------------------------------------------------------------------------

fn adjourn() -> ClientMessage {
    ClientMessage::Adjourn { id: 13 }
}

fn resume_game() -> ClientMessage {
    ClientMessage::ResumeGame { id: 14 }
}

/// PROTOCOL.md ("Adjourning"): every clock stands still (without a limit when the server sets
/// no expiry) — no turn clock, no absence, no abandoned game, no hand-over of the host role while
/// nobody is there to take it — and the game goes on where it stopped when the host resumes it.
#[test]
fn an_adjourned_game_waits_for_everyone_without_a_limit_and_resumes_where_it_stopped() {
    // Absence limit = grace: without the adjournment, the game everyone leaves is abandoned
    // 30 s after the last of them drops.
    let mut sim = Sim::new(settings(60, 30, 0), timing(0.0));
    sim.play(4, 1, 10);
    // Player 2 drops before: announced absent at 15 + 30 if nothing stops the clock.
    sim.gone(15, conn(2));
    sim.refused(16, conn(1), adjourn(), ErrorCode::NotHost);
    sim.refused(16, conn(1), resume_game(), ErrorCode::NotAdjourned);
    assert_eq!(
        sim.ok(20, conn(0), adjourn()),
        [Event::TableAdjourned { adjourned: true }]
    );
    assert!(sim.session.adjourned() && sim.session.table().facts().adjourned);
    assert_eq!(sim.deadline(), None, "nothing counts while adjourned");
    // The game stands still: game requests, pause and kick wait; chat does not.
    sim.refused(21, conn(1), end_turn(), ErrorCode::TableAdjourned);
    sim.refused(21, conn(3), concede(), ErrorCode::TableAdjourned);
    sim.refused(
        21,
        conn(0),
        ruling(Ruling::EndTurn { player: 1 }),
        ErrorCode::TableAdjourned,
    );
    sim.refused(21, conn(0), pause(true), ErrorCode::TableAdjourned);
    sim.refused(21, conn(0), kick(3, false), ErrorCode::TableAdjourned);
    sim.refused(21, conn(0), adjourn(), ErrorCode::TableAdjourned);
    sim.ok(22, conn(3), chat("see you tomorrow"));
    // Everyone leaves; nobody is announced absent, nobody's turn is skipped, the host keeps the
    // role and the game is not abandoned, however long they stay away.
    sim.leave(23, conn(0));
    sim.gone(23, conn(1));
    sim.leave(24, conn(3));
    assert_eq!(sim.deadline(), None);
    sim.quiet(100);
    sim.quiet(3 * 24 * 3600);
    assert_eq!(sim.session.table().facts().host, Some(0));
    assert_eq!(sim.session.table().stage(), Stage::Playing);
    // Days later: players 1 and 0 come back, and the host resumes the game.
    let back = 3 * 24 * 3600 + 1;
    sim.resume(back, conn(1), peer(1), token(1)).unwrap();
    sim.resume(back, conn(0), peer(0), token(0)).unwrap();
    assert_eq!(sim.deadline(), None);
    assert_eq!(
        sim.ok(back, conn(0), resume_game()),
        [Event::TableAdjourned { adjourned: false }]
    );
    assert!(!sim.session.adjourned());
    assert_eq!(sim.running(), [(0, 1)]);
    // The turn had 50 s left; player 2's absence limit had 25 s, player 3 (gone during the
    // adjournment) has the whole limit from now.
    assert_eq!(sim.deadline(), Some(back + 25));
    assert_eq!(sim.expire(back + 25), [Event::PlayerAbsent { player: 2 }]);
    assert_eq!(sim.deadline(), Some(back + 30));
    assert_eq!(sim.expire(back + 30), [Event::PlayerAbsent { player: 3 }]);
    assert_eq!(sim.deadline(), Some(back + 50));
    assert_eq!(
        sim.expire(back + 50),
        sim.passes_on(1, TurnEndReason::Clock)
    );
}

/// PROTOCOL.md ("Adjourning"): a host who does not come back does not keep the game adjourned:
/// a majority of the players still in the game (the asker counted) resumes it, each ask counted
/// once; an eliminated player does not ask. (Within the grace period: after it the host role
/// passes on, see the next test.)
#[test]
fn a_quorum_of_the_players_still_in_the_game_resumes_it_without_the_host() {
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(5, 1, 10);
    // Player 4 concedes: 4 players left, quorum 3.
    sim.ok(12, conn(4), concede());
    assert_eq!(sim.session.table().living(), 4);
    sim.ok(20, conn(0), adjourn());
    sim.gone(21, conn(0));
    assert_eq!(
        sim.deadline(),
        Some(21 + GRACE),
        "the absent host keeps the role for the grace period"
    );
    assert_eq!(
        sim.ok(22, conn(1), resume_game()),
        [Event::ResumeRequested { player: 1 }]
    );
    sim.refused(23, conn(1), resume_game(), ErrorCode::AlreadyAsked);
    sim.refused(23, conn(4), resume_game(), ErrorCode::Eliminated);
    assert_eq!(
        sim.ok(24, conn(2), resume_game()),
        [Event::ResumeRequested { player: 2 }]
    );
    assert_eq!(sim.session.table().facts().resume_asks, [1, 2]);
    assert!(sim.session.adjourned());
    assert_eq!(sim.deadline(), Some(21 + GRACE));
    // The third ask makes the quorum: the game resumes in the same batch.
    assert_eq!(
        sim.ok(25, conn(3), resume_game()),
        [
            Event::ResumeRequested { player: 3 },
            Event::TableAdjourned { adjourned: false }
        ]
    );
    assert!(!sim.session.adjourned());
    assert!(sim.session.table().facts().resume_asks.is_empty());
    sim.refused(26, conn(3), resume_game(), ErrorCode::NotAdjourned);
    // Play goes on: the absent host hands the role on a grace period after he left.
    assert_eq!(sim.deadline(), Some(21 + GRACE));
    assert_eq!(
        sim.expire(21 + GRACE),
        [Event::HostChanged { player: Some(1) }]
    );
    // The turn clock had 50 s left at 20: it runs out at 25 + 50.
    assert_eq!(sim.deadline(), Some(75));
}

#[test]
fn only_a_game_in_progress_is_adjourned_and_adjourning_ends_a_pause() {
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.lobby(3);
    sim.refused(1, conn(0), adjourn(), ErrorCode::NotPlaying);
    sim.start(2, 1);
    // During mulligans: the mulligan clock stops too.
    sim.ok(3, conn(0), adjourn());
    sim.refused(4, conn(1), keep(), ErrorCode::TableAdjourned);
    assert_eq!(sim.deadline(), None);
    sim.ok(5, conn(0), resume_game());
    // Paused at 15, adjourned at 20: neither counts, and the pause is over.
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(3, 1, 10);
    sim.ok(15, conn(0), pause(true));
    assert_eq!(
        sim.ok(20, conn(0), adjourn()),
        [Event::TableAdjourned { adjourned: true }]
    );
    assert!(!sim.session.paused() && !sim.session.table().facts().paused);
    assert_eq!(sim.deadline(), None);
    sim.refused(21, conn(0), pause(false), ErrorCode::TableAdjourned);
    sim.ok(50, conn(0), resume_game());
    assert!(!sim.session.paused());
    // 5 s of the turn clock had run: 55 s left from 50.
    assert_eq!(sim.deadline(), Some(105));
}

/// An adjourned game stays adjourned across a restart: the fold says so, and no clock starts.
#[test]
fn an_adjourned_game_is_still_adjourned_after_a_restart() {
    let mut sim = Sim::new(settings(60, 30, 0), timing(0.0));
    sim.play(3, 1, 10);
    sim.ok(20, conn(0), adjourn());
    sim.ok(21, conn(2), resume_game());
    let journal: Vec<(u64, Event)> = (1..).zip(sim.published.iter().cloned()).collect();
    let seats: Vec<(PlayerId, SeatToken)> = (0..3).map(|p| (p, token(p))).collect();
    let recovered = Session::recover(
        sim.session.settings().clone(),
        DiceSecret::from_seed(SEED),
        timing(0.0),
        journal,
        &seats,
        Vec::new(),
        sim.at(10_000),
    )
    .unwrap();
    let mut sim = Sim {
        session: recovered,
        t0: sim.t0,
        config: sim.config.clone(),
        published: sim.published.clone(),
    };
    sim.drain();
    assert!(sim.session.adjourned());
    assert_eq!(sim.session.table().facts().resume_asks, [2]);
    assert_eq!(sim.deadline(), None);
    sim.quiet(1_000_000);
    // The asks survived the restart: player 1's ask makes the quorum of 2.
    sim.resume(1_000_001, conn(1), peer(1), token(1)).unwrap();
    assert_eq!(
        sim.ok(1_000_002, conn(1), resume_game()),
        [
            Event::ResumeRequested { player: 1 },
            Event::TableAdjourned { adjourned: false }
        ]
    );
}

/// The server's timing with an adjournment expiry of `secs` seconds.
fn expiring(secs: u64) -> Timing {
    Timing {
        adjourned_expiry: Some(Duration::from_secs(secs)),
        ..timing(0.0)
    }
}

/// Issue 43, item 2: an adjourned game nobody resumes ends as abandoned once the operator's
/// expiry has passed since its adjournment (the one deadline an adjourned game has); resuming
/// in time forgets it, and a new adjournment counts anew.
#[test]
fn an_adjourned_game_nobody_resumes_ends_abandoned_when_its_adjournment_expires() {
    let mut sim = Sim::new(settings(60, 30, 0), expiring(1000));
    sim.play(3, 1, 10);
    let now = sim.at(20);
    let (_, effects) = sim
        .attempt(|s| s.request(now, conn(0), &adjourn()))
        .unwrap();
    assert_eq!(
        others(&effects),
        [Effect::Adjourned],
        "the driver journals when"
    );
    for p in 0..3 {
        sim.gone(21, conn(p));
    }
    assert_eq!(sim.deadline(), Some(1020));
    sim.quiet(1019);
    let (close, effects) = sim.timeout(1020);
    assert!(
        close,
        "nobody has been there for long: the finished table closes at once"
    );
    let events = events(&effects);
    assert_eq!(
        events[..2],
        [
            Event::TableAdjourned { adjourned: false },
            Event::GameAbandoned
        ],
        "{events:?}"
    );
    assert!(matches!(events[2], Event::GameOver { .. }), "{events:?}");
    assert!(
        others(&effects).contains(&Effect::Finished),
        "kept as a replay"
    );
    assert!(!sim.session.adjourned());
    assert_eq!(sim.session.table().stage(), Stage::Finished);

    // Resumed in time: no expiry; adjourned again (after the interval): counted from then.
    let mut sim = Sim::new(settings(60, 600, 0), expiring(1000));
    sim.play(3, 1, 10);
    sim.ok(20, conn(0), adjourn());
    sim.ok(500, conn(0), resume_game());
    assert_eq!(sim.deadline(), Some(550), "the turn clock: 50 s were left");
    sim.ok(600, conn(0), adjourn());
    assert_eq!(sim.deadline(), Some(1600));
}

/// The expiry of a recovered adjourned game counts from its adjournment, which the driver
/// read back from its journal (`adjourned_for`), not from the restart; without that, from the
/// restart.
#[test]
fn a_restart_does_not_start_an_adjournments_expiry_over() {
    let mut sim = Sim::new(settings(60, 30, 0), expiring(1000));
    sim.play(3, 1, 10);
    sim.ok(20, conn(0), adjourn());
    let journal: Vec<(u64, Event)> = (1..).zip(sim.published.iter().cloned()).collect();
    let seats: Vec<(PlayerId, SeatToken)> = (0..3).map(|p| (p, token(p))).collect();
    let recover = |at: Instant| -> Session {
        Session::recover(
            sim.session.settings().clone(),
            DiceSecret::from_seed(SEED),
            expiring(1000),
            journal.clone(),
            &seats,
            Vec::new(),
            at,
        )
        .unwrap()
    };
    let restart = sim.at(700);
    let mut recovered = recover(restart);
    assert_eq!(
        recovered.poll_timeout(),
        Some(sim.at(1700)),
        "from the restart"
    );
    recovered.adjourned_for(Duration::from_secs(680), restart);
    assert_eq!(recovered.poll_timeout(), Some(sim.at(1020)));
    // Adjourned longer ago than the expiry: it ends at once.
    let mut recovered = recover(restart);
    recovered.adjourned_for(Duration::from_secs(5000), restart);
    assert_eq!(recovered.poll_timeout(), Some(restart));
    recovered.handle_timeout(restart);
    assert_eq!(recovered.table().stage(), Stage::Finished);
    assert!(recovered.take_effects().contains(&Effect::Finished));
}

/// Issue 43, item 3: the host of an adjourned two-player game leaves for good. The other
/// player's ask is no quorum (both players are), but the host role passes to him a grace period
/// after the host left, as it does in play, and he resumes the game.
#[test]
fn the_host_role_passes_on_while_adjourned_and_the_new_host_resumes_the_game() {
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(2, 1, 10);
    sim.ok(20, conn(0), adjourn());
    sim.gone(21, conn(0));
    assert_eq!(
        sim.ok(22, conn(1), resume_game()),
        [Event::ResumeRequested { player: 1 }]
    );
    sim.refused(23, conn(1), resume_game(), ErrorCode::AlreadyAsked);
    sim.refused(23, conn(1), transfer_host(1), ErrorCode::NotHost);
    assert_eq!(sim.deadline(), Some(21 + GRACE));
    assert_eq!(
        sim.expire(21 + GRACE),
        [Event::HostChanged { player: Some(1) }]
    );
    assert!(sim.session.adjourned());
    // Nobody is eliminated while adjourned, whoever is host.
    sim.refused(52, conn(1), kick(0, false), ErrorCode::TableAdjourned);
    assert_eq!(
        sim.ok(52, conn(1), resume_game()),
        [Event::TableAdjourned { adjourned: false }]
    );
    // Nobody connected: the role waits with the game.
    let mut sim = Sim::new(settings(60, 600, 0), timing(0.0));
    sim.play(2, 1, 10);
    sim.ok(20, conn(0), adjourn());
    sim.gone(21, conn(0));
    sim.gone(21, conn(1));
    assert_eq!(sim.deadline(), None);
}

/// Issue 43, item 11: the host adjourns at most once per `ADJOURN_INTERVAL_SECS` (each
/// adjournment and resumption is an event everyone receives and the journal keeps); resuming
/// is not paced (a mistaken adjournment is undone at once).
#[test]
fn adjourning_is_paced_and_resuming_is_not() {
    use grand_melee_protocol::ADJOURN_INTERVAL_SECS as INTERVAL;
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(3, 1, 10);
    sim.ok(20, conn(0), adjourn());
    sim.ok(20, conn(0), resume_game());
    sim.refused(21, conn(0), adjourn(), ErrorCode::RateLimited);
    sim.refused(19 + INTERVAL, conn(0), adjourn(), ErrorCode::RateLimited);
    sim.ok(20 + INTERVAL, conn(0), adjourn());
    sim.ok(20 + INTERVAL, conn(0), resume_game());
}

/// Issue 43, item 11: leaving a lobby and sitting down again (a new seat, a new player id) does
/// not start the call interval over; someone else from another address is not held up, and the
/// interval still ends on time.
#[test]
fn leaving_and_joining_again_does_not_reset_the_call_interval() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.lobby(3);
    sim.ok(10, conn(2), call_host("when do we start?"));
    sim.leave(11, conn(2));
    let (again, _) = sim
        .join_from(12, 200, peer(2), "Cal again", token(20))
        .unwrap();
    sim.refused(13, 200, call_host("hello?"), ErrorCode::RateLimited);
    let (other, _) = sim
        .join_from(13, 201, address(10, 0, 0, 99), "Zed", token(21))
        .unwrap();
    sim.ok(14, 201, call_host("me too"));
    sim.ok(40, 200, call_host("now?"));
    assert!(again != other);
}

/// Issue 43, item 11: a kicked player's open call goes with him (`host_answered` in the kick's
/// batch), during play too, where his presence stays.
#[test]
fn a_kicked_players_call_leaves_the_open_calls() {
    let mut sim = Sim::new(settings(0, 600, 0), timing(0.0));
    sim.play(4, 0, 1);
    sim.ok(10, conn(2), call_host("look at this"));
    sim.ok(11, conn(3), call_host("and this"));
    let events = sim.ok(12, conn(0), kick(2, false));
    assert_eq!(
        events[..2],
        [
            Event::PlayerKicked {
                player: 2,
                banned: false
            },
            Event::HostAnswered { player: Some(2) }
        ],
        "{events:?}"
    );
    let calls = sim.session.view(TableId::nil(), "t").calls;
    assert_eq!(calls.iter().map(|c| c.player).collect::<Vec<_>>(), [3]);
    // Kicking a player with no open call adds nothing.
    let events = sim.ok(13, conn(0), kick(1, false));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::HostAnswered { .. })),
        "{events:?}"
    );
}
