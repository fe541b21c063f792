//! A table's stand-in on a node that does not own it, and the owner's side of the same link.
//!
//! The stand-in (`Proxy`) is registered in the node's table registry like a table actor, so a
//! connection cannot tell the difference: it sends the same [`RoomMsg`]s. The proxy forwards
//! them to the owner's `gm.t.<table>.in` and delivers what the owner publishes on
//! `gm.t.<table>.out` (once per request it carried out, for every node) to its own members.
//! When the directory names a new owner, the proxy enters each member again at the new owner
//! (players resume with their seat token, spectators watch), quietly: the client keeps its
//! connection and receives a fresh snapshot. If this node becomes the owner, the proxy hands
//! its members to the local actor and forwards to it from then on.
//!
//! On the owner, [`serve_inbound`] turns the requests of other nodes' clients into the actor's
//! messages, with a stand-in [`Conn`] per remote connection (`Conn::remote`), whose frames the
//! actor publishes on the outbound subject instead of queueing them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use grand_melee_protocol::TableSummary;
use grand_melee_protocol::{self as wire, ErrorCode, SeatToken, ServerMessage, TableId, close};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::{debug, info, warn};

use crate::cluster::{
    Cluster, EnterReply, InMessage, Inbound, OutItem, RemoteEntry, decode, encode,
};
use crate::conn::{Conn, Link, Remote};
use crate::lobby::{Enter, Entry, RoomMsg, Shared, TableEntry};
use crate::metrics::Metrics;
use crate::outbox::{Frame, Outbox};
use grand_melee_protocol::session::Role;

/// How long a proxy waits for an owner's answer to an entry (and for a moving table's next
/// owner).
const ENTER_PATIENCE: Duration = Duration::from_secs(10);

/// How long a member's quiet re-entry at a table's new owner keeps trying (the new owner may
/// still be folding the table).
const REENTRY_PATIENCE: Duration = Duration::from_secs(20);

/// How often an entry waiting for a moving table's next owner tries again meanwhile.
const MOVING_PAUSE: Duration = Duration::from_millis(200);

/// Finds or starts the stand-in of `table` on this node, if the directory knows the table and
/// another node owns it. Returns the way into it.
pub(crate) fn open(shared: &Arc<Shared>, table: TableId) -> Option<()> {
    let cluster = shared.cluster.as_ref()?;
    let cached = cluster.cache.get(&table)?.clone();
    let owner = cached.entry.owner.clone()?;
    if cluster.is_me(&owner) {
        return None;
    }
    let mut started = false;
    shared.tables.entry(table).or_insert_with(|| {
        started = true;
        let (tx, rx) = mpsc::channel(shared.config.table_queue.max(1));
        let summary = watch::channel(cached.entry.summary.clone());
        let proxy = Proxy {
            table,
            shared: Arc::clone(shared),
            cluster: Arc::clone(cluster),
            target: Target::Remote(owner.clone()),
            epoch: cached.entry.epoch,
            members: HashMap::new(),
            summary: summary.0,
            me: tx.downgrade(),
            last_seq: None,
            target_now: watch::channel(Target::Remote(owner.clone())).0,
        };
        let client = cluster.client.clone();
        let changes = cluster.changes.subscribe();
        shared.table_tasks.spawn(async move {
            match client
                .subscribe(crate::cluster::outbound_subject(table))
                .await
            {
                Ok(subscriber) => proxy.run(rx, subscriber, changes).await,
                Err(error) => warn!(%table, %error, "subscribing to a table's outbound subject"),
            }
        });
        TableEntry {
            tx,
            summary: summary.1,
            password: cached.entry.password.as_deref().map(Arc::from),
        }
    });
    if started {
        Metrics::add(&cluster.metrics.proxies_started, 1);
        debug!(%table, owner, "proxying a table owned by another node");
    }
    Some(())
}

/// Where a proxy forwards to.
#[derive(Debug, Clone)]
enum Target {
    /// The owner is another node.
    Remote(String),
    /// This node took the table over: its actor.
    Local(mpsc::Sender<RoomMsg>),
    /// This node claimed the table and its actor is starting.
    Pending,
}

