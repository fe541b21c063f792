//! The cameras' links (issue 32) through the session: who is linked with whom, the offer side,
//! the display, the signals and their refusals.
//!
//! The harness keeps what each connection was told (`camera_peers`, folded from the session's
//! effects) and checks it after every step against the links computed here, independently of
//! `camera_links`, from the table's ring as it stands (positions in seating order, eliminated
//! players whose position is not removed yet included), the players' statuses, the stage and the
//! cameras chosen. Every refused request is checked to change nothing and decide nothing.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::rules::{Stage, Table};
use grand_melee_protocol::session::{ConnectionId, Effect, Session, Timing};
use grand_melee_protocol::{
    CameraPeer, ClientMessage, ErrorCode, MAX_SIGNAL_BYTES, Peer, PlayerId, Ruling, SeatToken,
    SeatingMode, Settings, TurnStateName,
};
use proptest::prelude::*;

const NAMES: [&str; 12] = [
    "Ann", "Ben", "Cal", "Dee", "Eve", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lea",
];
/// The display page's connection, and another spectator's.
const DISPLAY: ConnectionId = 900;
const WATCHER: ConnectionId = 901;

fn token(player: PlayerId) -> SeatToken {
    SeatToken::from_u128(0x5ea7_0000 + u128::from(player))
}

fn peer(n: u64) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, u8::try_from(n % 250 + 1).unwrap()))
}

fn camera(on: bool, stream: bool, stay: bool) -> ClientMessage {
    ClientMessage::Camera {
        id: 1,
        on,
        stream,
        stay,
    }
}

fn display(token: SeatToken, center: Option<PlayerId>) -> ClientMessage {
    ClientMessage::CameraDisplay {
        id: 2,
        token,
        center,
    }
}

fn signal(to: Peer, payload: &str) -> ClientMessage {
    ClientMessage::Signal {
        id: 3,
        to,
        payload: payload.to_owned(),
    }
}

/// What a player chose, as the test remembers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Chosen {
    stream: bool,
    stay: bool,
}

/// One table's session and what each connection was told.
struct Cams {
    session: Session,
    t0: Instant,
    secs: u64,
    range: usize,
    /// Each seated player's connection, while he has one.
    conns: BTreeMap<PlayerId, ConnectionId>,
    /// Cameras on, by player (gone with the connection).
    cameras: BTreeMap<PlayerId, Chosen>,
    /// The display: its connection and centre.
    display: Option<(ConnectionId, PlayerId)>,
    /// What each connection was last told by `camera_peers`.
    told: BTreeMap<ConnectionId, Vec<CameraPeer>>,
    /// Signals relayed by the last step: (to, from, payload).
    relayed: Vec<(ConnectionId, Peer, String)>,
    next_conn: ConnectionId,
}

impl Cams {
    /// `n` players join (player 0 hosts), and two spectators watch (one will be the display).
    fn new(n: u16, range: u8) -> Self {
        let t0 = Instant::now();
        let settings = Settings {
            seats: 12,
            spell_range: range,
            mulligan_clock_secs: 0,
            ..Settings::default()
        };
        let timing = Timing {
            grace: Duration::from_secs(3600),
            unjoined: Duration::from_secs(3600),
            chat_per_minute: 0.0,
            adjourned_expiry: None,
        };
        let session = Session::new(settings, DiceSecret::from_seed(7), timing, t0).unwrap();
        let mut cams = Self {
            session,
            t0,
            secs: 0,
            range: usize::from(range),
            conns: BTreeMap::new(),
            cameras: BTreeMap::new(),
            display: None,
            told: BTreeMap::new(),
            relayed: Vec::new(),
            next_conn: 1000,
        };
        for player in 0..n {
            let now = cams.now();
            let id = cams
                .session
                .join(
                    now,
                    100 + u64::from(player),
                    peer(u64::from(player)),
                    NAMES[usize::from(player)].to_owned(),
                    String::new(),
                    None,
                    token(player),
                )
                .unwrap();
            assert_eq!(id, player);
            cams.conns.insert(player, 100 + u64::from(player));
        }
        for spectator in [DISPLAY, WATCHER] {
            let now = cams.now();
            cams.session.watch(now, spectator, peer(spectator)).unwrap();
        }
        cams.drain();
        cams
    }

