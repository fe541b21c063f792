//! Small value types shared by requests, events, views and the rules core: the one vocabulary
//! of the game, written once.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A player on the wire: the table numbers players in join order, from 0. Stable for the whole
/// life of the table.
pub type PlayerId = u16;

/// One of a table's simultaneous turns on the wire, numbered 0.. at the start of the game.
pub type TurnId = u8;

/// Defines an id that is a UUID and says what it identifies: a newtype that only converts to
/// and from a bare [`Uuid`] by name, so one kind of id cannot be passed for another. On every
/// wire and in every format it is the canonical hyphenated string ([`parse_uuid`] reads it);
/// `Display` and `FromStr` use that same form.
macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub struct $name(::uuid::Uuid);

        impl $name {
            /// The id with this numeric value (fixed ids of examples and tests).
            #[must_use]
            pub const fn from_u128(value: u128) -> Self {
                Self(::uuid::Uuid::from_u128(value))
            }

            /// The all-zero id (a placeholder in tests and examples).
            #[must_use]
            pub const fn nil() -> Self {
                Self(::uuid::Uuid::nil())
            }

            /// The id holding this UUID.
            #[must_use]
            pub const fn from_uuid(id: ::uuid::Uuid) -> Self {
                Self(id)
            }

            /// A fresh random (version 4) id. Only the server draws ids; the game core never does.
            #[must_use]
            pub fn new_random() -> Self {
                Self(::uuid::Uuid::new_v4())
            }

            /// The UUID it holds.
            #[must_use]
            pub const fn as_uuid(&self) -> &::uuid::Uuid {
                &self.0
            }

            /// Its 16 bytes (how the journal stores it).
            #[must_use]
            pub const fn as_bytes(&self) -> &[u8; 16] {
                self.0.as_bytes()
            }

            /// The id stored as these 16 bytes.
            ///
            /// # Errors
            /// When `bytes` is not 16 bytes long.
            pub fn from_slice(bytes: &[u8]) -> Result<Self, uuid::Error> {
                ::uuid::Uuid::from_slice(bytes).map(Self)
            }
        }

        impl From<::uuid::Uuid> for $name {
            fn from(id: ::uuid::Uuid) -> Self {
                Self(id)
            }
        }

        impl From<$name> for ::uuid::Uuid {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::types::UuidFormError;

            fn from_str(text: &str) -> Result<Self, $crate::types::UuidFormError> {
                $crate::types::parse_uuid(text).map(Self)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut buf = ::uuid::Uuid::encode_buffer();
                s.serialize_str(self.0.hyphenated().encode_lower(&mut buf))
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <String as ::serde::Deserialize>::deserialize(d)?;
                text.parse().map_err(::serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use uuid_id;

uuid_id! {
    /// A table: a UUID, written on the wire as its hyphenated string (`"67e55044-…"`).
    TableId
}

uuid_id! {
    /// A seat token: a UUID string handed out by `seated`, presented again by `resume`.
    SeatToken
}

uuid_id! {
    /// A league organiser's secret: handed out by `league_created`, shown to create the
    /// league's tables.
    OrganiserSecret
}

/// The phase indicator of a running turn.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Phase {
    /// Untap, upkeep and draw. Every turn begins here.
    Beginning,
    /// The main phase before combat.
    PrecombatMain,
    /// Combat: the only phase in which the player may attack.
    Combat,
    /// The main phase after combat.
    PostcombatMain,
    /// End step and cleanup.
    Ending,
}

impl Phase {
    /// Every phase in turn order.
    pub const ALL: &'static [Phase] = <Self as strum::VariantArray>::VARIANTS;

    /// The wire name (`"precombat_main"`, …): serde's.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The phase after this one, if any.
    pub fn next(self) -> Option<Phase> {
        match self {
            Phase::Beginning => Some(Phase::PrecombatMain),
            Phase::PrecombatMain => Some(Phase::Combat),
            Phase::Combat => Some(Phase::PostcombatMain),
            Phase::PostcombatMain => Some(Phase::Ending),
            Phase::Ending => None,
        }
    }
}

/// When a table gives up a simultaneous turn as players are eliminated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduction {
    /// As soon as the starting formula applied to the living players gives fewer turns.
    #[default]
    Eager,
    /// Only when turns × (2R + 1) exceeds the living players.
    Forced,
}

/// Which body of rules schedules the turns (`rules` in `create_table`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RuleSet {
    /// The seed's Grand Melee (`shared/seeds/grand-melee.txt`) as `docs/RULES.md` reads it:
    /// spheres of influence of spell range R.
    #[default]
    #[serde(alias = "grand_melee")]
    Seed,
    /// The official variant, Comprehensive Rules 807: range of influence 1, attack left, a
    /// turn marker for each full four players.
    #[serde(rename = "cr807")]
    Cr807,
}

