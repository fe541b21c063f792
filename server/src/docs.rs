//! The manual at `/docs`: the mdBook under `docs/` (its chapters, `SUMMARY.md`'s order and the
//! screenshots), embedded at build time (`build.rs`) and rendered by the server from the same
//! markdown, so a LAN evening has its manual offline and the binary needs no files.
//!
//! `GET /docs` (and `/docs/`, `/docs/index.html`) is the first chapter, `/docs/<chapter>.html`
//! each chapter of `SUMMARY.md`, `/docs/book.css` the stylesheet and `/docs/<path>` any other
//! file under `docs/src/` (the screenshots, served as they are). The markdown is read as mdBook
//! reads it: `{{#include PATH}}` pulls a file in (relative to the chapter, recursively),
//! pulldown-cmark with mdBook's options parses it, headings get mdBook's ids (the text, lower
//! case, white space as `-`, other punctuation dropped; `-1`, `-2` … for a repeat), and a link
//! to `x.md#f` becomes `/docs/x.html#f`. Raw HTML in the markdown is shown as text, never passed
//! through. Each page is rendered on its first request (on a blocking thread: see
//! [`crate::http`]) and kept, with its gzipped copy and entity tag.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::OnceLock;

use bytes::Bytes;
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::book_paths::{folder, normalize};

include!(concat!(env!("OUT_DIR"), "/book.rs"));

/// The manual's stylesheet, at `/docs/book.css`.
const STYLESHEET: &str = include_str!("../web/docs.css");

/// Where the manual is served.
pub(crate) const PREFIX: &str = "/docs";

/// The deepest `{{#include}}` nesting followed (mdBook's own limit).
const MAX_INCLUDE_DEPTH: usize = 10;

/// One file of the manual, ready to serve.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) content_type: &'static str,
    pub(crate) plain: Bytes,
    /// The gzipped copy, for what gains from it (not the PNGs).
    pub(crate) gzipped: Option<Bytes>,
    /// A strong entity tag of the content.
    pub(crate) etag: String,
}

/// One chapter as `SUMMARY.md` lists it.
#[derive(Debug)]
struct Chapter {
    /// The link's text in `SUMMARY.md`.
    title: String,
    /// The markdown file, relative to `docs/src/` (`introduction.md`).
    file: String,
    /// 0 for a top-level entry, 1 for one nested under it, …
    depth: usize,
}

impl Chapter {
    /// The page's name under `/docs/`: the file with `.html` for `.md`.
    fn page(&self) -> String {
        html_name(&self.file)
    }
}

/// The book: its title and chapters, each chapter's page made once.
#[derive(Debug)]
struct Book {
    title: String,
    chapters: Vec<Chapter>,
    pages: Vec<OnceLock<Served>>,
    files: Vec<OnceLock<Served>>,
    stylesheet: OnceLock<Served>,
}

fn book() -> &'static Book {
    static BOOK: OnceLock<Book> = OnceLock::new();
    BOOK.get_or_init(|| {
        let chapters = summary(&text_of("SUMMARY.md").unwrap_or_default());
        Book {
            title: title(BOOK_TOML),
            pages: chapters.iter().map(|_| OnceLock::new()).collect(),
            files: FILES.iter().map(|_| OnceLock::new()).collect(),
            stylesheet: OnceLock::new(),
            chapters,
        }
    })
}

/// Whether `path` is the manual's (`/docs` or below it).
pub(crate) fn is_docs(path: &str) -> bool {
    path == PREFIX || path.starts_with("/docs/")
}

/// The file `path` names, made on first use; `None` for anything the manual does not have.
/// Renders markdown on a page's first request: call it off the async threads.
pub(crate) fn find(path: &str) -> Option<&'static Served> {
    let book = book();
    let rest = path.strip_prefix(PREFIX)?;
    let name = match rest {
        "" | "/" | "/index.html" => return page(book, 0),
        _ => rest.strip_prefix('/')?,
    };
    if name == "book.css" {
        return Some(
            book.stylesheet
                .get_or_init(|| prepare("text/css; charset=utf-8", STYLESHEET.as_bytes(), true)),
        );
    }
    if let Some(index) = book.chapters.iter().position(|c| c.page() == name) {
        return page(book, index);
    }
    // Any other file under docs/src, but for the markdown (the chapters are served rendered).
    let index = FILES
        .iter()
        .position(|(file, _)| *file == name && !file.starts_with("../"))?;
    let (file, bytes) = FILES.get(index)?;
    if file.ends_with(".md") {
        return None;
    }
    let content_type = content_type(file);
    let compress = !content_type.starts_with("image/") || content_type.starts_with("image/svg");
    Some(
        book.files
            .get(index)?
            .get_or_init(|| prepare(content_type, bytes, compress)),
    )
}

