//! Magic Tech's vocabulary (`docs/RULES.md`, "Magic Tech"): the two-player stockpile variant's
//! value types — a card as its owner declares it when it is revealed, the zones and areas, the
//! phases, the requests ([`MagicTechCommand`]) and the snapshot's part ([`MagicTechView`]).
//! The rules that decide and fold them are [`crate::magic_tech`]; the requests and events that
//! carry them on the wire are `magic_tech.*` variants of [`ClientMessage`](crate::ClientMessage)
//! and [`Event`](crate::Event).
//!
//! Paper cards stay paper: the server never knows a face-down card. It numbers every card put
//! into play ([`CardId`]) and learns what it must count when the owner declares it (a land at
//! its deployment, any other card at its reveal).

use serde::{Deserialize, Serialize};

use crate::types::PlayerId;

/// A card in play, numbered by the table in the order cards were deployed (from 0).
pub type CardId = u16;

/// The most cards a Magic Tech deck may hold.
pub const MAX_DECK: u8 = 60;

/// Cards each player draws at the start, before mulligans.
pub const STARTING_HAND: u8 = 5;

/// Lands a player may deploy in one turn.
pub const LANDS_PER_TURN: u8 = 2;

/// Non-land deployments a player may make in one turn (the first player's first turn: 1).
pub const DEPLOYMENTS_PER_TURN: u8 = 2;

/// What a coloured mana symbol costs without the matching basic land in play.
pub const COLOURED_WITHOUT_LAND: u16 = 3;

/// A land's armour and structure.
pub const LAND_ARMOUR: u16 = 3;

/// A colour of Magic (and the basic land that makes it: Plains, Island, Swamp, Mountain, Forest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    /// Plains.
    White,
    /// Island.
    Blue,
    /// Swamp.
    Black,
    /// Mountain.
    Red,
    /// Forest.
    Green,
}

impl Colour {
    /// Every colour, in WUBRG order.
    pub const ALL: [Colour; 5] = [
        Colour::White,
        Colour::Blue,
        Colour::Black,
        Colour::Red,
        Colour::Green,
    ];
}

/// A card's mana cost: generic mana and its coloured symbols.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ManaCost {
    /// Generic mana.
    #[serde(default)]
    pub generic: u8,
    /// One entry per coloured symbol (`{G}{G}` is two `green`).
    #[serde(default)]
    pub coloured: Vec<Colour>,
}

impl ManaCost {
    /// Converted mana cost: generic plus one per coloured symbol.
    pub fn converted(&self) -> u16 {
        u16::from(self.generic) + u16::try_from(self.coloured.len()).unwrap_or(u16::MAX)
    }

    /// What the card costs to reveal (or to pay) for a player with the basic lands `basics` in
    /// play: each coloured symbol counts as generic with its basic land, otherwise as
    /// [`COLOURED_WITHOUT_LAND`] generic.
    pub fn to_pay(&self, basics: &[Colour]) -> u16 {
        self.coloured
            .iter()
            .fold(u16::from(self.generic), |sum, c| {
                let each = if basics.contains(c) {
                    1
                } else {
                    COLOURED_WITHOUT_LAND
                };
                sum.saturating_add(each)
            })
    }
}

/// A card's type, as far as the rules count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardType {
    /// A land: cost 0, deployed face up at once; attack 0, armour 3, structure 3.
    Land,
    /// A creature: attack = power, armour = toughness, structure = converted cost.
    Creature,
    /// An artifact (not a creature): armour = structure = converted cost.
    Artifact,
    /// An enchantment: armour = structure = converted cost.
    Enchantment,
    /// A sorcery: revealed in its owner's turn, then to the scrapheap.
    Sorcery,
    /// An instant: revealed at any time, then to the scrapheap.
    Instant,
}

impl CardType {
    /// Whether a card of this type stays in play once revealed.
    pub fn is_permanent(self) -> bool {
        !matches!(self, CardType::Sorcery | CardType::Instant)
    }
}

