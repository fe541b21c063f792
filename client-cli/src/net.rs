//! The WebSocket connection to the server: the endpoint URL, the `hello` handshake and
//! request/answer calls.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage,
};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use crate::ClientError;
use crate::command::with_id;

/// A WebSocket to the server.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long the client waits for the answer to a request before it gives up on the connection.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(20);

/// The WebSocket URL for a server given as `HOST:PORT`, `HOST` (port 7878) or a `ws://` URL
/// (a URL without a path gets `/ws`); `http://` and `https://` (the address of the server's
/// page) mean `ws://` and `wss://`.
pub fn endpoint(server: &str) -> String {
    let server = server.trim().trim_end_matches('/');
    if let Some((scheme, rest)) = server.split_once("://") {
        let web = matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https");
        let (scheme, rest) = match scheme.to_ascii_lowercase().as_str() {
            // A page's address: the socket is `/ws` beside the pages (under the same prefix
            // behind a proxy), whichever page was copied.
            web @ ("http" | "https") => {
                let base = ["/t/", "/replays"]
                    .iter()
                    .filter_map(|page| rest.find(page))
                    .min()
                    .map_or(rest, |at| &rest[..at]);
                let secure = if web == "https" { "wss" } else { "ws" };
                (secure.to_owned(), base.trim_end_matches('/'))
            }
            other => (other.to_owned(), rest),
        };
        if rest.ends_with("/ws") || (!web && rest.contains('/')) {
            format!("{scheme}://{rest}")
        } else {
            format!("{scheme}://{rest}/ws")
        }
    } else if server.contains(':') {
        format!("ws://{server}/ws")
    } else {
        format!("ws://{server}:7878/ws")
    }
}

/// The TLS settings for `wss://` servers, made once per process.
static TLS: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();

/// Sets what `wss://` connections trust: the system's root certificates, and `ca_cert` (PEM,
/// one or more certificates) if given. Call it once, before connecting; without it the system's
/// roots alone are trusted.
pub fn configure_tls(ca_cert: Option<&Path>) -> Result<(), ClientError> {
    let config = tls_config(ca_cert)?;
    let _ = TLS.set(Arc::new(config));
    Ok(())
}

