//! The card pool (`protocol/data/mountain_magic/pool.json`, parsed once) and the deck recipe:
//! a deck checked rule by rule with a typed error, a deck file read by card names, and the
//! default deck drawn from the pool by the table's dice.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::dice::Dice;
use crate::mountain_magic_types::{Ability, Card, CardNo, Class, Colour, Effect, Kind};
pub use crate::mountain_magic_types::{DeckFile, DeckLine};

/// The pool's data file.
const POOL_JSON: &str = include_str!("../../data/mountain_magic/pool.json");

/// Cards in a deck.
pub const DECK_SIZE: usize = 65;
/// Lands in a deck, and of each colour.
pub const LANDS: usize = 20;
/// Lands of each colour.
pub const LANDS_PER_COLOUR: usize = 4;
/// Creatures of each colour.
pub const CREATURES_PER_COLOUR: usize = 3;
/// Sorceries, and enchantments, of each colour.
pub const SORCERIES_PER_COLOUR: usize = 2;
/// Enchantments of each colour.
pub const ENCHANTMENTS_PER_COLOUR: usize = 2;
/// Fast effects (any colours).
pub const FAST_EFFECTS: usize = 10;
/// Artifacts standing in for non-land cards, at most.
pub const MAX_ARTIFACTS: usize = 4;

/// The pool's data file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolFile {
    set: String,
    cards: Vec<Card>,
}

/// The card pool: every card a deck or the occupying forces may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    /// The set's name.
    pub set: String,
    cards: Vec<Card>,
}

/// What is wrong with a pool's data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// Not the data file's format.
    #[error("unreadable pool: {0}")]
    Unreadable(String),
    /// Two cards share a name.
    #[error("two cards are named {0}")]
    DuplicateName(String),
    /// A card breaks what its type needs.
    #[error("{name}: {problem}")]
    BadCard {
        /// The card.
        name: String,
        /// What is wrong.
        problem: &'static str,
    },
}

impl Pool {
    /// The pool shipped with the game, parsed once.
    pub fn builtin() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(|| {
            // The file is compiled in and checked by `the_builtin_pool_is_valid`.
            Pool::parse(POOL_JSON).expect("the built-in pool is valid (tested)")
        })
    }

    /// A pool from its data file's text, every card checked.
    pub fn parse(text: &str) -> Result<Pool, PoolError> {
        let file: PoolFile =
            serde_json::from_str(text).map_err(|e| PoolError::Unreadable(e.to_string()))?;
        for (k, card) in file.cards.iter().enumerate() {
            if file.cards[..k].iter().any(|c| c.name == card.name) {
                return Err(PoolError::DuplicateName(card.name.clone()));
            }
            check_card(card).map_err(|problem| PoolError::BadCard {
                name: card.name.clone(),
                problem,
            })?;
        }
        if file.cards.len() > usize::from(CardNo::MAX) {
            return Err(PoolError::Unreadable("too many cards".to_owned()));
        }
        Ok(Pool {
            set: file.set,
            cards: file.cards,
        })
    }

    /// A card by number.
    pub fn card(&self, no: CardNo) -> Option<&Card> {
        self.cards.get(usize::from(no))
    }

    /// A card by number, for numbers the rules hold (dealt from this pool): an unknown number
    /// reads as the first card rather than panicking.
    pub(crate) fn get(&self, no: CardNo) -> &Card {
        self.cards
            .get(usize::from(no))
            .unwrap_or_else(|| &self.cards[0])
    }

    /// A card's number by its name.
    pub fn find(&self, name: &str) -> Option<CardNo> {
        self.cards
            .iter()
            .position(|c| c.name == name)
            .and_then(|k| CardNo::try_from(k).ok())
    }

    /// Every card, by number.
    pub fn cards(&self) -> impl Iterator<Item = (CardNo, &Card)> {
        self.cards
            .iter()
            .enumerate()
            .filter_map(|(k, c)| CardNo::try_from(k).ok().map(|n| (n, c)))
    }

    fn numbers(&self, keep: impl Fn(&Card) -> bool) -> Vec<CardNo> {
        self.cards()
            .filter(|(_, c)| keep(c))
            .map(|(n, _)| n)
            .collect()
    }
}