/// How a member enters again when the table moves.
#[derive(Debug, Clone)]
enum Reentry {
    Resume(SeatToken),
    Watch,
}

#[derive(Debug)]
struct Member {
    conn: Conn,
    /// The last event its snapshot included (`None` until the owner admitted it).
    since: Option<u64>,
    /// Known once the owner answered its entry.
    reentry: Option<Reentry>,
}

/// A finished entry: the member's connection and what the owner said.
type Entered = (u64, Result<(Role, Option<SeatToken>), ErrorCode>);

struct Proxy {
    table: TableId,
    shared: Arc<Shared>,
    cluster: Arc<Cluster>,
    target: Target,
    epoch: u64,
    members: HashMap<u64, Member>,
    summary: watch::Sender<wire::TableSummary>,
    me: mpsc::WeakSender<RoomMsg>,
    /// The last event delivered (to find a gap: messages the engine dropped).
    last_seq: Option<u64>,
    /// `target` as entries under way see it: one that finds the table between owners waits
    /// for the next.
    target_now: watch::Sender<Target>,
}

impl Proxy {
    async fn run(
        mut self,
        mut rx: mpsc::Receiver<RoomMsg>,
        mut out: async_nats::Subscriber,
        mut changes: broadcast::Receiver<TableId>,
    ) {
        let (entered_tx, mut entered) = mpsc::unbounded_channel::<Entered>();
        let stop = self.shared.stop_tables.clone();
        let mut losses = self.cluster.losses.subscribe();
        losses.borrow_and_update();
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                Ok(()) = losses.changed() => {
                    losses.borrow_and_update();
                    if !matches!(self.target, Target::Pending) {
                        info!(table = %self.table, "messages may be lost: re-entering every member");
                        self.reenter_all(&entered_tx);
                    }
                }
                message = rx.recv() => {
                    let Some(message) = message else { break };
                    self.forward(message, &entered_tx).await;
                }
                Some((conn, result)) = entered.recv() => self.entered(conn, result),
                Some(message) = out.next() => {
                    let Some(items) = decode::<Vec<OutItem>>(&message.payload) else {
                        warn!(table = %self.table, "an unreadable outbound message");
                        continue;
                    };
                    self.deliver(items, &entered_tx);
                }
                change = changes.recv() => match change {
                    Ok(table) if table != self.table => {}
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        if self.directory_changed(&entered_tx) {
                            break;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
            }
        }
        // Whoever still uses this stand-in is told to come back.
        for member in self.members.values() {
            member.conn.close(close::TABLE_MOVED);
        }
        let me = self.me.clone();
        self.shared.tables.remove_if(&self.table, |_, entry| {
            me.upgrade().is_some_and(|tx| tx.same_channel(&entry.tx))
        });
        debug!(table = %self.table, "proxy ended");
    }