/// The most coloured symbols a mana cost may have (a card's cost or its regeneration cost). The
/// printed card with the most, Progenitus, has ten; the bound keeps a declared face small, so
/// that a table's snapshot stays far below the 1 MiB a client accepts however its cards were
/// declared.
pub const MAX_COLOURED_SYMBOLS: usize = 16;

/// Keywords a declaration named that the server does not know: a declaration with any is
/// refused (`bad_card`), not kept with the unknown ones silently dropped. Only read, never
/// written: a client reading a snapshot from a later server that knows more keywords ignores
/// them, as it ignores any unknown field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UnknownKeywords(pub Vec<String>);

impl<'de> Deserialize<'de> for UnknownKeywords {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> serde::de::Visitor<'de> for Names {
            type Value = UnknownKeywords;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("keywords")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<UnknownKeywords, A::Error> {
                let mut names = Vec::new();
                while let Some((name, serde::de::IgnoredAny)) = map.next_entry::<String, _>()? {
                    names.push(name);
                }
                Ok(UnknownKeywords(names))
            }
        }
        deserializer.deserialize_map(Names)
    }
}

/// The keywords that matter to the rules the server keeps, as declared at the reveal (absent
/// fields: the card has none). `landwalk` and `protection` name each colour at most once (so at
/// most five); a regeneration cost has at most [`MAX_COLOURED_SYMBOLS`] coloured symbols; any
/// other keyword is refused ([`UnknownKeywords`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Keywords {
    /// Flying: blocked only by creatures with flying or reach.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flying: bool,
    /// Reach: blocks creatures with flying.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reach: bool,
    /// Landwalk: unblockable by a patrol while the defender has a basic land of a colour here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub landwalk: Vec<Colour>,
    /// Protection: cannot be blocked by creatures of a colour here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protection: Vec<Colour>,
    /// Shadow: blocks and is blocked only by creatures with shadow.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shadow: bool,
    /// Trample: damage beyond what destroys its blockers goes to the mission's target.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trample: bool,
    /// First strike: deals its damage before creatures without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_strike: bool,
    /// Banding (recorded; the players apply it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub banding: bool,
    /// Flanking: a blocker without flanking deals and absorbs one less.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flanking: bool,
    /// Phasing (recorded; the players apply it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub phasing: bool,
    /// Rampage N: +N attack and armour for each blocker beyond the first (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rampage: u8,
    /// The regeneration cost, if it regenerates: paid in upkeep to remove one damage counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regeneration: Option<ManaCost>,
    /// Immune to summoning sickness: may patrol (and go on missions) the turn it is revealed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub haste: bool,
    /// Keywords the declaration named that the server does not know (refused).
    #[serde(flatten, skip_serializing)]
    pub unknown: UnknownKeywords,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// A card as its owner declares it: a land at its deployment, any other card at its reveal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CardFace {
    /// Its printed name: 1–64 characters by the rules of every other name
    /// ([`crate::text::normalize_card_name`]).
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub card_type: CardType,
    /// Its mana cost (a land's is empty).
    #[serde(default)]
    pub cost: ManaCost,
    /// A creature's power (0 otherwise).
    #[serde(default)]
    pub power: u8,
    /// A creature's toughness (0 otherwise).
    #[serde(default)]
    pub toughness: u8,
    /// A basic land's colour (`green` for a Forest); `None` for every other card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic: Option<Colour>,
    /// Its keywords.
    #[serde(default)]
    pub keywords: Keywords,
}

impl CardFace {
    /// Attack: a creature's power, 0 for anything else.
    pub fn attack(&self) -> u16 {
        match self.card_type {
            CardType::Creature => u16::from(self.power),
            _ => 0,
        }
    }

