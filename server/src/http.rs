//! Plain HTTP on the server's one port, served by hyper: the browser seat's pages and assets
//! (embedded in the binary), `GET /healthz`, `GET /metrics`, and the WebSocket handshake at
//! `GET /ws`, after which the connection is handed to [`crate::connection`] as a raw stream.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::upgrade::OnUpgrade;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tracing::debug;

/// Largest request head the server reads.
const MAX_HEAD_BYTES: usize = 8 * 1024;
const MAX_HEADERS: usize = 32;

/// The page's Content-Security-Policy: nothing from anywhere but this server, no inline script
/// or style, no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// What one HTTP connection needs to know, besides the request.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    /// `--allowed-origins`; the server's own origin is always allowed too.
    pub allowed_origins: Arc<[String]>,
    /// Whether the connection came in over TLS (the page's own origin is then `https://…`).
    pub secure: bool,
    /// `--web-dir`: serve the page's files from this folder instead of the embedded copies.
    pub web_dir: Option<PathBuf>,
    /// Renders `/metrics`.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// How long a client may take to send a request head.
    pub handshake_timeout: Duration,
}

/// Serves HTTP requests on one connection until it closes, or until a request upgrades it to a
/// WebSocket: then returns the connection's own stream and the bytes the client sent after its
/// request head (the 101 answer has been sent).
///
/// The WebSocket path stays lean: the first request head is read here into a small buffer, and
/// a valid upgrade at `/ws` is answered at once, without hyper (whose per-connection buffers
/// would otherwise be allocated and freed on every one of thousands of seats). Everything else —
/// pages, assets, health, metrics, every malformed or refused request — goes to hyper, which
/// gets the bytes already read first.
pub(crate) async fn serve<S>(mut io: S, site: Site) -> Option<(S, Vec<u8>)>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let head = tokio::time::timeout(site.handshake_timeout, read_head(&mut io)).await;
    let read = match head {
        Ok(Ok(read)) => read,
        Ok(Err(error)) => {
            debug!(%error, "reading a request head");
            return None;
        }
        Err(_) => {
            debug!("request head timed out");
            return None;
        }
    };
    if let Some(head_len) = read.complete
        && let Some(accept) = fast_upgrade(&read.bytes[..head_len], &site)
    {
        let answer = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        );
        if let Err(error) = io.write_all(answer.as_bytes()).await {
            debug!(%error, "answering a websocket handshake");
            return None;
        }
        return Some((io, read.bytes[head_len..].to_vec()));
    }
    if read.bytes.is_empty() {
        return None;
    }
    // Boxed: hyper's state is large and only page loads need it.
    Box::pin(with_hyper(Rewind::new(read.bytes, io), site)).await
}

/// What was read of a connection's first request.
struct Head {
    bytes: Vec<u8>,
    /// The length of the request head, if all of it came (and parsed).
    complete: Option<usize>,
}

/// Reads until the first request head is complete, malformed, too large, or the client stops.
async fn read_head<S: AsyncRead + Unpin>(io: &mut S) -> std::io::Result<Head> {
    let mut bytes = Vec::with_capacity(1024);
    loop {
        let mut chunk = [0u8; 1024];
        let n = io.read(&mut chunk).await?;
        if n == 0 {
            return Ok(Head {
                bytes,
                complete: None,
            });
        }
        bytes.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        match httparse::Request::new(&mut headers).parse(&bytes) {
            Ok(httparse::Status::Complete(len)) => {
                return Ok(Head {
                    bytes,
                    complete: Some(len),
                });
            }
            Ok(httparse::Status::Partial) if bytes.len() < MAX_HEAD_BYTES => {}
            // Malformed or too large: hyper gives the answer (400, 431).
            _ => {
                return Ok(Head {
                    bytes,
                    complete: None,
                });
            }
        }
    }
}

/// The `Sec-WebSocket-Accept` value if `head` is a valid WebSocket handshake at `/ws` from an
/// allowed origin; `None` for anything else (hyper then answers it, refusals included).
fn fast_upgrade(head: &[u8], site: &Site) -> Option<String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    request.parse(head).ok()?;
    if request.method != Some("GET") || request.path != Some("/ws") {
        return None;
    }
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
            .map(str::trim)
    };
    let is_upgrade = header("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let connection = header("connection").is_some_and(|v| {
        v.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
    });
    let version = header("sec-websocket-version") == Some("13");
    let key = header("sec-websocket-key")?;
    let origin_ok = header("origin").is_none_or(|o| origin_allowed(o, header("host"), site));
    (is_upgrade && connection && version && origin_ok).then(|| derive_accept_key(key.as_bytes()))
}

