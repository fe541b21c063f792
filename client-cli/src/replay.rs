//! Finished games kept by the server as replays: `grand-melee replay list`, `replay export` and
//! `replay watch`.
//!
//! A replay is the table's id, name and settings and every event from number 1 (the server's
//! `replay` answer). The table as of step N is `TableView::new(table, name, settings)` with
//! events 1..=N applied: the client only folds events, it knows no rules. A [`Stepper`] keeps a
//! copy of the view every [`CHECKPOINT_EVERY`] events so that any step is rebuilt quickly.
//!
//! Export formats (`--format`):
//!
//! - `jsonl`: one JSON object per line. The first is the header
//!   `{"table":"<uuid>","name":"…","settings":{…}}`, then one `{"seq":N,"event":{…}}` per
//!   event, `seq` from 1, the event as on the wire (`kind` and its fields).
//! - `msgpack`: the same records, one MessagePack map each, written one after the other (no
//!   framing, no array around them); the `event` value is exactly the event's wire encoding.

use std::io::{self, BufRead, Write};

use grand_melee_protocol::{
    ClientMessage, ErrorCode, Event, ReplaySummary, ServerMessage, Settings, TableId, TableView,
};
use ratatui::Frame;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde::Serialize;

use crate::describe;
use crate::games::GameMirror;
use crate::net::Conn;
use crate::safe;
use crate::script::status_lines;
use crate::session::{Note, State};
use crate::tui::{self, Screen};
use crate::{Candidate, ClientError, pick};

/// A copy of the view is kept after every this many events.
pub const CHECKPOINT_EVERY: u64 = 64;

/// Events shown in the replay view's log (the most recent up to the current step).
const LOG_LINES: u64 = 500;

/// One finished game, as the server's `replay` answer carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The table it was played at.
    pub table: TableId,
    /// Its name.
    pub name: String,
    /// Its settings.
    pub settings: Settings,
    /// Every event; `events[0]` is number 1.
    pub events: Vec<Event>,
}

impl Replay {
    /// The empty table every replay starts from.
    pub fn start(&self) -> TableView {
        TableView::new(self.table, self.name.clone(), self.settings.clone())
    }

    /// How many events it has (the last step).
    pub fn len(&self) -> u64 {
        self.events.len() as u64
    }

