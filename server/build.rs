//! Embeds the manual (`docs/`) in the server binary, for `/docs` (`src/docs.rs`): writes
//! `$OUT_DIR/book.rs` with `book.toml`, every file under `docs/src/` (the chapters, `SUMMARY.md`,
//! the screenshots) and every file a chapter pulls in with mdBook's `{{#include PATH}}`
//! (`PROTOCOL.md`, `docs/RULES.md`, …), each by its path relative to `docs/src/`. A chapter or a
//! screenshot added under `docs/src/` is embedded without touching this file.
#![allow(clippy::print_stdout, clippy::unwrap_used)] // cargo reads its directives from stdout

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/book_paths.rs"]
mod book_paths;
use book_paths::{folder, normalize};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let docs = manifest.join("..").join("docs");
    let src = docs.join("src");
    println!(
        "cargo::rerun-if-changed={}",
        docs.join("book.toml").display()
    );
    println!("cargo::rerun-if-changed={}", src.display());

    // Path relative to docs/src (with `/`) → the file on disk.
    let mut files = BTreeMap::new();
    walk(&src, "", &mut files);
    // The files {{#include}}d, found recursively (an included file may include others, relative
    // to its own folder, as mdBook reads them).
    let mut queue: Vec<String> = files
        .keys()
        .filter(|p| p.ends_with(".md"))
        .cloned()
        .collect();
    let mut depth = 0;
    while !queue.is_empty() && depth < 10 {
        let mut next = Vec::new();
        for chapter in queue {
            let text = std::fs::read_to_string(&files[&chapter]).unwrap();
            for include in includes(&text) {
                let path = normalize(&format!("{}{include}", folder(&chapter)));
                if files.contains_key(&path) {
                    continue;
                }
                let on_disk = src.join(&path);
                assert!(
                    on_disk.is_file(),
                    "{chapter}: {{{{#include {include}}}}} names no file ({}); only whole files \
                     are included (no line ranges or anchors)",
                    on_disk.display()
                );
                println!("cargo::rerun-if-changed={}", on_disk.display());
                files.insert(path.clone(), on_disk);
                if path.ends_with(".md") {
                    next.push(path);
                }
            }
        }
        queue = next;
        depth += 1;
    }

    let mut out = String::new();
    writeln!(out, "/// `docs/book.toml`.").unwrap();
    writeln!(
        out,
        "const BOOK_TOML: &str = include_str!({:?});",
        docs.join("book.toml").display().to_string()
    )
    .unwrap();
    writeln!(
        out,
        "/// Every file of the book by its path relative to `docs/src/`, sorted."
    )
    .unwrap();
    writeln!(out, "const FILES: &[(&str, &[u8])] = &[").unwrap();
    for (path, on_disk) in &files {
        writeln!(
            out,
            "    ({path:?}, include_bytes!({:?})),",
            on_disk.display().to_string()
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("book.rs"), out).unwrap();
}

/// Every file below `dir`, by its path below docs/src (`prefix` is `dir`'s).
fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = format!("{prefix}{name}");
        if entry.file_type().unwrap().is_dir() {
            walk(&entry.path(), &format!("{path}/"), out);
        } else {
            out.insert(path, entry.path());
        }
    }
}

/// The paths of the `{{#include PATH}}` in `text` (not the escaped `\{{#include …}}`).
fn includes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("{{") {
        let escaped = rest[..at].ends_with('\\');
        rest = &rest[at + 2..];
        let Some(end) = rest.find("}}") else { break };
        let inner = rest[..end].trim();
        if !escaped && let Some(path) = inner.strip_prefix("#include") {
            found.push(path.trim().to_owned());
        }
    }
    found
}
