//! Prints one example of every message as markdown: a marker, its JSON rendering and its
//! MessagePack encoding in hex. This is what `PROTOCOL.md` shows.
//!
//! ```text
//! cargo run -p grand-melee-protocol --example dump                       # print all blocks
//! cargo run -p grand-melee-protocol --example dump -- --update PROTOCOL.md  # rewrite them in place
//! ```
//!
//! In `--update` mode every `<!-- example: NAME -->` marker in the file is followed by the fresh
//! blocks for NAME (the old blocks after it are replaced).

use std::io::Write;
use std::process::ExitCode;

use grand_melee_protocol::examples::{self, Example};

/// The markdown blocks for one example: marker, JSON, hex.
fn render(name: &str, example: &Example) -> String {
    let compact = serde_json::to_string(example).unwrap_or_default();
    let json = if compact.len() > 100 {
        serde_json::to_string_pretty(example).unwrap_or_default()
    } else {
        compact
    };
    let bytes = example.encode();
    format!(
        "<!-- example: {name} -->\n```json\n{json}\n```\n\n{} bytes:\n\n```hex\n{}\n```\n",
        bytes.len(),
        examples::hex(&bytes)
    )
}

/// Replaces the blocks after every marker in `doc` with fresh ones. Returns the new text and the
/// names of markers that name no example.
fn update(doc: &str) -> (String, Vec<String>) {
    let all = examples::all();
    let mut out = String::with_capacity(doc.len());
    let mut unknown = Vec::new();
    let mut lines = doc.lines().peekable();
    while let Some(line) = lines.next() {
        let name = line
            .trim()
            .strip_prefix("<!-- example:")
            .and_then(|rest| rest.strip_suffix("-->"))
            .map(str::trim);
        let Some(name) = name else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let Some((_, example)) = all.iter().find(|(n, _)| n == name) else {
            unknown.push(name.to_owned());
            out.push_str(line);
            out.push('\n');
            continue;
        };
        // Skip the old blocks: fenced blocks, "N bytes:" lines and blank lines between them.
        while let Some(next) = lines.peek() {
            let next = next.trim();
            if next.starts_with("```") {
                lines.next();
                for inner in lines.by_ref() {
                    if inner.trim() == "```" {
                        break;
                    }
                }
            } else if next.is_empty() || next.ends_with("bytes:") {
                lines.next();
            } else {
                break;
            }
        }
        out.push_str(&render(name, example));
        out.push('\n');
    }
    (out, unknown)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut stdout = std::io::stdout().lock();
    match args.as_slice() {
        [] => {
            for (name, example) in examples::all() {
                if writeln!(stdout, "{}", render(&name, &example)).is_err() {
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        [flag, path] if flag == "--update" => {
            let Ok(doc) = std::fs::read_to_string(path) else {
                let _ = writeln!(std::io::stderr(), "cannot read {path}");
                return ExitCode::FAILURE;
            };
            let (new, unknown) = update(&doc);
            for name in &unknown {
                let _ = writeln!(std::io::stderr(), "unknown example: {name}");
            }
            if std::fs::write(path, new).is_err() {
                let _ = writeln!(std::io::stderr(), "cannot write {path}");
                return ExitCode::FAILURE;
            }
            if unknown.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        _ => {
            let _ = writeln!(std::io::stderr(), "usage: dump [--update PROTOCOL.md]");
            ExitCode::FAILURE
        }
    }
}
