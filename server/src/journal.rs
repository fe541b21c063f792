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
//! Schema version 1 (all tables `STRICT`, `WITHOUT ROWID`; uuids are 16-byte blobs, times are
//! milliseconds since the Unix epoch):
//! - `melee_tables(id PK, name, password NULL, settings BLOB, created_at_ms, finished_at_ms NULL)`
//!   — `finished_at_ms` is set once a game is over; such a table is a replay.
//! - `events(table_id, seq, data BLOB)`, primary key `(table_id, seq)`: a sequence number can be
//!   written once and never rewritten.
//! - `seats(table_id, player, token)`, primary key `(table_id, player)`.
//! - `meta(table_id, key, value BLOB)`, primary key `(table_id, key)`.
//!
//! # Writes: one writer, group commit
//! A dedicated thread owns the only write connection. Operations reach it over a channel; it
//! takes every operation waiting, runs them all in **one** transaction (each in its own
//! savepoint, so one failing operation fails alone), commits, and only then completes each
//! operation's reply. So an `await`ed write is durable (see [`Durability`]) when it returns, and
//! under load many tables share one commit (one `fsync`).
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

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, ffi, params};
use tokio::sync::oneshot;
use tracing::{debug, info, warn};
use uuid::Uuid;

/// The journal's file name inside the data directory.
pub const DB_FILE: &str = "grand-melee.sqlite3";

/// The schema version this server writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: u32 = 1;

/// How long a connection waits for a lock held by another connection before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The most operations the writer puts in one transaction.
const MAX_BATCH: usize = 4096;

/// One migration step: `MIGRATIONS[n]` takes a journal from schema version `n` to `n + 1`. It
/// runs inside the migration's transaction; the caller then sets `user_version`.
type Migration = fn(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>;

/// Every migration step in order. To add version 2: append a step and bump [`SCHEMA_VERSION`].
const MIGRATIONS: &[Migration] = &[migrate_0_to_1];

const _: () = assert!(MIGRATIONS.len() == SCHEMA_VERSION as usize);

fn migrate_0_to_1(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
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
    )
}

/// How hard each commit is pushed to disk before the writes in it are acknowledged.
///
/// Either way the journal is never left corrupt or half-written: a commit is kept whole or lost
/// whole, and a lost commit is always a suffix (the newest ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Durability {
    /// `PRAGMA synchronous = FULL`: every commit is `fsync`ed to the WAL before any write in it
    /// is acknowledged. An acknowledged write survives a crash of the process, of the OS and a
    /// power cut (on a disk that honours flushes). Costs one `fsync` per batch; group commit
    /// shares it between every table that wrote meanwhile.
    #[default]
    Full,
    /// `PRAGMA synchronous = NORMAL` in WAL mode: a commit is written to the OS before it is
    /// acknowledged, but only `fsync`ed at checkpoints. An acknowledged write survives a crash
    /// or kill of the server process (the OS still holds it); a crash of the OS or a power cut
    /// may lose the most recent acknowledged commits.
    Normal,
}

impl Durability {
    /// The name used on the command line: `full` or `normal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Full => "full",
            Durability::Normal => "normal",
        }
    }

    fn synchronous_pragma(self) -> &'static str {
        match self {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A durability name that is neither `full` nor `normal`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown durability {0:?}: expected `full` or `normal`")]
pub struct ParseDurabilityError(String);

impl FromStr for Durability {
    type Err = ParseDurabilityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("full") {
            Ok(Durability::Full)
        } else if s.eq_ignore_ascii_case("normal") {
            Ok(Durability::Normal)
        } else {
            Err(ParseDurabilityError(s.to_owned()))
        }
    }
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
    /// The journal was written by a newer server; it is left untouched.
    #[error(
        "the journal has schema version {found} but this server supports up to {supported}; \
         it was written by a newer server: run that version (the journal was not modified)"
    )]
    NewerSchema { found: u32, supported: u32 },
    /// `create_table` with an id that is already in the journal.
    #[error("table {0} is already in the journal")]
    TableExists(Uuid),
    /// An operation on a table the journal does not have.
    #[error("table {0} is not in the journal")]
    UnknownTable(Uuid),
    /// `append` to a table that is finished (a replay is never changed).
    #[error("table {0} is finished; its events cannot change")]
    TableFinished(Uuid),
    /// `append` of a sequence number the table already has: events are never rewritten.
    #[error("table {table} already has event {seq}")]
    DuplicateEvent { table: Uuid, seq: u64 },
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
}

