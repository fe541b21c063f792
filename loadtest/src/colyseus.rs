//! Colyseus as a target of the benchmark: its installation, and the client side of its 0.16
//! protocol that the bots speak.
//!
//! **Installation.** `loadtest/colyseus/{package.json,package-lock.json,server.js}` are built
//! into this binary. On first use they are written to [`install_dir`]
//! (`$XDG_CACHE_HOME/grand-melee-loadtest/colyseus-0.16.5`, or `~/.cache/...`) and
//! `npm ci --no-audit --no-fund --legacy-peer-deps` runs there; it runs again when the embedded
//! `package.json` or lock changed. (`--legacy-peer-deps`: the `colyseus` package names the
//! uWebSockets transport as a peer, and that one comes from GitHub, not the registry; the ws
//! transport and the other peers are direct dependencies instead, each pinned.) The server is
//! then `node server.js`, started directly so that its process is the one measured.
//!
//! **Protocol** (as in `@colyseus/core` 0.16 and `colyseus.js` 0.16):
//! 1. Matchmaking: `POST /matchmake/joinOrCreate/fanout` with the JSON options
//!    `{"table": N, "seats": S}`; the reply is a seat reservation
//!    `{"room": {"roomId", "processId", ...}, "sessionId"}` or `{"code", "error"}`.
//! 2. The WebSocket `ws://host:port/<processId>/<roomId>?sessionId=<sessionId>`; the room
//!    sends `JOIN_ROOM` (10: reconnection token, serializer id, handshake) and the client
//!    confirms with the single byte `JOIN_ROOM`; messages broadcast before that are queued.
//! 3. `room.send("a", payload)` is `ROOM_DATA` (13), the type as a schema string (`0xa1 'a'`),
//!    then the payload in msgpack (here a `bin`: the frame's bytes). The room's
//!    `this.broadcast("a", message)` gets the payload back as a `Uint8Array` and sends it as
//!    `ROOM_DATA_BYTES` (17): code, type, raw bytes, to every client of the room.
//!
//! Schema numbers and string lengths are little-endian; msgpack's (the payload) big-endian.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::link::{self, ANSWER_PATIENCE, BotError, Socket};

/// The Colyseus release the bench runs.
pub const VERSION: &str = "0.16.5";
/// The oldest Node.js major version it runs on.
pub const NODE_MAJOR: u32 = 20;
/// What to run when Node.js or npm is missing (as root).
pub const INSTALL_NODE: &str = "apt-get install -y nodejs npm";

/// The npm package of the server: exact versions.
pub const PACKAGE_JSON: &str = include_str!("../colyseus/package.json");
/// Its lock.
pub const PACKAGE_LOCK: &str = include_str!("../colyseus/package-lock.json");
/// The server: one room type, the fan-out.
pub const SERVER_JS: &str = include_str!("../colyseus/server.js");

/// The room type of `server.js`.
pub const ROOM_NAME: &str = "fanout";
/// The message type the bots send and the room broadcasts.
pub const MESSAGE_TYPE: &str = "a";

/// Protocol codes (`Protocol` in `@colyseus/core`).
pub const JOIN_ROOM: u8 = 10;
/// An error from the room.
pub const ERROR: u8 = 11;
/// A message with a msgpack payload.
pub const ROOM_DATA: u8 = 13;
/// A message with a raw byte payload.
pub const ROOM_DATA_BYTES: u8 = 17;

/// Bytes of a broadcast before its payload: the code and the type `"a"` (`0xa1 'a'`).
pub const BROADCAST_HEADER_BYTES: usize = 3;

/// What can stop the installation.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// Node.js or npm is missing or too old.
    #[error(
        "the colyseus target needs Node.js >= {NODE_MAJOR} and npm: {0}; install them with `{INSTALL_NODE}` (as root)"
    )]
    Node(String),
    /// Writing the files failed.
    #[error("installing Colyseus {VERSION} in {dir}: {error}")]
    Io {
        /// Where.
        dir: String,
        /// The error.
        error: std::io::Error,
    },
    /// `npm ci` failed.
    #[error(
        "`npm ci --no-audit --no-fund --legacy-peer-deps` failed for Colyseus {VERSION} in {dir} ({status}): {output}"
    )]
    Npm {
        /// Where.
        dir: String,
        /// Its exit status.
        status: String,
        /// The end of its output.
        output: String,
    },
}

