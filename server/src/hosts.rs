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
//!
//! Nor a timer of its own: a session's pings and its silence are timed by the hosts' one clock
//! ([`Alarms`]): a session that waits for a time keeps the tick it asked for ([`Alarm`], eight
//! bytes) and its waker waits in the clock's list, where tokio's timer would be 112 bytes in
//! every session. The clock is coarse ([`TICK`]): an alarm rings at its time or up to one tick
//! after, never before.

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::error;

use crate::reactor::Reactor;

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
    /// The sessions' clock (its task starts with the hosts).
    pub(crate) alarms: Arc<Alarms>,
    /// The plain connections' readiness loop, started with the first.
    reactor: Mutex<Option<Arc<Reactor>>>,
}

impl Hosts {
    /// The plain connections' readiness loop (started now if it has not been; it ends once
    /// `shutdown` is cancelled and its last socket has left).
    pub(crate) fn reactor(&self, shutdown: &CancellationToken) -> std::io::Result<Arc<Reactor>> {
        let mut reactor = self.reactor.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(reactor) = &*reactor {
            return Ok(Arc::clone(reactor));
        }
        let started = Reactor::start(shutdown.clone())?;
        *reactor = Some(Arc::clone(&started));
        Ok(started)
    }

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
            tasks.spawn(ring(Arc::clone(&self.alarms), shutdown.clone()));
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

/// How coarse the sessions' clock is: an alarm rings in the first tick at or after its time.
pub(crate) const TICK: Duration = Duration::from_millis(50);

/// The sessions' clock: the ticks they wait for, each with the wakers of the sessions waiting
/// for it, and a task ([`ring`]) that sleeps until the first and wakes them.
#[derive(Debug)]
pub(crate) struct Alarms {
    /// Tick 0.
    epoch: Instant,
    /// The last tick the clock rang (every alarm at or before it has rung).
    rung: AtomicU64,
    due: Mutex<Due>,
    /// Wakes the clock's task when an alarm earlier than the one it sleeps until is set.
    earlier: Notify,
}

#[derive(Debug, Default)]
struct Due {
    /// The sessions waiting, by the tick they wait for.
    wakers: BTreeMap<u64, Vec<Waker>>,
    /// The tick the clock's task sleeps until, if it sleeps until one.
    sleeps_until: Option<u64>,
}

impl Default for Alarms {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            rung: AtomicU64::new(0),
            due: Mutex::default(),
            earlier: Notify::new(),
        }
    }
}

impl Alarms {
    /// When the clock started (before any session): the sessions count their times from it.
    pub(crate) fn epoch(&self) -> Instant {
        self.epoch
    }

    /// The first tick at or after `at` (looked up on every poll of every session: in 64-bit
    /// arithmetic, not `Duration`'s 128-bit nanoseconds).
    fn tick_at(&self, at: Instant) -> u64 {
        let (ticks, into) = self.ticks_to(at);
        ticks.saturating_add(u64::from(into))
    }

    /// The last tick begun at `now`.
    fn tick_before(&self, now: Instant) -> u64 {
        self.ticks_to(now).0
    }

    /// Whole ticks from the epoch to `at`, and whether `at` is past the last one's start.
    fn ticks_to(&self, at: Instant) -> (u64, bool) {
        const TICK_NANOS: u64 = TICK.as_nanos() as u64;
        const PER_SECOND: u64 = 1_000_000_000 / TICK_NANOS;
        const _: () = assert!(1_000_000_000 % TICK_NANOS == 0, "a tick divides a second");
        let since = at.saturating_duration_since(self.epoch);
        let nanos = u64::from(since.subsec_nanos());
        let ticks = since
            .as_secs()
            .saturating_mul(PER_SECOND)
            .saturating_add(nanos / TICK_NANOS);
        (ticks, nanos % TICK_NANOS != 0)
    }

    /// When `tick` begins.
    fn instant_of(&self, tick: u64) -> Instant {
        self.epoch + Duration::from_millis(tick.saturating_mul(TICK.as_millis() as u64))
    }

    fn due(&self) -> std::sync::MutexGuard<'_, Due> {
        // A panic elsewhere while it was held leaves a list still whole (each change to it is
        // one insertion or removal).
        self.due.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Rings every alarm due at `now`; returns the tick of the next one, if any is set.
    fn ring_at(&self, now: Instant) -> Option<u64> {
        let tick = self.tick_before(now).max(self.rung.load(Relaxed));
        let (rung, next) = {
            let mut due = self.due();
            let later = due.wakers.split_off(&tick.saturating_add(1));
            let rung = std::mem::replace(&mut due.wakers, later);
            self.rung.store(tick, Relaxed);
            let next = due.wakers.keys().next().copied();
            due.sleeps_until = next;
            (rung, next)
        };
        // Woken outside the lock: a waker may run code of its own.
        rung.into_values().flatten().for_each(Waker::wake);
        next
    }

