//! `grand-melee` over `wss://`: a server with the organiser's self-signed certificate
//! (`--tls-cert`), trusted by the client with `--ca-cert`, and refused without it.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Player, TestServer, run_once};
use grand_melee_e2e::SelfSigned;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_seats_play_over_wss_with_the_organisers_certificate() {
    let certificate = SelfSigned::new();
    let server = TestServer::start_with(certificate.config()).await;
    let url = format!("wss://localhost:{}", server.addr.port());
    let ca = certificate.cert.to_str().unwrap();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();

    // Without the certificate the client refuses the server, and says why.
    let (status, out, err) = run_once(&url, dirs[2].path(), &["list"]).await;
    assert!(!status.success(), "{out}");
    assert!(err.contains("cannot reach the server"), "{err}");
    assert!(err.to_lowercase().contains("certificate"), "{err}");

    // A file that is not a certificate is named in the error.
    let (status, _, err) = run_once(
        &url,
        dirs[2].path(),
        &["--ca-cert", certificate.key.to_str().unwrap(), "list"],
    )
    .await;
    assert!(!status.success());
    assert!(err.contains("--ca-cert"), "{err}");

    let (status, out, err) = run_once(
        &url,
        dirs[2].path(),
        &[
            "--ca-cert",
            ca,
            "create",
            "--name",
            "Secure night",
            "--seats",
            "2",
        ],
    )
    .await;
    assert!(status.success(), "{out}{err}");
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("table_created "))
        .unwrap()
        .trim()
        .to_owned();
    // Ann sits down first (she is the host), then Bob.
    let mut players: Vec<Player> = Vec::new();
    for (i, name) in ["Ann", "Bob"].iter().enumerate() {
        let mut p = Player::spawn(
            name,
            &url,
            dirs[i].path(),
            &["--ca-cert", ca, "join", &table, name],
        );
        p.expect_all(&["seated", &format!("table={table}")]).await;
        players.push(p);
    }
    players[0].expect_all(&["player_joined", "Bob"]).await;
    players[0].send("start").await;
    let mut first = 0;
    for p in &mut players {
        let started = p.expect_all(&["event", "game_started"]).await;
        first = usize::from(started.contains("first=1"));
    }
    // The first player decides first, then the other.
    for i in [first, 1 - first] {
        players[i].send("keep").await;
        players[i]
            .expect_all(&["event", "kept", "reason=decided"])
            .await;
    }
    for p in &mut players {
        p.expect_all(&["event", "turn_began"]).await;
    }
    for p in players {
        let (status, _) = p.finish().await;
        assert!(status.success());
    }
}
