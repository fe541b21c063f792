//! Magic Tech in the terminal: the board drawn at 80 columns in the rows the frame gives it on
//! an 80×24 terminal, the commands' requests, the events' words, the situation and `status`.

#![allow(clippy::unwrap_used)]

use grand_melee_protocol::magic_tech_types::{
    Area, Block, CardFace, CardType, CardView, Colour, Correction, Keywords, MagicTechView,
    ManaCost, MissionView, MtPhase, SideView, Target, Zone,
};
use grand_melee_protocol::{
    ClientMessage, Event, PlayerStatus, PlayerView, Settings, StageName, TableId, TableView,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::commands::parse;
use super::{MagicTech, Situation, words};
use crate::games::{Panel, Urgency};
use crate::words::{CommandError, Resolver};

fn player(player: u16, name: &str) -> PlayerView {
    PlayerView {
        player,
        name: name.into(),
        seat: Some(u8::try_from(player).unwrap()),
        life: 0,
        poison: 0,
        status: PlayerStatus::Alive,
        hand_size: 0,
        kept: true,
        connected: true,
        absent: false,
        muted: false,
        may_attack: Vec::new(),
        may_target: Vec::new(),
        extra_turns: 0,
        extra_next: 0,
        stacks: Vec::new(),
        deck: None,
        bonus: None,
    }
}

fn face(
    name: &str,
    card_type: CardType,
    generic: u8,
    coloured: Vec<Colour>,
    pt: (u8, u8),
) -> CardFace {
    CardFace {
        name: name.into(),
        card_type,
        cost: ManaCost { generic, coloured },
        power: pt.0,
        toughness: pt.1,
        basic: None,
        keywords: Keywords::default(),
    }
}

fn forest() -> CardFace {
    CardFace {
        basic: Some(Colour::Green),
        ..face("Forest", CardType::Land, 0, Vec::new(), (0, 0))
    }
}

fn card(card: u16, owner: u16, face: Option<CardFace>, area: Area) -> CardView {
    CardView {
        card,
        owner,
        face,
        counters: 0,
        damage: 0,
        tapped: false,
        area,
        fresh: false,
        shown: false,
    }
}

/// Ann (1) against Ben (2), Ann's fourth turn, in her missions phase with a mission under way
/// against Ben's stockpile; Ben has proposed a correction.
fn mid_game() -> TableView {
    let mut view = TableView::new(TableId::nil(), "duel", Settings::default());
    view.settings.game = grand_melee_protocol::GameKind::MagicTech;
    view.stage = StageName::Playing;
    view.players = vec![player(1, "Ann"), player(2, "Ben")];
    let side = |player, stockpile, hand, scrapheap, mana| SideView {
        player,
        deck: Some(40),
        stockpile,
        hand,
        scrapheap,
        mana,
    };
    let bears = face(
        "Grizzly Bears",
        CardType::Creature,
        1,
        vec![Colour::Green],
        (2, 2),
    );
    let wall = face(
        "Wall of Stone",
        CardType::Creature,
        1,
        vec![Colour::Red; 2],
        (0, 8),
    );
    let icy = face("Icy Manipulator", CardType::Artifact, 4, Vec::new(), (0, 0));
    let mut cards = vec![
        card(0, 1, Some(forest()), Area::Deploy),
        card(1, 1, Some(forest()), Area::Deploy),
        card(2, 1, Some(bears), Area::Patrol),
        card(3, 1, None, Area::Deploy),
        card(4, 2, Some(wall), Area::Guard { card: None }),
        card(5, 2, Some(icy), Area::Deploy),
        card(6, 2, None, Area::Deploy),
    ];
    cards[1].tapped = true;
    cards[2].damage = 1;
    cards[3].counters = 2;
    cards[3].fresh = true;
    cards[6].counters = 1;
    cards[6].shown = true;
    view.magic_tech = Some(Box::new(MagicTechView {
        sides: vec![side(1, 31, 4, 2, 1), side(2, 29, 6, 3, 0)],
        cards,
        active: Some(1),
        phase: Some(MtPhase::Missions),
        turn_number: 7,
        deployed: 1,
        lands: 0,
        mission: Some(MissionView {
            player: 1,
            attackers: vec![2],
            target: Target::Stockpile { player: 2 },
        }),
        proposal: None,
        next_card: 7,
    }));
    view
}

fn board(view: &TableView) -> &MagicTechView {
    view.magic_tech.as_deref().unwrap()
}

fn board_mut(view: &mut TableView) -> &mut MagicTechView {
    view.magic_tech.as_deref_mut().unwrap()
}

/// The panel drawn `width`×`rows` for `me`, row by row.
fn draw(view: &TableView, me: Option<u16>, width: u16, rows: u16, titled: bool) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, rows)).unwrap();
    terminal
        .draw(|f| MagicTech.render(f, Rect::new(0, 0, width, rows), view, me, titled))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..rows)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

