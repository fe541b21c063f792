//! The first bytes of every connection: a small HTTP/1.1 request head, routed to the WebSocket
//! endpoint (`GET /ws` with an upgrade), `GET /healthz` or `GET /metrics`.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// Largest request head the server reads.
const MAX_HEAD_BYTES: usize = 8 * 1024;
const MAX_HEADERS: usize = 32;

/// What the request asked for.
#[derive(Debug)]
pub(crate) enum Route {
    /// A WebSocket upgrade: the 101 answer has been sent; `rest` holds any bytes the client sent
    /// after its request head.
    WebSocket { rest: Vec<u8> },
    /// Answered (health, metrics or an HTTP error); close the connection.
    Answered,
}

/// Reads the request head and either completes the WebSocket handshake or answers plain HTTP.
pub(crate) async fn route(
    stream: &mut TcpStream,
    allowed_origins: &[String],
    metrics: impl FnOnce() -> String,
) -> std::io::Result<Route> {
    let mut buf = Vec::with_capacity(1024);
    let head_len = loop {
        let mut chunk = [0u8; 1024];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(Route::Answered);
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => break len,
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD_BYTES => continue,
            Ok(httparse::Status::Partial) => {
                respond(
                    stream,
                    "431 Request Header Fields Too Large",
                    "text/plain",
                    "request head too large\n",
                )
                .await?;
                return Ok(Route::Answered);
            }
            Err(_) => {
                respond(
                    stream,
                    "400 Bad Request",
                    "text/plain",
                    "malformed request\n",
                )
                .await?;
                return Ok(Route::Answered);
            }
        }
    };
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let _ = request.parse(&buf[..head_len]);
    let method = request.method.unwrap_or("");
    let path = request.path.unwrap_or("").split('?').next().unwrap_or("");
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).into_owned())
    };
    if method != "GET" {
        respond(stream, "405 Method Not Allowed", "text/plain", "only GET\n").await?;
        return Ok(Route::Answered);
    }
    match path {
        "/healthz" => {
            respond(stream, "200 OK", "text/plain", "ok\n").await?;
            Ok(Route::Answered)
        }
        "/metrics" => {
            let body = metrics();
            respond(stream, "200 OK", "text/plain; version=0.0.4", &body).await?;
            Ok(Route::Answered)
        }
        "/ws" => {
            let upgrade = header("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
            let connection = header("connection").is_some_and(|v| {
                v.split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
            });
            let version = header("sec-websocket-version").is_some_and(|v| v.trim() == "13");
            let key = header("sec-websocket-key");
            let (true, true, true, Some(key)) = (upgrade, connection, version, key) else {
                respond(
                    stream,
                    "426 Upgrade Required",
                    "text/plain",
                    "/ws is a WebSocket endpoint (version 13)\n",
                )
                .await?;
                return Ok(Route::Answered);
            };
            if let Some(origin) = header("origin")
                && !allowed_origins.is_empty()
                && !allowed_origins
                    .iter()
                    .any(|o| o.eq_ignore_ascii_case(origin.trim()))
            {
                respond(
                    stream,
                    "403 Forbidden",
                    "text/plain",
                    "origin not allowed\n",
                )
                .await?;
                return Ok(Route::Answered);
            }
            let accept = derive_accept_key(key.trim().as_bytes());
            let answer = format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
            );
            stream.write_all(answer.as_bytes()).await?;
            Ok(Route::WebSocket {
                rest: buf[head_len..].to_vec(),
            })
        }
        _ => {
            respond(
                stream,
                "404 Not Found",
                "text/plain",
                "try /ws, /healthz or /metrics\n",
            )
            .await?;
            Ok(Route::Answered)
        }
    }
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}
