//! Ascension leagues (`shared/seeds/ascension.txt`; `docs/RULES.md`, "Ascension leagues"), pure:
//! a deck's ledger entries, the deck they fold into ([`Deck`]), what each option costs and
//! whether it may be bought ([`Deck::check_purchase`]), the losing-streak remedy, and the deck
//! power bonuses of a table ([`bonuses`]).
//!
//! A deck's state is the fold of its ledger, as a table's is the fold of its events: the server
//! keeps the entries and nothing else, decides a purchase by folding them and asking
//! [`Deck::check_purchase`], and writes the entry it returns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;
use crate::types::{PlayerId, TableId, uuid_id};

uuid_id! {
    /// A league's id.
    LeagueId
}

/// A member's number in his league (0, 1, 2, … in the order they joined).
pub type MemberId = u32;

uuid_id! {
    /// The secret a member shows to act as himself (like a seat token).
    MemberToken
}

/// Cards in every starter deck.
pub const STARTER_DECK_CARDS: u8 = 45;
/// The most cards a deck may hold.
pub const MAX_DECK_CARDS: u8 = 70;
/// The most expansion sets a deck may have, its starter set included.
pub const MAX_EXPANSION_SETS: usize = 4;
/// The most cards in a sideboard.
pub const MAX_SIDEBOARD_CARDS: u8 = 15;
/// Cards each sideboard option (and each bought expansion set) comes with.
pub const OPTION_CARDS: u8 = 5;
/// The most copies of one card a deck may ever be allowed.
pub const MAX_DUPLICATES: u8 = 4;
/// Copies of one card a starter deck is allowed (one grace card may have three).
pub const STARTER_DUPLICATES: u8 = 2;
/// Consecutive losses that open the losing-streak remedy.
pub const STREAK_LOSSES: u32 = 5;
/// The remedy may only be used within the deck's first games: this many.
pub const STREAK_GAMES: u32 = 10;
/// The most cards one purchase may add.
pub const MAX_CARDS_PER_PURCHASE: u8 = 25;

/// The seed's colour alliances: five of two colours and five of three. An unknown name does
/// not decode, with a message that names the field and the ten names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Alliance {
    /// White-Blue.
    WhiteBlue,
    /// Blue-Black.
    BlueBlack,
    /// Black-Red.
    BlackRed,
    /// Red-Green.
    RedGreen,
    /// Green-White.
    GreenWhite,
    /// White-Blue-Black.
    WhiteBlueBlack,
    /// Blue-Black-Red.
    BlueBlackRed,
    /// Black-Red-Green.
    BlackRedGreen,
    /// Red-Green-White.
    RedGreenWhite,
    /// Green-White-Blue.
    GreenWhiteBlue,
}

impl Alliance {
    /// Every alliance, two colours first.
    pub const ALL: &'static [Alliance] = <Self as strum::VariantArray>::VARIANTS;

    /// Its wire name (`white_blue`, …): serde's.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The alliance with this wire name.
    pub fn from_name(name: &str) -> Option<Alliance> {
        Alliance::ALL.iter().copied().find(|a| a.name() == name)
    }
}

impl<'de> Deserialize<'de> for Alliance {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Alliance::from_name(&name).ok_or_else(|| {
            let names: Vec<&str> = Alliance::ALL.iter().map(|a| a.name()).collect();
            serde::de::Error::custom(format!(
                "alliance: not one of the seed's ten ({})",
                names.join(", ")
            ))
        })
    }
}

/// A deck as its member registers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeckSpec {
    /// The deck's name (1–32 characters, as any name).
    pub name: String,
    /// Its colours.
    pub alliance: Alliance,
    /// Its basic set (the seed names 7th Edition and the main sets: Ice Age, Mirage, Tempest,
    /// Urza's Saga, Mercadian Masques, Invasion, Odyssey).
    pub basic_set: String,
    /// Its expansion set (the first of at most four).
    pub expansion_set: String,
}

/// A card's rarity, for its price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rarity {
    /// 1 mana point.
    Common,
    /// 2 mana points.
    Uncommon,
    /// 4 mana points.
    Rare,
}