    /// Forwards a member's message to the owner.
    async fn forward(&mut self, message: RoomMsg, entered: &mpsc::UnboundedSender<Entered>) {
        match message {
            RoomMsg::Enter(enter) => {
                let Enter {
                    conn,
                    request_id,
                    entry,
                    reply,
                    quiet,
                } = *enter;
                let id = conn.id;
                let remote = match &entry {
                    Entry::Join {
                        name,
                        entropy,
                        league,
                        ..
                    } => RemoteEntry::Join {
                        name: name.clone(),
                        entropy: entropy.clone(),
                        deck: league.as_ref().map(|seat| seat.deck.clone()),
                    },
                    Entry::Watch => RemoteEntry::Watch,
                    Entry::Resume { token } => RemoteEntry::Resume { token: *token },
                };
                self.members.insert(
                    id,
                    Member {
                        conn: conn.clone(),
                        since: None,
                        reentry: None,
                    },
                );
                let entering = self.entering();
                let target = self.target_now.subscribe();
                let entered = entered.clone();
                tokio::spawn(async move {
                    let result = entering
                        .enter_while_moving(target, ENTER_PATIENCE, conn, request_id, remote, quiet)
                        .await;
                    let _ = reply.send(result);
                    let _ = entered.send((id, result));
                });
            }
            RoomMsg::Request {
                connection,
                request,
                received,
            } => {
                if !self.members.contains_key(&connection) {
                    return;
                }
                Metrics::add(&self.cluster.metrics.routed_requests, 1);
                match &self.target {
                    Target::Local(tx) => {
                        let _ = tx
                            .send(RoomMsg::Request {
                                connection,
                                request,
                                received,
                            })
                            .await;
                    }
                    Target::Remote(_) => {
                        let bytes = wire::encode_client(&request);
                        let peer = self.members[&connection].conn.peer;
                        self.publish(connection, peer, InMessage::Request { request: bytes })
                            .await;
                    }
                    Target::Pending => {
                        if let Some(member) = self.members.get(&connection) {
                            member.conn.reject(Some(&request), ErrorCode::ServerBusy);
                        }
                    }
                }
            }
            RoomMsg::Leave {
                connection,
                request_id,
                reply,
            } => {
                if let Some(member) = self.members.remove(&connection) {
                    match &self.target {
                        Target::Local(tx) => {
                            let (r, answer) = oneshot::channel();
                            let _ = tx
                                .send(RoomMsg::Leave {
                                    connection,
                                    request_id,
                                    reply: r,
                                })
                                .await;
                            let _ = answer.await;
                        }
                        _ => {
                            let peer = member.conn.peer;
                            self.publish(connection, peer, InMessage::Leave { request_id })
                                .await;
                            member.conn.send_message(&ServerMessage::Left {
                                reply_to: request_id,
                            });
                        }
                    }
                }
                let _ = reply.send(());
            }
            RoomMsg::Gone { connection } => {
                if let Some(member) = self.members.remove(&connection) {
                    match &self.target {
                        Target::Local(tx) => {
                            let _ = tx.send(RoomMsg::Gone { connection }).await;
                        }
                        _ => {
                            self.publish(connection, member.conn.peer, InMessage::Gone)
                                .await;
                        }
                    }
                }
            }
            RoomMsg::Lost => {}
        }
    }

    /// What an entry at the current target needs.
    fn entering(&self) -> ProxyEnter {
        ProxyEnter {
            target: self.target.clone(),
            client: self.cluster.client.clone(),
            subject: crate::cluster::inbound_subject(self.table),
            node: self.cluster.node.to_string(),
        }
    }

    /// Publishes a member's message to the owner.
    async fn publish(&self, conn: u64, peer: IpAddr, message: InMessage) {
        let inbound = Inbound {
            node: self.cluster.node.to_string(),
            conn,
            peer,
            message,
        };
        if let Err(error) = self
            .cluster
            .client
            .publish(
                crate::cluster::inbound_subject(self.table),
                encode(&inbound),
            )
            .await
        {
            warn!(table = %self.table, %error, "forwarding to a table's owner");
        }
    }

    /// An entry was answered.
    fn entered(&mut self, conn: u64, result: Result<(Role, Option<SeatToken>), ErrorCode>) {
        match result {
            Ok((role, token)) => {
                if let Some(member) = self.members.get_mut(&conn) {
                    member.reentry = match (role, token) {
                        (Role::Player(_), Some(token)) => Some(Reentry::Resume(token)),
                        _ => Some(Reentry::Watch),
                    };
                    // A client that can go to the owner itself saves every request a hop.
                    if let Target::Remote(owner) = &self.target
                        && let Some(url) = self.cluster.served_at(owner)
                    {
                        Metrics::add(&self.cluster.metrics.clients_sent_to_owner, 1);
                        member.conn.send_message(&ServerMessage::ServedAt {
                            table: self.table,
                            url,
                        });
                    }
                }
            }
            Err(code) => {
                if let Some(member) = self.members.remove(&conn)
                    && member.reentry.is_some()
                {
                    // A re-entry failed: the client comes back by itself.
                    info!(table = %self.table, connection = conn, ?code, "re-entering a member failed");
                    member.conn.close(close::TABLE_MOVED);
                }
            }
        }
    }