/// Where Colyseus is installed: `$XDG_CACHE_HOME/grand-melee-loadtest/colyseus-<version>`, or
/// `$HOME/.cache/...`, or the temporary directory's.
pub fn install_dir() -> PathBuf {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let cache = absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache
        .join("grand-melee-loadtest")
        .join(format!("colyseus-{VERSION}"))
}

/// The major version in `node --version`'s answer (`v20.20.2`).
pub fn node_major(version: &str) -> Option<u32> {
    version
        .trim()
        .strip_prefix('v')?
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn version_of(program: &str) -> Result<String, InstallError> {
    let output = std::process::Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| InstallError::Node(format!("cannot run `{program} --version`: {e}")))?;
    if !output.status.success() {
        return Err(InstallError::Node(format!(
            "`{program} --version` failed ({})",
            output.status
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Checks that Node.js ≥ 20 and npm are there; returns Node's version.
pub fn check_node() -> Result<String, InstallError> {
    let node = version_of("node")?;
    match node_major(&node) {
        Some(major) if major >= NODE_MAJOR => {}
        _ => return Err(InstallError::Node(format!("`node --version` says {node}"))),
    }
    version_of("npm")?;
    Ok(node)
}

/// Whether `dir` holds a finished installation of the embedded files.
pub fn is_installed(dir: &Path) -> bool {
    let same =
        |name: &str, text: &str| std::fs::read_to_string(dir.join(name)).is_ok_and(|t| t == text);
    same("package.json", PACKAGE_JSON)
        && same("package-lock.json", PACKAGE_LOCK)
        && dir.join(INSTALLED_MARK).is_file()
}

/// Written after `npm ci` succeeded.
const INSTALLED_MARK: &str = ".installed";

/// Makes sure Colyseus is installed in [`install_dir`] (Node.js and npm checked first), calling
/// `announce` before a (slow) `npm ci`; returns the directory. Blocking. Several processes may
/// do this at once: each installs into a directory of its own and renames it into place.
pub fn ensure_installed(announce: impl FnOnce()) -> Result<PathBuf, InstallError> {
    check_node()?;
    let dir = install_dir();
    let fail = |dir: &Path| {
        let dir = dir.display().to_string();
        move |error| InstallError::Io { dir, error }
    };
    if !is_installed(&dir) {
        announce();
        let parent = dir
            .parent()
            .map_or_else(std::env::temp_dir, Path::to_path_buf);
        std::fs::create_dir_all(&parent).map_err(fail(&parent))?;
        let staging = parent.join(format!(
            ".colyseus-{VERSION}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        ));
        let installed = install_into(&staging);
        if let Err(error) = installed {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(error);
        }
        if !is_installed(&dir) {
            // A stale installation (an older lock) goes away first.
            if dir.exists() {
                let old = staging.with_extension("old");
                if std::fs::rename(&dir, &old).is_ok() {
                    let _ = std::fs::remove_dir_all(&old);
                }
            }
            if let Err(error) = std::fs::rename(&staging, &dir)
                && !is_installed(&dir)
            {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(fail(&dir)(error));
            }
        }
        // Another process's won the race: ours is not needed.
        let _ = std::fs::remove_dir_all(&staging);
    }
    // The server itself needs no `npm ci`: it is written whenever it changed.
    let server = dir.join("server.js");
    if std::fs::read_to_string(&server).ok().as_deref() != Some(SERVER_JS) {
        let fresh = dir.join(format!(".server-{}.js", std::process::id()));
        std::fs::write(&fresh, SERVER_JS).map_err(fail(&dir))?;
        std::fs::rename(&fresh, &server).map_err(fail(&dir))?;
    }
    Ok(dir)
}

fn install_into(dir: &Path) -> Result<(), InstallError> {
    let fail = |error| InstallError::Io {
        dir: dir.display().to_string(),
        error,
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    for (name, text) in [
        ("package.json", PACKAGE_JSON),
        ("package-lock.json", PACKAGE_LOCK),
        ("server.js", SERVER_JS),
    ] {
        std::fs::write(dir.join(name), text).map_err(fail)?;
    }
    let output = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--legacy-peer-deps"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(fail)?;
    if !output.status.success() {
        let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stdout));
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        return Err(InstallError::Npm {
            dir: dir.display().to_string(),
            status: output.status.to_string(),
            output: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    std::fs::write(dir.join(INSTALLED_MARK), VERSION).map_err(fail)
}

/// The command that starts the server installed in `dir`: `node server.js` itself (no npm in
/// between, so the child is the process measured), on any free port, in production mode,
/// exiting by itself after `duration_secs` or when its standard input closes.
pub fn server_command(dir: &Path, duration_secs: u64) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("node");
    command
        .arg(dir.join("server.js"))
        .args(["--port", "0", "--duration-secs", &duration_secs.to_string()])
        .current_dir(dir)
        .env("NODE_ENV", "production");
    command
}

/// A message from the room, as far as the bots care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerMessage<'a> {
    /// The room took the client: it must confirm.
    JoinRoom {
        /// Its reconnection token.
        reconnection_token: String,
        /// The state serializer's id (`"none"`: the room has no state).
        serializer: String,
    },
    /// The room refused something.
    Error {
        /// The error code.
        code: u64,
        /// Its text.
        message: String,
    },
    /// A message of `kind` with its payload (raw bytes, or a msgpack `bin`'s bytes).
    Data {
        /// The message's type.
        kind: String,
        /// The payload's bytes.
        payload: &'a [u8],
    },
    /// Anything else (state, patches, leave): its code.
    Other(u8),
}

/// What is wrong with a message from the room.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("undecodable Colyseus message: {0}")]
pub struct DecodeError(&'static str);

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).ok_or(DecodeError("length"))?;
        let slice = self
            .bytes
            .get(self.at..end)
            .ok_or(DecodeError("truncated"))?;
        self.at = end;
        Ok(slice)
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn le(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self
            .take(n)?
            .iter()
            .rev()
            .fold(0, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn rest(&mut self) -> &'a [u8] {
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        self.at = self.bytes.len();
        rest
    }

    fn is_schema_string(&self) -> bool {
        self.bytes
            .get(self.at)
            .is_some_and(|&b| (0xa1..0xc0).contains(&b) || (0xd9..=0xdb).contains(&b))
    }

    /// A schema string (msgpack's prefixes, little-endian lengths).
    fn schema_string(&mut self) -> Result<String, DecodeError> {
        let prefix = self.byte()?;
        let length = match prefix {
            0xa0..=0xbf => u64::from(prefix & 0x1f),
            0xd9 => self.le(1)?,
            0xda => self.le(2)?,
            0xdb => self.le(4)?,
            _ => return Err(DecodeError("not a string")),
        };
        let bytes = self.take(usize::try_from(length).map_err(|_| DecodeError("length"))?)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError("not UTF-8"))
    }

    /// A schema number (unsigned integers only: message types and error codes).
    fn schema_number(&mut self) -> Result<u64, DecodeError> {
        match self.byte()? {
            small @ 0..0x80 => Ok(u64::from(small)),
            0xcc => self.le(1),
            0xcd => self.le(2),
            0xce => self.le(4),
            0xcf => self.le(8),
            _ => Err(DecodeError("not an unsigned number")),
        }
    }

    /// A message type: a string or a number.
    fn kind(&mut self) -> Result<String, DecodeError> {
        if self.is_schema_string() {
            self.schema_string()
        } else {
            self.schema_number().map(|n| n.to_string())
        }
    }

    /// A string with a one-byte length (the JOIN_ROOM fields).
    fn short_string(&mut self) -> Result<String, DecodeError> {
        let length = usize::from(self.byte()?);
        String::from_utf8(self.take(length)?.to_vec()).map_err(|_| DecodeError("not UTF-8"))
    }

    /// A msgpack `bin` (the payload of `room.send(type, bytes)`).
    fn msgpack_bin(&mut self) -> Result<&'a [u8], DecodeError> {
        let length = match self.byte()? {
            0xc4 => self.be(1)?,
            0xc5 => self.be(2)?,
            0xc6 => self.be(4)?,
            _ => return Err(DecodeError("the payload is not a msgpack bin")),
        };
        self.take(usize::try_from(length).map_err(|_| DecodeError("length"))?)
    }
}

/// Decodes one message from the room.
pub fn decode(bytes: &[u8]) -> Result<ServerMessage<'_>, DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    match r.byte()? {
        JOIN_ROOM => Ok(ServerMessage::JoinRoom {
            reconnection_token: r.short_string()?,
            serializer: r.short_string()?,
        }),
        ERROR => Ok(ServerMessage::Error {
            code: r.schema_number()?,
            message: if r.at < bytes.len() {
                r.schema_string()?
            } else {
                String::new()
            },
        }),
        ROOM_DATA_BYTES => Ok(ServerMessage::Data {
            kind: r.kind()?,
            payload: r.rest(),
        }),
        ROOM_DATA => {
            let kind = r.kind()?;
            let payload = r.msgpack_bin()?;
            Ok(ServerMessage::Data { kind, payload })
        }
        other => Ok(ServerMessage::Other(other)),
    }
}

/// `room.send(kind, payload)` with `payload` bytes: `ROOM_DATA`, the type, a msgpack `bin`.
pub fn encode_send(kind: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + kind.len() + 8);
    out.push(ROOM_DATA);
    let length = kind.len();
    match u8::try_from(length) {
        Ok(n) if n < 32 => out.push(0xa0 | n),
        Ok(n) => out.extend([0xd9, n]),
        Err(_) => {
            out.push(0xda);
            out.extend_from_slice(&u16::try_from(length).unwrap_or(u16::MAX).to_le_bytes());
        }
    }
    out.extend_from_slice(kind.as_bytes());
    let length = payload.len();
    if let Ok(n) = u8::try_from(length) {
        out.extend([0xc4, n]);
    } else if let Ok(n) = u16::try_from(length) {
        out.push(0xc5);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0xc6);
        out.extend_from_slice(&u32::try_from(length).unwrap_or(u32::MAX).to_be_bytes());
    }
    out.extend_from_slice(payload);
    out
}

/// The payload that makes the room's broadcast of it `frame_bytes` long (the server's mean
/// broadcast): the broadcast's header comes off.
pub fn payload_bytes(frame_bytes: usize) -> usize {
    frame_bytes.saturating_sub(BROADCAST_HEADER_BYTES)
}

/// A seat reservation from the matchmaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// The room.
    pub room_id: String,
    /// The process that hosts it.
    pub process_id: String,
    /// The client's session.
    pub session_id: String,
}

