//! One example of every message, request, ruling and event, as shown in `PROTOCOL.md`.
//!
//! `cargo run -p grand-melee-protocol --example dump` prints them as markdown; a test checks
//! that every hex dump in `PROTOCOL.md` is the current encoding of its example, so the document
//! cannot drift from the code. They double as fixtures for tests.

use serde::Serialize;

use crate::camera::{CameraPeer, IceServer, Peer};
use crate::client::ClientMessage;
use crate::codec::encode;
use crate::error::ErrorCode;
use crate::event::Event;
use crate::league::LeagueSummary;
use crate::league::{
    Alliance, Deck, DeckSpec, LeagueGame, LeagueId, LeagueView, LedgerEntry, LedgerLine,
    MemberStanding, MemberToken, Purchase, Remedy,
};
use crate::magic_tech_types::{
    Area, Block, CardFace, CardType, Colour, Correction, Keywords, ManaCost, MtPhase, Target, Zone,
};
use crate::mountain_magic_types::{Ending, ForceRef, ManaPlace, Removal, Side, Spot};
use crate::server::{ServerMessage, TableSummary};
use crate::types::{
    EliminationCause, KeepReason, OrganiserSecret, Phase, Reduction, RollResult, Ruling, SeatToken,
    SeatingMode, StageName, Standing, TableId, TurnEndReason, TurnRemovalReason,
};
use crate::view::{Settings, TableView};

/// The table every example is about.
pub const TABLE: TableId = TableId::from_u128(0x5f3c_1a2e_8d4b_4c6e_9a7f_0b1c_2d3e_4f50);

/// The seat token in the examples.
pub const TOKEN: SeatToken = SeatToken::from_u128(0xc0ff_ee00_1234_4abc_8def_0123_4567_89ab);

/// One example: a whole client or server message, or one event on its own (as it appears
/// inside an `events` message's `events` array).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
// Documentation examples, built once: their size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Example {
    /// A client → server message.
    Client(ClientMessage),
    /// A server → client message.
    Server(ServerMessage),
    /// One event.
    Event(Event),
}

impl Example {
    /// The MessagePack encoding, exactly as sent on the wire (an event: as it appears inside
    /// an `events` array).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Example::Client(m) => encode(m),
            Example::Server(m) => encode(m),
            Example::Event(e) => encode(e),
        }
    }
}

/// The example table's view after four players have joined, started, mulliganed and kept,
/// and Alice's turn has reached combat (spell range 1, so she reaches her two neighbours).
pub fn view() -> TableView {
    let settings = Settings {
        mountain_magic: None,
        seats: 8,
        spell_range: 1,
        reduction: Reduction::Eager,
        starting_life: 20,
        hand_size: 7,
        password: false,
        turn_clock_secs: 0,
        absence_limit_secs: 600,
        mulligan_clock_secs: 60,
        max_spectators: 100,
        rules: Default::default(),
        combat_dice: false,
        mulligan: Default::default(),
        league: None,
        game: Default::default(),
    };
    let empty = TableView::new(TABLE, "Friday melee", settings);
    // The events are consistent by construction; should one not apply, the view simply stops
    // short (the doc test would show it).
    match crate::Mirror::new(&empty) {
        Ok(mut mirror) => {
            let _ = mirror.apply_batch(1, &view_events());
            mirror.view()
        }
        Err(_) => empty,
    }
}

/// The example table's dice secret (a real table's is drawn by the server).
pub fn secret() -> crate::dice::DiceSecret {
    crate::dice::DiceSecret::from_seed(42)
}

fn commitment() -> String {
    secret().commitment()
}

