//! PROTOCOL.md cannot drift from the code: every example block in it is the current encoding of
//! its example, every example is shown, and every message, event and error code is documented.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::examples::{self, Example};
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage};

const FIX: &str = "run `cargo run -p grand-melee-protocol --example dump -- --update PROTOCOL.md`";

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../PROTOCOL.md");
    std::fs::read_to_string(path).unwrap()
}

/// One `<!-- example: NAME -->` marker and the blocks after it.
#[derive(Debug, Default)]
struct Block {
    name: String,
    json: Option<String>,
    byte_count: Option<usize>,
    hex: Option<String>,
}

fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = doc.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .trim()
            .strip_prefix("<!-- example:")
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            continue;
        };
        let mut block = Block {
            name: name.trim().to_owned(),
            ..Block::default()
        };
        while let Some(next) = lines.peek().map(|l| l.trim().to_owned()) {
            if let Some(lang) = next.strip_prefix("```") {
                lines.next();
                let mut body = Vec::new();
                for inner in lines.by_ref() {
                    if inner.trim() == "```" {
                        break;
                    }
                    body.push(inner);
                }
                let body = body.join("\n");
                match lang {
                    "json" => block.json = Some(body),
                    "hex" => block.hex = Some(body),
                    _ => break,
                }
            } else if let Some(count) = next.strip_suffix(" bytes:") {
                lines.next();
                block.byte_count = count.parse().ok();
            } else if next.is_empty() {
                lines.next();
            } else {
                break;
            }
        }
        out.push(block);
    }
    out
}

fn parse_hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap())
        .collect()
}

#[test]
fn every_hex_dump_is_the_current_encoding() {
    let doc = doc();
    let blocks = blocks(&doc);
    assert!(!blocks.is_empty());
    for block in &blocks {
        let example = examples::get(&block.name)
            .unwrap_or_else(|| panic!("PROTOCOL.md shows unknown example {}", block.name));
        let bytes = example.encode();
        let hex = block
            .hex
            .as_deref()
            .unwrap_or_else(|| panic!("{}: no hex block; {FIX}", block.name));
        assert_eq!(
            parse_hex(hex),
            bytes,
            "{}: the hex dump is stale; {FIX}",
            block.name
        );
        assert_eq!(
            block.byte_count,
            Some(bytes.len()),
            "{}: byte count; {FIX}",
            block.name
        );
        let json = block
            .json
            .as_deref()
            .unwrap_or_else(|| panic!("{}: no json block; {FIX}", block.name));
        let shown: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(
            shown,
            serde_json::to_value(&example).unwrap(),
            "{}: the JSON is stale; {FIX}",
            block.name
        );
    }
}

#[test]
fn every_example_is_shown_once() {
    let doc = doc();
    let shown: Vec<String> = blocks(&doc).into_iter().map(|b| b.name).collect();
    for (name, _) in examples::all() {
        let count = shown.iter().filter(|n| **n == name).count();
        assert_eq!(count, 1, "PROTOCOL.md shows example {name} {count} times");
    }
}

#[test]
fn every_message_event_and_error_code_is_documented() {
    let doc = doc();
    for name in ClientMessage::NAMES
        .iter()
        .chain(ServerMessage::NAMES.iter())
    {
        assert!(
            doc.contains(&format!("\n### {name}\n")),
            "no section for {name}"
        );
    }
    for event in examples::events() {
        let name = event.name();
        assert!(
            doc.contains(&format!("\n### {name}\n")),
            "no section for {name}"
        );
    }
    for code in ErrorCode::ALL {
        let name = code.name();
        assert!(
            doc.contains(&format!("\n| `{name}` | ")),
            "error code {name} is not in the table"
        );
    }
}

/// Each `magic_tech.*` request's section names, on its `Errors:` line, exactly the codes the
/// declared table gives it (`protocol/src/errors_of.rs`), but those said once for every Magic
/// Tech request: the game request's `not_a_player`, `table_adjourned` and `table_paused`, and
/// `not_playing` (the section "Magic Tech requests").
#[test]
fn every_magic_tech_errors_line_names_the_declared_codes() {
    let doc = doc();
    let common = [
        "not_a_player",
        "table_adjourned",
        "table_paused",
        "not_playing",
    ];
    for &name in ClientMessage::NAMES {
        if !name.starts_with("magic_tech.") {
            continue;
        }
        let heading = format!("\n### {name}\n");
        let start = doc.find(&heading).unwrap() + heading.len();
        let section = &doc[start..];
        let section = &section[..section.find("\n### ").unwrap_or(section.len())];
        let line = section
            .lines()
            .find(|l| l.starts_with("Errors:"))
            .unwrap_or_else(|| panic!("{name}: no `Errors:` line"));
        let mut named: Vec<&str> = line
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|token| ErrorCode::ALL.iter().any(|c| c.name() == *token))
            .collect();
        named.sort_unstable();
        named.dedup();
        let mut declared: Vec<&str> = grand_melee_protocol::errors_of::own_codes(name)
            .unwrap()
            .iter()
            .map(|(code, _)| code.name())
            .filter(|code| !common.contains(code))
            .collect();
        declared.sort_unstable();
        assert_eq!(
            named, declared,
            "{name}: PROTOCOL.md's `Errors:` line and protocol/src/errors_of.rs differ"
        );
    }
}

