//! The limits table (`protocol/src/limits_of.rs`) names every limit, and the code keeps each at
//! the value the table shows: every limit constant is in the table, and the checks of the
//! protocol crate are probed at the boundary with the table's own values (one under or at the
//! value passes, one past it is refused).
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::game::{Game, GameKind};
use grand_melee_protocol::limits_of::{LIMITS, Value};
use grand_melee_protocol::magic_tech::MagicTech;
use grand_melee_protocol::magic_tech_types::MagicTechCommand;
use grand_melee_protocol::rules::{Actor, Command, SpellRange, TableConfig};
use grand_melee_protocol::text::{self, TextError};
use grand_melee_protocol::{
    ClientMessage, DecodeError, ErrorCode, Settings, decode_client, encode_client,
};

/// The value the table gives the constant `name` (as the table spells it), as an integer.
fn value(name: &str) -> usize {
    let found = LIMITS
        .iter()
        .flat_map(|limit| limit.value.nums().into_iter().chain(limit.default))
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("the limits table does not name {name}"));
    assert!(found.value >= 0.0 && found.value.fract() == 0.0, "{name}");
    found.value as usize
}

/// Every name the table gives a constant, by its last path segment.
fn named() -> Vec<String> {
    LIMITS
        .iter()
        .flat_map(|limit| limit.value.nums().into_iter().chain(limit.default))
        .map(|n| n.name.rsplit("::").next().unwrap().to_owned())
        .collect()
}

/// Constants of `limits.rs` that are no limit a client meets, and why.
const NOT_A_CLIENT_LIMIT: &[(&str, &str)] = &[
    (
        "MIN_HAND_SIZE",
        "no request sets a hand size: only a journaled table's settings are checked",
    ),
    (
        "MAX_HAND_SIZE",
        "no request sets a hand size: only a journaled table's settings are checked",
    ),
];

