//! Interactive mode: a full-screen terminal UI.
//!
//! ```text
//! ┌ Friday melee ──────────────────────────────────────────────────────────────┐
//! │ playing · 28 players (27 alive) · R=2 · 4 turns, 3 running · seq 212        │
//! │ Waiting for Dan to finish                                                   │
//! │ You: Eve (seat 10) · 20 life · 0 poison · may attack: – · may target: …     │
//! └─────────────────────────────────────────────────────────────────────────────┘
//! ┌ Ring ─────────────────────────────────┐┌ Log ───────────────────────────────┐
//! │0┃  3  Ann            20  0p ● ▶T0 combat│ #211 Ann moved to combat (turn 0)  │
//! │0┃  4  Ben            17  0p ●           │ …                                  │
//! │    10 @Eve            20  0p ● …T1 waiting                                 │
//! │    17  Kim           OUT      ●           ├ Chat ──────────────────────────────┤
//! └───────────────────────────────────────┘└────────────────────────────────────┘
//!  ✖ out_of_range: that player is out of your spell range
//! ┌ command ───────────────────────────────────────────────────────────────────┐
//! │> attack Ben 3                                                               │
//! └─────────────────────────────────────────────────────────────────────────────┘
//! ```
//!
//! In the ring, `▶Tn` marks the holder of running turn n and `…Tn` a waiting turn; the colored
//! `n┃` band on the left marks the seats in running turn n's sphere; `@` is the player's own
//! seat and `»` the seats in his range (whom he may target now); eliminated seats read `OUT`.

use std::collections::VecDeque;
use std::io;

use grand_melee_protocol::{ErrorCode, Event, PlayerStatus, StageName, TurnStateName};
use ratatui::Frame;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::command::{HELP, complete};
use crate::describe::{self, Situation, names};
use crate::safe::{guard, printable};
use crate::script::status_lines;
use crate::session::{Action, Frontend, Input, Note, State};

/// Lines of log and chat kept.
const KEEP: usize = 500;

/// A line of the log with its color.
#[derive(Debug, Clone)]
struct LogLine {
    text: String,
    style: Style,
}

/// What the UI shows besides the table: the log, the chat and the command line.
#[derive(Debug, Default)]
pub struct Screen {
    log: VecDeque<LogLine>,
    chat: VecDeque<String>,
    /// The command being typed.
    pub input: String,
    message: Option<(bool, String)>,
    history: Vec<String>,
    history_pos: Option<usize>,
    scroll: usize,
    /// Replay mode: the line shown in place of the player's situation (the step and its
    /// event); the command line then lists the stepping keys instead of taking commands.
    pub replay: Option<String>,
}

impl Screen {
    /// An empty screen.
    pub fn new() -> Self {
        Self::default()
    }

    fn log(&mut self, text: impl Into<String>, style: Style) {
        if self.log.len() == KEEP {
            self.log.pop_front();
        }
        self.log.push_back(LogLine {
            text: text.into(),
            style,
        });
    }

    fn chat(&mut self, text: String) {
        if self.chat.len() == KEEP {
            self.chat.pop_front();
        }
        self.chat.push_back(text);
    }

