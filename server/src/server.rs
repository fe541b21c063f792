//! The accept loop and what every task shares.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

use crate::config::ServerConfig;
use crate::connection;
use crate::journal::Journal;
use crate::lobby::Shared;
use crate::metrics::Metrics;
use crate::origin::OriginPolicy;

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// Automatic HTTPS (`--acme-domain`): what obtains and renews the certificate.
    acme: Option<crate::acme::Acme>,
    /// Automatic HTTPS: the plain-http listener that redirects to https.
    redirect: Option<TcpListener>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listener", &self.listener)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Opens the journal in `config.data_dir`, rebuilds every unfinished table from it, and binds
    /// the listening socket (port 0 picks a free port).
    pub async fn bind(config: ServerConfig) -> std::io::Result<Self> {
        config.ice().map_err(std::io::Error::other)?;
        if config.backup_dir.is_some() && config.cluster.is_some() {
            return Err(std::io::Error::other(
                "--backup-dir backs up the SQLite journal, which cluster mode does not use: \
                 back up the NATS servers' JetStream instead",
            ));
        }
        let (dir, durability) = (config.data_dir.clone(), config.durability);
        let journal = tokio::task::spawn_blocking(move || Journal::open(&dir, durability))
            .await
            .map_err(std::io::Error::other)?
            .map_err(|error| {
                std::io::Error::other(format!("journal in {}: {error}", config.data_dir.display()))
            })?;
        journal.set_commit_spacing(Duration::from_millis(config.commit_spacing_ms));
        // Automatic HTTPS: the certificate's names are the domains, and the public URL follows
        // from the first one unless given.
        let mut config = config;
        let acme = if config.acme_domains.is_empty() {
            None
        } else {
            if config.cluster.is_some() {
                return Err(std::io::Error::other(
                    "--acme-domain is for a single server: in cluster mode give each node \
                     --tls-cert and --tls-key, or put them behind a reverse proxy",
                ));
            }
            if config.public_url.is_none() {
                config.public_url = crate::acme::public_url(&config);
            }
            Some(crate::acme::new(&config)?)
        };
        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => Some(crate::tls::acceptor(cert, key)?),
            (None, None) => acme.as_ref().map(|acme| crate::tls::Tls {
                acceptor: acme.acceptor.clone(),
                dns_names: config.acme_domains.clone(),
            }),
            _ => {
                return Err(std::io::Error::other(
                    "--tls-cert and --tls-key go together: give both or neither",
                ));
            }
        };
        let origins = OriginPolicy::new(
            &config.allowed_origins,
            config.public_url.as_deref(),
            tls.as_ref().map_or(&[][..], |tls| &tls.dns_names),
        )
        .map_err(std::io::Error::other)?;
        if let Some(tls) = &tls
            && tls.dns_names.is_empty()
            && !config.allowed_origins.is_empty()
            && config.public_url.is_none()
        {
            warn!(
                "the TLS certificate names no DNS name: under --allowed-origins, a page opened \
                 by a host name needs --public-url (or that origin listed) to connect"
            );
        }
        if let Some(everyone) = config
            .trusted_proxies
            .iter()
            .find(|range| range.to_string().ends_with("/0"))
        {
            warn!(
                range = %everyone,
                "--trusted-proxy trusts every address: any client can name any address in \
                 X-Forwarded-For and pass every per-address cap and ban; list only the proxy"
            );
        }
        if !config.trusted_proxies.is_empty()
            && !config.allowed_origins.is_empty()
            && config.public_url.is_none()
        {
            warn!(
                "--trusted-proxy without --public-url: under --allowed-origins, a page opened \
                 through the proxy can connect only if its origin is listed"
            );
        }
        let tls = tls.map(|tls| tls.acceptor);
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|error| bind_error(error, config.listen, "--listen"))?;
        // From here on `listen` is the address really listened on (its port too, when the
        // configuration said 0): the invitation and the cluster's node address name it.
        config.listen = listener.local_addr()?;
        let redirect = match (&acme, config.redirect_listen) {
            (Some(_), crate::config::Redirect::At(address)) => Some(
                TcpListener::bind(address)
                    .await
                    .map_err(|error| bind_error(error, address, "--redirect-listen"))?,
            ),
            _ => None,
        };
        let metrics = Arc::new(Metrics::with_journal(journal.stats()));
        let cluster = match &config.cluster {
            Some(urls) => Some(
                crate::cluster::Cluster::connect(&config, urls, Arc::clone(&metrics))
                    .await
                    .map_err(std::io::Error::other)?,
            ),
            None => None,
        };
        // The one place that picks the store: the engine in cluster mode, else the journal.
        let (store, peers): (Arc<dyn crate::store::Store>, Arc<dyn crate::lobby::Peers>) =
            match &cluster {
                Some(cluster) => (
                    Arc::new(Arc::clone(cluster)),
                    Arc::new(crate::proxy::ClusterPeers(Arc::clone(cluster))),
                ),
                None => (Arc::new(journal.clone()), Arc::new(crate::lobby::Alone)),
            };
        let shared = Arc::new(Shared::new(
            config, journal, cluster, store, peers, metrics, origins,
        ));
        // Cluster mode takes back the tables the directory says this node owns; a single
        // server rebuilds every unfinished table from its journal.
        match &shared.cluster {
            Some(cluster) => crate::node::adopt_own(&shared, cluster)
                .await
                .map_err(std::io::Error::other)?,
            None => crate::room::recover_all(&shared)
                .await
                .map_err(std::io::Error::other)?,
        }
        if let Some(cluster) = &shared.cluster {
            crate::node::start(&shared, cluster);
        }
        Ok(Self {
            listener,
            shared,
            tls,
            acme,
            redirect,
        })
    }

    /// Where plain http is redirected to https from (`--redirect-listen` with `--acme-domain`).
    pub fn redirect_addr(&self) -> Option<SocketAddr> {
        self.redirect.as_ref()?.local_addr().ok()
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The server's counters (the same ones `GET /metrics` shows).
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.shared.metrics)
    }

    /// Serves until `shutdown` completes, then stops accepting, stops every table, closes every
    /// WebSocket with 1001 (going away) after what was queued for it, and returns once every
    /// task has finished and the journal is closed.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let Self {
            listener,
            shared,
            tls,
            acme,
            redirect,
        } = self;
        let permits = Arc::new(Semaphore::new(shared.config.max_connections));
        let scheme = if tls.is_some() { "https" } else { "http" };
        match listener.local_addr() {
            Ok(addr) => info!(%addr, "listening: open {scheme}://{addr}/ in a browser"),
            Err(error) => warn!(%error, "listening on an unknown address"),
        }
        tokio::pin!(shutdown);
        shared
            .tasks
            .spawn(maintenance(Arc::clone(&shared), shared.shutdown.clone()));
        if let Some(acme) = acme {
            shared.tasks.spawn(crate::acme::drive(
                acme,
                Arc::clone(&shared.metrics),
                shared.shutdown.clone(),
            ));
        }
        if let Some(redirect) = redirect {
            if let Ok(addr) = redirect.local_addr() {
                info!(%addr, "redirecting plain http to https");
            }
            shared.tasks.spawn(crate::acme::redirect(
                redirect,
                shared.config.acme_domains.clone(),
                shared.config.listen.port(),
                shared.tasks.clone(),
                shared.shutdown.clone(),
            ));
        }
        if let Some(dir) = shared.config.backup_dir.clone() {
            shared.tasks.spawn(scheduled_backups(
                Arc::clone(&shared),
                dir,
                shared.shutdown.clone(),
            ));
        }
        loop {
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Out of file descriptors and the like: back off briefly instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            Metrics::add(&shared.metrics.connections_total, 1);
            // A connection from a trusted proxy takes no place under the per-address cap here:
            // its client is known once its handshake is read (`http::accept`), and its plain
            // HTTP requests may be for any number of clients.
            let from_proxy = crate::forwarded::trusts(&shared.config.trusted_proxies, peer.ip());
            let admitted = Arc::clone(&permits)
                .try_acquire_owned()
                .ok()
                .and_then(|permit| {
                    if from_proxy {
                        return Some((permit, None));
                    }
                    Some((permit, Some(shared.admit_ip(peer.ip())?)))
                });
            let Some((permit, slot)) = admitted else {
                Metrics::add(&shared.metrics.connections_refused, 1);
                shared.tasks.spawn(refuse(stream, tls.is_some()));
                continue;
            };
            let shared2 = Arc::clone(&shared);
            let tls = tls.clone();
            // The places under the caps go with the connection, to its session.
            shared.tasks.spawn(connection::serve(
                stream,
                peer,
                shared2,
                tls,
                (slot, permit),
            ));
        }
        info!("shutting down");
        drop(listener);
        // Tables first: each finishes the request in hand (its events made durable and queued),
        // then stops. Then the connections: each delivers what is queued and closes with 1001.
        shared.stop_tables.cancel();
        shared.table_tasks.close();
        shared.table_tasks.wait().await;
        shared.shutdown.cancel();
        shared.tasks.close();
        shared.tasks.wait().await;
        if let Err(error) = shared.journal.clone().close().await {
            warn!(%error, "closing the journal");
        }
        info!("stopped");
    }
}