fn source(path: &str) -> String {
    std::fs::read_to_string(format!("{}/src/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The names of the `pub const`s in `text` matching `keep`.
fn constants(text: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("pub const "))
        .filter_map(|rest| rest.split(':').next())
        .map(str::to_owned)
        .filter(|name| keep(name))
        .collect()
}

#[test]
fn every_limit_constant_is_in_the_table() {
    let named = named();
    let limits = source("limits.rs");
    // Everything before the close codes, which are no limits.
    let limits = &limits[..limits.find("pub mod close").unwrap()];
    let mut wanted = constants(limits, |_| true);
    // A limit kept next to its rules, anywhere in the crate, is a limit too.
    for path in [
        "magic_tech_types.rs",
        "league.rs",
        "mountain_magic/pool.rs",
        "session.rs",
    ] {
        wanted.extend(constants(&source(path), |name| {
            name.starts_with("MAX_") || name.starts_with("MIN_") || name.ends_with("_BURST")
        }));
    }
    assert!(wanted.len() > 60, "{wanted:?}");
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|name| !named.contains(name))
        .filter(|name| !NOT_A_CLIENT_LIMIT.iter().any(|(n, _)| n == name))
        .collect();
    assert!(
        missing.is_empty(),
        "constants missing from limits_of::LIMITS: {missing:?}"
    );
    for (name, _) in NOT_A_CLIENT_LIMIT {
        assert!(wanted.iter().any(|w| w == name), "{name} is no constant");
        assert!(!named.iter().any(|n| n == name), "{name} is in the table");
    }
}

#[test]
fn every_rule_is_written_out() {
    let rules: Vec<String> = LIMITS
        .iter()
        .filter_map(|limit| match limit.value {
            Value::Rule { text, .. } => Some(text()),
            _ => None,
        })
        .collect();
    assert!(rules.iter().any(|r| r.contains("Cc, Cf, Zl, Zp, Co, Cn")));
    assert!(rules.iter().any(|r| r.contains("U+3164")));
    assert!(rules.iter().any(|r| r.contains("`judge`")));
}

#[test]
fn names_are_probed_at_their_bounds() {
    let (min, max) = (value("MIN_NAME_CHARS"), value("MAX_NAME_CHARS"));
    assert_eq!(min, 1);
    assert!(text::normalize_name(&"é".repeat(max)).is_ok());
    assert_eq!(
        text::normalize_name(&"é".repeat(max + 1)),
        Err(TextError::TooLong)
    );
    assert_eq!(text::normalize_name(" "), Err(TextError::Empty));
    let card = value("MAX_CARD_NAME_CHARS");
    assert!(text::normalize_card_name(&"x".repeat(card)).is_ok());
    assert_eq!(
        text::normalize_card_name(&"x".repeat(card + 1)),
        Err(TextError::TooLong)
    );
    let chat = value("MAX_CHAT_CHARS");
    assert!(text::normalize_chat(&"c".repeat(chat)).is_ok());
    assert_eq!(
        text::normalize_chat(&"c".repeat(chat + 1)),
        Err(TextError::TooLong)
    );
    let entropy = value("MAX_ENTROPY_CHARS");
    assert!(text::check_entropy(&"e".repeat(entropy)).is_ok());
    assert_eq!(
        text::check_entropy(&"e".repeat(entropy + 1)),
        Err(TextError::TooLong)
    );
    let client = value("MAX_CLIENT_NAME_CHARS");
    assert!(text::check_client_name(&"c".repeat(client)).is_ok());
    assert_eq!(
        text::check_client_name(&"c".repeat(client + 1)),
        Err(TextError::TooLong)
    );
}

#[test]
fn table_settings_are_probed_at_their_bounds() {
    let config = |seats: usize, life: usize| TableConfig {
        seats: u8::try_from(seats).unwrap(),
        starting_life: i32::try_from(life).unwrap(),
        ..TableConfig::default()
    };
    let (seats_min, seats_max) = (value("MIN_SEATS"), value("MAX_SEATS"));
    let (life_min, life_max) = (value("MIN_STARTING_LIFE"), value("MAX_STARTING_LIFE"));
    assert!(config(seats_min, life_min).validate().is_ok());
    assert!(config(seats_max, life_max).validate().is_ok());
    assert!(config(seats_min - 1, 20).validate().is_err());
    assert!(config(seats_max + 1, 20).validate().is_err());
    assert!(config(4, life_min - 1).validate().is_err());
    assert!(config(4, life_max + 1).validate().is_err());
    let solitaire = value("MOUNTAIN_MAGIC_SEATS");
    assert!(config(solitaire, 20).validate_solitaire().is_ok());
    assert!(config(solitaire + 1, 20).validate_solitaire().is_err());
    let (range_min, range_max) = (value("MIN_SPELL_RANGE"), value("MAX_SPELL_RANGE"));
    let range = |r: usize| SpellRange::new(u8::try_from(r).unwrap());
    assert!(range(range_min).is_ok() && range(range_max).is_ok());
    assert!(range(range_min - 1).is_err() && range(range_max + 1).is_err());
    assert_eq!(
        SpellRange::default().get(),
        value("DEFAULT_SPELL_RANGE"),
        "the default range"
    );
}

#[test]
fn a_magic_tech_table_has_the_tables_seats_and_decks_within_its_sizes() {
    let seats = value("MAGIC_TECH_SEATS");
    let settings = |seats: usize| Settings {
        seats: u8::try_from(seats).unwrap(),
        game: GameKind::MagicTech,
        ..Settings::default()
    };
    let secret = DiceSecret::from_seed(5);
    assert_eq!(
        MagicTech::create(&settings(seats + 1), secret).err(),
        Some(ErrorCode::BadSettings)
    );
    let mut game = MagicTech::create(&settings(seats), secret).unwrap();
    game.handle(Actor::Host, Command::join("Ann")).unwrap();
    let (min, max) = (
        value("magic_tech_types::STARTING_HAND"),
        value("magic_tech_types::MAX_DECK"),
    );
    let mut declare = |size: usize| {
        let size = u8::try_from(size).unwrap();
        game.handle(
            Actor::Player(0),
            Command::MagicTech(MagicTechCommand::DeclareDeck { size }),
        )
        .map(|_| ())
    };
    assert_eq!(declare(min - 1), Err(ErrorCode::BadAmount));
    assert_eq!(declare(max + 1), Err(ErrorCode::BadAmount));
    assert_eq!(declare(min), Ok(()));
    assert_eq!(declare(max), Ok(()));
}

/// A `snapshot` request whose unknown field `x` nests `depth` arrays.
fn nested(depth: usize) -> Vec<u8> {
    let mut bytes = vec![0x83];
    for (key, value) in [("type", &b"\xa8snapshot"[..]), ("id", &[0x01][..])] {
        bytes.push(0xa0 | u8::try_from(key.len()).unwrap());
        bytes.extend_from_slice(key.as_bytes());
        bytes.extend_from_slice(value);
    }
    bytes.extend_from_slice(&[0xa1, b'x']);
    bytes.extend(std::iter::repeat_n(0x91, depth - 1));
    bytes.push(0x90);
    bytes
}

#[test]
fn client_messages_are_probed_at_their_size_and_depth() {
    // The message's own map is the first level: its field may nest one less.
    let depth = value("MAX_MESSAGE_DEPTH");
    assert!(matches!(
        decode_client(&nested(depth - 1)),
        Ok(ClientMessage::Snapshot { .. })
    ));
    assert!(matches!(
        decode_client(&nested(depth)),
        Err(DecodeError::Malformed(m)) if m.contains("depth")
    ));
    // A chat line padded to exactly the largest message, then one byte more.
    let max = value("MAX_CLIENT_MESSAGE_BYTES");
    let chat = |len: usize| ClientMessage::Chat {
        id: 1,
        text: "a".repeat(len),
    };
    let empty = encode_client(&chat(0)).len();
    // The string's length prefix grows from 1 to 3 bytes past 31 characters, and to 5 past
    // 65,535: the largest message is well within 3.
    let fits = encode_client(&chat(max - empty - 2));
    assert_eq!(fits.len(), max);
    assert!(decode_client(&fits).is_ok());
    let over = encode_client(&chat(max - empty - 1));
    assert_eq!(over.len(), max + 1);
    assert!(matches!(
        decode_client(&over),
        Err(DecodeError::TooLarge { .. })
    ));
}

/// The char boundary at or before `at`.
fn boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The number written right next to a constant's name in prose, if any: `N (`NAME`` or
/// `N unit (`NAME`` before it (at most a few words between), `` `NAME` = N`` or `` `NAME`, N``
/// after it. Thousands may be grouped with spaces or commas; KiB and MiB are counted out.
fn number_beside(before: &str, after: &str) -> Option<f64> {
    fn parse(text: &str) -> Option<f64> {
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        digits.parse().ok()
    }
    fn unit(text: &str) -> f64 {
        match text.trim_start() {
            t if t.starts_with("KiB") => 1024.0,
            t if t.starts_with("MiB") => 1024.0 * 1024.0,
            _ => 1.0,
        }
    }
    /// The number at the end of `text` (digits, with spaces or commas between groups of three).
    fn trailing_number(text: &str) -> Option<(f64, usize)> {
        let bytes = text.as_bytes();
        let mut start = bytes.len();
        while start > 0 {
            let c = bytes[start - 1];
            let grouped = (c == b' ' || c == b',')
                && start >= 5
                && bytes[start..].len() >= 3
                && bytes[start..start + 3].iter().all(u8::is_ascii_digit)
                && bytes[start - 2].is_ascii_digit();
            if c.is_ascii_digit() || grouped {
                start -= 1;
            } else {
                break;
            }
        }
        (start < bytes.len()).then(|| (parse(&text[start..]).unwrap(), start))
    }
    if let Some(rest) = after
        .strip_prefix(" = ")
        .or_else(|| after.strip_prefix(", "))
    {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ' ' || c == ','))
            .unwrap_or(rest.len());
        let number = rest[..end].trim_end_matches([' ', ',']);
        if let Some(value) = parse(number).filter(|_| !number.is_empty()) {
            return Some(value * unit(&rest[number.len()..]));
        }
    }
    let before = before.trim_end_matches(['(', ' ', '\n']);
    // At most a unit or a few words between the number and the name, in one clause.
    let window = &before[boundary(before, before.len().saturating_sub(16))..];
    let last_digit = window.rfind(|c: char| c.is_ascii_digit())?;
    let between = &window[last_digit + 1..];
    if between.contains(['`', ';', '.', ':', ')']) {
        return None;
    }
    let (value, _) = trailing_number(&window[..=last_digit])?;
    Some(value * unit(between))
}

