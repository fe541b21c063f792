//! The journal: an embedded SQLite database of every table, its seat tokens, a little per-table
//! metadata and every event in order, so that tables survive a crash or a restart and finished
//! games stay as replays.
//!
//! # Layout
//! One file, `<data dir>/grand-melee.sqlite3` ([`DB_FILE`]), in WAL mode (so there are `-wal`
//! and `-shm` files beside it while the server runs). Its schema is versioned with
//! `PRAGMA user_version`: [`Journal::open`] migrates an older journal step by step to
//! [`SCHEMA_VERSION`] and refuses one written by a newer server
//! ([`JournalError::NewerSchema`]) without touching it.
//!
//! Schema version 2 (all tables `STRICT`, `WITHOUT ROWID`; uuids are 16-byte blobs, times are
//! milliseconds since the Unix epoch):
//! - `melee_tables(id PK, name, password NULL, settings BLOB, created_at_ms, finished_at_ms NULL)`
//!   — `finished_at_ms` is set once a game is over; such a table is a replay. `password` is a
//!   salted Argon2id hash (a PHC string, see `crate::password`), never the password itself.
//! - `events(table_id, seq, data BLOB)`, primary key `(table_id, seq)`: a sequence number can be
//!   written once and never rewritten.
//! - `seats(table_id, player, token)`, primary key `(table_id, player)`.
//! - `meta(table_id, key, value BLOB)`, primary key `(table_id, key)`.
//!
//! `events`, `seats` and `meta` reference `melee_tables` with `ON DELETE CASCADE` (the write
//! connection has `PRAGMA foreign_keys = ON`), so deleting a table's row deletes everything it
//! has. Version 1 had the same tables but kept passwords in plain text; the step to version 2
//! hashes them (and scrubs the old values from the file).
//!
//! # Checks at open
//! Before anything is written, [`Journal::open`] checks that the data directory accepts new files
//! (SQLite creates the `-wal` file there) and runs `PRAGMA quick_check` (plus the full
//! `integrity_check` of the small `melee_tables`, whose index the quick check does not compare
//! with its table). A journal that fails the
//! check is opened **without writing anything** ([`Journal::damage`] says what the check found);
//! it only becomes writable once the caller accepts the damage ([`Journal::accept_damage`], the
//! server's `--allow-damaged-journal`). A sound journal must then take a real write transaction,
//! or it is refused with [`JournalError::NotWritable`] naming the directory.
//!
//! [`Journal::unfinished_tables`] reads each table on its own: a table that cannot be read is
//! reported with the reason ([`UnreadableTable`]) without hiding the others, and it does not rely
//! on the index of finished times (an index that no longer matches its table must not hide a
//! table). Tables the caller could not recover are then kept untouched
//! ([`Journal::keep_untouched`]): every write to them fails, and they are never pruned.
//!
//! # Writes: one writer, group commit
//! A dedicated thread owns the only write connection. Operations reach it over a channel; it
//! takes every operation waiting, runs them all in **one** transaction (each in its own
//! savepoint, so one failing operation fails alone), commits, and only then completes each
//! operation's reply. So an `await`ed write is durable (see [`Durability`]) when it returns, and
//! under load many tables share one commit (one `fsync`). While writes come together, commits
//! start at most once per [`Journal::set_commit_spacing`] and each takes everything that came
//! meanwhile; a lone write is committed at once (`Pacer`).
//!
//! # Reads
//! Reads use a separate read-only connection (WAL lets it read while the writer writes), each
//! call in one read transaction, so it sees a consistent state. They are synchronous and meant
//! for start-up (recovery) and for the occasional replay listing or export.
//!
//! # Shutdown
//! [`Journal::close`] lets the writer finish every operation sent before it, checkpoints the WAL
//! into the main file, closes the database and waits for the thread. Dropping the last handle
//! does the same (blocking the dropping thread for the last batch). A process that dies instead
//! loses nothing that was acknowledged (for [`Durability::Normal`], unless the OS dies too).

pub mod leagues;
mod store;

pub use crate::durability::{Durability, ParseDurabilityError};
pub use crate::store::{
    EncodedEvent, Flush, ReplayPage, ReplaySummary, StoredTable, TableOp, TableRecord,
};

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, ffi, params};

use grand_melee_protocol::{SeatToken, TableId};
use tokio::sync::oneshot;

use crate::metrics::JournalStats;
use tracing::{debug, error, info, warn};
use uuid::Uuid;

/// The journal's file name inside the data directory.
pub const DB_FILE: &str = "grand-melee.sqlite3";

/// The schema version this server writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: u32 = 4;

/// How long a connection waits for a lock held by another connection before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements each connection keeps (more than the journal has).
const STATEMENT_CACHE: usize = 128;

/// The WAL's length, in pages, at which a commit copies it into the database file (SQLite's
/// automatic checkpoint, run by the writer after that commit: every table waits meanwhile).
/// SQLite's default is 1,000 pages (4 MB), which 400 busy tables fill about twice a second;
/// each checkpoint writes back the pages changed since the last one and `fsync`s the database
/// file, a few milliseconds during which every request waits (the p99 of issue 35). Ten times
/// longer: the same hot pages are written back once instead of ten times, and the pauses
/// come ten times less often (BENCHMARKS.md, "Performance, round 3").
const CHECKPOINT_PAGES: i64 = 10_000;

/// The most operations the writer puts in one transaction.
const MAX_BATCH: usize = 4096;

/// The default [`Journal::set_commit_spacing`]: how long after the start of a shared commit the
/// next one may start, while the writer is busy (BENCHMARKS.md, "Performance, round 4", step 3).
pub const DEFAULT_COMMIT_SPACING: Duration = Duration::from_millis(2);

/// The most lines of `PRAGMA quick_check` output kept (and shown) when the journal is damaged.
const QUICK_CHECK_LINES: usize = 10;

/// The most finished games one pruning operation deletes, so that other tables' writes are not
/// held up behind a long deletion.
const PRUNE_CHUNK: usize = 100;

/// One migration step: `MIGRATIONS[n]` takes a journal from schema version `n` to `n + 1`. It
/// runs inside the migration's transaction; the caller then sets `user_version`.
type Migration = fn(&rusqlite::Transaction<'_>) -> Result<(), JournalError>;

/// Every migration step in order. To add a version: append a step and bump [`SCHEMA_VERSION`].
const MIGRATIONS: &[Migration] = &[
    migrate_0_to_1,
    migrate_1_to_2,
    migrate_2_to_3,
    migrate_3_to_4,
];

const _: () = assert!(MIGRATIONS.len() == SCHEMA_VERSION as usize);

fn migrate_0_to_1(tx: &rusqlite::Transaction<'_>) -> Result<(), JournalError> {
    Ok(tx.execute_batch(
        "CREATE TABLE melee_tables (
             id             BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
             name           TEXT    NOT NULL,
             password       TEXT,
             settings       BLOB    NOT NULL,
             created_at_ms  INTEGER NOT NULL CHECK (created_at_ms >= 0),
             finished_at_ms INTEGER CHECK (finished_at_ms >= 0)
         ) STRICT, WITHOUT ROWID;
         CREATE INDEX melee_tables_finished ON melee_tables (finished_at_ms);
         CREATE TABLE events (
             table_id BLOB    NOT NULL REFERENCES melee_tables (id) ON DELETE CASCADE,
             seq      INTEGER NOT NULL CHECK (seq >= 0),
             data     BLOB    NOT NULL,
             PRIMARY KEY (table_id, seq)
         ) STRICT, WITHOUT ROWID;
         CREATE TABLE seats (
             table_id BLOB    NOT NULL REFERENCES melee_tables (id) ON DELETE CASCADE,
             player   INTEGER NOT NULL CHECK (player BETWEEN 0 AND 65535),
             token    BLOB    NOT NULL CHECK (length(token) = 16),
             PRIMARY KEY (table_id, player)
         ) STRICT, WITHOUT ROWID;
         CREATE TABLE meta (
             table_id BLOB NOT NULL REFERENCES melee_tables (id) ON DELETE CASCADE,
             key      TEXT NOT NULL,
             value    BLOB NOT NULL,
             PRIMARY KEY (table_id, key)
         ) STRICT, WITHOUT ROWID;",
    )?)
}

/// Version 2: passwords at rest are Argon2id hashes. Replaces every plain-text password a
/// version-1 server left in `melee_tables.password` by its hash (values that already are hashes
/// are kept). `secure_delete` is on while it runs, so the old values are overwritten with zeros
/// in the pages it rewrites; the caller then checkpoints the WAL into the database file.
fn migrate_1_to_2(tx: &rusqlite::Transaction<'_>) -> Result<(), JournalError> {
    tx.pragma_update(None, "secure_delete", "ON")?;
    let plain: Vec<(Vec<u8>, String)> = {
        let mut stmt =
            tx.prepare("SELECT id, password FROM melee_tables WHERE password IS NOT NULL")?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        let mut plain = Vec::new();
        for row in rows {
            let (id, password): (Vec<u8>, String) = row?;
            if !crate::password::is_hash(&password) {
                plain.push((id, password));
            }
        }
        plain
    };
    if !plain.is_empty() {
        info!(
            tables = plain.len(),
            "hashing the plain-text table passwords of a version-1 journal"
        );
    }
    let mut update = tx.prepare("UPDATE melee_tables SET password = ?2 WHERE id = ?1")?;
    for (id, password) in &plain {
        let hashed = crate::password::hash(password).map_err(|error| {
            JournalError::Corrupt(format!("cannot hash a table password: {error}"))
        })?;
        update.execute(params![id, hashed])?;
    }
    tx.pragma_update(None, "secure_delete", "OFF")?;
    Ok(())
}