    /// Whether it has no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// The finished games the server keeps, newest first: every page of `list_replays`, `limit`
/// games a page.
pub async fn list_replays(conn: &mut Conn, limit: u32) -> Result<Vec<ReplaySummary>, ClientError> {
    let mut all = Vec::new();
    let mut from = 0;
    loop {
        let answer = conn
            .call(ClientMessage::ListReplays { id: 0, from, limit })
            .await?;
        let ServerMessage::Replays { replays, next, .. } = answer else {
            return Err(ClientError::Protocol(answer.name().to_owned()));
        };
        let got = replays.len();
        all.extend(replays);
        match crate::next_page("replays", u64::from(from), got, next.map(u64::from))? {
            Some(next) => from = u32::try_from(next).unwrap_or(u32::MAX),
            None => return Ok(all),
        }
    }
}

/// What opens the replay of a game played at a table with a password: the password, or the
/// seat token this client saved when it sat at that table (looked up in `store` for the server
/// and the table).
#[derive(Debug, Default, Clone)]
pub struct Access {
    /// The table's password (`--password`, `GM_TABLE_PASSWORD`).
    pub password: Option<String>,
    /// Where the client keeps its seat tokens.
    pub store: Option<crate::store::TokenStore>,
}

/// Fetches the replay named by `text`: a table id, the start of one, or a name (looked up among
/// every page of the finished games, `limit` a page; not among the open tables). Every page of
/// its events is fetched, from the first.
pub async fn fetch(
    server: &str,
    text: &str,
    access: &Access,
    limit: u32,
) -> Result<Replay, ClientError> {
    let mut conn = Conn::open(server).await?;
    let result = fetch_on(&mut conn, server, text, access, limit).await;
    conn.close().await;
    result
}

async fn fetch_on(
    conn: &mut Conn,
    server: &str,
    text: &str,
    access: &Access,
    limit: u32,
) -> Result<Replay, ClientError> {
    let table = match uuid::Uuid::parse_str(text.trim()).map(TableId::from) {
        Ok(id) => id,
        Err(_) => {
            let replays = list_replays(conn, limit).await?;
            let candidates = replays.iter().map(|r| Candidate {
                table: r.table,
                name: &r.name,
            });
            pick(text, candidates, &REPLAY_WORDS)?
        }
    };
    let token = access
        .store
        .as_ref()
        .and_then(|store| store.load(server, table))
        .map(|seat| seat.token);
    // Every page, from the first event, until the server says there is no next one.
    let mut from_seq = 1;
    let mut replay: Option<Replay> = None;
    loop {
        let answer = conn
            .call(ClientMessage::GetReplay {
                id: 0,
                table,
                from_seq,
                password: access.password.clone(),
                token,
            })
            .await
            .map_err(|error| refused(error, table, access, token.is_some()))?;
        let ServerMessage::Replay {
            table,
            name,
            settings,
            first_seq,
            events,
            next_seq,
            ..
        } = answer
        else {
            return Err(ClientError::Protocol(answer.name().to_owned()));
        };
        if first_seq != from_seq {
            return Err(ClientError::Protocol(format!(
                "a replay page from event {first_seq} when {from_seq} was asked for"
            )));
        }
        let got = events.len();
        replay
            .get_or_insert_with(|| Replay {
                table,
                name,
                settings,
                events: Vec::new(),
            })
            .events
            .extend(events);
        match crate::next_page("replay events", from_seq, got, next_seq)? {
            Some(next) if next != from_seq + got as u64 => {
                return Err(ClientError::Protocol(format!(
                    "a replay page of {got} events from {from_seq} says the next starts at {next}"
                )));
            }
            Some(next) => from_seq = next,
            None => break,
        }
    }
    replay.ok_or_else(|| ClientError::Protocol("no replay page".into()))
}

/// A refused `get_replay` in plain words.
fn refused(error: ClientError, table: TableId, access: &Access, token: bool) -> ClientError {
    let ClientError::Rejected { code, .. } = &error else {
        return error;
    };
    let why = match code {
        ErrorCode::UnknownReplay => format!(
            "no finished game {table} is kept on this server (unknown_replay); see `grand-melee replay list`"
        ),
        ErrorCode::WrongPassword if access.password.is_some() => format!(
            "game {table} was played at a table with a password, and the password given is wrong (wrong_password)"
        ),
        ErrorCode::WrongPassword => {
            let seat = if token {
                "the seat token saved here for that table does not open it"
            } else {
                "no seat token is saved here for that table"
            };
            format!(
                "game {table} was played at a table with a password (wrong_password): give it with \
                 --password or GM_TABLE_PASSWORD; {seat} (a player who sat at it from this data \
                 directory needs no password)"
            )
        }
        ErrorCode::RateLimited if access.password.is_some() => format!(
            "too many wrong passwords for game {table} from this address (rate_limited); wait a minute"
        ),
        _ => return error,
    };
    ClientError::Table(why)
}

/// How [`pick`] names replays in its errors.
const REPLAY_WORDS: crate::Words = crate::Words {
    none: "no finished game called",
    several: "several finished games match",
    listing: "grand-melee replay list",
};

/// Writes one line per finished game (every page, `limit` games a page):
/// `replay <id> created=2026-11-20T18:00:00Z finished=… events=N password=no name="<name>"`.
pub async fn list(server: &str, limit: u32, out: &mut dyn Write) -> Result<(), ClientError> {
    let mut conn = Conn::open(server).await?;
    let replays = list_replays(&mut conn, limit).await;
    conn.close().await;
    let replays = replays?;
    if replays.is_empty() {
        writeln!(out, "no replays")?;
    }
    for r in replays {
        writeln!(
            out,
            "replay {} created={} finished={} events={} password={} name={}",
            r.table,
            utc(r.created_at_ms),
            utc(r.finished_at_ms),
            r.events,
            if r.password { "yes" } else { "no" },
            safe::quoted(&r.name)
        )?;
    }
    out.flush()?;
    Ok(())
}

/// Milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days to a civil date (Howard Hinnant's algorithm), for days on or after 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The first record of an export.
#[derive(Debug, Serialize)]
struct Header<'a> {
    table: String,
    name: &'a str,
    settings: &'a Settings,
}

/// One event of an export.
#[derive(Debug, Serialize)]
struct Record<'a> {
    seq: u64,
    event: &'a Event,
}

fn header(replay: &Replay) -> Header<'_> {
    Header {
        table: replay.table.to_string(),
        name: &replay.name,
        settings: &replay.settings,
    }
}