/// A table as created: what is needed to rebuild it, besides its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRecord {
    pub id: Uuid,
    pub name: String,
    pub password: Option<String>,
    /// The table's settings (including its seed), encoded by the caller.
    pub settings: Vec<u8>,
    pub created_at_ms: u64,
}

/// A table as stored: its record, seat tokens, metadata and every event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTable {
    pub record: TableRecord,
    /// `(player, token)`, by player.
    pub seats: Vec<(u16, Uuid)>,
    /// `(key, value)`, by key.
    pub meta: Vec<(String, Vec<u8>)>,
    /// `(seq, encoded event)`, by seq.
    pub events: Vec<(u64, Vec<u8>)>,
    /// `Some` once the game is over (the table is then a replay).
    pub finished_at_ms: Option<u64>,
}

/// One finished game, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySummary {
    pub id: Uuid,
    pub name: String,
    pub created_at_ms: u64,
    pub finished_at_ms: u64,
    /// How many events it has.
    pub events: u64,
    /// Whether the table had a password.
    pub password: bool,
}

/// One page of a finished game's events, with what is needed to read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPage {
    pub record: TableRecord,
    /// `(seq, encoded event)`, by seq, starting at the requested one.
    pub events: Vec<(u64, Vec<u8>)>,
    /// How many events the game has in all.
    pub total_events: u64,
}

/// A handle on the journal. Cheap to clone; every clone talks to the same writer thread.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None` only while the last handle is being dropped.
    sender: Option<mpsc::Sender<Msg>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    reader: Mutex<Connection>,
    transactions: Arc<AtomicU64>,
    path: PathBuf,
    durability: Durability,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.inner.path)
            .field("durability", &self.inner.durability)
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
    reply: oneshot::Sender<Result<(), JournalError>>,
}

enum Op {
    CreateTable(TableRecord),
    Append {
        table: Uuid,
        first_seq: u64,
        events: Vec<Vec<u8>>,
    },
    SetSeat {
        table: Uuid,
        player: u16,
        token: Uuid,
    },
    RemoveSeat {
        table: Uuid,
        player: u16,
    },
    SetMeta {
        table: Uuid,
        key: String,
        value: Vec<u8>,
    },
    Finish {
        table: Uuid,
        finished_at_ms: u64,
    },
    DeleteTable(Uuid),
}

impl Op {
    fn events(&self) -> usize {
        match self {
            Op::Append { events, .. } => events.len(),
            _ => 0,
        }
    }
}

impl Journal {
    /// Opens (creating if needed) the journal in `dir`: creates the directory and
    /// `dir/grand-melee.sqlite3`, switches it to WAL mode, migrates it to [`SCHEMA_VERSION`] and
    /// starts the writer thread. A journal from a newer server is refused untouched.
    pub fn open(dir: &Path, durability: Durability) -> Result<Journal, JournalError> {
        std::fs::create_dir_all(dir).map_err(|source| JournalError::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
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
        .map_err(open_err)?;
        writer.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // Check the version before anything writes to the file.
        let found = user_version(&writer).map_err(open_err)?;
        check_version(found)?;
        let mode: String = writer
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(JournalError::Corrupt(format!(
                "{} could not be switched to WAL mode (journal_mode is {mode})",
                path.display()
            )));
        }
        writer
            .pragma_update(None, "synchronous", durability.synchronous_pragma())
            .map_err(open_err)?;
        writer
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        let migrated_from = migrate(&mut writer)?;

        let reader = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        reader.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;

        let transactions = Arc::new(AtomicU64::new(0));
        let (sender, receiver) = mpsc::channel();
        let counter = Arc::clone(&transactions);
        let thread = std::thread::Builder::new()
            .name("journal-writer".into())
            .spawn(move || run_writer(writer, receiver, counter))
            .map_err(JournalError::Thread)?;

        info!(
            path = %path.display(),
            %durability,
            schema = SCHEMA_VERSION,
            migrated_from = ?migrated_from,
            "journal open"
        );
        Ok(Journal {
            inner: Arc::new(Inner {
                sender: Some(sender),
                writer: Mutex::new(Some(thread)),
                reader: Mutex::new(reader),
                transactions,
                path,
                durability,
            }),
        })
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
        self.inner.transactions.load(Ordering::Relaxed)
    }