    /// Delivers what the owner published.
    fn deliver(&mut self, items: Vec<OutItem>, entered: &mpsc::UnboundedSender<Entered>) {
        let me = &*self.cluster.node;
        let (mut frames, mut bytes) = (0, 0);
        for item in items {
            match item {
                OutItem::Events {
                    first_seq,
                    last_seq,
                    frame,
                } => {
                    // The owner publishes every batch while a member here has a snapshot (so
                    // batches are consecutive only then).
                    if !self.members.values().any(|m| m.since.is_some()) {
                        self.last_seq = None;
                    }
                    if let Some(last) = self.last_seq
                        && first_seq > last + 1
                    {
                        warn!(table = %self.table, last, first_seq, "events missing: re-entering every member");
                        self.last_seq = Some(last_seq);
                        self.reenter_all(entered);
                        return;
                    }
                    self.last_seq = Some(last_seq.max(self.last_seq.unwrap_or(0)));
                    let frame = Frame::binary(&frame);
                    for member in self.members.values() {
                        if member.since.is_some_and(|since| since < last_seq)
                            && member.conn.send(&frame)
                        {
                            frames += 1;
                            bytes += frame.payload().len();
                        }
                    }
                }
                OutItem::Admitted {
                    node,
                    conn,
                    since_seq,
                } if node == me => {
                    if !self.members.values().any(|m| m.since.is_some()) {
                        self.last_seq = None;
                    }
                    if let Some(member) = self.members.get_mut(&conn) {
                        member.since = Some(since_seq);
                    }
                    self.last_seq = Some(since_seq.max(self.last_seq.unwrap_or(0)));
                }
                OutItem::Direct { node, conn, frame } if node == me => {
                    if let Some(member) = self.members.get(&conn) {
                        let len = frame.len();
                        if member.conn.send(&Frame::binary(&frame)) {
                            frames += 1;
                            bytes += len;
                        }
                    }
                }
                OutItem::Close {
                    node,
                    conn,
                    code,
                    reason,
                } if node == me => {
                    if let Some(member) = self.members.remove(&conn) {
                        member.conn.close_because(code, reason);
                    }
                }
                OutItem::Resync => {
                    if matches!(self.target, Target::Remote(_)) {
                        self.reenter_all(entered);
                        return;
                    }
                }
                _ => {}
            }
        }
        self.shared.metrics.count_out(frames, bytes);
    }

    /// The directory entry changed: follow the owner. Returns whether the proxy should end.
    fn directory_changed(&mut self, entered: &mpsc::UnboundedSender<Entered>) -> bool {
        let Some(cached) = self.cluster.cache.get(&self.table).map(|c| c.clone()) else {
            // The table is gone (abandoned and deleted).
            return self.members.is_empty();
        };
        self.summary.send_replace(cached.entry.summary.clone());
        let Some(owner) = cached.entry.owner.clone() else {
            // The game is over: the owner ran it to the end; members stay until they leave.
            return self.members.is_empty();
        };
        let target = if self.cluster.is_me(&owner) {
            let me = self.me.upgrade();
            match self.shared.tables.get(&self.table) {
                Some(entry) if !me.is_some_and(|tx| tx.same_channel(&entry.tx)) => {
                    Target::Local(entry.tx.clone())
                }
                _ => Target::Pending,
            }
        } else {
            Target::Remote(owner.clone())
        };
        let moved = match (&self.target, &target) {
            (Target::Remote(a), Target::Remote(b)) => a != b || cached.entry.epoch != self.epoch,
            (Target::Local(_), Target::Local(_)) => false,
            (Target::Pending, Target::Pending) => false,
            _ => true,
        };
        if !moved {
            return false;
        }
        info!(table = %self.table, owner, epoch = cached.entry.epoch, "the table moved: re-entering its members");
        self.target = target;
        self.target_now.send_replace(self.target.clone());
        self.epoch = cached.entry.epoch;
        if !matches!(self.target, Target::Pending) {
            self.reenter_all(entered);
        }
        false
    }

