//! The witness: what the bots were told, event by event, shared by every bot of a run.
//!
//! Every bot feeds it each event of every `events` batch it receives, keyed by table and
//! sequence number, as the event's canonical bytes ([`wire::encode_event`], the form the
//! server's journal stores). Events inside snapshots are not recorded: a snapshot is a view,
//! not a log. The first bytes seen for a key are kept; any later bytes that differ (another
//! bot, or the same bot after a resume on another node, told something else under the same
//! number) are kept too, as a [`Conflict`], never overwriting the first.
//!
//! A test then holds the witness against the server's own journal ([`fetch_journal`] and
//! [`Witness::check_journal`]): same number, same bytes, and nothing the journal lacks.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::{
    self as wire, ClientMessage, Event, PROTOCOL_VERSION, ServerMessage, TableId,
};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

use crate::link::{self, BotError};

/// Which bot saw something: its table's index in the run, its seat, and which of its
/// connections (0 for the first, one more after each resume).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Observer {
    /// The table's index in the run.
    pub table_index: usize,
    /// The bot's seat in its group.
    pub seat: usize,
    /// The bot's connection: 0, then one more after each resume.
    pub connection: u32,
}

/// The same event number of one table told with different bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The table.
    pub table: TableId,
    /// The event's number.
    pub seq: u64,
    /// The bytes seen first (the ones the witness keeps).
    pub first: Vec<u8>,
    /// Who saw them.
    pub first_seen_by: Observer,
    /// The different bytes seen later.
    pub later: Vec<u8>,
    /// Who saw those.
    pub later_seen_by: Observer,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let describe = |bytes: &[u8]| {
            wire::decode_event(bytes)
                .map_or_else(|e| format!("undecodable ({e})"), |e| format!("{e:?}"))
        };
        write!(
            f,
            "table {} event {}: {:?} saw {}, {:?} saw {}",
            self.table,
            self.seq,
            self.first_seen_by,
            describe(&self.first),
            self.later_seen_by,
            describe(&self.later)
        )
    }
}

#[derive(Debug, Default)]
struct Record {
    events: BTreeMap<(TableId, u64), (Vec<u8>, Observer)>,
    conflicts: Vec<Conflict>,
}

/// What every bot of a run was told, by (table, event number); see the [module](self).
#[derive(Debug)]
pub struct Witness {
    record: Mutex<Record>,
    /// Events recorded so far (duplicates included): woken on every batch.
    fed: watch::Sender<u64>,
}

impl Default for Witness {
    fn default() -> Self {
        Self {
            record: Mutex::new(Record::default()),
            fed: watch::Sender::new(0),
        }
    }
}

impl Witness {
    /// An empty witness.
    pub fn new() -> Self {
        Self::default()
    }

    /// `observer` received an `events` batch of `table` whose first event is number
    /// `first_seq`.
    pub fn record_batch(
        &self,
        observer: Observer,
        table: TableId,
        first_seq: u64,
        events: &[Event],
    ) {
        if events.is_empty() {
            return;
        }
        let encoded: Vec<Vec<u8>> = events.iter().map(wire::encode_event).collect();
        if let Ok(mut record) = self.record.lock() {
            let Record { events, conflicts } = &mut *record;
            for (seq, bytes) in (first_seq..).zip(encoded) {
                match events.get(&(table, seq)) {
                    None => {
                        events.insert((table, seq), (bytes, observer));
                    }
                    Some((first, _)) if *first == bytes => {}
                    Some((first, first_seen_by)) => conflicts.push(Conflict {
                        table,
                        seq,
                        first: first.clone(),
                        first_seen_by: *first_seen_by,
                        later: bytes,
                        later_seen_by: observer,
                    }),
                }
            }
        }
        self.fed.send_modify(|n| *n += events.len() as u64);
    }