    /// Records a new table. Fails with [`JournalError::TableExists`] if its id is taken.
    pub async fn create_table(&self, record: TableRecord) -> Result<(), JournalError> {
        self.submit(Op::CreateTable(record)).await
    }

    /// Appends `events` (encoded by the caller) numbered `first_seq`, `first_seq + 1`, …; returns
    /// once they are durable (see [`Durability`]). All or none are written: a number the table
    /// already has fails the whole call with [`JournalError::DuplicateEvent`]. Numbers need not
    /// be contiguous with earlier ones; the caller numbers them.
    pub async fn append(
        &self,
        table: Uuid,
        first_seq: u64,
        events: Vec<Vec<u8>>,
    ) -> Result<(), JournalError> {
        if events.is_empty() {
            return Ok(());
        }
        self.submit(Op::Append {
            table,
            first_seq,
            events,
        })
        .await
    }

    /// Sets (or replaces) `player`'s seat token.
    pub async fn set_seat(
        &self,
        table: Uuid,
        player: u16,
        token: Uuid,
    ) -> Result<(), JournalError> {
        self.submit(Op::SetSeat {
            table,
            player,
            token,
        })
        .await
    }

    /// Removes `player`'s seat token (a kicked or departed player). Removing a seat that is not
    /// there is not an error.
    pub async fn remove_seat(&self, table: Uuid, player: u16) -> Result<(), JournalError> {
        self.submit(Op::RemoveSeat { table, player }).await
    }

    /// Sets (or replaces) a small per-table value, e.g. the host or whether it is paused.
    pub async fn set_meta(
        &self,
        table: Uuid,
        key: &str,
        value: Vec<u8>,
    ) -> Result<(), JournalError> {
        self.submit(Op::SetMeta {
            table,
            key: key.to_owned(),
            value,
        })
        .await
    }

    /// Marks the game finished at `finished_at_ms`; it is kept as a replay and no longer
    /// returned by [`Journal::unfinished_tables`].
    pub async fn finish(&self, table: Uuid, finished_at_ms: u64) -> Result<(), JournalError> {
        self.submit(Op::Finish {
            table,
            finished_at_ms,
        })
        .await
    }

    /// Deletes a table with everything it has (for tables abandoned before they started).
    /// Deleting a table that is not there is not an error.
    pub async fn delete_table(&self, table: Uuid) -> Result<(), JournalError> {
        self.submit(Op::DeleteTable(table)).await
    }

