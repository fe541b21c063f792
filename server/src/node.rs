//! The node's cluster loops: the directory watch (the local copy every node routes with), the
//! lease watch and renewals, and the claims of dead nodes' tables.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::kv;
use futures_util::StreamExt;
use grand_melee_protocol::TableId;
use tracing::{debug, error, info, warn};

use crate::room::TakenUp;

use crate::cluster::{Cached, Cluster, ClusterError, DirEntry, NodeInfo, decode};
use crate::lobby::Shared;
use crate::metrics::Metrics;

/// Starts the node's loops (they stop with the tables).
pub(crate) fn start(shared: &Arc<Shared>, cluster: &Arc<Cluster>) {
    let stop = shared.stop_tables.clone();
    let (c, s) = (Arc::clone(cluster), stop.clone());
    shared.tasks.spawn(async move {
        tokio::select! {
            () = s.cancelled() => {}
            () = watch_directory(c) => {}
        }
    });
    let (c, s) = (Arc::clone(cluster), stop.clone());
    shared.tasks.spawn(async move {
        tokio::select! {
            () = s.cancelled() => {}
            () = watch_leases(c) => {}
        }
    });
    let (c, s) = (Arc::clone(cluster), stop.clone());
    shared.tasks.spawn(async move {
        tokio::select! {
            () = s.cancelled() => {}
            () = resync_after_losses(c) => {}
        }
    });
    let (c, sh) = (Arc::clone(cluster), Arc::clone(shared));
    shared.tasks.spawn(async move {
        tokio::select! {
            () = stop.cancelled() => {}
            () = leases_and_claims(sh, c) => {}
        }
    });
}

/// When this node's messages may have been lost (it reconnected to NATS), tells every node with
/// members of a table it runs to enter them again (`OutItem::Resync`).
async fn resync_after_losses(cluster: Arc<Cluster>) {
    let mut losses = cluster.losses.subscribe();
    losses.borrow_and_update();
    while losses.changed().await.is_ok() {
        losses.borrow_and_update();
        let mine: Vec<TableId> = cluster
            .cache
            .iter()
            .filter(|c| c.entry.owner.as_deref().is_some_and(|o| cluster.is_me(o)))
            .map(|c| *c.key())
            .collect();
        let resync = crate::cluster::encode(&[crate::cluster::OutItem::Resync]);
        for table in mine {
            if let Err(error) = cluster
                .client
                .publish(crate::cluster::outbound_subject(table), resync.clone())
                .await
            {
                warn!(%table, %error, "asking other nodes to resynchronise");
            }
        }
    }
}

