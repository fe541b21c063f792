//! ARCHITECTURE.md's code map stays complete: every source file of every workspace crate
//! (`<crate>/src/**/*.rs`), every end-to-end test and harness file (`tests/tests/**/*.rs`) and
//! every file of the page (`server/web/`, but for `vendor/`) is named in it, and every `.rs` or
//! `.js` file it names still exists. A module renamed or added without its line in the map fails
//! here with the whole list of what is missing and what is stale.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Every file below `dir` (relative to the root, with `/` separators) whose name `keep` accepts,
/// leaving out the folders `skip` names.
fn files(dir: &str, keep: &dyn Fn(&str) -> bool, skip: &[&str], out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return;
    };
    for entry in entries {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{dir}/{name}");
        if entry.file_type().unwrap().is_dir() {
            if !skip.contains(&name.as_str()) {
                files(&path, keep, skip, out);
            }
        } else if keep(&name) {
            out.push(path);
        }
    }
}

/// The workspace's crates, from the root `Cargo.toml`'s `members`.
fn crates() -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("members = [...] in Cargo.toml");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// What the map must name.
fn sources() -> Vec<String> {
    let rust = |name: &str| name.ends_with(".rs");
    let mut out = Vec::new();
    for krate in crates() {
        files(&format!("{krate}/src"), &rust, &[], &mut out);
    }
    files("tests/tests", &rust, &[], &mut out);
    files("server/web", &|_| true, &["vendor"], &mut out);
    out.sort();
    out
}

/// One `###` section of the code map: the folders its heading names (a folder, or a file's
/// folder) and its text, heading included.
struct Section {
    dirs: Vec<String>,
    text: String,
}

/// Every `` `token` `` in `text`.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The code map's sections: from `## Code map` to the next `## ` heading.
fn sections(doc: &str) -> Vec<Section> {
    let start = doc.find("\n## Code map\n").expect("a code map");
    let map = &doc[start + 1..];
    let end = map[3..].find("\n## ").map_or(map.len(), |i| i + 3);
    let mut sections = Vec::new();
    for part in map[..end].split("\n### ").skip(1) {
        let heading = part.lines().next().unwrap_or_default();
        let dirs = quoted(heading)
            .into_iter()
            .filter_map(|token| {
                if token.ends_with('/') {
                    Some(token.to_owned())
                } else {
                    token.rfind('/').map(|i| token[..=i].to_owned())
                }
            })
            .collect();
        sections.push(Section {
            dirs,
            text: format!("### {part}"),
        });
    }
    sections
}

/// Whether the map names `path`: by its whole path anywhere in the document, or in a section
/// whose heading names a folder above it, by its path below that folder, its file name, or (a
/// `mod.rs`) its folder.
fn named(path: &str, doc: &str, sections: &[Section]) -> bool {
    let tokens = quoted(doc);
    if tokens.contains(&path) {
        return true;
    }
    sections.iter().any(|section| {
        let tokens = quoted(&section.text);
        section.dirs.iter().any(|dir| {
            let Some(rest) = path.strip_prefix(dir.as_str()) else {
                return false;
            };
            let file = rest.rsplit('/').next().unwrap_or(rest);
            let folder = rest.strip_suffix("mod.rs");
            tokens.contains(&rest)
                || (file != "mod.rs" && tokens.contains(&file))
                || folder.is_some_and(|f| !f.is_empty() && tokens.contains(&f))
        })
    })
}

/// The `.rs` and `.js` files a section names that are not there: no file of the tree ends with
/// that path (a map may name a file of another folder by its name), and none is at that path
/// from the root.
fn stale<'a>(section: &'a Section, all: &[String]) -> Vec<&'a str> {
    quoted(&section.text)
        .into_iter()
        .filter(|token| {
            (token.ends_with(".rs") || token.ends_with(".js"))
                && !token.contains([' ', '*'])
                && !root().join(token).is_file()
                && !all.iter().any(|path| path.ends_with(&format!("/{token}")))
        })
        .collect()
}

#[test]
fn the_code_map_names_every_source_file_and_nothing_that_is_gone() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let sections = sections(&doc);
    let all = sources();
    assert!(
        all.iter().any(|p| p == "protocol/src/lib.rs")
            && all.iter().any(|p| p == "server/web/app.js"),
        "the walk found the sources: {all:?}"
    );
    let missing: Vec<&String> = all
        .iter()
        .filter(|path| !named(path, &doc, &sections))
        .collect();
    let gone: Vec<String> = sections
        .iter()
        .flat_map(|s| {
            let heading = s.text.lines().next().unwrap_or_default().to_owned();
            stale(s, &all)
                .into_iter()
                .map(move |token| format!("{token} (in \"{heading}\")"))
        })
        .collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "ARCHITECTURE.md's code map is out of date.\nNot named (add a line to the section of its \
         folder):\n  {}\nNamed but not there (renamed or removed?):\n  {}",
        missing
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n  "),
        gone.join("\n  ")
    );
}

/// The matching rules themselves, on a small map.
#[test]
fn a_file_is_named_by_its_path_its_name_in_its_folder_section_or_its_folder() {
    let doc = "# A\n\n## Code map\n\n### `server/src/` — the driver\n- `room.rs`, \
               `cluster/` and `http/tls.rs`.\n\n### `tests/` — end-to-end\n`src/lib.rs`.\n\n\
               ## How to add\n`server/src/late.rs` `gone.rs`\n";
    let sections = sections(doc);
    assert_eq!(sections.len(), 2);
    assert_eq!(sections[0].dirs, ["server/src/"]);
    for path in [
        "server/src/room.rs",
        "server/src/cluster/mod.rs",
        "server/src/http/tls.rs",
        "tests/src/lib.rs",
        "server/src/late.rs",
    ] {
        assert!(named(path, doc, &sections), "{path}");
    }
    for path in [
        "server/src/lobby.rs",
        "server/src/cluster/driver.rs",
        "client-cli/src/room.rs",
        "tests/src/nats.rs",
    ] {
        assert!(!named(path, doc, &sections), "{path}");
    }
    // `gone.rs` is outside the map's sections; a named file is stale when the tree lacks it.
    let all = vec![
        "server/src/room.rs".to_owned(),
        "tests/src/lib.rs".to_owned(),
    ];
    assert_eq!(stale(&sections[0], &all), ["http/tls.rs"]);
    assert!(stale(&sections[1], &all).is_empty());
    assert_eq!(stale(&sections[1], &all[..1]), ["src/lib.rs"]);
}