/// What a card of each type must (and must not) have.
fn check_card(card: &Card) -> Result<(), &'static str> {
    if card.name.is_empty() || card.name.chars().count() > 64 {
        return Err("a name has 1 to 64 characters");
    }
    let creature_only =
        card.power > 0 || card.toughness > 0 || card.flying || card.landwalk.is_some();
    let creature_only = creature_only || !card.upkeep.is_empty() || card.ability.is_some();
    match card.kind {
        Kind::Land => {
            let mut produces = card.produces.clone();
            produces.dedup();
            if !(1..=2).contains(&card.produces.len()) || produces.len() != card.produces.len() {
                return Err("a land makes one or two colours");
            }
            if card.cost != Default::default() || creature_only || card.effect.is_some() {
                return Err("a land has only its colours");
            }
        }
        Kind::Artifact => {
            if !card.cost.coloured.is_empty()
                || creature_only
                || card.effect.is_some()
                || !card.produces.is_empty()
            {
                return Err("an artifact is colourless and does nothing in the battle");
            }
        }
        Kind::Creature => {
            if card.cost.coloured.is_empty() || card.toughness == 0 {
                return Err("a creature has a colour and toughness");
            }
            if card.effect.is_some() || card.cost.x || !card.produces.is_empty() {
                return Err("a creature acts by attacking and by its ability");
            }
            if let Some(Ability { cost, .. }) = &card.ability
                && cost.is_empty()
            {
                return Err("an activated ability has a coloured cost");
            }
        }
        Kind::Sorcery | Kind::Enchantment | Kind::Instant | Kind::Interrupt => {
            if card.cost.coloured.is_empty() || creature_only || !card.produces.is_empty() {
                return Err("a spell has a colour and no creature's traits");
            }
            let effect = card.effect.ok_or("a spell has an effect")?;
            // An X counter (a power sink, a spell blast) takes exactly the X needed, so a
            // counter may have an X or not; any other effect has an X exactly when its cost has.
            if effect != Effect::Counter && card.cost.x != effect.has_x() {
                return Err("a cost has an X exactly when the effect has one");
            }
        }
    }
    Ok(())
}

/// A deck: 65 cards of the pool, by number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Deck {
    /// The cards (order does not matter: the deal shuffles).
    pub cards: Vec<CardNo>,
}

/// Why a deck breaks the recipe (the first rule broken, in the recipe's order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeckError {
    /// Not a deck file.
    #[error("unreadable deck file: {reason}")]
    Unreadable {
        /// What the reader said.
        reason: String,
    },
    /// A name not in the pool.
    #[error("no card named {name} in the pool")]
    UnknownCard {
        /// The name.
        name: String,
    },
    /// Not 65 cards.
    #[error("a deck has 65 cards, not {found}")]
    Size {
        /// Cards found.
        found: usize,
    },
    /// Not 20 lands.
    #[error("a deck has 20 lands, not {found}")]
    Lands {
        /// Lands found.
        found: usize,
    },
    /// The lands cannot stand four for each colour (a multiland stands for either of its).
    #[error("the lands of {colours:?} are {found}, they must be at least {needed}")]
    LandColours {
        /// The colours counted together.
        colours: Vec<Colour>,
        /// Lands making any of them.
        found: usize,
        /// Four per colour.
        needed: usize,
    },
    /// More than four artifacts.
    #[error("at most 4 artifacts stand in for other cards, not {found}")]
    Artifacts {
        /// Artifacts found.
        found: usize,
    },
    /// More cards of a class and colours than the recipe has places for.
    #[error("{found} {class:?} cards of {colours:?}: at most {allowed}")]
    TooMany {
        /// Creatures, sorceries or enchantments.
        class: Class,
        /// The colours counted together.
        colours: Vec<Colour>,
        /// Cards of that class whose colours are all among them.
        found: usize,
        /// The recipe's places for them.
        allowed: usize,
    },
    /// More than ten fast effects.
    #[error("at most 10 fast effects, not {found}")]
    FastEffects {
        /// Fast effects found.
        found: usize,
    },
}

