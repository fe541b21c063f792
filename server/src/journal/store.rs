//! The SQLite journal behind the store interface ([`crate::store::Store`]): writes go to the
//! writer thread (a flush in one savepoint of its transaction), reads run on the read
//! connection off the async threads.

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::league::{
    LeagueId, LeagueSummary, LeagueView, LedgerLine, MemberId, MemberToken,
};
use grand_melee_protocol::mountain_magic::day::FinishedClimb;
use grand_melee_protocol::{ErrorCode, SeatToken, TableId, TableSummary};
use rusqlite::Connection;

use super::{Journal, JournalError, leagues};
use crate::store::{
    EncodedEvent, Flush, LeagueRecord, LeagueWrite, Progress, ReplayPage, ReplaySummary, Store,
    StoreError, StoreFuture, TableLog, TableRecord,
};

impl From<JournalError> for StoreError {
    fn from(error: JournalError) -> Self {
        match error {
            JournalError::Refused { code, message } => StoreError::Refused { code, message },
            error => StoreError::Failed(error.to_string()),
        }
    }
}

impl Journal {
    /// Runs a read on the read connection, off the async threads.
    async fn read_off<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, JournalError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let journal = self.clone();
        tokio::task::spawn_blocking(move || journal.read(f))
            .await
            .map_err(|error| StoreError::Failed(error.to_string()))?
            .map_err(StoreError::from)
    }
}

/// A table's place in the SQLite journal.
#[derive(Debug)]
struct SqliteTable {
    journal: Journal,
    table: TableId,
}

impl Journal {
    /// The place of a table already in the journal (a recovered one).
    pub(crate) fn table_log(&self, table: TableId) -> Box<dyn TableLog> {
        Box::new(SqliteTable {
            journal: self.clone(),
            table,
        })
    }
}

impl TableLog for SqliteTable {
    fn append(&mut self, flush: Flush, _progress: Progress) -> StoreFuture<'_, ()> {
        Box::pin(async move { Ok(self.journal.flush(self.table, flush).await?) })
    }
}

