//! The journal against real files in a temporary directory.

#![allow(clippy::unwrap_used)]

// In a module so that `cargo test journal` selects every test here.

mod journal {
    use std::io::{BufRead, BufReader, Write};
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use grand_melee_server::journal::{
        DB_FILE, Durability, Journal, JournalError, SCHEMA_VERSION, TableRecord,
    };
    use uuid::Uuid;

    fn record(name: &str, created_at_ms: u64) -> TableRecord {
        TableRecord {
            id: Uuid::new_v4(),
            name: name.to_owned(),
            password: None,
            settings: vec![1, 2, 3, name.len() as u8],
            created_at_ms,
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
        let alice = Uuid::new_v4();
        let bob = Uuid::new_v4();
        let bob_again = Uuid::new_v4();
        let carol = Uuid::new_v4();
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
        journal.finish(done.id, 9_000).await.unwrap();
        journal
            .append(older_done.id, 1, events(1, 2))
            .await
            .unwrap();
        journal.finish(older_done.id, 3_000).await.unwrap();

        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.len(), 1);
        let stored = &unfinished[0];
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
        assert_eq!(journal.table(Uuid::new_v4()).unwrap(), None);
        assert!(matches!(
            journal.events(Uuid::new_v4()),
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

    #[tokio::test]
    async fn operations_on_unknown_or_finished_tables_fail() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        let ghost = Uuid::new_v4();
        assert!(matches!(
            journal.append(ghost, 0, events(0, 1)).await,
            Err(JournalError::UnknownTable(id)) if id == ghost
        ));
        assert!(matches!(
            journal.set_seat(ghost, 0, Uuid::new_v4()).await,
            Err(JournalError::UnknownTable(_))
        ));
        assert!(matches!(
            journal.set_meta(ghost, "host", vec![1]).await,
            Err(JournalError::UnknownTable(_))
        ));
        assert!(matches!(
            journal.finish(ghost, 1).await,
            Err(JournalError::UnknownTable(_))
        ));
        journal.remove_seat(ghost, 0).await.unwrap();
        journal.delete_table(ghost).await.unwrap();

        let table = record("t", 1);
        journal.create_table(table.clone()).await.unwrap();
        journal.append(table.id, 0, events(0, 2)).await.unwrap();
        journal.finish(table.id, 10).await.unwrap();
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
        huge.id = Uuid::new_v4();
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
            journal.set_seat(table.id, 0, Uuid::new_v4()).await.unwrap();
            journal.set_meta(table.id, "host", vec![0]).await.unwrap();
        }
        journal.delete_table(abandoned.id).await.unwrap();
        assert_eq!(journal.table(abandoned.id).unwrap(), None);
        let unfinished = journal.unfinished_tables().unwrap();
        assert_eq!(unfinished.len(), 1);
        assert_eq!(unfinished[0].record, kept);
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
        let token = Uuid::new_v4();
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
            journal.finish(table.id, 5).await.unwrap();
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
        assert!(journal.unfinished_tables().unwrap().is_empty());
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
        journal.set_seat(table.id, 0, Uuid::new_v4()).await.unwrap();
        journal.close().await.unwrap();
        {
            let conn = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
            conn.pragma_update(None, "ignore_check_constraints", "ON")
                .unwrap();
            conn.execute("UPDATE seats SET token = x'0102'", [])
                .unwrap();
        }
        let journal = Journal::open(dir.path(), Durability::Full).unwrap();
        assert!(matches!(
            journal.unfinished_tables(),
            Err(JournalError::Corrupt(_))
        ));
        assert!(matches!(
            journal.table(table.id),
            Err(JournalError::Corrupt(_))
        ));
        // What does not touch the corrupt row still works.
        assert!(journal.events(table.id).unwrap().is_empty());
        journal.close().await.unwrap();
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
        let id: Uuid = std::env::var(CHILD_TABLE).unwrap().parse().unwrap();
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
        let id = Uuid::new_v4();
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
