//! Online backups of the journal: a copy of `grand-melee.sqlite3` made while the server runs,
//! consistent as of one moment, with SQLite's online backup API. `grand-melee-server backup
//! DEST` makes one from the command line; `--backup-dir` makes them on a schedule
//! (`--backup-every`, keeping the newest `--backup-keep`).
//!
//! The copy is taken in one step of the backup API, inside one read transaction of the
//! journal: in WAL mode a reader does not block the writer, so play goes on while it is made,
//! and what it holds is the journal as of that transaction's start — every event committed by
//! then, nothing after. It is written beside its destination under a temporary name, checked
//! (`PRAGMA quick_check`) and then renamed into place, so a destination either holds a whole,
//! checked copy or nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use thiserror::Error;

use crate::journal::DB_FILE;

/// Why a backup was not made.
#[derive(Debug, Error)]
pub enum BackupError {
    /// The data directory holds no journal.
    #[error("no journal to back up: {0} does not exist (is --data-dir the server's?)")]
    NoJournal(PathBuf),
    /// The destination exists: a backup never overwrites a file.
    #[error("{0} exists already: a backup never overwrites a file; name another")]
    Exists(PathBuf),
    /// The copy did not pass SQLite's check.
    #[error("the copy in {path} failed SQLite's check: {found}")]
    Damaged {
        /// The temporary copy (removed).
        path: PathBuf,
        /// What `PRAGMA quick_check` said.
        found: String,
    },
    /// SQLite refused.
    #[error("SQLite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The file system refused.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a backup made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    /// The copy.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The name of a scheduled backup made at `unix_secs`: `grand-melee-YYYYMMDDTHHMMSSZ.sqlite3`,
/// so names sort as times do.
pub fn scheduled_name(unix_secs: u64) -> String {
    let (days, secs) = (unix_secs / 86_400, unix_secs % 86_400);
    let (year, month, day) = civil_from_days(i64::try_from(days).unwrap_or(i64::MAX));
    format!(
        "grand-melee-{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z.sqlite3",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Whether `name` is one of [`scheduled_name`]'s (only those are ever deleted by `--backup-keep`).
fn is_scheduled_name(name: &str) -> bool {
    name.strip_prefix("grand-melee-")
        .and_then(|rest| rest.strip_suffix("Z.sqlite3"))
        .is_some_and(|stamp| {
            stamp.len() == 15
                && stamp.char_indices().all(
                    |(i, c)| {
                        if i == 8 { c == 'T' } else { c.is_ascii_digit() }
                    },
                )
        })
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Copies the journal of `data_dir` to `dest` (a file that must not exist), consistent as of
/// one moment, while a server may be running on it. Blocking: run it off the async threads.
pub fn backup(data_dir: &Path, dest: &Path) -> Result<Made, BackupError> {
    let source = data_dir.join(DB_FILE);
    if !source.is_file() {
        return Err(BackupError::NoJournal(source));
    }
    if dest.exists() {
        return Err(BackupError::Exists(dest.to_owned()));
    }
    let name = dest
        .file_name()
        .map_or_else(|| "backup".into(), |n| n.to_string_lossy().into_owned());
    let partial = dest.with_file_name(format!(".{name}.partial"));
    let _ = std::fs::remove_file(&partial);
    let made = copy(&source, &partial).and_then(|()| check(&partial));
    if let Err(error) = made {
        let _ = std::fs::remove_file(&partial);
        return Err(error);
    }
    if dest.exists() {
        let _ = std::fs::remove_file(&partial);
        return Err(BackupError::Exists(dest.to_owned()));
    }
    std::fs::rename(&partial, dest)?;
    let bytes = std::fs::metadata(dest)?.len();
    Ok(Made {
        path: dest.to_owned(),
        bytes,
    })
}

/// The whole journal in one step of the backup API: one read transaction, one moment.
fn copy(source: &Path, partial: &Path) -> Result<(), BackupError> {
    let from = Connection::open_with_flags(
        source,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // The writer may hold its lock for a commit's moment.
    from.busy_timeout(Duration::from_secs(10))?;
    let mut to = Connection::open(partial)?;
    {
        use rusqlite::backup::{Backup, StepResult};
        let backup = Backup::new(&from, &mut to)?;
        // Every page in one step (-1): one read transaction. Busy or locked only while the
        // writer holds its lock for a moment: try again, a bounded number of times.
        let mut tries = 0;
        loop {
            match backup.step(-1)? {
                StepResult::Done => break,
                StepResult::More | StepResult::Busy | StepResult::Locked if tries < 100 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(50));
                }
                _ => {
                    return Err(BackupError::Sqlite(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                        Some("the journal stayed busy for 5 s".into()),
                    )));
                }
            }
        }
    }
    // The copy is one file, without a write-ahead log beside it.
    to.pragma_update(None, "journal_mode", "DELETE")?;
    drop(to);
    Ok(())
}

fn check(partial: &Path) -> Result<(), BackupError> {
    let copy = Connection::open_with_flags(partial, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let found: String = copy.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
    if found != "ok" {
        return Err(BackupError::Damaged {
            path: partial.to_owned(),
            found,
        });
    }
    Ok(())
}

/// One scheduled backup into `dir` (created if missing), named by the time, then the oldest
/// scheduled backups past the newest `keep` deleted (other files in `dir` are never touched).
pub fn scheduled(
    data_dir: &Path,
    dir: &Path,
    keep: usize,
    unix_secs: u64,
) -> Result<Made, BackupError> {
    std::fs::create_dir_all(dir)?;
    let made = backup(data_dir, &dir.join(scheduled_name(unix_secs)))?;
    let mut ours: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| is_scheduled_name(&name.to_string_lossy()))
        })
        .collect();
    ours.sort();
    let extra = ours.len().saturating_sub(keep.max(1));
    for old in &ours[..extra] {
        if let Err(error) = std::fs::remove_file(old) {
            tracing::warn!(path = %old.display(), %error, "deleting an old backup");
        }
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn scheduled_names_sort_as_times_and_are_recognised() {
        assert_eq!(scheduled_name(0), "grand-melee-19700101T000000Z.sqlite3");
        // 2026-11-29 03:45:07 UTC.
        assert_eq!(
            scheduled_name(1_795_923_907),
            "grand-melee-20261129T034507Z.sqlite3"
        );
        // 2000-02-29, a leap day.
        assert_eq!(
            scheduled_name(951_782_400),
            "grand-melee-20000229T000000Z.sqlite3"
        );
        assert!(is_scheduled_name(&scheduled_name(1_795_923_907)));
        for other in [
            "grand-melee.sqlite3",
            "grand-melee-2026.sqlite3",
            "grand-melee-20261129X034507Z.sqlite3",
            "mine-20261129T034507Z.sqlite3",
        ] {
            assert!(!is_scheduled_name(other), "{other}");
        }
    }
}