/// The colours of a subset's bits (bit k: `Colour::ALL[k]`).
fn subset(bits: u8) -> Vec<Colour> {
    Colour::ALL
        .iter()
        .enumerate()
        .filter(|(k, _)| bits & (1 << k) != 0)
        .map(|(_, c)| *c)
        .collect()
}

impl Deck {
    /// Reads a deck file by card names (then checks it against the recipe).
    pub fn from_json(pool: &Pool, text: &str) -> Result<Deck, DeckError> {
        let file: DeckFile = serde_json::from_str(text).map_err(|e| DeckError::Unreadable {
            reason: e.to_string(),
        })?;
        Self::from_file(pool, &file)
    }

    /// A deck file's deck by card names (then checked against the recipe): a table's own deck
    /// (`Settings.mountain_magic.deck`).
    pub fn from_file(pool: &Pool, file: &DeckFile) -> Result<Deck, DeckError> {
        // Every line's count, added up before any card is taken: an oversized file is named
        // by its real size (at most 255 per line, so no sum overflows).
        let found: usize = file.cards.iter().map(|l| usize::from(l.count)).sum();
        let mut cards = Vec::new();
        for line in &file.cards {
            let no = pool
                .find(&line.name)
                .ok_or_else(|| DeckError::UnknownCard {
                    name: line.name.clone(),
                })?;
            if found > DECK_SIZE {
                continue;
            }
            cards.extend(std::iter::repeat_n(no, usize::from(line.count)));
        }
        if found > DECK_SIZE {
            return Err(DeckError::Size { found });
        }
        let deck = Deck { cards };
        deck.check(pool)?;
        Ok(deck)
    }

    /// The deck as a deck file.
    pub fn to_file(&self, pool: &Pool) -> DeckFile {
        let mut lines: Vec<DeckLine> = Vec::new();
        for &no in &self.cards {
            let name = pool.get(no).name.clone();
            match lines.iter_mut().find(|l| l.name == name) {
                Some(line) => line.count = line.count.saturating_add(1),
                None => lines.push(DeckLine { name, count: 1 }),
            }
        }
        DeckFile { cards: lines }
    }

