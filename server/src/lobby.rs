//! What the connections and the table actors share, below both of them: the registry of
//! tables, the messages a table's actor receives, and the caps every task reserves before it
//! does the work they limit (given back by drop guards). Nothing here knows the actor or the
//! connection tasks, so `connection` → `room` → `lobby` → `conn` has no circle.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use dashmap::DashMap;
use futures_util::future::BoxFuture;
use grand_melee_protocol::league::LeagueId;
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, SeatToken, TableId, TableSummary,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::cluster::OutItem;
use tokio_util::task::TaskTracker;

pub(crate) use crate::budget::Guarded;
use crate::budget::{Budgets, Held};
use crate::config::ServerConfig;
use crate::conn::Conn;
use crate::journal::Journal;
use crate::metrics::Metrics;

pub(crate) use grand_melee_protocol::session::Role;

/// A connection's link to its table, kept by the connection's reader.
#[derive(Debug)]
pub(crate) struct Membership {
    pub tx: mpsc::Sender<RoomMsg>,
    /// The table.
    pub table: TableId,
    /// A spectator's place under `--max-spectators-per-ip`, held while he watches (boxed: a
    /// player's membership, which every seated connection keeps, needs none).
    pub _spectator: Option<Box<SpectatorSlot>>,
}

/// A member's seat at a league table: his name, and his deck as it sits down (with the opponent
/// of his last game if it was a two-player game).
#[derive(Debug, Clone)]
pub(crate) struct LeagueSeat {
    pub name: String,
    pub deck: grand_melee_protocol::league::SeatDeck,
}

/// How a connection asks to enter a table.
#[derive(Debug)]
pub(crate) enum Entry {
    /// Take a seat (the password, if any, was checked by the connection).
    Join {
        name: String,
        /// What the client contributes to the table's dice.
        entropy: String,
        /// At a league table: the member's seat (looked up by the connection).
        league: Option<LeagueSeat>,
        /// At a league table: the member token the request gave.
        member_token: Option<grand_melee_protocol::league::MemberToken>,
    },
    /// Watch (the password, if any, was checked by the connection).
    Watch,
    Resume {
        token: SeatToken,
    },
}

/// What a table's actor receives.
#[derive(Debug)]
pub(crate) enum RoomMsg {
    /// Join, watch or resume (boxed: every message takes a slot as large as the largest in the
    /// table's channel, and tokio allocates them 32 at a time, so the rare large ones are kept
    /// out of line).
    Enter(Box<Enter>),
    /// A request from a member.
    Request {
        connection: u64,
        request: Box<ClientMessage>,
        received: Instant,
    },
    /// A member leaves on purpose (a seated player in a game keeps his seat).
    Leave {
        connection: u64,
        request_id: u32,
        reply: oneshot::Sender<()>,
    },
    /// A member's connection is gone.
    Gone { connection: u64 },
    /// Cluster mode: the directory names another owner: give the table up.
    Lost,
}

/// A connection that asks to enter a table. On success the actor has already queued the answer
/// and a snapshot on the connection.
#[derive(Debug)]
pub(crate) struct Enter {
    pub conn: Conn,
    pub request_id: u32,
    pub entry: Entry,
    /// The role, and the seat token of a player.
    pub reply: oneshot::Sender<Result<(Role, Option<SeatToken>), ErrorCode>>,
    /// No `seated`/`watching` answer, only the snapshot: the connection entered before, and the
    /// table moved to another node (cluster mode).
    pub quiet: bool,
}

// A table's channel holds its messages in blocks of 32 slots of the largest message: kept small
// (32 bytes on 64-bit targets; 232 before the large parts were boxed, 80 before `Enter` was).
const _: () = assert!(std::mem::size_of::<RoomMsg>() <= 32);

/// A table in the lobby registry: the way into its actor, its latest summary, and the hash of
/// its password (checked by the connection, off the actor, before it asks to enter).
#[derive(Debug)]
pub(crate) struct TableEntry {
    pub tx: mpsc::Sender<RoomMsg>,
    pub summary: watch::Receiver<TableSummary>,
    pub password: Option<Arc<str>>,
}

