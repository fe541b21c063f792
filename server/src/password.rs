//! Table and league passwords: kept only as salted Argon2id hashes (PHC strings, with their own
//! random salt and parameters), never in plain text, so a copy of the journal does not give
//! them away.
//!
//! A hash costs tens of milliseconds of CPU and 19 MiB of memory on purpose, so the server
//! computes them on a small fixed pool ([`Hasher`]): one thread per core (by default), each
//! with one memory buffer it keeps and reuses, fed by a bounded queue. However many clients ask
//! at once, at most that many hashes run and their memory is allocated once; a request that
//! finds the queue full is answered `server_busy` instead of waiting. Callers check everything
//! cheaper first, and the connection layer counts every check against the address's budget.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use tokio::sync::oneshot;
use tracing::{debug, warn};

/// Checks waiting per hashing thread before `server_busy`.
pub(crate) const QUEUED_PER_THREAD: usize =
    grand_melee_protocol::server_limits::PASSWORD_CHECKS_QUEUED_PER_THREAD;

/// The memory of the most expensive hash the pool will compute, in 1 KiB blocks (64 MiB). The
/// server's own hashes use the default (19 MiB); a stored hash asking for more is refused rather
/// than computed (it could only come from a tampered journal).
const MAX_BLOCKS: usize = 64 * 1024;

/// Whether a stored password is an Argon2 PHC string (rather than a journal's old plain text).
pub(crate) fn is_hash(stored: &str) -> bool {
    stored.starts_with("$argon2")
}

/// A salted Argon2id hash of `password` as a PHC string (`$argon2id$v=19$m=…$salt$hash`),
/// with its own memory (for one-off uses outside the pool: migrating an old journal).
pub(crate) fn hash(password: &str) -> Result<String, HashError> {
    hash_with(password, &mut Vec::new())
}

/// Whether `given` is the password whose hash is `stored`, with its own memory. A stored value
/// that is not a valid hash matches nothing.
#[cfg(test)]
pub(crate) fn verify(stored: &str, given: &str) -> bool {
    verify_with(stored, given, &mut Vec::new())
}

/// `memory`, grown to `blocks` if it is shorter (never shrunk: the thread keeps it).
fn blocks(memory: &mut Vec<Block>, blocks: usize) -> &mut [Block] {
    if memory.len() < blocks {
        memory.resize(blocks, Block::default());
    }
    &mut memory[..blocks]
}

/// Why a password could not be hashed: Argon2 refused its own parameters, salt or output (not
/// expected; the caller logs it and refuses the request).
#[derive(Debug, thiserror::Error)]
pub(crate) enum HashError {
    #[error(transparent)]
    Argon2(#[from] argon2::Error),
    #[error(transparent)]
    Phc(#[from] argon2::password_hash::phc::Error),
    #[error(transparent)]
    Params(#[from] argon2::password_hash::Error),
}

fn hash_with(password: &str, memory: &mut Vec<Block>) -> Result<String, HashError> {
    let params = Params::default();
    let salt = *uuid::Uuid::new_v4().as_bytes();
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    let count = params.block_count();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone())
        .hash_password_into_with_memory(
            password.as_bytes(),
            &salt,
            &mut out,
            blocks(memory, count),
        )?;
    let phc = PasswordHash {
        algorithm: argon2::ARGON2ID_IDENT,
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params)?,
        salt: Some(Salt::new(&salt)?),
        hash: Some(Output::new(&out)?),
    };
    Ok(phc.to_string())
}

fn verify_with(stored: &str, given: &str, memory: &mut Vec<Block>) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm.as_str()) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(version)) => version,
        Some(Err(_)) => return false,
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (&parsed.salt, &parsed.hash) else {
        return false;
    };
    let count = params.block_count();
    if count > MAX_BLOCKS {
        warn!(
            blocks = count,
            "a stored password hash asks for too much memory"
        );
        return false;
    }
    let mut out = vec![0u8; expected.len()];
    if Argon2::new(algorithm, version, params)
        .hash_password_into_with_memory(given.as_bytes(), salt, &mut out, blocks(memory, count))
        .is_err()
    {
        return false;
    }
    // `Output`'s equality is constant-time.
    Output::new(&out).is_ok_and(|computed| &computed == expected)
}

/// The pool refused the work: its queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy;

enum Job {
    Hash {
        password: String,
        reply: oneshot::Sender<Result<String, HashError>>,
    },
    Verify {
        stored: Arc<str>,
        given: String,
        reply: oneshot::Sender<bool>,
    },
}

/// The server's password hashing: a fixed number of threads, each reusing one buffer, fed by a
/// bounded queue. Dropping it lets the threads finish what is queued and end.
#[derive(Debug)]
pub(crate) struct Hasher {
    jobs: SyncSender<Job>,
}

