//! Plain HTTP on the server's one port, served by hyper: the browser seat's pages and assets
//! (embedded in the binary), `GET /healthz`, `GET /metrics`, `GET /qr.svg?text=<link>` (the link
//! as a QR code, [`crate::qr`]), and the WebSocket handshake at
//! `GET /ws`, after which the connection is handed to [`crate::connection`] as a raw stream.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::upgrade::OnUpgrade;
use hyper::{Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tracing::debug;

use crate::forwarded;
use crate::metrics::Metrics;
use crate::origin::{Arrival, OriginPolicy};

/// Largest request head the server reads.
const MAX_HEAD_BYTES: usize = grand_melee_protocol::server_limits::MAX_HTTP_HEAD_BYTES;
const MAX_HEADERS: usize = grand_melee_protocol::server_limits::MAX_HTTP_HEADERS;

/// The page's Content-Security-Policy: nothing from anywhere but this server, no inline script
/// or style, no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A client's place under a per-address cap, held as long as the connection (given back when
/// dropped).
pub(crate) type Place = Box<dyn std::any::Any + Send + Sync>;

/// Takes a client's place under the per-address cap, if it has one left.
#[derive(Clone)]
pub(crate) struct Admit(pub Arc<dyn Fn(IpAddr) -> Option<Place> + Send + Sync>);

impl std::fmt::Debug for Admit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Admit")
    }
}

/// What one HTTP connection needs to know, besides the request.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    /// Which browser pages may open a WebSocket.
    pub origins: Arc<OriginPolicy>,
    /// How this connection reached the server (its local address, TLS or not), as the socket
    /// says: the server's own origins are built from it, never from the request.
    pub arrival: Arrival,
    /// The socket's peer: the client, or a reverse proxy.
    pub peer: SocketAddr,
    /// The `--trusted-proxy` ranges.
    pub trusted_proxies: Arc<[forwarded::Cidr]>,
    /// For a connection from a trusted proxy: takes the forwarded client's place under the
    /// per-address cap once its handshake is read (`None`: no place left). Given by the caller,
    /// so this module needs nothing of the caps' owner.
    pub admit: Admit,
    /// `--web-dir`: serve the page's files from this folder instead of the embedded copies.
    pub web_dir: Option<PathBuf>,
    /// Renders `/metrics`.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Draws and caches `/qr.svg`'s codes within their budgets.
    pub qr: Arc<crate::qr::Codes>,
    /// What `/invite.json` answers: the address to invite others with.
    pub invite: Arc<crate::invite::Invite>,
    /// How long a client may take to send a request head.
    pub handshake_timeout: Duration,
    /// Cluster mode: the other nodes' WebSocket origins, which the page may connect to as well
    /// as its own (a `served_at` sends it to its table's owner). Asked for only when a page is
    /// served.
    pub connect_elsewhere: Option<ConnectElsewhere>,
}

/// Gives the other nodes' WebSocket origins, space-separated (`None`: none known). Given by the
/// caller, so this module needs nothing of the cluster.
#[derive(Clone)]
pub(crate) struct ConnectElsewhere(pub Arc<dyn Fn() -> Option<String> + Send + Sync>);

impl std::fmt::Debug for ConnectElsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConnectElsewhere")
    }
}

/// A connection that a request upgraded to a WebSocket (the 101 answer has been sent).
pub(crate) struct Upgraded<S> {
    /// The connection's own stream.
    pub io: S,
    /// The bytes the client sent after its request head.
    pub rest: Vec<u8>,
    /// The client: the socket's peer, or the one a trusted proxy forwarded ([`forwarded::via`]).
    pub client: IpAddr,
    /// From a trusted proxy: the client's place under `--max-connections-per-ip` (any other
    /// connection took its place when it was accepted).
    pub slot: Option<Place>,
}

impl<S> Upgraded<S> {
    /// The same connection over another stream type.
    pub(crate) fn map_io<T>(self, wrap: impl FnOnce(S) -> T) -> Upgraded<T> {
        Upgraded {
            io: wrap(self.io),
            rest: self.rest,
            client: self.client,
            slot: self.slot,
        }
    }
}