impl Rarity {
    /// Its price in mana points.
    pub fn cost(self) -> u32 {
        match self {
            Rarity::Common => 1,
            Rarity::Uncommon => 2,
            Rarity::Rare => 4,
        }
    }
}

/// A deck option, as bought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "option", rename_all = "snake_case")]
pub enum Purchase {
    /// `count` copies of one card of a rarity, from a set the deck may buy from; a gold card
    /// costs 1 more each and a Summon Legend 2 more each. The copies of a card bought over the
    /// ledger never exceed the deck's limit of copies (`duplicates`).
    Cards {
        /// Its rarity.
        rarity: Rarity,
        /// How many.
        count: u8,
        /// A gold card.
        #[serde(default)]
        gold: bool,
        /// A Summon Legend.
        #[serde(default)]
        legend: bool,
        /// The card's name (required in a new purchase: its copies are counted over the
        /// ledger; ledger lines written before it was required may lack it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        card: Option<String>,
        /// The card's set: the deck's basic set or one of its expansion sets (required in a
        /// new purchase; ledger lines written before it was required lack it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        set: Option<String>,
    },
    /// Basic lands, two for 1 mana point (`count` is even, 2–24).
    BasicLands {
        /// How many lands.
        count: u8,
    },
    /// The right to buy from another expansion set (10, 12, then 15 mana points; four sets at
    /// most), with five of its commons.
    ExpansionSet {
        /// The set.
        name: String,
    },
    /// One more copy of a card allowed: three (8 mana points), then four (10).
    Duplicates,
    /// Five more sideboard cards, commons: 10, 12, then 14 mana points (15 cards at most).
    Sideboard,
}

/// The seed's two remedies for a losing streak.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "remedy", rename_all = "snake_case")]
pub enum Remedy {
    /// A new deck with no rare cards at all (its ledger, power and options carry on).
    NewDeck {
        /// The new deck.
        deck: DeckSpec,
    },
    /// Five cards out (two of them commons) for five legal commons.
    SwapFive,
}

/// One line of a deck's ledger: what happened to the deck, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LedgerEntry {
    /// The member registered his deck.
    Registered {
        /// The deck.
        deck: DeckSpec,
    },
    /// A league game ended: its mana points are credited.
    Credited {
        /// The table.
        table: TableId,
        /// Its name.
        table_name: String,
        /// The deck's place (1: won).
        place: u8,
        /// Players in the game.
        players: u8,
        /// Mana points earned (one per opponent eliminated before him).
        mana_points: u32,
        /// The other members at the table.
        opponents: Vec<MemberId>,
    },
    /// An option was bought.
    Bought {
        /// The option.
        purchase: Purchase,
        /// What it cost.
        cost: u32,
        /// Cards taken out of the deck to keep it within 70.
        #[serde(default)]
        removed: u8,
    },
    /// The losing-streak remedy was taken.
    RemedyTaken {
        /// Which.
        remedy: Remedy,
    },
}

/// A ledger line as stored and shown: its number in the deck's ledger, when, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerLine {
    /// 1, 2, 3, … in the deck's ledger.
    pub seq: u32,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// What.
    pub entry: LedgerEntry,
}

/// Why a league request about a deck is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeckError {
    /// The member has no deck yet.
    #[error("register your deck first")]
    NotRegistered,
    /// The member already has a deck.
    #[error("you already have a deck in this league")]
    AlreadyRegistered,
    /// A name is empty, too long or has characters that are not allowed.
    #[error("{0}")]
    BadText(String),
    /// The option cannot be bought as asked (a count out of range, lands not in pairs, a set
    /// already owned).
    #[error("{0}")]
    BadPurchase(String),
    /// A limit of the seed forbids it (four sets, four copies, fifteen sideboard cards).
    #[error("{0}")]
    Limit(String),
    /// The deck would hold more than 70 cards.
    #[error(
        "the deck would hold {would} cards, and a deck holds at most 70: take {over} out (`remove`)"
    )]
    DeckFull {
        /// The size it would have.
        would: u32,
        /// How many too many.
        over: u32,
    },
    /// Not enough unspent mana points.
    #[error("this costs {cost} mana points and the deck has {balance} unspent")]
    NotEnoughPoints {
        /// The price.
        cost: u32,
        /// What the deck has.
        balance: u32,
    },
    /// The losing-streak remedy is not open to this deck.
    #[error("{0}")]
    NoRemedy(String),
}

