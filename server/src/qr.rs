//! `GET /qr.svg?text=<percent-encoded link>`: a table's link as a QR code the page shows, so
//! the organiser shares a table with a phone camera instead of reading its id aloud.
//!
//! The code is made by the `qrcode` crate's SVG renderer: medium error correction, a quiet zone
//! of 4 modules, black on white (phones scan it in dark mode too), and a `viewBox` only, so it
//! scales to whatever size the page gives it. Only an `http://` or `https://` link of at most
//! [`MAX_TEXT_BYTES`] bytes is drawn; the answer depends on the query alone.
//!
//! Drawing a code (and gzipping it) costs milliseconds of CPU, so it never runs on the tasks that
//! serve the tables: [`Codes`] draws on one thread of its own, one code at a time, at most
//! [`CODES_PER_SECOND`] for the whole server, and each client address at most
//! `--qr-codes-per-minute`. The last [`CACHED_CODES`] codes drawn are kept, so a table's own
//! link, which every phone at the table asks for, is drawn once and then costs nothing and is
//! never refused.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use grand_melee_protocol::limit::TokenBucket;
use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};
use tokio::sync::oneshot;
use tracing::warn;

use crate::budget::Budgets;
use crate::metrics::Metrics;

/// How many drawn codes are kept (each a few kilobytes, plain and gzipped).
pub(crate) const CACHED_CODES: usize = 64;

/// The most codes the server draws per second, whoever asks (bursts of twice as many): about a
/// tenth of one core, whatever the number of addresses asking.
pub(crate) const CODES_PER_SECOND: f64 = grand_melee_protocol::server_limits::QR_CODES_PER_SECOND;

/// Codes waiting for the drawing thread; past it the answer is 503.
const QUEUED_CODES: usize = 8;

/// A code as served: the SVG and its gzipped bytes.
#[derive(Debug)]
pub(crate) struct Drawn {
    pub svg: Bytes,
    pub gzipped: Bytes,
}

/// What a `/qr.svg` request gets.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The code (200).
    Code(Arc<Drawn>),
    /// The query is wrong (400, with the reason).
    Refused(Refusal),
    /// The address has drawn `--qr-codes-per-minute` codes this minute (429).
    TooMany,
    /// The server draws no more codes this second (503).
    Busy,
}

/// One code to draw, and where its answer goes.
struct Job {
    text: String,
    reply: oneshot::Sender<Option<Drawn>>,
}

/// The server's QR codes: the cache, the drawing thread and the budgets.
pub(crate) struct Codes {
    cache: Mutex<Cache>,
    /// The server's own budget: [`CODES_PER_SECOND`].
    server: Mutex<TokenBucket>,
    jobs: std::sync::mpsc::SyncSender<Job>,
    budgets: Arc<Budgets>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Codes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Codes")
    }
}

/// The last [`CACHED_CODES`] codes, by text, the oldest forgotten first.
#[derive(Default)]
struct Cache {
    codes: HashMap<String, Arc<Drawn>>,
    order: VecDeque<String>,
}

impl Cache {
    fn get(&self, text: &str) -> Option<Arc<Drawn>> {
        self.codes.get(text).cloned()
    }

    fn insert(&mut self, text: String, drawn: Arc<Drawn>) {
        if self.codes.insert(text.clone(), drawn).is_none() {
            self.order.push_back(text);
        }
        while self.order.len() > CACHED_CODES {
            if let Some(oldest) = self.order.pop_front() {
                self.codes.remove(&oldest);
            }
        }
    }
}

impl Codes {
    /// The codes of one server: starts its drawing thread, which ends when this is dropped.
    pub(crate) fn new(budgets: Arc<Budgets>, metrics: Arc<Metrics>) -> Self {
        let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(QUEUED_CODES);
        let started = std::thread::Builder::new()
            .name("qr-codes".into())
            .spawn(move || {
                while let Ok(job) = queue.recv() {
                    let drawn = svg_of(&job.text).ok().map(|svg| Drawn {
                        gzipped: gzip(svg.as_bytes(), flate2::Compression::default()),
                        svg: Bytes::from(svg),
                    });
                    let _ = job.reply.send(drawn);
                }
            });
        if let Err(error) = started {
            // Every request then answers 503; the rest of the server is unaffected.
            warn!(%error, "cannot start the QR code thread");
        }
        Self {
            cache: Mutex::new(Cache::default()),
            server: Mutex::new(TokenBucket::new(
                2.0 * CODES_PER_SECOND,
                CODES_PER_SECOND,
                Instant::now(),
            )),
            jobs,
            budgets,
            metrics,
        }
    }

