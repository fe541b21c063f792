//! What text the server accepts from people: display names and chat lines.
//!
//! Text typed by one player is shown on every other player's screen, so it must not be able to
//! act on a terminal (escape sequences, bells, backspaces), forge lines or fields for programs
//! reading a client's output (line and paragraph separators), or hide what it says (bidi
//! overrides, zero-width characters). The server refuses such text with a typed error rather
//! than changing it silently; clients still escape whatever they print (defence in depth).
//!
//! Names are also normalised (Unicode NFC, surrounding white space trimmed) so that two ways of
//! typing the same name are the same name, and a name may not look like another one at the same
//! table ([`name_skeletons`], Unicode's confusables skeleton from UTS #39) or like a word the
//! clients use for something else ([`RESERVED_NAMES`]). A name must also show something: at
//! least one visible character ([`is_visible_char`]), so a name made only of Hangul fillers or
//! the braille blank, which draw as empty space, is refused like an empty one.
//!
//! The same forbidden characters are refused in the `entropy` a client contributes to a table's
//! dice ([`check_entropy`]): it is published in `player_joined` and shown like a name.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

use crate::limits::{
    MAX_CARD_NAME_CHARS, MAX_CHAT_CHARS, MAX_CLIENT_NAME_CHARS, MAX_ENTROPY_CHARS, MAX_NAME_CHARS,
    MIN_NAME_CHARS,
};

/// Words no player may take as a name (nor anything confusable with them, in any case): clients
/// use them for spectators, the host and the server's own lines.
pub const RESERVED_NAMES: [&str; 4] = ["spectator", "host", "server", "judge"];

/// Why a piece of text was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// Nothing left after trimming.
    #[error("empty")]
    Empty,
    /// Longer than allowed (in characters, after normalising).
    #[error("too long")]
    TooLong,
    /// A control, format, separator, private-use or unassigned character.
    #[error("contains the invisible or control character U+{0:04X}")]
    Forbidden(u32),
    /// A name with no visible character ([`is_visible_char`]): only blanks such as the Hangul
    /// filler U+3164, or only combining marks.
    #[error("has no visible character")]
    Invisible,
}

impl TextError {
    /// The error code a refused name is answered with.
    pub fn code(self) -> crate::ErrorCode {
        match self {
            TextError::Empty | TextError::TooLong | TextError::Invisible => {
                crate::ErrorCode::BadName
            }
            TextError::Forbidden(_) => crate::ErrorCode::BadText,
        }
    }
}

/// The Unicode general categories no name, chat line, call for the host, entropy or client
/// name may hold, with their abbreviations: Cc (control: C0, DEL, C1), Cf (format: bidi
/// overrides, zero-width characters, soft hyphen, …), Zl and Zp (line and paragraph
/// separators), Co (private use), Cn (unassigned) and Cs (surrogates, which no Rust string
/// holds).
pub const FORBIDDEN_CATEGORIES: [(GeneralCategory, &str); 7] = [
    (GeneralCategory::Control, "Cc"),
    (GeneralCategory::Format, "Cf"),
    (GeneralCategory::LineSeparator, "Zl"),
    (GeneralCategory::ParagraphSeparator, "Zp"),
    (GeneralCategory::PrivateUse, "Co"),
    (GeneralCategory::Unassigned, "Cn"),
    (GeneralCategory::Surrogate, "Cs"),
];

/// Letters and symbols that draw as empty space, so they count as no visible character: the
/// Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 (the only letters Unicode makes
/// default-ignorable) and the braille pattern blank U+2800.
pub const BLANK_CHARS: [char; 5] = ['\u{115F}', '\u{1160}', '\u{3164}', '\u{FFA0}', '\u{2800}'];

/// Whether a character may not appear in names or chat: one of the
/// [`FORBIDDEN_CATEGORIES`].
pub fn is_forbidden_char(c: char) -> bool {
    let category = c.general_category();
    FORBIDDEN_CATEGORIES.iter().any(|&(c, _)| c == category)
}

/// Whether a character shows something on its own: a letter, number, punctuation mark or
/// symbol (Unicode general categories L, N, P and S) other than the ones that draw as empty
/// space ([`BLANK_CHARS`]). White space, combining marks (which sit on the character before
/// them) and the forbidden characters ([`is_forbidden_char`]) are not visible. A name needs at
/// least one visible character.
pub fn is_visible_char(c: char) -> bool {
    !BLANK_CHARS.contains(&c)
        && matches!(
            c.general_category_group(),
            GeneralCategoryGroup::Letter
                | GeneralCategoryGroup::Number
                | GeneralCategoryGroup::Punctuation
                | GeneralCategoryGroup::Symbol
        )
}

fn check_chars(text: &str) -> Result<(), TextError> {
    match text.chars().find(|&c| is_forbidden_char(c)) {
        Some(c) => Err(TextError::Forbidden(u32::from(c))),
        None => Ok(()),
    }
}