#[test]
fn the_board_is_readable_in_the_rows_an_80_by_24_terminal_leaves_it() {
    let view = mid_game();
    // 80×24: 19 rows between the bars, at least 4 for the log; the compact board and a title.
    let rows = u16::try_from(MagicTech.rows(2, 80, false)).unwrap();
    assert!(
        3 + 2 + 4 + rows < 24,
        "{rows} rows leave no room for the log"
    );
    let screen = draw(&view, Some(2), 80, rows + 1, true);
    let text = screen.join("\n");
    // Ben sees Ann's side on top and his own below, the mission between.
    let ann = screen
        .iter()
        .position(|r| r.contains("Ann · stockpile 31"))
        .unwrap();
    let ben = screen
        .iter()
        .position(|r| r.contains("Ben · stockpile 29"))
        .unwrap();
    let middle = screen
        .iter()
        .position(|r| r.contains("MISSION #2 → Ben's stockpile"))
        .unwrap();
    assert!(ann < middle && middle < ben, "{text}");
    assert!(
        screen[ann].starts_with("▶Ann"),
        "the active side is marked: {text}"
    );
    for expected in [
        "hand 4 · scrapheap 2 · mana 1 · deck 40",
        // A creature with attack/armour/structure and its damage, on patrol.
        "patrol  #2 Grizzly Bears 2/2/2 d1",
        // A tapped land; a face-down card with its counters, new this turn.
        "#1 Forest↷",
        "#3 ▫c2*",
        // A guard against what it guards; a non-creature permanent; a shown face-down card.
        "guard   #4 Wall of Stone 0/8/3 →stockpile",
        "#5 Icy Manipulator -/4/4",
        "#6 ▫c1!",
        "turn 7 · Ann's missions · deployed 1 · lands 0",
    ] {
        assert!(text.contains(expected), "`{expected}` missing:\n{text}");
    }
    assert!(screen.iter().all(|r| r.chars().count() <= 80));
}

#[test]
fn a_crowded_board_keeps_both_sides_and_the_turn_in_its_rows() {
    let mut view = mid_game();
    let b = board_mut(&mut view);
    for n in 7..90 {
        b.cards.push(card(n, 1 + n % 2, None, Area::Deploy));
    }
    let screen = draw(&view, Some(1), 80, 11, false);
    let text = screen.join("\n");
    assert!(
        screen[0].starts_with(" Ben") && text.contains("more row(s)"),
        "{text}"
    );
    assert!(text.contains("▶Ann"), "{text}");
    assert!(text.contains("MISSION"), "{text}");
}

#[test]
fn a_spectator_sees_the_first_side_below() {
    let view = mid_game();
    let screen = draw(&view, None, 80, 12, false);
    let ann = screen.iter().position(|r| r.contains("Ann ·")).unwrap();
    let ben = screen.iter().position(|r| r.contains("Ben ·")).unwrap();
    assert!(ben < ann);
}

fn parsed(line: &str, view: &TableView, me: u16) -> Result<Option<ClientMessage>, CommandError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let resolve = Resolver {
        view: Some(view),
        me: Some(me),
    };
    parse(&words[0].to_ascii_lowercase(), &words[1..], line, &resolve)
}

