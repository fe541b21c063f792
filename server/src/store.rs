//! What every storage back end keeps, in one vocabulary: a table's creation record, the one
//! record each request the table's actor carries out writes ([`Flush`]: its events and its
//! [`TableOp`]s, all or nothing), and what a table reads back as ([`StoredTable`], the fold of
//! its flushes). The SQLite journal (`journal`) writes a flush in one savepoint of its writer's
//! transaction; the cluster (`cluster`) appends it as one record to the table's subject.
//! Nothing here does I/O; both back ends import it.

use grand_melee_protocol::league::{LeagueId, LedgerEntry, MemberId};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A table as created: what is needed to rebuild it, besides its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRecord {
    pub id: Uuid,
    pub name: String,
    pub password: Option<String>,
    /// The table's settings (including its seed), encoded by the caller.
    pub settings: Vec<u8>,
    pub created_at_ms: u64,
    /// The league whose game this is, if any.
    pub league: Option<Uuid>,
}

/// A table as stored: its record, seat tokens, metadata and every event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTable {
    pub record: TableRecord,
    /// `(player, token)`, by player.
    pub seats: Vec<(u16, Uuid)>,
    /// `(key, value)`, by key.
    pub meta: Vec<(String, Vec<u8>)>,
    /// `(seq, encoded event)`, by seq.
    pub events: Vec<(u64, Vec<u8>)>,
    /// `Some` once the game is over (the table is then a replay).
    pub finished_at_ms: Option<u64>,
}

/// One finished game, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySummary {
    pub id: Uuid,
    pub name: String,
    pub created_at_ms: u64,
    pub finished_at_ms: u64,
    /// How many events it has.
    pub events: u64,
    /// Whether the table had a password.
    pub password: bool,
    /// The league it was played in, if any.
    pub league: Option<Uuid>,
}

/// One page of a finished game's events, with what is needed to read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPage {
    pub record: TableRecord,
    /// `(seq, encoded event)`, by seq, starting at the requested one.
    pub events: Vec<(u64, Vec<u8>)>,
    /// How many events the game has in all.
    pub total_events: u64,
}

/// A seat, ban or game-over record of one request, written with its events.
///
/// Its MessagePack form is the cluster's record format (`op` tag, snake case): it must not
/// change, or existing streams would not fold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum TableOp {
    /// Sets (or replaces) a player's seat token.
    SetSeat { player: u16, token: Uuid },
    /// Removes a player's seat token (a kicked or departed player); absent is not an error.
    RemoveSeat { player: u16 },
    /// Sets (or replaces) a small per-table value (the banned addresses).
    SetMeta {
        key: String,
        #[serde(with = "serde_bytes")]
        value: Vec<u8>,
    },
    /// The game is over: it is kept as a replay. A league game's credits are written in the
    /// same step, only the first time the table finishes (the cluster writes them to its league
    /// store after the record, keyed so that a second credit is refused; they are not part of
    /// the record).
    Finish {
        at_ms: u64,
        #[serde(skip)]
        credits: Vec<Credit>,
    },
}

/// What one request carried out, written all or nothing: its events (encoded, numbered from
/// `first_seq`) and its records, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Flush {
    pub first_seq: u64,
    pub events: Vec<Vec<u8>>,
    pub ops: Vec<TableOp>,
}

impl Flush {
    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.ops.is_empty()
    }

    /// When the game finished, if this flush finishes it.
    pub fn finished_at_ms(&self) -> Option<u64> {
        self.ops.iter().find_map(|op| match op {
            TableOp::Finish { at_ms, .. } => Some(*at_ms),
            _ => None,
        })
    }
}

impl StoredTable {
    /// A table just created: its record and nothing else.
    pub fn new(record: TableRecord) -> Self {
        Self {
            record,
            seats: Vec::new(),
            meta: Vec::new(),
            events: Vec::new(),
            finished_at_ms: None,
        }
    }

    /// Folds one flush into the table, as the SQLite journal's rows take it: events must follow
    /// the last one (numbered from 1), seats and values are replaced, the first finishing mark
    /// stays.
    pub fn apply(&mut self, flush: &Flush) -> Result<(), String> {
        let expected = self.events.last().map_or(1, |(seq, _)| seq + 1);
        if !flush.events.is_empty() && flush.first_seq != expected {
            return Err(format!(
                "events numbered from {} where {expected} was expected",
                flush.first_seq
            ));
        }
        for (i, event) in flush.events.iter().enumerate() {
            self.events
                .push((flush.first_seq + i as u64, event.clone()));
        }
        for op in &flush.ops {
            match op {
                TableOp::SetSeat { player, token } => {
                    self.seats.retain(|(p, _)| p != player);
                    self.seats.push((*player, *token));
                    self.seats.sort_unstable_by_key(|(p, _)| *p);
                }
                TableOp::RemoveSeat { player } => self.seats.retain(|(p, _)| p != player),
                TableOp::SetMeta { key, value } => {
                    self.meta.retain(|(k, _)| k != key);
                    self.meta.push((key.clone(), value.clone()));
                    self.meta.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
                }
                TableOp::Finish { at_ms, .. } => {
                    self.finished_at_ms.get_or_insert(*at_ms);
                }
            }
        }
        Ok(())
    }
}

/// A deck's credit for one finished league game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credit {
    /// The league.
    pub league: LeagueId,
    /// The member.
    pub member: MemberId,
    /// The `credited` entry.
    pub entry: LedgerEntry,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The cluster's record format before the three enums became one: existing streams hold it.
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case", tag = "op")]
    enum RecordOpBefore {
        SetSeat {
            player: u16,
            token: Uuid,
        },
        RemoveSeat {
            player: u16,
        },
        SetMeta {
            key: String,
            #[serde(with = "serde_bytes")]
            value: Vec<u8>,
        },
        Finish {
            at_ms: u64,
        },
    }

    #[test]
    fn a_table_op_keeps_the_cluster_record_format() {
        let token = Uuid::from_u128(7);
        let credit = Credit {
            league: LeagueId::from(Uuid::from_u128(1)),
            member: 2,
            entry: LedgerEntry::Credited {
                table: Uuid::from_u128(3),
                table_name: "t".to_owned(),
                place: 1,
                players: 2,
                mana_points: 1,
                opponents: vec![1],
            },
        };
        let pairs = [
            (
                TableOp::SetSeat { player: 3, token },
                RecordOpBefore::SetSeat { player: 3, token },
            ),
            (
                TableOp::RemoveSeat { player: 4 },
                RecordOpBefore::RemoveSeat { player: 4 },
            ),
            (
                TableOp::SetMeta {
                    key: "k".to_owned(),
                    value: vec![1, 2],
                },
                RecordOpBefore::SetMeta {
                    key: "k".to_owned(),
                    value: vec![1, 2],
                },
            ),
            (
                TableOp::Finish {
                    at_ms: 9,
                    credits: vec![credit],
                },
                RecordOpBefore::Finish { at_ms: 9 },
            ),
        ];
        for (op, before) in pairs {
            let bytes = rmp_serde::to_vec_named(&op).unwrap();
            assert_eq!(bytes, rmp_serde::to_vec_named(&before).unwrap(), "{op:?}");
            let back: TableOp = rmp_serde::from_slice(&bytes).unwrap();
            let without_credits = match op {
                TableOp::Finish { at_ms, .. } => TableOp::Finish {
                    at_ms,
                    credits: Vec::new(),
                },
                op => op,
            };
            assert_eq!(back, without_credits);
        }
    }
}