    /// The answer to `/qr.svg?<query>` from `client`: a cached code at once; otherwise, within
    /// the address's and the server's budgets, a code drawn on the drawing thread.
    pub(crate) async fn answer(&self, query: Option<&str>, client: IpAddr) -> Answer {
        let text = match text_of(query) {
            Ok(text) => text,
            Err(reason) => return Answer::Refused(reason),
        };
        if let Some(drawn) = lock(&self.cache).get(&text) {
            return Answer::Code(drawn);
        }
        let now = Instant::now();
        if !self.budgets.qr_codes.allows(&self.budgets.key(client), now) {
            Metrics::add(&self.metrics.qr_codes_refused, 1);
            return Answer::TooMany;
        }
        if !lock(&self.server).take(now) {
            Metrics::add(&self.metrics.qr_codes_refused, 1);
            return Answer::Busy;
        }
        self.budgets.qr_codes.charge(self.budgets.key(client), now);
        let (reply, drawn) = oneshot::channel();
        if self
            .jobs
            .try_send(Job {
                text: text.clone(),
                reply,
            })
            .is_err()
        {
            Metrics::add(&self.metrics.qr_codes_refused, 1);
            return Answer::Busy;
        }
        match drawn.await {
            Ok(Some(drawn)) => {
                Metrics::add(&self.metrics.qr_codes_drawn, 1);
                let drawn = Arc::new(drawn);
                lock(&self.cache).insert(text, Arc::clone(&drawn));
                Answer::Code(drawn)
            }
            Ok(None) => Answer::Refused("text does not fit in a QR code"),
            Err(_) => Answer::Busy,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing panics while holding these locks; if something did, the data is still sound.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// `bytes` gzipped (empty if the encoder fails, which writing to memory does not).
pub(crate) fn gzip(bytes: &[u8], level: flate2::Compression) -> Bytes {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), level);
    encoder
        .write_all(bytes)
        .and_then(|()| encoder.finish())
        .map(Bytes::from)
        .unwrap_or_default()
}

/// The longest text (decoded, in bytes) drawn as a QR code: a table link is under 100.
pub(crate) const MAX_TEXT_BYTES: usize = grand_melee_protocol::server_limits::MAX_QR_TEXT_BYTES;

/// Why a `/qr.svg` request is refused: one line of plain text for the 400 answer.
pub(crate) type Refusal = &'static str;

/// The link a `/qr.svg` query asks for: the percent-decoded value of its one `text` parameter,
/// an `http://` or `https://` link of at most [`MAX_TEXT_BYTES`] bytes. Other parameters are
/// ignored; `+` stays a plus (a link holds no spaces to encode that way).
pub(crate) fn text_of(query: Option<&str>) -> Result<String, Refusal> {
    let mut found = None;
    for pair in query.unwrap_or("").split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if name != "text" {
            continue;
        }
        if found.is_some() {
            return Err("more than one text parameter");
        }
        found = Some(value);
    }
    let raw = match found {
        Some(raw) if !raw.is_empty() => raw,
        _ => return Err("missing text: ask for /qr.svg?text=<percent-encoded http(s) link>"),
    };
    // Checked before decoding as well, so no long query is decoded at all (each decoded byte
    // takes one to three characters).
    if raw.len() > 3 * MAX_TEXT_BYTES {
        return Err("text is longer than 512 bytes");
    }
    let bytes = percent_decode(raw).ok_or("text is not valid percent-encoding")?;
    if bytes.len() > MAX_TEXT_BYTES {
        return Err("text is longer than 512 bytes");
    }
    let text = String::from_utf8(bytes).map_err(|_| "text is not UTF-8")?;
    if !is_web_link(&text) {
        return Err("text must be an http:// or https:// link");
    }
    Ok(text)
}

/// Decodes `%XX` escapes strictly: `None` for a `%` not followed by two hex digits.
fn percent_decode(raw: &str) -> Option<Vec<u8>> {
    let hex = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let mut bytes = raw.bytes();
    let mut out = Vec::with_capacity(raw.len());
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let high = hex(bytes.next()?)?;
            let low = hex(bytes.next()?)?;
            out.push(high << 4 | low);
        } else {
            out.push(b);
        }
    }
    Some(out)
}

