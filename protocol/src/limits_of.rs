//! Every numeric limit and text rule a client can meet, in one table ([`LIMITS`]): its value,
//! the requests it applies to, the error code the server answers past it and what it means.
//!
//! Each value is read from the constant the code checks (the [`num!`] macro takes both the
//! constant's name and its value from the constant itself), so the table cannot say another
//! number than the server uses; the text rules are written out from the lists the checks use.
//! PROTOCOL.md's section "Limits" is [`render_markdown`]'s output, and `cargo test` fails when
//! it differs (`protocol/tests/doc.rs`). The server's flags take their defaults from
//! [`crate::server_limits`], and a server test checks that each flag named here exists with
//! that default.
//!
//! Adding a limit is one constant, used by the check, and one entry here.

use crate::ErrorCode::{self, *};
use crate::limits::*;
use crate::mountain_magic::pool;
use crate::{league, magic_tech_types, session, text};

/// A number of the table: the constant's name as the crate spells it, and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num {
    /// The constant, e.g. `MAX_NAME_CHARS` or `magic_tech_types::MAX_DECK`.
    pub name: &'static str,
    /// Its value.
    pub value: f64,
}

/// The [`Num`] of a constant: its name and its value, both from the constant.
macro_rules! num {
    ($constant:path) => {
        Num {
            name: stringify!($constant),
            value: $constant as f64,
        }
    };
}

/// How a limit bounds what it applies to.
#[derive(Debug, Clone, Copy)]
pub enum Value {
    /// At most this many.
    AtMost(Num),
    /// From the first to the second, both included.
    Range(Num, Num),
    /// Exactly this many.
    Exactly(Num),
    /// This number (an interval, a rate, a burst, a threshold): the meaning says how it counts.
    Is(Num),
    /// A rule on text, written out from the code that checks it.
    Rule {
        /// The code that holds the rule.
        name: &'static str,
        /// The rule in words.
        text: fn() -> String,
    },
}

impl Value {
    /// The numbers in it.
    pub fn nums(&self) -> Vec<Num> {
        match *self {
            Value::AtMost(n) | Value::Exactly(n) | Value::Is(n) => vec![n],
            Value::Range(min, max) => vec![min, max],
            Value::Rule { .. } => Vec::new(),
        }
    }
}

/// Where a limit belongs, in the order PROTOCOL.md shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// Messages and the connection.
    Messages,
    /// Names and other text.
    Text,
    /// A table's settings.
    Tables,
    /// Grand Melee's requests.
    GrandMelee,
    /// Magic Tech's requests.
    MagicTech,
    /// A Mountain Magic deck file.
    MountainMagic,
    /// Ascension leagues.
    Leagues,
    /// Paged answers.
    Pages,
    /// Intervals and rates of the protocol itself.
    Pacing,
    /// The server's own limits: its flags' defaults, and a few numbers no flag changes.
    Server,
}

impl Group {
    /// Every group, in order.
    pub const ALL: [Group; 10] = [
        Group::Messages,
        Group::Text,
        Group::Tables,
        Group::GrandMelee,
        Group::MagicTech,
        Group::MountainMagic,
        Group::Leagues,
        Group::Pages,
        Group::Pacing,
        Group::Server,
    ];

    /// Its heading in PROTOCOL.md.
    pub fn title(self) -> &'static str {
        match self {
            Group::Messages => "Messages",
            Group::Text => "Names and text",
            Group::Tables => "Table settings (`create_table`)",
            Group::GrandMelee => "Grand Melee",
            Group::MagicTech => "Magic Tech",
            Group::MountainMagic => "Mountain Magic",
            Group::Leagues => "Ascension leagues",
            Group::Pages => "Pages",
            Group::Pacing => "Intervals and rates",
            Group::Server => "The server's own limits (flags and their defaults)",
        }
    }
}

/// What a limit applies to that is not a request.
pub const SCOPES: &[&str] = &[
    "every frame",
    "the handshake",
    "every connection",
    "/qr.svg",
];

/// One limit or text rule.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// Where it belongs.
    pub group: Group,
    /// Its value.
    pub value: Value,
    /// What its numbers count (`characters`, `bytes`, `seconds`, …).
    pub unit: &'static str,
    /// The value taken when a request leaves the field out.
    pub default: Option<Num>,
    /// The server flag that sets it (its value is then the flag's default).
    pub flag: Option<&'static str>,
    /// The requests (`type` tags) it applies to, or one of [`SCOPES`].
    pub applies_to: &'static [&'static str],
    /// The error codes a request past it is answered with (each declared for each request in
    /// [`crate::errors_of`]).
    pub answers: &'static [ErrorCode],
    /// What else happens past it (a close code, an HTTP status), if anything.
    pub otherwise: &'static str,
    /// What it bounds, in one line.
    pub meaning: &'static str,
}

impl Limit {
    const fn new(group: Group, value: Value, unit: &'static str) -> Self {
        Self {
            group,
            value,
            unit,
            default: None,
            flag: None,
            applies_to: &[],
            answers: &[],
            otherwise: "",
            meaning: "",
        }
    }

    const fn to(self, applies_to: &'static [&'static str]) -> Self {
        Self { applies_to, ..self }
    }

    const fn answers(self, answers: &'static [ErrorCode]) -> Self {
        Self { answers, ..self }
    }

    const fn otherwise(self, otherwise: &'static str) -> Self {
        Self { otherwise, ..self }
    }

    const fn default(self, default: Num) -> Self {
        Self {
            default: Some(default),
            ..self
        }
    }

    const fn flag(self, flag: &'static str) -> Self {
        Self {
            flag: Some(flag),
            ..self
        }
    }

    const fn means(self, meaning: &'static str) -> Self {
        Self { meaning, ..self }
    }
}

