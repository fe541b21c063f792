//! Ascension leagues (`shared/seeds/ascension.txt`, docs/RULES.md "Ascension leagues"): the
//! ledger's arithmetic against the seed's own examples and limits, the losing-streak remedy, the
//! deck power bonuses, and a league table in the rules core (who decides who plays first, the
//! bonuses in the starting life and hand size, refusals that change nothing, the fold).
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::league::{
    Alliance, Deck, DeckError, DeckSpec, LedgerEntry, Purchase, Rarity, Remedy, SeatDeck,
    bonus_for, bonuses, first_decider,
};
use grand_melee_protocol::rules::{Actor, Command, Table, TableConfig};
use grand_melee_protocol::{ErrorCode, Event, Mirror, Settings, TableId, TableView};

fn spec(name: &str) -> DeckSpec {
    DeckSpec {
        name: name.into(),
        alliance: Alliance::BlueBlackRed,
        basic_set: "Tempest".into(),
        expansion_set: "Stronghold".into(),
    }
}

fn credit(points: u32, place: u8, players: u8, opponents: Vec<u32>) -> LedgerEntry {
    LedgerEntry::Credited {
        table: TableId::nil(),
        table_name: "week".into(),
        place,
        players,
        mana_points: points,
        opponents,
    }
}

/// A registered deck that has earned `points` in one game.
fn deck(points: u32) -> Deck {
    Deck::fold(&[
        LedgerEntry::Registered { deck: spec("Wave") },
        credit(points, 1, 8, vec![1, 2, 3, 4, 5, 6, 7]),
    ])
}

/// Buys `purchase` (removing `remove` cards) and folds the entry in; returns its cost.
fn buy(deck: &mut Deck, purchase: Purchase, remove: u8) -> Result<u32, DeckError> {
    let entry = deck.check_purchase(&purchase, remove)?;
    let LedgerEntry::Bought { cost, .. } = &entry else {
        panic!("a purchase is bought");
    };
    let cost = *cost;
    deck.apply(&entry);
    Ok(cost)
}

/// `count` copies of the card `name` of Tempest (the basic set of [`spec`]'s decks).
fn card(name: &str, rarity: Rarity, count: u8) -> Purchase {
    card_of(name, "Tempest", rarity, count)
}

fn card_of(name: &str, set: &str, rarity: Rarity, count: u8) -> Purchase {
    Purchase::Cards {
        rarity,
        count,
        gold: false,
        legend: false,
        card: Some(name.into()),
        set: Some(set.into()),
    }
}

/// "So if you wanted to add two new sets your cost would be 22 mana points and you would get 5
/// commons from the first set and 5 commons from the second set."
#[test]
fn seed_example_two_new_sets_cost_22_with_five_commons_each() {
    let mut d = deck(40);
    let first = buy(
        &mut d,
        Purchase::ExpansionSet {
            name: "Exodus".into(),
        },
        0,
    )
    .unwrap();
    let second = buy(
        &mut d,
        Purchase::ExpansionSet {
            name: "Weatherlight".into(),
        },
        0,
    )
    .unwrap();
    assert_eq!((first, second), (10, 12));
    assert_eq!(first + second, 22);
    assert_eq!(d.cards, 45 + 10);
    assert_eq!(d.expansion_sets, ["Stronghold", "Exodus", "Weatherlight"]);
    // The third costs 15, and a deck never has more than four.
    assert_eq!(
        buy(
            &mut d,
            Purchase::ExpansionSet {
                name: "Visions".into()
            },
            0
        ),
        Ok(15)
    );
    let before = d.clone();
    assert!(matches!(
        buy(
            &mut d,
            Purchase::ExpansionSet {
                name: "Alliances".into()
            },
            0
        ),
        Err(DeckError::Limit(_))
    ));
    assert_eq!(d, before, "a refusal changes nothing");
    // The same set twice is no purchase at all (whatever its case).
    let mut fresh = deck(40);
    assert!(matches!(
        buy(
            &mut fresh,
            Purchase::ExpansionSet {
                name: "stronghold".into()
            },
            0
        ),
        Err(DeckError::BadPurchase(_))
    ));
}

