//! Text from other people, made safe to print.
//!
//! Names, chat lines and table names come from strangers and end up on a terminal, or in the
//! output a program parses. Whatever the server lets through, nothing printed here can act on
//! a terminal (escape sequences, bells, backspaces, OSC 52 clipboard writes), break a line
//! (VT, FF, NEL, U+2028), hide what it says (bidi overrides, zero-width characters), or forge a
//! field of a script-mode line.
//!
//! The escapes are the same everywhere (script mode, the full-screen UI, replays):
//!
//! - a character that must not reach a terminal as it is ([`must_escape`]) is written
//!   `\u{` + its code point in lower-case hexadecimal + `}`, e.g. ESC is `\u{1b}`;
//! - a backslash is written `\\`, so that a visible escape cannot be typed to fake another;
//! - in a quoted value ([`quoted`]) a double quote is written `\"`.

use grand_melee_protocol::text::is_forbidden_char;

/// Whether a character must not reach a terminal as it is: control (C0, DEL, C1), format (bidi
/// overrides, zero-width characters), line and paragraph separators, private-use and unassigned
/// characters (Unicode Cc, Cf, Zl, Zp, Co, Cn), and white space other than a plain space.
pub fn must_escape(c: char) -> bool {
    is_forbidden_char(c) || c.is_control() || (c.is_whitespace() && c != ' ')
}

fn escape_into(out: &mut String, c: char) {
    out.extend(c.escape_unicode());
}

