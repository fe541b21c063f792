//! Cluster mode's engine: NATS with JetStream. Several server nodes share one NATS cluster:
//!
//! - **The journal** is the stream [`STREAM`]: every table has its own subject
//!   (`gm.j.<table>`) holding its [`Record`]s in order — created, claimed by a node, and one
//!   `Flush` per request the table's actor carried out (its events and seat, ban and game-over
//!   records). An append carries the subject's expected last sequence
//!   (`Nats-Expected-Last-Subject-Sequence`), so only the node that read the subject's end can
//!   add to it: a node that lost a table (paused, cut off) is refused and gives the table up.
//! - **The directory** is the key-value bucket [`DIRECTORY`]: one [`DirEntry`] per table (its
//!   owner, an epoch bumped by every claim, the lobby summary, and once the game is over, when
//!   it finished). Claims and summary updates are compare-and-swap on the entry's revision.
//! - **Leases** are the bucket [`NODES`]: each node rewrites its key six times per lease;
//!   a node whose key has not changed for a whole lease (while this node's own renewals
//!   succeeded) is taken for dead, and each of its tables is claimed by one survivor.
//! - **Routing** is core NATS, per table: requests from clients on other nodes go to
//!   `gm.t.<table>.in` (the owner listens), and what the owner sends those clients goes, once per
//!   request carried out, to `gm.t.<table>.out`, which every node with members of the table
//!   listens to (`proxy.rs`).
//!
//! This module is the engine's side (records, directory, appends, reads, the node-to-node
//! messages); `crate::node` runs the leases and the claims, and `crate::proxy` is a table's
//! stand-in on the nodes that do not own it. Both sit above the table actor; this module sits
//! below the lobby.

pub(crate) mod days;
pub(crate) mod leagues;
pub(crate) mod store;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::{self, kv, stream};
use bytes::Bytes;
use dashmap::DashMap;
use futures_util::StreamExt;
use grand_melee_protocol::league::LeagueId;
use grand_melee_protocol::{ErrorCode, SeatToken, TableId, TableSummary};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, watch};
use tracing::{info, warn};
use uuid::Uuid;

use crate::config::ServerConfig;
use crate::journal::JournalError;
use crate::metrics::Metrics;
use crate::store::{Flush, OutOfSequence, StoredTable, TableOp, TableRecord};
use grand_melee_protocol::session::Role;

/// The JetStream stream holding every table's records.
pub const STREAM: &str = "GM_TABLES";
/// The key-value bucket of tables: owner, epoch, summary.
pub const DIRECTORY: &str = "gm-tables";
/// The key-value bucket of node leases.
pub const NODES: &str = "gm-nodes";

/// A table's key in [`DIRECTORY`]: its id's 32 hex digits, without hyphens.
pub(crate) fn dir_key(table: TableId) -> String {
    table.as_uuid().simple().to_string()
}

/// The table a [`DIRECTORY`] key names ([`dir_key`]); `None` for any other key.
pub(crate) fn table_of_dir_key(key: &str) -> Option<TableId> {
    Uuid::parse_str(key).ok().map(TableId::from)
}

/// The subject of a table's records in [`STREAM`].
pub(crate) fn journal_subject(table: TableId) -> String {
    format!("gm.j.{}", table.as_uuid().simple())
}

/// Where the owner of a table listens for requests from other nodes.
pub(crate) fn inbound_subject(table: TableId) -> String {
    format!("gm.t.{}.in", table.as_uuid().simple())
}

/// The WebSocket URL of the node whose address is `owner` (its `--public-url`, or
/// `http://<listen>`), when that is not `mine` and names a host a client can reach (not
/// `0.0.0.0` or `[::]`, which a node without `--public-url` listening on every address has):
/// `http` → `ws`, `https` → `wss`, and `/ws` after its path.
pub(crate) fn websocket_url_elsewhere(owner: &str, mine: &str) -> Option<String> {
    let owner = owner.trim_end_matches('/');
    if owner.eq_ignore_ascii_case(mine.trim_end_matches('/')) {
        return None;
    }
    let url = url::Url::parse(owner).ok()?;
    let scheme = match url.scheme() {
        "http" => "ws",
        "https" => "wss",
        _ => return None,
    };
    let reachable = match url.host()? {
        url::Host::Domain(name) => !name.is_empty(),
        url::Host::Ipv4(ip) => !ip.is_unspecified(),
        url::Host::Ipv6(ip) => !ip.is_unspecified(),
    };
    let rest = owner.split_once("://")?.1;
    reachable.then(|| format!("{scheme}://{rest}/ws"))
}

/// Where the owner of a table sends what members on other nodes receive.
pub(crate) fn outbound_subject(table: TableId) -> String {
    format!("gm.t.{}.out", table.as_uuid().simple())
}

