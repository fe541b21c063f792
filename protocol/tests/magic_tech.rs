//! Magic Tech's rules (docs/RULES.md, "Magic Tech"): one test per rule, accepted and refused
//! (a refusal changes nothing), and a property test over random legal games.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::game::{Game, GameKind};
use grand_melee_protocol::magic_tech::MagicTech;
use grand_melee_protocol::magic_tech_types::{
    Area, Block, CardFace, CardId, CardType, Colour, Correction, Keywords, MagicTechCommand as C,
    ManaCost, MtPhase, Target, Zone,
};
use grand_melee_protocol::rules::{Actor, Command};
use grand_melee_protocol::shell::Stage;
use grand_melee_protocol::{ErrorCode, Event, Mirror, PlayerId, Ruling, Settings, TableId};
use proptest::prelude::*;
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ANN: PlayerId = 0;
const BOB: PlayerId = 1;

fn settings() -> Settings {
    Settings {
        seats: 2,
        game: GameKind::MagicTech,
        ..Settings::default()
    }
}

fn view(game: &MagicTech) -> grand_melee_protocol::TableView {
    game.view(TableId::from_u128(7), "tech", 0, &settings())
}

/// A game and its journal; every accepted command is checked against the replay of the
/// journal, every refusal against the state before it.
struct Play {
    game: MagicTech,
    journal: Vec<Event>,
}

impl Play {
    fn lobby() -> Self {
        let game = MagicTech::create(&settings(), DiceSecret::from_seed(3)).unwrap();
        let mut play = Self {
            game,
            journal: Vec::new(),
        };
        play.ok(Actor::Host, Command::join("Ann"));
        play.ok(Actor::Host, Command::join("Bob"));
        play
    }

    /// Ann (deck 40) and Bob (deck 30) kept their five cards; Ann is in her first upkeep.
    fn started() -> Self {
        let mut play = Self::lobby();
        play.ok(Actor::Player(ANN), deck(40));
        play.ok(Actor::Player(BOB), deck(30));
        play.ok(Actor::Host, Command::start(Some(ANN)));
        play.ok(Actor::Player(ANN), Command::Keep);
        play.ok(Actor::Player(BOB), Command::Keep);
        play
    }

    fn ok(&mut self, actor: Actor, command: Command) -> Vec<Event> {
        let events = self
            .game
            .handle(actor, command.clone())
            .unwrap_or_else(|e| panic!("{command:?} by {actor:?} refused: {e:?}"));
        self.journal.extend(events.iter().cloned());
        assert_eq!(
            view(&self.replayed()),
            view(&self.game),
            "replay after {command:?}"
        );
        events
    }

    fn refused(&mut self, actor: Actor, command: Command, code: ErrorCode) {
        let before = view(&self.game);
        assert_eq!(
            self.game.handle(actor, command.clone()),
            Err(code),
            "{command:?}"
        );
        assert_eq!(view(&self.game), before, "{command:?} changed the table");
    }

    fn replayed(&self) -> MagicTech {
        let mut game = MagicTech::create(&settings(), DiceSecret::from_seed(3)).unwrap();
        for event in &self.journal {
            game.apply(event).unwrap();
        }
        game
    }

    fn mt(&mut self, player: PlayerId, command: C) -> Vec<Event> {
        self.ok(Actor::Player(player), Command::MagicTech(command))
    }

    fn mt_refused(&mut self, player: PlayerId, command: C, code: ErrorCode) {
        self.refused(Actor::Player(player), Command::MagicTech(command), code);
    }

    fn active(&self) -> PlayerId {
        self.game.board().active.unwrap()
    }

    fn phase(&self) -> MtPhase {
        self.game.board().phase.unwrap()
    }

    /// The active player moves on until his turn is in `phase`.
    fn advance_to(&mut self, phase: MtPhase) {
        let player = self.active();
        while self.phase() != phase {
            self.mt(player, C::NextPhase);
            assert_eq!(self.active(), player, "the turn passed before {phase:?}");
        }
    }

    /// The active player ends his turn.
    fn pass(&mut self) {
        let player = self.active();
        self.ok(Actor::Player(player), Command::EndTurn);
    }

    /// In the active player's deploy phase: a face-down card, funded by the host's correction,
    /// revealed as `face`.
    fn put_in_play(&mut self, face: CardFace) -> CardId {
        let player = self.active();
        self.advance_to(MtPhase::Deploy);
        let card = self.game.board().next_card;
        self.mt(player, C::Deploy { land: None });
        let cost = face.cost.to_pay(&self.game.basics(player));
        let counters = u8::try_from(cost).unwrap();
        self.rule(Correction::Counters { card, counters });
        self.mt(player, C::Reveal { card, face });
        card
    }

    fn rule(&mut self, correction: Correction) -> Vec<Event> {
        self.ok(Actor::Host, Command::MagicTech(C::Rule { correction }))
    }

    fn land(&mut self, colour: Colour) -> CardId {
        let player = self.active();
        self.advance_to(MtPhase::Deploy);
        let card = self.game.board().next_card;
        self.mt(
            player,
            C::Deploy {
                land: Some(basic(colour)),
            },
        );
        card
    }

    fn side(&self, player: PlayerId) -> grand_melee_protocol::magic_tech_types::SideView {
        self.game.side(player).unwrap().clone()
    }

    fn card(&self, card: CardId) -> Option<grand_melee_protocol::magic_tech_types::CardView> {
        self.game.card(card).cloned()
    }
}

fn deck(size: u8) -> Command {
    Command::MagicTech(C::DeclareDeck { size })
}

fn basic(colour: Colour) -> CardFace {
    let name = format!("{colour:?} basic");
    CardFace {
        name,
        card_type: CardType::Land,
        cost: ManaCost::default(),
        power: 0,
        toughness: 0,
        basic: Some(colour),
        keywords: Keywords::default(),
    }
}

fn creature(name: &str, generic: u8, coloured: &[Colour], power: u8, toughness: u8) -> CardFace {
    CardFace {
        name: name.to_owned(),
        card_type: CardType::Creature,
        cost: ManaCost {
            generic,
            coloured: coloured.to_vec(),
        },
        power,
        toughness,
        basic: None,
        keywords: Keywords::default(),
    }
}

fn with(mut face: CardFace, keywords: Keywords) -> CardFace {
    face.keywords = keywords;
    face
}

fn of_type(name: &str, card_type: CardType, generic: u8) -> CardFace {
    CardFace {
        card_type,
        power: 0,
        toughness: 0,
        ..creature(name, generic, &[], 0, 0)
    }
}

// ----- Setup -----------------------------------------------------------------------------------

#[test]
fn a_magic_tech_table_has_two_seats_and_no_league() {
    for seats in [1, 3, 40] {
        let settings = Settings {
            seats,
            ..settings()
        };
        assert_eq!(
            MagicTech::create(&settings, DiceSecret::from_seed(1)).err(),
            Some(ErrorCode::BadSettings)
        );
    }
    let grand_melee = Settings {
        game: GameKind::GrandMelee,
        ..settings()
    };
    assert!(MagicTech::create(&grand_melee, DiceSecret::from_seed(1)).is_err());
    let mut play = Play::lobby();
    play.refused(Actor::Host, Command::join("Cat"), ErrorCode::TableFull);
}

#[test]
fn decks_are_declared_up_to_sixty_before_the_start_and_both_draw_five() {
    let mut play = Play::lobby();
    play.refused(Actor::Player(ANN), deck(61), ErrorCode::BadAmount);
    play.refused(Actor::Player(ANN), deck(4), ErrorCode::BadAmount);
    play.ok(Actor::Player(ANN), deck(60));
    play.refused(Actor::Host, Command::start(None), ErrorCode::NoDeckSize);
    play.ok(Actor::Player(BOB), deck(5));
    play.refused(Actor::Player(ANN), Command::start(None), ErrorCode::NotHost);
    play.ok(Actor::Host, Command::start(Some(BOB)));
    assert_eq!(play.game.stage(), Stage::Mulligan { kept: 0 });
    assert_eq!((play.side(ANN).hand, play.side(ANN).stockpile), (5, 55));
    assert_eq!((play.side(BOB).hand, play.side(BOB).stockpile), (5, 0));
    play.refused(Actor::Player(ANN), deck(20), ErrorCode::GameStarted);
}

#[test]
fn the_dice_draw_the_first_player_when_the_host_does_not_choose() {
    let firsts: Vec<PlayerId> = (0..16)
        .map(|seed| {
            let mut game = MagicTech::create(&settings(), DiceSecret::from_seed(seed)).unwrap();
            game.handle(Actor::Host, Command::join("Ann")).unwrap();
            game.handle(Actor::Host, Command::join("Bob")).unwrap();
            for p in [ANN, BOB] {
                game.handle(Actor::Player(p), deck(20)).unwrap();
            }
            let events = game.handle(Actor::Host, Command::start(None)).unwrap();
            let Some(Event::GameStarted {
                first_player,
                first_player_chosen,
                commitment,
                ..
            }) = events.first()
            else {
                panic!("no start")
            };
            assert!(!first_player_chosen);
            assert_eq!(*commitment, DiceSecret::from_seed(seed).commitment());
            *first_player
        })
        .collect();
    assert!(firsts.contains(&ANN) && firsts.contains(&BOB), "{firsts:?}");
}

#[test]
fn paris_mulligans_the_first_player_decides_first_then_the_other() {
    let mut play = Play::lobby();
    play.ok(Actor::Player(ANN), deck(40));
    play.ok(Actor::Player(BOB), deck(30));
    play.ok(Actor::Host, Command::start(Some(BOB)));
    assert_eq!(play.game.deciders(), vec![BOB]);
    play.refused(
        Actor::Player(ANN),
        Command::Mulligan,
        ErrorCode::NotYourDecision,
    );
    play.ok(Actor::Player(BOB), Command::Mulligan);
    assert_eq!((play.side(BOB).hand, play.side(BOB).stockpile), (4, 26));
    play.ok(Actor::Player(BOB), Command::Keep);
    assert_eq!(play.game.deciders(), vec![ANN]);
    play.refused(
        Actor::Player(BOB),
        Command::Mulligan,
        ErrorCode::NotYourDecision,
    );
    for hand in (0..5).rev() {
        play.ok(Actor::Player(ANN), Command::Mulligan);
        assert_eq!(play.side(ANN).hand, hand);
    }
    play.refused(
        Actor::Player(ANN),
        Command::Mulligan,
        ErrorCode::NoCardsLeft,
    );
    play.ok(Actor::Player(ANN), Command::Keep);
    // Bob plays first: his first turn draws one.
    assert_eq!(play.game.stage(), Stage::Playing);
    assert_eq!(play.active(), BOB);
    assert_eq!(play.phase(), MtPhase::Upkeep);
    assert_eq!((play.side(BOB).hand, play.side(BOB).stockpile), (5, 25));
    assert_eq!(play.game.card_count(ANN), Some(40));
}

// ----- Turn structure and limits ---------------------------------------------------------------