use Group as G;
use Value::{AtMost, Exactly, Is, Range};

const fn limit(group: Group, value: Value, unit: &'static str) -> Limit {
    Limit::new(group, value, unit)
}

const fn rule(name: &'static str, text: fn() -> String) -> Value {
    Value::Rule { name, text }
}

/// Every name a person types and the server keeps and shows.
const NAMED: &[&str] = &["join", "create_table", "create_league", "join_league"];
/// The league requests whose texts (deck, set and card names) are names too.
const LEAGUE_TEXTS: &[&str] = &["register_deck", "buy", "take_remedy"];
/// Every request that checks a password against a table's or a league's.
const PASSWORDED: &[&str] = &["join", "watch", "get_replay", "join_league"];
/// Every paged request with a `limit`.
const PAGED: &[&str] = &[
    "list_tables",
    "list_replays",
    "get_events",
    "list_leagues",
    "get_league",
    "mountain_magic.standings",
];
/// A Magic Tech card face comes with these.
const FACES: &[&str] = &["magic_tech.deploy", "magic_tech.reveal"];

fn forbidden_rule() -> String {
    let categories: Vec<&str> = text::FORBIDDEN_CATEGORIES
        .iter()
        .map(|&(_, abbreviation)| abbreviation)
        .collect();
    format!(
        "no character of the Unicode general categories {}",
        categories.join(", ")
    )
}

fn whitespace_rule() -> String {
    "no white space but U+0020 inside a name".to_owned()
}

fn visible_rule() -> String {
    let blanks: Vec<String> = text::BLANK_CHARS
        .iter()
        .map(|&c| format!("U+{:04X}", u32::from(c)))
        .collect();
    format!(
        "at least one letter, number, punctuation mark or symbol other than {}",
        blanks.join(", ")
    )
}

fn day_rule() -> String {
    format!(
        "`YYYY-MM-DD` (UTC), a date that exists, from {}-01-01 to 9999-12-31; or `today`",
        crate::mountain_magic::day::FIRST_YEAR
    )
}

fn reserved_rule() -> String {
    let words: Vec<String> = text::RESERVED_NAMES
        .iter()
        .map(|w| format!("`{w}`"))
        .collect();
    format!(
        "none of {}, in any case, nor a name confusable with one",
        words.join(", ")
    )
}