/// hyper on the connection, for everything but the WebSocket fast path.
async fn with_hyper<S>(io: Rewind<S>, site: Site) -> Option<(S, Vec<u8>)>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let upgrade: Arc<Mutex<Option<OnUpgrade>>> = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&upgrade);
    let timeout = site.handshake_timeout.max(Duration::from_millis(100));
    let site = Arc::new(site);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let site = Arc::clone(&site);
        let slot = Arc::clone(&slot);
        async move { Ok::<_, std::convert::Infallible>(answer(request, &site, &slot)) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(timeout)
        .max_headers(MAX_HEADERS)
        .max_buf_size(MAX_HEAD_BYTES.max(8192))
        .keep_alive(true);
    let connection = builder
        .serve_connection(TokioIo::new(io), service)
        .with_upgrades();
    if let Err(error) = connection.await {
        debug!(%error, "http connection");
    }
    // A WebSocket asked for after other requests on the same connection (a browser reusing a
    // kept-alive connection): hyper answered the handshake; take the stream back from it.
    let pending = upgrade.lock().ok()?.take()?;
    let upgraded = match pending.await {
        Ok(upgraded) => upgraded,
        Err(error) => {
            debug!(%error, "websocket upgrade");
            return None;
        }
    };
    match upgraded.downcast::<TokioIo<Rewind<S>>>() {
        Ok(parts) => {
            let (io, mut rest) = parts.io.into_inner().into_inner();
            rest.extend_from_slice(&parts.read_buf);
            Some((io, rest))
        }
        Err(_) => {
            debug!("websocket upgrade: not the connection's own stream");
            None
        }
    }
}

/// A stream with bytes already read from it put back in front.
#[derive(Debug)]
struct Rewind<S> {
    prefix: Vec<u8>,
    at: usize,
    io: S,
}

impl<S> Rewind<S> {
    fn new(prefix: Vec<u8>, io: S) -> Self {
        Self { prefix, at: 0, io }
    }

    /// The stream, and what of the prefix was not read.
    fn into_inner(self) -> (S, Vec<u8>) {
        (self.io, self.prefix[self.at..].to_vec())
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if self.at < self.prefix.len() {
            let n = (self.prefix.len() - self.at).min(buf.remaining());
            let at = self.at;
            buf.put_slice(&self.prefix[at..at + n]);
            self.at += n;
            if self.at == self.prefix.len() {
                self.prefix = Vec::new();
                self.at = 0;
            }
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Answers one request.
fn answer(
    mut request: Request<Incoming>,
    site: &Site,
    upgrade: &Mutex<Option<OnUpgrade>>,
) -> Response<Full<Bytes>> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    if method != Method::GET && method != Method::HEAD {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let mut response = match path.as_str() {
        "/healthz" => text(StatusCode::OK, "ok\n"),
        "/metrics" => {
            let mut response = text(StatusCode::OK, &site.metrics.render());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            response
        }
        "/ws" => {
            return websocket(&mut request, site, upgrade);
        }
        path => match page_or_asset(path) {
            Some(name) => file(name, request.headers(), site),
            None => text(
                StatusCode::NOT_FOUND,
                "not found: the lobby is at /, a table at /t/<table id>, the leagues at /leagues; the WebSocket endpoint is /ws\n",
            ),
        },
    };
    if method == Method::HEAD {
        *response.body_mut() = Full::new(Bytes::new());
    }
    response
}

/// The file a path names: the page for every route of the single-page app, or an asset.
fn page_or_asset(path: &str) -> Option<&'static str> {
    let is_id = |s: &str| uuid::Uuid::parse_str(s).is_ok();
    match path {
        "/" | "/replays" | "/replays/" | "/leagues" | "/leagues/" => Some("index.html"),
        _ if path
            .strip_prefix("/t/")
            .or_else(|| path.strip_prefix("/replays/"))
            .or_else(|| path.strip_prefix("/leagues/"))
            .is_some_and(|id| is_id(id.trim_end_matches('/'))) =>
        {
            Some("index.html")
        }
        _ => {
            let name = path.strip_prefix("/assets/")?;
            ASSETS.iter().find(|a| a.name == name).map(|a| a.name)
        }
    }
}

/// One file of the page, embedded at build time.
#[derive(Debug)]
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

/// Every file the page needs. `server/web/README.md` lists where the vendored ones come from.
const ASSETS: &[Asset] = &[
    Asset {
        name: "index.html",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../web/index.html"),
    },
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../web/app.css"),
    },
    Asset {
        name: "fold.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/fold.js"),
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/app.js"),
    },
    Asset {
        name: "vendor/msgpack-3.1.3.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/vendor/msgpack-3.1.3.min.js"),
    },
];