    /// Lets the writer finish every operation sent before this call, checkpoints the WAL into
    /// the database file, closes it and waits for the writer thread. Operations sent afterwards
    /// through other clones fail with [`JournalError::Closed`]; reads keep working.
    pub async fn close(self) -> Result<(), JournalError> {
        let (reply, done) = oneshot::channel();
        let sent = self
            .inner
            .sender
            .as_ref()
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

    async fn submit(&self, op: Op) -> Result<(), JournalError> {
        let (reply, done) = oneshot::channel();
        let sender = self.inner.sender.as_ref().ok_or(JournalError::Closed)?;
        sender
            .send(Msg::Op(Request { op, reply }))
            .map_err(|_| JournalError::Closed)?;
        done.await.map_err(|_| JournalError::Closed)?
    }

    /// Every table that is not finished, with its record, seats, metadata and all its events,
    /// oldest table first.
    pub fn unfinished_tables(&self) -> Result<Vec<StoredTable>, JournalError> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, name, password, settings, created_at_ms, finished_at_ms
                 FROM melee_tables WHERE finished_at_ms IS NULL
                 ORDER BY created_at_ms, id",
            )?;
            let mut rows = stmt.query([])?;
            let mut heads = Vec::new();
            while let Some(row) = rows.next()? {
                heads.push(table_head(row)?);
            }
            heads
                .into_iter()
                .map(|(record, finished_at_ms)| complete_table(conn, record, finished_at_ms))
                .collect()
        })
    }

    /// Every finished table, newest first.
    pub fn replays(&self) -> Result<Vec<ReplaySummary>, JournalError> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT t.id, t.name, t.created_at_ms, t.finished_at_ms,
                        (SELECT count(*) FROM events e WHERE e.table_id = t.id),
                        t.password IS NOT NULL
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
                        t.password IS NOT NULL
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
        table: Uuid,
        from_seq: u64,
        max_bytes: usize,
    ) -> Result<Option<ReplayPage>, JournalError> {
        self.read(|conn| {
            let head = {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, name, password, settings, created_at_ms, finished_at_ms
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

    /// Whether `token` is a seat token of `table` (seats given up or kicked no longer count).
    pub fn has_seat_token(&self, table: Uuid, token: Uuid) -> Result<bool, JournalError> {
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
    pub fn events(&self, table: Uuid) -> Result<Vec<(u64, Vec<u8>)>, JournalError> {
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
    pub fn table(&self, table: Uuid) -> Result<Option<StoredTable>, JournalError> {
        self.read(|conn| {
            let head = {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, name, password, settings, created_at_ms, finished_at_ms
                     FROM melee_tables WHERE id = ?1",
                )?;
                let mut rows = stmt.query([table.as_bytes().as_slice()])?;
                match rows.next()? {
                    Some(row) => table_head(row)?,
                    None => return Ok(None),
                }
            };
            let (record, finished_at_ms) = head;
            complete_table(conn, record, finished_at_ms).map(Some)
        })
    }

    /// Runs `f` in one read transaction on the read-only connection.
    fn read<T>(
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

fn run_writer(mut conn: Connection, receiver: mpsc::Receiver<Msg>, transactions: Arc<AtomicU64>) {
    let mut close_reply = None;
    let mut batch = Vec::new();
    while let Ok(first) = receiver.recv() {
        match first {
            Msg::Op(request) => batch.push(request),
            Msg::Close(reply) => {
                close_reply = Some(reply);
                break;
            }
        }
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(Msg::Op(request)) => batch.push(request),
                Ok(Msg::Close(reply)) => {
                    close_reply = Some(reply);
                    break;
                }
                Err(_) => break,
            }
        }
        write_batch(&mut conn, std::mem::take(&mut batch), &transactions);
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

/// Runs every request of `batch` in one transaction, each in a savepoint of its own, commits,
/// then answers every request.
fn write_batch(conn: &mut Connection, batch: Vec<Request>, transactions: &AtomicU64) {
    let started = Instant::now();
    let ops = batch.len();
    let events: usize = batch.iter().map(|request| request.op.events()).sum();
    let mut results: Vec<Result<(), JournalError>> = Vec::with_capacity(ops);

    let outcome = (|| -> rusqlite::Result<()> {
        let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for request in &batch {
            let savepoint = tx.savepoint()?;
            match apply(&savepoint, &request.op) {
                Ok(()) => {
                    savepoint.commit()?;
                    results.push(Ok(()));
                }
                Err(error) => {
                    let mut savepoint = savepoint;
                    savepoint.rollback()?;
                    debug!(%error, "journal operation failed");
                    results.push(Err(error));
                }
            }
        }
        tx.commit()
    })();

    match outcome {
        Ok(()) => {
            transactions.fetch_add(1, Ordering::Relaxed);
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

fn apply(conn: &Connection, op: &Op) -> Result<(), JournalError> {
    match op {
        Op::CreateTable(record) => {
            let created = to_i64(record.created_at_ms, "created_at_ms")?;
            conn.prepare_cached(
                "INSERT INTO melee_tables (id, name, password, settings, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                record.id.as_bytes().as_slice(),
                record.name,
                record.password,
                record.settings,
                created
            ])
            .map_err(|error| match constraint(&error) {
                Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => JournalError::TableExists(record.id),
                _ => JournalError::Sqlite(error),
            })?;
        }
        Op::Append {
            table,
            first_seq,
            events,
        } => {
            let finished: Option<Option<i64>> = conn
                .prepare_cached("SELECT finished_at_ms FROM melee_tables WHERE id = ?1")?
                .query_row([table.as_bytes().as_slice()], |row| row.get(0))
                .optional()?;
            match finished {
                None => return Err(JournalError::UnknownTable(*table)),
                Some(Some(_)) => return Err(JournalError::TableFinished(*table)),
                Some(None) => {}
            }
            let mut insert = conn
                .prepare_cached("INSERT INTO events (table_id, seq, data) VALUES (?1, ?2, ?3)")?;
            let mut seq = *first_seq;
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
                            JournalError::DuplicateEvent { table: *table, seq }
                        }
                        _ => JournalError::Sqlite(error),
                    })?;
            }
        }
        Op::SetSeat {
            table,
            player,
            token,
        } => {
            conn.prepare_cached(
                "INSERT INTO seats (table_id, player, token) VALUES (?1, ?2, ?3)
                 ON CONFLICT (table_id, player) DO UPDATE SET token = excluded.token",
            )?
            .execute(params![
                table.as_bytes().as_slice(),
                player,
                token.as_bytes().as_slice()
            ])
            .map_err(|error| unknown_table_on_foreign_key(error, *table))?;
        }
        Op::RemoveSeat { table, player } => {
            conn.prepare_cached("DELETE FROM seats WHERE table_id = ?1 AND player = ?2")?
                .execute(params![table.as_bytes().as_slice(), player])?;
        }
        Op::SetMeta { table, key, value } => {
            conn.prepare_cached(
                "INSERT INTO meta (table_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (table_id, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![table.as_bytes().as_slice(), key, value])
            .map_err(|error| unknown_table_on_foreign_key(error, *table))?;
        }
        Op::Finish {
            table,
            finished_at_ms,
        } => {
            let changed = conn
                .prepare_cached("UPDATE melee_tables SET finished_at_ms = ?2 WHERE id = ?1")?
                .execute(params![
                    table.as_bytes().as_slice(),
                    to_i64(*finished_at_ms, "finished_at_ms")?
                ])?;
            if changed == 0 {
                return Err(JournalError::UnknownTable(*table));
            }
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

fn unknown_table_on_foreign_key(error: rusqlite::Error, table: Uuid) -> JournalError {
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

fn uuid_column(row: &rusqlite::Row<'_>, index: usize, what: &str) -> Result<Uuid, JournalError> {
    let value = row.get_ref(index)?;
    let bytes = value
        .as_blob()
        .map_err(|_| JournalError::Corrupt(format!("{what} is not a blob")))?;
    Uuid::from_slice(bytes)
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

/// A row of `SELECT id, name, password, settings, created_at_ms, finished_at_ms`.
fn table_head(row: &rusqlite::Row<'_>) -> Result<(TableRecord, Option<u64>), JournalError> {
    let record = TableRecord {
        id: uuid_column(row, 0, "table id")?,
        name: row.get(1)?,
        password: row.get(2)?,
        settings: row.get(3)?,
        created_at_ms: u64_column(row, 4, "created_at_ms")?,
    };
    Ok((record, optional_u64_column(row, 5, "finished_at_ms")?))
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

fn load_events(conn: &Connection, table: Uuid) -> Result<Vec<(u64, Vec<u8>)>, JournalError> {
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

    #[test]
    fn every_migration_step_leads_to_the_current_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), Some(0));
        assert_eq!(user_version(&conn).unwrap(), i64::from(SCHEMA_VERSION));
        assert_eq!(migrate(&mut conn).unwrap(), None);
    }

    #[test]
    fn schema_versions_are_checked() {
        assert!(matches!(check_version(0), Ok(0)));
        assert!(matches!(check_version(1), Ok(1)));
        assert!(matches!(
            check_version(2),
            Err(JournalError::NewerSchema {
                found: 2,
                supported: 1
            })
        ));
        assert!(matches!(check_version(-1), Err(JournalError::Corrupt(_))));
    }
}
