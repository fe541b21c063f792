//! PROTOCOL.md's example bot, exactly as printed there, run four times against the real server
//! with its default limits: a bot author's first run is clean (every bot sees the game end, no
//! `error:` line — in particular no `rate_limited`).
//!
//! Python 3 with `websockets` and `msgpack` is needed: the test makes a virtual environment
//! under the target directory and installs them from PyPI when they are missing, or fails with
//! the command to run.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use grand_melee_e2e::TestServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// How long the four bots may take to play their game (a bound on failure: it takes about 10 s).
const GAME_TIME: std::time::Duration = std::time::Duration::from_secs(180);

/// The code of the `python` block of the "Example bot (Python)" section.
fn example_bot() -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../PROTOCOL.md")).unwrap();
    let section = &text[text.find("## Example bot (Python)").expect("the section")..];
    let start = section.find("```python\n").expect("a python block") + "```python\n".len();
    let end = start + section[start..].find("\n```").expect("the block's end");
    section[start..end].to_owned()
}

fn run(command: &mut std::process::Command) -> bool {
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Python with `websockets` and `msgpack`: a virtual environment under the target directory,
/// made and filled from PyPI if need be.
fn python() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-bot-venv");
    let python = venv.join("bin").join("python");
    let ready = |python: &Path| {
        run(std::process::Command::new(python).args(["-c", "import websockets, msgpack"]))
    };
    if ready(&python) {
        return python;
    }
    if !python.exists() {
        assert!(
            run(std::process::Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)),
            "this test needs Python 3 with venv: `apt-get install -y python3 python3-venv` \
             (or `python3 -m venv {}` failed)",
            venv.display()
        );
    }
    let installed = std::process::Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "websockets", "msgpack"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        installed && ready(&python),
        "could not install the bot's packages: run `{} -m pip install websockets msgpack`",
        python.display()
    );
    python
}

/// Starts one bot; its output lines (standard output and error) come through `lines`.
fn bot(
    python: &Path,
    script: &Path,
    url: &str,
    name: &str,
    lines: tokio::sync::mpsc::UnboundedSender<(String, String)>,
) -> tokio::process::Child {
    let mut child = Command::new(python)
        .arg(script)
        .args([url, name, "4"])
        .env("PYTHONUNBUFFERED", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn tokio::io::AsyncRead + Send + Unpin>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let lines = lines.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stream).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let _ = lines.send((name.clone(), line));
            }
        });
    }
    child
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_example_bots_play_a_clean_game_within_the_default_limits() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bot.py");
    std::fs::write(&script, example_bot()).unwrap();
    let server = TestServer::start().await;
    let url = server.url();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut transcript: Vec<(String, String)> = Vec::new();

    // Ann first, so that she creates the table and the others find it.
    let mut bots = vec![bot(&python, &script, &url, "Ann", tx.clone())];
    tokio::time::timeout(GAME_TIME, async {
        while let Some(line) = rx.recv().await {
            let seated = line.0 == "Ann" && line.1.starts_with("seated at");
            transcript.push(line);
            if seated {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("Ann sat down in time: {transcript:#?}"));
    for name in ["Ben", "Cid", "Dan"] {
        bots.push(bot(&python, &script, &url, name, tx.clone()));
    }
    drop(tx);
    let mut statuses = Vec::new();
    let outcome = tokio::time::timeout(GAME_TIME, async {
        for bot in &mut bots {
            statuses.push(bot.wait().await.unwrap());
        }
        while let Some(line) = rx.recv().await {
            transcript.push(line);
        }
    })
    .await;
    assert!(
        outcome.is_ok(),
        "the bots finished in time: {transcript:#?}"
    );
    assert!(
        statuses.iter().all(std::process::ExitStatus::success),
        "{statuses:?}: {transcript:#?}"
    );
    for name in ["Ann", "Ben", "Cid", "Dan"] {
        let said: Vec<&str> = transcript
            .iter()
            .filter(|(who, _)| who == name)
            .map(|(_, line)| line.as_str())
            .collect();
        assert!(
            said.iter().any(|l| l.starts_with("game over:")),
            "{name} saw the game end: {said:#?}"
        );
        assert!(
            !said
                .iter()
                .any(|l| l.starts_with("error:") || l.contains("Traceback")),
            "{name}'s run is clean: {said:#?}"
        );
    }
    server.shutdown().await;
}