/// Every limit and text rule, by group.
pub const LIMITS: &[Limit] = &[
    // ----- Messages -----------------------------------------------------------------------
    limit(G::Messages, Is(num!(PROTOCOL_VERSION)), "")
        .to(&["hello"])
        .answers(&[UnsupportedVersion])
        .otherwise("closed with 1002")
        .means("the protocol version `hello` announces"),
    limit(G::Messages, AtMost(num!(MAX_CLIENT_MESSAGE_BYTES)), "bytes")
        .to(&["every frame"])
        .answers(&[BadMessage])
        .otherwise("closed with 1009")
        .means("a client message; a server may set less (`--max-message-bytes`)"),
    limit(G::Messages, AtMost(num!(MAX_MESSAGE_DEPTH)), "levels")
        .to(&["every frame"])
        .answers(&[BadMessage])
        .means("maps and arrays nested in one client message, its own map the first level"),
    limit(G::Messages, AtMost(num!(MAX_SERVER_MESSAGE_BYTES)), "bytes").means(
        "a server message the Rust decoder (`decode_server`) takes; answers are paged to stay \
             far below it",
    ),
    // ----- Names and text ---------------------------------------------------------------
    limit(
        G::Text,
        Range(num!(MIN_NAME_CHARS), num!(MAX_NAME_CHARS)),
        "characters",
    )
    .to(NAMED)
    .answers(&[BadName, BadText])
    .means(
        "a player's, table's, league's or league member's name, counted after NFC and trimming \
             ([Names and chat](#names-and-chat))",
    ),
    limit(
        G::Text,
        Range(num!(MIN_NAME_CHARS), num!(MAX_NAME_CHARS)),
        "characters",
    )
    .to(LEAGUE_TEXTS)
    .answers(&[BadText])
    .means(
        "a league deck's name, its sets' names and a card's name in `buy`, by the rules of \
             names",
    ),
    limit(
        G::Text,
        Range(num!(MIN_NAME_CHARS), num!(MAX_CARD_NAME_CHARS)),
        "characters",
    )
    .to(FACES)
    .answers(&[BadCard])
    .means("a Magic Tech card face's `name`, by the rules of names (its faults are `bad_card`)"),
    limit(
        G::Text,
        rule("text::FORBIDDEN_CATEGORIES", forbidden_rule),
        "",
    )
    .to(&[
        "join",
        "create_table",
        "create_league",
        "join_league",
        "chat",
        "call_host",
        "register_deck",
        "buy",
        "take_remedy",
    ])
    .answers(&[BadText])
    .means(
        "names, chat lines, calls for the host, `join.entropy`; also `hello.client` \
             (`bad_message`) and a card face's name (`bad_card`)",
    ),
    limit(G::Text, rule("text::normalize_name", whitespace_rule), "")
        .to(NAMED)
        .answers(&[BadText])
        .means("a tab or a no-break space inside a name is refused"),
    limit(G::Text, rule("text::BLANK_CHARS", visible_rule), "")
        .to(NAMED)
        .answers(&[BadName])
        .means("a name must show something: blanks and combining marks alone are no name"),
    limit(G::Text, rule("text::RESERVED_NAMES", reserved_rule), "")
        .to(&["join", "create_league", "join_league"])
        .answers(&[ReservedName])
        .means("player, league and member names (a table may be named so)"),
    limit(G::Text, AtMost(num!(MAX_ENTROPY_CHARS)), "characters")
        .to(&["join"])
        .answers(&[BadText])
        .means("`join.entropy`: may be empty, kept exactly as sent"),
    limit(G::Text, AtMost(num!(MAX_CHAT_CHARS)), "characters")
        .to(&["chat"])
        .answers(&[ChatTooLong, BadText])
        .means("a chat line after trimming; an empty one is `chat_too_long` too"),
    limit(G::Text, AtMost(num!(MAX_CALL_REASON_CHARS)), "characters")
        .to(&["call_host"])
        .answers(&[ChatTooLong, BadText])
        .means("a call's `reason` after trimming (at least 1)"),
    limit(G::Text, AtMost(num!(MAX_CLIENT_NAME_CHARS)), "characters")
        .to(&["hello"])
        .answers(&[BadMessage])
        .means("`hello.client`: may be empty; no forbidden character"),
    limit(
        G::Text,
        Range(num!(MIN_PASSWORD_CHARS), num!(MAX_PASSWORD_CHARS)),
        "characters",
    )
    .to(&["create_table", "create_league"])
    .answers(&[BadSettings])
    .means("a table's or league's password, of any characters, compared exactly"),
    limit(G::Text, AtMost(num!(MAX_PASSWORD_CHARS)), "characters")
        .to(PASSWORDED)
        .answers(&[WrongPassword])
        .means("a longer password given is wrong without being checked"),
    limit(G::Text, AtMost(num!(MAX_SIGNAL_BYTES)), "bytes")
        .to(&["signal"])
        .answers(&[SignalTooLarge])
        .means("a `signal`'s `payload` ([Cameras](#cameras))"),
    // ----- Table settings ---------------------------------------------------------------
    limit(G::Tables, Range(num!(MIN_SEATS), num!(MAX_SEATS)), "seats")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means(
            "`seats` of a Grand Melee table; more players than seats: `join` answers `table_full`",
        ),
    limit(G::Tables, Exactly(num!(MAGIC_TECH_SEATS)), "seats")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means("`seats` of a Magic Tech table"),
    limit(G::Tables, Exactly(num!(MOUNTAIN_MAGIC_SEATS)), "seat")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means("`seats` of a Mountain Magic table"),
    limit(
        G::Tables,
        Range(num!(MIN_SPELL_RANGE), num!(MAX_SPELL_RANGE)),
        "positions",
    )
    .default(num!(DEFAULT_SPELL_RANGE))
    .to(&["create_table"])
    .answers(&[BadSettings])
    .means("`spell_range` (0: the rules' own; `cr807` allows only 1)"),
    limit(
        G::Tables,
        Range(num!(MIN_STARTING_LIFE), num!(MAX_STARTING_LIFE)),
        "life",
    )
    .default(num!(DEFAULT_STARTING_LIFE))
    .to(&["create_table"])
    .answers(&[BadSettings])
    .means("`starting_life`"),
    limit(G::Tables, AtMost(num!(MAX_CLOCK_SECS)), "seconds")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means(
            "each of `turn_clock_secs` (default 0: no clock), `absence_limit_secs` and \
             `mulligan_clock_secs` (24 hours)",
        ),
    limit(G::Tables, Is(num!(DEFAULT_ABSENCE_LIMIT_SECS)), "seconds")
        .to(&["create_table"])
        .means("`absence_limit_secs` when not given"),
    limit(G::Tables, Is(num!(DEFAULT_MULLIGAN_CLOCK_SECS)), "seconds")
        .to(&["create_table"])
        .means("`mulligan_clock_secs` when not given (0: no clock)"),
    limit(G::Tables, AtMost(num!(MAX_SPECTATORS)), "spectators")
        .default(num!(DEFAULT_MAX_SPECTATORS))
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means("`max_spectators`; past a table's own, `watch` answers `spectators_full`"),
    limit(G::Tables, Is(num!(DEFAULT_HAND_SIZE)), "cards").means(
        "cards in a Grand Melee starting hand before mulligans (a league deck's bonus may add \
             some)",
    ),
    // ----- Grand Melee ------------------------------------------------------------------
    limit(G::GrandMelee, AtMost(num!(MAX_AMOUNT)), "")
        .to(&[
            "attack",
            "deal_damage",
            "change_life",
            "change_poison",
            "attack_roll",
            "counter_roll",
            "ruling",
        ])
        .answers(&[BadAmount])
        .means(
            "damage, poison, a life change (either way), a creature's power, a ruled life or \
             poison in one request",
        ),
    limit(G::GrandMelee, AtMost(num!(MAX_BLOCKERS)), "creatures")
        .to(&["attack_roll"])
        .answers(&[BadAmount])
        .means("opposing creatures an attack roll names"),
    limit(G::GrandMelee, Is(num!(LETHAL_POISON)), "counters")
        .means("poison counters that eliminate a player"),
    // ----- Magic Tech -------------------------------------------------------------------
    limit(
        G::MagicTech,
        Range(
            num!(magic_tech_types::STARTING_HAND),
            num!(magic_tech_types::MAX_DECK),
        ),
        "cards",
    )
    .to(&["magic_tech.declare_deck"])
    .answers(&[BadAmount])
    .means("a declared deck's `size`"),
    limit(G::MagicTech, AtMost(num!(MAX_MAGIC_TECH_AMOUNT)), "")
        .to(&[
            "magic_tech.damage",
            "magic_tech.pay",
            "magic_tech.rule",
            "magic_tech.propose",
        ])
        .answers(&[BadAmount])
        .means(
            "damage one `damage` deals (at least 1), mana one `pay` spends (at least 1), damage \
             counters a correction sets",
        ),
    limit(G::MagicTech, AtMost(num!(MAX_UNSPENT_MANA)), "mana")
        .to(&["magic_tech.tap", "magic_tech.rule", "magic_tech.propose"])
        .answers(&[BadAmount])
        .means(
            "a player's unspent mana: a tap that would pass it, or a correction to more, is \
             refused",
        ),
    limit(G::MagicTech, AtMost(num!(MAX_TAP_MANA)), "mana")
        .to(&["magic_tech.tap"])
        .answers(&[BadAmount])
        .means("mana one tapped card makes"),
    limit(G::MagicTech, AtMost(num!(MAX_BASIC_LAND_MANA)), "mana")
        .to(&["magic_tech.tap"])
        .answers(&[BadAmount])
        .means("mana one tapped basic land makes"),
    limit(G::MagicTech, AtMost(num!(MAX_COUNTERS)), "counters")
        .to(&["magic_tech.pay"])
        .answers(&[BadAmount])
        .means("mana counters on one face-down card"),
    limit(G::MagicTech, AtMost(num!(MAX_LIFE_CHANGE)), "")
        .to(&["magic_tech.life"])
        .answers(&[BadAmount])
        .means("one life change, lost or gained (`delta` from -255 to 255, not 0)"),
    limit(G::MagicTech, AtMost(num!(MAX_CARD_NUMBER)), "")
        .to(&["magic_tech.deploy"])
        .answers(&[CardNumbersUsedUp])
        .means("the last card number given out; once it is, no card can be deployed"),
    limit(
        G::MagicTech,
        AtMost(num!(magic_tech_types::MAX_COLOURED_SYMBOLS)),
        "symbols",
    )
    .to(FACES)
    .answers(&[BadCard])
    .means("coloured symbols in a face's cost, and in its regeneration cost"),
    limit(
        G::MagicTech,
        Is(num!(magic_tech_types::LANDS_PER_TURN)),
        "lands",
    )
    .to(&["magic_tech.deploy"])
    .answers(&[LimitReached])
    .means("lands a player deploys in one turn"),
    limit(
        G::MagicTech,
        Is(num!(magic_tech_types::DEPLOYMENTS_PER_TURN)),
        "cards",
    )
    .to(&["magic_tech.deploy"])
    .answers(&[LimitReached])
    .means("face-down cards a player deploys in one turn"),
    limit(
        G::MagicTech,
        Is(num!(magic_tech_types::FIRST_TURN_DEPLOYMENTS)),
        "card",
    )
    .to(&["magic_tech.deploy"])
    .answers(&[LimitReached])
    .means("face-down cards the first player deploys in the game's first turn"),
    // ----- Mountain Magic ---------------------------------------------------------------
    limit(
        G::MountainMagic,
        rule("mountain_magic::day::FIRST_YEAR", day_rule),
        "",
    )
    .to(&["create_table", "mountain_magic.standings"])
    .answers(&[BadDay])
    .means(
        "a `day`: `create_table`'s `mountain_magic.day` (only today's is climbed: \
             `bad_settings` for another), and the standings' `day`",
    ),
    limit(G::MountainMagic, Exactly(num!(pool::DECK_SIZE)), "cards")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means(
            "cards in a deck file, `create_table`'s `mountain_magic.deck` (each line a name and a \
             count)",
        ),
    limit(G::MountainMagic, Exactly(num!(pool::LANDS)), "lands")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means("lands in a deck"),
    limit(G::MountainMagic, Is(num!(pool::LANDS_PER_COLOUR)), "lands")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means("lands making each colour, at least (a multiland stands for either of its colours)"),
    limit(
        G::MountainMagic,
        AtMost(num!(pool::CREATURES_PER_COLOUR)),
        "cards",
    )
    .to(&["create_table"])
    .answers(&[BadSettings])
    .means("creatures per colour (a card of two colours counts for either)"),
    limit(
        G::MountainMagic,
        AtMost(num!(pool::SORCERIES_PER_COLOUR)),
        "cards",
    )
    .to(&["create_table"])
    .answers(&[BadSettings])
    .means("sorceries per colour"),
    limit(
        G::MountainMagic,
        AtMost(num!(pool::ENCHANTMENTS_PER_COLOUR)),
        "cards",
    )
    .to(&["create_table"])
    .answers(&[BadSettings])
    .means("enchantments per colour"),
    limit(G::MountainMagic, AtMost(num!(pool::FAST_EFFECTS)), "cards")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means("fast effects, of any colours"),
    limit(G::MountainMagic, AtMost(num!(pool::MAX_ARTIFACTS)), "cards")
        .to(&["create_table"])
        .answers(&[BadSettings])
        .means("artifacts, each standing in for one non-land card"),
    // ----- Leagues ----------------------------------------------------------------------
    limit(G::Leagues, AtMost(num!(MAX_LEAGUE_MEMBERS)), "members")
        .to(&["join_league"])
        .answers(&[LeagueFull])
        .means("members of one league"),
    limit(G::Leagues, AtMost(num!(league::MAX_DECK_CARDS)), "cards")
        .to(&["buy"])
        .answers(&[DeckFull])
        .means("cards in a league deck after a purchase"),
    limit(
        G::Leagues,
        AtMost(num!(league::MAX_CARDS_PER_PURCHASE)),
        "cards",
    )
    .to(&["buy"])
    .answers(&[BadPurchase])
    .means("cards one purchase buys (at least 1; basic lands in pairs)"),
    limit(G::Leagues, AtMost(num!(league::MAX_EXPANSION_SETS)), "sets")
        .to(&["buy"])
        .answers(&[PurchaseLimit])
        .means("expansion sets of one deck"),
    limit(G::Leagues, AtMost(num!(league::MAX_DUPLICATES)), "copies")
        .to(&["buy"])
        .answers(&[PurchaseLimit])
        .means("the most copies of one card the duplicates option allows"),
    limit(
        G::Leagues,
        AtMost(num!(league::MAX_SIDEBOARD_CARDS)),
        "cards",
    )
    .to(&["buy"])
    .answers(&[PurchaseLimit])
    .means("cards in a sideboard"),
    limit(G::Leagues, Is(num!(league::STREAK_LOSSES)), "losses")
        .to(&["take_remedy"])
        .answers(&[NoRemedy])
        .means("losses in a row that open the losing-streak remedy"),
    limit(G::Leagues, Is(num!(league::STREAK_GAMES)), "games")
        .to(&["take_remedy"])
        .answers(&[NoRemedy])
        .means("the remedy is open within a deck's first games only: this many"),
    // ----- Pages ------------------------------------------------------------------------
    limit(G::Pages, AtMost(num!(MAX_PAGE_ITEMS)), "items")
        .default(num!(DEFAULT_PAGE_ITEMS))
        .to(PAGED)
        .means(
            "a page's `limit`: 0 counts as 1, more as the most ([Paged answers](#paged-answers))",
        ),
    limit(G::Pages, AtMost(num!(MAX_PAGE_BYTES)), "bytes")
        .to(&[
            "list_tables",
            "list_replays",
            "get_replay",
            "get_events",
            "list_leagues",
            "get_league",
        ])
        .means(
            "items in one page, each counted by its encoded size; a page holds at least one item",
        ),
    limit(G::Pages, Is(num!(MIN_PAGE_BYTES)), "bytes")
        .to(&[
            "list_tables",
            "list_replays",
            "get_replay",
            "get_events",
            "list_leagues",
            "get_league",
        ])
        .means("a server with small outgoing queues never cuts pages below this"),
    // ----- Intervals and rates ----------------------------------------------------------
    limit(G::Pacing, Is(num!(CALL_HOST_INTERVAL_SECS)), "seconds")
        .to(&["call_host"])
        .answers(&[RateLimited])
        .means(
            "between two calls of one player (a seat given up and taken again from the same \
             address keeps the interval)",
        ),
    limit(G::Pacing, Is(num!(ADJOURN_INTERVAL_SECS)), "seconds")
        .to(&["adjourn"])
        .answers(&[RateLimited])
        .means("between two adjournments of one table"),
    limit(G::Pacing, Is(num!(SIGNAL_BURST)), "signals")
        .to(&["signal"])
        .answers(&[RateLimited])
        .means(
            "signals one connection sends at once, from their own bucket (not the request limit)",
        ),
    limit(G::Pacing, Is(num!(SIGNALS_PER_SECOND)), "per second")
        .to(&["signal"])
        .answers(&[RateLimited])
        .means("signals one connection sends over time; past it the signal is relayed to nobody"),
    limit(G::Pacing, Is(num!(SIGNAL_BYTES_RECEIVED_BURST)), "bytes")
        .to(&["signal"])
        .answers(&[RateLimited])
        .means(
            "signal bytes one connection receives at once, from all its links (its senders are \
             refused)",
        ),
    limit(
        G::Pacing,
        Is(num!(SIGNAL_BYTES_RECEIVED_PER_SECOND)),
        "bytes per second",
    )
    .to(&["signal"])
    .answers(&[RateLimited])
    .means("signal bytes one connection receives over time"),
    limit(G::Pacing, Is(num!(session::TABLE_CHAT_BURST)), "lines")
        .to(&["chat"])
        .answers(&[RateLimited])
        .means(
            "chat lines one table takes at once from all its members (over time: \
             `--table-chat-per-minute`)",
        ),
    // ----- The server's own -------------------------------------------------------------
    limit(G::Server, AtMost(num!(MAX_CLIENT_MESSAGE_BYTES)), "bytes")
        .flag("--max-message-bytes")
        .to(&["every frame"])
        .answers(&[BadMessage])
        .otherwise("closed with 1009")
        .means("a client message on this server (never more than `MAX_CLIENT_MESSAGE_BYTES`)"),
    limit(G::Server, Is(num!(server_limits::RATE_LIMIT)), "per second")
        .flag("--rate-limit")
        .to(&["every frame"])
        .answers(&[RateLimited])
        .means(
            "frames one connection sends on average: requests, undecodable and text messages, \
             pings alike; the request is not carried out",
        ),
    limit(G::Server, Is(num!(server_limits::RATE_BURST)), "frames")
        .flag("--rate-burst")
        .to(&["every frame"])
        .answers(&[RateLimited])
        .means("frames one connection sends at once"),
    limit(G::Server, Is(num!(server_limits::FLOOD_STRIKES)), "frames")
        .flag("--flood-strikes")
        .to(&["every frame"])
        .otherwise("closed with 1008")
        .means("rate-limited frames after which a connection is closed for flooding"),
    limit(
        G::Server,
        Is(num!(server_limits::FLOOD_STRIKES_FORGIVEN_PER_SECOND)),
        "per second",
    )
    .to(&["every frame"])
    .means("flood strikes forgiven over time"),
    limit(
        G::Server,
        Is(num!(server_limits::CHAT_PER_MINUTE)),
        "per minute",
    )
    .flag("--chat-per-minute")
    .to(&["chat"])
    .answers(&[RateLimited])
    .means("chat lines one connection sends over time"),
    limit(G::Server, Is(num!(server_limits::CHAT_BURST)), "lines")
        .to(&["chat"])
        .answers(&[RateLimited])
        .means("chat lines one connection sends at once"),
    limit(
        G::Server,
        Is(num!(server_limits::TABLE_CHAT_PER_MINUTE)),
        "per minute",
    )
    .flag("--table-chat-per-minute")
    .to(&["chat"])
    .answers(&[RateLimited])
    .means("chat lines one table takes from all its members together (0: no table budget)"),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_CONNECTIONS)),
        "connections",
    )
    .flag("--max-connections")
    .to(&["every connection"])
    .otherwise("HTTP 503")
    .means("connections in all, WebSocket and HTTP"),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_CONNECTIONS_PER_IP)),
        "connections",
    )
    .flag("--max-connections-per-ip")
    .to(&["every connection"])
    .otherwise("HTTP 503")
    .means("connections from one client address"),
    limit(
        G::Server,
        Is(num!(server_limits::HANDSHAKE_TIMEOUT_SECS)),
        "seconds",
    )
    .flag("--handshake-timeout-secs")
    .to(&["the handshake"])
    .otherwise("the socket is closed")
    .means("to complete the HTTP/WebSocket handshake"),
    limit(
        G::Server,
        Is(num!(server_limits::HTTP_CONNECTION_SECS)),
        "seconds",
    )
    .to(&["every connection"])
    .otherwise("the connection is closed")
    .means(
        "a connection may stay in plain HTTP (pages kept alive) before it upgrades to a \
             WebSocket",
    ),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_HTTP_HEAD_BYTES)),
        "bytes",
    )
    .to(&["the handshake"])
    .otherwise("HTTP 431 or 400")
    .means("an HTTP request's or handshake's request line and headers"),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_HTTP_HEADERS)),
        "headers",
    )
    .to(&["the handshake"])
    .otherwise("HTTP 431 or 400")
    .means("headers of an HTTP request or handshake"),
    limit(
        G::Server,
        Is(num!(server_limits::PING_INTERVAL_SECS)),
        "seconds",
    )
    .flag("--ping-interval-secs")
    .to(&["every connection"])
    .means("between the server's pings"),
    limit(
        G::Server,
        Is(num!(server_limits::IDLE_TIMEOUT_SECS)),
        "seconds",
    )
    .flag("--idle-timeout-secs")
    .to(&["every connection"])
    .otherwise("closed with 1008")
    .means("of silence (no frame, pongs included) before a connection is closed"),
    limit(
        G::Server,
        AtMost(num!(server_limits::OUTGOING_QUEUE)),
        "frames",
    )
    .flag("--outgoing-queue")
    .to(&["every connection"])
    .otherwise("closed with 1008, seat kept")
    .means("frames queued for one client: past it, it is a slow reader"),
    limit(
        G::Server,
        AtMost(num!(server_limits::OUTGOING_QUEUE_BYTES)),
        "bytes",
    )
    .flag("--outgoing-queue-bytes")
    .to(&["every connection"])
    .otherwise("closed with 1008, seat kept")
    .means("bytes queued for one client"),
    limit(G::Server, Is(num!(server_limits::PAGE_SHARE_OF_QUEUE)), "")
        .to(&[
            "list_tables",
            "list_replays",
            "get_replay",
            "get_events",
            "list_leagues",
            "get_league",
        ])
        .means(
            "a page holds at most 1/this of `--outgoing-queue-bytes`, when that is less than \
             `MAX_PAGE_BYTES`",
        ),
    limit(
        G::Server,
        Is(num!(server_limits::GRACE_PERIOD_SECS)),
        "seconds",
    )
    .flag("--grace-period-secs")
    .means(
        "a disconnected player's lobby seat is given up, his running turn skipped, his \
             mulligan decision taken as `keep`; an absent host hands the role on; an empty \
             finished table closes",
    ),
    limit(G::Server, AtMost(num!(server_limits::MAX_TABLES)), "tables")
        .flag("--max-tables")
        .to(&["create_table"])
        .answers(&[ServerBusy])
        .means("tables on the server"),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_TABLES_PER_IP)),
        "tables",
    )
    .flag("--max-tables-per-ip")
    .to(&["create_table"])
    .answers(&[TooManyTables])
    .means("open tables created from one client address (0: no limit)"),
    limit(
        G::Server,
        Is(num!(server_limits::TABLE_CREATIONS_PER_MINUTE)),
        "per minute",
    )
    .flag("--table-creations-per-minute")
    .to(&["create_table", "create_league"])
    .answers(&[TooManyTables])
    .means("tables and leagues one client address creates, in bursts of as many"),
    limit(
        G::Server,
        Is(num!(server_limits::UNJOINED_TABLE_SECS)),
        "seconds",
    )
    .flag("--unjoined-table-secs")
    .to(&["join"])
    .answers(&[UnknownTable])
    .means(
        "a table nobody ever sat at (not a league table) closes after this, and stops counting \
             against the caps above",
    ),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_SPECTATORS_PER_IP)),
        "spectators",
    )
    .flag("--max-spectators-per-ip")
    .to(&["watch"])
    .answers(&[SpectatorsFull])
    .means("spectators from one client address across all tables (0: no limit)"),
    limit(
        G::Server,
        Is(num!(server_limits::WATCHES_PER_MINUTE)),
        "per minute",
    )
    .flag("--watches-per-minute")
    .to(&["watch"])
    .answers(&[RateLimited])
    .means("starts of watching from one client address"),
    limit(G::Server, Is(num!(server_limits::WATCH_BURST)), "watches")
        .to(&["watch"])
        .answers(&[RateLimited])
        .means("starts of watching from one client address at once"),
    limit(
        G::Server,
        Is(num!(server_limits::WRONG_PASSWORDS_PER_MINUTE)),
        "per minute",
    )
    .flag("--wrong-passwords-per-minute")
    .to(&[
        "join",
        "watch",
        "get_replay",
        "join_league",
        "register_deck",
        "buy",
        "take_remedy",
        "create_table",
    ])
    .answers(&[RateLimited])
    .means(
        "wrong passwords (at a league also wrong member tokens and organiser secrets) per \
             client address and table or league; past it even the right one is refused unchecked \
             until it refills",
    ),
    limit(
        G::Server,
        Is(num!(server_limits::WRONG_PASSWORD_BURST)),
        "guesses",
    )
    .to(&[
        "join",
        "watch",
        "get_replay",
        "join_league",
        "register_deck",
        "buy",
        "take_remedy",
        "create_table",
    ])
    .answers(&[RateLimited])
    .means("wrong passwords per client address and table or league at once"),
    limit(
        G::Server,
        Is(num!(server_limits::PASSWORD_CHECKS_PER_MINUTE)),
        "per minute",
    )
    .flag("--password-checks-per-minute")
    .to(PASSWORDED)
    .answers(&[RateLimited])
    .means(
        "password checks, right or wrong, per client address, tables and leagues together, in \
             bursts of as many",
    ),
    limit(
        G::Server,
        Is(num!(server_limits::PASSWORD_CHECKS_QUEUED_PER_THREAD)),
        "checks",
    )
    .to(&[
        "join",
        "watch",
        "get_replay",
        "join_league",
        "create_table",
        "create_league",
    ])
    .answers(&[ServerBusy])
    .means(
        "password hashes waiting per hashing thread (one thread per core), all clients \
             together",
    ),
    limit(
        G::Server,
        Is(num!(server_limits::OPENED_REPLAYS)),
        "replays",
    )
    .to(&["get_replay"])
    .answers(&[WrongPassword])
    .means(
        "password-protected replays one connection pages through without the password again; \
             one more forgets the oldest",
    ),
    limit(
        G::Server,
        Is(num!(server_limits::LEAGUE_JOINS_PER_MINUTE)),
        "per minute",
    )
    .flag("--league-joins-per-minute")
    .to(&["join_league"])
    .answers(&[RateLimited])
    .means("league joins per client address, in bursts of as many"),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_LEAGUE_MEMBERS_PER_IP)),
        "members",
    )
    .flag("--max-league-members-per-ip")
    .to(&["join_league"])
    .answers(&[RateLimited])
    .means("members one client address adds to one league, with a message saying so"),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_ADJOURNED_PER_IP)),
        "games",
    )
    .flag("--max-adjourned-per-ip")
    .to(&["adjourn"])
    .answers(&[TooManyTables])
    .means("adjourned games one client address holds as host"),
    limit(
        G::Server,
        Is(num!(server_limits::ADJOURNED_EXPIRY_DAYS)),
        "days",
    )
    .flag("--adjourned-expiry-days")
    .means("an adjourned game not resumed within this ends as abandoned (0: it waits for ever)"),
    limit(
        G::Server,
        Is(num!(server_limits::REPLAY_RETENTION_DAYS)),
        "days",
    )
    .flag("--replay-retention-days")
    .to(&["get_replay"])
    .answers(&[UnknownReplay])
    .means("a finished game is kept as a replay this long (0: forever)"),
    limit(
        G::Server,
        Is(num!(server_limits::SIGNAL_BYTES_PER_SECOND)),
        "bytes per second",
    )
    .flag("--signal-bytes-per-second")
    .to(&["signal"])
    .answers(&[RateLimited])
    .means("signal bytes one client address sends"),
    limit(
        G::Server,
        Is(num!(server_limits::SIGNAL_BYTES_BURST_SECS)),
        "seconds' worth",
    )
    .to(&["signal"])
    .answers(&[RateLimited])
    .means("signal bytes one client address sends at once"),
    limit(
        G::Server,
        Is(num!(server_limits::TURN_CREDENTIALS_PER_MINUTE)),
        "per minute",
    )
    .flag("--turn-credentials-per-minute")
    .means(
        "TURN credentials one client address is given; past it `ice_servers` carries no TURN \
             server",
    ),
    limit(
        G::Server,
        Is(num!(server_limits::QR_CODES_PER_MINUTE)),
        "per minute",
    )
    .flag("--qr-codes-per-minute")
    .to(&["/qr.svg"])
    .otherwise("HTTP 429")
    .means(
        "QR codes one client address has drawn (a table's own link is cached and never \
             refused)",
    ),
    limit(G::Server, Is(num!(server_limits::QR_CODE_BURST)), "codes")
        .to(&["/qr.svg"])
        .otherwise("HTTP 429")
        .means("QR codes one client address has drawn at once"),
    limit(
        G::Server,
        Is(num!(server_limits::QR_CODES_PER_SECOND)),
        "per second",
    )
    .to(&["/qr.svg"])
    .otherwise("HTTP 503")
    .means("QR codes the server draws for all clients together, in bursts of twice as many"),
    limit(
        G::Server,
        AtMost(num!(server_limits::MAX_QR_TEXT_BYTES)),
        "bytes",
    )
    .to(&["/qr.svg"])
    .otherwise("HTTP 400")
    .means("the `http(s)://` link a QR code is drawn of"),
    limit(G::Server, Is(num!(server_limits::IPV4_PREFIX)), "bits")
        .flag("--ipv4-prefix")
        .means("leading bits of an IPv4 address that make one client address"),
    limit(G::Server, Is(num!(server_limits::IPV6_PREFIX)), "bits")
        .flag("--ipv6-prefix")
        .means("leading bits of an IPv6 address that make one client address (a home's /64)"),
];

