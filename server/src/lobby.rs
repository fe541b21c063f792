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

use crate::config::ServerConfig;
use crate::conn::Conn;
use crate::journal::Journal;
use crate::metrics::Metrics;
use grand_melee_protocol::limit::TokenBucket;

pub(crate) use grand_melee_protocol::session::Role;

/// A connection's link to its table, kept by the connection's reader.
#[derive(Debug)]
pub(crate) struct Membership {
    pub tx: mpsc::Sender<RoomMsg>,
    /// The table.
    pub table: TableId,
    /// A spectator's place under `--max-spectators-per-ip`, held while he watches.
    pub _spectator: Option<SpectatorSlot>,
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
    /// Join, watch or resume. On success the actor has already queued the answer and a snapshot
    /// on the connection.
    Enter {
        conn: Conn,
        request_id: u32,
        entry: Entry,
        /// The role, and the seat token of a player.
        reply: oneshot::Sender<Result<(Role, Option<SeatToken>), ErrorCode>>,
        /// No `seated`/`watching` answer, only the snapshot: the connection entered before,
        /// and the table moved to another node (cluster mode).
        quiet: bool,
    },
    /// A request from a member.
    Request {
        connection: u64,
        request: ClientMessage,
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
    /// Stops every connection (each has a child token).
    pub shutdown: CancellationToken,
    /// Stops every table actor; cancelled first, so that no table publishes while connections
    /// are closing.
    pub stop_tables: CancellationToken,
    /// Connection tasks.
    pub tasks: TaskTracker,
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
    /// Open connections per peer address, for the per-IP cap.
    per_ip: DashMap<IpAddr, usize>,
    /// Tables open or reserved, for `--max-tables`: reserved before anything is written, so
    /// concurrent creations can never pass the cap.
    open_tables: AtomicUsize,
    /// Open tables per creating address, for `--max-tables-per-ip`.
    tables_per_ip: DashMap<IpAddr, usize>,
    /// Table creations per address, for `--table-creations-per-minute`.
    creations: DashMap<IpAddr, TokenBucket>,
    /// Spectating connections per address, for `--max-spectators-per-ip`.
    spectators_per_ip: DashMap<IpAddr, usize>,
    /// Wrong-password guesses per address and table (or league), for
    /// `--wrong-passwords-per-minute`.
    guesses: DashMap<(IpAddr, Guarded), TokenBucket>,
    /// Starts of watching per address, for `--watches-per-minute`.
    watches: DashMap<IpAddr, TokenBucket>,
    /// Password checks per address, right or wrong, for `--password-checks-per-minute`.
    password_checks: DashMap<IpAddr, TokenBucket>,
    /// League joins per address, for `--league-joins-per-minute`.
    league_joins: DashMap<IpAddr, TokenBucket>,
    /// Members added per address and league, for `--max-league-members-per-ip`.
    league_members: DashMap<(IpAddr, LeagueId), usize>,
    /// Where every password is hashed: a fixed pool of threads, each with one buffer.
    pub hasher: crate::password::Hasher,
    /// The server's mountain secret, once read from the store (`mountain`).
    pub mountain_secret: tokio::sync::OnceCell<grand_melee_protocol::dice::DiceSecret>,
    /// The STUN/TURN servers handed to the pages' camera links, with the TURN secret.
    pub ice: crate::ice::Ice,
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
        Self {
            ice,
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
            next_connection: AtomicU64::new(1),
            per_ip: DashMap::new(),
            open_tables: AtomicUsize::new(0),
            tables_per_ip: DashMap::new(),
            creations: DashMap::new(),
            spectators_per_ip: DashMap::new(),
            guesses: DashMap::new(),
            watches: DashMap::new(),
            password_checks: DashMap::new(),
            league_joins: DashMap::new(),
            league_members: DashMap::new(),
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
        client_key(ip, self.config.ipv4_prefix, self.config.ipv6_prefix)
    }

    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Relaxed)
    }

    /// Counts a connection from `ip` against the per-IP cap; `None` if the cap is reached.
    pub(crate) fn admit_ip(self: &Arc<Self>, ip: IpAddr) -> Option<IpSlot> {
        let ip = self.key(ip);
        let cap = self.config.max_connections_per_ip;
        let mut count = self.per_ip.entry(ip).or_insert(0);
        if cap != 0 && *count >= cap {
            return None;
        }
        *count += 1;
        Some(IpSlot {
            shared: Arc::clone(self),
            ip,
        })
    }
}

