//! Mountain Magic's vocabulary (`docs/RULES.md`, "Mountain Magic"): the solitaire climb's value
//! types — a card of the pool as the data file describes it, the requests
//! ([`MountainCommand`]), the values its events carry (the events themselves are the
//! `mountain_magic.*` variants of [`Event`](crate::Event)) and the public state a snapshot shows
//! ([`MountainView`], for `TableView.mountain_magic`). The rules that decide and fold them are
//! [`crate::mountain_magic`].
//!
//! Unlike Magic Tech's paper cards, the server knows every card: it deals them from the table's
//! dice, checks every placement and plays the opponent. What is face down (the rest of both
//! decks, the occupying forces before the battle) is in no event until it is turned over.

use crate::league::{LeagueId, MemberId};
use crate::types::TableId;
use serde::{Deserialize, Serialize};

pub use crate::magic_tech_types::Colour;

/// A card of the pool, by its place in the pool's data file (from 0).
pub type CardNo = u16;

/// One line of a deck file: a card of the pool by name, and how many. Read from a map
/// `{"name", "count"}` only: a line written as an array (`["Kerr Crag", 4]`) is refused with
/// [`DECK_LINE_AS_ARRAY`] rather than read by the fields' order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeckLine {
    /// The card's name in the pool.
    pub name: String,
    /// Copies.
    pub count: u8,
}

/// Why a deck line written as an array is refused.
pub const DECK_LINE_AS_ARRAY: &str =
    "a deck line is a map {\"name\": …, \"count\": …}, not an array like [\"Kerr Crag\", 4]";

/// [`DeckLine`] as written, read field by field from a map.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeckLineFields {
    name: String,
    count: u8,
}

impl<'de> Deserialize<'de> for DeckLine {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Line;
        impl<'de> serde::de::Visitor<'de> for Line {
            type Value = DeckLine;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a deck line {\"name\", \"count\"}")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<DeckLine, A::Error> {
                Err(serde::de::Error::custom(DECK_LINE_AS_ARRAY))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<DeckLine, A::Error> {
                let DeckLineFields { name, count } =
                    Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(DeckLine { name, count })
            }
        }
        deserializer.deserialize_any(Line)
    }
}

/// A deck file: `{"cards": [{"name": "Kerr Crag", "count": 4}, …]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeckFile {
    /// Its lines.
    pub cards: Vec<DeckLine>,
}

/// A Mountain Magic table's own settings (`create_table`'s and `settings`' `mountain_magic`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountainMagicSettings {
    /// The climber's own deck (absent: the default deck the table's dice draw from the pool),
    /// checked against the recipe when the table is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deck: Option<DeckFile>,
    /// Today's mountain: the day's deal, the same for everyone who climbs it that day
    /// (`YYYY-MM-DD`, UTC). `create_table` may say `"today"`; the server writes the date and
    /// refuses any other day (`bad_settings`). Not with `deck`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<String>,
    /// With `day`: a league climb. The seat is for one of the league's members (his member
    /// token at `join`, his member name on the seat), and the climb counts in the league's
    /// standings of the day (`mountain_magic.standings` with `league`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueId>,
}

/// How a climb of a day's mountain ended, as its standings rank it (best first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClimbEnd {
    /// The battle's six endings, best first.
    TotalVictory,
    Victory,
    DrawNoCreatures,
    DrawBothCreatures,
    Defeat,
    HumiliatingDefeat,
    /// The spell deck ran out before the mountain was complete.
    FailedClimb,
    /// The climber conceded, was ruled out, or left the climb unfinished.
    GaveUp,
}

impl ClimbEnd {
    /// The end of a battle that ended.
    pub fn of(ending: Ending) -> ClimbEnd {
        match ending {
            Ending::TotalVictory => ClimbEnd::TotalVictory,
            Ending::Victory => ClimbEnd::Victory,
            Ending::DrawNoCreatures => ClimbEnd::DrawNoCreatures,
            Ending::DrawBothCreatures => ClimbEnd::DrawBothCreatures,
            Ending::Defeat => ClimbEnd::Defeat,
            Ending::HumiliatingDefeat => ClimbEnd::HumiliatingDefeat,
        }
    }

    /// Its name, as the text names the endings.
    pub fn name(self) -> &'static str {
        match self {
            ClimbEnd::TotalVictory => Ending::TotalVictory.name(),
            ClimbEnd::Victory => Ending::Victory.name(),
            ClimbEnd::DrawNoCreatures => Ending::DrawNoCreatures.name(),
            ClimbEnd::DrawBothCreatures => Ending::DrawBothCreatures.name(),
            ClimbEnd::Defeat => Ending::Defeat.name(),
            ClimbEnd::HumiliatingDefeat => Ending::HumiliatingDefeat.name(),
            ClimbEnd::FailedClimb => "a failed climb",
            ClimbEnd::GaveUp => "gave up",
        }
    }
}