/// "If you have no sideboard and want to buy one with fifteen cards, it will cost thirty-six
/// mana points. A player can never have more than fifteen cards in their sideboard."
#[test]
fn seed_example_a_fifteen_card_sideboard_from_none_costs_36() {
    let mut d = deck(36);
    let costs: Vec<u32> = (0..3)
        .map(|_| buy(&mut d, Purchase::Sideboard, 0).unwrap())
        .collect();
    assert_eq!(costs, [10, 12, 14]);
    assert_eq!(costs.iter().sum::<u32>(), 36);
    assert_eq!((d.sideboard, d.balance(), d.power), (15, 0, 36));
    assert_eq!(d.cards, 45, "sideboard cards are not in the deck");
    assert!(matches!(
        buy(&mut d, Purchase::Sideboard, 0),
        Err(DeckError::Limit(_))
    ));
}

/// "If your opponent has 15 more points than you then: You decide who plays first and start out
/// with +5 life. At 25+ you decide who plays first, +10 life, and start with +2 cards."
#[test]
fn seed_example_bonus_at_15_is_first_choice_and_5_life_and_at_25_ten_life_two_cards() {
    let at = |behind| bonus_for(0, behind).map(|b| (b.first_choice, b.life, b.cards));
    assert_eq!(at(0), None);
    assert_eq!(at(4), None);
    assert_eq!(at(5), Some((true, 0, 0)));
    assert_eq!(at(10), Some((true, 2, 0)));
    assert_eq!(at(15), Some((true, 5, 0)));
    assert_eq!(at(19), Some((true, 5, 0)));
    assert_eq!(at(20), Some((true, 5, 1)));
    assert_eq!(at(25), Some((true, 10, 2)));
    assert_eq!(at(60), Some((true, 10, 2)), "25+ is the last row");
}

/// At a multiplayer table each deck is compared with the strongest deck at the table; the
/// player furthest behind decides who plays first, the earliest to join among equals.
#[test]
fn each_deck_is_compared_with_the_strongest_at_the_table() {
    let powers = [(0, 30), (1, 18), (2, 5), (3, 29), (4, 5)];
    let b = bonuses(&powers);
    let summary: Vec<(u16, u32, i32, u8)> = b
        .iter()
        .map(|b| (b.player, b.behind, b.life, b.cards))
        .collect();
    assert_eq!(summary, [(1, 12, 2, 0), (2, 25, 10, 2), (4, 25, 10, 2)]);
    assert_eq!(first_decider(&powers), Some(2));
    assert_eq!(first_decider(&[(0, 7), (1, 3)]), None, "4 behind: no bonus");
    assert_eq!(first_decider(&[]), None);
}

#[test]
fn cards_cost_by_rarity_gold_and_legend_and_copies_follow_the_duplicate_limit() {
    let mut d = deck(60);
    assert_eq!(
        buy(&mut d, card("Dark Ritual", Rarity::Common, 2), 0),
        Ok(2)
    );
    assert_eq!(buy(&mut d, card("Sift", Rarity::Uncommon, 1), 0), Ok(2));
    assert_eq!(buy(&mut d, card("Earthcraft", Rarity::Rare, 1), 0), Ok(4));
    let gold_legend = Purchase::Cards {
        rarity: Rarity::Rare,
        count: 1,
        gold: true,
        legend: true,
        card: Some("Sol'kanar the Swamp King".into()),
        set: Some("stronghold".into()),
    };
    assert_eq!(buy(&mut d, gold_legend, 0), Ok(4 + 1 + 2));
    assert_eq!(buy(&mut d, Purchase::BasicLands { count: 4 }, 0), Ok(2));
    assert!(matches!(
        buy(&mut d, Purchase::BasicLands { count: 3 }, 0),
        Err(DeckError::BadPurchase(_))
    ));
    // Two copies of a card at most, until the duplicates option: 8, then 10, never beyond four.
    assert!(matches!(
        buy(&mut d, card("Dark Ritual", Rarity::Common, 3), 0),
        Err(DeckError::Limit(_))
    ));
    assert_eq!(buy(&mut d, Purchase::Duplicates, 0), Ok(8));
    assert_eq!(buy(&mut d, card("Shock", Rarity::Common, 3), 0), Ok(3));
    assert_eq!(buy(&mut d, Purchase::Duplicates, 0), Ok(10));
    assert_eq!(d.duplicates, 4);
    assert!(matches!(
        buy(&mut d, Purchase::Duplicates, 0),
        Err(DeckError::Limit(_))
    ));
    assert_eq!(d.power, 60);
    assert_eq!(d.spent, 2 + 2 + 4 + 7 + 2 + 8 + 3 + 10);
}