impl DeckError {
    /// The error code this refusal is sent with.
    pub fn code(&self) -> ErrorCode {
        match self {
            DeckError::NotRegistered => ErrorCode::NoDeck,
            DeckError::AlreadyRegistered => ErrorCode::DeckRegistered,
            DeckError::BadText(_) => ErrorCode::BadText,
            DeckError::BadPurchase(_) => ErrorCode::BadPurchase,
            DeckError::Limit(_) => ErrorCode::PurchaseLimit,
            DeckError::DeckFull { .. } => ErrorCode::DeckFull,
            DeckError::NotEnoughPoints { .. } => ErrorCode::NotEnoughPoints,
            DeckError::NoRemedy(_) => ErrorCode::NoRemedy,
        }
    }
}

/// A deck: the fold of its ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deck {
    /// The deck as registered (or as remade by the remedy); `None` before registration.
    pub spec: Option<DeckSpec>,
    /// Deck power: every mana point it ever earned (spending never lowers it).
    pub power: u32,
    /// Mana points spent.
    pub spent: u32,
    /// League games played.
    pub games: u32,
    /// League games won (place 1).
    pub wins: u32,
    /// The sum of its places (for the average place).
    pub place_sum: u32,
    /// Expansion sets it may buy from, the starter's first.
    pub expansion_sets: Vec<String>,
    /// Copies of one card allowed (2, then 3, then 4).
    pub duplicates: u8,
    /// Sideboard cards (0, 5, 10 or 15).
    pub sideboard: u8,
    /// Cards in the deck (45 to start, at most 70).
    pub cards: u8,
    /// Whether the deck has been remade with no rare cards.
    pub no_rares: bool,
    /// Losses in a row, up to now.
    pub losing_streak: u32,
    /// Whether five losses in a row happened within its first ten games.
    pub streak_earned: bool,
    /// Whether the remedy has been used.
    pub remedy_used: bool,
    /// The opponent of its last game, if that game had two players (a two-player league game
    /// may not be against him again).
    pub last_duel: Option<MemberId>,
    /// Copies of each card bought, by the card's name in lower case (cards taken out with
    /// `remove` name no card and are not subtracted).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub copies: BTreeMap<String, u8>,
}