/// Whether `text` is an absolute `http://` or `https://` link with a host, and nothing a
/// camera app would show oddly (no control characters or spaces).
fn is_web_link(text: &str) -> bool {
    let scheme_ok = ["http://", "https://"].iter().any(|scheme| {
        text.get(..scheme.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
    });
    scheme_ok
        && !text.chars().any(|c| c.is_control() || c.is_whitespace())
        && url::Url::parse(text).is_ok_and(|url| url.host().is_some())
}

/// `text` as an SVG QR code (medium error correction, a 4-module quiet zone, black on white,
/// one unit per module in a `viewBox`, no fixed size). `Err` only for text too long for any
/// QR code, which [`text_of`] never lets through.
pub(crate) fn svg_of(text: &str) -> Result<String, Refusal> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
        .map_err(|_| "text does not fit in a QR code")?;
    let image = code
        .render::<svg::Color<'_>>()
        .quiet_zone(true)
        .module_dimensions(1, 1)
        .dark_color(svg::Color("#000"))
        .light_color(svg::Color("#fff"))
        .build();
    // The renderer writes the size twice, as width/height and as the viewBox: keep only the
    // viewBox so the image takes the size the page gives it.
    let side = code.width() + 8;
    Ok(image.replacen(
        &format!(r#" width="{side}" height="{side}" viewBox"#),
        " viewBox",
        1,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_query_names_one_http_link() {
        let link = "https://melee.example/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50";
        assert_eq!(
            text_of(Some(
                "text=https%3A%2F%2Fmelee.example%2Ft%2F5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50"
            )),
            Ok(link.to_owned())
        );
        assert_eq!(
            text_of(Some(&format!("v=2&text={link}"))),
            Ok(link.to_owned())
        );
        assert_eq!(
            text_of(Some("text=HTTP://127.0.0.1:8080/?a=1+2")),
            Ok("HTTP://127.0.0.1:8080/?a=1+2".to_owned())
        );
        assert_eq!(
            text_of(Some("text=http%3A%2F%2Fb%C3%BCcher.example%2F")),
            Ok("http://bücher.example/".to_owned())
        );
        let longest = format!("http://a.example/{}", "x".repeat(512 - 17));
        assert_eq!(text_of(Some(&format!("text={longest}"))), Ok(longest));
    }

    #[test]
    fn the_query_is_refused_with_its_reason() {
        let too_long = format!("text=http://a.example/{}", "x".repeat(512 - 16));
        let too_long_escaped = format!("text=http://a.example/{}", "%41".repeat(500));
        for (query, reason) in [
            (None, "missing text"),
            (Some(""), "missing text"),
            (Some("text="), "missing text"),
            (Some("text"), "missing text"),
            (Some("link=http://a.example/"), "missing text"),
            (Some("text=http://a.example/%4"), "percent-encoding"),
            (Some("text=http://a.example/%zz"), "percent-encoding"),
            (Some("text=http://a.example/%"), "percent-encoding"),
            (Some("text=http://a.example/%FF"), "not UTF-8"),
            (Some(too_long.as_str()), "longer than 512 bytes"),
            (Some(too_long_escaped.as_str()), "longer than 512 bytes"),
            (Some("text=ftp://a.example/"), "http:// or https://"),
            (Some("text=javascript:alert(1)"), "http:// or https://"),
            (Some("text=hello"), "http:// or https://"),
            (Some("text=http://"), "http:// or https://"),
            (Some("text=http://a.example/%0Ax"), "http:// or https://"),
            (Some("text=http://a.example/%20x"), "http:// or https://"),
            (Some("text=http://a/&text=http://b/"), "more than one"),
        ] {
            let refused = text_of(query).unwrap_err();
            assert!(refused.contains(reason), "{query:?}: {refused}");
            assert!(!refused.contains('\n'), "{refused}");
        }
    }

    /// However many addresses ask at once, the server draws at most its burst of
    /// [`CODES_PER_SECOND`] (the rest answer `Busy` at once, 503), on its one thread.
    #[tokio::test]
    async fn the_server_draws_at_most_its_own_budget_whoever_asks() {
        let config = crate::config::ServerConfig::default();
        let codes = Arc::new(Codes::new(
            Arc::new(Budgets::new(&config)),
            Arc::new(Metrics::default()),
        ));
        let asks = (0..100u8).map(|i| {
            let codes = Arc::clone(&codes);
            tokio::spawn(async move {
                let query = format!("text=http://a.example/{i}");
                let client = IpAddr::from([10, 0, 0, i]);
                codes.answer(Some(&query), client).await
            })
        });
        let answers = futures_util::future::join_all(asks).await;
        let drawn = answers
            .iter()
            .filter(|a| matches!(a, Ok(Answer::Code(_))))
            .count();
        let busy = answers
            .iter()
            .filter(|a| matches!(a, Ok(Answer::Busy)))
            .count();
        assert_eq!(drawn + busy, 100);
        // The burst, plus what one second could refill at most while they were asked.
        assert!(drawn <= (3.0 * CODES_PER_SECOND) as usize, "{drawn} drawn");
        assert!(busy >= 50, "{busy} busy");
        // A cached code is served whatever the budgets say.
        let cached = answers.iter().find_map(|a| match a {
            Ok(Answer::Code(drawn)) => Some(Arc::clone(drawn)),
            _ => None,
        });
        assert!(cached.is_some());
    }

    #[test]
    fn the_svg_scales_and_is_black_on_white() {
        let svg = svg_of("http://127.0.0.1:8080/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50").unwrap();
        let root = &svg[svg.find("<svg").unwrap()..];
        let root = &root[..root.find('>').unwrap()];
        assert!(root.contains(r#"viewBox="0 0 "#), "{root}");
        assert!(!root.contains("width="), "{root}");
        assert!(!root.contains("height="), "{root}");
        assert!(svg.contains(r##"fill="#fff""##), "{svg}");
        assert!(svg.contains(r##"fill="#000""##), "{svg}");
    }
}