/// The events that build [`view`], numbered from 1.
pub fn view_events() -> Vec<Event> {
    let joined = |player: u16, name: &str| Event::PlayerJoined {
        player,
        name: name.to_owned(),
        entropy: String::new(),
        deck: None,
    };
    vec![
        joined(0, "Alice"),
        Event::HostChanged { player: Some(0) },
        joined(1, "Bob"),
        joined(2, "Carol"),
        joined(3, "Dave"),
        Event::SpectatorsChanged { spectators: 1 },
        Event::GameStarted {
            seating: vec![2, 0, 3, 1],
            first_player: 0,
            turn_holders: vec![0],
            commitment: commitment(),
            first_player_chosen: false,
            first_decided_by: None,
            bonuses: Vec::new(),
            seating_mode: SeatingMode::Random,
        },
        Event::Kept {
            player: 0,
            hand_size: 7,
            reason: KeepReason::Decided,
        },
        Event::Kept {
            player: 3,
            hand_size: 7,
            reason: KeepReason::Decided,
        },
        Event::Mulliganed {
            player: 1,
            hand_size: 6,
        },
        Event::Kept {
            player: 1,
            hand_size: 6,
            reason: KeepReason::Decided,
        },
        Event::Kept {
            player: 2,
            hand_size: 7,
            reason: KeepReason::Decided,
        },
        Event::TurnBegan { turn: 0, player: 0 },
        Event::PhaseChanged {
            turn: 0,
            phase: Phase::Combat,
        },
        Event::ConnectionChanged {
            player: 3,
            connected: false,
        },
    ]
}

/// Every example with its name (`client/hello`, `server/events`, `event/turn_began`, …), in the
/// order `PROTOCOL.md` shows them.
pub fn all() -> Vec<(String, Example)> {
    let mut out = Vec::new();
    for message in client() {
        let name = match &message {
            ClientMessage::Ruling { ruling, .. } => format!("client/ruling/{}", ruling.name()),
            other => format!("client/{}", other.name()),
        };
        out.push((name, Example::Client(message)));
    }
    for message in server() {
        out.push((
            format!("server/{}", message.name()),
            Example::Server(message),
        ));
    }
    for event in events() {
        out.push((format!("event/{}", event.name()), Example::Event(event)));
    }
    out
}

/// The example named `name`, if any.
pub fn get(name: &str) -> Option<Example> {
    all().into_iter().find(|(n, _)| n == name).map(|(_, e)| e)
}