impl Store for Journal {
    fn create_table(
        &self,
        record: TableRecord,
        _summary: TableSummary,
    ) -> StoreFuture<'_, Box<dyn TableLog>> {
        Box::pin(async move {
            let table = record.id;
            Journal::create_table(self, record).await?;
            Ok(self.table_log(table))
        })
    }

    fn delete_table(&self, table: TableId) -> StoreFuture<'_, ()> {
        Box::pin(async move { Ok(Journal::delete_table(self, table).await?) })
    }

    fn table_directory(&self) -> Option<Vec<TableSummary>> {
        None
    }

    fn replays_page(&self, from: u32, max: u32) -> StoreFuture<'_, (Vec<ReplaySummary>, u32)> {
        let journal = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || journal.replays_page(from, max))
                .await
                .map_err(|error| StoreError::Failed(error.to_string()))?
                .map_err(StoreError::from)
        })
    }

    fn replay_page(
        &self,
        table: TableId,
        from_seq: u64,
        max_bytes: usize,
        token: Option<SeatToken>,
    ) -> StoreFuture<'_, Option<(ReplayPage, bool)>> {
        let journal = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let Some(page) = journal.replay_page(table, from_seq, max_bytes)? else {
                    return Ok(None);
                };
                let seated = match token {
                    Some(token) => journal.has_seat_token(table, token)?,
                    None => false,
                };
                Ok(Some((page, seated)))
            })
            .await
            .map_err(|error| StoreError::Failed(error.to_string()))?
            .map_err(|error: JournalError| StoreError::from(error))
        })
    }

    fn prune_replays(&self, finished_before_ms: u64) -> StoreFuture<'_, u64> {
        Box::pin(async move { Ok(Journal::prune_replays(self, finished_before_ms).await?) })
    }

    fn events_page(
        &self,
        table: TableId,
        from_seq: u64,
        limit: usize,
        max_bytes: usize,
    ) -> StoreFuture<'_, (Vec<EncodedEvent>, bool)> {
        let journal = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                journal.events_page(table, from_seq, limit, max_bytes)
            })
            .await
            .map_err(|error| StoreError::Failed(error.to_string()))?
            .map_err(StoreError::from)
        })
    }

    fn league_write(&self, write: LeagueWrite) -> StoreFuture<'_, u64> {
        Box::pin(async move { Ok(Journal::league_write(self, write).await?) })
    }

    fn league_record(&self, league: LeagueId) -> StoreFuture<'_, Option<LeagueRecord>> {
        Box::pin(self.read_off(move |conn| leagues::league_record(conn, league)))
    }

    fn league_view(&self, league: LeagueId) -> StoreFuture<'_, Option<LeagueView>> {
        Box::pin(self.read_off(move |conn| leagues::league_view(conn, league)))
    }

    fn leagues_page(&self, from: u32, limit: u32) -> StoreFuture<'_, (Vec<LeagueSummary>, u32)> {
        Box::pin(self.read_off(move |conn| leagues::leagues_page(conn, from, limit)))
    }

    fn member_ledger(
        &self,
        league: LeagueId,
        member: MemberId,
    ) -> StoreFuture<'_, Result<(String, Vec<LedgerLine>), ErrorCode>> {
        Box::pin(self.read_off(move |conn| {
            if leagues::league_record(conn, league)?.is_none() {
                return Ok(Err(ErrorCode::UnknownLeague));
            }
            let Some((_, name)) = leagues::members(conn, league)?
                .into_iter()
                .find(|(m, _)| *m == member)
            else {
                return Ok(Err(ErrorCode::UnknownPlayer));
            };
            Ok(Ok((name, leagues::ledger(conn, league, member)?)))
        }))
    }

    fn member_by_token(
        &self,
        league: LeagueId,
        token: MemberToken,
    ) -> StoreFuture<'_, Option<(MemberId, String, Vec<LedgerLine>)>> {
        Box::pin(self.read_off(move |conn| {
            let Some((member, name)) = leagues::member_by_token(conn, league, token)? else {
                return Ok(None);
            };
            Ok(Some((member, name, leagues::ledger(conn, league, member)?)))
        }))
    }

    fn mountain_secret(&self) -> StoreFuture<'_, DiceSecret> {
        Box::pin(async move {
            let value = self
                .secret("mountain", crate::store::draw_secret().0)
                .await?;
            Ok(DiceSecret(value))
        })
    }

    fn day_climbs(&self, day: u32) -> StoreFuture<'_, Vec<FinishedClimb>> {
        Box::pin(self.read_off(move |conn| {
            let mut statement =
                conn.prepare_cached("SELECT climb FROM mountain_climbs WHERE day = ?1")?;
            let rows = statement.query_map([day], |row| row.get::<_, Vec<u8>>(0))?;
            let mut climbs = Vec::new();
            for row in rows {
                let bytes = row?;
                let climb = rmp_serde::from_slice(&bytes).map_err(|error| {
                    JournalError::Corrupt(format!("a climb of day {day} is unreadable: {error}"))
                })?;
                climbs.push(climb);
            }
            Ok(climbs)
        }))
    }

    fn hold_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> StoreFuture<'_, bool> {
        let held = match self.inner.league_seats.entry((league, member)) {
            dashmap::mapref::entry::Entry::Occupied(held) => *held.get() == table,
            dashmap::mapref::entry::Entry::Vacant(free) => {
                free.insert(table);
                true
            }
        };
        Box::pin(async move { Ok(held) })
    }

    fn release_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> StoreFuture<'_, ()> {
        self.inner
            .league_seats
            .remove_if(&(league, member), |_, held| *held == table);
        Box::pin(async { Ok(()) })
    }

    fn release_league_seats_but(
        &self,
        league: LeagueId,
        table: TableId,
        seated: Vec<MemberId>,
    ) -> StoreFuture<'_, ()> {
        self.inner
            .league_seats
            .retain(|(l, member), held| *l != league || *held != table || seated.contains(member));
        Box::pin(async { Ok(()) })
    }
}
