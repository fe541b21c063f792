//! Mountain Magic behind the game seam: a table of one seat played through
//! `Session<MountainMagic>` with wire requests, from the lobby to one of the endings; refusals
//! that change nothing; the journal recovering the same table; a client's mirror following the
//! snapshots.
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use grand_melee_protocol::dice::{Dice, DiceSecret, entropy_digest};
use grand_melee_protocol::game::{Game, GameKind};
use grand_melee_protocol::mountain_magic::pool::{Deck, DeckFile, Pool};
use grand_melee_protocol::mountain_magic::{Deal, MountainMagic};
use grand_melee_protocol::mountain_magic_types::{
    MmPhase, MountainCommand, MountainMagicSettings, Outcome,
};
use grand_melee_protocol::rules::{Actor, Authority, Command};
use grand_melee_protocol::session::{Effect, Session, Timing};
use grand_melee_protocol::shell::Stage;
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Event, Mirror, SeatToken, Settings, TableId, TableView,
};
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TABLE: u128 = 31;

fn settings() -> Settings {
    Settings {
        seats: 1,
        game: GameKind::MountainMagic,
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

/// A one-seat session, its journal, and a mirror built from the lobby's snapshot.
struct Table {
    t0: Instant,
    seed: u64,
    session: Session<MountainMagic>,
    journal: Vec<(u64, Event)>,
    effects: Vec<Effect>,
    mirror: Mirror<MountainMagic>,
    /// A mirror built from a snapshot taken in the middle of the climb, if one was.
    late: Option<Mirror<MountainMagic>>,
    next_id: u32,
}

impl Table {
    /// Ann sits at a new table (connection 1, so she is its host too).
    fn seated(seed: u64) -> Self {
        let t0 = Instant::now();
        let mut session: Session<MountainMagic> =
            Session::new(settings(), DiceSecret::from_seed(seed), timing(), t0).unwrap();
        let mirror = Mirror::of(&session.view(TableId::from_u128(TABLE), "climb")).unwrap();
        session
            .join(
                t0,
                1,
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                "Ann".to_owned(),
                "ann's entropy".to_owned(),
                None,
                SeatToken::new_random(),
            )
            .unwrap();
        let mut table = Self {
            t0,
            seed,
            session,
            journal: Vec::new(),
            effects: Vec::new(),
            mirror,
            late: None,
            next_id: 0,
        };
        table.drain();
        table
    }

    fn view(&self) -> TableView {
        self.session.view(TableId::from_u128(TABLE), "climb")
    }

    /// Records what the session published and folds its events into the mirror.
    fn drain(&mut self) {
        while let Some(effect) = self.session.poll_effect() {
            if let Effect::Events { first_seq, events } = &effect {
                for (k, event) in events.iter().enumerate() {
                    let seq = first_seq + k as u64;
                    self.mirror.apply(seq, event).unwrap();
                    if let Some(late) = self.late.as_mut() {
                        late.apply(seq, event).unwrap();
                    }
                    self.journal.push((seq, event.clone()));
                }
            }
            self.effects.push(effect);
        }
    }

    fn send(&mut self, message: ClientMessage) -> Result<u64, ErrorCode> {
        self.next_id += 1;
        let mut message = message;
        *message.id_mut() = self.next_id;
        let result = self.session.request(self.t0, 1, &message);
        self.drain();
        result
    }

    /// A request accepted: the mirror still shows what the server shows.
    fn ok(&mut self, message: ClientMessage) {
        let name = message.name();
        if let Err(code) = self.send(message) {
            panic!("{name} refused: {code:?}");
        }
        assert_eq!(self.mirror.view(), self.view(), "the mirror after {name}");
    }

    /// A request refused with `code`: nothing was published and nothing changed.
    fn refused(&mut self, message: ClientMessage, code: ErrorCode) {
        let before = self.view();
        let journal = self.journal.len();
        let name = message.name();
        assert_eq!(self.send(message), Err(code), "{name}");
        assert_eq!(self.journal.len(), journal, "{name} published events");
        assert_eq!(self.view(), before, "{name} changed the table");
    }

    fn start(&mut self) {
        self.ok(ClientMessage::Start {
            id: 0,
            first_player: None,
            seating: Default::default(),
            order: Vec::new(),
        });
    }

    fn climb(&self) -> &grand_melee_protocol::mountain_magic::Climb {
        self.session.table().climb()
    }

    /// The journal, folded again into a new session, shows the same table.
    fn recovered(&self) -> TableView {
        let recovered: Session<MountainMagic> = Session::recover(
            settings(),
            DiceSecret::from_seed(self.seed),
            timing(),
            self.journal.clone(),
            &[],
            Vec::new(),
            self.t0,
        )
        .unwrap();
        recovered.view(TableId::from_u128(TABLE), "climb")
    }
}

fn mm(command: MountainCommand) -> ClientMessage {
    ClientMessage::mountain_magic(0, command)
}

/// Plays a climb to its end with random legal moves, sending a refused request now and then.
fn play_out(table: &mut Table, rng: &mut ChaCha8Rng) {
    let mut steps = 0;
    while table.session.table().stage() == Stage::Playing {
        let moves = table.climb().legal_moves();
        assert!(!moves.is_empty(), "a climb under way offers no move");
        // Now and then, a request the climb does not take now: refused, changing nothing.
        if rng.random_bool(0.1) {
            let wrong = [
                MountainCommand::Flip,
                MountainCommand::Discard,
                MountainCommand::EndTurn,
                MountainCommand::Place { row: 6, pos: 1 },
                MountainCommand::Path { path: vec![0; 3] },
            ]
            .into_iter()
            .find(|c| !moves.contains(c));
            if let Some(wrong) = wrong {
                let before = table.view();
                let sent = table.send(mm(wrong.clone()));
                assert!(sent.is_err(), "{wrong:?} was taken though not offered");
                assert_eq!(table.view(), before);
            }
        }
        let chosen = moves.choose(rng).unwrap().clone();
        table.ok(mm(chosen));
        steps += 1;
        // A client arriving now builds its mirror from the snapshot and follows from there.
        if steps == 60 {
            table.late = Some(Mirror::of(&table.view()).unwrap());
        }
        assert!(steps < 20_000, "the climb does not end");
    }
}

#[test]
fn a_session_plays_climbs_through_their_battles_to_an_ending_and_the_journal_recovers_them() {
    let mut battles = 0;
    let mut late_mirrors = 0;
    for seed in 0..12 {
        let mut table = Table::seated(seed);
        table.start();
        let view = table.view();
        let climb = view.mountain_magic.as_deref().unwrap();
        assert_eq!(climb.phase, MmPhase::Climbing, "the start deals the climb");
        assert_eq!(climb.mountain[0].iter().flatten().count(), 7);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        play_out(&mut table, &mut rng);
        let view = table.view();
        assert!(table.effects.contains(&Effect::Finished));
        let outcome = view.mountain_magic.as_deref().unwrap().outcome.unwrap();
        if matches!(outcome, Outcome::Battle { .. }) {
            battles += 1;
        }
        assert_eq!(view.standings.len(), 1);
        assert_eq!(view.standings[0].player, 0);
        // The dice are revealed, and they deal the same climb again.
        let secret = DiceSecret::from_seed(seed);
        assert_eq!(view.dice_secret.as_deref(), Some(secret.to_hex().as_str()));
        assert_eq!(table.mirror.view(), view);
        if let Some(late) = &table.late {
            assert_eq!(late.view(), view, "the mirror of a mid-climb snapshot");
            late_mirrors += 1;
        }
        assert_eq!(table.recovered(), view, "seed {seed}");
        // After the end the climb takes no request.
        table.refused(mm(MountainCommand::Flip), ErrorCode::NotPlaying);
    }
    assert!(battles > 0, "no random climb reached the battle");
    assert!(
        late_mirrors > 0,
        "no climb was long enough for a mid-climb mirror"
    );
}

#[test]
fn a_recovered_session_goes_on_deciding_as_the_original_would() {
    for seed in [2, 7] {
        let mut table = Table::seated(seed);
        table.start();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Stop somewhere in the climb or the battle, then recover from the journal.
        let stop = 40 + usize::try_from(seed).unwrap() * 30;
        for _ in 0..stop {
            if table.session.table().stage() != Stage::Playing {
                break;
            }
            let moves = table.climb().legal_moves();
            table.ok(mm(moves.choose(&mut rng).unwrap().clone()));
        }
        let recovered: Session<MountainMagic> = Session::recover(
            settings(),
            DiceSecret::from_seed(seed),
            timing(),
            table.journal.clone(),
            &[],
            Vec::new(),
            table.t0,
        )
        .unwrap();
        // The recovered table offers the same moves, and every one is decided the same.
        let moves = table.climb().legal_moves();
        assert_eq!(recovered.table().climb().legal_moves(), moves);
        for command in moves {
            let mut original = table.session.table().clone();
            let mut again = recovered.table().clone();
            assert_eq!(
                again.handle(Actor::Player(0), Command::MountainMagic(command.clone())),
                original.handle(Actor::Player(0), Command::MountainMagic(command)),
            );
        }
    }
}

#[test]
fn the_same_dice_deal_the_same_mountain_and_other_dice_another() {
    let bottom = |seed| {
        let mut table = Table::seated(seed);
        table.start();
        table.view().mountain_magic.unwrap().mountain[0].clone()
    };
    assert_eq!(bottom(5), bottom(5));
    assert_ne!(bottom(5), bottom(6));
}

#[test]
fn refused_requests_change_nothing() {
    let mut table = Table::seated(3);
    // Before the start.
    table.refused(mm(MountainCommand::Flip), ErrorCode::NotPlaying);
    table.refused(ClientMessage::Mulligan { id: 0 }, ErrorCode::NotMulliganing);
    // One seat: a second player finds the table full.
    assert_eq!(
        table.session.join(
            table.t0,
            2,
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            "Bob".to_owned(),
            String::new(),
            None,
            SeatToken::new_random(),
        ),
        Err(ErrorCode::TableFull)
    );
    table.start();
    // Nothing turned over yet: nothing to place or discard.
    table.refused(
        mm(MountainCommand::Place { row: 1, pos: 0 }),
        ErrorCode::WrongPhase,
    );
    table.refused(mm(MountainCommand::Discard), ErrorCode::WrongPhase);
    table.refused(
        mm(MountainCommand::Path { path: vec![0; 7] }),
        ErrorCode::WrongPhase,
    );
    table.refused(mm(MountainCommand::EndTurn), ErrorCode::WrongPhase);
    table.ok(mm(MountainCommand::Flip));
    table.refused(mm(MountainCommand::Flip), ErrorCode::WrongPhase);
    // No place of row 1 has two cards under it past the row's end, and row 2 has nothing
    // under it yet.
    table.refused(
        mm(MountainCommand::Place { row: 1, pos: 6 }),
        ErrorCode::IllegalPlacement,
    );
    table.refused(
        mm(MountainCommand::Place { row: 2, pos: 0 }),
        ErrorCode::IllegalPlacement,
    );
    // Another game's requests and the shell's turn commands are not a climb's.
    table.refused(
        ClientMessage::MagicTechNextPhase { id: 0 },
        ErrorCode::BadMessage,
    );
    table.refused(ClientMessage::EndTurn { id: 0 }, ErrorCode::BadMessage);
    // The climb goes on from where it stood.
    let moves = table.climb().legal_moves();
    assert!(moves.contains(&MountainCommand::Discard));
    table.ok(mm(MountainCommand::Discard));
    assert_eq!(table.recovered(), table.view());
}

#[test]
fn a_conceded_climb_ends_and_the_host_may_abandon_one() {
    let mut table = Table::seated(4);
    table.start();
    table.ok(mm(MountainCommand::Flip));
    table.ok(ClientMessage::Concede { id: 0 });
    assert_eq!(table.session.table().stage(), Stage::Finished);
    assert!(table.effects.contains(&Effect::Finished));
    assert_eq!(table.recovered(), table.view());

    let mut game = MountainMagic::create(&settings(), DiceSecret::from_seed(8)).unwrap();
    game.handle(Actor::Host, Command::join("Ann")).unwrap();
    assert_eq!(
        game.handle(Actor::Player(0), Command::Abandon),
        Err(ErrorCode::NotHost)
    );
    assert_eq!(
        game.handle(Actor::Host, Command::Abandon),
        Err(ErrorCode::NotPlaying)
    );
    game.handle(Actor::Host, Command::start(None)).unwrap();
    let events = game.handle(Actor::Host, Command::Abandon).unwrap();
    assert_eq!(events.first(), Some(&Event::GameAbandoned));
    assert_eq!(game.stage(), Stage::Finished);
}

#[test]
fn a_table_s_own_deck_is_checked_at_creation_and_dealt_by_the_dice() {
    let pool = Pool::builtin();
    // A deck file, and the deck it reads as (in the file's order).
    let drawn = Deck::default_from_dice(pool, &Dice::new(DiceSecret::from_seed(99), [7; 32]));
    let own = Deck::from_file(pool, &drawn.to_file(pool)).unwrap();
    let with_deck = |deck: DeckFile| Settings {
        mountain_magic: Some(MountainMagicSettings {
            deck: Some(deck),
            ..MountainMagicSettings::default()
        }),
        ..settings()
    };
    // A deck that breaks the recipe (a card short), or names a card not in the pool, makes
    // no table; another game takes no Mountain Magic settings.
    let mut short = own.to_file(pool);
    short.cards[0].count -= 1;
    let mut unknown = own.to_file(pool);
    unknown.cards[0].name = "No Such Card".to_owned();
    for bad in [
        with_deck(short),
        with_deck(unknown),
        Settings {
            game: GameKind::MagicTech,
            seats: 2,
            ..with_deck(own.to_file(pool))
        },
    ] {
        assert_eq!(
            MountainMagic::create(&bad, DiceSecret::from_seed(1)).err(),
            Some(ErrorCode::BadSettings)
        );
    }
    let melee = Settings {
        game: GameKind::GrandMelee,
        seats: 4,
        ..with_deck(own.to_file(pool))
    };
    assert_eq!(
        grand_melee_protocol::rules::Table::create(&melee, DiceSecret::from_seed(1)).err(),
        Some(ErrorCode::BadSettings)
    );
    // The table deals the own deck, as the dice shuffle it.
    let secret = DiceSecret::from_seed(5);
    let mut game = MountainMagic::create(&with_deck(own.to_file(pool)), secret).unwrap();
    let entropy = "ann's entropy";
    game.handle(
        Actor::Host,
        Command::Join {
            name: "Ann".to_owned(),
            entropy: entropy.to_owned(),
            deck: None,
        },
    )
    .unwrap();
    game.handle(Actor::Host, Command::start(None)).unwrap();
    let deal = Deal::from_dice(pool, &own, &Dice::new(secret, entropy_digest([entropy])));
    let bottom: Vec<_> = game.climb().view().mountain[0]
        .iter()
        .flatten()
        .copied()
        .collect();
    assert_eq!(bottom, deal.spells[..7].to_vec());
    assert_eq!(game.climb().deal(), Some(&deal));
    let default = Deck::default_from_dice(pool, &Dice::new(secret, entropy_digest([entropy])));
    assert_ne!(
        default, own,
        "the own deck is not the one the dice would draw"
    );
}

#[test]
fn only_one_seat_and_no_league_make_a_climb() {
    for bad in [
        Settings {
            seats: 2,
            ..settings()
        },
        Settings {
            combat_dice: true,
            ..settings()
        },
        Settings {
            game: GameKind::MagicTech,
            ..settings()
        },
    ] {
        assert_eq!(
            MountainMagic::create(&bad, DiceSecret::from_seed(1)).err(),
            Some(ErrorCode::BadSettings)
        );
    }
}

#[test]
fn every_mountain_magic_request_is_a_player_s_mountain_magic_command() {
    let commands = [
        MountainCommand::Flip,
        MountainCommand::Place { row: 1, pos: 2 },
        MountainCommand::Discard,
        MountainCommand::Path { path: vec![0; 7] },
        MountainCommand::Mana { place: None },
        MountainCommand::Attack {
            attackers: vec![0, 1],
            target: 2,
        },
        MountainCommand::Cast {
            force: 1,
            target: None,
        },
        MountainCommand::Activate {
            force: 0,
            target: None,
        },
        MountainCommand::EndTurn,
    ];
    let mut names = Vec::new();
    for command in commands {
        let request = ClientMessage::mountain_magic(9, command.clone());
        assert_eq!(request.id(), 9);
        assert!(request.name().starts_with("mountain_magic."));
        names.push(request.name());
        assert_eq!(
            request.command(),
            Some((Authority::Player, Command::MountainMagic(command)))
        );
    }
    names.dedup();
    assert_eq!(names.len(), 9);
    let wire: Vec<&str> = ClientMessage::NAMES
        .iter()
        .copied()
        .filter(|n| n.starts_with("mountain_magic.") && *n != "mountain_magic.standings")
        .collect();
    assert_eq!(wire, names);
}
