//! A bot's WebSocket link to the server (or the relay): opening it with small buffers, how long
//! an answer may take, what can end a bot early, and the one wait every bot's loop uses.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use grand_melee_protocol as wire;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::rustls;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// How long a bot waits for an answer the server owes it before it gives up on the
/// connection. A bound on a failure, not a pace: answers come in milliseconds.
pub const ANSWER_PATIENCE: Duration = Duration::from_secs(60);

/// A bot's WebSocket.
pub type Socket = WebSocketStream<BotStream>;

/// A bot's byte stream: plain TCP (`ws://`) or TLS over TCP (`wss://`, rustls). The TLS side
/// is boxed, so a `ws://` bot is no larger than before (tokio-tungstenite's `MaybeTlsStream`
/// would hold the rustls connection inline in every bot, plain or not).
#[derive(Debug)]
pub enum BotStream {
    /// `ws://`.
    Plain(TcpStream),
    /// `wss://`.
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for BotStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for BotStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Plain(s) => s.is_write_vectored(),
            Self::Tls(s) => s.is_write_vectored(),
        }
    }
}

/// Opens the byte stream of `url` (`ws://host:port/…` or `wss://host:port/…`) with Nagle off;
/// `wss://` trusts what `tls` trusts.
pub async fn open_stream(
    url: &str,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> Result<BotStream, BotError> {
    let (secure, rest) = match (url.strip_prefix("wss://"), url.strip_prefix("ws://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => (false, url),
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let stream = TcpStream::connect(authority).await?;
    stream.set_nodelay(true)?;
    if !secure {
        return Ok(BotStream::Plain(stream));
    }
    let tls = tls.ok_or_else(|| BotError::NoTrust(url.to_owned()))?;
    // The host without the port (an IPv6 literal keeps its brackets off).
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.parse::<u16>().is_ok() => host,
        _ => authority,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|_| BotError::NoTrust(url.to_owned()))?;
    let stream = tokio_rustls::TlsConnector::from(Arc::clone(tls))
        .connect(name, stream)
        .await?;
    Ok(BotStream::Tls(Box::new(stream)))
}

/// What can end a bot early.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    /// The WebSocket failed.
    #[error("websocket: {0}")]
    WebSocket(#[from] tokio_tungstenite::tungstenite::Error),
    /// The TCP connection (or its TLS handshake) failed.
    #[error("connect: {0}")]
    Io(#[from] std::io::Error),
    /// A `wss://` URL without a certificate to trust (or with no host name to check).
    #[error("{0}: a wss:// URL needs a certificate to trust (--ca-cert) and a host name")]
    NoTrust(String),
    /// The server closed the connection (with this close code, if it gave one).
    #[error("connection closed by the server (close code {0:?})")]
    Closed(Option<u16>),
    /// A frame could not be decoded.
    #[error("undecodable frame: {0}")]
    Decode(#[from] wire::DecodeError),
    /// An answer did not come in time.
    #[error("no answer to {0} in time")]
    Timeout(&'static str),
    /// A session request was refused.
    #[error("{request} refused: {code}")]
    Refused {
        /// The request.
        request: &'static str,
        /// The error code.
        code: String,
    },
    /// The connection broke in the middle of a game and the seat could not be taken back.
    #[error("connection lost and not resumed after {attempts} tries; the last: {last}")]
    ResumeFailed {
        /// Tries made.
        attempts: u32,
        /// What went wrong the last time.
        last: Box<BotError>,
    },
}

/// The next message the server sends on `ws`, within [`ANSWER_PATIENCE`] (`what`: what the bot
/// waits for, named in the timeout): binary frames are decoded, other frames skipped, a close
/// frame or the end of the stream is [`BotError::Closed`].
pub async fn next_server_message(
    ws: &mut Socket,
    what: &'static str,
) -> Result<wire::ServerMessage, BotError> {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    loop {
        let frame = tokio::time::timeout(ANSWER_PATIENCE, ws.next())
            .await
            .map_err(|_| BotError::Timeout(what))?;
        match frame {
            None => return Err(BotError::Closed(None)),
            Some(Err(error)) => return Err(error.into()),
            Some(Ok(Message::Binary(bytes))) => return Ok(wire::decode_server(&bytes)?),
            Some(Ok(Message::Close(frame))) => {
                return Err(BotError::Closed(frame.map(|f| u16::from(f.code))));
            }
            Some(Ok(_)) => {}
        }
    }
}

impl BotError {
    /// Whether the connection itself is gone (end of stream, I/O error, a close frame): what a
    /// seated bot fails over from.
    pub fn is_connection_loss(&self) -> bool {
        matches!(self, Self::WebSocket(_) | Self::Io(_) | Self::Closed(_))
    }
}

/// The WebSocket settings of every bot: small buffers, so thousands fit in one process.
pub fn client_websocket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .max_message_size(Some(wire::MAX_SERVER_MESSAGE_BYTES))
        .max_frame_size(Some(wire::MAX_SERVER_MESSAGE_BYTES))
}

/// Opens a WebSocket to `url` (`ws://host:port/path`) with Nagle off and small buffers.
pub async fn connect(url: &str) -> Result<Socket, BotError> {
    connect_tls(url, None).await
}

/// [`connect`], and `wss://` URLs too, trusting what `tls` trusts.
pub async fn connect_tls(
    url: &str,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> Result<Socket, BotError> {
    let stream = open_stream(url, tls).await?;
    let (ws, _) =
        tokio_tungstenite::client_async_with_config(url, stream, Some(client_websocket_config()))
            .await?;
    Ok(ws)
}

/// Sleeps until the deadline, or forever if there is none.
pub async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}
