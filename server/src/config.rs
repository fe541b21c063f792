//! Server settings: command-line flags, each with a matching environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use grand_melee_protocol::server_limits as limits;

use crate::durability::Durability;

/// The Grand Melee server: hosts many tables of simultaneous-turn Magic: The Gathering. Open
/// `http://HOST:PORT/` in a browser for the lobby and the tables (the page is built in);
/// programs connect a WebSocket to `/ws` (MessagePack frames); `GET /healthz` and
/// `GET /metrics` are on the same port.
#[derive(Debug, Clone, Parser)]
#[command(name = "grand-melee-server", version, about, long_about = None)]
pub struct ServerConfig {
    /// Address and port to listen on. Use 0.0.0.0:PORT to accept other machines.
    #[arg(long, env = "GM_LISTEN", default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,

    /// Directory of the journal (`grand-melee.sqlite3`): every table, seat token and event, so
    /// games survive a crash or restart and finished games stay as replays. Created if missing.
    #[arg(
        long,
        env = "GM_DATA_DIR",
        default_value = "grand-melee-data",
        global = true
    )]
    pub data_dir: PathBuf,

    /// Back the journal up into this directory on a schedule, while the server runs (a copy
    /// consistent as of one moment, named by its UTC time, e.g.
    /// `grand-melee-20261129T034507Z.sqlite3`): the first `--backup-every` after start, then
    /// every `--backup-every`, keeping the newest `--backup-keep`. Created if missing. Not in
    /// cluster mode (the journal is then the NATS stream).
    #[arg(long, env = "GM_BACKUP_DIR", value_name = "DIR")]
    pub backup_dir: Option<PathBuf>,

    /// Time between scheduled backups (`--backup-dir`): a number and a unit, `m`, `h` or `d`
    /// (`30m`, `1h`, `1d`); at least a minute.
    #[arg(long, env = "GM_BACKUP_EVERY", default_value = "1h", value_name = "INTERVAL",
          value_parser = interval_arg)]
    pub backup_every: Duration,

    /// How many scheduled backups to keep in `--backup-dir`: the oldest past this many are
    /// deleted after each new one (only files named as scheduled backups are ever deleted).
    #[arg(long, env = "GM_BACKUP_KEEP", default_value_t = 24,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub backup_keep: u32,

    /// What to do instead of serving.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// `full`: every event is synced to disk before anyone sees it (survives power loss).
    /// `normal`: written to the OS before anyone sees it (survives a crash of the server, not
    /// of the machine), much cheaper.
    #[arg(long, env = "GM_DURABILITY", default_value = "full")]
    pub durability: Durability,

    /// Milliseconds between the starts of two journal commits while many tables write at once
    /// (a lone write is committed at once). Longer: fewer commits and syncs, a little more wait
    /// per action under load. 0: commit whatever waits as soon as the last commit is done.
    #[arg(
        long,
        env = "GM_COMMIT_SPACING_MS",
        default_value_t = 2,
        value_parser = clap::value_parser!(u64).range(0..=50)
    )]
    pub commit_spacing_ms: u64,

    /// Log filter, e.g. `info`, `debug`, or `grand_melee_server=debug,info`.
    #[arg(long, env = "GM_LOG", default_value = "info")]
    pub log: String,

    /// Most simultaneous connections (WebSocket and HTTP); further ones are refused. Keep it below
    /// the process's open-file limit.
    #[arg(long, env = "GM_MAX_CONNECTIONS", default_value_t = limits::MAX_CONNECTIONS)]
    pub max_connections: usize,

    /// Most tables at once (lobby, playing or finished but still watched).
    #[arg(long, env = "GM_MAX_TABLES", default_value_t = limits::MAX_TABLES)]
    pub max_tables: usize,

    /// Most open tables created from one IP address (0: no limit); more get `too_many_tables`.
    /// A table counts until it closes, except one nobody has sat at for `--unjoined-table-secs`.
    #[arg(long, env = "GM_MAX_TABLES_PER_IP", default_value_t = limits::MAX_TABLES_PER_IP)]
    pub max_tables_per_ip: usize,

    /// Most tables one IP address may create per minute (0: no limit); more get
    /// `too_many_tables`.
    #[arg(long, env = "GM_TABLE_CREATIONS_PER_MINUTE",
          default_value_t = limits::TABLE_CREATIONS_PER_MINUTE)]
    pub table_creations_per_minute: u32,

    /// Seconds a new table may stay without anyone ever sitting at it before it is closed (and
    /// stops counting against `--max-tables` and its creator's `--max-tables-per-ip`).
    #[arg(long, env = "GM_UNJOINED_TABLE_SECS", default_value_t = limits::UNJOINED_TABLE_SECS)]
    pub unjoined_table_secs: u64,

    /// Most spectators from one IP address across all tables (0: no limit); more get
    /// `spectators_full`. Each table also has its own cap (`max_spectators`, chosen at creation).
    #[arg(long, env = "GM_MAX_SPECTATORS_PER_IP",
          default_value_t = limits::MAX_SPECTATORS_PER_IP)]
    pub max_spectators_per_ip: usize,

    /// Times one IP address may start watching a table per minute (bursts of 10; 0: no limit);
    /// past it, `watch` answers `rate_limited`. Every start and end of watching is an event the
    /// table journals, so this keeps one address from filling someone else's journal.
    #[arg(long, env = "GM_WATCHES_PER_MINUTE", default_value_t = limits::WATCHES_PER_MINUTE)]
    pub watches_per_minute: f64,

    /// Chat lines per minute one table accepts from all its members together (bursts of 20);
    /// past it, `chat` answers `rate_limited`. 0: no table budget.
    #[arg(long, env = "GM_TABLE_CHAT_PER_MINUTE",
          default_value_t = limits::TABLE_CHAT_PER_MINUTE)]
    pub table_chat_per_minute: f64,

    /// Wrong passwords one IP address may try per minute at one table or league (bursts of 5),
    /// wrong member tokens and organiser secrets of a league counted with them; past it,
    /// `join`, `watch`, `get_replay`, `join_league` and the league requests that show a secret
    /// answer `rate_limited` without checking. 0: no limit.
    #[arg(long, env = "GM_WRONG_PASSWORDS_PER_MINUTE",
          default_value_t = limits::WRONG_PASSWORDS_PER_MINUTE)]
    pub wrong_passwords_per_minute: f64,

    /// Password checks one IP address may ask for per minute, right or wrong, at tables and
    /// leagues together (bursts of as many; 0: no limit). Each check costs a 19 MiB Argon2id
    /// hash; past it, the request answers `rate_limited` without hashing.
    #[arg(long, env = "GM_PASSWORD_CHECKS_PER_MINUTE",
          default_value_t = limits::PASSWORD_CHECKS_PER_MINUTE)]
    pub password_checks_per_minute: f64,

    /// Password hashes computed at once, for the whole server (0: one per CPU core). Each has
    /// its own thread and keeps one 19 MiB buffer, so this bounds their memory; a check that
    /// finds 16 more waiting per thread answers `server_busy`.
    #[arg(long, env = "GM_PASSWORD_HASH_THREADS", default_value_t = 0)]
    pub password_hash_threads: usize,

    /// Times one IP address may join a league per minute (bursts of as many; 0: no limit);
    /// past it, `join_league` answers `rate_limited`.
    #[arg(long, env = "GM_LEAGUE_JOINS_PER_MINUTE",
          default_value_t = limits::LEAGUE_JOINS_PER_MINUTE)]
    pub league_joins_per_minute: f64,

    /// Most members one IP address may add to one league (0: no limit; 40 lets a whole game
    /// night behind one router join); past it,
    /// `join_league` answers `rate_limited` with a message saying so. Counted since the server
    /// started.
    #[arg(long, env = "GM_MAX_LEAGUE_MEMBERS_PER_IP",
          default_value_t = limits::MAX_LEAGUE_MEMBERS_PER_IP)]
    pub max_league_members_per_ip: usize,

    /// Most adjourned games one IP address may hold (0: no limit), counted for the host who
    /// adjourned them; past it, `adjourn` answers `too_many_tables`. A game adjourned before a
    /// restart no longer counts (its expiry, `--adjourned-expiry-days`, still ends it).
    #[arg(long, env = "GM_MAX_ADJOURNED_PER_IP",
          default_value_t = limits::MAX_ADJOURNED_PER_IP)]
    pub max_adjourned_per_ip: usize,

    /// QR codes one IP address may have drawn per minute (bursts of 10; 0: no limit). Drawing
    /// one costs milliseconds of CPU; the codes of recent links are cached and cost nothing,
    /// so a table's own code is never refused. Past it, `/qr.svg` answers 429.
    #[arg(long, env = "GM_QR_CODES_PER_MINUTE", default_value_t = limits::QR_CODES_PER_MINUTE)]
    pub qr_codes_per_minute: f64,

    /// TURN credentials one IP address may be given per minute (bursts of as many; 0: no
    /// limit). Past it, `ice_servers` answers carry no TURN server.
    #[arg(long, env = "GM_TURN_CREDENTIALS_PER_MINUTE",
          default_value_t = limits::TURN_CREDENTIALS_PER_MINUTE)]
    pub turn_credentials_per_minute: f64,

    /// Camera signal bytes one IP address may send per second (bursts of eight seconds'
    /// worth; 0: no limit); past it, `signal` answers `rate_limited`. A camera link's offer,
    /// answer and candidates take a few kilobytes.
    #[arg(long, env = "GM_SIGNAL_BYTES_PER_SECOND",
          default_value_t = limits::SIGNAL_BYTES_PER_SECOND)]
    pub signal_bytes_per_second: f64,

    /// How many leading bits of an IPv6 address name one client for every per-address cap,
    /// throttle and ban (64: a home's whole /64 counts as one address).
    #[arg(long, env = "GM_IPV6_PREFIX", default_value_t = limits::IPV6_PREFIX,
          value_parser = clap::value_parser!(u8).range(1..=128))]
    pub ipv6_prefix: u8,

    /// How many leading bits of an IPv4 address name one client for every per-address cap,
    /// throttle and ban (32: each address on its own; 24 groups a /24).
    #[arg(long, env = "GM_IPV4_PREFIX", default_value_t = limits::IPV4_PREFIX,
          value_parser = clap::value_parser!(u8).range(1..=32))]
    pub ipv4_prefix: u8,

    /// Days a finished game is kept as a replay before it is deleted (0: forever). Checked at
    /// start and every hour.
    #[arg(long, env = "GM_REPLAY_RETENTION_DAYS",
          default_value_t = limits::REPLAY_RETENTION_DAYS)]
    pub replay_retention_days: u32,

    /// Days an adjourned game waits to be resumed, counted from its adjournment (across
    /// restarts: the time is journaled), before it ends as abandoned: kept as a replay, league
    /// credits paid, its place under `--max-tables` given back. 0: it waits for ever.
    #[arg(long, env = "GM_ADJOURNED_EXPIRY_DAYS",
          default_value_t = limits::ADJOURNED_EXPIRY_DAYS)]
    pub adjourned_expiry_days: u32,

    /// The same in seconds, for tests; when given it replaces `--adjourned-expiry-days`
    /// (0: for ever).
    #[arg(long, env = "GM_ADJOURNED_EXPIRY_SECS", hide = true)]
    pub adjourned_expiry_secs: Option<u64>,

    /// Start even if the journal's integrity check finds damage. Tables that cannot be rebuilt
    /// are then left out (logged, counted in `/metrics`, their rows kept untouched) instead of
    /// stopping the server; restore the journal from a backup as soon as you can.
    #[arg(
        long,
        env = "GM_ALLOW_DAMAGED_JOURNAL",
        value_parser = clap::builder::BoolishValueParser::new(),
        default_value_t = false,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub allow_damaged_journal: bool,

    /// Seconds a client has to complete the HTTP/WebSocket handshake.
    #[arg(long, env = "GM_HANDSHAKE_TIMEOUT", default_value_t = limits::HANDSHAKE_TIMEOUT_SECS)]
    pub handshake_timeout_secs: u64,

    /// Seconds between the server's WebSocket pings.
    #[arg(long, env = "GM_PING_INTERVAL", default_value_t = limits::PING_INTERVAL_SECS)]
    pub ping_interval_secs: u64,

    /// Seconds without any frame (a pong counts) after which a client is disconnected.
    #[arg(long, env = "GM_IDLE_TIMEOUT", default_value_t = limits::IDLE_TIMEOUT_SECS)]
    pub idle_timeout_secs: u64,

    /// Seconds a dropped player's seat is held in the lobby before it is given up. During a game
    /// the seat is never given up; the player resumes with his seat token.
    #[arg(long, env = "GM_GRACE_PERIOD", default_value_t = limits::GRACE_PERIOD_SECS)]
    pub grace_period_secs: u64,

    /// Frames queued for one connection before it counts as a slow reader and is dropped.
    #[arg(long, env = "GM_OUTGOING_QUEUE", default_value_t = limits::OUTGOING_QUEUE)]
    pub outgoing_queue: usize,

    /// Requests queued for one table before senders wait.
    #[arg(long, env = "GM_TABLE_QUEUE", default_value_t = 1024)]
    pub table_queue: usize,

    /// Bytes queued for one connection before it counts as a slow reader and is dropped.
    #[arg(long, env = "GM_OUTGOING_QUEUE_BYTES",
          default_value_t = limits::OUTGOING_QUEUE_BYTES)]
    pub outgoing_queue_bytes: usize,

    /// Most simultaneous connections from one IP address (0: no limit).
    #[arg(long, env = "GM_MAX_CONNECTIONS_PER_IP",
          default_value_t = limits::MAX_CONNECTIONS_PER_IP)]
    pub max_connections_per_ip: usize,

    /// Browser origins allowed to open a WebSocket, comma-separated (e.g.
    /// `https://melee.example`). Empty: any origin. When set, the server's own pages are allowed
    /// too: the origin of `--public-url`, with TLS the certificate's DNS names, and the address
    /// a client connected to (an IP address, or `localhost` on loopback); never a name taken
    /// from the request's `Host`. Requests without an `Origin` header (bots, terminal clients)
    /// are always allowed.
    #[arg(long, env = "GM_ALLOWED_ORIGINS", value_delimiter = ',', value_name = "ORIGINS",
          value_parser = crate::origin::origin_arg)]
    pub allowed_origins: Vec<String>,

    /// A reverse proxy's address or range (`127.0.0.1`, `10.0.0.0/8`, `fd00::/8`); repeat the
    /// flag (or comma-separate the variable) for several. From those addresses only, the client
    /// is the one `Forwarded` or `X-Forwarded-For` names (the right-most address that is not a
    /// trusted proxy) and its scheme the one `X-Forwarded-Proto` names; every per-address cap,
    /// throttle, ban and log line uses that client. Headers from any other address are ignored.
    /// Without it, behind a proxy every client counts as the proxy's address.
    #[arg(
        long = "trusted-proxy",
        env = "GM_TRUSTED_PROXY",
        value_delimiter = ',',
        value_name = "CIDR"
    )]
    pub trusted_proxies: Vec<crate::forwarded::Cidr>,

    /// TLS certificate chain (PEM) for `https://` and `wss://` on the same port; needs
    /// `--tls-key`. Without it the server speaks plain HTTP (put it behind a reverse proxy for
    /// TLS, see the manual at /docs, "TLS and reverse proxies").
    #[arg(long, env = "GM_TLS_CERT", requires = "tls_key", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,

    /// TLS private key (PEM: PKCS#8, PKCS#1 or SEC1) for `--tls-cert`.
    #[arg(long, env = "GM_TLS_KEY", requires = "tls_cert", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,

    /// Automatic HTTPS: a domain name of this server (repeat the flag, or comma-separate the
    /// variable, for several). The server gets a certificate for them from the ACME directory
    /// (Let's Encrypt unless `--acme-directory`), keeps it in the data directory (`acme/`),
    /// renews it by itself, serves `https://` and `wss://` on `--listen` (then `0.0.0.0:443`
    /// unless given) and redirects plain http from `--redirect-listen` (port 80). Each domain's
    /// DNS must point at this machine and its port 443 be reachable from the internet: the
    /// directory checks the name by connecting to it (TLS-ALPN-01). `--public-url` follows from
    /// the first domain. Not with `--tls-cert`.
    #[arg(long = "acme-domain", env = "GM_ACME_DOMAIN", value_delimiter = ',',
          value_name = "DOMAIN", conflicts_with_all = ["tls_cert", "tls_key"],
          value_parser = domain_arg)]
    pub acme_domains: Vec<String>,

    /// Automatic HTTPS: an e-mail address the certificate authority may write to about this
    /// server's certificates (a renewal that keeps failing, an incident). Optional.
    #[arg(long, env = "GM_ACME_EMAIL", value_name = "ADDRESS", requires = "acme_domains",
          value_parser = email_arg)]
    pub acme_email: Option<String>,

    /// Automatic HTTPS: the ACME directory that issues the certificates.
    #[arg(long, env = "GM_ACME_DIRECTORY", value_name = "URL",
          default_value = LETS_ENCRYPT, value_parser = directory_arg)]
    pub acme_directory: String,

    /// Automatic HTTPS: use Let's Encrypt's staging directory (certificates browsers do not
    /// trust, without the production rate limits) to try a set-up first.
    #[arg(
        long,
        env = "GM_ACME_STAGING",
        requires = "acme_domains",
        conflicts_with = "acme_directory"
    )]
    pub acme_staging: bool,

    /// Automatic HTTPS: PEM certificates to trust for the ACME directory's own https, besides
    /// the public roots (a private ACME server such as step-ca, or pebble in the tests).
    #[arg(
        long,
        env = "GM_ACME_DIRECTORY_CA",
        value_name = "FILE",
        requires = "acme_domains"
    )]
    pub acme_directory_ca: Option<PathBuf>,

    /// Automatic HTTPS: where plain `http://` is answered with a redirect to the same page on
    /// `https://`; `off` for nowhere. Only with `--acme-domain`.
    #[arg(long, env = "GM_REDIRECT_LISTEN", value_name = "ADDR|off",
          default_value = "0.0.0.0:80", value_parser = redirect_arg)]
    pub redirect_listen: Redirect,

    /// Serve the browser page's files from this folder instead of the copies built into the
    /// binary (for working on the page: edits show on reload).
    #[arg(long, env = "GM_WEB_DIR", value_name = "DIR")]
    pub web_dir: Option<PathBuf>,

    /// Largest WebSocket message (and frame) a client may send, in bytes (at most 16384).
    #[arg(long, env = "GM_MAX_MESSAGE_BYTES",
          default_value_t = grand_melee_protocol::MAX_CLIENT_MESSAGE_BYTES)]
    pub max_message_bytes: usize,

    /// Kernel send buffer per connection (SO_SNDBUF), in bytes; 0 keeps the system's default
    /// (on Linux it grows by itself up to `net.ipv4.tcp_wmem`'s maximum, 4 MiB: that much kernel
    /// memory per slow reader). Linux doubles the value for its own bookkeeping. Smaller buffers
    /// find slow readers sooner and cost less kernel memory per connection; see BENCHMARKS.md.
    #[arg(long, env = "GM_SEND_BUFFER_BYTES", default_value_t = 64 * 1024)]
    pub send_buffer_bytes: usize,

    /// Bytes read from a WebSocket connection at once, at most 65536 (client messages are
    /// small; longer ones are read in several pieces). Reads go into the serving thread's one
    /// scratch buffer: a connection holds no read buffer of its own, only the bytes of a frame
    /// not complete yet.
    #[arg(long, env = "GM_READ_BUFFER_BYTES", default_value_t = 512)]
    pub read_buffer_bytes: usize,

    /// A STUN or TURN server for the players' camera links (`stun:HOST[:PORT]`, `stuns:…`,
    /// `turn:HOST[:PORT][?transport=udp|tcp]`, `turns:…`); repeat the flag (or comma-separate
    /// the variable) for several. Handed to the pages in `ice_servers`; the media go between the
    /// browsers, never through this server. None by default: on a LAN none is needed. See
    /// the manual at /docs, "Cameras over the internet: TURN".
    #[arg(
        long = "ice-server",
        env = "GM_ICE_SERVERS",
        value_delimiter = ',',
        value_name = "URL"
    )]
    pub ice_servers: Vec<String>,

    /// The secret shared with the TURN server (coturn's `static-auth-secret`, with
    /// `use-auth-secret`): the server then mints short-lived credentials for the `turn:` and
    /// `turns:` servers of `--ice-server` in every `ice_servers` answer. Needs one of those.
    #[arg(
        long,
        env = "GM_TURN_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub turn_secret: Option<String>,

    /// How long minted TURN credentials last, in seconds (an evening by default). They are
    /// minted only for a connection with a camera link, and a page is given fresh ones whenever
    /// its links open after half of that.
    #[arg(long, env = "GM_TURN_TTL_SECS", default_value_t = 14_400)]
    pub turn_ttl_secs: u64,

    /// Requests per second one connection may send on average.
    #[arg(long, env = "GM_RATE_LIMIT", default_value_t = limits::RATE_LIMIT)]
    pub rate_limit: f64,

    /// Requests one connection may send in a burst above the average.
    #[arg(long, env = "GM_RATE_BURST", default_value_t = limits::RATE_BURST)]
    pub rate_burst: f64,

    /// Chat lines per minute one connection may send on average (burst: 5).
    #[arg(long, env = "GM_CHAT_PER_MINUTE", default_value_t = limits::CHAT_PER_MINUTE)]
    pub chat_per_minute: f64,

    /// Rate-limited requests (refilled at 5 per second) after which a flooding connection is
    /// closed with 1008.
    #[arg(long, env = "GM_FLOOD_STRIKES", default_value_t = limits::FLOOD_STRIKES)]
    pub flood_strikes: f64,

    /// Cluster mode: the NATS servers (with JetStream) to use, comma-separated, e.g.
    /// `nats://10.0.0.1:4222,nats://10.0.0.2:4222`. Every table's events then go to a
    /// replicated JetStream stream instead of the SQLite journal, tables are owned by one node
    /// at a time and taken over when their node dies, and any node serves any client. Without
    /// it the server runs alone with its SQLite journal (the default). See the manual at /docs,
    /// "Cluster mode".
    #[arg(long, env = "GM_CLUSTER", value_name = "NATS_URLS")]
    pub cluster: Option<String>,

    /// Cluster mode: this node's name, unique in the cluster (1–32 letters, digits, `-` or
    /// `_`). A node restarted with the same name takes its tables back at once.
    #[arg(long, env = "GM_NODE_ID", requires = "cluster")]
    pub node_id: Option<String>,

    /// The address people open in their browser, `http://HOST[:PORT]` or `https://HOST[:PORT]`
    /// (nothing after it but `/`), e.g. `https://melee.example` behind a reverse proxy. Its
    /// origin is the server's own under `--allowed-origins`. In cluster mode, also this node's
    /// address in /metrics and the node directory (default there: `http://<--listen>`).
    #[arg(long, env = "GM_PUBLIC_URL", value_name = "URL",
          value_parser = crate::origin::origin_arg)]
    pub public_url: Option<String>,

    /// Cluster mode: how many NATS servers keep a copy of the journal stream and of the
    /// directories (1, 3 or 5; at most the number of NATS servers). An event is shown to
    /// clients only once a majority of them has it.
    #[arg(long, env = "GM_CLUSTER_REPLICAS", default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(1..=5))]
    pub cluster_replicas: u8,

    /// Cluster mode: a node's lease, in milliseconds. A node renews it six times per lease;
    /// one that has not renewed it for a whole lease is taken for dead and its tables are
    /// claimed by the others.
    #[arg(long, env = "GM_LEASE_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(500..=600_000))]
    pub lease_ms: u64,

    /// The wall clock the server reads for Mountain Magic's days (when a day begins and ends):
    /// the system's. Not a flag: tests move it to a day's end without waiting for midnight.
    #[arg(skip)]
    pub clock: WallClock,
}