/// Version 3: Ascension leagues. `melee_tables.league_id` names a league game's league;
/// `leagues`, `league_members` and `ledger` hold the leagues, their members and every deck's
/// ledger (see `crate::leagues`).
fn migrate_2_to_3(tx: &rusqlite::Transaction<'_>) -> Result<(), JournalError> {
    Ok(tx.execute_batch(
        "ALTER TABLE melee_tables ADD COLUMN league_id BLOB CHECK (length(league_id) = 16);
         CREATE INDEX melee_tables_league ON melee_tables (league_id)
             WHERE league_id IS NOT NULL;
         CREATE TABLE leagues (
             id            BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
             name          TEXT    NOT NULL,
             name_key      TEXT    NOT NULL UNIQUE,
             password      TEXT,
             organiser     BLOB    NOT NULL CHECK (length(organiser) = 16),
             created_at_ms INTEGER NOT NULL CHECK (created_at_ms >= 0)
         ) STRICT, WITHOUT ROWID;
         CREATE TABLE league_members (
             league_id    BLOB    NOT NULL REFERENCES leagues (id),
             member       INTEGER NOT NULL CHECK (member >= 0),
             name         TEXT    NOT NULL,
             name_key     TEXT    NOT NULL,
             token        BLOB    NOT NULL UNIQUE CHECK (length(token) = 16),
             joined_at_ms INTEGER NOT NULL CHECK (joined_at_ms >= 0),
             PRIMARY KEY (league_id, member),
             UNIQUE (league_id, name_key)
         ) STRICT, WITHOUT ROWID;
         CREATE TABLE ledger (
             league_id BLOB    NOT NULL,
             member    INTEGER NOT NULL,
             seq       INTEGER NOT NULL CHECK (seq >= 1),
             at_ms     INTEGER NOT NULL CHECK (at_ms >= 0),
             table_id  BLOB    CHECK (length(table_id) = 16),
             entry     BLOB    NOT NULL,
             PRIMARY KEY (league_id, member, seq),
             FOREIGN KEY (league_id, member) REFERENCES league_members (league_id, member),
             UNIQUE (league_id, member, table_id)
         ) STRICT, WITHOUT ROWID;",
    )?)
}

/// Version 4: Mountain Magic's days. `server_secrets` keeps secrets made once for the server
/// (`mountain`: the secret each day's deal is drawn from); `mountain_climbs` the finished
/// climbs of each day's mountain (a `FinishedClimb` in MessagePack, one per table).
fn migrate_3_to_4(tx: &rusqlite::Transaction<'_>) -> Result<(), JournalError> {
    Ok(tx.execute_batch(
        "CREATE TABLE server_secrets (
             name  TEXT NOT NULL PRIMARY KEY,
             value BLOB NOT NULL CHECK (length(value) = 32)
         ) STRICT, WITHOUT ROWID;
         CREATE TABLE mountain_climbs (
             table_id BLOB    NOT NULL PRIMARY KEY CHECK (length(table_id) = 16),
             day      INTEGER NOT NULL CHECK (day >= 0),
             climb    BLOB    NOT NULL
         ) STRICT, WITHOUT ROWID;
         CREATE INDEX mountain_climbs_day ON mountain_climbs (day);",
    )?)
}

/// Everything that can go wrong with the journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The data directory could not be created.
    #[error("cannot create the data directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The database file could not be opened or set up.
    #[error("cannot open the journal {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The data directory or the journal in it cannot be written (a read-only directory or
    /// file, a read-only file system, …). Checked at open, so the server never starts unable to
    /// record its tables.
    #[error(
        "the data directory {dir} cannot be written ({reason}). The server writes its journal \
         {DB_FILE} there and creates {DB_FILE}-wal and {DB_FILE}-shm beside it: make the \
         directory and the files in it writable by the user running the server, or choose \
         another directory with --data-dir (GM_DATA_DIR)"
    )]
    NotWritable { dir: PathBuf, reason: String },
    /// A write to a journal found damaged at open, before [`Journal::accept_damage`].
    #[error(
        "the journal {path} is damaged (SQLite's integrity check found problems at open); \
         nothing is written to it until the damage is accepted"
    )]
    Damaged { path: PathBuf },
    /// A write to a table that could not be recovered at start: its rows are kept as they are.
    #[error("table {0} could not be recovered from the journal; its rows are kept untouched")]
    KeptUntouched(TableId),
    /// The journal was written by a newer server; it is left untouched.
    #[error(
        "the journal has schema version {found} but this server supports up to {supported}; \
         it was written by a newer server: run that version (the journal was not modified)"
    )]
    NewerSchema { found: u32, supported: u32 },
    /// `create_table` with an id that is already in the journal.
    #[error("table {0} is already in the journal")]
    TableExists(TableId),
    /// An operation on a table the journal does not have.
    #[error("table {0} is not in the journal")]
    UnknownTable(TableId),
    /// `append` to a table that is finished (a replay is never changed).
    #[error("table {0} is finished; its events cannot change")]
    TableFinished(TableId),
    /// `append` of a sequence number the table already has: events are never rewritten.
    #[error("table {table} already has event {seq}")]
    DuplicateEvent { table: TableId, seq: u64 },
    /// A number too large for SQLite's signed 64-bit integers.
    #[error("{what} {value} is too large for the journal")]
    OutOfRange { what: &'static str, value: u64 },
    /// A row that this server could not have written.
    #[error("corrupt journal row: {0}")]
    Corrupt(String),
    /// The whole batch this operation was in failed to commit (e.g. disk full or an I/O error);
    /// none of it was written.
    #[error("the journal could not commit: {0}")]
    CommitFailed(Arc<rusqlite::Error>),
    /// Any other SQLite error.
    #[error("journal database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The journal was closed (or its writer stopped) before the operation was done.
    #[error("the journal is closed")]
    Closed,
    /// The writer thread could not be started.
    #[error("cannot start the journal's writer thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The writer thread panicked.
    #[error("the journal's writer thread panicked")]
    WriterPanicked,
    /// A league operation was refused by the league's rules (nothing was written).
    #[error("{message}")]
    Refused {
        /// The error code for the client.
        code: grand_melee_protocol::ErrorCode,
        /// What exactly is wrong.
        message: String,
    },
}

/// What `PRAGMA quick_check` (and `PRAGMA integrity_check(melee_tables)`) found wrong with a
/// journal at open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The database file.
    pub path: PathBuf,
    /// The first lines the check reported (at most ten).
    pub findings: Vec<String>,
}

impl fmt::Display for Damage {
    /// The whole message for the person running the server: which file, what the check found,
    /// and what to do (restore the backup, or start anyway).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "the journal {} is damaged: SQLite's integrity checks (PRAGMA quick_check, and \
             PRAGMA integrity_check of melee_tables) found:",
            self.path.display()
        )?;
        for line in self.findings.iter().flat_map(|finding| finding.lines()) {
            writeln!(f, "  {line}")?;
        }
        f.write_str("The server did not start, and did not change the file. ")?;
        f.write_str(&damaged_journal_advice(&self.path))
    }
}

/// What to do about a damaged journal at `path`: restore the backup, or start anyway.
pub fn damaged_journal_advice(path: &Path) -> String {
    let path = path.display();
    format!(
        "To restore the journal from a backup: stop the server, copy the backup of {DB_FILE} to \
         {path}, and delete {path}-wal and {path}-shm if they are there (they belong to the \
         damaged file). To start anyway \
         with what can still be read, add --allow-damaged-journal (or set \
         GM_ALLOW_DAMAGED_JOURNAL=true): every table that cannot be read or rebuilt is then left \
         out, logged as an error and counted in /metrics (gm_tables_unrecoverable), and its rows \
         are kept untouched in the journal."
    )
}

/// A table [`Journal::unfinished_tables`] could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableTable {
    /// The table, when the damage leaves its id readable.
    pub id: Option<TableId>,
    /// What went wrong.
    pub reason: String,
}

/// Every unfinished table that could be read, and every table that could not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnfinishedTables {
    /// Oldest first, each with its record, seats, metadata and all its events.
    pub tables: Vec<StoredTable>,
    /// Tables that may be unfinished but could not be read (their rows are left as they are).
    pub unreadable: Vec<UnreadableTable>,
}

/// A handle on the journal. Cheap to clone; every clone talks to the same writer thread.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    /// Set once the writer thread runs: at open, or for a damaged journal at
    /// [`Journal::accept_damage`]. Taken while the last handle is being dropped.
    sender: OnceLock<mpsc::Sender<Msg>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// The write connection of a damaged journal, not yet set up (nothing was written).
    pending: Mutex<Option<Connection>>,
    reader: Mutex<Connection>,
    stats: Arc<JournalStats>,
    /// Tables whose rows no operation may change (see [`Journal::keep_untouched`]).
    untouchable: Arc<RwLock<HashSet<TableId>>>,
    /// [`Journal::set_commit_spacing`], in microseconds, read by the writer before each commit.
    commit_spacing_us: Arc<AtomicU64>,
    path: PathBuf,
    durability: Durability,
    damage: Option<Damage>,
    /// Each league member's one unfinished league seat: the table that holds it (one process
    /// is the whole server, so memory is enough; the tables read back from the journal take
    /// theirs again when they start).
    league_seats: dashmap::DashMap<
        (
            grand_melee_protocol::league::LeagueId,
            grand_melee_protocol::league::MemberId,
        ),
        TableId,
    >,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.inner.path)
            .field("durability", &self.inner.durability)
            .field("damaged", &self.inner.damage.is_some())
            .field("transactions", &self.transactions())
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Disconnect the channel: the writer finishes what is queued, then exits.
        drop(self.sender.take());
        let handle = self
            .writer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if handle.is_some_and(|handle| handle.join().is_err()) {
            warn!("the journal's writer thread panicked");
        }
    }
}

enum Msg {
    Op(Request),
    Close(oneshot::Sender<Result<(), JournalError>>),
}

struct Request {
    op: Op,
    /// How many rows the operation counts (tables pruned), or why it failed.
    reply: oneshot::Sender<Result<u64, JournalError>>,
}

enum Op {
    CreateTable(TableRecord),
    /// One request's events and records, all or nothing.
    Flush {
        table: TableId,
        flush: Flush,
    },
    League(leagues::LeagueWrite),
    /// Keeps `value` as the secret `name` unless the server has one by that name already.
    Secret {
        name: &'static str,
        value: [u8; 32],
    },
    DeleteTable(TableId),
    PruneReplays {
        finished_before_ms: u64,
        limit: usize,
    },
}

impl Op {
    fn events(&self) -> usize {
        match self {
            Op::Flush { flush, .. } => flush.events.len(),
            _ => 0,
        }
    }