    /// Records a note (what the UI should tell the player).
    pub fn note(&mut self, state: &State, note: Note) {
        let dim = Style::default().fg(Color::DarkGray);
        let bad = Style::default().fg(Color::Red);
        match note {
            Note::Connected => self.log(format!("Connected to {}", state.server), dim),
            Note::Seated { resumed } => {
                let text = if resumed {
                    "Back in your seat"
                } else {
                    "Seated; your seat token is saved"
                };
                self.log(text, Style::default().fg(Color::Green));
            }
            Note::Watching => self.log("Watching as a spectator", dim),
            Note::Snapshot | Note::Applied => {}
            Note::Event {
                seq,
                event,
                sentence,
                ..
            } => {
                if let Event::Chat { name, text, .. } = &event {
                    self.chat(format!("{}: {}", printable(name), printable(text)));
                } else {
                    let style = match event {
                        Event::Eliminated { .. } | Event::GameOver { .. } => {
                            Style::default().fg(Color::Yellow)
                        }
                        Event::ConnectionChanged { .. } | Event::SpectatorsChanged { .. } => dim,
                        _ => Style::default(),
                    };
                    self.log(format!("#{seq} {sentence}"), style);
                }
            }
            Note::Ack { command, .. } => {
                self.message = Some((false, format!("✓ {command}")));
            }
            Note::Rejected { code, command } => {
                let text = rejection(code, &command);
                self.log(text.clone(), bad);
                self.message = Some((true, text));
            }
            Note::Problem { kind, message } => {
                let text = format!("✖ {kind}: {message}");
                self.message = Some((true, text));
            }
            Note::Disconnected { reason } => {
                self.log(format!("Disconnected: {reason}"), bad);
                self.message = Some((true, format!("✖ disconnected: {reason}")));
            }
            Note::Reconnecting { delay } => {
                self.log(format!("Reconnecting in {:.1}s…", delay.as_secs_f64()), dim)
            }
            Note::Help => {
                for (usage, meaning) in HELP.iter().rev() {
                    self.log(format!("  {usage:<32} {meaning}"), dim);
                }
                self.log("Commands (newest lines at the top of this list):", dim);
                self.scroll = 0;
            }
            Note::Status => {
                for line in status_lines(state) {
                    self.log(line, dim);
                }
            }
            Note::Left => self.log("You left the table", dim),
        }
    }

    /// Handles a key; returns what the session should do.
    pub fn key(&mut self, state: &State, key: KeyEvent) -> Option<Action> {
        if key.kind != KeyEventKind::Press {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c' | 'd') if ctrl => return Some(Action::Quit),
            KeyCode::Char('u') if ctrl => self.input.clear(),
            KeyCode::Char(c) if !ctrl => self.input.push(c),
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Esc => self.input.clear(),
            KeyCode::Tab => {
                if let Some(done) = complete(&self.input, state.view.as_ref()) {
                    self.input = done;
                }
            }
            KeyCode::Up => {
                let pos = match self.history_pos {
                    None => self.history.len().checked_sub(1),
                    Some(p) => Some(p.saturating_sub(1)),
                };
                if let Some(p) = pos {
                    self.history_pos = Some(p);
                    self.input = self.history[p].clone();
                }
            }
            KeyCode::Down => match self.history_pos {
                Some(p) if p + 1 < self.history.len() => {
                    self.history_pos = Some(p + 1);
                    self.input = self.history[p + 1].clone();
                }
                _ => {
                    self.history_pos = None;
                    self.input.clear();
                }
            },
            KeyCode::PageUp => self.scroll = self.scroll.saturating_add(5),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(5),
            KeyCode::Enter => {
                let line = std::mem::take(&mut self.input);
                self.history_pos = None;
                if line.trim().is_empty() {
                    return None;
                }
                if self.history.last() != Some(&line) {
                    self.history.push(line.clone());
                }
                self.message = None;
                return Some(Action::Line(line));
            }
            _ => {}
        }
        None
    }
}

fn rejection(code: ErrorCode, command: &str) -> String {
    if command.is_empty() {
        format!("✖ {}: {}", code.name(), code.description())
    } else {
        format!("✖ {command}: {} ({})", code.description(), code.name())
    }
}

/// Terminals narrower than this get the ring across the whole screen.
const NARROW: u16 = 110;

/// Columns a full ring row needs; narrower columns get compact rows.
const FULL_ROW: u16 = 50;

/// Colors of the simultaneous turns, by turn id.
const TURN_COLORS: [Color; 6] = [
    Color::Cyan,
    Color::Magenta,
    Color::Yellow,
    Color::LightBlue,
    Color::LightGreen,
    Color::LightRed,
];