/// One example of every client message (and of every ruling).
pub fn client() -> Vec<ClientMessage> {
    vec![
        ClientMessage::Hello {
            id: 1,
            protocol: crate::PROTOCOL_VERSION,
            client: "melee-bot/0.1".to_owned(),
        },
        ClientMessage::ListTables {
            id: 2,
            from: 0,
            limit: 100,
        },
        ClientMessage::CreateTable {
            mountain_magic: None,
            id: 3,
            name: "Friday melee".to_owned(),
            seats: 8,
            spell_range: 1,
            reduction: Reduction::Eager,
            starting_life: 20,
            password: None,
            seed: Some(42),
            turn_clock_secs: 0,
            absence_limit_secs: 600,
            mulligan_clock_secs: 60,
            max_spectators: 100,
            rules: Default::default(),
            combat_dice: false,
            mulligan: Default::default(),
            game: Default::default(),
            league: None,
            organiser: None,
        },
        ClientMessage::Join {
            id: 4,
            table: TABLE,
            name: "Alice".to_owned(),
            password: None,
            entropy: Some("kitchen table 7".to_owned()),
            member_token: None,
        },
        ClientMessage::Watch {
            id: 5,
            table: TABLE,
            password: Some("hunter2".to_owned()),
        },
        ClientMessage::Resume {
            id: 6,
            table: TABLE,
            token: TOKEN,
        },
        ClientMessage::Leave { id: 7 },
        ClientMessage::Start {
            id: 8,
            first_player: None,
            seating: SeatingMode::Arranged,
            order: vec![2, 0, 3, 1],
        },
        ClientMessage::Snapshot { id: 9 },
        ClientMessage::Mulligan { id: 10 },
        ClientMessage::Keep { id: 11 },
        ClientMessage::SetPhase {
            id: 12,
            phase: Phase::Combat,
        },
        ClientMessage::EndTurn { id: 13 },
        ClientMessage::Attack {
            id: 14,
            target: 3,
            damage: 5,
            poison: 0,
        },
        ClientMessage::DealDamage {
            id: 15,
            target: 2,
            amount: 3,
        },
        ClientMessage::ChangeLife { id: 16, delta: -4 },
        ClientMessage::ChangePoison { id: 17, delta: 1 },
        ClientMessage::Concede { id: 18 },
        ClientMessage::ExtraTurn { id: 31 },
        ClientMessage::AttackRoll {
            id: 32,
            defender: 3,
            attacker_power: 4,
            blocker_powers: vec![2, 3],
        },
        ClientMessage::CounterRoll {
            id: 33,
            attacker: 0,
            blocker_power: 2,
            attacker_power: 4,
        },
        ClientMessage::Ruling {
            id: 19,
            ruling: Ruling::Eliminate {
                players: vec![1, 3],
            },
        },
        ClientMessage::Ruling {
            id: 20,
            ruling: Ruling::SetLife {
                player: 2,
                life: 12,
            },
        },
        ClientMessage::Ruling {
            id: 21,
            ruling: Ruling::SetPoison {
                player: 2,
                poison: 4,
            },
        },
        ClientMessage::Ruling {
            id: 22,
            ruling: Ruling::EndTurn { player: 0 },
        },
        ClientMessage::Ruling {
            id: 30,
            ruling: Ruling::Keep { player: 2 },
        },
        ClientMessage::Ruling {
            id: 34,
            ruling: Ruling::ExtraTurn { player: 2 },
        },
        ClientMessage::Chat {
            id: 23,
            text: "gl hf".to_owned(),
        },
        ClientMessage::Pause {
            id: 24,
            paused: true,
        },
        ClientMessage::Adjourn { id: 48 },
        ClientMessage::ResumeGame { id: 49 },
        ClientMessage::Kick {
            id: 25,
            player: 3,
            ban: false,
        },
        ClientMessage::TransferHost { id: 26, player: 1 },
        ClientMessage::ListReplays {
            id: 27,
            from: 0,
            limit: 100,
        },
        ClientMessage::GetReplay {
            id: 28,
            table: TABLE,
            from_seq: 1,
            password: None,
            token: None,
        },
        ClientMessage::Mute {
            id: 29,
            player: Some(2),
            muted: true,
        },
        ClientMessage::GetEvents {
            id: 30,
            table: TABLE,
            from_seq: 1,
            limit: 100,
        },
        ClientMessage::ChooseFirst { id: 31, player: 2 },
        ClientMessage::CreateLeague {
            id: 40,
            name: "Tuesday Ascension".to_owned(),
            password: Some("swordfish".to_owned()),
        },
        ClientMessage::ListLeagues {
            id: 41,
            from: 0,
            limit: 100,
        },
        ClientMessage::JoinLeague {
            id: 42,
            league: LEAGUE,
            name: "Alice".to_owned(),
            password: Some("swordfish".to_owned()),
        },
        ClientMessage::GetLeague {
            id: 43,
            league: LEAGUE,
            from: 0,
            limit: 100,
        },
        ClientMessage::GetDeck {
            id: 44,
            league: LEAGUE,
            member: 0,
        },
        ClientMessage::RegisterDeck {
            id: 45,
            league: LEAGUE,
            token: MEMBER_TOKEN,
            deck: deck_spec(),
        },
        ClientMessage::Buy {
            id: 46,
            league: LEAGUE,
            token: MEMBER_TOKEN,
            purchase: Purchase::ExpansionSet {
                name: "Weatherlight".to_owned(),
            },
            remove: 0,
        },
        ClientMessage::TakeRemedy {
            id: 47,
            league: LEAGUE,
            token: MEMBER_TOKEN,
            remedy: Remedy::SwapFive,
        },
        ClientMessage::CallHost {
            id: 48,
            reason: "Carol says her Wrath resolved before my Regrowth".to_owned(),
        },
        ClientMessage::AnswerCall {
            id: 49,
            player: Some(1),
        },
        ClientMessage::Camera {
            id: 70,
            on: true,
            stream: true,
            stay: false,
        },
        ClientMessage::CameraDisplay {
            id: 71,
            token: TOKEN,
            center: Some(3),
        },
        ClientMessage::Signal {
            id: 72,
            to: Peer::Player(3),
            payload: SIGNAL_PAYLOAD.to_owned(),
        },
        ClientMessage::MagicTechDeclareDeck { id: 50, size: 60 },
        ClientMessage::MagicTechNextPhase { id: 51 },
        ClientMessage::MagicTechDeploy {
            id: 52,
            land: Some(mt_forest()),
        },
        ClientMessage::MagicTechTap {
            id: 53,
            card: 0,
            mana: 1,
        },
        ClientMessage::MagicTechPay {
            id: 54,
            card: Some(1),
            amount: 1,
        },
        ClientMessage::MagicTechReveal {
            id: 55,
            card: 1,
            face: mt_bears(),
        },
        ClientMessage::MagicTechRelocate {
            id: 56,
            card: 1,
            area: Area::Guard { card: None },
        },
        ClientMessage::MagicTechMission {
            id: 57,
            attackers: vec![1],
            target: Target::Stockpile { player: 2 },
        },
        ClientMessage::MagicTechBlock {
            id: 58,
            blocks: vec![Block {
                blocker: 4,
                attacker: 1,
            }],
        },
        ClientMessage::MagicTechDamage {
            id: 59,
            target: Target::Card { card: 4 },
            amount: 3,
        },
        ClientMessage::MagicTechHeal {
            id: 60,
            card: 1,
            amount: 1,
        },
        ClientMessage::MagicTechRegenerate { id: 61, card: 1 },
        ClientMessage::MagicTechDraw { id: 62, count: 1 },
        ClientMessage::MagicTechLife { id: 63, delta: -2 },
        ClientMessage::MagicTechLeavePlay {
            id: 64,
            card: 1,
            to: Zone::Hand,
        },
        ClientMessage::MagicTechPropose {
            id: 65,
            correction: Correction::Damage { card: 1, damage: 0 },
        },
        ClientMessage::MagicTechAnswer {
            id: 66,
            accept: true,
        },
        ClientMessage::MagicTechRule {
            id: 67,
            correction: Correction::Counters {
                card: 3,
                counters: 2,
            },
        },
        ClientMessage::MountainMagicFlip { id: 68 },
        ClientMessage::MountainMagicPlace {
            id: 69,
            row: 1,
            pos: 2,
        },
        ClientMessage::MountainMagicDiscard { id: 70 },
        ClientMessage::MountainMagicPath {
            id: 71,
            path: vec![0, 1, 1, 2, 2, 3, 3],
        },
        ClientMessage::MountainMagicMana {
            id: 72,
            place: Some(ManaPlace {
                force: 2,
                ability: false,
                colour: Colour::Red,
            }),
        },
        ClientMessage::MountainMagicAttack {
            id: 73,
            attackers: vec![0, 3],
            target: 1,
        },
        ClientMessage::MountainMagicCast {
            id: 74,
            force: 4,
            target: Some(ForceRef {
                side: Side::Opponent,
                force: 2,
            }),
        },
        ClientMessage::MountainMagicActivate {
            id: 75,
            force: 0,
            target: None,
        },
        ClientMessage::MountainMagicEndTurn { id: 76 },
        ClientMessage::MountainMagicStandings {
            id: 77,
            day: "2026-11-25".to_owned(),
            league: None,
            from: 0,
            limit: 100,
        },
    ]
}