/// The time of day as the server reads it for Mountain Magic's days: the system's clock,
/// shifted by an offset that only tests set ([`WallClock::advance`]). Clones share the offset;
/// a table waiting for its day's end wakes when the offset moves
/// ([`WallClock::subscribe`]).
#[derive(Debug, Clone)]
pub struct WallClock(std::sync::Arc<tokio::sync::watch::Sender<i64>>);

impl Default for WallClock {
    fn default() -> Self {
        Self(std::sync::Arc::new(tokio::sync::watch::channel(0).0))
    }
}

impl WallClock {
    /// Milliseconds since 1970-01-01 00:00 UTC.
    pub fn now_ms(&self) -> u64 {
        let system = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        u64::try_from(system.saturating_add(*self.0.borrow())).unwrap_or(0)
    }

    /// Moves the clock on by `by` (tests: a day's end now rather than at midnight); every
    /// table waiting on it looks at it again.
    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.0
            .send_modify(|offset| *offset = offset.saturating_add(by));
    }

    /// Wakes when the clock is moved.
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<i64> {
        self.0.subscribe()
    }
}

/// What `grand-melee-server` can do besides serving.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Copy the journal of `--data-dir` to DEST (a new file) and exit: safe while the server
    /// runs on it, consistent as of one moment, checked before it is named DEST. To restore:
    /// stop the server, put the copy in an empty data directory as `grand-melee.sqlite3` (or
    /// over the old one, deleting its `-wal` and `-shm` files), and start the server there.
    Backup {
        /// The file to write, which must not exist; or a directory, to write a new file in it
        /// named by the time (`grand-melee-20261129T034507Z.sqlite3`).
        dest: PathBuf,
    },
}

