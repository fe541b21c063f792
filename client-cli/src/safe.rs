//! Text from other people, made safe to print.
//!
//! Names, chat lines and table names come from strangers and end up on a terminal, or in the
//! output a program parses. Whatever the server lets through, nothing printed here can act on
//! a terminal (escape sequences, bells, backspaces, OSC 52 clipboard writes), break a line
//! (VT, FF, NEL, U+2028), hide what it says (bidi overrides, zero-width characters), or forge a
//! field of a script-mode line.

use grand_melee_protocol::text::is_forbidden_char;

/// Whether a character must not reach a terminal as it is: control, format, separator,
/// private-use and unassigned characters, and white space other than a plain space.
fn must_escape(c: char) -> bool {
    is_forbidden_char(c) || c.is_control() || (c.is_whitespace() && c != ' ')
}

fn escape_into(out: &mut String, c: char) {
    out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
}

/// `text` with every character that could act on a terminal written as a visible escape
/// (`\u{1b}`), for the full-screen UI and for free text at the end of a line.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if must_escape(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
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

/// The reverse of [`quoted`], for programs (and tests) that read script-mode output: the value
/// of a quoted field at the start of `text`, and the rest of `text` after it.
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
                    let (open, _) = chars.next()?;
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Text that attacks terminals and parsers.
    pub(crate) const HOSTILE: [&str; 12] = [
        "\u{1b}]0;owned\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "\u{1b}]52;c;ZXZpbA==\u{7}",
        "a\u{8}\u{8}b",
        "nul\u{0}byte",
        "vt\u{b}ff\u{c}",
        "c1\u{9b}2J \u{85}event 9 game_over",
        "ls\u{2028}event 9 forged",
        "bidi\u{202e}txet",
        "zero\u{200b}width",
        "Eve) player=0 (Ann",
        "quote\" player=0 \"x \\",
    ];

    #[test]
    fn nothing_printable_can_act_on_a_terminal_or_break_a_line() {
        for text in HOSTILE {
            for out in [printable(text), quoted(text)] {
                assert!(
                    out.chars().all(|c| !must_escape(c)),
                    "{text:?} printed as {out:?}"
                );
                assert!(!out.contains('\u{1b}') && !out.contains('\n'));
            }
        }
        assert_eq!(printable("Ann \u{1b}[2J"), "Ann \\u{001b}[2J");
        assert_eq!(printable("Zoë 🙂"), "Zoë 🙂");
    }

    #[test]
    fn a_quoted_value_cannot_end_early_and_reads_back_exactly() {
        for text in HOSTILE.iter().chain(&["", "plain", "René", "a \\u{1b} b"]) {
            let line = format!("player=3 {} rest=1", quoted(text));
            let value = line.strip_prefix("player=3 ").unwrap();
            let (back, rest) = unquote(value).unwrap();
            assert_eq!(back, *text);
            assert_eq!(rest, " rest=1", "{text:?} forged a field: {line}");
        }
    }
}
