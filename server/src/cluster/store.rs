//! The cluster's JetStream engine behind the store interface ([`crate::store::Store`]): a
//! table's flush is one record appended to its subject (expecting the subject's end where this
//! node left it, so a node that lost the table cannot write), the table list and the replays
//! come from the directory, the leagues from the league store.

use std::sync::Arc;

use futures_util::StreamExt;
use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::league::{
    LeagueId, LeagueSummary, LeagueView, LedgerLine, MemberId, MemberToken,
};
use grand_melee_protocol::mountain_magic::day::FinishedClimb;
use grand_melee_protocol::{ErrorCode, SeatToken, StageName, TableId, TableSummary};
use tracing::warn;

use super::{AppendError, Cluster, ClusterError, DirEntry, Record};
use crate::journal::JournalError;
use crate::store::{
    Credit, EncodedEvent, Flush, LeagueRecord, LeagueWrite, Progress, ReplayPage, ReplaySummary,
    Store, StoreError, StoreFuture, StoredTable, TableLog, TableOp, TableRecord,
};

fn failed(error: impl std::fmt::Display) -> StoreError {
    StoreError::Failed(error.to_string())
}

fn league_error(error: JournalError) -> StoreError {
    match error {
        JournalError::Refused { code, message } => StoreError::Refused { code, message },
        error => failed(error),
    }
}

/// A table's place in the journal stream, held by its actor on the node that owns it.
#[derive(Debug)]
pub(crate) struct ClusterTable {
    pub(crate) cluster: Arc<Cluster>,
    pub(crate) table: TableId,
    /// The table subject's last sequence: what the next append expects.
    pub(crate) last: u64,
}

impl TableLog for ClusterTable {
    fn append(&mut self, flush: Flush, progress: Progress) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let finished = flush.finished_at_ms();
            let Flush {
                first_seq,
                events,
                ops,
            } = flush;
            let credits: Vec<Credit> = ops
                .iter()
                .filter_map(|op| match op {
                    TableOp::Finish { credits, .. } => Some(credits.clone()),
                    _ => None,
                })
                .flatten()
                .collect();
            let climb = ops.iter().find_map(|op| match op {
                TableOp::Finish { climb, .. } => climb.clone(),
                _ => None,
            });
            let record = Record::Flush {
                first_seq,
                events: events.into_iter().map(serde_bytes::ByteBuf::from).collect(),
                ops,
            };
            match self.cluster.append(self.table, &record, self.last).await {
                Ok(seq) => self.last = seq,
                Err(AppendError::Fenced) => return Err(StoreError::Fenced),
                Err(error) => return Err(failed(error)),
            }
            if let Some(at) = finished
                && let Err(error) = self
                    .cluster
                    .finish_table(
                        self.table,
                        at,
                        progress.seq,
                        progress.stage,
                        &credits,
                        climb.as_ref(),
                    )
                    .await
            {
                // The finishing mark is in the journal: the node that takes the table up next
                // (this one after a restart, or a survivor) credits and lists it, once.
                warn!(table = %self.table, %error, "crediting and listing a finished table");
            }
            Ok(())
        })
    }
}

impl Cluster {
    /// Claims `table` (owned by `from`, a dead node, or by this node's previous run when `from`
    /// is `None`) in the directory, then appends the `claimed` record that fences the previous
    /// owner, and reads the table: its records folded, and its log here. `None`: another node
    /// claimed it first, or it is over.
    pub(crate) async fn claim(
        self: &Arc<Self>,
        table: TableId,
        from: Option<String>,
    ) -> Result<Option<(StoredTable, ClusterTable)>, ClusterError> {
        let me = self.node.to_string();
        let expected = from.unwrap_or_else(|| me.clone());
        let mut epoch = 0;
        let claimed = self
            .dir_modify(table, |entry| {
                if entry.finished_at_ms.is_some() || entry.owner.as_deref() != Some(&expected) {
                    return false;
                }
                entry.owner = Some(me.clone());
                entry.epoch += 1;
                epoch = entry.epoch;
                true
            })
            .await?;
        if claimed.is_none() {
            return Ok(None);
        }
        // The claim record fences the previous owner: after it, an append of his is refused.
        // If he slipped one in after the read, read again.
        for _ in 0..10 {
            let Some(read) = self.read_table(table).await? else {
                return Err(ClusterError::NoRecords);
            };
            let claim = Record::Claimed {
                node: me.clone(),
                epoch,
            };
            match self.append(table, &claim, read.last).await {
                Ok(last) => {
                    let log = ClusterTable {
                        cluster: Arc::clone(self),
                        table,
                        last,
                    };
                    return Ok(Some((read.stored, log)));
                }
                Err(AppendError::Fenced) => {}
                Err(error) => return Err(error.into()),
            }
        }
        Err(ClusterError::KeptWriting)
    }