    /// Enters every member again at the current target, quietly.
    fn reenter_all(&mut self, entered: &mpsc::UnboundedSender<Entered>) {
        self.last_seq = None;
        let entering = self.entering();
        for member in self.members.values_mut() {
            member.since = None;
            let Some(reentry) = member.reentry.clone() else {
                // Its first entry is still under way: if the old owner cannot answer it, it
                // follows the target by itself (`enter_while_moving`).
                continue;
            };
            let entry = match reentry {
                Reentry::Resume(token) => RemoteEntry::Resume { token },
                Reentry::Watch => RemoteEntry::Watch,
            };
            let id = member.conn.id;
            // The new owner may still be starting (folding the table): it is given longer.
            let answer = entering.clone().enter_while_moving(
                self.target_now.subscribe(),
                REENTRY_PATIENCE,
                member.conn.clone(),
                0,
                entry,
                true,
            );
            let entered = entered.clone();
            tokio::spawn(async move {
                let _ = entered.send((id, answer.await));
            });
        }
    }
}

/// What an entry needs, detached from the proxy (for re-entries running on their own).
#[derive(Clone)]
struct ProxyEnter {
    target: Target,
    client: async_nats::Client,
    subject: String,
    node: String,
}

impl ProxyEnter {
    /// [`enter`](Self::enter), but an entry that finds the table between owners (the old one
    /// gone, this node or another still claiming it: `server_busy`) waits for the directory to
    /// name the next owner and enters there, for at most `patience`: a client that
    /// resumes while its table moves is answered once, when the table is back, instead of
    /// being told to try again.
    async fn enter_while_moving(
        mut self,
        mut target: watch::Receiver<Target>,
        patience: Duration,
        conn: Conn,
        request_id: u32,
        entry: RemoteEntry,
        quiet: bool,
    ) -> EnterReply {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let result = self
                .enter(conn.clone(), request_id, entry.clone(), quiet)
                .await;
            if !matches!(result, Err(ErrorCode::ServerBusy))
                || tokio::time::Instant::now() >= deadline
            {
                return result;
            }
            // A new owner named, or a short pause (a new actor may still be starting).
            let pause = tokio::time::sleep(MOVING_PAUSE);
            tokio::select! {
                changed = target.changed() => if changed.is_err() { return result },
                () = pause => {}
            }
            self.target = target.borrow_and_update().clone();
        }
    }

    async fn enter(
        &self,
        conn: Conn,
        request_id: u32,
        entry: RemoteEntry,
        quiet: bool,
    ) -> EnterReply {
        match &self.target {
            Target::Local(tx) => {
                let entry = entry.into_entry();
                let (reply, answer) = oneshot::channel();
                let message = RoomMsg::Enter(Box::new(Enter {
                    conn,
                    request_id,
                    entry,
                    reply,
                    quiet,
                }));
                if tx.send(message).await.is_err() {
                    return Err(ErrorCode::UnknownTable);
                }
                answer.await.unwrap_or(Err(ErrorCode::UnknownTable))
            }
            Target::Remote(_) => {
                let inbound = Inbound {
                    node: self.node.clone(),
                    conn: conn.id,
                    peer: conn.peer,
                    message: InMessage::Enter {
                        request_id,
                        entry,
                        quiet,
                    },
                };
                let request = self.client.request(self.subject.clone(), encode(&inbound));
                match tokio::time::timeout(ENTER_PATIENCE, request).await {
                    Ok(Ok(answer)) => crate::cluster::decode_enter_reply(&answer.payload),
                    // No owner listening (yet): the table is moving to another node.
                    _ => Err(ErrorCode::ServerBusy),
                }
            }
            Target::Pending => Err(ErrorCode::ServerBusy),
        }
    }
}