#[test]
fn league_names_are_names_up_to_32_characters() {
    let fresh = Deck::default();
    let long = DeckSpec {
        name: "x".repeat(33),
        ..spec("ok")
    };
    let Err(DeckError::BadText(message)) = fresh.check_register(&long) else {
        panic!("33 characters are refused");
    };
    assert!(message.contains("1–32"), "{message}");
    let hidden = DeckSpec {
        expansion_set: "Vi\u{202e}sions".into(),
        ..spec("ok")
    };
    assert!(matches!(
        fresh.check_register(&hidden),
        Err(DeckError::BadText(_))
    ));
    let LedgerEntry::Registered { deck } = fresh
        .check_register(&DeckSpec {
            name: format!("  {}  ", "y".repeat(32)),
            ..spec("ok")
        })
        .unwrap()
    else {
        panic!("registered");
    };
    assert_eq!(deck.name, "y".repeat(32), "trimmed, and 32 characters fit");
}

#[test]
fn spending_more_than_the_balance_is_refused_with_both_numbers() {
    let mut d = deck(7);
    let before = d.clone();
    let refused = buy(
        &mut d,
        Purchase::ExpansionSet {
            name: "Exodus".into(),
        },
        0,
    );
    assert_eq!(
        refused,
        Err(DeckError::NotEnoughPoints {
            cost: 10,
            balance: 7
        })
    );
    assert_eq!(refused.unwrap_err().code(), ErrorCode::NotEnoughPoints);
    assert_eq!(d, before);
    assert!(matches!(
        Deck::default().check_purchase(&Purchase::Sideboard, 0),
        Err(DeckError::NotRegistered)
    ));
}

/// "Decks can never have more than seventy cards. If a player buys more cards than he can
/// legally keep in his deck […] the player must remove a card."
#[test]
fn the_deck_never_holds_more_than_seventy_cards() {
    let mut d = deck(100);
    for _ in 0..5 {
        buy(&mut d, Purchase::BasicLands { count: 4 }, 0).unwrap();
    }
    buy(&mut d, Purchase::BasicLands { count: 4 }, 0).unwrap();
    assert_eq!(d.cards, 69);
    let before = d.clone();
    assert_eq!(
        buy(&mut d, Purchase::BasicLands { count: 2 }, 0),
        Err(DeckError::DeckFull { would: 71, over: 1 })
    );
    assert_eq!(d, before);
    assert!(
        matches!(
            buy(&mut d, Purchase::BasicLands { count: 2 }, 3),
            Err(DeckError::BadPurchase(_))
        ),
        "remove at most what is bought"
    );
    assert_eq!(buy(&mut d, Purchase::BasicLands { count: 2 }, 1), Ok(1));
    assert_eq!(d.cards, 70);
}