fn records(replay: &Replay) -> impl Iterator<Item = Record<'_>> {
    (1..)
        .zip(&replay.events)
        .map(|(seq, event)| Record { seq, event })
}

/// The events of a `replay export` JSON-lines file, in order, and the table's settings from
/// its header line (`None` when the header does not give them).
pub fn read_jsonl(path: &std::path::Path) -> Result<(Option<Settings>, Vec<Event>), ClientError> {
    #[derive(serde::Deserialize)]
    struct Line {
        seq: u64,
        event: Event,
    }
    #[derive(serde::Deserialize)]
    struct Head {
        settings: Settings,
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| ClientError::Table(format!("{}: {e}", path.display())))?;
    let settings = text
        .lines()
        .next()
        .and_then(|line| serde_json::from_str::<Head>(line).ok())
        .map(|head| head.settings);
    let mut events = Vec::new();
    for (number, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let record: Line = serde_json::from_str(line).map_err(|e| {
            ClientError::Table(format!("{} line {}: {e}", path.display(), number + 1))
        })?;
        if record.seq != events.len() as u64 + 1 {
            return Err(ClientError::Table(format!(
                "{} line {}: event {} where {} was due",
                path.display(),
                number + 1,
                record.seq,
                events.len() + 1
            )));
        }
        events.push(record.event);
    }
    Ok((settings, events))
}

/// Writes the replay as JSON lines: the header, then one `{"seq":N,"event":{…}}` per event.
/// Characters that could act on a terminal are written as JSON escapes ([`safe::json`]), so
/// that an export shown on a terminal cannot act on it.
pub fn write_jsonl(replay: &Replay, out: &mut dyn Write) -> io::Result<()> {
    fn line(out: &mut dyn Write, record: &impl Serialize) -> io::Result<()> {
        let json = serde_json::to_string(record)?;
        out.write_all(safe::json(&json).as_bytes())?;
        out.write_all(b"\n")
    }
    line(out, &header(replay))?;
    for record in records(replay) {
        line(out, &record)?;
    }
    out.flush()
}

/// Writes the replay as a stream of MessagePack maps: the header, then one `{seq, event}` per
/// event.
pub fn write_msgpack(replay: &Replay, out: &mut dyn Write) -> io::Result<()> {
    let to_io = |e: rmp_serde::encode::Error| io::Error::other(e.to_string());
    rmp_serde::encode::write_named(&mut *out, &header(replay)).map_err(to_io)?;
    for record in records(replay) {
        rmp_serde::encode::write_named(&mut *out, &record).map_err(to_io)?;
    }
    out.flush()
}

/// A replay being stepped through: the current step (0: before the first event) and the table
/// as of that step.
#[derive(Debug, Clone)]
pub struct Stepper {
    replay: Replay,
    /// The script-mode line of each event (`lines[0]` is event 1).
    lines: Vec<String>,
    /// The UI sentence of each event.
    sentences: Vec<String>,
    /// Whether each event has a line in the log ([`describe::log_sentence`]).
    in_log: Vec<bool>,
    /// The table after `i * CHECKPOINT_EVERY` events.
    checkpoints: Vec<GameMirror>,
    step: u64,
    /// The table as of `step`, and its snapshot.
    mirror: GameMirror,
    view: TableView,
}

impl Stepper {
    /// Goes through the replay once, wording every event and keeping checkpoints. Fails if an
    /// event does not apply (a damaged replay).
    pub fn new(replay: Replay) -> Result<Self, ClientError> {
        let start = replay.start();
        let start_mirror = GameMirror::of(&start).map_err(|e| {
            ClientError::Protocol(
                crate::games::unsupported(crate::games::kind(Some(&start)))
                    .unwrap_or_else(|| format!("the replay's table settings do not fit: {e}")),
            )
        })?;
        let mut mirror = start_mirror.clone();
        let mut view = start.clone();
        let mut lines = Vec::with_capacity(replay.events.len());
        let mut sentences = Vec::with_capacity(replay.events.len());
        let mut in_log = Vec::with_capacity(replay.events.len());
        let mut checkpoints = vec![start_mirror.clone()];
        for (seq, event) in (1..).zip(&replay.events) {
            lines.push(describe::script_line(seq, event, &view));
            sentences.push(describe::sentence(event, &view));
            in_log.push(describe::log_sentence(event, &view).is_some());
            mirror.apply(seq, event).map_err(|e| {
                ClientError::Protocol(format!("event {seq} of the replay does not apply: {e}"))
            })?;
            view = mirror.view();
            if seq % CHECKPOINT_EVERY == 0 {
                checkpoints.push(mirror.clone());
            }
        }
        Ok(Self {
            replay,
            lines,
            sentences,
            in_log,
            checkpoints,
            step: 0,
            mirror: start_mirror,
            view: start,
        })
    }