/// The owner's side: turns what other nodes' clients send into the actor's messages, until
/// `stop`. Each remote connection gets a stand-in [`Conn`] with this node's own connection id.
pub(crate) async fn serve_inbound(
    shared: Arc<Shared>,
    cluster: Arc<Cluster>,
    table: TableId,
    tx: mpsc::WeakSender<RoomMsg>,
    stop: CancellationToken,
    ready: oneshot::Sender<()>,
) {
    let mut subscriber = match cluster
        .client
        .subscribe(crate::cluster::inbound_subject(table))
        .await
    {
        Ok(subscriber) => subscriber,
        Err(error) => {
            warn!(%table, %error, "subscribing to a table's inbound subject");
            return;
        }
    };
    // The subscription is registered with the server once the client flushed it.
    let _ = cluster.client.flush().await;
    let _ = ready.send(());
    let mut conns: HashMap<(String, u64), Conn> = HashMap::new();
    loop {
        let message = tokio::select! {
            () = stop.cancelled() => break,
            message = subscriber.next() => match message {
                Some(message) => message,
                None => break,
            },
        };
        let Some(inbound) = decode::<Inbound>(&message.payload) else {
            warn!(%table, "an unreadable inbound message");
            continue;
        };
        let Some(tx) = tx.upgrade() else { break };
        let key = (inbound.node.clone(), inbound.conn);
        match inbound.message {
            InMessage::Enter {
                request_id,
                entry,
                quiet,
            } => {
                let conn = remote_conn(&shared, &inbound.node, inbound.conn, inbound.peer);
                if let Some(old) = conns.insert(key.clone(), conn.clone()) {
                    // The same connection entering again (the table moved back): the old
                    // membership goes first.
                    let _ = tx.send(RoomMsg::Gone { connection: old.id }).await;
                }
                let entry = entry.into_entry();
                let (reply, answer) = oneshot::channel();
                let sent = tx
                    .send(RoomMsg::Enter(Box::new(Enter {
                        conn,
                        request_id,
                        entry,
                        reply,
                        quiet,
                    })))
                    .await;
                let result: EnterReply = if sent.is_err() {
                    Err(ErrorCode::UnknownTable)
                } else {
                    answer.await.unwrap_or(Err(ErrorCode::UnknownTable))
                };
                if result.is_err() {
                    conns.remove(&key);
                }
                if let Some(reply) = message.reply {
                    let _ = cluster
                        .client
                        .publish(reply, crate::cluster::encode_enter_reply(&result))
                        .await;
                }
            }
            InMessage::Request { request } => {
                let Some(conn) = conns.get(&key) else {
                    continue;
                };
                match wire::decode_client(&request) {
                    Ok(request) => {
                        let _ = tx
                            .send(RoomMsg::Request {
                                connection: conn.id,
                                request: Box::new(request),
                                received: Instant::now(),
                            })
                            .await;
                    }
                    Err(error) => debug!(%table, %error, "an undecodable forwarded request"),
                }
            }
            InMessage::Leave { request_id } => {
                if let Some(conn) = conns.remove(&key) {
                    let (reply, _answer) = oneshot::channel();
                    let _ = tx
                        .send(RoomMsg::Leave {
                            connection: conn.id,
                            request_id,
                            reply,
                        })
                        .await;
                }
            }
            InMessage::Gone => {
                if let Some(conn) = conns.remove(&key) {
                    let _ = tx
                        .send(RoomMsg::Gone {
                            connection: conn.id,
                        })
                        .await;
                }
            }
        }
    }
}

/// The stand-in for a connection held by another node.
fn remote_conn(shared: &Arc<Shared>, node: &str, id: u64, peer: IpAddr) -> Conn {
    // It accepts nothing: the actor sends its frames through the outbound subject.
    Conn::new(Link {
        id: shared.next_connection_id(),
        peer,
        outbox: Outbox::detached(),
        metrics: Arc::clone(&shared.metrics),
        remote: Some(Arc::new(Remote {
            node: Arc::from(node),
            id,
        })),
    })
}

impl RemoteEntry {
    /// The entry as the table's actor takes it.
    pub(crate) fn into_entry(self) -> crate::lobby::Entry {
        use crate::lobby::Entry;
        match self {
            Self::Join {
                name,
                entropy,
                deck,
            } => Entry::Join {
                league: deck.map(|deck| crate::lobby::LeagueSeat {
                    name: name.clone(),
                    deck,
                }),
                name,
                entropy,
                member_token: None,
            },
            Self::Watch => Entry::Watch,
            Self::Resume { token } => Entry::Resume { token },
        }
    }
}