#[test]
fn the_first_turn_draws_one_and_deploys_one_later_turns_draw_two_and_deploy_two() {
    let mut play = Play::started();
    assert_eq!(play.side(ANN).hand, 6);
    play.mt_refused(ANN, C::Deploy { land: None }, ErrorCode::WrongPhase);
    play.advance_to(MtPhase::Deploy);
    play.mt_refused(BOB, C::Deploy { land: None }, ErrorCode::NotYourTurn);
    play.mt(ANN, C::Deploy { land: None });
    play.mt_refused(ANN, C::Deploy { land: None }, ErrorCode::LimitReached);
    // Lands do not count against deployments: two a turn, face up at once.
    let forest = play.land(Colour::Green);
    play.land(Colour::Red);
    assert!(play.card(forest).unwrap().face.is_some());
    play.mt_refused(
        ANN,
        C::Deploy {
            land: Some(basic(Colour::Blue)),
        },
        ErrorCode::LimitReached,
    );
    assert_eq!(play.side(ANN).hand, 3);
    play.pass();
    assert_eq!(play.active(), BOB);
    assert_eq!((play.side(BOB).hand, play.side(BOB).stockpile), (7, 23));
    play.advance_to(MtPhase::Deploy);
    play.mt(BOB, C::Deploy { land: None });
    play.mt(BOB, C::Deploy { land: None });
    play.mt_refused(BOB, C::Deploy { land: None }, ErrorCode::LimitReached);
}

#[test]
fn a_land_must_be_declared_as_a_land_costing_nothing() {
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let bears = creature("Grizzly Bears", 1, &[Colour::Green], 2, 2);
    play.mt_refused(ANN, C::Deploy { land: Some(bears) }, ErrorCode::BadCard);
    let mut costly = basic(Colour::Green);
    costly.cost.generic = 1;
    play.mt_refused(ANN, C::Deploy { land: Some(costly) }, ErrorCode::BadCard);
    let mut unnamed = basic(Colour::Green);
    unnamed.name.clear();
    play.mt_refused(
        ANN,
        C::Deploy {
            land: Some(unnamed),
        },
        ErrorCode::BadCard,
    );
}

#[test]
fn next_phase_runs_the_turn_in_order_and_the_end_passes_it() {
    let mut play = Play::started();
    let mut seen = vec![play.phase()];
    play.mt_refused(BOB, C::NextPhase, ErrorCode::NotYourTurn);
    while play.active() == ANN {
        play.mt(ANN, C::NextPhase);
        if play.active() == ANN {
            seen.push(play.phase());
        }
    }
    assert_eq!(seen, [MtPhase::Upkeep, MtPhase::Deploy, MtPhase::Missions]);
    let turn: Vec<_> = play.journal.iter().rev().take(8).cloned().collect();
    assert!(turn.iter().any(|e| matches!(
        e,
        Event::MagicTechPhaseBegan {
            player: ANN,
            phase: MtPhase::End
        }
    )));
    assert_eq!(play.phase(), MtPhase::Upkeep);
    assert_eq!(play.game.running(), vec![(0, BOB)]);
}

/// A turn's events carry its number, as the board counts it (`turn_number`): a log says "turn 3"
/// where the board does. A journal written before (every `turn` 0) still folds.
#[test]
fn turns_begin_and_end_with_the_boards_turn_number() {
    let mut play = Play::started();
    play.pass();
    play.pass();
    let turns: Vec<(&str, u8, PlayerId)> = play
        .journal
        .iter()
        .filter_map(|e| match e {
            Event::TurnBegan { turn, player } => Some(("began", *turn, *player)),
            Event::TurnEnded { turn, player, .. } => Some(("ended", *turn, *player)),
            _ => None,
        })
        .collect();
    assert_eq!(
        turns,
        [
            ("began", 1, ANN),
            ("ended", 1, ANN),
            ("began", 2, BOB),
            ("ended", 2, BOB),
            ("began", 3, ANN)
        ]
    );
    assert_eq!(play.game.board().turn_number, 3);

    let old: Vec<Event> = play
        .journal
        .iter()
        .map(|e| match e {
            Event::TurnBegan { player, .. } => Event::TurnBegan {
                turn: 0,
                player: *player,
            },
            Event::TurnEnded { player, reason, .. } => Event::TurnEnded {
                turn: 0,
                player: *player,
                reason: *reason,
            },
            other => other.clone(),
        })
        .collect();
    let mut folded = MagicTech::create(&settings(), DiceSecret::from_seed(3)).unwrap();
    for event in &old {
        folded.apply(event).unwrap();
    }
    assert_eq!(view(&folded), view(&play.game));

    let mut wrong = play.replayed();
    wrong
        .apply(&Event::TurnEnded {
            turn: 2,
            player: ANN,
            reason: grand_melee_protocol::TurnEndReason::Finished,
        })
        .unwrap_err();
}

// ----- Paying and revealing -------------------------------------------------------------------

#[test]
fn tapping_lands_pays_counters_and_a_card_is_revealed_at_its_cost() {
    let mut play = Play::started();
    let forest = play.land(Colour::Green);
    let mountain = play.land(Colour::Red);
    let card = play.game.board().next_card;
    play.mt(ANN, C::Deploy { land: None });
    play.mt_refused(
        ANN,
        C::Tap {
            card: forest,
            mana: 2,
        },
        ErrorCode::BadAmount,
    );
    play.mt_refused(
        BOB,
        C::Tap {
            card: forest,
            mana: 1,
        },
        ErrorCode::NotYourCard,
    );
    play.mt(
        ANN,
        C::Tap {
            card: forest,
            mana: 1,
        },
    );
    play.mt_refused(
        ANN,
        C::Tap {
            card: forest,
            mana: 1,
        },
        ErrorCode::BadCard,
    );
    play.mt(
        ANN,
        C::Tap {
            card: mountain,
            mana: 1,
        },
    );
    assert_eq!(play.side(ANN).mana, 2);
    play.mt_refused(
        ANN,
        C::Pay {
            card: Some(card),
            amount: 3,
        },
        ErrorCode::NotEnoughMana,
    );
    play.mt(
        ANN,
        C::Pay {
            card: Some(card),
            amount: 1,
        },
    );
    // {1}{G} with a Forest in play costs 2: one counter is not enough.
    let bears = creature("Grizzly Bears", 1, &[Colour::Green], 2, 2);
    play.mt_refused(
        ANN,
        C::Reveal {
            card,
            face: bears.clone(),
        },
        ErrorCode::NotEnoughMana,
    );
    play.mt(
        ANN,
        C::Pay {
            card: Some(card),
            amount: 1,
        },
    );
    assert_eq!(play.card(card).unwrap().counters, 2);
    let events = play.mt(ANN, C::Reveal { card, face: bears });
    assert!(matches!(
        events[0],
        Event::MagicTechRevealed { cost: 2, .. }
    ));
    let revealed = play.card(card).unwrap();
    assert_eq!((revealed.counters, revealed.area), (0, Area::Deploy));
    // Unspent mana is lost when the phase ends.
    play.rule(Correction::Mana {
        player: ANN,
        mana: 3,
    });
    play.mt(ANN, C::NextPhase);
    assert_eq!(play.side(ANN).mana, 0);
}

#[test]
fn coloured_symbols_cost_three_each_without_their_basic_land() {
    let mut play = Play::started();
    play.land(Colour::Red);
    let card = play.game.board().next_card;
    play.mt(ANN, C::Deploy { land: None });
    let bears = creature("Grizzly Bears", 1, &[Colour::Green], 2, 2);
    play.rule(Correction::Counters { card, counters: 3 });
    play.mt_refused(
        ANN,
        C::Reveal {
            card,
            face: bears.clone(),
        },
        ErrorCode::NotEnoughMana,
    );
    play.rule(Correction::Counters { card, counters: 4 });
    let events = play.mt(ANN, C::Reveal { card, face: bears });
    assert!(matches!(
        events[0],
        Event::MagicTechRevealed { cost: 4, .. }
    ));
}

#[test]
fn sorceries_in_the_own_turn_instants_at_any_time_other_cards_in_the_deploy_phase() {
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let (a, b) = (0, 1);
    play.mt(ANN, C::Deploy { land: None });
    play.pass();
    play.advance_to(MtPhase::Deploy);
    play.mt(BOB, C::Deploy { land: None });
    play.mt(BOB, C::Deploy { land: None });
    play.pass();
    // Ann's turn, upkeep: Bob's instant may come now, his sorcery may not.
    let instant = of_type("Giant Growth", CardType::Instant, 0);
    let sorcery = of_type("Stone Rain", CardType::Sorcery, 0);
    play.mt_refused(
        BOB,
        C::Reveal {
            card: b,
            face: sorcery.clone(),
        },
        ErrorCode::NotYourTurn,
    );
    play.mt(
        BOB,
        C::Reveal {
            card: b,
            face: instant,
        },
    );
    // It resolved: to the scrapheap, the card count unchanged.
    assert!(play.card(b).is_none());
    assert_eq!(play.side(BOB).scrapheap, 1);
    assert_eq!(play.game.card_count(BOB), Some(30));
    // Ann's sorcery in her upkeep is fine; a creature waits for her deploy phase.
    let bears = creature("Bears", 0, &[], 2, 2);
    play.mt_refused(
        ANN,
        C::Reveal {
            card: a,
            face: bears,
        },
        ErrorCode::WrongPhase,
    );
    play.mt(
        ANN,
        C::Reveal {
            card: a,
            face: sorcery,
        },
    );
    // A land is never revealed from face down.
    play.mt_refused(
        BOB,
        C::Reveal {
            card: 2,
            face: basic(Colour::Green),
        },
        ErrorCode::BadCard,
    );
}

// ----- Relocating and the end phase -------------------------------------------------------------

#[test]
fn revealed_creatures_wait_in_the_deploy_area_until_the_end_phase_unless_immune() {
    let mut play = Play::started();
    let bears = play.put_in_play(creature("Bears", 0, &[], 2, 2));
    play.mt_refused(
        ANN,
        C::Relocate {
            card: bears,
            area: Area::Patrol,
        },
        ErrorCode::BadCard,
    );
    play.pass();
    assert_eq!(play.card(bears).unwrap().area, Area::Patrol);
    // Bob's haste creature may patrol at once.
    let hasty = with(
        creature("Raging Goblin", 0, &[], 1, 1),
        Keywords {
            haste: true,
            ..Keywords::default()
        },
    );
    let goblin = play.put_in_play(hasty);
    play.mt(
        BOB,
        C::Relocate {
            card: goblin,
            area: Area::Patrol,
        },
    );
    play.pass();
    // Ann's creature began her turn in play: it may guard her stockpile or a card, even one
    // under construction, but not a card of Bob's, nor itself, nor go back to the deploy area.
    play.advance_to(MtPhase::Deploy);
    let building = play.game.board().next_card;
    play.mt(ANN, C::Deploy { land: None });
    for (area, code) in [
        (Area::Deploy, ErrorCode::BadCard),
        (Area::Patrol, ErrorCode::BadCard),
        (Area::Guard { card: Some(bears) }, ErrorCode::BadCard),
        (Area::Guard { card: Some(goblin) }, ErrorCode::NotYourCard),
    ] {
        play.mt_refused(ANN, C::Relocate { card: bears, area }, code);
    }
    play.mt_refused(
        BOB,
        C::Relocate {
            card: goblin,
            area: Area::Guard { card: None },
        },
        ErrorCode::NotYourTurn,
    );
    play.mt(
        ANN,
        C::Relocate {
            card: bears,
            area: Area::Guard {
                card: Some(building),
            },
        },
    );
    play.mt(ANN, C::NextPhase);
    play.mt_refused(
        ANN,
        C::Relocate {
            card: bears,
            area: Area::Patrol,
        },
        ErrorCode::WrongPhase,
    );
    // The guarded card leaves play: its guard goes on patrol.
    play.mt(
        ANN,
        C::LeavePlay {
            card: building,
            to: Zone::Hand,
        },
    );
    assert_eq!(play.card(bears).unwrap().area, Area::Patrol);
}