/// Chapter `index`'s page, rendered on first use.
fn page(book: &'static Book, index: usize) -> Option<&'static Served> {
    book.chapters.get(index)?;
    let cell = book.pages.get(index)?;
    Some(cell.get_or_init(|| {
        let html = render_page(book, index);
        prepare("text/html; charset=utf-8", html.as_bytes(), true)
    }))
}

fn prepare(content_type: &'static str, bytes: &[u8], compress: bool) -> Served {
    Served {
        content_type,
        plain: Bytes::copy_from_slice(bytes),
        gzipped: compress.then(|| crate::qr::gzip(bytes, flate2::Compression::default())),
        etag: etag_of(bytes),
    }
}

/// A strong entity tag: FNV-1a (64 bits) of the content, as the page's other files have.
fn etag_of(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("\"{hash:016x}-{}\"", bytes.len())
}

fn content_type(file: &str) -> &'static str {
    let extension = file.rsplit('.').next().unwrap_or_default();
    match extension.to_ascii_lowercase().as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "css" => "text/css; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// An embedded file as text (`None` if the build embedded no such file).
fn text_of(file: &str) -> Option<String> {
    FILES
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
}

/// `book.toml`'s `title`, or a plain one.
fn title(toml: &str) -> String {
    toml.lines()
        .filter_map(|line| line.trim().strip_prefix("title"))
        .filter_map(|rest| rest.trim_start().strip_prefix('='))
        .map(|value| value.trim().trim_matches('"').to_owned())
        .next()
        .unwrap_or_else(|| "Manual".to_owned())
}

/// The chapters `SUMMARY.md` links, in order, with their nesting.
fn summary(text: &str) -> Vec<Chapter> {
    let mut chapters = Vec::new();
    let mut depth = 0_usize;
    let mut open: Option<(String, String)> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::List(_)) => depth += 1,
            Event::End(TagEnd::List(_)) => depth = depth.saturating_sub(1),
            Event::Start(Tag::Link { dest_url, .. }) => {
                open = Some((dest_url.to_string(), String::new()));
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some((_, title)) = open.as_mut() {
                    title.push_str(&text);
                }
            }
            Event::End(TagEnd::Link) => {
                if let Some((file, title)) = open.take()
                    && !file.is_empty()
                {
                    chapters.push(Chapter {
                        title,
                        file: normalize(&file),
                        depth: depth.saturating_sub(1),
                    });
                }
            }
            _ => {}
        }
    }
    chapters
}

/// Chapter `index` as a whole HTML page: the chapter, the way to the previous and next ones,
/// and the table of contents.
fn render_page(book: &Book, index: usize) -> String {
    let Some(chapter) = book.chapters.get(index) else {
        return String::new();
    };
    let source = text_of(&chapter.file).unwrap_or_default();
    let markdown = expand_includes(&source, folder(&chapter.file), 0);
    let body = render_markdown(&markdown, folder(&chapter.file));
    let mut html = String::with_capacity(body.len() + 4096);
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} · {}</title>\n<link rel=\"stylesheet\" href=\"{PREFIX}/book.css\">\n\
         <link rel=\"icon\" href=\"/assets/icon.svg\">\n</head>\n<body>\n\
         <header class=\"bar\"><a class=\"book\" href=\"{PREFIX}/\">{}</a>\
         <a class=\"skip\" href=\"#contents\">Contents</a><a href=\"/\">Lobby</a></header>\n\
         <div class=\"layout\">\n<main>\n{body}",
        escape(&chapter.title),
        escape(&book.title),
        escape(&book.title),
    );
    html.push_str("<nav class=\"pager\" aria-label=\"Previous and next chapter\">");
    if let Some(previous) = index.checked_sub(1).and_then(|i| book.chapters.get(i)) {
        let _ = write!(
            html,
            "<a rel=\"prev\" href=\"{PREFIX}/{}\">← {}</a>",
            escape(&previous.page()),
            escape(&previous.title)
        );
    }
    if let Some(next) = book.chapters.get(index + 1) {
        let _ = write!(
            html,
            "<a rel=\"next\" href=\"{PREFIX}/{}\">{} →</a>",
            escape(&next.page()),
            escape(&next.title)
        );
    }
    html.push_str("</nav>\n</main>\n");
    html.push_str(
        "<nav id=\"contents\" class=\"contents\" aria-label=\"Contents\">\n<h2>Contents</h2>\n",
    );
    contents(&mut html, book, index);
    html.push_str("</nav>\n</div>\n</body>\n</html>\n");
    html
}