#[test]
fn reveal_carries_the_declaration() {
    let view = mid_game();
    let Ok(Some(ClientMessage::MagicTechReveal { card, face, .. })) = parsed(
        "reveal #3 creature 2GG 3/4 flying first-strike rampage=2 protection=RB regen=1G Kird Ape Lord",
        &view,
        1,
    ) else {
        panic!("not a reveal");
    };
    assert_eq!(card, 3);
    assert_eq!(face.name, "Kird Ape Lord");
    assert_eq!(face.card_type, CardType::Creature);
    assert_eq!(
        face.cost,
        ManaCost {
            generic: 2,
            coloured: vec![Colour::Green, Colour::Green]
        }
    );
    assert_eq!((face.power, face.toughness), (3, 4));
    let k = &face.keywords;
    assert!(k.flying && k.first_strike && !k.trample);
    assert_eq!(k.rampage, 2);
    assert_eq!(k.protection, vec![Colour::Red, Colour::Black]);
    assert_eq!(
        k.regeneration,
        Some(ManaCost {
            generic: 1,
            coloured: vec![Colour::Green]
        })
    );
    // A sorcery needs no power; a creature without it, or a card without a name, is refused.
    assert!(matches!(
        parsed("reveal 3 sorcery UU Counterspell Deluxe", &view, 1),
        Ok(Some(ClientMessage::MagicTechReveal { face, .. })) if face.card_type == CardType::Sorcery && face.power == 0
    ));
    for bad in [
        "reveal 3 creature 2G Grizzly",
        "reveal 3 creature 1G 2/2",
        "reveal 3 creature 1Q 2/2 Bears",
        "reveal 3 goblin 1 Bears",
        "reveal x creature 1G 2/2 Bears",
    ] {
        assert!(parsed(bad, &view, 1).is_err(), "{bad}");
    }
}

#[test]
fn the_commands_make_their_requests() {
    let view = mid_game();
    let cases: Vec<(&str, ClientMessage)> = vec![
        (
            "deck 40",
            ClientMessage::MagicTechDeclareDeck { id: 0, size: 40 },
        ),
        ("next", ClientMessage::MagicTechNextPhase { id: 0 }),
        (
            "deploy",
            ClientMessage::MagicTechDeploy { id: 0, land: None },
        ),
        (
            "land Forest",
            ClientMessage::MagicTechDeploy {
                id: 0,
                land: Some(forest()),
            },
        ),
        (
            "tap 0",
            ClientMessage::MagicTechTap {
                id: 0,
                card: 0,
                mana: 1,
            },
        ),
        (
            "tap #5 2",
            ClientMessage::MagicTechTap {
                id: 0,
                card: 5,
                mana: 2,
            },
        ),
        (
            "pay 3 2",
            ClientMessage::MagicTechPay {
                id: 0,
                card: Some(3),
                amount: 2,
            },
        ),
        (
            "pay ability 1",
            ClientMessage::MagicTechPay {
                id: 0,
                card: None,
                amount: 1,
            },
        ),
        (
            "patrol 2",
            ClientMessage::MagicTechRelocate {
                id: 0,
                card: 2,
                area: Area::Patrol,
            },
        ),
        (
            "guard 2 0",
            ClientMessage::MagicTechRelocate {
                id: 0,
                card: 2,
                area: Area::Guard { card: Some(0) },
            },
        ),
        (
            "guard 2 stockpile",
            ClientMessage::MagicTechRelocate {
                id: 0,
                card: 2,
                area: Area::Guard { card: None },
            },
        ),
        // Ann's mission against the stockpile aims at Ben's.
        (
            "mission stockpile 2",
            ClientMessage::MagicTechMission {
                id: 0,
                attackers: vec![2],
                target: Target::Stockpile { player: 2 },
            },
        ),
        (
            "mission 5 2",
            ClientMessage::MagicTechMission {
                id: 0,
                attackers: vec![2],
                target: Target::Card { card: 5 },
            },
        ),
        (
            "block none",
            ClientMessage::MagicTechBlock {
                id: 0,
                blocks: vec![],
            },
        ),
        (
            "block 4:2",
            ClientMessage::MagicTechBlock {
                id: 0,
                blocks: vec![Block {
                    blocker: 4,
                    attacker: 2,
                }],
            },
        ),
        (
            "damage stockpile 3",
            ClientMessage::MagicTechDamage {
                id: 0,
                target: Target::Stockpile { player: 2 },
                amount: 3,
            },
        ),
        (
            "damage stockpile Ann 3",
            ClientMessage::MagicTechDamage {
                id: 0,
                target: Target::Stockpile { player: 1 },
                amount: 3,
            },
        ),
        (
            "damage 4 5",
            ClientMessage::MagicTechDamage {
                id: 0,
                target: Target::Card { card: 4 },
                amount: 5,
            },
        ),
        (
            "heal 2 1",
            ClientMessage::MagicTechHeal {
                id: 0,
                card: 2,
                amount: 1,
            },
        ),
        (
            "regen 2",
            ClientMessage::MagicTechRegenerate { id: 0, card: 2 },
        ),
        ("draw 2", ClientMessage::MagicTechDraw { id: 0, count: 2 }),
        ("life -3", ClientMessage::MagicTechLife { id: 0, delta: -3 }),
        (
            "remove 2 hand",
            ClientMessage::MagicTechLeavePlay {
                id: 0,
                card: 2,
                to: Zone::Hand,
            },
        ),
        (
            "propose move Ben hand scrapheap 2",
            ClientMessage::MagicTechPropose {
                id: 0,
                correction: Correction::Move {
                    player: 2,
                    from: Zone::Hand,
                    to: Zone::Scrapheap,
                    count: 2,
                },
            },
        ),
        (
            "rule tapped 1 no",
            ClientMessage::MagicTechRule {
                id: 0,
                correction: Correction::Tapped {
                    card: 1,
                    tapped: false,
                },
            },
        ),
        (
            "propose counters 3 4",
            ClientMessage::MagicTechPropose {
                id: 0,
                correction: Correction::Counters {
                    card: 3,
                    counters: 4,
                },
            },
        ),
        (
            "accept",
            ClientMessage::MagicTechAnswer {
                id: 0,
                accept: true,
            },
        ),
        (
            "decline",
            ClientMessage::MagicTechAnswer {
                id: 0,
                accept: false,
            },
        ),
        ("keep", ClientMessage::Keep { id: 0 }),
        ("mulligan", ClientMessage::Mulligan { id: 0 }),
    ];
    for (line, expected) in cases {
        assert_eq!(parsed(line, &view, 1), Ok(Some(expected)), "{line}");
    }
    // Words that fit no form are usage errors; a number too large for the field is refused.
    for bad in [
        "deck 300",
        "block 4-2",
        "guard 2",
        "mission stockpile",
        "propose mana",
        "remove 2 moon",
    ] {
        assert!(parsed(bad, &view, 1).is_err(), "{bad}");
    }
    assert_eq!(parsed("fly", &view, 1), Ok(None));
}

