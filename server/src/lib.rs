//! The Grand Melee server: hosts many tables of simultaneous-turn Magic: The Gathering over
//! WebSockets, with thin clients mirroring each table's state from numbered events.
//!
//! Reading order, top down. Each module imports only the ones after it (no import circle;
//! `../shared/tools/import-circles` checks it): `server` → `node` → `connection` → `room` →
//! `proxy` → [`leagues`] → `lobby` → `cluster` → [`journal`] → [`store`] → `conn` → `outbox`, and below
//! them all `hosts` (with `reactor` below it), `frames`, `http` (with `docs`, its `book_paths`, and `qr`), [`acme`], [`config`] (with [`durability`] and `ice`), `origin`,
//! [`forwarded`], `tls`, `password`, [`metrics`].
//!
//! - `grand_melee_protocol::session` (the protocol crate): the pure core — the table's rules, its
//!   one fold, and the session around it (seats and their tokens, the host, absence, clocks,
//!   pause, kick, mute, spectators, chat). Every table runs on it and every client mirrors it.
//! - [`server`]: the accept loop, the wiring (the one place that picks the SQLite journal or the
//!   cluster: `Shared::store`, `Shared::peers`, recovery or takeover at start) and graceful
//!   shutdown.
//! - `node` (private, cluster mode): each node's loops — the directory watch, the lease
//!   renewals and the claims of a dead node's tables.
//! - `connection` (private): one client — TLS, then HTTP, then the WebSocket session that
//!   answers session requests (lobby, replays, leagues) and forwards table requests, one future
//!   for both directions (a TLS connection's writing has a task of its own), run by `hosts`
//!   (private: a task per worker thread polling many sessions, and the sessions' one clock),
//!   a plain connection's socket watched by `reactor` (private: the server's own readiness
//!   loop, a thread blocked in `epoll_wait`, instead of tokio's reactor).
//! - `room` (private): a table's actor — owns one `Session`, the table's members (connections),
//!   its name and password hash, its settings as stored, and its place in storage; journals what
//!   each request produced before it publishes the event batch, encoded once, to every member.
//! - `proxy` (private, cluster mode): a table's stand-in on a node that does not own it, the
//!   owner's side of that link, and `ClusterPeers`, the cluster's `lobby::Peers`.
//! - [`leagues`]: the league requests (create, join, decks, pages) and a member's seat.
//! - `lobby` (private): what tasks share (`Shared`) — the registry of tables, the actor's
//!   messages, the caps and guess limits, the password check, page sizes, the store and the
//!   other nodes (`Peers`: the cluster's, or `Alone` on a single server).
//! - `cluster` (private, cluster mode): the JetStream engine — table records, the directory, the
//!   league store, appends and reads, the node-to-node messages.
//! - [`journal`]: the SQLite journal — tables, seats, events, replays, and (in
//!   [`journal::leagues`]) the league rows and the writes decided in the writer's transaction.
//! - [`store`]: storage behind one interface — the `Store` and `TableLog` traits the actor, the
//!   connection and the leagues use (the SQLite journal and the cluster implement them), and
//!   what both keep: a table's record, the one [`store::Flush`] per request (its events and
//!   [`store::TableOp`]s, written all or nothing) and the table as read back (the fold of its
//!   flushes).
//! - `conn` (private): the handle to one connection — its outbox and a close with a reason.
//! - `frames` (private): what the server reads — a connection's WebSocket frames (RFC 6455),
//!   taken from the thread's scratch buffer, with no read buffer per connection.
//! - `outbox` (private): what the server sends — WebSocket frames built once and shared, each
//!   connection's bounded queue, written straight to the socket when it would not block.
//! - `http` (private): plain HTTP on hyper — the browser page and its assets (embedded),
//!   `/healthz`, `/metrics`, `/qr.svg` (`qr`, private: a link as a QR code), the manual at
//!   `/docs` (`docs`, private: the mdBook under `docs/`, embedded and rendered), and the WebSocket
//!   handshake; `tls` (private): `--tls-cert`; [`acme`]: automatic HTTPS (`--acme-domain`);
//!   `origin` (private): which browser pages may open a
//!   WebSocket; [`forwarded`]: whom a request from a `--trusted-proxy` speaks for.
//! - [`config`] (with [`durability`], how hard commits reach the disk, and `ice`, private: the
//!   STUN/TURN servers of the camera links and the TURN credentials minted for them),
//!   `password` (private: hashing on a bounded pool), [`metrics`].

pub mod acme;
pub mod backup;
mod book_paths;
mod budget;
mod cluster;
pub mod config;
mod conn;
mod connection;
mod docs;
pub mod durability;
pub mod forwarded;
mod frames;
mod hosts;
mod http;
mod ice;
mod invite;
pub mod journal;
pub mod leagues;
mod lobby;
pub mod metrics;
mod mountain;
mod node;
mod origin;
mod outbox;
mod password;
mod proxy;
mod qr;
mod reactor;
mod room;
pub mod server;
pub mod store;
mod tls;

pub use config::ServerConfig;
pub use server::Server;