impl Deck {
    /// The deck the entries fold into.
    pub fn fold<'a>(entries: impl IntoIterator<Item = &'a LedgerEntry>) -> Deck {
        let mut deck = Deck::default();
        for entry in entries {
            deck.apply(entry);
        }
        deck
    }

    /// Folds one entry in (entries are checked before they are written; this never refuses).
    pub fn apply(&mut self, entry: &LedgerEntry) {
        match entry {
            LedgerEntry::Registered { deck } => {
                self.expansion_sets = vec![deck.expansion_set.clone()];
                self.spec = Some(deck.clone());
                self.duplicates = STARTER_DUPLICATES;
                self.cards = STARTER_DECK_CARDS;
            }
            LedgerEntry::Credited {
                place,
                players,
                mana_points,
                opponents,
                ..
            } => {
                self.power = self.power.saturating_add(*mana_points);
                self.games += 1;
                self.place_sum += u32::from(*place);
                if *place == 1 {
                    self.wins += 1;
                    self.losing_streak = 0;
                } else {
                    self.losing_streak += 1;
                    if self.losing_streak >= STREAK_LOSSES && self.games <= STREAK_GAMES {
                        self.streak_earned = true;
                    }
                }
                self.last_duel = match (players, opponents.as_slice()) {
                    (2, [opponent]) => Some(*opponent),
                    _ => None,
                };
            }
            LedgerEntry::Bought {
                purchase,
                cost,
                removed,
            } => {
                self.spent = self.spent.saturating_add(*cost);
                let added = purchase_cards(purchase);
                self.cards = self.cards.saturating_add(added).saturating_sub(*removed);
                match purchase {
                    Purchase::Cards {
                        card: Some(card),
                        count,
                        ..
                    } => {
                        let copies = self.copies.entry(card_key(card)).or_default();
                        *copies = copies.saturating_add(*count);
                    }
                    Purchase::ExpansionSet { name } => self.expansion_sets.push(name.clone()),
                    Purchase::Duplicates => self.duplicates += 1,
                    Purchase::Sideboard => self.sideboard += OPTION_CARDS,
                    Purchase::Cards { card: None, .. } | Purchase::BasicLands { .. } => {}
                }
            }
            LedgerEntry::RemedyTaken { remedy } => {
                self.remedy_used = true;
                if let Remedy::NewDeck { deck } = remedy {
                    self.spec = Some(deck.clone());
                    self.no_rares = true;
                }
            }
        }
    }

    /// Mana points not yet spent.
    pub fn balance(&self) -> u32 {
        self.power.saturating_sub(self.spent)
    }

    /// The average place, if it has played.
    pub fn average_place(&self) -> Option<f64> {
        (self.games > 0).then(|| f64::from(self.place_sum) / f64::from(self.games))
    }

    /// Whether the losing-streak remedy is open: five losses in a row within the first ten
    /// games, not used yet, and the deck has not begun its eleventh game.
    pub fn remedy_open(&self) -> bool {
        self.spec.is_some() && self.streak_earned && !self.remedy_used && self.games <= STREAK_GAMES
    }

    /// The entry that registers `spec`, or why not.
    pub fn check_register(&self, spec: &DeckSpec) -> Result<LedgerEntry, DeckError> {
        if self.spec.is_some() {
            return Err(DeckError::AlreadyRegistered);
        }
        let deck = clean_spec(spec)?;
        Ok(LedgerEntry::Registered { deck })
    }

    /// The entry that buys `purchase` (taking `remove` cards out of the deck), or why not. Refused
    /// purchases change nothing: the caller writes the entry only when this returns it.
    pub fn check_purchase(
        &self,
        purchase: &Purchase,
        remove: u8,
    ) -> Result<LedgerEntry, DeckError> {
        if self.spec.is_none() {
            return Err(DeckError::NotRegistered);
        }
        let purchase = clean_purchase(purchase)?;
        let cost = self.cost(&purchase)?;
        let added = purchase_cards(&purchase);
        if remove > added {
            return Err(DeckError::BadPurchase(format!(
                "`remove` makes room for what is bought: at most {added} here"
            )));
        }
        let would = u32::from(self.cards) + u32::from(added) - u32::from(remove);
        if would > u32::from(MAX_DECK_CARDS) {
            return Err(DeckError::DeckFull {
                would,
                over: would - u32::from(MAX_DECK_CARDS),
            });
        }
        if cost > self.balance() {
            return Err(DeckError::NotEnoughPoints {
                cost,
                balance: self.balance(),
            });
        }
        Ok(LedgerEntry::Bought {
            purchase,
            cost,
            removed: remove,
        })
    }

    /// The sets the deck may buy cards from: its basic set, then its expansion sets (the
    /// seed: "he can only buy cards from that expansion until he buys another expansion").
    pub fn card_sets(&self) -> Vec<&str> {
        let mut sets: Vec<&str> = Vec::new();
        let spec = self.spec.iter();
        for set in spec
            .clone()
            .map(|s| s.basic_set.as_str())
            .chain(spec.map(|s| s.expansion_set.as_str()))
            .chain(self.expansion_sets.iter().map(String::as_str))
        {
            if !sets.iter().any(|s| card_key(s) == card_key(set)) {
                sets.push(set);
            }
        }
        sets
    }

    /// What `purchase` costs this deck now, or the limit it breaks. The first refusal in this
    /// order is the one given: a purchase asked wrongly (`bad_purchase`), then a limit of the
    /// seed (`purchase_limit`); [`Deck::check_purchase`] then checks the deck's 70 cards and
    /// the unspent points, in that order.
    pub fn cost(&self, purchase: &Purchase) -> Result<u32, DeckError> {
        match purchase {
            Purchase::Cards {
                rarity,
                count,
                gold,
                legend,
                card,
                set,
            } => {
                if *count == 0 || *count > MAX_CARDS_PER_PURCHASE {
                    return Err(DeckError::BadPurchase(format!(
                        "buy 1 to {MAX_CARDS_PER_PURCHASE} cards at a time (and no more than \
                         the deck's limit of copies of a card)"
                    )));
                }
                let Some(card) = card else {
                    return Err(DeckError::BadPurchase(
                        "name the card (`card`): the copies of each card are counted".into(),
                    ));
                };
                let sets = self.card_sets();
                let Some(set) = set else {
                    return Err(DeckError::BadPurchase(format!(
                        "name the card's set (`set`): one of {}",
                        sets.join(", ")
                    )));
                };
                if !sets.iter().any(|s| card_key(s) == card_key(set)) {
                    return Err(DeckError::BadPurchase(format!(
                        "the deck buys cards from {} only, not {set}: buy the expansion set first",
                        sets.join(", ")
                    )));
                }
                let had = self.copies_of(card);
                if u32::from(had) + u32::from(*count) > u32::from(self.duplicates) {
                    return Err(DeckError::Limit(format!(
                        "the deck may hold {} copies of a card and has bought {had} of {card}: \
                         buy the duplicates option first",
                        self.duplicates
                    )));
                }
                let each = rarity.cost() + u32::from(*gold) + 2 * u32::from(*legend);
                Ok(each * u32::from(*count))
            }
            Purchase::BasicLands { count } => {
                if *count == 0 || count % 2 != 0 || *count > MAX_CARDS_PER_PURCHASE {
                    return Err(DeckError::BadPurchase(format!(
                        "basic lands come in pairs: 2, 4, … up to {}",
                        MAX_CARDS_PER_PURCHASE - 1
                    )));
                }
                Ok(u32::from(*count / 2))
            }
            Purchase::ExpansionSet { name } => {
                let owned = self.expansion_sets.len();
                if self
                    .expansion_sets
                    .iter()
                    .any(|s| s.to_lowercase() == name.to_lowercase())
                {
                    return Err(DeckError::BadPurchase(format!(
                        "the deck already buys from {name}"
                    )));
                }
                match owned {
                    0 | 1 => Ok(10),
                    2 => Ok(12),
                    3 => Ok(15),
                    _ => Err(DeckError::Limit(format!(
                        "a deck never has more than {MAX_EXPANSION_SETS} expansion sets"
                    ))),
                }
            }
            Purchase::Duplicates => match self.duplicates {
                0..=2 => Ok(8),
                3 => Ok(10),
                _ => Err(DeckError::Limit(format!(
                    "the limit of copies of a card never exceeds {MAX_DUPLICATES}"
                ))),
            },
            Purchase::Sideboard => match self.sideboard {
                0 => Ok(10),
                5 => Ok(12),
                10 => Ok(14),
                _ => Err(DeckError::Limit(format!(
                    "a sideboard never holds more than {MAX_SIDEBOARD_CARDS} cards"
                ))),
            },
        }
    }

    /// The entry that takes the losing-streak remedy, or why not.
    pub fn check_remedy(&self, remedy: &Remedy) -> Result<LedgerEntry, DeckError> {
        if self.spec.is_none() {
            return Err(DeckError::NotRegistered);
        }
        if self.remedy_used {
            return Err(DeckError::NoRemedy(
                "the losing-streak remedy has been used already (once per deck)".into(),
            ));
        }
        if !self.streak_earned {
            return Err(DeckError::NoRemedy(format!(
                "the remedy follows {STREAK_LOSSES} losses in a row within the deck's first \
                 {STREAK_GAMES} games (now {} in a row after {} games)",
                self.losing_streak, self.games
            )));
        }
        if self.games > STREAK_GAMES {
            return Err(DeckError::NoRemedy(format!(
                "the remedy may only be used within the deck's first {STREAK_GAMES} games"
            )));
        }
        let remedy = match remedy {
            Remedy::NewDeck { deck } => Remedy::NewDeck {
                deck: clean_spec(deck)?,
            },
            Remedy::SwapFive => Remedy::SwapFive,
        };
        Ok(LedgerEntry::RemedyTaken { remedy })
    }

    /// Credits a finished league game.
    pub fn credit(
        table: TableId,
        table_name: &str,
        standing: &crate::types::Standing,
        players: u8,
        opponents: Vec<MemberId>,
    ) -> LedgerEntry {
        LedgerEntry::Credited {
            table,
            table_name: table_name.to_owned(),
            place: standing.place,
            players,
            mana_points: u32::from(standing.mana_points),
            opponents,
        }
    }
}