// ----- Missions, blocking and damage -----------------------------------------------------------

/// Ann has Bears (2/2, cost 2) and Bob a Wall (0/4, cost 2), both on patrol, and it is Ann's
/// third turn, in her missions phase.
fn armies() -> (Play, CardId, CardId) {
    let mut play = Play::started();
    let bears = play.put_in_play(creature("Bears", 2, &[], 2, 2));
    play.pass();
    let wall = play.put_in_play(creature("Wall", 2, &[], 0, 4));
    play.pass();
    play.advance_to(MtPhase::Missions);
    (play, bears, wall)
}

#[test]
fn untapped_patrols_cannot_be_attacked_tapped_ones_can_and_missions_tap_everyone() {
    let (mut play, bears, wall) = armies();
    let at_wall = C::Mission {
        attackers: vec![bears],
        target: Target::Card { card: wall },
    };
    play.mt_refused(ANN, at_wall.clone(), ErrorCode::BadCard);
    play.mt_refused(
        ANN,
        C::Mission {
            attackers: vec![wall],
            target: Target::Stockpile { player: BOB },
        },
        ErrorCode::NotYourCard,
    );
    play.mt_refused(
        ANN,
        C::Mission {
            attackers: vec![bears],
            target: Target::Stockpile { player: ANN },
        },
        ErrorCode::UnknownPlayer,
    );
    // The wall blocks a mission on the stockpile; both end tapped.
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![bears],
            target: Target::Stockpile { player: BOB },
        },
    );
    play.mt_refused(ANN, C::NextPhase, ErrorCode::NoMission);
    play.mt_refused(ANN, C::Block { blocks: vec![] }, ErrorCode::NoMission);
    play.mt(
        BOB,
        C::Block {
            blocks: vec![Block {
                blocker: wall,
                attacker: bears,
            }],
        },
    );
    assert!(play.card(bears).unwrap().tapped && play.card(wall).unwrap().tapped);
    // Wall's armour 4 absorbs the Bears' 2; the wall deals nothing.
    assert_eq!(play.card(wall).unwrap().damage, 0);
    assert_eq!(play.card(bears).unwrap().damage, 0);
    // Tapped, the bears cannot go again; the tapped wall can now be attacked (after an untap).
    play.mt_refused(
        ANN,
        C::Mission {
            attackers: vec![bears],
            target: Target::Stockpile { player: BOB },
        },
        ErrorCode::BadCard,
    );
    play.rule(Correction::Tapped {
        card: bears,
        tapped: false,
    });
    play.mt(ANN, at_wall);
    play.mt(BOB, C::Block { blocks: vec![] });
}

#[test]
fn an_unblocked_mission_on_the_stockpile_discards_one_card_per_point() {
    let (mut play, bears, _) = armies();
    let before = play.side(BOB);
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![bears],
            target: Target::Stockpile { player: BOB },
        },
    );
    play.mt(BOB, C::Block { blocks: vec![] });
    let after = play.side(BOB);
    assert_eq!(after.stockpile, before.stockpile - 2);
    assert_eq!(after.scrapheap, before.scrapheap + 2);
    assert_eq!(play.game.card_count(BOB), Some(30));
}

#[test]
fn patrols_block_as_the_declared_evasion_allows_guards_block_any_attacker_of_their_card() {
    let mut play = Play::started();
    let flyer = with(
        creature("Birds", 2, &[], 2, 1),
        Keywords {
            flying: true,
            ..Keywords::default()
        },
    );
    let birds = play.put_in_play(flyer);
    play.pass();
    let wall = play.put_in_play(creature("Wall", 2, &[], 0, 4));
    let guard = play.put_in_play(creature("Guard", 2, &[], 1, 4));
    play.pass();
    play.pass();
    // Bob's turn: the guard guards his stockpile.
    play.advance_to(MtPhase::Deploy);
    play.mt(
        BOB,
        C::Relocate {
            card: guard,
            area: Area::Guard { card: None },
        },
    );
    play.pass();
    play.advance_to(MtPhase::Missions);
    // Flying: the wall on patrol cannot block it; the guard of the stockpile can.
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![birds],
            target: Target::Stockpile { player: BOB },
        },
    );
    let by_wall = vec![Block {
        blocker: wall,
        attacker: birds,
    }];
    play.mt_refused(BOB, C::Block { blocks: by_wall }, ErrorCode::IllegalBlock);
    let by_guard = Block {
        blocker: guard,
        attacker: birds,
    };
    play.mt_refused(
        BOB,
        C::Block {
            blocks: vec![by_guard, by_guard],
        },
        ErrorCode::IllegalBlock,
    );
    play.mt(
        BOB,
        C::Block {
            blocks: vec![by_guard],
        },
    );
    // A mission on another card: the stockpile's guard may not block it.
    play.rule(Correction::Tapped {
        card: birds,
        tapped: false,
    });
    play.rule(Correction::Tapped {
        card: guard,
        tapped: false,
    });
    play.rule(Correction::Tapped {
        card: wall,
        tapped: true,
    });
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![birds],
            target: Target::Card { card: wall },
        },
    );
    play.mt_refused(
        BOB,
        C::Block {
            blocks: vec![by_guard],
        },
        ErrorCode::IllegalBlock,
    );
}

#[test]
fn damage_meets_armour_then_becomes_structure_counters_and_destroys_at_structure() {
    let (mut play, bears, wall) = armies();
    // Bears: armour 2, structure 2. Three damage: one counter; three more: destroyed.
    play.mt(
        BOB,
        C::Damage {
            target: Target::Card { card: bears },
            amount: 3,
        },
    );
    assert_eq!(play.card(bears).unwrap().damage, 1);
    play.mt_refused(
        BOB,
        C::Heal {
            card: bears,
            amount: 2,
        },
        ErrorCode::BadAmount,
    );
    play.mt(
        BOB,
        C::Damage {
            target: Target::Card { card: bears },
            amount: 3,
        },
    );
    assert!(play.card(bears).is_none());
    assert_eq!(play.side(ANN).scrapheap, 1);
    // A land: armour 3, structure 3.
    play.pass();
    let forest = play.land(Colour::Green);
    play.mt(
        ANN,
        C::Damage {
            target: Target::Card { card: forest },
            amount: 5,
        },
    );
    assert_eq!(play.card(forest).unwrap().damage, 2);
    play.mt(
        ANN,
        C::Damage {
            target: Target::Card { card: forest },
            amount: 4,
        },
    );
    assert!(play.card(forest).is_none());
    // Healing removes counters.
    play.mt(
        ANN,
        C::Damage {
            target: Target::Card { card: wall },
            amount: 5,
        },
    );
    play.mt(
        ANN,
        C::Heal {
            card: wall,
            amount: 1,
        },
    );
    assert_eq!(play.card(wall).unwrap().damage, 0);
    play.mt_refused(
        ANN,
        C::Heal {
            card: wall,
            amount: 1,
        },
        ErrorCode::BadAmount,
    );
}

#[test]
fn a_blocked_attacker_and_its_blocker_trade_damage_with_first_strike_first() {
    let mut play = Play::started();
    let knight = with(
        creature("Knight", 2, &[], 3, 1),
        Keywords {
            first_strike: true,
            ..Keywords::default()
        },
    );
    let knight = play.put_in_play(knight);
    play.pass();
    let ogre = play.put_in_play(creature("Ogre", 2, &[], 3, 1));
    play.pass();
    play.advance_to(MtPhase::Missions);
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![knight],
            target: Target::Stockpile { player: BOB },
        },
    );
    play.mt(
        BOB,
        C::Block {
            blocks: vec![Block {
                blocker: ogre,
                attacker: knight,
            }],
        },
    );
    // First strike: 3 against armour 1 puts 2 counters on the Ogre (structure 2): destroyed
    // before it deals its damage.
    assert!(play.card(ogre).is_none());
    assert_eq!(play.card(knight).unwrap().damage, 0);
    assert!(play.card(knight).unwrap().tapped);
}

#[test]
fn trample_carries_what_the_blockers_do_not_need_to_the_target() {
    let mut play = Play::started();
    let trampler = with(
        creature("Rhino", 3, &[], 6, 4),
        Keywords {
            trample: true,
            ..Keywords::default()
        },
    );
    let rhino = play.put_in_play(trampler);
    play.pass();
    let bear = play.put_in_play(creature("Bear", 1, &[], 1, 1));
    play.pass();
    play.advance_to(MtPhase::Missions);
    let before = play.side(BOB).stockpile;
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![rhino],
            target: Target::Stockpile { player: BOB },
        },
    );
    play.mt(
        BOB,
        C::Block {
            blocks: vec![Block {
                blocker: bear,
                attacker: rhino,
            }],
        },
    );
    // The bear needs armour 1 + structure 1: the other 4 go to the stockpile.
    assert!(play.card(bear).is_none());
    assert_eq!(play.side(BOB).stockpile, before - 4);
}

#[test]
fn damage_under_construction_removes_a_counter_per_two_points_and_buries_an_empty_card() {
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let card = play.game.board().next_card;
    play.mt(ANN, C::Deploy { land: None });
    play.rule(Correction::Counters { card, counters: 3 });
    let target = Target::Card { card };
    play.mt(BOB, C::Damage { target, amount: 5 });
    let damaged = play.card(card).unwrap();
    assert_eq!((damaged.counters, damaged.shown), (1, true));
    play.mt(BOB, C::Damage { target, amount: 1 });
    assert_eq!(play.card(card).unwrap().counters, 1);
    play.mt(BOB, C::Damage { target, amount: 9 });
    assert_eq!(play.card(card).unwrap().counters, 0);
    let events = play.mt(BOB, C::Damage { target, amount: 1 });
    assert!(events.contains(&Event::MagicTechDestroyed { card, buried: true }));
    assert!(play.card(card).is_none());
    assert_eq!(play.game.card_count(ANN), Some(40));
}

