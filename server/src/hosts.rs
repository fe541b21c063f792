//! Where the WebSocket sessions run: a few hosts, one per worker thread of the runtime, each
//! one task polling many sessions, instead of a task per connection.
//!
//! A tokio task is a cell aligned to 128 bytes around its future (header, scheduler, trailer),
//! which glibc's allocator serves with an aligned allocation that leaves a free fragment beside
//! every one: per seat, ~1.2 KiB for an 840-byte session. In a host a session costs its own
//! future and a node of the host's [`FuturesUnordered`] (the same wake-ups: a session's waker
//! queues it on its host and wakes the host). Sessions are handed to the hosts in turn, so each
//! worker thread has one to poll.
//!
//! A host polls only the sessions that were woken, at most each once per poll, and within
//! tokio's cooperative budget (a host that used it up yields and is scheduled again). A panic
//! in a session ends that session alone. A host ends once the server is shutting down and its
//! last session has ended; a session handed over after that runs in a task of its own.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::error;

/// A session, boxed: its own allocation, of its own size.
pub(crate) type Hosted = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The hosts of one server, started when the first session arrives (on its runtime).
#[derive(Debug, Default)]
pub(crate) struct Hosts {
    /// Each host's door: the channel its task takes new sessions from.
    doors: OnceLock<Box<[mpsc::UnboundedSender<Hosted>]>>,
    /// The next host to give a session to.
    next: AtomicUsize,
}

impl Hosts {
    /// Runs `session` in the next host (starting the hosts, one per worker thread, in `tasks`
    /// if they have not started; each ends once `shutdown` is cancelled and its last session
    /// has ended). A host that has ended already: the session gets a task of its own.
    pub(crate) fn run(&self, session: Hosted, tasks: &TaskTracker, shutdown: &CancellationToken) {
        let doors = self.doors.get_or_init(|| {
            let workers = tokio::runtime::Handle::current()
                .metrics()
                .num_workers()
                .max(1);
            (0..workers)
                .map(|_| {
                    let (door, sessions) = mpsc::unbounded_channel();
                    tasks.spawn(host(sessions, shutdown.clone()));
                    door
                })
                .collect()
        });
        let at = self.next.fetch_add(1, Relaxed) % doors.len();
        if let Err(mpsc::error::SendError(session)) = doors[at].send(session) {
            tasks.spawn(session);
        }
    }
}

/// One host: takes sessions from its door and polls them until they end; ends once
/// `shutdown` is cancelled and it holds no session.
async fn host(mut door: mpsc::UnboundedReceiver<Hosted>, shutdown: CancellationToken) {
    let mut running = FuturesUnordered::new();
    let stop = shutdown.cancelled();
    tokio::pin!(stop);
    let (mut stopping, mut closed) = (false, false);
    loop {
        tokio::select! {
            biased;
            session = door.recv(), if !closed => match session {
                Some(session) => running.push(AssertUnwindSafe(session).catch_unwind()),
                None => closed = true,
            },
            Some(ended) = running.next(), if !running.is_empty() => {
                if let Err(panic) = ended {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    error!(panic = %what, "a websocket session panicked: it alone has ended");
                }
            }
            () = &mut stop, if !stopping => stopping = true,
        }
        if (stopping || closed) && running.is_empty() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use tokio::sync::oneshot;

    /// Sessions in a host run and end; a panic in one ends it alone (the host and the other
    /// sessions go on); the hosts end once shut down and empty, so the tracker's wait returns.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_session_ends_alone_and_hosts_end_at_shutdown() {
        let hosts = Hosts::default();
        let tasks = TaskTracker::new();
        let shutdown = CancellationToken::new();
        let (go, gate) = oneshot::channel::<()>();
        let finished = Arc::new(AtomicBool::new(false));
        // Every host gets a session that panics once the gate opens, and one that waits for
        // the gate too and then finishes: the panics come first on their hosts.
        let gate = futures_util::future::FutureExt::shared(gate.map(|_| ()));
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        for _ in 0..workers {
            let gate = gate.clone();
            hosts.run(
                Box::pin(async move {
                    gate.await;
                    panic!("a session's bug");
                }),
                &tasks,
                &shutdown,
            );
        }
        let (done, ended) = oneshot::channel();
        {
            let finished = Arc::clone(&finished);
            let gate = gate.clone();
            hosts.run(
                Box::pin(async move {
                    gate.await;
                    tokio::task::yield_now().await;
                    finished.store(true, Relaxed);
                    let _ = done.send(());
                }),
                &tasks,
                &shutdown,
            );
        }
        // One task per host, whatever the number of sessions.
        assert_eq!(tasks.len(), workers);
        go.send(()).unwrap();
        // (A host that a panic ended would never finish it: the timeout says so.)
        tokio::time::timeout(std::time::Duration::from_secs(30), ended)
            .await
            .expect("the session beside the panicking ones never finished")
            .unwrap();
        assert!(finished.load(Relaxed));
        // A session that waits for the shutdown itself: the hosts end after it.
        {
            let shutdown2 = shutdown.clone();
            hosts.run(
                Box::pin(async move { shutdown2.cancelled().await }),
                &tasks,
                &shutdown,
            );
        }
        tasks.close();
        assert!(!tasks.is_empty());
        shutdown.cancel();
        tasks.wait().await;
        // Ended: a session handed over now runs in a task of its own, and still runs.
        let (done, ended) = oneshot::channel();
        let tasks = TaskTracker::new();
        hosts.run(
            Box::pin(async move {
                let _ = done.send(());
            }),
            &tasks,
            &shutdown,
        );
        ended.await.unwrap();
    }
}