    /// The table the operation writes to, if it writes to one that exists.
    fn existing_table(&self) -> Option<TableId> {
        match self {
            Op::Flush { table, .. } | Op::DeleteTable(table) => Some(*table),
            Op::CreateTable(_) | Op::PruneReplays { .. } | Op::League(_) | Op::Secret { .. } => {
                None
            }
        }
    }
}

impl Journal {
    /// Opens (creating if needed) the journal in `dir`: creates the directory and
    /// `dir/grand-melee.sqlite3`, checks that the directory accepts new files, checks the
    /// database (`PRAGMA quick_check`), switches it to WAL mode, checks that it takes a write
    /// transaction, migrates it to [`SCHEMA_VERSION`] and starts the writer thread.
    ///
    /// A journal from a newer server is refused untouched ([`JournalError::NewerSchema`]); one
    /// that cannot be written is refused ([`JournalError::NotWritable`]). A journal that fails
    /// the check is opened without writing anything: [`Journal::damage`] says what was found,
    /// reads work, and writes fail with [`JournalError::Damaged`] until
    /// [`Journal::accept_damage`].
    pub fn open(dir: &Path, durability: Durability) -> Result<Journal, JournalError> {
        // Messages name the files in full, wherever the server was started from.
        let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        std::fs::create_dir_all(dir).map_err(|source| JournalError::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
        check_directory_writable(dir)?;
        let path = dir.join(DB_FILE);
        let open_err = |source| JournalError::Open {
            path: path.clone(),
            source,
        };

        let mut writer = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|error| setup_error(dir, &path, error))?;
        writer.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // Room for every statement the writer runs (the default keeps 16), so that none is
        // parsed again.
        writer.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Check the version and the pages before anything writes to the file.
        let found = user_version(&writer).map_err(|error| setup_error(dir, &path, error))?;
        check_version(found)?;
        let started = Instant::now();
        let findings = quick_check(&writer).map_err(open_err)?;
        let check_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let damage = (!findings.is_empty()).then(|| Damage {
            path: path.clone(),
            findings,
        });
        let mut migrated_from = None;
        if damage.is_none() {
            migrated_from = prepare_writer(&mut writer, dir, &path, durability)?;
        }

        let reader = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|error| setup_error(dir, &path, error))?;
        reader.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        reader.set_prepared_statement_cache_capacity(STATEMENT_CACHE);