/// Cards the purchase adds to the deck (a sideboard's cards are not in the deck).
fn purchase_cards(purchase: &Purchase) -> u8 {
    match purchase {
        Purchase::Cards { count, .. } | Purchase::BasicLands { count } => *count,
        Purchase::ExpansionSet { .. } => OPTION_CARDS,
        Purchase::Duplicates | Purchase::Sideboard => 0,
    }
}

/// A league text (deck, set or card name) as kept: a name as [`crate::text::normalize_name`]
/// keeps it (NFC, trimmed, 1–32 characters), nothing that
/// could move a terminal's cursor.
pub fn clean_text(what: &str, raw: &str) -> Result<String, DeckError> {
    use crate::text::TextError;
    let max = crate::limits::MAX_NAME_CHARS;
    crate::text::normalize_name(raw).map_err(|error| {
        DeckError::BadText(match error {
            TextError::Empty | TextError::TooLong => {
                format!("the {what} must be 1–{max} characters")
            }
            TextError::Invisible => format!("the {what} must have a visible character"),
            TextError::Forbidden(_) => {
                format!("the {what} may not hold control, invisible or line-breaking characters")
            }
        })
    })
}

impl Deck {
    /// The copies of `card` bought so far, however each was spelt: names compared as every name
    /// is ([`crate::text::name_key`]: case and look-alike letters folded), so `Lion` and `Lіon`
    /// (a Cyrillic і) are one card under the limit of copies. (`copies` keeps the names in
    /// lower case as the ledger folded them.)
    fn copies_of(&self, card: &str) -> u8 {
        let key = crate::text::name_key(card);
        self.copies
            .iter()
            .filter(|(name, _)| crate::text::name_key(name) == key)
            .fold(0u8, |sum, (_, n)| sum.saturating_add(*n))
    }
}