#[test]
fn regeneration_is_paid_in_upkeep_to_remove_one_counter() {
    let mut play = Play::started();
    let forest = play.land(Colour::Green);
    let troll = with(
        creature("Troll", 2, &[Colour::Green], 4, 1),
        Keywords {
            regeneration: Some(ManaCost {
                generic: 0,
                coloured: vec![Colour::Green],
            }),
            ..Keywords::default()
        },
    );
    let troll = play.put_in_play(troll);
    play.mt(
        BOB,
        C::Damage {
            target: Target::Card { card: troll },
            amount: 3,
        },
    );
    assert_eq!(play.card(troll).unwrap().damage, 2);
    play.mt_refused(ANN, C::Regenerate { card: troll }, ErrorCode::WrongPhase);
    play.pass();
    play.pass();
    assert_eq!(play.phase(), MtPhase::Upkeep);
    play.mt_refused(ANN, C::Regenerate { card: troll }, ErrorCode::NotEnoughMana);
    play.mt(
        ANN,
        C::Tap {
            card: forest,
            mana: 1,
        },
    );
    play.mt(ANN, C::Regenerate { card: troll });
    assert_eq!(play.card(troll).unwrap().damage, 1);
    assert_eq!(play.side(ANN).mana, 0);
    play.mt_refused(ANN, C::Regenerate { card: forest }, ErrorCode::BadCard);
}

// ----- Life, the end ---------------------------------------------------------------------------

#[test]
fn paying_life_scraps_and_gaining_life_puts_scrapheap_cards_under_the_stockpile() {
    let mut play = Play::started();
    let before = play.side(ANN);
    play.mt(ANN, C::Life { delta: -3 });
    assert_eq!(play.side(ANN).stockpile, before.stockpile - 3);
    assert_eq!(play.side(ANN).scrapheap, 3);
    play.mt_refused(ANN, C::Life { delta: 4 }, ErrorCode::BadAmount);
    play.mt_refused(ANN, C::Life { delta: 0 }, ErrorCode::BadAmount);
    play.mt(ANN, C::Life { delta: 2 });
    assert_eq!(play.side(ANN).scrapheap, 1);
    assert_eq!(play.game.card_count(ANN), Some(40));
}

#[test]
fn a_player_who_must_draw_or_lose_cards_from_an_empty_stockpile_loses() {
    let mut play = Play::started();
    let left = play.side(BOB).stockpile;
    // Bob loses exactly his stockpile: not yet out.
    play.mt(
        BOB,
        C::Life {
            delta: -i32::from(left),
        },
    );
    assert_eq!(play.game.stage(), Stage::Playing);
    // His next draw (his turn's draw phase) runs him out.
    let events = {
        play.pass();
        play.journal.clone()
    };
    assert!(events.contains(&Event::MagicTechRanOut { player: BOB }));
    assert_eq!(play.game.stage(), Stage::Finished);
    let standings = &view(&play.game).standings;
    assert_eq!(
        standings
            .iter()
            .map(|s| (s.player, s.place))
            .collect::<Vec<_>>(),
        [(ANN, 1), (BOB, 2)]
    );
    play.mt_refused(ANN, C::Draw { count: 1 }, ErrorCode::NotPlaying);
}

#[test]
fn a_mission_on_a_stockpile_too_small_runs_it_out() {
    let (mut play, bears, _) = armies();
    let left = play.side(BOB).stockpile;
    play.rule(Correction::Move {
        player: BOB,
        from: Zone::Stockpile,
        to: Zone::Scrapheap,
        count: left - 1,
    });
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![bears],
            target: Target::Stockpile { player: BOB },
        },
    );
    let events = play.mt(BOB, C::Block { blocks: vec![] });
    assert!(events.contains(&Event::MagicTechRanOut { player: BOB }));
    assert_eq!(play.game.stage(), Stage::Finished);
}

#[test]
fn conceding_ends_the_game() {
    let mut play = Play::started();
    play.ok(Actor::Player(ANN), Command::Concede);
    assert_eq!(play.game.stage(), Stage::Finished);
    assert_eq!(view(&play.game).standings[0].player, BOB);
}

// ----- Corrections ----------------------------------------------------------------------------

#[test]
fn one_player_proposes_a_correction_and_the_other_accepts_or_declines() {
    let (mut play, bears, _) = armies();
    let fix = Correction::Damage {
        card: bears,
        damage: 1,
    };
    play.mt(
        ANN,
        C::Propose {
            correction: fix.clone(),
        },
    );
    play.mt_refused(
        BOB,
        C::Propose {
            correction: fix.clone(),
        },
        ErrorCode::NoProposal,
    );
    play.mt_refused(ANN, C::Answer { accept: true }, ErrorCode::NoProposal);
    play.mt(BOB, C::Answer { accept: false });
    assert_eq!(play.card(bears).unwrap().damage, 0);
    play.mt_refused(BOB, C::Answer { accept: true }, ErrorCode::NoProposal);
    play.mt(BOB, C::Propose { correction: fix });
    play.mt(ANN, C::Answer { accept: true });
    assert_eq!(play.card(bears).unwrap().damage, 1);
    // A correction that reaches the structure destroys.
    play.rule(Correction::Damage {
        card: bears,
        damage: 2,
    });
    assert!(play.card(bears).is_none());
    play.refused(
        Actor::Player(ANN),
        Command::MagicTech(C::Rule {
            correction: Correction::Mana {
                player: ANN,
                mana: 3,
            },
        }),
        ErrorCode::NotHost,
    );
    play.mt_refused(
        ANN,
        C::Propose {
            correction: Correction::Counters {
                card: 99,
                counters: 1,
            },
        },
        ErrorCode::UnknownCard,
    );
}

#[test]
fn the_host_keeps_ends_turns_and_rules_out_and_other_games_commands_are_refused() {
    let mut play = Play::lobby();
    play.ok(Actor::Player(ANN), deck(40));
    play.ok(Actor::Player(BOB), deck(30));
    play.ok(Actor::Host, Command::start(Some(ANN)));
    play.ok(Actor::Host, Command::Ruling(Ruling::Keep { player: ANN }));
    play.ok(Actor::Host, Command::Ruling(Ruling::Keep { player: BOB }));
    play.refused(
        Actor::Player(ANN),
        Command::Attack {
            target: BOB,
            damage: 1,
            poison: 0,
        },
        ErrorCode::BadMessage,
    );
    play.refused(
        Actor::Host,
        Command::Ruling(Ruling::SetLife {
            player: ANN,
            life: 3,
        }),
        ErrorCode::BadMessage,
    );
    play.ok(
        Actor::Host,
        Command::Ruling(Ruling::EndTurn { player: ANN }),
    );
    assert_eq!(play.active(), BOB);
    play.ok(
        Actor::Host,
        Command::Ruling(Ruling::Eliminate { players: vec![BOB] }),
    );
    assert_eq!(play.game.stage(), Stage::Finished);
}

// ----- The client mirror and random games -------------------------------------------------------

fn pick_actor(game: &MagicTech, rng: &mut ChaCha8Rng) -> PlayerId {
    let board = game.board();
    if let Some(mission) = &board.mission {
        return game.opponent(mission.player).unwrap();
    }
    if let Some(proposal) = &board.proposal
        && rng.random_bool(0.5)
    {
        return game.opponent(proposal.player).unwrap();
    }
    match game.stage() {
        Stage::Mulligan { .. } => game.deciders()[0],
        _ => board.active.unwrap(),
    }
}

/// Plays one random legal game to its end, checking the rules' invariants after every command.
fn random_game(seed: u64) -> Vec<Event> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut play = Play::lobby();
    let decks = [rng.random_range(5..=60u8), rng.random_range(5..=60u8)];
    play.ok(Actor::Player(ANN), deck(decks[0]));
    play.ok(Actor::Player(BOB), deck(decks[1]));
    play.ok(Actor::Host, Command::start(None));
    for step in 0..20_000 {
        if play.game.stage() == Stage::Finished {
            // The game ends exactly when a stockpile ran out (or someone conceded).
            let out = play
                .journal
                .iter()
                .filter(|e| matches!(e, Event::MagicTechRanOut { .. }))
                .count();
            assert_eq!(out, 1, "seed {seed}");
            return play.journal;
        }
        let player = pick_actor(&play.game, &mut rng);
        let moves = play.game.legal_moves(player);
        assert!(
            !moves.is_empty(),
            "seed {seed} step {step}: {player} has no move"
        );
        // Card effects that empty a stockpile (draws, damage to it, paid life) come rarely,
        // so games are long enough to build boards and fight.
        let quick = |c: &&Command| {
            matches!(
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
        };
        let slow: Vec<&Command> = moves.iter().filter(|c| !quick(c)).collect();
        let command = if slow.is_empty() || rng.random_bool(0.03) {
            moves.choose(&mut rng).unwrap().clone()
        } else {
            (*slow.choose(&mut rng).unwrap()).clone()
        };
        let before = view(&play.game);
        // The same move by the other player: mostly refused, and a refusal changes nothing.
        if let Some(other) = play.game.opponent(player)
            && rng.random_bool(0.2)
        {
            match play.game.handle(Actor::Player(other), command.clone()) {
                Err(_) => assert_eq!(view(&play.game), before, "seed {seed}: {command:?}"),
                Ok(events) => {
                    play.journal.extend(events);
                    assert_eq!(view(&play.replayed()), view(&play.game), "seed {seed}");
                    continue;
                }
            }
        }
        let mut mirror: Mirror<MagicTech> = Mirror::of(&before).unwrap();
        let events = play.ok(Actor::Player(player), command.clone());
        // A client's mirror, built from the snapshot before, folds the events to the same view.
        for (k, event) in events.iter().enumerate() {
            mirror.apply(before.seq + 1 + k as u64, event).unwrap();
        }
        let mut expected = view(&play.game);
        expected.seq = before.seq + events.len() as u64;
        assert_eq!(
            mirror.view(),
            expected,
            "seed {seed}: mirror after {command:?}"
        );
        check_invariants(&play.game, decks, seed);
    }
    panic!("seed {seed}: the game did not end");
}

fn check_invariants(game: &MagicTech, decks: [u8; 2], seed: u64) {
    if game.stage() == Stage::Lobby {
        return;
    }
    for (player, size) in [(ANN, decks[0]), (BOB, decks[1])] {
        assert_eq!(
            game.card_count(player),
            Some(u32::from(size)),
            "seed {seed}"
        );
    }
    let board = game.board();
    assert!(board.deployed <= game.deployments_allowed(), "seed {seed}");
    assert!(board.lands <= 2, "seed {seed}");
    for card in &board.cards {
        // Destroyed cards have left play.
        if let Some(face) = &card.face {
            assert!(
                card.damage == 0 || card.damage < face.structure(),
                "seed {seed}: card {} should be destroyed",
                card.card
            );
            assert_eq!(card.counters, 0);
        }
    }
    // Counters and zone counts are unsigned, and the fold refuses an event that would take
    // one below zero: `Play::ok` replays every event, so none did.
}