/// A Forest, as declared when it is deployed.
pub fn mt_forest() -> CardFace {
    CardFace {
        name: "Forest".to_owned(),
        card_type: CardType::Land,
        cost: ManaCost::default(),
        power: 0,
        toughness: 0,
        basic: Some(Colour::Green),
        keywords: Keywords::default(),
    }
}

/// Grizzly Bears ({1}{G}, 2/2), as declared when it is revealed.
pub fn mt_bears() -> CardFace {
    CardFace {
        name: "Grizzly Bears".to_owned(),
        card_type: CardType::Creature,
        cost: ManaCost {
            generic: 1,
            coloured: vec![Colour::Green],
        },
        power: 2,
        toughness: 2,
        basic: None,
        keywords: Keywords::default(),
    }
}

/// The league in the examples.
pub const LEAGUE: LeagueId = LeagueId::from_u128(0x1ea9_0e00_aaaa_4bbb_8ccc_0ddd_eeee_ff01);

/// The member token in the examples.
pub const MEMBER_TOKEN: MemberToken =
    MemberToken::from_u128(0x3e3b_e700_5555_4666_8777_0888_9999_aa02);

/// The organiser secret in the examples.
pub const ORGANISER: OrganiserSecret =
    OrganiserSecret::from_u128(0x0a9a_0000_1111_4222_8333_0444_5555_6603);

fn deck_spec() -> DeckSpec {
    DeckSpec {
        name: "Crusade".to_owned(),
        alliance: Alliance::GreenWhite,
        basic_set: "Mirage".to_owned(),
        expansion_set: "Visions".to_owned(),
    }
}