/// One climb in a day's standings (`mountain_magic.standings`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayClimb {
    /// 1 for the best; climbs equal by end and cards left share a place.
    pub place: u16,
    /// The climber's name at the table (a league climb: his member name).
    pub climber: String,
    /// A league climb's member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<MemberId>,
    /// How it ended.
    pub end: ClimbEnd,
    /// The tie-break: the player's forces still in the battle at its end; for a failed
    /// climb, the cards placed on the mountain; 0 for a climb given up.
    pub cards_left: u16,
    /// Its table (its replay, once finished).
    pub table: TableId,
    /// When it finished (milliseconds since 1970-01-01 UTC).
    pub finished_at_ms: u64,
}

/// Rows of the mountain; the bottom row holds this many cards, each row above one fewer.
pub const ROWS: u8 = 7;

/// Cards in a complete mountain (7 + 6 + … + 1).
pub const MOUNTAIN_CARDS: usize = 28;

/// Face-down cards occupying the mountain.
pub const OCCUPIERS: usize = 5;

/// What an X that neither deals damage nor counters is worth (the text: "X equal to three").
pub const OTHER_X: u8 = 3;

/// A card's type, as the rules count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A land: the mana deck.
    Land,
    /// A creature.
    Creature,
    /// A sorcery.
    Sorcery,
    /// An enchantment.
    Enchantment,
    /// An instant (a fast effect).
    Instant,
    /// An interrupt (a fast effect).
    Interrupt,
    /// An artifact: wild in the climb, never powered in the battle.
    Artifact,
}

impl Kind {
    /// The type class a thing in common and a set count: instants and interrupts are both
    /// fast effects; lands and artifacts have none.
    pub fn class(self) -> Option<Class> {
        match self {
            Kind::Creature => Some(Class::Creature),
            Kind::Sorcery => Some(Class::Sorcery),
            Kind::Enchantment => Some(Class::Enchantment),
            Kind::Instant | Kind::Interrupt => Some(Class::FastEffect),
            Kind::Land | Kind::Artifact => None,
        }
    }

    /// Whether a counterspell can target a card of this type (sorceries, instants, interrupts).
    pub fn counterable(self) -> bool {
        matches!(self, Kind::Sorcery | Kind::Instant | Kind::Interrupt)
    }
}

/// The classes of spell the deck recipe and the climb count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Creatures.
    Creature,
    /// Sorceries.
    Sorcery,
    /// Enchantments.
    Enchantment,
    /// Fast effects: instants and interrupts.
    FastEffect,
}

/// A card's casting cost: only its coloured symbols power it in the battle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cost {
    /// Generic mana (shown; the battle ignores it).
    #[serde(default)]
    pub generic: u8,
    /// One entry per coloured symbol.
    #[serde(default)]
    pub coloured: Vec<Colour>,
    /// Whether the cost has an X.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub x: bool,
}

/// What a card (or a creature's activated ability) does when it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    /// Damage to one enemy creature: `amount`, or X (absent) exactly enough to kill it.
    Damage {
        /// Fixed damage; `None`: X.
        #[serde(default)]
        amount: Option<u8>,
    },
    /// Counters one enemy sorcery, instant or interrupt (with an X in the cost: X exactly
    /// enough): it is removed from play.
    Counter,
    /// Taps one enemy card: a powered one is unpowered, an unpowered one removed from the game.
    Tap,
    /// Untaps one of its wizard's other unpowered cards: it is powered.
    Untap,
    /// Its wizard draws: the player from the cards left in his mountain, the opponent from the
    /// land deck (extras, discarded at once). `None`: X = 3.
    Draw {
        /// Cards; `None`: X.
        #[serde(default)]
        amount: Option<u8>,
    },
    /// The other wizard discards from the top of the land deck. `None`: X = 3.
    Discard {
        /// Cards; `None`: X.
        #[serde(default)]
        amount: Option<u8>,
    },
    /// The next land the other wizard draws is destroyed.
    DestroyLand,
    /// Empties the other wizard's mana pool: all his cards are unpowered.
    EmptyPool,
}

impl Effect {
    /// Whether the effect has an X.
    pub fn has_x(self) -> bool {
        matches!(
            self,
            Effect::Damage { amount: None }
                | Effect::Draw { amount: None }
                | Effect::Discard { amount: None }
        )
    }

    /// Whether the effect names a target card (and on which side: `Some(true)` the user's own).
    pub fn target(self) -> Option<bool> {
        match self {
            Effect::Damage { .. } | Effect::Counter | Effect::Tap => Some(false),
            Effect::Untap => Some(true),
            _ => None,
        }
    }
}