    /// The replay.
    pub fn replay(&self) -> &Replay {
        &self.replay
    }

    /// The current step: how many events have been applied.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The last step.
    pub fn last(&self) -> u64 {
        self.replay.len()
    }

    /// The table as of the current step.
    pub fn view(&self) -> &TableView {
        &self.view
    }

    /// Event `seq` (from 1).
    pub fn event(&self, seq: u64) -> Option<&Event> {
        self.replay.events.get(index(seq)?)
    }

    /// The script-mode line of event `seq`.
    pub fn line(&self, seq: u64) -> Option<&str> {
        self.lines.get(index(seq)?).map(String::as_str)
    }

    /// The UI sentence of event `seq`.
    pub fn sentence(&self, seq: u64) -> Option<&str> {
        self.sentences.get(index(seq)?).map(String::as_str)
    }

    /// Event `seq`'s line in the log ([`describe::log_sentence`]): `None` for an event the log
    /// leaves out, or past the end.
    pub fn log_sentence(&self, seq: u64) -> Option<&str> {
        let i = index(seq)?;
        self.in_log
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| self.sentences.get(i).map(String::as_str))
            .flatten()
    }

    /// Moves to `step` (at most the last) and rebuilds the table as of it: the nearest
    /// checkpoint at or before it, then the events up to it. Returns the step reached.
    pub fn goto(&mut self, step: u64) -> u64 {
        let step = step.min(self.last());
        if step == self.step {
            return step;
        }
        let mut mirror = if step > self.step && step - self.step < CHECKPOINT_EVERY {
            self.mirror.clone()
        } else {
            usize::try_from(step / CHECKPOINT_EVERY)
                .ok()
                .and_then(|i| self.checkpoints.get(i))
                .or_else(|| self.checkpoints.first())
                .cloned()
                .unwrap_or_else(|| self.mirror.clone())
        };
        for seq in mirror.seq() + 1..=step {
            let Some(event) = self.event(seq) else { break };
            // Every event applied once already in `new`, so this cannot fail; stop if it does.
            if mirror.apply(seq, event).is_err() {
                break;
            }
        }
        self.step = mirror.seq();
        self.view = mirror.view();
        self.mirror = mirror;
        self.step
    }
}

fn index(seq: u64) -> Option<usize> {
    usize::try_from(seq.checked_sub(1)?).ok()
}

/// A command of `replay watch` in script mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepCommand {
    /// Forward this many events.
    Next(u64),
    /// Back this many events.
    Back(u64),
    /// To this step.
    Goto(u64),
    /// Before the first event.
    Start,
    /// After the last event.
    End,
    /// The table as of now.
    Status,
    /// The commands.
    Help,
    /// Stop.
    Quit,
}

/// The script-mode commands of `replay watch`, with their meaning.
pub const STEP_HELP: [(&str, &str); 8] = [
    ("next [K]", "step forward one event (or K)"),
    ("back [K]", "step back one event (or K)"),
    (
        "goto SEQ",
        "go to the table as of event SEQ (0: before the first)",
    ),
    ("start", "go back before the first event"),
    ("end", "go to the end of the game"),
    ("status", "every seat as of now"),
    ("help", "these commands"),
    ("quit", "stop"),
];

/// Why a script-mode line was not understood; its text is what the script reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// More than a command and its argument (the line, trimmed).
    #[error("too many words: {0}")]
    TooManyWords(String),
    /// The command's argument does not fit its form; holds the form.
    #[error("usage: {0}")]
    Usage(&'static str),
    #[error("unknown command `{0}` (try help)")]
    Unknown(String),
}