    /// Checks the recipe: 65 cards; 20 lands, four for each colour (a multiland stands for a
    /// land of either of its colours); at most four artifacts, each standing in for one
    /// non-land card; three creatures, two sorceries and two enchantments of each colour (a
    /// card of two colours counts for either); ten fast effects of any colours.
    ///
    /// The colour rules are an assignment of cards to the recipe's places; it exists exactly
    /// when, for every set S of colours, the cards that can only go to S's places fit them
    /// (Hall's theorem), which is what is checked, smallest sets first.
    pub fn check(&self, pool: &Pool) -> Result<(), DeckError> {
        let cards: Vec<&Card> = self
            .cards
            .iter()
            .map(|&n| {
                pool.card(n).ok_or(DeckError::UnknownCard {
                    name: format!("#{n}"),
                })
            })
            .collect::<Result<_, _>>()?;
        if cards.len() != DECK_SIZE {
            return Err(DeckError::Size { found: cards.len() });
        }
        let lands: Vec<&&Card> = cards.iter().filter(|c| c.kind == Kind::Land).collect();
        if lands.len() != LANDS {
            return Err(DeckError::Lands { found: lands.len() });
        }
        let mut sets: Vec<u8> = (1u8..32).collect();
        sets.sort_by_key(|s| s.count_ones());
        for &bits in &sets {
            let colours = subset(bits);
            let found = lands
                .iter()
                .filter(|c| c.produces.iter().any(|p| colours.contains(p)))
                .count();
            let needed = LANDS_PER_COLOUR * colours.len();
            if found < needed {
                return Err(DeckError::LandColours {
                    colours,
                    found,
                    needed,
                });
            }
        }
        let artifacts = cards.iter().filter(|c| c.kind == Kind::Artifact).count();
        if artifacts > MAX_ARTIFACTS {
            return Err(DeckError::Artifacts { found: artifacts });
        }
        for (class, each) in [
            (Class::Creature, CREATURES_PER_COLOUR),
            (Class::Sorcery, SORCERIES_PER_COLOUR),
            (Class::Enchantment, ENCHANTMENTS_PER_COLOUR),
        ] {
            for &bits in &sets {
                let colours = subset(bits);
                let found = cards
                    .iter()
                    .filter(|c| c.kind.class() == Some(class))
                    .filter(|c| c.colours().iter().all(|k| colours.contains(k)))
                    .count();
                let allowed = each * colours.len();
                if found > allowed {
                    return Err(DeckError::TooMany {
                        class,
                        colours,
                        found,
                        allowed,
                    });
                }
            }
        }
        let fast = cards
            .iter()
            .filter(|c| c.kind.class() == Some(Class::FastEffect))
            .count();
        if fast > FAST_EFFECTS {
            return Err(DeckError::FastEffects { found: fast });
        }
        // 45 non-land cards, none beyond its places: the artifacts fill exactly the rest.
        Ok(())
    }