#[test]
fn snapshot_example_decodes_to_the_example_view() {
    let Some(Example::Server(ServerMessage::Snapshot { view, .. })) =
        examples::get("server/snapshot")
    else {
        panic!("no snapshot example");
    };
    assert_eq!(view, examples::view());
    assert_eq!(view.seq, examples::view_events().len() as u64);
}

/// Every Rust source file of the crate, by path.
fn sources(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.display().to_string(), text));
        }
    }
}

/// The "Encoding" section.
fn encoding_section(doc: &str) -> &str {
    let start = doc.find("\n## Encoding\n").unwrap();
    let end = start + doc[start + 1..].find("\n## ").unwrap() + 1;
    &doc[start..end]
}

#[test]
fn the_fields_left_out_when_empty_are_the_ones_encoding_names() {
    let doc = doc();
    let section = encoding_section(&doc);
    assert!(
        !section.contains("always writes every field"),
        "Encoding says every field is always written, but some are left out when empty"
    );
    // Each way the code leaves a field out, and the words Encoding gives it.
    let documented = [
        ("Option::is_none", "`nil`"),
        ("std::ops::Not::not", "`false`"),
        ("is_zero", "`0`"),
        ("Vec::is_empty", "an empty\n  list"),
        ("BTreeMap::is_empty", "an empty map"),
        ("String::is_empty", "an empty text"),
        ("GameKind::is_default", "a `game` of `grand_melee`"),
        ("SeatingMode::is_random", "a `seating_mode` of `random`"),
    ];
    for (_, words) in documented {
        assert!(section.contains(words), "Encoding does not say {words:?}");
    }
    let mut files = Vec::new();
    sources(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")),
        &mut files,
    );
    let mut found = 0;
    for (path, text) in &files {
        let pattern = "skip_serializing_if = \"";
        for (at, _) in text.match_indices(pattern) {
            let condition = &text[at + pattern.len()..];
            let condition = &condition[..condition.find('"').unwrap()];
            assert!(
                documented.iter().any(|(c, _)| *c == condition),
                "{path}: a field is left out when {condition}, which Encoding does not name"
            );
            found += 1;
        }
    }
    assert!(found > 0);
    // And the view does leave `calls` out when no call is open, as Encoding's example says.
    let bytes = grand_melee_protocol::encode_server(&ServerMessage::Snapshot {
        reply_to: None,
        view: examples::view(),
    });
    assert!(examples::view().calls.is_empty());
    assert!(!bytes.windows(6).any(|w| w == b"\xa5calls"));
    assert!(section.contains("`calls` when no call is open"));
}

/// Checks the block between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->` in
/// PROTOCOL.md against `rendered`; with `GM_BLESS=1` rewrites it instead.
fn generated_block(name: &str, rendered: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../PROTOCOL.md");
    let doc = doc();
    let open = format!("<!-- generated: {name} -->\n");
    let close = format!("<!-- end generated: {name} -->");
    let start = doc
        .find(&open)
        .unwrap_or_else(|| panic!("PROTOCOL.md has no `{}` marker", open.trim()))
        + open.len();
    let end = start
        + doc[start..]
            .find(&close)
            .unwrap_or_else(|| panic!("PROTOCOL.md has no `{close}` marker"));
    if std::env::var_os("GM_BLESS").is_some_and(|v| v == "1") {
        let updated = format!("{}{rendered}{}", &doc[..start], &doc[end..]);
        std::fs::write(path, updated).unwrap();
        return;
    }
    assert!(
        doc[start..end] == *rendered,
        "PROTOCOL.md's generated block `{name}` differs from the code: run \
         `GM_BLESS=1 cargo test -p grand-melee-protocol --test doc` to rewrite it\n\
         --- in PROTOCOL.md ---\n{}\n--- from the code ---\n{rendered}",
        &doc[start..end]
    );
}

#[test]
fn errors_block_is_the_declared_table() {
    generated_block(
        "errors",
        &grand_melee_protocol::errors_of::render_markdown(),
    );
}

#[test]
fn limits_block_is_the_declared_table() {
    generated_block(
        "limits",
        &grand_melee_protocol::limits_of::render_markdown(),
    );
}