/// Parses a script-mode line; `Ok(None)` for a blank line, `Err` with the usage otherwise.
pub fn parse_step(line: &str) -> Result<Option<StepCommand>, StepError> {
    let mut words = line.split_whitespace();
    let Some(word) = words.next() else {
        return Ok(None);
    };
    let arg = words.next();
    if words.next().is_some() {
        return Err(StepError::TooManyWords(line.trim().to_owned()));
    }
    let count = |usage: &'static str| -> Result<u64, StepError> {
        arg.map_or(Ok(1), |a| a.parse().map_err(|_| StepError::Usage(usage)))
    };
    let none = |command: StepCommand, usage: &'static str| match arg {
        None => Ok(command),
        Some(_) => Err(StepError::Usage(usage)),
    };
    let command = match word.to_ascii_lowercase().as_str() {
        "next" | "n" => StepCommand::Next(count("next [k]")?),
        "back" | "b" | "p" | "prev" => StepCommand::Back(count("back [k]")?),
        "goto" | "g" => match arg.map(str::parse) {
            Some(Ok(seq)) => StepCommand::Goto(seq),
            _ => return Err(StepError::Usage("goto <seq>")),
        },
        "start" => none(StepCommand::Start, "start")?,
        "end" => none(StepCommand::End, "end")?,
        "status" => none(StepCommand::Status, "status")?,
        "help" => StepCommand::Help,
        "quit" | "q" | "exit" => StepCommand::Quit,
        other => return Err(StepError::Unknown(other.to_owned())),
    };
    Ok(Some(command))
}

/// `replay watch` in script mode: reads commands from `input` until `quit` or its end, and
/// writes `replay …`, `event …` lines for every event stepped over forwards, and `step seq=N`
/// after each move.
pub fn script(
    stepper: &mut Stepper,
    server: &str,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    let replay = stepper.replay();
    writeln!(
        out,
        "replay table={} events={} name={}",
        replay.table,
        replay.len(),
        safe::quoted(&replay.name)
    )?;
    writeln!(out, "step seq={}", stepper.step())?;
    out.flush()?;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let command = match parse_step(&line) {
            Ok(Some(command)) => command,
            Ok(None) => continue,
            Err(error) => {
                writeln!(out, "error usage: {}", safe::guard(&error.to_string()))?;
                out.flush()?;
                continue;
            }
        };
        let now = stepper.step();
        let target = match command {
            StepCommand::Next(k) => now.saturating_add(k),
            StepCommand::Back(k) => now.saturating_sub(k),
            StepCommand::Goto(seq) if seq > stepper.last() => {
                writeln!(
                    out,
                    "error usage: goto: the replay has {} events",
                    stepper.last()
                )?;
                out.flush()?;
                continue;
            }
            StepCommand::Goto(seq) => seq,
            StepCommand::Start => 0,
            StepCommand::End => stepper.last(),
            StepCommand::Status => {
                let state = replay_state(stepper, server);
                for line in status_lines(&state) {
                    writeln!(out, "{}", safe::guard(&line))?;
                }
                out.flush()?;
                continue;
            }
            StepCommand::Help => {
                for (usage, meaning) in STEP_HELP {
                    writeln!(out, "help {usage} — {meaning}")?;
                }
                out.flush()?;
                continue;
            }
            StepCommand::Quit => return Ok(()),
        };
        let reached = stepper.goto(target);
        for seq in now + 1..=reached {
            if let Some(line) = stepper.line(seq) {
                writeln!(out, "{}", safe::guard(line))?;
            }
        }
        writeln!(out, "step seq={reached}")?;
        out.flush()?;
    }
}

/// What the watch view looks at for the current step: a spectator's state holding the view.
fn replay_state(stepper: &Stepper, server: &str) -> State {
    State {
        server: server.to_owned(),
        table: stepper.replay().table,
        me: None,
        spectator: true,
        mirror: Some(stepper.mirror.clone()),
        view: Some(stepper.view().clone()),
        connected: true,
    }
}

/// The full-screen replay view: the live watch view showing the table as of the current step.
#[derive(Debug)]
pub struct Viewer {
    stepper: Stepper,
    server: String,
}

impl Viewer {
    /// A view of `stepper` at its current step.
    pub fn new(stepper: Stepper, server: impl Into<String>) -> Self {
        Self {
            stepper,
            server: server.into(),
        }
    }

    /// The replay and its current step.
    pub fn stepper(&self) -> &Stepper {
        &self.stepper
    }

