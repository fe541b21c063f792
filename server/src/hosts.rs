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
//! in a session ends that session alone. When the server shuts down, each host stops its
//! sessions (through their connections' outboxes: each says goodbye, 1001) and ends once the
//! last has ended; a session handed over after that is stopped at once, in a task of its own.
//! So no session keeps a shutdown token or future of its own.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::error;

/// A session, boxed: its own allocation, of its own size.
pub(crate) type Hosted = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How a host tells a session that the server is shutting down (its connection's outbox: the
/// session then says goodbye). Called at most once per session.
pub(crate) trait Stop: Send + Sync {
    fn stop(&self);
}

/// A session in a host, with how to stop it.
struct Running {
    stop: Arc<dyn Stop>,
    session: Hosted,
}

impl Future for Running {
    type Output = ();

    /// The session's own poll; a panic in it ends it alone (the panic hook has printed what
    /// and where).
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let session = self.session.as_mut();
        std::panic::catch_unwind(AssertUnwindSafe(|| session.poll(cx))).unwrap_or_else(|_| {
            error!("a websocket session panicked: it alone has ended");
            Poll::Ready(())
        })
    }
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Running")
    }
}

/// The hosts of one server, started when the first session arrives (on its runtime).
#[derive(Debug, Default)]
pub(crate) struct Hosts {
    /// Each host's door: the channel its task takes new sessions from.
    doors: OnceLock<Box<[mpsc::UnboundedSender<Running>]>>,
    /// The next host to give a session to.
    next: AtomicUsize,
}

impl Hosts {
    /// Runs `session` in the next host (starting the hosts, one per worker thread, in `tasks`
    /// if they have not started), `stop` being how to stop it once `shutdown` is cancelled.
    /// Each host ends once `shutdown` is cancelled and its last session has ended; a session
    /// handed over after its host ended is stopped at once, in a task of its own.
    pub(crate) fn run(
        &self,
        stop: Arc<dyn Stop>,
        session: Hosted,
        tasks: &TaskTracker,
        shutdown: &CancellationToken,
    ) {
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
        if let Err(mpsc::error::SendError(running)) = doors[at].send(Running { stop, session }) {
            running.stop.stop();
            tasks.spawn(running);
        }
    }
}

/// One host: takes sessions from its door and polls them until they end; once `shutdown` is
/// cancelled, stops each (and each that still arrives), and ends when it holds none.
async fn host(mut door: mpsc::UnboundedReceiver<Running>, shutdown: CancellationToken) {
    let mut running = FuturesUnordered::new();
    let stop = shutdown.cancelled();
    tokio::pin!(stop);
    let (mut stopping, mut closed) = (false, false);
    loop {
        tokio::select! {
            biased;
            session = door.recv(), if !closed => match session {
                Some(session) => {
                    if stopping {
                        session.stop.stop();
                    }
                    running.push(session);
                }
                None => closed = true,
            },
            Some(()) = running.next(), if !running.is_empty() => {}
            () = &mut stop, if !stopping => {
                stopping = true;
                for session in running.iter_mut() {
                    session.stop.stop();
                }
            }
        }
        if (stopping || closed) && running.is_empty() {
            // Nothing is taken in after this (a later session runs in a task of its own), and
            // what was handed over meanwhile still runs, stopped, rather than being dropped
            // unread with the door.
            door.close();
            closed = true;
            while let Ok(session) = door.try_recv() {
                session.stop.stop();
                running.push(session);
            }
            if running.is_empty() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use futures_util::FutureExt;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;
    use tokio::sync::{Notify, oneshot};

    /// A session's stop, as a connection's outbox would take it: remembered, and waking the
    /// session that waits for it.
    #[derive(Default)]
    struct Flag {
        stopped: AtomicBool,
        wake: Notify,
    }

    impl Stop for Flag {
        fn stop(&self) {
            self.stopped.store(true, Relaxed);
            self.wake.notify_one();
        }
    }

    /// Sessions in a host run and end; a panic in one ends it alone (the host and the other
    /// sessions go on); at shutdown the hosts stop their sessions and end once they have, so
    /// the tracker's wait returns; a session handed over after that is stopped at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_session_ends_alone_and_hosts_stop_their_sessions_at_shutdown() {
        let hosts = Hosts::default();
        let tasks = TaskTracker::new();
        let shutdown = CancellationToken::new();
        let (go, gate) = oneshot::channel::<()>();
        let gate = gate.map(|_| ()).shared();
        let never = || Arc::new(Flag::default()) as Arc<dyn Stop>;
        // Every host gets a session that panics once the gate opens, and one of them a session
        // that waits for the gate too and then finishes: the panics come first on their hosts.
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        for _ in 0..workers {
            let gate = gate.clone();
            let session = async move {
                gate.await;
                panic!("a session's bug");
            };
            hosts.run(never(), Box::pin(session), &tasks, &shutdown);
        }
        let (done, ended) = oneshot::channel();
        let session = async move {
            gate.await;
            tokio::task::yield_now().await;
            let _ = done.send(());
        };
        hosts.run(never(), Box::pin(session), &tasks, &shutdown);
        // One task per host, whatever the number of sessions.
        assert_eq!(tasks.len(), workers);
        go.send(()).unwrap();
        // (A host that a panic ended would drop it unfinished: the send would fail.)
        tokio::time::timeout(Duration::from_secs(30), ended)
            .await
            .expect("the session beside the panicking ones never finished")
            .expect("the session beside the panicking ones was dropped unfinished");
        // A session that runs until it is stopped: the shutdown stops it, then the hosts end.
        let flag = Arc::new(Flag::default());
        let waiting = Arc::clone(&flag);
        let session = async move { waiting.wake.notified().await };
        hosts.run(flag.clone(), Box::pin(session), &tasks, &shutdown);
        tasks.close();
        assert!(!flag.stopped.load(Relaxed));
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(30), tasks.wait())
            .await
            .expect("the hosts did not end at shutdown");
        assert!(flag.stopped.load(Relaxed));
        // Ended: a session handed over now is stopped at once, and runs in a task of its own.
        let flag = Arc::new(Flag::default());
        let waiting = Arc::clone(&flag);
        let (done, ended) = oneshot::channel();
        let session = async move {
            waiting.wake.notified().await;
            let _ = done.send(());
        };
        hosts.run(
            flag.clone(),
            Box::pin(session),
            &TaskTracker::new(),
            &shutdown,
        );
        tokio::time::timeout(Duration::from_secs(30), ended)
            .await
            .unwrap()
            .unwrap();
        assert!(flag.stopped.load(Relaxed));
    }
}
