//! The session against a scripted fake server: a gap in the event numbers makes the client ask
//! for a snapshot and skip events until it arrives; a malformed frame does not stop it.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grand_melee_cli::script::Script;
use grand_melee_cli::session::{self, Input, Mode, Options};
use grand_melee_cli::store::TokenStore;
use grand_melee_protocol::{
    self as wire, ClientMessage, Event, Mirror, PROTOCOL_VERSION, SeatToken, ServerMessage,
    Settings, TableId, TableView,
};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

const PATIENCE: Duration = Duration::from_secs(20);

/// Output shared between the session's front end and the test.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>, Arc<tokio::sync::Notify>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        self.1.notify_one();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn joined(player: u16, name: &str) -> Event {
    Event::PlayerJoined {
        player,
        name: name.into(),
        entropy: String::new(),
        deck: None,
    }
}

#[tokio::test]
async fn a_gap_in_the_events_is_repaired_with_a_snapshot() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let table = TableId::new_random();
    let (requests_tx, mut requests) = mpsc::unbounded_channel::<ClientMessage>();

    let fake = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
        let send = |m: ServerMessage| Message::Binary(wire::encode_server(&m).into());
        let mut fake_table =
            Mirror::new(&TableView::new(table, "Fake", Settings::default())).unwrap();
        fake_table.apply_batch(1, &[joined(0, "Ann")]).unwrap();
        while let Some(Ok(frame)) = ws.next().await {
            let Message::Binary(bytes) = frame else {
                continue;
            };
            let request = wire::decode_client(&bytes).unwrap();
            requests_tx.send(request.clone()).unwrap();
            match request {
                ClientMessage::Hello { id, protocol, .. } => {
                    assert_eq!(protocol, PROTOCOL_VERSION);
                    ws.send(send(ServerMessage::Welcome {
                        reply_to: id,
                        protocol,
                        server: "fake".into(),
                    }))
                    .await
                    .unwrap();
                }
                ClientMessage::Join { id, .. } => {
                    ws.send(send(ServerMessage::Seated {
                        reply_to: id,
                        table,
                        player: 0,
                        token: SeatToken::new_random(),
                    }))
                    .await
                    .unwrap();
                    ws.send(send(ServerMessage::Snapshot {
                        reply_to: None,
                        view: fake_table.view(),
                    }))
                    .await
                    .unwrap();
                    // Event 2, then a frame that is not a message, then event 4: 3 was lost.
                    ws.send(send(ServerMessage::Events {
                        table,
                        seq: 2,
                        events: vec![joined(1, "Ben")],
                    }))
                    .await
                    .unwrap();
                    ws.send(Message::Binary(vec![0xc1, 0x00].into()))
                        .await
                        .unwrap();
                    ws.send(send(ServerMessage::Events {
                        table,
                        seq: 4,
                        events: vec![joined(3, "Dan")],
                    }))
                    .await
                    .unwrap();
                }
                ClientMessage::Snapshot { id } => {
                    fake_table
                        .apply_batch(2, &[joined(1, "Ben"), joined(2, "Cid"), joined(3, "Dan")])
                        .unwrap();
                    ws.send(send(ServerMessage::Snapshot {
                        reply_to: Some(id),
                        view: fake_table.view(),
                    }))
                    .await
                    .unwrap();
                    ws.send(send(ServerMessage::Events {
                        table,
                        seq: 5,
                        events: vec![Event::Chat {
                            from: Some(2),
                            name: "Cid".into(),
                            text: "all here".into(),
                        }],
                    }))
                    .await
                    .unwrap();
                }
                _ => {}
            }
        }
    });

    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::new(dir.path());
    let out = Shared::default();
    let (inputs_tx, mut inputs) = mpsc::channel::<Input>(8);
    let mut frontend = Script::new(out.clone());
    let client = tokio::spawn({
        let url = url.clone();
        async move {
            session::play(
                url,
                Mode::Join {
                    table,
                    name: "Ann".into(),
                    password: None,
                    member_token: None,
                },
                &store,
                &mut inputs,
                &mut frontend,
                &Options::default(),
            )
            .await
        }
    });

    // The client asks for a snapshot after the gap…
    let mut kinds = Vec::new();
    loop {
        let request = tokio::time::timeout(PATIENCE, requests.recv())
            .await
            .unwrap()
            .unwrap();
        kinds.push(request.name());
        if request.name() == "snapshot" {
            break;
        }
    }
    assert_eq!(kinds, ["hello", "join", "snapshot"]);
    // …and goes on from the fresh view once it arrives. The end of input ends the session.
    tokio::time::timeout(PATIENCE, async {
        while !out.text().contains("event 5 chat") {
            out.1.notified().await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no event 5 in:\n{}", out.text()));
    drop(inputs_tx);
    let result = tokio::time::timeout(PATIENCE, client)
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_ok(), "{result:?}");
    fake.abort();

    let text = out.text();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&r#"event 2 player_joined player=1 "Ben""#),
        "{text}"
    );
    assert!(
        !text.contains("event 4 "),
        "event 4 arrived after a gap and is skipped: {text}"
    );
    assert!(text.contains("error resync: missed events"), "{text}");
    assert!(text.contains("error protocol: ignored a message"), "{text}");
    assert!(
        lines.contains(&"snapshot seq=4 stage=lobby players=4"),
        "{text}"
    );
    assert!(
        lines.contains(&r#"event 5 chat from=2 "Cid" text="all here""#),
        "{text}"
    );
}