fn turn_color(turn: u8) -> Color {
    TURN_COLORS[usize::from(turn) % TURN_COLORS.len()]
}

/// The command line of the replay view.
const REPLAY_KEYS: &str = "→/n next · ←/p back · PgDn/PgUp 10 events · Home/End start/end · q quit";

/// Draws the whole UI.
pub fn render(frame: &mut Frame<'_>, screen: &Screen, state: &State) {
    let [top, middle, message, input] = Layout::vertical([
        Constraint::Length(5),
        Constraint::Min(6),
        Constraint::Length(1),
        Constraint::Length(3),
    ])
    .areas(frame.area());
    render_header(frame, top, state, screen.replay.as_deref());
    // Wide terminals: the ring on the left, log and chat on the right. Narrow ones: the ring
    // across the screen, log and chat under it.
    let (ring, log, chat) = if middle.width >= NARROW {
        let [ring, side] =
            Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                .areas(middle);
        let [log, chat] =
            Layout::vertical([Constraint::Percentage(65), Constraint::Percentage(35)]).areas(side);
        (ring, log, chat)
    } else {
        let [ring, bottom] =
            Layout::vertical([Constraint::Min(4), Constraint::Length(5)]).areas(middle);
        let [log, chat] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(bottom);
        (ring, log, chat)
    };
    render_ring(frame, ring, state);
    let replay = screen.replay.is_some();
    render_lines(
        frame,
        log,
        if replay { " Log " } else { " Log (PgUp/PgDn) " },
        screen
            .log
            .iter()
            .map(|l| Line::styled(guard(&l.text), l.style)),
        screen.scroll,
    );
    render_lines(
        frame,
        chat,
        if replay {
            " Chat "
        } else {
            " Chat (say <text>) "
        },
        screen.chat.iter().map(|c| Line::raw(guard(c))),
        0,
    );
    if let Some((bad, text)) = &screen.message {
        let color = if *bad { Color::Red } else { Color::Green };
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(" {}", guard(text)),
                Style::default().fg(color),
            )),
            message,
        );
    }
    if replay {
        frame.render_widget(
            Paragraph::new(REPLAY_KEYS).block(Block::bordered().title(" replay ")),
            input,
        );
        return;
    }
    let block = Block::bordered().title(" command — help lists them, Tab completes, Ctrl-C quits ");
    let inner = block.inner(input);
    // What the player typed, or a name that Tab completed: shown escaped like everything else.
    let typed = guard(&screen.input);
    frame.render_widget(Paragraph::new(format!("> {typed}")).block(block), input);
    let width = u16::try_from(typed.chars().count() + 2).unwrap_or(u16::MAX);
    frame.set_cursor_position(Position::new(
        inner
            .x
            .saturating_add(width)
            .min(inner.right().saturating_sub(1)),
        inner.y,
    ));
}