        let journal = Journal {
            inner: Arc::new(Inner {
                sender: OnceLock::new(),
                writer: Mutex::new(None),
                pending: Mutex::new(None),
                reader: Mutex::new(reader),
                stats: Arc::new(JournalStats::default()),
                untouchable: Arc::new(RwLock::new(HashSet::new())),
                commit_spacing_us: Arc::new(AtomicU64::new(micros(DEFAULT_COMMIT_SPACING))),
                path: path.clone(),
                durability,
                damage,
                league_seats: dashmap::DashMap::new(),
            }),
        };
        if let Some(damage) = &journal.inner.damage {
            error!(
                path = %path.display(),
                findings = ?damage.findings,
                check_ms,
                "the journal is damaged: opened without writing anything"
            );
            *journal
                .inner
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(writer);
        } else {
            journal.start_writer(writer)?;
            info!(
                path = %path.display(),
                %durability,
                schema = SCHEMA_VERSION,
                migrated_from = ?migrated_from,
                check_ms,
                "journal open"
            );
        }
        Ok(journal)
    }

    /// What the checks at open found wrong; `None` if the journal is sound.
    pub fn damage(&self) -> Option<&Damage> {
        self.inner.damage.as_ref()
    }

    /// Makes a journal found damaged at open writable: switches it to WAL mode, checks that it
    /// takes a write, migrates it, rebuilds the index of finished times (derived data) and
    /// starts the writer. Nothing else is repaired: tables the damage makes unreadable stay as
    /// they are (see [`Journal::unfinished_tables`] and [`Journal::keep_untouched`]). Does
    /// nothing for a sound journal or a second time. Blocking (it may migrate).
    pub fn accept_damage(&self) -> Result<(), JournalError> {
        let pending = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(mut writer) = pending else {
            return Ok(());
        };
        let path = &self.inner.path;
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        let migrated_from = prepare_writer(&mut writer, dir, path, self.inner.durability)?;
        // The index of finished times is derived from the table: rebuild it, so that a stale
        // entry does not make writes to its table fail. Best effort: if the table itself cannot
        // be read, the index stays as it is.
        match writer.execute_batch("REINDEX melee_tables_finished") {
            Ok(()) => info!("the index of finished times was rebuilt"),
            Err(error) => warn!(%error, "cannot rebuild the index of finished times"),
        }
        self.start_writer(writer)?;
        warn!(
            path = %path.display(),
            durability = %self.inner.durability,
            schema = SCHEMA_VERSION,
            migrated_from = ?migrated_from,
            "damaged journal open for writing"
        );
        Ok(())
    }

    /// While writes come together (a commit held two or more), the next commit starts no sooner
    /// than `spacing` after the last one started, and takes every write that came meanwhile;
    /// a lone write is committed at once. Zero commits whatever is waiting as soon as the last
    /// commit is done. Default [`DEFAULT_COMMIT_SPACING`]. Takes effect from the next commit.
    pub fn set_commit_spacing(&self, spacing: Duration) {
        self.inner
            .commit_spacing_us
            .store(micros(spacing), Ordering::Relaxed);
    }

    /// From now on, no operation changes these tables' rows (each fails with
    /// [`JournalError::KeptUntouched`]) and [`Journal::prune_replays`] never deletes them: for
    /// tables that could not be recovered, so that what is left of them stays for a repair.
    pub fn keep_untouched(&self, tables: impl IntoIterator<Item = TableId>) {
        self.inner
            .untouchable
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(tables);
    }

    /// Deletes every finished game that finished before `finished_before_ms` (milliseconds
    /// since the Unix epoch), with its events, seats and metadata; returns how many games were
    /// deleted. Unfinished tables and tables kept untouched are never deleted. Works through the
    /// writer in chunks, so other tables' writes go on meanwhile.
    pub async fn prune_replays(&self, finished_before_ms: u64) -> Result<u64, JournalError> {
        let mut total = 0;
        loop {
            let deleted = self
                .submit(Op::PruneReplays {
                    finished_before_ms,
                    limit: PRUNE_CHUNK,
                })
                .await?;
            total += deleted;
            if deleted < PRUNE_CHUNK as u64 {
                return Ok(total);
            }
        }
    }

    fn start_writer(&self, writer: Connection) -> Result<(), JournalError> {
        let (sender, receiver) = mpsc::channel();
        let counter = Arc::clone(&self.inner.stats);
        let untouchable = Arc::clone(&self.inner.untouchable);
        let spacing = Arc::clone(&self.inner.commit_spacing_us);
        let thread = std::thread::Builder::new()
            .name("journal-writer".into())
            .spawn(move || run_writer(writer, receiver, counter, untouchable, spacing))
            .map_err(JournalError::Thread)?;
        *self
            .inner
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(thread);
        // Only `open` and `accept_damage` (which took the pending connection) get here, once.
        let _ = self.inner.sender.set(sender);
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The durability it was opened with.
    pub fn durability(&self) -> Durability {
        self.inner.durability
    }

    /// How many transactions the writer has committed since [`Journal::open`] (each one a batch
    /// of operations, possibly from many tables).
    pub fn transactions(&self) -> u64 {
        self.inner.stats.commits()
    }

    /// The writer's figures, for `/metrics`.
    pub fn stats(&self) -> Arc<JournalStats> {
        Arc::clone(&self.inner.stats)
    }

    /// Records a new table. Fails with [`JournalError::TableExists`] if its id is taken.
    pub async fn create_table(&self, record: TableRecord) -> Result<(), JournalError> {
        self.submit(Op::CreateTable(record)).await.map(drop)
    }

    /// Writes what one request carried out — its events (encoded by the caller, numbered
    /// `first_seq`, `first_seq + 1`, …) and its seat, value and game-over records, in that order
    /// — all or nothing, in one savepoint; returns once it is durable (see [`Durability`]).
    /// Events go only to an unfinished table ([`JournalError::TableFinished`]), and a number the
    /// table already has fails the whole flush with [`JournalError::DuplicateEvent`]; numbers
    /// need not be contiguous with earlier ones (the caller numbers them). See [`TableOp`] for
    /// each record.
    pub async fn flush(&self, table: TableId, flush: Flush) -> Result<(), JournalError> {
        if flush.is_empty() {
            return Ok(());
        }
        self.submit(Op::Flush { table, flush }).await.map(drop)
    }

    /// A flush of events alone (see [`Journal::flush`]).
    pub async fn append(
        &self,
        table: TableId,
        first_seq: u64,
        events: Vec<Vec<u8>>,
    ) -> Result<(), JournalError> {
        let flush = Flush {
            first_seq,
            events,
            ops: Vec::new(),
        };
        self.flush(table, flush).await
    }

    /// A flush of one record and no events (see [`Journal::flush`]).
    async fn flush_op(&self, table: TableId, op: TableOp) -> Result<(), JournalError> {
        let flush = Flush {
            first_seq: 0,
            events: Vec::new(),
            ops: vec![op],
        };
        self.flush(table, flush).await
    }

    /// Sets (or replaces) `player`'s seat token.
    pub async fn set_seat(
        &self,
        table: TableId,
        player: u16,
        token: SeatToken,
    ) -> Result<(), JournalError> {
        self.flush_op(table, TableOp::SetSeat { player, token })
            .await
    }

    /// Removes `player`'s seat token (a kicked or departed player). Removing a seat that is not
    /// there is not an error.
    pub async fn remove_seat(&self, table: TableId, player: u16) -> Result<(), JournalError> {
        self.flush_op(table, TableOp::RemoveSeat { player }).await
    }

    /// Sets (or replaces) a small per-table value, e.g. the host or whether it is paused.
    pub async fn set_meta(
        &self,
        table: TableId,
        key: &str,
        value: Vec<u8>,
    ) -> Result<(), JournalError> {
        let key = key.to_owned();
        self.flush_op(table, TableOp::SetMeta { key, value }).await
    }

    /// Marks the game finished at `finished_at_ms`; it is kept as a replay and no longer
    /// returned by [`Journal::unfinished_tables`]. A league game's `credits` are written to the
    /// decks' ledgers in the same step, and only the first time: finishing a table that is
    /// already finished credits nothing (a recovered table finishes again).
    pub async fn finish(
        &self,
        table: TableId,
        finished_at_ms: u64,
        credits: Vec<leagues::Credit>,
    ) -> Result<(), JournalError> {
        let at_ms = finished_at_ms;
        let climb = None;
        self.flush_op(
            table,
            TableOp::Finish {
                at_ms,
                credits,
                climb,
            },
        )
        .await
    }

    /// The server's secret `name`, made from `candidate` the first time it is asked for and
    /// the same ever after.
    pub(crate) async fn secret(
        &self,
        name: &'static str,
        candidate: [u8; 32],
    ) -> Result<[u8; 32], JournalError> {
        self.submit(Op::Secret {
            name,
            value: candidate,
        })
        .await?;
        let found: Vec<u8> = self.read(|conn| {
            Ok(conn
                .prepare_cached("SELECT value FROM server_secrets WHERE name = ?1")?
                .query_row([name], |row| row.get(0))?)
        })?;
        found
            .try_into()
            .map_err(|_| JournalError::Corrupt(format!("the server secret {name} is not 32 bytes")))
    }

    /// Carries out a league write in the writer's transaction; returns what it says it returns
    /// (see [`leagues::LeagueWrite`]).
    pub(crate) async fn league_write(
        &self,
        write: leagues::LeagueWrite,
    ) -> Result<u64, JournalError> {
        self.submit(Op::League(write)).await
    }

    /// Deletes a table with everything it has (for tables abandoned before they started).
    /// Deleting a table that is not there is not an error.
    pub async fn delete_table(&self, table: TableId) -> Result<(), JournalError> {
        self.submit(Op::DeleteTable(table)).await.map(drop)
    }

    /// Lets the writer finish every operation sent before this call, checkpoints the WAL into
    /// the database file, closes it and waits for the writer thread. Operations sent afterwards
    /// through other clones fail with [`JournalError::Closed`]; reads keep working.
    pub async fn close(self) -> Result<(), JournalError> {
        let (reply, done) = oneshot::channel();
        let sent = self
            .inner
            .sender
            .get()
            .is_some_and(|sender| sender.send(Msg::Close(reply)).is_ok());
        // If the writer is already gone, someone else closed it.
        let result = if sent {
            done.await.unwrap_or(Ok(()))
        } else {
            Ok(())
        };
        let handle = self
            .inner
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // The writer replied as the last thing it does, so this join does not wait long.
        if handle.is_some_and(|handle| handle.join().is_err()) {
            return Err(JournalError::WriterPanicked);
        }
        result
    }

    async fn submit(&self, op: Op) -> Result<u64, JournalError> {
        let (reply, done) = oneshot::channel();
        let Some(sender) = self.inner.sender.get() else {
            return Err(match &self.inner.damage {
                Some(damage) => JournalError::Damaged {
                    path: damage.path.clone(),
                },
                None => JournalError::Closed,
            });
        };
        sender
            .send(Msg::Op(Request { op, reply }))
            .map_err(|_| JournalError::Closed)?;
        done.await.map_err(|_| JournalError::Closed)?
    }

    /// Every table that is not finished, with its record, seats, metadata and all its events,
    /// oldest table first; and every table that could not be read, with the reason.
    ///
    /// Each table is read on its own, so damage to one does not hide the others. The list of
    /// tables is read from the table itself (not from the index of finished times, which may no
    /// longer match it), and a table whose events, seats or metadata are in the journal but
    /// whose own row cannot be found is reported too. Fails as a whole only if the journal
    /// cannot be read at all.
    pub fn unfinished_tables(&self) -> Result<UnfinishedTables, JournalError> {
        self.read(|conn| {
            let mut unreadable = Vec::new();
            // Every table whose row was read, finished or not.
            let mut known: HashSet<TableId> = HashSet::new();
            let mut heads: Vec<TableRecord> = Vec::new();
            let mut note = |head: Result<(TableRecord, Option<u64>), JournalError>,
                            id: Option<TableId>,
                            known: &mut HashSet<TableId>,
                            unreadable: &mut Vec<UnreadableTable>| {
                match head {
                    Ok((record, finished_at_ms)) => {
                        known.insert(record.id);
                        if finished_at_ms.is_none() {
                            heads.push(record);
                        }
                    }
                    Err(error) => {
                        known.extend(id);
                        unreadable.push(UnreadableTable {
                            id,
                            reason: format!("its row in melee_tables cannot be read: {error}"),
                        });
                    }
                }
            };

            let scan = (|| -> Result<(), JournalError> {
                let mut stmt = conn.prepare(
                    "SELECT id, name, password, settings, created_at_ms, finished_at_ms, league_id
                     FROM melee_tables NOT INDEXED",
                )?;
                let mut rows = stmt.query([])?;
                while let Some(row) = rows.next()? {
                    let id = uuid_column(row, 0, "table id").ok();
                    note(table_head(row), id, &mut known, &mut unreadable);
                }
                Ok(())
            })();
            if let Err(error) = scan {
                unreadable.push(UnreadableTable {
                    id: None,
                    reason: format!(
                        "the list of tables cannot be read to its end ({error}); the tables \
                         after the damage are found only through their events, seats, metadata \
                         and index entries"
                    ),
                });
            }

            // Tables known elsewhere whose row the scan did not see: look each up by its id.
            let mut elsewhere: BTreeMap<TableId, Vec<&str>> = BTreeMap::new();
            for (source, ids) in [
                ("index", index_table_ids(conn)),
                ("events", referenced_table_ids(conn, "events")),
                ("seats", referenced_table_ids(conn, "seats")),
                ("metadata", referenced_table_ids(conn, "meta")),
            ] {
                match ids {
                    Ok(ids) => {
                        for id in ids.into_iter().filter(|id| !known.contains(id)) {
                            elsewhere.entry(id).or_default().push(source);
                        }
                    }
                    Err(error) => warn!(source, %error, "cannot list the tables in the journal"),
                }
            }
            for (id, sources) in elsewhere {
                match table_by_id(conn, id) {
                    Ok(Some(head)) => note(Ok(head), Some(id), &mut known, &mut unreadable),
                    // Only a stale index entry: there is nothing of the table to recover.
                    Ok(None) if sources == ["index"] => warn!(
                        table = %id,
                        "the index of finished times lists a table that is not in the journal \
                         (the index is damaged)"
                    ),
                    Ok(None) => unreadable.push(UnreadableTable {
                        id: Some(id),
                        reason: format!(
                            "its {} are in the journal but its row in melee_tables is lost",
                            sources
                                .iter()
                                .filter(|source| **source != "index")
                                .copied()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    }),
                    Err(error) => note(Err(error), Some(id), &mut known, &mut unreadable),
                }
            }

            heads.sort_by_key(|record| (record.created_at_ms, record.id));
            let mut tables = Vec::with_capacity(heads.len());
            for record in heads {
                let id = record.id;
                match complete_table(conn, record, None) {
                    Ok(table) => tables.push(table),
                    Err(error) => unreadable.push(UnreadableTable {
                        id: Some(id),
                        reason: format!("its seats, metadata or events cannot be read: {error}"),
                    }),
                }
            }
            Ok(UnfinishedTables { tables, unreadable })
        })
    }

    /// Every finished table, newest first.
    pub fn replays(&self) -> Result<Vec<ReplaySummary>, JournalError> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT t.id, t.name, t.created_at_ms, t.finished_at_ms,
                        (SELECT count(*) FROM events e WHERE e.table_id = t.id),
                        t.password IS NOT NULL, t.league_id
                 FROM melee_tables t WHERE t.finished_at_ms IS NOT NULL
                 ORDER BY t.finished_at_ms DESC, t.created_at_ms DESC, t.id",
            )?;
            let mut rows = stmt.query([])?;
            let mut replays = Vec::new();
            while let Some(row) = rows.next()? {
                replays.push(ReplaySummary {
                    id: uuid_column(row, 0, "table id")?,
                    name: row.get(1)?,
                    created_at_ms: u64_column(row, 2, "created_at_ms")?,
                    finished_at_ms: u64_column(row, 3, "finished_at_ms")?,
                    events: u64_column(row, 4, "event count")?,
                    password: row.get(5)?,
                    league: optional_uuid_column(row, 6)?,
                });
            }
            Ok(replays)
        })
    }

    /// One page of the finished games, newest first: at most `limit` of them after skipping
    /// `from`, and how many there are in all.
    pub fn replays_page(
        &self,
        from: u32,
        limit: u32,
    ) -> Result<(Vec<ReplaySummary>, u32), JournalError> {
        self.read(|conn| {
            let total: i64 = conn
                .prepare_cached(
                    "SELECT count(*) FROM melee_tables WHERE finished_at_ms IS NOT NULL",
                )?
                .query_row([], |row| row.get(0))?;
            let mut stmt = conn.prepare_cached(
                "SELECT t.id, t.name, t.created_at_ms, t.finished_at_ms,
                        (SELECT count(*) FROM events e WHERE e.table_id = t.id),
                        t.password IS NOT NULL, t.league_id
                 FROM melee_tables t WHERE t.finished_at_ms IS NOT NULL
                 ORDER BY t.finished_at_ms DESC, t.created_at_ms DESC, t.id
                 LIMIT ?1 OFFSET ?2",
            )?;
            let mut rows = stmt.query(params![i64::from(limit), i64::from(from)])?;
            let mut replays = Vec::new();
            while let Some(row) = rows.next()? {
                replays.push(ReplaySummary {
                    id: uuid_column(row, 0, "table id")?,
                    name: row.get(1)?,
                    created_at_ms: u64_column(row, 2, "created_at_ms")?,
                    finished_at_ms: u64_column(row, 3, "finished_at_ms")?,
                    events: u64_column(row, 4, "event count")?,
                    password: row.get(5)?,
                    league: optional_uuid_column(row, 6)?,
                });
            }
            Ok((replays, u32::try_from(total).unwrap_or(u32::MAX)))
        })
    }

    /// Events `from_seq`, `from_seq + 1`, … of a finished game, as many as fit in `max_bytes`
    /// of encoded events (at least one, if there is any); `None` if the journal has no finished
    /// game with that id.
    pub fn replay_page(
        &self,
        table: TableId,
        from_seq: u64,
        max_bytes: usize,
    ) -> Result<Option<ReplayPage>, JournalError> {
        self.read(|conn| {
            let head = {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, name, password, settings, created_at_ms, finished_at_ms, league_id
                     FROM melee_tables WHERE id = ?1 AND finished_at_ms IS NOT NULL",
                )?;
                let mut rows = stmt.query([table.as_bytes().as_slice()])?;
                match rows.next()? {
                    Some(row) => table_head(row)?,
                    None => return Ok(None),
                }
            };
            let total: i64 = conn
                .prepare_cached("SELECT count(*) FROM events WHERE table_id = ?1")?
                .query_row([table.as_bytes().as_slice()], |row| row.get(0))?;
            let mut stmt = conn.prepare_cached(
                "SELECT seq, data FROM events WHERE table_id = ?1 AND seq >= ?2 ORDER BY seq",
            )?;
            let from = i64::try_from(from_seq).unwrap_or(i64::MAX);
            let mut rows = stmt.query(params![table.as_bytes().as_slice(), from])?;
            let (mut events, mut bytes) = (Vec::new(), 0usize);
            while let Some(row) = rows.next()? {
                let data: Vec<u8> = row.get(1)?;
                if !events.is_empty() && bytes + data.len() > max_bytes {
                    break;
                }
                bytes += data.len();
                events.push((u64_column(row, 0, "event seq")?, data));
            }
            Ok(Some(ReplayPage {
                record: head.0,
                events,
                total_events: u64::try_from(total).unwrap_or(0),
            }))
        })
    }

    /// Events `from_seq`, `from_seq + 1`, … of any table the journal holds (open or finished),
    /// at most `limit` of them and as many as fit in `max_bytes` of encoded events (at least one,
    /// if there is any), and whether more follow.
    pub fn events_page(
        &self,
        table: TableId,
        from_seq: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<(Vec<EncodedEvent>, bool), JournalError> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT seq, data FROM events WHERE table_id = ?1 AND seq >= ?2 ORDER BY seq
                 LIMIT ?3",
            )?;
            let from = i64::try_from(from_seq).unwrap_or(i64::MAX);
            // One more than wanted: whether it exists says if more follow.
            let wanted = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
            let mut rows = stmt.query(params![table.as_bytes().as_slice(), from, wanted])?;
            let (mut events, mut bytes) = (Vec::new(), 0usize);
            while let Some(row) = rows.next()? {
                let data: Vec<u8> = row.get(1)?;
                if events.len() >= limit || (!events.is_empty() && bytes + data.len() > max_bytes) {
                    return Ok((events, true));
                }
                bytes += data.len();
                events.push((u64_column(row, 0, "event seq")?, data));
            }
            Ok((events, false))
        })
    }

    /// Whether `token` is a seat token of `table` (seats given up or kicked no longer count).
    pub fn has_seat_token(&self, table: TableId, token: SeatToken) -> Result<bool, JournalError> {
        self.read(|conn| {
            Ok(conn
                .prepare_cached("SELECT 1 FROM seats WHERE table_id = ?1 AND token = ?2")?
                .exists(params![
                    table.as_bytes().as_slice(),
                    token.as_bytes().as_slice()
                ])?)
        })
    }

    /// A table's events in order. Fails with [`JournalError::UnknownTable`] if the journal does
    /// not have the table.
    pub fn events(&self, table: TableId) -> Result<Vec<(u64, Vec<u8>)>, JournalError> {
        self.read(|conn| {
            let exists = conn
                .prepare_cached("SELECT 1 FROM melee_tables WHERE id = ?1")?
                .exists([table.as_bytes().as_slice()])?;
            if !exists {
                return Err(JournalError::UnknownTable(table));
            }
            load_events(conn, table)
        })
    }

    /// One table, finished or not, with everything it has; `None` if the journal does not have
    /// it.
    pub fn table(&self, table: TableId) -> Result<Option<StoredTable>, JournalError> {
        self.read(|conn| {
            let Some((record, finished_at_ms)) = table_by_id(conn, table)? else {
                return Ok(None);
            };
            complete_table(conn, record, finished_at_ms).map(Some)
        })
    }

    /// Runs `f` in one read transaction on the read-only connection.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, JournalError>,
    ) -> Result<T, JournalError> {
        let mut conn = self
            .inner
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let tx = conn.transaction()?;
        // Dropping the transaction ends it (a rollback, which for reads changes nothing).
        f(&tx)
    }
}