/// `ip` as its client: the first `v4_prefix` or `v6_prefix` bits, the rest zero (an IPv4
/// address mapped into IPv6 is taken as IPv4).
pub(crate) fn client_key(ip: IpAddr, v4_prefix: u8, v6_prefix: u8) -> IpAddr {
    let mask = |bits: u32, prefix: u8| -> u128 {
        let prefix = u32::from(prefix).min(bits);
        if prefix == 0 {
            0
        } else {
            (u128::MAX << (128 - prefix)) >> (128 - bits)
        }
    };
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4) & u32::try_from(mask(32, v4_prefix)).unwrap_or(u32::MAX);
            IpAddr::V4(bits.into())
        }
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & mask(128, v6_prefix)).into()),
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
    /// Whether `ip` may create a league now: league creations share the address's
    /// `--table-creations-per-minute` budget with table creations.
    pub(crate) fn may_create_league(&self, ip: IpAddr, now: std::time::Instant) -> bool {
        let ip = self.key(ip);
        let per_minute = self.config.table_creations_per_minute;
        if per_minute == 0 {
            return true;
        }
        let per_minute = f64::from(per_minute);
        self.creations
            .entry(ip)
            .or_insert_with(|| TokenBucket::new(per_minute, per_minute / 60.0, now))
            .take(now)
    }

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
        let per_ip = self.config.max_tables_per_ip;
        {
            let mut count = self.tables_per_ip.entry(ip).or_insert(0);
            if per_ip != 0 && *count >= per_ip {
                return Err(TableRefusal::TooManyFromAddress);
            }
            let per_minute = self.config.table_creations_per_minute;
            if per_minute != 0 {
                let per_minute = f64::from(per_minute);
                let mut bucket = self
                    .creations
                    .entry(ip)
                    .or_insert_with(|| TokenBucket::new(per_minute, per_minute / 60.0, now));
                if !bucket.take(now) {
                    return Err(TableRefusal::TooManyFromAddress);
                }
            }
            *count += 1;
        }
        slot.ip = Some(ip);
        Ok(slot)
    }

    /// Counts a spectator from `ip` against `--max-spectators-per-ip`; `None` if the cap is
    /// reached. The place is given back when the slot is dropped.
    pub(crate) fn admit_spectator(self: &Arc<Self>, ip: IpAddr) -> Option<SpectatorSlot> {
        let ip = self.key(ip);
        let cap = self.config.max_spectators_per_ip;
        let mut count = self.spectators_per_ip.entry(ip).or_insert(0);
        if cap != 0 && *count >= cap {
            return None;
        }
        *count += 1;
        Some(SpectatorSlot {
            shared: Arc::clone(self),
            ip,
        })
    }

    /// Whether `ip` may start watching a table now (`--watches-per-minute`); takes a token.
    pub(crate) fn may_watch(&self, ip: IpAddr, now: std::time::Instant) -> bool {
        let ip = self.key(ip);
        let per_minute = self.config.watches_per_minute;
        if per_minute <= 0.0 {
            return true;
        }
        self.watches
            .entry(ip)
            .or_insert_with(|| TokenBucket::new(10.0, per_minute / 60.0, now))
            .take(now)
    }

    /// Whether `ip` may try a password at `table` (or a secret of a league) now (wrong guesses
    /// are limited per address and table; a right one costs nothing).
    pub(crate) fn may_guess(
        &self,
        ip: IpAddr,
        table: impl Into<Guarded>,
        now: std::time::Instant,
    ) -> bool {
        let ip = self.key(ip);
        let per_minute = self.config.wrong_passwords_per_minute;
        if per_minute <= 0.0 {
            return true;
        }
        // Only a wrong guess makes a bucket: asking about any id (a league's, say) adds none.
        self.guesses
            .get(&(ip, table.into()))
            .is_none_or(|bucket| bucket.peek(now))
    }

    /// Records a wrong password from `ip` at `table`.
    pub(crate) fn wrong_guess(
        &self,
        ip: IpAddr,
        table: impl Into<Guarded>,
        now: std::time::Instant,
    ) {
        let ip = self.key(ip);
        let per_minute = self.config.wrong_passwords_per_minute;
        self.guesses
            .entry((ip, table.into()))
            .or_insert_with(|| TokenBucket::new(5.0, per_minute / 60.0, now))
            .take(now);
    }

    /// Takes one of `ip`'s password checks (`--password-checks-per-minute`): every check, right
    /// or wrong, at a table or a league, costs one, because each costs a hash.
    pub(crate) fn may_check_password(&self, ip: IpAddr, now: std::time::Instant) -> bool {
        let ip = self.key(ip);
        let per_minute = self.config.password_checks_per_minute;
        if per_minute <= 0.0 {
            return true;
        }
        self.password_checks
            .entry(ip)
            .or_insert_with(|| TokenBucket::new(per_minute, per_minute / 60.0, now))
            .take(now)
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
        let cap = self.config.max_league_members_per_ip;
        if cap != 0
            && self
                .league_members
                .get(&(ip, league))
                .is_some_and(|n| *n >= cap)
        {
            return Err("this address has added as many members to this league as allowed");
        }
        let per_minute = self.config.league_joins_per_minute;
        if per_minute > 0.0
            && !self
                .league_joins
                .entry(ip)
                .or_insert_with(|| TokenBucket::new(per_minute, per_minute / 60.0, now))
                .take(now)
        {
            return Err("too many league joins from this address: try again in a minute");
        }
        Ok(())
    }

    /// Counts a member added to `league` from `ip`.
    pub(crate) fn league_member_added(&self, ip: IpAddr, league: LeagueId) {
        *self
            .league_members
            .entry((self.key(ip), league))
            .or_insert(0) += 1;
    }

    /// Forgets rate-limit state that has refilled completely (so the maps do not grow with every
    /// address ever seen).
    pub(crate) fn prune_limits(&self, now: std::time::Instant) {
        self.guesses.retain(|_, bucket| !bucket.is_full(now));
        self.creations.retain(|_, bucket| !bucket.is_full(now));
        self.watches.retain(|_, bucket| !bucket.is_full(now));
        self.password_checks
            .retain(|_, bucket| !bucket.is_full(now));
        self.league_joins.retain(|_, bucket| !bucket.is_full(now));
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
}