impl RuleSet {
    /// The wire name: serde's.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// How mulligan decisions are taken (`mulligan` in `create_table`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum MulliganMode {
    /// The seed's Paris mulligan: one player at a time, from the first player to the left.
    #[default]
    Paris,
    /// Everyone decides at the same time; play begins when all have kept.
    Simultaneous,
}

impl MulliganMode {
    /// The wire name: serde's.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What an attack roll of Combat with Dice did (the seed's Attack Table).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RollResult {
    /// A natural 1: the attacking creature takes half its own power.
    CriticalMiss,
    /// A total of 5 or less.
    Miss,
    /// A total of 6–10: half damage, rounded down (a power of 1 deals 1).
    PartialHit,
    /// A total of 11 or more: full damage.
    Hit,
    /// A natural 20: double damage.
    CriticalHit,
}

impl RollResult {
    /// The wire name: serde's.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// A roll's modifier: the rolling creature's power minus the opposing creatures' average
    /// power, rounded down (the power itself when unopposed). The total is natural + modifier.
    pub fn modifier(power: u32, opposing: &[u32]) -> i64 {
        let average = match i64::try_from(opposing.len()) {
            Ok(n) if n > 0 => opposing.iter().map(|&p| i64::from(p)).sum::<i64>() / n,
            _ => 0,
        };
        i64::from(power) - average
    }

    /// The Attack Table: the result of a natural roll and its total, and the damage a creature
    /// of power `power` deals with it (to the target; a critical miss deals half its power to
    /// the attacking creature instead, returned second).
    pub fn of(natural: u8, total: i64, power: u32) -> (RollResult, u32, u32) {
        match natural {
            1 => (RollResult::CriticalMiss, 0, power / 2),
            20 => (RollResult::CriticalHit, power.saturating_mul(2), 0),
            _ if total <= 5 => (RollResult::Miss, 0, 0),
            _ if total <= 10 => (RollResult::PartialHit, (power / 2).max(power.min(1)), 0),
            _ => (RollResult::Hit, power, 0),
        }
    }
}

/// Where a table is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageName {
    /// Players are joining.
    #[default]
    Lobby,
    /// Players decide on mulligans one at a time.
    Mulligan,
    /// Turns are being played.
    Playing,
    /// One player or none is left; standings are final.
    Finished,
}

/// Where a player stands in the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerStatus {
    /// In the game.
    #[default]
    Alive,
    /// Out of the game, but his position still counts for spell range.
    Eliminated,
    /// Out of the game and his position has been taken out of the ring.
    Removed,
}

impl PlayerStatus {
    /// Whether the player is still in the game.
    pub fn is_alive(self) -> bool {
        self == PlayerStatus::Alive
    }
}

/// What a turn is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStateName {
    /// Held by a player who may not begin it yet (or before play has begun).
    #[default]
    Waiting,
    /// Being taken; the turn's `phase` says where.
    Running,
    /// Just finished; the next event passes it on or removes it.
    Ended,
}

/// Why players left the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EliminationCause {
    /// Life fell to 0 or below.
    Life,
    /// Ten or more poison counters.
    Poison,
    /// The player conceded.
    Conceded,
    /// The host ruled the player out.
    Ruling,
}

