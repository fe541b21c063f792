//! PROTOCOL.md's example bots, exactly as printed there, run against the real server with its
//! default limits: a bot author's first run is clean — every bot sees its game end, with no
//! `error:` line (in particular no `rate_limited`: every refusal would be a request the
//! documents let the bot believe the server takes).
//!
//! * the Grand Melee bot ("Example bot (Python)"), four of them at one table;
//! * the Magic Tech bot ("Example Magic Tech bot"), two of them playing a whole game;
//! * the Mountain Magic bot ("Example Mountain Magic bot"), four climbs at once, each dealt by
//!   its own table's dice, to their ends (a failed climb or a battle's ending: about five
//!   climbs in six reach the battle).
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

/// How long the bots may take to play (a bound on failure: a game takes 10–30 s).
const GAME_TIME: std::time::Duration = std::time::Duration::from_secs(180);

/// The code of the first `python` block after the heading `heading` of PROTOCOL.md.
fn example_bot(heading: &str) -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../PROTOCOL.md")).unwrap();
    let at = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("PROTOCOL.md has the heading {heading:?}"));
    let section = &text[at..];
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
/// made and filled from PyPI if need be — once, however many tests ask at the same time (two
/// `venv`s made at once in one directory break each other).
fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON.get_or_init(make_python).clone()
}

fn make_python() -> PathBuf {
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

type Lines = tokio::sync::mpsc::UnboundedSender<(String, String)>;

/// Starts one bot (`script URL name extra…`); its output lines (standard output and error)
/// come through `lines`, each with the bot's name.
fn bot(
    python: &Path,
    script: &Path,
    url: &str,
    name: &str,
    extra: &[&str],
    lines: &Lines,
) -> tokio::process::Child {
    let mut child = Command::new(python)
        .arg(script)
        .args([url, name])
        .args(extra)
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

/// Whether a bot's line shows a refusal or a crash: the run is not clean.
fn unclean(line: &str) -> bool {
    line.starts_with("error:") || line.contains("Traceback")
}

/// Runs the bots of the block under `heading` against a fresh server, each with `extra`
/// arguments after its URL and name: the first alone until it is seated when `first_alone`
/// (it creates the table the others find), then the rest. Returns every line each bot
/// printed, once all have exited successfully within [`GAME_TIME`]; fails at the first line
/// that shows a refusal or a crash (a bot that only prints its error and asks again would
/// otherwise run until the time is up).
async fn play(heading: &str, names: &[&str], extra: &[&str], first_alone: bool) -> Transcript {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bot.py");
    std::fs::write(&script, example_bot(heading)).unwrap();
    let server = TestServer::start().await;
    let url = server.url();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut transcript: Vec<(String, String)> = Vec::new();
    let mut bots = Vec::new();
    let mut rest = names;
    if first_alone {
        let first = names[0];
        bots.push(bot(&python, &script, &url, first, extra, &tx));
        let seated = tokio::time::timeout(GAME_TIME, async {
            while let Some(line) = rx.recv().await {
                let seated = line.0 == first && line.1.starts_with("seated at");
                let clean = !unclean(&line.1);
                transcript.push(line);
                if seated || !clean {
                    return seated;
                }
            }
            false
        })
        .await;
        assert!(
            seated == Ok(true),
            "{first} sat down in time: {transcript:#?}"
        );
        rest = &names[1..];
    }
    for name in rest {
        bots.push(bot(&python, &script, &url, name, extra, &tx));
    }
    drop(tx);
    // Every line until every bot has closed its output (it has exited), or the first unclean.
    let clean = tokio::time::timeout(GAME_TIME, async {
        while let Some(line) = rx.recv().await {
            let clean = !unclean(&line.1);
            transcript.push(line);
            if !clean {
                return false;
            }
        }
        true
    })
    .await;
    assert!(clean.is_ok(), "the bots finished in time: {transcript:#?}");
    assert!(
        clean == Ok(true),
        "no bot printed an error or a traceback: {transcript:#?}"
    );
    let mut statuses = Vec::new();
    for bot in &mut bots {
        statuses.push(bot.wait().await.unwrap());
    }
    assert!(
        statuses.iter().all(std::process::ExitStatus::success),
        "{statuses:?}: {transcript:#?}"
    );
    server.shutdown().await;
    Transcript(transcript)
}

/// What the bots printed, line by line, each with the bot's name.
struct Transcript(Vec<(String, String)>);

impl Transcript {
    /// The lines `name` printed.
    fn said(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(who, _)| who == name)
            .map(|(_, line)| line.as_str())
            .collect()
    }

    /// The rest of `name`'s line that starts with `prefix`.
    fn line(&self, name: &str, prefix: &str) -> String {
        let said = self.said(name);
        said.iter()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("{name} printed {prefix:?}: {said:#?}"))
            .to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_example_bots_play_a_clean_game_within_the_default_limits() {
    let names = ["Ann", "Ben", "Cid", "Dan"];
    let transcript = play("## Example bot (Python)", &names, &["4"], true).await;
    for name in names {
        transcript.line(name, "game over:");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_magic_tech_bots_play_a_whole_game_without_an_unexpected_code() {
    let names = ["Ann", "Ben"];
    let transcript = play("### Example Magic Tech bot", &names, &[], true).await;
    let ann = transcript.line("Ann", "game over:");
    let ben = transcript.line("Ben", "game over:");
    assert_eq!(ann, ben, "both saw the same standings");
    for player in ["'player': 0", "'player': 1"] {
        assert!(ann.contains(player), "{player} stands: {ann}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mountain_magic_bots_climb_to_their_ends_without_an_unexpected_code() {
    let names = ["Cai", "Dev", "Eve", "Fay"];
    let transcript = play("### Example Mountain Magic bot", &names, &[], false).await;
    for name in names {
        let end = transcript.line(name, "climb over:");
        assert!(
            end.contains("'kind': 'failed_climb'") || end.contains("'kind': 'battle'"),
            "{name}'s climb has an outcome: {end}"
        );
    }
}
