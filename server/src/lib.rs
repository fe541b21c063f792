//! The Grand Melee server: hosts many tables of simultaneous-turn Magic: The Gathering over
//! WebSockets, with thin clients mirroring each table's state from numbered events.
//!
//! Reading order:
//! - `grand_melee_protocol::rules` (the protocol crate): the pure rules core and the one fold
//!   every table runs on and every client mirrors.
//! - `room` (private): a table's actor — owns one core table, its members, seat tokens, host and
//!   event sequence; publishes each event batch encoded once to every member.
//! - `http` (private): plain HTTP on hyper — the browser page and its assets (embedded),
//!   `/healthz`, `/metrics`, `/qr.svg` (`qr`, private: a link as a QR code), and the WebSocket
//!   handshake; `tls` (private): `--tls-cert`;
//!   `origin` (private): which browser pages may open a WebSocket; [`forwarded`]: whom a request
//!   from a `--trusted-proxy` speaks for.
//! - `connection` (private): one client — TLS, then HTTP, then the WebSocket reader that
//!   answers session requests and forwards table requests, and the writer task.
//! - `outbox` (private): what the server sends — WebSocket frames built once and shared, each
//!   connection's bounded queue, written straight to the socket when it would not block.
//! - [`server`]: the accept loop, the lobby registry of tables, and graceful shutdown.
//! - [`config`], [`metrics`].

mod cluster;
pub mod config;
mod conn;
mod connection;
pub mod forwarded;
mod http;
pub mod journal;
pub mod leagues;
mod lobby;
pub mod metrics;
mod origin;
mod outbox;
mod password;
mod qr;
mod room;
pub mod server;
mod tls;

pub use config::ServerConfig;
pub use server::Server;