#[test]
fn random_games_reach_every_magic_tech_event() {
    let mut seen: Vec<&'static str> = (0..12).flat_map(random_game).map(|e| e.name()).collect();
    seen.sort_unstable();
    seen.dedup();
    for kind in Event::NAMES {
        if kind.starts_with("magic_tech.") && *kind != "magic_tech.deck_declared" {
            assert!(seen.contains(kind), "no random game reached {kind}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_legal_games_keep_the_rules_invariants(seed in any::<u64>()) {
        let journal = random_game(seed);
        prop_assert!(!journal.is_empty());
    }
}

// ----- Through the shell --------------------------------------------------------------------------

/// Every event the session published, with its number.
fn drain(
    session: &mut grand_melee_protocol::session::Session<MagicTech>,
    journal: &mut Vec<(u64, Event)>,
) -> Vec<grand_melee_protocol::session::Effect> {
    use grand_melee_protocol::session::Effect;
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

#[test]
fn the_session_runs_a_magic_tech_game_from_the_lobby_to_the_end() {
    use grand_melee_protocol::session::{Effect, Session, Timing};
    use grand_melee_protocol::{ClientMessage, SeatToken};
    use std::net::{IpAddr, Ipv4Addr};
    use std::time::{Duration, Instant};

    let t0 = Instant::now();
    let timing = Timing {
        grace: Duration::from_secs(60),
        unjoined: Duration::from_secs(600),
        chat_per_minute: 0.0,
        adjourned_expiry: None,
    };
    let settings = Settings {
        mulligan_clock_secs: 0,
        ..settings()
    };
    let mut session: Session<MagicTech> =
        Session::new(settings.clone(), DiceSecret::from_seed(9), timing, t0).unwrap();
    let peer = IpAddr::V4(Ipv4Addr::LOCALHOST);
    for (connection, name) in [(1, "Ann"), (2, "Bob")] {
        session
            .join(
                t0,
                connection,
                peer,
                name.to_owned(),
                String::new(),
                None,
                SeatToken::new_random(),
            )
            .unwrap();
    }
    let mut journal = Vec::new();
    drain(&mut session, &mut journal);
    // A mirror from the lobby's snapshot follows the whole game.
    let id = TableId::from_u128(11);
    let mut mirror: Mirror<MagicTech> = Mirror::of(&session.view(id, "tech")).unwrap();
    let followed = journal.len();

    let mut id_counter = 0;
    let mut request =
        |session: &mut Session<MagicTech>, connection: u64, message: ClientMessage| {
            id_counter += 1;
            let mut message = message;
            *message.id_mut() = id_counter;
            session.request(t0, connection, &message)
        };
    let start = ClientMessage::Start {
        id: 0,
        first_player: None,
        seating: Default::default(),
        order: Vec::new(),
    };
    assert_eq!(
        request(&mut session, 1, start.clone()),
        Err(ErrorCode::NoDeckSize)
    );
    for (connection, size) in [(1, 12), (2, 9)] {
        request(
            &mut session,
            connection,
            ClientMessage::MagicTechDeclareDeck { id: 0, size },
        )
        .unwrap();
    }
    assert_eq!(
        request(&mut session, 2, start.clone()),
        Err(ErrorCode::NotHost)
    );
    request(&mut session, 1, start).unwrap();
    // The session's mulligan clock follows the game's deciders: one at a time.
    let first = session.table().deciders()[0];
    let connection_of = |player: PlayerId| u64::from(player) + 1;
    request(
        &mut session,
        connection_of(first),
        ClientMessage::Mulligan { id: 0 },
    )
    .unwrap();
    for _ in 0..2 {
        let decider = session.table().deciders()[0];
        request(
            &mut session,
            connection_of(decider),
            ClientMessage::Keep { id: 0 },
        )
        .unwrap();
    }
    assert_eq!(session.table().stage(), Stage::Playing);
    assert_eq!(session.table().running(), vec![(0, first)]);
    // The other player may not move the first player's turn on.
    let second = session.table().opponent(first).unwrap();
    assert_eq!(
        request(
            &mut session,
            connection_of(second),
            ClientMessage::MagicTechNextPhase { id: 0 }
        ),
        Err(ErrorCode::NotYourTurn)
    );
    // Both just pass their turns: two draws a turn empty the stockpiles.
    let mut turns = 0;
    while session.table().stage() == Stage::Playing {
        let active = session.table().board().active.unwrap();
        request(
            &mut session,
            connection_of(active),
            ClientMessage::MagicTechNextPhase { id: 0 },
        )
        .unwrap();
        turns += 1;
        assert!(turns < 100, "the game does not end");
    }
    let effects = drain(&mut session, &mut journal);
    assert!(effects.contains(&Effect::Finished));
    let view = session.view(id, "tech");
    // Whoever ran out of cards first is last.
    let loser = journal
        .iter()
        .find_map(|(_, e)| match e {
            Event::MagicTechRanOut { player } => Some(*player),
            _ => None,
        })
        .unwrap();
    assert_eq!(view.standings.last().map(|s| s.player), Some(loser));
    assert!(view.dice_secret.is_some());
    for (seq, event) in &journal[followed..] {
        mirror.apply(*seq, event).unwrap();
    }
    assert_eq!(mirror.view(), view);
    // The journal recovers the same table.
    let recovered: Session<MagicTech> = Session::recover(
        settings,
        DiceSecret::from_seed(9),
        timing,
        journal.clone(),
        &[],
        Vec::new(),
        t0,
    )
    .unwrap();
    assert_eq!(recovered.view(id, "tech"), view);
}

#[test]
fn every_magic_tech_request_is_a_magic_tech_command_with_its_authority() {
    use grand_melee_protocol::examples;
    use grand_melee_protocol::rules::Authority;
    let requests: Vec<_> = examples::client()
        .into_iter()
        .filter(|m| m.name().starts_with("magic_tech."))
        .collect();
    assert_eq!(requests.len(), 18);
    for request in requests {
        let (authority, command) = request.command().unwrap();
        let Command::MagicTech(command) = command else {
            panic!("{} is not a Magic Tech command", request.name());
        };
        let host = matches!(command, C::Rule { .. });
        assert_eq!(authority == Authority::Host, host, "{}", request.name());
    }
}

#[test]
fn a_guard_of_a_card_blocks_any_attacker_of_that_card_and_no_other() {
    let mut play = Play::started();
    let flyer = with(
        creature("Birds", 2, &[], 2, 1),
        Keywords {
            flying: true,
            ..Keywords::default()
        },
    );
    let birds = play.put_in_play(flyer);
    play.pass();
    let forest = play.land(Colour::Green);
    let guard = play.put_in_play(creature("Guard", 2, &[], 1, 4));
    let building = play.game.board().next_card;
    play.mt(BOB, C::Deploy { land: None });
    play.pass();
    play.pass();
    play.advance_to(MtPhase::Deploy);
    play.mt(
        BOB,
        C::Relocate {
            card: guard,
            area: Area::Guard { card: Some(forest) },
        },
    );
    play.pass();
    play.advance_to(MtPhase::Missions);
    let block = vec![Block {
        blocker: guard,
        attacker: birds,
    }];
    let untap_birds = Correction::Tapped {
        card: birds,
        tapped: false,
    };
    // Missions on Bob's stockpile and on his card under construction: not the guard's card.
    for target in [
        Target::Stockpile { player: BOB },
        Target::Card { card: building },
    ] {
        play.mt(
            ANN,
            C::Mission {
                attackers: vec![birds],
                target,
            },
        );
        play.mt_refused(
            BOB,
            C::Block {
                blocks: block.clone(),
            },
            ErrorCode::IllegalBlock,
        );
        play.mt(BOB, C::Block { blocks: vec![] });
        play.rule(untap_birds.clone());
    }
    // The forest's attacker, flying or not, meets its guard.
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![birds],
            target: Target::Card { card: forest },
        },
    );
    play.mt(BOB, C::Block { blocks: block });
    assert!(play.card(guard).unwrap().tapped);
    assert_eq!(play.card(forest).unwrap().damage, 0);
}

#[test]
fn shadow_landwalk_protection_and_reach_decide_what_a_patrol_may_block() {
    let mut play = Play::started();
    let shade = play.put_in_play(with(
        creature("Shade", 2, &[], 1, 1),
        Keywords {
            shadow: true,
            ..Keywords::default()
        },
    ));
    play.pass();
    play.land(Colour::Green);
    let reach = play.put_in_play(with(
        creature("Spider", 2, &[], 1, 4),
        Keywords {
            reach: true,
            ..Keywords::default()
        },
    ));
    let plain = play.put_in_play(creature("Wall", 2, &[], 0, 4));
    play.pass();
    let walker = play.put_in_play(with(
        creature("Forest Walker", 2, &[], 1, 1),
        Keywords {
            landwalk: vec![Colour::Green],
            ..Keywords::default()
        },
    ));
    let knight = play.put_in_play(with(
        creature("Knight", 2, &[], 1, 1),
        Keywords {
            protection: vec![Colour::Red],
            ..Keywords::default()
        },
    ));
    play.pass();
    let red = play.put_in_play(creature("Red Ogre", 1, &[Colour::Red], 1, 4));
    play.pass();
    let flyer = play.put_in_play(with(
        creature("Hasty Birds", 2, &[], 1, 1),
        Keywords {
            flying: true,
            haste: true,
            ..Keywords::default()
        },
    ));
    play.mt(
        ANN,
        C::Relocate {
            card: flyer,
            area: Area::Patrol,
        },
    );
    play.advance_to(MtPhase::Missions);
    let attackers = vec![shade, walker, knight, flyer];
    play.mt(
        ANN,
        C::Mission {
            attackers,
            target: Target::Stockpile { player: BOB },
        },
    );
    // Bob's creatures went on patrol at the end of the turns he revealed them in.
    assert_eq!(play.card(red).unwrap().area, Area::Patrol);
    for (blocker, attacker, legal) in [
        (plain, shade, false),
        (reach, shade, false),
        (plain, walker, false),
        (reach, walker, false),
        (red, knight, false),
        (plain, knight, true),
        (plain, flyer, false),
        (reach, flyer, true),
    ] {
        assert_eq!(
            play.game.may_block(blocker, attacker),
            legal,
            "{blocker} blocking {attacker}"
        );
        if !legal {
            play.mt_refused(
                BOB,
                C::Block {
                    blocks: vec![Block { blocker, attacker }],
                },
                ErrorCode::IllegalBlock,
            );
        }
    }
    play.mt(
        BOB,
        C::Block {
            blocks: vec![
                Block {
                    blocker: plain,
                    attacker: knight,
                },
                Block {
                    blocker: reach,
                    attacker: flyer,
                },
            ],
        },
    );
}

#[test]
fn flanking_weakens_a_blocker_and_rampage_strengthens_a_creature_blocked_by_several() {
    let mut play = Play::started();
    let flanker = play.put_in_play(with(
        creature("Flanker", 3, &[], 2, 2),
        Keywords {
            flanking: true,
            ..Keywords::default()
        },
    ));
    play.pass();
    let big = play.put_in_play(creature("Bear", 2, &[], 2, 2));
    let small = play.put_in_play(creature("Cub", 1, &[], 1, 1));
    play.pass();
    let rampager = play.put_in_play(with(
        creature("Rampager", 3, &[], 3, 3),
        Keywords {
            rampage: 2,
            ..Keywords::default()
        },
    ));
    play.pass();
    play.pass();
    play.advance_to(MtPhase::Missions);
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![flanker],
            target: Target::Stockpile { player: BOB },
        },
    );
    play.mt(
        BOB,
        C::Block {
            blocks: vec![Block {
                blocker: big,
                attacker: flanker,
            }],
        },
    );
    // The bear meets the flanker with attack 1 and armour 1: it takes a counter, deals none.
    assert_eq!(play.card(big).unwrap().damage, 1);
    assert_eq!(play.card(flanker).unwrap().damage, 0);
    play.rule(Correction::Tapped {
        card: big,
        tapped: false,
    });
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![rampager],
            target: Target::Stockpile { player: BOB },
        },
    );
    let blocks = [big, small].map(|blocker| Block {
        blocker,
        attacker: rampager,
    });
    play.mt(
        BOB,
        C::Block {
            blocks: blocks.to_vec(),
        },
    );
    // Two blockers: attack 5. The bear needs 3 (armour 2, one structure left), the cub gets 2.
    assert!(play.card(big).is_none());
    assert!(play.card(small).is_none());
    assert_eq!(play.card(rampager).unwrap().damage, 0);
}