/// A card's (or a set's) name as stored: lower case.
fn card_key(name: &str) -> String {
    name.to_lowercase()
}

/// A deck as registered: its names cleaned, and its expansion set another set than its basic
/// set (one set named twice, in any case or in look-alike letters, would give the deck one set
/// where the seed gives it two).
fn clean_spec(spec: &DeckSpec) -> Result<DeckSpec, DeckError> {
    let deck = DeckSpec {
        name: clean_text("deck name", &spec.name)?,
        alliance: spec.alliance,
        basic_set: clean_text("basic set", &spec.basic_set)?,
        expansion_set: clean_text("expansion set", &spec.expansion_set)?,
    };
    if crate::text::names_confusable(&deck.basic_set, &deck.expansion_set) {
        return Err(DeckError::BadPurchase(format!(
            "the expansion set must be another set than the basic set ({})",
            deck.basic_set
        )));
    }
    Ok(deck)
}

fn clean_purchase(purchase: &Purchase) -> Result<Purchase, DeckError> {
    Ok(match purchase {
        Purchase::Cards {
            rarity,
            count,
            gold,
            legend,
            card,
            set,
        } => Purchase::Cards {
            rarity: *rarity,
            count: *count,
            gold: *gold,
            legend: *legend,
            card: card
                .as_deref()
                .map(|c| clean_text("card name", c))
                .transpose()?,
            set: set
                .as_deref()
                .map(|s| clean_text("card's set", s))
                .transpose()?,
        },
        Purchase::ExpansionSet { name } => Purchase::ExpansionSet {
            name: clean_text("expansion set", name)?,
        },
        other => other.clone(),
    })
}

/// A league deck at a table: whose, which, and its power when he sat down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatDeck {
    /// The member.
    pub member: MemberId,
    /// The deck's name.
    pub deck: String,
    /// Its power when he sat down.
    pub power: u32,
    /// The opponent of his last league game, if it had two players (the league rule: not the
    /// same opponent twice in a row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_duel: Option<MemberId>,
}