/// The example deck's ledger: registered, two games, one purchase.
pub fn ledger() -> Vec<LedgerLine> {
    let entries = vec![
        LedgerEntry::Registered { deck: deck_spec() },
        LedgerEntry::Credited {
            table: TABLE,
            table_name: "Week 1".to_owned(),
            place: 1,
            players: 8,
            mana_points: 7,
            opponents: vec![1, 2, 3, 4, 5, 6, 7],
        },
        LedgerEntry::Credited {
            table: TABLE,
            table_name: "Week 2".to_owned(),
            place: 3,
            players: 8,
            mana_points: 5,
            opponents: vec![1, 2, 3, 4, 5, 6, 7],
        },
        LedgerEntry::Bought {
            purchase: Purchase::ExpansionSet {
                name: "Weatherlight".to_owned(),
            },
            cost: 10,
            removed: 0,
        },
    ];
    entries
        .into_iter()
        .zip(1..)
        .map(|(entry, seq)| LedgerLine {
            seq,
            at_ms: 1_795_000_000_000 + u64::from(seq) * 604_800_000,
            entry,
        })
        .collect()
}

/// One example of every server message.
pub fn server() -> Vec<ServerMessage> {
    vec![
        ServerMessage::Welcome {
            reply_to: 1,
            protocol: crate::PROTOCOL_VERSION,
            server: concat!("grand-melee-server ", env!("CARGO_PKG_VERSION")).to_owned(),
        },
        ServerMessage::Tables {
            reply_to: 2,
            tables: vec![TableSummary {
                table: TABLE,
                name: "Friday melee".to_owned(),
                seats: 8,
                seated: 4,
                spectators: 1,
                stage: StageName::Lobby,
                password: false,
                spell_range: 1,
                reduction: Reduction::Eager,
                rules: Default::default(),
                combat_dice: false,
                mulligan: Default::default(),
                league: None,
                adjourned: false,
                game: Default::default(),
            }],
            total: 1,
            next: None,
        },
        ServerMessage::TableCreated {
            reply_to: 3,
            table: TABLE,
        },
        ServerMessage::Seated {
            reply_to: 4,
            table: TABLE,
            player: 0,
            token: TOKEN,
        },
        ServerMessage::Watching {
            reply_to: 5,
            table: TABLE,
        },
        ServerMessage::Left { reply_to: 7 },
        ServerMessage::Ack {
            reply_to: 14,
            seq: 16,
        },
        ServerMessage::Snapshot {
            reply_to: Some(9),
            view: view(),
        },
        ServerMessage::Events {
            table: TABLE,
            seq: 16,
            events: vec![
                Event::Attacked {
                    attacker: 0,
                    defender: 3,
                    damage: 5,
                    poison: 0,
                },
                Event::PhaseChanged {
                    turn: 0,
                    phase: Phase::PostcombatMain,
                },
            ],
        },
        ServerMessage::Error {
            reply_to: Some(14),
            request: Some("attack".to_owned()),
            code: ErrorCode::OutOfRange,
            message: ErrorCode::OutOfRange.description().to_owned(),
        },
        ServerMessage::Replays {
            reply_to: 27,
            replays: vec![crate::ReplaySummary {
                table: TABLE,
                name: "Friday melee".to_owned(),
                created_at_ms: 1_795_000_000_000,
                finished_at_ms: 1_795_010_800_000,
                events: 15,
                password: false,
                league: None,
            }],
            total: 1,
            next: None,
        },
        ServerMessage::Replay {
            reply_to: 28,
            table: TABLE,
            name: "Friday melee".to_owned(),
            settings: view().settings,
            first_seq: 1,
            events: view_events()[..3].to_vec(),
            total_events: 15,
            next_seq: Some(4),
        },
        ServerMessage::PastEvents {
            reply_to: 30,
            table: TABLE,
            first_seq: 1,
            events: view_events()[..3].to_vec(),
            next_seq: Some(4),
        },
        ServerMessage::LeagueCreated {
            reply_to: 40,
            league: LEAGUE,
            organiser: ORGANISER,
        },
        ServerMessage::LeagueJoined {
            reply_to: 42,
            league: LEAGUE,
            member: 0,
            token: MEMBER_TOKEN,
        },
        ServerMessage::Leagues {
            reply_to: 41,
            leagues: vec![LeagueSummary {
                league: LEAGUE,
                name: "Tuesday Ascension".to_owned(),
                password: true,
                members: 8,
                games: 2,
            }],
            total: 1,
            next: None,
        },
        ServerMessage::League {
            reply_to: 43,
            league: LeagueView {
                league: LEAGUE,
                name: "Tuesday Ascension".to_owned(),
                password: true,
                created_at_ms: 1_795_000_000_000,
                standings: vec![MemberStanding::new(
                    0,
                    "Alice".to_owned(),
                    &Deck::fold(ledger().iter().map(|l| &l.entry)),
                )],
                games: vec![LeagueGame {
                    table: TABLE,
                    name: "Week 2".to_owned(),
                    created_at_ms: 1_795_600_000_000,
                    finished_at_ms: Some(1_795_610_800_000),
                }],
            },
            total_members: 1,
            total_games: 1,
            next: None,
        },
        ServerMessage::Deck {
            reply_to: 44,
            league: LEAGUE,
            member: 0,
            name: "Alice".to_owned(),
            deck: Deck::fold(ledger().iter().map(|l| &l.entry)),
            ledger: ledger(),
        },
        ServerMessage::IceServers {
            reply_to: Some(70),
            servers: vec![
                IceServer {
                    urls: vec!["stun:turn.example.org:3478".to_owned()],
                    username: None,
                    credential: None,
                },
                IceServer {
                    urls: vec![
                        "turn:turn.example.org:3478?transport=udp".to_owned(),
                        "turns:turn.example.org:5349".to_owned(),
                    ],
                    username: Some(
                        "1795086400:gm-5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50-0".to_owned(),
                    ),
                    credential: Some("BHLnDyvLIRdVkAMtLU5N7UQ6ccU=".to_owned()),
                },
            ],
        },
        ServerMessage::CameraPeers {
            peers: vec![
                CameraPeer {
                    peer: Peer::Player(0),
                    name: "Alice".to_owned(),
                    offer: false,
                },
                CameraPeer {
                    peer: Peer::Player(1),
                    name: "Bob".to_owned(),
                    offer: false,
                },
                CameraPeer {
                    peer: Peer::Display,
                    name: "display".to_owned(),
                    offer: true,
                },
            ],
        },
        ServerMessage::ServedAt {
            table: TABLE,
            url: "wss://node-b.melee.example/ws".to_owned(),
        },
        ServerMessage::Signal {
            from: Peer::Player(0),
            payload: SIGNAL_PAYLOAD.to_owned(),
        },
        day_standings(),
    ]
}

