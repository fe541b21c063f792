//! Shared by the integration tests: a server in this process on a free port, and `grand-melee`
//! processes in script mode whose output lines can be awaited.
#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::{self as wire, ClientMessage, ServerMessage};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How long a test waits for something that must happen before failing. A bound on a failure,
/// not a synchronisation: every wait ends as soon as the line arrives.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The real server in this process on a free loopback port (shared with the end-to-end tests).
pub use grand_melee_e2e::{CreateTable, TestServer};

/// The `grand-melee` binary with a server address and a data directory.
pub fn grand_melee(server: &str, data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_grand-melee"));
    command
        .arg("--server")
        .arg(server)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("GM_SERVER")
        .env_remove("GM_CLI_DATA_DIR")
        .kill_on_drop(true);
    command
}

/// Runs a one-shot `grand-melee` command; returns its status, standard output and error.
pub async fn run_once(
    server: &str,
    data_dir: &Path,
    args: &[&str],
) -> (ExitStatus, String, String) {
    run_with(server, data_dir, args, &[], "").await
}

/// Runs a one-shot `grand-melee` command with extra environment variables and `input` on its
/// standard input; returns its status, standard output and error.
pub async fn run_with(
    server: &str,
    data_dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    input: &str,
) -> (ExitStatus, String, String) {
    let mut command = grand_melee(server, data_dir);
    command
        .env_remove("GM_TABLE_PASSWORD")
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("the command finished in time")
        .unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A scripted fake server on a free loopback port: it answers `hello` itself, and every other
/// request with what `answer` returns (answers and pushed messages, sent in order). For what
/// the real server never sends: hostile text, pages that repeat.
pub async fn fake_server<F>(answer: F) -> SocketAddr
where
    F: Fn(ClientMessage) -> Vec<ServerMessage> + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = Arc::clone(&answer);
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
                    return;
                };
                while let Some(Ok(frame)) = ws.next().await {
                    let Message::Binary(bytes) = frame else {
                        continue;
                    };
                    let Ok(request) = wire::decode_client(&bytes) else {
                        continue;
                    };
                    let replies = match request {
                        ClientMessage::Hello { id, protocol, .. } => vec![ServerMessage::Welcome {
                            reply_to: id,
                            protocol,
                            server: "fake".into(),
                        }],
                        other => answer(other),
                    };
                    for reply in replies {
                        let bytes = wire::encode_server(&reply);
                        if ws.send(Message::Binary(bytes.into())).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// The words a script-mode line may start with (docs/src/terminal.md, "Script mode" and "Stepping through a
/// game").
pub const SCRIPT_KEYWORDS: [&str; 18] = [
    "connected",
    "seated",
    "watching",
    "snapshot",
    "event",
    "you",
    "ok",
    "error",
    "disconnected",
    "reconnecting",
    "help",
    "status",
    "seat",
    "range",
    "left",
    "table",
    "replay",
    "step",
];

/// One piece of a script-mode line after its first words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// `key=value`, the value unquoted if it was quoted.
    Field(String, String),
    /// A quoted value on its own (a player's name after his id), or several separated by commas
    /// (the names of a list of players).
    Quoted(Vec<String>),
    /// Anything else: a bare word.
    Word(String),
}

/// Quoted values separated by commas at the start of `text`, and the rest; `None` if they are
/// not well formed or do not end at a space or the end of the line.
fn quoted_list(mut text: &str) -> Option<(Vec<String>, &str)> {
    let mut values = Vec::new();
    loop {
        let (value, rest) = grand_melee_cli::safe::unquote(text)?;
        values.push(value);
        match rest.strip_prefix(',') {
            Some(more) if more.starts_with('"') => text = more,
            _ if rest.is_empty() || rest.starts_with(' ') => return Some((values, rest)),
            _ => return None,
        }
    }
}

/// Splits the rest of a script-mode line into tokens, as a program reading the documented
/// format would; `None` if a quoted value is malformed.
pub fn tokens(mut text: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    loop {
        text = text.trim_start_matches(' ');
        if text.is_empty() {
            return Some(out);
        }
        if text.starts_with('"') {
            let (values, rest) = quoted_list(text)?;
            out.push(Token::Quoted(values));
            text = rest;
            continue;
        }
        let end = text.find([' ', '=', '"']).unwrap_or(text.len());
        if text[end..].starts_with('=') {
            let key = text[..end].to_owned();
            let value = &text[end + 1..];
            if value.starts_with('"') {
                let (mut values, rest) = quoted_list(value)?;
                if values.len() != 1 {
                    return None;
                }
                out.push(Token::Field(key, values.remove(0)));
                text = rest;
            } else {
                let stop = value.find(' ').unwrap_or(value.len());
                if value[..stop].contains('"') {
                    return None;
                }
                out.push(Token::Field(key, value[..stop].to_owned()));
                text = &value[stop..];
            }
        } else {
            let stop = text.find(' ').unwrap_or(text.len());
            if text[..stop].contains('"') {
                return None;
            }
            out.push(Token::Word(text[..stop].to_owned()));
            text = &text[stop..];
        }
    }
}

/// The keys of the fields among `tokens`, in order.
pub fn keys(tokens: &[Token]) -> Vec<&str> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Field(key, _) => Some(key.as_str()),
            _ => None,
        })
        .collect()
}

