//! How hard the journal pushes each commit to disk (`--durability`): chosen by the
//! configuration, carried out by the journal.

use std::fmt;
use std::str::FromStr;

/// How hard each commit is pushed to disk before the writes in it are acknowledged.
///
/// Either way the journal is never left corrupt or half-written: a commit is kept whole or lost
/// whole, and a lost commit is always a suffix (the newest ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Durability {
    /// `PRAGMA synchronous = FULL`: every commit is `fsync`ed to the WAL before any write in it
    /// is acknowledged. An acknowledged write survives a crash of the process, of the OS and a
    /// power cut (on a disk that honours flushes). Costs one `fsync` per batch; group commit
    /// shares it between every table that wrote meanwhile.
    #[default]
    Full,
    /// `PRAGMA synchronous = NORMAL` in WAL mode: a commit is written to the OS before it is
    /// acknowledged, but only `fsync`ed at checkpoints. An acknowledged write survives a crash
    /// or kill of the server process (the OS still holds it); a crash of the OS or a power cut
    /// may lose the most recent acknowledged commits.
    Normal,
}

impl Durability {
    /// The name used on the command line: `full` or `normal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Full => "full",
            Durability::Normal => "normal",
        }
    }

    pub(crate) fn synchronous_pragma(self) -> &'static str {
        match self {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A durability name that is neither `full` nor `normal`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown durability {0:?}: expected `full` or `normal`")]
pub struct ParseDurabilityError(String);

impl FromStr for Durability {
    type Err = ParseDurabilityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("full") {
            Ok(Durability::Full)
        } else if s.eq_ignore_ascii_case("normal") {
            Ok(Durability::Normal)
        } else {
            Err(ParseDurabilityError(s.to_owned()))
        }
    }
}