/// A deck power bonus (the seed's table, cumulative), for a deck behind the strongest deck at
/// the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bonus {
    /// The player.
    pub player: PlayerId,
    /// How many points his deck is behind the strongest deck at the table.
    pub behind: u32,
    /// 5 or more behind: he may decide who plays first (the one furthest behind decides).
    pub first_choice: bool,
    /// Extra starting life: +2 at 10, +3 more at 15, +5 more at 25.
    pub life: i32,
    /// Extra cards in his starting hand: +1 at 20, +1 more at 25.
    pub cards: u8,
}

/// The bonus for a deck `behind` points behind the strongest, if any (the seed's table,
/// cumulative: at 15, first choice and +5 life; at 25+, first choice, +10 life, +2 cards).
pub fn bonus_for(player: PlayerId, behind: u32) -> Option<Bonus> {
    if behind < 5 {
        return None;
    }
    let mut life = 0;
    let mut cards = 0;
    if behind >= 10 {
        life += 2;
    }
    if behind >= 15 {
        life += 3;
    }
    if behind >= 20 {
        cards += 1;
    }
    if behind >= 25 {
        cards += 1;
        life += 5;
    }
    Some(Bonus {
        player,
        behind,
        first_choice: true,
        life,
        cards,
    })
}

/// The bonuses at a table whose seated league decks have these powers: each deck is compared
/// with the strongest deck at the table.
pub fn bonuses(powers: &[(PlayerId, u32)]) -> Vec<Bonus> {
    let strongest = powers.iter().map(|&(_, p)| p).max().unwrap_or(0);
    powers
        .iter()
        .filter_map(|&(player, power)| bonus_for(player, strongest - power))
        .collect()
}

/// Who decides who plays first: the player furthest behind the strongest deck (5 points or
/// more), the earliest to join among equals.
pub fn first_decider(powers: &[(PlayerId, u32)]) -> Option<PlayerId> {
    bonuses(powers)
        .into_iter()
        .max_by(|a, b| a.behind.cmp(&b.behind).then(b.player.cmp(&a.player)))
        .map(|b| b.player)
}

/// One line of the league list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeagueSummary {
    /// The league's id.
    pub league: LeagueId,
    /// Its name.
    pub name: String,
    /// Whether joining needs a password.
    pub password: bool,
    /// Members.
    pub members: u32,
    /// League games finished.
    pub games: u32,
}

/// One member in the standings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberStanding {
    /// His number.
    pub member: MemberId,
    /// His name.
    pub name: String,
    /// His deck's name (`None` before he registers it).
    pub deck: Option<String>,
    /// Its alliance.
    pub alliance: Option<Alliance>,
    /// Deck power: every mana point it earned.
    pub power: u32,
    /// Unspent mana points.
    pub balance: u32,
    /// League games played.
    pub games: u32,
    /// Games won.
    pub wins: u32,
    /// The sum of his places (the average place is `places / games`).
    pub places: u32,
}

/// A game of the league.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeagueGame {
    /// Its table (a replay once finished).
    pub table: TableId,
    /// The table's name.
    pub name: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When it ended (`None` while it is being played).
    pub finished_at_ms: Option<u64>,
}

/// A league as `get_league` shows it: standings (strongest deck first) and games (newest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeagueView {
    /// The league's id.
    pub league: LeagueId,
    /// Its name.
    pub name: String,
    /// Whether joining needs a password.
    pub password: bool,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Every member, by deck power (then wins, then fewer games, then number).
    pub standings: Vec<MemberStanding>,
    /// Its games, newest first.
    pub games: Vec<LeagueGame>,
}

impl MemberStanding {
    /// A member's line in the standings.
    pub fn new(member: MemberId, name: String, deck: &Deck) -> Self {
        MemberStanding {
            member,
            name,
            deck: deck.spec.as_ref().map(|s| s.name.clone()),
            alliance: deck.spec.as_ref().map(|s| s.alliance),
            power: deck.power,
            balance: deck.balance(),
            games: deck.games,
            wins: deck.wins,
            places: deck.place_sum,
        }
    }
}

/// Sorts standings: deck power, then wins, then fewer games, then member number.
pub fn sort_standings(standings: &mut [MemberStanding]) {
    standings.sort_by(|a, b| {
        b.power
            .cmp(&a.power)
            .then(b.wins.cmp(&a.wins))
            .then(a.games.cmp(&b.games))
            .then(a.member.cmp(&b.member))
    });
}