/// Checks script-mode output byte by byte and line by line: no control byte but the line feeds
/// (no C0, DEL, or C1 in any encoding), no character that could act on a terminal, every line
/// starting with a documented word, every `event` line well formed with a number one more than
/// the last one (so no event line can be forged), every quoted value well formed. Returns the
/// lines.
pub fn check_script_output(bytes: &[u8]) -> Vec<String> {
    for (i, &b) in bytes.iter().enumerate() {
        assert!(
            (b >= 0x20 && b != 0x7f) || b == b'\n',
            "raw control byte {b:#04x} at {i}: {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    let text = std::str::from_utf8(bytes).expect("UTF-8 output");
    assert!(
        !text
            .chars()
            .any(|c| c != '\n' && grand_melee_cli::safe::must_escape(c)),
        "a character that acts on a terminal: {text:?}"
    );
    let mut last_event: Option<u64> = None;
    let mut lines = Vec::new();
    for line in text.lines() {
        let word = line.split(' ').next().unwrap_or_default();
        assert!(SCRIPT_KEYWORDS.contains(&word), "unknown line: {line:?}");
        if word == "event" {
            let mut parts = line.splitn(4, ' ');
            parts.next();
            let seq: u64 = parts.next().unwrap().parse().expect("an event number");
            let kind = parts.next().expect("an event kind");
            assert!(
                kind.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{line:?}"
            );
            if let Some(last) = last_event {
                assert!(seq == last + 1, "event {seq} after {last}: {line:?}");
            }
            last_event = Some(seq);
            let fields = tokens(parts.next().unwrap_or_default())
                .unwrap_or_else(|| panic!("malformed: {line:?}"));
            let keys = keys(&fields);
            let mut unique = keys.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), keys.len(), "a field twice: {line:?}");
        } else if !matches!(word, "error" | "help" | "disconnected") {
            // Everything but free-text lines splits into well-formed tokens.
            assert!(tokens(line).is_some(), "malformed: {line:?}");
        }
        lines.push(line.to_owned());
    }
    lines
}

/// A `grand-melee` process in script mode.
#[derive(Debug)]
pub struct Player {
    pub label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    /// Every line printed so far.
    pub history: Vec<String>,
    cursor: usize,
    /// Every byte written to standard output so far, exactly as written.
    stdout: Arc<Mutex<Vec<u8>>>,
}