/// "If a player loses five games (consecutively) […] This option may only be used in the first
/// 10 games they play."
#[test]
fn the_losing_streak_remedy_is_open_once_after_five_losses_within_ten_games() {
    let mut entries = vec![LedgerEntry::Registered { deck: spec("Sad") }];
    entries.push(credit(3, 1, 4, vec![1, 2, 3]));
    for _ in 0..4 {
        entries.push(credit(0, 4, 4, vec![1, 2, 3]));
    }
    let d = Deck::fold(&entries);
    assert_eq!(d.losing_streak, 4);
    assert!(!d.remedy_open());
    assert!(matches!(
        d.check_remedy(&Remedy::SwapFive),
        Err(DeckError::NoRemedy(_))
    ));
    entries.push(credit(1, 3, 4, vec![1, 2, 3]));
    let d = Deck::fold(&entries);
    assert!(
        d.remedy_open(),
        "five losses in a row (a third place is a loss too)"
    );
    let taken = d
        .check_remedy(&Remedy::NewDeck {
            deck: spec("Fresh"),
        })
        .unwrap();
    entries.push(taken);
    let d = Deck::fold(&entries);
    assert!(d.remedy_used && d.no_rares);
    assert_eq!(d.spec.as_ref().unwrap().name, "Fresh");
    assert_eq!(d.power, 4, "the ledger carries on");
    assert!(
        matches!(
            d.check_remedy(&Remedy::SwapFive),
            Err(DeckError::NoRemedy(_))
        ),
        "once"
    );

    // Five losses after the tenth game open nothing; earned within ten, it closes after ten.
    let mut late = vec![LedgerEntry::Registered { deck: spec("Late") }];
    for _ in 0..6 {
        late.push(credit(5, 1, 6, vec![1, 2, 3, 4, 5]));
    }
    for _ in 0..5 {
        late.push(credit(0, 6, 6, vec![1, 2, 3, 4, 5]));
    }
    assert!(!Deck::fold(&late).remedy_open());
    let mut early = vec![LedgerEntry::Registered {
        deck: spec("Early"),
    }];
    for _ in 0..5 {
        early.push(credit(0, 2, 2, vec![1]));
    }
    assert!(Deck::fold(&early).remedy_open());
    for _ in 0..6 {
        early.push(credit(1, 1, 2, vec![1]));
    }
    assert!(
        !Deck::fold(&early).remedy_open(),
        "too late: eleven games played"
    );
}

#[test]
fn a_two_player_game_remembers_the_opponent_and_a_bigger_one_forgets_him() {
    let mut entries = vec![LedgerEntry::Registered { deck: spec("Duel") }];
    entries.push(credit(1, 1, 2, vec![4]));
    assert_eq!(Deck::fold(&entries).last_duel, Some(4));
    entries.push(credit(2, 1, 3, vec![4, 5]));
    assert_eq!(Deck::fold(&entries).last_duel, None);
}

// ----- A league table in the rules core ------------------------------------------------------

fn league_config() -> TableConfig {
    TableConfig {
        league: true,
        ..TableConfig::seeded(7)
    }
}

fn seat_deck(member: u32, power: u32) -> Option<SeatDeck> {
    Some(SeatDeck {
        member,
        deck: format!("deck {member}"),
        power,
        last_duel: None,
    })
}

/// A league table's lobby with decks of these powers (player i is member i).
fn league_lobby(powers: &[u32]) -> (Table, Vec<Event>) {
    let mut table = Table::new(league_config()).unwrap();
    let mut events = Vec::new();
    for (i, power) in powers.iter().enumerate() {
        let join = Command::Join {
            name: format!("P{i}"),
            entropy: String::new(),
            deck: seat_deck(u32::try_from(i).unwrap(), *power),
        };
        events.extend(table.handle(Actor::Host, join).unwrap());
    }
    (table, events)
}

fn settings() -> Settings {
    Settings {
        league: Some(grand_melee_protocol::league::LeagueId::from_u128(1)),
        ..Settings::default()
    }
}

/// The view a client mirroring every event would show, and the one `Table::view` gives, agree.
fn check_fold(table: &Table, events: &[Event]) -> TableView {
    let empty = Table::new(league_config())
        .unwrap()
        .view(TableId::nil(), "t", 0, &settings());
    let mut mirror = Mirror::new(&empty).unwrap();
    mirror.apply_batch(1, events).unwrap();
    let live = table.view(TableId::nil(), "t", events.len() as u64, &settings());
    assert_eq!(mirror.view(), live);
    let again = Mirror::new(&live).unwrap();
    assert_eq!(again.view(), live, "from_view keeps the league fields");
    live
}

