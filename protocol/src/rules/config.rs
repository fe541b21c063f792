//! Table settings: everything that is chosen before a game and never changes during it.

use serde::{Deserialize, Serialize};

use crate::dice::DiceSecret;
use crate::limits::{
    DEFAULT_HAND_SIZE, DEFAULT_SPELL_RANGE, DEFAULT_STARTING_LIFE, MAX_HAND_SIZE, MAX_SEATS,
    MAX_SPELL_RANGE, MAX_STARTING_LIFE, MIN_HAND_SIZE, MIN_SEATS, MIN_SPELL_RANGE,
    MIN_STARTING_LIFE, MOUNTAIN_MAGIC_SEATS,
};
pub use crate::types::{MulliganMode, Reduction, RuleSet};

/// How far a player's spells reach, in positions on either side (1–4, default 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct SpellRange(u8);

impl SpellRange {
    /// Smallest range a table may choose.
    pub const MIN: u8 = MIN_SPELL_RANGE;
    /// Largest range a table may choose.
    pub const MAX: u8 = MAX_SPELL_RANGE;

    /// A range, if it is within 1–4.
    pub fn new(range: u8) -> Result<Self, ConfigError> {
        if (Self::MIN..=Self::MAX).contains(&range) {
            Ok(Self(range))
        } else {
            Err(ConfigError::SpellRange(range))
        }
    }

    /// The range in positions.
    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl Default for SpellRange {
    fn default() -> Self {
        Self(DEFAULT_SPELL_RANGE)
    }
}

impl TryFrom<u8> for SpellRange {
    type Error = ConfigError;
    fn try_from(range: u8) -> Result<Self, Self::Error> {
        Self::new(range)
    }
}

impl From<SpellRange> for u8 {
    fn from(range: SpellRange) -> u8 {
        range.0
    }
}

impl RuleSet {
    /// Simultaneous turns at the start for `players` players: for the seed
    /// max(1, ⌊N / (2R + 2)⌋); for CR 807 one turn marker for each full four players (807.4a),
    /// and at least one.
    pub fn starting_turns(self, players: usize, range: SpellRange) -> usize {
        match self {
            RuleSet::Seed => (players / (2 * range.get() + 2)).max(1),
            RuleSet::Cr807 => (players / 4).max(1),
        }
    }

    /// The most simultaneous turns the policy allows with `living` players left (CR 807: one
    /// marker for each full four players, whatever the policy).
    pub fn turn_limit(self, policy: Reduction, living: usize, range: SpellRange) -> usize {
        match (self, policy) {
            (RuleSet::Seed, Reduction::Eager) | (RuleSet::Cr807, _) => {
                self.starting_turns(living, range)
            }
            (RuleSet::Seed, Reduction::Forced) => (living / (2 * range.get() + 1)).max(1),
        }
    }
}

/// The settings of one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableConfig {
    /// Most players who may sit at the table (2–40).
    pub seats: u8,
    /// Spell range R.
    pub spell_range: SpellRange,
    /// When to reduce the number of simultaneous turns.
    pub reduction: Reduction,
    /// Life each player starts with (1–1000).
    pub starting_life: i32,
    /// Cards in each starting hand (1–20) before mulligans.
    pub hand_size: u8,
    /// Which rules schedule the turns.
    pub rule_set: RuleSet,
    /// Combat with Dice (`shared/seeds/combat-with-dice.txt`): attack rolls and counter strikes.
    #[serde(default)]
    pub combat_dice: bool,
    /// Paris mulligans one player at a time, or everyone at once.
    #[serde(default)]
    pub mulligan: MulliganMode,
    /// Whether this is a league game: every seat is a league member's, with his deck.
    #[serde(default)]
    pub league: bool,
    /// The creator's seed, if he gave one: kept for the record, mixed into nothing (every random
    /// outcome comes from the dice secret and the players' entropy).
    pub seed: u64,
    /// The dice secret: server-side only until the game is over (never in a snapshot).
    #[serde(default)]
    pub secret: DiceSecret,
}