impl Player {
    /// Starts `grand-melee --plain ARGS…`.
    pub fn spawn(label: &str, server: &str, data_dir: &Path, args: &[&str]) -> Self {
        let mut child = grand_melee(server, data_dir)
            .arg("--plain")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::unbounded_channel();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let tx2 = tx.clone();
        let raw = Arc::new(Mutex::new(Vec::new()));
        let raw2 = Arc::clone(&raw);
        tokio::spawn(async move {
            // Lines end at `\n` only: a stray `\r` stays in the line for the tests to see.
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            while let Ok(n) = reader.read_until(b'\n', &mut line).await {
                if n == 0 {
                    break;
                }
                raw2.lock().unwrap().extend_from_slice(&line);
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
                line.clear();
            }
        });
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let _ = tx2.send(format!("stderr: {line}"));
            }
        });
        Self {
            label: label.to_owned(),
            child,
            stdin,
            lines,
            history: Vec::new(),
            cursor: 0,
            stdout: raw,
        }
    }

    /// Every byte the process has written to standard output so far.
    pub fn stdout_bytes(&self) -> Vec<u8> {
        self.stdout.lock().unwrap().clone()
    }

    /// Types a command.
    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next line (after the last one awaited) that satisfies `pick`; fails the test with
    /// the transcript if none comes in time.
    pub async fn expect(&mut self, what: &str, pick: impl Fn(&str) -> bool) -> String {
        loop {
            if let Some(i) = self.history[self.cursor..].iter().position(|l| pick(l)) {
                self.cursor += i + 1;
                return self.history[self.cursor - 1].clone();
            }
            self.cursor = self.history.len();
            match tokio::time::timeout(PATIENCE, self.lines.recv()).await {
                Ok(Some(line)) => self.history.push(line),
                Ok(None) => panic!(
                    "{}: output ended while waiting for {what}:\n{}",
                    self.label,
                    self.history.join("\n")
                ),
                Err(_) => panic!(
                    "{}: no {what} in time:\n{}",
                    self.label,
                    self.history.join("\n")
                ),
            }
        }
    }

    /// The next line starting with `prefix`.
    pub async fn expect_prefix(&mut self, prefix: &str) -> String {
        let prefix = prefix.to_owned();
        self.expect(&format!("`{prefix}…`"), move |l| l.starts_with(&prefix))
            .await
    }

    /// The next line containing every one of `parts`.
    pub async fn expect_all(&mut self, parts: &[&str]) -> String {
        let parts: Vec<String> = parts.iter().map(|p| (*p).to_owned()).collect();
        self.expect(&format!("a line with {parts:?}"), move |l| {
            parts.iter().all(|p| l.contains(p.as_str()))
        })
        .await
    }

    /// Closes standard input (the end of the script) and waits for the process to exit.
    pub async fn finish(mut self) -> (ExitStatus, Vec<String>) {
        self.stdin = None;
        let status = tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .expect("the process exited in time")
            .unwrap();
        while let Ok(Some(line)) = tokio::time::timeout(PATIENCE, self.lines.recv()).await {
            self.history.push(line);
        }
        (status, self.history)
    }
}

/// The value of `key=` in a script line (up to the next space).
pub fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {key}="))? + key.len() + 2;
    line[start..].split(' ').next()
}

/// Creates a table over the client library's connection and returns its id.
pub async fn create(conn: &mut grand_melee_cli::net::Conn, settings: CreateTable) -> wire::TableId {
    settings.created(call(conn, settings.request(0)).await)
}

/// Sends a request over the client library's connection and returns its answer; fails the
/// test with the request's name if it is refused.
pub async fn call(
    conn: &mut grand_melee_cli::net::Conn,
    message: grand_melee_protocol::ClientMessage,
) -> grand_melee_protocol::ServerMessage {
    let name = message.name();
    match conn.call(message).await {
        Ok(answer) => answer,
        Err(error) => panic!("{name}: {error}"),
    }
}

/// A fresh snapshot over the client library's connection.
pub async fn snapshot(conn: &mut grand_melee_cli::net::Conn) -> grand_melee_protocol::TableView {
    match call(
        conn,
        grand_melee_protocol::ClientMessage::Snapshot { id: 0 },
    )
    .await
    {
        grand_melee_protocol::ServerMessage::Snapshot { view, .. } => view,
        other => panic!("{other:?}"),
    }
}