impl Reservation {
    /// The WebSocket URL of the reservation at `base_url` (`ws://host:port`).
    pub fn url(&self, base_url: &str) -> String {
        format!(
            "{}/{}/{}?sessionId={}",
            base_url.trim_end_matches('/'),
            self.process_id,
            self.room_id,
            self.session_id
        )
    }
}

/// Reads the matchmaker's HTTP reply (status line, headers, JSON body).
pub fn parse_reservation(reply: &[u8]) -> Result<Reservation, String> {
    let text = String::from_utf8_lossy(reply);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| "no HTTP reply".to_owned())?;
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("HTTP {status:?}"));
    }
    let json: Value = serde_json::from_str(body).map_err(|e| format!("reply {body:?}: {e}"))?;
    if let Some(error) = json.get("error") {
        return Err(format!("{} (code {})", error, json["code"]));
    }
    let field = |value: &Value, name: &str| {
        value[name]
            .as_str()
            .filter(|s| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            })
            .map(str::to_owned)
            .ok_or_else(|| format!("no {name} in {body:?}"))
    };
    Ok(Reservation {
        room_id: field(&json["room"], "roomId")?,
        process_id: field(&json["room"], "processId")?,
        session_id: field(&json, "sessionId")?,
    })
}

/// The largest matchmaking reply read.
const MAX_REPLY_BYTES: u64 = 64 * 1024;