/// Serves HTTP requests on one connection until it closes, or until a request upgrades it to a
/// WebSocket: then returns the [`Upgraded`] connection.
///
/// The WebSocket path stays lean: the first request head is read here into a small buffer, and
/// a valid upgrade at `/ws` is answered at once, without hyper (whose per-connection buffers
/// would otherwise be allocated and freed on every one of thousands of seats). Everything else —
/// pages, assets, health, metrics, every malformed or refused request — goes to hyper, which
/// gets the bytes already read first.
pub(crate) async fn serve<S>(mut io: S, site: Site) -> Option<Upgraded<S>>
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
        && let Some(accepted) = fast_upgrade(&read.bytes[..head_len], &site)
    {
        let answer = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
            accepted.key
        );
        if let Err(error) = io.write_all(answer.as_bytes()).await {
            debug!(%error, "answering a websocket handshake");
            return None;
        }
        return Some(Upgraded {
            io,
            rest: read.bytes[head_len..].to_vec(),
            client: accepted.client,
            slot: accepted.slot,
        });
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

/// The accepted handshake if `head` is a WebSocket handshake at `/ws` that [`accept`]
/// accepts; `None` for anything else (hyper then answers it, refusals included, with the same
/// [`accept`]).
fn fast_upgrade(head: &[u8], site: &Site) -> Option<Accepted> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    request.parse(head).ok()?;
    if request.path != Some("/ws") {
        return None;
    }
    let handshake = Handshake {
        method: request.method?,
        http_1_1: request.version == Some(1),
        headers: request.headers.iter().map(|h| (h.name, h.value)),
    };
    accept(handshake, site).ok()
}

/// A WebSocket handshake's request line and headers, as either path reads them.
struct Handshake<'a, H> {
    method: &'a str,
    /// HTTP/1.1 (not 1.0).
    http_1_1: bool,
    /// Every header line, in order, duplicates included: `(name, value)`.
    headers: H,
}

/// Why a WebSocket handshake is refused: the status and a short reason for the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Refusal {
    status: StatusCode,
    reason: &'static str,
}

impl Refusal {
    const fn new(status: StatusCode, reason: &'static str) -> Self {
        Self { status, reason }
    }
}

/// An accepted WebSocket handshake.
struct Accepted {
    /// The `Sec-WebSocket-Accept` value.
    key: String,
    /// Who it is from ([`forwarded::via`]).
    client: IpAddr,
    /// From a trusted proxy: the client's place under the per-address cap.
    slot: Option<Place>,
}

/// Accepts a WebSocket handshake at `/ws`, or says why not: the one place for the fast path and
/// for hyper alike. The client is the socket's peer or, from a `--trusted-proxy`, the one the
/// proxy forwards ([`forwarded::via`], which also gives the scheme the origin check uses). From a
/// trusted proxy the client then takes its place under `--max-connections-per-ip` (503 if it
/// has none left); every other connection took its place when it was accepted.
fn accept<'a, H>(handshake: Handshake<'a, H>, site: &Site) -> Result<Accepted, Refusal>
where
    H: Iterator<Item = (&'a str, &'a [u8])> + Clone,
{
    let proxies = &site.trusted_proxies;
    let via = forwarded::via(site.peer, proxies, handshake.headers.clone());
    let arrival = match via.secure {
        Some(secure) => Arrival {
            secure,
            forwarded: true,
            ..site.arrival
        },
        None => site.arrival,
    };
    let key = decide(handshake, site, arrival)?;
    let slot = if forwarded::trusts(proxies, site.peer.ip()) {
        Some((site.admit.0)(via.client).ok_or(Refusal::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections from this address",
        ))?)
    } else {
        None
    };
    Ok(Accepted {
        key,
        client: via.client,
        slot,
    })
}