/// A table's line in the directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DirEntry {
    /// The node that runs the table; `None` once nobody does (a finished table that closed).
    pub owner: Option<String>,
    /// Bumped by every claim.
    pub epoch: u64,
    pub name: String,
    /// The password's hash, if the table has one (checked by whichever node a client uses).
    pub password: Option<String>,
    pub summary: TableSummary,
    pub created_at_ms: u64,
    pub finished_at_ms: Option<u64>,
    /// How many events the game has (set when it finishes).
    pub events: u64,
    #[serde(default, with = "crate::store::uuid_form::option")]
    pub league: Option<LeagueId>,
}

/// A directory entry with the revision it was read at.
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    pub entry: DirEntry,
    pub revision: u64,
}

/// One record in a table's subject of the journal stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub(crate) enum Record {
    Created {
        name: String,
        password: Option<String>,
        #[serde(with = "serde_bytes")]
        settings: Vec<u8>,
        created_at_ms: u64,
        #[serde(default, with = "crate::store::uuid_form::option")]
        league: Option<LeagueId>,
    },
    /// A node took the table over (its first append, which fences the previous owner).
    Claimed { node: String, epoch: u64 },
    /// What one request carried out: its events (numbered from `first_seq`) and records.
    Flush {
        first_seq: u64,
        events: Vec<serde_bytes::ByteBuf>,
        ops: Vec<TableOp>,
    },
}

/// A table read back from its subject.
#[derive(Debug)]
pub(crate) struct ReadTable {
    pub stored: StoredTable,
    /// The subject's last stream sequence (what the next append must expect).
    pub last: u64,
}

/// Folds a table's records into what the SQLite journal would hold for it.
pub(crate) fn fold_records(
    table: TableId,
    records: &[Record],
) -> Result<StoredTable, ClusterError> {
    let mut stored: Option<StoredTable> = None;
    for record in records {
        match record {
            Record::Created {
                name,
                password,
                settings,
                created_at_ms,
                league,
            } => {
                stored = Some(StoredTable::new(TableRecord {
                    id: table,
                    name: name.clone(),
                    password: password.clone(),
                    settings: settings.clone(),
                    created_at_ms: *created_at_ms,
                    league: *league,
                }));
            }
            Record::Claimed { .. } => {}
            Record::Flush {
                first_seq,
                events,
                ops,
            } => {
                let stored = stored.as_mut().ok_or(ClusterError::FlushBeforeCreation)?;
                stored.apply(&Flush {
                    first_seq: *first_seq,
                    events: events.iter().map(|e| e.to_vec()).collect(),
                    ops: ops.clone(),
                })?;
            }
        }
    }
    stored.ok_or(ClusterError::NoCreation)
}

/// Why an append failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AppendError {
    /// Another node appended to the table since this one read it: it lost the table.
    #[error("another node has written to the table (this node lost it)")]
    Fenced,
    /// The engine did not acknowledge the write.
    #[error("the journal stream did not acknowledge the write: {0}")]
    Failed(String),
}

/// Why joining the cluster at start failed: this node's options, NATS, or JetStream.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("--cluster needs --node-id (this node's name, unique in the cluster)")]
    NoNodeId,
    #[error("--node-id {0:?}: a node name has 1–32 letters, digits, '-' or '_'")]
    BadNodeId(String),
    #[error("--cluster {url:?}: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("--cluster: give at least one NATS URL, e.g. nats://127.0.0.1:4222")]
    NoUrl,
    #[error("connecting to NATS at {urls}: {reason}")]
    Unreachable { urls: String, reason: String },
    #[error(
        "NATS at {urls} did not set up JetStream in 60 s (is JetStream enabled, with at least \
         --cluster-replicas {replicas} servers?)"
    )]
    NoJetStream { urls: String, replicas: usize },
    #[error("the journal stream {STREAM}: {0}")]
    Stream(String),
    #[error("the key-value bucket {name}: {reason}")]
    Bucket { name: &'static str, reason: String },
}

/// Why reading or writing the journal stream, the directory or the leases failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClusterError {
    /// NATS or JetStream failed the operation.
    #[error(transparent)]
    Engine(Box<dyn std::error::Error + Send + Sync>),
    /// The directory's keys could not be listed.
    #[error("listing the directory: {0}")]
    ListDirectory(Box<dyn std::error::Error + Send + Sync>),
    #[error("record {seq} of table {table} is unreadable")]
    Unreadable { table: TableId, seq: u64 },
    #[error("the journal stream ended early")]
    EndedEarly,
    #[error("reading table {table} took over 20 s")]
    ReadTimedOut { table: TableId },
    #[error("a flush record before the table's creation")]
    FlushBeforeCreation,
    #[error("the table has no creation record")]
    NoCreation,
    #[error(transparent)]
    OutOfSequence(#[from] OutOfSequence),
    /// A compare-and-swap on a directory entry lost every race.
    #[error("the directory entry kept changing")]
    DirectoryContended,
    /// A claimed table's subject is empty.
    #[error("the table has no records")]
    NoRecords,
    /// The watch of the leases did not show this node's own renewal in time.
    #[error("the lease watch has not caught up with this node's renewal")]
    LeaseWatchBehind,
    /// A claim's fencing record lost every race with the previous owner's appends.
    #[error("the previous owner kept writing")]
    KeptWriting,
    #[error(transparent)]
    Append(#[from] AppendError),
    /// A finished game's league credits could not be written.
    #[error(transparent)]
    Credit(#[from] JournalError),
}

/// A NATS or JetStream failure as a [`ClusterError`].
fn engine(error: impl std::error::Error + Send + Sync + 'static) -> ClusterError {
    ClusterError::Engine(Box::new(error))
}

/// A request from a client on another node, sent to the table's owner.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Inbound {
    /// The node holding the client's connection.
    pub node: String,
    /// The connection's id on that node.
    pub conn: u64,
    pub peer: IpAddr,
    pub message: InMessage,
}

/// What a client on another node asks of a table.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub(crate) enum InMessage {
    /// Join, watch or resume (answered with an [`EnterReply`]); `quiet`: no `seated` /
    /// `watching` answer, only the snapshot (a re-entry after the table moved).
    Enter {
        request_id: u32,
        entry: RemoteEntry,
        quiet: bool,
    },
    /// A table request, as the client encoded it.
    Request {
        #[serde(with = "serde_bytes")]
        request: Vec<u8>,
    },
    Leave {
        request_id: u32,
    },
    Gone,
}

