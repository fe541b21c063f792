//! Cluster mode's keeping of Mountain Magic's days, in the league bucket
//! ([`super::leagues::LEAGUES`]): the server's mountain secret under `mm.secret`, made by the
//! first node that needs it with a create (which fails if the key exists, so every node reads
//! the same one), and each day's finished climbs as one document under `mm.day.<day>`, changed
//! only by compare-and-swap like a league's, a climb at most once per table (a table finished
//! again after a takeover adds nothing). A document holds a day's climbs up to the engine's
//! largest value (1 MiB by default: some ten thousand climbs).

use async_nats::jetstream::kv;
use grand_melee_protocol::TableId;
use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::mountain_magic::day::FinishedClimb;

use super::{Cluster, decode, encode};
use crate::journal::JournalError;

const SECRET_KEY: &str = "mm.secret";

fn day_key(day: u32) -> String {
    format!("mm.day.{day}")
}

fn failed(error: impl std::fmt::Display) -> JournalError {
    JournalError::Corrupt(format!("the mountain's days: {error}"))
}

impl Cluster {
    /// The server's mountain secret, made from `candidate` by the first node to ask.
    pub(crate) async fn mountain_secret(
        &self,
        candidate: DiceSecret,
    ) -> Result<DiceSecret, JournalError> {
        match self
            .leagues
            .create(SECRET_KEY, encode(&candidate.to_hex()))
            .await
        {
            Ok(_) => return Ok(candidate),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {}
            Err(e) => return Err(failed(e)),
        }
        let entry = self
            .leagues
            .get(SECRET_KEY)
            .await
            .map_err(failed)?
            .ok_or_else(|| failed("the mountain secret is gone"))?;
        decode::<String>(&entry)
            .and_then(|hex| DiceSecret::from_hex(&hex))
            .ok_or_else(|| failed("the mountain secret is unreadable"))
    }

    /// A day's document and its revision (0: none yet).
    async fn day_doc(&self, day: u32) -> Result<(Vec<FinishedClimb>, u64), JournalError> {
        match self.leagues.entry(day_key(day)).await.map_err(failed)? {
            Some(entry) if entry.operation == kv::Operation::Put => {
                let climbs = decode(&entry.value)
                    .ok_or_else(|| failed(format!("day {day} is unreadable")))?;
                Ok((climbs, entry.revision))
            }
            _ => Ok((Vec::new(), 0)),
        }
    }

    /// The finished climbs of `day`.
    pub(crate) async fn day_climbs(&self, day: u32) -> Result<Vec<FinishedClimb>, JournalError> {
        Ok(self.day_doc(day).await?.0)
    }

    /// Adds a finished climb to its day, once per table.
    pub(crate) async fn add_climb(&self, climb: &FinishedClimb) -> Result<(), JournalError> {
        let key = day_key(climb.day);
        for _ in 0..50 {
            let (mut climbs, revision) = self.day_doc(climb.day).await?;
            let table: TableId = climb.table;
            if climbs.iter().any(|c| c.table == table) {
                return Ok(());
            }
            climbs.push(climb.clone());
            let written = if revision == 0 {
                self.leagues
                    .create(&key, encode(&climbs))
                    .await
                    .map(drop)
                    .map_err(|e| e.kind() == kv::CreateErrorKind::AlreadyExists)
            } else {
                self.leagues
                    .update(&key, encode(&climbs), revision)
                    .await
                    .map(drop)
                    .map_err(|e| e.kind() == kv::UpdateErrorKind::WrongLastRevision)
            };
            match written {
                Ok(()) => return Ok(()),
                // Another node wrote first: read again.
                Err(true) => {}
                Err(false) => return Err(failed(format!("writing day {}", climb.day))),
            }
        }
        Err(failed("the day kept changing"))
    }
}