/// `client.joinOrCreate("fanout", {table, seats})`'s HTTP half: reserves a seat in the room
/// of `table` at `base_url` (`ws://host:port`).
pub async fn matchmake(
    base_url: &str,
    table: usize,
    seats: usize,
) -> Result<Reservation, BotError> {
    let authority = base_url
        .strip_prefix("ws://")
        .unwrap_or(base_url)
        .trim_end_matches('/');
    let body = serde_json::json!({ "table": table, "seats": seats }).to_string();
    // HTTP/1.0: the reply is not chunked and ends with the connection.
    let request = format!(
        "POST /matchmake/joinOrCreate/{ROOM_NAME} HTTP/1.0\r\nHost: {authority}\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let exchange = async {
        let mut stream = TcpStream::connect(authority).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut reply = Vec::new();
        (&mut stream)
            .take(MAX_REPLY_BYTES)
            .read_to_end(&mut reply)
            .await?;
        Ok::<_, std::io::Error>(reply)
    };
    let reply = tokio::time::timeout(ANSWER_PATIENCE, exchange)
        .await
        .map_err(|_| BotError::Timeout("the Colyseus matchmaker"))??;
    parse_reservation(&reply).map_err(|code| BotError::Refused {
        request: "joinOrCreate",
        code,
    })
}