fn render_lines<'a>(
    frame: &mut Frame<'_>,
    area: Rect,
    title: &str,
    lines: impl DoubleEndedIterator<Item = Line<'a>> + ExactSizeIterator,
    scroll: usize,
) {
    let block = Block::bordered().title(title.to_owned());
    let height = usize::from(block.inner(area).height);
    let total = lines.len();
    let skip_end = scroll.min(total.saturating_sub(height));
    let shown: Vec<Line<'a>> = {
        let mut tail: Vec<Line<'a>> = lines.rev().skip(skip_end).take(height).collect();
        tail.reverse();
        tail
    };
    frame.render_widget(
        Paragraph::new(shown)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

fn render_header(frame: &mut Frame<'_>, area: Rect, state: &State, replay: Option<&str>) {
    let Some(view) = &state.view else {
        let text = if state.connected {
            "Waiting for the table…"
        } else {
            "Connecting…"
        };
        frame.render_widget(Paragraph::new(text).block(Block::bordered()), area);
        return;
    };
    let stage = match view.stage {
        StageName::Lobby => "lobby",
        StageName::Mulligan => "mulligans",
        StageName::Playing => "playing",
        StageName::Finished => "finished",
    };
    let running = view
        .turns
        .iter()
        .filter(|t| t.state == TurnStateName::Running)
        .count();
    let spectators = if view.spectators > 0 {
        format!(" · {} watching", view.spectators)
    } else {
        String::new()
    };
    let mut first = vec![Span::raw(format!(
        "{stage} · {}/{} alive · R={} · {running}/{} turns running{spectators} · seq {}",
        view.living(),
        view.players.len(),
        view.settings.spell_range,
        view.turns.len(),
        view.seq
    ))];
    if view.paused {
        first.push(Span::styled(
            " · PAUSED",
            Style::default().fg(Color::Yellow),
        ));
    }
    if !state.connected {
        first.push(Span::styled(" · OFFLINE", Style::default().fg(Color::Red)));
    }
    let situation = Situation::of(view, state.me);
    let situation_style = match situation {
        Situation::YourTurn { .. } | Situation::MulliganDecide { .. } => Style::default()
            .fg(Color::Green)
            .add_modifier(Modifier::BOLD),
        Situation::WaitingFor { .. } | Situation::MulliganWait { .. } => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        _ => Style::default().add_modifier(Modifier::BOLD),
    };
    let third = match state.me.and_then(|me| view.player(me)) {
        Some(me) => {
            let seat = me.seat.map_or_else(String::new, |s| format!(" (seat {s})"));
            let attack = if me.may_attack.is_empty() {
                "–".to_owned()
            } else {
                names(view, &me.may_attack)
            };
            let target = if me.may_target.is_empty() {
                "–".to_owned()
            } else {
                names(view, &me.may_target)
            };
            let host = if view.host == Some(me.player) {
                " · host"
            } else {
                ""
            };
            format!(
                "You: {}{seat}{host} · {} life · {} poison · may attack: {attack} · may target: {target}",
                printable(&me.name),
                me.life,
                me.poison
            )
        }
        None => format!(
            "{} · host: {}",
            if replay.is_some() {
                "Replay"
            } else {
                "Watching"
            },
            view.host
                .map_or_else(|| "none".to_owned(), |h| describe::name(view, h))
        ),
    };
    let (second, title) = match replay {
        Some(text) => (
            Line::styled(
                guard(text),
                Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            ),
            format!(" {} — replay ", printable(&view.name)),
        ),
        None => (
            Line::styled(situation.text(), situation_style),
            format!(" {} ", printable(&view.name)),
        ),
    };
    let lines = vec![Line::from(first), second, Line::raw(guard(&third))];
    frame.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(title))
            .wrap(Wrap { trim: true }),
        area,
    );
}

