//! The engine facts the cluster mode relies on, checked against real nats-server processes
//! (and, with them, the harness in `grand_melee_e2e::nats`): compare-and-set on key-value
//! entries and on a stream subject's last sequence, and an R3 stream that loses no acknowledged
//! message and keeps its sequence without gap or repeat when its leader is killed.

#![allow(clippy::unwrap_used)]

use async_nats::HeaderMap;
use async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::kv::{CreateErrorKind, UpdateErrorKind};
use async_nats::jetstream::stream::{Config, StorageType};
use async_nats::jetstream::{self, kv};
use grand_melee_e2e::nats::NatsCluster;

/// Headers that make a publish conditional on `subject`'s last sequence being `sequence`.
fn expect_last(sequence: u64) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
        sequence.to_string().as_str(),
    );
    headers
}

#[tokio::test(flavor = "multi_thread")]
async fn single_node_compare_and_set() {
    let nats = NatsCluster::start(1).await;
    let js = jetstream::new(async_nats::connect(nats.url(0)).await.unwrap());

    // Key-value: create, update at the right revision, refuse a stale one.
    let kv = js
        .create_key_value(kv::Config {
            bucket: "seats".into(),
            history: 5,
            ..Default::default()
        })
        .await
        .unwrap();
    let first = kv.create("t1", "a".into()).await.unwrap();
    let again = kv.create("t1", "b".into()).await.unwrap_err();
    assert_eq!(again.kind(), CreateErrorKind::AlreadyExists, "{again}");
    let second = kv.update("t1", "c".into(), first).await.unwrap();
    assert!(second > first);
    let stale = kv.update("t1", "d".into(), first).await.unwrap_err();
    assert_eq!(stale.kind(), UpdateErrorKind::WrongLastRevision, "{stale}");
    let entry = kv.entry("t1").await.unwrap().unwrap();
    assert_eq!((entry.revision, &entry.value[..]), (second, &b"c"[..]));

    // A stream: publish conditional on the subject's last sequence.
    js.create_stream(Config {
        name: "T".into(),
        subjects: vec!["t.>".into()],
        storage: StorageType::File,
        ..Default::default()
    })
    .await
    .unwrap();
    let one = js
        .publish_with_headers("t.a", expect_last(0), "1".into())
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(one.sequence, 1);
    // Another subject does not move t.a's last sequence.
    let other = js.publish("t.b", "x".into()).await.unwrap().await.unwrap();
    assert_eq!(other.sequence, 2);
    let two = js
        .publish_with_headers("t.a", expect_last(1), "2".into())
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(two.sequence, 3);
    let refused = js
        .publish_with_headers("t.a", expect_last(1), "stale".into())
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(
        refused.kind(),
        PublishErrorKind::WrongLastSequence,
        "{refused}"
    );
    let stream = js.get_stream("T").await.unwrap();
    assert_eq!(
        stream.cached_info().state.messages,
        3,
        "the stale publish stored nothing"
    );
    assert_eq!(nats.stream_leader("T").await, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn r3_stream_survives_its_leader_being_killed() {
    let mut nats = NatsCluster::start(3).await;
    let js = nats.jetstream().await;
    js.create_stream(Config {
        name: "EVENTS".into(),
        subjects: vec!["ev.>".into()],
        storage: StorageType::File,
        num_replicas: 3,
        ..Default::default()
    })
    .await
    .unwrap();
    for n in 1..=100_u64 {
        let ack = js
            .publish("ev.t1", format!("m{n}").into())
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(ack.sequence, n);
    }

    let leader = nats.wait_for_stream_leader("EVENTS", None).await;
    nats.kill(leader);
    assert!(!nats.is_running(leader));
    let new_leader = nats.wait_for_stream_leader("EVENTS", Some(leader)).await;
    assert_ne!(new_leader, leader);

    // A client of the surviving nodes reads every acknowledged message, in order.
    let survivor = (0..3).find(|&i| i != leader).unwrap();
    let js = jetstream::new(async_nats::connect(nats.url(survivor)).await.unwrap());
    let stream = js.get_stream("EVENTS").await.unwrap();
    assert_eq!(stream.cached_info().state.last_sequence, 100);
    for n in 1..=100_u64 {
        let message = stream.get_raw_message(n).await.unwrap();
        assert_eq!(message.sequence, n);
        assert_eq!(message.payload, format!("m{n}").as_bytes());
    }

    // Publishing goes on at 101, without gap or repeat.
    for n in 101..=200_u64 {
        let ack = js
            .publish("ev.t1", format!("m{n}").into())
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(ack.sequence, n);
        assert!(!ack.duplicate);
    }
    let info = js.get_stream("EVENTS").await.unwrap();
    let state = &info.cached_info().state;
    assert_eq!(
        (state.first_sequence, state.last_sequence, state.messages),
        (1, 200, 200)
    );

    // The killed node comes back on its ports and store, and the cluster answers through it.
    nats.restart(leader).await;
    assert!(nats.is_running(leader));
    let back = jetstream::new(async_nats::connect(nats.url(leader)).await.unwrap());
    let stream = back.get_stream("EVENTS").await.unwrap();
    assert_eq!(stream.cached_info().state.last_sequence, 200);
    assert!(nats.stream_leader("EVENTS").await.is_some());

    // A paused follower does not stop the other two from acknowledging.
    nats.stop(leader);
    assert!(nats.is_stopped(leader) && nats.is_running(leader));
    let ack = js
        .publish("ev.t1", "m201".into())
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(ack.sequence, 201);
    nats.cont(leader);
    assert!(!nats.is_stopped(leader));
}