    /// Handles a key; returns `true` to quit. →/n/Space next, ←/p/Backspace back, PgDn/PgUp ten
    /// events, Home/End the start and the end, q/Esc/Ctrl-C quit.
    pub fn key(&mut self, key: KeyEvent) -> bool {
        if key.kind != KeyEventKind::Press {
            return false;
        }
        let now = self.stepper.step();
        let target = match key.code {
            KeyCode::Char('c' | 'd') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                return true;
            }
            KeyCode::Char('q' | 'Q') | KeyCode::Esc => return true,
            KeyCode::Right | KeyCode::Char('n' | ' ' | 'l') | KeyCode::Enter => {
                now.saturating_add(1)
            }
            KeyCode::Left | KeyCode::Char('p' | 'h') | KeyCode::Backspace => now.saturating_sub(1),
            KeyCode::PageDown => now.saturating_add(10),
            KeyCode::PageUp => now.saturating_sub(10),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => self.stepper.last(),
            _ => return false,
        };
        self.stepper.goto(target);
        false
    }

    /// Draws the watch view for the current step: the table, the log of events up to it, and
    /// the step in place of the situation line.
    pub fn render(&self, frame: &mut Frame<'_>) {
        let state = replay_state(&self.stepper, &self.server);
        let mut screen = Screen::new();
        let step = self.stepper.step();
        for seq in step.saturating_sub(LOG_LINES - 1).max(1)..=step {
            let (Some(event), Some(line)) = (self.stepper.event(seq), self.stepper.line(seq))
            else {
                continue;
            };
            screen.note(
                &state,
                Note::Event {
                    seq,
                    event: event.clone(),
                    line: line.to_owned(),
                    sentence: self.stepper.log_sentence(seq).map(str::to_owned),
                },
            );
        }
        let what = match self.stepper.sentence(step) {
            Some(sentence) => format!("#{step} {sentence}"),
            None => "before the first event".to_owned(),
        };
        screen.replay = Some(format!(
            "Replay — step {step} of {}: {what}",
            self.stepper.last()
        ));
        tui::render(frame, &screen, &state);
    }

    /// Draws on `terminal`.
    pub fn draw<B: Backend>(&self, terminal: &mut Terminal<B>) -> io::Result<()> {
        terminal
            .draw(|frame| self.render(frame))
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use grand_melee_protocol::{EliminationCause, StageName};

    fn replay() -> Replay {
        let table = "5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50"
            .parse::<TableId>()
            .unwrap();
        let mut events = vec![
            Event::PlayerJoined {
                player: 0,
                name: "Ann".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::HostChanged { player: Some(0) },
            Event::PlayerJoined {
                player: 1,
                name: "Ben".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::Chat {
                from: Some(1),
                name: "Ben".into(),
                text: "hi\nthere".into(),
            },
        ];
        // Long enough to cross several checkpoints.
        for i in 0..150 {
            events.push(Event::SpectatorsChanged { spectators: i });
        }
        Replay {
            table,
            name: "Friday melee".into(),
            settings: Settings::default(),
            events,
        }
    }

    #[test]
    fn times_are_written_in_utc() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_000_000_000), "2026-11-18T11:06:40Z");
        assert_eq!(utc(1_709_251_199_999), "2024-02-29T23:59:59Z");
    }

    #[test]
    fn any_step_is_the_events_up_to_it_applied_to_an_empty_table() {
        let replay = replay();
        let mut stepper = Stepper::new(replay.clone()).unwrap();
        for target in [5, 154, 3, 0, 64, 63, 65, 128, 200, 1, 130, 129] {
            let reached = stepper.goto(target);
            let expected = target.min(replay.len());
            assert_eq!(reached, expected);
            let mut view = replay.start();
            let upto = usize::try_from(expected).unwrap();
            view = view.folded(1, &replay.events[..upto]).unwrap();
            assert_eq!(stepper.view(), &view, "step {target}");
        }
        stepper.goto(2);
        assert_eq!(stepper.view().host, Some(0));
        assert_eq!(stepper.view().players.len(), 1);
    }

    #[test]
    fn the_replays_log_leaves_out_a_drop_and_return_but_each_step_has_its_words() {
        let mut replay = replay();
        replay.events.truncate(4);
        let changed = |connected| Event::ConnectionChanged {
            player: 1,
            connected,
        };
        replay.events.extend([
            changed(false),                    // 5
            changed(true),                     // 6
            changed(false),                    // 7
            Event::PlayerAbsent { player: 1 }, // 8
            changed(true),                     // 9
        ]);
        let stepper = Stepper::new(replay).unwrap();
        let log: Vec<Option<&str>> = (5..=9).map(|seq| stepper.log_sentence(seq)).collect();
        assert_eq!(
            log,
            [None, None, None, Some("Ben is absent"), Some("Ben is back")]
        );
        assert_eq!(stepper.log_sentence(4), stepper.sentence(4));
        assert_eq!(stepper.log_sentence(10), None);
        // The step itself still says what happened.
        assert_eq!(stepper.sentence(5), Some("Ben lost the connection"));
        assert_eq!(
            stepper.line(6).map(|l| l.contains("connected=true")),
            Some(true)
        );
    }

    #[test]
    fn a_replay_that_does_not_apply_is_refused() {
        let mut replay = replay();
        replay.events.insert(
            1,
            Event::PlayerKicked {
                player: 9,
                banned: false,
            },
        );
        let error = Stepper::new(replay).unwrap_err().to_string();
        assert!(error.contains("event 2"), "{error}");
    }

    #[test]
    fn json_lines_export_a_header_then_one_event_per_line() {
        let mut replay = replay();
        replay.events.truncate(4);
        replay.events.push(Event::Eliminated {
            players: vec![1],
            cause: EliminationCause::Ruling,
        });
        let mut out = Vec::new();
        write_jsonl(&replay, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6);
        let header: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(header["table"], "5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50");
        assert_eq!(header["name"], "Friday melee");
        assert_eq!(header["settings"]["reduction"], "eager");
        let chat: serde_json::Value = serde_json::from_str(lines[4]).unwrap();
        assert_eq!(chat["seq"], 4);
        assert_eq!(chat["event"]["kind"], "chat");
        assert_eq!(chat["event"]["text"], "hi\nthere");
        let last: serde_json::Value = serde_json::from_str(lines[5]).unwrap();
        assert_eq!(last["event"]["cause"], "ruling");
    }

    /// A replay whose table, players and chat carry every hostile string.
    fn hostile_replay() -> Replay {
        let mut replay = replay();
        replay.name = crate::safe::tests::HOSTILE[0].to_owned();
        replay.events.truncate(3);
        for (i, text) in (2..).zip(crate::safe::tests::HOSTILE) {
            replay.events.push(Event::PlayerJoined {
                player: i,
                name: text.to_owned(),
                entropy: String::new(),
                deck: None,
            });
            replay.events.push(Event::Chat {
                from: Some(i),
                name: text.to_owned(),
                text: text.to_owned(),
            });
        }
        replay
    }

    #[test]
    fn json_lines_cannot_act_on_a_terminal_and_read_back_exactly() {
        let replay = hostile_replay();
        let mut out = Vec::new();
        write_jsonl(&replay, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(crate::safe::tests::is_inert(&text.replace('\n', "")));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), replay.events.len() + 1);
        let header: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(header["name"], replay.name);
        for (line, event) in lines[1..].iter().zip(&replay.events) {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let back: Event = serde_json::from_value(record["event"].clone()).unwrap();
            assert_eq!(&back, event);
        }
    }

    #[test]
    fn replay_script_mode_cannot_act_on_a_terminal_or_forge_a_line() {
        let replay = hostile_replay();
        let last = replay.len();
        let mut stepper = Stepper::new(replay).unwrap();
        let mut out = Vec::new();
        script(
            &mut stepper,
            "ws://h/ws",
            &mut "end\nstatus\nbogus \u{1b}[2J\n".as_bytes(),
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            crate::safe::tests::is_inert(&text.replace('\n', "")),
            "{text}"
        );
        let events: Vec<&str> = text.lines().filter(|l| l.starts_with("event ")).collect();
        assert_eq!(events.len() as u64, last, "{text}");
        for (seq, line) in (1..).zip(&events) {
            assert!(line.starts_with(&format!("event {seq} ")), "{line}");
        }
        assert!(
            text.contains("error usage: unknown command `bogus`"),
            "{text}"
        );
    }

    #[test]
    fn msgpack_events_are_the_wire_encoding() {
        let mut replay = replay();
        replay.events.truncate(2);
        let mut out = Vec::new();
        write_msgpack(&replay, &mut out).unwrap();
        // The last record: fixmap(2) "seq" 2 "event" <the event's own encoding>.
        let event = grand_melee_protocol::encode_event(&replay.events[1]);
        let mut tail = vec![0x82, 0xa3, b's', b'e', b'q', 0x02];
        tail.extend_from_slice(&[0xa5, b'e', b'v', b'e', b'n', b't']);
        tail.extend_from_slice(&event);
        assert!(out.ends_with(&tail), "{out:x?}");
        // The header comes first: fixmap(3) "table".
        assert_eq!(&out[..7], &[0x83, 0xa5, b't', b'a', b'b', b'l', b'e']);
    }

    #[test]
    fn script_commands_parse_and_bad_ones_say_why() {
        assert_eq!(parse_step("next"), Ok(Some(StepCommand::Next(1))));
        assert_eq!(parse_step(" next 5 "), Ok(Some(StepCommand::Next(5))));
        assert_eq!(parse_step("back"), Ok(Some(StepCommand::Back(1))));
        assert_eq!(parse_step("goto 12"), Ok(Some(StepCommand::Goto(12))));
        assert_eq!(parse_step("END"), Ok(Some(StepCommand::End)));
        assert_eq!(parse_step("quit"), Ok(Some(StepCommand::Quit)));
        assert_eq!(parse_step("   "), Ok(None));
        assert!(parse_step("goto").is_err());
        assert!(parse_step("goto x").is_err());
        assert!(parse_step("next -1").is_err());
        assert!(parse_step("end 3").is_err());
        assert_eq!(
            parse_step("attack Ben").unwrap_err(),
            StepError::Unknown("attack".to_owned())
        );
    }

    #[test]
    fn a_bad_script_line_says_what_was_wrong() {
        let cases = [
            ("goto", StepError::Usage("goto <seq>"), "usage: goto <seq>"),
            ("next -1", StepError::Usage("next [k]"), "usage: next [k]"),
            ("b x", StepError::Usage("back [k]"), "usage: back [k]"),
            ("end 3", StepError::Usage("end"), "usage: end"),
            (
                " back 1 2 ",
                StepError::TooManyWords("back 1 2".to_owned()),
                "too many words: back 1 2",
            ),
            (
                "attack Ben",
                StepError::Unknown("attack".to_owned()),
                "unknown command `attack` (try help)",
            ),
        ];
        for (line, error, text) in cases {
            assert_eq!(parse_step(line), Err(error.clone()), "{line}");
            assert_eq!(error.to_string(), text, "{line}");
        }
    }

    #[test]
    fn script_mode_prints_events_forward_and_a_step_line_after_each_move() {
        let mut replay = replay();
        replay.events.truncate(4);
        let mut stepper = Stepper::new(replay).unwrap();
        let mut input = io::Cursor::new("next\nnext 2\nbogus\nback\ngoto 9\ngoto 4\nend\nstart\n");
        let mut out = Vec::new();
        script(&mut stepper, "ws://x/ws", &mut input, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "replay table=5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50 events=4 name=\"Friday melee\"",
                "step seq=0",
                "event 1 player_joined player=0 \"Ann\"",
                "step seq=1",
                "event 2 host_changed player=0 \"Ann\"",
                "event 3 player_joined player=1 \"Ben\"",
                "step seq=3",
                "error usage: unknown command `bogus` (try help)",
                "step seq=2",
                "error usage: goto: the replay has 4 events",
                "event 3 player_joined player=1 \"Ben\"",
                r#"event 4 chat from=1 "Ben" text="hi\u{a}there""#,
                "step seq=4",
                "step seq=4",
                "step seq=0",
            ]
        );
    }

    #[test]
    fn the_viewer_steps_with_keys() {
        let mut stepper = Stepper::new(replay()).unwrap();
        stepper.goto(0);
        let mut viewer = Viewer::new(stepper, "ws://x/ws");
        let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert!(!viewer.key(press(KeyCode::Right)));
        assert!(!viewer.key(press(KeyCode::Char('n'))));
        assert_eq!(viewer.stepper().step(), 2);
        assert!(!viewer.key(press(KeyCode::Left)));
        assert_eq!(viewer.stepper().step(), 1);
        assert!(!viewer.key(press(KeyCode::End)));
        assert_eq!(viewer.stepper().step(), 154);
        assert!(!viewer.key(press(KeyCode::Right)));
        assert_eq!(viewer.stepper().step(), 154, "no step past the end");
        assert!(!viewer.key(press(KeyCode::Char('p'))));
        assert_eq!(viewer.stepper().step(), 153);
        assert!(!viewer.key(press(KeyCode::Home)));
        assert_eq!(viewer.stepper().step(), 0);
        assert_eq!(viewer.stepper().view().stage, StageName::Lobby);
        assert!(viewer.stepper().view().players.is_empty());
        assert!(!viewer.key(press(KeyCode::PageDown)));
        assert_eq!(viewer.stepper().step(), 10);
        assert_eq!(viewer.stepper().view().players.len(), 2);
        assert!(viewer.key(press(KeyCode::Char('q'))));
    }
}