    /// A finished game's league credits (each deck once), then its directory entry (when it
    /// finished): in that order, so a crash between leaves the table unfinished in the
    /// directory, and whoever takes it up finishes it again. The owner keeps the table (listed,
    /// open to its people) until its actor closes it.
    pub(crate) async fn finish_table(
        &self,
        table: TableId,
        at: u64,
        events: u64,
        stage: StageName,
        credits: &[Credit],
        climb: Option<&FinishedClimb>,
    ) -> Result<(), ClusterError> {
        if !credits.is_empty() {
            self.credit(table, at, credits).await?;
        }
        if let Some(climb) = climb {
            self.add_climb(climb).await?;
        }
        self.dir_modify(table, |entry| {
            entry.finished_at_ms.get_or_insert(at);
            entry.events = events;
            entry.summary.stage = stage;
            true
        })
        .await?;
        Ok(())
    }

    /// Takes this node's name off a table's directory entry (nobody runs it now).
    pub(crate) async fn release(&self, table: TableId) -> Result<(), ClusterError> {
        let me = self.node.to_string();
        self.dir_modify(table, |entry| {
            let mine = entry.owner.as_deref() == Some(me.as_str());
            if mine {
                entry.owner = None;
            }
            mine
        })
        .await?;
        Ok(())
    }
}