/// Decides a WebSocket handshake at `/ws` (RFC 6455 §4.2.1) that arrived as `arrival`: the
/// `Sec-WebSocket-Accept` value, or why not.
///
/// Refused: a request that is not an upgrade to `websocket` (426, naming version 13), one that
/// is not a GET or not HTTP/1.1, one with no, two or an empty `Host` (400), a
/// `Sec-WebSocket-Version` other than 13 (426), a `Sec-WebSocket-Key` that is missing, repeated
/// or not the base64 of 16 bytes (400), more than one `Origin` (400), and an `Origin` the
/// [`OriginPolicy`] does not allow (403). A request without `Origin` (not a browser) passes.
fn decide<'a, H>(
    handshake: Handshake<'a, H>,
    site: &Site,
    arrival: Arrival,
) -> Result<String, Refusal>
where
    H: Iterator<Item = (&'a str, &'a [u8])> + Clone,
{
    let headers = handshake.headers;
    // Every value of a header; a value that is not UTF-8 reads as "".
    let values = |name: &'static str| {
        headers
            .clone()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| std::str::from_utf8(v).unwrap_or("").trim())
    };
    let has_token = |name: &'static str, token: &str| {
        values(name).any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    };
    let one = |name: &'static str, twice: &'static str| {
        let mut all = values(name);
        match (all.next(), all.next()) {
            (value, None) => Ok(value),
            _ => Err(Refusal::new(StatusCode::BAD_REQUEST, twice)),
        }
    };
    if !has_token("upgrade", "websocket") || !has_token("connection", "upgrade") {
        return Err(Refusal::new(
            StatusCode::UPGRADE_REQUIRED,
            "/ws is a WebSocket endpoint (version 13)",
        ));
    }
    if handshake.method != "GET" {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "a WebSocket handshake must be a GET request",
        ));
    }
    if !handshake.http_1_1 {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "a WebSocket handshake needs HTTP/1.1",
        ));
    }
    match one("host", "more than one Host header")? {
        None => return Err(Refusal::new(StatusCode::BAD_REQUEST, "no Host header")),
        Some("") => return Err(Refusal::new(StatusCode::BAD_REQUEST, "empty Host header")),
        Some(_) => {}
    }
    if one(
        "sec-websocket-version",
        "more than one Sec-WebSocket-Version header",
    )? != Some("13")
    {
        return Err(Refusal::new(
            StatusCode::UPGRADE_REQUIRED,
            "only WebSocket version 13 is spoken here",
        ));
    }
    let key = one(
        "sec-websocket-key",
        "more than one Sec-WebSocket-Key header",
    )?
    .filter(|key| is_websocket_key(key))
    .ok_or(Refusal::new(
        StatusCode::BAD_REQUEST,
        "Sec-WebSocket-Key must be the base64 of 16 bytes",
    ))?;
    if let Some(origin) = one("origin", "more than one Origin header")?
        && !site.origins.allows(origin, arrival)
    {
        return Err(Refusal::new(StatusCode::FORBIDDEN, "origin not allowed"));
    }
    Ok(derive_accept_key(key.as_bytes()))
}

/// Whether `key` is the base64 of 16 bytes, as RFC 6455 wants a `Sec-WebSocket-Key`: 22
/// characters of the alphabet (the last one's four padding bits clear) and `==`.
fn is_websocket_key(key: &str) -> bool {
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let bytes = key.as_bytes();
    bytes.len() == 24
        && bytes.ends_with(b"==")
        && bytes[..22].iter().all(|&c| sextet(c).is_some())
        && sextet(bytes[21]).is_some_and(|last| last & 0x0f == 0)
}