    fn now(&mut self) -> Instant {
        self.secs += 1;
        self.t0 + Duration::from_secs(self.secs)
    }

    fn conn(&self, player: PlayerId) -> ConnectionId {
        self.conns[&player]
    }

    fn host_token(&self) -> SeatToken {
        token(self.session.table().facts().host.unwrap())
    }

    /// The host starts (seated in join order unless random) and every player keeps.
    fn start(&mut self, random: bool) {
        let players: Vec<PlayerId> = self.conns.keys().copied().collect();
        let start = ClientMessage::Start {
            id: 9,
            first_player: Some(0),
            seating: if random {
                SeatingMode::Random
            } else {
                SeatingMode::Arranged
            },
            order: if random { Vec::new() } else { players },
        };
        self.ok(self.conn(0), &start);
        while let Some(&decider) = self.session.table().mulligan_deciders().first() {
            self.ok(self.conn(decider), &ClientMessage::Keep { id: 10 });
        }
        assert_eq!(self.session.table().stage(), Stage::Playing);
    }

    /// Takes the session's effects: folds `camera_peers` into what each connection was told
    /// and notes the relayed signals; a connection that was closed is told nothing more.
    fn drain(&mut self) -> Vec<Effect> {
        let effects = self.session.take_effects();
        self.relayed.clear();
        for effect in &effects {
            match effect {
                Effect::CameraPeers { connection, peers } => {
                    assert!(
                        self.session.role(*connection).is_some(),
                        "camera_peers for {connection}, not a member"
                    );
                    assert_ne!(
                        self.told.get(connection).cloned().unwrap_or_default(),
                        *peers,
                        "camera_peers repeats what {connection} was told"
                    );
                    self.told.insert(*connection, peers.clone());
                }
                Effect::Signal {
                    connection,
                    from,
                    payload,
                } => self.relayed.push((*connection, *from, payload.clone())),
                Effect::Close { connection, .. } => {
                    self.told.remove(connection);
                    self.conns.retain(|_, c| c != connection);
                }
                _ => {}
            }
        }
        self.told.retain(|_, peers| !peers.is_empty());
        self.check();
        effects
    }

    /// A request: accepted, its effects; refused, it changed nothing and decided nothing.
    fn request(
        &mut self,
        connection: ConnectionId,
        request: &ClientMessage,
    ) -> Result<Vec<Effect>, ErrorCode> {
        let table = self.session.table().clone();
        let seq = self.session.seq();
        let links = self.session.camera_links().clone();
        let now = self.now();
        match self.session.request(now, connection, request) {
            Ok(_) => Ok(self.drain()),
            Err(code) => {
                assert_eq!(self.session.table(), &table, "{code:?} changed the table");
                assert_eq!(self.session.seq(), seq, "{code:?} published");
                assert_eq!(self.session.camera_links(), &links, "{code:?} moved a link");
                assert_eq!(
                    self.session.take_effects(),
                    [],
                    "{code:?} decided something"
                );
                Err(code)
            }
        }
    }

    fn ok(&mut self, connection: ConnectionId, request: &ClientMessage) -> Vec<Effect> {
        self.request(connection, request)
            .unwrap_or_else(|code| panic!("{request:?} from {connection}: {code:?}"))
    }

    fn refused(&mut self, connection: ConnectionId, request: &ClientMessage, code: ErrorCode) {
        assert_eq!(
            self.request(connection, request).map(|_| ()),
            Err(code),
            "{request:?} from {connection}"
        );
    }

    /// Player `player` turns his camera on (`Some`) or off.
    fn camera(&mut self, player: PlayerId, chosen: Option<Chosen>) -> Vec<Effect> {
        let request = match chosen {
            Some(c) => camera(true, c.stream, c.stay),
            None => camera(false, false, false),
        };
        match chosen {
            Some(c) => self.cameras.insert(player, c),
            None => self.cameras.remove(&player),
        };
        self.ok(self.conn(player), &request)
    }

    fn set_display(&mut self, connection: ConnectionId, center: Option<PlayerId>) -> Vec<Effect> {
        // A replaced display is told it has nobody (`check`, after the request).
        self.display = center.map(|c| (connection, c));
        self.ok(connection, &display(self.host_token(), center))
    }