/// One short line per seat, in seating order, for narrow columns: sphere band, seat, mark,
/// name, life (`OUT` once eliminated) and turn (`▶0` running, `…0` waiting). A disconnected
/// player's name is red.
fn compact_ring_lines(state: &State, name_width: usize) -> Vec<Line<'static>> {
    let Some(view) = &state.view else {
        return Vec::new();
    };
    let range: &[u16] = state
        .me
        .and_then(|me| view.player(me))
        .map_or(&[], |m| &m.may_target);
    view.players
        .iter()
        .map(|p| {
            let mut spans = Vec::new();
            let sphere = view
                .turns
                .iter()
                .find(|t| t.state == TurnStateName::Running && t.sphere.contains(&p.player));
            spans.push(match sphere {
                Some(t) => Span::styled(
                    format!("{}┃", t.turn % 10),
                    Style::default().fg(turn_color(t.turn)),
                ),
                None => Span::raw("  "),
            });
            let seat = p
                .seat
                .map_or_else(|| " -".to_owned(), |s| format!("{s:>2}"));
            spans.push(Span::raw(seat));
            let is_me = state.me == Some(p.player);
            let mark = if is_me {
                "@"
            } else if range.contains(&p.player) {
                "»"
            } else {
                " "
            };
            spans.push(Span::styled(mark, Style::default().fg(Color::LightGreen)));
            let name: String = printable(&p.name).chars().take(name_width).collect();
            let mut style = Style::default();
            if is_me {
                style = style.add_modifier(Modifier::BOLD | Modifier::REVERSED);
            }
            if !p.connected {
                style = style.fg(Color::Red);
            }
            if p.status != PlayerStatus::Alive {
                style = style
                    .fg(Color::DarkGray)
                    .add_modifier(Modifier::CROSSED_OUT);
            }
            spans.push(Span::styled(format!("{name:<name_width$}"), style));
            spans.push(Span::raw(match p.status {
                PlayerStatus::Alive => format!("{:>4}", p.life),
                PlayerStatus::Eliminated => " OUT".to_owned(),
                PlayerStatus::Removed => " ---".to_owned(),
            }));
            if let Some(t) = view.turn_of(p.player) {
                let (mark, bold) = match t.state {
                    TurnStateName::Running => ("▶", true),
                    TurnStateName::Waiting => ("…", false),
                    TurnStateName::Ended => ("■", false),
                };
                let mut style = Style::default().fg(turn_color(t.turn));
                if bold {
                    style = style.add_modifier(Modifier::BOLD);
                }
                spans.push(Span::styled(format!(" {mark}{}", t.turn), style));
            }
            Line::from(spans)
        })
        .collect()
}

/// One line per seat, in seating order.
fn ring_lines(state: &State) -> Vec<Line<'static>> {
    let Some(view) = &state.view else {
        return Vec::new();
    };
    let me = state.me.and_then(|me| view.player(me));
    let range: &[u16] = me.map_or(&[], |m| &m.may_target);
    view.players
        .iter()
        .map(|p| {
            let mut spans = Vec::new();
            let sphere = view
                .turns
                .iter()
                .find(|t| t.state == TurnStateName::Running && t.sphere.contains(&p.player));
            spans.push(match sphere {
                Some(t) => Span::styled(
                    format!("{}┃ ", t.turn % 10),
                    Style::default().fg(turn_color(t.turn)),
                ),
                None => Span::raw("   "),
            });
            let seat = p
                .seat
                .map_or_else(|| " -".to_owned(), |s| format!("{s:>2}"));
            spans.push(Span::raw(format!("{seat} ")));
            let is_me = state.me == Some(p.player);
            let in_range = range.contains(&p.player);
            let mark = if is_me {
                "@"
            } else if in_range {
                "»"
            } else {
                " "
            };
            spans.push(Span::styled(
                mark,
                Style::default()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            ));
            let mut name: String = printable(&p.name).chars().take(14).collect();
            if view.host == Some(p.player) {
                name.push('★');
            }
            let mut name_style = Style::default();
            if is_me {
                name_style = name_style.add_modifier(Modifier::BOLD | Modifier::REVERSED);
            } else if in_range {
                name_style = name_style.fg(Color::LightGreen);
            }
            if p.status != PlayerStatus::Alive {
                name_style = name_style
                    .fg(Color::DarkGray)
                    .add_modifier(Modifier::CROSSED_OUT);
            }
            spans.push(Span::styled(format!("{name:<15}"), name_style));
            match p.status {
                PlayerStatus::Alive => {
                    let poison = if p.poison > 0 {
                        Style::default().fg(Color::Magenta)
                    } else {
                        Style::default().fg(Color::DarkGray)
                    };
                    let life = if p.life <= 5 {
                        Style::default().fg(Color::Red)
                    } else {
                        Style::default()
                    };
                    spans.push(Span::styled(format!("{:>4}", p.life), life));
                    spans.push(Span::styled(format!(" {:>2}p", p.poison), poison));
                }
                PlayerStatus::Eliminated => {
                    spans.push(Span::styled(
                        "  OUT    ",
                        Style::default().fg(Color::DarkGray),
                    ));
                }
                PlayerStatus::Removed => {
                    spans.push(Span::styled(
                        " gone    ",
                        Style::default().fg(Color::DarkGray),
                    ));
                }
            }
            spans.push(if p.absent {
                Span::styled(" away", Style::default().fg(Color::Red))
            } else if p.connected {
                Span::styled(" ●   ", Style::default().fg(Color::Green))
            } else {
                Span::styled(" off ", Style::default().fg(Color::Red))
            });
            if let Some(t) = view.turn_of(p.player) {
                let color = Style::default().fg(turn_color(t.turn));
                let removal = if t.marked_for_removal { " (last)" } else { "" };
                spans.push(match t.state {
                    TurnStateName::Running => Span::styled(
                        format!(
                            " ▶T{} {}{removal}",
                            t.turn,
                            t.phase.map_or("", describe::phase_words)
                        ),
                        color.add_modifier(Modifier::BOLD),
                    ),
                    TurnStateName::Waiting => {
                        Span::styled(format!(" …T{} waiting{removal}", t.turn), color)
                    }
                    TurnStateName::Ended => Span::styled(format!(" ■T{} ended", t.turn), color),
                });
            }
            Line::from(spans)
        })
        .collect()
}

