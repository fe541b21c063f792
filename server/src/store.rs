//! What every storage back end keeps, in one vocabulary: a table's creation record, the one
//! record each request the table's actor carries out writes ([`Flush`]: its events and its
//! [`TableOp`]s, all or nothing), and what a table reads back as ([`StoredTable`], the fold of
//! its flushes). The SQLite journal (`journal`) writes a flush in one savepoint of its writer's
//! transaction; the cluster (`cluster`) appends it as one record to the table's subject.
//! Nothing here does I/O; both back ends import it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::league::{
    DeckSpec, LeagueId, LeagueSummary, LeagueView, LedgerEntry, LedgerLine, MemberId, MemberToken,
    Purchase, Remedy,
};
use grand_melee_protocol::mountain_magic::day::FinishedClimb;
use grand_melee_protocol::{
    ErrorCode, OrganiserSecret, SeatToken, StageName, TableId, TableSummary,
};
use serde::{Deserialize, Serialize};

/// A table as created: what is needed to rebuild it, besides its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRecord {
    pub id: TableId,
    pub name: String,
    pub password: Option<String>,
    /// The table's settings (including its seed), encoded by the caller.
    pub settings: Vec<u8>,
    pub created_at_ms: u64,
    /// The league whose game this is, if any.
    pub league: Option<LeagueId>,
}