#[test]
fn a_league_table_seats_members_only_and_each_once() {
    let (mut table, _) = league_lobby(&[3]);
    let before = table.clone();
    assert_eq!(
        table.handle(Actor::Host, Command::join("Stranger")),
        Err(ErrorCode::LeagueSeat)
    );
    let again = Command::Join {
        name: "Twin".into(),
        entropy: String::new(),
        deck: seat_deck(0, 3),
    };
    assert_eq!(
        table.handle(Actor::Host, again),
        Err(ErrorCode::AlreadySeated)
    );
    assert_eq!(table, before);
    let mut plain = Table::new(TableConfig::seeded(1)).unwrap();
    let with_deck = Command::Join {
        name: "Ann".into(),
        entropy: String::new(),
        deck: seat_deck(0, 0),
    };
    assert_eq!(
        plain.handle(Actor::Host, with_deck),
        Err(ErrorCode::BadMessage)
    );
}

/// Powers 20, 12, 0 and 0: P2 and P3 are 20 behind (first choice, +5 life, +1 card), P1 is 8
/// behind (first choice only). P2, the earlier of the two furthest behind, decides: his choice
/// plays first; the host's and anyone else's choice is refused and changes nothing.
#[test]
fn the_deck_furthest_behind_decides_who_plays_first_and_bonuses_start_the_game() {
    let (mut table, mut events) = league_lobby(&[20, 12, 0, 0]);
    assert_eq!(table.first_decider(), Some(2));
    let before = table.clone();
    assert_eq!(
        table.handle(Actor::Player(3), Command::ChooseFirst { player: 3 }),
        Err(ErrorCode::NotDecider)
    );
    assert_eq!(
        table.handle(Actor::Host, Command::start(Some(0))),
        Err(ErrorCode::NotDecider)
    );
    assert_eq!(
        table.handle(Actor::Player(2), Command::ChooseFirst { player: 9 }),
        Err(ErrorCode::UnknownPlayer)
    );
    assert_eq!(table, before, "refusals change nothing");
    events.extend(
        table
            .handle(Actor::Player(2), Command::ChooseFirst { player: 1 })
            .unwrap(),
    );
    let lobby = check_fold(&table, &events);
    assert_eq!(
        (lobby.first_decider, lobby.first_choice),
        (Some(2), Some(1))
    );
    let started = table.handle(Actor::Host, Command::start(None)).unwrap();
    let Some(Event::GameStarted {
        first_player,
        first_decided_by,
        bonuses,
        first_player_chosen,
        ..
    }) = started.first()
    else {
        panic!("game_started");
    };
    assert_eq!((*first_player, *first_decided_by), (1, Some(2)));
    assert!(
        *first_player_chosen,
        "not drawn: the dice verifier skips it"
    );
    assert_eq!(bonuses.len(), 3);
    events.extend(started);
    let view = check_fold(&table, &events);
    let p = |id: u16| view.player(id).unwrap();
    assert_eq!(
        (p(0).life, p(0).hand_size, p(0).bonus.clone()),
        (20, 7, None)
    );
    assert_eq!((p(1).life, p(1).hand_size), (20, 7));
    assert_eq!(p(1).bonus.as_ref().map(|b| b.behind), Some(8));
    assert_eq!((p(2).life, p(2).hand_size), (25, 8));
    assert_eq!((p(3).life, p(3).hand_size), (25, 8));
    assert_eq!(view.first_decider, Some(2));
    assert_eq!(view.first_choice, None);
    // A mulligan goes down from the hand dealt (a bonus included).
    let deciders = table.mulligan_deciders();
    assert_eq!(deciders, [1], "the chosen first player decides first");
    events.extend(table.handle(Actor::Player(1), Command::Keep).unwrap());
    let next = table.mulligan_deciders()[0];
    let dealt = view.player(next).unwrap().hand_size;
    events.extend(
        table
            .handle(Actor::Player(next), Command::Mulligan)
            .unwrap(),
    );
    assert_eq!(
        check_fold(&table, &events).player(next).unwrap().hand_size,
        dealt - 1
    );
}