/// Parses a backup interval: a number and a unit, `s`, `m`, `h` or `d` (`90m`, `1h`, `1d`), at
/// least a minute.
pub fn interval_arg(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{text:?}: give a unit, e.g. 30m, 1h or 1d"))?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: a whole number and a unit, e.g. 30m, 1h or 1d"))?;
    let secs = match unit {
        "s" => number,
        "m" => number.saturating_mul(60),
        "h" => number.saturating_mul(3600),
        "d" => number.saturating_mul(86_400),
        _ => {
            return Err(format!(
                "{text:?}: the unit is s, m, h or d (e.g. 30m, 1h or 1d)"
            ));
        }
    };
    if secs < 60 {
        return Err(format!("{text:?}: at least a minute between backups"));
    }
    Ok(Duration::from_secs(secs))
}

// Automatic HTTPS's settings (`--acme-domain` and the flags after it; `acme` uses them).

/// Let's Encrypt's production directory: the default.
pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";
/// Let's Encrypt's staging directory (`--acme-staging`).
pub const LETS_ENCRYPT_STAGING: &str = "https://acme-staging-v02.api.letsencrypt.org/directory";
/// Where the server listens with `--acme-domain` and no `--listen`.
pub const ACME_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), 443);

/// `--redirect-listen`: where plain http is redirected to https, or nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirect {
    /// Listen here and redirect every request.
    At(SocketAddr),
    /// `off`.
    Off,
}

