//! The manual (`docs/`, an mdBook) has no broken link, built either way:
//!
//! - the real `mdbook build docs` succeeds, and in what it wrote every local `href` and `src`
//!   names a file that exists and every `#fragment` an id on its page (mdBook itself does not
//!   fail on a broken link). mdBook [`MDBOOK_VERSION`] is installed with `cargo install` into
//!   `<target>/tools/mdbook-<version>/` when it is missing: the test never skips;
//! - the server's own `/docs` (`server/src/docs.rs`), crawled from `/docs`: every page reachable
//!   answers 200 with its content type, every link and image on it answers 200 and every
//!   `#fragment` names an id on its page; addresses elsewhere (`https://…`) are listed, not
//!   fetched (the tests run offline);
//! - README.md stays a front page (at most 250 lines) and every link in it to a file of the
//!   repository names one that exists (and for a chapter's `#fragment`, an id of that chapter).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use grand_melee_e2e::{TestServer, http_request_bytes};

/// The mdBook release the manual is built with.
const MDBOOK_VERSION: &str = "0.5.4";

/// README.md's most lines: a front page, the rest is in the book.
const README_MOST_LINES: usize = 250;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The workspace's target directory: `CARGO_TARGET_DIR` (relative to the workspace root when
/// relative), or `<workspace>/target`.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root().join(dir),
        _ => root().join("target"),
    }
}

/// The `cargo install` that puts mdBook into `dir`.
fn install_args(dir: &Path) -> Vec<String> {
    vec![
        "install".into(),
        "mdbook".into(),
        "--locked".into(),
        "--version".into(),
        MDBOOK_VERSION.into(),
        // Only `mdbook build` is needed: no local server, file watcher or search index.
        "--no-default-features".into(),
        "--root".into(),
        dir.display().to_string(),
        // Its build is kept beside it, so installing again (a removed binary) is quick.
        "--target-dir".into(),
        target_dir()
            .join("tools")
            .join("mdbook-build")
            .display()
            .to_string(),
    ]
}

/// The `mdbook` binary: mdBook [`MDBOOK_VERSION`] in `<target>/tools/mdbook-<version>/bin/`,
/// installed there with `cargo install` the first time (one test process at a time, behind a
/// lock file), checked with `--version`.
fn mdbook() -> PathBuf {
    static READY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _one_at_a_time = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = target_dir()
        .join("tools")
        .join(format!("mdbook-{MDBOOK_VERSION}"));
    READY
        .get_or_init(|| install(&dir))
        .clone()
        .unwrap_or_else(|why| {
            panic!(
                "the book test needs mdBook {MDBOOK_VERSION} and could not install it ({why}); \
                 install it by hand with `cargo {}`",
                install_args(&dir).join(" ")
            )
        })
}

/// Installs mdBook into `dir` unless a good one is there already.
fn install(dir: &Path) -> Result<PathBuf, String> {
    let binary = dir.join("bin").join("mdbook");
    if check_version(&binary).is_ok() {
        return Ok(binary);
    }
    let parent = dir.parent().unwrap();
    std::fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
    let lock_path = parent.join(format!("mdbook-{MDBOOK_VERSION}.lock"));
    let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("locking {}: {e}", lock_path.display()))?;
    // Another test process may have installed it while this one waited for the lock.
    if check_version(&binary).is_ok() {
        return Ok(binary);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let args = install_args(dir);
    eprintln!(
        "installing mdBook {MDBOOK_VERSION} for the book test (a few minutes, once): cargo {}",
        args.join(" ")
    );
    let status = Command::new(&cargo)
        .args(&args)
        .status()
        .map_err(|e| format!("running cargo install: {e}"))?;
    if !status.success() {
        return Err(format!("cargo install failed ({status})"));
    }
    check_version(&binary)?;
    eprintln!("installed {}", binary.display());
    Ok(binary)
}

/// Runs `binary --version` and checks that it is [`MDBOOK_VERSION`].
fn check_version(binary: &Path) -> Result<(), String> {
    let output = Command::new(binary)
        .arg("--version")
        .output()
        .map_err(|e| format!("running {} --version: {e}", binary.display()))?;
    let said = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && said.trim() == format!("mdbook v{MDBOOK_VERSION}") {
        Ok(())
    } else {
        Err(format!(
            "{} --version said {:?} ({})",
            binary.display(),
            said.trim(),
            output.status
        ))
    }
}

