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

// ----- Refusing to start: a damaged journal, a data directory that cannot be written ----------

/// How a run of the binary went: it exited, or it started listening.
enum Run {
    Exited {
        status: std::process::ExitStatus,
        stderr: String,
    },
    Listening {
        child: std::process::Child,
        addr: std::net::SocketAddr,
        /// The log lines before `listening`.
        log: Vec<String>,
    },
}

impl Run {
    /// Runs `command` (with `--listen 127.0.0.1:0 --log info` added) until it exits or logs that
    /// it listens, whichever comes first; fails the test after [`PATIENCE`].
    fn of(mut command: Command) -> Run {
        command.args(["--listen", "127.0.0.1:0"]);
        Self::as_given(command)
    }

    /// [`of`](Self::of) without the `--listen` (with `--log info`).
    fn as_given(mut command: Command) -> Run {
        use std::io::{BufRead, BufReader, Read};
        let mut child = command
            .args(["--log", "info"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines, arriving) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut log = Vec::new();
        loop {
            match arriving.recv_timeout(PATIENCE) {
                Ok(line) => {
                    if line.contains("listening") {
                        let addr = line
                            .split_once("addr=")
                            .and_then(|(_, rest)| rest.split_whitespace().next())
                            .unwrap()
                            .parse()
                            .unwrap();
                        // Keep draining the log so the server never blocks on a full pipe.
                        std::thread::spawn(move || arriving.into_iter().for_each(drop));
                        return Run::Listening { child, addr, log };
                    }
                    log.push(line);
                }
                // Standard output closed: the process is exiting.
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    let mut stderr = String::new();
                    child
                        .stderr
                        .take()
                        .unwrap()
                        .read_to_string(&mut stderr)
                        .unwrap();
                    let status = child.wait().unwrap();
                    return Run::Exited { status, stderr };
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    panic!("the server neither exited nor listened: {log:?}");
                }
            }
        }
    }

    /// The exit status and standard error of a run that must have refused to start.
    fn refused(self) -> (std::process::ExitStatus, String) {
        match self {
            Run::Exited { status, stderr } => (status, stderr),
            Run::Listening { mut child, log, .. } => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server started where it must refuse to: {log:#?}");
            }
        }
    }

    /// Stops a run that is listening with SIGTERM; returns the log before `listening`.
    fn stop(self) -> Vec<String> {
        let Run::Listening { mut child, log, .. } = self else {
            panic!("the server did not start");
        };
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(child.wait().unwrap().success());
        log
    }
}