/// A creature's special ability with an activation cost, powered apart from the creature.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ability {
    /// Its coloured activation cost.
    pub cost: Vec<Colour>,
    /// Whether its cost taps the creature (the creature is unpowered by a use).
    #[serde(default)]
    pub tap: bool,
    /// What a use does.
    pub effect: Effect,
}

/// A card of the pool, as the data file describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    /// Its name (unique in the pool).
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// A land's colours of mana (two for a multiland).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub produces: Vec<Colour>,
    /// Its casting cost (a land's is empty).
    #[serde(default)]
    pub cost: Cost,
    /// A creature's power.
    #[serde(default)]
    pub power: u8,
    /// A creature's toughness.
    #[serde(default)]
    pub toughness: u8,
    /// A flyer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flying: bool,
    /// A landwalker, by the colour of its land type (mountainwalk: red).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landwalk: Option<Colour>,
    /// A creature's upkeep, paid from the land deck each time it is powered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upkeep: Vec<Colour>,
    /// What a non-creature spell does when used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
    /// A creature's activated ability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ability: Option<Ability>,
}

impl Card {
    /// The card's colours: a land's mana, another card's coloured symbols (an artifact: none).
    pub fn colours(&self) -> Vec<Colour> {
        let mut colours = if self.kind == Kind::Land {
            self.produces.clone()
        } else {
            self.cost.coloured.clone()
        };
        colours.sort();
        colours.dedup();
        colours
    }

    /// Whether it is a creature.
    pub fn is_creature(&self) -> bool {
        self.kind == Kind::Creature
    }
}

/// A place of the mountain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Spot {
    /// The row (0: the bottom row).
    pub row: u8,
    /// The place in the row (from 0, left).
    pub pos: u8,
}

/// Whose card, in the battle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The climber.
    Player,
    /// The occupying forces, played by the rules.
    Opponent,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::Player => Side::Opponent,
            Side::Opponent => Side::Player,
        }
    }

    /// Index of the side in a pair (player 0, opponent 1).
    pub fn index(self) -> usize {
        match self {
            Side::Player => 0,
            Side::Opponent => 1,
        }
    }
}

/// A card in the battle: its side and its place in that side's forces (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ForceRef {
    /// Whose.
    pub side: Side,
    /// Which.
    pub force: u8,
}

/// Where a drawn land's mana goes: one card, or a creature's activated ability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ManaPlace {
    /// The card (of the drawing wizard's forces).
    pub force: u8,
    /// On its activated ability rather than on the card.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ability: bool,
    /// The colour used (a multiland gives one of its two).
    pub colour: Colour,
}

/// Why a card left the battle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Removal {
    /// Killed in a creature battle or by damage.
    Killed,
    /// Counterspelled.
    Countered,
    /// Tapped while unpowered.
    TappedAway,
    /// A creature whose upkeep could not be paid walked from the battlefield.
    WalkedOff,
}

/// The six ways the battle ends, as the text names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// Your forces destroyed all cards in the enemy's territory.
    TotalVictory,
    /// The mana ran out; the enemy has spells but no creatures, you have creatures.
    Victory,
    /// The mana ran out; neither side has creatures: you have fought for naught.
    DrawNoCreatures,
    /// The mana ran out; both sides have creatures: a passing dragon has lunch.
    DrawBothCreatures,
    /// The mana ran out; you have no creatures, the enemy has.
    Defeat,
    /// The enemy destroyed all your cards: the absolute, total, humiliating defeat.
    HumiliatingDefeat,
}

impl Ending {
    /// Every ending, best first.
    pub const ALL: [Ending; 6] = [
        Ending::TotalVictory,
        Ending::Victory,
        Ending::DrawNoCreatures,
        Ending::DrawBothCreatures,
        Ending::Defeat,
        Ending::HumiliatingDefeat,
    ];

    /// Its name, as the text names it.
    pub fn name(self) -> &'static str {
        match self {
            Ending::TotalVictory => "total victory",
            Ending::Victory => "victory",
            Ending::DrawNoCreatures => "draw (no creatures)",
            Ending::DrawBothCreatures => "draw (both sides' creatures)",
            Ending::Defeat => "defeat",
            Ending::HumiliatingDefeat => "absolute, total, humiliating defeat",
        }
    }
}

/// How a climb ended: it failed on the mountain, or the battle ended one of six ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The spell deck ran out before the mountain was complete: lost at once.
    FailedClimb,
    /// The battle's ending.
    Battle {
        /// Which.
        ending: Ending,
    },
}

/// Where the climb is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MmPhase {
    /// Not dealt yet.
    #[default]
    Undealt,
    /// Building the mountain.
    Climbing,
    /// The mountain is complete: choose the path.
    Path,
    /// Fighting the occupying forces.
    Battle,
    /// Over (see the outcome).
    Over,
}