/// Joins the room of `table`: matchmaking, the WebSocket, the `JOIN_ROOM` handshake. Returns
/// the socket, in the room.
pub async fn join(base_url: &str, table: usize, seats: usize) -> Result<Socket, BotError> {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let reservation = matchmake(base_url, table, seats).await?;
    let mut ws = link::connect(&reservation.url(base_url)).await?;
    loop {
        let frame = tokio::time::timeout(ANSWER_PATIENCE, ws.next())
            .await
            .map_err(|_| BotError::Timeout("the Colyseus JOIN_ROOM"))?;
        let bytes = match frame {
            None => return Err(BotError::Closed(None)),
            Some(Err(error)) => return Err(error.into()),
            Some(Ok(Message::Binary(bytes))) => bytes,
            Some(Ok(Message::Close(frame))) => {
                return Err(BotError::Closed(frame.map(|f| u16::from(f.code))));
            }
            Some(Ok(_)) => continue,
        };
        match decode(&bytes) {
            Ok(ServerMessage::JoinRoom { .. }) => break,
            Ok(ServerMessage::Error { code, message }) => {
                return Err(BotError::Refused {
                    request: "JOIN_ROOM",
                    code: format!("{code}: {message}"),
                });
            }
            Ok(_) => {}
            Err(error) => {
                return Err(BotError::Refused {
                    request: "JOIN_ROOM",
                    code: error.to_string(),
                });
            }
        }
    }
    ws.send(Message::Binary(vec![JOIN_ROOM].into())).await?;
    Ok(ws)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_send_is_room_data_with_a_msgpack_bin() {
        let payload: Vec<u8> = (0..20).collect();
        let bytes = encode_send("a", &payload);
        assert_eq!(&bytes[..5], &[ROOM_DATA, 0xa1, b'a', 0xc4, 20]);
        assert_eq!(&bytes[5..], &payload[..]);
        // The same decoder reads it back (the room would send it so with `client.send`).
        assert_eq!(
            decode(&bytes).unwrap(),
            ServerMessage::Data {
                kind: "a".into(),
                payload: &payload
            }
        );
        // Longer payloads: bin 16, big-endian; longer types: str 8.
        let long = vec![7u8; 300];
        let bytes = encode_send("a", &long);
        assert_eq!(&bytes[3..6], &[0xc5, 0x01, 0x2c]);
        assert_eq!(bytes.len(), 6 + 300);
        let kind = "k".repeat(40);
        let bytes = encode_send(&kind, &[1]);
        assert_eq!(&bytes[..3], &[ROOM_DATA, 0xd9, 40]);
        assert_eq!(
            decode(&bytes).unwrap(),
            ServerMessage::Data {
                kind,
                payload: &[1]
            }
        );
    }

    #[test]
    fn a_broadcast_of_bytes_is_the_frame_size() {
        let payload = vec![5u8; payload_bytes(120)];
        // What `this.broadcast("a", payload)` sends for a Uint8Array payload.
        let mut broadcast = vec![ROOM_DATA_BYTES, 0xa1, b'a'];
        broadcast.extend_from_slice(&payload);
        assert_eq!(broadcast.len(), 120, "the broadcast is the frame size");
        assert_eq!(
            decode(&broadcast).unwrap(),
            ServerMessage::Data {
                kind: "a".into(),
                payload: &payload
            }
        );
        assert_eq!(payload_bytes(2), 0);
    }

    #[test]
    fn join_error_and_other_messages_are_told_apart() {
        let mut join = vec![JOIN_ROOM, 3];
        join.extend_from_slice(b"tok");
        join.push(4);
        join.extend_from_slice(b"none");
        assert_eq!(
            decode(&join).unwrap(),
            ServerMessage::JoinRoom {
                reconnection_token: "tok".into(),
                serializer: "none".into()
            }
        );
        // Code 4212 as a schema uint16 (little-endian), then the text.
        let error = [ERROR, 0xcd, 0x74, 0x10, 0xa4, b'g', b'o', b'n', b'e'];
        assert_eq!(
            decode(&error).unwrap(),
            ServerMessage::Error {
                code: 4212,
                message: "gone".into()
            }
        );
        assert_eq!(decode(&[14, 1, 2]).unwrap(), ServerMessage::Other(14));
        // A number as the type.
        assert_eq!(
            decode(&[ROOM_DATA_BYTES, 0x05, 9]).unwrap(),
            ServerMessage::Data {
                kind: "5".into(),
                payload: &[9]
            }
        );
        for bad in [
            &[][..],
            &[JOIN_ROOM, 9, b'x'],
            &[ROOM_DATA, 0xa1, b'a', 0x90],
            &[ROOM_DATA, 0xa1, b'a', 0xc4, 5, 1],
            &[ROOM_DATA_BYTES, 0xc1],
        ] {
            assert!(decode(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_matchmakers_reply_is_read() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"room\":{\"clients\":1,\"name\":\"fanout\",\"processId\":\"ZamauFhP4\",\"table\":3,\"roomId\":\"0d9Xcqr95\"},\"sessionId\":\"1zt0L3MqZ\"}";
        let reservation = parse_reservation(ok).unwrap();
        assert_eq!(
            reservation,
            Reservation {
                room_id: "0d9Xcqr95".into(),
                process_id: "ZamauFhP4".into(),
                session_id: "1zt0L3MqZ".into()
            }
        );
        assert_eq!(
            reservation.url("ws://127.0.0.1:9/"),
            "ws://127.0.0.1:9/ZamauFhP4/0d9Xcqr95?sessionId=1zt0L3MqZ"
        );
        let refused = b"HTTP/1.1 200 OK\r\n\r\n{\"code\":4211,\"error\":\"no rooms found\"}";
        assert!(
            parse_reservation(refused)
                .unwrap_err()
                .contains("no rooms found")
        );
        assert!(parse_reservation(b"HTTP/1.1 503 Service Unavailable\r\n\r\n").is_err());
        let odd = b"HTTP/1.1 200 OK\r\n\r\n{\"room\":{\"processId\":\"a/b\",\"roomId\":\"r\"},\"sessionId\":\"s\"}";
        assert!(
            parse_reservation(odd).is_err(),
            "ids go into the URL as they are"
        );
    }

    #[test]
    fn the_server_is_node_itself() {
        let command = server_command(Path::new("/x/colyseus-0.16.5"), 90);
        let command = command.as_std();
        assert_eq!(command.get_program(), "node", "no npm in between");
        let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy()).collect();
        assert_eq!(
            args,
            [
                "/x/colyseus-0.16.5/server.js",
                "--port",
                "0",
                "--duration-secs",
                "90"
            ]
        );
        assert!(
            command
                .get_envs()
                .any(|(k, v)| k == "NODE_ENV" && v == Some("production".as_ref()))
        );
    }

    #[test]
    fn node_versions_are_read() {
        assert_eq!(node_major("v20.20.2\n"), Some(20));
        assert_eq!(node_major("v18.1.0"), Some(18));
        assert_eq!(node_major("20"), None);
    }

    #[test]
    fn the_embedded_package_pins_every_version() {
        let package: Value = serde_json::from_str(PACKAGE_JSON).unwrap();
        assert_eq!(package["dependencies"]["colyseus"], VERSION);
        assert_eq!(package["engines"]["node"], format!(">={NODE_MAJOR}"));
        for (name, version) in package["dependencies"].as_object().unwrap() {
            let version = version.as_str().unwrap();
            assert!(
                version.split('.').all(|p| p.parse::<u32>().is_ok()),
                "{name} {version} is not exact"
            );
        }
        let lock: Value = serde_json::from_str(PACKAGE_LOCK).unwrap();
        assert_eq!(
            lock["packages"]["node_modules/colyseus"]["version"],
            VERSION
        );
        assert!(SERVER_JS.contains("colyseus listening on"));
    }
}