/// Why a running turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// Its player ended it.
    Finished,
    /// Its player was eliminated during it.
    Eliminated,
    /// The host ended it.
    Ruling,
    /// It ran past the table's turn clock.
    Clock,
    /// Its player was disconnected for longer than the grace period.
    Absent,
}

/// Why a turn left the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnRemovalReason {
    /// It would have been passed to a player who already holds a turn.
    Merged,
    /// It was chosen to reduce the number of simultaneous turns.
    Reduced,
}

/// One line of the final result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Standing {
    /// The player.
    pub player: PlayerId,
    /// 1 for the winner; players eliminated together share a place.
    pub place: u8,
    /// Ascension mana points: one per opponent eliminated before him.
    pub mana_points: u8,
}

/// A host's ruling (during play; `keep` during mulligans).
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames,
)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Ruling {
    /// Eliminate one or more players together.
    Eliminate {
        /// Who is out (at least one, no repeats).
        players: Vec<PlayerId>,
    },
    /// Set a player's life total.
    SetLife {
        /// Whose.
        player: PlayerId,
        /// The new total.
        life: i32,
    },
    /// Set a player's poison counters.
    SetPoison {
        /// Whose.
        player: PlayerId,
        /// The new count.
        poison: u32,
    },
    /// End the running turn of a player (for instance one who has walked away).
    EndTurn {
        /// Whose turn.
        player: PlayerId,
    },
    /// During mulligans: keep the hand of the player whose decision it is (for instance one
    /// who has walked away).
    Keep {
        /// The deciding player.
        player: PlayerId,
    },
    /// A player takes an extra turn (Time Walk and friends): after his current turn if he is
    /// taking one, otherwise just before his next turn.
    ExtraTurn {
        /// Who takes it.
        player: PlayerId,
    },
}

impl Ruling {
    /// The `kind` tag: serde's.
    pub fn name(&self) -> &'static str {
        self.into()
    }
}

/// How the players were seated at the start (`game_started`, the snapshot's `seating_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatingMode {
    /// Drawn by the table's verifiable dice (CR 807.3; the default).
    #[default]
    Random,
    /// In join order (the lobby's order).
    Joined,
    /// In the order the host arranged in the lobby (`start` with an `order`).
    Arranged,
}

impl SeatingMode {
    /// Whether this is the default, random seating (left out of `game_started` then).
    pub fn is_random(&self) -> bool {
        *self == SeatingMode::Random
    }
}

/// An open call for the host (`call_host`), shown until the host answers it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostCall {
    /// Who called.
    pub player: PlayerId,
    /// Why, one short line.
    pub reason: String,
}

/// Why a player kept his hand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeepReason {
    /// He chose to.
    #[default]
    Decided,
    /// His mulligan clock ran out.
    Clock,
    /// He was disconnected past the grace period.
    Absent,
    /// The host ruled it (or kicked him).
    Ruling,
}

/// Why the table ends a running turn or takes a mulligan decision by itself (the core has no
/// clock: the session decides when, and says why).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expiry {
    /// The turn clock or the mulligan clock ran out.
    Clock,
    /// The player has been disconnected for longer than the grace period.
    Absent,
}

impl From<Expiry> for KeepReason {
    fn from(expiry: Expiry) -> Self {
        match expiry {
            Expiry::Clock => KeepReason::Clock,
            Expiry::Absent => KeepReason::Absent,
        }
    }
}

impl From<Expiry> for TurnEndReason {
    fn from(expiry: Expiry) -> Self {
        match expiry {
            Expiry::Clock => TurnEndReason::Clock,
            Expiry::Absent => TurnEndReason::Absent,
        }
    }
}

/// Why a UUID on the wire was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "not a UUID in its one accepted form: 36 characters, lower-case hex in groups of 8-4-4-4-12 \
     joined by hyphens, like 67e55044-10b1-426f-9247-bb680e5fe0c8"
)]
pub struct UuidFormError;