/// With no choice made, the decider plays first himself; a choice made by a player who is no
/// longer the decider (a weaker deck sat down since) does not count; a chosen player who leaves
/// takes the choice with him.
#[test]
fn a_decider_who_chose_nobody_plays_first_and_stale_choices_do_not_count() {
    let (mut table, mut events) = league_lobby(&[10, 4]);
    assert_eq!(table.first_decider(), Some(1));
    events.extend(
        table
            .handle(Actor::Player(1), Command::ChooseFirst { player: 0 })
            .unwrap(),
    );
    // A deck with no points sits down: he is now furthest behind (10), and Bob's choice lapses.
    events.extend(
        table
            .handle(
                Actor::Host,
                Command::Join {
                    name: "P2".into(),
                    entropy: String::new(),
                    deck: seat_deck(2, 0),
                },
            )
            .unwrap(),
    );
    let view = check_fold(&table, &events);
    assert_eq!((view.first_decider, view.first_choice), (Some(2), None));
    events.extend(table.handle(Actor::Host, Command::start(None)).unwrap());
    let view = check_fold(&table, &events);
    assert_eq!(view.first_player, Some(2));
    assert_eq!(view.player(2).unwrap().life, 22);
    assert_eq!(
        view.player(1).unwrap().life,
        20,
        "6 behind: first choice only"
    );

    let (mut table, mut events) = league_lobby(&[5, 0, 5]);
    events.extend(
        table
            .handle(Actor::Player(1), Command::ChooseFirst { player: 2 })
            .unwrap(),
    );
    events.extend(table.handle(Actor::Player(2), Command::Leave).unwrap());
    let view = check_fold(&table, &events);
    assert_eq!((view.first_decider, view.first_choice), (Some(1), None));
}

/// "Once a player picks an Expansion Set, he can only buy cards from that expansion until he
/// buys another expansion": a card names its set, the deck's basic set or one of its expansion
/// sets (in any case), and nothing else until that set is bought.
#[test]
fn cards_come_from_the_decks_basic_set_or_its_expansion_sets_only() {
    let mut d = deck(40);
    assert_eq!(d.card_sets(), ["Tempest", "Stronghold"]);
    assert_eq!(
        buy(&mut d, card_of("Shock", "stronghold", Rarity::Common, 1), 0),
        Ok(1)
    );
    let refused = buy(
        &mut d,
        card_of("Gerrard's Command", "Visions", Rarity::Common, 1),
        0,
    );
    assert!(
        matches!(&refused, Err(DeckError::BadPurchase(m)) if m.contains("Tempest, Stronghold")),
        "{refused:?}"
    );
    let unnamed = Purchase::Cards {
        rarity: Rarity::Common,
        count: 1,
        gold: false,
        legend: false,
        card: Some("Shock".into()),
        set: None,
    };
    assert!(matches!(
        buy(&mut d, unnamed, 0),
        Err(DeckError::BadPurchase(_))
    ));
    let nameless = Purchase::Cards {
        rarity: Rarity::Common,
        count: 1,
        gold: false,
        legend: false,
        card: None,
        set: Some("Tempest".into()),
    };
    assert!(matches!(
        buy(&mut d, nameless, 0),
        Err(DeckError::BadPurchase(_))
    ));
    let visions = Purchase::ExpansionSet {
        name: "Visions".into(),
    };
    assert_eq!(buy(&mut d, visions, 0), Ok(10));
    assert_eq!(d.card_sets(), ["Tempest", "Stronghold", "Visions"]);
    assert_eq!(
        buy(
            &mut d,
            card_of("Gerrard's Command", "Visions", Rarity::Common, 1),
            0
        ),
        Ok(1)
    );
}