/// A table as stored: its record, seat tokens, metadata and every event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTable {
    pub record: TableRecord,
    /// `(player, token)`, by player.
    pub seats: Vec<(u16, SeatToken)>,
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
    pub id: TableId,
    pub name: String,
    pub created_at_ms: u64,
    pub finished_at_ms: u64,
    /// How many events it has.
    pub events: u64,
    /// Whether the table had a password.
    pub password: bool,
    /// The league it was played in, if any.
    pub league: Option<LeagueId>,
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
    SetSeat {
        player: u16,
        #[serde(with = "crate::store::uuid_form")]
        token: SeatToken,
    },
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
        /// A climb of a day's mountain: its line in the day's standings, written the same way
        /// (only the first time; not part of the cluster's record).
        #[serde(skip)]
        climb: Option<FinishedClimb>,
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
    ///
    /// # Errors
    /// A flush whose events do not follow the table's last one (nothing is folded).
    pub fn apply(&mut self, flush: &Flush) -> Result<(), OutOfSequence> {
        let expected = self.events.last().map_or(1, |(seq, _)| seq + 1);
        if !flush.events.is_empty() && flush.first_seq != expected {
            return Err(OutOfSequence {
                first: flush.first_seq,
                expected,
            });
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

/// A flush whose events do not follow the table's last one ([`StoredTable::apply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("events numbered from {first} where {expected} was expected")]
pub struct OutOfSequence {
    /// The flush's first event.
    pub first: u64,
    /// The number the next event must have.
    pub expected: u64,
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

/// A write to the leagues, decided in the journal writer's transaction. Each returns a number:
/// `Create` 0, `Join` and `Deck` the member's number.
#[derive(Debug, Clone)]
pub enum LeagueWrite {
    /// A new league.
    Create {
        id: LeagueId,
        name: String,
        /// The league's password, hashed.
        password: Option<String>,
        organiser: OrganiserSecret,
        at_ms: u64,
    },
    /// A new member.
    Join {
        league: LeagueId,
        name: String,
        token: MemberToken,
        at_ms: u64,
    },
    /// Something a member does with his deck.
    Deck {
        league: LeagueId,
        token: MemberToken,
        command: DeckCommand,
        at_ms: u64,
    },
}

/// What a member does with his deck.
#[derive(Debug, Clone)]
pub enum DeckCommand {
    Register(DeckSpec),
    Buy(Purchase, u8),
    Remedy(Remedy),
}

/// A league's row.
#[derive(Debug, Clone)]
pub struct LeagueRecord {
    pub name: String,
    /// The password's hash.
    pub password: Option<String>,
    pub organiser: OrganiserSecret,
    pub created_at_ms: u64,
}

/// Why the store did not do what it was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The league's rules refuse the write (nothing was written): the requester is told why.
    #[error("{message}")]
    Refused { code: ErrorCode, message: String },
    /// Cluster mode: another node has written to the table since this one read it (it lost the
    /// table); nothing was written.
    #[error("another node took the table over")]
    Fenced,
    /// The store failed (I/O, the engine, a damaged row).
    #[error("{0}")]
    Failed(String),
}

/// One journaled event: its number and its encoding.
pub type EncodedEvent = (u64, Vec<u8>);

/// What a store's operation gives back, later.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where the tables, their replays and the leagues are kept: the one interface the table actor,
/// the connection and the leagues talk to. The SQLite journal (`journal`) and the cluster's
/// JetStream engine (`cluster`) implement it; `server` picks one.
pub trait Store: Send + Sync + fmt::Debug {
    /// Records a new table (in cluster mode, also its directory entry, owned by this node, with
    /// `summary`) and returns its log, which its actor keeps.
    fn create_table(
        &self,
        record: TableRecord,
        summary: TableSummary,
    ) -> StoreFuture<'_, Box<dyn TableLog>>;

    /// Deletes a table with everything it has (a table abandoned before it started). Deleting
    /// a table that is not there is not an error.
    fn delete_table(&self, table: TableId) -> StoreFuture<'_, ()>;

    /// Every listed table's summary when the store keeps a directory of every node's tables
    /// (cluster mode); `None`: this node's registry is the whole list.
    fn table_directory(&self) -> Option<Vec<TableSummary>>;

    /// One page of the finished games, newest first, and how many there are.
    fn replays_page(&self, from: u32, max: u32) -> StoreFuture<'_, (Vec<ReplaySummary>, u32)>;

    /// One page of a finished game (events from `from_seq`, within `max_bytes`, at least one),
    /// and whether `token` is one of its seat tokens; `None` for an unknown or unfinished table.
    fn replay_page(
        &self,
        table: TableId,
        from_seq: u64,
        max_bytes: usize,
        token: Option<SeatToken>,
    ) -> StoreFuture<'_, Option<(ReplayPage, bool)>>;

    /// Deletes the finished games that finished before `finished_before_ms` and that no node
    /// runs any more (replay retention); returns how many.
    fn prune_replays(&self, finished_before_ms: u64) -> StoreFuture<'_, u64>;

    /// Events of any table from `from_seq` on (at most `limit`, within `max_bytes`, at least
    /// one), and whether there are more.
    fn events_page(
        &self,
        table: TableId,
        from_seq: u64,
        limit: usize,
        max_bytes: usize,
    ) -> StoreFuture<'_, (Vec<EncodedEvent>, bool)>;

    /// Carries out a league write, decided by the league's rules where it is written (the
    /// journal writer's transaction, or compare-and-swap on the league's document).
    fn league_write(&self, write: LeagueWrite) -> StoreFuture<'_, u64>;

    /// A league's record.
    fn league_record(&self, league: LeagueId) -> StoreFuture<'_, Option<LeagueRecord>>;

    /// A league's standings.
    fn league_view(&self, league: LeagueId) -> StoreFuture<'_, Option<LeagueView>>;

    /// One page of the leagues, and how many there are.
    fn leagues_page(&self, from: u32, limit: u32) -> StoreFuture<'_, (Vec<LeagueSummary>, u32)>;

    /// A member's name and ledger, or why not (`unknown_league`, `unknown_player`).
    fn member_ledger(
        &self,
        league: LeagueId,
        member: MemberId,
    ) -> StoreFuture<'_, Result<(String, Vec<LedgerLine>), ErrorCode>>;

    /// The member whose token this is: his number, name and ledger.
    fn member_by_token(
        &self,
        league: LeagueId,
        token: MemberToken,
    ) -> StoreFuture<'_, Option<(MemberId, String, Vec<LedgerLine>)>>;

    /// The server's mountain secret, from which each day's Mountain Magic deal is drawn
    /// (`mountain_magic::day`): made at random the first time and kept, so that a restart (or
    /// another node) deals the same day's mountain.
    fn mountain_secret(&self) -> StoreFuture<'_, DiceSecret>;

    /// The finished climbs of a day's mountain (days since 1970-01-01), in any order.
    fn day_climbs(&self, day: u32) -> StoreFuture<'_, Vec<FinishedClimb>>;

    /// Takes a league member's one unfinished league seat for `table` (a member sits at one
    /// unfinished league table at a time, on every node): `true` if `table` holds it now (or
    /// held it already), `false` if another table whose game has not ended holds it. A seat
    /// held by a table that is finished or gone is taken over, so a seat whose table ended
    /// without giving it back blocks nobody.
    fn hold_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> StoreFuture<'_, bool>;

    /// Gives a member's league seat back, if `table` still holds it (a table that lost it to
    /// another changes nothing).
    fn release_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> StoreFuture<'_, ()>;

    /// Gives back every seat of `league` that `table` holds for a member not in `seated`: a
    /// table read back from the store (a restart, a takeover) forgets a seat its last run took
    /// or kept for a member whose join or departure it journaled, or failed to, just before it
    /// stopped.
    fn release_league_seats_but(
        &self,
        league: LeagueId,
        table: TableId,
        seated: Vec<MemberId>,
    ) -> StoreFuture<'_, ()>;
}

/// A new secret, at random (a table's dice, the server's mountain secret).
pub(crate) fn draw_secret() -> DiceSecret {
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    DiceSecret(bytes)
}

/// Where the table stands after a flush (what the cluster's directory lists when it finishes).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// The table's last event.
    pub seq: u64,
    pub stage: StageName,
}

/// One table's place in the store, held by its actor.
pub trait TableLog: Send + Sync + fmt::Debug {
    /// Writes one request's flush, all or nothing, before anything it holds is sent. A flush
    /// that finishes the game also credits a league game's decks, once.
    fn append(&mut self, flush: Flush, progress: Progress) -> StoreFuture<'_, ()>;
}

/// Serde helpers keeping an id in the stored records' form: the bare UUID's own (16 bytes in
/// MessagePack), as records held it before ids had their own types, not the protocol's string.
/// Existing streams and documents must still read.
pub(crate) mod uuid_form {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use uuid::Uuid;

    pub(crate) fn serialize<S: Serializer, T: Copy + Into<Uuid>>(
        id: &T,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        (*id).into().serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: From<Uuid>>(
        d: D,
    ) -> Result<T, D::Error> {
        Uuid::deserialize(d).map(T::from)
    }

    /// The same for an optional id.
    pub(crate) mod option {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};
        use uuid::Uuid;

        pub(crate) fn serialize<S: Serializer, T: Copy + Into<Uuid>>(
            id: &Option<T>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            id.map(Into::into).serialize(s)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: From<Uuid>>(
            d: D,
        ) -> Result<Option<T>, D::Error> {
            Option::<Uuid>::deserialize(d).map(|id| id.map(T::from))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use uuid::Uuid;

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
    fn a_flush_out_of_sequence_is_refused_and_folds_nothing() {
        let mut table = StoredTable::new(TableRecord {
            id: TableId::from_u128(1),
            name: "t".to_owned(),
            password: None,
            settings: vec![0],
            created_at_ms: 1,
            league: None,
        });
        let flush = |first_seq| Flush {
            first_seq,
            events: vec![vec![1]],
            ops: vec![TableOp::SetSeat {
                player: 0,
                token: SeatToken::from_u128(2),
            }],
        };
        table.apply(&flush(1)).unwrap();
        let before = table.clone();
        assert_eq!(
            table.apply(&flush(3)),
            Err(OutOfSequence {
                first: 3,
                expected: 2
            })
        );
        assert_eq!(table, before);
        table.apply(&flush(2)).unwrap();
        assert_eq!(table.events.len(), 2);
    }

    /// A record holding typed ids, in the stored form.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Typed {
        #[serde(with = "uuid_form")]
        token: SeatToken,
        #[serde(default, with = "uuid_form::option")]
        league: Option<LeagueId>,
    }

    /// The same record as it was written before ids had types.
    #[derive(Serialize, Deserialize)]
    struct Bare {
        token: Uuid,
        league: Option<Uuid>,
    }

    #[test]
    fn typed_ids_keep_the_stored_uuid_form() {
        for league in [Some(LeagueId::from_u128(5)), None] {
            let typed = Typed {
                token: SeatToken::from_u128(9),
                league,
            };
            let bare = Bare {
                token: Uuid::from_u128(9),
                league: league.map(Uuid::from),
            };
            let bytes = rmp_serde::to_vec_named(&typed).unwrap();
            assert_eq!(bytes, rmp_serde::to_vec_named(&bare).unwrap());
            assert_eq!(rmp_serde::from_slice::<Typed>(&bytes).unwrap(), typed);
        }
        // A record written without the optional id still reads.
        #[derive(Serialize)]
        struct Older {
            token: Uuid,
        }
        let older = rmp_serde::to_vec_named(&Older {
            token: Uuid::from_u128(9),
        })
        .unwrap();
        assert_eq!(
            rmp_serde::from_slice::<Typed>(&older).unwrap(),
            Typed {
                token: SeatToken::from_u128(9),
                league: None,
            }
        );
    }

    #[test]
    fn a_table_op_keeps_the_cluster_record_format() {
        let token = SeatToken::from_u128(7);
        let credit = Credit {
            league: LeagueId::from_u128(1),
            member: 2,
            entry: LedgerEntry::Credited {
                table: TableId::from_u128(3),
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
                RecordOpBefore::SetSeat {
                    player: 3,
                    token: token.into(),
                },
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
                    climb: None,
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
                    climb: None,
                },
                op => op,
            };
            assert_eq!(back, without_credits);
        }
    }
}