#[test]
fn the_public_url_and_the_allowed_origins_are_checked_at_start() {
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut command = Command::new(BINARY);
        command.arg("--data-dir").arg(data.path()).args(args);
        Run::of(command)
    };
    for (args, flag, why) in [
        (
            ["--public-url", "https://melee.example/play"],
            "--public-url",
            "path",
        ),
        (
            ["--public-url", "wss://melee.example"],
            "--public-url",
            "http or https",
        ),
        (
            ["--allowed-origins", "melee.example"],
            "--allowed-origins",
            "https://HOST",
        ),
    ] {
        let (status, stderr) = run(&args).refused();
        assert!(!status.success());
        assert!(
            stderr.contains(flag) && stderr.contains(why),
            "{args:?}: {stderr}"
        );
    }
    // Well formed, and not only for cluster mode: the public URL's page is the server's own.
    let run = run(&[
        "--public-url",
        "https://Melee.Example/",
        "--allowed-origins",
        "http://192.168.1.5:7878",
    ]);
    let Run::Listening {
        mut child, addr, ..
    } = run
    else {
        panic!("the server did not start");
    };
    for (origin, status) in [
        ("https://melee.example", "101"),
        ("http://melee.example", "403"),
    ] {
        let line = first_line(
            addr,
            &format!(
                "GET /ws HTTP/1.1\r\nHost: melee.example\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
                 Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: {origin}\r\n\r\n"
            ),
        );
        assert!(
            line.starts_with(&format!("HTTP/1.1 {status} ")),
            "{origin}: {line}"
        );
    }
    // Stopping gracefully is another test's business.
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn automatic_https_settings_are_checked_at_start() {
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut command = Command::new(BINARY);
        command.arg("--data-dir").arg(data.path()).args(args);
        Run::of(command)
    };
    for (args, words) in [
        (
            &["--acme-domain", "https://melee.example.org"][..],
            &["--acme-domain", "no https://"][..],
        ),
        (
            &["--acme-domain", "*.example.org"],
            &["--acme-domain", "wildcard"],
        ),
        (&["--acme-domain", "203.0.113.7"], &["domain names"]),
        (
            &[
                "--acme-domain",
                "melee.example.org",
                "--tls-cert",
                "c.pem",
                "--tls-key",
                "k.pem",
            ],
            &["--acme-domain", "cannot be used with"],
        ),
        (
            &["--acme-email", "organiser@example.org"],
            &["--acme-domain"],
        ),
        (
            &[
                "--acme-domain",
                "melee.example.org",
                "--acme-email",
                "organiser",
            ],
            &["--acme-email", "e-mail address"],
        ),
        (
            &[
                "--acme-domain",
                "melee.example.org",
                "--acme-directory",
                "http://127.0.0.1/dir",
            ],
            &["--acme-directory", "https://"],
        ),
        (
            &[
                "--acme-domain",
                "melee.example.org",
                "--redirect-listen",
                "80",
            ],
            &["--redirect-listen", "or off"],
        ),
        (
            &[
                "--acme-domain",
                "melee.example.org",
                "--acme-directory-ca",
                "/nonexistent.pem",
            ],
            &["--acme-directory-ca", "/nonexistent.pem"],
        ),
        (
            &[
                "--acme-domain",
                "melee.example.org",
                "--cluster",
                "nats://127.0.0.1:1",
                "--node-id",
                "a",
            ],
            &["--acme-domain is for a single server"],
        ),
    ] {
        let (status, stderr) = run(args).refused();
        assert!(!status.success());
        assert!(
            words.iter().all(|word| stderr.contains(word)),
            "{args:?}: {stderr}"
        );
    }
    // Without --listen, automatic HTTPS listens on port 443 of every interface (or says why it
    // cannot: another program there, or no right to ports under 1024). The directory is a
    // closed loopback port: nothing leaves the machine.
    let mut command = Command::new(BINARY);
    command.arg("--data-dir").arg(data.path()).args([
        "--acme-domain",
        "melee.example.org",
        "--acme-directory",
        "https://127.0.0.1:1/directory",
        "--redirect-listen",
        "off",
    ]);
    match Run::as_given(command) {
        Run::Listening {
            mut child, addr, ..
        } => {
            assert_eq!(addr, "0.0.0.0:443".parse().unwrap());
            child.kill().unwrap();
            child.wait().unwrap();
        }
        Run::Exited { stderr, .. } => assert!(stderr.contains("--listen 0.0.0.0:443"), "{stderr}"),
    }
}

