//! The plain WebSocket connections' own readiness loop: their sockets registered with an epoll
//! instance of the server's (through `mio`, which tokio itself is built on), not with tokio's.
//!
//! tokio keeps a registration per socket that is 256 bytes aligned to 128 (its `ScheduledIo`:
//! the wakers and the readiness, padded to a cache line pair), and glibc serves an aligned
//! allocation with a free fragment beside it: the largest single thing a seated connection
//! held. Here a connection's registration is a slot of [`Slab`] (a weak pointer to what to wake)
//! and a counter of readiness events in the connection itself ([`Events`]).
//!
//! The loop is a thread of its own, blocked in `epoll_wait` while nothing happens (as the
//! floor's one thread is): it takes the events and wakes each connection's session, which then
//! reads or writes on its host. The sockets are registered edge-triggered for reading and
//! writing, so a session keeps trying a read or a write until the kernel says it would block,
//! and waits only if no event came since it began trying ([`Events::would_block`]); whichever
//! event comes next wakes it.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::Context;

use futures_util::task::AtomicWaker;
use mio::{Interest, Token};
use slab::Slab;
use tokio_util::sync::CancellationToken;

/// What a registered socket's events reach: its connection, which counts them and wakes its
/// session.
pub(crate) trait Ready: Send + Sync {
    /// An event came for the socket (readable, writable, closed or failed: all the same here).
    fn ready(&self);
}

/// A connection's count of its socket's readiness events (four bytes; the waker it wakes is the
/// connection's own, its session's).
#[derive(Debug, Default)]
pub(crate) struct Events {
    seen: AtomicU32,
}

impl Events {
    /// The count now: taken before a read or a write is tried.
    pub(crate) fn now(&self) -> u32 {
        self.seen.load(Ordering::Acquire)
    }

    /// An event came: counted, then `waker` woken.
    pub(crate) fn arrived(&self, waker: &AtomicWaker) {
        self.seen.fetch_add(1, Ordering::AcqRel);
        waker.wake();
    }

    /// A read or write tried since `before` would block: `true` if the task should wait (its
    /// waker registered in `waker`, woken by the next event), `false` if an event came since
    /// `before` and it should try again.
    pub(crate) fn would_block(&self, before: u32, waker: &AtomicWaker, cx: &Context<'_>) -> bool {
        waker.register(cx.waker());
        self.now() == before
    }
}

/// The server's epoll instance and the sockets registered with it.
#[derive(Debug)]
pub(crate) struct Reactor {
    registry: mio::Registry,
    slots: Mutex<Slab<Slot>>,
    /// Wakes the loop's thread (at the shutdown, and when the last socket leaves after it).
    waker: mio::Waker,
    /// The server is shutting down: the loop ends once the last socket has left.
    stopping: AtomicBool,
}

struct Slot(Weak<dyn Ready>);

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Slot")
    }
}

/// The token of the loop's own waker (a slab's keys never come near it).
const WAKE: Token = Token(usize::MAX);

/// A socket registered with the [`Reactor`]; deregistered when dropped.
#[derive(Debug)]
pub(crate) struct Socket {
    stream: mio::net::TcpStream,
    token: Token,
    reactor: Arc<Reactor>,
}

impl Socket {
    pub(crate) fn stream(&self) -> &mio::net::TcpStream {
        &self.stream
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // Deregistered before the socket closes (a closed descriptor leaves epoll by itself,
        // but only once no copy of it is open).
        if let Err(error) = self.reactor.registry.deregister(&mut self.stream) {
            tracing::debug!(%error, "deregistering a socket");
        }
        let mut slots = self.reactor.slots();
        slots.try_remove(self.token.0);
        if slots.is_empty() && self.reactor.stopping.load(Ordering::Acquire) {
            self.reactor.wake();
        }
    }
}

impl Reactor {
    /// A new epoll instance, and the thread that takes its events; it ends once `shutdown` is
    /// cancelled and the last socket has left. Called within the server's runtime (which
    /// watches `shutdown`).
    pub(crate) fn start(shutdown: CancellationToken) -> io::Result<Arc<Self>> {
        let poll = mio::Poll::new()?;
        let reactor = Arc::new(Self {
            registry: poll.registry().try_clone()?,
            slots: Mutex::new(Slab::new()),
            waker: mio::Waker::new(poll.registry(), WAKE)?,
            stopping: AtomicBool::new(false),
        });
        let looping = Arc::clone(&reactor);
        std::thread::Builder::new()
            .name("gm-readiness".into())
            .spawn(move || run(&looping, poll))?;
        let stopping = Arc::clone(&reactor);
        tokio::spawn(async move {
            shutdown.cancelled().await;
            stopping.stopping.store(true, Ordering::Release);
            stopping.wake();
        });
        Ok(reactor)
    }

    fn slots(&self) -> MutexGuard<'_, Slab<Slot>> {
        // Each change to the slab is one insertion or removal: whole after a panic elsewhere.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wake(&self) {
        if let Err(error) = self.waker.wake() {
            tracing::error!(%error, "cannot wake the connections' readiness loop");
        }
    }

    /// Registers `stream` (taken from tokio's reactor) for reading and writing, its events
    /// going to `ready`.
    pub(crate) fn register(
        self: &Arc<Self>,
        stream: tokio::net::TcpStream,
        ready: Weak<dyn Ready>,
    ) -> io::Result<Socket> {
        let stream = mio::net::TcpStream::from_std(stream.into_std()?);
        let token = Token(self.slots().insert(Slot(ready)));
        // Deregistered by its drop if the registration fails.
        let mut socket = Socket {
            stream,
            token,
            reactor: Arc::clone(self),
        };
        self.registry
            .register(
                &mut socket.stream,
                token,
                Interest::READABLE | Interest::WRITABLE,
            )
            .map(|()| socket)
    }
}

/// The most events taken from the kernel at once.
const EVENTS: usize = 1024;

/// The loop: waits for events, and tells each socket's connection.
fn run(reactor: &Reactor, mut poll: mio::Poll) {
    let mut events = mio::Events::with_capacity(EVENTS);
    let mut woken: Vec<Arc<dyn Ready>> = Vec::with_capacity(EVENTS);
    loop {
        if let Err(error) = poll.poll(&mut events, None) {
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            tracing::error!(%error, "the connections' readiness loop failed");
            return;
        }
        {
            let slots = reactor.slots();
            woken.extend(
                events
                    .iter()
                    .filter_map(|event| slots.get(event.token().0))
                    .filter_map(|slot| slot.0.upgrade()),
            );
            if reactor.stopping.load(Ordering::Acquire) && slots.is_empty() {
                return;
            }
        }
        // Woken outside the lock: a waker may run code of its own (and a connection dropped
        // here deregisters itself, which takes the lock).
        for ready in woken.drain(..) {
            ready.ready();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::{Wake, Waker};

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A task waits only if no event came since it began trying, and the next event wakes it:
    /// no event can fall between a try that would block and the wait.
    #[test]
    fn an_event_between_the_try_and_the_wait_is_never_lost() {
        let (events, slot) = (Events::default(), AtomicWaker::new());
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let cx = Context::from_waker(&waker);
        // An event while the read was tried: try again, do not wait.
        let before = events.now();
        events.arrived(&slot);
        assert!(!events.would_block(before, &slot, &cx));
        // None since: wait, and the next event wakes the task.
        let before = events.now();
        assert!(events.would_block(before, &slot, &cx));
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        events.arrived(&slot);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(!events.would_block(before, &slot, &cx));
    }
}