#[test]
fn a_turn_ended_by_the_clock_during_a_mission_ends_it_unresolved() {
    use grand_melee_protocol::Expiry;
    let (mut play, bears, _) = armies();
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![bears],
            target: Target::Stockpile { player: BOB },
        },
    );
    play.refused(Actor::Player(ANN), Command::EndTurn, ErrorCode::NoMission);
    let before = play.side(BOB);
    let expire = Command::ExpireTurn {
        player: ANN,
        reason: Expiry::Clock,
    };
    play.refused(Actor::Player(BOB), expire.clone(), ErrorCode::NotHost);
    let events = play.ok(Actor::Host, expire);
    assert!(events.contains(&Event::MagicTechMissionEnded {
        tapped: vec![bears]
    }));
    assert_eq!(play.active(), BOB);
    assert!(play.game.board().mission.is_none());
    // Only his draw: no damage reached his stockpile.
    assert_eq!(play.side(BOB).stockpile, before.stockpile - 2);
    assert_eq!(play.side(BOB).scrapheap, before.scrapheap);
}

#[test]
fn a_mirror_folds_from_the_empty_table_and_no_mirror_takes_another_games_snapshot() {
    // The empty view a replay or a log folds from: no board yet, nothing happened.
    let empty = grand_melee_protocol::TableView::new(TableId::new_random(), "empty", settings());
    let mirror: Mirror<MagicTech> = Mirror::of(&empty).unwrap();
    assert_eq!(
        mirror.view().magic_tech.as_deref(),
        Some(&Default::default())
    );
    // A board is only left out before anything happened.
    let mut later = empty.clone();
    later.seq = 3;
    assert!(Mirror::<MagicTech>::of(&later).is_err());
    // Neither game mirrors the other's table.
    let mut grand_melee = empty.clone();
    grand_melee.settings = Settings::default();
    assert!(Mirror::<MagicTech>::of(&grand_melee).is_err());
    assert!(Mirror::new(&empty).is_err());
    assert!(Mirror::new(&grand_melee).is_ok());
}

/// Cameras (issue 32): the two players across one board are within range of each other once
/// the game has started, and only seated players are.
#[test]
fn both_players_are_within_range_once_the_game_has_started() {
    let lobby = Play::lobby();
    assert!(!lobby.game.within_range(ANN, BOB));
    let play = Play::started();
    assert!(play.game.within_range(ANN, BOB));
    assert!(play.game.within_range(BOB, ANN));
    assert!(!play.game.within_range(ANN, 7));
}

// ----- Declarations ----------------------------------------------------------------------------

/// The largest face the server accepts: the longest name in the widest characters, every
/// number at its most, every keyword, all five colours of landwalk and protection, and the
/// most coloured symbols in its cost and regeneration cost.
fn largest_face() -> CardFace {
    use grand_melee_protocol::magic_tech_types::MAX_COLOURED_SYMBOLS;
    CardFace {
        // U+1D504 MATHEMATICAL FRAKTUR CAPITAL A: four bytes in UTF-8, and NFC keeps it.
        name: "\u{1D504}".repeat(grand_melee_protocol::MAX_CARD_NAME_CHARS),
        card_type: CardType::Creature,
        cost: ManaCost {
            generic: 200,
            coloured: vec![Colour::White; MAX_COLOURED_SYMBOLS],
        },
        power: u8::MAX,
        toughness: u8::MAX,
        basic: None,
        keywords: Keywords {
            flying: true,
            reach: true,
            landwalk: Colour::ALL.to_vec(),
            protection: Colour::ALL.to_vec(),
            shadow: true,
            trample: true,
            first_strike: true,
            banding: true,
            flanking: true,
            phasing: true,
            rampage: u8::MAX,
            regeneration: Some(ManaCost {
                generic: u8::MAX,
                coloured: vec![Colour::White; MAX_COLOURED_SYMBOLS],
            }),
            haste: true,
            ..Keywords::default()
        },
    }
}

/// A face's lists are bounded (each colour of landwalk and protection at most once, at most
/// `MAX_COLOURED_SYMBOLS` coloured symbols in a cost): 1,300-entry lists were once accepted,
/// and 104 such lands pushed a snapshot past the 1 MiB a client accepts. Now the largest face
/// the server accepts is small enough that both decks' worth of them fit a snapshot many times.
#[test]
fn a_face_is_bounded_and_a_table_of_the_largest_faces_fits_a_snapshot() {
    use grand_melee_protocol::magic_tech_types::{CardView, MAX_COLOURED_SYMBOLS, MAX_DECK};
    use grand_melee_protocol::{MAX_SERVER_MESSAGE_BYTES, ServerMessage, encode_server};
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let land_with = |keywords: Keywords| with(basic(Colour::Green), keywords);
    let refused = [
        land_with(Keywords {
            protection: vec![Colour::Red; 1300],
            ..Keywords::default()
        }),
        land_with(Keywords {
            landwalk: vec![Colour::Blue, Colour::Red, Colour::Blue],
            ..Keywords::default()
        }),
        land_with(Keywords {
            regeneration: Some(ManaCost {
                generic: 0,
                coloured: vec![Colour::Black; MAX_COLOURED_SYMBOLS + 1],
            }),
            ..Keywords::default()
        }),
    ];
    for land in refused {
        play.mt_refused(ANN, C::Deploy { land: Some(land) }, ErrorCode::BadCard);
    }
    let mut costly = creature("Costly", 0, &[], 1, 1);
    costly.cost.coloured = vec![Colour::Green; MAX_COLOURED_SYMBOLS + 1];
    play.mt(ANN, C::Deploy { land: None });
    play.mt_refused(
        ANN,
        C::Reveal {
            card: 0,
            face: costly,
        },
        ErrorCode::BadCard,
    );
    // The largest face is accepted, as declared.
    play.pass();
    let largest = play.put_in_play(largest_face());
    assert_eq!(play.card(largest).unwrap().face, Some(largest_face()));
    // Both decks in play at once, every card the largest face: far below the limit.
    let mut table = view(&play.game);
    let mt = table.magic_tech.as_mut().unwrap();
    let card = mt.cards.last().unwrap().clone();
    mt.cards = (0..2 * u16::from(MAX_DECK))
        .map(|n| CardView {
            card: u16::MAX - n,
            ..card.clone()
        })
        .collect();
    let face_bytes = rmp_serde::to_vec_named(&largest_face()).unwrap().len();
    assert!(
        face_bytes <= 1024,
        "the largest face takes {face_bytes} bytes"
    );
    let snapshot_bytes = encode_server(&ServerMessage::Snapshot {
        reply_to: Some(u32::MAX),
        view: table,
    })
    .len();
    assert!(
        snapshot_bytes * 4 < MAX_SERVER_MESSAGE_BYTES,
        "{snapshot_bytes} bytes for 120 of the largest faces"
    );
}

/// A face's name follows the rules of every other name: no bidi override, zero-width space,
/// line separator, private-use character or byte-order mark, and something visible; it is
/// kept normalised (NFC, trimmed).
#[test]
fn a_face_name_follows_the_rules_of_every_other_name() {
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    for name in [
        "Forest\u{202E}tserof",
        "For\u{200B}est",
        "Fo\u{2028}rest",
        "\u{E000}Forest",
        "\u{FEFF}Forest",
        "\u{301}\u{302}",
        "     ",
        "Forest\tGrove",
        &"F".repeat(65),
    ] {
        let mut land = basic(Colour::Green);
        land.name = name.to_owned();
        play.mt_refused(ANN, C::Deploy { land: Some(land) }, ErrorCode::BadCard);
    }
    let mut land = basic(Colour::Green);
    land.name = "  Fore\u{301}t  ".to_owned();
    play.mt(ANN, C::Deploy { land: Some(land) });
    let kept = play.card(0).unwrap().face.unwrap().name;
    assert_eq!(kept, "For\u{e9}t");
}

/// A keyword the server does not know is refused with `bad_card`, not dropped silently: the
/// card would be counted without it.
#[test]
fn an_unknown_keyword_is_refused_not_dropped() {
    use grand_melee_protocol::{ClientMessage, decode_client};
    let pack = |keywords: serde_json::Value| {
        let request = serde_json::json!({
            "type": "magic_tech.deploy",
            "id": 3,
            "land": {"name": "Forest", "type": "land", "basic": "green", "keywords": keywords},
        });
        let Ok(ClientMessage::MagicTechDeploy { land, .. }) =
            decode_client(&rmp_serde::to_vec_named(&request).unwrap())
        else {
            panic!("{request} decodes");
        };
        land
    };
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    for unknown in [
        serde_json::json!({"deathtouch": true}),
        serde_json::json!({"flying": true, "flyng": true}),
    ] {
        play.mt_refused(
            ANN,
            C::Deploy {
                land: pack(unknown),
            },
            ErrorCode::BadCard,
        );
    }
    let known = pack(serde_json::json!({"flying": true}));
    assert!(known.as_ref().unwrap().keywords.flying);
    play.mt(ANN, C::Deploy { land: known });
}

// ----- The documents say what the server does (issue 46) -----------------------------------------

/// A document of the repository (`PROTOCOL.md`, `docs/RULES.md`).
fn document(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    std::fs::read_to_string(format!("{root}/{path}")).unwrap()
}

/// The text of the section under `heading` (a whole heading line, `### name`) of `path`, up to
/// the next heading.
fn section(path: &str, heading: &str) -> String {
    let doc = document(path);
    let start = doc
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("{path} has no {heading}"))
        + heading.len()
        + 2;
    let rest = &doc[start..];
    let end = rest.find("\n#").unwrap_or(rest.len());
    rest[..end].to_owned()
}