/// Parses `--redirect-listen`: an address and port, or `off`.
pub fn redirect_arg(text: &str) -> Result<Redirect, String> {
    if text.eq_ignore_ascii_case("off") {
        return Ok(Redirect::Off);
    }
    text.parse()
        .map(Redirect::At)
        .map_err(|_| format!("{text:?}: an address and port such as 0.0.0.0:80 or [::]:80, or off"))
}

/// Parses `--acme-domain`: one DNS name as a certificate names it (lower-cased; no scheme, port,
/// path or wildcard: the TLS-ALPN-01 check cannot prove a wildcard).
pub fn domain_arg(text: &str) -> Result<String, String> {
    let name = text.trim().trim_end_matches('.').to_ascii_lowercase();
    let hint = "a domain name such as melee.example.org (no https://, port or path)";
    if name.contains("://") || name.contains('/') || name.contains(':') {
        return Err(format!("{text:?}: {hint}"));
    }
    if name.starts_with("*.") {
        return Err(format!(
            "{text:?}: a wildcard needs a DNS challenge, which the server does not do; name \
             each domain (repeat --acme-domain)"
        ));
    }
    if name.parse::<std::net::IpAddr>().is_ok() {
        return Err(format!(
            "{text:?}: an address, not a name; certificate authorities issue for domain names"
        ));
    }
    let labels_ok = name.split('.').all(|label| {
        (1..=63).contains(&label.len())
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    });
    if name.is_empty() || name.len() > 253 || !labels_ok || !name.contains('.') {
        return Err(format!("{text:?}: {hint}"));
    }
    Ok(name)
}