/// How often the server tidies up: forgets rate-limit state that has refilled and deletes
/// replays past `--replay-retention-days`.
const MAINTENANCE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

/// Tidies up at start and then every [`MAINTENANCE_INTERVAL`] until the server stops: forgets
/// refilled rate-limit state, and deletes the finished games older than
/// `--replay-retention-days` (0: kept forever). The first round always runs to its end, even if
/// the server is stopping already.
async fn maintenance(shared: Arc<Shared>, stop: CancellationToken) {
    let mut interval = tokio::time::interval(MAINTENANCE_INTERVAL);
    // The first tick completes at once.
    interval.tick().await;
    loop {
        shared.budgets.sweep(std::time::Instant::now());
        let days = shared.config.replay_retention_days;
        if days > 0 {
            if shared.journal.damage().is_some() {
                warn!(
                    retention_days = days,
                    "replay retention is suspended while the journal is damaged"
                );
            } else {
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |now| u64::try_from(now.as_millis()).unwrap_or(u64::MAX));
                let cutoff = now_ms.saturating_sub(u64::from(days) * 86_400_000);
                match shared.store.prune_replays(cutoff).await {
                    Ok(0) => debug!(retention_days = days, "no replay past its retention"),
                    Ok(count) => {
                        Metrics::add(&shared.metrics.replays_pruned, count);
                        info!(
                            count,
                            retention_days = days,
                            "deleted replays past their retention"
                        );
                    }
                    Err(error) => warn!(%error, retention_days = days, "pruning old replays"),
                }
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            _ = interval.tick() => {}
        }
    }
}

