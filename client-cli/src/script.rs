//! Script mode: one command per line on standard input, one line per event, answer and error
//! on standard output, in a stable format made to be read by programs and `grep`:
//!
//! ```text
//! connected ws://127.0.0.1:7878/ws
//! seated table=5f3c1a2e-… player=0 resumed=false
//! snapshot seq=3 stage=lobby players=3
//! event 17 turn_began turn=0 player=3 "Ann"
//! you your_turn phase=beginning
//! ok set_phase seq=18
//! error not_your_turn: you are not taking a turn (end)
//! error usage: usage: damage <who> <n>
//! disconnected connection closed
//! reconnecting in=0.2s
//! ```
//!
//! A `you …` line follows whenever the player's situation changes (see
//! [`Situation::script`](crate::games::Situation::script)).

use std::io::{self, Write};

use grand_melee_protocol::StageName;

use crate::command;
use crate::describe;
use crate::games;
use crate::safe;
use crate::session::{Action, Frontend, Input, Note, State};

/// The script-mode front end, writing to `out`.
#[derive(Debug)]
pub struct Script<W: Write> {
    out: W,
    last_situation: Option<String>,
}

impl<W: Write> Script<W> {
    /// A front end writing to `out`.
    pub fn new(out: W) -> Self {
        Self {
            out,
            last_situation: None,
        }
    }

    /// The writer back (for tests).
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Writes one line. Every value from other people is already quoted or escaped where the
    /// line was made; [`safe::guard`] on the whole line is the last line of defence for text
    /// that reached a line some other way (a decoding error, a close reason).
    fn line(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.out, "{}", safe::guard(line))
    }

    fn situation(&mut self, state: &State) -> io::Result<()> {
        let Some(situation) = state.situation() else {
            return Ok(());
        };
        let words = situation.script();
        if self.last_situation.as_deref() != Some(words.as_str()) {
            self.line(&format!("you {words}"))?;
            self.last_situation = Some(words);
        }
        Ok(())
    }
}

fn stage_name(stage: StageName) -> &'static str {
    match stage {
        StageName::Lobby => "lobby",
        StageName::Mulligan => "mulligan",
        StageName::Playing => "playing",
        StageName::Finished => "finished",
    }
}

/// The `status` lines: the table, one line per seat, and the player's situation.
pub fn status_lines(state: &State) -> Vec<String> {
    let Some(view) = &state.view else {
        return vec![format!("status table={} no snapshot yet", state.table)];
    };
    let mut lines = vec![format!(
        "status table={} stage={} seq={} players={} alive={} spectators={} spectators_muted={} host={} paused={} adjourned={} name={}",
        view.table,
        stage_name(view.stage),
        view.seq,
        view.players.len(),
        view.living(),
        view.spectators,
        view.spectators_muted,
        view.host
            .map_or_else(|| "none".to_owned(), |h| describe::who(view, h)),
        view.paused,
        view.adjourned,
        safe::quoted(&view.name),
    )];
    lines.extend(games::status_lines(games::kind(Some(view)), view, state.me));
    if let Some(situation) = state.situation() {
        lines.push(format!("you {}", situation.script()));
    }
    lines
}

impl<W: Write + Send> Frontend for Script<W> {
    fn note(&mut self, state: &State, note: Note) -> io::Result<()> {
        match note {
            Note::Connected => self.line(&format!("connected {}", state.server))?,
            Note::Seated { resumed } => {
                let me = state.me.map_or_else(String::new, |p| p.to_string());
                self.line(&format!(
                    "seated table={} player={me} resumed={resumed}",
                    state.table
                ))?;
            }
            Note::Watching => self.line(&format!("watching table={}", state.table))?,
            Note::Snapshot => {
                if let Some(view) = &state.view {
                    self.line(&format!(
                        "snapshot seq={} stage={} players={}",
                        view.seq,
                        stage_name(view.stage),
                        view.players.len()
                    ))?;
                }
                self.situation(state)?;
            }
            Note::Event { line, .. } => self.line(&line)?,
            Note::Applied => self.situation(state)?,
            Note::Ack { request, seq, .. } => self.line(&format!("ok {request} seq={seq}"))?,
            Note::Rejected {
                code,
                command,
                message,
            } => {
                let context = if command.is_empty() {
                    String::new()
                } else {
                    format!(" ({command})")
                };
                let why = if message.is_empty() {
                    code.description().to_owned()
                } else {
                    safe::printable(&message)
                };
                self.line(&format!("error {}: {why}{context}", code.name()))?;
            }
            Note::Past { .. } => {}
            Note::Problem { kind, message } => self.line(&format!("error {kind}: {message}"))?,
            Note::Disconnected { reason } => self.line(&format!("disconnected {reason}"))?,
            Note::Reconnecting { delay } => {
                self.line(&format!("reconnecting in={:.1}s", delay.as_secs_f64()))?;
            }
            Note::Help => {
                for (usage, meaning) in command::help(games::kind(state.view.as_ref())) {
                    self.line(&format!("help {usage} — {meaning}"))?;
                }
            }
            Note::Status => {
                for line in status_lines(state) {
                    self.line(&line)?;
                }
            }
            Note::Left => self.line("left")?,
        }
        self.out.flush()
    }

    fn input(&mut self, _state: &State, input: Input) -> io::Result<Option<Action>> {
        Ok(match input {
            Input::Line(line) => Some(Action::Line(line)),
            Input::Eof => Some(Action::EndOfInput),
            Input::Key(_) | Input::Resize => None,
        })
    }
}