/// A table's place under `--max-tables` (and its creator's under `--max-tables-per-ip`), given
/// back when dropped.
#[derive(Debug)]
pub(crate) struct TableSlot {
    shared: Arc<Shared>,
    ip: Option<IpAddr>,
}

impl Drop for TableSlot {
    fn drop(&mut self) {
        self.shared.open_tables.fetch_sub(1, Relaxed);
        if let Some(ip) = self.ip {
            self.shared.tables_per_ip.remove_if_mut(&ip, |_, count| {
                *count -= 1;
                *count == 0
            });
        }
    }
}

/// A spectator's place under `--max-spectators-per-ip`, given back when dropped.
#[derive(Debug)]
pub(crate) struct SpectatorSlot {
    shared: Arc<Shared>,
    ip: IpAddr,
}

impl Drop for SpectatorSlot {
    fn drop(&mut self) {
        self.shared
            .spectators_per_ip
            .remove_if_mut(&self.ip, |_, count| {
                *count -= 1;
                *count == 0
            });
    }
}

/// One connection's place under the per-IP cap, given back when dropped.
#[derive(Debug)]
pub(crate) struct IpSlot {
    shared: Arc<Shared>,
    ip: IpAddr,
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        self.shared.per_ip.remove_if_mut(&self.ip, |_, count| {
            *count -= 1;
            *count == 0
        });
    }
}

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
            .min(self.config.outgoing_queue_bytes / 4)
            .max(1024)
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

/// What wrong guesses are counted against: a table (its password), or a league (its password,
/// member tokens and organiser secret).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Guarded {
    Table(TableId),
    League(LeagueId),
}

impl From<TableId> for Guarded {
    fn from(table: TableId) -> Self {
        Self::Table(table)
    }
}

impl From<LeagueId> for Guarded {
    fn from(league: LeagueId) -> Self {
        Self::League(league)
    }
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
            if !shared.may_check_password(peer, now) {
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

#[cfg(test)]
mod tests {
    use super::client_key;
    use std::net::IpAddr;

    fn key(ip: &str, v4: u8, v6: u8) -> String {
        client_key(
            ip.parse::<IpAddr>().unwrap_or(IpAddr::from([0, 0, 0, 0])),
            v4,
            v6,
        )
        .to_string()
    }

    #[test]
    fn ipv6_addresses_count_by_their_prefix_and_ipv4_by_theirs() {
        assert_eq!(
            key("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 32, 64),
            "2001:db8:1:2::"
        );
        assert_eq!(key("2001:db8:1:2::1", 32, 64), "2001:db8:1:2::");
        assert_eq!(key("2001:db8:1:3::1", 32, 64), "2001:db8:1:3::");
        assert_eq!(key("2001:db8:1:2:ff::1", 32, 56), "2001:db8:1::");
        assert_eq!(key("2001:db8:1:2::1", 32, 128), "2001:db8:1:2::1");
        assert_eq!(key("2001:db8:1:2::1", 32, 1), "::");
        assert_eq!(key("203.0.113.77", 32, 64), "203.0.113.77");
        assert_eq!(key("203.0.113.77", 24, 64), "203.0.113.0");
        assert_eq!(key("203.0.113.77", 1, 64), "128.0.0.0");
        assert_eq!(
            key("::ffff:203.0.113.77", 24, 64),
            "203.0.113.0",
            "mapped IPv4 is IPv4"
        );
        assert_eq!(key("::1", 32, 64), "::");
        // A key is its own key.
        let once = key("2001:db8:1:2:aaaa::1", 32, 48);
        assert_eq!(key(&once, 32, 48), once);
    }
}