    /// Player `player`'s connection drops.
    fn gone(&mut self, player: PlayerId) -> Vec<Effect> {
        let connection = self.conns.remove(&player).unwrap();
        self.cameras.remove(&player);
        self.told.remove(&connection);
        let now = self.now();
        self.session.gone(now, connection);
        self.drain()
    }

    /// Player `player` takes his seat back on a new connection.
    fn resume(&mut self, player: PlayerId) -> Vec<Effect> {
        self.next_conn += 1;
        let connection = self.next_conn;
        if let Some(old) = self.conns.insert(player, connection) {
            self.told.remove(&old);
        }
        self.cameras.remove(&player);
        let now = self.now();
        self.session
            .resume(now, connection, peer(connection), token(player))
            .unwrap();
        self.drain()
    }

    /// The links as this test computes them.
    fn expected(&self) -> BTreeMap<ConnectionId, Vec<CameraPeer>> {
        let mut out: BTreeMap<ConnectionId, Vec<CameraPeer>> = BTreeMap::new();
        let table: &Table = self.session.table();
        if !matches!(table.stage(), Stage::Mulligan { .. } | Stage::Playing) {
            return out;
        }
        let ring: Vec<PlayerId> = table.ring().map(|p| p.id).collect();
        let m = ring.len();
        let in_range = |a: PlayerId, b: PlayerId| {
            let (Some(i), Some(j)) = (
                ring.iter().position(|&p| p == a),
                ring.iter().position(|&p| p == b),
            ) else {
                return false;
            };
            let d = i.abs_diff(j);
            d.min(m - d) <= self.range
        };
        let present = |p: PlayerId| {
            self.conns.contains_key(&p)
                && self
                    .cameras
                    .get(&p)
                    .is_some_and(|c| c.stay || table.player(p).is_some_and(|q| q.status.is_alive()))
        };
        let name = |p: PlayerId| NAMES[usize::from(p)].to_owned();
        let mut add = |c: ConnectionId, peer: Peer, name: String, offer: bool| {
            out.entry(c)
                .or_default()
                .push(CameraPeer { peer, name, offer });
        };
        if !table.facts().adjourned {
            for &a in self.cameras.keys() {
                for &b in self.cameras.keys() {
                    if a != b && present(a) && present(b) && in_range(a, b) {
                        add(self.conns[&a], Peer::Player(b), name(b), a < b);
                    }
                }
            }
        }
        if let Some((connection, center)) = self.display.filter(|_| !table.facts().adjourned) {
            for (&p, chosen) in &self.cameras {
                if chosen.stream && present(p) && (p == center || in_range(center, p)) {
                    add(self.conns[&p], Peer::Display, "display".to_owned(), true);
                    add(connection, Peer::Player(p), name(p), false);
                }
            }
        }
        for peers in out.values_mut() {
            peers.sort_by_key(|p| p.peer);
        }
        out
    }

    /// What every connection was told is the links as computed here, and the session's; each
    /// link has exactly one offering side.
    fn check(&self) {
        let expected = self.expected();
        assert_eq!(self.told, expected, "told vs expected");
        assert_eq!(
            self.session.camera_links(),
            &expected,
            "session vs expected"
        );
        let peer_of = |c: ConnectionId| {
            if self.display.is_some_and(|(d, _)| d == c) {
                Peer::Display
            } else {
                Peer::Player(*self.conns.iter().find(|&(_, &x)| x == c).unwrap().0)
            }
        };
        let connection_of = |peer: Peer| match peer {
            Peer::Player(p) => self.conns[&p],
            Peer::Display => self.display.unwrap().0,
        };
        for (&c, peers) in &self.told {
            for link in peers {
                let back = self.told[&connection_of(link.peer)]
                    .iter()
                    .find(|l| l.peer == peer_of(c))
                    .expect("links go both ways");
                assert_ne!(link.offer, back.offer, "exactly one side offers");
            }
        }
    }

    /// Who `player` is linked with, as he was told.
    fn linked(&self, player: PlayerId) -> Vec<Peer> {
        self.told
            .get(&self.conn(player))
            .map(|peers| peers.iter().map(|p| p.peer).collect())
            .unwrap_or_default()
    }