#[test]
fn every_command_has_a_help_line_and_parses_to_a_request_or_a_usage() {
    let view = mid_game();
    for name in super::commands::NAMES {
        assert!(
            super::commands::HELP
                .play
                .iter()
                .chain(super::commands::HELP.host)
                .any(|(usage, _)| usage.split(' ').next() == Some(name)),
            "{name} has no help line"
        );
        assert!(
            !matches!(parsed(name, &view, 1), Ok(None)),
            "{name} is not parsed"
        );
    }
}

#[test]
fn the_events_are_worded_with_the_cards_names() {
    let view = mid_game();
    let said = |event: Event| words::wording(&event, &view).unwrap();
    let w = said(Event::MagicTechMissionBegan {
        player: 1,
        attackers: vec![2],
        target: Target::Stockpile { player: 2 },
    });
    assert_eq!(w.fields, " player=1 \"Ann\" attackers=2 target=stockpile:2");
    assert_eq!(
        w.sentence,
        "Ann sends #2 Grizzly Bears on a mission against Ben's stockpile"
    );
    let w = said(Event::MagicTechDamaged {
        target: Target::Card { card: 3 },
        amount: 4,
        effect: 2,
    });
    assert_eq!(
        w.sentence,
        "#3 (face down) took 4 damage: 2 mana counter(s) removed"
    );
    let w = said(Event::MagicTechRevealed {
        card: 3,
        face: face("Kird Ape", CardType::Creature, 0, vec![Colour::Red], (1, 1)),
        cost: 3,
    });
    assert_eq!(
        w.fields,
        " card=3 name=\"Kird Ape\" type=creature cost=R pt=1/1 paid=3"
    );
    assert_eq!(w.sentence, "#3 revealed: Kird Ape (creature R) for 3");
    let w = said(Event::MagicTechBlocked {
        blocks: vec![Block {
            blocker: 4,
            attacker: 2,
        }],
    });
    assert_eq!(w.sentence, "#4 Wall of Stone blocks #2 Grizzly Bears");
    assert_eq!(
        said(Event::MagicTechRanOut { player: 2 }).sentence,
        "Ben ran out of cards and loses"
    );
    // Another game's event is not Magic Tech's to word; the frame's wording reaches these.
    assert!(
        words::wording(
            &Event::Mulliganed {
                player: 1,
                hand_size: 4
            },
            &view
        )
        .is_none()
    );
    assert_eq!(
        crate::games::wording(
            &Event::MagicTechDrew {
                player: 1,
                count: 2
            },
            &view
        )
        .map(|w| w.sentence),
        Some("Ann drew 2 card(s)".to_owned())
    );
}