    /// Every event seen: (table, number) → its canonical bytes (the first seen).
    pub fn events(&self) -> BTreeMap<(TableId, u64), Vec<u8>> {
        self.record
            .lock()
            .map(|r| {
                r.events
                    .iter()
                    .map(|(key, (bytes, _))| (*key, bytes.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The events seen of one table: number → canonical bytes.
    pub fn table(&self, table: TableId) -> BTreeMap<u64, Vec<u8>> {
        self.record
            .lock()
            .map(|r| {
                r.events
                    .range((table, 0)..=(table, u64::MAX))
                    .map(|((_, seq), (bytes, _))| (*seq, bytes.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tables seen.
    pub fn tables(&self) -> Vec<TableId> {
        let mut tables: Vec<TableId> = self
            .record
            .lock()
            .map(|r| r.events.keys().map(|(table, _)| *table).collect())
            .unwrap_or_default();
        tables.dedup();
        tables
    }

    /// Distinct (table, number) keys seen.
    pub fn len(&self) -> usize {
        self.record.lock().map(|r| r.events.len()).unwrap_or(0)
    }

    /// Whether nothing was seen yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every conflict, in the order they were seen.
    pub fn conflicts(&self) -> Vec<Conflict> {
        self.record
            .lock()
            .map(|r| r.conflicts.clone())
            .unwrap_or_default()
    }

    /// Waits until `done` holds for this witness (checked now and after every batch it is
    /// fed), or until `patience` is over; returns whether it held.
    pub async fn wait_until(
        &self,
        patience: Duration,
        mut done: impl FnMut(&Self) -> bool,
    ) -> bool {
        let mut fed = self.fed.subscribe();
        let wait = async {
            loop {
                fed.borrow_and_update();
                if done(self) {
                    return;
                }
                if fed.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(patience, wait).await.is_ok()
    }

    /// Holds what was seen of `table` against the server's journal of it (`journal[k]` is
    /// event number `k + 1`, as [`fetch_journal`] returns it).
    pub fn check_journal(&self, table: TableId, journal: &[Event]) -> JournalCheck {
        let seen = self.table(table);
        let journal: BTreeMap<u64, Vec<u8>> = (1u64..)
            .zip(journal)
            .map(|(seq, event)| (seq, wire::encode_event(event)))
            .collect();
        let mut check = JournalCheck::default();
        for (seq, bytes) in &seen {
            match journal.get(seq) {
                Some(logged) if logged == bytes => check.matching += 1,
                Some(_) => check.differing.push(*seq),
                None => check.beyond_journal.push(*seq),
            }
        }
        check.unseen = journal
            .keys()
            .filter(|seq| !seen.contains_key(seq))
            .copied()
            .collect();
        check
    }
}

/// The witness of one table against the server's journal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalCheck {
    /// Events seen with the journal's bytes.
    pub matching: usize,
    /// Numbers seen with other bytes than the journal's.
    pub differing: Vec<u64>,
    /// Numbers seen after the journal's last event. The server journals nothing of what
    /// happens at a table after its game-over mark (chat, people leaving): at a finished table
    /// those come here. Anywhere else they are events the journal lost.
    pub beyond_journal: Vec<u64>,
    /// Numbers in the journal no bot received in an `events` batch (the first player's own
    /// arrival is in his snapshot; what happened after the last bot left reached nobody).
    pub unseen: Vec<u64>,
}

impl JournalCheck {
    /// Nothing seen differs from the journal or is missing from it.
    pub fn agrees(&self) -> bool {
        self.differing.is_empty() && self.beyond_journal.is_empty()
    }
}

/// How long [`fetch_journal`] waits for each answer.
const JOURNAL_PATIENCE: Duration = Duration::from_secs(30);

/// Reads every event of `table` from the server's journal: connects to `url` (the server's
/// WebSocket, e.g. `ws://127.0.0.1:7878/ws`), watches the table and pages `get_events` from
/// event 1. `journal[k]` is event number `k + 1`. The table must still be open (a finished
/// table stays open for the grace period after its last player left).
pub async fn fetch_journal(url: &str, table: TableId) -> Result<Vec<Event>, BotError> {
    let mut ws = link::connect(url).await?;
    let hello = ClientMessage::Hello {
        id: 1,
        protocol: PROTOCOL_VERSION,
        client: "grand-melee-loadtest witness".into(),
    };
    ask(&mut ws, "hello", &hello).await?;
    let watch = ClientMessage::Watch {
        id: 2,
        table,
        password: None,
    };
    ask(&mut ws, "watch", &watch).await?;
    let mut events = Vec::new();
    let mut from_seq = 1;
    for id in 3u32.. {
        let request = ClientMessage::GetEvents {
            id,
            table,
            from_seq,
            limit: wire::MAX_PAGE_ITEMS,
        };
        let page = ask(&mut ws, "get_events", &request).await?;
        let ServerMessage::PastEvents {
            events: page,
            next_seq,
            ..
        } = page
        else {
            return Err(BotError::Refused {
                request: "get_events",
                code: format!("unexpected answer {}", page.name()),
            });
        };
        events.extend(page);
        match next_seq {
            Some(next) => from_seq = next,
            None => break,
        }
    }
    let _ = ws.close(None).await;
    Ok(events)
}

/// Sends `message` and waits for its answer; an `error` answer is `Refused`.
async fn ask(
    ws: &mut link::Socket,
    request: &'static str,
    message: &ClientMessage,
) -> Result<ServerMessage, BotError> {
    let id = message.id();
    ws.send(Message::Binary(wire::encode_client(message).into()))
        .await?;
    let answer = async {
        loop {
            match ws.next().await.ok_or(BotError::Closed(None))?? {
                Message::Binary(bytes) => {
                    let message = wire::decode_server(&bytes)?;
                    if message.reply_to() == Some(id) {
                        return Ok(message);
                    }
                }
                Message::Close(frame) => {
                    return Err(BotError::Closed(frame.map(|f| u16::from(f.code))));
                }
                _ => {}
            }
        }
    };
    match tokio::time::timeout(JOURNAL_PATIENCE, answer).await {
        Err(_) => Err(BotError::Timeout(request)),
        Ok(Ok(ServerMessage::Error { code, .. })) => Err(BotError::Refused {
            request,
            code: code.name().to_owned(),
        }),
        Ok(answer) => answer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observer(seat: usize, connection: u32) -> Observer {
        Observer {
            table_index: 0,
            seat,
            connection,
        }
    }

    #[test]
    fn keeps_the_first_bytes_and_every_conflict() {
        let witness = Witness::new();
        let table = TableId::from_u128(7);
        let joined = |player| Event::HostChanged {
            player: Some(player),
        };
        witness.record_batch(observer(0, 0), table, 3, &[joined(1), joined(2)]);
        // The same again from another bot: no conflict.
        witness.record_batch(observer(1, 0), table, 3, &[joined(1), joined(2)]);
        // Different bytes for event 4, from another bot and from the first after a resume.
        witness.record_batch(observer(1, 0), table, 4, &[joined(9)]);
        witness.record_batch(observer(0, 1), table, 4, &[joined(8), joined(3)]);
        let seen = witness.table(table);
        assert_eq!(seen.keys().copied().collect::<Vec<_>>(), vec![3, 4, 5]);
        assert_eq!(
            seen[&4],
            wire::encode_event(&joined(2)),
            "the first bytes stay"
        );
        let conflicts = witness.conflicts();
        assert_eq!(conflicts.len(), 2, "{conflicts:?}");
        assert_eq!(conflicts[0].later, wire::encode_event(&joined(9)));
        assert_eq!(conflicts[1].later_seen_by, observer(0, 1));
        assert!(
            conflicts
                .iter()
                .all(|c| c.seq == 4 && c.first_seen_by == observer(0, 0))
        );

        let journal = [
            joined(0),
            joined(0),
            joined(1),
            joined(2),
            joined(3),
            joined(4),
        ];
        let check = witness.check_journal(table, &journal);
        assert_eq!(check.matching, 3);
        assert!(check.agrees());
        assert_eq!(check.unseen, vec![1, 2, 6]);
        let short = witness.check_journal(table, &journal[..4]);
        assert_eq!(short.beyond_journal, vec![5]);
        assert!(!short.agrees());
    }
}