impl Hasher {
    /// A pool of `threads` hashing threads (0: one per core) with `QUEUED_PER_THREAD` places
    /// each in its queue.
    pub(crate) fn new(threads: usize) -> Self {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, usize::from)
        } else {
            threads
        };
        let (jobs, queue) = std::sync::mpsc::sync_channel(threads * QUEUED_PER_THREAD);
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads {
            let queue = Arc::clone(&queue);
            let spawned = std::thread::Builder::new()
                .name(format!("gm-hash-{n}"))
                .spawn(move || work(&queue));
            if let Err(error) = spawned {
                // The others (and the queue) still work; with none, every check is `server_busy`.
                warn!(%error, "could not start a password hashing thread");
            }
        }
        debug!(
            threads,
            queue = threads * QUEUED_PER_THREAD,
            "password hashing pool"
        );
        Self { jobs }
    }

    /// A new hash of `password`, or `Busy` if the queue is full.
    pub(crate) async fn hash(&self, password: String) -> Result<Result<String, HashError>, Busy> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Hash { password, reply })?;
        answer.await.map_err(|_| Busy)
    }

    /// Whether `given` is the password hashed in `stored`, or `Busy` if the queue is full.
    pub(crate) async fn verify(&self, stored: Arc<str>, given: String) -> Result<bool, Busy> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Verify {
            stored,
            given,
            reply,
        })?;
        answer.await.map_err(|_| Busy)
    }

    fn submit(&self, job: Job) -> Result<(), Busy> {
        self.jobs.try_send(job).map_err(|error| match error {
            TrySendError::Full(_) | TrySendError::Disconnected(_) => Busy,
        })
    }
}

/// One hashing thread: takes jobs until the pool is dropped, with one buffer for all of them.
fn work(queue: &Mutex<Receiver<Job>>) {
    let mut memory = Vec::new();
    loop {
        // The lock is held only while waiting for the next job, never while hashing.
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        match job {
            Job::Hash { password, reply } => {
                let _ = reply.send(hash_with(&password, &mut memory));
            }
            Job::Verify {
                stored,
                given,
                reply,
            } => {
                // Nobody waits any more (the connection closed): skip the work.
                if !reply.is_closed() {
                    let _ = reply.send(verify_with(&stored, &given, &mut memory));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_hash_checks_its_password_only_and_is_salted() {
        let first = hash("hunter2").unwrap();
        let second = hash("hunter2").unwrap();
        assert!(is_hash(&first));
        assert!(
            first.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{first}"
        );
        assert!(!first.contains("hunter2"));
        assert_ne!(first, second, "each hash has its own salt");
        assert!(verify(&first, "hunter2"));
        assert!(verify(&second, "hunter2"));
        assert!(!verify(&first, "hunter3"));
        assert!(!verify(&first, ""));
        assert!(!verify("hunter2", "hunter2"), "plain text is not a hash");
    }

    #[test]
    fn hashes_made_by_the_argon2_crate_itself_still_verify() {
        use argon2::PasswordHasher;
        // What earlier versions of the server stored (`Argon2::default().hash_password`).
        let stored = Argon2::default()
            .hash_password(b"old secret")
            .unwrap()
            .to_string();
        let mut memory = Vec::new();
        assert!(verify_with(&stored, "old secret", &mut memory));
        assert!(!verify_with(&stored, "old secret!", &mut memory));
        assert_eq!(
            memory.len(),
            Params::default().block_count(),
            "one buffer, reused"
        );
    }

    #[tokio::test]
    async fn the_pool_answers_and_refuses_work_past_its_queue() {
        let pool = Hasher::new(1);
        let stored: Arc<str> = Arc::from(pool.hash("pw".into()).await.unwrap().unwrap());
        assert!(pool.verify(Arc::clone(&stored), "pw".into()).await.unwrap());
        assert!(!pool.verify(Arc::clone(&stored), "px".into()).await.unwrap());
        // Fill the queue without waiting: one runs, QUEUED_PER_THREAD wait, the next is refused.
        let mut answers = Vec::new();
        let mut refused = 0;
        for _ in 0..(QUEUED_PER_THREAD + 8) {
            let (reply, answer) = oneshot::channel();
            match pool.submit(Job::Verify {
                stored: Arc::clone(&stored),
                given: "pw".into(),
                reply,
            }) {
                Ok(()) => answers.push(answer),
                Err(Busy) => refused += 1,
            }
        }
        assert!(refused >= 7, "refused {refused}");
        assert!(answers.len() <= QUEUED_PER_THREAD + 1);
        for answer in answers {
            assert!(answer.await.unwrap());
        }
    }
}