/// A number as PROTOCOL.md writes it.
fn number(value: f64) -> String {
    format!("{value}")
}

/// A number with its unit, in KiB or MiB too when it is bytes.
fn amount(value: f64, unit: &str) -> String {
    let mut out = number(value);
    if !unit.is_empty() {
        out.push(' ');
        out.push_str(unit);
    }
    if unit.starts_with("bytes") && value >= 1024.0 && value % 1024.0 == 0.0 {
        let (size, name) = if value % (1024.0 * 1024.0) == 0.0 {
            (value / (1024.0 * 1024.0), "MiB")
        } else {
            (value / 1024.0, "KiB")
        };
        out.push_str(&format!(" ({} {name})", number(size)));
    }
    out
}

impl Limit {
    /// The first column: the constants, or the flag.
    fn label(&self) -> String {
        if let Some(flag) = self.flag {
            return format!("`{flag}`");
        }
        match self.value {
            Value::Range(min, max) => format!("`{}`–`{}`", min.name, max.name),
            Value::Rule { name, .. } => format!("`{name}`"),
            Value::AtMost(n) | Value::Exactly(n) | Value::Is(n) => format!("`{}`", n.name),
        }
    }

    /// The value column.
    fn shown_value(&self) -> String {
        let mut out = match self.value {
            Value::AtMost(n) => format!("at most {}", amount(n.value, self.unit)),
            Value::Range(min, max) => {
                format!("{}–{}", number(min.value), amount(max.value, self.unit))
            }
            Value::Exactly(n) => format!("exactly {}", amount(n.value, self.unit)),
            Value::Is(n) => amount(n.value, self.unit),
            Value::Rule { text, .. } => text(),
        };
        if let Some(default) = self.default {
            out.push_str(&format!(
                ", default {} (`{}`)",
                number(default.value),
                default.name
            ));
        }
        if self.flag.is_some() {
            out.push_str(" by default");
        }
        out
    }