/// What a table's actor and the connections need from the other nodes (cluster mode:
/// `proxy::ClusterPeers`); a single server has none ([`Alone`]). `server` picks one.
pub(crate) trait Peers: Send + Sync + std::fmt::Debug {
    /// Starts serving a table this node runs to its members on other nodes and keeping its
    /// directory entry current; dropping the guard stops both.
    fn serve<'a>(
        &'a self,
        shared: &'a Arc<Shared>,
        table: TableId,
        room: mpsc::WeakSender<RoomMsg>,
        summary: watch::Receiver<TableSummary>,
    ) -> BoxFuture<'a, Option<DropGuard>>;

    /// Publishes, once for every node, what the members on other nodes receive after one
    /// request.
    fn publish(&self, table: TableId, items: Vec<OutItem>) -> BoxFuture<'_, ()>;

    /// A finished table's actor has closed: nobody runs it any more.
    fn closed(&self, table: TableId) -> BoxFuture<'_, ()>;

    /// Before a connection enters a table this node does not run: opens its stand-in here if
    /// another node runs it.
    fn reach<'a>(&'a self, shared: &'a Arc<Shared>, table: TableId) -> BoxFuture<'a, ()>;
}

/// A single server: no other nodes.
#[derive(Debug)]
pub(crate) struct Alone;

impl Peers for Alone {
    fn serve<'a>(
        &'a self,
        _shared: &'a Arc<Shared>,
        _table: TableId,
        _room: mpsc::WeakSender<RoomMsg>,
        _summary: watch::Receiver<TableSummary>,
    ) -> BoxFuture<'a, Option<DropGuard>> {
        Box::pin(async { None })
    }

    fn publish(&self, _table: TableId, _items: Vec<OutItem>) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn closed(&self, _table: TableId) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn reach<'a>(&'a self, _shared: &'a Arc<Shared>, _table: TableId) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// What every connection and table task shares. Game state is not here: each table's state
/// belongs to its own task.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: ServerConfig,
    pub metrics: Arc<Metrics>,
    pub tables: DashMap<TableId, TableEntry>,
    /// Stops every connection: the sessions' hosts kick each of theirs.
    pub shutdown: CancellationToken,
    /// Stops every table actor; cancelled first, so that no table publishes while connections
    /// are closing.
    pub stop_tables: CancellationToken,
    /// Connection tasks: each connection's handshake, and the hosts its session runs in.
    pub tasks: TaskTracker,
    /// Where the WebSocket sessions run, many to a task.
    pub hosts: crate::hosts::Hosts,
    /// Table actors.
    pub table_tasks: TaskTracker,
    /// Where every table's events are made durable before anyone sees them.
    pub journal: Journal,
    /// Which browser pages may open a WebSocket (`--allowed-origins`, `--public-url`, the
    /// certificate's names), shared by every HTTP connection.
    pub origins: Arc<crate::origin::OriginPolicy>,
    /// `--trusted-proxy`, shared by every HTTP connection.
    pub trusted_proxies: Arc<[crate::forwarded::Cidr]>,
    /// Cluster mode: the engine, the directory and this node's name.
    pub cluster: Option<Arc<crate::cluster::Cluster>>,
    /// Where the tables, their replays and the leagues are kept: the journal, or in cluster
    /// mode the engine (chosen by `server`).
    pub store: Arc<dyn crate::store::Store>,
    /// The other nodes (chosen by `server`): [`Alone`] on a single server.
    pub peers: Arc<dyn Peers>,
    next_connection: AtomicU64,
    /// Tables open or reserved, for `--max-tables`: reserved before anything is written, so
    /// concurrent creations can never pass the cap.
    open_tables: AtomicUsize,
    /// Every per-address budget (caps and rates), in one place.
    pub budgets: Arc<Budgets>,
    /// `/qr.svg`'s codes: drawn off the tables' threads, cached, within their budgets.
    pub qr: Arc<crate::qr::Codes>,
    /// Where every password is hashed: a fixed pool of threads, each with one buffer.
    pub hasher: crate::password::Hasher,
    /// The server's mountain secret, once read from the store (`mountain`).
    pub mountain_secret: tokio::sync::OnceCell<grand_melee_protocol::dice::DiceSecret>,
    /// The STUN/TURN servers handed to the pages' camera links, with the TURN secret.
    pub ice: crate::ice::Ice,
    /// What `GET /invite.json` tells a page about the address to invite others with.
    pub invite: Arc<crate::invite::Invite>,
}