    /// Ends running turns (their holders end them) until `until` holds; at most 200.
    fn play_until(&mut self, until: impl Fn(&Table) -> bool) {
        for _ in 0..200 {
            if until(self.session.table()) {
                return;
            }
            let holder = self
                .session
                .view(grand_melee_protocol::TableId::from_u128(1), "t")
                .turns
                .iter()
                .find(|t| t.state == TurnStateName::Running)
                .map(|t| t.player)
                .unwrap();
            self.ok(self.conn(holder), &ClientMessage::EndTurn { id: 11 });
        }
        panic!("never happened");
    }
}

fn all_on() -> Option<Chosen> {
    Some(Chosen {
        stream: false,
        stay: false,
    })
}

fn neighbours(p: PlayerId, n: u16) -> Vec<Peer> {
    let mut out = vec![Peer::Player((p + 1) % n), Peer::Player((p + n - 1) % n)];
    out.sort();
    out
}

#[test]
fn six_players_range_one_each_sees_exactly_his_two_neighbours() {
    let mut cams = Cams::new(6, 1);
    for p in 0..6 {
        cams.camera(p, all_on());
    }
    // In the lobby nobody is linked: links form while the game runs.
    assert!(cams.told.is_empty());
    cams.start(false);
    for p in 0..6 {
        assert_eq!(cams.linked(p), neighbours(p, 6), "player {p}");
    }
    // The lower id offers.
    let ann = &cams.told[&cams.conn(0)];
    assert_eq!(
        ann.iter().map(|l| (l.peer, l.offer)).collect::<Vec<_>>(),
        [(Peer::Player(1), true), (Peer::Player(5), true)]
    );
    assert_eq!(ann[0].name, "Ben");
    let fay = &cams.told[&cams.conn(5)];
    assert!(fay.iter().all(|l| !l.offer), "{fay:?}");
}

#[test]
fn a_signal_goes_to_a_linked_peer_only_and_refusals_change_nothing() {
    let mut cams = Cams::new(6, 1);
    cams.start(false);
    for p in 0..6 {
        cams.camera(p, all_on());
    }
    let payload = r#"{"description":{"type":"offer","sdp":"v=0"}}"#;
    cams.ok(cams.conn(0), &signal(Peer::Player(1), payload));
    assert_eq!(
        cams.relayed,
        [(cams.conn(1), Peer::Player(0), payload.to_owned())]
    );
    // Out of range, himself, nobody, the display before there is one.
    for to in [
        Peer::Player(3),
        Peer::Player(0),
        Peer::Player(77),
        Peer::Display,
    ] {
        cams.refused(cams.conn(0), &signal(to, "{}"), ErrorCode::NotLinked);
    }
    // A spectator that is not the display.
    cams.refused(
        WATCHER,
        &signal(Peer::Player(1), "{}"),
        ErrorCode::NotAPlayer,
    );
    // Too large, even to a linked peer; exactly the limit is taken.
    let big = "x".repeat(MAX_SIGNAL_BYTES + 1);
    cams.refused(
        cams.conn(0),
        &signal(Peer::Player(1), &big),
        ErrorCode::SignalTooLarge,
    );
    cams.ok(cams.conn(0), &signal(Peer::Player(1), &big[1..]));
    assert_eq!(cams.relayed.len(), 1);
    // Camera off: no link, no signal either way.
    cams.camera(1, None);
    assert_eq!(cams.linked(0), [Peer::Player(5)]);
    assert_eq!(cams.linked(2), [Peer::Player(3)]);
    cams.refused(
        cams.conn(0),
        &signal(Peer::Player(1), "{}"),
        ErrorCode::NotLinked,
    );
    cams.refused(
        cams.conn(1),
        &signal(Peer::Player(0), "{}"),
        ErrorCode::NotLinked,
    );
}

#[test]
fn camera_requests_are_checked() {
    let mut cams = Cams::new(4, 1);
    cams.refused(WATCHER, &camera(true, false, false), ErrorCode::NotAPlayer);
    cams.refused(
        cams.conn(0),
        &display(token(0), Some(1)),
        ErrorCode::NotWatching,
    );
    cams.refused(DISPLAY, &display(token(1), Some(1)), ErrorCode::NotHost);
    cams.refused(
        DISPLAY,
        &display(SeatToken::from_u128(5), None),
        ErrorCode::NotHost,
    );
    cams.refused(
        DISPLAY,
        &display(token(0), Some(9)),
        ErrorCode::UnknownPlayer,
    );
    cams.refused(800, &camera(true, false, false), ErrorCode::NotInTable);
    // Accepted in the lobby, and again (idempotent): nothing to tell anyone yet.
    for _ in 0..2 {
        assert_eq!(cams.camera(2, all_on()), []);
    }
    assert_eq!(cams.set_display(DISPLAY, Some(1)), []);
}