fn render_ring(frame: &mut Frame<'_>, area: Rect, state: &State) {
    let block =
        Block::bordered().title(" Ring: ▶ running  … waiting  n┃ sphere  @ you  » your range ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let seats = state.view.as_ref().map_or(0, |v| v.players.len());
    if seats == 0 || inner.height == 0 {
        return;
    }
    let height = usize::from(inner.height);
    let columns = seats.div_ceil(height).max(1);
    let column_width = usize::from(inner.width) / columns;
    let lines = if column_width >= usize::from(FULL_ROW) {
        ring_lines(state)
    } else {
        // Band, seat and mark take 5 columns, life and turn 7, and one is left between columns.
        compact_ring_lines(state, column_width.saturating_sub(13).clamp(2, 15))
    };
    let constraints = vec![Constraint::Ratio(1, u32::try_from(columns).unwrap_or(1)); columns];
    let areas = Layout::horizontal(constraints).split(inner);
    for (chunk, column) in lines.chunks(height).zip(areas.iter()) {
        frame.render_widget(Paragraph::new(chunk.to_vec()), *column);
    }
}

/// The interactive front end: the UI drawn on a terminal.
#[derive(Debug)]
pub struct Tui<B: Backend> {
    terminal: Terminal<B>,
    /// The log, chat and command line.
    pub screen: Screen,
}

impl<B: Backend> Tui<B> {
    /// A UI drawing on `terminal`.
    pub fn new(terminal: Terminal<B>) -> Self {
        Self {
            terminal,
            screen: Screen::new(),
        }
    }

    /// Redraws the whole screen.
    pub fn draw(&mut self, state: &State) -> io::Result<()> {
        let screen = &self.screen;
        self.terminal
            .draw(|frame| render(frame, screen, state))
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(())
    }

    /// The terminal (for tests on a test backend).
    pub fn terminal(&self) -> &Terminal<B> {
        &self.terminal
    }
}

impl<B: Backend + Send> Frontend for Tui<B> {
    fn note(&mut self, state: &State, note: Note) -> io::Result<()> {
        self.screen.note(state, note);
        self.draw(state)
    }

    fn input(&mut self, state: &State, input: Input) -> io::Result<Option<Action>> {
        let action = match input {
            Input::Key(key) => self.screen.key(state, key),
            Input::Line(line) => Some(Action::Line(line)),
            Input::Resize => {
                self.terminal
                    .autoresize()
                    .map_err(|e| io::Error::other(e.to_string()))?;
                None
            }
            Input::Eof => Some(Action::Quit),
        };
        self.draw(state)?;
        Ok(action)
    }
}