impl Store for Arc<Cluster> {
    /// Writes the table's creation record and its directory entry (this node owns it).
    fn create_table(
        &self,
        record: TableRecord,
        summary: TableSummary,
    ) -> StoreFuture<'_, Box<dyn TableLog>> {
        Box::pin(async move {
            let created = Record::Created {
                name: record.name.clone(),
                password: record.password.clone(),
                settings: record.settings.clone(),
                created_at_ms: record.created_at_ms,
                league: record.league,
            };
            let last = self.append(record.id, &created, 0).await.map_err(failed)?;
            let entry = DirEntry {
                owner: Some(self.node.to_string()),
                epoch: 1,
                name: record.name.clone(),
                password: record.password.clone(),
                summary,
                created_at_ms: record.created_at_ms,
                finished_at_ms: None,
                events: 0,
                league: record.league,
            };
            self.dir_create(record.id, &entry).await.map_err(failed)?;
            let log: Box<dyn TableLog> = Box::new(ClusterTable {
                cluster: Arc::clone(self),
                table: record.id,
                last,
            });
            Ok(log)
        })
    }

    fn delete_table(&self, table: TableId) -> StoreFuture<'_, ()> {
        Box::pin(async move { Cluster::delete_table(self, table).await.map_err(failed) })
    }

    /// Every node's tables, from the directory.
    fn table_directory(&self) -> Option<Vec<TableSummary>> {
        Some(
            self.cache
                .iter()
                .filter(|c| c.entry.owner.is_some())
                .map(|c| c.entry.summary.clone())
                .collect(),
        )
    }

    fn replays_page(&self, from: u32, max: u32) -> StoreFuture<'_, (Vec<ReplaySummary>, u32)> {
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        Box::pin(async move { Ok(super::replays_page(self, from, max)) })
    }

    fn replay_page(
        &self,
        table: TableId,
        from_seq: u64,
        max_bytes: usize,
        token: Option<SeatToken>,
    ) -> StoreFuture<'_, Option<(ReplayPage, bool)>> {
        Box::pin(async move {
            let found = super::replay_page(self, table, from_seq, max_bytes)
                .await
                .map_err(failed)?;
            Ok(found.map(|(page, seats)| {
                let seated = token.is_some_and(|token| seats.iter().any(|(_, t)| *t == token));
                (page, seated)
            }))
        })
    }

    /// Reads the directory itself (not this node's copy): a finished table nobody runs any
    /// more (its owner closed it, or it was released) loses its records and its entry. Each
    /// node may do it; deleting what another node deleted a moment ago is not an error.
    fn prune_replays(&self, finished_before_ms: u64) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let mut keys = self.directory().keys().await.map_err(failed)?;
            let mut tables = Vec::new();
            while let Some(key) = keys.next().await {
                if let Some(table) = super::table_of_dir_key(&key.map_err(failed)?) {
                    tables.push(table);
                }
            }
            let mut deleted = 0;
            for table in tables {
                let Some(cached) = self.dir_get(table).await.map_err(failed)? else {
                    continue;
                };
                let entry = cached.entry;
                if entry.owner.is_none()
                    && entry
                        .finished_at_ms
                        .is_some_and(|at| at < finished_before_ms)
                {
                    Cluster::delete_table(self, table).await.map_err(failed)?;
                    self.cache.remove(&table);
                    deleted += 1;
                }
            }
            Ok(deleted)
        })
    }

    fn events_page(
        &self,
        table: TableId,
        from_seq: u64,
        limit: usize,
        max_bytes: usize,
    ) -> StoreFuture<'_, (Vec<EncodedEvent>, bool)> {
        Box::pin(async move {
            super::events_page(self, table, from_seq, limit, max_bytes)
                .await
                .map_err(failed)
        })
    }

    fn league_write(&self, write: LeagueWrite) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            Cluster::league_write(self, write)
                .await
                .map_err(league_error)
        })
    }

    fn league_record(&self, league: LeagueId) -> StoreFuture<'_, Option<LeagueRecord>> {
        Box::pin(async move {
            Cluster::league_record(self, league)
                .await
                .map_err(league_error)
        })
    }

    fn league_view(&self, league: LeagueId) -> StoreFuture<'_, Option<LeagueView>> {
        Box::pin(async move {
            Cluster::league_view(self, league)
                .await
                .map_err(league_error)
        })
    }

    fn leagues_page(&self, from: u32, limit: u32) -> StoreFuture<'_, (Vec<LeagueSummary>, u32)> {
        Box::pin(async move {
            Cluster::leagues_page(self, from, limit)
                .await
                .map_err(league_error)
        })
    }

    fn member_ledger(
        &self,
        league: LeagueId,
        member: MemberId,
    ) -> StoreFuture<'_, Result<(String, Vec<LedgerLine>), ErrorCode>> {
        Box::pin(async move {
            Cluster::member_ledger(self, league, member)
                .await
                .map_err(league_error)
        })
    }

    fn member_by_token(
        &self,
        league: LeagueId,
        token: MemberToken,
    ) -> StoreFuture<'_, Option<(MemberId, String, Vec<LedgerLine>)>> {
        Box::pin(async move {
            Cluster::member_by_token(self, league, token)
                .await
                .map_err(league_error)
        })
    }

    fn mountain_secret(&self) -> StoreFuture<'_, DiceSecret> {
        Box::pin(async move {
            Cluster::mountain_secret(self, crate::store::draw_secret())
                .await
                .map_err(league_error)
        })
    }

    fn day_climbs(&self, day: u32) -> StoreFuture<'_, Vec<FinishedClimb>> {
        Box::pin(async move { Cluster::day_climbs(self, day).await.map_err(league_error) })
    }

    fn hold_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            Cluster::hold_league_seat(self, league, member, table)
                .await
                .map_err(league_error)
        })
    }

    fn release_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            Cluster::release_league_seat(self, league, member, table)
                .await
                .map_err(league_error)
        })
    }

    fn release_league_seats_but(
        &self,
        league: LeagueId,
        table: TableId,
        seated: Vec<MemberId>,
    ) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            Cluster::release_league_seats_but(self, league, table, &seated)
                .await
                .map_err(league_error)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;
    use crate::metrics::Metrics;
    use grand_melee_e2e::nats::NatsCluster;

    /// Creates a table; with `finished_at_ms`, finishes it; with `release`, its actor has closed.
    async fn table(cluster: &Arc<Cluster>, finished_at_ms: Option<u64>, release: bool) -> TableId {
        let id = TableId::new_random();
        let record = TableRecord {
            id,
            name: id.to_string(),
            password: None,
            settings: vec![1],
            created_at_ms: 1,
            league: None,
        };
        let summary = TableSummary::new(id, &record.name, &Default::default());
        let mut log = cluster.create_table(record, summary).await.unwrap();
        if let Some(at_ms) = finished_at_ms {
            let flush = Flush {
                first_seq: 1,
                events: vec![b"an event".to_vec()],
                ops: vec![TableOp::Finish {
                    at_ms,
                    credits: Vec::new(),
                    climb: None,
                }],
            };
            let progress = Progress {
                seq: 1,
                stage: StageName::Finished,
            };
            log.append(flush, progress).await.unwrap();
        }
        if release {
            cluster.release(id).await.unwrap();
        }
        id
    }

    /// A one-server NATS and node "a" of a cluster on it (the server stops when dropped).
    async fn one_node() -> (NatsCluster, Arc<Cluster>) {
        let nats = NatsCluster::start(1).await;
        let config = ServerConfig {
            node_id: Some("a".to_owned()),
            cluster_replicas: 1,
            ..ServerConfig::default()
        };
        let cluster = Cluster::connect(&config, &nats.urls(), Arc::new(Metrics::default()))
            .await
            .unwrap();
        (nats, cluster)
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn replay_retention_deletes_the_old_finished_games_nobody_runs() {
        let (_nats, cluster) = one_node().await;
        let old = table(&cluster, Some(1_000), true).await;
        let recent = table(&cluster, Some(5_000), true).await;
        let still_open = table(&cluster, Some(1_000), false).await;
        let unfinished = table(&cluster, None, true).await;

        assert_eq!(cluster.prune_replays(2_000).await.unwrap(), 1);
        assert!(cluster.read_table(old).await.unwrap().is_none());
        assert!(cluster.dir_get(old).await.unwrap().is_none());
        for kept in [recent, still_open, unfinished] {
            assert!(cluster.read_table(kept).await.unwrap().is_some(), "{kept}");
            assert!(cluster.dir_get(kept).await.unwrap().is_some(), "{kept}");
        }
        // The replay list is the finished games left.
        let (replays, total) = Store::replays_page(&cluster, 0, 10).await.unwrap();
        let mut listed: Vec<TableId> = replays.iter().map(|r| r.id).collect();
        listed.sort_unstable();
        let mut left = vec![recent, still_open];
        left.sort_unstable();
        assert_eq!((listed, total), (left, 2));
        assert_eq!(
            cluster.prune_replays(2_000).await.unwrap(),
            0,
            "pruned once"
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn claiming_a_table_without_records_says_so() {
        let (_nats, cluster) = one_node().await;
        // A directory entry naming this node, and no records in the journal stream.
        let table = TableId::new_random();
        let entry = DirEntry {
            owner: Some("a".to_owned()),
            epoch: 1,
            name: "empty".to_owned(),
            password: None,
            summary: grand_melee_protocol::TableSummary::new(
                table,
                "empty",
                &grand_melee_protocol::Settings::default(),
            ),
            created_at_ms: 1,
            finished_at_ms: None,
            events: 0,
            league: None,
        };
        cluster.dir_create(table, &entry).await.unwrap();
        let error = cluster.claim(table, None).await.unwrap_err();
        assert!(matches!(error, ClusterError::NoRecords), "{error:?}");
        assert_eq!(error.to_string(), "the table has no records");
        // Another node's table is not claimed at all.
        assert!(
            cluster
                .claim(table, Some("b".to_owned()))
                .await
                .unwrap()
                .is_none()
        );
    }
}