#[test]
fn leaving_going_and_resuming_unlink_and_the_camera_is_the_connections() {
    let mut cams = Cams::new(5, 1);
    cams.start(false);
    for p in 0..5 {
        cams.camera(p, all_on());
    }
    let effects = cams.gone(2);
    // Cal's neighbours are told at once; Cal, gone, is told nothing.
    let told: BTreeSet<ConnectionId> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::CameraPeers { connection, .. } => Some(*connection),
            _ => None,
        })
        .collect();
    assert_eq!(told, BTreeSet::from([cams.conn(1), cams.conn(3)]));
    assert_eq!(cams.linked(1), [Peer::Player(0)]);
    // Back on a new connection, his camera is off until his page says so again.
    cams.resume(2);
    assert_eq!(cams.linked(1), [Peer::Player(0)]);
    cams.camera(2, all_on());
    assert_eq!(cams.linked(2), [Peer::Player(1), Peer::Player(3)]);
    // A resume that takes the seat over from a live connection drops that one's camera too.
    cams.resume(2);
    assert_eq!(cams.linked(1), [Peer::Player(0)]);
    // `leave` during the game: like a lost connection.
    let connection = cams.conn(4);
    cams.conns.remove(&4);
    cams.cameras.remove(&4);
    cams.told.remove(&connection);
    let now = cams.now();
    cams.session.leave(now, connection);
    cams.drain();
    assert_eq!(cams.linked(0), [Peer::Player(1)]);
}

#[test]
fn an_eliminated_player_is_unlinked_and_his_removed_position_links_his_neighbours() {
    let mut cams = Cams::new(6, 1);
    cams.start(false);
    for p in 0..6 {
        cams.camera(p, all_on());
    }
    // Dee (3) is eliminated: his links go; Cal and Eve are still two positions apart.
    cams.ok(
        cams.conn(0),
        &ClientMessage::Ruling {
            id: 12,
            ruling: Ruling::Eliminate { players: vec![3] },
        },
    );
    assert_eq!(cams.linked(3), []);
    assert_eq!(cams.linked(2), [Peer::Player(1)]);
    assert_eq!(cams.linked(4), [Peer::Player(5)]);
    // Play on until his position is removed: Cal and Eve come into range and are linked.
    cams.play_until(|t| t.ring().len() == 5);
    assert_eq!(cams.linked(2), [Peer::Player(1), Peer::Player(4)]);
    assert_eq!(cams.linked(4), [Peer::Player(2), Peer::Player(5)]);
}

#[test]
fn stay_keeps_an_eliminated_players_links_while_his_position_is_in_the_ring() {
    let mut cams = Cams::new(6, 1);
    cams.start(false);
    for p in 0..6 {
        cams.camera(p, all_on());
    }
    cams.camera(
        3,
        Some(Chosen {
            stream: false,
            stay: true,
        }),
    );
    cams.ok(cams.conn(3), &ClientMessage::Concede { id: 13 });
    assert_eq!(cams.linked(3), [Peer::Player(2), Peer::Player(4)]);
    cams.play_until(|t| t.ring().len() == 5);
    assert_eq!(cams.linked(3), []);
}