/// The table of contents as nested lists, the current chapter marked.
fn contents(html: &mut String, book: &Book, current: usize) {
    let mut depth = 0;
    html.push_str("<ol>");
    for (i, chapter) in book.chapters.iter().enumerate() {
        if i > 0 {
            if chapter.depth > depth {
                // A nested list opens inside the previous item.
                for _ in depth..chapter.depth {
                    html.push_str("<ol>");
                }
            } else {
                html.push_str("</li>");
                for _ in chapter.depth..depth {
                    html.push_str("</ol></li>");
                }
            }
        }
        depth = chapter.depth;
        let marked = if i == current {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            html,
            "<li><a href=\"{PREFIX}/{}\"{marked}>{}</a>",
            escape(&chapter.page()),
            escape(&chapter.title)
        );
    }
    if !book.chapters.is_empty() {
        html.push_str("</li>");
    }
    for _ in 0..depth {
        html.push_str("</ol></li>");
    }
    html.push_str("</ol>\n");
}

/// `text` with every `{{#include PATH}}` replaced by the file (relative to `folder`, the
/// including file's folder below docs/src), as mdBook's links preprocessor does; an escaped
/// `\{{#include …}}` is left as text without its backslash.
fn expand_includes(text: &str, folder_of_text: &str, depth: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("{{") {
        let Some(end) = rest[at..].find("}}").map(|e| at + e) else {
            break;
        };
        let inner = rest[at + 2..end].trim();
        let Some(path) = inner.strip_prefix("#include").map(str::trim) else {
            out.push_str(&rest[..at + 2]);
            rest = &rest[at + 2..];
            continue;
        };
        if rest[..at].ends_with('\\') {
            out.push_str(&rest[..at - 1]);
            out.push_str(&rest[at..end + 2]);
        } else {
            out.push_str(&rest[..at]);
            let file = normalize(&format!("{folder_of_text}{path}"));
            match text_of(&file) {
                Some(included) if depth < MAX_INCLUDE_DEPTH => {
                    out.push_str(&expand_includes(&included, folder(&file), depth + 1));
                }
                _ => out.push_str(&rest[at..end + 2]),
            }
        }
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The markdown options mdBook 0.5 parses with (its defaults: smart punctuation, definition
/// lists and GitHub's admonitions on).
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_SMART_PUNCTUATION
        | Options::ENABLE_DEFINITION_LIST
        | Options::ENABLE_GFM
}

/// One chapter's markdown as HTML: links rewritten for `/docs`, headings with mdBook's ids,
/// raw HTML shown as text.
fn render_markdown(markdown: &str, folder_of_chapter: &str) -> String {
    let mut events: Vec<Event<'_>> = Parser::new_ext(markdown, options())
        .map(|event| match event {
            // Raw HTML is shown, never passed through.
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            Event::Start(Tag::HtmlBlock) => Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(
                CowStr::Borrowed("html"),
            ))),
            Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::CodeBlock),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Link {
                link_type,
                dest_url: link(&dest_url, folder_of_chapter).into(),
                title,
                id,
            }),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Image {
                link_type,
                dest_url: link(&dest_url, folder_of_chapter).into(),
                title,
                id,
            }),
            other => other,
        })
        .collect();
    add_heading_ids(&mut events);
    // Each table in a box of its own that scrolls sideways when the table is wider than the
    // screen (the page itself never does). The only HTML not from pulldown-cmark's writer.
    let events = events.into_iter().flat_map(|event| match event {
        Event::Start(Tag::Table(_)) => vec![Event::Html("<div class=\"table\">".into()), event],
        Event::End(TagEnd::Table) => vec![event, Event::Html("</div>".into())],
        other => vec![other],
    });
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// Gives every heading without an explicit `{#id}` mdBook's id from its text, unique on the
/// page.
fn add_heading_ids(events: &mut [Event<'_>]) {
    let mut used = HashSet::new();
    // Explicit ids are taken first, as they are written.
    for event in events.iter() {
        if let Event::Start(Tag::Heading { id: Some(id), .. }) = event {
            used.insert(id.to_string());
        }
    }
    let mut i = 0;
    while i < events.len() {
        if matches!(
            events.get(i),
            Some(Event::Start(Tag::Heading { id: None, .. }))
        ) {
            let mut text = String::new();
            let mut j = i + 1;
            while let Some(event) = events.get(j) {
                match event {
                    Event::End(TagEnd::Heading(_)) => break,
                    Event::Text(t) | Event::Code(t) | Event::InlineMath(t) => text.push_str(t),
                    _ => {}
                }
                j += 1;
            }
            let id = unique_id(&id_from_content(&text), &mut used);
            if let Some(Event::Start(Tag::Heading { id: slot, .. })) = events.get_mut(i) {
                *slot = Some(id.into());
            }
            i = j;
        }
        i += 1;
    }
}

/// mdBook's id for a heading's text: trimmed, lower case, letters, digits, `_` and `-` kept,
/// white space as `-`, everything else dropped.
fn id_from_content(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c)
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// `id`, or `id-1`, `id-2` … the first not yet on the page.
fn unique_id(id: &str, used: &mut HashSet<String>) -> String {
    if used.insert(id.to_owned()) {
        return id.to_owned();
    }
    (1_u32..)
        .map(|n| format!("{id}-{n}"))
        .find(|candidate| used.insert(candidate.clone()))
        .unwrap_or_default()
}

/// A link or image address in a chapter as served: another chapter's `x.md#f` is
/// `/docs/x.html#f`, a file under docs/src `/docs/<path>`; a fragment of the same page, an
/// absolute path and an address with a scheme (`https:`, `mailto:`) stay as written.
fn link(dest: &str, folder_of_chapter: &str) -> String {
    if dest.is_empty() || dest.starts_with('#') || dest.starts_with('/') || has_scheme(dest) {
        return dest.to_owned();
    }
    let (path, fragment) = match dest.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (dest, None),
    };
    let path = normalize(&format!("{folder_of_chapter}{path}"));
    let mut out = format!("{PREFIX}/{}", html_name(&path));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// Whether `dest` starts with a URL scheme (`https:`, `mailto:` …).
fn has_scheme(dest: &str) -> bool {
    let Some((scheme, _)) = dest.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A chapter file's page: `x.md` as `x.html`, anything else as it is.
fn html_name(file: &str) -> String {
    match file.strip_suffix(".md") {
        Some(stem) => format!("{stem}.html"),
        None => file.to_owned(),
    }
}

/// `text` safe in HTML text and in a double-quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_mdbooks() {
        assert_eq!(
            id_from_content("Cluster mode: several nodes, tables that survive a dead machine"),
            "cluster-mode-several-nodes-tables-that-survive-a-dead-machine"
        );
        assert_eq!(
            id_from_content("16. Ascension leagues"),
            "16-ascension-leagues"
        );
        assert_eq!(id_from_content(" Today’s mountain "), "todays-mountain");
        let mut used = HashSet::new();
        assert_eq!(unique_id("a", &mut used), "a");
        assert_eq!(unique_id("a", &mut used), "a-1");
        assert_eq!(unique_id("a", &mut used), "a-2");
    }

    #[test]
    fn links_point_into_docs() {
        assert_eq!(link("tls.md", ""), "/docs/tls.html");
        assert_eq!(link("rules.md#16-x", ""), "/docs/rules.html#16-x");
        assert_eq!(link("screenshots/a.png", ""), "/docs/screenshots/a.png");
        assert_eq!(link("#here", ""), "#here");
        assert_eq!(link("https://nats.io", ""), "https://nats.io");
        assert_eq!(link("mailto:a@b", ""), "mailto:a@b");
        assert_eq!(link("./a/../b.md", ""), "/docs/b.html");
    }

    #[test]
    fn includes_are_expanded_and_escapes_kept() {
        // rules.md is itself `{{#include ../RULES.md}}`: followed to RULES.md.
        let text = expand_includes("a {{#include rules.md}} b \\{{#include x.md}} c", "", 0);
        assert!(text.starts_with("a # Grand Melee rules"), "{text:.60}");
        assert!(text.contains("Ascension leagues"));
        assert!(
            text.ends_with(" b {{#include x.md}} c"),
            "the escaped one is text"
        );
        assert_eq!(
            expand_includes("{{#include nowhere.md}}", "", 0),
            "{{#include nowhere.md}}"
        );
    }

    #[test]
    fn raw_html_is_text_and_headings_have_ids() {
        let html = render_markdown(
            "# A b & `c`\n\n<script>x</script>\n\n## A b & c\n\n[x](y.md#z \"t\")\n",
            "",
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("<h1 id=\"a-b--c\">"), "{html}");
        assert!(html.contains("<h2 id=\"a-b--c-1\">"), "{html}");
        assert!(html.contains("href=\"/docs/y.html#z\""), "{html}");
    }

    #[test]
    fn every_summary_chapter_renders_and_unknown_paths_are_none() {
        for chapter in &book().chapters {
            let served = find(&format!("/docs/{}", chapter.page())).unwrap();
            assert!(served.content_type.starts_with("text/html"));
        }
        assert!(find("/docs").is_some());
        assert!(find("/docs/").is_some());
        assert!(find("/docs/book.css").is_some());
        assert_eq!(
            find("/docs/screenshots/forty-phone.png")
                .unwrap()
                .content_type,
            "image/png"
        );
        for missing in [
            "/docs/nothing.html",
            "/docs/SUMMARY.md",
            "/docs/introduction.md",
            "/docs/../Cargo.toml",
            "/docs/screenshots/",
            "/docsx",
            "/docs//introduction.html",
        ] {
            assert!(find(missing).is_none(), "{missing}");
        }
    }
}