/// hyper on the connection, for everything but the WebSocket fast path.
async fn with_hyper<S>(io: Rewind<S>, site: Site) -> Option<Upgraded<S>>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let upgrade: Arc<Mutex<Option<(OnUpgrade, Accepted)>>> = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&upgrade);
    let timeout = site.handshake_timeout.max(Duration::from_millis(100));
    let site = Arc::new(site);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let site = Arc::clone(&site);
        let slot = Arc::clone(&slot);
        async move { Ok::<_, std::convert::Infallible>(answer(request, &site, &slot).await) }
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
    let (pending, accepted) = upgrade.lock().ok()?.take()?;
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
            Some(Upgraded {
                io,
                rest,
                client: accepted.client,
                slot: accepted.slot,
            })
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
async fn answer(
    mut request: Request<Incoming>,
    site: &Site,
    upgrade: &Mutex<Option<(OnUpgrade, Accepted)>>,
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
        "/invite.json" => {
            let mut response = text(StatusCode::OK, &site.invite.answer());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        "/qr.svg" => qr_code(request.uri().query(), request.headers(), site).await,
        "/ws" => {
            return websocket(&mut request, site, upgrade);
        }
        path if crate::docs::is_docs(path) => manual(path, request.headers()).await,
        path => match page_or_asset(path) {
            Some(name) => file(name, request.headers(), site),
            None => not_found(),
        },
    };
    if method == Method::HEAD {
        *response.body_mut() = Full::new(Bytes::new());
    }
    response
}

/// The answer to a path that names nothing.
fn not_found() -> Response<Full<Bytes>> {
    text(
        StatusCode::NOT_FOUND,
        "not found: the lobby is at /, a table at /t/<table id>, the leagues at /leagues, the manual at /docs; the WebSocket endpoint is /ws\n",
    )
}

/// A page or file of the manual ([`crate::docs`]), found (and rendered, on a page's first
/// request) on a blocking thread: a chapter as long as PROTOCOL.md takes a while to render
/// the first time, and the async threads serve the tables meanwhile.
async fn manual(path: &str, headers: &HeaderMap) -> Response<Full<Bytes>> {
    let owned = path.to_owned();
    let found = tokio::task::spawn_blocking(move || crate::docs::find(&owned))
        .await
        .ok()
        .flatten();
    let Some(served) = found else {
        return not_found();
    };
    let etag = HeaderValue::from_str(&served.etag).unwrap_or(HeaderValue::from_static("\"0\""));
    cached(
        served.content_type,
        &served.plain,
        served.gzipped.as_ref(),
        &etag,
        headers,
    )
}

/// The file a path names: the page for every route of the single-page app, or an asset. An id
/// in a route is read as everywhere else, in its one spelling (lower-case hyphenated): the same
/// table or league under another spelling is an unknown path.
fn page_or_asset(path: &str) -> Option<&'static str> {
    let is_id = |s: &str| grand_melee_protocol::parse_uuid(s).is_ok();
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

/// Mountain Magic's card pool as the page fetches it: the rules core's data file, never read
/// from `--web-dir` (it is not one of the page's files).
const MOUNTAIN_MAGIC_POOL: &str = "games/mountain_magic_pool.json";