#[test]
fn the_display_shows_the_stream_players_of_the_chosen_sphere_only() {
    let mut cams = Cams::new(6, 1);
    cams.start(false);
    let stream = Some(Chosen {
        stream: true,
        stay: false,
    });
    for p in [0, 1, 2, 4] {
        cams.camera(p, stream);
    }
    cams.camera(5, all_on());
    // Ben's sphere: Ann, Ben, Cal (Fay has no stream, Eve is out of it).
    cams.set_display(DISPLAY, Some(1));
    let shown: Vec<Peer> = cams.told[&DISPLAY].iter().map(|l| l.peer).collect();
    assert_eq!(shown, [Peer::Player(0), Peer::Player(1), Peer::Player(2)]);
    assert!(cams.told[&DISPLAY].iter().all(|l| !l.offer));
    assert!(cams.linked(1).contains(&Peer::Display));
    assert!(!cams.linked(4).contains(&Peer::Display));
    // The display signals only to its players; a player to the display only if linked.
    cams.ok(DISPLAY, &signal(Peer::Player(2), "{}"));
    assert_eq!(
        cams.relayed,
        [(cams.conn(2), Peer::Display, "{}".to_owned())]
    );
    cams.refused(
        DISPLAY,
        &signal(Peer::Player(4), "{}"),
        ErrorCode::NotLinked,
    );
    cams.ok(cams.conn(0), &signal(Peer::Display, "{}"));
    cams.refused(
        cams.conn(4),
        &signal(Peer::Display, "{}"),
        ErrorCode::NotLinked,
    );
    // Another centre: Eve's sphere (Dee has no camera, Fay no stream).
    cams.set_display(DISPLAY, Some(4));
    let shown: Vec<Peer> = cams.told[&DISPLAY].iter().map(|l| l.peer).collect();
    assert_eq!(shown, [Peer::Player(4)]);
    // A newer display replaces it: the old one is told it has nobody.
    cams.set_display(WATCHER, Some(1));
    assert!(!cams.told.contains_key(&DISPLAY));
    assert_eq!(cams.told[&WATCHER].len(), 3);
    cams.refused(
        DISPLAY,
        &signal(Peer::Player(4), "{}"),
        ErrorCode::NotAPlayer,
    );
    // Stopped, then set again and its connection gone: the players are told.
    cams.set_display(WATCHER, None);
    assert!(!cams.linked(1).contains(&Peer::Display));
    cams.set_display(WATCHER, Some(1));
    let now = cams.now();
    cams.session.gone(now, WATCHER);
    cams.told.remove(&WATCHER);
    cams.display = None;
    cams.drain();
    assert!(!cams.linked(1).contains(&Peer::Display));
}

#[test]
fn nobody_is_linked_while_adjourned_or_after_the_game() {
    let mut cams = Cams::new(3, 1);
    cams.start(false);
    for p in 0..3 {
        cams.camera(p, all_on());
    }
    assert_eq!(cams.linked(0).len(), 2);
    cams.ok(cams.conn(0), &ClientMessage::Adjourn { id: 14 });
    assert!(cams.told.is_empty());
    cams.ok(cams.conn(0), &ClientMessage::ResumeGame { id: 15 });
    assert_eq!(cams.linked(0).len(), 2);
    cams.ok(cams.conn(1), &ClientMessage::Concede { id: 16 });
    cams.ok(cams.conn(2), &ClientMessage::Concede { id: 17 });
    assert_eq!(cams.session.table().stage(), Stage::Finished);
    assert!(cams.told.is_empty());
}

#[test]
fn without_cameras_the_session_decides_nothing_about_them() {
    let mut cams = Cams::new(6, 2);
    cams.start(false);
    let effects = cams.ok(
        cams.conn(0),
        &ClientMessage::Ruling {
            id: 18,
            ruling: Ruling::Eliminate { players: vec![2] },
        },
    );
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::CameraPeers { .. })),
        "{effects:?}"
    );
}

