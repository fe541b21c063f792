//! The `grand-melee-server` binary itself: flags, serving, and a graceful stop on SIGTERM.
#![allow(clippy::unwrap_used)]

use std::process::Command;

use grand_melee_e2e::{PATIENCE, ServerProcess};

use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::{self as wire, ClientMessage, PROTOCOL_VERSION, ServerMessage, close};
use tokio_tungstenite::tungstenite::Message;

const BINARY: &str = env!("CARGO_BIN_EXE_grand-melee-server");

#[test]
fn help_explains_every_flag() {
    let output = Command::new(BINARY).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for flag in [
        "--listen",
        "--log",
        "--max-connections",
        "--max-connections-per-ip",
        "--grace-period-secs",
        "--rate-limit",
        "--outgoing-queue",
        "GM_LISTEN",
    ] {
        assert!(help.contains(flag), "--help mentions {flag}");
    }
}

#[test]
fn a_bad_flag_is_refused_with_a_message() {
    let output = Command::new(BINARY)
        .args(["--listen", "not-an-address"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--listen"));
}

#[tokio::test]
async fn the_binary_serves_and_stops_gracefully_on_sigterm() {
    let data = tempfile::tempdir().unwrap();
    let server =
        ServerProcess::spawn(BINARY, &["--data-dir".as_ref(), data.path().as_os_str()]).await;
    let addr = server.addr;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .unwrap();
    let hello = ClientMessage::Hello {
        id: 1,
        protocol: PROTOCOL_VERSION,
        client: "binary test".into(),
    };
    ws.send(Message::Binary(wire::encode_client(&hello).into()))
        .await
        .unwrap();
    let Some(Ok(Message::Binary(bytes))) = ws.next().await else {
        panic!("welcome expected");
    };
    assert!(matches!(
        wire::decode_server(&bytes).unwrap(),
        ServerMessage::Welcome { reply_to: 1, .. }
    ));

    server.signal("TERM");
    let closed = tokio::time::timeout(PATIENCE, async {
        while let Some(frame) = ws.next().await {
            if let Ok(Message::Close(frame)) = frame {
                return frame.map(|f| u16::from(f.code));
            }
        }
        None
    })
    .await
    .unwrap();
    assert_eq!(closed, Some(close::GOING_AWAY));
    let exit = server.wait().await;
    assert!(exit.success(), "exit status {exit:?}");
}