    /// Whether an alarm for `tick` has rung; if not, `waker` is woken when it does.
    fn ring_or_wake(&self, tick: u64, waker: &Waker) -> bool {
        if tick <= self.rung.load(Relaxed) {
            return true;
        }
        let mut due = self.due();
        // Rung between the look above and the lock.
        if tick <= self.rung.load(Relaxed) {
            return true;
        }
        due.wakers.entry(tick).or_default().push(waker.clone());
        if due.sleeps_until.is_none_or(|until| tick < until) {
            due.sleeps_until = Some(tick);
            self.earlier.notify_one();
        }
        false
    }
}

/// The clock's task: sleeps until the first alarm set (or until an earlier one is), rings
/// what is due; ends at the shutdown.
async fn ring(alarms: Arc<Alarms>, shutdown: CancellationToken) {
    let sleep = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(sleep);
    loop {
        match alarms.ring_at(Instant::now()) {
            Some(next) => sleep.as_mut().reset(alarms.instant_of(next).into()),
            // Nothing to ring: only an alarm set will wake the clock.
            None => sleep
                .as_mut()
                .reset((Instant::now() + Duration::from_secs(86_400)).into()),
        }
        tokio::select! {
            biased;
            () = shutdown.cancelled() => return,
            () = alarms.earlier.notified() => {}
            () = &mut sleep => {}
        }
    }
}

/// A session's timer on the hosts' clock: the tick it waits for, if any (0: none).
#[derive(Debug, Default)]
pub(crate) struct Alarm(u64);

impl Alarm {
    /// Ready once `at` has come (at most a [`TICK`] late); until then the task is woken when
    /// it comes. `at` may move on each look, earlier or later; the task polling it is always
    /// the same (a session's), so a waker given once stays the one to wake.
    pub(crate) fn poll_until(
        &mut self,
        alarms: &Alarms,
        at: Instant,
        cx: &Context<'_>,
    ) -> Poll<()> {
        let tick = alarms.tick_at(at).max(1);
        let rung = alarms.rung.load(Relaxed);
        if tick <= rung {
            self.0 = 0;
            return Poll::Ready(());
        }
        // Waiting already for this tick or an earlier one that has not rung: that ringing
        // wakes the task, which then looks again.
        if self.0 != 0 && self.0 <= tick && self.0 > rung {
            return Poll::Pending;
        }
        if alarms.ring_or_wake(tick, cx.waker()) {
            self.0 = 0;
            return Poll::Ready(());
        }
        self.0 = tick;
        Poll::Pending
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

    /// Alarms set in any order, some moved later or earlier while they wait, each ring at or
    /// after their time, never before; the clock's task ends at the shutdown.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn alarms_ring_at_their_time_never_before_and_may_move() {
        let alarms = Arc::new(Alarms::default());
        let shutdown = CancellationToken::new();
        let clock = tokio::spawn(ring(Arc::clone(&alarms), shutdown.clone()));
        let start = Instant::now();
        let ms = Duration::from_millis;
        // (first time asked for, the time it moves to once woken before it)
        let plans = [
            (ms(300), ms(300)),
            (ms(0), ms(0)),
            (ms(120), ms(260)),
            (ms(40), ms(40)),
            (ms(200), ms(200)),
            (ms(60_000), ms(80)),
        ];
        let mut waiting = Vec::new();
        for (first, then) in plans {
            let alarms = Arc::clone(&alarms);
            waiting.push(tokio::spawn(async move {
                let mut alarm = Alarm::default();
                let mut at = start + first;
                // The last plan moves its alarm earlier before the first ringing: the clock
                // sleeps until 60 s and must wake for the earlier one.
                if first > ms(30_000) {
                    std::future::poll_fn(|cx| {
                        assert!(alarm.poll_until(&alarms, at, cx).is_pending());
                        Poll::Ready(())
                    })
                    .await;
                    at = start + then;
                }
                std::future::poll_fn(|cx| alarm.poll_until(&alarms, at, cx)).await;
                assert!(Instant::now() >= at, "rang before its time");
                // Moved later once it has rung: it waits again, for the new time.
                if then > first {
                    at = start + then;
                    std::future::poll_fn(|cx| alarm.poll_until(&alarms, at, cx)).await;
                    assert!(Instant::now() >= at, "rang before its new time");
                }
                at
            }));
        }
        for waiting in waiting {
            let at = tokio::time::timeout(Duration::from_secs(30), waiting)
                .await
                .expect("an alarm never rang (the moved-earlier one waits 60 s otherwise)")
                .unwrap();
            assert!(Instant::now() >= at);
        }
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(30), clock)
            .await
            .expect("the clock did not end at the shutdown")
            .unwrap();
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
        // One task per host, whatever the number of sessions, and the sessions' clock.
        assert_eq!(tasks.len(), workers + 1);
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