/// PROTOCOL.md's section on a request.
fn request_section(request: &str) -> String {
    section("PROTOCOL.md", &format!("### {request}"))
}

/// The codes a request's section lists after `Errors:`.
fn documented_errors(request: &str) -> Vec<String> {
    let text = request_section(request);
    let start = text
        .find("Errors:")
        .unwrap_or_else(|| panic!("{request} lists no errors"));
    let errors = &text[start..];
    let errors = &errors[..errors.find("\n\n").unwrap_or(errors.len())];
    errors
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// `request`'s section lists `code` among its errors.
fn assert_documented(request: &str, code: ErrorCode) {
    let listed = documented_errors(request);
    assert!(
        listed.iter().any(|c| c == code.name()),
        "PROTOCOL.md's {request} does not list {}, which the server answers (it lists {listed:?})",
        code.name()
    );
}

/// A number as PROTOCOL.md writes it from five digits on: 65,534.
fn thousands(n: u32) -> String {
    let digits = n.to_string();
    if digits.len() < 5 {
        return digits;
    }
    let (head, tail) = digits.split_at(digits.len() - 3);
    format!("{head},{tail}")
}

/// Issue 46: PROTOCOL.md said a deck is 1–60 cards, twice; the server takes 5–60 (the opening
/// hand to 60).
#[test]
fn protocol_md_gives_the_deck_sizes_the_server_takes() {
    use grand_melee_protocol::magic_tech_types::{MAX_DECK, STARTING_HAND};
    let mut play = Play::lobby();
    play.refused(
        Actor::Player(ANN),
        deck(STARTING_HAND - 1),
        ErrorCode::BadAmount,
    );
    play.refused(Actor::Player(ANN), deck(MAX_DECK + 1), ErrorCode::BadAmount);
    play.ok(Actor::Player(ANN), deck(STARTING_HAND));
    play.ok(Actor::Player(ANN), deck(MAX_DECK));
    let text = request_section("magic_tech.declare_deck");
    let range = format!("{STARTING_HAND}–{MAX_DECK}");
    assert!(
        text.contains(&format!("declares one's deck size, {range}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("cards in the deck ({range})")),
        "{text}"
    );
    assert_documented("magic_tech.declare_deck", ErrorCode::BadAmount);
}

/// Issue 46: the host's `ruling {end_turn}` naming his opponent during his own turn answered
/// `not_your_turn`; PROTOCOL.md says `no_running_turn`, which a Grand Melee table answers for
/// the same situation. Now both tables do, and a player not seated is `unknown_player` at both.
#[test]
fn ruling_end_turn_of_a_player_not_taking_the_turn_is_no_running_turn() {
    let mut play = Play::started();
    assert_eq!(play.active(), ANN);
    let end = |player| Command::Ruling(Ruling::EndTurn { player });
    play.refused(Actor::Host, end(BOB), ErrorCode::NoRunningTurn);
    play.refused(Actor::Host, end(9), ErrorCode::UnknownPlayer);
    // The turn clock's expiry answers the same (the session ignores it either way).
    let expire = Command::ExpireTurn {
        player: BOB,
        reason: grand_melee_protocol::Expiry::Clock,
    };
    play.refused(Actor::Host, expire, ErrorCode::NoRunningTurn);
    // The player himself asking out of turn is still `not_your_turn`.
    play.refused(Actor::Player(BOB), Command::EndTurn, ErrorCode::NotYourTurn);
    play.ok(Actor::Host, end(ANN));
    assert_eq!(play.active(), BOB);
    assert_documented("ruling", ErrorCode::NoRunningTurn);
    let preamble = request_section("Magic Tech requests");
    assert!(
        preamble.contains("is `no_running_turn`"),
        "PROTOCOL.md's Magic Tech requests do not say what `ruling` answers: {preamble}"
    );
}

/// Issue 46: RULES.md said a blocker gets "its armour plus its remaining structure", which for a
/// cost-0 blocker is its armour alone: not what destroys it. The server gives it one point more,
/// and RULES.md's example says so with the server's numbers.
#[test]
fn a_cost_zero_blocker_in_a_double_block_gets_what_destroys_it() {
    let mut play = Play::started();
    let ogre = play.put_in_play(creature("Ogre", 3, &[], 3, 3));
    play.pass();
    let memnite = play.put_in_play(creature("Memnite", 0, &[], 1, 1));
    let squire = play.put_in_play(creature("Squire", 1, &[], 1, 1));
    play.pass();
    play.advance_to(MtPhase::Missions);
    play.mt(
        ANN,
        C::Mission {
            attackers: vec![ogre],
            target: Target::Stockpile { player: BOB },
        },
    );
    let events = play.mt(
        BOB,
        C::Block {
            blocks: vec![
                Block {
                    blocker: memnite,
                    attacker: ogre,
                },
                Block {
                    blocker: squire,
                    attacker: ogre,
                },
            ],
        },
    );
    let dealt = |card: CardId| {
        events
            .iter()
            .find_map(|e| match e {
                Event::MagicTechDamaged {
                    target: Target::Card { card: c },
                    amount,
                    effect,
                } if *c == card => Some((*amount, *effect)),
                _ => None,
            })
            .unwrap()
    };
    // Memnite: armour 1, structure 0: 2 destroy it (1 through its armour), not 1.
    assert_eq!(dealt(memnite), (2, 1));
    assert!(play.card(memnite).is_none(), "Memnite is destroyed");
    // The Squire gets the rest, 1, which its armour absorbs.
    assert_eq!(dealt(squire), (1, 0));
    assert_eq!(play.card(squire).unwrap().damage, 0);
    // The two 1/1s deal the Ogre 2, which its armour 3 absorbs.
    assert_eq!(dealt(ogre), (2, 0));
    assert_eq!(play.card(ogre).unwrap().damage, 0);

    let rules = section("docs/RULES.md", "### Damage");
    let flat = rules.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        !flat.contains("what destroys it (its armour plus its remaining structure)"),
        "RULES.md still gives a cost-0 blocker only its armour"
    );
    assert!(
        flat.contains("but always at least one point more than its armour"),
        "{flat}"
    );
    for said in [
        format!(
            "the Ogre deals Memnite {}, and Memnite is destroyed",
            dealt(memnite).0
        ),
        format!(
            "gets the rest, {}, which its armour 1 absorbs",
            dealt(squire).0
        ),
        format!("deal the Ogre {} together", dealt(ogre).0),
    ] {
        assert!(
            flat.contains(&said),
            "RULES.md's example does not say: {said}"
        );
    }
}

/// Issue 46: `heal` on a face-down card answers `bad_card`, which PROTOCOL.md did not list.
#[test]
fn heal_on_a_face_down_card_is_bad_card_and_documented() {
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let card = play.game.board().next_card;
    play.mt(ANN, C::Deploy { land: None });
    play.mt_refused(ANN, C::Heal { card, amount: 1 }, ErrorCode::BadCard);
    assert_documented("magic_tech.heal", ErrorCode::BadCard);
}

/// Issue 46: a life change is at most ±255 (PROTOCOL.md gave an i32 and no bound).
#[test]
fn a_life_change_is_bounded_as_protocol_md_says() {
    use grand_melee_protocol::MAX_LIFE_CHANGE;
    let mut play = Play::started();
    let most = i32::try_from(MAX_LIFE_CHANGE).unwrap();
    let beyond = most + 1;
    for delta in [-beyond, beyond, i32::MIN, i32::MAX, 0] {
        play.mt_refused(ANN, C::Life { delta }, ErrorCode::BadAmount);
    }
    let text = request_section("magic_tech.life");
    assert!(
        text.contains(&format!(
            "| −{MAX_LIFE_CHANGE} to {MAX_LIFE_CHANGE}, not 0 |"
        )),
        "{text}"
    );
    // The largest loss is taken: it empties Ann's stockpile and she runs out.
    let events = play.mt(ANN, C::Life { delta: -most });
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::MagicTechRanOut { player: ANN }))
    );
    assert_documented("magic_tech.life", ErrorCode::BadAmount);
}

/// Issue 46: `damage` and `pay` name at most 1000, a card holds at most 255 counters: the limits
/// are constants, and PROTOCOL.md gives them.
#[test]
fn damage_payments_and_counters_are_bounded_as_protocol_md_says() {
    use grand_melee_protocol::{MAX_COUNTERS, MAX_MAGIC_TECH_AMOUNT};
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let card = play.game.board().next_card;
    play.mt(ANN, C::Deploy { land: None });
    let too_much = MAX_MAGIC_TECH_AMOUNT + 1;
    let at_bob = Target::Stockpile { player: BOB };
    play.mt_refused(
        ANN,
        C::Damage {
            target: at_bob,
            amount: too_much,
        },
        ErrorCode::BadAmount,
    );
    play.mt_refused(
        ANN,
        C::Pay {
            card: None,
            amount: too_much,
        },
        ErrorCode::BadAmount,
    );
    play.rule(Correction::Counters {
        card,
        counters: MAX_COUNTERS,
    });
    play.rule(Correction::Mana {
        player: ANN,
        mana: 1,
    });
    play.mt_refused(
        ANN,
        C::Pay {
            card: Some(card),
            amount: 1,
        },
        ErrorCode::BadAmount,
    );
    let amount = format!("| 1–{MAX_MAGIC_TECH_AMOUNT} |");
    for request in ["magic_tech.damage", "magic_tech.pay"] {
        let text = request_section(request);
        assert!(text.contains(&amount), "{request}: {text}");
        assert_documented(request, ErrorCode::BadAmount);
    }
    let pay = request_section("magic_tech.pay");
    assert!(
        pay.contains(&format!("holds at most {MAX_COUNTERS} counters")),
        "{pay}"
    );
    let propose = request_section("magic_tech.propose");
    assert!(
        propose.contains(&format!("(a face-up card's, 0–{MAX_MAGIC_TECH_AMOUNT})")),
        "{propose}"
    );
}