#[test]
fn protocol_md_writes_each_limit_beside_its_name_with_the_tables_value() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../PROTOCOL.md");
    let doc = std::fs::read_to_string(path).unwrap();
    // The generated block is the table itself.
    let (start, end) = (
        doc.find("<!-- generated: limits -->").unwrap(),
        doc.find("<!-- end generated: limits -->").unwrap(),
    );
    let prose = format!("{}{}", &doc[..start], &doc[end..]);
    let mut checked = 0;
    for limit in LIMITS {
        for num in limit.value.nums().into_iter().chain(limit.default) {
            let name = format!("`{}`", num.name.rsplit("::").next().unwrap());
            for (at, _) in prose.match_indices(&name) {
                let before = &prose[boundary(&prose, at.saturating_sub(40))..at];
                let end = boundary(&prose, (at + name.len() + 24).min(prose.len()));
                let after = &prose[at + name.len()..end];
                if let Some(shown) = number_beside(before, after) {
                    assert_eq!(
                        shown, num.value,
                        "PROTOCOL.md writes {shown} beside {name}: …{before}{name}{after}…"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 15, "only {checked} values beside names");
}

#[test]
fn numbers_beside_names_are_read_as_written() {
    assert_eq!(number_beside("at most 12 000 bytes (", ""), Some(12000.0));
    assert_eq!(number_beside("never below 1 KiB (", ""), Some(1024.0));
    assert_eq!(number_beside("bucket of 120 (", ""), Some(120.0));
    assert_eq!(number_beside("wanted: 1–500 (", ""), Some(500.0));
    assert_eq!(number_beside("", " = 16384 bytes;"), Some(16384.0));
    assert_eq!(number_beside("", ", 60 s, ago"), Some(60.0));
    assert_eq!(number_beside("(default 100,\n  ", ""), Some(100.0));
    assert_eq!(number_beside("once a minute (", ""), None);
    assert_eq!(number_beside("the 2 tables; see (", ""), None);
}

/// The page's text boxes stop where the server does: every `maxlength` in the page's scripts
/// (`server/web`) is the limit of what that box holds, by the box's name (at Magic Tech's
/// panel, a card's name).
#[test]
fn the_pages_text_boxes_stop_at_the_tables_limits() {
    let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/web");
    let mut files = vec![];
    for dir in [web.clone(), web.join("games")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "js") {
                files.push(path);
            }
        }
    }
    let mut checked = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (number, line) in text.lines().enumerate() {
            // One box per occurrence: the words before its `maxlength` on the line say which.
            let mut rest = line;
            let mut before = String::new();
            while let Some(at) = rest.find("maxlength") {
                before.push_str(&rest[..at]);
                let after = rest[at + "maxlength".len()..].trim_start_matches([':', '=', ' ', '"']);
                let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
                let found: usize = digits.parse().unwrap_or_else(|_| {
                    panic!(
                        "{}:{}: a maxlength that is no number",
                        path.display(),
                        number + 1
                    )
                });
                let tail = before
                    .rsplit(['<', '{'])
                    .next()
                    .unwrap_or(&before)
                    .to_lowercase();
                let magic_tech = path.ends_with("games/magic_tech.js");
                let limit = if tail.contains("password") {
                    "MAX_PASSWORD_CHARS"
                } else if tail.contains("chat") {
                    "MAX_CHAT_CHARS"
                } else if tail.contains("call-reason") {
                    "MAX_CALL_REASON_CHARS"
                } else if magic_tech {
                    // Magic Tech's boxes name cards.
                    "MAX_CARD_NAME_CHARS"
                } else {
                    "MAX_NAME_CHARS"
                };
                assert_eq!(
                    found,
                    value(limit),
                    "{}:{}: a box holding a {limit} stops at {found}",
                    path.display(),
                    number + 1
                );
                checked += 1;
                before.push_str("maxlength");
                rest = &rest[at + "maxlength".len()..];
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} maxlengths found in server/web"
    );
}