    /// Armour: a creature's toughness, a land's 3, another permanent's converted cost.
    pub fn armour(&self) -> u16 {
        match self.card_type {
            CardType::Creature => u16::from(self.toughness),
            CardType::Land => LAND_ARMOUR,
            _ => self.cost.converted(),
        }
    }

    /// Structure: a land's 3, any other card's converted cost (a creature's casting cost).
    pub fn structure(&self) -> u16 {
        match self.card_type {
            CardType::Land => LAND_ARMOUR,
            _ => self.cost.converted(),
        }
    }

    /// The card's colours: those of its coloured symbols.
    pub fn colours(&self) -> Vec<Colour> {
        let mut colours = self.cost.coloured.clone();
        colours.sort();
        colours.dedup();
        colours
    }
}

/// Where a card is, for the card count: every card of a player's deck is in exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// The library.
    Stockpile,
    /// The hand.
    Hand,
    /// On the table (face down under construction, or face up).
    Play,
    /// The graveyard (destroyed, buried, discarded, scrapped, resolved).
    Scrapheap,
}

/// Where a card in play stands on its owner's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Area {
    /// The deploy area: face-down cards, lands and other permanents, and creatures revealed
    /// this turn.
    Deploy,
    /// On patrol: blocks what it could normally block; untapped, it cannot be attacked.
    Patrol,
    /// Guarding one of its owner's cards, or his stockpile (`card` absent): blocks any
    /// attacker of it, and only those.
    Guard {
        /// The guarded card; `None`: the stockpile.
        #[serde(default)]
        card: Option<CardId>,
    },
}

/// What a mission, or a spell's or ability's damage, is aimed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// A card in play.
    Card {
        /// Which.
        card: CardId,
    },
    /// A player's stockpile.
    Stockpile {
        /// Whose.
        player: PlayerId,
    },
}

/// A turn's phases, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MtPhase {
    /// The active player's permanents untap.
    Untap,
    /// He draws (one on the first player's first turn, two afterwards).
    Draw,
    /// Regeneration is paid.
    Upkeep,
    /// Cards are deployed, paid for and revealed; creatures relocated.
    Deploy,
    /// Missions.
    Missions,
    /// Creatures activated this turn go on patrol; the turn passes.
    End,
}

impl MtPhase {
    /// The phase after this one (`None` after the end phase: the turn passes).
    pub fn next(self) -> Option<MtPhase> {
        Some(match self {
            MtPhase::Untap => MtPhase::Draw,
            MtPhase::Draw => MtPhase::Upkeep,
            MtPhase::Upkeep => MtPhase::Deploy,
            MtPhase::Deploy => MtPhase::Missions,
            MtPhase::Missions => MtPhase::End,
            MtPhase::End => return None,
        })
    }
}

/// One block in a mission: a defending creature blocks an attacker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Block {
    /// The defending creature.
    pub blocker: CardId,
    /// The attacking creature it blocks.
    pub attacker: CardId,
}

/// A number the players (one proposes, the other accepts) or the host set right.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Correction {
    /// A face-down card's mana counters.
    Counters {
        /// Which card.
        card: CardId,
        /// The new count.
        counters: u8,
    },
    /// A card's damage (structure) counters; at or above its structure it is destroyed.
    Damage {
        /// Which card.
        card: CardId,
        /// The new count.
        damage: u16,
    },
    /// Whether a card is tapped.
    Tapped {
        /// Which card.
        card: CardId,
        /// Tapped or not.
        tapped: bool,
    },
    /// A player's unspent mana.
    Mana {
        /// Whose.
        player: PlayerId,
        /// The new amount.
        mana: u16,
    },
    /// Cards moved between a player's stockpile, hand and scrapheap (not play).
    Move {
        /// Whose.
        player: PlayerId,
        /// From where.
        from: Zone,
        /// To where.
        to: Zone,
        /// How many.
        count: u8,
    },
}