impl Shared {
    /// Everything shared, for a server with `config` and `journal`.
    pub(crate) fn new(
        config: ServerConfig,
        journal: Journal,
        cluster: Option<Arc<crate::cluster::Cluster>>,
        store: Arc<dyn crate::store::Store>,
        peers: Arc<dyn Peers>,
        metrics: Arc<Metrics>,
        origins: crate::origin::OriginPolicy,
    ) -> Self {
        let hasher = crate::password::Hasher::new(config.password_hash_threads);
        // `Server::bind` refused to start with settings this refuses.
        let ice = config.ice().unwrap_or_default();
        let budgets = Arc::new(Budgets::new(&config));
        let qr = Arc::new(crate::qr::Codes::new(
            Arc::clone(&budgets),
            Arc::clone(&metrics),
        ));
        let invite = Arc::new(crate::invite::Invite::new(
            config.public_url.clone(),
            config.listen,
            config.tls_cert.is_some(),
        ));
        Self {
            ice,
            invite,
            cluster,
            store,
            peers,
            origins: Arc::new(origins),
            trusted_proxies: Arc::from(config.trusted_proxies.clone()),
            config,
            metrics,
            tables: DashMap::new(),
            shutdown: CancellationToken::new(),
            stop_tables: CancellationToken::new(),
            table_tasks: TaskTracker::new(),
            tasks: TaskTracker::new(),
            hosts: crate::hosts::Hosts::default(),
            next_connection: AtomicU64::new(1),
            open_tables: AtomicUsize::new(0),
            budgets,
            qr,
            hasher,
            mountain_secret: tokio::sync::OnceCell::new(),
            journal,
        }
    }

    /// The address every per-address cap, throttle and ban counts `ip` as: an IPv6 address by
    /// its first `--ipv6-prefix` bits (a home's /64 is one client), an IPv4 address by its first
    /// `--ipv4-prefix` bits (all 32 by default). An IPv4 address mapped into IPv6 counts as
    /// IPv4. The same address always gives the same key, and a key is its own key.
    pub(crate) fn key(&self, ip: IpAddr) -> IpAddr {
        self.budgets.key(ip)
    }

    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Relaxed)
    }

    /// Counts a connection from `ip` against the per-IP cap; `None` if the cap is reached.
    pub(crate) fn admit_ip(&self, ip: IpAddr) -> Option<IpSlot> {
        self.budgets.connections.hold(self.key(ip))
    }
}

/// Why a table cannot be created now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableRefusal {
    /// `--max-tables` tables are open.
    ServerFull,
    /// The address has `--max-tables-per-ip` open tables, or has created
    /// `--table-creations-per-minute` this minute.
    TooManyFromAddress,
}

impl Shared {
    /// Reserves a place for a new table created from `ip`, or says why not. The place is taken
    /// atomically (concurrent creations can never pass the caps) and given back when the
    /// returned slot is dropped: when creation fails, or when the table's actor ends.
    pub(crate) fn reserve_table(
        self: &Arc<Self>,
        ip: Option<IpAddr>,
        now: std::time::Instant,
    ) -> Result<TableSlot, TableRefusal> {
        let cap = self.config.max_tables;
        if self
            .open_tables
            .fetch_update(Relaxed, Relaxed, |n| (n < cap).then_some(n + 1))
            .is_err()
        {
            return Err(TableRefusal::ServerFull);
        }
        let mut slot = TableSlot {
            shared: Arc::clone(self),
            ip: None,
        };
        let Some(ip) = ip.map(|ip| self.key(ip)) else {
            return Ok(slot);
        };
        // The place first: a creation refused for it spends no token.
        let held = self
            .budgets
            .tables
            .hold(ip)
            .ok_or(TableRefusal::TooManyFromAddress)?;
        if !self.budgets.creations.take(ip, now) {
            return Err(TableRefusal::TooManyFromAddress);
        }
        slot.ip = Some(held);
        Ok(slot)
    }

    /// A place for a table recovered from the journal: counted, but never refused (the tables
    /// were open before the restart).
    pub(crate) fn recovered_table(self: &Arc<Self>) -> TableSlot {
        self.open_tables.fetch_add(1, Relaxed);
        TableSlot {
            shared: Arc::clone(self),
            ip: None,
        }
    }

    /// Counts a spectator from `ip` against `--max-spectators-per-ip`; `None` if the cap is
    /// reached. The place is given back when the slot is dropped.
    pub(crate) fn admit_spectator(&self, ip: IpAddr) -> Option<SpectatorSlot> {
        self.budgets.spectators.hold(self.key(ip))
    }

    /// Whether `ip` may try a password at `table` (or a secret of a league) now: wrong guesses
    /// are limited per address and table; a right one costs nothing, and asking about any id
    /// remembers nothing.
    pub(crate) fn may_guess(
        &self,
        ip: IpAddr,
        table: impl Into<Guarded>,
        now: std::time::Instant,
    ) -> bool {
        self.budgets
            .wrong_guesses
            .allows(&(self.key(ip), table.into()), now)
    }

    /// Records a wrong password from `ip` at `table`.
    pub(crate) fn wrong_guess(
        &self,
        ip: IpAddr,
        table: impl Into<Guarded>,
        now: std::time::Instant,
    ) {
        self.budgets
            .wrong_guesses
            .charge((self.key(ip), table.into()), now);
    }