/// The first line of the answer to `request`.
fn first_line(addr: std::net::SocketAddr, request: &str) -> String {
    use std::io::{BufRead, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stream)
        .read_line(&mut line)
        .unwrap();
    line
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Flips one bit of the page-type byte of a b-tree leaf page of the database file that holds
/// `wanted` and not `unwanted`.
fn flip_a_leaf_page_holding(path: &std::path::Path, wanted: &[u8], unwanted: &[u8]) {
    let mut bytes = std::fs::read(path).unwrap();
    let size = usize::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    let pages: Vec<usize> = (1..bytes.len() / size)
        .filter(|&index| {
            let page = &bytes[index * size..(index + 1) * size];
            // 0x0a: a leaf page of an index b-tree (every table here is WITHOUT ROWID).
            page[0] == 0x0a && contains(page, wanted) && !contains(page, unwanted)
        })
        .collect();
    assert!(
        pages.len() >= 2,
        "pages with only the damaged table: {pages:?}"
    );
    bytes[pages[pages.len() / 2] * size] ^= 0x01;
    std::fs::write(path, &bytes).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_journal_stops_the_binary_with_the_reason_on_stderr_unless_allowed() {
    use grand_melee_server::journal::{DB_FILE, Durability, Journal, TableRecord};
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(DB_FILE);
    // A sound lobby table with a player, written by the real server…
    let server =
        ServerProcess::spawn(BINARY, &["--data-dir".as_ref(), data.path().as_os_str()]).await;
    let mut host = grand_melee_e2e::Client::connected(server.addr).await;
    let sound = host.create_table("sound", 4, 1).await;
    host.join(sound, "Ann").await.unwrap();
    server.signal("TERM");
    assert!(server.wait().await.success());
    drop(host);
    // …and a table whose events fill several pages, one of which gets a flipped bit.
    let damaged = grand_melee_protocol::TableId::new_random();
    {
        let journal = Journal::open(data.path(), Durability::Normal).unwrap();
        journal
            .create_table(TableRecord {
                id: damaged,
                name: "damaged".into(),
                password: None,
                settings: vec![0],
                created_at_ms: 1,
                league: None,
            })
            .await
            .unwrap();
        let events = (0..100)
            .map(|i| format!("damaged-table-event-{i:03} {}", "z".repeat(100)).into_bytes())
            .collect();
        journal.append(damaged, 1, events).await.unwrap();
        journal.close().await.unwrap();
    }
    flip_a_leaf_page_holding(&path, b"damaged-table-event-", sound.as_bytes());

    let mut command = Command::new(BINARY);
    command.arg("--data-dir").arg(data.path());
    let (status, stderr) = Run::of(command).refused();
    assert!(!status.success(), "{status:?}");
    for needle in [
        "cannot start",
        path.display().to_string().as_str(),
        "damaged",
        "quick_check",
        "backup",
        "-wal",
        "--allow-damaged-journal",
        "GM_ALLOW_DAMAGED_JOURNAL=true",
    ] {
        assert!(
            stderr.contains(needle),
            "{needle:?} on standard error: {stderr}"
        );
    }

    // With the flag, or its environment variable: it starts, logs the table it leaves out as
    // an error and counts it.
    for allow in ["flag", "environment"] {
        let mut command = Command::new(BINARY);
        command.arg("--data-dir").arg(data.path());
        match allow {
            "flag" => command.arg("--allow-damaged-journal"),
            _ => command.env("GM_ALLOW_DAMAGED_JOURNAL", "true"),
        };
        let run = Run::of(command);
        let Run::Listening { addr, .. } = &run else {
            panic!("{allow}: the server did not start");
        };
        let metrics = grand_melee_e2e::http_get(*addr, "/metrics").await;
        assert!(
            metrics.contains("\ngm_tables_unrecoverable 1\n"),
            "{metrics}"
        );
        let log = run.stop();
        assert!(
            log.iter()
                .any(|line| line.contains("ERROR") && line.contains(&damaged.to_string())),
            "{allow}: the left-out table is logged as an error: {log:#?}"
        );
    }
}

/// Whether this process runs as root (for whom permission bits do not stop writes).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid() == 0
}

#[tokio::test]
async fn a_data_directory_that_cannot_be_written_is_refused_at_start() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    // A journal left by a killed server: the database, its -wal and its -shm.
    let server = ServerProcess::spawn(BINARY, &["--data-dir".as_ref(), data.as_os_str()]).await;
    let mut client = grand_melee_e2e::Client::connected(server.addr).await;
    client.create_table("t", 4, 1).await;
    server.signal("KILL");
    let _ = server.wait().await;
    drop(client);
    let mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    mode(root.path(), 0o755);
    for entry in std::fs::read_dir(&data).unwrap() {
        mode(&entry.unwrap().path(), 0o444);
    }
    mode(&data, 0o555);

    // Root ignores permission bits: then the server runs as `nobody`, for whom they hold.
    let as_server_user = |command: &mut Command| {
        if running_as_root() {
            command.uid(65_534).gid(65_534);
        }
    };
    let mut probe = Command::new("sh");
    probe.args(["-c", "echo x > \"$0/probe\""]).arg(&data);
    as_server_user(&mut probe);
    let probed = probe.stderr(std::process::Stdio::null()).status().unwrap();
    assert!(
        !probed.success(),
        "precondition: the test could not make {} unwritable for the server's user",
        data.display()
    );

    let mut command = Command::new(BINARY);
    command.arg("--data-dir").arg(&data);
    as_server_user(&mut command);
    let (status, stderr) = Run::of(command).refused();
    mode(&data, 0o755);
    assert!(!status.success(), "{status:?}");
    for needle in [
        "cannot start",
        "cannot be written",
        data.display().to_string().as_str(),
        "--data-dir",
    ] {
        assert!(
            stderr.contains(needle),
            "{needle:?} on standard error: {stderr}"
        );
    }
}