// ---------------------------------------------------------------------------------------------
// Opening and migrating

/// Fails with [`JournalError::NotWritable`] unless a new file can be created and written in
/// `dir` (SQLite creates the `-wal` and `-shm` files there).
fn check_directory_writable(dir: &Path) -> Result<(), JournalError> {
    let probe = dir.join(format!("{DB_FILE}-write-check"));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .and_then(|mut file| file.write_all(b"grand-melee write check\n"));
    let removed = std::fs::remove_file(&probe);
    match (written, removed) {
        (Err(error), _) => Err(JournalError::NotWritable {
            dir: dir.to_owned(),
            reason: format!("cannot create a file in it: {error}"),
        }),
        (Ok(()), Err(error)) => Err(JournalError::NotWritable {
            dir: dir.to_owned(),
            reason: format!("cannot remove a file from it: {error}"),
        }),
        (Ok(()), Ok(())) => Ok(()),
    }
}

/// An error while opening or setting up the write connection: [`JournalError::NotWritable`] if
/// SQLite says the file or directory cannot be written, [`JournalError::Open`] otherwise.
fn setup_error(dir: &Path, path: &Path, error: rusqlite::Error) -> JournalError {
    match error.sqlite_error_code() {
        Some(
            rusqlite::ErrorCode::ReadOnly
            | rusqlite::ErrorCode::CannotOpen
            | rusqlite::ErrorCode::PermissionDenied,
        ) => JournalError::NotWritable {
            dir: dir.to_owned(),
            reason: format!("{}: {error}", path.display()),
        },
        _ => JournalError::Open {
            path: path.to_owned(),
            source: error,
        },
    }
}

/// `PRAGMA quick_check`, and `PRAGMA integrity_check(melee_tables)` for what the quick check
/// leaves out there: whether the index of finished times matches its table (a stale entry there
/// could hide a live table, and makes the table's end fail to write). Cheap: that table has one
/// small row per table. Empty if the database is sound, else the first lines they reported. A
/// database too damaged for the check to run reports the error as its finding; a file that is
/// not a database at all is an error.
fn quick_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let lines = |sql: &str| -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([], |row| row.get::<_, String>(0))?;
        let lines = rows.collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(if lines.len() == 1 && lines[0] == "ok" {
            Vec::new()
        } else if lines.is_empty() {
            vec!["the check reported nothing".to_owned()]
        } else {
            lines
        })
    };
    let checked = (|| -> rusqlite::Result<Vec<String>> {
        let mut findings = lines(&format!("PRAGMA quick_check({QUICK_CHECK_LINES})"))?;
        let has_tables = conn
            .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'melee_tables'")?
            .exists([])?;
        if has_tables {
            for line in lines("PRAGMA integrity_check(melee_tables)")? {
                if !findings.contains(&line) {
                    findings.push(line);
                }
            }
        }
        findings.truncate(QUICK_CHECK_LINES);
        Ok(findings)
    })();
    match checked {
        Err(error) if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
            Ok(vec![error.to_string()])
        }
        checked => checked,
    }
}

/// Sets up the write connection of a journal that passed (or whose damage was accepted): WAL
/// mode, durability, foreign keys, a real write transaction (so that a journal that cannot be
/// written is refused now, not at the first move of a game), then the migrations. Returns the
/// version it migrated from, if it did.
fn prepare_writer(
    conn: &mut Connection,
    dir: &Path,
    path: &Path,
    durability: Durability,
) -> Result<Option<u32>, JournalError> {
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(|error| setup_error(dir, path, error))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(JournalError::Corrupt(format!(
            "{} could not be switched to WAL mode (journal_mode is {mode})",
            path.display()
        )));
    }
    conn.pragma_update(None, "synchronous", durability.synchronous_pragma())
        .map_err(|error| setup_error(dir, path, error))?;
    conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_PAGES)
        .map_err(|error| setup_error(dir, path, error))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(|error| setup_error(dir, path, error))?;
    check_writable(conn, dir, path)?;
    let migrated_from = migrate(conn)?;
    if migrated_from.is_some_and(|from| from >= 1) {
        // Whatever the migration replaced (plain-text passwords) leaves the WAL and the old
        // pages of the database file now.
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|error| setup_error(dir, path, error))?;
    }
    Ok(migrated_from)
}