#[test]
fn the_situation_says_who_is_to_act_and_what_is_left() {
    let mut view = mid_game();
    // Ann's mission waits for Ben's blocks.
    let ann = Situation::of(&view, Some(1));
    assert_eq!(ann.script(), "awaiting_blocks defender=\"Ben\"");
    assert_eq!(ann.urgency(), Urgency::Wait);
    let ben = Situation::of(&view, Some(2));
    assert_eq!(ben.script(), "block attackers=1");
    assert_eq!(ben.urgency(), Urgency::Act);
    // In her deploy phase: one deployment and two land drops left.
    let b = board_mut(&mut view);
    b.mission = None;
    b.phase = Some(MtPhase::Deploy);
    assert_eq!(
        Situation::of(&view, Some(1)).script(),
        "your_turn phase=deploy deploys=1 lands=2"
    );
    assert_eq!(
        Situation::of(&view, Some(2)).script(),
        "their_turn player=\"Ann\" phase=deploy"
    );
    // The first player's first turn deploys one card.
    board_mut(&mut view).turn_number = 1;
    board_mut(&mut view).deployed = 0;
    assert!(
        Situation::of(&view, Some(1))
            .text()
            .contains("1 deployment(s), 2 land(s) left")
    );
    // A proposal waits for the other's answer.
    board_mut(&mut view).proposal = Some(grand_melee_protocol::magic_tech_types::ProposalView {
        player: 2,
        correction: Correction::Mana { player: 1, mana: 0 },
    });
    assert_eq!(
        Situation::of(&view, Some(1)).script(),
        "answer proposer=\"Ben\""
    );
    assert_eq!(Situation::of(&view, None), Situation::Spectating);
}

#[test]
fn status_lists_the_sides_the_cards_and_the_mission() {
    let view = mid_game();
    let lines = MagicTech.status_lines(&view, Some(1));
    assert_eq!(
        lines[0],
        "side player=1 \"Ann\" deck=40 stockpile=31 hand=4 scrapheap=2 mana=1 active=true"
    );
    assert!(lines.contains(
        &"card 2 owner=1 area=patrol name=\"Grizzly Bears\" type=creature cost=1G attack=2 armour=2 structure=2 damage=1 tapped=false fresh=false".to_owned()
    ));
    assert!(
        lines.contains(
            &"card 3 owner=1 area=deploy face_down counters=2 damage=0 tapped=false fresh=true"
                .to_owned()
        )
    );
    assert!(lines.contains(
        &"card 4 owner=2 area=guard:stockpile name=\"Wall of Stone\" type=creature cost=1RR attack=0 armour=8 structure=3 damage=0 tapped=false fresh=false".to_owned()
    ));
    assert_eq!(
        lines[lines.len() - 2],
        "turn number=7 player=1 \"Ann\" phase=missions deployed=1 lands=0"
    );
    assert_eq!(
        lines[lines.len() - 1],
        "mission player=1 \"Ann\" attackers=2 target=stockpile:2"
    );
    assert_eq!(board(&view).cards.len() + 4, lines.len());
    assert_eq!(MagicTech.header_facts(&view), "turn 7 · Ann's missions");
}