/// A Magic Tech request, decided by the rules ([`crate::magic_tech`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MagicTechCommand {
    /// In the lobby: declare one's deck size (5–60: at least a starting hand, at most
    /// [`MAX_DECK`]).
    DeclareDeck {
        /// Cards in the deck.
        size: u8,
    },
    /// Move on to the next phase of one's turn (from the end phase: pass the turn).
    NextPhase,
    /// Deploy a card from hand: face down, or a land (declared) face up at once.
    Deploy {
        /// The land, if it is one.
        land: Option<CardFace>,
    },
    /// Tap one's untapped face-up card for `mana` (a land: 1; another source: declared).
    Tap {
        /// Which card.
        card: CardId,
        /// Mana it makes (0: tapped for something else).
        mana: u8,
    },
    /// Spend unspent mana: counters on one's face-down card, or an activation cost.
    Pay {
        /// The face-down card; `None`: an activation cost.
        card: Option<CardId>,
        /// How much (at least 1).
        amount: u16,
    },
    /// Turn one's face-down card face up, declaring it: its counters must reach its cost to
    /// reveal.
    Reveal {
        /// Which card.
        card: CardId,
        /// What it is.
        face: CardFace,
    },
    /// In one's deploy phase: move a creature that began the turn in play.
    Relocate {
        /// Which creature.
        card: CardId,
        /// Patrol, or guarding a card or the stockpile.
        area: Area,
    },
    /// In one's missions phase: send untapped creatures against a target.
    Mission {
        /// The attackers.
        attackers: Vec<CardId>,
        /// An opponent's card in play or his stockpile.
        target: Target,
    },
    /// The defender's blocks for the mission under way (empty: none); the mission resolves.
    Block {
        /// The blocks.
        blocks: Vec<Block>,
    },
    /// A spell or ability deals damage (declared by its controller).
    Damage {
        /// To what.
        target: Target,
        /// How much (at least 1).
        amount: u16,
    },
    /// A healing effect removes damage counters from a card.
    Heal {
        /// Which card.
        card: CardId,
        /// How many (at least 1).
        amount: u16,
    },
    /// In one's upkeep: pay a creature's regeneration cost to remove one damage counter.
    Regenerate {
        /// Which creature.
        card: CardId,
    },
    /// A card effect makes one draw.
    Draw {
        /// How many (at least 1).
        count: u8,
    },
    /// Pay or lose life (negative: scrap that many), or gain life (positive: put that many
    /// scrapheap cards under the stockpile, as many as one chooses).
    Life {
        /// The change, not 0.
        delta: i32,
    },
    /// A card effect takes one's card out of play.
    LeavePlay {
        /// Which card.
        card: CardId,
        /// Where it goes (hand, stockpile or scrapheap).
        to: Zone,
    },
    /// Propose a correction to the opponent.
    Propose {
        /// The correction.
        correction: Correction,
    },
    /// Accept or decline the opponent's proposal.
    Answer {
        /// Accept?
        accept: bool,
    },
    /// The host corrects a number.
    Rule {
        /// The correction.
        correction: Correction,
    },
}

/// One player's side in a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideView {
    /// Whose.
    pub player: PlayerId,
    /// His declared deck size (`None`: not yet).
    pub deck: Option<u8>,
    /// Cards in his stockpile.
    pub stockpile: u8,
    /// Cards in his hand.
    pub hand: u8,
    /// Cards in his scrapheap.
    pub scrapheap: u8,
    /// His unspent mana.
    pub mana: u16,
}

/// A card in play in a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardView {
    /// Its number.
    pub card: CardId,
    /// Its owner.
    pub owner: PlayerId,
    /// What it is, once declared (`None`: face down).
    pub face: Option<CardFace>,
    /// Mana counters on it while face down.
    pub counters: u8,
    /// Damage (structure) counters.
    pub damage: u16,
    /// Whether it is tapped.
    pub tapped: bool,
    /// Where it stands.
    pub area: Area,
    /// Whether it was deployed or revealed this turn (it did not begin the turn in play as
    /// what it is now): a fresh creature stays in the deploy area until the end phase, unless
    /// it is immune to summoning sickness.
    pub fresh: bool,
    /// A face-down card damaged and shown to the opponent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shown: bool,
}

