//! Shared by the integration tests: a server in this process on a free port, and `grand-melee`
//! processes in script mode whose output lines can be awaited.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How long a test waits for something that must happen before failing. A bound on a failure,
/// not a synchronisation: every wait ends as soon as the line arrives.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The real server in this process on a free loopback port (shared with the end-to-end tests).
pub use grand_melee_e2e::TestServer;

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
    let output = tokio::time::timeout(
        PATIENCE,
        grand_melee(server, data_dir)
            .args(args)
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the command finished in time")
    .unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
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
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let _ = tx.send(line);
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
        }
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