/// An embedded file ready to serve: its bytes, gzipped bytes and entity tag, made once.
#[derive(Debug)]
struct Prepared {
    plain: Bytes,
    gzipped: Bytes,
    etag: HeaderValue,
}

fn prepared(name: &str) -> Option<&'static Prepared> {
    static ALL: OnceLock<Vec<Prepared>> = OnceLock::new();
    let all = ALL.get_or_init(|| ASSETS.iter().map(|a| prepare(a.bytes)).collect());
    let index = ASSETS.iter().position(|a| a.name == name)?;
    all.get(index)
}

fn prepare(bytes: &[u8]) -> Prepared {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let gzipped = encoder
        .write_all(bytes)
        .and_then(|()| encoder.finish())
        .unwrap_or_default();
    Prepared {
        plain: Bytes::copy_from_slice(bytes),
        gzipped: Bytes::from(gzipped),
        etag: etag_of(bytes),
    }
}

/// A strong entity tag: FNV-1a (64 bits) of the content, which is all a cache needs to tell
/// one build's file from another's.
fn etag_of(bytes: &[u8]) -> HeaderValue {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    HeaderValue::from_str(&format!("\"{hash:016x}-{}\"", bytes.len()))
        .unwrap_or(HeaderValue::from_static("\"0\""))
}

/// Serves one file of the page: revalidated on every use (`no-cache` with an entity tag, so a
/// new server version is picked up at once and an unchanged file costs a 304), gzipped when the
/// browser accepts it.
fn file(name: &'static str, headers: &HeaderMap, site: &Site) -> Response<Full<Bytes>> {
    let content_type = ASSETS
        .iter()
        .find(|a| a.name == name)
        .map_or("application/octet-stream", |a| a.content_type);
    let from_disk;
    let (plain, gzipped, etag) = match &site.web_dir {
        Some(dir) => match read_from(dir, name) {
            Ok(bytes) => {
                from_disk = prepare(&bytes);
                (&from_disk.plain, None, &from_disk.etag)
            }
            Err(error) => {
                return text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("cannot read {name} from --web-dir: {error}\n"),
                );
            }
        },
        None => match prepared(name) {
            Some(p) => (&p.plain, Some(&p.gzipped), &p.etag),
            None => return text(StatusCode::NOT_FOUND, "not found\n"),
        },
    };
    let mut builder = Response::builder()
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::ETAG, etag.clone())
        .header(header::VARY, "Accept-Encoding");
    builder = security_headers(builder);
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim() == etag.to_str().unwrap_or(""))
        });
    if not_modified {
        return builder
            .status(StatusCode::NOT_MODIFIED)
            .body(Full::new(Bytes::new()))
            .unwrap_or_default();
    }
    let accepts_gzip = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.split(';').next().unwrap_or("").trim() == "gzip")
        });
    let body = match gzipped {
        Some(gzipped) if accepts_gzip && !gzipped.is_empty() => {
            builder = builder.header(header::CONTENT_ENCODING, "gzip");
            gzipped.clone()
        }
        _ => plain.clone(),
    };
    builder
        .status(StatusCode::OK)
        .body(Full::new(body))
        .unwrap_or_default()
}

fn read_from(dir: &Path, name: &str) -> std::io::Result<Vec<u8>> {
    std::fs::read(dir.join(name))
}

/// Headers every page and asset carries: nothing external may load, nothing may frame it.
fn security_headers(builder: hyper::http::response::Builder) -> hyper::http::response::Builder {
    builder
        .header(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::REFERRER_POLICY, "no-referrer")
        .header(header::X_FRAME_OPTIONS, "DENY")
}

fn text(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    security_headers(Response::builder())
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-store")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap_or_default()
}