/// Backs the journal up into `dir` every `--backup-every` (the first one interval after start),
/// keeping the newest `--backup-keep`, until the server stops. A backup runs on a blocking
/// thread and reads the journal in one read transaction: play goes on meanwhile.
async fn scheduled_backups(shared: Arc<Shared>, dir: std::path::PathBuf, stop: CancellationToken) {
    let every = shared.config.backup_every;
    let keep = usize::try_from(shared.config.backup_keep).unwrap_or(usize::MAX);
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    info!(dir = %dir.display(), every_secs = every.as_secs(), keep, "scheduled backups");
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = interval.tick() => {}
        }
        let (data, into) = (shared.config.data_dir.clone(), dir.clone());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |now| now.as_secs());
        let made =
            tokio::task::spawn_blocking(move || crate::backup::scheduled(&data, &into, keep, now))
                .await;
        match made {
            Ok(Ok(made)) => {
                Metrics::add(&shared.metrics.backups, 1);
                info!(path = %made.path.display(), bytes = made.bytes, "backed up the journal");
            }
            Ok(Err(error)) => {
                Metrics::add(&shared.metrics.backup_failures, 1);
                error!(dir = %dir.display(), %error, "backing up the journal failed");
            }
            Err(error) => {
                Metrics::add(&shared.metrics.backup_failures, 1);
                error!(dir = %dir.display(), %error, "backing up the journal failed");
            }
        }
    }
}

/// A listening socket that could not be opened, said with what to do about it.
fn bind_error(error: std::io::Error, address: SocketAddr, flag: &str) -> std::io::Error {
    let hint = match error.kind() {
        std::io::ErrorKind::PermissionDenied if address.port() < 1024 => {
            " (ports below 1024 need root or the capability CAP_NET_BIND_SERVICE: \
             the systemd unit in deploy/ grants it)"
        }
        std::io::ErrorKind::AddrInUse => {
            " (another program listens there: stop it or pick another port)"
        }
        _ => "",
    };
    std::io::Error::new(error.kind(), format!("{flag} {address}: {error}{hint}"))
}

/// Answers a connection over the cap with 503 and closes it (over TLS, just closes it: a
/// plain answer would only be noise to a TLS client).
async fn refuse(mut stream: TcpStream, tls: bool) {
    if tls {
        let _ = stream.shutdown().await;
        return;
    }
    let answer = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 12\r\nConnection: close\r\n\r\nserver full\n";
    if let Err(error) = stream.write_all(answer).await {
        debug!(%error, "refusing a connection");
    }
    let _ = stream.shutdown().await;
}