    /// The column of what applies it.
    fn shown_scope(&self) -> String {
        if self.applies_to.is_empty() {
            return "—".to_owned();
        }
        self.applies_to
            .iter()
            .map(|&a| {
                if SCOPES.contains(&a) && !a.starts_with('/') {
                    a.to_owned()
                } else {
                    format!("`{a}`")
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The column of what happens past it.
    fn shown_answer(&self) -> String {
        let codes: Vec<String> = self
            .answers
            .iter()
            .map(|code| format!("`{}`", code.name()))
            .collect();
        let parts: Vec<String> = [codes.join(", "), self.otherwise.to_owned()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect();
        if parts.is_empty() {
            "—".to_owned()
        } else {
            parts.join("; ")
        }
    }
}

/// The block between `<!-- generated: limits -->` and `<!-- end generated: limits -->` in
/// PROTOCOL.md's section "Limits": one table per group.
pub fn render_markdown() -> String {
    let mut out = String::new();
    for group in Group::ALL {
        let first = if group == Group::Server {
            "limit or flag"
        } else {
            "limit"
        };
        out.push_str(&format!("**{}**\n\n", group.title()));
        out.push_str(&format!(
            "| {first} | value | applies to | past it | what it bounds |\n\
             | --- | --- | --- | --- | --- |\n"
        ));
        for limit in LIMITS.iter().filter(|l| l.group == group) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                limit.label(),
                limit.shown_value(),
                limit.shown_scope(),
                limit.shown_answer(),
                limit.meaning
            ));
        }
        out.push('\n');
    }
    out.pop();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_applies_to_requests_that_declare_its_codes() {
        for limit in LIMITS {
            for &scope in limit.applies_to {
                let request = crate::ClientMessage::NAMES.contains(&scope);
                assert!(
                    request || SCOPES.contains(&scope),
                    "{}: {scope} is neither a request nor a scope",
                    limit.label()
                );
                for &code in limit.answers {
                    let declared = if request {
                        crate::errors_of::declares(Some(scope), code)
                    } else {
                        crate::errors_of::declares(None, code)
                    };
                    assert!(
                        declared,
                        "{}: errors_of does not declare that {scope} answers {}",
                        limit.label(),
                        code.name()
                    );
                }
            }
            assert!(!limit.meaning.is_empty(), "{}: no meaning", limit.label());
        }
    }

    #[test]
    fn groups_come_in_order_and_none_is_empty() {
        let groups: Vec<Group> = LIMITS.iter().map(|l| l.group).collect();
        assert!(groups.windows(2).all(|w| w[0] <= w[1]), "{groups:?}");
        for group in Group::ALL {
            assert!(groups.contains(&group), "{group:?} has no limit");
        }
    }

    #[test]
    fn a_flag_is_named_once_and_only_on_the_servers_limits() {
        let flags: Vec<&str> = LIMITS.iter().filter_map(|l| l.flag).collect();
        for (k, flag) in flags.iter().enumerate() {
            assert!(flag.starts_with("--"), "{flag}");
            assert!(!flags[..k].contains(flag), "{flag} twice");
        }
        for limit in LIMITS.iter().filter(|l| l.flag.is_some()) {
            assert_eq!(limit.group, Group::Server, "{}", limit.label());
        }
    }

    #[test]
    fn the_macro_takes_name_and_value_from_the_constant() {
        let n = num!(MAX_NAME_CHARS);
        assert_eq!(n.name, "MAX_NAME_CHARS");
        assert_eq!(n.value, MAX_NAME_CHARS as f64);
        let n = num!(magic_tech_types::MAX_DECK);
        assert_eq!(n.name, "magic_tech_types::MAX_DECK");
        assert_eq!(n.value, f64::from(magic_tech_types::MAX_DECK));
    }

    #[test]
    fn values_are_shown_with_their_units() {
        assert_eq!(amount(16384.0, "bytes"), "16384 bytes (16 KiB)");
        assert_eq!(amount(1048576.0, "bytes"), "1048576 bytes (1 MiB)");
        assert_eq!(amount(12000.0, "bytes"), "12000 bytes");
        assert_eq!(amount(20.0, "per second"), "20 per second");
        assert_eq!(amount(0.5, ""), "0.5");
        let rendered = render_markdown();
        assert!(rendered.contains(
            "| `MIN_NAME_CHARS`–`MAX_NAME_CHARS` | 1–32 characters | `join`, `create_table`, \
             `create_league`, `join_league` | `bad_name`, `bad_text` |"
        ));
        assert!(rendered.contains("| `--max-tables` | at most 2000 tables by default |"));
    }
}