/// The standings of 2026-11-25's mountain, asked for after the day: its secret is the example
/// server's (mountain secret [`secret`]).
fn day_standings() -> ServerMessage {
    use crate::mountain_magic::day::Day;
    use crate::mountain_magic_types::{ClimbEnd, DayClimb};
    let day = Day::parse("2026-11-25").unwrap_or(Day(0));
    let day_secret = day.secret(&secret());
    let climb = |place, climber: &str, end, cards_left, table, finished_at_ms| DayClimb {
        place,
        climber: climber.to_owned(),
        member: None,
        end,
        cards_left,
        table: TableId::from_u128(table),
        finished_at_ms,
    };
    ServerMessage::MountainMagicStandings {
        reply_to: 77,
        day: day.to_string(),
        league: None,
        commitment: day_secret.commitment(),
        secret: Some(day_secret.to_hex()),
        standings: vec![
            climb(1, "Ada", ClimbEnd::Victory, 3, 0x11, 1_764_075_600_000),
            climb(2, "Brea", ClimbEnd::Defeat, 0, 0x12, 1_764_079_200_000),
            climb(3, "Cai", ClimbEnd::FailedClimb, 19, 0x13, 1_764_082_800_000),
        ],
        climbers: 3,
        climbs: 4,
        next: None,
    }
}

/// The payload of the `signal` examples: an ICE candidate, as the page sends it.
const SIGNAL_PAYLOAD: &str = r#"{"candidate":{"candidate":"candidate:1 1 udp 2122260223 192.168.1.20 54400 typ host","sdpMid":"0","sdpMLineIndex":0}}"#;

