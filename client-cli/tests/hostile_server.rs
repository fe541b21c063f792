//! Script mode against a hostile (or buggy) server that sends names and chat full of control
//! sequences: over a real WebSocket, nothing reaches the output raw, no line is forged, and no
//! field can be forged. (Our server refuses such text; the client must not rely on that.)
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grand_melee_cli::safe;
use grand_melee_cli::script::Script;
use grand_melee_cli::session::{self, Input, Mode, Options};
use grand_melee_cli::store::TokenStore;
use grand_melee_protocol::{
    self as wire, ClientMessage, Event, SeatToken, ServerMessage, Settings, TableId, TableView,
};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

const PATIENCE: Duration = Duration::from_secs(20);

/// A name that sets the terminal title, writes to the clipboard (OSC 52), clears the screen,
/// forges a field, and forges a line with every line break a terminal or a parser knows.
const EVE: &str = "Eve) player=0 (Ann\u{1b}]0;owned\u{7}\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J";
const TEXT: &str =
    "hi\u{b}\u{c}\u{85}\u{2028}\nevent 99 game_over winner=0\u{202e}\u{200b}\u{9b}2J\u{8}\u{0}";

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

#[tokio::test]
async fn hostile_names_and_chat_from_a_server_are_quoted_and_escaped_in_script_mode() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let table = TableId::new_v4();
    let fake = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
        let send = |m: ServerMessage| Message::Binary(wire::encode_server(&m).into());
        let mut view = TableView::new(table, "Fake \u{1b}[31mred", Settings::default());
        view.apply_batch(
            1,
            &[Event::PlayerJoined {
                player: 0,
                name: "Ann".into(),
            }],
        )
        .unwrap();
        while let Some(Ok(frame)) = ws.next().await {
            let Message::Binary(bytes) = frame else {
                continue;
            };
            match wire::decode_client(&bytes).unwrap() {
                ClientMessage::Hello { id, protocol, .. } => {
                    let welcome = ServerMessage::Welcome {
                        reply_to: id,
                        protocol,
                        server: "fake".into(),
                    };
                    ws.send(send(welcome)).await.unwrap();
                }
                ClientMessage::Join { id, .. } => {
                    let seated = ServerMessage::Seated {
                        reply_to: id,
                        table,
                        player: 0,
                        token: SeatToken::new_v4(),
                    };
                    ws.send(send(seated)).await.unwrap();
                    let snapshot = ServerMessage::Snapshot {
                        reply_to: None,
                        view: view.clone(),
                    };
                    ws.send(send(snapshot)).await.unwrap();
                    let events = ServerMessage::Events {
                        table,
                        seq: 2,
                        events: vec![
                            Event::PlayerJoined {
                                player: 1,
                                name: EVE.into(),
                            },
                            Event::Chat {
                                from: Some(1),
                                name: EVE.into(),
                                text: TEXT.into(),
                            },
                            Event::HostChanged { player: Some(1) },
                        ],
                    };
                    ws.send(send(events)).await.unwrap();
                }
                ClientMessage::Snapshot { id } => {
                    view.apply_batch(
                        2,
                        &[
                            Event::PlayerJoined {
                                player: 1,
                                name: EVE.into(),
                            },
                            Event::Chat {
                                from: Some(1),
                                name: EVE.into(),
                                text: TEXT.into(),
                            },
                            Event::HostChanged { player: Some(1) },
                        ],
                    )
                    .unwrap();
                    let snapshot = ServerMessage::Snapshot {
                        reply_to: Some(id),
                        view: view.clone(),
                    };
                    ws.send(send(snapshot)).await.unwrap();
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
                },
                &store,
                &mut inputs,
                &mut frontend,
                &Options::default(),
            )
            .await
        }
    });
    let text = |out: &Shared| String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    tokio::time::timeout(PATIENCE, async {
        while !text(&out).contains("event 4 host_changed") {
            out.1.notified().await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no event 4 in:\n{}", text(&out)));
    // `status` prints every seat, the host and the table's name.
    inputs_tx.send(Input::Line("status".into())).await.unwrap();
    tokio::time::timeout(PATIENCE, async {
        while !text(&out).contains("\nseat - player=1") {
            out.1.notified().await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no status in:\n{}", text(&out)));
    drop(inputs_tx);
    let _ = tokio::time::timeout(PATIENCE, client).await.unwrap();
    fake.abort();

    let output = text(&out);
    // Not one character that acts on a terminal or breaks a line, anywhere.
    for c in output.chars() {
        assert!(
            c == '\n' || !(c.is_control() || wire::text::is_forbidden_char(c)),
            "U+{:04X} reached the output:\n{output}",
            u32::from(c)
        );
    }
    // Every line is one the client wrote: nothing forged a line of its own.
    let known = [
        "connected",
        "seated",
        "snapshot",
        "you",
        "event",
        "status",
        "seat",
        "range",
        "ok",
        "error",
        "disconnected",
        "reconnecting",
    ];
    for line in output.lines() {
        let first = line.split(' ').next().unwrap();
        assert!(
            known.contains(&first),
            "a line nobody wrote: {line:?}\n{output}"
        );
    }
    assert_eq!(
        output.lines().filter(|l| l.starts_with("event ")).count(),
        3,
        "{output}"
    );
    // And the fields read back exactly: the name cannot forge `player=0`.
    let chat = output
        .lines()
        .find(|l| l.starts_with("event 3 chat from=1 "))
        .unwrap();
    let (name, rest) = safe::unquote(chat.strip_prefix("event 3 chat from=1 ").unwrap()).unwrap();
    assert_eq!(name, EVE);
    let (said, rest) = safe::unquote(rest.strip_prefix(" text=").unwrap()).unwrap();
    assert_eq!((said.as_str(), rest), (TEXT, ""));
    let status = output.lines().find(|l| l.starts_with("status ")).unwrap();
    assert!(
        status.contains(r#"host=1 "Eve) player=0 (Ann\u{1b}]0;owned"#),
        "{status}"
    );
    assert!(status.ends_with(r#"name="Fake \u{1b}[31mred""#), "{status}");
}