/// The limit of copies counts every copy of a card bought over the ledger (its name in any
/// case), not each purchase alone.
#[test]
fn copies_of_a_card_add_up_over_the_ledger() {
    let mut d = deck(40);
    assert_eq!(buy(&mut d, card("Shock", Rarity::Common, 2), 0), Ok(2));
    assert!(matches!(
        buy(&mut d, card("shock", Rarity::Common, 1), 0),
        Err(DeckError::Limit(_))
    ));
    assert_eq!(d.copies.get("shock"), Some(&2));
    // Another card is another count; the duplicates option raises the limit for all.
    assert_eq!(
        buy(&mut d, card("Dark Ritual", Rarity::Common, 2), 0),
        Ok(2)
    );
    assert_eq!(buy(&mut d, Purchase::Duplicates, 0), Ok(8));
    assert_eq!(buy(&mut d, card("SHOCK", Rarity::Common, 1), 0), Ok(1));
    assert!(matches!(
        buy(&mut d, card("Shock", Rarity::Common, 1), 0),
        Err(DeckError::Limit(_))
    ));
    assert_eq!(d.copies.get("shock"), Some(&3));
}

/// Issue 43: the copies of a card are counted by its name as every name is compared, with
/// look-alike letters folded: `Lion` twice, then `Lіon` (a Cyrillic і) twice, with the limit
/// at 2: the second pair is refused.
#[test]
fn a_card_spelt_with_look_alike_letters_is_the_same_card_under_the_limit() {
    let mut d = deck(40);
    assert_eq!(buy(&mut d, card("Lion", Rarity::Common, 2), 0), Ok(2));
    assert!(matches!(
        buy(&mut d, card("L\u{456}on", Rarity::Common, 2), 0),
        Err(DeckError::Limit(_))
    ));
    assert!(matches!(
        buy(&mut d, card("LI\u{41e}N", Rarity::Common, 1), 0),
        Err(DeckError::Limit(_))
    ));
    // Another card still has its own count.
    assert_eq!(buy(&mut d, card("Loin", Rarity::Common, 2), 0), Ok(2));
}

/// A choice lapses for good once its maker stops deciding: when the weaker deck that took over
/// leaves again, the old decider decides but has chosen nobody. So a mirror started from a
/// snapshot taken while the choice was hidden folds to the same view as the table.
#[test]
fn a_choice_lapses_for_good_when_its_maker_stops_deciding() {
    let (mut table, mut events) = league_lobby(&[11, 8, 4]);
    assert_eq!(table.first_decider(), Some(2));
    events.extend(
        table
            .handle(Actor::Player(2), Command::ChooseFirst { player: 1 })
            .unwrap(),
    );
    let join = Command::Join {
        name: "P3".into(),
        entropy: String::new(),
        deck: seat_deck(3, 0),
    };
    events.extend(table.handle(Actor::Host, join).unwrap());
    let hidden = check_fold(&table, &events);
    assert_eq!((hidden.first_decider, hidden.first_choice), (Some(3), None));
    let mut late = Mirror::new(&hidden).unwrap();
    let left = table.handle(Actor::Player(3), Command::Leave).unwrap();
    late.apply_batch(hidden.seq + 1, &left).unwrap();
    events.extend(left);
    let view = check_fold(&table, &events);
    assert_eq!((view.first_decider, view.first_choice), (Some(2), None));
    assert_eq!(
        late.view(),
        view,
        "a fold from the snapshot equals the table"
    );
    events.extend(table.handle(Actor::Host, Command::start(None)).unwrap());
    assert_eq!(check_fold(&table, &events).first_player, Some(2));
}

/// A deck's expansion set is another set than its basic set: registering one set as both (in
/// any case, or in look-alike letters) is refused, and nothing is registered.
#[test]
fn the_expansion_set_must_differ_from_the_basic_set() {
    let fresh = Deck::default();
    let base = spec("ok");
    for expansion in [
        base.basic_set.clone(),
        base.basic_set.to_uppercase(),
        format!("  {}", base.basic_set),
    ] {
        let same = DeckSpec {
            expansion_set: expansion.clone(),
            ..base.clone()
        };
        assert!(
            matches!(fresh.check_register(&same), Err(DeckError::BadPurchase(_))),
            "{expansion:?} is the basic set {:?}",
            base.basic_set
        );
    }
    assert!(fresh.check_register(&base).is_ok());
}