/// An [`crate::lobby::Entry`] as it crosses nodes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "as")]
pub(crate) enum RemoteEntry {
    Join {
        name: String,
        entropy: String,
        /// At a league table: the member's deck (looked up by the node he is on).
        deck: Option<grand_melee_protocol::league::SeatDeck>,
    },
    Watch,
    Resume {
        #[serde(with = "crate::store::uuid_form")]
        token: SeatToken,
    },
}

/// The answer to an entry: the role, and a player's seat token.
pub(crate) type EnterReply = Result<(Role, Option<SeatToken>), ErrorCode>;

/// [`EnterReply`] as it crosses nodes: the player's number (none for a spectator) and token (in
/// the bare UUID's form, as nodes have always sent it).
type WireEnterReply = Result<(Option<u16>, Option<Uuid>), ErrorCode>;

/// Encodes the owner's answer to [`InMessage::Enter`].
pub(crate) fn encode_enter_reply(reply: &EnterReply) -> Bytes {
    let wire: WireEnterReply = reply.as_ref().map_err(|e| *e).map(|(role, token)| {
        let player = match role {
            Role::Player(player) => Some(*player),
            Role::Spectator => None,
        };
        (player, token.map(Uuid::from))
    });
    encode(&wire)
}

/// Decodes the owner's answer to [`InMessage::Enter`].
pub(crate) fn decode_enter_reply(bytes: &[u8]) -> EnterReply {
    let wire: WireEnterReply = decode(bytes).unwrap_or(Err(ErrorCode::StorageFailed));
    wire.map(|(player, token)| {
        let role = player.map_or(Role::Spectator, Role::Player);
        (role, token.map(SeatToken::from))
    })
}

/// What the owner sends, after one request, to the members on other nodes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub(crate) enum OutItem {
    /// An events batch for every member whose snapshot does not include it.
    Events {
        first_seq: u64,
        last_seq: u64,
        #[serde(with = "serde_bytes")]
        frame: Vec<u8>,
    },
    /// A member was admitted; its snapshot includes events up to `since_seq`.
    Admitted {
        node: String,
        conn: u64,
        since_seq: u64,
    },
    /// A frame for one member.
    Direct {
        node: String,
        conn: u64,
        #[serde(with = "serde_bytes")]
        frame: Vec<u8>,
    },
    /// Close one member's connection.
    Close {
        node: String,
        conn: u64,
        code: u16,
        reason: String,
    },
    /// The owner's messages may have been lost (it reconnected to NATS): every node enters its
    /// members again (each gets a fresh snapshot).
    Resync,
}

/// Encodes a node-to-node message.
pub(crate) fn encode<T: Serialize>(value: &T) -> Bytes {
    Bytes::from(rmp_serde::to_vec_named(value).unwrap_or_default())
}

/// Decodes a node-to-node message.
pub(crate) fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    rmp_serde::from_slice(bytes).ok()
}

/// A node lease's value.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NodeInfo {
    pub url: String,
    pub started_at_ms: u64,
}

/// The cluster as one node sees it.
pub(crate) struct Cluster {
    pub node: Arc<str>,
    pub url: String,
    pub client: async_nats::Client,
    stream: stream::Stream,
    directory: kv::Store,
    nodes: kv::Store,
    /// The leagues (`leagues.rs`).
    leagues: kv::Store,
    pub lease: Duration,
    /// The directory as this node last saw it (kept by `driver`'s watch).
    pub cache: DashMap<TableId, Cached>,
    /// Table ids whose directory entry changed (proxies listen).
    pub changes: broadcast::Sender<TableId>,
    pub metrics: Arc<Metrics>,
    /// When this node started (its lease clock's origin).
    pub started: Instant,
    /// When this node last renewed its lease, in ms since `started`.
    renewed_ms: AtomicU64,
    /// Bumped whenever node-to-node messages may have been lost (a reconnection to NATS, a
    /// subscriber that fell behind).
    pub losses: watch::Sender<u64>,
    /// Every node's lease (name → revision) as this node's watch of [`NODES`] saw it (kept by
    /// `crate::node`'s lease watch).
    pub lease_revisions: watch::Sender<HashMap<String, u64>>,
    /// Every node's address (`NodeInfo::url`) as its lease last said (kept by the same watch).
    pub node_urls: DashMap<String, String>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.node)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Checks a node name: 1–32 ASCII letters, digits, `-` or `_`.