/// The other nodes of the cluster, as the table actors and the connections reach them
/// ([`crate::lobby::Peers`]).
#[derive(Debug)]
pub(crate) struct ClusterPeers(pub Arc<Cluster>);

impl crate::lobby::Peers for ClusterPeers {
    fn serve<'a>(
        &'a self,
        shared: &'a Arc<Shared>,
        table: TableId,
        room: mpsc::WeakSender<RoomMsg>,
        summary: watch::Receiver<TableSummary>,
    ) -> BoxFuture<'a, Option<DropGuard>> {
        Box::pin(async move {
            let stop = CancellationToken::new();
            let (ready, subscribed) = oneshot::channel();
            shared.table_tasks.spawn(serve_inbound(
                Arc::clone(shared),
                Arc::clone(&self.0),
                table,
                room.clone(),
                stop.clone(),
                ready,
            ));
            let _ = subscribed.await;
            shared.table_tasks.spawn(keep_directory(
                Arc::clone(&self.0),
                table,
                summary,
                room,
                stop.clone(),
            ));
            Some(stop.drop_guard())
        })
    }

    fn publish(&self, table: TableId, items: Vec<OutItem>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let subject = crate::cluster::outbound_subject(table);
            if let Err(error) = self.0.client.publish(subject, encode(&items)).await {
                warn!(%table, %error, "publishing to other nodes");
            }
        })
    }

    fn closed(&self, table: TableId) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Err(error) = self.0.release(table).await {
                warn!(%table, %error, "releasing a closed table in the directory");
            }
        })
    }

    /// A table created a moment ago may not have reached this node's copy of the directory
    /// yet, and a copy that names this node (or nobody) as the owner of a table it does not run
    /// is behind (this node gave the table up, say, and has just heard from the engine again):
    /// then asks the directory itself, and keeps its answer unless the copy moved on meanwhile.
    fn reach<'a>(&'a self, shared: &'a Arc<Shared>, table: TableId) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let cluster = &self.0;
            let behind = cluster.cache.get(&table).is_none_or(|cached| {
                cached
                    .entry
                    .owner
                    .as_deref()
                    .is_none_or(|owner| cluster.is_me(owner))
                    && cached.entry.finished_at_ms.is_none()
            });
            if behind && let Ok(Some(fresh)) = cluster.dir_get(table).await {
                match cluster.cache.entry(table) {
                    dashmap::Entry::Occupied(mut kept) => {
                        if kept.get().revision < fresh.revision {
                            kept.insert(fresh);
                        }
                    }
                    dashmap::Entry::Vacant(empty) => {
                        empty.insert(fresh);
                    }
                }
            }
            open(shared, table);
        })
    }
}

/// Cluster mode: keeps the table's directory entry's summary current (seats, spectators,
/// stage) for every node's table list, as long as this node owns it; tells the actor to give
/// the table up if the directory names another owner.
async fn keep_directory(
    cluster: Arc<Cluster>,
    table: TableId,
    mut summary: watch::Receiver<TableSummary>,
    room: mpsc::WeakSender<RoomMsg>,
    stop: CancellationToken,
) {
    let me = cluster.node.to_string();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            changed = summary.changed() => if changed.is_err() { return },
        }
        let current = summary.borrow_and_update().clone();
        let mut lost = false;
        let written = cluster
            .dir_modify(table, |entry| {
                if entry.owner.as_deref() != Some(&me) {
                    lost = entry.finished_at_ms.is_none();
                    return false;
                }
                if entry.summary == current {
                    return false;
                }
                entry.summary = current.clone();
                true
            })
            .await;
        if let Err(error) = written {
            warn!(%table, %error, "updating the table's directory entry");
        }
        if lost {
            if let Some(room) = room.upgrade() {
                let _ = room.send(RoomMsg::Lost).await;
            }
            return;
        }
    }
}