/// One example of every event.
pub fn events() -> Vec<Event> {
    vec![
        Event::PlayerJoined {
            player: 0,
            name: "Alice".to_owned(),
            entropy: "kitchen table 7".to_owned(),
            deck: None,
        },
        Event::PlayerLeft { player: 4 },
        Event::FirstPlayerChosen { by: 2, player: 2 },
        Event::GameStarted {
            seating: vec![2, 0, 3, 1],
            first_player: 0,
            turn_holders: vec![0],
            commitment: commitment(),
            first_player_chosen: false,
            first_decided_by: None,
            bonuses: Vec::new(),
            seating_mode: SeatingMode::Arranged,
        },
        Event::Mulliganed {
            player: 1,
            hand_size: 6,
        },
        Event::Kept {
            player: 1,
            hand_size: 6,
            reason: KeepReason::Decided,
        },
        Event::TurnBegan { turn: 0, player: 0 },
        Event::PhaseChanged {
            turn: 0,
            phase: Phase::Combat,
        },
        Event::Attacked {
            attacker: 0,
            defender: 3,
            damage: 5,
            poison: 1,
        },
        Event::DamageDealt {
            source: 0,
            target: 2,
            amount: 3,
        },
        Event::LifeChanged {
            player: 2,
            life: 12,
        },
        Event::PoisonChanged {
            player: 2,
            poison: 4,
        },
        Event::Eliminated {
            players: vec![3],
            cause: EliminationCause::Life,
        },
        Event::TurnMarkedForRemoval { turn: 1 },
        Event::TurnRemovalCancelled { turn: 1 },
        Event::TurnEnded {
            turn: 0,
            player: 0,
            reason: TurnEndReason::Finished,
        },
        Event::TurnPassed {
            turn: 0,
            from: 0,
            to: 1,
        },
        Event::TurnRemoved {
            turn: 1,
            player: 2,
            reason: TurnRemovalReason::Merged,
        },
        Event::PositionsRemoved { players: vec![3] },
        Event::GameAbandoned,
        Event::GameOver {
            standings: vec![
                Standing {
                    player: 0,
                    place: 1,
                    mana_points: 3,
                },
                Standing {
                    player: 2,
                    place: 2,
                    mana_points: 2,
                },
                Standing {
                    player: 1,
                    place: 3,
                    mana_points: 1,
                },
                Standing {
                    player: 3,
                    place: 4,
                    mana_points: 0,
                },
            ],
        },
        Event::DiceRevealed {
            secret: secret().to_hex(),
        },
        Event::ExtraTurnGranted {
            player: 0,
            before_next: false,
        },
        Event::ExtraTurnDeferred { player: 0 },
        Event::TurnKept { turn: 0, player: 0 },
        Event::AttackRolled {
            roll: 0,
            roller: 0,
            opponent: 3,
            counter: false,
            power: 4,
            opposing: vec![2, 3],
            natural: 9,
            modifier: 2,
            total: 11,
            result: RollResult::Hit,
            damage: 4,
            self_damage: 0,
        },
        Event::ConnectionChanged {
            player: 3,
            connected: false,
        },
        Event::HostChanged { player: Some(1) },
        Event::SpectatorsChanged { spectators: 2 },
        Event::Chat {
            from: Some(0),
            name: "Alice".to_owned(),
            text: "gl hf".to_owned(),
        },
        Event::TablePaused { paused: true },
        Event::TableAdjourned { adjourned: true },
        Event::ResumeRequested { player: 2 },
        Event::PlayerAbsent { player: 3 },
        Event::PlayerKicked {
            player: 3,
            banned: true,
        },
        Event::PlayerMuted {
            player: Some(2),
            muted: true,
        },
        Event::HostCalled {
            player: 1,
            reason: "Carol says her Wrath resolved before my Regrowth".to_owned(),
        },
        Event::HostAnswered { player: Some(1) },
        Event::MagicTechDeckDeclared {
            player: 1,
            size: 60,
        },
        Event::MagicTechPhaseBegan {
            player: 1,
            phase: MtPhase::Deploy,
        },
        Event::MagicTechDrew {
            player: 1,
            count: 2,
        },
        Event::MagicTechDeployed {
            player: 1,
            card: 0,
            land: Some(mt_forest()),
        },
        Event::MagicTechTapped { card: 0, mana: 1 },
        Event::MagicTechPaid {
            player: 1,
            card: Some(1),
            amount: 1,
        },
        Event::MagicTechRevealed {
            card: 1,
            face: mt_bears(),
            cost: 2,
        },
        Event::MagicTechRelocated {
            card: 1,
            area: Area::Patrol,
        },
        Event::MagicTechMissionBegan {
            player: 1,
            attackers: vec![1],
            target: Target::Stockpile { player: 2 },
        },
        Event::MagicTechBlocked { blocks: Vec::new() },
        Event::MagicTechDamaged {
            target: Target::Stockpile { player: 2 },
            amount: 2,
            effect: 2,
        },
        Event::MagicTechDestroyed {
            card: 4,
            buried: false,
        },
        Event::MagicTechMissionEnded { tapped: vec![1] },
        Event::MagicTechScrapped {
            player: 2,
            count: 2,
        },
        Event::MagicTechRecovered {
            player: 2,
            count: 1,
        },
        Event::MagicTechHealed { card: 1, amount: 1 },
        Event::MagicTechLeftPlay {
            card: 1,
            to: Zone::Hand,
        },
        Event::MagicTechProposed {
            player: 1,
            correction: Correction::Damage { card: 1, damage: 0 },
        },
        Event::MagicTechDeclined { player: 2 },
        Event::MagicTechCorrected {
            correction: Correction::Damage { card: 1, damage: 0 },
            by: Some(2),
        },
        Event::MagicTechRanOut { player: 2 },
        Event::MountainMagicDealt {
            bottom: vec![21, 34, 8, 40, 27, 12, 45],
            spells: 38,
            lands: 20,
        },
        Event::MountainMagicFlipped { card: 30 },
        Event::MountainMagicPlaced {
            card: 30,
            row: 1,
            pos: 2,
            from_discard: false,
        },
        Event::MountainMagicDiscarded { card: 31 },
        Event::MountainMagicClimbFailed,
        Event::MountainMagicPathChosen {
            path: vec![0, 1, 1, 2, 2, 3, 3],
        },
        Event::MountainMagicOccupiersRevealed {
            cards: vec![50, 51, 52, 53, 54],
        },
        Event::MountainMagicManaDrawn {
            side: Side::Player,
            land: 3,
        },
        Event::MountainMagicLandDestroyed { side: Side::Player },
        Event::MountainMagicManaPlaced {
            side: Side::Player,
            place: ManaPlace {
                force: 2,
                ability: false,
                colour: Colour::Red,
            },
        },
        Event::MountainMagicManaUnused {
            side: Side::Opponent,
        },
        Event::MountainMagicUpkeepPaid {
            card: ForceRef {
                side: Side::Player,
                force: 1,
            },
            land: 5,
        },
        Event::MountainMagicUsed {
            card: ForceRef {
                side: Side::Player,
                force: 4,
            },
            ability: false,
            target: Some(ForceRef {
                side: Side::Opponent,
                force: 2,
            }),
        },
        Event::MountainMagicAttacked {
            attackers: vec![ForceRef {
                side: Side::Opponent,
                force: 0,
            }],
            target: ForceRef {
                side: Side::Player,
                force: 3,
            },
        },
        Event::MountainMagicRemoved {
            card: ForceRef {
                side: Side::Player,
                force: 3,
            },
            why: Removal::Killed,
        },
        Event::MountainMagicUnpowered {
            card: ForceRef {
                side: Side::Opponent,
                force: 1,
            },
        },
        Event::MountainMagicUntapped {
            card: ForceRef {
                side: Side::Player,
                force: 0,
            },
        },
        Event::MountainMagicLandsDiscarded {
            side: Side::Opponent,
            lands: vec![7, 9],
        },
        Event::MountainMagicLandDoomed {
            side: Side::Opponent,
        },
        Event::MountainMagicPoolEmptied {
            side: Side::Opponent,
        },
        Event::MountainMagicDrewFromMountain {
            cards: vec![Spot { row: 5, pos: 0 }, Spot { row: 5, pos: 1 }],
        },
        Event::MountainMagicTurnEnded { side: Side::Player },
        Event::MountainMagicEnded {
            ending: Ending::Victory,
        },
    ]
}

/// The bytes as lower-case hex pairs, sixteen to a line.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .chunks(16)
        .map(|line| {
            line.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}