/// Parses `--acme-email`: an address to write to (`mailto:` is added).
pub fn email_arg(text: &str) -> Result<String, String> {
    let address = text.trim().trim_start_matches("mailto:");
    match address.split_once('@') {
        Some((user, host))
            if !user.is_empty()
                && host.contains('.')
                && !address.chars().any(|c| c.is_whitespace() || c == ',') =>
        {
            Ok(address.to_owned())
        }
        _ => Err(format!(
            "{text:?}: an e-mail address such as organiser@example.org"
        )),
    }
}

/// Parses `--acme-directory`: an `https://` URL.
pub fn directory_arg(text: &str) -> Result<String, String> {
    match url::Url::parse(text) {
        Ok(url) if url.scheme() == "https" && url.host().is_some() => Ok(text.to_owned()),
        _ => Err(format!(
            "{text:?}: the directory's https:// URL, e.g. {LETS_ENCRYPT}"
        )),
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        // The defaults of the flags above, for tests and embedders.
        Self::parse_from(["grand-melee-server"])
    }
}

impl ServerConfig {
    /// The settings of this process's command line and environment (exits with clap's message
    /// on a bad one). With `--acme-domain` and no `--listen`, the server listens on
    /// `0.0.0.0:443`: the port the certificate authority checks and browsers open.
    pub fn from_command_line() -> Self {
        use clap::{CommandFactory, FromArgMatches};
        let matches = Self::command().get_matches();
        let mut config = Self::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
        if !config.acme_domains.is_empty()
            && matches.value_source("listen") == Some(clap::parser::ValueSource::DefaultValue)
        {
            config.listen = ACME_LISTEN;
        }
        config
    }