fn tls_config(ca_cert: Option<&Path>) -> Result<rustls::ClientConfig, ClientError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    // Certificates the system store has but rustls cannot parse are skipped, as browsers do.
    let _ = roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(path) = ca_cert {
        let bad = |reason: String| ClientError::CaCert {
            path: path.display().to_string(),
            reason,
        };
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| bad(e.to_string()))?;
        if certs.is_empty() {
            return Err(bad(
                "no certificate in the file (expected PEM, -----BEGIN CERTIFICATE-----)".into(),
            ));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| bad(e.to_string()))?;
        }
    }
    Ok(builder()
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// TLS 1.2 and 1.3 with ring's algorithms.
fn builder() -> rustls::ConfigBuilder<rustls::ClientConfig, rustls::WantsVerifier> {
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports TLS 1.2 and 1.3")
}

fn tls() -> Arc<rustls::ClientConfig> {
    Arc::clone(TLS.get_or_init(|| {
        // Without `--ca-cert` nothing can fail: the system's roots that parse are used.
        Arc::new(tls_config(None).unwrap_or_else(|_| {
            builder()
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth()
        }))
    }))
}

/// A connection that has completed `hello`, used for one request at a time.
#[derive(Debug)]
pub struct Conn {
    ws: Ws,
    next_id: u32,
}

impl Conn {
    /// Connects to `url` and completes `hello`.
    pub async fn open(url: &str) -> Result<Self, ClientError> {
        let connect = tokio_tungstenite::connect_async_tls_with_config(
            url,
            None,
            false,
            Some(Connector::Rustls(tls())),
        );
        let (ws, _) = tokio::time::timeout(REPLY_TIMEOUT, connect)
            .await
            .map_err(|_| ClientError::Unreachable {
                url: url.to_owned(),
                reason: "no answer".into(),
            })?
            .map_err(|e| ClientError::Unreachable {
                url: url.to_owned(),
                reason: e.to_string(),
            })?;
        let mut conn = Self { ws, next_id: 1 };
        let hello = ClientMessage::Hello {
            id: 0,
            protocol: PROTOCOL_VERSION,
            client: concat!("grand-melee-cli/", env!("CARGO_PKG_VERSION")).to_owned(),
        };
        match conn.call(hello).await? {
            ServerMessage::Welcome { .. } => Ok(conn),
            other => Err(ClientError::Protocol(format!(
                "expected welcome, got {}",
                other.name()
            ))),
        }
    }

    /// Sends a request with the next id; returns the id.
    pub async fn send(&mut self, message: ClientMessage) -> Result<u32, ClientError> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let bytes = wire::encode_client(&with_id(message, id));
        self.ws
            .send(Message::Binary(bytes.into()))
            .await
            .map_err(|e| ClientError::Dropped(e.to_string()))?;
        Ok(id)
    }

    /// Sends a request and waits for its answer; a refusal is [`ClientError::Rejected`].
    /// Messages that are not the answer are skipped.
    pub async fn call(&mut self, message: ClientMessage) -> Result<ServerMessage, ClientError> {
        let request = message.name();
        let id = self.send(message).await?;
        loop {
            let message = tokio::time::timeout(REPLY_TIMEOUT, self.recv())
                .await
                .map_err(|_| ClientError::Dropped(format!("no answer to {request}")))??;
            match message {
                ServerMessage::Error {
                    reply_to,
                    code,
                    message,
                    ..
                } if reply_to == Some(id) || reply_to.is_none() => {
                    return Err(ClientError::Rejected {
                        code,
                        request: request.to_owned(),
                        message,
                    });
                }
                message if message.reply_to() == Some(id) => return Ok(message),
                _ => {}
            }
        }
    }

    /// The next message from the server. Frames that do not decode are skipped.
    pub async fn recv(&mut self) -> Result<ServerMessage, ClientError> {
        loop {
            match self.ws.next().await {
                None => return Err(ClientError::Dropped("connection closed".into())),
                Some(Err(e)) => return Err(ClientError::Dropped(e.to_string())),
                Some(Ok(Message::Binary(bytes))) => {
                    if let Ok(message) = wire::decode_server(&bytes) {
                        return Ok(message);
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(ClientError::Dropped(close_reason(frame.as_ref())));
                }
                Some(Ok(_)) => {}
            }
        }
    }

    /// Closes the connection politely.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }

    /// The socket and the next request id, to go on with the session.
    pub fn into_parts(self) -> (Ws, u32) {
        (self.ws, self.next_id)
    }
}

/// Words for a close frame.
pub fn close_reason(
    frame: Option<&tokio_tungstenite::tungstenite::protocol::CloseFrame>,
) -> String {
    match frame {
        Some(frame) => {
            let code = u16::from(frame.code);
            let what = match code {
                1000 => "closed by the server",
                1001 => "the server is going away",
                1002 => "protocol error",
                1008 => "dropped by the server (too slow, idle or removed)",
                1009 => "message too big",
                _ => "closed",
            };
            format!("{what} (close code {code})")
        }
        None => "connection closed".into(),
    }
}

/// Whether a refusal means the request can never succeed as it is (as opposed to a transient
/// problem worth retrying).
pub fn is_final(code: ErrorCode) -> bool {
    !matches!(code, ErrorCode::RateLimited | ErrorCode::ServerBusy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses_become_websocket_urls() {
        assert_eq!(endpoint("127.0.0.1:7878"), "ws://127.0.0.1:7878/ws");
        assert_eq!(endpoint("melee.example"), "ws://melee.example:7878/ws");
        assert_eq!(endpoint("ws://h:1"), "ws://h:1/ws");
        assert_eq!(endpoint("ws://h:1/"), "ws://h:1/ws");
        assert_eq!(endpoint("wss://h/melee/ws"), "wss://h/melee/ws");
        assert_eq!(endpoint("http://h:7878"), "ws://h:7878/ws");
        assert_eq!(endpoint("https://melee.example/"), "wss://melee.example/ws");
        assert_eq!(endpoint("HTTPS://h/x/ws"), "wss://h/x/ws");
        let page = "http://h:7878/t/5f3c1a2e-0000-4000-8000-000000000000";
        assert_eq!(endpoint(page), "ws://h:7878/ws");
        assert_eq!(endpoint("https://h/melee/replays"), "wss://h/melee/ws");
    }
}