    /// Whether `ip` may join `league` now: a token of `--league-joins-per-minute`, and fewer
    /// than `--max-league-members-per-ip` members added to that league from the address.
    /// `Err` carries the message of the refusal.
    pub(crate) fn may_join_league(
        &self,
        ip: IpAddr,
        league: LeagueId,
        now: std::time::Instant,
    ) -> Result<(), &'static str> {
        let ip = self.key(ip);
        if self.budgets.league_members.is_full(&(ip, league)) {
            return Err("this address has added as many members to this league as allowed");
        }
        if !self.budgets.league_joins.take(ip, now) {
            return Err("too many league joins from this address: try again in a minute");
        }
        Ok(())
    }
}

/// A table's place under `--max-tables` (and its creator's under `--max-tables-per-ip`), given
/// back when dropped.
#[derive(Debug)]
pub(crate) struct TableSlot {
    shared: Arc<Shared>,
    ip: Option<Held<IpAddr>>,
}

impl Drop for TableSlot {
    fn drop(&mut self) {
        self.shared.open_tables.fetch_sub(1, Relaxed);
    }
}

/// A spectator's place under `--max-spectators-per-ip`, given back when dropped.
pub(crate) type SpectatorSlot = Held<IpAddr>;

/// One connection's place under the per-IP cap, given back when dropped.
pub(crate) type IpSlot = Held<IpAddr>;

/// The number of items a page may hold: the request's `limit`, at least 1, at most
/// [`wire::MAX_PAGE_ITEMS`].
pub(crate) fn page_items(limit: u32) -> usize {
    usize::try_from(limit.clamp(1, wire::MAX_PAGE_ITEMS)).unwrap_or(1)
}

impl Shared {
    /// The most bytes of items one answer holds: [`wire::MAX_PAGE_BYTES`], or less if this
    /// server's outgoing queues are small, so that a page always fits a connection's queue with
    /// room to spare for the events that arrive meanwhile.
    pub(crate) fn page_bytes(&self) -> usize {
        wire::MAX_PAGE_BYTES
            .min(self.config.outgoing_queue_bytes / wire::server_limits::PAGE_SHARE_OF_QUEUE)
            .max(wire::MIN_PAGE_BYTES)
    }
}

/// Takes items from `items` until `max` of them or until the next one would push the page past
/// `budget` bytes (at least one item, whatever its size).
pub(crate) fn fill_page<T: serde::Serialize>(
    items: impl Iterator<Item = T>,
    max: usize,
    budget: usize,
) -> Vec<T> {
    let mut page = Vec::new();
    let mut bytes = 0;
    for item in items.take(max) {
        let size = rmp_serde::to_vec_named(&item).map_or(0, |b| b.len());
        if !page.is_empty() && bytes + size > budget {
            break;
        }
        bytes += size;
        page.push(item);
    }
    page
}

/// Checks a password against a table's (or a league's) hash, on the server's hashing pool.
/// Everything cheap comes first: wrong guesses are limited per address and table (or league),
/// a missing or overlong password is wrong without a hash, and every check that would hash,
/// right or wrong, takes one of the address's password checks (`rate_limited` past them). The
/// pool bounds the hashes in flight for the whole server: a full queue is `server_busy`.
pub(crate) async fn check_password(
    shared: &Arc<Shared>,
    peer: IpAddr,
    table: impl Into<Guarded>,
    hash: Arc<str>,
    given: Option<String>,
) -> Result<(), ErrorCode> {
    let table = table.into();
    let now = Instant::now();
    if !shared.may_guess(peer, table, now) {
        return Err(ErrorCode::RateLimited);
    }
    let right = match given {
        // Longer than any password a table can have: wrong, without spending a hash on it.
        Some(given) if given.chars().count() > wire::MAX_PASSWORD_CHARS => false,
        Some(given) => {
            if !shared.budgets.password_checks.take(shared.key(peer), now) {
                return Err(ErrorCode::RateLimited);
            }
            match shared.hasher.verify(hash, given).await {
                Ok(right) => {
                    Metrics::add(&shared.metrics.password_checks, 1);
                    right
                }
                Err(crate::password::Busy) => {
                    Metrics::add(&shared.metrics.password_checks_refused, 1);
                    return Err(ErrorCode::ServerBusy);
                }
            }
        }
        None => false,
    };
    if right {
        Ok(())
    } else {
        shared.wrong_guess(peer, table, now);
        Err(ErrorCode::WrongPassword)
    }
}