/// Issue 46: the host could correct unspent mana to at most 1000, while taps went on past it (to
/// 1020). One bound now: a tap that would take a player past it is refused, as is a correction
/// to more; PROTOCOL.md gives it.
#[test]
fn unspent_mana_has_one_bound_for_taps_and_corrections() {
    use grand_melee_protocol::{MAX_TAP_MANA, MAX_UNSPENT_MANA};
    let mut play = Play::started();
    let forest = play.land(Colour::Green);
    let second = play.land(Colour::Red);
    play.refused(
        Actor::Host,
        Command::MagicTech(C::Rule {
            correction: Correction::Mana {
                player: ANN,
                mana: MAX_UNSPENT_MANA + 1,
            },
        }),
        ErrorCode::BadAmount,
    );
    play.rule(Correction::Mana {
        player: ANN,
        mana: MAX_UNSPENT_MANA,
    });
    play.mt_refused(
        ANN,
        C::Tap {
            card: forest,
            mana: 1,
        },
        ErrorCode::BadAmount,
    );
    // A tap for nothing still taps.
    play.mt(
        ANN,
        C::Tap {
            card: forest,
            mana: 0,
        },
    );
    play.rule(Correction::Mana {
        player: ANN,
        mana: MAX_UNSPENT_MANA - 1,
    });
    play.mt(
        ANN,
        C::Tap {
            card: second,
            mana: 1,
        },
    );
    assert_eq!(play.side(ANN).mana, MAX_UNSPENT_MANA);
    let tap = request_section("magic_tech.tap");
    assert!(
        tap.contains(&format!("at most {MAX_UNSPENT_MANA} unspent mana")),
        "{tap}"
    );
    assert!(tap.contains(&format!("at most {MAX_TAP_MANA}")), "{tap}");
    let propose = request_section("magic_tech.propose");
    assert!(
        propose.contains(&format!("(unspent, 0–{MAX_UNSPENT_MANA})")),
        "{propose}"
    );
}

/// Issue 46: once every card number was given out, a deployment was refused with
/// `limit_reached`, "used up this turn's deployments": not what ran out. It is
/// `card_numbers_used_up` now, whose message and PROTOCOL.md say so.
#[test]
fn a_deployment_after_the_last_card_number_says_the_numbers_ran_out() {
    use grand_melee_protocol::MAX_CARD_NUMBER;
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let mut table = view(&play.game);
    table.magic_tech.as_mut().unwrap().next_card = MAX_CARD_NUMBER;
    let mut game = MagicTech::from_view(&table).unwrap();
    let deploy = |land| Command::MagicTech(C::Deploy { land });
    let events = game
        .handle(Actor::Player(ANN), deploy(Some(basic(Colour::Green))))
        .unwrap();
    assert!(events.iter().any(|e| matches!(
        e,
        Event::MagicTechDeployed { card, .. } if *card == MAX_CARD_NUMBER
    )));
    // A land drop is left this turn, but no number.
    let before = view(&game);
    assert_eq!(
        game.handle(Actor::Player(ANN), deploy(Some(basic(Colour::Red)))),
        Err(ErrorCode::CardNumbersUsedUp)
    );
    assert_eq!(view(&game), before);
    let numbers = format!("0–{}", thousands(u32::from(MAX_CARD_NUMBER)));
    let message = ErrorCode::CardNumbersUsedUp.description();
    assert!(message.contains(&numbers), "{message}");
    assert!(!ErrorCode::LimitReached.description().contains("number"));
    assert_documented("magic_tech.deploy", ErrorCode::CardNumbersUsedUp);
    assert!(request_section("magic_tech.deploy").contains(&numbers));
    assert!(
        document("PROTOCOL.md").contains(&format!(
            "| `card_numbers_used_up` | Magic Tech: the table has given out every card number ({numbers})"
        )),
        "the errors table"
    );
}

/// Issue 46: what a card face's fields hold, and that a land has no cost, power or toughness,
/// were not written down. PROTOCOL.md now gives each keyword's value type, checked here against
/// the face's own encoding, and the land's rule, checked against the server.
#[test]
fn protocol_md_gives_each_keywords_value_type_and_the_lands_rule() {
    let all = Keywords {
        flying: true,
        reach: true,
        landwalk: vec![Colour::Green],
        protection: vec![Colour::Red],
        shadow: true,
        trample: true,
        first_strike: true,
        banding: true,
        flanking: true,
        phasing: true,
        rampage: 1,
        regeneration: Some(ManaCost {
            generic: 1,
            coloured: vec![Colour::Black],
        }),
        haste: true,
        ..Keywords::default()
    };
    let encoded = serde_json::to_value(&all).unwrap();
    let encoded = encoded.as_object().unwrap();
    let preamble = request_section("Magic Tech requests");
    let start = preamble
        .find("absent meaning the card has none — ")
        .expect("PROTOCOL.md lists the keywords' types");
    let list = &preamble[start..];
    let list = &list["absent meaning the card has none — ".len()..list.find(". A face").unwrap()];
    let mut documented = std::collections::BTreeMap::new();
    for group in list.split("; ") {
        let (names, kind) = group.split_once(": ").unwrap();
        let kind = kind.split(" (").next().unwrap();
        for name in names.split('`').skip(1).step_by(2) {
            documented.insert(name.to_owned(), kind.to_owned());
        }
    }
    let expected: std::collections::BTreeMap<String, String> = encoded
        .iter()
        .map(|(name, value)| {
            let kind = match value {
                serde_json::Value::Bool(_) => "bool",
                serde_json::Value::Array(_) => "[colour]",
                serde_json::Value::Number(_) => "u8",
                serde_json::Value::Object(_) => "a mana cost",
                other => panic!("{name}: {other}"),
            };
            (name.clone(), kind.to_owned())
        })
        .collect();
    assert_eq!(documented, expected);

    // A land has no cost, power or toughness; only a land is basic.
    let mut play = Play::started();
    play.advance_to(MtPhase::Deploy);
    let forest = basic(Colour::Green);
    for land in [
        CardFace {
            power: 1,
            ..forest.clone()
        },
        CardFace {
            toughness: 1,
            ..forest.clone()
        },
        CardFace {
            cost: ManaCost {
                generic: 1,
                coloured: Vec::new(),
            },
            ..forest.clone()
        },
    ] {
        play.mt_refused(ANN, C::Deploy { land: Some(land) }, ErrorCode::BadCard);
    }
    let flat = preamble.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "a `land`'s `cost` is empty and its `power` and `toughness` are 0, and only a land has a `basic`"
        ),
        "{flat}"
    );
    assert!(flat.contains(&format!(
        "1–{} characters",
        grand_melee_protocol::MAX_CARD_NAME_CHARS
    )));
}

/// Issue 46: a Magic Tech table with `combat_dice` (or Mountain Magic's settings) is
/// `bad_settings`; `create_table` now says so.
#[test]
fn create_table_says_what_a_magic_tech_table_refuses() {
    let dice = Settings {
        combat_dice: true,
        ..settings()
    };
    let mountain = Settings {
        mountain_magic: Some(Default::default()),
        ..settings()
    };
    for refused in [dice, mountain] {
        assert_eq!(
            MagicTech::create(&refused, DiceSecret::from_seed(1)).err(),
            Some(ErrorCode::BadSettings)
        );
    }
    let text = request_section("create_table");
    let start = text.find("`magic_tech` needs").unwrap();
    let clause = &text[start..];
    let clause = &clause[..clause.find(';').unwrap()];
    for needed in [
        "`seats: 2`",
        "no league",
        "`paris`",
        "no `combat_dice`",
        "no `mountain_magic`",
    ] {
        assert!(clause.contains(needed), "{clause}: {needed}");
    }
}

/// Issue 46: `next_phase` listed "untap → draw → upkeep → …", but a turn begins in its upkeep
/// (the server untaps and draws by itself): the phases it moves through are those after it.
#[test]
fn next_phase_lists_the_phases_a_turn_moves_through() {
    let play = Play::started();
    let first = play.phase();
    assert_eq!(first, MtPhase::Upkeep);
    let mut phases = vec![first];
    while let Some(next) = phases.last().unwrap().next() {
        phases.push(next);
    }
    let names: Vec<String> = phases
        .iter()
        .map(|p| {
            serde_json::to_value(p)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let text = request_section("magic_tech.next_phase");
    let start = text.find("next phase: ").unwrap() + "next phase: ".len();
    let chain = &text[start..];
    let chain: Vec<&str> = chain[..chain.find(';').unwrap()].split(" → ").collect();
    assert_eq!(chain, names);
}

// ----- What the example bots needed the documents to say (issue 46) ------------------------------

/// Writing PROTOCOL.md's Magic Tech bot: `magic_tech.pay` put counters on a card only in one's
/// own deploy phase (`not_your_turn`, `wrong_phase` otherwise), which its section did not say;
/// an activation cost (no card) is paid at any time.
#[test]
fn counters_are_paid_in_ones_own_deploy_phase_and_protocol_md_says_so() {
    let mut play = Play::started();
    let forest = play.land(Colour::Green);
    let card = play.game.board().next_card;
    play.mt(ANN, C::Deploy { land: None });
    play.advance_to(MtPhase::Missions);
    play.mt(
        ANN,
        C::Tap {
            card: forest,
            mana: 1,
        },
    );
    let pay = |card| C::Pay { card, amount: 1 };
    play.mt_refused(ANN, pay(Some(card)), ErrorCode::WrongPhase);
    play.mt(ANN, pay(None));
    play.pass();
    play.rule(Correction::Mana {
        player: ANN,
        mana: 1,
    });
    play.mt_refused(ANN, pay(Some(card)), ErrorCode::NotYourTurn);
    assert_documented("magic_tech.pay", ErrorCode::WrongPhase);
    assert_documented("magic_tech.pay", ErrorCode::NotYourTurn);
    assert!(
        request_section("magic_tech.pay").contains("in one's own deploy phase only"),
        "PROTOCOL.md's magic_tech.pay says when counters are paid"
    );
}

/// Writing the bot: "from the end phase the turn passes" read as if a player then waited in
/// his `end` phase for one more `next_phase`; the end phase ends the turn in the same answer.
#[test]
fn next_phase_from_the_missions_ends_the_turn_in_one_answer() {
    let mut play = Play::started();
    play.advance_to(MtPhase::Missions);
    let events = play.mt(ANN, C::NextPhase);
    assert!(matches!(
        events.first(),
        Some(Event::MagicTechPhaseBegan {
            player: ANN,
            phase: MtPhase::End
        })
    ));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::TurnEnded { player: ANN, .. }))
    );
    assert_eq!((play.active(), play.phase()), (BOB, MtPhase::Upkeep));
    assert!(
        request_section("magic_tech.next_phase").contains("the end phase ends the turn at once"),
        "PROTOCOL.md's magic_tech.next_phase says the end phase passes the turn at once"
    );
}

/// Writing the bot: "each coloured symbol as 1 with the matching basic land in play" did not
/// say whose; only the revealer's own basic lands count.
#[test]
fn the_cost_to_reveal_counts_ones_own_basic_lands_only() {
    let mut play = Play::started();
    play.land(Colour::Green);
    play.pass();
    play.advance_to(MtPhase::Deploy);
    let card = play.game.board().next_card;
    play.mt(BOB, C::Deploy { land: None });
    let bears = creature("Grizzly Bears", 1, &[Colour::Green], 2, 2);
    let counters = |counters| Correction::Counters { card, counters };
    play.rule(counters(2));
    let reveal = C::Reveal {
        card,
        face: bears.clone(),
    };
    play.mt_refused(BOB, reveal.clone(), ErrorCode::NotEnoughMana);
    play.rule(counters(4));
    play.mt(BOB, reveal);
    assert!(
        request_section("magic_tech.reveal").contains("the opponent's lands do not count"),
        "PROTOCOL.md's magic_tech.reveal says whose basic lands count"
    );
}
