//! The page's weight on the wire (issue 28: phones on a venue's network): the first load of the
//! page — `index.html` and every script and stylesheet it references, as a browser that takes
//! gzip fetches them — stays under 100 KB. The list of files is read from `index.html` itself,
//! so a file added to the page is counted without touching this test.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::io::Read;
use std::net::SocketAddr;

use grand_melee_e2e::{TestServer, http_request_bytes};

/// The page's budget on the wire, heads and bodies, in bytes.
const BUDGET: usize = 100_000;

/// One file as fetched: bytes on the wire (head and body), bytes of its gzipped body, and the
/// body decoded.
struct Fetched {
    wire: usize,
    body: usize,
    plain: Vec<u8>,
}

/// Fetches `path` as a browser taking gzip would.
async fn fetch(addr: SocketAddr, path: &str) -> Fetched {
    let wire = http_request_bytes(
        addr,
        &format!(
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip, deflate, br\r\nConnection: close\r\n\r\n"
        ),
    )
    .await;
    let split = wire.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(wire[..split].to_vec()).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{path}: {head}");
    let body = &wire[split + 4..];
    let gzipped = head
        .lines()
        .any(|line| line.eq_ignore_ascii_case("content-encoding: gzip"));
    assert!(gzipped, "{path} is served gzipped: {head}");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut plain)
        .unwrap();
    Fetched {
        wire: wire.len(),
        body: body.len(),
        plain,
    }
}

/// The value of `name` (quoted with `"` or `'`) in one tag's text.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before_ok = lower[..at].ends_with(|c: char| c.is_ascii_whitespace());
        let rest = lower[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let value = tag[tag.len() - rest.len() + 1..].trim_start();
        let quote = value.chars().next()?;
        if quote != '"' && quote != '\'' {
            return value
                .split(|c: char| c.is_ascii_whitespace() || c == '>')
                .next();
        }
        return value[1..].split(quote).next();
    }
    None
}

/// Every script's `src` and every stylesheet's and icon's `href` that `html` references, in order
/// (a browser fetches them all on the first load).
fn scripts_and_stylesheets(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for tag in html.split('<').skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        let name = tag.split_ascii_whitespace().next().unwrap_or("");
        let reference = if name.eq_ignore_ascii_case("script") {
            attribute(tag, "src")
        } else if name.eq_ignore_ascii_case("link")
            && attribute(tag, "rel").is_some_and(|rel| {
                rel.split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("stylesheet") || r.eq_ignore_ascii_case("icon"))
            })
        {
            attribute(tag, "href")
        } else {
            None
        };
        found.extend(reference.map(str::to_owned));
    }
    found
}

#[test]
fn the_references_are_read_from_the_tags() {
    let html = r#"<link rel="stylesheet" href="/a.css"><link rel=icon href="/i.png">
        <script defer src="/b.js"></script><script>inline()</script>
        <LINK REL='alternate stylesheet' HREF='/c.css'><script data-src="/no.js" src=/d.js>"#;
    assert_eq!(
        scripts_and_stylesheets(html),
        ["/a.css", "/i.png", "/b.js", "/c.css", "/d.js"]
    );
}

#[tokio::test]
async fn the_first_load_of_the_page_is_under_100_kb_on_the_wire() {
    let server = TestServer::start().await;
    let page = fetch(server.addr, "/").await;
    let html = String::from_utf8(page.plain.clone()).unwrap();
    let files = scripts_and_stylesheets(&html);
    assert!(
        files.iter().any(|f| f.ends_with(".css")) && files.iter().any(|f| f.ends_with(".js")),
        "index.html references its stylesheet and scripts: {files:?}"
    );
    eprintln!("page weight with gzip, in bytes: on the wire (head and body), gzipped body, plain");
    let line = |name: &str, fetched: &Fetched| {
        eprintln!(
            "{:>8} {:>8} {:>8}  {name}",
            fetched.wire,
            fetched.body,
            fetched.plain.len()
        );
    };
    line("/ (index.html)", &page);
    let (mut total, mut bodies, mut plain) = (page.wire, page.body, page.plain.len());
    for file in &files {
        assert!(
            file.starts_with('/') && !file.starts_with("//"),
            "every file comes from this server: {file}"
        );
        let fetched = fetch(server.addr, file).await;
        line(file, &fetched);
        total += fetched.wire;
        bodies += fetched.body;
        plain += fetched.plain.len();
    }
    eprintln!(
        "{total:>8} {bodies:>8} {plain:>8}  total ({} files)",
        files.len() + 1
    );
    // Not part of the first load (the page asks for it when it shows the table's link).
    let link = format!(
        "http://{}/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50",
        server.addr
    );
    let qr = fetch(
        server.addr,
        &format!(
            "/qr.svg?text={}",
            link.replace(':', "%3A").replace('/', "%2F")
        ),
    )
    .await;
    line("(not counted) /qr.svg for a table link", &qr);
    assert!(total < BUDGET, "{total} bytes on the wire, over {BUDGET}");
}