/// Runs `grand-melee --server SERVER --data-dir <fresh> ARGS…` in a detached tmux session of
/// 80×24 and returns the screen once `needle` is on it (or what it shows after 20 s). The pane
/// stays open after the command ends, to be read. tmux must be installed: the test stops with
/// the command to run if not.
pub async fn in_tmux(server: &str, args: &[&str], needle: &str) -> String {
    use std::process::Command as Std;
    use std::time::Instant;
    static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let session = format!(
        "gm-{}-{}",
        std::process::id(),
        SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    // A tmux server of its own (`-L`): on a shared one, a session started while another test's
    // last session ends finds the server exiting ("server exited unexpectedly").
    let tmux = |args: &[&str]| Std::new("tmux").args(["-L", &session]).args(args).output();
    if tmux(&["-V"]).is_err() {
        panic!("this test needs tmux: apt-get install -y tmux");
    }
    let data = tempfile::tempdir().unwrap();
    let command = format!(
        "{} --server {server} --data-dir {} {}; read done",
        env!("CARGO_BIN_EXE_grand-melee"),
        data.path().display(),
        args.join(" ")
    );
    let started = tmux(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "80",
        "-y",
        "24",
        "-e",
        "TERM=xterm-256color",
        &command,
    ])
    .unwrap();
    assert!(started.status.success(), "{started:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut pane = String::new();
    while Instant::now() < deadline {
        let shot = tmux(&["capture-pane", "-p", "-t", &session]).unwrap();
        pane = String::from_utf8_lossy(&shot.stdout).into_owned();
        if pane.contains(needle) {
            break;
        }
        // Polled: the client draws when the server's answer arrives.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = tmux(&["kill-server"]);
    pane
}

/// What [`Tmux`]'s pane shows once `grand-melee` has exited, before its status.
pub const EXITED: &str = "[grand-melee exited with]";

/// A `grand-melee` in a detached tmux session of 80×24 to type into and read, killed when
/// dropped. tmux must be installed: it stops the test with the command to run if not.
pub struct Tmux {
    session: String,
    _data: tempfile::TempDir,
}

impl Tmux {
    /// Runs `grand-melee --server SERVER --data-dir <fresh> ARGS…` (each argument quoted for
    /// the shell); the pane stays open after the command ends, to be read.
    pub fn start(server: &str, args: &[&str]) -> Self {
        static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let data = tempfile::tempdir().unwrap();
        let session = format!(
            "gmt-{}-{}",
            std::process::id(),
            SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let quoted: Vec<String> = args
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
            .collect();
        let command = format!(
            "{} --server {server} --data-dir {} {}; echo \"{EXITED} $?\"; read done",
            env!("CARGO_BIN_EXE_grand-melee"),
            data.path().display(),
            quoted.join(" ")
        );
        let tmux = Self {
            session,
            _data: data,
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            &tmux.session.clone(),
            "-x",
            "80",
            "-y",
            "24",
            "-e",
            "TERM=xterm-256color",
            &command,
        ]);
        tmux
    }

    fn run(&self, args: &[&str]) -> String {
        // A tmux server of its own (`-L`): on a shared one, a session started while another
        // test's last session ends finds the server exiting ("server exited unexpectedly").
        let out = std::process::Command::new("tmux")
            .args(["-L", &self.session])
            .args(args)
            .output()
            .unwrap_or_else(|_| panic!("this test needs tmux: apt-get install -y tmux"));
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen, one row a line.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", &self.session])
    }

    /// Everything written since the start, the terminal's history included, with the rows the
    /// terminal wrapped joined again: one line per line the program wrote.
    pub fn written(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", &self.session])
    }

    /// The screen once `pick` accepts it; fails the test with the screen if it does not in
    /// time. Polled: the client draws when the server's answer arrives.
    pub async fn wait_for(&self, what: &str, pick: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if pick(&screen) {
                return screen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {what} in time:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Types `line` and Enter.
    pub fn type_line(&self, line: &str) {
        self.run(&["send-keys", "-t", &self.session, "-l", line]);
        self.run(&["send-keys", "-t", &self.session, "Enter"]);
    }

    /// Presses keys by their tmux names (`Escape`, `PageDown`).
    pub fn press(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.session.as_str()];
        args.extend(keys);
        self.run(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.session, "kill-server"])
            .output();
    }
}