/// A name as the server keeps it — a player's, a table's, a league's, a league member's, a deck's
/// or a set's: NFC-normalised, trimmed, 1–32 characters, none of them forbidden
/// ([`is_forbidden_char`]), no white space but plain spaces (a no-break space would make `Ann`
/// and `Ann ` two names) and at least one visible character ([`is_visible_char`]). Reserved
/// words are checked separately ([`is_reserved_name`]) because table names may use them.
pub fn normalize_name(raw: &str) -> Result<String, TextError> {
    normalize_name_within(raw, MAX_NAME_CHARS)
}

/// A Magic Tech card's declared name ([`crate::magic_tech_types::CardFace`]): the rules of
/// [`normalize_name`], up to [`MAX_CARD_NAME_CHARS`] characters (printed names are longer than
/// players').
pub fn normalize_card_name(raw: &str) -> Result<String, TextError> {
    normalize_name_within(raw, MAX_CARD_NAME_CHARS)
}

fn normalize_name_within(raw: &str, max: usize) -> Result<String, TextError> {
    let name: String = raw.nfc().collect();
    let name = name.trim();
    check_chars(name)?;
    if let Some(c) = name.chars().find(|&c| c.is_whitespace() && c != ' ') {
        return Err(TextError::Forbidden(u32::from(c)));
    }
    let chars = name.chars().count();
    if chars < MIN_NAME_CHARS {
        return Err(TextError::Empty);
    }
    if chars > max {
        return Err(TextError::TooLong);
    }
    if !name.chars().any(is_visible_char) {
        return Err(TextError::Invisible);
    }
    Ok(name.to_owned())
}

/// A chat line as the server keeps it: trimmed, 1–500 characters, none of them forbidden (so
/// one line of chat is always one line on screen).
pub fn normalize_chat(raw: &str) -> Result<String, TextError> {
    let text = raw.trim();
    check_chars(text)?;
    let chars = text.chars().count();
    if chars == 0 {
        return Err(TextError::Empty);
    }
    if chars > MAX_CHAT_CHARS {
        return Err(TextError::TooLong);
    }
    Ok(text.to_owned())
}

/// The `entropy` a client contributes to a table's dice at `join`: at most 64 characters, none
/// of them forbidden ([`is_forbidden_char`], as in names and chat: it is published in
/// `player_joined` and shown). May be empty; kept exactly as sent (not trimmed or normalised:
/// the dice hash its bytes). Too long is [`TextError::TooLong`].
pub fn check_entropy(raw: &str) -> Result<(), TextError> {
    check_chars(raw)?;
    if raw.chars().count() > MAX_ENTROPY_CHARS {
        return Err(TextError::TooLong);
    }
    Ok(())
}

/// The client name announced in `hello`: at most 64 characters, none of them forbidden (it is
/// written to the server's logs). May be empty.
pub fn check_client_name(raw: &str) -> Result<(), TextError> {
    check_chars(raw)?;
    if raw.chars().count() > MAX_CLIENT_NAME_CHARS {
        return Err(TextError::TooLong);
    }
    Ok(())
}

/// The confusables skeletons of a name (UTS #39), case-folded two ways: two names look alike
/// when they share one (`Ann` and `Аnn` with a Cyrillic А; `Bill` and `BiII`; `rn` and `m`;
/// any two spellings that differ only in case). The skeleton of the name as typed catches
/// capitals that look like small letters (`I` and `l`); the skeleton of the lower-cased name
/// catches names that differ in case and in look-alike letters at once.
pub fn name_skeletons(name: &str) -> [String; 2] {
    fn skeleton(text: &str) -> String {
        unicode_security::skeleton(text).collect()
    }
    fn lower(text: &str) -> String {
        text.chars().flat_map(char::to_lowercase).collect()
    }
    let name: String = name.nfc().collect();
    [skeleton(&lower(&skeleton(&name))), skeleton(&lower(&name))]
}

/// The one key a name is counted by where "the same name" must be one thing (a day's climber,
/// a card's copies): the skeleton of the lower-cased name, the second of [`name_skeletons`]
/// (the one that folds case whatever the letters: `LION` and `lion`). `Cai` and `cai`, `Dev`
/// and `Dеv` (a Cyrillic е), `Lion` and `LІОN` (a Cyrillic І and О) have the same key.
pub fn name_key(name: &str) -> String {
    let [_, key] = name_skeletons(name);
    key
}

/// Whether two names look alike ([`name_skeletons`]).
pub fn names_confusable(a: &str, b: &str) -> bool {
    let (a, b) = (name_skeletons(a), name_skeletons(b));
    a.iter().any(|key| b.contains(key))
}