/// The mission under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissionView {
    /// The attacking player.
    pub player: PlayerId,
    /// His attackers.
    pub attackers: Vec<CardId>,
    /// Its target.
    pub target: Target,
}

/// A correction waiting for the other player's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalView {
    /// Who proposed it.
    pub player: PlayerId,
    /// What.
    pub correction: Correction,
}

/// Magic Tech's part of a snapshot (`TableView.magic_tech`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MagicTechView {
    /// Both sides, by player id.
    pub sides: Vec<SideView>,
    /// The cards in play, by number.
    pub cards: Vec<CardView>,
    /// Whose turn it is.
    pub active: Option<PlayerId>,
    /// Its phase.
    pub phase: Option<MtPhase>,
    /// Turns begun so far (1: the first player's first turn).
    pub turn_number: u32,
    /// Non-land deployments made this turn.
    pub deployed: u8,
    /// Lands deployed this turn.
    pub lands: u8,
    /// The mission under way, waiting for the defender's blocks.
    pub mission: Option<MissionView>,
    /// A correction waiting for an answer.
    pub proposal: Option<ProposalView>,
    /// The number the next deployed card gets.
    pub next_card: CardId,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn face(
        card_type: CardType,
        generic: u8,
        coloured: &[Colour],
        power: u8,
        toughness: u8,
    ) -> CardFace {
        CardFace {
            name: "Card".to_owned(),
            card_type,
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

    #[test]
    fn coloured_symbols_count_as_generic_with_their_basic_land_else_three() {
        let cost = ManaCost {
            generic: 2,
            coloured: vec![Colour::Green, Colour::Green, Colour::Red],
        };
        assert_eq!(cost.converted(), 5);
        assert_eq!(cost.to_pay(&[Colour::Green, Colour::Red]), 5);
        assert_eq!(cost.to_pay(&[Colour::Green]), 2 + 1 + 1 + 3);
        assert_eq!(cost.to_pay(&[]), 2 + 9);
        assert_eq!(ManaCost::default().to_pay(&[]), 0);
    }

    #[test]
    fn attack_armour_and_structure_by_type() {
        let bears = face(CardType::Creature, 1, &[Colour::Green], 2, 3);
        assert_eq!(
            (bears.attack(), bears.armour(), bears.structure()),
            (2, 3, 2)
        );
        let land = CardFace {
            basic: Some(Colour::Green),
            ..face(CardType::Land, 0, &[], 0, 0)
        };
        assert_eq!((land.attack(), land.armour(), land.structure()), (0, 3, 3));
        let ring = face(CardType::Artifact, 4, &[], 0, 0);
        assert_eq!((ring.attack(), ring.armour(), ring.structure()), (0, 4, 4));
        let aura = face(
            CardType::Enchantment,
            1,
            &[Colour::White, Colour::Blue],
            0,
            0,
        );
        assert_eq!(aura.colours(), vec![Colour::White, Colour::Blue]);
        assert!(!CardType::Instant.is_permanent() && CardType::Enchantment.is_permanent());
    }

    #[test]
    fn the_phases_run_in_order_and_end_with_the_end_phase() {
        let mut phase = MtPhase::Untap;
        let mut seen = vec![phase];
        while let Some(next) = phase.next() {
            seen.push(next);
            phase = next;
        }
        assert_eq!(
            seen,
            [
                MtPhase::Untap,
                MtPhase::Draw,
                MtPhase::Upkeep,
                MtPhase::Deploy,
                MtPhase::Missions,
                MtPhase::End
            ]
        );
    }
}