/// Every file the page needs. `server/web/README.md` lists where the vendored ones come from.
const ASSETS: &[Asset] = &[
    Asset {
        name: "index.html",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../web/index.html"),
    },
    Asset {
        name: "icon.svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("../web/icon.svg"),
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
        name: "common.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/common.js"),
    },
    Asset {
        name: "lobby.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/lobby.js"),
    },
    Asset {
        name: "leagues.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/leagues.js"),
    },
    Asset {
        name: "table.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/table.js"),
    },
    Asset {
        name: "games/grand_melee.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/games/grand_melee.js"),
    },
    Asset {
        name: "games/magic_tech.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/games/magic_tech.js"),
    },
    // Mountain Magic's part and its card pool: not in the first load (table.js loads them at a
    // Mountain Magic table). The pool is the rules core's own data file, served as it is.
    Asset {
        name: "games/mountain_magic.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/games/mountain_magic.js"),
    },
    Asset {
        name: "games/mountain_magic.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../web/games/mountain_magic.css"),
    },
    Asset {
        name: MOUNTAIN_MAGIC_POOL,
        content_type: "application/json",
        bytes: include_bytes!("../../protocol/data/mountain_magic/pool.json"),
    },
    Asset {
        name: "cameras.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/cameras.js"),
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/app.js"),
    },
    Asset {
        name: "vendor/preact-10.29.8.umd.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/vendor/preact-10.29.8.umd.js"),
    },
    Asset {
        name: "vendor/htm-3.1.1.umd.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/vendor/htm-3.1.1.umd.js"),
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
    Prepared {
        plain: Bytes::copy_from_slice(bytes),
        gzipped: crate::qr::gzip(bytes, flate2::Compression::best()),
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
        Some(dir) if name != MOUNTAIN_MAGIC_POOL => match read_from(dir, name) {
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
        _ => match prepared(name) {
            Some(p) => (&p.plain, Some(&p.gzipped), &p.etag),
            None => return text(StatusCode::NOT_FOUND, "not found\n"),
        },
    };
    let mut response = cached(content_type, plain, gzipped, etag, headers);
    // The policy that counts is the document's.
    if content_type.starts_with("text/html")
        && let Some(origins) = site.connect_elsewhere.as_ref().and_then(|ask| (ask.0)())
        && let Ok(policy) = HeaderValue::from_str(&policy_connecting_to(&origins))
    {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

/// [`CONTENT_SECURITY_POLICY`] with `origins` (space-separated) allowed in `connect-src`.
fn policy_connecting_to(origins: &str) -> String {
    CONTENT_SECURITY_POLICY.replacen(
        "connect-src 'self'",
        &format!("connect-src 'self' {origins}"),
        1,
    )
}

/// One embedded file's answer: revalidated on every use (`no-cache` with its entity tag, a 304
/// when the browser has it), gzipped when there is a gzipped copy and the browser accepts it.
fn cached(
    content_type: &str,
    plain: &Bytes,
    gzipped: Option<&Bytes>,
    etag: &HeaderValue,
    headers: &HeaderMap,
) -> Response<Full<Bytes>> {
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
    let body = match gzipped {
        Some(gzipped) if accepts_gzip(headers) && !gzipped.is_empty() => {
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

/// `GET /qr.svg?text=<percent-encoded http(s) link>`: the link as an SVG QR code ([`crate::qr`]),
/// cached for a day by anyone (the answer depends on the query alone), gzipped when the browser
/// accepts it; a refused query gets 400 and its reason in one line, a client past its
/// `--qr-codes-per-minute` 429, and any client while the server draws its most codes a second 503
/// (both with `Retry-After`).
async fn qr_code(query: Option<&str>, headers: &HeaderMap, site: &Site) -> Response<Full<Bytes>> {
    let lines: Vec<(&str, &[u8])> = headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
        .collect();
    let client = forwarded::via(site.peer, &site.trusted_proxies, lines.iter().copied()).client;
    let drawn = match site.qr.answer(query, client).await {
        crate::qr::Answer::Code(drawn) => drawn,
        crate::qr::Answer::Refused(reason) => {
            debug!(reason, "qr code refused");
            return text(StatusCode::BAD_REQUEST, &format!("{reason}\n"));
        }
        crate::qr::Answer::TooMany => {
            debug!(%client, "qr codes: the address's budget is spent");
            return retry_later(
                StatusCode::TOO_MANY_REQUESTS,
                "too many QR codes from your address: try again in a minute\n",
                60,
            );
        }
        crate::qr::Answer::Busy => {
            return retry_later(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is drawing as many QR codes as it may: try again in a second\n",
                1,
            );
        }
    };
    let mut builder = security_headers(Response::builder())
        .header(header::CONTENT_TYPE, "image/svg+xml")
        .header(header::CACHE_CONTROL, "public, max-age=86400")
        .header(header::VARY, "Accept-Encoding");
    let body = if accepts_gzip(headers) && !drawn.gzipped.is_empty() {
        builder = builder.header(header::CONTENT_ENCODING, "gzip");
        drawn.gzipped.clone()
    } else {
        drawn.svg.clone()
    };
    builder
        .status(StatusCode::OK)
        .body(Full::new(body))
        .unwrap_or_default()
}

/// A plain-text refusal that says when to ask again.
fn retry_later(status: StatusCode, body: &str, seconds: u32) -> Response<Full<Bytes>> {
    let mut response = text(status, body);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

/// Whether the request's `Accept-Encoding` names gzip.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.split(';').next().unwrap_or("").trim() == "gzip")
        })
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

/// The WebSocket handshake on hyper's side: [`accept`]s, then answers 101 and leaves the
/// upgrade for [`serve`] to pick up, or answers the refusal (counted, nothing else changes).
fn websocket(
    request: &mut Request<Incoming>,
    site: &Site,
    upgrade: &Mutex<Option<(OnUpgrade, Accepted)>>,
) -> Response<Full<Bytes>> {
    let headers: Vec<(&str, &[u8])> = request
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
        .collect();
    let handshake = Handshake {
        method: request.method().as_str(),
        http_1_1: request.version() == Version::HTTP_11,
        headers: headers.iter().copied(),
    };
    let accepted = match accept(handshake, site) {
        Ok(accepted) => accepted,
        Err(refusal) => {
            // Over the per-address cap is a refused connection, as when it is counted at accept.
            let counter = if refusal.status == StatusCode::SERVICE_UNAVAILABLE {
                &site.metrics.connections_refused
            } else {
                &site.metrics.handshakes_refused
            };
            Metrics::add(counter, 1);
            let via = forwarded::via(site.peer, &site.trusted_proxies, headers.iter().copied());
            debug!(
                peer = %via.client,
                socket = %site.peer,
                status = refusal.status.as_u16(),
                reason = refusal.reason,
                origin = ?request.headers().get(header::ORIGIN),
                "WebSocket handshake refused"
            );
            let mut response = text(refusal.status, &format!("{}\n", refusal.reason));
            if refusal.status == StatusCode::UPGRADE_REQUIRED {
                response.headers_mut().insert(
                    header::SEC_WEBSOCKET_VERSION,
                    HeaderValue::from_static("13"),
                );
            }
            return response;
        }
    };
    let Ok(mut slot) = upgrade.lock() else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "try again\n");
    };
    let key = accepted.key.clone();
    *slot = Some((hyper::upgrade::on(request), accepted));
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "Upgrade")
        .header(header::SEC_WEBSOCKET_ACCEPT, key)
        .body(Full::new(Bytes::new()))
        .unwrap_or_default()
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
        assert_eq!(
            page_or_asset("/leagues/1EA90E00-AAAA-4BBB-8CCC-0DDDEEEEFF01"),
            None
        );
        assert_eq!(page_or_asset("/t/not-a-table"), None);
        assert_eq!(page_or_asset("/assets/app.js"), Some("app.js"));
        assert_eq!(page_or_asset("/assets/../Cargo.toml"), None);
        assert_eq!(page_or_asset("/assets/"), None);
    }

    #[test]
    fn websocket_keys_are_base64_of_16_bytes() {
        assert!(is_websocket_key("dGhlIHNhbXBsZSBub25jZQ=="));
        assert!(is_websocket_key("AAAAAAAAAAAAAAAAAAAAAA=="));
        for bad in [
            "",
            "a",
            "dGhlIHNhbXBsZSBub25jZQ",
            "dGhlIHNhbXBsZSBub25jZR==",
            "dGhlIHNhbXBsZSBub25jZQ=!",
            "dGhlIHNhbXBsZSBub25j*Q==",
            "dGhlIHNhbXBsZSBub25jZQ==dGhl",
        ] {
            assert!(!is_websocket_key(bad), "{bad}");
        }
    }

    #[test]
    fn entity_tags_follow_the_content() {
        assert_eq!(etag_of(b"abc"), etag_of(b"abc"));
        assert_ne!(etag_of(b"abc"), etag_of(b"abd"));
    }
}
