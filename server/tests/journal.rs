//! The journal against real files in a temporary directory.

#![allow(clippy::unwrap_used)]

// In a module so that `cargo test journal` selects every test here.

mod journal {
    use std::io::{BufRead, BufReader, Write};
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use grand_melee_protocol::{SeatToken, TableId};
    use grand_melee_server::journal::{
        DB_FILE, Durability, Flush, Journal, JournalError, SCHEMA_VERSION, StoredTable, TableOp,
        TableRecord, UnfinishedTables,
    };

    fn record(name: &str, created_at_ms: u64) -> TableRecord {
        TableRecord {
            id: TableId::new_random(),
            name: name.to_owned(),
            password: None,
            settings: vec![1, 2, 3, name.len() as u8],
            created_at_ms,
            league: None,
        }
    }

    fn event(seq: u64) -> Vec<u8> {
        format!("event {seq}").into_bytes()
    }

    fn events(first: u64, count: u64) -> Vec<Vec<u8>> {
        (first..first + count).map(event).collect()
    }

    fn numbered(first: u64, count: u64) -> Vec<(u64, Vec<u8>)> {
        (first..first + count)
            .map(|seq| (seq, event(seq)))
            .collect()
    }

    #[tokio::test]
    async fn round_trip_of_tables_seats_meta_events_and_replays() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        assert_eq!(journal.path(), dir.path().join(DB_FILE));

        let mut running = record("running", 1_000);
        running.password = Some("secret".into());
        let done = record("done", 2_000);
        let older_done = record("older done", 500);
        for table in [&running, &done, &older_done] {
            journal.create_table(table.clone()).await.unwrap();
        }

        journal.append(running.id, 0, events(0, 3)).await.unwrap();
        journal.append(running.id, 3, events(3, 2)).await.unwrap();
        journal.append(running.id, 5, Vec::new()).await.unwrap();
        let alice = SeatToken::new_random();
        let bob = SeatToken::new_random();
        let bob_again = SeatToken::new_random();
        let carol = SeatToken::new_random();
        journal.set_seat(running.id, 2, bob).await.unwrap();
        journal.set_seat(running.id, 0, alice).await.unwrap();
        journal.set_seat(running.id, 5, carol).await.unwrap();
        journal.set_seat(running.id, 2, bob_again).await.unwrap();
        journal.remove_seat(running.id, 5).await.unwrap();
        journal.remove_seat(running.id, 9).await.unwrap();
        journal
            .set_meta(running.id, "paused", vec![0])
            .await
            .unwrap();
        journal.set_meta(running.id, "host", vec![7]).await.unwrap();
        journal
            .set_meta(running.id, "paused", vec![1])
            .await
            .unwrap();