pub fn check_node_id(id: &str) -> Result<(), ConnectError> {
    if (1..=32).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        Ok(())
    } else {
        Err(ConnectError::BadNodeId(id.to_owned()))
    }
}

impl Cluster {
    /// Connects to NATS and makes sure the stream and the buckets exist.
    pub(crate) async fn connect(
        config: &ServerConfig,
        urls: &str,
        metrics: Arc<Metrics>,
    ) -> Result<Arc<Self>, ConnectError> {
        let node = config.node_id.clone().ok_or(ConnectError::NoNodeId)?;
        check_node_id(&node)?;
        let addrs = urls
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(|u| {
                u.parse::<async_nats::ServerAddr>()
                    .map_err(|e| ConnectError::BadUrl {
                        url: u.to_owned(),
                        reason: e.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if addrs.is_empty() {
            return Err(ConnectError::NoUrl);
        }
        // Core NATS delivers at most once: a message on its way when this node's NATS server
        // died, or dropped because a subscriber fell behind, is gone. Both are counted here, and
        // the proxies and owners resynchronise their members (a fresh snapshot each).
        let (losses, _) = watch::channel(0u64);
        let counted = losses.clone();
        let client = async_nats::ConnectOptions::new()
            .name(format!("grand-melee {node}"))
            .event_callback(move |event| {
                let counted = counted.clone();
                async move {
                    match event {
                        async_nats::Event::Connected | async_nats::Event::SlowConsumer(_) => {
                            info!(%event, "NATS connection event: resynchronising tables");
                            counted.send_modify(|n| *n += 1);
                        }
                        async_nats::Event::Disconnected => warn!("disconnected from NATS"),
                        _ => {}
                    }
                }
            })
            .connection_timeout(Duration::from_secs(5))
            .retry_on_initial_connect()
            .max_reconnects(None)
            .connect(addrs.as_slice())
            .await
            .map_err(|e| ConnectError::Unreachable {
                urls: urls.to_owned(),
                reason: e.to_string(),
            })?;
        let js = jetstream::new(client.clone());
        let replicas = usize::from(config.cluster_replicas);
        // Right after a NATS cluster starts, its JetStream may refuse to place replicated
        // streams for a while ("no suitable peers for placement"): try again until it can.
        let setup = async {
            let mut attempt = 0u64;
            loop {
                attempt += 1;
                match Self::setup(&js, replicas).await {
                    Ok(stores) => return Ok::<_, ConnectError>(stores),
                    Err(error) if attempt < 100 => {
                        warn!(%error, attempt, "setting up JetStream; trying again");
                        tokio::time::sleep(Duration::from_millis(200 * attempt.min(10))).await;
                    }
                    Err(error) => return Err(error),
                }
            }
        };
        let (stream, directory, nodes, leagues) =
            tokio::time::timeout(Duration::from_secs(60), setup)
                .await
                .map_err(|_| ConnectError::NoJetStream {
                    urls: urls.to_owned(),
                    replicas,
                })??;
        let url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", config.listen));
        info!(node, url, nats = urls, replicas, "cluster mode");
        Ok(Arc::new(Self {
            node: Arc::from(node.as_str()),
            url,
            client,
            stream,
            directory,
            nodes,
            leagues,
            lease: config.lease(),
            cache: DashMap::new(),
            changes: broadcast::channel(4096).0,
            metrics,
            started: Instant::now(),
            renewed_ms: AtomicU64::new(0),
            losses,
            lease_revisions: watch::channel(HashMap::new()).0,
            node_urls: DashMap::new(),
        }))
    }

    /// Makes sure the journal stream and the buckets exist.
    async fn setup(
        js: &jetstream::Context,
        replicas: usize,
    ) -> Result<(stream::Stream, kv::Store, kv::Store, kv::Store), ConnectError> {
        let stream = js
            .get_or_create_stream(stream::Config {
                name: STREAM.to_owned(),
                subjects: vec!["gm.j.>".to_owned()],
                num_replicas: replicas,
                storage: stream::StorageType::File,
                allow_direct: true,
                ..Default::default()
            })
            .await
            .map_err(|e| ConnectError::Stream(e.to_string()))?;
        let bucket = |name: &str| kv::Config {
            bucket: name.to_owned(),
            history: 1,
            num_replicas: replicas,
            storage: stream::StorageType::File,
            ..Default::default()
        };
        let store = |name: &'static str| async move {
            match js.get_key_value(name).await {
                Ok(store) => Ok(store),
                Err(_) => {
                    js.create_key_value(bucket(name))
                        .await
                        .map_err(|e| ConnectError::Bucket {
                            name,
                            reason: e.to_string(),
                        })
                }
            }
        };
        let directory = store(DIRECTORY).await?;
        let nodes = store(NODES).await?;
        let leagues = store(leagues::LEAGUES).await?;
        Ok((stream, directory, nodes, leagues))
    }

    /// Where a client of this node should go to reach `owner`'s tables directly: the owner's
    /// WebSocket URL, when its address is known and is not this node's own (nodes behind one
    /// shared address are reached through it, whichever serves the connection).
    pub(crate) fn served_at(&self, owner: &str) -> Option<String> {
        let url = self.node_urls.get(owner)?.clone();
        websocket_url_elsewhere(&url, &self.url)
    }

    /// The WebSocket origins of the nodes a client of this one may be sent to (`served_at`),
    /// space-separated, for the page's `connect-src`; `None` when there are none.
    pub(crate) fn websocket_origins_elsewhere(&self) -> Option<String> {
        let mut origins: Vec<String> = self
            .node_urls
            .iter()
            .filter_map(|node| websocket_url_elsewhere(node.value(), &self.url))
            .filter_map(|ws| Some(url::Url::parse(&ws).ok()?.origin().ascii_serialization()))
            .collect();
        origins.sort();
        origins.dedup();
        (!origins.is_empty()).then(|| origins.join(" "))
    }

    /// Whether `node` is this one.
    pub(crate) fn is_me(&self, node: &str) -> bool {
        *self.node == *node
    }

    // ----- The journal stream ------------------------------------------------------------------

    /// Appends `record` to the table's subject, expecting `last` as the subject's last
    /// sequence (0: the subject is new). Returns the record's sequence once a majority of the
    /// stream's replicas has it. Transient failures (no leader during an election, a lost
    /// acknowledgement) are retried for up to a minute; a refusal because the subject moved on
    /// is [`AppendError::Fenced`] — unless what moved it on is this very record (an
    /// acknowledgement lost after the write).
    pub(crate) async fn append(
        &self,
        table: TableId,
        record: &Record,
        last: u64,
    ) -> Result<u64, AppendError> {
        let subject = journal_subject(table);
        let payload = encode(record);
        let started = Instant::now();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let mut headers = HeaderMap::new();
            headers.insert("Nats-Expected-Last-Subject-Sequence", last.to_string());
            let js = jetstream::new(self.client.clone());
            let result = match js
                .publish_with_headers(subject.clone(), headers, payload.clone())
                .await
            {
                Ok(ack) => ack.await.map_err(|e| e.kind()),
                Err(e) => Err(e.kind()),
            };
            match result {
                Ok(ack) => {
                    self.metrics.observe_journal_ack(started.elapsed());
                    return Ok(ack.sequence);
                }
                Err(jetstream::context::PublishErrorKind::WrongLastSequence) => {
                    // Our own earlier attempt may be what moved the subject on.
                    if attempts > 1 && self.last_payload_is(&subject, &payload).await {
                        self.metrics.observe_journal_ack(started.elapsed());
                        return self
                            .last_sequence(table)
                            .await
                            .map_err(|e| AppendError::Failed(e.to_string()));
                    }
                    Metrics::add(&self.metrics.fenced_appends, 1);
                    return Err(AppendError::Fenced);
                }
                Err(kind) => {
                    if started.elapsed() > Duration::from_secs(60) {
                        return Err(AppendError::Failed(kind.to_string()));
                    }
                    warn!(%table, error = %kind, attempts, "journal append failed; retrying");
                    let backoff = Duration::from_millis(50 * u64::from(attempts.min(20)));
                    tokio::time::sleep(backoff).await;
                }
            }
        }
    }

    /// Whether the subject's last record is `payload`.
    async fn last_payload_is(&self, subject: &str, payload: &[u8]) -> bool {
        match self.stream.get_last_raw_message_by_subject(subject).await {
            Ok(message) => message.payload.as_ref() == payload,
            Err(_) => false,
        }
    }

    /// The table subject's last sequence (0 if it has none).
    pub(crate) async fn last_sequence(&self, table: TableId) -> Result<u64, ClusterError> {
        use jetstream::stream::LastRawMessageErrorKind as Kind;
        match self
            .stream
            .get_last_raw_message_by_subject(&journal_subject(table))
            .await
        {
            Ok(message) => Ok(message.sequence),
            Err(e) if e.kind() == Kind::NoMessageFound => Ok(0),
            Err(e) => Err(engine(e)),
        }
    }

    /// Reads a table's records, in order, and the subject's last sequence; `None` if it has
    /// none.
    pub(crate) async fn read_records(
        &self,
        table: TableId,
    ) -> Result<Option<(Vec<Record>, u64)>, ClusterError> {
        // The engine may be electing a leader: try again for a while.
        let mut attempt = 0u64;
        loop {
            attempt += 1;
            match self.read_records_once(table).await {
                Ok(read) => return Ok(read),
                Err(error) if attempt < 30 => {
                    warn!(%table, %error, attempt, "reading a table's records; trying again");
                    tokio::time::sleep(Duration::from_millis(100 * attempt.min(10))).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    async fn read_records_once(
        &self,
        table: TableId,
    ) -> Result<Option<(Vec<Record>, u64)>, ClusterError> {
        let last = self.last_sequence(table).await?;
        if last == 0 {
            return Ok(None);
        }
        let consumer = self
            .stream
            .create_consumer(jetstream::consumer::pull::OrderedConfig {
                filter_subject: journal_subject(table),
                deliver_policy: jetstream::consumer::DeliverPolicy::All,
                ..Default::default()
            })
            .await
            .map_err(engine)?;
        let mut messages = consumer.messages().await.map_err(engine)?;
        let mut records = Vec::new();
        let read = async {
            while let Some(message) = messages.next().await {
                let message = message.map_err(engine)?;
                let seq = message
                    .info()
                    .map_err(ClusterError::Engine)?
                    .stream_sequence;
                let record: Record =
                    decode(&message.payload).ok_or(ClusterError::Unreadable { table, seq })?;
                records.push(record);
                if seq >= last {
                    return Ok::<(), ClusterError>(());
                }
            }
            Err(ClusterError::EndedEarly)
        };
        tokio::time::timeout(Duration::from_secs(20), read)
            .await
            .map_err(|_| ClusterError::ReadTimedOut { table })??;
        Ok(Some((records, last)))
    }

    /// Reads and folds a table.
    pub(crate) async fn read_table(
        &self,
        table: TableId,
    ) -> Result<Option<ReadTable>, ClusterError> {
        let Some((records, last)) = self.read_records(table).await? else {
            return Ok(None);
        };
        let stored = fold_records(table, &records)?;
        Ok(Some(ReadTable { stored, last }))
    }

    /// Removes a table's records (an abandoned table) and its directory entry.
    pub(crate) async fn delete_table(&self, table: TableId) -> Result<(), ClusterError> {
        self.stream
            .purge()
            .filter(journal_subject(table))
            .await
            .map_err(engine)?;
        self.directory.purge(dir_key(table)).await.map_err(engine)?;
        Ok(())
    }

    // ----- The directory -----------------------------------------------------------------------

    /// Adds a new table's entry (fails if it exists).
    pub(crate) async fn dir_create(
        &self,
        table: TableId,
        entry: &DirEntry,
    ) -> Result<u64, ClusterError> {
        let revision = self
            .directory
            .create(dir_key(table), encode(entry))
            .await
            .map_err(engine)?;
        self.cache.insert(
            table,
            Cached {
                entry: entry.clone(),
                revision,
            },
        );
        Ok(revision)
    }

    /// Replaces an entry read at `revision`; `Ok(None)` if it changed since.
    pub(crate) async fn dir_update(
        &self,
        table: TableId,
        entry: &DirEntry,
        revision: u64,
    ) -> Result<Option<u64>, ClusterError> {
        use kv::UpdateErrorKind;
        match self
            .directory
            .update(dir_key(table), encode(entry), revision)
            .await
        {
            Ok(revision) => {
                self.cache.insert(
                    table,
                    Cached {
                        entry: entry.clone(),
                        revision,
                    },
                );
                let _ = self.changes.send(table);
                Ok(Some(revision))
            }
            Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => Ok(None),
            Err(e) => Err(engine(e)),
        }
    }

    /// Reads an entry fresh from the bucket.
    pub(crate) async fn dir_get(&self, table: TableId) -> Result<Option<Cached>, ClusterError> {
        let entry = self.directory.entry(dir_key(table)).await.map_err(engine)?;
        Ok(entry.and_then(|e| {
            if e.operation != kv::Operation::Put {
                return None;
            }
            Some(Cached {
                entry: decode(&e.value)?,
                revision: e.revision,
            })
        }))
    }

    /// Changes an entry with `change` (read fresh, compare-and-swap, retried on a race) for as
    /// long as `change` says to; returns the entry written, or `None` if `change` declined.
    pub(crate) async fn dir_modify(
        &self,
        table: TableId,
        mut change: impl FnMut(&mut DirEntry) -> bool,
    ) -> Result<Option<DirEntry>, ClusterError> {
        for _ in 0..20 {
            let Some(mut cached) = self.dir_get(table).await? else {
                return Ok(None);
            };
            if !change(&mut cached.entry) {
                return Ok(None);
            }
            if self
                .dir_update(table, &cached.entry, cached.revision)
                .await?
                .is_some()
            {
                return Ok(Some(cached.entry));
            }
        }
        Err(ClusterError::DirectoryContended)
    }

    /// The directory bucket (for the driver's watch).
    pub(crate) fn directory(&self) -> &kv::Store {
        &self.directory
    }

    // ----- Leases ------------------------------------------------------------------------------

    /// Renews this node's lease; returns the key's new revision.
    pub(crate) async fn renew(&self, info: &NodeInfo) -> Result<u64, ClusterError> {
        let revision = self
            .nodes
            .put(self.node.to_string(), encode(info))
            .await
            .map_err(engine)?;
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.renewed_ms.store(ms, Relaxed);
        Metrics::add(&self.metrics.lease_renewals, 1);
        Ok(revision)
    }

    /// When this node last renewed its lease (`None`: never).
    pub(crate) fn renewed_at(&self) -> Option<Instant> {
        match self.renewed_ms.load(Relaxed) {
            0 => None,
            ms => Some(self.started + Duration::from_millis(ms)),
        }
    }

    /// The lease bucket (for the node's lease watch).
    pub(crate) fn nodes(&self) -> &kv::Store {
        &self.nodes
    }

    /// Every node's lease (name → revision), as the lease watch saw it once it caught up with
    /// this node's own renewal at `renewed`: the bucket's updates arrive in order, so every
    /// renewal written before that one has been seen. Waits up to `patience` for the watch
    /// ([`ClusterError::LeaseWatchBehind`] after it), and reads nothing from the engine.
    pub(crate) async fn leases_after(
        &self,
        renewed: u64,
        patience: Duration,
    ) -> Result<Vec<(String, u64)>, ClusterError> {
        let mut seen = self.lease_revisions.subscribe();
        let me = &*self.node;
        let caught_up = seen.wait_for(|leases| leases.get(me).is_some_and(|r| *r >= renewed));
        match tokio::time::timeout(patience, caught_up).await {
            Ok(Ok(leases)) => Ok(leases.iter().map(|(n, r)| (n.clone(), *r)).collect()),
            _ => Err(ClusterError::LeaseWatchBehind),
        }
    }
}

/// Loads the whole directory into the cache (before the node serves anyone).
pub(crate) async fn load_directory(cluster: &Cluster) -> Result<(), ClusterError> {
    let store = cluster.directory();
    let mut keys = match store.keys().await {
        Ok(keys) => keys,
        Err(e) => return Err(ClusterError::ListDirectory(Box::new(e))),
    };
    let mut names = Vec::new();
    while let Some(key) = keys.next().await {
        names.push(key.map_err(engine)?);
    }
    for name in names {
        let Some(table) = table_of_dir_key(&name) else {
            continue;
        };
        if let Some(cached) = cluster.dir_get(table).await? {
            cluster.cache.insert(table, cached);
        }
    }
    Ok(())
}

// ----- Reads for clients (any node) ------------------------------------------------------------

/// One page of the finished games, newest first, from the directory.
pub(crate) fn replays_page(
    cluster: &Cluster,
    from: u32,
    max: usize,
) -> (Vec<crate::journal::ReplaySummary>, u32) {
    let mut finished: Vec<crate::journal::ReplaySummary> = cluster
        .cache
        .iter()
        .filter_map(|c| {
            Some(crate::journal::ReplaySummary {
                id: *c.key(),
                name: c.entry.name.clone(),
                created_at_ms: c.entry.created_at_ms,
                finished_at_ms: c.entry.finished_at_ms?,
                events: c.entry.events,
                password: c.entry.password.is_some(),
                league: c.entry.league,
            })
        })
        .collect();
    finished.sort_by(|a, b| {
        b.finished_at_ms
            .cmp(&a.finished_at_ms)
            .then(b.created_at_ms.cmp(&a.created_at_ms))
            .then(a.id.cmp(&b.id))
    });
    let total = u32::try_from(finished.len()).unwrap_or(u32::MAX);
    let page = finished
        .into_iter()
        .skip(usize::try_from(from).unwrap_or(usize::MAX))
        .take(max)
        .collect();
    (page, total)
}

/// Events from `from_seq` on, as many as fit in `max_bytes` (at least one) and at most `limit`.
fn page_of(
    events: &[(u64, Vec<u8>)],
    from_seq: u64,
    limit: usize,
    max_bytes: usize,
) -> (Vec<(u64, Vec<u8>)>, bool) {
    let (mut page, mut bytes) = (Vec::new(), 0usize);
    for (seq, data) in events.iter().filter(|(seq, _)| *seq >= from_seq) {
        if page.len() >= limit || (!page.is_empty() && bytes + data.len() > max_bytes) {
            return (page, true);
        }
        bytes += data.len();
        page.push((*seq, data.clone()));
    }
    (page, false)
}

/// One page of a finished game, and its seat tokens (for a replay asked for with one); `None`
/// if there is no finished game with that id.
pub(crate) async fn replay_page(
    cluster: &Cluster,
    table: TableId,
    from_seq: u64,
    max_bytes: usize,
) -> Result<Option<(crate::journal::ReplayPage, Vec<(u16, SeatToken)>)>, ClusterError> {
    let finished = cluster
        .cache
        .get(&table)
        .is_some_and(|c| c.entry.finished_at_ms.is_some());
    if !finished {
        return Ok(None);
    }
    let Some(read) = cluster.read_table(table).await? else {
        return Ok(None);
    };
    let stored = read.stored;
    let total_events = stored.events.len() as u64;
    let (events, _) = page_of(&stored.events, from_seq, usize::MAX, max_bytes);
    Ok(Some((
        crate::journal::ReplayPage {
            record: stored.record,
            events,
            total_events,
        },
        stored.seats,
    )))
}

/// Events of any table (open or finished), as [`crate::journal::Journal::events_page`].
pub(crate) async fn events_page(
    cluster: &Cluster,
    table: TableId,
    from_seq: u64,
    limit: usize,
    max_bytes: usize,
) -> Result<(Vec<(u64, Vec<u8>)>, bool), ClusterError> {
    let Some(read) = cluster.read_table(table).await? else {
        return Ok((Vec::new(), false));
    };
    Ok(page_of(&read.stored.events, from_seq, limit, max_bytes))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn created() -> Record {
        Record::Created {
            name: "t".to_owned(),
            password: None,
            settings: vec![1],
            created_at_ms: 1,
            league: None,
        }
    }

    fn flush(first_seq: u64) -> Record {
        Record::Flush {
            first_seq,
            events: vec![serde_bytes::ByteBuf::from(b"an event".to_vec())],
            ops: Vec::new(),
        }
    }

    #[test]
    fn folding_records_out_of_order_says_what_is_wrong() {
        let table = TableId::new_random();
        let error = fold_records(table, &[flush(1), created()]).unwrap_err();
        assert!(
            matches!(error, ClusterError::FlushBeforeCreation),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "a flush record before the table's creation"
        );

        let error = fold_records(table, &[]).unwrap_err();
        assert!(matches!(error, ClusterError::NoCreation), "{error:?}");
        assert_eq!(error.to_string(), "the table has no creation record");

        let error = fold_records(table, &[created(), flush(1), flush(3)]).unwrap_err();
        assert!(
            matches!(
                error,
                ClusterError::OutOfSequence(OutOfSequence {
                    first: 3,
                    expected: 2
                })
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "events numbered from 3 where 2 was expected"
        );

        let folded = fold_records(table, &[created(), flush(1), flush(2)]).unwrap();
        assert_eq!(folded.events.len(), 2);
    }

    #[test]
    fn clients_are_sent_to_another_address_only() {
        let there = |owner, mine| websocket_url_elsewhere(owner, mine);
        assert_eq!(
            there("https://b.melee.example", "https://a.melee.example").as_deref(),
            Some("wss://b.melee.example/ws")
        );
        assert_eq!(
            there("http://127.0.0.1:7001/", "http://127.0.0.1:7000").as_deref(),
            Some("ws://127.0.0.1:7001/ws")
        );
        assert_eq!(
            there("https://melee.example/game", "https://a.example").as_deref(),
            Some("wss://melee.example/game/ws")
        );
        // Nodes behind one shared address: the address reaches the table already.
        assert_eq!(
            there("https://melee.example", "https://melee.example/"),
            None
        );
        assert_eq!(there("ftp://b.example", "https://a.example"), None);
        assert_eq!(there("https://", "https://a.example"), None);
        // A node listening on every address, without --public-url: no address to give.
        assert_eq!(there("http://0.0.0.0:7878", "http://10.0.0.2:7878"), None);
        assert_eq!(there("http://[::]:7878", "http://10.0.0.2:7878"), None);
    }

    #[test]
    fn a_bad_node_name_is_refused_with_the_rule() {
        for bad in ["", "has space", "ü", &"n".repeat(33)] {
            let error = check_node_id(bad).unwrap_err();
            assert!(
                matches!(&error, ConnectError::BadNodeId(id) if id == bad),
                "{error:?}"
            );
            assert!(
                error
                    .to_string()
                    .contains("a node name has 1–32 letters, digits, '-' or '_'"),
                "{error}"
            );
        }
        check_node_id("node-1_a").unwrap();
    }

    #[tokio::test]
    async fn connecting_without_a_node_name_or_a_url_is_refused_before_any_network() {
        let metrics = || Arc::new(Metrics::default());
        let error = Cluster::connect(&ServerConfig::default(), "nats://127.0.0.1:1", metrics())
            .await
            .unwrap_err();
        assert!(matches!(error, ConnectError::NoNodeId), "{error:?}");
        assert!(
            error.to_string().contains("--cluster needs --node-id"),
            "{error}"
        );

        let config = ServerConfig {
            node_id: Some("a".to_owned()),
            ..ServerConfig::default()
        };
        let error = Cluster::connect(&config, " , ", metrics())
            .await
            .unwrap_err();
        assert!(matches!(error, ConnectError::NoUrl), "{error:?}");
        assert!(
            error.to_string().contains("give at least one NATS URL"),
            "{error}"
        );

        let error = Cluster::connect(&config, "nats://[bad", metrics())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ConnectError::BadUrl { url, .. } if url == "nats://[bad"),
            "{error:?}"
        );
        assert!(
            error.to_string().starts_with("--cluster \"nats://[bad\": "),
            "{error}"
        );
    }
}