impl Default for TableConfig {
    fn default() -> Self {
        Self {
            seats: MAX_SEATS,
            spell_range: SpellRange::default(),
            reduction: Reduction::default(),
            starting_life: DEFAULT_STARTING_LIFE,
            hand_size: DEFAULT_HAND_SIZE,
            rule_set: RuleSet::default(),
            combat_dice: false,
            mulligan: MulliganMode::default(),
            league: false,
            seed: 0,
            secret: DiceSecret::default(),
        }
    }
}

impl TableConfig {
    /// Default settings with a secret made from `seed` ([`DiceSecret::from_seed`]): for tests,
    /// benchmarks and tools.
    pub fn seeded(seed: u64) -> Self {
        Self {
            seed,
            secret: DiceSecret::from_seed(seed),
            ..Self::default()
        }
    }

    /// Checks every setting against its allowed range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(MIN_SEATS..=MAX_SEATS).contains(&self.seats) {
            return Err(ConfigError::Seats(self.seats));
        }
        self.validate_rules()
    }

    /// Checks the settings of a solitaire's table (Mountain Magic): one seat, and every other
    /// setting in its range as at any table (the journal keeps them all).
    pub fn validate_solitaire(&self) -> Result<(), ConfigError> {
        if self.seats != MOUNTAIN_MAGIC_SEATS {
            return Err(ConfigError::SolitaireSeats(self.seats));
        }
        self.validate_rules()
    }

    /// Every setting but the seats.
    fn validate_rules(&self) -> Result<(), ConfigError> {
        SpellRange::new(self.spell_range.0)?;
        if self.rule_set == RuleSet::Cr807 && self.spell_range.get() != 1 {
            return Err(ConfigError::Cr807Range(self.spell_range.0));
        }
        if !(MIN_STARTING_LIFE..=MAX_STARTING_LIFE).contains(&self.starting_life) {
            return Err(ConfigError::StartingLife(self.starting_life));
        }
        if !(MIN_HAND_SIZE..=MAX_HAND_SIZE).contains(&self.hand_size) {
            return Err(ConfigError::HandSize(self.hand_size));
        }
        Ok(())
    }
}

/// A table setting outside its allowed range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Seats must be 2–40.
    #[error("a table has {MIN_SEATS}–{MAX_SEATS} seats, not {0}")]
    Seats(u8),
    /// A solitaire's table (Mountain Magic) has one seat.
    #[error("a Mountain Magic table has {MOUNTAIN_MAGIC_SEATS} seat, not {0}")]
    SolitaireSeats(u8),
    /// Spell range must be 1–4.
    #[error("spell range is {MIN_SPELL_RANGE}–{MAX_SPELL_RANGE}, not {0}")]
    SpellRange(u8),
    /// Starting life must be 1–1000.
    #[error("starting life is {MIN_STARTING_LIFE}–{MAX_STARTING_LIFE}, not {0}")]
    StartingLife(i32),
    /// Hand size must be 1–20.
    #[error("a starting hand has {MIN_HAND_SIZE}–{MAX_HAND_SIZE} cards, not {0}")]
    HandSize(u8),
    /// CR 807.2a: the official variant's range of influence is 1.
    #[error("the cr807 rules have a range of influence of 1 (807.2a), not {0}")]
    Cr807Range(u8),
}

impl ConfigError {
    /// The setting's field in `create_table`.
    pub fn field(&self) -> &'static str {
        match self {
            ConfigError::Seats(_) | ConfigError::SolitaireSeats(_) => "seats",
            ConfigError::SpellRange(_) | ConfigError::Cr807Range(_) => "spell_range",
            ConfigError::StartingLife(_) => "starting_life",
            ConfigError::HandSize(_) => "hand_size",
        }
    }

    /// `field: what is wrong`, as a `bad_settings` error's message says it.
    pub fn message(&self) -> String {
        format!("{}: {self}", self.field())
    }
}