/// Whether a player name is a reserved word or looks like one ([`RESERVED_NAMES`]).
pub fn is_reserved_name(name: &str) -> bool {
    RESERVED_NAMES
        .iter()
        .any(|reserved| names_confusable(reserved, name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn names_are_trimmed_and_normalised_to_nfc() {
        // "e" + combining acute accent becomes the single character é.
        assert_eq!(normalize_name("  Rene\u{301}  ").unwrap(), "René");
        assert_eq!(normalize_name("René").unwrap(), "René");
    }

    #[test]
    fn control_format_and_separator_characters_are_refused_in_names_and_chat() {
        for bad in [
            "\u{1b}]0;pwned\u{7}",
            "a\u{8}b",
            "a\u{0}b",
            "a\u{b}b",
            "a\u{c}b",
            "a\u{85}b",
            "a\u{9b}2Jb",
            "a\u{2028}b",
            "a\u{2029}b",
            "a\u{202e}b",
            "a\u{200b}b",
            "a\u{200d}b",
            "a\u{feff}b",
            "a\tb",
            "a\nb",
            "a\u{e000}b",
        ] {
            assert!(
                matches!(normalize_name(bad), Err(TextError::Forbidden(_))),
                "{bad:?}"
            );
            assert!(
                matches!(normalize_chat(bad), Err(TextError::Forbidden(_))),
                "{bad:?}"
            );
        }
        assert_eq!(
            normalize_chat("hello, world: ünïcödé ✓ 🙂").unwrap(),
            "hello, world: ünïcödé ✓ 🙂"
        );
    }

    #[test]
    fn a_name_needs_a_visible_character() {
        for blank in [
            "\u{3164}",
            "\u{3164}\u{3164}\u{3164}",
            "\u{115f}\u{1160}",
            "\u{ffa0}",
            "\u{2800}",
            " \u{3164} \u{2800} ",
            "\u{301}\u{302}",
            "\u{fe0f}",
        ] {
            assert_eq!(
                normalize_name(blank),
                Err(TextError::Invisible),
                "{blank:?}"
            );
            assert_eq!(TextError::Invisible.code(), crate::ErrorCode::BadName);
        }
        for fine in [
            "A",
            "7",
            "?",
            "✓",
            "🙂",
            "\u{3164}x",
            "가",
            "ᄀ",
            "é\u{301}",
        ] {
            assert!(normalize_name(fine).is_ok(), "{fine:?}");
        }
        // A blank beside a name does not make another name: it looks the same as the name.
        assert!(names_confusable("Ann", "Ann\u{3164}"));
    }

    #[test]
    fn entropy_follows_the_same_character_rules() {
        for bad in [
            "a\u{202e}b",
            "a\u{200b}b",
            "a\u{2028}b",
            "a\u{e000}b",
            "a\u{1b}b",
            "\n",
        ] {
            assert!(
                matches!(check_entropy(bad), Err(TextError::Forbidden(_))),
                "{bad:?}"
            );
        }
        assert_eq!(check_entropy(""), Ok(()));
        assert_eq!(check_entropy("  kitchen table 7 ✓ 🎲 "), Ok(()));
        assert_eq!(check_entropy(&"é".repeat(64)), Ok(()));
        assert_eq!(check_entropy(&"é".repeat(65)), Err(TextError::TooLong));
    }

    #[test]
    fn lengths_are_counted_in_characters_after_trimming() {
        assert_eq!(normalize_name("   "), Err(TextError::Empty));
        assert_eq!(normalize_name(&"é".repeat(32)).unwrap().chars().count(), 32);
        assert_eq!(normalize_name(&"é".repeat(33)), Err(TextError::TooLong));
        assert_eq!(normalize_chat(&"x".repeat(501)), Err(TextError::TooLong));
        assert!(check_client_name(&"c".repeat(64)).is_ok());
        assert_eq!(check_client_name(&"c".repeat(65)), Err(TextError::TooLong));
    }

    #[test]
    fn confusable_names_share_a_skeleton() {
        assert!(names_confusable("Ann", "\u{410}nn"), "Cyrillic A");
        assert!(
            names_confusable("ann", "\u{410}NN"),
            "Cyrillic A, other case"
        );
        assert!(names_confusable("ann", "ANN"));
        assert!(names_confusable("Bill", "BiII"), "l and I");
        assert!(names_confusable("modern", "rnodern"), "rn and m");
        assert!(!names_confusable("Ann", "Ben"));
        assert!(!names_confusable("Ann", "Anna"));
        assert!(names_confusable("il", "Il"));
        assert!(names_confusable("Eve", "EVE"));
    }

    #[test]
    fn a_name_key_folds_case_and_look_alikes_into_one() {
        for (a, b) in [
            ("Cai", "cai"),
            ("Dev", "D\u{435}v"),
            ("Lion", "L\u{456}on"),
            ("LION", "l\u{406}\u{41e}n"),
            ("ANN", "\u{410}nn"),
            ("Eve", "EVE"),
        ] {
            assert_eq!(name_key(a), name_key(b), "{a} and {b}");
        }
        assert_ne!(name_key("Ann"), name_key("Anna"));
        assert_ne!(name_key("Cai"), name_key("Kai"));
    }

    #[test]
    fn reserved_words_and_their_look_alikes_are_reserved() {
        for name in ["host", "HOST", "Server", "judge", "spectator", "h\u{43e}st"] {
            assert!(is_reserved_name(name), "{name}");
        }
        for name in ["hostess", "Ann", "servers"] {
            assert!(!is_reserved_name(name), "{name}");
        }
    }
}