    pub(crate) fn handshake_timeout(&self) -> Duration {
        Duration::from_secs(self.handshake_timeout_secs)
    }

    pub(crate) fn ping_interval(&self) -> Duration {
        Duration::from_secs(self.ping_interval_secs.max(1))
    }

    pub(crate) fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs.max(1))
    }

    pub(crate) fn grace_period(&self) -> Duration {
        Duration::from_secs(self.grace_period_secs)
    }

    pub(crate) fn unjoined_table(&self) -> Duration {
        Duration::from_secs(self.unjoined_table_secs)
    }

    /// How long an adjourned game waits to be resumed (`None`: for ever).
    pub(crate) fn adjourned_expiry(&self) -> Option<Duration> {
        let secs = self
            .adjourned_expiry_secs
            .unwrap_or(u64::from(self.adjourned_expiry_days) * 86_400);
        (secs > 0).then(|| Duration::from_secs(secs))
    }

    pub(crate) fn lease(&self) -> Duration {
        Duration::from_millis(self.lease_ms)
    }

    /// The checked `--ice-server`, `--turn-secret` and `--turn-ttl-secs` (`Server::bind`
    /// refuses to start with them otherwise).
    pub(crate) fn ice(&self) -> Result<crate::ice::Ice, crate::ice::IceError> {
        crate::ice::Ice::new(
            &self.ice_servers,
            self.turn_secret.as_deref(),
            self.turn_ttl_secs,
        )
    }

    pub(crate) fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
            .clamp(1, grand_melee_protocol::MAX_CLIENT_MESSAGE_BYTES)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_names_without_scheme_port_or_wildcard() {
        assert_eq!(
            domain_arg("Melee.Example.ORG.").as_deref(),
            Ok("melee.example.org")
        );
        for bad in [
            "https://melee.example.org",
            "melee.example.org:443",
            "melee.example.org/x",
            "*.example.org",
            "203.0.113.7",
            "localhost",
            "",
            "-a.example.org",
            "a..example.org",
            &format!("{}.org", "a".repeat(64)),
        ] {
            assert!(domain_arg(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            email_arg("mailto:o@example.org").as_deref(),
            Ok("o@example.org")
        );
        assert!(email_arg("organiser").is_err());
        assert!(email_arg("a b@example.org").is_err());
        assert!(directory_arg("http://example.org/dir").is_err());
        assert!(directory_arg(LETS_ENCRYPT).is_ok());
        assert_eq!(redirect_arg("OFF"), Ok(Redirect::Off));
        assert!(redirect_arg("80").is_err());
    }

    #[test]
    fn ice_servers_repeat_and_the_turn_settings_are_checked() {
        let config = ServerConfig::try_parse_from([
            "grand-melee-server",
            "--ice-server",
            "stun:stun.example.org",
            "--ice-server",
            "turn:turn.example.org:3478?transport=udp,turns:turn.example.org:5349",
            "--turn-secret",
            "s3cret",
        ])
        .unwrap();
        assert_eq!(config.ice_servers.len(), 3);
        assert_eq!(config.turn_ttl_secs, 14_400);
        assert!(config.ice().is_ok());
        assert!(ServerConfig::default().ice_servers.is_empty());
        let only_stun = ServerConfig::try_parse_from([
            "grand-melee-server",
            "--ice-server",
            "stun:stun.example.org",
            "--turn-secret",
            "s3cret",
        ])
        .unwrap();
        assert_eq!(
            only_stun.ice().unwrap_err(),
            crate::ice::IceError::SecretWithoutTurn
        );
        let typo = ServerConfig::try_parse_from([
            "grand-melee-server",
            "--ice-server",
            "turn.example.org",
        ])
        .unwrap();
        assert!(
            typo.ice()
                .unwrap_err()
                .to_string()
                .contains("\"turn.example.org\": not a STUN or TURN URL")
        );
    }

    /// Every flag PROTOCOL.md's limits table names (`limits_of::LIMITS`) is a flag of the
    /// server, and its default is the value the table shows.
    #[test]
    fn every_flag_of_the_limits_table_has_the_tables_default() {
        use clap::CommandFactory;
        let command = ServerConfig::command();
        let mut flags = 0;
        for limit in grand_melee_protocol::limits_of::LIMITS {
            let Some(flag) = limit.flag else { continue };
            let long = flag.strip_prefix("--").unwrap();
            let arg = command
                .get_arguments()
                .find(|arg| arg.get_long() == Some(long))
                .unwrap_or_else(|| panic!("the server has no flag {flag}"));
            let defaults = arg.get_default_values();
            assert_eq!(defaults.len(), 1, "{flag}");
            let default: f64 = defaults[0].to_str().unwrap().parse().unwrap();
            let [shown] = limit.value.nums()[..] else {
                panic!("{flag} shows no single value");
            };
            assert_eq!(default, shown.value, "{flag}");
            flags += 1;
        }
        assert!(flags >= 25, "{flags}");
        // And the parsed defaults are those values too.
        let config = ServerConfig::default();
        assert_eq!(
            config.max_tables,
            grand_melee_protocol::server_limits::MAX_TABLES
        );
        assert_eq!(
            config.max_message_bytes,
            grand_melee_protocol::MAX_CLIENT_MESSAGE_BYTES
        );
    }

    /// The manual's "Server settings" table (`docs/src/settings.md`) gives each flag its variable
    /// and, for a number, its default: the ones the server has.
    #[test]
    fn the_manuals_settings_table_gives_each_flags_variable_and_default() {
        use clap::CommandFactory;
        let command = ServerConfig::command();
        let chapter = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/src/settings.md"
        ))
        .unwrap();
        let mut numbers = 0;
        for line in chapter.lines() {
            let cells: Vec<&str> = line.split(" | ").map(str::trim).collect();
            let [flags, vars, default, ..] = cells[..] else {
                continue;
            };
            if !(flags.starts_with("| `--") && vars.starts_with("`GM_")) {
                continue;
            }
            let flags: Vec<&str> = flags.trim_start_matches("| ").split(", ").collect();
            let vars: Vec<&str> = vars.split(", ").collect();
            assert_eq!(flags.len(), vars.len(), "{line}");
            for (flag, var) in flags.iter().zip(&vars) {
                let long = flag.trim_matches('`').trim_start_matches("--");
                let arg = command
                    .get_arguments()
                    .find(|arg| arg.get_long() == Some(long))
                    .unwrap_or_else(|| {
                        panic!("docs/src/settings.md names {flag}, no flag of the server")
                    });
                let env = arg.get_env().and_then(|e| e.to_str());
                assert_eq!(env, Some(var.trim_matches('`')), "{flag}");
                let shown = default.split(' ').next().unwrap_or_default();
                if let Ok(shown) = shown.parse::<f64>() {
                    let defaults = arg.get_default_values();
                    let actual: f64 = defaults[0].to_str().unwrap().parse().unwrap();
                    assert_eq!(shown, actual, "docs/src/settings.md's default of {flag}");
                    numbers += 1;
                }
            }
        }
        assert!(numbers >= 30, "{numbers}");
    }

    #[test]
    fn intervals_need_a_unit_and_a_minute() {
        assert_eq!(interval_arg("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(interval_arg("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(interval_arg("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(interval_arg("60s"), Ok(Duration::from_secs(60)));
        for bad in ["", "1", "h", "30s", "1w", "-1h", "1.5h"] {
            assert!(interval_arg(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_commit_spacing_is_milliseconds_from_0_to_50() {
        let parse = |value: &str| {
            ServerConfig::try_parse_from(["grand-melee-server", "--commit-spacing-ms", value])
                .map(|config| config.commit_spacing_ms)
        };
        assert_eq!(ServerConfig::default().commit_spacing_ms, 2);
        assert_eq!(parse("0").unwrap(), 0);
        assert_eq!(parse("50").unwrap(), 50);
        for bad in ["51", "-1", "2ms", ""] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn trusted_proxies_repeat_and_are_checked() {
        let config = ServerConfig::try_parse_from([
            "grand-melee-server",
            "--trusted-proxy",
            "127.0.0.1",
            "--trusted-proxy",
            "10.0.0.0/8,fd00::/8",
        ])
        .unwrap();
        let ranges: Vec<String> = config
            .trusted_proxies
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(ranges, ["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"]);
        assert!(ServerConfig::default().trusted_proxies.is_empty());
        let error =
            ServerConfig::try_parse_from(["grand-melee-server", "--trusted-proxy", "10.0.0.1/8"])
                .unwrap_err()
                .to_string();
        assert!(error.contains("did you mean 10.0.0.0/8"), "{error}");
        let error =
            ServerConfig::try_parse_from(["grand-melee-server", "--trusted-proxy", "proxy.lan"])
                .unwrap_err()
                .to_string();
        assert!(error.contains("not an IP address"), "{error}");
    }
}