    /// The default deck, drawn from the pool by the table's dice (label `mm.deck`, one draw
    /// per place in the recipe's order): for each colour four lands making it, three
    /// creatures, two sorceries and two enchantments of that colour alone; then how many
    /// artifacts (0–4), those artifacts, and fast effects for the other places.
    pub fn default_from_dice(pool: &Pool, dice: &Dice) -> Deck {
        let mut draws = 0u64;
        let mut pick = |from: &[CardNo]| -> CardNo {
            let k = dice.below("mm.deck", draws, from.len() as u64);
            draws += 1;
            from.get(usize::try_from(k).unwrap_or(0))
                .copied()
                .unwrap_or(0)
        };
        let mut cards = Vec::with_capacity(DECK_SIZE);
        for colour in Colour::ALL {
            let lands = pool.numbers(|c| c.kind == Kind::Land && c.produces.contains(&colour));
            let alone = |class: Class| {
                pool.numbers(move |c: &Card| {
                    c.kind.class() == Some(class) && c.colours() == [colour]
                })
            };
            for _ in 0..LANDS_PER_COLOUR {
                cards.push(pick(&lands));
            }
            for (class, each) in [
                (Class::Creature, CREATURES_PER_COLOUR),
                (Class::Sorcery, SORCERIES_PER_COLOUR),
                (Class::Enchantment, ENCHANTMENTS_PER_COLOUR),
            ] {
                let from = alone(class);
                for _ in 0..each {
                    cards.push(pick(&from));
                }
            }
        }
        let artifacts = pool.numbers(|c| c.kind == Kind::Artifact);
        let fast = pool.numbers(|c| c.kind.class() == Some(Class::FastEffect));
        let how_many =
            usize::try_from(dice.below("mm.deck", draws, MAX_ARTIFACTS as u64 + 1)).unwrap_or(0);
        draws += 1;
        let mut pick = |from: &[CardNo]| -> CardNo {
            let k = dice.below("mm.deck", draws, from.len() as u64);
            draws += 1;
            from.get(usize::try_from(k).unwrap_or(0))
                .copied()
                .unwrap_or(0)
        };
        for _ in 0..how_many {
            cards.push(pick(&artifacts));
        }
        for _ in how_many..FAST_EFFECTS {
            cards.push(pick(&fast));
        }
        Deck { cards }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dice::DiceSecret;

    #[test]
    fn the_builtin_pool_is_valid() {
        let pool = Pool::parse(POOL_JSON).expect("valid");
        assert_eq!(&pool, Pool::builtin());
        for colour in Colour::ALL {
            for class in [
                Class::Creature,
                Class::Sorcery,
                Class::Enchantment,
                Class::FastEffect,
            ] {
                assert!(
                    pool.cards()
                        .any(|(_, c)| c.kind.class() == Some(class) && c.colours() == [colour]),
                    "no {class:?} of {colour:?} alone"
                );
            }
        }
        // Everything the battle's rules name is on some card.
        let has = |keep: &dyn Fn(&Card) -> bool| pool.cards().any(|(_, c)| keep(c));
        assert!(has(&|c| c.flying) && has(&|c| c.landwalk.is_some()));
        assert!(has(&|c| !c.upkeep.is_empty()) && has(&|c| c.produces.len() == 2));
        assert!(has(&|c| c.ability.as_ref().is_some_and(|a| a.tap)));
        assert!(has(&|c| c.ability.as_ref().is_some_and(|a| !a.tap)));
        assert!(has(&|c| c.effect == Some(Effect::Counter) && c.cost.x));
        assert!(has(&|c| c.effect == Some(Effect::Counter) && !c.cost.x));
        for effect in [
            Effect::Damage { amount: None },
            Effect::Damage { amount: Some(3) },
            Effect::Tap,
            Effect::Untap,
            Effect::Draw { amount: Some(2) },
            Effect::Discard { amount: None },
            Effect::Discard { amount: Some(2) },
            Effect::DestroyLand,
            Effect::EmptyPool,
        ] {
            assert!(
                has(&|c| c.effect == Some(effect)),
                "no card with {effect:?}"
            );
        }
        assert!(has(&|c| c.kind == Kind::Interrupt) && has(&|c| c.kind == Kind::Instant));
        assert!(has(&|c| c.kind == Kind::Artifact));
    }

    #[test]
    fn a_bad_card_is_named() {
        let text =
            r#"{"set": "x", "cards": [{"name": "Odd", "type": "creature", "toughness": 1}]}"#;
        assert_eq!(
            Pool::parse(text),
            Err(PoolError::BadCard {
                name: "Odd".to_owned(),
                problem: "a creature has a colour and toughness"
            })
        );
        let text = r#"{"set": "x", "cards": [
            {"name": "A", "type": "land", "produces": ["red"]},
            {"name": "A", "type": "land", "produces": ["red"]}]}"#;
        assert_eq!(
            Pool::parse(text),
            Err(PoolError::DuplicateName("A".to_owned()))
        );
        let text = r#"{"set": "x", "cards": [{"name": "B", "type": "sorcery",
            "cost": {"coloured": ["red"]}, "effect": {"kind": "damage"}}]}"#;
        assert!(matches!(Pool::parse(text), Err(PoolError::BadCard { .. })));
    }

    #[test]
    fn default_decks_follow_the_recipe_and_come_from_the_dice() {
        let pool = Pool::builtin();
        for seed in 0..40 {
            let dice = Dice::new(DiceSecret::from_seed(seed), [0; 32]);
            let deck = Deck::default_from_dice(pool, &dice);
            assert_eq!(deck.check(pool), Ok(()), "seed {seed}");
            assert_eq!(deck, Deck::default_from_dice(pool, &dice));
            let text = serde_json::to_string(&deck.to_file(pool)).expect("json");
            assert_eq!(Deck::from_json(pool, &text).map(|d| d.cards.len()), Ok(65));
        }
        let a = Deck::default_from_dice(pool, &Dice::new(DiceSecret::from_seed(1), [0; 32]));
        let b = Deck::default_from_dice(pool, &Dice::new(DiceSecret::from_seed(2), [0; 32]));
        assert_ne!(a, b);
    }
}