/// Fails with [`JournalError::NotWritable`] unless the database takes a write transaction that
/// changes a page (it rewrites `user_version` with its own value) and commits it.
fn check_writable(conn: &mut Connection, dir: &Path, path: &Path) -> Result<(), JournalError> {
    let not_writable = |error: rusqlite::Error| JournalError::NotWritable {
        dir: dir.to_owned(),
        reason: format!("{} does not take a write: {error}", path.display()),
    };
    if conn
        .is_readonly(rusqlite::MAIN_DB)
        .map_err(|error| setup_error(dir, path, error))?
    {
        return Err(JournalError::NotWritable {
            dir: dir.to_owned(),
            reason: format!("SQLite opened {} read-only", path.display()),
        });
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(not_writable)?;
    let version = user_version(&tx).map_err(not_writable)?;
    tx.pragma_update(None, "user_version", version)
        .map_err(not_writable)?;
    tx.commit().map_err(not_writable)
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

fn check_version(found: i64) -> Result<u32, JournalError> {
    let found = u32::try_from(found).map_err(|_| {
        JournalError::Corrupt(format!("the journal's schema version {found} is negative"))
    })?;
    if found > SCHEMA_VERSION {
        return Err(JournalError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(found)
}

/// Migrates to [`SCHEMA_VERSION`] in one transaction; returns the version it started from if it
/// had to migrate.
fn migrate(conn: &mut Connection) -> Result<Option<u32>, JournalError> {
    let found = check_version(user_version(conn)?)?;
    if found == SCHEMA_VERSION {
        return Ok(None);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have migrated it meanwhile: read again under the write lock.
    let from = check_version(user_version(&tx)?)?;
    for (version, step) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        debug!(from = version, to = version + 1, "migrating the journal");
        step(&tx)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    info!(from, to = SCHEMA_VERSION, "journal migrated");
    Ok(Some(from))
}

// ---------------------------------------------------------------------------------------------
// The writer

fn run_writer(
    mut conn: Connection,
    receiver: mpsc::Receiver<Msg>,
    stats: Arc<JournalStats>,
    untouchable: Arc<RwLock<HashSet<TableId>>>,
    spacing_us: Arc<AtomicU64>,
) {
    let mut close_reply = None;
    let mut batch = Vec::new();
    let mut pacer = Pacer::default();
    while let Ok(first) = receiver.recv() {
        match first {
            Msg::Op(request) => batch.push(request),
            Msg::Close(reply) => {
                close_reply = Some(reply);
                break;
            }
        }
        pacer.spacing = Duration::from_micros(spacing_us.load(Ordering::Relaxed));
        // Whatever is waiting, then (while the writer is busy) whatever comes until the pacer's
        // time: one commit for all of it. The writer sleeps through the hold instead of waiting
        // on the channel, so what comes meanwhile wakes nobody (a wake per write would cost
        // both threads a system call).
        if let Some(until) = pacer.hold_until(Instant::now()) {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
        }
        while batch.len() < MAX_BATCH {
            match receiver.try_recv().ok() {
                Some(Msg::Op(request)) => batch.push(request),
                Some(Msg::Close(reply)) => {
                    close_reply = Some(reply);
                    break;
                }
                None => break,
            }
        }
        let (started, ops) = (Instant::now(), batch.len());
        write_batch(&mut conn, std::mem::take(&mut batch), &stats, &untouchable);
        pacer.committed(started, ops);
        if close_reply.is_some() {
            break;
        }
    }
    // Whatever is still queued (sent after a close) is dropped: its senders see `Closed`.
    drop(receiver);

    if let Err(error) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
        warn!(%error, "journal checkpoint at close failed");
    }
    let result = conn.close().map_err(|(_, error)| {
        warn!(%error, "closing the journal failed");
        JournalError::Sqlite(error)
    });
    debug!("journal writer stopped");
    if let Some(reply) = close_reply {
        let _ = reply.send(result);
    }
}

/// When the writer commits: at once while writes come one at a time, and at most once per
/// `spacing` while they come together.
///
/// Each commit costs about the same whatever it holds (its `fsync` and the kernel's side of it,
/// about 110 µs of CPU on the reference machine), so under load fewer, larger commits are most
/// of the journal's cost saved. A lone write (a quiet server, one player's request after
/// another) is committed as soon as it arrives. Once a commit held two or more writes, the
/// writer is busy: each next commit waits until `spacing` after the last one started, taking
/// everything that comes meanwhile, until two commits in a row held one write each.
#[derive(Debug, Default)]
struct Pacer {
    spacing: Duration,
    /// When the last commit started.
    last: Option<Instant>,
    /// Lone commits still to come before the writer stops waiting: 2 after a shared commit.
    busy: u8,
}

impl Pacer {
    /// Lone commits in a row after which the writer commits at once again.
    const CALM_AFTER: u8 = 2;

    /// With writes ready at `now`: `None` to commit at once, or the moment to gather until.
    fn hold_until(&self, now: Instant) -> Option<Instant> {
        let until = self.last? + self.spacing;
        (self.busy > 0 && until > now).then_some(until)
    }

    fn committed(&mut self, started: Instant, ops: usize) {
        self.last = Some(started);
        self.busy = if ops >= 2 {
            Self::CALM_AFTER
        } else {
            self.busy.saturating_sub(1)
        };
    }
}

/// Runs every request of `batch` in one transaction, each in a savepoint of its own, commits,
/// then answers every request.
fn write_batch(
    conn: &mut Connection,
    batch: Vec<Request>,
    stats: &JournalStats,
    untouchable: &RwLock<HashSet<TableId>>,
) {
    let started = Instant::now();
    let ops = batch.len();
    let events: usize = batch.iter().map(|request| request.op.events()).sum();
    let mut results: Vec<Result<u64, JournalError>> = Vec::with_capacity(ops);
    let untouchable = untouchable.read().unwrap_or_else(PoisonError::into_inner);

    // The transaction and savepoint statements are prepared once and kept (`prepare_cached`):
    // `Connection::transaction` and `savepoint` parse their SQL again on every call, four
    // parses per commit for the one writer thread.
    let outcome = (|| -> rusqlite::Result<()> {
        run_cached(conn, "BEGIN IMMEDIATE")?;
        let body = (|| -> rusqlite::Result<()> {
            for request in &batch {
                if let Some(table) = request
                    .op
                    .existing_table()
                    .filter(|table| untouchable.contains(table))
                {
                    results.push(Err(JournalError::KeptUntouched(table)));
                    continue;
                }
                run_cached(conn, "SAVEPOINT op")?;
                match apply(conn, &request.op, &untouchable) {
                    Ok(count) => {
                        run_cached(conn, "RELEASE op")?;
                        results.push(Ok(count));
                    }
                    Err(error) => {
                        run_cached(conn, "ROLLBACK TO op")?;
                        run_cached(conn, "RELEASE op")?;
                        debug!(%error, "journal operation failed");
                        results.push(Err(error));
                    }
                }
            }
            run_cached(conn, "COMMIT")
        })();
        if body.is_err() && !conn.is_autocommit() {
            // Nothing of the batch is written; the error reported is the first one.
            let _ = run_cached(conn, "ROLLBACK");
        }
        body
    })();
    drop(untouchable);

    match outcome {
        Ok(()) => {
            stats.observe_commit(started.elapsed(), ops);
            let failed = results.iter().filter(|result| result.is_err()).count();
            debug!(
                ops,
                events,
                failed,
                elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
                "journal batch committed"
            );
        }
        Err(error) => {
            warn!(%error, ops, events, "journal batch failed; nothing in it was written");
            let error = Arc::new(error);
            results.truncate(0);
            results.resize_with(ops, || Err(JournalError::CommitFailed(Arc::clone(&error))));
        }
    }

    for (request, result) in batch.into_iter().zip(results) {
        // The caller may have stopped waiting; that is fine.
        let _ = request.reply.send(result);
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// Runs a statement that returns no rows, prepared once per connection.
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

/// Runs one operation; returns how many tables it deleted (for pruning; 0 otherwise).
fn apply(conn: &Connection, op: &Op, untouchable: &HashSet<TableId>) -> Result<u64, JournalError> {
    match op {
        Op::CreateTable(record) => {
            let created = to_i64(record.created_at_ms, "created_at_ms")?;
            conn.prepare_cached(
                "INSERT INTO melee_tables (id, name, password, settings, created_at_ms, league_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                record.id.as_bytes().as_slice(),
                record.name,
                record.password,
                record.settings,
                created,
                record.league.as_ref().map(|l| l.as_bytes().to_vec())
            ])
            .map_err(|error| match constraint(&error) {
                Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => JournalError::TableExists(record.id),
                _ => JournalError::Sqlite(error),
            })?;
        }
        Op::Flush { table, flush } => {
            if !flush.events.is_empty() {
                append_events(conn, *table, flush.first_seq, &flush.events)?;
            }
            for op in &flush.ops {
                apply_table_op(conn, *table, op)?;
            }
        }
        Op::League(write) => return leagues::apply(conn, write),
        Op::Secret { name, value } => {
            conn.prepare_cached(
                "INSERT INTO server_secrets (name, value) VALUES (?1, ?2)
                 ON CONFLICT (name) DO NOTHING",
            )?
            .execute(params![name, value.as_slice()])?;
        }
        Op::DeleteTable(table) => {
            let id = table.as_bytes().as_slice();
            conn.prepare_cached("DELETE FROM events WHERE table_id = ?1")?
                .execute([id])?;
            conn.prepare_cached("DELETE FROM seats WHERE table_id = ?1")?
                .execute([id])?;
            conn.prepare_cached("DELETE FROM meta WHERE table_id = ?1")?
                .execute([id])?;
            conn.prepare_cached("DELETE FROM melee_tables WHERE id = ?1")?
                .execute([id])?;
        }
        Op::PruneReplays {
            finished_before_ms,
            limit,
        } => {
            // Oldest first; tables kept untouched are skipped (and do not use up the chunk).
            let before = i64::try_from(*finished_before_ms).unwrap_or(i64::MAX);
            let wanted = limit.saturating_add(untouchable.len());
            let ids: Vec<Vec<u8>> = conn
                .prepare_cached(
                    "SELECT id FROM melee_tables
                     WHERE finished_at_ms IS NOT NULL AND finished_at_ms < ?1
                     ORDER BY finished_at_ms, id LIMIT ?2",
                )?
                .query_map(
                    params![before, i64::try_from(wanted).unwrap_or(i64::MAX)],
                    |row| row.get(0),
                )?
                .collect::<rusqlite::Result<_>>()?;
            let mut delete = conn.prepare_cached("DELETE FROM melee_tables WHERE id = ?1")?;
            let mut deleted = 0;
            for id in ids {
                if TableId::from_slice(&id).is_ok_and(|id| untouchable.contains(&id)) {
                    continue;
                }
                if deleted == *limit as u64 {
                    break;
                }
                // Its events, seats and metadata go with it (ON DELETE CASCADE).
                deleted += delete.execute([&id])? as u64;
            }
            return Ok(deleted);
        }
    }
    Ok(0)
}

/// Inserts a flush's events (see [`Journal::flush`]).
fn append_events(
    conn: &Connection,
    table: TableId,
    first_seq: u64,
    events: &[Vec<u8>],
) -> Result<(), JournalError> {
    let finished: Option<Option<i64>> = conn
        .prepare_cached("SELECT finished_at_ms FROM melee_tables WHERE id = ?1")?
        .query_row([table.as_bytes().as_slice()], |row| row.get(0))
        .optional()?;
    match finished {
        None => return Err(JournalError::UnknownTable(table)),
        Some(Some(_)) => return Err(JournalError::TableFinished(table)),
        Some(None) => {}
    }
    let mut insert =
        conn.prepare_cached("INSERT INTO events (table_id, seq, data) VALUES (?1, ?2, ?3)")?;
    let mut seq = first_seq;
    for (index, data) in events.iter().enumerate() {
        if index > 0 {
            seq = seq.checked_add(1).ok_or(JournalError::OutOfRange {
                what: "event seq",
                value: u64::MAX,
            })?;
        }
        insert
            .execute(params![
                table.as_bytes().as_slice(),
                to_i64(seq, "event seq")?,
                data
            ])
            .map_err(|error| match constraint(&error) {
                Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
                    JournalError::DuplicateEvent { table, seq }
                }
                _ => JournalError::Sqlite(error),
            })?;
    }
    Ok(())
}

/// Writes one of a flush's records (see [`TableOp`]).
fn apply_table_op(conn: &Connection, table: TableId, op: &TableOp) -> Result<(), JournalError> {
    match op {
        TableOp::SetSeat { player, token } => {
            conn.prepare_cached(
                "INSERT INTO seats (table_id, player, token) VALUES (?1, ?2, ?3)
                 ON CONFLICT (table_id, player) DO UPDATE SET token = excluded.token",
            )?
            .execute(params![
                table.as_bytes().as_slice(),
                player,
                token.as_bytes().as_slice()
            ])
            .map_err(|error| unknown_table_on_foreign_key(error, table))?;
        }
        TableOp::RemoveSeat { player } => {
            conn.prepare_cached("DELETE FROM seats WHERE table_id = ?1 AND player = ?2")?
                .execute(params![table.as_bytes().as_slice(), player])?;
        }
        TableOp::SetMeta { key, value } => {
            conn.prepare_cached(
                "INSERT INTO meta (table_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (table_id, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![table.as_bytes().as_slice(), key, value])
            .map_err(|error| unknown_table_on_foreign_key(error, table))?;
        }
        TableOp::Finish {
            at_ms: finished_at_ms,
            credits,
            climb,
        } => {
            let exists: Option<Option<i64>> = conn
                .prepare_cached("SELECT finished_at_ms FROM melee_tables WHERE id = ?1")?
                .query_row([table.as_bytes().as_slice()], |row| row.get(0))
                .optional()?;
            match exists {
                None => return Err(JournalError::UnknownTable(table)),
                // Finished before (a recovered table finishes again): its credits are in.
                Some(Some(_)) => {}
                Some(None) => {
                    conn.prepare_cached(
                        "UPDATE melee_tables SET finished_at_ms = ?2 WHERE id = ?1",
                    )?
                    .execute(params![
                        table.as_bytes().as_slice(),
                        to_i64(*finished_at_ms, "finished_at_ms")?
                    ])?;
                    leagues::credit(conn, table, *finished_at_ms, credits)?;
                    if let Some(climb) = climb {
                        let bytes = rmp_serde::to_vec_named(climb).map_err(|error| {
                            JournalError::Corrupt(format!("a climb that does not encode: {error}"))
                        })?;
                        conn.prepare_cached(
                            "INSERT INTO mountain_climbs (table_id, day, climb) VALUES (?1, ?2, ?3)
                             ON CONFLICT (table_id) DO NOTHING",
                        )?
                        .execute(params![
                            table.as_bytes().as_slice(),
                            climb.day,
                            bytes
                        ])?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The extended result code of a constraint violation.
fn constraint(error: &rusqlite::Error) -> Option<i32> {
    match error {
        rusqlite::Error::SqliteFailure(error, _)
            if error.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            Some(error.extended_code)
        }
        _ => None,
    }
}

fn unknown_table_on_foreign_key(error: rusqlite::Error, table: TableId) -> JournalError {
    match constraint(&error) {
        Some(ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => JournalError::UnknownTable(table),
        _ => JournalError::Sqlite(error),
    }
}

fn to_i64(value: u64, what: &'static str) -> Result<i64, JournalError> {
    i64::try_from(value).map_err(|_| JournalError::OutOfRange { what, value })
}

// ---------------------------------------------------------------------------------------------
// Reading rows

fn uuid_column<T: From<Uuid>>(
    row: &rusqlite::Row<'_>,
    index: usize,
    what: &str,
) -> Result<T, JournalError> {
    let value = row.get_ref(index)?;
    let bytes = value
        .as_blob()
        .map_err(|_| JournalError::Corrupt(format!("{what} is not a blob")))?;
    Uuid::from_slice(bytes)
        .map(T::from)
        .map_err(|_| JournalError::Corrupt(format!("{what} is {} bytes, not 16", bytes.len())))
}

fn u64_column(row: &rusqlite::Row<'_>, index: usize, what: &str) -> Result<u64, JournalError> {
    let value: i64 = row.get(index)?;
    u64::try_from(value).map_err(|_| JournalError::Corrupt(format!("{what} is {value}")))
}

fn optional_u64_column(
    row: &rusqlite::Row<'_>,
    index: usize,
    what: &str,
) -> Result<Option<u64>, JournalError> {
    let value: Option<i64> = row.get(index)?;
    value
        .map(|value| {
            u64::try_from(value).map_err(|_| JournalError::Corrupt(format!("{what} is {value}")))
        })
        .transpose()
}

/// An optional uuid column.
pub(crate) fn optional_uuid_column<T: From<Uuid>>(
    row: &rusqlite::Row<'_>,
    index: usize,
) -> Result<Option<T>, JournalError> {
    let value: Option<Vec<u8>> = row.get(index)?;
    value
        .map(|v| {
            Uuid::from_slice(&v)
                .map(T::from)
                .map_err(|_| JournalError::Corrupt("a uuid is not 16 bytes".into()))
        })
        .transpose()
}

/// A row of `SELECT id, name, password, settings, created_at_ms, finished_at_ms, league_id`.
fn table_head(row: &rusqlite::Row<'_>) -> Result<(TableRecord, Option<u64>), JournalError> {
    let record = TableRecord {
        id: uuid_column(row, 0, "table id")?,
        name: row.get(1)?,
        password: row.get(2)?,
        settings: row.get(3)?,
        created_at_ms: u64_column(row, 4, "created_at_ms")?,
        league: optional_uuid_column(row, 6)?,
    };
    Ok((record, optional_u64_column(row, 5, "finished_at_ms")?))
}

/// One table's row by its id (a lookup by key, not a scan).
fn table_by_id(
    conn: &Connection,
    id: TableId,
) -> Result<Option<(TableRecord, Option<u64>)>, JournalError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, name, password, settings, created_at_ms, finished_at_ms, league_id
         FROM melee_tables WHERE id = ?1",
    )?;
    let mut rows = stmt.query([id.as_bytes().as_slice()])?;
    match rows.next()? {
        Some(row) => table_head(row).map(Some),
        None => Ok(None),
    }
}

/// The table ids in the index of finished times.
fn index_table_ids(conn: &Connection) -> Result<Vec<TableId>, JournalError> {
    let mut stmt = conn.prepare("SELECT id FROM melee_tables INDEXED BY melee_tables_finished")?;
    let mut rows = stmt.query([])?;
    let mut ids = Vec::new();
    while let Some(row) = rows.next()? {
        if let Ok(id) = uuid_column(row, 0, "table id") {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// The distinct table ids of `events`, `seats` or `meta`: one lookup per table (each jumps past
/// the rows of the table before), not a scan of every row.
fn referenced_table_ids(conn: &Connection, source: &str) -> Result<Vec<TableId>, JournalError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT table_id FROM {source} WHERE table_id > ?1 ORDER BY table_id LIMIT 1"
    ))?;
    let mut ids = Vec::new();
    // The empty blob sorts before every other blob.
    let mut after: Vec<u8> = Vec::new();
    while let Some(id) = stmt
        .query_row([&after], |row| row.get::<_, Vec<u8>>(0))
        .optional()?
    {
        if let Ok(uuid) = TableId::from_slice(&id) {
            ids.push(uuid);
        }
        after = id;
    }
    Ok(ids)
}

fn complete_table(
    conn: &Connection,
    record: TableRecord,
    finished_at_ms: Option<u64>,
) -> Result<StoredTable, JournalError> {
    let id = record.id;
    let mut seats = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT player, token FROM seats WHERE table_id = ?1 ORDER BY player",
        )?;
        let mut rows = stmt.query([id.as_bytes().as_slice()])?;
        while let Some(row) = rows.next()? {
            let player: i64 = row.get(0)?;
            let player = u16::try_from(player)
                .map_err(|_| JournalError::Corrupt(format!("seat number {player}")))?;
            seats.push((player, uuid_column(row, 1, "seat token")?));
        }
    }
    let mut meta = Vec::new();
    {
        let mut stmt =
            conn.prepare_cached("SELECT key, value FROM meta WHERE table_id = ?1 ORDER BY key")?;
        let mut rows = stmt.query([id.as_bytes().as_slice()])?;
        while let Some(row) = rows.next()? {
            meta.push((row.get(0)?, row.get(1)?));
        }
    }
    let events = load_events(conn, id)?;
    Ok(StoredTable {
        record,
        seats,
        meta,
        events,
        finished_at_ms,
    })
}

fn load_events(conn: &Connection, table: TableId) -> Result<Vec<(u64, Vec<u8>)>, JournalError> {
    let mut stmt =
        conn.prepare_cached("SELECT seq, data FROM events WHERE table_id = ?1 ORDER BY seq")?;
    let mut rows = stmt.query([table.as_bytes().as_slice()])?;
    let mut events = Vec::new();
    while let Some(row) = rows.next()? {
        events.push((u64_column(row, 0, "event seq")?, row.get(1)?));
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn handles_and_errors_can_cross_threads() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<Journal>();
        send_sync::<JournalError>();
    }

    #[test]
    fn durability_parses_and_displays() {
        for durability in [Durability::Full, Durability::Normal] {
            assert_eq!(durability.to_string().parse::<Durability>(), Ok(durability));
        }
        assert_eq!("FULL".parse::<Durability>(), Ok(Durability::Full));
        assert!("fast".parse::<Durability>().is_err());
        assert_eq!(Durability::default(), Durability::Full);
    }

    /// The writer copies the WAL into the database file every `CHECKPOINT_PAGES` pages, not
    /// at SQLite's default of 1,000.
    #[test]
    fn the_writer_checkpoints_at_its_own_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let mut conn = Connection::open(&path).unwrap();
        let default: i64 = conn
            .query_row("PRAGMA wal_autocheckpoint", [], |row| row.get(0))
            .unwrap();
        assert_eq!(default, 1000);
        prepare_writer(&mut conn, dir.path(), &path, Durability::Full).unwrap();
        let set: i64 = conn
            .query_row("PRAGMA wal_autocheckpoint", [], |row| row.get(0))
            .unwrap();
        assert_eq!(set, CHECKPOINT_PAGES);
    }

    /// One batch, one transaction: an operation that fails is rolled back alone (its own
    /// savepoint), and the operations before and after it are written.
    #[test]
    fn a_failing_operation_in_a_batch_fails_alone() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        let table = TableId::new_random();
        let record = TableRecord {
            id: table,
            name: "t".into(),
            password: None,
            settings: vec![1],
            created_at_ms: 1,
            league: None,
        };
        let flush = |first_seq: u64, events: &[&[u8]]| Op::Flush {
            table,
            flush: Flush {
                first_seq,
                events: events.iter().map(|data| data.to_vec()).collect(),
                ops: Vec::new(),
            },
        };
        let ops = vec![
            Op::CreateTable(record),
            flush(1, &[b"first"]),
            flush(3, &[b"third"]),
            // Its first event (seq 2) is new, its second (seq 3) is taken: neither is kept.
            flush(2, &[b"new", b"taken"]),
            flush(4, &[b"fourth"]),
        ];
        let (batch, mut replies): (Vec<_>, Vec<_>) = ops
            .into_iter()
            .map(|op| {
                let (reply, done) = oneshot::channel();
                (Request { op, reply }, done)
            })
            .unzip();
        let stats = JournalStats::default();
        write_batch(&mut conn, batch, &stats, &RwLock::new(HashSet::new()));
        let results: Vec<_> = replies
            .iter_mut()
            .map(|done| done.try_recv().unwrap())
            .collect();
        assert!(results[..3].iter().all(Result::is_ok) && results[4].is_ok());
        assert!(
            matches!(results[3], Err(JournalError::DuplicateEvent { seq: 3, .. })),
            "{:?}",
            results[3]
        );
        assert_eq!(stats.commits(), 1);
        let rows: Vec<(i64, Vec<u8>)> = conn
            .prepare("SELECT seq, data FROM events ORDER BY seq")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let rows: Vec<(i64, &[u8])> = rows.iter().map(|(seq, data)| (*seq, &data[..])).collect();
        assert_eq!(
            rows,
            vec![(1, &b"first"[..]), (3, &b"third"[..]), (4, &b"fourth"[..])]
        );
        assert!(conn.is_autocommit(), "the transaction is closed");
    }

    #[test]
    fn the_pacer_commits_lone_writes_at_once_and_spaces_shared_ones() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let mut pacer = Pacer {
            spacing: ms(3),
            ..Pacer::default()
        };
        // Nothing committed yet, then commits of one write: the next commits at once.
        assert_eq!(pacer.hold_until(start), None);
        pacer.committed(start, 1);
        assert_eq!(pacer.hold_until(start + ms(1)), None);
        // A commit of two: the next waits until 3 ms after it started, and no longer.
        pacer.committed(start + ms(10), 2);
        assert_eq!(pacer.hold_until(start + ms(11)), Some(start + ms(13)));
        assert_eq!(pacer.hold_until(start + ms(13)), None);
        assert_eq!(pacer.hold_until(start + ms(20)), None);
        // One lone commit after a shared one: still busy.
        pacer.committed(start + ms(20), 1);
        assert_eq!(pacer.hold_until(start + ms(21)), Some(start + ms(23)));
        // A second lone commit in a row: calm again, commits at once.
        pacer.committed(start + ms(23), 1);
        assert_eq!(pacer.hold_until(start + ms(24)), None);
        // A shared commit in between starts the count again.
        pacer.committed(start + ms(30), 3);
        pacer.committed(start + ms(33), 1);
        pacer.committed(start + ms(36), 2);
        pacer.committed(start + ms(39), 1);
        assert_eq!(pacer.hold_until(start + ms(40)), Some(start + ms(42)));
        // Spacing zero never waits.
        pacer.spacing = Duration::ZERO;
        pacer.committed(start + ms(50), 50);
        assert_eq!(pacer.hold_until(start + ms(50)), None);
    }

    /// Once a commit held two writes, the next commit waits for the spacing and takes every
    /// write that came meanwhile.
    #[test]
    fn a_busy_writer_gathers_the_next_writes_into_one_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let mut conn = Connection::open(&path).unwrap();
        prepare_writer(&mut conn, dir.path(), &path, Durability::Normal).unwrap();
        migrate(&mut conn).unwrap();
        let (sender, receiver) = mpsc::channel();
        let stats = Arc::new(JournalStats::default());
        let send = |name: &'static str| {
            let (reply, done) = oneshot::channel();
            let op = Op::Secret {
                name,
                value: [7; 32],
            };
            sender.send(Msg::Op(Request { op, reply })).unwrap();
            done
        };
        // Two writes waiting when the writer starts: one commit of two.
        let first = [send("a"), send("b")];
        let started = Instant::now();
        let writer = std::thread::spawn({
            let stats = Arc::clone(&stats);
            // Long enough that three sends in a row always fall inside it.
            let spacing = Arc::new(AtomicU64::new(micros(Duration::from_millis(500))));
            move || run_writer(conn, receiver, stats, Arc::default(), spacing)
        });
        for done in first {
            done.blocking_recv().unwrap().unwrap();
        }
        assert_eq!(stats.commits(), 1);
        let next = [send("c"), send("d"), send("e")];
        for done in next {
            done.blocking_recv().unwrap().unwrap();
        }
        assert_eq!(stats.commits(), 2, "the three writes shared one commit");
        assert!(
            started.elapsed() >= Duration::from_millis(500),
            "the second commit waited for the spacing: {:?}",
            started.elapsed()
        );
        let (reply, closed) = oneshot::channel();
        sender.send(Msg::Close(reply)).unwrap();
        closed.blocking_recv().unwrap().unwrap();
        writer.join().unwrap();
    }

    #[test]
    fn every_migration_step_leads_to_the_current_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), Some(0));
        assert_eq!(user_version(&conn).unwrap(), i64::from(SCHEMA_VERSION));
        assert_eq!(migrate(&mut conn).unwrap(), None);
    }

    #[test]
    fn version_1_passwords_are_replaced_by_hashes_that_verify() {
        let mut conn = Connection::open_in_memory().unwrap();
        {
            let tx = conn.transaction().unwrap();
            MIGRATIONS[0](&tx).unwrap();
            for (id, password) in [(1u8, Some("hunter2")), (2, None)] {
                tx.execute(
                    "INSERT INTO melee_tables (id, name, password, settings, created_at_ms)
                     VALUES (?1, 'table', ?2, x'00', 0)",
                    params![[id; 16].as_slice(), password],
                )
                .unwrap();
            }
            tx.pragma_update(None, "user_version", 1).unwrap();
            tx.commit().unwrap();
        }
        assert_eq!(migrate(&mut conn).unwrap(), Some(1));
        let stored: Vec<Option<String>> = conn
            .prepare("SELECT password FROM melee_tables ORDER BY id")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let [Some(hashed), None] = stored.as_slice() else {
            panic!("{stored:?}");
        };
        assert!(crate::password::is_hash(hashed));
        assert!(!hashed.contains("hunter2"));
        assert!(crate::password::verify(hashed, "hunter2"));
        assert!(!crate::password::verify(hashed, "hunter3"));
    }

    /// Version 3 adds the leagues: a version-2 journal keeps its tables (no league) and gains
    /// the league tables, empty.
    #[test]
    fn a_version_2_journal_gains_leagues_and_keeps_its_tables() {
        let mut conn = Connection::open_in_memory().unwrap();
        {
            let tx = conn.transaction().unwrap();
            MIGRATIONS[0](&tx).unwrap();
            MIGRATIONS[1](&tx).unwrap();
            tx.execute(
                "INSERT INTO melee_tables (id, name, password, settings, created_at_ms)
                 VALUES (?1, 'old table', NULL, x'00', 5)",
                params![[7u8; 16].as_slice()],
            )
            .unwrap();
            tx.pragma_update(None, "user_version", 2).unwrap();
            tx.commit().unwrap();
        }
        assert_eq!(migrate(&mut conn).unwrap(), Some(2));
        let (name, league): (String, Option<Vec<u8>>) = conn
            .query_row("SELECT name, league_id FROM melee_tables", [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap();
        assert_eq!((name.as_str(), league), ("old table", None));
        for table in ["leagues", "league_members", "ledger"] {
            let rows: i64 = conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                    row.get(0)
                })
                .unwrap();
            assert_eq!(rows, 0, "{table}");
        }
    }

    #[test]
    fn a_journal_sqlite_opens_read_only_is_not_writable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); PRAGMA user_version = 2;")
            .unwrap();
        // What SQLite does with a file it may not write: it opens it read-only.
        let mut read_only =
            Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let error = check_writable(&mut read_only, dir.path(), &path).unwrap_err();
        assert!(
            matches!(&error, JournalError::NotWritable { dir: named, .. } if named == dir.path()),
            "{error:?}"
        );
        assert!(error.to_string().contains("cannot be written"), "{error}");
        // Even when SQLite does not say so up front (an immutable file): the write fails.
        let uri = format!("file:{}?immutable=1", path.display());
        let mut immutable = Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_URI,
        )
        .unwrap();
        let error = check_writable(&mut immutable, dir.path(), &path).unwrap_err();
        assert!(
            matches!(error, JournalError::NotWritable { .. }),
            "{error:?}"
        );
        // A writable one passes, and keeps its version.
        let mut writable = Connection::open(&path).unwrap();
        check_writable(&mut writable, dir.path(), &path).unwrap();
        assert_eq!(user_version(&writable).unwrap(), 2);
    }

    #[test]
    fn schema_versions_are_checked() {
        assert!(matches!(check_version(0), Ok(0)));
        assert!(matches!(check_version(1), Ok(1)));
        assert!(matches!(check_version(2), Ok(2)));
        assert!(matches!(check_version(3), Ok(3)));
        assert!(matches!(check_version(4), Ok(4)));
        assert!(matches!(
            check_version(5),
            Err(JournalError::NewerSchema {
                found: 5,
                supported: 4
            })
        ));
        assert!(matches!(check_version(-1), Err(JournalError::Corrupt(_))));
    }
}