/// A Mountain Magic request (`mountain_magic.*`), decided by [`crate::mountain_magic`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MountainCommand {
    /// Turn over the top card of the spell deck.
    #[serde(rename = "mountain_magic.flip")]
    Flip,
    /// Place the turned-over card (or, right after a placement, the discard pile's top card)
    /// on the mountain, touching cards `pos` and `pos + 1` of the row below.
    #[serde(rename = "mountain_magic.place")]
    Place {
        /// The row (1 is the row above the bottom row).
        row: u8,
        /// Its place in the row (from 0, left).
        pos: u8,
    },
    /// Put the turned-over card face up on the discard pile.
    #[serde(rename = "mountain_magic.discard")]
    Discard,
    /// Choose the path down the complete mountain: the place in each row from the top row
    /// (always 0) down to the bottom row.
    #[serde(rename = "mountain_magic.path")]
    Path {
        /// Seven places, top row first.
        path: Vec<u8>,
    },
    /// Put the land just drawn on one of one's cards (or let it go: `None`).
    #[serde(rename = "mountain_magic.mana")]
    Mana {
        /// Where.
        place: Option<ManaPlace>,
    },
    /// Powered creatures attack one enemy creature.
    #[serde(rename = "mountain_magic.attack")]
    Attack {
        /// One's powered creatures.
        attackers: Vec<u8>,
        /// The enemy creature (of the opponent's forces).
        target: u8,
    },
    /// Use a powered non-creature card.
    #[serde(rename = "mountain_magic.cast")]
    Cast {
        /// Which of one's cards.
        force: u8,
        /// Its target, if its effect has one.
        target: Option<ForceRef>,
    },
    /// Use a stored use of a powered creature's activated ability.
    #[serde(rename = "mountain_magic.activate")]
    Activate {
        /// Which of one's creatures.
        force: u8,
        /// Its target, if its effect has one.
        target: Option<ForceRef>,
    },
    /// End one's turn: the opponent draws and acts.
    #[serde(rename = "mountain_magic.end_turn")]
    EndTurn,
}

/// A card in the battle, as everyone sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForceView {
    /// The card.
    pub card: CardNo,
    /// The coloured mana on it.
    pub mana: Vec<Colour>,
    /// Whether it is powered.
    pub powered: bool,
    /// The coloured mana on its activated ability (toward the next use).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ability_mana: Vec<Colour>,
    /// Stored uses of its activated ability.
    #[serde(default)]
    pub uses: u8,
    /// Whether it has been used this turn (a card is used at most once a turn; abilities'
    /// stored uses are not limited).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub used: bool,
    /// Why it left the battle, if it did.
    pub gone: Option<Removal>,
}

/// The battle, as everyone sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BattleView {
    /// The player's forces (the path, top first, then cards drawn from the mountain).
    pub player: Vec<ForceView>,
    /// The occupying forces.
    pub opponent: Vec<ForceView>,
    /// Whose turn it is.
    pub turn: Option<Side>,
    /// The land the player drew this turn, waiting for his `mana` decision.
    pub pending_land: Option<CardNo>,
    /// Lands each wizard (player, opponent) will lose at his next draws.
    pub doomed: [u8; 2],
    /// Turns each wizard has begun (player, opponent).
    pub turns: [u16; 2],
}

/// Mountain Magic's public state (`TableView.mountain_magic`): the fold of its events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountainView {
    /// Where the climb is.
    pub phase: MmPhase,
    /// The mountain's rows, bottom row (seven places) first; empty places are `None`. After
    /// the path is chosen, its cards (and cards drawn from the mountain) are taken off.
    pub mountain: Vec<Vec<Option<CardNo>>>,
    /// The discard pile, face up, bottom first (the last is its first face-up card).
    pub discard: Vec<CardNo>,
    /// The card turned over and not yet placed or discarded.
    pub flipped: Option<CardNo>,
    /// Right after a placement: the discard pile's top card may be placed.
    pub may_recover: bool,
    /// Cards left in the spell deck.
    pub spells_left: u16,
    /// Cards left in the land deck.
    pub lands_left: u16,
    /// The chosen path, top row first.
    pub path: Vec<u8>,
    /// The battle, once begun.
    pub battle: Option<BattleView>,
    /// How it ended.
    pub outcome: Option<Outcome>,
}

/// Why a Mountain Magic request was refused (it changed nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum MountainError {
    /// Not a request the climb takes now.
    #[error("not now")]
    NotNow,
    /// No such place, or the card may not go there.
    #[error("the card may not go there")]
    IllegalPlacement,
    /// Not a path down the mountain.
    #[error("not a path down the mountain")]
    BadPath,
    /// The mana cannot go there.
    #[error("the mana cannot go there")]
    BadMana,
    /// No such card, or it cannot do that now.
    #[error("that card cannot do that now")]
    BadCard,
    /// Not a target that card can take.
    #[error("not a target for that card")]
    BadTarget,
}