/// The WebSocket handshake (RFC 6455 §4.2): checks the request and the origin, answers 101 and
/// leaves the upgrade for [`serve`] to pick up.
fn websocket(
    request: &mut Request<Incoming>,
    site: &Site,
    upgrade: &Mutex<Option<OnUpgrade>>,
) -> Response<Full<Bytes>> {
    let headers = request.headers();
    let header = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let is_upgrade = header(header::UPGRADE).is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let connection = header(header::CONNECTION).is_some_and(|v| {
        v.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
    });
    let version = header(header::SEC_WEBSOCKET_VERSION) == Some("13");
    let key = header(header::SEC_WEBSOCKET_KEY).map(str::to_owned);
    let (true, true, true, Some(key)) = (is_upgrade, connection, version, key) else {
        let mut response = text(
            StatusCode::UPGRADE_REQUIRED,
            "/ws is a WebSocket endpoint (version 13)\n",
        );
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return response;
    };
    if let Some(origin) = header(header::ORIGIN)
        && !origin_allowed(origin, header(header::HOST), site)
    {
        return text(StatusCode::FORBIDDEN, "origin not allowed\n");
    }
    let Ok(mut slot) = upgrade.lock() else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "try again\n");
    };
    *slot = Some(hyper::upgrade::on(request));
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "Upgrade")
        .header(
            header::SEC_WEBSOCKET_ACCEPT,
            derive_accept_key(key.as_bytes()),
        )
        .body(Full::new(Bytes::new()))
        .unwrap_or_default()
}

/// Whether a browser page from `origin` may open a WebSocket: always when it is the server's own
/// page (the origin is this connection's scheme and `Host`), otherwise when `--allowed-origins`
/// is empty or lists it.
fn origin_allowed(origin: &str, host: Option<&str>, site: &Site) -> bool {
    let scheme = if site.secure { "https" } else { "http" };
    let own = host.is_some_and(|host| origin.eq_ignore_ascii_case(&format!("{scheme}://{host}")));
    own || site.allowed_origins.is_empty()
        || site
            .allowed_origins
            .iter()
            .any(|o| o.eq_ignore_ascii_case(origin))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn routes_name_the_page_or_an_asset() {
        assert_eq!(page_or_asset("/"), Some("index.html"));
        assert_eq!(
            page_or_asset("/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50"),
            Some("index.html")
        );
        assert_eq!(
            page_or_asset("/replays/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50"),
            Some("index.html")
        );
        assert_eq!(page_or_asset("/leagues"), Some("index.html"));
        assert_eq!(
            page_or_asset("/leagues/1ea90e00-aaaa-4bbb-8ccc-0dddeeeeff01"),
            Some("index.html")
        );
        assert_eq!(page_or_asset("/leagues/not-a-league"), None);
        assert_eq!(page_or_asset("/t/not-a-table"), None);
        assert_eq!(page_or_asset("/assets/app.js"), Some("app.js"));
        assert_eq!(page_or_asset("/assets/../Cargo.toml"), None);
        assert_eq!(page_or_asset("/assets/"), None);
    }

    #[test]
    fn the_own_origin_is_allowed_under_an_allow_list() {
        let site = Site {
            allowed_origins: Arc::from(vec!["https://melee.example".to_owned()]),
            secure: false,
            web_dir: None,
            metrics: Arc::new(crate::metrics::Metrics::default()),
            handshake_timeout: Duration::from_secs(1),
        };
        assert!(origin_allowed(
            "http://10.0.0.5:7878",
            Some("10.0.0.5:7878"),
            &site
        ));
        assert!(origin_allowed("https://melee.example", None, &site));
        assert!(!origin_allowed(
            "https://evil.example",
            Some("10.0.0.5:7878"),
            &site
        ));
        // The scheme counts: a plain-HTTP page is not this TLS server's own.
        let tls = Site {
            secure: true,
            ..site
        };
        assert!(!origin_allowed(
            "http://10.0.0.5:7878",
            Some("10.0.0.5:7878"),
            &tls
        ));
        assert!(origin_allowed(
            "https://10.0.0.5:7878",
            Some("10.0.0.5:7878"),
            &tls
        ));
    }

    #[test]
    fn entity_tags_follow_the_content() {
        assert_eq!(etag_of(b"abc"), etag_of(b"abc"));
        assert_ne!(etag_of(b"abc"), etag_of(b"abd"));
    }
}