/// One random step of a game with cameras.
#[derive(Debug, Clone)]
enum Op {
    Camera {
        player: u16,
        on: bool,
        stream: bool,
        stay: bool,
    },
    Display {
        center: Option<u16>,
        watcher: bool,
    },
    Gone {
        player: u16,
    },
    Resume {
        player: u16,
    },
    Eliminate {
        player: u16,
    },
    Concede {
        player: u16,
    },
    EndTurn,
    Signal {
        from: u16,
        to: Option<u16>,
        display: bool,
    },
    Adjourn {
        adjourned: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let p = 0u16..12;
    prop_oneof![
        4 => (p.clone(), any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(player, on, stream, stay)| Op::Camera { player, on, stream, stay }),
        1 => (proptest::option::of(p.clone()), any::<bool>())
            .prop_map(|(center, watcher)| Op::Display { center, watcher }),
        1 => p.clone().prop_map(|player| Op::Gone { player }),
        1 => p.clone().prop_map(|player| Op::Resume { player }),
        1 => p.clone().prop_map(|player| Op::Eliminate { player }),
        1 => p.clone().prop_map(|player| Op::Concede { player }),
        4 => Just(Op::EndTurn),
        3 => (p.clone(), proptest::option::of(p), any::<bool>())
            .prop_map(|(from, to, display)| Op::Signal { from, to, display }),
        1 => any::<bool>().prop_map(|adjourned| Op::Adjourn { adjourned }),
    ]
}

impl Cams {
    fn apply(&mut self, op: &Op, n: u16) {
        let seated = |p: u16| p % n;
        match *op {
            Op::Camera {
                player,
                on,
                stream,
                stay,
            } => {
                let player = seated(player);
                if self.conns.contains_key(&player) {
                    self.camera(player, on.then_some(Chosen { stream, stay }));
                }
            }
            Op::Display { center, watcher } => {
                let connection = if watcher { WATCHER } else { DISPLAY };
                self.set_display(connection, center.map(seated));
            }
            Op::Gone { player } => {
                let player = seated(player);
                if self.conns.contains_key(&player) && player != 0 {
                    self.gone(player);
                }
            }
            Op::Resume { player } => {
                self.resume(seated(player));
            }
            Op::Eliminate { player } => {
                let ruling = ClientMessage::Ruling {
                    id: 19,
                    ruling: Ruling::Eliminate {
                        players: vec![seated(player)],
                    },
                };
                let _ = self.request(self.conn(0), &ruling);
            }
            Op::Concede { player } => {
                if let Some(&c) = self.conns.get(&seated(player)) {
                    let _ = self.request(c, &ClientMessage::Concede { id: 20 });
                }
            }
            Op::EndTurn => {
                let running: Vec<PlayerId> = self
                    .session
                    .view(grand_melee_protocol::TableId::from_u128(1), "t")
                    .turns
                    .iter()
                    .filter(|t| t.state == TurnStateName::Running)
                    .map(|t| t.player)
                    .collect();
                for holder in running {
                    if let Some(&c) = self.conns.get(&holder) {
                        let _ = self.request(c, &ClientMessage::EndTurn { id: 21 });
                    }
                }
            }
            Op::Signal { from, to, display } => {
                let Some(&sender) = self.conns.get(&seated(from)) else {
                    return;
                };
                let sender = if display {
                    self.display.map_or(WATCHER, |(d, _)| d)
                } else {
                    sender
                };
                let to = to.map_or(Peer::Display, |p| Peer::Player(p % (n + 2)));
                let linked = self
                    .expected()
                    .get(&sender)
                    .is_some_and(|peers| peers.iter().any(|l| l.peer == to));
                let result = self.request(sender, &signal(to, "p"));
                if linked {
                    result.unwrap();
                    let receiver = match to {
                        Peer::Player(p) => self.conns[&p],
                        Peer::Display => self.display.unwrap().0,
                    };
                    let from = if display {
                        Peer::Display
                    } else {
                        Peer::Player(seated(from))
                    };
                    assert_eq!(self.relayed, [(receiver, from, "p".to_owned())]);
                } else {
                    assert!(result.is_err(), "{sender} → {to:?} relayed, not linked");
                }
            }
            Op::Adjourn { adjourned } => {
                let request = if adjourned {
                    ClientMessage::Adjourn { id: 22 }
                } else {
                    ClientMessage::ResumeGame { id: 23 }
                };
                let _ = self.request(self.conn(0), &request);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Through random games — cameras on and off, eliminations and removed positions,
    /// connections lost and resumed, displays, adjournments — every connection is told exactly
    /// the links computed independently from the ring, one side of each offers, and a signal is
    /// relayed exactly when its two ends are linked.
    #[test]
    fn links_are_exactly_the_pairs_in_range_with_cameras_on(
        n in 3u16..=12,
        range in 1u8..=3,
        cameras in proptest::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 12),
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let mut cams = Cams::new(n, range);
        cams.start(true);
        for (p, &(on, stream, stay)) in cameras.iter().enumerate().take(usize::from(n)) {
            if on {
                cams.camera(u16::try_from(p).unwrap(), Some(Chosen { stream, stay }));
            }
        }
        for op in &ops {
            cams.apply(op, n);
        }
    }
}