/// `text` without its `<script>…</script>` elements (mdBook's pages have inline scripts, whose
/// `<` are not tags).
fn without_scripts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<script") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</script>") {
            Some(end) => rest = &rest[start + end + "</script>".len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The values of attribute `name` (double-quoted, as both mdBook and the server write them) on
/// every tag of `html`, unescaped.
fn attributes(html: &str, name: &str) -> Vec<String> {
    let needle = format!("{name}=\"");
    let mut found = Vec::new();
    for tag in html.split('<').skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        let mut from = 0;
        while let Some(at) = tag[from..].find(&needle).map(|i| from + i) {
            from = at + needle.len();
            if !tag[..at].ends_with(char::is_whitespace) {
                continue;
            }
            let value = &tag[from..];
            let value = &value[..value.find('"').unwrap_or(value.len())];
            found.push(unescape(value));
        }
    }
    found
}

/// An attribute's text as the browser reads it (the entities HTML writers use).
fn unescape(value: &str) -> String {
    value
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `%XX` escapes decoded (a fragment or path as the browser compares it).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every `id` on a page.
fn ids(html: &str) -> BTreeSet<String> {
    attributes(&without_scripts(html), "id")
        .into_iter()
        .collect()
}

/// Whether `link` leaves the book: it has a scheme (`https:`, `mailto:`).
fn has_scheme(link: &str) -> bool {
    link.split_once(':').is_some_and(|(scheme, _)| {
        scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// `a/./b/../c` as `a/c`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// The chapters `SUMMARY.md` links, as their pages' names (`introduction.html`).
fn summary_pages() -> Vec<String> {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    summary
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|file| file.ends_with(".md"))
        .map(|file| file.replace(".md", ".html"))
        .collect()
}

/// Builds the book with the real mdBook into `dest`.
fn build_book(dest: &Path) {
    let mdbook = mdbook();
    let output = Command::new(&mdbook)
        .arg("build")
        .arg(root().join("docs"))
        .arg("--dest-dir")
        .arg(dest)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "mdbook build docs failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The mdBook build's broken links: for each page (but the all-in-one `print.html`, whose
/// links mdBook rewrites to its own anchors, and `404.html`, made for any path), every local
/// `href` and `src` that names no file, or a `#fragment` that names no id on its page.
fn broken_links_on_disk(out: &Path) -> Vec<String> {
    let mut pages = BTreeMap::new();
    for entry in std::fs::read_dir(out).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".html") {
            let html = std::fs::read_to_string(out.join(&name)).unwrap();
            pages.insert(name, html);
        }
    }
    let page_ids: BTreeMap<&String, BTreeSet<String>> =
        pages.iter().map(|(name, html)| (name, ids(html))).collect();
    let mut broken = Vec::new();
    for (name, html) in &pages {
        if name == "print.html" || name == "404.html" || name == "toc.html" {
            continue;
        }
        let html = without_scripts(html);
        let links = attributes(&html, "href")
            .into_iter()
            .chain(attributes(&html, "src"));
        for link in links {
            if has_scheme(&link) || link.starts_with("//") {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let path = percent_decoded(path.split('?').next().unwrap_or_default());
            let target = if path.is_empty() {
                name.clone()
            } else {
                normalize(&path)
            };
            if !out.join(&target).is_file() {
                broken.push(format!("{name}: {link}: no file {target}"));
                continue;
            }
            let fragment = percent_decoded(fragment);
            if !fragment.is_empty()
                && !page_ids
                    .get(&target)
                    .is_some_and(|ids| ids.contains(&fragment))
            {
                broken.push(format!("{name}: {link}: no id {fragment:?} on {target}"));
            }
        }
    }
    broken
}

#[test]
fn mdbook_builds_the_book_without_a_broken_link() {
    let out = tempfile::tempdir().unwrap();
    build_book(out.path());
    for page in summary_pages() {
        assert!(
            out.path().join(&page).is_file(),
            "mdbook wrote no {page} for SUMMARY.md's chapter"
        );
    }
    assert!(out.path().join("screenshots/forty-phone.png").is_file());
    let broken = broken_links_on_disk(out.path());
    assert!(
        broken.is_empty(),
        "broken links in the mdBook build:\n{}",
        broken.join("\n")
    );
}

/// One answer: status, content type and body (asked for without gzip).
struct Answer {
    status: u16,
    content_type: String,
    cache_control: String,
    body: Vec<u8>,
}

async fn get(addr: SocketAddr, path: &str) -> Answer {
    let wire = http_request_bytes(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
    )
    .await;
    let split = wire.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&wire[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let header = |name: &str| {
        head.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim().to_owned())
            .unwrap_or_default()
    };
    Answer {
        status,
        content_type: header("content-type"),
        cache_control: header("cache-control"),
        body: wire[split + 4..].to_vec(),
    }
}

#[tokio::test]
async fn the_servers_docs_have_no_broken_link() {
    let server = TestServer::start().await;
    let addr = server.addr;
    // Every page of the manual reached from /docs, by its path; the ids of every page fetched.
    // Each with the page that links it first.
    let mut queue = VecDeque::from([("/docs".to_owned(), "the start".to_owned())]);
    let mut seen = BTreeSet::from(["/docs".to_owned()]);
    let mut page_ids: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut links: Vec<(String, String)> = Vec::new();
    let mut external = BTreeSet::new();
    let mut broken = Vec::new();
    while let Some((path, from)) = queue.pop_front() {
        let answer = get(addr, &path).await;
        if answer.status != 200 {
            broken.push(format!("{from}: {path}: {}", answer.status));
            continue;
        }
        assert_eq!(answer.cache_control, "no-cache", "{path}");
        if !answer.content_type.starts_with("text/html") {
            continue;
        }
        let html = String::from_utf8(answer.body).unwrap();
        page_ids.insert(path.clone(), ids(&html));
        let found = attributes(&html, "href")
            .into_iter()
            .chain(attributes(&html, "src"));
        for link in found {
            if has_scheme(&link) || link.starts_with("//") {
                external.insert(link);
                continue;
            }
            let (target, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if target.is_empty() {
                path.clone()
            } else if target.starts_with('/') {
                target.to_owned()
            } else {
                // Relative to the page's folder.
                let folder = &path[..path.rfind('/').map_or(0, |i| i + 1)];
                format!("/{}", normalize(&format!("{folder}{target}")))
            };
            if !fragment.is_empty() {
                links.push((format!("{path}: {link}"), format!("{target}#{fragment}")));
            }
            if seen.insert(target.clone()) {
                // Only the manual's own pages are crawled; the rest (the lobby, the icon) must
                // answer.
                if target == "/docs" || target.starts_with("/docs/") {
                    queue.push_back((target, path.clone()));
                } else {
                    let answer = get(addr, &target).await;
                    if answer.status != 200 {
                        broken.push(format!("{path}: {link}: {}", answer.status));
                    }
                }
            }
        }
    }
    for (from, to) in &links {
        let (target, fragment) = to.split_once('#').unwrap();
        let fragment = percent_decoded(fragment);
        if let Some(ids) = page_ids.get(target)
            && !ids.contains(&fragment)
        {
            broken.push(format!("{from}: no id {fragment:?} on {target}"));
        }
    }
    eprintln!(
        "crawled {} pages of /docs; {} links to other sites, not fetched:\n  {}",
        page_ids.len(),
        external.len(),
        external.iter().cloned().collect::<Vec<_>>().join("\n  ")
    );
    assert!(broken.is_empty(), "broken in /docs:\n{}", broken.join("\n"));
    for page in summary_pages() {
        assert!(
            page_ids.contains_key(&format!("/docs/{page}")),
            "/docs/{page}, SUMMARY.md's chapter, is not reached from /docs: {:?}",
            page_ids.keys()
        );
    }
    assert!(seen.contains("/docs/screenshots/forty-phone.png"));
    let image = get(addr, "/docs/screenshots/forty-phone.png").await;
    assert_eq!(image.content_type, "image/png");
    assert_eq!(
        image.body,
        std::fs::read(root().join("docs/src/screenshots/forty-phone.png")).unwrap()
    );
    for missing in [
        "/docs/nothing.html",
        "/docs/SUMMARY.md",
        "/docs/../Cargo.toml",
    ] {
        let answer = get(addr, missing).await;
        assert_eq!(answer.status, 404, "{missing}");
        assert!(
            String::from_utf8_lossy(&answer.body).starts_with("not found: the lobby is at /"),
            "{missing}: the server's usual 404"
        );
    }
    server.shutdown().await;
}

#[test]
fn the_readme_is_a_front_page_whose_links_hold() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MOST_LINES,
        "README.md has {lines} lines: it is the front page (at most {README_MOST_LINES}); the \
         rest goes into the book under docs/src/"
    );
    // A chapter's fragments are checked against the chapter as mdBook renders it.
    let out = tempfile::tempdir().unwrap();
    build_book(out.path());
    let mut broken = Vec::new();
    let mut chapters = 0;
    for link in readme.split("](").skip(1) {
        let link = link.split(')').next().unwrap_or_default();
        if has_scheme(link) || link.starts_with('#') {
            continue;
        }
        let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
        if !root().join(path).exists() {
            broken.push(format!("{link}: no file {path}"));
            continue;
        }
        if let Some(chapter) = path
            .strip_prefix("docs/src/")
            .and_then(|p| p.strip_suffix(".md"))
        {
            chapters += 1;
            let html = out.path().join(format!("{chapter}.html"));
            let ids = std::fs::read_to_string(&html).map(|h| ids(&h));
            if fragment.is_empty() {
                continue;
            }
            if !ids.is_ok_and(|ids| ids.contains(fragment)) {
                broken.push(format!("{link}: no id {fragment:?} in {}", html.display()));
            }
        }
    }
    assert!(broken.is_empty(), "README.md:\n{}", broken.join("\n"));
    assert!(
        chapters >= 10,
        "README.md links the book's chapters ({chapters})"
    );
}