/// `GM_TRUSTED_PROXY` (comma-separated) and the log: a WebSocket through a trusted proxy is
/// logged with the client the proxy forwards; the same header from another address is not
/// believed. A range that is no range stops the binary with the reason.
#[tokio::test]
async fn the_log_names_the_client_a_trusted_proxy_forwards() {
    use std::io::{BufRead, BufReader};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let data = tempfile::tempdir().unwrap();
    let output = Command::new(BINARY)
        .arg("--data-dir")
        .arg(data.path())
        .env("GM_TRUSTED_PROXY", "10.0.0.1/8")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--trusted-proxy") && stderr.contains("did you mean 10.0.0.0/8"),
        "{stderr}"
    );

    let mut child = Command::new(BINARY)
        .arg("--data-dir")
        .arg(data.path())
        .args([
            "--listen",
            "127.0.0.1:0",
            "--log",
            "grand_melee_server=debug,info",
        ])
        .env("GM_TRUSTED_PROXY", "10.0.0.0/8,127.0.0.2")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, mut arriving) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut next_line_with = async |words: &[&str]| {
        tokio::time::timeout(PATIENCE, async {
            loop {
                let line = arriving.recv().await.expect("the server stopped logging");
                if words.iter().all(|word| line.contains(word)) {
                    return line;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no log line with {words:?}"))
    };
    let listening = next_line_with(&["listening"]).await;
    let addr: std::net::SocketAddr = listening
        .split_once("addr=")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let mut open = Vec::new();
    for (from, client) in [
        ([127, 0, 0, 2], "198.51.100.7"),
        ([127, 0, 0, 3], "127.0.0.3"),
    ] {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(std::net::SocketAddr::from((from, 0))).unwrap();
        let mut stream = socket.connect(addr).await.unwrap();
        stream
            .write_all(
                b"GET /ws HTTP/1.1\r\nHost: melee.example\r\nUpgrade: websocket\r\n\
                  Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
                  Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
                  X-Forwarded-For: 198.51.100.7\r\n\r\n",
            )
            .await
            .unwrap();
        let mut answer = [0u8; 12];
        tokio::time::timeout(PATIENCE, stream.read_exact(&mut answer))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&answer, b"HTTP/1.1 101");
        let line = next_line_with(&["websocket open"]).await;
        assert!(line.contains(&format!("peer={client} ")), "{line}");
        open.push(stream);
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn trusting_every_address_is_warned_about() {
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(BINARY);
    command.arg("--data-dir").arg(data.path()).args([
        "--trusted-proxy",
        "127.0.0.1",
        "--trusted-proxy",
        "::/0",
    ]);
    let log = served_and_stopped(Run::of(command));
    assert!(
        log.iter()
            .any(|line| line.contains("WARN") && line.contains("trusts every address")),
        "{log:#?}"
    );
    let mut command = Command::new(BINARY);
    command
        .arg("--data-dir")
        .arg(data.path())
        .args(["--trusted-proxy", "127.0.0.1"]);
    let log = served_and_stopped(Run::of(command));
    assert!(!log.iter().any(|line| line.contains("WARN")), "{log:#?}");
}

/// Stops a run once it serves (its signal handler is in place once it has answered).
fn served_and_stopped(run: Run) -> Vec<String> {
    let Run::Listening { addr, .. } = &run else {
        panic!("the server did not start");
    };
    let line = first_line(
        *addr,
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    run.stop()
}

/// `grand-melee-server backup DEST` copies the journal of a server that is running, says where
/// and how big, and never overwrites a file; a data directory without a journal is refused with
/// the reason, and writes nothing.
#[tokio::test]
async fn the_backup_command_copies_a_running_servers_journal_and_never_overwrites() {
    let data = tempfile::tempdir().unwrap();
    let server =
        ServerProcess::spawn(BINARY, &["--data-dir".as_ref(), data.path().as_os_str()]).await;
    let copies = tempfile::tempdir().unwrap();
    let dest = copies.path().join("copy.sqlite3");
    let backup = |dir: &std::path::Path| {
        Command::new(BINARY)
            .arg("backup")
            .arg(&dest)
            .arg("--data-dir")
            .arg(dir)
            .output()
            .unwrap()
    };
    let made = backup(data.path());
    let said = String::from_utf8_lossy(&made.stdout);
    assert!(
        made.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert!(
        said.contains("backed up") && said.contains("copy.sqlite3"),
        "{said}"
    );
    let copy = std::fs::read(&dest).unwrap();
    assert!(
        copy.starts_with(b"SQLite format 3\0"),
        "the copy is an SQLite file"
    );

    let again = backup(data.path());
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("exists already"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        std::fs::read(&dest).unwrap(),
        copy,
        "the first copy is untouched"
    );

    // A directory as DEST: a new file in it, named by the time.
    let into_dir = Command::new(BINARY)
        .arg("backup")
        .arg(copies.path())
        .arg("--data-dir")
        .arg(data.path())
        .output()
        .unwrap();
    assert!(into_dir.status.success());
    let named: Vec<String> = std::fs::read_dir(copies.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("grand-melee-") && name.ends_with("Z.sqlite3"))
        .collect();
    assert_eq!(
        named.len(),
        1,
        "one time-named copy in the directory: {named:?}"
    );

    let nowhere = tempfile::tempdir().unwrap();
    std::fs::remove_file(&dest).unwrap();
    let refused = backup(nowhere.path());
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("no journal to back up"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!dest.exists(), "nothing written");

    server.signal("TERM");
    assert!(server.wait().await.success());
}