/// Keeps the cache equal to the directory, telling the proxies what changed.
async fn watch_directory(cluster: Arc<Cluster>) {
    loop {
        match cluster.directory().watch_with_history(">").await {
            Ok(mut watch) => {
                while let Some(entry) = watch.next().await {
                    let Ok(entry) = entry else { break };
                    let Some(table) = crate::cluster::table_of_dir_key(&entry.key) else {
                        continue;
                    };
                    match entry.operation {
                        kv::Operation::Put => {
                            let Some(value) = decode::<DirEntry>(&entry.value) else {
                                warn!(%table, "an unreadable directory entry");
                                continue;
                            };
                            let newer = cluster
                                .cache
                                .get(&table)
                                .is_none_or(|c| c.revision < entry.revision);
                            if newer {
                                cluster.cache.insert(
                                    table,
                                    Cached {
                                        entry: value,
                                        revision: entry.revision,
                                    },
                                );
                                let _ = cluster.changes.send(table);
                            }
                        }
                        kv::Operation::Delete | kv::Operation::Purge => {
                            cluster.cache.remove(&table);
                            let _ = cluster.changes.send(table);
                        }
                    }
                }
                debug!("the directory watch ended; watching again");
            }
            Err(error) => warn!(%error, "watching the directory"),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Keeps `Cluster::lease_revisions` equal to the lease bucket: one watch for the node's life
/// instead of listing the bucket (a new consumer on the engine) at every look.
async fn watch_leases(cluster: Arc<Cluster>) {
    loop {
        match cluster.nodes().watch_with_history(">").await {
            Ok(mut watch) => {
                while let Some(entry) = watch.next().await {
                    let Ok(entry) = entry else { break };
                    if entry.operation == kv::Operation::Put {
                        if let Some(info) = decode::<NodeInfo>(&entry.value) {
                            cluster.node_urls.insert(entry.key.clone(), info.url);
                        }
                    } else {
                        cluster.node_urls.remove(&entry.key);
                    }
                    cluster.lease_revisions.send_modify(|leases| {
                        if entry.operation == kv::Operation::Put {
                            let revision = leases.entry(entry.key).or_insert(entry.revision);
                            *revision = (*revision).max(entry.revision);
                        } else {
                            leases.remove(&entry.key);
                        }
                    });
                }
                debug!("the lease watch ended; watching again");
            }
            Err(error) => warn!(%error, "watching the leases"),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// What this node knows of another's lease.
#[derive(Debug)]
struct Seen {
    revision: u64,
    /// When this node first saw the revision.
    since: Instant,
}

/// How many times per lease a node renews its own lease and looks at the others'.
const RENEWALS_PER_LEASE: u32 = 6;

/// Which live node should claim `table`: the highest hash of (table, node) (rendezvous
/// hashing), so the tables of a dead node spread over the survivors and every survivor agrees.
fn chosen<'a>(table: TableId, live: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    live.max_by_key(|node| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        table.hash(&mut hasher);
        node.hash(&mut hasher);
        hasher.finish()
    })
}

/// Renews this node's lease six times per lease, watches the others', and claims the tables
/// of the nodes it finds dead. Looking six times per lease means a dead node is noticed between
/// one lease and a sixth more after the last renewal this node saw.
async fn leases_and_claims(shared: Arc<Shared>, cluster: Arc<Cluster>) {
    let info = NodeInfo {
        url: cluster.url.clone(),
        started_at_ms: crate::room::now_ms(),
    };
    let tick = cluster.lease / RENEWALS_PER_LEASE;
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seen: HashMap<String, Seen> = HashMap::new();
    // Tables whose owner this node found dead, and since when.
    let mut orphans: HashMap<TableId, Instant> = HashMap::new();
    let claiming: Arc<dashmap::DashSet<TableId>> = Arc::new(dashmap::DashSet::new());
    let mut reported_dead: HashSet<String> = HashSet::new();
    // Since when this node's renewals have succeeded without a break: another node is judged
    // only over a time this node could see the engine, so an engine outage (an election) that
    // stops everyone's renewals accuses nobody.
    let mut healthy_since: Option<Instant> = None;
    loop {
        interval.tick().await;
        let revision = match cluster.renew(&info).await {
            Ok(revision) => revision,
            Err(error) => {
                warn!(%error, "renewing this node's lease");
                healthy_since = None;
                continue;
            }
        };
        let now = Instant::now();
        let healthy = *healthy_since.get_or_insert(now);
        match cluster.leases_after(revision, tick).await {
            Ok(leases) => {
                for (node, revision) in leases {
                    let entry = seen.entry(node).or_insert(Seen {
                        revision,
                        since: now,
                    });
                    if entry.revision != revision {
                        *entry = Seen {
                            revision,
                            since: now,
                        };
                    }
                }
            }
            Err(error) => {
                warn!(%error, "reading the leases");
                healthy_since = None;
                continue;
            }
        }
        let Some(renewed) = cluster.renewed_at() else {
            continue;
        };
        let dead = |node: &str, seen: &HashMap<String, Seen>| -> bool {
            if cluster.is_me(node) {
                return false;
            }
            // A node never seen counts from this node's start.
            let since = seen.get(node).map_or(cluster.started, |s| s.since);
            renewed.saturating_duration_since(since.max(healthy)) >= cluster.lease
        };
        let live: Vec<String> = std::iter::once(cluster.node.to_string())
            .chain(
                seen.keys()
                    .filter(|n| !cluster.is_me(n) && !dead(n, &seen))
                    .cloned(),
            )
            .collect();
        // A finished table whose owner died is over and closed: it leaves the list.
        let closed: Vec<(TableId, String)> = cluster
            .cache
            .iter()
            .filter(|c| c.entry.finished_at_ms.is_some())
            .filter_map(|c| Some((*c.key(), c.entry.owner.clone()?)))
            .filter(|(_, owner)| dead(owner, &seen))
            .collect();
        for (table, owner) in closed {
            let released = cluster
                .dir_modify(table, |entry| {
                    let still = entry.owner.as_deref() == Some(owner.as_str());
                    if still {
                        entry.owner = None;
                    }
                    still
                })
                .await;
            if let Err(error) = released {
                warn!(%table, %error, "releasing a dead node's finished table");
            }
        }
        let mut still_orphans = HashSet::new();
        let candidates: Vec<(TableId, String)> = cluster
            .cache
            .iter()
            .filter(|c| c.entry.finished_at_ms.is_none())
            .filter_map(|c| Some((*c.key(), c.entry.owner.clone()?)))
            .filter(|(_, owner)| dead(owner, &seen))
            .collect();
        for (table, owner) in candidates {
            if reported_dead.insert(owner.clone()) {
                let silent = seen
                    .get(&owner)
                    .map_or(Duration::ZERO, |s| now.saturating_duration_since(s.since));
                info!(
                    node = owner,
                    silent_ms = silent.as_millis(),
                    "a node's lease expired: taking over its tables"
                );
            }
            still_orphans.insert(table);
            let since = *orphans.entry(table).or_insert(now);
            let mine =
                chosen(table, live.iter().map(String::as_str)).is_some_and(|n| cluster.is_me(n));
            let overdue = now.saturating_duration_since(since) > cluster.lease * 2;
            if (mine || overdue) && claiming.insert(table) {
                let (shared, claiming) = (Arc::clone(&shared), Arc::clone(&claiming));
                let cluster = Arc::clone(&cluster);
                tokio::spawn(async move {
                    match adopt(&shared, &cluster, table, Some(owner.clone())).await {
                        Ok(true) => {
                            Metrics::add(&cluster.metrics.takeovers, 1);
                            info!(%table, from = owner, "took the table over");
                        }
                        Ok(false) => debug!(%table, "another node claimed the table first"),
                        Err(error) => warn!(%table, %error, "taking a table over"),
                    }
                    claiming.remove(&table);
                });
            }
        }
        orphans.retain(|table, _| still_orphans.contains(table));
        reported_dead.retain(|node| dead(node, &seen));
    }
}

/// Why a table could not be taken over.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AdoptError {
    /// Claiming it, reading its records, finishing or releasing it in the directory.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// Its records were read but its actor could not start on them (`room::take_up`).
    #[error("{0}")]
    TakeUp(#[from] crate::room::RoomError),
}

/// Claims `table` (owned by `from`, a dead node, or by this node's previous run when `from` is
/// `None`), folds its records and starts its actor here. Returns whether this node took it
/// (`false`: another node claimed it first, or it is over).
pub(crate) async fn adopt(
    shared: &Arc<Shared>,
    cluster: &Arc<Cluster>,
    table: TableId,
    from: Option<String>,
) -> Result<bool, AdoptError> {
    let Some((stored, log)) = cluster.claim(table, from).await? else {
        return Ok(false);
    };
    let taken = crate::room::take_up(shared, stored, Box::new(log)).await?;
    match taken {
        TakenUp::Finished {
            at_ms,
            seq,
            stage,
            credits,
            climb,
        } => {
            // Over already: its finishing mark reached the journal, but its credits or its
            // directory entry may not have.
            cluster
                .finish_table(table, at_ms, seq, stage, &credits, climb.as_ref())
                .await?;
            cluster.release(table).await?;
            Ok(false)
        }
        TakenUp::Started { seq } => {
            info!(%table, seq, "table adopted");
            let _ = cluster.changes.send(table);
            Ok(true)
        }
    }
}

/// At start: takes back the tables the directory says this node owns (a node restarted under
/// the same name).
pub(crate) async fn adopt_own(
    shared: &Arc<Shared>,
    cluster: &Arc<Cluster>,
) -> Result<(), ClusterError> {
    crate::cluster::load_directory(cluster).await?;
    let own: Vec<TableId> = cluster
        .cache
        .iter()
        .filter(|c| c.entry.finished_at_ms.is_none())
        .filter(|c| c.entry.owner.as_deref().is_some_and(|o| cluster.is_me(o)))
        .map(|c| *c.key())
        .collect();
    // Finished tables this node ran before it stopped are closed now.
    let closed: Vec<TableId> = cluster
        .cache
        .iter()
        .filter(|c| c.entry.finished_at_ms.is_some())
        .filter(|c| c.entry.owner.as_deref().is_some_and(|o| cluster.is_me(o)))
        .map(|c| *c.key())
        .collect();
    for table in closed {
        cluster.release(table).await?;
    }
    for table in own {
        if let Err(error) = adopt(shared, cluster, table, None).await {
            error!(%table, %error, "taking back a table of this node");
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;
    use crate::durability::Durability;
    use crate::journal::Journal;
    use crate::store::{Store, TableRecord};
    use grand_melee_e2e::nats::{NATS_PATIENCE, NatsCluster};

    #[tokio::test(flavor = "multi_thread")]
    async fn the_leases_are_read_from_the_watch_only_once_it_shows_this_nodes_renewal() {
        let nats = NatsCluster::start(1).await;
        let connect = |name: &str| {
            let config = ServerConfig {
                node_id: Some(name.to_owned()),
                cluster_replicas: 1,
                ..ServerConfig::default()
            };
            let urls = nats.urls();
            async move {
                Cluster::connect(&config, &urls, Arc::new(Metrics::default()))
                    .await
                    .unwrap()
            }
        };
        let (a, b) = (connect("a").await, connect("b").await);
        let info = NodeInfo {
            url: "http://a".to_owned(),
            started_at_ms: 1,
        };
        let patience = Duration::from_millis(300);

        // Nobody watches yet: a renewal is not enough, the leases are not known.
        let renewed = a.renew(&info).await.unwrap();
        let error = a.leases_after(renewed, patience).await.unwrap_err();
        assert!(matches!(error, ClusterError::LeaseWatchBehind), "{error:?}");

        // The watch shows every node's lease at its last revision.
        let watching = tokio::spawn(watch_leases(Arc::clone(&a)));
        let b_renewed = b.renew(&info).await.unwrap();
        let renewed = a.renew(&info).await.unwrap();
        let mut leases = a.leases_after(renewed, NATS_PATIENCE).await.unwrap();
        leases.sort();
        assert_eq!(
            leases,
            vec![("a".to_owned(), renewed), ("b".to_owned(), b_renewed)]
        );
        // A renewal of b's since is seen at the next look.
        let b_again = b.renew(&info).await.unwrap();
        let renewed = a.renew(&info).await.unwrap();
        let leases = a.leases_after(renewed, NATS_PATIENCE).await.unwrap();
        assert!(leases.contains(&("b".to_owned(), b_again)), "{leases:?}");
        assert!(b_again > b_renewed);

        // The watch stopped: a renewal it cannot show is refused, not answered with old leases.
        watching.abort();
        let _ = watching.await;
        let renewed = a.renew(&info).await.unwrap();
        let error = a.leases_after(renewed, patience).await.unwrap_err();
        assert!(matches!(error, ClusterError::LeaseWatchBehind), "{error:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_table_that_cannot_be_taken_over_says_why() {
        let nats = NatsCluster::start(1).await;
        let dir = tempfile::tempdir().unwrap();
        let config = ServerConfig {
            node_id: Some("a".to_owned()),
            cluster_replicas: 1,
            ..ServerConfig::default()
        };
        let metrics = Arc::new(Metrics::default());
        let cluster = Cluster::connect(&config, &nats.urls(), Arc::clone(&metrics))
            .await
            .unwrap();
        let journal = Journal::open(dir.path(), Durability::Normal).unwrap();
        let shared = Arc::new(Shared::new(
            config,
            journal,
            Some(Arc::clone(&cluster)),
            Arc::new(Arc::clone(&cluster)),
            Arc::new(crate::proxy::ClusterPeers(Arc::clone(&cluster))),
            metrics,
            crate::origin::OriginPolicy::default(),
        ));

        // Records whose settings do not decode: claimed, but its actor cannot start.
        let table = TableId::new_random();
        let record = TableRecord {
            id: table,
            name: "unreadable".to_owned(),
            password: None,
            settings: vec![1],
            created_at_ms: 1,
            league: None,
        };
        let summary = grand_melee_protocol::TableSummary::new(
            table,
            "unreadable",
            &grand_melee_protocol::Settings::default(),
        );
        cluster.create_table(record, summary).await.unwrap();
        let error = adopt(&shared, &cluster, table, None).await.unwrap_err();
        assert!(
            matches!(
                &error,
                AdoptError::TakeUp(crate::room::RoomError::Settings(_))
            ),
            "{error:?}"
        );

        // A directory entry with no records behind it: the claim itself fails.
        let empty = TableId::new_random();
        let mut entry = cluster.cache.get(&table).unwrap().entry.clone();
        entry.epoch = 1;
        cluster.dir_create(empty, &entry).await.unwrap();
        let error = adopt(&shared, &cluster, empty, None).await.unwrap_err();
        assert!(
            matches!(error, AdoptError::Cluster(ClusterError::NoRecords)),
            "{error:?}"
        );
        assert_eq!(error.to_string(), "the table has no records");
    }
}