        journal.append(done.id, 0, events(0, 4)).await.unwrap();
        journal.finish(done.id, 9_000, Vec::new()).await.unwrap();
        journal
            .append(older_done.id, 1, events(1, 2))
            .await
            .unwrap();
        journal
            .finish(older_done.id, 3_000, Vec::new())
            .await
            .unwrap();

        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.unreadable, vec![]);
        assert_eq!(unfinished.tables.len(), 1);
        let stored = &unfinished.tables[0];
        assert_eq!(stored.record, running);
        assert_eq!(stored.seats, vec![(0, alice), (2, bob_again)]);
        assert_eq!(
            stored.meta,
            vec![("host".to_owned(), vec![7]), ("paused".to_owned(), vec![1])]
        );
        assert_eq!(stored.events, numbered(0, 5));
        assert_eq!(stored.finished_at_ms, None);

        let replays = journal.replays().unwrap();
        assert_eq!(replays.len(), 2);
        assert_eq!(replays[0].id, done.id);
        assert_eq!(replays[0].name, "done");
        assert_eq!(replays[0].created_at_ms, 2_000);
        assert_eq!(replays[0].finished_at_ms, 9_000);
        assert_eq!(replays[0].events, 4);
        assert_eq!(replays[1].id, older_done.id);
        assert_eq!(replays[1].events, 2);

        assert_eq!(journal.events(done.id).unwrap(), numbered(0, 4));
        assert_eq!(journal.events(older_done.id).unwrap(), numbered(1, 2));
        let finished = journal.table(done.id).unwrap().unwrap();
        assert_eq!(finished.record, done);
        assert_eq!(finished.finished_at_ms, Some(9_000));
        assert_eq!(finished.events, numbered(0, 4));
        assert_eq!(journal.table(TableId::new_random()).unwrap(), None);
        assert!(matches!(
            journal.events(TableId::new_random()),
            Err(JournalError::UnknownTable(_))
        ));

        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn duplicate_and_rewritten_events_are_rejected_whole() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        journal.append(table.id, 0, events(0, 3)).await.unwrap();

        let error = journal.append(table.id, 2, events(2, 1)).await.unwrap_err();
        assert!(
            matches!(error, JournalError::DuplicateEvent { seq: 2, table: id } if id == table.id)
        );
        // A rewrite with different bytes is refused the same way.
        let error = journal
            .append(table.id, 1, vec![b"forged".to_vec()])
            .await
            .unwrap_err();
        assert!(matches!(error, JournalError::DuplicateEvent { seq: 1, .. }));
        // A batch overlapping at its start writes none of its events.
        let mut overlapping = events(3, 2);
        overlapping.push(b"again".to_vec());
        let error = journal.append(table.id, 1, overlapping).await.unwrap_err();
        assert!(matches!(error, JournalError::DuplicateEvent { seq: 1, .. }));
        let error = journal.append(table.id, 3, events(3, 2)).await;
        assert!(error.is_ok(), "{error:?}");
        let error = journal.append(table.id, 4, events(4, 2)).await.unwrap_err();
        assert!(matches!(error, JournalError::DuplicateEvent { seq: 4, .. }));

        assert_eq!(journal.events(table.id).unwrap(), numbered(0, 5));

        // The table itself cannot be created twice either.
        assert!(matches!(
            journal.create_table(table.clone()).await,
            Err(JournalError::TableExists(id)) if id == table.id
        ));
        // The journal goes on after failed operations.
        journal.append(table.id, 5, events(5, 1)).await.unwrap();
        assert_eq!(journal.events(table.id).unwrap(), numbered(0, 6));
        journal.close().await.unwrap();
    }

    /// One request's events and records are one write: a record that fails takes the events
    /// before it back, and what is written reads back as the fold of the flushes (the cluster's
    /// way of reading a table), so both stores agree.
    #[tokio::test]
    async fn a_flush_is_written_all_or_nothing_and_reads_back_as_its_fold() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        let (alice, bob) = (SeatToken::new_random(), SeatToken::new_random());

        // The game-over mark cannot be stored (out of SQLite's range): nothing of it is.
        let refused = Flush {
            first_seq: 1,
            events: events(1, 3),
            ops: vec![
                TableOp::SetSeat {
                    player: 0,
                    token: alice,
                },
                TableOp::Finish {
                    at_ms: u64::MAX,
                    credits: Vec::new(),
                    climb: None,
                },
            ],
        };
        let error = journal.flush(table.id, refused).await.unwrap_err();
        assert!(
            matches!(error, JournalError::OutOfRange { .. }),
            "{error:?}"
        );
        let stored = journal.table(table.id).unwrap().unwrap();
        assert_eq!(
            stored,
            StoredTable::new(table.clone()),
            "the refused flush left rows"
        );

        let flushes = [
            Flush {
                first_seq: 1,
                events: events(1, 3),
                ops: vec![
                    TableOp::SetSeat {
                        player: 0,
                        token: alice,
                    },
                    TableOp::SetSeat {
                        player: 1,
                        token: bob,
                    },
                ],
            },
            Flush {
                first_seq: 4,
                events: events(4, 1),
                ops: vec![
                    TableOp::RemoveSeat { player: 0 },
                    TableOp::SetMeta {
                        key: "banned_addresses".to_owned(),
                        value: vec![0x90],
                    },
                    TableOp::Finish {
                        at_ms: 77,
                        credits: Vec::new(),
                        climb: None,
                    },
                ],
            },
        ];
        let mut folded = StoredTable::new(table.clone());
        for flush in flushes {
            folded.apply(&flush).unwrap();
            journal.flush(table.id, flush).await.unwrap();
        }
        let stored = journal.table(table.id).unwrap().unwrap();
        assert_eq!(stored, folded);
        assert_eq!(stored.events, numbered(1, 4));
        assert_eq!(stored.seats, vec![(1, bob)]);
        assert_eq!(stored.finished_at_ms, Some(77));
        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn operations_on_unknown_or_finished_tables_fail() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let ghost = TableId::new_random();
        assert!(matches!(
            journal.append(ghost, 0, events(0, 1)).await,
            Err(JournalError::UnknownTable(id)) if id == ghost
        ));
        assert!(matches!(
            journal.set_seat(ghost, 0, SeatToken::new_random()).await,
            Err(JournalError::UnknownTable(_))
        ));
        assert!(matches!(
            journal.set_meta(ghost, "host", vec![1]).await,
            Err(JournalError::UnknownTable(_))
        ));
        assert!(matches!(
            journal.finish(ghost, 1, Vec::new()).await,
            Err(JournalError::UnknownTable(_))
        ));
        journal.remove_seat(ghost, 0).await.unwrap();
        journal.delete_table(ghost).await.unwrap();

        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        journal.append(table.id, 0, events(0, 2)).await.unwrap();
        journal.finish(table.id, 10, Vec::new()).await.unwrap();
        assert!(matches!(
            journal.append(table.id, 2, events(2, 1)).await,
            Err(JournalError::TableFinished(_))
        ));
        assert_eq!(journal.events(table.id).unwrap(), numbered(0, 2));
        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn sequence_numbers_beyond_sqlite_integers_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        assert!(matches!(
            journal.append(table.id, i64::MAX as u64, events(0, 2)).await,
            Err(JournalError::OutOfRange { value, .. }) if value == i64::MAX as u64 + 1
        ));
        assert!(matches!(
            journal.append(table.id, u64::MAX, events(0, 1)).await,
            Err(JournalError::OutOfRange { .. })
        ));
        let mut huge = record("huge", u64::MAX);
        huge.id = TableId::new_random();
        assert!(matches!(
            journal.create_table(huge).await,
            Err(JournalError::OutOfRange { .. })
        ));
        assert_eq!(journal.events(table.id).unwrap(), Vec::new());
        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn delete_table_removes_everything_it_had() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let abandoned = record("abandoned", 1);
        let kept = record("kept", 2);
        for table in [&abandoned, &kept] {
            journal.create_table(table.clone()).await.unwrap();
            journal.append(table.id, 0, events(0, 2)).await.unwrap();
            journal
                .set_seat(table.id, 0, SeatToken::new_random())
                .await
                .unwrap();
            journal.set_meta(table.id, "host", vec![0]).await.unwrap();
        }
        journal.delete_table(abandoned.id).await.unwrap();
        assert_eq!(journal.table(abandoned.id).unwrap(), None);
        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.unreadable, vec![]);
        assert_eq!(unfinished.tables.len(), 1);
        assert_eq!(unfinished.tables[0].record, kept);
        // The id can be used again, from scratch.
        journal.create_table(abandoned.clone()).await.unwrap();
        let fresh = journal.table(abandoned.id).unwrap().unwrap();
        assert!(fresh.events.is_empty() && fresh.seats.is_empty() && fresh.meta.is_empty());
        journal.close().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_appends_share_transactions() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let tables: Vec<TableRecord> = (0..50).map(|i| record(&format!("t{i}"), i)).collect();
        futures_util::future::try_join_all(
            tables
                .iter()
                .map(|table| journal.create_table(table.clone())),
        )
        .await
        .unwrap();

        let before = journal.transactions();
        futures_util::future::try_join_all(
            tables
                .iter()
                .map(|table| journal.append(table.id, 0, events(0, 10))),
        )
        .await
        .unwrap();
        let used = journal.transactions() - before;
        assert!(used >= 1);
        assert!(used < 50, "50 appends took {used} transactions");

        // Also from separate tasks, as the table actors do.
        let before = journal.transactions();
        let mut tasks = tokio::task::JoinSet::new();
        for table in &tables {
            let journal = journal.clone();
            let id = table.id;
            tasks.spawn(async move { journal.append(id, 10, events(10, 5)).await });
        }
        while let Some(result) = tasks.join_next().await {
            result.unwrap().unwrap();
        }
        let used = journal.transactions() - before;
        assert!(used <= 50, "50 appends took {used} transactions");

        for table in &tables {
            assert_eq!(journal.events(table.id).unwrap(), numbered(0, 15));
        }
        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn a_failing_operation_does_not_fail_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        journal.append(table.id, 0, events(0, 1)).await.unwrap();
        let (good, bad, good_too) = tokio::join!(
            journal.append(table.id, 1, events(1, 1)),
            journal.append(table.id, 0, events(0, 1)),
            journal.set_meta(table.id, "host", vec![3]),
        );
        good.unwrap();
        assert!(matches!(
            bad,
            Err(JournalError::DuplicateEvent { seq: 0, .. })
        ));
        good_too.unwrap();
        let stored = journal.table(table.id).unwrap().unwrap();
        assert_eq!(stored.events, numbered(0, 2));
        assert_eq!(stored.meta, vec![("host".to_owned(), vec![3])]);
        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn reopening_after_close_sees_everything() {
        let dir = tempfile::tempdir().unwrap();
        let table = record("t", 42);
        let token = SeatToken::new_random();
        {
            let journal = Journal::open(dir.path(), Durability::Full).unwrap();
            journal.create_table(table.clone()).await.unwrap();
            journal.append(table.id, 0, events(0, 100)).await.unwrap();
            journal.set_seat(table.id, 3, token).await.unwrap();
            journal.set_meta(table.id, "host", vec![3]).await.unwrap();
            let other = journal.clone();
            journal.close().await.unwrap();
            // Writes through a remaining clone fail; reads still work.
            assert!(matches!(
                other.append(table.id, 100, events(100, 1)).await,
                Err(JournalError::Closed)
            ));
            assert_eq!(other.events(table.id).unwrap().len(), 100);
        }
        // A clean close leaves everything in the main file (the WAL was checkpointed).
        let wal = dir.path().join(format!("{DB_FILE}-wal"));
        assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0);

        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let stored = journal.unfinished_tables().unwrap();
        assert_eq!(stored.unreadable, vec![]);
        let stored = stored.tables;
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].record, table);
        assert_eq!(stored[0].events, numbered(0, 100));
        assert_eq!(stored[0].seats, vec![(3, token)]);
        assert_eq!(stored[0].meta, vec![("host".to_owned(), vec![3])]);
        journal.append(table.id, 100, events(100, 1)).await.unwrap();
        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn dropping_without_close_keeps_committed_data() {
        let dir = tempfile::tempdir().unwrap();
        let table = record("t", 1);
        {
            let journal = Journal::open(dir.path(), Durability::Full).unwrap();
            journal.create_table(table.clone()).await.unwrap();
            journal.append(table.id, 0, events(0, 10)).await.unwrap();
            drop(journal);
        }
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        assert_eq!(journal.events(table.id).unwrap(), numbered(0, 10));
    }

    #[tokio::test]
    async fn normal_durability_works() {
        let dir = tempfile::tempdir().unwrap();
        let table = record("t", 1);
        {
            let journal = Journal::open(dir.path(), Durability::Normal).unwrap();
            assert_eq!(journal.durability(), Durability::Normal);
            journal.create_table(table.clone()).await.unwrap();
            journal.append(table.id, 0, events(0, 20)).await.unwrap();
            journal.finish(table.id, 5, Vec::new()).await.unwrap();
            journal.close().await.unwrap();
        }
        // A journal written with one mode opens with the other.
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let replays = journal.replays().unwrap();
        assert_eq!(replays.len(), 1);
        assert_eq!(replays[0].events, 20);
        journal.close().await.unwrap();
    }

    fn sqlite_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_journal_from_a_newer_server_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch("CREATE TABLE future (x INTEGER); INSERT INTO future VALUES (1);")
                .unwrap();
            conn.pragma_update(None, "user_version", 99).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let files = sqlite_files(dir.path());

        let error = Journal::open(dir.path(), Durability::Full).unwrap_err();
        assert!(
            matches!(
                error,
                JournalError::NewerSchema {
                    found: 99,
                    supported: SCHEMA_VERSION
                }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains("newer server"));

        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            modified
        );
        assert_eq!(sqlite_files(dir.path()), files);
        let conn = rusqlite::Connection::open(&path).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, 99);
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
    }

    #[tokio::test]
    async fn an_empty_version_zero_file_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        std::fs::write(&path, b"").unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        journal.close().await.unwrap();

        let conn = rusqlite::Connection::open(&path).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, i64::from(SCHEMA_VERSION));
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[tokio::test]
    async fn a_version_zero_database_is_migrated_and_a_missing_directory_created() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("nested").join("data");
        std::fs::create_dir_all(&data).unwrap();
        {
            // A valid SQLite database at version 0 with nothing of ours in it.
            let conn = rusqlite::Connection::open(data.join(DB_FILE)).unwrap();
            conn.execute_batch("CREATE TABLE unrelated (x); DROP TABLE unrelated;")
                .unwrap();
        }
        let journal = Journal::open(&data, Durability::Normal).unwrap();
        assert_eq!(
            journal.unfinished_tables().unwrap(),
            UnfinishedTables::default()
        );
        journal.close().await.unwrap();

        let fresh = dir.path().join("does").join("not").join("exist");
        let journal = Journal::open(&fresh, Durability::Full).unwrap();
        assert!(fresh.join(DB_FILE).exists());
        assert!(journal.replays().unwrap().is_empty());
        journal.close().await.unwrap();
    }

    #[test]
    fn a_file_that_is_not_a_database_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let garbage = vec![0x5a; 8192];
        std::fs::write(&path, &garbage).unwrap();
        let error = Journal::open(dir.path(), Durability::Full).unwrap_err();
        assert!(matches!(error, JournalError::Open { .. }), "{error:?}");
        assert_eq!(std::fs::read(&path).unwrap(), garbage);
    }

    #[tokio::test]
    async fn corrupt_rows_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        journal
            .set_seat(table.id, 0, SeatToken::new_random())
            .await
            .unwrap();
        journal.close().await.unwrap();
        {
            let conn = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
            conn.pragma_update(None, "ignore_check_constraints", "ON")
                .unwrap();
            conn.execute("UPDATE seats SET token = x'0102'", [])
                .unwrap();
        }
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        // PRAGMA quick_check sees the broken CHECK constraint: the journal is damaged.
        let damage = journal.damage().unwrap();
        assert!(
            damage.findings.iter().any(|f| f.contains("seats")),
            "{damage:?}"
        );
        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.tables, vec![]);
        assert_eq!(
            unfinished.unreadable.len(),
            1,
            "{:?}",
            unfinished.unreadable
        );
        assert_eq!(unfinished.unreadable[0].id, Some(table.id));
        assert!(
            unfinished.unreadable[0].reason.contains("seat token"),
            "{unfinished:?}"
        );
        assert!(matches!(
            journal.table(table.id),
            Err(JournalError::Corrupt(_))
        ));
        // What does not touch the corrupt row still works.
        assert!(journal.events(table.id).unwrap().is_empty());
        journal.close().await.unwrap();
    }

    // ----- Damage: the journal checked at open, each table read on its own ------------------

    /// A table's `count` events, each with a marker naming the table and a body long enough
    /// that a table's events fill several pages.
    fn marked_events(marker: &str, count: u64) -> Vec<Vec<u8>> {
        (0..count)
            .map(|seq| format!("{marker}-event-{seq:04} {}", "x".repeat(100)).into_bytes())
            .collect()
    }

    fn numbered_from(events: Vec<Vec<u8>>) -> Vec<(u64, Vec<u8>)> {
        (0..).zip(events).collect()
    }

    /// Two unfinished tables, `A` and `B`, each with 200 events (several pages each), two seats
    /// and a host; the journal is closed.
    async fn two_tables(dir: &Path) -> (TableRecord, TableRecord) {
        let journal = Journal::open(dir, Durability::Normal).unwrap();
        let (a, b) = (record("A", 1), record("B", 2));
        for (table, marker) in [(&a, "A"), (&b, "B")] {
            journal.create_table(table.clone()).await.unwrap();
            journal
                .append(table.id, 0, marked_events(marker, 200))
                .await
                .unwrap();
            journal
                .set_seat(table.id, 0, SeatToken::new_random())
                .await
                .unwrap();
            journal
                .set_seat(table.id, 1, SeatToken::new_random())
                .await
                .unwrap();
            journal.set_meta(table.id, "host", vec![0]).await.unwrap();
        }
        journal.close().await.unwrap();
        (a, b)
    }

    use grand_melee_e2e::{contains, flip_a_leaf_page_holding};

    #[tokio::test]
    async fn a_damaged_journal_is_reported_and_not_written_until_the_damage_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = two_tables(dir.path()).await;
        let path = dir.path().join(DB_FILE);
        flip_a_leaf_page_holding(&path, b"A-event-", b"B-event-");
        let damaged = std::fs::read(&path).unwrap();

        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let damage = journal
            .damage()
            .expect("quick_check finds the flipped byte")
            .clone();
        assert_eq!(damage.path, path);
        assert!(!damage.findings.is_empty());
        let message = damage.to_string();
        for needle in [
            path.display().to_string().as_str(),
            "quick_check",
            damage.findings[0].lines().next().unwrap(),
            "backup",
            &format!("{}-wal", path.display()),
            &format!("{}-shm", path.display()),
            "--allow-damaged-journal",
            "GM_ALLOW_DAMAGED_JOURNAL=true",
        ] {
            assert!(message.contains(needle), "{needle:?} in {message}");
        }
        // Nothing is written before the damage is accepted, not even to the sound table.
        assert!(matches!(
            journal.append(b.id, 200, events(200, 1)).await,
            Err(JournalError::Damaged { .. })
        ));
        journal.close().await.unwrap();
        assert!(
            std::fs::read(&path).unwrap() == damaged,
            "the damaged file was not changed"
        );

        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        assert!(journal.damage().is_some());
        journal.accept_damage().unwrap();
        let unfinished = journal.unfinished_tables().unwrap();
        // The damaged table does not hide the sound one.
        assert_eq!(unfinished.tables.len(), 1);
        assert_eq!(unfinished.tables[0].record, b);
        assert_eq!(
            unfinished.tables[0].events,
            numbered_from(marked_events("B", 200))
        );
        assert_eq!(unfinished.tables[0].seats.len(), 2);
        assert_eq!(
            unfinished.unreadable.len(),
            1,
            "{:?}",
            unfinished.unreadable
        );
        assert_eq!(unfinished.unreadable[0].id, Some(a.id));
        assert!(
            unfinished.unreadable[0].reason.contains("malformed"),
            "{:?}",
            unfinished.unreadable
        );

        // Once kept untouched, nothing writes to the damaged table; the sound one goes on.
        journal.keep_untouched([a.id]);
        for result in [
            journal.set_meta(a.id, "host", vec![1]).await,
            journal.remove_seat(a.id, 0).await,
            journal.delete_table(a.id).await,
            journal.finish(a.id, 5, Vec::new()).await,
        ] {
            assert!(
                matches!(result, Err(JournalError::KeptUntouched(id)) if id == a.id),
                "{result:?}"
            );
        }
        journal.append(b.id, 200, events(200, 1)).await.unwrap();
        journal.close().await.unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        for (table, rows) in [("seats", 2), ("meta", 1), ("melee_tables", 1)] {
            let column = if table == "melee_tables" {
                "id"
            } else {
                "table_id"
            };
            let count: i64 = conn
                .query_row(
                    &format!("SELECT count(*) FROM {table} WHERE {column} = ?1"),
                    [a.id.as_bytes().as_slice()],
                    |row| row.get(0),
                )
                .unwrap();
            assert_eq!(count, rows, "{table} rows of the damaged table are kept");
        }
    }

    #[tokio::test]
    async fn a_table_whose_row_is_lost_is_reported_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = two_tables(dir.path()).await;
        {
            // The row of table A goes; its events, seats and metadata stay (as after damage).
            let conn = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
            conn.pragma_update(None, "foreign_keys", "OFF").unwrap();
            conn.execute(
                "DELETE FROM melee_tables WHERE id = ?1",
                [a.id.as_bytes().as_slice()],
            )
            .unwrap();
        }
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.tables.len(), 1);
        assert_eq!(unfinished.tables[0].record, b);
        assert_eq!(
            unfinished.unreadable.len(),
            1,
            "{:?}",
            unfinished.unreadable
        );
        assert_eq!(unfinished.unreadable[0].id, Some(a.id));
        let reason = &unfinished.unreadable[0].reason;
        assert!(
            reason.contains("events, seats, metadata") && reason.contains("lost"),
            "{reason}"
        );
        journal.close().await.unwrap();
    }

    #[tokio::test]
    async fn a_stale_index_does_not_hide_a_table() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Normal).unwrap();
        let (live, done) = (record("live", 1), record("done", 2));
        for table in [&live, &done] {
            journal.create_table(table.clone()).await.unwrap();
            journal.append(table.id, 0, events(0, 3)).await.unwrap();
        }
        journal.finish(done.id, 10, Vec::new()).await.unwrap();
        journal.close().await.unwrap();
        let path = dir.path().join(DB_FILE);
        let root: i64 = {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'melee_tables_finished'",
                [],
                |row| row.get(0),
            )
            .unwrap()
        };
        // One flipped bit in the live table's id inside the index of finished times.
        let mut bytes = std::fs::read(&path).unwrap();
        let root = usize::try_from(root).unwrap();
        let page = (root - 1) * 4096..root * 4096;
        let at = bytes[page.clone()]
            .windows(16)
            .position(|window| window == live.id.as_bytes())
            .unwrap()
            + page.start;
        bytes[at + 15] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();

        // The check at open compares the index with its table.
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let damage = journal.damage().expect("the stale index is found").clone();
        assert!(
            damage
                .findings
                .iter()
                .any(|f| f.contains("melee_tables_finished")),
            "{damage:?}"
        );
        // The table is read from the table itself, not through the index.
        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.unreadable, vec![]);
        assert_eq!(unfinished.tables.len(), 1, "{:?}", unfinished.unreadable);
        assert_eq!(unfinished.tables[0].record, live);
        assert_eq!(unfinished.tables[0].events, numbered(0, 3));
        // Accepting the damage rebuilds the index, so the table's end can be written.
        journal.accept_damage().unwrap();
        journal.finish(live.id, 20, Vec::new()).await.unwrap();
        journal.close().await.unwrap();
        let check: String = rusqlite::Connection::open(&path)
            .unwrap()
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    // ----- Passwords at rest -------------------------------------------------------------------

    /// The schema of version 1, as servers of that version created it.
    const SCHEMA_V1: &str = "
        CREATE TABLE melee_tables (
            id             BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
            name           TEXT    NOT NULL,
            password       TEXT,
            settings       BLOB    NOT NULL,
            created_at_ms  INTEGER NOT NULL CHECK (created_at_ms >= 0),
            finished_at_ms INTEGER CHECK (finished_at_ms >= 0)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX melee_tables_finished ON melee_tables (finished_at_ms);
        CREATE TABLE events (
            table_id BLOB    NOT NULL REFERENCES melee_tables (id) ON DELETE CASCADE,
            seq      INTEGER NOT NULL CHECK (seq >= 0),
            data     BLOB    NOT NULL,
            PRIMARY KEY (table_id, seq)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE seats (
            table_id BLOB    NOT NULL REFERENCES melee_tables (id) ON DELETE CASCADE,
            player   INTEGER NOT NULL CHECK (player BETWEEN 0 AND 65535),
            token    BLOB    NOT NULL CHECK (length(token) = 16),
            PRIMARY KEY (table_id, player)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE meta (
            table_id BLOB NOT NULL REFERENCES melee_tables (id) ON DELETE CASCADE,
            key      TEXT NOT NULL,
            value    BLOB NOT NULL,
            PRIMARY KEY (table_id, key)
        ) STRICT, WITHOUT ROWID;
        PRAGMA user_version = 1;";

    fn argon2_verifies(stored: &str, password: &str) -> bool {
        use argon2::password_hash::PasswordVerifier;
        use argon2::password_hash::phc::PasswordHash;
        PasswordHash::new(stored).is_ok_and(|hash| {
            argon2::Argon2::default()
                .verify_password(password.as_bytes(), &hash)
                .is_ok()
        })
    }

    #[tokio::test]
    async fn a_version_1_journal_has_its_plain_text_passwords_hashed() {
        const SECRET: &str = "correct horse battery staple";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let (locked, open, finished) = (
            record("locked", 1),
            record("open", 2),
            record("finished", 3),
        );
        let hashed_already = {
            use argon2::password_hash::PasswordHasher;
            argon2::Argon2::default()
                .hash_password(b"other secret")
                .unwrap()
                .to_string()
        };
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            conn.execute_batch(SCHEMA_V1).unwrap();
            for (table, password) in [
                (&locked, Some(SECRET)),
                (&open, None),
                (&finished, Some(hashed_already.as_str())),
            ] {
                conn.execute(
                    "INSERT INTO melee_tables (id, name, password, settings, created_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    rusqlite::params![
                        table.id.as_bytes().as_slice(),
                        table.name,
                        password,
                        table.settings,
                        table.created_at_ms as i64
                    ],
                )
                .unwrap();
            }
            assert!(contains(
                &[
                    std::fs::read(&path).unwrap(),
                    std::fs::read(dir.path().join(format!("{DB_FILE}-wal"))).unwrap_or_default()
                ]
                .concat(),
                SECRET.as_bytes()
            ));
        }

        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let stored = journal.table(locked.id).unwrap().unwrap().record.password;
        let stored = stored.expect("the password is kept, hashed");
        assert!(stored.starts_with("$argon2id$"), "{stored}");
        assert!(!stored.contains(SECRET));
        assert!(argon2_verifies(&stored, SECRET));
        assert!(!argon2_verifies(&stored, "wrong"));
        assert_eq!(
            journal.table(open.id).unwrap().unwrap().record.password,
            None
        );
        assert_eq!(
            journal.table(finished.id).unwrap().unwrap().record.password,
            Some(hashed_already),
            "a hash is not hashed again"
        );
        journal.close().await.unwrap();

        // Not left anywhere in the files either.
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            files.extend(std::fs::read(entry.unwrap().path()).unwrap());
        }
        assert!(
            !contains(&files, SECRET.as_bytes()),
            "plain text left in the files"
        );
        let conn = rusqlite::Connection::open(&path).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, i64::from(SCHEMA_VERSION));
    }

    // ----- Replay retention --------------------------------------------------------------------

    fn rows_of(path: &Path, table: TableId) -> i64 {
        let conn = rusqlite::Connection::open(path).unwrap();
        ["events", "seats", "meta"]
            .iter()
            .map(|name| {
                conn.query_row(
                    &format!("SELECT count(*) FROM {name} WHERE table_id = ?1"),
                    [table.as_bytes().as_slice()],
                    |row| row.get::<_, i64>(0),
                )
                .unwrap()
            })
            .sum()
    }

    #[tokio::test]
    async fn prune_replays_deletes_only_finished_games_older_than_the_cutoff() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Normal).unwrap();
        let mut old = Vec::new();
        // More than one pruning chunk of old games.
        for i in 0..130 {
            let table = record(&format!("old {i}"), i);
            journal.create_table(table.clone()).await.unwrap();
            journal.append(table.id, 0, events(0, 2)).await.unwrap();
            journal
                .set_seat(table.id, 0, SeatToken::new_random())
                .await
                .unwrap();
            journal.set_meta(table.id, "host", vec![0]).await.unwrap();
            journal
                .finish(table.id, 1_000 + i, Vec::new())
                .await
                .unwrap();
            old.push(table);
        }
        let recent = record("recent", 1);
        let running = record("running", 0);
        let untouchable = record("kept untouched", 0);
        for table in [&recent, &running, &untouchable] {
            journal.create_table(table.clone()).await.unwrap();
            journal.append(table.id, 0, events(0, 2)).await.unwrap();
        }
        journal.finish(recent.id, 5_000, Vec::new()).await.unwrap();
        journal
            .finish(untouchable.id, 10, Vec::new())
            .await
            .unwrap();
        journal.keep_untouched([untouchable.id]);

        assert_eq!(journal.prune_replays(5_000).await.unwrap(), 130);
        let left: Vec<TableId> = journal.replays().unwrap().iter().map(|r| r.id).collect();
        assert_eq!(left, vec![recent.id, untouchable.id]);
        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.tables.len(), 1);
        assert_eq!(unfinished.tables[0].record, running);
        assert_eq!(unfinished.tables[0].events, numbered(0, 2));
        assert_eq!(journal.prune_replays(5_000).await.unwrap(), 0);
        assert_eq!(journal.prune_replays(5_001).await.unwrap(), 1);
        journal.close().await.unwrap();

        // Their events, seats and metadata went with them (foreign keys are on).
        let path = dir.path().join(DB_FILE);
        for table in &old {
            assert_eq!(rows_of(&path, table.id), 0, "rows of {}", table.name);
        }
        assert_eq!(rows_of(&path, untouchable.id), 2);
        assert_eq!(rows_of(&path, running.id), 2);
    }

    /// Set in the child process of [`a_killed_process_keeps_every_acknowledged_event`]: the data
    /// directory, then the durability.
    const CHILD_DIR: &str = "GRAND_MELEE_JOURNAL_TEST_CHILD_DIR";
    const CHILD_DURABILITY: &str = "GRAND_MELEE_JOURNAL_TEST_CHILD_DURABILITY";
    const CHILD_TABLE: &str = "GRAND_MELEE_JOURNAL_TEST_CHILD_TABLE";

    /// Not a test by itself: in the child process, appends events one batch at a time and reports
    /// each acknowledged seq on stdout until it is killed.
    #[test]
    fn journal_writer_child_process() {
        let Ok(dir) = std::env::var(CHILD_DIR) else {
            return;
        };
        let durability: Durability = std::env::var(CHILD_DURABILITY).unwrap().parse().unwrap();
        let id: TableId = std::env::var(CHILD_TABLE).unwrap().parse().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let journal = Journal::open(Path::new(&dir), durability).unwrap();
            let mut table = record("crash", 1);
            table.id = id;
            journal.create_table(table).await.unwrap();
            let mut stdout = std::io::stdout().lock();
            let mut seq = 0;
            // Bounded, in case the parent is gone.
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                journal.append(id, seq, events(seq, 3)).await.unwrap();
                seq += 3;
                writeln!(stdout, "acked {seq}").unwrap();
                stdout.flush().unwrap();
            }
        });
    }

    fn kill_mid_writing(durability: Durability, kill_after: u64) {
        let dir = tempfile::tempdir().unwrap();
        let id = TableId::new_random();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "journal::journal_writer_child_process",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .env(CHILD_DURABILITY, durability.to_string())
            .env(CHILD_TABLE, id.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut acked = 0;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        while acked < kill_after {
            let Some(line) = lines.next() else { break };
            if let Some(seq) = line.unwrap().strip_prefix("acked ") {
                acked = seq.parse().unwrap();
            }
        }
        // SIGKILL: no destructor, no close, the writer may be mid-transaction.
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            acked >= kill_after,
            "the child stopped after {acked} events"
        );

        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let stored = journal.table(id).unwrap().unwrap();
        // Every acknowledged event is there, maybe a few more (acknowledged but not yet reported),
        // always whole batches, numbered without gaps.
        assert!(stored.events.len() as u64 >= acked);
        assert_eq!(stored.events.len() % 3, 0);
        assert_eq!(stored.events, numbered(0, stored.events.len() as u64));
    }

    #[test]
    fn a_killed_process_keeps_every_acknowledged_event() {
        if std::env::var(CHILD_DIR).is_ok() {
            return;
        }
        kill_mid_writing(Durability::Full, 30);
        kill_mid_writing(Durability::Full, 300);
        kill_mid_writing(Durability::Normal, 600);
    }
}