/// A UUID (a table id, seat token, league id, member token, organiser secret) as the protocol
/// writes it, and the only form it accepts: the 36-character hyphenated lower-case string,
/// `67e55044-10b1-426f-9247-bb680e5fe0c8`. Upper case, the 32-digit form without hyphens, braces
/// and `urn:uuid:` are refused, so a token has one spelling and a secret compared or logged as
/// text is the same text everywhere.
pub fn parse_uuid(text: &str) -> Result<Uuid, UuidFormError> {
    let id = Uuid::try_parse(text).map_err(|_| UuidFormError)?;
    let mut buf = Uuid::encode_buffer();
    if id.hyphenated().encode_lower(&mut buf) == text {
        Ok(id)
    } else {
        Err(UuidFormError)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_uuid_is_read_only_in_its_canonical_form() {
        let canonical = "67e55044-10b1-426f-9247-bb680e5fe0c8";
        let id = parse_uuid(canonical).unwrap();
        assert_eq!(id.to_string(), canonical);
        for other in [
            "67E55044-10B1-426F-9247-BB680E5FE0C8",
            "67e55044-10b1-426f-9247-BB680e5fe0c8",
            "67e5504410b1426f9247bb680e5fe0c8",
            "{67e55044-10b1-426f-9247-bb680e5fe0c8}",
            "urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8",
            " 67e55044-10b1-426f-9247-bb680e5fe0c8",
            "67e55044-10b1-426f-9247-bb680e5fe0c",
            "",
        ] {
            assert_eq!(parse_uuid(other), Err(UuidFormError), "{other:?}");
        }
    }

    #[test]
    fn an_id_is_its_canonical_string_in_every_form() {
        let canonical = "67e55044-10b1-426f-9247-bb680e5fe0c8";
        let table: TableId = canonical.parse().unwrap();
        assert_eq!(table.to_string(), canonical);
        assert_eq!(*table.as_uuid(), parse_uuid(canonical).unwrap());
        assert_eq!(TableId::from_slice(table.as_bytes()), Ok(table));
        assert_eq!(
            "67E55044-10B1-426F-9247-BB680E5FE0C8".parse::<SeatToken>(),
            Err(UuidFormError)
        );
        // JSON and MessagePack both carry the string, never the 16 bytes.
        assert_eq!(
            serde_json::to_string(&table).unwrap(),
            format!("\"{canonical}\"")
        );
        let packed = rmp_serde::to_vec(&table).unwrap();
        let mut expected = vec![0xd9, 36];
        expected.extend_from_slice(canonical.as_bytes());
        assert_eq!(packed, expected);
        assert_eq!(rmp_serde::from_slice::<TableId>(&packed).unwrap(), table);
        // Only that form is read back: not the raw bytes, nor another spelling.
        let mut raw = vec![0xc4, 16];
        raw.extend_from_slice(table.as_bytes());
        assert!(rmp_serde::from_slice::<TableId>(&raw).is_err());
        assert!(serde_json::from_str::<TableId>("\"67e5504410b1426f9247bb680e5fe0c8\"").is_err());
    }
}

/// Which game a table plays: every game the server knows, by its wire name (`game` in
/// `create_table`, a table's settings and the lobby's summaries; absent means `grand_melee`,
/// so tables and journals from before the seam read as they were).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum GameKind {
    /// Grand Melee (`docs/RULES.md`): 2–40 players in a ring, simultaneous turns by spheres of
    /// influence.
    #[default]
    GrandMelee,
    /// Magic Tech (`docs/RULES.md`, "Magic Tech"): two players attack each other's cards and
    /// stockpile, with cards deployed face down and paid for with counters.
    MagicTech,
    /// Mountain Magic (`docs/RULES.md`, "Mountain Magic"): a solitaire: one player builds a
    /// mountain from a spell deck the server deals, chooses a path down it and fights the
    /// occupying forces, played by the rules.
    MountainMagic,
}

impl GameKind {
    /// The wire name: serde's.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Whether this is the default game (`grand_melee`), which the wire leaves out.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}