/// `text` with every character that could act on a terminal written as a visible escape
/// (`\u{1b}`) and every backslash doubled, for free text: the full-screen UI, sentences, and
/// the end of error lines.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if must_escape(c) => escape_into(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// `text` as one script-mode value: in double quotes, with `"` and `\` escaped by a backslash
/// and every character that could act on a terminal written as `\u{…}`. A quoted value never
/// contains an unescaped `"`, so it cannot end early and forge the fields after it, and never
/// contains a line break, so it cannot forge a line.
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if must_escape(c) => escape_into(&mut out, c),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The last guard before a whole line reaches the output: every character that could act on a
/// terminal written as `\u{…}`, and nothing else changed (backslashes are left alone, so a line
/// already made of [`printable`] and [`quoted`] pieces comes out exactly as it went in).
pub fn guard(line: &str) -> String {
    if !line.chars().any(must_escape) {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if must_escape(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON text (as `serde_json` writes it) with every character that could act on a terminal
/// written as a JSON escape (`\u001b`, `\u2028`, a surrogate pair above U+FFFF). Such characters
/// can only be inside JSON strings, where the escape means the same character: the JSON is
/// unchanged for any reader, and safe to show on a terminal.
pub fn json(text: &str) -> String {
    if !text.chars().any(must_escape) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if must_escape(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The reverse of [`quoted`], for programs (and tests) that read script-mode output: the value
/// of a quoted field at the start of `text`, and the rest of `text` after it. `None` if `text`
/// does not start with a well-formed quoted value.
pub fn unquote(text: &str) -> Option<(String, &str)> {
    let rest = text.strip_prefix('"')?;
    let mut value = String::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &rest[i + 1..])),
            '\\' => match chars.next()?.1 {
                '"' => value.push('"'),
                '\\' => value.push('\\'),
                'u' => {
                    let (open, brace) = chars.next()?;
                    if brace != '{' {
                        return None;
                    }
                    let close = rest[open..].find('}')? + open;
                    let code = u32::from_str_radix(rest.get(open + 1..close)?, 16).ok()?;
                    value.push(char::from_u32(code)?);
                    while chars.next()?.0 < close {}
                }
                _ => return None,
            },
            c => value.push(c),
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Text that attacks terminals and parsers: a terminal title (OSC 0), a screen clear, a
    /// clipboard write (OSC 52), backspaces, NUL, VT/FF, a C1 CSI and NEL, U+2028, a bidi
    /// override, a zero-width space, DEL, a no-break space, a private-use character, and
    /// names and text made to forge fields.
    pub(crate) const HOSTILE: [&str; 16] = [
        "\u{1b}]0;owned\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "\u{1b}]52;c;ZXZpbA==\u{7}",
        "a\u{8}\u{8}b",
        "nul\u{0}byte",
        "vt\u{b}ff\u{c}cr\r\nlf",
        "c1\u{9b}2J \u{85}event 9 game_over",
        "ls\u{2028}event 9 forged\u{2029}",
        "bidi\u{202e}txet\u{2066}",
        "zero\u{200b}width\u{feff}",
        "del\u{7f} nbsp\u{a0} pua\u{e000} tab\t",
        "Eve) player=0 (Ann",
        "quote\" player=0 \"x \\",
        "fake \\u{1b} escape",
        "\" text=\"forged",
        "🙂 Zoë René",
    ];

    /// Whether `text` could do anything on a terminal but show itself.
    pub(crate) fn is_inert(text: &str) -> bool {
        !text.chars().any(must_escape)
    }

    #[test]
    fn nothing_printable_can_act_on_a_terminal_or_break_a_line() {
        for text in HOSTILE {
            for out in [printable(text), quoted(text), guard(text)] {
                assert!(is_inert(&out), "{text:?} printed as {out:?}");
                assert!(!out.contains('\u{1b}') && !out.contains('\n') && !out.contains('\r'));
            }
        }
        assert_eq!(printable("Ann \u{1b}[2J"), "Ann \\u{1b}[2J");
        assert_eq!(printable("bidi\u{202e}"), "bidi\\u{202e}");
        assert_eq!(printable("Zoë 🙂"), "Zoë 🙂");
        // A backslash is doubled, so a typed `\u{1b}` is not mistaken for an escaped ESC.
        assert_eq!(printable("\\u{1b}"), "\\\\u{1b}");
        assert_ne!(printable("\\u{1b}"), printable("\u{1b}"));
    }

    #[test]
    fn the_guard_changes_nothing_already_made_safe() {
        for text in HOSTILE {
            let line = format!("event 1 chat from=0 {} text={}", quoted(text), quoted(text));
            assert_eq!(guard(&line), line);
            assert_eq!(guard(&printable(text)), printable(text));
        }
        assert_eq!(guard("a\u{1b}b\\"), "a\\u{1b}b\\");
    }

    #[test]
    fn a_quoted_value_cannot_end_early_and_reads_back_exactly() {
        for text in HOSTILE.iter().chain(&["", "plain", "a \\u{1b} b", "\\"]) {
            let line = format!("player=3 {} rest=1", quoted(text));
            let value = line.strip_prefix("player=3 ").unwrap();
            let (back, rest) = unquote(value).unwrap();
            assert_eq!(back, *text);
            assert_eq!(rest, " rest=1", "{text:?} forged a field: {line}");
        }
        assert_eq!(quoted("Eve) player=0 (Ann"), "\"Eve) player=0 (Ann\"");
        assert_eq!(quoted("a\"b\\c\u{7}"), r#""a\"b\\c\u{7}""#);
        assert_eq!(unquote("\"unterminated"), None);
        assert_eq!(unquote("\"bad \\q escape\""), None);
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_its_control_characters() {
        for text in HOSTILE {
            let raw = serde_json::to_string(&serde_json::json!({ "name": text })).unwrap();
            let safe = json(&raw);
            assert!(is_inert(&safe), "{safe}");
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            assert_eq!(back["name"], *text);
        }
        assert_eq!(json("\"\u{2028}\u{1f600}\""), "\"\\u2028\u{1f600}\"");
        assert_eq!(json("\"\u{e000}\""), "\"\\ue000\"");
        assert_eq!(json("\"\u{f0000}\""), "\"\\udb80\\udc00\"");
    }
}
